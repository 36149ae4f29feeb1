/*
 * rguard -- refuses a Redis that can lose data silently (docs/deploy.md "Redis must not
 * evict").
 *
 * croupier keeps every chip, lease and fence in Redis. A Redis configured to evict
 * (`maxmemory-policy` other than `noeviction`) deletes keys when its memory is full -- wallets,
 * seat accounts, lease keys, fences -- and nothing tells the client: a drill with
 * `allkeys-lru` lost 98.7 % of all chips without one error. With `noeviction`, a full Redis
 * refuses writes with `OOM` instead, which croupier retries (nothing is lost).
 *
 * A guard has a connection of its own (common/rconn.h; with sentinels it follows the master
 * through failovers) and reads `INFO` at every (re)connect and then every interval_ms:
 *
 *   maxmemory_policy   the verdict: SAFE for `noeviction`, EVICTING for any other policy
 *   evicted_keys       exported as redis_evicted_keys (Redis's own counter since its start or
 *                      its last CONFIG RESETSTAT): above 0, keys were lost
 *   used_memory, maxmemory (or total_system_memory when maxmemory is 0)
 *                      exported as redis_used_memory_bytes, redis_maxmemory_bytes and
 *                      redis_memory_headroom_ratio (1 - used / limit)
 *
 * What a verdict means is the owner's (croupier-game: EVICTING at start exits 2 before the
 * lease is taken; later it makes the server unready and starts no round; croupier-gate: exits
 * 2 at start, unready later). opts.allow_eviction (the flag --redis-allow-eviction, for tests
 * only) keeps the verdict and the metrics as they are but rguard_blocks() false, and every
 * check that finds an evicting policy logs a warning.
 *
 * Logs: `redis_eviction_policy` (error, with the policy and what to set) on every change to
 * EVICTING and every 60 s while it lasts; `redis_eviction_policy_ok` on the change back;
 * `redis_keys_evicted` (error) whenever evicted_keys grew since the last read.
 *
 * Threads: a guard lives on one event_base. rguard_verdict() and rguard_blocks() may be read
 * from any thread (atomics).
 */
#ifndef CROUPIER_RGUARD_H
#define CROUPIER_RGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "rconn.h"

struct event_base;

typedef struct rguard rguard_t;

typedef enum {
    RGUARD_UNKNOWN = 0, /* not read yet (Redis not reached yet) */
    RGUARD_SAFE,        /* maxmemory-policy noeviction */
    RGUARD_EVICTING,    /* any other policy: keys may vanish */
} rguard_verdict_t;

/* Called on the base's thread whenever the verdict changes (UNKNOWN -> SAFE counts). */
typedef void (*rguard_change_cb)(rguard_t *g, rguard_verdict_t v, void *arg);

typedef struct {
    rconn_opts_t conn;           /* the guard's own connection (on_state and arg are its own) */
    int interval_ms;             /* between two reads; 0 = 1000 */
    bool allow_eviction;         /* --redis-allow-eviction: never block (tests only) */
    metrics_registry_t *metrics; /* may be NULL */
    rguard_change_cb on_change;  /* may be NULL */
    void *arg;
} rguard_opts_t;

/* What one INFO reply says (rguard_parse_info). Absent numbers are -1. */
typedef struct {
    char policy[32];     /* "" when absent */
    int64_t maxmemory;   /* bytes; 0 = no limit */
    int64_t used_memory; /* bytes */
    int64_t total_system_memory;
    int64_t evicted_keys;
} rguard_info_t;

/* Creates the guard and starts connecting. Returns NULL with errno EINVAL on bad options. */
rguard_t *rguard_create(struct event_base *base, const rguard_opts_t *opts);
void rguard_destroy(rguard_t *g); /* NULL is a no-op */

rguard_verdict_t rguard_verdict(const rguard_t *g);
/* True while the verdict is EVICTING and eviction is not allowed. */
bool rguard_blocks(const rguard_t *g);
/* The policy last read ("" before the first read). Base thread only. */
const char *rguard_policy(const rguard_t *g);
/* The line to log or print for an evicting policy (names the setting and the fix). */
const char *rguard_why(void);

/* Parses the text of an INFO reply (lines "key:value\r\n", sections "# Name"). Returns 0, or
 * -EINVAL when no maxmemory_policy line is in it. */
int rguard_parse_info(const char *text, size_t len, rguard_info_t *out);

#endif
