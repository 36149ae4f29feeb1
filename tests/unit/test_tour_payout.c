/* Unit tests for tournament/tour_payout.h: pool, payout table, places shared in one hand, the
 * cancellation split; property tests over many random cases check that no chip is created or
 * lost (docs/tournaments.md, "Payouts", "Cancelling a tournament"). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tour_payout.h"
#include "tour_seating.h" /* tour_rng_splitmix64 */

/* An assertion for hot loops: check's ck_assert writes to its pipe on every call (fork mode),
 * this one only on failure. */
#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);                             \
    } while (0)

/* Random cases per property; a tenth under valgrind (CROUPIER_VALGRIND=1, set by ./dev). */
#define CASES (getenv("CROUPIER_VALGRIND") != NULL ? 500 : 5000)

static uint64_t seed = 0x7ea5u;

static uint64_t rnd(uint64_t n)
{
    return tour_rng_below(tour_rng_splitmix64, &seed, n);
}

START_TEST(test_tour_payout_pool_fees_out_guarantee_in)
{
    int64_t pool;
    ck_assert_int_eq(tour_payout_pool(100, 250, 0, &pool), 0);
    ck_assert_int_eq(pool, 25000);
    ck_assert_int_eq(tour_payout_pool(100, 250, 50000, &pool), 0);
    ck_assert_int_eq(pool, 50000); /* overlay */
    ck_assert_int_eq(tour_payout_pool(100, 250, 1000, &pool), 0);
    ck_assert_int_eq(pool, 25000);
    ck_assert_int_eq(tour_payout_pool(-1, 2, 0, &pool), -EINVAL);
    ck_assert_int_eq(tour_payout_pool(INT64_MAX / 2, 3, 0, &pool), -EOVERFLOW);
}
END_TEST

START_TEST(test_tour_payout_places_about_fifteen_percent)
{
    tour_payout_config_t c = tour_payout_config_default();
    ck_assert_uint_eq(tour_payout_places(&c, 0), 0);
    ck_assert_uint_eq(tour_payout_places(&c, 2), 1);
    ck_assert_uint_eq(tour_payout_places(&c, 6), 1);
    ck_assert_uint_eq(tour_payout_places(&c, 7), 2);
    ck_assert_uint_eq(tour_payout_places(&c, 100), 15);
    ck_assert_uint_eq(tour_payout_places(&c, 10000), 1500);
    /* The default curve, 1 / (i + 1): 9 entrants, 2 places, 60 % and 40 % exactly. */
    int64_t curve[4];
    size_t nc;
    ck_assert_int_eq(tour_payout_table(&c, 9, 1000, curve, 4, &nc), 0);
    ck_assert_uint_eq(nc, 2);
    ck_assert_int_eq(curve[0], 600);
    ck_assert_int_eq(curve[1], 400);
    uint32_t shares[] = {5000, 3000, 2000};
    tour_payout_tier_t tier = {
        .min_entrants = 7, .max_entrants = 10, .nplaces = 3, .shares_bp = shares};
    c.ntiers = 1;
    c.tiers = &tier;
    ck_assert_uint_eq(tour_payout_places(&c, 9), 3);
    ck_assert_uint_eq(tour_payout_places(&c, 11), 2);
    int64_t prizes[8];
    size_t n;
    ck_assert_int_eq(tour_payout_table(&c, 9, 1000, prizes, 8, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(prizes[0], 500);
    ck_assert_int_eq(prizes[1], 300);
    ck_assert_int_eq(prizes[2], 200);
    /* 1001 x 50 % = 500.5, x 30 % = 300.3, x 20 % = 200.2: the odd chip goes to 1st. */
    ck_assert_int_eq(tour_payout_table(&c, 9, 1001, prizes, 8, &n), 0);
    ck_assert_int_eq(prizes[0], 501);
    ck_assert_int_eq(prizes[1], 300);
    ck_assert_int_eq(prizes[2], 200);
    ck_assert_int_eq(tour_payout_table(&c, 9, 1001, prizes, 2, &n), -ENOSPC);
}
END_TEST

/* Property: for random entrants and pools, the table sums to the pool exactly, pays the
 * announced number of places and never pays a place more than the one above it. */
START_TEST(test_tour_payout_table_conserves_chips)
{
    tour_payout_config_t c = tour_payout_config_default();
    int64_t *prizes = malloc(20000 * sizeof *prizes);
    for (int k = 0; k < CASES; k++) {
        c.percent_paid = 1 + (uint32_t)rnd(100);
        c.min_paid = 1 + (uint32_t)rnd(5);
        uint32_t entrants = 2 + (uint32_t)rnd(k % 50 == 0 ? 20000 : 300);
        int64_t pool = (int64_t)rnd(k % 3 == 0 ? 1000 : (UINT64_C(1) << 50));
        size_t n;
        REQUIRE((tour_payout_table(&c, entrants, pool, prizes, 20000, &n)) == (0));
        REQUIRE((n) == (tour_payout_places(&c, entrants)));
        REQUIRE(n >= 1 && n <= entrants);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            REQUIRE(prizes[i] >= 0);
            if (i > 0)
                REQUIRE(prizes[i] <= prizes[i - 1]);
            sum += prizes[i];
        }
        REQUIRE((sum) == (pool));
    }
    free(prizes);
}
END_TEST

/* Property: random operator tiers (non-increasing shares summing to 10000) pay exactly the
 * pool, non-increasing, the tier's number of places. */
START_TEST(test_tour_payout_tiers_conserve_chips)
{
    static uint32_t shares[3][200];
    static int64_t prizes[200];
    tour_payout_tier_t tiers[3];
    for (int k = 0; k < CASES; k++) {
        uint32_t lo = 2;
        for (int t = 0; t < 3; t++) {
            uint32_t hi = lo + (uint32_t)rnd(300);
            uint32_t n = 1 + (uint32_t)rnd(lo < 200 ? lo : 200);
            /* n non-increasing shares summing to 10000: n random weights sorted, scaled, the
             * rest to 1st. */
            uint32_t sum = 0;
            for (uint32_t i = 0; i < n; i++)
                shares[t][i] = 1 + (uint32_t)rnd(10000 / n);
            for (uint32_t i = 1; i < n; i++) /* insertion sort, descending */
                for (uint32_t j = i; j > 0 && shares[t][j] > shares[t][j - 1]; j--) {
                    uint32_t x = shares[t][j];
                    shares[t][j] = shares[t][j - 1];
                    shares[t][j - 1] = x;
                }
            for (uint32_t i = 0; i < n; i++)
                sum += shares[t][i];
            shares[t][0] += 10000 - sum;
            tiers[t] = (tour_payout_tier_t){
                .min_entrants = lo, .max_entrants = hi, .nplaces = n, .shares_bp = shares[t]};
            lo = hi + 1;
        }
        tour_payout_config_t c = {.percent_paid = 15, .min_paid = 1, .ntiers = 3, .tiers = tiers};
        uint32_t entrants = 2 + (uint32_t)rnd(lo - 2);
        int64_t pool = (int64_t)rnd(k % 2 ? 100000 : (UINT64_C(1) << 52));
        size_t n;
        REQUIRE(tour_payout_table(&c, entrants, pool, prizes, 200, &n) == 0);
        uint32_t want = 0;
        for (int t = 0; t < 3; t++)
            if (entrants >= tiers[t].min_entrants && entrants <= tiers[t].max_entrants)
                want = tiers[t].nplaces;
        REQUIRE(n == want);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            REQUIRE(prizes[i] >= 0 && (i == 0 || prizes[i] <= prizes[i - 1]));
            sum += prizes[i];
        }
        REQUIRE(sum == pool);
    }
}
END_TEST

START_TEST(test_tour_payout_same_hand_busts_share_places)
{
    /* 3 players bust in one hand with 7 left after it: places 8, 9, 10. */
    int64_t prizes[10] = {400, 200, 100, 80, 70, 60, 50, 41, 30, 0};
    tour_bust_t b[3] = {{.player = 11, .start_stack = 500, .tiebreak = 3},
                        {.player = 12, .start_stack = 900, .tiebreak = 1},
                        {.player = 13, .start_stack = 500, .tiebreak = 2}};
    tour_award_t a[3];
    ck_assert_int_eq(tour_payout_busts(prizes, 10, 8, b, 3, a), 0);
    /* The bigger stack at the start of the hand finishes 8th. */
    ck_assert_uint_eq(a[0].player, 12);
    ck_assert_uint_eq(a[0].place, 8);
    ck_assert_int_eq(a[0].amount, 41);
    /* The two equal stacks tie for 9th and split 30 + 0. */
    ck_assert_uint_eq(a[1].player, 13);
    ck_assert_uint_eq(a[1].place, 9);
    ck_assert_int_eq(a[1].amount, 15);
    ck_assert_uint_eq(a[2].player, 11);
    ck_assert_uint_eq(a[2].place, 9);
    ck_assert_int_eq(a[2].amount, 15);
    /* An odd chip goes to the lower tiebreak: 41 + 30 shared by two equal stacks. */
    b[1].start_stack = 900;
    tour_bust_t two[2] = {b[1], b[0]};
    two[1].start_stack = 900;
    ck_assert_int_eq(tour_payout_busts(prizes, 10, 8, two, 2, a), 0);
    ck_assert_uint_eq(a[0].player, 12);
    ck_assert_int_eq(a[0].amount, 36);
    ck_assert_uint_eq(a[1].player, 11);
    ck_assert_int_eq(a[1].amount, 35);
    /* Refused: a player twice, a zero stack, place 0. */
    tour_bust_t dup[2] = {b[0], b[0]};
    ck_assert_int_eq(tour_payout_busts(prizes, 10, 8, dup, 2, a), -EINVAL);
    dup[1].player = 99;
    dup[1].start_stack = 0;
    ck_assert_int_eq(tour_payout_busts(prizes, 10, 8, dup, 2, a), -EINVAL);
    ck_assert_int_eq(tour_payout_busts(prizes, 10, 0, b, 3, a), -EINVAL);
}
END_TEST

/* Property: the awards of one hand's busts sum exactly to the prizes of the places they take;
 * a bigger starting stack never gets less nor a worse place; equal stacks share a place and
 * differ by at most one chip. */
START_TEST(test_tour_payout_busts_conserve_chips)
{
    int64_t prizes[64];
    tour_bust_t b[12];
    tour_award_t a[12];
    for (int k = 0; k < CASES; k++) {
        size_t nplaces = 1 + rnd(64);
        int64_t p = (int64_t)rnd(1000000);
        for (size_t i = 0; i < nplaces; i++) {
            prizes[i] = p;
            p -= (int64_t)rnd((uint64_t)p / 2 + 1);
        }
        size_t n = 1 + rnd(12);
        uint32_t best = 1 + (uint32_t)rnd(70);
        for (size_t i = 0; i < n; i++)
            b[i] = (tour_bust_t){
                .player = 1000 + i, .start_stack = 1 + (int64_t)rnd(4), .tiebreak = rnd(1000)};
        REQUIRE((tour_payout_busts(prizes, nplaces, best, b, n, a)) == (0));
        int64_t want = 0, got = 0;
        for (size_t i = 0; i < n; i++) {
            if (best + i - 1 < nplaces)
                want += prizes[best + i - 1];
            got += a[i].amount;
            int64_t si = 0;
            for (size_t j = 0; j < n; j++)
                if (b[j].player == a[i].player)
                    si = b[j].start_stack;
            for (size_t j = 0; j < i; j++) {
                int64_t sj = 0;
                for (size_t m = 0; m < n; m++)
                    if (b[m].player == a[j].player)
                        sj = b[m].start_stack;
                REQUIRE(sj >= si);
                if (sj == si) {
                    REQUIRE((a[j].place) == (a[i].place));
                    REQUIRE(a[j].amount - a[i].amount <= 1 && a[j].amount >= a[i].amount);
                } else {
                    REQUIRE(a[j].place < a[i].place && a[j].amount >= a[i].amount);
                }
            }
        }
        REQUIRE((got) == (want));
    }
}
END_TEST

/* The worked example of docs/tournaments.md, "Cancelling a tournament". */
START_TEST(test_tour_payout_cancel_worked_examples)
{
    /* 10 entries of 100: pool 1000, 2 places paid (600, 400); 3 players left. */
    int64_t prizes[2] = {600, 400};
    tour_survivor_t s[3] = {{.player = 1, .chips = 5000, .buyins_paid = 100},
                            {.player = 2, .chips = 3000, .buyins_paid = 200},
                            {.player = 3, .chips = 2000, .buyins_paid = 100}};
    int64_t a[3];
    ck_assert_int_eq(tour_payout_cancel(prizes, 2, 1000, s, 3, a), 0);
    /* refunds 400, rest 600: 300 equally (100 each), 300 by chips (150, 90, 60) */
    ck_assert_int_eq(a[0], 100 + 100 + 150);
    ck_assert_int_eq(a[1], 200 + 100 + 90);
    ck_assert_int_eq(a[2], 100 + 100 + 60);
    /* In the money, 2 left: each 400, the 200 left by chips (5000 : 3000 -> 125, 75). */
    ck_assert_int_eq(tour_payout_cancel(prizes, 2, 1000, s, 2, a), 0);
    ck_assert_int_eq(a[0], 525);
    ck_assert_int_eq(a[1], 475);
    /* Odd chips: rest 7 before the money, 3 equal (1 each) + 4 by chips. */
    tour_survivor_t e[3] = {{.player = 1, .chips = 1, .buyins_paid = 1},
                            {.player = 2, .chips = 1, .buyins_paid = 1},
                            {.player = 3, .chips = 1, .buyins_paid = 1}};
    ck_assert_int_eq(tour_payout_cancel(prizes, 2, 10, e, 3, a), 0);
    ck_assert_int_eq(a[0] + a[1] + a[2], 10);
    ck_assert_int_eq(a[0], 4); /* 1 + 1 + 1 (4/3 = 1, odd chip first by input order) + 1 */
    /* Refused: a stack of 0, refunds above the pool. */
    e[0].chips = 0;
    ck_assert_int_eq(tour_payout_cancel(prizes, 2, 10, e, 3, a), -EINVAL);
    e[0].chips = 1;
    ck_assert_int_eq(tour_payout_cancel(prizes, 2, 2, e, 3, a), -EINVAL);
    int64_t upside_down[2] = {400, 600};
    ck_assert_int_eq(tour_payout_cancel(upside_down, 2, 1000, e, 2, a), -EINVAL);
}
END_TEST

/* Property: a cancellation gives out exactly the pool (before the money) or exactly the
 * unawarded prizes (in the money); before the money nobody gets less than his buy-ins, in the
 * money nobody less than the smallest unawarded prize, and more chips never get less. */
START_TEST(test_tour_payout_cancel_conserves_chips)
{
    tour_payout_config_t c = tour_payout_config_default();
    static int64_t prizes[3000];
    static tour_survivor_t s[3000];
    static int64_t a[3000];
    for (int k = 0; k < CASES; k++) {
        uint32_t entries = 2 + (uint32_t)rnd(k % 50 == 0 ? 15000 : 200);
        int64_t buy_in = 1 + (int64_t)rnd(10000), pool;
        int64_t guarantee = rnd(4) == 0 ? (int64_t)rnd((uint64_t)buy_in * entries * 2) : 0;
        REQUIRE((tour_payout_pool(buy_in, entries, guarantee, &pool)) == (0));
        size_t nplaces;
        REQUIRE((tour_payout_table(&c, entries, pool, prizes, 3000, &nplaces)) == (0));
        size_t n = 1 + rnd(entries < 3000 ? entries : 3000);
        /* Spread the entries paid over the survivors (some re-entered). */
        uint32_t left = entries - (uint32_t)n;
        for (size_t i = 0; i < n; i++) {
            uint32_t re = left > 0 && rnd(5) == 0 ? 1 + (uint32_t)rnd(left < 3 ? left : 3) : 0;
            left -= re;
            s[i] = (tour_survivor_t){.player = i + 1,
                                     .chips = 1 + (int64_t)rnd(k % 2 ? 100 : 1000000),
                                     .buyins_paid = buy_in * (1 + re)};
        }
        REQUIRE((tour_payout_cancel(prizes, nplaces, pool, s, n, a)) == (0));
        int64_t sum = 0, want = 0;
        for (size_t i = 0; i < n; i++)
            sum += a[i];
        if (n > nplaces) {
            want = pool;
            for (size_t i = 0; i < n; i++)
                REQUIRE(a[i] >= s[i].buyins_paid);
        } else {
            for (size_t i = 0; i < n; i++) {
                want += prizes[i];
                REQUIRE(a[i] >= prizes[n - 1]);
                for (size_t j = n <= 300 ? 0 : i; j < i; j++)
                    if (s[j].chips > s[i].chips)
                        REQUIRE(a[j] >= a[i]);
                    else if (s[j].chips < s[i].chips)
                        REQUIRE(a[j] <= a[i]);
            }
        }
        REQUIRE((sum) == (want));
    }
}
END_TEST

/* A running match's cancellation (docs/tournaments.md "Match halls: cancelling a running
 * match"): buy-ins back, the rest equally, odd chips in input order; the pool exactly. */
START_TEST(test_tour_payout_cancel_match_refunds_and_splits_equally)
{
    /* 24 entries of 100 (pool 2400), 9 still in: 900 back, 1500 / 9 = 166 each, 6 odd chips. */
    tour_survivor_t s[9];
    for (int i = 0; i < 9; i++)
        s[i] = (tour_survivor_t){.player = (uint64_t)(10 + i), .chips = 1, .buyins_paid = 100};
    int64_t a[9];
    ck_assert_int_eq(tour_payout_cancel_match(2400, s, 9, a), 0);
    int64_t sum = 0;
    for (int i = 0; i < 9; i++) {
        ck_assert_int_eq(a[i], 100 + 166 + (i < 6 ? 1 : 0));
        sum += a[i];
    }
    ck_assert_int_eq(sum, 2400);
    /* Scores play no part: a survivor with a negative or zero score is one like any other. */
    s[0].chips = 0;
    ck_assert_int_eq(tour_payout_cancel_match(2400, s, 9, a), 0);
    /* Property: random pools and buy-ins, the total is the pool, nobody below his buy-ins. */
    uint64_t x = 7;
    for (int round = 0; round < 2000; round++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t n = 1 + (size_t)(x >> 33) % 9;
        int64_t refunds = 0;
        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            s[i].buyins_paid = (int64_t)((x >> 33) % 500);
            refunds += s[i].buyins_paid;
        }
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t pool = refunds + (int64_t)((x >> 33) % 10000);
        ck_assert_int_eq(tour_payout_cancel_match(pool, s, n, a), 0);
        int64_t total = 0;
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_ge(a[i], s[i].buyins_paid);
            total += a[i];
        }
        ck_assert_int_eq(total, pool);
    }
    /* Refused: nobody, refunds above the pool, a negative buy-in. */
    ck_assert_int_eq(tour_payout_cancel_match(2400, s, 0, a), -EINVAL);
    s[0].buyins_paid = 100;
    ck_assert_int_eq(tour_payout_cancel_match(99, s, 1, a), -EINVAL);
    s[0].buyins_paid = -1;
    ck_assert_int_eq(tour_payout_cancel_match(99, s, 1, a), -EINVAL);
}
END_TEST

/* Items by place (docs/tournaments.md "Items"): independent of the places paid in chips; a
 * tied group's shared place gives each of them its item (match_prizes / tour_payout_busts give
 * every tied player the best place). */
START_TEST(test_tour_payout_items_follow_places)
{
    tour_payout_item_t items[2] = {{.place = 1, .item = "trophy:gold"},
                                   {.place = 3, .item = "ticket:final-2027"}};
    tour_payout_config_t c = tour_payout_config_default();
    c.items = items;
    c.nitems = 2;
    /* 7 players left after a hand where three busted: 900 -> 8th, two of 500 tie for 9th. */
    int64_t prizes[3] = {500, 300, 200};
    tour_bust_t b[3] = {{.player = 1, .start_stack = 900, .tiebreak = 1},
                        {.player = 2, .start_stack = 500, .tiebreak = 2},
                        {.player = 3, .start_stack = 500, .tiebreak = 3}};
    tour_award_t aw[3];
    ck_assert_int_eq(tour_payout_busts(prizes, 3, 2, b, 3, aw), 0);
    /* places 2, 3, 3: the tied pair both take place 3 and its item. */
    ck_assert_uint_eq(aw[0].place, 2);
    ck_assert_ptr_null(tour_payout_item(&c, aw[0].place));
    ck_assert_uint_eq(aw[1].place, 3);
    ck_assert_uint_eq(aw[2].place, 3);
    ck_assert_str_eq(tour_payout_item(&c, aw[1].place), "ticket:final-2027");
    ck_assert_str_eq(tour_payout_item(&c, aw[2].place), "ticket:final-2027");
    ck_assert_str_eq(tour_payout_item(&c, 1), "trophy:gold");
    ck_assert_ptr_null(tour_payout_item(NULL, 1));
    ck_assert(tour_payout_item_valid("trophy:gold", 11));
    ck_assert(!tour_payout_item_valid("trophy gold", 11));
    ck_assert(!tour_payout_item_valid("", 0));
    ck_assert(!tour_payout_item_valid("a/b", 3));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tour_payout");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_tour_payout_pool_fees_out_guarantee_in);
    tcase_add_test(tc, test_tour_payout_places_about_fifteen_percent);
    tcase_add_test(tc, test_tour_payout_table_conserves_chips);
    tcase_add_test(tc, test_tour_payout_tiers_conserve_chips);
    suite_add_tcase(s, tc);
    tc = tcase_create("busts");
    tcase_add_test(tc, test_tour_payout_same_hand_busts_share_places);
    tcase_add_test(tc, test_tour_payout_busts_conserve_chips);
    suite_add_tcase(s, tc);
    tc = tcase_create("cancel");
    tcase_add_test(tc, test_tour_payout_cancel_worked_examples);
    tcase_add_test(tc, test_tour_payout_cancel_conserves_chips);
    tcase_add_test(tc, test_tour_payout_cancel_match_refunds_and_splits_equally);
    suite_add_tcase(s, tc);
    tc = tcase_create("items");
    tcase_add_test(tc, test_tour_payout_items_follow_places);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
