/*
 * bj_rng -- the explicit, seeded random number generator of the blackjack engine.
 *
 * Production tables shuffle with the kit's deck source (common/deck.h, docs/fairness.md) and
 * need no seed. Tests, replays and the simulator need shuffles they can reproduce, so they hand
 * the table one of these instead: xoshiro256** (Blackman and Vigna) seeded through
 * splitmix64. It is fast and statistically sound but NOT cryptographic: never use it for
 * real-money tables.
 *
 * The state is a plain struct owned by the caller (embed it or put it on the stack).
 */
#ifndef CROUPIER_BJ_RNG_H
#define CROUPIER_BJ_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} bj_rng_t;

/* Seeds the generator; the same seed always gives the same sequence. */
void bj_rng_seed(bj_rng_t *rng, uint64_t seed);
/* Next 64 random bits (inline: the shuffle calls it in its inner loop). */
static inline uint64_t bj_rng_next(bj_rng_t *rng)
{
    uint64_t *s = rng->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}
/* Uniform integer in [0, bound), without modulo bias; bound must be >= 1. */
uint32_t bj_rng_uniform(bj_rng_t *rng, uint32_t bound);

#endif
