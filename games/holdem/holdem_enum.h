/*
 * holdem_enum -- an incremental seven-card evaluator for enumeration: a card-by-card state
 * machine (the technique behind the "Two Plus Two" evaluator; this design and code are our own).
 *
 * A state stands for a partial hand of k = 0..6 cards, reduced to what can still matter for
 * the seven-card value: the 13 rank counts and, for each of the four real suits, either "dead"
 * (it can no longer reach five cards: count + (7 - k) < 5) or its 13-bit rank set. Real suit
 * labels are kept, so adding a card to a state is one read: entry [state + card] of a flat
 * uint32 table holds the next state (its row's first entry, a multiple of 52) for partial hands
 * of 0..5 cards; for a six-card state, entry [state + card] of a uint16 table holds the value of
 * the seven cards, exactly what holdem_cards_value() gives. The builder merges states whose rows
 * are identical (bottom-up, so two states merge when every completion gets the same value) and
 * numbers them level by level in the order an exploration with cards in increasing order first
 * reaches them. Result: 612,977 states explored, 546,082 after merging (260,534 of 0..5 cards,
 * 285,548 of six cards), 52 MiB + 28 MiB = 80 MiB, built in about 2.3 s of one core.
 *
 * Use: for an enumeration of many hands sharing prefixes (every hand of a deck, every board for
 * given hole cards), where a hand costs one table read per card added and the seventh read is
 * the value; a loop over the seventh card reads consecutive entries of one row, which the compiler
 * vectorises (several values per load). For hands in random order use holdem_cards_value()
 * (holdem_eval.h): this table is 80 MiB, so a random hand costs up to seven cache misses.
 *
 * Any order of the same distinct cards reaches the same state and value. A repeated card (or a
 * fifth copy of a rank) is the caller's error: it gives a meaningless state or value, but every
 * read stays inside the table. Cards are 0..51 as in holdem_eval.h; a card outside that range is
 * undefined behaviour (unchecked, for speed).
 */
#ifndef CROUPIER_HOLDEM_ENUM_H
#define CROUPIER_HOLDEM_ENUM_H

#include <stddef.h>
#include <stdint.h>

/* The evaluator: an immutable table, safe to share between threads once created. */
typedef struct holdem_enum {
    const uint32_t *table_;  /* private: rows of 52 successors, states of 0..5 cards */
    const uint16_t *values_; /* private: rows of 52 values, six-card states */
    size_t entries_;         /* private: entries in table_ */
    size_t entries6_;        /* private: entries in values_ */
    uint32_t states_;        /* private: states (rows) after merging */
    uint32_t raw_states_;    /* private: states before merging */
    void *mem_;              /* private: the allocation holding table_ */
    size_t mem_size_;        /* private */
} holdem_enum_t;

/*
 * Builds the tables (about 2.3 s on one core, 80 MiB). Returns the evaluator, owned by
 * the caller (free it with holdem_enum_destroy()), or NULL when memory runs out.
 */
holdem_enum_t *holdem_enum_create(void);
/* Frees the evaluator; NULL is a no-op. */
void holdem_enum_destroy(holdem_enum_t *e);

/* Bytes of the transition table. */
static inline size_t holdem_enum_table_bytes(const holdem_enum_t *e)
{
    return e->entries_ * sizeof(uint32_t) + e->entries6_ * sizeof(uint16_t);
}

/* States after merging (rows of the table), and before merging. */
static inline uint32_t holdem_enum_state_count(const holdem_enum_t *e)
{
    return e->states_;
}
static inline uint32_t holdem_enum_raw_state_count(const holdem_enum_t *e)
{
    return e->raw_states_;
}

/* The state of the empty hand. */
static inline uint32_t holdem_enum_root(const holdem_enum_t *e)
{
    (void)e;
    return 0;
}

/* The state after adding card (0..51) to a state of 0..5 cards. */
static inline uint32_t holdem_enum_next(const holdem_enum_t *e, uint32_t state, int card)
{
    /* pointer arithmetic, not a uint32 sum: the compiler can fold the row into the address
     * and, in a loop over consecutive cards, read several entries per instruction */
    return (e->table_ + state)[card];
}

/*
 * The value (1..HOLDEM_VALUE_MAX, as holdem_cards_value()) of the seven cards made by adding
 * card (0..51) to a state of six cards.
 */
static inline uint32_t holdem_enum_value(const holdem_enum_t *e, uint32_t state, int card)
{
    return (e->values_ + state)[card];
}

#endif
