/*
 * gate_out.c -- client connections: small helpers, output batching, replies, pushes and
 * GoAway, graceful closes (gate_int.h; the contract is gate.h).
 */

#include "gate_int.h"

/* ---- small helpers ------------------------------------------------------------------------- */

gate_conn_t *gate_conn_get(gate_t *g, uint64_t id)
{
    uint64_t p;
    if (id == 0 || !u64map_get(g->conn_by_id, id, &p))
        return NULL;
    return (gate_conn_t *)(uintptr_t)p;
}

/* Monotonic and wall-clock milliseconds: the read callback's reading while one runs. */
int64_t gate_now_mono(const gate_t *g)
{
    return g->rx_clock ? g->rx_mono_ms : clock_mono_ms();
}

int64_t gate_now_wall(const gate_t *g)
{
    return g->rx_clock ? g->rx_wall_ms : clock_wall_ms();
}

uint64_t gate_next_rid(gate_t *g)
{
    if (++g->next_rid == 0)
        g->next_rid = 1;
    return g->next_rid;
}

/* ---- output batching ------------------------------------------------------------------------- */

static void gate_stage_put(gate_conn_t *c);
static void gate_conn_write_stage(gate_conn_t *c);

/*
 * Writes what a bufferevent has queued now, with one writev, instead of leaving it to
 * libevent's write event (that costs an epoll round and two epoll_ctl per frame at low rates:
 * the event is added when data is queued and removed once the buffer is empty). When all of it
 * was written, the write event the bufferevent added in this same loop iteration is removed
 * again: with the event base's changelist (gate_main.c) the kernel hears of neither. What
 * cannot be written now (EAGAIN, an error) stays queued in order, and the write event handles
 * it as before (so errors still reach the event callback): a bufferevent whose writing is
 * disabled (a plain TCP client's, gate_conn_write_idle) has it enabled for that.
 */
static void gate_bev_flush(struct bufferevent *bev)
{
    struct evbuffer *out = bufferevent_get_output(bev);
    if (evbuffer_get_length(out) == 0)
        return;
    /* A socket bufferevent keeps the start of its output frozen (only its own write callback
     * may drain it): evbuffer_write() on a frozen buffer writes nothing and returns -1. Thaw it
     * for this one write, as that callback does. */
    evbuffer_unfreeze(out, 1);
    evbuffer_write(out, bufferevent_getfd(bev));
    evbuffer_freeze(out, 1);
    if (evbuffer_get_length(out) != 0) {
        if (!(bufferevent_get_enabled(bev) & EV_WRITE))
            bufferevent_enable(bev, EV_WRITE);
        return;
    }
    if (event_pending(&bev->ev_write, EV_WRITE, NULL))
        event_del(&bev->ev_write);
}

/*
 * A plain TCP client's bufferevent has its writing disabled while nothing waits for the socket:
 * each frame queued then costs no check of the write event (libevent's output callback looks at
 * it, under the base's lock, for every frame added), and gate_flush_cb writes the frames of the
 * loop iteration itself. gate_bev_flush enables writing when the socket does not take all; the
 * write callback, once libevent has written the rest, or the flush that wrote all calls this to
 * disable it again. A closing
 * connection keeps it (its close is driven by the write event), and so do WebSocket and TLS
 * connections (their layers write to the bufferevent themselves).
 */
void gate_conn_write_idle(gate_conn_t *c)
{
    if (!c->closing && c->ws == NULL && !c->tls && (bufferevent_get_enabled(c->bev) & EV_WRITE) &&
        evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
        bufferevent_disable(c->bev, EV_WRITE);
}

/* ---- staging: the relay's frames to a plain TCP client, one write a loop iteration ----------- */

/* Gives c's staging buffer back to the pool (what it holds is dropped). */
static void gate_stage_put(gate_conn_t *c)
{
    if (c->stage == NULL)
        return;
    gate_t *g = c->g;
    memcpy(c->stage, &g->stage_free, sizeof g->stage_free);
    g->stage_free = c->stage;
    g->stage_lent--;
    c->stage = NULL;
    c->stage_len = 0;
}

/* Frees the pool of staging buffers (gate_destroy: every connection gave its own back). */
void gate_stage_release(gate_t *g)
{
    while (g->stage_free != NULL) {
        void *p = g->stage_free;
        memcpy(&g->stage_free, p, sizeof g->stage_free);
        free(p);
    }
}

/*
 * Queues one frame of the relay's fast path to a plain TCP client: the serialized ServerMessage
 * msg, with field = value written in front when field is not 0 (as frame_write_prefixed), is
 * copied to the connection's staging buffer, which gate_flush_cb writes with one send() at the
 * end of the loop iteration. A frame then costs one copy, instead of a reservation and a commit
 * in the socket's output with the output's callbacks. Order holds: a frame queued to the output
 * meanwhile (gate_conn_out) moves the staged ones there first, and what the socket does not take
 * goes to the output, after what it held. Returns 0, -EMSGSIZE over the client's cap, or -EAGAIN
 * when the frame is to go to the output instead (a WebSocket or TLS client, a closing one, a
 * frame over GATE_STAGE_SIZE, GATE_STAGE_MAX buffers lent).
 */
int gate_conn_stage(gate_conn_t *c, uint32_t field, uint64_t value, const uint8_t *msg, size_t len)
{
    gate_t *g = c->g;
    if (c->ws != NULL || c->tls || c->closing)
        return -EAGAIN;
    uint8_t head[FRAME_HEADER_SIZE + 20];
    size_t n = FRAME_HEADER_SIZE;
    if (field != 0) {
        n += frame_wire_put_varint(head + n, (uint64_t)field << 3);
        n += frame_wire_put_varint(head + n, value);
    }
    size_t size = n - FRAME_HEADER_SIZE + len;
    if (size > g->lim.max_frame || size > UINT32_MAX)
        return -EMSGSIZE;
    if (FRAME_HEADER_SIZE + size > GATE_STAGE_SIZE)
        return -EAGAIN;
    if (c->stage != NULL && GATE_STAGE_SIZE - c->stage_len < FRAME_HEADER_SIZE + size)
        gate_conn_unstage(c); /* full: its frames go to the output, the buffer is reused */
    if (c->stage == NULL) {
        if (g->stage_lent >= GATE_STAGE_MAX)
            return -EAGAIN;
        if (g->stage_free != NULL) {
            c->stage = g->stage_free;
            memcpy(&g->stage_free, c->stage, sizeof g->stage_free);
        } else {
            c->stage = xmalloc(GATE_STAGE_SIZE);
        }
        g->stage_lent++;
        c->stage_len = 0;
    }
    frame_put_header(head, (uint32_t)size);
    uint8_t *p = c->stage + c->stage_len;
    memcpy(p, head, n);
    if (len > 0)
        memcpy(p + n, msg, len);
    c->stage_len += (uint32_t)(FRAME_HEADER_SIZE + size);
    return 0;
}

/* Moves c's staged frames to the end of its socket's output (before anything else is queued
 * there, or when the connection closes); the buffer stays lent until the flush. */
void gate_conn_unstage(gate_conn_t *c)
{
    if (c->stage_len == 0)
        return;
    evbuffer_add(bufferevent_get_output(c->bev), c->stage, c->stage_len);
    c->stage_len = 0;
}

/*
 * Writes c's staged frames with one send() (its output is empty, so they are next on the
 * socket). What the socket does not take (EAGAIN, an error) goes to the output, and writing is
 * enabled for it, as gate_bev_flush does: libevent's write event then writes the rest or reports
 * the error to the event callback.
 */
static void gate_conn_write_stage(gate_conn_t *c)
{
    ssize_t n = send(bufferevent_getfd(c->bev), c->stage, c->stage_len, MSG_NOSIGNAL);
    size_t done = n > 0 ? (size_t)n : 0;
    if (done > 0)
        c->out_moved = true; /* as gate_conn_out_cb notes for the output */
    if (done < c->stage_len) {
        evbuffer_add(bufferevent_get_output(c->bev), c->stage + done, c->stage_len - done);
        if (!(bufferevent_get_enabled(c->bev) & EV_WRITE))
            bufferevent_enable(c->bev, EV_WRITE);
    }
    c->stage_len = 0;
}

/*
 * The end of a loop iteration's callbacks (flush_ev runs after the reads that were ready, being
 * activated by the first frame they queued): every link, then every client connection, that
 * had output queued is written once. Links first, so requests reach the game servers sooner.
 * Redis before both: a seat written (or deleted) for a Join, a Resume, a move or a Leave leaves
 * before the answer that tells the client, so a client that reconnects through another gateway
 * right after its answer finds the record (gate_seat.h). Connections that are closing, and
 * links still connecting, are left to libevent (their write events drive the close and the
 * connect).
 */
/* Writes what c has queued (gate_flush_cb). */
static void gate_conn_write_now(gate_conn_t *c)
{
    if (!c->closing && c->ws != NULL)
        gate_ws_flush(c->ws);
    if (!c->closing && c->stage_len > 0 && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
        gate_conn_write_stage(c);
    else if (!c->closing && !c->tls) {
        gate_conn_unstage(c);
        gate_bev_flush(c->bev);
        gate_conn_write_idle(c); /* all written: writing off again, if it was on */
    }
    gate_stage_put(c);
}

void gate_flush_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    for (int t = 0; t < 2; t++)
        if (g->out_frames[t] != 0) {
            metrics_add(g->m_frames_out, (double)g->out_frames[t]);
            metrics_add(g->m_tout[t], (double)g->out_frames[t]);
            g->out_frames[t] = 0;
        }
    rconn_flush(g->rc);
    gate_link_t *l;
    while ((l = TAILQ_FIRST(&g->dirty_links)) != NULL) {
        TAILQ_REMOVE(&g->dirty_links, l, dirty);
        l->in_dirty = false;
        if (l->bev != NULL && (l->state == LINK_HELLO || l->state == LINK_READY))
            gate_bev_flush(l->bev);
    }
    gate_conn_t *c;
    while ((c = TAILQ_FIRST(&g->dirty_conns)) != NULL) {
        TAILQ_REMOVE(&g->dirty_conns, c, dirty);
        c->in_dirty = false;
        gate_conn_write_now(c);
    }
}

/*
 * The spectators' writes, paced (docs/spectators.md "Fan-out"): a slice of them, then the
 * gateway goes back to its poll and the next slice comes GATE_WATCH_PACE_US later, so that the
 * writes of a table's batch to its hundreds of spectators (~9 us of CPU each on loopback, most
 * of it the kernel's) are spread over the flush interval in bursts of a few hundred
 * microseconds instead of one burst of milliseconds that holds a core while the game server and
 * the players' clients, woken meanwhile, wait for it. A slice is at least GATE_WATCH_WRITES
 * spectators and large enough that every one waiting is written within about --watch-flush-ms;
 * batches that come meanwhile join a spectator's output still waiting (one write for all).
 */
void gate_watch_slice_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    size_t slices =
        g->cfg.watch_flush_ms > 0 ? (size_t)g->cfg.watch_flush_ms * 1000 / GATE_WATCH_PACE_US : 1;
    size_t n = (g->ndirty_watch + slices - 1) / (slices > 0 ? slices : 1);
    if (n < GATE_WATCH_WRITES)
        n = GATE_WATCH_WRITES;
    gate_conn_t *c;
    for (size_t k = 0; k < n && (c = TAILQ_FIRST(&g->dirty_watch)) != NULL; k++) {
        TAILQ_REMOVE(&g->dirty_watch, c, dirty);
        g->ndirty_watch--;
        c->in_dirty = false;
        c->dirty_watch = false;
        gate_conn_write_now(c);
    }
    if (!TAILQ_EMPTY(&g->dirty_watch)) {
        static const struct timeval pace = {0, GATE_WATCH_PACE_US};
        event_add(g->watch_slice_ev, &pace);
    }
}

/* Notes that a connection has output queued in this loop iteration (see gate_flush_cb). */
void gate_conn_dirty(gate_conn_t *c)
{
    if (c->in_dirty)
        return;
    c->in_dirty = true;
    TAILQ_INSERT_TAIL(&c->g->dirty_conns, c, dirty);
    event_active(c->g->flush_ev, EV_TIMEOUT, 0);
}

/* Notes that a spectator has a table's batch queued: written after the players' output, in the
 * paced slices of gate_watch_slice_cb. A connection already dirty stays where it is. */
void gate_conn_dirty_watch(gate_conn_t *c)
{
    if (c->in_dirty)
        return;
    c->in_dirty = true;
    c->dirty_watch = true;
    gate_t *g = c->g;
    TAILQ_INSERT_TAIL(&g->dirty_watch, c, dirty);
    g->ndirty_watch++;
    if (g->watch_slice_ev != NULL && !evtimer_pending(g->watch_slice_ev, NULL)) {
        /* The first slice after the players' output of this loop turn (a zero timer runs
         * after the next poll). */
        static const struct timeval now = {0, 0};
        event_add(g->watch_slice_ev, &now);
    }
}

/* Notes that a link has output queued in this loop iteration (see gate_flush_cb). */
void gate_link_dirty(gate_link_t *l)
{
    if (l->in_dirty)
        return;
    l->in_dirty = true;
    TAILQ_INSERT_TAIL(&l->g->dirty_links, l, dirty);
    event_active(l->g->flush_ev, EV_TIMEOUT, 0);
}

void gate_link_undirty(gate_link_t *l)
{
    if (l->in_dirty)
        TAILQ_REMOVE(&l->g->dirty_links, l, dirty);
    l->in_dirty = false;
}

/* ---- client output --------------------------------------------------------------------------- */

/* Where a client's frames are queued: the socket's output, or the WebSocket layer's (gate_ws.h
 * turns each frame into one binary message when it is flushed). */
struct evbuffer *gate_conn_out(gate_conn_t *c)
{
    if (c->ws != NULL)
        return gate_ws_out(c->ws);
    gate_conn_unstage(c); /* the staged frames go first */
    return bufferevent_get_output(c->bev);
}

size_t gate_conn_queued(gate_conn_t *c)
{
    return c->ws != NULL ? gate_ws_queued(c->ws)
                         : evbuffer_get_length(bufferevent_get_output(c->bev)) + c->stage_len;
}

/* Counts a frame queued to c; every caller marks c dirty next, so gate_flush_cb, which adds the
 * counts to the metrics, runs in this loop iteration. */
void gate_conn_count_out(gate_conn_t *c)
{
    c->g->out_frames[c->ws != NULL]++;
}

/*
 * Whether the log line of an edge cause is due: at most one per GATE_NOTE_MS per cause. Returns
 * the number of lines skipped since the last one written (>= 0) when it is due, -1 when not.
 */
long gate_edge_note(gate_t *g, int cause, int64_t now)
{
    if (g->note[cause].last_ms != 0 && now - g->note[cause].last_ms < GATE_NOTE_MS) {
        g->note[cause].skipped++;
        return -1;
    }
    long skipped = g->note[cause].skipped;
    g->note[cause].last_ms = now;
    g->note[cause].skipped = 0;
    return skipped;
}

/*
 * Queues a GoAway as the last frame before a close the gateway decides on (a slow consumer, an
 * edge limit): past the output cap, since it only adds one small frame to output that is about
 * to be flushed or given up. The WebSocket close that follows names the reason.
 */
void gate_conn_goaway_last(gate_conn_t *c, int reason, const char *detail)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__GoAway ga = CROUPIER__GO_AWAY__INIT;
    ga.reason = (Croupier__GoAwayReason)reason;
    ga.reconnect_delay_ms = arc4random_uniform(1000);
    ga.detail = (char *)detail;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY;
    sm.go_away = &ga;
    if (frame_pack_server(gate_conn_out(c), &sm, &c->g->lim, NULL) == 0) {
        gate_conn_count_out(c);
        gate_conn_dirty(c);
        metrics_add(c->g->m_goaway[reason], 1);
    }
    if (c->ws != NULL)
        gate_ws_goaway(c->ws, reason, ga.reconnect_delay_ms);
}

/*
 * Whether one more frame may be queued to a client. The connection is closed as a slow consumer
 * when its unsent output would pass output_cap (one last GoAway is still queued, so the close
 * has a reason). Returns 0, or -EPIPE when the connection is closing or was just closed.
 */
int gate_conn_room(gate_conn_t *c)
{
    if (c->closing)
        return -EPIPE;
    if (gate_conn_queued(c) > c->g->cfg.output_cap) {
        long skipped = gate_edge_note(c->g, EDGE_OUTPUT, clock_mono_ms());
        if (skipped >= 0)
            log_emit(LOG_WARN, "client_slow_consumer", "{s:I,s:I,s:I,s:I}", "conn",
                     (json_int_t)c->id, "player", (json_int_t)c->player, "queued",
                     (json_int_t)gate_conn_queued(c), "skipped_since_last", (json_int_t)skipped);
        metrics_add(c->g->m_slow, 1);
        gate_conn_goaway_last(c, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED,
                              "slow consumer: output above the cap");
        gate_conn_close(c, "slow_consumer");
        return -EPIPE;
    }
    return 0;
}

/* Queues one frame to a client (see gate_conn_room). Returns 0 or a negative errno. */
int gate_conn_send(gate_conn_t *c, const Croupier__ServerMessage *m)
{
    int rc = gate_conn_room(c);
    if (rc != 0)
        return rc;
    struct evbuffer *out = gate_conn_out(c);
    frame_error_t err;
    rc = frame_pack_server(out, m, &c->g->lim, &err);
    if (rc != 0) {
        log_emit(LOG_ERROR, "client_encode_failed", "{s:i,s:s}", "errno", -rc, "detail",
                 err.detail);
        return rc;
    }
    gate_conn_count_out(c);
    gate_conn_dirty(c);
    return 0;
}

/*
 * Queues m to a client as the bytes in fwd (with request_id set to rid when rid is not 0)
 * instead of re-encoding it: the rpc frame they came in passed the same checks as a
 * ServerMessage (RpcFrame.reply.payload and RpcFrame.push are checked as one). Falls back to
 * encoding m when there are no bytes or they cannot be forwarded. Returns 0 or a negative errno.
 */
int gate_conn_forward(gate_conn_t *c, const gate_fwd_t *fwd, uint64_t rid,
                      const Croupier__ServerMessage *m)
{
    if (fwd == NULL || fwd->p == NULL)
        return gate_conn_send(c, m);
    int rc = gate_conn_room(c);
    if (rc != 0)
        return rc;
    rc = frame_write_forward(gate_conn_out(c), fwd->p, fwd->len,
                             rid != 0 ? c->g->fid_request_id : 0, rid, &c->g->lim);
    if (rc != 0)
        return gate_conn_send(c, m);
    gate_conn_count_out(c);
    gate_conn_dirty(c);
    return 0;
}

/* Answers a client request with Result{error}, retriable as the code says (gate_conn_error) or
 * as the caller says (gate_conn_error_retriable). */
void gate_conn_error(gate_conn_t *c, uint64_t rid, int code, const char *message)
{
    gate_conn_error_retriable(c, rid, code,
                              code == CROUPIER__ERROR_CODE__DRAINING ||
                                  code == CROUPIER__ERROR_CODE__UNAVAILABLE ||
                                  code == CROUPIER__ERROR_CODE__RATE_LIMITED ||
                                  code == CROUPIER__ERROR_CODE__OVERLOADED ||
                                  code == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED,
                              message);
}

void gate_conn_error_retriable(gate_conn_t *c, uint64_t rid, int code, bool retriable,
                               const char *message)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result res = CROUPIER__RESULT__INIT;
    Croupier__Error e = CROUPIER__ERROR__INIT;
    sm.has_request_id = true;
    sm.request_id = rid;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &res;
    res.error = &e;
    e.code = (Croupier__ErrorCode)code;
    e.message = (char *)(message != NULL ? message : frame_error_code_name(code));
    e.has_retriable = true;
    e.retriable = retriable;
    gate_conn_send(c, &sm);
}

void gate_conn_goaway(gate_conn_t *c, int reason, uint32_t delay_ms, const char *detail)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__GoAway ga = CROUPIER__GO_AWAY__INIT;
    ga.reason = (Croupier__GoAwayReason)reason;
    ga.reconnect_delay_ms = delay_ms;
    ga.detail = (char *)detail;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY;
    sm.go_away = &ga;
    if (gate_conn_send(c, &sm) == 0 && reason >= 0 && reason < 7)
        metrics_add(c->g->m_goaway[reason], 1);
    if (c->ws != NULL)
        gate_ws_goaway(c->ws, reason, delay_ms); /* the WS close that follows names it */
}

/* ---- graceful close ------------------------------------------------------------------------ */

/*
 * Frees the connection once the close is complete: output flushed and shut down, the peer's EOF
 * read (so close() finds no unread input and sends FIN, not RST).
 */
void gate_conn_close_progress(gate_conn_t *c)
{
    if (!c->closing)
        return;
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (!c->shut_wr && evbuffer_get_length(out) == 0) {
        c->shut_wr = true;
        if (c->tls)
            SSL_shutdown(bufferevent_openssl_get_ssl(c->bev)); /* close_notify, then the FIN */
        shutdown(bufferevent_getfd(c->bev), SHUT_WR);
    }
    if (c->shut_wr && c->eof)
        gate_conn_free(c);
}

static void gate_conn_close_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_conn_t *c = arg;
    log_emit(LOG_INFO, "client_close_timeout", "{s:I,s:b,s:b}", "conn", (json_int_t)c->id,
             "flushed", c->shut_wr, "eof", c->eof);
    if (c->g->exit_step == 3)
        c->g->exit_forced = true;
    gate_conn_free(c);
}

/*
 * Starts the graceful close: no more requests are handled, queued output is flushed, then
 * shutdown(SHUT_WR), then input is read and dropped until EOF, bounded by close_timeout_ms.
 * The player's session ends now (a takeover or a reconnect may already own it).
 */
/* Takes c off the list of connections not logged in (a login, a close, its end). */
void gate_conn_unauth_remove(gate_conn_t *c)
{
    if (!c->in_unauth)
        return;
    TAILQ_REMOVE(&c->g->unauth, c, unauth);
    c->in_unauth = false;
}

void gate_conn_close(gate_conn_t *c, const char *reason)
{
    if (c->closing)
        return;
    gate_t *g = c->g;
    gate_conn_unstage(c); /* its output is flushed by the write event from here on */
    c->closing = true;
    gate_conn_unauth_remove(c);
    log_emit(LOG_DEBUG, "client_closing", "{s:I,s:I,s:s}", "conn", (json_int_t)c->id, "player",
             (json_int_t)c->player, "reason", reason);
    if (c->player != 0) {
        uint64_t owner;
        if (u64map_get(g->conn_by_player, c->player, &owner) && owner == c->id)
            u64map_del(g->conn_by_player, c->player);
    }
    if (c->ws != NULL)
        gate_ws_close(c->ws, reason); /* the WebSocket close frame before the TCP close */
    c->close_ev = evtimer_new(g->base, gate_conn_close_timeout_cb, c);
    /* A connection refused by a cap is not counted by the caps while it closes: its close is
     * bounded tighter, so a flood of refused connections holds descriptors only briefly. */
    int ms = g->cfg.close_timeout_ms;
    if (c->refused >= 0 && ms > GATE_REFUSED_CLOSE_MS)
        ms = GATE_REFUSED_CLOSE_MS;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(c->close_ev, &tv);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    evbuffer_drain(bufferevent_get_input(c->bev),
                   evbuffer_get_length(bufferevent_get_input(c->bev)));
    gate_conn_close_progress(c);
}

/* Tells the seat's server the player is gone (one-way; the seat stays for a resume). */

/* The connection no longer counts against the caps (it ends, or it was evicted). */
void gate_edge_release(gate_conn_t *c)
{
    gate_t *g = c->g;
    if (!c->admitted)
        return;
    c->admitted = false;
    g->admitted--;
    uint64_t n;
    if (c->addr_key != 0 && u64map_get(g->addr_conns, c->addr_key, &n)) {
        if (n <= 1)
            u64map_del(g->addr_conns, c->addr_key);
        else
            u64map_put(g->addr_conns, c->addr_key, n - 1);
    }
    c->addr_key = 0;
}

void gate_conn_free(gate_conn_t *c)
{
    gate_t *g = c->g;
    if (c->player != 0) {
        uint64_t owner;
        if (u64map_get(g->conn_by_player, c->player, &owner) && owner == c->id)
            u64map_del(g->conn_by_player, c->player);
        if (c->seat != NULL && !u64map_get(g->conn_by_player, c->player, NULL))
            gate_send_player_gone(g, c);
    }
    gate_conn_unauth_remove(c);
    gate_edge_release(c);
    TAILQ_REMOVE(&g->conns, c, all);
    if (c->in_dirty) {
        if (c->dirty_watch) {
            TAILQ_REMOVE(&g->dirty_watch, c, dirty);
            g->ndirty_watch--;
        } else
            TAILQ_REMOVE(&g->dirty_conns, c, dirty);
    }
    gate_stage_put(c);
    u64map_del(g->conn_by_id, c->id);
    if (c->close_ev != NULL)
        event_free(c->close_ev);
    bufferevent_free(c->bev);
    gate_ws_destroy(c->ws);
    metrics_add(g->m_tconns[c->ws != NULL], -1);
    free(c->seat);
    free(c->expired);
    free(c->tours);
    gate_watch_conn_gone(c); /* gate_watch.c */
    free(c);
    atomic_fetch_sub(&g->nconns, 1);
    metrics_add(g->m_conns, -1);
    if (g->exit_step != 0 && g->cfg.drain != NULL)
        drain_notify(g->cfg.drain); /* /drain/wait counts connections down */
    if (g->exit_step == 3 && TAILQ_EMPTY(&g->conns))
        event_active(g->exit_ev, EV_READ, 0);
}
