/*
 * bot_strategy -- how a bot plays one game. Adding a game is one file, a bot_strategy_ops_t
 * named bot_strategy_<game> (strategy_<game>.c, in bots/ or in the game's own folder), and its
 * registration in the build, never in a shared C table: the meson.build that compiles it adds
 *
 *     bot_strategies += ['<game>']
 *     bot_strategy_sources += files('strategy_<game>.c')
 *     bot_strategy_deps += [the rules it uses]
 *
 * and bots/meson.build generates croupier-bot's table of games from the list (one
 * BOT_STRATEGY(<game>) line per entry in bot_strategies_list.h, docs/bots.md).
 *
 * The client (bot_client.c) owns the connection, the seat, requests, retries and bookkeeping;
 * a strategy only sees the events of its seat and answers "what do I send, and when". It keeps
 * its per-seat state in a block of state_size bytes that the client zeroes at every new seat
 * (Joined, Moved, Resume) and frees with the bot.
 *
 * The client calls, on its loop:
 *   on_seat(st, seat)               after Joined / Moved / a Resume snapshot (snap may be NULL)
 *   on_event(st, seat, msg)         for every pushed event of the seat (Deal, Turn, Play,
 *                                   RoundEnd, TableClosing) and for the reply to its own action
 *   decide(st, seat, rng, out, ms)  after each of those and when its timer fires: 1 = send
 *                                   out->action after *ms milliseconds; 2 = refresh the view
 *                                   first (the client sends a Resume; its Snapshot comes back
 *                                   through on_seat); 0 = nothing to send, ask again after *ms
 *                                   (or only at the next event when *ms < 0). decide may be
 *                                   called more than once for one move: it must not assume
 *                                   that what it returned was sent.
 *   free_state(st)                  (optional) frees what the state block points to; called
 *                                   before the block is zeroed for a new seat and at the end
 *   refusal_expected(code)          whether an action refused with this code is part of normal
 *                                   play for the game (the "test" game cannot see when a round
 *                                   runs, so NO_ROUND is expected there; for real games a
 *                                   refused legal move is a bug)
 *   round_in_snapshot               whether the engine's Snapshot names the running round (then
 *                                   a reconnect can tell a round that ended while away)
 *   round_by_action                 whether an accepted action is the only sign that a round
 *                                   runs (the "test" engine pushes no event at a round start)
 *   on_sent(st, seat, mv)           (optional) the move decide() returned was sent just now;
 *                                   the next Result the client hands over answers it
 *
 * Games on the table kit (engine ENGINE_GAME, docs/protocol.md "Games on the table kit"): the
 * Join names the game alone, and everything game-specific travels as the game's own protobuf
 * messages inside the envelope. The client decodes every body it receives with
 * frame_unpack_game() against the strategy's descriptors -- Snapshot.game_state
 * (game_state_desc), ServerMessage.game_event (game_event_desc), Play.action.game
 * (game_action_desc) -- and hands the decoded message to
 *   on_game(st, seat, m, body)      right after on_seat (m is the Snapshot's ServerMessage) or
 *                                   on_event (the game_event or the Play) saw m; body is
 *                                   borrowed for the call. A body that does not decode is the
 *                                   unexpected error "malformed_game_body" and is not handed
 *                                   over; a NULL descriptor leaves that kind of body undecoded.
 * A strategy sends its action message with bot_move_game(out, msg) from decide().
 */
#ifndef CROUPIER_BOT_STRATEGY_H
#define CROUPIER_BOT_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

/* The seat as the client knows it. */
typedef struct {
    uint64_t player_id;
    uint64_t desk_id;
    uint32_t seat;
    int64_t stake;
    Croupier__Engine engine;
    const char *game;
    bool in_round; /* per the events seen (round_id of a Deal / Snapshot until RoundEnd) */
} bot_seat_t;

/* An action to send, with room for its sub-messages (the client packs out->action). */
typedef struct {
    Croupier__Action action;
    Croupier__SheddingAction shedding;
    Croupier__HoldemAction holdem;
    Croupier__BlackjackAction blackjack;
    Croupier__GameAction game; /* a table-kit game's envelope; body in game_body */
    uint8_t cards[FRAME_MAX_CARDS];
    uint8_t game_body[FRAME_GAME_BODY_MAX];
} bot_move_t;

/* A small deterministic generator per bot (xorshift64*), so a run is repeatable by --seed. */
typedef struct {
    uint64_t s;
} bot_rng_t;
uint64_t bot_rng_next(bot_rng_t *r);
/* Uniform in [0, n) (n > 0). */
uint32_t bot_rng_below(bot_rng_t *r, uint32_t n);

typedef struct {
    const char *game;
    Croupier__Engine engine;
    size_t state_size;
    bool round_in_snapshot;
    bool round_by_action;
    void (*on_seat)(void *st, const bot_seat_t *seat, const Croupier__Snapshot *snap);
    void (*on_event)(void *st, const bot_seat_t *seat, const Croupier__ServerMessage *m);
    int (*decide)(void *st, const bot_seat_t *seat, bot_rng_t *rng, bot_move_t *out, int *delay_ms);
    bool (*refusal_expected)(int code);
    void (*free_state)(void *st);
    void (*on_sent)(void *st, const bot_seat_t *seat, const bot_move_t *mv);
    /* ENGINE_GAME: the game's own messages (see above). */
    const ProtobufCMessageDescriptor *game_state_desc;
    const ProtobufCMessageDescriptor *game_event_desc;
    const ProtobufCMessageDescriptor *game_action_desc;
    void (*on_game)(void *st, const bot_seat_t *seat, const Croupier__ServerMessage *m,
                    const ProtobufCMessage *body);
} bot_strategy_ops_t;

/* The strategy of a game by name, or NULL. */
const bot_strategy_ops_t *bot_strategy_find(const char *game);
/* Comma-separated names of the games bots can play (for --help and errors). */
const char *bot_strategy_names(void);

/* Clears m and sets its action body (the client fills the rest). */
void bot_move_init(bot_move_t *m);
/*
 * Makes m a table-kit game's action: body (the game's own action message, borrowed) is checked
 * and serialized into m->game_body (frame_pack_game()) and m->action carries it as Action.game.
 * Returns 0, or a negative errno (the codec refused the message; m's action is then unset).
 */
int bot_move_game(bot_move_t *m, const ProtobufCMessage *body);

#endif
