/*
 * mcredit -- the wallets outside the game server with the money by entity (docs/queues.md "The
 * wallets outside the game server"; croupier-ctl --money-by-entity, docs/ops.md): an operator's
 * credit or debit of a wallet {p:<player>}:bal, and the read of a wallet.
 *
 * A credit today (money.h, "Operator credits") is one script that changes the wallet, books the
 * opposite on the house's account of operator adjustments (which may go negative: the credit is
 * money the house creates) and writes its settle record and audit entry. With the keys by entity
 * the wallet is in the player's slot and the settle record and audit stream in the money slot,
 * and an account never goes negative, so the same credit is steps, each idempotent by the op id
 * (ctl:<id>):
 *
 *   1. CLAIM, in the money slot: the op id's seen record {croupier:money}:audit:seen:ctl:<id>
 *      is set to "pending <player> <amount>" -- or, already there, is checked: the same id for
 *      another player or amount is refused (MONEY_ERR_BAD_ARGS), a finished credit answered
 *      with its first result (replayed), nothing more done.
 *   2. MOVE: a credit creates the money in the wallet, xfer_seed with the op id (counted as
 *      seeded at {p:<player>}:xm, so the conservation audit balances); a debit is a transfer
 *      (xfer_transfer, the op id its transfer id) from the wallet to the house's account of
 *      operator debits {house}:bal:credits (MCREDIT_HOUSE_ACCOUNT), refused when the wallet
 *      holds less (MONEY_ERR_INSUFFICIENT; the claim is taken back, nothing changed).
 *   3. BOOK, in the money slot: the settle record {croupier:money}:round:ctl:credit:<id> (the
 *      wallet's balance read right after the move), the audit entry in {croupier:money}:audit
 *      (today's fields) and the seen record "<audit id> <player> <amount>", once.
 *
 * A run stopped between the steps (killed, a master unreachable, a debit in flight) leaves the
 * claim pending; the same call again goes on from there and moves nothing twice (the seed's and
 * the transfer's own records), and the xfer sweeper finishes a debit in flight by itself.
 *
 * Threads: the rcluster_t is the caller's, used by one thread at a time.
 */
#ifndef CROUPIER_MCREDIT_H
#define CROUPIER_MCREDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "money.h"
#include "rcluster.h"

/* Where operator debits go: the house's account of them (the audit counts it as the house's). */
#define MCREDIT_HOUSE_ACCOUNT "{house}:bal:credits"

typedef struct {
    int min_replicas; /* WAIT for this many replicas after each write (0: none) */
    int wait_ms;      /* bound of each WAIT; 0 = 500 */
} mcredit_opts_t;

/*
 * Credits cr->amount (negative: a debit) to cr->player's wallet {p:<player>}:bal, in the steps
 * above, and fills *out as money_sync_credit does (balance_after: the wallet read right after
 * the move). rc is borrowed; o may be NULL. Returns:
 *   0                        applied now, or before (out->replayed: the first result);
 *   -EINVAL                  bad input, nothing sent (money_credit_check);
 *   MONEY_ERR_BAD_ARGS       the op id was used for another credit, or the wallet holds no
 *                            integer or would pass the maximum: nothing changed;
 *   MONEY_ERR_INSUFFICIENT   a debit beyond the balance: nothing changed;
 *   -EAGAIN                  applied but not finished: a debit in flight, or a WAIT short of
 *                            o->min_replicas; the same call again finishes it;
 *   -EIO, MONEY_ERR_REDIS    Redis did not answer or refused: the same call again is safe.
 * out->error says why for anything but 0.
 */
int mcredit_apply(rcluster_t *rc, const money_credit_t *cr, const mcredit_opts_t *o,
                  money_credit_result_t *out);

/*
 * Reads player's wallet {p:<player>}:bal: *balance (0 when absent) and *exists. 0, -EINVAL (not
 * a player id), -EIO (Redis), MONEY_ERR_REDIS (the key holds no integer).
 */
int mcredit_balance(rcluster_t *rc, const char *player, int64_t *balance, bool *exists);

#endif
