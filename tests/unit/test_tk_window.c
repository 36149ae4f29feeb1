/*
 * The table kit's action windows (engine/tk.h "Action windows", docs/writing-a-game.md
 * "Simultaneous decisions: action windows"): several seats decide at once before one deadline.
 * Driven through the "test" engine's windows mode (engine/testgame.c, --test-windows: the first
 * window of a round is every playing seat's, the later ones leave out the button; a pass ends a
 * seat's decision, a bid keeps it open, the automatic move is a pass), run by the real
 * croupier-game binary against a real redis-server, players driven over a real rpc link (rpcc)
 * as a gateway would. The banker of banker games (engine/tk.h "tk_banker_set") too, through the
 * same mode with --test-banker (the first window is the bid for the bank). And the kit's pairwise
 * settlement (engine/tk.h "tk_round_end_transfers") through the test engine's --test-pairwise:
 * the transfers in RoundEnd and the hand history, the deltas and the rake they make, the money.
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rpcc.h"
#include "support.h"
#include "testenv.h"

#define NP 3
#define MAXS 9

typedef testenv_t env_t;

static const uint64_t players[NP] = {7101, 7102, 7103};

/* What the players were told. Plays and RoundEnds are counted from players[0]'s pushes (every
 * player gets them); Turns from each player's. */
typedef struct {
    int seat_of[NP];       /* each player's seat */
    int turns[NP];         /* Turns each player got */
    int turn_seat[NP];     /* the seat of each player's last Turn */
    uint32_t window[MAXS]; /* players[0]'s last Turn's window seats */
    size_t nwindow;
    uint32_t time_left_ms;   /* of that Turn */
    long long window_at_ms;  /* when it came */
    int moves[MAXS];         /* Plays by seat, not timed out */
    int autos[MAXS];         /* Plays by seat, timed out */
    long long auto_ms[MAXS]; /* when each seat's last timed-out Play came */
    int completed, voided;
    uint64_t last_seq;
    /* Completed RoundEnds with transfers; those whose deltas or rake are not what the transfers
     * make (docs/protocol.md "Transfers"); the rake summed over them. */
    int with_transfers, transfers_wrong;
    long long rake;
    int void_reason; /* of the last voided RoundEnd */
} view_t;

static int next_rid = 1;

static void env_start(env_t *e, const char *windows, const char *action_ms, const char *trustee_ms,
                      const char *gap_ms, int drain_max_s)
{
    char *args[] = {"--test-seats",
                    "3",
                    "--test-windows",
                    (char *)windows,
                    "--test-action-ms",
                    (char *)action_ms,
                    "--test-trustee-ms",
                    (char *)trustee_ms,
                    "--test-gap-ms",
                    (char *)gap_ms,
                    NULL};
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    /* Play money settles in the wallets: each player has one. */
    for (int i = 0; i < NP; i++)
        free(ts_redis_cmd(e->redis, "SET {croupier:money}:wallet:%llu 1000000",
                          (unsigned long long)players[i]));
    ck_assert_int_eq(testenv_start_game(e, &e->game, "test", drain_max_s, args, NULL), 0);
}

/* One human (players[0]) and two server bots (bot fill after 100 ms, a bot's move after
 * bot_ms). */
static void env_start_bots(env_t *e, const char *action_ms, const char *bot_ms)
{
    char *args[] = {"--test-seats",
                    "3",
                    "--test-windows",
                    "1",
                    "--test-action-ms",
                    (char *)action_ms,
                    "--test-bot-ms",
                    (char *)bot_ms,
                    "--test-bot-fill-ms",
                    "100",
                    "--test-gap-ms",
                    "1000",
                    NULL};
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    free(ts_redis_cmd(e->redis, "SET {croupier:money}:wallet:%llu 1000000",
                      (unsigned long long)players[0]));
    ck_assert_int_eq(testenv_start_game(e, &e->game, "test", 30, args, NULL), 0);
}

/* Banker mode (--test-banker 1): two windows a round, the first the bid for the bank; seat
 * no_bank may never bank ("-1": none). */
static void env_start_banker(env_t *e, const char *no_bank)
{
    char *args[] = {"--test-seats",
                    "3",
                    "--test-windows",
                    "2",
                    "--test-action-ms",
                    "20000",
                    "--test-gap-ms",
                    "1000",
                    "--test-banker",
                    "1",
                    "--test-no-bank-seat",
                    (char *)no_bank,
                    NULL};
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    for (int i = 0; i < NP; i++)
        free(ts_redis_cmd(e->redis, "SET {croupier:money}:wallet:%llu 1000000",
                          (unsigned long long)players[i]));
    ck_assert_int_eq(testenv_start_game(e, &e->game, "test", 30, args, NULL), 0);
}

static int player_index(uint64_t player)
{
    for (int i = 0; i < NP; i++)
        if (players[i] == player)
            return i;
    return -1;
}

static void view_apply(view_t *v, const Croupier__RpcFrame *f)
{
    if (f->body_case != CROUPIER__RPC_FRAME__BODY_PUSH || !f->has_player_id)
        return;
    int p = player_index(f->player_id);
    const Croupier__ServerMessage *m = f->push;
    if (p < 0)
        return;
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN) {
        v->turns[p]++;
        v->turn_seat[p] = (int)m->turn->seat;
        if (p == 0) {
            v->nwindow = m->turn->n_window_seats < MAXS ? m->turn->n_window_seats : MAXS;
            memcpy(v->window, m->turn->window_seats, v->nwindow * sizeof v->window[0]);
            v->time_left_ms = m->turn->time_left_ms;
            v->window_at_ms = ts_now_ms();
        }
    }
    if (p != 0)
        return;
    if (m->has_event_seq)
        v->last_seq = m->event_seq;
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_PLAY && m->play->seat < MAXS) {
        int s = (int)m->play->seat;
        if (m->play->has_timed_out && m->play->timed_out) {
            v->autos[s]++;
            v->auto_ms[s] = ts_now_ms();
        } else {
            v->moves[s]++;
        }
    } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
        const Croupier__RoundEnd *re = m->round_end;
        if (re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED)
            v->completed++;
        else
            v->voided++, v->void_reason = (int)re->void_reason;
        if (re->n_transfers > 0)
            v->with_transfers++;
        v->rake += re->rake;
        /* Each seat's delta is what it received minus what it paid; the rake what went to
         * the house. */
        long long sum[MAXS] = {0}, house = 0;
        for (size_t k = 0; k < re->n_transfers; k++) {
            const Croupier__Transfer *x = re->transfers[k];
            if (x->has_from_seat && x->from_seat < MAXS)
                sum[x->from_seat] -= x->amount;
            if (x->has_to_seat && x->to_seat < MAXS)
                sum[x->to_seat] += x->amount;
            else
                house += x->amount;
        }
        bool wrong = re->n_transfers > 0 && house != re->rake;
        for (size_t k = 0; k < re->n_deltas && re->n_transfers > 0; k++)
            wrong = wrong || re->deltas[k]->seat >= MAXS ||
                    sum[re->deltas[k]->seat] != re->deltas[k]->delta;
        v->transfers_wrong += wrong;
    }
}

/* Applies the pushes that arrive within ms. */
static void pump(rpcc_t *c, view_t *v, int ms)
{
    long long end = ts_now_ms() + ms;
    for (;;) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0)
            return;
        Croupier__RpcFrame *f = rpcc_next_event(c, left);
        if (f == NULL)
            return;
        view_apply(v, f);
        frame_free_rpc(f);
    }
}

/* Pumps until players[0] has had n Turns in all, or timeout_ms; whether it got there. */
static bool wait_turns(rpcc_t *c, view_t *v, int n, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (v->turns[0] < n && ts_now_ms() < end)
        pump(c, v, 20);
    return v->turns[0] >= n;
}

static bool wait_completed(rpcc_t *c, view_t *v, int n, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (v->completed + v->voided < n && ts_now_ms() < end)
        pump(c, v, 20);
    return v->completed + v->voided >= n;
}

/* Seats the three players (each its own seat of the one table). */
static void join_all(rpcc_t *c, view_t *v)
{
    memset(v, 0, sizeof *v);
    /* The joins go out together, then their answers are read: one after the other, each waiting
     * for the last answer, they took more than the gap before the first round under ASan beside
     * valgrind and TSan, and the third player sat at a second desk. */
    int rids[NP];
    for (int i = 0; i < NP; i++) {
        rids[i] = next_rid++;
        ck_assert_int_eq(rpcc_join(c, (uint64_t)rids[i], players[i], "test", 10, 0), 0);
    }
    uint64_t desk = 0;
    for (int i = 0; i < NP; i++) {
        Croupier__RpcFrame *r = rpcc_wait_reply(c, (uint64_t)rids[i], 5000);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
        ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
        v->seat_of[i] = (int)r->reply->payload->joined->seat;
        if (i == 0)
            desk = r->reply->payload->joined->desk_id;
        ck_assert_msg(r->reply->payload->joined->desk_id == desk,
                      "player %d sat at desk %llu, the others at %llu", i,
                      (unsigned long long)r->reply->payload->joined->desk_id,
                      (unsigned long long)desk);
        frame_free_rpc(r);
    }
}

/* Player i's move (a pass, or a bid of amount that keeps the decision open); returns the reply's
 * code. */
static int act_bid(rpcc_t *c, view_t *v, int i, bool pass, uint32_t amount)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction sa = CROUPIER__SHEDDING_ACTION__INIT;
    sa.move = pass ? CROUPIER__SHEDDING_MOVE__SHEDDING_PASS : CROUPIER__SHEDDING_MOVE__SHEDDING_BID;
    sa.has_bid = !pass;
    sa.bid = amount;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &sa;
    int rid = next_rid++;
    f.request_id = (uint64_t)rid;
    f.has_player_id = true;
    f.player_id = players[i];
    f.has_session_id = true;
    f.session_id = players[i];
    f.has_deadline_unix_ms = true;
    f.deadline_unix_ms = (uint64_t)rpcc_wall_ms() + 5000;
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, (uint64_t)rid, 5000);
    ck_assert_ptr_nonnull(r);
    int code = r->reply->code;
    frame_free_rpc(r);
    pump(c, v, 0);
    return code;
}

static int act(rpcc_t *c, view_t *v, int i, bool pass)
{
    return act_bid(c, v, i, pass, 1);
}

static void player_gone(rpcc_t *c, int i)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone g = CROUPIER__PLAYER_GONE__INIT;
    f.request_id = (uint64_t)next_rid++;
    f.has_player_id = true;
    f.player_id = players[i];
    f.has_session_id = true;
    f.session_id = players[i];
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &g;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

/* Player i resumes: its Snapshot (free with frame_free_rpc). */
static Croupier__RpcFrame *resume(rpcc_t *c, int i)
{
    int rid = next_rid++;
    ck_assert_int_eq(rpcc_resume(c, (uint64_t)rid, players[i]), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, (uint64_t)rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    return r;
}

static long timeouts(env_t *e)
{
    return testenv_metric(&e->game, "tk_timeouts_total{engine=\"test\"}");
}

static long autos(env_t *e)
{
    return testenv_metric(&e->game, "tk_auto_actions_total{engine=\"test\"}");
}

/* The player index of the player at seat s. */
static int at_seat(const view_t *v, int s)
{
    for (int i = 0; i < NP; i++)
        if (v->seat_of[i] == s)
            return i;
    return -1;
}

/*
 * A window opens for every playing seat at once: each player gets a Turn naming its own seat
 * with the window's seats and deadline; they act in any order (a bid keeps a decision open, a
 * pass ends it), nobody waits for anybody, and the last decision opens the next window (without
 * the button) at once; the round completes long before any deadline, with no timeout.
 */
START_TEST(test_window_seats_act_in_any_order)
{
    env_t e;
    env_start(&e, "2", "20000", "100", "1000", 30);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 5000));
    pump(c, &v, 100); /* every player's Turn */
    ck_assert_uint_eq(v.nwindow, 3);
    for (int s = 0; s < 3; s++)
        ck_assert_uint_eq(v.window[s], (uint32_t)s);
    ck_assert_uint_gt(v.time_left_ms, 19000);
    ck_assert_uint_le(v.time_left_ms, 20000);
    for (int i = 0; i < NP; i++) {
        ck_assert_int_eq(v.turns[i], 1);
        ck_assert_int_eq(v.turn_seat[i], v.seat_of[i]); /* each its own */
    }
    long long t0 = ts_now_ms();
    /* Seat order 2, 0 (a bid, then its pass), 1. */
    ck_assert_int_eq(act(c, &v, at_seat(&v, 2), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 0), false), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 0), false), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 0), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(v.turns[0], 1); /* still the first window */
    ck_assert_int_eq(act(c, &v, at_seat(&v, 1), true), CROUPIER__ERROR_CODE__OK);
    /* The second window: every playing seat but the button's. */
    ck_assert(wait_turns(c, &v, 2, 5000));
    ck_assert_uint_eq(v.nwindow, 2);
    int in[2] = {(int)v.window[0], (int)v.window[1]};
    ck_assert_int_ne(in[0], in[1]);
    ck_assert_int_eq(act(c, &v, at_seat(&v, in[1]), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, in[0]), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_eq(v.completed, 1);
    ck_assert_int_lt(ts_now_ms() - t0, 10000); /* never waited for the 20 s deadline */
    for (int s = 0; s < 3; s++)
        ck_assert_int_eq(v.autos[s], 0);
    ck_assert_int_eq(v.moves[0], 3 + (in[0] == 0 || in[1] == 0));
    ck_assert_int_eq(timeouts(&e), 0);
    ck_assert_int_eq(v.with_transfers, 0); /* a game that gives deltas: none, as before */
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * The deadline gives the automatic move (a pass, Play timed_out) to exactly the seats still
 * pending, once each, and not before it; a seat that decided gets none. Each counts in
 * tk_timeouts_total.
 */
START_TEST(test_window_deadline_auto_moves_exactly_the_pending_seats_once)
{
    env_t e;
    env_start(&e, "1", "800", "100", "3000", 30);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 8000));
    long long opened = v.window_at_ms;
    ck_assert_int_eq(act(c, &v, at_seat(&v, 1), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_eq(v.completed, 1);
    ck_assert_int_eq(v.autos[0], 1);
    ck_assert_int_eq(v.autos[1], 0);
    ck_assert_int_eq(v.autos[2], 1);
    ck_assert_int_eq(v.moves[1], 1);
    ck_assert_int_ge(v.auto_ms[0] - opened, 600); /* at the deadline, not before */
    ck_assert_int_ge(v.auto_ms[2] - opened, 600);
    ck_assert_int_eq(timeouts(&e), 2);
    ck_assert_int_eq(autos(&e), 0);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * A disconnected player (trustee_when_away) is passed for after trustee_ms, not at the 6 s
 * deadline, while the connected players keep the window: they decide later, and the round ends
 * without waiting for the deadline. The gone seat's automatic move counts as a timeout.
 */
START_TEST(test_window_gone_seat_is_moved_after_trustee_ms_while_others_keep_the_window)
{
    env_t e;
    env_start(&e, "1", "6000", "150", "3000", 30);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 8000));
    long long opened = v.window_at_ms;
    int gone = at_seat(&v, 1);
    player_gone(c, gone);
    long long end = ts_now_ms() + 3000;
    while (v.autos[1] == 0 && ts_now_ms() < end)
        pump(c, &v, 20);
    ck_assert_int_eq(v.autos[1], 1);
    ck_assert_int_lt(v.auto_ms[1] - opened, 2500); /* trustee_ms, not the deadline */
    /* The others still hold their decisions, well after that. */
    pump(c, &v, 500);
    ck_assert_int_eq(v.autos[0] + v.autos[2], 0);
    ck_assert_int_eq(v.completed, 0);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 0), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 2), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_lt(ts_now_ms() - opened, 5500);
    ck_assert_int_eq(v.autos[0] + v.autos[2], 0);
    ck_assert_int_eq(timeouts(&e), 1);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * A player who leaves during the round (LEAVING) is not waited for: its pending decision gets the
 * automatic move after trustee_ms, as a leaver's turn does; the others keep the window.
 */
START_TEST(test_window_leaver_gets_the_automatic_move_after_trustee_ms)
{
    env_t e;
    env_start(&e, "1", "6000", "150", "3000", 30);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 8000));
    long long opened = v.window_at_ms;
    int leaver = at_seat(&v, 2);
    int rid = next_rid++;
    ck_assert_int_eq(rpcc_leave(c, (uint64_t)rid, players[leaver]), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, (uint64_t)rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    long long end = ts_now_ms() + 3000;
    while (v.autos[2] == 0 && ts_now_ms() < end)
        pump(c, &v, 20);
    ck_assert_int_eq(v.autos[2], 1);
    ck_assert_int_lt(v.auto_ms[2] - opened, 2500);
    ck_assert_int_eq(v.autos[0] + v.autos[1], 0);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 0), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 1), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_eq(v.completed, 1);
    ck_assert_int_eq(v.autos[0] + v.autos[1], 0);
    /* The leaver was a connected player: its automatic move counts as one for a seat on
     * trustee (it left), not as a timeout. */
    ck_assert_int_eq(timeouts(&e), 0);
    ck_assert_int_eq(autos(&e), 1);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * A resume during a window gets its time left and the seats still pending (the seat that
 * decided is gone from them) and no turn seat; a player who was away and resumes keeps its
 * decision for the rest of the window.
 */
START_TEST(test_window_resume_gets_time_left_and_pending_seats)
{
    env_t e;
    env_start(&e, "1", "5000", "3000", "3000", 30);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 8000));
    long long opened = v.window_at_ms;
    ck_assert_int_eq(act(c, &v, at_seat(&v, 0), true), CROUPIER__ERROR_CODE__OK);
    /* Seat 2's player goes (its automatic move would come after the 3 s trustee_ms) and comes
     * back at once: it keeps the window. */
    int back = at_seat(&v, 2);
    player_gone(c, back);
    ts_sleep_ms(300);
    Croupier__RpcFrame *r = resume(c, back);
    long long now = ts_now_ms();
    const Croupier__Snapshot *s = r->reply->payload->snapshot;
    ck_assert_ptr_nonnull(s->round_id);
    ck_assert(!s->has_turn_seat);
    ck_assert_uint_eq(s->n_window_seats, 2);
    ck_assert_uint_eq(s->window_seats[0], 1);
    ck_assert_uint_eq(s->window_seats[1], 2);
    ck_assert(s->has_time_left_ms);
    ck_assert_int_le(s->time_left_ms, 5000 - (now - opened) + 500);
    ck_assert_int_ge(s->time_left_ms, 5000 - (now - opened) - 1500);
    frame_free_rpc(r);
    pump(c, &v, 0);
    /* Both pending seats keep the window to its deadline: no automatic move at trustee_ms. */
    long long end = opened + 4000;
    while (ts_now_ms() < end)
        pump(c, &v, 50);
    ck_assert_int_eq(v.autos[1] + v.autos[2], 0);
    ck_assert_int_eq(act(c, &v, back, true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_eq(v.autos[1], 1); /* at the deadline */
    ck_assert_int_eq(v.autos[2], 0);
    /* Between rounds, no window. */
    r = resume(c, 0);
    if (r->reply->payload->snapshot->round_id == NULL)
        ck_assert_uint_eq(r->reply->payload->snapshot->n_window_seats, 0);
    frame_free_rpc(r);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * Moves of a seat that is not in the window, and second moves of a seat whose decision is made,
 * are refused NOT_YOUR_TURN by the kit with nothing changed: no Play, the same event_seq, the
 * same pending seats; the window goes on.
 */
START_TEST(test_window_refuses_wrong_seat_and_double_moves)
{
    env_t e;
    env_start(&e, "2", "20000", "100", "1000", 30);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 5000));
    pump(c, &v, 100);
    int first = at_seat(&v, 0);
    ck_assert_int_eq(act(c, &v, first, true), CROUPIER__ERROR_CODE__OK);
    pump(c, &v, 100);
    uint64_t seq = v.last_seq;
    int moves = v.moves[0];
    ck_assert_int_eq(act(c, &v, first, true), CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
    ck_assert_int_eq(act(c, &v, first, false), CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
    pump(c, &v, 100);
    ck_assert_uint_eq(v.last_seq, seq);
    ck_assert_int_eq(v.moves[0], moves);
    Croupier__RpcFrame *r = resume(c, first);
    ck_assert_uint_eq(r->reply->payload->snapshot->n_window_seats, 2);
    ck_assert_uint_eq(r->reply->payload->snapshot->event_seq, seq);
    frame_free_rpc(r);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 1), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 2), true), CROUPIER__ERROR_CODE__OK);
    /* The second window leaves out the button: its moves are refused. */
    ck_assert(wait_turns(c, &v, 2, 5000));
    ck_assert_uint_eq(v.nwindow, 2);
    int out = -1;
    for (int s = 0; s < 3; s++)
        if (s != (int)v.window[0] && s != (int)v.window[1])
            out = s;
    pump(c, &v, 100);
    seq = v.last_seq;
    ck_assert_int_eq(act(c, &v, at_seat(&v, out), true), CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
    pump(c, &v, 100);
    ck_assert_uint_eq(v.last_seq, seq);
    ck_assert_int_eq(act(c, &v, at_seat(&v, (int)v.window[0]), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, (int)v.window[1]), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_eq(v.completed, 1);
    ck_assert_int_eq(v.autos[0] + v.autos[1] + v.autos[2], 0);
    ck_assert_int_ge(
        testenv_metric(&e.game, "tk_refusals_total{engine=\"test\",code=\"NOT_YOUR_TURN\"}"), 3);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * A window closed early (every seat decided) leaves no timer behind that fires the next one: the
 * first window's deadline passes during the second and nobody is moved for; the second's
 * pending seats are moved for at its own deadline. A seat's automatic move re-arms the timer
 * (trustee_ms, then the deadline) on the way.
 */
START_TEST(test_window_stale_timer_never_fires_a_later_window)
{
    env_t e;
    env_start(&e, "2", "2000", "100", "3000", 30);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 8000));
    long long first = v.window_at_ms;
    /* A gone player is passed for after trustee_ms (the window's timer re-armed twice). */
    player_gone(c, at_seat(&v, 0));
    long long end = ts_now_ms() + 1000;
    while (v.autos[0] == 0 && ts_now_ms() < end)
        pump(c, &v, 20);
    ck_assert_int_eq(v.autos[0], 1);
    Croupier__RpcFrame *r = resume(c, at_seat(&v, 0));
    frame_free_rpc(r);
    /* Halfway through the first window, the second opens: the first's deadline falls in the
     * middle of the second. */
    while (ts_now_ms() < first + 1000)
        pump(c, &v, 20);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 1), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 2), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_turns(c, &v, 2, 2000));
    long long second = v.window_at_ms;
    ck_assert_int_lt(second - first, 1700); /* before the first's deadline */
    int autos_before = v.autos[0] + v.autos[1] + v.autos[2];
    /* Past the first window's deadline (plus a margin), within the second's. */
    while (ts_now_ms() < first + 2000 + 300)
        pump(c, &v, 20);
    ck_assert_int_lt(ts_now_ms() - second, 1900);
    ck_assert_int_eq(v.autos[0] + v.autos[1] + v.autos[2], autos_before);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_eq(v.completed, 1);
    for (size_t k = 0; k < v.nwindow; k++) {
        int s = (int)v.window[k];
        ck_assert_int_ge(v.auto_ms[s] - second, 1800); /* at the second's deadline */
    }
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * A drain during a window lets the round finish (it is not voided): the window runs to its
 * deadline, its pending seats are moved for, the round completes and the server exits drained.
 */
START_TEST(test_window_drain_lets_the_round_finish)
{
    env_t e;
    /* A window of 4 s: the drain must land inside it on a loaded machine. A gap of 3 s before
     * the first round: under ASan and TSan the three joins took more than the 1 s gap, a round
     * began with two players and the third sat at a second desk. */
    env_start(&e, "1", "4000", "100", "3000", 30);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 5000));
    char *b = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 5000, &b), 200);
    free(b);
    ck_assert_int_eq(testenv_human_desks(&e.game), 1); /* the round holds the drain */
    ck_assert_int_eq(act(c, &v, at_seat(&v, 2), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 8000));
    ck_assert_int_eq(v.completed, 1);
    ck_assert_int_eq(v.voided, 0);
    ck_assert_int_eq(v.autos[0], 1);
    ck_assert_int_eq(v.autos[1], 1);
    ck_assert_int_eq(v.autos[2], 0);
    int st;
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0); /* the pod's stop after /drain */
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=drained"));
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * Server bots in a window move after bot_ms each (their move, or the automatic one), not at the
 * deadline, and count as no timeout; the human keeps the whole window and gets the only Turn
 * pushed (bots are told nothing).
 */
START_TEST(test_window_bots_move_after_bot_ms_and_the_human_keeps_the_window)
{
    env_t e;
    env_start_bots(&e, "6000", "200");
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    memset(&v, 0, sizeof v);
    int rid = next_rid++;
    ck_assert_int_eq(rpcc_join(c, (uint64_t)rid, players[0], "test", 10, 0), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, (uint64_t)rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    int me = (int)r->reply->payload->joined->seat;
    frame_free_rpc(r);
    ck_assert(wait_turns(c, &v, 1, 8000));
    long long opened = v.window_at_ms;
    ck_assert_uint_eq(v.nwindow, 3);
    ck_assert_int_eq(v.turn_seat[0], me);
    long long end = ts_now_ms() + 3000;
    while (v.autos[(me + 1) % 3] + v.autos[(me + 2) % 3] < 2 && ts_now_ms() < end)
        pump(c, &v, 20);
    ck_assert_int_eq(v.autos[(me + 1) % 3], 1);
    ck_assert_int_eq(v.autos[(me + 2) % 3], 1);
    ck_assert_int_lt(v.auto_ms[(me + 1) % 3] - opened, 2500);
    pump(c, &v, 300);
    ck_assert_int_eq(v.autos[me], 0);
    ck_assert_int_eq(v.completed, 0);
    ck_assert_int_eq(act(c, &v, 0, true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_lt(ts_now_ms() - opened, 5500);
    ck_assert_int_eq(timeouts(&e), 0);
    ck_assert_int_eq(autos(&e), 0);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* The banker a Snapshot of player i shows (-1: none). */
static int banker_of(rpcc_t *c, int i)
{
    Croupier__RpcFrame *r = resume(c, i);
    const Croupier__Snapshot *s = r->reply->payload->snapshot;
    int b = s->has_banker_seat ? (int)s->banker_seat : -1;
    frame_free_rpc(r);
    return b;
}

static bool in_window(const view_t *v, int seat)
{
    for (size_t k = 0; k < v->nwindow; k++)
        if ((int)v->window[k] == seat)
            return true;
    return false;
}

/*
 * With nobody bidding, the bank rotates over the seats that may bank (tk_banker_next): the bid
 * window is theirs alone (the seat that may not bank is refused NOT_YOUR_TURN), the banker is in
 * the Snapshot, is left out of the punters' window, and the next round's banker is the next
 * eligible seat, skipping the one that may not bank.
 */
START_TEST(test_banker_rotates_over_the_seats_that_may_bank)
{
    env_t e;
    env_start_banker(&e, "1");
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    int bankers[3];
    for (int r = 0; r < 3; r++) {
        ck_assert(wait_turns(c, &v, 2 * r + 1, 8000));
        ck_assert_uint_eq(v.nwindow, 2); /* the bid: seats 0 and 2 */
        ck_assert(in_window(&v, 0) && in_window(&v, 2));
        ck_assert_int_eq(banker_of(c, 0), -1); /* not chosen yet */
        ck_assert_int_eq(act(c, &v, at_seat(&v, 1), false), CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
        ck_assert_int_eq(act(c, &v, at_seat(&v, 0), true), CROUPIER__ERROR_CODE__OK);
        ck_assert_int_eq(act(c, &v, at_seat(&v, 2), true), CROUPIER__ERROR_CODE__OK);
        ck_assert(wait_turns(c, &v, 2 * r + 2, 5000));
        bankers[r] = banker_of(c, 0);
        ck_assert(bankers[r] == 0 || bankers[r] == 2);
        ck_assert_uint_eq(v.nwindow, 2); /* the punters */
        ck_assert(!in_window(&v, bankers[r]));
        for (size_t k = 0; k < 2; k++)
            ck_assert_int_eq(act(c, &v, at_seat(&v, (int)v.window[k]), true),
                             CROUPIER__ERROR_CODE__OK);
        ck_assert(wait_completed(c, &v, r + 1, 5000));
        ck_assert_int_eq(v.completed, r + 1);
    }
    ck_assert_int_ne(bankers[1], bankers[0]);
    ck_assert_int_eq(bankers[2], bankers[0]);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * A bid-for-banker window: the highest bid banks (a seat's last bid counts); the banker is out
 * of the punters' window (its move refused), shown in the Snapshot during the round and not
 * between rounds.
 */
START_TEST(test_banker_highest_bid_banks)
{
    env_t e;
    env_start_banker(&e, "-1");
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_turns(c, &v, 1, 8000));
    ck_assert_uint_eq(v.nwindow, 3);
    ck_assert_int_eq(act_bid(c, &v, at_seat(&v, 0), false, 2), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act_bid(c, &v, at_seat(&v, 2), false, 3), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act_bid(c, &v, at_seat(&v, 0), false, 5), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 0), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 2), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 1), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_turns(c, &v, 2, 5000));
    ck_assert_int_eq(banker_of(c, 1), 0);
    ck_assert_uint_eq(v.nwindow, 2);
    ck_assert(in_window(&v, 1) && in_window(&v, 2));
    ck_assert_int_eq(act(c, &v, at_seat(&v, 0), true), CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 1), true), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, at_seat(&v, 2), true), CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_eq(v.completed, 1);
    ck_assert_int_eq(banker_of(c, 0), -1); /* between rounds (the next deals after 1 s) */
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* The rounds' records in a history stream's XRANGE text: for each, whether its "transfers"
 * make its "results" and its "rake" (docs/hand-history.md); counts records with transfers and
 * those that do not add up. */
static void history_transfers(const char *text, int *with, int *wrong)
{
    *with = *wrong = 0;
    for (const char *p = strstr(text, "{\"round\""); p != NULL; p = strstr(p + 1, "{\"round\"")) {
        json_t *rec = json_loads(p, JSON_DISABLE_EOF_CHECK, NULL);
        ck_assert_ptr_nonnull(rec);
        json_t *xs = json_object_get(rec, "transfers");
        if (xs != NULL) {
            long long sum[MAXS] = {0}, house = 0;
            size_t k;
            json_t *x;
            (*with)++;
            json_array_foreach(xs, k, x)
            {
                int from = (int)json_integer_value(json_object_get(x, "from"));
                int to = (int)json_integer_value(json_object_get(x, "to"));
                long long amount = json_integer_value(json_object_get(x, "amount"));
                ck_assert_ptr_nonnull(json_string_value(json_object_get(x, "reason")));
                ck_assert(from >= 0 && from < MAXS && to >= -1 && to < MAXS && amount > 0);
                sum[from] -= amount;
                if (to >= 0)
                    sum[to] += amount;
                else
                    house += amount;
            }
            bool bad = house != json_integer_value(json_object_get(rec, "rake"));
            json_array_foreach(json_object_get(rec, "results"), k, x)
            {
                json_int_t seat = json_integer_value(json_object_get(x, "seat"));
                bad = bad || seat < 0 || seat >= MAXS ||
                      sum[seat] != json_integer_value(json_object_get(x, "delta"));
            }
            *wrong += bad;
        }
        json_decref(rec);
    }
}

/*
 * Pairwise settlement: a round ended with transfers (each loser pays the winner its stake, the
 * winner pays the house 10 % of its win, capped at 1 chip) shows them in RoundEnd and in the hand
 * history; the deltas are what each seat received minus what it paid and the rake what went to
 * the house, the settlement moved exactly that (wallets + the rake account unchanged in sum).
 */
START_TEST(test_pairwise_transfers_make_deltas_rake_and_history)
{
    env_t e;
    char *args[] = {"--test-seats",
                    "3",
                    "--test-round-ms",
                    "150",
                    "--test-gap-ms",
                    "50",
                    "--test-pairwise",
                    "1",
                    "--test-rake-bp",
                    "1000",
                    "--test-rake-cap",
                    "1",
                    NULL};
    ck_assert_int_eq(testenv_start(&e, NULL), 0);
    for (int i = 0; i < NP; i++)
        free(ts_redis_cmd(e.redis, "SET {croupier:money}:wallet:%llu 1000000",
                          (unsigned long long)players[i]));
    ck_assert_int_eq(testenv_start_game(&e, &e.game, "test", 30, args, NULL), 0);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_completed(c, &v, 4, 10000));
    rpcc_close(c); /* the players stay seated: rounds go on, the sums below hold between them */
    ck_assert_int_eq(v.voided, 0);
    ck_assert_int_eq(v.with_transfers, v.completed);
    ck_assert_int_eq(v.transfers_wrong, 0);
    ck_assert_int_eq(v.rake, v.completed); /* 10 % of 20, capped at 1 chip, every round */
    testenv_stop_server(&e.game);          /* no round after the ones summed below */
    long long sum = 0;
    for (int i = 0; i < NP; i++) {
        char *w = ts_redis_cmd(e.redis, "GET {croupier:money}:wallet:%llu",
                               (unsigned long long)players[i]);
        sum += strtoll(w, NULL, 10);
        free(w);
    }
    char *r = ts_redis_cmd(e.redis, "GET {croupier:money}:rake:test");
    long long rake = strtoll(r, NULL, 10);
    free(r);
    ck_assert_int_ge(rake, v.completed);
    ck_assert_int_eq(sum + rake, 3 * 1000000LL);
    char *h = ts_redis_cmd(e.redis, "XRANGE {croupier:history:test}:stream - +");
    ck_assert_ptr_nonnull(h);
    int with, wrong;
    history_transfers(h, &with, &wrong);
    free(h);
    ck_assert_int_ge(with, v.completed);
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_eq(rake, with); /* one chip of rake per completed round, each with transfers */
    testenv_stop(&e);
}
END_TEST

/*
 * A transfer that breaks a rule (a seat paying itself) is the game's bug: the kit voids the round
 * (VOID_INTERNAL_ERROR) with no chip moved and no transfer shown, records it voided, and the
 * table deals on.
 */
START_TEST(test_pairwise_refused_transfer_voids_the_round_and_moves_nothing)
{
    env_t e;
    char *args[] = {"--test-seats",
                    "3",
                    "--test-round-ms",
                    "150",
                    "--test-gap-ms",
                    "50",
                    "--test-pairwise",
                    "2",
                    "--test-rake-bp",
                    "1000",
                    NULL};
    ck_assert_int_eq(testenv_start(&e, NULL), 0);
    for (int i = 0; i < NP; i++)
        free(ts_redis_cmd(e.redis, "SET {croupier:money}:wallet:%llu 1000000",
                          (unsigned long long)players[i]));
    ck_assert_int_eq(testenv_start_game(&e, &e.game, "test", 30, args, NULL), 0);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    view_t v;
    join_all(c, &v);
    ck_assert(wait_completed(c, &v, 3, 10000));
    rpcc_close(c);
    ck_assert_int_eq(v.completed, 0);
    ck_assert_int_ge(v.voided, 3); /* the table dealt on after each */
    ck_assert_int_eq(v.void_reason, CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR);
    ck_assert_int_eq(v.with_transfers, 0);
    ck_assert(ts_proc_log_has(e.game.proc, "tk_round_end_refused"));
    testenv_stop_server(&e.game);
    for (int i = 0; i < NP; i++) {
        char *w = ts_redis_cmd(e.redis, "GET {croupier:money}:wallet:%llu",
                               (unsigned long long)players[i]);
        ck_assert_str_eq(w, "1000000");
        free(w);
    }
    char *h = ts_redis_cmd(e.redis, "XRANGE {croupier:history:test}:stream - +");
    int with, wrong;
    history_transfers(h, &with, &wrong);
    ck_assert_int_eq(with, 0);
    ck_assert_ptr_nonnull(strstr(h, "\"void_reason\":\"VOID_INTERNAL_ERROR\""));
    ck_assert_ptr_null(strstr(h, "\"outcome\":\"completed\""));
    free(h);
    testenv_stop(&e);
}
END_TEST

static Suite *tk_window_suite(void)
{
    Suite *s = suite_create("tk_window");
    TCase *tc = tcase_create("windows");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_window_seats_act_in_any_order);
    tcase_add_test(tc, test_window_deadline_auto_moves_exactly_the_pending_seats_once);
    tcase_add_test(tc,
                   test_window_gone_seat_is_moved_after_trustee_ms_while_others_keep_the_window);
    tcase_add_test(tc, test_window_leaver_gets_the_automatic_move_after_trustee_ms);
    tcase_add_test(tc, test_window_resume_gets_time_left_and_pending_seats);
    tcase_add_test(tc, test_window_refuses_wrong_seat_and_double_moves);
    tcase_add_test(tc, test_window_stale_timer_never_fires_a_later_window);
    tcase_add_test(tc, test_window_drain_lets_the_round_finish);
    tcase_add_test(tc, test_window_bots_move_after_bot_ms_and_the_human_keeps_the_window);
    suite_add_tcase(s, tc);
    tc = tcase_create("banker");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_banker_rotates_over_the_seats_that_may_bank);
    tcase_add_test(tc, test_banker_highest_bid_banks);
    suite_add_tcase(s, tc);
    tc = tcase_create("pairwise");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_pairwise_transfers_make_deltas_rake_and_history);
    tcase_add_test(tc, test_pairwise_refused_transfer_voids_the_round_and_moves_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tk_window_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
