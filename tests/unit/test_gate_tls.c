/*
 * TLS on the gateway's listeners (issue 17, docs/gateway.md "TLS"): a real redis-server and a
 * real croupier-gate with --tls-cert/--tls-key on both its TCP and WebSocket listeners, with
 * certificates this test makes (openssl CLI), driven by tests/support/wsc.h over OpenSSL.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "support.h"
#include "testenv.h"
#include "token.h"
#include "wsc.h"

#define SECRET "gate-tls-test-secret-0123456789"

typedef struct {
    testenv_t rig;
    token_secret_t secret;
    char *dir; /* the certificates */
    char cert[512], key[512];
} env_t;

/* A self-signed P-256 certificate for CN=cn into cert and key (replacing them). */
static void make_cert(env_t *e, const char *cn)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout %s.new -out %s.new -days 2 -subj /CN=%s >/dev/null 2>&1 && "
             "mv %s.new %s && mv %s.new %s",
             e->key, e->cert, cn, e->key, e->key, e->cert, e->cert);
    int rc = system(cmd);
    ck_assert_msg(rc == 0, "cannot make a test certificate: the openssl command failed (%d)", rc);
}

static void env_start(env_t *e, const char *cn)
{
    memset(e, 0, sizeof *e);
    ck_assert_int_eq(testenv_start(&e->rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&e->secret, SECRET, strlen(SECRET)), 0);
    e->dir = ts_tmpdir();
    ck_assert_ptr_nonnull(e->dir);
    snprintf(e->cert, sizeof e->cert, "%s/cert.pem", e->dir);
    snprintf(e->key, sizeof e->key, "%s/key.pem", e->dir);
    make_cert(e, cn);
}

static void env_stop(env_t *e)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", e->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", e->dir);
    free(e->dir);
    testenv_stop(&e->rig);
}

/* croupier-gate with TLS on both listeners; *ws_port its WebSocket port; extra: more flags
 * (NULL-terminated) or NULL. */
static testenv_server_t gate_start(env_t *e, int *ws_port, char *const extra[])
{
    int port = ts_free_port();
    ck_assert_int_gt(port, 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    char *args[24] = {"--drain-window-ms",
                      "200",
                      "--close-timeout-ms",
                      "2000",
                      "--goaway-spread-ms",
                      "300",
                      "--ws-listen",
                      addr,
                      "--tls-cert",
                      e->cert,
                      "--tls-key",
                      e->key,
                      NULL};
    int n = 12;
    for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
        ck_assert_int_lt(n, 23);
        args[n++] = extra[i];
    }
    args[n] = NULL;
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_gate(&e->rig, &g, "g1", args), 0);
    *ws_port = port;
    return g;
}

/* A client context that trusts anything (the test checks the certificate's name itself);
 * max_version 0 = any. */
static SSL_CTX *client_ctx(int max_version)
{
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    ck_assert_ptr_nonnull(c);
    SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL);
    if (max_version != 0) {
        SSL_CTX_set_security_level(c, 0); /* so that the client offers the old version at all */
        SSL_CTX_set_min_proto_version(c, 0);
        SSL_CTX_set_max_proto_version(c, max_version);
    }
    return c;
}

/* The CN of the gateway's certificate on this connection. */
static void peer_cn(wsc_t *w, char *out, size_t cap)
{
    X509 *x = SSL_get1_peer_certificate(wsc_ssl(w));
    ck_assert_ptr_nonnull(x);
    X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, out, (int)cap);
    X509_free(x);
}

static void framed_ping_ok(wsc_t *w, uint64_t rid)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    m.request_id = rid;
    p.nonce = rid + 1;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    ck_assert_int_eq(wsc_send_framed(w, &m), 0);
    Croupier__ServerMessage *r = wsc_recv_framed(w, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    ck_assert_uint_eq(r->pong->nonce, rid + 1);
    frame_free_server(r);
}

static void ws_ping_ok(wsc_t *w, uint64_t rid)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    m.request_id = rid;
    p.nonce = rid + 1;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    ck_assert_int_eq(wsc_send_msg(w, &m), 0);
    Croupier__ServerMessage *r = wsc_wait_reply(w, rid, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(r);
}

/* Logs player in over the TCP framing. */
static void framed_login(env_t *e, wsc_t *w, uint64_t player)
{
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&e->secret, player, time(NULL) + 600, tok, sizeof tok), 0);
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Login l = CROUPIER__LOGIN__INIT;
    m.request_id = 1;
    l.token = tok;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
    m.login = &l;
    ck_assert_int_eq(wsc_send_framed(w, &m), 0);
    Croupier__ServerMessage *r = wsc_recv_framed(w, 3000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    ck_assert_uint_eq(r->login_result->player_id, player);
    frame_free_server(r);
}

START_TEST(test_gate_tls_both_listeners_speak_tls12_or_later_only)
{
    env_t e;
    env_start(&e, "gate-one");
    int ws;
    testenv_server_t gate = gate_start(&e, &ws, NULL);
    SSL_CTX *any = client_ctx(0);
    wsc_t *t = wsc_open_tls("127.0.0.1", gate.port, any, 3000);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_ge(SSL_version(wsc_ssl(t)), TLS1_2_VERSION);
    char cn[64];
    peer_cn(t, cn, sizeof cn);
    ck_assert_str_eq(cn, "gate-one");
    framed_login(&e, t, 401);
    framed_ping_ok(t, 2);

    wsc_t *w = wsc_connect_tls("127.0.0.1", ws, "/", NULL, any, 3000);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_ge(SSL_version(wsc_ssl(w)), TLS1_2_VERSION);
    ws_ping_ok(w, 3);

    /* A client that cannot go above TLS 1.1 gets no connection, on either listener. */
    SSL_CTX *old = client_ctx(TLS1_1_VERSION);
    ck_assert_ptr_null(wsc_open_tls("127.0.0.1", gate.port, old, 3000));
    ck_assert_ptr_null(wsc_open_tls("127.0.0.1", ws, old, 3000));
    /* Plain bytes on the TLS port are no handshake: the connection is closed, nothing answered. */
    wsc_t *plain = wsc_open("127.0.0.1", gate.port, 3000);
    ck_assert_ptr_nonnull(plain);
    ck_assert_int_eq(wsc_send_raw(plain, "\0\0\0\2\x08\x01", 6), 0);
    ck_assert_int_ne(wsc_wait_eof(plain, 3000), -ETIMEDOUT);
    wsc_close(plain);
    framed_ping_ok(t, 4); /* the others are unaffected */
    wsc_close(t);
    wsc_close(w);
    SSL_CTX_free(any);
    SSL_CTX_free(old);
    testenv_stop_server(&gate);
    env_stop(&e);
}
END_TEST

START_TEST(test_gate_tls_sighup_rereads_the_certificate_and_keeps_connections)
{
    env_t e;
    env_start(&e, "gate-one");
    int ws;
    testenv_server_t gate = gate_start(&e, &ws, NULL);
    SSL_CTX *any = client_ctx(0);
    wsc_t *t1 = wsc_open_tls("127.0.0.1", gate.port, any, 3000);
    ck_assert_ptr_nonnull(t1);
    framed_login(&e, t1, 402);
    wsc_t *w1 = wsc_connect_tls("127.0.0.1", ws, "/", NULL, any, 3000);
    ck_assert_ptr_nonnull(w1);

    make_cert(&e, "gate-two");
    ck_assert_int_eq(ts_proc_signal(gate.proc, SIGHUP), 0);
    ck_assert_int_eq(ts_proc_wait_log(gate.proc, "tls_reloaded", 5000), 0);
    /* The open connections carry on; new ones get the new certificate. */
    framed_ping_ok(t1, 2);
    ws_ping_ok(w1, 3);
    char cn[64];
    wsc_t *t2 = wsc_open_tls("127.0.0.1", gate.port, any, 3000);
    ck_assert_ptr_nonnull(t2);
    peer_cn(t2, cn, sizeof cn);
    ck_assert_str_eq(cn, "gate-two");
    wsc_t *w2 = wsc_connect_tls("127.0.0.1", ws, "/", NULL, any, 3000);
    ck_assert_ptr_nonnull(w2);
    peer_cn(w2, cn, sizeof cn);
    ck_assert_str_eq(cn, "gate-two");

    /* A broken certificate file: the reload fails, the current certificate stays. */
    FILE *f = fopen(e.cert, "w");
    ck_assert_ptr_nonnull(f);
    fputs("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n", f);
    fclose(f);
    ck_assert_int_eq(ts_proc_signal(gate.proc, SIGHUP), 0);
    ck_assert_int_eq(ts_proc_wait_log(gate.proc, "tls_reload_failed", 5000), 0);
    wsc_t *t3 = wsc_open_tls("127.0.0.1", gate.port, any, 3000);
    ck_assert_ptr_nonnull(t3);
    peer_cn(t3, cn, sizeof cn);
    ck_assert_str_eq(cn, "gate-two");
    framed_ping_ok(t1, 4);
    framed_ping_ok(t2, 5);
    ck_assert(ts_proc_alive(gate.proc));
    wsc_close(t1);
    wsc_close(t2);
    wsc_close(t3);
    wsc_close(w1);
    wsc_close(w2);
    SSL_CTX_free(any);
    testenv_stop_server(&gate);
    env_stop(&e);
}
END_TEST

START_TEST(test_gate_tls_sigterm_goaway_then_close_notify_and_fin_no_reset)
{
    env_t e;
    env_start(&e, "gate-one");
    int ws;
    testenv_server_t gate = gate_start(&e, &ws, NULL);
    SSL_CTX *any = client_ctx(0);
    wsc_t *t = wsc_open_tls("127.0.0.1", gate.port, any, 3000);
    ck_assert_ptr_nonnull(t);
    framed_login(&e, t, 403);
    wsc_t *w = wsc_connect_tls("127.0.0.1", ws, "/", NULL, any, 3000);
    ck_assert_ptr_nonnull(w);
    ws_ping_ok(w, 2);
    ck_assert_int_eq(ts_proc_signal(gate.proc, SIGTERM), 0);
    Croupier__ServerMessage *r = wsc_recv_framed(t, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY);
    ck_assert_int_eq(r->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_SHUTDOWN);
    frame_free_server(r);
    ck_assert_int_eq(wsc_wait_eof(t, 3000), 0);
    r = wsc_recv_server(w, 5000, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY);
    frame_free_server(r);
    ck_assert_int_eq(wsc_wait_close(w, 3000, NULL, 0), 1001);
    ck_assert_int_eq(wsc_wait_eof(w, 3000), 0);
    wsc_close(t);
    wsc_close(w);
    int status = -1;
    ck_assert_int_eq(ts_proc_wait(gate.proc, 5000, &status), 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(ts_proc_log_has(gate.proc, "exit reason=drained"));
    SSL_CTX_free(any);
    testenv_stop_server(&gate);
    env_stop(&e);
}
END_TEST

/* The connection caps over TLS (docs/gateway.md "Edge limits"): a refused connection still
 * gets its GoAway{OVERLOADED} through TLS (and over wss after the handshake, the close 1008). */
START_TEST(test_gate_tls_connection_over_the_cap_is_told_why_through_tls)
{
    env_t e;
    env_start(&e, "gate-one");
    int ws;
    char *extra[] = {"--max-conns", "1", NULL};
    testenv_server_t gate = gate_start(&e, &ws, extra);
    SSL_CTX *any = client_ctx(0);
    wsc_t *t = wsc_open_tls("127.0.0.1", gate.port, any, 3000);
    ck_assert_ptr_nonnull(t);
    framed_login(&e, t, 404);
    wsc_t *t2 = wsc_open_tls("127.0.0.1", gate.port, any, 3000);
    ck_assert_ptr_nonnull(t2);
    Croupier__ServerMessage *r = wsc_recv_framed(t2, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY);
    ck_assert_int_eq(r->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED);
    ck_assert_ptr_nonnull(strstr(r->go_away->detail, "over capacity"));
    frame_free_server(r);
    ck_assert_int_eq(wsc_wait_eof(t2, 5000), 0);
    wsc_close(t2);
    wsc_t *w = wsc_connect_tls("127.0.0.1", ws, "/", NULL, any, 3000);
    ck_assert_ptr_nonnull(w);
    r = wsc_recv_server(w, 5000, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->body_case, CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY);
    ck_assert_int_eq(r->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED);
    frame_free_server(r);
    ck_assert_int_eq(wsc_wait_close(w, 5000, NULL, 0), 1008);
    wsc_close(w);
    framed_ping_ok(t, 7); /* the admitted one is untouched */
    wsc_close(t);
    SSL_CTX_free(any);
    testenv_stop_server(&gate);
    env_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_tls");
    TCase *tc = tcase_create("tls");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gate_tls_both_listeners_speak_tls12_or_later_only);
    tcase_add_test(tc, test_gate_tls_sighup_rereads_the_certificate_and_keeps_connections);
    tcase_add_test(tc, test_gate_tls_sigterm_goaway_then_close_notify_and_fin_no_reset);
    tcase_add_test(tc, test_gate_tls_connection_over_the_cap_is_told_why_through_tls);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
