/*
 * runfast -- the Run Fast (Pao De Kuai) rule set for the shed state machine
 * (docs/rules/runfast.md): three players, the 48-card deck (no jokers, no 2 but the 2 of
 * hearts, no ace of spades), 16 cards each; the holder of the 3 of spades leads it; singles,
 * pairs, runs of pairs, straights, trio with two, airplanes with two per trio, bombs; a short
 * trio or airplane only as a player's last cards; must beat when able. Options (shed_config_t):
 * "report single", four of a kind with two or three kickers, bombs paying at once.
 */
#include <errno.h>
#include <string.h>

#include "shed_rules.h"

enum {
    RF_SINGLE = 1,
    RF_PAIR,
    RF_PAIRS,    /* 2+ consecutive pairs */
    RF_STRAIGHT, /* 5+ consecutive singles */
    RF_TRIO,     /* len consecutive trios with two cards each (fewer only as the last cards) */
    RF_BOMB,
    RF_FOUR, /* four of a kind with len (2 or 3) kickers, not a bomb (an option) */
};

#define RF_RANK_A 11
#define RF_CAND_MAX 4096 /* legal shapes kept before removing repeats: far above a hand's */

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

#define RF_NIB7 0x7777777777777ull /* 7 in each of the 13 rank nibbles */
#define RF_NIB8 0x8888888888888ull
#define RF_NIB3 0x3333333333333ull
#define RF_NIB5 0x5555555555555ull
#define RF_NIB4 0x4444444444444ull
#define RF_NIB_RANK2 (8ull << (4 * SHED_RANK_2))

/* Bit 4r+3 set for each rank r whose count is not zero (13 ranks, no jokers). */
static inline uint64_t rf_nonzero(shed_counts_t c)
{
    return (((c & RF_NIB7) + RF_NIB7) | c) & RF_NIB8;
}

/* Number of cards in per-rank counts (the nibbles added up). */
static inline int rf_counts_size(shed_counts_t c)
{
    uint64_t t = (c & 0x0f0f0f0f0f0f0f0full) + ((c >> 4) & 0x0f0f0f0f0f0f0f0full);
    return (int)((t * 0x0101010101010101ull) >> 56);
}

/*
 * Classifies per-rank counts; see the combination list in docs/rules/runfast.md. Works on the
 * 13 rank nibbles at once (bit masks of the non-empty ranks, of the ranks holding exactly
 * three): it runs for every candidate shape of the move generator. `opts` are the game's
 * SHED_OPT_* flags (four of a kind with kickers).
 */
static int rf_classify_counts(shed_counts_t counts, bool last, unsigned opts, shed_combo_t *out)
{
    if (counts == 0 || (counts >> 52) != 0)
        return SHED_E_MALFORMED;
    uint64_t nz = rf_nonzero(counts);
    int n = rf_counts_size(counts), distinct = rf_counts_size(nz >> 3);
    int lo = __builtin_ctzll(nz) >> 2, hi = (63 - __builtin_clzll(nz)) >> 2;
    if (distinct == 1 && n <= 2) {
        rf_set(out, n == 1 ? RF_SINGLE : RF_PAIR, lo, 1, n);
        return 0;
    }
    if (distinct == 1 && n == 4) {
        rf_set(out, RF_BOMB, lo, 1, n);
        return 0;
    }
    if ((n == 6 && (opts & SHED_OPT_RF_FOUR_WITH_TWO)) ||
        (n == 7 && (opts & SHED_OPT_RF_FOUR_WITH_THREE))) {
        uint64_t four = ~rf_nonzero(counts ^ RF_NIB4) & RF_NIB8; /* ranks with exactly 4 */
        if (four != 0) { /* one such rank: the other 2 or 3 cards are its kickers */
            rf_set(out, RF_FOUR, __builtin_ctzll(four) >> 2, n - 4, n);
            return 0;
        }
    }
    if (hi <= RF_RANK_A && hi - lo + 1 == distinct) {
        if (n == distinct && n >= 5) { /* every count 1 */
            rf_set(out, RF_STRAIGHT, lo, n, n);
            return 0;
        }
        /* every count 2: twice as many cards as ranks and none with 3 or more */
        if (n == 2 * distinct && distinct >= 2 && ((counts + RF_NIB5) & RF_NIB8) == 0) {
            rf_set(out, RF_PAIRS, lo, distinct, n);
            return 0;
        }
    }
    /* trios: the longest run of exactly-three ranks first, highest first */
    uint64_t three = ~rf_nonzero(counts ^ RF_NIB3) & RF_NIB8; /* ranks with exactly 3 */
    for (int k = 5; k >= 1; k--) {
        int kick = n - 3 * k;
        if (kick < 0 || kick > 2 * k || (kick < 2 * k && !last))
            continue;
        uint64_t e = k == 1 ? three : three & ~RF_NIB_RANK2, run = e; /* runs end at the ace */
        for (int i = 1; i < k; i++)
            run &= e >> (4 * i);
        if (run != 0) {
            rf_set(out, RF_TRIO, (63 - __builtin_clzll(run)) >> 2, k, n);
            return 0;
        }
    }
    return SHED_E_MALFORMED;
}

static int rf_classify(const shed_game_t *g, shed_set_t cards, bool last, shed_combo_t *out)
{
    if (cards.w[1] != 0)
        return SHED_E_MALFORMED;
    return rf_classify_counts(shed_set_counts(cards), last, g ? g->cfg.options : 0, out);
}

/* The highest rank in a hand (-1 when empty). */
static int rf_top_rank(shed_set_t hand)
{
    uint64_t nz = rf_nonzero(shed_set_counts(hand));
    return nz ? (63 - __builtin_clzll(nz)) >> 2 : -1;
}

/* "Report single" is in force for the player to act: the option is on and the next player
 * holds exactly one card. */
static bool rf_report_single(const shed_game_t *g)
{
    return (g->cfg.options & SHED_OPT_RF_REPORT_SINGLE) &&
           shed_set_size(g->hand[(g->turn + 1) % g->seats]) == 1;
}

/* Report single: a single played must be of the highest rank the player holds. */
static int rf_check_play(const shed_game_t *g, shed_set_t cards, const shed_combo_t *c)
{
    (void)cards;
    if (c->type == RF_SINGLE && rf_report_single(g) && c->rank != rf_top_rank(g->hand[g->turn]))
        return SHED_E_NOT_HIGHEST;
    return 0;
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
    int cnt[13];
    int nhand;
    const shed_combo_t *beat; /* NULL when leading */
    bool opening;             /* the deal's first play: the 3 of spades must be in it */
    unsigned opts;            /* the game's SHED_OPT_* flags */
    int single_rank;          /* report single: the only rank a single may have (-1: any) */
    shed_counts_t keep[RF_CAND_MAX];
    int n;
    bool overflow;
} rf_gen_t;

static inline shed_counts_t one(int rank, int k)
{
    return (shed_counts_t)k << (4 * rank);
}

/* Keeps shape c (classified as *cb) when it beats the move to beat and obeys the opening. */
static void rf_keep(rf_gen_t *G, shed_counts_t c, const shed_combo_t *cb)
{
    if (G->beat != NULL && !rf_beats(cb, G->beat))
        return;
    if (G->opening && (c & 15) == 0)
        return;
    if (G->n < RF_CAND_MAX)
        G->keep[G->n++] = c;
    else
        G->overflow = true;
}

/* A shape of a known type (singles, pairs, runs, bombs): no classification needed. */
static void rf_keep_typed(rf_gen_t *G, shed_counts_t c, int type, int rank, int len, int n)
{
    shed_combo_t cb;
    rf_set(&cb, type, rank, len, n);
    rf_keep(G, c, &cb);
}

/* A shape with kickers: classified, since kickers may form other trios (a longer or higher
 * run). */
static void rf_keep_trio(rf_gen_t *G, shed_counts_t c)
{
    shed_combo_t cb;
    if (rf_classify_counts(c, rf_counts_size(c) == G->nhand, G->opts, &cb) == 0)
        rf_keep(G, c, &cb);
}

/* Kicker multisets of size `left` over ranks r..12 not in [s, s+k). */
static void rf_kickers(rf_gen_t *G, shed_counts_t body, int s, int k, int r, int left)
{
    if (left == 0) {
        rf_keep_trio(G, body);
        return;
    }
    for (; r < 13; r++) {
        if (r >= s && r < s + k)
            continue;
        int have = G->cnt[r];
        for (int t = 1; t <= have && t <= left; t++)
            rf_kickers(G, body + one(r, t), s, k, r + 1, left - t);
    }
}

/*
 * The shapes of the hand that are legal plays, as per-rank counts (possibly with repeats,
 * in no particular order). Shapes are generated type by type; when following, only the move
 * to beat's type and bombs (no shape of one family ever classifies as another's type).
 * Trios with kickers longer than the move to beat cannot match its length and are skipped
 * (a shape built on k trios classifies as at least k trios).
 */
static void rf_candidates(rf_gen_t *G)
{
    const int *cnt = G->cnt;
    int bt = G->beat ? G->beat->type : 0;
    for (int r = 0; r < 13; r++) {
        if (cnt[r] >= 1 && (bt == 0 || bt == RF_SINGLE) &&
            (G->single_rank < 0 || r == G->single_rank))
            rf_keep_typed(G, one(r, 1), RF_SINGLE, r, 1, 1);
        if (cnt[r] >= 2 && (bt == 0 || bt == RF_PAIR))
            rf_keep_typed(G, one(r, 2), RF_PAIR, r, 1, 2);
        if (cnt[r] == 4)
            rf_keep_typed(G, one(r, 4), RF_BOMB, r, 1, 4);
    }
    for (int unit = 1; unit <= 2; unit++) {
        int type = unit == 1 ? RF_STRAIGHT : RF_PAIRS, min = unit == 1 ? 5 : 2;
        if (bt != 0 && bt != type)
            continue;
        for (int s = 0; s <= RF_RANK_A; s++) {
            shed_counts_t c = 0;
            for (int e = s; e <= RF_RANK_A && cnt[e] >= unit; e++) {
                c += one(e, unit);
                int len = e - s + 1;
                if (len >= min)
                    rf_keep_typed(G, c, type, s, len, len * unit);
            }
        }
    }
    /* four of a kind with two or three kickers (options) */
    for (int kick = 2; kick <= 3; kick++) {
        unsigned opt = kick == 2 ? SHED_OPT_RF_FOUR_WITH_TWO : SHED_OPT_RF_FOUR_WITH_THREE;
        if (!(G->opts & opt) || (bt != 0 && (bt != RF_FOUR || G->beat->len != kick)))
            continue;
        for (int r = 0; r < 13; r++)
            if (cnt[r] == 4 && G->nhand - 4 >= kick)
                rf_kickers(G, one(r, 4), r, 1, 0, kick);
    }
    if (bt != 0 && bt != RF_TRIO)
        return;
    int kmax = bt == RF_TRIO ? G->beat->len : 5;
    for (int s = 0; s <= SHED_RANK_2; s++) {
        shed_counts_t body = 0;
        for (int k = 1; k <= kmax && s + k - 1 <= (k == 1 ? SHED_RANK_2 : RF_RANK_A); k++) {
            if (cnt[s + k - 1] < 3)
                break;
            body += one(s + k - 1, 3);
            int others = G->nhand;
            for (int r = s; r < s + k; r++)
                others -= cnt[r];
            if (others >= 2 * k) {
                rf_kickers(G, body, s, k, 0, 2 * k);
            } else {
                /* short: only when it empties the hand (no 4th card of a trio rank left) */
                shed_counts_t all = body;
                for (int r = 0; r < 13; r++)
                    if (r < s || r >= s + k)
                        all += one(r, cnt[r]);
                if (all == G->hand)
                    rf_keep_trio(G, all);
            }
        }
    }
}

/* Sorts shapes in ascending numeric order (an inline quicksort: no comparator calls). */
static void rf_sort(shed_counts_t *a, int n)
{
    while (n > 16) {
        shed_counts_t x = a[0], y = a[n / 2], z = a[n - 1];
        shed_counts_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i >= j)
                break;
            shed_counts_t t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
        /* [0, j] <= pivot <= [j + 1, n): recurse into the smaller part, loop on the larger */
        if (j + 1 < n - j - 1) {
            rf_sort(a, j + 1);
            a += j + 1;
            n -= j + 1;
        } else {
            rf_sort(a + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (int i = 1; i < n; i++) {
        shed_counts_t v = a[i];
        int j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/*
 * Legal plays of the player to act: shapes that classify (short trios only as the last
 * cards), beat the move to beat and include the 3 of spades on the deal's first play, in
 * ascending order of their per-rank counts, each once; cards picked lowest suit first (the 3
 * of spades kept in when required).
 */
static int rf_legal_plays(const shed_game_t *g, shed_set_t *out, int cap)
{
    shed_set_t hand = g->hand[g->turn];
    rf_gen_t G;
    G.hand = shed_set_counts(hand);
    for (int r = 0; r < 13; r++)
        G.cnt[r] = shed_counts_get(G.hand, r);
    G.nhand = shed_set_size(hand);
    G.beat = g->beat.type != 0 ? &g->beat : NULL;
    G.opening = g->nplays == 0;
    G.opts = g->cfg.options;
    G.single_rank = rf_report_single(g) ? rf_top_rank(hand) : -1;
    G.n = 0;
    G.overflow = false;
    rf_candidates(&G);
    if (G.overflow)
        return -ENOSPC;
    rf_sort(G.keep, G.n);
    int n = 0;
    shed_card_t s3 = shed_card_make(0, 0, SHED_SUIT_S);
    for (int i = 0; i < G.n; i++) {
        if (i > 0 && G.keep[i] == G.keep[i - 1])
            continue;
        if (n >= cap)
            return -ENOSPC;
        shed_set_t cards;
        if (G.opening) {
            /* opening: the 3 of spades picked first */
            shed_set_t rest = hand;
            shed_set_del(&rest, s3);
            shed_set_pick(rest, G.keep[i] - one(0, 1), &cards);
            shed_set_add(&cards, s3);
        } else {
            shed_set_pick(hand, G.keep[i], &cards);
        }
        out[n++] = cards;
    }
    return n;
}

/* A bomb doubles the stake, or with SHED_OPT_RF_BOMB_PAYS earns its player bomb_units from
 * each other player (counted now, settled with the deal). */
static void rf_on_play(shed_game_t *g, int seat, const shed_combo_t *c)
{
    static const shed_set_t none = {{0, 0}};
    if (c->type != RF_BOMB)
        return;
    if (g->cfg.options & SHED_OPT_RF_BOMB_PAYS) {
        g->bombs[seat]++;
        shed_game_push_event(g, SHED_EV_BOMB_PAID, seat, g->cfg.bomb_units, none);
        return;
    }
    g->doublings++;
    shed_game_push_event(g, SHED_EV_DOUBLE, seat, g->doublings, none);
}

/*
 * Each loser pays the winner one unit per card left, double if it never played a card
 * ("closed in"); every bomb played in the deal doubles all payments, or (SHED_OPT_RF_BOMB_PAYS)
 * each bomb is paid bomb_units by each other player, winner or not. units = all units paid.
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
    for (int b = 0; b < g->seats; b++) {
        int64_t each = (int64_t)g->bombs[b] * g->cfg.bomb_units;
        for (int s = 0; s < g->seats && each > 0; s++) {
            if (s == b)
                continue;
            g->settle.delta[s] -= each * g->cfg.base_stake;
            g->settle.delta[b] += each * g->cfg.base_stake;
            total += each;
        }
    }
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
    .options = SHED_OPT_RF_REPORT_SINGLE | SHED_OPT_RF_FOUR_WITH_TWO | SHED_OPT_RF_FOUR_WITH_THREE |
               SHED_OPT_RF_BOMB_PAYS,
    .deck = rf_deck,
    .classify = rf_classify,
    .beats = rf_beats,
    .first_seat = rf_first_seat,
    .check_opening = rf_check_opening,
    .check_play = rf_check_play,
    .legal_plays = rf_legal_plays,
    .on_play = rf_on_play,
    .settle = rf_settle,
};
