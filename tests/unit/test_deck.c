/*
 * test_deck -- the kit's deck source (common/deck.h, docs/fairness.md): permutations, the
 * unbiased scaling, the commitment's byte layout, and a failed generator disabling deals.
 * The statistical tests over 10^6 decks are in test_deck_heavy.c (suite 'heavy').
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "deck.h"

static bool is_permutation(const uint8_t *d, size_t n)
{
    bool seen[256] = {false};
    for (size_t i = 0; i < n; i++) {
        if (d[i] >= n || seen[d[i]])
            return false;
        seen[d[i]] = true;
    }
    return true;
}

START_TEST(test_deck_shuffle_gives_a_permutation_of_every_deck_size)
{
    static const size_t sizes[] = {0, 1, 2, 3, 32, 52, 54, 104, 108, 255};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (int rep = 0; rep < 100; rep++) {
            uint8_t d[256];
            for (size_t i = 0; i < sizes[k]; i++)
                d[i] = (uint8_t)i;
            ck_assert_int_eq(deck_shuffle(d, sizes[k]), 0);
            ck_assert(is_permutation(d, sizes[k]));
        }
    }
    /* An 8-deck shoe of card codes: the multiset is kept. */
    uint8_t shoe[DECK_MAX_CARDS];
    int count[52] = {0};
    for (int i = 0; i < DECK_MAX_CARDS; i++)
        shoe[i] = (uint8_t)(i % 52);
    ck_assert_int_eq(deck_shuffle(shoe, DECK_MAX_CARDS), 0);
    for (int i = 0; i < DECK_MAX_CARDS; i++)
        count[shoe[i]]++;
    for (int c = 0; c < 52; c++)
        ck_assert_int_eq(count[c], 8);
    ck_assert(deck_healthy());
}
END_TEST

START_TEST(test_deck_shuffle_changes_the_order)
{
    /* Two 52-card shuffles are equal with chance 1/52!: never in a working generator. */
    uint8_t a[52], b[52];
    for (int i = 0; i < 52; i++)
        a[i] = b[i] = (uint8_t)i;
    ck_assert_int_eq(deck_shuffle(a, 52), 0);
    ck_assert_int_eq(deck_shuffle(b, 52), 0);
    ck_assert(memcmp(a, b, 52) != 0);
}
END_TEST

START_TEST(test_deck_uniform_stays_in_range_and_refuses_zero)
{
    uint32_t x;
    ck_assert_int_eq(deck_uniform(0, &x), -EINVAL);
    ck_assert_int_eq(deck_uniform(1, &x), 0);
    ck_assert_uint_eq(x, 0);
    int hits[3] = {0};
    for (int i = 0; i < 30000; i++) {
        ck_assert_int_eq(deck_uniform(3, &x), 0);
        ck_assert_uint_lt(x, 3);
        hits[x]++;
    }
    for (int i = 0; i < 3; i++) /* 10000 expected, sd ~82: 9500..10500 is > 6 sd */
        ck_assert(hits[i] > 9500 && hits[i] < 10500);
    ck_assert_int_eq(deck_uniform(UINT32_MAX, &x), 0);
    ck_assert_uint_lt(x, UINT32_MAX);
}
END_TEST

/* A generator whose output is the byte counter: lets the test predict the draws. */
static uint8_t counter_next;
static int counter_gen(unsigned char *buf, int n)
{
    for (int i = 0; i < n; i++)
        buf[i] = counter_next++;
    return 1;
}

START_TEST(test_deck_rejects_the_biased_low_range)
{
    /* bound 3: 2^32 mod 3 = 1, so only x with (x * 3) mod 2^32 == 0, i.e. x = 0, is rejected.
     * The counter generator's first word is 0x03020100 (little-endian), accepted: j =
     * (0x03020100 * 3) >> 32 = 0. Outputs are used in the order generated. */
    deck_set_generator(counter_gen);
    counter_next = 0;
    uint32_t x;
    ck_assert_int_eq(deck_uniform(3, &x), 0);
    ck_assert_uint_eq(x, (uint32_t)(((uint64_t)0x03020100u * 3) >> 32));
    ck_assert_int_eq(deck_uniform(1u << 31, &x), 0);
    ck_assert_uint_eq(x, 0x07060504u >> 1);
    deck_set_generator(NULL);
}
END_TEST

START_TEST(test_deck_commitment_layout_known_answer)
{
    /* SHA-256("croupier-deck-v1" || 00 34 || 00..33 || 00..1f), computed independently
     * (docs/fairness.md gives the same example). */
    uint8_t cards[52], nonce[DECK_NONCE_LEN], out[DECK_COMMIT_LEN];
    for (int i = 0; i < 52; i++)
        cards[i] = (uint8_t)i;
    for (int i = 0; i < DECK_NONCE_LEN; i++)
        nonce[i] = (uint8_t)i;
    deck_commitment(cards, 52, nonce, out);
    char hex[2 * DECK_COMMIT_LEN + 1];
    deck_hex(out, sizeof out, hex);
    ck_assert_str_eq(hex, "e6e2e38e721486641d108e09aa7ade38542eb1c7ea83514f26657c6c39392fdd");
    cards[51] = 50; /* any other deck gives another commitment */
    deck_commitment(cards, 52, nonce, out);
    deck_hex(out, sizeof out, hex);
    ck_assert_str_ne(hex, "e6e2e38e721486641d108e09aa7ade38542eb1c7ea83514f26657c6c39392fdd");
}
END_TEST

START_TEST(test_deck_per_card_commitment_known_answer_and_openings)
{
    /* docs/fairness.md "The per-card commitment": the codes 08..3b (hold'em's deck unshuffled,
     * 2c 2d 2h 2s .. As) with the round nonce 00..1f, computed independently (Python's hmac and
     * hashlib). */
    uint8_t codes[52], nonce[DECK_NONCE_LEN], out[DECK_COMMIT_LEN], cn[DECK_NONCE_LEN];
    uint8_t leaves[52 * DECK_LEAF_LEN], leaf[DECK_LEAF_LEN];
    char hex[2 * DECK_COMMIT_LEN + 1];
    for (int i = 0; i < 52; i++)
        codes[i] = (uint8_t)(8 + i);
    for (int i = 0; i < DECK_NONCE_LEN; i++)
        nonce[i] = (uint8_t)i;
    deck_commitment_cards(codes, 52, nonce, out);
    deck_hex(out, sizeof out, hex);
    ck_assert_str_eq(hex, "69d4f69b62af0c0db8d8218c3dc8d94452b8e33d6dfcf4eed2d1ed3c7b6d04f3");
    deck_card_nonce(nonce, 0, cn);
    deck_hex(cn, sizeof cn, hex);
    ck_assert_str_eq(hex, "624f009e13ba9108421b9305515852d220c3e35027c6996a95c9679629bdcef3");
    deck_card_leaves(codes, 52, nonce, leaves);
    deck_hex(leaves, DECK_LEAF_LEN, hex);
    ck_assert_str_eq(hex, "b68de35401ec07e971afa17ce29e160222efe4d3907823e6a5823353bec55eb4");
    deck_hex(leaves + 51 * DECK_LEAF_LEN, DECK_LEAF_LEN, hex);
    ck_assert_str_eq(hex, "fa2b3d2e6ecee55e5fe6eb0749b56927e97ffb51da4ed2d81b118ae03e52fab5");
    /* The leaf of position 0 by hand: tag, 00 00, the code, the card nonce. */
    uint8_t raw[16 + 2 + 1 + DECK_NONCE_LEN];
    memcpy(raw, "croupier-card-v2", 16);
    raw[16] = 0;
    raw[17] = 0;
    raw[18] = 0x08;
    memcpy(raw + 19, cn, DECK_NONCE_LEN);
    SHA256(raw, sizeof raw, leaf);
    ck_assert_mem_eq(leaf, leaves, DECK_LEAF_LEN);
    deck_leaves_commitment(leaves, 52, leaf);
    ck_assert_mem_eq(leaf, out, DECK_COMMIT_LEN);

    /* An opening (position 17, its code, its card nonce) matches its leaf; another code, another
     * position or another card's nonce does not. */
    deck_card_nonce(nonce, 17, cn);
    deck_card_leaf(17, codes[17], cn, leaf);
    ck_assert_mem_eq(leaf, leaves + 17 * DECK_LEAF_LEN, DECK_LEAF_LEN);
    deck_card_leaf(17, (uint8_t)(codes[17] + 1), cn, leaf);
    ck_assert_mem_ne(leaf, leaves + 17 * DECK_LEAF_LEN, DECK_LEAF_LEN);
    deck_card_leaf(18, codes[17], cn, leaf);
    ck_assert_mem_ne(leaf, leaves + 18 * DECK_LEAF_LEN, DECK_LEAF_LEN);
    uint8_t other[DECK_NONCE_LEN];
    deck_card_nonce(nonce, 18, other);
    ck_assert_mem_ne(other, cn, DECK_NONCE_LEN);
    deck_card_leaf(17, codes[17], other, leaf);
    ck_assert_mem_ne(leaf, leaves + 17 * DECK_LEAF_LEN, DECK_LEAF_LEN);
    /* A changed leaf changes the commitment; v1 over the same bytes is another commitment. */
    leaves[5 * DECK_LEAF_LEN] ^= 1;
    deck_leaves_commitment(leaves, 52, leaf);
    ck_assert_mem_ne(leaf, out, DECK_COMMIT_LEN);
    deck_commitment(codes, 52, nonce, leaf);
    ck_assert_mem_ne(leaf, out, DECK_COMMIT_LEN);
}
END_TEST

static uint8_t test_deck_code_plus_8(uint8_t card)
{
    return (uint8_t)(card + 8);
}

START_TEST(test_deck_deal_per_card_commits_to_the_codes)
{
    uint8_t cards[52], expect[DECK_COMMIT_LEN], v1[DECK_COMMIT_LEN];
    deck_deal_t d;
    for (int i = 0; i < 52; i++)
        cards[i] = (uint8_t)i;
    ck_assert_int_eq(deck_deal(&d, cards, 52), 0);
    ck_assert_int_eq(d.scheme, DECK_SCHEME_WHOLE);
    memcpy(v1, d.commitment, sizeof v1);
    deck_deal_per_card(&d, test_deck_code_plus_8);
    ck_assert_int_eq(d.scheme, DECK_SCHEME_CARDS);
    for (int i = 0; i < 52; i++)
        ck_assert_uint_eq(d.codes[i], d.cards[i] + 8);
    deck_commitment_cards(d.codes, 52, d.nonce, expect);
    ck_assert_mem_eq(d.commitment, expect, DECK_COMMIT_LEN);
    ck_assert_mem_ne(d.commitment, v1, DECK_COMMIT_LEN);
}
END_TEST

START_TEST(test_deck_hex_round_trip_and_bad_input)
{
    uint8_t b[4] = {0x00, 0x7f, 0xa5, 0xff}, back[4];
    char hex[9];
    deck_hex(b, 4, hex);
    ck_assert_str_eq(hex, "007fa5ff");
    ck_assert_int_eq(deck_unhex("007FA5ff", back, 4), 4);
    ck_assert(memcmp(b, back, 4) == 0);
    ck_assert_int_eq(deck_unhex("007", back, 4), -EINVAL);
    ck_assert_int_eq(deck_unhex("zz", back, 4), -EINVAL);
    ck_assert_int_eq(deck_unhex("0011223344", back, 4), -EINVAL);
}
END_TEST

static int failing_gen(unsigned char *buf, int n)
{
    (void)buf;
    (void)n;
    return 0;
}

START_TEST(test_deck_failed_generator_disables_deals_for_good)
{
    ck_assert(deck_healthy());
    deck_set_generator(failing_gen);
    uint8_t d[52];
    for (int i = 0; i < 52; i++)
        d[i] = (uint8_t)i;
    ck_assert_int_eq(deck_shuffle(d, 52), -EIO);
    ck_assert(!deck_healthy());
    ck_assert_uint_eq(deck_failures(), 1);
    /* No fallback: the working generator back in place changes nothing. */
    deck_set_generator(NULL);
    ck_assert_int_eq(deck_shuffle(d, 52), -EIO);
    uint8_t raw[8];
    ck_assert_int_eq(deck_random_bytes(raw, sizeof raw), -EIO);
    ck_assert(!deck_healthy());
    deck_health_reset();
    ck_assert(deck_healthy());
    ck_assert_int_eq(deck_shuffle(d, 52), 0);
}
END_TEST

static int stuck_gen(unsigned char *buf, int n)
{
    memset(buf, 0x5a, (size_t)n);
    return 1;
}

START_TEST(test_deck_stuck_generator_trips_the_repetition_test)
{
    deck_set_generator(stuck_gen);
    uint8_t raw[4096];
    ck_assert_int_eq(deck_random_bytes(raw, sizeof raw), 0); /* the first block passes */
    ck_assert(deck_healthy());
    ck_assert_int_eq(deck_random_bytes(raw, 1), -EIO); /* the second repeats it */
    ck_assert(!deck_healthy());
    deck_set_generator(NULL);
    deck_health_reset();
}
END_TEST

START_TEST(test_deck_periodic_check_sees_a_stuck_generator_while_idle)
{
    ck_assert_int_eq(deck_check(), 0);
    ck_assert_int_eq(deck_check(), 0); /* two working draws differ */
    deck_set_generator(stuck_gen);
    ck_assert_int_eq(deck_check(), 0);    /* the first stuck draw is new to the check */
    ck_assert_int_eq(deck_check(), -EIO); /* the second repeats it */
    ck_assert(!deck_healthy());
    deck_set_generator(NULL);
    ck_assert_int_eq(deck_check(), -EIO); /* sticky */
    deck_health_reset();
    ck_assert_int_eq(deck_check(), 0);
}
END_TEST

/* A duplicate deal (deck_deal_keyed): the same key deals the same order and first seat, another
 * key another; a permutation; a fresh nonce and a commitment that opens; counts of the card at
 * position 0 over 5,200 keys near uniform (each of 52 cards 100 times expected: within 30..190). */
START_TEST(test_deck_keyed_deal_is_the_same_for_the_same_key)
{
    uint8_t a[108], b[108], c[108];
    deck_deal_t da, db, dc;
    for (int i = 0; i < 108; i++)
        a[i] = b[i] = c[i] = (uint8_t)i;
    uint32_t fa = 0, fb = 0, fc = 0;
    ck_assert_int_eq(deck_deal_keyed(&da, a, 108, "round-7:1", 9, 4, &fa), 0);
    ck_assert_int_eq(deck_deal_keyed(&db, b, 108, "round-7:1", 9, 4, &fb), 0);
    ck_assert_int_eq(deck_deal_keyed(&dc, c, 108, "round-7:2", 9, 4, &fc), 0);
    ck_assert(memcmp(a, b, 108) == 0 && fa == fb && fa < 4);
    ck_assert(memcmp(a, c, 108) != 0);
    ck_assert(memcmp(da.nonce, db.nonce, DECK_NONCE_LEN) != 0); /* fresh nonces */
    uint8_t commit[DECK_COMMIT_LEN];
    deck_commitment(a, 108, da.nonce, commit);
    ck_assert(memcmp(commit, da.commitment, DECK_COMMIT_LEN) == 0);
    bool have[108] = {false};
    for (int i = 0; i < 108; i++)
        have[a[i]] = true;
    for (int i = 0; i < 108; i++)
        ck_assert(have[i]);
    int first[52] = {0};
    for (int k = 0; k < 5200; k++) {
        uint8_t d[52];
        for (int i = 0; i < 52; i++)
            d[i] = (uint8_t)i;
        char key[24];
        int n = snprintf(key, sizeof key, "k%d", k);
        deck_deal_t dd;
        ck_assert_int_eq(deck_deal_keyed(&dd, d, 52, key, (size_t)n, 0, NULL), 0);
        first[d[0]]++;
    }
    for (int i = 0; i < 52; i++)
        ck_assert_msg(first[i] >= 30 && first[i] <= 190, "card %d first %d times", i, first[i]);
    /* Refused: no key, a key too long, seats 0 with a first seat asked. */
    ck_assert_int_eq(deck_deal_keyed(&da, a, 52, "", 0, 0, NULL), -EINVAL);
    ck_assert_int_eq(deck_deal_keyed(&da, a, 52, "k", 1, 0, &fa), -EINVAL);
}
END_TEST

static Suite *deck_suite(void)
{
    Suite *s = suite_create("deck");
    TCase *tc = tcase_create("shuffle");
    tcase_add_test(tc, test_deck_shuffle_gives_a_permutation_of_every_deck_size);
    tcase_add_test(tc, test_deck_keyed_deal_is_the_same_for_the_same_key);
    tcase_add_test(tc, test_deck_shuffle_changes_the_order);
    tcase_add_test(tc, test_deck_uniform_stays_in_range_and_refuses_zero);
    tcase_add_test(tc, test_deck_rejects_the_biased_low_range);
    suite_add_tcase(s, tc);
    tc = tcase_create("commitment");
    tcase_add_test(tc, test_deck_commitment_layout_known_answer);
    tcase_add_test(tc, test_deck_per_card_commitment_known_answer_and_openings);
    tcase_add_test(tc, test_deck_deal_per_card_commits_to_the_codes);
    tcase_add_test(tc, test_deck_hex_round_trip_and_bad_input);
    suite_add_tcase(s, tc);
    tc = tcase_create("failure");
    tcase_add_test(tc, test_deck_failed_generator_disables_deals_for_good);
    tcase_add_test(tc, test_deck_stuck_generator_trips_the_repetition_test);
    tcase_add_test(tc, test_deck_periodic_check_sees_a_stuck_generator_while_idle);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(deck_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
