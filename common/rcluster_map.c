#include "rcluster_map.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads one node address of a CLUSTER SLOTS entry ([ip, port, id, ...]); an empty or "?" ip
 * means the node asked ("asked_host"). 0 or -1. */
static int rcluster_map_addr(const redisReply *r, const char *asked_host, config_addr_t *out)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_INTEGER)
        return -1;
    const char *ip = r->element[0]->str;
    if (ip[0] == '\0' || strcmp(ip, "?") == 0)
        ip = asked_host;
    long long port = r->element[1]->integer;
    unsigned char tmp[16];
    if (port < 1 || port > 65535 || strlen(ip) >= sizeof out->host ||
        (inet_pton(AF_INET, ip, tmp) != 1 && inet_pton(AF_INET6, ip, tmp) != 1))
        return -1;
    snprintf(out->host, sizeof out->host, "%s", ip);
    out->port = (int)port;
    return 0;
}

static int rcluster_map_node(rcluster_map_t *m, const config_addr_t *a, bool master)
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->nodes[i].port == a->port && strcmp(m->nodes[i].host, a->host) == 0) {
            m->master[i] = m->master[i] || master;
            return (int)i;
        }
    }
    if (m->n == RCLUSTER_MAX_NODES)
        return -1;
    m->nodes[m->n] = *a;
    m->master[m->n] = master;
    return (int)m->n++;
}

/*
 * Parses a CLUSTER SLOTS reply into m: each entry is [start, end, master, replica...], each node
 * [ip, port, id, ...]. Returns 0, or -1 with the reason in why (a malformed answer).
 */
int rcluster_map_parse(const redisReply *r, const char *asked_host, rcluster_map_t *m, char *why,
                       size_t whylen)
{
    memset(m->slot, 0xFF, sizeof m->slot);
    m->n = 0;
    if (r->type != REDIS_REPLY_ARRAY) {
        snprintf(why, whylen, "unexpected answer to CLUSTER SLOTS");
        return -1;
    }
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[0]->type != REDIS_REPLY_INTEGER ||
            e->element[1]->type != REDIS_REPLY_INTEGER) {
            snprintf(why, whylen, "malformed entry %zu in CLUSTER SLOTS", i);
            return -1;
        }
        long long from = e->element[0]->integer, to = e->element[1]->integer;
        config_addr_t a;
        if (from < 0 || to < from || to >= RCLUSTER_SLOTS ||
            rcluster_map_addr(e->element[2], asked_host, &a) != 0) {
            snprintf(why, whylen, "bad range or master in CLUSTER SLOTS entry %zu", i);
            return -1;
        }
        int idx = rcluster_map_node(m, &a, true);
        if (idx < 0) {
            snprintf(why, whylen, "more than %d nodes in CLUSTER SLOTS", RCLUSTER_MAX_NODES);
            return -1;
        }
        for (long long s = from; s <= to; s++)
            m->slot[s] = (uint16_t)idx;
        for (size_t k = 3; k < e->elements; k++) /* replicas: map sources for later refreshes */
            if (rcluster_map_addr(e->element[k], asked_host, &a) == 0)
                (void)rcluster_map_node(m, &a, false);
    }
    return 0;
}

/* Describes the uncovered slots of a map ("N of 16384 slots uncovered: a-b, c-d ..."); returns
 * their number. */
unsigned rcluster_map_gaps(const uint16_t *slot, char *buf, size_t len)
{
    unsigned count = 0, ranges = 0;
    size_t off = (size_t)snprintf(buf, len, "slots not served by any master:");
    for (unsigned s = 0; s < RCLUSTER_SLOTS; s++) {
        if (slot[s] != RCLUSTER_NONE)
            continue;
        unsigned e = s;
        while (e + 1 < RCLUSTER_SLOTS && slot[e + 1] == RCLUSTER_NONE)
            e++;
        count += e - s + 1;
        if (ranges++ < 4 && off < len)
            off += (size_t)snprintf(buf + off, len - off, e > s ? " %u-%u" : " %u", s, e);
        s = e;
    }
    if (ranges > 4 && off < len)
        snprintf(buf + off, len - off, " ... (%u in all)", count);
    else if (off < len)
        snprintf(buf + off, len - off, " (%u in all)", count);
    return count;
}

int rcluster_redirect_parse(const char *msg, unsigned *slot, config_addr_t *to)
{
    const char *sp = strchr(msg, ' ');
    if (sp == NULL)
        return -1;
    char *end;
    unsigned long s = strtoul(sp + 1, &end, 10);
    if (end == sp + 1 || *end != ' ' || s >= RCLUSTER_SLOTS)
        return -1;
    const char *addr = end + 1;
    char text[80];
    /* Redis writes IPv6 endpoints unbracketed ("::1:7000"): the port follows the last colon. */
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || strlen(addr) >= sizeof text - 2)
        return -1;
    if (addr[0] != '[' && memchr(addr, ':', (size_t)(colon - addr)) != NULL)
        snprintf(text, sizeof text, "[%.*s]%s", (int)(colon - addr), addr, colon);
    else
        snprintf(text, sizeof text, "%s", addr);
    if (config_parse_addr(text, to) != 0 || to->port == 0)
        return -1;
    *slot = (unsigned)s;
    return 0;
}

bool rcluster_reply_is(const redisReply *r, const char *prefix)
{
    size_t n = strlen(prefix);
    return r->type == REDIS_REPLY_ERROR && r->len >= n && strncmp(r->str, prefix, n) == 0 &&
           (r->len == n || r->str[n] == ' ');
}
