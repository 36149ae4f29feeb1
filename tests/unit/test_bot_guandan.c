/*
 * Guandan for bots: the analysis set-ups of games/traditional (shed_game_setup_level_position,
 * shed_game_setup_tribute) and the bot strategy's choices from a Snapshot (bots/strategy_shed.c):
 * level cards, wild cards, tribute and return tribute. Every move the strategy sends is checked
 * against the rules code at the snapshot's level, over many random choices.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "bot_shed_view.h"
#include "bot_strategy.h"
#include "shed_game.h"

enum { WC = 0, WD = 1, WH = 2, WS = 3 }; /* wire suits */

/* Core card (deck 0) of wire rank r (2..14) and core suit s. */
static shed_card_t card(int r, int s)
{
    return shed_card_make(0, r == 2 ? SHED_RANK_2 : r - 3, s);
}

static shed_set_t set_of(const shed_card_t *cards, int n)
{
    shed_set_t s = {{0, 0}};
    for (int i = 0; i < n; i++)
        shed_set_add(&s, cards[i]);
    return s;
}

/* Core rank index of wire rank r. */
static int lvl(int r)
{
    return r == 2 ? SHED_RANK_2 : r - 3;
}

static bool plays_contain(const shed_set_t *m, int n, shed_set_t want)
{
    for (int i = 0; i < n; i++)
        if (shed_set_eq(m[i], want))
            return true;
    return false;
}

START_TEST(test_level_cards_rank_above_aces_only_at_their_level)
{
    shed_game_t *g = shed_game_create(shed_rules_find("guandan"), NULL);
    ck_assert_ptr_nonnull(g);
    shed_card_t h[] = {card(7, SHED_SUIT_C), card(3, SHED_SUIT_D)};
    shed_card_t ace[] = {card(14, SHED_SUIT_S)};
    shed_set_t hand = set_of(h, 2), beat = set_of(ace, 1), moves[64];
    shed_card_t seven[] = {card(7, SHED_SUIT_C)};
    /* level 7: the 7 outranks the ace */
    ck_assert_int_eq(shed_game_setup_level_position(g, 1, hand, beat, lvl(7)), 0);
    int n = shed_game_legal_plays(g, moves, 64);
    ck_assert_int_eq(n, 1);
    ck_assert(shed_set_eq(moves[0], set_of(seven, 1)));
    ck_assert_int_eq(shed_game_level(g, NULL), lvl(7));
    /* level 2: nothing beats the ace */
    ck_assert_int_eq(shed_game_setup_level_position(g, 1, hand, beat, lvl(2)), 0);
    ck_assert_int_eq(shed_game_legal_plays(g, moves, 64), 0);
    ck_assert(shed_game_may_pass(g));
    /* bad input: the game is unchanged, other games have no level */
    uint64_t d = shed_game_digest(g);
    ck_assert_int_eq(shed_game_setup_level_position(g, 1, hand, beat, 13), -EINVAL);
    ck_assert_int_eq(shed_game_setup_level_position(g, 4, hand, beat, 0), -EINVAL);
    ck_assert_int_eq(shed_game_digest(g), d);
    shed_game_t *ddz = shed_game_create(shed_rules_find("doudizhu"), NULL);
    ck_assert_int_eq(shed_game_setup_level_position(ddz, 0, hand, beat, 0), -EINVAL);
    ck_assert_int_eq(shed_game_setup_tribute(ddz, 0, hand, 0, false), -EINVAL);
    shed_game_destroy(ddz);
    shed_game_destroy(g);
}
END_TEST

START_TEST(test_wild_heart_of_the_level_completes_bombs_and_pairs)
{
    shed_game_t *g = shed_game_create(shed_rules_find("guandan"), NULL);
    /* level 9: the 9 of hearts is wild */
    shed_card_t h[] = {card(5, SHED_SUIT_S), card(5, SHED_SUIT_C), card(5, SHED_SUIT_D),
                       card(9, SHED_SUIT_H), card(12, SHED_SUIT_S)};
    shed_card_t k[] = {card(13, SHED_SUIT_S), card(13, SHED_SUIT_C)};
    shed_set_t hand = set_of(h, 5), moves[256];
    ck_assert_int_eq(shed_game_setup_level_position(g, 0, hand, set_of(k, 2), lvl(9)), 0);
    int n = shed_game_legal_plays(g, moves, 256);
    ck_assert_int_gt(n, 0);
    /* the three 5s and the wild: a bomb of four, which beats the pair of kings */
    shed_card_t bomb[] = {card(5, SHED_SUIT_S), card(5, SHED_SUIT_C), card(5, SHED_SUIT_D),
                          card(9, SHED_SUIT_H)};
    ck_assert(plays_contain(moves, n, set_of(bomb, 4)));
    /* queen + wild as a pair of queens does not beat kings; at level 2 there is no wild */
    shed_card_t qw[] = {card(12, SHED_SUIT_S), card(9, SHED_SUIT_H)};
    ck_assert(!plays_contain(moves, n, set_of(qw, 2)));
    ck_assert_int_eq(shed_game_setup_level_position(g, 0, hand, set_of(k, 2), lvl(2)), 0);
    n = shed_game_legal_plays(g, moves, 256);
    ck_assert(!plays_contain(moves, n, set_of(bomb, 4)));
    /* leading at level 9: queen + wild is a pair */
    ck_assert_int_eq(shed_game_setup_level_position(g, 0, hand, (shed_set_t){{0, 0}}, lvl(9)), 0);
    n = shed_game_legal_plays(g, moves, 256);
    ck_assert(plays_contain(moves, n, set_of(qw, 2)));
    shed_game_destroy(g);
}
END_TEST

START_TEST(test_tribute_gives_the_top_card_but_no_wild_and_returns_ten_or_lower)
{
    shed_game_t *g = shed_game_create(shed_rules_find("guandan"), NULL);
    /* level 7: 7 of hearts wild (excepted), 7 of spades a level card above the ace */
    shed_card_t h[] = {card(7, SHED_SUIT_H), card(7, SHED_SUIT_S), card(14, SHED_SUIT_S),
                       card(4, SHED_SUIT_C)};
    shed_set_t hand = set_of(h, 4), gives[32];
    ck_assert_int_eq(shed_game_setup_tribute(g, 2, hand, lvl(7), false), 0);
    ck_assert_int_eq(shed_game_phase(g), SHED_PHASE_TRIBUTE);
    int to = -9;
    ck_assert_int_eq(shed_game_tribute(g, &to), 1);
    ck_assert_int_eq(to, 3);
    int n = shed_game_legal_plays(g, gives, 32);
    ck_assert_int_eq(n, 1);
    shed_card_t top[] = {card(7, SHED_SUIT_S)};
    ck_assert(shed_set_eq(gives[0], set_of(top, 1)));
    /* a joker beats it */
    shed_set_t withj = hand;
    shed_set_add(&withj, SHED_CARD_BJ);
    ck_assert_int_eq(shed_game_setup_tribute(g, 2, withj, lvl(7), false), 0);
    n = shed_game_legal_plays(g, gives, 32);
    ck_assert_int_eq(n, 1);
    ck_assert(shed_set_has(gives[0], SHED_CARD_BJ));
    /* returning: a card of natural rank 10 or lower (the two 7s, the 4), not the ace; the
     * receiver's payer gets it */
    ck_assert_int_eq(shed_game_setup_tribute(g, 2, hand, lvl(7), true), 0);
    ck_assert_int_eq(shed_game_tribute(g, &to), 2);
    ck_assert_int_eq(to, 3);
    n = shed_game_legal_plays(g, gives, 32);
    ck_assert_int_eq(n, 3);
    shed_card_t a[] = {card(14, SHED_SUIT_S)};
    ck_assert(!plays_contain(gives, n, set_of(a, 1)));
    /* nothing of 10 or lower: any card */
    shed_card_t hi[] = {card(14, SHED_SUIT_S), card(13, SHED_SUIT_D)};
    ck_assert_int_eq(shed_game_setup_tribute(g, 2, set_of(hi, 2), lvl(7), true), 0);
    ck_assert_int_eq(shed_game_legal_plays(g, gives, 32), 2);
    shed_game_destroy(g);
}
END_TEST

/* ---- the bot strategy ------------------------------------------------------------------- */

typedef struct {
    const bot_strategy_ops_t *ops;
    void *st;
    bot_seat_t seat;
    Croupier__Snapshot sn;
    Croupier__SheddingState ss;
    uint8_t hand[32], last[32];
} bot_env_t;

static void bot_env_init(bot_env_t *e, int level, const uint8_t *hand, size_t nhand)
{
    memset(e, 0, sizeof *e);
    e->ops = bot_strategy_find("guandan");
    ck_assert_ptr_nonnull(e->ops);
    e->st = calloc(1, e->ops->state_size);
    e->seat = (bot_seat_t){.player_id = 1, .desk_id = 9, .seat = 1, .game = "guandan"};
    bot_shed_view_init(&e->sn, &e->ss, "guandan", e->hand, hand, nhand);
    if (level > 0) {
        e->ss.has_level = true;
        e->ss.level = (uint32_t)level;
    }
}

static void bot_env_beat(bot_env_t *e, const uint8_t *cards, size_t n, uint32_t by)
{
    bot_shed_view_beat(&e->ss, e->last, cards, n, by);
}

/* The bot's answer to the snapshot: 1 with *mv, 0 for nothing (new state each time). */
static int bot_env_decide(bot_env_t *e, uint64_t seed, bot_move_t *mv)
{
    return bot_shed_view_decide(e->ops, e->st, &e->seat, &e->sn, seed, mv);
}

static void bot_env_free(bot_env_t *e)
{
    bot_shed_view_free(e->ops, e->st);
    free(e->st);
}

static uint8_t wire(int r, int ws)
{
    return FRAME_CARD(r, ws);
}

/* Core card (deck 0) of a wire code (no jokers here). */
static shed_card_t from_wire(uint8_t w)
{
    int ws = FRAME_CARD_SUIT(w);
    return card(FRAME_CARD_RANK(w), ws == WC ? SHED_SUIT_C : ws == WD ? SHED_SUIT_D : ws);
}

START_TEST(test_bot_plays_the_level_card_over_an_ace_or_passes)
{
    uint8_t hand[] = {wire(7, WC), wire(3, WD)};
    uint8_t ace[] = {wire(14, WS)};
    bot_env_t e;
    bot_env_init(&e, 7, hand, 2);
    bot_env_beat(&e, ace, 1, 0);
    int played = 0;
    for (uint64_t seed = 0; seed < 64; seed++) {
        bot_move_t mv;
        ck_assert_int_eq(bot_env_decide(&e, seed, &mv), 1);
        ck_assert_int_eq(mv.action.kind_case, CROUPIER__ACTION__KIND_SHEDDING);
        if (mv.shedding.move == CROUPIER__SHEDDING_MOVE__SHEDDING_PASS)
            continue;
        ck_assert_int_eq(mv.shedding.move, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY);
        ck_assert_int_eq(mv.shedding.cards.len, 1);
        ck_assert_int_eq(mv.shedding.cards.data[0], wire(7, WC));
        played++;
    }
    ck_assert_int_gt(played, 0);
    /* without the level in the snapshot the bot does not guess */
    e.ss.has_level = false;
    bot_move_t mv;
    ck_assert_int_eq(bot_env_decide(&e, 1, &mv), 0);
    bot_env_free(&e);
}
END_TEST

START_TEST(test_bot_leads_legal_combinations_with_wild_cards_and_two_decks)
{
    /* level 5: two 5 of hearts are wild; a pair of kings from both decks */
    uint8_t hand[] = {wire(5, WH), wire(5, WH),  wire(13, WS), wire(13, WS),
                      wire(9, WC), wire(10, WD), wire(11, WC), wire(12, WD)};
    bot_env_t e;
    bot_env_init(&e, 5, hand, sizeof hand);
    shed_game_t *g = shed_game_create(shed_rules_find("guandan"), NULL);
    shed_set_t held = {{0, 0}};
    for (size_t i = 0; i < sizeof hand; i++) {
        shed_card_t c = from_wire(hand[i]);
        shed_set_add(&held, shed_set_has(held, c) ? (shed_card_t)(c + 64) : c);
    }
    bool wild_used = false;
    for (uint64_t seed = 0; seed < 200; seed++) {
        bot_move_t mv;
        ck_assert_int_eq(bot_env_decide(&e, seed, &mv), 1);
        ck_assert_int_eq(mv.shedding.move, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY);
        /* the cards map to held cards and form a combination at level 5 */
        shed_set_t s = {{0, 0}};
        for (size_t i = 0; i < mv.shedding.cards.len; i++) {
            uint8_t w = mv.shedding.cards.data[i];
            shed_card_t c = from_wire(w);
            if (shed_set_has(s, c))
                c = (shed_card_t)(c + 64);
            shed_set_add(&s, c);
            wild_used = wild_used || w == wire(5, WH);
        }
        ck_assert(shed_set_contains(held, s));
        ck_assert_int_eq(shed_game_setup_level_position(g, 1, held, (shed_set_t){{0, 0}}, lvl(5)),
                         0);
        shed_combo_t c;
        ck_assert_int_eq(shed_game_classify(g, s, false, &c), 0);
    }
    ck_assert(wild_used); /* some random pick holds a wild (the straight 9-K, pairs, ...) */
    shed_game_destroy(g);
    bot_env_free(&e);
}
END_TEST

START_TEST(test_bot_answers_a_play_with_a_wild_card_only_with_a_bomb)
{
    /* level 8; the play to beat: 6 + wild 8 of hearts (a pair of 6s, or something else the
     * engine read); the bot holds a pair of 10s (would beat a pair) and four 4s (a bomb) */
    uint8_t hand[] = {wire(10, WS), wire(10, WC), wire(4, WS),
                      wire(4, WC),  wire(4, WD),  wire(4, WH)};
    uint8_t beat[] = {wire(6, WS), wire(8, WH)};
    bot_env_t e;
    bot_env_init(&e, 8, hand, sizeof hand);
    bot_env_beat(&e, beat, 2, 0);
    int bombs = 0;
    for (uint64_t seed = 0; seed < 100; seed++) {
        bot_move_t mv;
        ck_assert_int_eq(bot_env_decide(&e, seed, &mv), 1);
        if (mv.shedding.move == CROUPIER__SHEDDING_MOVE__SHEDDING_PASS)
            continue;
        ck_assert_int_eq(mv.shedding.cards.len, 4);
        for (int i = 0; i < 4; i++)
            ck_assert_int_eq(FRAME_CARD_RANK(mv.shedding.cards.data[i]), 4);
        bombs++;
    }
    ck_assert_int_gt(bombs, 0);
    /* the same without a wild in the play to beat (6 + 6): the pair of 10s is played too */
    beat[1] = wire(6, WC);
    bot_env_beat(&e, beat, 2, 0);
    int pairs = 0;
    for (uint64_t seed = 0; seed < 100; seed++) {
        bot_move_t mv;
        ck_assert_int_eq(bot_env_decide(&e, seed, &mv), 1);
        pairs += mv.shedding.move == CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY &&
                 mv.shedding.cards.len == 2;
    }
    ck_assert_int_gt(pairs, 0);
    bot_env_free(&e);
}
END_TEST

START_TEST(test_bot_pays_and_returns_tribute_with_allowed_cards)
{
    /* level 7: pays its top card (the 7 of spades, not the wild 7 of hearts) */
    uint8_t hand[] = {wire(7, WH), wire(7, WS), wire(14, WS), wire(4, WC), wire(9, WD)};
    bot_env_t e;
    bot_env_init(&e, 7, hand, sizeof hand);
    e.ss.phase = CROUPIER__SHEDDING_PHASE__SHEDDING_TRIBUTE;
    e.ss.has_tribute_return = true;
    e.ss.tribute_return = false;
    for (uint64_t seed = 0; seed < 50; seed++) {
        bot_move_t mv;
        ck_assert_int_eq(bot_env_decide(&e, seed, &mv), 1);
        ck_assert_int_eq(mv.shedding.move, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY);
        ck_assert_int_eq(mv.shedding.cards.len, 1);
        ck_assert_int_eq(mv.shedding.cards.data[0], wire(7, WS));
    }
    /* returning: a card of natural rank 10 or lower (never the ace) */
    e.ss.tribute_return = true;
    bool four = false, nine = false;
    for (uint64_t seed = 0; seed < 50; seed++) {
        bot_move_t mv;
        ck_assert_int_eq(bot_env_decide(&e, seed, &mv), 1);
        ck_assert_int_eq(mv.shedding.cards.len, 1);
        uint8_t w = mv.shedding.cards.data[0];
        ck_assert(w != wire(14, WS));
        four = four || w == wire(4, WC);
        nine = nine || w == wire(9, WD);
    }
    ck_assert(four && nine);
    bot_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bot_guandan");
    TCase *tc = tcase_create("rules_setup");
    tcase_add_test(tc, test_level_cards_rank_above_aces_only_at_their_level);
    tcase_add_test(tc, test_wild_heart_of_the_level_completes_bombs_and_pairs);
    tcase_add_test(tc, test_tribute_gives_the_top_card_but_no_wild_and_returns_ten_or_lower);
    suite_add_tcase(s, tc);
    tc = tcase_create("strategy");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_bot_plays_the_level_card_over_an_ace_or_passes);
    tcase_add_test(tc, test_bot_leads_legal_combinations_with_wild_cards_and_two_decks);
    tcase_add_test(tc, test_bot_answers_a_play_with_a_wild_card_only_with_a_bomb);
    tcase_add_test(tc, test_bot_pays_and_returns_tribute_with_allowed_cards);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
