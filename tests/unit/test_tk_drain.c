/*
 * The table kit's drain and whole-table moves (engine/tk.h "moves"), on Zha Jin Hua through the
 * real binary (tk_fixture.h): a drained table nobody adopts cashes out before its players are
 * told to move; one that is adopted moves whole to exactly one of two racing adopters; the
 * handoff's faults (the old server or the adopter SIGKILLed, Redis paused mid-handoff) end
 * adopted once or withdrawn, never both, with every chip home; the drain bound voids the round
 * and refunds it.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support.h"
#include "tk_fixture.h"

START_TEST(test_tk_drain_cashes_out_before_the_move_is_announced)
{
    env_t e;
    env_start(&e, 30, "10000");
    /* Another ready server that could adopt the table (so the table offers itself), which this
     * test, playing the gateway, never asks to. */
    testenv_server_t b;
    env_start_other(&e, &b);
    const uint64_t players[] = {61, 62};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 5000, &body), 200);
    free(body);
    /* The hand in progress finishes; no other starts; the table offers itself for a whole-table
     * move, nobody adopts it, so after --zhajinhua-move-wait-ms it withdraws the offer and
     * closes as before: cash-outs first, then the players are re-seated alone. */
    ck_assert_int_eq(fold_turn(c, &m, 10), CROUPIER__ERROR_CODE__OK);
    ck_assert(pump_until(c, &m, desk_closed, 5000));
    ck_assert_int_eq(m.completed, 1);
    ck_assert_int_eq(m.offers, 2); /* one notice per player */
    char *st = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", m.offer_id);
    ck_assert_str_eq(st, "withdrawn");
    free(st);
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    /* When the gateways were told to move the players, every chip was back in the wallets. */
    ck_assert_int_eq(m.wallets_at_closing + rake, 2000);
    int nz;
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    ck_assert_int_ge(m.table_closing, 2);
    testenv_stop_server(&b);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* A Snapshot answering an Adopt: the player's old seat, both players, chips that add up. */
static int64_t check_adopted(Croupier__RpcFrame *r, int seat, const uint64_t *players)
{
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert_int_eq((int)sn->your_seat, seat);
    ck_assert_str_eq(sn->game, "zhajinhua");
    ck_assert_uint_eq(sn->n_seats, 2);
    int64_t chips = 0;
    for (size_t i = 0; i < sn->n_seats; i++) {
        ck_assert(sn->seats[i]->player_id == players[0] || sn->seats[i]->player_id == players[1]);
        chips += sn->seats[i]->chips;
    }
    ck_assert(sn->event_seq > 0); /* the table's numbering goes on */
    return chips;
}

/* Whole-table moves (tk.h "moves"): a draining server's table moves to the server that adopts
 * its offer -- same seats, players and stacks, exactly once even when two servers race for it
 * (the loser names the winner), and the new table deals the next round. Every chip is counted
 * before and after. */
/* Seats two players on e->game, drains it after one hand and waits for its whole-table offer. */
static rpcc_t *drain_to_offer(env_t *e, model_t *m, const uint64_t *players)
{
    rpcc_t *c = seat_players(e, m, players, 2);
    ck_assert(pump_until(c, m, has_turn, 5000));
    ck_assert_int_eq(ts_http_get("127.0.0.1", e->game.health, "/drain", 5000, NULL), 200);
    ck_assert_int_eq(fold_turn(c, m, 10), CROUPIER__ERROR_CODE__OK);
    long long end = ts_now_ms() + 5000;
    while (m->offers == 0 && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 500);
        if (f != NULL) {
            model_apply(m, f);
            frame_free_rpc(f);
        }
    }
    ck_assert_msg(m->offers > 0, "no whole-table offer");
    return c;
}

START_TEST(test_tk_drain_moves_the_table_whole_to_one_adopter)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b, cs;
    env_start_other(&e, &b);
    env_start_other(&e, &cs);
    const uint64_t players[] = {81, 82};
    model_t m;
    rpcc_t *c = drain_to_offer(&e, &m, players);
    ck_assert(round_over(&m));
    int seat_of[2] = {-1, -1};
    for (int i = 0; i < NP; i++)
        for (int k = 0; k < 2; k++)
            if (m.seat_player[i] == players[k])
                seat_of[k] = i;
    ck_assert_int_eq(m.table_closing, 0); /* a whole-table move tells no one to leave */
    /* Two servers race for the table, one player each. */
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000),
           *cc = rpcc_connect("127.0.0.1", cs.port, 5000);
    ck_assert(cb != NULL && cc != NULL);
    send_adopt(cb, 100, players[0], m.offer_id);
    send_adopt(cc, 100, players[1], m.offer_id);
    Croupier__RpcFrame *rb = rpcc_wait_reply(cb, 100, 5000), *rc = rpcc_wait_reply(cc, 100, 5000);
    ck_assert(rb != NULL && rc != NULL);
    bool b_won = rb->reply->code == CROUPIER__ERROR_CODE__OK;
    Croupier__RpcFrame *won = b_won ? rb : rc, *lost = b_won ? rc : rb;
    rpcc_t *winner = b_won ? cb : cc;
    int k_won = b_won ? 0 : 1, k_lost = 1 - k_won;
    int64_t chips = check_adopted(won, seat_of[k_won], players);
    ck_assert_int_eq(lost->reply->code, CROUPIER__ERROR_CODE__UNAVAILABLE);
    ck_assert_ptr_nonnull(lost->reply->adopted_by);
    ck_assert(lost->reply->adopted_by[0] != '\0');
    frame_free_rpc(rb);
    frame_free_rpc(rc);
    /* The loser's player goes to the winner (as its gateway does): the same table. */
    send_adopt(winner, 101, players[k_lost], m.offer_id);
    Croupier__RpcFrame *r2 = rpcc_wait_reply(winner, 101, 5000);
    ck_assert_ptr_nonnull(r2);
    ck_assert_int_eq(check_adopted(r2, seat_of[k_lost], players), chips);
    frame_free_rpc(r2);
    char *st = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", m.offer_id);
    ck_assert_str_eq(st, "adopted");
    free(st);
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    int nz;
    ck_assert_int_eq(wallets(&m) + seat_accounts(&e, &nz) + rake, 2000);
    ck_assert_int_eq(wallets(&m) + chips, 2000 - rake);
    /* The old server lets go of the table and exits drained, holding nothing. */
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    int status;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &status), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"tk_table_moved\""));
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=drained"));
    /* The moved table deals on: a turn arrives on the winner's link. */
    model_t m2;
    model_init(&m2, &e, players, 2);
    for (int i = 0; i < NP; i++)
        m2.seat_player[i] = m.seat_player[i];
    ck_assert(pump_until(winner, &m2, has_turn, 5000));
    rpcc_close(c);
    rpcc_close(cb);
    rpcc_close(cc);
    testenv_stop_server(&b);
    testenv_stop_server(&cs);
    testenv_stop(&e);
}
END_TEST

/* Every chip is home: wallets + rake = what the players brought, no seat account holds any. */
static bool all_home(env_t *e, model_t *m)
{
    int nz;
    long long acc = seat_accounts(e, &nz);
    long long rake = redis_int(e, "GET %s", "{croupier:money}:rake:zhajinhua");
    return acc == 0 && wallets(m) + rake == 2000;
}

static bool wait_all_home(env_t *e, model_t *m, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (!all_home(e, m)) {
        if (ts_now_ms() >= end)
            return false;
        ts_sleep_ms(50);
    }
    return true;
}

/* After the servers of a test stopped: every chip home, if need be by the recovery of a fresh
 * server's sweeper (an epoch whose server was killed, or stopped before its table was out). */
static bool home_at_last(env_t *e, model_t *m)
{
    if (all_home(e, m))
        return true;
    testenv_server_t s;
    env_start_other(e, &s);
    bool ok = wait_all_home(e, m, 15000);
    testenv_stop_server(&s);
    return ok;
}

/* Handoff fault: the old server is SIGKILLed right after writing its offer. The table ends
 * adopted by one server (its chips there, returned when that one exits) or, if the dead
 * server's recovery came first, voided with every chip returned -- never both, never lost. */
START_TEST(test_tk_handoff_old_server_killed_after_the_offer)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b;
    env_start_other(&e, &b);
    const uint64_t players[] = {91, 92};
    model_t m;
    rpcc_t *c = drain_to_offer(&e, &m, players);
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGKILL), 0);
    int st;
    ts_proc_wait(e.game.proc, 5000, &st);
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    send_adopt(cb, 200, players[0], m.offer_id);
    Croupier__RpcFrame *r = rpcc_wait_reply(cb, 200, 8000);
    ck_assert_ptr_nonnull(r);
    char *status = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", m.offer_id);
    if (r->reply->code == CROUPIER__ERROR_CODE__OK) {
        ck_assert_str_eq(status, "adopted");
    } else {
        ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__TABLE_CLOSED);
        ck_assert_str_eq(status, "void");
    }
    free(status);
    frame_free_rpc(r);
    /* Wherever the chips are, B's graceful exit (or its sweeper, for the dead epoch) brings them
     * home. */
    rpcc_close(cb);
    testenv_stop_server(&b);
    ck_assert_msg(home_at_last(&e, &m), "chips lost after the old server's SIGKILL");
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* Handoff fault: the adopter is SIGKILLed right after adopting (before the old desk read the
 * adoption or a round was dealt there): the old desk lets go, and the adopter's recovery (a
 * third server's sweeper) returns every chip. */
START_TEST(test_tk_handoff_adopter_killed_after_adopting)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b, d;
    env_start_other(&e, &b);
    const uint64_t players[] = {93, 94};
    model_t m;
    rpcc_t *c = drain_to_offer(&e, &m, players);
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    send_adopt(cb, 300, players[0], m.offer_id);
    Croupier__RpcFrame *r = rpcc_wait_reply(cb, 300, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    ck_assert_int_eq(ts_proc_signal(b.proc, SIGKILL), 0);
    int st;
    ts_proc_wait(b.proc, 5000, &st);
    /* The old server saw the adoption and exits drained, holding nothing. */
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"tk_table_moved\""));
    /* A third server's sweeper recovers the dead adopter's epoch (lease TTL 900 ms + grace). */
    env_start_other(&e, &d);
    ck_assert_msg(wait_all_home(&e, &m, 15000), "the dead adopter's chips never came home");
    rpcc_close(cb);
    rpcc_close(c);
    testenv_stop_server(&b);
    testenv_stop_server(&d);
    testenv_stop(&e);
}
END_TEST

/* Handoff fault: Redis hangs (SIGSTOP, 2 s) right after the offer. Nothing can be adopted
 * meanwhile (a retriable UNAVAILABLE, nothing moved). Once Redis is back the table is either
 * adopted, exactly once, and the old desk lets go -- or, the old server's move wait (300 ms)
 * having passed, withdrawn and closed there as before (its players told to re-seat, an adoption
 * refused TABLE_CLOSED): one or the other, never both, and every chip comes home. */
START_TEST(test_tk_handoff_survives_redis_paused_mid_handoff)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b;
    env_start_other(&e, &b);
    const uint64_t players[] = {95, 96};
    model_t m;
    rpcc_t *c = drain_to_offer(&e, &m, players);
    ts_redis_pause(e.redis);
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    send_adopt(cb, 400, players[0], m.offer_id);
    Croupier__RpcFrame *r = rpcc_wait_reply(cb, 400, 8000);
    ts_redis_resume(e.redis);
    ck_assert_ptr_nonnull(r);
    int first = r->reply->code;
    frame_free_rpc(r);
    /* Paused longer than the TTL, both servers fence themselves meanwhile (docs/queues.md "A
     * server cut off from Redis"): the adopter answers DRAINING until Redis is back. */
    ck_assert(first == CROUPIER__ERROR_CODE__UNAVAILABLE || first == CROUPIER__ERROR_CODE__OK ||
              first == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED ||
              first == CROUPIER__ERROR_CODE__DRAINING);
    int code = first;
    for (uint64_t rid = 401; code != CROUPIER__ERROR_CODE__OK &&
                             code != CROUPIER__ERROR_CODE__TABLE_CLOSED && rid < 420;
         rid++) {
        ts_sleep_ms(200);
        send_adopt(cb, rid, players[0], m.offer_id);
        r = rpcc_wait_reply(cb, rid, 8000);
        ck_assert_ptr_nonnull(r);
        code = r->reply->code;
        frame_free_rpc(r);
    }
    char *status = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", m.offer_id);
    if (code == CROUPIER__ERROR_CODE__OK)
        ck_assert_str_eq(status, "adopted");
    else
        ck_assert_msg(code == CROUPIER__ERROR_CODE__TABLE_CLOSED &&
                          strcmp(status, "withdrawn") == 0,
                      "adopt answered %d, offer %s", code, status);
    free(status);
    int st;
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 15000, &st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, code == CROUPIER__ERROR_CODE__OK
                                               ? "\"event\":\"tk_table_moved\""
                                               : "\"event\":\"tk_table_move_fallback\""));
    rpcc_close(cb);
    testenv_stop_server(&b); /* its exit cashes an adopted table out */
    ck_assert_msg(home_at_last(&e, &m), "chips lost around the Redis pause");
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_drain_bound_voids_the_round_and_refunds)
{
    env_t e;
    env_start(&e, 1, "60000");
    const uint64_t players[] = {71, 72};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    /* The antes are in the pot; nobody acts; the drain bound (1 s) passes. */
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    ck_assert(pump_until(c, &m, round_over, 8000));
    ck_assert_int_eq(m.voided, 1);
    ck_assert_int_eq(m.completed, 0);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=forced"));
    /* Nothing moved in the voided hand and both stacks were cashed out. */
    ck_assert_int_eq(wallet(&e, 71), 1000);
    ck_assert_int_eq(wallet(&e, 72), 1000);
    int nz;
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    char *h = ts_redis_cmd(e.redis, "XREVRANGE {croupier:history:zhajinhua}:stream + - COUNT 1");
    ck_assert_ptr_nonnull(strstr(h, "\"outcome\":\"voided\""));
    free(h);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tk_drain");
    TCase *tc = tcase_create("drain");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tk_drain_cashes_out_before_the_move_is_announced);
    tcase_add_test(tc, test_tk_drain_moves_the_table_whole_to_one_adopter);
    tcase_add_test(tc, test_tk_handoff_old_server_killed_after_the_offer);
    tcase_add_test(tc, test_tk_handoff_adopter_killed_after_adopting);
    tcase_add_test(tc, test_tk_handoff_survives_redis_paused_mid_handoff);
    tcase_add_test(tc, test_tk_drain_bound_voids_the_round_and_refunds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
