/*
 * trad_engine -- the "traditional" engine of croupier-game: Dou Dizhu, Run Fast, Big Two and
 * Guandan played on the shared shedding core (shed_game.h), standing on the table kit
 * (engine/tk.h, docs/architecture.md §12; rules of play and money in
 * docs/rules/traditional-engine.md). The kit does the table's work; trad_engine.c is the
 * adapter (TK_ENGINE(traditional, ...): traditional_engine_ops).
 *
 * Matchmaking. The kit's lobby seats players by (game, stake): a table of that game and stake
 * with a free seat, or a new one. A deal starts, after the gap (CROUPIER_TRAD_GAP_MS), when
 * every seat is taken and holds its escrow (3 for Dou Dizhu and Run Fast, 4 for Big Two and
 * Guandan). When a table has a human and empty seats for CROUPIER_TRAD_BOT_FILL_MS, server bots
 * take the empty seats; bots play legal moves from the same rules code after
 * CROUPIER_TRAD_BOT_MS (Dou Dizhu: bid 1 when nobody has bid, else pass; then the smallest
 * play, passing only when they cannot beat), never count as humans, and stand up when the last
 * human leaves. An empty table is destroyed after CROUPIER_TRAD_IDLE_MS.
 *
 * Turns. Each turn has CROUPIER_TRAD_ACTION_MS. On timeout the server plays for the player
 * ("trustee": it declines to bid, passes when passing is allowed, otherwise makes the smallest
 * legal play) and the seat stays on trustee, its next turns played after
 * CROUPIER_TRAD_TRUSTEE_MS, until the player acts or resumes; a disconnected (PlayerGone) or
 * leaving player's turns are played after CROUPIER_TRAD_TRUSTEE_MS too. A player who resumes
 * during such a turn gets the full turn time again.
 *
 * Money. Each seat holds an escrow of the game's maximum loss at the stake: max_units(game) x
 * stake, where max_units is 96 for Dou Dizhu (landlord: bid 3 x 2^4 x 2), 64 for Run Fast, 39
 * for Big Two, 3 for Guandan, or CROUPIER_TRAD_MAX_UNITS. The escrow is the seat's buy-in
 * (tk_game_t.buyin_for) from the wallet into the seat's account (ts.*): when the wallet cannot
 * cover it the join is refused with INSUFFICIENT_FUNDS. Each deal settles against the seat
 * accounts; after it, a stack below the escrow is topped up from the wallet back to the escrow
 * (a winner keeps its gains at the table until it leaves), or, when the wallet cannot cover
 * that, the seat leaves the table (TableClosing{CLOSING_BUSTED}) and is cashed out. A loss is
 * capped at the escrow: when a deal's multipliers would take more from a seat, every loss is
 * scaled down and the winners' gains with them (trad_settle_cap). The rake
 * (CROUPIER_TRAD_RAKE_PERMILLE of each gain) makes the deltas sum to -rake. A deal nobody bid
 * for is thrown in: a completed round with every delta 0. Every deal -- settled, thrown in or
 * voided -- has one hand-history record (docs/hand-history.md). Bots play for the house wallet
 * CROUPIER_TRAD_HOUSE (default "house-traditional"), which must be funded for bots to sit. A
 * deal voided by the drain bound moves nothing: the seat accounts still hold the stacks, which
 * the closing table cashes out.
 *
 * Rule options. croupier-game --trad-options (CROUPIER_TRAD_OPTIONS) switches rule options on
 * per game, e.g. "runfast=report-single+four-with-two,guandan=a-three-fails" (trad_options_parse
 * below; the options of docs/rules/runfast.md and guandan.md), checked at start
 * (tk_game_t.check_options). Every table of that game is created with them, and clients learn
 * them from Joined, from the Deal of their own cards and from SheddingState in snapshots
 * (rule_options, bomb_units). Server bots and trustee play from the table's own game, so they
 * follow them too. Guandan's levels, tribute and teams live in the table's game across deals.
 *
 * Drain. The kit's: joins are answered DRAINING, a table between deals closes at once (every
 * stack cashed out, then TableClosing to the players and DeskClosing to the gateway), a table in
 * a deal finishes it and then closes; no table deals again.
 *
 * Since the table kit (the engine before it differed; docs/rules/traditional-engine.md lists
 * the same): the escrow is one stack per seat topped up after each deal (it was cashed out and
 * bought again every deal, and a player whose wallet no longer covered it got an Error push and
 * was unseated); the turn time is CROUPIER_TRAD_ACTION_MS (was CROUPIER_TRAD_TURN_MS) and the
 * trustee delay CROUPIER_TRAD_TRUSTEE_MS (was CROUPIER_TRAD_BOT_MS's); a seat that timed out
 * stays on trustee; a full table's first deal waits the gap too; a second Join whose buy-in is
 * in flight is answered UNAVAILABLE ("join in progress; retry"; was ALREADY_SEATED); event_seq
 * is one counter per table (was one per seat); the answer to an action follows the pushes it
 * caused; every deal has a hand-history record (thrown-in and voided deals too) in the kit's
 * schema; the settings are also flags (--trad-action-ms ...), checked at start.
 */
#ifndef CROUPIER_TRAD_ENGINE_H
#define CROUPIER_TRAD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gs.h"
#include "shed_card.h"
#include "shed_game.h"

/* The engine for croupier-game's table of engines (TK_ENGINE in trad_engine.c). */
extern const engine_ops_t traditional_engine_ops;

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

/* Rule options of the games of one server (croupier-game --trad-options). */
#define TRAD_OPTIONS_MAX_GAMES 4
typedef struct {
    int n;
    struct {
        const shed_rules_t *rules;
        unsigned options; /* SHED_OPT_* of that rule set */
        int bomb_units;   /* SHED_OPT_RF_BOMB_PAYS: units per bomb (0 without the option) */
    } game[TRAD_OPTIONS_MAX_GAMES];
} trad_options_t;

/*
 * Parses rule options per game: "GAME=OPT[+OPT...][,GAME=OPT...]", e.g.
 * "runfast=report-single+four-with-two,guandan=a-three-fails"; OPT is an option name of that
 * game's rule set (shed_option_from_name), and "bomb-pays" may carry its units as
 * "bomb-pays:N" (1..1000; default SHED_BOMB_UNITS_DEFAULT). An empty text means no options.
 * `games` is the --games list (comma-separated; NULL: all four): a game given options must be
 * one of them. Each game's set is also checked by creating a game with it (shed_game_create).
 * Returns 0 and *out (may be NULL: check only), or -EINVAL with one line saying what is wrong
 * written to err (unknown game or option, an option of another game, a game or option given
 * twice, bad units, a game not served).
 */
int trad_options_parse(const char *text, const char *games, trad_options_t *out, char *err,
                       size_t errlen);

/*
 * Writes the option names of `options` (SHED_OPT_* bits) to names[] in a fixed order
 * (report-single, four-with-two, four-with-three, bomb-pays, a-three-fails) and returns how
 * many (at most cap). The strings are static.
 */
int trad_option_names(unsigned options, const char **names, int cap);

#endif
