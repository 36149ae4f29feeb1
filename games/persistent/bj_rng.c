/* bj_rng -- xoshiro256** seeded by splitmix64; see bj_rng.h. */
#include "bj_rng.h"

static uint64_t bj_rng_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void bj_rng_seed(bj_rng_t *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = bj_rng_splitmix(&x);
}

/*
 * Lemire's multiply-and-shift bounded integer with rejection of the biased low range
 * ("Fast Random Integer Generation in an Interval", 2019): exact uniformity, and a division
 * only in the rare case a rejection threshold has to be computed.
 */
uint32_t bj_rng_uniform(bj_rng_t *rng, uint32_t bound)
{
    uint64_t m = (uint64_t)(uint32_t)(bj_rng_next(rng) >> 32) * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = -bound % bound;
        while (low < threshold) {
            m = (uint64_t)(uint32_t)(bj_rng_next(rng) >> 32) * bound;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}
