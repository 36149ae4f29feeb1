/*
 * money_writer -- the one in-process queue through which money and hand histories leave desks.
 *
 * Desks on any worker thread submit settlements, hand histories, buy-ins and cash-outs. A
 * writer thread with its own event_base and its own connection (common/rconn.h: connect and
 * request timeouts, reconnect with backoff, EVALSHA with NOSCRIPT fallback) drains the queue to
 * Redis with pipelining (up to max_inflight items in at most 4 calls in flight; runs of
 * consecutive settlements share one call of the settle script, up to batch_max rounds, each
 * still all-or-nothing: an idle Redis gets each item at once, a busy one bigger batches).
 * All items travel in one FIFO over one connection, so Redis applies them in submission order;
 * in particular a desk's later item is never applied before an earlier one. When the connection
 * fails, a request times out (Redis down, hung, restarting) or Redis answers a server-wide
 * transient error (LOADING, BUSY, READONLY, OOM, NOREPLICAS, MISCONF), every unanswered item goes
 * back to the head of the queue in its original order and is sent again after a backoff pause;
 * answers still to come for the earlier sends are ignored. The scripts are idempotent by round /
 * operation id, so sending again never applies twice (the second answer says replayed, with the
 * first result).
 *
 * Bounded without dropping: submit never refuses an item for lack of room (a settlement is
 * never dropped). Instead, once the depth reaches high_watermark, money_writer_can_start_round()
 * answers false and desks must not start new rounds; the depth is then bounded by the watermark
 * plus what the rounds already running settle.
 *
 * Durability (min_replicas > 0, docs/deploy.md "Failover and durability"): Redis replicates
 * asynchronously, so a master that fails over may take acknowledged writes with it. Each item
 * is therefore completed only after a `WAIT min_replicas wait_timeout_ms` sent behind it on the
 * same connection reports at least min_replicas replicas. One WAIT covers every call answered
 * before it (at most one WAIT is in flight; the calls sent meanwhile get the next one), so a
 * whole batch costs one WAIT. A WAIT that falls short (or is refused, or unanswered) sends every
 * unacknowledged item again under its id after the backoff -- the scripts answer "replayed" with
 * the first result -- and until a WAIT succeeds money_writer_can_start_round() answers false
 * (the same back-pressure as the high watermark), logged once per change as
 * money_writer_not_durable with the reason and money_writer_durable when it is over.
 *
 * Replay journal (docs/deploy.md "Failover and durability"): with min_replicas 1 and two
 * replicas, Sentinel may promote the replica that lacks the newest acknowledged operations. So
 * every operation that completed with MONEY_OK stays in a journal for replay_window_ms after it
 * was first sent (at most replay_max_items / replay_max_bytes; the window must stay below the
 * records' TTL, record_ttl_s, which is checked at create). After every reconnect, before
 * anything else is sent, the writer asks the master (one small read-only script per 512
 * entries) which journal entry is the newest present -- by its idempotency record (round, op,
 * seat op, history seen record) or, for a mark, its held-HASH field holding its value -- from
 * the newest back. The master's data is a prefix of the stream this writer's one connection
 * wrote in send order, so everything before that entry is there and everything after it is
 * missing: exactly those entries are sent again, in their original order, ahead of the items
 * not yet completed. Blind replay of the whole journal would not be safe (a mark sent again
 * after a later operation undid it would resurrect it). A replay reports to nobody (the
 * callers had their results); a replayed operation the master refuses is logged
 * (money_writer_replay_failed). When anything was missing: money_writer_replayed {count,
 * probed, reason} and money_writer_replayed_total; a reconnect where nothing was missing logs
 * nothing. Not covered: money/jobs.c and money/credit.c write on connections of their own (they
 * wait for every connected replica instead: money_sync_wait_replicas).
 *
 * Completion: each item may carry a done callback. It runs on the writer thread with a result
 * the callback owns (free() it); it must not block -- post the result to the desk (e.g. a
 * runtime post) and return.
 *
 * Shutdown: money_writer_flush() drains everything (call it after intake stopped and before
 * the lease is released); money_writer_destroy() then stops the thread. Items still queued at
 * destroy (only if flush timed out) complete with -ECANCELED and are logged.
 *
 * The money by entity (money.h, money_set_entity; docs/queues.md "The game server's money by
 * entity"): seat transfers and the house's funding run on a seat lane (a thread with
 * money/mcluster.h) as barriers in the FIFO; the replay journal is off; each WAIT is one per
 * slot written (the epoch's, the money slot's).
 *
 * Metrics (when a registry is given): money_writer_depth, money_writer_oldest_age_seconds,
 * money_writer_write_seconds (send -> reply), money_writer_retries_total (items sent again),
 * money_writer_items_total{kind,outcome}, money_writer_reconnects_total; with min_replicas:
 * money_writer_durable (1/0), money_writer_wait_short_total, money_writer_wait_seconds; the
 * journal: money_writer_journal_items, money_writer_journal_bytes, money_writer_replayed_total,
 * money_writer_journal_checks_total.
 */
#ifndef CROUPIER_MONEY_WRITER_H
#define CROUPIER_MONEY_WRITER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "money.h"

typedef struct money_writer money_writer_t;

#define MONEY_WRITER_BATCH_CAP 256
#define MONEY_WRITER_REPLAY_WINDOW_MS 60000
#define MONEY_WRITER_REPLAY_MAX_ITEMS 65536
#define MONEY_WRITER_REPLAY_MAX_BYTES (64u << 20)

/* Called on the writer thread; owns res (free it). res->arg is the submit's arg. */
typedef void (*money_writer_done_cb)(money_result_t *res, void *arg);

typedef struct {
    const char *redis_host; /* IP literal (hiredis resolves names with blocking calls) */
    int redis_port;
    const char *redis_sentinels; /* with redis_master: rconn's sentinel mode (common/rconn.h) */
    const char *redis_master;
    const char *redis_cluster; /* "IP:PORT,..." seeds: rconn's cluster mode (common/rconn.h) */
    const char *service;   /* lease service: fence {croupier:lease:<service>}:slot:<n>:epoch */
    size_t high_watermark; /* default 4096 */
    size_t max_inflight;   /* items sent and not answered; default 1024 */
    size_t batch_max;      /* settlements per EVALSHA; default 64 (128 with min_replicas), <= 256 */
    int connect_timeout_ms; /* default 1000 */
    int request_timeout_ms; /* default 2000: no reply for this long = connection is dead */
    int backoff_min_ms;     /* default 50 */
    int backoff_max_ms;     /* default 2000 */
    long history_maxlen;    /* XADD MAXLEN ~ cap; default 100000 */
    long record_ttl_s;      /* idempotency records; default MONEY_RECORD_TTL_S */
    int min_replicas;       /* WAIT for this many replicas before completing; 0 = no WAIT */
    int wait_timeout_ms;    /* WAIT's bound; default 500 (request_timeout_ms is kept above it) */
    /* Replay journal (see above): 0 = MONEY_WRITER_REPLAY_WINDOW_MS, < 0 = no journal; it must
     * be below record_ttl_s (create refuses it otherwise). */
    int replay_window_ms;
    size_t replay_max_items;     /* 0 = MONEY_WRITER_REPLAY_MAX_ITEMS */
    size_t replay_max_bytes;     /* 0 = MONEY_WRITER_REPLAY_MAX_BYTES */
    metrics_registry_t *metrics; /* may be NULL; borrowed, must outlive the writer */
} money_writer_config_t;

/* Starts the writer thread and begins connecting. Returns NULL on bad config (logged: e.g. a
 * replay window at or above the record TTL). */
money_writer_t *money_writer_create(const money_writer_config_t *cfg);
/* Stops the thread; unfinished items complete with -ECANCELED. NULL is a no-op. */
void money_writer_destroy(money_writer_t *w);

/*
 * Submissions, safe from any thread. The data is copied (and for histories serialized) before
 * return. Return 0, or -EINVAL for malformed input (nothing queued, done not called), or
 * -ESHUTDOWN after destroy began. done may be NULL.
 */
int money_writer_submit_settle(money_writer_t *w, const money_settlement_t *s,
                               money_writer_done_cb done, void *arg);
/* history: a hand history (money_history_valid); the reference is stolen, even on error. */
int money_writer_submit_history(money_writer_t *w, const char *game, json_t *history,
                                money_writer_done_cb done, void *arg);
int money_writer_submit_buyin(money_writer_t *w, const char *player, int64_t amount,
                              const char *op_id, money_writer_done_cb done, void *arg);
int money_writer_submit_cashout(money_writer_t *w, const char *player, int64_t amount,
                                const char *op_id, money_writer_done_cb done, void *arg);

/* A seat transfer (kind MONEY_KIND_SEAT_IN or _SEAT_OUT, money.h "Held chips") under the
 * writer's service; res->balances[0] is the owner's balance after. */
int money_writer_submit_seat(money_writer_t *w, money_kind_t kind, const money_seat_t *s,
                             int64_t amount, const char *op_id, money_writer_done_cb done,
                             void *arg);
/* Records a round in progress in the held HASH of (service, slot, epoch): field (e.g.
 * "r:<desk hex>", replaced by the desk's next round) = value (the round start's JSON). */
int money_writer_submit_mark(money_writer_t *w, uint32_t slot, uint64_t epoch, const char *field,
                             const char *value, money_writer_done_cb done, void *arg);

/* False while the depth is at or above the high watermark, or while money cannot be made
 * durable (a WAIT fell short, see "Durability"): desks must not start rounds. */
bool money_writer_can_start_round(const money_writer_t *w);
/* False from a WAIT that fell short until the next one that succeeds (always true without
 * min_replicas). */
bool money_writer_durable(const money_writer_t *w);
/* Items submitted and not yet completed. */
size_t money_writer_depth(const money_writer_t *w);
/* Age of the oldest uncompleted item in ms (0 when empty). */
int64_t money_writer_oldest_age_ms(money_writer_t *w);
/* Whether the writer's connection is up with scripts loaded. */
bool money_writer_connected(const money_writer_t *w);

/*
 * Blocks until every item submitted before and during the call has completed, or timeout_ms
 * passes. Returns how many items completed during the flush, or -ETIMEDOUT (items remain;
 * see money_writer_depth). Safe to call more than once; submissions stay allowed.
 */
long money_writer_flush(money_writer_t *w, int timeout_ms);

#endif
