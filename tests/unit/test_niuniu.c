/*
 * Unit tests for Niu Niu's rules module (games/niuniu/niuniu.h), following docs/rules/niuniu.md:
 *   - cards: points, the tie order (K..A, spades > hearts > clubs > diamonds) ("Cards", "Ties");
 *   - categories: hand-picked examples of each, the precedence of a hand that qualifies for
 *     several, the split and the value, the card order not mattering ("Hand categories",
 *     "Splits");
 *   - counts: every category over all 2,598,960 five-card hands ("Category counts");
 *   - compare: the category order, ties by the top card and its suit ("Ties");
 *   - refusals: bad cards, bad counts, duplicates, bad configs and rounds;
 *   - banker: bid-for-banker, rotation, eligibility, bets ("The banker", "Bets");
 *   - settlement: each player against the banker, the order of transfers, a short banker paying
 *     the strongest winners first ("Settlement").
 * croupier-rules niuniu eval / compare are tested by tools/rules/test_rules_niuniu.sh.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cardtext.h"
#include "niuniu.h"

/* check's ck_assert reports every passing call to the parent process, which would dominate
 * the enumeration; this calls into check only on failure. */
#define T_ASSERT(c)                                                                                \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_abort_msg("Assertion '%s' failed", #c);                                             \
    } while (0)

/* Parses five cards of text (the test's own hands: always well-formed). */
static void cards(const char *text, uint8_t out[NIUNIU_HAND_CARDS])
{
    ck_assert_int_eq(cardtext_parse(text, out, NIUNIU_HAND_CARDS), NIUNIU_HAND_CARDS);
}

static niuniu_hand_t hand(const char *text)
{
    uint8_t c[NIUNIU_HAND_CARDS];
    niuniu_hand_t h;
    cards(text, c);
    ck_assert_int_eq(niuniu_eval(c, NIUNIU_HAND_CARDS, &h), 0);
    return h;
}

static int card(const char *text)
{
    int c = cardtext_parse_card(text);
    ck_assert_int_ge(c, 0);
    return c;
}

/* The category name, the split "NIU/REST" (or "-") and the value of a hand, as one string. */
static void describe(const char *text, char *buf, size_t len)
{
    niuniu_hand_t h = hand(text);
    char niu[8], rest[8];
    if (!h.has_niu) {
        snprintf(buf, len, "%s - -", niuniu_category_name(h.category));
        return;
    }
    ck_assert_int_eq(cardtext_format(h.niu, 3, niu, sizeof niu), 6);
    ck_assert_int_eq(cardtext_format(h.rest, 2, rest, sizeof rest), 4);
    snprintf(buf, len, "%s %s/%s %d", niuniu_category_name(h.category), niu, rest, h.points);
}

#define ASSERT_HAND(text, want)                                                                    \
    do {                                                                                           \
        char got_[64];                                                                             \
        describe(text, got_, sizeof got_);                                                         \
        ck_assert_str_eq(got_, want);                                                              \
    } while (0)

/* ---- cards ------------------------------------------------------------------------------ */

START_TEST(test_card_points_count_faces_ten_and_the_ace_one)
{
    ck_assert_int_eq(niuniu_card_points(card("As")), 1);
    ck_assert_int_eq(niuniu_card_points(card("2c")), 2);
    ck_assert_int_eq(niuniu_card_points(card("9d")), 9);
    ck_assert_int_eq(niuniu_card_points(card("Th")), 10);
    ck_assert_int_eq(niuniu_card_points(card("Js")), 10);
    ck_assert_int_eq(niuniu_card_points(card("Qc")), 10);
    ck_assert_int_eq(niuniu_card_points(card("Kd")), 10);
    ck_assert_int_eq(niuniu_card_points(7), 0);
    ck_assert_int_eq(niuniu_card_points(60), 0);
}
END_TEST

START_TEST(test_tie_order_is_king_to_ace_then_spades_hearts_clubs_diamonds)
{
    /* Every card has its own order, 4..55, and the order follows rank then suit. */
    const char *order = "A2"
                        "3456789TJQK";
    const char *suits = "dchs";
    int prev = 0;
    for (int r = 0; r < 13; r++)
        for (int s = 0; s < 4; s++) {
            char t[3] = {order[r], suits[s], '\0'};
            int o = niuniu_card_order(card(t));
            ck_assert_int_eq(o, prev == 0 ? 4 : prev + 1);
            prev = o;
        }
    ck_assert_int_eq(prev, 55);
    ck_assert_int_lt(niuniu_card_order(card("As")), niuniu_card_order(card("2d")));
    ck_assert_int_eq(niuniu_card_order(0), 0);
    ck_assert_int_eq(niuniu_card_order(255), 0);
}
END_TEST

/* ---- categories ------------------------------------------------------------------------- */

START_TEST(test_each_category_by_example_with_its_split_and_value)
{
    ASSERT_HAND("As2c3d4h9s", "no_niu - -");
    ASSERT_HAND("Ks7h6c5d2s", "no_niu - -");
    ASSERT_HAND("As8s7h5cAd", "niu_2 8s7h5c/AsAd 2");
    ASSERT_HAND("KsQhTc2d3s", "niu_5 KsQhTc/3s2d 5");
    ASSERT_HAND("KsQhTc9d8s", "niu_7 KsQhTc/9d8s 7");
    ASSERT_HAND("9s8h3c7d2c", "niu_9 9s8h3c/7d2c 9");
    ASSERT_HAND("KdQdJc5h5c", "niu_niu KdQdJc/5h5c 0");
    ASSERT_HAND("TsKhKcQdJs", "niu_niu KhKcQd/JsTs 0"); /* a ten: not five faces */
    ASSERT_HAND("KsKhKcQdJs", "five_faces KsKhKc/QdJs 0");
    ASSERT_HAND("5s5h5c5d9h", "bomb - -");
    ASSERT_HAND("AhAc2h3c3d", "five_small - -");
    /* Niu 1 and every other value: A + 9 + K... */
    ASSERT_HAND("KsQsJsAs9s", "niu_niu KsQsJs/9sAs 0");
    ASSERT_HAND("KsQsJs2s9s", "niu_1 KsQsJs/9s2s 1");
    ASSERT_HAND("KsQsJs2s7s", "niu_9 KsQsJs/7s2s 9");
    /* The value is the total mod 10 whichever three make the niu: 4+6+K or 6+4+T... */
    niuniu_hand_t h = hand("6s4hKcTd5s");
    ck_assert_int_eq(h.category, NIUNIU_NIU_5);
    ck_assert_int_eq(h.points, 5);
}
END_TEST

START_TEST(test_precedence_of_a_hand_in_several_categories)
{
    /* Four aces and a two: bomb and five small -> five small (sum 6). */
    ck_assert_int_eq(hand("AsAhAcAd2s").category, NIUNIU_FIVE_SMALL);
    ck_assert_int_eq(hand("2s2h2c2dAd").category, NIUNIU_FIVE_SMALL); /* sum 9 */
    ck_assert_int_eq(hand("2s2h2c2d3d").category, NIUNIU_BOMB);       /* sum 11 */
    /* Four kings and a queen: bomb and five faces -> bomb; it also has a niu niu. */
    niuniu_hand_t h = hand("KsKhKcKdQs");
    ck_assert_int_eq(h.category, NIUNIU_BOMB);
    ck_assert(h.has_niu);
    ck_assert_int_eq(h.points, 0);
    /* Five faces always make niu niu, and rank above it. */
    h = hand("KsQhJcQdJs");
    ck_assert_int_eq(h.category, NIUNIU_FIVE_FACES);
    ck_assert(h.has_niu);
    ck_assert_int_eq(h.points, 0);
    /* Five small: every card under 5 and the sum at most 10. */
    ck_assert_int_eq(hand("AsAcAd3s4c").category, NIUNIU_FIVE_SMALL); /* sum 10 */
    ck_assert_int_eq(hand("AsAc2d3h4s").category, NIUNIU_NO_NIU);     /* sum 11 */
    ck_assert_int_eq(hand("AsAcAd2s5c").category, NIUNIU_NO_NIU);     /* sum 10, a 5 */
    /* A five small never has a niu: three cards under 5 make 10 at most, so a niu takes all
     * of 10 and the other two push the sum past it. The same cards summing to 12 do. */
    ck_assert(!hand("AsAcAd3s4c").has_niu);
    h = hand("2s4h4cAdAs");
    ck_assert_int_eq(h.category, NIUNIU_NIU_2);
}
END_TEST

START_TEST(test_card_order_does_not_change_the_evaluation)
{
    const char *hands[] = {"KsQhTc9d8s", "As8s7h5cAd", "KsKhKcKdQs", "AhAc2h3c3d", "As2c3d4h9s"};
    for (size_t i = 0; i < sizeof hands / sizeof hands[0]; i++) {
        uint8_t c[NIUNIU_HAND_CARDS];
        cards(hands[i], c);
        niuniu_hand_t first;
        ck_assert_int_eq(niuniu_eval(c, NIUNIU_HAND_CARDS, &first), 0);
        /* All 120 orders (Heap's algorithm, iterative). */
        int k[NIUNIU_HAND_CARDS] = {0}, j = 1, perms = 1;
        while (j < NIUNIU_HAND_CARDS) {
            if (k[j] < j) {
                int a = j % 2 ? k[j] : 0;
                uint8_t t = c[a];
                c[a] = c[j];
                c[j] = t;
                niuniu_hand_t h;
                ck_assert_int_eq(niuniu_eval(c, NIUNIU_HAND_CARDS, &h), 0);
                ck_assert_mem_eq(&h, &first, sizeof h);
                perms++;
                k[j]++;
                j = 1;
            } else {
                k[j++] = 0;
            }
        }
        ck_assert_int_eq(perms, 120);
    }
}
END_TEST

/* ---- counts ----------------------------------------------------------------------------- */

/*
 * Every five-card hand, once: the count of each category (docs/rules/niuniu.md "Category
 * counts"; the numbers were derived by an independent enumeration written in Python, and the
 * special ones by hand: 13 * 48 - 16 bombs, C(12,5) - 24 five faces). Also checks on the way
 * that the split adds up and the key orders by category first.
 */
START_TEST(test_category_counts_over_all_2598960_hands)
{
    static const long want[NIUNIU_CATEGORIES] = {
        870984,                                                                 /* no niu */
        171288, 168072, 171288, 168072, 177408, 168072, 171288, 168072, 171288, /* niu 1..9 */
        190976,                                                                 /* niu niu */
        768,                                                                    /* five faces */
        608,                                                                    /* bomb */
        776,                                                                    /* five small */
    };
    long count[NIUNIU_CATEGORIES] = {0}, total = 0;
    uint8_t deck[NIUNIU_DECK_CARDS], c[NIUNIU_HAND_CARDS];
    for (int i = 0; i < NIUNIU_DECK_CARDS; i++)
        deck[i] = CARDTEXT_CARD(2 + i / 4, i % 4);
    for (int a = 0; a < 48; a++)
        for (int b = a + 1; b < 49; b++)
            for (int d = b + 1; d < 50; d++)
                for (int e = d + 1; e < 51; e++)
                    for (int f = e + 1; f < 52; f++) {
                        c[0] = deck[a], c[1] = deck[b], c[2] = deck[d], c[3] = deck[e];
                        c[4] = deck[f];
                        niuniu_hand_t h;
                        T_ASSERT(niuniu_eval(c, NIUNIU_HAND_CARDS, &h) == 0);
                        T_ASSERT(h.category >= 0 && h.category < NIUNIU_CATEGORIES);
                        T_ASSERT(h.key / 256 == (int)h.category);
                        if (h.has_niu) {
                            int n = niuniu_card_points(h.niu[0]) + niuniu_card_points(h.niu[1]) +
                                    niuniu_card_points(h.niu[2]);
                            int r = niuniu_card_points(h.rest[0]) + niuniu_card_points(h.rest[1]);
                            T_ASSERT(n % 10 == 0 && r % 10 == h.points);
                        }
                        count[h.category]++;
                        total++;
                    }
    ck_assert_int_eq(total, 2598960);
    long sum = 0;
    for (int i = 0; i < NIUNIU_CATEGORIES; i++) {
        ck_assert_msg(count[i] == want[i], "%s: %ld hands, want %ld",
                      niuniu_category_name((niuniu_category_t)i), count[i], want[i]);
        sum += want[i];
    }
    ck_assert_int_eq(sum, 2598960);
}
END_TEST

/* ---- compare ---------------------------------------------------------------------------- */

START_TEST(test_compare_follows_the_category_order)
{
    /* One example per category, weakest first; each beats every one before it. */
    const char *ladder[] = {
        "KsQd9h7c5d", /* no niu, a king on top */
        "KsQsJs2s9s", /* niu 1 */
        "As8s7h5cAd", /* niu 2 (an eight on top: the category decides) */
        "KsQhTc2d3s", /* niu 5 */
        "KsQhTc9d8s", /* niu 7 */
        "9s8h3c7d2c", /* niu 9 */
        "2s3h5cKdTs", /* niu niu */
        "JsJhJcQdQs", /* five faces */
        "2s2h2c2d3s", /* bomb of twos */
        "AsAcAd3s4c", /* five small */
    };
    size_t n = sizeof ladder / sizeof ladder[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            niuniu_hand_t a = hand(ladder[i]), b = hand(ladder[j]);
            int c = niuniu_compare(&a, &b);
            ck_assert_msg(i > j   ? c > 0
                          : i < j ? c < 0
                                  : c == 0,
                          "%s vs %s: %d", ladder[i], ladder[j], c);
        }
    ck_assert_int_eq(hand("KsQd9h7c5d").category, NIUNIU_NO_NIU);
}
END_TEST

START_TEST(test_ties_go_to_the_top_card_then_its_suit)
{
    niuniu_hand_t a, b;
    /* Niu 7 both: Ks over Kh, Kh over Kc, Kc over Kd. */
    a = hand("KsQhTc9d8s"), b = hand("KhQsTd9c8h");
    ck_assert_int_gt(niuniu_compare(&a, &b), 0);
    a = hand("KhQsTd9c8h"), b = hand("KcQhTc9d8s");
    ck_assert_int_gt(niuniu_compare(&a, &b), 0);
    a = hand("KcQhTc9d8s"), b = hand("KdQsTd9c8h");
    ck_assert_int_gt(niuniu_compare(&a, &b), 0);
    /* Only the top card counts: a king over a queen whatever follows. */
    a = hand("Kd5c4s3h3c"), b = hand("QsJsTs9s6s"); /* niu 5 both */
    ck_assert_int_eq(a.category, NIUNIU_NIU_5);
    ck_assert_int_eq(b.category, NIUNIU_NIU_5);
    ck_assert_int_gt(niuniu_compare(&a, &b), 0);
    /* Bombs too are compared by the top card, not by the four (docs: "Ties"). */
    a = hand("2s2h2c2dKs"), b = hand("QsQhQcQd3s");
    ck_assert_int_eq(a.category, NIUNIU_BOMB);
    ck_assert_int_gt(niuniu_compare(&a, &b), 0);
    /* Two hands with the same top card (never in one deal) tie. */
    a = hand("KsQhTc9d8s"), b = hand("8s9dTcQhKs");
    ck_assert_int_eq(niuniu_compare(&a, &b), 0);
    a = hand("KsQhTc9d8s"), b = hand("KsQcTh9s8d");
    ck_assert_int_eq(niuniu_compare(&a, &b), 0);
}
END_TEST

/* ---- refusals --------------------------------------------------------------------------- */

START_TEST(test_bad_hands_are_refused)
{
    uint8_t c[8];
    niuniu_hand_t h;
    cards("KsQhTc9d8s", c);
    c[5] = CARDTEXT_CARD(2, 0);
    ck_assert_int_eq(niuniu_eval(c, 4, &h), -EINVAL);
    ck_assert_int_eq(h.category, NIUNIU_INVALID);
    ck_assert_int_eq(niuniu_eval(c, 6, &h), -EINVAL);
    ck_assert_int_eq(niuniu_eval(c, 0, &h), -EINVAL);
    ck_assert_int_eq(niuniu_eval(c, -1, &h), -EINVAL);
    ck_assert_int_eq(niuniu_eval(NULL, 5, &h), -EINVAL);
    ck_assert_int_eq(niuniu_eval(c, 5, NULL), -EINVAL);
    /* Every byte outside 8..59 in every position. */
    for (int b = 0; b < 256; b++) {
        if (b >= 8 && b <= 59)
            continue;
        for (int p = 0; p < NIUNIU_HAND_CARDS; p++) {
            uint8_t d[NIUNIU_HAND_CARDS];
            cards("KsQhTc9d8s", d);
            d[p] = (uint8_t)b;
            h.category = NIUNIU_NO_NIU;
            T_ASSERT(niuniu_eval(d, NIUNIU_HAND_CARDS, &h) == -EINVAL);
            T_ASSERT(h.category == NIUNIU_INVALID);
        }
    }
    /* A card twice, in any two positions. */
    for (int p = 0; p < NIUNIU_HAND_CARDS; p++)
        for (int q = 0; q < NIUNIU_HAND_CARDS; q++) {
            if (p == q)
                continue;
            uint8_t d[NIUNIU_HAND_CARDS];
            cards("KsQhTc9d8s", d);
            d[q] = d[p];
            ck_assert_int_eq(niuniu_eval(d, NIUNIU_HAND_CARDS, &h), -EINVAL);
        }
    ck_assert_str_eq(niuniu_category_name(NIUNIU_INVALID), "invalid");
    ck_assert_str_eq(niuniu_category_name((niuniu_category_t)14), "invalid");
}
END_TEST

START_TEST(test_bad_configs_are_refused)
{
    niuniu_config_t cfg, bad;
    niuniu_config_default(&cfg);
    ck_assert_int_eq(niuniu_config_check(&cfg), 0);
    ck_assert_int_eq(niuniu_config_check(NULL), -EINVAL);
#define BAD(field, value)                                                                          \
    do {                                                                                           \
        bad = cfg;                                                                                 \
        bad.field = value;                                                                         \
        ck_assert_int_eq(niuniu_config_check(&bad), -EINVAL);                                      \
    } while (0)
    BAD(seats, 1);
    BAD(seats, NIUNIU_MAX_SEATS + 1);
    BAD(stake, 0);
    BAD(stake, NIUNIU_MAX_CHIPS + 1);
    BAD(nbet_options, 0);
    BAD(nbet_options, NIUNIU_MAX_BET_OPTIONS + 1);
    BAD(bet_options[0], 0);
    BAD(bet_options[2], 2); /* not rising */
    BAD(banker_mode, 2);
    BAD(max_bid, 0);
    BAD(max_bid, NIUNIU_MAX_BID + 1);
    BAD(mult[0], 0);
    BAD(mult[13], NIUNIU_MAX_MULT + 1);
    BAD(mult[12], 6); /* bomb over five small */
    BAD(bank_min_stakes, -1);
    BAD(cards_before_bid, 6);
    BAD(bid_ms, -1);
    BAD(bet_ms, -1);
    BAD(show_ms, -1);
#undef BAD
    ck_assert_int_eq(niuniu_multiplier(&cfg, NIUNIU_INVALID), -EINVAL);
    ck_assert_int_eq(niuniu_multiplier(&cfg, (niuniu_category_t)14), -EINVAL);
}
END_TEST

/* ---- configuration ---------------------------------------------------------------------- */

START_TEST(test_default_config_and_multiplier_table)
{
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    ck_assert_int_eq(cfg.seats, 6);
    ck_assert_int_eq(cfg.stake, 10);
    ck_assert_int_eq(cfg.nbet_options, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(cfg.bet_options[i], i + 1);
    ck_assert_int_eq(cfg.banker_mode, NIUNIU_BANKER_BID);
    ck_assert_int_eq(cfg.max_bid, 4);
    ck_assert_int_eq(cfg.bank_min_stakes, 100);
    ck_assert_int_eq(cfg.cards_before_bid, 4);
    ck_assert_int_eq(cfg.bid_ms, 8000);
    ck_assert_int_eq(cfg.bet_ms, 8000);
    ck_assert_int_eq(cfg.show_ms, 10000);
    static const int want[NIUNIU_CATEGORIES] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 4, 5, 5};
    for (int i = 0; i < NIUNIU_CATEGORIES; i++)
        ck_assert_int_eq(niuniu_multiplier(&cfg, (niuniu_category_t)i), want[i]);
    ck_assert_int_eq(niuniu_max_multiplier(&cfg), 5);
    ck_assert_int_eq(niuniu_default_bet(&cfg), 1);
}
END_TEST

/* ---- banker ----------------------------------------------------------------------------- */

START_TEST(test_highest_bid_banks_with_its_multiplier)
{
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    int64_t stacks[NIUNIU_MAX_SEATS] = {1000, 1000, 1000, 1000, 1000, 1000};
    int bids[NIUNIU_MAX_SEATS] = {0, 2, 3, -1, 1, 0};
    int banker = -1, mult = 0;
    ck_assert_int_eq(niuniu_banker_bid(&cfg, bids, stacks, 12345, &banker, &mult), 0);
    ck_assert_int_eq(banker, 2);
    ck_assert_int_eq(mult, 3);
    /* Equal highest bids: the (rnd % 3)-th of seats 1, 2, 4 in seat order. */
    int tied[NIUNIU_MAX_SEATS] = {0, 4, 4, -1, 4, 1};
    const int expect[3] = {1, 2, 4};
    for (uint32_t rnd = 0; rnd < 6; rnd++) {
        ck_assert_int_eq(niuniu_banker_bid(&cfg, tied, stacks, rnd, &banker, &mult), 0);
        ck_assert_int_eq(banker, expect[rnd % 3]);
        ck_assert_int_eq(mult, 4);
    }
}
END_TEST

/* The draw among equal bids is exactly uniform over the engine's range of rnd
 * (NIUNIU_DRAW_RANGE, drawn by deck_uniform()): for every count of tied seats, 2 to 10, every rnd
 * in [0, NIUNIU_DRAW_RANGE) once gives each tied seat the bank equally often. */
START_TEST(test_banker_draw_is_uniform_over_its_range_for_every_count)
{
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    cfg.seats = NIUNIU_MAX_SEATS;
    int64_t stacks[NIUNIU_MAX_SEATS];
    for (int s = 0; s < NIUNIU_MAX_SEATS; s++)
        stacks[s] = 1000;
    for (int count = 2; count <= NIUNIU_MAX_SEATS; count++) {
        int bids[NIUNIU_MAX_SEATS], hits[NIUNIU_MAX_SEATS] = {0};
        for (int s = 0; s < NIUNIU_MAX_SEATS; s++)
            bids[s] = s < count ? 2 : 1; /* seats 0..count-1 tie at the highest bid */
        for (uint32_t rnd = 0; rnd < NIUNIU_DRAW_RANGE; rnd++) {
            int banker = -1, mult = 0;
            ck_assert_int_eq(niuniu_banker_bid(&cfg, bids, stacks, rnd, &banker, &mult), 0);
            ck_assert_int_lt(banker, count);
            hits[banker]++;
        }
        for (int s = 0; s < count; s++)
            ck_assert_msg(hits[s] == NIUNIU_DRAW_RANGE / count, "%d tied: seat %d banks %d times",
                          count, s, hits[s]);
    }
}
END_TEST

START_TEST(test_no_bid_draws_a_banker_among_those_who_may_bank_at_one)
{
    niuniu_config_t cfg;
    niuniu_config_default(&cfg); /* may bank from 100 stakes = 1000 chips */
    int64_t stacks[NIUNIU_MAX_SEATS] = {999, 1000, 5000, 400, 1000, 0};
    int bids[NIUNIU_MAX_SEATS] = {0, 0, 0, 0, -1, -1};
    int banker = -1, mult = 0;
    const int expect[2] = {1, 2}; /* seat 0 is short, seat 4 is not in the round */
    for (uint32_t rnd = 0; rnd < 4; rnd++) {
        ck_assert_int_eq(niuniu_banker_bid(&cfg, bids, stacks, rnd, &banker, &mult), 0);
        ck_assert_int_eq(banker, expect[rnd % 2]);
        ck_assert_int_eq(mult, 1);
    }
    /* A bid by a seat that may not bank is refused; nobody able to bank: no round. */
    bids[0] = 1;
    ck_assert_int_eq(niuniu_banker_bid(&cfg, bids, stacks, 0, &banker, &mult), -EINVAL);
    int64_t poor[NIUNIU_MAX_SEATS] = {10, 20, 30};
    int none[NIUNIU_MAX_SEATS] = {0, 0, 0, -1, -1, -1};
    ck_assert_int_eq(niuniu_banker_bid(&cfg, none, poor, 0, &banker, &mult), -ENOENT);
    /* Bad input: a bid over the maximum, one seat in the round, a seat in it with no chips. */
    int over[NIUNIU_MAX_SEATS] = {5, 0, -1, -1, -1, -1};
    ck_assert_int_eq(niuniu_banker_bid(&cfg, over, stacks, 0, &banker, &mult), -EINVAL);
    int one[NIUNIU_MAX_SEATS] = {0, -1, -1, -1, -1, -1};
    ck_assert_int_eq(niuniu_banker_bid(&cfg, one, stacks, 0, &banker, &mult), -EINVAL);
    int broke[NIUNIU_MAX_SEATS] = {-1, 0, 0, -1, -1, 0};
    ck_assert_int_eq(niuniu_banker_bid(&cfg, broke, stacks, 0, &banker, &mult), -EINVAL);
}
END_TEST

START_TEST(test_rotation_passes_clockwise_to_the_next_seat_that_may_bank)
{
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    cfg.banker_mode = NIUNIU_BANKER_ROTATE;
    int64_t stacks[NIUNIU_MAX_SEATS] = {1000, 500, 2000, 1000, 1000, 1000};
    bool in[NIUNIU_MAX_SEATS] = {true, true, true, false, true, true};
    int banker = -1;
    ck_assert_int_eq(niuniu_banker_rotate(&cfg, 0, in, stacks, 0, &banker), 0);
    ck_assert_int_eq(banker, 2); /* seat 1 is short */
    ck_assert_int_eq(niuniu_banker_rotate(&cfg, 2, in, stacks, 0, &banker), 0);
    ck_assert_int_eq(banker, 4); /* seat 3 is not in the round */
    ck_assert_int_eq(niuniu_banker_rotate(&cfg, 5, in, stacks, 0, &banker), 0);
    ck_assert_int_eq(banker, 0); /* round the table */
    /* The first round draws among those who may bank: seats 0, 2, 4, 5. */
    const int expect[4] = {0, 2, 4, 5};
    for (uint32_t rnd = 0; rnd < 8; rnd++) {
        ck_assert_int_eq(niuniu_banker_rotate(&cfg, -1, in, stacks, rnd, &banker), 0);
        ck_assert_int_eq(banker, expect[rnd % 4]);
    }
    /* The last banker alone may bank: it keeps the bank. */
    int64_t one[NIUNIU_MAX_SEATS] = {10, 10, 2000, 10, 10, 10};
    ck_assert_int_eq(niuniu_banker_rotate(&cfg, 2, in, one, 0, &banker), 0);
    ck_assert_int_eq(banker, 2);
    int64_t none[NIUNIU_MAX_SEATS] = {10, 10, 10, 10, 10, 10};
    ck_assert_int_eq(niuniu_banker_rotate(&cfg, 2, in, none, 0, &banker), -ENOENT);
    ck_assert_int_eq(niuniu_banker_rotate(&cfg, 6, in, stacks, 0, &banker), -EINVAL);
    ck_assert_int_eq(niuniu_banker_rotate(&cfg, -2, in, stacks, 0, &banker), -EINVAL);
}
END_TEST

START_TEST(test_a_bet_must_be_an_option_whose_worst_loss_the_stack_covers)
{
    niuniu_config_t cfg;
    niuniu_config_default(&cfg); /* stake 10, largest multiplier 5 */
    /* Bet 3 stakes at a bid of 4: worst loss 3 * 10 * 4 * 5 = 600. */
    ck_assert(niuniu_bet_allowed(&cfg, 600, 4, 3));
    ck_assert(!niuniu_bet_allowed(&cfg, 599, 4, 3));
    ck_assert(niuniu_bet_allowed(&cfg, 599, 4, 2));
    ck_assert(!niuniu_bet_allowed(&cfg, 100000, 4, 6)); /* not an option */
    ck_assert(!niuniu_bet_allowed(&cfg, 100000, 5, 1)); /* a multiplier over max_bid */
    ck_assert(!niuniu_bet_allowed(&cfg, 100000, 0, 1));
    ck_assert(niuniu_may_bank(&cfg, 1000));
    ck_assert(!niuniu_may_bank(&cfg, 999));
    cfg.bank_min_stakes = 0;
    ck_assert(niuniu_may_bank(&cfg, 1));
    ck_assert(!niuniu_may_bank(&cfg, 0));
}
END_TEST

/* ---- settlement ------------------------------------------------------------------------- */

/* A round of four seats, banker 0 at multiplier 2, stacks of 1000 (docs: "Settlement"):
 *   banker  KsQhTc2d3s  niu 5 (x1)
 *   seat 1  KdQdJc5h5c  niu niu (x3), bet 10: wins 10 * 2 * 3 = 60
 *   seat 2  9s8h3c7d2c  niu 9 (x2), bet 20: wins 20 * 2 * 2 = 80
 *   seat 3  As2s4c6h9c  no niu, bet 30: loses 30 * 2 * 1 = 60 */
static void round_setup(niuniu_config_t *cfg, niuniu_round_t *r)
{
    niuniu_config_default(cfg);
    cfg->seats = 4;
    memset(r, 0, sizeof *r);
    r->banker = 0;
    r->mult = 2;
    const char *h[4] = {"KsQhTc2d3s", "KdQdJc5h5c", "9s8h3c7d2c", "As2s4c6h9c"};
    for (int s = 0; s < 4; s++) {
        cards(h[s], r->cards[s]);
        r->stack[s] = 1000;
        r->bet[s] = s * 10;
    }
}

static void assert_transfer(const niuniu_transfer_t *t, int seat, bool won, niuniu_category_t cat,
                            int64_t owed, int64_t amount)
{
    ck_assert_int_eq(t->seat, seat);
    ck_assert_int_eq(t->player_won, won);
    ck_assert_int_eq(t->category, cat);
    ck_assert_int_eq(t->owed, owed);
    ck_assert_int_eq(t->amount, amount);
}

START_TEST(test_each_player_settles_with_the_banker_only)
{
    niuniu_config_t cfg;
    niuniu_round_t r;
    niuniu_settlement_t out;
    round_setup(&cfg, &r);
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &out), 0);
    ck_assert_int_eq(out.n, 3);
    assert_transfer(&out.t[0], 3, false, NIUNIU_NIU_5, 60, 60);
    assert_transfer(&out.t[1], 1, true, NIUNIU_NIU_NIU, 60, 60);
    assert_transfer(&out.t[2], 2, true, NIUNIU_NIU_9, 80, 80);
    ck_assert_int_eq(out.delta[0], -80);
    ck_assert_int_eq(out.delta[1], 60);
    ck_assert_int_eq(out.delta[2], 80);
    ck_assert_int_eq(out.delta[3], -60);
    ck_assert(!out.banker_short);
    /* The banker's hand wins with its own multiplier: give the banker a five small (x5). */
    cards("AhAd2h2d3h", r.cards[0]);
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &out), 0);
    ck_assert_int_eq(out.n, 3);
    assert_transfer(&out.t[0], 1, false, NIUNIU_FIVE_SMALL, 100, 100);
    assert_transfer(&out.t[1], 2, false, NIUNIU_FIVE_SMALL, 200, 200);
    assert_transfer(&out.t[2], 3, false, NIUNIU_FIVE_SMALL, 300, 300);
    ck_assert_int_eq(out.delta[0], 600);
}
END_TEST

START_TEST(test_losers_pay_first_clockwise_from_the_banker_left)
{
    niuniu_config_t cfg;
    niuniu_round_t r;
    niuniu_settlement_t out;
    round_setup(&cfg, &r);
    /* Banker at seat 2 (niu 9): seats 3 (no niu) and 1 (niu 5) lose, seat 0 (niu niu) wins. */
    const char *h[4] = {"KdQdJc5h5c", "KsQhTc2d3s", "9s8h3c7d2c", "As2s4c6h9c"};
    for (int s = 0; s < 4; s++)
        cards(h[s], r.cards[s]);
    r.banker = 2;
    r.bet[0] = 10, r.bet[1] = 20, r.bet[2] = 0, r.bet[3] = 30;
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &out), 0);
    ck_assert_int_eq(out.n, 3);
    assert_transfer(&out.t[0], 3, false, NIUNIU_NIU_9, 120, 120);
    assert_transfer(&out.t[1], 1, false, NIUNIU_NIU_9, 80, 80);
    assert_transfer(&out.t[2], 0, true, NIUNIU_NIU_NIU, 60, 60);
    ck_assert_int_eq(out.delta[2], 140);
    /* A seat with no bet is not in the round, whatever its cards. */
    r.bet[1] = 0;
    memcpy(r.cards[1], r.cards[0], NIUNIU_HAND_CARDS);
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &out), 0);
    ck_assert_int_eq(out.n, 2);
    ck_assert_int_eq(out.delta[1], 0);
}
END_TEST

START_TEST(test_a_short_banker_pays_the_strongest_winners_first)
{
    niuniu_config_t cfg;
    niuniu_round_t r;
    niuniu_settlement_t out;
    round_setup(&cfg, &r);
    /* 50 chips + the 60 collected: the niu niu gets its 60, the niu 9 the last 50 of 80. */
    r.stack[0] = 50;
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &out), 0);
    assert_transfer(&out.t[0], 3, false, NIUNIU_NIU_5, 60, 60);
    assert_transfer(&out.t[1], 1, true, NIUNIU_NIU_NIU, 60, 60);
    assert_transfer(&out.t[2], 2, true, NIUNIU_NIU_9, 80, 50);
    ck_assert(out.banker_short);
    ck_assert_int_eq(out.delta[0], -50); /* the whole stack */
    ck_assert_int_eq(out.delta[1] + out.delta[2] + out.delta[3] + out.delta[0], 0);
    /* With nothing but the collections: the weaker winner gets nothing. */
    r.stack[0] = 0;
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &out), 0);
    assert_transfer(&out.t[1], 1, true, NIUNIU_NIU_NIU, 60, 60);
    assert_transfer(&out.t[2], 2, true, NIUNIU_NIU_9, 80, 0);
    ck_assert_int_eq(out.delta[0], 0);
    /* Strength, not seat order or size: swap the hands of seats 1 and 2. */
    uint8_t t[NIUNIU_HAND_CARDS];
    memcpy(t, r.cards[1], sizeof t);
    memcpy(r.cards[1], r.cards[2], sizeof t);
    memcpy(r.cards[2], t, sizeof t);
    r.stack[0] = 50; /* 110 to pay: seat 2's niu niu 20*2*3 = 120 first */
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &out), 0);
    assert_transfer(&out.t[1], 2, true, NIUNIU_NIU_NIU, 120, 110);
    assert_transfer(&out.t[2], 1, true, NIUNIU_NIU_9, 40, 0);
    ck_assert_int_eq(out.delta[0], -50);
}
END_TEST

START_TEST(test_bad_rounds_are_refused)
{
    niuniu_config_t cfg;
    niuniu_round_t r, bad;
    niuniu_settlement_t out;
    round_setup(&cfg, &r);
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &out), 0);
#define BAD_ROUND(stmt)                                                                            \
    do {                                                                                           \
        bad = r;                                                                                   \
        stmt;                                                                                      \
        ck_assert_int_eq(niuniu_settle(&cfg, &bad, &out), -EINVAL);                                \
        ck_assert_int_eq(out.n, 0);                                                                \
    } while (0)
    BAD_ROUND(bad.banker = -1);
    BAD_ROUND(bad.banker = 4);
    BAD_ROUND(bad.mult = 0);
    BAD_ROUND(bad.mult = 5);
    BAD_ROUND(bad.bet[0] = 10);                          /* the banker bets */
    BAD_ROUND(bad.bet[1] = bad.bet[2] = bad.bet[3] = 0); /* no player */
    BAD_ROUND(bad.bet[3] = -5);
    BAD_ROUND(bad.bet[3] = 101); /* 101 * 2 * 5 > 1000 */
    BAD_ROUND(bad.stack[0] = -1);
    BAD_ROUND(bad.cards[2][4] = bad.cards[1][0]); /* a card in two hands */
    BAD_ROUND(bad.cards[0][1] = bad.cards[0][0]); /* a card twice in the banker's */
    BAD_ROUND(bad.cards[3][0] = 0);               /* out of range */
    BAD_ROUND(bad.cards[3][0] = 60);
    bad = r;
    ck_assert_int_eq(niuniu_settle(NULL, &bad, &out), -EINVAL);
    ck_assert_int_eq(niuniu_settle(&cfg, NULL, &out), -EINVAL);
    ck_assert_int_eq(niuniu_settle(&cfg, &bad, NULL), -EINVAL);
    /* The largest bet the stack covers is accepted. */
    bad.bet[3] = 100;
    ck_assert_int_eq(niuniu_settle(&cfg, &bad, &out), 0);
#undef BAD_ROUND
}
END_TEST

int main(void)
{
    Suite *s = suite_create("niuniu");
    TCase *tc;
    tc = tcase_create("cards");
    tcase_add_test(tc, test_card_points_count_faces_ten_and_the_ace_one);
    tcase_add_test(tc, test_tie_order_is_king_to_ace_then_spades_hearts_clubs_diamonds);
    suite_add_tcase(s, tc);
    tc = tcase_create("categories");
    tcase_add_test(tc, test_each_category_by_example_with_its_split_and_value);
    tcase_add_test(tc, test_precedence_of_a_hand_in_several_categories);
    tcase_add_test(tc, test_card_order_does_not_change_the_evaluation);
    suite_add_tcase(s, tc);
    tc = tcase_create("counts");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_category_counts_over_all_2598960_hands);
    suite_add_tcase(s, tc);
    tc = tcase_create("compare");
    tcase_add_test(tc, test_compare_follows_the_category_order);
    tcase_add_test(tc, test_ties_go_to_the_top_card_then_its_suit);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_add_test(tc, test_bad_hands_are_refused);
    tcase_add_test(tc, test_bad_configs_are_refused);
    tcase_add_test(tc, test_bad_rounds_are_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("config");
    tcase_add_test(tc, test_default_config_and_multiplier_table);
    suite_add_tcase(s, tc);
    tc = tcase_create("banker");
    tcase_add_test(tc, test_highest_bid_banks_with_its_multiplier);
    tcase_add_test(tc, test_banker_draw_is_uniform_over_its_range_for_every_count);
    tcase_add_test(tc, test_no_bid_draws_a_banker_among_those_who_may_bank_at_one);
    tcase_add_test(tc, test_rotation_passes_clockwise_to_the_next_seat_that_may_bank);
    tcase_add_test(tc, test_a_bet_must_be_an_option_whose_worst_loss_the_stack_covers);
    suite_add_tcase(s, tc);
    tc = tcase_create("settlement");
    tcase_add_test(tc, test_each_player_settles_with_the_banker_only);
    tcase_add_test(tc, test_losers_pay_first_clockwise_from_the_banker_left);
    tcase_add_test(tc, test_a_short_banker_pays_the_strongest_winners_first);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
