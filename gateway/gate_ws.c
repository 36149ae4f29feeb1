/*
 * gate_ws.c -- the WebSocket transport (see gate_ws.h). wslay's event API reads the client's
 * frames (it checks masking, reserved bits, opcodes, control frame sizes, the message cap, and
 * answers pings and closes); the gate's outgoing messages are written with wslay's frame API
 * (one unmasked binary frame per message, straight into the wire's output: no per-message
 * allocation). Both write whole frames synchronously into the same evbuffer, so their frames
 * never interleave mid-frame.
 *
 * Memory: a wslay event context is about 8.5 KiB (a 4 KiB input buffer in its frame context, a
 * 4 KiB output buffer, four queues), all written at creation. An idle connection holds none: a
 * connection borrows the listener's spare context to read what arrived and gives it back when
 * the context is as new again -- no frame or fragmented message half read, nothing left to
 * send, no close -- which is the case after nearly every read. Only a connection that stops
 * mid-frame, mid-message or in its close keeps a context of its own (docs/gateway.md
 * "WebSocket").
 */
#include "gate_ws.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <jansson.h>
#include <wslay/wslay.h>

#include "frame.h"
#include "log.h"
#include "xmalloc.h"

enum { WS_HANDSHAKE = 0, WS_OPEN = 1, WS_CLOSED = 2 };

/* Close codes counted in gate_ws_closes_total{code}. */
static const int gate_ws_codes[] = {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1011};
#define GATE_WS_NCODES (sizeof gate_ws_codes / sizeof gate_ws_codes[0])

struct gate_ws_server {
    char *path, *origins;
    size_t max_msg;
    metrics_t *m_hs[4]; /* ok, bad, forbidden, not_found */
    metrics_t *m_close[GATE_WS_NCODES + 1];
    /* The gate's messages are framed by one wslay frame context for all connections (it holds
     * a 4 KiB input buffer it never uses here): every frame is written whole at once, so the
     * context is back in its initial state after each, and `cur` names the connection whose
     * frame is being written (one event loop, no other caller). */
    wslay_frame_context_ptr frames;
    gate_ws_t *cur;
    /* The event context lent to a connection that reads (gate_ws_ev_take), NULL while lent or
     * not made yet; ev_cur names the connection whose context wslay is calling back for. */
    wslay_event_context_ptr spare;
    gate_ws_t *ev_cur;
};

struct gate_ws {
    gate_ws_server_t *srv;
    struct bufferevent *wire;
    uint64_t conn_id;
    int state;
    wslay_event_context_ptr ev; /* reading, pongs, closes: borrowed or kept, else NULL */
    /* What the borrowed context is in the middle of (gate_ws_ev_idle): bytes it took from the
     * wire and bytes of the frames it began (headers and payloads), a frame begun and not
     * ended, a fragmented message not finished. */
    uint64_t rx_taken, rx_framed;
    bool rx_in_frame, rx_in_msg;
    struct evbuffer *in, *out; /* length-prefixed frames to and from the gate */
    bool framing_error;        /* wslay's frame layer refused a frame: close 1002 by hand */
    int goaway_reason;         /* the GoAway queued before the close; -1 none */
    uint8_t *wbuf;             /* gate_ws_flush: space reserved in the wire's output */
    size_t wlen, wcap;
    uint32_t goaway_delay_ms;
};

static ssize_t gate_ws_frame_send_cb(const uint8_t *data, size_t len, int flags, void *arg);
static ssize_t gate_ws_frame_recv_cb(uint8_t *buf, size_t len, int flags, void *arg);
static int gate_ws_genmask_cb(uint8_t *buf, size_t len, void *arg);

gate_ws_server_t *gate_ws_server_create(const gate_ws_config_t *cfg)
{
    static const struct wslay_frame_callbacks fcbs = {
        .send_callback = gate_ws_frame_send_cb,
        .recv_callback = gate_ws_frame_recv_cb,
        .genmask_callback = gate_ws_genmask_cb,
    };
    gate_ws_server_t *s = xcalloc(1, sizeof *s);
    if (wslay_frame_context_init(&s->frames, &fcbs, s) != 0) {
        free(s);
        return NULL;
    }
    s->path = xstrdup(cfg->path != NULL && cfg->path[0] != '\0' ? cfg->path : "/");
    s->origins = cfg->origins != NULL ? xstrdup(cfg->origins) : NULL;
    s->max_msg = cfg->max_msg > 0 ? cfg->max_msg : FRAME_DEFAULT_MAX;
    if (cfg->metrics != NULL) {
        static const char *const res[4] = {"ok", "bad_request", "forbidden", "not_found"};
        for (int i = 0; i < 4; i++) {
            char lab[48];
            snprintf(lab, sizeof lab, "result=\"%s\"", res[i]);
            s->m_hs[i] = metrics_counter(cfg->metrics, "gate_ws_handshakes_total", lab,
                                         "WebSocket opening handshakes by result");
        }
        for (size_t i = 0; i <= GATE_WS_NCODES; i++) {
            char lab[48];
            if (i < GATE_WS_NCODES)
                snprintf(lab, sizeof lab, "code=\"%d\"", gate_ws_codes[i]);
            else
                snprintf(lab, sizeof lab, "code=\"other\"");
            s->m_close[i] = metrics_counter(cfg->metrics, "gate_ws_closes_total", lab,
                                            "WebSocket close frames sent, by status code");
        }
    }
    return s;
}

void gate_ws_server_destroy(gate_ws_server_t *s)
{
    if (s == NULL)
        return;
    if (s->spare != NULL)
        wslay_event_context_free(s->spare);
    wslay_frame_context_free(s->frames);
    free(s->path);
    free(s->origins);
    free(s);
}

/* ---- wslay callbacks ----------------------------------------------------------------------- */

/* The event contexts' callbacks get the server: the connection is srv->ev_cur. */
static ssize_t gate_ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                               void *arg)
{
    (void)flags;
    gate_ws_t *ws = ((gate_ws_server_t *)arg)->ev_cur;
    int n = evbuffer_remove(bufferevent_get_input(ws->wire), buf, len);
    if (n <= 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    ws->rx_taken += (uint64_t)n;
    return n;
}

/* A frame's header was read: its bytes on the wire (a client frame is masked; wslay refuses a
 * length that is not minimally encoded) count as begun. */
static void gate_ws_frame_start_cb(wslay_event_context_ptr ctx,
                                   const struct wslay_event_on_frame_recv_start_arg *a, void *arg)
{
    (void)ctx;
    gate_ws_t *ws = ((gate_ws_server_t *)arg)->ev_cur;
    uint64_t ext = a->payload_length < 126 ? 0 : a->payload_length <= 0xffff ? 2 : 8;
    ws->rx_framed += 2 + ext + 4 + a->payload_length;
    ws->rx_in_frame = true;
    if ((a->opcode & 0x8) == 0) /* a data frame: a message goes on until a final one */
        ws->rx_in_msg = !a->fin;
}

static void gate_ws_frame_end_cb(wslay_event_context_ptr ctx, void *arg)
{
    (void)ctx;
    ((gate_ws_server_t *)arg)->ev_cur->rx_in_frame = false;
}

/* Both APIs write into the wire's output, which takes everything (the gate bounds it): while
 * gate_ws_flush() runs, into the space it reserved there. */
static ssize_t gate_ws_put(gate_ws_t *ws, const uint8_t *data, size_t len)
{
    if (ws->wbuf != NULL) {
        if (ws->wcap - ws->wlen < len)
            return -1;
        memcpy(ws->wbuf + ws->wlen, data, len);
        ws->wlen += len;
        return (ssize_t)len;
    }
    if (evbuffer_add(bufferevent_get_output(ws->wire), data, len) != 0)
        return -1;
    return (ssize_t)len;
}

static ssize_t gate_ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
                               int flags, void *arg)
{
    (void)flags;
    ssize_t n = gate_ws_put(((gate_ws_server_t *)arg)->ev_cur, data, len);
    if (n < 0)
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return n;
}

static ssize_t gate_ws_frame_send_cb(const uint8_t *data, size_t len, int flags, void *arg)
{
    (void)flags;
    gate_ws_server_t *s = arg;
    return gate_ws_put(s->cur, data, len);
}

/* One whole frame of ws through the shared frame context. Returns what wslay_frame_send does. */
static ssize_t gate_ws_frame_send(gate_ws_t *ws, struct wslay_frame_iocb *io)
{
    ws->srv->cur = ws;
    ssize_t r = wslay_frame_send(ws->srv->frames, io);
    ws->srv->cur = NULL;
    return r;
}

/* Never called: a server does not mask. */
static ssize_t gate_ws_frame_recv_cb(uint8_t *buf, size_t len, int flags, void *arg)
{
    (void)buf;
    (void)len;
    (void)flags;
    (void)arg;
    return WSLAY_ERR_WANT_READ;
}

static int gate_ws_genmask_cb(uint8_t *buf, size_t len, void *arg)
{
    (void)arg;
    memset(buf, 0, len);
    return 0;
}

static void gate_ws_msg_cb(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *a,
                           void *arg)
{
    gate_ws_t *ws = ((gate_ws_server_t *)arg)->ev_cur;
    if (a->opcode == WSLAY_BINARY_FRAME) {
        uint8_t hdr[FRAME_HEADER_SIZE];
        frame_put_header(hdr, (uint32_t)a->msg_length);
        evbuffer_add(ws->in, hdr, sizeof hdr);
        evbuffer_add(ws->in, a->msg, a->msg_length);
    } else if (a->opcode == WSLAY_TEXT_FRAME) {
        static const char why[] = "text messages are not accepted: send binary ClientMessages";
        wslay_event_queue_close(ctx, WSLAY_CODE_UNSUPPORTED_DATA, (const uint8_t *)why,
                                sizeof why - 1);
        wslay_event_shutdown_read(ctx);
    }
    /* Close: wslay queued the echo and stopped reading. Ping: wslay queued the pong. */
}

/* ---- connection ------------------------------------------------------------------------------ */

gate_ws_t *gate_ws_create(gate_ws_server_t *s, struct bufferevent *wire, uint64_t conn_id)
{
    gate_ws_t *ws = xcalloc(1, sizeof *ws);
    ws->srv = s;
    ws->wire = wire;
    ws->conn_id = conn_id;
    ws->goaway_reason = -1;
    ws->in = evbuffer_new();
    ws->out = evbuffer_new();
    if (ws->in == NULL || ws->out == NULL) {
        gate_ws_destroy(ws);
        return NULL;
    }
    return ws;
}

void gate_ws_destroy(gate_ws_t *ws)
{
    if (ws == NULL)
        return;
    if (ws->ev != NULL)
        wslay_event_context_free(ws->ev);
    if (ws->in != NULL)
        evbuffer_free(ws->in);
    if (ws->out != NULL)
        evbuffer_free(ws->out);
    free(ws);
}

bool gate_ws_open(const gate_ws_t *ws)
{
    return ws->state == WS_OPEN;
}

bool gate_ws_partial(const gate_ws_t *ws)
{
    if (ws->state != WS_OPEN)
        return false;
    if (evbuffer_get_length(bufferevent_get_input(ws->wire)) > 0)
        return true;
    return ws->ev != NULL && (ws->rx_taken != ws->rx_framed || ws->rx_in_frame || ws->rx_in_msg);
}

void gate_ws_timeout(gate_ws_t *ws)
{
    if (ws->state != WS_HANDSHAKE)
        return;
    struct evbuffer *in = bufferevent_get_input(ws->wire);
    if (evbuffer_get_length(in) > 0) {
        static const char resp[] = "HTTP/1.1 408 Request Timeout\r\n"
                                   "Connection: close\r\n"
                                   "Content-Type: text/plain\r\n"
                                   "Content-Length: 32\r\n\r\n"
                                   "handshake not completed in time\n";
        evbuffer_drain(in, evbuffer_get_length(in));
        evbuffer_add(bufferevent_get_output(ws->wire), resp, sizeof resp - 1);
    }
    ws->state = WS_CLOSED;
}

struct evbuffer *gate_ws_out(gate_ws_t *ws)
{
    return ws->out;
}

size_t gate_ws_queued(const gate_ws_t *ws)
{
    return evbuffer_get_length(ws->out) + evbuffer_get_length(bufferevent_get_output(ws->wire));
}

/*
 * Gives ws an event context to read, queue or send with: its own, the server's spare, or a new
 * one. Returns 0, or -ENOMEM. The context stays with ws until gate_ws_ev_put finds it idle.
 */
static int gate_ws_ev_take(gate_ws_t *ws)
{
    static const struct wslay_event_callbacks cbs = {
        .recv_callback = gate_ws_recv_cb,
        .send_callback = gate_ws_send_cb,
        .on_frame_recv_start_callback = gate_ws_frame_start_cb,
        .on_frame_recv_end_callback = gate_ws_frame_end_cb,
        .on_msg_recv_callback = gate_ws_msg_cb,
    };
    gate_ws_server_t *s = ws->srv;
    if (ws->ev == NULL && s->spare != NULL) {
        ws->ev = s->spare;
        s->spare = NULL;
    } else if (ws->ev == NULL) {
        if (wslay_event_context_server_init(&ws->ev, &cbs, s) != 0) {
            ws->ev = NULL;
            return -ENOMEM;
        }
        /* No extension is negotiated, so every reserved bit is refused (1002). */
        wslay_event_config_set_allowed_rsv_bits(ws->ev, WSLAY_RSV_NONE);
        wslay_event_config_set_max_recv_msg_length(ws->ev, s->max_msg);
    }
    s->ev_cur = ws;
    return 0;
}

/* Whether ws's context is as a new one: every byte it took belongs to a frame it finished, no
 * message is half received, nothing waits to be sent, no close was received or sent. */
static bool gate_ws_ev_idle(const gate_ws_t *ws)
{
    return ws->rx_taken == ws->rx_framed && !ws->rx_in_frame && !ws->rx_in_msg &&
           wslay_event_get_read_enabled(ws->ev) && wslay_event_get_write_enabled(ws->ev) &&
           !wslay_event_get_close_received(ws->ev) && !wslay_event_get_close_sent(ws->ev) &&
           !wslay_event_want_write(ws->ev);
}

/* Gives ws's context back to the server (or frees it, a spare being there) when it is idle. */
static void gate_ws_ev_put(gate_ws_t *ws)
{
    if (ws->ev == NULL || !gate_ws_ev_idle(ws))
        return;
    if (ws->srv->spare == NULL)
        ws->srv->spare = ws->ev;
    else
        wslay_event_context_free(ws->ev);
    ws->ev = NULL;
    ws->rx_taken = ws->rx_framed = 0;
}

/* The opening handshake from the wire's input. Returns 0 (need more, or done and open) or 1
 * (refused and answered: close). */
static int gate_ws_handshake(gate_ws_t *ws)
{
    struct evbuffer *in = bufferevent_get_input(ws->wire);
    size_t n = evbuffer_get_length(in);
    if (n > GATE_WS_HS_MAX)
        n = GATE_WS_HS_MAX;
    const char *buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)n);
    gate_ws_hs_policy_t pol = {.path = ws->srv->path, .origins = ws->srv->origins};
    gate_ws_hs_t hs;
    if (gate_ws_hs_parse(buf, n, &pol, &hs) == GATE_WS_HS_NEED_MORE)
        return 0;
    char resp[512];
    int len = gate_ws_hs_response(&hs, resp, sizeof resp);
    int idx = hs.status == GATE_WS_HS_OK          ? 0
              : hs.status == GATE_WS_HS_FORBIDDEN ? 2
              : hs.status == GATE_WS_HS_NOT_FOUND ? 3
                                                  : 1;
    if (ws->srv->m_hs[idx] != NULL)
        metrics_add(ws->srv->m_hs[idx], 1);
    if (hs.status == GATE_WS_HS_OK && len > 0) {
        ws->state = WS_OPEN;
        evbuffer_drain(in, hs.consumed);
        evbuffer_add(bufferevent_get_output(ws->wire), resp, (size_t)len);
        log_emit(LOG_DEBUG, "ws_open", "{s:I}", "conn", (json_int_t)ws->conn_id);
        return 0;
    }
    log_emit(LOG_INFO, "ws_handshake_refused", "{s:I,s:i,s:s}", "conn", (json_int_t)ws->conn_id,
             "status", (int)hs.status, "why", hs.why != NULL ? hs.why : "internal error");
    ws->state = WS_CLOSED;
    evbuffer_drain(in, evbuffer_get_length(in));
    if (len > 0)
        evbuffer_add(bufferevent_get_output(ws->wire), resp, (size_t)len);
    return 1;
}

int gate_ws_read(gate_ws_t *ws, struct evbuffer **frames)
{
    *frames = ws->in;
    if (ws->state == WS_HANDSHAKE) {
        if (gate_ws_handshake(ws) != 0)
            return 1;
        if (ws->state != WS_OPEN)
            return 0;
    }
    if (ws->state != WS_OPEN) {
        struct evbuffer *wi = bufferevent_get_input(ws->wire);
        evbuffer_drain(wi, evbuffer_get_length(wi));
        return 1;
    }
    if (ws->ev == NULL && evbuffer_get_length(bufferevent_get_input(ws->wire)) == 0)
        return 0;
    if (gate_ws_ev_take(ws) != 0)
        return 1; /* out of memory: closed (without a close frame, gate_ws_close) */
    int r = wslay_event_recv(ws->ev);
    if (r == WSLAY_ERR_CALLBACK_FAILURE) {
        /* The recv callback never fails, so this is wslay's frame layer refusing a frame (a
         * control frame over 125 bytes or fragmented, a length not minimally encoded): the
         * event layer has queued a close without a status code. It is replaced by a 1002. */
        ws->framing_error = true;
        return 1;
    }
    if (r != 0)
        return 1; /* out of memory: closed (1011 below) */
    if (!wslay_event_get_read_enabled(ws->ev))
        return 1; /* the client's close, a text message, a protocol error, an over-cap message */
    if (wslay_event_want_write(ws->ev))
        wslay_event_send(ws->ev); /* pongs */
    gate_ws_ev_put(ws);
    return 0;
}

/*
 * All whole frames of ws->out at once: made contiguous, framed by wslay straight into one space
 * reserved in the wire's output (a WebSocket header is at most 10 bytes, 6 more than the 4-byte
 * length it replaces), committed, then drained: a few buffer operations per flush, not per
 * message.
 */
void gate_ws_flush(gate_ws_t *ws)
{
    if (ws->state != WS_OPEN || (ws->ev != NULL && wslay_event_get_close_sent(ws->ev))) {
        evbuffer_drain(ws->out, evbuffer_get_length(ws->out));
        return;
    }
    size_t have = evbuffer_get_length(ws->out);
    if (have >= FRAME_HEADER_SIZE) {
        const uint8_t *p = evbuffer_pullup(ws->out, (ev_ssize_t)have);
        struct evbuffer *wo = bufferevent_get_output(ws->wire);
        struct evbuffer_iovec v;
        size_t cap = have + 6 * (have / FRAME_HEADER_SIZE);
        if (p == NULL || evbuffer_reserve_space(wo, (ev_ssize_t)cap, &v, 1) != 1) {
            log_emit(LOG_ERROR, "ws_send_failed", "{s:I,s:I}", "conn", (json_int_t)ws->conn_id,
                     "len", (json_int_t)have);
            evbuffer_drain(ws->out, have);
            return;
        }
        ws->wbuf = v.iov_base;
        ws->wlen = 0;
        ws->wcap = v.iov_len;
        size_t off = 0;
        while (have - off >= FRAME_HEADER_SIZE) {
            const uint8_t *h = p + off;
            size_t len = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
            if (have - off - FRAME_HEADER_SIZE < len)
                break;
            struct wslay_frame_iocb io = {.fin = 1,
                                          .opcode = WSLAY_BINARY_FRAME,
                                          .payload_length = len,
                                          .data = h + FRAME_HEADER_SIZE,
                                          .data_length = len};
            if (gate_ws_frame_send(ws, &io) != (ssize_t)len) {
                log_emit(LOG_ERROR, "ws_send_failed", "{s:I,s:I}", "conn", (json_int_t)ws->conn_id,
                         "len", (json_int_t)len);
                off = have;
                break;
            }
            off += FRAME_HEADER_SIZE + len;
        }
        v.iov_len = ws->wlen;
        ws->wbuf = NULL;
        evbuffer_commit_space(wo, &v, 1);
        evbuffer_drain(ws->out, off);
    }
    if (ws->ev != NULL && wslay_event_want_write(ws->ev)) {
        ws->srv->ev_cur = ws;
        wslay_event_send(ws->ev);
        gate_ws_ev_put(ws);
    }
}

void gate_ws_goaway(gate_ws_t *ws, int reason, uint32_t delay_ms)
{
    ws->goaway_reason = reason;
    ws->goaway_delay_ms = delay_ms;
}

static void gate_ws_count_close(gate_ws_t *ws, int code)
{
    size_t i = 0;
    while (i < GATE_WS_NCODES && gate_ws_codes[i] != code)
        i++;
    if (ws->srv->m_close[i] != NULL)
        metrics_add(ws->srv->m_close[i], 1);
}

void gate_ws_close(gate_ws_t *ws, const char *reason)
{
    if (ws->state != WS_OPEN) {
        evbuffer_drain(ws->out, evbuffer_get_length(ws->out));
        return;
    }
    if (ws->framing_error) {
        /* wslay's event context holds a close without a code: it is never sent; the 1002 goes
         * out through the frame API instead. Nothing else is sent after a protocol error. */
        evbuffer_drain(ws->out, evbuffer_get_length(ws->out));
        uint8_t msg[2 + 40];
        static const char why[] = "invalid frame";
        msg[0] = WSLAY_CODE_PROTOCOL_ERROR >> 8;
        msg[1] = WSLAY_CODE_PROTOCOL_ERROR & 0xff;
        memcpy(msg + 2, why, sizeof why - 1);
        struct wslay_frame_iocb io = {.fin = 1,
                                      .opcode = WSLAY_CONNECTION_CLOSE,
                                      .payload_length = 2 + sizeof why - 1,
                                      .data = msg,
                                      .data_length = 2 + sizeof why - 1};
        gate_ws_frame_send(ws, &io);
        gate_ws_count_close(ws, WSLAY_CODE_PROTOCOL_ERROR);
        ws->state = WS_CLOSED;
        return;
    }
    gate_ws_flush(ws);
    if (gate_ws_ev_take(ws) != 0) {
        ws->state = WS_CLOSED; /* out of memory: the TCP close alone */
        return;
    }
    /* The gate's own close: its code and reason (ignored when a close is queued already). */
    int code = WSLAY_CODE_NORMAL_CLOSURE;
    char why[124];
    snprintf(why, sizeof why, "%s", reason != NULL ? reason : "closing");
    if (ws->goaway_reason == 1 /* GOAWAY_SHUTDOWN */) {
        code = WSLAY_CODE_GOING_AWAY;
        snprintf(why, sizeof why, "shutdown; reconnect_delay_ms=%u", ws->goaway_delay_ms);
    } else if (ws->goaway_reason == 6 /* GOAWAY_REBALANCE */) {
        code = WSLAY_CODE_GOING_AWAY;
        snprintf(why, sizeof why, "rebalance; reconnect_delay_ms=%u", ws->goaway_delay_ms);
    } else if (reason != NULL && strcmp(reason, "shutdown") == 0) {
        code = WSLAY_CODE_GOING_AWAY;
    } else if (reason != NULL &&
               (strcmp(reason, "slow_consumer") == 0 || strcmp(reason, "write_timeout") == 0 ||
                strcmp(reason, "login_timeout") == 0 || strcmp(reason, "frame_timeout") == 0 ||
                strcmp(reason, "over_capacity") == 0)) {
        /* wslay 1.1 refuses 1013 (Try Again Later): the GoAway before it says so. */
        code = WSLAY_CODE_POLICY_VIOLATION;
    } else if (reason != NULL && strcmp(reason, "bad_frame") == 0) {
        code = WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA;
    }
    int r = wslay_event_queue_close(ws->ev, (uint16_t)code, (const uint8_t *)why, strlen(why));
    if (r != 0 && r != WSLAY_ERR_NO_MORE_MSG)
        wslay_event_queue_close(ws->ev, WSLAY_CODE_INTERNAL_SERVER_ERROR, NULL, 0);
    wslay_event_send(ws->ev);
    if (wslay_event_get_close_sent(ws->ev))
        gate_ws_count_close(ws, wslay_event_get_status_code_sent(ws->ev));
    ws->state = WS_CLOSED;
}
