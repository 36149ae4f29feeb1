/*
 * The gateway against real processes (issue 9, docs/architecture.md §7): a real redis-server,
 * real croupier-game --engine test servers and real croupier-gate gateways on loopback, driven
 * through the client protocol by gatec (tests/support/gatec.h).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate_seat.h"
#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"
#include "version.h"

#define SECRET "gate-test-secret-0123456789"
#define ENGINE_T CROUPIER__ENGINE__ENGINE_TRADITIONAL

/* redis-server with the token secret in a file (tests/support/testenv.h), and the secret itself
 * for minting tokens. Game servers and gateways are started into testenv_server_t values. */
typedef struct {
    testenv_t rig;
    token_secret_t secret;
} env_t;

static void env_start(env_t *e)
{
    memset(e, 0, sizeof *e);
    ck_assert_int_eq(testenv_start(&e->rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&e->secret, SECRET, strlen(SECRET)), 0);
}

/* croupier-game --engine test, --drain-max-seconds 20; round_ms sets CROUPIER_TEST_ROUND_MS. */
static testenv_server_t game_start(env_t *e, int round_ms)
{
    char round[64];
    snprintf(round, sizeof round, "CROUPIER_TEST_ROUND_MS=%d", round_ms);
    char *env[] = {round, "CROUPIER_TEST_GAP_MS=20", NULL};
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_game(&e->rig, &g, "test", 20, NULL, env), 0);
    return g;
}

/* croupier-gate with short drain, close, goaway and link-ping timers; extra: NULL-terminated
 * additional flags. */
static testenv_server_t gate_start(env_t *e, const char *id, char *const extra[])
{
    char *args[40] = {"--drain-window-ms",  "200", "--close-timeout-ms", "2000",
                      "--goaway-spread-ms", "300", "--link-ping-ms",     "200"};
    int n = 8;
    for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
        ck_assert_int_lt(n, 39);
        args[n++] = extra[i];
    }
    args[n] = NULL;
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_gate(&e->rig, &g, id, args), 0);
    return g;
}

static void mint(env_t *e, uint64_t player, int64_t ttl, char *out)
{
    ck_assert_int_gt(token_mint(&e->secret, player, time(NULL) + ttl, out, TOKEN_MAX_LEN + 1), 0);
}

/* Connects to a gateway and logs player in; returns the client. The player's wallet is seeded
 * first (once): the test engine settles every round on the players' wallets, and a round whose
 * settlement is refused (a wallet going negative) ends voided. */
static gatec_t *login(env_t *e, const testenv_server_t *gate, uint64_t player, bool *seated)
{
    free(ts_redis_cmd(e->rig.redis, "SET {croupier:money}:wallet:%llu 1000000 NX",
                      (unsigned long long)player));
    gatec_t *c = gatec_connect("127.0.0.1", gate->port, 2000);
    ck_assert_ptr_nonnull(c);
    char tok[TOKEN_MAX_LEN + 1];
    mint(e, player, 600, tok);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    ck_assert_uint_eq(m->login_result->player_id, player);
    ck_assert(m->login_result->has_chips); /* the wallet's balance, read at login */
    if (seated != NULL)
        *seated = m->login_result->seated;
    frame_free_server(m);
    return c;
}

/* Joins game "test" at stake 10; returns the desk and seat. */
static uint64_t join_ok(gatec_t *c, uint64_t rid, uint32_t *seat)
{
    Croupier__ServerMessage *m = gatec_join(c, rid, ENGINE_T, "test", 10, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(m->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED, "join answered %d (%d)",
                  m->body_case, gatec_code(m));
    uint64_t desk = m->joined->desk_id;
    if (seat != NULL)
        *seat = m->joined->seat;
    frame_free_server(m);
    return desk;
}

static char *seat_of(env_t *e, uint64_t player)
{
    char key[64];
    snprintf(key, sizeof key, "{croupier:seat}:%llu", (unsigned long long)player);
    return ts_redis_cmd(e->rig.redis, "GET %s", key);
}

/* Whether two seat records name the same server: their first words, whole ("test:3" is not
 * "test:34"). */
static bool same_server(const char *a, const char *b)
{
    size_t n = strcspn(a, " ");
    return n == strcspn(b, " ") && strncmp(a, b, n) == 0;
}

/* An action, retried on NO_ROUND until a round runs; returns the Result's event_seq. */
static uint64_t action_in_round(gatec_t *c, uint64_t *rid, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (ts_now_ms() < end) {
        Croupier__ServerMessage *m = gatec_action(c, (*rid)++, 3000);
        ck_assert_ptr_nonnull(m);
        int code = gatec_code(m);
        uint64_t seq = m->event_seq;
        ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_RESULT);
        frame_free_server(m);
        if (code == 0)
            return seq;
        ck_assert_int_eq(code, CROUPIER__ERROR_CODE__NO_ROUND);
        ts_sleep_ms(20);
    }
    ck_abort_msg("no round started");
    return 0;
}

static long metric(const testenv_server_t *gate, const char *series)
{
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", gate->health, "/metrics", 2000, &body), 200);
    char want[256];
    snprintf(want, sizeof want, "\n%s ", series);
    const char *at = strstr(body, want);
    long v = -1;
    if (at != NULL)
        v = strtol(at + strlen(want), NULL, 10);
    free(body);
    return v;
}

/* Copies each server's log to stderr (the test's error log), under a header naming it: what the
 * servers saw, for a failure that does not show when the test runs alone. */
static void logs_to_stderr(const char *const names[], const testenv_server_t *const servers[],
                           int n)
{
    for (int i = 0; i < n; i++) {
        if (servers[i]->proc == NULL)
            continue;
        char *log = ts_proc_log(servers[i]->proc);
        fprintf(stderr, "# ---- log of %s (%s)\n%s# ---- end of %s\n", names[i],
                ts_proc_log_path(servers[i]->proc), log != NULL ? log : "(unreadable)\n", names[i]);
        free(log);
    }
}

/* ---- bad input --------------------------------------------------------------------------- */

START_TEST(test_gate_bad_inputs_get_their_code_and_change_nothing)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 300);
    testenv_server_t gate = gate_start(&e, "g1", NULL);

    /* A seated player whose state must not change. */
    gatec_t *a = login(&e, &gate, 101, NULL);
    uint64_t desk = join_ok(a, 2, NULL);
    gatec_t *a2 = login(&e, &gate, 104, NULL); /* a second player, so rounds run */
    join_ok(a2, 2, NULL);
    char *seat_before = seat_of(&e, 101);
    ck_assert_ptr_nonnull(strstr(seat_before, " test"));

    gatec_t *c = gatec_connect("127.0.0.1", gate.port, 2000);
    /* Requests before login. */
    Croupier__ServerMessage *m = gatec_join(c, 5, ENGINE_T, "test", 10, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__UNAUTHENTICATED);
    frame_free_server(m);
    m = gatec_action(c, 6, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__UNAUTHENTICATED);
    frame_free_server(m);
    /* Expired and forged tokens. */
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&e.secret, 101, time(NULL) - 5, tok, sizeof tok), 0);
    m = gatec_login(c, 7, tok, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__TOKEN_EXPIRED);
    frame_free_server(m);
    token_secret_t other;
    token_secret_set(&other, "not-the-gateway-secret!!", 24);
    ck_assert_int_gt(token_mint(&other, 101, time(NULL) + 60, tok, sizeof tok), 0);
    m = gatec_login(c, 8, tok, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__TOKEN_INVALID);
    frame_free_server(m);
    m = gatec_login(c, 9, "v1.101.99999999999.zz", 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__TOKEN_INVALID);
    frame_free_server(m);
    /* Still not logged in: the forged token took no seat, no session. */
    m = gatec_resume(c, 10, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__UNAUTHENTICATED);
    frame_free_server(m);
    /* Player 102 logs in and acts for a seat it does not hold. */
    mint(&e, 102, 60, tok);
    free(ts_redis_cmd(e.rig.redis, "SET {croupier:money}:wallet:102 999970"));
    m = gatec_login(c, 11, tok, 2000);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    ck_assert(m->login_result->has_chips);
    ck_assert_int_eq(m->login_result->chips, 999970); /* the wallet's, not 0 */
    frame_free_server(m);
    m = gatec_action(c, 12, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_server(m);
    m = gatec_leave(c, 13, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_server(m);
    m = gatec_resume(c, 14, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_server(m);
    m = gatec_login(c, 15, tok, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__ALREADY_LOGGED_IN);
    frame_free_server(m);
    /* A malformed frame: an Error and a graceful close (EOF, never a reset). */
    static const uint8_t junk[] = {0, 0, 0, 3, 0xff, 0xff, 0xff};
    ck_assert_int_eq(gatec_send_raw(c, junk, sizeof junk), 0);
    m = gatec_next_event(c, CROUPIER__SERVER_MESSAGE__BODY_ERROR, 2000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->error->code, CROUPIER__ERROR_CODE__MALFORMED_FRAME);
    ck_assert(!m->has_request_id); /* no request id could be read from it */
    frame_free_server(m);
    ck_assert_int_eq(gatec_wait_eof(c, 3000), 0);
    gatec_close(c);
    char *s102 = seat_of(&e, 102);
    ck_assert_str_eq(s102, "(nil)");
    free(s102);

    /* An over-cap frame: FRAME_TOO_LARGE and a graceful close even with unread bytes. */
    c = gatec_connect("127.0.0.1", gate.port, 2000);
    uint8_t big[4 + 1000] = {0x00, 0x10, 0x00, 0x00};
    memset(big + 4, 0x55, 1000);
    ck_assert_int_eq(gatec_send_raw(c, big, sizeof big), 0);
    m = gatec_next_event(c, CROUPIER__SERVER_MESSAGE__BODY_ERROR, 2000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->error->code, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE);
    frame_free_server(m);
    ck_assert_int_eq(gatec_wait_eof(c, 3000), 0);
    gatec_close(c);

    /* A valid protobuf frame that breaks a rule (join with stake 0). */
    c = login(&e, &gate, 103, NULL);
    {
        /* Packed by protobuf-c directly: the codec would refuse to send it. */
        Croupier__ClientMessage cm = CROUPIER__CLIENT_MESSAGE__INIT;
        Croupier__Join j = CROUPIER__JOIN__INIT;
        cm.request_id = 2;
        j.engine = ENGINE_T;
        j.game = "test";
        j.stake = 0;
        cm.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN;
        cm.join = &j;
        uint8_t buf[256];
        size_t n = croupier__client_message__pack(&cm, buf + 4);
        frame_put_header(buf, (uint32_t)n);
        ck_assert_int_eq(gatec_send_raw(c, buf, n + 4), 0);
    }
    /* The Error names the refused request (docs/protocol.md "Transports", close 1007). */
    m = gatec_wait_reply(c, 2, 2000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_ERROR);
    ck_assert_int_eq(m->error->code, CROUPIER__ERROR_CODE__BAD_REQUEST);
    frame_free_server(m);
    ck_assert_int_eq(gatec_wait_eof(c, 3000), 0);
    gatec_close(c);
    char *s103 = seat_of(&e, 103);
    ck_assert_str_eq(s103, "(nil)");
    free(s103);

    /* Player 101 is untouched: same seat stored, its actions count from 1. */
    char *seat_after = seat_of(&e, 101);
    ck_assert_str_eq(seat_before, seat_after);
    uint64_t rid = 100;
    ck_assert_uint_eq(action_in_round(a, &rid, 3000), 1);
    m = gatec_resume(a, rid++, 2000);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    ck_assert_uint_eq(m->snapshot->desk_id, desk);
    frame_free_server(m);
    ck_assert_int_ge(metric(&gate, "gate_bad_frames_total"), 3);
    ck_assert_int_ge(metric(&gate, "gate_early_rejections_total{reason=\"unauthenticated\"}"), 3);
    free(seat_before);
    free(seat_after);
    gatec_close(a);
    gatec_close(a2);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_rate_limit_refuses_a_flood_and_keeps_the_session)
{
    env_t e;
    env_start(&e);
    char *extra[] = {"--rate-limit", "5", "--rate-burst", "5", NULL};
    testenv_server_t gate = gate_start(&e, "g1", extra);
    gatec_t *c = login(&e, &gate, 7, NULL); /* the login took one token */
    for (int i = 0; i < 10; i++) {
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        Croupier__Ping p = CROUPIER__PING__INIT;
        m.request_id = 100 + (uint64_t)i;
        p.nonce = (uint64_t)i;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
        m.ping = &p;
        ck_assert_int_eq(gatec_send(c, &m), 0);
    }
    int pongs = 0, limited = 0;
    for (int i = 0; i < 10; i++) {
        Croupier__ServerMessage *r = gatec_wait_reply(c, 100 + (uint64_t)i, 2000);
        ck_assert_ptr_nonnull(r);
        if (r->body_case == CROUPIER__SERVER_MESSAGE__BODY_PONG)
            pongs++;
        else if (gatec_code(r) == CROUPIER__ERROR_CODE__RATE_LIMITED)
            limited++;
        frame_free_server(r);
    }
    ck_assert_int_ge(pongs, 4);
    ck_assert_int_le(pongs, 5);
    ck_assert_int_eq(pongs + limited, 10);
    ts_sleep_ms(500);
    Croupier__ServerMessage *r = gatec_ping(c, 200, 9, 2000);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    ck_assert_uint_eq(r->pong->nonce, 9);
    frame_free_server(r);
    gatec_close(c);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_idle_connection_gets_goaway_and_eof)
{
    env_t e;
    env_start(&e);
    char *extra[] = {"--idle-timeout-ms", "300", NULL};
    testenv_server_t gate = gate_start(&e, "g1", extra);
    gatec_t *c = gatec_connect("127.0.0.1", gate.port, 2000);
    Croupier__ServerMessage *m = gatec_next_event(c, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_IDLE);
    frame_free_server(m);
    ck_assert_int_eq(gatec_wait_eof(c, 3000), 0);
    gatec_close(c);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_slow_consumer_is_closed_with_a_reason)
{
    env_t e;
    env_start(&e);
    char *extra[] = {"--output-cap", "4096", "--rate-limit", "1000000", "--rate-burst",
                     "1000000",      NULL};
    testenv_server_t gate = gate_start(&e, "g1", extra);
    gatec_t *c = login(&e, &gate, 9, NULL);
    int small = 4096;
    setsockopt(gatec_fd(c), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    /* Pings in batches, never reading the pongs, until the gateway gives up on us. */
    static uint8_t batch[10000 * 16];
    size_t len = 0;
    for (int i = 0; i < 10000; i++) {
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        Croupier__Ping p = CROUPIER__PING__INIT;
        m.request_id = 1000 + (uint64_t)i;
        p.nonce = (uint64_t)i;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
        m.ping = &p;
        ssize_t n = frame_encode(&m.base, NULL, batch + len, sizeof batch - len, NULL);
        ck_assert_int_gt(n, 0);
        len += (size_t)n;
    }
    long closes = 0;
    for (int k = 0; k < 200 && closes == 0; k++) {
        if (gatec_send_raw(c, batch, len) != 0)
            break;
        closes = metric(&gate, "gate_slow_consumer_closes_total");
    }
    ck_assert_int_eq(metric(&gate, "gate_slow_consumer_closes_total"), 1);
    Croupier__ServerMessage *m = gatec_next_event(c, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 10000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED);
    frame_free_server(m);
    ck_assert_int_eq(gatec_wait_eof(c, 5000), 0);
    gatec_close(c);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- sessions ------------------------------------------------------------------------------ */

START_TEST(test_gate_new_login_takes_the_session_over)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 300);
    testenv_server_t gate = gate_start(&e, "g1", NULL);
    gatec_t *old = login(&e, &gate, 55, NULL);
    uint64_t desk = join_ok(old, 2, NULL);
    bool seated = false;
    gatec_t *neu = login(&e, &gate, 55, &seated);
    ck_assert(seated);
    Croupier__ServerMessage *m =
        gatec_next_event(old, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 2000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_SESSION_REPLACED);
    frame_free_server(m);
    ck_assert_int_eq(gatec_wait_eof(old, 3000), 0);
    gatec_close(old);
    m = gatec_resume(neu, 3, 2000);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    ck_assert_uint_eq(m->snapshot->desk_id, desk);
    frame_free_server(m);
    gatec_close(neu);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_login_on_another_gateway_replaces_the_session)
{
    env_t e;
    env_start(&e);
    testenv_server_t g1 = gate_start(&e, "g1", NULL);
    testenv_server_t g2 = gate_start(&e, "g2", NULL);
    gatec_t *old = login(&e, &g1, 56, NULL);
    gatec_t *other = login(&e, &g1, 57, NULL);
    gatec_t *neu = login(&e, &g2, 56, NULL);
    Croupier__ServerMessage *m =
        gatec_next_event(old, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 2000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_SESSION_REPLACED);
    frame_free_server(m);
    ck_assert_int_eq(gatec_wait_eof(old, 3000), 0);
    /* Only that player's connection: the other stays, and the new session works. */
    m = gatec_ping(other, 5, 1, 2000);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    m = gatec_ping(neu, 5, 2, 2000);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    gatec_close(old);
    gatec_close(other);
    gatec_close(neu);
    testenv_stop_server(&g1);
    testenv_stop_server(&g2);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- routing -------------------------------------------------------------------------------- */

START_TEST(test_gate_join_action_leave_through_the_game_server)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 400);
    testenv_server_t gate = gate_start(&e, "g1", NULL);
    gatec_t *a = login(&e, &gate, 1, NULL);
    gatec_t *b = login(&e, &gate, 2, NULL);
    uint64_t d1 = join_ok(a, 2, NULL);
    uint64_t d2 = join_ok(b, 2, NULL);
    ck_assert_uint_eq(d1, d2);
    uint64_t rid = 10;
    /* A Result's event_seq is the table's number of the Play the action made (one counter per
     * table, engine/tk.h): each new action gets a later one. */
    uint64_t first = action_in_round(a, &rid, 3000);
    ck_assert_uint_gt(first, 0);
    Croupier__ServerMessage *m = gatec_action(a, rid++, 2000);
    if (gatec_code(m) == 0)
        ck_assert_uint_gt(m->event_seq, first);
    frame_free_server(m);
    /* Pushed round ends reach the players. */
    m = gatec_next_event(a, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 3000);
    ck_assert_ptr_nonnull(m);
    frame_free_server(m);
    m = gatec_leave(b, 3, 2000);
    ck_assert_int_eq(gatec_code(m), 0);
    frame_free_server(m);
    /* The seat is forgotten after the round. */
    char *s = seat_of(&e, 2);
    ck_assert_str_eq(s, "(nil)");
    free(s);
    m = gatec_action(b, 4, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_server(m);
    m = gatec_join(b, 5, ENGINE_T, "no-such-game", 10, 2000);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__NO_SUCH_GAME);
    frame_free_server(m);
    ck_assert_int_eq(metric(&gate, "gate_rpc_links"), 1);
    gatec_close(a);
    gatec_close(b);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

/* A seat record lost in Redis (as on a replica promoted before it had the write) is written
 * again from the gateway's own state as soon as its Redis connection comes back. */
START_TEST(test_gate_seat_records_are_written_again_after_a_reconnect)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 400);
    testenv_server_t gate = gate_start(&e, "g1", NULL);
    gatec_t *a = login(&e, &gate, 31, NULL);
    join_ok(a, 2, NULL);
    char *before = seat_of(&e, 31);
    ck_assert_str_ne(before, "(nil)");
    free(ts_redis_cmd(e.rig.redis, "DEL {croupier:seat}:31"));
    free(ts_redis_cmd(e.rig.redis, "CLIENT KILL TYPE normal")); /* every connection but ours */
    char *after = NULL;
    long long end = ts_now_ms() + 5000;
    do {
        free(after);
        ts_sleep_ms(50);
        after = seat_of(&e, 31);
    } while (strcmp(after, before) != 0 && ts_now_ms() < end);
    ck_assert_str_eq(after, before);
    free(after);
    free(before);
    gatec_close(a);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_resume_on_another_gateway_returns_the_same_seat)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 300);
    testenv_server_t g1 = gate_start(&e, "g1", NULL);
    testenv_server_t g2 = gate_start(&e, "g2", NULL);
    gatec_t *a = login(&e, &g1, 31, NULL);
    gatec_t *b = login(&e, &g1, 32, NULL);
    uint32_t seat;
    uint64_t desk = join_ok(a, 2, &seat);
    join_ok(b, 2, NULL);
    uint64_t rid = 10;
    uint64_t n = action_in_round(a, &rid, 3000);
    gatec_close(a);
    bool seated = false;
    gatec_t *a2 = login(&e, &g2, 31, &seated);
    ck_assert(seated);
    Croupier__ServerMessage *m = gatec_resume(a2, 2, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    ck_assert_uint_eq(m->snapshot->desk_id, desk);
    ck_assert_uint_eq(m->snapshot->your_seat, seat);
    ck_assert_str_eq(m->snapshot->game, "test");
    frame_free_server(m);
    /* A join of the same table through the new gateway also answers the seat. */
    m = gatec_join(a2, 3, ENGINE_T, "test", 10, 3000);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    ck_assert_uint_eq(m->snapshot->desk_id, desk);
    frame_free_server(m);
    /* Actions keep counting on the same seat (nothing lost, nothing twice). */
    uint64_t n2 = action_in_round(a2, &rid, 3000);
    ck_assert_uint_gt(n2, n);
    gatec_close(a2);
    gatec_close(b);
    testenv_stop_server(&g1);
    testenv_stop_server(&g2);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- the four-step exit ---------------------------------------------------------------------- */

START_TEST(test_gate_sigterm_goaway_to_every_client_no_reset_exit_drained)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 300);
    char *extra[] = {"--drain-window-ms", "600", NULL};
    testenv_server_t gate = gate_start(&e, "g1", extra);
    char *reg = ts_redis_cmd(e.rig.redis, "EXISTS {croupier:gates}:g1");
    ck_assert_str_eq(reg, "1");
    free(reg);
    /* The entry names the gateway, its address and the build's version (common/version.h). */
    reg = ts_redis_cmd(e.rig.redis, "GET {croupier:gates}:g1");
    char want[160];
    snprintf(want, sizeof want, "\"version\":\"%s\"", croupier_version);
    ck_assert_msg(strstr(reg, want) != NULL && strstr(reg, "\"id\":\"g1\"") != NULL,
                  "gateway entry lacks %s: %s", want, reg);
    free(reg);
    enum { N = 20 };
    gatec_t *c[N];
    for (int i = 0; i < N; i++) {
        c[i] = login(&e, &gate, 500 + (uint64_t)i, NULL);
        if (i < 4)
            join_ok(c[i], 2, NULL);
    }
    gatec_t *idle = gatec_connect("127.0.0.1", gate.port, 2000); /* never logs in */
    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_proc_signal(gate.proc, SIGTERM), 0);
    /* (1) readiness 503 at once; (2) deregistered. */
    ck_assert_int_eq(ts_http_wait_status("127.0.0.1", gate.health, "/readyz", 503, 1000), 0);
    long long t503 = ts_now_ms() - t0;
    for (int i = 0; i < 50; i++) {
        reg = ts_redis_cmd(e.rig.redis, "EXISTS {croupier:gates}:g1");
        bool gone = strcmp(reg, "0") == 0;
        free(reg);
        if (gone)
            break;
        ts_sleep_ms(10);
    }
    reg = ts_redis_cmd(e.rig.redis, "EXISTS {croupier:gates}:g1");
    ck_assert_str_eq(reg, "0");
    free(reg);
    /* (3) the drain window still serves and still accepts. */
    Croupier__ServerMessage *m = gatec_ping(c[0], 9, 1, 1000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    gatec_t *late = login(&e, &gate, 999, NULL);
    uint64_t rid = 10;
    action_in_round(c[0], &rid, 3000);
    /* (4) every client gets a GoAway with a jittered delay, then EOF -- never a reset. */
    uint32_t dmin = UINT32_MAX, dmax = 0;
    gatec_t *all[N + 2];
    memcpy(all, c, sizeof c);
    all[N] = late;
    all[N + 1] = idle;
    for (int i = 0; i < N + 2; i++) {
        m = gatec_next_event(all[i], CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 5000);
        ck_assert_msg(m != NULL, "client %d got no GoAway", i);
        ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_SHUTDOWN);
        ck_assert_uint_le(m->go_away->reconnect_delay_ms, 300);
        if (m->go_away->reconnect_delay_ms < dmin)
            dmin = m->go_away->reconnect_delay_ms;
        if (m->go_away->reconnect_delay_ms > dmax)
            dmax = m->go_away->reconnect_delay_ms;
        frame_free_server(m);
        ck_assert_msg(gatec_wait_eof(all[i], 3000) == 0, "client %d: %s", i,
                      strerror(gatec_read_error(all[i])));
    }
    ck_assert_uint_gt(dmax, dmin); /* spread, not one instant */
    long long tgo = ts_now_ms() - t0;
    ck_assert_int_ge(tgo, 590); /* not before the window ended (ms truncation) */
    for (int i = 0; i < N + 2; i++)
        gatec_close(all[i]);
    int status;
    ck_assert_int_eq(ts_proc_wait(gate.proc, 5000, &status), 0);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    ck_assert(ts_proc_log_has(gate.proc, "exit reason=drained"));
    ck_assert_int_lt(t503, 1000);
    ts_proc_free(gate.proc);
    gate.proc = NULL;
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

/*
 * Players on gateway 1 while it is replaced: each gets a GoAway, sees EOF (no reset), waits its
 * jittered delay, reconnects to gateway 2, resumes the same seat and keeps playing; the table's
 * event numbers prove the seat is the same table, which went on (the Snapshot carries the last
 * event; the next action's Play comes later).
 */
START_TEST(test_gate_sigterm_clients_reconnect_to_the_other_gateway_and_resume)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 2000);
    char *extra[] = {"--drain-window-ms", "300", NULL};
    testenv_server_t g1 = gate_start(&e, "g1", extra);
    testenv_server_t g2 = gate_start(&e, "g2", NULL);
    enum { N = 6 };
    gatec_t *c[N];
    uint64_t desk[N], count[N], rid = 10;
    for (int i = 0; i < N; i++) {
        c[i] = login(&e, &g1, 700 + (uint64_t)i, NULL);
        desk[i] = join_ok(c[i], 2, NULL);
    }
    for (int i = 0; i < N; i++)
        count[i] = action_in_round(c[i], &rid, 4000);
    ck_assert_int_eq(ts_proc_signal(g1.proc, SIGTERM), 0);
    for (int i = 0; i < N; i++) {
        Croupier__ServerMessage *m =
            gatec_next_event(c[i], CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 5000);
        ck_assert_ptr_nonnull(m);
        uint32_t delay = m->go_away->reconnect_delay_ms;
        frame_free_server(m);
        ck_assert_int_eq(gatec_wait_eof(c[i], 3000), 0);
        gatec_close(c[i]);
        ts_sleep_ms((int)(delay / 10)); /* a tenth of the advised delay keeps the test short */
        bool seated = false;
        c[i] = login(&e, &g2, 700 + (uint64_t)i, &seated);
        ck_assert(seated);
        m = gatec_resume(c[i], 2, 3000);
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
        ck_assert_uint_eq(m->snapshot->desk_id, desk[i]);
        ck_assert_uint_ge(m->snapshot->event_seq, count[i]);
        frame_free_server(m);
    }
    for (int i = 0; i < N; i++)
        ck_assert_uint_gt(action_in_round(c[i], &rid, 4000), count[i]);
    int status;
    ck_assert_int_eq(ts_proc_wait(g1.proc, 5000, &status), 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(ts_proc_log_has(g1.proc, "exit reason=drained"));
    ts_proc_free(g1.proc);
    g1.proc = NULL;
    for (int i = 0; i < N; i++)
        gatec_close(c[i]);
    testenv_stop_server(&g2);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

/* preStop's way in: GET /drain runs the same four steps (readiness 503 at once, GoAway, EOF)
 * and the process then exits by itself. */
START_TEST(test_gate_http_drain_runs_the_same_exit)
{
    env_t e;
    env_start(&e);
    testenv_server_t gate = gate_start(&e, "g1", NULL);
    gatec_t *c = login(&e, &gate, 5, NULL);
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", gate.health, "/drain", 2000, &body), 200);
    ck_assert_ptr_nonnull(strstr(body, "\"draining\":true"));
    free(body);
    ck_assert_int_eq(ts_http_get("127.0.0.1", gate.health, "/readyz", 2000, NULL), 503);
    Croupier__ServerMessage *m = gatec_next_event(c, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 3000);
    ck_assert_ptr_nonnull(m);
    frame_free_server(m);
    ck_assert_int_eq(gatec_wait_eof(c, 3000), 0);
    gatec_close(c);
    int status;
    ck_assert_int_eq(ts_proc_wait(gate.proc, 5000, &status), 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(ts_proc_log_has(gate.proc, "exit reason=drained"));
    ts_proc_free(gate.proc);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- game-server drain -------------------------------------------------------------------------
 */

START_TEST(test_gate_game_drain_moves_players_after_their_round)
{
    env_t e;
    env_start(&e);
    testenv_server_t a = game_start(&e, 500);
    testenv_server_t gate = gate_start(&e, "g1", NULL);
    gatec_t *p1 = login(&e, &gate, 71, NULL);
    gatec_t *p2 = login(&e, &gate, 72, NULL);
    join_ok(p1, 2, NULL);
    join_ok(p2, 2, NULL);
    char *seat_a = seat_of(&e, 71);
    testenv_server_t b = game_start(&e, 500);
    uint64_t rid = 10;
    action_in_round(p1, &rid, 3000); /* a round runs on A */

    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_http_get("127.0.0.1", a.health, "/drain", 2000, NULL), 200);
    /* New joins stop going to A within 50 ms. */
    ts_sleep_ms(50);
    gatec_t *p3 = login(&e, &gate, 73, NULL);
    join_ok(p3, 2, NULL);
    char *seat3 = seat_of(&e, 73);
    char *seat_b_id = strndup(seat3, strcspn(seat3, " "));
    ck_assert_msg(!same_server(seat3, seat_a),
                  "a join %lld ms after the drain went to the draining server (%s)",
                  ts_now_ms() - t0, seat3);

    /* The round on A finishes (completed, not voided), then both players are moved to B. */
    Croupier__ServerMessage *m =
        gatec_next_event(p1, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->round_end->outcome, CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED);
    frame_free_server(m);
    gatec_t *ps[2] = {p1, p2};
    uint64_t desk_b = 0;
    for (int i = 0; i < 2; i++) {
        m = gatec_next_event(ps[i], CROUPIER__SERVER_MESSAGE__BODY_MOVED, 5000);
        ck_assert_msg(m != NULL, "player %d not moved", i);
        ck_assert_ptr_nonnull(m->moved->to);
        ck_assert_str_eq(m->moved->to->game, "test");
        ck_assert_int_eq(m->moved->to->stake, 10);
        /* The whole table moved (docs/protocol.md "Whole-table moves"): both players at one
         * table of B, and its Snapshot follows the Moved. */
        ck_assert(m->moved->has_whole_table && m->moved->whole_table);
        if (i == 0)
            desk_b = m->moved->to->desk_id;
        ck_assert_uint_eq(m->moved->to->desk_id, desk_b);
        frame_free_server(m);
        m = gatec_next_event(ps[i], CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT, 2000);
        ck_assert_msg(m != NULL, "player %d got no snapshot after the move", i);
        ck_assert_uint_eq(m->snapshot->desk_id, desk_b);
        ck_assert_uint_eq(m->snapshot->n_seats, 2);
        frame_free_server(m);
        char *s = seat_of(&e, 71 + (uint64_t)i);
        ck_assert_msg(same_server(s, seat3), "seat %s, not on %s", s, seat_b_id);
        free(s);
    }
    /* The moved players play on B. */
    m = gatec_resume(p1, rid++, 2000);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    frame_free_server(m);
    ck_assert_uint_gt(action_in_round(p1, &rid, 4000), 0); /* event_seq goes on from A's */
    /* A exits cleanly (SIGTERM after /drain, as preStop does). */
    ts_proc_signal(a.proc, SIGTERM);
    int status;
    ck_assert_int_eq(ts_proc_wait(a.proc, 10000, &status), 0);
    ck_assert(ts_proc_log_has(a.proc, "exit reason=drained"));
    ts_proc_free(a.proc);
    a.proc = NULL;
    ck_assert_int_ge(metric(&gate, "gate_moves_total{outcome=\"moved\"}"), 2);
    ck_assert_int_ge(metric(&gate, "gate_table_moves_total"), 2);
    free(seat_a);
    free(seat3);
    free(seat_b_id);
    gatec_close(p1);
    gatec_close(p2);
    gatec_close(p3);
    testenv_stop_server(&gate);
    testenv_stop_server(&b);
    testenv_stop(&e.rig);
}
END_TEST

/* A player who disconnected keeps the seat; when its table closes, the gateway that served it
 * moves it anyway, and a later Resume through another gateway finds the new seat. */
START_TEST(test_gate_game_drain_moves_a_disconnected_player_too)
{
    env_t e;
    env_start(&e);
    testenv_server_t a = game_start(&e, 300);
    testenv_server_t g1 = gate_start(&e, "g1", NULL);
    testenv_server_t g2 = gate_start(&e, "g2", NULL);
    gatec_t *p1 = login(&e, &g1, 75, NULL);
    gatec_t *p2 = login(&e, &g1, 76, NULL);
    join_ok(p1, 2, NULL);
    join_ok(p2, 2, NULL);
    char *seat_a = seat_of(&e, 75);
    gatec_close(p1); /* gone, still seated */
    testenv_server_t b = game_start(&e, 300);
    ck_assert_int_eq(ts_http_get("127.0.0.1", a.health, "/drain", 2000, NULL), 200);
    /* Wait for the move of the disconnected player (its seat record changes server). The table
     * moves as a whole within a second; if no server adopted it, A closes it after its move
     * wait (3 s) and the player is re-seated alone (docs/gateway.md "Table moves"): 10 s bound
     * both on a loaded machine. */
    const char *names[] = {"gate g1", "gate g2", "game A (drained)", "game B"};
    const testenv_server_t *servers[] = {&g1, &g2, &a, &b};
    char *s = NULL;
    bool moved = false;
    for (long long end = ts_now_ms() + 10000; !moved && ts_now_ms() < end;) {
        free(s);
        s = seat_of(&e, 75);
        moved = strcmp(s, "(nil)") != 0 && !same_server(s, seat_a);
        if (!moved)
            ts_sleep_ms(50);
    }
    if (!moved)
        logs_to_stderr(names, servers, 4);
    ck_assert_msg(moved, "not moved: %s (the servers' logs are in the error log)", s);
    bool seated = false;
    gatec_t *again = login(&e, &g2, 75, &seated);
    ck_assert(seated);
    Croupier__ServerMessage *m = gatec_resume(again, 2, 3000);
    if (m == NULL || m->body_case != CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT)
        logs_to_stderr(names, servers, 4);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    ck_assert_str_eq(m->snapshot->game, "test");
    frame_free_server(m);
    free(s);
    free(seat_a);
    gatec_close(again);
    gatec_close(p2);
    testenv_stop_server(&g1);
    testenv_stop_server(&g2);
    testenv_stop_server(&a);
    testenv_stop_server(&b);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_game_drain_without_other_server_tells_table_closing)
{
    env_t e;
    env_start(&e);
    testenv_server_t a = game_start(&e, 300);
    testenv_server_t gate = gate_start(&e, "g1", NULL);
    gatec_t *p1 = login(&e, &gate, 81, NULL);
    gatec_t *p2 = login(&e, &gate, 82, NULL);
    join_ok(p1, 2, NULL);
    join_ok(p2, 2, NULL);
    ck_assert_int_eq(ts_http_get("127.0.0.1", a.health, "/drain", 2000, NULL), 200);
    /* The gateway's own TableClosing (after the server's) says the player is unseated. */
    bool told = false;
    for (int i = 0; i < 3 && !told; i++) {
        Croupier__ServerMessage *m =
            gatec_next_event(p1, CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING, 5000);
        ck_assert_ptr_nonnull(m);
        told = strstr(m->table_closing->detail, "not seated") != NULL;
        frame_free_server(m);
    }
    ck_assert(told);
    char *s = seat_of(&e, 81);
    ck_assert_str_eq(s, "(nil)");
    free(s);
    gatec_close(p1);
    gatec_close(p2);
    testenv_stop_server(&gate);
    testenv_stop_server(&a);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- deadlines ------------------------------------------------------------------------------- */

START_TEST(test_gate_expired_budget_is_refused)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 3000);
    char *extra[] = {"--budget-action-ms", "100", NULL};
    testenv_server_t gate = gate_start(&e, "g1", extra);
    gatec_t *a = login(&e, &gate, 41, NULL);
    gatec_t *b = login(&e, &gate, 42, NULL);
    join_ok(a, 2, NULL);
    join_ok(b, 2, NULL);
    uint64_t rid = 10;
    ck_assert_uint_eq(action_in_round(a, &rid, 3000), 1);
    long refused0 = metric(&game, "game_rpc_deadline_exceeded_total");
    /* The game server is stopped: the gateway answers when the budget is spent... */
    ts_proc_signal(game.proc, SIGSTOP);
    long long t0 = ts_now_ms();
    Croupier__ServerMessage *m = gatec_action(a, rid++, 2000);
    long long took = ts_now_ms() - t0;
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED);
    ck_assert_int_ge(took, 80);
    ck_assert_int_lt(took, 1100); /* budget + scheduling slack on a loaded machine */
    frame_free_server(m);
    ts_sleep_ms(50);
    ts_proc_signal(game.proc, SIGCONT);
    /* ...and the server, receiving the request after its deadline, refuses it: not applied. */
    ts_sleep_ms(100);
    ck_assert_int_gt(metric(&game, "game_rpc_deadline_exceeded_total"), refused0);
    ck_assert_uint_eq(action_in_round(a, &rid, 3000), 2);
    ck_assert_int_ge(metric(&gate, "gate_degraded_responses_total"), 1);
    gatec_close(a);
    gatec_close(b);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_retry_stops_when_the_budget_is_spent)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 300);
    char *extra[] = {"--budget-join-ms", "400", NULL};
    testenv_server_t gate = gate_start(&e, "g1", extra);
    ck_assert_int_eq(ts_http_get("127.0.0.1", game.health, "/drain", 2000, NULL), 200);
    ts_sleep_ms(100);
    gatec_t *a = login(&e, &gate, 61, NULL);
    long retries0 = metric(&gate, "gate_retries_total");
    long long t0 = ts_now_ms();
    Croupier__ServerMessage *m = gatec_join(a, 2, ENGINE_T, "test", 10, 3000);
    long long took = ts_now_ms() - t0;
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED);
    frame_free_server(m);
    ck_assert_int_ge(took, 250);
    ck_assert_int_lt(took, 1500);
    long retries = metric(&gate, "gate_retries_total") - retries0;
    ck_assert_int_ge(retries, 1);
    ck_assert_int_le(retries, 12); /* doubling pauses: a handful inside 400 ms */
    char *s = seat_of(&e, 61);
    ck_assert_str_eq(s, "(nil)");
    free(s);
    gatec_close(a);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_stopped_game_server_gives_deadline_exceeded_in_budget)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e, 300);
    char *extra[] = {"--budget-action-ms", "300", NULL};
    testenv_server_t gate = gate_start(&e, "g1", extra);
    gatec_t *a = login(&e, &gate, 91, NULL);
    join_ok(a, 2, NULL);
    ts_proc_signal(game.proc, SIGSTOP);
    long long t0 = ts_now_ms();
    Croupier__ServerMessage *m = gatec_action(a, 5, 3000);
    long long took = ts_now_ms() - t0;
    ts_proc_signal(game.proc, SIGCONT);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED);
    frame_free_server(m);
    ck_assert_int_ge(took, 250);
    ck_assert_int_lt(took, 1300);
    gatec_close(a);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- seats that went with their server (gateway/gate_seat.h) --------------------------------- */

START_TEST(test_gate_seat_record_keeps_the_epoch_marks_rooms_and_tournaments)
{
    gate_seat_t s = {.server_id = "test:3",
                     .address = "127.0.0.1:7001",
                     .desk = 42,
                     .engine = 1,
                     .stake = 10,
                     .game = "test",
                     .epoch = 17};
    char buf[GATE_SEAT_RECORD_MAX + 1];
    ck_assert_int_gt(gate_seat_format(&s, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "test:3 127.0.0.1:7001 42 1 10 test 17");
    gate_seat_t r;
    ck_assert_int_eq(gate_seat_parse(buf, strlen(buf), &r), 0);
    ck_assert_str_eq(r.server_id, "test:3");
    ck_assert_str_eq(r.address, "127.0.0.1:7001");
    ck_assert_uint_eq(r.desk, 42);
    ck_assert_int_eq(r.engine, 1);
    ck_assert_int_eq(r.stake, 10);
    ck_assert_str_eq(r.game, "test");
    ck_assert_int_eq(r.epoch, 17);
    /* A record written before the epoch was kept: epoch 0, "not known". */
    const char *old = "holdem:1 10.0.0.7:7001 5 2 20 holdem";
    ck_assert_int_eq(gate_seat_parse(old, strlen(old), &r), 0);
    ck_assert_str_eq(r.game, "holdem");
    ck_assert_int_eq(r.epoch, 0);
    ck_assert(!r.room);
    /* A private room's seat says so, and reads back. */
    gate_seat_t rs = s;
    rs.room = true;
    ck_assert_int_gt(gate_seat_format(&rs, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "test:3 127.0.0.1:7001 42 1 10 test 17 room");
    ck_assert_int_eq(gate_seat_parse(buf, strlen(buf), &r), 0);
    ck_assert(r.room);
    ck_assert(!r.tour);
    ck_assert_int_eq(r.epoch, 17);
    /* A tournament table's seat says so, and reads back (docs/gateway.md "Seats"). */
    gate_seat_t ts = s;
    ts.tour = true;
    ck_assert_int_gt(gate_seat_format(&ts, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "test:3 127.0.0.1:7001 42 1 10 test 17 tour");
    ck_assert_int_eq(gate_seat_parse(buf, strlen(buf), &r), 0);
    ck_assert(r.tour);
    ck_assert(!r.room);
    ck_assert_uint_eq(r.desk, 42);
    ck_assert_int_eq(r.epoch, 17);
    /* A seat is one kind or the other: never written with both markers. */
    ts.room = true;
    ck_assert_int_eq(gate_seat_format(&ts, buf, sizeof buf), -EINVAL);
    /* Not a record: too few fields, bad numbers, a negative epoch, trailing text. */
    const char *bad[] = {"",
                         "test:3 127.0.0.1:7001 42 1 10",
                         "test:3 127.0.0.1:7001 x 1 10 test",
                         "test:3 127.0.0.1:7001 42 1 10 test -4",
                         "test:3 127.0.0.1:7001 42 1 10 test 17 more",
                         "test:3 127.0.0.1:7001 42 1 10 test 17 room more",
                         "test:3 127.0.0.1:7001 42 1 10 test 17 roomy",
                         "test:3 127.0.0.1:7001 42 1 10 test 17 tour room",
                         "test:3 127.0.0.1:7001 42 1 10 test 17 tours",
                         "test:3 127.0.0.1:7001 42 1 10 test tour",
                         "test:3 127.0.0.1:7001 42 1 10 test abc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(gate_seat_parse(bad[i], strlen(bad[i]), &r) == -EINVAL, "parsed '%s'",
                      bad[i]);
    ck_assert_str_eq(r.server_id, ""); /* zeroed on failure */
    /* Nothing is written that would not read back. */
    gate_seat_t sp = s;
    snprintf(sp.game, sizeof sp.game, "a b");
    ck_assert_int_eq(gate_seat_format(&sp, buf, sizeof buf), -EINVAL);
    ck_assert_int_eq(gate_seat_format(&s, buf, 10), -ENOSPC);
}
END_TEST

/* The seat a rule is asked about: server test:3 at 127.0.0.1:7001, taken under epoch 17. */
static gate_seat_t judged_seat(int64_t epoch)
{
    gate_seat_t s = {.server_id = "test:3",
                     .address = "127.0.0.1:7001",
                     .desk = 1,
                     .engine = 1,
                     .stake = 10,
                     .game = "test",
                     .epoch = epoch};
    return s;
}

START_TEST(test_gate_seat_live_link_proves_its_process_lives)
{
    gate_seat_t s = judged_seat(17);
    gate_seat_facts_t f = {
        .view_read = true, .link_ready = true, .link_server_id = "test:3", .link_floor = 17};
    /* Listed at its epoch, unlisted (an exit deregistering, a Redis hiccup), or listed under a
     * larger epoch the same process regained its slot with: the process answers for its seat. */
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_LIVE);
    f.listed = true;
    f.listed_epoch = 19;
    f.listed_address = "127.0.0.1:7001";
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_LIVE);
    /* The process behind the link started after the seat was taken: a replacement. */
    f.link_floor = 19;
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_GONE_NEW_PROCESS);
    /* ...unless the record does not say its epoch. */
    gate_seat_t old = judged_seat(0);
    ck_assert_int_eq(gate_seat_judge(&old, &f), GATE_SEAT_LIVE);
    /* Another server id answers at the address (also a process with no slot yet). */
    f.link_floor = 17;
    f.link_server_id = "test:5";
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_GONE_REPLACED);
    f.link_server_id = "unassigned";
    ck_assert_int_eq(gate_seat_judge(&old, &f), GATE_SEAT_GONE_REPLACED);
}
END_TEST

START_TEST(test_gate_seat_lost_link_follows_the_registry)
{
    gate_seat_t s = judged_seat(17);
    gate_seat_facts_t f = {0};
    /* Before the first full read nothing is known: the request finds out (and is retried). */
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_LIVE);
    f.view_read = true;
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_GONE_UNLISTED);
    /* Link lost, entry live at the seat's epoch: a blip, not a death. */
    f.listed = true;
    f.listed_epoch = 17;
    f.listed_address = "127.0.0.1:7001";
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_LIVE);
    /* An older view (the seat is newer than what the view read) proves nothing either. */
    f.listed_epoch = 12;
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_LIVE);
    /* The slot was taken again: a larger epoch, or another address. */
    f.listed_epoch = 18;
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_GONE_REPLACED);
    f.listed_epoch = 17;
    f.listed_address = "127.0.0.1:7002";
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_GONE_REPLACED);
    /* A record without an epoch is judged by presence (and address) alone. */
    gate_seat_t old = judged_seat(0);
    f.listed_epoch = 99;
    f.listed_address = "127.0.0.1:7001";
    ck_assert_int_eq(gate_seat_judge(&old, &f), GATE_SEAT_LIVE);
    f.listed = false;
    ck_assert_int_eq(gate_seat_judge(&old, &f), GATE_SEAT_GONE_UNLISTED);
    /* A direct read since the link was lost knows before the view's next full read. */
    f.listed = true;
    f.listed_epoch = 17;
    f.probed = true;
    f.probed_absent = true;
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_GONE_UNLISTED);
    f.probed_absent = false;
    f.probed_epoch = 20;
    f.probed_address = "127.0.0.1:7001";
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_GONE_REPLACED);
    f.probed_epoch = 17;
    ck_assert_int_eq(gate_seat_judge(&s, &f), GATE_SEAT_LIVE);
    ck_assert_str_eq(gate_seat_verdict_name(GATE_SEAT_GONE_REPLACED), "replaced");
}
END_TEST

/* croupier-game --engine test with extra flags (NULL-terminated). */
static testenv_server_t game_start_args(env_t *e, int round_ms, char *const args[])
{
    char round[64];
    snprintf(round, sizeof round, "CROUPIER_TEST_ROUND_MS=%d", round_ms);
    char *env[] = {round, "CROUPIER_TEST_GAP_MS=20", NULL};
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_game(&e->rig, &g, "test", 20, args, env), 0);
    return g;
}

/* SIGKILL: no preStop, no drain, no exit sequence. */
static void game_kill(testenv_server_t *s)
{
    ck_assert_int_eq(ts_proc_signal(s->proc, SIGKILL), 0);
    int status;
    ck_assert_int_eq(ts_proc_wait(s->proc, 5000, &status), 0);
    ts_proc_free(s->proc);
    s->proc = NULL;
}

/* The seat record of player, parsed (ck fails when there is none). */
static gate_seat_t seat_rec(env_t *e, uint64_t player)
{
    char *v = seat_of(e, player);
    gate_seat_t s;
    ck_assert_msg(gate_seat_parse(v, strlen(v), &s) == 0, "seat of %llu: %s",
                  (unsigned long long)player, v);
    free(v);
    return s;
}

/* Waits until player's seat record is gone (the gateways delete it asynchronously). */
static bool seat_gone_within(env_t *e, uint64_t player, int ms)
{
    long long end = ts_now_ms() + ms;
    for (;;) {
        char *v = seat_of(e, player);
        bool gone = strcmp(v, "(nil)") == 0;
        free(v);
        if (gone)
            return true;
        if (ts_now_ms() >= end)
            return false;
        ts_sleep_ms(10);
    }
}

/*
 * A game server SIGKILLed mid-round (issue 15): every player seated there through either gateway
 * is told TableClosing{CRASHED} and moved to the other server as soon as the server's registry
 * entry expires (the lease TTL, 900 ms here: the time is printed); a player who was away finds
 * its seat gone at once when it comes back (not seated; a Resume answers TABLE_CLOSED at once,
 * not DEADLINE_EXCEEDED) and joins again.
 */
START_TEST(test_gate_sigkilled_server_players_are_told_crashed_and_moved)
{
    env_t e;
    env_start(&e);
    char *pool[] = {"--lease-pool-size", "4", NULL};
    testenv_server_t a = game_start_args(&e, 500, pool);
    testenv_server_t g1 = gate_start(&e, "g1", NULL);
    testenv_server_t g2 = gate_start(&e, "g2", NULL);
    gatec_t *p[3] = {login(&e, &g1, 201, NULL), login(&e, &g1, 202, NULL),
                     login(&e, &g2, 203, NULL)};
    for (int i = 0; i < 3; i++)
        join_ok(p[i], 2, NULL);
    gatec_t *away = login(&e, &g1, 204, NULL);
    join_ok(away, 2, NULL);
    gatec_close(away); /* its record names A */
    gate_seat_t at_a = seat_rec(&e, 201);
    ck_assert_int_gt(at_a.epoch, 0); /* written with the server's epoch */
    testenv_server_t b = game_start_args(&e, 500, pool);
    uint64_t rid = 10;
    action_in_round(p[0], &rid, 3000); /* a round runs on A */

    game_kill(&a);
    long long t0 = ts_now_ms(), worst_closing = 0, worst_moved = 0;
    for (int i = 0; i < 3; i++) {
        Croupier__ServerMessage *m =
            gatec_next_event(p[i], CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING, 5000);
        ck_assert_msg(m != NULL, "player %d: no TableClosing", i);
        ck_assert_int_eq(m->table_closing->reason, CROUPIER__CLOSING_REASON__CLOSING_CRASHED);
        ck_assert(m->table_closing->has_after_ms); /* a move follows */
        ck_assert_ptr_nonnull(strstr(m->table_closing->detail, "stopped"));
        frame_free_server(m);
        long long tc = ts_now_ms() - t0;
        m = gatec_next_event(p[i], CROUPIER__SERVER_MESSAGE__BODY_MOVED, 5000);
        ck_assert_msg(m != NULL, "player %d: not moved", i);
        ck_assert(m->moved->has_reason);
        ck_assert_int_eq(m->moved->reason, CROUPIER__CLOSING_REASON__CLOSING_CRASHED);
        ck_assert_str_eq(m->moved->to->game, "test");
        ck_assert_int_eq(m->moved->to->stake, 10);
        frame_free_server(m);
        long long mv = ts_now_ms() - t0;
        worst_closing = tc > worst_closing ? tc : worst_closing;
        worst_moved = mv > worst_moved ? mv : worst_moved;
        gate_seat_t now = seat_rec(&e, 201 + (uint64_t)i);
        ck_assert_str_ne(now.server_id, at_a.server_id);
        ck_assert_int_gt(now.epoch, 0);
    }
    fprintf(stderr,
            "# crash: every player told TableClosing{CRASHED} within %lld ms and moved within "
            "%lld ms of the SIGKILL (lease TTL 900 ms, registry refresh 1000 ms)\n",
            worst_closing, worst_moved);
    /* Bounded by the entry's expiry (at most one TTL after the kill), not the view's next
     * full read: TTL + scheduling slack on a loaded machine. */
    ck_assert_int_lt(worst_closing, 900 + 900);
    ck_assert_int_ge(metric(&g1, "gate_servers_gone_total"), 1);
    ck_assert_int_ge(metric(&g2, "gate_servers_gone_total"), 1);
    /* The moved players play on B. */
    ck_assert_uint_gt(action_in_round(p[0], &rid, 4000), 0);

    /* The player who was away: not seated any more, its record gone at once. */
    bool seated = true;
    gatec_t *back = login(&e, &g2, 204, &seated);
    ck_assert(!seated);
    ck_assert(seat_gone_within(&e, 204, 1000));
    long long r0 = ts_now_ms();
    Croupier__ServerMessage *m = gatec_resume(back, 2, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__TABLE_CLOSED);
    ck_assert_ptr_nonnull(strstr(m->result->error->message, "table gone"));
    frame_free_server(m);
    ck_assert_int_lt(ts_now_ms() - r0, 500); /* at once, not after a budget */
    join_ok(back, 3, NULL);
    gate_seat_t joined = seat_rec(&e, 204);
    ck_assert_str_ne(joined.server_id, at_a.server_id);
    gatec_close(back);
    for (int i = 0; i < 3; i++)
        gatec_close(p[i]);
    testenv_stop_server(&g1);
    testenv_stop_server(&g2);
    testenv_stop_server(&b);
    testenv_stop(&e.rig);
}
END_TEST

/*
 * An action answered DEADLINE_EXCEEDED while its server was dead but not yet found gone, sent
 * again with the same request id (docs/gateway.md: it is idempotent) after the crash move: it
 * was made for the gone seat, so it ends TABLE_CLOSED and never runs at the new table (it used
 * to be routed to the player's new seat, where hold'em answered NO_ROUND between hands -- the
 * crash_recovery e2e's flake -- or, during a hand, could have played the player's new turn). A
 * new request after the Moved plays at the new seat.
 */
START_TEST(test_gate_retry_of_a_crashed_seat_request_never_runs_at_the_new_table)
{
    env_t e;
    env_start(&e);
    char *pool[] = {"--lease-pool-size", "4", NULL};
    testenv_server_t a = game_start_args(&e, 500, pool);
    char *budget[] = {"--budget-action-ms", "200", NULL};
    testenv_server_t gate = gate_start(&e, "g1", budget);
    gatec_t *p = login(&e, &gate, 251, NULL);
    gatec_t *q = login(&e, &gate, 252, NULL);
    join_ok(p, 2, NULL);
    join_ok(q, 2, NULL);
    testenv_server_t b = game_start_args(&e, 500, pool);
    uint64_t rid = 10;
    action_in_round(p, &rid, 3000);
    game_kill(&a);
    /* Sent at once: the entry lives 600..900 ms more, the budget is 200 ms. */
    uint64_t stale = rid++;
    Croupier__ServerMessage *m = gatec_action(p, stale, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(gatec_code(m) == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED,
                  "first attempt answered %d, not DEADLINE_EXCEEDED", gatec_code(m));
    frame_free_server(m);
    m = gatec_next_event(p, CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING, 5000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->table_closing->reason, CROUPIER__CLOSING_REASON__CLOSING_CRASHED);
    frame_free_server(m);
    m = gatec_next_event(p, CROUPIER__SERVER_MESSAGE__BODY_MOVED, 5000);
    ck_assert_ptr_nonnull(m);
    frame_free_server(m);
    char addr_b[32];
    snprintf(addr_b, sizeof addr_b, "127.0.0.1:%d", b.port);
    ck_assert_str_eq(seat_rec(&e, 251).address, addr_b);

    /* The same request again, after the move: for the gone seat, not the new one -- every
     * time it is sent. */
    for (int i = 0; i < 2; i++) {
        m = gatec_action(p, stale, 3000);
        ck_assert_ptr_nonnull(m);
        ck_assert_msg(gatec_code(m) == CROUPIER__ERROR_CODE__TABLE_CLOSED,
                      "retry %d answered %d: it ran at the new table", i, gatec_code(m));
        ck_assert_ptr_nonnull(strstr(m->result->error->message, "table gone"));
        frame_free_server(m);
    }
    /* New requests play at the new seat, which the retries left alone. */
    ck_assert_uint_gt(action_in_round(p, &rid, 4000), 0);
    ck_assert_str_eq(seat_rec(&e, 251).address, addr_b);

    gatec_close(p);
    gatec_close(q);
    testenv_stop_server(&gate);
    testenv_stop_server(&b);
    testenv_stop(&e.rig);
}
END_TEST

/*
 * The killed server's slot is taken again by a new process (another epoch, another address):
 * records naming the old process are gone at once -- new records by their epoch, records of the
 * old format (no epoch) by the address -- and a Join proceeds as a fresh join. A connected
 * player with no other server to go to is told TableClosing{CRASHED} without a move.
 */
START_TEST(test_gate_seat_of_a_replaced_server_is_gone_at_once)
{
    env_t e;
    env_start(&e);
    char *pool[] = {"--lease-pool-size", "1", NULL};
    testenv_server_t a = game_start_args(&e, 500, pool);
    testenv_server_t gate = gate_start(&e, "g1", NULL);
    gatec_t *p1 = login(&e, &gate, 301, NULL);
    gatec_t *p2 = login(&e, &gate, 302, NULL);
    join_ok(p1, 2, NULL);
    join_ok(p2, 2, NULL);
    gatec_close(p1);
    gate_seat_t old = seat_rec(&e, 301);
    /* A record of the old format for a third player. */
    char rec[GATE_SEAT_RECORD_MAX + 1];
    snprintf(rec, sizeof rec, "%s %s %llu 1 10 test", old.server_id, old.address,
             (unsigned long long)old.desk);
    char *r = ts_redis_cmd(e.rig.redis, "SET {croupier:seat}:303 %s", rec);
    ck_assert_str_eq(r, "OK");
    free(r);

    game_kill(&a);
    Croupier__ServerMessage *m =
        gatec_next_event(p2, CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING, 5000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->table_closing->reason, CROUPIER__CLOSING_REASON__CLOSING_CRASHED);
    ck_assert(!m->table_closing->has_after_ms); /* nowhere to go: no Moved follows */
    frame_free_server(m);
    ck_assert(seat_gone_within(&e, 302, 1000));
    /* The replacement takes the only slot: the same server id under a larger epoch. */
    testenv_server_t c = game_start_args(&e, 500, pool);
    char *entry = ts_redis_cmd(e.rig.redis, "GET {croupier:registry}:server:%s", old.server_id);
    char want[64];
    snprintf(want, sizeof want, "\"address\":\"127.0.0.1:%d\"", c.port);
    ck_assert_msg(strstr(entry, want) != NULL, "slot not taken again: %s", entry);
    free(entry);
    ts_sleep_ms(1100); /* the view reads the new entry (refresh 1000 ms) */

    uint64_t players[2] = {301, 303};
    for (int i = 0; i < 2; i++) {
        bool seated = true;
        gatec_t *q = login(&e, &gate, players[i], &seated);
        ck_assert_msg(!seated, "player %llu still seated", (unsigned long long)players[i]);
        ck_assert(seat_gone_within(&e, players[i], 1000));
        m = gatec_resume(q, 2, 3000);
        ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__TABLE_CLOSED);
        frame_free_server(m);
        join_ok(q, 3, NULL);
        gate_seat_t now = seat_rec(&e, players[i]);
        ck_assert_str_eq(now.server_id, old.server_id); /* the slot's new holder */
        ck_assert_int_gt(now.epoch, old.epoch);
        gatec_close(q);
    }
    /* The connected player, unseated by the crash, joins again. */
    join_ok(p2, 3, NULL);
    ck_assert_int_eq(seat_rec(&e, 302).epoch > old.epoch, 1);
    gatec_close(p2);
    testenv_stop_server(&gate);
    testenv_stop_server(&c);
    testenv_stop(&e.rig);
}
END_TEST

/*
 * A player whose connection here holds a seat that another gateway has since moved (a drain's
 * move of a player whose last request went through that gateway): when the old server is gone,
 * the gateway reads the record first and takes the new seat -- no TableClosing{CRASHED}, no
 * second move that would seat the player twice.
 */
START_TEST(test_gate_seat_moved_by_another_gateway_is_taken_not_crashed)
{
    env_t e;
    env_start(&e);
    testenv_server_t a = game_start(&e, 300);
    testenv_server_t g1 = gate_start(&e, "g1", NULL);
    testenv_server_t g2 = gate_start(&e, "g2", NULL);
    gatec_t *p = login(&e, &g2, 501, NULL);
    gatec_t *other = login(&e, &g2, 502, NULL);
    join_ok(p, 2, NULL);
    join_ok(other, 2, NULL);
    gatec_close(p);
    gate_seat_t at_a = seat_rec(&e, 501);
    bool seated = false;
    gatec_t *here = login(&e, &g1, 501, &seated); /* holds the seat at A, sends nothing */
    ck_assert(seated);
    testenv_server_t b = game_start(&e, 300);
    ck_assert_int_eq(ts_http_get("127.0.0.1", a.health, "/drain", 2000, NULL), 200);
    /* g2 carried the player's last request: it moves the player (not connected there). */
    gate_seat_t now = at_a;
    for (int i = 0; i < 100 && strcmp(now.server_id, at_a.server_id) == 0; i++) {
        ts_sleep_ms(50);
        now = seat_rec(&e, 501);
    }
    ck_assert_str_ne(now.server_id, at_a.server_id);
    /* A leaves; g1 finds it gone with the player's connection still naming it. */
    ts_proc_signal(a.proc, SIGTERM);
    int status;
    ck_assert_int_eq(ts_proc_wait(a.proc, 10000, &status), 0);
    ts_proc_free(a.proc);
    a.proc = NULL;
    ck_assert_int_eq(ts_proc_wait_log(g1.proc, "seat_moved_elsewhere", 5000), 0);
    Croupier__ServerMessage *m =
        gatec_next_event(here, CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING, 300);
    ck_assert_msg(m == NULL, "told TableClosing reason %d", m ? (int)m->table_closing->reason : 0);
    m = gatec_resume(here, 2, 3000);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    ck_assert_uint_eq(m->snapshot->desk_id, now.desk);
    frame_free_server(m);
    gate_seat_t after = seat_rec(&e, 501);
    ck_assert_str_eq(after.server_id, now.server_id);
    ck_assert_uint_eq(after.desk, now.desk);
    gatec_close(here);
    gatec_close(other);
    testenv_stop_server(&g1);
    testenv_stop_server(&g2);
    testenv_stop_server(&b);
    testenv_stop(&e.rig);
}
END_TEST

/*
 * A lost link with a live registry entry (the server stopped for a moment, its lease still
 * valid) is retried, never taken for a crash: nobody is told TableClosing, the seats stay.
 */
START_TEST(test_gate_lost_link_with_live_entry_is_retried_not_crashed)
{
    env_t e;
    env_start(&e);
    char *ttl[] = {"--lease-ttl-ms", "5000", NULL};
    testenv_server_t a = game_start_args(&e, 500, ttl);
    char *ping[] = {"--link-ping-ms", "100", NULL};
    testenv_server_t gate = gate_start(&e, "g1", ping);
    gatec_t *p1 = login(&e, &gate, 401, NULL);
    gatec_t *p2 = login(&e, &gate, 402, NULL);
    join_ok(p1, 2, NULL);
    join_ok(p2, 2, NULL);
    char *before = seat_of(&e, 401);
    ts_proc_signal(a.proc, SIGSTOP);
    /* Three missed heartbeats (300 ms) lose the link; the entry lives 5 s from its last
     * refresh (every 1.67 s), so for at least 3.3 s. */
    ck_assert_int_eq(ts_proc_wait_log(gate.proc, "rpc_link_down", 3000), 0);
    ts_sleep_ms(700);
    ts_proc_signal(a.proc, SIGCONT);
    Croupier__ServerMessage *m =
        gatec_next_event(p1, CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING, 1500);
    ck_assert_msg(m == NULL, "told TableClosing reason %d", m ? (int)m->table_closing->reason : 0);
    char *after = seat_of(&e, 401);
    ck_assert_str_eq(after, before);
    uint64_t rid = 10;
    ck_assert_uint_gt(action_in_round(p1, &rid, 4000), 0);
    ck_assert_int_eq(metric(&gate, "gate_servers_gone_total"), 0);
    ck_assert_int_eq(metric(&gate, "gate_stale_seats_total"), 0);
    free(before);
    free(after);
    gatec_close(p1);
    gatec_close(p2);
    testenv_stop_server(&gate);
    testenv_stop_server(&a);
    testenv_stop(&e.rig);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate");
    struct {
        const char *name;
        const TTest *tests[6];
    } cases[] = {
        {"bad_input",
         {test_gate_bad_inputs_get_their_code_and_change_nothing,
          test_gate_rate_limit_refuses_a_flood_and_keeps_the_session,
          test_gate_idle_connection_gets_goaway_and_eof,
          test_gate_slow_consumer_is_closed_with_a_reason, NULL}},
        {"sessions",
         {test_gate_new_login_takes_the_session_over,
          test_gate_login_on_another_gateway_replaces_the_session, NULL}},
        {"routing",
         {test_gate_join_action_leave_through_the_game_server,
          test_gate_resume_on_another_gateway_returns_the_same_seat,
          test_gate_seat_records_are_written_again_after_a_reconnect, NULL}},
        {"exit",
         {test_gate_sigterm_goaway_to_every_client_no_reset_exit_drained,
          test_gate_sigterm_clients_reconnect_to_the_other_gateway_and_resume,
          test_gate_http_drain_runs_the_same_exit, NULL}},
        {"game_drain",
         {test_gate_game_drain_moves_players_after_their_round,
          test_gate_game_drain_moves_a_disconnected_player_too,
          test_gate_game_drain_without_other_server_tells_table_closing, NULL}},
        {"deadlines",
         {test_gate_expired_budget_is_refused, test_gate_retry_stops_when_the_budget_is_spent,
          test_gate_stopped_game_server_gives_deadline_exceeded_in_budget, NULL}},
        {"seat_staleness",
         {test_gate_seat_record_keeps_the_epoch_marks_rooms_and_tournaments,
          test_gate_seat_live_link_proves_its_process_lives,
          test_gate_seat_lost_link_follows_the_registry, NULL}},
        {"crash",
         {test_gate_sigkilled_server_players_are_told_crashed_and_moved,
          test_gate_seat_of_a_replaced_server_is_gone_at_once,
          test_gate_seat_moved_by_another_gateway_is_taken_not_crashed,
          test_gate_lost_link_with_live_entry_is_retried_not_crashed,
          test_gate_retry_of_a_crashed_seat_request_never_runs_at_the_new_table, NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_timeout(tc, 60);
        for (int k = 0; cases[i].tests[k] != NULL; k++)
            tcase_add_test(tc, cases[i].tests[k]);
        suite_add_tcase(s, tc);
    }
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
