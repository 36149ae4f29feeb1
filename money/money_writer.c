#include "money_writer.h"
#include "money_writer_int.h"

#include <errno.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "evthreads.h"
#include "log.h"
#include "mcluster.h"
#include "rconn.h"
#include "xmalloc.h"

/*
 * One command in flight: a single item or a batch of n consecutive settlements starting at
 * first. gen is the writer's generation when it was sent; a requeue bumps the generation, so
 * answers to commands sent before it are ignored (their items are sent again).
 */
typedef struct {
    money_writer_t *w;
    money_item_t *first;
    size_t n;
    uint64_t gen;
} writer_cmd_t;

/* A journal probe in flight: which of entries [lo, hi) of the snapshot is the newest present. */
typedef struct {
    money_writer_t *w;
    uint64_t gen;
    size_t lo, hi;
} writer_probe_t;

/* A WAIT in flight (min_replicas > 0): it covers every item answered before its reply. */
typedef struct {
    money_writer_t *w;
    uint64_t gen;
    int64_t sent_ns;
} writer_wait_t;

/*
 * Calls (batches or single items) in flight at most. While they run, new items wait in the
 * pending list and leave in one bigger batch when a reply frees a slot: an idle Redis gets each
 * item at once (batch of 1, lowest latency), a busy one gets batches of up to batch_max, each
 * costing it far less per round than many small calls would. Four keep Redis busy while the
 * writer is between replies (or descheduled) without queueing more than a few batches in it.
 */
#define WRITER_MAX_CALLS 4

/* Journal entries one probe call checks (one key and two arguments each). */
#define WRITER_PROBE_CHUNK 512

/*
 * The probe: KEYS[i] is the record of journal entry i (oldest first); with ARGV[2i-1] empty the
 * entry is present when the key exists (settle, wallet, seat and history records), else when
 * the hash field ARGV[2i-1] of KEYS[i] holds ARGV[2i] (a mark). Returns the newest present
 * entry's index, 0 when none is.
 */
static const char writer_probe_lua[] =
    "for i = #KEYS, 1, -1 do\n"
    "  local f = ARGV[2 * i - 1]\n"
    "  if f == '' then\n"
    "    if redis.call('EXISTS', KEYS[i]) == 1 then return i end\n"
    "  elseif redis.call('HGET', KEYS[i], f) == ARGV[2 * i] then return i end\n"
    "end\n"
    "return 0\n";

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

static const char *const kind_names[MONEY_NKINDS] = {"none",    "settle",  "history",  "buyin",
                                                     "cashout", "seat_in", "seat_out", "mark"};

static void writer_item_free(money_item_t *it)
{
    if (it == NULL)
        return;
    money_op_free(&it->op);
    free(it->held);
    free(it);
}

/* The operation's keys and arguments as one line of text, for the log of a lost item. */
static char *writer_op_text(const money_op_t *op)
{
    size_t len = 1;
    for (int i = 0; i < op->argc; i++)
        len += op->lens[i] + 1;
    char *text = xmalloc(len);
    size_t off = 0;
    for (int i = 0; i < op->argc; i++) {
        memcpy(text + off, op->argv[i], op->lens[i]);
        off += op->lens[i];
        text[off++] = ' ';
    }
    text[off > 0 ? off - 1 : 0] = '\0';
    return text;
}

/* Memory an item holds: the struct and its op's single allocation. */
static size_t writer_item_bytes(const money_item_t *it)
{
    size_t n = sizeof *it + (size_t)it->op.argc * (sizeof(char *) + sizeof(size_t));
    for (int i = 0; i < it->op.argc; i++)
        n += it->op.lens[i] + 1;
    return n;
}

/*
 * Drops the journal's oldest entries while they are older than the window (counted from their
 * first send: their record on Redis is no older than that, and the window stays below the
 * record TTL, so every entry's record is still alive) or beyond the count and byte caps. Not
 * while a probe holds a snapshot of the journal.
 */
static void writer_journal_prune(money_writer_t *w, int64_t now)
{
    if (w->probing)
        return;
    while (w->journal.head != NULL &&
           (now - w->journal.head->first_sent_ns > w->window_ns ||
            w->journal.n > w->cfg.replay_max_items || w->journal_bytes > w->cfg.replay_max_bytes)) {
        money_item_t *x = list_pop(&w->journal);
        w->journal_bytes -= x->bytes;
        writer_item_free(x);
    }
    metrics_set(w->m_journal, (double)w->journal.n);
    metrics_set(w->m_journal_bytes, (double)w->journal_bytes);
}

/* Keeps a completed item (applied on Redis) in the journal, at its tail. */
static void writer_journal_push(money_writer_t *w, money_item_t *it)
{
    free(it->held);
    it->held = NULL;
    it->replay = false;
    it->done = NULL;
    it->arg = NULL;
    it->bytes = writer_item_bytes(it);
    w->journal_bytes += it->bytes;
    list_push(&w->journal, it);
    writer_journal_prune(w, clock_mono_ns());
}

/* The end of an item in the depth count; wakes a flusher when the depth reaches 0. */
static void writer_depth_done(money_writer_t *w)
{
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

/*
 * The end of a journal entry sent again after a reconnect: its caller had its result long ago,
 * so nothing is reported; applied, it goes back into the journal (the master may fail over
 * again), refused or cancelled it is logged with its command (an operator can look at it).
 */
static void writer_replay_done(money_writer_t *w, money_item_t *it, const money_result_t *r)
{
    if (r->status == MONEY_OK) {
        writer_journal_push(w, it);
    } else {
        char *text = writer_op_text(&it->op);
        log_emit(LOG_ERROR, "money_writer_replay_failed", "{s:s,s:s,s:i,s:s,s:s}", "kind",
                 kind_names[it->kind], "id", it->id, "status", r->status, "error",
                 r->error[0] ? r->error : money_strerror(r->status), "command", text);
        free(text);
        writer_item_free(it);
    }
    writer_depth_done(w);
}

/*
 * Delivers the final result of an item to its done callback (on the calling thread), updates
 * the metrics and the depth, and keeps the item in the journal when it was applied (else frees
 * it). Wakes a flusher when the depth reaches 0. A replayed journal entry reports nothing.
 */
void writer_complete(money_writer_t *w, money_item_t *it, money_result_t *r)
{
    if (it->replay) {
        writer_replay_done(w, it, r);
        return;
    }
    r->kind = it->kind;
    r->arg = it->arg;
    snprintf(r->id, sizeof r->id, "%s", it->id);
    metrics_add(w->m_items[it->kind][r->status == MONEY_OK ? 0 : 1], 1);
    if (r->status == -ECANCELED) {
        /* Never written: log the keys and arguments so that an operator can replay the exact
         * operation; the scripts make a replay harmless. */
        char *text = writer_op_text(&it->op);
        log_emit(LOG_ERROR, "money_item_failed", "{s:s,s:s,s:i,s:s,s:s}", "kind",
                 kind_names[it->kind], "id", it->id, "status", r->status, "error", r->error,
                 "command", text);
        free(text);
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
    /* Only operations that changed Redis are journaled: a refused one (all scripts are
     * all-or-nothing) changed nothing, and sending it again could succeed where it failed. */
    if (r->status == MONEY_OK && w->window_ns > 0)
        writer_journal_push(w, it);
    else
        writer_item_free(it);
    writer_depth_done(w);
}

static void writer_pump_calls(money_writer_t *w);

/*
 * Something went wrong with the commands in flight (connection lost, request timeout, a
 * server-wide transient error such as LOADING or READONLY): every unanswered item goes back to
 * the head of the pending list in its original order and nothing is sent until the backoff
 * timer fires. Answers still to come for the old commands are ignored (generation check).
 * Redis may have executed some of them; the scripts' idempotency makes the resend harmless, and
 * order is kept because the resent items travel in their original order behind whatever of the
 * old commands Redis still executes.
 */
static void writer_requeue(money_writer_t *w, const char *reason)
{
    w->gen++;
    w->calls = 0;
    w->wait_inflight = false;
    size_t requeued = w->flight.n + w->acked.n;
    list_prepend(&w->pending, &w->flight);
    for (money_item_t *x = w->acked.head; x != NULL; x = x->next) {
        free(x->held); /* answered but never made durable: it is sent again */
        x->held = NULL;
    }
    list_prepend(&w->pending, &w->acked);
    log_emit(LOG_WARN, "money_writer_requeue", "{s:s,s:I,s:I}", "reason", reason, "requeued",
             (json_int_t)requeued, "pending", (json_int_t)w->pending.n);
    metrics_add(w->m_reconnects, 1);
    if (!w->holding) {
        w->holding = true;
        int ms = w->backoff_ms / 2 + (int)(arc4random_uniform((unsigned)(w->backoff_ms / 2 + 1)));
        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
        evtimer_add(w->retry_ev, &tv);
        w->backoff_ms =
            w->backoff_ms * 2 > w->cfg.backoff_max_ms ? w->cfg.backoff_max_ms : w->backoff_ms * 2;
    }
}

/*
 * Answer to one command: a single item, or a batch of settlements. Commands are answered in
 * send order, so its first item must be the flight's head.
 */
static void writer_reply_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    writer_cmd_t *cmd = arg;
    money_writer_t *w = cmd->w;
    if (cmd->gen != w->gen) {
        free(cmd); /* its items were requeued and sent again */
        return;
    }
    w->calls--;
    if (r == NULL) {
        writer_requeue(w, "no reply (connection lost or request timeout)");
        free(cmd);
        return;
    }
    if (w->flight.head != cmd->first || w->flight.n < cmd->n) {
        writer_requeue(w, "reply out of order");
        free(cmd);
        return;
    }
    int64_t now = clock_mono_ns();
    size_t n = cmd->n;
    money_kind_t kind = cmd->first->kind;
    free(cmd);
    money_result_t res;
    memset(&res, 0, sizeof res);
    bool per_entry = kind == MONEY_KIND_SETTLE && r->type == REDIS_REPLY_ARRAY;
    if (!per_entry && money_reply_parse(kind, r, &res) == MONEY_REPLY_RETRY) {
        /* Server-wide states (LOADING, BUSY, READONLY after a failover, OOM) fail the later
         * commands of the pipeline too: start over from this item after a pause. */
        writer_requeue(w, res.error);
        return;
    }
    bool wait = w->cfg.min_replicas > 0;
    if (!wait)
        w->backoff_ms = w->cfg.backoff_min_ms;
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
        if (wait) {
            /* Applied on the master; acknowledged only once a WAIT confirms the replicas. */
            x->held = xmalloc(sizeof *x->held);
            *x->held = res;
            list_push(&w->acked, x);
            continue;
        }
        money_result_t copy = res;
        writer_complete(w, x, &copy);
    }
    writer_pump(w);
}

/* Records whether money can be made durable; logs and counts each change. */
static void writer_set_durable(money_writer_t *w, bool durable, const char *reason)
{
    if (atomic_exchange(&w->durable, durable) == durable)
        return;
    metrics_set(w->m_durable, durable ? 1 : 0);
    if (durable)
        log_emit(LOG_INFO, "money_writer_durable", "{s:i}", "min_replicas", w->cfg.min_replicas);
    else
        log_emit(LOG_ERROR, "money_writer_not_durable", "{s:s,s:i,s:i,s:s}", "reason", reason,
                 "min_replicas", w->cfg.min_replicas, "wait_timeout_ms", w->cfg.wait_timeout_ms,
                 "msg",
                 "money cannot be made durable on enough replicas: no new round starts, the "
                 "operations are sent again under their ids");
}

/*
 * Answer to a WAIT. Every item answered before it was applied before the WAIT ran on the
 * master (one connection, answers in order), so a count of at least min_replicas makes all of
 * the acked list durable: they complete now, in order. A shorter count, an error (a demoted
 * master refuses WAIT) or no answer sends them all again under their ids (the scripts answer
 * "replayed" with the first result) after the backoff, and rounds wait meanwhile.
 */
/*
 * The money by entity's pair of WAITs (writer_send_wait): the first answer is kept (true: taken
 * here); at the second, a first that fell short or went unanswered decides (true: requeued
 * here), else the second's answer is judged as a single WAIT's (false).
 */
static bool writer_wait_pair(money_writer_t *w, const redisReply *r)
{
    if (--w->waits_pending > 0) {
        if (w->waits_ok &&
            (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer < w->cfg.min_replicas)) {
            w->waits_ok = false;
            w->waits_lost = r == NULL;
            if (r == NULL)
                snprintf(w->waits_reason, sizeof w->waits_reason,
                         "no reply to WAIT (connection lost or request timeout)");
            else if (r->type == REDIS_REPLY_INTEGER)
                snprintf(w->waits_reason, sizeof w->waits_reason,
                         "WAIT on the epoch's master reached %lld of %d replicas within %d ms",
                         r->integer, w->cfg.min_replicas, w->cfg.wait_timeout_ms);
            else
                snprintf(w->waits_reason, sizeof w->waits_reason, "WAIT refused: %.150s",
                         r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        }
        return true;
    }
    if (w->waits_ok)
        return false;
    w->wait_inflight = false;
    if (!w->waits_lost) {
        metrics_add(w->m_wait_short, 1);
        writer_set_durable(w, false, w->waits_reason);
    }
    writer_requeue(w, w->waits_reason);
    return true;
}

static void writer_wait_reply_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    writer_wait_t *wt = arg;
    money_writer_t *w = wt->w;
    int64_t sent_ns = wt->sent_ns;
    bool current = wt->gen == w->gen;
    free(wt);
    if (!current)
        return;
    if (w->lane_on && writer_wait_pair(w, r))
        return;
    w->wait_inflight = false;
    if (r == NULL) {
        writer_requeue(w, "no reply to WAIT (connection lost or request timeout)");
        return;
    }
    metrics_observe(w->m_wait_latency, (double)(clock_mono_ns() - sent_ns) / 1e9);
    if (r->type != REDIS_REPLY_INTEGER || r->integer < w->cfg.min_replicas) {
        char reason[200];
        if (r->type == REDIS_REPLY_INTEGER)
            snprintf(reason, sizeof reason, "WAIT reached %lld of %d replicas within %d ms",
                     r->integer, w->cfg.min_replicas, w->cfg.wait_timeout_ms);
        else
            snprintf(reason, sizeof reason, "WAIT refused: %.150s",
                     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        metrics_add(w->m_wait_short, 1);
        writer_set_durable(w, false, reason);
        writer_requeue(w, reason);
        return;
    }
    w->backoff_ms = w->cfg.backoff_min_ms;
    writer_set_durable(w, true, NULL);
    money_item_t *x;
    while ((x = list_pop(&w->acked)) != NULL) {
        money_result_t *res = x->held;
        x->held = NULL;
        writer_complete(w, x, res);
        free(res);
    }
    writer_pump(w);
}

/* The answer of the keyed read that routes a WAIT (writer_send_wait): nothing to do. */
static void writer_noop_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    (void)r;
    (void)arg;
}

/* Sends one WAIT behind what is in flight or answered, unless one is already on its way. */
static void writer_send_wait(money_writer_t *w)
{
    if (w->cfg.min_replicas <= 0 || w->wait_inflight || w->holding ||
        (w->acked.n == 0 && w->flight.n == 0) || !rconn_connected(w->rc))
        return;
    const char *argv[] = {"WAIT", w->wait_args[0], w->wait_args[1]};
    if (w->lane_on) {
        /* the money by entity: a WAIT on the epoch's master and one on the money slot's */
        if (w->wait_key[0] == '\0')
            snprintf(w->wait_key, sizeof w->wait_key, "{croupier:money}");
        const char *keys[2] = {w->wait_key, "{croupier:money}"};
        w->waits_pending = 0;
        w->waits_ok = true;
        for (int i = 0; i < 2; i++) {
            const char *ex[] = {"EXISTS", keys[i]};
            writer_wait_t *wt = xmalloc(sizeof *wt);
            *wt = (writer_wait_t){w, w->gen, clock_mono_ns()};
            if (rconn_command_argv(w->rc, writer_noop_cb, NULL, 2, ex, NULL) != 0 ||
                rconn_command_argv(w->rc, writer_wait_reply_cb, wt, 3, argv, NULL) != 0) {
                free(wt);
                if (w->waits_pending > 0) { /* the first one's answer requeues */
                    w->waits_ok = false;
                    w->waits_lost = true;
                    snprintf(w->waits_reason, sizeof w->waits_reason,
                             "the second WAIT could not be sent (not connected)");
                }
                break;
            }
            w->waits_pending++;
        }
        if (w->waits_pending > 0)
            w->wait_inflight = true;
        return;
    }
    writer_wait_t *wt = xmalloc(sizeof *wt);
    *wt = (writer_wait_t){w, w->gen, clock_mono_ns()};
    if (rconn_command_argv(w->rc, writer_wait_reply_cb, wt, 3, argv, NULL) != 0) {
        free(wt); /* not connected after all: on_state will pump again */
        return;
    }
    w->wait_inflight = true;
}

/* ---- The replay journal (money_writer.h "Replay journal") ---------------------------------- */

/*
 * What shows that journal entry x is on the master: its idempotency record (the settle round
 * record, the wallet or seat op record, the history's seen record), or for a mark its field of
 * the held HASH holding its value. *field and *value are "" for a record.
 */
static void writer_probe_anchor(const money_item_t *x, const char **key, size_t *klen,
                                const char **field, size_t *flen, const char **value,
                                size_t *vlen)
{
    int k = 0; /* MONEY_KIND_SETTLE: the round record is its first key */
    if (x->kind == MONEY_KIND_BUYIN || x->kind == MONEY_KIND_CASHOUT ||
        x->kind == MONEY_KIND_HISTORY)
        k = 1;
    else if (x->kind == MONEY_KIND_SEAT_IN || x->kind == MONEY_KIND_SEAT_OUT)
        k = 2;
    *key = x->op.argv[k];
    *klen = x->op.lens[k];
    if (x->kind == MONEY_KIND_MARK) { /* KEYS held, index, fence; ARGV epoch, field, value */
        *field = x->op.argv[4];
        *flen = x->op.lens[4];
        *value = x->op.argv[5];
        *vlen = x->op.lens[5];
    } else {
        *field = *value = "";
        *flen = *vlen = 0;
    }
}

/* Ends a probe: the snapshot goes, sending may resume (or the probe starts over). */
static void writer_probe_end(money_writer_t *w)
{
    free(w->snap);
    w->snap = NULL;
    w->snap_n = 0;
    w->probing = false;
}

static void writer_probe_send(money_writer_t *w, size_t hi);

/*
 * Entries [k, snap_n) of the journal are not on the master (the newest present one is k - 1,
 * or none is): they leave the journal and go, in their order, to the head of the pending list,
 * in front of everything not yet completed, so that the master gets them before anything new.
 * They count in the depth (a flush waits for them) but report to nobody.
 */
static void writer_replay_from(money_writer_t *w, size_t k)
{
    size_t probed = w->probe_checked;
    money_list_t keep, replay;
    list_init(&keep);
    for (size_t i = 0; i < k; i++)
        list_push(&keep, list_pop(&w->journal));
    replay = w->journal;
    w->journal = keep;
    w->probed_conn = w->probe_conn;
    writer_probe_end(w);
    if (replay.n > 0) {
        int64_t now = clock_mono_ns();
        for (money_item_t *x = replay.head; x != NULL; x = x->next) {
            w->journal_bytes -= x->bytes;
            x->replay = true;
            x->submitted_ns = now; /* its age in the gauges starts now */
        }
        size_t n = replay.n;
        atomic_fetch_add(&w->depth, n);
        metrics_add(w->m_depth, (double)n);
        int64_t zero = 0;
        atomic_compare_exchange_strong(&w->oldest_ns, &zero, now);
        list_prepend(&w->pending, &replay);
        metrics_add(w->m_replayed, (double)n);
        log_emit(LOG_ERROR, "money_writer_replayed", "{s:I,s:I,s:s,s:s,s:i,s:I}", "count",
                 (json_int_t)n, "probed", (json_int_t)probed, "reason",
                 "the Redis master lacks operations this writer had completed (a failover "
                 "promoted a replica that had not received them): they are applied again, in "
                 "their order, before anything new",
                 "host", rconn_host(w->rc), "port", rconn_port(w->rc), "journal",
                 (json_int_t)w->journal.n);
    }
    metrics_set(w->m_journal, (double)w->journal.n);
    metrics_set(w->m_journal_bytes, (double)w->journal_bytes);
}

/*
 * Answer to a probe of entries [lo, hi): the newest present one's index from 1, or 0. By the
 * prefix property (docs/deploy.md "Failover and durability": the master's data is a prefix of
 * the stream this writer's one connection wrote, in send order) every entry before a present
 * one is present too, so the first present entry found from the newest back ends the search.
 */
static void writer_probe_reply_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    writer_probe_t *p = arg;
    money_writer_t *w = p->w;
    bool current = p->gen == w->gen && w->probing;
    size_t lo = p->lo;
    free(p);
    if (!current)
        return;
    if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer < 0 ||
        (size_t)r->integer > WRITER_PROBE_CHUNK) {
        char reason[200];
        snprintf(reason, sizeof reason, "journal probe failed: %.150s",
                 r == NULL                       ? "no reply (connection lost or request timeout)"
                 : r->type == REDIS_REPLY_ERROR ? r->str
                                                 : "unexpected reply");
        writer_probe_end(w); /* probed_conn unchanged: the next pump probes again */
        writer_requeue(w, reason);
        return;
    }
    if (r->integer > 0)
        writer_replay_from(w, lo + (size_t)r->integer);
    else if (lo > 0)
        writer_probe_send(w, lo);
    else
        writer_replay_from(w, 0);
    if (!w->probing)
        writer_pump(w);
}

/* Asks whether any of snapshot entries [max(0, hi - chunk), hi) is on the master. */
static void writer_probe_send(money_writer_t *w, size_t hi)
{
    size_t lo = hi > WRITER_PROBE_CHUNK ? hi - WRITER_PROBE_CHUNK : 0;
    int nkeys = (int)(hi - lo), argc = nkeys;
    for (size_t i = lo; i < hi; i++) {
        int a = (int)(i - lo);
        writer_probe_anchor(w->snap[i], &w->av[a], &w->avlen[a], &w->av[argc], &w->avlen[argc],
                            &w->av[argc + 1], &w->avlen[argc + 1]);
        argc += 2;
    }
    writer_probe_t *p = xmalloc(sizeof *p);
    *p = (writer_probe_t){w, w->gen, lo, hi};
    if (rconn_eval(w->rc, w->probe_script, writer_probe_reply_cb, p, nkeys, argc, w->av,
                   w->avlen) != 0) {
        free(p);
        writer_probe_end(w); /* not connected after all: the next connection probes */
        return;
    }
    w->probe_checked += (size_t)nkeys;
}

/*
 * Whether the journal has been checked against the connection now up; if not, starts the check
 * (a probe) and answers false: after a reconnect nothing may be sent before the operations the
 * master lacks are back in front of the pending list.
 */
static bool writer_journal_checked(money_writer_t *w)
{
    if (w->probing)
        return false;
    if (!rconn_connected(w->rc))
        return true; /* nothing leaves anyway */
    unsigned conn = rconn_connect_count(w->rc);
    if (conn == w->probed_conn)
        return true;
    if (w->holding)
        return false;
    if (w->flight.n > 0 || w->acked.n > 0) {
        /* Sent on an earlier connection and not requeued (a flap rconn did not report). */
        writer_requeue(w, "reconnected");
        return false;
    }
    writer_journal_prune(w, clock_mono_ns());
    if (w->journal.n == 0) {
        w->probed_conn = conn;
        return true;
    }
    metrics_add(w->m_probes, 1);
    w->snap_n = w->journal.n;
    w->snap = xmalloc(w->snap_n * sizeof *w->snap);
    size_t i = 0;
    for (money_item_t *x = w->journal.head; x != NULL; x = x->next)
        w->snap[i++] = x;
    w->probing = true;
    w->probe_conn = conn;
    w->probe_checked = 0;
    writer_probe_send(w, w->snap_n);
    return false;
}

/*
 * Sends pending items while there is room in flight (WRITER_MAX_CALLS calls, max_inflight
 * items). Consecutive settlements travel together in one call of the settle script (up to
 * batch_max), which keeps their order and amortises the per-call cost. After a reconnect the
 * journal is checked first.
 */
void writer_pump(money_writer_t *w)
{
    if (!writer_journal_checked(w))
        return;
    writer_pump_calls(w);
    writer_send_wait(w);
}

static void writer_pump_calls(money_writer_t *w)
{
    while (!w->holding && w->calls < WRITER_MAX_CALLS && w->flight.n < w->cfg.max_inflight &&
           w->pending.head != NULL && rconn_connected(w->rc) && !w->lane_busy) {
        money_item_t *it = w->pending.head;
        if (w->lane_on && (it->kind == MONEY_KIND_SEAT_IN || it->kind == MONEY_KIND_SEAT_OUT ||
                           it->kind == MONEY_KIND_CASHOUT)) {
            /* a barrier: only once everything before it is answered */
            if (w->calls > 0 || w->flight.n > 0 || w->acked.n > 0)
                return;
            list_pop(&w->pending);
            int64_t now = clock_mono_ns();
            it->sent_ns = now;
            if (it->sends++ == 0)
                it->first_sent_ns = now;
            w->lane_busy = true;
            pthread_mutex_lock(&w->lane_mu);
            w->lane_item = it;
            w->lane_done = false;
            pthread_cond_signal(&w->lane_cv);
            pthread_mutex_unlock(&w->lane_mu);
            return;
        }
        /* The money by entity sends to two masters over rconn's cluster mode (the epoch's slot:
         * settlements and marks; the money slot: hand histories), one connection each, and two
         * connections answer in no common order, while the flight is matched in send order: one
         * slot's commands are in flight at a time. (Else a WAIT blocking one master's connection,
         * or a slower master, answers a later command first: "reply out of order", everything
         * sent again, for as long as that lasts.) */
        if (w->lane_on && w->flight.n > 0 &&
            (it->kind == MONEY_KIND_HISTORY) != (w->flight.head->kind == MONEY_KIND_HISTORY))
            return;
        size_t n = 1;
        int rc;
        writer_cmd_t *cmd = xmalloc(sizeof *cmd);
        if (it->kind == MONEY_KIND_SETTLE) {
            /* Keys of every round, then the ttl, then every round's arguments. */
            size_t room = w->cfg.max_inflight - w->flight.n;
            int nkeys = 0, argc = 0;
            n = 0;
            for (money_item_t *x = it;
                 x != NULL && x->kind == MONEY_KIND_SETTLE && n < w->cfg.batch_max && n < room;
                 x = x->next, n++) {
                memcpy(w->av + argc, x->op.argv, (size_t)x->op.nkeys * sizeof(char *));
                memcpy(w->avlen + argc, x->op.lens, (size_t)x->op.nkeys * sizeof(size_t));
                argc += x->op.nkeys;
            }
            nkeys = argc;
            w->av[argc] = w->ttl_text;
            w->avlen[argc++] = strlen(w->ttl_text);
            size_t i = 0;
            for (money_item_t *x = it; i < n; x = x->next, i++) {
                int na = x->op.argc - x->op.nkeys;
                memcpy(w->av + argc, x->op.argv + x->op.nkeys, (size_t)na * sizeof(char *));
                memcpy(w->avlen + argc, x->op.lens + x->op.nkeys, (size_t)na * sizeof(size_t));
                argc += na;
            }
            *cmd = (writer_cmd_t){w, it, n, w->gen};
            rc = rconn_eval(w->rc, w->scripts[it->op.script], writer_reply_cb, cmd, nkeys, argc,
                            w->av, w->avlen);
        } else {
            *cmd = (writer_cmd_t){w, it, 1, w->gen};
            rc = rconn_eval(w->rc, w->scripts[it->op.script], writer_reply_cb, cmd, it->op.nkeys,
                            it->op.argc, it->op.argv, it->op.lens);
        }
        if (rc != 0) {
            free(cmd); /* not connected after all: on_state will pump again */
            return;
        }
        if (w->lane_on && (it->kind == MONEY_KIND_SETTLE || it->kind == MONEY_KIND_MARK) &&
            it->op.nkeys > 0 && it->op.lens[0] < sizeof w->wait_key)
            snprintf(w->wait_key, sizeof w->wait_key, "%s", it->op.argv[0]); /* its slot's */
        w->calls++;
        int64_t now = clock_mono_ns();
        for (size_t i = 0; i < n; i++) {
            money_item_t *x = list_pop(&w->pending);
            x->sent_ns = now;
            if (x->sends == 0)
                x->first_sent_ns = now;
            if (x->sends++ > 0)
                metrics_add(w->m_retries, 1);
            list_push(&w->flight, x);
        }
    }
}

static void writer_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    money_writer_t *w = arg;
    atomic_store(&w->connected, connected);
    if (connected) {
        if (w->cfg.redis_cluster != NULL) /* the slot map serves every slot (rconn.h) */
            log_emit(LOG_INFO, "money_writer_connected", "{s:s,s:I}", "cluster",
                     w->cfg.redis_cluster, "pending", (json_int_t)w->pending.n);
        else
            log_emit(LOG_INFO, "money_writer_connected", "{s:s,s:i,s:I}", "host", w->host, "port",
                     w->cfg.redis_port, "pending", (json_int_t)w->pending.n);
        writer_pump(w);
    } else if (w->flight.n > 0 || w->acked.n > 0) {
        writer_requeue(w, "disconnected");
    }
}

static void writer_retry_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    money_writer_t *w = arg;
    w->holding = false;
    writer_pump(w);
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
    bool stopping = w->stopping;
    pthread_mutex_unlock(&w->mu);
    if (stopping) {
        event_base_loopbreak(w->base); /* from the loop itself: see money_writer_destroy */
        return;
    }
    writer_pump(w);
}

/* Every 100 ms: refreshes the gauges, and pumps in case a reconnect went unreported. */
static void writer_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    money_writer_t *w = arg;
    int64_t now = clock_mono_ns();
    int64_t oldest = 0;
    if (w->acked.head != NULL)
        oldest = w->acked.head->submitted_ns;
    else if (w->flight.head != NULL)
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
    /* money_writer_depth is kept by its adds alone (enqueue +1, the end of an item -1: they
     * commute, so it is exact once the writer is at rest): a set from the depth here raced an
     * enqueue between its count and its add and left the gauge 1 above a drained writer. */
    atomic_store(&w->connected, rconn_connected(w->rc));
    if (w->window_ns > 0)
        writer_journal_prune(w, now);
    writer_pump(w);
}

static void *writer_main(void *arg)
{
    money_writer_t *w = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals belong to the main thread */
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
    signal(SIGPIPE, SIG_IGN); /* rconn.h: writes to a closed connection must not kill us */
    money_writer_t *w = xcalloc(1, sizeof *w);
    w->cfg = *cfg;
    money_writer_config_t *c = &w->cfg;
    if (c->high_watermark == 0)
        c->high_watermark = 4096;
    if (c->max_inflight == 0)
        c->max_inflight = 1024;
    if (c->batch_max == 0)
        c->batch_max = c->min_replicas > 0 ? 128 : 64; /* with WAIT: half as many WAITs */
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
    if (c->min_replicas < 0)
        c->min_replicas = 0;
    if (c->wait_timeout_ms <= 0)
        c->wait_timeout_ms = 500;
    if (c->min_replicas > 0 && c->request_timeout_ms < c->wait_timeout_ms + 1000)
        c->request_timeout_ms = c->wait_timeout_ms + 1000; /* a WAIT is not a dead connection */
    if (c->replay_window_ms == 0)
        c->replay_window_ms = MONEY_WRITER_REPLAY_WINDOW_MS;
    if (c->replay_max_items == 0)
        c->replay_max_items = MONEY_WRITER_REPLAY_MAX_ITEMS;
    if (c->replay_max_bytes == 0)
        c->replay_max_bytes = MONEY_WRITER_REPLAY_MAX_BYTES;
    if (c->replay_window_ms > 0 && (int64_t)c->replay_window_ms >= (int64_t)c->record_ttl_s * 1000) {
        /* An entry whose record expired would look absent, and everything after it would be
         * applied again although it is on the master. */
        char err[200];
        snprintf(err, sizeof err,
                 "replay_window_ms %d must be below the idempotency records' TTL (%ld s): the "
                 "journal finds what a master lacks by those records",
                 c->replay_window_ms, c->record_ttl_s);
        log_emit(LOG_ERROR, "money_writer_bad_config", "{s:s}", "error", err);
        free(w);
        return NULL;
    }
    if (money_entity()) {
        /* The money by entity (money.h, money_set_entity): a cluster only; the journal probes
         * one slot per call and the epoch's writes and the histories are in two, so it is off;
         * each WAIT is two, one per slot (writer_send_wait; docs/queues.md "The game server's
         * money by entity"). */
        if (c->redis_cluster == NULL) {
            log_emit(LOG_ERROR, "money_writer_bad_config", "{s:s}", "error",
                     "the money by entity needs a Redis Cluster");
            free(w);
            return NULL;
        }
        c->replay_window_ms = -1;
        w->lane_on = true;
    }
    w->window_ns = c->replay_window_ms > 0 ? (int64_t)c->replay_window_ms * 1000000 : 0;
    snprintf(w->wait_args[0], sizeof w->wait_args[0], "%d", c->min_replicas);
    snprintf(w->wait_args[1], sizeof w->wait_args[1], "%d", c->wait_timeout_ms);
    atomic_store(&w->durable, true);
    w->host = xstrdup(cfg->redis_host);
    w->service = xstrdup(cfg->service);
    c->redis_host = w->host;
    w->cluster = cfg->redis_cluster != NULL ? xstrdup(cfg->redis_cluster) : NULL;
    c->redis_cluster = w->cluster;
    c->service = w->service;
    snprintf(w->ttl_text, sizeof w->ttl_text, "%ld", c->record_ttl_s);
    w->backoff_ms = c->backoff_min_ms;
    list_init(&w->queue);
    list_init(&w->pending);
    list_init(&w->flight);
    list_init(&w->acked);
    list_init(&w->journal);
    money_script_sha(0); /* computes the SHAs once, before any thread races for them */

    metrics_registry_t *reg = cfg->metrics;
    if (reg == NULL)
        reg = w->own_metrics = metrics_create();
    w->m_depth = metrics_gauge(reg, "money_writer_depth", NULL,
                               "Money writer items submitted and not yet completed");
    /* Constant: the depth at which desks stop starting rounds (alerts compare the depth with it,
     * k8s/base/game/template/alerts.yaml). */
    metrics_t *hwm = metrics_gauge(reg, "money_writer_high_watermark", NULL,
                                   "Money writer depth at which desks start no new round");
    if (hwm != NULL)
        metrics_set(hwm, (double)c->high_watermark);
    w->m_oldest = metrics_gauge(reg, "money_writer_oldest_age_seconds", NULL,
                                "Age of the oldest uncompleted money writer item");
    w->m_latency = metrics_histogram(reg, "money_writer_write_seconds", NULL,
                                     "Money writer send-to-reply latency", metrics_latency_bounds,
                                     metrics_latency_nbounds);
    w->m_retries = metrics_counter(reg, "money_writer_retries_total", NULL,
                                   "Money writer items sent again after a failure");
    w->m_reconnects = metrics_counter(reg, "money_writer_reconnects_total", NULL,
                                      "Money writer failures that made it resend (connection "
                                      "lost, request timeout, transient error)");
    w->m_durable = metrics_gauge(reg, "money_writer_durable", NULL,
                                 "1 while money reaches --redis-min-replicas replicas (WAIT), "
                                 "0 while no new round starts for lack of them");
    metrics_set(w->m_durable, 1);
    w->m_wait_short = metrics_counter(reg, "money_writer_wait_short_total", NULL,
                                      "WAITs that reached fewer replicas than required (their "
                                      "items were sent again)");
    w->m_wait_latency = metrics_histogram(reg, "money_writer_wait_seconds", NULL,
                                          "Money writer WAIT send-to-reply latency",
                                          metrics_latency_bounds, metrics_latency_nbounds);
    w->m_journal = metrics_gauge(reg, "money_writer_journal_items", NULL,
                                 "Completed money operations kept for a replay after a failover");
    w->m_journal_bytes = metrics_gauge(reg, "money_writer_journal_bytes", NULL,
                                       "Memory held by the money writer's replay journal");
    w->m_replayed = metrics_counter(reg, "money_writer_replayed_total", NULL,
                                    "Completed money operations a new master lacked and the "
                                    "writer applied again");
    w->m_probes = metrics_counter(reg, "money_writer_journal_checks_total", NULL,
                                  "Reconnects on which the replay journal was checked against "
                                  "the master");
    for (int k = 1; k < MONEY_NKINDS; k++) {
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
    pthread_mutex_init(&w->lane_mu, NULL);
    pthread_cond_init(&w->lane_cv, &ca);
    pthread_condattr_destroy(&ca);

    if (evthreads_enable() != 0)
        goto fail_base;
    w->base = event_base_new();
    if (w->base == NULL)
        goto fail_base;
    w->wake_ev = event_new(w->base, -1, 0, writer_wake_cb, w);
    w->tick_ev = event_new(w->base, -1, EV_PERSIST, writer_tick_cb, w);
    w->retry_ev = evtimer_new(w->base, writer_retry_cb, w);
    w->lane_ev = event_new(w->base, -1, 0, writer_lane_cb, w);
    if (w->wake_ev == NULL || w->tick_ev == NULL || w->retry_ev == NULL || w->lane_ev == NULL)
        goto fail_events;
    for (int i = 0; i < MONEY_NSCRIPTS; i++)
        w->scripts[i] = rconn_script_create(money_script_text(i));
    w->probe_script = rconn_script_create(writer_probe_lua);
    rconn_opts_t ro = {.host = w->host,
                       .port = c->redis_port,
                       .connect_timeout_ms = c->connect_timeout_ms,
                       .request_timeout_ms = c->request_timeout_ms,
                       .backoff_min_ms = c->backoff_min_ms,
                       .backoff_max_ms = c->backoff_max_ms,
                       .name = "money",
                       .on_state = writer_state_cb,
                       .arg = w,
                       .sentinels = c->redis_sentinels,
                       .master_name = c->redis_master,
                       .cluster = c->redis_cluster};
    w->rc = rconn_create(w->base, &ro); /* starts connecting; the loop runs it */
    if (w->rc == NULL)
        goto fail_rconn;
    struct timeval tick = {0, 100000};
    event_add(w->tick_ev, &tick);
    if (w->lane_on && pthread_create(&w->lane_thread, NULL, writer_lane_main, w) != 0)
        goto fail_lane;
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0)
        goto fail_thread;
    return w;

fail_thread:
    if (w->lane_on)
        writer_lane_stop(w);
fail_lane:
    rconn_destroy(w->rc);
fail_rconn:
    for (int i = 0; i < MONEY_NSCRIPTS; i++)
        rconn_script_destroy(w->scripts[i]);
    rconn_script_destroy(w->probe_script);
fail_events:
    if (w->wake_ev)
        event_free(w->wake_ev);
    if (w->tick_ev)
        event_free(w->tick_ev);
    if (w->retry_ev)
        event_free(w->retry_ev);
    if (w->lane_ev)
        event_free(w->lane_ev);
    event_base_free(w->base);
fail_base:
    log_emit(LOG_ERROR, "money_writer_start_failed", "{s:s}", "host", w->host);
    pthread_cond_destroy(&w->drained);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->lane_cv);
    pthread_mutex_destroy(&w->lane_mu);
    metrics_destroy(w->own_metrics);
    free(w->host);
    free(w->cluster);
    free(w->service);
    free(w);
    return NULL;
}

void money_writer_destroy(money_writer_t *w)
{
    if (w == NULL)
        return;
    /* A loopbreak from here is lost when the thread has not entered its loop yet (the loop
     * clears the flag when it starts); the wake event stays active until the loop runs it, and
     * it breaks the loop from inside. */
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    event_active(w->wake_ev, EV_READ, 0);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    if (w->lane_on) {
        writer_lane_stop(w);
        if (w->lane_item != NULL) {
            /* answered (or cancelled) after the loop stopped: it completes here */
            money_item_t *li = w->lane_item;
            money_result_t lr = w->lane_res;
            w->lane_item = NULL;
            if (!w->lane_done) {
                memset(&lr, 0, sizeof lr);
                lr.status = -ECANCELED;
                snprintf(lr.error, sizeof lr.error, "money writer destroyed");
            }
            writer_complete(w, li, &lr);
        }
    }

    /* The thread is gone; its state is ours now. Closing the connection runs every pending
     * callback with NULL, which requeues what was in flight. */
    w->holding = true;
    rconn_destroy(w->rc);
    w->rc = NULL;
    list_prepend(&w->pending, &w->flight);
    list_prepend(&w->pending, &w->acked);
    list_append(&w->pending, &w->queue);
    if (w->pending.n > 0)
        log_emit(LOG_ERROR, "money_writer_unflushed", "{s:I}", "items", (json_int_t)w->pending.n);
    money_item_t *it;
    while ((it = list_pop(&w->pending)) != NULL) {
        money_result_t r;
        memset(&r, 0, sizeof r);
        r.status = -ECANCELED;
        if (it->sends > 0) /* sent, never confirmed (no reply, or a WAIT that fell short) */
            snprintf(r.error, sizeof r.error,
                     "money writer destroyed before the item was confirmed (sent %d times: it "
                     "may have been applied; replaying the logged command is harmless)",
                     it->sends);
        else
            snprintf(r.error, sizeof r.error, "money writer destroyed before the item was written");
        writer_complete(w, it, &r);
    }
    writer_probe_end(w);
    while ((it = list_pop(&w->journal)) != NULL)
        writer_item_free(it);
    for (int i = 0; i < MONEY_NSCRIPTS; i++)
        rconn_script_destroy(w->scripts[i]);
    rconn_script_destroy(w->probe_script);
    event_free(w->wake_ev);
    event_free(w->tick_ev);
    event_free(w->retry_ev);
    event_free(w->lane_ev);
    event_base_free(w->base);
    pthread_cond_destroy(&w->drained);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->lane_cv);
    pthread_mutex_destroy(&w->lane_mu);
    metrics_destroy(w->own_metrics);
    free(w->host);
    free(w->cluster);
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
    money_item_t *it = w != NULL ? xcalloc(1, sizeof *it) : NULL;
    if (it == NULL || money_op_settle(w->service, s, &it->op) != 0) {
        /* money_op_settle() checked the settlement; ask again for the sentence to log. */
        char err[160] = "no writer";
        if (w != NULL && money_settlement_check(s, err, sizeof err) == 0)
            snprintf(err, sizeof err, "settlement rejected by money_op_settle");
        log_emit(LOG_ERROR, "money_settlement_invalid", "{s:s}", "error", err);
        free(it);
        return -EINVAL;
    }
    it->kind = MONEY_KIND_SETTLE;
    it->done = done;
    it->arg = arg;
    money_round_id_format(&s->round, it->id, sizeof it->id);
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
    /* A record that reveals a shoe is indexed by its commitment in the same script
     * (docs/hand-history.md "The shoe index"). */
    const char *shoes[MONEY_HISTORY_SHOES_MAX];
    size_t nshoes = money_history_shoes(history, shoes, MONEY_HISTORY_SHOES_MAX);
    rc = money_op_history(rid, game, json, w->cfg.history_maxlen, w->cfg.record_ttl_s, shoes,
                          nshoes, &it->op);
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

/* Queues an item whose op the caller built into it (rc its builder's result): on a refusal the
 * item is freed and why is logged. */
static int writer_submit_op(money_writer_t *w, money_item_t *it, int rc, const char *id,
                            const char *event, const char *why)
{
    if (rc != 0) {
        writer_item_free(it);
        log_emit(LOG_ERROR, event, "{s:s}", "error", why);
        return -EINVAL;
    }
    snprintf(it->id, sizeof it->id, "%s", id);
    return writer_enqueue(w, it);
}

static money_item_t *writer_item_new(money_kind_t kind, money_writer_done_cb done, void *arg)
{
    money_item_t *it = xcalloc(1, sizeof *it);
    it->kind = kind;
    it->done = done;
    it->arg = arg;
    return it;
}

static int writer_submit_wallet(money_writer_t *w, money_kind_t kind, const char *player,
                                int64_t amount, const char *op_id, money_writer_done_cb done,
                                void *arg)
{
    if (w == NULL)
        return -EINVAL;
    money_item_t *it = writer_item_new(kind, done, arg);
    int rc = money_op_wallet(kind, player, amount, op_id, w->cfg.record_ttl_s, &it->op);
    if (rc == 0 && w->lane_on) {
        /* The money by entity: a credit from nowhere (the house's funding) is money created,
         * xfer_seed's (the audit counts it as seeded); a debit into nowhere has no place. */
        if (kind != MONEY_KIND_CASHOUT)
            rc = -EINVAL;
        snprintf(it->seat_owner, sizeof it->seat_owner, "%s", player);
        it->amount = amount;
    }
    return writer_submit_op(
        w, it, rc, op_id, "money_wallet_op_invalid",
        "a wallet operation needs a valid player, op id and 0 < amount <= 1e14");
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

int money_writer_submit_seat(money_writer_t *w, money_kind_t kind, const money_seat_t *s,
                             int64_t amount, const char *op_id, money_writer_done_cb done,
                             void *arg)
{
    if (w == NULL)
        return -EINVAL;
    money_item_t *it = writer_item_new(kind, done, arg);
    int rc = money_op_seat(w->service, kind, s, amount, op_id, w->cfg.record_ttl_s, &it->op);
    if (rc == 0 && w->lane_on) {
        /* the seat lane's input (the op above is kept for the logs) */
        snprintf(it->seat_acct, sizeof it->seat_acct, "%s", s->account);
        snprintf(it->seat_owner, sizeof it->seat_owner, "%s", s->owner);
        it->seat = (money_seat_t){
            .slot = s->slot, .epoch = s->epoch, .account = it->seat_acct, .owner = it->seat_owner};
        it->amount = amount;
    }
    return writer_submit_op(w, it, rc, op_id, "money_seat_op_invalid",
                            "a seat transfer needs a service, an account and an owner "
                            "(different), an op id and 0 < amount <= 1e14");
}

int money_writer_submit_mark(money_writer_t *w, uint32_t slot, uint64_t epoch, const char *field,
                             const char *value, money_writer_done_cb done, void *arg)
{
    if (w == NULL)
        return -EINVAL;
    money_item_t *it = writer_item_new(MONEY_KIND_MARK, done, arg);
    int rc = money_op_mark(w->service, slot, epoch, field, value, &it->op);
    return writer_submit_op(w, it, rc, field, "money_mark_invalid",
                            "a round record needs a service, a field of 1..64 characters and a "
                            "value");
}

bool money_writer_can_start_round(const money_writer_t *w)
{
    return atomic_load(&w->depth) < w->cfg.high_watermark && atomic_load(&w->durable);
}

bool money_writer_durable(const money_writer_t *w)
{
    return atomic_load(&w->durable);
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
