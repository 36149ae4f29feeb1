/*
 * runfast -- the Run Fast (Pao De Kuai) rule set for the shed state machine
 * (docs/rules/runfast.md): three players, the 48-card deck (no jokers, no 2 but the 2 of
 * hearts, no ace of spades), 16 cards each; the holder of the 3 of spades leads it; singles,
 * pairs, runs of pairs, straights, trio with two, airplanes with two per trio, bombs; a short
 * trio or airplane only as a player's last cards; must beat when able.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shed_rules.h"

enum {
    RF_SINGLE = 1,
    RF_PAIR,
    RF_PAIRS,    /* 2+ consecutive pairs */
    RF_STRAIGHT, /* 5+ consecutive singles */
    RF_TRIO,     /* len consecutive trios with two cards each (fewer only as the last cards) */
    RF_BOMB,
};

#define RF_RANK_A 11
#define RF_CAND_MAX 4096 /* far above the most shapes a 16-card hand has (about 2,000) */

static void rf_deck(shed_card_t *out)
{
    int n = 0;
    for (int rank = 0; rank < 13; rank++)
        for (int suit = 0; suit < 4; suit++) {
            if (rank == SHED_RANK_2 && suit != SHED_SUIT_H)
                continue;
            if (rank == RF_RANK_A && suit == SHED_SUIT_S)
                continue;
            out[n++] = shed_card_make(0, rank, suit);
        }
}

static void rf_set(shed_combo_t *c, int type, int rank, int len, int n)
{
    c->type = (uint8_t)type;
    c->rank = (uint8_t)rank;
    c->len = (uint8_t)len;
    c->ncards = (uint8_t)n;
    c->key = (uint32_t)rank;
}

/* Classifies per-rank counts; see the combination list in docs/rules/runfast.md. */
static int rf_classify_counts(shed_counts_t counts, bool last, shed_combo_t *out)
{
    int cnt[13], n = 0, lo = -1, hi = -1, distinct = 0, maxc = 0;
    for (int r = 0; r < 13; r++) {
        cnt[r] = shed_counts_get(counts, r);
        n += cnt[r];
        if (cnt[r]) {
            if (lo < 0)
                lo = r;
            hi = r;
            distinct++;
            if (cnt[r] > maxc)
                maxc = cnt[r];
        }
    }
    if (n == 0 || (counts >> 52) != 0)
        return SHED_E_MALFORMED;
    if (distinct == 1 && n <= 2) {
        rf_set(out, n == 1 ? RF_SINGLE : RF_PAIR, lo, 1, n);
        return 0;
    }
    if (distinct == 1 && n == 4) {
        rf_set(out, RF_BOMB, lo, 1, n);
        return 0;
    }
    if (hi <= RF_RANK_A && hi - lo + 1 == distinct && maxc * distinct == n) {
        if (maxc == 1 && n >= 5) {
            rf_set(out, RF_STRAIGHT, lo, n, n);
            return 0;
        }
        if (maxc == 2 && distinct >= 2) {
            rf_set(out, RF_PAIRS, lo, distinct, n);
            return 0;
        }
    }
    /* trios: the longest run of exactly-three ranks first, highest first */
    for (int k = 5; k >= 1; k--) {
        int kick = n - 3 * k;
        if (kick < 0 || kick > 2 * k || (kick < 2 * k && !last))
            continue;
        for (int s = (k == 1 ? SHED_RANK_2 : RF_RANK_A) - k + 1; s >= 0; s--) {
            bool ok = true;
            for (int r = s; r < s + k && ok; r++)
                ok = cnt[r] == 3;
            if (ok) {
                rf_set(out, RF_TRIO, s, k, n);
                return 0;
            }
        }
    }
    return SHED_E_MALFORMED;
}

static int rf_classify(const shed_game_t *g, shed_set_t cards, bool last, shed_combo_t *out)
{
    (void)g;
    if (cards.w[1] != 0)
        return SHED_E_MALFORMED;
    return rf_classify_counts(shed_set_counts(cards), last, out);
}

/* Same type and length and a higher main rank; a bomb beats anything but a higher bomb. */
static bool rf_beats(const shed_combo_t *a, const shed_combo_t *b)
{
    if (a->type == RF_BOMB)
        return b->type != RF_BOMB || a->rank > b->rank;
    if (b->type == RF_BOMB)
        return false;
    return a->type == b->type && a->len == b->len && a->rank > b->rank;
}

/* The holder of the 3 of spades acts first. */
static int rf_first_seat(const shed_game_t *g, int first)
{
    (void)first;
    for (int s = 0; s < g->seats; s++)
        if (shed_set_has(g->hand[s], shed_card_make(0, 0, SHED_SUIT_S)))
            return s;
    return 0;
}

static int rf_check_opening(const shed_game_t *g, shed_set_t cards)
{
    (void)g;
    return shed_set_has(cards, shed_card_make(0, 0, SHED_SUIT_S)) ? 0 : SHED_E_OPENING;
}

typedef struct {
    shed_counts_t hand;
    int nhand;
    shed_counts_t cand[RF_CAND_MAX];
    int n;
    bool overflow;
} rf_gen_t;

static void rf_emit(rf_gen_t *G, shed_counts_t c)
{
    if (G->n < RF_CAND_MAX)
        G->cand[G->n++] = c;
    else
        G->overflow = true;
}

static inline shed_counts_t one(int rank, int k)
{
    return (shed_counts_t)k << (4 * rank);
}

/* Kicker multisets of size `left` over ranks r..12 not in [s, s+k). */
static void rf_kickers(rf_gen_t *G, shed_counts_t body, int s, int k, int r, int left)
{
    if (left == 0) {
        rf_emit(G, body);
        return;
    }
    for (; r < 13; r++) {
        if (r >= s && r < s + k)
            continue;
        int have = shed_counts_get(G->hand, r);
        for (int t = 1; t <= have && t <= left; t++)
            rf_kickers(G, body + one(r, t), s, k, r + 1, left - t);
    }
}

/*
 * Candidate shapes of the hand as per-rank counts (a superset of the legal plays, possibly
 * with repeats); the caller keeps those that classify and beat.
 */
static void rf_candidates(rf_gen_t *G)
{
    int cnt[13];
    for (int r = 0; r < 13; r++)
        cnt[r] = shed_counts_get(G->hand, r);
    for (int r = 0; r < 13; r++) {
        for (int t = 1; t <= cnt[r] && t <= 2; t++)
            rf_emit(G, one(r, t));
        if (cnt[r] == 4)
            rf_emit(G, one(r, 4));
    }
    for (int unit = 1; unit <= 2; unit++)
        for (int s = 0; s <= RF_RANK_A; s++) {
            shed_counts_t c = 0;
            for (int e = s; e <= RF_RANK_A && cnt[e] >= unit; e++) {
                c += one(e, unit);
                if (e - s + 1 >= (unit == 1 ? 5 : 2))
                    rf_emit(G, c);
            }
        }
    for (int s = 0; s <= SHED_RANK_2; s++) {
        shed_counts_t body = 0;
        for (int k = 1; k <= 5 && s + k - 1 <= (k == 1 ? SHED_RANK_2 : RF_RANK_A); k++) {
            if (cnt[s + k - 1] < 3)
                break;
            body += one(s + k - 1, 3);
            int others = 0;
            for (int r = 0; r < 13; r++)
                if (r < s || r >= s + k)
                    others += cnt[r];
            if (others >= 2 * k) {
                rf_kickers(G, body, s, k, 0, 2 * k);
            } else {
                /* short: only when it empties the hand (no 4th card of a trio rank left) */
                shed_counts_t all = body;
                for (int r = 0; r < 13; r++)
                    if (r < s || r >= s + k)
                        all += one(r, cnt[r]);
                if (all == G->hand)
                    rf_emit(G, all);
            }
        }
    }
}

static int cmp_counts(const void *a, const void *b)
{
    shed_counts_t x = *(const shed_counts_t *)a, y = *(const shed_counts_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * Legal plays of the player to act: candidate shapes that classify (short trios only as the
 * last cards), beat the move to beat and include the 3 of spades on the deal's first play;
 * cards picked lowest suit first (the 3 of spades kept in when required).
 */
static int rf_legal_plays(const shed_game_t *g, shed_set_t *out, int cap)
{
    shed_set_t hand = g->hand[g->turn];
    rf_gen_t G;
    G.hand = shed_set_counts(hand);
    G.nhand = shed_set_size(hand);
    G.n = 0;
    G.overflow = false;
    rf_candidates(&G);
    if (G.overflow)
        return -ENOSPC;
    qsort(G.cand, (size_t)G.n, sizeof *G.cand, cmp_counts);
    int n = 0, rc = 0;
    shed_card_t s3 = shed_card_make(0, 0, SHED_SUIT_S);
    for (int i = 0; i < G.n; i++) {
        if (i > 0 && G.cand[i] == G.cand[i - 1])
            continue;
        shed_combo_t c;
        int size = 0;
        for (int r = 0; r < 13; r++)
            size += shed_counts_get(G.cand[i], r);
        if (rf_classify_counts(G.cand[i], size == G.nhand, &c) != 0)
            continue;
        if (g->beat.type != 0 && !rf_beats(&c, &g->beat))
            continue;
        shed_set_t cards;
        if (g->nplays == 0) {
            /* opening: must hold the 3 of spades, picked first */
            if (shed_counts_get(G.cand[i], 0) == 0)
                continue;
            shed_set_t rest = hand;
            shed_set_del(&rest, s3);
            shed_set_pick(rest, G.cand[i] - one(0, 1), &cards);
            shed_set_add(&cards, s3);
        } else {
            shed_set_pick(hand, G.cand[i], &cards);
        }
        if (n >= cap) {
            rc = -ENOSPC;
            break;
        }
        out[n++] = cards;
    }
    return rc ? rc : n;
}

static void rf_on_play(shed_game_t *g, int seat, const shed_combo_t *c)
{
    static const shed_set_t none = {{0, 0}};
    if (c->type == RF_BOMB) {
        g->doublings++;
        shed_game_push_event(g, SHED_EV_DOUBLE, seat, g->doublings, none);
    }
}

/*
 * Each loser pays the winner one unit per card left, double if it never played a card
 * ("closed in"); every bomb played in the deal doubles all payments.
 */
static void rf_settle(shed_game_t *g, int winner)
{
    int64_t total = 0, mult = (int64_t)1 << (g->doublings > 20 ? 20 : g->doublings);
    for (int s = 0; s < g->seats; s++) {
        if (s == winner)
            continue;
        int64_t units = shed_set_size(g->hand[s]) * (g->plays[s] == 0 ? 2 : 1) * mult;
        g->settle.delta[s] = -units * g->cfg.base_stake;
        total += units;
    }
    g->settle.delta[winner] = total * g->cfg.base_stake;
    g->settle.units = total;
}

const shed_rules_t shed_rules_runfast = {
    .name = "runfast",
    .seats = 3,
    .deck_size = 48,
    .hand_size = 16,
    .bidding = false,
    .max_bid = 0,
    .must_beat = true,
    .deck = rf_deck,
    .classify = rf_classify,
    .beats = rf_beats,
    .first_seat = rf_first_seat,
    .check_opening = rf_check_opening,
    .legal_plays = rf_legal_plays,
    .on_play = rf_on_play,
    .settle = rf_settle,
};
