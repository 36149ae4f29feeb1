/*
 * mtour -- a tournament's money by entity on a Redis Cluster (docs/tournaments.md "Tournaments
 * by entity"; docs/queues.md "Redis Cluster: keys by entity and transfers between slots";
 * issue 34). EXPERIMENTAL: the director does not use it yet.
 *
 * A tournament <id> keeps its money in its own slot, the tag {t:<id>}:
 *   {t:<id>}:bal:in      the intake: a buy-in's transfer lands here (closed at a cancellation,
 *                        so a credit still on its way is refused and goes back to its wallet)
 *   {t:<id>}:bal         the prize pool
 *   {t:<id>}:bal:fees    the fees, kept per tournament and swept to MTOUR_HOUSE_FEES at its end
 *   {t:<id>}:pay:<req>   a buy-in's payment record: "<state> <player> <buy-in> <fee>[ <why>]",
 *                        state pending, paid or refused (MTOUR_RECORD_TTL_S)
 *   {t:<id>}:out:<op>    a payout's decision: "<player> <amount>", "... fees" when it comes
 *                        from the fees (MTOUR_RECORD_TTL_S)
 *   {t:<id>}:paying      SET of "in.<req>" and "out.<op>" not yet final: what mtour_drive() ends
 *   {t:<id>}:epoch       the tournament's fence (what the director's claim INCRs)
 * and the player's wallet is {p:<player>}:bal, in the player's slot.
 *
 * A buy-in (mtour_buyin) is three steps, each one script in one slot, idempotent by the
 * request id:
 *   1. RESERVE in {t:<id>}, fenced: the payment record "pending", "in.<req>" in :paying;
 *   2. the transfer t<id>.in.<req> of buy-in + fee from the wallet to the intake (money/xfer.h);
 *   3. BOOK in {t:<id>}, fenced: credited -- the buy-in from the intake to the pool, the fee to
 *      :bal:fees, the record "paid"; refused by the wallet (short, closed) or by the intake
 *      (closed) -- the record "refused <why>" (the chips, if any moved, went back by xfer).
 * It answers paid or refused only once step 3 is done; in between it is "pending" (-EAGAIN or
 * -ESTALE): the same call again, or mtour_drive() by the next owner, goes on from where it
 * stands, and xfer's sweeper ends a transfer whose process died.
 *
 * A payout (mtour_payout: an unregistration's refund, a cancellation's share, a prize) is the
 * decision {t:<id>}:out:<op> taken once (NX) under the fence, then the transfer out.<op> from the
 * pool to the wallet. The op ids are the caller's and deterministic (unreg.<req>,
 * cancel.<player>, prize.<player>): a crash, a second owner or a resend drives the same transfer,
 * never a second one.
 *
 * Replays are answered before the fence: a request answered under an old epoch gets its answer.
 *
 * A wallet whose tag hashes to the tournament's slot (1 in 16384 players; xfer refuses such a
 * transfer: "one script moves that") moves in one script instead, with the same outcomes, final
 * at once, idempotent by the same id ({SRCTAG}:xl:<id>); so do the overlay and the fees when the
 * house's tag shares the tournament's slot.
 *
 * Threads: an mtour_t is used by one thread at a time, like the rcluster_t it borrows.
 */
#ifndef CROUPIER_MTOUR_H
#define CROUPIER_MTOUR_H

#include <stdbool.h>
#include <stddef.h>

#include "rcluster.h"
#include "xfer.h"

/* The house's accounts: where the fees go at a tournament's end, where an overlay comes from
 * (funded by the operator: an account never goes negative). */
#define MTOUR_HOUSE_FEES "{house}:bal:rake:tournament"
#define MTOUR_HOUSE_OVERLAY "{house}:bal:overlay"
/* Life of the payment and payout records (xfer's default record life: the resend window). */
#define MTOUR_RECORD_TTL_S (7 * 86400)

typedef struct {
    xfer_opts_t xfer; /* the transfers' options; its wait_replicas is also WAITed for after the
                         reserve and the book of a buy-in and a payout's decision */
} mtour_opts_t;

typedef struct mtour mtour_t;

/* Over a cluster client it borrows (used by the same thread). o may be NULL. Never NULL. */
mtour_t *mtour_create(rcluster_t *rc, const mtour_opts_t *o);
void mtour_destroy(mtour_t *mt); /* NULL is a no-op */
/* The transfer engine inside (its sweeper, audit, fault hook). */
xfer_t *mtour_xfer(mtour_t *mt);
/* Why the last call failed (one line, "" if none); storage inside mt. */
const char *mtour_last_error(const mtour_t *mt);

/* "{t:<tour>}:<what>" (tour a decimal id, what e.g. "bal", "bal:fees", "meta"). 0 or -EINVAL
 * (not a decimal id, or it does not fit in len). */
int mtour_key(const char *tour, const char *what, char *out, size_t len);

/*
 * The fence: INCR {t:<tour>}:epoch, the new epoch in *epoch -- what the director's claim does.
 * 0, -EINVAL, -EIO.
 */
int mtour_claim(mtour_t *mt, const char *tour, long long *epoch);

typedef enum {
    MTOUR_PENDING = 0, /* in flight: not answered yet */
    MTOUR_PAID,        /* a buy-in booked (the entry may be registered); a payout credited */
    MTOUR_REFUSED,     /* a buy-in refused (reason), nothing kept; a payout the wallet refused
                          (its chips back in the pool) */
} mtour_state_t;

typedef enum {
    MTOUR_WHY_NONE = 0,
    MTOUR_WHY_INSUFFICIENT, /* the wallet held less than buy-in + fee (INSUFFICIENT_FUNDS) */
    MTOUR_WHY_WALLET,       /* the wallet is closed or holds no integer */
    MTOUR_WHY_CLOSED,       /* the tournament's intake was closed (TOURNAMENT_OVER) */
} mtour_why_t;

typedef struct {
    mtour_state_t state;
    mtour_why_t why;  /* of a refusal */
    bool replayed;    /* answered from the record: decided before */
    char reason[640]; /* one line, for anything but a first-time PAID */
} mtour_result_t;

/*
 * A buy-in of buyin + fee (buyin >= 1, fee >= 0) by player into tournament tour, for the request
 * req (1..92 of [A-Za-z0-9_.:-]), under the fence epoch, in the steps above. Returns:
 *   0        final: res->state PAID or REFUSED (res->why; replayed when decided before);
 *   -EAGAIN  pending: the transfer is in flight, or a WAIT fell short (send it again);
 *   -ESTALE  the fence moved: nothing reserved (a new request), or the booking is the next
 *            owner's (mtour_drive);
 *   -EEXIST  req was used for another player or amount (nothing done);
 *   -EINVAL  bad input (nothing sent); -EIO Redis did not answer (send it again).
 */
int mtour_buyin(mtour_t *mt, const char *tour, long long epoch, const char *req, const char *player,
                long long buyin, long long fee, mtour_result_t *res);

/*
 * Pays amount (>= 1) from the pool of tour to player under the op id op (1..80 of
 * [A-Za-z0-9_.:-]), decided under the fence epoch. Returns 0 final (res->state PAID, or
 * REFUSED: the wallet refused and the chips are back in the pool), -EAGAIN in flight, -ESTALE
 * the fence moved before the decision (nothing decided), -EEXIST op was decided for another
 * player or amount, -ENOSPC the pool holds less (decided, not paid: an operator's), -EINVAL,
 * -EIO.
 */
int mtour_payout(mtour_t *mt, const char *tour, long long epoch, const char *op, const char *player,
                 long long amount, mtour_result_t *res);

/*
 * The same from the fees {t:<tour>}:bal:fees: a fee refunded (a cancellation before the start,
 * an unregistration). The op ids share the payouts' namespace (decided once, for one source).
 */
int mtour_refund_fee(mtour_t *mt, const char *tour, long long epoch, const char *op,
                     const char *player, long long amount, mtour_result_t *res);

typedef struct {
    size_t found;   /* members of {t:<tour>}:paying */
    size_t settled; /* ... final now */
    size_t pending; /* ... still in flight */
    size_t errors;  /* ... that failed otherwise (mtour_last_error() has the last) */
} mtour_drive_stats_t;

/*
 * Drives every buy-in and payout of tour not yet final, from its records, under the fence epoch
 * (a new owner calls it at its claim, before anything else). st may be NULL. 0 (all final),
 * -EAGAIN (some still pending: st->pending), -ESTALE (the fence moved), -EIO.
 */
int mtour_drive(mtour_t *mt, const char *tour, long long epoch, mtour_drive_stats_t *st);

/*
 * Closes the intake of tour (a cancellation or the end of registration for good): a buy-in's
 * credit that arrives later is refused and its chips go back to the wallet. 0, -EINVAL, -EIO.
 */
int mtour_close_intake(mtour_t *mt, const char *tour);

/*
 * The overlay: amount from MTOUR_HOUSE_OVERLAY into the pool of tour, the transfer
 * t<tour>.overlay (once per tournament). Returns as xfer_transfer() (-ENOSPC: the house's
 * overlay account holds less; nothing moved).
 */
int mtour_overlay(mtour_t *mt, const char *tour, long long amount, mtour_result_t *res);

/*
 * Sweeps the fees of tour ({t:<tour>}:bal:fees, whatever it holds) to MTOUR_HOUSE_FEES, the
 * transfer "fees" (once per tournament, at its end: nothing may add fees after). 0 (swept, or
 * nothing to sweep; *swept the amount, may be NULL), -EAGAIN in flight, -EIO, -EINVAL.
 */
int mtour_fees_sweep(mtour_t *mt, const char *tour, long long *swept);

#endif
