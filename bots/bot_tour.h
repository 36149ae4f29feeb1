/*
 * bot_tour -- what a tournament bot decides from the gateway's answers, and the fleet's
 * tournament tally (the report's "tournament" object). No I/O: the fleet's tournament concern
 * (bot_fleet_tour.c, docs/bots.md "Tournaments") sends the requests and calls these, and the
 * unit test (tests/unit/test_bot_tour.c) checks them without servers.
 *
 * The answers (docs/protocol.md "Tournaments"):
 *
 *   RegisterTournament   ok or ALREADY_REGISTERED: registered (a restarted fleet goes on);
 *                        TOURNAMENT_OVER, NO_REENTRY, NOT_REGISTERED: final (the bot is out, or
 *                        the tournament is over); INSUFFICIENT_FUNDS, TOURNAMENT_FULL,
 *                        REGISTRATION_CLOSED, NO_SUCH_TOURNAMENT: refused, the bot stops (an
 *                        expected refusal); a retriable refusal (Error.retriable, UNAVAILABLE,
 *                        DRAINING, OVERLOADED, RATE_LIMITED): made again; anything else is an
 *                        unexpected error and the bot stops.
 *   TakeTournamentSeat   a Snapshot: seated; NOT_SEATED with retriable: waiting for a seat, ask
 *                        again after a short pause; NOT_REGISTERED, TOURNAMENT_OVER: final;
 *                        NO_SUCH_TOURNAMENT: refused; retriable refusals as above; anything
 *                        else (NOT_SEATED without retriable among them) unexpected.
 *
 * Single-threaded: one tally per event loop, like the bot_book_t.
 */
#ifndef CROUPIER_BOT_TOUR_H
#define CROUPIER_BOT_TOUR_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

typedef enum {
    BOT_TOUR_OK = 0,  /* registered / seated */
    BOT_TOUR_WAIT,    /* NOT_SEATED, retriable: ask again after 200-500 ms */
    BOT_TOUR_RETRY,   /* a retriable refusal: the fleet's retry (a new request, bounded) */
    BOT_TOUR_OVER,    /* final: out of the tournament, or the tournament is over */
    BOT_TOUR_REFUSED, /* refused registration (or no such tournament): the bot stops, expected */
    BOT_TOUR_ERROR,   /* anything else: unexpected, the bot stops */
} bot_tour_verdict_t;

/* The answer to RegisterTournament: code 0 = Result ok, else the Error's code and retriable. */
bot_tour_verdict_t bot_tour_register_verdict(int code, bool retriable);
/* The answer to TakeTournamentSeat: code 0 = a Snapshot, else the Error's code and retriable. */
bot_tour_verdict_t bot_tour_seat_verdict(int code, bool retriable);
/* The verdict's name ("ok", "wait", "retry", "over", "refused", "error"). */
const char *bot_tour_verdict_name(bot_tour_verdict_t v);

typedef enum {
    BOT_TOUR_C_REGISTERED = 0,     /* registrations answered ok or ALREADY_REGISTERED */
    BOT_TOUR_C_ALREADY_REGISTERED, /* of those, ALREADY_REGISTERED (a restarted fleet) */
    BOT_TOUR_C_SEAT_REQUESTS,      /* TakeTournamentSeat requests sent (new ones, not resends) */
    BOT_TOUR_C_NOT_SEATED,         /* of their answers, NOT_SEATED retriable (asked again) */
    BOT_TOUR_C_SEATED,             /* of their answers, a Snapshot: the bot reached a table */
    BOT_TOUR_C_TABLE_CHANGES,      /* TableClosing{CLOSING_TOURNAMENT} seen at a table */
    BOT_TOUR_C_CANCELLED,          /* bots told TOUR_EVENT_CANCELLED */
    BOT_TOUR_C_DONE,               /* bots done with the tournament (out, over, cancelled) */
    BOT_TOUR_C_COUNT,
} bot_tour_counter_t;

typedef struct bot_tour_book bot_tour_book_t;

/* A tally for tournament `tournament` and bots 0..nbots-1. NULL on a bad count (0). */
bot_tour_book_t *bot_tour_book_create(uint64_t tournament, uint32_t nbots);
/* NULL is a no-op. */
void bot_tour_book_destroy(bot_tour_book_t *t);
uint64_t bot_tour_book_tournament(const bot_tour_book_t *t);

void bot_tour_count(bot_tour_book_t *t, bot_tour_counter_t c);
uint64_t bot_tour_counter(const bot_tour_book_t *t, bot_tour_counter_t c);
/* The report key of a counter ("registered", "seat_requests"...). */
const char *bot_tour_counter_name(bot_tour_counter_t c);

/* A TournamentEvent seen by a bot, by kind (TournamentEventKind; unknown kinds count as
 * "OTHER"). Every bot that receives one counts it: a broadcast seen by six bots counts six. */
void bot_tour_event(bot_tour_book_t *t, int kind);
uint64_t bot_tour_events(const bot_tour_book_t *t, int kind);
/* The event kind's report key: "STARTED", "LEVEL_UP", ... ("OTHER" for an unknown kind). */
const char *bot_tour_event_name(int kind);

/* A registration refused (BOT_TOUR_REFUSED), by the code's name (copied). */
void bot_tour_refused(bot_tour_book_t *t, const char *code_name);
/* Refusals counted under name, and over all names. */
uint64_t bot_tour_refusals(const bot_tour_book_t *t, const char *code_name);
uint64_t bot_tour_refusals_total(const bot_tour_book_t *t);

/*
 * Bot `bot` (player `player`) learned its place and prize (its ELIMINATED, the FINISHED that
 * names it, or its entry in GetTournament). Recorded once per bot: returns true when this was
 * the first record (counted as eliminated when place > 1, finished when place is 1), false
 * when the bot already had one (kept) or bot/place is out of range (place 0).
 */
bool bot_tour_place(bot_tour_book_t *t, uint32_t bot, uint64_t player, uint32_t place,
                    int64_t prize);
/* Whether bot has a place recorded; its place (0 without one). */
bool bot_tour_has_place(const bot_tour_book_t *t, uint32_t bot);
uint32_t bot_tour_place_of(const bot_tour_book_t *t, uint32_t bot);
/* Bots recorded out with a place > 1, and with place 1 (the winner). */
uint64_t bot_tour_eliminated(const bot_tour_book_t *t);
uint64_t bot_tour_finished(const bot_tour_book_t *t);

/*
 * The report's "tournament" object (the caller owns the reference):
 *   {"id", "registered", "already_registered", "refused": {CODE: n}, "seat_requests",
 *    "not_seated", "seated", "table_changes", "eliminated", "finished", "cancelled", "done",
 *    "places": {"<player>": place}, "prizes": {"<player>": prize},
 *    "events": {"STARTED": n, "LEVEL_UP": n, ...}}
 * places and prizes list the bots with a place recorded; events the kinds seen.
 */
json_t *bot_tour_report(const bot_tour_book_t *t);

#endif
