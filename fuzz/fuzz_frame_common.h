/*
 * Shared body of the frame fuzzers: fuzz_client_frame.c, fuzz_server_frame.c and
 * fuzz_rpc_frame.c each define FUZZ_TYPE (ClientMessage...) and FUZZ_NAME (client...) and
 * include this file.
 *
 * Each input is used twice: as one payload for frame_unpack_<name>() (deep coverage of the
 * unpack and the checks), and as a byte stream for frame_read_<name>() over an evbuffer (the
 * framing loop). Every message the codec accepts must re-encode, decode again and re-encode to
 * the same bytes (canonical fixed point); anything else aborts, which libFuzzer reports.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"

#define FUZZ_CAT2(a, b) a##b
#define FUZZ_CAT(a, b) FUZZ_CAT2(a, b)
#define FUZZ_UNPACK FUZZ_CAT(frame_unpack_, FUZZ_NAME)
#define FUZZ_READ FUZZ_CAT(frame_read_, FUZZ_NAME)
#define FUZZ_FREE FUZZ_CAT(frame_free_, FUZZ_NAME)

static const frame_limits_t fuzz_limits = {
    .max_frame = 16 * 1024,
    .budget_factor = FRAME_DEFAULT_BUDGET_FACTOR,
    .budget_floor = FRAME_DEFAULT_BUDGET_FLOOR,
    .max_string = 1024,
};

/* Re-encoding may grow a message (packed repeated fields come back unpacked): allow 3x. It may
 * also shrink it while the decoded tree stays the same (over-long varints come back short,
 * unknown fields are kept), so the allocation budget, which scales with the frame's size, gets
 * room too: the budget itself is checked on the first decode, the round trip checks only the
 * canonical fixed point. */
static const frame_limits_t fuzz_limits_big = {
    .max_frame = 3 * 16 * 1024 + 64,
    .budget_factor = 16 * FRAME_DEFAULT_BUDGET_FACTOR,
    .budget_floor = 16 * FRAME_DEFAULT_BUDGET_FLOOR + 3 * 16 * 1024 * FRAME_DEFAULT_BUDGET_FACTOR,
    .max_string = 1024,
};

static void fuzz_die(const char *what, const frame_error_t *err)
{
    fprintf(stderr, "fuzz invariant broken: %s (%s: %s)\n", what, frame_error_code_name(err->code),
            err->detail);
    abort();
}

/* Accepted messages must survive encode -> decode -> encode unchanged. */
static void fuzz_roundtrip(const FUZZ_TYPE *m)
{
    static uint8_t a[3 * 16 * 1024 + 64], b[3 * 16 * 1024 + 64];
    frame_error_t err;
    ssize_t na = frame_encode(&m->base, &fuzz_limits_big, a, sizeof a, &err);
    if (na < 0)
        fuzz_die("accepted message does not encode", &err);
    FUZZ_TYPE *again =
        FUZZ_UNPACK(a + FRAME_HEADER_SIZE, (size_t)na - FRAME_HEADER_SIZE, &fuzz_limits_big, &err);
    if (again == NULL)
        fuzz_die("re-encoded message does not decode", &err);
    ssize_t nb = frame_encode(&again->base, &fuzz_limits_big, b, sizeof b, &err);
    if (nb != na || memcmp(a, b, (size_t)na) != 0)
        fuzz_die("second encoding differs", &err);
    FUZZ_FREE(again);
}

#ifdef FUZZ_SCAN
/* The relay's fast path (frame_scan_rpc) may only take frames the decoder accepts, and must
 * read the same values from them. */
static void fuzz_scan(const uint8_t *data, size_t size, const FUZZ_TYPE *m)
{
    frame_rpc_scan_t s, c;
    frame_error_t none = {0};
    /* The cached scan (its cache carried from input to input, as the gateway's from frame to
     * frame: a mutated input often pushes the bytes the last one did) gives the same verdict
     * and values as the scan without a cache. */
    static frame_scan_cache_t cache;
    int rc = frame_scan_rpc(data, size, &fuzz_limits, &s);
    int rc_cached = frame_scan_rpc_cached(data, size, &fuzz_limits, &cache, &c);
    if (rc != rc_cached || (rc == 0 && memcmp(&s, &c, sizeof s) != 0))
        fuzz_die("the cached scan differs from the scan", &none);
    if (rc != 0)
        return;
    if (m == NULL)
        fuzz_die("scanned a frame the decoder refuses", &none);
    const Croupier__ServerMessage *sm =
        m->body_case == CROUPIER__RPC_FRAME__BODY_PUSH
            ? m->push
            : (m->body_case == CROUPIER__RPC_FRAME__BODY_REPLY ? m->reply->payload : NULL);
    if (sm == NULL || s.body != (uint32_t)m->body_case || s.request_id != m->request_id ||
        s.has_player_id != (bool)m->has_player_id || s.player_id != m->player_id ||
        s.has_session_id != (bool)m->has_session_id || s.session_id != m->session_id ||
        s.msg_body != (uint32_t)sm->body_case || s.msg_request_id != (bool)sm->has_request_id ||
        s.msg < data || s.msg + s.msg_len > data + size)
        fuzz_die("scan differs from the decoder", &none);
    Croupier__ServerMessage *again = frame_unpack_server(s.msg, s.msg_len, &fuzz_limits, NULL);
    if (again == NULL)
        fuzz_die("scanned ServerMessage does not decode", &none);
    frame_free_server(again);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    frame_error_t err;
    FUZZ_TYPE *m = FUZZ_UNPACK(data, size, &fuzz_limits, &err);
#ifdef FUZZ_SCAN
    fuzz_scan(data, size, m);
#endif
    if (m != NULL) {
        fuzz_roundtrip(m);
        FUZZ_FREE(m);
    } else if (err.code == CROUPIER__ERROR_CODE__OK || err.detail[0] == '\0') {
        fuzz_die("refusal without a reason", &err);
    }

    struct evbuffer *in = evbuffer_new();
    if (in == NULL)
        abort();
    /* Feed in two pieces so a frame can straddle the boundary. */
    size_t half = size / 2;
    evbuffer_add(in, data, half);
    for (int pass = 0; pass < 2; pass++) {
        frame_result_t r;
        unsigned frames = 0;
        while ((r = FUZZ_READ(in, &fuzz_limits, &m, &err)) != FRAME_NEED_MORE) {
            if (r == FRAME_TOO_LARGE)
                break;
            if (r == FRAME_OK) {
                fuzz_roundtrip(m);
                FUZZ_FREE(m);
            }
            if (++frames > size + 1)
                fuzz_die("decoder loops without consuming", &err);
        }
        if (r == FRAME_TOO_LARGE)
            break;
        if (pass == 0)
            evbuffer_add(in, data + half, size - half);
    }
    evbuffer_free(in);
    return 0;
}
