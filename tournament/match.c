/*
 * match -- the state the stage formats share, deal results, carry-over, standings and prizes
 * (see match.h and docs/rules/match-halls.md).
 */
#include "match.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match_fixed.h"
#include "match_swiss.h"
#include "tour_payout.h"
#include "xmalloc.h"

typedef unsigned __int128 u128;

match_stage_config_t match_stage_config_default(match_format_t format, uint32_t seats)
{
    match_stage_config_t c = {
        .format = format,
        .seats = seats,
        .start_score = format == MATCH_RISING ? 1000 : 0,
        .teams = seats == 4,
        .base_score = format == MATCH_RISING ? 10 : 1,
        .growth_pct = 20,
        .growth_ms = 60000,
        .out_pct = 2000,
        .advance = 0,
        .deals_per_round = format == MATCH_SWISS ? 6 : 3,
        .seconds_pct = 50,
        .rounds = 3,
        .mp_win = 3,
        .mp_draw = 2,
        .mp_loss = 1,
        .mp_absent = 0,
        .mp_bye = 3,
        .duplicate = false,
        .absent_out = true,
        .carry_sqrt_permille = 10000,
        .carry_neg_permille = 1000,
    };
    return c;
}

static int cfail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int cfail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

int match_stage_config_check(const match_stage_config_t *c, char *err, size_t errlen)
{
    if (c->format != MATCH_RISING && c->format != MATCH_FIXED && c->format != MATCH_SWISS)
        return cfail(err, errlen, "format: must be rising, fixed or swiss");
    if (c->seats < MATCH_MIN_SEATS || c->seats > MATCH_MAX_SEATS)
        return cfail(err, errlen, "seats: %u is outside %d..%d", c->seats, MATCH_MIN_SEATS,
                     MATCH_MAX_SEATS);
    if (c->teams && c->seats != 4)
        return cfail(err, errlen, "teams: partnerships need 4 seats");
    if (c->start_score < -MATCH_MAX_SCORE || c->start_score > MATCH_MAX_SCORE)
        return cfail(err, errlen, "start_score: must be within -2^40..2^40");
    if (c->base_score < 1 || c->base_score > MATCH_MAX_SCORE)
        return cfail(err, errlen, "base_score: must be 1..2^40");
    if (c->growth_pct > 1000)
        return cfail(err, errlen, "growth_pct: must be 0..1000");
    if (c->growth_ms < 1 || c->growth_ms > MATCH_MAX_SCORE)
        return cfail(err, errlen, "growth_ms: must be 1..2^40");
    if (c->out_pct > 100000)
        return cfail(err, errlen, "out_pct: must be 0..100000");
    if (c->format == MATCH_RISING && (c->advance < c->seats || c->advance > MATCH_MAX_PLAYERS))
        return cfail(err, errlen, "advance: a rising stage needs seats..%d players going on",
                     MATCH_MAX_PLAYERS);
    if (c->format == MATCH_FIXED && c->advance != 0)
        return cfail(err, errlen, "advance: a fixed stage ends the match (0)");
    if (c->advance > MATCH_MAX_PLAYERS)
        return cfail(err, errlen, "advance: above %d", MATCH_MAX_PLAYERS);
    if (c->deals_per_round < 1 || c->deals_per_round > MATCH_MAX_DEALS)
        return cfail(err, errlen, "deals_per_round: must be 1..%d", MATCH_MAX_DEALS);
    if (c->seconds_pct > 100)
        return cfail(err, errlen, "seconds_pct: must be 0..100");
    if (c->rounds < 1 || c->rounds > MATCH_MAX_ROUNDS)
        return cfail(err, errlen, "rounds: must be 1..%d", MATCH_MAX_ROUNDS);
    const int32_t mp[5] = {c->mp_win, c->mp_draw, c->mp_loss, c->mp_absent, c->mp_bye};
    for (int k = 0; k < 5; k++)
        if (mp[k] < 0 || mp[k] > 100)
            return cfail(err, errlen, "mp_*: match points must be 0..100");
    if (c->carry_sqrt_permille > 1000000 || c->carry_neg_permille > 1000000)
        return cfail(err, errlen, "carry_*_permille: must be 0..1000000");
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    const match_player_t *x = a, *y = b;
    return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

int match_stage_create(const match_stage_config_t *cfg, const uint64_t *ids, const int64_t *scores,
                       uint32_t n, tour_rng_fn rng, void *rng_arg, match_stage_t **out)
{
    if (match_stage_config_check(cfg, NULL, 0) != 0 || n == 0 || n > MATCH_MAX_PLAYERS)
        return -EINVAL;
    if (cfg->format == MATCH_FIXED && n % cfg->seats != 0)
        return -EINVAL;
    if (cfg->format != MATCH_RISING && n < cfg->seats)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] == 0 ||
            (scores != NULL && (scores[i] < -MATCH_MAX_SCORE || scores[i] > MATCH_MAX_SCORE)))
            return -EINVAL;
    match_stage_t *st = xcalloc(1, sizeof *st);
    st->cfg = *cfg;
    st->n = n;
    st->players = xcalloc(n, sizeof *st->players);
    for (uint32_t i = 0; i < n; i++) {
        match_player_t *p = &st->players[i];
        p->id = ids[i];
        p->score = p->prev_score = scores != NULL ? scores[i] : cfg->start_score;
        p->state = MATCH_WAITING;
    }
    qsort(st->players, n, sizeof *st->players, cmp_id);
    for (uint32_t i = 1; i < n; i++)
        if (st->players[i].id == st->players[i - 1].id) {
            match_stage_destroy(st);
            return -EINVAL;
        }
    /* Draw numbers, drawn again until distinct (a clash among 64-bit numbers is rare). */
    uint64_t *d = xmalloc(n * sizeof *d);
    for (;;) {
        for (uint32_t i = 0; i < n; i++)
            d[i] = st->players[i].draw = rng(rng_arg);
        qsort(d, n, sizeof *d, cmp_u64);
        uint32_t i = 1;
        while (i < n && d[i] != d[i - 1])
            i++;
        if (i >= n)
            break;
    }
    free(d);
    st->ntables = n / cfg->seats + 1;
    st->tables = xcalloc(st->ntables, sizeof *st->tables);
    st->queue = xcalloc(n, sizeof *st->queue);
    st->next_deal = 1;
    st->remaining = n;
    if (cfg->format == MATCH_RISING) {
        /* Everyone begins waiting at the first moment, in index order (the pairing draws). */
        st->moments = 1;
        for (uint32_t i = 0; i < n; i++) {
            st->queue[i] = i;
            st->players[i].wait_since = 1;
        }
        st->nqueue = n;
    }
    if (cfg->format == MATCH_SWISS)
        st->hist = xcalloc((size_t)cfg->rounds * n, sizeof *st->hist);
    *out = st;
    return 0;
}

void match_stage_destroy(match_stage_t *st)
{
    if (st == NULL)
        return;
    free(st->players);
    free(st->tables);
    free(st->queue);
    free(st->hist);
    free(st);
}

int match_stage_next(const match_stage_t *done, const match_stage_config_t *cfg, tour_rng_fn rng,
                     void *rng_arg, match_stage_t **out)
{
    if (!done->over || done->remaining == 0)
        return -EINVAL;
    uint64_t *ids = xmalloc((size_t)done->remaining * sizeof *ids);
    int64_t *sc = xmalloc((size_t)done->remaining * sizeof *sc);
    uint32_t m = 0;
    for (uint32_t i = 0; i < done->n; i++) {
        const match_player_t *p = &done->players[i];
        if (p->state == MATCH_OUT)
            continue;
        ids[m] = p->id;
        sc[m++] =
            match_carry(p->score, done->cfg.carry_sqrt_permille, done->cfg.carry_neg_permille);
    }
    int rc = match_stage_create(cfg, ids, sc, m, rng, rng_arg, out);
    free(ids);
    free(sc);
    return rc;
}

int64_t match_stage_find(const match_stage_t *st, uint64_t id)
{
    uint32_t lo = 0, hi = st->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (st->players[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->n && st->players[lo].id == id ? (int64_t)lo : -1;
}

int match_stage_set_absent(match_stage_t *st, uint64_t id, bool absent)
{
    int64_t i = match_stage_find(st, id);
    if (i < 0)
        return -EINVAL;
    st->players[i].absent = absent;
    return 0;
}

void match_stage_put_out(match_stage_t *st, uint32_t i, uint32_t ev)
{
    match_player_t *p = &st->players[i];
    if (p->state == MATCH_OUT)
        return;
    p->state = MATCH_OUT;
    p->table = 0;
    p->seat = 0;
    p->out_event = ev;
    st->remaining--;
}

int match_result_doudizhu(uint32_t landlord, bool landlord_won, int64_t units, int64_t out[3])
{
    if (landlord > 2 || units < 1 || units > MATCH_MAX_RESULT / 2)
        return -EINVAL;
    for (uint32_t s = 0; s < 3; s++)
        out[s] = s == landlord ? (landlord_won ? 2 * units : -2 * units)
                               : (landlord_won ? -units : units);
    return 0;
}

int match_result_guandan(const uint32_t order[4], int64_t out[4])
{
    bool seen[4] = {false, false, false, false};
    for (int k = 0; k < 4; k++) {
        if (order[k] > 3 || seen[order[k]])
            return -EINVAL;
        seen[order[k]] = true;
    }
    uint32_t first = order[0], partner = (first + 2) % 4;
    int64_t levels = 0;
    for (int k = 1; k < 4; k++)
        if (order[k] == partner)
            levels = 4 - k; /* second: 3, third: 2, last: 1 */
    for (uint32_t s = 0; s < 4; s++)
        out[s] = (s % 2 == first % 2) ? levels : -levels;
    return 0;
}

int match_result_check(const int64_t *res, uint32_t n, bool teams)
{
    int64_t sum = 0;
    for (uint32_t s = 0; s < n; s++) {
        if (res[s] < -MATCH_MAX_RESULT || res[s] > MATCH_MAX_RESULT)
            return -EINVAL;
        sum += res[s];
    }
    if (sum != 0)
        return -EINVAL;
    if (teams && (n != 4 || res[0] != res[2] || res[1] != res[3]))
        return -EINVAL;
    return 0;
}

/* floor(sqrt(x)) for a 128-bit x: Newton's iteration from above, which decreases to it. */
static u128 isqrt128(u128 x)
{
    if (x < 2)
        return x;
    u128 r = (u128)1 << ((128 - __builtin_clzll((uint64_t)(x >> 64) | 1)) / 2 + 1);
    if ((x >> 64) == 0)
        r = (u128)1 << ((64 - __builtin_clzll((uint64_t)x)) / 2 + 1);
    for (;;) {
        u128 y = (r + x / r) / 2;
        if (y >= r)
            return r;
        r = y;
    }
}

int64_t match_carry(int64_t s, uint32_t sqrt_permille, uint32_t neg_permille)
{
    int64_t v;
    if (s > 0) {
        u128 k = sqrt_permille;
        v = (int64_t)(isqrt128((u128)s * k * k) / 1000);
    } else if (s < 0) {
        /* |s| <= 2^40 and the per mille <= 10^6: the product fits in int64_t. */
        v = -(int64_t)(((uint64_t)(-s) * neg_permille) / 1000);
    } else {
        v = 0;
    }
    if (v > MATCH_MAX_SCORE)
        v = MATCH_MAX_SCORE;
    if (v < -MATCH_MAX_SCORE)
        v = -MATCH_MAX_SCORE;
    return v;
}

int match_cmp_score_draw(const void *a, const void *b, void *arg)
{
    const match_stage_t *st = arg;
    const match_player_t *x = &st->players[*(const uint32_t *)a];
    const match_player_t *y = &st->players[*(const uint32_t *)b];
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->draw < y->draw ? -1 : (x->draw > y->draw ? 1 : 0);
}

/* The players out: later event first, then the higher score, then the draw (for a stable
 * listing; the draw does not split a tie). */
static int cmp_out(const void *a, const void *b, void *arg)
{
    const match_stage_t *st = arg;
    const match_player_t *x = &st->players[*(const uint32_t *)a];
    const match_player_t *y = &st->players[*(const uint32_t *)b];
    if (x->out_event != y->out_event)
        return x->out_event > y->out_event ? -1 : 1;
    return match_cmp_score_draw(a, b, arg);
}

int match_stage_standings(const match_stage_t *st, uint32_t first_place, bool only_out,
                          match_standing_t *out, size_t cap, size_t *nout)
{
    uint32_t nin = 0, nout_ = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        if (st->players[i].state == MATCH_OUT)
            nout_++;
        else
            nin++;
    }
    size_t want = (size_t)nout_ + (only_out ? 0 : nin);
    if (want > cap)
        return -ENOSPC;
    uint32_t *idx = xmalloc(((size_t)st->n + 1) * sizeof *idx);
    uint32_t *in = idx, *gone = idx + nin;
    uint32_t a = 0, b = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        if (st->players[i].state == MATCH_OUT)
            gone[b++] = i;
        else
            in[a++] = i;
    }
    if (st->cfg.format == MATCH_SWISS)
        match_swiss_rank(st, in, nin);
    else if (st->cfg.format == MATCH_FIXED)
        qsort_r(in, nin, sizeof *in, match_fixed_cmp, (void *)st);
    else
        qsort_r(in, nin, sizeof *in, match_cmp_score_draw, (void *)st);
    qsort_r(gone, nout_, sizeof *gone, cmp_out, (void *)st);
    size_t k = 0;
    uint32_t place = first_place;
    if (!only_out)
        for (uint32_t j = 0; j < nin; j++, place++) {
            const match_player_t *p = &st->players[in[j]];
            out[k++] = (match_standing_t){p->id, place, p->score, p->draw, false};
        }
    else
        place = first_place;
    for (uint32_t j = 0; j < nout_; j++, place++) {
        const match_player_t *p = &st->players[gone[j]];
        uint32_t shown = place;
        if (j > 0) {
            const match_player_t *q = &st->players[gone[j - 1]];
            if (q->out_event == p->out_event && q->score == p->score)
                shown = out[k - 1].place;
        }
        out[k++] = (match_standing_t){p->id, shown, p->score, p->draw, true};
    }
    free(idx);
    *nout = k;
    return 0;
}

int match_standings(const match_stage_t *const *stages, size_t nstages, match_standing_t *out,
                    size_t cap, size_t *nout)
{
    if (nstages == 0)
        return -EINVAL;
    size_t k = 0, got;
    uint32_t place = 1;
    for (size_t s = nstages; s-- > 0;) {
        int rc = match_stage_standings(stages[s], place, s + 1 < nstages, out + k, cap - k, &got);
        if (rc != 0)
            return rc;
        k += got;
        place = 1 + (uint32_t)k;
    }
    *nout = k;
    return 0;
}

int match_prizes(const int64_t *prizes, size_t nplaces, const match_standing_t *standings, size_t n,
                 match_award_t *out)
{
    if (n == 0)
        return 0;
    tour_bust_t *group = xmalloc(n * sizeof *group);
    tour_award_t *aw = xmalloc(n * sizeof *aw);
    int rc = 0;
    uint32_t expect = standings[0].place;
    size_t i = 0;
    while (i < n && rc == 0) {
        size_t j = i;
        while (j < n && standings[j].place == standings[i].place)
            j++;
        if (standings[i].place != expect || standings[i].place == 0) {
            rc = -EINVAL;
            break;
        }
        for (size_t k = i; k < j; k++)
            group[k - i] = (tour_bust_t){standings[k].player, 1, standings[k].draw};
        rc = tour_payout_busts(prizes, nplaces, standings[i].place, group, j - i, aw);
        for (size_t k = 0; rc == 0 && k < j - i; k++) {
            /* tour_payout_busts lists the group in its order: match each award to its line. */
            for (size_t m = i; m < j; m++)
                if (standings[m].player == aw[k].player)
                    out[m] = (match_award_t){aw[k].player, aw[k].place, aw[k].amount};
        }
        expect += (uint32_t)(j - i);
        i = j;
    }
    free(group);
    free(aw);
    return rc;
}

int match_stage_round_deal(match_stage_t *st, uint32_t table, uint32_t deal, const int64_t *res,
                           bool *table_done)
{
    if (table == 0 || table > st->ntables || !st->tables[table - 1].active)
        return -ESTALE;
    match_table_t *tb = &st->tables[table - 1];
    if (deal != tb->deals_done + 1)
        return -ESTALE;
    if (match_result_check(res, st->cfg.seats, st->cfg.teams) != 0)
        return -EINVAL;
    for (uint32_t s = 0; s < st->cfg.seats; s++) {
        match_player_t *p = &st->players[tb->seat[s]];
        int64_t d = res[s] * tb->base;
        p->prev_score = p->score;
        p->score += d;
        p->round_score += d;
        if (p->round_score > MATCH_MAX_SCORE)
            p->round_score = MATCH_MAX_SCORE;
        if (p->round_score < -MATCH_MAX_SCORE)
            p->round_score = -MATCH_MAX_SCORE;
        if (p->score > MATCH_MAX_SCORE)
            p->score = MATCH_MAX_SCORE;
        if (p->score < -MATCH_MAX_SCORE)
            p->score = -MATCH_MAX_SCORE;
        p->deals++;
    }
    tb->deals_done++;
    *table_done = tb->deals_done >= st->cfg.deals_per_round;
    if (*table_done) {
        tb->active = false;
        st->playing_tables--;
        for (uint32_t s = 0; s < st->cfg.seats; s++) {
            match_player_t *p = &st->players[tb->seat[s]];
            p->state = MATCH_WAITING;
            p->table = 0;
            p->seat = 0;
        }
    }
    return 0;
}
