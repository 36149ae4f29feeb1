/* bj_sim -- the basic-strategy simulator; see bj_sim.h. */
#include "bj_sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bj_strategy.h"

int bj_sim_run(const bj_rules_t *rules, uint64_t rounds, uint64_t seed, int64_t bet,
               bj_sim_result_t *out, char *err, size_t errlen)
{
    int rc = bj_rules_validate(rules, err, errlen);
    if (rc != 0)
        return rc;
    if (bet < rules->min_bet || bet > rules->max_bet || bet % 2 != 0 ||
        (bet * rules->bj_pay_num) % rules->bj_pay_den != 0) {
        snprintf(err, errlen,
                 "bet %lld must be within %lld..%lld, even, and pay %d:%d in whole chips",
                 (long long)bet, (long long)rules->min_bet, (long long)rules->max_bet,
                 rules->bj_pay_num, rules->bj_pay_den);
        return BJ_ERR_BET_LIMIT;
    }
    memset(out, 0, sizeof(*out));
    bj_rng_t rng;
    bj_rng_seed(&rng, seed);
    bj_strategy_t *strategy = NULL;
    bj_table_t *t = NULL;
    uint64_t shoes = 0;
    rc = bj_strategy_create(rules, &strategy);
    if (rc != 0)
        goto fail_strategy;
    /* No event callback: the simulator reads the table directly, and shuffles are counted
     * from the shoe id at the end. */
    /* The player sits alone; a one-seat table plays exactly the same game for that seat. */
    bj_rules_t table_rules = *rules;
    table_rules.seats = 1;
    rc = bj_table_create(&table_rules, &rng, NULL, NULL, &t);
    if (rc != 0)
        goto fail_table;
    rc = bj_table_sit(t, 0, 1);
    if (rc != 0)
        goto fail_play;

    int64_t net = 0;
    double sumsq = 0;
    uint64_t hands = 0;
    for (uint64_t i = 0; i < rounds; i++) {
        if ((rc = bj_table_open_betting(t)) != 0 || (rc = bj_table_bet(t, 0, bet)) != 0)
            goto fail_play;
        while (bj_table_phase(t) == BJ_PHASE_INSURANCE)
            if ((rc = bj_table_insurance(t, 0, false)) != 0)
                goto fail_play;
        bj_decision_t d;
        while (bj_table_decision(t, &d)) {
            bj_action_t a = bj_strategy_decide(strategy, d.cards, d.up, d.allowed);
            if ((rc = bj_table_act(t, d.seat, a)) != 0)
                goto fail_play;
        }
        const bj_settlement_t *st = bj_table_settlement(t);
        if (bj_table_phase(t) != BJ_PHASE_IDLE || st == NULL || st->round != i + 1) {
            rc = BJ_ERR_PHASE;
            goto fail_play;
        }
        int64_t delta = st->seats[0].delta;
        net += delta;
        sumsq += (double)delta * (double)delta;
        hands += (uint64_t)st->seats[0].hands;
    }
    bj_snapshot_t snap;
    bj_table_snapshot(t, &snap);
    shoes = snap.shoe_id;

    out->rounds = rounds;
    out->bet = bet;
    out->net = net;
    out->hands = hands;
    out->shoes = shoes;
    if (rounds > 0) {
        double n = (double)rounds, b = (double)bet;
        out->mean = (double)net / b / n;
        double var = sumsq / (b * b) / n - out->mean * out->mean;
        if (rounds > 1)
            var *= n / (n - 1);
        out->variance = var;
        out->stderr_mean = sqrt(var / n);
    }
    bj_table_destroy(t);
    bj_strategy_destroy(strategy);
    return 0;

fail_play:
    snprintf(err, errlen, "table refused a simulated input: %s", bj_strerror(rc));
    rc = BJ_ERR_PHASE;
    bj_table_destroy(t);
fail_table:
    bj_strategy_destroy(strategy);
fail_strategy:
    return rc;
}
