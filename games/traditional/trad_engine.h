/*
 * trad_engine -- the "traditional" engine of croupier-game: Dou Dizhu, Run Fast, Big Two and
 * Guandan played on the shared shedding core (shed_game.h), wired into the game server (gs.h).
 *
 * Matchmaking. One lobby desk keeps a pool of tables per (game, stake); a join goes to a table
 * of that game and stake with a free seat, or opens one. A deal starts when every seat is taken
 * (3 for Dou Dizhu and Run Fast, 4 for Big Two and Guandan). When a table has a human and empty
 * seats for CROUPIER_TRAD_BOT_FILL_MS, server bots take the empty seats; bots play legal moves
 * from the same rules code and never count as humans (rt_desk_set_humans).
 *
 * Turns. Each turn has a timer (CROUPIER_TRAD_TURN_MS). On timeout, or at once (after
 * CROUPIER_TRAD_BOT_MS) when the player is disconnected (PlayerGone) or has asked to leave,
 * the server plays for the player ("trustee"): it declines to bid, passes when passing is
 * allowed, and otherwise makes the smallest legal play from the core's move generator. A
 * player who acts again is back in control.
 *
 * Money (the rule, see also docs/rules/traditional-engine.md). Each seat holds an escrow of the
 * game's maximum loss at the stake: max_units(game) x stake, where max_units is 96 for Dou
 * Dizhu (landlord: bid 3 x 2^4 x 2), 64 for Run Fast, 39 for Big Two, 3 for Guandan, or
 * CROUPIER_TRAD_MAX_UNITS. The escrow is a money buy-in taken at join time: when the wallet
 * cannot cover it the join is refused with INSUFFICIENT_FUNDS and nothing is seated. At the end
 * of a deal every escrow is cashed out, then the deal settles (in the writer's FIFO order, so
 * the settlement always finds the escrow back in the wallet), then a new escrow is bought for
 * the next deal (a player whose wallet no longer covers it is unseated with an Error push). A
 * loss is capped at the escrow: when a deal's multipliers would take more from a seat, every
 * loss is scaled down and the winners' gains with them, so settlements can always apply. The
 * rake (CROUPIER_TRAD_RAKE_PERMILLE of each gain) makes the deltas sum to -rake. Bots play
 * for the house: their seats buy in from, and settle to, the wallet CROUPIER_TRAD_HOUSE
 * (default "house-traditional"), which must be funded for bots to sit. A deal voided by the
 * drain bound only cashes the escrows out: the wallets are back where they were.
 *
 * Drain. stop_intake: the lobby leaves the pool (joins answered DRAINING), a table between
 * deals closes at once (escrows cashed out, TableClosing to the players, DeskClosing to the
 * gateway), a table in a deal finishes it and then closes; no table deals again.
 */
#ifndef CROUPIER_TRAD_ENGINE_H
#define CROUPIER_TRAD_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "gs.h"
#include "shed_card.h"
#include "shed_game.h"

extern const engine_ops_t trad_engine_ops;

/* Wire card code (rank << 2 | suit, see frame.h) of a core card (the deck is not encoded). */
uint8_t trad_card_to_wire(shed_card_t c);
/* Core card of deck 0 for a wire code, or SHED_CARD_NONE when the code is no card. */
shed_card_t trad_card_from_wire(uint8_t code);

/*
 * Maps wire codes to the exact cards of `hand` (two-deck games: a code listed twice means both
 * copies; a code whose deck-0 copy is not held takes the deck-1 copy). Returns 0 and *out, or
 * -EINVAL when a code is no card or is listed more often than the game has copies (then a
 * refusal as ILLEGAL_MOVE), or -ENOENT when some card is not in the hand (CARDS_NOT_HELD).
 */
int trad_cards_from_wire(const uint8_t *codes, size_t n, int decks, shed_set_t hand,
                         shed_set_t *out);

/*
 * Caps a settlement: delta[0..seats) sums to zero (no rake yet). When some loss exceeds cap,
 * every loss is scaled by cap / (largest loss) and the winners share the reduced pot in
 * proportion to their gains. Then rake_permille of each gain is taken. Writes the final deltas
 * in place and returns the rake (the deltas then sum to -rake).
 */
int64_t trad_settle_cap(int64_t *delta, int seats, int64_t cap, int rake_permille);

/* The loss cap of a game in stake units (per-game default; see above). */
int64_t trad_max_units(const char *game);

#endif
