/*
 * The game-server lifecycle against the real croupier-game binary, a real redis-server and the
 * real k8s/prestop.sh under busybox (docs/architecture.md §4, issue 4). The "test" engine
 * (engine/testgame.c) plays simple resident-table rounds; players are driven through a real rpc
 * link (rpcc), as a gateway would.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpcc.h"
#include "support.h"
#include "testenv.h"
#include "version.h"

/* redis-server and croupier-game --engine test (tests/support/testenv.h). */
typedef testenv_t env_t;

static char *game_arg(const char *fmt, int v)
{
    char *s;
    if (asprintf(&s, fmt, v) < 0)
        abort();
    return s;
}

/* Starts redis-server and croupier-game with the test engine; extra_env adds CROUPIER_TEST_*
 * settings, drain_allow (or NULL) is passed as --drain-allow. */
/* The Redis of the running test (env_start): join_ok gives each player a wallet, since the test
 * engine settles play money in the wallets and a settlement that would take a wallet below 0
 * voids its round (RoundEnd waits for the settlement, engine/tk.h). */
static ts_redis_t *cur_redis;
#define WALLET_SEED 1000000

static void env_start(env_t *e, int drain_max_s, char *const extra_env[], const char *drain_allow)
{
    char *allow[] = {"--drain-allow", (char *)drain_allow, NULL};
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    cur_redis = e->redis;
    ck_assert_int_eq(testenv_start_game(e, &e->game, "test", drain_max_s,
                                        drain_allow != NULL ? allow : NULL, extra_env),
                     0);
}

__attribute__((noinline)) static char *get(env_t *e, const char *path, int *status)
{
    char *body = NULL;
    *status = ts_http_get("127.0.0.1", e->game.health, path, 5000, &body);
    return body;
}

static void join_ok(rpcc_t *c, uint64_t rid, uint64_t player)
{
    free(ts_redis_cmd(cur_redis, "SETNX {croupier:money}:wallet:%llu %d",
                      (unsigned long long)player, WALLET_SEED));
    ck_assert_int_eq(rpcc_join(c, rid, player, "test", 10, 0), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    frame_free_rpc(r);
}

/* /drain/status's human_desks (testenv_human_desks), asserted to be there. */
static long human_desks(env_t *e)
{
    long v = testenv_human_desks(&e->game);
    ck_assert_int_ge(v, 0);
    return v;
}

/* Waits for the end of the next round not seen yet (every seated player gets its own RoundEnd
 * push; the round id tells them apart); returns its outcome, or 0 on timeout. */
static char last_round[128];

static int next_round_end(rpcc_t *c, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0)
            return 0;
        Croupier__RpcFrame *f = rpcc_next_event(c, left);
        if (f == NULL)
            return 0;
        int outcome = 0;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END &&
            strcmp(f->push->round_end->round_id, last_round) != 0) {
            outcome = f->push->round_end->outcome;
            snprintf(last_round, sizeof last_round, "%s", f->push->round_end->round_id);
        }
        frame_free_rpc(f);
        if (outcome != 0)
            return outcome;
    }
}

START_TEST(test_drain_is_idempotent_and_elapsed_stays_zero_before)
{
    env_t e;
    env_start(&e, 30, NULL, NULL);
    int st;
    char *b = get(&e, "/drain/status", &st);
    ck_assert_int_eq(st, 200);
    ck_assert_ptr_nonnull(strstr(b, "\"draining\":false"));
    ck_assert_ptr_nonnull(strstr(b, "\"elapsedSeconds\":0"));
    ck_assert_ptr_nonnull(strstr(b, "\"total_desks\":"));
    ck_assert_ptr_null(strchr(b, ' '));
    free(b);
    ts_sleep_ms(1100);
    b = get(&e, "/drain/status", &st);
    ck_assert_ptr_nonnull(strstr(b, "\"elapsedSeconds\":0"));
    free(b);
    b = get(&e, "/drain", &st);
    ck_assert_int_eq(st, 200);
    ck_assert_ptr_nonnull(strstr(b, "\"draining\":true"));
    free(b);
    /* Readiness is 503 from the first moment of the drain. */
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/readyz", 2000, NULL), 503);
    ts_sleep_ms(1100);
    b = get(&e, "/drain", &st);
    ck_assert_int_eq(st, 200);
    ck_assert_ptr_nonnull(strstr(b, "\"draining\":true"));
    ck_assert_ptr_null(strstr(b, "\"elapsedSeconds\":0,")); /* still counting from the first */
    free(b);
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/healthz", 2000, NULL), 200);
    b = get(&e, "/metrics", &st);
    ck_assert_int_eq(st, 200);
    ck_assert_ptr_nonnull(strstr(b, "game_draining 1"));
    free(b);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_bot_only_desks_never_hold_a_drain)
{
    env_t e;
    char *env[] = {"CROUPIER_TEST_BOT_TABLES=4", "CROUPIER_TEST_ROUND_MS=300", NULL};
    env_start(&e, 30, env, NULL);
    ts_sleep_ms(800); /* bot rounds are running */
    int st;
    char *b = get(&e, "/drain/status", &st);
    ck_assert_ptr_nonnull(strstr(b, "\"human_desks\":0"));
    free(b);
    b = get(&e, "/metrics", &st);
    ck_assert_ptr_nonnull(strstr(b, "game_rounds_total{game=\"test\",outcome=\"completed\"}"));
    free(b);
    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    int status;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 5000, &status), 0);
    ck_assert_msg(ts_now_ms() - t0 < 1500, "idle exit took %lld ms", ts_now_ms() - t0);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    ck_assert_msg(ts_proc_log_has(e.game.proc, "exit reason=drained"), "no drained exit line in %s",
                  ts_proc_log_path(e.game.proc));
    testenv_stop(&e);
}
END_TEST

/*
 * The classic resident-table failure: players stay seated and rounds run back to back. After
 * /drain the current round finishes, no next round starts, human_desks reaches 0 within one
 * round and stays 0 while the players remain seated; the real preStop script returns.
 */
START_TEST(test_resident_table_drain_finishes_round_and_starts_no_next)
{
    env_t e;
    char *env[] = {"CROUPIER_TEST_ROUND_MS=1200", "CROUPIER_TEST_GAP_MS=10", NULL};
    env_start(&e, 60, env, NULL);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    join_ok(c, 11, 1001);
    join_ok(c, 12, 1002);
    join_ok(c, 13, 1003);
    ck_assert_int_eq(next_round_end(c, 5000), CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED);
    ts_sleep_ms(200); /* the next round has begun */
    ck_assert_int_eq(human_desks(&e), 1);

    /* The real preStop script under busybox, as kubelet would run it. */
    char port[32];
    snprintf(port, sizeof port, "HEALTH_PORT=%d", e.game.health);
    char *pargv[] = {getenv("PRESTOP_WRAP") ? getenv("PRESTOP_WRAP") : "/bin/busybox", "sh",
                     (char *)ts_source_path("k8s/prestop.sh"), NULL};
    char *penv[] = {port, "DRAIN_MAX_SECONDS=60", NULL};
    ts_proc_t *pre = ts_proc_spawn(pargv, penv);
    ck_assert_ptr_nonnull(pre);

    ck_assert_int_eq(next_round_end(c, 5000), CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED);
    long long round_end = ts_now_ms();
    int st;
    ck_assert_int_eq(ts_proc_wait(pre, 5000, &st), 0);
    long long pre_ms = ts_now_ms() - round_end;
    /* A long poll answers at once; a 2 s status poll would take up to 2 s. (The precise figure
     * is measured by the drain benchmark, not asserted here.) */
    ck_assert_msg(pre_ms < 1000, "preStop returned %lld ms after the last round", pre_ms);
    ts_proc_free(pre);
    ck_assert_int_eq(human_desks(&e), 0);

    /* Players were told; the gateway got one DeskClosing per player. */
    int closings = 0;
    for (;;) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 500);
        if (f == NULL)
            break;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING)
            closings++;
        /* Only the other players' copies of the last round's end may still be queued. */
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END)
            ck_assert_str_eq(f->push->round_end->round_id, last_round);
        frame_free_rpc(f);
    }
    ck_assert_int_eq(closings, 3);

    /* Three more round lengths: no round starts, the players are still seated. */
    ts_sleep_ms(3600);
    ck_assert_int_eq(human_desks(&e), 0);
    ck_assert_int_eq(rpcc_resume(c, 14, 1001), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, 14, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    frame_free_rpc(r);
    /* New joins are refused while draining, with a retriable error. */
    ck_assert_int_eq(rpcc_join(c, 15, 2001, "test", 10, 0), 0);
    r = rpcc_wait_reply(c, 15, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__DRAINING);
    ck_assert(r->reply->error->retriable);
    frame_free_rpc(r);
    ck_assert_int_eq(next_round_end(c, 100), 0);

    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 5000, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert_msg(ts_proc_log_has(e.game.proc, "exit reason=drained"), "no drained exit line in %s",
                  ts_proc_log_path(e.game.proc));
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_bound_passes_round_voided_exit_forced)
{
    env_t e;
    char *env[] = {"CROUPIER_TEST_ROUND_MS=60000", "CROUPIER_TEST_GAP_MS=0", NULL};
    env_start(&e, 1, env, NULL);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    join_ok(c, 21, 3001);
    join_ok(c, 22, 3002);
    ts_sleep_ms(300);
    ck_assert_int_eq(human_desks(&e), 1);
    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    ck_assert_int_eq(next_round_end(c, 5000), CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert_msg(ts_now_ms() - t0 < 6000, "forced exit took %lld ms", ts_now_ms() - t0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=forced"));
    /* Voiding moved no money: the wallet holds what it was given. */
    char *w = ts_redis_cmd(e.redis, "GET {croupier:money}:wallet:3001");
    ck_assert_int_eq(atoll(w), WALLET_SEED);
    free(w);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_second_sigterm_skips_the_wait)
{
    env_t e;
    char *env[] = {"CROUPIER_TEST_ROUND_MS=60000", "CROUPIER_TEST_GAP_MS=0", NULL};
    env_start(&e, 600, env, NULL);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    join_ok(c, 31, 4001);
    join_ok(c, 32, 4002);
    ts_sleep_ms(300);
    ts_proc_signal(e.game.proc, SIGTERM);
    ts_sleep_ms(300);
    ck_assert(ts_proc_alive(e.game.proc)); /* waiting for the round */
    ts_proc_signal(e.game.proc, SIGTERM);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 6000, &st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=forced"));
    ck_assert_int_eq(next_round_end(c, 2000), CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_drain_from_a_peer_not_allowed_is_403)
{
    env_t e;
    env_start(&e, 30, NULL, "127.0.0.2");
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 2000, NULL), 403);
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain/status", 2000, NULL), 403);
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/readyz", 2000, NULL), 200);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_rpc_deadline_idempotency_and_routing_errors)
{
    env_t e;
    char *env[] = {"CROUPIER_TEST_ROUND_MS=60000", "CROUPIER_TEST_GAP_MS=0", NULL};
    env_start(&e, 30, env, NULL);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    /* An action from a player with no seat. */
    ck_assert_int_eq(rpcc_action(c, 41, 5001, 0), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, 41, 3000);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_rpc(r);
    /* Expired work is refused, not applied. */
    ck_assert_int_eq(rpcc_join(c, 42, 5001, "test", 10, rpcc_wall_ms() - 10), 0);
    r = rpcc_wait_reply(c, 42, 3000);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED);
    frame_free_rpc(r);
    /* Unknown game. */
    ck_assert_int_eq(rpcc_join(c, 43, 5001, "poker", 10, 0), 0);
    r = rpcc_wait_reply(c, 43, 3000);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__NO_SUCH_GAME);
    frame_free_rpc(r);
    join_ok(c, 44, 5001);
    join_ok(c, 45, 5002);
    ts_sleep_ms(300);
    /* The same action twice: one application, the same answer. */
    ck_assert_int_eq(rpcc_action(c, 46, 5001, 0), 0);
    ck_assert_int_eq(rpcc_action(c, 46, 5001, 0), 0);
    Croupier__RpcFrame *a1 = rpcc_wait_reply(c, 46, 3000);
    Croupier__RpcFrame *a2 = rpcc_wait_reply(c, 46, 3000);
    ck_assert_ptr_nonnull(a1);
    ck_assert_ptr_nonnull(a2);
    /* The reply's event_seq is the table's number of the Play the action made (one counter
     * per table, engine/tk.h): a second application would have made another Play. */
    ck_assert_int_eq(a1->reply->code, CROUPIER__ERROR_CODE__OK);
    uint64_t first = a1->reply->payload->event_seq;
    ck_assert_uint_gt(first, 0);
    ck_assert_uint_eq(a2->reply->payload->event_seq, first);
    frame_free_rpc(a1);
    frame_free_rpc(a2);
    ck_assert_int_eq(rpcc_action(c, 47, 5001, 0), 0);
    r = rpcc_wait_reply(c, 47, 3000);
    ck_assert_uint_gt(r->reply->payload->event_seq, first);
    frame_free_rpc(r);
    /* A retry of the first action much later still answers the first result. */
    ck_assert_int_eq(rpcc_action(c, 46, 5001, 0), 0);
    r = rpcc_wait_reply(c, 46, 3000);
    ck_assert_uint_eq(r->reply->payload->event_seq, first);
    frame_free_rpc(r);
    /* Garbage on the link is counted and skipped; the link keeps working. */
    const uint8_t junk[] = {0, 0, 0, 3, 0xff, 0xff, 0xff};
    ck_assert_int_eq(rpcc_send_raw(c, junk, sizeof junk), 0);
    ck_assert_int_eq(rpcc_resume(c, 48, 5001), 0);
    r = rpcc_wait_reply(c, 48, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    /* An oversized frame closes the link (the stream cannot resync). */
    const uint8_t huge[] = {0x7f, 0, 0, 0};
    ck_assert_int_eq(rpcc_send_raw(c, huge, sizeof huge), 0);
    ck_assert_ptr_null(rpcc_recv(c, 3000));
    ck_assert(rpcc_closed(c));
    rpcc_close(c);
    int st;
    char *m = get(&e, "/metrics", &st);
    ck_assert_ptr_nonnull(strstr(m, "game_rpc_deadline_exceeded_total 1"));
    ck_assert_ptr_nonnull(strstr(m, "game_rpc_duplicate_requests_total 2"));
    ck_assert_ptr_nonnull(strstr(m, "game_rpc_bad_frames_total 2"));
    free(m);
    testenv_stop(&e);
}
END_TEST

/* A player who resumed through another gateway keeps getting pushes there when the gateway it
 * left says "player gone" afterwards (it frees the old connection late): the pushes of a seat
 * follow the player's last request, and a PlayerGone is not one. */
START_TEST(test_late_player_gone_from_old_gateway_keeps_pushes_on_new_one)
{
    env_t e;
    char *env[] = {"CROUPIER_TEST_ROUND_MS=300", "CROUPIER_TEST_GAP_MS=0", NULL};
    env_start(&e, 30, env, NULL);
    rpcc_t *old_gw = rpcc_connect("127.0.0.1", e.game.port, 5000);
    rpcc_t *new_gw = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(old_gw);
    ck_assert_ptr_nonnull(new_gw);
    join_ok(old_gw, 71, 7001);
    join_ok(old_gw, 70, 7002); /* rounds need two players */
    ck_assert_int_eq(rpcc_resume(new_gw, 72, 7001), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(new_gw, 72, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone pg = CROUPIER__PLAYER_GONE__INIT;
    f.has_player_id = true;
    f.player_id = 7001;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &pg;
    ck_assert_int_eq(rpcc_send(old_gw, &f), 0);
    /* A request after it on the same link: once answered, the PlayerGone was handled. */
    ck_assert_int_eq(rpcc_resume(old_gw, 73, 7999), 0);
    r = rpcc_wait_reply(old_gw, 73, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_rpc(r);
    /* Rounds of 300 ms: the next RoundEnd reaches the player through the new link. */
    ck_assert_int_eq(next_round_end(new_gw, 3000), CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED);
    rpcc_close(old_gw);
    rpcc_close(new_gw);
    testenv_stop(&e);
}
END_TEST

/* A gateway's link is lost and the gateway connects again (a missed heartbeat, a blip): the
 * players whose last request came through the old link -- here none sends anything after -- get
 * their pushes and their table's DeskClosing on the new one (engine/gs.c gs_gate_relink), and no
 * other gateway gets them. Without it a disconnected player's seat is never moved on a drain
 * (docs/gateway.md "Table moves"). */
START_TEST(test_pushes_and_desk_closing_follow_a_reconnected_gateway)
{
    env_t e;
    char *env[] = {"CROUPIER_TEST_ROUND_MS=300", "CROUPIER_TEST_GAP_MS=0", NULL};
    env_start(&e, 30, env, NULL);
    rpcc_t *gw = rpcc_connect_as("127.0.0.1", e.game.port, "gw-relink", 5000);
    rpcc_t *other = rpcc_connect_as("127.0.0.1", e.game.port, "gw-other", 5000);
    ck_assert_ptr_nonnull(gw);
    ck_assert_ptr_nonnull(other);
    join_ok(gw, 1, 7201);
    join_ok(gw, 2, 7202);
    rpcc_close(gw);
    gw = rpcc_connect_as("127.0.0.1", e.game.port, "gw-relink", 5000);
    ck_assert_ptr_nonnull(gw);
    ck_assert_int_eq(next_round_end(gw, 3000), CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED);
    int status;
    free(get(&e, "/drain", &status));
    ck_assert_int_eq(status, 200);
    bool told[2] = {false, false};
    long long end = ts_now_ms() + 5000;
    while (!(told[0] && told[1]) && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(gw, (int)(end - ts_now_ms()));
        if (f == NULL)
            break;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING)
            for (size_t i = 0; i < f->desk_closing->n_player_ids; i++)
                if (f->desk_closing->player_ids[i] == 7201 ||
                    f->desk_closing->player_ids[i] == 7202)
                    told[f->desk_closing->player_ids[i] - 7201] = true;
        frame_free_rpc(f);
    }
    ck_assert_msg(told[0] && told[1], "DeskClosing on the new link: 7201 %d, 7202 %d", told[0],
                  told[1]);
    Croupier__RpcFrame *f = rpcc_next_event(other, 200);
    ck_assert_msg(f == NULL, "the other gateway got a frame for these players (%d)",
                  f != NULL ? (int)f->body_case : 0);
    rpcc_close(gw);
    rpcc_close(other);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_rounds_settle_exactly_once_through_redis)
{
    env_t e;
    char *env[] = {"CROUPIER_TEST_ROUND_MS=150", "CROUPIER_TEST_GAP_MS=0", NULL};
    env_start(&e, 30, env, NULL);
    for (int p = 6001; p <= 6003; p++) {
        char *r = ts_redis_cmd(e.redis, "SET {croupier:money}:wallet:%d 1000", p);
        free(r);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    join_ok(c, 51, 6001);
    join_ok(c, 52, 6002);
    join_ok(c, 53, 6003);
    int rounds = 0;
    while (rounds < 5)
        if (next_round_end(c, 3000) == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED)
            rounds++;
    ts_proc_signal(e.game.proc, SIGTERM);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert_msg(ts_proc_log_has(e.game.proc, "exit reason=drained"), "no drained exit line in %s",
                  ts_proc_log_path(e.game.proc));
    /* Money is conserved across the three wallets, and every settled round has one record. */
    long total = 0;
    for (int p = 6001; p <= 6003; p++) {
        char *r = ts_redis_cmd(e.redis, "GET {croupier:money}:wallet:%d", p);
        total += strtol(r, NULL, 10);
        free(r);
    }
    ck_assert_int_eq(total, 3000);
    char *keys = ts_redis_cmd(e.redis, "KEYS {croupier:money}:round:*");
    int records = 0;
    for (char *p = keys; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        records++;
    free(keys);
    ck_assert_int_ge(records, 5);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* A round ends (COMPLETED) within ms: whether one did. */
static bool a_round_ends(rpcc_t *c, int ms)
{
    long long end = ts_now_ms() + ms;
    while (ts_now_ms() < end)
        if (next_round_end(c, (int)(end - ts_now_ms())) ==
            CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED)
            return true;
    return false;
}

/*
 * With --redis-sentinels the game server watches the sentinels' quorum (SENTINEL CKQUORUM):
 * when two of three sentinels die, no new round starts (a master lost now would not be
 * replaced), with one clear log line; when the quorum is back (two new sentinels join the one
 * left), rounds start again by themselves.
 */
START_TEST(test_sentinel_quorum_lost_holds_rounds_until_it_is_back)
{
    env_t e;
    ck_assert_int_eq(testenv_start(&e, NULL), 0);
    cur_redis = e.redis;
    int mport = ts_redis_port(e.redis);
    ts_sentinel_t *sen[5] = {NULL};
    for (int i = 0; i < 3; i++) {
        sen[i] = ts_sentinel_start("qmaster", mport, 2, 1000, 3000);
        ck_assert_msg(sen[i] != NULL, "could not start redis-sentinel");
    }
    char list[128];
    snprintf(list, sizeof list, "127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d", ts_sentinel_port(sen[0]),
             ts_sentinel_port(sen[1]), ts_sentinel_port(sen[2]));
    /* The sentinels find each other through the master (a few seconds). */
    long long end = ts_now_ms() + 20000;
    bool quorum = false;
    while (!quorum && ts_now_ms() < end) {
        char *r = ts_redis_cmd_port(ts_sentinel_port(sen[0]), "SENTINEL CKQUORUM qmaster");
        quorum = r != NULL && strncmp(r, "OK", 2) == 0;
        free(r);
        if (!quorum)
            ts_sleep_ms(100);
    }
    ck_assert_msg(quorum, "the sentinels never reached a quorum");
    char *args[] = {
        "--redis-sentinels", list, "--redis-master", "qmaster", "--redis-min-replicas", "0", NULL};
    char *env[] = {"CROUPIER_TEST_ROUND_MS=150", "CROUPIER_TEST_GAP_MS=0", NULL};
    ck_assert_int_eq(testenv_start_game(&e, &e.game, "test", 10, args, env), 0);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    join_ok(c, 61, 6101);
    join_ok(c, 62, 6102);
    ck_assert(a_round_ends(c, 5000));
    /* Two sentinels die: the one left sees no quorum once it finds them down (~1 s). */
    ts_sentinel_crash(sen[1]);
    ts_sentinel_crash(sen[2]);
    end = ts_now_ms() + 10000;
    while (!ts_proc_log_has(e.game.proc, "\"event\":\"redis_quorum_lost\"") && ts_now_ms() < end)
        ts_sleep_ms(50);
    ck_assert_msg(ts_proc_log_has(e.game.proc, "\"event\":\"redis_quorum_lost\""),
                  "no redis_quorum_lost line in %s", ts_proc_log_path(e.game.proc));
    /* The rounds that ended meanwhile (their pushes queued here), and the one that was running
     * when the quorum went, end; then none. */
    Croupier__RpcFrame *f;
    long long quiet = ts_now_ms() + 800;
    while (ts_now_ms() < quiet)
        if ((f = rpcc_next_event(c, 100)) != NULL)
            frame_free_rpc(f);
    ck_assert_msg(!a_round_ends(c, 2000), "a round started without the sentinels' quorum");
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/metrics", 5000, &body), 200);
    ck_assert_ptr_nonnull(strstr(body, "redis_sentinel_quorum 0"));
    free(body);
    /* Two new sentinels join the one left: the quorum is back, and so are the rounds. */
    sen[3] = ts_sentinel_start("qmaster", mport, 2, 1000, 3000);
    sen[4] = ts_sentinel_start("qmaster", mport, 2, 1000, 3000);
    ck_assert(sen[3] != NULL && sen[4] != NULL);
    end = ts_now_ms() + 30000;
    while (!ts_proc_log_has(e.game.proc, "\"event\":\"redis_quorum_back\"") && ts_now_ms() < end)
        ts_sleep_ms(100);
    ck_assert_msg(ts_proc_log_has(e.game.proc, "\"event\":\"redis_quorum_back\""),
                  "no redis_quorum_back line in %s", ts_proc_log_path(e.game.proc));
    ck_assert_msg(a_round_ends(c, 5000), "no round after the quorum came back");
    ck_assert(ts_proc_alive(e.game.proc));
    rpcc_close(c);
    testenv_stop_server(&e.game);
    for (int i = 0; i < 5; i++)
        ts_sentinel_stop(sen[i]);
    testenv_stop(&e);
}
END_TEST

/* Spawns BIN (a build path) with argv[1..] and waits up to 15 s for its exit; returns the exit
 * status, or -1 if it did not exit by itself (then it is killed). *log gets its log (free it). */
static int run_to_exit(char *const argv[], char **log)
{
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(p);
    int st = 0, rc = ts_proc_wait(p, 15000, &st);
    *log = ts_proc_log(p);
    ts_proc_free(p);
    return rc == 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether the metric line "NAME VALUE" is in the server's /metrics. */
static bool metric_is(int health, const char *line)
{
    char *body = NULL;
    bool ok = ts_http_get("127.0.0.1", health, "/metrics", 5000, &body) == 200 && body != NULL &&
              strstr(body, line) != NULL;
    free(body);
    return ok;
}

/*
 * Redis must not evict (docs/deploy.md "Redis must not evict"): an evicting Redis deletes
 * wallets and lease keys without an error. croupier-game and croupier-gate refuse one at start
 * (exit 2, a line naming maxmemory-policy, nothing written: no lease taken), and
 * --redis-allow-eviction (tests only) runs anyway, loudly.
 */
START_TEST(test_evicting_redis_is_refused_at_start)
{
    env_t e;
    ck_assert_int_eq(testenv_start(&e, "a-secret-of-sixteen-bytes-at-least"), 0);
    free(ts_redis_cmd(e.redis, "CONFIG SET maxmemory-policy allkeys-lru"));
    char *listen = game_arg("127.0.0.1:%d", ts_free_port());
    char *hl = game_arg("127.0.0.1:%d", ts_free_port());
    char *redis = game_arg("127.0.0.1:%d", ts_redis_port(e.redis));
    char *game[] = {(char *)ts_build_path("engine/process/croupier-game"),
                    "--engine",
                    "test",
                    "--listen",
                    listen,
                    "--health-listen",
                    hl,
                    "--redis",
                    redis,
                    "--lease-ttl-ms",
                    "900",
                    NULL};
    char *log = NULL;
    ck_assert_int_eq(run_to_exit(game, &log), 2);
    ck_assert_msg(strstr(log, "\"event\":\"redis_refused\"") != NULL &&
                      strstr(log, "allkeys-lru") != NULL && strstr(log, "noeviction") != NULL,
                  "no redis_refused line naming the policy: %s", log);
    free(log);
    char *keys = ts_redis_cmd(e.redis, "KEYS {croupier:lease:*");
    ck_assert_msg(keys == NULL || keys[0] == '\0', "a lease was taken on an evicting Redis: %s",
                  keys);
    free(keys);

    char *gate[] = {(char *)ts_build_path("gateway/croupier-gate"),
                    "--listen",
                    listen,
                    "--health-listen",
                    hl,
                    "--redis",
                    redis,
                    "--token-secret-file",
                    e.secret_path,
                    NULL};
    ck_assert_int_eq(run_to_exit(gate, &log), 2);
    ck_assert_msg(strstr(log, "\"event\":\"redis_refused\"") != NULL &&
                      strstr(log, "allkeys-lru") != NULL,
                  "no redis_refused line naming the policy: %s", log);
    free(log);

    /* The escape hatch: ready on the evicting Redis, with a warning naming it. */
    char *allow[] = {"--redis-allow-eviction", NULL};
    ck_assert_int_eq(testenv_start_game(&e, &e.game, "test", 10, allow, NULL), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"redis_eviction_policy\""));
    ck_assert(ts_proc_log_has(e.game.proc, "--redis-allow-eviction"));
    ck_assert(metric_is(e.game.health, "redis_eviction_policy_safe 0"));
    testenv_stop(&e);
    free(listen);
    free(hl);
    free(redis);
}
END_TEST

/*
 * The policy changed at runtime (CONFIG SET on the running Redis) is seen within seconds: the
 * server turns unready and starts no round; rounds under way finish. Back to noeviction, it is
 * ready and plays again by itself (tests/unit/test_rguard.c: evicted keys counted).
 */
START_TEST(test_eviction_policy_changed_at_runtime_stops_rounds_until_fixed)
{
    env_t e;
    ck_assert_int_eq(testenv_start(&e, NULL), 0);
    cur_redis = e.redis;
    char *env[] = {"CROUPIER_TEST_ROUND_MS=150", "CROUPIER_TEST_GAP_MS=0", NULL};
    ck_assert_int_eq(testenv_start_game(&e, &e.game, "test", 10, NULL, env), 0);
    ck_assert(metric_is(e.game.health, "redis_eviction_policy_safe 1"));
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    join_ok(c, 71, 7101);
    join_ok(c, 72, 7102);
    ck_assert(a_round_ends(c, 5000));

    free(ts_redis_cmd(e.redis, "CONFIG SET maxmemory-policy volatile-lru"));
    ck_assert_int_eq(ts_http_wait_status("127.0.0.1", e.game.health, "/readyz", 503, 5000), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"redis_eviction_policy\""));
    ck_assert(ts_proc_log_has(e.game.proc, "volatile-lru"));
    ck_assert(metric_is(e.game.health, "redis_eviction_policy_safe 0"));
    /* The round under way and those whose pushes are queued end; then none starts. */
    Croupier__RpcFrame *f;
    long long quiet = ts_now_ms() + 800;
    while (ts_now_ms() < quiet)
        if ((f = rpcc_next_event(c, 100)) != NULL)
            frame_free_rpc(f);
    ck_assert_msg(!a_round_ends(c, 2000), "a round started on an evicting Redis");
    ck_assert(ts_proc_alive(e.game.proc));

    free(ts_redis_cmd(e.redis, "CONFIG SET maxmemory-policy noeviction"));
    ck_assert_int_eq(ts_http_wait_status("127.0.0.1", e.game.health, "/readyz", 200, 5000), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"redis_eviction_policy_ok\""));
    ck_assert_msg(a_round_ends(c, 5000), "no round after the policy was fixed");

    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * A failed deck generator (docs/fairness.md "The generator"): the periodic check sees it within
 * seconds, even while the tables are between rounds; the server turns unready, says so in one
 * log line and in rng_healthy / rng_failures_total, and starts no round again, even once the
 * generator works (no fallback, no recovery without a restart). The process stays up.
 */
START_TEST(test_failed_deck_generator_makes_the_server_unready_and_starts_no_round)
{
    env_t e;
    ck_assert_int_eq(testenv_start(&e, NULL), 0);
    cur_redis = e.redis;
    char *dir = ts_tmpdir();
    char flag[600], env_flag[700];
    snprintf(flag, sizeof flag, "%s/rng-fail", dir);
    snprintf(env_flag, sizeof env_flag, "CROUPIER_TEST_RNG_FAIL_FILE=%s", flag);
    char *env[] = {"CROUPIER_TEST_ROUND_MS=150", "CROUPIER_TEST_GAP_MS=0", env_flag, NULL};
    ck_assert_int_eq(testenv_start_game(&e, &e.game, "test", 10, NULL, env), 0);
    ck_assert(metric_is(e.game.health, "rng_healthy 1"));
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    join_ok(c, 91, 9101);
    join_ok(c, 92, 9102);
    ck_assert(a_round_ends(c, 5000));

    FILE *f = fopen(flag, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(ts_http_wait_status("127.0.0.1", e.game.health, "/readyz", 503, 5000), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"rng_failed\""));
    ck_assert(metric_is(e.game.health, "rng_healthy 0"));
    ck_assert(metric_is(e.game.health, "rng_failures_total 1"));
    /* The round under way and those whose pushes are queued end; then none starts. */
    Croupier__RpcFrame *fr;
    long long quiet = ts_now_ms() + 800;
    while (ts_now_ms() < quiet)
        if ((fr = rpcc_next_event(c, 100)) != NULL)
            frame_free_rpc(fr);
    ck_assert_msg(!a_round_ends(c, 2000), "a round started with a failed generator");
    /* The generator works again: nothing changes (sticky until a restart). */
    ck_assert_int_eq(unlink(flag), 0);
    ck_assert_msg(!a_round_ends(c, 2000), "a round started after the generator failed once");
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/readyz", 2000, NULL), 503);
    ck_assert(ts_proc_alive(e.game.proc));
    rpcc_close(c);
    testenv_stop(&e);
    rmdir(dir);
    free(dir);
}
END_TEST

/*
 * Self-fencing (docs/queues.md "A server cut off from Redis"). Redis stops answering (SIGSTOP:
 * every connection hangs, as in a partition): before the lease can lapse -- within the TTL of
 * the moment Redis went silent -- the server stops every table: the round in play is voided
 * (VOID_STORE_UNREACHABLE) or, if its settlement was on its way, left to Redis; every player is
 * told TableClosing{CLOSING_STORE_UNREACHABLE}; actions are refused NO_ROUND (the seat is not
 * gone: the gateway moves the player) and joins DRAINING. When Redis answers again and the lease is confirmed under the same epoch, the
 * server takes new players again; no chip was created or lost.
 */
START_TEST(test_cut_off_from_redis_stops_every_table_before_the_lease_can_lapse)
{
    env_t e;
    ck_assert_int_eq(testenv_start(&e, NULL), 0);
    cur_redis = e.redis;
    enum { TTL = 3000 };
    char *args[] = {"--lease-ttl-ms", "3000", NULL};
    char *env[] = {"CROUPIER_TEST_ROUND_MS=300", "CROUPIER_TEST_GAP_MS=0", NULL};
    ck_assert_int_eq(testenv_start_game(&e, &e.game, "test", 10, args, env), 0);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    join_ok(c, 81, 8101);
    join_ok(c, 82, 8102);
    ck_assert(a_round_ends(c, 5000));

    long long t0 = ts_now_ms();
    ts_redis_pause(e.redis);
    long long closed_at[2] = {0, 0};
    int voided = 0, wrong_reason = 0;
    while ((closed_at[0] == 0 || closed_at[1] == 0) && ts_now_ms() < t0 + 2 * TTL) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 50);
        if (f == NULL)
            continue;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH) {
            Croupier__ServerMessage *m = f->push;
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING &&
                m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_STORE_UNREACHABLE &&
                f->has_player_id && (f->player_id == 8101 || f->player_id == 8102))
                closed_at[f->player_id - 8101] = ts_now_ms();
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END &&
                m->round_end->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED) {
                voided++;
                wrong_reason +=
                    m->round_end->void_reason != CROUPIER__VOID_REASON__VOID_STORE_UNREACHABLE;
            }
        }
        frame_free_rpc(f);
    }
    ck_assert_msg(closed_at[0] != 0 && closed_at[1] != 0,
                  "the players were not told TableClosing{CLOSING_STORE_UNREACHABLE} (%s)",
                  ts_proc_log_path(e.game.proc));
    /* The last confirmed renew was sent before t0, so the key cannot lapse before t0 + TTL. */
    for (int i = 0; i < 2; i++)
        ck_assert_msg(closed_at[i] - t0 < TTL, "player %d told %lld ms after Redis went silent", i,
                      closed_at[i] - t0);
    fprintf(stderr, "# tables stopped %lld and %lld ms after Redis went silent (TTL %d ms)\n",
            closed_at[0] - t0, closed_at[1] - t0, TTL);
    ck_assert_int_eq(wrong_reason, 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"self_fenced\""));
    /* Nothing is accepted while fenced. */
    ck_assert_int_eq(rpcc_action(c, 83, 8101, 0), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, 83, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__NO_ROUND);
    frame_free_rpc(r);
    ck_assert_int_eq(rpcc_join(c, 84, 8103, "test", 10, 0), 0);
    r = rpcc_wait_reply(c, 84, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__DRAINING);
    frame_free_rpc(r);
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/readyz", 2000, NULL), 503);
    ck_assert(ts_proc_alive(e.game.proc));

    /* Redis back: the same epoch (nobody took the slot), new players play. */
    ts_redis_resume(e.redis);
    ck_assert_int_eq(ts_http_wait_status("127.0.0.1", e.game.health, "/readyz", 200, 10000), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"self_fence_lifted\""));
    join_ok(c, 85, 8103);
    join_ok(c, 86, 8104);
    ck_assert_msg(a_round_ends(c, 5000), "no round after the fence was lifted");
    rpcc_close(c);
    testenv_stop_server(&e.game);
    /* Every chip is in a wallet again: the test engine moves play money between wallets only. */
    long long sum = 0;
    for (int p = 8101; p <= 8104; p++) {
        char *v = ts_redis_cmd(e.redis, "GET {croupier:money}:wallet:%d", p);
        ck_assert_ptr_nonnull(v);
        sum += atoll(v);
        free(v);
    }
    ck_assert_int_eq(sum, 4LL * WALLET_SEED);
    ck_assert_msg(voided <= 2, "%d voided rounds", voided);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_redis_unreachable_at_start_retries_then_becomes_ready)
{
    int redis_port = ts_free_port();
    int rpc = ts_free_port(), health = ts_free_port();
    char *listen = game_arg("127.0.0.1:%d", rpc);
    char *hl = game_arg("127.0.0.1:%d", health);
    char *redis = game_arg("127.0.0.1:%d", redis_port);
    char *argv[] = {(char *)ts_build_path("engine/process/croupier-game"),
                    "--engine",
                    "test",
                    "--listen",
                    listen,
                    "--health-listen",
                    hl,
                    "--redis",
                    redis,
                    "--lease-ttl-ms",
                    "900",
                    NULL};
    ts_proc_t *g = ts_proc_spawn(argv, NULL);
    ts_sleep_ms(1500);
    ck_assert(ts_proc_alive(g));
    ck_assert_int_eq(ts_http_get("127.0.0.1", health, "/readyz", 2000, NULL), 503);
    ck_assert_int_eq(ts_http_get("127.0.0.1", health, "/healthz", 2000, NULL), 200);
    ck_assert(ts_proc_log_has(g, "redis"));
    ts_proc_signal(g, SIGTERM);
    int st;
    ck_assert_int_eq(ts_proc_wait(g, 10000, &st), 0);
    ck_assert(WIFEXITED(st));
    ts_proc_free(g);
    free(listen);
    free(hl);
    free(redis);
}
END_TEST

START_TEST(test_bad_flags_are_refused_clearly)
{
    char *argv[] = {(char *)ts_build_path("engine/process/croupier-game"), "--engine", "chess",
                    NULL};
    ts_proc_t *g = ts_proc_spawn(argv, NULL);
    int st;
    ck_assert_int_eq(ts_proc_wait(g, 5000, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    ck_assert(ts_proc_log_has(g, "'chess' is not one of"));
    ts_proc_free(g);
    char *argv2[] = {(char *)ts_build_path("engine/process/croupier-game"),
                     "--engine",
                     "test",
                     "--redis",
                     "localhost:6379",
                     NULL};
    g = ts_proc_spawn(argv2, NULL);
    ck_assert_int_eq(ts_proc_wait(g, 5000, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    ck_assert(ts_proc_log_has(g, "--redis"));
    ts_proc_free(g);
    char *argv3[] = {(char *)ts_build_path("engine/process/croupier-game"), "--help", NULL};
    g = ts_proc_spawn(argv3, NULL);
    ck_assert_int_eq(ts_proc_wait(g, 5000, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(g, "CROUPIER_DRAIN_MAX_SECONDS"));
    ts_proc_free(g);
}
END_TEST

/* --version prints the build's version (common/version.h), and the registry entry publishes the
 * same one (lease/registry.h "version"), so that a rollout can be followed version by version. */
START_TEST(test_version_printed_and_published_in_the_registry)
{
    ck_assert_str_ne(croupier_version, "");
    char want[160];
    snprintf(want, sizeof want, "croupier-game %s\n", croupier_version);
    char *argv[] = {(char *)ts_build_path("engine/process/croupier-game"), "--version", NULL};
    ts_proc_t *g = ts_proc_spawn(argv, NULL);
    int st;
    ck_assert_int_eq(ts_proc_wait(g, 5000, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    char *out = ts_proc_log(g);
    ck_assert_str_eq(out, want);
    free(out);
    ts_proc_free(g);

    env_t e;
    env_start(&e, 30, NULL, NULL);
    /* /readyz answers 200 only once Redis acknowledged the registry entry's first write
     * (registry_on_first_write): env_start returned on that 200, so the entry is there now. */
    char *id = ts_redis_cmd(e.redis, "SRANDMEMBER {croupier:registry}:members");
    ck_assert_ptr_nonnull(id);
    ck_assert_str_ne(id, "(nil)");
    char *entry = ts_redis_cmd(e.redis, "GET {croupier:registry}:server:%s", id);
    ck_assert_ptr_nonnull(entry);
    snprintf(want, sizeof want, "\"version\":\"%s\"", croupier_version);
    ck_assert_msg(strstr(entry, want) != NULL, "entry of %s lacks %s: %s", id, want, entry);
    free(entry);
    free(id);
    testenv_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("game_lifecycle");
    TCase *tc = tcase_create("drain");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_drain_is_idempotent_and_elapsed_stays_zero_before);
    tcase_add_test(tc, test_bot_only_desks_never_hold_a_drain);
    tcase_add_test(tc, test_resident_table_drain_finishes_round_and_starts_no_next);
    tcase_add_test(tc, test_bound_passes_round_voided_exit_forced);
    tcase_add_test(tc, test_second_sigterm_skips_the_wait);
    tcase_add_test(tc, test_drain_from_a_peer_not_allowed_is_403);
    suite_add_tcase(s, tc);
    tc = tcase_create("rpc");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rpc_deadline_idempotency_and_routing_errors);
    tcase_add_test(tc, test_rounds_settle_exactly_once_through_redis);
    tcase_add_test(tc, test_late_player_gone_from_old_gateway_keeps_pushes_on_new_one);
    tcase_add_test(tc, test_pushes_and_desk_closing_follow_a_reconnected_gateway);
    suite_add_tcase(s, tc);
    tc = tcase_create("startup");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_redis_unreachable_at_start_retries_then_becomes_ready);
    tcase_add_test(tc, test_evicting_redis_is_refused_at_start);
    tcase_add_test(tc, test_eviction_policy_changed_at_runtime_stops_rounds_until_fixed);
    tcase_add_test(tc, test_failed_deck_generator_makes_the_server_unready_and_starts_no_round);
    tcase_add_test(tc, test_cut_off_from_redis_stops_every_table_before_the_lease_can_lapse);
    tcase_add_test(tc, test_bad_flags_are_refused_clearly);
    tcase_add_test(tc, test_version_printed_and_published_in_the_registry);
    suite_add_tcase(s, tc);
    tc = tcase_create("sentinel");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sentinel_quorum_lost_holds_rounds_until_it_is_back);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
