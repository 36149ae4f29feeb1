/*
 * The shedding bot strategy (bots/strategy_shed.c) under the table's rule options, as the
 * traditional engine announces them (SheddingState.rule_options, croupier-game
 * --trad-options): every move the bot picks from a Snapshot is applied to a reference game
 * that has the same options and the same position, the way the server would judge it.
 * Rules: docs/rules/runfast.md (Options).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "bot_shed_view.h"
#include "bot_strategy.h"
#include "shed_game.h"

enum { WC = 0, WD = 1, WH = 2, WS = 3 }; /* wire suits */

/* Core card (deck 0) of a wire code (no jokers here). */
static shed_card_t from_wire(uint8_t w)
{
    int r = FRAME_CARD_RANK(w), ws = FRAME_CARD_SUIT(w);
    int s = ws == WC ? SHED_SUIT_C : ws == WD ? SHED_SUIT_D : ws;
    return shed_card_make(0, r == 2 ? SHED_RANK_2 : r - 3, s);
}

static shed_set_t set_of(const uint8_t *w, size_t n)
{
    shed_set_t s = {{0, 0}};
    for (size_t i = 0; i < n; i++)
        shed_set_add(&s, from_wire(w[i]));
    return s;
}

/* A Run Fast snapshot for seat 1 to act, seat 2 holding `next_left` cards. */
typedef struct {
    const bot_strategy_ops_t *ops;
    void *st;
    bot_seat_t seat;
    Croupier__Snapshot sn;
    Croupier__SheddingState ss;
    uint8_t hand[16], last[16];
    uint32_t left[3];
    char *opts[4];
} env_t;

static void env_init(env_t *e, const uint8_t *hand, size_t nhand, uint32_t next_left)
{
    memset(e, 0, sizeof *e);
    e->ops = bot_strategy_find("runfast");
    ck_assert_ptr_nonnull(e->ops);
    e->st = calloc(1, e->ops->state_size);
    e->seat = (bot_seat_t){.player_id = 1, .desk_id = 9, .seat = 1, .game = "runfast"};
    bot_shed_view_init(&e->sn, &e->ss, "runfast", e->hand, hand, nhand);
    e->left[0] = 9;
    e->left[1] = (uint32_t)nhand;
    e->left[2] = next_left;
    e->ss.n_cards_left = 3;
    e->ss.cards_left = e->left;
}

static void env_beat(env_t *e, const uint8_t *cards, size_t n)
{
    bot_shed_view_beat(&e->ss, e->last, cards, n, 0);
}

static void env_options(env_t *e, const char *a, const char *b)
{
    e->ss.n_rule_options = 0;
    if (a != NULL)
        e->opts[e->ss.n_rule_options++] = (char *)a;
    if (b != NULL)
        e->opts[e->ss.n_rule_options++] = (char *)b;
    e->ss.rule_options = e->opts;
}

/* The bot's answer: 1 with *mv (new strategy state each time, as after a Resume). */
static int env_decide(env_t *e, uint64_t seed, bot_move_t *mv)
{
    return bot_shed_view_decide(e->ops, e->st, &e->seat, &e->sn, seed, mv);
}

static void env_free(env_t *e)
{
    bot_shed_view_free(e->ops, e->st);
    free(e->st);
}

/*
 * The server's judgement: the position of the snapshot in a game with `options` (seat 2
 * holding one card, the 2 of hearts, when next_left is 1). Returns shed_game_apply's result.
 */
static int judge(const env_t *e, unsigned options, const bot_move_t *mv)
{
    shed_config_t cfg = {.base_stake = 1, .options = options};
    shed_game_t *g = shed_game_create(shed_rules_find("runfast"), &cfg);
    ck_assert_ptr_nonnull(g);
    shed_set_t hand = set_of(e->hand, e->ss.hand.len);
    shed_set_t beat = set_of(e->last, e->ss.has_last_play ? e->ss.last_play.len : 0);
    ck_assert_int_eq(shed_game_setup_position(g, 1, hand, beat), 0);
    if (e->left[2] == 1) {
        shed_set_t one = {{0, 0}};
        shed_set_add(&one, shed_card_make(0, SHED_RANK_2, SHED_SUIT_H));
        ck_assert_int_eq(shed_game_setup_hand(g, 2, one), 0);
    }
    shed_action_t a = {.seat = 1};
    if (mv->shedding.move == CROUPIER__SHEDDING_MOVE__SHEDDING_PASS) {
        a.kind = SHED_ACT_PASS;
    } else {
        a.kind = SHED_ACT_PLAY;
        a.cards = set_of(mv->shedding.cards.data, mv->shedding.cards.len);
    }
    int rc = shed_game_apply(g, &a);
    shed_game_destroy(g);
    return rc;
}

/*
 * Report single, leading and following: with the next seat on one card every single the bot
 * plays is its highest card and the server accepts every move; without the option in the
 * snapshot the same position makes it play lower singles, which that server would refuse.
 */
START_TEST(test_bot_plays_its_highest_single_when_the_next_seat_reports_single)
{
    uint8_t hand[] = {FRAME_CARD(4, WC), FRAME_CARD(9, WD), FRAME_CARD(13, WS)};
    uint8_t five[] = {FRAME_CARD(5, WS)};
    for (int follow = 0; follow < 2; follow++) {
        env_t e;
        env_init(&e, hand, 3, 1);
        if (follow)
            env_beat(&e, five, 1);
        env_options(&e, "report-single", NULL);
        for (uint64_t seed = 0; seed < 64; seed++) {
            bot_move_t mv;
            ck_assert_int_eq(env_decide(&e, seed, &mv), 1);
            ck_assert_int_eq(judge(&e, SHED_OPT_RF_REPORT_SINGLE, &mv), SHED_OK);
            ck_assert_int_eq(mv.shedding.move, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY);
            ck_assert_int_eq(mv.shedding.cards.len, 1);
            ck_assert_int_eq(mv.shedding.cards.data[0], FRAME_CARD(13, WS));
        }
        /* the control: a bot that does not know the option plays lower singles */
        env_options(&e, NULL, NULL);
        int refused = 0;
        for (uint64_t seed = 0; seed < 64; seed++) {
            bot_move_t mv;
            ck_assert_int_eq(env_decide(&e, seed, &mv), 1);
            refused += judge(&e, SHED_OPT_RF_REPORT_SINGLE, &mv) == SHED_E_NOT_HIGHEST;
        }
        ck_assert_int_gt(refused, 0);
        /* the next seat holding two cards: no restriction, the lowest single is the usual pick */
        e.left[2] = 2;
        env_options(&e, "report-single", NULL);
        int low = 0;
        for (uint64_t seed = 0; seed < 64; seed++) {
            bot_move_t mv;
            ck_assert_int_eq(env_decide(&e, seed, &mv), 1);
            ck_assert_int_eq(judge(&e, SHED_OPT_RF_REPORT_SINGLE, &mv), SHED_OK);
            low += mv.shedding.cards.len == 1 && mv.shedding.cards.data[0] != FRAME_CARD(13, WS);
        }
        ck_assert_int_gt(low, 0);
        env_free(&e);
    }
}
END_TEST

/*
 * Four with two: a four of a kind with two kickers on the table is a combination only under
 * the option; the bot then beats it when it can (must beat when able: a pass would be refused)
 * and every move is accepted by a server with the options.
 */
START_TEST(test_bot_beats_four_with_two_under_the_option)
{
    uint8_t hand[] = {FRAME_CARD(7, WC), FRAME_CARD(7, WD), FRAME_CARD(7, WH),
                      FRAME_CARD(7, WS), FRAME_CARD(3, WC), FRAME_CARD(9, WD)};
    uint8_t four2[] = {FRAME_CARD(5, WC), FRAME_CARD(5, WD), FRAME_CARD(5, WH),
                       FRAME_CARD(5, WS), FRAME_CARD(4, WD), FRAME_CARD(8, WD)};
    env_t e;
    env_init(&e, hand, 6, 5);
    env_beat(&e, four2, 6);
    env_options(&e, "four-with-two", "bomb-pays");
    e.ss.has_bomb_units = true;
    e.ss.bomb_units = 20;
    unsigned opts = SHED_OPT_RF_FOUR_WITH_TWO | SHED_OPT_RF_BOMB_PAYS;
    int six = 0;
    for (uint64_t seed = 0; seed < 64; seed++) {
        bot_move_t mv;
        ck_assert_int_eq(env_decide(&e, seed, &mv), 1);
        ck_assert_int_eq(mv.shedding.move, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY);
        ck_assert_int_eq(judge(&e, opts, &mv), SHED_OK);
        six += mv.shedding.cards.len == 6;
    }
    ck_assert_int_gt(six, 0); /* the four with two is among its answers, not only the bomb */
    env_free(&e);
}
END_TEST

/* A name the bot does not know, or an option of another game, is left out: it still plays. */
START_TEST(test_bot_ignores_unknown_rule_options)
{
    uint8_t hand[] = {FRAME_CARD(4, WC), FRAME_CARD(9, WD), FRAME_CARD(13, WS)};
    env_t e;
    env_init(&e, hand, 3, 4);
    env_options(&e, "no-such-option", "a-three-fails");
    bot_move_t mv;
    ck_assert_int_eq(env_decide(&e, 3, &mv), 1);
    ck_assert_int_eq(judge(&e, 0, &mv), SHED_OK);
    env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bot_shed_options");
    TCase *tc = tcase_create("rule_options");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_bot_plays_its_highest_single_when_the_next_seat_reports_single);
    tcase_add_test(tc, test_bot_beats_four_with_two_under_the_option);
    tcase_add_test(tc, test_bot_ignores_unknown_rule_options);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
