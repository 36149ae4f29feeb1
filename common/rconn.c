#include "rconn.h"

#include <arpa/inet.h>
#include <bsd/stdlib.h>
#include <bsd/sys/queue.h>
#include <errno.h>
#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/sds.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "rconn_cluster.h"
#include "sentinel.h"
#include "xmalloc.h"

typedef enum {
    RCONN_BACKOFF,    /* no context; conn_ev is the retry timer */
    RCONN_RESOLVING,  /* sentinel mode: asking the sentinels for the master (query) */
    RCONN_CONNECTING, /* TCP connect in progress; conn_ev is the connect timeout */
    RCONN_HANDSHAKE,  /* connected, PING (then ROLE) sent; conn_ev still the connect timeout */
    RCONN_READY,      /* PING answered; commands accepted */
} rconn_phase_t;

struct rconn_script {
    int refs; /* the creator's plus one per request in flight */
    char *src;
    char sha[41];
    bool have_sha;
    rcluster_script_t *cs; /* cluster mode's twin, made on first use there */
};

typedef struct rconn_req {
    TAILQ_ENTRY(rconn_req) _link;
    rconn_t *rc;
    rconn_reply_cb cb;
    void *arg;
    int64_t deadline_ms;    /* monotonic */
    rconn_script_t *script; /* EVALSHA that may be re-sent as EVAL on NOSCRIPT */
    rconn_script_t *held;   /* script kept alive by this request (eval or SCRIPT LOAD) */
    int argc;               /* script call: user arguments (keys + args), copied */
    char **argv;
    size_t *argvlen;
    int nkeys;
} rconn_req_t;

typedef struct rconn_sub {
    struct rconn_sub *_next;
    rconn_t *rc;
    char *channel;
    rconn_message_cb cb;
    void *arg;
} rconn_sub_t;

struct rconn {
    rconn_cl_t *cl; /* cluster mode (opts.cluster): every call goes there (rconn_cluster.h) */
    struct event_base *base;
    char host[64];
    int port;
    char name[32];
    rconn_opts_t opts; /* host/name pointers not used after create */
    redisAsyncContext *ac;
    rconn_phase_t phase;
    struct event *conn_ev;  /* connect timeout, or backoff timer */
    struct event *req_ev;   /* deadline of the oldest pending request */
    struct event *state_ev; /* zero timer: state notification, deferred work */
    TAILQ_HEAD(, rconn_req) reqs;
    size_t npending;
    rconn_sub_t *subs;
    unsigned attempts; /* failed attempts since the last success */
    unsigned connects;
    bool told_connected; /* what on_state last said */
    bool destroyed;
    bool need_drop; /* drop the context from the loop (a handshake step failed) */
    int depth;      /* > 0 while a user callback runs */
    char last_error[300];
    char logged_error[300];
    /* sentinel mode (sset != NULL) */
    sentinel_set_t *sset;
    sentinel_query_t *query; /* RCONN_RESOLVING */
    rconn_t *watch;          /* subscribed to +switch-master on sentinel watch_idx */
    size_t watch_idx;
    int watch_down_ticks;  /* role ticks the watch has been down */
    struct event *role_ev; /* every second: ROLE check, watch health */
    bool role_inflight;
};

static void rconn_start_connect(rconn_t *rc);
static void rconn_drop(rconn_t *rc, const char *why);
static void rconn_finalize(rconn_t *rc);
static void rconn_send_subscribe(rconn_sub_t *s);
static void rconn_connect_addr(rconn_t *rc);
static void rconn_watch_ensure(rconn_t *rc);

static void rconn_poke(rconn_t *rc)
{
    event_active(rc->state_ev, EV_TIMEOUT, 0);
}

static void rconn_set_error(rconn_t *rc, const char *what, const char *detail)
{
    snprintf(rc->last_error, sizeof rc->last_error, "%s%s%s", what, detail ? ": " : "",
             detail ? detail : "");
}

/*
 * Arms the retry timer: the delay doubles with every failed attempt from backoff_min_ms up to
 * backoff_max_ms and is then drawn uniformly from [delay/2, delay], so that many clients cut
 * off together do not come back in lockstep. The error is logged when it differs from the last
 * one logged, so a Redis that stays down produces one line, not one per retry.
 */
static void rconn_schedule_retry(rconn_t *rc)
{
    rc->phase = RCONN_BACKOFF;
    if (rc->destroyed)
        return;
    int64_t delay = rc->opts.backoff_min_ms;
    for (unsigned i = 0; i < rc->attempts && delay < rc->opts.backoff_max_ms; i++)
        delay *= 2;
    if (delay > rc->opts.backoff_max_ms)
        delay = rc->opts.backoff_max_ms;
    int64_t half = delay / 2;
    delay = half + (int64_t)arc4random_uniform((uint32_t)(delay - half + 1));
    rc->attempts++;
    if (strcmp(rc->last_error, rc->logged_error) != 0) {
        if (rc->opts.quiet)
            ;
        else if (rc->sset != NULL)
            log_emit(LOG_WARN, "redis_unavailable", "{s:s,s:s,s:s,s:i,s:s,s:I,s:i}", "conn",
                     rc->name, "master", sentinel_set_master(rc->sset), "host", rc->host, "port",
                     rc->port, "error", rc->last_error, "retry_ms", (json_int_t)delay, "attempt",
                     (int)rc->attempts);
        else
            log_emit(LOG_WARN, "redis_unavailable", "{s:s,s:s,s:i,s:s,s:I,s:i}", "conn", rc->name,
                     "host", rc->host, "port", rc->port, "error", rc->last_error, "retry_ms",
                     (json_int_t)delay, "attempt", (int)rc->attempts);
        memcpy(rc->logged_error, rc->last_error, sizeof rc->logged_error);
    }
    struct timeval tv = {.tv_sec = delay / 1000, .tv_usec = (delay % 1000) * 1000};
    evtimer_add(rc->conn_ev, &tv);
}

static void rconn_arm_req_timer(rconn_t *rc)
{
    rconn_req_t *head = TAILQ_FIRST(&rc->reqs);
    if (head == NULL) {
        evtimer_del(rc->req_ev);
        return;
    }
    int64_t left = head->deadline_ms - clock_mono_ms();
    if (left < 0)
        left = 0;
    struct timeval tv = {.tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000};
    evtimer_add(rc->req_ev, &tv);
}

static void rconn_script_unref(rconn_script_t *s)
{
    if (s != NULL && --s->refs == 0) {
        rcluster_script_destroy(s->cs);
        free(s->src);
        free(s);
    }
}

static void rconn_req_free(rconn_req_t *req)
{
    rconn_script_unref(req->held);
    if (req->argv != NULL) {
        for (int i = 0; i < req->argc; i++)
            free(req->argv[i]);
        free(req->argv);
        free(req->argvlen);
    }
    free(req);
}

static void rconn_call_user(rconn_t *rc, rconn_reply_cb cb, redisReply *reply, void *arg)
{
    if (cb == NULL)
        return;
    rc->depth++;
    cb(rc, reply, arg);
    rc->depth--;
}

static int rconn_send_script(rconn_req_t *req, bool as_eval);

/*
 * The hiredis callback of every request. Takes the request off the pending queue, re-sends a
 * script call as EVAL when Redis answered NOSCRIPT to its EVALSHA, otherwise hands the reply
 * (or NULL) to the owner's callback exactly once.
 */
static void rconn_reply_trampoline(redisAsyncContext *ac, void *r, void *privdata)
{
    (void)ac;
    rconn_req_t *req = privdata;
    rconn_t *rc = req->rc;
    redisReply *reply = r;
    TAILQ_REMOVE(&rc->reqs, req, _link);
    rc->npending--;
    if (reply != NULL && req->script != NULL && !rc->destroyed &&
        rconn_reply_is_error(reply, "NOSCRIPT")) {
        /* EVAL loads the script again, so the SHA1 stays valid for later calls. */
        if (rconn_send_script(req, true) == 0) {
            rconn_arm_req_timer(rc);
            return;
        }
    }
    rconn_arm_req_timer(rc);
    if (rc->sset != NULL && !rc->destroyed && !rc->need_drop &&
        rconn_reply_is_error(reply, "READONLY")) {
        /* A demoted master: leave it (from the loop, not from inside hiredis) and resolve. */
        log_emit(LOG_WARN, "redis_not_master", "{s:s,s:s,s:s,s:i,s:s}", "conn", rc->name, "master",
                 sentinel_set_master(rc->sset), "host", rc->host, "port", rc->port, "reason",
                 "READONLY");
        rconn_set_error(rc, "not the master", "READONLY reply");
        rc->need_drop = true;
        rconn_poke(rc);
    }
    rconn_call_user(rc, req->cb, reply, req->arg);
    rconn_req_free(req);
}

/* Queues req on the pending list and sends argv; 0 or -ENOTCONN (req not queued). */
static int rconn_send_req(rconn_req_t *req, int argc, const char **argv, const size_t *argvlen)
{
    rconn_t *rc = req->rc;
    if (rc->ac == NULL)
        return -ENOTCONN;
    if (redisAsyncCommandArgv(rc->ac, rconn_reply_trampoline, req, argc, argv, argvlen) != REDIS_OK)
        return -ENOTCONN;
    req->deadline_ms = clock_mono_ms() + rc->opts.request_timeout_ms;
    bool was_empty = TAILQ_EMPTY(&rc->reqs);
    TAILQ_INSERT_TAIL(&rc->reqs, req, _link);
    rc->npending++;
    if (was_empty)
        rconn_arm_req_timer(rc);
    return 0;
}

static rconn_req_t *rconn_req_new(rconn_t *rc, rconn_reply_cb cb, void *arg)
{
    rconn_req_t *req = xcalloc(1, sizeof *req);
    req->rc = rc;
    req->cb = cb;
    req->arg = arg;
    return req;
}

static void rconn_role_cb(rconn_t *rc, redisReply *reply, void *arg);

static void rconn_become_ready(rconn_t *rc)
{
    rc->phase = RCONN_READY;
    evtimer_del(rc->conn_ev);
    rc->connects++;
    if (rc->logged_error[0] != '\0' || rc->connects > 1)
        log_emit(LOG_INFO, "redis_connected", "{s:s,s:s,s:i,s:i}", "conn", rc->name, "host",
                 rc->host, "port", rc->port, "attempts", (int)rc->attempts + 1);
    rc->attempts = 0;
    rc->logged_error[0] = '\0';
    rc->last_error[0] = '\0';
    for (rconn_sub_t *s = rc->subs; s != NULL; s = s->_next)
        rconn_send_subscribe(s);
    rconn_poke(rc);
    if (rc->sset != NULL)
        rconn_watch_ensure(rc);
}

/* Sends ROLE; handshake: as the second step of the connect (bounded by the connect timeout). */
static int rconn_send_role(rconn_t *rc, bool handshake)
{
    rconn_req_t *req = rconn_req_new(rc, rconn_role_cb, handshake ? rc : NULL);
    const char *argv[] = {"ROLE"};
    if (rconn_send_req(req, 1, argv, NULL) != 0) {
        rconn_req_free(req);
        return -ENOTCONN;
    }
    if (handshake) {
        req->deadline_ms = clock_mono_ms() + rc->opts.connect_timeout_ms;
        rconn_arm_req_timer(rc);
    } else {
        rc->role_inflight = true;
    }
    return 0;
}

/* The answer to ROLE (sentinel mode): a node that is not the master is left and resolved. */
static void rconn_role_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    bool handshake = arg != NULL;
    if (!handshake)
        rc->role_inflight = false;
    if (reply == NULL || rc->destroyed)
        return;
    const char *role = NULL;
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements > 0 &&
        reply->element[0]->type == REDIS_REPLY_STRING)
        role = reply->element[0]->str;
    if (role != NULL && strcasecmp(role, "master") == 0) {
        if (handshake && rc->phase == RCONN_HANDSHAKE)
            rconn_become_ready(rc);
        return;
    }
    char why[160];
    snprintf(why, sizeof why, "ROLE is %s",
             role                               ? role
             : reply->type == REDIS_REPLY_ERROR ? reply->str
                                                : "unexpected");
    log_emit(LOG_WARN, "redis_not_master", "{s:s,s:s,s:s,s:i,s:s}", "conn", rc->name, "master",
             sentinel_set_master(rc->sset), "host", rc->host, "port", rc->port, "reason", why);
    rconn_set_error(rc, "not the master", why);
    rc->need_drop = true;
    rconn_poke(rc);
}

static void rconn_handshake_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)arg;
    if (reply == NULL)
        return; /* the context is being freed; whoever freed it schedules the retry */
    if (reply->type == REDIS_REPLY_STATUS && strcasecmp(reply->str, "PONG") == 0) {
        if (rc->sset == NULL) {
            rconn_become_ready(rc);
            return;
        }
        if (rconn_send_role(rc, true) == 0)
            return;
        rconn_set_error(rc, "handshake refused", "cannot send ROLE");
        rc->need_drop = true;
        rconn_poke(rc);
        return;
    }
    /* LOADING, NOAUTH, ...: not usable yet; drop from the loop, not from inside hiredis. */
    rconn_set_error(rc, "handshake refused",
                    reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
    rc->need_drop = true;
    rconn_poke(rc);
}

static void rconn_connect_cb(const redisAsyncContext *ac, int status)
{
    rconn_t *rc = ac->data;
    if (rc == NULL || rc->ac != ac)
        return;
    if (status != REDIS_OK) {
        /* hiredis frees the context right after this callback. */
        rconn_set_error(rc, "connect failed", ac->errstr);
        rc->ac = NULL;
        evtimer_del(rc->conn_ev);
        rconn_schedule_retry(rc);
        return;
    }
    rc->phase = RCONN_HANDSHAKE;
    rconn_req_t *req = rconn_req_new(rc, rconn_handshake_cb, NULL);
    const char *argv[] = {"PING"};
    if (rconn_send_req(req, 1, argv, NULL) != 0) {
        rconn_req_free(req);
        rconn_set_error(rc, "connect failed", "cannot send PING");
        rc->need_drop = true;
        rconn_poke(rc);
        return;
    }
    req->deadline_ms = clock_mono_ms() + rc->opts.connect_timeout_ms;
    rconn_arm_req_timer(rc);
}

static void rconn_disconnect_cb(const redisAsyncContext *ac, int status)
{
    rconn_t *rc = ac->data;
    if (rc == NULL || rc->ac != ac)
        return; /* we freed it ourselves */
    /* hiredis frees the context right after this callback; pending callbacks already ran. */
    rconn_set_error(rc, "connection lost", status == REDIS_OK ? "closed" : ac->errstr);
    rc->ac = NULL;
    evtimer_del(rc->req_ev);
    rconn_schedule_retry(rc);
    rconn_poke(rc);
}

/*
 * Frees the current context from the event loop (never from inside a hiredis callback).
 * Pending callbacks run with NULL during redisAsyncFree(); the retry timer is armed after.
 */
static void rconn_drop(rconn_t *rc, const char *why)
{
    redisAsyncContext *ac = rc->ac;
    if (why != NULL)
        rconn_set_error(rc, why, NULL);
    rc->ac = NULL;
    evtimer_del(rc->conn_ev);
    evtimer_del(rc->req_ev);
    rc->phase = RCONN_BACKOFF;
    if (ac != NULL)
        redisAsyncFree(ac);
    if (!rc->destroyed) {
        rconn_schedule_retry(rc);
        rconn_poke(rc);
    }
}

static void rconn_conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rconn_t *rc = arg;
    if (rc->phase == RCONN_BACKOFF) {
        rconn_start_connect(rc);
        return;
    }
    if (rc->phase == RCONN_CONNECTING || rc->phase == RCONN_HANDSHAKE) {
        char ms[32];
        snprintf(ms, sizeof ms, "no answer within %d ms", rc->opts.connect_timeout_ms);
        rconn_set_error(rc, "connect timeout", ms);
        rconn_drop(rc, NULL);
    }
}

static void rconn_req_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rconn_t *rc = arg;
    rconn_req_t *head = TAILQ_FIRST(&rc->reqs);
    if (head == NULL)
        return;
    if (head->deadline_ms > clock_mono_ms()) {
        rconn_arm_req_timer(rc);
        return;
    }
    if (rc->phase != RCONN_READY) {
        rconn_set_error(rc, "connect timeout", "no answer to PING");
        rconn_drop(rc, NULL);
        return;
    }
    log_emit(LOG_WARN, "redis_request_timeout", "{s:s,s:s,s:i,s:i,s:I}", "conn", rc->name, "host",
             rc->host, "port", rc->port, "timeout_ms", rc->opts.request_timeout_ms, "pending",
             (json_int_t)rc->npending);
    rconn_drop(rc, "request timeout");
}

/*
 * The zero timer: runs deferred work outside hiredis callbacks. It finishes a destroy that was
 * asked for from inside a callback, drops a context whose handshake failed, and tells the
 * owner about a change of the connected state.
 */
static void rconn_state_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rconn_t *rc = arg;
    if (rc->destroyed) {
        if (rc->depth == 0)
            rconn_finalize(rc);
        return;
    }
    if (rc->need_drop) {
        rc->need_drop = false;
        if (rc->ac != NULL) {
            rconn_drop(rc, NULL);
            return; /* rconn_drop poked us again */
        }
    }
    bool now = rc->phase == RCONN_READY;
    if (now != rc->told_connected) {
        rc->told_connected = now;
        if (rc->opts.on_state != NULL) {
            rc->depth++;
            rc->opts.on_state(rc, now, rc->opts.arg);
            rc->depth--;
            if (rc->destroyed && rc->depth == 0)
                rconn_finalize(rc);
        }
    }
}

/*
 * +switch-master from the watched sentinel: when this master moved elsewhere, the connection is
 * closed (from the loop) and the reconnect resolves the new address at once.
 */
static void rconn_switch_cb(rconn_t *w, const char *channel, const char *data, size_t len,
                            void *arg)
{
    (void)w;
    (void)channel;
    rconn_t *rc = arg;
    char host[64];
    int port;
    if (rc->destroyed ||
        !sentinel_parse_switch(data, len, sentinel_set_master(rc->sset), host, sizeof host, &port))
        return;
    bool here = rc->phase == RCONN_READY && strcmp(host, rc->host) == 0 && port == rc->port;
    log_emit(LOG_INFO, "redis_switch_master", "{s:s,s:s,s:s,s:i,s:b}", "conn", rc->name, "master",
             sentinel_set_master(rc->sset), "host", host, "port", port, "reconnect", !here);
    if (here)
        return;
    rc->attempts = 0;
    if (rc->ac != NULL) {
        rconn_set_error(rc, "master switched", NULL);
        rc->need_drop = true;
        rconn_poke(rc);
    } else if (rc->phase == RCONN_BACKOFF) {
        evtimer_del(rc->conn_ev);
        event_active(rc->conn_ev, EV_TIMEOUT, 0);
    }
}

static void rconn_watch_state_cb(rconn_t *w, bool connected, void *arg);

static void rconn_watch_open(rconn_t *rc)
{
    size_t i = rc->watch_idx % sentinel_set_count(rc->sset);
    char name[48];
    snprintf(name, sizeof name, "%s-sentinel", rc->name);
    rconn_opts_t o = {
        .host = sentinel_set_host(rc->sset, i),
        .port = sentinel_set_port(rc->sset, i),
        .connect_timeout_ms = rc->opts.connect_timeout_ms,
        .request_timeout_ms = rc->opts.request_timeout_ms,
        .backoff_min_ms = rc->opts.backoff_min_ms,
        .backoff_max_ms = rc->opts.backoff_max_ms,
        .name = name,
        .quiet = true,
        .on_state = rconn_watch_state_cb,
        .arg = rc,
    };
    rc->watch = rconn_create(rc->base, &o);
    rc->watch_down_ticks = 0;
    if (rc->watch != NULL)
        rconn_subscribe(rc->watch, "+switch-master", rconn_switch_cb, rc);
}

/* Moves the watch to the next sentinel of the list (this one was lost or never answered). */
static void rconn_watch_rotate(rconn_t *rc)
{
    rconn_t *w = rc->watch;
    rc->watch = NULL;
    rconn_destroy(w); /* may be inside its own callback: rconn defers the free */
    rc->watch_idx++;
    rconn_watch_open(rc);
}

static void rconn_watch_state_cb(rconn_t *w, bool connected, void *arg)
{
    rconn_t *rc = arg;
    if (w != rc->watch || rc->destroyed)
        return;
    rc->watch_down_ticks = 0;
    if (!connected)
        rconn_watch_rotate(rc);
}

/* After a connect: watch the sentinel that just answered, unless a watch is already up. */
static void rconn_watch_ensure(rconn_t *rc)
{
    if (rc->watch != NULL && rconn_connected(rc->watch))
        return;
    rconn_t *w = rc->watch;
    rc->watch = NULL;
    rconn_destroy(w);
    rc->watch_idx = 0;
    rconn_watch_open(rc);
}

/* Every second in sentinel mode: ask ROLE again; move a watch that stays down. */
static void rconn_role_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rconn_t *rc = arg;
    if (rc->destroyed)
        return;
    if (rc->phase == RCONN_READY && rc->subs == NULL && !rc->role_inflight && !rc->need_drop)
        (void)rconn_send_role(rc, false);
    if (rc->watch != NULL && !rconn_connected(rc->watch) && ++rc->watch_down_ticks >= 3)
        rconn_watch_rotate(rc);
}

static void rconn_resolved_cb(const char *host, int port, const char *err, void *arg)
{
    rconn_t *rc = arg;
    rc->query = NULL;
    if (err != NULL) {
        rconn_set_error(rc, "master not found", err);
        rconn_schedule_retry(rc);
        return;
    }
    if (strcmp(rc->host, host) != 0 || rc->port != port)
        log_emit(LOG_INFO, "redis_master_resolved", "{s:s,s:s,s:s,s:i,s:s,s:i}", "conn", rc->name,
                 "master", sentinel_set_master(rc->sset), "host", host, "port", port, "sentinel",
                 sentinel_set_host(rc->sset, 0), "sentinel_port", sentinel_set_port(rc->sset, 0));
    snprintf(rc->host, sizeof rc->host, "%s", host);
    rc->port = port;
    rconn_connect_addr(rc);
}

static void rconn_start_connect(rconn_t *rc)
{
    if (rc->destroyed)
        return;
    if (rc->sset != NULL) {
        rc->phase = RCONN_RESOLVING;
        /* A short timeout per sentinel (the sentinel client guide: a few hundred ms), so that
         * a dead or hung sentinel delays the connect little. */
        int ms = rc->opts.connect_timeout_ms < 500 ? rc->opts.connect_timeout_ms : 500;
        rc->query = sentinel_query_start(rc->base, rc->sset, ms, rconn_resolved_cb, rc);
        return;
    }
    rconn_connect_addr(rc);
}

static void rconn_connect_addr(rconn_t *rc)
{
    redisAsyncContext *ac = redisAsyncConnect(rc->host, rc->port);
    if (ac == NULL) {
        rconn_set_error(rc, "connect failed", "out of memory");
        rconn_schedule_retry(rc);
        return;
    }
    if (ac->err) {
        rconn_set_error(rc, "connect failed", ac->errstr);
        redisAsyncFree(ac);
        rconn_schedule_retry(rc);
        return;
    }
    ac->data = rc;
    if (redisLibeventAttach(ac, rc->base) != REDIS_OK) {
        rconn_set_error(rc, "connect failed", "cannot attach to the event base");
        redisAsyncFree(ac);
        rconn_schedule_retry(rc);
        return;
    }
    redisEnableKeepAlive(&ac->c);
    redisAsyncSetConnectCallback(ac, rconn_connect_cb);
    redisAsyncSetDisconnectCallback(ac, rconn_disconnect_cb);
    rc->ac = ac;
    rc->phase = RCONN_CONNECTING;
    int ms = rc->opts.connect_timeout_ms;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(rc->conn_ev, &tv);
}

/*
 * Validates the options, copies what must outlive the call and starts the first connect.
 * Returns NULL (errno EINVAL) on a host that is not an IP literal or a bad port.
 */
rconn_t *rconn_create(struct event_base *base, const rconn_opts_t *opts)
{
    unsigned char buf[sizeof(struct in6_addr)];
    sentinel_set_t *sset = NULL;
    if (base != NULL && opts != NULL && opts->cluster != NULL) {
        if (opts->sentinels != NULL) {
            errno = EINVAL;
            return NULL;
        }
        rconn_t *rc = xcalloc(1, sizeof *rc);
        rc->base = base;
        rc->cl = rconn_cl_create(rc, base, opts);
        if (rc->cl == NULL) {
            free(rc);
            errno = EINVAL;
            return NULL;
        }
        return rc;
    }
    if (base != NULL && opts != NULL && opts->sentinels != NULL) {
        char err[200];
        sset = sentinel_set_create(opts->sentinels, opts->master_name, err, sizeof err);
        if (sset == NULL) {
            errno = EINVAL;
            return NULL;
        }
    } else if (base == NULL || opts == NULL || opts->host == NULL || opts->port <= 0 ||
               opts->port > 65535 || strlen(opts->host) >= 64 ||
               (inet_pton(AF_INET, opts->host, buf) != 1 &&
                inet_pton(AF_INET6, opts->host, buf) != 1)) {
        errno = EINVAL;
        return NULL;
    }
    rconn_t *rc = xcalloc(1, sizeof *rc);
    rc->base = base;
    rc->opts = *opts;
    rc->sset = sset;
    if (sset == NULL) {
        snprintf(rc->host, sizeof rc->host, "%s", opts->host);
        rc->port = opts->port;
    }
    snprintf(rc->name, sizeof rc->name, "%s", opts->name ? opts->name : "redis");
    rc->opts.host = NULL;
    rc->opts.name = NULL;
    rc->opts.sentinels = NULL;
    rc->opts.master_name = NULL;
    if (rc->opts.connect_timeout_ms <= 0)
        rc->opts.connect_timeout_ms = 1000;
    if (rc->opts.request_timeout_ms <= 0)
        rc->opts.request_timeout_ms = 1000;
    if (rc->opts.backoff_min_ms <= 0)
        rc->opts.backoff_min_ms = 50;
    if (rc->opts.backoff_max_ms <= 0)
        rc->opts.backoff_max_ms = 2000;
    if (rc->opts.backoff_max_ms < rc->opts.backoff_min_ms)
        rc->opts.backoff_max_ms = rc->opts.backoff_min_ms;
    TAILQ_INIT(&rc->reqs);
    rc->conn_ev = evtimer_new(base, rconn_conn_timer_cb, rc);
    rc->req_ev = evtimer_new(base, rconn_req_timer_cb, rc);
    rc->state_ev = evtimer_new(base, rconn_state_timer_cb, rc);
    if (rc->conn_ev == NULL || rc->req_ev == NULL || rc->state_ev == NULL)
        goto fail_events;
    if (sset != NULL) {
        rc->role_ev = event_new(base, -1, EV_PERSIST, rconn_role_timer_cb, rc);
        if (rc->role_ev == NULL)
            goto fail_events;
        struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
        evtimer_add(rc->role_ev, &tv);
    }
    rconn_start_connect(rc);
    return rc;

fail_events:
    if (rc->conn_ev)
        event_free(rc->conn_ev);
    if (rc->req_ev)
        event_free(rc->req_ev);
    if (rc->state_ev)
        event_free(rc->state_ev);
    sentinel_set_free(sset);
    free(rc);
    errno = ENOMEM;
    return NULL;
}

static void rconn_finalize(rconn_t *rc)
{
    sentinel_query_cancel(rc->query);
    rc->query = NULL;
    rconn_t *w = rc->watch;
    rc->watch = NULL;
    rconn_destroy(w);
    if (rc->role_ev != NULL)
        event_free(rc->role_ev);
    sentinel_set_free(rc->sset);
    rc->sset = NULL;
    if (rc->ac != NULL) {
        redisAsyncContext *ac = rc->ac;
        rc->ac = NULL;
        redisAsyncFree(ac); /* remaining requests have cb == NULL: only freed */
    }
    event_free(rc->conn_ev);
    event_free(rc->req_ev);
    event_free(rc->state_ev);
    while (rc->subs != NULL) {
        rconn_sub_t *s = rc->subs;
        rc->subs = s->_next;
        free(s->channel);
        free(s);
    }
    free(rc);
}

/*
 * Calls every pending callback with NULL (each once), then releases the context and the memory
 * now, or on the next loop iteration when called from inside one of the rconn's callbacks.
 */
void rconn_destroy(rconn_t *rc)
{
    if (rc == NULL || rc->destroyed)
        return;
    if (rc->cl != NULL) {
        rc->destroyed = true;
        rconn_cl_destroy(rc->cl); /* frees its part now or on the next loop turn */
        free(rc);                 /* its callbacks no longer use rc */
        return;
    }
    rc->destroyed = true;
    rc->opts.on_state = NULL;
    for (rconn_sub_t *s = rc->subs; s != NULL; s = s->_next)
        s->cb = NULL;
    rconn_req_t *req;
    TAILQ_FOREACH(req, &rc->reqs, _link)
    {
        rconn_reply_cb cb = req->cb;
        req->cb = NULL;
        rconn_call_user(rc, cb, NULL, req->arg);
    }
    if (rc->depth == 0) {
        rconn_finalize(rc);
    } else {
        evtimer_del(rc->conn_ev);
        evtimer_del(rc->req_ev);
        if (rc->role_ev != NULL)
            evtimer_del(rc->role_ev);
        sentinel_query_cancel(rc->query);
        rc->query = NULL;
        rconn_poke(rc);
    }
}

bool rconn_connected(const rconn_t *rc)
{
    if (rc != NULL && rc->cl != NULL)
        return rconn_cl_connected(rc->cl);
    return rc != NULL && !rc->destroyed && rc->phase == RCONN_READY;
}

void rconn_flush(rconn_t *rc)
{
    if (rc != NULL && rc->cl != NULL) {
        rconn_cl_flush(rc->cl);
        return;
    }
    if (rc == NULL || rc->ac == NULL || rc->phase != RCONN_READY ||
        !(rc->ac->c.flags & REDIS_CONNECTED) || sdslen(rc->ac->c.obuf) == 0)
        return;
    redisAsyncHandleWrite(rc->ac);
}

size_t rconn_pending(const rconn_t *rc)
{
    if (rc->cl != NULL)
        return rconn_cl_pending(rc->cl);
    return rc->npending;
}

const char *rconn_last_error(const rconn_t *rc)
{
    if (rc->cl != NULL)
        return rconn_cl_last_error(rc->cl);
    return rc->last_error;
}

unsigned rconn_connect_count(const rconn_t *rc)
{
    if (rc->cl != NULL)
        return rconn_cl_connect_count(rc->cl);
    return rc->connects;
}

const char *rconn_host(const rconn_t *rc)
{
    int port;
    if (rc->cl != NULL)
        return rconn_cl_host(rc->cl, &port);
    return rc->host;
}

int rconn_port(const rconn_t *rc)
{
    int port;
    if (rc->cl != NULL) {
        (void)rconn_cl_host(rc->cl, &port);
        return port;
    }
    return rc->port;
}

static int rconn_check_usable(const rconn_t *rc)
{
    if (rc == NULL)
        return -EINVAL;
    if (rc->destroyed)
        return -ESHUTDOWN;
    if (rc->cl != NULL)
        return rconn_cl_connected(rc->cl) ? 0 : -ENOTCONN;
    if (rc->phase != RCONN_READY || rc->ac == NULL)
        return -ENOTCONN;
    return 0;
}

int rconn_command_argv(rconn_t *rc, rconn_reply_cb cb, void *arg, int argc, const char **argv,
                       const size_t *argvlen)
{
    if (rc != NULL && rc->cl != NULL)
        return rconn_cl_command_argv(rc->cl, cb, arg, argc, argv, argvlen);
    int err = rconn_check_usable(rc);
    if (err != 0)
        return err;
    if (argc <= 0 || argv == NULL)
        return -EINVAL;
    rconn_req_t *req = rconn_req_new(rc, cb, arg);
    err = rconn_send_req(req, argc, argv, argvlen);
    if (err != 0)
        rconn_req_free(req);
    return err;
}

int rconn_command(rconn_t *rc, rconn_reply_cb cb, void *arg, const char *fmt, ...)
{
    int err = rconn_check_usable(rc);
    if (err != 0)
        return err;
    if (fmt == NULL)
        return -EINVAL;
    char *cmd = NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    if (len < 0)
        return -EINVAL;
    if (rc->cl != NULL) {
        err = rconn_cl_command_formatted(rc->cl, cb, arg, cmd, (size_t)len);
        redisFreeCommand(cmd);
        return err;
    }
    rconn_req_t *req = rconn_req_new(rc, cb, arg);
    if (redisAsyncFormattedCommand(rc->ac, rconn_reply_trampoline, req, cmd, (size_t)len) !=
        REDIS_OK) {
        redisFreeCommand(cmd);
        rconn_req_free(req);
        return -ENOTCONN;
    }
    redisFreeCommand(cmd);
    req->deadline_ms = clock_mono_ms() + rc->opts.request_timeout_ms;
    bool was_empty = TAILQ_EMPTY(&rc->reqs);
    TAILQ_INSERT_TAIL(&rc->reqs, req, _link);
    rc->npending++;
    if (was_empty)
        rconn_arm_req_timer(rc);
    return 0;
}

rconn_script_t *rconn_script_create(const char *lua_source)
{
    if (lua_source == NULL)
        return NULL;
    rconn_script_t *s = xcalloc(1, sizeof *s);
    s->refs = 1;
    s->src = xstrdup(lua_source);
    return s;
}

void rconn_script_destroy(rconn_script_t *s)
{
    rconn_script_unref(s);
}

const char *rconn_script_sha(const rconn_script_t *s)
{
    return s->have_sha ? s->sha : NULL;
}

static void rconn_script_loaded_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    rconn_script_t *s = arg;
    if (reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len == 40) {
        memcpy(s->sha, reply->str, 40);
        s->sha[40] = '\0';
        s->have_sha = true;
    }
}

/* Sends a script request as EVALSHA (sha known, as_eval false) or EVAL; 0 or -ENOTCONN. */
static int rconn_send_script(rconn_req_t *req, bool as_eval)
{
    rconn_script_t *s = req->script;
    int n = req->argc + 3;
    const char **argv = xcalloc((size_t)n, sizeof *argv);
    size_t *lens = xcalloc((size_t)n, sizeof *lens);
    char nk[16];
    snprintf(nk, sizeof nk, "%d", req->nkeys);
    bool sha = !as_eval && s->have_sha;
    argv[0] = sha ? "EVALSHA" : "EVAL";
    argv[1] = sha ? s->sha : s->src;
    argv[2] = nk;
    for (int i = 0; i < 3; i++)
        lens[i] = strlen(argv[i]);
    for (int i = 0; i < req->argc; i++) {
        argv[3 + i] = req->argv[i];
        lens[3 + i] = req->argvlen[i];
    }
    int err = rconn_send_req(req, n, argv, lens);
    free(argv);
    free(lens);
    return err;
}

/*
 * Copies the call's arguments (a NOSCRIPT answer may need them again after this returns),
 * loads the script first if its SHA1 is not known, then sends EVALSHA or EVAL.
 */
static void rconn_script_release(void *s)
{
    rconn_script_unref(s);
}

int rconn_eval(rconn_t *rc, rconn_script_t *s, rconn_reply_cb cb, void *arg, int nkeys, int argc,
               const char **argv, const size_t *argvlen)
{
    int err = rconn_check_usable(rc);
    if (err != 0)
        return err;
    if (s == NULL || nkeys < 0 || argc < nkeys || (argc > 0 && argv == NULL))
        return -EINVAL;
    if (rc->cl != NULL) {
        if (s->cs == NULL)
            s->cs = rcluster_script_create(s->src);
        s->refs++; /* the twin lives as long as a call uses it */
        return rconn_cl_eval(rc->cl, s->cs, rconn_script_release, s, cb, arg, nkeys, argc, argv,
                             argvlen);
    }
    if (!s->have_sha) {
        const char *load[] = {"SCRIPT", "LOAD", s->src};
        rconn_req_t *lr = rconn_req_new(rc, rconn_script_loaded_cb, s);
        lr->held = s;
        s->refs++;
        err = rconn_send_req(lr, 3, load, NULL);
        if (err != 0) {
            rconn_req_free(lr);
            return err;
        }
    }
    rconn_req_t *req = rconn_req_new(rc, cb, arg);
    req->script = s;
    req->held = s;
    s->refs++;
    req->nkeys = nkeys;
    req->argc = argc;
    req->argv = xcalloc((size_t)argc + 1, sizeof *req->argv);
    req->argvlen = xcalloc((size_t)argc + 1, sizeof *req->argvlen);
    for (int i = 0; i < argc; i++) {
        size_t len = argvlen ? argvlen[i] : strlen(argv[i]);
        req->argv[i] = xmalloc(len + 1);
        memcpy(req->argv[i], argv[i], len);
        req->argv[i][len] = '\0';
        req->argvlen[i] = len;
    }
    err = rconn_send_script(req, false);
    if (err != 0)
        rconn_req_free(req);
    return err;
}

static void rconn_sub_trampoline(redisAsyncContext *ac, void *r, void *privdata)
{
    (void)ac;
    rconn_sub_t *s = privdata;
    redisReply *reply = r;
    if (reply == NULL || s->cb == NULL || s->rc->destroyed)
        return;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3)
        return;
    redisReply *kind = reply->element[0], *ch = reply->element[1], *data = reply->element[2];
    if (kind->type != REDIS_REPLY_STRING || strcmp(kind->str, "message") != 0)
        return; /* subscribe confirmation */
    if (ch->type != REDIS_REPLY_STRING || data->type != REDIS_REPLY_STRING)
        return;
    s->rc->depth++;
    s->cb(s->rc, ch->str, data->str, data->len, s->arg);
    s->rc->depth--;
}

static void rconn_send_subscribe(rconn_sub_t *s)
{
    rconn_t *rc = s->rc;
    if (rc->ac == NULL)
        return;
    const char *argv[] = {"SUBSCRIBE", s->channel};
    if (redisAsyncCommandArgv(rc->ac, rconn_sub_trampoline, s, 2, argv, NULL) != REDIS_OK) {
        rconn_set_error(rc, "handshake refused", "cannot SUBSCRIBE");
        rc->need_drop = true;
        rconn_poke(rc);
    }
}

int rconn_subscribe(rconn_t *rc, const char *channel, rconn_message_cb cb, void *arg)
{
    if (rc == NULL || channel == NULL || cb == NULL)
        return -EINVAL;
    if (rc->destroyed)
        return -ESHUTDOWN;
    if (rc->cl != NULL)
        return rconn_cl_subscribe(rc->cl, channel, cb, arg);
    rconn_sub_t *s = xcalloc(1, sizeof *s);
    s->rc = rc;
    s->channel = xstrdup(channel);
    s->cb = cb;
    s->arg = arg;
    s->_next = rc->subs;
    rc->subs = s;
    if (rc->phase == RCONN_READY)
        rconn_send_subscribe(s);
    return 0;
}

bool rconn_reply_is_error(const redisReply *reply, const char *prefix)
{
    if (reply == NULL || reply->type != REDIS_REPLY_ERROR || reply->str == NULL)
        return false;
    return prefix == NULL || strncmp(reply->str, prefix, strlen(prefix)) == 0;
}
