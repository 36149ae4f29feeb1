/*
 * match_hall.c -- the match part of a tournament structure (match_hall.h; docs/tournaments.md
 * "Match halls: the structure").
 */
#include "match_hall.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "match_json.h"
#include "xmalloc.h"

uint32_t match_hall_game_seats(const char *game)
{
    if (game == NULL)
        return 0;
    if (strcmp(game, "doudizhu") == 0 || strcmp(game, "runfast") == 0)
        return 3;
    if (strcmp(game, "guandan") == 0)
        return 4;
    return 0;
}

/* Parses stages[i] with match_config_parse, its error renamed from "config." to "stages[i].". */
static int parse_stage(jfield_err_t *e, json_t *o, size_t i, match_stage_config_t *c)
{
    if (!json_is_object(o))
        return jfield_fail(e, "stages[%zu]: must be an object", i);
    char *txt = json_dumps(o, JSON_COMPACT);
    if (txt == NULL)
        return jfield_fail(e, "stages[%zu]: cannot be read", i);
    char err[256] = "";
    int rc = match_config_parse(txt, strlen(txt), c, err, sizeof err);
    free(txt);
    if (rc != 0) {
        const char *msg = strncmp(err, "config.", 7) == 0 ? err + 7 : err;
        return jfield_fail(e, "stages[%zu].%s", i, msg);
    }
    return 0;
}

int match_hall_parse(jfield_err_t *e, json_t *root, tour_structure_t *s)
{
    const char *game = json_string_value(json_object_get(root, "game"));
    if (game == NULL)
        return jfield_fail(e, "game: missing (\"doudizhu\", \"guandan\" or \"runfast\")");
    uint32_t seats = match_hall_game_seats(game);
    if (seats == 0)
        return jfield_fail(e, "game: \"%s\" is not doudizhu, guandan or runfast", game);
    json_t *stages = json_object_get(root, "stages");
    if (!json_is_array(stages) || json_array_size(stages) == 0)
        return jfield_fail(e, "stages: must be a non-empty array");
    if (json_array_size(stages) > MATCH_HALL_MAX_STAGES)
        return jfield_fail(e, "stages: more than %d", MATCH_HALL_MAX_STAGES);
    struct match_hall *h = xcalloc(1, sizeof *h);
    s->match = h;
    snprintf(h->game, sizeof h->game, "%s", game);
    h->seats = seats;
    h->nstages = json_array_size(stages);
    if (s->min_entrants < seats)
        return jfield_fail(e, "min_entrants: fewer than the %u seats of a %s table", seats, game);
    if (s->max_entrants > MATCH_MAX_PLAYERS)
        return jfield_fail(e, "max_entrants: above %d", MATCH_MAX_PLAYERS);
    /* The players a stage receives: lo..hi (the entrants for the first, a cut's N later). */
    uint32_t lo = s->min_entrants, hi = s->max_entrants;
    for (size_t i = 0; i < h->nstages; i++) {
        match_stage_config_t *c = &h->stages[i];
        int rc = parse_stage(e, json_array_get(stages, i), i, c);
        if (rc != 0)
            return rc;
        bool last = i + 1 == h->nstages;
        if (c->seats != seats)
            return jfield_fail(e, "stages[%zu].seats: %s is played %u to a table", i, game, seats);
        if (seats == 4 && !c->teams)
            return jfield_fail(e, "stages[%zu].teams: guandan is played in partnerships", i);
        if (seats != 4 && c->teams)
            return jfield_fail(e, "stages[%zu].teams: %s has no partnerships", i, game);
        switch (c->format) {
        case MATCH_RISING:
            if (last)
                return jfield_fail(e,
                                   "stages[%zu]: a rising stage is never the last (its N go "
                                   "on to another stage)",
                                   i);
            if (lo <= c->advance)
                return jfield_fail(e,
                                   "stages[%zu].advance: %u but the stage may start with only "
                                   "%u players",
                                   i, c->advance, lo);
            lo = hi = c->advance;
            break;
        case MATCH_FIXED:
            if (!last)
                return jfield_fail(e, "stages[%zu]: a fixed stage is always the last", i);
            if (lo != hi || lo % seats != 0)
                return jfield_fail(e,
                                   "stages[%zu]: a fixed stage needs whole tables: %u..%u "
                                   "players reach it (make min_entrants == max_entrants a "
                                   "multiple of %u, or cut to such an N before it)",
                                   i, lo, hi, seats);
            break;
        case MATCH_SWISS:
            if (lo < seats)
                return jfield_fail(e, "stages[%zu]: a swiss stage needs at least %u players", i,
                                   seats);
            if (last && c->advance != 0)
                return jfield_fail(e, "stages[%zu].advance: the last stage ranks everyone (0)", i);
            if (!last && c->advance == 0)
                return jfield_fail(e, "stages[%zu].advance: required (> 0) before another stage",
                                   i);
            if (!last && lo <= c->advance)
                return jfield_fail(e,
                                   "stages[%zu].advance: %u but the stage may start with only "
                                   "%u players",
                                   i, c->advance, lo);
            if (!last)
                lo = hi = c->advance;
            break;
        }
    }
    /* The entry's score before play (listed as its stack). */
    s->starting_stack = h->stages[0].start_score;
    s->seats_per_table = seats;
    return 0;
}
