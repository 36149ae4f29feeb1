/*
 * The gateway's edge limits (docs/gateway.md "Edge limits", issue 26): connection caps, the
 * WebSocket handshake, Login, partial-frame and write deadlines, and the per-player request
 * rate, against a real redis-server and a real croupier-gate on loopback, driven by raw sockets,
 * gatec (tests/support/gatec.h) and wsc (tests/support/wsc.h). No game server is needed: every
 * request used here (Ping, ListTables) is answered by the gateway itself.
 *
 * Deadlines are set short (300-500 ms) and every wait is a bounded loop far longer than them:
 * the tests check that the connection is closed with its reason, never how fast.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"
#include "wsc.h"

#define SECRET "gate-edge-test-secret-0123456789"

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

/* croupier-gate with short close timers; *ws_port (when not NULL) gets a WebSocket listener on
 * a free port; extra: NULL-terminated additional flags. */
static testenv_server_t gate_start(env_t *e, int *ws_port, char *const extra[])
{
    char *args[40] = {"--drain-window-ms",  "200", "--close-timeout-ms", "2000",
                      "--goaway-spread-ms", "300"};
    int n = 6;
    char addr[64];
    if (ws_port != NULL) {
        *ws_port = ts_free_port();
        ck_assert_int_gt(*ws_port, 0);
        snprintf(addr, sizeof addr, "127.0.0.1:%d", *ws_port);
        args[n++] = "--ws-listen";
        args[n++] = addr;
    }
    for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
        ck_assert_int_lt(n, 39);
        args[n++] = extra[i];
    }
    args[n] = NULL;
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_gate(&e->rig, &g, "edge", args), 0);
    return g;
}

static void stop_all(env_t *e, testenv_server_t *gate)
{
    testenv_stop_server(gate);
    testenv_stop(&e->rig);
}

/* The value of one series in the gateway's /metrics, or -1 when it is missing. */
static long metric(const testenv_server_t *gate, const char *series)
{
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", gate->health, "/metrics", 2000, &body), 200);
    char want[256];
    snprintf(want, sizeof want, "\n%s ", series);
    const char *at = strstr(body, want);
    long v = at != NULL ? strtol(at + strlen(want), NULL, 10) : -1;
    free(body);
    return v;
}

/* Polls a series until it equals want (at most ~10 s); returns its last value. */
static long metric_wait(const testenv_server_t *gate, const char *series, long want)
{
    long v = -1;
    for (int i = 0; i < 200 && (v = metric(gate, series)) != want; i++)
        ts_sleep_ms(50);
    return v;
}

static void mint(env_t *e, uint64_t player, char *out)
{
    ck_assert_int_gt(token_mint(&e->secret, player, time(NULL) + 600, out, TOKEN_MAX_LEN + 1), 0);
}

/* Connects over TCP and logs player in. */
static gatec_t *login(env_t *e, const testenv_server_t *gate, uint64_t player)
{
    gatec_t *c = gatec_connect("127.0.0.1", gate->port, 2000);
    ck_assert_ptr_nonnull(c);
    char tok[TOKEN_MAX_LEN + 1];
    mint(e, player, tok);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(m);
    return c;
}

/* Waits for a GoAway (bounded) and checks its reason and that its detail holds `detail`. */
static void expect_goaway(gatec_t *c, int reason, const char *detail)
{
    Croupier__ServerMessage *m = gatec_next_event(c, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 10000);
    ck_assert_msg(m != NULL, "no GoAway");
    ck_assert_int_eq(m->go_away->reason, reason);
    ck_assert_ptr_nonnull(m->go_away->detail);
    ck_assert_msg(strstr(m->go_away->detail, detail) != NULL, "GoAway detail '%s'",
                  m->go_away->detail);
    frame_free_server(m);
}

/* One ping frame (request id rid) in buf; returns its size. */
static size_t ping_frame(uint64_t rid, uint8_t *buf, size_t cap)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    m.request_id = rid;
    p.nonce = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    ssize_t n = frame_encode(&m.base, NULL, buf, cap, NULL);
    ck_assert_int_gt(n, 0);
    return (size_t)n;
}

/* A raw TCP connection to port from the loopback source address src (127.0.0.0/8), or -1. */
static int dial_from(const char *src, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in s = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &s.sin_addr);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (bind(fd, (struct sockaddr *)&s, sizeof s) != 0 ||
        connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads one ServerMessage frame from a raw socket within timeout_ms; NULL on timeout or EOF. */
static Croupier__ServerMessage *read_frame(int fd, int timeout_ms)
{
    uint8_t buf[4096];
    size_t have = 0, need = 4;
    long long end = ts_now_ms() + timeout_ms;
    while (have < need && ts_now_ms() < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t r = read(fd, buf + have, need - have);
        if (r <= 0)
            return NULL;
        have += (size_t)r;
        if (have == 4 && need == 4) {
            need = 4 + ((size_t)buf[0] << 24 | (size_t)buf[1] << 16 | (size_t)buf[2] << 8 | buf[3]);
            ck_assert_uint_le(need, sizeof buf);
        }
    }
    if (have < need || need == 4)
        return NULL;
    return frame_unpack_server(buf + 4, need - 4, NULL, NULL);
}

/* ---- deadlines ------------------------------------------------------------------------------- */

START_TEST(test_gate_edge_partial_frame_is_closed_at_the_frame_deadline)
{
    env_t e;
    env_start(&e);
    char *extra[] = {"--frame-timeout-ms", "500", NULL};
    testenv_server_t gate = gate_start(&e, NULL, extra);
    gatec_t *c = login(&e, &gate, 11);
    /* A frame header announcing 200 bytes, then one byte every 100 ms: every byte is traffic
     * (the idle timeout never fires), but the frame is never completed. */
    static const uint8_t head[4] = {0, 0, 0, 200};
    ck_assert_int_eq(gatec_send_raw(c, head, sizeof head), 0);
    Croupier__ServerMessage *m = NULL;
    for (int i = 0; i < 60 && m == NULL; i++) {
        if (gatec_send_raw(c, "x", 1) != 0)
            break;
        m = gatec_recv(c, 100);
    }
    ck_assert_msg(m != NULL, "the slowloris connection was never closed");
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY);
    ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_PROTOCOL_ERROR);
    ck_assert_ptr_nonnull(strstr(m->go_away->detail, "not completed within 500 ms"));
    frame_free_server(m);
    int eof = gatec_wait_eof(c, 10000);
    ck_assert(eof == 0 || eof == -ECONNRESET); /* we were still sending: a reset is fair */
    gatec_close(c);
    ck_assert_int_eq(metric(&gate, "gate_deadline_closes_total{deadline=\"frame\"}"), 1);

    /* A frame in two pieces, the second well within the deadline, passes. */
    c = login(&e, &gate, 12);
    uint8_t f[64];
    size_t n = ping_frame(77, f, sizeof f);
    ck_assert_int_eq(gatec_send_raw(c, f, 3), 0);
    ts_sleep_ms(50);
    ck_assert_int_eq(gatec_send_raw(c, f + 3, n - 3), 0);
    m = gatec_wait_reply(c, 77, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    gatec_close(c);
    ck_assert_int_eq(metric(&gate, "gate_deadline_closes_total{deadline=\"frame\"}"), 1);
    ck_assert(ts_proc_log_has(gate.proc, "client_deadline"));
    stop_all(&e, &gate);
}
END_TEST

START_TEST(test_gate_edge_no_login_is_closed_at_the_login_deadline)
{
    env_t e;
    env_start(&e);
    char *extra[] = {"--login-timeout-ms", "1000", NULL};
    testenv_server_t gate = gate_start(&e, NULL, extra);
    /* Pings keep the connection busy (not idle), but it never logs in. */
    gatec_t *c = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    Croupier__ServerMessage *m = NULL;
    for (int i = 0; i < 60 && m == NULL; i++) {
        uint8_t f[64];
        size_t n = ping_frame(100 + (uint64_t)i, f, sizeof f);
        if (gatec_send_raw(c, f, n) != 0)
            break;
        Croupier__ServerMessage *r;
        while ((r = gatec_recv(c, 100)) != NULL && m == NULL) {
            if (r->body_case == CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY)
                m = r;
            else
                frame_free_server(r);
        }
    }
    ck_assert_msg(m != NULL, "a connection that never logged in was never closed");
    ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_PROTOCOL_ERROR);
    ck_assert_ptr_nonnull(strstr(m->go_away->detail, "no Login within 1000 ms"));
    frame_free_server(m);
    int eof = gatec_wait_eof(c, 10000);
    ck_assert(eof == 0 || eof == -ECONNRESET);
    gatec_close(c);
    ck_assert_int_eq(metric(&gate, "gate_deadline_closes_total{deadline=\"login\"}"), 1);

    /* A connection that logged in in time stays, long past the deadline. */
    c = login(&e, &gate, 21);
    ts_sleep_ms(1500);
    m = gatec_ping(c, 5, 5, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    gatec_close(c);
    ck_assert_int_eq(metric(&gate, "gate_deadline_closes_total{deadline=\"login\"}"), 1);
    stop_all(&e, &gate);
}
END_TEST

START_TEST(test_gate_edge_partial_ws_handshake_is_closed_at_the_deadline)
{
    env_t e;
    env_start(&e);
    int ws;
    char *extra[] = {"--ws-handshake-timeout-ms", "1000", NULL};
    testenv_server_t gate = gate_start(&e, &ws, extra);
    wsc_t *w = wsc_open("127.0.0.1", ws, 2000);
    ck_assert_ptr_nonnull(w);
    static const char head[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    ck_assert_int_eq(wsc_send_raw(w, head, sizeof head - 1), 0);
    /* One byte every 100 ms: the request never ends. The answer is a 408, then the close. */
    int status = -ETIMEDOUT;
    char resp[1024];
    for (int i = 0; i < 60 && status == -ETIMEDOUT; i++) {
        if (wsc_send_raw(w, "a", 1) != 0)
            break;
        status = wsc_read_http(w, 100, resp, sizeof resp);
    }
    ck_assert_int_eq(status, 408);
    int eof = wsc_wait_eof(w, 10000);
    ck_assert(eof == 0 || eof == -ECONNRESET);
    wsc_close(w);
    ck_assert_int_eq(metric(&gate, "gate_deadline_closes_total{deadline=\"ws_handshake\"}"), 1);

    /* A socket that sends nothing is closed too (no answer: there is no request). */
    w = wsc_open("127.0.0.1", ws, 2000);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(wsc_wait_eof(w, 10000), 0);
    wsc_close(w);
    ck_assert_int_eq(metric(&gate, "gate_deadline_closes_total{deadline=\"ws_handshake\"}"), 2);

    /* A prompt handshake is not affected. */
    w = wsc_connect("127.0.0.1", ws, "/", NULL, 3000);
    ck_assert_ptr_nonnull(w);
    wsc_close(w);
    stop_all(&e, &gate);
}
END_TEST

START_TEST(test_gate_edge_partial_ws_message_is_closed_at_the_frame_deadline)
{
    env_t e;
    env_start(&e);
    int ws;
    char *extra[] = {"--frame-timeout-ms", "300", NULL};
    testenv_server_t gate = gate_start(&e, &ws, extra);
    wsc_t *w = wsc_connect("127.0.0.1", ws, "/", NULL, 3000);
    ck_assert_ptr_nonnull(w);
    /* A fragmented binary message whose fragments keep coming, each one byte, and which never
     * ends (no FIN): traffic, but never a whole message. */
    int code = -ETIMEDOUT;
    char reason[128] = "";
    ck_assert_int_eq(wsc_send_frame(w, 2, false, 0, true, "x", 1), 0);
    for (int i = 0; i < 60 && code == -ETIMEDOUT; i++) {
        if (wsc_send_frame(w, 0, false, 0, true, "x", 1) != 0)
            break;
        code = wsc_wait_close(w, 100, reason, sizeof reason);
    }
    ck_assert_int_eq(code, 1008);
    ck_assert_str_eq(reason, "frame_timeout");
    wsc_close(w);
    ck_assert_int_eq(metric(&gate, "gate_deadline_closes_total{deadline=\"frame\"}"), 1);
    stop_all(&e, &gate);
}
END_TEST

START_TEST(test_gate_edge_client_that_never_reads_is_closed_at_the_write_deadline)
{
    env_t e;
    env_start(&e);
    /* No output cap in the way (1 GiB): only the write deadline can close it. */
    char *extra[] = {"--write-timeout-ms", "500",          "--output-cap",
                     "1073741824",         "--rate-limit", "1000000",
                     "--rate-burst",       "1000000",      NULL};
    testenv_server_t gate = gate_start(&e, NULL, extra);
    gatec_t *c = login(&e, &gate, 31);
    int small = 4096;
    setsockopt(gatec_fd(c), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    /* Pings in batches, never reading the pongs: once the socket buffers are full the
     * gateway's output stops moving, and after 500 ms the connection is closed. */
    static uint8_t batch[5000 * 16];
    size_t len = 0;
    for (int i = 0; i < 5000; i++)
        len += ping_frame(1000 + (uint64_t)i, batch + len, sizeof batch - len);
    long closes = -1;
    for (int k = 0; k < 40 && closes != 1; k++) {
        if (gatec_send_raw(c, batch, len) != 0)
            break;
        for (int i = 0; i < 10 && closes != 1; i++) {
            closes = metric(&gate, "gate_deadline_closes_total{deadline=\"write\"}");
            ts_sleep_ms(100);
        }
    }
    ck_assert_int_eq(metric_wait(&gate, "gate_deadline_closes_total{deadline=\"write\"}", 1), 1);
    ck_assert_int_eq(metric(&gate, "gate_slow_consumer_closes_total"), 0);
    /* Gone from the gateway (freed at the close timeout: its output was never taken). Its
     * side of the socket is not read to the end here: after this long at a zero window the
     * kernel's persist timer has backed off for seconds, which says nothing about the gate. */
    ck_assert_int_eq(metric_wait(&gate, "gate_connections", 0), 0);
    gatec_close(c);
    ck_assert(ts_proc_log_has(gate.proc, "\"deadline\":\"write\""));
    stop_all(&e, &gate);
}
END_TEST

/* ---- caps ------------------------------------------------------------------------------------ */

START_TEST(test_gate_edge_total_cap_refuses_the_next_connection)
{
    env_t e;
    env_start(&e);
    int ws;
    char *extra[] = {"--max-conns", "2", NULL};
    testenv_server_t gate = gate_start(&e, &ws, extra);
    gatec_t *a = login(&e, &gate, 41);
    gatec_t *b = login(&e, &gate, 42);
    /* The third, on either listener, is told why and closed. */
    gatec_t *c = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    expect_goaway(c, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED, "over capacity");
    ck_assert_int_eq(gatec_wait_eof(c, 10000), 0);
    gatec_close(c);
    wsc_t *w = wsc_connect("127.0.0.1", ws, "/", NULL, 3000);
    ck_assert_ptr_nonnull(w);
    int close_code = 0;
    Croupier__ServerMessage *m = wsc_recv_server(w, 10000, &close_code);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY);
    ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED);
    frame_free_server(m);
    char reason[128] = "";
    ck_assert_int_eq(wsc_wait_close(w, 10000, reason, sizeof reason), 1008);
    ck_assert_str_eq(reason, "over_capacity");
    wsc_close(w);
    ck_assert_int_eq(metric(&gate, "gate_connections_refused_total{reason=\"max_conns\"}"), 2);
    /* The admitted ones are untouched; once one leaves, a place is free again. */
    m = gatec_ping(a, 9, 9, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    gatec_close(b);
    ck_assert_int_eq(metric_wait(&gate, "gate_connections", 1), 1);
    gatec_t *d = login(&e, &gate, 43);
    gatec_close(d);
    gatec_close(a);
    ck_assert_int_eq(metric(&gate, "gate_connections_refused_total{reason=\"max_conns\"}"), 2);
    stop_all(&e, &gate);
}
END_TEST

START_TEST(test_gate_edge_at_the_cap_a_connection_not_logged_in_makes_room)
{
    env_t e;
    env_start(&e);
    char *extra[] = {"--max-conns", "2", NULL};
    testenv_server_t gate = gate_start(&e, NULL, extra);
    gatec_t *a = login(&e, &gate, 71);
    /* A socket that never logs in holds the second place ... */
    gatec_t *idle = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(idle);
    ck_assert_int_eq(metric_wait(&gate, "gate_connections", 2), 2);
    /* ... until a new connection needs it: the player gets in, the idle socket is told why. */
    gatec_t *b = login(&e, &gate, 72);
    expect_goaway(idle, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED, "had not logged in");
    ck_assert_int_eq(gatec_wait_eof(idle, 10000), 0);
    gatec_close(idle);
    ck_assert_int_eq(metric(&gate, "gate_connections_evicted_total"), 1);
    ck_assert_int_eq(metric(&gate, "gate_connections_refused_total{reason=\"max_conns\"}"), 0);
    /* Logged-in players are never taken: with both places theirs, the next one is refused. */
    gatec_t *c = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    expect_goaway(c, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED, "holds 2 connections");
    gatec_close(c);
    Croupier__ServerMessage *m = gatec_ping(a, 9, 9, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    gatec_close(a);
    gatec_close(b);
    stop_all(&e, &gate);
}
END_TEST

START_TEST(test_gate_edge_per_address_cap_refuses_the_next_connection_from_that_address)
{
    env_t e;
    env_start(&e);
    char *extra[] = {"--max-conns-per-addr", "2", NULL};
    testenv_server_t gate = gate_start(&e, NULL, extra);
    gatec_t *a = login(&e, &gate, 51);
    gatec_t *b = login(&e, &gate, 52);
    gatec_t *c = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    expect_goaway(c, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED, "from your address");
    ck_assert_int_eq(gatec_wait_eof(c, 10000), 0);
    gatec_close(c);
    ck_assert_int_eq(metric(&gate, "gate_connections_refused_total{reason=\"max_conns_per_addr\"}"),
                     1);
    /* Another source address is let in: its ping is answered. */
    int fd = dial_from("127.0.0.2", gate.port);
    ck_assert_int_ge(fd, 0);
    uint8_t f[64];
    size_t n = ping_frame(3, f, sizeof f);
    ck_assert_int_eq(write(fd, f, n), (ssize_t)n);
    Croupier__ServerMessage *m = read_frame(fd, 5000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    close(fd);
    ck_assert_int_eq(metric(&gate, "gate_connections_refused_total{reason=\"max_conns_per_addr\"}"),
                     1);
    gatec_close(a);
    gatec_close(b);
    stop_all(&e, &gate);
}
END_TEST

/* ---- per-player rate ------------------------------------------------------------------------- */

/* ListTables (answered by the gateway from Redis); returns the error code (0: a TableList). */
static int list(gatec_t *c, uint64_t rid)
{
    Croupier__ServerMessage *m = gatec_list_tables(c, rid, 0, NULL, 0, 3000);
    ck_assert_ptr_nonnull(m);
    int code = gatec_code(m);
    if (code == CROUPIER__ERROR_CODE__RATE_LIMITED)
        ck_assert_ptr_nonnull(strstr(m->result->error->message, "player"));
    else
        ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST);
    frame_free_server(m);
    return code;
}

START_TEST(test_gate_edge_player_rate_spans_the_players_connections)
{
    env_t e;
    env_start(&e);
    /* The per-connection bucket is large: only the player's (5, then 1/s) can refuse. */
    char *extra[] = {"--player-rate-limit",
                     "1",
                     "--player-rate-burst",
                     "5",
                     "--rate-limit",
                     "1000",
                     "--rate-burst",
                     "1000",
                     NULL};
    testenv_server_t gate = gate_start(&e, NULL, extra);
    gatec_t *a = login(&e, &gate, 61);
    for (uint64_t rid = 10; rid < 14; rid++)
        ck_assert_int_eq(list(a, rid), 0);
    /* The same player's second connection (it takes the session over) starts with what the
     * first left: about one request, not a fresh burst of five. */
    gatec_t *b = login(&e, &gate, 61);
    int limited = 0;
    for (uint64_t rid = 20; rid < 26; rid++)
        limited += list(b, rid) == CROUPIER__ERROR_CODE__RATE_LIMITED;
    ck_assert_int_ge(limited, 1);
    ck_assert_int_ge(metric(&gate, "gate_player_rate_limited_total"), limited);
    /* Another player is not limited by it. */
    gatec_t *o = login(&e, &gate, 62);
    for (uint64_t rid = 30; rid < 34; rid++)
        ck_assert_int_eq(list(o, rid), 0);
    gatec_close(o);
    gatec_close(b);
    gatec_close(a);
    stop_all(&e, &gate);
}
END_TEST

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    Suite *s = suite_create("gate_edge");
    TCase *tc = tcase_create("deadlines");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gate_edge_partial_frame_is_closed_at_the_frame_deadline);
    tcase_add_test(tc, test_gate_edge_no_login_is_closed_at_the_login_deadline);
    tcase_add_test(tc, test_gate_edge_partial_ws_handshake_is_closed_at_the_deadline);
    tcase_add_test(tc, test_gate_edge_partial_ws_message_is_closed_at_the_frame_deadline);
    tcase_add_test(tc, test_gate_edge_client_that_never_reads_is_closed_at_the_write_deadline);
    suite_add_tcase(s, tc);
    tc = tcase_create("caps");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gate_edge_total_cap_refuses_the_next_connection);
    tcase_add_test(tc, test_gate_edge_at_the_cap_a_connection_not_logged_in_makes_room);
    tcase_add_test(tc,
                   test_gate_edge_per_address_cap_refuses_the_next_connection_from_that_address);
    suite_add_tcase(s, tc);
    tc = tcase_create("player_rate");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gate_edge_player_rate_spans_the_players_connections);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
