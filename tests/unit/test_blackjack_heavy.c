/*
 * Heavy tests for games/persistent (suite 'heavy', plain build only): the published return
 * of basic strategy reproduced over 10,000,000 rounds through the real table code, and
 * 1,000,000 rounds of random legal and illegal play (see test_blackjack_random.h).
 */
#include <check.h>
#include <stdlib.h>

#include "bj_sim.h"
#include "test_blackjack_random.h"

/* ../shared/oracles/blackjack.md: 6 decks, S17, DAS, late surrender, RSA, 3:2:
 * expected return -0.281 %, variance 1.303. Within 3 standard errors. */
START_TEST(test_bj_sim_ten_million_rounds_match_published_return)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 6;
    r.h17 = false;
    r.das = true;
    r.late_surrender = true;
    r.rsa = true;
    r.bj_pay_num = 3;
    r.bj_pay_den = 2;
    bj_sim_result_t res;
    char err[200];
    ck_assert_int_eq(bj_sim_run(&r, 10000000, 1, 10, &res, err, sizeof(err)), 0);
    ck_assert_msg(res.mean > -0.00281 - 3 * res.stderr_mean &&
                      res.mean < -0.00281 + 3 * res.stderr_mean,
                  "mean %.5f %% se %.5f %%", res.mean * 100, res.stderr_mean * 100);
    /* the variance's own standard error is about 0.002 at 10^7 rounds */
    ck_assert_msg(res.variance > 1.303 - 0.01 && res.variance < 1.303 + 0.01, "variance %f",
                  res.variance);
}
END_TEST

START_TEST(test_bj_random_legal_and_illegal_play_million_rounds)
{
    /* A million rounds over 500 random rule sets include tables (one deck, seven seats, deep
     * cut) where the shoe runs dry in the middle of a round. */
    ck_assert_uint_gt(bjr_run(8, 1000000, 2000), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("blackjack_heavy");
    TCase *tc = tcase_create("oracle");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_bj_sim_ten_million_rounds_match_published_return);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_bj_random_legal_and_illegal_play_million_rounds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
