/*
 * bj_engine -- the "persistent" engine of croupier-game: resident blackjack tables (issue 8) on
 * the table kit (engine/tk.h, docs/architecture.md §12). The rules are blackjack.h
 * (docs/rules/blackjack.md); bj_engine.c is only the adapter between them and the kit.
 *
 * Tables. The kit's lobby seats players by stake (the Join's stake is the table minimum bet);
 * each table is a kit table desk wrapping one pure bj_table_t. A table runs rounds back to back
 * while a seated player is not sitting out (one player is enough: the house is the other side):
 *
 *   gap (--bj-gap-ms) -> the kit's round begins -> betting window (--bj-bet-ms) -> deal ->
 *   insurance (--bj-action-ms) -> each hand's decisions (the kit's turn timer, --bj-action-ms;
 *   its expiry is the rules' timeout input: the hand stands) -> dealer -> the kit's round end.
 *
 * The kit's round spans the whole betting window, so once intake stops no table opens another
 * window: each finishes the round it is in, then the kit closes it (every stack cashed out,
 * TableClosing to the players and DeskClosing to the gateways once the credits are applied).
 *
 * Seats (the kit's). A join, whenever it comes, seats the player once the buy-in is applied; a
 * player seated during a round is dealt into the next one (the kit deals a round to the seats
 * seated when it begins). A leave during a round the seat is dealt into takes effect when it
 * ends (its remaining hands stand by the automatic move). Sit-out: a seat that lets
 * --bj-sitout-after betting windows pass without a bet sits out (tk_seat_sit_out: no round is
 * dealt to it); any BJ_BET brings it back. A BJ_BET outside the window, or by a seat not dealt
 * into the running round, is the bet for the next window, placed when it opens. Every seated
 * player, also one not in the round, is sent the window's Turn (min_amount, max_amount =
 * min(stack, maximum bet)); an insurance offer is a Turn with to_call (the insurance bet) to
 * every seat that bet; a hand's decision is the kit's Turn with hand set.
 *
 * Money (the house is the counterparty). A player's chips at a table live in the kit's seat
 * account of that seat (ts.<service>.<slot>.<epoch>.<desk hex>.<seat>, TK_ACCOUNT_PREFIX), so
 * nothing the table holds exists only in memory:
 *   - join: the buy-in, min(wallet, --bj-buyin table minimums (100)) and at least --bj-min-buyin
 *     (1: one minimum bet), moves from the wallet "<player>" to the seat account; a wallet
 *     below the minimum is refused INSUFFICIENT_FUNDS. So a player who lost a few chips is
 *     seated again when a drain moves the table (tests/e2e/move_exact_buyin.sh);
 *   - every bet, double, split and insurance is checked at once against the stack (the chips
 *     at the table before the round): INSUFFICIENT_FUNDS when it would not cover the round's
 *     total stake, so no settlement can take a seat account below zero;
 *   - every round settles one delta per seat dealt into it (0 for a seat that did not bet) plus
 *     the house wallet "house.<service>" (tk_round_end_house: sum 0, rake 0); the house wallet
 *     is funded once per service by the kit (--bj-house-fund, 10^12; a fixed operation id, so
 *     restarts and other replicas do not fund it again);
 *   - leave, a stack below the table minimum after a round (busted: TableClosing BUSTED), and
 *     the table closing: the stack goes back to the wallet. A voided round moves nothing.
 * RoundEnd lists the seats dealt into the round only (the house is no seat), so the deltas sum
 * to minus the house's delta, not to zero; rake is always 0. Hand histories: the kit's, one for
 * every round (a window without a bet included), game "blackjack", with the round's cards in
 * shoe order (the hole card where it was dealt) and the shoes (docs/hand-history.md).
 *
 * Fair deals (docs/fairness.md "Blackjack's shoes"): one commitment per shoe. Every Deal carries
 * the commitment of the shoe its card came from (Deal.deck_commitment), the shoe's number and the
 * card's position; the Snapshot the shoe in use's (Snapshot.deck_commitment, BlackjackState.shoe,
 * shoe_dealt). Each round's record names its shoe(s), commitment and first position ("shoes");
 * the round that retires a shoe (its cut card came out, it ran dry, or the table deals its last
 * round here) reveals its order and nonce ("shoe_reveal"); croupier-rules verify-shoe checks
 * them. A whole-table move carries the shoe (export_state/import_state), commitment and all.
 *
 * Settings: the kit's flags with the prefix bj (croupier-game --help; variables
 * CROUPIER_BJ_SEATS (7), CROUPIER_BJ_ACTION_MS (decision and insurance timer, 15000),
 * CROUPIER_BJ_GAP_MS (1500), CROUPIER_BJ_IDLE_MS, CROUPIER_BJ_BUYIN / _MIN_BUYIN (100 / 1),
 * CROUPIER_BJ_HOUSE (house.<service>), CROUPIER_BJ_HOUSE_FUND (10^12), CROUPIER_BJ_TRUSTEE_MS
 * ...) and the engine's own: CROUPIER_BJ_BET_MS (betting window, 10000), CROUPIER_BJ_DECKS (6),
 * CROUPIER_BJ_MAX_MULT (maximum bet in table minimums, 100), CROUPIER_BJ_SITOUT_AFTER (2). For
 * tests only: CROUPIER_BJ_TEST_STACK="As,Kd,...;...;" puts the listed cards on top of the shoe
 * before the n-th round of every table (entry n, 0-based; empty entry = as shuffled), logged
 * loudly (a bad value is logged and ignored).
 *
 * What the kit changed against the engine before it (the tests say so where they look):
 * stacks are per seat of a table, not one bjs.<service>.<player> wallet per player across the
 * service's tables; CROUPIER_BJ_TURN_MS is CROUPIER_BJ_ACTION_MS; the buy-in is min(wallet,
 * --bj-buyin) with --bj-min-buyin as the floor (one table minimum: the fixed buy-in of 100
 * minimums refused a player moved by a drain who had lost a chip); a
 * second join while the first's buy-in is in flight is answered UNAVAILABLE "join in progress;
 * retry"; a player who joins during a betting window bets in the next one; a seat that timed
 * out plays its later hands by the automatic move (stand) after --bj-trustee-ms until it acts;
 * a leave in the betting window takes effect when the round ends, not at once; a stack below
 * the table minimum after a round is busted (cashed out, unseated); a window without a bet is
 * a round with its settlement of zeros and its hand history; the house's funding keeps its
 * operation id ("bj-house-fund.<service>", tk_game_t.house_fund_op), so a service upgraded to
 * the kit is not funded again; tables with free seats are in the lobby's ads
 * (ListTables); seats per table are 2..7.
 *
 * Cards on the wire: the core's card c (suit c / 13, rank c % 13 with 0 = ace) becomes the
 * protocol code rank << 2 | suit with ace = 14 and suits in the order clubs, diamonds, hearts,
 * spades.
 */
#ifndef CROUPIER_BJ_ENGINE_H
#define CROUPIER_BJ_ENGINE_H

#include <stdint.h>

#include "gs.h"

/* TK_ENGINE(persistent, ...): the engine's entry in croupier-game's table of engines. */
extern const engine_ops_t persistent_engine_ops;

/* The protocol code of the core's card (see above), or 0 for BJ_CARD_HIDDEN / non-cards. */
uint8_t bj_engine_card_code(uint8_t card);

#endif
