/*
 * fuzz_ws_handshake -- libFuzzer driver for the WebSocket opening-handshake parser
 * (gateway/gate_ws_hs.h): the first bytes a browser client sends. Every input must be decided
 * without a crash or a read past it; the decision must be stable (a complete request decided on
 * a prefix stays decided the same way with more bytes after it); an accepted request must name a
 * 24-character key and consume no more than was given, and its answer must be formatted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate_ws_hs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy so that a read past the input is caught by ASan. */
    char *buf = malloc(size + 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    gate_ws_hs_policy_t pol = {.path = "/", .origins = "https://a.example, http://b.example:8080"};
    gate_ws_hs_t hs;
    gate_ws_hs_status_t st = gate_ws_hs_parse(buf, size, &pol, &hs);
    if (st != hs.status)
        abort();
    if (st != GATE_WS_HS_NEED_MORE) {
        if (hs.consumed > size)
            abort();
        if (st == GATE_WS_HS_OK && (hs.consumed == 0 || strlen(hs.key) != 24))
            abort();
        if (st != GATE_WS_HS_OK && hs.why == NULL)
            abort();
        char out[512];
        if (gate_ws_hs_response(&hs, out, sizeof out) <= 0)
            abort();
        /* Bytes after a decided request (pipelined frames) change nothing. */
        if (hs.consumed > 0) {
            buf[size] = 'x';
            gate_ws_hs_t again;
            if (gate_ws_hs_parse(buf, size + 1, &pol, &again) != st ||
                again.consumed != hs.consumed)
                abort();
        }
    }
    free(buf);
    return 0;
}
