/*
 * holdem_engine -- no-limit hold'em cash tables on the table kit (engine/tk.h): the whole adapter
 * between the kit and the pure table state machine (holdem_table.h, docs/rules/holdem.md). The
 * kit holds the lobby and its ads, seats, buy-ins into seat accounts, settlements, cash-outs,
 * turn timers with the time bank and trustee, resume, drain and void; this file maps the
 * table's events to the client protocol's hold'em members (Action.holdem, Snapshot.holdem) and
 * the kit's calls to the table. The contract is holdem_engine.h.
 *
 *   croupier-game --engine holdem   game "holdem"; the stake is the big blind (>= 2)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>

#include "holdem_engine.h"
#include "holdem_eval.h"
#include "holdem_table.h"
#include "log.h"
#include "tk.h"

/* --holdem-straddles: straddles a hand may have (the first is two big blinds, each re-straddle
 * twice the one before), offered to the seats in order before the deal; 0 = none. */
static long he_straddles = 0;

static const config_flag_t he_flags[] = {
    {"holdem-straddles", CONFIG_INT, "0",
     "straddles a hand may have: a straddle of 2 big blinds under the gun and re-straddles, each "
     "twice the one before, offered to the seats in order before the deal (0 = none)",
     &he_straddles, 0, HOLDEM_MAX_SEATS - 2},
    {0},
};

/* What the snapshot needs of the hand in progress, mirrored from the table's events. */
typedef struct {
    bool dealt, folded, all_in;
    int64_t bet; /* this street */
    uint8_t hole[2];
} he_seat_t;

/* One table's game: the rules' table, the hand's mirror and the snapshot's storage. */
typedef struct {
    tk_table_t *t;
    holdem_config_t cfg;
    holdem_table_t *core;
    bool in_round;   /* a hand the kit started and the game has not ended yet */
    bool new_turn;   /* the table asked a seat to act since the last Turn */
    bool timing_out; /* the move being applied is the kit's automatic one */
    bool offer_open; /* the seat to act was offered a straddle (a check declines it) */
    he_seat_t seat[HOLDEM_MAX_SEATS];
    int street; /* 1 preflop .. 4 river */
    uint8_t board[5];
    int nboard;
    /* Snapshot.holdem points here: the kit sends the Snapshot after snapshot() returns. */
    Croupier__HoldemState snap;
    Croupier__HoldemSeatState snap_seat[HOLDEM_MAX_SEATS];
    Croupier__HoldemSeatState *snap_ptr[HOLDEM_MAX_SEATS];
    uint8_t snap_hole[2], snap_board[5];
} he_game_t;

/* The table's cards are rank 0..12 << 2 | suit; the protocol's rank 2..14 << 2 | suit. */
static uint8_t he_card(uint8_t core_card)
{
    return (uint8_t)(core_card + 8);
}

static const char *he_action_name(int kind)
{
    static const char *const names[] = {"fold",  "check",  "call",   "bet",
                                        "raise", "all_in", "timeout"};
    return kind >= 0 && kind <= HOLDEM_TIMEOUT ? names[kind] : "unknown";
}

static const char *he_post_name(int kind)
{
    static const char *const names[] = {"ante", "bb_ante", "small_blind", "big_blind", "straddle"};
    return kind >= 0 && kind <= HOLDEM_POST_STRADDLE ? names[kind] : "post";
}

static Croupier__HoldemMove he_move_of(int kind)
{
    switch (kind) {
    case HOLDEM_FOLD:
        return CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD;
    case HOLDEM_CHECK:
        return CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK;
    case HOLDEM_CALL:
        return CROUPIER__HOLDEM_MOVE__HOLDEM_CALL;
    case HOLDEM_BET:
        return CROUPIER__HOLDEM_MOVE__HOLDEM_BET;
    default:
        return CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE;
    }
}

/* Play{seat, Action.holdem{move, amount}} to everyone; amount is the street total of a bet or
 * raise (blinds are pushed as bets). */
static void he_push_play(he_game_t *h, int seat, Croupier__HoldemMove move, int64_t amount)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play p = CROUPIER__PLAY__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__HoldemAction ha = CROUPIER__HOLDEM_ACTION__INIT;
    ha.move = move;
    ha.has_amount =
        move == CROUPIER__HOLDEM_MOVE__HOLDEM_BET || move == CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE;
    ha.amount = ha.has_amount ? amount : 0;
    a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
    a.holdem = &ha;
    p.seat = (uint32_t)seat;
    p.action = &a;
    p.has_timed_out = p.timed_out = h->timing_out;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &p;
    tk_push_all(h->t, &sm);
}

/*
 * The table's events, during a holdem_table_* call: the mirror is kept for snapshots, the hand
 * history is written and the events are pushed. Turns and the hand's end are handled after the
 * call returns (he_after), when the table's state is whole again.
 */
static void he_on_event(void *ud, const holdem_event_t *ev)
{
    he_game_t *h = ud;
    he_seat_t *s = ev->seat >= 0 && ev->seat < HOLDEM_MAX_SEATS ? &h->seat[ev->seat] : NULL;
    uint8_t cards[5];
    for (int i = 0; i < ev->ncards && i < 5; i++)
        cards[i] = he_card(ev->cards[i]);
    switch (ev->kind) {
    case HOLDEM_EV_POST:
        if (s == NULL)
            return;
        if (ev->detail != HOLDEM_POST_ANTE && ev->detail != HOLDEM_POST_BB_ANTE)
            s->bet += ev->amount;
        s->all_in = ev->all_in;
        if (ev->detail == HOLDEM_POST_STRADDLE)
            h->offer_open = false;
        tk_history_action(h->t, ev->seat, he_post_name(ev->detail), ev->amount);
        /* Blinds and straddles are pushed as the street's bets; antes (tournaments) are not
         * bets of the street: the hand history has them, the Snapshot's pot and stacks show
         * them. */
        if (ev->amount > 0 && ev->detail != HOLDEM_POST_ANTE && ev->detail != HOLDEM_POST_BB_ANTE)
            he_push_play(h, ev->seat, CROUPIER__HOLDEM_MOVE__HOLDEM_BET, s->bet);
        return;
    case HOLDEM_EV_HOLE:
        if (s == NULL || ev->ncards != 2)
            return;
        s->dealt = true;
        memcpy(s->hole, ev->cards, 2);
        tk_history_card(h->t, ev->seat, cards[0]);
        tk_history_card(h->t, ev->seat, cards[1]);
        tk_push_deal(h->t, ev->seat, cards, 2); /* the owner sees them, the others a count */
        return;
    case HOLDEM_EV_ACTION:
        if (s == NULL)
            return;
        s->folded = s->folded || ev->detail == HOLDEM_FOLD;
        s->bet = ev->to;
        s->all_in = ev->all_in;
        /* A declined straddle is pushed as the check it was sent as; the history says more. */
        tk_history_action(h->t, ev->seat,
                          h->offer_open ? "no_straddle" : he_action_name(ev->detail), ev->amount);
        h->offer_open = false;
        he_push_play(h, ev->seat, he_move_of(ev->detail), ev->to);
        return;
    case HOLDEM_EV_BOARD:
        for (int i = 0; i < HOLDEM_MAX_SEATS; i++)
            h->seat[i].bet = 0;
        h->street = ev->detail + 1;
        for (int i = 0; i < ev->ncards && h->nboard < 5; i++) {
            h->board[h->nboard++] = ev->cards[i];
            tk_history_card(h->t, -1, cards[i]);
        }
        tk_push_deal(h->t, -1, cards, (size_t)ev->ncards);
        return;
    case HOLDEM_EV_TO_ACT:
        h->new_turn = true;
        h->offer_open = ev->detail == 1;
        return;
    case HOLDEM_EV_SHOW:
        if (s != NULL && ev->ncards == 2)
            tk_round_show(h->t, ev->seat, cards, 2);
        return;
    default: /* HAND_START, RETURN, MUCK, RAKE, AWARD, HAND_END: RoundEnd says the rest */
        return;
    }
}

/* The hand is over: its settlement becomes the kit's round end. */
static void he_end_hand(he_game_t *h)
{
    holdem_settlement_t st;
    int64_t delta[TK_MAX_SEATS] = {0};
    h->in_round = false;
    if (holdem_table_settlement(h->core, &st) != HOLDEM_OK) {
        log_emit(LOG_ERROR, "holdem_no_settlement", "{s:s}", "round", tk_round_id(h->t));
        memset(&st, 0, sizeof st); /* every delta 0: the kit ends the round with no money moved */
    }
    for (int i = 0; i < h->cfg.seats && i < TK_MAX_SEATS; i++)
        delta[i] = st.dealt[i] ? st.delta[i] : 0;
    tk_round_end(h->t, delta, st.rake);
}

/* After every call into the table: the hand's end, or a Turn for a new seat to act (the same
 * turn going on keeps its clock). */
static void he_after(he_game_t *h)
{
    if (!h->in_round)
        return;
    if (!holdem_table_in_hand(h->core)) {
        he_end_hand(h);
        return;
    }
    if (!h->new_turn)
        return;
    h->new_turn = false;
    holdem_legal_t l;
    holdem_table_legal(h->core, &l);
    if (l.seat < 0)
        return;
    Croupier__Turn tu = CROUPIER__TURN__INIT;
    tu.has_to_call = true;
    tu.to_call = l.to_call;
    tu.has_min_amount = l.can_bet || l.can_raise;
    tu.min_amount = tu.has_min_amount ? l.min_to : 0;
    tu.has_max_amount = true;
    tu.max_amount = l.max_to;
    tk_turn(h->t, l.seat, &tu);
}

/* ---- the kit's calls --------------------------------------------------------------------- */

/* A table at a stake (the big blind; the small blind is half of it, rounded down). The kit
 * keeps the time bank, so the table's own is off and every move reaches it with no time used. */
static void *he_table_new(tk_table_t *t, const char *game, int64_t stake)
{
    (void)game;
    const tk_settings_t *set = tk_settings(t);
    he_game_t *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->t = t;
    h->cfg = (holdem_config_t){.seats = tk_seats(t),
                               .small_blind = stake / 2,
                               .big_blind = stake,
                               .rake_basis_points = (int)set->rake_bp,
                               .rake_cap = set->rake_cap,
                               .action_ms = set->action_ms};
    /* A tournament table (docs/tournaments.md "Tables at the servers"): no rake (the house's
     * fee was taken at the registration), no straddles, the blinds of each hand the
     * director's. */
    bool tour = tk_tour_table(t);
    if (tour) {
        h->cfg.rake_basis_points = 0;
        h->cfg.rake_cap = 0;
    }
    if (he_straddles > 0 && !tour) {
        h->cfg.straddle = 2 * stake;
        h->cfg.max_straddles = (int)he_straddles;
        h->cfg.straddle_offers = true;
    }
    h->core = holdem_table_create(&h->cfg, he_on_event, h, NULL);
    if (h->core == NULL) {
        free(h);
        return NULL;
    }
    return h;
}

static void he_table_free(void *g)
{
    he_game_t *h = g;
    holdem_table_destroy(h->core);
    free(h);
}

/* The kit seated a player (their buy-in is the stack) or emptied the seat (cashed out). */
static void he_seat_changed(tk_table_t *t, void *g, int seat, bool seated)
{
    he_game_t *h = g;
    int rc = seated ? holdem_table_sit(h->core, seat, tk_seat_stack(t, seat))
                    : holdem_table_leave(h->core, seat, NULL);
    if (rc != HOLDEM_OK)
        log_emit(LOG_ERROR, "holdem_seat_refused", "{s:i,s:b,s:s}", "seat", seat, "seated", seated,
                 "error", holdem_err_name(rc));
}

/*
 * Deals a hand to the kit's playing seats (the others sit out) from a deck shuffled by the kit
 * (tk_deal_shuffle: the one deck source, docs/fairness.md), the button at the kit's
 * (tk_button(): the next seat dealt in, which is the table's own rule too; it moves with a
 * whole table).
 */
/*
 * A tournament table's seats are the director's (docs/tournaments.md "Tables at the servers"):
 * before a hand the rules' table is brought to the kit's seats and stacks, so a seat the rules
 * refused or missed (logged holdem_seat_refused) can never make every deal of the table
 * malformed.
 */
static void he_tour_resync(tk_table_t *t, he_game_t *h)
{
    for (int i = 0; i < h->cfg.seats; i++) {
        int64_t want = tk_seat_player(t, i) != 0 ? tk_seat_stack(t, i) : 0;
        int64_t have = holdem_table_stack(h->core, i);
        if (have == want || (want <= 0 && have <= 0))
            continue; /* the same stack; or no chips either side (a seat with none is dealt out) */
        if (have >= 0)
            holdem_table_leave(h->core, i, NULL);
        if (want > 0)
            holdem_table_sit(h->core, i, want);
        log_emit(LOG_WARN, "holdem_tour_seat_resynced", "{s:i,s:I,s:I}", "seat", i, "had",
                 (json_int_t)have, "stack", (json_int_t)want);
    }
}

static int he_round_start(tk_table_t *t, void *g)
{
    he_game_t *h = g;
    if (tk_tour_table(t))
        he_tour_resync(t, h);
    for (int i = 0; i < h->cfg.seats; i++) {
        h->seat[i] = (he_seat_t){0};
        if (holdem_table_stack(h->core, i) < 0)
            continue;
        if (tk_seat_playing(t, i))
            holdem_table_sit_in(h->core, i);
        else
            holdem_table_sit_out(h->core, i);
    }
    h->street = 1;
    h->nboard = 0;
    h->new_turn = false;
    h->offer_open = false;
    uint8_t deck[HOLDEM_CARDS];
    for (int i = 0; i < HOLDEM_CARDS; i++)
        deck[i] = (uint8_t)i;
    /* Per card: a player checks the cards he saw, never a folded hand (docs/fairness.md). */
    int src = tk_deal_shuffle_per_card(t, deck, HOLDEM_CARDS, he_card);
    if (src != 0)
        return src; /* the generator failed: no card is dealt (the kit voids the round) */
    int rc;
    tk_tour_hand_t th;
    holdem_positions_t pos = {.button = -1, .small_blind = -1, .big_blind = -1};
    if (tk_tour_hand(t, &th) == 0) {
        /* A tournament hand: the director's blinds (TDA 23) and positions (big blind forward,
         * dead button, dead small blind; docs/rules/holdem.md "Tournament hands"). */
        pos = (holdem_positions_t){.button = th.button,
                                   .small_blind = th.small_blind_seat,
                                   .big_blind = th.big_blind_seat};
        for (int i = 0; i < h->cfg.seats; i++)
            if (tk_seat_playing(t, i))
                pos.dealt_mask |= 1u << i;
        rc = holdem_table_set_blinds(h->core, th.small_blind, th.big_blind,
                                     th.big_blind_ante ? 0 : th.ante,
                                     th.big_blind_ante ? th.ante : 0);
        if (rc == HOLDEM_OK)
            rc = holdem_table_start_hand_at(h->core, &pos, deck, HOLDEM_CARDS);
    } else {
        /* The kit's button (it moved it to the next seat dealt in): the same seat the table's
         * own rule picks, and after a whole-table move the button the table had on its old
         * server. */
        rc = holdem_table_start_hand(h->core, tk_button(t), deck, HOLDEM_CARDS);
        if (rc == HOLDEM_E_MALFORMED && tk_button(t) >= 0)
            rc = holdem_table_start_hand(h->core, -1, deck, HOLDEM_CARDS);
    }
    if (rc != HOLDEM_OK) {
        /* The positions and the seats dealt in (a tournament hand's are the director's). */
        json_t *stacks = json_array();
        for (int i = 0; i < h->cfg.seats; i++)
            json_array_append_new(stacks, json_integer(holdem_table_stack(h->core, i)));
        log_emit(LOG_ERROR, "holdem_start_hand_refused", "{s:s,s:i,s:i,s:i,s:I,s:o}", "error",
                 holdem_err_name(rc), "button", pos.button, "sb", pos.small_blind, "bb",
                 pos.big_blind, "dealt", (json_int_t)pos.dealt_mask, "stacks", stacks);
        return -EINVAL;
    }
    h->in_round = true;
    he_after(h); /* the first Turn, or the end at once (everyone all-in on the blinds) */
    return 0;
}

static Croupier__ErrorCode he_err_code(int rc)
{
    switch (rc) {
    case HOLDEM_E_OUT_OF_TURN:
        return CROUPIER__ERROR_CODE__NOT_YOUR_TURN;
    case HOLDEM_E_BELOW_MIN:
        return CROUPIER__ERROR_CODE__BET_BELOW_MIN;
    case HOLDEM_E_OVER_STACK:
        return CROUPIER__ERROR_CODE__BET_ABOVE_MAX;
    case HOLDEM_E_NOT_ALLOWED:
        return CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    default:
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
}

/* A player's move: the client protocol's Action.holdem (action_desc is NULL). */
static Croupier__ErrorCode he_action(tk_table_t *t, void *g, int seat, const ProtobufCMessage *m,
                                     const char **why)
{
    (void)t;
    he_game_t *h = g;
    const Croupier__Action *a = (const Croupier__Action *)m;
    if (a->kind_case != CROUPIER__ACTION__KIND_HOLDEM || a->holdem == NULL) {
        *why = "this is a hold'em table";
        return CROUPIER__ERROR_CODE__WRONG_ENGINE;
    }
    if (!h->in_round) {
        *why = "no hand in progress";
        return CROUPIER__ERROR_CODE__NO_ROUND;
    }
    const Croupier__HoldemAction *ha = a->holdem;
    holdem_action_kind_t kind;
    switch (ha->move) {
    case CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD:
        kind = HOLDEM_FOLD;
        break;
    case CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK:
        kind = HOLDEM_CHECK;
        break;
    case CROUPIER__HOLDEM_MOVE__HOLDEM_CALL:
        kind = HOLDEM_CALL;
        break;
    case CROUPIER__HOLDEM_MOVE__HOLDEM_BET:
    case CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE:
        if (!ha->has_amount || ha->amount <= 0) {
            *why = "bet/raise needs amount > 0";
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
        kind = ha->move == CROUPIER__HOLDEM_MOVE__HOLDEM_BET ? HOLDEM_BET : HOLDEM_RAISE;
        break;
    default:
        *why = "unknown hold'em move";
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
    int64_t amount = kind == HOLDEM_BET || kind == HOLDEM_RAISE ? ha->amount : 0;
    int rc = holdem_table_act(h->core, seat, kind, amount, 0);
    if (rc != HOLDEM_OK) {
        *why = holdem_err_name(rc);
        return he_err_code(rc);
    }
    he_after(h);
    return CROUPIER__ERROR_CODE__OK;
}

/* The seat's time ran out (or it is on trustee): HOLDEM_TIMEOUT, a check if possible, else a
 * fold. A seat the table does not expect gets the turn of the seat it does. */
static void he_timeout(tk_table_t *t, void *g, int seat)
{
    (void)t;
    he_game_t *h = g;
    if (!h->in_round)
        return;
    h->timing_out = true;
    int rc = holdem_table_act(h->core, seat, HOLDEM_TIMEOUT, 0, 0);
    h->timing_out = false;
    if (rc != HOLDEM_OK) {
        log_emit(LOG_ERROR, "holdem_timeout_refused", "{s:i,s:s}", "seat", seat, "error",
                 holdem_err_name(rc));
        h->new_turn = true;
    }
    he_after(h);
}

/* The kit voids the hand: the table forgets it by starting over with the stacks of the hand's
 * start, which the seat accounts still hold (nothing of the hand settled). */
static void he_round_void(tk_table_t *t, void *g)
{
    he_game_t *h = g;
    h->in_round = false;
    holdem_table_t *fresh = holdem_table_create(&h->cfg, he_on_event, h, NULL);
    if (fresh == NULL)
        return;
    for (int i = 0; i < h->cfg.seats; i++)
        if (tk_seat_player(t, i) != 0 && tk_seat_stack(t, i) > 0)
            holdem_table_sit(fresh, i, tk_seat_stack(t, i));
    holdem_table_destroy(h->core);
    h->core = fresh;
}

/*
 * seat's view for a Snapshot, during a hand: a HoldemState with this seat's own hole cards only,
 * the board, the pot, the button, what the seat to act must call and its minimum raise-to, and
 * every dealt seat's stack, street bet, folded and all-in flags. Between hands: none.
 */
static void he_snapshot(tk_table_t *t, void *g, int seat)
{
    he_game_t *h = g;
    if (!h->in_round || !holdem_table_in_hand(h->core))
        return;
    Croupier__HoldemState *hs = &h->snap;
    *hs = (Croupier__HoldemState)CROUPIER__HOLDEM_STATE__INIT;
    hs->street = (Croupier__HoldemStreet)h->street;
    holdem_legal_t l;
    holdem_table_legal(h->core, &l);
    if (l.seat >= 0) {
        hs->has_to_call = true;
        hs->to_call = l.to_call;
        hs->has_min_raise = l.can_bet || l.can_raise;
        hs->min_raise = hs->has_min_raise ? l.min_to : 0;
    }
    const he_seat_t *me = seat >= 0 ? &h->seat[seat] : NULL; /* -1: a spectator */
    if (me != NULL && me->dealt) {
        h->snap_hole[0] = he_card(me->hole[0]);
        h->snap_hole[1] = he_card(me->hole[1]);
        hs->has_hole_cards = true;
        hs->hole_cards = (ProtobufCBinaryData){2, h->snap_hole};
    }
    for (int i = 0; i < h->nboard; i++)
        h->snap_board[i] = he_card(h->board[i]);
    hs->has_board = true;
    hs->board = (ProtobufCBinaryData){(size_t)h->nboard, h->snap_board};
    hs->has_pot = true;
    hs->pot = holdem_table_pot_total(h->core);
    int button = holdem_table_button(h->core);
    hs->has_button_seat = button >= 0;
    hs->button_seat = button >= 0 ? (uint32_t)button : 0;
    for (int i = 0; i < h->cfg.seats; i++) {
        if (!h->seat[i].dealt)
            continue;
        Croupier__HoldemSeatState *x = &h->snap_seat[hs->n_players];
        *x = (Croupier__HoldemSeatState)CROUPIER__HOLDEM_SEAT_STATE__INIT;
        x->seat = (uint32_t)i;
        x->has_stack = x->has_bet = x->has_folded = x->has_all_in = true;
        x->stack = holdem_table_stack(h->core, i);
        x->bet = h->seat[i].bet;
        x->folded = h->seat[i].folded;
        x->all_in = h->seat[i].all_in;
        h->snap_ptr[hs->n_players++] = x;
    }
    hs->players = h->snap_ptr;
    Croupier__Snapshot *s = tk_snapshot_msg(t);
    s->state_case = CROUPIER__SNAPSHOT__STATE_HOLDEM;
    s->holdem = hs;
}

static const tk_game_t holdem_game = {
    .watchable = true, /* docs/spectators.md */
    .engine = "holdem",
    .games = "holdem",
    .proto_engine = CROUPIER__ENGINE__ENGINE_HOLDEM,
    .min_seats = 2,
    .max_seats = HOLDEM_MAX_SEATS,
    .min_players = 2,
    .min_stake = 2, /* the small blind is half the stake */
    .tournaments = true,
    .defaults = {.seats = 6,
                 .action_ms = 15000,
                 .time_bank_ms = 30000,
                 .gap_ms = 2000,
                 .idle_ms = 60000,
                 .buyin = 100,
                 .min_buyin = 20,
                 .rake_bp = 0,
                 .rake_cap = 0,
                 .tour_tables = 50,
                 .tour_host_ttl_ms = 3000},
    .extra_flags = he_flags,
    .action_desc = NULL, /* Action.holdem, the client protocol's own member */
    .table_create = he_table_new,
    .table_destroy = he_table_free,
    .round_start = he_round_start,
    .action = he_action,
    .timeout = he_timeout,
    .round_void = he_round_void,
    .snapshot = he_snapshot,
    .seat_changed = he_seat_changed,
    .min_stack = NULL, /* 1 chip: a stack of 0 busts */
};

TK_ENGINE(holdem, &holdem_game, CROUPIER__ENGINE__ENGINE_HOLDEM);
