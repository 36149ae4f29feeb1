/*
 * The hold'em bot strategy (bots/strategy_holdem.c) against the real rules (games/holdem/
 * holdem_table.h), fed what the holdem engine sends a seat (games/holdem/holdem_engine.c: each
 * Turn from holdem_table_legal, the seat's hole cards as its Deal, RoundEnd, the Result of its
 * own move). Its promise (docs/bots.md "Strategies"): every move it picks is legal by
 * construction. Random hands of 2-9 seats, short stacks, antes, big-blind antes and straddle
 * offers; in some hands one seat takes its seat only after the deal, from a Snapshot (as a
 * tournament seat taken when its table deals: the Deal went out before the seat was the
 * player's) -- every move of every seat must be taken by the rules.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot_strategy.h"
#include "holdem_table.h"

#define SEATS_MAX HOLDEM_MAX_SEATS

typedef struct {
    holdem_table_t *t;
    const bot_strategy_ops_t *ops;
    void *st[SEATS_MAX];
    bot_seat_t seat[SEATS_MAX];
    int nseats;
    int late;      /* the seat that takes its seat after the deal (-1: none) */
    bool new_turn; /* a TO_ACT came: a Turn to push */
    uint8_t hole[SEATS_MAX][2];
    bool dealt[SEATS_MAX];
    bot_rng_t rng;
    long moves, late_moves, offers;
} rig_t;

static void feed(rig_t *r, int s, Croupier__ServerMessage *m)
{
    r->ops->on_event(r->st[s], &r->seat[s], m);
}

static void on_table(void *ud, const holdem_event_t *ev)
{
    rig_t *r = ud;
    switch (ev->kind) {
    case HOLDEM_EV_HOLE: {
        r->hole[ev->seat][0] = ev->cards[0];
        r->hole[ev->seat][1] = ev->cards[1];
        r->dealt[ev->seat] = true;
        if (ev->seat == r->late)
            break; /* not the player's seat yet: its Deal does not reach him */
        Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Deal d = CROUPIER__DEAL__INIT;
        d.has_seat = true;
        d.seat = (uint32_t)ev->seat;
        d.has_cards = true;
        d.cards = (ProtobufCBinaryData){2, r->hole[ev->seat]};
        d.round_id = "r";
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
        m.deal = &d;
        feed(r, ev->seat, &m);
        break;
    }
    case HOLDEM_EV_TO_ACT:
        r->new_turn = true;
        break;
    default:
        break;
    }
}

/* The Turn the engine pushes to the table (he_after), to every seat that holds its seat. */
static void push_turn(rig_t *r)
{
    holdem_legal_t l;
    holdem_table_legal(r->t, &l);
    ck_assert_int_ge(l.seat, 0);
    if (l.straddle_offer)
        r->offers++;
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Turn tu = CROUPIER__TURN__INIT;
    tu.seat = (uint32_t)l.seat;
    tu.has_to_call = true;
    tu.to_call = l.to_call;
    tu.has_min_amount = l.can_bet || l.can_raise;
    tu.min_amount = tu.has_min_amount ? l.min_to : 0;
    tu.has_max_amount = true;
    tu.max_amount = l.max_to;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
    m.turn = &tu;
    for (int s = 0; s < r->nseats; s++)
        if (s != r->late)
            feed(r, s, &m);
}

/* The late seat takes its seat: the answer is the table's Snapshot for it (he_snapshot). */
static void take_late_seat(rig_t *r)
{
    int s = r->late;
    holdem_legal_t l;
    holdem_table_legal(r->t, &l);
    Croupier__Snapshot sn = CROUPIER__SNAPSHOT__INIT;
    Croupier__HoldemState hs = CROUPIER__HOLDEM_STATE__INIT;
    sn.your_seat = (uint32_t)s;
    sn.state_case = CROUPIER__SNAPSHOT__STATE_HOLDEM;
    sn.holdem = &hs;
    if (l.seat >= 0) {
        sn.has_turn_seat = true;
        sn.turn_seat = (uint32_t)l.seat;
        hs.has_to_call = true;
        hs.to_call = l.to_call;
        hs.has_min_raise = l.can_bet || l.can_raise;
        hs.min_raise = hs.has_min_raise ? l.min_to : 0;
    }
    if (r->dealt[s]) {
        hs.has_hole_cards = true;
        hs.hole_cards = (ProtobufCBinaryData){2, r->hole[s]};
    }
    memset(r->st[s], 0, r->ops->state_size); /* a new seat: the client zeroes the block */
    r->ops->on_seat(r->st[s], &r->seat[s], &sn);
    r->late = -1;
}

static holdem_action_kind_t kind_of(Croupier__HoldemMove mv)
{
    switch (mv) {
    case CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD:
        return HOLDEM_FOLD;
    case CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK:
        return HOLDEM_CHECK;
    case CROUPIER__HOLDEM_MOVE__HOLDEM_CALL:
        return HOLDEM_CALL;
    case CROUPIER__HOLDEM_MOVE__HOLDEM_BET:
        return HOLDEM_BET;
    case CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE:
        return HOLDEM_RAISE;
    default:
        ck_abort_msg("the bot sent hold'em move %d", (int)mv);
        return HOLDEM_FOLD;
    }
}

static void play_hand(rig_t *r, uint64_t *seed)
{
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    for (int i = 51; i > 0; i--) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        int j = (int)((*seed >> 33) % (uint64_t)(i + 1));
        uint8_t x = deck[i];
        deck[i] = deck[j];
        deck[j] = x;
    }
    memset(r->dealt, 0, sizeof r->dealt);
    r->new_turn = false;
    int rc = holdem_table_start_hand(r->t, -1, deck, 52);
    if (rc != HOLDEM_OK)
        return; /* fewer than two with chips: the caller refills */
    /* The late seat is seated when the hand's cards are out (before any offer is answered, or
     * after the deal: either way its Deal went to nobody). */
    bool late_pending = r->late >= 0;
    int late_seat = r->late;
    for (int steps = 0; holdem_table_in_hand(r->t); steps++) {
        ck_assert_int_lt(steps, 500);
        if (r->new_turn) {
            r->new_turn = false;
            push_turn(r);
        }
        if (late_pending && r->dealt[r->late]) {
            late_pending = false;
            take_late_seat(r);
        }
        int s = holdem_table_to_act(r->t);
        if (s < 0)
            break;
        if (s == r->late) { /* its turn before it holds the seat: the table's timer plays it */
            ck_assert_int_eq(holdem_table_act(r->t, s, HOLDEM_TIMEOUT, 0, 0), HOLDEM_OK);
            continue;
        }
        bot_move_t mv;
        bot_move_init(&mv);
        int delay = -1;
        int d = r->ops->decide(r->st[s], &r->seat[s], &r->rng, &mv, &delay);
        ck_assert_msg(d == 1, "seat %d to act, the bot did not move (decide %d)", s, d);
        ck_assert_int_eq(mv.action.kind_case, CROUPIER__ACTION__KIND_HOLDEM);
        holdem_legal_t l;
        holdem_table_legal(r->t, &l);
        holdem_action_kind_t k = kind_of(mv.holdem.move);
        int64_t amount = mv.holdem.has_amount ? mv.holdem.amount : 0;
        rc = holdem_table_act(r->t, s, k, amount, 0);
        ck_assert_msg(rc == HOLDEM_OK,
                      "seat %d: move %d amount %lld refused (%s); to_call %lld min_to %lld "
                      "max_to %lld can_bet %d can_raise %d offer %d",
                      s, (int)k, (long long)amount, holdem_err_name(rc), (long long)l.to_call,
                      (long long)l.min_to, (long long)l.max_to, l.can_bet, l.can_raise,
                      l.straddle_offer);
        r->moves++;
        if (s == late_seat)
            r->late_moves++;
        Croupier__ServerMessage res = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Result ok = CROUPIER__RESULT__INIT;
        res.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
        res.result = &ok;
        feed(r, s, &res);
    }
    if (late_pending)
        take_late_seat(r);
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    re.round_id = "r";
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
    m.round_end = &re;
    for (int s = 0; s < r->nseats; s++)
        feed(r, s, &m);
}

START_TEST(test_bot_holdem_every_move_is_legal_late_seats_included)
{
    const bot_strategy_ops_t *ops = bot_strategy_find("holdem");
    ck_assert_ptr_nonnull(ops);
    uint64_t seed = 20261207;
    long moves = 0, late_moves = 0, offers = 0, hands = 0;
    /* Under valgrind (CROUPIER_VALGRIND=1, set by ./dev) a tenth: its memory checks, not the
     * count of hands, are what that run adds (72 s for all 300 tables). */
    const bool vg = getenv("CROUPIER_VALGRIND") != NULL;
    const int tables = vg ? 30 : 300;
    for (int table = 0; table < tables; table++) {
        rig_t r;
        memset(&r, 0, sizeof r);
        r.ops = ops;
        r.rng.s = 0x9e3779b97f4a7c15ull ^ (uint64_t)table;
        seed = seed * 6364136223846793005ull + 1;
        holdem_config_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.seats = 2 + (int)((seed >> 40) % 8);
        cfg.small_blind = 5;
        cfg.big_blind = 10;
        int variant = table % 4;
        cfg.big_blind_ante = variant == 1 ? 10 : 0; /* tournaments' big-blind ante */
        cfg.ante = variant == 2 ? 1 : 0;
        if (variant == 3) {
            cfg.straddle = 20;
            cfg.straddle_offers = true;
        }
        r.t = holdem_table_create(&cfg, on_table, &r, NULL);
        ck_assert_ptr_nonnull(r.t);
        r.nseats = cfg.seats;
        for (int s = 0; s < r.nseats; s++) {
            r.st[s] = calloc(1, ops->state_size);
            r.seat[s].seat = (uint32_t)s;
            r.seat[s].game = "holdem";
            r.seat[s].engine = ops->engine;
            ck_assert_int_eq(holdem_table_sit(r.t, s, 1 + (int64_t)bot_rng_below(&r.rng, 60)),
                             HOLDEM_OK);
            ops->on_seat(r.st[s], &r.seat[s], NULL);
        }
        for (int h = 0; h < 40; h++) {
            /* Stacks short and long: a seat with none gets a few big blinds again. */
            for (int s = 0; s < r.nseats; s++)
                if (holdem_table_stack(r.t, s) == 0)
                    holdem_table_add_chips(r.t, s, 1 + (int64_t)bot_rng_below(&r.rng, 60));
            r.late = bot_rng_below(&r.rng, 3) == 0 ? (int)bot_rng_below(&r.rng, (uint32_t)r.nseats)
                                                  : -1;
            play_hand(&r, &seed);
            hands++;
        }
        moves += r.moves;
        late_moves += r.late_moves;
        offers += r.offers;
        for (int s = 0; s < r.nseats; s++)
            free(r.st[s]);
        holdem_table_destroy(r.t);
    }
    printf("# %ld hands, %ld moves (%ld by seats taken after the deal), %ld straddle offers\n",
           hands, moves, late_moves, offers);
    ck_assert_int_gt(moves, vg ? 1000 : 10000);
    ck_assert_int_gt(late_moves, vg ? 10 : 100);
    ck_assert_int_gt(offers, vg ? 10 : 100);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bot_holdem");
    TCase *tc = tcase_create("legal");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bot_holdem_every_move_is_legal_late_seats_included);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
