/*
 * Unit tests for the hold'em hand evaluator (games/holdem/holdem_eval.h): all 5-card and all
 * 6-card hands against the counts in ../shared/oracles/poker-eval.md (and, for six cards, the
 * published table in Wikipedia's "Poker probability"), the class counts of docs/rules/holdem.md
 * section "Hand ranking", and card parsing. The 7-card enumeration is in
 * test_holdem_eval_heavy.c. Also: holdem_cards_value() against the hand-building path, and the
 * table bounds for meaningless hands. The state machine of holdem_enum.h: a million random
 * hands in two orders against holdem_cards_value(), and its bounds for repeated cards.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "holdem_enum.h"
#include "holdem_eval.h"

static int value_of(const char *s)
{
    uint8_t c[7];
    int n = holdem_cards_parse(s, c, 7);
    ck_assert_int_ge(n, 5);
    return holdem_eval_cards(c, n);
}

START_TEST(test_eval_counts_every_five_card_hand)
{
    /* oracles/poker-eval.md, "All 5-card hands". */
    static const uint64_t want[HOLDEM_CATEGORIES] = {1302540, 1098240, 123552, 54912, 10200,
                                                     5108,    3744,    624,    40};
    static const int want_classes[HOLDEM_CATEGORIES] = {1277, 2860, 858, 858, 10,
                                                        1277, 156,  156, 10};
    uint64_t got[HOLDEM_CATEGORIES] = {0};
    static uint8_t seen[HOLDEM_VALUE_MAX + 1];
    memset(seen, 0, sizeof seen);
    uint64_t total = 0, bad = 0;
    for (int a = 0; a < 52; a++) {
        holdem_hand_t ha = holdem_hand_add(holdem_hand_empty(), a);
        for (int b = a + 1; b < 52; b++) {
            holdem_hand_t hb = holdem_hand_add(ha, b);
            for (int c = b + 1; c < 52; c++) {
                holdem_hand_t hc = holdem_hand_add(hb, c);
                for (int d = c + 1; d < 52; d++) {
                    holdem_hand_t hd = holdem_hand_add(hc, d);
                    for (int e = d + 1; e < 52; e++) {
                        uint16_t v = holdem_hand_value(holdem_hand_add(hd, e));
                        /* no ck_assert in the loop: each one writes to check's pipe */
                        bad += v < 1 || v > HOLDEM_VALUE_MAX;
                        got[holdem_value_category(v)]++;
                        seen[v] = 1;
                        total++;
                    }
                }
            }
        }
    }
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(total, 2598960);
    for (int i = 0; i < HOLDEM_CATEGORIES; i++)
        ck_assert_msg(got[i] == want[i], "%s: %llu, expected %llu", holdem_category_name(i),
                      (unsigned long long)got[i], (unsigned long long)want[i]);
    int classes = 0, per_cat[HOLDEM_CATEGORIES] = {0};
    for (int v = 1; v <= HOLDEM_VALUE_MAX; v++)
        if (seen[v]) {
            classes++;
            per_cat[holdem_value_category((uint16_t)v)]++;
        }
    ck_assert_int_eq(classes, 7462);
    for (int i = 0; i < HOLDEM_CATEGORIES; i++)
        ck_assert_int_eq(per_cat[i], want_classes[i]);
}
END_TEST

START_TEST(test_eval_counts_every_six_card_hand)
{
    /* Wikipedia, "Poker probability", 6-card hands table (sums to C(52,6) = 20,358,520). */
    static const uint64_t want[HOLDEM_CATEGORIES] = {6612900, 9730740, 2532816, 732160, 361620,
                                                     205792,  165984,  14664,   1844};
    uint64_t got[HOLDEM_CATEGORIES] = {0};
    uint64_t total = 0;
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
                            got[holdem_value_category(holdem_hand_value(holdem_hand_add(he, f)))]++;
                            total++;
                        }
                    }
                }
            }
        }
    }
    ck_assert_uint_eq(total, 20358520);
    for (int i = 0; i < HOLDEM_CATEGORIES; i++)
        ck_assert_msg(got[i] == want[i], "%s: %llu, expected %llu", holdem_category_name(i),
                      (unsigned long long)got[i], (unsigned long long)want[i]);
}
END_TEST

START_TEST(test_eval_orders_known_hands)
{
    ck_assert_int_eq(value_of("AsKsQsJsTs9h2c"), HOLDEM_VALUE_MAX);
    ck_assert_int_eq(holdem_value_category((uint16_t)value_of("5d4c3h2sAd")), HOLDEM_STRAIGHT);
    /* The wheel is the lowest straight, below six-high. */
    ck_assert_int_lt(value_of("5d4c3h2sAd"), value_of("6d5c4h3s2d"));
    ck_assert_int_eq(holdem_value_rank_in_category((uint16_t)value_of("5d4c3h2sAd")), 1);
    /* Lowest hand: 7-5-4-3-2 offsuit is value 1. */
    ck_assert_int_eq(value_of("7d5c4h3s2d"), 1);
    /* Two pair with the best kicker among seven cards (third pair counts as a kicker). */
    ck_assert_int_eq(value_of("KdKcQhQs2d2cAs"), value_of("KdKcQhQsAs"));
    ck_assert_int_gt(value_of("KdKcQhQs3d3c4s"), value_of("KdKcQhQs2d"));
    /* Two sets of trips make a full house with the higher trips. */
    ck_assert_int_eq(value_of("9d9c9h8s8d8c2s"), value_of("9d9c9h8s8d"));
    /* A flush beats the straight also present in the same seven cards. */
    ck_assert_int_eq(holdem_value_category((uint16_t)value_of("9h8h7h6s5h2h3c")), HOLDEM_FLUSH);
    ck_assert_int_eq(holdem_value_category((uint16_t)value_of("AhAdAcAs2h3h4h")),
                     HOLDEM_FOUR_OF_A_KIND);
    ck_assert_int_eq(value_of("AhKhQhJhTh"), value_of("AsKsQsJsTs"));
}
END_TEST

START_TEST(test_eval_refuses_bad_cards)
{
    uint8_t c[8];
    ck_assert_int_eq(holdem_card_parse("Xs"), -EINVAL);
    ck_assert_int_eq(holdem_card_parse("Ax"), -EINVAL);
    ck_assert_int_eq(holdem_card_parse("A"), -EINVAL);
    ck_assert_int_eq(holdem_card_parse("as"), 51);
    ck_assert_int_eq(holdem_card_parse("2c"), 0);
    ck_assert_int_eq(holdem_cards_parse("AsAs", c, 8), -EINVAL);
    ck_assert_int_eq(holdem_cards_parse("AsK", c, 8), -EINVAL);
    ck_assert_int_eq(holdem_cards_parse("AsKsQsJsTs9s8s7s6s", c, 8), -E2BIG);
    uint8_t dup[5] = {1, 2, 3, 4, 4};
    ck_assert_int_eq(holdem_eval_cards(dup, 5), -EINVAL);
    uint8_t bad[5] = {1, 2, 3, 4, 52};
    ck_assert_int_eq(holdem_eval_cards(bad, 5), -EINVAL);
    ck_assert_int_eq(holdem_eval_cards(bad, 4), -EINVAL);
    char buf[3];
    for (int i = 0; i < 52; i++)
        ck_assert_int_eq(holdem_card_parse(holdem_card_format(i, buf)), i);
}
END_TEST

/* xorshift64: the same hands on every run. */
static uint64_t test_rng = 0x2545f4914f6cdd1dull;

static unsigned rnd52(void)
{
    test_rng ^= test_rng << 13;
    test_rng ^= test_rng >> 7;
    test_rng ^= test_rng << 17;
    return (unsigned)((test_rng >> 32) % 52);
}

START_TEST(test_cards_value_matches_hand_value_for_every_five_card_hand)
{
    uint64_t bad = 0, total = 0;
    uint8_t c[5];
    for (c[0] = 0; c[0] < 52; c[0]++)
        for (c[1] = c[0] + 1; c[1] < 52; c[1]++)
            for (c[2] = c[1] + 1; c[2] < 52; c[2]++)
                for (c[3] = c[2] + 1; c[3] < 52; c[3]++)
                    for (c[4] = c[3] + 1; c[4] < 52; c[4]++) {
                        holdem_hand_t h = holdem_hand_empty();
                        for (int i = 0; i < 5; i++)
                            h = holdem_hand_add(h, c[i]);
                        bad += holdem_cards_value(c, 5) != holdem_hand_value(h);
                        total++;
                    }
    ck_assert_uint_eq(total, 2598960);
    ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(test_cards_value_matches_checked_eval_for_random_six_and_seven_card_hands)
{
    uint64_t bad = 0, flushes = 0;
    for (int i = 0; i < 400000; i++) {
        uint8_t c[7];
        uint64_t used = 0;
        int n = 6 + (i & 1);
        for (int k = 0; k < n;) {
            unsigned x = rnd52();
            if (used & (1ull << x))
                continue;
            used |= 1ull << x;
            c[k++] = (uint8_t)x;
        }
        int want = holdem_eval_cards(c, n);
        holdem_hand_t h = holdem_hand_empty();
        for (int k = 0; k < n; k++)
            h = holdem_hand_add(h, c[k]);
        bad += holdem_cards_value(c, n) != want || holdem_hand_value(h) != want;
        flushes += holdem_value_category((uint16_t)want) == HOLDEM_FLUSH;
    }
    ck_assert_uint_eq(bad, 0);
    /* About 3 % of seven-card and 2 % of six-card hands: the flush path was taken. */
    ck_assert_uint_gt(flushes, 4000);
}
END_TEST

START_TEST(test_hand_value_reads_inside_tables_for_any_row)
{
    /* Every row's reachable slots (column 0..2047 plus twice its displacement) are inside the
     * value table, so even a meaningless hand cannot read past it. */
    uint32_t cols = 1u << HOLDEM_EVAL_ROW_SHIFT;
    for (uint32_t r = 0; r < 1u << (HOLDEM_EVAL_HASH_BITS - HOLDEM_EVAL_ROW_SHIFT); r++) {
        /* slot = hash + offset modulo 2^32: the row's first column must be far enough from
         * the end for the whole row */
        uint32_t first = (r << HOLDEM_EVAL_ROW_SHIFT) + holdem_eval_offsets_[r];
        ck_assert_uint_le(first, holdem_eval_rank_values_size_ - cols);
    }
    /* The same for the seven-card table of holdem_cards_value(). */
    cols = 1u << HOLDEM_EVAL_ROW_SHIFT7;
    for (uint32_t r = 0; r < 1u << (HOLDEM_EVAL_HASH_BITS - HOLDEM_EVAL_ROW_SHIFT7); r++)
        ck_assert_uint_le(cols - 1 + holdem_eval_disp7_[r], holdem_eval_rank_values7_size_ - 1);
}
END_TEST

START_TEST(test_hand_value_survives_meaningless_hands)
{
    /* Repeated cards and too many cards (documented as meaningless): any value, no crash and
     * no read outside the tables (the ASan build checks the reads). */
    uint64_t out_of_range = 0;
    for (int i = 0; i < 200000; i++) {
        holdem_hand_t h = holdem_hand_empty();
        int n = 5 + i % 20;
        for (int k = 0; k < n; k++)
            h = holdem_hand_add(h, (int)(k && (i & 1) ? rnd52() % 4 : rnd52()));
        out_of_range += holdem_hand_value(h) > HOLDEM_VALUE_MAX;
        /* holdem_cards_value() with repeated cards (in range): the same promise. */
        uint8_t c[7];
        for (int k = 0; k < 7; k++)
            c[k] = (uint8_t)(k && (i & 1) ? rnd52() % 8 : rnd52());
        out_of_range += holdem_cards_value(c, 7) > HOLDEM_VALUE_MAX;
        out_of_range += holdem_cards_value(c, 6) > HOLDEM_VALUE_MAX;
    }
    ck_assert_uint_eq(out_of_range, 0);
}
END_TEST

/*
 * The state machine of holdem_enum.h, built once for the "state_machine" case (an unchecked
 * fixture: built in check's parent process, shared by the forked tests). Under valgrind
 * (CROUPIER_VALGRIND=1, set by ./dev) it is not built: about 2 s natively and 80 MiB, far
 * beyond the valgrind stage's budget; the tests then say so and return.
 */
static holdem_enum_t *test_enum;
static int test_enum_skipped;

static void enum_setup(void)
{
    const char *vg = getenv("CROUPIER_VALGRIND");
    test_enum_skipped = vg != NULL && strcmp(vg, "1") == 0;
    if (!test_enum_skipped)
        test_enum = holdem_enum_create();
}

static void enum_teardown(void)
{
    holdem_enum_destroy(test_enum);
    test_enum = NULL;
}

static int enum_skip(const char *test)
{
    if (test_enum_skipped)
        fprintf(stderr,
                "%s: SKIPPED under valgrind (CROUPIER_VALGRIND=1): the state machine's "
                "table takes minutes to build there; run natively or under ASan\n",
                test);
    return test_enum_skipped;
}

START_TEST(test_enum_value_equals_cards_value_for_random_hands_in_any_order)
{
    if (enum_skip("test_enum_value_equals_cards_value_for_random_hands_in_any_order"))
        return;
    ck_assert_ptr_nonnull(test_enum);
    const holdem_enum_t *e = test_enum;
    uint64_t bad = 0, flushes = 0;
    for (int i = 0; i < 1000000; i++) {
        uint8_t c[7];
        uint64_t used = 0;
        for (int k = 0; k < 7;) {
            unsigned x = rnd52();
            if (used & (1ull << x))
                continue;
            used |= 1ull << x;
            c[k++] = (uint8_t)x;
        }
        /* The cards as drawn (random order), then reversed: the same value both ways. */
        uint32_t s = holdem_enum_root(e), r = holdem_enum_root(e);
        for (int k = 0; k < 6; k++) {
            s = holdem_enum_next(e, s, c[k]);
            r = holdem_enum_next(e, r, c[6 - k]);
        }
        uint16_t want = holdem_cards_value(c, 7);
        bad += holdem_enum_value(e, s, c[6]) != want || holdem_enum_value(e, r, c[0]) != want;
        flushes += holdem_value_category(want) >= HOLDEM_FLUSH;
    }
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_gt(flushes, 30000); /* about 3 % flushes: the live-suit states were used */
}
END_TEST

START_TEST(test_enum_repeated_cards_stay_inside_table)
{
    if (enum_skip("test_enum_repeated_cards_stay_inside_table"))
        return;
    ck_assert_ptr_nonnull(test_enum);
    const holdem_enum_t *e = test_enum;
    /* A repeated card or a fifth copy of a rank is the caller's error: any state or value,
     * but every read inside the table (ASan checks the reads too). */
    uint64_t outside = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t s = holdem_enum_root(e);
        for (int k = 0; k < 6; k++) {
            s = holdem_enum_next(e, s, (int)(k && (i & 1) ? rnd52() % 8 : rnd52()));
            /* rows of the uint32 table, then (the sixth card) of the value table */
            outside += s > (k < 5 ? e->entries_ : e->entries6_) - HOLDEM_CARDS;
        }
        outside += holdem_enum_value(e, s, (int)rnd52()) > HOLDEM_VALUE_MAX;
    }
    ck_assert_uint_eq(outside, 0);
    /* Four aces then a fifth copy of the ace of spades: the impossible successor is the root. */
    uint32_t s = holdem_enum_root(e);
    for (int k = 48; k < 52; k++)
        s = holdem_enum_next(e, s, k);
    ck_assert_uint_eq(holdem_enum_next(e, s, 51), holdem_enum_root(e));
    holdem_enum_destroy(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("holdem_eval");
    TCase *tc = tcase_create("enumeration");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_eval_counts_every_five_card_hand);
    tcase_add_test(tc, test_eval_counts_every_six_card_hand);
    suite_add_tcase(s, tc);
    tc = tcase_create("values");
    tcase_add_test(tc, test_eval_orders_known_hands);
    tcase_add_test(tc, test_eval_refuses_bad_cards);
    suite_add_tcase(s, tc);
    tc = tcase_create("card_arrays");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_cards_value_matches_hand_value_for_every_five_card_hand);
    tcase_add_test(tc, test_cards_value_matches_checked_eval_for_random_six_and_seven_card_hands);
    suite_add_tcase(s, tc);
    tc = tcase_create("robustness");
    tcase_add_test(tc, test_hand_value_reads_inside_tables_for_any_row);
    tcase_add_test(tc, test_hand_value_survives_meaningless_hands);
    suite_add_tcase(s, tc);
    tc = tcase_create("state_machine");
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, enum_setup, enum_teardown);
    tcase_add_test(tc, test_enum_value_equals_cards_value_for_random_hands_in_any_order);
    tcase_add_test(tc, test_enum_repeated_cards_stay_inside_table);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
