/*
 * tour_match.c -- the director's model of a running match (tour_match.h; docs/tournaments.md
 * "Match halls: the director"; the stage rules are docs/rules/match-halls.md).
 */
#include "tour_match.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "match.h"
#include "match_fixed.h"
#include "match_hall.h"
#include "match_json.h"
#include "match_rising.h"
#include "match_swiss.h"
#include "tour_payout.h"

/* A table as the servers see it: the record in {croupier:tour:<id>}:tables. */
typedef struct {
    uint32_t id;
    uint64_t hand; /* the last hand (deal) dealt at this table, 1, 2, ... across stages */
    bool in_hand, closed;
    char host[TOUR_HOST_MAX + 1]; /* the host the hand in play was dealt to */
    uint32_t stage;               /* the stage of that deal (index) */
    uint64_t deal;                /* rising: the stage's deal id; fixed, Swiss: 1..D of round */
    uint32_t round;
    int64_t base;
    uint32_t nseats;
    uint64_t players[MATCH_MAX_SEATS];
} tm_table_t;

typedef struct {
    uint64_t player;
    json_t *j; /* the entry as Redis has it (tour_director.h: entries) */
} tm_entry_t;

struct tour_match {
    const tour_structure_t *st;
    const struct match_hall *h;
    uint64_t tournament;
    uint64_t rng;
    int64_t pool;
    uint32_t entries;
    int64_t stage_clock0;
    size_t nstages; /* stages created so far; stage[nstages - 1] is the current one */
    match_stage_t *stage[MATCH_HALL_MAX_STAGES];
    bool finished;
    size_t ne;
    tm_entry_t *e;
    size_t nt; /* tables 1..nt (tb[id - 1]; id 0 = no record yet) */
    tm_table_t *tb;
};

static const char *format_name(match_format_t f)
{
    return f == MATCH_RISING ? "rising" : f == MATCH_FIXED ? "fixed" : "swiss";
}

tour_match_t *tour_match_create(const tour_structure_t *st, uint64_t tournament)
{
    if (st == NULL || st->match == NULL)
        return NULL;
    tour_match_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->st = st;
    m->h = st->match;
    m->tournament = tournament;
    return m;
}

void tour_match_free(tour_match_t *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nstages; i++)
        match_stage_destroy(m->stage[i]);
    for (size_t i = 0; i < m->ne; i++)
        json_decref(m->e[i].j);
    free(m->e);
    free(m->tb);
    free(m);
}

static match_stage_t *cur(const tour_match_t *m)
{
    return m->nstages > 0 ? m->stage[m->nstages - 1] : NULL;
}

/* ---- loading ------------------------------------------------------------------------------ */

int tour_match_load_entry(tour_match_t *m, const char *player, const char *json)
{
    uint64_t id = strtoull(player, NULL, 10);
    json_t *j = json_loads(json, 0, NULL);
    if (id == 0 || !json_is_object(j) || !json_is_string(json_object_get(j, "state"))) {
        json_decref(j);
        return -EINVAL;
    }
    tm_entry_t *e = realloc(m->e, (m->ne + 1) * sizeof *e);
    if (e == NULL) {
        json_decref(j);
        return -ENOMEM;
    }
    m->e = e;
    m->e[m->ne++] = (tm_entry_t){.player = id, .j = j};
    return 0;
}

/* The record of table id, grown into existence (a new record: hand 0, closed). */
static tm_table_t *table_get(tour_match_t *m, uint32_t id, bool create)
{
    if (id == 0 || id > MATCH_MAX_PLAYERS)
        return NULL;
    if (id > m->nt) {
        if (!create)
            return NULL;
        tm_table_t *tb = realloc(m->tb, id * sizeof *tb);
        if (tb == NULL)
            return NULL;
        memset(tb + m->nt, 0, (id - m->nt) * sizeof *tb);
        for (uint32_t k = (uint32_t)m->nt; k < id; k++)
            tb[k].closed = true;
        m->tb = tb;
        m->nt = id;
    }
    tm_table_t *t = &m->tb[id - 1];
    if (t->id == 0 && !create)
        return NULL;
    return t;
}

int tour_match_load_table(tour_match_t *m, const char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    json_t *players = json_object_get(j, "players");
    uint32_t id = (uint32_t)json_integer_value(json_object_get(j, "id"));
    const char *host = json_string_value(json_object_get(j, "host"));
    tm_table_t *t = j != NULL ? table_get(m, id, true) : NULL;
    if (t == NULL || !json_is_array(players) || json_array_size(players) > MATCH_MAX_SEATS ||
        (host != NULL && strlen(host) > TOUR_HOST_MAX)) {
        json_decref(j);
        return -EINVAL;
    }
    *t = (tm_table_t){
        .id = id,
        .hand = (uint64_t)json_integer_value(json_object_get(j, "hand")),
        .in_hand = json_is_true(json_object_get(j, "in_hand")),
        .closed = json_is_true(json_object_get(j, "closed")),
        .stage = (uint32_t)json_integer_value(json_object_get(j, "stage")),
        .deal = (uint64_t)json_integer_value(json_object_get(j, "deal")),
        .round = (uint32_t)json_integer_value(json_object_get(j, "round")),
        .base = json_integer_value(json_object_get(j, "base")),
        .nseats = (uint32_t)json_array_size(players),
    };
    snprintf(t->host, sizeof t->host, "%s", host != NULL ? host : "");
    for (uint32_t s = 0; s < t->nseats; s++)
        t->players[s] = (uint64_t)json_integer_value(json_array_get(players, s));
    json_decref(j);
    return 0;
}

int tour_match_load_stage(tour_match_t *m, const char *index, const char *json)
{
    char *end = NULL;
    unsigned long k = strtoul(index, &end, 10);
    if (end == index || *end != '\0' || k >= m->h->nstages || m->stage[k] != NULL)
        return -EINVAL;
    char err[256];
    match_stage_t *s = NULL;
    if (match_stage_from_json(json, strlen(json), &s, err, sizeof err) != 0)
        return -EINVAL;
    m->stage[k] = s;
    return 0;
}

void tour_match_set_meta(tour_match_t *m, uint64_t rng, int64_t pool, uint32_t entries,
                         int64_t stage_clock0)
{
    m->rng = rng;
    m->pool = pool;
    m->entries = entries;
    m->stage_clock0 = stage_clock0;
}

int tour_match_loaded(tour_match_t *m)
{
    size_t n = 0;
    while (n < m->h->nstages && m->stage[n] != NULL)
        n++;
    for (size_t k = n; k < m->h->nstages; k++)
        if (m->stage[k] != NULL)
            return -EINVAL; /* a gap */
    m->nstages = n;
    const match_stage_t *s = cur(m);
    m->finished = s != NULL && s->over && n == m->h->nstages;
    return 0;
}

bool tour_match_begun(const tour_match_t *m)
{
    return m->nstages > 0;
}

uint32_t tour_match_left(const tour_match_t *m)
{
    const match_stage_t *s = cur(m);
    return s != NULL ? s->remaining : 0;
}

bool tour_match_finished(const tour_match_t *m)
{
    return m->finished;
}

/* ---- writes ------------------------------------------------------------------------------- */

static tm_entry_t *entry_find(tour_match_t *m, uint64_t player)
{
    for (size_t i = 0; i < m->ne; i++)
        if (m->e[i].player == player)
            return &m->e[i];
    return NULL;
}

static void put_entry(tour_commit_t *c, const tm_entry_t *e)
{
    char *txt = json_dumps(e->j, JSON_COMPACT);
    if (txt == NULL) {
        c->failed = true;
        return;
    }
    tour_commit_add(c, "E");
    tour_commit_addf(c, "%" PRIu64, e->player);
    tour_commit_add(c, txt);
    free(txt);
}

static void put_table(tour_match_t *m, tour_commit_t *c, const tm_table_t *t)
{
    json_t *players = json_array();
    for (uint32_t s = 0; s < t->nseats; s++)
        json_array_append_new(players, json_integer((json_int_t)t->players[s]));
    json_t *j = json_pack("{s:I,s:s,s:I,s:b,s:b,s:s,s:I,s:I,s:I,s:I,s:o}", "id", (json_int_t)t->id,
                          "game", m->h->game, "hand", (json_int_t)t->hand, "in_hand", t->in_hand,
                          "closed", t->closed, "host", t->host, "stage", (json_int_t)t->stage,
                          "deal", (json_int_t)t->deal, "round", (json_int_t)t->round, "base",
                          (json_int_t)t->base, "players", players);
    char *txt = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (txt == NULL) {
        c->failed = true;
        return;
    }
    tour_commit_add(c, "T");
    tour_commit_addf(c, "%" PRIu32, t->id);
    tour_commit_add(c, txt);
    free(txt);
}

static void put_stage(tour_match_t *m, tour_commit_t *c, size_t k)
{
    char *txt = match_stage_to_json(m->stage[k]);
    if (txt == NULL) {
        c->failed = true;
        return;
    }
    tour_commit_add(c, "S");
    tour_commit_addf(c, "%zu", k);
    tour_commit_add(c, txt);
    free(txt);
}

static void put_meta(tour_match_t *m, tour_commit_t *c)
{
    tour_commit_add(c, "M");
    tour_commit_add(c, "rng");
    tour_commit_addf(c, "%" PRId64, (int64_t)m->rng);
    tour_commit_add(c, "M");
    tour_commit_add(c, "match_stage");
    tour_commit_addf(c, "%zu", m->nstages > 0 ? m->nstages - 1 : 0);
    tour_commit_add(c, "M");
    tour_commit_add(c, "stage_clock0");
    tour_commit_addf(c, "%" PRId64, m->stage_clock0);
    tour_commit_add(c, "M");
    tour_commit_add(c, "players");
    tour_commit_addf(c, "%" PRIu32, tour_match_left(m));
}

static void log_event(tour_commit_t *c, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void log_event(tour_commit_t *c, const char *event, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tour_commit_add(c, "L");
    tour_commit_add(c, event);
    tour_commit_add(c, buf);
}

/* Players out: their entries busted (their places come with the match's end). */
static void put_out(tour_match_t *m, tour_commit_t *c, const uint64_t *gone, size_t n, json_t *out)
{
    for (size_t i = 0; i < n; i++) {
        tm_entry_t *e = entry_find(m, gone[i]);
        if (e != NULL) {
            json_object_set_new(e->j, "state", json_string("busted"));
            put_entry(c, e);
        }
        log_event(c, "match_out", "player %" PRIu64 " stage %zu", gone[i], m->nstages - 1);
        if (out != NULL)
            json_array_append_new(out, json_integer((json_int_t)gone[i]));
    }
}

/* A player's entry at a table and seat (table 0: between tables, waiting to be re-paired or
 * seated for the next round), for TakeTournamentSeat (docs/protocol.md "Tournaments"); a seat
 * taken is told (log event `seated`: the player's MOVED_TABLE push). */
static void put_seat(tour_match_t *m, tour_commit_t *c, uint64_t player, uint32_t table,
                     uint32_t seat)
{
    tm_entry_t *e = entry_find(m, player);
    if (e == NULL)
        return;
    json_object_set_new(e->j, "table", json_integer(table));
    json_object_set_new(e->j, "seat", json_integer(seat));
    put_entry(c, e);
    if (table != 0)
        log_event(c, "seated", "player %" PRIu64 " table %" PRIu32 " seat %" PRIu32, player, table,
                  seat);
}

/* The tables a pairing or a seating formed: their records open for their next deal. */
static int form_tables(tour_match_t *m, tour_commit_t *c, const match_new_table_t *nt, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tm_table_t *t = table_get(m, nt[i].table, true);
        if (t == NULL || t->in_hand)
            return -EINVAL; /* a table still in a deal cannot be formed again: a bug */
        t->id = nt[i].table;
        t->closed = false;
        put_table(m, c, t);
    }
    return 0;
}

/* After a round's seating or a stage's first pairing: every table record the stage does not use
 * is closed (its host lets it go); a record is opened again when a later seating needs it. */
static void close_idle(tour_match_t *m, tour_commit_t *c)
{
    const match_stage_t *s = cur(m);
    for (uint32_t id = 1; id <= m->nt; id++) {
        tm_table_t *t = &m->tb[id - 1];
        bool used = id <= s->ntables && s->tables[id - 1].active;
        if (t->id != 0 && !t->closed && !t->in_hand && !used) {
            t->closed = true;
            put_table(m, c, t);
        }
    }
}

/* The match's end: the places of every stage (match_standings), the prizes of the payout
 * table over the pool split by match_prizes, paid from the pool once (in this commit). */
static int finish(tour_match_t *m, tour_commit_t *c)
{
    uint32_t n = m->stage[0]->n;
    match_standing_t *sd = calloc(n, sizeof *sd);
    match_award_t *aw = calloc(n, sizeof *aw);
    uint32_t cap = m->entries > 0 ? tour_payout_places(&m->st->payouts, m->entries) : 0;
    int64_t *prizes = calloc(cap + 1, sizeof *prizes);
    size_t nsd = 0, nplaces = 0;
    int rc = sd != NULL && aw != NULL && prizes != NULL ? 0 : -ENOMEM;
    if (rc == 0)
        rc = match_standings((const match_stage_t *const *)m->stage, m->nstages, sd, n, &nsd);
    if (rc == 0 && cap > 0)
        rc = tour_payout_table(&m->st->payouts, m->entries, m->pool, prizes, cap, &nplaces);
    if (rc == 0)
        rc = match_prizes(prizes, nplaces < nsd ? nplaces : nsd, sd, nsd, aw);
    int64_t paid = 0;
    for (size_t i = 0; rc == 0 && i < nsd; i++) {
        tm_entry_t *e = entry_find(m, aw[i].player);
        if (e == NULL) {
            rc = -EINVAL;
            break;
        }
        json_object_set_new(e->j, "place", json_integer(aw[i].place));
        json_object_set_new(e->j, "prize", json_integer((json_int_t)aw[i].amount));
        /* An item prize of his place (a tied group's shared place: each of them), recorded
         * for the studio in the same commit as the chips (docs/tournaments.md "Items"). */
        const char *item = tour_payout_item(&m->st->payouts, aw[i].place);
        if (item != NULL) {
            json_object_set_new(e->j, "item", json_string(item));
            tour_commit_add(c, "I");
            tour_commit_addf(c, "%" PRIu64, aw[i].player);
            tour_commit_add(c, item);
            tour_commit_addf(c, "%" PRIu32, aw[i].place);
        }
        if (!sd[i].out)
            json_object_set_new(e->j, "state", json_string("finished"));
        put_entry(c, e);
        if (aw[i].amount > 0) {
            tour_commit_add(c, "P");
            tour_commit_addf(c, "%" PRIu64, aw[i].player);
            tour_commit_addf(c, "%" PRId64, aw[i].amount);
        }
        paid += aw[i].amount;
        log_event(c, "match_place", "player %" PRIu64 " place %" PRIu32 " prize %" PRId64 "%s%s",
                  aw[i].player, aw[i].place, aw[i].amount, item != NULL ? " item " : "",
                  item != NULL ? item : "");
    }
    free(sd);
    free(aw);
    free(prizes);
    if (rc != 0)
        return rc;
    /* Fewer places than prizes (fewer players than places paid): what is left stays unpaid in
     * the pool key; never more than the pool (the script checks it too). */
    tour_commit_add(c, "M");
    tour_commit_add(c, "paid_out");
    tour_commit_addf(c, "%" PRId64, paid);
    log_event(c, "match_finished", "paid %" PRId64 " pool %" PRId64, paid, m->pool);
    tour_commit_add(c, "F");
    tour_commit_add(c, "finished");
    m->finished = true;
    return 0;
}

/*
 * Moves the match on after a change: pairs the waiting players (打立出局), seats the next round
 * (定局积分, Swiss), begins the next stage when one ends (its scores carried over, its time 0 at
 * clock_ms), or finishes the match. Appends every write; gone players go to out (may be NULL).
 * Returns 0 or a negative errno (the model moved: INTERNAL).
 */
static int advance(tour_match_t *m, int64_t clock_ms, tour_commit_t *c, json_t *out, bool fresh)
{
    for (int guard = 0; guard < 2 * MATCH_HALL_MAX_STAGES + 4; guard++) {
        match_stage_t *s = cur(m);
        size_t k = m->nstages - 1;
        bool seated = false;
        if (!s->over) {
            size_t cap = s->n / s->cfg.seats + 1, nt = 0, ng = 0, nb = 0;
            match_new_table_t *nt_ = calloc(cap, sizeof *nt_);
            uint64_t *gone = calloc(s->n + 1, sizeof *gone);
            uint64_t byes[MATCH_MAX_SEATS];
            int rc = nt_ != NULL && gone != NULL ? 0 : -ENOMEM;
            if (rc == 0 && s->cfg.format == MATCH_RISING && !s->finishing) {
                int64_t t = clock_ms - m->stage_clock0;
                rc = match_rising_pair(s, t < 0 ? 0 : t, tour_rng_splitmix64, &m->rng, nt_, cap,
                                       &nt, gone, s->n, &ng);
                seated = true;
            } else if (rc == 0 && s->cfg.format == MATCH_FIXED && s->playing_tables == 0) {
                rc = match_fixed_seat_round(s, tour_rng_splitmix64, &m->rng, nt_, cap, &nt);
                seated = true;
            } else if (rc == 0 && s->cfg.format == MATCH_SWISS && s->playing_tables == 0) {
                rc = match_swiss_seat_round(s, tour_rng_splitmix64, &m->rng, nt_, cap, &nt, byes,
                                            MATCH_MAX_SEATS, &nb);
                seated = true;
            }
            if (rc == 0 && seated) {
                put_out(m, c, gone, ng, out);
                rc = form_tables(m, c, nt_, nt);
                for (size_t i = 0; i < nb; i++)
                    log_event(c, "match_bye", "player %" PRIu64 " stage %zu round %" PRIu32,
                              byes[i], k, s->round);
                /* 打立出局 keeps its tables through the stage (a table freed now is formed
                 * again at the next deal end): only its first pairing closes the unused. */
                if (s->cfg.format != MATCH_RISING || fresh)
                    close_idle(m, c);
            }
            free(nt_);
            free(gone);
            if (rc != 0)
                return rc;
        }
        put_stage(m, c, k); /* the stage as it is now (over: its final state, kept) */
        if (!s->over)
            return 0;
        /* The stage is over. */
        if (k + 1 == m->h->nstages)
            return finish(m, c);
        match_stage_t *next = NULL;
        int rc = match_stage_next(s, &m->h->stages[k + 1], tour_rng_splitmix64, &m->rng, &next);
        if (rc != 0)
            return rc;
        m->stage[m->nstages++] = next;
        m->stage_clock0 = clock_ms;
        fresh = true;
        log_event(c, "match_stage", "stage %zu format %s players %" PRIu32, k + 1,
                  format_name(next->cfg.format), next->n);
        put_stage(m, c, k + 1);
    }
    return -ELOOP;
}

int tour_match_begin(tour_match_t *m, int64_t clock_ms, tour_commit_t *c)
{
    if (m->nstages > 0)
        return -EINVAL;
    uint64_t *ids = calloc(m->ne + 1, sizeof *ids);
    if (ids == NULL)
        return -ENOMEM;
    uint32_t n = 0;
    for (size_t i = 0; i < m->ne; i++) {
        const char *state = json_string_value(json_object_get(m->e[i].j, "state"));
        if (state != NULL && strcmp(state, "playing") == 0)
            ids[n++] = m->e[i].player;
    }
    match_stage_t *s = NULL;
    int rc = match_stage_create(&m->h->stages[0], ids, NULL, n, tour_rng_splitmix64, &m->rng, &s);
    free(ids);
    if (rc != 0)
        return rc;
    m->stage[0] = s;
    m->nstages = 1;
    m->stage_clock0 = clock_ms;
    log_event(c, "match_stage", "stage 0 format %s players %" PRIu32, format_name(s->cfg.format),
              n);
    rc = advance(m, clock_ms, c, NULL, true);
    put_meta(m, c);
    return rc;
}

/* ---- the tables' requests ----------------------------------------------------------------- */

static char *body(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *body(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* The deal answer of a table in a deal (its record filled): the fields after "code". */
static char *deal_answer(tour_match_t *m, const tm_table_t *t)
{
    const match_stage_t *s = m->stage[t->stage];
    json_t *seats = json_array();
    for (uint32_t x = 0; x < t->nseats; x++) {
        int64_t i = match_stage_find(s, t->players[x]);
        json_array_append_new(seats, json_pack("{s:I,s:I,s:I}", "seat", (json_int_t)x, "player",
                                               (json_int_t)t->players[x], "score",
                                               (json_int_t)(i >= 0 ? s->players[i].score : 0)));
    }
    json_t *a =
        json_pack("{s:I,s:I,s:s,s:I,s:s,s:I,s:I,s:I,s:o}", "table", (json_int_t)t->id, "hand",
                  (json_int_t)t->hand, "game", m->h->game, "stage", (json_int_t)t->stage, "format",
                  format_name(s->cfg.format), "deal", (json_int_t)t->deal, "round",
                  (json_int_t)t->round, "base", (json_int_t)t->base, "seats", seats);
    if (a != NULL && s->cfg.format == MATCH_SWISS && s->cfg.duplicate) {
        char seed[24];
        snprintf(seed, sizeof seed, "%" PRIu64, s->round_seed);
        json_object_set_new(a, "seed", json_string(seed));
    }
    char *txt = a != NULL ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    if (txt == NULL)
        return NULL;
    /* The object's fields after its '{', with a leading comma: the answer's body. */
    char *b = body(",%.*s", (int)strlen(txt) - 2, txt + 1);
    free(txt);
    return b;
}

char *tour_match_deal(tour_match_t *m, uint32_t table, uint64_t hand, const char *host,
                      tour_commit_t *c, const char **code)
{
    *code = "BAD_REQUEST";
    tm_table_t *t = table_get(m, table, false);
    if (t == NULL)
        return body(",\"why\":\"no such table\"");
    if (t->in_hand && hand == t->hand) {
        /* A re-deal: the same deal, dealt to host from now on. */
        snprintf(t->host, sizeof t->host, "%s", host);
        put_table(m, c, t);
        *code = "OK";
        return deal_answer(m, t);
    }
    if (t->in_hand)
        return body(",\"why\":\"hand %" PRIu64 " in play\"", t->hand);
    if (hand != t->hand + 1)
        return body(",\"why\":\"the next hand is %" PRIu64 "\"", t->hand + 1);
    if (t->closed) {
        *code = "TABLE_CLOSED";
        return strdup("");
    }
    const match_stage_t *s = cur(m);
    const match_table_t *st = s != NULL && table <= s->ntables ? &s->tables[table - 1] : NULL;
    if (m->finished || st == NULL || !st->active ||
        (s->cfg.format != MATCH_RISING && st->deals_done >= s->cfg.deals_per_round)) {
        *code = "WAIT";
        return body(",\"why\":\"no deal at this table now\"");
    }
    t->hand = hand;
    t->in_hand = true;
    snprintf(t->host, sizeof t->host, "%s", host);
    t->stage = (uint32_t)(m->nstages - 1);
    t->deal = s->cfg.format == MATCH_RISING ? st->deal : st->deals_done + 1;
    t->round = s->round;
    t->base = s->cfg.format == MATCH_RISING ? st->base : s->cfg.base_score;
    t->nseats = s->cfg.seats;
    for (uint32_t x = 0; x < t->nseats; x++)
        t->players[x] = s->players[st->seat[x]].id;
    put_table(m, c, t);
    /* The players come to the table: at every deal of 打立出局 (new tables each deal), at a
     * round's first deal of 定局积分 and Swiss (they stay for the round). */
    if (s->cfg.format == MATCH_RISING || t->deal == 1)
        for (uint32_t x = 0; x < t->nseats; x++)
            put_seat(m, c, t->players[x], t->id, x);
    *code = "OK";
    return deal_answer(m, t);
}

/* The players of table's next deal when the stage has one formed for it (打立出局: a new
 * pairing; 定局积分 and Swiss: the round's deals not all played), else none: those at the
 * table wait to be re-paired or seated for the next round (the hand answer's `next`). */
static json_t *next_players(const tour_match_t *m, uint32_t table)
{
    json_t *a = json_array();
    const match_stage_t *s = cur(m);
    if (a == NULL || m->finished || s == NULL || s->over || table == 0 || table > s->ntables)
        return a;
    const match_table_t *st = &s->tables[table - 1];
    if (!st->active || (s->cfg.format != MATCH_RISING && st->deals_done >= s->cfg.deals_per_round))
        return a;
    for (uint32_t x = 0; x < s->cfg.seats; x++)
        json_array_append_new(a, json_integer((json_int_t)s->players[st->seat[x]].id));
    return a;
}

/* Parses "PLAYER:RESULT[:a],..." into res[seat] for the players of t (each exactly once);
 * absent[seat] for ":a" (the host's word: he played none of the deal himself). */
static int parse_result(const tm_table_t *t, const char *result, int64_t *res, bool *absent)
{
    bool seen[MATCH_MAX_SEATS] = {false};
    uint32_t n = 0;
    const char *p = result;
    while (*p != '\0') {
        char *end = NULL;
        if (*p < '0' || *p > '9')
            return -EINVAL;
        uint64_t player = strtoull(p, &end, 10);
        if (*end != ':')
            return -EINVAL;
        p = end + 1;
        if (*p != '-' && (*p < '0' || *p > '9'))
            return -EINVAL;
        long long v = strtoll(p, &end, 10);
        bool away = end != p && end[0] == ':' && end[1] == 'a';
        if (away)
            end += 2;
        if (end == p || (*end != ',' && *end != '\0') || v < -MATCH_MAX_RESULT ||
            v > MATCH_MAX_RESULT)
            return -EINVAL;
        p = *end == ',' ? end + 1 : end;
        uint32_t x = 0;
        while (x < t->nseats && t->players[x] != player)
            x++;
        if (x == t->nseats || seen[x])
            return -EINVAL;
        seen[x] = true;
        res[x] = v;
        absent[x] = away;
        n++;
    }
    return n == t->nseats ? 0 : -EINVAL;
}

char *tour_match_hand(tour_match_t *m, uint32_t table, uint64_t hand, const char *host,
                      const char *result, const char *record, int64_t clock_ms, tour_commit_t *c,
                      const char **code)
{
    *code = "BAD_REQUEST";
    tm_table_t *t = table_get(m, table, false);
    if (t == NULL || !t->in_hand || t->hand != hand)
        return body(",\"why\":\"no such hand in play\"");
    if (strcmp(t->host, host) != 0) {
        *code = "NOT_HOST";
        return body(",\"why\":\"dealt to another host\"");
    }
    int64_t res[MATCH_MAX_SEATS] = {0};
    bool absent[MATCH_MAX_SEATS] = {false};
    match_stage_t *s = cur(m);
    if (parse_result(t, result, res, absent) != 0 || t->stage + 1 != m->nstages ||
        match_result_check(res, t->nseats, s->cfg.teams) != 0)
        return body(",\"why\":\"the result must give every seated player once, summing to 0\"");
    char game[64], round[200];
    if (tour_record_ids(record, game, round) != 0)
        return body(",\"why\":\"malformed record\"");
    /* Who was absent (docs/rules/match-halls.md "Disconnects"), before the deal's end counts: in
     * Swiss, a round's match points (absent from all its deals: mp_absent). */
    bool was_absent[MATCH_MAX_SEATS] = {false}; /* restored if the stage refuses the deal */
    if (t->stage + 1 == m->nstages && s->cfg.format == MATCH_SWISS)
        for (uint32_t x = 0; x < t->nseats; x++) {
            int64_t i = match_stage_find(s, t->players[x]);
            if (i < 0)
                continue;
            was_absent[x] = s->players[i].round_absent;
            if (absent[x] && t->deal == 1)
                match_swiss_set_round_absent(s, t->players[x]);
            else if (!absent[x])
                s->players[i].round_absent = false;
        }
    /* Applied to the stage: refusals (-EINVAL, -ESTALE) leave it as it was. */
    uint64_t gone[MATCH_MAX_SEATS];
    size_t ng = 0;
    bool round_over = false;
    int rc;
    if (s->cfg.format == MATCH_RISING) {
        int64_t tm = clock_ms - m->stage_clock0;
        rc = match_rising_deal_end(s, table, t->deal, res, tm < 0 ? 0 : tm, gone, &ng);
    } else if (s->cfg.format == MATCH_FIXED) {
        uint64_t *g = calloc(s->n + 1, sizeof *g);
        if (g == NULL)
            return body(",\"why\":\"out of memory\"");
        rc = match_fixed_deal_end(s, table, (uint32_t)t->deal, res, &round_over, g, &ng);
        json_t *out = json_array();
        if (rc == 0)
            put_out(m, c, g, ng, out);
        json_decref(out);
        free(g);
        ng = 0;
    } else {
        rc = match_swiss_deal_end(s, table, (uint32_t)t->deal, res, &round_over);
    }
    if (rc != 0) {
        for (uint32_t x = 0; s->cfg.format == MATCH_SWISS && x < t->nseats; x++) {
            int64_t i = match_stage_find(s, t->players[x]);
            if (i >= 0)
                s->players[i].round_absent = was_absent[x];
        }
        return body(",\"why\":\"the stage refused the result (%s)\"",
                    rc == -ESTALE ? "not the deal in play" : "bad results");
    }
    t->in_hand = false;
    put_table(m, c, t);
    char *rtxt = strdup(result);
    log_event(c, "match_deal",
              "table %" PRIu32 " hand %" PRIu64 " stage %" PRIu32 " deal %" PRIu64 " base %" PRId64
              " result %s",
              table, hand, t->stage, t->deal, t->base, rtxt != NULL ? rtxt : "");
    free(rtxt);
    if (record != NULL) {
        tour_commit_add(c, "H");
        tour_commit_add(c, game);
        tour_commit_add(c, round);
        tour_commit_add(c, record);
    }
    json_t *out = json_array();
    put_out(m, c, gone, ng, out);
    rc = advance(m, clock_ms, c, out, false);
    put_meta(m, c);
    if (rc != 0) {
        json_decref(out);
        *code = "INTERNAL";
        return body(",\"why\":\"the match could not move on (%d)\"", rc);
    }
    json_t *next = next_players(m, table);
    /* Who leaves the table and is not out waits for his next one (the host unseats him). */
    const tm_table_t *done = table_get(m, table, false);
    for (uint32_t x = 0; done != NULL && next != NULL && x < done->nseats; x++) {
        bool stays = false, gone_now = false;
        size_t k;
        json_t *v;
        json_array_foreach(next, k, v)
        {
            stays = stays || (uint64_t)json_integer_value(v) == done->players[x];
        }
        json_array_foreach(out, k, v)
        {
            gone_now = gone_now || (uint64_t)json_integer_value(v) == done->players[x];
        }
        if (!stays && !gone_now && !m->finished)
            put_seat(m, c, done->players[x], 0, 0);
    }
    char *outs = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    char *nexts = next != NULL ? json_dumps(next, JSON_COMPACT) : NULL;
    json_decref(next);
    const match_stage_t *now = cur(m);
    *code = "OK";
    char *b = body(",\"table\":%" PRIu32 ",\"hand\":%" PRIu64 ",\"out\":%s,\"next\":%s"
                   ",\"players_left\":%" PRIu32 ",\"stage\":%zu,\"finished\":%s",
                   table, hand, outs != NULL ? outs : "[]", nexts != NULL ? nexts : "[]",
                   now->remaining, m->nstages - 1, m->finished ? "true" : "false");
    free(outs);
    free(nexts);
    return b;
}
