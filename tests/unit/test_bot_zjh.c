/*
 * The Zha Jin Hua bot strategy (bots/strategy_zhajinhua.c) against the rules module
 * (games/zhajinhua/zjh.h, docs/rules/zhajinhua.md): a table of bots plays many random hands on
 * a zjh_table, every seat seeing what the game server would send it (a rig that maps the rules'
 * events to the protocol like games/zhajinhua/zjh_engine.c: face-down Deals, Turns, Plays,
 * ZjhEvents, RoundEnd), and every move a bot chooses is applied to the table, which must accept
 * it. Some runs also make the seat to act reconnect before its move (a fresh state from a
 * Snapshot with its ZjhState), as after a Resume. Checked besides: a bot acts only on its turn,
 * never looks twice in a hand, never compares in the first betting round, and uses every move.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bot_strategy.h"
#include "frame.h"
#include "zhajinhua.pb-c.h"
#include "zjh.h"

typedef Croupier__Zjh__ZjhEvent zev_t;

typedef struct {
    const bot_strategy_ops_t *ops;
    zjh_table_t *t;
    int nseats;
    void *st[ZJH_MAX_SEATS];
    bot_seat_t seat[ZJH_MAX_SEATS];
    bot_rng_t rng[ZJH_MAX_SEATS];
    char round[64];
    int looks[ZJH_MAX_SEATS]; /* looks this hand */
    long moves[6];            /* by ZjhMove */
    long resumes, refreshes, hands, compares_round1;
} rig_t;

/* Hands msg (and the decoded body, when the client would decode one) to seat s as the client
 * does: on_event, then on_game. */
static void rig_give(rig_t *r, int s, const Croupier__ServerMessage *m, const ProtobufCMessage *b)
{
    r->ops->on_event(r->st[s], &r->seat[s], m);
    if (b != NULL)
        r->ops->on_game(r->st[s], &r->seat[s], m, b);
}

static void rig_give_all(rig_t *r, const Croupier__ServerMessage *m, const ProtobufCMessage *b)
{
    for (int s = 0; s < r->nseats; s++)
        rig_give(r, s, m, b);
}

static void rig_event(rig_t *r, int seat, zev_t *ev)
{
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__GameEvent ge = CROUPIER__GAME_EVENT__INIT;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT;
    m.game_event = &ge;
    if (seat < 0)
        rig_give_all(r, &m, &ev->base);
    else
        rig_give(r, seat, &m, &ev->base);
}

static void rig_play(rig_t *r, int seat, Croupier__Zjh__ZjhMove move, int64_t unit, bool timed)
{
    Croupier__Zjh__ZjhAction a = CROUPIER__ZJH__ZJH_ACTION__INIT;
    a.move = move;
    a.has_unit = unit > 0;
    a.unit = unit;
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play p = CROUPIER__PLAY__INIT;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    act.kind_case = CROUPIER__ACTION__KIND_GAME;
    act.game = &ga;
    p.seat = (uint32_t)seat;
    p.action = &act;
    p.has_timed_out = timed;
    p.timed_out = timed;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    m.play = &p;
    rig_give_all(r, &m, &a.base);
}

/* The rules' events as the game server pushes them (games/zhajinhua/zjh_engine.c). */
static void rig_on_event(void *ud, const zjh_event_t *e)
{
    rig_t *r = ud;
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    zev_t ev = CROUPIER__ZJH__ZJH_EVENT__INIT;
    switch (e->kind) {
    case ZJH_EV_DEAL: {
        Croupier__Deal d = CROUPIER__DEAL__INIT;
        d.has_seat = d.has_count = true;
        d.seat = (uint32_t)e->seat;
        d.count = ZJH_HAND_CARDS;
        d.round_id = r->round;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
        m.deal = &d;
        rig_give_all(r, &m, NULL);
        break;
    }
    case ZJH_EV_LOOK: {
        Croupier__Zjh__ZjhLooked l = CROUPIER__ZJH__ZJH_LOOKED__INIT;
        Croupier__Zjh__ZjhCards c = CROUPIER__ZJH__ZJH_CARDS__INIT;
        l.seat = (uint32_t)e->seat;
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_LOOKED;
        ev.looked = &l;
        rig_event(r, -1, &ev);
        c.seat = (uint32_t)e->seat;
        c.cards = (ProtobufCBinaryData){ZJH_HAND_CARDS, (uint8_t *)e->cards[0]};
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_CARDS;
        ev.cards = &c;
        rig_event(r, e->seat, &ev);
        break;
    }
    case ZJH_EV_FOLD:
        rig_play(r, e->seat, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, e->timed_out);
        break;
    case ZJH_EV_CALL:
        rig_play(r, e->seat, CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL, 0, false);
        break;
    case ZJH_EV_RAISE:
        rig_play(r, e->seat, CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, e->unit, false);
        break;
    case ZJH_EV_COMPARE: {
        Croupier__Zjh__ZjhCompared c = CROUPIER__ZJH__ZJH_COMPARED__INIT;
        c.asker = (uint32_t)e->seat;
        c.target = (uint32_t)e->target;
        c.loser = (uint32_t)e->loser;
        c.has_all_in = c.all_in = e->all_in;
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_COMPARED;
        ev.compared = &c;
        for (int s = 0; s < r->nseats; s++) {
            bool party = s == e->seat || s == e->target;
            c.has_asker_cards = c.has_target_cards = party;
            c.asker_cards = (ProtobufCBinaryData){party ? 3 : 0, (uint8_t *)e->cards[0]};
            c.target_cards = (ProtobufCBinaryData){party ? 3 : 0, (uint8_t *)e->cards[1]};
            rig_event(r, s, &ev);
        }
        break;
    }
    case ZJH_EV_ALL_IN: {
        Croupier__Zjh__ZjhAllIn a = CROUPIER__ZJH__ZJH_ALL_IN__INIT;
        a.seat = (uint32_t)e->seat;
        a.won = e->detail == 1;
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_ALL_IN;
        ev.all_in = &a;
        rig_event(r, -1, &ev);
        break;
    }
    case ZJH_EV_ROUND: {
        Croupier__Zjh__ZjhRound rd = CROUPIER__ZJH__ZJH_ROUND__INIT;
        rd.betting_round = (uint32_t)e->detail;
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_ROUND;
        ev.round = &rd;
        rig_event(r, -1, &ev);
        break;
    }
    case ZJH_EV_TURN: {
        Croupier__Turn t = CROUPIER__TURN__INIT;
        t.seat = (uint32_t)e->seat;
        t.has_to_call = true;
        t.to_call = e->amount;
        t.has_min_amount = e->to > 0;
        t.min_amount = e->to;
        t.has_max_amount = e->max > 0;
        t.max_amount = e->max;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
        m.turn = &t;
        rig_give_all(r, &m, NULL);
        break;
    }
    case ZJH_EV_HAND_END: {
        Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
        re.round_id = r->round;
        re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
        m.round_end = &re;
        rig_give_all(r, &m, NULL);
        break;
    }
    default:
        break;
    }
}

/*
 * Seat s reconnects: its state block zeroed (as the client does at a new seat), then the
 * Snapshot a Resume answers with, its ZjhState built from the table as the adapter builds it
 * (games/zhajinhua/zjh_engine.c zjh_snapshot).
 */
static void rig_resume(rig_t *r, int seat)
{
    Croupier__Zjh__ZjhState st = CROUPIER__ZJH__ZJH_STATE__INIT;
    Croupier__Zjh__ZjhSeat seats[ZJH_MAX_SEATS], *ptrs[ZJH_MAX_SEATS];
    const zjh_config_t *cfg = zjh_table_config(r->t);
    uint8_t own[ZJH_HAND_CARDS];
    zjh_seat_t me;
    ck_assert_int_eq(zjh_table_seat(r->t, seat, &me), ZJH_OK);
    st.in_hand = zjh_table_in_hand(r->t) && me.dealt;
    st.has_ante = st.has_max_unit = st.has_max_rounds = true;
    st.ante = cfg->ante;
    st.max_unit = cfg->max_unit;
    st.max_rounds = (uint32_t)cfg->max_rounds;
    st.has_betting_round = st.has_unit = st.has_pot = st.has_dealer_seat = true;
    st.betting_round = (uint32_t)zjh_table_round(r->t);
    st.unit = zjh_table_unit(r->t);
    st.pot = zjh_table_pot(r->t);
    st.dealer_seat = (uint32_t)zjh_table_dealer(r->t);
    zjh_turn_t turn;
    zjh_table_turn(r->t, &turn);
    st.has_to_call = st.has_can_compare = turn.seat >= 0;
    st.to_call = turn.cost;
    st.can_compare = turn.can_compare;
    for (int s = 0; s < r->nseats; s++) {
        zjh_seat_t x;
        if (zjh_table_seat(r->t, s, &x) != ZJH_OK || !x.dealt)
            continue;
        Croupier__Zjh__ZjhSeat v = CROUPIER__ZJH__ZJH_SEAT__INIT;
        v.seat = (uint32_t)s;
        v.has_stack = v.has_put_in = v.has_looked = v.has_folded = v.has_all_in = true;
        v.stack = x.stack;
        v.put_in = x.put_in;
        v.looked = x.looked;
        v.folded = x.folded;
        v.all_in = x.all_in;
        seats[st.n_seats] = v;
        ptrs[st.n_seats] = &seats[st.n_seats];
        st.n_seats++;
        if (s == seat && x.looked && zjh_table_cards(r->t, s, own) == ZJH_OK) {
            st.has_own_cards = true;
            st.own_cards = (ProtobufCBinaryData){ZJH_HAND_CARDS, own};
        }
    }
    st.seats = ptrs;
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot sn = CROUPIER__SNAPSHOT__INIT;
    Croupier__GameState gs = CROUPIER__GAME_STATE__INIT;
    sn.desk_id = 9;
    sn.your_seat = (uint32_t)seat;
    sn.engine = CROUPIER__ENGINE__ENGINE_GAME;
    sn.game = "zhajinhua";
    sn.round_id = zjh_table_in_hand(r->t) ? r->round : NULL;
    sn.has_turn_seat = turn.seat >= 0;
    sn.turn_seat = (uint32_t)turn.seat;
    sn.state_case = CROUPIER__SNAPSHOT__STATE_GAME_STATE;
    sn.game_state = &gs;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    m.snapshot = &sn;
    /* The body goes through the real codec, as it travels. */
    uint8_t buf[FRAME_GAME_BODY_MAX];
    frame_error_t err;
    ssize_t n = frame_pack_game(&st.base, NULL, NULL, buf, sizeof buf, &err);
    ck_assert_msg(n > 0, "ZjhState: %s", err.detail);
    ProtobufCMessage *body =
        frame_unpack_game(&croupier__zjh__zjh_state__descriptor, buf, (size_t)n, NULL, NULL, &err);
    ck_assert_msg(body != NULL, "ZjhState: %s", err.detail);
    memset(r->st[seat], 0, r->ops->state_size);
    r->ops->on_seat(r->st[seat], &r->seat[seat], &sn);
    r->ops->on_game(r->st[seat], &r->seat[seat], &m, body);
    frame_free(body);
    r->resumes++;
}

static void rig_init(rig_t *r, int nseats, int max_rounds, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    r->ops = bot_strategy_find("zhajinhua");
    ck_assert_ptr_nonnull(r->ops);
    ck_assert_int_eq(r->ops->engine, CROUPIER__ENGINE__ENGINE_GAME);
    r->nseats = nseats;
    zjh_config_t cfg = {.seats = nseats, .ante = 10, .max_unit = 100, .max_rounds = max_rounds};
    r->t = zjh_table_create(&cfg, rig_on_event, r, NULL);
    ck_assert_ptr_nonnull(r->t);
    for (int s = 0; s < nseats; s++) {
        r->st[s] = calloc(1, r->ops->state_size);
        r->seat[s] = (bot_seat_t){.player_id = 100 + (uint64_t)s,
                                  .desk_id = 9,
                                  .seat = (uint32_t)s,
                                  .stake = 10,
                                  .engine = CROUPIER__ENGINE__ENGINE_GAME,
                                  .game = "zhajinhua"};
        r->rng[s].s = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)s + 1;
    }
}

static void rig_free(rig_t *r)
{
    for (int s = 0; s < r->nseats; s++)
        free(r->st[s]);
    zjh_table_destroy(r->t);
}

/* The table's input for a bot's action body (decoded with the real codec, as the server does). */
static void rig_decode(const bot_move_t *mv, Croupier__Zjh__ZjhMove *move, zjh_action_t *act,
                       int64_t *arg)
{
    ck_assert_int_eq(mv->action.kind_case, CROUPIER__ACTION__KIND_GAME);
    frame_error_t err;
    ProtobufCMessage *m =
        frame_unpack_game(&croupier__zjh__zjh_action__descriptor, mv->action.game->body.data,
                          mv->action.game->body.len, NULL, NULL, &err);
    ck_assert_msg(m != NULL, "ZjhAction: %s", err.detail);
    const Croupier__Zjh__ZjhAction *a = (const Croupier__Zjh__ZjhAction *)m;
    *move = a->move;
    *arg = 0;
    switch (a->move) {
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD:
        *act = ZJH_FOLD;
        break;
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL:
        *act = ZJH_CALL;
        break;
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE:
        ck_assert(a->has_unit && a->unit > 0);
        *act = ZJH_RAISE;
        *arg = a->unit;
        break;
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK:
        *act = ZJH_LOOK;
        break;
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE:
        ck_assert(a->has_target);
        *act = ZJH_COMPARE;
        *arg = a->target;
        break;
    default:
        ck_abort_msg("unknown move %d", (int)a->move);
    }
    frame_free(m);
}

static uint32_t rnd(bot_rng_t *g, uint32_t n)
{
    return bot_rng_below(g, n);
}

/*
 * One random hand: 2..nseats players dealt in (stacks from one ante, which leaves no chips
 * after the ante, to 200 antes), a shuffled deck, then every move chosen by the bot to act.
 * resume_1_in: the seat to act reconnects before its move one time in that many (0 = never).
 */
static void rig_play_hand(rig_t *r, bot_rng_t *g, uint32_t resume_1_in)
{
    static const int64_t sizes[] = {10, 15, 25, 40, 100, 300, 1000, 2000};
    int64_t stacks[ZJH_MAX_SEATS] = {0};
    int dealt = 0;
    while (dealt < 2) {
        dealt = 0;
        for (int s = 0; s < r->nseats; s++) {
            stacks[s] = rnd(g, 6) == 0 ? 0 : sizes[rnd(g, 8)];
            dealt += stacks[s] > 0;
        }
    }
    uint8_t deck[ZJH_DECK_CARDS];
    for (int i = 0; i < ZJH_DECK_CARDS; i++)
        deck[i] = ZJH_CARD(2 + i / 4, i % 4);
    for (int i = ZJH_DECK_CARDS - 1; i > 0; i--) {
        uint32_t j = rnd(g, (uint32_t)i + 1);
        uint8_t c = deck[i];
        deck[i] = deck[j];
        deck[j] = c;
    }
    r->hands++;
    snprintf(r->round, sizeof r->round, "zhajinhua:0:1:9:%ld", r->hands);
    memset(r->looks, 0, sizeof r->looks);
    ck_assert_int_eq(
        zjh_table_start_hand(r->t, (int)rnd(g, (uint32_t)r->nseats), stacks, deck, ZJH_DECK_CARDS),
        ZJH_OK);
    for (int steps = 0; zjh_table_in_hand(r->t); steps++) {
        ck_assert_int_lt(steps, 1000);
        int s = zjh_table_to_act(r->t);
        ck_assert_int_ge(s, 0);
        if (resume_1_in > 0 && rnd(g, resume_1_in) == 0)
            rig_resume(r, s);
        bot_move_t mv;
        int delay;
        /* Nobody else moves. */
        for (int o = 0; o < r->nseats; o++) {
            if (o == s)
                continue;
            bot_move_init(&mv);
            ck_assert_int_eq(r->ops->decide(r->st[o], &r->seat[o], &r->rng[o], &mv, &delay), 0);
        }
        bot_move_init(&mv);
        int got = r->ops->decide(r->st[s], &r->seat[s], &r->rng[s], &mv, &delay);
        if (got == 2) {
            r->refreshes++;
            rig_resume(r, s);
            bot_move_init(&mv);
            got = r->ops->decide(r->st[s], &r->seat[s], &r->rng[s], &mv, &delay);
        }
        ck_assert_msg(got == 1, "hand %ld: seat %d to act, the bot returned %d", r->hands, s, got);
        ck_assert_int_ge(delay, 0);
        r->ops->on_sent(r->st[s], &r->seat[s], &mv);
        Croupier__Zjh__ZjhMove move;
        zjh_action_t act;
        int64_t arg;
        rig_decode(&mv, &move, &act, &arg);
        r->moves[move]++;
        if (act == ZJH_LOOK)
            ck_assert_msg(++r->looks[s] == 1, "hand %ld: seat %d looks twice", r->hands, s);
        if (act == ZJH_COMPARE && zjh_table_round(r->t) < 2)
            r->compares_round1++;
        int rc = zjh_table_act(r->t, s, act, arg);
        ck_assert_msg(rc == ZJH_OK, "hand %ld: seat %d move %d arg %lld refused: %s", r->hands, s,
                      (int)move, (long long)arg, zjh_err_name(rc));
        /* The reply to the move. */
        Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Result res = CROUPIER__RESULT__INIT;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
        m.result = &res;
        rig_give(r, s, &m, NULL);
    }
}

static void rig_run(uint64_t seed, int hands, uint32_t resume_1_in, long *moves_out)
{
    bot_rng_t g = {.s = seed};
    for (int h = 0; h < hands;) {
        rig_t r;
        int nseats = 2 + (int)rnd(&g, ZJH_MAX_SEATS - 1);
        rig_init(&r, nseats, 2 + (int)rnd(&g, 9), seed + (uint64_t)h);
        /* several hands at one table: the bots' state carries from hand to hand */
        for (int k = 0; k < 20 && h < hands; k++, h++)
            rig_play_hand(&r, &g, resume_1_in);
        ck_assert_int_eq(r.compares_round1, 0);
        if (resume_1_in == 0)
            ck_assert_int_eq(r.resumes, 0); /* in order, the events alone are enough */
        for (int i = 0; i < 6; i++)
            moves_out[i] += r.moves[i];
        rig_free(&r);
    }
}

START_TEST(test_every_move_of_the_bot_is_accepted_by_the_rules)
{
    long moves[6] = {0};
    rig_run(1, 4000, 0, moves);
    /* a sensible player uses every move */
    ck_assert_int_gt(moves[CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD], 0);
    ck_assert_int_gt(moves[CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL], 0);
    ck_assert_int_gt(moves[CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE], 0);
    ck_assert_int_gt(moves[CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK], 0);
    ck_assert_int_gt(moves[CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE], 0);
}
END_TEST

START_TEST(test_bot_resumes_from_a_snapshot_at_any_turn)
{
    long moves[6] = {0};
    rig_run(2, 3000, 3, moves);
    ck_assert_int_gt(moves[CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE], 0);
    ck_assert_int_gt(moves[CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE], 0);
}
END_TEST

/* Every move chosen right after a reconnect, the state from the Snapshot alone. */
START_TEST(test_bot_plays_from_the_snapshot_alone)
{
    long moves[6] = {0};
    rig_run(3, 1500, 1, moves);
    ck_assert_int_gt(moves[CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK], 0);
}
END_TEST

/* The bot's first move of a hand: a look (mostly) or a blind call or raise, never a compare. */
START_TEST(test_bot_looks_or_plays_blind_at_its_first_turn)
{
    rig_t r;
    rig_init(&r, 2, 5, 7);
    int looks = 0, blind = 0;
    bot_rng_t g = {.s = 11};
    for (int h = 0; h < 200; h++) {
        int64_t stacks[ZJH_MAX_SEATS] = {1000, 1000};
        uint8_t deck[ZJH_DECK_CARDS];
        for (int i = 0; i < ZJH_DECK_CARDS; i++)
            deck[i] = ZJH_CARD(2 + i / 4, i % 4);
        for (int i = ZJH_DECK_CARDS - 1; i > 0; i--) {
            uint32_t j = rnd(&g, (uint32_t)i + 1);
            uint8_t c = deck[i];
            deck[i] = deck[j];
            deck[j] = c;
        }
        snprintf(r.round, sizeof r.round, "zhajinhua:0:1:9:%d", h + 1);
        ck_assert_int_eq(zjh_table_start_hand(r.t, 1, stacks, deck, ZJH_DECK_CARDS), ZJH_OK);
        int s = zjh_table_to_act(r.t);
        ck_assert_int_eq(s, 0);
        bot_move_t mv;
        int delay;
        bot_move_init(&mv);
        ck_assert_int_eq(r.ops->decide(r.st[s], &r.seat[s], &r.rng[s], &mv, &delay), 1);
        Croupier__Zjh__ZjhMove move;
        zjh_action_t act;
        int64_t arg;
        rig_decode(&mv, &move, &act, &arg);
        ck_assert(act == ZJH_LOOK || act == ZJH_CALL || act == ZJH_RAISE);
        looks += act == ZJH_LOOK;
        blind += act != ZJH_LOOK;
        /* end the hand: the seat to act folds */
        ck_assert_int_eq(zjh_table_act(r.t, s, ZJH_FOLD, 0), ZJH_OK);
        ck_assert(!zjh_table_in_hand(r.t));
    }
    ck_assert_int_gt(looks, blind);
    ck_assert_int_gt(blind, 0);
    rig_free(&r);
}
END_TEST

/* The action body travels in the envelope: bot_move_game() packs it, Action.game carries it. */
START_TEST(test_move_game_packs_the_action_into_the_envelope)
{
    bot_move_t mv;
    bot_move_init(&mv);
    Croupier__Zjh__ZjhAction a = CROUPIER__ZJH__ZJH_ACTION__INIT;
    a.move = CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE;
    a.has_target = true;
    a.target = 3;
    ck_assert_int_eq(bot_move_game(&mv, &a.base), 0);
    ck_assert_int_eq(mv.action.kind_case, CROUPIER__ACTION__KIND_GAME);
    ck_assert_ptr_eq(mv.action.game->body.data, mv.game_body);
    Croupier__Zjh__ZjhMove move;
    zjh_action_t act;
    int64_t arg;
    rig_decode(&mv, &move, &act, &arg);
    ck_assert_int_eq(act, ZJH_COMPARE);
    ck_assert_int_eq(arg, 3);
    /* a message the codec refuses (a required enum at its UNSPECIFIED zero) is not sent */
    Croupier__Zjh__ZjhAction bad = CROUPIER__ZJH__ZJH_ACTION__INIT;
    bot_move_init(&mv);
    ck_assert_int_lt(bot_move_game(&mv, &bad.base), 0);
    ck_assert_int_eq(mv.action.kind_case, CROUPIER__ACTION__KIND__NOT_SET);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bot_zjh");
    TCase *tc = tcase_create("envelope");
    tcase_add_test(tc, test_move_game_packs_the_action_into_the_envelope);
    suite_add_tcase(s, tc);
    tc = tcase_create("strategy");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bot_looks_or_plays_blind_at_its_first_turn);
    tcase_add_test(tc, test_every_move_of_the_bot_is_accepted_by_the_rules);
    tcase_add_test(tc, test_bot_resumes_from_a_snapshot_at_any_turn);
    tcase_add_test(tc, test_bot_plays_from_the_snapshot_alone);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
