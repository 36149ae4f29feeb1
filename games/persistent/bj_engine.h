/*
 * bj_engine -- the "persistent" engine of croupier-game: resident blackjack tables (issue 8).
 *
 * Desks. One lobby desk assigns players to tables by stake (the Join's stake is the table
 * minimum bet); each table is its own desk wrapping one pure bj_table_t (blackjack.h). A table
 * runs rounds back to back while a player who is not sitting out is seated:
 *
 *   gap timer -> rt_desk_begin_round -> betting window (timer) -> deal -> insurance (timer)
 *   -> each hand's decisions (turn timer; expiry = the core's timeout input: the hand stands)
 *   -> dealer -> settle through the money writer -> rt_desk_end_round -> next gap.
 *
 * The round of the runtime spans the whole betting window, so once intake stops
 * (rt_desk_begin_round refuses) no table opens another window: each finishes the round it is
 * in, cashes its players' stacks back to their wallets, tells them the table closes
 * (gs_close_desk_seats: TableClosing to players, DeskClosing to the gateway) and stays idle
 * while they remain seated. A table counts as a human desk only while in a round.
 *
 * Players join and leave between rounds (a leave during a round they play in takes effect when
 * it ends; a join during a round waits for the next betting window). Sit-out: a seat that lets
 * CROUPIER_BJ_SITOUT_AFTER betting windows pass without a bet sits out (no round starts for it);
 * any BJ_BET brings it back. A BJ_BET outside the betting window by a seat not in the round is a
 * bet for the next window, placed when it opens.
 *
 * Money (the house is the counterparty). Each player's chips at a table live in a Redis wallet
 * of their own, the table stack "bjs.<service>.<player>", so nothing the table holds exists only
 * in memory:
 *   - join: one settlement moves the buy-in (CROUPIER_BJ_BUYIN table minimums) from the wallet
 *     "<player>" to the stack wallet, atomically; Redis refuses it if the wallet holds less
 *     (the join is answered INSUFFICIENT_FUNDS). Chips left in a stack wallet by an earlier
 *     crash come back with the next buy-in (the settle result gives the balance);
 *   - every bet, double, split and insurance is checked at once against the stack (the money
 *     the player has at the table): INSUFFICIENT_FUNDS when it would not cover the round's
 *     total stake, so no settlement can take a wallet below zero;
 *   - every round settles one delta per betting player's stack wallet plus the house wallet
 *     "house.<service>" (deltas sum to 0, rake 0); the house wallet is funded once per service
 *     at engine start by a cash-out with the fixed operation id "bj-house-fund.<service>"
 *     (idempotent: restarts do not fund it again);
 *   - leave, and every table closing on a drain: the stack goes back to the wallet (one
 *     settlement). A voided round moves nothing. Round and transfer settlements of a table
 *     share one sequence: round id "slot:epoch:desk:seq".
 * RoundEnd lists the betting players' deltas only (the house is no seat), so they sum to minus
 * the house's delta in the settlement, not to zero; rake is always 0.
 * Hand histories go to money_writer_submit_history (game "blackjack").
 *
 * Configuration (environment): CROUPIER_BJ_BET_MS (betting window, 10000),
 * CROUPIER_BJ_TURN_MS (turn and insurance timer, 15000), CROUPIER_BJ_GAP_MS (pause between
 * rounds, 1500), CROUPIER_BJ_SEATS (7), CROUPIER_BJ_DECKS (6), CROUPIER_BJ_MAX_MULT (maximum
 * bet in table minimums, 100), CROUPIER_BJ_BUYIN (buy-in in table minimums, 100),
 * CROUPIER_BJ_SITOUT_AFTER (2), CROUPIER_BJ_HOUSE_FUND (chips, 10^12). For tests only:
 * CROUPIER_BJ_TEST_STACK="As,Kd,...;...;" puts the listed cards on top of the shoe before the
 * n-th round of every table (entry n, 0-based; empty entry = as shuffled), logged loudly.
 *
 * Cards on the wire: the core's card c (suit c / 13, rank c % 13 with 0 = ace) becomes the
 * protocol code rank << 2 | suit with ace = 14 and suits in the order clubs, diamonds, hearts,
 * spades.
 */
#ifndef CROUPIER_BJ_ENGINE_H
#define CROUPIER_BJ_ENGINE_H

#include <stdint.h>

#include "gs.h"

extern const engine_ops_t bj_engine_ops;

/* The protocol code of the core's card (see above), or 0 for BJ_CARD_HIDDEN / non-cards. */
uint8_t bj_engine_card_code(uint8_t card);

#endif
