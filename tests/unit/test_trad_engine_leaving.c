/*
 * Players and servers leaving the traditional engine's tables (games/traditional/trad_engine.c,
 * docs/rules/traditional-engine.md), through the real binary (trad_engine_fixture.h): players
 * gone (PlayerGone) are played by trustee at once and an unbid deal is thrown in; a deal every
 * player left is played out at once; a leave mid-deal frees the seat after the deal with its
 * escrow returned. The server's exit: the drain bound voids the deal running (the wallets as
 * before, exit reason=forced), and an escrow answered during the exit's flush is returned.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support.h"
#include "trad_engine_fixture.h"

static void player_gone(rpcc_t *c, uint64_t player)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone g = CROUPIER__PLAYER_GONE__INIT;
    f.request_id = next_rid++;
    f.has_player_id = true;
    f.player_id = player;
    f.has_session_id = true;
    f.session_id = player;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &g;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

/*
 * Disconnected players (PlayerGone) are played by trustee at once, not after the 30 s turn
 * timer: trustee declines every bid, so the deal is thrown in (completed, nothing paid) and
 * the next one starts.
 */
START_TEST(test_ddz_gone_players_get_trustee_and_an_unbid_deal_is_thrown_in)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=30000", "CROUPIER_TRAD_BOT_MS=10",
                   "CROUPIER_TRAD_TRUSTEE_MS=10",   "CROUPIER_TRAD_BOT_FILL_MS=-1",
                   "CROUPIER_TRAD_GAP_MS=50",       NULL};
    env_start(&e, 30, "doudizhu", env);
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7301 + i);
        wallet_set(&e, name, 1000);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(join(c, 7301 + (uint64_t)i, "doudizhu", 1, NULL),
                         CROUPIER__ERROR_CODE__OK);
    view_t v;
    wait_in_round(c, 7301, &v);
    ck_assert_int_eq(v.phase, CROUPIER__SHEDDING_PHASE__SHEDDING_BIDDING);
    for (int i = 0; i < 3; i++)
        player_gone(c, 7301 + (uint64_t)i);
    seen_t seen = {0};
    long long t0 = ts_now_ms();
    while (seen.completed < 2 && ts_now_ms() - t0 < 5000)
        collect(c, &seen, 7301, 100);
    ck_assert_int_ge(seen.completed, 2);
    ck_assert_int_ge(seen.timed_out_plays, 3);
    ck_assert_int_eq(seen.delta[0], 0);
    ck_assert_int_eq(seen.delta[1], 0);
    ck_assert_int_eq(seen.delta[2], 0);
    ck_assert_int_eq(seen.rake, 0);
    /* Thrown-in deals move no money: every wallet is whole once the escrows are back. */
    char *b = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.rig.game.health, "/drain", 5000, &b), 200);
    free(b);
    int st;
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7301 + i);
        ck_assert_int_eq(wallet(&e, name), 1000);
    }
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * Every player of a Guandan deal leaves during it (a client fleet stopping): nobody will act
 * again, so trustee plays the rest at once (TK_TRUSTEE_NOBODY_MS) instead of one move per
 * trustee delay (5 s here: the deal would take many minutes); the deal completes, every seat is
 * cashed out and the wallets add up.
 */
START_TEST(test_guandan_everyone_leaving_mid_deal_is_played_out_at_once)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=30000", "CROUPIER_TRAD_TRUSTEE_MS=5000",
                   "CROUPIER_TRAD_BOT_FILL_MS=-1", "CROUPIER_TRAD_GAP_MS=50", NULL};
    env_start(&e, 30, "guandan", env);
    char name[16];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%d", 7601 + i);
        wallet_set(&e, name, 1000);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(join(c, 7601 + (uint64_t)i, "guandan", 1, NULL), CROUPIER__ERROR_CODE__OK);
    view_t v;
    wait_in_round(c, 7601, &v);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(rpcc_leave(c, next_rid, 7601 + (uint64_t)i), 0);
        Croupier__RpcFrame *r = rpcc_wait_reply(c, next_rid++, 5000);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
        frame_free_rpc(r);
    }
    seen_t seen = {0};
    long long t0 = ts_now_ms();
    while (seen.completed < 1 && ts_now_ms() - t0 < 10000)
        collect(c, &seen, 7601, 100);
    ck_assert_msg(seen.completed == 1, "the deal of four leaving players did not end in 10 s");
    ck_assert_int_gt(seen.timed_out_plays, 8);
    long long end = ts_now_ms() + 5000;
    long long sum = 0;
    while (ts_now_ms() < end) {
        sum = 0;
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof name, "%d", 7601 + i);
            sum += wallet(&e, name);
        }
        if (sum == 4000 - seen.rake)
            break;
        ts_sleep_ms(20);
    }
    ck_assert_int_eq(sum, 4000 - seen.rake);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%d", 7601 + i);
        ck_assert_int_eq(wallet(&e, name), 1000 + seen.delta[i]);
    }
    ck_assert_int_eq(human_desks(&e), 0);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * Leaving: mid-deal the seat is kept and played by trustee until the deal ends, then freed
 * with its escrow returned; between deals a leave frees the seat at once. With a seat empty
 * (and no bot fill) no deal starts.
 */
START_TEST(test_ddz_leave_mid_deal_frees_the_seat_after_the_deal_and_returns_the_escrow)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=30000", "CROUPIER_TRAD_BOT_MS=5",
                   "CROUPIER_TRAD_TRUSTEE_MS=5",    "CROUPIER_TRAD_BOT_FILL_MS=-1",
                   "CROUPIER_TRAD_GAP_MS=50",       NULL};
    env_start(&e, 30, "doudizhu", env);
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7501 + i);
        wallet_set(&e, name, 1000);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(join(c, 7501 + (uint64_t)i, "doudizhu", 1, NULL),
                         CROUPIER__ERROR_CODE__OK);
    view_t v;
    wait_in_round(c, 7503, &v);
    ck_assert_int_eq(wallet(&e, "7503"), 1000 - 96);
    ck_assert_int_eq(rpcc_leave(c, next_rid, 7503), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, next_rid++, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    resume(c, 7503, &v); /* still seated while the deal runs */
    ck_assert(v.in_round);
    player_gone(c, 7501);
    player_gone(c, 7502);
    seen_t seen = {0};
    long long end = ts_now_ms() + 5000;
    while (seen.completed < 1 && ts_now_ms() < end)
        collect(c, &seen, 7501, 100);
    ck_assert_int_eq(seen.completed, 1);
    ts_sleep_ms(200);
    ck_assert_int_eq(rpcc_resume(c, next_rid, 7503), 0);
    r = rpcc_wait_reply(c, next_rid++, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_rpc(r);
    ck_assert_int_eq(wallet(&e, "7503"), 1000 + seen.delta[2]);
    /* Two seated, one empty, no fill: no deal. */
    ck_assert_int_eq(human_desks(&e), 0);
    resume(c, 7501, &v);
    ck_assert(!v.in_round);
    /* A leave between deals frees the seat and the escrow at once. */
    ck_assert_int_eq(rpcc_leave(c, next_rid, 7501), 0);
    r = rpcc_wait_reply(c, next_rid++, 5000);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    end = ts_now_ms() + 3000;
    while (wallet(&e, "7501") != 1000 + seen.delta[0] && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(wallet(&e, "7501"), 1000 + seen.delta[0]);
    /* A new player takes a free seat at the same table and a deal starts. */
    wallet_set(&e, "7504", 1000);
    ck_assert_int_eq(join(c, 7504, "doudizhu", 1, NULL), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(join(c, 7501, "doudizhu", 1, NULL), CROUPIER__ERROR_CODE__OK);
    wait_in_round(c, 7504, &v);
    /* SIGTERM with that deal running; the players are gone, so trustee finishes it quickly and
     * the server exits drained. */
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    player_gone(c, 7501);
    player_gone(c, 7502);
    player_gone(c, 7504);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * The drain bound passes with a deal running (long turn timer): the deal is voided, the players
 * are told why, the escrows go back (wallets exactly as before), and the exit is forced.
 */
START_TEST(test_ddz_drain_bound_mid_deal_voids_it_and_exit_is_forced)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=60000", "CROUPIER_TRAD_BOT_FILL_MS=-1", NULL};
    env_start(&e, 1, "doudizhu", env);
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7201 + i);
        wallet_set(&e, name, 500);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(join(c, 7201 + (uint64_t)i, "doudizhu", 2, NULL),
                         CROUPIER__ERROR_CODE__OK);
    view_t v;
    wait_in_round(c, 7201, &v);
    ck_assert_int_eq(human_desks(&e), 1);
    /* Escrows are out of the wallets while the deal runs: 2 x 96. */
    ck_assert_int_eq(wallet(&e, "7201"), 500 - 192);
    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    seen_t seen = {0};
    long long end = ts_now_ms() + 6000;
    while (seen.round_ends == 0 && ts_now_ms() < end)
        collect(c, &seen, 7201, 200);
    ck_assert_int_eq(seen.voided, 1);
    ck_assert_int_eq(seen.void_reason, CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert_msg(ts_now_ms() - t0 < 8000, "forced exit took %lld ms", ts_now_ms() - t0);
    ck_assert(WIFEXITED(st));
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=forced"));
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7201 + i);
        ck_assert_int_eq(wallet(&e, name), 500);
    }
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * A buy-in still on its way when the server is told to leave: Redis pauses its writes with the
 * join's escrow in flight, SIGTERM arrives (no human desk, so the exit goes straight to the
 * flush), and only then does Redis apply it. The escrow lands after the table closed, so the
 * table sends it back -- a cash-out queued during the exit's flush, which must still reach
 * Redis. (On the table kit the join first reads the wallet, so Redis pauses writes only
 * (CLIENT PAUSE WRITE, the buy-in script blocks) instead of stopping: a stopped Redis would hold
 * the join before its buy-in, and the server would exit without one in flight.)
 */
START_TEST(test_ddz_escrow_answered_during_the_exit_flush_is_returned)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_BOT_FILL_MS=-1", NULL};
    env_start(&e, 30, "doudizhu", env);
    wallet_set(&e, "7601", 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    free(ts_redis_cmd(e.rig.redis, "CLIENT PAUSE 1000 WRITE"));
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_join(c, rid, 7601, "doudizhu", 1, 0), 0);
    ts_sleep_ms(300);
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 8000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__DRAINING);
    frame_free_rpc(r);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 15000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    ck_assert_msg(!ts_proc_log_has(e.rig.game.proc, "flush_incomplete"), "log: %s",
                  ts_proc_log_path(e.rig.game.proc));
    ck_assert_int_eq(wallet(&e, "7601"), 1000);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trad_engine_leaving");
    TCase *tc = tcase_create("leave");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ddz_gone_players_get_trustee_and_an_unbid_deal_is_thrown_in);
    tcase_add_test(tc, test_guandan_everyone_leaving_mid_deal_is_played_out_at_once);
    tcase_add_test(tc,
                   test_ddz_leave_mid_deal_frees_the_seat_after_the_deal_and_returns_the_escrow);
    suite_add_tcase(s, tc);
    tc = tcase_create("drain_bound");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ddz_drain_bound_mid_deal_voids_it_and_exit_is_forced);
    tcase_add_test(tc, test_ddz_escrow_answered_during_the_exit_flush_is_returned);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
