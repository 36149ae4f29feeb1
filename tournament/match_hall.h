/*
 * match_hall -- the match part of a tournament structure (format "match", docs/tournaments.md
 * "Match halls: the structure"): the game, its seats, and the stages played in order, each a
 * match_stage_config_t (docs/rules/match-halls.md). Parsed by tour_structure_parse, which
 * hands a match's root object to match_hall_parse; the result hangs on tour_structure_t.match.
 */
#ifndef CROUPIER_MATCH_HALL_H
#define CROUPIER_MATCH_HALL_H

#include <jansson.h>

#include "jfield.h"
#include "match.h"
#include "tour_structure.h"

#define MATCH_HALL_MAX_STAGES 8

struct match_hall {
    char game[16];  /* "doudizhu", "guandan" or "runfast" */
    uint32_t seats; /* the game's: 3, 4, 3 */
    size_t nstages; /* 1..MATCH_HALL_MAX_STAGES */
    match_stage_config_t stages[MATCH_HALL_MAX_STAGES];
};

/* The seats of a match game, or 0 for a name that is none. */
uint32_t match_hall_game_seats(const char *game);

/*
 * Reads the match fields of root (format "match") into s: the money and entrant fields shared
 * with hold'em (buy_in, fee, min_entrants, max_entrants, guarantee, payouts are parsed by the
 * caller) are already in s; this reads "game" and "stages" and checks the chain of stages
 * (the player counts each stage receives). Returns 0 (s->match set, owned by s) or -EINVAL
 * with the sentence in e.
 */
int match_hall_parse(jfield_err_t *e, json_t *root, tour_structure_t *s);

#endif
