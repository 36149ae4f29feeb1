#include "rconn_cluster.h"

#include <bsd/sys/queue.h>
#include <errno.h>
#include <event2/event.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "log.h"
#include "rcluster_async.h"
#include "xmalloc.h"

/* How often the state is looked at (map coverage, the subscriber's node). */
#define RCL_TICK_MS 100
/* A subscriber connection not connected for this long moves to the next node. */
#define RCL_SUB_MOVE_MS 1500
#define RCL_NOT_READY "the cluster's slot map is not loaded or leaves slots unserved"

typedef struct rcl_req {
    TAILQ_ENTRY(rcl_req) _link;
    rconn_cl_t *cl;
    rconn_reply_cb cb; /* NULL once called (destroy) */
    void *arg;
    void (*release)(void *);
    void *rel_arg;
} rcl_req_t;

typedef struct rcl_sub {
    struct rcl_sub *_next;
    rconn_cl_t *cl;
    char *channel;
    rconn_message_cb cb;
    void *arg;
} rcl_sub_t;

struct rconn_cl {
    rconn_t *owner;
    struct event_base *base;
    rconn_opts_t o; /* pointers not used after create */
    char name[32];
    config_addr_t *seeds;
    size_t nseeds;
    rcluster_async_t *ca;
    struct event *tick;
    TAILQ_HEAD(, rcl_req) reqs;
    size_t npending;
    bool told;
    unsigned connects;
    unsigned last_slot;
    bool have_slot; /* last_slot was set by a keyed command */
    /* the master of last_slot at the last tick: another one later is a failover (or a slot
     * moved) under this connection, reported as a reconnect */
    unsigned seen_slot;
    char seen_host[64];
    int seen_port;
    bool crossslot_logged;
    bool destroyed;
    int depth; /* > 0 while a callback of ours runs */
    char last_error[300];
    char host[64];
    int port;
    /* subscriber mode (subs != NULL) */
    rcl_sub_t *subs;
    rconn_t *sub;
    size_t sub_next;        /* the next candidate node */
    bool sub_lost;          /* its on_state said false */
    long long sub_since_ms; /* when sub was opened */
};

static bool rcl_is(const char *cmd, size_t len, const char *name)
{
    return strlen(name) == len && strncasecmp(cmd, name, len) == 0;
}

/* Commands that may run twice (reads): resent after a lost reply. */
static bool rcl_is_read(const char *cmd, size_t len)
{
    static const char *const reads[] = {
        "GET",
        "MGET",
        "HGET",
        "HGETALL",
        "HMGET",
        "HEXISTS",
        "HLEN",
        "EXISTS",
        "TTL",
        "PTTL",
        "TYPE",
        "STRLEN",
        "ZCARD",
        "ZRANGE",
        "ZSCORE",
        "ZCOUNT",
        "ZREVRANGE",
        "ZRANGEBYSCORE",
        "ZREVRANGEBYSCORE",
        "SMEMBERS",
        "SCARD",
        "SISMEMBER",
        "LRANGE",
        "LLEN",
        "LINDEX",
        "XRANGE",
        "XREVRANGE",
        "XLEN",
        "PING",
        "INFO",
        "ROLE",
        "TIME",
        "ECHO",
    };
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++)
        if (rcl_is(cmd, len, reads[i]))
            return true;
    return false;
}

/* Commands that name no key (routed to the last slot). */
static bool rcl_is_keyless(const char *cmd, size_t len)
{
    static const char *const keyless[] = {
        "PING",   "INFO",   "ROLE",     "TIME",    "ECHO",    "SCRIPT",       "CLUSTER",  "CONFIG",
        "CLIENT", "DBSIZE", "LASTSAVE", "SLOWLOG", "COMMAND", "PUBLISH",      "FLUSHALL", "FLUSHDB",
        "MULTI",  "EXEC",   "DISCARD",  "SAVE",    "BGSAVE",  "BGREWRITEAOF", "LATENCY",  "MEMORY",
    };
    for (size_t i = 0; i < sizeof keyless / sizeof keyless[0]; i++)
        if (rcl_is(cmd, len, keyless[i]))
            return true;
    return false;
}

/* The key a command is routed by: index into argv, or -1 (keyless). */
static int rcl_key_index(int argc, const char **argv, const size_t *lens)
{
    const char *cmd = argv[0];
    size_t len = lens[0];
    if (rcl_is_keyless(cmd, len) || argc < 2)
        return -1;
    if (rcl_is(cmd, len, "EVAL") || rcl_is(cmd, len, "EVALSHA") || rcl_is(cmd, len, "EVAL_RO") ||
        rcl_is(cmd, len, "EVALSHA_RO")) {
        if (argc < 4 || atoi(argv[2]) < 1)
            return -1;
        return 3;
    }
    if (rcl_is(cmd, len, "XREAD") || rcl_is(cmd, len, "XREADGROUP")) {
        for (int i = 1; i + 1 < argc; i++)
            if (rcl_is(argv[i], lens[i], "STREAMS"))
                return i + 1;
        return -1;
    }
    return 1;
}

static void rcl_set_error(rconn_cl_t *cl, const char *why)
{
    snprintf(cl->last_error, sizeof cl->last_error, "%s", why);
}

static void rcl_reply_cb(rcluster_async_t *c, redisReply *reply, const char *why, void *arg)
{
    (void)c;
    rcl_req_t *q = arg;
    rconn_cl_t *cl = q->cl;
    TAILQ_REMOVE(&cl->reqs, q, _link);
    cl->npending--;
    if (reply == NULL && why != NULL && !cl->destroyed)
        rcl_set_error(cl, why);
    if (q->cb != NULL) {
        cl->depth++;
        q->cb(cl->owner, reply, q->arg);
        cl->depth--;
    }
    if (q->release != NULL)
        q->release(q->rel_arg);
    free(q);
}

static rcl_req_t *rcl_req_new(rconn_cl_t *cl, rconn_reply_cb cb, void *arg)
{
    rcl_req_t *q = xcalloc(1, sizeof *q);
    q->cl = cl;
    q->cb = cb;
    q->arg = arg;
    TAILQ_INSERT_TAIL(&cl->reqs, q, _link);
    cl->npending++;
    return q;
}

static void rcl_req_drop(rconn_cl_t *cl, rcl_req_t *q)
{
    TAILQ_REMOVE(&cl->reqs, q, _link);
    cl->npending--;
    free(q);
}

static int rcl_usable(const rconn_cl_t *cl)
{
    if (cl->destroyed)
        return -ESHUTDOWN;
    if (!rconn_cl_connected(cl))
        return -ENOTCONN;
    return 0;
}

/* ---- subscriber connection ------------------------------------------------------------------ */

static void rcl_sub_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    rconn_cl_t *cl = arg;
    if (!connected)
        cl->sub_lost = true; /* the tick moves it to the next node */
}

static void rcl_sub_msg_cb(rconn_t *rc, const char *channel, const char *data, size_t len,
                           void *arg)
{
    (void)rc;
    rcl_sub_t *s = arg;
    rconn_cl_t *cl = s->cl;
    if (cl->destroyed || s->cb == NULL)
        return;
    cl->depth++;
    s->cb(cl->owner, channel, data, len, s->arg);
    cl->depth--;
}

/* Opens the subscriber connection on the next candidate: the seeds, then the map's masters. */
static void rcl_sub_open(rconn_cl_t *cl)
{
    config_addr_t cand[RCLUSTER_MAX_NODES];
    size_t n = 0;
    for (size_t i = 0; i < cl->nseeds; i++)
        cand[n++] = cl->seeds[i];
    for (unsigned s = 0; s < RCLUSTER_SLOTS && n < RCLUSTER_MAX_NODES; s++) {
        int port = 0;
        const char *h = rcluster_async_slot_host(cl->ca, s, &port);
        if (port == 0)
            continue;
        bool known = false;
        for (size_t i = 0; i < n && !known; i++)
            known = cand[i].port == port && strcmp(cand[i].host, h) == 0;
        if (!known) {
            snprintf(cand[n].host, sizeof cand[n].host, "%s", h);
            cand[n].port = port;
            n++;
        }
    }
    config_addr_t *a = &cand[cl->sub_next++ % n];
    rconn_opts_t o = {
        .host = a->host,
        .port = a->port,
        .connect_timeout_ms = cl->o.connect_timeout_ms,
        .request_timeout_ms = cl->o.request_timeout_ms,
        .backoff_min_ms = cl->o.backoff_min_ms,
        .backoff_max_ms = cl->o.backoff_max_ms,
        .name = cl->name,
        .on_state = rcl_sub_state_cb,
        .arg = cl,
        .quiet = cl->o.quiet,
    };
    snprintf(cl->host, sizeof cl->host, "%s", a->host);
    cl->port = a->port;
    cl->sub = rconn_create(cl->base, &o);
    cl->sub_lost = false;
    cl->sub_since_ms = clock_mono_ms();
    for (rcl_sub_t *s = cl->subs; s != NULL && cl->sub != NULL; s = s->_next)
        (void)rconn_subscribe(cl->sub, s->channel, rcl_sub_msg_cb, s);
}

/* ---- state -------------------------------------------------------------------------------- */

static bool rcl_now_connected(const rconn_cl_t *cl)
{
    if (cl->subs != NULL)
        return cl->sub != NULL && rconn_connected(cl->sub);
    return rcluster_async_ready(cl->ca);
}

static void rcl_tell(rconn_cl_t *cl, bool connected)
{
    if (cl->o.on_state == NULL)
        return;
    cl->depth++;
    cl->o.on_state(cl->owner, connected, cl->o.arg);
    cl->depth--;
}

/* Whether the master of the slot last written is another node than at the last look. */
static bool rcl_master_moved(rconn_cl_t *cl)
{
    if (cl->subs != NULL || !cl->have_slot)
        return false;
    int port = 0;
    const char *h = rcluster_async_slot_host(cl->ca, cl->last_slot, &port);
    if (port == 0)
        return false;
    bool moved = cl->seen_port != 0 && cl->seen_slot == cl->last_slot &&
                 (port != cl->seen_port || strcmp(h, cl->seen_host) != 0);
    if (moved)
        log_emit(LOG_WARN, "redis_cluster_master_moved", "{s:s,s:i,s:s,s:i,s:s,s:i}", "conn",
                 cl->name, "slot", (int)cl->last_slot, "from_host", cl->seen_host, "from_port",
                 cl->seen_port, "to_host", h, "to_port", port);
    cl->seen_slot = cl->last_slot;
    snprintf(cl->seen_host, sizeof cl->seen_host, "%s", h);
    cl->seen_port = port;
    return moved;
}

static void rcl_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rconn_cl_t *cl = arg;
    if (cl->destroyed)
        return;
    if (cl->subs != NULL) {
        bool up = cl->sub != NULL && rconn_connected(cl->sub);
        if (cl->sub_lost || (!up && clock_mono_ms() - cl->sub_since_ms >= RCL_SUB_MOVE_MS)) {
            if (cl->sub != NULL)
                rcl_set_error(cl, rconn_last_error(cl->sub));
            rconn_t *old = cl->sub;
            cl->sub = NULL;
            rconn_destroy(old);
            rcl_sub_open(cl);
        }
    }
    bool now = rcl_now_connected(cl);
    if (!now && cl->subs == NULL && !rcluster_async_ready(cl->ca))
        rcl_set_error(cl, RCL_NOT_READY);
    if (now && cl->told && rcl_master_moved(cl)) {
        /* as a Sentinel switch does: the owner hears of a new connection (it re-reads its
         * state; the money writer checks its journal against the new master) */
        rcl_tell(cl, false);
        if (cl->destroyed)
            return;
        cl->connects++;
        rcl_tell(cl, true);
        return;
    }
    if (now == cl->told)
        return;
    cl->told = now;
    if (now)
        cl->connects++;
    rcl_tell(cl, now);
}

/* ---- the face rconn.c calls ------------------------------------------------------------------ */

rconn_cl_t *rconn_cl_create(rconn_t *owner, struct event_base *base, const rconn_opts_t *opts)
{
    char err[300];
    config_addr_t *seeds;
    int n = rcluster_seeds_parse(opts->cluster, &seeds, err, sizeof err);
    if (n < 0) {
        errno = EINVAL;
        return NULL;
    }
    rconn_cl_t *cl = xcalloc(1, sizeof *cl);
    cl->owner = owner;
    cl->base = base;
    cl->o = *opts;
    cl->seeds = seeds;
    cl->nseeds = (size_t)n;
    snprintf(cl->name, sizeof cl->name, "%s", opts->name ? opts->name : "redis");
    cl->o.host = cl->o.name = cl->o.sentinels = cl->o.master_name = cl->o.cluster = NULL;
    if (cl->o.connect_timeout_ms <= 0)
        cl->o.connect_timeout_ms = 1000;
    if (cl->o.request_timeout_ms <= 0)
        cl->o.request_timeout_ms = 1000;
    int budget = cl->o.request_timeout_ms + 2000;
    rcluster_async_opts_t co = {
        .connect_timeout_ms = cl->o.connect_timeout_ms < 500 ? cl->o.connect_timeout_ms : 500,
        .request_timeout_ms = cl->o.request_timeout_ms,
        .retry_budget_ms = budget > 4000 ? budget : 4000,
        .name = cl->name,
        .quiet = cl->o.quiet,
    };
    cl->ca = rcluster_async_create(base, opts->cluster, &co, err, sizeof err);
    if (cl->ca == NULL) {
        free(seeds);
        free(cl);
        errno = EINVAL;
        return NULL;
    }
    TAILQ_INIT(&cl->reqs);
    snprintf(cl->host, sizeof cl->host, "%s", seeds[0].host);
    cl->port = seeds[0].port;
    cl->tick = event_new(base, -1, EV_PERSIST, rcl_tick_cb, cl);
    if (cl->tick == NULL)
        abort();
    struct timeval tv = {0, RCL_TICK_MS * 1000};
    evtimer_add(cl->tick, &tv);
    return cl;
}

static void rcl_finalize(rconn_cl_t *cl)
{
    rcluster_async_destroy(cl->ca); /* our requests' callbacks run here, with cb NULL */
    rconn_destroy(cl->sub);
    while (cl->subs != NULL) {
        rcl_sub_t *s = cl->subs;
        cl->subs = s->_next;
        free(s->channel);
        free(s);
    }
    event_free(cl->tick);
    free(cl->seeds);
    free(cl);
}

static void rcl_finalize_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rcl_finalize(arg);
}

void rconn_cl_destroy(rconn_cl_t *cl)
{
    if (cl == NULL || cl->destroyed)
        return;
    cl->destroyed = true;
    cl->o.on_state = NULL;
    evtimer_del(cl->tick);
    for (rcl_sub_t *s = cl->subs; s != NULL; s = s->_next)
        s->cb = NULL;
    rcl_req_t *q;
    TAILQ_FOREACH(q, &cl->reqs, _link)
    {
        rconn_reply_cb cb = q->cb;
        q->cb = NULL;
        if (cb != NULL) {
            cl->depth++;
            cb(cl->owner, NULL, q->arg);
            cl->depth--;
        }
    }
    struct timeval zero = {0, 0};
    if (cl->depth == 0 ||
        event_base_once(cl->base, -1, EV_TIMEOUT, rcl_finalize_cb, cl, &zero) != 0)
        rcl_finalize(cl);
}

bool rconn_cl_connected(const rconn_cl_t *cl)
{
    return !cl->destroyed && cl->told && rcl_now_connected(cl);
}

void rconn_cl_flush(rconn_cl_t *cl)
{
    if (!cl->destroyed)
        rcluster_async_flush(cl->ca);
}

size_t rconn_cl_pending(const rconn_cl_t *cl)
{
    return cl->npending;
}

const char *rconn_cl_last_error(const rconn_cl_t *cl)
{
    if (cl->subs == NULL && !rcluster_async_ready(cl->ca))
        return RCL_NOT_READY; /* what keeps it disconnected, over a request's last failure */
    return cl->last_error;
}

unsigned rconn_cl_connect_count(const rconn_cl_t *cl)
{
    return cl->connects;
}

const char *rconn_cl_host(const rconn_cl_t *cl, int *port)
{
    if (cl->subs == NULL) {
        const char *h = rcluster_async_slot_host(cl->ca, cl->last_slot, port);
        if (*port != 0)
            return h;
    }
    *port = cl->port;
    return cl->host;
}

int rconn_cl_command_argv(rconn_cl_t *cl, rconn_reply_cb cb, void *arg, int argc, const char **argv,
                          const size_t *argvlen)
{
    int err = rcl_usable(cl);
    if (err != 0)
        return err;
    if (argc <= 0 || argv == NULL)
        return -EINVAL;
    size_t lens[argc];
    for (int i = 0; i < argc; i++)
        lens[i] = argvlen != NULL ? argvlen[i] : strlen(argv[i]);
    rcl_req_t *q = rcl_req_new(cl, cb, arg);
    if (rcl_is(argv[0], lens[0], "WAIT")) {
        int n = argc == 3 ? atoi(argv[1]) : -1, ms = argc == 3 ? atoi(argv[2]) : -1;
        err = rcluster_async_wait(cl->ca, cl->last_slot, n, ms, rcl_reply_cb, q);
    } else {
        unsigned flags = rcl_is_read(argv[0], lens[0]) ? RCLUSTER_RESEND : 0;
        int k = rcl_key_index(argc, argv, lens);
        if (k < 0) {
            err = rcluster_async_command_slot(cl->ca, flags, cl->last_slot, argc, argv, lens,
                                              rcl_reply_cb, q);
        } else {
            cl->last_slot = rcluster_key_slot(argv[k], lens[k]);
            cl->have_slot = true;
            err = rcluster_async_command_argv(cl->ca, flags, argv[k], lens[k], argc, argv, lens,
                                              rcl_reply_cb, q);
        }
    }
    if (err != 0)
        rcl_req_drop(cl, q);
    return err;
}

/* Reads one "<prefix><number>\r\n" line of RESP at *p; -1 when malformed. */
static long long rcl_resp_num(const char **p, const char *end, char prefix)
{
    if (*p >= end || **p != prefix)
        return -1;
    char *e;
    long long v = strtoll(*p + 1, &e, 10);
    if (e + 2 > end || e[0] != '\r' || e[1] != '\n' || v < 0)
        return -1;
    *p = e + 2;
    return v;
}

int rconn_cl_command_formatted(rconn_cl_t *cl, rconn_reply_cb cb, void *arg, const char *cmd,
                               size_t len)
{
    const char *p = cmd, *end = cmd + len;
    long long argc = rcl_resp_num(&p, end, '*');
    if (argc <= 0 || argc > 1024)
        return -EINVAL;
    const char **argv = xcalloc((size_t)argc, sizeof *argv);
    size_t *lens = xcalloc((size_t)argc, sizeof *lens);
    int err = 0;
    for (long long i = 0; i < argc && err == 0; i++) {
        long long n = rcl_resp_num(&p, end, '$');
        if (n < 0 || p + n + 2 > end) {
            err = -EINVAL;
            break;
        }
        argv[i] = p;
        lens[i] = (size_t)n;
        p += n + 2;
    }
    if (err == 0)
        err = rconn_cl_command_argv(cl, cb, arg, (int)argc, argv, lens);
    free(argv);
    free(lens);
    return err;
}

int rconn_cl_eval(rconn_cl_t *cl, rcluster_script_t *s, void (*release)(void *), void *rel_arg,
                  rconn_reply_cb cb, void *arg, int nkeys, int argc, const char **argv,
                  const size_t *argvlen)
{
    int err = rcl_usable(cl);
    if (err == 0 && (nkeys < 1 || argc < nkeys))
        err = -EINVAL;
    if (err != 0) {
        release(rel_arg);
        return err;
    }
    size_t lens[argc];
    for (int i = 0; i < argc; i++)
        lens[i] = argvlen != NULL ? argvlen[i] : strlen(argv[i]);
    unsigned slot = rcluster_key_slot(argv[0], lens[0]);
    for (int i = 1; i < nkeys; i++) {
        if (rcluster_key_slot(argv[i], lens[i]) == slot)
            continue;
        if (!cl->crossslot_logged) {
            cl->crossslot_logged = true;
            log_emit(LOG_ERROR, "redis_cluster_crossslot", "{s:s,s:s%,s:s%,s:s}", "conn", cl->name,
                     "key", argv[0], lens[0], "other_key", argv[i], lens[i], "msg",
                     "a script's keys are in two slots: refused (a cluster answers CROSSSLOT)");
        }
        release(rel_arg);
        return -EINVAL;
    }
    cl->last_slot = slot;
    cl->have_slot = true;
    rcl_req_t *q = rcl_req_new(cl, cb, arg);
    q->release = release;
    q->rel_arg = rel_arg;
    err = rcluster_async_eval(cl->ca, s, 0, nkeys, argc, argv, lens, rcl_reply_cb, q);
    if (err != 0) {
        rcl_req_drop(cl, q);
        release(rel_arg);
    }
    return err;
}

int rconn_cl_subscribe(rconn_cl_t *cl, const char *channel, rconn_message_cb cb, void *arg)
{
    if (cl->destroyed)
        return -ESHUTDOWN;
    rcl_sub_t *s = xcalloc(1, sizeof *s);
    s->cl = cl;
    s->channel = xstrdup(channel);
    s->cb = cb;
    s->arg = arg;
    bool first = cl->subs == NULL;
    s->_next = cl->subs;
    cl->subs = s;
    if (first) {
        rcl_sub_open(cl);
    } else if (cl->sub != NULL) {
        (void)rconn_subscribe(cl->sub, s->channel, rcl_sub_msg_cb, s);
    }
    return 0;
}
