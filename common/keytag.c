#include "keytag.h"

#include <stdio.h>

static bool keytag_on;
static bool keytag_tour_on;

void keytag_set_cluster(bool on)
{
    keytag_on = on;
}

bool keytag_cluster(void)
{
    return keytag_on;
}

void keytag_set_tour_entity(bool on)
{
    keytag_tour_on = on;
}

bool keytag_tour_entity(void)
{
    return keytag_on && keytag_tour_on;
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
    if (keytag_tour_entity()) { /* a slot per tournament, its pool's (money/mtour.h) */
        int n = snprintf(buf, len, "{t:%s}", id);
        if ((n < 0 || (size_t)n >= len) && len > 0)
            buf[0] = '\0';
        return buf;
    }
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
