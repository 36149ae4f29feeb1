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
 * How it is fast: a hand is two 64-bit words built by adding per-card constants. The first
 * word holds, in its low 32 bits, the sum of a per-rank key (5^rank, so every multiset of at
 * most four cards per rank sums to a distinct number) and, in its high bits, one counter per
 * suit that starts at 3, so bit 3 of a suit's nibble is set once it holds five cards. The
 * second word is the set of cards, 16 bits per suit. A flush is looked up by its suit's
 * 13-bit rank set (8,192 entries); anything else by the rank key through a displacement
 * perfect hash into a table of 16-bit values. All tables are generated at build time by
 * holdem_eval_gen.c (about a second of work); nothing generated is stored in the source tree.
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

/* A partial or complete hand; build it with holdem_hand_empty() and holdem_hand_add(). */
typedef struct {
    uint64_t key;  /* rank-key sum (low 32 bits) + suit counters (bits 32..47) */
    uint64_t mask; /* bit 16 * suit + rank for each card */
} holdem_hand_t;

/* Private: the evaluator's tables, generated at build time by holdem_eval_gen.c. */
extern const holdem_hand_t holdem_eval_cards_[HOLDEM_CARDS]; /* one card as a hand */
extern const uint16_t holdem_eval_flush_values_[8192];
extern const uint32_t holdem_eval_offsets_[];
extern const uint16_t holdem_eval_rank_values_[];
extern const uint32_t holdem_eval_category_first_[];

#define HOLDEM_EVAL_ROW_SHIFT 9

static inline holdem_hand_t holdem_hand_empty(void)
{
    holdem_hand_t h = {0x3333ull << 32, 0};
    return h;
}

/* Adds one card (0..51). Adding a card twice, or more than 7 cards, gives a meaningless hand. */
static inline holdem_hand_t holdem_hand_add(holdem_hand_t h, int card)
{
    h.key += holdem_eval_cards_[card].key;
    h.mask |= holdem_eval_cards_[card].mask;
    return h;
}

static inline holdem_hand_t holdem_hand_combine(holdem_hand_t a, holdem_hand_t b)
{
    holdem_hand_t h = {a.key + b.key - (0x3333ull << 32), a.mask | b.mask};
    return h;
}

/* The value (1..HOLDEM_VALUE_MAX) of the best five-card hand in a hand of 5, 6 or 7 cards. */
static inline uint16_t holdem_hand_value(holdem_hand_t h)
{
    uint64_t flush = (h.key >> 32) & 0x8888;
    if (flush) {
        unsigned suit = (unsigned)__builtin_ctzll(flush) >> 2;
        return holdem_eval_flush_values_[(h.mask >> (16 * suit)) & 0x1fff];
    }
    uint32_t k = (uint32_t)h.key;
    return holdem_eval_rank_values_[(uint32_t)(k +
                                               holdem_eval_offsets_[k >> HOLDEM_EVAL_ROW_SHIFT])];
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
