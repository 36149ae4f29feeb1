/*
 * guandan -- the Guandan (掼蛋) rule set for the shed state machine (docs/rules/guandan.md):
 * four players in two partnerships (seats 0+2 and 1+3), two decks with jokers (108 cards, 27
 * each), a level rank that outranks the aces and whose two hearts are wild, bombs of 4 to 8
 * cards, straight flushes and the four-joker bomb, play on until a partnership is out, levels
 * going up by 3, 2 or 1, tribute and return tribute from the second deal of a match.
 *
 * Ranks: a card's rank index r (0..12 = 3..2, 13/14 = jokers) has the natural value
 * nv = (r + 1) % 13 (2 = 0, 3 = 1, ..., A = 12). A team's level step is the nv of its level
 * rank, so the level rank index is (step + 12) % 13.
 */
#include <errno.h>
#include <string.h>

#include "shed_rules.h"

enum {
    GD_SINGLE = 1,
    GD_PAIR,
    GD_TRIO,
    GD_FULL_HOUSE,
    GD_STRAIGHT,
    GD_TUBE,  /* three consecutive pairs */
    GD_PLATE, /* two consecutive trios */
    GD_BOMB,  /* key = class * 16 + power; classes below */
};

enum { GD_B4 = 0, GD_B5 = 1, GD_BSF = 2, GD_B6 = 3, GD_B7 = 4, GD_B8 = 5, GD_BJOKER = 6 };

#define GD_MAX_INTERP 24
#define GD_CAND_MAX 2048 /* legal sets kept before removing repeats (far above a hand's) */

static inline int gd_nv(int rank)
{
    return (rank + 1) % 13;
}

static inline int gd_rank_of_nv(int nv)
{
    return (nv + 12) % 13;
}

/* The deal's level as a natural value (2 when no game is at hand). */
static int gd_level_nv(const shed_game_t *g)
{
    return (g && g->level >= 0) ? gd_nv(g->level) : 0;
}

/* Strength of a rank for singles, pairs, trios, full houses and bombs. */
static inline int gd_power(int nv, int level_nv)
{
    return nv == level_nv ? 13 : nv;
}

static inline bool gd_is_wild(shed_card_t c, int level_nv)
{
    return shed_card_rank(c) < 13 && gd_nv(shed_card_rank(c)) == level_nv &&
           shed_card_suit(c) == SHED_SUIT_H;
}

/* The joker-aware power of a single card (for tribute): jokers highest. */
static int gd_card_power(shed_card_t c, int level_nv)
{
    int r = shed_card_rank(c);
    if (r == SHED_RANK_BJ)
        return 14;
    if (r == SHED_RANK_RJ)
        return 15;
    return gd_power(gd_nv(r), level_nv);
}

typedef struct {
    int type;
    uint32_t key;
} gd_interp_t;

typedef struct {
    int n, w, bj, rj;
    shed_set_t nat; /* the natural (non-wild, non-joker) cards */
    int cnt[13];    /* natural cards per nv (filled for 5 and 6 cards only) */
    int distinct;
    gd_interp_t it[GD_MAX_INTERP];
    int nit;
} gd_shape_t;

static void gd_add(gd_shape_t *S, int type, uint32_t key)
{
    if (S->nit < GD_MAX_INTERP) {
        S->it[S->nit].type = type;
        S->it[S->nit].key = key;
        S->nit++;
    }
}

/* Natural cards of `suit` at natural value nv (0, 1 or 2 with two decks). */
static inline int gd_suit_count(const gd_shape_t *S, int nv, int suit)
{
    int bit = 4 * gd_rank_of_nv(nv) + suit;
    return (int)((S->nat.w[0] >> bit) & 1) + (int)((S->nat.w[1] >> bit) & 1);
}

/*
 * Sequences of `len` positions from s (s = -1: the ace below the 2), `unit` cards each, wilds
 * filling the gaps. Called with n = unit * len cards, so once no rank has more than `unit`
 * cards a window is a reading exactly when it holds every natural card (the wilds then fill
 * precisely the missing places).
 */
static void gd_sequences(gd_shape_t *S, int unit, int len, int type)
{
    uint32_t nat = 0; /* bit v: natural cards of value v */
    for (int v = 0; v < 13; v++) {
        if (S->cnt[v] > unit)
            return; /* a rank with more than `unit` cards fits in no run */
        nat |= (uint32_t)(S->cnt[v] > 0) << v;
    }
    for (int s = -1; s + len - 1 <= 12; s++) {
        uint32_t window = s < 0 ? ((1u << (len - 1)) - 1) | (1u << 12) : ((1u << len) - 1) << s;
        if ((nat & ~window) != 0)
            continue;
        gd_add(S, type, (uint32_t)(s + 1));
        if (unit == 1) {
            /* straight flush: every natural card of one suit */
            for (int suit = 0; suit < 4; suit++) {
                int have = 0;
                for (int p = s; p < s + len; p++)
                    have += gd_suit_count(S, p < 0 ? 12 : p, suit) == 1;
                if (have == S->n - S->w)
                    gd_add(S, GD_BOMB, (uint32_t)(GD_BSF * 16 + s + 1));
            }
        }
    }
}

/* The 16 nibbles of x added up (each at most 8 here, so the bytes do not overflow). */
static inline int gd_nibble_sum(uint64_t x)
{
    uint64_t t = (x & 0x0f0f0f0f0f0f0f0full) + ((x >> 4) & 0x0f0f0f0f0f0f0f0full);
    return (int)((t * 0x0101010101010101ull) >> 56);
}

/*
 * Every reading of the cards as a combination (see docs/rules/guandan.md), in a fixed order
 * (gd_classify picks the first of equals). Counts come from the set's bits (nibble per rank),
 * not from a card list: this runs for every candidate of the move generator.
 */
static void gd_interpret(shed_set_t cards, int level_nv, gd_shape_t *S)
{
    const uint64_t ranks = ((uint64_t)1 << 52) - 1, nib1 = 0x1111111111111ull;
    int lr = gd_rank_of_nv(level_nv);
    uint64_t wild = (uint64_t)1 << (4 * lr + SHED_SUIT_H);
    shed_counts_t all = shed_set_counts(cards);
    S->nit = 0;
    S->n = gd_nibble_sum(all);
    S->bj = shed_counts_get(all, SHED_RANK_BJ);
    S->rj = shed_counts_get(all, SHED_RANK_RJ);
    S->w = ((cards.w[0] & wild) != 0) + ((cards.w[1] & wild) != 0);
    S->nat.w[0] = cards.w[0] & ranks & ~wild;
    S->nat.w[1] = cards.w[1] & ranks & ~wild;
    shed_counts_t counts = (all & ranks) - ((shed_counts_t)S->w << (4 * lr));
    uint64_t nz = (((counts & 0x7777777777777ull) + 0x7777777777777ull) | counts) &
                  0x8888888888888ull; /* bit 4r+3: rank r has natural cards */
    S->distinct = gd_nibble_sum((nz >> 3) & nib1);
    if (S->bj + S->rj > 0) {
        if (S->n == 4 && S->bj == 2 && S->rj == 2)
            gd_add(S, GD_BOMB, GD_BJOKER * 16);
        else if (S->n == 1)
            gd_add(S, GD_SINGLE, S->bj ? 14 : 15);
        else if (S->n == 2 && (S->bj == 2 || S->rj == 2))
            gd_add(S, GD_PAIR, S->bj ? 14 : 15);
        return;
    }
    if (S->distinct <= 1) {
        int nv = nz ? gd_nv(__builtin_ctzll(nz) >> 2) : level_nv;
        int pw = gd_power(nv, level_nv);
        static const int bomb_class[9] = {0, 0, 0, 0, GD_B4, GD_B5, GD_B6, GD_B7, GD_B8};
        if (S->n == 1)
            gd_add(S, GD_SINGLE, (uint32_t)pw);
        else if (S->n == 2)
            gd_add(S, GD_PAIR, (uint32_t)pw);
        else if (S->n == 3)
            gd_add(S, GD_TRIO, (uint32_t)pw);
        else if (S->n <= 8)
            gd_add(S, GD_BOMB, (uint32_t)(bomb_class[S->n] * 16 + pw));
    }
    if (S->n != 5 && S->n != 6)
        return;
    for (int r = 0; r < 13; r++)
        S->cnt[gd_nv(r)] = shed_counts_get(counts, r);
    if (S->n == 5 && S->distinct <= 2) {
        /* trio rank t (1 to 3 natural cards) and a pair rank p != t holding every other
         * natural card (0 to 2), wilds making up the rest: with five cards, p needs exactly
         * 5 - w - cnt[t] cards, and a rank with none always exists (at most two ranks have
         * any). One reading per t, in ascending t (the key depends on the trio only). */
        for (int t = 0; t < 13; t++) {
            if (S->cnt[t] == 0 || S->cnt[t] > 3)
                continue;
            int need = S->n - S->w - S->cnt[t];
            bool ok = need == 0;
            for (int p = 0; p < 13 && !ok && need > 0 && need <= 2; p++)
                ok = p != t && S->cnt[p] == need;
            if (ok)
                gd_add(S, GD_FULL_HOUSE, (uint32_t)gd_power(t, level_nv));
        }
    }
    if (S->n == 5)
        gd_sequences(S, 1, 5, GD_STRAIGHT);
    if (S->n == 6) {
        gd_sequences(S, 2, 3, GD_TUBE);
        gd_sequences(S, 3, 2, GD_PLATE);
    }
}

/* a beats b: bombs by key over everything else; otherwise same type and a higher key. */
static bool gd_beats(const shed_combo_t *a, const shed_combo_t *b)
{
    if (a->type == GD_BOMB)
        return b->type != GD_BOMB || a->key > b->key;
    if (b->type == GD_BOMB)
        return false;
    return a->type == b->type && a->key > b->key;
}

/*
 * Classifies cards. When several readings exist (wild cards, "33344" as a full house or a
 * 5-bomb with wilds, a straight that is also a straight flush) the reading is chosen to beat
 * the move to beat when one does (non-bombs first), and otherwise the strongest.
 */
static int gd_classify(const shed_game_t *g, shed_set_t cards, bool last, shed_combo_t *out)
{
    gd_shape_t S;
    (void)last;
    gd_interpret(cards, gd_level_nv(g), &S);
    if (S.nit == 0)
        return SHED_E_MALFORMED;
    int best = -1;
    const shed_combo_t *beat = (g && g->beat.type) ? &g->beat : NULL;
    for (int pass = 0; pass < 2 && beat && best < 0; pass++)
        for (int i = 0; i < S.nit && best < 0; i++) {
            shed_combo_t c = {.type = (uint8_t)S.it[i].type, .key = S.it[i].key};
            if ((S.it[i].type == GD_BOMB) == (pass == 1) && gd_beats(&c, beat))
                best = i;
        }
    if (best < 0) {
        best = 0;
        for (int i = 1; i < S.nit; i++) {
            bool bi = S.it[i].type == GD_BOMB, bb = S.it[best].type == GD_BOMB;
            if ((bi && !bb) || (bi == bb && S.it[i].key > S.it[best].key))
                best = i;
        }
    }
    memset(out, 0, sizeof *out);
    out->type = (uint8_t)S.it[best].type;
    out->key = S.it[best].key;
    out->rank = (uint8_t)(S.it[best].key & 15);
    out->len = 1;
    out->ncards = (uint8_t)S.n;
    return 0;
}

static void gd_deck(shed_card_t *out)
{
    shed_deck_build(out, 2, true);
}

static int gd_first_seat(const shed_game_t *g, int first)
{
    (void)g;
    return first;
}

/* The payer's highest card by power, wild hearts excepted. */
static int gd_top_power(const shed_game_t *g, int seat)
{
    shed_card_t list[SHED_MAX_CARDS];
    int n = shed_set_list(g->hand[seat], list), lv = gd_level_nv(g), top = -1;
    for (int i = 0; i < n; i++)
        if (!gd_is_wild(list[i], lv) && gd_card_power(list[i], lv) > top)
            top = gd_card_power(list[i], lv);
    return top;
}

/* After the deal: the level of the previous deal's winners, then tribute (or none). */
static void gd_start(shed_game_t *g)
{
    static const shed_set_t none = {{0, 0}};
    g->ntrib = 0;
    g->trib_stage = 0;
    for (int i = 0; i < 2; i++) {
        g->trib_payer[i] = g->trib_recv[i] = g->trib_card[i] = -1;
        g->trib_done[i] = 0;
    }
    if (!g->have_prev) {
        g->level = gd_rank_of_nv(0);
        g->phase = SHED_PHASE_PLAY;
        return;
    }
    int *f = g->prev_finish;
    g->level = gd_rank_of_nv(g->team_step[f[0] % 2]);
    if (g->prev_upgrade == 3) {
        g->ntrib = 2;
        g->trib_payer[0] = f[2];
        g->trib_payer[1] = f[3];
    } else {
        g->ntrib = 1;
        g->trib_payer[0] = f[3];
        g->trib_recv[0] = f[0];
    }
    int red = 0;
    for (int i = 0; i < g->ntrib; i++)
        red += shed_counts_get(shed_set_counts(g->hand[g->trib_payer[i]]), SHED_RANK_RJ);
    if (red == 2) {
        shed_game_push_event(g, SHED_EV_NO_TRIBUTE, g->trib_payer[0], 0, none);
        g->ntrib = 0;
        g->phase = SHED_PHASE_PLAY;
        g->turn = f[0];
        return;
    }
    g->phase = SHED_PHASE_TRIBUTE;
    g->trib_stage = 1;
    g->turn = g->trib_payer[0];
}

/* What a seat's hand says about giving: its highest power (tribute) and whether it holds a
 * card of 10 or lower (return tribute). */
typedef struct {
    int top;
    bool any_low;
} gd_give_info_t;

static gd_give_info_t gd_give_info(const shed_game_t *g, int seat)
{
    gd_give_info_t info = {.top = -1, .any_low = false};
    if (g->trib_stage == 1) {
        info.top = gd_top_power(g, seat);
        return info;
    }
    shed_card_t list[SHED_MAX_CARDS];
    int n = shed_set_list(g->hand[seat], list);
    for (int i = 0; i < n; i++) {
        int r = shed_card_rank(list[i]);
        info.any_low = info.any_low || (r < 13 && gd_nv(r) <= 8);
    }
    return info;
}

/* Is `card` a card the seat described by `info` may give now? */
static bool gd_give_ok(const shed_game_t *g, const gd_give_info_t *info, shed_card_t card)
{
    int lv = gd_level_nv(g);
    if (g->trib_stage == 1)
        return !gd_is_wild(card, lv) && gd_card_power(card, lv) == info->top;
    /* return tribute: a card of 10 or lower (natural value), if the receiver has one */
    int r = shed_card_rank(card);
    return !info->any_low || (r < 13 && gd_nv(r) <= 8);
}

/* The cards the player to act may give now, one per set; count or -ENOSPC. */
static int gd_legal_gives(const shed_game_t *g, shed_set_t *out, int cap)
{
    shed_card_t list[SHED_MAX_CARDS];
    int n = shed_set_list(g->hand[g->turn], list), k = 0;
    gd_give_info_t info = gd_give_info(g, g->turn);
    for (int i = 0; i < n; i++) {
        if (!gd_give_ok(g, &info, list[i]))
            continue;
        if (k >= cap)
            return -ENOSPC;
        out[k] = (shed_set_t){{0, 0}};
        shed_set_add(&out[k++], list[i]);
    }
    return k;
}

/*
 * Tribute and return tribute. Payers give in order; with two tributes the higher card goes
 * to the first out and the other to the second (equal cards: the first payer's goes to the
 * first out). Then each receiver returns a card to its payer, and the payer of the tribute
 * to the first out leads.
 */
static int gd_give(shed_game_t *g, const shed_action_t *a)
{
    shed_card_t card;
    shed_set_list(a->cards, &card);
    gd_give_info_t info = gd_give_info(g, a->seat);
    if (!gd_give_ok(g, &info, card))
        return SHED_E_TRIBUTE;
    g->nev = 0;
    g->hand[a->seat] = shed_set_minus(g->hand[a->seat], a->cards);
    if (g->trib_stage == 1) {
        int i = a->seat == g->trib_payer[0] ? 0 : 1;
        g->trib_card[i] = card;
        g->extra = shed_set_union(g->extra, a->cards); /* face down until both are given */
        if (i + 1 < g->ntrib) {
            g->turn = g->trib_payer[i + 1];
            shed_game_push_event(g, SHED_EV_TRIBUTE, a->seat, -1, a->cards);
            return SHED_OK;
        }
        if (g->ntrib == 2) {
            int lv = gd_level_nv(g);
            bool swap = gd_card_power((shed_card_t)g->trib_card[1], lv) >
                        gd_card_power((shed_card_t)g->trib_card[0], lv);
            g->trib_recv[swap ? 1 : 0] = g->prev_finish[0];
            g->trib_recv[swap ? 0 : 1] = g->prev_finish[1];
        }
        g->extra = (shed_set_t){{0, 0}};
        for (int t = 0; t < g->ntrib; t++) {
            shed_set_add(&g->hand[g->trib_recv[t]], (shed_card_t)g->trib_card[t]);
            shed_set_t one = {{0, 0}};
            shed_set_add(&one, (shed_card_t)g->trib_card[t]);
            shed_game_push_event(g, SHED_EV_TRIBUTE, g->trib_payer[t], g->trib_recv[t], one);
        }
        g->trib_stage = 2;
        g->turn = g->trib_recv[0];
        return SHED_OK;
    }
    int t = a->seat == g->trib_recv[0] && !g->trib_done[0] ? 0 : 1;
    g->trib_done[t] = 1;
    shed_set_add(&g->hand[g->trib_payer[t]], card);
    shed_game_push_event(g, SHED_EV_TRIBUTE, a->seat, g->trib_payer[t], a->cards);
    if (t + 1 < g->ntrib) {
        g->turn = g->trib_recv[t + 1];
        return SHED_OK;
    }
    g->trib_stage = 0;
    g->phase = SHED_PHASE_PLAY;
    g->turn = g->trib_recv[0] == g->prev_finish[0] ? g->trib_payer[0] : g->trib_payer[1];
    return SHED_OK;
}

/* ---- legal plays ------------------------------------------------------------------------ */

typedef struct {
    const shed_game_t *g;
    shed_set_t hand;
    int lv;                    /* level as a natural value */
    const shed_combo_t *beat;  /* NULL when leading */
    shed_set_t nat_pre[13][9]; /* the first m natural cards of each nv (card id order) */
    int nnat[13];
    shed_set_t nat;         /* the natural (non-wild, non-joker) cards */
    uint32_t present[5];    /* bit b = nv + 1 (and bit 0 for the ace, nv 12): a natural card of
                               suit 0..3, or of any suit [4], at that position */
    shed_set_t wild_pre[3]; /* the first u wild cards */
    int nwild;
    shed_set_t jok_pre[2][3]; /* [0] black, [1] red: the first k jokers */
    int njok[2];
    int want_n; /* cards in the move to beat, 0 leading */
    shed_set_t *keep;
    int nkeep;
    bool overflow;
} gd_gen_t;

/* Keeps candidate s, read as c, when it beats the move to beat (or there is none). */
static void gd_keep(gd_gen_t *G, shed_set_t s, const shed_combo_t *c)
{
    if (G->beat != NULL && !gd_beats(c, G->beat))
        return;
    if (G->nkeep < GD_CAND_MAX)
        G->keep[G->nkeep++] = s;
    else
        G->overflow = true;
}

/* Keeps candidate s when it classifies (as shed_game_apply() will) and beats. */
static void gd_try(gd_gen_t *G, shed_set_t s)
{
    shed_combo_t c;
    if (gd_classify(G->g, s, shed_set_eq(s, G->hand), &c) == 0)
        gd_keep(G, s, &c);
}

/* Keeps s, whose only reading is known (wild-free groups of one rank, jokers), when it beats:
 * the combination is the one gd_classify() gives such a set. */
static void gd_try_typed(gd_gen_t *G, shed_set_t s, int type, uint32_t key, int n)
{
    shed_combo_t c = {.type = (uint8_t)type,
                      .key = key,
                      .rank = (uint8_t)(key & 15),
                      .len = 1,
                      .ncards = (uint8_t)n};
    gd_keep(G, s, &c);
}

/* Could a set of n cards answer the move to beat (same size, or a bomb)? */
static bool gd_size_ok(const gd_gen_t *G, int n)
{
    return G->want_n == 0 || n == G->want_n || n >= 4;
}

/* The first natural card of natural value nv and `suit` (deck 0 before deck 1), or none. */
static inline shed_set_t gd_suit_card(const gd_gen_t *G, int nv, int suit)
{
    uint64_t bit = (uint64_t)1 << (4 * gd_rank_of_nv(nv) + suit);
    shed_set_t c = {{G->nat.w[0] & bit, 0}};
    if (c.w[0] == 0)
        c.w[1] = G->nat.w[1] & bit;
    return c;
}

/*
 * Run positions from a rank mask with one bit per nibble (bit 4r for rank r): position b =
 * nv + 1 of natural value nv = (r + 1) % 13, and position 0 for the ace below the 2. The
 * nibble bits are gathered into 13 contiguous bits first.
 */
static inline uint32_t gd_positions(uint64_t y)
{
    y = (y | y >> 3) & 0x0303030303030303ull;
    y = (y | y >> 6) & 0x000f000f000f000full;
    y = (y | y >> 12) & 0x000000ff000000ffull;
    y = (y | y >> 24) & 0xffffull; /* bit r: rank r */
    return (uint32_t)((y & 0x7ff) << 2 | ((y >> 11) & 1) << 13 | ((y >> 11) & 1) |
                      ((y >> 12) & 1) << 1);
}

/*
 * Runs of `len` positions from s with `unit` cards each, wilds filling gaps; `suit` >= 0
 * takes only cards of that suit (straight flushes). Position b = p + 1 of p = -1..12 (-1: the
 * ace below the 2). Only the runs the wilds can complete are built: for single cards the
 * missing positions of a run come from a presence mask, for pairs and trios from prefix sums.
 */
static void gd_gen_runs(gd_gen_t *G, int unit, int len, int suit)
{
    static const uint8_t absent5[32] = {5, 4, 4, 3, 4, 3, 3, 2, 4, 3, 3, 2, 3, 2, 2, 1,
                                        4, 3, 3, 2, 3, 2, 2, 1, 3, 2, 2, 1, 2, 1, 1, 0};
    if (unit == 1) {
        uint32_t m = G->present[suit >= 0 ? suit : 4];
        /* without wilds only complete windows count: bit b0 of `full` says b0..b0+4 is one */
        uint32_t full = m & m >> 1 & m >> 2 & m >> 3 & m >> 4;
        for (int b0 = 0; b0 + 5 <= 14; b0++) {
            if (G->nwild == 0 && !((full >> b0) & 1))
                continue;
            int missing = absent5[(m >> b0) & 31];
            if (missing > G->nwild)
                continue;
            shed_set_t set = G->wild_pre[missing];
            for (int b = b0; b < b0 + 5; b++) {
                int nv = b == 0 ? 12 : b - 1;
                if ((m >> b) & 1)
                    set = shed_set_union(set,
                                         suit >= 0 ? gd_suit_card(G, nv, suit) : G->nat_pre[nv][1]);
            }
            gd_try(G, set);
        }
        return;
    }
    int miss[15];
    miss[0] = 0;
    for (int b = 0; b < 14; b++) {
        int nv = b == 0 ? 12 : b - 1;
        miss[b + 1] = miss[b] + unit - (G->nnat[nv] < unit ? G->nnat[nv] : unit);
    }
    for (int b0 = 0; b0 + len <= 14; b0++) {
        int missing = miss[b0 + len] - miss[b0];
        if (missing > G->nwild)
            continue;
        shed_set_t set = G->wild_pre[missing];
        for (int b = b0; b < b0 + len; b++) {
            int nv = b == 0 ? 12 : b - 1;
            set = shed_set_union(set, G->nat_pre[nv][G->nnat[nv] < unit ? G->nnat[nv] : unit]);
        }
        gd_try(G, set);
    }
}

/* Orders card sets by (w[0], w[1]) (an inline quicksort: no comparator calls). */
static inline bool gd_set_less(shed_set_t x, shed_set_t y)
{
    return x.w[0] != y.w[0] ? x.w[0] < y.w[0] : x.w[1] < y.w[1];
}

static void gd_sort(shed_set_t *a, int n)
{
    while (n > 16) {
        shed_set_t x = a[0], y = a[n / 2], z = a[n - 1], pivot;
        if (gd_set_less(x, y))
            pivot = gd_set_less(y, z) ? y : (gd_set_less(x, z) ? z : x);
        else
            pivot = gd_set_less(x, z) ? x : (gd_set_less(y, z) ? z : y);
        int i = 0, j = n - 1;
        for (;;) {
            while (gd_set_less(a[i], pivot))
                i++;
            while (gd_set_less(pivot, a[j]))
                j--;
            if (i >= j)
                break;
            shed_set_t t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
        /* [0, j] <= pivot <= [j + 1, n): recurse into the smaller part, loop on the larger */
        if (j + 1 < n - j - 1) {
            gd_sort(a, j + 1);
            a += j + 1;
            n -= j + 1;
        } else {
            gd_sort(a + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (int i = 1; i < n; i++) {
        shed_set_t v = a[i];
        int j = i;
        for (; j > 0 && gd_set_less(v, a[j - 1]); j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/*
 * Legal plays of the player to act: candidate card sets (groups of one rank with and without
 * wilds, joker groups, full houses, straights and straight flushes, tubes, plates; only sizes
 * that can answer the move to beat) are classified exactly as shed_game_apply() will classify
 * them, kept when they beat, then sorted by (w[0], w[1]) and listed once each. Count or
 * -ENOSPC.
 *
 * When following, a family of candidates is skipped when none of its sets can read as the
 * move to beat's type or as a bomb: full houses (read as a full house, or as a 5-bomb that
 * is also a group of one rank with wilds), straights (a straight, or a straight flush that
 * is also the suit's run), tubes and plates (each other's type: "3344" + two wilds is both).
 */
static int gd_legal_plays(const shed_game_t *g, shed_set_t *out, int cap)
{
    static const shed_set_t none;
    gd_gen_t G;
    shed_set_t keep[GD_CAND_MAX];
    G.g = g;
    G.hand = g->hand[g->turn];
    G.lv = gd_level_nv(g);
    G.beat = g->beat.type ? &g->beat : NULL;
    G.want_n = g->beat.type ? g->beat.ncards : 0;
    G.keep = keep;
    G.nkeep = 0;
    G.overflow = false;
    G.nwild = 0;
    G.njok[0] = G.njok[1] = 0;
    G.wild_pre[0] = G.wild_pre[1] = G.wild_pre[2] = none;
    G.jok_pre[0][0] = G.jok_pre[1][0] = none;
    /* the hand rank by rank (deck 0's suits, then deck 1's: card id order) */
    int lv = G.lv, lr = gd_rank_of_nv(lv);
    uint64_t wild = (uint64_t)1 << (4 * lr + SHED_SUIT_H), ranks = ((uint64_t)1 << 52) - 1;
    G.nat.w[0] = G.hand.w[0] & ranks & ~wild;
    G.nat.w[1] = G.hand.w[1] & ranks & ~wild;
    uint64_t both = G.nat.w[0] | G.nat.w[1];
    for (int suit = 0; suit < 4; suit++)
        G.present[suit] = gd_positions((both >> suit) & 0x1111111111111ull);
    G.present[4] = gd_positions((both | both >> 1 | both >> 2 | both >> 3) & 0x1111111111111ull);
    for (int r = 0; r < 13; r++) {
        int nv = r == 12 ? 0 : r + 1, m = 0;
        shed_set_t acc = none;
        G.nat_pre[nv][0] = none;
        for (int deck = 0; deck < 2; deck++) {
            uint64_t nib = (G.nat.w[deck] >> (4 * r)) & 15;
            for (uint64_t x = nib; x; x &= x - 1) {
                acc.w[deck] |= (x & -x) << (4 * r);
                G.nat_pre[nv][++m] = acc;
            }
        }
        G.nnat[nv] = m;
    }
    for (int deck = 0; deck < 2; deck++) {
        if ((G.hand.w[deck] >> (4 * lr + SHED_SUIT_H)) & 1) {
            G.wild_pre[G.nwild + 1] = G.wild_pre[G.nwild];
            G.wild_pre[G.nwild + 1].w[deck] |= wild;
            G.nwild++;
        }
        for (int j = 0; j < 2; j++) {
            uint64_t bit = (uint64_t)1 << (j == 0 ? SHED_CARD_BJ : SHED_CARD_RJ);
            if (G.hand.w[deck] & bit) {
                int k = G.njok[j]++;
                G.jok_pre[j][k + 1] = G.jok_pre[j][k];
                G.jok_pre[j][k + 1].w[deck] |= bit;
            }
        }
    }
    /* groups of one rank, with and without wilds; wilds alone are level cards */
    for (int nv = 0; nv < 13; nv++)
        for (int u = 0; u <= G.nwild; u++)
            for (int m = (u == 0 ? 1 : 0); m <= G.nnat[nv] && m + u <= 8; m++) {
                if (m == 0 && nv != lv)
                    continue;
                if (!gd_size_ok(&G, m + u))
                    continue;
                if (u > 0) {
                    gd_try(&G, shed_set_union(G.nat_pre[nv][m], G.wild_pre[u]));
                    continue;
                }
                /* m natural cards of one rank: a single, pair, trio or bomb, nothing else */
                static const int type[9] = {0,       GD_SINGLE, GD_PAIR, GD_TRIO, GD_BOMB,
                                            GD_BOMB, GD_BOMB,   GD_BOMB, GD_BOMB};
                static const int bomb_class[9] = {0, 0, 0, 0, GD_B4, GD_B5, GD_B6, GD_B7, GD_B8};
                int pw = gd_power(nv, lv);
                gd_try_typed(&G, G.nat_pre[nv][m], type[m], (uint32_t)(bomb_class[m] * 16 + pw), m);
            }
    /* jokers: one or two of a colour (single, pair), all four (the joker bomb) */
    for (int j = 0; j < 2; j++)
        for (int k = 1; k <= G.njok[j]; k++)
            if (gd_size_ok(&G, k))
                gd_try_typed(&G, G.jok_pre[j][k], k == 1 ? GD_SINGLE : GD_PAIR, (uint32_t)(14 + j),
                             k);
    if (G.njok[0] == 2 && G.njok[1] == 2)
        gd_try_typed(&G, shed_set_union(G.jok_pre[0][2], G.jok_pre[1][2]), GD_BOMB, GD_BJOKER * 16,
                     4);
    int bt = G.beat ? G.beat->type : 0;
    if (bt == 0 || bt == GD_FULL_HOUSE) {
        for (int t = 0; t < 13; t++) {
            if (G.nnat[t] == 0)
                continue;
            for (int p = 0; p < 13; p++) {
                if (p == t)
                    continue;
                int mt = G.nnat[t] < 3 ? G.nnat[t] : 3, mp = G.nnat[p] < 2 ? G.nnat[p] : 2;
                int need = (3 - mt) + (2 - mp);
                if (need > G.nwild)
                    continue;
                if (need == 0) { /* three and two natural cards: a full house, nothing else */
                    gd_try_typed(&G, shed_set_union(G.nat_pre[t][3], G.nat_pre[p][2]),
                                 GD_FULL_HOUSE, (uint32_t)gd_power(t, lv), 5);
                    continue;
                }
                gd_try(&G, shed_set_union(shed_set_union(G.nat_pre[t][mt], G.nat_pre[p][mp]),
                                          G.wild_pre[need]));
            }
        }
    }
    if (bt == 0 || bt == GD_STRAIGHT)
        gd_gen_runs(&G, 1, 5, -1);
    for (int suit = 0; suit < 4; suit++)
        gd_gen_runs(&G, 1, 5, suit);
    if (bt == 0 || bt == GD_TUBE || bt == GD_PLATE) {
        gd_gen_runs(&G, 2, 3, -1);
        gd_gen_runs(&G, 3, 2, -1);
    }
    if (G.overflow)
        return -ENOSPC;
    /* each card set once, in order */
    gd_sort(keep, G.nkeep);
    int k = 0;
    for (int i = 0; i < G.nkeep; i++) {
        if (i > 0 && shed_set_eq(keep[i], keep[i - 1]))
            continue;
        if (k >= cap)
            return -ENOSPC;
        out[k++] = keep[i];
    }
    return k;
}

/* The deal is over once both players of a partnership are out. */
static bool gd_deal_over(const shed_game_t *g)
{
    return (g->out[0] && g->out[2]) || (g->out[1] && g->out[3]);
}

/*
 * The first out's partnership wins and goes up 3 levels if the partner came second, 2 if
 * third, 1 if last; each winner gets and each loser pays that many units x base stake. A
 * partnership at level A that wins with its partner not last wins the match (levels restart).
 * With SHED_OPT_GD_A_THREE_FAILS, a deal played at a partnership's own level A (it won the
 * previous deal) that does not win it the match is a failure at A; at the third, its level
 * drops back to 2.
 */
static void gd_settle(shed_game_t *g, int winner)
{
    static const shed_set_t none = {{0, 0}};
    /* complete the finishing order with the seats still holding cards, in seat order */
    int last = g->finish[g->nfinished - 1];
    for (int i = 1; i <= 4 && g->nfinished < 4; i++) {
        int s = (last + i) % 4;
        if (!g->out[s])
            g->finish[g->nfinished++] = s;
    }
    int partner = (winner + 2) % 4, place = 0;
    for (int i = 0; i < 4; i++)
        if (g->finish[i] == partner)
            place = i;
    int upgrade = place == 1 ? 3 : place == 2 ? 2 : 1;
    int team = winner % 2;
    for (int s = 0; s < 4; s++)
        g->settle.delta[s] = (s % 2 == team ? 1 : -1) * upgrade * g->cfg.base_stake;
    g->settle.units = upgrade;
    if (g->team_step[team] == 12 && upgrade >= 2) {
        shed_game_push_event(g, SHED_EV_MATCH, team, 12, none);
        g->team_step[0] = g->team_step[1] = 0;
        g->a_fails[0] = g->a_fails[1] = 0;
        g->have_prev = 0;
        return;
    }
    /* the partnership whose level this deal was played at (none in a match's first deal) */
    int declarer = g->have_prev ? g->prev_finish[0] % 2 : -1;
    bool failed_a = (g->cfg.options & SHED_OPT_GD_A_THREE_FAILS) && declarer >= 0 &&
                    g->team_step[declarer] == 12;
    g->team_step[team] = g->team_step[team] + upgrade > 12 ? 12 : g->team_step[team] + upgrade;
    shed_game_push_event(g, SHED_EV_LEVEL, team, g->team_step[team], none);
    if (failed_a) {
        g->a_fails[declarer]++;
        shed_game_push_event(g, SHED_EV_A_FAILED, declarer, g->a_fails[declarer], none);
        if (g->a_fails[declarer] >= 3) {
            g->a_fails[declarer] = 0;
            g->team_step[declarer] = 0;
            shed_game_push_event(g, SHED_EV_LEVEL, declarer, 0, none);
        }
    }
    memcpy(g->prev_finish, g->finish, sizeof g->prev_finish);
    g->prev_upgrade = upgrade;
    g->have_prev = 1;
}

const shed_rules_t shed_rules_guandan = {
    .name = "guandan",
    .seats = 4,
    .deck_size = 108,
    .hand_size = 27,
    .bidding = false,
    .max_bid = 0,
    .must_beat = false,
    .options = SHED_OPT_GD_A_THREE_FAILS,
    .deck = gd_deck,
    .classify = gd_classify,
    .beats = gd_beats,
    .first_seat = gd_first_seat,
    .check_opening = NULL,
    .legal_plays = gd_legal_plays,
    .on_play = NULL,
    .settle = gd_settle,
    .continue_after_out = true,
    .partner_offset = 2,
    .deal_over = gd_deal_over,
    .start = gd_start,
    .give = gd_give,
    .legal_gives = gd_legal_gives,
};
