/*
 * gate_ws_hs -- the WebSocket opening handshake of croupier-gate (docs/gateway.md "WebSocket",
 * RFC 6455 section 4.2): a strict parser of the client's Upgrade request and the server's answer.
 * Pure functions (no I/O, no allocation), fuzzed by gateway/fuzz_ws_handshake.c.
 *
 * What is accepted (everything else is answered 400, 403 or 404 and the connection is closed):
 *   GET <path>[?query] HTTP/1.1 CRLF, then header lines `name: value` CRLF, then CRLF;
 *   header names are tokens, values visible ASCII or tabs/spaces (no obs-fold, no bare LF, no NUL);
 *   Host present; Upgrade a comma list with the token `websocket`; Connection a comma list with
 *   the token `upgrade` (case-insensitive); Sec-WebSocket-Version exactly 13 (else 400 with
 *   Sec-WebSocket-Version: 13); Sec-WebSocket-Key once, base64 of exactly 16 bytes; no body
 *   (no Content-Length other than 0, no Transfer-Encoding). The path (without the query) must be
 *   the configured one (404). With an Origin allow-list, a request whose Origin is not in it is
 *   refused with 403 (a request without Origin -- not a browser -- is let in). Extensions and
 *   subprotocols asked for are ignored: the answer names none, so none is in use.
 */
#ifndef CROUPIER_GATE_WS_HS_H
#define CROUPIER_GATE_WS_HS_H

#include <stdbool.h>
#include <stddef.h>

/* The longest request accepted (request line and headers); longer ones are answered 400. */
#define GATE_WS_HS_MAX 8192
/* Most header lines in one request. */
#define GATE_WS_HS_MAX_HEADERS 64
/* Length of Sec-WebSocket-Accept's value (base64 of a SHA-1), without a terminator. */
#define GATE_WS_ACCEPT_LEN 28

typedef enum {
    GATE_WS_HS_NEED_MORE = 0, /* no end of headers yet (and under GATE_WS_HS_MAX) */
    GATE_WS_HS_OK = 101,      /* a valid Upgrade: answer gate_ws_hs_accept() */
    GATE_WS_HS_BAD = 400,
    GATE_WS_HS_FORBIDDEN = 403, /* Origin not allowed */
    GATE_WS_HS_NOT_FOUND = 404, /* another path */
} gate_ws_hs_status_t;

typedef struct {
    const char *path;    /* the request path to accept, e.g. "/" (not owned) */
    const char *origins; /* comma-separated exact origins allowed; NULL or "" = any (not owned) */
} gate_ws_hs_policy_t;

typedef struct {
    gate_ws_hs_status_t status;
    size_t consumed;      /* bytes of the request (through its empty line) when decided */
    char key[25];         /* Sec-WebSocket-Key as sent (24 characters), when OK */
    bool version_refused; /* a 400 because of Sec-WebSocket-Version: answer names 13 */
    const char *why;      /* a short reason for a refusal (static), for the log and the body */
} gate_ws_hs_t;

/*
 * Parses the request in buf[0..len) (the bytes read so far; they need not end at the request's
 * end). Returns the status, also in out->status: NEED_MORE when the request is not complete yet
 * and len < GATE_WS_HS_MAX; otherwise OK or a refusal with out->why.
 */
gate_ws_hs_status_t gate_ws_hs_parse(const char *buf, size_t len, const gate_ws_hs_policy_t *pol,
                                     gate_ws_hs_t *out);

/*
 * Writes the Sec-WebSocket-Accept value for key (base64 of SHA-1 of key and the RFC's GUID,
 * computed with libcrypto) into out, NUL-terminated (GATE_WS_ACCEPT_LEN + 1 bytes).
 * Returns 0, or -EIO if libcrypto fails.
 */
int gate_ws_hs_accept(const char *key, char out[GATE_WS_ACCEPT_LEN + 1]);

/*
 * Formats the complete HTTP answer to a parsed request: 101 Switching Protocols with the accept
 * value, or the refusal (400/403/404, Connection: close, a one-line text body). Returns its
 * length, or -ENOSPC if cap is too small (512 bytes always suffice), -EIO from libcrypto.
 */
int gate_ws_hs_response(const gate_ws_hs_t *hs, char *buf, size_t cap);

#endif
