/*
 * niuniu -- Niu Niu hand evaluation, the banker and the settlement (see niuniu.h and
 * docs/rules/niuniu.md).
 */
#include "niuniu.h"

#include <errno.h>
#include <string.h>

#include "cardtext.h"

/* ---- hands ------------------------------------------------------------------------------ */

/* The rank of a valid code for Niu Niu: A 1, 2..10, J 11, Q 12, K 13. */
static int niuniu_rank(uint8_t code)
{
    int r = CARDTEXT_RANK(code);
    return r == 14 ? 1 : r;
}

int niuniu_card_points(uint8_t code)
{
    if (!cardtext_valid(code))
        return 0;
    int r = niuniu_rank(code);
    return r > 10 ? 10 : r;
}

int niuniu_card_order(uint8_t code)
{
    /* Wire suits: 0 clubs, 1 diamonds, 2 hearts, 3 spades; tie order d 0 < c 1 < h 2 < s 3. */
    static const int suit_order[4] = {1, 0, 2, 3};
    if (!cardtext_valid(code))
        return 0;
    return niuniu_rank(code) * 4 + suit_order[CARDTEXT_SUIT(code)];
}

/*
 * Evaluates five cards (docs/rules/niuniu.md "Hand categories", "Splits", "Ties"): sorts them
 * by tie order, highest first, so the result does not depend on the order given; finds the
 * first three (in that order, lexicographically) summing to a multiple of 10; then tests the
 * categories from the top, each hand taking the highest one it qualifies for.
 */
int niuniu_eval(const uint8_t *cards, int n, niuniu_hand_t *out)
{
    if (out != NULL) {
        memset(out, 0, sizeof *out);
        out->category = NIUNIU_INVALID;
        out->points = -1;
    }
    if (cards == NULL || out == NULL || n != NIUNIU_HAND_CARDS)
        return -EINVAL;
    uint8_t c[NIUNIU_HAND_CARDS];
    for (int i = 0; i < NIUNIU_HAND_CARDS; i++) {
        if (!cardtext_valid(cards[i]))
            return -EINVAL;
        for (int j = 0; j < i; j++)
            if (cards[j] == cards[i])
                return -EINVAL;
        c[i] = cards[i];
    }
    /* Insertion sort, highest tie order first. */
    for (int i = 1; i < NIUNIU_HAND_CARDS; i++)
        for (int j = i; j > 0 && niuniu_card_order(c[j]) > niuniu_card_order(c[j - 1]); j--) {
            uint8_t t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }

    int pts[NIUNIU_HAND_CARDS], sum = 0, small = 1, faces = 1;
    int count[15] = {0}, four = 0;
    for (int i = 0; i < NIUNIU_HAND_CARDS; i++) {
        pts[i] = niuniu_card_points(c[i]);
        sum += pts[i];
        small &= pts[i] < 5;
        faces &= niuniu_rank(c[i]) > 10;
        if (++count[niuniu_rank(c[i])] == 4)
            four = 1;
    }

    for (int i = 0; i < 3 && !out->has_niu; i++)
        for (int j = i + 1; j < 4 && !out->has_niu; j++)
            for (int k = j + 1; k < 5 && !out->has_niu; k++) {
                if ((pts[i] + pts[j] + pts[k]) % 10 != 0)
                    continue;
                out->has_niu = true;
                out->niu[0] = c[i];
                out->niu[1] = c[j];
                out->niu[2] = c[k];
                int r = 0;
                for (int m = 0; m < NIUNIU_HAND_CARDS; m++)
                    if (m != i && m != j && m != k)
                        out->rest[r++] = c[m];
                /* The three sum to 0 mod 10, so the other two sum to the total mod 10. */
                out->points = sum % 10;
            }

    if (small && sum <= 10)
        out->category = NIUNIU_FIVE_SMALL;
    else if (four)
        out->category = NIUNIU_BOMB;
    else if (faces)
        out->category = NIUNIU_FIVE_FACES;
    else if (!out->has_niu)
        out->category = NIUNIU_NO_NIU;
    else if (out->points == 0)
        out->category = NIUNIU_NIU_NIU;
    else
        out->category = (niuniu_category_t)(NIUNIU_NIU_1 + out->points - 1);
    out->top = c[0];
    out->key = (int32_t)out->category * 256 + niuniu_card_order(c[0]);
    return 0;
}

int niuniu_compare(const niuniu_hand_t *a, const niuniu_hand_t *b)
{
    return (a->key > b->key) - (a->key < b->key);
}

const char *niuniu_category_name(niuniu_category_t cat)
{
    static const char *const names[NIUNIU_CATEGORIES] = {
        "no_niu", "niu_1", "niu_2", "niu_3",   "niu_4",      "niu_5", "niu_6",
        "niu_7",  "niu_8", "niu_9", "niu_niu", "five_faces", "bomb",  "five_small",
    };
    if ((int)cat < 0 || (int)cat >= NIUNIU_CATEGORIES)
        return "invalid";
    return names[cat];
}

/* ---- configuration ---------------------------------------------------------------------- */

void niuniu_config_default(niuniu_config_t *cfg)
{
    static const int mult[NIUNIU_CATEGORIES] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 4, 5, 5};
    memset(cfg, 0, sizeof *cfg);
    cfg->seats = 6;
    cfg->stake = 10;
    cfg->nbet_options = 5;
    for (int i = 0; i < 5; i++)
        cfg->bet_options[i] = i + 1;
    cfg->banker_mode = NIUNIU_BANKER_BID;
    cfg->max_bid = 4;
    memcpy(cfg->mult, mult, sizeof mult);
    cfg->bank_min_stakes = 100;
    cfg->cards_before_bid = 4;
    cfg->bid_ms = 8000;
    cfg->bet_ms = 8000;
    cfg->show_ms = 10000;
}

int niuniu_config_check(const niuniu_config_t *cfg)
{
    if (cfg == NULL || cfg->seats < 2 || cfg->seats > NIUNIU_MAX_SEATS || cfg->stake <= 0 ||
        cfg->stake > NIUNIU_MAX_CHIPS || cfg->nbet_options < 1 ||
        cfg->nbet_options > NIUNIU_MAX_BET_OPTIONS ||
        (cfg->banker_mode != NIUNIU_BANKER_BID && cfg->banker_mode != NIUNIU_BANKER_ROTATE) ||
        cfg->max_bid < 1 || cfg->max_bid > NIUNIU_MAX_BID || cfg->bank_min_stakes < 0 ||
        cfg->bank_min_stakes > NIUNIU_MAX_CHIPS / cfg->stake || cfg->cards_before_bid < 0 ||
        cfg->cards_before_bid > NIUNIU_HAND_CARDS || cfg->bid_ms < 0 || cfg->bet_ms < 0 ||
        cfg->show_ms < 0)
        return -EINVAL;
    for (int i = 0; i < cfg->nbet_options; i++)
        if (cfg->bet_options[i] < 1 || cfg->bet_options[i] > 1000 ||
            (i > 0 && cfg->bet_options[i] <= cfg->bet_options[i - 1]))
            return -EINVAL;
    for (int i = 0; i < NIUNIU_CATEGORIES; i++)
        if (cfg->mult[i] < 1 || cfg->mult[i] > NIUNIU_MAX_MULT ||
            (i > 0 && cfg->mult[i] < cfg->mult[i - 1]))
            return -EINVAL;
    /* The largest bet at the largest bid and multiplier stays far from overflowing. */
    if ((int64_t)cfg->bet_options[cfg->nbet_options - 1] > NIUNIU_MAX_CHIPS / cfg->stake)
        return -EINVAL;
    return 0;
}

int niuniu_multiplier(const niuniu_config_t *cfg, niuniu_category_t cat)
{
    if (cfg == NULL || (int)cat < 0 || (int)cat >= NIUNIU_CATEGORIES)
        return -EINVAL;
    return cfg->mult[cat];
}

int niuniu_max_multiplier(const niuniu_config_t *cfg)
{
    int m = 0;
    for (int i = 0; i < NIUNIU_CATEGORIES; i++)
        if (cfg->mult[i] > m)
            m = cfg->mult[i];
    return m;
}

/* ---- the banker ------------------------------------------------------------------------- */

bool niuniu_may_bank(const niuniu_config_t *cfg, int64_t stack)
{
    return stack > 0 && stack >= cfg->bank_min_stakes * cfg->stake;
}

/* The (rnd % count)-th seat in seat order among those with pick[s]; -ENOENT when none. */
static int niuniu_draw(const bool pick[NIUNIU_MAX_SEATS], int seats, uint32_t rnd)
{
    int count = 0;
    for (int s = 0; s < seats; s++)
        count += pick[s];
    if (count == 0)
        return -ENOENT;
    int k = (int)(rnd % (uint32_t)count);
    for (int s = 0; s < seats; s++)
        if (pick[s] && k-- == 0)
            return s;
    return -ENOENT; /* not reached */
}

int niuniu_banker_bid(const niuniu_config_t *cfg, const int bids[NIUNIU_MAX_SEATS],
                      const int64_t stacks[NIUNIU_MAX_SEATS], uint32_t rnd, int *banker, int *mult)
{
    if (niuniu_config_check(cfg) != 0 || bids == NULL || stacks == NULL || banker == NULL ||
        mult == NULL)
        return -EINVAL;
    int in = 0, best = 0;
    for (int s = 0; s < cfg->seats; s++) {
        if (bids[s] == -1)
            continue;
        if (bids[s] < 0 || bids[s] > cfg->max_bid || stacks[s] <= 0 ||
            stacks[s] > NIUNIU_MAX_CHIPS || (bids[s] > 0 && !niuniu_may_bank(cfg, stacks[s])))
            return -EINVAL;
        in++;
        if (bids[s] > best)
            best = bids[s];
    }
    if (in < 2)
        return -EINVAL;
    bool pick[NIUNIU_MAX_SEATS] = {false};
    for (int s = 0; s < cfg->seats; s++)
        pick[s] = bids[s] != -1 && (best > 0 ? bids[s] == best : niuniu_may_bank(cfg, stacks[s]));
    int b = niuniu_draw(pick, cfg->seats, rnd);
    if (b < 0)
        return b;
    *banker = b;
    *mult = best > 0 ? best : 1;
    return 0;
}

int niuniu_banker_rotate(const niuniu_config_t *cfg, int prev, const bool in[NIUNIU_MAX_SEATS],
                         const int64_t stacks[NIUNIU_MAX_SEATS], uint32_t rnd, int *banker)
{
    if (niuniu_config_check(cfg) != 0 || in == NULL || stacks == NULL || banker == NULL ||
        prev < -1 || prev >= cfg->seats)
        return -EINVAL;
    int count = 0;
    bool pick[NIUNIU_MAX_SEATS] = {false};
    for (int s = 0; s < cfg->seats; s++) {
        if (!in[s])
            continue;
        if (stacks[s] <= 0 || stacks[s] > NIUNIU_MAX_CHIPS)
            return -EINVAL;
        count++;
        pick[s] = niuniu_may_bank(cfg, stacks[s]);
    }
    if (count < 2)
        return -EINVAL;
    if (prev == -1) {
        int b = niuniu_draw(pick, cfg->seats, rnd);
        if (b < 0)
            return b;
        *banker = b;
        return 0;
    }
    for (int i = 1; i <= cfg->seats; i++) {
        int s = (prev + i) % cfg->seats;
        if (pick[s]) {
            *banker = s;
            return 0;
        }
    }
    return -ENOENT;
}

bool niuniu_bet_allowed(const niuniu_config_t *cfg, int64_t stack, int mult, int bet_stakes)
{
    if (niuniu_config_check(cfg) != 0 || mult < 1 || mult > cfg->max_bid || stack < 0)
        return false;
    for (int i = 0; i < cfg->nbet_options; i++)
        if (cfg->bet_options[i] == bet_stakes)
            return (int64_t)bet_stakes * cfg->stake * mult * niuniu_max_multiplier(cfg) <= stack;
    return false;
}

int niuniu_default_bet(const niuniu_config_t *cfg)
{
    return cfg->bet_options[0];
}

/* ---- settlement ------------------------------------------------------------------------- */

/*
 * Settles a round (docs/rules/niuniu.md "Settlement"): every hand is compared with the banker's
 * alone; the loser owes bet * mult * the winning hand's multiplier. The banker first collects
 * from the losing players (whose stacks cover their worst loss, so they always pay in full),
 * then pays the winners from the stack plus those collections, strongest winning hand first;
 * the first winner it cannot pay in full gets what is left, the ones after nothing.
 */
int niuniu_settle(const niuniu_config_t *cfg, const niuniu_round_t *r, niuniu_settlement_t *out)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (niuniu_config_check(cfg) != 0 || r == NULL || out == NULL || r->banker < 0 ||
        r->banker >= cfg->seats || r->mult < 1 || r->mult > cfg->max_bid)
        return -EINVAL;
    const int maxm = niuniu_max_multiplier(cfg);
    const int b = r->banker;
    if (r->bet[b] != 0 || r->stack[b] < 0 || r->stack[b] > NIUNIU_MAX_CHIPS)
        return -EINVAL;

    niuniu_hand_t hand[NIUNIU_MAX_SEATS];
    uint8_t seen[64] = {0};
    int players = 0;
    for (int s = 0; s < cfg->seats; s++) {
        if (s != b && r->bet[s] == 0)
            continue;
        if (s != b) {
            if (r->bet[s] < 0 || r->stack[s] < 0 || r->stack[s] > NIUNIU_MAX_CHIPS ||
                r->bet[s] > r->stack[s] / ((int64_t)r->mult * maxm))
                return -EINVAL;
            players++;
        }
        if (niuniu_eval(r->cards[s], NIUNIU_HAND_CARDS, &hand[s]) != 0)
            return -EINVAL;
        for (int i = 0; i < NIUNIU_HAND_CARDS; i++)
            if (seen[r->cards[s][i]]++)
                return -EINVAL;
    }
    if (players == 0)
        return -EINVAL;

    /* The losers pay, clockwise from the banker's left. */
    int64_t available = r->stack[b];
    for (int i = 1; i < cfg->seats; i++) {
        int s = (b + i) % cfg->seats;
        if (r->bet[s] == 0 || niuniu_compare(&hand[s], &hand[b]) > 0)
            continue;
        niuniu_transfer_t *t = &out->t[out->n++];
        t->seat = s;
        t->player_won = false;
        t->category = hand[b].category;
        t->owed = r->bet[s] * r->mult * cfg->mult[hand[b].category];
        t->amount = t->owed;
        out->delta[s] -= t->amount;
        out->delta[b] += t->amount;
        available += t->amount;
    }

    /* The winners, strongest hand first (hands of one deal never tie). */
    int win[NIUNIU_MAX_SEATS], nwin = 0;
    for (int s = 0; s < cfg->seats; s++)
        if (s != b && r->bet[s] != 0 && niuniu_compare(&hand[s], &hand[b]) > 0)
            win[nwin++] = s;
    for (int i = 1; i < nwin; i++)
        for (int j = i; j > 0 && niuniu_compare(&hand[win[j]], &hand[win[j - 1]]) > 0; j--) {
            int t = win[j];
            win[j] = win[j - 1];
            win[j - 1] = t;
        }
    for (int i = 0; i < nwin; i++) {
        int s = win[i];
        niuniu_transfer_t *t = &out->t[out->n++];
        t->seat = s;
        t->player_won = true;
        t->category = hand[s].category;
        t->owed = r->bet[s] * r->mult * cfg->mult[hand[s].category];
        t->amount = t->owed < available ? t->owed : available;
        if (t->amount < t->owed)
            out->banker_short = true;
        available -= t->amount;
        out->delta[s] += t->amount;
        out->delta[b] -= t->amount;
    }
    return 0;
}
