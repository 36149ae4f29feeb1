/*
 * holdem_eval -- cards and the poker hand evaluator (5, 6 or 7 cards).
 *
 * A card is a small integer 0..51: rank * 4 + suit, ranks 0 = deuce .. 12 = ace, suits
 * 0..3 = clubs, diamonds, hearts, spades; written "As", "Td", "2c".
 *
 * A hand value is an equivalence class 1..7462 (HOLDEM_VALUE_MAX): the higher value wins and
 * equal values tie. Classes are ordered by category (high card 1..1277, one pair, two pair,
 * three of a kind, straight, flush, full house, four of a kind, straight flush 7453..7462).
 *
 * How it is fast: a hand is a pair of 64-bit lanes built by adding one 16-byte constant per
 * card (one SIMD add where the target has one). The first lane holds, in its low 32 bits, the
 * sum of a per-rank key (every multiset of at most four cards per rank sums to a distinct
 * number below 2^25) and, in bits 32..47, one counter per suit that starts at 3, so bit 3 of a
 * suit's nibble is set once it holds five cards. The second lane is the set of cards, 16 bits
 * per suit. A flush is looked up by its suit's 13-bit rank set (8,192 entries). Anything else
 * goes through a perfect hash of the rank key: the key times an odd constant modulo 2^25 (a
 * bijection, so no two keys share a row and a column; one 32-bit multiply), split into a row
 * (high 14 bits) and a column (low 11 bits); the slot is the column plus twice the row's 16-bit
 * displacement. The tables are ~150 KiB of 16-bit values, 32 KiB of displacements and 16 KiB
 * of flushes, small enough to stay in L2 under random access. holdem_cards_value() evaluates a
 * card array with one 64-bit add per card (the first lane only) and rebuilds the flush suit's
 * ranks from the cards in the rare flush case. All tables are generated at build time by
 * holdem_eval_gen.c; nothing generated is stored in the source tree.
 */
#ifndef CROUPIER_HOLDEM_EVAL_H
#define CROUPIER_HOLDEM_EVAL_H

#include <stdint.h>

#define HOLDEM_CARDS 52
#define HOLDEM_VALUE_MAX 7462

typedef enum {
    HOLDEM_HIGH_CARD = 0,
    HOLDEM_ONE_PAIR = 1,
    HOLDEM_TWO_PAIR = 2,
    HOLDEM_THREE_OF_A_KIND = 3,
    HOLDEM_STRAIGHT = 4,
    HOLDEM_FLUSH = 5,
    HOLDEM_FULL_HOUSE = 6,
    HOLDEM_FOUR_OF_A_KIND = 7,
    HOLDEM_STRAIGHT_FLUSH = 8,
} holdem_category_t;

#define HOLDEM_CATEGORIES 9

/* Private: two 64-bit lanes, added as one vector (GCC/clang vector extension). */
typedef uint64_t holdem_lanes_t_ __attribute__((vector_size(16)));

/*
 * A partial or complete hand; build it with holdem_hand_empty() and holdem_hand_add(). The
 * fields are private: lane 0 = rank-key sum (bits 0..31) + suit counters (bits 32..47),
 * lane 1 = bit 16 * suit + rank for each card.
 */
typedef struct {
    holdem_lanes_t_ lanes_;
} holdem_hand_t;

/* Private: the evaluator's tables, generated at build time by holdem_eval_gen.c. */
extern const holdem_lanes_t_ holdem_eval_cards_[HOLDEM_CARDS]; /* one card's increment */
extern const uint64_t holdem_eval_card_keys_[HOLDEM_CARDS];    /* its lane 0 alone */
extern const uint16_t holdem_eval_flush_values_[8192];
extern const uint16_t holdem_eval_disp_[];
extern const uint16_t holdem_eval_rank_values_[];
extern const uint32_t holdem_eval_rank_values_size_; /* entries in holdem_eval_rank_values_ */
extern const uint16_t holdem_eval_disp7_[];          /* the same for seven-card multisets alone */
extern const uint16_t holdem_eval_rank_values7_[];
extern const uint32_t holdem_eval_rank_values7_size_;
extern const uint32_t holdem_eval_category_first_[];

#define HOLDEM_EVAL_EMPTY_KEY (0x3333ull << 32)  /* every suit counter at 3 */
#define HOLDEM_EVAL_FLUSH_BITS (0x8888ull << 32) /* bit 3 of each suit counter */
#define HOLDEM_EVAL_HASH_MUL 0x7f4a7c15u         /* odd: a bijection modulo 2^25 */
#define HOLDEM_EVAL_HASH_BITS 25                 /* rank-key sums are below 2^25 */
#define HOLDEM_EVAL_ROW_SHIFT 11                 /* column bits; the remaining 14 pick the row */
#define HOLDEM_EVAL_ROW_SHIFT7 12                /* seven cards alone: 12 column bits, 8,192 rows */

static inline holdem_hand_t holdem_hand_empty(void)
{
    holdem_hand_t h = {{HOLDEM_EVAL_EMPTY_KEY, 0}};
    return h;
}

/* Adds one card (0..51). Adding a card twice, or more than 7 cards, gives a meaningless hand. */
static inline holdem_hand_t holdem_hand_add(holdem_hand_t h, int card)
{
    h.lanes_ += holdem_eval_cards_[card];
    return h;
}

/* The union of two hands without common cards (for instance hole cards and a board). */
static inline holdem_hand_t holdem_hand_combine(holdem_hand_t a, holdem_hand_t b)
{
    const holdem_lanes_t_ empty = {HOLDEM_EVAL_EMPTY_KEY, 0};
    holdem_hand_t h = {a.lanes_ + b.lanes_ - empty};
    return h;
}

/* Private: the value of a hand without a flush, from its rank-key sum (low 32 bits of key). */
static inline uint16_t holdem_eval_rank_value_(uint64_t key)
{
    uint32_t x = ((uint32_t)key * HOLDEM_EVAL_HASH_MUL) & ((1u << HOLDEM_EVAL_HASH_BITS) - 1);
    uint32_t slot = (x & ((1u << HOLDEM_EVAL_ROW_SHIFT) - 1)) +
                    2u * holdem_eval_disp_[x >> HOLDEM_EVAL_ROW_SHIFT];
    return holdem_eval_rank_values_[slot];
}

/* Private: the same for a hand of exactly seven cards, through the smaller seven-card table. */
static inline uint16_t holdem_eval_rank_value7_(uint64_t key)
{
    uint32_t x = ((uint32_t)key * HOLDEM_EVAL_HASH_MUL) & ((1u << HOLDEM_EVAL_HASH_BITS) - 1);
    uint32_t slot = (x & ((1u << HOLDEM_EVAL_ROW_SHIFT7) - 1)) +
                    holdem_eval_disp7_[x >> HOLDEM_EVAL_ROW_SHIFT7];
    return holdem_eval_rank_values7_[slot];
}

/* Private: the suit (0..3) whose counter in key shows five cards or more. */
static inline unsigned holdem_eval_flush_suit_(uint64_t key)
{
    /* Written apart from the "key & HOLDEM_EVAL_FLUSH_BITS" test so that the test stays one
     * instruction in the common path. */
    return (unsigned)__builtin_ctz((uint32_t)(key >> 32) & 0x8888u) >> 2;
}

/*
 * The value (1..HOLDEM_VALUE_MAX) of the best five-card hand in a hand of 5, 6 or 7 cards.
 * A meaningless hand (a card added twice, more than 7 cards) gives a meaningless value but
 * never reads outside the tables.
 */
static inline uint16_t holdem_hand_value(holdem_hand_t h)
{
    uint64_t key = h.lanes_[0];
    if (__builtin_expect((key & HOLDEM_EVAL_FLUSH_BITS) != 0, 0))
        return holdem_eval_flush_values_[(h.lanes_[1] >> (16 * holdem_eval_flush_suit_(key))) &
                                         0x1fff];
    return holdem_eval_rank_value_(key);
}

/* Private: the flush value of cards whose given suit holds five or more (out of line: rare). */
uint16_t holdem_eval_flush_cards_(const uint8_t *cards, int n, unsigned suit);

/*
 * The value of n (5..7) cards, UNCHECKED: the cards must be below 52 (use holdem_eval_cards()
 * for untrusted input); repeated cards give a meaningless value, read inside the tables. The
 * fastest way from a card array: one 64-bit table add per card; only a flush (about 3 % of
 * seven-card hands) walks the cards again to collect its suit's ranks.
 */
static inline uint16_t holdem_cards_value(const uint8_t *cards, int n)
{
    const uint64_t *k = holdem_eval_card_keys_;
    uint64_t key = HOLDEM_EVAL_EMPTY_KEY;
    if (n == 7) {
        /* A balanced sum: three dependent adds after the loads instead of seven. */
        key += ((k[cards[0]] + k[cards[1]]) + (k[cards[2]] + k[cards[3]])) +
               ((k[cards[4]] + k[cards[5]]) + k[cards[6]]);
    } else {
        for (int i = 0; i < n; i++)
            key += k[cards[i]];
    }
    if (__builtin_expect((key & HOLDEM_EVAL_FLUSH_BITS) != 0, 0))
        return holdem_eval_flush_cards_(cards, n, holdem_eval_flush_suit_(key));
    return n == 7 ? holdem_eval_rank_value7_(key) : holdem_eval_rank_value_(key);
}

/* Evaluates n (5..7) distinct cards. Returns the value, or -EINVAL for a bad count or card. */
int holdem_eval_cards(const uint8_t *cards, int n);

/* The category of a value 1..HOLDEM_VALUE_MAX. */
holdem_category_t holdem_value_category(uint16_t value);
/* The rank of a value within its category (1 = weakest of the category). */
int holdem_value_rank_in_category(uint16_t value);
/* "straight flush", "four of a kind", ... */
const char *holdem_category_name(holdem_category_t cat);

/* Parses "As" (rank 23456789TJQKA, suit cdhs, either case). Returns the card or -EINVAL. */
int holdem_card_parse(const char *s);
/*
 * Parses a run of cards "AsKsQs..." into out (at most max). Returns the count, or -EINVAL on a
 * bad card or a repeated card, or -E2BIG when there are more than max.
 */
int holdem_cards_parse(const char *s, uint8_t *out, int max);
/* Writes the two-character name of a card into buf (at least 3 bytes). Returns buf. */
char *holdem_card_format(int card, char *buf);

#endif
