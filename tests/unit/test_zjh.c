/*
 * Unit tests for Zha Jin Hua (games/zhajinhua/zjh.h), following docs/rules/zhajinhua.md:
 *   - cards: the wire code and the text form ("Cards");
 *   - ranking: the six category counts over all 22,100 hands, A-2-3 and Q-K-A, the 2-3-5
 *     rule, suits never breaking ties ("Hand ranking", "The 2-3-5 rule");
 *   - refusals: every error code, each leaving the table byte for byte unchanged and silent
 *     ("Refusals");
 *   - betting: blind and looked costs, raises and the cap, compare from round 2, the round
 *     counter, timeout ("Costs", "Actions", "Betting rounds", "Timeout");
 *   - showdown: the forced showdown, split pots and odd chips, the 2-3-5 rule at a showdown,
 *     rake ("Showdown", "Split pots and rake");
 *   - all-in: all-in calls and all-in compares ("All-in");
 *   - croupier-rules zhajinhua rank / compare;
 *   - random play with injected illegal inputs: chips conserved, no negative stack, every
 *     accepted action checked by an observer, every hand ends. 100,000 hands here (a fiftieth
 *     under valgrind); test_zjh_heavy.c runs 1,000,000.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "zjh.h"

#ifndef ZJH_RANDOM_HANDS
#define ZJH_RANDOM_HANDS 100000
#endif

/* ---- helpers ---------------------------------------------------------------------------- */

/* check's ck_assert reports every passing call to the parent process, which would dominate
 * the loops of the ranking and random-play tests; these call into check only on failure. */
#define T_ASSERT(c)                                                                                \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_abort_msg("Assertion '%s' failed", #c);                                             \
    } while (0)
#define T_CMP(a, op, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_))                                                                           \
            ck_abort_msg("Assertion '%s %s %s' failed: %lld vs %lld", #a, #op, #b, a_, b_);        \
    } while (0)

#define MAX_EVENTS 512

typedef struct {
    int n;
    zjh_event_t ev[MAX_EVENTS];
} log_t;

static void log_cb(void *ud, const zjh_event_t *ev)
{
    log_t *l = ud;
    ck_assert_int_lt(l->n, MAX_EVENTS);
    l->ev[l->n++] = *ev;
}

static int log_count(const log_t *l, zjh_event_kind_t kind, int seat)
{
    int c = 0;
    for (int i = 0; i < l->n; i++)
        c += l->ev[i].kind == kind && (seat < 0 || l->ev[i].seat == seat);
    return c;
}

/* The last event of a kind (fails when there is none). */
static const zjh_event_t *log_last(const log_t *l, zjh_event_kind_t kind)
{
    for (int i = l->n - 1; i >= 0; i--)
        if (l->ev[i].kind == kind)
            return &l->ev[i];
    ck_abort_msg("no event of kind %d", (int)kind);
    return NULL;
}

static zjh_config_t config(int seats, int64_t ante, int64_t max_unit, int max_rounds)
{
    zjh_config_t c;
    memset(&c, 0, sizeof c);
    c.seats = seats;
    c.ante = ante;
    c.max_unit = max_unit;
    c.max_rounds = max_rounds;
    c.action_ms = 15000;
    return c;
}

static zjh_table_t *table_new(const zjh_config_t *c, log_t *log)
{
    int err = 1;
    zjh_table_t *t = zjh_table_create(c, log_cb, log, &err);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(err, ZJH_OK);
    return t;
}

static void hand3(const char *text, uint8_t out[3])
{
    ck_assert_int_eq(zjh_cards_parse(text, out, 3), 3);
}

/*
 * A stacked deck: hands[s] ("AsKd2c") for every seat dealt in, NULL for the others; cards
 * are dealt one at a time from the seat left of the dealer, three times. The rest of the 52
 * cards follow. Returns 52.
 */
static int make_deck(uint8_t *deck, int seats, int dealer, const char *const *hands)
{
    uint8_t h[ZJH_MAX_SEATS][3];
    int used[64] = {0};
    for (int s = 0; s < seats; s++) {
        if (hands[s] == NULL)
            continue;
        hand3(hands[s], h[s]);
        for (int c = 0; c < 3; c++) {
            ck_assert_msg(!used[h[s][c]], "card used twice in the test's hands");
            used[h[s][c]] = 1;
        }
    }
    int pos = 0;
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < seats; k++) {
            int s = (dealer + 1 + k) % seats;
            if (hands[s] != NULL)
                deck[pos++] = h[s][c];
        }
    for (int code = 0; code < 64; code++)
        if (zjh_card_valid((uint8_t)code) && !used[code])
            deck[pos++] = (uint8_t)code;
    ck_assert_int_eq(pos, 52);
    return pos;
}

/* Starts a hand with stacks (0 = not dealt in) and the seats' hands. */
static void start(zjh_table_t *t, int dealer, const int64_t *stacks, const char *const *hands)
{
    uint8_t deck[52];
    int n = make_deck(deck, zjh_table_config(t)->seats, dealer, hands);
    ck_assert_int_eq(zjh_table_start_hand(t, dealer, stacks, deck, n), ZJH_OK);
}

static void act_ok(zjh_table_t *t, int seat, zjh_action_t a, int64_t arg)
{
    int err = zjh_table_act(t, seat, a, arg);
    if (err != ZJH_OK)
        ck_abort_msg("seat %d action %d arg %lld: %s", seat, (int)a, (long long)arg,
                     zjh_err_name(err));
}

static zjh_seat_t seat_of(const zjh_table_t *t, int seat)
{
    zjh_seat_t s;
    T_CMP(zjh_table_seat(t, seat, &s), ==, ZJH_OK);
    return s;
}

/* Asserts that the input is refused with err, the table unchanged byte for byte, no event. */
static void expect_refused(zjh_table_t *t, log_t *log, int seat, zjh_action_t a, int64_t arg,
                           int err)
{
    zjh_table_t *before = zjh_table_clone(t);
    int n = log->n;
    int got = zjh_table_act(t, seat, a, arg);
    ck_assert_msg(got == err, "seat %d action %d arg %lld: got %s, expected %s", seat, (int)a,
                  (long long)arg, zjh_err_name(got), zjh_err_name(err));
    ck_assert_msg(zjh_table_same_state(t, before), "refused input changed the table");
    ck_assert_int_eq(log->n, n);
    zjh_table_destroy(before);
}

/* The same for start_hand. */
static void expect_start_refused(zjh_table_t *t, log_t *log, int dealer, const int64_t *stacks,
                                 const uint8_t *deck, int ncards, int err)
{
    zjh_table_t *before = zjh_table_clone(t);
    int n = log->n;
    ck_assert_int_eq(zjh_table_start_hand(t, dealer, stacks, deck, ncards), err);
    ck_assert(zjh_table_same_state(t, before));
    ck_assert_int_eq(log->n, n);
    zjh_table_destroy(before);
}

static void settlement_of(const zjh_table_t *t, zjh_settlement_t *st)
{
    T_CMP(zjh_table_settlement(t, st), ==, ZJH_OK);
    int64_t sum = 0;
    for (int i = 0; i < ZJH_MAX_SEATS; i++)
        sum += st->delta[i];
    T_CMP(sum, ==, -st->rake);
}

/* ---- cards ------------------------------------------------------------------------------ */

START_TEST(test_cards_use_the_wire_code_and_text_form)
{
    ck_assert_int_eq(zjh_card_parse("2c"), 2 << 2 | 0);
    ck_assert_int_eq(zjh_card_parse("Td"), 10 << 2 | 1);
    ck_assert_int_eq(zjh_card_parse("Jh"), 11 << 2 | 2);
    ck_assert_int_eq(zjh_card_parse("As"), 14 << 2 | 3);
    ck_assert_int_eq(zjh_card_parse("1s"), -1);
    ck_assert_int_eq(zjh_card_parse("Ax"), -1);
    ck_assert_int_eq(zjh_card_parse("As "), -1);
    ck_assert_int_eq(zjh_card_parse(""), -1);
    uint8_t c[4];
    ck_assert_int_eq(zjh_cards_parse("AsKd2c", c, 3), 3);
    ck_assert_int_eq(c[0], ZJH_CARD(14, 3));
    ck_assert_int_eq(c[1], ZJH_CARD(13, 1));
    ck_assert_int_eq(c[2], ZJH_CARD(2, 0));
    ck_assert_int_eq(zjh_cards_parse("As Kd 2c", c, 3), 3);
    ck_assert_int_eq(zjh_cards_parse("AsKd2c3c", c, 3), -1); /* more than max */
    ck_assert_int_eq(zjh_cards_parse("AsAs2c", c, 3), -1);   /* a card twice */
    ck_assert_int_eq(zjh_cards_parse("AsK", c, 3), -1);
    ck_assert_int_eq(zjh_cards_parse("", c, 3), 0);
    char buf[16];
    uint8_t h[3] = {ZJH_CARD(14, 3), ZJH_CARD(10, 2), ZJH_CARD(9, 0)};
    ck_assert_int_eq(zjh_cards_format(h, 3, buf, sizeof buf), 6);
    ck_assert_str_eq(buf, "AsTh9c");
    ck_assert_int_eq(zjh_cards_format(h, 3, buf, 6), -1); /* no room for the NUL */
    ck_assert_str_eq(buf, "");
    h[1] = 0; /* rank 0: not a card */
    ck_assert_int_eq(zjh_cards_format(h, 3, buf, sizeof buf), -1);
    /* Every code of the deck round-trips. */
    int valid = 0;
    for (int code = 0; code < 256; code++) {
        if (!zjh_card_valid((uint8_t)code))
            continue;
        valid++;
        uint8_t one = (uint8_t)code;
        ck_assert_int_eq(zjh_cards_format(&one, 1, buf, sizeof buf), 2);
        ck_assert_int_eq(zjh_card_parse(buf), code);
    }
    ck_assert_int_eq(valid, 52);
}
END_TEST

/* ---- ranking ---------------------------------------------------------------------------- */

static zjh_rank_t rank_of(const char *text)
{
    uint8_t h[3];
    hand3(text, h);
    return zjh_rank(h);
}

/* zjh_compare of two hands in text form. */
static int cmp(const char *a, const char *b)
{
    uint8_t x[3], y[3];
    hand3(a, x);
    hand3(b, y);
    int c = zjh_compare(x, y);
    ck_assert_int_eq(zjh_compare(y, x), -c); /* antisymmetric */
    return c;
}

START_TEST(test_rank_counts_every_category_over_all_22100_hands)
{
    uint8_t deck[52];
    int n = 0;
    for (int code = 0; code < 64; code++)
        if (zjh_card_valid((uint8_t)code))
            deck[n++] = (uint8_t)code;
    long count[6] = {0}, total = 0, special = 0;
    for (int i = 0; i < 52; i++)
        for (int j = i + 1; j < 52; j++)
            for (int k = j + 1; k < 52; k++) {
                uint8_t h[3] = {deck[i], deck[j], deck[k]};
                zjh_rank_t r = zjh_rank(h);
                T_CMP(r.category, >=, ZJH_CAT_HIGH_CARD);
                T_CMP(r.category, <=, ZJH_CAT_THREE_OF_A_KIND);
                T_CMP(r.value / 1000000, ==, r.category);
                /* The order of the cards does not matter. */
                uint8_t g[3] = {deck[k], deck[i], deck[j]};
                T_CMP(zjh_rank(g).value, ==, r.value);
                count[r.category]++;
                special += r.beats_trips;
                total++;
            }
    T_CMP(total, ==, 22100);
    T_CMP(count[ZJH_CAT_THREE_OF_A_KIND], ==, 52);
    T_CMP(count[ZJH_CAT_STRAIGHT_FLUSH], ==, 48);
    T_CMP(count[ZJH_CAT_FLUSH], ==, 1096);
    T_CMP(count[ZJH_CAT_STRAIGHT], ==, 720);
    T_CMP(count[ZJH_CAT_PAIR], ==, 3744);
    T_CMP(count[ZJH_CAT_HIGH_CARD], ==, 16440);
    T_CMP(special, ==, 4 * 3 * 2); /* 2-3-5 in three different suits */
}
END_TEST

START_TEST(test_rank_values_and_names)
{
    zjh_rank_t r = rank_of("AsKsQs");
    ck_assert_int_eq(r.category, ZJH_CAT_STRAIGHT_FLUSH);
    ck_assert_int_eq(r.value, 4141312);
    ck_assert_str_eq(zjh_category_name(r.category), "straight_flush");
    ck_assert_int_eq(rank_of("3h2hAh").value, 4030201);
    ck_assert_int_eq(rank_of("Ah2c3d").value, 2030201);
    ck_assert_int_eq(rank_of("KsKdKh").value, 5131313);
    ck_assert_int_eq(rank_of("5cKsKd").value, 1131305);
    ck_assert_int_eq(rank_of("AsJs9s").value, 3141109);
    ck_assert_int_eq(rank_of("2c3d5h").value, 50302);
    ck_assert(rank_of("2c3d5h").beats_trips);
    ck_assert(!rank_of("2c3c5h").beats_trips);
    ck_assert(!rank_of("2c3c5c").beats_trips);
    ck_assert_str_eq(zjh_category_name(ZJH_CAT_THREE_OF_A_KIND), "three_of_a_kind");
    ck_assert_str_eq(zjh_category_name(ZJH_CAT_FLUSH), "flush");
    ck_assert_str_eq(zjh_category_name(ZJH_CAT_STRAIGHT), "straight");
    ck_assert_str_eq(zjh_category_name(ZJH_CAT_PAIR), "pair");
    ck_assert_str_eq(zjh_category_name(ZJH_CAT_HIGH_CARD), "high_card");
    ck_assert_str_eq(zjh_category_name(ZJH_CAT_INVALID), "invalid");
    uint8_t bad[3] = {ZJH_CARD(14, 3), ZJH_CARD(14, 3), ZJH_CARD(2, 0)};
    ck_assert_int_eq(zjh_rank(bad).category, ZJH_CAT_INVALID);
    bad[1] = ZJH_CARD(1, 0);
    ck_assert_int_eq(zjh_rank(bad).category, ZJH_CAT_INVALID);
}
END_TEST

START_TEST(test_compare_category_order)
{
    /* three of a kind > straight flush > flush > straight > pair > high card */
    const char *ladder[] = {"2c2d2h", "AsKsQs", "AhJh9h", "QcKdAh", "AdAcKc", "AcKd9s"};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            ck_assert_int_eq(cmp(ladder[i], ladder[j]) > 0, i < j);
    ck_assert_int_gt(cmp("3c3d3h", "2s2h2d"), 0);
}
END_TEST

START_TEST(test_compare_a23_is_the_lowest_straight_and_qka_the_highest)
{
    ck_assert_int_lt(cmp("Ah2c3d", "2h3c4d"), 0);
    ck_assert_int_lt(cmp("Ah2c3d", "QsKdAc"), 0);
    ck_assert_int_gt(cmp("QsKdAc", "JhQcKd"), 0);
    ck_assert_int_gt(cmp("Ah2c3d", "AsKdJc"), 0); /* still a straight: beats any pair */
    ck_assert_int_gt(cmp("Ah2c3d", "AsAdKc"), 0);
    /* The same for straight flushes. */
    ck_assert_int_lt(cmp("As2s3s", "2h3h4h"), 0);
    ck_assert_int_gt(cmp("QsKsAs", "JhQhKh"), 0);
    ck_assert_int_gt(cmp("As2s3s", "AhKhJh"), 0);
    ck_assert_int_lt(cmp("As2s3s", "2c2d2h"), 0);
    /* K-A-2 is no straight. */
    ck_assert_int_eq(rank_of("Kc2dAh").category, ZJH_CAT_HIGH_CARD);
}
END_TEST

START_TEST(test_compare_235_offsuit_beats_trips_and_nothing_else)
{
    ck_assert_int_gt(cmp("2c3d5h", "AcAdAh"), 0);
    ck_assert_int_gt(cmp("2c3d5h", "2s2h2d"), 0);
    ck_assert_int_gt(cmp("5s3h2c", "KsKdKh"), 0);
    /* Against anything else it is the lowest high card. */
    ck_assert_int_lt(cmp("2c3d5h", "2d3h6s"), 0);
    ck_assert_int_lt(cmp("2c3d5h", "2d4h5s"), 0);
    ck_assert_int_lt(cmp("2c3d5h", "AhKd9c"), 0);
    ck_assert_int_lt(cmp("2c3d5h", "Ad4c2s"), 0);
    ck_assert_int_lt(cmp("2c3d5h", "2d2h3c"), 0);
    ck_assert_int_lt(cmp("2c3d5h", "4c3s5d"), 0);
    ck_assert_int_lt(cmp("2c3d5h", "Ah2d3s"), 0);
    ck_assert_int_lt(cmp("2c3d5h", "7s8s2s"), 0);
    ck_assert_int_lt(cmp("2c3d5h", "QsKsAs"), 0);
    ck_assert_int_eq(cmp("2c3d5h", "2s3h5d"), 0);
    /* With two cards of one suit it is a plain high card, which trips beat. */
    ck_assert_int_lt(cmp("2c3c5h", "AcAdAh"), 0);
    ck_assert_int_eq(cmp("2c3c5h", "2s3h5d"), 0);
    /* 2-3-5 suited is a flush: above straights, below trips. */
    ck_assert_int_eq(rank_of("2h3h5h").category, ZJH_CAT_FLUSH);
    ck_assert_int_gt(cmp("2h3h5h", "QsKdAc"), 0);
    ck_assert_int_lt(cmp("2h3h5h", "2c2d2s"), 0);
}
END_TEST

START_TEST(test_compare_suits_never_break_ties)
{
    ck_assert_int_eq(cmp("AsKsQd", "AhKhQc"), 0);
    ck_assert_int_eq(cmp("AsJs9s", "AhJh9h"), 0);
    ck_assert_int_eq(cmp("KsKd5c", "KhKc5d"), 0);
    ck_assert_int_eq(cmp("9s8d7c", "9h8c7d"), 0);
    ck_assert_int_eq(cmp("9s8s7s", "9h8h7h"), 0);
    ck_assert_int_eq(cmp("As2d3c", "Ah2s3d"), 0);
    /* Within a category: pair rank, then kicker; high cards high to low. */
    ck_assert_int_lt(cmp("2s2dAc", "3s3d4c"), 0);
    ck_assert_int_lt(cmp("KsKd5c", "KhKc6d"), 0);
    ck_assert_int_gt(cmp("AsKd9c", "AhQcJd"), 0);
    ck_assert_int_gt(cmp("AsKd9c", "AhKc8d"), 0);
    ck_assert_int_gt(cmp("As9s4s", "Ah9h3h"), 0);
}
END_TEST

/* ---- refusals --------------------------------------------------------------------------- */

START_TEST(test_every_refusal_has_its_code_and_changes_nothing)
{
    log_t log = {0};
    zjh_config_t c = config(4, 10, 50, 5);
    zjh_table_t *t = table_new(&c, &log);
    uint8_t cards[3];
    zjh_settlement_t st;

    /* No hand yet. */
    expect_refused(t, &log, 0, ZJH_CALL, 0, ZJH_E_NO_HAND);
    expect_refused(t, &log, 1, ZJH_LOOK, 0, ZJH_E_NO_HAND);
    ck_assert_int_eq(zjh_table_settlement(t, &st), ZJH_E_NO_HAND);
    ck_assert_int_eq(zjh_table_cards(t, 0, cards), ZJH_E_NO_HAND);
    ck_assert_int_eq(zjh_table_to_act(t), -1);

    /* Dealer 0; seats 1, 2, 0 play in that order; seat 3 is empty. */
    const int64_t stacks[ZJH_MAX_SEATS] = {100, 40, 100, 0, 0, 0};
    const char *hands[] = {"AsKdQh", "7c7d2h", "9s9h4c", NULL};
    start(t, 0, stacks, hands);
    ck_assert_int_eq(zjh_table_to_act(t), 1);
    ck_assert_int_eq(zjh_table_cards(t, 3, cards), ZJH_E_NOT_LIVE);
    ck_assert_int_eq(zjh_table_cards(t, 4, cards), ZJH_E_BAD_ARGS);
    log.n = 0;

    expect_refused(t, &log, 2, ZJH_CALL, 0, ZJH_E_OUT_OF_TURN);
    expect_refused(t, &log, 0, ZJH_FOLD, 0, ZJH_E_OUT_OF_TURN);
    expect_refused(t, &log, 2, ZJH_RAISE, 20, ZJH_E_OUT_OF_TURN);
    expect_refused(t, &log, 0, ZJH_TIMEOUT, 0, ZJH_E_OUT_OF_TURN);
    expect_refused(t, &log, 2, ZJH_COMPARE, 1, ZJH_E_OUT_OF_TURN);
    expect_refused(t, &log, 3, ZJH_CALL, 0, ZJH_E_OUT_OF_TURN); /* not dealt in */

    expect_refused(t, &log, -1, ZJH_CALL, 0, ZJH_E_BAD_ARGS);
    expect_refused(t, &log, 4, ZJH_CALL, 0, ZJH_E_BAD_ARGS); /* beyond cfg.seats */
    expect_refused(t, &log, 6, ZJH_LOOK, 0, ZJH_E_BAD_ARGS);
    expect_refused(t, &log, 1, (zjh_action_t)99, 0, ZJH_E_BAD_ARGS);
    expect_refused(t, &log, 1, (zjh_action_t)-1, 0, ZJH_E_BAD_ARGS);

    expect_refused(t, &log, 1, ZJH_RAISE, 10, ZJH_E_RAISE_NOT_HIGHER); /* = the unit */
    expect_refused(t, &log, 1, ZJH_RAISE, 5, ZJH_E_RAISE_NOT_HIGHER);
    expect_refused(t, &log, 1, ZJH_RAISE, -3, ZJH_E_RAISE_NOT_HIGHER);
    expect_refused(t, &log, 1, ZJH_RAISE, 51, ZJH_E_RAISE_OVER_CAP);
    expect_refused(t, &log, 1, ZJH_RAISE, INT64_MAX, ZJH_E_RAISE_OVER_CAP);
    expect_refused(t, &log, 1, ZJH_RAISE, 31, ZJH_E_OVER_STACK); /* 30 chips left */
    expect_refused(t, &log, 1, ZJH_COMPARE, 2, ZJH_E_COMPARE_TOO_EARLY);
    expect_refused(t, &log, 3, ZJH_LOOK, 0, ZJH_E_NOT_LIVE);

    uint8_t deck[52];
    int n = make_deck(deck, 4, 0, hands);
    expect_start_refused(t, &log, 0, stacks, deck, n, ZJH_E_IN_HAND);

    act_ok(t, 2, ZJH_LOOK, 0); /* out of turn: allowed */
    log.n = 0;
    expect_refused(t, &log, 2, ZJH_LOOK, 0, ZJH_E_ALREADY_LOOKED);

    act_ok(t, 1, ZJH_CALL, 0);
    act_ok(t, 2, ZJH_CALL, 0);
    act_ok(t, 0, ZJH_FOLD, 0);
    ck_assert_int_eq(zjh_table_round(t), 2);
    ck_assert_int_eq(zjh_table_to_act(t), 1);
    log.n = 0;
    expect_refused(t, &log, 1, ZJH_COMPARE, 1, ZJH_E_COMPARE_TARGET); /* self */
    expect_refused(t, &log, 1, ZJH_COMPARE, 0, ZJH_E_COMPARE_TARGET); /* folded */
    expect_refused(t, &log, 1, ZJH_COMPARE, 3, ZJH_E_COMPARE_TARGET); /* not dealt in */
    expect_refused(t, &log, 1, ZJH_COMPARE, 4, ZJH_E_COMPARE_TARGET); /* beyond cfg.seats */
    expect_refused(t, &log, 1, ZJH_COMPARE, -1, ZJH_E_COMPARE_TARGET);
    expect_refused(t, &log, 1, ZJH_COMPARE, 1LL << 40, ZJH_E_COMPARE_TARGET);
    expect_refused(t, &log, 0, ZJH_LOOK, 0, ZJH_E_NOT_LIVE);    /* folded */
    expect_refused(t, &log, 0, ZJH_CALL, 0, ZJH_E_OUT_OF_TURN); /* folded */

    act_ok(t, 1, ZJH_FOLD, 0);
    ck_assert(!zjh_table_in_hand(t));
    log.n = 0;
    expect_refused(t, &log, 2, ZJH_CALL, 0, ZJH_E_NO_HAND);
    expect_refused(t, &log, 2, ZJH_LOOK, 0, ZJH_E_NO_HAND);

    /* start_hand's arguments. */
    int64_t s2[ZJH_MAX_SEATS] = {100, 100, 0, 0, 0, 0};
    expect_start_refused(t, &log, -1, s2, deck, n, ZJH_E_BAD_ARGS);
    expect_start_refused(t, &log, 4, s2, deck, n, ZJH_E_BAD_ARGS);
    expect_start_refused(t, &log, 0, NULL, deck, n, ZJH_E_BAD_ARGS);
    expect_start_refused(t, &log, 0, s2, NULL, n, ZJH_E_BAD_ARGS);
    expect_start_refused(t, &log, 0, s2, deck, 5, ZJH_E_BAD_ARGS); /* 6 cards needed */
    expect_start_refused(t, &log, 0, s2, deck, 53, ZJH_E_BAD_ARGS);
    s2[1] = 9; /* below the ante */
    expect_start_refused(t, &log, 0, s2, deck, n, ZJH_E_BAD_ARGS);
    s2[1] = -100;
    expect_start_refused(t, &log, 0, s2, deck, n, ZJH_E_BAD_ARGS);
    s2[1] = 0; /* one player */
    expect_start_refused(t, &log, 0, s2, deck, n, ZJH_E_BAD_ARGS);
    s2[1] = 100;
    s2[4] = 100; /* seat 4 does not exist at a 4-seat table */
    expect_start_refused(t, &log, 0, s2, deck, n, ZJH_E_BAD_ARGS);
    s2[4] = 0;
    uint8_t bad[52];
    memcpy(bad, deck, sizeof bad);
    bad[3] = bad[0]; /* a card twice */
    expect_start_refused(t, &log, 0, s2, bad, n, ZJH_E_BAD_ARGS);
    bad[3] = ZJH_CARD(15, 0); /* not a card */
    expect_start_refused(t, &log, 0, s2, bad, n, ZJH_E_BAD_ARGS);
    ck_assert_int_eq(zjh_table_start_hand(t, 0, s2, deck, 6), ZJH_OK); /* 6 cards suffice */
    zjh_table_destroy(t);

    /* Config. */
    const zjh_config_t good = config(6, 10, 100, 2);
    zjh_config_t bad_cfgs[10];
    for (int i = 0; i < 10; i++)
        bad_cfgs[i] = good;
    bad_cfgs[0].seats = 1;
    bad_cfgs[1].seats = 7;
    bad_cfgs[2].ante = 0;
    bad_cfgs[3].max_unit = 9;
    bad_cfgs[4].max_rounds = 1;
    bad_cfgs[5].rake_basis_points = -1;
    bad_cfgs[6].rake_basis_points = 10001;
    bad_cfgs[7].rake_cap = -1;
    bad_cfgs[8].action_ms = -1;
    bad_cfgs[9].max_unit = INT64_MAX;
    for (int i = 0; i < 10; i++) {
        int err = 0;
        ck_assert_ptr_null(zjh_table_create(&bad_cfgs[i], NULL, NULL, &err));
        ck_assert_int_eq(err, ZJH_E_BAD_ARGS);
    }
    ck_assert_ptr_null(zjh_table_create(NULL, NULL, NULL, NULL));
    t = zjh_table_create(&good, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(t);
    zjh_table_destroy(t);
    zjh_table_destroy(NULL);

    /* Every code has its own name. */
    for (int e = ZJH_E_IN_HAND; e <= ZJH_OK; e++) {
        ck_assert_str_ne(zjh_err_name(e), "unknown error");
        for (int f = e + 1; f <= ZJH_OK; f++)
            ck_assert_str_ne(zjh_err_name(e), zjh_err_name(f));
    }
    ck_assert_str_eq(zjh_err_name(-99), "unknown error");
}
END_TEST

/* ---- betting ---------------------------------------------------------------------------- */

START_TEST(test_start_posts_antes_deals_three_cards_and_asks_left_of_dealer)
{
    log_t log = {0};
    zjh_config_t c = config(5, 10, 100, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {200, 0, 300, 100, 400, 0};
    const char *hands[] = {"AsKdQh", NULL, "7c7d2h", "9s9h4c", "2c3d5h"};
    start(t, 2, stacks, hands); /* dealer 2: order 3, 4, 0, 2 */
    ck_assert_int_eq(log.ev[0].kind, ZJH_EV_HAND_START);
    ck_assert_int_eq(log.ev[0].seat, 2);
    ck_assert_int_eq(log.ev[0].amount, 1);
    const int order[] = {3, 4, 0, 2};
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(log.ev[1 + k].kind, ZJH_EV_ANTE);
        ck_assert_int_eq(log.ev[1 + k].seat, order[k]);
        ck_assert_int_eq(log.ev[1 + k].amount, 10);
        const zjh_event_t *d = &log.ev[5 + k];
        ck_assert_int_eq(d->kind, ZJH_EV_DEAL);
        ck_assert_int_eq(d->seat, order[k]);
        uint8_t want[3];
        hand3(hands[order[k]], want);
        ck_assert_mem_eq(d->cards[0], want, 3);
        uint8_t got[3];
        ck_assert_int_eq(zjh_table_cards(t, order[k], got), ZJH_OK);
        ck_assert_mem_eq(got, want, 3);
        zjh_seat_t s = seat_of(t, order[k]);
        ck_assert(s.dealt && !s.looked && !s.folded && !s.all_in);
        ck_assert_int_eq(s.put_in, 10);
        ck_assert_int_eq(s.stack, stacks[order[k]] - 10);
    }
    ck_assert(!seat_of(t, 1).dealt);
    const zjh_event_t *turn = &log.ev[9];
    ck_assert_int_eq(turn->kind, ZJH_EV_TURN);
    ck_assert_int_eq(turn->seat, 3);
    ck_assert_int_eq(turn->amount, 10);
    ck_assert_int_eq(turn->unit, 10);
    ck_assert_int_eq(turn->to, 11);
    ck_assert_int_eq(turn->max, 90); /* the stack (90 left) caps it below max_unit */
    ck_assert_int_eq(turn->detail, 0);
    ck_assert_int_eq(log.n, 10);
    ck_assert_int_eq(zjh_table_to_act(t), 3);
    ck_assert_int_eq(zjh_table_unit(t), 10);
    ck_assert_int_eq(zjh_table_pot(t), 40);
    ck_assert_int_eq(zjh_table_round(t), 1);
    ck_assert_int_eq(zjh_table_dealer(t), 2);
    ck_assert_int_eq(zjh_table_hand_no(t), 1);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_look_doubles_call_raise_and_compare_costs)
{
    log_t log = {0};
    zjh_config_t c = config(3, 10, 100, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {1000, 1000, 1000, 0, 0, 0};
    const char *hands[] = {"AsKdQh", "7c7d2h", "9s9h4c"};
    start(t, 0, stacks, hands); /* order 1, 2, 0 */
    log.n = 0;
    act_ok(t, 0, ZJH_LOOK, 0); /* out of turn; the turn stays with seat 1 */
    ck_assert_int_eq(log.n, 1);
    ck_assert_int_eq(log.ev[0].kind, ZJH_EV_LOOK);
    ck_assert_int_eq(log.ev[0].seat, 0);
    uint8_t want[3];
    hand3("AsKdQh", want);
    ck_assert_mem_eq(log.ev[0].cards[0], want, 3);
    ck_assert(seat_of(t, 0).looked);
    ck_assert_int_eq(zjh_table_to_act(t), 1);

    act_ok(t, 1, ZJH_CALL, 0); /* blind: 10 */
    ck_assert_int_eq(log_last(&log, ZJH_EV_CALL)->amount, 10);
    act_ok(t, 2, ZJH_RAISE, 20); /* blind: 20 */
    ck_assert_int_eq(log_last(&log, ZJH_EV_RAISE)->amount, 20);
    ck_assert_int_eq(log_last(&log, ZJH_EV_RAISE)->unit, 20);
    ck_assert_int_eq(zjh_table_unit(t), 20);
    ck_assert_int_eq(log_last(&log, ZJH_EV_TURN)->amount, 40); /* seat 0 has looked */
    act_ok(t, 0, ZJH_CALL, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_CALL)->amount, 40);

    /* Round 2: seat 1 looks on its turn: the turn is asked again at the doubled cost. */
    ck_assert_int_eq(log_last(&log, ZJH_EV_TURN)->amount, 20);
    log.n = 0;
    act_ok(t, 1, ZJH_LOOK, 0);
    ck_assert_int_eq(log.n, 2);
    ck_assert_int_eq(log.ev[1].kind, ZJH_EV_TURN);
    ck_assert_int_eq(log.ev[1].seat, 1);
    ck_assert_int_eq(log.ev[1].amount, 40);
    ck_assert_int_eq(log.ev[1].to, 21);
    ck_assert_int_eq(log.ev[1].max, 100);
    ck_assert_int_eq(log.ev[1].detail, 1);
    zjh_turn_t turn;
    zjh_table_turn(t, &turn);
    ck_assert_int_eq(turn.seat, 1);
    ck_assert_int_eq(turn.cost, 40);
    ck_assert(!turn.all_in && turn.can_compare);
    act_ok(t, 1, ZJH_RAISE, 30); /* looked: 60 */
    ck_assert_int_eq(log_last(&log, ZJH_EV_RAISE)->amount, 60);
    act_ok(t, 2, ZJH_CALL, 0); /* blind: 30 */
    ck_assert_int_eq(log_last(&log, ZJH_EV_CALL)->amount, 30);
    act_ok(t, 0, ZJH_COMPARE, 1); /* looked: 60 */
    ck_assert_int_eq(log_last(&log, ZJH_EV_COMPARE)->amount, 60);
    ck_assert_int_eq(seat_of(t, 0).put_in, 10 + 40 + 60);
    ck_assert_int_eq(seat_of(t, 1).put_in, 10 + 10 + 60);
    ck_assert_int_eq(seat_of(t, 2).put_in, 10 + 20 + 30);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_raise_up_to_the_cap_and_the_stack)
{
    log_t log = {0};
    zjh_config_t c = config(2, 5, 40, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {1000, 155, 0, 0, 0, 0};
    const char *hands[] = {"AsKdQh", "7c7d2h"};
    start(t, 0, stacks, hands); /* order 1, 0 */
    act_ok(t, 1, ZJH_LOOK, 0);
    zjh_turn_t turn;
    zjh_table_turn(t, &turn);
    ck_assert_int_eq(turn.min_unit, 6);
    ck_assert_int_eq(turn.max_unit, 40); /* 150 chips, looked: 75 units; the cap is 40 */
    act_ok(t, 1, ZJH_RAISE, 40);         /* pays 80 */
    zjh_table_turn(t, &turn);
    ck_assert_int_eq(turn.seat, 0);
    ck_assert_int_eq(turn.min_unit, 0); /* at the cap: no raise */
    ck_assert_int_eq(turn.max_unit, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_TURN)->to, 0);
    expect_refused(t, &log, 0, ZJH_RAISE, 41, ZJH_E_RAISE_OVER_CAP);
    expect_refused(t, &log, 0, ZJH_RAISE, 40, ZJH_E_RAISE_NOT_HIGHER);
    act_ok(t, 0, ZJH_CALL, 0); /* blind: 40 */
    ck_assert_int_eq(seat_of(t, 0).put_in, 45);
    ck_assert_int_eq(seat_of(t, 1).stack, 70);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_compare_only_from_round_two_lower_hand_out_shown_to_both)
{
    log_t log = {0};
    zjh_config_t c = config(3, 10, 100, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {1000, 1000, 1000, 0, 0, 0};
    const char *hands[] = {"AsKdQh", "7c7d2h", "9s9h4c"};
    start(t, 0, stacks, hands); /* order 1, 2, 0 */
    expect_refused(t, &log, 1, ZJH_COMPARE, 2, ZJH_E_COMPARE_TOO_EARLY);
    act_ok(t, 1, ZJH_CALL, 0);
    expect_refused(t, &log, 2, ZJH_COMPARE, 1, ZJH_E_COMPARE_TOO_EARLY);
    act_ok(t, 2, ZJH_CALL, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_TURN)->detail, 0);
    act_ok(t, 0, ZJH_CALL, 0);
    ck_assert_int_eq(zjh_table_round(t), 2);
    ck_assert_int_eq(log_last(&log, ZJH_EV_TURN)->detail, 1);
    log.n = 0;
    act_ok(t, 1, ZJH_COMPARE, 2); /* 7-7-2 against 9-9-4: the asker loses */
    const zjh_event_t *e = log_last(&log, ZJH_EV_COMPARE);
    ck_assert_int_eq(e->seat, 1);
    ck_assert_int_eq(e->target, 2);
    ck_assert_int_eq(e->loser, 1);
    ck_assert_int_eq(e->amount, 10);
    ck_assert(!e->all_in);
    uint8_t a[3], b[3];
    hand3("7c7d2h", a);
    hand3("9s9h4c", b);
    ck_assert_mem_eq(e->cards[0], a, 3);
    ck_assert_mem_eq(e->cards[1], b, 3);
    ck_assert_int_eq(e->value[0], zjh_rank(a).value);
    ck_assert_int_eq(e->value[1], zjh_rank(b).value);
    ck_assert(seat_of(t, 1).folded);
    ck_assert(!seat_of(t, 2).folded);
    ck_assert_int_eq(seat_of(t, 1).put_in, 30);
    ck_assert_int_eq(zjh_table_to_act(t), 2);
    /* Seat 2 compares with seat 0 and loses: seat 0 is the last one left. */
    act_ok(t, 2, ZJH_COMPARE, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_COMPARE)->loser, 2);
    ck_assert(!zjh_table_in_hand(t));
    ck_assert_int_eq(log_count(&log, ZJH_EV_SHOWDOWN, -1), 0);
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], 30 + 30);
    ck_assert_int_eq(st.delta[1], -30);
    ck_assert_int_eq(st.delta[2], -30);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_compare_tie_loses_the_asker)
{
    log_t log = {0};
    zjh_config_t c = config(2, 10, 100, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {1000, 1000, 0, 0, 0, 0};
    const char *hands[] = {"AsKd9c", "AhKs9d"};
    start(t, 1, stacks, hands); /* order 0, 1 */
    act_ok(t, 0, ZJH_CALL, 0);
    act_ok(t, 1, ZJH_CALL, 0);
    act_ok(t, 0, ZJH_COMPARE, 1);
    ck_assert_int_eq(log_last(&log, ZJH_EV_COMPARE)->loser, 0);
    ck_assert(!zjh_table_in_hand(t));
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], -30);
    ck_assert_int_eq(st.delta[1], 30);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_round_advances_when_the_turn_goes_round_past_the_dealer)
{
    log_t log = {0};
    zjh_config_t c = config(4, 10, 100, 9);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {1000, 1000, 1000, 1000, 0, 0};
    const char *hands[] = {"AsKdQh", "7c7d2h", "9s9h4c", "JcTd8h"};
    start(t, 0, stacks, hands); /* order 1, 2, 3, 0 */
    act_ok(t, 1, ZJH_CALL, 0);
    act_ok(t, 2, ZJH_CALL, 0);
    act_ok(t, 3, ZJH_CALL, 0);
    ck_assert_int_eq(zjh_table_round(t), 1);
    log.n = 0;
    act_ok(t, 0, ZJH_FOLD, 0); /* the dealer acts last in the round */
    ck_assert_int_eq(zjh_table_round(t), 2);
    ck_assert_int_eq(log.ev[1].kind, ZJH_EV_ROUND);
    ck_assert_int_eq(log.ev[1].detail, 2);
    ck_assert_int_eq(log.ev[2].kind, ZJH_EV_TURN);
    ck_assert_int_eq(log.ev[2].seat, 1);
    /* Round 2 without the dealer: it ends after seat 3, the last live seat before it. The
     * first seat folds; round 3 then starts with seat 2. */
    act_ok(t, 1, ZJH_FOLD, 0);
    act_ok(t, 2, ZJH_CALL, 0);
    ck_assert_int_eq(zjh_table_round(t), 2);
    act_ok(t, 3, ZJH_CALL, 0);
    ck_assert_int_eq(zjh_table_round(t), 3);
    ck_assert_int_eq(zjh_table_to_act(t), 2);
    ck_assert_int_eq(log_count(&log, ZJH_EV_ROUND, -1), 2);
    /* Looks never move the round on. */
    act_ok(t, 3, ZJH_LOOK, 0);
    act_ok(t, 2, ZJH_LOOK, 0);
    ck_assert_int_eq(zjh_table_round(t), 3);
    act_ok(t, 2, ZJH_CALL, 0);
    act_ok(t, 3, ZJH_CALL, 0);
    ck_assert_int_eq(zjh_table_round(t), 4);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_timeout_folds_the_player)
{
    log_t log = {0};
    zjh_config_t c = config(3, 10, 100, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {1000, 1000, 1000, 0, 0, 0};
    const char *hands[] = {"AsKdQh", "7c7d2h", "9s9h4c"};
    start(t, 0, stacks, hands); /* order 1, 2, 0 */
    act_ok(t, 1, ZJH_TIMEOUT, 0);
    const zjh_event_t *e = log_last(&log, ZJH_EV_FOLD);
    ck_assert_int_eq(e->seat, 1);
    ck_assert(e->timed_out);
    ck_assert(seat_of(t, 1).folded);
    act_ok(t, 2, ZJH_FOLD, 0);
    ck_assert(!log_last(&log, ZJH_EV_FOLD)->timed_out);
    ck_assert(!zjh_table_in_hand(t));
    ck_assert_int_eq(log_last(&log, ZJH_EV_AWARD)->seat, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_AWARD)->amount, 30);
    ck_assert_int_eq(log_last(&log, ZJH_EV_HAND_END)->amount, 1);
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.hand, 1);
    ck_assert_int_eq(st.delta[0], 20);
    ck_assert_int_eq(st.delta[1], -10);
    ck_assert_int_eq(st.delta[2], -10);
    ck_assert_int_eq(seat_of(t, 0).stack, 1020);
    ck_assert_int_eq(zjh_table_to_act(t), -1);
    zjh_turn_t turn;
    zjh_table_turn(t, &turn);
    ck_assert_int_eq(turn.seat, -1);
    zjh_table_destroy(t);
}
END_TEST

/* ---- showdown --------------------------------------------------------------------------- */

/* Everyone calls through max_rounds rounds; returns the table after the showdown. */
static zjh_table_t *call_down(log_t *log, int seats, int64_t ante, int dealer,
                              const char *const *hands, int rounds)
{
    zjh_config_t c = config(seats, ante, 100, rounds);
    zjh_table_t *t = table_new(&c, log);
    int64_t stacks[ZJH_MAX_SEATS] = {0};
    for (int i = 0; i < seats; i++)
        stacks[i] = hands[i] != NULL ? 1000 : 0;
    start(t, dealer, stacks, hands);
    int turns = 0;
    while (zjh_table_in_hand(t)) {
        ck_assert_int_le(zjh_table_round(t), rounds);
        act_ok(t, zjh_table_to_act(t), ZJH_CALL, 0);
        turns++;
    }
    return t;
}

START_TEST(test_forced_showdown_after_max_rounds)
{
    log_t log = {0};
    const char *hands[] = {"AsKsQs", "9s9h9d", "2d7h8c"};
    zjh_table_t *t = call_down(&log, 3, 10, 0, hands, 2);
    ck_assert_int_eq(log_count(&log, ZJH_EV_CALL, -1), 6); /* 3 players, 2 rounds */
    ck_assert_int_eq(log_count(&log, ZJH_EV_ROUND, -1), 1);
    ck_assert_int_eq(zjh_table_round(t), 2);
    ck_assert_int_eq(log_count(&log, ZJH_EV_SHOWDOWN, -1), 3);
    const zjh_event_t *sd = log_last(&log, ZJH_EV_SHOWDOWN);
    ck_assert_int_eq(sd->seat, 0); /* shown from left of the dealer: 1, 2, 0 */
    ck_assert_int_eq(sd->value[0], 4141312);
    ck_assert_int_eq(log_last(&log, ZJH_EV_AWARD)->seat, 1);
    ck_assert_int_eq(log_last(&log, ZJH_EV_AWARD)->amount, 90);
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], -30);
    ck_assert_int_eq(st.delta[1], 60);
    ck_assert_int_eq(st.delta[2], -30);
    ck_assert_int_eq(st.rake, 0);
    zjh_table_destroy(t);

    /* Five rounds at four seats: twenty calls. */
    log.n = 0;
    const char *four[] = {"AsKd7s", "7c7d2h", "9s9h4c", "JcTd8h"};
    t = call_down(&log, 4, 10, 3, four, 5);
    ck_assert_int_eq(log_count(&log, ZJH_EV_CALL, -1), 20);
    ck_assert_int_eq(log_last(&log, ZJH_EV_AWARD)->seat, 2);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_showdown_tie_splits_with_the_odd_chip_left_of_the_dealer)
{
    log_t log = {0};
    const char *hands[] = {"AsKd9c", "2c4d7h", "AhKs9d"};
    /* Dealer 2: seat 0 is the first tied seat left of it. Pot 15 + 30 = 45. */
    zjh_table_t *t = call_down(&log, 3, 5, 2, hands, 2);
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], 23 - 15);
    ck_assert_int_eq(st.delta[1], -15);
    ck_assert_int_eq(st.delta[2], 22 - 15);
    ck_assert_int_eq(log_count(&log, ZJH_EV_AWARD, -1), 2);
    zjh_table_destroy(t);
    /* Dealer 0: seat 2 comes first. */
    log.n = 0;
    t = call_down(&log, 3, 5, 0, hands, 2);
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], 22 - 15);
    ck_assert_int_eq(st.delta[2], 23 - 15);
    zjh_table_destroy(t);
    /* Three ways, even split. */
    log.n = 0;
    const char *three[] = {"AsKd9c", "AcKh9s", "AhKs9d"};
    t = call_down(&log, 3, 5, 0, three, 2);
    settlement_of(t, &st);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(st.delta[i], 0);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_showdown_235_beats_trips_only_when_no_other_hand_beats_it)
{
    log_t log = {0};
    zjh_settlement_t st;
    const char *two[] = {"2c3d5h", "AsAdAh"};
    zjh_table_t *t = call_down(&log, 2, 10, 1, two, 2);
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], 30);
    zjh_table_destroy(t);
    /* Trips and a third hand: the 2-3-5 loses to the third hand, trips win. */
    log.n = 0;
    const char *cycle[] = {"2c3d5h", "AsAdAh", "KsQd9c"};
    t = call_down(&log, 3, 10, 2, cycle, 2);
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[1], 60);
    zjh_table_destroy(t);
    /* Only trips besides it: the 2-3-5 wins. */
    log.n = 0;
    const char *trips[] = {"2c3d5h", "AsAdAh", "KsKdKh"};
    t = call_down(&log, 3, 10, 2, trips, 2);
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], 60);
    zjh_table_destroy(t);
    /* Two of them against trips split the pot. */
    log.n = 0;
    const char *pair235[] = {"2c3d5h", "AsAdAh", "2s3h5d"};
    t = call_down(&log, 3, 10, 2, pair235, 2);
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], 15);
    ck_assert_int_eq(st.delta[1], -30);
    ck_assert_int_eq(st.delta[2], 15);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_rake_is_a_capped_percentage_rounded_down)
{
    log_t log = {0};
    zjh_config_t c = config(2, 15, 100, 5);
    c.rake_basis_points = 500; /* 5 % */
    c.rake_cap = 3;
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {1000, 1000, 0, 0, 0, 0};
    const char *hands[] = {"AsKd9c", "2c4d7h"};
    start(t, 1, stacks, hands);
    act_ok(t, 0, ZJH_FOLD, 0); /* pot 30: 1.5 -> 1 */
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.rake, 1);
    ck_assert_int_eq(st.delta[0], -15);
    ck_assert_int_eq(st.delta[1], 14);
    ck_assert_int_eq(log_last(&log, ZJH_EV_RAKE)->amount, 1);
    start(t, 0, stacks, hands);
    act_ok(t, 1, ZJH_RAISE, 50);
    act_ok(t, 0, ZJH_RAISE, 100);
    act_ok(t, 1, ZJH_FOLD, 0); /* pot 180: 9 -> the cap, 3 */
    settlement_of(t, &st);
    ck_assert_int_eq(st.hand, 2);
    ck_assert_int_eq(st.rake, 3);
    ck_assert_int_eq(st.delta[0], 65 - 3);
    ck_assert_int_eq(zjh_table_rake_total(t), 4);
    zjh_table_destroy(t);
    /* Without a cap. */
    c.rake_cap = 0;
    log.n = 0;
    t = table_new(&c, &log);
    start(t, 0, stacks, hands);
    act_ok(t, 1, ZJH_RAISE, 50);
    act_ok(t, 0, ZJH_RAISE, 100);
    act_ok(t, 1, ZJH_FOLD, 0);
    settlement_of(t, &st);
    ck_assert_int_eq(st.rake, 9);
    zjh_table_destroy(t);
}
END_TEST

/* ---- all-in ----------------------------------------------------------------------------- */

START_TEST(test_all_in_call_beating_everyone_takes_the_whole_pot)
{
    log_t log = {0};
    zjh_config_t c = config(3, 10, 50, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {25, 1000, 1000, 0, 0, 0};
    const char *hands[] = {"AsAdAh", "7c7d2h", "9s9h4c"};
    start(t, 0, stacks, hands); /* order 1, 2, 0 */
    act_ok(t, 1, ZJH_RAISE, 20);
    act_ok(t, 2, ZJH_CALL, 0);
    zjh_turn_t turn;
    zjh_table_turn(t, &turn);
    ck_assert_int_eq(turn.seat, 0);
    ck_assert_int_eq(turn.cost, 15);
    ck_assert(turn.all_in);
    ck_assert_int_eq(turn.min_unit, 0);
    ck_assert(log_last(&log, ZJH_EV_TURN)->all_in);
    ck_assert_int_eq(log_last(&log, ZJH_EV_TURN)->amount, 15);
    log.n = 0;
    act_ok(t, 0, ZJH_CALL, 0);
    ck_assert_int_eq(log.ev[0].kind, ZJH_EV_CALL);
    ck_assert_int_eq(log.ev[0].amount, 15);
    ck_assert(log.ev[0].all_in);
    ck_assert_int_eq(log_count(&log, ZJH_EV_COMPARE, 0), 2);
    ck_assert_int_eq(log.ev[1].target, 1); /* clockwise from the caller's left */
    ck_assert_int_eq(log.ev[1].loser, 1);
    ck_assert(log.ev[1].all_in);
    ck_assert_int_eq(log.ev[2].target, 2);
    ck_assert_int_eq(log.ev[2].loser, 2);
    ck_assert_int_eq(log.ev[3].kind, ZJH_EV_ALL_IN);
    ck_assert_int_eq(log.ev[3].detail, 1);
    ck_assert(!zjh_table_in_hand(t));
    ck_assert(seat_of(t, 0).all_in);
    ck_assert(seat_of(t, 1).folded && seat_of(t, 2).folded);
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], 85 - 25);
    ck_assert_int_eq(st.delta[1], -30);
    ck_assert_int_eq(st.delta[2], -30);
    ck_assert_int_eq(seat_of(t, 0).stack, 85);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_all_in_call_not_beating_everyone_is_out)
{
    log_t log = {0};
    zjh_config_t c = config(3, 10, 50, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {25, 1000, 1000, 0, 0, 0};
    /* Seat 0 beats seat 1, then loses to seat 2. */
    const char *hands[] = {"KsKdKh", "7c7d2h", "AsAdAh"};
    start(t, 0, stacks, hands);
    act_ok(t, 1, ZJH_RAISE, 20);
    act_ok(t, 2, ZJH_CALL, 0);
    log.n = 0;
    act_ok(t, 0, ZJH_CALL, 0);
    ck_assert_int_eq(log_count(&log, ZJH_EV_COMPARE, 0), 2);
    ck_assert_int_eq(log.ev[1].loser, 1);
    ck_assert_int_eq(log.ev[2].loser, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_ALL_IN)->detail, 0);
    ck_assert(seat_of(t, 0).folded && seat_of(t, 0).all_in);
    ck_assert(!seat_of(t, 1).folded); /* the compares put nobody else out */
    ck_assert(zjh_table_in_hand(t));
    ck_assert_int_eq(zjh_table_pot(t), 85); /* its chips stay in the pot */
    ck_assert_int_eq(zjh_table_round(t), 2);
    ck_assert_int_eq(zjh_table_to_act(t), 1);
    act_ok(t, 1, ZJH_FOLD, 0);
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], -25);
    ck_assert_int_eq(st.delta[1], -30);
    ck_assert_int_eq(st.delta[2], 55);
    zjh_table_destroy(t);

    /* Losing to the first one compared ends the compares. */
    log.n = 0;
    t = table_new(&c, &log);
    const char *first[] = {"KsKdKh", "AsAdAh", "7c7d2h"};
    start(t, 0, stacks, first);
    act_ok(t, 1, ZJH_RAISE, 20);
    act_ok(t, 2, ZJH_CALL, 0);
    log.n = 0;
    act_ok(t, 0, ZJH_CALL, 0);
    ck_assert_int_eq(log_count(&log, ZJH_EV_COMPARE, 0), 1);
    ck_assert_int_eq(log_last(&log, ZJH_EV_COMPARE)->target, 1);
    ck_assert_int_eq(log_last(&log, ZJH_EV_ALL_IN)->detail, 0);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_all_in_call_tie_loses)
{
    log_t log = {0};
    zjh_config_t c = config(2, 10, 50, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {15, 1000, 0, 0, 0, 0};
    const char *hands[] = {"AsKd9c", "AhKs9d"};
    start(t, 1, stacks, hands); /* order 0, 1: seat 0 has 5 left, the call is 10 */
    act_ok(t, 0, ZJH_CALL, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_COMPARE)->loser, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_ALL_IN)->detail, 0);
    ck_assert(!zjh_table_in_hand(t));
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], -15);
    ck_assert_int_eq(st.delta[1], 15);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_all_in_compare_pays_the_stack_against_the_target_only)
{
    log_t log = {0};
    zjh_config_t c = config(3, 10, 50, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {1000, 35, 1000, 0, 0, 0};
    const char *hands[] = {"KsQd9c", "AsAdAh", "2c7d9h"};
    start(t, 0, stacks, hands); /* order 1, 2, 0 */
    act_ok(t, 1, ZJH_CALL, 0);  /* 15 left */
    act_ok(t, 2, ZJH_RAISE, 20);
    act_ok(t, 0, ZJH_CALL, 0);
    log.n = 0;
    act_ok(t, 1, ZJH_COMPARE, 2); /* costs 20, has 15 */
    const zjh_event_t *e = log_last(&log, ZJH_EV_COMPARE);
    ck_assert(e->all_in);
    ck_assert_int_eq(e->amount, 15);
    ck_assert_int_eq(e->loser, 2);
    ck_assert_int_eq(log_count(&log, ZJH_EV_COMPARE, -1), 1);
    ck_assert_int_eq(log_count(&log, ZJH_EV_ALL_IN, -1), 0);
    zjh_seat_t s = seat_of(t, 1);
    ck_assert(s.all_in && !s.folded);
    ck_assert_int_eq(s.stack, 0);
    act_ok(t, 0, ZJH_CALL, 0);
    /* Round 3: seat 1 has nothing left; its call is an all-in call of 0 chips. */
    zjh_turn_t turn;
    zjh_table_turn(t, &turn);
    ck_assert_int_eq(turn.seat, 1);
    ck_assert_int_eq(turn.cost, 0);
    ck_assert(turn.all_in);
    act_ok(t, 1, ZJH_CALL, 0);
    ck_assert_int_eq(log_last(&log, ZJH_EV_ALL_IN)->detail, 1);
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[1], 115 - 35);
    ck_assert_int_eq(st.delta[0], -50);
    ck_assert_int_eq(st.delta[2], -30);
    zjh_table_destroy(t);
}
END_TEST

START_TEST(test_stack_equal_to_the_call_is_a_plain_call)
{
    log_t log = {0};
    zjh_config_t c = config(2, 10, 50, 5);
    zjh_table_t *t = table_new(&c, &log);
    const int64_t stacks[ZJH_MAX_SEATS] = {20, 1000, 0, 0, 0, 0};
    const char *hands[] = {"2c7d9h", "AhKs9d"};
    start(t, 1, stacks, hands);
    act_ok(t, 0, ZJH_CALL, 0);
    ck_assert(!log_last(&log, ZJH_EV_CALL)->all_in);
    ck_assert_int_eq(log_count(&log, ZJH_EV_COMPARE, -1), 0);
    zjh_seat_t s = seat_of(t, 0);
    ck_assert(s.all_in && !s.folded);
    ck_assert(zjh_table_in_hand(t));
    ck_assert_int_eq(zjh_table_to_act(t), 1);
    zjh_table_destroy(t);
    /* A stack of just the ante plays too, with nothing behind it. */
    const int64_t ante_only[ZJH_MAX_SEATS] = {10, 1000, 0, 0, 0, 0};
    log.n = 0;
    t = table_new(&c, &log);
    start(t, 1, ante_only, hands);
    ck_assert(seat_of(t, 0).all_in);
    act_ok(t, 0, ZJH_CALL, 0); /* all-in call of 0 chips: 9-high loses */
    ck_assert_int_eq(log_last(&log, ZJH_EV_ALL_IN)->detail, 0);
    zjh_settlement_t st;
    settlement_of(t, &st);
    ck_assert_int_eq(st.delta[0], -10);
    zjh_table_destroy(t);
}
END_TEST

/* ---- croupier-rules zhajinhua ---------------------------------------------------------- */

/* Runs croupier-rules with args (stderr joined to stdout); returns its exit code, or -1 when
 * the binary is not there (the test is then skipped). */
static int run_rules(const char *args, char *out, size_t outlen)
{
    const char *build = getenv("CROUPIER_BUILD");
    char exe[1024], cmd[2048];
    struct stat st;
    out[0] = '\0';
    if (build == NULL)
        return -1;
    snprintf(exe, sizeof exe, "%s/tools/croupier-rules", build);
    if (stat(exe, &st) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", exe, args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = '\0';
    int rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

START_TEST(test_rules_command_ranks_compares_and_rejects_bad_input)
{
    char out[4096];
    if (run_rules("zhajinhua rank AsKsQs", out, sizeof out) == -1) {
        fprintf(stderr, "# SKIP: croupier-rules not found (CROUPIER_BUILD unset or not built)\n");
        return;
    }
    ck_assert_int_eq(run_rules("zhajinhua rank AsKsQs", out, sizeof out), 0);
    ck_assert_str_eq(out, "straight_flush 4141312\n");
    ck_assert_int_eq(run_rules("zhajinhua rank 2c3d5h", out, sizeof out), 0);
    ck_assert_str_eq(out, "high_card 50302\n");
    ck_assert_int_eq(run_rules("zhajinhua rank Ah2c3d", out, sizeof out), 0);
    ck_assert_str_eq(out, "straight 2030201\n");
    ck_assert_int_eq(run_rules("zhajinhua rank KsKdKh", out, sizeof out), 0);
    ck_assert_str_eq(out, "three_of_a_kind 5131313\n");
    ck_assert_int_eq(run_rules("zhajinhua rank 5cKsKd", out, sizeof out), 0);
    ck_assert_str_eq(out, "pair 1131305\n");
    ck_assert_int_eq(run_rules("zhajinhua rank 2h3h5h", out, sizeof out), 0);
    ck_assert_str_eq(out, "flush 3050302\n");
    ck_assert_int_eq(run_rules("zhajinhua compare 2c3d5h AsAdAh", out, sizeof out), 0);
    ck_assert_str_eq(out, "A\n");
    ck_assert_int_eq(run_rules("zhajinhua compare 2c3d5h 2d3h6s", out, sizeof out), 0);
    ck_assert_str_eq(out, "B\n");
    ck_assert_int_eq(run_rules("zhajinhua compare AsKd9c AhKs9d", out, sizeof out), 0);
    ck_assert_str_eq(out, "tie\n");
    ck_assert_int_eq(run_rules("zhajinhua compare Ah2c3d QsKdAc", out, sizeof out), 0);
    ck_assert_str_eq(out, "B\n");
    const char *bad[] = {
        "zhajinhua rank AsKs",
        "zhajinhua rank AsKsQsJs",
        "zhajinhua rank AsAsKs",
        "zhajinhua rank XxKsQs",
        "zhajinhua rank",
        "zhajinhua compare AsKsQs",
        "zhajinhua compare AsKsQs 2c",
        "zhajinhua compare 2c AsKsQs",
        "zhajinhua",
        "zhajinhua bogus AsKsQs",
        "zhajinhua rank AsKsQs extra",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(run_rules(bad[i], out, sizeof out), 2);
        ck_assert_int_eq(lines(out), 1); /* one line, on stderr (stdout is empty) */
        ck_assert_ptr_null(strstr(out, "straight"));
    }
    /* the line says which card is wrong and why (common/cardtext.h cardtext_parse_hand()) */
    static const char *const why[][2] = {
        {"zhajinhua rank AsKs", "2 cards, 3 needed"},
        {"zhajinhua rank AsKsQsJs", "more than 3 cards"},
        {"zhajinhua rank AsAsKs", "card 2 'As': the same card as card 1"},
        {"zhajinhua rank XxKsQs", "card 1 'Xx': 'X' is not a rank (2-9 T J Q K A)"},
        {"zhajinhua compare AsKsQs 2c3d5x", "card 3 '5x': 'x' is not a suit (c d h s)"},
    };
    for (size_t i = 0; i < sizeof why / sizeof why[0]; i++) {
        ck_assert_int_eq(run_rules(why[i][0], out, sizeof out), 2);
        ck_assert_msg(strstr(out, why[i][1]) != NULL, "%s: '%s' lacks '%s'", why[i][0], out,
                      why[i][1]);
    }
}
END_TEST

/* ---- random play ------------------------------------------------------------------------ */

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rng_next(rng_t *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}

static int64_t rng_below(rng_t *r, int64_t n)
{
    return (int64_t)(rng_next(r) % (uint64_t)n);
}

/* Counts events and checks each compare's loser against zjh_compare(). */
typedef struct {
    long events;
    long hand_ends;
    long compares;
    long all_ins;
    long all_in_wins;
    long showdowns;
    long bad_compares;
} rlog_t;

static void rlog_cb(void *ud, const zjh_event_t *ev)
{
    rlog_t *l = ud;
    l->events++;
    if (ev->kind == ZJH_EV_HAND_END)
        l->hand_ends++;
    if (ev->kind == ZJH_EV_ALL_IN) {
        l->all_ins++;
        l->all_in_wins += ev->detail == 1;
    }
    if (ev->kind == ZJH_EV_SHOWDOWN)
        l->showdowns++;
    if (ev->kind == ZJH_EV_COMPARE) {
        l->compares++;
        int want = zjh_compare(ev->cards[0], ev->cards[1]) > 0 ? ev->target : ev->seat;
        l->bad_compares += ev->loser != want;
    }
}

static void rexpect(zjh_table_t *t, rlog_t *log, int seat, zjh_action_t a, int64_t arg, int err)
{
    zjh_table_t *before = zjh_table_clone(t);
    long n = log->events;
    int got = zjh_table_act(t, seat, a, arg);
    if (got != err)
        ck_abort_msg("seat %d action %d arg %lld: got %s, expected %s", seat, (int)a,
                     (long long)arg, zjh_err_name(got), zjh_err_name(err));
    T_ASSERT(zjh_table_same_state(t, before));
    T_CMP(log->events, ==, n);
    zjh_table_destroy(before);
}

/* A seat that is not live (folded or not dealt in), or -1. */
static int random_dead_seat(const zjh_table_t *t, rng_t *rng)
{
    int n = zjh_table_config(t)->seats, start = (int)rng_below(rng, n);
    for (int k = 0; k < n; k++) {
        int s = (start + k) % n;
        zjh_seat_t v = seat_of(t, s);
        if (!v.dealt || v.folded)
            return s;
    }
    return -1;
}

/* One illegal input, chosen at random among those the state allows, with its exact code. */
static void inject_illegal(zjh_table_t *t, rlog_t *log, rng_t *rng, const uint8_t *deck)
{
    const zjh_config_t *c = zjh_table_config(t);
    int me = zjh_table_to_act(t);
    int64_t unit = zjh_table_unit(t);
    zjh_seat_t v = seat_of(t, me);
    int64_t mult = v.looked ? 2 : 1;
    switch (rng_below(rng, 10)) {
    case 0: {
        int s = (me + 1 + (int)rng_below(rng, c->seats - 1)) % c->seats;
        const zjh_action_t acts[] = {ZJH_FOLD, ZJH_CALL, ZJH_RAISE, ZJH_COMPARE, ZJH_TIMEOUT};
        rexpect(t, log, s, acts[rng_below(rng, 5)], me, ZJH_E_OUT_OF_TURN);
        break;
    }
    case 1:
        rexpect(t, log, me, ZJH_RAISE, unit - rng_below(rng, unit + 3), ZJH_E_RAISE_NOT_HIGHER);
        break;
    case 2:
        rexpect(t, log, me, ZJH_RAISE, c->max_unit + 1 + rng_below(rng, 1000),
                ZJH_E_RAISE_OVER_CAP);
        break;
    case 3:
        if (zjh_table_round(t) < 2) {
            rexpect(t, log, me, ZJH_COMPARE, rng_below(rng, c->seats), ZJH_E_COMPARE_TOO_EARLY);
        } else {
            int dead = random_dead_seat(t, rng);
            const int64_t targets[] = {me, -1, c->seats, 1000, dead};
            int64_t target = targets[rng_below(rng, dead >= 0 ? 5 : 4)];
            rexpect(t, log, me, ZJH_COMPARE, target, ZJH_E_COMPARE_TARGET);
        }
        break;
    case 4: {
        for (int s = 0; s < c->seats; s++) {
            zjh_seat_t w = seat_of(t, s);
            if (w.dealt && !w.folded && w.looked) {
                rexpect(t, log, s, ZJH_LOOK, 0, ZJH_E_ALREADY_LOOKED);
                break;
            }
        }
        break;
    }
    case 5: {
        int dead = random_dead_seat(t, rng);
        if (dead >= 0)
            rexpect(t, log, dead, ZJH_LOOK, 0, ZJH_E_NOT_LIVE);
        break;
    }
    case 6: {
        const int seats[] = {-1, c->seats, ZJH_MAX_SEATS, 1000};
        rexpect(t, log, seats[rng_below(rng, 4)], (zjh_action_t)rng_below(rng, 6), 0,
                ZJH_E_BAD_ARGS);
        break;
    }
    case 7:
        rexpect(t, log, me, (zjh_action_t)(6 + rng_below(rng, 10)), 0, ZJH_E_BAD_ARGS);
        break;
    case 8: {
        zjh_table_t *before = zjh_table_clone(t);
        int64_t stacks[ZJH_MAX_SEATS] = {0};
        stacks[0] = stacks[1] = c->ante;
        long n = log->events;
        T_CMP(zjh_table_start_hand(t, 0, stacks, deck, 52), ==, ZJH_E_IN_HAND);
        T_ASSERT(zjh_table_same_state(t, before));
        T_CMP(log->events, ==, n);
        zjh_table_destroy(before);
        break;
    }
    default: {
        int64_t u = v.stack / mult + 1;
        if (u <= unit)
            u = unit + 1;
        if (u <= c->max_unit && u * mult > v.stack)
            rexpect(t, log, me, ZJH_RAISE, u, ZJH_E_OVER_STACK);
        break;
    }
    }
}

/* A random live seat, or -1. */
static int random_live_seat(const zjh_table_t *t, rng_t *rng, int except)
{
    int n = zjh_table_config(t)->seats, start = (int)rng_below(rng, n);
    for (int k = 0; k < n; k++) {
        int s = (start + k) % n;
        zjh_seat_t v = seat_of(t, s);
        if (s != except && v.dealt && !v.folded)
            return s;
    }
    return -1;
}

/*
 * Plays `hands` random hands at random tables: random stacks (often short, so that all-in
 * calls and compares happen), random looks in and out of turn, random legal actions, and an
 * illegal input about one step in eight. Every accepted action is checked against the rules
 * by its effect on the seat's chips; every hand must end within max_rounds * seats turns and
 * settle with the deltas summing to minus the rake.
 */
static void random_play(long hands, uint64_t seed)
{
    const char *vg = getenv("CROUPIER_VALGRIND");
    if (vg != NULL && strcmp(vg, "1") == 0 && hands > 50)
        hands /= 50;
    rng_t rng = {seed};
    rlog_t log;
    memset(&log, 0, sizeof log);
    zjh_table_t *t = NULL;
    uint8_t deck[52];
    int nd = 0;
    for (int code = 0; code < 64; code++)
        if (zjh_card_valid((uint8_t)code))
            deck[nd++] = (uint8_t)code;
    long hand_ends = 0, all_in_calls = 0, showdown_hands = 0, ties = 0, total_turns = 0;
    uint64_t hand_no = 0;
    for (long h = 0; h < hands; h++) {
        if (h % 250 == 0) {
            zjh_table_destroy(t);
            zjh_config_t c = config(2 + (int)rng_below(&rng, 5), 1 + rng_below(&rng, 10), 0,
                                    2 + (int)rng_below(&rng, 6));
            c.max_unit = c.ante * (1 + rng_below(&rng, 10));
            if (rng_below(&rng, 2)) {
                c.rake_basis_points = (int)rng_below(&rng, 1001);
                c.rake_cap = rng_below(&rng, 3) ? rng_below(&rng, 50) : 0;
            }
            t = zjh_table_create(&c, rlog_cb, &log, NULL);
            ck_assert_ptr_nonnull(t);
            hand_no = 0;
        }
        const zjh_config_t *c = zjh_table_config(t);
        int64_t stacks[ZJH_MAX_SEATS] = {0};
        int players = 0;
        while (players < 2) {
            players = 0;
            for (int s = 0; s < c->seats; s++) {
                stacks[s] = 0;
                if (rng_below(&rng, 4) == 0)
                    continue;
                stacks[s] = c->ante + (rng_below(&rng, 5) == 0 ? rng_below(&rng, 3 * c->ante)
                                                               : rng_below(&rng, 400 * c->ante));
                players++;
            }
        }
        for (int i = 51; i > 0; i--) {
            int j = (int)rng_below(&rng, i + 1);
            uint8_t x = deck[i];
            deck[i] = deck[j];
            deck[j] = x;
        }
        int dealer = (int)rng_below(&rng, c->seats);
        T_CMP(zjh_table_start_hand(t, dealer, stacks, deck, 52), ==, ZJH_OK);
        T_CMP(zjh_table_hand_no(t), ==, ++hand_no);
        int turns = 0, bound = c->max_rounds * c->seats;
        while (zjh_table_in_hand(t)) {
            int64_t r = rng_below(&rng, 100);
            if (r < 12) {
                inject_illegal(t, &log, &rng, deck);
                continue;
            }
            if (r < 22) {
                int s = random_live_seat(t, &rng, -1);
                if (!seat_of(t, s).looked)
                    act_ok(t, s, ZJH_LOOK, 0);
                continue;
            }
            int me = zjh_table_to_act(t);
            zjh_seat_t v = seat_of(t, me);
            T_ASSERT(v.dealt && !v.folded);
            int64_t unit = zjh_table_unit(t), mult = v.looked ? 2 : 1;
            int round = zjh_table_round(t);
            zjh_turn_t turn;
            zjh_table_turn(t, &turn);
            T_CMP(turn.seat, ==, me);
            T_CMP(turn.cost, ==, v.stack < unit * mult ? v.stack : unit * mult);
            r = rng_below(&rng, 100);
            int64_t paid;
            if (r < 8) {
                act_ok(t, me, r < 2 ? ZJH_TIMEOUT : ZJH_FOLD, 0);
                paid = 0;
                T_ASSERT(seat_of(t, me).folded);
            } else if (r < 30 && turn.max_unit > 0) {
                int64_t u = turn.min_unit + rng_below(&rng, turn.max_unit - turn.min_unit + 1);
                act_ok(t, me, ZJH_RAISE, u);
                paid = u * mult;
                T_CMP(zjh_table_unit(t), ==, u);
            } else if (r < 42 && round >= 2) {
                int target = random_live_seat(t, &rng, me);
                uint8_t a[3], b[3];
                zjh_table_cards(t, me, a);
                zjh_table_cards(t, target, b);
                act_ok(t, me, ZJH_COMPARE, target);
                paid = turn.cost;
                int loser = zjh_compare(a, b) > 0 ? target : me;
                T_ASSERT(seat_of(t, loser).folded);
                T_ASSERT(!seat_of(t, loser == me ? target : me).folded);
            } else {
                act_ok(t, me, ZJH_CALL, 0);
                paid = turn.cost;
                if (turn.all_in) {
                    all_in_calls++;
                    /* Out, or the hand ended with it taking the pot. */
                    T_ASSERT(seat_of(t, me).folded || !zjh_table_in_hand(t));
                }
            }
            T_CMP(seat_of(t, me).put_in, ==, v.put_in + paid);
            turns++;
            total_turns++;
            T_CMP(turns, <=, bound);
            if (zjh_table_in_hand(t)) {
                T_CMP(zjh_table_round(t), >=, round);
                T_CMP(zjh_table_round(t), <=, c->max_rounds);
            }
            for (int s = 0; s < c->seats; s++)
                T_CMP(seat_of(t, s).stack, >=, 0);
        }
        hand_ends++;
        T_CMP(log.hand_ends, ==, hand_ends);
        T_CMP(log.bad_compares, ==, 0);
        rexpect(t, &log, (int)rng_below(&rng, c->seats), ZJH_CALL, 0, ZJH_E_NO_HAND);
        zjh_settlement_t st;
        settlement_of(t, &st);
        T_CMP(st.hand, ==, hand_no);
        int64_t pot = 0;
        int winners = 0;
        for (int s = 0; s < ZJH_MAX_SEATS; s++) {
            T_CMP(st.dealt[s], ==, stacks[s] > 0);
            if (s >= c->seats)
                continue;
            zjh_seat_t w = seat_of(t, s);
            pot += w.put_in;
            T_CMP(w.stack, ==, stacks[s] + st.delta[s]);
            T_CMP(w.stack, >=, 0);
            if (stacks[s] == 0)
                T_CMP(st.delta[s], ==, 0);
            else
                T_CMP(w.put_in, >=, c->ante);
            winners += st.delta[s] + w.put_in > 0;
        }
        T_CMP(pot, ==, zjh_table_pot(t));
        int64_t rake =
            pot / 10000 * c->rake_basis_points + pot % 10000 * c->rake_basis_points / 10000;
        if (c->rake_cap > 0 && rake > c->rake_cap)
            rake = c->rake_cap;
        T_CMP(st.rake, ==, rake);
        T_CMP(winners, >=, 1);
        ties += winners > 1;
        showdown_hands += zjh_table_to_act(t) == -1 && log.showdowns > 0;
        log.showdowns = 0;
    }
    zjh_table_destroy(t);
    /* The run reached every kind of ending. */
    if (hands >= 1000) {
        T_CMP(all_in_calls, >, 0);
        T_CMP(log.all_ins, >, 0);
        T_CMP(log.compares, >, 0);
        T_CMP(showdown_hands, >, 0);
        T_CMP(ties, >, 0);
    }
    fprintf(stderr,
            "# %ld hands, %ld turns: %ld all-in calls (%ld won), %ld compares, %ld showdowns, "
            "%ld split pots\n",
            hands, total_turns, all_in_calls, log.all_in_wins, log.compares, showdown_hands, ties);
}

START_TEST(test_random_play_conserves_chips_and_every_hand_ends)
{
    random_play(ZJH_RANDOM_HANDS, 0x9e3779b97f4a7c15ull);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("zjh");
    TCase *tc;
    tc = tcase_create("cards");
    tcase_add_test(tc, test_cards_use_the_wire_code_and_text_form);
    suite_add_tcase(s, tc);
    tc = tcase_create("ranking");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_rank_counts_every_category_over_all_22100_hands);
    tcase_add_test(tc, test_rank_values_and_names);
    tcase_add_test(tc, test_compare_category_order);
    tcase_add_test(tc, test_compare_a23_is_the_lowest_straight_and_qka_the_highest);
    tcase_add_test(tc, test_compare_235_offsuit_beats_trips_and_nothing_else);
    tcase_add_test(tc, test_compare_suits_never_break_ties);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_add_test(tc, test_every_refusal_has_its_code_and_changes_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("betting");
    tcase_add_test(tc, test_start_posts_antes_deals_three_cards_and_asks_left_of_dealer);
    tcase_add_test(tc, test_look_doubles_call_raise_and_compare_costs);
    tcase_add_test(tc, test_raise_up_to_the_cap_and_the_stack);
    tcase_add_test(tc, test_compare_only_from_round_two_lower_hand_out_shown_to_both);
    tcase_add_test(tc, test_compare_tie_loses_the_asker);
    tcase_add_test(tc, test_round_advances_when_the_turn_goes_round_past_the_dealer);
    tcase_add_test(tc, test_timeout_folds_the_player);
    suite_add_tcase(s, tc);
    tc = tcase_create("showdown");
    tcase_add_test(tc, test_forced_showdown_after_max_rounds);
    tcase_add_test(tc, test_showdown_tie_splits_with_the_odd_chip_left_of_the_dealer);
    tcase_add_test(tc, test_showdown_235_beats_trips_only_when_no_other_hand_beats_it);
    tcase_add_test(tc, test_rake_is_a_capped_percentage_rounded_down);
    suite_add_tcase(s, tc);
    tc = tcase_create("all_in");
    tcase_add_test(tc, test_all_in_call_beating_everyone_takes_the_whole_pot);
    tcase_add_test(tc, test_all_in_call_not_beating_everyone_is_out);
    tcase_add_test(tc, test_all_in_call_tie_loses);
    tcase_add_test(tc, test_all_in_compare_pays_the_stack_against_the_target_only);
    tcase_add_test(tc, test_stack_equal_to_the_call_is_a_plain_call);
    suite_add_tcase(s, tc);
    tc = tcase_create("tools");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rules_command_ranks_compares_and_rejects_bad_input);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, test_random_play_conserves_chips_and_every_hand_ends);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
