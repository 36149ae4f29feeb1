/*
 * tour_structure -- a tournament's configuration (format, seats, stacks, buy-in, re-entry,
 * late registration, entrants, guarantee, level schedule, payouts) parsed from JSON, and the
 * level clock: which level is in force at a given time, the time to the next level, and the
 * blinds of a hand (TDA 23: a new level applies from the next hand). See docs/tournaments.md,
 * "Configuration" and "The level clock".
 *
 * No clock is read here: times are milliseconds of the tournament's level clock, which the
 * director keeps (it starts at 0 when play starts and stops while the tournament is paused,
 * for example during hand-for-hand); the last level lasts until the end.
 */
#ifndef CROUPIER_TOUR_STRUCTURE_H
#define CROUPIER_TOUR_STRUCTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tour_payout.h"

#define TOUR_MIN_SEATS 2
#define TOUR_MAX_SEATS 10
#define TOUR_MAX_LEVELS 1000
#define TOUR_MAX_ENTRANTS 1000000

/* TOUR_FORMAT_MATCH: a match hall's match (比赛场) for the shedding games: no levels, no stacks;
 * its stages are in `match` (match_hall.h; docs/tournaments.md "Match halls: the structure"). */
typedef enum { TOUR_FORMAT_SNG, TOUR_FORMAT_MTT, TOUR_FORMAT_MATCH } tour_format_t;

struct match_hall;

/* One step of the schedule: a level of play or a break (is_break: no blinds, no hand). */
typedef struct {
    bool is_break;
    int64_t small_blind;
    int64_t big_blind;
    int64_t ante;        /* per player, or the big blind's ante when big_blind_ante */
    bool big_blind_ante; /* the big blind alone posts `ante` for the table */
    int64_t duration_ms; /* > 0 */
    uint32_t number;     /* playing levels 1, 2, 3...; a break carries the number of the level
                          * before it (0 when it comes first) */
} tour_level_t;

typedef struct {
    tour_format_t format;
    uint32_t seats_per_table; /* TOUR_MIN_SEATS..TOUR_MAX_SEATS */
    int64_t starting_stack;   /* > 0 */
    int64_t buy_in;           /* >= 0, into the prize pool */
    int64_t fee;              /* >= 0, the house's */
    bool reentry;
    uint32_t max_reentries;   /* per player; 0 when !reentry */
    uint32_t late_reg_levels; /* registration open until the end of level N; 0 = closed at start */
    uint32_t min_entrants;
    uint32_t max_entrants;
    int64_t guarantee;   /* 0 = none */
    uint32_t h4h_margin; /* hand-for-hand from paid + margin players left (1 = the bubble);
                          * 0 = never (docs/tournaments.md "Hand-for-hand") */
    size_t nlevels;
    tour_level_t *levels;
    tour_payout_config_t payouts;
    struct match_hall *match; /* format MATCH only (then nlevels is 0), else NULL */
} tour_structure_t;

/*
 * Parses and checks a structure (docs/tournaments.md, "Configuration" lists the fields).
 * Returns 0 and *out (free it with tour_structure_destroy), or -EINVAL with a sentence in err
 * naming the bad field (for example "levels[3].big_blind: must be >= small_blind"). Unknown
 * fields are refused, so a typo never silently falls back to a default.
 */
int tour_structure_parse(const char *json, size_t len, tour_structure_t **out, char *err,
                         size_t errlen);
void tour_structure_destroy(tour_structure_t *s); /* NULL is a no-op */

/* Where the level clock stands. */
typedef struct {
    size_t index; /* into levels[] */
    const tour_level_t *level;
    int64_t ms_to_next; /* until the next step begins; -1 in the last step (never ends) */
} tour_clock_t;

/* The step in force at elapsed_ms (>= 0; a step begins at its start and ends just before the
 * next one's start). Returns 0 or -EINVAL (elapsed_ms < 0). */
int tour_structure_level_at(const tour_structure_t *s, int64_t elapsed_ms, tour_clock_t *out);

/* Whether late registration (or a re-entry) is accepted at elapsed_ms of play: until the end
 * of level late_reg_levels (a break right after it is already closed). With late_reg_levels
 * 0 it is always false: registration before play starts is the director's (it checks room
 * and min/max entrants), not a matter of the level clock. */
bool tour_structure_late_reg_open(const tour_structure_t *s, int64_t elapsed_ms);

/* A hand's forced bets. */
typedef struct {
    uint32_t level; /* the playing level's number */
    int64_t small_blind;
    int64_t big_blind;
    int64_t ante;
    bool big_blind_ante;
} tour_blinds_t;

/*
 * TDA 23: the blinds of a hand are those of the level in force when the hand starts (the
 * director passes the level clock at the hand's start); a level that begins during the hand
 * applies from the next hand. Returns 0, -EAGAIN when a break is in force (no hand starts
 * during a break) or -EINVAL (elapsed < 0).
 */
int tour_structure_hand_blinds(const tour_structure_t *s, int64_t hand_start_ms,
                               tour_blinds_t *out);

#endif
