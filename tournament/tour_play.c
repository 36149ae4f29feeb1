/*
 * The director's model of a running tournament (tour_play.h; docs/tournaments.md "Tables and
 * hands").
 */
#include "tour_play.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tour_payout.h"

typedef struct {
    uint64_t player;
    uint32_t entry, entries, place, table, seat;
    int64_t stack, paid, fees, prize;
    int64_t bust_start; /* hand-for-hand: busted, his place waits for the round's end */
    char state[16];
    char item[TOUR_ITEM_MAX + 1]; /* his place's item prize, "" for none */
} tour_entry_t;

typedef struct {
    tour_table_t t;
    int button;                 /* the last hand's button seat (-1 before the first) */
    uint64_t hand;              /* the last hand dealt (0: none) */
    bool closed;                /* broken: no player any more */
    uint32_t h4h_hand;          /* the hand-for-hand round it dealt last */
    bool wait[TOUR_MAX_SEATS];  /* waits for the button (one hand out) */
    bool dealt[TOUR_MAX_SEATS]; /* dealt into the hand in play */
    int64_t start[TOUR_MAX_SEATS];
    char dealer[TOUR_HOST_MAX + 1]; /* the host the hand in play was dealt to */
} tour_ptable_t;

struct tour_play {
    const tour_structure_t *st;
    uint64_t id;
    tour_entry_t *e;
    size_t ne, ecap;
    tour_ptable_t *tb;
    size_t nt;
    uint64_t rng;
    int64_t pool, paid_out;
    uint32_t entries;
    bool h4h_on;        /* hand-for-hand (docs/tournaments.md "Hand-for-hand") */
    uint32_t h4h_round; /* its current round (0: the hands in play when it began) */
};

/* ---- commits ------------------------------------------------------------------------------ */

void tour_commit_add(tour_commit_t *c, const char *s)
{
    if (c->failed)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        char **v = realloc(c->v, cap * sizeof *v);
        if (v == NULL) {
            c->failed = true;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n] = strdup(s);
    if (c->v[c->n] == NULL)
        c->failed = true;
    else
        c->n++;
}

void tour_commit_addf(tour_commit_t *c, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) {
        c->failed = true;
        return;
    }
    tour_commit_add(c, s);
    free(s);
}

void tour_commit_free(tour_commit_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* ---- the model ---------------------------------------------------------------------------- */

tour_play_t *tour_play_create(const tour_structure_t *st, uint64_t tournament)
{
    tour_play_t *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->st = st;
    p->id = tournament;
    return p;
}

void tour_play_free(tour_play_t *p)
{
    if (p == NULL)
        return;
    free(p->e);
    free(p->tb);
    free(p);
}

static tour_entry_t *entry_find(tour_play_t *p, uint64_t player)
{
    for (size_t i = 0; i < p->ne; i++)
        if (p->e[i].player == player)
            return &p->e[i];
    return NULL;
}

static tour_ptable_t *table_find(tour_play_t *p, uint32_t id)
{
    for (size_t i = 0; i < p->nt; i++)
        if (p->tb[i].t.id == id)
            return &p->tb[i];
    return NULL;
}

static bool in_play(const tour_entry_t *e)
{
    return strcmp(e->state, "playing") == 0;
}

/* Still in: playing, or busted in a hand-for-hand round whose places are not given yet. */
static bool still_in(const tour_entry_t *e)
{
    return in_play(e) || strcmp(e->state, "busted") == 0;
}

int tour_play_load_entry(tour_play_t *p, const char *player, const char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    if (j == NULL)
        return -EINVAL;
    if (p->ne == p->ecap) {
        size_t cap = p->ecap ? 2 * p->ecap : 64;
        tour_entry_t *e = realloc(p->e, cap * sizeof *e);
        if (e == NULL) {
            json_decref(j);
            return -ENOMEM;
        }
        p->e = e;
        p->ecap = cap;
    }
    tour_entry_t *e = &p->e[p->ne++];
    memset(e, 0, sizeof *e);
    e->player = strtoull(player, NULL, 10);
    e->entry = (uint32_t)json_integer_value(json_object_get(j, "entry"));
    e->entries = (uint32_t)json_integer_value(json_object_get(j, "entries"));
    e->place = (uint32_t)json_integer_value(json_object_get(j, "place"));
    e->table = (uint32_t)json_integer_value(json_object_get(j, "table"));
    e->seat = (uint32_t)json_integer_value(json_object_get(j, "seat"));
    e->stack = json_integer_value(json_object_get(j, "stack"));
    e->paid = json_integer_value(json_object_get(j, "paid"));
    e->fees = json_integer_value(json_object_get(j, "fees"));
    e->prize = json_integer_value(json_object_get(j, "prize"));
    e->bust_start = json_integer_value(json_object_get(j, "bust_start"));
    const char *st = json_string_value(json_object_get(j, "state"));
    snprintf(e->state, sizeof e->state, "%s", st != NULL ? st : "?");
    const char *item = json_string_value(json_object_get(j, "item"));
    if (item != NULL && tour_payout_item_valid(item, strlen(item)))
        snprintf(e->item, sizeof e->item, "%s", item);
    json_decref(j);
    return 0;
}

int tour_play_load_table(tour_play_t *p, const char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    json_t *players = json_object_get(j, "players");
    if (j == NULL || !json_is_array(players) || json_array_size(players) > TOUR_MAX_SEATS) {
        json_decref(j);
        return -EINVAL;
    }
    tour_ptable_t *tb = realloc(p->tb, (p->nt + 1) * sizeof *tb);
    if (tb == NULL) {
        json_decref(j);
        return -ENOMEM;
    }
    p->tb = tb;
    tour_ptable_t *t = &p->tb[p->nt++];
    memset(t, 0, sizeof *t);
    t->t.id = (uint32_t)json_integer_value(json_object_get(j, "id"));
    t->t.seats = (uint32_t)json_array_size(players);
    t->t.sb = (int)json_integer_value(json_object_get(j, "sb"));
    t->t.bb = (int)json_integer_value(json_object_get(j, "bb"));
    t->button = (int)json_integer_value(json_object_get(j, "button"));
    t->hand = (uint64_t)json_integer_value(json_object_get(j, "hand"));
    t->closed = json_is_true(json_object_get(j, "closed"));
    t->t.between_hands = !json_is_true(json_object_get(j, "in_hand"));
    t->h4h_hand = (uint32_t)json_integer_value(json_object_get(j, "h4h_hand"));
    const char *dealer = json_string_value(json_object_get(j, "dealer"));
    snprintf(t->dealer, sizeof t->dealer, "%s", dealer != NULL ? dealer : "");
    json_t *moves = json_object_get(j, "moves"), *wait = json_object_get(j, "wait"),
           *dealt = json_object_get(j, "dealt"), *start = json_object_get(j, "start");
    for (uint32_t s = 0; s < t->t.seats; s++) {
        t->t.seat[s].player = (uint64_t)json_integer_value(json_array_get(players, s));
        t->t.seat[s].moves = (uint32_t)json_integer_value(json_array_get(moves, s));
        t->wait[s] = json_is_true(json_array_get(wait, s));
        t->dealt[s] = json_is_true(json_array_get(dealt, s));
        t->start[s] = json_integer_value(json_array_get(start, s));
    }
    json_decref(j);
    return 0;
}

void tour_play_set_meta(tour_play_t *p, uint64_t rng, int64_t pool, int64_t paid_out,
                        uint32_t entries)
{
    p->rng = rng;
    p->pool = pool;
    p->paid_out = paid_out;
    p->entries = entries;
}

bool tour_play_drawn(const tour_play_t *p)
{
    return p->nt > 0;
}

uint32_t tour_play_left(const tour_play_t *p)
{
    uint32_t n = 0;
    for (size_t i = 0; i < p->ne; i++)
        n += still_in(&p->e[i]);
    return n;
}

void tour_play_set_h4h(tour_play_t *p, bool on, uint32_t round)
{
    p->h4h_on = on;
    p->h4h_round = round;
}

bool tour_play_h4h(const tour_play_t *p)
{
    return p->h4h_on;
}

/* ---- writing the model -------------------------------------------------------------------- */

static void put_entry(tour_commit_t *c, const tour_entry_t *e)
{
    tour_commit_add(c, "E");
    tour_commit_addf(c, "%" PRIu64, e->player);
    tour_commit_addf(c,
                     "{\"entry\":%" PRIu32 ",\"entries\":%" PRIu32 ",\"stack\":%" PRId64
                     ",\"state\":\"%s\",\"paid\":%" PRId64 ",\"fees\":%" PRId64
                     ",\"place\":%" PRIu32 ",\"prize\":%" PRId64 ",\"table\":%" PRIu32
                     ",\"seat\":%" PRIu32 ",\"bust_start\":%" PRId64 "%s%s%s}",
                     e->entry, e->entries, e->stack, e->state, e->paid, e->fees, e->place, e->prize,
                     e->table, e->seat, e->bust_start, e->item[0] != '\0' ? ",\"item\":\"" : "",
                     e->item, e->item[0] != '\0' ? "\"" : "");
}

static void put_table(tour_commit_t *c, const tour_ptable_t *t)
{
    json_t *players = json_array(), *moves = json_array(), *wait = json_array(),
           *dealt = json_array(), *start = json_array();
    for (uint32_t s = 0; s < t->t.seats; s++) {
        json_array_append_new(players, json_integer((json_int_t)t->t.seat[s].player));
        json_array_append_new(moves, json_integer(t->t.seat[s].moves));
        json_array_append_new(wait, json_boolean(t->wait[s]));
        json_array_append_new(dealt, json_boolean(t->dealt[s]));
        json_array_append_new(start, json_integer(t->start[s]));
    }
    json_t *j =
        json_pack("{s:I,s:i,s:i,s:i,s:I,s:b,s:b,s:I,s:s,s:o,s:o,s:o,s:o,s:o}", "id",
                  (json_int_t)t->t.id, "sb", t->t.sb, "bb", t->t.bb, "button", t->button, "hand",
                  (json_int_t)t->hand, "in_hand", !t->t.between_hands, "closed", t->closed,
                  "h4h_hand", (json_int_t)t->h4h_hand, "dealer", t->dealer, "players", players,
                  "moves", moves, "wait", wait, "dealt", dealt, "start", start);
    char *txt = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    tour_commit_add(c, "T");
    tour_commit_addf(c, "%" PRIu32, t->t.id);
    tour_commit_add(c, txt != NULL ? txt : "");
    if (txt == NULL)
        c->failed = true;
    free(txt);
}

static void put_rng(tour_commit_t *c, const tour_play_t *p)
{
    tour_commit_add(c, "M");
    tour_commit_add(c, "rng");
    tour_commit_addf(c, "%" PRIu64, p->rng);
}

/* ---- the draw ----------------------------------------------------------------------------- */

int tour_play_draw(tour_play_t *p, tour_commit_t *c)
{
    uint32_t n = tour_play_left(p);
    if (n == 0 || p->nt > 0)
        return -EINVAL;
    uint64_t *players = calloc(n, sizeof *players);
    uint32_t ntables = tour_seating_tables_for(n, p->st->seats_per_table);
    tour_table_t *tables = calloc(ntables, sizeof *tables);
    p->tb = calloc(ntables, sizeof *p->tb);
    if (players == NULL || tables == NULL || p->tb == NULL) {
        free(players);
        free(tables);
        return -ENOMEM;
    }
    uint32_t k = 0;
    for (size_t i = 0; i < p->ne; i++)
        if (in_play(&p->e[i]))
            players[k++] = p->e[i].player;
    int rc = tour_seating_draw(players, n, p->st->seats_per_table, 1, tour_rng_splitmix64, &p->rng,
                               tables, ntables);
    if (rc != 0) {
        free(players);
        free(tables);
        return rc;
    }
    p->nt = ntables;
    for (uint32_t i = 0; i < ntables; i++) {
        tour_ptable_t *t = &p->tb[i];
        t->t = tables[i];
        t->button = -1;
        for (uint32_t s = 0; s < t->t.seats; s++) {
            tour_entry_t *e = entry_find(p, t->t.seat[s].player);
            if (e != NULL) {
                e->table = t->t.id;
                e->seat = s;
                put_entry(c, e);
            }
        }
        put_table(c, t);
    }
    put_rng(c, p);
    tour_commit_add(c, "L");
    tour_commit_add(c, "draw");
    tour_commit_addf(c, "tables %" PRIu32 " players %" PRIu32, ntables, n);
    free(players);
    free(tables);
    return 0;
}

/* ---- deal --------------------------------------------------------------------------------- */

static bool h4h_round_done(const tour_play_t *p);

static bool seat_live(const tour_ptable_t *t, int s)
{
    return s >= 0 && (uint32_t)s < t->t.seats && t->t.seat[s].player != 0;
}

/* The first occupied seat strictly after s (clockwise), or -1. */
static int next_occupied(const tour_ptable_t *t, int s)
{
    for (uint32_t k = 1; k <= t->t.seats; k++) {
        int x = (int)((uint32_t)(s + (int)k) % t->t.seats);
        if (seat_live(t, x) && !t->wait[x])
            return x;
    }
    return -1;
}

/* Whether button, sb, bb (clockwise) make a hand the table can deal: the button before the small
 * blind, the small blind before the big blind, and no seat dealt in between the button and the
 * big blind but the small blind's (holdem_table_start_hand_at's rule). */
static bool button_fits(const tour_ptable_t *t, int button, int sb, int bb)
{
    int n = (int)t->t.seats;
    if (button < 0 || button >= n || button == sb || button == bb)
        return false;
    bool seen_sb = false;
    for (int k = 1; k < n; k++) {
        int x = (button + k) % n;
        if (x == bb)
            return seen_sb; /* reached the big blind past the small blind, nobody else dealt in */
        if (x == sb)
            seen_sb = true;
        else if (seat_live(t, x) && !t->wait[x])
            return false;
    }
    return false;
}

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

/* The answer to a deal: the hand's blinds, positions and seats (dealt in or not, stacks). */
static char *deal_answer(const tour_ptable_t *t, uint64_t hand, const tour_blinds_t *bl)
{
    json_t *seats = json_array();
    for (uint32_t s = 0; s < t->t.seats; s++)
        if (t->t.seat[s].player != 0)
            json_array_append_new(seats, json_pack("{s:i,s:I,s:I,s:b}", "seat", (int)s, "player",
                                                   (json_int_t)t->t.seat[s].player, "stack",
                                                   (json_int_t)t->start[s], "dealt", t->dealt[s]));
    char *seats_txt = json_dumps(seats, JSON_COMPACT);
    json_decref(seats);
    char *b = body(",\"table\":%" PRIu32 ",\"hand\":%" PRIu64 ",\"level\":%" PRIu32
                   ",\"small_blind\":%" PRId64 ",\"big_blind\":%" PRId64 ",\"ante\":%" PRId64
                   ",\"big_blind_ante\":%s,\"button\":%d,\"sb\":%d,\"bb\":%d,\"seats\":%s",
                   t->t.id, hand, bl->level, bl->small_blind, bl->big_blind, bl->ante,
                   bl->big_blind_ante ? "true" : "false", t->button, t->t.sb, t->t.bb,
                   seats_txt != NULL ? seats_txt : "[]");
    free(seats_txt);
    return b;
}

char *tour_play_deal(tour_play_t *p, uint32_t table, uint64_t hand, const char *host,
                     int64_t clock_ms, tour_commit_t *c, const char **code)
{
    tour_ptable_t *t = table_find(p, table);
    *code = "BAD_REQUEST";
    if (t == NULL)
        return body(",\"why\":\"no table %" PRIu32 "\"", table);
    if (t->closed) {
        *code = "TABLE_CLOSED";
        return body("%s", "");
    }
    if (!t->t.between_hands && hand == t->hand && hand > 0) {
        /* A re-deal of the hand in play: its host voided it (a drain bound, a crash) or another
         * host took the table. The same positions, seats and stacks (nothing of the hand was
         * recorded); the blinds of the level in force now; dealt to host from now on, so the
         * old host's result is refused (docs/tournaments.md "Tables at the servers"). */
        tour_blinds_t bl;
        if (tour_structure_hand_blinds(p->st, clock_ms, &bl) != 0) {
            *code = "WAIT"; /* a break began: re-dealt after it */
            return body(",\"why\":\"break\"");
        }
        snprintf(t->dealer, sizeof t->dealer, "%s", host);
        put_table(c, t);
        tour_commit_add(c, "L");
        tour_commit_add(c, "redeal");
        tour_commit_addf(c, "table %" PRIu32 " hand %" PRIu64 " host %s", table, hand, host);
        *code = "OK";
        return deal_answer(t, hand, &bl);
    }
    if (!t->t.between_hands || hand != t->hand + 1)
        return body(",\"why\":\"hand %" PRIu64 " is not the next (last dealt %" PRIu64 ", %s)\"",
                    hand, t->hand, t->t.between_hands ? "between hands" : "in a hand");
    tour_blinds_t bl;
    if (tour_structure_hand_blinds(p->st, clock_ms, &bl) != 0) {
        *code = "WAIT";
        return body(",\"why\":\"break\"");
    }
    /* Waiting players sit this hand out (the button passes them once). Every refusal comes
     * before anything of the model changes. */
    int players = 0, live = 0;
    for (uint32_t s = 0; s < t->t.seats; s++) {
        live += seat_live(t, (int)s);
        players += seat_live(t, (int)s) && !t->wait[s];
    }
    if (players < 2 && live >= 2) {
        /* Players moved in between the button and the small blind while this table's hand was
         * played wait for the button; if its own players busted meanwhile, fewer than two are
         * left to deal to and the button would never pass: the waiting players are dealt in
         * now (docs/tournaments.md "Seating"). */
        for (uint32_t s = 0; s < t->t.seats; s++)
            t->wait[s] = false;
        players = live;
        tour_commit_add(c, "L");
        tour_commit_add(c, "wait_over");
        tour_commit_addf(c, "table %" PRIu32 " hand %" PRIu64 " players %d", table, hand, live);
    }
    if (players < 2) {
        *code = "WAIT";
        return body(",\"why\":\"fewer than two players\"");
    }
    /* Hand-for-hand: a table that played the current round waits for the others; the first
     * to ask once all did begins the next round. */
    if (p->h4h_on && t->h4h_hand >= p->h4h_round) {
        if (!h4h_round_done(p)) {
            *code = "WAIT";
            return body(",\"why\":\"hand-for-hand: the other tables finish the round\"");
        }
        p->h4h_round++;
        tour_commit_add(c, "M");
        tour_commit_add(c, "h4h_round");
        tour_commit_addf(c, "%" PRIu32, p->h4h_round);
        tour_commit_add(c, "L");
        tour_commit_add(c, "hand_for_hand_round");
        tour_commit_addf(c, "round %" PRIu32, p->h4h_round);
    }
    int button, sb, bb;
    if (t->t.bb < 0) {
        /* The first hand: a random button, the blinds after it. */
        int k = (int)tour_rng_below(tour_rng_splitmix64, &p->rng, (uint64_t)players);
        button = -1;
        for (uint32_t s = 0; s < t->t.seats; s++)
            if (seat_live(t, (int)s) && !t->wait[s] && k-- == 0)
                button = (int)s;
        sb = players == 2 ? button : next_occupied(t, button);
        bb = next_occupied(t, sb);
        put_rng(c, p);
    } else {
        /* Big blind forward (docs/tournaments.md "Positions"); heads-up the button is the
         * small blind. */
        bb = next_occupied(t, t->t.bb);
        if (players == 2) {
            sb = next_occupied(t, bb);
            button = sb;
        } else {
            sb = t->t.bb;
            button = t->t.sb;
            /* After a heads-up hand (its button was its small blind, seated after its big
             * blind: docs/tournaments.md "Positions") the last small blind may be the new big
             * blind, or sit between the new blinds: the button is then the seat just before the
             * small blind, dead when empty. */
            if (!button_fits(t, button, sb, bb))
                button = (sb + (int)t->t.seats - 1) % (int)t->t.seats;
        }
    }
    if (p->h4h_on)
        t->h4h_hand = p->h4h_round;
    t->button = button;
    t->t.sb = sb;
    t->t.bb = bb;
    t->hand = hand;
    t->t.between_hands = false;
    snprintf(t->dealer, sizeof t->dealer, "%s", host);
    for (uint32_t s = 0; s < t->t.seats; s++) {
        t->dealt[s] = seat_live(t, (int)s) && !t->wait[s];
        tour_entry_t *e = t->t.seat[s].player ? entry_find(p, t->t.seat[s].player) : NULL;
        t->start[s] = e != NULL ? e->stack : 0;
    }
    char *b = deal_answer(t, hand, &bl);
    for (uint32_t s = 0; s < t->t.seats; s++)
        if (t->wait[s] && seat_live(t, (int)s))
            t->wait[s] = false; /* out this hand, in from the next */
    put_table(c, t);
    tour_commit_add(c, "L");
    tour_commit_add(c, "deal");
    tour_commit_addf(c, "table %" PRIu32 " hand %" PRIu64 " level %" PRIu32, table, hand, bl.level);
    *code = "OK";
    return b;
}

/* ---- hand --------------------------------------------------------------------------------- */

/*
 * Late entries (and re-entries) waiting for a seat: each goes to the open table with the fewest
 * players (ties: the lowest number), a random free seat there that is not the next hand's small
 * blind seat (the last big blind's); he is dealt in from that table's next hand.
 */
static void seat_late_entries(tour_play_t *p, tour_commit_t *c, json_t *moves)
{
    for (size_t i = 0; i < p->ne; i++) {
        tour_entry_t *e = &p->e[i];
        if (strcmp(e->state, "waiting") != 0)
            continue;
        tour_ptable_t *best = NULL;
        for (size_t k = 0; k < p->nt; k++) {
            tour_ptable_t *t = &p->tb[k];
            uint32_t n = tour_table_count(&t->t);
            if (t->closed || n >= t->t.seats ||
                (n + 1 == t->t.seats && t->t.bb >= 0 && t->t.seat[t->t.bb].player == 0))
                continue;
            if (best == NULL || n < tour_table_count(&best->t))
                best = t;
        }
        if (best == NULL)
            return; /* no room now: after a later hand */
        uint32_t free_seats[TOUR_MAX_SEATS], nf = 0;
        for (uint32_t s = 0; s < best->t.seats; s++)
            if (best->t.seat[s].player == 0 && (int)s != best->t.bb)
                free_seats[nf++] = s;
        if (nf == 0)
            continue;
        uint32_t s = free_seats[tour_rng_below(tour_rng_splitmix64, &p->rng, nf)];
        best->t.seat[s].player = e->player;
        best->t.seat[s].moves = 0;
        best->wait[s] = false;
        snprintf(e->state, sizeof e->state, "playing");
        e->table = best->t.id;
        e->seat = s;
        put_entry(c, e);
        put_table(c, best);
        json_array_append_new(moves,
                              json_pack("{s:I,s:i,s:i,s:s,s:b}", "player", (json_int_t)e->player,
                                        "to_table", (int)best->t.id, "to_seat", (int)s, "reason",
                                        "late", "wait_for_button", false));
        tour_commit_add(c, "L");
        tour_commit_add(c, "seated");
        tour_commit_addf(c, "player %" PRIu64 " table %" PRIu32 " seat %" PRIu32, e->player,
                         best->t.id, s);
    }
}

int tour_play_register(tour_play_t *p, uint64_t player, uint32_t entry, int64_t stack,
                       int64_t buy_in, int64_t fee)
{
    tour_entry_t *e = entry_find(p, player);
    if (e == NULL) {
        if (p->ne == p->ecap) {
            size_t cap = p->ecap ? 2 * p->ecap : 64;
            tour_entry_t *v = realloc(p->e, cap * sizeof *v);
            if (v == NULL)
                return -ENOMEM;
            p->e = v;
            p->ecap = cap;
        }
        e = &p->e[p->ne++];
        memset(e, 0, sizeof *e);
        e->player = player;
    }
    e->entry = entry;
    e->entries++;
    e->stack = stack;
    e->paid += buy_in;
    e->fees += fee;
    e->place = 0;
    e->prize = 0;
    e->item[0] = '\0';
    e->table = 0;
    e->seat = 0;
    snprintf(e->state, sizeof e->state, "waiting");
    p->pool += buy_in;
    p->entries++;
    return 0;
}

/* Pays amount from the pool to a player (a P command), and the item of his place (e->place set
 * before; an I command, docs/tournaments.md "Items") in the same commit. */
static void pay(tour_play_t *p, tour_commit_t *c, tour_entry_t *e, int64_t amount)
{
    const char *item = tour_payout_item(&p->st->payouts, e->place);
    snprintf(e->item, sizeof e->item, "%s", item != NULL ? item : "");
    if (item != NULL) {
        tour_commit_add(c, "I");
        tour_commit_addf(c, "%" PRIu64, e->player);
        tour_commit_add(c, item);
        tour_commit_addf(c, "%" PRIu32, e->place);
    }
    e->prize = amount;
    if (amount <= 0)
        return;
    p->pool -= amount;
    p->paid_out += amount;
    tour_commit_add(c, "P");
    tour_commit_addf(c, "%" PRIu64, e->player);
    tour_commit_addf(c, "%" PRId64, amount);
}

/*
 * Places the nb players busted together (one hand, or one hand-for-hand round; left = the players
 * still in, them included) and pays their prizes (docs/tournaments.md "Payouts"). Returns 0 or
 * -EINVAL (nothing changed).
 */
static int place_busts(tour_play_t *p, tour_commit_t *c, const tour_bust_t *busts, size_t nb,
                       uint32_t left, json_t *out)
{
    if (nb == 0)
        return 0;
    int64_t total = p->pool + p->paid_out;
    uint32_t cap = tour_payout_places(&p->st->payouts, p->entries);
    int64_t *prizes = calloc(cap + 1, sizeof *prizes);
    tour_award_t *aw = calloc(nb, sizeof *aw);
    size_t nplaces = 0;
    if (prizes == NULL || aw == NULL || nb >= left ||
        tour_payout_table(&p->st->payouts, p->entries, total, prizes, cap, &nplaces) != 0 ||
        tour_payout_busts(prizes, nplaces, left - (uint32_t)nb + 1, busts, nb, aw) != 0) {
        free(prizes);
        free(aw);
        return -EINVAL;
    }
    for (size_t i = 0; i < nb; i++) {
        tour_entry_t *e = entry_find(p, aw[i].player);
        if (e == NULL)
            continue; /* every busted player has an entry (the model is built so) */
        snprintf(e->state, sizeof e->state, "out");
        e->place = aw[i].place;
        e->stack = 0;
        e->bust_start = 0;
        /* The last prize paid takes what is left (a pool that late entries grew after earlier
         * places were paid still empties exactly). */
        pay(p, c, e, aw[i].place == 1 ? p->pool : aw[i].amount);
        for (size_t k = 0; k < p->nt; k++)
            for (uint32_t x = 0; x < p->tb[k].t.seats; x++)
                if (p->tb[k].t.seat[x].player == e->player) {
                    p->tb[k].t.seat[x].player = 0;
                    put_table(c, &p->tb[k]);
                }
        e->table = 0;
        e->seat = 0;
        put_entry(c, e);
        json_array_append_new(out, json_pack("{s:I,s:i,s:I,s:s*}", "player", (json_int_t)e->player,
                                             "place", (int)e->place, "prize", (json_int_t)e->prize,
                                             "item", e->item[0] != '\0' ? e->item : NULL));
        tour_commit_add(c, "L");
        tour_commit_add(c, "out");
        tour_commit_addf(c, "player %" PRIu64 " place %" PRIu32 " prize %" PRId64 "%s%s", e->player,
                         e->place, e->prize, e->item[0] != '\0' ? " item " : "", e->item);
    }
    free(prizes);
    free(aw);
    return 0;
}

/* Players seated at a table (busted ones have left their seats). */
static uint32_t seated(const tour_ptable_t *t)
{
    return tour_table_count(&t->t);
}

/* Hand-for-hand: whether every open table with two players or more has played the round and is
 * between hands. */
static bool h4h_round_done(const tour_play_t *p)
{
    for (size_t i = 0; i < p->nt; i++) {
        const tour_ptable_t *t = &p->tb[i];
        if (t->closed)
            continue;
        if (!t->t.between_hands)
            return false;
        if (seated(t) >= 2 && t->h4h_hand < p->h4h_round)
            return false;
    }
    return true;
}

/* The round is over: its busts (from every table) take their places together. */
static int h4h_place_round(tour_play_t *p, tour_commit_t *c, json_t *out)
{
    size_t nb = 0;
    for (size_t i = 0; i < p->ne; i++)
        nb += strcmp(p->e[i].state, "busted") == 0;
    if (nb == 0)
        return 0;
    tour_bust_t *busts = calloc(nb, sizeof *busts);
    if (busts == NULL)
        return -ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < p->ne; i++)
        if (strcmp(p->e[i].state, "busted") == 0)
            busts[k++] = (tour_bust_t){.player = p->e[i].player,
                                       .start_stack = p->e[i].bust_start,
                                       .tiebreak = p->e[i].entry};
    int rc = place_busts(p, c, busts, nb, tour_play_left(p), out);
    free(busts);
    return rc;
}

/* Turns hand-for-hand on or off by the players left (docs/tournaments.md "Hand-for-hand"). */
static void h4h_update(tour_play_t *p, tour_commit_t *c)
{
    uint32_t paid = tour_payout_places(&p->st->payouts, p->entries);
    /* Only across tables: at one table the players busted in one hand already share by the
     * bust rule, and a paused clock would hold a final table's blinds for good. */
    size_t open = 0;
    for (size_t i = 0; i < p->nt; i++)
        open += !p->tb[i].closed && seated(&p->tb[i]) > 0;
    bool want = p->st->h4h_margin > 0 && open >= 2 &&
                tour_hand_for_hand(tour_play_left(p), paid, p->st->h4h_margin);
    if (want == p->h4h_on)
        return;
    p->h4h_on = want;
    p->h4h_round = 0;
    for (size_t i = 0; i < p->nt; i++) {
        p->tb[i].h4h_hand = 0;
        put_table(c, &p->tb[i]);
    }
    tour_commit_add(c, "M");
    tour_commit_add(c, "h4h_on");
    tour_commit_add(c, want ? "1" : "0");
    tour_commit_add(c, "M");
    tour_commit_add(c, "h4h_round");
    tour_commit_add(c, "0");
    tour_commit_add(c, "L");
    tour_commit_add(c, want ? "hand_for_hand" : "hand_for_hand_over");
    tour_commit_addf(c, "players %" PRIu32 " paid %" PRIu32, tour_play_left(p), paid);
}

char *tour_play_hand(tour_play_t *p, uint32_t table, uint64_t hand, const char *host,
                     const char *result, const char *record, int64_t now_ms, tour_commit_t *c,
                     const char **code)
{
    tour_ptable_t *t = table_find(p, table);
    *code = "BAD_REQUEST";
    if (t == NULL)
        return body(",\"why\":\"no table %" PRIu32 "\"", table);
    if (t->t.between_hands || hand != t->hand)
        return body(",\"why\":\"hand %" PRIu64 " is not in play\"", hand);
    if (strcmp(host, t->dealer) != 0) {
        *code = "NOT_HOST"; /* re-dealt to another host since: this result is void */
        return body(",\"why\":\"hand %" PRIu64 " was re-dealt to another host\"", hand);
    }
    /* Parse and check before changing anything. */
    int64_t end[TOUR_MAX_SEATS];
    bool seen[TOUR_MAX_SEATS] = {false};
    const char *s = result;
    int n = 0;
    while (s != NULL && *s != '\0') {
        char *colon;
        uint64_t player = strtoull(s, &colon, 10);
        if (*colon != ':')
            return body(",\"why\":\"malformed result\"");
        char *next;
        long long stack = strtoll(colon + 1, &next, 10);
        if ((*next != ',' && *next != '\0') || stack < 0)
            return body(",\"why\":\"malformed result\"");
        int seat = -1;
        for (uint32_t x = 0; x < t->t.seats; x++)
            if (t->dealt[x] && t->t.seat[x].player == player)
                seat = (int)x;
        if (seat < 0 || seen[seat])
            return body(",\"why\":\"player %" PRIu64 " was not dealt in once\"", player);
        seen[seat] = true;
        end[seat] = stack;
        n++;
        s = *next == ',' ? next + 1 : next;
    }
    int64_t before = 0, after = 0;
    for (uint32_t x = 0; x < t->t.seats; x++)
        if (t->dealt[x]) {
            if (!seen[x])
                return body(",\"why\":\"seat %u missing from the result\"", x);
            before += t->start[x];
            after += end[x];
        }
    if (before != after)
        return body(",\"why\":\"chips not conserved: %" PRId64 " before, %" PRId64 " after\"",
                    before, after);

    /* The hand's history record, with the stacks (docs/tournaments.md "Tables at the servers"):
     * its game names the stream, its round the dedupe key. */
    char game[64], round[200];
    if (tour_record_ids(record, game, round) != 0)
        return body(",\"why\":\"malformed record\"");

    /* The stacks; the busted players take their places (docs/tournaments.md "Payouts") now,
     * or, hand-for-hand, once every table has played the round (busts of one round share). */
    uint32_t left = tour_play_left(p);
    tour_bust_t busts[TOUR_MAX_SEATS];
    size_t nb = 0;
    for (uint32_t x = 0; x < t->t.seats; x++)
        if (t->dealt[x] && end[x] == 0) {
            tour_entry_t *e = entry_find(p, t->t.seat[x].player);
            busts[nb++] = (tour_bust_t){.player = t->t.seat[x].player,
                                        .start_stack = t->start[x],
                                        .tiebreak = e != NULL ? e->entry : 0};
        }
    if (nb >= left)
        return body(",\"why\":\"everyone busted\"");
    json_t *out = json_array();
    if (nb > 0 && !p->h4h_on && place_busts(p, c, busts, nb, left, out) != 0) {
        json_decref(out);
        return body(",\"why\":\"places could not be computed\"");
    }
    for (uint32_t x = 0; x < t->t.seats; x++) {
        if (!t->dealt[x])
            continue;
        tour_entry_t *e = entry_find(p, t->t.seat[x].player);
        if (e == NULL)
            continue;
        e->stack = end[x];
        if (end[x] == 0 && p->h4h_on) {
            snprintf(e->state, sizeof e->state, "busted");
            e->bust_start = t->start[x];
            e->table = 0;
            e->seat = 0;
            t->t.seat[x].player = 0;
            tour_commit_add(c, "L");
            tour_commit_add(c, "busted");
            tour_commit_addf(c, "player %" PRIu64 " round %" PRIu32, e->player, p->h4h_round);
        }
        put_entry(c, e);
    }
    if (record != NULL) {
        tour_commit_add(c, "H");
        tour_commit_add(c, game);
        tour_commit_add(c, round);
        tour_commit_add(c, record);
    }
    t->t.between_hands = true;
    memset(t->dealt, 0, sizeof t->dealt);
    put_table(c, t);
    bool round_done = !p->h4h_on || h4h_round_done(p);
    if (p->h4h_on && round_done && h4h_place_round(p, c, out) != 0) {
        /* The model already moved: the director hands the tournament back (a reload). */
        json_decref(out);
        *code = "INTERNAL";
        return body(",\"why\":\"places could not be computed\"");
    }
    bool finished = false;
    if (tour_play_left(p) == 1) {
        /* The winner: first place, what is left of the pool. */
        for (size_t i = 0; i < p->ne; i++)
            if (in_play(&p->e[i])) {
                tour_entry_t *w = &p->e[i];
                snprintf(w->state, sizeof w->state, "won");
                w->place = 1;
                pay(p, c, w, p->pool);
                w->table = 0;
                w->seat = 0;
                put_entry(c, w);
                json_array_append_new(out, json_pack("{s:I,s:i,s:I,s:s*}", "player",
                                                     (json_int_t)w->player, "place", 1, "prize",
                                                     (json_int_t)w->prize, "item",
                                                     w->item[0] != '\0' ? w->item : NULL));
                tour_commit_add(c, "L");
                tour_commit_add(c, "finished");
                tour_commit_addf(c, "winner %" PRIu64 " prize %" PRId64 "%s%s", w->player, w->prize,
                                 w->item[0] != '\0' ? " item " : "", w->item);
            }
        for (size_t i = 0; i < p->nt; i++) {
            memset(p->tb[i].t.seat, 0, sizeof p->tb[i].t.seat);
            p->tb[i].closed = true;
            put_table(c, &p->tb[i]);
        }
        tour_commit_add(c, "M");
        tour_commit_add(c, "ended_ms");
        tour_commit_addf(c, "%" PRId64, now_ms);
        tour_commit_add(c, "F");
        tour_commit_add(c, "finished");
        finished = true;
    } else if (round_done) {
        h4h_update(p, c);
    }

    /* Between hands: late entries take a seat, then tables are broken and balanced
     * (tour_seating.h), only while play goes on. */
    json_t *moves = json_array();
    if (!finished && round_done)
        seat_late_entries(p, c, moves);
    if (!finished && round_done) {
        tour_table_t *model = calloc(p->nt, sizeof *model);
        tour_move_t mv[64];
        size_t nmv = 0;
        tour_seating_rules_t rules = tour_seating_rules_default();
        if (model != NULL) {
            for (size_t i = 0; i < p->nt; i++)
                model[i] = p->tb[i].t;
            int rc;
            do {
                rc = tour_seating_plan(model, p->nt, &rules, tour_rng_splitmix64, &p->rng, mv, 64,
                                       &nmv);
                for (size_t m = 0; m < nmv; m++) {
                    tour_entry_t *e = entry_find(p, mv[m].player);
                    tour_ptable_t *to = table_find(p, mv[m].to_table);
                    if (e != NULL) {
                        e->table = mv[m].to_table;
                        e->seat = mv[m].to_seat;
                        put_entry(c, e);
                    }
                    if (to != NULL)
                        to->wait[mv[m].to_seat] = mv[m].wait_for_button;
                    json_array_append_new(
                        moves,
                        json_pack("{s:I,s:i,s:i,s:i,s:i,s:s,s:b}", "player",
                                  (json_int_t)mv[m].player, "from_table", (int)mv[m].from_table,
                                  "from_seat", (int)mv[m].from_seat, "to_table",
                                  (int)mv[m].to_table, "to_seat", (int)mv[m].to_seat, "reason",
                                  mv[m].reason == TOUR_MOVE_BREAK ? "break" : "balance",
                                  "wait_for_button", mv[m].wait_for_button));
                    tour_commit_add(c, "L");
                    tour_commit_add(c, "move");
                    tour_commit_addf(
                        c, "player %" PRIu64 " from %" PRIu32 " to %" PRIu32 " seat %" PRIu32 " %s",
                        mv[m].player, mv[m].from_table, mv[m].to_table, mv[m].to_seat,
                        mv[m].reason == TOUR_MOVE_BREAK ? "break" : "balance");
                }
            } while (rc == -ENOSPC);
            for (size_t i = 0; i < p->nt; i++) {
                bool changed = memcmp(&model[i], &p->tb[i].t, sizeof model[i]) != 0;
                p->tb[i].t = model[i];
                if (tour_table_count(&model[i]) == 0 && !p->tb[i].closed && p->nt > 1) {
                    p->tb[i].closed = true;
                    changed = true;
                }
                if (changed || &p->tb[i] == t)
                    put_table(c, &p->tb[i]);
            }
            free(model);
        }
        put_rng(c, p);
    }
    tour_commit_add(c, "M");
    tour_commit_add(c, "paid_out");
    tour_commit_addf(c, "%" PRId64, p->paid_out);
    tour_commit_add(c, "M");
    tour_commit_add(c, "players");
    tour_commit_addf(c, "%" PRIu32, tour_play_left(p));
    tour_commit_add(c, "M");
    tour_commit_add(c, "pool");
    tour_commit_addf(c, "%" PRId64, p->pool);
    char *outs = json_dumps(out, JSON_COMPACT), *mvs = json_dumps(moves, JSON_COMPACT);
    json_decref(out);
    json_decref(moves);
    *code = "OK";
    char *b = body(",\"table\":%" PRIu32 ",\"hand\":%" PRIu64 ",\"out\":%s,\"moves\":%s,"
                   "\"players_left\":%" PRIu32 ",\"finished\":%s,\"closed\":%s",
                   table, hand, outs != NULL ? outs : "[]", mvs != NULL ? mvs : "[]",
                   tour_play_left(p), finished ? "true" : "false", t->closed ? "true" : "false");
    free(outs);
    free(mvs);
    return b;
}

int tour_record_ids(const char *record, char game[64], char round[200])
{
    game[0] = round[0] = '\0';
    if (record == NULL)
        return 0;
    json_t *rj = json_loads(record, 0, NULL);
    const char *g = json_string_value(json_object_get(rj, "game"));
    const char *rd = json_string_value(json_object_get(rj, "round"));
    bool usable = g != NULL && rd != NULL && strlen(g) < 64 && strlen(rd) < 200 &&
                  strspn(g, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(g);
    if (usable) {
        snprintf(game, 64, "%s", g);
        snprintf(round, 200, "%s", rd);
    }
    json_decref(rj);
    return usable ? 0 : -EINVAL;
}
