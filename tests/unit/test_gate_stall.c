/*
 * Integration tests of croupier-gate after its own loop stood still (docs/gateway.md "When a
 * gateway freezes"): a real gateway on loopback is frozen with SIGSTOP and resumed. What waited
 * in a client's socket through a stall longer than the gateway's bound (5 s) is stale -- its
 * client has likely resumed elsewhere -- and the connection is closed without acting on it; a
 * quiet connection stays; a short stall changes nothing.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"

#define SECRET "gate-stall-test-secret-0123456789"

typedef struct {
    testenv_t rig;
    token_secret_t secret;
    testenv_server_t gate;
} env_t;

/* idle_ms: --idle-timeout-ms (0: the default). */
static void env_start(env_t *e, int idle_ms)
{
    memset(e, 0, sizeof *e);
    ck_assert_int_eq(testenv_start(&e->rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&e->secret, SECRET, strlen(SECRET)), 0);
    char idle[16];
    snprintf(idle, sizeof idle, "%d", idle_ms);
    char *args[] = {"--drain-window-ms", "100", "--close-timeout-ms", "2000",
                    idle_ms > 0 ? "--idle-timeout-ms" : NULL, idle, NULL};
    ck_assert_int_eq(testenv_start_gate(&e->rig, &e->gate, "stall-gate", args), 0);
}

static void env_stop(env_t *e)
{
    ts_proc_signal(e->gate.proc, SIGCONT); /* never leave it frozen */
    testenv_stop_server(&e->gate);
    testenv_stop(&e->rig);
}

/* A logged-in client of player. */
static gatec_t *player(env_t *e, uint64_t player)
{
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&e->secret, player, time(NULL) + 600, tok, sizeof tok), 0);
    gatec_t *c = gatec_connect("127.0.0.1", e->gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(m);
    return c;
}

static int send_ping(gatec_t *c, uint64_t rid)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    p.nonce = rid;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    return gatec_send(c, &m);
}

/* The idle timeout (5 s) is shorter than the stall (6.5 s): the quiet connection's idle clock
 * stood still with the loop, so it is not taken for idle at the thaw. */
START_TEST(test_gate_stall_closes_unread_the_connections_whose_bytes_waited)
{
    env_t e;
    env_start(&e, 5000);
    gatec_t *busy = player(&e, 101), *quiet = player(&e, 102);
    ck_assert_int_eq(ts_proc_signal(e.gate.proc, SIGSTOP), 0);
    /* The frozen gateway's kernel takes the bytes; nothing answers them. */
    ck_assert_int_eq(send_ping(busy, 10), 0);
    usleep(6500 * 1000);
    ck_assert_int_eq(ts_proc_signal(e.gate.proc, SIGCONT), 0);
    /* The Ping that waited through the stall is never answered: the connection is closed. */
    Croupier__ServerMessage *m = gatec_wait_reply(busy, 10, 3000);
    ck_assert_msg(m == NULL, "the stale Ping was answered");
    ck_assert(gatec_eof(busy) || gatec_read_error(busy) != 0);
    /* The quiet connection had nothing waiting: it is served as before (not closed idle for
     * the time the gateway stood still). */
    m = gatec_ping(quiet, 11, 11, 3000);
    ck_assert_msg(m != NULL, "the quiet connection was closed after the stall");
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    ck_assert_int_eq(ts_proc_wait_log(e.gate.proc, "\"gate_stalled\"", 3000), 0);
    ck_assert(ts_proc_log_has(e.gate.proc, "\"connections_closed\":1"));
    gatec_close(busy);
    gatec_close(quiet);
    env_stop(&e);
}
END_TEST

START_TEST(test_gate_short_stall_answers_what_waited)
{
    env_t e;
    env_start(&e, 0);
    gatec_t *c = player(&e, 103);
    ck_assert_int_eq(ts_proc_signal(e.gate.proc, SIGSTOP), 0);
    ck_assert_int_eq(send_ping(c, 20), 0);
    usleep(2000 * 1000);
    ck_assert_int_eq(ts_proc_signal(e.gate.proc, SIGCONT), 0);
    Croupier__ServerMessage *m = gatec_wait_reply(c, 20, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    ck_assert(!ts_proc_log_has(e.gate.proc, "\"gate_stalled\""));
    gatec_close(c);
    env_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_stall");
    TCase *tc = tcase_create("stall");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gate_stall_closes_unread_the_connections_whose_bytes_waited);
    tcase_add_test(tc, test_gate_short_stall_answers_what_waited);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
