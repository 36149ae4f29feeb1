/*
 * Unit tests for proto/'s relaying without decoding (frame_wire.c; docs/protocol.md "Relaying
 * without decoding", "One push, many players"): the wire reader, the vouch (never for bytes the
 * decoder refuses), the scan of rpc frames and its cache, push_to frames, a request id written
 * in front, and the scratch decode. The codec's other tests are in test_proto.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"
#include "test_proto_samples.h"

static uint8_t big[FRAME_DEFAULT_MAX + FRAME_HEADER_SIZE];

/* Packs with protobuf-c alone, bypassing every check (to make frames a bad peer would send). */
static size_t raw_pack(const ProtobufCMessage *m, uint8_t *buf)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    ck_assert_uint_le(n, FRAME_DEFAULT_MAX);
    return protobuf_c_message_pack(m, buf);
}

/* A message's bytes as protobuf-c writes them (malloc'ed; to compare two messages). */
static uint8_t *canonical(const ProtobufCMessage *m, size_t *len)
{
    *len = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*len + 1);
    protobuf_c_message_pack(m, b);
    return b;
}

/* ---- reading the wire without decoding ------------------------------------------------------ */

START_TEST(test_wire_reader_reads_every_wire_type_and_stops_at_bad_bytes)
{
    /* 1: varint 300; 2: fixed64; 3: bytes "ab"; 4: fixed32; 536870911: varint 0 */
    const uint8_t msg[] = {0x08, 0xac, 0x02, 0x11, 1,    2,    3,    4,    5,
                           6,    7,    8,    0x1a, 0x02, 'a',  'b',  0x25, 1,
                           0,    0,    0,    0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00};
    frame_wire_reader_t r;
    frame_wire_value_t v;
    frame_wire_init(&r, msg, sizeof msg);
    ck_assert_int_eq(frame_wire_next(&r, &v), 1);
    ck_assert_uint_eq(v.field, 1);
    ck_assert_uint_eq(v.type, 0);
    ck_assert_uint_eq(v.num, 300);
    ck_assert_uint_eq(v.len, 2);
    ck_assert_uint_eq(v.start, 0);
    ck_assert_int_eq(frame_wire_next(&r, &v), 1);
    ck_assert_uint_eq(v.field, 2);
    ck_assert_uint_eq(v.type, 1);
    ck_assert_uint_eq(v.num, 0x0807060504030201ULL);
    ck_assert_int_eq(frame_wire_next(&r, &v), 1);
    ck_assert_uint_eq(v.field, 3);
    ck_assert_uint_eq(v.type, 2);
    ck_assert_uint_eq(v.len, 2);
    ck_assert_ptr_eq(v.data, msg + 14);
    ck_assert_uint_eq(v.start, 12);
    ck_assert_int_eq(frame_wire_next(&r, &v), 1);
    ck_assert_uint_eq(v.field, 4);
    ck_assert_uint_eq(v.num, 1);
    ck_assert_int_eq(frame_wire_next(&r, &v), 1);
    ck_assert_uint_eq(v.field, 536870911u);
    ck_assert_uint_eq(v.num, 0);
    ck_assert_int_eq(frame_wire_next(&r, &v), 0);
    ck_assert_int_eq(frame_wire_next(&r, &v), 0);

    /* Every proper prefix that cuts a field is refused; the reader never passes the end. */
    for (size_t cut = 1; cut < sizeof msg; cut++) {
        frame_wire_init(&r, msg, cut);
        int rc, n = 0;
        while ((rc = frame_wire_next(&r, &v)) == 1) {
            ck_assert_uint_le(r.pos, cut);
            ck_assert_uint_le(v.data + v.len - msg, cut);
            n++;
        }
        bool boundary = cut == 3 || cut == 12 || cut == 16 || cut == 21;
        ck_assert_int_eq(rc, boundary ? 0 : -EINVAL);
        ck_assert_int_le(n, 5);
    }
    const uint8_t field0[] = {0x00, 0x01};
    const uint8_t group[] = {0x0b};
    const uint8_t type7[] = {0x0f, 0x00};
    const uint8_t big_id[] = {0x80, 0x80, 0x80, 0x80, 0x20, 0x00}; /* field 2^29 */
    const uint8_t long_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    const uint8_t long_len[] = {0x1a, 0x05, 'a'};
    const uint8_t *bad[] = {field0, group, type7, big_id, long_varint, long_len};
    size_t bad_len[] = {sizeof field0, sizeof group,       sizeof type7,
                        sizeof big_id, sizeof long_varint, sizeof long_len};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        frame_wire_init(&r, bad[i], bad_len[i]);
        ck_assert_msg(frame_wire_next(&r, &v) == -EINVAL, "bad input %zu accepted", i);
        ck_assert_uint_eq(r.pos, 0);
    }
    frame_wire_init(&r, NULL, 5);
    ck_assert_int_eq(frame_wire_next(&r, &v), 0);
    uint8_t buf[10];
    ck_assert_uint_eq(frame_wire_put_varint(buf, 0), 1);
    ck_assert_uint_eq(frame_wire_put_varint(buf, 300), 2);
    ck_assert_uint_eq(frame_wire_put_varint(buf, UINT64_MAX), 10);
}
END_TEST

/* Vouched-for bytes must be accepted by the generic decoder of the same type (the rules of a
 * message type are frame_scan_rpc's business, tested below). */
static void vouch_agrees(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n,
                         const char *name, int *vouched)
{
    if (frame_wire_vouch(d, p, n, NULL) != 0)
        return;
    frame_error_t err;
    ProtobufCMessage *m = frame_unpack(d, p, n, NULL, &err);
    ck_assert_msg(m != NULL, "%s: vouched for, decoder refuses: %s", name, err.detail);
    frame_free(m);
    (*vouched)++;
}

typedef struct vouch_run {
    int samples, vouched, mutants_vouched;
    uint64_t rng;
} vouch_run_t;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The sample, then mutations of it (byte changes, cuts, inserted bytes), through vouch_agrees. */
static void vouch_sample(vouch_run_t *run, const ProtobufCMessage *m, const char *name)
{
    static uint8_t buf[FRAME_DEFAULT_MAX], mut[FRAME_DEFAULT_MAX + 4];
    size_t n = protobuf_c_message_get_packed_size(m);
    ck_assert_uint_le(n, sizeof buf);
    protobuf_c_message_pack(m, buf);
    run->samples++;
    vouch_agrees(m->descriptor, buf, n, name, &run->vouched);
    for (int i = 0; i < 150; i++) {
        size_t k = n;
        memcpy(mut, buf, n);
        uint64_t x = rng_next(&run->rng);
        size_t at = n > 0 ? (size_t)(x >> 8) % n : 0;
        switch (x % 4) {
        case 0:
            mut[at] ^= (uint8_t)(1u << ((x >> 40) % 8));
            break;
        case 1:
            mut[at] = (uint8_t)(x >> 32);
            break;
        case 2:
            k = at;
            break;
        default:
            memmove(mut + at + 1, mut + at, n - at);
            mut[at] = (uint8_t)(x >> 32);
            k = n + 1;
            break;
        }
        vouch_agrees(m->descriptor, mut, k, name, &run->mutants_vouched);
    }
}

static void vouch_client(void *arg, const char *name, const Croupier__ClientMessage *m)
{
    vouch_sample(arg, &m->base, name);
}

static void vouch_server(void *arg, const char *name, const Croupier__ServerMessage *m)
{
    vouch_sample(arg, &m->base, name);
}

static void vouch_rpc(void *arg, const char *name, const Croupier__RpcFrame *m)
{
    vouch_sample(arg, &m->base, name);
}

START_TEST(test_wire_vouch_only_for_bytes_the_decoder_accepts)
{
    vouch_run_t run = {0, 0, 0, 0x9e3779b97f4a7c15ULL};
    samples_client(vouch_client, &run);
    samples_server(vouch_server, &run);
    samples_rpc(vouch_rpc, &run);
    /* The samples are plain encodings of valid messages: all of them are vouched for. */
    ck_assert_int_eq(run.vouched, run.samples);
    ck_assert_int_gt(run.mutants_vouched, 0);
}
END_TEST

START_TEST(test_wire_vouch_declines_unusual_encodings_and_invalid_values)
{
    const ProtobufCMessageDescriptor *sd = &croupier__server_message__descriptor;
    /* ServerMessage{event_seq=9, pong{nonce=3}} */
    const uint8_t plain[] = {0x10, 0x09, 0xb2, 0x01, 0x02, 0x08, 0x03};
    ck_assert_int_eq(frame_wire_vouch(sd, plain, sizeof plain, NULL), 0);
    /* event_seq twice (the decoder takes the last: not vouched for, decoded instead) */
    const uint8_t dup[] = {0x10, 0x09, 0x10, 0x0a, 0xb2, 0x01, 0x02, 0x08, 0x03};
    ck_assert_int_eq(frame_wire_vouch(sd, dup, sizeof dup, NULL), -EAGAIN);
    /* an unknown field 99 */
    const uint8_t unknown[] = {0x98, 0x06, 0x01, 0xb2, 0x01, 0x02, 0x08, 0x03};
    ck_assert_int_eq(frame_wire_vouch(sd, unknown, sizeof unknown, NULL), -EAGAIN);
    /* two members of the body oneof: pong and result */
    const uint8_t two[] = {0xb2, 0x01, 0x02, 0x08, 0x03, 0x62, 0x00};
    ck_assert_int_eq(frame_wire_vouch(sd, two, sizeof two, NULL), -EAGAIN);
    /* event_seq as fixed64 (wrong wire type) */
    const uint8_t wt[] = {0x11, 1, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_int_eq(frame_wire_vouch(sd, wt, sizeof wt, NULL), -EAGAIN);
    /* pong without its required nonce */
    const uint8_t noreq[] = {0xb2, 0x01, 0x00};
    ck_assert_int_eq(frame_wire_vouch(sd, noreq, sizeof noreq, NULL), -EAGAIN);
    /* result.error.code = 999 (no such ErrorCode) */
    const uint8_t badenum[] = {0x62, 0x05, 0x0a, 0x03, 0x08, 0xe7, 0x07};
    ck_assert_int_eq(frame_wire_vouch(sd, badenum, sizeof badenum, NULL), -EAGAIN);
    /* truncated */
    ck_assert_int_eq(frame_wire_vouch(sd, plain, sizeof plain - 1, NULL), -EAGAIN);
    /* above the cap */
    frame_limits_t lim = frame_limits_default;
    lim.max_frame = sizeof plain - 1;
    ck_assert_int_eq(frame_wire_vouch(sd, plain, sizeof plain, &lim), -EAGAIN);
    /* a string with a NUL, and one above max_string: GoAway{reason=1, delay=0, detail} */
    const uint8_t nul[] = {0xaa, 0x01, 0x09, 0x08, 0x01, 0x10, 0x00, 0x1a, 0x03, 'a', 0, 'b'};
    const uint8_t ok[] = {0xaa, 0x01, 0x09, 0x08, 0x01, 0x10, 0x00, 0x1a, 0x03, 'a', 'c', 'b'};
    frame_error_t err;
    Croupier__ServerMessage *m = frame_unpack_server(ok, sizeof ok, NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.detail);
    frame_free_server(m);
    ck_assert_int_eq(frame_wire_vouch(sd, ok, sizeof ok, NULL), 0);
    ck_assert_int_eq(frame_wire_vouch(sd, nul, sizeof nul, NULL), -EAGAIN);
    lim = frame_limits_default;
    lim.max_string = 2;
    ck_assert_int_eq(frame_wire_vouch(sd, ok, sizeof ok, &lim), -EAGAIN);
    /* the decoder agrees with each refusal that is one (duplicates and unknown fields are
     * accepted by it: the vouch only declines them) */
    const uint8_t *refused[] = {two, noreq, badenum, nul};
    size_t refused_len[] = {sizeof two, sizeof noreq, sizeof badenum, sizeof nul};
    for (size_t i = 0; i < 4; i++) {
        if (i == 0)
            continue; /* two oneof members: protobuf-c keeps the last one */
        m = frame_unpack_server(refused[i], refused_len[i], NULL, &err);
        ck_assert_msg(m == NULL, "case %zu accepted by the decoder", i);
    }
}
END_TEST

START_TEST(test_scan_field_numbers_match_the_descriptors)
{
    const ProtobufCMessageDescriptor *rd = &croupier__rpc_frame__descriptor;
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(rd, "request_id")->id, 1);
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(rd, "player_id")->id, 4);
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(rd, "session_id")->id, 5);
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(rd, "reply")->id,
                      CROUPIER__RPC_FRAME__BODY_REPLY);
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(rd, "push")->id,
                      CROUPIER__RPC_FRAME__BODY_PUSH);
    /* every body field is numbered from 10 and nothing else is */
    for (unsigned i = 0; i < rd->n_fields; i++)
        ck_assert_int_eq(rd->fields[i].id >= 10,
                         (rd->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0);
    const ProtobufCMessageDescriptor *pd = &croupier__reply__descriptor;
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(pd, "code")->id, 1);
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(pd, "error")->id, 2);
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(pd, "payload")->id, 3);
    const ProtobufCMessageDescriptor *sd = &croupier__server_message__descriptor;
    ck_assert_uint_eq(protobuf_c_message_descriptor_get_field_by_name(sd, "request_id")->id, 1);
    for (unsigned i = 0; i < sd->n_fields; i++)
        ck_assert_int_eq(sd->fields[i].id >= 10,
                         (sd->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0);
    ck_assert_uint_eq(
        protobuf_c_message_descriptor_get_field_by_name(&croupier__result__descriptor, "error")->id,
        1);
}
END_TEST

typedef struct scan_run {
    int fast, decoded;
} scan_run_t;

/*
 * Wraps a server sample as a reply (code OK) and as a push: the scan takes every such frame
 * the decoder accepts (they are plain encodings) and agrees with it on every value it reports.
 */
static void scan_one(void *arg, const char *name, const Croupier__ServerMessage *sample)
{
    scan_run_t *run = arg;
    for (int push = 0; push < 2; push++) {
        Croupier__ServerMessage sm = *sample;
        Croupier__Reply rep = CROUPIER__REPLY__INIT;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.request_id = push ? 0 : 77;
        f.has_player_id = true;
        f.player_id = 42;
        f.has_session_id = !push;
        f.session_id = 9;
        if (push) {
            f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
            f.push = &sm;
        } else {
            rep.payload = &sm;
            f.body_case = CROUPIER__RPC_FRAME__BODY_REPLY;
            f.reply = &rep;
        }
        size_t n = raw_pack(&f.base, big);
        frame_error_t err;
        Croupier__RpcFrame *got = frame_unpack_rpc(big, n, NULL, &err);
        frame_rpc_scan_t s;
        int rc = frame_scan_rpc(big, n, NULL, &s);
        if (got == NULL) {
            ck_assert_msg(rc == -EAGAIN, "%s: scanned a frame the decoder refuses", name);
            continue;
        }
        run->decoded++;
        ck_assert_msg(rc == 0, "%s (%s): not scanned", name, push ? "push" : "reply");
        if (rc == 0) {
            run->fast++;
            ck_assert_uint_eq(s.request_id, got->request_id);
            ck_assert_int_eq(s.has_player_id, got->has_player_id);
            ck_assert_uint_eq(s.player_id, got->player_id);
            ck_assert_int_eq(s.has_session_id, got->has_session_id);
            ck_assert_uint_eq(s.session_id, got->session_id);
            ck_assert_uint_eq(s.body, got->body_case);
            const Croupier__ServerMessage *want = push ? got->push : got->reply->payload;
            ck_assert_uint_eq(s.msg_body, want->body_case);
            ck_assert_int_eq(s.msg_request_id, want->has_request_id);
            const uint8_t *v, *sub;
            size_t vlen, sublen;
            if (push) {
                ck_assert_int_eq(frame_wire_field(big, n, 17, &sub, &sublen), 0);
            } else {
                ck_assert_int_eq(frame_wire_field(big, n, 16, &v, &vlen), 0);
                ck_assert_int_eq(frame_wire_field(v, vlen, 3, &sub, &sublen), 0);
            }
            ck_assert_ptr_eq(s.msg, sub);
            ck_assert_uint_eq(s.msg_len, sublen);
        }
        frame_free_rpc(got);
    }
}

START_TEST(test_scan_rpc_reads_replies_and_pushes_as_the_decoder_does)
{
    scan_run_t run = {0, 0};
    samples_server(scan_one, &run);
    ck_assert_int_gt(run.fast, 0);
    ck_assert_int_eq(run.fast, run.decoded);
}
END_TEST

/* Packs sample as a push to player (0: the field absent) with a session id when session. */
static size_t scan_push(const Croupier__ServerMessage *sample, uint64_t player, bool session,
                        uint8_t *out)
{
    Croupier__ServerMessage sm = *sample;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    f.has_player_id = player != 0;
    f.player_id = player;
    f.has_session_id = session;
    f.session_id = 7;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
    f.push = &sm;
    return raw_pack(&f.base, out);
}

static void scan_cached_one(void *arg, const char *name, const Croupier__ServerMessage *sample)
{
    frame_scan_cache_t *cache = arg;
    static uint8_t again[1 << 17];
    /* Each push twice to other players (the second meets the first's verdict), then with no
     * player (an envelope the scan refuses, whatever the cache holds). */
    const uint64_t players[] = {42, 43, 44, 0};
    for (size_t k = 0; k < sizeof players / sizeof players[0]; k++) {
        size_t n = scan_push(sample, players[k], k == 2, again);
        frame_rpc_scan_t want, got;
        int rc_want = frame_scan_rpc(again, n, NULL, &want);
        int rc_got = frame_scan_rpc_cached(again, n, NULL, cache, &got);
        ck_assert_msg(rc_got == rc_want, "%s, player %llu: cached %d, uncached %d", name,
                      (unsigned long long)players[k], rc_got, rc_want);
        if (rc_want != 0)
            continue;
        ck_assert_uint_eq(got.player_id, want.player_id);
        ck_assert_int_eq(got.has_session_id, want.has_session_id);
        ck_assert_uint_eq(got.body, want.body);
        ck_assert_ptr_eq(got.msg, want.msg);
        ck_assert_uint_eq(got.msg_len, want.msg_len);
        ck_assert_uint_eq(got.msg_body, want.msg_body);
        ck_assert_int_eq(got.msg_request_id, want.msg_request_id);
    }
}

/* The cached scan gives the scan's verdict on every sample, remembered or not; a bad push with
 * the bytes of no good one, or a good push in a bad envelope, is still refused. */
START_TEST(test_scan_rpc_cached_agrees_with_the_scan)
{
    frame_scan_cache_t cache;
    memset(&cache, 0, sizeof cache);
    samples_server(scan_cached_one, &cache);

    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play play = CROUPIER__PLAY__INIT;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    act.kind_case = CROUPIER__ACTION__KIND_GAME;
    act.game = &ga;
    play.seat = 1;
    play.action = &act;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &play;
    frame_rpc_scan_t s;
    size_t n = scan_push(&sm, 42, false, big);
    ck_assert_int_eq(frame_scan_rpc_cached(big, n, NULL, &cache, &s), 0);
    ck_assert_uint_eq(cache.len, s.msg_len); /* remembered */
    ck_assert_int_eq(frame_scan_rpc_cached(big, n, NULL, &cache, &s), 0);
    /* A Play without a move breaks a rule of its own: never taken for the good one. */
    act.kind_case = CROUPIER__ACTION__KIND__NOT_SET;
    n = scan_push(&sm, 42, false, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), -EAGAIN);
    ck_assert_int_eq(frame_scan_rpc_cached(big, n, NULL, &cache, &s), -EAGAIN);
    /* The good one again, in a frame that repeats its request id field: refused. */
    act.kind_case = CROUPIER__ACTION__KIND_GAME;
    n = scan_push(&sm, 42, false, big);
    ck_assert_int_eq(frame_scan_rpc_cached(big, n, NULL, &cache, &s), 0);
    uint8_t dup[2] = {0x08, 0x05}; /* RpcFrame.request_id = 5, twice */
    memcpy(big + n, dup, 2);
    memcpy(big + n + 2, dup, 2);
    ck_assert_int_eq(frame_scan_rpc(big, n + 4, NULL, &s), -EAGAIN);
    ck_assert_int_eq(frame_scan_rpc_cached(big, n + 4, NULL, &cache, &s), -EAGAIN);
    /* Under other limits the message is checked again (here a frame cap it no longer fits). */
    frame_limits_t lim = {FRAME_DEFAULT_MAX, FRAME_DEFAULT_BUDGET_FACTOR,
                          FRAME_DEFAULT_BUDGET_FLOOR, FRAME_DEFAULT_MAX_STRING};
    ck_assert_int_eq(frame_scan_rpc_cached(big, n, &lim, &cache, &s), 0);
    lim.max_frame = n - 1;
    ck_assert_int_eq(frame_scan_rpc_cached(big, n, &lim, &cache, &s), -EAGAIN);
}
END_TEST

/* A push_to push (docs/protocol.md "One push, many players") through the scan and the decoder:
 * both accept it or both refuse it; accepted, the scan names the same players as the decoder. */
static int push_to_verdict(const uint8_t *p, size_t n, uint64_t *ids, size_t *nids)
{
    frame_rpc_scan_t s;
    int scan = frame_scan_rpc(p, n, NULL, &s);
    Croupier__RpcFrame *f = frame_unpack_rpc(p, n, NULL, NULL);
    if (scan == 0) {
        ck_assert_ptr_nonnull(f); /* the scan never accepts what the decoder refuses */
        ck_assert_uint_eq(s.n_push_to, f->n_push_to);
        size_t pos = 0, k = 0;
        uint64_t id;
        while (frame_push_to_next(&s, &pos, &id)) {
            ck_assert_uint_lt(k, f->n_push_to);
            ck_assert_uint_eq(id, f->push_to[k++]);
        }
        ck_assert_uint_eq(k, f->n_push_to);
    }
    int rc = f != NULL ? 0 : -EINVAL;
    if (f != NULL && ids != NULL) {
        ids[0] = f->player_id;
        for (size_t k = 0; k < f->n_push_to; k++)
            ids[k + 1] = f->push_to[k];
        *nids = 1 + f->n_push_to;
    }
    frame_free_rpc(f);
    return rc == 0 ? (scan == 0 ? 0 : 1) : rc;
}

/* frame_pack_push() writes what protobuf-c writes for the same RpcFrame; the scan and the decoder
 * read its players back; the rules (at most 64, none 0, none twice, none player_id, only with a
 * push) are the decoder's and the scan's alike; an unpacked push_to is left to the decoder. */
START_TEST(test_push_to_frames_are_packed_scanned_and_checked)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play play = CROUPIER__PLAY__INIT;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    act.kind_case = CROUPIER__ACTION__KIND_GAME;
    act.game = &ga;
    play.seat = 3;
    play.action = &act;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &play;
    sm.has_event_seq = true;
    sm.event_seq = 77;
    static uint8_t msg[4096], want[4096];
    size_t msg_len = raw_pack(&sm.base, msg);
    uint64_t players[FRAME_PUSH_TO_MAX + 2];
    for (size_t i = 0; i < FRAME_PUSH_TO_MAX + 2; i++)
        players[i] = 1000 + i * 100003; /* one- to three-byte varints */
    for (size_t n = 1; n <= FRAME_PUSH_TO_MAX + 1; n += (n < 10 ? 1 : 27)) {
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.has_player_id = true;
        f.player_id = players[0];
        f.n_push_to = n - 1;
        f.push_to = players + 1;
        f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
        f.push = &sm;
        size_t want_len = raw_pack(&f.base, want);
        size_t len;
        uint8_t *got = frame_pack_push(players, n, msg, msg_len, &len);
        ck_assert_ptr_nonnull(got);
        ck_assert_uint_eq(len, want_len + FRAME_HEADER_SIZE);
        ck_assert_uint_eq(got[0] << 24 | got[1] << 16 | got[2] << 8 | got[3], want_len);
        ck_assert_mem_eq(got + FRAME_HEADER_SIZE, want, want_len);
        uint64_t ids[FRAME_PUSH_TO_MAX + 1];
        size_t nids = 0;
        ck_assert_int_eq(push_to_verdict(got + FRAME_HEADER_SIZE, want_len, ids, &nids), 0);
        ck_assert_uint_eq(nids, n);
        ck_assert_mem_eq(ids, players, n * sizeof *ids);
        frame_rpc_scan_t s;
        ck_assert_int_eq(frame_scan_rpc(got + FRAME_HEADER_SIZE, want_len, NULL, &s), 0);
        ck_assert_uint_eq(s.player_id, players[0]);
        ck_assert_uint_eq(s.msg_len, msg_len);
        ck_assert_mem_eq(s.msg, msg, msg_len);
        free(got);
    }
    size_t len;
    /* Bad lists: frame_pack_push refuses them; protobuf-c packs them and both readers refuse. */
    uint64_t bad[][3] = {{5, 6, 6}, {5, 0, 7}, {5, 6, 5}};
    for (size_t b = 0; b < 3; b++) {
        ck_assert_ptr_null(frame_pack_push(bad[b], 3, msg, msg_len, &len));
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.has_player_id = true;
        f.player_id = bad[b][0];
        f.n_push_to = 2;
        f.push_to = bad[b] + 1;
        f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
        f.push = &sm;
        size_t n = raw_pack(&f.base, want);
        ck_assert_int_eq(push_to_verdict(want, n, NULL, NULL), -EINVAL);
    }
    ck_assert_ptr_null(frame_pack_push(players, FRAME_PUSH_TO_MAX + 2, msg, msg_len, &len));
    {
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.has_player_id = true;
        f.player_id = players[0];
        f.n_push_to = FRAME_PUSH_TO_MAX + 1; /* 65 */
        f.push_to = players + 1;
        f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
        f.push = &sm;
        size_t n = raw_pack(&f.base, want);
        ck_assert_int_eq(push_to_verdict(want, n, NULL, NULL), -EINVAL);
    }
    /* push_to on a reply: refused by both. */
    {
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        Croupier__Reply rep = CROUPIER__REPLY__INIT;
        rep.code = CROUPIER__ERROR_CODE__OK;
        rep.payload = &sm;
        f.request_id = 9;
        f.has_player_id = true;
        f.player_id = players[0];
        f.n_push_to = 1;
        f.push_to = players + 1;
        f.body_case = CROUPIER__RPC_FRAME__BODY_REPLY;
        f.reply = &rep;
        size_t n = raw_pack(&f.base, want);
        ck_assert_int_eq(push_to_verdict(want, n, NULL, NULL), -EINVAL);
    }
    /* Unpacked (one varint field per id, which proto2 decoders accept for a packed field): the
     * decoder's verdict, not the scan's. */
    {
        uint8_t *got = frame_pack_push(players, 1, msg, msg_len, &len);
        ck_assert_ptr_nonnull(got);
        size_t n = 0;
        want[n++] = 1 << 3;
        want[n++] = 0;
        want[n++] = 9 << 3; /* push_to, varint */
        n += frame_wire_put_varint(want + n, players[1]);
        memcpy(want + n, got + FRAME_HEADER_SIZE + 2, len - FRAME_HEADER_SIZE - 2);
        n += len - FRAME_HEADER_SIZE - 2;
        free(got);
        uint64_t ids[2];
        size_t nids = 0;
        ck_assert_int_eq(push_to_verdict(want, n, ids, &nids), 1);
        ck_assert_uint_eq(nids, 2);
        ck_assert_uint_eq(ids[1], players[1]);
    }
}
END_TEST

START_TEST(test_scan_rpc_leaves_errors_and_other_bodies_to_the_decoder)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result res = CROUPIER__RESULT__INIT;
    Croupier__Error e = CROUPIER__ERROR__INIT;
    Croupier__Reply rep = CROUPIER__REPLY__INIT;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &res;
    rep.payload = &sm;
    f.request_id = 5;
    f.body_case = CROUPIER__RPC_FRAME__BODY_REPLY;
    f.reply = &rep;
    frame_rpc_scan_t s;
    size_t n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), 0);
    ck_assert_uint_eq(s.request_id, 5);
    ck_assert_uint_eq(s.msg_body, CROUPIER__SERVER_MESSAGE__BODY_RESULT);
    ck_assert(!s.msg_request_id);

    /* an error code (DRAINING: the gateway retries) */
    rep.code = CROUPIER__ERROR_CODE__DRAINING;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), -EAGAIN);
    /* OK with an error: the decoder refuses it */
    rep.code = CROUPIER__ERROR_CODE__OK;
    e.code = CROUPIER__ERROR_CODE__DRAINING;
    rep.error = &e;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), -EAGAIN);
    ck_assert_ptr_null(frame_unpack_rpc(big, n, NULL, NULL));
    rep.error = NULL;
    /* a Result carrying an error: its rule (the code is not OK) is checked */
    res.error = &e;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), 0);
    e.code = CROUPIER__ERROR_CODE__OK;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), -EAGAIN);
    ck_assert_ptr_null(frame_unpack_rpc(big, n, NULL, NULL));
    res.error = NULL;
    /* no payload */
    rep.payload = NULL;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), -EAGAIN);
    rep.payload = &sm;
    /* a reply without a request id: the decoder refuses it */
    f.request_id = 0;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), -EAGAIN);
    ck_assert_ptr_null(frame_unpack_rpc(big, n, NULL, NULL));
    /* a payload with its own request_id: scanned, and said so */
    f.request_id = 5;
    sm.has_request_id = true;
    sm.request_id = 3;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), 0);
    ck_assert(s.msg_request_id);
    sm.has_request_id = false;
    /* a push without player_id: the decoder refuses it */
    f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
    f.push = &sm;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), -EAGAIN);
    ck_assert_ptr_null(frame_unpack_rpc(big, n, NULL, NULL));
    f.has_player_id = true;
    f.player_id = 8;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), 0);
    ck_assert_uint_eq(s.player_id, 8);
    ck_assert_uint_eq(s.body, CROUPIER__RPC_FRAME__BODY_PUSH);
    /* pushed bodies with rules of their own: a RoundEnd needs a round id, is voided exactly
     * when it has a void reason, and has no negative rake */
    Croupier__ServerMessage ev = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    re.round_id = "s:1:2:3";
    re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
    ev.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
    ev.round_end = &re;
    f.push = &ev;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), 0);
    ck_assert_uint_eq(s.msg_body, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END);
    const char *bad_ids[] = {"", "s:1:2:3", "s:1:2:3"};
    for (int k = 0; k < 3; k++) {
        re.round_id = (char *)bad_ids[k];
        re.outcome = k == 1 ? CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED
                            : CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
        re.has_rake = k == 2;
        re.rake = -1;
        n = raw_pack(&f.base, big);
        ck_assert_msg(frame_scan_rpc(big, n, NULL, &s) == -EAGAIN, "round_end case %d", k);
        ck_assert_ptr_null(frame_unpack_rpc(big, n, NULL, NULL));
    }
    f.push = &sm;
    /* other bodies: a pong */
    Croupier__RpcPong pong = CROUPIER__RPC_PONG__INIT;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PONG;
    f.pong = &pong;
    n = raw_pack(&f.base, big);
    ck_assert_int_eq(frame_scan_rpc(big, n, NULL, &s), -EAGAIN);
    /* garbage */
    const uint8_t junk[] = {0xff, 0xff, 0xff};
    ck_assert_int_eq(frame_scan_rpc(junk, sizeof junk, NULL, &s), -EAGAIN);
    ck_assert_int_eq(frame_scan_rpc(NULL, 0, NULL, &s), -EAGAIN);
}
END_TEST

START_TEST(test_prefixed_request_id_in_front_decodes_as_the_answer)
{
    /* The game server's ServerMessage{event_seq=9, result{}}; the gateway writes request_id
     * in front of its bytes: protobuf allows any field order. */
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result res = CROUPIER__RESULT__INIT;
    sm.has_event_seq = true;
    sm.event_seq = 9;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &res;
    size_t n = raw_pack(&sm.base, big);
    struct evbuffer *out = evbuffer_new();
    ck_assert_int_eq(frame_write_prefixed(out, 1, 300, big, n, NULL), 0);
    ck_assert_uint_eq(evbuffer_get_length(out), FRAME_HEADER_SIZE + 3 + n);
    Croupier__ServerMessage *m;
    frame_error_t err;
    ck_assert_int_eq(frame_read_server(out, NULL, &m, &err), FRAME_OK);
    sm.has_request_id = true;
    sm.request_id = 300;
    size_t la, lb;
    uint8_t *a = canonical(&m->base, &la), *b = canonical(&sm.base, &lb);
    ck_assert(la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);
    frame_free_server(m);

    /* field 0: the bytes alone */
    sm.has_request_id = false;
    ck_assert_int_eq(frame_write_prefixed(out, 0, 300, big, n, NULL), 0);
    ck_assert_int_eq(frame_read_server(out, NULL, &m, &err), FRAME_OK);
    ck_assert(!m->has_request_id);
    ck_assert_uint_eq(m->event_seq, 9);
    frame_free_server(m);

    /* A message that sets request_id itself: its occurrence comes later and wins, which is why
     * such payloads go through frame_write_forward() (every occurrence replaced). */
    sm.has_request_id = true;
    sm.request_id = 3;
    n = raw_pack(&sm.base, big);
    ck_assert_int_eq(frame_write_prefixed(out, 1, 300, big, n, NULL), 0);
    ck_assert_int_eq(frame_read_server(out, NULL, &m, &err), FRAME_OK);
    ck_assert_uint_eq(m->request_id, 3);
    frame_free_server(m);
    ck_assert_int_eq(frame_write_forward(out, big, n, 1, 300, NULL), 0);
    ck_assert_int_eq(frame_read_server(out, NULL, &m, &err), FRAME_OK);
    ck_assert_uint_eq(m->request_id, 300);
    ck_assert_uint_eq(m->event_seq, 9);
    frame_free_server(m);

    /* over the cap: nothing written */
    frame_limits_t lim = frame_limits_default;
    lim.max_frame = n + 2;
    ck_assert_int_eq(frame_write_prefixed(out, 1, 300, big, n, &lim), -EMSGSIZE);
    ck_assert_uint_eq(evbuffer_get_length(out), 0);
    lim.max_frame = n + 3;
    ck_assert_int_eq(frame_write_prefixed(out, 1, 300, big, n, &lim), 0);
    ck_assert_uint_eq(evbuffer_get_length(out), FRAME_HEADER_SIZE + n + 3);
    evbuffer_free(out);
}
END_TEST

/* A client sample decoded into a scratch and on the heap: the same message. */
static void scratch_one(void *arg, const char *name, const Croupier__ClientMessage *sample)
{
    frame_scratch_t *scratch = arg;
    size_t n = raw_pack(&sample->base, big);
    frame_error_t err;
    Croupier__ClientMessage *a = frame_unpack_client_scratch(big, n, NULL, &err, scratch);
    ck_assert_msg(a != NULL, "%s: %s", name, err.detail);
    Croupier__ClientMessage *b = frame_unpack_client(big, n, NULL, &err);
    ck_assert_msg(b != NULL, "%s: %s", name, err.detail);
    size_t la, lb;
    uint8_t *pa = canonical(&a->base, &la), *pb = canonical(&b->base, &lb);
    ck_assert_msg(la == lb && memcmp(pa, pb, la) == 0, "%s: scratch decode differs", name);
    free(pa);
    free(pb);
    frame_free_client(a);
    frame_free_client(b);
}

START_TEST(test_scratch_decode_gives_the_same_messages_and_verdicts)
{
    frame_scratch_t *scratch = malloc(sizeof *scratch);
    ck_assert_int_gt(samples_client(scratch_one, scratch), 0);

    /* A message larger than the scratch spills to the heap (freed by frame_free_client). */
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Login login = CROUPIER__LOGIN__INIT;
    char token[3000];
    memset(token, 'x', sizeof token - 1);
    token[sizeof token - 1] = '\0';
    login.token = token;
    m.request_id = 1;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
    m.login = &login;
    size_t n = raw_pack(&m.base, big);
    frame_error_t err;
    Croupier__ClientMessage *got = frame_unpack_client_scratch(big, n, NULL, &err, scratch);
    ck_assert_msg(got != NULL, "%s", err.detail);
    ck_assert_str_eq(got->login->token, token);
    frame_free_client(got);

    /* Refusals are the same, with the same reasons. */
    const uint8_t junk[] = {0x08, 0x01, 0x52, 0x05, 0x01};
    frame_error_t e2;
    ck_assert_ptr_null(frame_unpack_client_scratch(junk, sizeof junk, NULL, &err, scratch));
    ck_assert_ptr_null(frame_unpack_client(junk, sizeof junk, NULL, &e2));
    ck_assert_int_eq(err.code, e2.code);
    ck_assert_str_eq(err.detail, e2.detail);
    login.token = "";
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY__NOT_SET;
    n = raw_pack(&m.base, big);
    ck_assert_ptr_null(frame_unpack_client_scratch(big, n, NULL, &err, scratch));
    ck_assert_ptr_null(frame_unpack_client(big, n, NULL, &e2));
    ck_assert_int_eq(err.code, e2.code);
    ck_assert_str_eq(err.detail, e2.detail);
    free(scratch);
}
END_TEST

static Suite *proto_wire_suite(void)
{
    Suite *s = suite_create("proto_wire");
    TCase *tc = tcase_create("wire");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_wire_reader_reads_every_wire_type_and_stops_at_bad_bytes);
    tcase_add_test(tc, test_wire_vouch_only_for_bytes_the_decoder_accepts);
    tcase_add_test(tc, test_wire_vouch_declines_unusual_encodings_and_invalid_values);
    tcase_add_test(tc, test_scan_field_numbers_match_the_descriptors);
    tcase_add_test(tc, test_scan_rpc_reads_replies_and_pushes_as_the_decoder_does);
    tcase_add_test(tc, test_scan_rpc_leaves_errors_and_other_bodies_to_the_decoder);
    tcase_add_test(tc, test_scan_rpc_cached_agrees_with_the_scan);
    tcase_add_test(tc, test_push_to_frames_are_packed_scanned_and_checked);
    tcase_add_test(tc, test_prefixed_request_id_in_front_decodes_as_the_answer);
    tcase_add_test(tc, test_scratch_decode_gives_the_same_messages_and_verdicts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(proto_wire_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
