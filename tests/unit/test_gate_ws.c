/*
 * The gateway's WebSocket listener against real processes (issue 17, docs/gateway.md
 * "WebSocket", docs/protocol.md "Transports"): a real redis-server, real croupier-game
 * --engine test servers and a real croupier-gate with --ws-listen, driven by a raw-socket
 * WebSocket client (tests/support/wsc.h) that keeps every rule and breaks each one.
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

#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"
#include "wsc.h"

#define SECRET "gate-ws-test-secret-0123456789"
#define ENGINE_T CROUPIER__ENGINE__ENGINE_TRADITIONAL

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

static testenv_server_t game_start(env_t *e)
{
    char *env[] = {"CROUPIER_TEST_ROUND_MS=300", "CROUPIER_TEST_GAP_MS=20", NULL};
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_game(&e->rig, &g, "test", 20, NULL, env), 0);
    return g;
}

/* croupier-gate with a WebSocket listener on a free port (*ws_port); extra: more flags. */
static testenv_server_t gate_start(env_t *e, const char *id, int *ws_port, char *const extra[])
{
    int port = ts_free_port();
    ck_assert_int_gt(port, 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    char *args[40] = {"--drain-window-ms",  "200", "--close-timeout-ms", "2000",
                      "--goaway-spread-ms", "300", "--link-ping-ms",     "200",
                      "--ws-listen",        addr};
    int n = 10;
    for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
        ck_assert_int_lt(n, 39);
        args[n++] = extra[i];
    }
    args[n] = NULL;
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_gate(&e->rig, &g, id, args), 0);
    *ws_port = port;
    return g;
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

static void mint(env_t *e, uint64_t player, char *out)
{
    ck_assert_int_gt(token_mint(&e->secret, player, time(NULL) + 600, out, TOKEN_MAX_LEN + 1), 0);
}

static void ws_ping(wsc_t *w, uint64_t rid)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    m.request_id = rid;
    p.nonce = rid * 7;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    ck_assert_int_eq(wsc_send_msg(w, &m), 0);
}

/* A ClientMessage Ping answered by a Pong over the WebSocket. */
static void ws_ping_ok(wsc_t *w, uint64_t rid)
{
    ws_ping(w, rid);
    Croupier__ServerMessage *m = wsc_wait_reply(w, rid, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    ck_assert_uint_eq(m->pong->nonce, rid * 7);
    frame_free_server(m);
}

/* Connects over WebSocket and logs player in. */
static wsc_t *ws_login(env_t *e, int ws_port, uint64_t player)
{
    free(ts_redis_cmd(e->rig.redis, "SET {croupier:money}:wallet:%llu 1000000 NX",
                      (unsigned long long)player));
    wsc_t *w = wsc_connect("127.0.0.1", ws_port, "/", NULL, 3000);
    ck_assert_ptr_nonnull(w);
    char tok[TOKEN_MAX_LEN + 1];
    mint(e, player, tok);
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Login l = CROUPIER__LOGIN__INIT;
    m.request_id = 1;
    l.token = tok;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
    m.login = &l;
    ck_assert_int_eq(wsc_send_msg(w, &m), 0);
    Croupier__ServerMessage *r = wsc_wait_reply(w, 1, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    ck_assert_uint_eq(r->login_result->player_id, player);
    frame_free_server(r);
    return w;
}

/* The next pushed GoAway (other messages skipped); its reason and delay. */
static int ws_goaway(wsc_t *w, uint32_t *delay, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (ts_now_ms() < end) {
        Croupier__ServerMessage *m = wsc_recv_server(w, (int)(end - ts_now_ms()), NULL);
        if (m == NULL)
            return -1;
        if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY) {
            int r = m->go_away->reason;
            if (delay != NULL)
                *delay = m->go_away->reconnect_delay_ms;
            frame_free_server(m);
            return r;
        }
        frame_free_server(m);
    }
    return -1;
}

/* ---- handshake ------------------------------------------------------------------------------ */

#define KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define GOOD_HEAD "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"

START_TEST(test_gate_ws_handshake_refusals_get_their_status_and_a_clean_close)
{
    env_t e;
    env_start(&e);
    int ws;
    char *extra[] = {"--ws-path", "/play", "--ws-origins",
                     "https://cards.example,http://localhost:8080", NULL};
    testenv_server_t gate = gate_start(&e, "g1", &ws, extra);
    static const struct {
        const char *req;
        int status;
        const char *in_head;
    } cases[] = {
        {"POST /play HTTP/1.1\r\n" GOOD_HEAD "Sec-WebSocket-Key: " KEY
         "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         400, NULL},
        {"GET /play HTTP/1.0\r\n" GOOD_HEAD "Sec-WebSocket-Key: " KEY
         "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         400, NULL},
        {"GET /play HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " KEY
         "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         400, NULL},
        {"GET /play HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nSec-WebSocket-Key: " KEY
         "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         400, NULL},
        {"GET /play HTTP/1.1\r\n" GOOD_HEAD "Sec-WebSocket-Key: " KEY
         "\r\nSec-WebSocket-Version: 8\r\n\r\n",
         400, "Sec-WebSocket-Version: 13\r\n"},
        {"GET /play HTTP/1.1\r\n" GOOD_HEAD
         "Sec-WebSocket-Key: c2hvcnRrZXk=\r\nSec-WebSocket-Version: 13\r\n\r\n",
         400, NULL},
        {"GET /play HTTP/1.1\r\n" GOOD_HEAD "Sec-WebSocket-Version: 13\r\n\r\n", 400, NULL},
        {"GET /play HTTP/1.1\r\n" GOOD_HEAD "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Key: " KEY
         "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         400, NULL},
        {"GET /play HTTP/1.1\nHost: x\n\n\r\n\r\n", 400, NULL},
        {"GET / HTTP/1.1\r\n" GOOD_HEAD "Sec-WebSocket-Key: " KEY
         "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         404, NULL},
        {"GET /play HTTP/1.1\r\n" GOOD_HEAD "Sec-WebSocket-Key: " KEY
         "\r\nSec-WebSocket-Version: 13\r\nOrigin: https://evil.example\r\n\r\n",
         403, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wsc_t *w = wsc_open("127.0.0.1", ws, 2000);
        ck_assert_ptr_nonnull(w);
        ck_assert_int_eq(wsc_send_raw(w, cases[i].req, strlen(cases[i].req)), 0);
        char head[2048];
        int st = wsc_read_http(w, 3000, head, sizeof head);
        ck_assert_msg(st == cases[i].status, "case %zu: status %d, want %d", i, st,
                      cases[i].status);
        ck_assert_ptr_null(strstr(head, "Upgrade: websocket"));
        if (cases[i].in_head != NULL)
            ck_assert_ptr_nonnull(strstr(head, cases[i].in_head));
        ck_assert_int_eq(wsc_wait_eof(w, 3000), 0); /* a FIN, never a reset */
        wsc_close(w);
    }
    /* A request too long to be a handshake. */
    wsc_t *w = wsc_open("127.0.0.1", ws, 2000);
    char big[9000];
    memset(big, 'a', sizeof big);
    memcpy(big, "GET /play HTTP/1.1\r\nX: ", 23);
    ck_assert_int_eq(wsc_send_raw(w, big, sizeof big), 0);
    char head[2048];
    ck_assert_int_eq(wsc_read_http(w, 3000, head, sizeof head), 400);
    wsc_close(w);
    ck_assert_int_eq(metric(&gate, "gate_ws_handshakes_total{result=\"bad_request\"}"), 10);
    ck_assert_int_eq(metric(&gate, "gate_ws_handshakes_total{result=\"forbidden\"}"), 1);
    ck_assert_int_eq(metric(&gate, "gate_ws_handshakes_total{result=\"not_found\"}"), 1);

    /* Allowed: a listed Origin, no Origin (not a browser), a query string; the extension asked
     * for is not granted. */
    const char *ok[] = {
        "GET /play HTTP/1.1\r\n" GOOD_HEAD "Sec-WebSocket-Key: " KEY
        "\r\nSec-WebSocket-Version: 13\r\nOrigin: http://localhost:8080\r\n"
        "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n",
        "GET /play?v=1 HTTP/1.1\r\nhost: x\r\nupgrade: WebSocket\r\n"
        "connection: keep-alive, Upgrade\r\nsec-websocket-key:  " KEY
        " \r\nsec-websocket-version: 13\r\n\r\n"};
    for (size_t i = 0; i < 2; i++) {
        w = wsc_open("127.0.0.1", ws, 2000);
        ck_assert_int_eq(wsc_send_raw(w, ok[i], strlen(ok[i])), 0);
        ck_assert_int_eq(wsc_read_http(w, 3000, head, sizeof head), 101);
        /* RFC 6455 section 1.3's example key and its accept value. */
        ck_assert_ptr_nonnull(
            strstr(head, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
        ck_assert_ptr_null(strstr(head, "Sec-WebSocket-Extensions"));
        wsc_close(w);
    }
    w = wsc_connect("127.0.0.1", ws, "/play", "https://cards.example", 3000);
    ck_assert_ptr_nonnull(w);
    ws_ping_ok(w, 5);
    wsc_close(w);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- frame rules ------------------------------------------------------------------------------
 */

/* Opens a WebSocket, sends what send() sends, and expects close code `code`, then a clean EOF. */
static void expect_close(int ws, int code, void (*send)(wsc_t *w), const char *what)
{
    wsc_t *w = wsc_connect("127.0.0.1", ws, "/", NULL, 3000);
    ck_assert_ptr_nonnull(w);
    send(w);
    char reason[128];
    int got = wsc_wait_close(w, 3000, reason, sizeof reason);
    ck_assert_msg(got == code, "%s: close code %d, want %d", what, got, code);
    ck_assert_msg(wsc_wait_eof(w, 3000) == 0, "%s: no clean EOF after the close", what);
    wsc_close(w);
}

static void send_text(wsc_t *w)
{
    ck_assert_int_eq(wsc_send_frame(w, 1, true, 0, true, "hello", 5), 0);
}

static void send_unmasked(wsc_t *w)
{
    ck_assert_int_eq(wsc_send_frame(w, 2, true, 0, false, "\x0a\x02\x08\x01", 4), 0);
}

static void send_rsv1(wsc_t *w)
{
    ck_assert_int_eq(wsc_send_frame(w, 2, true, 4, true, "\x0a\x02\x08\x01", 4), 0);
}

static void send_rsv3(wsc_t *w)
{
    ck_assert_int_eq(wsc_send_frame(w, 2, true, 1, true, "\x0a\x02\x08\x01", 4), 0);
}

/* A ping of 126 bytes: wslay refuses to write one, so its header is put together here. */
static void send_big_ping(wsc_t *w)
{
    uint8_t f[4 + 4 + 126] = {0x89, 0x80 | 126, 0, 126, 1, 2, 3, 4};
    ck_assert_int_eq(wsc_send_raw(w, f, sizeof f), 0);
}

static void send_bad_opcode(wsc_t *w)
{
    ck_assert_int_eq(wsc_send_frame(w, 3, true, 0, true, "x", 1), 0);
}

/* Three fragments of 400 bytes: each under the 1024-byte cap, together over it. */
static void send_fragments_over_cap(wsc_t *w)
{
    static uint8_t part[400];
    ck_assert_int_eq(wsc_send_frame(w, 2, false, 0, true, part, sizeof part), 0);
    ck_assert_int_eq(wsc_send_frame(w, 0, false, 0, true, part, sizeof part), 0);
    ck_assert_int_eq(wsc_send_frame(w, 0, true, 0, true, part, sizeof part), 0);
}

static void send_over_cap(wsc_t *w)
{
    static uint8_t big[2000];
    ck_assert_int_eq(wsc_send_frame(w, 2, true, 0, true, big, sizeof big), 0);
}

/* Bytes that are no ClientMessage (field 1 as a truncated varint). */
static void send_not_protobuf(wsc_t *w)
{
    ck_assert_int_eq(wsc_send_frame(w, 2, true, 0, true, "\x08\xff", 2), 0);
}

static void send_close(wsc_t *w)
{
    ck_assert_int_eq(wsc_send_frame(w, 8, true, 0, true,
                                    "\x03\xe8"
                                    "bye",
                                    5),
                     0);
}

START_TEST(test_gate_ws_each_broken_rule_gets_its_close_code)
{
    env_t e;
    env_start(&e);
    int ws;
    char *extra[] = {"--max-frame", "1024", NULL};
    testenv_server_t gate = gate_start(&e, "g1", &ws, extra);
    expect_close(ws, 1003, send_text, "text message");
    expect_close(ws, 1002, send_unmasked, "unmasked frame");
    expect_close(ws, 1002, send_rsv1, "RSV1 without an extension");
    expect_close(ws, 1002, send_rsv3, "RSV3");
    expect_close(ws, 1002, send_big_ping, "control frame of 126 bytes");
    expect_close(ws, 1002, send_bad_opcode, "reserved opcode");
    expect_close(ws, 1009, send_fragments_over_cap, "fragments over the cap");
    expect_close(ws, 1009, send_over_cap, "message over the cap");
    expect_close(ws, 1007, send_not_protobuf, "not a ClientMessage");
    expect_close(ws, 1000, send_close, "the client's close");
    ck_assert_int_eq(metric(&gate, "gate_ws_closes_total{code=\"1002\"}"), 5);
    ck_assert_int_eq(metric(&gate, "gate_ws_closes_total{code=\"1009\"}"), 2);

    /* A fragmented message under the cap is one ClientMessage; pings are answered in between
     * with their payload. */
    wsc_t *w = wsc_connect("127.0.0.1", ws, "/", NULL, 3000);
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    m.request_id = 77;
    p.nonce = 539;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    uint8_t buf[64];
    size_t n = croupier__client_message__pack(&m, buf);
    ck_assert_int_eq(wsc_send_frame(w, 2, false, 0, true, buf, 3), 0);
    ck_assert_int_eq(wsc_send_frame(w, 9, true, 0, true, "are you there", 13), 0);
    ck_assert_int_eq(wsc_send_frame(w, 0, true, 0, true, buf + 3, n - 3), 0);
    wsc_msg_t msg;
    ck_assert_int_eq(wsc_recv(w, &msg, 3000), 0);
    ck_assert_int_eq(msg.opcode, 10);
    ck_assert_int_eq(msg.len, 13);
    ck_assert_int_eq(memcmp(msg.data, "are you there", 13), 0);
    Croupier__ServerMessage *r = wsc_wait_reply(w, 77, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    ck_assert_uint_eq(r->pong->nonce, 539);
    frame_free_server(r);
    wsc_close(w);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- sessions ----------------------------------------------------------------------------------
 */

/* A WebSocket player and a TCP player at one table of a real game server: join, play, the
 * pushed round end, leave. */
START_TEST(test_gate_ws_login_join_play_leave_against_a_game_server)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e);
    int ws;
    testenv_server_t gate = gate_start(&e, "g1", &ws, NULL);
    wsc_t *w = ws_login(&e, ws, 301);
    ck_assert_int_eq(metric(&gate, "gate_transport_connections{transport=\"ws\"}"), 1);
    free(ts_redis_cmd(e.rig.redis, "SET {croupier:money}:wallet:302 1000000 NX"));
    char tok[TOKEN_MAX_LEN + 1];
    mint(&e, 302, tok);
    gatec_t *tcp = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(tcp);
    Croupier__ServerMessage *r = gatec_login(tcp, 1, tok, 3000);
    ck_assert_ptr_nonnull(r);
    frame_free_server(r);
    ck_assert_int_eq(metric(&gate, "gate_transport_connections{transport=\"tcp\"}"), 1);

    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    m.request_id = 2;
    j.engine = ENGINE_T;
    j.game = "test";
    j.stake = 10;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN;
    m.join = &j;
    ck_assert_int_eq(wsc_send_msg(w, &m), 0);
    r = wsc_wait_reply(w, 2, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    uint64_t desk = r->joined->desk_id;
    frame_free_server(r);
    r = gatec_join(tcp, 2, ENGINE_T, "test", 10, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    ck_assert_uint_eq(r->joined->desk_id, desk);
    frame_free_server(r);

    /* Actions over the WebSocket until one is played in a round (event_seq: the table's number
     * of the Play it made). */
    uint64_t rid = 3, seq = 0;
    long long end = ts_now_ms() + 5000;
    while (seq == 0 && ts_now_ms() < end) {
        Croupier__ClientMessage a = CROUPIER__CLIENT_MESSAGE__INIT;
        Croupier__Action act = CROUPIER__ACTION__INIT;
        Croupier__SheddingAction sh = CROUPIER__SHEDDING_ACTION__INIT;
        sh.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
        act.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
        act.shedding = &sh;
        a.request_id = rid;
        a.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
        a.action = &act;
        ck_assert_int_eq(wsc_send_msg(w, &a), 0);
        r = wsc_wait_reply(w, rid++, 3000);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_RESULT);
        int code = gatec_code(r);
        if (code == 0)
            seq = r->event_seq;
        else
            ck_assert_int_eq(code, CROUPIER__ERROR_CODE__NO_ROUND);
        frame_free_server(r);
        if (code != 0)
            ts_sleep_ms(20);
    }
    ck_assert_uint_gt(seq, 0);
    /* The pushed round end reaches the WebSocket player. */
    bool round_end = false;
    end = ts_now_ms() + 3000;
    while (!round_end && ts_now_ms() < end) {
        r = wsc_recv_server(w, 3000, NULL);
        ck_assert_ptr_nonnull(r);
        round_end = r->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
        frame_free_server(r);
    }
    ck_assert(round_end);
    Croupier__ClientMessage l = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Leave lv = CROUPIER__LEAVE__INIT;
    l.request_id = 100;
    l.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LEAVE;
    l.leave = &lv;
    ck_assert_int_eq(wsc_send_msg(w, &l), 0);
    r = wsc_wait_reply(w, 100, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(gatec_code(r), 0);
    frame_free_server(r);
    ck_assert_int_ge(metric(&gate, "gate_transport_frames_in_total{transport=\"ws\"}"), 4);
    ck_assert_int_ge(metric(&gate, "gate_transport_frames_out_total{transport=\"ws\"}"), 5);
    ck_assert_int_eq(metric(&gate, "gate_transport_frames_in_total{transport=\"tcp\"}"), 2);
    wsc_close(w);
    gatec_close(tcp);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_ws_login_takes_over_tcp_and_tcp_takes_over_ws)
{
    env_t e;
    env_start(&e);
    int ws;
    testenv_server_t gate = gate_start(&e, "g1", &ws, NULL);
    char tok[TOKEN_MAX_LEN + 1];
    mint(&e, 302, tok);
    gatec_t *tcp = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(tcp);
    Croupier__ServerMessage *r = gatec_login(tcp, 1, tok, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(r);
    wsc_t *w = ws_login(&e, ws, 302);
    r = gatec_next_event(tcp, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_SESSION_REPLACED);
    frame_free_server(r);
    ck_assert_int_eq(gatec_wait_eof(tcp, 3000), 0);
    gatec_close(tcp);
    ws_ping_ok(w, 2);

    tcp = gatec_connect("127.0.0.1", gate.port, 2000);
    r = gatec_login(tcp, 1, tok, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(r);
    ck_assert_int_eq(ws_goaway(w, NULL, 3000), CROUPIER__GO_AWAY_REASON__GOAWAY_SESSION_REPLACED);
    ck_assert_int_eq(wsc_wait_close(w, 3000, NULL, 0), 1000);
    ck_assert_int_eq(wsc_wait_eof(w, 3000), 0);
    wsc_close(w);
    gatec_close(tcp);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_ws_rate_limit_and_idle_timeout_with_pings_as_traffic)
{
    env_t e;
    env_start(&e);
    int ws;
    char *extra[] = {"--rate-limit", "5", "--rate-burst", "5", "--idle-timeout-ms", "700", NULL};
    testenv_server_t gate = gate_start(&e, "g1", &ws, extra);
    wsc_t *w = ws_login(&e, ws, 303);
    for (uint64_t i = 0; i < 20; i++)
        ws_ping(w, 10 + i);
    int limited = 0, answered = 0;
    for (int i = 0; i < 20; i++) {
        Croupier__ServerMessage *m = wsc_recv_server(w, 3000, NULL);
        ck_assert_ptr_nonnull(m);
        if (gatec_code(m) == CROUPIER__ERROR_CODE__RATE_LIMITED)
            limited++;
        else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_PONG)
            answered++;
        frame_free_server(m);
    }
    ck_assert_int_gt(limited, 0);
    ck_assert_int_gt(answered, 0);
    /* WebSocket pings only, every 200 ms for 2 s: the connection stays (idle timeout 700). */
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq(wsc_send_frame(w, 9, true, 0, true, "k", 1), 0);
        wsc_msg_t msg;
        ck_assert_int_eq(wsc_recv(w, &msg, 1000), 0);
        ck_assert_int_eq(msg.opcode, 10);
        ts_sleep_ms(200);
    }
    ws_ping_ok(w, 50);
    /* Then silence: GoAway{IDLE}, close 1000, a clean EOF. */
    ck_assert_int_eq(ws_goaway(w, NULL, 3000), CROUPIER__GO_AWAY_REASON__GOAWAY_IDLE);
    ck_assert_int_eq(wsc_wait_close(w, 3000, NULL, 0), 1000);
    ck_assert_int_eq(wsc_wait_eof(w, 3000), 0);
    wsc_close(w);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_gate_ws_slow_consumer_is_closed_with_goaway_and_1008)
{
    env_t e;
    env_start(&e);
    int ws;
    char *extra[] = {"--output-cap", "4096", "--rate-limit", "1000000", "--rate-burst",
                     "1000000",      NULL};
    testenv_server_t gate = gate_start(&e, "g1", &ws, extra);
    wsc_t *w = ws_login(&e, ws, 304);
    int small = 4096;
    setsockopt(wsc_fd(w), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    for (int k = 0; k < 100 && metric(&gate, "gate_slow_consumer_closes_total") == 0; k++) {
        bool sent = true;
        for (int i = 0; i < 2000 && sent; i++) {
            Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
            Croupier__Ping p = CROUPIER__PING__INIT;
            m.request_id = 1000 + (uint64_t)i;
            m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
            m.ping = &p;
            sent = wsc_send_msg(w, &m) == 0;
        }
        if (!sent)
            break;
    }
    ck_assert_int_eq(metric(&gate, "gate_slow_consumer_closes_total"), 1);
    ck_assert_int_eq(ws_goaway(w, NULL, 10000), CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED);
    ck_assert_int_eq(wsc_wait_close(w, 5000, NULL, 0), 1008);
    wsc_close(w);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- the exit ----------------------------------------------------------------------------------
 */

START_TEST(test_gate_ws_sigterm_goaway_then_close_1001_with_the_delay_then_eof)
{
    env_t e;
    env_start(&e);
    int ws;
    testenv_server_t gate = gate_start(&e, "g1", &ws, NULL);
    wsc_t *w[3];
    for (int i = 0; i < 3; i++)
        w[i] = ws_login(&e, ws, 310 + (uint64_t)i);
    gatec_t *tcp = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(tcp);
    ck_assert_int_eq(ts_proc_signal(gate.proc, SIGTERM), 0);
    for (int i = 0; i < 3; i++) {
        uint32_t delay = 0;
        ck_assert_int_eq(ws_goaway(w[i], &delay, 5000), CROUPIER__GO_AWAY_REASON__GOAWAY_SHUTDOWN);
        ck_assert_uint_le(delay, 300);
        char reason[128], want[128];
        ck_assert_int_eq(wsc_wait_close(w[i], 3000, reason, sizeof reason), 1001);
        snprintf(want, sizeof want, "shutdown; reconnect_delay_ms=%u", delay);
        ck_assert_str_eq(reason, want);
        ck_assert_int_eq(wsc_wait_eof(w[i], 3000), 0); /* the graceful TCP close, no reset */
        wsc_close(w[i]);
    }
    ck_assert_int_eq(gatec_wait_eof(tcp, 3000), 0);
    gatec_close(tcp);
    int status = -1;
    ck_assert_int_eq(ts_proc_wait(gate.proc, 5000, &status), 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(ts_proc_log_has(gate.proc, "exit reason=drained"));
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

/* ---- reading: frames split across reads, fragments, many connections ----------------------- */

/* One masked client frame into out (room for len + 14); returns its size. */
static size_t ws_frame_bytes(uint8_t *out, int opcode, bool fin, const uint8_t *p, size_t len)
{
    static const uint8_t key[4] = {0x5a, 0x17, 0xc3, 0x08};
    size_t n = 0;
    out[n++] = (uint8_t)((fin ? 0x80 : 0) | opcode);
    if (len < 126) {
        out[n++] = (uint8_t)(0x80 | len);
    } else {
        out[n++] = 0x80 | 126;
        out[n++] = (uint8_t)(len >> 8);
        out[n++] = (uint8_t)len;
    }
    memcpy(out + n, key, 4);
    n += 4;
    for (size_t i = 0; i < len; i++)
        out[n++] = p[i] ^ key[i % 4];
    return n;
}

/* The bytes of a Ping ClientMessage (request rid) into out; returns their length. */
static size_t ping_bytes(uint64_t rid, uint8_t *out, size_t cap)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    m.request_id = rid;
    p.nonce = rid * 7;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    size_t n = croupier__client_message__get_packed_size(&m);
    ck_assert_uint_le(n, cap);
    croupier__client_message__pack(&m, out);
    return n;
}

static void pong_ok(wsc_t *w, uint64_t rid)
{
    Croupier__ServerMessage *m = wsc_wait_reply(w, rid, 3000);
    ck_assert_msg(m != NULL, "no answer to request %llu", (unsigned long long)rid);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    ck_assert_uint_eq(m->pong->nonce, rid * 7);
    frame_free_server(m);
}

/* An idle connection holds no wslay context: one is lent to a connection while it reads and
 * kept by it only while it is mid-frame or mid-message (gateway/gate_ws.c). Frames cut at
 * every point, a fragmented message with a ping between its fragments, and another connection
 * reading in between must all be read whole, each on its own connection. */
START_TEST(test_gate_ws_split_and_fragmented_frames_are_read_whole_beside_other_connections)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = game_start(&e);
    int ws;
    testenv_server_t gate = gate_start(&e, "g1", &ws, NULL);
    wsc_t *a = ws_login(&e, ws, 401), *b = ws_login(&e, ws, 402);
    uint8_t msg[64], fr[128];
    uint64_t rid = 10;
    /* A frame cut after each of its bytes in turn: A is mid-frame while B is served. */
    size_t mlen = ping_bytes(rid, msg, sizeof msg);
    size_t flen = ws_frame_bytes(fr, 2, true, msg, mlen);
    for (size_t cut = 1; cut < flen; cut++, rid += 2) {
        mlen = ping_bytes(rid, msg, sizeof msg);
        flen = ws_frame_bytes(fr, 2, true, msg, mlen);
        ck_assert_int_eq(wsc_send_raw(a, fr, cut), 0);
        ts_sleep_ms(5);
        ws_ping_ok(b, rid + 1);
        ck_assert_int_eq(wsc_send_raw(a, fr + cut, flen - cut), 0);
        pong_ok(a, rid);
    }
    /* A fragmented message with a ping between its fragments, B served in between. */
    mlen = ping_bytes(rid, msg, sizeof msg);
    size_t half = mlen / 2;
    flen = ws_frame_bytes(fr, 2, false, msg, half);
    ck_assert_int_eq(wsc_send_raw(a, fr, flen), 0);
    ts_sleep_ms(5);
    ws_ping_ok(b, rid + 1);
    ck_assert_int_eq(wsc_send_frame(a, 9, true, 0, true, "hi", 2), 0);
    wsc_msg_t got;
    ck_assert_int_eq(wsc_recv(a, &got, 3000), 0);
    ck_assert_int_eq(got.opcode, 10);
    ck_assert_uint_eq(got.len, 2);
    ck_assert(memcmp(got.data, "hi", 2) == 0);
    ws_ping_ok(b, rid + 3);
    flen = ws_frame_bytes(fr, 0, true, msg + half, mlen - half);
    ck_assert_int_eq(wsc_send_raw(a, fr, flen), 0);
    pong_ok(a, rid);
    rid += 4;
    /* Many messages in one write, the last one cut: all but it answered, then it too. */
    uint8_t burst[20 * 80];
    size_t blen = 0, last = 0;
    for (int i = 0; i < 20; i++) {
        mlen = ping_bytes(rid + (uint64_t)i, msg, sizeof msg);
        last = blen;
        blen += ws_frame_bytes(burst + blen, 2, true, msg, mlen);
    }
    ck_assert_int_eq(wsc_send_raw(a, burst, last + 3), 0);
    for (int i = 0; i < 19; i++)
        pong_ok(a, rid + (uint64_t)i);
    ws_ping_ok(b, rid + 100);
    ck_assert_int_eq(wsc_send_raw(a, burst + last + 3, blen - last - 3), 0);
    pong_ok(a, rid + 19);
    /* Nothing was refused: both connections are still open and answer. */
    ws_ping_ok(a, 1000);
    ws_ping_ok(b, 1001);
    ck_assert_int_le(metric(&gate, "gate_ws_closes_total{code=\"1002\"}"), 0);
    wsc_close(a);
    wsc_close(b);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_ws");
    struct {
        const char *name;
        const TTest *tests[4];
    } cases[] = {
        {"handshake", {test_gate_ws_handshake_refusals_get_their_status_and_a_clean_close, NULL}},
        {"rules", {test_gate_ws_each_broken_rule_gets_its_close_code, NULL}},
        {"reading",
         {test_gate_ws_split_and_fragmented_frames_are_read_whole_beside_other_connections, NULL}},
        {"sessions",
         {test_gate_ws_login_join_play_leave_against_a_game_server,
          test_gate_ws_login_takes_over_tcp_and_tcp_takes_over_ws,
          test_gate_ws_rate_limit_and_idle_timeout_with_pings_as_traffic, NULL}},
        {"slow", {test_gate_ws_slow_consumer_is_closed_with_goaway_and_1008, NULL}},
        {"exit", {test_gate_ws_sigterm_goaway_then_close_1001_with_the_delay_then_eof, NULL}},
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
