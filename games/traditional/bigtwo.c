/*
 * bigtwo -- the Big Two rule set for the shed state machine (docs/rules/bigtwo.md): four
 * players, 13 cards each, ranks 3 < ... < A < 2, suits diamonds < clubs < hearts < spades;
 * singles, pairs, triples and five-card hands; the holder of the 3 of diamonds leads it.
 *
 * A card's id (rank * 4 + suit) is also its Big Two strength as a single.
 */
#include <errno.h>
#include <string.h>

#include "shed_rules.h"

enum {
    B2_SINGLE = 1,
    B2_PAIR,
    B2_TRIPLE,
    B2_STRAIGHT,
    B2_FLUSH,
    B2_FULL_HOUSE,
    B2_FOUR,
    B2_STRAIGHT_FLUSH,
};

static void b2_deck(shed_card_t *out)
{
    shed_deck_build(out, 1, false);
}

/* Classifies 1, 2, 3 or 5 cards; 0 or SHED_E_MALFORMED. key orders hands of one kind. */
static int b2_classify(const shed_game_t *g, shed_set_t cards, bool last, shed_combo_t *out)
{
    (void)g;
    shed_card_t c[SHED_MAX_CARDS];
    (void)last;
    if (cards.w[1] != 0 || (cards.w[0] >> 52) != 0)
        return SHED_E_MALFORMED;
    int n = shed_set_list(cards, c); /* ascending ids = ascending strength */
    memset(out, 0, sizeof *out);
    out->ncards = (uint8_t)n;
    out->len = 1;
    int top = c[n - 1], r0 = shed_card_rank(c[0]), rtop = shed_card_rank(c[n - 1]);
    if (n == 1) {
        out->type = B2_SINGLE;
    } else if ((n == 2 || n == 3) && r0 == rtop) {
        out->type = n == 2 ? B2_PAIR : B2_TRIPLE;
    } else if (n == 5) {
        int cnt[13] = {0}, distinct = 0, maxc = 0, maxrank = 0;
        bool flush = true;
        for (int i = 0; i < 5; i++) {
            int r = shed_card_rank(c[i]);
            if (cnt[r]++ == 0)
                distinct++;
            if (cnt[r] > maxc) {
                maxc = cnt[r];
                maxrank = r;
            }
            flush = flush && shed_card_suit(c[i]) == shed_card_suit(c[0]);
        }
        bool straight = distinct == 5 && rtop - r0 == 4 && rtop <= 11; /* no 2 in a straight */
        if (straight && flush) {
            out->type = B2_STRAIGHT_FLUSH;
        } else if (maxc == 4) {
            out->type = B2_FOUR;
            top = maxrank * 4 + 3;
        } else if (maxc == 3 && distinct == 2) {
            out->type = B2_FULL_HOUSE;
            top = maxrank * 4 + 3;
        } else if (flush) {
            out->type = B2_FLUSH;
            /* ranks from the highest down, then the suit */
            uint32_t k = 0;
            for (int i = 4; i >= 0; i--)
                k = k * 16 + (uint32_t)shed_card_rank(c[i]);
            top = (int)(k * 4 + (uint32_t)shed_card_suit(c[0]));
        } else if (straight) {
            out->type = B2_STRAIGHT;
        } else {
            return SHED_E_MALFORMED;
        }
    } else {
        return SHED_E_MALFORMED;
    }
    out->rank = (uint8_t)shed_card_rank(c[n - 1]);
    out->key = (uint32_t)top;
    return 0;
}

/* Same number of cards; five-card hands by kind first, then key. */
static bool b2_beats(const shed_combo_t *a, const shed_combo_t *b)
{
    if (a->ncards != b->ncards)
        return false;
    if (a->type != b->type)
        return a->ncards == 5 && a->type > b->type;
    return a->key > b->key;
}

/* The holder of the 3 of diamonds acts first. */
static int b2_first_seat(const shed_game_t *g, int first)
{
    (void)first;
    for (int s = 0; s < g->seats; s++)
        if (shed_set_has(g->hand[s], shed_card_make(0, 0, SHED_SUIT_D)))
            return s;
    return 0;
}

static int b2_check_opening(const shed_game_t *g, shed_set_t cards)
{
    (void)g;
    return shed_set_has(cards, shed_card_make(0, 0, SHED_SUIT_D)) ? 0 : SHED_E_OPENING;
}

typedef struct {
    const shed_game_t *g;
    shed_card_t c[SHED_MAX_CARDS]; /* the hand, ascending */
    int nc;
    uint8_t suit_after[SHED_MAX_CARDS]; /* cards of c[i]'s suit after c[i] */
    uint8_t rank_after[SHED_MAX_CARDS]; /* cards of c[i]'s rank after c[i] */
    shed_set_t *out;
    int cap;
    int n;
    bool overflow;
} b2_list_t;

/* Keeps a hand that beats the move to beat and obeys the opening rule; c is its combination. */
static void b2_keep(b2_list_t *L, shed_set_t s, const shed_combo_t *c)
{
    if (L->g->beat.type != 0 && !b2_beats(c, &L->g->beat))
        return;
    if (L->g->nplays == 0 && b2_check_opening(L->g, s) != 0)
        return;
    if (L->n >= L->cap) {
        L->overflow = true;
        return;
    }
    L->out[L->n++] = s;
}

/* Keeps the group c[i], c[j], c[k] (repeated indexes count once) of `size` cards. */
static void b2_group_keep(b2_list_t *L, int size, int i, int j, int k)
{
    static const int types[4] = {0, B2_SINGLE, B2_PAIR, B2_TRIPLE};
    shed_set_t s = {{0, 0}};
    shed_set_add(&s, L->c[i]);
    shed_set_add(&s, L->c[j]);
    shed_set_add(&s, L->c[k]);
    shed_combo_t cb = {.type = (uint8_t)types[size],
                       .rank = (uint8_t)shed_card_rank(L->c[k]),
                       .len = 1,
                       .ncards = (uint8_t)size,
                       .key = L->c[k]};
    b2_keep(L, s, &cb);
}

/*
 * Every set of `size` (1, 2 or 3) cards of one rank, in the order of the index combinations of
 * the ascending hand. Such a set is always a single, pair or triple: its combination is set
 * directly (as b2_classify would: key = highest card).
 */
static void b2_groups(b2_list_t *L, int size)
{
    const shed_card_t *c = L->c;
    for (int i = 0; i < L->nc && !L->overflow; i++) {
        int r = shed_card_rank(c[i]);
        if (size == 1) {
            b2_group_keep(L, 1, i, i, i);
            continue;
        }
        for (int j = i + 1; j < L->nc && shed_card_rank(c[j]) == r; j++) {
            if (size == 2)
                b2_group_keep(L, 2, i, j, j);
            else
                for (int k = j + 1; k < L->nc && shed_card_rank(c[k]) == r; k++)
                    b2_group_keep(L, 3, i, j, k);
        }
    }
}

/*
 * Five-card hands by depth-first search over the index combinations of the ascending hand, in
 * their lexicographic order, following only prefixes that can still become a hand: one suit
 * (flush), consecutive ranks from at most a 7 up (straight, no 2), or at most two ranks (full
 * house, four of a kind). Every completed set is one of these, classified by b2_classify.
 */
static void b2_five(b2_list_t *L, shed_set_t s, int depth, int from, int suit, int rank0, int rprev,
                    bool same_suit, bool run, int nranks)
{
    if (depth == 5) {
        shed_combo_t cb;
        if (b2_classify(L->g, s, false, &cb) == 0)
            b2_keep(L, s, &cb);
        return;
    }
    for (int i = from; i < L->nc - (4 - depth) && !L->overflow; i++) {
        shed_card_t card = L->c[i];
        int r = shed_card_rank(card), su = shed_card_suit(card);
        bool ss = depth == 0 || (same_suit && su == suit);
        bool rn = depth == 0 ? r <= 7 : run && r == rprev + 1;
        int nr = depth == 0 ? 1 : nranks + (r != rprev), rem = 4 - depth;
        /* a flush needs `rem` more cards of the suit; with two ranks, the rest are of this one */
        ss = ss && L->suit_after[i] >= rem;
        if (!ss && !rn && (nr > 2 || (nr == 2 && L->rank_after[i] < rem)))
            continue;
        shed_set_t t = s;
        shed_set_add(&t, card);
        b2_five(L, t, depth + 1, i + 1, depth == 0 ? su : suit, depth == 0 ? r : rank0, r, ss, rn,
                nr);
    }
}

/* Every set of 1, 2, 3 or 5 cards that is a hand, beats the move to beat and obeys the opening
 * rule: by size, then in the lexicographic order of the cards' positions in the hand. */
static int b2_legal_plays(const shed_game_t *g, shed_set_t *out, int cap)
{
    b2_list_t L = {.g = g, .out = out, .cap = cap};
    L.nc = shed_set_list(g->hand[g->turn], L.c);
    int want = g->beat.type ? g->beat.ncards : 0;
    for (int size = 1; size <= 5 && !L.overflow; size++) {
        if (size == 4 || (want && size != want) || size > L.nc)
            continue;
        if (size < 4) {
            b2_groups(&L, size);
        } else {
            int per_suit[4] = {0, 0, 0, 0};
            for (int i = L.nc - 1; i >= 0; i--) {
                int su = shed_card_suit(L.c[i]);
                L.suit_after[i] = (uint8_t)per_suit[su]++;
                bool same = i + 1 < L.nc && shed_card_rank(L.c[i + 1]) == shed_card_rank(L.c[i]);
                L.rank_after[i] = (uint8_t)(same ? L.rank_after[i + 1] + 1 : 0);
            }
            b2_five(&L, (shed_set_t){{0, 0}}, 0, 0, -1, -1, -1, true, true, 0);
        }
    }
    return L.overflow ? -ENOSPC : L.n;
}

/*
 * Each loser pays the winner one unit per card left, doubled with 10 to 12 cards left and
 * tripled with all 13.
 */
static void b2_settle(shed_game_t *g, int winner)
{
    int64_t total = 0;
    for (int s = 0; s < g->seats; s++) {
        if (s == winner)
            continue;
        int left = shed_set_size(g->hand[s]);
        int64_t units = left * (left == 13 ? 3 : left >= 10 ? 2 : 1);
        g->settle.delta[s] = -units * g->cfg.base_stake;
        total += units;
    }
    g->settle.delta[winner] = total * g->cfg.base_stake;
    g->settle.units = total;
}

const shed_rules_t shed_rules_bigtwo = {
    .name = "bigtwo",
    .seats = 4,
    .deck_size = 52,
    .hand_size = 13,
    .bidding = false,
    .max_bid = 0,
    .must_beat = false,
    .deck = b2_deck,
    .classify = b2_classify,
    .beats = b2_beats,
    .first_seat = b2_first_seat,
    .check_opening = b2_check_opening,
    .legal_plays = b2_legal_plays,
    .on_play = NULL,
    .settle = b2_settle,
};
