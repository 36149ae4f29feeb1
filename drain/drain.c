/*
 * drain -- drain state, status JSON, metrics and the health HTTP server (see drain.h).
 *
 * Threads: the drain state is one atomic (the start time, 0 while not draining), so any thread
 * may start the drain or read it. Everything evhttp lives on the HTTP thread: its event_base,
 * the evhttp object (created, bound and freed there) and the list of waiting /drain/wait
 * requests. Other threads reach it only through event_active() on events of that base
 * (notify, stop), which is safe because evthreads_enable() has turned libevent's locking on
 * before the base is created.
 */
#include "drain.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <jansson.h>

#include "clock.h"
#include "evthreads.h"
#include "log.h"
#include "xmalloc.h"

#define DRAIN_MAX_HEARTBEATS 64
#define DRAIN_MAX_WAITERS 256
#define DRAIN_MAX_ALLOW 16
#define DRAIN_MAX_WAIT_SECONDS 86400.0
/* At most one log line per cause (header or body deadline, eviction, refusal) in this long. */
#define DRAIN_NOTE_MS 10000

/*
 * One health-server connection, as seen beside evhttp (which keeps its own state private): made
 * with its bufferevent (drain_conn_bev), given the evhttp connection on the next loop pass, freed
 * by evhttp's close callback. The request deadlines are found from the bytes read: a request
 * begins with its first byte (the accept, for the first) and its headers end with the first
 * empty line; the handler being called ends it.
 */
typedef struct drain_conn {
    TAILQ_ENTRY(drain_conn) _link;
    struct drain *d;
    struct bufferevent *bev;
    struct evhttp_connection *evcon; /* NULL until drain_conn_ev_cb's first run */
    struct evbuffer_cb_entry *in_cb;
    struct event *ev;   /* the first run, then the deadline timer */
    int64_t start_ms;   /* the request being read began; 0: between requests */
    int64_t headers_ms; /* its headers ended; 0: not yet */
    unsigned line_len;  /* bytes of the header line being read (CR not counted) */
    bool refused;       /* over max_conns: takes a slow request's place, else a 503 */
} drain_conn_t;

enum {
    DRAIN_NOTE_HEADERS = 0,
    DRAIN_NOTE_BODY = 1,
    DRAIN_NOTE_REFUSED = 2,
    DRAIN_NOTE_EVICTED = 3
};

typedef struct drain_waiter {
    TAILQ_ENTRY(drain_waiter) _link;
    struct evhttp_request *req;
    struct event *timer;
    drain_t *d;
} drain_waiter_t;

typedef struct {
    int family; /* AF_INET or AF_INET6 */
    unsigned char addr[16];
} drain_allow_t;

struct drain {
    drain_config_t cfg;
    char prefix[32];

    _Atomic int64_t start_ns; /* monotonic start of the drain; 0 = not draining */

    drain_allow_t allow[DRAIN_MAX_ALLOW];
    int nallow; /* 0 = loopback policy */

    pthread_mutex_t hb_mu;
    char hb_name[DRAIN_MAX_HEARTBEATS][32];
    _Atomic int64_t hb_ms[DRAIN_MAX_HEARTBEATS];
    _Atomic int nhb;

    metrics_registry_t *reg;
    bool own_reg;
    metrics_t *m_draining, *m_duration, *m_human, *m_desks, *m_ready;
    metrics_t *m_http_conns, *m_http_timeouts[2], *m_http_refused, *m_http_evicted;

    /* HTTP thread. */
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int serve_rc; /* 1 while starting, then 0 or a negative errno */
    int port;
    struct event_base *base;
    struct evhttp *http;
    _Atomic(struct event *) notify_ev;
    struct event *stop_ev, *recheck_ev;
    TAILQ_HEAD(, drain_waiter) waiters; /* HTTP thread only */
    TAILQ_HEAD(, drain_conn) conns;     /* HTTP thread only */
    int nconns;                         /* HTTP thread only */
    struct {
        int64_t last_ms;
        long skipped;
    } note[4]; /* HTTP thread only: rate-limited log lines */
    _Atomic int nwaiters;
    bool stopping; /* HTTP thread only */

    pthread_mutex_t watch_mu;
    struct event *watch_ev;
};

/* Parses the comma-separated allow-list into d->allow. Returns 0 or -EINVAL. */
static int drain_parse_allow(drain_t *d, const char *list)
{
    char buf[1024];
    if (strlen(list) >= sizeof buf)
        return -EINVAL;
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
        if (d->nallow == DRAIN_MAX_ALLOW)
            return -EINVAL;
        drain_allow_t *a = &d->allow[d->nallow];
        if (inet_pton(AF_INET, tok, a->addr) == 1)
            a->family = AF_INET;
        else if (inet_pton(AF_INET6, tok, a->addr) == 1)
            a->family = AF_INET6;
        else
            return -EINVAL;
        d->nallow++;
    }
    return d->nallow > 0 ? 0 : -EINVAL;
}

/* Looks up (or creates) one of the shell's gauges; NULL if the name has another type. */
static metrics_t *drain_gauge(drain_t *d, const char *suffix, const char *help)
{
    char name[96];
    snprintf(name, sizeof name, "%s_%s", d->prefix, suffix);
    return metrics_gauge(d->reg, name, NULL, help);
}

/*
 * Checks the config, copies it and registers the gauges. The caller's strings and registry are
 * referenced, not copied (the allow-list is parsed here). Returns 0 or -EINVAL with a log line.
 */
int drain_create(const drain_config_t *cfg, drain_t **out)
{
    const char *why = NULL;
    *out = NULL;
    if (cfg == NULL)
        why = "no config";
    else if (cfg->human_desks == NULL)
        why = "human_desks() is required";
    else if (cfg->stop_intake == NULL)
        why = "stop_intake() is required";
    else if (cfg->ready == NULL)
        why = "the readiness gate ready() is required";
    else if (cfg->drain_max_seconds < 0)
        why = "drain_max_seconds must be >= 0";
    else if (cfg->listen.port < 0 || cfg->listen.port > 65535 || cfg->listen.host[0] == '\0')
        why = "bad health listen address";
    else if (cfg->heartbeat_max_age_ms < 0 || cfg->recheck_ms < 0 || cfg->http_timeout_s < 0 ||
             cfg->header_timeout_ms < 0 || cfg->body_timeout_ms < 0)
        why = "negative timing setting";
    else if (cfg->max_conns < 0)
        why = "max_conns must be >= 0";
    else if (cfg->metric_prefix != NULL &&
             (cfg->metric_prefix[0] == '\0' || strlen(cfg->metric_prefix) > 24))
        why = "metric_prefix must be 1..24 characters";
    if (why != NULL) {
        log_emit(LOG_ERROR, "drain_config_invalid", "{s:s}", "reason", why);
        return -EINVAL;
    }

    drain_t *d = xcalloc(1, sizeof *d);
    d->cfg = *cfg;
    if (d->cfg.heartbeat_max_age_ms == 0)
        d->cfg.heartbeat_max_age_ms = 5000;
    if (d->cfg.recheck_ms == 0)
        d->cfg.recheck_ms = 100;
    if (d->cfg.http_timeout_s == 0)
        d->cfg.http_timeout_s = 10;
    if (d->cfg.header_timeout_ms == 0)
        d->cfg.header_timeout_ms = 5000;
    if (d->cfg.body_timeout_ms == 0)
        d->cfg.body_timeout_ms = 5000;
    if (d->cfg.max_conns == 0)
        d->cfg.max_conns = 512;
    snprintf(d->prefix, sizeof d->prefix, "%s", cfg->metric_prefix ? cfg->metric_prefix : "game");
    if (cfg->drain_allow != NULL && drain_parse_allow(d, cfg->drain_allow) != 0) {
        log_emit(LOG_ERROR, "drain_config_invalid", "{s:s,s:s}", "reason",
                 "drain_allow must be a comma-separated list of at most 16 IP literals", "value",
                 cfg->drain_allow);
        goto fail_config;
    }
    d->reg = cfg->metrics;
    if (d->reg == NULL) {
        d->reg = metrics_create();
        d->own_reg = true;
    }
    d->m_draining = drain_gauge(d, "draining", "1 while the process is draining");
    d->m_duration =
        drain_gauge(d, "drain_duration_seconds", "Seconds since the drain started (0 if not)");
    d->m_human = drain_gauge(d, "human_desks", "Desks in a round with a human seated");
    d->m_desks = cfg->total_desks ? drain_gauge(d, "desks", "Desks hosted") : NULL;
    d->m_ready = drain_gauge(d, "ready", "1 while /readyz answers 200 (ready and not draining)");
    char name[96];
    snprintf(name, sizeof name, "%s_http_connections", d->prefix);
    d->m_http_conns = metrics_gauge(d->reg, name, NULL, "Health server connections open (capped)");
    snprintf(name, sizeof name, "%s_http_timeouts_total", d->prefix);
    d->m_http_timeouts[0] = metrics_counter(d->reg, name, "phase=\"headers\"",
                                            "Health server connections closed by a deadline");
    d->m_http_timeouts[1] = metrics_counter(d->reg, name, "phase=\"body\"",
                                            "Health server connections closed by a deadline");
    snprintf(name, sizeof name, "%s_http_refused_total", d->prefix);
    d->m_http_refused =
        metrics_counter(d->reg, name, NULL, "Health server connections refused (503) over the cap");
    snprintf(name, sizeof name, "%s_http_evicted_total", d->prefix);
    d->m_http_evicted = metrics_counter(
        d->reg, name, NULL,
        "Health server connections closed mid-request to make room for a new one at the cap");
    if (!d->m_draining || !d->m_duration || !d->m_human || !d->m_ready ||
        (cfg->total_desks && !d->m_desks) || !d->m_http_conns || !d->m_http_timeouts[0] ||
        !d->m_http_timeouts[1] || !d->m_http_refused || !d->m_http_evicted) {
        log_emit(LOG_ERROR, "drain_config_invalid", "{s:s,s:s}", "reason",
                 "a drain metric name is already registered with another type", "prefix",
                 d->prefix);
        goto fail_metrics;
    }
    pthread_mutex_init(&d->hb_mu, NULL);
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    pthread_mutex_init(&d->watch_mu, NULL);
    TAILQ_INIT(&d->waiters);
    TAILQ_INIT(&d->conns);
    d->port = -1;
    *out = d;
    return 0;

fail_metrics:
    if (d->own_reg)
        metrics_destroy(d->reg);
fail_config:
    free(d);
    return -EINVAL;
}

/* ---- drain state ---- */

/*
 * The first caller swaps the start time in (so `draining` and the start time appear together,
 * and /readyz is 503 from that instant), then stops intake and wakes waiters.
 */
int drain_start(drain_t *d)
{
    int64_t now = clock_mono_ns();
    if (now <= 0)
        now = 1;
    int64_t expected = 0;
    if (!atomic_compare_exchange_strong(&d->start_ns, &expected, now))
        return 0;
    log_emit(LOG_INFO, "drain_started", "{s:I,s:i}", "human_desks",
             (json_int_t)d->cfg.human_desks(d->cfg.ctx), "drain_max_seconds",
             d->cfg.drain_max_seconds);
    d->cfg.stop_intake(d->cfg.ctx);
    char buf[160];
    drain_status_json(d, buf, sizeof buf); /* refreshes the gauges */
    drain_notify(d);
    return 1;
}

bool drain_is_draining(const drain_t *d)
{
    return atomic_load(&d->start_ns) != 0;
}

long drain_human_desks_now(const drain_t *d)
{
    return d->cfg.human_desks(d->cfg.ctx);
}

int drain_max_seconds(const drain_t *d)
{
    return d->cfg.drain_max_seconds;
}

int64_t drain_elapsed_ns(const drain_t *d)
{
    int64_t start = atomic_load(&d->start_ns);
    if (start == 0)
        return 0;
    int64_t e = clock_mono_ns() - start;
    return e > 0 ? e : 0;
}

long drain_elapsed_seconds(const drain_t *d)
{
    return (long)(drain_elapsed_ns(d) / 1000000000);
}

/*
 * Wakes the HTTP thread (to answer /drain/wait) and the watcher. event_active() on a base of
 * another thread is safe with evthread locking and costs a lock and at most one eventfd write.
 */
void drain_notify(drain_t *d)
{
    struct event *ev = atomic_load(&d->notify_ev);
    if (ev != NULL && atomic_load(&d->nwaiters) > 0)
        event_active(ev, EV_READ, 0);
    pthread_mutex_lock(&d->watch_mu);
    if (d->watch_ev != NULL)
        event_active(d->watch_ev, EV_READ, 0);
    pthread_mutex_unlock(&d->watch_mu);
}

void drain_watch(drain_t *d, struct event *ev)
{
    pthread_mutex_lock(&d->watch_mu);
    d->watch_ev = ev;
    pthread_mutex_unlock(&d->watch_mu);
}

int drain_status_json(drain_t *d, char *buf, int cap)
{
    int64_t start = atomic_load(&d->start_ns);
    bool draining = start != 0;
    long human = d->cfg.human_desks(d->cfg.ctx);
    int64_t el_ns = draining ? clock_mono_ns() - start : 0;
    if (el_ns < 0)
        el_ns = 0;
    long elapsed = (long)(el_ns / 1000000000);
    int n =
        snprintf(buf, (size_t)cap, "{\"draining\":%s,\"human_desks\":%ld,\"elapsedSeconds\":%ld",
                 draining ? "true" : "false", human, elapsed);
    long total = 0;
    if (d->cfg.total_desks != NULL) {
        total = d->cfg.total_desks(d->cfg.ctx);
        if (n >= 0 && n < cap)
            n += snprintf(buf + n, (size_t)(cap - n), ",\"total_desks\":%ld", total);
    }
    if (n >= 0 && n < cap)
        n += snprintf(buf + n, (size_t)(cap - n), "}");
    metrics_set(d->m_draining, draining ? 1 : 0);
    metrics_set(d->m_duration, (double)el_ns / 1e9);
    metrics_set(d->m_human, (double)human);
    if (d->m_desks != NULL)
        metrics_set(d->m_desks, (double)total);
    metrics_set(d->m_ready, !draining && d->cfg.ready(d->cfg.ctx) ? 1 : 0);
    if (n < 0 || n >= cap) {
        if (cap > 0)
            buf[0] = '\0';
        return -ENOSPC;
    }
    return n;
}

int drain_waiters(const drain_t *d)
{
    return atomic_load(&d->nwaiters);
}

metrics_registry_t *drain_metrics(const drain_t *d)
{
    return d->reg;
}

int drain_port(const drain_t *d)
{
    return d->port;
}

int drain_heartbeat_add(drain_t *d, const char *name)
{
    pthread_mutex_lock(&d->hb_mu);
    int slot = atomic_load(&d->nhb);
    if (slot == DRAIN_MAX_HEARTBEATS) {
        pthread_mutex_unlock(&d->hb_mu);
        return -ENOSPC;
    }
    snprintf(d->hb_name[slot], sizeof d->hb_name[slot], "%s", name);
    atomic_store(&d->hb_ms[slot], clock_mono_ms());
    atomic_store(&d->nhb, slot + 1); /* publishes the name written above */
    pthread_mutex_unlock(&d->hb_mu);
    return slot;
}

void drain_heartbeat_beat(drain_t *d, int slot)
{
    if (slot >= 0 && slot < DRAIN_MAX_HEARTBEATS)
        atomic_store_explicit(&d->hb_ms[slot], clock_mono_ms(), memory_order_relaxed);
}

/* ---- HTTP thread ---- */

/* Whether a peer may use /drain*: loopback by default, else exactly the allow-list. */
static bool drain_peer_allowed(const drain_t *d, const struct sockaddr *sa)
{
    if (sa == NULL)
        return false;
    unsigned char v4[4];
    bool is_v4 = false;
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
    if (sa->sa_family == AF_INET) {
        memcpy(v4, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        is_v4 = true;
    } else if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
        memcpy(v4, s6->sin6_addr.s6_addr + 12, 4);
        is_v4 = true;
    } else if (sa->sa_family != AF_INET6) {
        return false;
    }
    if (d->nallow == 0)
        return is_v4 ? v4[0] == 127 : IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
    for (int i = 0; i < d->nallow; i++) {
        if (is_v4 && d->allow[i].family == AF_INET && memcmp(d->allow[i].addr, v4, 4) == 0)
            return true;
        if (!is_v4 && d->allow[i].family == AF_INET6 &&
            memcmp(d->allow[i].addr, s6->sin6_addr.s6_addr, 16) == 0)
            return true;
    }
    return false;
}

static void drain_reply(struct evhttp_request *req, int code, const char *reason, const char *ctype,
                        const char *body, size_t len)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", ctype);
    evhttp_add_header(h, "Cache-Control", "no-store");
    struct evbuffer *b = evbuffer_new();
    if (b != NULL)
        evbuffer_add(b, body, len);
    evhttp_send_reply(req, code, reason, b);
    if (b != NULL)
        evbuffer_free(b);
}

static void drain_reply_text(struct evhttp_request *req, int code, const char *reason,
                             const char *text)
{
    drain_reply(req, code, reason, "text/plain; charset=utf-8", text, strlen(text));
}

static void drain_reply_status(drain_t *d, struct evhttp_request *req)
{
    char buf[192];
    int n = drain_status_json(d, buf, sizeof buf);
    if (n < 0)
        drain_reply_text(req, 500, "Internal Server Error", "status too long\n");
    else
        drain_reply(req, 200, "OK", "application/json", buf, (size_t)n);
}

/* Answers one waiter with the current status and frees it (HTTP thread). */
static void drain_waiter_finish(drain_waiter_t *w)
{
    drain_t *d = w->d;
    TAILQ_REMOVE(&d->waiters, w, _link);
    atomic_fetch_sub(&d->nwaiters, 1);
    event_free(w->timer);
    drain_reply_status(d, w->req);
    free(w);
    if (TAILQ_EMPTY(&d->waiters))
        evtimer_del(d->recheck_ev);
}

/* Answers every waiter if human_desks has reached 0 (or the server is stopping). */
static void drain_waiters_check(drain_t *d)
{
    if (TAILQ_EMPTY(&d->waiters))
        return;
    if (!d->stopping && d->cfg.human_desks(d->cfg.ctx) != 0)
        return;
    drain_waiter_t *w;
    while ((w = TAILQ_FIRST(&d->waiters)) != NULL)
        drain_waiter_finish(w);
}

static void drain_waiter_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drain_waiter_finish(arg);
}

static void drain_notify_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drain_waiters_check(arg);
}

/* Stops the loop after answering the waiters, leaving 100 ms for the answers to flush. */
static void drain_stop_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drain_t *d = arg;
    d->stopping = true;
    drain_waiters_check(d);
    struct timeval tv = {0, 100000};
    event_base_loopexit(d->base, &tv);
}

/*
 * /drain/wait?timeout=S: answers at once when human_desks is already 0, otherwise parks the
 * request until drain_notify (or the re-check timer) sees 0, or S seconds pass. S defaults to
 * drain_max_seconds and may have a fraction; anything else is a 400.
 */
static void drain_handle_wait(drain_t *d, struct evhttp_request *req, const struct evhttp_uri *uri)
{
    double timeout = d->cfg.drain_max_seconds;
    const char *query = evhttp_uri_get_query(uri);
    if (query != NULL) {
        struct evkeyvalq q;
        TAILQ_INIT(&q);
        if (evhttp_parse_query_str(query, &q) != 0) {
            drain_reply_text(req, 400, "Bad Request", "bad query\n");
            return;
        }
        const char *t = evhttp_find_header(&q, "timeout");
        bool bad = false;
        if (t != NULL) {
            char *end = NULL;
            errno = 0;
            timeout = strtod(t, &end);
            bad = t[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(timeout) || timeout < 0 ||
                  timeout > DRAIN_MAX_WAIT_SECONDS;
        }
        evhttp_clear_headers(&q);
        if (bad) {
            drain_reply_text(req, 400, "Bad Request", "timeout must be seconds in [0, 86400]\n");
            return;
        }
    }
    if (d->cfg.human_desks(d->cfg.ctx) == 0 || timeout == 0) {
        drain_reply_status(d, req);
        return;
    }
    if (atomic_load(&d->nwaiters) >= DRAIN_MAX_WAITERS) {
        drain_reply_text(req, 503, "Service Unavailable", "too many waiters\n");
        return;
    }
    drain_waiter_t *w = xcalloc(1, sizeof *w);
    w->req = req;
    w->d = d;
    w->timer = evtimer_new(d->base, drain_waiter_timeout_cb, w);
    if (w->timer == NULL) {
        free(w);
        drain_reply_text(req, 500, "Internal Server Error", "no timer\n");
        return;
    }
    /* The connection's own idle timeout must not cut the long poll short. */
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    if (evcon != NULL)
        evhttp_connection_set_timeout(evcon, (int)ceil(timeout) + d->cfg.http_timeout_s);
    struct timeval tv = {(time_t)timeout, (suseconds_t)((timeout - floor(timeout)) * 1e6)};
    evtimer_add(w->timer, &tv);
    TAILQ_INSERT_TAIL(&d->waiters, w, _link);
    atomic_fetch_add(&d->nwaiters, 1);
    if (!evtimer_pending(d->recheck_ev, NULL)) {
        struct timeval rv = {d->cfg.recheck_ms / 1000, (d->cfg.recheck_ms % 1000) * 1000};
        evtimer_add(d->recheck_ev, &rv);
    }
    /* human_desks may have reached 0 between the check above and now: check again. */
    drain_waiters_check(d);
}

static void drain_handle_healthz(drain_t *d, struct evhttp_request *req)
{
    if (d->cfg.alive != NULL && !d->cfg.alive(d->cfg.ctx)) {
        drain_reply_text(req, 503, "Service Unavailable", "not alive\n");
        return;
    }
    int n = atomic_load(&d->nhb);
    int64_t now = clock_mono_ms();
    for (int i = 0; i < n; i++) {
        int64_t age = now - atomic_load_explicit(&d->hb_ms[i], memory_order_relaxed);
        if (age > d->cfg.heartbeat_max_age_ms) {
            char msg[96];
            snprintf(msg, sizeof msg, "stale heartbeat %s age_ms=%lld\n", d->hb_name[i],
                     (long long)age);
            drain_reply_text(req, 503, "Service Unavailable", msg);
            return;
        }
    }
    drain_reply_text(req, 200, "OK", "ok\n");
}

static void drain_handle_readyz(drain_t *d, struct evhttp_request *req)
{
    if (drain_is_draining(d))
        drain_reply_text(req, 503, "Service Unavailable", "draining\n");
    else if (!d->cfg.ready(d->cfg.ctx))
        drain_reply_text(req, 503, "Service Unavailable", "not ready\n");
    else
        drain_reply_text(req, 200, "OK", "ready\n");
}

static void drain_handle_metrics(drain_t *d, struct evhttp_request *req)
{
    char buf[192];
    drain_status_json(d, buf, sizeof buf); /* refreshes the gauges */
    size_t len = 0;
    char *text = metrics_render(d->reg, &len);
    drain_reply(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", text, len);
    free(text);
}

/*
 * POST /admin/drain: the operator's drain (croupier-ctl drain, docs/ops.md). Any peer may ask,
 * but only with "Authorization: Bearer <token>" that cfg.admin_auth accepts; every attempt,
 * refused or not, leaves one audit line (admin_drain / admin_drain_refused) with the peer.
 */
static void drain_handle_admin_drain(drain_t *d, struct evhttp_request *req)
{
    char peer[INET6_ADDRSTRLEN + 8] = "?";
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    if (evcon != NULL) {
        char *host = NULL;
        ev_uint16_t port = 0;
        evhttp_connection_get_peer(evcon, &host, &port);
        if (host != NULL)
            snprintf(peer, sizeof peer, "%s:%u", host, (unsigned)port);
    }
    const char *auth = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    const char *token = NULL;
    if (auth != NULL && strncmp(auth, "Bearer ", 7) == 0 && auth[7] != '\0')
        token = auth + 7;
    char who[64] = "";
    const char *why = "no bearer token";
    if (token == NULL || d->cfg.admin_auth(d->cfg.ctx, token, who, sizeof who, &why) != 0) {
        log_emit(LOG_WARN, "admin_drain_refused", "{s:s,s:s}", "peer", peer, "reason",
                 why != NULL ? why : "refused");
        if (token == NULL) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", "Bearer");
            drain_reply_text(req, 401, "Unauthorized", "admin token required\n");
        } else {
            drain_reply_text(req, 403, "Forbidden", "admin token refused\n");
        }
        return;
    }
    int started = drain_start(d);
    log_emit(LOG_WARN, "admin_drain", "{s:s,s:s,s:b}", "operator", who, "peer", peer, "started",
             started == 1);
    drain_reply_status(d, req);
}

enum { R_NONE, R_HEALTHZ, R_READYZ, R_DRAIN, R_STATUS, R_WAIT, R_METRICS, R_ADMIN_DRAIN };

/*
 * Every request lands here: route on the decoded path (query ignored), then the allow-list for
 * /drain*, then GET-only. Unknown paths are 404, other methods 405 with "Allow: GET".
 */
static void drain_conn_request_done(drain_t *d, struct evhttp_connection *evcon);

static void drain_http_cb(struct evhttp_request *req, void *arg)
{
    drain_t *d = arg;
    drain_conn_request_done(d, evhttp_request_get_connection(req));
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *raw = uri ? evhttp_uri_get_path(uri) : NULL;
    char *path = raw ? evhttp_uridecode(raw, 0, NULL) : NULL;
    int route = R_NONE;
    if (path != NULL) {
        if (strcmp(path, "/healthz") == 0)
            route = R_HEALTHZ;
        else if (strcmp(path, "/readyz") == 0)
            route = R_READYZ;
        else if (strcmp(path, "/drain") == 0)
            route = R_DRAIN;
        else if (strcmp(path, "/drain/status") == 0)
            route = R_STATUS;
        else if (strcmp(path, "/drain/wait") == 0)
            route = R_WAIT;
        else if (strcmp(path, "/metrics") == 0)
            route = R_METRICS;
        else if (strcmp(path, "/admin/drain") == 0 && d->cfg.admin_auth != NULL)
            route = R_ADMIN_DRAIN;
    }
    free(path);
    if (route == R_NONE) {
        drain_reply_text(req, 404, "Not Found", "not found\n");
        return;
    }
    if (route == R_DRAIN || route == R_STATUS || route == R_WAIT) {
        struct evhttp_connection *evcon = evhttp_request_get_connection(req);
        const struct sockaddr *sa = evcon ? evhttp_connection_get_addr(evcon) : NULL;
        if (!drain_peer_allowed(d, sa)) {
            drain_reply_text(req, 403, "Forbidden", "drain endpoints answer loopback only\n");
            return;
        }
    }
    if (route == R_ADMIN_DRAIN) { /* not the allow-list: the token decides */
        if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
            evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
            drain_reply_text(req, 405, "Method Not Allowed", "POST only\n");
            return;
        }
        drain_handle_admin_drain(d, req);
        return;
    }
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET");
        drain_reply_text(req, 405, "Method Not Allowed", "GET only\n");
        return;
    }
    switch (route) {
    case R_HEALTHZ:
        drain_handle_healthz(d, req);
        break;
    case R_READYZ:
        drain_handle_readyz(d, req);
        break;
    case R_DRAIN:
        drain_start(d);
        drain_reply_status(d, req);
        break;
    case R_STATUS:
        drain_reply_status(d, req);
        break;
    case R_WAIT:
        drain_handle_wait(d, req, uri);
        break;
    default:
        drain_handle_metrics(d, req);
        break;
    }
}

/* ---- health connections: deadlines and cap ---- */

/* Whether the log line of a cause is due (at most one per DRAIN_NOTE_MS): the lines skipped
 * since the last one (>= 0), or -1 when not due. HTTP thread. */
static long drain_note(drain_t *d, int cause, int64_t now)
{
    if (d->note[cause].last_ms != 0 && now - d->note[cause].last_ms < DRAIN_NOTE_MS) {
        d->note[cause].skipped++;
        return -1;
    }
    long skipped = d->note[cause].skipped;
    d->note[cause].last_ms = now;
    d->note[cause].skipped = 0;
    return skipped;
}

/* Arms (ms > 0) or stops (ms <= 0) the connection's deadline timer. */
static void drain_conn_arm(drain_conn_t *dc, int ms)
{
    if (ms <= 0) {
        event_del(dc->ev);
        return;
    }
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_add(dc->ev, &tv);
}

/* Unlinks and frees the record; the bufferevent is evhttp's (or being freed by it). */
static void drain_conn_forget(drain_conn_t *dc)
{
    drain_t *d = dc->d;
    if (dc->in_cb != NULL)
        evbuffer_remove_cb_entry(bufferevent_get_input(dc->bev), dc->in_cb);
    TAILQ_REMOVE(&d->conns, dc, _link);
    d->nconns--;
    metrics_add(d->m_http_conns, -1);
    event_free(dc->ev);
    free(dc);
}

/*
 * Feeds n bytes of the request being read from position off of buf to the header-end finder:
 * the first empty line (LF or CRLF after a LF) ends the headers, and the body deadline starts.
 */
static void drain_conn_scan(drain_conn_t *dc, struct evbuffer *buf, size_t off, size_t n)
{
    if (dc->headers_ms != 0 || n == 0)
        return;
    struct evbuffer_ptr at;
    if (evbuffer_ptr_set(buf, &at, off, EVBUFFER_PTR_SET) != 0)
        return;
    struct evbuffer_iovec v[8];
    while (n > 0 && dc->headers_ms == 0) {
        int nv = evbuffer_peek(buf, (ev_ssize_t)n, &at, v, 8);
        if (nv <= 0)
            return;
        size_t seen = 0;
        for (int i = 0; i < nv && i < 8 && seen < n && dc->headers_ms == 0; i++) {
            const unsigned char *p = v[i].iov_base;
            size_t len = v[i].iov_len < n - seen ? v[i].iov_len : n - seen;
            for (size_t k = 0; k < len; k++) {
                if (p[k] == '\n') {
                    if (dc->line_len == 0) {
                        dc->headers_ms = clock_mono_ms();
                        drain_conn_arm(dc, dc->d->cfg.body_timeout_ms);
                        return;
                    }
                    dc->line_len = 0;
                } else if (p[k] != '\r') {
                    dc->line_len++;
                }
            }
            seen += len;
        }
        n -= seen;
        if (n > 0 && evbuffer_ptr_set(buf, &at, seen, EVBUFFER_PTR_ADD) != 0)
            return;
    }
}

/* Bytes read on a health connection: a request begins (the header deadline starts) and its
 * headers are searched for their end. */
static void drain_conn_input_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
                                void *arg)
{
    drain_conn_t *dc = arg;
    if (info->n_added == 0)
        return;
    if (dc->start_ms == 0) {
        dc->start_ms = clock_mono_ms();
        dc->headers_ms = 0;
        dc->line_len = 0;
        if (dc->evcon != NULL)
            drain_conn_arm(dc, dc->d->cfg.header_timeout_ms);
    }
    size_t len = evbuffer_get_length(buf);
    drain_conn_scan(dc, buf, len - info->n_added, info->n_added);
}

/*
 * The handler got a whole request on evcon (drain_http_cb): its deadlines end. Bytes already
 * read past it begin the next request.
 */
static void drain_conn_request_done(drain_t *d, struct evhttp_connection *evcon)
{
    drain_conn_t *dc;
    TAILQ_FOREACH(dc, &d->conns, _link)
    {
        if (dc->evcon != evcon)
            continue;
        dc->start_ms = dc->headers_ms = 0;
        dc->line_len = 0;
        drain_conn_arm(dc, 0);
        struct evbuffer *in = bufferevent_get_input(dc->bev);
        size_t left = evbuffer_get_length(in);
        if (left > 0) {
            dc->start_ms = clock_mono_ms();
            drain_conn_arm(dc, d->cfg.header_timeout_ms);
            drain_conn_scan(dc, in, 0, left);
        }
        return;
    }
}

/* evhttp frees the connection: the record goes with it. */
static void drain_conn_closed_cb(struct evhttp_connection *evcon, void *arg)
{
    (void)evcon;
    drain_conn_forget(arg);
}

/* A connection over max_conns: a 503 written straight to the socket (it is evhttp's, and
 * evhttp is not writing), the request read so far dropped, then evhttp's close (FIN). */
static void drain_conn_refuse(drain_conn_t *dc)
{
    drain_t *d = dc->d;
    static const char resp[] = "HTTP/1.1 503 Service Unavailable\r\n"
                               "Content-Type: text/plain\r\n"
                               "Connection: close\r\n"
                               "Content-Length: 29\r\n\r\n"
                               "too many health connections\r\n";
    metrics_add(d->m_http_refused, 1);
    long skipped = drain_note(d, DRAIN_NOTE_REFUSED, clock_mono_ms());
    if (skipped >= 0)
        log_emit(LOG_WARN, "health_conn_refused", "{s:i,s:i,s:I}", "connections", d->nconns,
                 "max_conns", d->cfg.max_conns, "skipped_since_last", (json_int_t)skipped);
    evutil_socket_t fd = bufferevent_getfd(dc->bev);
    if (fd >= 0) {
        char sink[4096];
        for (int i = 0; i < 4 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
            ;
        ssize_t w = send(fd, resp, sizeof resp - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)w; /* a full socket buffer: the client gets the close alone */
    }
    evhttp_connection_free(dc->evcon); /* calls drain_conn_closed_cb */
}

/*
 * At max_conns a new connection takes the place of the one whose request has been read the
 * longest (a connection that sent nothing counts from its accept): under a flood of slow
 * requests the probes and scrapes still get through, and the slowest goes first. Connections
 * between requests (a response being written, a /drain/wait long poll parked, a kept-alive
 * connection waiting) are never taken: evhttp's own timeout bounds those. Returns true when one
 * was closed.
 */
static bool drain_conn_evict(drain_t *d, const drain_conn_t *except)
{
    drain_conn_t *victim = NULL, *dc;
    TAILQ_FOREACH(dc, &d->conns, _link)
    {
        if (dc != except && dc->evcon != NULL && !dc->refused && dc->start_ms != 0 &&
            (victim == NULL || dc->start_ms < victim->start_ms))
            victim = dc;
    }
    if (victim == NULL)
        return false;
    int64_t now = clock_mono_ms();
    metrics_add(d->m_http_evicted, 1);
    long skipped = drain_note(d, DRAIN_NOTE_EVICTED, now);
    if (skipped >= 0)
        log_emit(LOG_WARN, "health_conn_evicted", "{s:i,s:I,s:b,s:I}", "max_conns",
                 d->cfg.max_conns, "request_ms", (json_int_t)(now - victim->start_ms),
                 "headers_done", victim->headers_ms != 0, "skipped_since_last",
                 (json_int_t)skipped);
    evhttp_connection_free(victim->evcon); /* calls drain_conn_closed_cb */
    return true;
}

/*
 * The connection's event: first (activated by drain_conn_bev, before any byte of it is read)
 * it picks up the evhttp connection evhttp made around the bufferevent, then it is the deadline
 * timer: headers or body not complete in time close the connection.
 */
static void drain_conn_ev_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drain_conn_t *dc = arg;
    drain_t *d = dc->d;
    if (dc->evcon == NULL) {
        void *cbarg = NULL;
        bufferevent_getcb(dc->bev, NULL, NULL, NULL, &cbarg);
        if (cbarg == NULL) {
            /* evhttp gave the connection up already: the reference taken in drain_conn_bev
             * is the last one. */
            struct bufferevent *bev = dc->bev;
            drain_conn_forget(dc);
            bufferevent_decref(bev);
            return;
        }
        dc->evcon = cbarg;
        evhttp_connection_set_closecb(dc->evcon, drain_conn_closed_cb, dc);
        bufferevent_decref(dc->bev); /* evhttp's own reference keeps it from now on */
        if (dc->refused) {
            if (!drain_conn_evict(d, dc)) {
                drain_conn_refuse(dc);
                return;
            }
            dc->refused = false;
        }
        if (dc->headers_ms == 0)
            drain_conn_arm(dc, d->cfg.header_timeout_ms);
        return;
    }
    if (dc->start_ms == 0)
        return;
    int phase = dc->headers_ms == 0 ? DRAIN_NOTE_HEADERS : DRAIN_NOTE_BODY;
    int64_t now = clock_mono_ms();
    int limit = phase == DRAIN_NOTE_HEADERS ? d->cfg.header_timeout_ms : d->cfg.body_timeout_ms;
    int64_t left = (phase == DRAIN_NOTE_HEADERS ? dc->start_ms : dc->headers_ms) + limit - now;
    if (left > 0) {
        /* The timer ran early by the event loop's clock (it was armed after its origin, or
         * libevent's cached time lags): wait out the rest. */
        drain_conn_arm(dc, (int)left);
        return;
    }
    metrics_add(d->m_http_timeouts[phase], 1);
    long skipped = drain_note(d, phase, now);
    if (skipped >= 0) {
        char *host = NULL;
        ev_uint16_t port = 0;
        evhttp_connection_get_peer(dc->evcon, &host, &port);
        log_emit(LOG_WARN, "health_request_timeout", "{s:s,s:s,s:I,s:i,s:I}", "phase",
                 phase == DRAIN_NOTE_HEADERS ? "headers" : "body", "peer",
                 host != NULL ? host : "?", "elapsed_ms", (json_int_t)(now - dc->start_ms),
                 "limit_ms", limit, "skipped_since_last", (json_int_t)skipped);
    }
    evhttp_connection_free(dc->evcon); /* calls drain_conn_closed_cb */
}

/*
 * The bufferevent of each accepted connection, and its record (drain_conn_t). libevent 2.1's
 * evhttp otherwise makes one that
 * does not own the descriptor and closes the descriptor itself in evhttp_connection_free(),
 * while the bufferevent, still referenced by the callback that freed the connection, has not
 * yet taken it out of epoll: every connection the server closed (HTTP/1.0, errors, resets)
 * ended with an EPOLL_CTL_DEL on a closed number that another thread may have been given in
 * between. A bufferevent that owns the descriptor closes it from its finalizer, after its
 * events are gone; evhttp then skips its own close (evhttp_connection_reset_() still closes
 * and clears the descriptor first, so it is never closed twice).
 *
 * evhttp 2.1 has no hook between the accept and the first read that names the connection, and
 * its timeout restarts with every byte (a slowloris never meets it). So the record is made here,
 * holding a reference on the bufferevent (evhttp may free its connection before the record
 * learns of it), and an event activated now runs before any read of the new socket: it takes
 * the evhttp connection from the bufferevent's callback argument, sets the close callback that
 * frees the record, and drops the reference. Over max_conns the record is marked refused: it
 * takes a slow request's place (drain_conn_evict) or gets a 503.
 */
static struct bufferevent *drain_conn_bev(struct event_base *base, void *arg)
{
    drain_t *d = arg;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL)
        return NULL;
    drain_conn_t *dc = xcalloc(1, sizeof *dc);
    dc->d = d;
    dc->bev = bev;
    dc->ev = event_new(base, -1, 0, drain_conn_ev_cb, dc);
    if (dc->ev == NULL) {
        free(dc);
        return bev; /* served, without the deadlines: evhttp's timeout alone */
    }
    dc->in_cb = evbuffer_add_cb(bufferevent_get_input(bev), drain_conn_input_cb, dc);
    dc->start_ms = clock_mono_ms();
    bufferevent_incref(bev);
    TAILQ_INSERT_TAIL(&d->conns, dc, _link);
    d->nconns++;
    metrics_add(d->m_http_conns, 1);
    dc->refused = d->nconns > d->cfg.max_conns;
    event_active(dc->ev, EV_TIMEOUT, 0);
    return bev;
}

/* Creates the base, events and evhttp on the HTTP thread and binds. Returns 0 or -errno. */
static int drain_http_setup(drain_t *d)
{
    int rc = -ENOMEM;
    d->base = event_base_new();
    if (d->base == NULL)
        goto fail_base;
    struct event *nev = event_new(d->base, -1, EV_PERSIST, drain_notify_cb, d);
    d->stop_ev = event_new(d->base, -1, 0, drain_stop_cb, d);
    d->recheck_ev = event_new(d->base, -1, EV_PERSIST, drain_notify_cb, d);
    if (nev == NULL || d->stop_ev == NULL || d->recheck_ev == NULL)
        goto fail_events;
    atomic_store(&d->notify_ev, nev);
    d->http = evhttp_new(d->base);
    if (d->http == NULL)
        goto fail_events;
    evhttp_set_timeout(d->http, d->cfg.http_timeout_s);
    evhttp_set_max_headers_size(d->http, 8192);
    evhttp_set_max_body_size(d->http, 4096);
    evhttp_set_allowed_methods(d->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                            EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                            EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
                                            EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
    evhttp_set_gencb(d->http, drain_http_cb, d);
    evhttp_set_bevcb(d->http, drain_conn_bev, d);
    struct evhttp_bound_socket *bs =
        evhttp_bind_socket_with_handle(d->http, d->cfg.listen.host, (uint16_t)d->cfg.listen.port);
    if (bs == NULL) {
        rc = errno ? -errno : -EADDRINUSE;
        goto fail_bind;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &sl) != 0) {
        rc = -errno;
        goto fail_bind;
    }
    d->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    return 0;

fail_bind:
    evhttp_free(d->http);
    d->http = NULL;
fail_events:
    nev = atomic_exchange(&d->notify_ev, NULL);
    if (nev != NULL)
        event_free(nev);
    if (d->stop_ev != NULL)
        event_free(d->stop_ev);
    if (d->recheck_ev != NULL)
        event_free(d->recheck_ev);
    d->stop_ev = d->recheck_ev = NULL;
    event_base_free(d->base);
    d->base = NULL;
fail_base:
    return rc;
}

/* The HTTP thread: set up, report, serve until stopped, then free everything evhttp. */
static void *drain_thread_main(void *arg)
{
    drain_t *d = arg;
    int rc = drain_http_setup(d);
    pthread_mutex_lock(&d->mu);
    d->serve_rc = rc;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    if (rc != 0)
        return NULL;
    event_base_loop(d->base, EVLOOP_NO_EXIT_ON_EMPTY);
    d->stopping = true;
    drain_waiters_check(d);
    evhttp_free(d->http); /* closes every connection: their records go with them */
    d->http = NULL;
    drain_conn_t *dc;
    while ((dc = TAILQ_FIRST(&d->conns)) != NULL) {
        /* Accepted in the loop's last pass, before their first run: still referenced here. */
        struct bufferevent *bev = dc->evcon == NULL ? dc->bev : NULL;
        if (bev == NULL)
            dc->in_cb = NULL;
        drain_conn_forget(dc);
        if (bev != NULL)
            bufferevent_decref(bev);
    }
    event_free(atomic_exchange(&d->notify_ev, NULL));
    event_free(d->stop_ev);
    event_free(d->recheck_ev);
    event_base_free(d->base);
    d->base = NULL;
    return NULL;
}

/*
 * Starts the HTTP thread and waits for its setup result, so the caller learns about a port
 * already in use here rather than from a silent thread.
 */
int drain_serve(drain_t *d)
{
    if (d->thread_started)
        return -EALREADY;
    evthreads_enable();
    d->serve_rc = 1;
    int rc = pthread_create(&d->thread, NULL, drain_thread_main, d);
    if (rc != 0)
        return -rc;
    pthread_mutex_lock(&d->mu);
    while (d->serve_rc == 1)
        pthread_cond_wait(&d->cv, &d->mu);
    rc = d->serve_rc;
    pthread_mutex_unlock(&d->mu);
    if (rc != 0) {
        pthread_join(d->thread, NULL);
        d->port = -1;
        log_emit(LOG_ERROR, "health_listen_failed", "{s:s,s:i,s:s}", "host", d->cfg.listen.host,
                 "port", d->cfg.listen.port, "error", strerror(-rc));
        return rc;
    }
    d->thread_started = true;
    log_emit(LOG_INFO, "health_listening", "{s:s,s:i}", "host", d->cfg.listen.host, "port",
             d->port);
    return 0;
}

void drain_destroy(drain_t *d)
{
    if (d == NULL)
        return;
    if (d->thread_started) {
        event_active(d->stop_ev, EV_READ, 0);
        pthread_join(d->thread, NULL);
    }
    pthread_mutex_destroy(&d->watch_mu);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->hb_mu);
    if (d->own_reg)
        metrics_destroy(d->reg);
    free(d);
}
