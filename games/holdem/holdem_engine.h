/*
 * holdem_engine -- the "holdem" engine of croupier-game: no-limit Texas hold'em cash tables
 * (issue 7), built on the pure table state machine holdem_table.h.
 *
 * Desks. One lobby desk assigns seats; each table is its own desk and plays hand after hand
 * (2..9 seats, CROUPIER_HOLDEM_SEATS, default 6). A join names the stakes as the big blind
 * (Join.stake >= 2); the small blind is half of it (rounded down). The lobby seats the player at
 * a table of that stake with a free seat, opening one when there is none.
 *
 * Money ("chips travel through the wallet"). Every table seat has its own account in the money
 * store, a wallet named "hs.<slot>.<epoch>.<desk>.<seat>" (unique per lease acquisition), that
 * always holds that seat's stack once the money writer's queue is flushed:
 *   sit      buy-in debits the player's wallet (money_writer_submit_buyin), and only when it
 *            succeeded the same amount is credited to the seat account; the amount is
 *            CROUPIER_HOLDEM_BUYIN_BB big blinds (default 100), or the wallet balance if
 *            smaller but at least CROUPIER_HOLDEM_MIN_BUYIN_BB (default 20); else the join is
 *            refused INSUFFICIENT_FUNDS;
 *   hand     each hand settles its deltas against the seat accounts of the seats dealt in
 *            (round id server:epoch:desk:hand, deltas sum to -rake);
 *   leave    (or the table closes) the seat account is debited by the stack and, only once that
 *            applied, the player's wallet is credited with it (a seat account that does not
 *            hold the chips never creates any; a failure is logged and the chips stay in it).
 * All of a table's money items go through the one FIFO writer, so Redis applies them in order;
 * every item of a hand (settlement, history, cash-outs) is queued before the round ends, so
 * before human_desks can drop and the exit's flush can begin. After a graceful exit no chip is
 * only in memory: each is in a player's wallet, a seat account or the rake. A crash (no flush)
 * can leave chips in seat accounts; they are named by server slot and lease epoch so an operator
 * can find and return them. Each hand also leaves a history (money_writer_submit_history).
 *
 * Lobby ads: through the lobby publisher every engine uses (lease/lobby.h, the keys
 * {croupier:lobby}:ads and {croupier:lobby}:ad:<server_id>:<desk>, engine ENGINE_HOLDEM, stake =
 * the big blind), on the engine's own common/rconn.h connection (gs_redis_host/port, gs_base).
 * The lobby desk hands it each table's free seats; every table with free seats is advertised,
 * refreshed every CROUPIER_HOLDEM_AD_MS (default 2000) and on every change; a full or closed
 * table's ad is deleted. The same connection reads a joining player's wallet balance to choose
 * the buy-in.
 *
 * Drain. stop_intake withdraws every ad at once (lobby_pub_withdraw_all); each table finishes
 * its current hand, deals no next one, cashes every seated player out, and once the cash-outs
 * are applied (at most 1 s later) tells them TableClosing and the gateways DeskClosing: the
 * gateways re-seat the players at the same stakes on another server, where they buy in again
 * from the wallet. The players stay seated (stack 0) until they leave. When the drain bound passes mid-hand the hand is voided: every
 * chip committed this hand goes back to its stack (nothing of the hand was settled, so the seat
 * accounts already hold the pre-hand stacks), then the stacks are cashed out.
 *
 * Timers. Each player to act has CROUPIER_HOLDEM_ACTION_MS (default 15000) plus a time bank of
 * CROUPIER_HOLDEM_TIME_BANK_MS (default 30000, drawn on as holdem_table.h says); when both run
 * out the table applies HOLDEM_TIMEOUT (check if possible, else fold). Hands start
 * CROUPIER_HOLDEM_GAP_MS (default 2000) after the last one. Rake: CROUPIER_HOLDEM_RAKE_BP basis
 * points with cap CROUPIER_HOLDEM_RAKE_CAP (default off).
 *
 * Refusals (state unchanged): NOT_YOUR_TURN, BET_BELOW_MIN, BET_ABOVE_MAX (more than the
 * stack), ACTION_NOT_ALLOWED (e.g. check facing a bet), NO_ROUND (between hands), WRONG_ENGINE
 * (not a hold'em action), BAD_REQUEST (malformed; the codec refuses most of these first).
 *
 * Not done: a player whose stack reaches 0 stays seated (no rebuy, no automatic unseat); two
 * joins of the same player racing through the lobby at once are not serialized here (the
 * gateway sends one at a time).
 *
 * Snapshot (Resume): seats with stacks, the round id, whose turn and the time left, and during a
 * hand a HoldemState with the player's own hole cards only, the board, the pot, the button,
 * what the seat to act must call and the minimum raise-to, and every seat's street bet, folded
 * and all-in flags. Between hands there is no HoldemState (stacks are in SeatInfo.chips).
 */
#ifndef CROUPIER_HOLDEM_ENGINE_H
#define CROUPIER_HOLDEM_ENGINE_H

#include "gs.h"

extern const engine_ops_t holdem_engine_ops;

/* Writes the seat-account wallet name of a seat ("hs.<slot>.<epoch>.<desk>.<seat>") into buf.
 * Returns 0 or -ENOSPC. Exposed for tests and reconciliation tools. */
int holdem_engine_seat_account(uint32_t slot, uint64_t epoch, uint64_t desk, int seat, char *buf,
                               size_t len);

#endif
