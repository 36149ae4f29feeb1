/*
 * lease -- the server-ID lease: one slot of a pool [0, SIZE) per service, held in Redis.
 *
 * A game server needs an ID that no other live process holds (it is part of round ids and
 * settlement keys). It takes one slot of its service's pool with `SET key token NX PX ttl`,
 * renews it every ttl/3 and gives it back (compare-and-delete) only at the end of a graceful
 * exit. Dual ownership is worse than a restart, so the module fails fast.
 *
 * Redis keys (service S, slot n; all in one hash tag, so one script may touch all of them):
 *
 *   {croupier:lease:S}:slot:<n>         token of the holder, 32 hex digits (128 random bits
 *                                       from arc4random_buf), with PX ttl
 *   {croupier:lease:S}:epoch            counter INCRed by every acquisition; never expires
 *   {croupier:lease:S}:slot:<n>:epoch   THE FENCE: the epoch of the latest acquisition of
 *                                       slot n; never expires
 *
 * Fencing rule (settlements and the registry use it): a write made on behalf of slot n carries
 * the epoch its writer got with the slot (lease_epoch()). A Redis script applies the write only
 * if `GET {croupier:lease:S}:slot:<n>:epoch` equals the carried epoch, and otherwise answers
 * the error `STALE_EPOCH ...` and changes nothing. Every acquisition of slot n (and a renew
 * that found the key and the fence gone: Redis lost its data) stores a new, strictly larger
 * epoch in the fence, so a process that lost its slot -- e.g. it was paused longer than the TTL
 * while another process took the slot -- can no longer write anything, even if it has not noticed
 * yet. Exception: a holder whose key merely expired (Redis unreachable or restarted for longer than
 * the TTL, or the holder paused) takes it back under its SAME epoch when the fence still holds
 * that epoch -- proof that nobody held or recovered the slot in between (a recovery of a dead
 * slot's held chips moves the fence too, money.h) -- so its rounds still settle. When the fence
 * moved on, the renew answers LOST.
 * LEASE_FENCE_CHECK_LUA is the check to put at the top of such a script (fence key in KEYS[1],
 * carried epoch in ARGV[1]); LEASE_FENCED_SET_LUA is a complete example.
 *
 * Failover (docs/deploy.md "Failover and durability"): Redis replicates asynchronously, so a
 * promoted replica may lack an epoch the old master handed out. With opts.min_replicas, an
 * acquisition (and a regain under a new epoch) counts only once `WAIT min_replicas` on the same
 * connection confirms it; when WAIT falls short the epoch is not used and the acquisition is
 * tried again (it takes back the slot holding our token). Every epoch this process was given is
 * remembered, and the scripts lift the counter above the highest of them: an epoch lost in a
 * failover is never handed out to this process again, and one that was used was replicated
 * first. Logged as lease_not_durable; counted in lease_wait_short_total.
 *
 * States (lease_state()):
 *   ACQUIRING    no slot yet (Redis may also be unreachable: it is retried with backoff)
 *   EXHAUSTED    every slot is taken: no static fallback, ever. One log line names the rule
 *                `SIZE >= versions alive x replicas x 2`; retried with backoff; counted.
 *   VALID        held and confirmed by Redis within the local validity window
 *   UNCONFIRMED  held, but Redis has not confirmed a renew before the local validity ended
 *                (measured on CLOCK_BOOTTIME from when the renew was *sent*: ttl - margin_ms,
 *                the margin 10% of the TTL by default). Owners answer readiness 503 and open no
 *                new desks; croupier-game also stops every table then (self-fencing: it cannot
 *                know whether the key will outlive the partition, docs/queues.md).
 *                The next answer from Redis decides: still ours (or taken back) -> VALID,
 *                someone else's -> LOST.
 *   LOST         another process holds the slot. The owner must stop intake, answer readiness
 *                503 and exit with `exit reason=lease_lost`. Terminal.
 *   RELEASED     given back by lease_release(). Terminal.
 *
 * Threads: a lease lives on one event_base and is used only from its thread. It sends its
 * commands through the owner's rconn (whose request timeout should be at most ttl/3).
 *
 * Metrics: lease_renew_total{result="ok|regained|lost|error"}, lease_pool_in_use,
 * lease_epoch, lease_gaps_total, lease_exhausted_total, lease_valid (1 while VALID).
 *
 * Driving it from a game server's main loop (tests/integration/lease_holder.c does exactly this):
 *
 *     signal(SIGPIPE, SIG_IGN);
 *     rconn_t *rc = rconn_create(base, &(rconn_opts_t){.host = "127.0.0.1", .port = 6379,
 *                                .request_timeout_ms = ttl / 3, .connect_timeout_ms = ttl / 3});
 *     lease_t *l = lease_create(base, rc, &(lease_opts_t){.service = "holdem", .pool_size = 8,
 *                               .ttl_ms = ttl, .metrics = m, .on_event = on_lease, .arg = srv});
 *     lease_start(l);
 *
 *     on_lease(l, ev, srv):
 *         ACQUIRED     -> server ID = lease_slot(l); open listeners; registry_start(); ready
 *         UNCONFIRMED  -> readiness 503, no new desks (running rounds go on)
 *         CONFIRMED / REGAINED -> ready again (REGAINED under a new epoch -- Redis lost its
 *                                 data -- a game server exits: its tables' seat accounts are
 *                                 named by the old epoch)
 *         LOST         -> stop intake, readiness 503, log exit reason=lease_lost, exit
 *         EXHAUSTED    -> stay unready (the module already logged the sizing rule and retries)
 *     ready = lease_state(l) == LEASE_VALID && registered && !draining
 *
 *     graceful exit: ... flush settlements -> registry_deregister() -> lease_release(l, done)
 *                    -> done: lease_destroy(l); rconn_destroy(rc); exit
 */
#ifndef CROUPIER_LEASE_H
#define CROUPIER_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "rconn.h"

struct event_base;

typedef struct lease lease_t;

typedef enum {
    LEASE_ACQUIRING = 0,
    LEASE_EXHAUSTED,
    LEASE_VALID,
    LEASE_UNCONFIRMED,
    LEASE_LOST,
    LEASE_RELEASED,
} lease_state_t;

typedef enum {
    LEASE_EV_ACQUIRED,    /* ACQUIRING/EXHAUSTED -> VALID: lease_slot(), lease_epoch() are set */
    LEASE_EV_EXHAUSTED,   /* the pool was full on an attempt (every attempt, not only the 1st) */
    LEASE_EV_RENEWED,     /* a renew confirmed the slot (state stays VALID) */
    LEASE_EV_UNCONFIRMED, /* VALID -> UNCONFIRMED */
    LEASE_EV_CONFIRMED,   /* UNCONFIRMED -> VALID, same epoch */
    LEASE_EV_REGAINED,    /* the key had vanished and was taken back: gap; VALID. The same
                             epoch (the fence proved nobody held the slot meanwhile), or a new
                             one only after Redis lost its data (the fence was gone) */
    LEASE_EV_LOST,        /* -> LOST: exit with reason lease_lost */
} lease_event_t;

typedef void (*lease_event_cb)(lease_t *l, lease_event_t ev, void *arg);
/* result: 0 released; -ENOENT the slot was no longer ours (nothing deleted); -ENOTCONN or
 * -ETIMEDOUT Redis did not answer (the key expires by itself within the TTL). */
typedef void (*lease_done_cb)(lease_t *l, int result, void *arg);

typedef struct {
    const char *service;         /* [A-Za-z0-9_.-]{1,64}; copied */
    int pool_size;               /* SIZE, 1..100000 */
    int ttl_ms;                  /* >= 30; renewals every ttl/3 */
    metrics_registry_t *metrics; /* may be NULL (a private registry is used) */
    lease_event_cb on_event;     /* may be NULL */
    void *arg;
    /* Durability (see "Failover"): a new epoch counts only after `WAIT min_replicas` confirms
     * it within wait_timeout_ms (default 500, at most ttl/6). 0 = no WAIT. */
    int min_replicas;
    int wait_timeout_ms;
    /* The fence margin: the lease turns UNCONFIRMED (LEASE_EV_UNCONFIRMED) once ttl - margin_ms
     * have passed since the last confirmed command was SENT with no newer confirmation. Redis
     * cannot expire the key before send + ttl, so an owner that stops everything on
     * UNCONFIRMED has stopped margin_ms before anyone else may take the slot (docs/queues.md "A
     * server cut off from Redis"). 0 = ttl/10; else 1 <= margin_ms < ttl/3 (renewals, every
     * ttl/3, get two chances before it). */
    int margin_ms;
} lease_opts_t;

/* Checks the options and creates an idle lease. Returns NULL with errno EINVAL on bad options.
 * rc (not owned) must outlive the lease's use; base likewise. */
lease_t *lease_create(struct event_base *base, rconn_t *rc, const lease_opts_t *opts);

/* Starts acquiring (at once, then with backoff). Returns 0, or -EALREADY if already started. */
int lease_start(lease_t *l);

/*
 * Stops renewing and gives the slot back with a compare-and-delete, then calls done (always
 * exactly once, possibly before this returns when there is nothing to release). The fence key
 * is kept. Call it only at the end of a graceful exit, after settlements are flushed.
 */
void lease_release(lease_t *l, lease_done_cb done, void *arg);

/* Frees the lease without releasing the slot (it expires within the TTL). Replies still in
 * flight are ignored. May be called from inside its own on_event and done callbacks.
 * NULL is a no-op. */
void lease_destroy(lease_t *l);

lease_state_t lease_state(const lease_t *l);
const char *lease_state_name(lease_state_t s);
const char *lease_event_name(lease_event_t e);
/* The slot number (server ID) or -1 before the first acquisition. Kept after LOST. */
int lease_slot(const lease_t *l);
/* The fencing epoch of the current holding, 0 before the first acquisition. */
int64_t lease_epoch(const lease_t *l);
/* Times the key vanished and was taken back. */
uint64_t lease_gaps(const lease_t *l);
const char *lease_service(const lease_t *l);
int lease_ttl_ms(const lease_t *l);
int lease_margin_ms(const lease_t *l); /* the fence margin in effect (lease_opts_t.margin_ms) */
/* The token as 32 hex digits. */
const char *lease_token(const lease_t *l);

/* Writes the key names of a service's slot (see above). Return snprintf-like lengths, or
 * -ENOSPC if len is too small. */
int lease_format_slot_key(const char *service, int slot, char *buf, size_t len);
int lease_format_fence_key(const char *service, int slot, char *buf, size_t len);
int lease_format_epoch_key(const char *service, char *buf, size_t len);

/*
 * The fence check for a Lua script: KEYS[1] = the fence key, ARGV[1] = the carried epoch
 * (decimal). Rejects with an error reply starting with STALE_EPOCH when they differ (also when
 * the fence is missing). Put it first in the script, then do the write.
 */
#define LEASE_FENCE_CHECK_LUA                                                                      \
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then "                                               \
    "return redis.error_reply('STALE_EPOCH fenced write rejected: epoch ' .. ARGV[1] .. "          \
    "' is not the slot epoch ' .. tostring(redis.call('GET', KEYS[1]))) end\n"

/* Example fenced write: SET KEYS[2] ARGV[2] if the fence holds, returns 1. */
#define LEASE_FENCED_SET_LUA LEASE_FENCE_CHECK_LUA "redis.call('SET', KEYS[2], ARGV[2]) return 1\n"

/*
 * SETs key to value (binary-safe) fenced by this lease's slot and epoch, with
 * LEASE_FENCED_SET_LUA. cb gets the reply: integer 1, or an error starting with STALE_EPOCH.
 * Returns 0 (cb will run once), -ENOENT before any acquisition, or an rconn error.
 */
int lease_fenced_set(lease_t *l, const char *key, const char *value, size_t len, rconn_reply_cb cb,
                     void *arg);

#endif
