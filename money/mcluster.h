/*
 * mcluster -- a game server's money on a Redis Cluster with keys by entity (issue 34 step 3;
 * docs/queues.md "Redis Cluster: keys by entity and transfers between slots", "The game
 * server's money by entity").
 *
 * Today's money (money.h) keeps every key under the one tag {croupier:money}: one slot, one
 * master. This module puts a game server epoch's money in that epoch's own slot and a player's
 * wallet in the player's, and moves chips between the two with the transfers of money/xfer.h:
 *
 *   {p:<player>}:bal                       the player's wallet (an xfer account)
 *   {s:<service>:<slot>:<epoch>}:bal:<acct>  a seat account of the epoch (acct: the table kit's
 *                                          seat account name, engine/tk.h)
 *   {s:...}:bal:rake:<game>                the rake the epoch's rounds collected (the house's)
 *   {s:...}:round:<round id>               a settlement's record (balances after, EX ttl)
 *   {s:...}:held                           HASH seat account -> owner, and r:<desk hex> -> the
 *                                          JSON of the desk's latest round start (as money.h)
 *   {s:...}:live                           the epoch's fence in its own slot: the epoch's number
 *                                          while it may write, "dead" once a recovery began
 *   {s:...}:xc                             xfer's closed set: every held account, once dead
 *   {s:...}:recovered                      HASH chips, accounts: what recoveries returned
 *   {croupier:money}:epochs                SET "<service>:<slot>:<epoch>" of the epochs opened
 *                                          (the money slot: where the lease fences are)
 *
 * Every operation is one or more scripts, each in one slot, each idempotent by an id the
 * caller chooses (the op id, the round id), all sent with RCLUSTER_RESEND:
 *
 *   open     the holder, once per epoch before any money: the epoch joins the index, then
 *            {s}:live is set to the epoch unless a recovery marked it dead.
 *   seat in  (buy-in, top-up) the account is recorded as held for its owner (fenced by
 *            {s}:live), then the chips move from the owner's wallet as a transfer (op id = the
 *            transfer id): debit + outbox in the player's slot, WAIT, credit once in the
 *            epoch's slot, ack. It answers MONEY_OK only once the credit is applied: a table
 *            never seats a player on chips still in flight.
 *   seat out (cash-out) a transfer from the seat account to the owner's wallet. Fenced by
 *            xfer's closed set: a recovery closes every held account before it returns them.
 *   settle   one script in the epoch's slot: money.h's settle script itself, its fence key
 *            being {s}:live, its wallets the seat accounts, its rake account {s}:bal:rake:<g>.
 *   mark     a round in progress, recorded in {s}:held (fenced by {s}:live).
 *   recover  a dead epoch's seat accounts back to the owners' wallets as transfers, exactly
 *            once and safe to race; its rounds in progress voided (hand histories, as money.h).
 *
 * The fence, per slot (docs/queues.md explains why it is as strong as the lease fence): a
 * script in the epoch's slot cannot read the lease fence (the money slot), so it reads
 * {s}:live. Every recovery first judges the epoch on the lease fence (money.h's recovery
 * script: dead, claimable or the holder's own) and moves it when it claims; only then does it
 * set {s}:live to "dead" and close every held account, in one script in the epoch's slot, and
 * only after that does it read and return the accounts. Whatever the old epoch wrote before
 * that script is seen by the recovery; nothing it sends after is applied.
 *
 * Durability: with opts.xfer.wait_replicas, every write of the epoch's slot (open, hold, mark, a
 * settlement) is followed by a WAIT on that slot's master, as each step of a transfer is; one
 * that falls short answers -EAGAIN ("applied, send it again": the resend answers the first
 * result and its WAIT covers the first write). WAIT bounds the loss, it is not consensus
 * (docs/queues.md "Transfers between slots").
 *
 * Threads: an mcluster_t is used by one thread at a time, like the rcluster_t it borrows.
 * Returns: MONEY_OK, a money_err_t (money.h), -EINVAL (bad input, nothing sent) or -EAGAIN (a
 * transfer in flight: call again with the same id, or leave it to xfer_sweep()), with one line
 * in out->error.
 */
#ifndef CROUPIER_MCLUSTER_H
#define CROUPIER_MCLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "money.h"
#include "rcluster.h"
#include "xfer.h"

#define MCLUSTER_INDEX_KEY "{croupier:money}:epochs"

typedef struct {
    xfer_opts_t xfer;    /* the transfers' options (WAIT replicas ...) */
    long history_maxlen; /* voided rounds' histories: MAXLEN of the stream; 0 = 100000 */
    long record_ttl_s;   /* settle records; 0 = MONEY_RECORD_TTL_S */
} mcluster_opts_t;

typedef struct mcluster mcluster_t;

/* Over a cluster client it borrows (rc must outlive it; same thread). opts may be NULL. The
 * process must have called keytag_set_cluster(true) (the lease fences and hand histories are
 * in the money slot). Never NULL (allocation aborts). */
mcluster_t *mcluster_create(rcluster_t *rc, const mcluster_opts_t *opts);
void mcluster_destroy(mcluster_t *m); /* NULL is a no-op */
/* The transfer engine it drives (for xfer_sweep, xfer_audit, xfer_seed). */
xfer_t *mcluster_xfer(mcluster_t *m);

/* ---- keys (0, or -EINVAL: a bad name or it does not fit) -------------------------------- */

/* {p:<player>}:bal */
int mcluster_key_wallet(const char *player, char *buf, size_t len);
/* {s:<service>:<slot>:<epoch>}<suffix> (suffix e.g. ":held", ":live", "" for the tag) */
int mcluster_key_epoch(const char *service, uint32_t slot, uint64_t epoch, const char *suffix,
                       char *buf, size_t len);
/* {s:<service>:<slot>:<epoch>}:bal:<account> */
int mcluster_key_seat(const char *service, uint32_t slot, uint64_t epoch, const char *account,
                      char *buf, size_t len);

/* ---- the epoch's operations ------------------------------------------------------------- */

/* Opens (service, slot, epoch) for money; idempotent. MONEY_OK, MONEY_ERR_STALE_EPOCH (a
 * recovery marked it dead), -EINVAL, -EIO. */
int mcluster_epoch_open(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                        char *err, size_t errlen);

/*
 * A seat transfer (kind MONEY_KIND_SEAT_IN or _SEAT_OUT) of amount between s->owner's wallet
 * and the seat account s->account of (service, s->slot, s->epoch), op_id its transfer id. Sent
 * again with the same arguments it goes on from where it stands and answers the first result
 * (out->replayed). out->status:
 *   MONEY_OK                 applied (seat in: credited to the seat account; seat out: in the
 *                            wallet); out->balances[0] the seat account's balance read after
 *                            (informative: not taken in the same script)
 *   MONEY_ERR_INSUFFICIENT   the wallet (in) or the seat account (out) holds less; nothing moved
 *   MONEY_ERR_STALE_EPOCH    the epoch is dead: nothing moved, or (in) the credit was refused
 *                            and the debit refunded to the wallet
 *   MONEY_ERR_BAD_ARGS       the account is held for another owner, the id names another
 *                            transfer, a wallet that holds no integer, or (out) the wallet
 *                            refused for good: the chips are back in the seat account
 *   -EAGAIN                  in flight (seat in: not yet at the table; seat out: left the seat
 *                            account, not yet in the wallet): call again, or the sweeper ends it
 *   -EINVAL                  bad input, nothing sent
 */
int mcluster_seat(mcluster_t *m, const char *service, money_kind_t kind, const money_seat_t *s,
                  int64_t amount, const char *op_id, money_result_t *out);

/*
 * Settles one round: s->players are seat accounts of the epoch (s->round.server, .epoch) and
 * the rake goes to {s}:bal:rake:<game>. One script in the epoch's slot (money.h's settle
 * script). out as money_sync_settle: MONEY_OK (replayed: the first result), MONEY_ERR_STALE_EPOCH
 * (the epoch is not live), MONEY_ERR_BAD_SUM, MONEY_ERR_NEGATIVE, MONEY_ERR_BAD_ARGS, -EIO.
 */
int mcluster_settle(mcluster_t *m, const char *service, const money_settlement_t *s,
                    money_result_t *out);

/*
 * Settles n rounds of one epoch in one script call (each round still all-or-nothing on its
 * own, in order; out[i] for s[i]). Returns MONEY_OK when the call was answered (each out[i] has
 * its own status), -EINVAL when a round is malformed or of another epoch (nothing sent), -EIO
 * or MONEY_ERR_REDIS when the call failed as a whole (every out[i] says so).
 */
int mcluster_settle_batch(mcluster_t *m, const char *service, const money_settlement_t *s, size_t n,
                          money_result_t *out);

/* Records a round in progress (field "r:<desk hex>", value its JSON as money_writer_submit_mark
 * writes it). MONEY_OK, MONEY_ERR_STALE_EPOCH, -EINVAL, -EIO. */
int mcluster_mark(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                  const char *field, const char *value, money_result_t *out);

/*
 * Recovery of (service, slot, epoch), modes as money_recover (money.h): the lease fence judged
 * (and moved for a claim) in the money slot; the epoch marked dead and its held accounts
 * closed in its own slot; each account's chips debited into an outbox record (a transfer to
 * the owner's wallet, id "rcv.<account>") in one script per chunk, and the transfers driven to
 * their end (those left in flight are the xfer sweeper's); rounds in progress without a
 * settlement voided (mode dead or claim); its rake moved to {house}:bal:rake:<game> (a transfer,
 * id "rake.<game>"); the epoch leaves the index once nothing is held.
 * out->chips counts the chips this call took out of seat accounts. Returns 0, MONEY_ERR_ALIVE,
 * MONEY_ERR_BAD_ARGS, MONEY_ERR_REDIS, -EIO; -EAGAIN when some returns are still in flight.
 */
int mcluster_recover(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                     money_recover_mode_t mode, const char *token, money_recover_result_t *out);

/*
 * One pass over the index of opened epochs ({croupier:money}:epochs): every epoch but own
 * ("<service>:<slot>:<epoch>", may be NULL) whose lease fence has moved past it is recovered
 * (MONEY_RECOVER_DEAD: the next holder took its slot, or a claim moved it); live ones are left
 * alone. The claim of an unheld slot after a grace is the caller's decision (money/sweeper.h's
 * rule; mcluster_recover with MONEY_RECOVER_CLAIM). Returns left in flight are xfer_sweep()'s.
 * Safe to run in any number of processes at once. 0, or -EIO (st counts what was done).
 */
typedef struct {
    size_t epochs;    /* in the index */
    size_t recovered; /* recovered by this pass (their chips out of the seats) */
    size_t alive;     /* left alone: the fence still at their epoch */
    size_t pending;   /* recovered, with a return still in flight (the xfer sweeper's) */
    size_t errors;
    int64_t chips;
    int voided;
} mcluster_sweep_stats_t;
int mcluster_sweep(mcluster_t *m, const char *own, mcluster_sweep_stats_t *st);

/* ---- whole-table moves (mcluster_handoff.c; docs/queues.md "Whole-table moves by entity") --- */
/*
 * money.h's "Table handoff" on the keys by entity, with money.h's types and statuses. The offer
 * lives in the offering epoch's slot, {s:<service>:<slot>:<epoch>}:handoff:<offer id> (offer
 * ids as money_offer_id()), fenced by that epoch's {s}:live. The adoption is:
 *   1. HOLD in the adopter's slot (fenced by its {s}:live): its new accounts held for the owners;
 *   2. CLAIM in the old slot, one script: the offer must be "offered" and its epoch live; every
 *      offered account is debited into an xfer outbox record (id "ho.<desk hex>.<n>.<i>", to the
 *      adopter's account i), closed, and left held for its owner with the move's mark
 *      m:<account> (the old epoch's recovery keeps it while the move is in flight, so a refund
 *      is returned); the offer reads "adopted";
 *   3. each move finished as an xfer transfer (credit once by id, ack).
 * Exactly once and safe to race: one claim wins, the others are refused before any chip of
 * theirs moves (and forget their holds). The claim and each step WAIT as xfer's steps do.
 */

/* Records the offer (money_sync_offer's contract): MONEY_OK (replayed: it existed),
 * MONEY_ERR_STALE_EPOCH (the epoch is not live), MONEY_ERR_BAD_ARGS (an account not held for its
 * owner), MONEY_ERR_ADOPTED / MONEY_ERR_OFFER_VOID (sent again once settled), -EAGAIN (applied,
 * WAIT short: send it again), -EINVAL, -EIO. */
int mcluster_offer(mcluster_t *m, const char *service, const money_offer_t *o, money_result_t *out);
/* Reads an offer back: 0, MONEY_ERR_NO_OFFER, MONEY_ERR_REDIS (malformed), -EINVAL (not an
 * offer id), -EIO. out->state is malloc'ed (free it). */
int mcluster_offer_read(mcluster_t *m, const char *offer_id, money_offer_info_t *out);
/*
 * Adopts offer_id for (service, slot, epoch, desk), another epoch than the offer's:
 * new_accounts[i] (the adopter's seat accounts) receive the chips of the offer's account i;
 * stacks[i] (may be NULL) and out->balances[i] what each held. Sent again with the same
 * arguments it goes on from where it stands. out->status:
 *   MONEY_OK               every chip is in the new accounts (replayed: claimed before by the
 *                          same adopter)
 *   MONEY_ERR_ADOPTED      another adopter claimed it (out->error names it); nothing moved
 *   MONEY_ERR_OFFER_VOID   withdrawn, or its epoch is being recovered; nothing moved
 *   MONEY_ERR_NO_OFFER     no such offer (never made, or expired)
 *   MONEY_ERR_STALE_EPOCH  the adopter's own epoch is not live: nothing moved, or (after the
 *                          claim) its account refused a move, refunded to the old seat account
 *   MONEY_ERR_BAD_ARGS     the accounts do not match the offer, or an account is held for another
 *   -EAGAIN                claimed, a move in flight (a WAIT short, a slot unreachable, ...):
 *                          call again, or the xfer sweeper or the old epoch's recovery ends it
 *   -EINVAL, -EIO
 */
int mcluster_adopt(mcluster_t *m, const char *offer_id, const char *service, uint32_t slot,
                   uint64_t epoch, uint64_t desk, const char *const *new_accounts, size_t n,
                   int64_t *stacks, money_result_t *out);
/* Withdraws an offer nobody claimed (money_sync_offer_withdraw's contract): status "withdrawn",
 * or the status it had ("adopted", "void", "withdrawn"; out->replayed). MONEY_OK,
 * MONEY_ERR_NO_OFFER, MONEY_ERR_STALE_EPOCH, -EAGAIN (WAIT short), -EINVAL, -EIO. */
int mcluster_offer_withdraw(mcluster_t *m, const char *service, const money_offer_t *o,
                            char status[16], money_result_t *out);

/* Reads an account (0 when absent). 0, -EINVAL, -EIO, -EPERM (no integer there). */
int mcluster_balance(mcluster_t *m, const char *key, int64_t *out);

#endif
