/*
 * zjh_engine -- Zha Jin Hua on the table kit (engine/tk.h): the whole adapter between the kit
 * and the rules (zjh.h, docs/rules/zhajinhua.md). The kit holds seats, buy-ins, settlements,
 * timers, resume, drain and void; this file maps the rules' events to the protocol
 * (zhajinhua.proto inside the client protocol's game envelope) and the kit's calls to the rules.
 * docs/writing-a-game.md walks through it.
 *
 *   croupier-game --engine zhajinhua   game "zhajinhua"; the stake is the ante
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>
#include <jansson.h>

#include "tk.h"
#include "zhajinhua.pb-c.h"
#include "zjh.h"
#include "zjh_wire.h"

typedef Croupier__Zjh__ZjhEvent zjh_ev_t;

static long zjh_max_units = 10; /* --zhajinhua-max-unit: raise cap, in antes */
static long zjh_max_rounds = 10;

static const config_flag_t zjh_flags[] = {
    {"zhajinhua-max-unit", CONFIG_INT, "10", "raise cap, in antes (the stake)", &zjh_max_units, 1,
     1000},
    {"zhajinhua-max-rounds", CONFIG_INT, "10", "betting rounds before the forced showdown",
     &zjh_max_rounds, 2, 100},
    {0},
};

/* One table's game: the rules' table and the event being handled. */
typedef struct {
    tk_table_t *t;
    zjh_table_t *core;
    bool looking; /* a LOOK is being applied: a Turn it re-emits keeps the clock */
} zjh_game_t;

static Croupier__Zjh__ZjhAction zjh_move(Croupier__Zjh__ZjhMove move, int64_t unit, int target)
{
    Croupier__Zjh__ZjhAction a = CROUPIER__ZJH__ZJH_ACTION__INIT;
    a.move = move;
    a.has_unit = unit > 0;
    a.unit = unit;
    a.has_target = target >= 0;
    a.target = target >= 0 ? (uint32_t)target : 0;
    return a;
}

static void zjh_push_ev(zjh_game_t *z, int seat, zjh_ev_t *ev)
{
    tk_push_event(z->t, seat, &ev->base);
}

/* A compare's result: the two players see both hands, everyone else only who lost. */
static void zjh_on_compare(zjh_game_t *z, const zjh_event_t *e)
{
    Croupier__Zjh__ZjhCompared c = CROUPIER__ZJH__ZJH_COMPARED__INIT;
    zjh_ev_t ev = CROUPIER__ZJH__ZJH_EVENT__INIT;
    c.asker = (uint32_t)e->seat;
    c.target = (uint32_t)e->target;
    c.loser = (uint32_t)e->loser;
    c.has_all_in = e->all_in;
    c.all_in = e->all_in;
    ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_COMPARED;
    ev.compared = &c;
    for (int s = 0; s < tk_seats(z->t); s++) {
        bool party = s == e->seat || s == e->target;
        c.has_asker_cards = c.has_target_cards = party;
        c.asker_cards = (ProtobufCBinaryData){party ? 3 : 0, (uint8_t *)e->cards[0]};
        c.target_cards = (ProtobufCBinaryData){party ? 3 : 0, (uint8_t *)e->cards[1]};
        if (tk_seat_player(z->t, s) != 0)
            zjh_push_ev(z, s, &ev);
    }
    /* The spectators see what a seat outside the compare sees: who lost (docs/spectators.md). */
    c.has_asker_cards = c.has_target_cards = false;
    c.asker_cards.len = c.target_cards.len = 0;
    tk_push_event_watch(z->t, &ev.base);
    tk_history_action(z->t, e->seat, e->all_in ? "compare_all_in" : "compare", e->amount);
    /* The target in the record: the two players saw both hands, so each one's replay shows
     * (and opens) the other's (docs/hand-history.md, docs/replays.md). */
    json_t *acts = json_object_get(tk_history(z->t), "actions");
    json_t *last = json_array_get(acts, json_array_size(acts) - 1);
    if (json_is_object(last))
        json_object_set_new(last, "target", json_integer(e->target));
}

static void zjh_on_turn(zjh_game_t *z, const zjh_event_t *e)
{
    Croupier__Turn turn = CROUPIER__TURN__INIT;
    turn.has_to_call = true;
    turn.to_call = e->amount;
    turn.has_min_amount = e->to > 0;
    turn.min_amount = e->to;
    turn.has_max_amount = e->max > 0;
    turn.max_amount = e->max;
    if (z->looking)
        tk_turn_update(z->t, e->seat, &turn);
    else
        tk_turn(z->t, e->seat, &turn);
}

static void zjh_on_end(zjh_game_t *z)
{
    zjh_settlement_t st;
    int64_t delta[TK_MAX_SEATS] = {0};
    if (zjh_table_settlement(z->core, &st) != ZJH_OK)
        return;
    for (int s = 0; s < tk_seats(z->t) && s < ZJH_MAX_SEATS; s++)
        delta[s] = st.dealt[s] ? st.delta[s] : 0;
    tk_round_end(z->t, delta, st.rake);
}

/* The rules' events, in order: each becomes pushes, history and kit calls. */
static void zjh_on_event(void *ud, const zjh_event_t *e)
{
    zjh_game_t *z = ud;
    zjh_ev_t ev = CROUPIER__ZJH__ZJH_EVENT__INIT;
    Croupier__Zjh__ZjhAction a;
    switch (e->kind) {
    case ZJH_EV_ANTE:
        tk_history_action(z->t, e->seat, "ante", e->amount);
        break;
    case ZJH_EV_DEAL:
        for (int k = 0; k < ZJH_HAND_CARDS; k++)
            tk_history_card(z->t, e->seat, e->cards[0][k]);
        tk_push_deal(z->t, e->seat, NULL, ZJH_HAND_CARDS); /* face down, even to the seat */
        break;
    case ZJH_EV_LOOK: {
        Croupier__Zjh__ZjhLooked l = CROUPIER__ZJH__ZJH_LOOKED__INIT;
        Croupier__Zjh__ZjhCards c = CROUPIER__ZJH__ZJH_CARDS__INIT;
        l.seat = (uint32_t)e->seat;
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_LOOKED;
        ev.looked = &l;
        zjh_push_ev(z, -1, &ev);
        c.seat = (uint32_t)e->seat;
        c.cards = (ProtobufCBinaryData){ZJH_HAND_CARDS, (uint8_t *)e->cards[0]};
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_CARDS;
        ev.cards = &c;
        zjh_push_ev(z, e->seat, &ev);
        tk_history_action(z->t, e->seat, "look", 0);
        break;
    }
    case ZJH_EV_FOLD:
        a = zjh_move(CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
        tk_push_play(z->t, e->seat, &a.base, e->timed_out);
        tk_history_action(z->t, e->seat, e->timed_out ? "timeout_fold" : "fold", 0);
        break;
    case ZJH_EV_CALL:
        a = zjh_move(CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL, 0, -1);
        tk_push_play(z->t, e->seat, &a.base, false);
        tk_history_action(z->t, e->seat, e->all_in ? "call_all_in" : "call", e->amount);
        break;
    case ZJH_EV_RAISE:
        a = zjh_move(CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, e->unit, -1);
        tk_push_play(z->t, e->seat, &a.base, false);
        tk_history_action(z->t, e->seat, "raise", e->amount);
        break;
    case ZJH_EV_COMPARE:
        zjh_on_compare(z, e);
        break;
    case ZJH_EV_ALL_IN: {
        Croupier__Zjh__ZjhAllIn ai = CROUPIER__ZJH__ZJH_ALL_IN__INIT;
        ai.seat = (uint32_t)e->seat;
        ai.won = e->detail == 1;
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_ALL_IN;
        ev.all_in = &ai;
        zjh_push_ev(z, -1, &ev);
        break;
    }
    case ZJH_EV_ROUND: {
        Croupier__Zjh__ZjhRound r = CROUPIER__ZJH__ZJH_ROUND__INIT;
        r.betting_round = (uint32_t)e->detail;
        ev.kind_case = CROUPIER__ZJH__ZJH_EVENT__KIND_ROUND;
        ev.round = &r;
        zjh_push_ev(z, -1, &ev);
        break;
    }
    case ZJH_EV_TURN:
        zjh_on_turn(z, e);
        break;
    case ZJH_EV_SHOWDOWN:
        tk_round_show(z->t, e->seat, e->cards[0], ZJH_HAND_CARDS);
        break;
    case ZJH_EV_HAND_END:
        zjh_on_end(z);
        break;
    default: /* HAND_START, RAKE, AWARD: the kit's RoundEnd says it all */
        break;
    }
}

/* ---- the kit's calls --------------------------------------------------------------------- */

static void *zjh_table_new(tk_table_t *t, const char *game, int64_t stake)
{
    (void)game;
    const tk_settings_t *set = tk_settings(t);
    zjh_config_t cfg = {.seats = tk_seats(t),
                        .ante = stake,
                        .max_unit = stake * zjh_max_units,
                        .max_rounds = (int)zjh_max_rounds,
                        .rake_basis_points = (int)set->rake_bp,
                        .rake_cap = set->rake_cap,
                        .action_ms = set->action_ms};
    zjh_game_t *z = calloc(1, sizeof *z);
    if (z == NULL)
        return NULL;
    z->t = t;
    z->core = zjh_table_create(&cfg, zjh_on_event, z, NULL);
    if (z->core == NULL) {
        free(z);
        return NULL;
    }
    return z;
}

static void zjh_table_free(void *g)
{
    zjh_game_t *z = g;
    zjh_table_destroy(z->core);
    free(z);
}

/* The protocol's code of a table card: the same byte (ZJH_CARD is rank << 2 | suit, ranks 2..14,
 * as docs/protocol.md "Cards"). */
static uint8_t zjh_card_code(uint8_t card)
{
    return card;
}

/* Deals a hand to the kit's playing seats from a deck the kit shuffled (tk_deal_shuffle, the one
 * deck source: docs/fairness.md). */
static int zjh_round_start(tk_table_t *t, void *g)
{
    zjh_game_t *z = g;
    int64_t stacks[ZJH_MAX_SEATS] = {0};
    for (int s = 0; s < tk_seats(t); s++)
        stacks[s] = tk_seat_playing(t, s) ? tk_seat_stack(t, s) : 0;
    uint8_t deck[ZJH_DECK_CARDS];
    for (int i = 0; i < ZJH_DECK_CARDS; i++)
        deck[i] = ZJH_CARD(2 + i / 4, i % 4);
    /* Per card: a player checks his own hand, never another's (docs/fairness.md); the
     * table's card bytes are the protocol's codes already. */
    int rc = tk_deal_shuffle_per_card(t, deck, ZJH_DECK_CARDS, zjh_card_code);
    if (rc != 0)
        return rc; /* the generator failed: no card is dealt (the kit voids the round) */
    return zjh_table_start_hand(z->core, tk_button(t), stacks, deck, ZJH_DECK_CARDS) == ZJH_OK
               ? 0
               : -EINVAL;
}

static Croupier__ErrorCode zjh_code(int rc)
{
    switch (rc) {
    case ZJH_OK:
        return CROUPIER__ERROR_CODE__OK;
    case ZJH_E_OUT_OF_TURN:
        return CROUPIER__ERROR_CODE__NOT_YOUR_TURN;
    case ZJH_E_NO_HAND:
    case ZJH_E_NOT_LIVE:
        return CROUPIER__ERROR_CODE__NO_ROUND;
    case ZJH_E_RAISE_OVER_CAP:
        return CROUPIER__ERROR_CODE__BET_ABOVE_MAX;
    case ZJH_E_RAISE_NOT_HIGHER:
        return CROUPIER__ERROR_CODE__BET_BELOW_MIN;
    case ZJH_E_OVER_STACK:
        return CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS;
    case ZJH_E_COMPARE_TOO_EARLY:
    case ZJH_E_ALREADY_LOOKED:
        return CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    default:
        return CROUPIER__ERROR_CODE__ILLEGAL_MOVE;
    }
}

static Croupier__ErrorCode zjh_action(tk_table_t *t, void *g, int seat, const ProtobufCMessage *m,
                                      const char **why)
{
    (void)t;
    zjh_game_t *z = g;
    const Croupier__Zjh__ZjhAction *a = (const Croupier__Zjh__ZjhAction *)m;
    zjh_action_t act;
    int64_t arg;
    if (zjh_wire_action_input(a, &act, &arg) != 0) {
        *why = "unknown move";
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
    z->looking = a->move == CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK;
    int rc = zjh_table_act(z->core, seat, act, arg);
    z->looking = false;
    *why = rc == ZJH_OK ? NULL : zjh_err_name(rc);
    return zjh_code(rc);
}

static void zjh_timeout(tk_table_t *t, void *g, int seat)
{
    (void)t;
    zjh_game_t *z = g;
    zjh_table_act(z->core, seat, ZJH_TIMEOUT, 0);
}

/* The kit voids the hand: the rules' table forgets it by starting over (nothing settles). */
static void zjh_round_void(tk_table_t *t, void *g)
{
    zjh_game_t *z = g;
    zjh_config_t cfg = *zjh_table_config(z->core);
    (void)t;
    zjh_table_t *fresh = zjh_table_create(&cfg, zjh_on_event, z, NULL);
    if (fresh == NULL)
        return;
    zjh_table_destroy(z->core);
    z->core = fresh;
}

static void zjh_snapshot(tk_table_t *t, void *g, int seat)
{
    zjh_game_t *z = g;
    Croupier__Zjh__ZjhState st = CROUPIER__ZJH__ZJH_STATE__INIT;
    Croupier__Zjh__ZjhSeat seats[ZJH_MAX_SEATS], *ptrs[ZJH_MAX_SEATS];
    const zjh_config_t *cfg = zjh_table_config(z->core);
    uint8_t own[ZJH_HAND_CARDS];
    st.in_hand = zjh_table_in_hand(z->core) && seat >= 0 && tk_seat_playing(t, seat);
    st.has_ante = st.has_max_unit = st.has_max_rounds = true;
    st.ante = cfg->ante;
    st.max_unit = cfg->max_unit;
    st.max_rounds = (uint32_t)cfg->max_rounds;
    if (zjh_table_in_hand(z->core)) {
        st.has_betting_round = st.has_unit = st.has_pot = st.has_dealer_seat = true;
        st.betting_round = (uint32_t)zjh_table_round(z->core);
        st.unit = zjh_table_unit(z->core);
        st.pot = zjh_table_pot(z->core);
        st.dealer_seat = (uint32_t)zjh_table_dealer(z->core);
        zjh_turn_t turn;
        zjh_table_turn(z->core, &turn);
        st.has_to_call = st.has_can_compare = turn.seat >= 0;
        st.to_call = turn.cost;
        st.can_compare = turn.can_compare;
        for (int s = 0; s < cfg->seats; s++) {
            zjh_seat_t x;
            if (zjh_table_seat(z->core, s, &x) != ZJH_OK || !x.dealt)
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
            if (s == seat && x.looked && zjh_table_cards(z->core, s, own) == ZJH_OK) {
                st.has_own_cards = true;
                st.own_cards = (ProtobufCBinaryData){ZJH_HAND_CARDS, own};
            }
        }
        st.seats = ptrs;
    }
    tk_snapshot_state(t, &st.base);
}

static int64_t zjh_min_stack(tk_table_t *t, void *g)
{
    (void)g;
    return tk_stake(t); /* the ante */
}

static const tk_game_t zjh_game = {
    .watchable = true, /* docs/spectators.md */
    .engine = "zhajinhua",
    .games = "zhajinhua",
    .proto_engine = CROUPIER__ENGINE__ENGINE_GAME,
    .min_seats = 2,
    .max_seats = ZJH_MAX_SEATS,
    .min_players = 2,
    .defaults = {.seats = 5,
                 .action_ms = 15000,
                 .time_bank_ms = 20000,
                 .gap_ms = 3000,
                 .idle_ms = 60000,
                 .buyin = 200,
                 .min_buyin = 20,
                 .rake_bp = 0,
                 .rake_cap = 0},
    .extra_flags = zjh_flags,
    .action_desc = &croupier__zjh__zjh_action__descriptor,
    .action_rules = zjh_wire_action_rules,
    .table_create = zjh_table_new,
    .table_destroy = zjh_table_free,
    .round_start = zjh_round_start,
    .action = zjh_action,
    .timeout = zjh_timeout,
    .round_void = zjh_round_void,
    .snapshot = zjh_snapshot,
    .min_stack = zjh_min_stack,
};

TK_ENGINE(zhajinhua, &zjh_game, CROUPIER__ENGINE__ENGINE_GAME);
