/*
 * The WebSocket opening-handshake parser (gateway/gate_ws_hs.h, RFC 6455 section 4.2):
 * what it accepts, what it refuses with which status, and the accept value.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gate_ws_hs.h"

#define KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define REQ(path, extra)                                                                           \
    "GET " path " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"            \
    "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n" extra "\r\n"

static gate_ws_hs_status_t parse(const char *req, const char *origins, gate_ws_hs_t *hs)
{
    gate_ws_hs_policy_t pol = {.path = "/ws", .origins = origins};
    return gate_ws_hs_parse(req, strlen(req), &pol, hs);
}

START_TEST(test_gate_ws_hs_accepts_a_valid_request_and_computes_the_rfc_accept)
{
    gate_ws_hs_t hs;
    const char *r = REQ("/ws", "") "\x82\x80";
    ck_assert_int_eq(parse(r, NULL, &hs), GATE_WS_HS_OK);
    ck_assert_uint_eq(hs.consumed, strlen(r) - 2); /* the frame after it is not consumed */
    ck_assert_str_eq(hs.key, KEY);
    char acc[GATE_WS_ACCEPT_LEN + 1];
    ck_assert_int_eq(gate_ws_hs_accept(hs.key, acc), 0);
    ck_assert_str_eq(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="); /* RFC 6455 section 1.3 */
    char out[512];
    ck_assert_int_gt(gate_ws_hs_response(&hs, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "HTTP/1.1 101 Switching Protocols\r\n"));
    ck_assert_ptr_null(strstr(out, "Extensions"));
}
END_TEST

START_TEST(test_gate_ws_hs_waits_for_the_end_of_the_headers)
{
    const char *r = REQ("/ws", "");
    gate_ws_hs_policy_t pol = {.path = "/ws"};
    for (size_t n = 0; n < strlen(r); n++) {
        gate_ws_hs_t hs;
        ck_assert_int_eq(gate_ws_hs_parse(r, n, &pol, &hs), GATE_WS_HS_NEED_MORE);
    }
    char big[GATE_WS_HS_MAX + 10];
    memset(big, 'a', sizeof big);
    gate_ws_hs_t hs;
    ck_assert_int_eq(gate_ws_hs_parse(big, sizeof big, &pol, &hs), GATE_WS_HS_BAD);
}
END_TEST

START_TEST(test_gate_ws_hs_refuses_each_broken_rule)
{
    static const struct {
        const char *req;
        gate_ws_hs_status_t want;
    } cases[] = {
        {"PUT /ws HTTP/1.1\r\nHost: x\r\n\r\n", GATE_WS_HS_BAD},
        {"GET /ws HTTP/1.0\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         GATE_WS_HS_BAD},
        {"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         GATE_WS_HS_BAD}, /* no Host */
        {"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         GATE_WS_HS_BAD},
        {"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: keep-alive\r\n"
         "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n\r\n",
         GATE_WS_HS_BAD},
        {"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13, 8\r\n\r\n",
         GATE_WS_HS_BAD},
        {"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZR==\r\nSec-WebSocket-Version: 13\r\n\r\n",
         GATE_WS_HS_BAD}, /* non-canonical padding bits */
        {"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ\r\nSec-WebSocket-Version: 13\r\n\r\n",
         GATE_WS_HS_BAD},
        {REQ("/ws", "Sec-WebSocket-Key: " KEY "\r\n"), GATE_WS_HS_BAD},
        {REQ("/ws", " folded\r\n"), GATE_WS_HS_BAD},
        {REQ("/ws", "Bad Name: x\r\n"), GATE_WS_HS_BAD},
        {REQ("/ws", "X: a\x01b\r\n"), GATE_WS_HS_BAD},
        {REQ("/ws", "Content-Length: 5\r\n"), GATE_WS_HS_BAD},
        {REQ("/ws", "Transfer-Encoding: chunked\r\n"), GATE_WS_HS_BAD},
        {REQ("/ws", "Host: y\r\n"), GATE_WS_HS_BAD},
        {REQ("ws", ""), GATE_WS_HS_BAD},
        {REQ("/other", ""), GATE_WS_HS_NOT_FOUND},
        {REQ("/ws/", ""), GATE_WS_HS_NOT_FOUND},
        {REQ("/ws?room=1", ""), GATE_WS_HS_OK},
        {REQ("/ws", "Content-Length: 0\r\n"), GATE_WS_HS_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gate_ws_hs_t hs;
        ck_assert_msg(parse(cases[i].req, NULL, &hs) == cases[i].want, "case %zu: %d (%s)", i,
                      hs.status, hs.why != NULL ? hs.why : "-");
        if (cases[i].want != GATE_WS_HS_OK) {
            ck_assert_ptr_nonnull(hs.why);
            char out[512];
            ck_assert_int_gt(gate_ws_hs_response(&hs, out, sizeof out), 0);
            ck_assert_ptr_nonnull(strstr(out, "Connection: close\r\n"));
        }
    }
}
END_TEST

START_TEST(test_gate_ws_hs_version_refusal_names_13)
{
    gate_ws_hs_t hs;
    const char *r = "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 8\r\n\r\n";
    ck_assert_int_eq(parse(r, NULL, &hs), GATE_WS_HS_BAD);
    ck_assert(hs.version_refused);
    char out[512];
    ck_assert_int_gt(gate_ws_hs_response(&hs, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "HTTP/1.1 400 Bad Request\r\n"));
    ck_assert_ptr_nonnull(strstr(out, "Sec-WebSocket-Version: 13\r\n"));
}
END_TEST

START_TEST(test_gate_ws_hs_origin_allow_list)
{
    const char *allow = "https://cards.example, http://localhost:8080";
    gate_ws_hs_t hs;
    ck_assert_int_eq(parse(REQ("/ws", "Origin: https://cards.example\r\n"), allow, &hs),
                     GATE_WS_HS_OK);
    ck_assert_int_eq(parse(REQ("/ws", "Origin: http://localhost:8080\r\n"), allow, &hs),
                     GATE_WS_HS_OK);
    ck_assert_int_eq(parse(REQ("/ws", "Origin: https://cards.example.evil\r\n"), allow, &hs),
                     GATE_WS_HS_FORBIDDEN);
    ck_assert_int_eq(parse(REQ("/ws", "Origin: null\r\n"), allow, &hs), GATE_WS_HS_FORBIDDEN);
    ck_assert_int_eq(parse(REQ("/ws", ""), allow, &hs), GATE_WS_HS_OK); /* not a browser */
    ck_assert_int_eq(parse(REQ("/ws", "Origin: https://any.example\r\n"), NULL, &hs),
                     GATE_WS_HS_OK);
    char out[512];
    parse(REQ("/ws", "Origin: null\r\n"), allow, &hs);
    ck_assert_int_gt(gate_ws_hs_response(&hs, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "HTTP/1.1 403 Forbidden\r\n"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_ws_hs");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_gate_ws_hs_accepts_a_valid_request_and_computes_the_rfc_accept);
    tcase_add_test(tc, test_gate_ws_hs_waits_for_the_end_of_the_headers);
    tcase_add_test(tc, test_gate_ws_hs_refuses_each_broken_rule);
    tcase_add_test(tc, test_gate_ws_hs_version_refusal_names_13);
    tcase_add_test(tc, test_gate_ws_hs_origin_allow_list);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
