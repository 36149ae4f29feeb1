/*
 * bot_tour.c -- a tournament bot's verdicts on the gateway's answers and the fleet's tournament
 * tally (bot_tour.h is the contract; docs/bots.md "Tournaments" the design).
 */
#include "bot_tour.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "xmalloc.h"

/* ---- verdicts ------------------------------------------------------------------------------ */

/* The codes every request may be refused with for a while: made again as new requests. */
static bool tour_code_retriable(int code, bool retriable)
{
    return retriable || code == CROUPIER__ERROR_CODE__UNAVAILABLE ||
           code == CROUPIER__ERROR_CODE__DRAINING || code == CROUPIER__ERROR_CODE__OVERLOADED ||
           code == CROUPIER__ERROR_CODE__RATE_LIMITED;
}

bot_tour_verdict_t bot_tour_register_verdict(int code, bool retriable)
{
    switch (code) {
    case 0:
    case CROUPIER__ERROR_CODE__ALREADY_REGISTERED:
        return BOT_TOUR_OK;
    case CROUPIER__ERROR_CODE__TOURNAMENT_OVER:
    case CROUPIER__ERROR_CODE__NO_REENTRY:
    case CROUPIER__ERROR_CODE__NOT_REGISTERED:
        return BOT_TOUR_OVER;
    case CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS:
    case CROUPIER__ERROR_CODE__TOURNAMENT_FULL:
    case CROUPIER__ERROR_CODE__REGISTRATION_CLOSED:
    case CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT:
        return BOT_TOUR_REFUSED;
    default:
        return tour_code_retriable(code, retriable) ? BOT_TOUR_RETRY : BOT_TOUR_ERROR;
    }
}

bot_tour_verdict_t bot_tour_seat_verdict(int code, bool retriable)
{
    switch (code) {
    case 0:
        return BOT_TOUR_OK;
    case CROUPIER__ERROR_CODE__NOT_SEATED:
        /* Waiting for a seat (before the start, for a table, for its deal, for its new host).
         * Without retriable it is the gateway that does not route the request at all. */
        return retriable ? BOT_TOUR_WAIT : BOT_TOUR_ERROR;
    case CROUPIER__ERROR_CODE__NOT_REGISTERED:
    case CROUPIER__ERROR_CODE__TOURNAMENT_OVER:
        return BOT_TOUR_OVER;
    case CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT:
        return BOT_TOUR_REFUSED;
    default:
        return tour_code_retriable(code, retriable) ? BOT_TOUR_RETRY : BOT_TOUR_ERROR;
    }
}

const char *bot_tour_verdict_name(bot_tour_verdict_t v)
{
    static const char *const names[] = {"ok", "wait", "retry", "over", "refused", "error"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "unknown";
}

/* ---- the tally ----------------------------------------------------------------------------- */

#define TOUR_EVENT_KINDS 8 /* TournamentEventKind 1..7; slot 0 holds unknown kinds ("OTHER") */

typedef struct {
    uint64_t player;
    uint32_t place; /* 0: none recorded */
    int64_t prize;
} tour_place_t;

typedef struct {
    char *name;
    uint64_t n;
} tour_refusal_t;

struct bot_tour_book {
    uint64_t tournament;
    uint32_t nbots;
    uint64_t counters[BOT_TOUR_C_COUNT];
    uint64_t events[TOUR_EVENT_KINDS];
    uint64_t eliminated, finished;
    tour_place_t *places; /* per bot */
    tour_refusal_t *refusals;
    size_t nrefusals;
};

static const char *const tour_counter_names[BOT_TOUR_C_COUNT] = {
    [BOT_TOUR_C_REGISTERED] = "registered",
    [BOT_TOUR_C_ALREADY_REGISTERED] = "already_registered",
    [BOT_TOUR_C_SEAT_REQUESTS] = "seat_requests",
    [BOT_TOUR_C_NOT_SEATED] = "not_seated",
    [BOT_TOUR_C_SEATED] = "seated",
    [BOT_TOUR_C_TABLE_CHANGES] = "table_changes",
    [BOT_TOUR_C_CANCELLED] = "cancelled",
    [BOT_TOUR_C_DONE] = "done",
};

static const char *const tour_event_names[TOUR_EVENT_KINDS] = {
    "OTHER",       "STARTED",    "LEVEL_UP", "HAND_FOR_HAND",
    "MOVED_TABLE", "ELIMINATED", "FINISHED", "CANCELLED",
};

bot_tour_book_t *bot_tour_book_create(uint64_t tournament, uint32_t nbots)
{
    if (nbots == 0)
        return NULL;
    bot_tour_book_t *t = xcalloc(1, sizeof *t);
    t->tournament = tournament;
    t->nbots = nbots;
    t->places = xcalloc(nbots, sizeof *t->places);
    return t;
}

void bot_tour_book_destroy(bot_tour_book_t *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->nrefusals; i++)
        free(t->refusals[i].name);
    free(t->refusals);
    free(t->places);
    free(t);
}

uint64_t bot_tour_book_tournament(const bot_tour_book_t *t)
{
    return t->tournament;
}

void bot_tour_count(bot_tour_book_t *t, bot_tour_counter_t c)
{
    if ((unsigned)c < BOT_TOUR_C_COUNT)
        t->counters[c]++;
}

uint64_t bot_tour_counter(const bot_tour_book_t *t, bot_tour_counter_t c)
{
    return (unsigned)c < BOT_TOUR_C_COUNT ? t->counters[c] : 0;
}

const char *bot_tour_counter_name(bot_tour_counter_t c)
{
    return (unsigned)c < BOT_TOUR_C_COUNT ? tour_counter_names[c] : "unknown";
}

static int tour_event_slot(int kind)
{
    return kind > 0 && kind < TOUR_EVENT_KINDS ? kind : 0;
}

void bot_tour_event(bot_tour_book_t *t, int kind)
{
    t->events[tour_event_slot(kind)]++;
}

uint64_t bot_tour_events(const bot_tour_book_t *t, int kind)
{
    return t->events[tour_event_slot(kind)];
}

const char *bot_tour_event_name(int kind)
{
    return tour_event_names[tour_event_slot(kind)];
}

void bot_tour_refused(bot_tour_book_t *t, const char *code_name)
{
    for (size_t i = 0; i < t->nrefusals; i++) {
        if (strcmp(t->refusals[i].name, code_name) == 0) {
            t->refusals[i].n++;
            return;
        }
    }
    t->refusals = xreallocarray(t->refusals, t->nrefusals + 1, sizeof *t->refusals);
    t->refusals[t->nrefusals].name = xstrdup(code_name);
    t->refusals[t->nrefusals].n = 1;
    t->nrefusals++;
}

uint64_t bot_tour_refusals(const bot_tour_book_t *t, const char *code_name)
{
    for (size_t i = 0; i < t->nrefusals; i++)
        if (strcmp(t->refusals[i].name, code_name) == 0)
            return t->refusals[i].n;
    return 0;
}

uint64_t bot_tour_refusals_total(const bot_tour_book_t *t)
{
    uint64_t n = 0;
    for (size_t i = 0; i < t->nrefusals; i++)
        n += t->refusals[i].n;
    return n;
}

bool bot_tour_place(bot_tour_book_t *t, uint32_t bot, uint64_t player, uint32_t place,
                    int64_t prize)
{
    if (bot >= t->nbots || place == 0 || t->places[bot].place != 0)
        return false;
    t->places[bot].player = player;
    t->places[bot].place = place;
    t->places[bot].prize = prize;
    if (place == 1)
        t->finished++;
    else
        t->eliminated++;
    return true;
}

bool bot_tour_has_place(const bot_tour_book_t *t, uint32_t bot)
{
    return bot < t->nbots && t->places[bot].place != 0;
}

uint32_t bot_tour_place_of(const bot_tour_book_t *t, uint32_t bot)
{
    return bot < t->nbots ? t->places[bot].place : 0;
}

uint64_t bot_tour_eliminated(const bot_tour_book_t *t)
{
    return t->eliminated;
}

uint64_t bot_tour_finished(const bot_tour_book_t *t)
{
    return t->finished;
}

json_t *bot_tour_report(const bot_tour_book_t *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer((json_int_t)t->tournament));
    for (int i = 0; i < BOT_TOUR_C_COUNT; i++)
        json_object_set_new(o, tour_counter_names[i], json_integer((json_int_t)t->counters[i]));
    json_object_set_new(o, "eliminated", json_integer((json_int_t)t->eliminated));
    json_object_set_new(o, "finished", json_integer((json_int_t)t->finished));
    json_t *refused = json_object();
    for (size_t i = 0; i < t->nrefusals; i++)
        json_object_set_new(refused, t->refusals[i].name,
                            json_integer((json_int_t)t->refusals[i].n));
    json_object_set_new(o, "refused", refused);
    json_t *places = json_object(), *prizes = json_object();
    for (uint32_t i = 0; i < t->nbots; i++) {
        if (t->places[i].place == 0)
            continue;
        char key[24];
        snprintf(key, sizeof key, "%" PRIu64, t->places[i].player);
        json_object_set_new(places, key, json_integer((json_int_t)t->places[i].place));
        json_object_set_new(prizes, key, json_integer((json_int_t)t->places[i].prize));
    }
    json_object_set_new(o, "places", places);
    json_object_set_new(o, "prizes", prizes);
    json_t *events = json_object();
    for (int k = 1; k <= TOUR_EVENT_KINDS; k++) {
        int slot = k % TOUR_EVENT_KINDS; /* the known kinds first, "OTHER" last */
        if (t->events[slot] > 0)
            json_object_set_new(events, tour_event_names[slot],
                                json_integer((json_int_t)t->events[slot]));
    }
    json_object_set_new(o, "events", events);
    return o;
}
