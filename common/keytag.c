#include "keytag.h"

#include <stdio.h>

static bool keytag_on;

void keytag_set_cluster(bool on)
{
    keytag_on = on;
}

bool keytag_cluster(void)
{
    return keytag_on;
}

static const char *keytag_fmt(char *buf, size_t len, const char *family, const char *name)
{
    int n = keytag_on ? snprintf(buf, len, "{croupier:money}:%s:%s", family, name)
                      : snprintf(buf, len, "{croupier:%s:%s}", family, name);
    if (n < 0 || (size_t)n >= len) {
        if (len > 0)
            buf[0] = '\0';
    }
    return buf;
}

const char *keytag_lease(char *buf, size_t len, const char *service)
{
    return keytag_fmt(buf, len, "lease", service);
}

const char *keytag_history(char *buf, size_t len, const char *game)
{
    return keytag_fmt(buf, len, "history", game);
}

const char *keytag_registry(void)
{
    return keytag_on ? "{croupier:money}:registry" : "{croupier:registry}";
}

const char *keytag_rooms(void)
{
    return keytag_on ? "{croupier:money}:rooms" : "{croupier:rooms}";
}

const char *keytag_tour(char *buf, size_t len, const char *id)
{
    return keytag_fmt(buf, len, "tour", id);
}

const char *keytag_tours(void)
{
    return keytag_on ? "{croupier:money}:tours" : "{croupier:tours}";
}

const char *keytag_items(void)
{
    return keytag_on ? "{croupier:money}:items" : "{croupier:items}";
}
