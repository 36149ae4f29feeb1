#include "money_writer.h"

#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "xmalloc.h"

/* One queued operation: its Redis command, already in protocol form, and its completion. */
typedef struct money_item {
    struct money_item *next;
    money_kind_t kind;
    char *cmd; /* the whole command (not for settlements) */
    size_t len;
    money_settle_parts_t parts; /* settlements: keys and arguments, joined into batches */
    size_t batch;               /* items answered by this item's command (first of a batch) */
    char id[MONEY_ID_MAX + 1];
    money_writer_done_cb done;
    void *arg;
    int64_t submitted_ns;
    int64_t sent_ns;
    int sends;
} money_item_t;

/* A FIFO of items linked through next. */
typedef struct {
    money_item_t *head;
    money_item_t **tail;
    size_t n;
} money_list_t;

typedef enum {
    WRITER_DOWN,       /* no connection; a reconnect timer is armed */
    WRITER_CONNECTING, /* TCP connect in progress */
    WRITER_LOADING,    /* SCRIPT LOAD sent, waiting for the replies */
    WRITER_READY,      /* items flow */
} money_writer_state_t;

struct money_writer {
    money_writer_config_t cfg; /* strings below are owned copies */
    char *host;
    char *service;

    /* Shared with producers (under mu unless atomic). */
    pthread_mutex_t mu;
    pthread_cond_t drained; /* broadcast when depth reaches 0 */
    money_list_t queue;
    bool stopping;
    _Atomic size_t depth;
    _Atomic uint64_t completed;
    _Atomic bool wake_pending;
    _Atomic int64_t oldest_ns; /* submit time of the oldest item, 0 when none */
    _Atomic bool connected;

    /* Writer thread only. */
    pthread_t thread;
    struct event_base *base;
    struct event *wake_ev;
    struct event *tick_ev;
    struct event *retry_ev;
    redisAsyncContext *ac;
    money_writer_state_t state;
    int64_t state_since_ns;
    int64_t last_reply_ns;
    int loads_pending;
    int backoff_ms;
    unsigned int seed;
    money_list_t pending; /* taken from the queue, not yet sent (front = oldest) */
    money_list_t flight;  /* sent, awaiting replies, in send order */

    metrics_registry_t *own_metrics;
    metrics_t *m_depth, *m_oldest, *m_latency, *m_retries, *m_reconnects;
    metrics_t *m_items[5][2]; /* [kind][0 ok, 1 error] */
};

static void list_init(money_list_t *l)
{
    l->head = NULL;
    l->tail = &l->head;
    l->n = 0;
}

static void list_push(money_list_t *l, money_item_t *it)
{
    it->next = NULL;
    *l->tail = it;
    l->tail = &it->next;
    l->n++;
}

static money_item_t *list_pop(money_list_t *l)
{
    money_item_t *it = l->head;
    if (it == NULL)
        return NULL;
    l->head = it->next;
    if (l->head == NULL)
        l->tail = &l->head;
    l->n--;
    it->next = NULL;
    return it;
}

/* Moves all of src to the end of dst, leaving src empty. */
static void list_append(money_list_t *dst, money_list_t *src)
{
    if (src->head == NULL)
        return;
    *dst->tail = src->head;
    dst->tail = src->tail;
    dst->n += src->n;
    list_init(src);
}

/* Moves all of src in front of dst, leaving src empty. */
static void list_prepend(money_list_t *dst, money_list_t *src)
{
    if (src->head == NULL)
        return;
    list_append(src, dst);
    *dst = *src;
    if (dst->head == NULL)
        dst->tail = &dst->head;
    list_init(src);
}

static const char *const kind_names[5] = {"none", "settle", "history", "buyin", "cashout"};

static void writer_item_free(money_item_t *it)
{
    if (it == NULL)
        return;
    free(it->cmd);
    free(it->parts.buf);
    free(it);
}

/*
 * Delivers the final result of an item to its done callback (on the calling thread), updates
 * the metrics and the depth, and frees the item. Wakes a flusher when the depth reaches 0.
 */
static void writer_complete(money_writer_t *w, money_item_t *it, money_result_t *r)
{
    r->kind = it->kind;
    r->arg = it->arg;
    snprintf(r->id, sizeof r->id, "%s", it->id);
    metrics_add(w->m_items[it->kind][r->status == MONEY_OK ? 0 : 1], 1);
    if (r->status == -ECANCELED) {
        /* Never written: log the keys and arguments (Redis protocol text) so that an operator
         * can replay the exact operation; the scripts make a replay harmless. */
        const char *data = it->parts.buf ? it->parts.buf : it->cmd;
        size_t len = it->parts.buf ? it->parts.keys_len + it->parts.args_len : it->len;
        log_emit(LOG_ERROR, "money_item_failed", "{s:s,s:s,s:i,s:s,s:s#}", "kind",
                 kind_names[it->kind], "id", it->id, "status", r->status, "error", r->error,
                 "command", data ? data : "", data ? len : 0);
    } else if (r->status != MONEY_OK) {
        log_emit(LOG_WARN, "money_item_failed", "{s:s,s:s,s:i,s:s}", "kind", kind_names[it->kind],
                 "id", it->id, "status", r->status, "error",
                 r->error[0] ? r->error : money_strerror(r->status));
    }
    if (it->done != NULL) {
        money_result_t *copy = xmalloc(sizeof *copy);
        memcpy(copy, r, sizeof *copy);
        it->done(copy, it->arg);
    }
    writer_item_free(it);
    atomic_fetch_add(&w->completed, 1);
    size_t left = atomic_fetch_sub(&w->depth, 1) - 1;
    metrics_add(w->m_depth, -1);
    if (left == 0) {
        pthread_mutex_lock(&w->mu);
        atomic_store(&w->oldest_ns, 0);
        pthread_cond_broadcast(&w->drained);
        pthread_mutex_unlock(&w->mu);
    }
}

static void writer_connect(money_writer_t *w);
static void writer_pump(money_writer_t *w);

/* Arms the reconnect timer with exponential backoff and jitter (half to full delay). */
static void writer_schedule_reconnect(money_writer_t *w)
{
    int ms = w->backoff_ms / 2 + (int)(rand_r(&w->seed) % (unsigned)(w->backoff_ms / 2 + 1));
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(w->retry_ev, &tv);
    w->backoff_ms =
        w->backoff_ms * 2 > w->cfg.backoff_max_ms ? w->cfg.backoff_max_ms : w->backoff_ms * 2;
}

/*
 * The connection is gone (or declared dead): every unanswered item goes back to the head of
 * the pending list in its original order, to be sent again after a reconnect. Redis may still
 * execute copies already in its socket buffer; the scripts' idempotency makes that harmless,
 * and order is kept because each connection carries items in FIFO order. When free_ctx is set
 * the context is freed here (deferred by hiredis when called from one of its callbacks).
 */
static void writer_conn_lost(money_writer_t *w, const char *reason, bool free_ctx)
{
    redisAsyncContext *ac = w->ac;
    w->ac = NULL;
    atomic_store(&w->connected, false);
    size_t requeued = w->flight.n;
    list_prepend(&w->pending, &w->flight);
    if (w->state != WRITER_DOWN)
        log_emit(LOG_WARN, "money_writer_disconnected", "{s:s,s:I,s:I}", "reason", reason,
                 "requeued", (json_int_t)requeued, "pending", (json_int_t)w->pending.n);
    w->state = WRITER_DOWN;
    w->state_since_ns = clock_mono_ns();
    metrics_add(w->m_reconnects, 1);
    if (free_ctx && ac != NULL)
        redisAsyncFree(ac);
    writer_schedule_reconnect(w);
}

/*
 * Reply to one command: a single item, or a batch of settlements whose first item is it.
 * Commands are answered in send order, so it must be the flight's head.
 */
static void writer_reply_cb(redisAsyncContext *ac, void *reply, void *privdata)
{
    money_writer_t *w = ac->data;
    money_item_t *it = privdata;
    redisReply *r = reply;
    if (r == NULL || ac != w->ac)
        return; /* the connection was dropped; writer_conn_lost requeued the items */
    if (w->flight.head != it || w->flight.n < it->batch) {
        writer_conn_lost(w, "reply out of order", true);
        return;
    }
    int64_t now = clock_mono_ns();
    w->last_reply_ns = now;
    size_t n = it->batch;
    money_result_t res;
    memset(&res, 0, sizeof res);
    bool per_entry = it->kind == MONEY_KIND_SETTLE && r->type == REDIS_REPLY_ARRAY;
    if (!per_entry && money_reply_parse(it->kind, r, &res) == MONEY_REPLY_RETRY) {
        /* Server-wide states (NOSCRIPT after a flush, LOADING, BUSY, READONLY after a failover)
         * fail every later command of the pipeline too: start over on a fresh connection. */
        log_emit(LOG_WARN, "money_writer_transient", "{s:s}", "error", res.error);
        writer_conn_lost(w, res.error, true);
        return;
    }
    if (per_entry && r->elements != n) {
        per_entry = false;
        res.status = MONEY_ERR_REDIS;
        snprintf(res.error, sizeof res.error, "batch reply has %zu entries for %zu rounds",
                 r->elements, n);
    }
    for (size_t i = 0; i < n; i++) {
        money_item_t *x = list_pop(&w->flight);
        if (per_entry) {
            memset(&res, 0, sizeof res);
            money_reply_parse_entry(x->kind, r->element[i], &res);
        }
        metrics_observe(w->m_latency, (double)(now - x->sent_ns) / 1e9);
        money_result_t copy = res;
        writer_complete(w, x, &copy);
    }
    writer_pump(w);
}

/*
 * Sends pending items while there is room in flight. Consecutive settlements travel together
 * in one EVALSHA (up to batch_max), which keeps their order and amortises the per-call cost.
 */
static void writer_pump(money_writer_t *w)
{
    if (w->state != WRITER_READY)
        return;
    const money_settle_parts_t *parts[MONEY_WRITER_BATCH_CAP];
    while (w->flight.n < w->cfg.max_inflight && w->pending.head != NULL) {
        money_item_t *it = w->pending.head;
        const char *cmd = it->cmd;
        size_t len = it->len, n = 1;
        char *owned = NULL;
        if (it->kind == MONEY_KIND_SETTLE) {
            size_t room = w->cfg.max_inflight - w->flight.n;
            n = 0;
            for (money_item_t *x = it;
                 x != NULL && x->kind == MONEY_KIND_SETTLE && n < w->cfg.batch_max && n < room;
                 x = x->next)
                parts[n++] = &x->parts;
            owned = money_cmd_settle_batch(parts, n, w->cfg.record_ttl_s, &len);
            if (owned == NULL) {
                log_emit(LOG_FATAL, "money_writer_out_of_memory", NULL);
                abort();
            }
            cmd = owned;
        }
        int rc = redisAsyncFormattedCommand(w->ac, writer_reply_cb, it, cmd, len);
        free(owned);
        if (rc != REDIS_OK) {
            writer_conn_lost(w, "command refused by the connection", true);
            return;
        }
        if (w->flight.n == 0)
            w->last_reply_ns = clock_mono_ns();
        int64_t now = clock_mono_ns();
        it->batch = n;
        for (size_t i = 0; i < n; i++) {
            money_item_t *x = list_pop(&w->pending);
            x->sent_ns = now;
            if (x->sends++ > 0)
                metrics_add(w->m_retries, 1);
            list_push(&w->flight, x);
        }
    }
}

static void writer_load_cb(redisAsyncContext *ac, void *reply, void *privdata)
{
    money_writer_t *w = ac->data;
    redisReply *r = reply;
    int index = (int)(intptr_t)privdata;
    if (r == NULL || ac != w->ac)
        return;
    if (r->type != REDIS_REPLY_STRING || strcmp(r->str, money_script_sha(index)) != 0) {
        log_emit(LOG_ERROR, "money_writer_script_load_failed", "{s:i,s:s}", "script", index,
                 "reply", r->type == REDIS_REPLY_ERROR ? r->str : "unexpected");
        writer_conn_lost(w, "script load failed", true);
        return;
    }
    if (--w->loads_pending > 0)
        return;
    w->state = WRITER_READY;
    w->state_since_ns = clock_mono_ns();
    w->backoff_ms = w->cfg.backoff_min_ms;
    atomic_store(&w->connected, true);
    log_emit(LOG_INFO, "money_writer_connected", "{s:s,s:i,s:I}", "host", w->host, "port",
             w->cfg.redis_port, "pending", (json_int_t)w->pending.n);
    writer_pump(w);
}

static void writer_connect_cb(const redisAsyncContext *cac, int status)
{
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    money_writer_t *w = ac->data;
    if (ac != w->ac)
        return;
    if (status != REDIS_OK) {
        /* hiredis frees the context itself after this callback. */
        log_emit(LOG_WARN, "money_writer_connect_failed", "{s:s}", "error", ac->errstr);
        w->ac = NULL;
        writer_conn_lost(w, "connect failed", false);
        return;
    }
    w->state = WRITER_LOADING;
    w->state_since_ns = clock_mono_ns();
    w->loads_pending = MONEY_NSCRIPTS;
    for (int i = 0; i < MONEY_NSCRIPTS; i++) {
        if (redisAsyncCommand(ac, writer_load_cb, (void *)(intptr_t)i, "SCRIPT LOAD %s",
                              money_script_text(i)) != REDIS_OK) {
            writer_conn_lost(w, "script load refused", true);
            return;
        }
    }
}

static void writer_disconnect_cb(const redisAsyncContext *cac, int status)
{
    (void)status;
    redisAsyncContext *ac = (redisAsyncContext *)cac;
    money_writer_t *w = ac->data;
    if (ac != w->ac)
        return; /* we dropped it ourselves */
    w->ac = NULL;
    writer_conn_lost(w, ac->errstr[0] ? ac->errstr : "disconnected", false);
}

static void writer_connect(money_writer_t *w)
{
    redisAsyncContext *ac = redisAsyncConnect(w->host, w->cfg.redis_port);
    if (ac == NULL || ac->err) {
        log_emit(LOG_WARN, "money_writer_connect_failed", "{s:s}", "error",
                 ac ? ac->errstr : "out of memory");
        if (ac != NULL)
            redisAsyncFree(ac);
        w->state = WRITER_DOWN;
        writer_schedule_reconnect(w);
        return;
    }
    ac->data = w;
    redisLibeventAttach(ac, w->base);
    redisAsyncSetConnectCallback(ac, writer_connect_cb);
    redisAsyncSetDisconnectCallback(ac, writer_disconnect_cb);
    w->ac = ac;
    w->state = WRITER_CONNECTING;
    w->state_since_ns = clock_mono_ns();
}

static void writer_retry_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    money_writer_t *w = arg;
    if (w->state == WRITER_DOWN && w->ac == NULL)
        writer_connect(w);
}

/* Producers activate this event; it moves the shared queue to the pending list. */
static void writer_wake_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    money_writer_t *w = arg;
    atomic_store(&w->wake_pending, false);
    pthread_mutex_lock(&w->mu);
    list_append(&w->pending, &w->queue);
    pthread_mutex_unlock(&w->mu);
    writer_pump(w);
}

/* Every 100 ms: declares a silent connection dead and refreshes the age gauge. */
static void writer_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    money_writer_t *w = arg;
    int64_t now = clock_mono_ns();
    int64_t connect_ns = (int64_t)w->cfg.connect_timeout_ms * 1000000;
    int64_t request_ns = (int64_t)w->cfg.request_timeout_ms * 1000000;
    if (w->state == WRITER_CONNECTING && now - w->state_since_ns > connect_ns)
        writer_conn_lost(w, "connect timeout", true);
    else if (w->state == WRITER_LOADING && now - w->state_since_ns > request_ns)
        writer_conn_lost(w, "script load timeout", true);
    else if (w->state == WRITER_READY && w->flight.n > 0 && now - w->last_reply_ns > request_ns)
        writer_conn_lost(w, "request timeout", true);

    int64_t oldest = 0;
    if (w->flight.head != NULL)
        oldest = w->flight.head->submitted_ns;
    else if (w->pending.head != NULL)
        oldest = w->pending.head->submitted_ns;
    else {
        pthread_mutex_lock(&w->mu);
        if (w->queue.head != NULL)
            oldest = w->queue.head->submitted_ns;
        pthread_mutex_unlock(&w->mu);
    }
    atomic_store(&w->oldest_ns, oldest);
    metrics_set(w->m_oldest, oldest ? (double)(now - oldest) / 1e9 : 0.0);
    metrics_set(w->m_depth, (double)atomic_load(&w->depth));
}

static void *writer_main(void *arg)
{
    money_writer_t *w = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals belong to the main thread */
    writer_connect(w);
    event_base_dispatch(w->base);
    return NULL;
}

money_writer_t *money_writer_create(const money_writer_config_t *cfg)
{
    if (cfg == NULL || cfg->redis_host == NULL || cfg->redis_port <= 0 || cfg->redis_port > 65535 ||
        !money_valid_name(cfg->service)) {
        log_emit(LOG_ERROR, "money_writer_bad_config", "{s:s}", "error",
                 "redis_host, redis_port and a service name [A-Za-z0-9_.-]{1,64} are required");
        return NULL;
    }
    signal(SIGPIPE, SIG_IGN);
    money_writer_t *w = xcalloc(1, sizeof *w);
    w->cfg = *cfg;
    money_writer_config_t *c = &w->cfg;
    if (c->high_watermark == 0)
        c->high_watermark = 4096;
    if (c->max_inflight == 0)
        c->max_inflight = 1024;
    if (c->batch_max == 0)
        c->batch_max = 64;
    if (c->batch_max > MONEY_WRITER_BATCH_CAP)
        c->batch_max = MONEY_WRITER_BATCH_CAP;
    if (c->connect_timeout_ms <= 0)
        c->connect_timeout_ms = 1000;
    if (c->request_timeout_ms <= 0)
        c->request_timeout_ms = 2000;
    if (c->backoff_min_ms <= 0)
        c->backoff_min_ms = 50;
    if (c->backoff_max_ms < c->backoff_min_ms)
        c->backoff_max_ms = c->backoff_min_ms > 2000 ? c->backoff_min_ms : 2000;
    if (c->history_maxlen <= 0)
        c->history_maxlen = 100000;
    if (c->record_ttl_s <= 0)
        c->record_ttl_s = MONEY_RECORD_TTL_S;
    w->host = xstrdup(cfg->redis_host);
    w->service = xstrdup(cfg->service);
    c->redis_host = w->host;
    c->service = w->service;
    w->backoff_ms = c->backoff_min_ms;
    w->seed = (unsigned)clock_mono_ns();
    list_init(&w->queue);
    list_init(&w->pending);
    list_init(&w->flight);
    money_script_sha(0); /* computes the SHAs once, before any thread races for them */

    metrics_registry_t *reg = cfg->metrics;
    if (reg == NULL)
        reg = w->own_metrics = metrics_create();
    w->m_depth = metrics_gauge(reg, "money_writer_depth", NULL,
                               "Money writer items submitted and not yet completed");
    w->m_oldest = metrics_gauge(reg, "money_writer_oldest_age_seconds", NULL,
                                "Age of the oldest uncompleted money writer item");
    w->m_latency = metrics_histogram(reg, "money_writer_write_seconds", NULL,
                                     "Money writer send-to-reply latency", metrics_latency_bounds,
                                     metrics_latency_nbounds);
    w->m_retries = metrics_counter(reg, "money_writer_retries_total", NULL,
                                   "Money writer items sent again after a connection loss");
    w->m_reconnects = metrics_counter(reg, "money_writer_reconnects_total", NULL,
                                      "Money writer connections lost or refused");
    for (int k = 1; k < 5; k++) {
        for (int o = 0; o < 2; o++) {
            char labels[64];
            snprintf(labels, sizeof labels, "kind=\"%s\",outcome=\"%s\"", kind_names[k],
                     o == 0 ? "ok" : "error");
            w->m_items[k][o] = metrics_counter(reg, "money_writer_items_total", labels,
                                               "Money writer items completed");
        }
    }

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->drained, &ca);
    pthread_condattr_destroy(&ca);

    if (evthread_use_pthreads() != 0)
        goto fail_base;
    w->base = event_base_new();
    if (w->base == NULL)
        goto fail_base;
    w->wake_ev = event_new(w->base, -1, 0, writer_wake_cb, w);
    w->tick_ev = event_new(w->base, -1, EV_PERSIST, writer_tick_cb, w);
    w->retry_ev = evtimer_new(w->base, writer_retry_cb, w);
    if (w->wake_ev == NULL || w->tick_ev == NULL || w->retry_ev == NULL)
        goto fail_events;
    struct timeval tick = {0, 100000};
    event_add(w->tick_ev, &tick);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0)
        goto fail_events;
    return w;

fail_events:
    if (w->wake_ev)
        event_free(w->wake_ev);
    if (w->tick_ev)
        event_free(w->tick_ev);
    if (w->retry_ev)
        event_free(w->retry_ev);
    event_base_free(w->base);
fail_base:
    log_emit(LOG_ERROR, "money_writer_start_failed", NULL);
    pthread_cond_destroy(&w->drained);
    pthread_mutex_destroy(&w->mu);
    metrics_destroy(w->own_metrics);
    free(w->host);
    free(w->service);
    free(w);
    return NULL;
}

void money_writer_destroy(money_writer_t *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_mutex_unlock(&w->mu);
    event_base_loopbreak(w->base);
    pthread_join(w->thread, NULL);

    /* The thread is gone; its state is ours now. */
    if (w->ac != NULL) {
        redisAsyncContext *ac = w->ac;
        w->ac = NULL;
        redisAsyncFree(ac);
    }
    list_prepend(&w->pending, &w->flight);
    list_append(&w->pending, &w->queue);
    if (w->pending.n > 0)
        log_emit(LOG_ERROR, "money_writer_unflushed", "{s:I}", "items", (json_int_t)w->pending.n);
    money_item_t *it;
    while ((it = list_pop(&w->pending)) != NULL) {
        money_result_t r;
        memset(&r, 0, sizeof r);
        r.status = -ECANCELED;
        snprintf(r.error, sizeof r.error, "money writer destroyed before the item was written");
        writer_complete(w, it, &r);
    }
    event_free(w->wake_ev);
    event_free(w->tick_ev);
    event_free(w->retry_ev);
    event_base_free(w->base);
    pthread_cond_destroy(&w->drained);
    pthread_mutex_destroy(&w->mu);
    metrics_destroy(w->own_metrics);
    free(w->host);
    free(w->service);
    free(w);
}

/* Queues an item (taking ownership) and wakes the writer. */
static int writer_enqueue(money_writer_t *w, money_item_t *it)
{
    it->submitted_ns = clock_mono_ns();
    pthread_mutex_lock(&w->mu);
    if (w->stopping) {
        pthread_mutex_unlock(&w->mu);
        writer_item_free(it);
        return -ESHUTDOWN;
    }
    list_push(&w->queue, it);
    atomic_fetch_add(&w->depth, 1);
    int64_t zero = 0;
    atomic_compare_exchange_strong(&w->oldest_ns, &zero, it->submitted_ns);
    /* Woken under the lock, so that destroy (which sets stopping under it) cannot free the
     * event between our check and the wake-up. */
    if (!atomic_exchange(&w->wake_pending, true))
        event_active(w->wake_ev, EV_READ, 0);
    pthread_mutex_unlock(&w->mu);
    metrics_add(w->m_depth, 1);
    return 0;
}

int money_writer_submit_settle(money_writer_t *w, const money_settlement_t *s,
                               money_writer_done_cb done, void *arg)
{
    char err[160];
    if (w == NULL || money_settlement_check(s, err, sizeof err) != 0) {
        log_emit(LOG_ERROR, "money_settlement_invalid", "{s:s}", "error",
                 w == NULL ? "no writer" : err);
        return -EINVAL;
    }
    money_item_t *it = xcalloc(1, sizeof *it);
    it->kind = MONEY_KIND_SETTLE;
    it->done = done;
    it->arg = arg;
    money_round_id_format(&s->round, it->id, sizeof it->id);
    if (money_settle_parts(w->service, s, &it->parts) != 0) {
        writer_item_free(it);
        return -EINVAL;
    }
    return writer_enqueue(w, it);
}

int money_writer_submit_history(money_writer_t *w, const char *game, json_t *history,
                                money_writer_done_cb done, void *arg)
{
    int rc = -EINVAL;
    if (w == NULL || !money_history_valid(history) || !money_valid_name(game))
        goto out;
    const char *rid = json_string_value(json_object_get(history, "round"));
    char *json = json_dumps(history, JSON_COMPACT);
    if (json == NULL)
        goto out;
    money_item_t *it = xcalloc(1, sizeof *it);
    it->kind = MONEY_KIND_HISTORY;
    it->done = done;
    it->arg = arg;
    snprintf(it->id, sizeof it->id, "%s", rid);
    rc = money_cmd_history(rid, game, json, w->cfg.history_maxlen, w->cfg.record_ttl_s, &it->cmd,
                           &it->len);
    free(json);
    if (rc != 0) {
        writer_item_free(it);
        goto out;
    }
    rc = writer_enqueue(w, it);
out:
    if (rc == -EINVAL)
        log_emit(LOG_ERROR, "money_history_invalid", "{s:s}", "error",
                 "a hand history needs a valid game, \"round\" and seats/cards/actions/results");
    json_decref(history);
    return rc;
}

static int writer_submit_wallet(money_writer_t *w, money_kind_t kind, const char *player,
                                int64_t amount, const char *op_id, money_writer_done_cb done,
                                void *arg)
{
    if (w == NULL)
        return -EINVAL;
    money_item_t *it = xcalloc(1, sizeof *it);
    it->kind = kind;
    it->done = done;
    it->arg = arg;
    if (money_cmd_wallet(kind, player, amount, op_id, w->cfg.record_ttl_s, &it->cmd, &it->len) !=
        0) {
        writer_item_free(it);
        log_emit(LOG_ERROR, "money_wallet_op_invalid", "{s:s}", "error",
                 "a wallet operation needs a valid player, op id and 0 < amount <= 1e14");
        return -EINVAL;
    }
    snprintf(it->id, sizeof it->id, "%s", op_id);
    return writer_enqueue(w, it);
}

int money_writer_submit_buyin(money_writer_t *w, const char *player, int64_t amount,
                              const char *op_id, money_writer_done_cb done, void *arg)
{
    return writer_submit_wallet(w, MONEY_KIND_BUYIN, player, amount, op_id, done, arg);
}

int money_writer_submit_cashout(money_writer_t *w, const char *player, int64_t amount,
                                const char *op_id, money_writer_done_cb done, void *arg)
{
    return writer_submit_wallet(w, MONEY_KIND_CASHOUT, player, amount, op_id, done, arg);
}

bool money_writer_can_start_round(const money_writer_t *w)
{
    return atomic_load(&w->depth) < w->cfg.high_watermark;
}

size_t money_writer_depth(const money_writer_t *w)
{
    return atomic_load(&w->depth);
}

int64_t money_writer_oldest_age_ms(money_writer_t *w)
{
    int64_t oldest = atomic_load(&w->oldest_ns);
    if (oldest == 0 || atomic_load(&w->depth) == 0)
        return 0;
    return (clock_mono_ns() - oldest) / 1000000;
}

bool money_writer_connected(const money_writer_t *w)
{
    return atomic_load(&w->connected);
}

long money_writer_flush(money_writer_t *w, int timeout_ms)
{
    uint64_t start = atomic_load(&w->completed);
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    while (atomic_load(&w->depth) > 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->drained, &w->mu, &end);
    bool drained = atomic_load(&w->depth) == 0;
    pthread_mutex_unlock(&w->mu);
    long flushed = (long)(atomic_load(&w->completed) - start);
    log_emit(drained ? LOG_INFO : LOG_ERROR, "money_writer_flush", "{s:b,s:I,s:I}", "drained",
             drained, "flushed", (json_int_t)flushed, "left", (json_int_t)atomic_load(&w->depth));
    return drained ? flushed : -ETIMEDOUT;
}
