/*
 * shed_card -- cards, decks, card sets and shuffling for the shedding games.
 *
 * A card is a small integer id laid out so that the cards of one rank of one deck sit in one
 * 4-bit nibble of a 64-bit word:
 *
 *     id = deck * 64 + rank * 4 + suit        rank 0..12 = 3 4 5 6 7 8 9 T J Q K A 2
 *     black joker = deck * 64 + 52            (nibble 13)
 *     red joker   = deck * 64 + 56            (nibble 14)
 *
 * Suits are 0..3 = diamonds, clubs, hearts, spades (Big Two's order, lowest first). The rank
 * order above is the "Chinese" order used by Dou Dizhu, Run Fast and Big Two; a game that ranks
 * cards differently maps the rank index itself. A card set (shed_set_t) is a 128-bit mask
 * holding up to two decks. Because of the nibble layout, the count of cards of each rank in a
 * set is a nibble-wise popcount (shed_set_counts).
 *
 * Shuffling comes in two explicit flavours: shed_shuffle_secure() is the kit's deck source
 * (common/deck.h: OpenSSL's DRBG, Fisher-Yates) and is what real deals use; shed_shuffle_seeded()
 * draws from a seeded xoshiro256** generator (shed_rng_t) so tests and replays are
 * reproducible. Nothing here allocates.
 */
#ifndef CROUPIER_SHED_CARD_H
#define CROUPIER_SHED_CARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHED_NRANKS 15  /* 13 ranks + black joker + red joker */
#define SHED_RANK_2 12  /* the rank index of the 2s */
#define SHED_RANK_BJ 13 /* black (small) joker */
#define SHED_RANK_RJ 14 /* red (big) joker */
#define SHED_CARD_BJ 52 /* id of the black joker of deck 0 */
#define SHED_CARD_RJ 56 /* id of the red joker of deck 0 */
#define SHED_CARD_NONE 255
#define SHED_MAX_CARDS 108 /* two decks with jokers */

enum { SHED_SUIT_D = 0, SHED_SUIT_C = 1, SHED_SUIT_H = 2, SHED_SUIT_S = 3 };

typedef uint8_t shed_card_t;

/* A set of cards from up to two decks: bit (id % 64) of word (id / 64). */
typedef struct {
    uint64_t w[2];
} shed_set_t;

/* Per-rank counts of a set, 4 bits per rank (rank r in bits 4r..4r+3), at most 8 per rank. */
typedef uint64_t shed_counts_t;

static inline shed_card_t shed_card_make(int deck, int rank, int suit)
{
    if (rank == SHED_RANK_BJ)
        return (shed_card_t)(deck * 64 + SHED_CARD_BJ);
    if (rank == SHED_RANK_RJ)
        return (shed_card_t)(deck * 64 + SHED_CARD_RJ);
    return (shed_card_t)(deck * 64 + rank * 4 + suit);
}
static inline int shed_card_rank(shed_card_t c)
{
    return (c % 64) / 4;
}
/* Suit of a card; jokers report -1. */
static inline int shed_card_suit(shed_card_t c)
{
    return (c % 64) >= SHED_CARD_BJ ? -1 : (c % 64) % 4;
}
static inline int shed_card_deck(shed_card_t c)
{
    return c / 64;
}
static inline bool shed_card_valid(shed_card_t c)
{
    unsigned low = c % 64;
    return c < 128 && (low < 52 || low == SHED_CARD_BJ || low == SHED_CARD_RJ);
}

static inline void shed_set_add(shed_set_t *s, shed_card_t c)
{
    s->w[c / 64] |= (uint64_t)1 << (c % 64);
}
static inline void shed_set_del(shed_set_t *s, shed_card_t c)
{
    s->w[c / 64] &= ~((uint64_t)1 << (c % 64));
}
static inline bool shed_set_has(shed_set_t s, shed_card_t c)
{
    return (s.w[c / 64] >> (c % 64)) & 1;
}
static inline bool shed_set_empty(shed_set_t s)
{
    return (s.w[0] | s.w[1]) == 0;
}
/* True when every card of `sub` is in `s`. */
static inline bool shed_set_contains(shed_set_t s, shed_set_t sub)
{
    return (sub.w[0] & ~s.w[0]) == 0 && (sub.w[1] & ~s.w[1]) == 0;
}
static inline shed_set_t shed_set_minus(shed_set_t a, shed_set_t b)
{
    shed_set_t r = {{a.w[0] & ~b.w[0], a.w[1] & ~b.w[1]}};
    return r;
}
static inline shed_set_t shed_set_union(shed_set_t a, shed_set_t b)
{
    shed_set_t r = {{a.w[0] | b.w[0], a.w[1] | b.w[1]}};
    return r;
}
static inline bool shed_set_eq(shed_set_t a, shed_set_t b)
{
    return a.w[0] == b.w[0] && a.w[1] == b.w[1];
}

/* Nibble-wise popcount of one 64-bit word of a set. */
static inline shed_counts_t shed_word_counts(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    return (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
}
/* Per-rank counts of a set (both decks added). */
static inline shed_counts_t shed_set_counts(shed_set_t s)
{
    return shed_word_counts(s.w[0]) + shed_word_counts(s.w[1]);
}
static inline int shed_counts_get(shed_counts_t c, int rank)
{
    return (int)((c >> (4 * rank)) & 15);
}
/* Number of cards in a set: its per-rank counts added up (SWAR, no popcount call on targets
 * without a popcount instruction). */
static inline int shed_set_size(shed_set_t s)
{
    shed_counts_t c = shed_set_counts(s); /* at most 8 per nibble */
    uint64_t t = (c & 0x0f0f0f0f0f0f0f0full) + ((c >> 4) & 0x0f0f0f0f0f0f0f0full);
    return (int)((t * 0x0101010101010101ull) >> 56);
}

/*
 * Picks cards out of `hand` matching per-rank `counts` (lowest suit, then lowest deck first)
 * and stores them in *out. Returns 0, or -ENOENT when the hand lacks some of them (then *out is
 * unspecified).
 */
int shed_set_pick(shed_set_t hand, shed_counts_t counts, shed_set_t *out);

/* Lists the cards of a set in id order into out (room for SHED_MAX_CARDS); returns the count. */
int shed_set_list(shed_set_t s, shed_card_t *out);

/* ---- text ------------------------------------------------------------------------------- */

/* Rank characters "3456789TJQKA2BR" indexed by rank; suit characters "dchs". */
extern const char shed_rank_chars[SHED_NRANKS + 1];
extern const char shed_suit_chars[5];

/* Rank index of a rank character (case-insensitive; "T" is the ten), or -1. */
int shed_rank_from_char(char ch);

/*
 * Parses a rank string such as "33344455566B" into per-rank counts, limiting each rank to
 * `max_per_rank` (4 for one deck, 1 per joker per deck). Returns 0, or -EINVAL with a reason
 * written to err (err may be NULL).
 */
int shed_counts_parse(const char *text, int decks, shed_counts_t *out, char *err, size_t errlen);

/* Writes counts as a sorted rank string (NUL-terminated); buf needs SHED_MAX_CARDS + 1 bytes. */
void shed_counts_format(shed_counts_t c, char *buf);

/*
 * Parses cards written as rank+suit pairs ("3d4sTh", optional spaces/commas; jokers "B"/"R"
 * without a suit) from one deck. Returns 0, or -EINVAL (bad text or a card twice) with a reason.
 */
int shed_set_parse(const char *text, shed_set_t *out, char *err, size_t errlen);

/* Writes a one-deck set as rank+suit pairs in rank order; buf needs 3 * SHED_MAX_CARDS bytes. */
void shed_set_format(shed_set_t s, char *buf);

/* ---- randomness ------------------------------------------------------------------------- */

/* A seeded, reproducible generator (xoshiro256**) for tests and replays. Not for real deals. */
typedef struct {
    uint64_t s[4];
} shed_rng_t;

/* Seeds the generator; equal seeds give equal streams. */
void shed_rng_seed(shed_rng_t *r, uint64_t seed);
uint64_t shed_rng_next(shed_rng_t *r);
/* Uniform integer in [0, n), n >= 1, without modulo bias. */
uint32_t shed_rng_below(shed_rng_t *r, uint32_t n);

/* The production shuffle: the kit's deck source (common/deck.h, docs/fairness.md). 0, or -EIO
 * when the generator failed (the order must not be dealt), -EINVAL for n < 0. */
int shed_shuffle_secure(shed_card_t *cards, int n);
/* Fisher-Yates shuffle from a seeded generator (reproducible). */
void shed_shuffle_seeded(shed_card_t *cards, int n, shed_rng_t *r);

/*
 * Fills `out` with a deck: `decks` copies of the 52 cards, plus both jokers of each copy when
 * `jokers` is true. Returns the number of cards.
 */
int shed_deck_build(shed_card_t *out, int decks, bool jokers);

#endif
