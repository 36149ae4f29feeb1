/*
 * xfer -- moving chips between two accounts in different Redis Cluster slots (docs/queues.md,
 * "Redis Cluster: keys by entity and transfers between slots"; issue 34).
 *
 * One script can only touch one slot, so a move between a player's wallet and a seat account, a
 * prize pool or the house cannot be atomic once the keys live in their owners' slots. It is done
 * in steps, each one script in one slot, each idempotent by the transfer id the caller chooses:
 *
 *   1. DEBIT on the source's slot: the balance goes down and an outbox record
 *      {tag}:xo:<id> (id, source, destination, amount, state DEBITED, created) is written with
 *      it, indexed in {tag}:xo, that index named in the slot's registry {Q}:xq (the sweeper's
 *      way to it). Made durable with WAIT (opts.wait_replicas) before step 2.
 *   2. CREDIT on the destination's slot, deduplicated by the applied record {dtag}:xa:{tag}:<id>,
 *      which also keeps a refusal (closed account, a key that holds no balance, over the
 *      maximum): the decision, once taken, is final. Made durable with WAIT as well.
 *   3. ACK on the source's slot: DEBITED -> COMPLETED (the record then expires), or, when the
 *      destination refused, REFUND: the amount goes back to the source, DEBITED -> REFUNDED.
 *
 * No other transition exists. Every step is safe to resend (RCLUSTER_RESEND): a lost reply is
 * answered by the same step again, which finds its own record and changes nothing. A transfer
 * left DEBITED (the process died, a WAIT fell short, the destination's master was unreachable)
 * is finished by xfer_sweep(), which any number of processes may run at once, or by calling
 * xfer_transfer() again with the same arguments.
 *
 * Accounts are keys of the layout in docs/queues.md: `{TAG}:bal` or `{TAG}:bal:SUB`, the tag
 * naming the owner (`{p:<player>}` a wallet, `{s:<service>:<slot>:<epoch>}` a server epoch's
 * seat accounts, `{t:<tournament>}` a prize pool, `{house}` the house). A missing key is a
 * balance of 0. Amounts are integers 1..XFER_MAX_AMOUNT.
 *
 * Threads: an xfer_t is used by one thread at a time, like the rcluster_t it borrows.
 */
#ifndef CROUPIER_XFER_H
#define CROUPIER_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rcluster.h"

/* The largest amount and balance (as money.h's MONEY_MAX_AMOUNT: Lua's doubles stay exact). */
#define XFER_MAX_AMOUNT 100000000000000LL
/* Longest account key and transfer id (bytes, without the NUL). */
#define XFER_MAX_KEY 200
#define XFER_MAX_ID 100

typedef enum {
    XFER_NONE = 0,
    XFER_DEBITED,   /* in flight: debited at the source, not yet settled */
    XFER_COMPLETED, /* credited at the destination and acknowledged */
    XFER_REFUNDED,  /* the destination refused for good; the source was credited back */
} xfer_state_t;

/* "DEBITED", "COMPLETED", "REFUNDED" ("NONE" for XFER_NONE). */
const char *xfer_state_name(xfer_state_t s);

/* ---- pure checks (no Redis) ---------------------------------------------------------------- */

/*
 * Whether key is an account key: `{TAG}:bal` or `{TAG}:bal:SUB`, TAG 1.. bytes without `{` or
 * `}`, SUB 1.. bytes, all printable ASCII without spaces, at most XFER_MAX_KEY bytes. 0, or
 * -EINVAL with one line in err.
 */
int xfer_account_check(const char *key, char *err, size_t errlen);
/* Whether id is a transfer id: 1..XFER_MAX_ID bytes of [A-Za-z0-9_.:-]. 0 or -EINVAL (err). */
int xfer_id_check(const char *id, char *err, size_t errlen);
/*
 * The whole input of a transfer: both accounts and the id valid, amount 1..XFER_MAX_AMOUNT, the
 * two accounts in different slots (one slot needs no transfer: one script moves it). 0, or
 * -EINVAL with one line in err.
 */
int xfer_args_check(const char *id, const char *src, const char *dst, long long amount, char *err,
                    size_t errlen);
/*
 * The key of a tag's item: `{TAG}` of account (the bytes up to and including its first `}`)
 * followed by suffix, e.g. ":xo" (the outbox index), ":xo:<id>" (an outbox record). Writes at
 * most len bytes; returns 0, or -EINVAL when account has no tag or the key would not fit.
 */
int xfer_tag_key(const char *account, const char *suffix, char *out, size_t len);

/* ---- the protocol ---------------------------------------------------------------------------- */

typedef struct {
    int wait_replicas;   /* WAIT for this many replicas after the debit and after the credit;
                            0 = no WAIT (a failover may then lose a step: docs/queues.md) */
    int wait_timeout_ms; /* bound of each WAIT; 0 = 500 */
    int record_ttl_s;    /* life of settled outbox records and of applied records (the window
                            in which a resend is recognised); 0 = 7 days */
    int stale_margin_ms; /* the sweeper leaves alone (and counts as stale) a transfer older than
                            record_ttl_s minus this: its applied record may have expired, and a
                            credit sent again could apply twice; 0 = 1 hour (at most half the
                            ttl) */
} xfer_opts_t;

typedef struct xfer xfer_t;

/*
 * A transfer engine over a cluster client, which it borrows (rc must outlive it and is used by
 * the same thread). opts may be NULL (the defaults). Never NULL (allocation aborts).
 */
xfer_t *xfer_create(rcluster_t *rc, const xfer_opts_t *opts);
void xfer_destroy(xfer_t *x); /* NULL is a no-op */

typedef struct {
    xfer_state_t state; /* where the transfer stands (XFER_NONE: nothing was debited) */
    bool replayed;      /* the debit had been made before (a resend, or the sweeper) */
    char reason[640];   /* why, for anything but a first-time COMPLETED */
} xfer_result_t;

/*
 * Moves amount from src to dst (accounts in different slots) under the transfer id id, through
 * the steps above. Sending it again with the same arguments is safe at any time and goes on
 * from where the transfer stands. Returns:
 *   0        final: res->state COMPLETED, or REFUNDED (res->reason says why the destination
 *            refused);
 *   -EAGAIN  in flight (DEBITED): a WAIT fell short, or the destination could not be reached
 *            or refused for a while (OOM, READONLY ...); the sweeper or a resend finishes it;
 *   -EINVAL  bad input (nothing sent), -EEXIST the id names another transfer, -ENOSPC the
 *            source holds less than amount, -EPERM the source is closed or holds no balance:
 *            nothing was debited (-EEXIST at the credit: the source reused an id after its
 *            records expired; the transfer stays DEBITED for an operator);
 *   -EIO     the source's slot did not answer: whether the debit happened is unknown (resend);
 *   -ESTALE  still DEBITED after record_ttl_s - stale_margin_ms: the credit's record may be gone,
 *            so nothing is sent (docs/queues.md says how to settle it by hand).
 * res->reason has one line for anything but a first-time COMPLETED.
 */
int xfer_transfer(xfer_t *x, const char *id, const char *src, const char *dst, long long amount,
                  xfer_result_t *res);

/* A transfer's outbox record. */
typedef struct {
    xfer_state_t state;
    char src[XFER_MAX_KEY + 1], dst[XFER_MAX_KEY + 1];
    long long amount;
    long long created_ms, updated_ms; /* the source master's clock (Unix ms) */
    long long drives;                 /* how many times the debit step ran for it */
    char reason[160];                 /* a refund's reason */
} xfer_record_t;

/*
 * Reads transfer id from the outbox of src. 0; -ENOENT no such transfer in that outbox (never
 * made, or settled longer than record_ttl_s ago); -EINVAL bad key or id; -EIO Redis.
 * rec may be NULL.
 */
int xfer_status(xfer_t *x, const char *src, const char *id, xfer_record_t *rec);
/*
 * Finishes transfer id of src's outbox from its record (what the sweeper does for one): returns
 * like xfer_transfer(), and -ENOENT (reason: unknown transfer id) when the outbox has no such
 * record.
 */
int xfer_resume(xfer_t *x, const char *src, const char *id, xfer_result_t *res);

/*
 * Closes (or opens again) an account for credits: a credit to a closed account is refused for
 * good and its transfer refunded; a debit from it is refused. 0, -EINVAL bad key, -EIO Redis.
 */
int xfer_account_close(xfer_t *x, const char *account, bool closed);

/*
 * Creates money: adds amount (1..XFER_MAX_AMOUNT) to account and to its tag's minted total
 * {TAG}:xm, which the audit counts as seeded. Idempotent by op (an id as a transfer id) for
 * record_ttl_s. 0 (also when replayed), -EINVAL, -EIO, -EPERM (the key holds no balance).
 */
int xfer_seed(xfer_t *x, const char *account, long long amount, const char *op);

/* The balance of an account (0 when absent). 0, -EINVAL, -EIO, -EPERM (no integer there). */
int xfer_balance(xfer_t *x, const char *account, long long *out);

/* Why the last call failed (one line, "" if none); storage inside x. */
const char *xfer_last_error(const xfer_t *x);

/* ---- the sweeper ----------------------------------------------------------------------------- */

typedef struct {
    size_t masters;   /* masters scanned */
    size_t outboxes;  /* outbox indexes found in the registries (tags with a transfer in flight) */
    size_t due;       /* DEBITED transfers older than the threshold (and not stale) */
    size_t completed; /* ... finished as COMPLETED by this sweep */
    size_t refunded;  /* ... finished as REFUNDED */
    size_t pending;   /* ... still in flight (-EAGAIN: tried again at the next sweep) */
    size_t stale;     /* DEBITED transfers left alone: older than record_ttl_s - stale_margin_ms
                         (logged as xfer_stale; they never hold the others back) */
    size_t errors;    /* Redis errors (the sweep went on) */
} xfer_sweep_stats_t;

/*
 * One pass: the slot map refreshed, on every master (a connection of the sweep's own) the
 * registry of each slot it serves ({Q}:xq, the slot's outbox indexes that hold a transfer in
 * flight; 16384 small reads in all, pipelined), then for every index named there ({TAG}:xo, the
 * tag's DEBITED transfers by creation time) every transfer created more than older_than_ms ago
 * (the master's clock) is finished as xfer_resume() does. Safe to run in any number of
 * processes at once: every step is idempotent. Blocking: call it from a thread or job of its
 * own, every few seconds. st may be NULL. Returns 0, or -EIO when a master could not be read
 * (the others were; stats hold what was done; xfer_last_error() says which).
 */
int xfer_sweep(xfer_t *x, long long older_than_ms, xfer_sweep_stats_t *st);

/* ---- the conservation audit ------------------------------------------------------------------ */

/* Where an account's chips are, by its tag and name (docs/queues.md "Keys by entity"). */
typedef enum {
    XFER_PLACE_WALLET,     /* {p:<player>}:bal */
    XFER_PLACE_SEAT,       /* {s:<service>:<slot>:<epoch>}:bal:<account>: a seat account */
    XFER_PLACE_EPOCH_RAKE, /* {s:...}:bal:rake:<game>: rake an epoch's rounds collected */
    XFER_PLACE_POOL,       /* {t:<id>}:bal...: a tournament's prize pool */
    XFER_PLACE_HOUSE,      /* {house}:bal...: the house */
    XFER_PLACE_OTHER,      /* any other tag */
    XFER_NPLACES
} xfer_place_t;

/* The place of an account key (XFER_PLACE_OTHER for anything not named above). */
xfer_place_t xfer_account_place(const char *key);
/* "wallets", "seat accounts", "epochs' rake", "prize pools", "house", "other". */
const char *xfer_place_name(xfer_place_t p);

typedef struct {
    size_t masters;
    size_t accounts;    /* account keys found */
    long long balances; /* their sum */
    long long seeded;   /* sum of the minted totals {TAG}:xm */
    size_t in_flight;   /* DEBITED transfers whose credit has not been applied */
    long long in_flight_amount;
    size_t credited_unacked; /* DEBITED transfers already credited (counted at the destination) */
    size_t bad;              /* account keys that hold no integer, or a negative one */
    size_t place_accounts[XFER_NPLACES]; /* the accounts and balances by place */
    long long place_balances[XFER_NPLACES];
    char first_bad[XFER_MAX_KEY + 1];
    bool balanced; /* balances + in_flight_amount == seeded, and bad == 0 */
} xfer_audit_t;

/*
 * Walks every master (the slot map's, SCAN on a connection of its own, values read pipelined):
 * sums the balances of every account key, the amounts of DEBITED transfers not yet credited at
 * their destination, and the minted totals. Exact when no transfer runs meanwhile (a transfer
 * running during the walk may be seen twice or not at all: docs/queues.md). Returns 0 (out
 * filled, out->balanced says whether the books balance), -EAGAIN when the slot map changed
 * during the walk (a failover, a resharding: run it again), -EIO when a master could not be
 * read (reason in xfer_last_error()).
 */
int xfer_audit(xfer_t *x, xfer_audit_t *out);

/* ---- fault injection (tests) ----------------------------------------------------------------- */

typedef enum {
    XFER_AT_DEBITED,  /* after the debit (and its WAIT), before the credit */
    XFER_AT_CREDITED, /* after the credit (and its WAIT), before the ack or refund */
} xfer_fault_t;

/*
 * Called at each point of every transfer: a test may kill the process there, or return true to
 * stop the transfer at that point as if its process had died (xfer_transfer then returns -EAGAIN,
 * "stopped by the fault hook", and sends nothing more). NULL clears.
 */
void xfer_set_fault_hook(xfer_t *x, bool (*cb)(xfer_fault_t at, const char *id, void *arg),
                         void *arg);

#endif
