/*
 * testgame -- the "test" engine: a deliberately small game used to prove the game-server
 * lifecycle (drain, void, rpc routing, idempotency) independently of the real engines.
 *
 * Rules: a table of CROUPIER_TEST_SEATS seats (default 3) for game "test" at a stake. When at
 * least two players sit (server bots count as players) and intake is open, a round begins after
 * a short gap; it lasts CROUPIER_TEST_ROUND_MS (default 1000). At its end one seated player,
 * drawn at random, wins everyone else's stake. Rounds run back to back, like a resident table.
 * An action during a round is counted for its player (the reply's event_seq is the count, so
 * retries can be seen not to apply twice). CROUPIER_TEST_BOT_TABLES (default 0) tables of bots
 * only are opened at start: they play rounds but never count as human desks.
 *
 * Desks: one lobby desk assigns seats and creates tables; each table is its own desk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>

#include "gs.h"
#include "log.h"
#include "money_writer.h"
#include "testgame.h"
#include "xmalloc.h"

#define TG_MAX_SEATS 9
#define TG_MAX_TABLES 4096

enum {
    TG_MSG_SEAT_FREED = GS_MSG_ENGINE, /* table -> lobby: arg = table desk, arg2 = seats free */
    TG_MSG_TABLE_GONE,                 /* table -> lobby: arg = table desk */
};

enum { TG_TIMER_GAP = 1, TG_TIMER_ROUND = 2 };

typedef struct {
    gs_t *gs;
    rt_desk_id_t lobby;
    int seats, round_ms, gap_ms, bot_tables;
} tg_engine_t;

typedef struct {
    rt_desk_id_t id;
    int64_t stake;
    int free;
} tg_table_ref_t;

typedef struct {
    tg_engine_t *eng;
    tg_table_ref_t tables[TG_MAX_TABLES];
    int ntables;
} tg_lobby_t;

typedef struct {
    uint64_t player; /* 0 = empty */
    bool bot;
    bool leaving;
    uint64_t actions;
} tg_seat_t;

typedef struct {
    tg_engine_t *eng;
    rt_desk_id_t lobby;
    int64_t stake;
    uint64_t seq;
    bool closing;
    bool gap_armed;
    tg_seat_t seat[TG_MAX_SEATS];
} tg_table_t;

static int tg_env_int(const char *name, int def, int lo, int hi)
{
    const char *v = getenv(name);
    if (v == NULL)
        return def;
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < lo || x > hi) {
        log_emit(LOG_WARN, "testgame_bad_env", "{s:s,s:s,s:i}", "name", name, "value", v, "using",
                 def);
        return def;
    }
    return (int)x;
}

/* ---- table ------------------------------------------------------------------------------- */

static int tg_table_count(const tg_table_t *t, int *humans)
{
    int n = 0, h = 0;
    for (int i = 0; i < t->eng->seats; i++) {
        if (t->seat[i].player != 0) {
            n++;
            if (!t->seat[i].bot)
                h++;
        }
    }
    if (humans != NULL)
        *humans = h;
    return n;
}

static void tg_table_sync_humans(rt_desk_t *desk, tg_table_t *t)
{
    int h;
    tg_table_count(t, &h);
    rt_desk_set_humans(desk, (unsigned)h);
}

static void tg_table_push_all(rt_desk_t *desk, tg_table_t *t, const Croupier__ServerMessage *m)
{
    for (int i = 0; i < t->eng->seats; i++)
        if (t->seat[i].player != 0 && !t->seat[i].bot)
            gs_push(gs_of_desk(desk), t->seat[i].player, m);
}

/* Arms the gap before the next round when one may start. */
static void tg_table_maybe_schedule(rt_desk_t *desk, tg_table_t *t)
{
    if (t->gap_armed || t->closing || rt_desk_in_round(desk) || tg_table_count(t, NULL) < 2)
        return;
    if (rt_desk_timer_arm(desk, t->eng->gap_ms, TG_TIMER_GAP, NULL) == 0)
        t->gap_armed = true;
}

static void tg_table_unseat(rt_desk_t *desk, tg_table_t *t, int i)
{
    gs_t *gs = gs_of_desk(desk);
    if (!t->seat[i].bot)
        gs_seat(gs, t->seat[i].player, 0);
    memset(&t->seat[i], 0, sizeof t->seat[i]);
    tg_table_sync_humans(desk, t);
    rt_msg_t m = {.type = TG_MSG_SEAT_FREED, .arg = rt_desk_id(desk), .arg2 = 1};
    rt_post(rt_desk_rt(desk), t->lobby, &m);
}

static void tg_table_fill_joined(rt_desk_t *desk, tg_table_t *t, int seat, Croupier__Joined *j,
                                 Croupier__SeatInfo *infos, Croupier__SeatInfo **ptrs)
{
    j->desk_id = rt_desk_id(desk);
    j->seat = (uint32_t)seat;
    j->engine = testgame_engine_ops.engine;
    j->game = "test";
    j->stake = t->stake;
    size_t n = 0;
    for (int i = 0; i < t->eng->seats; i++) {
        if (t->seat[i].player == 0)
            continue;
        Croupier__SeatInfo si = CROUPIER__SEAT_INFO__INIT;
        si.seat = (uint32_t)i;
        si.has_player_id = true;
        si.player_id = t->seat[i].player;
        si.has_bot = true;
        si.bot = t->seat[i].bot;
        infos[n] = si;
        ptrs[n] = &infos[n];
        n++;
    }
    j->n_seats = n;
    j->seats = ptrs;
}

static void tg_table_reply_joined(rt_desk_t *desk, tg_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Joined j = CROUPIER__JOINED__INIT;
    Croupier__SeatInfo infos[TG_MAX_SEATS];
    Croupier__SeatInfo *ptrs[TG_MAX_SEATS];
    tg_table_fill_joined(desk, t, seat, &j, infos, ptrs);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED;
    sm.joined = &j;
    gs_reply(gs_of_desk(desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

static void tg_table_reply_snapshot(rt_desk_t *desk, tg_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot s = CROUPIER__SNAPSHOT__INIT;
    Croupier__Joined j = CROUPIER__JOINED__INIT;
    Croupier__SeatInfo infos[TG_MAX_SEATS];
    Croupier__SeatInfo *ptrs[TG_MAX_SEATS];
    tg_table_fill_joined(desk, t, seat, &j, infos, ptrs);
    s.desk_id = j.desk_id;
    s.your_seat = j.seat;
    s.engine = testgame_engine_ops.engine;
    s.game = j.game;
    s.stake = j.stake;
    s.n_seats = j.n_seats;
    s.seats = j.seats;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    sm.snapshot = &s;
    gs_reply(gs_of_desk(desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

static int tg_table_find(const tg_table_t *t, uint64_t player)
{
    for (int i = 0; i < t->eng->seats; i++)
        if (t->seat[i].player == player)
            return i;
    return -1;
}

static void tg_settled_cb(money_result_t *res, void *arg)
{
    (void)arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "testgame_settle_failed", "{s:s,s:i,s:s}", "round", res->id, "status",
                 res->status, "error", res->error);
    free(res);
}

/*
 * Hands the round's money to the writer queue. Only humans have wallets in this game: they play
 * for each other's stakes (bots' seats are settled as zero and left out), so the human deltas
 * are recomputed to sum to zero: the drawn winner, if human, takes every other human's stake;
 * if a bot won, the humans' stakes are simply returned (nothing moves).
 */
static void tg_table_settle(rt_desk_t *desk, tg_table_t *t, Croupier__SeatDelta **d, size_t nd)
{
    gs_t *gs = gs_of_desk(desk);
    money_writer_t *w = gs_money(gs);
    money_settlement_t s = {0};
    char names[MONEY_MAX_PLAYERS][24];
    int winner = -1;
    for (size_t i = 0; i < nd; i++)
        if (d[i]->delta > 0 && !t->seat[d[i]->seat].bot)
            winner = (int)i;
    int64_t pot = 0;
    for (size_t i = 0; i < nd && s.nplayers < MONEY_MAX_PLAYERS; i++) {
        if (t->seat[d[i]->seat].bot) {
            d[i]->delta = 0;
            continue;
        }
        if (winner < 0 || (int)i == winner) {
            if (winner < 0)
                d[i]->delta = 0;
        } else {
            pot += t->stake;
        }
        snprintf(names[s.nplayers], sizeof names[0], "%llu", (unsigned long long)d[i]->player_id);
        s.players[s.nplayers] = names[s.nplayers];
        s.nplayers++;
    }
    if (winner >= 0)
        d[winner]->delta = pot;
    for (size_t i = 0, k = 0; i < nd; i++)
        if (!t->seat[d[i]->seat].bot)
            s.deltas[k++] = d[i]->delta;
    if (w == NULL || s.nplayers == 0)
        return;
    s.round = gs_round_id(gs, rt_desk_id(desk), t->seq);
    s.game = "test";
    s.rake = 0;
    int rc = money_writer_submit_settle(w, &s, tg_settled_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "testgame_settle_refused", "{s:i}", "errno", -rc);
}

static void tg_table_round_end(rt_desk_t *desk, tg_table_t *t, bool voided)
{
    gs_t *gs = gs_of_desk(desk);
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    Croupier__SeatDelta deltas[TG_MAX_SEATS];
    Croupier__SeatDelta *dptr[TG_MAX_SEATS];
    char round_id[MONEY_ID_MAX + 1];
    money_round_id_t rid = gs_round_id(gs, rt_desk_id(desk), t->seq);
    money_round_id_format(&rid, round_id, sizeof round_id);
    re.round_id = round_id;
    int n = tg_table_count(t, NULL);
    if (voided) {
        /* Nothing moved yet (stakes settle only at the end), so voiding refunds everything:
         * every delta is zero and the players are told why. */
        re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
        re.has_void_reason = true;
        re.void_reason = CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT;
        re.detail = "the server had to stop before the round could finish; stakes refunded";
    } else {
        re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
    }
    int winner = n > 0 ? (int)arc4random_uniform((uint32_t)n) : -1;
    size_t nd = 0;
    for (int i = 0, k = 0; i < t->eng->seats; i++) {
        if (t->seat[i].player == 0)
            continue;
        Croupier__SeatDelta d = CROUPIER__SEAT_DELTA__INIT;
        d.seat = (uint32_t)i;
        d.player_id = t->seat[i].player;
        d.delta = voided ? 0 : (k == winner ? t->stake * (n - 1) : -t->stake);
        deltas[nd] = d;
        dptr[nd] = &deltas[nd];
        nd++;
        k++;
    }
    re.n_deltas = nd;
    re.deltas = dptr;
    if (!voided)
        tg_table_settle(desk, t, dptr, nd);
    re.has_rake = true;
    re.rake = 0;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
    sm.round_end = &re;
    tg_table_push_all(desk, t, &sm);
    rt_desk_end_round(desk, voided ? RT_ROUND_VOIDED : RT_ROUND_COMPLETED);
    gs_count_round(gs, "test", voided ? RT_ROUND_VOIDED : RT_ROUND_COMPLETED);
    /* Players who asked to leave during the round go now. */
    for (int i = 0; i < t->eng->seats; i++)
        if (t->seat[i].player != 0 && t->seat[i].leaving)
            tg_table_unseat(desk, t, i);
}

/*
 * The table closes (intake stopped): players are told and the gateways are asked to move them,
 * but they stay seated here until they leave, so the table keeps serving their requests (a
 * resume, a leave) while no new round can start.
 */
static void tg_table_close(rt_desk_t *desk, tg_table_t *t)
{
    if (t->closing)
        return;
    t->closing = true;
    uint64_t players[TG_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->eng->seats; i++)
        if (t->seat[i].player != 0 && !t->seat[i].bot)
            players[n++] = t->seat[i].player;
    gs_close_desk_seats(gs_of_desk(desk), rt_desk_id(desk), players, n,
                        CROUPIER__CLOSING_REASON__CLOSING_DRAINING, "server draining");
}

static void tg_table_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    tg_table_t *t = state;
    gs_t *gs = gs_of_desk(desk);
    int i = tg_table_find(t, req->player_id);
    switch (req->kind) {
    case GS_REQ_JOIN: {
        if (i >= 0) {
            tg_table_reply_joined(desk, t, req, i);
            return;
        }
        if (t->closing) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "table closing", NULL);
            return;
        }
        for (i = 0; i < t->eng->seats && t->seat[i].player != 0; i++)
            ;
        if (i == t->eng->seats) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__TABLE_FULL, "table full", NULL);
            return;
        }
        t->seat[i].player = req->player_id;
        gs_seat(gs, req->player_id, rt_desk_id(desk));
        tg_table_sync_humans(desk, t);
        tg_table_reply_joined(desk, t, req, i);
        tg_table_maybe_schedule(desk, t);
        return;
    }
    case GS_REQ_RESUME:
        if (i < 0) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated at this table", NULL);
            return;
        }
        tg_table_reply_snapshot(desk, t, req, i);
        return;
    case GS_REQ_LEAVE:
        if (i < 0) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated at this table", NULL);
            return;
        }
        if (rt_desk_in_round(desk))
            t->seat[i].leaving = true; /* after the round: a seat is never torn mid-round */
        else
            tg_table_unseat(desk, t, i);
        gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, NULL);
        return;
    case GS_REQ_ACTION: {
        if (i < 0) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated at this table", NULL);
            return;
        }
        if (!rt_desk_in_round(desk)) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NO_ROUND, "no round in progress", NULL);
            return;
        }
        t->seat[i].actions++;
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Result r = CROUPIER__RESULT__INIT;
        sm.has_event_seq = true;
        sm.event_seq = t->seat[i].actions;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
        sm.result = &r;
        gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
        return;
    }
    case GS_REQ_PLAYER_GONE:
        /* Disconnected players keep their seat (they may resume through another gateway). */
        gs_request_free(req);
        return;
    }
    gs_request_free(req);
}

static void tg_table_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    tg_table_t *t = state;
    if (cookie == TG_TIMER_GAP) {
        t->gap_armed = false;
        if (t->closing || tg_table_count(t, NULL) < 2)
            return;
        if (!gs_can_start_round(gs_of_desk(desk))) {
            /* Intake stopped (the table closes) or the settlement queue is above its high
             * watermark: try again after another gap in the second case. */
            if (!rt_intake_stopped(rt_desk_rt(desk)))
                tg_table_maybe_schedule(desk, t);
            return;
        }
        if (rt_desk_begin_round(desk) != 0)
            return; /* intake stopped: the table is closing */
        t->seq++;
        rt_desk_timer_arm(desk, t->eng->round_ms, TG_TIMER_ROUND, NULL);
        return;
    }
    if (cookie == TG_TIMER_ROUND && rt_desk_in_round(desk)) {
        tg_table_round_end(desk, t, false);
        if (rt_intake_stopped(rt_desk_rt(desk)))
            tg_table_close(desk, t);
        else
            tg_table_maybe_schedule(desk, t);
    }
}

static void tg_table_on_intake_stopped(rt_desk_t *desk, void *state)
{
    tg_table_t *t = state;
    if (!rt_desk_in_round(desk))
        tg_table_close(desk, t);
    /* else: the round finishes, then the table closes (tg_table_on_timer). */
}

static void tg_table_on_void(rt_desk_t *desk, void *state)
{
    tg_table_t *t = state;
    tg_table_round_end(desk, t, true);
    tg_table_close(desk, t);
}

static void tg_table_on_destroy(rt_desk_t *desk, void *state)
{
    tg_table_t *t = state;
    if (rt_desk_in_round(desk))
        tg_table_round_end(desk, t, true);
    free(t);
}

static void tg_table_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    if (msg->type == TG_MSG_SEAT_FREED)
        tg_table_maybe_schedule(desk, state);
}

static const gs_desk_ops_t tg_table_ops = {
    .on_request = tg_table_on_request,
    .on_timer = tg_table_on_timer,
    .on_intake_stopped = tg_table_on_intake_stopped,
    .on_void = tg_table_on_void,
    .on_message = tg_table_on_message,
    .on_destroy = tg_table_on_destroy,
};

static int tg_table_open(tg_engine_t *eng, int64_t stake, int bots, rt_desk_id_t *out)
{
    tg_table_t *t = xcalloc(1, sizeof *t);
    t->eng = eng;
    t->lobby = eng->lobby;
    t->stake = stake;
    static uint64_t next_bot = 1;
    for (int i = 0; i < bots && i < eng->seats; i++) {
        t->seat[i].player = (1ULL << 62) | __atomic_fetch_add(&next_bot, 1, __ATOMIC_RELAXED);
        t->seat[i].bot = true;
    }
    int rc = gs_desk_create(eng->gs, &tg_table_ops, t, -1, out);
    if (rc != 0) {
        free(t);
        return rc;
    }
    if (bots >= 2) {
        /* A bot-only table starts playing by itself: kick it with a join-less schedule. */
        rt_msg_t m = {.type = TG_MSG_SEAT_FREED};
        rt_post(gs_rt(eng->gs), *out, &m);
    }
    return 0;
}

/* ---- lobby ------------------------------------------------------------------------------- */

static void tg_lobby_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    tg_lobby_t *lb = state;
    gs_t *gs = gs_of_desk(desk);
    if (req->kind != GS_REQ_JOIN) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated on this server", NULL);
        return;
    }
    if (rt_intake_stopped(rt_desk_rt(desk))) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
        return;
    }
    int64_t stake = req->frame->join->stake;
    tg_table_ref_t *ref = NULL;
    for (int i = 0; i < lb->ntables; i++) {
        if (lb->tables[i].stake == stake && lb->tables[i].free > 0) {
            ref = &lb->tables[i];
            break;
        }
    }
    if (ref == NULL) {
        if (lb->ntables == TG_MAX_TABLES) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__OVERLOADED, "no room for another table", NULL);
            return;
        }
        rt_desk_id_t id;
        if (tg_table_open(lb->eng, stake, 0, &id) != 0) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "could not open a table", NULL);
            return;
        }
        ref = &lb->tables[lb->ntables++];
        ref->id = id;
        ref->stake = stake;
        ref->free = lb->eng->seats;
    }
    ref->free--;
    gs_request_post(gs, ref->id, req);
}

static void tg_lobby_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    (void)desk;
    tg_lobby_t *lb = state;
    if (msg->type != TG_MSG_SEAT_FREED)
        return;
    for (int i = 0; i < lb->ntables; i++)
        if (lb->tables[i].id == msg->arg)
            lb->tables[i].free += (int)msg->arg2;
}

static void tg_lobby_on_destroy(rt_desk_t *desk, void *state)
{
    (void)desk;
    free(state);
}

static const gs_desk_ops_t tg_lobby_ops = {
    .on_request = tg_lobby_on_request,
    .on_message = tg_lobby_on_message,
    .on_destroy = tg_lobby_on_destroy,
};

/* ---- engine ------------------------------------------------------------------------------ */

static int tg_create(gs_t *gs, const char *games, void **out)
{
    if (games != NULL && strcmp(games, "test") != 0) {
        log_emit(LOG_ERROR, "engine_bad_games", "{s:s,s:s}", "engine", "test", "games", games);
        return -EINVAL;
    }
    tg_engine_t *eng = xcalloc(1, sizeof *eng);
    eng->gs = gs;
    eng->seats = tg_env_int("CROUPIER_TEST_SEATS", 3, 2, TG_MAX_SEATS);
    eng->round_ms = tg_env_int("CROUPIER_TEST_ROUND_MS", 1000, 1, 3600000);
    eng->gap_ms = tg_env_int("CROUPIER_TEST_GAP_MS", 20, 0, 60000);
    eng->bot_tables = tg_env_int("CROUPIER_TEST_BOT_TABLES", 0, 0, 1000);
    tg_lobby_t *lb = xcalloc(1, sizeof *lb);
    lb->eng = eng;
    int rc = gs_desk_create(gs, &tg_lobby_ops, lb, 0, &eng->lobby);
    if (rc != 0) {
        free(lb);
        free(eng);
        return rc;
    }
    for (int i = 0; i < eng->bot_tables; i++) {
        rt_desk_id_t id;
        tg_table_open(eng, 10, eng->seats, &id);
    }
    *out = eng;
    return 0;
}

static void tg_join(void *e, gs_request_t *req)
{
    tg_engine_t *eng = e;
    const Croupier__Join *j = req->frame->join;
    if (strcmp(j->game, "test") != 0) {
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__NO_SUCH_GAME, "this server runs game 'test'",
                 NULL);
        return;
    }
    gs_request_post(eng->gs, eng->lobby, req);
}

static const char *tg_games(void *e)
{
    (void)e;
    return "test";
}

static void tg_destroy(void *e)
{
    free(e);
}

const engine_ops_t testgame_engine_ops = {
    .name = "test",
    .engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL,
    .create = tg_create,
    .join = tg_join,
    .games = tg_games,
    .destroy = tg_destroy,
};
