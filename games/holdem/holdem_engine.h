/*
 * holdem_engine -- the "holdem" engine of croupier-game: no-limit Texas hold'em cash tables
 * (issue 7) on the table kit (engine/tk.h, whose contract holds here in full: lobby and ads,
 * seats, buy-in and cash-out, settlements, timers, resume, drain, void, idle tables, metrics),
 * over the pure table state machine holdem_table.h. Rules: docs/rules/holdem.md.
 *
 * Stakes. A join names the stake as the big blind (Join.stake >= 2, else BAD_REQUEST); the small
 * blind is half of it, rounded down. The lobby seats the player at a table of that stake with a
 * free seat, opening one when there is none; its ads (lease/lobby.h) carry engine ENGINE_HOLDEM
 * and stakes = the big blind.
 *
 * Money. A join buys in min(wallet, --holdem-buyin big blinds) into the seat's account (a wallet
 * named TK_ACCOUNT_PREFIX "<service>.<slot>.<epoch>.<desk>.<seat>", i.e. "ts.*"), refused
 * INSUFFICIENT_FUNDS below --holdem-min-buyin big blinds. Each hand settles its deltas against
 * the seat accounts of the seats dealt in (sum = -rake); leavers, busted players (stack 0: told
 * TableClosing{CLOSING_BUSTED}) and, when the table closes, everyone are cashed out.
 *
 * Settings: the kit's flags, each with its variable CROUPIER_HOLDEM_<NAME>:
 *   --holdem-seats         6      seats a table (2..9)
 *   --holdem-action-ms     15000  time for one action
 *   --holdem-time-bank-ms  30000  each seat's time bank, spent beyond the action time
 *   --holdem-gap-ms        2000   pause between hands
 *   --holdem-idle-ms       60000  an empty table is closed after this long
 *   --holdem-buyin         100    largest buy-in, in big blinds
 *   --holdem-min-buyin     20     smallest buy-in, in big blinds
 *   --holdem-rake-bp       0      rake in basis points of the pots (the table's rule)
 *   --holdem-rake-cap      0      rake cap per hand in chips (0 = none)
 *   --holdem-straddles     0      straddles a hand may have (0..7): a straddle of two big blinds
 *                                 under the gun and re-straddles, each twice the one before,
 *                                 offered to the seats in order before the deal
 *
 * Timers. When the action time and the time bank run out the table applies HOLDEM_TIMEOUT
 * (check if possible, else fold) and the seat is on trustee (tk.h): its next turns are played
 * the same way after TK_TRUSTEE_MS until the player acts or resumes. A player who leaves during
 * a hand is on trustee at once and is cashed out when the hand ends.
 *
 * Straddle offers (--holdem-straddles > 0, from three players on): after the blinds, before any
 * hole card, the seat under the gun gets a Turn with to_call 0 and min_amount = max_amount = the
 * straddle; HOLDEM_BET of exactly that amount straddles (pushed as a Play BET, like a blind) and
 * the next seat is offered twice as much, HOLDEM_CHECK declines and ends the chain (pushed as a
 * Play CHECK; "no_straddle" in the hand history), and so do a timeout and trustee. Then the
 * cards are dealt and the betting starts left of the last straddler.
 *
 * Refusals (state unchanged): NOT_YOUR_TURN, BET_BELOW_MIN, BET_ABOVE_MAX (more than the
 * stack), ACTION_NOT_ALLOWED (e.g. check facing a bet), NO_ROUND (between hands, or not dealt
 * in), WRONG_ENGINE (not Action.holdem), BAD_REQUEST (a bet or raise without an amount, an
 * unknown move; the codec refuses most malformed actions first).
 *
 * Snapshot (Resume): the kit's header (seats with the stacks of the hand's start, round id,
 * whose turn and the time left, event_seq) and, during a hand, Snapshot.holdem: the player's
 * own hole cards only, the board, the pot, the button, what the seat to act must call and the
 * minimum raise-to, and every dealt seat's current stack, street bet, folded and all-in flags.
 * Between hands there is no HoldemState.
 */
#ifndef CROUPIER_HOLDEM_ENGINE_H
#define CROUPIER_HOLDEM_ENGINE_H

#include "gs.h"

extern const engine_ops_t holdem_engine_ops;

#endif
