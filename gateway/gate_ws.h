/*
 * gate_ws -- the WebSocket transport of croupier-gate's client connections (docs/gateway.md
 * "WebSocket", docs/protocol.md "Transports"). RFC 6455 on a libevent bufferevent, framing by
 * libwslay, the opening handshake by gate_ws_hs.h.
 *
 * The gate core (gate.c) keeps speaking its own framing: it writes length-prefixed
 * ServerMessages into gate_ws_out() and reads length-prefixed ClientMessages from what
 * gate_ws_read() hands back. This module turns one binary WebSocket message into one such frame
 * and back (no length prefix on the wire), answers pings, and closes with the RFC's codes: text
 * messages 1003; unmasked client frames, reserved bits, bad opcodes, fragmented or over-125-byte
 * control frames 1002; messages over the cap (all fragments counted) 1009; the gate's own closes
 * 1001 (shutdown, the reconnect delay in the reason), 1000 (idle, replaced), 1008 (slow
 * consumer, an edge limit: a connection cap, the Login, partial-frame or write deadline) or
 * 1007 (a message that is not a ClientMessage). Every close is followed by the
 * gate's graceful TCP close (flush, shutdown(SHUT_WR), read to EOF).
 *
 * One gate_ws_t per connection, used on the gate's event loop only.
 */
#ifndef CROUPIER_GATE_WS_H
#define CROUPIER_GATE_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate_ws_hs.h"
#include "metrics.h"

struct bufferevent;
struct evbuffer;

typedef struct gate_ws gate_ws_t;
typedef struct gate_ws_server gate_ws_server_t;

typedef struct {
    const char *path;            /* accepted request path; NULL = "/" (copied) */
    const char *origins;         /* Origin allow-list, comma-separated; NULL = any (copied) */
    size_t max_msg;              /* largest message (all fragments); over it: close 1009 */
    metrics_registry_t *metrics; /* not owned */
} gate_ws_config_t;

/* What every WebSocket connection of one listener shares. NULL on allocation failure. */
gate_ws_server_t *gate_ws_server_create(const gate_ws_config_t *cfg);
void gate_ws_server_destroy(gate_ws_server_t *s);

/* A connection on wire (the socket or TLS bufferevent, not owned), before its handshake. It
 * holds no wslay context while idle (gate_ws.c). Returns NULL if its buffers cannot be
 * allocated. */
gate_ws_t *gate_ws_create(gate_ws_server_t *s, struct bufferevent *wire, uint64_t conn_id);
void gate_ws_destroy(gate_ws_t *ws);

/*
 * Consumes the wire's input: the handshake (answered on the wire), then frames. Whole binary
 * messages are appended to *frames (set to the module's buffer) as length-prefixed frames for
 * the gate to read. Returns 0, or 1 when the connection must close now (a refused handshake was
 * answered, a protocol error or the client's close has a close frame queued): the caller reads
 * what is in *frames first, then closes gracefully (gate_ws_close() sends the queued close).
 */
int gate_ws_read(gate_ws_t *ws, struct evbuffer **frames);

/* Where the gate writes length-prefixed ServerMessages; gate_ws_flush() moves them to the wire. */
struct evbuffer *gate_ws_out(gate_ws_t *ws);
/* Bytes not yet written to the socket: frames waiting here and the wire's output. */
size_t gate_ws_queued(const gate_ws_t *ws);
/* Moves every whole frame of gate_ws_out() to the wire as one binary message each, and any
 * control frame wslay has to send (pongs). Before the handshake completes frames are dropped. */
void gate_ws_flush(gate_ws_t *ws);
/* Notes the GoAway just queued: the close that follows carries its reason and delay. */
void gate_ws_goaway(gate_ws_t *ws, int reason, uint32_t delay_ms);
/* The gate closes the connection (reason: its close reason, e.g. "shutdown", "bad_frame"):
 * flushes, then queues and writes the close frame (unless one was sent already). */
void gate_ws_close(gate_ws_t *ws, const char *reason);
/* Whether the handshake completed (the connection speaks WebSocket). */
bool gate_ws_open(const gate_ws_t *ws);
/* Whether a frame or a fragmented message is begun and not complete (bytes read and not yet
 * a whole message): the gate's partial-frame deadline runs meanwhile. */
bool gate_ws_partial(const gate_ws_t *ws);
/* The handshake deadline passed: answers 408 (Request Timeout) to the request begun, if any,
 * and marks the connection closed (the gate then closes TCP gracefully). No-op once open. */
void gate_ws_timeout(gate_ws_t *ws);

#endif
