#include "rcluster_async.h"

#include <bsd/sys/queue.h>
#include <errno.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "rcluster_map.h"
#include "rconn.h"
#include "xmalloc.h"

typedef struct {
    char host[64];
    int port;
    bool master;  /* serves slots in the current map (or named by MOVED/ASK since) */
    bool retired; /* its rconn goes once no request is in flight on it */
    rconn_t *rc;  /* NULL: not connected, not wanted */
    bool wrote;   /* a command went over rc in its connection number conn_no */
    unsigned conn_no;
} rca_node_t;

typedef struct rca_req {
    TAILQ_ENTRY(rca_req) _link; /* in c->waiting or c->inflight */
    rcluster_async_t *c;
    rcluster_async_cb cb;
    void *arg;
    unsigned flags, slot;
    int argc; /* the command, or for a script its keys and arguments (copied) */
    char **argv;
    size_t *argvlen;
    rcluster_script_t *script;
    int nkeys;
    bool wait;     /* a WAIT (rcluster_async_wait): no routing, no retry */
    bool use_eval; /* NOSCRIPT seen: EVAL the source */
    bool asking;   /* the next try goes to ask_to, after ASKING */
    config_addr_t ask_to;
    int redirects;
    int backoff_ms;
    long long deadline_ms, not_before_ms;
    bool inflight;
    int node; /* where it was sent */
    char why[300];
} rca_req_t;

TAILQ_HEAD(rca_list, rca_req);

struct rcluster_async {
    struct event_base *base;
    rcluster_async_opts_t o;
    char name[32];
    config_addr_t *seeds;
    size_t nseeds;
    rca_node_t nodes[RCLUSTER_MAX_NODES];
    size_t nnodes;
    uint16_t slot[RCLUSTER_SLOTS];
    bool have_map, covered;
    bool need_refresh, refreshing;
    long long last_refresh_ms;
    struct event *pump;
    bool kick_all; /* the next pump tries every waiting request, due or not */
    struct rca_list waiting, inflight;
    size_t npending;
    bool destroying;
    rcluster_stats_t stats;
    char err[300];
};

static void rca_state_cb(rconn_t *rc, bool connected, void *arg);

/* ---- nodes ------------------------------------------------------------------------------- */

/* The entry of host:port, added if unknown (reusing an idle entry when the table is full);
 * -1 when there is no room. */
static int rca_node_find(rcluster_async_t *c, const char *host, int port)
{
    for (size_t i = 0; i < c->nnodes; i++)
        if (c->nodes[i].port == port && strcmp(c->nodes[i].host, host) == 0)
            return (int)i;
    size_t i = c->nnodes;
    if (i == RCLUSTER_MAX_NODES) {
        for (i = 0; i < c->nnodes; i++)
            if (c->nodes[i].rc == NULL && !c->nodes[i].master)
                break;
        if (i == c->nnodes)
            return -1;
        for (unsigned s = 0; s < RCLUSTER_SLOTS; s++) /* not master: no slot points at it */
            if (c->slot[s] == i)
                c->slot[s] = RCLUSTER_NONE;
    } else {
        c->nnodes++;
    }
    rca_node_t *n = &c->nodes[i];
    memset(n, 0, sizeof *n);
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    return (int)i;
}

/* Opens the node's rconn if it has none (it connects by itself; on_state tells). */
static void rca_node_open(rcluster_async_t *c, rca_node_t *n)
{
    n->retired = false;
    if (n->rc != NULL)
        return;
    rconn_opts_t o = {
        .host = n->host,
        .port = n->port,
        .connect_timeout_ms = c->o.connect_timeout_ms,
        .request_timeout_ms = c->o.request_timeout_ms,
        .name = c->name,
        .quiet = c->o.quiet,
        .on_state = rca_state_cb,
        .arg = c,
    };
    n->rc = rconn_create(c->base, &o);
    if (n->rc != NULL)
        c->stats.reconnects++;
}

/* Closes the rconns of retired nodes that have nothing in flight. */
static void rca_nodes_reap(rcluster_async_t *c)
{
    for (size_t i = 0; i < c->nnodes; i++) {
        rca_node_t *n = &c->nodes[i];
        if (n->retired && n->rc != NULL && rconn_pending(n->rc) == 0) {
            rconn_t *rc = n->rc;
            n->rc = NULL;
            n->retired = false;
            rconn_destroy(rc); /* may be inside its own callback: rconn defers the free */
        }
    }
}

/* ---- requests ------------------------------------------------------------------------------ */

static void rca_pump_soon(rcluster_async_t *c, bool all)
{
    c->kick_all = c->kick_all || all;
    event_active(c->pump, EV_TIMEOUT, 0);
}

static void rca_req_free(rca_req_t *q)
{
    for (int i = 0; i < q->argc; i++)
        free(q->argv[i]);
    free(q->argv);
    free(q->argvlen);
    free(q);
}

/* Ends a request: its callback, once. */
static void rca_finish(rca_req_t *q, redisReply *reply, const char *why)
{
    rcluster_async_t *c = q->c;
    c->npending--;
    q->cb(c, reply, why, q->arg);
    rca_req_free(q);
}

/* Ends a request with NULL and "<what>: <q->why>". */
static void rca_fail(rca_req_t *q, const char *what)
{
    char why[420];
    snprintf(why, sizeof why, "%s%s%s", what, q->why[0] ? ": " : "", q->why);
    rca_finish(q, NULL, why);
}

/* Puts a request aside for delay_ms (0: until the next pump), within its budget. */
static void rca_wait(rca_req_t *q, int delay_ms)
{
    rcluster_async_t *c = q->c;
    long long now = clock_mono_ms();
    if (now + delay_ms > q->deadline_ms) {
        char what[80];
        snprintf(what, sizeof what, "gave up after %d ms", c->o.retry_budget_ms);
        rca_fail(q, what);
        return;
    }
    q->not_before_ms = now + delay_ms;
    TAILQ_INSERT_TAIL(&c->waiting, q, _link);
    if (!evtimer_pending(c->pump, NULL)) {
        struct timeval tv = {0, (long)c->o.retry_min_ms * 1000};
        evtimer_add(c->pump, &tv);
    }
}

/* Waits the request's next backoff (doubling up to retry_max_ms). */
static void rca_backoff(rca_req_t *q)
{
    int d = q->backoff_ms;
    int max = q->c->o.retry_max_ms;
    q->backoff_ms = d * 2 < max ? d * 2 : max;
    rca_wait(q, d);
}

static void rca_reply_cb(rconn_t *rc, redisReply *reply, void *arg);

static void rca_ignore_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    (void)reply;
    (void)arg;
}

static void rca_sha_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    rcluster_script_t *s = arg;
    if (reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len == 40 && !s->have_sha) {
        memcpy(s->sha, reply->str, 40);
        s->sha[40] = '\0';
        s->have_sha = true;
    }
}

/* Writes the request on rc: 0, or -ENOTCONN (nothing sent that matters). */
static int rca_send(rcluster_async_t *c, rca_req_t *q, rconn_t *rc)
{
    (void)c;
    if (q->asking && rconn_command(rc, rca_ignore_cb, NULL, "ASKING") != 0)
        return -ENOTCONN;
    if (q->script == NULL)
        return rconn_command_argv(rc, rca_reply_cb, q, q->argc, (const char **)q->argv, q->argvlen);
    rcluster_script_t *s = q->script;
    bool eval = q->use_eval || q->asking || !s->have_sha;
    if (!s->have_sha) {
        const char *load[] = {"SCRIPT", "LOAD", s->src};
        (void)rconn_command_argv(rc, rca_sha_cb, s, 3, load, NULL);
    }
    int n = q->argc + 3;
    const char **v = xcalloc((size_t)n, sizeof *v);
    size_t *vl = xcalloc((size_t)n, sizeof *vl);
    char nk[16];
    snprintf(nk, sizeof nk, "%d", q->nkeys);
    v[0] = eval ? "EVAL" : "EVALSHA";
    vl[0] = strlen(v[0]);
    v[1] = eval ? s->src : s->sha;
    vl[1] = strlen(v[1]);
    v[2] = nk;
    vl[2] = strlen(nk);
    for (int i = 0; i < q->argc; i++) {
        v[i + 3] = q->argv[i];
        vl[i + 3] = q->argvlen[i];
    }
    int rc2 = rconn_command_argv(rc, rca_reply_cb, q, n, v, vl);
    free(v);
    free(vl);
    return rc2;
}

/* Sends a WAIT on the connection of the slot's master that carried the last command there, or
 * ends it with NULL when there is none (a WAIT on another connection would count nothing). */
static void rca_try_wait(rca_req_t *q)
{
    rcluster_async_t *c = q->c;
    /* the writes it follows may not be sent yet (no map, master connecting): behind them */
    bool behind = !c->have_map;
    for (rca_req_t *w = TAILQ_FIRST(&c->waiting); w != NULL && !behind; w = TAILQ_NEXT(w, _link))
        behind = w->slot == q->slot && !w->wait;
    if (behind) {
        snprintf(q->why, sizeof q->why, "slot %u: the writes before it were never sent", q->slot);
        rca_wait(q, 0);
        return;
    }
    unsigned idx = c->slot[q->slot];
    rca_node_t *n = idx != RCLUSTER_NONE ? &c->nodes[idx] : NULL;
    if (n == NULL || n->rc == NULL || !rconn_connected(n->rc) || !n->wrote ||
        n->conn_no != rconn_connect_count(n->rc)) {
        snprintf(q->why, sizeof q->why, "slot %u", q->slot);
        rca_fail(q, "WAIT: no connection to the master that carried a write");
        return;
    }
    if (rconn_command_argv(n->rc, rca_reply_cb, q, q->argc, (const char **)q->argv, q->argvlen) !=
        0) {
        snprintf(q->why, sizeof q->why, "%s:%d", n->host, n->port);
        rca_fail(q, "WAIT: cannot send");
        return;
    }
    q->inflight = true;
    q->node = (int)idx;
    TAILQ_INSERT_TAIL(&c->inflight, q, _link);
}

/* Tries to send a request now; puts it aside when its master is not there yet. */
static void rca_try(rca_req_t *q)
{
    rcluster_async_t *c = q->c;
    if (clock_mono_ms() >= q->deadline_ms) {
        char what[80];
        snprintf(what, sizeof what, "gave up after %d ms", c->o.retry_budget_ms);
        rca_fail(q, what);
        return;
    }
    if (q->wait) {
        rca_try_wait(q);
        return;
    }
    int idx;
    if (q->asking) {
        idx = rca_node_find(c, q->ask_to.host, q->ask_to.port);
        if (idx < 0) {
            rca_fail(q, "no room for the node of an ASK redirection");
            return;
        }
        c->nodes[idx].master = true;
    } else {
        idx = c->slot[q->slot] == RCLUSTER_NONE ? -1 : (int)c->slot[q->slot];
    }
    if (idx < 0) {
        snprintf(q->why, sizeof q->why, "slot %u is not served by any master%s", q->slot,
                 c->have_map ? "" : " (no slot map yet)");
        c->need_refresh = true;
        rca_wait(q, 0);
        return;
    }
    rca_node_t *n = &c->nodes[idx];
    rca_node_open(c, n);
    if (n->rc == NULL || !rconn_connected(n->rc) || rca_send(c, q, n->rc) != 0) {
        const char *e = n->rc != NULL ? rconn_last_error(n->rc) : "";
        snprintf(q->why, sizeof q->why, "%s:%d not connected%s%.200s", n->host, n->port,
                 e[0] ? ": " : "", e);
        c->need_refresh = true; /* a master lost may have been replaced */
        rca_backoff(q);
        return;
    }
    q->asking = false;
    q->inflight = true;
    q->node = idx;
    n->wrote = true;
    n->conn_no = rconn_connect_count(n->rc);
    TAILQ_INSERT_TAIL(&c->inflight, q, _link);
}

static void rca_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    rca_req_t *q = arg;
    rcluster_async_t *c = q->c;
    TAILQ_REMOVE(&c->inflight, q, _link);
    q->inflight = false;
    rca_node_t *n = &c->nodes[q->node];
    if (c->destroying) {
        rca_finish(q, NULL, "the cluster client was destroyed");
        return;
    }
    if (q->wait) {
        snprintf(q->why, sizeof q->why, "%s:%d", n->host, n->port);
        if (reply == NULL)
            rca_fail(q, "WAIT: no answer");
        else
            rca_finish(q, reply, NULL);
        return;
    }
    if (reply == NULL) {
        snprintf(q->why, sizeof q->why, "reply lost from %s:%d: %.200s", n->host, n->port,
                 n->rc != NULL && rconn_last_error(n->rc)[0] ? rconn_last_error(n->rc)
                                                             : "timeout or connection lost");
        c->need_refresh = true;
        rca_pump_soon(c, false);
        if (!(q->flags & RCLUSTER_RESEND)) {
            rca_fail(q, "the command may have run");
            return;
        }
        c->stats.resent++;
        rca_backoff(q);
        return;
    }
    if (reply->type != REDIS_REPLY_ERROR) {
        rca_finish(q, reply, NULL);
        return;
    }
    if (rcluster_reply_is(reply, "MOVED") || rcluster_reply_is(reply, "ASK")) {
        unsigned s;
        config_addr_t to;
        bool moved = reply->str[0] == 'M';
        snprintf(q->why, sizeof q->why, "%.250s", reply->str);
        if (rcluster_redirect_parse(reply->str, &s, &to) != 0 || s != q->slot) {
            rca_fail(q, "bad redirection");
            return;
        }
        if (++q->redirects > c->o.max_redirects) {
            rca_fail(q, "too many redirections");
            return;
        }
        if (moved) {
            c->stats.moved++;
            int idx = rca_node_find(c, to.host, to.port);
            if (idx < 0) {
                rca_fail(q, "no room for the node of a MOVED redirection");
                return;
            }
            c->nodes[idx].master = true;
            c->slot[s] = (uint16_t)idx;
            c->need_refresh = true;
            rca_pump_soon(c, false);
        } else {
            c->stats.ask++;
            q->asking = true;
            q->ask_to = to;
        }
        rca_try(q);
        return;
    }
    if (q->script != NULL && !q->use_eval && rcluster_reply_is(reply, "NOSCRIPT")) {
        c->stats.noscript++;
        q->use_eval = true;
        rca_try(q);
        return;
    }
    if (rcluster_reply_is(reply, "TRYAGAIN") || rcluster_reply_is(reply, "CLUSTERDOWN") ||
        rcluster_reply_is(reply, "LOADING")) {
        snprintf(q->why, sizeof q->why, "%.64s:%d: %.200s", n->host, n->port, reply->str);
        if (reply->str[0] == 'T') {
            c->stats.tryagain++;
        } else if (reply->str[0] == 'L') {
            c->stats.loading++;
        } else {
            c->stats.clusterdown++;
            c->need_refresh = true;
        }
        rca_backoff(q);
        return;
    }
    rca_finish(q, reply, NULL);
}

/* ---- the map ------------------------------------------------------------------------------- */

/* Installs a map read from one node: entries for its nodes, rconns for its masters, the other
 * rconns retired. */
static void rca_map_install(rcluster_async_t *c, const rcluster_map_t *m)
{
    int idx[RCLUSTER_MAX_NODES];
    for (size_t i = 0; i < c->nnodes; i++)
        c->nodes[i].master = false;
    for (size_t i = 0; i < m->n; i++) {
        idx[i] = rca_node_find(c, m->nodes[i].host, m->nodes[i].port);
        if (idx[i] >= 0)
            c->nodes[idx[i]].master = m->master[i];
    }
    for (unsigned s = 0; s < RCLUSTER_SLOTS; s++)
        c->slot[s] = m->slot[s] == RCLUSTER_NONE || idx[m->slot[s]] < 0 ? RCLUSTER_NONE
                                                                        : (uint16_t)idx[m->slot[s]];
    for (size_t i = 0; i < c->nnodes; i++) {
        rca_node_t *n = &c->nodes[i];
        if (n->master)
            rca_node_open(c, n);
        else if (n->rc != NULL)
            n->retired = true;
    }
    char gaps[200];
    c->have_map = true;
    c->covered = rcluster_map_gaps(c->slot, gaps, sizeof gaps) == 0;
    if (!c->covered)
        snprintf(c->err, sizeof c->err, "%s", gaps);
}

static void rca_refresh_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    rcluster_async_t *c = arg;
    if (c->destroying)
        return;
    c->refreshing = false;
    size_t i;
    for (i = 0; i < c->nnodes && c->nodes[i].rc != rc; i++)
        ;
    const char *host = i < c->nnodes ? c->nodes[i].host : "";
    rcluster_map_t *m = xmalloc(sizeof *m);
    char why[200];
    if (reply == NULL) {
        snprintf(c->err, sizeof c->err, "no answer to CLUSTER SLOTS from %s", host);
    } else if (reply->type == REDIS_REPLY_ERROR) {
        snprintf(c->err, sizeof c->err, "%s refused CLUSTER SLOTS: %.200s", host, reply->str);
    } else if (rcluster_map_parse(reply, host, m, why, sizeof why) != 0) {
        snprintf(c->err, sizeof c->err, "%s: %s", host, why);
    } else {
        rca_map_install(c, m);
        c->need_refresh = !c->covered; /* slots unserved: asked again until they are */
    }
    free(m);
    rca_pump_soon(c, true);
}

/* Starts a refresh on a connected node (a master first); with none connected, opens rconns to
 * every known node and seed, and the next connect (on_state) starts it. */
static void rca_refresh_start(rcluster_async_t *c)
{
    rca_node_t *pick = NULL;
    for (int pass = 0; pass < 2 && pick == NULL; pass++)
        for (size_t i = 0; i < c->nnodes && pick == NULL; i++)
            if (c->nodes[i].rc != NULL && rconn_connected(c->nodes[i].rc) &&
                c->nodes[i].master == (pass == 0))
                pick = &c->nodes[i];
    if (pick != NULL && rconn_command(pick->rc, rca_refresh_cb, c, "CLUSTER SLOTS") == 0) {
        c->refreshing = true;
        c->last_refresh_ms = clock_mono_ms();
        c->stats.refreshes++;
        return;
    }
    for (size_t i = 0; i < c->nseeds; i++)
        (void)rca_node_find(c, c->seeds[i].host, c->seeds[i].port);
    for (size_t i = 0; i < c->nnodes; i++)
        rca_node_open(c, &c->nodes[i]);
}

/* The one timer: reaps retired rconns, starts refreshes, retries the requests put aside. */
static void rca_pump_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rcluster_async_t *c = arg;
    long long now = clock_mono_ms();
    rca_nodes_reap(c);
    if (c->need_refresh && !c->refreshing && now - c->last_refresh_ms >= c->o.refresh_min_ms)
        rca_refresh_start(c);
    struct rca_list due = TAILQ_HEAD_INITIALIZER(due);
    TAILQ_INIT(&due);
    rca_req_t *q, *next;
    for (q = TAILQ_FIRST(&c->waiting); q != NULL; q = next) {
        next = TAILQ_NEXT(q, _link);
        if (c->kick_all || q->not_before_ms <= now || q->deadline_ms <= now) {
            TAILQ_REMOVE(&c->waiting, q, _link);
            TAILQ_INSERT_TAIL(&due, q, _link);
        }
    }
    c->kick_all = false;
    while ((q = TAILQ_FIRST(&due)) != NULL) {
        TAILQ_REMOVE(&due, q, _link);
        if (q->not_before_ms > now && q->deadline_ms > now && !c->have_map) {
            TAILQ_INSERT_TAIL(&c->waiting, q, _link); /* nothing to try it on yet */
            continue;
        }
        rca_try(q);
    }
    bool busy = !TAILQ_EMPTY(&c->waiting) || c->need_refresh;
    for (size_t i = 0; i < c->nnodes && !busy; i++)
        busy = c->nodes[i].retired && c->nodes[i].rc != NULL;
    if (busy && !evtimer_pending(c->pump, NULL)) {
        struct timeval tv = {0, (long)c->o.retry_min_ms * 1000};
        evtimer_add(c->pump, &tv);
    }
}

static void rca_state_cb(rconn_t *rc, bool connected, void *arg)
{
    rcluster_async_t *c = arg;
    if (c->destroying)
        return;
    for (size_t i = 0; i < c->nnodes; i++) {
        if (c->nodes[i].rc != rc)
            continue;
        if (!connected && c->nodes[i].master)
            c->need_refresh = true; /* a master gone: perhaps failed over */
        break;
    }
    rca_pump_soon(c, connected);
}

/* ---- the public face --------------------------------------------------------------------------
 */

rcluster_async_t *rcluster_async_create(struct event_base *base, const char *seeds,
                                        const rcluster_async_opts_t *opts, char *err, size_t errlen)
{
    config_addr_t *a;
    int n = rcluster_seeds_parse(seeds, &a, err, errlen);
    if (n < 0)
        return NULL;
    rcluster_async_t *c = xcalloc(1, sizeof *c);
    c->base = base;
    if (opts != NULL)
        c->o = *opts;
    rcluster_async_opts_t *o = &c->o;
    o->connect_timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 500;
    o->request_timeout_ms = o->request_timeout_ms > 0 ? o->request_timeout_ms : 2000;
    o->max_redirects = o->max_redirects > 0 ? o->max_redirects : 8;
    o->retry_budget_ms = o->retry_budget_ms > 0 ? o->retry_budget_ms : 4000;
    o->retry_min_ms = o->retry_min_ms > 0 ? o->retry_min_ms : 20;
    if (o->retry_min_ms > 999)
        o->retry_min_ms = 999; /* the pump's period: a timeval of under a second */
    o->retry_max_ms = o->retry_max_ms >= o->retry_min_ms ? o->retry_max_ms : 500;
    o->refresh_min_ms = o->refresh_min_ms > 0 ? o->refresh_min_ms : 100;
    snprintf(c->name, sizeof c->name, "%s", o->name != NULL ? o->name : "cluster");
    o->name = NULL;
    c->seeds = a;
    c->nseeds = (size_t)n;
    memset(c->slot, 0xFF, sizeof c->slot);
    TAILQ_INIT(&c->waiting);
    TAILQ_INIT(&c->inflight);
    c->pump = evtimer_new(base, rca_pump_cb, c);
    if (c->pump == NULL)
        abort();
    c->need_refresh = true;
    c->last_refresh_ms = clock_mono_ms() - c->o.refresh_min_ms;
    rca_refresh_start(c); /* nothing connected yet: opens the seeds */
    return c;
}

void rcluster_async_destroy(rcluster_async_t *c)
{
    if (c == NULL)
        return;
    c->destroying = true;
    for (size_t i = 0; i < c->nnodes; i++) { /* in-flight callbacks run with NULL here */
        rconn_t *rc = c->nodes[i].rc;
        c->nodes[i].rc = NULL;
        rconn_destroy(rc);
    }
    rca_req_t *q;
    while ((q = TAILQ_FIRST(&c->waiting)) != NULL) {
        TAILQ_REMOVE(&c->waiting, q, _link);
        rca_finish(q, NULL, "the cluster client was destroyed");
    }
    event_free(c->pump);
    free(c->seeds);
    free(c);
}

bool rcluster_async_ready(const rcluster_async_t *c)
{
    return c->have_map && c->covered;
}

size_t rcluster_async_pending(const rcluster_async_t *c)
{
    return c->npending;
}

const char *rcluster_async_slot_host(const rcluster_async_t *c, unsigned slot, int *port)
{
    unsigned idx = slot < RCLUSTER_SLOTS ? c->slot[slot] : RCLUSTER_NONE;
    if (idx == RCLUSTER_NONE) {
        *port = 0;
        return "";
    }
    *port = c->nodes[idx].port;
    return c->nodes[idx].host;
}

void rcluster_async_get_stats(const rcluster_async_t *c, rcluster_stats_t *out)
{
    *out = c->stats;
}

/* A request with a copy of argv, started. */
static rca_req_t *rca_submit(rcluster_async_t *c, unsigned flags, unsigned slot, int argc,
                             const char **argv, const size_t *argvlen, rcluster_script_t *s,
                             int nkeys, rcluster_async_cb cb, void *arg)
{
    rca_req_t *q = xcalloc(1, sizeof *q);
    q->c = c;
    q->cb = cb;
    q->arg = arg;
    q->flags = flags;
    q->slot = slot;
    q->script = s;
    q->nkeys = nkeys;
    q->argc = argc;
    q->argv = xcalloc((size_t)argc, sizeof *q->argv);
    q->argvlen = xcalloc((size_t)argc, sizeof *q->argvlen);
    for (int i = 0; i < argc; i++) {
        size_t len = argvlen != NULL ? argvlen[i] : strlen(argv[i]);
        q->argv[i] = xmalloc(len + 1);
        memcpy(q->argv[i], argv[i], len);
        q->argv[i][len] = '\0';
        q->argvlen[i] = len;
    }
    q->backoff_ms = c->o.retry_min_ms;
    q->deadline_ms = clock_mono_ms() + c->o.retry_budget_ms;
    c->npending++;
    /* tried from the loop, never here: a callback never runs inside the call that gave it */
    q->not_before_ms = 0;
    TAILQ_INSERT_TAIL(&c->waiting, q, _link);
    rca_pump_soon(c, false);
    return q;
}

int rcluster_async_command_argv(rcluster_async_t *c, unsigned flags, const void *key, size_t keylen,
                                int argc, const char **argv, const size_t *argvlen,
                                rcluster_async_cb cb, void *arg)
{
    if (argc < 1 || cb == NULL)
        return -EINVAL;
    rca_submit(c, flags, rcluster_key_slot(key, keylen), argc, argv, argvlen, NULL, 0, cb, arg);
    return 0;
}

int rcluster_async_command_slot(rcluster_async_t *c, unsigned flags, unsigned slot, int argc,
                                const char **argv, const size_t *argvlen, rcluster_async_cb cb,
                                void *arg)
{
    if (argc < 1 || cb == NULL || slot >= RCLUSTER_SLOTS)
        return -EINVAL;
    rca_submit(c, flags, slot, argc, argv, argvlen, NULL, 0, cb, arg);
    return 0;
}

int rcluster_async_eval(rcluster_async_t *c, rcluster_script_t *s, unsigned flags, int nkeys,
                        int argc, const char **argv, const size_t *argvlen, rcluster_async_cb cb,
                        void *arg)
{
    if (nkeys < 1 || nkeys > argc || cb == NULL)
        return -EINVAL;
    unsigned slot = rcluster_key_slot(argv[0], argvlen ? argvlen[0] : strlen(argv[0]));
    for (int i = 1; i < nkeys; i++)
        if (rcluster_key_slot(argv[i], argvlen ? argvlen[i] : strlen(argv[i])) != slot)
            return -EINVAL;
    rca_submit(c, flags, slot, argc, argv, argvlen, s, nkeys, cb, arg);
    return 0;
}

int rcluster_async_wait(rcluster_async_t *c, unsigned slot, int numreplicas, int timeout_ms,
                        rcluster_async_cb cb, void *arg)
{
    if (slot >= RCLUSTER_SLOTS || numreplicas < 0 || timeout_ms < 0 ||
        timeout_ms >= c->o.request_timeout_ms || cb == NULL)
        return -EINVAL;
    char n[16], t[16];
    snprintf(n, sizeof n, "%d", numreplicas);
    snprintf(t, sizeof t, "%d", timeout_ms);
    const char *argv[] = {"WAIT", n, t};
    rca_req_t *q = rca_submit(c, 0, slot, 3, argv, NULL, NULL, 0, cb, arg);
    q->wait = true;
    return 0;
}

void rcluster_async_flush(rcluster_async_t *c)
{
    if (c == NULL || !c->have_map)
        return;
    long long now = clock_mono_ms();
    rca_req_t *q, *next;
    for (q = TAILQ_FIRST(&c->waiting); q != NULL; q = next) {
        next = TAILQ_NEXT(q, _link);
        /* only what goes out at once: no callback may run inside this call */
        if (q->wait || q->asking || q->not_before_ms > now ||
            q->deadline_ms <= now + c->o.retry_max_ms)
            continue;
        unsigned idx = c->slot[q->slot];
        if (idx == RCLUSTER_NONE || c->nodes[idx].rc == NULL || !rconn_connected(c->nodes[idx].rc))
            continue;
        TAILQ_REMOVE(&c->waiting, q, _link);
        rca_try(q);
    }
    for (size_t i = 0; i < c->nnodes; i++)
        if (c->nodes[i].rc != NULL)
            rconn_flush(c->nodes[i].rc);
}
