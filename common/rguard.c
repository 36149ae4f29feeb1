/*
 * rguard -- refuses a Redis that can lose data silently. See rguard.h.
 */
#include "rguard.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "clock.h"
#include "log.h"
#include "xmalloc.h"

#define RGUARD_REMIND_MS 60000

struct rguard {
    struct event_base *base;
    rconn_t *rc;
    struct event *tick;
    int interval_ms;
    bool allow;
    bool inflight;
    rguard_change_cb on_change;
    void *arg;
    _Atomic int verdict;
    char policy[32];
    int64_t evicted;            /* last evicted_keys read; -1 before the first */
    int64_t last_warn_ms;       /* last redis_eviction_policy line */
    int64_t last_unreadable_ms; /* last redis_info_unreadable line */
    metrics_t *m_safe, *m_evicted, *m_used, *m_max, *m_headroom, *m_errors;
};

static const char rguard_why_text[] =
    "Redis evicts keys when its memory is full (maxmemory-policy is not noeviction): wallets, "
    "seat accounts and lease keys can vanish without an error. Set `maxmemory-policy "
    "noeviction` (CONFIG SET maxmemory-policy noeviction, and in redis.conf) -- docs/deploy.md "
    "\"Redis must not evict\"";

const char *rguard_why(void)
{
    return rguard_why_text;
}

/* Reads a non-negative integer value; -1 when it is not one. */
static int64_t rguard_number(const char *s, size_t len)
{
    int64_t v = 0;
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int rguard_parse_info(const char *text, size_t len, rguard_info_t *out)
{
    memset(out, 0, sizeof *out);
    out->maxmemory = out->used_memory = out->total_system_memory = out->evicted_keys = -1;
    bool have_policy = false;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol != NULL ? eol + 1 : end;
        const char *le = eol != NULL ? eol : end;
        if (le > p && le[-1] == '\r')
            le--;
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (colon != NULL && p[0] != '#') {
            size_t klen = (size_t)(colon - p), vlen = (size_t)(le - colon - 1);
            const char *v = colon + 1;
#define RGUARD_KEY(name) (klen == sizeof(name) - 1 && memcmp(p, name, klen) == 0)
            if (RGUARD_KEY("maxmemory_policy")) {
                if (vlen < sizeof out->policy) {
                    memcpy(out->policy, v, vlen);
                    out->policy[vlen] = '\0';
                    have_policy = vlen > 0;
                }
            } else if (RGUARD_KEY("maxmemory")) {
                out->maxmemory = rguard_number(v, vlen);
            } else if (RGUARD_KEY("used_memory")) {
                out->used_memory = rguard_number(v, vlen);
            } else if (RGUARD_KEY("total_system_memory")) {
                out->total_system_memory = rguard_number(v, vlen);
            } else if (RGUARD_KEY("evicted_keys")) {
                out->evicted_keys = rguard_number(v, vlen);
            }
#undef RGUARD_KEY
        }
        p = next;
    }
    return have_policy ? 0 : -EINVAL;
}

static void rguard_set_verdict(rguard_t *g, rguard_verdict_t v)
{
    int old = atomic_exchange(&g->verdict, (int)v);
    int64_t now = clock_mono_ms();
    if (v == RGUARD_EVICTING && (old != (int)v || now - g->last_warn_ms >= RGUARD_REMIND_MS)) {
        g->last_warn_ms = now;
        log_emit(g->allow ? LOG_WARN : LOG_ERROR, "redis_eviction_policy", "{s:s,s:s,s:b,s:s}",
                 "maxmemory_policy", g->policy, "required", "noeviction", "allowed", g->allow,
                 "msg",
                 g->allow ? "--redis-allow-eviction: running on an evicting Redis anyway (tests "
                            "only: chips can be lost)"
                          : rguard_why_text);
    } else if (v == RGUARD_SAFE && old == RGUARD_EVICTING) {
        log_emit(LOG_INFO, "redis_eviction_policy_ok", "{s:s}", "maxmemory_policy", g->policy);
    }
    if (old != (int)v && g->on_change != NULL)
        g->on_change(g, v, g->arg);
}

static void rguard_apply(rguard_t *g, const rguard_info_t *in)
{
    snprintf(g->policy, sizeof g->policy, "%s", in->policy);
    bool safe = strcmp(in->policy, "noeviction") == 0;
    metrics_set(g->m_safe, safe ? 1 : 0);
    if (in->evicted_keys >= 0) {
        metrics_set(g->m_evicted, (double)in->evicted_keys);
        if (g->evicted >= 0 && in->evicted_keys > g->evicted)
            log_emit(LOG_ERROR, "redis_keys_evicted", "{s:I,s:I,s:s,s:s}", "evicted",
                     (json_int_t)(in->evicted_keys - g->evicted), "evicted_keys",
                     (json_int_t)in->evicted_keys, "maxmemory_policy", in->policy, "msg",
                     "Redis deleted keys to free memory: chips may be lost; audit the wallets");
        g->evicted = in->evicted_keys;
    }
    int64_t limit = in->maxmemory > 0 ? in->maxmemory : in->total_system_memory;
    if (in->used_memory >= 0)
        metrics_set(g->m_used, (double)in->used_memory);
    if (in->maxmemory >= 0)
        metrics_set(g->m_max, (double)in->maxmemory);
    if (limit > 0 && in->used_memory >= 0)
        metrics_set(g->m_headroom, 1.0 - (double)in->used_memory / (double)limit);
    rguard_set_verdict(g, safe ? RGUARD_SAFE : RGUARD_EVICTING);
}

static void rguard_info_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    rguard_t *g = arg;
    g->inflight = false;
    if (r == NULL)
        return; /* lost or timed out: the next tick or reconnect asks again */
    rguard_info_t in;
    if (r->type != REDIS_REPLY_STRING || rguard_parse_info(r->str, r->len, &in) != 0) {
        metrics_add(g->m_errors, 1);
        int64_t now = clock_mono_ms();
        if (g->last_unreadable_ms != 0 && now - g->last_unreadable_ms < RGUARD_REMIND_MS)
            return;
        g->last_unreadable_ms = now;
        log_emit(LOG_ERROR, "redis_info_unreadable", "{s:s,s:s}", "error",
                 r->type == REDIS_REPLY_ERROR ? r->str : "no maxmemory_policy in INFO", "msg",
                 "the eviction policy cannot be checked: treated as unknown (a game server takes "
                 "no lease, a gateway is unready) until INFO answers");
        return;
    }
    rguard_apply(g, &in);
}

static void rguard_ask(rguard_t *g)
{
    if (g->inflight || !rconn_connected(g->rc))
        return;
    if (rconn_command(g->rc, rguard_info_cb, g, "INFO") == 0)
        g->inflight = true;
}

static void rguard_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rguard_ask(arg);
}

static void rguard_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    if (connected)
        rguard_ask(arg); /* every (re)connect: perhaps another master after a failover */
}

rguard_t *rguard_create(struct event_base *base, const rguard_opts_t *opts)
{
    if (base == NULL || opts == NULL || opts->interval_ms < 0) {
        errno = EINVAL;
        return NULL;
    }
    rguard_t *g = xcalloc(1, sizeof *g);
    g->base = base;
    g->interval_ms = opts->interval_ms > 0 ? opts->interval_ms : 1000;
    g->allow = opts->allow_eviction;
    g->on_change = opts->on_change;
    g->arg = opts->arg;
    g->evicted = -1;
    atomic_init(&g->verdict, RGUARD_UNKNOWN);
    metrics_registry_t *m = opts->metrics;
    if (m != NULL) { /* metrics_set() of a NULL series does nothing */
        g->m_safe = metrics_gauge(m, "redis_eviction_policy_safe", NULL,
                                  "1 while Redis's maxmemory-policy is noeviction; 0: keys (chips) "
                                  "can be evicted (docs/deploy.md)");
        g->m_evicted = metrics_gauge(m, "redis_evicted_keys", NULL,
                                     "Redis's evicted_keys (since its start or CONFIG RESETSTAT)");
        g->m_used = metrics_gauge(m, "redis_used_memory_bytes", NULL, "Redis's used_memory");
        g->m_max =
            metrics_gauge(m, "redis_maxmemory_bytes", NULL, "Redis's maxmemory (0: no limit)");
        g->m_headroom = metrics_gauge(m, "redis_memory_headroom_ratio", NULL,
                                      "1 - used_memory / maxmemory (or the host's memory when "
                                      "maxmemory is 0)");
        g->m_errors = metrics_counter(m, "redis_info_errors_total", NULL,
                                      "INFO replies the eviction guard could not read");
    }
    metrics_set(g->m_safe, 0);
    metrics_set(g->m_headroom, 1);
    rconn_opts_t co = opts->conn;
    co.on_state = rguard_state_cb;
    co.arg = g;
    if (co.name == NULL)
        co.name = "guard";
    g->tick = event_new(base, -1, EV_PERSIST, rguard_tick_cb, g);
    g->rc = rconn_create(base, &co);
    if (g->tick == NULL || g->rc == NULL) {
        rguard_destroy(g);
        errno = EINVAL;
        return NULL;
    }
    struct timeval tv = {g->interval_ms / 1000, (g->interval_ms % 1000) * 1000};
    event_add(g->tick, &tv);
    return g;
}

void rguard_destroy(rguard_t *g)
{
    if (g == NULL)
        return;
    if (g->tick != NULL)
        event_free(g->tick);
    g->tick = NULL;
    g->on_change = NULL;
    rconn_destroy(g->rc); /* runs rguard_info_cb with NULL if a read is in flight */
    free(g);
}

rguard_verdict_t rguard_verdict(const rguard_t *g)
{
    return g != NULL ? (rguard_verdict_t)atomic_load(&g->verdict) : RGUARD_UNKNOWN;
}

bool rguard_blocks(const rguard_t *g)
{
    return g != NULL && !g->allow && rguard_verdict(g) == RGUARD_EVICTING;
}

const char *rguard_policy(const rguard_t *g)
{
    return g != NULL ? g->policy : "";
}
