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
 * card (one SIMD add where the target has one). The first lane holds, in its low 16 bits, one
 * counter per suit that starts at 3, so bit 3 of a suit's nibble is set once it holds five
 * cards, and in its top 25 bits a perfect-hash input: the sum of per-rank keys (every multiset
 * of at most four cards per rank sums to a distinct number below 2^25) times an odd constant,
 * modulo 2^25. Multiplication distributes over the sum, so each card's constant carries its
 * rank key already multiplied and the sum wraps at bit 64 by itself: no multiply at lookup
 * time. The multiply is a bijection modulo 2^25, so no two multisets share a row (top 13 bits)
 * and a column (low 12 bits), and it scatters them evenly, so first-fit displacement packs
 * the 73,775 multisets of 5..7 cards into 162 KiB of 16-bit values (89 % full) with 32 KiB of
 * 32-bit row offsets (the previous design used 230 + 144 KiB). The second lane is the set of
 * cards, 16 bits per suit; a flush is looked up by its suit's 13-bit rank set (16 KiB).
 * holdem_cards_value() evaluates a card array with one 64-bit add per card (the first lane
 * only), looks seven cards up in a table of seven-card multisets alone (16 KiB of 16-bit
 * displacements + 102 KiB of values), and rebuilds the flush suit's ranks from the cards in
 * the rare flush case. All tables are generated at build time by holdem_eval_gen.c; nothing
 * generated is stored in the source tree.
 *
 * For enumerations (many hands sharing their first cards) holdem_enum.h has a card-by-card
 * state machine: one table read per card, but an 80 MiB table built at run time.
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
 * fields are private: lane 0 = suit counters (bits 0..15) + hash of the rank-key sum (bits
 * 39..63), lane 1 = bit 16 * suit + rank for each card.
 */
typedef struct {
    holdem_lanes_t_ lanes_;
} holdem_hand_t;

/* Private: the evaluator's tables, generated at build time by holdem_eval_gen.c. */
extern const holdem_lanes_t_ holdem_eval_cards_[HOLDEM_CARDS]; /* one card's increment */
extern const uint64_t holdem_eval_card_keys_[HOLDEM_CARDS];    /* its lane 0 alone */
extern const uint16_t holdem_eval_flush_values_[8192];
extern const uint32_t holdem_eval_offsets_[];
extern const uint16_t holdem_eval_rank_values_[];
extern const uint32_t holdem_eval_rank_values_size_; /* entries in holdem_eval_rank_values_ */
extern const uint16_t holdem_eval_disp7_[];          /* the same for seven-card multisets alone */
extern const uint16_t holdem_eval_rank_values7_[];
extern const uint32_t holdem_eval_rank_values7_size_;
extern const uint32_t holdem_eval_category_first_[];

#define HOLDEM_EVAL_EMPTY_KEY 0x3333ull  /* every suit counter at 3 */
#define HOLDEM_EVAL_FLUSH_BITS 0x8888ull /* bit 3 of each suit counter */
#define HOLDEM_EVAL_HASH_MUL 0x7f4a7c15u /* odd: a bijection modulo 2^25 */
#define HOLDEM_EVAL_HASH_BITS 25         /* rank-key sums are below 2^25 */
#define HOLDEM_EVAL_HASH_SHIFT 39        /* lane 0 bits 39..63 hold the hash */
#define HOLDEM_EVAL_ROW_SHIFT 12         /* column bits; the remaining 13 pick the row */
#define HOLDEM_EVAL_ROW_SHIFT7 12        /* the same for the seven-card table */

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

/*
 * Private: the value of a hand without a flush, from the hash in lane 0: the slot is the hash
 * plus its row's offset (modulo 2^32), so a lookup is two shifts, an add and two loads.
 */
static inline uint16_t holdem_eval_rank_value_(uint64_t key)
{
    uint32_t x = (uint32_t)(key >> HOLDEM_EVAL_HASH_SHIFT);
    uint32_t row = (uint32_t)(key >> (HOLDEM_EVAL_HASH_SHIFT + HOLDEM_EVAL_ROW_SHIFT));
    return holdem_eval_rank_values_[(uint32_t)(x + holdem_eval_offsets_[row])];
}

/* Private: the same for a hand of exactly seven cards, through the smaller seven-card table. */
static inline uint16_t holdem_eval_rank_value7_(uint64_t key)
{
    uint32_t x = (uint32_t)(key >> HOLDEM_EVAL_HASH_SHIFT);
    uint32_t row = (uint32_t)(key >> (HOLDEM_EVAL_HASH_SHIFT + HOLDEM_EVAL_ROW_SHIFT7));
    return holdem_eval_rank_values7_[(x & ((1u << HOLDEM_EVAL_ROW_SHIFT7) - 1)) +
                                     holdem_eval_disp7_[row]];
}

/* Private: the suit (0..3) whose counter in key shows five cards or more. */
static inline unsigned holdem_eval_flush_suit_(uint64_t key)
{
    /* Written apart from the "key & HOLDEM_EVAL_FLUSH_BITS" test (bits 3, 7, 11, 15 moved to
     * 19, 23, 27, 31) so that the compiler keeps that test a single instruction. */
    return ((unsigned)__builtin_ctz((uint32_t)key << 16 & 0x88880000u) - 19) >> 2;
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
