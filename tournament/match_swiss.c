/*
 * match_swiss -- Swiss rounds (see match_swiss.h and docs/rules/match-halls.md "瑞士移位").
 */
#include "match_swiss.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

/* Player index at (round r, table, seat): the inverse of hist for one round. at[] has
 * (ntables + 1) * MATCH_MAX_SEATS entries. */
static void round_map(const match_stage_t *st, uint32_t r, uint32_t *at, size_t nat)
{
    for (size_t k = 0; k < nat; k++)
        at[k] = MATCH_NONE;
    const uint32_t *h = &st->hist[(size_t)r * st->n];
    for (uint32_t i = 0; i < st->n; i++)
        if (h[i] != MATCH_NONE && h[i] < nat)
            at[h[i]] = i;
}

static bool opponents(const match_stage_t *st, uint32_t s1, uint32_t s2)
{
    if (s1 == s2)
        return false;
    return !st->cfg.teams || (s1 % 2) != (s2 % 2);
}

/* Buchholz of every player at once: O(rounds x n). */
static void buchholz_all(const match_stage_t *st, int64_t *b)
{
    size_t nat = ((size_t)st->ntables + 1) * MATCH_MAX_SEATS;
    uint32_t *at = xmalloc(nat * sizeof *at);
    memset(b, 0, (size_t)st->n * sizeof *b);
    for (uint32_t r = 0; r < st->round; r++) {
        round_map(st, r, at, nat);
        const uint32_t *h = &st->hist[(size_t)r * st->n];
        for (uint32_t i = 0; i < st->n; i++) {
            if (h[i] == MATCH_NONE)
                continue;
            uint32_t t = h[i] / MATCH_MAX_SEATS, s = h[i] % MATCH_MAX_SEATS;
            for (uint32_t o = 0; o < st->cfg.seats; o++) {
                uint32_t j = at[t * MATCH_MAX_SEATS + o];
                if (j != MATCH_NONE && opponents(st, s, o))
                    b[i] += st->players[j].mp;
            }
        }
    }
    free(at);
}

int64_t match_swiss_buchholz(const match_stage_t *st, uint32_t i)
{
    int64_t *b = xmalloc(((size_t)st->n + 1) * sizeof *b);
    buchholz_all(st, b);
    int64_t v = b[i];
    free(b);
    return v;
}

typedef struct {
    const match_stage_t *st;
    const int64_t *b;
} rank_arg_t;

static int cmp_rank(const void *a, const void *c, void *arg)
{
    const rank_arg_t *ra = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)c;
    const match_player_t *x = &ra->st->players[i], *y = &ra->st->players[j];
    if (x->mp != y->mp)
        return x->mp > y->mp ? -1 : 1;
    if (ra->b[i] != ra->b[j])
        return ra->b[i] > ra->b[j] ? -1 : 1;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->draw < y->draw ? -1 : (x->draw > y->draw ? 1 : 0);
}

void match_swiss_rank(const match_stage_t *st, uint32_t *idx, uint32_t n)
{
    int64_t *b = xmalloc(((size_t)st->n + 1) * sizeof *b);
    buchholz_all(st, b);
    rank_arg_t ra = {st, b};
    qsort_r(idx, n, sizeof *idx, cmp_rank, &ra);
    free(b);
}

int match_swiss_seat_round(match_stage_t *st, tour_rng_fn rng, void *rng_arg,
                           match_new_table_t *tables, size_t cap, size_t *ntables, uint64_t *byes,
                           size_t byes_cap, size_t *nbyes)
{
    const uint32_t seats = st->cfg.seats;
    if (st->cfg.format != MATCH_SWISS || st->over || st->playing_tables > 0 ||
        st->round >= st->cfg.rounds || st->remaining < seats)
        return -EINVAL;
    uint32_t m = st->remaining, r = m % seats, nt = m / seats;
    if (cap < nt || byes_cap < r)
        return -ENOSPC;
    uint32_t *rank = xmalloc((size_t)m * sizeof *rank), k = 0;
    for (uint32_t i = 0; i < st->n; i++)
        if (st->players[i].state != MATCH_OUT)
            rank[k++] = i;
    match_swiss_rank(st, rank, m);
    uint32_t *h = &st->hist[(size_t)st->round * st->n];
    for (uint32_t i = 0; i < st->n; i++)
        h[i] = MATCH_NONE;
    /* Byes: from the bottom, those with the fewest byes first. */
    bool *bye = xcalloc((size_t)m + 1, sizeof *bye);
    uint32_t given = 0, minb = UINT32_MAX;
    for (uint32_t j = 0; j < m; j++)
        if (st->players[rank[j]].byes < minb)
            minb = st->players[rank[j]].byes;
    for (uint32_t level = minb; given < r; level++)
        for (uint32_t j = m; j-- > 0 && given < r;)
            if (!bye[j] && st->players[rank[j]].byes == level) {
                bye[j] = true;
                given++;
            }
    st->round++;
    size_t nb = 0;
    for (uint32_t j = 0; j < m; j++) {
        if (!bye[j])
            continue;
        match_player_t *p = &st->players[rank[j]];
        p->byes++;
        p->mp += st->cfg.mp_bye;
        p->round_score = 0;
        p->round_absent = false;
        byes[nb++] = p->id;
    }
    /* The others in ranking order: table ceil(rank / seats), seats in rank order. */
    uint32_t pos = 0;
    for (uint32_t j = 0; j < m; j++) {
        if (bye[j])
            continue;
        uint32_t t = pos / seats, s = pos % seats;
        pos++;
        match_table_t *tb = &st->tables[t];
        if (s == 0) {
            memset(tb, 0, sizeof *tb);
            tb->active = true;
            tb->base = st->cfg.base_score;
            memset(&tables[t], 0, sizeof tables[t]);
            tables[t].table = t + 1;
            tables[t].base = tb->base;
        }
        match_player_t *p = &st->players[rank[j]];
        tb->seat[s] = rank[j];
        p->state = MATCH_PLAYING;
        p->table = t + 1;
        p->seat = s;
        p->round_score = 0;
        p->round_absent = false;
        tables[t].player[s] = p->id;
        h[rank[j]] = (t + 1) * MATCH_MAX_SEATS + s;
    }
    st->playing_tables = nt;
    if (st->cfg.duplicate)
        st->round_seed = rng(rng_arg);
    free(bye);
    free(rank);
    *ntables = nt;
    *nbyes = nb;
    return 0;
}

int match_swiss_set_round_absent(match_stage_t *st, uint64_t id)
{
    int64_t i = match_stage_find(st, id);
    if (i < 0 || st->cfg.format != MATCH_SWISS || st->players[i].state != MATCH_PLAYING)
        return -EINVAL;
    st->players[i].round_absent = true;
    return 0;
}

/* Every round is over: after the last, the stage is; with advance, the rest go out. */
static void end_round(match_stage_t *st)
{
    if (st->round < st->cfg.rounds)
        return;
    st->over = true;
    if (st->cfg.advance == 0 || st->cfg.advance >= st->remaining)
        goto absent;
    uint32_t m = st->remaining, k = 0;
    uint32_t *rank = xmalloc((size_t)m * sizeof *rank);
    for (uint32_t i = 0; i < st->n; i++)
        if (st->players[i].state != MATCH_OUT)
            rank[k++] = i;
    match_swiss_rank(st, rank, m);
    /* One event per player, worst first, so the standings keep the Swiss order. */
    for (uint32_t j = m; j-- > st->cfg.advance;)
        match_stage_put_out(st, rank[j], ++st->events);
    free(rank);
absent:
    if (st->cfg.advance == 0 || !st->cfg.absent_out)
        return;
    uint32_t ev = 0;
    for (uint32_t i = 0; i < st->n; i++)
        if (st->players[i].state != MATCH_OUT && st->players[i].absent) {
            if (ev == 0)
                ev = ++st->events;
            match_stage_put_out(st, i, ev);
        }
}

int match_swiss_deal_end(match_stage_t *st, uint32_t table, uint32_t deal, const int64_t *res,
                         bool *round_over)
{
    bool done = false;
    *round_over = false;
    if (st->cfg.format != MATCH_SWISS)
        return -EINVAL;
    int rc = match_stage_round_deal(st, table, deal, res, &done);
    if (rc != 0)
        return rc;
    if (done) {
        const match_table_t *tb = &st->tables[table - 1];
        for (uint32_t s = 0; s < st->cfg.seats; s++) {
            match_player_t *p = &st->players[tb->seat[s]];
            if (p->round_absent)
                p->mp += st->cfg.mp_absent;
            else if (p->round_score > 0)
                p->mp += st->cfg.mp_win;
            else if (p->round_score == 0)
                p->mp += st->cfg.mp_draw;
            else
                p->mp += st->cfg.mp_loss;
        }
    }
    if (done && st->playing_tables == 0) {
        end_round(st);
        *round_over = true;
    }
    return 0;
}
