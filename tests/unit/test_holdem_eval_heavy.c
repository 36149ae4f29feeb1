/*
 * Heavy tests for the hold'em hand evaluator: every one of the 133,784,560 seven-card hands
 * against ../shared/oracles/poker-eval.md (category counts and the 4,824 classes that can be
 * the best of seven cards), and every six-card hand and a sample of seven-card hands against
 * the best of their five-card subsets, and holdem_cards_value() against holdem_hand_value() on
 * every six- and seven-card hand; the same oracle counts through the state machine of
 * holdem_enum.h.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "holdem_enum.h"
#include "holdem_eval.h"

/*
 * Checks a histogram of the values of all seven-card hands against oracles/poker-eval.md, "All
 * 7-card hands" and "Equivalence classes": the count of every category and the number of
 * classes that occur, per category.
 */
static void check_seven_card_counts(const uint64_t *by_value)
{
    static const uint64_t want[HOLDEM_CATEGORIES] = {23294460, 58627800, 31433400, 6461620, 6180020,
                                                     4047644,  3473184,  224848,   41584};
    static const int want_classes[HOLDEM_CATEGORIES] = {407,  1470, 763, 575, 10,
                                                        1277, 156,  156, 10};
    uint64_t total = 0, got[HOLDEM_CATEGORIES] = {0};
    int classes = 0, per_cat[HOLDEM_CATEGORIES] = {0};
    ck_assert_uint_eq(by_value[0], 0);
    for (int v = 1; v <= HOLDEM_VALUE_MAX; v++) {
        total += by_value[v];
        got[holdem_value_category((uint16_t)v)] += by_value[v];
        if (by_value[v]) {
            classes++;
            per_cat[holdem_value_category((uint16_t)v)]++;
        }
    }
    ck_assert_uint_eq(total, 133784560);
    for (int i = 0; i < HOLDEM_CATEGORIES; i++)
        ck_assert_msg(got[i] == want[i], "%s: %llu, expected %llu", holdem_category_name(i),
                      (unsigned long long)got[i], (unsigned long long)want[i]);
    ck_assert_int_eq(classes, 4824);
    for (int i = 0; i < HOLDEM_CATEGORIES; i++)
        ck_assert_int_eq(per_cat[i], want_classes[i]);
}

START_TEST(test_eval_counts_every_seven_card_hand)
{
    static uint64_t by_value[HOLDEM_VALUE_MAX + 1];
    memset(by_value, 0, sizeof by_value);
    for (int a = 0; a < 52; a++) {
        holdem_hand_t ha = holdem_hand_add(holdem_hand_empty(), a);
        for (int b = a + 1; b < 52; b++) {
            holdem_hand_t hb = holdem_hand_add(ha, b);
            for (int c = b + 1; c < 52; c++) {
                holdem_hand_t hc = holdem_hand_add(hb, c);
                for (int d = c + 1; d < 52; d++) {
                    holdem_hand_t hd = holdem_hand_add(hc, d);
                    for (int e = d + 1; e < 52; e++) {
                        holdem_hand_t he = holdem_hand_add(hd, e);
                        for (int f = e + 1; f < 52; f++) {
                            holdem_hand_t hf = holdem_hand_add(he, f);
                            for (int g = f + 1; g < 52; g++)
                                by_value[holdem_hand_value(holdem_hand_add(hf, g))]++;
                        }
                    }
                }
            }
        }
    }
    check_seven_card_counts(by_value);
}
END_TEST

START_TEST(test_enum_counts_every_seven_card_hand)
{
    /* The same oracle through the state machine of holdem_enum.h, cards in increasing order;
     * a value outside 1..HOLDEM_VALUE_MAX is counted in by_value[0] and fails the check. */
    static uint64_t by_value[HOLDEM_VALUE_MAX + 1];
    memset(by_value, 0, sizeof by_value);
    holdem_enum_t *en = holdem_enum_create();
    ck_assert_ptr_nonnull(en);
    uint32_t s0 = holdem_enum_root(en);
    for (int a = 0; a < 52; a++) {
        uint32_t sa = holdem_enum_next(en, s0, a);
        for (int b = a + 1; b < 52; b++) {
            uint32_t sb = holdem_enum_next(en, sa, b);
            for (int c = b + 1; c < 52; c++) {
                uint32_t sc = holdem_enum_next(en, sb, c);
                for (int d = c + 1; d < 52; d++) {
                    uint32_t sd = holdem_enum_next(en, sc, d);
                    for (int e = d + 1; e < 52; e++) {
                        uint32_t se = holdem_enum_next(en, sd, e);
                        for (int f = e + 1; f < 52; f++) {
                            uint32_t sf = holdem_enum_next(en, se, f);
                            for (int g = f + 1; g < 52; g++) {
                                uint32_t v = holdem_enum_value(en, sf, g);
                                by_value[v <= HOLDEM_VALUE_MAX ? v : 0]++;
                            }
                        }
                    }
                }
            }
        }
    }
    holdem_enum_destroy(en);
    check_seven_card_counts(by_value);
}
END_TEST

/* The best value among the five-card subsets of n cards. */
static int best_of_fives(const uint8_t *c, int n)
{
    int best = 0;
    for (unsigned m = 0; m < (1u << n); m++) {
        if (__builtin_popcount(m) != 5)
            continue;
        uint8_t five[5];
        int k = 0;
        for (int i = 0; i < n; i++)
            if (m & (1u << i))
                five[k++] = c[i];
        int v = holdem_eval_cards(five, 5);
        if (v > best)
            best = v;
    }
    return best;
}

START_TEST(test_eval_six_and_seven_cards_equal_best_five_card_subset)
{
    uint64_t mismatches = 0, checked = 0;
    uint8_t c[7];
    for (c[0] = 0; c[0] < 52; c[0]++)
        for (c[1] = c[0] + 1; c[1] < 52; c[1]++)
            for (c[2] = c[1] + 1; c[2] < 52; c[2]++)
                for (c[3] = c[2] + 1; c[3] < 52; c[3]++)
                    for (c[4] = c[3] + 1; c[4] < 52; c[4]++)
                        for (c[5] = c[4] + 1; c[5] < 52; c[5]++) {
                            mismatches += holdem_eval_cards(c, 6) != best_of_fives(c, 6);
                            checked++;
                        }
    /* Seven cards: a reproducible pseudo-random sample of two million hands. */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 2000000; i++) {
        uint64_t used = 0;
        for (int k = 0; k < 7;) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int card = (int)(x % 52);
            if (used & (1ull << card))
                continue;
            used |= 1ull << card;
            c[k++] = (uint8_t)card;
        }
        mismatches += holdem_eval_cards(c, 7) != best_of_fives(c, 7);
        checked++;
    }
    ck_assert_uint_eq(checked, 20358520 + 2000000);
    ck_assert_uint_eq(mismatches, 0);
}
END_TEST

START_TEST(test_cards_value_equals_hand_value_for_every_seven_card_hand)
{
    /* holdem_cards_value() goes through its own seven-card table: all 133,784,560 hands. */
    uint64_t mismatches = 0, checked = 0;
    uint8_t c[7];
    for (c[0] = 0; c[0] < 52; c[0]++) {
        holdem_hand_t ha = holdem_hand_add(holdem_hand_empty(), c[0]);
        for (c[1] = c[0] + 1; c[1] < 52; c[1]++) {
            holdem_hand_t hb = holdem_hand_add(ha, c[1]);
            for (c[2] = c[1] + 1; c[2] < 52; c[2]++) {
                holdem_hand_t hc = holdem_hand_add(hb, c[2]);
                for (c[3] = c[2] + 1; c[3] < 52; c[3]++) {
                    holdem_hand_t hd = holdem_hand_add(hc, c[3]);
                    for (c[4] = c[3] + 1; c[4] < 52; c[4]++) {
                        holdem_hand_t he = holdem_hand_add(hd, c[4]);
                        for (c[5] = c[4] + 1; c[5] < 52; c[5]++) {
                            holdem_hand_t hf = holdem_hand_add(he, c[5]);
                            mismatches += holdem_cards_value(c, 6) != holdem_hand_value(hf);
                            for (c[6] = c[5] + 1; c[6] < 52; c[6]++) {
                                holdem_hand_t hg = holdem_hand_add(hf, c[6]);
                                mismatches += holdem_cards_value(c, 7) != holdem_hand_value(hg);
                                checked++;
                            }
                        }
                    }
                }
            }
        }
    }
    ck_assert_uint_eq(checked, 133784560);
    ck_assert_uint_eq(mismatches, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("holdem_eval_heavy");
    TCase *tc = tcase_create("enumeration");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_eval_counts_every_seven_card_hand);
    tcase_add_test(tc, test_enum_counts_every_seven_card_hand);
    tcase_add_test(tc, test_eval_six_and_seven_cards_equal_best_five_card_subset);
    tcase_add_test(tc, test_cards_value_equals_hand_value_for_every_seven_card_hand);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
