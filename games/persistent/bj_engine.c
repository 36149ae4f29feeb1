/*
 * bj_engine -- resident blackjack tables inside croupier-game (see bj_engine.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bj_engine.h"
#include "blackjack.h"
#include "clock.h"
#include "log.h"
#include "money_writer.h"
#include "xmalloc.h"

#define BJE_GAME "blackjack"
#define BJE_MAX_TABLES 4096
#define BJE_MAX_STACKED 64 /* test stack entries */

enum {
    BJE_MSG_SEAT_FREED = GS_MSG_ENGINE, /* table -> lobby: arg = table desk */
    BJE_MSG_MONEY,                      /* writer -> table: arg = kind, arg2 = seat; ptr = result */
};

enum { BJE_TIMER_GAP = 1, BJE_TIMER_BET, BJE_TIMER_INSURANCE, BJE_TIMER_TURN };

enum { BJE_MONEY_BUYIN = 1, BJE_MONEY_CASHOUT, BJE_MONEY_ROUND };

typedef struct {
    gs_t *gs;
    rt_desk_id_t lobby;
    int seats, decks, bet_ms, turn_ms, gap_ms, sitout_after;
    int64_t max_mult, buyin_mult, house_fund;
    char service[MONEY_NAME_MAX + 1];
    char house[MONEY_NAME_MAX + 1];
    int nstacked;
    uint8_t *stacked[BJE_MAX_STACKED];
    int nstacked_cards[BJE_MAX_STACKED];
} bje_engine_t;

typedef enum {
    BJE_SEAT_FREE = 0,
    BJE_SEAT_BUYING, /* buy-in in flight; the join request is held */
    BJE_SEAT_WAIT,   /* bought in, waits for the round to end to sit at the core table */
    BJE_SEAT_SEATED, /* seated at the core table */
} bje_seat_state_t;

typedef struct {
    bje_seat_state_t state;
    uint64_t player;
    gs_request_t *join; /* BUYING only */
    int64_t stack;      /* chips in the stack wallet (as far as the table knows) */
    int64_t pre_bet;    /* bet for the next betting window; 0 = none */
    bool leaving;       /* leaves when the round ends */
    int missed;         /* betting windows passed without a bet, in a row */
    char pid[24];
    char acct[MONEY_NAME_MAX + 1];
} bje_seat_t;

typedef struct {
    bje_engine_t *eng;
    rt_desk_t *desk; /* valid during a callback of this desk */
    rt_desk_id_t id, lobby;
    int64_t stake;
    bj_rules_t rules;
    bj_table_t *bj;
    bje_seat_t seat[BJ_MAX_SEATS];
    uint64_t mseq; /* money sequence: rounds and transfers */
    uint64_t rounds_opened;
    money_round_id_t rid;
    char round_id[MONEY_ID_MAX + 1];
    bool closing, gap_armed;
    /* One timer at a time; cookie = gen << 4 | kind, so a stale expiry is recognised. */
    uint64_t timer_gen;
    rt_timer_id_t timer;
    bool timer_armed;
    int64_t timer_deadline_ns;
    /* Set by the event callback, handled once the input that caused it returns. */
    bool round_done, no_bets;
    bj_settlement_t settlement;
    Croupier__VoidReason void_reason;
    uint64_t event_seq;
    json_t *hist;
} bje_table_t;

typedef struct {
    bje_engine_t *eng;
    struct {
        rt_desk_id_t id;
        int64_t stake;
        int free;
    } tables[BJE_MAX_TABLES];
    int ntables;
} bje_lobby_t;

typedef struct {
    gs_t *gs;
    rt_t *rt;
    rt_desk_id_t desk;
    int kind, seat;
} bje_money_ctx_t;

/* ---- helpers ----------------------------------------------------------------------------- */

static long long bje_env_ll(const char *name, long long def, long long lo, long long hi)
{
    const char *v = getenv(name);
    if (v == NULL)
        return def;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0 || x < lo || x > hi) {
        log_emit(LOG_WARN, "bj_engine_bad_env", "{s:s,s:s,s:I}", "name", name, "value", v, "using",
                 (json_int_t)def);
        return def;
    }
    return x;
}

uint8_t bj_engine_card_code(uint8_t card)
{
    if (card >= 52)
        return 0;
    int rank = card % 13, suit = card / 13;
    int prank = rank == 0 ? 14 : rank + 1;
    return (uint8_t)(prank << 2 | suit);
}

static void bje_card_name(uint8_t card, char out[3])
{
    static const char ranks[] = "A23456789TJQK", suits[] = "cdhs";
    out[0] = ranks[card % 13];
    out[1] = suits[card / 13];
    out[2] = '\0';
}

/* Parses "As" style names (ranks A23456789TJQK, suits cdhs) into core cards. */
static int bje_parse_card(const char *s, size_t n, uint8_t *out)
{
    static const char ranks[] = "A23456789TJQK", suits[] = "cdhs";
    if (n != 2)
        return -EINVAL;
    const char *r = strchr(ranks, s[0]), *u = strchr(suits, s[1]);
    if (s[0] == '\0' || s[1] == '\0' || r == NULL || u == NULL)
        return -EINVAL;
    *out = (uint8_t)((u - suits) * 13 + (r - ranks));
    return 0;
}

/* CROUPIER_BJ_TEST_STACK: rounds separated by ';', cards by ','. */
static int bje_parse_stack(bje_engine_t *eng, const char *spec)
{
    const char *p = spec;
    while (*p != '\0' && eng->nstacked < BJE_MAX_STACKED) {
        const char *end = strchr(p, ';');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        uint8_t *cards = xcalloc(len / 2 + 1, 1);
        int n = 0;
        const char *q = p;
        while (q < p + len) {
            const char *c = memchr(q, ',', (size_t)(p + len - q));
            size_t cl = c != NULL ? (size_t)(c - q) : (size_t)(p + len - q);
            if (cl > 0 && bje_parse_card(q, cl, &cards[n++]) != 0) {
                free(cards);
                return -EINVAL;
            }
            q += cl + (c != NULL);
        }
        eng->stacked[eng->nstacked] = cards;
        eng->nstacked_cards[eng->nstacked++] = n;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return 0;
}

static Croupier__ErrorCode bje_code(int rc, bj_phase_t phase)
{
    switch (rc) {
    case BJ_ERR_TURN:
        return CROUPIER__ERROR_CODE__NOT_YOUR_TURN;
    case BJ_ERR_DOUBLE_AFTER_HIT:
        return CROUPIER__ERROR_CODE__ILLEGAL_MOVE;
    case BJ_ERR_PHASE:
        return phase == BJ_PHASE_IDLE ? CROUPIER__ERROR_CODE__NO_ROUND
                                      : CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    case BJ_ERR_INVALID:
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    default: /* SPLIT_UNEQUAL, NOT_ALLOWED, ALREADY, SITTING_OUT, SEAT_EMPTY, ... */
        return CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    }
}

static const char *bje_action_name(bj_action_t a)
{
    static const char *names[] = {"hit", "stand", "double", "split", "surrender"};
    return (unsigned)a < BJ_ACT_COUNT ? names[a] : "?";
}

static Croupier__BlackjackMove bje_move_of(bj_action_t a)
{
    switch (a) {
    case BJ_ACT_HIT:
        return CROUPIER__BLACKJACK_MOVE__BJ_HIT;
    case BJ_ACT_STAND:
        return CROUPIER__BLACKJACK_MOVE__BJ_STAND;
    case BJ_ACT_DOUBLE:
        return CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE;
    case BJ_ACT_SPLIT:
        return CROUPIER__BLACKJACK_MOVE__BJ_SPLIT;
    default:
        return CROUPIER__BLACKJACK_MOVE__BJ_SURRENDER;
    }
}

/* ---- table: pushes, timers, seats -------------------------------------------------------- */

static bool bje_seat_present(const bje_seat_t *s)
{
    return s->state == BJE_SEAT_WAIT || s->state == BJE_SEAT_SEATED;
}

static void bje_push_all(bje_table_t *t, Croupier__ServerMessage *m)
{
    m->has_event_seq = true;
    m->event_seq = ++t->event_seq;
    for (int i = 0; i < t->rules.seats; i++)
        if (bje_seat_present(&t->seat[i]))
            gs_push(t->eng->gs, t->seat[i].player, m);
}

static void bje_sync_humans(bje_table_t *t)
{
    unsigned n = 0;
    for (int i = 0; i < t->rules.seats; i++)
        n += bje_seat_present(&t->seat[i]);
    rt_desk_set_humans(t->desk, n);
}

static void bje_timer_cancel(bje_table_t *t)
{
    if (t->timer_armed)
        rt_desk_timer_cancel(t->desk, t->timer);
    t->timer_armed = false;
    t->timer_gen++;
}

static void bje_timer_arm(bje_table_t *t, int kind, int ms)
{
    bje_timer_cancel(t);
    if (rt_desk_timer_arm(t->desk, ms, t->timer_gen << 4 | (uint64_t)kind, &t->timer) == 0) {
        t->timer_armed = true;
        t->timer_deadline_ns = clock_mono_ns() + (int64_t)ms * 1000000;
    }
}

static uint32_t bje_time_left_ms(const bje_table_t *t)
{
    if (!t->timer_armed)
        return 0;
    int64_t left = (t->timer_deadline_ns - clock_mono_ns()) / 1000000;
    return left > 0 ? (uint32_t)left : 0;
}

/* Chips the seat has at stake in the running round (every hand's bet plus insurance). */
static int64_t bje_committed(const bj_snapshot_t *snap, int seat)
{
    const bj_seat_t *st = &snap->seats[seat];
    if (!st->in_round)
        return 0;
    int64_t c = st->insurance_bet;
    for (int h = 0; h < st->nhands; h++)
        c += st->hands[h].bet;
    if (st->nhands == 0)
        c += st->bet; /* betting: no hand dealt yet */
    return c;
}

static void bje_money_cb(money_result_t *res, void *arg)
{
    bje_money_ctx_t *ctx = arg;
    /* A money follow-up (gs.h): e.g. a buy-in that lands after the table closed goes back. */
    res->arg = ctx->gs;
    rt_msg_t m = {.type = BJE_MSG_MONEY,
                  .arg = (uint64_t)ctx->kind,
                  .arg2 = (uint64_t)ctx->seat,
                  .ptr = res,
                  .free_fn = gs_money_result_free};
    rt_post(ctx->rt, ctx->desk, &m);
    free(ctx);
}

/*
 * Submits a two-account transfer (from -> to, amount > 0) as a settlement with the table's next
 * money sequence number, so it is atomic, idempotent and refused by Redis if `from` would go
 * negative. The result comes back as BJE_MSG_MONEY(kind, seat). Returns 0 or a negative errno.
 */
static int bje_transfer(bje_table_t *t, const char *from, const char *to, int64_t amount, int kind,
                        int seat)
{
    money_writer_t *w = gs_money(t->eng->gs);
    if (w == NULL)
        return -ENOTCONN;
    money_settlement_t s = {0};
    s.round = gs_round_id(t->eng->gs, t->id, ++t->mseq);
    s.game = BJE_GAME;
    s.nplayers = 2;
    s.players[0] = from;
    s.players[1] = to;
    s.deltas[0] = -amount;
    s.deltas[1] = amount;
    bje_money_ctx_t *ctx = xcalloc(1, sizeof *ctx);
    *ctx = (bje_money_ctx_t){
        .gs = t->eng->gs, .rt = rt_desk_rt(t->desk), .desk = t->id, .kind = kind, .seat = seat};
    gs_money_followup_begin(t->eng->gs);
    int rc = money_writer_submit_settle(w, &s, bje_money_cb, ctx);
    if (rc != 0) {
        gs_money_followup_end(t->eng->gs);
        free(ctx);
    }
    return rc;
}

/* Returns a seat's stack to its wallet (when there is one) and zeroes it. */
static void bje_cash_out(bje_table_t *t, bje_seat_t *s, int seat)
{
    if (s->stack <= 0)
        return;
    int rc = bje_transfer(t, s->acct, s->pid, s->stack, BJE_MONEY_CASHOUT, seat);
    if (rc != 0)
        log_emit(LOG_ERROR, "bj_cashout_refused", "{s:s,s:I,s:i}", "player", s->pid, "amount",
                 (json_int_t)s->stack, "errno", -rc);
    else
        log_emit(LOG_INFO, "bj_cashout", "{s:s,s:I}", "player", s->pid, "amount",
                 (json_int_t)s->stack);
    s->stack = 0;
}

static void bje_free_seat(bje_table_t *t, int i)
{
    memset(&t->seat[i], 0, sizeof t->seat[i]);
    rt_msg_t m = {.type = BJE_MSG_SEAT_FREED, .arg = t->id};
    rt_post(rt_desk_rt(t->desk), t->lobby, &m);
}

/* The player leaves the table for good: stack back to the wallet, routing removed. */
static void bje_unseat(bje_table_t *t, int i)
{
    bje_seat_t *s = &t->seat[i];
    if (s->state == BJE_SEAT_SEATED)
        bj_table_leave(t->bj, i);
    bje_cash_out(t, s, i);
    gs_seat(t->eng->gs, s->player, 0);
    bje_free_seat(t, i);
    bje_sync_humans(t);
}

static int bje_find(const bje_table_t *t, uint64_t player)
{
    for (int i = 0; i < t->rules.seats; i++)
        if (t->seat[i].state != BJE_SEAT_FREE && t->seat[i].player == player)
            return i;
    return -1;
}

/* Whether some seat would play if a betting window opened now. */
static bool bje_can_play(const bje_table_t *t, const bj_snapshot_t *snap)
{
    for (int i = 0; i < t->rules.seats; i++)
        if (t->seat[i].state == BJE_SEAT_SEATED && !snap->seats[i].sitting_out)
            return true;
    return false;
}

static void bje_schedule(bje_table_t *t)
{
    if (t->gap_armed || t->closing || rt_desk_in_round(t->desk))
        return;
    bj_snapshot_t snap;
    bj_table_snapshot(t->bj, &snap);
    if (!bje_can_play(t, &snap))
        return;
    bje_timer_arm(t, BJE_TIMER_GAP, t->eng->gap_ms);
    t->gap_armed = t->timer_armed;
}

/*
 * The table closes (intake stopped, no round running): stacks go back to the wallets, players
 * are told and the gateways asked to move them; they stay seated until they leave.
 */
static void bje_close(bje_table_t *t)
{
    if (t->closing)
        return;
    t->closing = true;
    bje_timer_cancel(t);
    t->gap_armed = false;
    uint64_t players[BJ_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->rules.seats; i++) {
        bje_seat_t *s = &t->seat[i];
        if (!bje_seat_present(s))
            continue;
        s->pre_bet = 0;
        bje_cash_out(t, s, i);
        players[n++] = s->player;
    }
    gs_close_desk_seats(t->eng->gs, t->id, players, n, CROUPIER__CLOSING_REASON__CLOSING_DRAINING,
                        "server draining: your chips are back in your wallet");
}

/* ---- table: the core's events ------------------------------------------------------------ */

static void bje_fill_play(Croupier__Play *p, Croupier__Action *a, Croupier__BlackjackAction *ba,
                          int seat)
{
    p->seat = (uint32_t)seat;
    p->action = a;
    a->kind_case = CROUPIER__ACTION__KIND_BLACKJACK;
    a->blackjack = ba;
}

static void bje_hist_card(bje_table_t *t, int seat, uint8_t card)
{
    if (t->hist == NULL || card >= 52)
        return;
    char name[3];
    bje_card_name(card, name);
    money_history_add_card(t->hist, seat, name);
}

static void bje_on_event(void *ctx, const bj_event_t *ev)
{
    bje_table_t *t = ctx;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Turn turn = CROUPIER__TURN__INIT;
    Croupier__Deal deal = CROUPIER__DEAL__INIT;
    Croupier__Play play = CROUPIER__PLAY__INIT;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    Croupier__BlackjackAction ba = CROUPIER__BLACKJACK_ACTION__INIT;
    uint8_t code;
    switch (ev->type) {
    case BJ_EV_BETTING_OPEN:
        bje_timer_arm(t, BJE_TIMER_BET, t->eng->bet_ms);
        for (int i = 0; i < t->rules.seats; i++) {
            if (t->seat[i].state != BJE_SEAT_SEATED)
                continue;
            Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
            Croupier__Turn tu = CROUPIER__TURN__INIT;
            tu.seat = (uint32_t)i;
            tu.time_left_ms = (uint32_t)t->eng->bet_ms;
            tu.has_min_amount = tu.has_max_amount = true;
            tu.min_amount = t->rules.min_bet;
            tu.max_amount =
                t->seat[i].stack < t->rules.max_bet ? t->seat[i].stack : t->rules.max_bet;
            m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
            m.turn = &tu;
            bje_push_all(t, &m);
        }
        return;
    case BJ_EV_BET:
        ba.move = CROUPIER__BLACKJACK_MOVE__BJ_BET;
        ba.has_amount = true;
        ba.amount = ev->amount;
        if (t->hist != NULL)
            money_history_add_action(t->hist, ev->seat, "bet", ev->amount);
        break;
    case BJ_EV_NO_ROUND:
        t->round_done = true;
        t->no_bets = true;
        return;
    case BJ_EV_CARD:
        if (ev->seat >= 0) {
            deal.has_seat = true;
            deal.seat = (uint32_t)ev->seat;
            deal.has_hand = true;
            deal.hand = (uint32_t)ev->hand;
        }
        deal.round_id = t->round_id;
        if (ev->card == BJ_CARD_HIDDEN) {
            deal.has_count = true;
            deal.count = 1;
        } else {
            code = bj_engine_card_code(ev->card);
            deal.has_cards = true;
            deal.cards.data = &code;
            deal.cards.len = 1;
            bje_hist_card(t, ev->seat, ev->card);
        }
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
        sm.deal = &deal;
        bje_push_all(t, &sm);
        return;
    case BJ_EV_HOLE:
        code = bj_engine_card_code(ev->card);
        deal.round_id = t->round_id;
        deal.has_cards = true;
        deal.cards.data = &code;
        deal.cards.len = 1;
        bje_hist_card(t, -1, ev->card);
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
        sm.deal = &deal;
        bje_push_all(t, &sm);
        return;
    case BJ_EV_INSURANCE_OPEN: {
        bje_timer_arm(t, BJE_TIMER_INSURANCE, t->eng->turn_ms);
        bj_snapshot_t snap;
        bj_table_snapshot(t->bj, &snap);
        for (int i = 0; i < t->rules.seats; i++) {
            if (!snap.seats[i].in_round)
                continue;
            Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
            Croupier__Turn tu = CROUPIER__TURN__INIT;
            tu.seat = (uint32_t)i;
            tu.time_left_ms = (uint32_t)t->eng->turn_ms;
            tu.has_to_call = true;
            tu.to_call = snap.seats[i].bet / 2; /* the insurance bet */
            m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
            m.turn = &tu;
            bje_push_all(t, &m);
        }
        return;
    }
    case BJ_EV_INSURANCE:
        ba.move = CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE;
        ba.has_insure = true;
        ba.insure = ev->card == BJ_INS_TAKEN || ev->card == BJ_INS_EVEN_MONEY;
        if (t->hist != NULL)
            money_history_add_action(t->hist, ev->seat,
                                     ev->card == BJ_INS_EVEN_MONEY ? "even_money"
                                     : ba.insure                   ? "insurance"
                                                                   : "no_insurance",
                                     ev->amount);
        break;
    case BJ_EV_TURN:
        bje_timer_arm(t, BJE_TIMER_TURN, t->eng->turn_ms);
        turn.seat = (uint32_t)ev->seat;
        turn.time_left_ms = (uint32_t)t->eng->turn_ms;
        turn.has_hand = true;
        turn.hand = (uint32_t)ev->hand;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
        sm.turn = &turn;
        bje_push_all(t, &sm);
        return;
    case BJ_EV_ACTION:
        ba.move = bje_move_of(ev->action);
        ba.has_hand = true;
        ba.hand = (uint32_t)ev->hand;
        play.has_timed_out = true;
        play.timed_out = ev->timed_out;
        if (t->hist != NULL)
            money_history_add_action(t->hist, ev->seat, bje_action_name(ev->action), ev->amount);
        break;
    case BJ_EV_SETTLED:
        t->settlement = *ev->settlement;
        t->round_done = true;
        bje_timer_cancel(t);
        return;
    default: /* SHUFFLE, SEAT, PEEK: nothing to tell beyond what follows */
        return;
    }
    bje_fill_play(&play, &act, &ba, ev->seat);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &play;
    bje_push_all(t, &sm);
}

/* ---- table: round lifecycle -------------------------------------------------------------- */

static void bje_history_cb(money_result_t *res, void *arg)
{
    (void)arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "bj_history_failed", "{s:s,s:s}", "round", res->id, "error",
                 res->error);
    free(res);
}

/* Settles a completed round: each betting seat's stack wallet and the house. */
static void bje_settle_money(bje_table_t *t)
{
    const bj_settlement_t *st = &t->settlement;
    money_settlement_t s = {0};
    s.round = t->rid;
    s.game = BJE_GAME;
    int64_t house = 0;
    for (int i = 0; i < st->nseats; i++) {
        if (!st->seats[i].played)
            continue;
        s.players[s.nplayers] = t->seat[i].acct;
        s.deltas[s.nplayers++] = st->seats[i].delta;
        house -= st->seats[i].delta;
    }
    if (s.nplayers == 0)
        return;
    s.players[s.nplayers] = t->eng->house;
    s.deltas[s.nplayers++] = house;
    money_writer_t *w = gs_money(t->eng->gs);
    bje_money_ctx_t *ctx = xcalloc(1, sizeof *ctx);
    *ctx = (bje_money_ctx_t){.gs = t->eng->gs,
                             .rt = rt_desk_rt(t->desk),
                             .desk = t->id,
                             .kind = BJE_MONEY_ROUND,
                             .seat = -1};
    gs_money_followup_begin(t->eng->gs);
    int rc = w != NULL ? money_writer_submit_settle(w, &s, bje_money_cb, ctx) : -ENOTCONN;
    if (rc != 0) {
        gs_money_followup_end(t->eng->gs);
        free(ctx);
        log_emit(LOG_ERROR, "bj_settle_refused", "{s:s,s:i}", "round", t->round_id, "errno", -rc);
    }
}

/*
 * The core's round ended inside the input that just returned (SETTLED, or a betting window
 * with no bet): money, history, RoundEnd, rt_desk_end_round; then leaves, waiting joins and
 * sit-outs take effect and the next round is scheduled (or the table closes).
 */
static void bje_finish_round(bje_table_t *t)
{
    t->round_done = false;
    bool voided = !t->no_bets && t->settlement.voided;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    Croupier__SeatDelta deltas[BJ_MAX_SEATS];
    Croupier__SeatDelta *dptr[BJ_MAX_SEATS];
    size_t nd = 0;
    /* the id under the server's identity now (gs_round_id): the round may have outlived a
     * lease regain, and settles under the epoch the fence holds now */
    t->rid = gs_round_id(t->eng->gs, t->rid.desk, t->rid.seq);
    money_round_id_format(&t->rid, t->round_id, sizeof t->round_id);
    re.round_id = t->round_id;
    re.has_rake = true;
    re.rake = 0;
    if (voided) {
        re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
        re.has_void_reason = true;
        re.void_reason = t->void_reason;
        re.detail = t->void_reason == CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT
                        ? "the server had to stop before the round could finish; bets refunded"
                        : "the round could not finish; bets refunded";
    } else {
        re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
        if (t->no_bets)
            re.detail = "no bets this round";
    }
    if (!t->no_bets) {
        for (int i = 0; i < t->settlement.nseats; i++) {
            const bj_seat_result_t *r = &t->settlement.seats[i];
            if (!r->played)
                continue;
            Croupier__SeatDelta d = CROUPIER__SEAT_DELTA__INIT;
            d.seat = (uint32_t)i;
            d.player_id = r->player;
            d.delta = r->delta;
            deltas[nd] = d;
            dptr[nd] = &deltas[nd];
            nd++;
            t->seat[i].stack += r->delta;
            t->seat[i].missed = 0;
            if (t->hist != NULL)
                money_history_add_result(t->hist, i, r->delta);
        }
        if (!voided) {
            bje_settle_money(t);
            money_writer_t *w = gs_money(t->eng->gs);
            if (w != NULL && t->hist != NULL) {
                json_object_set_new(t->hist, "rake", json_integer(0));
                money_history_set_round(t->hist, &t->rid);
                money_writer_submit_history(w, BJE_GAME, t->hist, bje_history_cb, NULL);
                t->hist = NULL;
            }
        }
    }
    json_decref(t->hist);
    t->hist = NULL;
    re.n_deltas = nd;
    re.deltas = dptr;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
    sm.round_end = &re;
    bje_push_all(t, &sm);
    rt_outcome_t outcome = voided ? RT_ROUND_VOIDED : RT_ROUND_COMPLETED;
    rt_desk_end_round(t->desk, outcome);
    gs_count_round(t->eng->gs, BJE_GAME, outcome);
    bje_timer_cancel(t);

    /* Seats that let the window pass without a bet; then leaves and waiting joins. */
    bj_snapshot_t snap;
    bj_table_snapshot(t->bj, &snap);
    for (int i = 0; i < t->rules.seats; i++) {
        bje_seat_t *s = &t->seat[i];
        if (s->state == BJE_SEAT_SEATED && !snap.seats[i].in_round && !snap.seats[i].sitting_out &&
            !s->leaving && ++s->missed >= t->eng->sitout_after)
            bj_table_sit_out(t->bj, i, true);
        if (bje_seat_present(s) && s->leaving) {
            bje_unseat(t, i);
            continue;
        }
        if (s->state == BJE_SEAT_WAIT && bj_table_sit(t->bj, i, s->player) == 0)
            s->state = BJE_SEAT_SEATED;
    }
    t->no_bets = false;
    if (rt_intake_stopped(rt_desk_rt(t->desk)))
        bje_close(t);
    else
        bje_schedule(t);
}

/* To call after every input to the core table. */
static void bje_after_input(bje_table_t *t)
{
    if (t->round_done)
        bje_finish_round(t);
}

/* The gap passed: open a betting window (a round of the runtime) if one may start. */
static void bje_start_round(bje_table_t *t)
{
    gs_t *gs = t->eng->gs;
    bj_snapshot_t snap;
    bj_table_snapshot(t->bj, &snap);
    if (t->closing || rt_desk_in_round(t->desk) || !bje_can_play(t, &snap))
        return;
    if (!gs_can_start_round(gs)) {
        if (rt_intake_stopped(rt_desk_rt(t->desk)))
            bje_close(t);
        else
            bje_schedule(t); /* settlement queue above its watermark: try again later */
        return;
    }
    if (rt_desk_begin_round(t->desk) != 0) {
        if (rt_intake_stopped(rt_desk_rt(t->desk)))
            bje_close(t);
        return;
    }
    uint64_t n = t->rounds_opened++;
    if (n < (uint64_t)t->eng->nstacked && t->eng->nstacked_cards[n] > 0) {
        int rc = bj_table_stack_shoe(t->bj, t->eng->stacked[n], t->eng->nstacked_cards[n]);
        if (rc != 0)
            log_emit(LOG_WARN, "bj_test_stack_failed", "{s:I,s:s}", "round", (json_int_t)n, "error",
                     bj_strerror(rc));
    }
    t->rid = gs_round_id(gs, t->id, ++t->mseq);
    money_round_id_format(&t->rid, t->round_id, sizeof t->round_id);
    t->void_reason = CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR;
    t->hist = money_history_new(&t->rid, BJE_GAME);
    for (int i = 0; i < t->rules.seats; i++)
        if (t->seat[i].state == BJE_SEAT_SEATED)
            money_history_add_seat(t->hist, i, t->seat[i].pid, false, t->seat[i].stack);
    int rc = bj_table_open_betting(t->bj);
    if (rc != 0) {
        log_emit(LOG_ERROR, "bj_open_betting_failed", "{s:s}", "error", bj_strerror(rc));
        t->round_done = true;
        t->no_bets = true;
        bje_after_input(t);
        return;
    }
    /* Bets made between rounds are placed now (they were checked when made). */
    for (int i = 0; i < t->rules.seats && bj_table_phase(t->bj) == BJ_PHASE_BETTING; i++) {
        bje_seat_t *s = &t->seat[i];
        if (s->state != BJE_SEAT_SEATED || s->pre_bet == 0)
            continue;
        int64_t amount = s->pre_bet;
        s->pre_bet = 0;
        if (amount <= s->stack && bj_table_bet(t->bj, i, amount) == 0)
            s->missed = 0;
    }
    bje_after_input(t);
}

/* ---- table: requests --------------------------------------------------------------------- */

static void bje_fill_seats(bje_table_t *t, Croupier__SeatInfo *infos, Croupier__SeatInfo **ptrs,
                           size_t *n)
{
    *n = 0;
    for (int i = 0; i < t->rules.seats; i++) {
        if (!bje_seat_present(&t->seat[i]))
            continue;
        Croupier__SeatInfo si = CROUPIER__SEAT_INFO__INIT;
        si.seat = (uint32_t)i;
        si.has_player_id = true;
        si.player_id = t->seat[i].player;
        si.has_chips = true;
        si.chips = t->seat[i].stack;
        si.has_bot = true;
        si.bot = false;
        infos[*n] = si;
        ptrs[*n] = &infos[*n];
        (*n)++;
    }
}

static void bje_reply_joined(bje_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Joined j = CROUPIER__JOINED__INIT;
    Croupier__SeatInfo infos[BJ_MAX_SEATS];
    Croupier__SeatInfo *ptrs[BJ_MAX_SEATS];
    j.desk_id = t->id;
    j.seat = (uint32_t)seat;
    j.engine = CROUPIER__ENGINE__ENGINE_PERSISTENT;
    j.game = BJE_GAME;
    j.stake = t->stake;
    bje_fill_seats(t, infos, ptrs, &j.n_seats);
    j.seats = ptrs;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED;
    sm.joined = &j;
    gs_reply(t->eng->gs, req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

/* A full Snapshot with the BlackjackState: every seat's hands, the visible dealer cards, whose
 * turn it is and the time left on the running timer. */
static void bje_reply_snapshot(bje_table_t *t, gs_request_t *req, int seat)
{
    bj_snapshot_t snap;
    bj_table_snapshot(t->bj, &snap);
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot s = CROUPIER__SNAPSHOT__INIT;
    Croupier__BlackjackState bs = CROUPIER__BLACKJACK_STATE__INIT;
    Croupier__SeatInfo infos[BJ_MAX_SEATS];
    Croupier__SeatInfo *ptrs[BJ_MAX_SEATS];
    Croupier__BlackjackHand hands[BJ_MAX_SEATS * BJ_MAX_HANDS];
    Croupier__BlackjackHand *hptr[BJ_MAX_SEATS * BJ_MAX_HANDS];
    uint8_t cards[BJ_MAX_SEATS * BJ_MAX_HANDS][BJ_MAX_CARDS];
    uint8_t dealer[BJ_MAX_CARDS];
    s.desk_id = t->id;
    s.your_seat = (uint32_t)seat;
    s.engine = CROUPIER__ENGINE__ENGINE_PERSISTENT;
    s.game = BJE_GAME;
    s.stake = t->stake;
    bje_fill_seats(t, infos, ptrs, &s.n_seats);
    s.seats = ptrs;
    s.has_event_seq = true;
    s.event_seq = t->event_seq;
    if (rt_desk_in_round(t->desk))
        s.round_id = t->round_id;
    switch (snap.phase) {
    case BJ_PHASE_INSURANCE:
        bs.phase = CROUPIER__BLACKJACK_PHASE__BJ_INSURANCE_OFFER;
        break;
    case BJ_PHASE_PLAYERS:
        bs.phase = CROUPIER__BLACKJACK_PHASE__BJ_PLAYING;
        s.has_turn_seat = true;
        s.turn_seat = (uint32_t)snap.turn_seat;
        break;
    default:
        bs.phase = CROUPIER__BLACKJACK_PHASE__BJ_BETTING;
        break;
    }
    if (t->timer_armed && !t->gap_armed) {
        s.has_time_left_ms = true;
        s.time_left_ms = bje_time_left_ms(t);
    }
    size_t nd = 0;
    for (int c = 0; c < snap.ndealer; c++)
        if (snap.dealer[c] != BJ_CARD_HIDDEN)
            dealer[nd++] = bj_engine_card_code(snap.dealer[c]);
    bs.has_dealer_cards = true;
    bs.dealer_cards.data = dealer;
    bs.dealer_cards.len = nd;
    size_t nh = 0;
    for (int i = 0; i < t->rules.seats; i++) {
        const bj_seat_t *st = &snap.seats[i];
        if (!st->in_round)
            continue;
        int count = st->nhands > 0 ? st->nhands : 1;
        for (int h = 0; h < count; h++) {
            Croupier__BlackjackHand bh = CROUPIER__BLACKJACK_HAND__INIT;
            const bj_hand_t *hd = &st->hands[h];
            bh.seat = (uint32_t)i;
            bh.has_hand = true;
            bh.hand = (uint32_t)h;
            bh.has_bet = true;
            bh.bet = st->nhands > 0 ? hd->bet : st->bet;
            bh.has_cards = true;
            bh.cards.data = cards[nh];
            bh.cards.len = 0;
            if (st->nhands > 0) {
                for (int c = 0; c < hd->ncards; c++)
                    cards[nh][bh.cards.len++] = bj_engine_card_code(hd->cards[c]);
                bh.has_doubled = bh.has_done = true;
                bh.doubled = (hd->flags & BJ_HAND_DOUBLED) != 0;
                bh.done = (hd->flags & BJ_HAND_DONE) != 0;
            }
            bh.has_insured = true;
            bh.insured = st->insurance == BJ_INS_TAKEN || st->insurance == BJ_INS_EVEN_MONEY;
            hands[nh] = bh;
            hptr[nh] = &hands[nh];
            nh++;
        }
    }
    bs.n_hands = nh;
    bs.hands = hptr;
    bs.has_min_bet = bs.has_max_bet = true;
    bs.min_bet = t->rules.min_bet;
    bs.max_bet = t->rules.max_bet;
    s.state_case = CROUPIER__SNAPSHOT__STATE_BLACKJACK;
    s.blackjack = &bs;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    sm.snapshot = &s;
    gs_reply(t->eng->gs, req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

static void bje_reply_ok(bje_table_t *t, gs_request_t *req)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result r = CROUPIER__RESULT__INIT;
    sm.has_event_seq = true;
    sm.event_seq = t->event_seq;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &r;
    gs_reply(t->eng->gs, req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

static void bje_refuse(bje_table_t *t, gs_request_t *req, Croupier__ErrorCode code, const char *msg)
{
    gs_reply(t->eng->gs, req, code, msg, NULL);
}

static void bje_refuse_core(bje_table_t *t, gs_request_t *req, int rc)
{
    bje_refuse(t, req, bje_code(rc, bj_table_phase(t->bj)), bj_strerror(rc));
}

/* The lobby counted a seat for a join that did not take one: give it back. */
static void bje_lobby_release(bje_table_t *t)
{
    rt_msg_t m = {.type = BJE_MSG_SEAT_FREED, .arg = t->id};
    rt_post(rt_desk_rt(t->desk), t->lobby, &m);
}

/* A join sent by the lobby: reserve a seat and move the buy-in to the stack wallet; the join
 * is answered when the money path has (bje_on_buyin). */
static void bje_on_join(bje_table_t *t, gs_request_t *req)
{
    int i = bje_find(t, req->player_id);
    if (i >= 0 && bje_seat_present(&t->seat[i])) {
        bje_lobby_release(t);
        bje_reply_joined(t, req, i);
        return;
    }
    if (i >= 0) {
        bje_lobby_release(t);
        bje_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "a join is already in progress");
        return;
    }
    if (t->closing || rt_intake_stopped(rt_desk_rt(t->desk))) {
        bje_lobby_release(t);
        bje_refuse(t, req, CROUPIER__ERROR_CODE__DRAINING, "table closing");
        return;
    }
    for (i = 0; i < t->rules.seats && t->seat[i].state != BJE_SEAT_FREE; i++)
        ;
    if (i == t->rules.seats) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__TABLE_FULL, "table full");
        return;
    }
    bje_seat_t *s = &t->seat[i];
    memset(s, 0, sizeof *s);
    s->player = req->player_id;
    snprintf(s->pid, sizeof s->pid, "%" PRIu64, req->player_id);
    char acct[160];
    snprintf(acct, sizeof acct, "bjs.%s.%s", t->eng->service, s->pid);
    if (strlen(acct) < sizeof s->acct)
        memcpy(s->acct, acct, strlen(acct) + 1);
    if (!money_valid_player(acct)) {
        memset(s, 0, sizeof *s);
        bje_lobby_release(t);
        bje_refuse(t, req, CROUPIER__ERROR_CODE__INTERNAL, "stack wallet name too long");
        return;
    }
    s->state = BJE_SEAT_BUYING;
    s->join = req;
    int64_t buyin = t->stake * t->eng->buyin_mult;
    int rc = bje_transfer(t, s->pid, s->acct, buyin, BJE_MONEY_BUYIN, i);
    if (rc != 0) {
        s->join = NULL;
        memset(s, 0, sizeof *s);
        bje_lobby_release(t);
        bje_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "money path unavailable");
    }
}

/* A buy-in answered: seat the player (or refuse the join and free the seat). */
static void bje_on_buyin(bje_table_t *t, int i, money_result_t *res)
{
    if (i < 0 || i >= t->rules.seats || t->seat[i].state != BJE_SEAT_BUYING)
        return;
    bje_seat_t *s = &t->seat[i];
    gs_request_t *req = s->join;
    s->join = NULL;
    if (res->status != MONEY_OK) {
        bool poor = res->status == MONEY_ERR_NEGATIVE;
        char msg[160];
        snprintf(msg, sizeof msg, "%s (buy-in %" PRId64 " chips)",
                 poor ? "the wallet holds less than the buy-in" : money_strerror(res->status),
                 t->stake * t->eng->buyin_mult);
        bje_free_seat(t, i);
        bje_refuse(t, req,
                   poor ? CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS
                        : CROUPIER__ERROR_CODE__UNAVAILABLE,
                   msg);
        return;
    }
    /* The stack is what this buy-in moved, never the stack wallet's balance: the wallet is the
     * player's for the whole service, so it may still hold another table's chips (a table on
     * the pod being replaced whose cash-out has not landed yet); counted here they would be
     * cashed out twice (the second transfer is refused and strands the chips). */
    s->stack = t->stake * t->eng->buyin_mult;
    if (t->closing || rt_intake_stopped(rt_desk_rt(t->desk))) {
        bje_cash_out(t, s, i);
        bje_free_seat(t, i);
        bje_refuse(t, req, CROUPIER__ERROR_CODE__DRAINING, "table closing");
        return;
    }
    bj_phase_t ph = bj_table_phase(t->bj);
    if ((ph == BJ_PHASE_IDLE || ph == BJ_PHASE_BETTING) && bj_table_sit(t->bj, i, s->player) == 0)
        s->state = BJE_SEAT_SEATED;
    else
        s->state = BJE_SEAT_WAIT;
    gs_seat(t->eng->gs, s->player, t->id);
    bje_sync_humans(t);
    bje_reply_joined(t, req, i);
    if (s->state == BJE_SEAT_SEATED && ph == BJ_PHASE_BETTING) {
        /* Joined during a window: it may bet now; tell the table it is waiting for it. */
        Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Turn tu = CROUPIER__TURN__INIT;
        tu.seat = (uint32_t)i;
        tu.time_left_ms = bje_time_left_ms(t);
        tu.has_min_amount = tu.has_max_amount = true;
        tu.min_amount = t->rules.min_bet;
        tu.max_amount = s->stack < t->rules.max_bet ? s->stack : t->rules.max_bet;
        m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
        m.turn = &tu;
        bje_push_all(t, &m);
    }
    bje_schedule(t);
}

static void bje_on_bet(bje_table_t *t, gs_request_t *req, int i, int64_t amount)
{
    bje_seat_t *s = &t->seat[i];
    if (t->closing) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__NO_ROUND, "table closing: no next round");
        return;
    }
    if (amount < t->rules.min_bet) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__BET_BELOW_MIN, "bet below the table minimum");
        return;
    }
    if (amount > t->rules.max_bet) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__BET_ABOVE_MAX, "bet above the table maximum");
        return;
    }
    if (amount > s->stack) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS,
                   "bet larger than your chips at the table");
        return;
    }
    bj_snapshot_t snap;
    bj_table_snapshot(t->bj, &snap);
    if (s->state == BJE_SEAT_SEATED && snap.phase == BJ_PHASE_BETTING) {
        if (snap.seats[i].in_round) {
            bje_refuse_core(t, req, BJ_ERR_ALREADY);
            return;
        }
        if (snap.seats[i].sitting_out)
            bj_table_sit_out(t->bj, i, false);
        int rc = bj_table_bet(t->bj, i, amount);
        if (rc != 0) {
            bje_refuse_core(t, req, rc);
            return;
        }
        s->missed = 0;
        bje_reply_ok(t, req);
        bje_after_input(t);
        return;
    }
    /* Outside the window: a bet for the next one, by a seat not in the running round. */
    if (s->state == BJE_SEAT_SEATED && snap.phase != BJ_PHASE_IDLE && snap.seats[i].in_round) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED,
                   "betting is closed for this round");
        return;
    }
    if (s->pre_bet != 0) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED,
                   "a bet for the next round is already placed");
        return;
    }
    s->pre_bet = amount;
    s->missed = 0;
    if (s->state == BJE_SEAT_SEATED && snap.seats[i].sitting_out)
        bj_table_sit_out(t->bj, i, false);
    bje_reply_ok(t, req);
    bje_schedule(t);
}

static void bje_on_insurance(bje_table_t *t, gs_request_t *req, int i, bool take)
{
    bj_snapshot_t snap;
    bj_table_snapshot(t->bj, &snap);
    const bj_seat_t *st = &snap.seats[i];
    if (take && snap.phase == BJ_PHASE_INSURANCE && st->in_round &&
        st->insurance == BJ_INS_PENDING && !(st->hands[0].flags & BJ_HAND_BLACKJACK) &&
        bje_committed(&snap, i) + st->bet / 2 > t->seat[i].stack) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS,
                   "not enough chips at the table for insurance");
        return;
    }
    int rc = bj_table_insurance(t->bj, i, take);
    if (rc != 0) {
        bje_refuse_core(t, req, rc);
        return;
    }
    bje_reply_ok(t, req);
    bje_after_input(t);
}

static void bje_on_play(bje_table_t *t, gs_request_t *req, int i, bj_action_t a,
                        const Croupier__BlackjackAction *ba)
{
    bj_snapshot_t snap;
    bj_table_snapshot(t->bj, &snap);
    if (snap.phase == BJ_PHASE_PLAYERS && snap.turn_seat == i && ba->has_hand &&
        (int)ba->hand != snap.turn_hand) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__NOT_YOUR_TURN, "that hand is not on turn");
        return;
    }
    if (snap.phase == BJ_PHASE_PLAYERS && snap.turn_seat == i && (snap.allowed & BJ_ACT_BIT(a)) &&
        (a == BJ_ACT_DOUBLE || a == BJ_ACT_SPLIT)) {
        const bj_seat_t *st = &snap.seats[i];
        int64_t extra = a == BJ_ACT_DOUBLE ? st->hands[snap.turn_hand].bet : st->bet;
        if (bje_committed(&snap, i) + extra > t->seat[i].stack) {
            bje_refuse(t, req, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS,
                       a == BJ_ACT_DOUBLE ? "not enough chips at the table to double"
                                          : "not enough chips at the table to split");
            return;
        }
    }
    int rc = bj_table_act(t->bj, i, a);
    if (rc != 0) {
        bje_refuse_core(t, req, rc);
        return;
    }
    bje_reply_ok(t, req);
    bje_after_input(t);
}

static void bje_on_action(bje_table_t *t, gs_request_t *req, int i)
{
    const Croupier__Action *a = req->frame->action;
    if (a == NULL || a->kind_case != CROUPIER__ACTION__KIND_BLACKJACK || a->blackjack == NULL) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__WRONG_ENGINE, "this table plays blackjack");
        return;
    }
    const Croupier__BlackjackAction *ba = a->blackjack;
    bje_seat_t *s = &t->seat[i];
    if (ba->move == CROUPIER__BLACKJACK_MOVE__BJ_BET) {
        if (!ba->has_amount) {
            bje_refuse(t, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "amount required for BET");
            return;
        }
        bje_on_bet(t, req, i, ba->amount);
        return;
    }
    if (s->state != BJE_SEAT_SEATED) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__NO_ROUND, "you join at the next round");
        return;
    }
    switch (ba->move) {
    case CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE:
        if (!ba->has_insure) {
            bje_refuse(t, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "insure required");
            return;
        }
        bje_on_insurance(t, req, i, ba->insure);
        return;
    case CROUPIER__BLACKJACK_MOVE__BJ_HIT:
        bje_on_play(t, req, i, BJ_ACT_HIT, ba);
        return;
    case CROUPIER__BLACKJACK_MOVE__BJ_STAND:
        bje_on_play(t, req, i, BJ_ACT_STAND, ba);
        return;
    case CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE:
        bje_on_play(t, req, i, BJ_ACT_DOUBLE, ba);
        return;
    case CROUPIER__BLACKJACK_MOVE__BJ_SPLIT:
        bje_on_play(t, req, i, BJ_ACT_SPLIT, ba);
        return;
    case CROUPIER__BLACKJACK_MOVE__BJ_SURRENDER:
        bje_on_play(t, req, i, BJ_ACT_SURRENDER, ba);
        return;
    default:
        bje_refuse(t, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "unknown blackjack move");
        return;
    }
}

static void bje_table_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    bje_table_t *t = state;
    t->desk = desk;
    if (req->kind == GS_REQ_JOIN) {
        bje_on_join(t, req);
        return;
    }
    if (req->kind == GS_REQ_PLAYER_GONE) {
        /* Disconnected players keep their seat; their turns time out meanwhile. */
        gs_request_free(req);
        return;
    }
    int i = bje_find(t, req->player_id);
    if (i < 0 || !bje_seat_present(&t->seat[i])) {
        bje_refuse(t, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated at this table");
        return;
    }
    bje_seat_t *s = &t->seat[i];
    switch (req->kind) {
    case GS_REQ_RESUME:
        bje_reply_snapshot(t, req, i);
        return;
    case GS_REQ_LEAVE: {
        bj_phase_t ph = bj_table_phase(t->bj);
        bj_snapshot_t snap;
        bj_table_snapshot(t->bj, &snap);
        bool in_hand = s->state == BJE_SEAT_SEATED && snap.seats[i].in_round &&
                       ph != BJ_PHASE_IDLE && ph != BJ_PHASE_BETTING;
        bool core_busy =
            s->state == BJE_SEAT_SEATED && ph != BJ_PHASE_IDLE && ph != BJ_PHASE_BETTING;
        if (in_hand || core_busy) {
            s->leaving = true; /* after the round: a hand is never torn */
            bje_reply_ok(t, req);
            return;
        }
        bje_unseat(t, i);
        bje_reply_ok(t, req);
        bje_after_input(t); /* leaving a window may have closed it */
        return;
    }
    case GS_REQ_ACTION:
        bje_on_action(t, req, i);
        return;
    default:
        gs_request_free(req);
        return;
    }
}

static void bje_table_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    bje_table_t *t = state;
    t->desk = desk;
    if (cookie >> 4 != t->timer_gen)
        return; /* replaced or cancelled meanwhile */
    t->timer_armed = false;
    int kind = (int)(cookie & 15);
    if (kind == BJE_TIMER_GAP) {
        t->gap_armed = false;
        bje_start_round(t);
        return;
    }
    bj_phase_t ph = bj_table_phase(t->bj);
    bool due = (kind == BJE_TIMER_BET && ph == BJ_PHASE_BETTING) ||
               (kind == BJE_TIMER_INSURANCE && ph == BJ_PHASE_INSURANCE) ||
               (kind == BJE_TIMER_TURN && ph == BJ_PHASE_PLAYERS);
    if (!due)
        return;
    bj_table_timeout(t->bj);
    bje_after_input(t);
}

static void bje_table_on_intake_stopped(rt_desk_t *desk, void *state)
{
    bje_table_t *t = state;
    t->desk = desk;
    if (!rt_desk_in_round(desk))
        bje_close(t);
    /* else: the round finishes, then the table closes (bje_finish_round). */
}

static void bje_table_on_void(rt_desk_t *desk, void *state)
{
    bje_table_t *t = state;
    t->desk = desk;
    if (rt_desk_in_round(desk)) {
        if (bj_table_phase(t->bj) != BJ_PHASE_IDLE) {
            bj_table_void_round(t->bj);
            t->void_reason = CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT;
        } else {
            t->round_done = true;
            t->no_bets = true;
        }
        bje_after_input(t);
    }
    bje_close(t);
}

static void bje_table_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    bje_table_t *t = state;
    t->desk = desk;
    if (msg->type != BJE_MSG_MONEY || msg->ptr == NULL)
        return;
    money_result_t *res = msg->ptr;
    switch ((int)msg->arg) {
    case BJE_MONEY_BUYIN:
        bje_on_buyin(t, (int)msg->arg2, res);
        break;
    default:
        if (res->status != MONEY_OK)
            log_emit(LOG_ERROR, "bj_settle_failed", "{s:s,s:i,s:s}", "round", res->id, "status",
                     res->status, "error", res->error);
        break;
    }
}

static void bje_table_on_destroy(rt_desk_t *desk, void *state)
{
    bje_table_t *t = state;
    t->desk = desk;
    if (rt_desk_in_round(desk)) {
        if (bj_table_phase(t->bj) != BJ_PHASE_IDLE) {
            t->void_reason = CROUPIER__VOID_REASON__VOID_SHUTDOWN;
            bj_table_void_round(t->bj);
        } else {
            t->round_done = t->no_bets = true;
        }
        t->closing = true; /* no next round, no cash-out from a dying table */
        bje_after_input(t);
    }
    for (int i = 0; i < t->rules.seats; i++)
        if (t->seat[i].state == BJE_SEAT_BUYING && t->seat[i].join != NULL)
            gs_reply(t->eng->gs, t->seat[i].join, CROUPIER__ERROR_CODE__UNAVAILABLE,
                     "table shut down", NULL);
    json_decref(t->hist);
    bj_table_destroy(t->bj);
    free(t);
}

static const gs_desk_ops_t bje_table_ops = {
    .on_request = bje_table_on_request,
    .on_timer = bje_table_on_timer,
    .on_intake_stopped = bje_table_on_intake_stopped,
    .on_void = bje_table_on_void,
    .on_message = bje_table_on_message,
    .on_destroy = bje_table_on_destroy,
};

static int bje_table_open(bje_engine_t *eng, int64_t stake, rt_desk_id_t *out)
{
    bje_table_t *t = xcalloc(1, sizeof *t);
    t->eng = eng;
    t->lobby = eng->lobby;
    t->stake = stake;
    bj_rules_default(&t->rules);
    t->rules.decks = eng->decks;
    t->rules.seats = eng->seats;
    t->rules.min_bet = stake;
    t->rules.max_bet = stake * eng->max_mult;
    char err[160];
    int rc = bj_rules_validate(&t->rules, err, sizeof err);
    if (rc == 0)
        rc = bj_table_create(&t->rules, NULL, bje_on_event, t, &t->bj);
    if (rc != 0) {
        log_emit(LOG_ERROR, "bj_table_rules", "{s:s}", "error", err);
        free(t);
        return -EINVAL;
    }
    rc = gs_desk_create(eng->gs, &bje_table_ops, t, -1, out);
    if (rc != 0) {
        bj_table_destroy(t->bj);
        free(t);
        return rc;
    }
    t->id = *out;
    return 0;
}

/* ---- lobby ------------------------------------------------------------------------------- */

static void bje_lobby_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    bje_lobby_t *lb = state;
    gs_t *gs = gs_of_desk(desk);
    if (req->kind == GS_REQ_PLAYER_GONE) {
        gs_request_free(req);
        return;
    }
    if (req->kind != GS_REQ_JOIN) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated on this server", NULL);
        return;
    }
    if (rt_intake_stopped(rt_desk_rt(desk))) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
        return;
    }
    int64_t stake = req->frame->join->stake;
    bje_engine_t *eng = lb->eng;
    if (stake < 1 || stake > BJ_MAX_BET / eng->max_mult ||
        stake > MONEY_MAX_AMOUNT / eng->buyin_mult) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "stake out of range", NULL);
        return;
    }
    int ref = -1;
    for (int i = 0; i < lb->ntables; i++) {
        if (lb->tables[i].stake == stake && lb->tables[i].free > 0) {
            ref = i;
            break;
        }
    }
    if (ref < 0) {
        if (lb->ntables == BJE_MAX_TABLES) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__OVERLOADED, "no room for another table", NULL);
            return;
        }
        rt_desk_id_t id;
        if (bje_table_open(eng, stake, &id) != 0) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "could not open a table", NULL);
            return;
        }
        ref = lb->ntables++;
        lb->tables[ref].id = id;
        lb->tables[ref].stake = stake;
        lb->tables[ref].free = eng->seats;
    }
    lb->tables[ref].free--;
    gs_request_post(gs, lb->tables[ref].id, req);
}

static void bje_lobby_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    (void)desk;
    bje_lobby_t *lb = state;
    if (msg->type != BJE_MSG_SEAT_FREED)
        return;
    for (int i = 0; i < lb->ntables; i++)
        if (lb->tables[i].id == msg->arg && lb->tables[i].free < lb->eng->seats)
            lb->tables[i].free++;
}

static void bje_lobby_noop(rt_desk_t *desk, void *state)
{
    (void)desk;
    (void)state;
}

static void bje_lobby_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    (void)desk;
    (void)state;
    (void)cookie;
}

static void bje_lobby_on_destroy(rt_desk_t *desk, void *state)
{
    (void)desk;
    free(state);
}

static const gs_desk_ops_t bje_lobby_ops = {
    .on_request = bje_lobby_on_request,
    .on_timer = bje_lobby_on_timer,
    .on_intake_stopped = bje_lobby_noop,
    .on_void = bje_lobby_noop,
    .on_message = bje_lobby_on_message,
    .on_destroy = bje_lobby_on_destroy,
};

/* ---- engine ------------------------------------------------------------------------------ */

static void bje_fund_cb(money_result_t *res, void *arg)
{
    (void)arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "bj_house_fund_failed", "{s:s,s:s}", "op", res->id, "error",
                 res->error);
    else
        log_emit(LOG_INFO, "bj_house_funded", "{s:s,s:b,s:I}", "op", res->id, "replayed",
                 res->replayed, "balance", (json_int_t)res->balances[0]);
    free(res);
}

static void bje_engine_free(bje_engine_t *eng)
{
    for (int i = 0; i < eng->nstacked; i++)
        free(eng->stacked[i]);
    free(eng);
}

/*
 * Creates the engine: settings from the environment, the lobby desk, and the house wallet's
 * one-time funding (idempotent by its fixed operation id). Returns 0 or a negative errno.
 */
static int bje_create(gs_t *gs, const char *games, void **out)
{
    if (games != NULL && strcmp(games, BJE_GAME) != 0) {
        log_emit(LOG_ERROR, "engine_bad_games", "{s:s,s:s}", "engine", "persistent", "games",
                 games);
        return -EINVAL;
    }
    bje_engine_t *eng = xcalloc(1, sizeof *eng);
    eng->gs = gs;
    eng->bet_ms = (int)bje_env_ll("CROUPIER_BJ_BET_MS", 10000, 1, 3600000);
    eng->turn_ms = (int)bje_env_ll("CROUPIER_BJ_TURN_MS", 15000, 1, 3600000);
    eng->gap_ms = (int)bje_env_ll("CROUPIER_BJ_GAP_MS", 1500, 0, 3600000);
    eng->seats = (int)bje_env_ll("CROUPIER_BJ_SEATS", 7, 1, BJ_MAX_SEATS);
    eng->decks = (int)bje_env_ll("CROUPIER_BJ_DECKS", 6, 1, BJ_MAX_DECKS);
    eng->max_mult = bje_env_ll("CROUPIER_BJ_MAX_MULT", 100, 1, 1000000);
    eng->buyin_mult = bje_env_ll("CROUPIER_BJ_BUYIN", 100, 1, 1000000);
    eng->sitout_after = (int)bje_env_ll("CROUPIER_BJ_SITOUT_AFTER", 2, 1, 1000);
    eng->house_fund = bje_env_ll("CROUPIER_BJ_HOUSE_FUND", 1000000000000LL, 1, MONEY_MAX_AMOUNT);
    const char *svc = gs_service(gs) != NULL ? gs_service(gs) : "persistent";
    snprintf(eng->service, sizeof eng->service, "%s", svc);
    char house[160];
    snprintf(house, sizeof house, "house.%s", eng->service);
    if (strlen(house) < sizeof eng->house)
        memcpy(eng->house, house, strlen(house) + 1);
    if (!money_valid_player(house)) {
        log_emit(LOG_ERROR, "bj_bad_service", "{s:s}", "service", svc);
        bje_engine_free(eng);
        return -EINVAL;
    }
    const char *stack = getenv("CROUPIER_BJ_TEST_STACK");
    if (stack != NULL) {
        if (bje_parse_stack(eng, stack) != 0) {
            log_emit(LOG_ERROR, "bj_bad_test_stack", "{s:s}", "value", stack);
            bje_engine_free(eng);
            return -EINVAL;
        }
        log_emit(LOG_WARN, "bj_test_stack_in_use", "{s:i}", "rounds", eng->nstacked);
    }
    money_writer_t *w = gs_money(gs);
    if (w != NULL) {
        char op[MONEY_ID_MAX + 40];
        snprintf(op, sizeof op, "bj-house-fund.%s", eng->service);
        int rc = money_writer_submit_cashout(w, eng->house, eng->house_fund, op, bje_fund_cb, NULL);
        if (rc != 0)
            log_emit(LOG_ERROR, "bj_house_fund_refused", "{s:i}", "errno", -rc);
    }
    bje_lobby_t *lb = xcalloc(1, sizeof *lb);
    lb->eng = eng;
    int rc = gs_desk_create(gs, &bje_lobby_ops, lb, 0, &eng->lobby);
    if (rc != 0) {
        free(lb);
        bje_engine_free(eng);
        return rc;
    }
    *out = eng;
    return 0;
}

static void bje_join(void *e, gs_request_t *req)
{
    bje_engine_t *eng = e;
    const Croupier__Join *j = req->frame->join;
    if (strcmp(j->game, BJE_GAME) != 0) {
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__NO_SUCH_GAME,
                 "this server runs game 'blackjack'", NULL);
        return;
    }
    gs_request_post(eng->gs, eng->lobby, req);
}

static const char *bje_games(void *e)
{
    (void)e;
    return BJE_GAME;
}

static void bje_destroy(void *e)
{
    if (e != NULL)
        bje_engine_free(e);
}

const engine_ops_t bj_engine_ops = {
    .name = "persistent",
    .engine = CROUPIER__ENGINE__ENGINE_PERSISTENT,
    .create = bje_create,
    .join = bje_join,
    .games = bje_games,
    .destroy = bje_destroy,
};
