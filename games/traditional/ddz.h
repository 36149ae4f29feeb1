/*
 * ddz -- Dou Dizhu move rules: classifier, comparator and move generator.
 *
 * Rules in docs/rules/doudizhu.md. Moves are handled by *type*, ignoring suits, because suits
 * never matter in Dou Dizhu: a move is the per-rank counts of its cards (shed_counts_t, ranks
 * 0..12 = 3..2, 13 = black joker, 14 = red joker) plus its type, main rank and length. To play
 * a move from a real hand, pick the cards with shed_set_pick().
 *
 * Everything here is pure and allocation-free; the move generator writes into a caller array.
 */
#ifndef CROUPIER_DDZ_H
#define CROUPIER_DDZ_H

#include <stddef.h>

#include "shed_card.h"

typedef enum {
    DDZ_PASS = 0,
    DDZ_SOLO,
    DDZ_PAIR,
    DDZ_TRIO,
    DDZ_TRIO_SOLO,
    DDZ_TRIO_PAIR,
    DDZ_SOLO_CHAIN, /* 5..12 consecutive singles, no 2 or joker */
    DDZ_PAIR_CHAIN, /* 3..10 consecutive pairs */
    DDZ_TRIO_CHAIN, /* 2..6 consecutive trios ("airplane" without wings) */
    DDZ_PLANE_SOLO, /* 2..5 consecutive trios + as many solo kickers */
    DDZ_PLANE_PAIR, /* 2..4 consecutive trios + as many pair kickers */
    DDZ_FOUR_TWO_SOLO,
    DDZ_FOUR_TWO_PAIR,
    DDZ_BOMB,
    DDZ_ROCKET,
    DDZ_NTYPES
} ddz_type_t;

/* A move type. `rank` is the main rank (lowest rank of a chain, rank of the trio or quad);
 * `len` the chain length in units (1 for non-chains); `ncards` the number of cards. */
typedef struct {
    shed_counts_t counts;
    uint8_t type;
    uint8_t rank;
    uint8_t len;
    uint8_t ncards;
} ddz_move_t;

/* No hand produces more moves than the full 54-card deck does when leading (oracle). */
#define DDZ_MOVES_MAX 27471
#define DDZ_MAX_MOVE_CARDS 20

/* The type's name ("solo", "plane_solo", ...). */
const char *ddz_type_name(int type);

/*
 * Classifies per-rank counts as a move. Returns 0 and fills *out, or -EINVAL when the cards
 * are no valid combination (an empty set is no combination either). When a set of cards
 * could be read two ways the stronger reading is not needed: under these rules no count
 * vector is two different move types.
 */
int ddz_classify(shed_counts_t counts, ddz_move_t *out);

/* True when `a` may be played on `b` (b->type == DDZ_PASS means leading: anything goes). */
bool ddz_beats(const ddz_move_t *a, const ddz_move_t *b);

/*
 * Generates every move type the hand can play on `beat` (NULL or a DDZ_PASS move: leading),
 * never the pass itself. Writes at most `cap` moves to out. Returns the number of moves, or
 * -ENOSPC when they do not fit in cap (DDZ_MOVES_MAX always fits).
 */
int ddz_moves_generate(shed_counts_t hand, const ddz_move_t *beat, ddz_move_t *out, size_t cap);

/* Called for each generated move; returning non-zero stops the generation. */
typedef int (*ddz_visit_cb)(void *ctx, const ddz_move_t *move);

/*
 * Like ddz_moves_generate, but hands each move to visit(ctx, move) instead of storing it; the
 * move pointer is valid only during the call. Once visit returns non-zero no further call is
 * made. Returns the number of moves visited, or -ECANCELED when visit asked to stop.
 */
int ddz_moves_visit(shed_counts_t hand, const ddz_move_t *beat, ddz_visit_cb visit, void *ctx);

#endif
