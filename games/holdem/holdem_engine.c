/*
 * holdem_engine -- no-limit hold'em cash tables as croupier-game desks. The contract (money
 * design, ads, drain, timers, refusals) is in holdem_engine.h; the rules are the table state
 * machine's (holdem_table.h, docs/rules/holdem.md).
 *
 * Threads. The lobby and the tables are desks (worker threads). The engine's Redis connection
 * (ads, wallet balance look-ups for joins) lives on the main loop; the lobby desk hands each
 * table's state to the lobby publisher (lease/lobby.h), which writes the ads there. Money
 * results arrive on the writer thread and are posted back to the table desk.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>
#include <event2/event.h>

#include "clock.h"
#include "gs.h"
#include "holdem_engine.h"
#include "holdem_eval.h"
#include "holdem_table.h"
#include "log.h"
#include "money.h"
#include "money_writer.h"
#include "lobby.h"
#include "rconn.h"
#include "xmalloc.h"

#define HE_GAME "holdem"
#define HE_MAX_TABLES 4096
#define HE_MAX_STAKE (MONEY_MAX_AMOUNT / 1000000)
#define HE_ACCT_MAX 64

enum {
    HE_MSG_JOIN = GS_MSG_ENGINE, /* main -> lobby -> table: ptr = he_join_t */
    HE_MSG_SEAT_FREED,           /* table -> lobby: arg = table desk, arg2 = seats freed */
    HE_MSG_TABLE_CLOSED,         /* table -> lobby: arg = table desk */
    HE_MSG_BUYIN_DONE,           /* writer -> table: arg = seat, arg2 = op number, ptr = result */
    HE_MSG_CASHOUT_DONE,         /* writer -> table: a closing cash-out completed */
};

enum { HE_TIMER_GAP = 1, HE_TIMER_TURN = 2, HE_TIMER_CLOSE_NOTICE = 3 };

typedef enum { SEAT_EMPTY = 0, SEAT_BUYING, SEAT_SITTING, SEAT_CLOSED } he_seat_state_t;

typedef struct {
    rt_desk_id_t desk;
    int64_t stake;
    int free;
    bool closed;
} he_ad_t;

typedef struct {
    gs_t *gs;
    rt_desk_id_t lobby;
    int seats;
    int64_t action_ms, time_bank_ms, gap_ms, ad_ms;
    int64_t buyin_bb, min_buyin_bb, rake_cap;
    int rake_bp;
    /* main thread */
    rconn_t *rc;
    char server_id[MONEY_NAME_MAX + 1];
    bool destroying;
    /* the lobby's ads (lease/lobby.h): set from the lobby desk, written on the main loop */
    lobby_pub_t *pub;
    /* the lobby desk's table list (the lock: tests and the lobby desk) */
    pthread_mutex_t mu;
    he_ad_t *ads;
    int nads;
} he_engine_t;

/* A join on its way from the main loop to a table, with the buy-in chosen. */
typedef struct {
    gs_t *gs;
    gs_request_t *req;
    int64_t amount;
} he_join_t;

typedef struct {
    uint64_t player;
    he_seat_state_t state;
    bool leaving;
    uint64_t ops; /* money operations of this seat so far (op ids) */
    int64_t buyin;
    gs_request_t *join_req; /* SEAT_BUYING: answered when the buy-in result comes back */
    /* mirror of the current hand, from the table's events */
    bool dealt, folded, all_in;
    int64_t bet, start_stack;
    uint8_t hole[2];
    bool shown;
    uint8_t show[2];
} he_seat_t;

typedef struct {
    he_engine_t *eng;
    rt_desk_t *desk; /* the desk of the callback running now */
    rt_desk_id_t lobby;
    int64_t stake;
    holdem_table_t *core;
    he_seat_t seat[HOLDEM_MAX_SEATS];
    char acct[HOLDEM_MAX_SEATS][HE_ACCT_MAX];
    uint32_t slot;      /* the server's slot and epoch when the table was made: they name its */
    uint64_t epoch;     /* seat accounts and buy-in/cash-out ops for the table's whole life */
    uint64_t hand;      /* hands begun; the round id's seq */
    uint64_t event_seq; /* events pushed */
    bool gap_armed, closed;
    /* the turn */
    int turn_seat;
    uint64_t turn_serial;
    rt_timer_id_t turn_timer;
    bool turn_armed;
    int64_t turn_start_ms, turn_allowed_ms;
    bool timing_out; /* the action being applied is a timeout */
    bool new_turn;   /* the table asked a seat to act since the turn timer was last armed */
    int street;      /* 1 preflop .. 4 river */
    uint8_t board[5];
    int nboard;
    json_t *history; /* the hand's history, built from the events */
    /* closing: players are told once their cash-outs are applied (or after a bound) */
    int pending_cashouts;
    bool close_told;
} he_table_t;

static int64_t he_env_i64(const char *name, int64_t def, int64_t lo, int64_t hi)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return def;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (*end != '\0' || x < lo || x > hi) {
        log_emit(LOG_WARN, "holdem_bad_env", "{s:s,s:s,s:I}", "name", name, "value", v, "using",
                 (json_int_t)def);
        return def;
    }
    return x;
}

int holdem_engine_seat_account(uint32_t slot, uint64_t epoch, uint64_t desk, int seat, char *buf,
                               size_t len)
{
    int n =
        snprintf(buf, len, "hs.%" PRIu32 ".%" PRIu64 ".%" PRIu64 ".%d", slot, epoch, desk, seat);
    return n < 0 || (size_t)n >= len || n > MONEY_NAME_MAX ? -ENOSPC : 0;
}

static uint8_t he_card(uint8_t core_card)
{
    return (uint8_t)(core_card + 8); /* rank 0..12 -> 2..14, same suit order: rank << 2 | suit */
}

/* ---- money ------------------------------------------------------------------------------- */

typedef struct {
    gs_t *gs;
    rt_t *rt;
    rt_desk_id_t desk;
    int seat;
    uint64_t n;
} he_op_t;

/* Writer thread: logs a failed money item that needs no answer at the desk. */
static void he_money_log_cb(money_result_t *res, void *arg)
{
    (void)arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "holdem_money_failed", "{s:i,s:s,s:i,s:s}", "kind", res->kind, "id",
                 res->id, "status", res->status, "error", res->error);
    free(res);
}

/* Writer thread: a buy-in result goes back to its table desk (the result is the payload). */
static void he_buyin_cb(money_result_t *res, void *arg)
{
    he_op_t *op = arg;
    /* A money follow-up (gs.h): a table that closed meanwhile sends the chips back. */
    res->arg = op->gs;
    rt_msg_t m = {.type = HE_MSG_BUYIN_DONE,
                  .arg = (uint64_t)op->seat,
                  .arg2 = op->n,
                  .ptr = res,
                  .free_fn = gs_money_result_free};
    rt_post(op->rt, op->desk, &m);
    free(op);
}

static void he_op_id(he_table_t *t, int seat, uint64_t n, const char *tag, char *buf, size_t len)
{
    /* The service keeps op ids apart across services (each has its own slot pool). */
    const char *svc = gs_service(gs_of_desk(t->desk));
    snprintf(buf, len, "he:%s:%" PRIu32 ":%" PRIu64 ":%" PRIu64 ":%d:%" PRIu64 ":%s",
             svc != NULL ? svc : "", t->slot, t->epoch, rt_desk_id(t->desk), seat, n, tag);
}

static void he_player_name(uint64_t player, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu64, player);
}

/*
 * Moves a seat's stack back to its player: the seat account is debited and the player's wallet
 * credited, in that order in the writer's FIFO. Nothing is queued for an empty stack.
 */
/* One cash-out in flight: the seat account's debit, then (only once it is applied) the
 * player's credit, so a seat account that does not hold the chips never creates any. */
typedef struct {
    rt_t *rt;
    rt_desk_id_t desk;
    money_writer_t *w;
    bool notify; /* post HE_MSG_CASHOUT_DONE to the desk when done (the table is closing) */
    int64_t amount;
    char player[24];
    char op[MONEY_ID_MAX + 1];
} he_cash_t;

static void he_cash_finish(he_cash_t *c)
{
    if (c->notify) {
        rt_msg_t m = {.type = HE_MSG_CASHOUT_DONE};
        rt_post(c->rt, c->desk, &m);
    }
    free(c);
}

/* Writer thread: the player's credit is applied (or failed: logged; the chips stay recorded in
 * the idempotency record and the seat account's debit, for an operator to replay). */
static void he_cash_credit_cb(money_result_t *res, void *arg)
{
    he_cash_t *c = arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "holdem_cash_out_failed", "{s:s,s:s,s:I,s:i,s:s}", "player", c->player,
                 "op", res->id, "amount", (json_int_t)c->amount, "status", res->status, "error",
                 res->error);
    free(res);
    he_cash_finish(c);
}

/* Writer thread: the seat account's debit answered; the credit follows only if it applied. */
static void he_cash_debit_cb(money_result_t *res, void *arg)
{
    he_cash_t *c = arg;
    int rc = res->status;
    if (rc == MONEY_OK)
        rc = money_writer_submit_cashout(c->w, c->player, c->amount, c->op, he_cash_credit_cb, c);
    if (rc != MONEY_OK) {
        log_emit(LOG_ERROR, "holdem_cash_out_failed", "{s:s,s:s,s:I,s:i,s:s}", "player", c->player,
                 "op", res->id, "amount", (json_int_t)c->amount, "status", rc, "error", res->error);
        he_cash_finish(c);
    }
    free(res);
}

/*
 * Moves a seat's stack back to its player: the seat account is debited and, once that applied,
 * the player's wallet credited. Nothing is queued for an empty stack. When the table is closing
 * the desk is told when the credit is done (pending_cashouts).
 */
static void he_cash_out(he_table_t *t, int seat, int64_t amount)
{
    he_seat_t *s = &t->seat[seat];
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    if (amount <= 0 || w == NULL)
        return;
    he_cash_t *c = xcalloc(1, sizeof *c);
    *c = (he_cash_t){.rt = rt_desk_rt(t->desk),
                     .desk = rt_desk_id(t->desk),
                     .w = w,
                     .notify = t->closed,
                     .amount = amount};
    char op[MONEY_ID_MAX + 1], player[24];
    uint64_t n = ++s->ops;
    he_player_name(s->player, player, sizeof player);
    memcpy(c->player, player, sizeof player);
    he_op_id(t, seat, n, "td", op, sizeof op);
    he_op_id(t, seat, n, "co", c->op, sizeof c->op);
    bool notify = c->notify;
    /* After a successful submit c belongs to the writer thread. */
    int rc = money_writer_submit_buyin(w, t->acct[seat], amount, op, he_cash_debit_cb, c);
    if (rc != 0)
        free(c);
    else if (notify)
        t->pending_cashouts++;
    log_emit(rc == 0 ? LOG_INFO : LOG_ERROR, "holdem_cash_out", "{s:s,s:s,s:I,s:i}", "player",
             player, "account", t->acct[seat], "amount", (json_int_t)amount, "errno", -rc);
}

/* ---- pushes ------------------------------------------------------------------------------ */

static bool he_seat_told(const he_seat_t *s)
{
    return s->state == SEAT_SITTING || s->state == SEAT_CLOSED;
}

static void he_push_all(he_table_t *t, Croupier__ServerMessage *m)
{
    m->has_event_seq = true;
    m->event_seq = ++t->event_seq;
    for (int i = 0; i < t->eng->seats; i++)
        if (he_seat_told(&t->seat[i]))
            gs_push(gs_of_desk(t->desk), t->seat[i].player, m);
}

static void he_push_play(he_table_t *t, int seat, Croupier__HoldemMove move, int64_t amount)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play p = CROUPIER__PLAY__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__HoldemAction ha = CROUPIER__HOLDEM_ACTION__INIT;
    ha.move = move;
    if (move == CROUPIER__HOLDEM_MOVE__HOLDEM_BET || move == CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE) {
        ha.has_amount = true;
        ha.amount = amount;
    }
    a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
    a.holdem = &ha;
    p.seat = (uint32_t)seat;
    p.action = &a;
    if (t->timing_out) {
        p.has_timed_out = true;
        p.timed_out = true;
    }
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &p;
    he_push_all(t, &sm);
}

/* Hole cards: the owner sees them, everyone else sees two cards dealt face down. */
static void he_push_hole(he_table_t *t, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Deal d = CROUPIER__DEAL__INIT;
    uint8_t cards[2] = {he_card(t->seat[seat].hole[0]), he_card(t->seat[seat].hole[1])};
    d.has_seat = true;
    d.seat = (uint32_t)seat;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
    sm.deal = &d;
    sm.has_event_seq = true;
    sm.event_seq = ++t->event_seq;
    for (int i = 0; i < t->eng->seats; i++) {
        if (!he_seat_told(&t->seat[i]))
            continue;
        if (i == seat) {
            d.has_cards = true;
            d.cards.data = cards;
            d.cards.len = 2;
            d.has_count = false;
        } else {
            d.has_cards = false;
            d.has_count = true;
            d.count = 2;
        }
        gs_push(gs_of_desk(t->desk), t->seat[i].player, &sm);
    }
}

static void he_push_board(he_table_t *t, const holdem_event_t *ev)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Deal d = CROUPIER__DEAL__INIT;
    uint8_t cards[5];
    for (int i = 0; i < ev->ncards && i < 5; i++)
        cards[i] = he_card(ev->cards[i]);
    d.has_cards = true;
    d.cards.data = cards;
    d.cards.len = (size_t)ev->ncards;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
    sm.deal = &d;
    he_push_all(t, &sm);
}

static void he_push_turn(he_table_t *t)
{
    holdem_legal_t l;
    holdem_table_legal(t->core, &l);
    if (l.seat < 0)
        return;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Turn tu = CROUPIER__TURN__INIT;
    tu.seat = (uint32_t)l.seat;
    tu.time_left_ms = (uint32_t)t->turn_allowed_ms;
    tu.has_to_call = true;
    tu.to_call = l.to_call;
    if (l.can_bet || l.can_raise) {
        tu.has_min_amount = true;
        tu.min_amount = l.min_to;
    }
    tu.has_max_amount = true;
    tu.max_amount = l.max_to;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
    sm.turn = &tu;
    he_push_all(t, &sm);
}

/* ---- the table's event mirror ------------------------------------------------------------ */

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

static void he_history_card(he_table_t *t, int seat, uint8_t card)
{
    char name[4];
    if (t->history != NULL)
        money_history_add_card(t->history, seat, holdem_card_format(card, name));
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

/*
 * The table state machine's events, on the desk thread during a holdem_table_* call: the
 * mirror (street bets, folds, hole cards, board) is kept for snapshots and the events are pushed
 * to the seated players. The end of the hand is handled after the call returns (he_after_core).
 */
static void he_on_event(void *ud, const holdem_event_t *ev)
{
    he_table_t *t = ud;
    he_seat_t *s = ev->seat >= 0 && ev->seat < HOLDEM_MAX_SEATS ? &t->seat[ev->seat] : NULL;
    switch (ev->kind) {
    case HOLDEM_EV_POST:
        if (s == NULL)
            return;
        if (ev->detail != HOLDEM_POST_ANTE && ev->detail != HOLDEM_POST_BB_ANTE)
            s->bet += ev->amount;
        if (t->history != NULL)
            money_history_add_action(t->history, ev->seat, he_post_name(ev->detail), ev->amount);
        s->all_in = ev->all_in;
        if (ev->amount > 0)
            he_push_play(t, ev->seat, CROUPIER__HOLDEM_MOVE__HOLDEM_BET, s->bet);
        return;
    case HOLDEM_EV_HOLE:
        if (s == NULL || ev->ncards != 2)
            return;
        s->dealt = true;
        s->hole[0] = ev->cards[0];
        s->hole[1] = ev->cards[1];
        if (t->history != NULL) {
            char name[24];
            he_player_name(s->player, name, sizeof name);
            money_history_add_seat(t->history, ev->seat, name, false, s->start_stack);
        }
        he_history_card(t, ev->seat, ev->cards[0]);
        he_history_card(t, ev->seat, ev->cards[1]);
        he_push_hole(t, ev->seat);
        return;
    case HOLDEM_EV_ACTION:
        if (s == NULL)
            return;
        if (ev->detail == HOLDEM_FOLD)
            s->folded = true;
        s->bet = ev->to;
        s->all_in = ev->all_in;
        if (t->history != NULL)
            money_history_add_action(t->history, ev->seat, he_action_name(ev->detail), ev->amount);
        he_push_play(t, ev->seat, he_move_of(ev->detail), ev->to);
        return;
    case HOLDEM_EV_BOARD:
        for (int i = 0; i < t->eng->seats; i++)
            t->seat[i].bet = 0;
        t->street = ev->detail + 1;
        for (int i = 0; i < ev->ncards && t->nboard < 5; i++) {
            t->board[t->nboard++] = ev->cards[i];
            he_history_card(t, -1, ev->cards[i]);
        }
        he_push_board(t, ev);
        return;
    case HOLDEM_EV_TO_ACT:
        t->new_turn = true;
        return;
    case HOLDEM_EV_SHOW:
        if (s == NULL || ev->ncards != 2)
            return;
        s->shown = true;
        s->show[0] = ev->cards[0];
        s->show[1] = ev->cards[1];
        return;
    default:
        return;
    }
}

/* ---- table ------------------------------------------------------------------------------- */

static void he_table_sync_humans(he_table_t *t)
{
    int h = 0;
    for (int i = 0; i < t->eng->seats; i++)
        h += t->seat[i].state != SEAT_EMPTY;
    rt_desk_set_humans(t->desk, (unsigned)h);
}

/* Players who can be dealt into the next hand. */
static int he_table_ready(const he_table_t *t)
{
    int n = 0;
    for (int i = 0; i < t->eng->seats; i++)
        if (t->seat[i].state == SEAT_SITTING && !t->seat[i].leaving &&
            holdem_table_stack(t->core, i) > 0)
            n++;
    return n;
}

static void he_table_maybe_schedule(he_table_t *t)
{
    if (t->gap_armed || t->closed || rt_desk_in_round(t->desk) || he_table_ready(t) < 2 ||
        rt_intake_stopped(rt_desk_rt(t->desk)))
        return;
    if (rt_desk_timer_arm(t->desk, t->eng->gap_ms, HE_TIMER_GAP, NULL) == 0)
        t->gap_armed = true;
}

static void he_table_seat_freed(he_table_t *t, int n)
{
    rt_msg_t m = {.type = HE_MSG_SEAT_FREED, .arg = rt_desk_id(t->desk), .arg2 = (uint64_t)n};
    rt_post(rt_desk_rt(t->desk), t->lobby, &m);
}

/* Empties seat i (the player's chips must be cashed out already) and frees it in the lobby. */
static void he_table_unseat(he_table_t *t, int i)
{
    gs_seat(gs_of_desk(t->desk), t->seat[i].player, 0);
    uint64_t ops = t->seat[i].ops;
    memset(&t->seat[i], 0, sizeof t->seat[i]);
    t->seat[i].ops = ops; /* op ids of the seat stay unique for the next occupant */
    he_table_sync_humans(t);
    if (!t->closed)
        he_table_seat_freed(t, 1);
}

/* A sitting player leaves between hands (or was not dealt in): cash out, then unseat. */
static void he_table_cash_out_and_unseat(he_table_t *t, int i)
{
    int64_t stack = 0;
    if (holdem_table_leave(t->core, i, &stack) != HOLDEM_OK) {
        log_emit(LOG_ERROR, "holdem_leave_refused", "{s:i}", "seat", i);
        return;
    }
    he_cash_out(t, i, stack);
    he_table_unseat(t, i);
}

/*
 * A player who lost their whole stack leaves the table at the end of the hand instead of
 * holding a seat nobody can deal to: they are told TableClosing{CLOSING_BUSTED} (join again to
 * buy in; no Moved follows) and the seat is freed in the lobby. Nothing to cash out.
 */
static void he_table_bust(he_table_t *t, int i)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableClosing tc = CROUPIER__TABLE_CLOSING__INIT;
    tc.reason = CROUPIER__CLOSING_REASON__CLOSING_BUSTED;
    tc.detail = "no chips left at this table: you have left it; join again to buy in";
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
    sm.table_closing = &tc;
    sm.has_event_seq = true;
    sm.event_seq = ++t->event_seq;
    gs_push(gs_of_desk(t->desk), t->seat[i].player, &sm);
    log_emit(LOG_INFO, "holdem_busted", "{s:I,s:i}", "player", (json_int_t)t->seat[i].player,
             "seat", i);
    he_table_cash_out_and_unseat(t, i);
}

static void he_table_fill_seats(he_table_t *t, Croupier__SeatInfo *infos, Croupier__SeatInfo **ptrs,
                                size_t *n)
{
    *n = 0;
    for (int i = 0; i < t->eng->seats; i++) {
        if (!he_seat_told(&t->seat[i]))
            continue;
        Croupier__SeatInfo si = CROUPIER__SEAT_INFO__INIT;
        si.seat = (uint32_t)i;
        si.has_player_id = true;
        si.player_id = t->seat[i].player;
        int64_t stack = t->seat[i].state == SEAT_SITTING ? holdem_table_stack(t->core, i) : 0;
        si.has_chips = true;
        si.chips = stack < 0 ? 0 : stack;
        si.has_bot = true;
        si.bot = false;
        infos[*n] = si;
        ptrs[*n] = &infos[*n];
        (*n)++;
    }
}

static void he_table_reply_joined(he_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Joined j = CROUPIER__JOINED__INIT;
    Croupier__SeatInfo infos[HOLDEM_MAX_SEATS];
    Croupier__SeatInfo *ptrs[HOLDEM_MAX_SEATS];
    j.desk_id = rt_desk_id(t->desk);
    j.seat = (uint32_t)seat;
    j.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    j.game = HE_GAME;
    j.stake = t->stake;
    he_table_fill_seats(t, infos, ptrs, &j.n_seats);
    j.seats = ptrs;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED;
    sm.joined = &j;
    gs_reply(gs_of_desk(t->desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

static void he_table_round_id(he_table_t *t, char *buf, size_t len)
{
    money_round_id_t rid = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), t->hand);
    money_round_id_format(&rid, buf, len);
}

/*
 * The full state for a (re)connecting player: seats and stacks always; during a hand the round
 * id, whose turn and the time left, and a HoldemState with this player's own hole cards only.
 */
static void he_table_reply_snapshot(he_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot s = CROUPIER__SNAPSHOT__INIT;
    Croupier__HoldemState hs = CROUPIER__HOLDEM_STATE__INIT;
    Croupier__SeatInfo infos[HOLDEM_MAX_SEATS];
    Croupier__SeatInfo *ptrs[HOLDEM_MAX_SEATS];
    Croupier__HoldemSeatState ps[HOLDEM_MAX_SEATS];
    Croupier__HoldemSeatState *pp[HOLDEM_MAX_SEATS];
    char round_id[MONEY_ID_MAX + 1];
    uint8_t hole[2], board[5];
    s.desk_id = rt_desk_id(t->desk);
    s.your_seat = (uint32_t)seat;
    s.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    s.game = HE_GAME;
    s.stake = t->stake;
    he_table_fill_seats(t, infos, ptrs, &s.n_seats);
    s.seats = ptrs;
    s.has_event_seq = true;
    s.event_seq = t->event_seq;
    if (rt_desk_in_round(t->desk) && holdem_table_in_hand(t->core)) {
        he_table_round_id(t, round_id, sizeof round_id);
        s.round_id = round_id;
        holdem_legal_t l;
        holdem_table_legal(t->core, &l);
        if (l.seat >= 0) {
            s.has_turn_seat = true;
            s.turn_seat = (uint32_t)l.seat;
            int64_t left = t->turn_allowed_ms - (clock_mono_ms() - t->turn_start_ms);
            s.has_time_left_ms = true;
            s.time_left_ms = (uint32_t)(left < 0 ? 0 : left);
            hs.has_to_call = true;
            hs.to_call = l.to_call;
            if (l.can_bet || l.can_raise) {
                hs.has_min_raise = true;
                hs.min_raise = l.min_to;
            }
        }
        hs.street = (Croupier__HoldemStreet)t->street;
        const he_seat_t *me = &t->seat[seat];
        if (me->dealt) {
            hole[0] = he_card(me->hole[0]);
            hole[1] = he_card(me->hole[1]);
            hs.has_hole_cards = true;
            hs.hole_cards.data = hole;
            hs.hole_cards.len = 2;
        }
        for (int i = 0; i < t->nboard; i++)
            board[i] = he_card(t->board[i]);
        hs.has_board = true;
        hs.board.data = board;
        hs.board.len = (size_t)t->nboard;
        hs.has_pot = true;
        hs.pot = holdem_table_pot_total(t->core);
        int button = holdem_table_button(t->core);
        if (button >= 0) {
            hs.has_button_seat = true;
            hs.button_seat = (uint32_t)button;
        }
        size_t n = 0;
        for (int i = 0; i < t->eng->seats; i++) {
            if (!t->seat[i].dealt)
                continue;
            Croupier__HoldemSeatState x = CROUPIER__HOLDEM_SEAT_STATE__INIT;
            x.seat = (uint32_t)i;
            x.has_stack = true;
            x.stack = holdem_table_stack(t->core, i);
            x.has_bet = true;
            x.bet = t->seat[i].bet;
            x.has_folded = true;
            x.folded = t->seat[i].folded;
            x.has_all_in = true;
            x.all_in = t->seat[i].all_in;
            ps[n] = x;
            pp[n] = &ps[n];
            n++;
        }
        hs.n_players = n;
        hs.players = pp;
        s.state_case = CROUPIER__SNAPSHOT__STATE_HOLDEM;
        s.holdem = &hs;
    }
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    sm.snapshot = &s;
    gs_reply(gs_of_desk(t->desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

/* Tells the players still seated that the table closes (TableClosing) and the gateways to move
 * them (DeskClosing). Once. */
static void he_table_tell_closing(he_table_t *t)
{
    if (t->close_told)
        return;
    t->close_told = true;
    uint64_t players[HOLDEM_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->eng->seats; i++)
        if (t->seat[i].state == SEAT_CLOSED)
            players[n++] = t->seat[i].player;
    gs_close_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n,
                        CROUPIER__CLOSING_REASON__CLOSING_DRAINING, "server draining");
}

/*
 * The table closes (intake stopped, after the last hand or the void): every seated player's
 * stack is cashed out (voided: the stack before the hand, which is what the seat account holds)
 * and the lobby forgets the table. The players are told TableClosing and the gateways
 * DeskClosing once the cash-outs are applied (or after CLOSE_NOTICE_MS if the wallet store is
 * slow). Players stay seated (stack 0) until they leave. Idempotent.
 */
#define HE_CLOSE_NOTICE_MS 1000
static void he_table_close(he_table_t *t, bool voided)
{
    if (t->closed)
        return;
    t->closed = true;
    if (t->gap_armed)
        t->gap_armed = false; /* its expiry finds the table closed */
    for (int i = 0; i < t->eng->seats; i++) {
        he_seat_t *s = &t->seat[i];
        if (s->state != SEAT_SITTING)
            continue;
        int64_t stack = 0;
        if (voided && s->dealt)
            stack = s->start_stack;
        else if (holdem_table_leave(t->core, i, &stack) != HOLDEM_OK)
            stack = holdem_table_stack(t->core, i);
        s->state = SEAT_CLOSED;
        he_cash_out(t, i, stack);
    }
    rt_msg_t m = {.type = HE_MSG_TABLE_CLOSED, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->lobby, &m);
    if (t->pending_cashouts == 0 ||
        rt_desk_timer_arm(t->desk, HE_CLOSE_NOTICE_MS, HE_TIMER_CLOSE_NOTICE, NULL) != 0)
        he_table_tell_closing(t);
}

static void he_table_settle(he_table_t *t, const holdem_settlement_t *st)
{
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    money_settlement_t s = {0};
    for (int i = 0; i < t->eng->seats; i++) {
        if (!st->dealt[i])
            continue;
        s.players[s.nplayers] = t->acct[i];
        s.deltas[s.nplayers] = st->delta[i];
        s.nplayers++;
    }
    if (w == NULL || s.nplayers == 0)
        return;
    s.round = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), t->hand);
    s.game = HE_GAME;
    s.rake = st->rake;
    int rc = money_writer_submit_settle(w, &s, he_money_log_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "holdem_settle_refused", "{s:i}", "errno", -rc);
}

/* Hands the hand's history to the writer (after its settlement, in the same FIFO). A voided
 * hand's history says so and has no results. */
static void he_table_submit_history(he_table_t *t, const holdem_settlement_t *st)
{
    json_t *h = t->history;
    t->history = NULL;
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    if (h == NULL)
        return;
    if (w == NULL) {
        json_decref(h);
        return;
    }
    json_object_set_new(h, "stakes", json_integer(t->stake));
    money_round_id_t rid = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), t->hand);
    money_history_set_round(h, &rid); /* the settlement's id (gs_round_id) */
    json_object_set_new(h, "button", json_integer(holdem_table_button(t->core)));
    if (st != NULL) {
        for (int i = 0; i < t->eng->seats; i++)
            if (st->dealt[i])
                money_history_add_result(h, i, st->delta[i]);
        json_object_set_new(h, "rake", json_integer(st->rake));
    } else {
        json_object_set_new(h, "voided", json_true());
        json_object_set_new(h, "rake", json_integer(0));
    }
    int rc = money_writer_submit_history(w, HE_GAME, h, he_money_log_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "holdem_history_refused", "{s:i}", "errno", -rc);
}

/*
 * Ends the hand: settles it (completed) or not at all (voided: every chip committed returns to
 * the stacks as they were at the start), tells the players with RoundEnd, cashes out the
 * players who asked to leave or everyone when the table closes, and only then ends the round,
 * so every money item of the hand is queued before human_desks can drop.
 */
static void he_table_end_hand(he_table_t *t, bool voided)
{
    gs_t *gs = gs_of_desk(t->desk);
    if (t->turn_armed) {
        rt_desk_timer_cancel(t->desk, t->turn_timer);
        t->turn_armed = false;
    }
    holdem_settlement_t st;
    memset(&st, 0, sizeof st);
    if (!voided && holdem_table_settlement(t->core, &st) == 0)
        he_table_settle(t, &st);
    he_table_submit_history(t, voided ? NULL : &st);
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    Croupier__SeatDelta deltas[HOLDEM_MAX_SEATS];
    Croupier__SeatDelta *dptr[HOLDEM_MAX_SEATS];
    uint8_t shown[HOLDEM_MAX_SEATS][2];
    char round_id[MONEY_ID_MAX + 1];
    he_table_round_id(t, round_id, sizeof round_id);
    re.round_id = round_id;
    re.outcome = voided ? CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED
                        : CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
    if (voided) {
        re.has_void_reason = true;
        re.void_reason = CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT;
        re.detail = "the server had to stop before the hand could finish; every chip committed "
                    "this hand was returned";
    }
    size_t nd = 0;
    for (int i = 0; i < t->eng->seats; i++) {
        he_seat_t *s = &t->seat[i];
        if (!s->dealt)
            continue;
        Croupier__SeatDelta d = CROUPIER__SEAT_DELTA__INIT;
        d.seat = (uint32_t)i;
        d.player_id = s->player;
        d.delta = voided ? 0 : st.delta[i];
        if (!voided && s->shown) {
            shown[i][0] = he_card(s->show[0]);
            shown[i][1] = he_card(s->show[1]);
            d.has_shown_cards = true;
            d.shown_cards.data = shown[i];
            d.shown_cards.len = 2;
        }
        deltas[nd] = d;
        dptr[nd] = &deltas[nd];
        nd++;
    }
    re.n_deltas = nd;
    re.deltas = dptr;
    re.has_rake = true;
    re.rake = voided ? 0 : st.rake;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
    sm.round_end = &re;
    he_push_all(t, &sm);

    if (voided || rt_intake_stopped(rt_desk_rt(t->desk))) {
        he_table_close(t, voided);
    } else {
        for (int i = 0; i < t->eng->seats; i++) {
            if (t->seat[i].state != SEAT_SITTING)
                continue;
            if (t->seat[i].leaving)
                he_table_cash_out_and_unseat(t, i);
            else if (holdem_table_stack(t->core, i) == 0)
                he_table_bust(t, i);
        }
    }
    rt_outcome_t outcome = voided ? RT_ROUND_VOIDED : RT_ROUND_COMPLETED;
    rt_desk_end_round(t->desk, outcome);
    gs_count_round(gs, HE_GAME, outcome);
    he_table_maybe_schedule(t);
}

/*
 * After every call into the table state machine: arm the turn timer for a new seat to act (a
 * seat that is leaving times out at once), and end the hand when the table says it is over.
 */
static void he_after_core(he_table_t *t)
{
    for (int guard = 0; guard < 64; guard++) {
        if (!rt_desk_in_round(t->desk))
            return;
        if (!holdem_table_in_hand(t->core)) {
            he_table_end_hand(t, false);
            return;
        }
        int seat = holdem_table_to_act(t->core);
        if (seat < 0)
            return;
        if (t->seat[seat].leaving) {
            t->timing_out = true;
            holdem_table_act(t->core, seat, HOLDEM_TIMEOUT, 0, 0);
            t->timing_out = false;
            continue;
        }
        if (!t->new_turn)
            return; /* the same turn goes on: its timer keeps running */
        t->new_turn = false;
        if (t->turn_armed)
            rt_desk_timer_cancel(t->desk, t->turn_timer);
        t->turn_armed = false;
        t->turn_seat = seat;
        t->turn_serial++;
        t->turn_start_ms = clock_mono_ms();
        t->turn_allowed_ms = holdem_table_time_allowed_ms(t->core);
        if (rt_desk_timer_arm(t->desk, t->turn_allowed_ms, HE_TIMER_TURN | (t->turn_serial << 8),
                              &t->turn_timer) == 0)
            t->turn_armed = true;
        he_push_turn(t);
        return;
    }
}

/* Deals the next hand: a fresh CSPRNG shuffle (Fisher-Yates with arc4random_uniform). */
static void he_table_start_hand(he_table_t *t)
{
    if (t->closed || he_table_ready(t) < 2)
        return;
    if (!gs_can_start_round(gs_of_desk(t->desk))) {
        he_table_maybe_schedule(t); /* settlement queue above its watermark: later */
        return;
    }
    if (rt_desk_begin_round(t->desk) != 0)
        return; /* intake stopped: the table closes */
    t->hand++;
    t->street = 1;
    t->nboard = 0;
    for (int i = 0; i < t->eng->seats; i++) {
        he_seat_t *s = &t->seat[i];
        s->dealt = s->folded = s->all_in = s->shown = false;
        s->bet = 0;
        s->start_stack = s->state == SEAT_SITTING ? holdem_table_stack(t->core, i) : 0;
    }
    uint8_t deck[HOLDEM_CARDS];
    for (int i = 0; i < HOLDEM_CARDS; i++)
        deck[i] = (uint8_t)i;
    for (int i = HOLDEM_CARDS - 1; i > 0; i--) {
        uint32_t j = arc4random_uniform((uint32_t)i + 1);
        uint8_t c = deck[i];
        deck[i] = deck[j];
        deck[j] = c;
    }
    money_round_id_t rid = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), t->hand);
    json_decref(t->history);
    t->history = money_history_new(&rid, HE_GAME);
    int rc = holdem_table_start_hand(t->core, -1, deck, HOLDEM_CARDS);
    if (rc != HOLDEM_OK) {
        json_decref(t->history);
        t->history = NULL;
        log_emit(LOG_ERROR, "holdem_start_hand_refused", "{s:s}", "error", holdem_err_name(rc));
        rt_desk_end_round(t->desk, RT_ROUND_VOIDED);
        return;
    }
    he_after_core(t);
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

static void he_table_action(he_table_t *t, gs_request_t *req, int seat)
{
    gs_t *gs = gs_of_desk(t->desk);
    const Croupier__Action *a = req->frame->action;
    if (a == NULL || a->kind_case != CROUPIER__ACTION__KIND_HOLDEM || a->holdem == NULL) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__WRONG_ENGINE, "this is a hold'em table", NULL);
        return;
    }
    if (t->seat[seat].state != SEAT_SITTING || !rt_desk_in_round(t->desk) ||
        !holdem_table_in_hand(t->core)) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__NO_ROUND, "no hand in progress", NULL);
        return;
    }
    const Croupier__HoldemAction *ha = a->holdem;
    holdem_action_kind_t kind;
    int64_t amount = 0;
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
            gs_reply(gs, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "bet/raise needs amount > 0",
                     NULL);
            return;
        }
        kind = ha->move == CROUPIER__HOLDEM_MOVE__HOLDEM_BET ? HOLDEM_BET : HOLDEM_RAISE;
        amount = ha->amount;
        break;
    default:
        gs_reply(gs, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "unknown hold'em move", NULL);
        return;
    }
    int64_t elapsed = 0;
    if (holdem_table_to_act(t->core) == seat) {
        elapsed = clock_mono_ms() - t->turn_start_ms;
        if (elapsed < 0)
            elapsed = 0;
    }
    int rc = holdem_table_act(t->core, seat, kind, amount, elapsed);
    if (rc != HOLDEM_OK) {
        gs_reply(gs, req, he_err_code(rc), holdem_err_name(rc), NULL);
        return;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result r = CROUPIER__RESULT__INIT;
    sm.has_event_seq = true;
    sm.event_seq = t->event_seq;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &r;
    gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
    he_after_core(t);
}

static void he_table_leave(he_table_t *t, gs_request_t *req, int i)
{
    gs_t *gs = gs_of_desk(t->desk);
    he_seat_t *s = &t->seat[i];
    if (s->state == SEAT_CLOSED) {
        he_table_unseat(t, i); /* cashed out when the table closed */
    } else if (rt_desk_in_round(t->desk) && s->dealt) {
        /* A seat is never torn mid-hand: it checks or folds from now on, and cashes out when
         * the hand ends. */
        s->leaving = true;
        holdem_table_sit_out(t->core, i);
        gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, NULL);
        he_after_core(t);
        return;
    } else {
        he_table_cash_out_and_unseat(t, i);
    }
    gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, NULL);
}

static int he_table_find(const he_table_t *t, uint64_t player)
{
    for (int i = 0; i < t->eng->seats; i++)
        if (t->seat[i].state != SEAT_EMPTY && t->seat[i].player == player)
            return i;
    return -1;
}

/* Every desk callback starts here: the desk of this call, and (once) the seat accounts, whose
 * names need the desk id, known only on the desk's own thread. */
static he_table_t *he_table_enter(rt_desk_t *desk, void *state)
{
    he_table_t *t = state;
    t->desk = desk;
    if (t->acct[0][0] == '\0')
        for (int i = 0; i < t->eng->seats; i++)
            holdem_engine_seat_account(t->slot, t->epoch, rt_desk_id(desk), i, t->acct[i],
                                       sizeof t->acct[i]);
    return t;
}

static void he_table_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    he_table_t *t = he_table_enter(desk, state);
    gs_t *gs = gs_of_desk(desk);
    int i = he_table_find(t, req->player_id);
    if (req->kind == GS_REQ_PLAYER_GONE) {
        gs_request_free(req); /* the seat is kept: the player may resume */
        return;
    }
    if (i < 0 || !he_seat_told(&t->seat[i])) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated at this table", NULL);
        return;
    }
    switch (req->kind) {
    case GS_REQ_JOIN:
    case GS_REQ_RESUME:
        he_table_reply_snapshot(t, req, i);
        return;
    case GS_REQ_LEAVE:
        he_table_leave(t, req, i);
        return;
    case GS_REQ_ACTION:
        he_table_action(t, req, i);
        return;
    default:
        gs_reply(gs, req, CROUPIER__ERROR_CODE__UNKNOWN_REQUEST, NULL, NULL);
    }
}

/* A join with its buy-in chosen reaches the table: reserve a seat and ask the wallet. */
static void he_table_join(he_table_t *t, he_join_t *j)
{
    gs_t *gs = gs_of_desk(t->desk);
    gs_request_t *req = j->req;
    if (req->deadline_ms != 0 && clock_wall_ms() > req->deadline_ms) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED, NULL, NULL);
        he_table_seat_freed(t, 1);
        return;
    }
    if (t->closed || rt_intake_stopped(rt_desk_rt(t->desk))) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "table closing", NULL);
        return;
    }
    int i = he_table_find(t, req->player_id);
    if (i >= 0) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__ALREADY_SEATED, "already seated here", NULL);
        he_table_seat_freed(t, 1);
        return;
    }
    for (i = 0; i < t->eng->seats && t->seat[i].state != SEAT_EMPTY; i++)
        ;
    if (i == t->eng->seats) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__TABLE_FULL, "table full", NULL);
        return;
    }
    he_seat_t *s = &t->seat[i];
    s->state = SEAT_BUYING;
    s->player = req->player_id;
    s->buyin = j->amount;
    s->join_req = req;
    uint64_t n = ++s->ops;
    char op[MONEY_ID_MAX + 1], player[24];
    he_op_id(t, i, n, "bi", op, sizeof op);
    he_player_name(s->player, player, sizeof player);
    he_op_t *o = xcalloc(1, sizeof *o);
    *o = (he_op_t){
        .gs = gs, .rt = rt_desk_rt(t->desk), .desk = rt_desk_id(t->desk), .seat = i, .n = n};
    money_writer_t *w = gs_money(gs);
    gs_money_followup_begin(gs);
    int rc =
        w != NULL ? money_writer_submit_buyin(w, player, j->amount, op, he_buyin_cb, o) : -ENOTCONN;
    if (rc != 0) {
        gs_money_followup_end(gs);
        free(o);
        s->state = SEAT_EMPTY;
        s->player = 0;
        s->join_req = NULL;
        gs_reply(gs, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet unavailable", NULL);
        he_table_seat_freed(t, 1);
        return;
    }
    he_table_sync_humans(t);
}

/*
 * The buy-in's result. Success: the seat account is credited and the player sits (or, if the
 * table closed meanwhile, the chips go straight back to the wallet). Failure frees the seat.
 */
static void he_table_buyin_done(he_table_t *t, int i, uint64_t n, const money_result_t *res)
{
    gs_t *gs = gs_of_desk(t->desk);
    if (i < 0 || i >= t->eng->seats || t->seat[i].state != SEAT_BUYING || t->seat[i].ops != n) {
        log_emit(LOG_ERROR, "holdem_buyin_stray", "{s:i,s:s,s:i}", "seat", i, "op", res->id,
                 "status", res->status);
        return;
    }
    he_seat_t *s = &t->seat[i];
    gs_request_t *req = s->join_req;
    s->join_req = NULL;
    char player[24], op[MONEY_ID_MAX + 1];
    he_player_name(s->player, player, sizeof player);
    if (res->status != MONEY_OK) {
        bool poor = res->status == MONEY_ERR_INSUFFICIENT;
        gs_reply(gs, req,
                 poor ? CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS
                      : CROUPIER__ERROR_CODE__UNAVAILABLE,
                 poor ? "wallet balance below the table minimum" : "wallet unavailable", NULL);
        s->state = SEAT_EMPTY;
        s->player = 0;
        he_table_sync_humans(t);
        if (!t->closed)
            he_table_seat_freed(t, 1);
        return;
    }
    money_writer_t *w = gs_money(gs);
    if (t->closed || holdem_table_sit(t->core, i, s->buyin) != HOLDEM_OK) {
        he_op_id(t, i, n, "rf", op, sizeof op);
        money_writer_submit_cashout(w, player, s->buyin, op, he_money_log_cb, NULL);
        gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "table closing; buy-in refunded", NULL);
        s->state = SEAT_EMPTY;
        s->player = 0;
        he_table_sync_humans(t);
        return;
    }
    he_op_id(t, i, n, "tc", op, sizeof op);
    int rc = money_writer_submit_cashout(w, t->acct[i], s->buyin, op, he_money_log_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "holdem_seat_credit_refused", "{s:s,s:i}", "op", op, "errno", -rc);
    s->state = SEAT_SITTING;
    gs_seat(gs, s->player, rt_desk_id(t->desk));
    log_emit(LOG_INFO, "holdem_sat", "{s:s,s:I,s:i,s:I}", "player", player, "desk",
             (json_int_t)rt_desk_id(t->desk), "seat", i, "buyin", (json_int_t)s->buyin);
    he_table_reply_joined(t, req, i);
    he_table_maybe_schedule(t);
}

static void he_table_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    he_table_t *t = he_table_enter(desk, state);
    if (msg->type == HE_MSG_JOIN) {
        he_join_t *j = msg->ptr;
        msg->ptr = NULL;
        msg->free_fn = NULL;
        he_table_join(t, j);
        free(j);
    } else if (msg->type == HE_MSG_BUYIN_DONE) {
        he_table_buyin_done(t, (int)msg->arg, msg->arg2, msg->ptr);
    } else if (msg->type == HE_MSG_CASHOUT_DONE) {
        if (t->pending_cashouts > 0 && --t->pending_cashouts == 0)
            he_table_tell_closing(t);
    }
}

static void he_table_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    he_table_t *t = he_table_enter(desk, state);
    if ((cookie & 0xff) == HE_TIMER_CLOSE_NOTICE) {
        if (!t->close_told)
            log_emit(LOG_WARN, "holdem_cash_out_slow", "{s:i}", "pending", t->pending_cashouts);
        he_table_tell_closing(t);
        return;
    }
    if ((cookie & 0xff) == HE_TIMER_GAP) {
        t->gap_armed = false;
        he_table_start_hand(t);
        return;
    }
    if ((cookie & 0xff) == HE_TIMER_TURN && (cookie >> 8) == t->turn_serial && t->turn_armed) {
        t->turn_armed = false;
        int seat = holdem_table_to_act(t->core);
        if (!rt_desk_in_round(desk) || seat != t->turn_seat)
            return;
        t->timing_out = true;
        int rc = holdem_table_act(t->core, seat, HOLDEM_TIMEOUT, 0, t->turn_allowed_ms);
        t->timing_out = false;
        if (rc != HOLDEM_OK)
            log_emit(LOG_ERROR, "holdem_timeout_refused", "{s:s}", "error", holdem_err_name(rc));
        he_after_core(t);
    }
}

static void he_table_on_intake_stopped(rt_desk_t *desk, void *state)
{
    he_table_t *t = he_table_enter(desk, state);
    if (!rt_desk_in_round(desk))
        he_table_close(t, false);
    /* else: the hand finishes, then the table closes (he_table_end_hand). */
}

static void he_table_on_void(rt_desk_t *desk, void *state)
{
    he_table_t *t = he_table_enter(desk, state);
    he_table_end_hand(t, true);
}

static void he_table_on_destroy(rt_desk_t *desk, void *state)
{
    he_table_t *t = he_table_enter(desk, state);
    if (rt_desk_in_round(desk))
        he_table_end_hand(t, true);
    for (int i = 0; i < t->eng->seats; i++)
        if (t->seat[i].state == SEAT_BUYING && t->seat[i].join_req != NULL)
            gs_reply(gs_of_desk(desk), t->seat[i].join_req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                     "server stopping", NULL);
    holdem_table_destroy(t->core);
    json_decref(t->history);
    free(t);
}

static const gs_desk_ops_t he_table_ops = {
    .on_request = he_table_on_request,
    .on_timer = he_table_on_timer,
    .on_intake_stopped = he_table_on_intake_stopped,
    .on_void = he_table_on_void,
    .on_message = he_table_on_message,
    .on_destroy = he_table_on_destroy,
};

/* Opens a table desk at a stake (big blind). Lobby thread. */
static int he_table_open(he_engine_t *eng, int64_t stake, rt_desk_id_t *out)
{
    holdem_config_t cfg = {.seats = eng->seats,
                           .small_blind = stake / 2,
                           .big_blind = stake,
                           .rake_basis_points = eng->rake_bp,
                           .rake_cap = eng->rake_cap,
                           .action_ms = eng->action_ms,
                           .time_bank_ms = eng->time_bank_ms};
    he_table_t *t = xcalloc(1, sizeof *t);
    int err = 0;
    t->core = holdem_table_create(&cfg, he_on_event, t, &err);
    if (t->core == NULL) {
        free(t);
        return -EINVAL;
    }
    t->eng = eng;
    t->lobby = eng->lobby;
    t->stake = stake;
    t->slot = gs_server_slot(eng->gs);
    t->epoch = gs_epoch(eng->gs);
    t->turn_seat = -1;
    int rc = gs_desk_create(eng->gs, &he_table_ops, t, -1, out);
    if (rc != 0) {
        holdem_table_destroy(t->core);
        free(t);
        return rc;
    }
    return 0;
}

/* ---- lobby ------------------------------------------------------------------------------- */

/* Hands a table's state (a copy taken under eng->mu) to the lobby publisher: an ad while it
 * has free seats, none once it is full, gone once it closed. Lobby thread. */
static void he_lobby_publish(he_engine_t *eng, he_ad_t ad)
{
    if (ad.closed)
        lobby_pub_remove(eng->pub, ad.desk);
    else
        lobby_pub_set(eng->pub, ad.desk, HE_GAME, ad.stake, eng->seats, ad.free);
}

static he_ad_t *he_lobby_find(he_engine_t *eng, rt_desk_id_t desk)
{
    for (int i = 0; i < eng->nads; i++)
        if (eng->ads[i].desk == desk)
            return &eng->ads[i];
    return NULL;
}

static void he_lobby_join(rt_desk_t *desk, he_engine_t *eng, rt_msg_t *msg)
{
    he_join_t *j = msg->ptr;
    gs_t *gs = gs_of_desk(desk);
    if (rt_intake_stopped(rt_desk_rt(desk))) {
        gs_reply(gs, j->req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
        free(j);
        msg->ptr = NULL;
        msg->free_fn = NULL;
        return;
    }
    int64_t stake = j->req->frame->join->stake;
    pthread_mutex_lock(&eng->mu);
    he_ad_t *ref = NULL;
    for (int i = 0; i < eng->nads && ref == NULL; i++)
        if (eng->ads[i].stake == stake && eng->ads[i].free > 0 && !eng->ads[i].closed)
            ref = &eng->ads[i];
    if (ref == NULL && eng->nads < HE_MAX_TABLES) {
        rt_desk_id_t id;
        if (he_table_open(eng, stake, &id) == 0) {
            ref = &eng->ads[eng->nads++];
            *ref = (he_ad_t){.desk = id, .stake = stake, .free = eng->seats};
        }
    }
    he_ad_t now = {0};
    if (ref != NULL) {
        ref->free--;
        now = *ref;
    }
    rt_desk_id_t to = ref != NULL ? ref->desk : 0;
    pthread_mutex_unlock(&eng->mu);
    if (to == 0) {
        gs_reply(gs, j->req, CROUPIER__ERROR_CODE__OVERLOADED, "no room for another table", NULL);
        free(j);
        msg->ptr = NULL;
        msg->free_fn = NULL;
        return;
    }
    he_lobby_publish(eng, now);
    rt_msg_t m = {.type = HE_MSG_JOIN, .ptr = j, .free_fn = msg->free_fn};
    msg->ptr = NULL;
    msg->free_fn = NULL;
    rt_post(rt_desk_rt(desk), to, &m);
}

static void he_lobby_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    he_engine_t *eng = state;
    if (msg->type == HE_MSG_JOIN) {
        he_lobby_join(desk, eng, msg);
        return;
    }
    pthread_mutex_lock(&eng->mu);
    he_ad_t *ad = he_lobby_find(eng, msg->arg);
    if (ad != NULL && msg->type == HE_MSG_SEAT_FREED)
        ad->free += (int)msg->arg2;
    if (ad != NULL && msg->type == HE_MSG_TABLE_CLOSED) {
        ad->closed = true;
        ad->free = 0;
    }
    he_ad_t now = ad != NULL ? *ad : (he_ad_t){0};
    pthread_mutex_unlock(&eng->mu);
    if (ad != NULL)
        he_lobby_publish(eng, now);
}

static void he_lobby_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    (void)state;
    gs_reply(gs_of_desk(desk), req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated on this server",
             NULL);
}

static void he_lobby_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    (void)desk;
    (void)state;
    (void)cookie;
}

static void he_lobby_on_nothing(rt_desk_t *desk, void *state)
{
    (void)desk;
    (void)state;
}

static const gs_desk_ops_t he_lobby_ops = {
    .on_request = he_lobby_on_request,
    .on_timer = he_lobby_on_timer,
    .on_intake_stopped = he_lobby_on_nothing,
    .on_void = he_lobby_on_nothing,
    .on_message = he_lobby_on_message,
};

/* ---- main loop: joins --------------------------------------------------------------------- */

static void he_rconn_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    he_engine_t *eng = arg;
    if (connected)
        lobby_pub_refresh(eng->pub);
}

static void he_join_dropped(void *p)
{
    he_join_t *j = p;
    gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "desk unavailable", NULL);
    free(j);
}

/* The joining player's wallet balance arrived (main thread): choose the buy-in, or refuse. */
static void he_balance_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    he_join_t *j = arg;
    he_engine_t *eng = gs_engine_state(j->gs);
    if (eng == NULL || eng->destroying) {
        gs_request_free(j->req);
        free(j);
        return;
    }
    long long balance = 0;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet unavailable", NULL);
        free(j);
        return;
    }
    if (reply->type == REDIS_REPLY_STRING)
        balance = strtoll(reply->str, NULL, 10);
    int64_t stake = j->req->frame->join->stake;
    int64_t want = stake * eng->buyin_bb, least = stake * eng->min_buyin_bb;
    j->amount = balance < want ? balance : want;
    if (j->amount < least) {
        char msg[128];
        snprintf(msg, sizeof msg, "wallet %lld is below the table minimum %" PRId64, balance,
                 least);
        gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS, msg, NULL);
        free(j);
        return;
    }
    rt_msg_t m = {.type = HE_MSG_JOIN, .ptr = j, .free_fn = he_join_dropped};
    rt_post(gs_rt(j->gs), eng->lobby, &m);
}

static void he_join(void *e, gs_request_t *req)
{
    he_engine_t *eng = e;
    const Croupier__Join *j = req->frame->join;
    if (strcmp(j->game, HE_GAME) != 0) {
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__NO_SUCH_GAME, "this server runs 'holdem'",
                 NULL);
        return;
    }
    if (j->engine != CROUPIER__ENGINE__ENGINE_HOLDEM) {
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__WRONG_ENGINE, "this is the hold'em engine",
                 NULL);
        return;
    }
    if (j->stake < 2 || j->stake > HE_MAX_STAKE) {
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__BAD_REQUEST,
                 "stakes (the big blind) must be at least 2", NULL);
        return;
    }
    char player[24], key[128];
    he_player_name(req->player_id, player, sizeof player);
    money_key_wallet(player, key, sizeof key);
    he_join_t *hj = xcalloc(1, sizeof *hj);
    hj->gs = eng->gs;
    hj->req = req;
    if (eng->rc == NULL || rconn_command(eng->rc, he_balance_cb, hj, "GET %s", key) != 0) {
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet store unreachable", NULL);
        free(hj);
    }
}

/* ---- engine ------------------------------------------------------------------------------ */

static int he_create(gs_t *gs, const char *games, void **out)
{
    if (games != NULL && strcmp(games, HE_GAME) != 0) {
        log_emit(LOG_ERROR, "engine_bad_games", "{s:s,s:s}", "engine", "holdem", "games", games);
        return -EINVAL;
    }
    he_engine_t *eng = xcalloc(1, sizeof *eng);
    eng->gs = gs;
    eng->seats = (int)he_env_i64("CROUPIER_HOLDEM_SEATS", 6, 2, HOLDEM_MAX_SEATS);
    eng->action_ms = he_env_i64("CROUPIER_HOLDEM_ACTION_MS", 15000, 1, 3600000);
    eng->time_bank_ms = he_env_i64("CROUPIER_HOLDEM_TIME_BANK_MS", 30000, 0, 3600000);
    eng->gap_ms = he_env_i64("CROUPIER_HOLDEM_GAP_MS", 2000, 0, 600000);
    eng->ad_ms = he_env_i64("CROUPIER_HOLDEM_AD_MS", 2000, 50, 600000);
    eng->buyin_bb = he_env_i64("CROUPIER_HOLDEM_BUYIN_BB", 100, 1, 10000);
    eng->min_buyin_bb = he_env_i64("CROUPIER_HOLDEM_MIN_BUYIN_BB", 20, 1, 10000);
    eng->rake_bp = (int)he_env_i64("CROUPIER_HOLDEM_RAKE_BP", 0, 0, 10000);
    eng->rake_cap = he_env_i64("CROUPIER_HOLDEM_RAKE_CAP", 0, 0, MONEY_MAX_AMOUNT);
    if (eng->min_buyin_bb > eng->buyin_bb)
        eng->min_buyin_bb = eng->buyin_bb;
    snprintf(eng->server_id, sizeof eng->server_id, "%s", gs_server_id(gs));
    pthread_mutex_init(&eng->mu, NULL);
    eng->ads = xcalloc(HE_MAX_TABLES, sizeof *eng->ads);
    struct event_base *base = gs_base(gs);
    if (gs_redis_host(gs) != NULL) {
        rconn_opts_t ro = {.host = gs_redis_host(gs),
                           .port = gs_redis_port(gs),
                           .name = "holdem_lobby",
                           .on_state = he_rconn_state_cb,
                           .arg = eng};
        eng->rc = rconn_create(base, &ro);
    }
    lobby_pub_opts_t lo = {.server_id = eng->server_id,
                           .engine = CROUPIER__ENGINE__ENGINE_HOLDEM,
                           .refresh_ms = (int)eng->ad_ms};
    eng->pub = lobby_pub_create(base, eng->rc, &lo);
    int rc = eng->pub != NULL ? gs_desk_create(gs, &he_lobby_ops, eng, 0, &eng->lobby) : -errno;
    if (rc != 0) {
        lobby_pub_destroy(eng->pub);
        rconn_destroy(eng->rc);
        free(eng->ads);
        pthread_mutex_destroy(&eng->mu);
        free(eng);
        return rc;
    }
    log_emit(LOG_INFO, "holdem_engine_started", "{s:i,s:I,s:I,s:I,s:s}", "seats", eng->seats,
             "action_ms", (json_int_t)eng->action_ms, "time_bank_ms", (json_int_t)eng->time_bank_ms,
             "gap_ms", (json_int_t)eng->gap_ms, "server", eng->server_id);
    *out = eng;
    return 0;
}

static const char *he_games(void *e)
{
    (void)e;
    return HE_GAME;
}

/* Any thread: the ads are withdrawn on the main loop at once. */
static void he_stop_intake(void *e)
{
    he_engine_t *eng = e;
    lobby_pub_withdraw_all(eng->pub);
}

static void he_destroy(void *e)
{
    he_engine_t *eng = e;
    eng->destroying = true;
    lobby_pub_destroy(eng->pub);
    rconn_destroy(eng->rc);
    free(eng->ads);
    pthread_mutex_destroy(&eng->mu);
    free(eng);
}

const engine_ops_t holdem_engine_ops = {
    .name = "holdem",
    .engine = CROUPIER__ENGINE__ENGINE_HOLDEM,
    .create = he_create,
    .join = he_join,
    .games = he_games,
    .stop_intake = he_stop_intake,
    .destroy = he_destroy,
};
