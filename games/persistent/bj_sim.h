/*
 * bj_sim -- plays many rounds of the real table code with a basic-strategy player.
 *
 * One seat, one flat bet per round, no insurance, decisions from bj_strategy for the same
 * rules; the shoe is shuffled by a seeded bj_rng so a run is reproducible. The result is the
 * mean return per initial bet, its standard error and the per-round variance, which the
 * published figures for each rule set can be checked against.
 */
#ifndef CROUPIER_BJ_SIM_H
#define CROUPIER_BJ_SIM_H

#include <stdint.h>

#include "blackjack.h"

typedef struct {
    uint64_t rounds;
    int64_t bet;
    int64_t net;     /* chips won (negative: lost) over every round */
    double mean;     /* mean return per initial bet (-0.00281 is -0.281 %) */
    double variance; /* per-round variance of the return per initial bet */
    double stderr_mean;
    uint64_t hands; /* hands played (splits count) */
    uint64_t shoes; /* shuffles */
} bj_sim_result_t;

/*
 * Plays rounds rounds with bet chips each. The bet must be within the table limits, and
 * such that blackjack, surrender and insurance pay whole chips (even, and bet * num a
 * multiple of den); otherwise BJ_ERR_BET_LIMIT with a reason in err. BJ_ERR_INVALID for bad
 * rules (reason in err). Any refusal by the table of a strategy action is a bug and returns
 * BJ_ERR_PHASE.
 */
int bj_sim_run(const bj_rules_t *rules, uint64_t rounds, uint64_t seed, int64_t bet,
               bj_sim_result_t *out, char *err, size_t errlen);

#endif
