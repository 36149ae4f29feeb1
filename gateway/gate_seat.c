/*
 * gate_seat.c -- seat records and their staleness rule; see gate_seat.h.
 */
#include "gate_seat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A field the record can carry: not empty, no space (fields are space-separated). */
static bool gate_seat_field_ok(const char *f)
{
    return f[0] != '\0' && strpbrk(f, " \t\r\n") == NULL;
}

int gate_seat_format(const gate_seat_t *s, char *buf, size_t cap)
{
    if (!gate_seat_field_ok(s->server_id) || !gate_seat_field_ok(s->address) ||
        !gate_seat_field_ok(s->game) || s->epoch < 0 || (s->room && s->tour))
        return -EINVAL;
    int n = snprintf(buf, cap, "%s %s %" PRIu64 " %d %" PRId64 " %s %" PRId64 "%s", s->server_id,
                     s->address, s->desk, s->engine, s->stake, s->game, s->epoch,
                     s->room   ? " room"
                     : s->tour ? " tour"
                               : "");
    if (n < 0 || (size_t)n >= cap) {
        if (cap > 0)
            buf[0] = '\0';
        return -ENOSPC;
    }
    return n;
}

int gate_seat_parse(const char *text, size_t len, gate_seat_t *s)
{
    char buf[GATE_SEAT_RECORD_MAX + 1];
    memset(s, 0, sizeof *s);
    if (len > GATE_SEAT_RECORD_MAX)
        return -EINVAL;
    memcpy(buf, text, len);
    buf[len] = '\0';
    unsigned long long desk;
    long long stake, epoch = 0;
    int end = 0, end6 = 0;
    /* %n after the sixth field and after the seventh: what is left must be nothing. The field
     * widths are one less than the buffers (gate_seat_format writes none longer). */
    int n = sscanf(buf, "%79s %71s %llu %d %lld %47s%n %lld%n", s->server_id, s->address, &desk,
                   &s->engine, &stake, s->game, &end6, &epoch, &end);
    if (n == 6)
        end = end6;
    /* After the seventh field: nothing, or a marker: room (a private room's seat) or tour (a
     * tournament table's). */
    const char *rest = buf + end + strspn(buf + end, " ");
    bool marked = n == 7 && (strncmp(rest, "room", 4) == 0 || strncmp(rest, "tour", 4) == 0) &&
                  (rest[4] == '\0' || rest[4] == ' ');
    bool room = marked && rest[0] == 'r', tour = marked && rest[0] == 't';
    if (marked)
        rest += 4 + strspn(rest + 4, " ");
    if (n < 6 || epoch < 0 || *rest != '\0') {
        memset(s, 0, sizeof *s);
        return -EINVAL;
    }
    s->desk = desk;
    s->stake = stake;
    s->epoch = epoch;
    s->room = room;
    s->tour = tour;
    return 0;
}

gate_seat_verdict_t gate_seat_judge(const gate_seat_t *s, const gate_seat_facts_t *f)
{
    if (f->link_ready) {
        /* The process behind the seat's address is alive: the seat lives unless that process
         * is not the one that seated the player. */
        if (f->link_server_id != NULL && strcmp(f->link_server_id, s->server_id) != 0)
            return GATE_SEAT_GONE_REPLACED;
        if (s->epoch > 0 && f->link_floor > 0 && s->epoch < f->link_floor)
            return GATE_SEAT_GONE_NEW_PROCESS;
        return GATE_SEAT_LIVE;
    }
    if (f->probed) {
        if (f->probed_absent)
            return GATE_SEAT_GONE_UNLISTED;
        if (s->epoch > 0 && f->probed_epoch > s->epoch)
            return GATE_SEAT_GONE_REPLACED;
        if (f->probed_address != NULL && strcmp(f->probed_address, s->address) != 0)
            return GATE_SEAT_GONE_REPLACED;
    }
    if (!f->view_read)
        return GATE_SEAT_LIVE; /* nothing known yet: the request finds out */
    if (!f->listed)
        return GATE_SEAT_GONE_UNLISTED;
    if (s->epoch > 0 && f->listed_epoch > s->epoch)
        return GATE_SEAT_GONE_REPLACED;
    if (f->listed_address != NULL && strcmp(f->listed_address, s->address) != 0)
        return GATE_SEAT_GONE_REPLACED;
    return GATE_SEAT_LIVE;
}

const char *gate_seat_verdict_name(gate_seat_verdict_t v)
{
    switch (v) {
    case GATE_SEAT_LIVE:
        return "live";
    case GATE_SEAT_GONE_UNLISTED:
        return "unlisted";
    case GATE_SEAT_GONE_REPLACED:
        return "replaced";
    case GATE_SEAT_GONE_NEW_PROCESS:
        return "new_process";
    }
    return "unknown";
}
