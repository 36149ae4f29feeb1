/*
 * match_json -- a stage to and from JSON, strictly checked (see match_json.h).
 */
#include "match_json.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfield.h"
#include "xmalloc.h"

#define MATCH_JSON_VERSION 1


/* A 64-bit unsigned number written as a decimal string. */
static int get_u64s(jfield_err_t *e, json_t *o, const char *where, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL)
        return jfield_fail(e, "%s%s: missing", where, key);
    const char *s = json_string_value(v);
    size_t len = s != NULL ? json_string_length(v) : 0;
    if (s == NULL || len == 0 || len > 20 || strlen(s) != len)
        return jfield_fail(e, "%s%s: must be a decimal string", where, key);
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || (len > 1 && i == 0 && s[0] == '0'))
            return jfield_fail(e, "%s%s: must be a decimal string", where, key);
        uint64_t d = (uint64_t)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return jfield_fail(e, "%s%s: above 2^64 - 1", where, key);
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

static const char *format_name(match_format_t f)
{
    return f == MATCH_RISING ? "rising" : (f == MATCH_FIXED ? "fixed" : "swiss");
}

static int config_from(jfield_err_t *e, json_t *o, match_stage_config_t *c)
{
    if (!json_is_object(o))
        return jfield_fail(e, "config: must be an object");
    static const char *const known[] = {"format",
                                        "seats",
                                        "start_score",
                                        "teams",
                                        "base_score",
                                        "growth_pct",
                                        "growth_ms",
                                        "out_pct",
                                        "advance",
                                        "deals_per_round",
                                        "seconds_pct",
                                        "rounds",
                                        "mp_win",
                                        "mp_draw",
                                        "mp_loss",
                                        "mp_absent",
                                        "mp_bye",
                                        "duplicate",
                                        "absent_out",
                                        "carry_sqrt_permille",
                                        "carry_neg_permille",
                                        NULL};
    const char *w = "config.";
    int rc = jfield_only_known(e, o, w, known);
    if (rc != 0)
        return rc;
    const char *f = json_string_value(json_object_get(o, "format"));
    match_format_t fmt;
    if (f == NULL)
        return jfield_fail(e, "config.format: missing or not a string");
    if (strcmp(f, "rising") == 0)
        fmt = MATCH_RISING;
    else if (strcmp(f, "fixed") == 0)
        fmt = MATCH_FIXED;
    else if (strcmp(f, "swiss") == 0)
        fmt = MATCH_SWISS;
    else
        return jfield_fail(e, "config.format: must be rising, fixed or swiss");
    int64_t seats;
    rc = jfield_int(e, o, w, "seats", true, 0, MATCH_MIN_SEATS, MATCH_MAX_SEATS, &seats);
    if (rc != 0)
        return rc;
    *c = match_stage_config_default(fmt, (uint32_t)seats);
    int64_t v[16];
    rc = jfield_bool(e, o, w, "teams", c->teams, &c->teams);
    if (rc == 0)
        rc = jfield_int(e, o, w, "start_score", false, c->start_score, -MATCH_MAX_SCORE,
                     MATCH_MAX_SCORE, &v[15]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "base_score", false, c->base_score, 1, MATCH_MAX_SCORE, &v[0]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "growth_pct", false, c->growth_pct, 0, 1000, &v[1]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "growth_ms", false, c->growth_ms, 1, MATCH_MAX_SCORE, &v[2]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "out_pct", false, c->out_pct, 0, 100000, &v[3]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "advance", fmt == MATCH_RISING, 0, 0, MATCH_MAX_PLAYERS, &v[4]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "deals_per_round", false, c->deals_per_round, 1, MATCH_MAX_DEALS,
                     &v[5]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "seconds_pct", false, c->seconds_pct, 0, 100, &v[6]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "rounds", false, c->rounds, 1, MATCH_MAX_ROUNDS, &v[7]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "mp_win", false, c->mp_win, 0, 100, &v[8]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "mp_draw", false, c->mp_draw, 0, 100, &v[9]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "mp_loss", false, c->mp_loss, 0, 100, &v[10]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "mp_absent", false, c->mp_absent, 0, 100, &v[11]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "mp_bye", false, c->mp_bye, 0, 100, &v[12]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "carry_sqrt_permille", false, c->carry_sqrt_permille, 0, 1000000,
                     &v[13]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "carry_neg_permille", false, c->carry_neg_permille, 0, 1000000,
                     &v[14]);
    if (rc == 0)
        rc = jfield_bool(e, o, w, "duplicate", c->duplicate, &c->duplicate);
    if (rc == 0)
        rc = jfield_bool(e, o, w, "absent_out", c->absent_out, &c->absent_out);
    if (rc != 0)
        return rc;
    c->start_score = v[15];
    c->base_score = v[0];
    c->growth_pct = (uint32_t)v[1];
    c->growth_ms = v[2];
    c->out_pct = (uint32_t)v[3];
    c->advance = (uint32_t)v[4];
    c->deals_per_round = (uint32_t)v[5];
    c->seconds_pct = (uint32_t)v[6];
    c->rounds = (uint32_t)v[7];
    c->mp_win = (int32_t)v[8];
    c->mp_draw = (int32_t)v[9];
    c->mp_loss = (int32_t)v[10];
    c->mp_absent = (int32_t)v[11];
    c->mp_bye = (int32_t)v[12];
    c->carry_sqrt_permille = (uint32_t)v[13];
    c->carry_neg_permille = (uint32_t)v[14];
    char msg[160];
    if (match_stage_config_check(c, msg, sizeof msg) != 0)
        return jfield_fail(e, "config.%s", msg);
    return 0;
}

int match_config_parse(const char *json, size_t len, match_stage_config_t *out, char *err,
                       size_t errlen)
{
    jfield_err_t e = {err, errlen};
    json_error_t je;
    json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (o == NULL)
        return jfield_fail(&e, "not JSON: %s (line %d)", je.text, je.line);
    match_stage_config_t c;
    int rc = config_from(&e, o, &c);
    json_decref(o);
    if (rc == 0)
        *out = c;
    return rc;
}

static json_t *config_to(const match_stage_config_t *c)
{
    return json_pack(
        "{s:s, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
        "s:I, s:I, s:b, s:b, s:I, s:I}",
        "format", format_name(c->format), "seats", (json_int_t)c->seats, "start_score",
        (json_int_t)c->start_score, "teams", c->teams, "base_score", (json_int_t)c->base_score,
        "growth_pct", (json_int_t)c->growth_pct, "growth_ms", (json_int_t)c->growth_ms, "out_pct",
        (json_int_t)c->out_pct, "advance", (json_int_t)c->advance, "deals_per_round",
        (json_int_t)c->deals_per_round, "seconds_pct", (json_int_t)c->seconds_pct, "rounds",
        (json_int_t)c->rounds, "mp_win", (json_int_t)c->mp_win, "mp_draw", (json_int_t)c->mp_draw,
        "mp_loss", (json_int_t)c->mp_loss, "mp_absent", (json_int_t)c->mp_absent, "mp_bye",
        (json_int_t)c->mp_bye, "duplicate", c->duplicate, "absent_out", c->absent_out,
        "carry_sqrt_permille", (json_int_t)c->carry_sqrt_permille, "carry_neg_permille",
        (json_int_t)c->carry_neg_permille);
}

static const char *const state_names[] = {"waiting", "playing", "out"};

static json_t *u64s(uint64_t x)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, x);
    return json_string(b);
}

char *match_stage_to_json(const match_stage_t *st)
{
    json_t *players = json_array();
    for (uint32_t i = 0; i < st->n; i++) {
        const match_player_t *p = &st->players[i];
        json_t *o = json_pack(
            "{s:I, s:I, s:I, s:I, s:o, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, "
            "s:I, s:b, s:I}",
            "id", (json_int_t)p->id, "score", (json_int_t)p->score, "prev_score",
            (json_int_t)p->prev_score, "round_score", (json_int_t)p->round_score, "draw",
            u64s(p->draw), "state", state_names[p->state], "absent", p->absent, "table",
            (json_int_t)p->table, "seat", (json_int_t)p->seat, "wait_since",
            (json_int_t)p->wait_since, "deals", (json_int_t)p->deals, "mp", (json_int_t)p->mp,
            "byes", (json_int_t)p->byes, "out_event", (json_int_t)p->out_event, "round_absent",
            p->round_absent, "round_place", (json_int_t)p->round_place);
        json_array_append_new(players, o);
    }
    json_t *tables = json_array();
    for (uint32_t t = 0; t < st->ntables; t++) {
        const match_table_t *tb = &st->tables[t];
        if (!tb->active)
            continue;
        json_t *ids = json_array();
        for (uint32_t s = 0; s < st->cfg.seats; s++)
            json_array_append_new(ids, json_integer((json_int_t)st->players[tb->seat[s]].id));
        json_array_append_new(tables,
                              json_pack("{s:I, s:I, s:I, s:I, s:o}", "table", (json_int_t)t + 1,
                                        "deal", (json_int_t)tb->deal, "base", (json_int_t)tb->base,
                                        "deals_done", (json_int_t)tb->deals_done, "players", ids));
    }
    json_t *queue = json_array();
    for (uint32_t j = 0; j < st->nqueue; j++)
        json_array_append_new(queue, json_integer((json_int_t)st->players[st->queue[j]].id));
    json_t *history = json_array();
    for (uint32_t r = 0; st->hist != NULL && r < st->round; r++) {
        const uint32_t *h = &st->hist[(size_t)r * st->n];
        uint32_t nt = 0;
        for (uint32_t i = 0; i < st->n; i++)
            if (h[i] != MATCH_NONE && h[i] / MATCH_MAX_SEATS > nt)
                nt = h[i] / MATCH_MAX_SEATS;
        json_t *rt = json_array();
        for (uint32_t t = 0; t < nt; t++) {
            json_t *ids = json_array();
            for (uint32_t s = 0; s < st->cfg.seats; s++)
                json_array_append_new(ids, json_integer(0));
            json_array_append_new(rt, ids);
        }
        for (uint32_t i = 0; i < st->n; i++)
            if (h[i] != MATCH_NONE)
                json_array_set_new(json_array_get(rt, h[i] / MATCH_MAX_SEATS - 1),
                                   h[i] % MATCH_MAX_SEATS,
                                   json_integer((json_int_t)st->players[i].id));
        json_array_append_new(history, rt);
    }
    json_t *o = json_pack(
        "{s:i, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:b, s:b, s:o}", "version",
        MATCH_JSON_VERSION, "config", config_to(&st->cfg), "players", players, "tables", tables,
        "queue", queue, "history", history, "next_deal", (json_int_t)st->next_deal, "moments",
        (json_int_t)st->moments, "events", (json_int_t)st->events, "round", (json_int_t)st->round,
        "finishing", st->finishing, "over", st->over, "round_seed", u64s(st->round_seed));
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* The index of a player id given as a JSON integer, or a failure naming where. */
static int id_index(jfield_err_t *e, const match_stage_t *st, json_t *v, const char *where, size_t k,
                    uint32_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) <= 0)
        return jfield_fail(e, "%s[%zu]: must be a player id", where, k);
    int64_t i = match_stage_find(st, (uint64_t)json_integer_value(v));
    if (i < 0)
        return jfield_fail(e, "%s[%zu]: no player %lld", where, k, (long long)json_integer_value(v));
    *out = (uint32_t)i;
    return 0;
}

static int player_from(jfield_err_t *e, json_t *o, size_t k, match_player_t *p)
{
    char w[48];
    snprintf(w, sizeof w, "players[%zu].", k);
    if (!json_is_object(o))
        return jfield_fail(e, "players[%zu]: must be an object", k);
    static const char *const known[] = {
        "id",     "score",     "prev_score",   "round_score", "draw",  "state",
        "absent", "table",     "seat",         "wait_since",  "deals", "mp",
        "byes",   "out_event", "round_absent", "round_place", NULL};
    int64_t v[12];
    int rc = jfield_only_known(e, o, w, known);
    if (rc == 0)
        rc = jfield_int(e, o, w, "id", true, 0, 1, INT64_MAX, &v[0]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "score", true, 0, -MATCH_MAX_SCORE, MATCH_MAX_SCORE, &v[1]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "prev_score", true, 0, -MATCH_MAX_SCORE, MATCH_MAX_SCORE, &v[2]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "round_score", true, 0, -MATCH_MAX_SCORE, MATCH_MAX_SCORE, &v[3]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "table", true, 0, 0, UINT32_MAX - 1, &v[4]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "seat", true, 0, 0, MATCH_MAX_SEATS - 1, &v[5]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "wait_since", true, 0, 0, INT64_MAX, &v[6]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "deals", true, 0, 0, UINT32_MAX, &v[7]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "mp", true, 0, 0, 100 * MATCH_MAX_ROUNDS, &v[8]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "byes", true, 0, 0, MATCH_MAX_ROUNDS, &v[9]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "out_event", true, 0, 0, UINT32_MAX, &v[10]);
    if (rc == 0)
        rc = jfield_int(e, o, w, "round_place", true, 0, 0, MATCH_MAX_SEATS, &v[11]);
    if (rc == 0)
        rc = get_u64s(e, o, w, "draw", &p->draw);
    if (rc == 0)
        rc = jfield_bool(e, o, w, "absent", false, &p->absent);
    if (rc == 0)
        rc = jfield_bool(e, o, w, "round_absent", false, &p->round_absent);
    if (rc != 0)
        return rc;
    const char *s = json_string_value(json_object_get(o, "state"));
    int state = -1;
    for (int j = 0; s != NULL && j < 3; j++)
        if (strcmp(s, state_names[j]) == 0)
            state = j;
    if (state < 0)
        return jfield_fail(e, "%sstate: must be waiting, playing or out", w);
    p->id = (uint64_t)v[0];
    p->score = v[1];
    p->prev_score = v[2];
    p->round_score = v[3];
    p->table = (uint32_t)v[4];
    p->seat = (uint32_t)v[5];
    p->wait_since = (uint64_t)v[6];
    p->deals = (uint32_t)v[7];
    p->mp = (int32_t)v[8];
    p->byes = (uint32_t)v[9];
    p->out_event = (uint32_t)v[10];
    p->round_place = (uint32_t)v[11];
    p->state = (match_pstate_t)state;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* Everything that must hold between the parts of a loaded stage. */
static int check_players(jfield_err_t *e, match_stage_t *st)
{
    uint64_t *d = xmalloc((size_t)st->n * sizeof *d);
    int rc = 0;
    for (uint32_t i = 0; i < st->n && rc == 0; i++) {
        const match_player_t *p = &st->players[i];
        d[i] = p->draw;
        if (i > 0 && p->id <= st->players[i - 1].id)
            rc = jfield_fail(e, "players[%u].id: ids must be distinct and in increasing order", i);
        else if ((p->state == MATCH_OUT) != (p->out_event != 0) || p->out_event > st->events)
            rc = jfield_fail(e, "players[%u].out_event: must be 1..events exactly when out", i);
        else if (p->state != MATCH_PLAYING && (p->table != 0 || p->seat != 0))
            rc = jfield_fail(e, "players[%u].table: only a playing player has a table", i);
        else if (p->state == MATCH_PLAYING && (p->table == 0 || p->table > st->ntables))
            rc = jfield_fail(e, "players[%u].table: a playing player needs a table 1..%u", i, st->ntables);
        else if (p->round_place > st->cfg.seats)
            rc = jfield_fail(e, "players[%u].round_place: must be 0..seats", i);
        else if (p->byes > st->round || p->wait_since > st->moments)
            rc = jfield_fail(e, "players[%u]: byes or wait_since beyond the stage's rounds or moments", i);
    }
    if (rc == 0) {
        qsort(d, st->n, sizeof *d, cmp_u64);
        for (uint32_t i = 1; i < st->n && rc == 0; i++)
            if (d[i] == d[i - 1])
                rc = jfield_fail(e, "players: two players with the same draw number");
    }
    free(d);
    return rc;
}

static int tables_from(jfield_err_t *e, match_stage_t *st, json_t *a)
{
    if (!json_is_array(a))
        return jfield_fail(e, "tables: must be an array");
    uint32_t playing = 0;
    for (uint32_t i = 0; i < st->n; i++)
        playing += st->players[i].state == MATCH_PLAYING;
    size_t k;
    json_t *o;
    json_array_foreach(a, k, o)
    {
        char w[40];
        snprintf(w, sizeof w, "tables[%zu].", k);
        if (!json_is_object(o))
            return jfield_fail(e, "tables[%zu]: must be an object", k);
        static const char *const known[] = {"table", "deal", "base", "deals_done", "players", NULL};
        int64_t t, deal, base, done;
        int rc = jfield_only_known(e, o, w, known);
        if (rc == 0)
            rc = jfield_int(e, o, w, "table", true, 0, 1, st->ntables, &t);
        if (rc == 0)
            rc = jfield_int(e, o, w, "deal", true, 0, 0, INT64_MAX, &deal);
        if (rc == 0)
            rc = jfield_int(e, o, w, "base", true, 0, 1, MATCH_MAX_SCORE, &base);
        if (rc == 0)
            rc = jfield_int(e, o, w, "deals_done", true, 0, 0, st->cfg.deals_per_round - 1, &done);
        if (rc != 0)
            return rc;
        match_table_t *tb = &st->tables[t - 1];
        if (tb->active)
            return jfield_fail(e, "%stable: table %lld listed twice", w, (long long)t);
        if (st->cfg.format == MATCH_RISING && (deal < 1 || (uint64_t)deal >= st->next_deal))
            return jfield_fail(e, "%sdeal: must be 1..next_deal - 1", w);
        if (st->cfg.format != MATCH_RISING && deal != 0)
            return jfield_fail(e, "%sdeal: 0 in a fixed or Swiss stage (deals count in deals_done)", w);
        json_t *ids = json_object_get(o, "players");
        if (!json_is_array(ids) || json_array_size(ids) != st->cfg.seats)
            return jfield_fail(e, "%splayers: must list %u player ids", w, st->cfg.seats);
        for (uint32_t s = 0; s < st->cfg.seats; s++) {
            uint32_t i = 0;
            char where[96];
            snprintf(where, sizeof where, "%splayers", w);
            rc = id_index(e, st, json_array_get(ids, s), where, s, &i);
            if (rc != 0)
                return rc;
            const match_player_t *p = &st->players[i];
            if (p->state != MATCH_PLAYING || p->table != (uint32_t)t || p->seat != s)
                return jfield_fail(e, "%splayers[%u]: player %llu is not playing at this seat", w, s,
                            (unsigned long long)p->id);
            tb->seat[s] = i;
        }
        tb->active = true;
        tb->deal = (uint64_t)deal;
        tb->base = base;
        tb->deals_done = (uint32_t)done;
        st->playing_tables++;
    }
    if (st->playing_tables * st->cfg.seats != playing)
        return jfield_fail(e, "tables: %u players playing but %u seats at the tables listed", playing,
                    st->playing_tables * st->cfg.seats);
    return 0;
}

static int queue_from(jfield_err_t *e, match_stage_t *st, json_t *a)
{
    if (!json_is_array(a))
        return jfield_fail(e, "queue: must be an array");
    if (st->cfg.format != MATCH_RISING && json_array_size(a) != 0)
        return jfield_fail(e, "queue: only a rising stage has one");
    if (json_array_size(a) > st->n)
        return jfield_fail(e, "queue: longer than the players");
    bool *seen = xcalloc(st->n, sizeof *seen);
    uint32_t waiting = 0;
    int rc = 0;
    for (uint32_t i = 0; i < st->n; i++)
        waiting += st->players[i].state == MATCH_WAITING;
    for (size_t k = 0; k < json_array_size(a) && rc == 0; k++) {
        uint32_t i = 0;
        rc = id_index(e, st, json_array_get(a, k), "queue", k, &i);
        if (rc != 0)
            break;
        if (seen[i] || st->players[i].state != MATCH_WAITING)
            rc = jfield_fail(e, "queue[%zu]: player listed twice or not waiting", k);
        else if (k > 0 && st->players[i].wait_since < st->players[st->queue[k - 1]].wait_since)
            rc = jfield_fail(e, "queue[%zu]: not in waiting order", k);
        seen[i] = true;
        st->queue[st->nqueue++] = i;
    }
    if (rc == 0 && st->cfg.format == MATCH_RISING && st->nqueue != waiting && !st->over)
        rc = jfield_fail(e, "queue: %u players waiting but %u in the queue", waiting, st->nqueue);
    free(seen);
    return rc;
}

static int history_from(jfield_err_t *e, match_stage_t *st, json_t *a)
{
    if (!json_is_array(a))
        return jfield_fail(e, "history: must be an array");
    size_t want = st->cfg.format == MATCH_SWISS ? st->round : 0;
    if (json_array_size(a) != want)
        return jfield_fail(e, "history: must hold one entry per round played (%zu)", want);
    for (size_t r = 0; r < want; r++) {
        json_t *rt = json_array_get(a, r);
        uint32_t *h = &st->hist[r * st->n];
        for (uint32_t i = 0; i < st->n; i++)
            h[i] = MATCH_NONE;
        if (!json_is_array(rt) || json_array_size(rt) > st->n / st->cfg.seats)
            return jfield_fail(e, "history[%zu]: must be an array of at most %u tables", r,
                        st->n / st->cfg.seats);
        for (size_t t = 0; t < json_array_size(rt); t++) {
            json_t *ids = json_array_get(rt, t);
            if (!json_is_array(ids) || json_array_size(ids) != st->cfg.seats)
                return jfield_fail(e, "history[%zu][%zu]: must list %u player ids", r, t, st->cfg.seats);
            for (uint32_t s = 0; s < st->cfg.seats; s++) {
                uint32_t i = 0;
                char where[96];
                snprintf(where, sizeof where, "history[%zu][%zu]", r, t);
                int rc = id_index(e, st, json_array_get(ids, s), where, s, &i);
                if (rc != 0)
                    return rc;
                if (h[i] != MATCH_NONE)
                    return jfield_fail(e, "%s[%u]: player seated twice in one round", where, s);
                h[i] = (uint32_t)(t + 1) * MATCH_MAX_SEATS + s;
            }
        }
    }
    return 0;
}

int match_stage_from_json(const char *json, size_t len, match_stage_t **out, char *err,
                          size_t errlen)
{
    jfield_err_t e = {err, errlen};
    json_error_t je;
    json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (o == NULL)
        return jfield_fail(&e, "not JSON: %s (line %d)", je.text, je.line);
    match_stage_t *st = NULL;
    int rc = 0;
    if (!json_is_object(o)) {
        rc = jfield_fail(&e, "the stage must be a JSON object");
        goto fail_parse;
    }
    static const char *const known[] = {"version",   "config",    "players",    "tables", "queue",
                                        "history",   "next_deal", "moments",    "events", "round",
                                        "finishing", "over",      "round_seed", NULL};
    int64_t ver, next_deal, moments, events, round;
    match_stage_config_t cfg;
    rc = jfield_only_known(&e, o, "", known);
    if (rc == 0)
        rc = jfield_int(&e, o, "", "version", true, 0, MATCH_JSON_VERSION, MATCH_JSON_VERSION, &ver);
    if (rc == 0)
        rc = config_from(&e, json_object_get(o, "config"), &cfg);
    if (rc == 0)
        rc = jfield_int(&e, o, "", "next_deal", true, 0, 1, INT64_MAX, &next_deal);
    if (rc == 0)
        rc = jfield_int(&e, o, "", "moments", true, 0, 0, INT64_MAX, &moments);
    if (rc == 0)
        rc = jfield_int(&e, o, "", "events", true, 0, 0, MATCH_MAX_PLAYERS, &events);
    if (rc == 0)
        rc = jfield_int(&e, o, "", "round", true, 0, 0, cfg.rounds, &round);
    if (rc != 0)
        goto fail_parse;
    json_t *players = json_object_get(o, "players");
    if (!json_is_array(players) || json_array_size(players) == 0 ||
        json_array_size(players) > MATCH_MAX_PLAYERS) {
        rc = jfield_fail(&e, "players: must be an array of 1..%d players", MATCH_MAX_PLAYERS);
        goto fail_parse;
    }
    uint32_t n = (uint32_t)json_array_size(players);
    st = xcalloc(1, sizeof *st);
    st->cfg = cfg;
    st->n = n;
    st->players = xcalloc(n, sizeof *st->players);
    st->ntables = n / cfg.seats + 1;
    st->tables = xcalloc(st->ntables, sizeof *st->tables);
    st->queue = xcalloc(n, sizeof *st->queue);
    if (cfg.format == MATCH_SWISS)
        st->hist = xcalloc((size_t)cfg.rounds * n, sizeof *st->hist);
    st->next_deal = (uint64_t)next_deal;
    st->moments = (uint64_t)moments;
    st->events = (uint32_t)events;
    st->round = (uint32_t)round;
    rc = jfield_bool(&e, o, "", "finishing", false, &st->finishing);
    if (rc == 0)
        rc = jfield_bool(&e, o, "", "over", false, &st->over);
    if (rc == 0)
        rc = get_u64s(&e, o, "", "round_seed", &st->round_seed);
    for (uint32_t i = 0; i < n && rc == 0; i++)
        rc = player_from(&e, json_array_get(players, i), i, &st->players[i]);
    if (rc == 0)
        rc = check_players(&e, st);
    if (rc == 0)
        rc = tables_from(&e, st, json_object_get(o, "tables"));
    if (rc == 0)
        rc = queue_from(&e, st, json_object_get(o, "queue"));
    if (rc == 0)
        rc = history_from(&e, st, json_object_get(o, "history"));
    if (rc != 0)
        goto fail_stage;
    for (uint32_t i = 0; i < n; i++) {
        const match_player_t *p = &st->players[i];
        st->remaining += p->state != MATCH_OUT;
        /* Swiss: a player at a table of the round in play sits where the history says. */
        if (cfg.format == MATCH_SWISS && p->state == MATCH_PLAYING &&
            (st->round == 0 ||
             st->hist[(size_t)(st->round - 1) * n + i] != p->table * MATCH_MAX_SEATS + p->seat)) {
            rc = jfield_fail(&e, "players[%u].table: not where the round's history seats him", i);
            goto fail_stage;
        }
    }
    if (st->over && st->playing_tables > 0) {
        rc = jfield_fail(&e, "over: a stage over has no table in play");
        goto fail_stage;
    }
    if (cfg.format == MATCH_FIXED && st->remaining % cfg.seats != 0) {
        rc = jfield_fail(&e, "players: a fixed stage's players left must fill whole tables");
        goto fail_stage;
    }
    json_decref(o);
    *out = st;
    return 0;
fail_stage:
    match_stage_destroy(st);
fail_parse:
    json_decref(o);
    return rc;
}
