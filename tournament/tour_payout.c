/*
 * tour_payout -- prize pool, payout table, shared places and the cancellation split (see
 * tour_payout.h and docs/tournaments.md, "Payouts").
 */
#include "tour_payout.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

typedef unsigned __int128 u128;

tour_payout_config_t tour_payout_config_default(void)
{
    return (tour_payout_config_t){.percent_paid = 15, .min_paid = 1, .ntiers = 0, .tiers = NULL};
}

bool tour_payout_item_valid(const char *s, size_t len)
{
    if (s == NULL || len == 0 || len > TOUR_ITEM_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == ':' || ch == '-';
        if (!ok)
            return false;
    }
    return true;
}

const char *tour_payout_item(const tour_payout_config_t *c, uint32_t place)
{
    for (size_t i = 0; c != NULL && i < c->nitems; i++)
        if (c->items[i].place == place)
            return c->items[i].item;
    return NULL;
}

int tour_payout_pool(int64_t buy_in, uint32_t entries, int64_t guarantee, int64_t *pool)
{
    if (buy_in < 0 || guarantee < 0)
        return -EINVAL;
    int64_t p;
    if (__builtin_mul_overflow(buy_in, (int64_t)entries, &p))
        return -EOVERFLOW;
    *pool = p < guarantee ? guarantee : p;
    return 0;
}

static const tour_payout_tier_t *tier_for(const tour_payout_config_t *c, uint32_t entrants)
{
    for (size_t i = 0; i < c->ntiers; i++)
        if (entrants >= c->tiers[i].min_entrants && entrants <= c->tiers[i].max_entrants)
            return &c->tiers[i];
    return NULL;
}

uint32_t tour_payout_places(const tour_payout_config_t *c, uint32_t entrants)
{
    if (entrants == 0)
        return 0;
    const tour_payout_tier_t *t = tier_for(c, entrants);
    if (t != NULL)
        return t->nplaces < entrants ? t->nplaces : entrants;
    uint64_t p = ((uint64_t)entrants * c->percent_paid + 99) / 100;
    if (p < c->min_paid)
        p = c->min_paid;
    if (p > entrants)
        p = entrants;
    if (p > TOUR_PAYOUT_MAX_PLACES)
        p = TOUR_PAYOUT_MAX_PLACES;
    if (p == 0)
        p = 1;
    return (uint32_t)p;
}

/* The default curve's weight of place i (1-based): 1 / (i + 1), as the integer
 * 720720 x 2^40 / (i + 1): exact for i + 1 up to 16 (720720 = lcm(1..16)), so small fields
 * split exactly (2 places of 1,000: 600 and 400), and within 2^-40 relative beyond. */
static uint64_t curve_weight(size_t i)
{
    return (UINT64_C(720720) << 40) / (uint64_t)(i + 1);
}

int tour_payout_table(const tour_payout_config_t *c, uint32_t entrants, int64_t pool,
                      int64_t *prizes, size_t cap, size_t *nplaces)
{
    if (pool < 0 || entrants == 0)
        return -EINVAL;
    const tour_payout_tier_t *t = tier_for(c, entrants);
    size_t n = tour_payout_places(c, entrants);
    if (n > cap)
        return -ENOSPC;
    /* A tier paying more places than there are entrants (only possible when its min_entrants
     * is below its nplaces, which the parser refuses) would be cut; the weights of the kept
     * places are then renormalised by the division by total below. */
    u128 total = 0;
    for (size_t i = 0; i < n; i++)
        total += t != NULL ? t->shares_bp[i] : curve_weight(i + 1);
    if (total == 0) /* a hand-built tier of zero shares (the parser refuses those) */
        return -EINVAL;
    int64_t given = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w = t != NULL ? t->shares_bp[i] : curve_weight(i + 1);
        prizes[i] = (int64_t)((u128)(uint64_t)pool * w / total);
        given += prizes[i];
    }
    /* Fewer than n chips are left (each floor loses less than one): one each to the top. */
    for (size_t i = 0; given < pool; i++, given++)
        prizes[i]++;
    *nplaces = n;
    return 0;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

/* Order of busted players: bigger starting stack first, then tiebreak, then player id. */
static int bust_cmp(const void *a, const void *b)
{
    const tour_bust_t *x = *(const tour_bust_t *const *)a, *y = *(const tour_bust_t *const *)b;
    if (x->start_stack != y->start_stack)
        return x->start_stack > y->start_stack ? -1 : 1;
    if (x->tiebreak != y->tiebreak)
        return x->tiebreak < y->tiebreak ? -1 : 1;
    if (x->player != y->player)
        return x->player < y->player ? -1 : 1;
    return 0;
}

int tour_payout_busts(const int64_t *prizes, size_t nplaces, uint32_t best_place,
                      const tour_bust_t *busted, size_t n, tour_award_t *out)
{
    if (n == 0 || best_place == 0 || (uint64_t)best_place + n - 1 > UINT32_MAX)
        return -EINVAL;
    for (size_t i = 0; i < nplaces; i++)
        if (prizes[i] < 0)
            return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (busted[i].start_stack <= 0)
            return -EINVAL;
    /* The prizes of the places taken, summed once with a check: each group's sum is a part
     * of this one and cannot overflow. */
    int64_t range = 0;
    for (size_t k = 0; k < n; k++) {
        size_t place = (size_t)best_place + k;
        if (place - 1 < nplaces && __builtin_add_overflow(range, prizes[place - 1], &range))
            return -EOVERFLOW;
    }
    const tour_bust_t **order = xmalloc(n * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = &busted[i];
    qsort(order, n, sizeof *order, bust_cmp);
    /* A player busted twice in one hand is a caller's bug: refused. */
    int rc = 0;
    uint64_t *ids = xmalloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++)
        ids[i] = busted[i].player;
    qsort(ids, n, sizeof *ids, u64_cmp);
    for (size_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1])
            rc = -EINVAL;
    free(ids);
    if (rc != 0) {
        free(order);
        return rc;
    }
    /* Groups of equal starting stacks share their places' prizes. */
    for (size_t g = 0; g < n;) {
        size_t e = g + 1;
        while (e < n && order[e]->start_stack == order[g]->start_stack)
            e++;
        int64_t sum = 0;
        for (size_t k = g; k < e; k++) {
            size_t place = (size_t)best_place + k; /* 1-based place of position k */
            if (place - 1 < nplaces)
                sum += prizes[place - 1]; /* no overflow: the whole range was summed above */
        }
        int64_t cnt = (int64_t)(e - g), each = sum / cnt, odd = sum % cnt;
        for (size_t k = g; k < e; k++) {
            out[k].player = order[k]->player;
            out[k].place = best_place + (uint32_t)g;
            /* Within the group the order is ascending tiebreak: the odd chips go first. */
            out[k].amount = each + ((int64_t)(k - g) < odd ? 1 : 0);
        }
        g = e;
    }
    free(order);
    return 0;
}

/* One share of a split by weight, for the largest-remainder rounding. */
typedef struct {
    size_t idx;
    uint64_t weight;
    u128 rem;
} share_t;

static int share_cmp(const void *a, const void *b)
{
    const share_t *x = a, *y = b;
    if (x->rem != y->rem)
        return x->rem > y->rem ? -1 : 1;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

/*
 * Adds to add[i] the share of `amount` (>= 0) in proportion to weight[i] (all > 0): floor of
 * amount x weight / total, the odd chips one each to the largest remainders (ties: bigger
 * weight, then lower index). With equal = true every weight counts as 1 and the odd chips go
 * to the biggest weight[] (ties: lower index), as for an equal split ordered by stacks.
 */
static void split(int64_t amount, const uint64_t *weight, size_t n, bool equal, int64_t *add)
{
    share_t *s = xmalloc(n * sizeof *s);
    u128 total = 0;
    for (size_t i = 0; i < n; i++)
        total += equal ? 1 : weight[i];
    int64_t given = 0;
    for (size_t i = 0; i < n; i++) {
        u128 num = (u128)(uint64_t)amount * (equal ? 1 : weight[i]);
        int64_t part = (int64_t)(num / total);
        add[i] += part;
        given += part;
        s[i] = (share_t){.idx = i, .weight = weight[i], .rem = num % total};
    }
    qsort(s, n, sizeof *s, share_cmp);
    for (size_t k = 0; given < amount; k++, given++)
        add[s[k].idx]++;
    free(s);
}

int tour_payout_cancel(const int64_t *prizes, size_t nplaces, int64_t pool,
                       const tour_survivor_t *survivors, size_t n, int64_t *amounts)
{
    if (n == 0 || pool < 0)
        return -EINVAL;
    int64_t refunds = 0, chips = 0;
    for (size_t i = 0; i < n; i++) {
        if (survivors[i].chips <= 0 || survivors[i].buyins_paid < 0)
            return -EINVAL;
        if (__builtin_add_overflow(refunds, survivors[i].buyins_paid, &refunds) ||
            __builtin_add_overflow(chips, survivors[i].chips, &chips))
            return -EOVERFLOW;
    }
    for (size_t i = 0; i < nplaces; i++)
        if (prizes[i] < 0 || (i > 0 && prizes[i] > prizes[i - 1]))
            return -EINVAL;
    uint64_t *w = xmalloc(n * sizeof *w);
    int64_t *a = xcalloc(n, sizeof *a);
    for (size_t i = 0; i < n; i++)
        w[i] = (uint64_t)survivors[i].chips;
    int rc = 0;
    if (n > nplaces) {
        if (refunds > pool) {
            rc = -EINVAL;
            goto out;
        }
        int64_t rest = pool - refunds;
        for (size_t i = 0; i < n; i++)
            a[i] = survivors[i].buyins_paid;
        split(rest / 2, w, n, true, a);
        split(rest - rest / 2, w, n, false, a);
    } else {
        int64_t floor_prize = prizes[n - 1], rest = 0;
        for (size_t i = 0; i < n; i++)
            if (__builtin_add_overflow(rest, prizes[i] - floor_prize, &rest)) {
                rc = -EOVERFLOW;
                goto out;
            }
        for (size_t i = 0; i < n; i++)
            a[i] = floor_prize;
        split(rest, w, n, false, a);
    }
    memcpy(amounts, a, n * sizeof *a);
out:
    free(w);
    free(a);
    return rc;
}

int tour_payout_cancel_match(int64_t pool, const tour_survivor_t *survivors, size_t n,
                             int64_t *amounts)
{
    if (n == 0 || pool < 0)
        return -EINVAL;
    int64_t refunds = 0;
    for (size_t i = 0; i < n; i++) {
        if (survivors[i].buyins_paid < 0)
            return -EINVAL;
        if (__builtin_add_overflow(refunds, survivors[i].buyins_paid, &refunds))
            return -EOVERFLOW;
    }
    if (refunds > pool)
        return -EINVAL;
    int64_t rest = pool - refunds;
    int64_t each = rest / (int64_t)n, odd = rest % (int64_t)n;
    for (size_t i = 0; i < n; i++)
        amounts[i] = survivors[i].buyins_paid + each + ((int64_t)i < odd ? 1 : 0);
    return 0;
}
