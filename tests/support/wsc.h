/*
 * wsc -- a blocking WebSocket test client for croupier-gate's WebSocket listener
 * (gateway/gate_ws.h, docs/protocol.md "Transports"): a raw TCP socket on loopback, frames written
 * with libwslay's frame API (so a test can send what a browser never would: unmasked frames,
 * reserved bits, text), frames read with libwslay's client event API.
 */
#ifndef CROUPIER_TEST_WSC_H
#define CROUPIER_TEST_WSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

typedef struct wsc wsc_t;
struct ssl_st;
struct ssl_ctx_st;

/* A TCP connection only (no handshake). NULL on failure (message on stderr). */
wsc_t *wsc_open(const char *host, int port, int timeout_ms);
/* The same over TLS: the TLS handshake with a client context of tls (NULL: plain TCP) is done
 * (blocking) before it returns; NULL if it fails. */
wsc_t *wsc_open_tls(const char *host, int port, struct ssl_ctx_st *tls, int timeout_ms);
/* The connection's SSL (NULL without TLS), to look at the version and the peer certificate. */
struct ssl_st *wsc_ssl(const wsc_t *w);
/* Closes the socket and frees. NULL is a no-op. */
void wsc_close(wsc_t *w);
int wsc_fd(const wsc_t *w);
int wsc_send_raw(wsc_t *w, const void *buf, size_t len);

/* Reads an HTTP response head (through its empty line) into head (NUL-terminated). Returns the
 * status code, or a negative errno (-ETIMEDOUT, -EPIPE on EOF first, -EPROTO if not HTTP). */
int wsc_read_http(wsc_t *w, int timeout_ms, char *head, size_t cap);

/* Opens and shakes hands: GET path with a fresh key, Host, Upgrade, Connection, version 13 and
 * Origin when not NULL; checks 101 and Sec-WebSocket-Accept. NULL on any failure. */
wsc_t *wsc_connect(const char *host, int port, const char *path, const char *origin,
                   int timeout_ms);

/* wsc_connect over TLS (tls NULL: plain). */
wsc_t *wsc_connect_tls(const char *host, int port, const char *path, const char *origin,
                       struct ssl_ctx_st *tls, int timeout_ms);

/* Sends one frame (masked unless mask is false; rsv: the three reserved bits). 0 or -errno. */
int wsc_send_frame(wsc_t *w, int opcode, bool fin, int rsv, bool mask, const void *p, size_t len);
/* One ClientMessage as one masked binary message. */
int wsc_send_msg(wsc_t *w, const Croupier__ClientMessage *m);

/* A received message: opcode (2 binary, 1 text, 8 close, 9 ping, 10 pong), its bytes (owned by
 * the client until the next receive), and a close's status code (0 if none) and reason. */
typedef struct {
    int opcode;
    const uint8_t *data;
    size_t len;
    int close_code;
} wsc_msg_t;

/* The next message within timeout_ms. 0; -ETIMEDOUT; -EPIPE at EOF; -ECONNRESET on a reset;
 * -EPROTO if the server sent something wslay refuses. */
int wsc_recv(wsc_t *w, wsc_msg_t *out, int timeout_ms);
/* The next binary message decoded as a ServerMessage (other messages are skipped; a close ends
 * it: NULL, with *close_code set when not NULL). Free with frame_free_server(). */
Croupier__ServerMessage *wsc_recv_server(wsc_t *w, int timeout_ms, int *close_code);
/* Receives until the answer to request_id (pushes before it are dropped). */
Croupier__ServerMessage *wsc_wait_reply(wsc_t *w, uint64_t request_id, int timeout_ms);
/* Reads until a close frame: returns its code (reason copied into reason), or a negative errno
 * as wsc_recv. Messages before it are dropped. */
int wsc_wait_close(wsc_t *w, int timeout_ms, char *reason, size_t cap);
/* Reads to EOF: 0 on a clean EOF, -ECONNRESET on a reset, -ETIMEDOUT. */
int wsc_wait_eof(wsc_t *w, int timeout_ms);

/* The TCP transport on the same connection (the gateway's --listen, e.g. over TLS): one
 * length-prefixed ClientMessage; the next length-prefixed ServerMessage (NULL on timeout, EOF
 * or a bad frame). */
int wsc_send_framed(wsc_t *w, const Croupier__ClientMessage *m);
Croupier__ServerMessage *wsc_recv_framed(wsc_t *w, int timeout_ms);

#endif
