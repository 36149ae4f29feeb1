/* bj_strategy -- basic strategy by expected-value computation; see bj_strategy.h. */
#include "bj_strategy.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

enum { D_17 = 0, D_BUST = 5, D_BJ = 6, D_N = 7 };

struct bj_strategy {
    bj_rules_t rules;
    /* [total][up][avail]: avail bit 0 = double allowed, bit 1 = surrender allowed */
    uint8_t hard[22][11][4];
    uint8_t soft[22][11][4];
    uint8_t split[11][11][4]; /* [pair value][up][avail]: 1 = split */
    /* first-two-card expected values [up][total][soft][action] (split: [up][value]) */
    double ev[11][22][2][BJ_ACT_COUNT];
    double split_ev[11][11];
};

typedef struct {
    int counts[11]; /* cards left by value 1..10 */
    int left;
    int up;
    bool h17, peek;
} bj_deal_ctx_t;

/*
 * Probability of each dealer result, enumerating every draw sequence without replacement.
 * When the dealer peeks under an ace or ten and has no blackjack, the hole card (the draw
 * after the up card) cannot be the card that would make one, so it is drawn from the rest.
 */
static void bj_dealer_rec(bj_deal_ctx_t *c, int hard, bool ace, int ncards, double p,
                          double dist[D_N])
{
    int best = hard + (ace && hard + 10 <= 21 ? 10 : 0);
    if (ncards == 2 && best == 21) {
        dist[D_BJ] += p;
        return;
    }
    if (hard > 21) {
        dist[D_BUST] += p;
        return;
    }
    bool soft = ace && hard + 10 <= 21;
    if (best > 17 || (best == 17 && !(soft && c->h17))) {
        dist[D_17 + best - 17] += p;
        return;
    }
    int exclude = 0;
    if (ncards == 1 && c->peek)
        exclude = c->up == 1 ? 10 : c->up == 10 ? 1 : 0;
    int denom = c->left - (exclude ? c->counts[exclude] : 0);
    for (int r = 1; r <= 10; r++) {
        if (r == exclude || c->counts[r] == 0)
            continue;
        double pr = p * c->counts[r] / denom;
        c->counts[r]--;
        c->left--;
        bj_dealer_rec(c, hard + r, ace || r == 1, ncards + 1, pr, dist);
        c->counts[r]++;
        c->left++;
    }
}

static bool bj_double_permitted(const bj_rules_t *r, int hard, bool ace)
{
    if (r->double_on == BJ_DOUBLE_ANY)
        return true;
    bool soft = ace && hard + 10 <= 21;
    int lo = r->double_on == BJ_DOUBLE_9_11 ? 9 : 10;
    return !soft && hard >= lo && hard <= 11;
}

static inline int bj_best(int hard, bool ace)
{
    return hard + (ace && hard + 10 <= 21 ? 10 : 0);
}

/* Chooses among the actions allowed by avail the one with the highest value. */
static uint8_t bj_argmax(const double v[BJ_ACT_COUNT], int avail, bool can_hit)
{
    int best = BJ_ACT_STAND;
    if (can_hit && v[BJ_ACT_HIT] > v[best])
        best = BJ_ACT_HIT;
    if ((avail & 1) && v[BJ_ACT_DOUBLE] > v[best])
        best = BJ_ACT_DOUBLE;
    if ((avail & 2) && v[BJ_ACT_SURRENDER] > v[best])
        best = BJ_ACT_SURRENDER;
    return (uint8_t)best;
}

/* Expected values against one up card for one shoe composition. */
typedef struct {
    double P[11];      /* probability of drawing each value */
    double stand[32];  /* standing on a best total */
    double hit[32][2]; /* hitting once then playing on: [hard total][holds an ace] */
    double dbl[32][2]; /* doubling */
    double hv[32][2];  /* best of hitting and standing */
} bj_evs_t;

/*
 * Dealer outcome probabilities for up card c->up drawing from c->counts, then the player's
 * values for every (hard total, ace) drawing from the same composition.
 */
static void bj_evs_compute(bj_deal_ctx_t *c, bj_evs_t *e)
{
    double dist[D_N] = {0};
    bj_dealer_rec(c, c->up, c->up == 1, 1, 1.0, dist);
    for (int v = 1; v <= 10; v++)
        e->P[v] = (double)c->counts[v] / c->left;
    for (int t = 0; t < 32; t++) {
        double ev = dist[D_BUST] - dist[D_BJ];
        if (t > 21) {
            e->stand[t] = -1;
            continue;
        }
        for (int d = 0; d < 5; d++)
            ev += (t > 17 + d ? 1 : t < 17 + d ? -1 : 0) * dist[D_17 + d];
        e->stand[t] = ev;
    }
    for (int h = 31; h >= 2; h--) {
        for (int a = 0; a < 2; a++) {
            if (h > 21) {
                e->hv[h][a] = e->hit[h][a] = e->dbl[h][a] = -1;
                continue;
            }
            double eh = 0, ed = 0;
            for (int v = 1; v <= 10; v++) {
                int nh = h + v;
                bool na = a || v == 1;
                eh += e->P[v] * (nh > 21 ? -1 : e->hv[nh][na]);
                ed += e->P[v] * (nh > 21 ? -1 : e->stand[bj_best(nh, na)]);
            }
            double st = e->stand[bj_best(h, a)];
            e->hit[h][a] = eh;
            e->dbl[h][a] = 2 * ed;
            e->hv[h][a] = eh > st ? eh : st;
        }
    }
}

/*
 * Value of splitting a pair of v: twice the value g of one hand that starts with v. Split
 * aces take one card; other hands play on (doubling only under DAS); a hand that draws v
 * again may be resplit while the table allows more hands, valued by the infinite-resplit
 * recurrence g = A + P(v) * 2g.
 */
static double bj_split_value(const bj_rules_t *r, const bj_evs_t *e, int v)
{
    if (r->max_hands < 2)
        return -2;
    double A = 0, B = 0;
    for (int w = 1; w <= 10; w++) {
        int h = v + w;
        bool a = v == 1 || w == 1;
        double val = e->stand[bj_best(h, a)];
        if (v != 1 && bj_best(h, a) < 21) {
            if (e->hit[h][a] > val)
                val = e->hit[h][a];
            if (r->das && bj_double_permitted(r, h, a) && e->dbl[h][a] > val)
                val = e->dbl[h][a];
        }
        if (w == v)
            B = val;
        else
            A += e->P[w] * val;
    }
    double g = A + e->P[v] * B;
    bool resplit = r->max_hands > 2 && (v != 1 || r->rsa);
    if (resplit && 2 * e->P[v] < 1) {
        double g2 = A / (1 - 2 * e->P[v]);
        if (g2 > g)
            g = g2;
    }
    return 2 * g;
}

/*
 * Fills every table for one dealer up card (value 1..10).
 *
 * Later decisions (three or more cards, nothing but hit or stand) use the shoe less the up
 * card. First decisions (double, surrender, split) are computed for each two-card hand with
 * its own two cards also removed from the shoe, then combined per total weighted by how often
 * each two-card hand is dealt: the "total-dependent" basic strategy of published charts.
 */
static void bj_strategy_fill_up(bj_strategy_t *s, int up)
{
    const bj_rules_t *r = &s->rules;
    bj_deal_ctx_t c;
    for (int v = 1; v <= 10; v++)
        c.counts[v] = r->decks * (v == 10 ? 16 : 4);
    c.counts[up]--;
    c.left = r->decks * 52 - 1;
    c.up = up;
    c.h17 = r->h17;
    c.peek = r->peek;
    /* A surrendered hand is over: it loses half its bet whatever the dealer holds, also in
     * the no-hole-card game (rules §4.6). */
    const double surrender = -0.5;

    bj_evs_t e; /* about 2 KiB */
    bj_evs_compute(&c, &e);
    for (int t = 4; t <= 21; t++) {
        for (int soft = 0; soft < 2; soft++) {
            if (soft && t < 12)
                continue;
            int h = soft ? t - 10 : t;
            double *ev = s->ev[up][t][soft];
            ev[BJ_ACT_STAND] = e.stand[t];
            ev[BJ_ACT_HIT] = e.hit[h][soft];
            ev[BJ_ACT_DOUBLE] = e.dbl[h][soft];
            ev[BJ_ACT_SURRENDER] = surrender;
            ev[BJ_ACT_SPLIT] = -2;
            for (int avail = 0; avail < 4; avail++) {
                uint8_t a = bj_argmax(ev, avail, t < 21);
                if (soft)
                    s->soft[t][up][avail] = a;
                else
                    s->hard[t][up][avail] = a;
            }
        }
    }

    double acc[22][2][BJ_ACT_COUNT] = {{{0}}};
    double wsum[22][2] = {{0}};
    for (int c1 = 1; c1 <= 10; c1++) {
        for (int c2 = c1; c2 <= 10; c2++) {
            if (c.counts[c1] == 0 || c.counts[c2] - (c1 == c2) <= 0)
                continue;
            double w = (double)c.counts[c1] * (c.counts[c2] - (c1 == c2)) * (c1 == c2 ? 1 : 2);
            int hard = c1 + c2;
            bool ace = c1 == 1;
            int total = bj_best(hard, ace);
            int soft = ace && hard + 10 <= 21;
            if (total == 21)
                continue; /* a blackjack: no decision */
            c.counts[c1]--;
            c.counts[c2]--;
            c.left -= 2;
            bj_evs_compute(&c, &e);
            c.counts[c1]++;
            c.counts[c2]++;
            c.left += 2;
            double ev[BJ_ACT_COUNT];
            ev[BJ_ACT_STAND] = e.stand[total];
            ev[BJ_ACT_HIT] = e.hit[hard][ace];
            ev[BJ_ACT_DOUBLE] = e.dbl[hard][ace];
            ev[BJ_ACT_SURRENDER] = surrender;
            ev[BJ_ACT_SPLIT] = -2;
            for (int a = 0; a < BJ_ACT_COUNT; a++)
                acc[total][soft][a] += w * ev[a];
            wsum[total][soft] += w;
            if (c1 == c2) {
                double split = bj_split_value(r, &e, c1);
                s->split_ev[up][c1] = split;
                /* Split when it beats the best other play available to this very pair. */
                for (int avail = 0; avail < 4; avail++)
                    s->split[c1][up][avail] = split > ev[bj_argmax(ev, avail, true)];
            }
        }
    }
    /* Two-card decisions (double or surrender available) by total. */
    for (int t = 4; t <= 21; t++) {
        for (int soft = 0; soft < 2; soft++) {
            if (wsum[t][soft] <= 0)
                continue;
            double *ev = s->ev[up][t][soft];
            for (int a = 0; a < BJ_ACT_COUNT; a++)
                ev[a] = acc[t][soft][a] / wsum[t][soft];
            ev[BJ_ACT_SPLIT] = -2;
            for (int avail = 1; avail < 4; avail++) {
                uint8_t a = bj_argmax(ev, avail, t < 21);
                if (soft)
                    s->soft[t][up][avail] = a;
                else
                    s->hard[t][up][avail] = a;
            }
        }
    }
}

int bj_strategy_create(const bj_rules_t *rules, bj_strategy_t **out)
{
    if (rules == NULL || out == NULL || bj_rules_validate(rules, NULL, 0) != 0)
        return BJ_ERR_INVALID;
    bj_strategy_t *s = xcalloc(1, sizeof(*s));
    s->rules = *rules;
    for (int up = 1; up <= 10; up++)
        bj_strategy_fill_up(s, up);
    *out = s;
    return 0;
}

void bj_strategy_destroy(bj_strategy_t *s)
{
    free(s);
}

bj_action_t bj_strategy_decide(const bj_strategy_t *s, const bj_hand_t *hand, uint8_t up,
                               uint32_t allowed)
{
    int u = bj_card_value(up);
    int avail = ((allowed & BJ_ACT_BIT(BJ_ACT_DOUBLE)) ? 1 : 0) |
                ((allowed & BJ_ACT_BIT(BJ_ACT_SURRENDER)) ? 2 : 0);
    if ((allowed & BJ_ACT_BIT(BJ_ACT_SPLIT)) && s->split[bj_card_value(hand->cards[0])][u][avail])
        return BJ_ACT_SPLIT;
    bool soft;
    int total = bj_hand_total(hand, &soft);
    if (total > 21)
        return BJ_ACT_STAND;
    bj_action_t a = (bj_action_t)(soft ? s->soft[total][u][avail] : s->hard[total][u][avail]);
    if (!(allowed & BJ_ACT_BIT(a)))
        a = BJ_ACT_STAND;
    return a;
}

static const char *bj_cell_name(uint8_t a, uint8_t fallback)
{
    static const char *names[BJ_ACT_COUNT][2] = {
        [BJ_ACT_HIT] = {"H", "H"},         [BJ_ACT_STAND] = {"S", "S"},
        [BJ_ACT_DOUBLE] = {"Dh", "Ds"},    [BJ_ACT_SPLIT] = {"P", "P"},
        [BJ_ACT_SURRENDER] = {"Rh", "Rs"},
    };
    return names[a][fallback == BJ_ACT_STAND];
}

const char *bj_strategy_cell(const bj_strategy_t *s, int total, bool soft, int pair_value, int up)
{
    if (up < 1 || up > 10)
        return "?";
    if (pair_value >= 1 && pair_value <= 10) {
        if (s->split[pair_value][up][3])
            return "P";
        if (s->split[pair_value][up][1])
            return "Rp";
        total = pair_value == 1 ? 12 : 2 * pair_value;
        soft = pair_value == 1;
    }
    if (total < 4 || total > 21 || (soft && total < 12))
        return "?";
    const uint8_t(*tbl)[11][4] = soft ? s->soft : s->hard;
    uint8_t a = tbl[total][up][3];
    uint8_t fallback = tbl[total][up][0];
    if (a == BJ_ACT_SURRENDER && tbl[total][up][1] == BJ_ACT_DOUBLE)
        fallback = BJ_ACT_HIT; /* does not occur with real rules; keep the chart simple */
    return bj_cell_name(a, fallback);
}

double bj_strategy_ev(const bj_strategy_t *s, int total, bool soft, int up, bj_action_t a)
{
    if (up < 1 || up > 10 || (unsigned)a >= BJ_ACT_COUNT || total < 4 || total > 21)
        return 0;
    if (a == BJ_ACT_SPLIT)
        return (total % 2 == 0 && !soft && total <= 20) ? s->split_ev[up][total / 2]
               : (soft && total == 12)                  ? s->split_ev[up][1]
                                                        : -2;
    return s->ev[up][total][soft ? 1 : 0][a];
}

void bj_strategy_print(const bj_strategy_t *s, FILE *to)
{
    static const int ups[10] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 1};
    static const char *up_names[10] = {"2", "3", "4", "5", "6", "7", "8", "9", "10", "A"};
    char desc[256];
    bj_rules_describe(&s->rules, desc, sizeof(desc));
    fprintf(to, "basic strategy for: %s\n", desc);
    fprintf(to, "H hit, S stand, Dh/Ds double else hit/stand, Rh/Rs/Rp surrender else "
                "hit/stand/split, P split\n");
    fprintf(to, "\n%-6s", "hard");
    for (int i = 0; i < 10; i++)
        fprintf(to, "%4s", up_names[i]);
    fputc('\n', to);
    for (int t = 5; t <= 20; t++) {
        fprintf(to, "%-6d", t);
        for (int i = 0; i < 10; i++)
            fprintf(to, "%4s", bj_strategy_cell(s, t, false, 0, ups[i]));
        fputc('\n', to);
    }
    fprintf(to, "\nsoft\n");
    for (int t = 13; t <= 20; t++) {
        fprintf(to, "A,%-4d", t - 11);
        for (int i = 0; i < 10; i++)
            fprintf(to, "%4s", bj_strategy_cell(s, t, true, 0, ups[i]));
        fputc('\n', to);
    }
    fprintf(to, "\npairs\n");
    for (int v = 1; v <= 10; v++) {
        char name[8];
        if (v == 1)
            snprintf(name, sizeof(name), "A,A");
        else
            snprintf(name, sizeof(name), "%d,%d", v, v);
        fprintf(to, "%-6s", name);
        for (int i = 0; i < 10; i++)
            fprintf(to, "%4s", bj_strategy_cell(s, 0, false, v, ups[i]));
        fputc('\n', to);
    }
}
