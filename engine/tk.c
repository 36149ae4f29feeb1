/*
 * tk -- the table kit. The contract is tk.h; this file is its one implementation.
 *
 * Desks. One lobby desk per engine (worker 0) routes joins to table desks (spread over the
 * workers). The engine's main-loop side looks up the joining player's wallet (rconn) to choose
 * the buy-in, and keeps the lobby ads (lobby.h publisher, any thread).
 *
 * Messages between them:
 *   main  -> lobby  TK_MSG_JOIN          a join with its buy-in chosen (ptr = tk_join_t)
 *   lobby -> table  TK_MSG_JOIN          the same join, a seat reserved for it
 *   table -> lobby  TK_MSG_SEATS         arg = table desk, arg2 = joins seen << 32 | seats free
 *   table -> lobby  TK_MSG_IDLE          the table has been empty for idle_ms (arg2 as SEATS)
 *   lobby -> table  TK_MSG_RETIRE        arg2 = 1: no join is on its way, destroy yourself if
 *                                        still empty; 0: stay (a join is on its way)
 *
 * The lobby counts the joins it sent to each table and the table the joins it received, so a
 * table's report of its free seats never forgets a join still on its way there.
 *   table -> lobby  TK_MSG_CLOSED        the table closed (drain): forget its free seats
 *   writer -> table TK_MSG_BUYIN_DONE    a buy-in's result (a money follow-up, gs.h)
 *   writer -> table TK_MSG_CASHOUT_DONE  a closing cash-out was applied
 *   writer -> table TK_MSG_SETTLED       a round's settlement result (a money follow-up): only
 *                                        now is RoundEnd pushed
 * Whole-table moves (tk.h "moves"; the handoff calls run on the engine's money_jobs thread):
 *   main  -> lobby  TK_MSG_ADOPT         an Adopt request (ptr = gs_request_t): to the table of
 *                                        that offer, or to a new table opened for it
 *   lobby -> table  TK_MSG_ADOPT         the same request
 *   jobs  -> table  TK_MSG_MOVE_DONE     a handoff call's result (ptr = tk_job_t)
 *   table -> lobby  TK_MSG_GONE          the table moved away, or an adoption failed: forget it
 */
#include "tk.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "jobs.h"
#include "lobby.h"
#include "log.h"
#include "money.h"
#include "money_writer.h"
#include "registry.h"
#include "rconn.h"
#include "room.h"
#include "xmalloc.h"

#define TK_MAX_STAKE (MONEY_MAX_AMOUNT / 1000000)
#define TK_SNAP_MAX 8192

enum {
    TK_MSG_JOIN = GS_MSG_ENGINE,
    TK_MSG_SEATS,
    TK_MSG_IDLE,
    TK_MSG_RETIRE,
    TK_MSG_CLOSED,
    TK_MSG_BUYIN_DONE,
    TK_MSG_CASHOUT_DONE,
    TK_MSG_TOPUP_DONE, /* writer -> table: a top-up's result (arg = seat, arg2 = op number) */
    TK_MSG_OPEN,       /* any -> lobby: open a table with bots (ptr = tk_open_t) */
    TK_MSG_ADD_BOTS,   /* lobby -> table: seat arg bots, the table plays by itself */
    TK_MSG_SETTLED,    /* writer -> table: the round's settlement result (arg2 = round seq) */
    TK_MSG_ADOPT,      /* main -> lobby -> table: an Adopt request (ptr = gs_request_t) */
    TK_MSG_MOVE_DONE,  /* jobs -> table: a handoff call's result (ptr = tk_job_t) */
    TK_MSG_GONE,       /* table -> lobby: forget the table (arg = desk) */
    TK_MSG_ROOM,       /* table -> lobby: the table is the room of code ptr (arg = desk) */
};

enum {
    TK_TIMER_GAP = 1,
    TK_TIMER_TURN,
    TK_TIMER_IDLE,
    TK_TIMER_NOTICE,
    TK_TIMER_FILL,
    TK_TIMER_GAME,
    TK_TIMER_MOVE,
    TK_TIMER_ROOM
};

/* Server bots' player ids: a range no wallet player uses. */
#define TK_BOT_ID_BASE (1ULL << 62)

typedef enum { TK_EMPTY = 0, TK_BUYING, TK_SEATED, TK_LEAVING, TK_CLOSED } tk_seat_state_t;

typedef struct tk_engine {
    gs_t *gs;
    const tk_game_t *game;
    tk_settings_t set;
    rt_desk_id_t lobby;
    rconn_t *rc; /* main loop: wallet look-ups */
    lobby_pub_t *ads;
    bool destroying;
    char house[MONEY_NAME_MAX + 1]; /* the house wallet (bots, banking games) */
    char games[128];                /* the games served: tk_game_t.games or a subset (--games) */
    char svc[24];                   /* the service in seat accounts and op ids (tk_service_token) */
    metrics_t *m_tables, *m_opened, *m_seated, *m_timeouts, *m_auto;
    metrics_t *m_moved_out, *m_moved_in, *m_move_withdrawn, *m_move_failed;
    money_jobs_t *jobs; /* handoff calls (NULL without Redis: tables close instead of moving) */
    pthread_mutex_t jobs_mu;
    bool rt_stopped; /* under jobs_mu: the lobby desk is gone, results are no longer posted */
    char labels[96];
} tk_engine_t;

/* A join on its way from the main loop to a table, with the buy-in chosen. */
typedef struct tk_room tk_room_t;

typedef struct {
    gs_t *gs;
    gs_request_t *req;
    int64_t amount;
    tk_room_t *room; /* CreateRoom: the room to open (owned until a table takes it) */
} tk_join_t;

static void tk_join_free(tk_join_t *j)
{
    if (j != NULL)
        free(j->room);
    free(j);
}

typedef struct {
    rt_desk_id_t desk;
    char game[MONEY_NAME_MAX + 1];
    int64_t stake;
    int seats, free;
    uint32_t joins_sent; /* joins posted to the table (it reports the number it received) */
    bool closed;
    char offer[MONEY_ID_MAX + 1]; /* the handoff offer the table was opened to adopt, or "" */
    bool is_room;                 /* a private room: never advertised nor matched */
    char room[ROOM_CODE_LEN + 1]; /* its code, once drawn */
} tk_ref_t;

/* A table with bots to open (tk_engine_open_table). */
typedef struct {
    char game[MONEY_NAME_MAX + 1];
    int64_t stake;
    int bots;
} tk_open_t;

typedef struct {
    tk_engine_t *eng;
    tk_ref_t *refs;
    size_t nrefs, cap;
} tk_lobby_t;

typedef struct {
    uint64_t player;
    tk_seat_state_t state;
    bool away;    /* the connection is gone (PlayerGone); cleared by a resume or an action */
    bool trustee; /* timed out: the automatic move plays after TK_TRUSTEE_MS */
    bool playing; /* dealt into the current round */
    bool bot;     /* a server bot: plays for the house, never counts as a human */
    bool topping; /* a top-up is in flight (tk_game_t.topup) */
    bool leave_after_topup; /* left while topping: unseated once the top-up is applied */
    uint64_t topup_op;      /* the op number of the top-up in flight (a cash-out may follow it) */
    bool out;               /* sitting out: no round deals it in (tk_seat_sit_out) */
    int64_t stack;
    int64_t bank_ms;
    gs_request_t *join_req;
    int64_t buyin; /* the buy-in (or top-up) in flight */
    uint8_t shown[TK_SHOWN_MAX];
    size_t nshown;
    /* kept across occupants (memset up to ops clears an occupant): */
    uint64_t ops; /* money operations of this seat so far (op ids) */
    char acct[MONEY_NAME_MAX + 1];
} tk_seat_t;

/* A whole-table move (tk.h "moves"): the old table's side, then the adopter's. */
typedef enum {
    TK_MOVE_NONE = 0,
    TK_MOVE_PREPARING,   /* waiting for the seats' money in flight before the offer */
    TK_MOVE_OFFERING,    /* the offer is being written */
    TK_MOVE_OFFERED,     /* waiting for an adopter (TK_TIMER_MOVE checks the offer) */
    TK_MOVE_CHECKING,    /* a check of the offer is in flight */
    TK_MOVE_WITHDRAWING, /* nobody adopted in time: taking the offer back */
    TK_MOVE_ADOPTING,    /* adopter: the adoption is in flight (Adopt requests wait) */
} tk_move_t;

#define TK_ADOPT_QUEUE (2 * TK_MAX_SEATS)

/* A private room (tk.h "rooms"): its record (lease/room.h) and what the table does with it. */
struct tk_room {
    room_record_t rec;
    tk_join_t *create; /* the host's CreateRoom, waiting for its code */
    bool ended;
};

struct tk_table {
    tk_engine_t *eng;
    rt_desk_t *desk; /* the desk of the callback running now */
    void *g;
    char game[MONEY_NAME_MAX + 1];
    int64_t stake;
    int nseats;
    tk_seat_t seat[TK_MAX_SEATS];
    uint32_t slot;  /* the server's slot and epoch when the table was made: they name its */
    uint64_t epoch; /* seat accounts and op ids for the table's whole life */
    uint64_t seq;   /* rounds begun */
    uint64_t event_seq;
    int button;
    bool gap_armed, closed, close_told, idle_armed, retiring, fill_armed;
    bool bot_table;    /* opened with bots (tk_engine_open_table): they never stand up */
    bool forget_round; /* round_void() is still owed for a round the kit voided */
    /* The round ended and its settlement is on its way: RoundEnd (and everything after it) waits
     * for the settlement to be applied, so no player is ever shown a result that is not. */
    bool settling;
    int64_t settle_delta[TK_MAX_SEATS], settle_rake;
    int pending_cashouts;
    uint32_t joins_seen;               /* TK_MSG_JOIN received (tk_tell_lobby reports it) */
    uint64_t turn_serial, idle_serial; /* of the turn / idle timers: an older one is stale */
    int turn_seat;
    rt_timer_id_t turn_timer;
    bool turn_armed;
    int64_t turn_start_ms, turn_allowed_ms;
    json_t *history;
    char round_id[MONEY_ID_MAX + 1];
    uint8_t *snap; /* tk_snapshot_state() writes the state body here */
    size_t snap_len;
    bool snap_set;
    Croupier__Snapshot *snap_msg; /* the Snapshot being built, during snapshot() only */
    /* Whole-table moves. */
    tk_move_t move;
    bool move_refused; /* it closes instead (a withdrawn or failed offer) */
    bool fenced;       /* the server fenced itself (tk_table_on_fence): closed, players told */
    bool adopted;      /* the table came here by a move (offer_id is the offer it adopted) */
    bool move_held;    /* the move counts as a human desk: the drain waits (tk_move_hold) */
    int64_t move_until_ms;
    int64_t move_start_ms;
    int move_checks; /* reads of the offer so far (tk_move_check_ms) */
    char offer_id[MONEY_ID_MAX + 1];
    gs_request_t *adopt_q[TK_ADOPT_QUEUE]; /* Adopt requests waiting for the adoption */
    int nadopt_q;
    tk_room_t *room;   /* a private room, or NULL */
    char options[256]; /* the room's rule options as the engine's option text ("": the
                          server's, tk_engine_options) */
};

static void tk_room_end(tk_table_t *t, const char *detail);
static void tk_room_dealt(tk_table_t *t, const int64_t *delta);
static void tk_room_started(tk_table_t *t);
static bool tk_room_ended(const tk_table_t *t)
{
    return t->room != NULL && t->room->ended;
}

static void tk_maybe_schedule(tk_table_t *t);
static void tk_move_or_close(tk_table_t *t);
static void tk_topup(tk_table_t *t, int i);
static void tk_buyin_range(const tk_engine_t *eng, const char *game, int64_t stake, int64_t *max,
                           int64_t *min);

Croupier__Snapshot *tk_snapshot_msg(tk_table_t *t)
{
    return t->snap_msg;
}

static const char *tk_code_name(Croupier__ErrorCode code)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&croupier__error_code__descriptor, (int)code);
    return v != NULL ? v->name : "UNKNOWN";
}

static void tk_count_refusal(tk_engine_t *eng, Croupier__ErrorCode code)
{
    char labels[160];
    snprintf(labels, sizeof labels, "%s,code=\"%s\"", eng->labels, tk_code_name(code));
    metrics_add(metrics_counter(gs_metrics(eng->gs), "tk_refusals_total", labels,
                                "Requests a kit table refused, by code"),
                1);
}

static void tk_player_name(uint64_t player, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu64, player);
}

/* The wallet a seat's chips come from and go back to: the player's, or the house's for a bot. */
static void tk_owner_wallet(const tk_engine_t *eng, const tk_seat_t *s, char *buf, size_t len)
{
    if (s->bot)
        snprintf(buf, len, "%s", eng->house);
    else
        tk_player_name(s->player, buf, len);
}

/* ---- money ------------------------------------------------------------------------------- */

typedef struct {
    gs_t *gs;
    rt_t *rt;
    rt_desk_id_t desk;
    int seat;
    uint64_t n;
    int msg; /* TK_MSG_BUYIN_DONE or TK_MSG_TOPUP_DONE */
} tk_op_t;

static void tk_op_id(tk_table_t *t, int seat, uint64_t n, const char *tag, char *buf, size_t len)
{
    snprintf(buf, len, "tk:%s:%" PRIu32 ":%" PRIu64 ":%" PRIx64 ":%d:%" PRIu64 ":%s", t->eng->svc,
             t->slot, t->epoch, rt_desk_id(t->desk), seat, n, tag);
}

/* Writer thread: logs a failed money item that needs no answer at the desk. */
static void tk_money_log_cb(money_result_t *res, void *arg)
{
    (void)arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "tk_money_failed", "{s:i,s:s,s:i,s:s}", "kind", res->kind, "id",
                 res->id, "status", res->status, "error", res->error);
    free(res);
}

/* Writer thread: a buy-in's or a top-up's result goes back to its table desk as op->msg (a
 * money follow-up, gs.h). */
static void tk_seat_op_cb(money_result_t *res, void *arg)
{
    tk_op_t *op = arg;
    res->arg = op->gs;
    rt_msg_t m = {.type = op->msg,
                  .arg = (uint64_t)op->seat,
                  .arg2 = op->n,
                  .ptr = res,
                  .free_fn = gs_money_result_free};
    rt_post(op->rt, op->desk, &m);
    free(op);
}

/* One cash-out in flight (one seat transfer: the seat account's chips back to their owner's
 * wallet, atomically, money.h "Held chips"). */
typedef struct {
    rt_t *rt;
    rt_desk_id_t desk;
    bool notify; /* tell the desk when it is applied (the table is closing) */
    int64_t amount;
    char player[MONEY_NAME_MAX + 1];
} tk_cash_t;

/* Writer thread: the cash-out answered. A failure is logged; the chips stay in the seat account,
 * which is recorded as held, so the recovery at the server's exit (or after a crash) returns
 * them (docs/queues.md). */
static void tk_cash_cb(money_result_t *res, void *arg)
{
    tk_cash_t *c = arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "tk_cash_out_failed", "{s:s,s:s,s:I,s:i,s:s}", "player", c->player,
                 "op", res->id, "amount", (json_int_t)c->amount, "status", res->status, "error",
                 res->error);
    free(res);
    if (c->notify) {
        rt_msg_t m = {.type = TK_MSG_CASHOUT_DONE};
        rt_post(c->rt, c->desk, &m);
    }
    free(c);
}

/* The seat transfer record of seat i (its account and owner under the table's lease). */
static money_seat_t tk_money_seat(const tk_table_t *t, int i, const char *owner)
{
    return (money_seat_t){
        .slot = t->slot, .epoch = t->epoch, .account = t->seat[i].acct, .owner = owner};
}

/* Moves seat's stack back to its player's wallet; the stack is 0 afterwards. When the table is
 * closing the desk counts the cash-out until it is applied (pending_cashouts). */
static void tk_cash_out(tk_table_t *t, int seat)
{
    tk_seat_t *s = &t->seat[seat];
    int64_t amount = s->stack;
    s->stack = 0;
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    if (amount <= 0 || w == NULL || t->eng->game->money == TK_MONEY_WALLET)
        return;
    tk_cash_t *c = xcalloc(1, sizeof *c);
    *c = (tk_cash_t){.rt = rt_desk_rt(t->desk),
                     .desk = rt_desk_id(t->desk),
                     .notify = t->closed,
                     .amount = amount};
    tk_owner_wallet(t->eng, s, c->player, sizeof c->player);
    char op[MONEY_ID_MAX + 1];
    tk_op_id(t, seat, ++s->ops, "co", op, sizeof op);
    bool notify = c->notify;
    char player[MONEY_NAME_MAX + 1];
    memcpy(player, c->player, sizeof player);
    money_seat_t ms = tk_money_seat(t, seat, player);
    /* After a successful submit c belongs to the writer thread. */
    int rc = money_writer_submit_seat(w, MONEY_KIND_SEAT_OUT, &ms, amount, op, tk_cash_cb, c);
    if (rc != 0)
        free(c);
    else if (notify)
        t->pending_cashouts++;
    log_emit(rc == 0 ? LOG_INFO : LOG_ERROR, "tk_cash_out", "{s:s,s:s,s:I,s:i}", "player", player,
             "account", s->acct, "amount", (json_int_t)amount, "errno", -rc);
}

/* ---- pushes ------------------------------------------------------------------------------ */

static bool tk_seat_told(const tk_seat_t *s)
{
    return s->state == TK_SEATED || s->state == TK_LEAVING || s->state == TK_CLOSED;
}

void tk_push_seat(tk_table_t *t, int seat, Croupier__ServerMessage *m)
{
    m->has_event_seq = true;
    m->event_seq = ++t->event_seq;
    if (seat >= 0 && seat < t->nseats && tk_seat_told(&t->seat[seat]) && !t->seat[seat].bot)
        gs_push(gs_of_desk(t->desk), t->seat[seat].player, m);
}

void tk_push_all(tk_table_t *t, Croupier__ServerMessage *m)
{
    m->has_event_seq = true;
    m->event_seq = ++t->event_seq;
    for (int i = 0; i < t->nseats; i++)
        if (tk_seat_told(&t->seat[i]) && !t->seat[i].bot)
            gs_push(gs_of_desk(t->desk), t->seat[i].player, m);
}

/* Encodes a game message into a fresh buffer (caller frees); NULL when it breaks a rule (a bug
 * of the game, logged). */
static uint8_t *tk_pack(const ProtobufCMessage *msg, size_t *len)
{
    frame_error_t err;
    ProtobufCBinaryData body = {0};
    if (frame_pack_game_body(msg, NULL, NULL, &body, &err) != 0) {
        log_emit(LOG_ERROR, "tk_game_message_refused", "{s:s,s:s}", "message",
                 msg->descriptor->name, "detail", err.detail);
        return NULL;
    }
    *len = body.len;
    return body.data;
}

int tk_push_event(tk_table_t *t, int seat, const ProtobufCMessage *ev)
{
    size_t len;
    uint8_t *body = tk_pack(ev, &len);
    if (body == NULL)
        return -EINVAL;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__GameEvent ge = CROUPIER__GAME_EVENT__INIT;
    ge.body.data = body;
    ge.body.len = len;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT;
    sm.game_event = &ge;
    if (seat < 0)
        tk_push_all(t, &sm);
    else
        tk_push_seat(t, seat, &sm);
    free(body);
    return 0;
}

int tk_push_play(tk_table_t *t, int seat, const ProtobufCMessage *a, bool timed_out)
{
    size_t len;
    uint8_t *body = tk_pack(a, &len);
    if (body == NULL)
        return -EINVAL;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play play = CROUPIER__PLAY__INIT;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    ga.body.data = body;
    ga.body.len = len;
    act.kind_case = CROUPIER__ACTION__KIND_GAME;
    act.game = &ga;
    play.seat = (uint32_t)seat;
    play.action = &act;
    if (timed_out) {
        play.has_timed_out = true;
        play.timed_out = true;
    }
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &play;
    tk_push_all(t, &sm);
    free(body);
    return 0;
}

void tk_push_deal(tk_table_t *t, int seat, const uint8_t *cards, size_t n)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Deal d = CROUPIER__DEAL__INIT;
    d.has_seat = seat >= 0;
    d.seat = seat >= 0 ? (uint32_t)seat : 0;
    d.round_id = t->round_id;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
    sm.deal = &d;
    sm.has_event_seq = true;
    sm.event_seq = ++t->event_seq;
    gs_t *gs = gs_of_desk(t->desk);
    for (int i = 0; i < t->nseats; i++) {
        if (!tk_seat_told(&t->seat[i]) || t->seat[i].bot)
            continue;
        bool own = cards != NULL && (i == seat || seat < 0);
        d.has_cards = own && n > 0;
        d.cards.data = own ? (uint8_t *)cards : NULL;
        d.cards.len = own ? n : 0;
        d.has_count = !own;
        d.count = (uint32_t)n;
        gs_push(gs, t->seat[i].player, &sm);
    }
}

/* ---- accessors --------------------------------------------------------------------------- */

int tk_seats(const tk_table_t *t)
{
    return t->nseats;
}

const char *tk_game_name(const tk_table_t *t)
{
    return t->game;
}

int64_t tk_stake(const tk_table_t *t)
{
    return t->stake;
}

const tk_settings_t *tk_settings(const tk_table_t *t)
{
    return &t->eng->set;
}

uint64_t tk_seat_player(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats && tk_seat_told(&t->seat[seat]) ? t->seat[seat].player : 0;
}

bool tk_seat_playing(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats && t->seat[seat].playing;
}

int64_t tk_seat_stack(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats ? t->seat[seat].stack : 0;
}

int tk_timer(tk_table_t *t, int64_t delay_ms, uint64_t cookie, rt_timer_id_t *out)
{
    return rt_desk_timer_arm(t->desk, delay_ms, TK_TIMER_GAME | (cookie << 8), out);
}

int tk_timer_cancel(tk_table_t *t, rt_timer_id_t id)
{
    return rt_desk_timer_cancel(t->desk, id);
}

void tk_seat_sit_out(tk_table_t *t, int seat, bool out)
{
    if (seat < 0 || seat >= t->nseats || t->seat[seat].out == out)
        return;
    t->seat[seat].out = out;
    if (!out)
        tk_maybe_schedule(t);
}

bool tk_seat_sitting_out(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats && t->seat[seat].out;
}

const char *tk_engine_options(const tk_table_t *t)
{
    if (t->options[0] != '\0')
        return t->options;
    return gs_engine_options(t->eng->gs);
}

void *tk_game_state(tk_table_t *t)
{
    return t->g;
}

uint64_t tk_desk_id(tk_table_t *t)
{
    return rt_desk_id(t->desk);
}

bool tk_seat_bot(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats && t->seat[seat].bot;
}

int tk_button(const tk_table_t *t)
{
    return t->button;
}

uint64_t tk_round_seq(const tk_table_t *t)
{
    return t->seq;
}

const char *tk_round_id(tk_table_t *t)
{
    return t->round_id;
}

int64_t tk_rake(const tk_table_t *t, int64_t pot)
{
    const tk_settings_t *s = &t->eng->set;
    int64_t rake = pot / 10000 * s->rake_bp + pot % 10000 * s->rake_bp / 10000;
    if (s->rake_cap > 0 && rake > s->rake_cap)
        rake = s->rake_cap;
    return rake < 0 ? 0 : rake;
}

/* ---- history ----------------------------------------------------------------------------- */

/* The text form of wire cards ("AsKd", jokers "Xb" / "Xr"), into out (2 * n + 1 bytes). */
static void tk_cards_text(const uint8_t *cards, size_t n, char *out)
{
    static const char ranks[] = "??23456789TJQKAX";
    static const char suits[] = "cdhs";
    for (size_t i = 0; i < n; i++) {
        unsigned r = FRAME_CARD_RANK(cards[i]);
        out[2 * i] = r < sizeof ranks - 1 ? ranks[r] : '?';
        out[2 * i + 1] = r == FRAME_RANK_JOKER ? "br??"[FRAME_CARD_SUIT(cards[i])]
                                               : suits[FRAME_CARD_SUIT(cards[i])];
    }
    out[2 * n] = '\0';
}

void tk_history_card(tk_table_t *t, int seat, uint8_t card)
{
    char text[3];
    tk_cards_text(&card, 1, text);
    if (t->history != NULL)
        money_history_add_card(t->history, seat, text);
}

void tk_history_action(tk_table_t *t, int seat, const char *action, int64_t amount)
{
    if (t->history != NULL)
        money_history_add_action(t->history, seat, action, amount);
}

void tk_round_show(tk_table_t *t, int seat, const uint8_t *cards, size_t n)
{
    if (seat < 0 || seat >= t->nseats || n > sizeof t->seat[seat].shown)
        return;
    memcpy(t->seat[seat].shown, cards, n);
    t->seat[seat].nshown = n;
}

/* Hands the round's history to the writer (once its settlement answered, tk_settled): one record
 * for every round, completed or voided (docs/hand-history.md). */
static void tk_history_submit(tk_table_t *t, const int64_t *delta, int64_t rake, bool voided,
                              Croupier__VoidReason why)
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
    money_round_id_t rid = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), t->seq);
    money_history_set_round(h, &rid);
    json_object_set_new(h, "engine", json_string(t->eng->game->engine));
    json_object_set_new(h, "stake", json_integer(t->stake));
    json_object_set_new(h, "button", json_integer(t->button));
    json_object_set_new(h, "outcome", json_string(voided ? "voided" : "completed"));
    json_t *shown = json_array();
    for (int i = 0; i < t->nseats; i++) {
        if (!t->seat[i].playing)
            continue;
        money_history_add_result(h, i, voided ? 0 : delta[i]);
        if (voided || t->seat[i].nshown == 0)
            continue;
        char text[2 * sizeof t->seat[i].shown + 1];
        tk_cards_text(t->seat[i].shown, t->seat[i].nshown, text);
        json_array_append_new(shown, json_pack("{s:i,s:s}", "seat", i, "cards", text));
    }
    json_object_set_new(h, "shown", shown);
    json_object_set_new(h, "rake", json_integer(voided ? 0 : rake));
    if (voided) {
        const ProtobufCEnumValue *v =
            protobuf_c_enum_descriptor_get_value(&croupier__void_reason__descriptor, (int)why);
        json_object_set_new(h, "void_reason", json_string(v != NULL ? v->name : "VOID_NONE"));
    }
    int rc = money_writer_submit_history(w, t->game, h, tk_money_log_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "tk_history_refused", "{s:i}", "errno", -rc);
}

/* ---- seats ------------------------------------------------------------------------------- */

static unsigned tk_humans(const tk_table_t *t)
{
    unsigned humans = 0;
    for (int i = 0; i < t->nseats; i++)
        humans += t->seat[i].state != TK_EMPTY && !t->seat[i].bot;
    return humans;
}

static void tk_sync(tk_table_t *t)
{
    unsigned humans = tk_humans(t);
    unsigned before = rt_desk_humans(t->desk);
    rt_desk_set_humans(t->desk, humans);
    metrics_add(t->eng->m_seated, (double)humans - (double)before);
}

static int tk_free_seats(const tk_table_t *t)
{
    int n = 0;
    for (int i = 0; i < t->nseats; i++)
        n += t->seat[i].state == TK_EMPTY;
    return n;
}

/* The free seats and the joins received, as TK_MSG_SEATS / TK_MSG_IDLE carry them. */
static uint64_t tk_seats_word(const tk_table_t *t)
{
    return (uint64_t)t->joins_seen << 32 | (uint32_t)tk_free_seats(t);
}

/* Tells the lobby how many seats are free now (it re-advertises the table). */
static void tk_tell_lobby(tk_table_t *t)
{
    if (t->closed)
        return;
    rt_msg_t m = {.type = TK_MSG_SEATS, .arg = rt_desk_id(t->desk), .arg2 = tk_seats_word(t)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
}

static void tk_maybe_idle(tk_table_t *t);
static void tk_bots_stand(tk_table_t *t);
static void tk_maybe_fill(tk_table_t *t);

/* Empties seat i (its chips must be cashed out already). */
static void tk_unseat(tk_table_t *t, int i)
{
    tk_seat_t *s = &t->seat[i];
    bool human = !s->bot;
    if (human)
        gs_seat(gs_of_desk(t->desk), s->player, 0);
    if (t->eng->game->seat_changed != NULL)
        t->eng->game->seat_changed(t, t->g, i, false);
    memset(s, 0, offsetof(tk_seat_t, ops)); /* op ids stay unique for the next occupant */
    tk_sync(t);
    if (human)
        tk_bots_stand(t);
    tk_tell_lobby(t);
    tk_maybe_idle(t);
}

/* The last human left (and no round runs): the bots stand up too, cashed out to the house. A
 * table opened with bots keeps them. */
static void tk_bots_stand(tk_table_t *t)
{
    if (t->bot_table || rt_desk_in_round(t->desk) || tk_humans(t) > 0)
        return;
    for (int i = 0; i < t->nseats; i++) {
        /* A bot still topping up stands when its top-up is applied (tk_topup_done). */
        if (t->seat[i].bot && t->seat[i].state == TK_SEATED && !t->seat[i].topping) {
            tk_cash_out(t, i);
            tk_unseat(t, i);
        }
    }
}

static void tk_fill_seats(tk_table_t *t, Croupier__SeatInfo *infos, Croupier__SeatInfo **ptrs,
                          size_t *n)
{
    *n = 0;
    for (int i = 0; i < t->nseats; i++) {
        const tk_seat_t *s = &t->seat[i];
        if (!tk_seat_told(s))
            continue;
        Croupier__SeatInfo si = CROUPIER__SEAT_INFO__INIT;
        si.seat = (uint32_t)i;
        si.has_player_id = true;
        si.player_id = s->player;
        si.has_chips = true;
        si.chips = s->stack;
        si.has_bot = true;
        si.bot = s->bot;
        si.has_connected = true;
        si.connected = !s->away;
        infos[*n] = si;
        ptrs[*n] = &infos[*n];
        (*n)++;
    }
}

static void tk_reply_joined(tk_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Joined j = CROUPIER__JOINED__INIT;
    Croupier__SeatInfo infos[TK_MAX_SEATS];
    Croupier__SeatInfo *ptrs[TK_MAX_SEATS];
    j.desk_id = rt_desk_id(t->desk);
    j.seat = (uint32_t)seat;
    j.engine = t->eng->game->proto_engine;
    j.game = t->game;
    j.stake = t->stake;
    tk_fill_seats(t, infos, ptrs, &j.n_seats);
    j.seats = ptrs;
    room_info_buf_t rib;
    if (t->room != NULL) {
        room_info_fill(&t->room->rec, &rib);
        j.room = &rib.info;
    }
    if (t->eng->game->joined != NULL)
        t->eng->game->joined(t, t->g, seat, &j);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED;
    sm.joined = &j;
    gs_reply(gs_of_desk(t->desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

int tk_snapshot_state(tk_table_t *t, const ProtobufCMessage *state)
{
    size_t len;
    uint8_t *body = tk_pack(state, &len);
    if (body == NULL)
        return -EINVAL;
    free(t->snap);
    t->snap = body;
    t->snap_len = len;
    t->snap_set = true;
    return 0;
}

/* The full state for a (re)connecting player: the kit's header and the game's state. */
static void tk_reply_snapshot(tk_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot s = CROUPIER__SNAPSHOT__INIT;
    Croupier__GameState gst = CROUPIER__GAME_STATE__INIT;
    Croupier__SeatInfo infos[TK_MAX_SEATS];
    Croupier__SeatInfo *ptrs[TK_MAX_SEATS];
    s.desk_id = rt_desk_id(t->desk);
    s.your_seat = (uint32_t)seat;
    s.engine = t->eng->game->proto_engine;
    s.game = t->game;
    s.stake = t->stake;
    tk_fill_seats(t, infos, ptrs, &s.n_seats);
    s.seats = ptrs;
    room_info_buf_t rib;
    if (t->room != NULL) {
        room_info_fill(&t->room->rec, &rib);
        s.room = &rib.info;
    }
    s.has_event_seq = true;
    s.event_seq = t->event_seq;
    if (rt_desk_in_round(t->desk)) {
        s.round_id = t->round_id;
        if (t->turn_armed) {
            s.has_turn_seat = true;
            s.turn_seat = (uint32_t)t->turn_seat;
            int64_t left = t->turn_allowed_ms - (clock_mono_ms() - t->turn_start_ms);
            s.has_time_left_ms = true;
            s.time_left_ms = (uint32_t)(left < 0 ? 0 : left);
        }
    }
    t->snap_set = false;
    t->snap_msg = &s;
    t->eng->game->snapshot(t, t->g, seat);
    t->snap_msg = NULL;
    if (t->snap_set) {
        gst.body.data = t->snap;
        gst.body.len = t->snap_len;
        s.state_case = CROUPIER__SNAPSHOT__STATE_GAME_STATE;
        s.game_state = &gst;
    }
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    sm.snapshot = &s;
    gs_reply(gs_of_desk(t->desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

/* ---- closing ----------------------------------------------------------------------------- */

/* Tells the players still seated that the table closes and the gateways to move them. Once,
 * after the closing cash-outs are applied (or TK_CLOSE_NOTICE_MS passed). */
static void tk_tell_closing(tk_table_t *t)
{
    if (t->close_told)
        return;
    t->close_told = true;
    uint64_t players[TK_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state == TK_CLOSED)
            players[n++] = t->seat[i].player;
    if (t->fenced)
        gs_close_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n,
                            CROUPIER__CLOSING_REASON__CLOSING_STORE_UNREACHABLE,
                            "the server lost its connection to Redis and stopped its tables; "
                            "your chips go back to your wallet");
    else
        gs_close_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n,
                            CROUPIER__CLOSING_REASON__CLOSING_DRAINING, "server draining");
}

/*
 * The table closes (intake stopped, after the last round or the void): every seated player is
 * cashed out and the lobby forgets the table. Players stay seated (stack 0) until they leave, so
 * a resume or a leave still reaches this desk. Idempotent.
 */
static void tk_close(tk_table_t *t)
{
    if (t->closed)
        return;
    /* A room that cannot go on here ends with the deals played (no one is re-seated). */
    tk_room_end(t, t->room != NULL && t->room->rec.state == CROUPIER__ROOM_STATE__ROOM_WAITING
                       ? "the server stopped before the room filled"
                       : "the server stopped and no other server could take the room: it ends "
                         "with the deals played");
    t->closed = true;
    t->gap_armed = false; /* its expiry finds the table closed */
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (s->state != TK_SEATED && s->state != TK_LEAVING)
            continue;
        s->state = TK_CLOSED;
        tk_cash_out(t, i);
    }
    rt_msg_t m = {.type = TK_MSG_CLOSED, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    /* Fenced, the cash-outs wait for Redis: the players are told at once. */
    if (t->pending_cashouts == 0 || t->fenced ||
        rt_desk_timer_arm(t->desk, TK_CLOSE_NOTICE_MS, TK_TIMER_NOTICE, NULL) != 0)
        tk_tell_closing(t);
}

/* A player who can no longer cover a round leaves: TableClosing{BUSTED}, cash-out, unseat. */
static void tk_bust(tk_table_t *t, int i)
{
    if (t->room != NULL && t->room->rec.state == CROUPIER__ROOM_STATE__ROOM_PLAYING) {
        tk_room_end(t, "a player could not cover another deal: the room ends with the deals "
                       "played");
        return;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableClosing tc = CROUPIER__TABLE_CLOSING__INIT;
    tc.reason = CROUPIER__CLOSING_REASON__CLOSING_BUSTED;
    tc.detail = "not enough chips left at this table: you have left it; join again to buy in";
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
    sm.table_closing = &tc;
    tk_push_seat(t, i, &sm);
    tk_cash_out(t, i);
    tk_unseat(t, i);
}

/* ---- rounds ------------------------------------------------------------------------------ */

static int64_t tk_min_stack(tk_table_t *t)
{
    const tk_game_t *gm = t->eng->game;
    if (gm->money == TK_MONEY_WALLET)
        return 0;
    int64_t least = gm->min_stack != NULL ? gm->min_stack(t, t->g) : 1;
    return least < 1 ? 1 : least;
}

/* Players a round needs: tk_game_t.min_players, 0 meaning every seat. */
static int tk_min_players(const tk_table_t *t)
{
    if (t->room != NULL)
        return t->nseats; /* a room deals once every seat is taken */
    int n = t->eng->game->min_players;
    return n <= 0 || n > t->nseats ? t->nseats : n;
}

static int tk_ready(tk_table_t *t)
{
    int n = 0;
    int64_t least = tk_min_stack(t);
    for (int i = 0; i < t->nseats; i++)
        n += t->seat[i].state == TK_SEATED && !t->seat[i].topping && !t->seat[i].out &&
             t->seat[i].stack >= least;
    return n;
}

static void tk_maybe_schedule(tk_table_t *t)
{
    if (t->gap_armed || t->closed || tk_room_ended(t) || rt_desk_in_round(t->desk) ||
        tk_ready(t) < tk_min_players(t))
        return;
    if (rt_desk_timer_arm(t->desk, t->eng->set.gap_ms, TK_TIMER_GAP, NULL) == 0)
        t->gap_armed = true;
}

/* Arms the idle timer of an empty table (a new serial: an older timer finds it stale). */
static void tk_maybe_idle(tk_table_t *t)
{
    if (t->closed || t->retiring || rt_desk_in_round(t->desk) || tk_free_seats(t) != t->nseats)
        return;
    t->idle_serial++;
    if (rt_desk_timer_arm(t->desk, t->eng->set.idle_ms, TK_TIMER_IDLE | (t->idle_serial << 8),
                          NULL) == 0)
        t->idle_armed = true;
}

static int64_t tk_trustee_ms(const tk_table_t *t)
{
    return t->eng->set.trustee_ms > 0 ? t->eng->set.trustee_ms : TK_TRUSTEE_MS;
}

void tk_turn_clear(tk_table_t *t)
{
    if (t->turn_armed)
        rt_desk_timer_cancel(t->desk, t->turn_timer);
    t->turn_armed = false;
    t->turn_seat = -1;
}

/* (Re)arms the turn timer of the seat to act for allowed_ms from now, under a new serial (an
 * older timer finds itself stale). The caller cancelled the previous one. */
static void tk_turn_arm(tk_table_t *t, int64_t allowed_ms)
{
    t->turn_serial++;
    t->turn_start_ms = clock_mono_ms();
    t->turn_allowed_ms = allowed_ms;
    t->turn_armed = rt_desk_timer_arm(t->desk, allowed_ms, TK_TIMER_TURN | (t->turn_serial << 8),
                                      &t->turn_timer) == 0;
}

/* Pushes turn for the seat to act with time_left_ms. */
static void tk_push_turn(tk_table_t *t, Croupier__Turn *turn, int64_t time_left_ms)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    turn->seat = (uint32_t)t->turn_seat;
    turn->time_left_ms = (uint32_t)(time_left_ms < 0 ? 0 : time_left_ms);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
    sm.turn = turn;
    tk_push_all(t, &sm);
}

void tk_turn(tk_table_t *t, int seat, Croupier__Turn *turn)
{
    tk_turn_clear(t);
    if (seat < 0 || seat >= t->nseats)
        return;
    tk_seat_t *s = &t->seat[seat];
    t->turn_seat = seat;
    bool automatic = s->trustee || (s->away && t->eng->game->trustee_when_away);
    tk_turn_arm(t, s->bot      ? t->eng->set.bot_ms
                   : automatic ? tk_trustee_ms(t)
                               : t->eng->set.action_ms + s->bank_ms);
    tk_push_turn(t, turn, t->turn_allowed_ms);
}

void tk_turn_update(tk_table_t *t, int seat, Croupier__Turn *turn)
{
    if (seat != t->turn_seat || !t->turn_armed) {
        tk_turn(t, seat, turn);
        return;
    }
    tk_push_turn(t, turn, t->turn_allowed_ms - (clock_mono_ms() - t->turn_start_ms));
}

/* The seat to act is on trustee now (it is leaving): its automatic move comes after
 * TK_TRUSTEE_MS instead of the rest of its time. */
static void tk_turn_hurry(tk_table_t *t)
{
    rt_desk_timer_cancel(t->desk, t->turn_timer);
    tk_turn_arm(t, tk_trustee_ms(t));
}

/* The seat to act is back (a resume, tk_game_t.trustee_when_away) while its turn ran on the
 * automatic move's short timer: the turn gets its full time again from now, and everyone a Turn
 * saying so. */
static void tk_turn_restore(tk_table_t *t)
{
    rt_desk_timer_cancel(t->desk, t->turn_timer);
    tk_turn_arm(t, t->eng->set.action_ms + t->seat[t->turn_seat].bank_ms);
    Croupier__Turn turn = CROUPIER__TURN__INIT;
    tk_push_turn(t, &turn, t->turn_allowed_ms);
}

/* The seat to act moved (an action or its timeout): what it used beyond action_ms comes off
 * its time bank. */
static void tk_spend_bank(tk_table_t *t, int seat, int64_t used_ms)
{
    int64_t over = used_ms - t->eng->set.action_ms;
    if (over > 0)
        t->seat[seat].bank_ms = over >= t->seat[seat].bank_ms ? 0 : t->seat[seat].bank_ms - over;
}

/* Submits the round's settlement as a money follow-up whose result comes back as
 * TK_MSG_SETTLED. Returns true when it was submitted (the round's end then waits for it). */
static bool tk_settle(tk_table_t *t, const int64_t *delta, bool house, int64_t house_delta,
                      int64_t rake)
{
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    money_settlement_t s = {0};
    bool wallets = t->eng->game->money == TK_MONEY_WALLET;
    char names[TK_MAX_SEATS][24];
    for (int i = 0; i < t->nseats && s.nplayers < MONEY_MAX_PLAYERS; i++) {
        if (!t->seat[i].playing || (wallets && t->seat[i].bot))
            continue; /* a bot has no wallet of its own at a play-money table */
        if (wallets) {
            tk_player_name(t->seat[i].player, names[i], sizeof names[i]);
            s.players[s.nplayers] = names[i];
        } else {
            s.players[s.nplayers] = t->seat[i].acct;
        }
        s.deltas[s.nplayers] = delta[i];
        s.nplayers++;
    }
    if (house && s.nplayers < MONEY_MAX_PLAYERS) {
        s.players[s.nplayers] = t->eng->house;
        s.deltas[s.nplayers] = house_delta;
        s.nplayers++;
    }
    if (w == NULL || s.nplayers == 0)
        return false;
    gs_t *gs = gs_of_desk(t->desk);
    s.round = gs_round_id(gs, rt_desk_id(t->desk), t->seq);
    s.game = t->game;
    s.rake = rake;
    tk_op_t *o = xcalloc(1, sizeof *o);
    *o = (tk_op_t){.gs = gs,
                   .rt = rt_desk_rt(t->desk),
                   .desk = rt_desk_id(t->desk),
                   .seat = -1,
                   .n = t->seq,
                   .msg = TK_MSG_SETTLED};
    gs_money_followup_begin(gs);
    int rc = money_writer_submit_settle(w, &s, tk_seat_op_cb, o);
    if (rc != 0) {
        gs_money_followup_end(gs);
        free(o);
        log_emit(LOG_ERROR, "tk_settle_refused", "{s:s,s:i}", "round", t->round_id, "errno", -rc);
        return false;
    }
    return true;
}

/*
 * Ends the round (completed with delta/rake, or voided: nothing moves), in the order every
 * engine needs: settlement and history queued, RoundEnd pushed, leavers and busted players
 * cashed out, the table closed when intake stopped, and only then the runtime's round ended.
 */
static void tk_topup(tk_table_t *t, int i);
static void tk_finish_rest(tk_table_t *t, const int64_t *delta, int64_t rake, bool voided,
                           Croupier__VoidReason why);

static void tk_finish(tk_table_t *t, const int64_t *delta, bool house, int64_t house_delta,
                      int64_t rake, bool voided, Croupier__VoidReason why)
{
    gs_t *gs = gs_of_desk(t->desk);
    tk_turn_clear(t);
    money_round_id_t rid = gs_round_id(gs, rt_desk_id(t->desk), t->seq);
    money_round_id_format(&rid, t->round_id, sizeof t->round_id);
    bool settling = false;
    if (!voided) {
        for (int i = 0; i < t->nseats; i++)
            if (t->seat[i].playing && t->eng->game->money == TK_MONEY_STACK)
                t->seat[i].stack += delta[i]; /* play money lives in the wallets only */
        settling = tk_settle(t, delta, house, house_delta, rake);
    }
    if (settling) {
        /* The rest waits for the settlement (TK_MSG_SETTLED): the round stays in progress for
         * the runtime (no next round, the drain waits), and no one sees the result before it
         * is applied -- a crash meanwhile leaves the round for the recovery to void. Its hand
         * history, too, says what the settlement's answer decides. */
        t->settling = true;
        memcpy(t->settle_delta, delta, sizeof t->settle_delta);
        t->settle_rake = rake;
        return;
    }
    tk_history_submit(t, delta, rake, voided, why);
    tk_finish_rest(t, delta, rake, voided, why);
}

/* The settlement of the round that ended came back: RoundEnd now, or -- refused -- the round
 * is voided for its players (nothing moved: the stacks go back to the round's start). */
static void tk_settled(tk_table_t *t, uint64_t seq, const money_result_t *res)
{
    if (!t->settling || seq != t->seq) {
        log_emit(LOG_ERROR, "tk_settled_stray", "{s:I,s:s,s:i}", "seq", (json_int_t)seq, "id",
                 res->id, "status", res->status);
        return;
    }
    t->settling = false;
    if (res->status == MONEY_OK) {
        tk_history_submit(t, t->settle_delta, t->settle_rake, false,
                          CROUPIER__VOID_REASON__VOID_NONE);
        tk_finish_rest(t, t->settle_delta, t->settle_rake, false, CROUPIER__VOID_REASON__VOID_NONE);
        return;
    }
    log_emit(LOG_ERROR, "tk_settlement_failed", "{s:s,s:i,s:s}", "round", t->round_id, "status",
             res->status, "error", res->error);
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].playing && t->eng->game->money == TK_MONEY_STACK)
            t->seat[i].stack -= t->settle_delta[i];
    Croupier__VoidReason why = res->status == MONEY_ERR_STALE_EPOCH
                                   ? CROUPIER__VOID_REASON__VOID_LEASE_LOST
                                   : CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR;
    tk_history_submit(t, NULL, 0, true, why);
    tk_finish_rest(t, NULL, 0, true, why);
}

/* The second half of tk_finish: RoundEnd, leavers, busted players, the table's close, the
 * runtime's round end. */
static void tk_finish_rest(tk_table_t *t, const int64_t *delta, int64_t rake, bool voided,
                           Croupier__VoidReason why)
{
    gs_t *gs = gs_of_desk(t->desk);
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    Croupier__SeatDelta deltas[TK_MAX_SEATS];
    Croupier__SeatDelta *dptr[TK_MAX_SEATS];
    re.round_id = t->round_id;
    re.outcome = voided ? CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED
                        : CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
    if (voided) {
        re.has_void_reason = true;
        re.void_reason = why;
        re.detail = why == CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR
                        ? "the round could not go on; every chip committed was returned"
                    : why == CROUPIER__VOID_REASON__VOID_LEASE_LOST
                        ? "the server lost its lease before the round's result could be "
                          "recorded; no chip moved"
                    : why == CROUPIER__VOID_REASON__VOID_STORE_UNREACHABLE
                        ? "the server lost its connection to Redis and stopped the round; no "
                          "chip moved"
                        : "the server had to stop before the round could finish; every chip "
                          "committed was returned";
    }
    size_t nd = 0;
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (!s->playing)
            continue;
        Croupier__SeatDelta d = CROUPIER__SEAT_DELTA__INIT;
        d.seat = (uint32_t)i;
        d.player_id = s->player;
        d.delta = voided ? 0 : delta[i];
        if (!voided && s->nshown > 0) {
            d.has_shown_cards = true;
            d.shown_cards.data = s->shown;
            d.shown_cards.len = s->nshown;
        }
        deltas[nd] = d;
        dptr[nd] = &deltas[nd];
        nd++;
    }
    re.n_deltas = nd;
    re.deltas = dptr;
    re.has_rake = true;
    re.rake = voided ? 0 : rake;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
    sm.round_end = &re;
    /* A round whose settlement was on its way when the server fenced itself: its players were
     * told the table closed (the round is decided by Redis) and have moved on. */
    if (!(t->fenced && t->close_told))
        tk_push_all(t, &sm);
    for (int i = 0; i < t->nseats; i++) {
        t->seat[i].playing = false;
        t->seat[i].nshown = 0;
    }

    bool drain_void = voided && why != CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR;
    if (t->room != NULL && !t->room->ended) {
        if (!voided)
            tk_room_dealt(t, delta); /* the scoreboard; after the last deal the room ends */
        else if (drain_void)
            tk_room_end(t, "the server had to stop during a deal (voided: no chip moved): the "
                           "room ends with the deals played");
    }
    if (tk_room_ended(t)) {
        /* everyone was cashed out and told */
    } else if (drain_void) {
        tk_close(t); /* voided by the drain bound or the shutdown */
    } else if (rt_intake_stopped(rt_desk_rt(t->desk))) {
        tk_move_or_close(t); /* drained: the table moves as a whole, or closes */
    } else {
        int64_t least = tk_min_stack(t);
        for (int i = 0; i < t->nseats; i++) {
            tk_seat_t *s = &t->seat[i];
            if (s->state == TK_LEAVING) {
                tk_cash_out(t, i);
                tk_unseat(t, i);
            } else if (s->state == TK_SEATED && s->stack < least) {
                if (t->eng->game->topup)
                    tk_topup(t, i);
                else
                    tk_bust(t, i);
            }
        }
    }
    rt_outcome_t outcome = voided ? RT_ROUND_VOIDED : RT_ROUND_COMPLETED;
    rt_desk_end_round(t->desk, outcome);
    gs_count_round(gs, t->game, outcome);
    tk_bots_stand(t);
    tk_maybe_schedule(t);
    tk_maybe_fill(t);
    tk_maybe_idle(t);
}

static int tk_round_close(tk_table_t *t, const int64_t *delta, bool house, int64_t house_delta,
                          int64_t rake)
{
    if (!rt_desk_in_round(t->desk))
        return -EINVAL;
    bool wallets = t->eng->game->money == TK_MONEY_WALLET;
    int64_t sum = house ? house_delta : 0;
    bool ok = rake >= 0 && (!house || !wallets);
    for (int i = 0; i < t->nseats; i++) {
        if (!t->seat[i].playing || (wallets && t->seat[i].bot)) {
            ok = ok && delta[i] == 0; /* out of the round, or a play-money bot: nothing moves */
            continue;
        }
        sum += delta[i];
        ok = ok && (wallets || t->seat[i].stack + delta[i] >= 0);
    }
    if (!ok || sum != -rake) {
        log_emit(LOG_ERROR, "tk_round_end_refused", "{s:s,s:I,s:I}", "round", t->round_id, "sum",
                 (json_int_t)sum, "rake", (json_int_t)rake);
        /* The game may be inside its own rules code (an event callback): it forgets the round
         * before the next one starts, not now. */
        t->forget_round = true;
        tk_finish(t, NULL, false, 0, 0, true, CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR);
        return -EINVAL;
    }
    tk_finish(t, delta, house, house_delta, rake, false, CROUPIER__VOID_REASON__VOID_NONE);
    return 0;
}

int tk_round_end(tk_table_t *t, const int64_t delta[TK_MAX_SEATS], int64_t rake)
{
    return tk_round_close(t, delta, false, 0, rake);
}

int tk_round_end_house(tk_table_t *t, const int64_t delta[TK_MAX_SEATS], int64_t house_delta,
                       int64_t rake)
{
    return tk_round_close(t, delta, true, house_delta, rake);
}

/* Voids the round in progress (drain bound, shutdown): the game forgets it, nothing moves. A
 * round that ended and waits for its settlement is not voided: it ends once that is applied. */
static void tk_void(tk_table_t *t, Croupier__VoidReason why)
{
    if (!rt_desk_in_round(t->desk) || t->settling)
        return;
    t->eng->game->round_void(t, t->g);
    tk_finish(t, NULL, false, 0, 0, true, why);
}

static int tk_next_playing(const tk_table_t *t, int from)
{
    for (int k = 1; k <= t->nseats; k++) {
        int i = (from + k) % t->nseats;
        if (t->seat[i].playing)
            return i;
    }
    return -1;
}

/*
 * Records the round that starts as held (money.h "Held chips"): the desk's r: record names the
 * round and its seats, so that if this server dies before the round settles, the recovery
 * voids it in the hand history (VOID_SERVER_CRASHED). It travels in the writer's FIFO before
 * anything of the round.
 */
static void tk_mark_round(tk_table_t *t)
{
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    if (w == NULL || t->history == NULL)
        return;
    json_t *h = json_deep_copy(t->history);
    json_object_set_new(h, "engine", json_string(t->eng->game->engine));
    json_object_set_new(h, "stake", json_integer(t->stake));
    char *json = json_dumps(h, JSON_COMPACT);
    json_decref(h);
    char field[32];
    snprintf(field, sizeof field, "r:%" PRIx64, rt_desk_id(t->desk));
    int rc = json != NULL ? money_writer_submit_mark(w, t->slot, t->epoch, field, json,
                                                     tk_money_log_cb, NULL)
                          : -ENOMEM;
    free(json);
    if (rc != 0)
        log_emit(LOG_ERROR, "tk_round_mark_refused", "{s:s,s:i}", "round", t->round_id, "errno",
                 -rc);
}

static void tk_start_round(tk_table_t *t)
{
    if (t->closed || tk_room_ended(t) || tk_ready(t) < tk_min_players(t))
        return;
    if (!gs_can_start_round(gs_of_desk(t->desk))) {
        if (!rt_intake_stopped(rt_desk_rt(t->desk)))
            tk_maybe_schedule(t); /* settlement queue above its watermark: later */
        return;
    }
    if (rt_desk_begin_round(t->desk) != 0)
        return; /* intake stopped: the table closes */
    if (t->forget_round) {
        t->forget_round = false;
        t->eng->game->round_void(t, t->g);
    }
    t->seq++;
    int64_t least = tk_min_stack(t);
    money_round_id_t rid = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), t->seq);
    money_round_id_format(&rid, t->round_id, sizeof t->round_id);
    json_decref(t->history);
    t->history = money_history_new(&rid, t->game);
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        s->playing = s->state == TK_SEATED && !s->topping && !s->out && s->stack >= least;
        s->nshown = 0;
        if (s->playing) {
            char player[24];
            tk_player_name(s->player, player, sizeof player);
            money_history_add_seat(t->history, i, player, s->bot, s->stack);
        }
    }
    t->button = tk_next_playing(t, t->button < 0 ? t->nseats - 1 : t->button);
    if (t->room != NULL && t->room->rec.state == CROUPIER__ROOM_STATE__ROOM_WAITING)
        tk_room_started(t);
    tk_mark_round(t);
    int rc = t->eng->game->round_start(t, t->g);
    if (rc != 0) {
        log_emit(LOG_ERROR, "tk_round_start_failed", "{s:s,s:i}", "round", t->round_id, "errno",
                 -rc);
        tk_void(t, CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR);
    }
}

/* ---- requests ---------------------------------------------------------------------------- */

static int tk_find(const tk_table_t *t, uint64_t player)
{
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state != TK_EMPTY && t->seat[i].player == player)
            return i;
    return -1;
}

static void tk_refuse(tk_table_t *t, gs_request_t *req, Croupier__ErrorCode code, const char *why)
{
    tk_count_refusal(t->eng, code);
    gs_reply(gs_of_desk(t->desk), req, code, why, NULL);
}

static void tk_action(tk_table_t *t, gs_request_t *req, int seat)
{
    tk_seat_t *s = &t->seat[seat];
    if ((!rt_desk_in_round(t->desk) || !s->playing) && !t->eng->game->any_time_actions) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__NO_ROUND,
                  rt_desk_in_round(t->desk) ? "not dealt into this round" : "no round in progress");
        return;
    }
    const Croupier__Action *a = req->frame->action;
    const tk_game_t *gm = t->eng->game;
    ProtobufCMessage *m = NULL;
    if (gm->action_desc == NULL) {
        /* An engine with its own member of Action.kind: it judges the Action itself. */
        if (a == NULL) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "an action needs a body");
            return;
        }
    } else {
        if (a == NULL || a->kind_case != CROUPIER__ACTION__KIND_GAME || a->game == NULL) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__WRONG_ENGINE,
                      "this table takes Action.game with the game's own action message");
            return;
        }
        frame_error_t err;
        m = frame_unpack_game(gm->action_desc, a->game->body.data, a->game->body.len,
                              &frame_limits_default, gm->action_rules, &err);
        if (m == NULL) {
            tk_refuse(t, req, err.code, err.detail);
            return;
        }
    }
    s->away = false;
    /* The time bank pays for what a move took beyond action_ms, once: only for an accepted
     * move that ended the seat's turn (a refusal, or a move that keeps the turn, costs none). */
    bool my_turn = seat == t->turn_seat && t->turn_armed && !s->trustee;
    uint64_t turn = t->turn_serial;
    int64_t used = clock_mono_ms() - t->turn_start_ms;
    const char *why = NULL;
    /* The player acts: a turn this move starts for the same seat (blackjack: the bet that
     * closes the window deals, and the seat's first hand is on turn) is theirs again, not the
     * trustee's short one. A refused move changes nothing. */
    bool was_trustee = s->trustee;
    s->trustee = false;
    Croupier__ErrorCode code =
        gm->action(t, t->g, seat, m != NULL ? m : (const ProtobufCMessage *)&a->base, &why);
    if (m != NULL)
        frame_free(m);
    if (code != CROUPIER__ERROR_CODE__OK) {
        s->trustee = was_trustee;
        tk_refuse(t, req, code, why);
        return;
    }
    if (my_turn && t->turn_serial != turn)
        tk_spend_bank(t, seat, used);
    s->trustee = false;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result r = CROUPIER__RESULT__INIT;
    sm.has_event_seq = true;
    sm.event_seq = t->event_seq;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &r;
    gs_reply(gs_of_desk(t->desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

static void tk_leave(tk_table_t *t, gs_request_t *req, int i)
{
    tk_seat_t *s = &t->seat[i];
    gs_t *gs = gs_of_desk(t->desk);
    const Croupier__Leave *lv = req->frame->leave;
    bool disband = lv != NULL && lv->has_disband_room && lv->disband_room;
    if (t->room == NULL && disband) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "this table is no private room");
        return;
    }
    if (t->room != NULL && !t->room->ended) {
        if (t->room->rec.state != CROUPIER__ROOM_STATE__ROOM_WAITING) {
            if (!disband && !s->bot) {
                /* The player goes: their turns are the automatic move's until they act again
                 * (or resume), so the room plays on without waiting out their turn time. */
                s->trustee = true;
                if (t->turn_seat == i && t->turn_armed)
                    tk_turn_hurry(t);
            }
            tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_STARTED,
                      disband ? "the room has started: it can no longer be disbanded"
                              : "the room has started: you leave it when its last deal ends; "
                                "your turns are played for you meanwhile");
            return;
        }
        if (disband && s->player != t->room->rec.host) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__NOT_HOST, "only the host disbands the room");
            return;
        }
        if (disband || s->player == t->room->rec.host) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, NULL);
            tk_room_end(t, "the host disbanded the room");
            return;
        }
    }
    if (s->topping && (s->state == TK_SEATED || s->state == TK_CLOSED)) {
        /* Its top-up's chips are on their way from the wallet: it leaves once they are in the
         * seat account (tk_topup_done), so they go back with the stack. */
        s->leave_after_topup = true;
    } else if (s->state == TK_CLOSED) {
        tk_unseat(t, i); /* cashed out when the table closed */
    } else if (rt_desk_in_round(t->desk) && s->playing) {
        s->state = TK_LEAVING; /* after the round: a seat is never torn mid-round */
        s->trustee = true;     /* its turns meanwhile are the automatic move */
        if (t->turn_seat == i && t->turn_armed)
            tk_turn_hurry(t);
    } else if (s->state == TK_SEATED) {
        tk_cash_out(t, i);
        tk_unseat(t, i);
    }
    gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, NULL);
}

static tk_table_t *tk_enter(rt_desk_t *desk, void *state)
{
    tk_table_t *t = state;
    t->desk = desk;
    if (t->seat[0].acct[0] == '\0') {

        for (int i = 0; i < TK_MAX_SEATS; i++) /* an adopted room may have more seats */
            snprintf(t->seat[i].acct, sizeof t->seat[i].acct,
                     TK_ACCOUNT_PREFIX "%s.%" PRIu32 ".%" PRIu64 ".%" PRIx64 ".%d", t->eng->svc,
                     t->slot, t->epoch, rt_desk_id(desk), i);
    }
    return t;
}

/* ---- whole-table moves (tk.h "moves", money.h "Table handoff") --------------------------- */

typedef enum {
    TK_JOB_OFFER = 1,
    TK_JOB_CHECK,
    TK_JOB_WITHDRAW,
    TK_JOB_ADOPT,
    TK_JOB_ROOM_CREATE, /* a room's code and first record (room_sync_create) */
    TK_JOB_ROOM_WRITE,  /* a room's record rewritten (room_sync_write) */
} tk_job_kind_t;

/* One handoff call, run on the engine's jobs thread and posted back to its table. */
typedef struct {
    money_job_t job;
    tk_job_kind_t kind;
    tk_engine_t *eng;
    rt_t *rt;
    rt_desk_id_t desk;
    char service[MONEY_NAME_MAX + 1];
    char offer_id[MONEY_ID_MAX + 1];
    char self[MONEY_ID_MAX + 1]; /* OFFER: this server's id (registry entry id) */
    /* OFFER, WITHDRAW: the offer (its strings point into accts/owners and state) */
    money_offer_t offer;
    char accts[MONEY_MAX_PLAYERS][MONEY_NAME_MAX + 1];
    char owners[MONEY_MAX_PLAYERS][MONEY_NAME_MAX + 1];
    char *state; /* OFFER: the state written; ADOPT: the state read back (owned) */
    /* ADOPT: the adopter's table */
    uint32_t slot;
    uint64_t epoch;
    char game[MONEY_NAME_MAX + 1];
    int64_t stake;
    int nseats;
    char table_accts[TK_MAX_SEATS][MONEY_NAME_MAX + 1]; /* every seat's: a room keeps its own */
    /* results */
    int status;
    char status_text[16]; /* CHECK, WITHDRAW: offered | adopted | void | withdrawn */
    char error[200];
    size_t n; /* ADOPT: the seat accounts adopted, their seats and stacks */
    int seats[MONEY_MAX_PLAYERS];
    int64_t stacks[MONEY_MAX_PLAYERS];
    char adopter[MONEY_ID_MAX + 1]; /* ADOPT refused MONEY_ERR_ADOPTED: who has it */
    /* ROOM_*: the record to write (owned), its expiry, whether the writer takes it over */
    room_record_t *room;
    int64_t ttl_ms;
    bool take;
} tk_job_t;

static void tk_job_free(void *p)
{
    tk_job_t *j = p;
    if (j == NULL)
        return;
    free(j->state);
    free(j->room);
    free(j);
}

static void tk_job_set_error(tk_job_t *j, int status, const char *error)
{
    j->status = status;
    snprintf(j->error, sizeof j->error, "%s", error != NULL ? error : money_strerror(status));
}

/* Whether another server that could adopt the table is registered and ready: serving the game,
 * not this server (its entry id is the server id, "<service>:<slot>"). An offer nobody can take
 * would only hold the drain for the move wait. -EIO when the registry cannot be read. */
static int tk_job_adopter_exists(redisContext *c, const char *self, const char *game)
{
    redisReply *m = redisCommand(c, "SMEMBERS %s", REGISTRY_MEMBERS_KEY);
    if (m == NULL || m->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(m);
        return -EIO;
    }
    int found = 0;
    for (size_t i = 0; i < m->elements && !found; i++) {
        const redisReply *id = m->element[i];
        if (id->type != REDIS_REPLY_STRING || strcmp(id->str, self) == 0)
            continue;
        redisReply *r = redisCommand(c, "GET %s%s", REGISTRY_KEY_PREFIX, id->str);
        registry_entry_t e;
        if (r != NULL && r->type == REDIS_REPLY_STRING &&
            registry_entry_parse(r->str, r->len, &e) == 0 && e.state == REGISTRY_READY &&
            config_list_has(e.games, game))
            found = 1;
        freeReplyObject(r);
    }
    freeReplyObject(m);
    return found;
}

/* ADOPT on the jobs thread: read the offer, check it fits the table, adopt its accounts. */
static void tk_job_adopt(redisContext *c, tk_job_t *j)
{
    money_offer_info_t info;
    int rc = money_sync_offer_read(c, j->offer_id, &info);
    if (rc != 0) {
        tk_job_set_error(j, rc, NULL);
        return;
    }
    j->state = info.state;
    if (strcmp(info.status, "adopted") == 0 && info.adopter[0] != '\0')
        snprintf(j->adopter, sizeof j->adopter, "%s", info.adopter);
    json_error_t jerr;
    json_t *st = json_loads(info.state, 0, &jerr);
    const char *game = st != NULL ? json_string_value(json_object_get(st, "game")) : NULL;
    json_int_t stake = json_integer_value(json_object_get(st, "stake"));
    json_int_t seats = json_integer_value(json_object_get(st, "seats"));
    /* A room keeps its own seat count (the table takes it at the import). */
    bool room = json_is_object(json_object_get(st, "room"));
    bool fits = game != NULL && strcmp(game, j->game) == 0 && stake == j->stake &&
                (seats == j->nseats || (room && seats >= 2 && seats <= TK_MAX_SEATS)) &&
                info.nseats <= (size_t)seats;
    json_decref(st);
    const char *accts[MONEY_MAX_PLAYERS];
    for (size_t i = 0; fits && i < info.nseats; i++) {
        fits = info.seats[i] >= 0 && info.seats[i] < seats;
        if (fits) {
            accts[i] = j->table_accts[info.seats[i]];
            j->seats[i] = info.seats[i];
        }
    }
    if (!fits) {
        tk_job_set_error(j, MONEY_ERR_BAD_ARGS,
                         "the offered table is not one of this game and stake");
        return;
    }
    money_result_t res;
    rc = money_sync_adopt(c, j->offer_id, j->service, j->slot, j->epoch, j->desk, accts,
                          info.nseats, j->stacks, &res);
    j->status = rc;
    if (rc != MONEY_OK) {
        tk_job_set_error(j, rc, res.error);
        if (rc == MONEY_ERR_ADOPTED && j->adopter[0] == '\0') {
            money_offer_info_t again;
            if (money_sync_offer_read(c, j->offer_id, &again) == 0) {
                snprintf(j->adopter, sizeof j->adopter, "%s", again.adopter);
                free(again.state);
            }
        }
        return;
    }
    j->n = info.nseats;
}

static void tk_job_run(redisContext *c, money_job_t *job)
{
    tk_job_t *j = (tk_job_t *)job;
    if (c == NULL) {
        tk_job_set_error(j, -EIO, "redis unreachable");
        return;
    }
    money_result_t res;
    switch (j->kind) {
    case TK_JOB_OFFER: {
        int any = tk_job_adopter_exists(c, j->self, j->game);
        if (any == 0) {
            tk_job_set_error(j, -ENOENT, "no other ready server of the game to adopt the table");
            return;
        }
        j->status = money_sync_offer(c, j->service, &j->offer, &res);
        if (j->status != MONEY_OK)
            tk_job_set_error(j, j->status, res.error);
        return;
    }
    case TK_JOB_CHECK: {
        money_offer_info_t info;
        j->status = money_sync_offer_read(c, j->offer_id, &info);
        if (j->status == 0) {
            snprintf(j->status_text, sizeof j->status_text, "%s", info.status);
            free(info.state);
        } else {
            tk_job_set_error(j, j->status, NULL);
        }
        return;
    }
    case TK_JOB_WITHDRAW:
        j->status = money_sync_offer_withdraw(c, j->service, &j->offer, j->status_text, &res);
        if (j->status != MONEY_OK)
            tk_job_set_error(j, j->status, res.error);
        return;
    case TK_JOB_ADOPT:
        tk_job_adopt(c, j);
        return;
    case TK_JOB_ROOM_CREATE:
        j->status = room_sync_create(c, j->room, j->ttl_ms);
        return;
    case TK_JOB_ROOM_WRITE:
        j->status = room_sync_write(c, j->room, j->ttl_ms, j->take);
        return;
    }
}

/* Jobs thread: the result goes back to its table (dropped with the job if the desk is gone).
 * Once the runtime stops (the lobby desk is destroyed then, before the runtime is freed) a
 * result is only freed. */
static void tk_job_done(money_job_t *job)
{
    tk_job_t *j = (tk_job_t *)job;
    tk_engine_t *eng = j->eng;
    pthread_mutex_lock(&eng->jobs_mu);
    if (eng->rt_stopped) {
        tk_job_free(j);
    } else {
        rt_msg_t m = {.type = TK_MSG_MOVE_DONE, .ptr = j, .free_fn = tk_job_free};
        rt_post(j->rt, j->desk, &m);
    }
    pthread_mutex_unlock(&eng->jobs_mu);
}

/* This server's id ("<service>:<slot>", its registry entry), from any thread. */
static void tk_server_id(tk_table_t *t, char *buf, size_t len)
{
    gs_t *gs = gs_of_desk(t->desk);
    const char *svc = gs_service(gs);
    snprintf(buf, len, "%s:%" PRIu32, svc != NULL ? svc : t->eng->game->engine, gs_server_slot(gs));
}

static tk_job_t *tk_job_new(tk_table_t *t, tk_job_kind_t kind)
{
    tk_job_t *j = xcalloc(1, sizeof *j);
    j->job.run = tk_job_run;
    j->job.done = tk_job_done;
    j->kind = kind;
    j->eng = t->eng;
    j->rt = rt_desk_rt(t->desk);
    j->desk = rt_desk_id(t->desk);
    const char *svc = gs_service(gs_of_desk(t->desk));
    snprintf(j->service, sizeof j->service, "%s", svc != NULL ? svc : t->eng->game->engine);
    snprintf(j->offer_id, sizeof j->offer_id, "%s", t->offer_id);
    return j;
}

static int tk_job_submit(tk_table_t *t, tk_job_t *j)
{
    int rc = money_jobs_submit(t->eng->jobs, &j->job);
    if (rc != 0)
        tk_job_free(j);
    return rc;
}

/* The offer of this table (desk, handoff number 1: a desk moves at most once). */
static void tk_offer_base(const tk_table_t *t, money_offer_t *o)
{
    *o = (money_offer_t){.slot = t->slot, .epoch = t->epoch, .desk = rt_desk_id(t->desk), .n = 1};
}

/* The kit's state of the table (and the game's export_state) as the offer's JSON text. */
static char *tk_move_state(tk_table_t *t)
{
    json_t *st = json_object();
    json_object_set_new(st, "v", json_integer(1));
    json_object_set_new(st, "engine", json_string(t->eng->game->engine));
    json_object_set_new(st, "game", json_string(t->game));
    json_object_set_new(st, "stake", json_integer(t->stake));
    json_object_set_new(st, "seats", json_integer(t->nseats));
    json_object_set_new(st, "seq", json_integer((json_int_t)t->seq));
    json_object_set_new(st, "button", json_integer(t->button));
    json_object_set_new(st, "event_seq", json_integer((json_int_t)t->event_seq));
    json_t *players = json_array();
    for (int i = 0; i < t->nseats; i++) {
        const tk_seat_t *s = &t->seat[i];
        if (s->state != TK_SEATED)
            continue;
        char id[24];
        tk_player_name(s->player, id, sizeof id);
        json_array_append_new(players, json_pack("{s:i,s:s,s:b,s:I,s:I,s:b}", "seat", i, "player",
                                                 id, "bot", s->bot, "stack", (json_int_t)s->stack,
                                                 "bank_ms", (json_int_t)s->bank_ms, "out", s->out));
    }
    json_object_set_new(st, "players", players);
    if (t->room != NULL) {
        char *room = room_record_json(&t->room->rec);
        json_t *r = room != NULL ? json_loads(room, 0, NULL) : NULL;
        free(room);
        if (r != NULL)
            json_object_set_new(st, "room", r);
    }
    if (t->eng->game->export_state != NULL) {
        json_t *g = t->eng->game->export_state(t, t->g);
        if (g != NULL)
            json_object_set_new(st, "game_state", g);
    }
    char *text = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    return text;
}

static void tk_close(tk_table_t *t);
static void tk_fence(tk_table_t *t);

/* A move in progress counts as a human desk (gs_table_move_begin): its round is over, but its
 * players are still here until the adopter has them, so the drain waits for it (within its
 * bound) before the server exits. */
static void tk_move_hold(tk_table_t *t, bool hold)
{
    if (hold == t->move_held)
        return;
    t->move_held = hold;
    if (hold)
        gs_table_move_begin(gs_of_desk(t->desk));
    else
        gs_table_move_end(gs_of_desk(t->desk));
}

/* The table cannot move (or gave up): it closes as before, each player re-seated alone. */
static void tk_move_fallback(tk_table_t *t, const char *why)
{
    log_emit(LOG_WARN, "tk_table_move_fallback", "{s:I,s:s,s:s}", "desk",
             (json_int_t)rt_desk_id(t->desk), "offer", t->offer_id, "why", why);
    t->move = TK_MOVE_NONE;
    t->move_refused = true;
    t->closed = false;
    tk_close(t);
    tk_move_hold(t, false);
}

static void tk_move_arm(tk_table_t *t, int64_t ms)
{
    if (rt_desk_timer_arm(t->desk, ms, TK_TIMER_MOVE, NULL) != 0)
        log_emit(LOG_ERROR, "tk_move_timer_failed", "{s:I}", "desk",
                 (json_int_t)rt_desk_id(t->desk));
}

/* Writes the offer once no seat has money in flight (TK_MOVE_PREPARING). */
static void tk_move_offer(tk_table_t *t)
{
    bool busy = t->pending_cashouts > 0;
    for (int i = 0; i < t->nseats; i++)
        busy = busy || t->seat[i].state == TK_BUYING || t->seat[i].topping;
    if (busy) {
        if (clock_mono_ms() >= t->move_until_ms)
            tk_move_fallback(t, "seats still had money in flight");
        else
            tk_move_arm(t, 20);
        return;
    }
    tk_job_t *j = tk_job_new(t, TK_JOB_OFFER);
    tk_offer_base(t, &j->offer);
    if (money_offer_id(j->service, &j->offer, t->offer_id, sizeof t->offer_id) != 0) {
        tk_job_free(j);
        tk_move_fallback(t, "no offer id");
        return;
    }
    snprintf(j->offer_id, sizeof j->offer_id, "%s", t->offer_id);
    tk_server_id(t, j->self, sizeof j->self);
    snprintf(j->game, sizeof j->game, "%s", t->game);
    j->state = tk_move_state(t);
    j->offer.state = j->state;
    if (t->eng->game->money == TK_MONEY_STACK) {
        for (int i = 0; i < t->nseats; i++) {
            tk_seat_t *s = &t->seat[i];
            if (s->state != TK_SEATED)
                continue;
            size_t k = j->offer.nseats++;
            snprintf(j->accts[k], sizeof j->accts[k], "%s", s->acct);
            tk_owner_wallet(t->eng, s, j->owners[k], sizeof j->owners[k]);
            j->offer.seats[k] =
                (money_handoff_seat_t){.account = j->accts[k], .owner = j->owners[k], .seat = i};
        }
    }
    if (j->state == NULL || tk_job_submit(t, j) != 0) {
        tk_move_fallback(t, "the offer could not be queued");
        return;
    }
    t->move = TK_MOVE_OFFERING;
}

/*
 * The server drains and the table's round is over: it moves as a whole when it can (players
 * seated, Redis for the handoff, not a table of bots), else it closes (tk_close). Leavers go
 * first, and players who cannot cover a round are busted, as after any round.
 */
static void tk_move_or_close(tk_table_t *t)
{
    if (t->closed || t->move != TK_MOVE_NONE)
        return;
    if (t->eng->jobs == NULL || t->bot_table || t->move_refused || tk_humans(t) == 0 ||
        t->eng->set.move_wait_ms < 0) {
        tk_close(t);
        return;
    }
    t->closed = true; /* no round, fill or idle from now on */
    t->gap_armed = false;
    int64_t least = tk_min_stack(t);
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (s->state == TK_LEAVING) {
            tk_cash_out(t, i);
            tk_unseat(t, i);
        } else if (s->state == TK_SEATED && s->stack < least) {
            if (t->eng->game->topup)
                tk_topup(t, i); /* the offer waits for it (tk_move_offer) */
            else
                tk_bust(t, i);
        }
    }
    rt_msg_t m = {.type = TK_MSG_CLOSED, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    unsigned humans = 0;
    for (int i = 0; i < t->nseats; i++)
        humans += t->seat[i].state == TK_SEATED && !t->seat[i].bot;
    if (humans == 0) {
        t->closed = false;
        tk_close(t);
        return;
    }
    t->move = TK_MOVE_PREPARING;
    tk_move_hold(t, true);
    t->move_start_ms = clock_mono_ms();
    t->move_until_ms = t->move_start_ms +
                       (t->eng->set.move_wait_ms > 0 ? t->eng->set.move_wait_ms : TK_MOVE_WAIT_MS);
    tk_move_offer(t);
}

/* The table was adopted elsewhere: its players sit there now; the desk lets go. */
static void tk_move_release(tk_table_t *t)
{
    gs_t *gs = gs_of_desk(t->desk);
    unsigned moved = 0;
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (s->state == TK_EMPTY)
            continue;
        if (!s->bot) {
            gs_seat(gs, s->player, 0);
            moved++;
        }
        memset(s, 0, offsetof(tk_seat_t, ops));
    }
    tk_sync(t);
    metrics_add(t->eng->m_moved_out, 1);
    log_emit(LOG_INFO, "tk_table_moved", "{s:I,s:s,s:i,s:I}", "desk",
             (json_int_t)rt_desk_id(t->desk), "offer", t->offer_id, "players", (int)moved, "ms",
             (json_int_t)(clock_mono_ms() - t->move_start_ms));
    t->move = TK_MOVE_NONE;
    tk_move_hold(t, false);
    rt_msg_t m = {.type = TK_MSG_GONE, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    rt_desk_destroy(t->desk);
}

/* The offer was voided (this server's epoch was recovered elsewhere: the chips are back in
 * the wallets): the players are told and re-seated by their gateways; nothing to cash out. */
static void tk_move_voided(tk_table_t *t)
{
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state == TK_SEATED || t->seat[i].state == TK_LEAVING) {
            t->seat[i].stack = 0;
            t->seat[i].state = TK_CLOSED;
        }
    t->move = TK_MOVE_NONE;
    t->move_refused = true;
    tk_tell_closing(t);
    tk_move_hold(t, false);
}

/* When to read the offer again: 25 ms, then twice as long each time up to 400 ms. The players
 * have moved once their gateway has the adopter's answer; this only decides how soon the old
 * desk lets go, and keeps a drain of many tables from flooding the handoff thread. */
static int64_t tk_move_check_ms(tk_table_t *t)
{
    int k = t->move_checks < 4 ? t->move_checks : 4;
    t->move_checks++;
    return 25LL << k;
}

/* TK_TIMER_MOVE: go on with the move (check the offer, withdraw it when time is up). */
static void tk_move_timer(tk_table_t *t)
{
    if (t->move == TK_MOVE_PREPARING) {
        tk_move_offer(t);
        return;
    }
    if (t->move != TK_MOVE_OFFERED)
        return;
    bool late = clock_mono_ms() >= t->move_until_ms;
    tk_job_t *j = tk_job_new(t, late ? TK_JOB_WITHDRAW : TK_JOB_CHECK);
    tk_offer_base(t, &j->offer);
    if (tk_job_submit(t, j) != 0) {
        tk_move_arm(t, 100);
        return;
    }
    t->move = late ? TK_MOVE_WITHDRAWING : TK_MOVE_CHECKING;
}

/* Old table: an offer, check or withdrawal answered. */
static void tk_move_done_old(tk_table_t *t, tk_job_t *j)
{
    if (j->kind == TK_JOB_OFFER) {
        if (j->status != MONEY_OK) {
            tk_move_fallback(t, j->error);
            return;
        }
        t->move = TK_MOVE_OFFERED;
        uint64_t players[TK_MAX_SEATS];
        size_t n = 0;
        for (int i = 0; i < t->nseats; i++)
            if (t->seat[i].state == TK_SEATED && !t->seat[i].bot)
                players[n++] = t->seat[i].player;
        gs_move_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n, t->offer_id);
        log_emit(LOG_INFO, "tk_table_offered", "{s:I,s:s,s:i,s:I}", "desk",
                 (json_int_t)rt_desk_id(t->desk), "offer", t->offer_id, "players", (int)n, "ms",
                 (json_int_t)(clock_mono_ms() - t->move_start_ms));
        t->move_checks = 0;
        tk_move_arm(t, tk_move_check_ms(t));
        return;
    }
    /* CHECK or WITHDRAW */
    t->move = TK_MOVE_OFFERED;
    if (j->status != MONEY_OK) {
        if (j->status == MONEY_ERR_STALE_EPOCH || j->status == MONEY_ERR_NO_OFFER) {
            /* The fence moved (the recovery voids the offer) or the record is gone. */
            tk_move_voided(t);
            return;
        }
        log_emit(LOG_WARN, "tk_move_check_failed", "{s:s,s:i,s:s}", "offer", t->offer_id, "status",
                 j->status, "error", j->error);
        tk_move_arm(t, 100);
        return;
    }
    if (strcmp(j->status_text, "adopted") == 0) {
        tk_move_release(t);
    } else if (strcmp(j->status_text, "withdrawn") == 0) {
        metrics_add(t->eng->m_move_withdrawn, 1);
        tk_move_fallback(t, "no server adopted the table in time");
    } else if (strcmp(j->status_text, "void") == 0) {
        tk_move_voided(t);
    } else {
        tk_move_arm(t, tk_move_check_ms(t)); /* still offered */
    }
}

static void tk_adopt_answer_all(tk_table_t *t, Croupier__ErrorCode code, const char *why,
                                const char *adopted_by)
{
    gs_t *gs = gs_of_desk(t->desk);
    for (int k = 0; k < t->nadopt_q; k++) {
        if (adopted_by != NULL)
            gs_reply_adopted_by(gs, t->adopt_q[k], adopted_by);
        else
            gs_reply(gs, t->adopt_q[k], code, why, NULL);
    }
    t->nadopt_q = 0;
}

/* The adoption failed here: the requests are answered, the table goes. */
static void tk_adopt_abandon(tk_table_t *t, tk_job_t *j)
{
    metrics_add(t->eng->m_move_failed, 1);
    log_emit(LOG_INFO, "tk_adopt_failed", "{s:s,s:i,s:s,s:s}", "offer", t->offer_id, "status",
             j->status, "error", j->error, "adopter", j->adopter);
    char by[MONEY_ID_MAX + 1] = "";
    if (j->status == MONEY_ERR_ADOPTED && j->adopter[0] != '\0') {
        /* "<service>:<slot>:<epoch>:<desk>" -> the server id "<service>:<slot>" */
        snprintf(by, sizeof by, "%s", j->adopter);
        char *c = strchr(by, ':');
        c = c != NULL ? strchr(c + 1, ':') : NULL;
        if (c != NULL)
            *c = '\0';
        char self[MONEY_ID_MAX + 1];
        tk_server_id(t, self, sizeof self);
        if (strcmp(by, self) == 0)
            by[0] = '\0'; /* never send a gateway back here */
    }
    if (by[0] != '\0')
        tk_adopt_answer_all(t, CROUPIER__ERROR_CODE__UNAVAILABLE, NULL, by);
    else if (j->status == MONEY_ERR_OFFER_VOID || j->status == MONEY_ERR_NO_OFFER ||
             j->status == MONEY_ERR_BAD_ARGS || j->status == MONEY_ERR_ADOPTED)
        tk_adopt_answer_all(t, CROUPIER__ERROR_CODE__TABLE_CLOSED,
                            "the table's move was called off; its server re-seats its players",
                            NULL);
    else
        tk_adopt_answer_all(t, CROUPIER__ERROR_CODE__UNAVAILABLE, j->error, NULL);
    t->move = TK_MOVE_NONE;
    rt_msg_t m = {.type = TK_MSG_GONE, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    rt_desk_destroy(t->desk);
}

/* The adopted table takes its seats, players and match state. */
static void tk_room_import(tk_table_t *t, const json_t *room);

static void tk_adopt_import(tk_table_t *t, tk_job_t *j)
{
    gs_t *gs = gs_of_desk(t->desk);
    json_t *st = json_loads(j->state, 0, NULL);
    bool stacks = t->eng->game->money == TK_MONEY_STACK;
    json_t *room = json_object_get(st, "room");
    if (room != NULL)
        tk_room_import(t, room); /* its seats and rules first: the seats below are its own */
    t->seq = (uint64_t)json_integer_value(json_object_get(st, "seq"));
    t->event_seq = (uint64_t)json_integer_value(json_object_get(st, "event_seq"));
    json_t *b = json_object_get(st, "button");
    t->button =
        json_is_integer(b) && json_integer_value(b) >= -1 && json_integer_value(b) < t->nseats
            ? (int)json_integer_value(b)
            : -1;
    size_t idx;
    json_t *p;
    json_array_foreach(json_object_get(st, "players"), idx, p)
    {
        json_int_t seat = json_integer_value(json_object_get(p, "seat"));
        const char *id = json_string_value(json_object_get(p, "player"));
        if (seat < 0 || seat >= t->nseats || id == NULL || t->seat[seat].state != TK_EMPTY)
            continue;
        tk_seat_t *s = &t->seat[seat];
        int64_t stack = json_integer_value(json_object_get(p, "stack"));
        if (stacks) {
            bool found = false;
            for (size_t k = 0; k < j->n && !found; k++)
                if (j->seats[k] == seat) {
                    stack = j->stacks[k]; /* what the account held: the chips themselves */
                    found = true;
                }
            if (!found)
                continue;
        } else {
            stack = 0;
        }
        s->player = strtoull(id, NULL, 10);
        s->state = TK_SEATED;
        s->bot = json_is_true(json_object_get(p, "bot"));
        s->away = !s->bot; /* until the player's Adopt or resume arrives */
        s->stack = stack;
        s->bank_ms = json_integer_value(json_object_get(p, "bank_ms"));
        s->out = json_is_true(json_object_get(p, "out"));
        if (!s->bot)
            gs_seat(gs, s->player, rt_desk_id(t->desk));
        if (t->eng->game->seat_changed != NULL)
            t->eng->game->seat_changed(t, t->g, (int)seat, true);
    }
    json_t *gst = json_object_get(st, "game_state");
    if (gst != NULL && t->eng->game->import_state != NULL &&
        t->eng->game->import_state(t, t->g, gst) != 0)
        log_emit(LOG_ERROR, "tk_import_state_refused", "{s:s,s:s}", "offer", t->offer_id, "game",
                 t->game);
    json_decref(st);
    t->adopted = true;
    t->move = TK_MOVE_NONE;
    tk_sync(t);
    metrics_add(t->eng->m_moved_in, 1);
    log_emit(LOG_INFO, "tk_table_adopted", "{s:I,s:s,s:i,s:I}", "desk",
             (json_int_t)rt_desk_id(t->desk), "offer", t->offer_id, "players", (int)tk_humans(t),
             "ms", (json_int_t)(clock_mono_ms() - t->move_start_ms));
    for (int k = 0; k < t->nadopt_q; k++) {
        gs_request_t *req = t->adopt_q[k];
        int i = tk_find(t, req->player_id);
        if (i < 0) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not at the moved table", NULL);
            continue;
        }
        t->seat[i].away = false;
        tk_reply_snapshot(t, req, i);
    }
    t->nadopt_q = 0;
    if (t->room != NULL) {
        rt_msg_t m = {.type = TK_MSG_ROOM,
                      .arg = rt_desk_id(t->desk),
                      .ptr = xstrdup(t->room->rec.code),
                      .free_fn = free};
        rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    }
    tk_tell_lobby(t);
    if (stacks) {
        int64_t least = tk_min_stack(t);
        for (int i = 0; i < t->nseats; i++)
            if (t->seat[i].state == TK_SEATED && t->seat[i].stack < least && t->eng->game->topup)
                tk_topup(t, i);
    }
    tk_maybe_schedule(t);
    tk_maybe_fill(t);
    /* This server began to drain while the adoption was in flight: the table moves on again. */
    if (rt_intake_stopped(rt_desk_rt(t->desk)))
        tk_move_or_close(t);
}

/* Table: an Adopt request (from the lobby). */
static void tk_table_adopt(tk_table_t *t, gs_request_t *req)
{
    if (t->adopted) {
        int i = tk_find(t, req->player_id);
        if (i < 0) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not at the moved table");
            return;
        }
        t->seat[i].away = false;
        tk_reply_snapshot(t, req, i);
        return;
    }
    if (t->move == TK_MOVE_NONE && tk_free_seats(t) == t->nseats) {
        snprintf(t->offer_id, sizeof t->offer_id, "%s", req->frame->adopt->offer_id);
        tk_job_t *j = tk_job_new(t, TK_JOB_ADOPT);
        snprintf(j->game, sizeof j->game, "%s", t->game);
        j->stake = t->stake;
        j->nseats = t->nseats;
        for (int i = 0; i < TK_MAX_SEATS; i++)
            snprintf(j->table_accts[i], sizeof j->table_accts[i], "%s", t->seat[i].acct);
        /* the adopter's accounts carry the adopter's epoch: the table's own */
        j->slot = t->slot;
        j->epoch = t->epoch;
        if (tk_job_submit(t, j) != 0) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "server stopping");
            return;
        }
        t->move = TK_MOVE_ADOPTING;
        t->move_start_ms = clock_mono_ms();
    }
    if (t->move != TK_MOVE_ADOPTING || t->nadopt_q == TK_ADOPT_QUEUE) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "the table is busy; retry");
        return;
    }
    t->adopt_q[t->nadopt_q++] = req;
}

static void tk_room_job_done(tk_table_t *t, tk_job_t *j);

static void tk_move_done(tk_table_t *t, tk_job_t *j)
{
    if (j->kind == TK_JOB_ROOM_CREATE || j->kind == TK_JOB_ROOM_WRITE) {
        tk_room_job_done(t, j);
        return;
    }
    if (j->kind == TK_JOB_ADOPT) {
        if (t->move != TK_MOVE_ADOPTING)
            return;
        if (j->status == MONEY_OK) {
            tk_adopt_import(t, j);
            if (gs_fenced(gs_of_desk(t->desk)))
                tk_fence(t); /* adopted while cut off from Redis: it closes at once */
        } else {
            tk_adopt_abandon(t, j);
        }
        return;
    }
    if (t->move == TK_MOVE_OFFERING || t->move == TK_MOVE_CHECKING ||
        t->move == TK_MOVE_WITHDRAWING)
        tk_move_done_old(t, j);
}

/* ---- private rooms (tk.h "rooms", lease/room.h) ------------------------------------------ */

static int64_t tk_room_keep_ms(const tk_table_t *t)
{
    return t->eng->set.room_keep_ms > 0 ? t->eng->set.room_keep_ms : TK_ROOM_KEEP_MS;
}

static int64_t tk_room_wait_ms(const tk_engine_t *eng)
{
    return eng->set.room_wait_ms > 0 ? eng->set.room_wait_ms : TK_ROOM_WAIT_MS;
}

/* The record names this server, its epoch and the table as where the room is played. */
static void tk_room_here(tk_table_t *t)
{
    room_record_t *r = &t->room->rec;
    tk_server_id(t, r->server, sizeof r->server);
    r->epoch = t->epoch;
    r->desk = rt_desk_id(t->desk);
    room_owner(r->server, r->epoch, r->desk, r->owner, sizeof r->owner);
}

/* Rewrites the room's record (take: as its new owner, after an adoption). The jobs thread runs
 * the writes of a server in order, so the record ends as the last one says. */
static void tk_room_write(tk_table_t *t, bool take)
{
    if (t->room == NULL || t->room->rec.code[0] == '\0' || t->eng->jobs == NULL)
        return;
    tk_job_t *j = tk_job_new(t, TK_JOB_ROOM_WRITE);
    j->room = xmalloc(sizeof *j->room);
    *j->room = t->room->rec;
    int64_t left = t->room->rec.expires_ms - clock_wall_ms();
    j->ttl_ms = left > 1000 ? left : 1000;
    j->take = take;
    if (tk_job_submit(t, j) != 0)
        log_emit(LOG_ERROR, "tk_room_write_refused", "{s:s}", "room", t->room->rec.code);
}

/* Pushes the room's RoomInfo (its scoreboard) to everyone seated. */
static void tk_room_push(tk_table_t *t)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    room_info_buf_t rib;
    room_info_fill(&t->room->rec, &rib);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROOM;
    sm.room = &rib.info;
    tk_push_all(t, &sm);
}

/* The first deal starts: every seat is taken, the scoreboard counts from 0. */
static void tk_room_started(tk_table_t *t)
{
    room_record_t *r = &t->room->rec;
    r->state = CROUPIER__ROOM_STATE__ROOM_PLAYING;
    r->nscores = 0;
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state == TK_SEATED)
            r->scores[r->nscores++] = (room_score_t){.seat = i, .player = t->seat[i].player};
    r->expires_ms = clock_wall_ms() + tk_room_keep_ms(t);
    tk_room_write(t, false);
    log_emit(LOG_INFO, "tk_room_started", "{s:s,s:s,s:i,s:i}", "room", r->code, "game", t->game,
             "seats", t->nseats, "deals", r->deals);
}

/* A deal was played and settled: the scoreboard adds its deltas; after the last the room ends. */
static void tk_room_dealt(tk_table_t *t, const int64_t *delta)
{
    room_record_t *r = &t->room->rec;
    if (r->played < ROOM_MAX_DEALS)
        snprintf(r->rounds[r->played], sizeof r->rounds[0], "%s", t->round_id);
    r->played++;
    for (int k = 0; k < r->nscores; k++)
        r->scores[k].total += delta[r->scores[k].seat];
    if (r->played >= r->deals) {
        tk_room_end(t, NULL);
        return;
    }
    r->expires_ms = clock_wall_ms() + tk_room_keep_ms(t);
    tk_room_write(t, false);
    tk_room_push(t);
}

/*
 * The room ends (its last deal, its host, its wait, or the server): the record keeps the final
 * scoreboard, everyone is told RoomInfo and TableClosing{CLOSING_ROOM_ENDED} (their gateways
 * forget the seat: no one is re-seated) and cashed out. The empty table retires when idle.
 */
static void tk_room_end(tk_table_t *t, const char *detail)
{
    tk_room_t *rm = t->room;
    if (rm == NULL || rm->ended)
        return;
    rm->ended = true;
    room_record_t *r = &rm->rec;
    bool started = r->state == CROUPIER__ROOM_STATE__ROOM_PLAYING;
    r->state = started ? CROUPIER__ROOM_STATE__ROOM_FINISHED : CROUPIER__ROOM_STATE__ROOM_DISBANDED;
    snprintf(r->detail, sizeof r->detail, "%s", detail != NULL ? detail : "");
    r->expires_ms = clock_wall_ms() + tk_room_keep_ms(t);
    tk_room_write(t, false);
    tk_room_push(t);
    log_emit(LOG_INFO, "tk_room_ended", "{s:s,s:s,s:i,s:i,s:s}", "room", r->code, "state",
             started ? "finished" : "disbanded", "played", r->played, "deals", r->deals, "detail",
             r->detail);
    const char *why = detail != NULL ? detail
                      : started      ? "the room played its last deal"
                                     : "the room was disbanded";
    uint64_t players[TK_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if ((s->state == TK_SEATED || s->state == TK_LEAVING || s->state == TK_CLOSED) && !s->bot)
            players[n++] = s->player;
    }
    gs_close_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n,
                        CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED, why);
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (s->state != TK_SEATED && s->state != TK_LEAVING && s->state != TK_CLOSED)
            continue; /* empty, or buying: refunded when its buy-in returns (tk_buyin_done) */
        if (s->topping) {
            s->leave_after_topup = true; /* its chips go back once the top-up is in */
            continue;
        }
        if (s->state != TK_CLOSED)
            tk_cash_out(t, i);
        tk_unseat(t, i);
    }
}

/* The room of a table that was just opened for it starts: its code is drawn (a job); the host's
 * join waits for it. */
static void tk_room_create(tk_table_t *t, const tk_join_t *join)
{
    tk_room_here(t);
    t->room->rec.host = join->req->player_id;
    tk_join_t *keep = xmalloc(sizeof *keep);
    *keep = *join;
    keep->room = NULL;
    t->room->create = keep;
    tk_job_t *j = tk_job_new(t, TK_JOB_ROOM_CREATE);
    j->room = xmalloc(sizeof *j->room);
    *j->room = t->room->rec;
    j->ttl_ms = t->room->rec.expires_ms - clock_wall_ms() + 60000;
    if (tk_job_submit(t, j) != 0) {
        t->room->create = NULL;
        tk_refuse(t, keep->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "server stopping");
        free(keep);
        t->room->ended = true;
        tk_maybe_idle(t);
    }
}

static void tk_table_join(tk_table_t *t, tk_join_t *j);

static void tk_room_job_done(tk_table_t *t, tk_job_t *j)
{
    if (t->room == NULL)
        return;
    if (j->kind == TK_JOB_ROOM_WRITE) {
        if (j->status != 1)
            log_emit(j->status == 0 ? LOG_WARN : LOG_ERROR, "tk_room_write_failed", "{s:s,s:i,s:s}",
                     "room", t->room->rec.code, "status", j->status, "why",
                     j->status == 0        ? "the record expired"
                     : j->status == -EPERM ? "another server owns the room"
                                           : "redis unreachable");
        return;
    }
    tk_join_t *keep = t->room->create;
    t->room->create = NULL;
    if (keep == NULL)
        return;
    if (j->status != 0) {
        log_emit(LOG_ERROR, "tk_room_create_failed", "{s:i}", "status", j->status);
        tk_refuse(t, keep->req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                  j->status == -EEXIST ? "no free room code; retry" : "room store unreachable");
        free(keep);
        t->room->ended = true; /* nobody knows the room: the empty table retires */
        tk_maybe_idle(t);
        return;
    }
    snprintf(t->room->rec.code, sizeof t->room->rec.code, "%s", j->room->code);
    rt_msg_t m = {.type = TK_MSG_ROOM,
                  .arg = rt_desk_id(t->desk),
                  .ptr = xstrdup(t->room->rec.code),
                  .free_fn = free};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    int64_t wait = t->room->rec.expires_ms - clock_wall_ms();
    if (rt_desk_timer_arm(t->desk, wait > 0 ? wait : 0, TK_TIMER_ROOM, NULL) != 0)
        log_emit(LOG_ERROR, "tk_room_timer_failed", "{s:s}", "room", t->room->rec.code);
    log_emit(LOG_INFO, "tk_room_created", "{s:s,s:s,s:I,s:i,s:i}", "room", t->room->rec.code,
             "game", t->game, "stake", (json_int_t)t->stake, "seats", t->nseats, "deals",
             t->room->rec.deals);
    t->joins_seen--;        /* the lobby's one join, seen once already */
    tk_table_join(t, keep); /* the host sits down */
    free(keep);
}

/* TK_TIMER_ROOM: a room still not full when its wait is over is disbanded. */
static void tk_room_timer(tk_table_t *t)
{
    if (t->room == NULL || t->room->ended ||
        t->room->rec.state != CROUPIER__ROOM_STATE__ROOM_WAITING || t->move != TK_MOVE_NONE)
        return;
    if (clock_wall_ms() + 50 < t->room->rec.expires_ms) {
        rt_desk_timer_arm(t->desk, t->room->rec.expires_ms - clock_wall_ms(), TK_TIMER_ROOM, NULL);
        return;
    }
    if (rt_desk_in_round(t->desk))
        return;
    tk_room_end(t, "the room was not full in time");
}

/*
 * An adopted table is a room: it takes the room's record, seats and rules (the game's state is
 * made anew when they differ from the server's), and the record names this server now.
 */
static void tk_room_import(tk_table_t *t, const json_t *room)
{
    char *text = json_dumps(room, JSON_COMPACT);
    tk_room_t *rm = xcalloc(1, sizeof *rm);
    if (text == NULL || room_record_parse(text, strlen(text), &rm->rec) != 0) {
        log_emit(LOG_ERROR, "tk_room_import_refused", "{s:s}", "offer", t->offer_id);
        free(text);
        free(rm);
        return;
    }
    free(text);
    t->room = rm;
    char opts[sizeof t->options];
    room_options_text(&rm->rec, opts, sizeof opts);
    if (rm->rec.seats != t->nseats || strcmp(opts, t->options) != 0) {
        int was = t->nseats;
        char was_opts[sizeof t->options];
        snprintf(was_opts, sizeof was_opts, "%s", t->options);
        t->nseats = rm->rec.seats;
        snprintf(t->options, sizeof t->options, "%s", opts);
        void *g = t->eng->game->table_create(t, t->game, t->stake);
        if (g == NULL) {
            /* This server's game cannot play the room's rules: it plays no deal here. */
            t->nseats = was;
            snprintf(t->options, sizeof t->options, "%s", was_opts);
            log_emit(LOG_ERROR, "tk_room_rules_refused", "{s:s}", "room", rm->rec.code);
        } else {
            t->eng->game->table_destroy(t->g);
            t->g = g;
        }
    }
    tk_room_here(t);
    tk_room_write(t, true);
    if (rm->rec.state == CROUPIER__ROOM_STATE__ROOM_WAITING) {
        int64_t wait = rm->rec.expires_ms - clock_wall_ms();
        rt_desk_timer_arm(t->desk, wait > 0 ? wait : 0, TK_TIMER_ROOM, NULL);
    }
}

/* A join of a room at its table: refused when it started, ended or is full. */
static bool tk_room_join_refused(tk_table_t *t, gs_request_t *req)
{
    const room_record_t *r = &t->room->rec;
    if (t->room->ended) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_ENDED,
                  r->state == CROUPIER__ROOM_STATE__ROOM_DISBANDED ? "the room was disbanded"
                                                                   : "the room is over");
        return true;
    }
    if (r->state != CROUPIER__ROOM_STATE__ROOM_WAITING) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_STARTED, "the room has started");
        return true;
    }
    if (tk_free_seats(t) == 0) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_FULL, "every seat of the room is taken");
        return true;
    }
    return false;
}

static void tk_table_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    tk_table_t *t = tk_enter(desk, state);
    int i = tk_find(t, req->player_id);
    if (req->kind == GS_REQ_PLAYER_GONE) {
        if (i >= 0) {
            t->seat[i].away = true; /* the seat is kept: the player may resume */
            if (t->eng->game->trustee_when_away && t->turn_seat == i && t->turn_armed)
                tk_turn_hurry(t);
        }
        gs_request_free(req);
        return;
    }
    if (i >= 0 && t->seat[i].state == TK_BUYING && req->kind != GS_REQ_ACTION) {
        /* The player's join is in progress (its buy-in not applied yet): a retry of the join,
         * through any gateway, gets its seat once the buy-in is done. */
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "join in progress; retry");
        return;
    }
    if (i < 0 || !tk_seat_told(&t->seat[i])) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated at this table");
        return;
    }
    if (t->move != TK_MOVE_NONE && t->move != TK_MOVE_ADOPTING &&
        (req->kind == GS_REQ_ACTION || req->kind == GS_REQ_LEAVE)) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                  "the table is moving to another server; retry");
        return;
    }
    switch (req->kind) {
    case GS_REQ_JOIN:
    case GS_REQ_RESUME: {
        tk_seat_t *s = &t->seat[i];
        bool hurried = s->trustee || (s->away && t->eng->game->trustee_when_away);
        s->away = false;
        s->trustee = s->state == TK_LEAVING;
        if (hurried && !s->trustee && t->eng->game->trustee_when_away && t->turn_seat == i &&
            t->turn_armed)
            tk_turn_restore(t);
        tk_reply_snapshot(t, req, i);
        return;
    }
    case GS_REQ_LEAVE:
        tk_leave(t, req, i);
        return;
    case GS_REQ_ACTION:
        tk_action(t, req, i);
        return;
    default:
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNKNOWN_REQUEST, "unknown request");
    }
}

/* Submits the buy-in of seat i (BUYING) from wallet: a money follow-up whose result comes back
 * as TK_MSG_BUYIN_DONE (or, topup, TK_MSG_TOPUP_DONE). Returns 0 or a negative errno. */
static int tk_submit_buyin(tk_table_t *t, int i, const char *wallet, int64_t amount, bool topup)
{
    gs_t *gs = gs_of_desk(t->desk);
    tk_seat_t *s = &t->seat[i];
    uint64_t n = ++s->ops;
    char op[MONEY_ID_MAX + 1];
    tk_op_id(t, i, n, topup ? "tu" : "bi", op, sizeof op);
    tk_op_t *o = xcalloc(1, sizeof *o);
    *o = (tk_op_t){.gs = gs,
                   .rt = rt_desk_rt(t->desk),
                   .desk = rt_desk_id(t->desk),
                   .seat = i,
                   .n = n,
                   .msg = topup ? TK_MSG_TOPUP_DONE : TK_MSG_BUYIN_DONE};
    money_writer_t *w = gs_money(gs);
    gs_money_followup_begin(gs);
    money_seat_t ms = tk_money_seat(t, i, wallet);
    int rc = w != NULL ? money_writer_submit_seat(w, MONEY_KIND_SEAT_IN, &ms, amount, op,
                                                  tk_seat_op_cb, o)
                       : -ENOTCONN;
    if (rc != 0) {
        gs_money_followup_end(gs);
        free(o);
    }
    return rc;
}

/* Seat i is taken for good (buy-in applied, or a play-money seat). */
static void tk_seated(tk_table_t *t, int i)
{
    tk_seat_t *s = &t->seat[i];
    s->state = TK_SEATED;
    if (t->eng->game->seat_changed != NULL)
        t->eng->game->seat_changed(t, t->g, i, true);
    tk_sync(t);
    tk_maybe_schedule(t);
    if (!s->bot)
        tk_maybe_fill(t);
}

/* A join with its buy-in chosen reaches the table: reserve a seat and submit the buy-in. */
static void tk_table_join(tk_table_t *t, tk_join_t *j)
{
    gs_t *gs = gs_of_desk(t->desk);
    gs_request_t *req = j->req;
    t->joins_seen++;
    t->retiring = false; /* the lobby counted this join: it will not retire the table */
    int i = tk_find(t, req->player_id);
    if (i >= 0) {
        /* The same player's joins crossed on their way here (the gs routes a join of a player
         * it knows to be seated as a resume): the seat it has, or its join is in progress. */
        if (tk_seat_told(&t->seat[i]))
            tk_reply_snapshot(t, req, i);
        else
            tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "join in progress; retry");
        tk_tell_lobby(t);
        return;
    }
    if (t->closed || rt_intake_stopped(rt_desk_rt(t->desk))) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__DRAINING, "table closing");
        return;
    }
    if (t->room != NULL) {
        const Croupier__RoomJoin *rj = req->frame->room;
        if (rj != NULL && rj->create != NULL && t->room->rec.code[0] == '\0' &&
            t->room->create == NULL && !t->room->ended) {
            tk_room_create(t, j); /* the host sits down once the code is drawn */
            return;
        }
        if (tk_room_join_refused(t, req)) {
            tk_tell_lobby(t);
            return;
        }
    }
    for (i = 0; i < t->nseats && t->seat[i].state != TK_EMPTY; i++)
        ;
    if (i == t->nseats) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__TABLE_FULL, "table full");
        tk_tell_lobby(t);
        return;
    }
    tk_seat_t *s = &t->seat[i];
    s->player = req->player_id;
    s->bank_ms = t->eng->set.time_bank_ms;
    t->idle_serial++; /* an idle timer armed before this join is stale now */
    gs_seat(gs, s->player, rt_desk_id(t->desk)); /* a second join now reaches this seat */
    if (t->eng->game->money == TK_MONEY_WALLET) {
        tk_seated(t, i);
        tk_reply_joined(t, req, i);
        return;
    }
    s->state = TK_BUYING;
    s->buyin = j->amount;
    s->join_req = req;
    char player[24];
    tk_player_name(s->player, player, sizeof player);
    if (tk_submit_buyin(t, i, player, j->amount, false) != 0) {
        gs_seat(gs, s->player, 0);
        s->state = TK_EMPTY;
        s->player = 0;
        s->join_req = NULL;
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet unavailable");
        tk_maybe_idle(t);
        tk_tell_lobby(t);
        return;
    }
    tk_sync(t);
}

int tk_seat_add_bot(tk_table_t *t)
{
    if (t->closed || rt_intake_stopped(rt_desk_rt(t->desk)))
        return -ESHUTDOWN;
    int i;
    for (i = 0; i < t->nseats && t->seat[i].state != TK_EMPTY; i++)
        ;
    if (i == t->nseats)
        return -ENOSPC;
    static _Atomic uint64_t next_bot = 1;
    tk_seat_t *s = &t->seat[i];
    s->player = TK_BOT_ID_BASE | next_bot++;
    s->bot = true;
    t->idle_serial++;
    if (t->eng->game->money == TK_MONEY_WALLET) {
        tk_seated(t, i);
        tk_tell_lobby(t);
        return i;
    }
    s->state = TK_BUYING;
    int64_t least;
    tk_buyin_range(t->eng, t->game, t->stake, &s->buyin, &least);
    if (tk_submit_buyin(t, i, t->eng->house, s->buyin, false) != 0) {
        memset(s, 0, offsetof(tk_seat_t, ops));
        tk_maybe_idle(t);
        return -ENOTCONN;
    }
    tk_tell_lobby(t);
    return i;
}

/* The buy-in's result: the seat account is credited and the player sits, or (the table closed
 * meanwhile) the chips go straight back; a failure frees the seat. A bot's buy-in is answered
 * to nobody. */
static void tk_buyin_done(tk_table_t *t, int i, uint64_t n, const money_result_t *res)
{
    gs_t *gs = gs_of_desk(t->desk);
    if (i < 0 || i >= t->nseats || t->seat[i].state != TK_BUYING || t->seat[i].ops != n) {
        log_emit(LOG_ERROR, "tk_buyin_stray", "{s:i,s:s,s:i}", "seat", i, "op", res->id, "status",
                 res->status);
        return;
    }
    tk_seat_t *s = &t->seat[i];
    gs_request_t *req = s->join_req;
    s->join_req = NULL;
    char wallet[MONEY_NAME_MAX + 1], op[MONEY_ID_MAX + 1];
    tk_owner_wallet(t->eng, s, wallet, sizeof wallet);
    bool shut = t->closed || tk_room_ended(t);
    if (res->status != MONEY_OK || shut) {
        if (res->status == MONEY_OK) {
            /* The table closed meanwhile: the chips go straight back. */
            tk_op_id(t, i, n, "rf", op, sizeof op);
            money_seat_t ms = tk_money_seat(t, i, wallet);
            int rc = money_writer_submit_seat(gs_money(gs), MONEY_KIND_SEAT_OUT, &ms, s->buyin, op,
                                              tk_money_log_cb, NULL);
            if (rc != 0)
                log_emit(LOG_ERROR, "tk_refund_refused", "{s:s,s:s,s:I,s:i}", "wallet", wallet,
                         "op", op, "amount", (json_int_t)s->buyin, "errno", -rc);
        }
        bool poor = res->status == MONEY_ERR_INSUFFICIENT;
        if (req != NULL && tk_room_ended(t) && res->status == MONEY_OK)
            tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_ENDED,
                      "the room was disbanded; buy-in refunded");
        else if (req != NULL)
            tk_refuse(t, req,
                      t->closed ? CROUPIER__ERROR_CODE__DRAINING
                      : poor    ? CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS
                                : CROUPIER__ERROR_CODE__UNAVAILABLE,
                      t->closed ? "table closing; buy-in refunded"
                      : poor    ? "wallet balance below the buy-in"
                                : "wallet unavailable");
        else
            log_emit(LOG_WARN, "tk_bot_buyin_failed", "{s:s,s:s,s:i}", "engine",
                     t->eng->game->engine, "house", wallet, "status", res->status);
        if (!s->bot)
            gs_seat(gs, s->player, 0);
        memset(s, 0, offsetof(tk_seat_t, ops));
        tk_sync(t);
        tk_tell_lobby(t);
        tk_maybe_idle(t);
        return;
    }
    s->stack = s->buyin; /* the transfer put it into the seat account */
    log_emit(LOG_INFO, "tk_sat", "{s:s,s:s,s:I,s:i,s:I,s:b}", "engine", t->eng->game->engine,
             "player", wallet, "desk", (json_int_t)rt_desk_id(t->desk), "seat", i, "buyin",
             (json_int_t)s->buyin, "bot", s->bot);
    tk_seated(t, i);
    if (req != NULL)
        tk_reply_joined(t, req, i);
}

/* After a round (tk_game_t.topup): seat i's stack is brought back to the largest buy-in from
 * its owner's wallet before it plays again. */
static void tk_topup(tk_table_t *t, int i)
{
    tk_seat_t *s = &t->seat[i];
    int64_t want, least;
    tk_buyin_range(t->eng, t->game, t->stake, &want, &least);
    int64_t amount = want - s->stack;
    if (amount <= 0 || s->topping)
        return;
    char wallet[MONEY_NAME_MAX + 1];
    tk_owner_wallet(t->eng, s, wallet, sizeof wallet);
    s->buyin = amount;
    if (tk_submit_buyin(t, i, wallet, amount, true) != 0) {
        tk_bust(t, i);
        return;
    }
    s->topping = true;
    s->topup_op = s->ops; /* a closing cash-out may take the next op numbers meanwhile */
}

/* A top-up's result: the seat plays on with its stack restored, or (its wallet cannot cover
 * it) leaves the table like a busted seat. */
static void tk_topup_done(tk_table_t *t, int i, uint64_t n, const money_result_t *res)
{
    if (i < 0 || i >= t->nseats || !t->seat[i].topping || t->seat[i].topup_op != n) {
        log_emit(LOG_ERROR, "tk_topup_stray", "{s:i,s:s,s:i}", "seat", i, "op", res->id, "status",
                 res->status);
        return;
    }
    tk_seat_t *s = &t->seat[i];
    s->topping = false;
    if (res->status == MONEY_OK)
        s->stack += s->buyin; /* the transfer put it into the seat account */
    if (s->leave_after_topup) {
        tk_cash_out(t, i);
        tk_unseat(t, i);
        return;
    }
    if (t->closed && t->move == TK_MOVE_NONE) {
        /* Closed meanwhile: the seat is cashed out with everyone else's (tk_close) unless the
         * credit came after it; then this seat goes now. (A table preparing a whole-table move
         * tops up as after any round: the offer waits for it.) */
        if (s->state == TK_CLOSED)
            tk_cash_out(t, i);
        return;
    }
    if (res->status != MONEY_OK) {
        tk_bust(t, i);
        tk_maybe_fill(t);
        return;
    }
    if (s->bot)
        tk_bots_stand(t); /* the last human left while this bot topped up */
    tk_maybe_schedule(t);
}

/* A table with a human and empty seats gets server bots after bot_fill_ms (tk_game_t.bots). */
static void tk_maybe_fill(tk_table_t *t)
{
    /* A room gets server bots only when its host asked for them (then even with fill off). */
    bool room = t->room != NULL;
    if (room && (!t->room->rec.bot_fill || t->room->ended))
        return;
    if (!t->eng->game->bots || (!room && t->eng->set.bot_fill_ms < 0) || t->fill_armed ||
        t->closed || tk_humans(t) == 0 || tk_free_seats(t) == 0)
        return;
    long ms = t->eng->set.bot_fill_ms < 0 ? 0 : t->eng->set.bot_fill_ms;
    if (rt_desk_timer_arm(t->desk, ms, TK_TIMER_FILL, NULL) == 0)
        t->fill_armed = true;
}

static void tk_table_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    tk_table_t *t = tk_enter(desk, state);
    switch (msg->type) {
    case TK_MSG_JOIN: {
        tk_join_t *j = msg->ptr;
        msg->ptr = NULL;
        msg->free_fn = NULL;
        tk_table_join(t, j);
        free(j);
        return;
    }
    case TK_MSG_BUYIN_DONE:
        tk_buyin_done(t, (int)msg->arg, msg->arg2, msg->ptr);
        return;
    case TK_MSG_TOPUP_DONE:
        tk_topup_done(t, (int)msg->arg, msg->arg2, msg->ptr);
        return;
    case TK_MSG_SETTLED:
        tk_settled(t, msg->arg2, msg->ptr);
        return;
    case TK_MSG_ADOPT: {
        tk_join_t *j = msg->ptr;
        msg->ptr = NULL;
        msg->free_fn = NULL;
        gs_request_t *req = j->req;
        free(j);
        tk_table_adopt(t, req);
        return;
    }
    case TK_MSG_MOVE_DONE:
        tk_move_done(t, msg->ptr); /* the runtime frees the job after this */
        return;
    case TK_MSG_ADD_BOTS:
        t->bot_table = true;
        for (uint64_t k = 0; k < msg->arg; k++)
            if (tk_seat_add_bot(t) < 0)
                break;
        return;
    case TK_MSG_CASHOUT_DONE:
        if (t->pending_cashouts > 0 && --t->pending_cashouts == 0)
            tk_tell_closing(t);
        return;
    case TK_MSG_RETIRE:
        /* arg2 1: the lobby no longer routes joins here (it forgot the table), and every join
         * it sent has arrived; still empty, the table goes. 0: a join is on its way. */
        if (msg->arg2 == 1 && tk_free_seats(t) == t->nseats && !rt_desk_in_round(desk) &&
            !t->closed) {
            rt_desk_destroy(desk);
            return;
        }
        t->retiring = false;
        if (msg->arg2 == 1)
            log_emit(LOG_ERROR, "tk_retire_refused", "{s:I}", "desk", (json_int_t)rt_desk_id(desk));
        tk_maybe_idle(t);
        return;
    default:
        return;
    }
}

static void tk_table_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    tk_table_t *t = tk_enter(desk, state);
    uint64_t kind = cookie & 0xff, serial = cookie >> 8;
    if (kind == TK_TIMER_NOTICE) {
        if (!t->close_told)
            log_emit(LOG_WARN, "tk_cash_out_slow", "{s:i}", "pending", t->pending_cashouts);
        tk_tell_closing(t);
    } else if (kind == TK_TIMER_MOVE) {
        tk_move_timer(t);
    } else if (kind == TK_TIMER_ROOM) {
        tk_room_timer(t);
    } else if (kind == TK_TIMER_GAME) {
        if (t->eng->game->on_timer != NULL)
            t->eng->game->on_timer(t, t->g, cookie >> 8);
    } else if (kind == TK_TIMER_FILL) {
        t->fill_armed = false;
        if (t->closed || tk_humans(t) == 0)
            return;
        while (tk_free_seats(t) > 0 && tk_seat_add_bot(t) >= 0)
            ;
    } else if (kind == TK_TIMER_GAP) {
        t->gap_armed = false;
        tk_start_round(t);
    } else if (kind == TK_TIMER_IDLE) {
        t->idle_armed = false;
        if (serial != t->idle_serial || t->closed || t->retiring || tk_free_seats(t) != t->nseats ||
            rt_desk_in_round(desk))
            return;
        t->retiring = true;
        rt_msg_t m = {.type = TK_MSG_IDLE, .arg = rt_desk_id(desk), .arg2 = tk_seats_word(t)};
        rt_post(rt_desk_rt(desk), t->eng->lobby, &m);
    } else if (kind == TK_TIMER_TURN && serial == t->turn_serial && t->turn_armed) {
        t->turn_armed = false;
        int seat = t->turn_seat;
        if (!rt_desk_in_round(desk) || seat < 0)
            return;
        tk_seat_t *s = &t->seat[seat];
        if (s->bot) {
            if (t->eng->game->bot_move != NULL)
                t->eng->game->bot_move(t, t->g, seat);
            else
                t->eng->game->timeout(t, t->g, seat);
            return;
        }
        if (s->trustee) {
            metrics_add(t->eng->m_auto, 1);
        } else {
            metrics_add(t->eng->m_timeouts, 1);
            s->bank_ms = 0;
            s->trustee = true;
        }
        t->eng->game->timeout(t, t->g, seat);
    }
}

static void tk_table_on_intake_stopped(rt_desk_t *desk, void *state)
{
    tk_table_t *t = tk_enter(desk, state);
    if (!rt_desk_in_round(desk) && !t->settling)
        tk_move_or_close(t);
    /* else: the round finishes, then the table moves or closes (tk_finish). */
}

static void tk_table_on_void(rt_desk_t *desk, void *state)
{
    tk_table_t *t = tk_enter(desk, state);
    if (t->move >= TK_MOVE_OFFERING && t->move <= TK_MOVE_WITHDRAWING) {
        /* Offered: the seat accounts are the offer's now (an adopter may be taking them); the
         * exit's recovery voids an offer nobody adopted and returns its chips. */
        log_emit(LOG_WARN, "tk_move_unfinished_at_drain_bound", "{s:s}", "offer", t->offer_id);
        tk_move_hold(t, false);
        return;
    }
    t->move = TK_MOVE_NONE;
    if (rt_desk_in_round(desk))
        tk_void(t, CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT);
    t->closed = false;
    t->move_refused = true;
    tk_close(t);
    tk_move_hold(t, false);
}

/*
 * The server fenced itself (gs.h gs_set_fenced; docs/queues.md "A server cut off from Redis"):
 * its lease could not be confirmed, and once it lapses another server may return this table's
 * chips. Everything stops now, without waiting for Redis: a round in play is voided (its seat
 * accounts still hold the stacks of its start: no chip moved), the seats are cashed out (queued:
 * applied if Redis comes back to this server, else the recovery returns them), and the players
 * are told TableClosing{CLOSING_STORE_UNREACHABLE} at once, so their gateways seat them
 * elsewhere. A round whose settlement is on its way is left to Redis: applied or not, the
 * seats' cash-outs queued behind it return exactly what the players hold; its players are told
 * now and get no RoundEnd.
 */
static void tk_fence(tk_table_t *t)
{
    rt_desk_t *desk = t->desk;
    if (t->fenced)
        return;
    if (t->move >= TK_MOVE_OFFERING && t->move <= TK_MOVE_WITHDRAWING) {
        /* Offered: the seat accounts are the offer's (an adopter may be taking them, and its
         * players were sent there); the recovery voids an offer nobody adopted. */
        tk_move_hold(t, false);
        return;
    }
    if (t->move == TK_MOVE_ADOPTING)
        return; /* the adoption's answer comes first, then the table fences (tk_move_done) */
    t->fenced = true;
    log_emit(LOG_WARN, "tk_fenced", "{s:s,s:b,s:b,s:i}", "game", t->game, "in_round",
             rt_desk_in_round(desk), "settling", t->settling, "humans", rt_desk_humans(desk));
    t->move = TK_MOVE_NONE;
    if (rt_desk_in_round(desk) && !t->settling)
        tk_void(t, CROUPIER__VOID_REASON__VOID_STORE_UNREACHABLE); /* closes the table */
    t->move_refused = true;
    tk_close(t);
    tk_tell_closing(t);
    tk_move_hold(t, false);
}

static void tk_table_on_fence(rt_desk_t *desk, void *state)
{
    tk_fence(tk_enter(desk, state));
}

static void tk_table_on_destroy(rt_desk_t *desk, void *state)
{
    tk_table_t *t = tk_enter(desk, state);
    if (rt_desk_in_round(desk))
        tk_void(t, CROUPIER__VOID_REASON__VOID_SHUTDOWN);
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state == TK_BUYING && t->seat[i].join_req != NULL)
            gs_reply(gs_of_desk(desk), t->seat[i].join_req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                     "server stopping", NULL);
    tk_adopt_answer_all(t, CROUPIER__ERROR_CODE__UNAVAILABLE, "server stopping", NULL);
    if (t->room != NULL && t->room->create != NULL) {
        gs_reply(gs_of_desk(desk), t->room->create->req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                 "server stopping", NULL);
        free(t->room->create);
    }
    free(t->room);
    tk_move_hold(t, false);
    metrics_add(t->eng->m_seated, -(double)rt_desk_humans(desk));
    rt_desk_set_humans(desk, 0);
    metrics_add(t->eng->m_tables, -1);
    t->eng->game->table_destroy(t->g);
    json_decref(t->history);
    free(t->snap);
    free(t);
}

static const gs_desk_ops_t tk_table_ops = {
    .on_request = tk_table_on_request,
    .on_timer = tk_table_on_timer,
    .on_intake_stopped = tk_table_on_intake_stopped,
    .on_void = tk_table_on_void,
    .on_fence = tk_table_on_fence,
    .on_message = tk_table_on_message,
    .on_destroy = tk_table_on_destroy,
};

/* Seats of a table of game: the game's own count, or the setting. */
static int tk_game_seats(const tk_engine_t *eng, const char *game)
{
    int n = (int)eng->set.seats;
    if (eng->game->seats_for != NULL)
        n = eng->game->seats_for(game, n);
    return n < 2 ? 2 : n > TK_MAX_SEATS ? TK_MAX_SEATS : n;
}

/* Opens a table desk of game at stake -- room: a private room's (the table takes it on
 * success, with its seats and rules). Lobby thread. */
static int tk_table_open(tk_engine_t *eng, const char *game, int64_t stake, tk_room_t *room,
                         rt_desk_id_t *out)
{
    tk_table_t *t = xcalloc(1, sizeof *t);
    t->eng = eng;
    snprintf(t->game, sizeof t->game, "%s", game);
    t->stake = stake;
    t->nseats = tk_game_seats(eng, game);
    if (room != NULL) {
        t->nseats = room->rec.seats;
        room_options_text(&room->rec, t->options, sizeof t->options);
    }
    t->slot = gs_server_slot(eng->gs);
    t->epoch = gs_epoch(eng->gs);
    t->button = -1;
    t->turn_seat = -1;
    t->g = eng->game->table_create(t, t->game, stake);
    if (t->g == NULL) {
        free(t);
        return -EINVAL;
    }
    int rc = gs_desk_create(eng->gs, &tk_table_ops, t, -1, out);
    if (rc != 0) {
        eng->game->table_destroy(t->g);
        free(t);
        return rc;
    }
    t->room = room;
    metrics_add(eng->m_tables, 1);
    metrics_add(eng->m_opened, 1);
    return 0;
}

/* ---- lobby ------------------------------------------------------------------------------- */

static tk_ref_t *tk_lobby_find(tk_lobby_t *lb, rt_desk_id_t desk)
{
    for (size_t i = 0; i < lb->nrefs; i++)
        if (lb->refs[i].desk == desk)
            return &lb->refs[i];
    return NULL;
}

static void tk_lobby_forget(tk_lobby_t *lb, tk_ref_t *ref)
{
    if (lb->eng->ads != NULL)
        lobby_pub_remove(lb->eng->ads, ref->desk);
    *ref = lb->refs[--lb->nrefs];
}

static void tk_lobby_advertise(tk_lobby_t *lb, const tk_ref_t *ref)
{
    if (lb->eng->ads == NULL || ref->is_room)
        return; /* a room is joined by its code only */
    if (ref->closed || ref->free <= 0)
        lobby_pub_remove(lb->eng->ads, ref->desk);
    else
        lobby_pub_set(lb->eng->ads, ref->desk, ref->game, ref->stake, ref->seats, ref->free);
}

static tk_ref_t *tk_lobby_add(tk_lobby_t *lb, rt_desk_id_t id, const char *game, int64_t stake)
{
    if (lb->nrefs == lb->cap) {
        lb->cap = lb->cap == 0 ? 16 : lb->cap * 2;
        lb->refs = xreallocarray(lb->refs, lb->cap, sizeof *lb->refs);
    }
    tk_ref_t *ref = &lb->refs[lb->nrefs++];
    int seats = tk_game_seats(lb->eng, game);
    *ref = (tk_ref_t){.desk = id, .stake = stake, .seats = seats, .free = seats};
    snprintf(ref->game, sizeof ref->game, "%s", game);
    return ref;
}

/* Lobby: opens a table with bots (tk_engine_open_table). */
static void tk_lobby_open(rt_desk_t *desk, tk_lobby_t *lb, const tk_open_t *o)
{
    rt_desk_id_t id;
    if (tk_table_open(lb->eng, o->game, o->stake, NULL, &id) != 0) {
        log_emit(LOG_ERROR, "tk_open_table_failed", "{s:s,s:I}", "game", o->game, "stake",
                 (json_int_t)o->stake);
        return;
    }
    tk_ref_t *ref = tk_lobby_add(lb, id, o->game, o->stake);
    ref->free -= o->bots < ref->seats ? o->bots : ref->seats;
    tk_lobby_advertise(lb, ref);
    rt_msg_t m = {.type = TK_MSG_ADD_BOTS, .arg = (uint64_t)o->bots};
    rt_post(rt_desk_rt(desk), id, &m);
}

static void tk_join_dropped(void *p)
{
    tk_join_t *j = p;
    gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "desk unavailable", NULL);
    tk_join_free(j);
}

static void tk_lobby_join(rt_desk_t *desk, tk_lobby_t *lb, rt_msg_t *msg)
{
    tk_join_t *j = msg->ptr;
    msg->ptr = NULL;
    msg->free_fn = NULL;
    gs_t *gs = gs_of_desk(desk);
    if (rt_intake_stopped(rt_desk_rt(desk))) {
        tk_count_refusal(lb->eng, CROUPIER__ERROR_CODE__DRAINING);
        gs_reply(gs, j->req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
        tk_join_free(j);
        return;
    }
    const Croupier__Join *jn = j->req->frame->join;
    const Croupier__RoomJoin *rj = j->req->frame->room;
    tk_ref_t *ref = NULL;
    if (rj != NULL && rj->create != NULL && j->room == NULL) {
        gs_reply(gs, j->req, CROUPIER__ERROR_CODE__INTERNAL, "room rules lost", NULL);
        tk_join_free(j);
        return;
    }
    if (rj != NULL && rj->code != NULL) {
        /* JoinRoom: the table of that code, whatever its seats (the table judges). */
        for (size_t i = 0; i < lb->nrefs && ref == NULL; i++)
            if (lb->refs[i].is_room && strcmp(lb->refs[i].room, rj->code) == 0)
                ref = &lb->refs[i];
        if (ref == NULL) {
            tk_count_refusal(lb->eng, CROUPIER__ERROR_CODE__ROOM_NOT_FOUND);
            gs_reply(gs, j->req, CROUPIER__ERROR_CODE__ROOM_NOT_FOUND,
                     "no room of that code on this server", NULL);
            tk_join_free(j);
            return;
        }
    }
    for (size_t i = 0; rj == NULL && i < lb->nrefs && ref == NULL; i++)
        if (lb->refs[i].stake == jn->stake && lb->refs[i].free > 0 && !lb->refs[i].closed &&
            !lb->refs[i].is_room && strcmp(lb->refs[i].game, jn->game) == 0)
            ref = &lb->refs[i];
    if (ref == NULL) {
        /* A new table: for a join that found none, or a CreateRoom (always its own). */
        rt_desk_id_t id;
        int rc = tk_table_open(lb->eng, jn->game, jn->stake, j->room, &id);
        if (rc != 0) {
            tk_count_refusal(lb->eng, CROUPIER__ERROR_CODE__UNAVAILABLE);
            gs_reply(gs, j->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "could not open a table", NULL);
            tk_join_free(j);
            return;
        }
        ref = tk_lobby_add(lb, id, jn->game, jn->stake);
        if (j->room != NULL) {
            ref->is_room = true;
            ref->seats = ref->free = j->room->rec.seats;
            j->room = NULL; /* the table's now */
        }
    }
    ref->free--;
    ref->joins_sent++;
    tk_lobby_advertise(lb, ref);
    rt_msg_t m = {.type = TK_MSG_JOIN, .ptr = j, .free_fn = tk_join_dropped};
    rt_post(rt_desk_rt(desk), ref->desk, &m);
}

/* Lobby: an Adopt goes to the table of its offer, or to a new table opened for it (not
 * joinable until the adopted table reports its free seats). */
static void tk_lobby_adopt(rt_desk_t *desk, tk_lobby_t *lb, rt_msg_t *msg)
{
    tk_join_t *j = msg->ptr;
    msg->ptr = NULL;
    msg->free_fn = NULL;
    gs_t *gs = gs_of_desk(desk);
    const Croupier__Adopt *a = j->req->frame->adopt;
    tk_ref_t *ref = NULL;
    for (size_t i = 0; i < lb->nrefs && ref == NULL; i++)
        if (strcmp(lb->refs[i].offer, a->offer_id) == 0)
            ref = &lb->refs[i];
    if (ref == NULL) {
        rt_desk_id_t id;
        int rc = rt_intake_stopped(rt_desk_rt(desk))
                     ? -ESHUTDOWN
                     : tk_table_open(lb->eng, a->game, a->stake, NULL, &id);
        if (rc != 0) {
            Croupier__ErrorCode code = rc == -ESHUTDOWN ? CROUPIER__ERROR_CODE__DRAINING
                                                        : CROUPIER__ERROR_CODE__UNAVAILABLE;
            tk_count_refusal(lb->eng, code);
            gs_reply(gs, j->req, code,
                     rc == -ESHUTDOWN ? "server is draining" : "could not open a table", NULL);
            free(j);
            return;
        }
        ref = tk_lobby_add(lb, id, a->game, a->stake);
        ref->free = 0;
        snprintf(ref->offer, sizeof ref->offer, "%s", a->offer_id);
    }
    rt_msg_t m = {.type = TK_MSG_ADOPT, .ptr = j, .free_fn = tk_join_dropped};
    rt_post(rt_desk_rt(desk), ref->desk, &m);
}

static void tk_lobby_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    tk_lobby_t *lb = state;
    if (msg->type == TK_MSG_JOIN) {
        tk_lobby_join(desk, lb, msg);
        return;
    }
    if (msg->type == TK_MSG_ADOPT) {
        tk_lobby_adopt(desk, lb, msg);
        return;
    }
    if (msg->type == TK_MSG_OPEN) {
        tk_lobby_open(desk, lb, msg->ptr);
        return;
    }
    tk_ref_t *ref = tk_lobby_find(lb, msg->arg);
    if (ref == NULL)
        return;
    switch (msg->type) {
    case TK_MSG_SEATS: {
        /* The table's free seats, less the joins still on their way there. */
        uint32_t seen = (uint32_t)(msg->arg2 >> 32), inflight = ref->joins_sent - seen;
        ref->free = (int)(uint32_t)msg->arg2 - (int)inflight;
        tk_lobby_advertise(lb, ref);
        return;
    }
    case TK_MSG_CLOSED:
        ref->closed = true;
        ref->free = 0;
        tk_lobby_advertise(lb, ref);
        return;
    case TK_MSG_GONE:
        tk_lobby_forget(lb, ref);
        return;
    case TK_MSG_ROOM:
        ref->is_room = true;
        snprintf(ref->room, sizeof ref->room, "%s", (const char *)msg->ptr);
        if (lb->eng->ads != NULL)
            lobby_pub_remove(lb->eng->ads, ref->desk); /* an adopted room is never an ad */
        return;
    case TK_MSG_IDLE: {
        /* Retire the table only when no join is on its way there; either way it is told. */
        uint32_t seen = (uint32_t)(msg->arg2 >> 32);
        bool go = seen == ref->joins_sent && !ref->closed;
        rt_desk_id_t id = ref->desk;
        if (go)
            tk_lobby_forget(lb, ref);
        rt_msg_t m = {.type = TK_MSG_RETIRE, .arg2 = go};
        rt_post(rt_desk_rt(desk), id, &m);
        return;
    }
    default:
        return;
    }
}

static void tk_lobby_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    (void)state;
    gs_reply(gs_of_desk(desk), req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated on this server",
             NULL);
}

static void tk_lobby_on_nothing(rt_desk_t *desk, void *state)
{
    (void)desk;
    (void)state;
}

static void tk_lobby_on_destroy(rt_desk_t *desk, void *state)
{
    (void)desk;
    tk_lobby_t *lb = state;
    /* The runtime stops: handoff results are no longer posted (tk_job_done). */
    pthread_mutex_lock(&lb->eng->jobs_mu);
    lb->eng->rt_stopped = true;
    pthread_mutex_unlock(&lb->eng->jobs_mu);
    free(lb->refs);
    free(lb);
}

static const gs_desk_ops_t tk_lobby_ops = {
    .on_request = tk_lobby_on_request,
    .on_intake_stopped = tk_lobby_on_nothing,
    .on_void = tk_lobby_on_nothing,
    .on_message = tk_lobby_on_message,
    .on_destroy = tk_lobby_on_destroy,
};

/* ---- engine (main loop) ------------------------------------------------------------------ */

/* The largest and smallest buy-in at a table of game at stake (chips). */
static void tk_buyin_range(const tk_engine_t *eng, const char *game, int64_t stake, int64_t *max,
                           int64_t *min)
{
    long units = eng->game->buyin_for != NULL ? eng->game->buyin_for(game) : 0;
    *max = stake * (units > 0 ? units : eng->set.buyin);
    *min = stake * (units > 0 ? units : eng->set.min_buyin);
}

/* The joining player's wallet balance arrived: choose the buy-in, or refuse. */
static void tk_balance_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    tk_join_t *j = arg;
    tk_engine_t *eng = gs_engine_state(j->gs);
    if (eng == NULL || eng->destroying) {
        gs_request_free(j->req);
        tk_join_free(j);
        return;
    }
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        tk_count_refusal(eng, CROUPIER__ERROR_CODE__UNAVAILABLE);
        gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet unavailable", NULL);
        tk_join_free(j);
        return;
    }
    long long balance = reply->type == REDIS_REPLY_STRING ? strtoll(reply->str, NULL, 10) : 0;
    int64_t stake = j->req->frame->join->stake, want, least;
    tk_buyin_range(eng, j->req->frame->join->game, stake, &want, &least);
    j->amount = balance < want ? balance : want;
    if (j->amount < least) {
        char msg[128];
        snprintf(msg, sizeof msg, "wallet %lld is below the table minimum %" PRId64, balance,
                 least);
        tk_count_refusal(eng, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
        gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS, msg, NULL);
        tk_join_free(j);
        return;
    }
    rt_msg_t m = {.type = TK_MSG_JOIN, .ptr = j, .free_fn = tk_join_dropped};
    rt_post(gs_rt(j->gs), eng->lobby, &m);
}

/* Whether a table of (engine, game, stake) is one this engine runs; the refusal and its reason
 * otherwise. */
static Croupier__ErrorCode tk_engine_serves(const tk_engine_t *eng, Croupier__Engine engine,
                                            const char *game, int64_t stake, const char **why)
{
    if (!config_list_has(eng->games, game)) {
        *why = "this server does not run that game";
        return CROUPIER__ERROR_CODE__NO_SUCH_GAME;
    }
    if (engine != eng->game->proto_engine && engine != CROUPIER__ENGINE__ENGINE_UNSPECIFIED) {
        *why = "the game is not played on that engine";
        return CROUPIER__ERROR_CODE__WRONG_ENGINE;
    }
    if (stake < (eng->game->min_stake > 1 ? eng->game->min_stake : 1) || stake > TK_MAX_STAKE) {
        *why = "stake out of range";
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
    return CROUPIER__ERROR_CODE__OK;
}

/* Main loop: hands a request to the lobby desk as message type (a dropped one is answered
 * UNAVAILABLE). */
static tk_join_t *tk_join_new(tk_engine_t *eng, gs_request_t *req, tk_room_t *room)
{
    tk_join_t *tj = xcalloc(1, sizeof *tj);
    tj->gs = eng->gs;
    tj->req = req;
    tj->room = room;
    return tj;
}

static void tk_engine_to_lobby(tk_engine_t *eng, int type, gs_request_t *req, tk_room_t *room)
{
    tk_join_t *tj = tk_join_new(eng, req, room);
    rt_msg_t m = {.type = type, .ptr = tj, .free_fn = tk_join_dropped};
    rt_post(gs_rt(eng->gs), eng->lobby, &m);
}

/*
 * A CreateRoom's rules, checked against the engine (seats within its bounds, rule options the
 * game takes, bot fill only with server bots): the room to open, or the refusal and its reason.
 */
static Croupier__ErrorCode tk_room_prepare(tk_engine_t *eng, const Croupier__Join *jn,
                                           const Croupier__RoomRules *rules, tk_room_t **out,
                                           const char **why)
{
    static char err[256]; /* main loop only */
    const tk_game_t *gm = eng->game;
    *out = NULL;
    if (eng->jobs == NULL) {
        *why = "no room store (Redis) configured";
        return CROUPIER__ERROR_CODE__UNAVAILABLE;
    }
    int seats = tk_game_seats(eng, jn->game);
    if (rules->has_seats && (int)rules->seats != seats) {
        if (gm->seats_for != NULL) {
            snprintf(err, sizeof err, "%s is played with %d seats", jn->game, seats);
            *why = err;
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
        if ((int)rules->seats < gm->min_seats || (int)rules->seats > gm->max_seats) {
            snprintf(err, sizeof err, "seats: %d..%d at %s", gm->min_seats, gm->max_seats,
                     jn->game);
            *why = err;
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
        seats = (int)rules->seats;
    }
    if (rules->has_bot_fill && rules->bot_fill && !gm->bots) {
        *why = "this game has no server bots to fill a room";
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
    tk_room_t *rm = xcalloc(1, sizeof *rm);
    room_record_t *r = &rm->rec;
    r->state = CROUPIER__ROOM_STATE__ROOM_WAITING;
    r->engine = gm->proto_engine;
    snprintf(r->game, sizeof r->game, "%s", jn->game);
    r->stake = jn->stake;
    r->seats = seats;
    r->deals = (int)rules->deals;
    r->bot_fill = rules->has_bot_fill && rules->bot_fill;
    for (size_t i = 0; i < rules->n_rule_options && i < ROOM_MAX_OPTIONS; i++)
        snprintf(r->options[r->noptions++], sizeof r->options[0], "%s", rules->rule_options[i]);
    r->created_ms = clock_wall_ms();
    r->expires_ms = r->created_ms + tk_room_wait_ms(eng);
    if (r->noptions > 0) {
        char text[256], e[200];
        room_options_text(r, text, sizeof text);
        int rc = gm->check_options != NULL ? gm->check_options(text, jn->game, e, sizeof e) : -1;
        if (rc != 0) {
            snprintf(err, sizeof err, "rule_options: %s",
                     gm->check_options != NULL ? e : "this game takes no rule options");
            *why = err;
            free(rm);
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
    }
    *out = rm;
    return CROUPIER__ERROR_CODE__OK;
}

void tk_engine_join(void *e, gs_request_t *req)
{
    tk_engine_t *eng = e;
    const Croupier__Join *j = req->frame->join;
    const Croupier__RoomJoin *rj = req->frame->room;
    const char *why = NULL;
    tk_room_t *room = NULL;
    Croupier__ErrorCode code = tk_engine_serves(eng, j->engine, j->game, j->stake, &why);
    if (code == CROUPIER__ERROR_CODE__OK && eng->rc == NULL &&
        eng->game->money != TK_MONEY_WALLET) {
        code = CROUPIER__ERROR_CODE__UNAVAILABLE;
        why = "wallet store not configured";
    }
    if (code == CROUPIER__ERROR_CODE__OK && rj != NULL && rj->create != NULL)
        code = tk_room_prepare(eng, j, rj->create, &room, &why);
    if (code != CROUPIER__ERROR_CODE__OK) {
        tk_count_refusal(eng, code);
        gs_reply(eng->gs, req, code, why, NULL);
        return;
    }
    if (eng->game->money == TK_MONEY_WALLET) {
        tk_engine_to_lobby(eng, TK_MSG_JOIN, req, room); /* no buy-in: straight to the lobby */
        return;
    }
    tk_join_t *tj = tk_join_new(eng, req, room);
    char player[24], key[128];
    tk_player_name(req->player_id, player, sizeof player);
    money_key_wallet(player, key, sizeof key);
    if (rconn_command(eng->rc, tk_balance_cb, tj, "GET %s", key) != 0) {
        tk_count_refusal(eng, CROUPIER__ERROR_CODE__UNAVAILABLE);
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet store unreachable", NULL);
        tk_join_free(tj);
    }
}

void tk_engine_adopt(void *e, gs_request_t *req)
{
    tk_engine_t *eng = e;
    const Croupier__Adopt *a = req->frame->adopt;
    const char *why = NULL;
    Croupier__ErrorCode code = tk_engine_serves(eng, a->engine, a->game, a->stake, &why);
    if (code == CROUPIER__ERROR_CODE__OK && eng->jobs == NULL) {
        code = CROUPIER__ERROR_CODE__UNAVAILABLE;
        why = "no money store for table handoffs";
    }
    if (code != CROUPIER__ERROR_CODE__OK) {
        tk_count_refusal(eng, code);
        gs_reply(eng->gs, req, code, why, NULL);
        return;
    }
    tk_engine_to_lobby(eng, TK_MSG_ADOPT, req, NULL);
}

int tk_engine_open_table(tk_engine_t *eng, const char *game, int64_t stake, int bots)
{
    if (!config_list_has(eng->games, game) || stake < 1 || bots < 0)
        return -EINVAL;
    tk_open_t *o = xcalloc(1, sizeof *o);
    snprintf(o->game, sizeof o->game, "%s", game);
    o->stake = stake;
    o->bots = bots;
    rt_msg_t m = {.type = TK_MSG_OPEN, .ptr = o, .free_fn = free};
    return rt_post(gs_rt(eng->gs), eng->lobby, &m);
}

const char *tk_engine_games(void *e)
{
    tk_engine_t *eng = e;
    return eng->games;
}

void tk_engine_stop_intake(void *e)
{
    tk_engine_t *eng = e;
    if (eng->ads != NULL)
        lobby_pub_withdraw_all(eng->ads);
}

void tk_engine_destroy(void *e)
{
    tk_engine_t *eng = e;
    if (eng == NULL)
        return;
    eng->destroying = true;
    money_jobs_destroy(eng->jobs); /* the runtime is gone: its results are only freed */
    pthread_mutex_destroy(&eng->jobs_mu);
    lobby_pub_destroy(eng->ads); /* before the connection it writes through */
    rconn_destroy(eng->rc);
    free(eng);
}

/* The kit's flags of every engine: name suffix, help, setting, bounds; `need` says which games
 * get the flag (0: all, 1: games with bots, 2: games with bots or a house). */
static const struct {
    const char *suffix, *help;
    size_t off;
    long min, max;
    int need;
} tk_flag_spec[] = {
    {"seats", "seats per table", offsetof(tk_settings_t, seats), 2, TK_MAX_SEATS, 0},
    {"action-ms", "time for one turn (ms)", offsetof(tk_settings_t, action_ms), 1, 3600000, 0},
    {"time-bank-ms", "extra time per seat, spent beyond the turn time (ms)",
     offsetof(tk_settings_t, time_bank_ms), 0, 3600000, 0},
    {"gap-ms", "pause between rounds (ms)", offsetof(tk_settings_t, gap_ms), 0, 600000, 0},
    {"idle-ms", "an empty table is closed after this long (ms)", offsetof(tk_settings_t, idle_ms),
     1, 86400000, 0},
    {"buyin", "largest buy-in, in stakes", offsetof(tk_settings_t, buyin), 1, 1000000, 0},
    {"min-buyin", "smallest buy-in, in stakes", offsetof(tk_settings_t, min_buyin), 1, 1000000, 0},
    {"rake-bp", "rake in basis points of the pot", offsetof(tk_settings_t, rake_bp), 0, 10000, 0},
    {"rake-cap", "rake cap in chips per round (0 = none)", offsetof(tk_settings_t, rake_cap), 0,
     1000000, 0},
    {"bot-ms", "a server bot's move delay (ms)", offsetof(tk_settings_t, bot_ms), 0, 600000, 1},
    {"bot-fill-ms", "a table with a human and empty seats gets bots after this long (ms; -1 never)",
     offsetof(tk_settings_t, bot_fill_ms), -1, 86400000, 1},
    {"trustee-ms", "delay of the automatic move for a player on trustee (ms)",
     offsetof(tk_settings_t, trustee_ms), 1, 600000, 0},
    {"house-fund", "chips the house wallet is funded with once per service (0: never)",
     offsetof(tk_settings_t, house_fund), 0, 1000000000000000L, 2},
    {"move-wait-ms",
     "at a drain, a table moves as a whole when a server adopts it within this long (ms; 0: "
     "3000; -1: never, each player is re-seated alone)",
     offsetof(tk_settings_t, move_wait_ms), -1, 600000, 0},
    {"room-wait-ms",
     "a private room not full this long after its creation is disbanded (ms; 0: 1800000)",
     offsetof(tk_settings_t, room_wait_ms), 0, 86400000, 0},
    {"room-keep-ms",
     "a private room's record (its scoreboard) is kept this long after its end (ms; 0: 86400000)",
     offsetof(tk_settings_t, room_keep_ms), 0, 2592000000L, 0},
};
#define TK_NFLAGS (sizeof tk_flag_spec / sizeof tk_flag_spec[0])

const config_flag_t *tk_engine_flags(tk_engine_def_t *def)
{
    if (def->flags != NULL)
        return def->flags;
    const tk_game_t *gm = def->game;
    size_t nextra = 0, n = 0;
    while (gm->extra_flags != NULL && gm->extra_flags[nextra].name != NULL)
        nextra++;
    config_flag_t *f = xcalloc(TK_NFLAGS + 1 + nextra + 1, sizeof *f);
    static char defaults[(TK_NFLAGS + 1) * 8][24]; /* up to 8 kit engines */
    static int used;
    *def->settings = gm->defaults;
    const char *prefix = gm->flag_prefix != NULL ? gm->flag_prefix : gm->engine;
    for (size_t i = 0; i < TK_NFLAGS; i++) {
        int need = tk_flag_spec[i].need;
        if ((need == 1 && !gm->bots) || (need == 2 && !gm->bots && !gm->house))
            continue;
        snprintf(def->names[n], sizeof def->names[n], "%s-%s", prefix, tk_flag_spec[i].suffix);
        long dv = *(const long *)((const char *)&gm->defaults + tk_flag_spec[i].off);
        if (tk_flag_spec[i].off == offsetof(tk_settings_t, trustee_ms) && dv <= 0)
            dv = TK_TRUSTEE_MS;
        char *d = used < (int)(sizeof defaults / sizeof defaults[0]) ? defaults[used++] : NULL;
        if (d != NULL)
            snprintf(d, sizeof defaults[0], "%ld", dv);
        long lo = tk_flag_spec[i].min, hi = tk_flag_spec[i].max;
        if (tk_flag_spec[i].off == offsetof(tk_settings_t, seats)) {
            lo = gm->min_seats;
            hi = gm->max_seats;
        }
        f[n] = (config_flag_t){.name = def->names[n],
                               .type = CONFIG_INT,
                               .def = d,
                               .help = tk_flag_spec[i].help,
                               .out = (char *)def->settings + tk_flag_spec[i].off,
                               .min = lo,
                               .max = hi};
        n++;
    }
    if (gm->bots || gm->house) {
        snprintf(def->names[n], sizeof def->names[n], "%s-house", prefix);
        f[n] = (config_flag_t){.name = def->names[n],
                               .type = CONFIG_STR,
                               .def = gm->defaults.house,
                               .help = "the house wallet (server bots play for it)",
                               .out = &def->settings->house};
        n++;
    }
    for (size_t i = 0; i < nextra; i++)
        f[n++] = gm->extra_flags[i];
    def->flags = f;
    return f;
}

int tk_engine_check_options(tk_engine_def_t *def, const char *options, const char *games, char *err,
                            size_t errlen)
{
    if (def->game->check_options != NULL)
        return def->game->check_options(options, games, err, errlen);
    if (options == NULL || options[0] == '\0')
        return 0;
    snprintf(err, errlen, "the %s engine takes no rule options", def->game->engine);
    return -1;
}

/*
 * The service as seat accounts and op ids name it: the name itself when it has at most 20
 * characters, else "h" and the 8 hex digits of its FNV-1a hash, so that the longest account
 * (ts.<svc>.<slot>.<epoch>.<desk hex>.<seat>) stays within MONEY_NAME_MAX and the longest op
 * id within the 96 characters money.h allows, whatever the service is called.
 */
static void tk_service_token(const char *svc, char *out, size_t len)
{
    if (strlen(svc) <= 20) {
        snprintf(out, len, "%s", svc);
        return;
    }
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)svc; *p != '\0'; p++)
        h = (h ^ *p) * 16777619u;
    snprintf(out, len, "h%08" PRIx32, h);
}

/* Funds the house wallet once per service (tk_settings_t.house_fund): a cash-out with a fixed
 * operation id, so restarts and other replicas do not fund it again. */
static void tk_fund_house(tk_engine_t *eng)
{
    money_writer_t *w = gs_money(eng->gs);
    if (eng->set.house_fund <= 0 || w == NULL || (!eng->game->bots && !eng->game->house))
        return;
    char op[MONEY_ID_MAX + 1];
    const char *svc = gs_service(eng->gs);
    snprintf(op, sizeof op, "%s.%s",
             eng->game->house_fund_op != NULL ? eng->game->house_fund_op : "tk-house-fund",
             svc != NULL ? svc : eng->game->engine);
    int rc =
        money_writer_submit_cashout(w, eng->house, eng->set.house_fund, op, tk_money_log_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "tk_house_fund_refused", "{s:s,s:i}", "house", eng->house, "errno",
                 -rc);
}

/* The engine's Redis connection came (back): the lobby ads are rewritten at once. */
static void tk_rconn_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    tk_engine_t *eng = arg;
    if (connected && eng->ads != NULL)
        lobby_pub_refresh(eng->ads);
}

/* games (croupier-game --games) is a subset of the game's list, each game once: 0, or -EINVAL. */
static int tk_games_check(const tk_game_t *gm, const char *games)
{
    char buf[128], seen[128] = "";
    if (strlen(games) >= sizeof buf)
        return -EINVAL;
    snprintf(buf, sizeof buf, "%s", games);
    int n = 0;
    char *save = NULL;
    for (char *g = strtok_r(buf, ",", &save); g != NULL; g = strtok_r(NULL, ",", &save), n++) {
        if (!config_list_has(gm->games, g) || config_list_has(seen, g))
            return -EINVAL;
        snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s", n > 0 ? "," : "", g);
    }
    return n > 0 ? 0 : -EINVAL;
}

int tk_engine_create(tk_engine_def_t *def, gs_t *gs, const char *games, void **out)
{
    const tk_game_t *gm = def->game;
    if (games != NULL && tk_games_check(gm, games) != 0) {
        log_emit(LOG_ERROR, "engine_bad_games", "{s:s,s:s,s:s}", "engine", gm->engine, "games",
                 games, "served", gm->games);
        return -EINVAL;
    }
    tk_engine_t *eng = xcalloc(1, sizeof *eng);
    snprintf(eng->games, sizeof eng->games, "%s", games != NULL ? games : gm->games);
    eng->gs = gs;
    eng->game = gm;
    /* The settings were parsed with the process's flags when the engine's flags were part of
     * the table (croupier-game); otherwise (tests, tools) the game's defaults apply. */
    eng->set = def->flags != NULL ? *def->settings : gm->defaults;
    if (eng->set.min_buyin > eng->set.buyin) {
        log_emit(LOG_ERROR, "tk_bad_settings", "{s:s,s:s}", "engine", gm->engine, "error",
                 "min-buyin is above buyin");
        free(eng);
        return -EINVAL;
    }
    if (eng->set.house != NULL && eng->set.house[0] != '\0')
        snprintf(eng->house, sizeof eng->house, "%s", eng->set.house);
    else if (gm->house_name != NULL)
        gm->house_name(gs_service(gs) != NULL ? gs_service(gs) : gm->engine, eng->house,
                       sizeof eng->house);
    else
        snprintf(eng->house, sizeof eng->house, "house-%s", gm->engine);
    tk_service_token(gs_service(gs) != NULL ? gs_service(gs) : gm->engine, eng->svc,
                     sizeof eng->svc);
    if ((gm->bots || gm->house) && !money_valid_player(eng->house)) {
        log_emit(LOG_ERROR, "tk_bad_settings", "{s:s,s:s}", "engine", gm->engine, "error",
                 "the house wallet name is not a valid wallet name");
        free(eng);
        return -EINVAL;
    }
    snprintf(eng->labels, sizeof eng->labels, "engine=\"%s\"", gm->engine);
    metrics_registry_t *reg = gs_metrics(gs);
    eng->m_tables = metrics_gauge(reg, "tk_tables", eng->labels, "Kit tables open");
    eng->m_opened =
        metrics_counter(reg, "tk_tables_opened_total", eng->labels, "Kit tables opened");
    eng->m_seated = metrics_gauge(reg, "tk_seated", eng->labels, "Players seated at kit tables");
    eng->m_timeouts =
        metrics_counter(reg, "tk_timeouts_total", eng->labels, "Turns that timed out");
    eng->m_auto = metrics_counter(reg, "tk_auto_actions_total", eng->labels,
                                  "Automatic moves for players on trustee or leaving");
    char ml[128];
    const char *mh = "Whole-table moves (docs/protocol.md): tables that moved away, were adopted "
                     "here, whose offer was withdrawn, or whose adoption failed here";
    snprintf(ml, sizeof ml, "%s,outcome=\"moved_out\"", eng->labels);
    eng->m_moved_out = metrics_counter(reg, "tk_table_moves_total", ml, mh);
    snprintf(ml, sizeof ml, "%s,outcome=\"adopted\"", eng->labels);
    eng->m_moved_in = metrics_counter(reg, "tk_table_moves_total", ml, mh);
    snprintf(ml, sizeof ml, "%s,outcome=\"withdrawn\"", eng->labels);
    eng->m_move_withdrawn = metrics_counter(reg, "tk_table_moves_total", ml, mh);
    snprintf(ml, sizeof ml, "%s,outcome=\"adopt_failed\"", eng->labels);
    eng->m_move_failed = metrics_counter(reg, "tk_table_moves_total", ml, mh);
    pthread_mutex_init(&eng->jobs_mu, NULL);
    struct event_base *base = gs_base(gs);
    if (gs_redis_host(gs) != NULL) {
        rconn_opts_t ro = {.host = gs_redis_host(gs),
                           .port = gs_redis_port(gs),
                           .name = "tk",
                           .on_state = tk_rconn_state_cb,
                           .arg = eng,
                           .sentinels = gs_redis_sentinels(gs),
                           .master_name = gs_redis_master(gs)};
        eng->rc = rconn_create(base, &ro);
        eng->jobs = money_jobs_create_sentinel(gs_redis_host(gs), gs_redis_port(gs),
                                               gs_redis_sentinels(gs), gs_redis_master(gs));
        money_jobs_set_min_replicas(eng->jobs, gs_redis_min_replicas(gs), gs_redis_wait_ms(gs));
        lobby_pub_opts_t lo = {.server_id = gs_server_id(gs), .engine = gm->proto_engine};
        if (eng->rc != NULL)
            eng->ads = lobby_pub_create(base, eng->rc, &lo);
    }
    tk_lobby_t *lb = xcalloc(1, sizeof *lb);
    lb->eng = eng;
    int rc = gs_desk_create(gs, &tk_lobby_ops, lb, 0, &eng->lobby);
    if (rc != 0) {
        free(lb);
        money_jobs_destroy(eng->jobs);
        pthread_mutex_destroy(&eng->jobs_mu);
        lobby_pub_destroy(eng->ads);
        rconn_destroy(eng->rc);
        free(eng);
        return rc;
    }
    tk_fund_house(eng);
    if (gm->engine_started != NULL)
        gm->engine_started(eng);
    log_emit(LOG_INFO, "tk_engine_started", "{s:s,s:i,s:I,s:I,s:I}", "engine", gm->engine, "seats",
             (int)eng->set.seats, "action_ms", (json_int_t)eng->set.action_ms, "gap_ms",
             (json_int_t)eng->set.gap_ms, "idle_ms", (json_int_t)eng->set.idle_ms);
    *out = eng;
    return 0;
}
