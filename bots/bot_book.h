/*
 * bot_book -- the bookkeeping of croupier-bot: what the bots saw, and the verdict.
 *
 * A bot reports what it observes (a round starting or ending at its desk, an action and its
 * latency, an error, a reconnect...). The book keeps one "open round" per bot and decides:
 *
 *   * A round is *started* for a bot when the bot sees evidence that it runs: an event that
 *     carries its round id (Deal, a Snapshot with round_id), or, for games whose events carry no
 *     id at the start (the "test" engine), an action accepted during it (then the round is
 *     anonymous until its RoundEnd names it).
 *   * It is *ended* by a RoundEnd (outcome COMPLETED -> finished, VOIDED -> voided) naming it,
 *     or, for an anonymous open round, by the next RoundEnd at the same desk.
 *   * It is *torn* when the bot saw it start and never saw it end or void: a RoundEnd naming a
 *     different round arrives first, the bot is moved to another desk, or the run finishes
 *     (bot_book_finish) with the round still open.
 *   * It was *crash-voided* when its table's server stopped without a clean exit while it was
 *     open: the gateway says TableClosing{CLOSING_CRASHED} (and moves the bot), or answers
 *     TABLE_CLOSED ("table gone") to a Resume or an action. No RoundEnd ever comes for such a
 *     round (the recovery voids it in the records, docs/queues.md): counted apart, never as
 *     torn; its id, when known, goes to the round-id file.
 *   * It ended *unseen* when the bot lost its connection while it was open and, after the
 *     reconnect, the Resume snapshot shows the round is no longer running (the protocol does not
 *     replay events missed while disconnected), or, before that snapshot, an event of a later
 *     round arrives (pushes follow a player's newest request at once, so they can reach the
 *     new connection ahead of the Resume's answer). These are counted apart, never as torn,
 *     and only for disconnects; their ids go to the round-id file, and the harness checks each
 *     against Redis.
 *
 * Distinct rounds (by round id, over all bots) are counted too, and their ids can be written to
 * a file for reconciliation against the settlements in Redis.
 *
 * Errors are counted by name: a protocol ErrorCode name ("NO_ROUND") or a local one
 * ("connection_lost", "request_timeout"...), each either expected (part of normal play, e.g.
 * a refusal between rounds, a GoAway) or unexpected. The run is OK when no round is torn and
 * no unexpected error happened.
 *
 * Single-threaded: one book per event loop. Times are monotonic milliseconds given by the
 * caller, so tests can drive them.
 */
#ifndef CROUPIER_BOT_BOOK_H
#define CROUPIER_BOT_BOOK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

typedef struct bot_book bot_book_t;

/* Event counters (report keys in bot_book_counter_name()). */
typedef enum {
    BOT_C_CONNECTS = 0,     /* TCP connections established */
    BOT_C_CONNECT_FAILURES, /* connection attempts that failed (the next gateway is tried) */
    BOT_C_LOGINS,
    BOT_C_JOINS,
    BOT_C_RESUMES,
    BOT_C_ACTIONS_SENT, /* actions sent (first attempts, not retries) */
    BOT_C_ACTIONS_OK,
    BOT_C_ACTIONS_REFUSED,
    BOT_C_RETRIES,   /* requests sent again with the same request id */
    BOT_C_ABANDONED, /* requests whose connection went away before an answer */
    BOT_C_RECONNECTS,
    BOT_C_RECONNECTS_GOAWAY, /* reconnects that followed a GoAway (expected) */
    BOT_C_GOAWAYS,
    BOT_C_MOVES,
    BOT_C_TABLE_CLOSINGS,
    BOT_C_LEAVES,
    BOT_C_REFRESHES,        /* Resumes a strategy asked for to refresh its view of the table */
    BOT_C_PINGS,            /* keepalive Pings (nothing else sent for --ping-ms) */
    BOT_C_CONNECTIONS_LOST, /* connections lost without a GoAway (a gateway died, a reset) */
    BOT_C_RECONNECTS_LOST,  /* of those, recovered: connected again and seated (or joined) */
    BOT_C_CRASH_CLOSINGS,   /* TableClosing{CLOSING_CRASHED}: the table's server is gone */
    BOT_C_TABLE_MOVES,      /* of the moves, whole-table moves (Moved.whole_table) */
    BOT_C_MATCH_LOST,       /* whole-table moves whose new table differed (seats, players,
                               a match's levels, a room's scoreboard) from the one the bot left;
                               rooms whose final scoreboard differed from the deals the bot saw */
    BOT_C_ROOMS_CREATED,    /* private rooms created (CreateRoom answered Joined) */
    BOT_C_ROOMS_JOINED,     /* private rooms joined by code */
    BOT_C_ROOMS_FINISHED,   /* rooms that played all their deals (final RoomInfo, per bot) */
    BOT_C_GATEWAY_SILENT,   /* of the connections lost, those the keepalive closed: nothing
                               came from the gateway, not even the Pong of a probe (a frozen
                               or cut-off gateway; docs/bots.md "Keepalive") */
    BOT_C_MOVES_FAILED,     /* a second TableClosing before any Moved: no server could take the
                               seat (the gateway says so, docs/gateway.md); joined again */
    BOT_C_COUNT,
} bot_counter_t;

/* Creates a book for bots 0..nbots-1. Returns NULL on a bad count (0). */
bot_book_t *bot_book_create(uint32_t nbots);
/* NULL is a no-op. */
void bot_book_destroy(bot_book_t *b);

/*
 * Bot `bot` sees evidence that a round runs at desk `desk`. round_id NULL or "" = anonymous
 * (id not known yet). If the bot already has an open round that this one cannot be (another
 * desk, or another known id), the old one is recorded torn first.
 */
void bot_book_round_started(bot_book_t *b, uint32_t bot, uint64_t desk, const char *round_id,
                            int64_t now_ms);
/* How a round ended, from its RoundEnd. */
typedef enum {
    BOT_ROUND_FINISHED = 1, /* OUTCOME_COMPLETED with money moved (a delta or rake non-zero) */
    BOT_ROUND_VOIDED = 2,   /* OUTCOME_VOIDED: every stake refunded */
    BOT_ROUND_NO_MONEY = 3, /* OUTCOME_COMPLETED with every delta zero (e.g. a Dou Dizhu deal
                               thrown in because nobody bid): the engine need not settle it */
} bot_round_outcome_t;

/*
 * Bot `bot` sees RoundEnd{round_id, outcome} at desk `desk`. Closes its open round when it is
 * this one (or anonymous at this desk); an open round with another id is recorded torn. The
 * round counts once per distinct id in the distinct totals.
 */
void bot_book_round_ended(bot_book_t *b, uint32_t bot, uint64_t desk, const char *round_id,
                          bot_round_outcome_t outcome, int64_t now_ms);
/*
 * Bot `bot` now sits at `desk` (Joined, Moved, or a Resume snapshot). An open round at another
 * desk is torn (a bot is moved only between rounds). snapshot_round_id: the round running per
 * a Resume snapshot (NULL = none or not said); with after_disconnect, an open round that the
 * snapshot shows is over is counted as ended unseen instead of torn.
 */
void bot_book_seated(bot_book_t *b, uint32_t bot, uint64_t desk, bool after_disconnect,
                     bool snapshot_says_round, const char *snapshot_round_id, int64_t now_ms);
/*
 * Bot `bot` lost its connection while seated. Until its next bot_book_seated (the Resume
 * snapshot, or a Joined), a RoundEnd or Deal of another round ends its open round as unseen
 * instead of torn.
 */
void bot_book_disconnected(bot_book_t *b, uint32_t bot);
/*
 * Bot `bot`'s table is gone with its server (TableClosing{CLOSING_CRASHED}, or TABLE_CLOSED to
 * a Resume or an action): its open round, if any, is crash-voided (counted apart, never torn;
 * its id, when known, listed). Returns whether there was one.
 */
bool bot_book_crash_voided(bot_book_t *b, uint32_t bot, int64_t now_ms);
/* Whether the bot has an open round. */
bool bot_book_round_open(const bot_book_t *b, uint32_t bot);
/* The bot's open round, if the bot lost its connection during it and has seen no Snapshot
 * since, is counted ended unseen (its RoundEnd went to the connection it lost) and closed.
 * Returns whether it was. */
bool bot_book_round_unseen_if_away(bot_book_t *b, uint32_t bot);
/* The bot's open round is counted ended unseen and closed, whether or not the bot was away:
 * for a tournament player whose end the director stated (out, won: its last hand's result came
 * first). Returns whether a round was open. */
bool bot_book_round_unseen(bot_book_t *b, uint32_t bot);
/* Ends the run: every round still open is torn. Idempotent. */
void bot_book_finish(bot_book_t *b, int64_t now_ms);

void bot_book_count(bot_book_t *b, bot_counter_t c);
uint64_t bot_book_counter(const bot_book_t *b, bot_counter_t c);
const char *bot_book_counter_name(bot_counter_t c);

/* Counts one error under `name` (copied); expected errors do not fail the run. */
void bot_book_error(bot_book_t *b, const char *name, bool expected);
/* Errors counted under name (expected + unexpected), and all unexpected ones. */
uint64_t bot_book_errors(const bot_book_t *b, const char *name);
uint64_t bot_book_unexpected(const bot_book_t *b);
/* Counts a GoAway by reason name. */
void bot_book_goaway(bot_book_t *b, const char *reason);

/* Records one action's latency (request sent -> reply), in microseconds. */
void bot_book_latency(bot_book_t *b, int64_t us);
/* Latency percentile p (0..100) in microseconds, nearest rank; -1 with no samples. */
int64_t bot_book_latency_pct(bot_book_t *b, double p);
/* Records one whole-table move's latency, in microseconds: the old table's last RoundEnd ->
 * the Moved (the report's table_move_ms; bench/table_move.sh). */
void bot_book_move_latency(bot_book_t *b, int64_t us);
int64_t bot_book_move_latency_pct(bot_book_t *b, double p);

/* Observed totals (per bot observation): rounds started, finished (no_money among them),
 * voided, torn, ended unseen, crash-voided. */
typedef struct {
    uint64_t started, finished, no_money, voided, torn, ended_unseen, crash_voided;
    uint64_t distinct_finished, distinct_voided; /* per round id over all bots */
} bot_book_rounds_t;
void bot_book_rounds(const bot_book_t *b, bot_book_rounds_t *out);

/* No torn round and no unexpected error. */
bool bot_book_ok(const bot_book_t *b);

/*
 * The report as a JSON object (caller owns the reference). `meta` (may be NULL; borrowed) is
 * merged in at the top level (bots, game, seconds...).
 */
json_t *bot_book_report(bot_book_t *b, json_t *meta);
/* Writes the report to path (pretty, atomically via a temp file + rename). 0 or -errno. */
int bot_book_write_report(bot_book_t *b, json_t *meta, const char *path);
/* Writes every distinct round id seen to end, one a line: "<round_id> finished|voided|nomoney"
 * (see bot_round_outcome_t), then the id of every round that ended unseen: "<round_id> unseen",
 * then of every crash-voided round: "<round_id> crash_voided" (an id may appear on several
 * kinds of line). Returns how many lines. */
size_t bot_book_write_round_ids(const bot_book_t *b, FILE *f);

#endif
