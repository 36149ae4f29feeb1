/*
 * match_rising -- 打立出局 (see match_rising.h and docs/rules/match-halls.md "打立出局").
 */
#include "match_rising.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

int64_t match_rising_base_at(const match_stage_config_t *c, int64_t t_ms)
{
    if (t_ms < 0)
        t_ms = 0;
    int64_t steps = t_ms / c->growth_ms;
    int64_t b = c->base_score;
    /* b(k) = b(k-1) + ceil(b(k-1) x g / 100): at least +1 per step while g > 0, so the loop
     * reaches the cap within a few thousand steps at worst and stops there. */
    for (int64_t k = 0; k < steps && c->growth_pct > 0 && b < MATCH_MAX_SCORE; k++) {
        b += (b * (int64_t)c->growth_pct + 99) / 100;
        if (b > MATCH_MAX_SCORE)
            b = MATCH_MAX_SCORE;
    }
    return b;
}

int64_t match_rising_line_at(const match_stage_config_t *c, int64_t t_ms)
{
    /* b <= 2^40 and p <= 10^5: the product fits. */
    return match_rising_base_at(c, t_ms) * (int64_t)c->out_pct / 100;
}

/* Worst first at the cut: lower score, then lower score before the deal, then the higher draw
 * number (docs/rules/match-halls.md "The cut at N"). */
static int cmp_worst(const void *a, const void *b, void *arg)
{
    const match_stage_t *st = arg;
    const match_player_t *x = &st->players[*(const uint32_t *)a];
    const match_player_t *y = &st->players[*(const uint32_t *)b];
    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    if (x->prev_score != y->prev_score)
        return x->prev_score < y->prev_score ? -1 : 1;
    return x->draw > y->draw ? -1 : (x->draw < y->draw ? 1 : 0);
}

/*
 * One elimination event over the k candidates (players below the line at one moment): all go
 * out unless that leaves fewer than N, then the worst go out until N remain and the stage is
 * finishing. Writes the ids out to gone (may be NULL) from *ngone on.
 */
static void cut(match_stage_t *st, uint32_t *cand, uint32_t k, uint64_t *gone, size_t *ngone)
{
    uint32_t n_out = k;
    if (k == 0)
        return;
    if (st->remaining - k < st->cfg.advance) {
        n_out = st->remaining > st->cfg.advance ? st->remaining - st->cfg.advance : 0;
        qsort_r(cand, k, sizeof *cand, cmp_worst, st);
        st->finishing = true;
    }
    if (n_out == 0)
        return;
    uint32_t ev = ++st->events;
    for (uint32_t j = 0; j < n_out; j++) {
        match_stage_put_out(st, cand[j], ev);
        if (gone != NULL)
            gone[(*ngone)++] = st->players[cand[j]].id;
    }
}

/* The end of the stage once finishing with no deal in play: the absent go out (absent_out;
 * not listed in gone[]: the standings show them). */
static void maybe_over(match_stage_t *st)
{
    if (st->remaining <= st->cfg.advance)
        st->finishing = true;
    if (!st->finishing || st->playing_tables > 0 || st->over)
        return;
    st->over = true;
    if (!st->cfg.absent_out)
        return;
    uint32_t ev = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        match_player_t *p = &st->players[i];
        if (p->state != MATCH_OUT && p->absent) {
            if (ev == 0)
                ev = ++st->events;
            match_stage_put_out(st, i, ev);
        }
    }
    /* Those out are no longer waiting. */
    uint32_t w = 0;
    for (uint32_t j = 0; j < st->nqueue; j++)
        if (st->players[st->queue[j]].state != MATCH_OUT)
            st->queue[w++] = st->queue[j];
    st->nqueue = w;
}

static uint32_t free_table(match_stage_t *st)
{
    for (uint32_t k = 0; k < st->ntables; k++) {
        uint32_t t = (st->_table_hint + k) % st->ntables;
        if (!st->tables[t].active) {
            st->_table_hint = (t + 1) % st->ntables;
            return t;
        }
    }
    return MATCH_NONE; /* never: ntables > n / seats */
}

int match_rising_pair(match_stage_t *st, int64_t now_ms, tour_rng_fn rng, void *rng_arg,
                      match_new_table_t *tables, size_t tables_cap, size_t *ntables, uint64_t *gone,
                      size_t gone_cap, size_t *ngone)
{
    size_t nt = 0, ng = 0;
    if (st->cfg.format != MATCH_RISING || st->over)
        return -EINVAL;
    const uint32_t seats = st->cfg.seats;
    if (tables_cap < st->nqueue / seats || (gone != NULL && gone_cap < st->nqueue))
        return -ENOSPC;
    if (st->remaining <= st->cfg.advance)
        st->finishing = true;
    /* The waiting below the line go out (one event), unless the stage is finishing. */
    if (!st->finishing) {
        int64_t line = match_rising_line_at(&st->cfg, now_ms);
        uint32_t k = 0;
        uint32_t *cand = xmalloc(((size_t)st->nqueue + 1) * sizeof *cand);
        for (uint32_t j = 0; j < st->nqueue; j++)
            if (st->players[st->queue[j]].score < line)
                cand[k++] = st->queue[j];
        uint32_t before = st->remaining;
        cut(st, cand, k, gone, &ng);
        free(cand);
        if (st->remaining != before) {
            uint32_t w = 0;
            for (uint32_t j = 0; j < st->nqueue; j++)
                if (st->players[st->queue[j]].state != MATCH_OUT)
                    st->queue[w++] = st->queue[j];
            st->nqueue = w;
        }
    }
    if (st->remaining <= st->cfg.advance)
        st->finishing = true;
    if (st->finishing) {
        maybe_over(st);
        goto done;
    }
    /* The players present, in waiting order; the longest waiting are seated first, and among
     * those who began waiting at the same moment as the last one needed, a random draw. */
    uint32_t eligible = 0;
    for (uint32_t j = 0; j < st->nqueue; j++)
        eligible += !st->players[st->queue[j]].absent;
    uint32_t k = eligible / seats, need = k * seats;
    if (k == 0)
        goto done;
    uint32_t *pick = xmalloc(((size_t)need + 1) * sizeof *pick);
    uint32_t *tie = xmalloc(((size_t)st->nqueue + 1) * sizeof *tie);
    uint32_t np = 0, ntie = 0;
    uint64_t boundary = 0;
    for (uint32_t j = 0, seen = 0; j < st->nqueue; j++) {
        const match_player_t *p = &st->players[st->queue[j]];
        if (p->absent)
            continue;
        if (++seen == need) {
            boundary = p->wait_since;
            break;
        }
    }
    for (uint32_t j = 0; j < st->nqueue; j++) {
        uint32_t i = st->queue[j];
        const match_player_t *p = &st->players[i];
        if (p->absent)
            continue;
        if (p->wait_since < boundary)
            pick[np++] = i;
        else if (p->wait_since == boundary)
            tie[ntie++] = i;
    }
    /* need - np of the tied, drawn: a partial Fisher-Yates shuffle. */
    for (uint32_t j = 0; np < need; j++) {
        uint32_t r = j + (uint32_t)tour_rng_below(rng, rng_arg, ntie - j);
        uint32_t x = tie[j];
        tie[j] = tie[r];
        tie[r] = x;
        pick[np++] = tie[j];
    }
    free(tie);
    /* Seats drawn at random: shuffle the players picked, then fill the tables in order. */
    for (uint32_t j = need - 1; j > 0; j--) {
        uint32_t r = (uint32_t)tour_rng_below(rng, rng_arg, (uint64_t)j + 1);
        uint32_t x = pick[j];
        pick[j] = pick[r];
        pick[r] = x;
    }
    int64_t base = match_rising_base_at(&st->cfg, now_ms);
    for (uint32_t t = 0; t < k; t++) {
        uint32_t slot = free_table(st);
        match_table_t *tb = &st->tables[slot];
        memset(tb, 0, sizeof *tb);
        tb->active = true;
        tb->deal = st->next_deal++;
        tb->base = base;
        match_new_table_t *o = &tables[nt++];
        memset(o, 0, sizeof *o);
        o->table = slot + 1;
        o->deal = tb->deal;
        o->base = base;
        for (uint32_t s = 0; s < seats; s++) {
            uint32_t i = pick[t * seats + s];
            match_player_t *p = &st->players[i];
            tb->seat[s] = i;
            p->state = MATCH_PLAYING;
            p->table = slot + 1;
            p->seat = s;
            o->player[s] = p->id;
        }
        st->playing_tables++;
    }
    free(pick);
    uint32_t w = 0;
    for (uint32_t j = 0; j < st->nqueue; j++)
        if (st->players[st->queue[j]].state == MATCH_WAITING)
            st->queue[w++] = st->queue[j];
    st->nqueue = w;
done:
    if (ntables != NULL)
        *ntables = nt;
    if (ngone != NULL)
        *ngone = ng;
    return 0;
}

static match_table_t *table_in_play(match_stage_t *st, uint32_t table, uint64_t deal)
{
    if (table == 0 || table > st->ntables)
        return NULL;
    match_table_t *tb = &st->tables[table - 1];
    return tb->active && tb->deal == deal ? tb : NULL;
}

int match_rising_deal_end(match_stage_t *st, uint32_t table, uint64_t deal, const int64_t *res,
                          int64_t now_ms, uint64_t *gone, size_t *ngone)
{
    size_t ng = 0;
    if (st->cfg.format != MATCH_RISING)
        return -EINVAL;
    match_table_t *tb = table_in_play(st, table, deal);
    if (tb == NULL)
        return -ESTALE;
    const uint32_t seats = st->cfg.seats;
    if (match_result_check(res, seats, st->cfg.teams) != 0)
        return -EINVAL;
    uint64_t moment = ++st->moments;
    uint32_t cand[MATCH_MAX_SEATS], k = 0;
    int64_t line = match_rising_line_at(&st->cfg, now_ms);
    for (uint32_t s = 0; s < seats; s++) {
        match_player_t *p = &st->players[tb->seat[s]];
        int64_t v = p->score + res[s] * tb->base; /* |res| <= 10^6, base <= 2^40 */
        if (v > MATCH_MAX_SCORE)
            v = MATCH_MAX_SCORE;
        if (v < -MATCH_MAX_SCORE)
            v = -MATCH_MAX_SCORE;
        p->prev_score = p->score;
        p->score = v;
        p->deals++;
        p->state = MATCH_WAITING;
        p->table = 0;
        p->seat = 0;
        p->wait_since = moment;
        if (!st->finishing && v < line)
            cand[k++] = tb->seat[s];
    }
    tb->active = false;
    st->playing_tables--;
    st->_table_hint = table - 1; /* the next table formed takes this one: no search */
    cut(st, cand, k, gone, &ng);
    for (uint32_t s = 0; s < seats; s++)
        if (st->players[tb->seat[s]].state == MATCH_WAITING)
            st->queue[st->nqueue++] = tb->seat[s];
    maybe_over(st);
    if (ngone != NULL)
        *ngone = ng;
    return 0;
}

int match_rising_deal_void(match_stage_t *st, uint32_t table, uint64_t deal, uint64_t *new_deal)
{
    if (st->cfg.format != MATCH_RISING)
        return -EINVAL;
    match_table_t *tb = table_in_play(st, table, deal);
    if (tb == NULL)
        return -ESTALE;
    tb->deal = st->next_deal++;
    *new_deal = tb->deal;
    return 0;
}
