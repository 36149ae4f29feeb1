/*
 * Unit tests for proto/: the framing codec (frame.h) and the rules it enforces on the client
 * and rpc protocols (docs/protocol.md).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"
#include "test_game_msg.pb-c.h"
#include "test_proto_samples.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static uint8_t big[FRAME_DEFAULT_MAX + FRAME_HEADER_SIZE];

/* Packs with protobuf-c alone, bypassing every check (to make frames a bad peer would send). */
static size_t raw_pack(const ProtobufCMessage *m, uint8_t *buf)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    ck_assert_uint_le(n, FRAME_DEFAULT_MAX);
    return protobuf_c_message_pack(m, buf);
}

/* Unpacks a raw payload as a ClientMessage and expects a refusal with code and detail. */
static void expect_client_refused(const uint8_t *p, size_t n, Croupier__ErrorCode code,
                                  const char *detail_part)
{
    frame_error_t err;
    Croupier__ClientMessage *m = frame_unpack_client(p, n, NULL, &err);
    if (m != NULL)
        frame_free_client(m);
    ck_assert_ptr_null(m);
    ck_assert_msg(err.code == code, "code %s, want %s (%s)", frame_error_code_name(err.code),
                  frame_error_code_name(code), err.detail);
    ck_assert_msg(strstr(err.detail, detail_part) != NULL, "detail '%s' lacks '%s'", err.detail,
                  detail_part);
}

/* Packs m raw and expects both the pack-side check and the unpack to refuse it. */
static void expect_client_message_refused(const Croupier__ClientMessage *m,
                                          Croupier__ErrorCode code, const char *detail_part)
{
    frame_error_t err;
    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_pack_client(out, m, NULL, &err), -EINVAL);
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    ck_assert_msg(strstr(err.detail, detail_part) != NULL, "pack detail '%s' lacks '%s'",
                  err.detail, detail_part);
    evbuffer_free(out);
    size_t n = raw_pack(&m->base, big);
    expect_client_refused(big, n, code, detail_part);
}

static Croupier__ClientMessage action_msg(Croupier__Action *a)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 5;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = a;
    return m;
}

/* ---- round trips -------------------------------------------------------------------------- */

/*
 * For each sample: encode, decode with the typed unpack, re-encode; the two encodings must be
 * equal byte for byte (so every field survived). Also through an evbuffer with the typed
 * pack and read helpers.
 */
#define ROUNDTRIP_CB(kind, Type)                                                                   \
    static void roundtrip_##kind(void *arg, const char *name, const Type *m)                       \
    {                                                                                              \
        (void)arg;                                                                                 \
        static uint8_t a[4096], b[4096];                                                           \
        frame_error_t err;                                                                         \
        ssize_t na = frame_encode(&m->base, NULL, a, sizeof a, &err);                              \
        ck_assert_msg(na > 0, "%s does not encode: %s", name, err.detail);                         \
        Type *d = frame_unpack_##kind(a + FRAME_HEADER_SIZE, (size_t)na - FRAME_HEADER_SIZE, NULL, \
                                      &err);                                                       \
        ck_assert_msg(d != NULL, "%s does not decode: %s", name, err.detail);                      \
        ck_assert_uint_gt(err.alloc_bytes, 0);                                                     \
        ssize_t nb = frame_encode(&d->base, NULL, b, sizeof b, &err);                              \
        ck_assert_int_eq(na, nb);                                                                  \
        ck_assert_msg(memcmp(a, b, (size_t)na) == 0, "%s changed in a round trip", name);          \
        frame_free_##kind(d);                                                                      \
        struct evbuffer *buf = evbuffer_new();                                                     \
        ck_assert_int_eq(frame_pack_##kind(buf, m, NULL, &err), 0);                                \
        ck_assert_uint_eq(evbuffer_get_length(buf), (size_t)na);                                   \
        Type *r = NULL;                                                                            \
        ck_assert_int_eq(frame_read_##kind(buf, NULL, &r, &err), FRAME_OK);                        \
        ck_assert_uint_eq(evbuffer_get_length(buf), 0);                                            \
        ck_assert_int_eq(frame_read_##kind(buf, NULL, &r, &err), FRAME_NEED_MORE);                 \
        frame_free_##kind(r);                                                                      \
        evbuffer_free(buf);                                                                        \
    }
ROUNDTRIP_CB(client, Croupier__ClientMessage)
ROUNDTRIP_CB(server, Croupier__ServerMessage)
ROUNDTRIP_CB(rpc, Croupier__RpcFrame)

START_TEST(test_proto_every_client_message_kind_round_trips)
{
    /* login, 3 joins, leave, resume, ping, 5 shedding, 5 hold'em, 8 blackjack, 2 list_tables */
    ck_assert_int_eq(samples_client(roundtrip_client, NULL), 44);
}
END_TEST

START_TEST(test_proto_every_server_message_kind_round_trips)
{
    ck_assert_int_eq(samples_server(roundtrip_server, NULL), 35); /* replay_blackjack included */
}
END_TEST

START_TEST(test_proto_every_rpc_frame_kind_round_trips)
{
    ck_assert_int_eq(samples_rpc(roundtrip_rpc, NULL), 18);
}
END_TEST

START_TEST(test_proto_decoded_fields_keep_their_values)
{
    Croupier__HoldemAction h = CROUPIER__HOLDEM_ACTION__INIT;
    h.move = CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE, h.has_amount = 1, h.amount = 1234567890123;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    a.kind_case = CROUPIER__ACTION__KIND_HOLDEM, a.holdem = &h;
    Croupier__ClientMessage m = action_msg(&a);
    m.request_id = 0xFEEDFACECAFEBEEFull;
    ssize_t n = frame_encode(&m.base, NULL, big, sizeof big, NULL);
    ck_assert_int_gt(n, 0);
    ck_assert_uint_eq(big[0] << 24 | big[1] << 16 | big[2] << 8 | big[3],
                      (size_t)n - FRAME_HEADER_SIZE);
    Croupier__ClientMessage *d = frame_unpack_client(big + 4, (size_t)n - 4, NULL, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(d->request_id, 0xFEEDFACECAFEBEEFull);
    ck_assert_int_eq(d->body_case, CROUPIER__CLIENT_MESSAGE__BODY_ACTION);
    ck_assert_int_eq(d->action->kind_case, CROUPIER__ACTION__KIND_HOLDEM);
    ck_assert_int_eq(d->action->holdem->move, CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE);
    ck_assert(d->action->holdem->has_amount);
    ck_assert_int_eq(d->action->holdem->amount, 1234567890123);
    frame_free_client(d);

    Croupier__Login login = CROUPIER__LOGIN__INIT;
    login.token = "tok\xc3\xa9n \xf0\x9f\x82\xa1";
    Croupier__ClientMessage lm = CROUPIER__CLIENT_MESSAGE__INIT;
    lm.request_id = 1, lm.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN, lm.login = &login;
    n = frame_encode(&lm.base, NULL, big, sizeof big, NULL);
    d = frame_unpack_client(big + 4, (size_t)n - 4, NULL, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d->login->token, login.token);
    frame_free_client(d);
}
END_TEST

/* ---- framing ------------------------------------------------------------------------------ */

typedef struct stream {
    struct evbuffer *buf;
    int count;
} stream_t;

static void append_client(void *arg, const char *name, const Croupier__ClientMessage *m)
{
    stream_t *s = arg;
    frame_error_t err;
    ck_assert_msg(frame_pack_client(s->buf, m, NULL, &err) == 0, "%s: %s", name, err.detail);
    s->count++;
}

/* Every sample, framed back to back; returns the stream's bytes (malloc) and frame count. */
static uint8_t *client_stream(size_t *len, int *count)
{
    stream_t s = {evbuffer_new(), 0};
    samples_client(append_client, &s);
    *len = evbuffer_get_length(s.buf);
    uint8_t *p = malloc(*len);
    evbuffer_remove(s.buf, p, *len);
    evbuffer_free(s.buf);
    *count = s.count;
    return p;
}

START_TEST(test_frame_stream_fed_one_byte_at_a_time_decodes_every_frame_once)
{
    size_t len;
    int count;
    uint8_t *p = client_stream(&len, &count);
    struct evbuffer *in = evbuffer_new();
    int got = 0;
    for (size_t i = 0; i < len; i++) {
        evbuffer_add(in, p + i, 1);
        Croupier__ClientMessage *m;
        frame_error_t err;
        frame_result_t r;
        while ((r = frame_read_client(in, NULL, &m, &err)) == FRAME_OK) {
            got++;
            frame_free_client(m);
        }
        ck_assert_msg(r == FRAME_NEED_MORE, "byte %zu: %s %s", i, frame_result_name(r), err.detail);
    }
    ck_assert_int_eq(got, count);
    ck_assert_uint_eq(evbuffer_get_length(in), 0);
    evbuffer_free(in);
    free(p);
}
END_TEST

START_TEST(test_frame_split_at_every_byte_gives_need_more_then_the_frame)
{
    Croupier__SeatInfo s0 = CROUPIER__SEAT_INFO__INIT;
    Croupier__SeatInfo *seats[] = {&s0};
    Croupier__Joined j = CROUPIER__JOINED__INIT;
    j.desk_id = 77, j.seat = 0, j.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    j.game = "holdem", j.stake = 5, j.n_seats = 1, j.seats = seats;
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    m.request_id = 3, m.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED, m.joined = &j;
    ssize_t n = frame_encode(&m.base, NULL, big, sizeof big, NULL);
    ck_assert_int_gt(n, 10);
    for (ssize_t k = 0; k < n; k++) {
        struct evbuffer *in = evbuffer_new();
        evbuffer_add(in, big, (size_t)k);
        Croupier__ServerMessage *d = NULL;
        size_t want = 0;
        ck_assert_int_eq(frame_peek(in, NULL, NULL, NULL, &want), FRAME_NEED_MORE);
        ck_assert_uint_eq(want, k < FRAME_HEADER_SIZE ? FRAME_HEADER_SIZE : (size_t)n);
        ck_assert_int_eq(frame_read_server(in, NULL, &d, NULL), FRAME_NEED_MORE);
        ck_assert_uint_eq(evbuffer_get_length(in), (size_t)k);
        evbuffer_add(in, big + k, (size_t)(n - k));
        ck_assert_int_eq(frame_read_server(in, NULL, &d, NULL), FRAME_OK);
        ck_assert_uint_eq(d->joined->desk_id, 77);
        frame_free_server(d);
        ck_assert_uint_eq(evbuffer_get_length(in), 0);
        evbuffer_free(in);
    }
}
END_TEST

START_TEST(test_frame_many_frames_in_one_buffer_all_decode_in_one_loop)
{
    struct evbuffer *in = evbuffer_new();
    Croupier__Ping ping = CROUPIER__PING__INIT;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING, m.ping = &ping;
    for (int i = 1; i <= 2000; i++) {
        m.request_id = (uint64_t)i, ping.nonce = (uint64_t)i * 3;
        ck_assert_int_eq(frame_pack_client(in, &m, NULL, NULL), 0);
    }
    int got = 0;
    Croupier__ClientMessage *d;
    frame_result_t r;
    while ((r = frame_read_client(in, NULL, &d, NULL)) == FRAME_OK) {
        got++;
        ck_assert_uint_eq(d->request_id, (uint64_t)got);
        ck_assert_uint_eq(d->ping->nonce, (uint64_t)got * 3);
        frame_free_client(d);
    }
    ck_assert_int_eq(r, FRAME_NEED_MORE);
    ck_assert_int_eq(got, 2000);
    ck_assert_uint_eq(evbuffer_get_length(in), 0);
    evbuffer_free(in);
}
END_TEST

START_TEST(test_frame_over_cap_is_refused_before_the_payload_arrives)
{
    struct evbuffer *in = evbuffer_new();
    uint8_t h[4];
    frame_put_header(h, FRAME_DEFAULT_MAX + 1);
    evbuffer_add(in, h, 4);
    Croupier__ClientMessage *m = NULL;
    frame_error_t err;
    ck_assert_int_eq(frame_read_client(in, NULL, &m, &err), FRAME_TOO_LARGE);
    ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE);
    ck_assert_ptr_nonnull(strstr(err.detail, "65537"));
    ck_assert_ptr_null(m);
    /* Nothing consumed, and asking again gives the same answer. */
    ck_assert_uint_eq(evbuffer_get_length(in), 4);
    ck_assert_int_eq(frame_read_client(in, NULL, &m, &err), FRAME_TOO_LARGE);
    evbuffer_drain(in, 4);
    frame_put_header(h, UINT32_MAX);
    evbuffer_add(in, h, 4);
    ck_assert_int_eq(frame_read_client(in, NULL, &m, &err), FRAME_TOO_LARGE);
    evbuffer_free(in);
}
END_TEST

START_TEST(test_frame_cap_is_configurable_and_exact)
{
    Croupier__Login login = CROUPIER__LOGIN__INIT;
    char token[200];
    memset(token, 'x', sizeof token - 1);
    token[sizeof token - 1] = '\0';
    login.token = token;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 1, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN, m.login = &login;
    size_t size = protobuf_c_message_get_packed_size(&m.base);
    frame_limits_t lim = frame_limits_default;
    lim.max_frame = size;

    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_pack_client(out, &m, &lim, NULL), 0);
    Croupier__ClientMessage *d = NULL;
    ck_assert_int_eq(frame_read_client(out, &lim, &d, NULL), FRAME_OK);
    frame_free_client(d);

    lim.max_frame = size - 1;
    frame_error_t err;
    ck_assert_int_eq(frame_pack_client(out, &m, &lim, &err), -EMSGSIZE);
    ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE);
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    ck_assert_int_eq(frame_encode(&m.base, &lim, big, sizeof big, NULL), -EMSGSIZE);
    lim.max_frame = size;
    ck_assert_int_eq(frame_pack_client(out, &m, &lim, NULL), 0);
    lim.max_frame = size - 1;
    ck_assert_int_eq(frame_read_client(out, &lim, &d, &err), FRAME_TOO_LARGE);
    ck_assert_ptr_null(frame_unpack_client(big, size, &lim, &err));
    ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__FRAME_TOO_LARGE);
    evbuffer_free(out);

    /* A buffer too small for the frame is refused without writing. */
    memset(big, 0xAA, 16);
    ck_assert_int_eq(frame_encode(&m.base, NULL, big, 16, NULL), -ENOBUFS);
    ck_assert_uint_eq(big[0], 0xAA);
}
END_TEST

START_TEST(test_frame_truncated_payload_is_malformed_and_waits_in_a_stream)
{
    Croupier__Login login = CROUPIER__LOGIN__INIT;
    login.token = "abcdefgh";
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 1, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN, m.login = &login;
    size_t n = raw_pack(&m.base, big);
    for (size_t k = 0; k < n; k++) {
        frame_error_t err;
        Croupier__ClientMessage *d = frame_unpack_client(big, k, NULL, &err);
        ck_assert_ptr_null(d);
        ck_assert_msg(err.code == CROUPIER__ERROR_CODE__MALFORMED_FRAME ||
                          err.code == CROUPIER__ERROR_CODE__BAD_REQUEST,
                      "cut at %zu: %s", k, err.detail);
    }
    /* In a stream a cut frame is simply not complete yet. */
    struct evbuffer *in = evbuffer_new();
    ck_assert_int_eq(frame_pack_client(in, &m, NULL, NULL), 0);
    size_t total = evbuffer_get_length(in);
    struct evbuffer *cut = evbuffer_new();
    evbuffer_remove_buffer(in, cut, total - 1);
    Croupier__ClientMessage *d = NULL;
    ck_assert_int_eq(frame_read_client(cut, NULL, &d, NULL), FRAME_NEED_MORE);
    ck_assert_uint_eq(evbuffer_get_length(cut), total - 1);
    evbuffer_free(cut);
    evbuffer_free(in);
}
END_TEST

START_TEST(test_frame_malformed_frame_is_consumed_and_the_next_one_decodes)
{
    struct evbuffer *in = evbuffer_new();
    static const uint8_t garbage[] = {0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff};
    evbuffer_add(in, garbage, sizeof garbage);
    static const uint8_t empty[] = {0, 0, 0, 0};
    evbuffer_add(in, empty, sizeof empty);
    Croupier__Ping ping = CROUPIER__PING__INIT;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 9, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING, m.ping = &ping;
    ck_assert_int_eq(frame_pack_client(in, &m, NULL, NULL), 0);

    Croupier__ClientMessage *d = NULL;
    frame_error_t err;
    ck_assert_int_eq(frame_read_client(in, NULL, &d, &err), FRAME_MALFORMED);
    ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__MALFORMED_FRAME);
    ck_assert_ptr_null(d);
    /* An empty payload lacks the required request_id. */
    ck_assert_int_eq(frame_read_client(in, NULL, &d, &err), FRAME_MALFORMED);
    ck_assert_int_eq(frame_read_client(in, NULL, &d, &err), FRAME_OK);
    ck_assert_uint_eq(d->request_id, 9);
    frame_free_client(d);
    ck_assert_int_eq(frame_read_client(in, NULL, &d, &err), FRAME_NEED_MORE);
    evbuffer_free(in);
}
END_TEST

START_TEST(test_frame_malformed_protobuf_bytes_are_refused)
{
    static const struct {
        const char *name;
        uint8_t b[12];
        size_t n;
    } cases[] = {
        {"varint runs past 10 bytes",
         {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
         12},
        {"length past the end", {0x08, 0x01, 0x52, 0x09, 0x0a}, 5},
        {"group wire type", {0x08, 0x01, 0x0b, 0x0c}, 4},
        {"wire type 7", {0x08, 0x01, 0x0f}, 3},
        {"field number 0", {0x00, 0x01}, 2},
        {"field number 0, overlong tag", {0x08, 0x01, 0x80, 0x00, 0x01}, 5},
        {"field number above 2^29-1", {0x08, 0x01, 0xf8, 0xff, 0xff, 0xff, 0x1f, 0x01}, 8},
        {"cut fixed64", {0x08, 0x01, 0x09, 0x01}, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        frame_error_t err;
        Croupier__ClientMessage *m = frame_unpack_client(cases[i].b, cases[i].n, NULL, &err);
        ck_assert_msg(m == NULL, "%s accepted", cases[i].name);
        ck_assert_msg(err.code == CROUPIER__ERROR_CODE__MALFORMED_FRAME, "%s: %s", cases[i].name,
                      frame_error_code_name(err.code));
        ck_assert_msg(err.detail[0] != '\0', "%s: no reason", cases[i].name);
    }
}
END_TEST

/* ---- validation --------------------------------------------------------------------------- */

START_TEST(test_check_undefined_enum_values_are_refused)
{
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = 9, j.game = "holdem", j.stake = 5;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 1, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN, m.join = &j;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "join.engine: 9");
    j.engine = -1;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "join.engine: -1");
    /* A required enum left at its *_UNSPECIFIED zero is refused too. */
    j.engine = CROUPIER__ENGINE__ENGINE_UNSPECIFIED;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "unspecified");

    Croupier__HoldemAction h = CROUPIER__HOLDEM_ACTION__INIT;
    h.move = 77;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    a.kind_case = CROUPIER__ACTION__KIND_HOLDEM, a.holdem = &h;
    Croupier__ClientMessage am = action_msg(&a);
    expect_client_message_refused(&am, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "action.holdem.move: 77 is not a HoldemMove");

    /* The same in an event from the server side: an Error carrying an undefined code. */
    Croupier__Error e = CROUPIER__ERROR__INIT;
    e.code = 12345;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ERROR, sm.error = &e;
    size_t n = raw_pack(&sm.base, big);
    frame_error_t err;
    ck_assert_ptr_null(frame_unpack_server(big, n, NULL, &err));
    ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(err.detail, "ErrorCode"));
    e.code = CROUPIER__ERROR_CODE__OK;
    n = raw_pack(&sm.base, big);
    ck_assert_ptr_null(frame_unpack_server(big, n, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.detail, "cannot be OK"));
}
END_TEST

START_TEST(test_check_invalid_utf8_strings_are_refused)
{
    static const char *bad[] = {
        "\xc3\x28",         /* bad continuation */
        "\xc0\xaf",         /* overlong '/' */
        "\xe0\x80\xaf",     /* overlong, 3 bytes */
        "\xed\xa0\x80",     /* UTF-16 surrogate */
        "\xf4\x90\x80\x80", /* above U+10FFFF */
        "\xff",             /* never valid */
        "ok\xe2\x82",       /* cut sequence */
    };
    Croupier__Login login = CROUPIER__LOGIN__INIT;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 1, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN, m.login = &login;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert(!frame_utf8_valid((const uint8_t *)bad[i], strlen(bad[i])));
        login.token = (char *)bad[i];
        expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "login.token");
    }
    static const char *good[] = {
        "", "plain", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x82\xa1", "\xf4\x8f\xbf\xbf"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert(frame_utf8_valid((const uint8_t *)good[i], strlen(good[i])));

    /* A NUL inside a string would silently cut it after unpack: refused on the wire. */
    static const uint8_t nul[] = {0x08, 0x01, 0x52, 0x05, 0x0a, 0x03, 'a', 0x00, 'b'};
    expect_client_refused(nul, sizeof nul, CROUPIER__ERROR_CODE__BAD_REQUEST, "token");
    /* Also inside a nested message in an rpc frame (push of a GoAway). */
    static const uint8_t rpc_nul[] = {0x08, 0x00, 0x20, 0x01, 0x8a, 0x01, 0x09, 0xaa,
                                      0x01, 0x06, 0x08, 0x01, 0x10, 0x00, 0x1a, 0x00};
    frame_error_t err;
    Croupier__RpcFrame *f = frame_unpack_rpc(rpc_nul, sizeof rpc_nul, NULL, &err);
    ck_assert_msg(f != NULL, "%s", err.detail); /* empty detail string is fine */
    frame_free_rpc(f);
    uint8_t rpc_bad[sizeof rpc_nul + 2];
    memcpy(rpc_bad, rpc_nul, sizeof rpc_nul);
    rpc_bad[6] += 2, rpc_bad[9] += 2, rpc_bad[15] = 2, rpc_bad[16] = 'x', rpc_bad[17] = 0;
    ck_assert_ptr_null(frame_unpack_rpc(rpc_bad, sizeof rpc_bad, NULL, &err));
    ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(err.detail, "RpcFrame.push.go_away.detail"));
}
END_TEST

START_TEST(test_check_strings_above_the_limit_are_refused)
{
    char *token = malloc(FRAME_DEFAULT_MAX_STRING + 2);
    memset(token, 'a', FRAME_DEFAULT_MAX_STRING + 1);
    token[FRAME_DEFAULT_MAX_STRING + 1] = '\0';
    Croupier__Login login = CROUPIER__LOGIN__INIT;
    login.token = token;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 1, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN, m.login = &login;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "at most 4096");
    token[FRAME_DEFAULT_MAX_STRING] = '\0';
    ck_assert_int_eq(frame_check_client(&m, NULL, NULL), 0);
    free(token);
}
END_TEST

START_TEST(test_check_requests_need_an_id_and_a_body)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 3;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "no body");
    Croupier__Ping ping = CROUPIER__PING__INIT;
    m.request_id = 0, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING, m.ping = &ping;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "request_id");
    /* A oneof case that names no field (a corrupted struct) is refused before packing. */
    m.request_id = 3, m.body_case = 99;
    frame_error_t err;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "oneof case 99"));
    /* A required sub-message pointer left NULL is refused, not dereferenced. */
    Croupier__Play p = CROUPIER__PLAY__INIT;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY, sm.play = &p;
    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_pack_server(out, &sm, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "play.action: missing"));
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    evbuffer_free(out);
    /* A body this version does not know (unknown field 99) is a request without a body. */
    static const uint8_t future[] = {0x08, 0x01, 0x9a, 0x06, 0x00};
    expect_client_refused(future, sizeof future, CROUPIER__ERROR_CODE__BAD_REQUEST, "no body");
    /* A required field missing on the wire: protobuf-c refuses the message. */
    static const uint8_t no_token[] = {0x08, 0x01, 0x52, 0x00};
    expect_client_refused(no_token, sizeof no_token, CROUPIER__ERROR_CODE__MALFORMED_FRAME,
                          "required");
}
END_TEST

/* Packs sm raw and expects the pack-side check and the unpack both to refuse it. */
static void expect_server_message_refused(const Croupier__ServerMessage *sm,
                                          const char *detail_part)
{
    frame_error_t err;
    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_pack_server(out, sm, NULL, &err), -EINVAL);
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    ck_assert_msg(strstr(err.detail, detail_part) != NULL, "pack detail '%s' lacks '%s'",
                  err.detail, detail_part);
    evbuffer_free(out);
    size_t n = raw_pack(&sm->base, big);
    Croupier__ServerMessage *d = frame_unpack_server(big, n, NULL, &err);
    if (d != NULL)
        frame_free_server(d);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__BAD_REQUEST);
    ck_assert_msg(strstr(err.detail, detail_part) != NULL, "unpack detail '%s' lacks '%s'",
                  err.detail, detail_part);
}

/* docs/protocol.md "Transfers": a RoundEnd's transfer moves a positive amount between two
 * different parties, a seat or the house (an absent seat); never from the house to the house. */
START_TEST(test_check_round_end_transfers_follow_the_rules)
{
    frame_error_t err;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    Croupier__Transfer x = CROUPIER__TRANSFER__INIT;
    Croupier__Transfer *xs[] = {&x};
    re.round_id = "niuniu:0:1:2:3";
    re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
    re.n_transfers = 1, re.transfers = xs;
    x.has_from_seat = 1, x.from_seat = 1, x.has_to_seat = 1, x.to_seat = 0;
    x.amount = 30, x.reason = "niu_niu";
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, sm.round_end = &re;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    x.has_to_seat = 0; /* to the house: the rake */
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    x.amount = 0;
    expect_server_message_refused(&sm, "round_end.transfers[0]");
    x.amount = 5, x.has_from_seat = 0; /* the house to the house */
    expect_server_message_refused(&sm, "round_end.transfers[0]");
    x.has_from_seat = 1, x.has_to_seat = 1, x.to_seat = 1; /* a seat to itself */
    expect_server_message_refused(&sm, "round_end.transfers[0]");
}
END_TEST

/* docs/protocol.md "Tournaments": a ListTournaments limit is 1..200; the tournament messages the
 * gateway sends name their tournament and pay places 1 <= from <= to. */
START_TEST(test_check_tournament_messages_follow_the_rules)
{
    frame_error_t err;
    Croupier__ListTournaments l = CROUPIER__LIST_TOURNAMENTS__INIT;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 4, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LIST_TOURNAMENTS;
    m.list_tournaments = &l;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);
    l.has_limit = 1, l.limit = 0;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "list_tournaments.limit: 1..200");
    l.limit = 201;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "list_tournaments.limit");
    l.limit = 200;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);
    l.has_status = 1, l.status = (Croupier__TournamentStatus)9;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "list_tournaments.status");
    /* Tournament id 0 is the gateway's to answer (BAD_REQUEST, the connection kept). */
    Croupier__RegisterTournament r = CROUPIER__REGISTER_TOURNAMENT__INIT;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT, m.register_tournament = &r;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);

    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TournamentEvent ev = CROUPIER__TOURNAMENT_EVENT__INIT;
    ev.kind = CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_STARTED;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_EVENT, sm.tournament_event = &ev;
    expect_server_message_refused(&sm, "tournament_event.tournament: must be non-zero");
    ev.tournament = 3;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    ev.kind = CROUPIER__TOURNAMENT_EVENT_KIND__TOURNAMENT_EVENT_KIND_UNSPECIFIED;
    expect_server_message_refused(&sm, "tournament_event.kind");

    Croupier__TournamentPayout p = CROUPIER__TOURNAMENT_PAYOUT__INIT;
    Croupier__TournamentPayout *ps[] = {&p};
    p.place_from = 2, p.place_to = 1, p.amount = 5;
    Croupier__TournamentInfo ti = CROUPIER__TOURNAMENT_INFO__INIT;
    ti.id = 3, ti.name = "t", ti.format = CROUPIER__TOURNAMENT_FORMAT__TOUR_SNG;
    ti.status = CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING, ti.n_payouts = 1, ti.payouts = ps;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT, sm.tournament = &ti;
    expect_server_message_refused(&sm, "tournament.payouts[0]: places 1 <= from <= to");
    p.place_to = 2;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    ti.id = 0;
    expect_server_message_refused(&sm, "tournament.id: must be non-zero");
}
END_TEST

START_TEST(test_check_list_tables_filters_and_table_ads_follow_the_rules)
{
    Croupier__ListTables l = CROUPIER__LIST_TABLES__INIT;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 4, m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LIST_TABLES, m.list_tables = &l;
    /* The engine filter is optional: absent or UNSPECIFIED lists every engine; a value the
     * schema does not define is refused. */
    frame_error_t err;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);
    l.has_engine = 1, l.engine = CROUPIER__ENGINE__ENGINE_UNSPECIFIED;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);
    l.engine = (Croupier__Engine)77;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "list_tables.engine: 77 is not a Engine value");
    l.engine = CROUPIER__ENGINE__ENGINE_GAME;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);
    l.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);
    /* The filters follow Join's rules. */
    l.game = "Hold em";
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "ClientMessage.list_tables.game: only a-z");
    l.game = "";
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "list_tables.game: 1..32 bytes");
    l.game = "holdem";
    l.has_stake = 1, l.stake = 0;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "list_tables.stake: must be > 0");
    l.stake = -5;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "list_tables.stake");
    l.stake = 5;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);
    /* Without the engine on the wire: a list of every engine. */
    static const uint8_t no_engine[] = {0x08, 0x01, 0x82, 0x01, 0x00};
    Croupier__ClientMessage *any = frame_unpack_client(no_engine, sizeof no_engine, NULL, &err);
    ck_assert_ptr_nonnull(any);
    ck_assert(!any->list_tables->has_engine);
    frame_free_client(any);

    /* A TableList whose ad breaks a rule is refused, naming the ad. */
    Croupier__TableAd a = CROUPIER__TABLE_AD__INIT, b = CROUPIER__TABLE_AD__INIT;
    a.desk_id = 1, a.server_id = "holdem:0", a.game = "holdem", a.stake = 10;
    a.seats = 6, a.seats_free = 5;
    b = a;
    Croupier__TableAd *ads[] = {&a, &b};
    Croupier__TableList tl = CROUPIER__TABLE_LIST__INIT;
    tl.n_tables = 2, tl.tables = ads;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.has_request_id = 1, sm.request_id = 4;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST, sm.table_list = &tl;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    b.seats_free = 7;
    expect_server_message_refused(&sm, "ServerMessage.table_list.tables[1].seats_free");
    b.seats_free = 0;
    expect_server_message_refused(&sm, "tables[1].seats_free: must be 1..seats");
    b.seats_free = 6;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    b.stake = 0;
    expect_server_message_refused(&sm, "tables[1].stake");
    b.stake = 10;
    b.game = "HOLDEM";
    expect_server_message_refused(&sm, "tables[1].game");
    b.game = "holdem";
    a.server_id = "";
    expect_server_message_refused(&sm, "tables[0].server_id: empty");
    a.server_id = "holdem:0";
    /* A NULL entry in the list is refused, not dereferenced. */
    ads[1] = NULL;
    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_pack_server(out, &sm, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "tables: missing"));
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    evbuffer_free(out);
    /* The same rules hold for a TableList carried in an rpc reply. */
    ads[1] = &b;
    b.seats_free = 9;
    Croupier__Reply r = CROUPIER__REPLY__INIT;
    r.payload = &sm;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    f.request_id = 9, f.body_case = CROUPIER__RPC_FRAME__BODY_REPLY, f.reply = &r;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "RpcFrame.reply.payload.table_list.tables[1]"));
}
END_TEST

START_TEST(test_check_action_fields_must_match_the_move)
{
    Croupier__HoldemAction h = CROUPIER__HOLDEM_ACTION__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    a.kind_case = CROUPIER__ACTION__KIND_HOLDEM, a.holdem = &h;
    Croupier__ClientMessage m = action_msg(&a);
    h.move = CROUPIER__HOLDEM_MOVE__HOLDEM_BET;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "holdem.amount");
    h.has_amount = 1, h.amount = 0;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "holdem.amount");
    h.move = CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE, h.amount = -5;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "holdem.amount");
    h.move = CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD, h.amount = 5;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "only with BET");

    Croupier__SheddingAction s = CROUPIER__SHEDDING_ACTION__INIT;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING, a.shedding = &s;
    s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "at least one card");
    uint8_t bad_cards[] = {FRAME_CARD(5, 1), 0x00};
    s.has_cards = 1, s.cards.len = sizeof bad_cards, s.cards.data = bad_cards;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "not a card code");
    bad_cards[1] = FRAME_CARD(FRAME_RANK_JOKER, 2);
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "byte 1");
    uint8_t too_many[FRAME_MAX_CARDS + 1];
    memset(too_many, FRAME_CARD(9, 2), sizeof too_many);
    s.cards.len = sizeof too_many, s.cards.data = too_many;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "at most 108");
    s.cards.len = 1;
    s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "only with PLAY");
    s.has_cards = 0, s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_BID;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "shedding.bid");

    Croupier__BlackjackAction b = CROUPIER__BLACKJACK_ACTION__INIT;
    a.kind_case = CROUPIER__ACTION__KIND_BLACKJACK, a.blackjack = &b;
    b.move = CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "insure");
    b.move = CROUPIER__BLACKJACK_MOVE__BJ_BET;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "blackjack.amount");
    b.move = CROUPIER__BLACKJACK_MOVE__BJ_HIT, b.has_hand = 1, b.hand = 8;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "blackjack.hand");

    a.kind_case = CROUPIER__ACTION__KIND__NOT_SET;
    expect_client_message_refused(&m, CROUPIER__ERROR_CODE__BAD_REQUEST, "no move");

    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_HOLDEM, j.game = "Hold Em", j.stake = 5;
    Croupier__ClientMessage jm = CROUPIER__CLIENT_MESSAGE__INIT;
    jm.request_id = 1, jm.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN, jm.join = &j;
    expect_client_message_refused(&jm, CROUPIER__ERROR_CODE__BAD_REQUEST, "join.game");
    j.game = "holdem", j.stake = 0;
    expect_client_message_refused(&jm, CROUPIER__ERROR_CODE__BAD_REQUEST, "join.stake");
}
END_TEST

START_TEST(test_check_rpc_frames_follow_the_link_rules)
{
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_HOLDEM, j.game = "holdem", j.stake = 5;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    f.request_id = 4, f.has_player_id = 1, f.player_id = 42, f.has_session_id = 1;
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN, f.join = &j;
    frame_error_t err;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "deadline_unix_ms"));
    f.has_deadline_unix_ms = 1, f.deadline_unix_ms = 1;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), 0);
    f.has_player_id = 0;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "player_id"));
    f.has_player_id = 1, f.request_id = 0;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), -EINVAL);

    Croupier__Error e = CROUPIER__ERROR__INIT;
    e.code = CROUPIER__ERROR_CODE__DRAINING;
    Croupier__Reply r = CROUPIER__REPLY__INIT;
    r.code = CROUPIER__ERROR_CODE__OK, r.error = &e;
    f.request_id = 4, f.body_case = CROUPIER__RPC_FRAME__BODY_REPLY, f.reply = &r;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "present with code OK"));
    r.code = CROUPIER__ERROR_CODE__UNAVAILABLE;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), -EINVAL);
    r.code = CROUPIER__ERROR_CODE__DRAINING;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), 0);

    /* A snapshot's engine state must be its engine's. */
    Croupier__HoldemState hs = CROUPIER__HOLDEM_STATE__INIT;
    hs.street = CROUPIER__HOLDEM_STREET__HOLDEM_RIVER;
    Croupier__Snapshot sn = CROUPIER__SNAPSHOT__INIT;
    sn.engine = CROUPIER__ENGINE__ENGINE_PERSISTENT, sn.game = "blackjack", sn.stake = 5;
    sn.state_case = CROUPIER__SNAPSHOT__STATE_HOLDEM, sn.holdem = &hs;
    Croupier__ServerMessage snm = CROUPIER__SERVER_MESSAGE__INIT;
    snm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT, snm.snapshot = &sn;
    ck_assert_int_eq(frame_check_server(&snm, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "does not belong to its engine"));
    sn.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    ck_assert_int_eq(frame_check_server(&snm, NULL, &err), 0);

    /* A pushed event is checked with the gate -> client rules. */
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    re.round_id = "g:1:2:3", re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, sm.round_end = &re;
    f.request_id = 0, f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH, f.push = &sm;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.detail, "RpcFrame.push.round_end.void_reason"));
    re.has_void_reason = 1, re.void_reason = CROUPIER__VOID_REASON__VOID_SHUTDOWN;
    ck_assert_int_eq(frame_check_rpc(&f, NULL, &err), 0);
    size_t n = raw_pack(&f.base, big);
    Croupier__RpcFrame *d = frame_unpack_rpc(big, n, NULL, &err);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->push->round_end->void_reason, CROUPIER__VOID_REASON__VOID_SHUTDOWN);
    frame_free_rpc(d);
    /* request_id 1 + an empty resume (field 15) but no player: refused on the wire too. */
    ck_assert_ptr_null(frame_unpack_rpc((const uint8_t *)"\x08\x01\x7a\x00", 4, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.detail, "player_id"));
}
END_TEST

START_TEST(test_check_card_codes)
{
    int valid = 0;
    for (int c = 0; c < 256; c++)
        valid += frame_card_valid((uint8_t)c);
    ck_assert_int_eq(valid, 54);
    ck_assert(frame_card_valid(FRAME_CARD(2, 0)));
    ck_assert(frame_card_valid(FRAME_CARD(14, 3)));
    ck_assert(frame_card_valid(FRAME_CARD_BLACK_JOKER));
    ck_assert(frame_card_valid(FRAME_CARD_RED_JOKER));
    ck_assert(!frame_card_valid(FRAME_CARD(1, 3)));
    ck_assert(!frame_card_valid(FRAME_CARD(15, 2)));
    ck_assert_int_eq(FRAME_CARD_RANK(FRAME_CARD(12, 2)), 12);
    ck_assert_int_eq(FRAME_CARD_SUIT(FRAME_CARD(12, 2)), 2);
}
END_TEST

/* ---- allocation budget ------------------------------------------------------------------- */

/* A Snapshot holding count SeatInfo entries with only `seat = 0` (4 wire bytes, ~80 in memory). */
static size_t many_seats_payload(uint8_t *buf, size_t count)
{
    Croupier__SeatInfo s = CROUPIER__SEAT_INFO__INIT;
    Croupier__SeatInfo **seats = malloc(count * sizeof *seats);
    for (size_t i = 0; i < count; i++)
        seats[i] = &s;
    Croupier__Snapshot snap = CROUPIER__SNAPSHOT__INIT;
    snap.engine = CROUPIER__ENGINE__ENGINE_HOLDEM, snap.game = "holdem", snap.stake = 1;
    snap.n_seats = count, snap.seats = seats;
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT, m.snapshot = &snap;
    size_t n = raw_pack(&m.base, buf);
    free(seats);
    return n;
}

START_TEST(test_budget_many_empty_submessages_are_refused_within_the_budget)
{
    size_t n = many_seats_payload(big, 16000);
    ck_assert_uint_le(n, FRAME_DEFAULT_MAX);
    size_t budget = FRAME_DEFAULT_BUDGET_FLOOR + FRAME_DEFAULT_BUDGET_FACTOR * n;
    frame_error_t err;
    Croupier__ServerMessage *m = frame_unpack_server(big, n, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__MALFORMED_FRAME);
    ck_assert_ptr_nonnull(strstr(err.detail, "allocation budget"));
    ck_assert_uint_le(err.alloc_bytes, budget);

    /* What it would have cost: the same payload with the budget lifted. */
    frame_limits_t lim = frame_limits_default;
    lim.budget_factor = 1000;
    m = frame_unpack_server(big, n, &lim, &err);
    ck_assert_msg(m != NULL, "%s", err.detail);
    ck_assert_uint_gt(err.alloc_bytes, budget);
    ck_assert_uint_eq(m->snapshot->n_seats, 16000);
    frame_free_server(m);

    /* A real table's worth of seats is far inside the default budget. */
    n = many_seats_payload(big, 10);
    m = frame_unpack_server(big, n, NULL, &err);
    ck_assert_ptr_nonnull(m);
    frame_free_server(m);

    /* Through the stream decoder the frame is consumed and the next one still decodes. */
    struct evbuffer *in = evbuffer_new();
    n = many_seats_payload(big + FRAME_HEADER_SIZE, 16000);
    frame_put_header(big, (uint32_t)n);
    evbuffer_add(in, big, FRAME_HEADER_SIZE + n);
    Croupier__Pong pong = CROUPIER__PONG__INIT;
    Croupier__ServerMessage pm = CROUPIER__SERVER_MESSAGE__INIT;
    pm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PONG, pm.pong = &pong;
    ck_assert_int_eq(frame_pack_server(in, &pm, NULL, NULL), 0);
    ck_assert_int_eq(frame_read_server(in, NULL, &m, &err), FRAME_MALFORMED);
    ck_assert_int_eq(frame_read_server(in, NULL, &m, &err), FRAME_OK);
    frame_free_server(m);
    evbuffer_free(in);
}
END_TEST

START_TEST(test_budget_many_unknown_fields_are_refused_within_the_budget)
{
    /* request_id = 1, then unknown field 9 (varint 0) over and over: 2 bytes each. */
    size_t n = 0;
    big[n++] = 0x08, big[n++] = 0x01;
    while (n + 2 <= FRAME_DEFAULT_MAX)
        big[n++] = 0x48, big[n++] = 0x00;
    frame_error_t err;
    Croupier__ClientMessage *m = frame_unpack_client(big, n, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(err.detail, "allocation budget"));
    ck_assert_uint_le(err.alloc_bytes,
                      FRAME_DEFAULT_BUDGET_FLOOR + FRAME_DEFAULT_BUDGET_FACTOR * n);
    /* A smaller budget is honoured as configured. */
    frame_limits_t lim = frame_limits_default;
    lim.budget_factor = 0, lim.budget_floor = 64;
    static const uint8_t ping[] = {0x08, 0x01, 0x7a, 0x02, 0x08, 0x05};
    ck_assert_ptr_null(frame_unpack_client(ping, sizeof ping, &lim, &err));
    ck_assert_uint_le(err.alloc_bytes, 64);
    lim.budget_floor = 4096;
    m = frame_unpack_client(ping, sizeof ping, &lim, &err);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(m->ping->nonce, 5);
    frame_free_client(m);
}
END_TEST

/*
 * Fault injection: every sample is unpacked with budgets from 0 up to what it needs, in steps
 * of 4 bytes, so the allocation failure hits each of protobuf-c's allocations in turn. Each attempt
 * must fail cleanly (ASan and valgrind see any leak on protobuf-c's error paths) until the budget
 * suffices, and succeed from then on.
 */
static void cutoff_server(void *arg, const char *name, const Croupier__ServerMessage *m)
{
    int *attempts = arg;
    size_t n = raw_pack(&m->base, big);
    frame_error_t err;
    Croupier__ServerMessage *d = frame_unpack_server(big, n, NULL, &err);
    ck_assert_msg(d != NULL, "%s: %s", name, err.detail);
    frame_free_server(d);
    size_t need = err.alloc_bytes;
    frame_limits_t lim = frame_limits_default;
    lim.budget_factor = 0;
    /* Steps of 4 bytes still land inside every allocation of 4 bytes or more. */
    for (size_t b = 0;; b = b + 4 < need ? b + 4 : need) {
        lim.budget_floor = b;
        d = frame_unpack_server(big, n, &lim, &err);
        (*attempts)++;
        if (b == need) {
            ck_assert_msg(d != NULL, "%s: %s", name, err.detail);
            frame_free_server(d);
            break;
        }
        ck_assert_msg(d == NULL, "%s decoded with %zu of %zu bytes", name, b, need);
        ck_assert_ptr_nonnull(strstr(err.detail, "allocation budget"));
        ck_assert_uint_le(err.alloc_bytes, b);
    }
}

START_TEST(test_budget_every_allocation_failure_is_clean)
{
    int attempts = 0;
    samples_server(cutoff_server, &attempts);
    ck_assert_int_gt(attempts, 500);
}
END_TEST

START_TEST(test_names_of_results_and_codes)
{
    ck_assert_str_eq(frame_result_name(FRAME_TOO_LARGE), "too_large");
    ck_assert_str_eq(frame_result_name(FRAME_NEED_MORE), "need_more");
    ck_assert_str_eq(frame_error_code_name(CROUPIER__ERROR_CODE__NOT_YOUR_TURN), "NOT_YOUR_TURN");
    ck_assert_str_eq(frame_error_code_name(9999), "UNKNOWN");
}
END_TEST

/* ---- forwarding checked bytes ------------------------------------------------------------ */

/* Packs m with protobuf-c alone into a heap buffer (canonical field order: equal bytes are
 * equal messages). */
static uint8_t *canonical(const ProtobufCMessage *m, size_t *len)
{
    *len = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*len + 1);
    protobuf_c_message_pack(m, b);
    return b;
}

/*
 * Wraps a server sample in RpcFrame.reply.payload and in RpcFrame.push, decodes the rpc frame,
 * forwards the ServerMessage bytes with a new request_id and expects the client to decode the
 * very message a re-encoding would have sent.
 */
static void forward_one(void *arg, const char *name, const Croupier__ServerMessage *sample)
{
    int *count = arg;
    for (int push = 0; push < 2; push++) {
        Croupier__ServerMessage sm = *sample;
        Croupier__Reply rep = CROUPIER__REPLY__INIT;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.request_id = push ? 0 : 7;
        f.has_player_id = true;
        f.player_id = 42;
        if (push) {
            f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
            f.push = &sm;
        } else {
            rep.payload = &sm;
            f.body_case = CROUPIER__RPC_FRAME__BODY_REPLY;
            f.reply = &rep;
        }
        struct evbuffer *link = evbuffer_new(), *client = evbuffer_new();
        frame_error_t err;
        if (frame_pack_rpc(link, &f, NULL, &err) != 0) {
            /* a sample the rpc link cannot carry (e.g. no room for its body) */
            evbuffer_free(link);
            evbuffer_free(client);
            continue;
        }
        const uint8_t *payload, *v, *sub;
        size_t len, vlen, sublen;
        ck_assert_int_eq(frame_peek(link, NULL, &payload, &len, NULL), FRAME_OK);
        Croupier__RpcFrame *got = frame_unpack_rpc(payload, len, NULL, &err);
        ck_assert_msg(got != NULL, "%s: %s", name, err.detail);
        if (push) {
            ck_assert_int_eq(frame_wire_field(payload, len, 17, &sub, &sublen), 0);
        } else {
            ck_assert_int_eq(frame_wire_field(payload, len, 16, &v, &vlen), 0);
            ck_assert_int_eq(frame_wire_field(v, vlen, 3, &sub, &sublen), 0);
        }
        uint64_t rid = push ? 0 : 0x123456789ULL;
        ck_assert_int_eq(frame_write_forward(client, sub, sublen, push ? 0 : 1, rid, NULL), 0);
        Croupier__ServerMessage *out;
        ck_assert_msg(frame_read_server(client, NULL, &out, &err) == FRAME_OK, "%s: %s", name,
                      err.detail);
        ck_assert_uint_eq(evbuffer_get_length(client), 0);
        Croupier__ServerMessage *want = push ? got->push : got->reply->payload;
        if (!push) {
            want->has_request_id = true;
            want->request_id = rid;
        }
        size_t la, lb;
        uint8_t *a = canonical(&out->base, &la), *b = canonical(&want->base, &lb);
        ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s (%s): forwarded message differs", name,
                      push ? "push" : "reply");
        free(a);
        free(b);
        frame_free_server(out);
        frame_free_rpc(got);
        evbuffer_free(link);
        evbuffer_free(client);
        (*count)++;
    }
}

START_TEST(test_forward_every_server_kind_arrives_as_the_reencoded_message)
{
    int count = 0;
    int n = samples_server(forward_one, &count);
    ck_assert_int_ge(count, n); /* every sample as a push, most as a reply too */
}
END_TEST

START_TEST(test_forward_replaces_every_occurrence_of_the_field)
{
    /* ServerMessage{request_id=5, event_seq=9, pong{nonce=3}} with request_id repeated. */
    const uint8_t msg[] = {0x08, 0x05, 0x10, 0x09, 0xb2, 0x01, 0x02, 0x08, 0x03, 0x08, 0x06};
    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_write_forward(out, msg, sizeof msg, 1, 300, NULL), 0);
    /* 11 bytes - 2 x 2 for the old request_ids + 3 for the new one (300 takes 2 bytes). */
    ck_assert_uint_eq(evbuffer_get_length(out), FRAME_HEADER_SIZE + 10);
    uint8_t got[64];
    evbuffer_copyout(out, got, sizeof got);
    const uint8_t want[] = {0,    0,    0,    10,   0x10, 0x09, 0xb2,
                            0x01, 0x02, 0x08, 0x03, 0x08, 0xac, 0x02};
    ck_assert_mem_eq(got, want, sizeof want);
    Croupier__ServerMessage *m;
    frame_error_t err;
    ck_assert_int_eq(frame_read_server(out, NULL, &m, &err), FRAME_OK);
    ck_assert(m->has_request_id);
    ck_assert_uint_eq(m->request_id, 300);
    ck_assert_uint_eq(m->event_seq, 9);
    ck_assert_uint_eq(m->pong->nonce, 3);
    frame_free_server(m);
    evbuffer_free(out);
}
END_TEST

START_TEST(test_forward_refuses_what_it_cannot_forward_and_writes_nothing)
{
    const uint8_t two[] = {0x82, 0x01, 0x00, 0x82, 0x01, 0x00}; /* field 16 twice */
    const uint8_t varint16[] = {0x80, 0x01, 0x05};              /* field 16 as a varint */
    const uint8_t cut[] = {0x82, 0x01, 0x05, 0x01};             /* 5 bytes announced, 1 there */
    const uint8_t *v;
    size_t n;
    ck_assert_int_eq(frame_wire_field(two, sizeof two, 16, &v, &n), -EEXIST);
    ck_assert_int_eq(frame_wire_field(two, sizeof two, 17, &v, &n), -ENOENT);
    ck_assert_int_eq(frame_wire_field(varint16, sizeof varint16, 16, &v, &n), -EINVAL);
    ck_assert_int_eq(frame_wire_field(cut, sizeof cut, 16, &v, &n), -EINVAL);
    ck_assert_int_eq(frame_wire_field(two, 3, 16, &v, &n), 0);
    ck_assert_ptr_eq(v, two + 3);
    ck_assert_uint_eq(n, 0);

    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_write_forward(out, cut, sizeof cut, 1, 1, NULL), -EINVAL);
    frame_limits_t lim = frame_limits_default;
    lim.max_frame = 7;
    const uint8_t six[] = {0x10, 0x01, 0x10, 0x02, 0x10, 0x03};
    ck_assert_int_eq(frame_write_forward(out, six, sizeof six, 1, 1, &lim), -EMSGSIZE);
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    lim.max_frame = 8;
    ck_assert_int_eq(frame_write_forward(out, six, sizeof six, 1, 1, &lim), 0);
    ck_assert_uint_eq(evbuffer_get_length(out), FRAME_HEADER_SIZE + 8);
    evbuffer_free(out);
}
END_TEST

/* ---- a table-kit game's own messages (frame_unpack_game, frame_pack_game) ---------------- */

/* The test game's rules: a bet has an amount > 0, a show has at least one card. */
static int tg_rules(const ProtobufCMessage *m, frame_error_t *err)
{
    if (m->descriptor != &testgame__tg_action__descriptor)
        return 0;
    const Testgame__TgAction *a = (const Testgame__TgAction *)m;
    if (a->move == TESTGAME__TG_MOVE__TG_BET && (!a->has_amount || a->amount <= 0)) {
        err->code = CROUPIER__ERROR_CODE__BAD_REQUEST;
        snprintf(err->detail, sizeof err->detail, "TgAction.amount: a bet needs > 0");
        return -EINVAL;
    }
    if (a->move == TESTGAME__TG_MOVE__TG_SHOW && (!a->has_cards || a->cards.len == 0))
        return -1; /* no detail: the codec names the message */
    return 0;
}

/* Decodes n raw bytes as a game message of type d and expects a refusal with code and detail. */
static void expect_game_refused(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n,
                                const frame_limits_t *lim, Croupier__ErrorCode code,
                                const char *detail_part)
{
    frame_error_t err;
    ProtobufCMessage *m = frame_unpack_game(d, p, n, lim, tg_rules, &err);
    frame_free(m);
    ck_assert_ptr_null(m);
    ck_assert_msg(err.code == code, "code %s, want %s (%s)", frame_error_code_name(err.code),
                  frame_error_code_name(code), err.detail);
    ck_assert_msg(strstr(err.detail, detail_part) != NULL, "detail '%s' lacks '%s'", err.detail,
                  detail_part);
}

/* A game message built in memory: frame_pack_game() refuses it (nothing written) and its raw
 * bytes are refused by frame_unpack_game() the same way. */
static void expect_game_message_refused(const ProtobufCMessage *m, Croupier__ErrorCode code,
                                        const char *detail_part)
{
    uint8_t buf[FRAME_GAME_BODY_MAX];
    memset(buf, 0xAA, sizeof buf);
    frame_error_t err;
    ck_assert_int_eq(frame_pack_game(m, NULL, tg_rules, buf, sizeof buf, &err), -EINVAL);
    ck_assert_uint_eq(buf[0], 0xAA);
    ck_assert_msg(strstr(err.detail, detail_part) != NULL, "pack detail '%s' lacks '%s'",
                  err.detail, detail_part);
    size_t n = raw_pack(m, big);
    expect_game_refused(m->descriptor, big, n, NULL, code, detail_part);
}

static uint8_t tg_cards[] = {FRAME_CARD(14, 3), FRAME_CARD(14, 2), FRAME_CARD_RED_JOKER};
static uint8_t tg_token[] = {0x00, 0x01, 0xff, 0xfe}; /* opaque: no card code among them */

START_TEST(test_game_message_round_trips_inside_its_envelope)
{
    /* The game packs its action into a GameAction body... */
    Testgame__TgAction a = TESTGAME__TG_ACTION__INIT;
    a.move = TESTGAME__TG_MOVE__TG_SHOW;
    a.has_cards = 1, a.cards = (ProtobufCBinaryData){sizeof tg_cards, tg_cards};
    a.note = "ünïcödé";
    a.has_token = 1, a.token = (ProtobufCBinaryData){sizeof tg_token, tg_token};
    frame_error_t err;
    ProtobufCBinaryData body = {0, NULL};
    ck_assert_int_eq(frame_pack_game_body(&a.base, NULL, tg_rules, &body, &err), 0);
    ck_assert_uint_eq(body.len, protobuf_c_message_get_packed_size(&a.base));
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    ga.body = body;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    act.kind_case = CROUPIER__ACTION__KIND_GAME, act.game = &ga;
    Croupier__ClientMessage cm = action_msg(&act);
    /* ... the client protocol carries it unopened ... */
    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_pack_client(out, &cm, NULL, &err), 0);
    Croupier__ClientMessage *got = NULL;
    ck_assert_int_eq(frame_read_client(out, NULL, &got, &err), FRAME_OK);
    ck_assert_int_eq(got->action->kind_case, CROUPIER__ACTION__KIND_GAME);
    const ProtobufCBinaryData *gb = &got->action->game->body;
    ck_assert_uint_eq(gb->len, body.len);
    ck_assert_mem_eq(gb->data, body.data, body.len);
    /* ... and the game decodes it with its own descriptor and rules. */
    Testgame__TgAction *d = (Testgame__TgAction *)frame_unpack_game(
        &testgame__tg_action__descriptor, gb->data, gb->len, NULL, tg_rules, &err);
    ck_assert_msg(d != NULL, "refused: %s", err.detail);
    ck_assert_int_eq(d->move, TESTGAME__TG_MOVE__TG_SHOW);
    ck_assert_uint_eq(d->cards.len, sizeof tg_cards);
    ck_assert_mem_eq(d->cards.data, tg_cards, sizeof tg_cards);
    ck_assert_str_eq(d->note, "ünïcödé");
    ck_assert_uint_eq(d->token.len, sizeof tg_token);
    ck_assert_uint_gt(err.alloc_bytes, 0);
    /* Re-encoding gives the same bytes. */
    uint8_t again[FRAME_GAME_BODY_MAX];
    ck_assert_int_eq(frame_pack_game(&d->base, NULL, tg_rules, again, sizeof again, &err),
                     (ssize_t)body.len);
    ck_assert_mem_eq(again, body.data, body.len);
    ck_assert_int_eq(frame_pack_game(&d->base, NULL, tg_rules, again, body.len - 1, &err),
                     -ENOBUFS);
    frame_free(&d->base);
    frame_free_client(got);
    evbuffer_free(out);
    free(body.data);

    /* A state with nested card lists, a oneof and a repeated field, in a Snapshot. */
    Testgame__TgSeat s0 = TESTGAME__TG_SEAT__INIT, s1 = TESTGAME__TG_SEAT__INIT;
    Testgame__TgSeat *seats[] = {&s0, &s1};
    s0.seat = 0, s0.has_hole_cards = 1;
    s0.hole_cards = (ProtobufCBinaryData){2, tg_cards};
    s1.seat = 1;
    Testgame__TgShowdown sd = TESTGAME__TG_SHOWDOWN__INIT;
    uint32_t winners[] = {1};
    sd.n_winners = 1, sd.winners = winners;
    Testgame__TgState st = TESTGAME__TG_STATE__INIT;
    st.round = 3, st.n_seats = 2, st.seats = seats;
    st.phase_case = TESTGAME__TG_STATE__PHASE_SHOWDOWN, st.showdown = &sd;
    uint8_t sbuf[FRAME_GAME_BODY_MAX];
    ssize_t sn = frame_pack_game(&st.base, NULL, NULL, sbuf, sizeof sbuf, &err);
    ck_assert_int_gt(sn, 0);
    Croupier__GameState gs = CROUPIER__GAME_STATE__INIT;
    gs.body = (ProtobufCBinaryData){(size_t)sn, sbuf};
    Croupier__Snapshot snap = CROUPIER__SNAPSHOT__INIT;
    snap.desk_id = 1, snap.engine = CROUPIER__ENGINE__ENGINE_GAME, snap.game = "testgame";
    snap.stake = 5, snap.state_case = CROUPIER__SNAPSHOT__STATE_GAME_STATE, snap.game_state = &gs;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT, sm.snapshot = &snap;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    Testgame__TgState *ds = (Testgame__TgState *)frame_unpack_game(
        &testgame__tg_state__descriptor, sbuf, (size_t)sn, NULL, NULL, &err);
    ck_assert_msg(ds != NULL, "refused: %s", err.detail);
    ck_assert_uint_eq(ds->n_seats, 2);
    ck_assert_uint_eq(ds->seats[0]->hole_cards.len, 2);
    ck_assert_int_eq(ds->phase_case, TESTGAME__TG_STATE__PHASE_SHOWDOWN);
    ck_assert_uint_eq(ds->showdown->winners[0], 1);
    frame_free(&ds->base);
    /* An empty body is a message with every field at its default. */
    Testgame__TgBetting *eb = (Testgame__TgBetting *)frame_unpack_game(
        &testgame__tg_betting__descriptor, NULL, 0, NULL, NULL, &err);
    ck_assert_ptr_nonnull(eb);
    ck_assert(!eb->has_pot);
    frame_free(&eb->base);
}
END_TEST

START_TEST(test_game_envelope_bodies_are_capped_and_never_card_checked)
{
    static uint8_t huge[FRAME_GAME_BODY_MAX + 1];
    memset(huge, 0, sizeof huge); /* zero bytes: no card code, refused only by the length */
    frame_error_t err;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    ga.body = (ProtobufCBinaryData){FRAME_GAME_BODY_MAX, huge};
    Croupier__Action act = CROUPIER__ACTION__INIT;
    act.kind_case = CROUPIER__ACTION__KIND_GAME, act.game = &ga;
    Croupier__ClientMessage cm = action_msg(&act);
    ck_assert_int_eq(frame_check_client(&cm, NULL, &err), 0);
    ga.body.len = FRAME_GAME_BODY_MAX + 1;
    expect_client_message_refused(&cm, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                  "ClientMessage.action.game.body: 8193 bytes, at most 8192");
    /* The same cap on the way out: an event, a snapshot state, a Play's action. */
    Croupier__GameEvent ge = CROUPIER__GAME_EVENT__INIT;
    ge.body = (ProtobufCBinaryData){FRAME_GAME_BODY_MAX + 1, huge};
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT, sm.game_event = &ge;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), -EINVAL);
    ck_assert_str_eq(err.detail, "ServerMessage.game_event.body: 8193 bytes, at most 8192");
    ge.body.len = 3;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    Croupier__Play play = CROUPIER__PLAY__INIT;
    play.seat = 2, play.action = &act;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY, sm.play = &play;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), -EINVAL);
    ck_assert_str_eq(err.detail, "ServerMessage.play.action.game.body: 8193 bytes, at most 8192");
    ga.body.len = 1;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);

    /* A Snapshot's GAME state belongs to ENGINE_GAME and to no other engine. */
    Croupier__GameState gs = CROUPIER__GAME_STATE__INIT;
    gs.body = (ProtobufCBinaryData){2, huge};
    Croupier__Snapshot snap = CROUPIER__SNAPSHOT__INIT;
    snap.desk_id = 1, snap.game = "testgame", snap.stake = 5;
    snap.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    snap.state_case = CROUPIER__SNAPSHOT__STATE_GAME_STATE, snap.game_state = &gs;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT, sm.snapshot = &snap;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), -EINVAL);
    ck_assert_str_eq(err.detail, "ServerMessage.snapshot: state does not belong to its engine");
    snap.engine = CROUPIER__ENGINE__ENGINE_GAME;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);
    Croupier__HoldemState ho = CROUPIER__HOLDEM_STATE__INIT;
    ho.street = CROUPIER__HOLDEM_STREET__HOLDEM_FLOP;
    snap.state_case = CROUPIER__SNAPSHOT__STATE_HOLDEM, snap.holdem = &ho;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), -EINVAL);
    snap.state_case = CROUPIER__SNAPSHOT__STATE__NOT_SET;
    ck_assert_int_eq(frame_check_server(&sm, NULL, &err), 0);

    /* A Join of ENGINE_GAME is a Join like any other. */
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_GAME, j.game = "testgame", j.stake = 5;
    Croupier__ClientMessage jm = CROUPIER__CLIENT_MESSAGE__INIT;
    jm.request_id = 9, jm.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN, jm.join = &j;
    ck_assert_int_eq(frame_check_client(&jm, NULL, &err), 0);

    /* The wire vouch knows the body is no card list, and the cap. */
    uint8_t buf[FRAME_GAME_BODY_MAX + 64];
    ga.body.len = 16;
    size_t n = protobuf_c_message_pack(&cm.base, buf);
    ck_assert_int_eq(frame_wire_vouch(&croupier__client_message__descriptor, buf, n, NULL), 0);
    ga.body.len = FRAME_GAME_BODY_MAX + 1;
    n = protobuf_c_message_pack(&cm.base, buf);
    ck_assert_int_eq(frame_wire_vouch(&croupier__client_message__descriptor, buf, n, NULL),
                     -EAGAIN);

    /* A game body longer than an envelope holds is refused by the game decoder too. */
    expect_game_refused(&testgame__tg_betting__descriptor, huge, sizeof huge, NULL,
                        CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "TgBetting: 8193 bytes");
    /* And so is one above the limits' frame cap. */
    frame_limits_t small = frame_limits_default;
    small.max_frame = 16;
    expect_game_refused(&testgame__tg_betting__descriptor, huge, 17, &small,
                        CROUPIER__ERROR_CODE__FRAME_TOO_LARGE, "TgBetting");
}
END_TEST

START_TEST(test_game_message_checks_enums_strings_cards_and_required_fields)
{
    Testgame__TgAction a = TESTGAME__TG_ACTION__INIT;
    a.move = (Testgame__TgMove)9;
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgAction.move: 9 is not a TgMove value");
    a.move = TESTGAME__TG_MOVE__TG_MOVE_UNSPECIFIED;
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgAction.move: unspecified");
    a.move = TESTGAME__TG_MOVE__TG_FOLD;
    /* Strings: UTF-8, no NUL, at most max_string (checked on the wire, before unpacking). */
    a.note = "\xc3\x28";
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgAction.note: not valid UTF-8");
    static char longnote[FRAME_DEFAULT_MAX_STRING + 2];
    memset(longnote, 'x', sizeof longnote - 1);
    a.note = longnote;
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST, "TgAction.note");
    a.note = NULL;
    /* `cards` is a card list: every byte a card code, at most FRAME_MAX_CARDS. */
    static uint8_t bad[] = {FRAME_CARD(2, 0), 0x00};
    a.has_cards = 1, a.cards = (ProtobufCBinaryData){sizeof bad, bad};
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgAction.cards: byte 1 is not a card code (0x00)");
    static uint8_t many[FRAME_MAX_CARDS + 1];
    memset(many, FRAME_CARD(5, 1), sizeof many);
    a.cards = (ProtobufCBinaryData){sizeof many, many};
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgAction.cards: 109 cards, at most 108");
    a.has_cards = 0;
    /* `token` is opaque: any bytes, at most max_string. */
    a.has_token = 1, a.token = (ProtobufCBinaryData){sizeof bad, bad};
    frame_error_t err;
    ck_assert_int_eq(frame_check_game(&a.base, NULL, tg_rules, &err), 0);
    static uint8_t longtok[FRAME_DEFAULT_MAX_STRING + 1];
    a.token = (ProtobufCBinaryData){sizeof longtok, longtok};
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgAction.token: 4097 bytes, at most 4096");
    a.has_token = 0;
    ck_assert_int_eq(frame_check_game(&a.base, NULL, tg_rules, &err), 0);

    /* Card lists one level down are found by their name too, with the field's path. */
    Testgame__TgSeat s0 = TESTGAME__TG_SEAT__INIT;
    Testgame__TgSeat *seats[] = {&s0};
    s0.has_hole_cards = 1, s0.hole_cards = (ProtobufCBinaryData){sizeof bad, bad};
    Testgame__TgState st = TESTGAME__TG_STATE__INIT;
    st.round = 1, st.n_seats = 1, st.seats = seats;
    expect_game_message_refused(&st.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgState.seats.hole_cards: byte 1 is not a card code");
    s0.has_hole_cards = 0;
    /* An enum one level down, and a oneof case that names no field (in memory only). */
    st.has_last_move = 1, st.last_move = (Testgame__TgMove)42;
    expect_game_message_refused(&st.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgState.last_move: 42 is not a TgMove value");
    st.last_move = TESTGAME__TG_MOVE__TG_MOVE_UNSPECIFIED; /* optional: zero is fine */
    ck_assert_int_eq(frame_check_game(&st.base, NULL, NULL, &err), 0);
    st.phase_case = (Testgame__TgState__PhaseCase)99;
    ck_assert_int_eq(frame_check_game(&st.base, NULL, NULL, &err), -EINVAL);
    ck_assert_msg(strstr(err.detail, "oneof case 99") != NULL, "%s", err.detail);
    st.phase_case = TESTGAME__TG_STATE__PHASE__NOT_SET;

    /* Missing required fields: refused on the wire by protobuf-c. */
    static const uint8_t no_move[] = {0x10, 0x05}; /* amount = 5, no move */
    expect_game_refused(&testgame__tg_action__descriptor, no_move, sizeof no_move, NULL,
                        CROUPIER__ERROR_CODE__MALFORMED_FRAME, "required");
    static const uint8_t seat_no_id[] = {0x08, 0x01, 0x12, 0x00}; /* round 1, seats: {} */
    expect_game_refused(&testgame__tg_state__descriptor, seat_no_id, sizeof seat_no_id, NULL,
                        CROUPIER__ERROR_CODE__MALFORMED_FRAME, "TgState");
    /* Not protobuf at all; a NUL inside a string; nesting too deep. */
    static const uint8_t junk[] = {0x0f, 0xff, 0xff};
    expect_game_refused(&testgame__tg_action__descriptor, junk, sizeof junk, NULL,
                        CROUPIER__ERROR_CODE__MALFORMED_FRAME, "TgAction");
    static const uint8_t nul[] = {0x08, 0x02, 0x22, 0x02, 'a', 0x00};
    expect_game_refused(&testgame__tg_action__descriptor, nul, sizeof nul, NULL,
                        CROUPIER__ERROR_CODE__BAD_REQUEST, "TgAction.note: not valid UTF-8");
    uint8_t deep[2 * (FRAME_MAX_DEPTH + 2)];
    size_t dn = 0;
    for (int i = 0; i < FRAME_MAX_DEPTH + 2; i++) {
        deep[dn++] = 0x0a;
        deep[dn++] = (uint8_t)(2 * (FRAME_MAX_DEPTH + 1 - i));
    }
    deep[sizeof deep - 1] = 0; /* the innermost is empty */
    expect_game_refused(&testgame__tg_nest__descriptor, deep, sizeof deep, NULL,
                        CROUPIER__ERROR_CODE__MALFORMED_FRAME, "nested too deep");
}
END_TEST

START_TEST(test_game_message_rules_callback_refuses_with_its_reason)
{
    Testgame__TgAction a = TESTGAME__TG_ACTION__INIT;
    a.move = TESTGAME__TG_MOVE__TG_BET;
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgAction.amount: a bet needs > 0");
    /* A callback that refuses without a reason: BAD_REQUEST naming the message. */
    a.move = TESTGAME__TG_MOVE__TG_SHOW;
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST,
                                "TgAction: refused by the game's rules");
    /* The rules run only on a message the generic checks accepted. */
    a.has_cards = 1, a.cards = (ProtobufCBinaryData){1, (uint8_t[]){0x01}};
    expect_game_message_refused(&a.base, CROUPIER__ERROR_CODE__BAD_REQUEST, "TgAction.cards");
    a.cards = (ProtobufCBinaryData){1, tg_cards};
    frame_error_t err;
    ck_assert_int_eq(frame_check_game(&a.base, NULL, tg_rules, &err), 0);
    /* Without a callback only the generic checks run. */
    a.move = TESTGAME__TG_MOVE__TG_BET;
    ck_assert_int_eq(frame_check_game(&a.base, NULL, NULL, &err), 0);
    uint8_t buf[64];
    ssize_t n = frame_pack_game(&a.base, NULL, NULL, buf, sizeof buf, &err);
    ck_assert_int_gt(n, 0);
    ProtobufCMessage *m =
        frame_unpack_game(&testgame__tg_action__descriptor, buf, (size_t)n, NULL, NULL, &err);
    ck_assert_ptr_nonnull(m);
    frame_free(m);
    /* err may be NULL. */
    ck_assert_ptr_null(
        frame_unpack_game(&testgame__tg_action__descriptor, buf, (size_t)n, NULL, tg_rules, NULL));
    ProtobufCBinaryData body = {7, (uint8_t *)"keep"};
    ck_assert_int_eq(frame_pack_game_body(&a.base, NULL, tg_rules, &body, NULL), -EINVAL);
    ck_assert_uint_eq(body.len, 7);
}
END_TEST

START_TEST(test_game_message_unpack_stays_within_the_budget)
{
    /* 2,000 seats of 4 bytes: each a message protobuf-c allocates, more than the default
     * budget of 16 KiB + 8 x the payload allows. */
    static uint8_t p[FRAME_GAME_BODY_MAX];
    size_t n = 0;
    p[n++] = 0x08, p[n++] = 0x01;
    while (n + 4 <= 8002)
        p[n++] = 0x12, p[n++] = 0x02, p[n++] = 0x08, p[n++] = 0x00;
    expect_game_refused(&testgame__tg_state__descriptor, p, n, NULL,
                        CROUPIER__ERROR_CODE__MALFORMED_FRAME, "allocation budget");
    /* 100 seats fit the default budget, not one of 1 KiB + the payload's size. */
    n = 2 + 100 * 4;
    frame_error_t err;
    Testgame__TgState *st = (Testgame__TgState *)frame_unpack_game(&testgame__tg_state__descriptor,
                                                                   p, n, NULL, NULL, &err);
    ck_assert_msg(st != NULL, "refused: %s", err.detail);
    ck_assert_uint_eq(st->n_seats, 100);
    ck_assert_uint_le(err.alloc_bytes, FRAME_DEFAULT_BUDGET_FLOOR + 8 * n);
    frame_free(&st->base);
    frame_limits_t lim = frame_limits_default;
    lim.budget_floor = 1024;
    lim.budget_factor = 1;
    expect_game_refused(&testgame__tg_state__descriptor, p, n, &lim,
                        CROUPIER__ERROR_CODE__MALFORMED_FRAME, "allocation budget");
    /* Every allocation failure on the way is clean (ASan/valgrind see no leak). */
    Testgame__TgAction a = TESTGAME__TG_ACTION__INIT;
    a.move = TESTGAME__TG_MOVE__TG_SHOW;
    a.has_cards = 1, a.cards = (ProtobufCBinaryData){sizeof tg_cards, tg_cards};
    a.note = "a note";
    uint8_t buf[128];
    ssize_t an = frame_pack_game(&a.base, NULL, NULL, buf, sizeof buf, &err);
    ck_assert_int_gt(an, 0);
    for (size_t floor = 0; floor < 1024; floor += 8) {
        lim.budget_floor = floor;
        lim.budget_factor = 0;
        ProtobufCMessage *m = frame_unpack_game(&testgame__tg_action__descriptor, buf, (size_t)an,
                                                &lim, tg_rules, &err);
        if (m != NULL) {
            frame_free(m);
            break;
        }
        ck_assert_int_eq(err.code, CROUPIER__ERROR_CODE__MALFORMED_FRAME);
    }
}
END_TEST

static Suite *proto_suite(void)
{
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("roundtrip");
    tcase_add_test(tc, test_proto_every_client_message_kind_round_trips);
    tcase_add_test(tc, test_proto_every_server_message_kind_round_trips);
    tcase_add_test(tc, test_proto_every_rpc_frame_kind_round_trips);
    tcase_add_test(tc, test_proto_decoded_fields_keep_their_values);
    suite_add_tcase(s, tc);

    tc = tcase_create("framing");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_frame_stream_fed_one_byte_at_a_time_decodes_every_frame_once);
    tcase_add_test(tc, test_frame_split_at_every_byte_gives_need_more_then_the_frame);
    tcase_add_test(tc, test_frame_many_frames_in_one_buffer_all_decode_in_one_loop);
    tcase_add_test(tc, test_frame_over_cap_is_refused_before_the_payload_arrives);
    tcase_add_test(tc, test_frame_cap_is_configurable_and_exact);
    tcase_add_test(tc, test_frame_truncated_payload_is_malformed_and_waits_in_a_stream);
    tcase_add_test(tc, test_frame_malformed_frame_is_consumed_and_the_next_one_decodes);
    tcase_add_test(tc, test_frame_malformed_protobuf_bytes_are_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("validation");
    tcase_add_test(tc, test_check_undefined_enum_values_are_refused);
    tcase_add_test(tc, test_check_invalid_utf8_strings_are_refused);
    tcase_add_test(tc, test_check_strings_above_the_limit_are_refused);
    tcase_add_test(tc, test_check_requests_need_an_id_and_a_body);
    tcase_add_test(tc, test_check_action_fields_must_match_the_move);
    tcase_add_test(tc, test_check_list_tables_filters_and_table_ads_follow_the_rules);
    tcase_add_test(tc, test_check_tournament_messages_follow_the_rules);
    tcase_add_test(tc, test_check_round_end_transfers_follow_the_rules);
    tcase_add_test(tc, test_check_rpc_frames_follow_the_link_rules);
    tcase_add_test(tc, test_check_card_codes);
    tcase_add_test(tc, test_names_of_results_and_codes);
    suite_add_tcase(s, tc);

    tc = tcase_create("forward");
    tcase_add_test(tc, test_forward_every_server_kind_arrives_as_the_reencoded_message);
    tcase_add_test(tc, test_forward_replaces_every_occurrence_of_the_field);
    tcase_add_test(tc, test_forward_refuses_what_it_cannot_forward_and_writes_nothing);
    suite_add_tcase(s, tc);

    tc = tcase_create("game");
    tcase_add_test(tc, test_game_message_round_trips_inside_its_envelope);
    tcase_add_test(tc, test_game_envelope_bodies_are_capped_and_never_card_checked);
    tcase_add_test(tc, test_game_message_checks_enums_strings_cards_and_required_fields);
    tcase_add_test(tc, test_game_message_rules_callback_refuses_with_its_reason);
    tcase_add_test(tc, test_game_message_unpack_stays_within_the_budget);
    suite_add_tcase(s, tc);

    tc = tcase_create("budget");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_budget_many_empty_submessages_are_refused_within_the_budget);
    tcase_add_test(tc, test_budget_many_unknown_fields_are_refused_within_the_budget);
    tcase_add_test(tc, test_budget_every_allocation_failure_is_clean);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(proto_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
