/*
 * match_fixed -- 定局积分 (see match_fixed.h and docs/rules/match-halls.md "定局积分").
 */
#include "match_fixed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

uint32_t match_fixed_seconds(uint32_t tables, uint32_t seats, uint32_t pct)
{
    uint32_t best = MATCH_NONE;
    uint64_t best_dist = UINT64_MAX;
    for (uint32_t s = 0; s <= tables; s++) {
        if ((tables + s) % seats != 0)
            continue;
        /* |s - T x pct / 100| in hundredths. */
        int64_t d = (int64_t)s * 100 - (int64_t)tables * pct;
        uint64_t dist = (uint64_t)(d < 0 ? -d : d);
        if (dist < best_dist) {
            best_dist = dist;
            best = s;
        }
    }
    return best == MATCH_NONE ? 0 : best;
}

int match_fixed_cmp(const void *a, const void *b, void *arg)
{
    const match_stage_t *st = arg;
    const match_player_t *x = &st->players[*(const uint32_t *)a];
    const match_player_t *y = &st->players[*(const uint32_t *)b];
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->round_score != y->round_score)
        return x->round_score > y->round_score ? -1 : 1;
    return x->draw < y->draw ? -1 : (x->draw > y->draw ? 1 : 0);
}

int match_fixed_seat_round(match_stage_t *st, tour_rng_fn rng, void *rng_arg,
                           match_new_table_t *tables, size_t cap, size_t *ntables)
{
    const uint32_t seats = st->cfg.seats;
    if (st->cfg.format != MATCH_FIXED || st->over || st->playing_tables > 0 ||
        st->remaining % seats != 0 || st->remaining == 0)
        return -EINVAL;
    uint32_t nt = st->remaining / seats;
    if (cap < nt)
        return -ENOSPC;
    uint32_t *p = xmalloc((size_t)st->remaining * sizeof *p), m = 0;
    for (uint32_t i = 0; i < st->n; i++)
        if (st->players[i].state != MATCH_OUT)
            p[m++] = i;
    for (uint32_t j = m - 1; j > 0; j--) {
        uint32_t r = (uint32_t)tour_rng_below(rng, rng_arg, (uint64_t)j + 1);
        uint32_t x = p[j];
        p[j] = p[r];
        p[r] = x;
    }
    st->round++;
    for (uint32_t t = 0; t < nt; t++) {
        match_table_t *tb = &st->tables[t];
        memset(tb, 0, sizeof *tb);
        tb->active = true;
        tb->base = st->cfg.base_score;
        match_new_table_t *o = &tables[t];
        memset(o, 0, sizeof *o);
        o->table = t + 1;
        o->base = tb->base;
        for (uint32_t s = 0; s < seats; s++) {
            match_player_t *pl = &st->players[p[t * seats + s]];
            tb->seat[s] = p[t * seats + s];
            pl->state = MATCH_PLAYING;
            pl->table = t + 1;
            pl->seat = s;
            pl->round_score = 0;
            pl->round_place = 0;
            o->player[s] = pl->id;
        }
    }
    st->playing_tables = nt;
    free(p);
    *ntables = nt;
    return 0;
}

/* A table played its round: its players' places (the order of this format). */
static void table_places(match_stage_t *st, const match_table_t *tb)
{
    uint32_t order[MATCH_MAX_SEATS];
    memcpy(order, tb->seat, st->cfg.seats * sizeof *order);
    qsort_r(order, st->cfg.seats, sizeof *order, match_fixed_cmp, st);
    for (uint32_t k = 0; k < st->cfg.seats; k++)
        st->players[order[k]].round_place = k + 1;
}

/* The round is over at every table: the advancement (docs/rules/match-halls.md "定局积分"). */
static void end_round(match_stage_t *st, uint64_t *gone, size_t *ngone)
{
    const uint32_t seats = st->cfg.seats;
    uint32_t nt = st->remaining / seats;
    if (nt <= 1) {
        st->over = true; /* the final round: everyone ranked by match_fixed_cmp */
        return;
    }
    /* Places seats..3 out, the lowest place first (the earlier event ranks lower). */
    for (uint32_t pl = seats; pl >= 3; pl--) {
        uint32_t ev = ++st->events;
        for (uint32_t i = 0; i < st->n; i++)
            if (st->players[i].state != MATCH_OUT && st->players[i].round_place == pl) {
                match_stage_put_out(st, i, ev);
                if (gone != NULL)
                    gone[(*ngone)++] = st->players[i].id;
            }
    }
    /* The seconds: the best s advance, the others are out in one event above the thirds. */
    uint32_t *sec = xmalloc((size_t)st->n * sizeof *sec), ns = 0;
    for (uint32_t i = 0; i < st->n; i++)
        if (st->players[i].state != MATCH_OUT && st->players[i].round_place == 2)
            sec[ns++] = i;
    qsort_r(sec, ns, sizeof *sec, match_fixed_cmp, st);
    uint32_t s = match_fixed_seconds(nt, seats, st->cfg.seconds_pct);
    if (s < ns) {
        uint32_t ev = ++st->events;
        for (uint32_t j = s; j < ns; j++) {
            match_stage_put_out(st, sec[j], ev);
            if (gone != NULL)
                gone[(*ngone)++] = st->players[sec[j]].id;
        }
    }
    free(sec);
}

int match_fixed_deal_end(match_stage_t *st, uint32_t table, uint32_t deal, const int64_t *res,
                         bool *round_over, uint64_t *gone, size_t *ngone)
{
    size_t ng = 0;
    bool done = false;
    *round_over = false;
    if (st->cfg.format != MATCH_FIXED)
        return -EINVAL;
    int rc = match_stage_round_deal(st, table, deal, res, &done);
    if (rc != 0)
        return rc;
    if (done)
        table_places(st, &st->tables[table - 1]);
    if (done && st->playing_tables == 0) {
        end_round(st, gone, &ng);
        *round_over = true;
    }
    if (ngone != NULL)
        *ngone = ng;
    return 0;
}
