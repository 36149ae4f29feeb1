/*
 * bot_fleet -- many bot players on one libevent loop, speaking the real client protocol
 * (proto/client.proto through proto/frame.h) to croupier-gate.
 *
 * Each bot: connects to a gateway from the list, logs in with an HMAC token minted for its
 * player id (common/token.h), resumes its seat (Resume) when the gateway says it holds one or
 * it had one before, else joins (Join engine/game/stake), then plays through its game's
 * strategy (bot_strategy.h). It follows the protocol's lifecycle signals:
 *
 *   GoAway{reconnect_delay_ms}  read to EOF, close, wait the (already jittered) delay plus a
 *                               little own jitter, connect to the next gateway in the list,
 *                               Login again, Resume the seat. Counted as GoAway reconnects
 *                               (expected), never as errors (SESSION_REPLACED, PROTOCOL_ERROR
 *                               and IDLE are errors: a bot never causes them on purpose).
 *   Moved{to}                   the new seat: play on there.
 *   TableClosing{after_ms}      stop acting; a Moved must follow within after_ms + 15 s, else
 *                               the bot leaves and joins again (error "closing_without_move").
 *   TableClosing{CRASHED}       the table's server died: the open round is crash-voided (never
 *                               torn), the bot stops acting; with after_ms a Moved follows
 *                               within it (+5 s, else error "crash_without_move"), without it
 *                               the bot joins again. TABLE_CLOSED ("table gone") to a Resume,
 *                               an action or a Leave means the same.
 *   connection lost otherwise   counted (connections_lost); reconnect with jittered exponential
 *                               backoff to another gateway; Resume. Recovered (seated again)
 *                               it is a reconnect (reconnects.after_loss); still not recovered
 *                               when the run ends, the unexpected error "connection_lost".
 *
 * Requests: one in flight per bot, each with a deadline (request_timeout_ms). A request whose
 * answer does not come in time is sent again byte for byte (same request id), up to
 * max_retries times; then error "request_timeout" and the connection is dropped and remade.
 * DEADLINE_EXCEEDED from the gateway is handled the same way (same id, the request is
 * idempotent; docs/gateway.md), counted as an expected error while retries remain.
 * A retriable refusal (Error.retriable, DRAINING, UNAVAILABLE, OVERLOADED, RATE_LIMITED) is
 * counted as expected and the request is made again, as a new request, after a jittered
 * backoff, up to max_retries times.
 *
 * The gateway list is "H:P,H:P..." or "@FILE": a file of addresses (comma or newline
 * separated) read again at every reconnect, so a harness can publish new gateways the way a
 * Service would.
 *
 * Keepalive: a logged-in bot that sent nothing for ping_ms sends a Ping, so the gateway's idle
 * timeout (GoAway{IDLE}) never closes a live bot: one at a table where no round runs, or one
 * that stopped acting and waits for the end of its round.
 *
 * Liveness of the gateway (docs/protocol.md "Keepalive"): a bot that received nothing for
 * keepalive_idle_ms sends a Ping (a probe); when nothing at all arrives within
 * keepalive_timeout_ms of the probe, the gateway is taken for dead (frozen, cut off: its kernel
 * may still accept what the bot writes): the bot closes the connection, counts
 * BOT_C_GATEWAY_SILENT and BOT_C_CONNECTIONS_LOST, and reconnects to another gateway of the
 * list and resumes, as after any lost connection.
 *
 * Rooms: with room_seats the bots play private rooms instead of matchmade tables; every bot
 * checks its room's scoreboard: after a whole-table move the room's deals played and its own
 * total must be the ones it saw before, and at the room's end its total must be the sum of its
 * deltas when it saw every deal (else BOT_C_MATCH_LOST).
 * Tournaments: with tournament the bots register in that hold'em tournament and take their
 * seat with TakeTournamentSeat (after every login and every TableClosing{CLOSING_TOURNAMENT}:
 * never a Resume by a remembered seat), play there, and are done when they are out (their
 * ELIMINATED, the FINISHED that names them, TOURNAMENT_OVER / NOT_REGISTERED) or refused
 * registration; a done bot closes its connection once its last hand has ended.
 * Stopping (bot_fleet_stop): bots stop starting actions on their own, send Leave (tournament
 * bots do not: a tournament seat cannot be left; they close), and wait until their open round
 * ends (bounded by finish_timeout_ms); then the connections are closed and done() runs. Everything
 * is recorded in the bot_book_t given in the config.
 */
#ifndef CROUPIER_BOT_FLEET_H
#define CROUPIER_BOT_FLEET_H

#include <stdbool.h>
#include <stdint.h>

#include "bot_book.h"
#include "bot_strategy.h"
#include "bot_tour.h"
#include "token.h"

struct event_base;

typedef struct bot_fleet bot_fleet_t;

typedef struct {
    struct event_base *base;
    const char *gateways; /* "H:P[,H:P...]" or "@FILE" */
    uint32_t bots;
    const bot_strategy_ops_t *strategy;
    Croupier__Engine engine; /* 0 = the strategy's */
    int64_t stake;
    const token_secret_t *secret; /* not owned */
    uint64_t player_base;         /* bot i plays as player_base + i */
    uint64_t seed;
    int request_timeout_ms;   /* 0 = 3000 */
    int max_retries;          /* 0 = 3 */
    int connect_timeout_ms;   /* 0 = 2000 */
    int ramp_ms;              /* first connects spread over this; 0 = min(2000, 10 x bots) */
    int finish_timeout_ms;    /* bound of the stop; 0 = 15000 */
    int ping_ms;              /* a Ping after this long without sending anything; 0 = 20000 */
    int keepalive_idle_ms;    /* a probe Ping after this long without receiving; 0 = 3000, <0 off */
    int keepalive_timeout_ms; /* no frame this long after the probe: silent; 0 = 5000 */
    bot_book_t *book;         /* not owned */
    /* Private rooms (docs/bots.md "Rooms"): room_seats > 0 groups the bots by room_seats (bots
     * must be a multiple); the first of each group creates a room of room_deals deals
     * (CreateRoom), the others join it by its code (JoinRoom); when it ends the group plays
     * the next one. 0: matchmade tables (Join). */
    int room_seats;
    int room_deals; /* 0 = 4 */
    /* The strategies' move delays ("think time") scaled by this percentage: 100 plays at the
     * strategies' own pace, 10 ten times faster (docs/bots.md "Pace"). 0 = 100. */
    int think_percent;
    /* Tournaments (docs/bots.md "Tournaments"): tournament > 0 makes every bot play that
     * hold'em tournament instead of cash tables: register (RegisterTournament), take its seat
     * (TakeTournamentSeat, asked again while it waits and after every
     * TableClosing{CLOSING_TOURNAMENT}), play there, until it is out or the tournament is over;
     * the bot then closes its connection. Recorded in tour_book (not owned; required then).
     * all_done(all_done_arg), when set, runs on the loop once every bot is done with the
     * tournament (before any bot_fleet_stop): croupier-bot stops the fleet then. */
    uint64_t tournament;
    bot_tour_book_t *tour_book;
    void (*all_done)(void *arg);
    void *all_done_arg;
} bot_fleet_config_t;

/* Creates the fleet (nothing connects before bot_fleet_start). 0, or -EINVAL with a log line
 * (bad gateway list, no strategy, a tournament without its tour_book or with rooms...). */
int bot_fleet_create(const bot_fleet_config_t *cfg, bot_fleet_t **out);
/* Arms the first connects (spread over ramp_ms). */
void bot_fleet_start(bot_fleet_t *f);
/* Begins the graceful stop; done(arg) runs on the loop once every bot is closed. */
void bot_fleet_stop(bot_fleet_t *f, void (*done)(void *arg), void *arg);
/* Bots currently connected and logged in. */
uint32_t bot_fleet_connected(const bot_fleet_t *f);
/* Frees everything (closing connections abruptly if still open). NULL is a no-op. */
void bot_fleet_destroy(bot_fleet_t *f);

#endif
