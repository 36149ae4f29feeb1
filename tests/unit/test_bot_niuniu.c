/*
 * The Niu Niu bot strategy (games/niuniu/strategy_niuniu.c) fed what the engine sends a seat
 * (games/niuniu/niuniu_engine.c, docs/rules/niuniu.md "The engine"): four cards, the bid
 * window's Turn, the banker, the bet window's, the fifth card, the show window's, RoundEnd, and
 * the Results of its own moves; some rounds a Resume (a zeroed block, then the Snapshot with its
 * NiuState). Every move it chooses must be one the server takes: a bid within 0..max_bid in the
 * bid window, a bet its stack covers at the banker's multiplier (niuniu_bet_allowed, the
 * server's rule), a show in the show window, nothing outside its windows; and with its stack
 * unknown it asks for a Snapshot before it bets.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot_strategy.h"
#include "niuniu.h"
#include "niuniu.pb-c.h"

#define STAKE 10

typedef struct {
    const bot_strategy_ops_t *ops;
    void *st;
    bot_seat_t seat;
    bot_rng_t rng;
    int64_t stack; /* the server's view of the seat's chips */
    long moves[4], refreshes, bets_above_1;
} rig_t;

static void rig_event(rig_t *r, Croupier__ServerMessage *m, const ProtobufCMessage *body)
{
    r->ops->on_event(r->st, &r->seat, m);
    if (body != NULL)
        r->ops->on_game(r->st, &r->seat, m, body);
}

static void rig_turn(rig_t *r, int seat, bool terms, int lo, int hi)
{
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Turn t = CROUPIER__TURN__INIT;
    t.seat = (uint32_t)seat;
    t.has_min_amount = t.has_max_amount = terms;
    t.min_amount = lo;
    t.max_amount = hi;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
    m.turn = &t;
    rig_event(r, &m, NULL);
}

static void rig_deal(rig_t *r, const char *round, const uint8_t *cards, size_t n)
{
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Deal d = CROUPIER__DEAL__INIT;
    d.has_seat = true;
    d.seat = r->seat.seat;
    d.has_cards = true;
    d.cards = (ProtobufCBinaryData){n, (uint8_t *)cards};
    d.round_id = (char *)round;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
    m.deal = &d;
    rig_event(r, &m, NULL);
}

static void rig_result(rig_t *r, bool ok)
{
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result res = CROUPIER__RESULT__INIT;
    Croupier__Error err = CROUPIER__ERROR__INIT;
    res.error = ok ? NULL : &err;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    m.result = &res;
    rig_event(r, &m, NULL);
}

/* The bot's move now (expect_move: in a window), decoded; the Result the server would give
 * follows. Returns the action's move (0: none). */
static int rig_move(rig_t *r, int *amount)
{
    bot_move_t mv;
    int delay;
    bot_move_init(&mv);
    int rc = r->ops->decide(r->st, &r->seat, &r->rng, &mv, &delay);
    if (rc != 1)
        return rc == 2 ? -2 : 0;
    ck_assert_int_eq(mv.action.kind_case, CROUPIER__ACTION__KIND_GAME);
    Croupier__Niuniu__NiuAction *a =
        croupier__niuniu__niu_action__unpack(NULL, mv.game.body.len, mv.game.body.data);
    ck_assert_ptr_nonnull(a);
    int move = (int)a->move;
    *amount = a->has_amount ? (int)a->amount : -1;
    croupier__niuniu__niu_action__free_unpacked(a, NULL);
    r->ops->on_sent(r->st, &r->seat, &mv);
    r->moves[move]++;
    return move;
}

/* A Resume: the block zeroed, the Snapshot (seat chips, NiuState of phase with the window's
 * seats when the seat decides now). */
static void rig_resume(rig_t *r, const char *round, int phase, int mult, const uint8_t *cards,
                       size_t n, bool deciding)
{
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot sn = CROUPIER__SNAPSHOT__INIT;
    Croupier__SeatInfo si = CROUPIER__SEAT_INFO__INIT, *sis[] = {&si};
    Croupier__Niuniu__NiuState z = CROUPIER__NIUNIU__NIU_STATE__INIT;
    uint32_t win[] = {r->seat.seat};
    r->refreshes++;
    memset(r->st, 0, r->ops->state_size);
    si.seat = r->seat.seat;
    si.chips = r->stack;
    sn.n_seats = 1;
    sn.seats = sis;
    sn.round_id = (char *)round;
    sn.n_window_seats = deciding ? 1 : 0;
    sn.window_seats = win;
    z.has_phase = true;
    z.phase = (Croupier__Niuniu__NiuPhase)phase;
    z.has_mult = mult > 0;
    z.mult = (uint32_t)mult;
    z.max_bid = 4;
    z.has_own_cards = true;
    z.own_cards = (ProtobufCBinaryData){n, (uint8_t *)cards};
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    m.snapshot = &sn;
    r->ops->on_seat(r->st, &r->seat, &sn);
    r->ops->on_game(r->st, &r->seat, &m, &z.base);
}

/*
 * Rounds of every kind: the bot bids within the window's range, bets only what its stack covers
 * at the banker's multiplier (asking for a Snapshot first while its stack is unknown), shows in
 * the show window, and sends nothing outside its windows or twice for one window.
 */
START_TEST(test_bot_niuniu_moves_are_ones_the_server_takes)
{
    rig_t r = {.ops = bot_strategy_find("niuniu"), .rng = {0x9e3779b97f4a7c15ULL + (uint64_t)_i}};
    ck_assert_ptr_nonnull(r.ops);
    r.st = calloc(1, r.ops->state_size);
    r.seat = (bot_seat_t){.player_id = 7,
                          .seat = 2,
                          .stake = STAKE,
                          .game = "niuniu",
                          .engine = CROUPIER__ENGINE__ENGINE_GAME};
    r.ops->on_seat(r.st, &r.seat, NULL); /* after Joined: no Snapshot */
    r.stack = 1000 + 37 * (_i % 50);
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    cfg.stake = STAKE;
    for (int round = 0; round < 400; round++) {
        char id[32];
        snprintf(id, sizeof id, "niuniu:0:1:2:%d", round + 1);
        uint8_t deck[NIUNIU_DECK_CARDS], cards[NIUNIU_HAND_CARDS];
        for (int i = 0; i < NIUNIU_DECK_CARDS; i++)
            deck[i] = (uint8_t)((2 + i / 4) << 2 | (i % 4));
        for (int i = 0; i < NIUNIU_HAND_CARDS; i++) {
            int k = i + (int)bot_rng_below(&r.rng, (uint32_t)(NIUNIU_DECK_CARDS - i));
            uint8_t t = deck[i];
            deck[i] = deck[k], deck[k] = t;
            cards[i] = deck[i];
        }
        int amount, mv;
        rig_deal(&r, id, cards, 4);
        ck_assert_int_eq(rig_move(&r, &amount), 0); /* no window yet */
        /* The bid. */
        rig_turn(&r, (int)r.seat.seat, true, 0, 4);
        mv = rig_move(&r, &amount);
        ck_assert_int_eq(mv, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID);
        ck_assert(amount >= 0 && amount <= 4);
        rig_result(&r, true);
        ck_assert_int_eq(rig_move(&r, &amount), 0); /* decided */
        /* The banker, then the bets (another seat banks; its multiplier 1..4). */
        int mult = 1 + (int)bot_rng_below(&r.rng, 4);
        Croupier__ServerMessage ge = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Niuniu__NiuEvent ev = CROUPIER__NIUNIU__NIU_EVENT__INIT;
        Croupier__Niuniu__NiuBanker b = CROUPIER__NIUNIU__NIU_BANKER__INIT;
        b.seat = 0, b.mult = (uint32_t)mult;
        ev.kind_case = CROUPIER__NIUNIU__NIU_EVENT__KIND_BANKER, ev.banker = &b;
        ge.body_case = CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT;
        rig_event(&r, &ge, &ev.base);
        bool in_bets = niuniu_bet_allowed(&cfg, r.stack, mult, 1);
        rig_turn(&r, in_bets ? (int)r.seat.seat : 1, true, 1, 5);
        mv = rig_move(&r, &amount);
        if (!in_bets) {
            ck_assert_int_eq(mv, 0); /* not its window */
        } else {
            if (mv == -2) /* its stack unknown: a Snapshot first */
                rig_resume(&r, id, 2, mult, cards, 4, true), mv = rig_move(&r, &amount);
            ck_assert_int_eq(mv, CROUPIER__NIUNIU__NIU_MOVE__NIU_BET);
            ck_assert_msg(niuniu_bet_allowed(&cfg, r.stack, mult, amount),
                          "bet %d, stack %lld, mult %d", amount, (long long)r.stack, mult);
            r.bets_above_1 += amount > 1;
            rig_result(&r, true);
            ck_assert_int_eq(rig_move(&r, &amount), 0);
            /* The fifth card and the show; some rounds a Resume in the show window. */
            rig_deal(&r, id, cards + 4, 1);
            rig_turn(&r, (int)r.seat.seat, false, 0, 0);
            if (round % 7 == 3)
                rig_resume(&r, id, 3, mult, cards, 5, true);
            mv = rig_move(&r, &amount);
            ck_assert_int_eq(mv, CROUPIER__NIUNIU__NIU_MOVE__NIU_SHOW);
            ck_assert_int_eq(amount, -1);
            rig_result(&r, true);
            ck_assert_int_eq(rig_move(&r, &amount), 0);
        }
        /* RoundEnd: the seat's delta, a loss now and then deep enough to make it bet less. */
        int64_t delta = in_bets ? (int64_t)bot_rng_below(&r.rng, 400) - 220 : 0;
        if (r.stack + delta < 60)
            delta = 1000;
        r.stack += delta;
        Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
        Croupier__SeatDelta d = CROUPIER__SEAT_DELTA__INIT, *ds[] = {&d};
        d.seat = r.seat.seat, d.delta = delta;
        re.round_id = id, re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
        re.n_deltas = 1, re.deltas = ds;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
        m.round_end = &re;
        rig_event(&r, &m, NULL);
    }
    ck_assert_int_gt(r.moves[CROUPIER__NIUNIU__NIU_MOVE__NIU_BET], 100);
    ck_assert_int_gt(r.bets_above_1, 0);
    ck_assert_int_gt(r.refreshes, 0);
    free(r.st);
}
END_TEST

/* A move the server refused makes the bot ask for a Snapshot before anything else. */
START_TEST(test_bot_niuniu_refusal_asks_for_a_snapshot)
{
    rig_t r = {.ops = bot_strategy_find("niuniu"), .rng = {42}};
    r.st = calloc(1, r.ops->state_size);
    r.seat = (bot_seat_t){.player_id = 7,
                          .seat = 0,
                          .stake = STAKE,
                          .game = "niuniu",
                          .engine = CROUPIER__ENGINE__ENGINE_GAME};
    const uint8_t cards[] = {(13 << 2) | 3, (12 << 2) | 2, (10 << 2) | 1, (9 << 2) | 0};
    int amount;
    rig_deal(&r, "niuniu:0:1:2:1", cards, 4);
    rig_turn(&r, 0, true, 0, 4);
    ck_assert_int_eq(rig_move(&r, &amount), CROUPIER__NIUNIU__NIU_MOVE__NIU_BID);
    rig_result(&r, false);
    ck_assert_int_eq(rig_move(&r, &amount), -2);
    free(r.st);
}
END_TEST

static Suite *bot_niuniu_suite(void)
{
    Suite *s = suite_create("bot_niuniu");
    TCase *tc = tcase_create("strategy");
    tcase_add_loop_test(tc, test_bot_niuniu_moves_are_ones_the_server_takes, 0, 8);
    tcase_add_test(tc, test_bot_niuniu_refusal_asks_for_a_snapshot);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(bot_niuniu_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
