/*
 * money_sweeper -- returns the chips that dead servers held (money.h "Held chips",
 * docs/queues.md "Where every chip is").
 *
 * Every croupier-game runs one: a thread with its own blocking Redis connection that, every
 * interval_ms, reads the index of held epochs ({croupier:money}:held) and for each epoch that
 * is not its own server's:
 *   - the fence of its slot has moved past it (the slot was taken again, or a recovery moved
 *     it) or is gone: recovers it at once (MONEY_RECOVER_DEAD). The next holder of a slot
 *     therefore returns its predecessor's chips within one sweep of its start (kick it);
 *   - the fence still equals it and the slot's lease key exists: alive, left alone;
 *   - the fence still equals it but nobody holds the slot: the server stopped renewing (killed,
 *     paused, cut off). Once the sweeper has seen the slot unheld for grace_ms without a break
 *     (observations restart whenever its own connection to Redis fails, so the time Redis was
 *     away never counts), it claims the epoch (MONEY_RECOVER_CLAIM: the fence moves, then the
 *     chips go back and the rounds in progress are voided). The grace is what lets a holder
 *     whose key only expired -- Redis restarted, a long GC-like pause -- take its slot back
 *     under the same epoch (lease.h) and settle everything it played.
 * Any number of sweepers may race: each recovery step re-checks in its script.
 *
 * Metrics: money_recoveries_total{mode="dead|claim"}, money_recovered_chips_total,
 * money_recovered_rounds_voided_total, money_held_epochs (index size at the last sweep),
 * money_sweep_errors_total.
 */
#ifndef CROUPIER_MONEY_SWEEPER_H
#define CROUPIER_MONEY_SWEEPER_H

#include <stdint.h>

#include "metrics.h"

typedef struct money_sweeper money_sweeper_t;

typedef struct {
    const char *redis_host; /* IP literal */
    int redis_port;
    /* with redis_master: each connect resolves the master through Redis Sentinel first
     * (common/sentinel.h); both copied */
    const char *redis_sentinels;
    const char *redis_master;
    /* "IP:PORT,..." seeds of a Redis Cluster: each connect goes to the master of the money
     * slot (rcluster_master_addr); copied */
    const char *redis_cluster;
    int interval_ms;             /* between sweeps; default 1000 */
    int grace_ms;                /* an unheld slot counts as dead after this long; default 12000 */
    long history_maxlen;         /* for the voided rounds' histories; default 100000 */
    int min_replicas;            /* the money by entity: WAIT for the recovery's transfers */
    metrics_registry_t *metrics; /* may be NULL; borrowed, must outlive the sweeper */
} money_sweeper_config_t;

/* Starts the thread. NULL on bad config (logged). */
money_sweeper_t *money_sweeper_create(const money_sweeper_config_t *cfg);
/* The sweeper's own server (never swept while it is the fence); any thread. Also runs a sweep
 * at once (the new holder of a slot returns its predecessors' chips). */
void money_sweeper_set_own(money_sweeper_t *s, const char *service, uint32_t slot, uint64_t epoch);
/* Runs a sweep now (any thread). */
void money_sweeper_kick(money_sweeper_t *s);
/* Stops and joins the thread. NULL is a no-op. */
void money_sweeper_destroy(money_sweeper_t *s);

#endif
