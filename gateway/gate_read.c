/*
 * gate_read.c -- the client read path: frames in (checked, rate-limited, dispatched to
 * gate_client.c and gate_lobby.c), the stall guard (docs/gateway.md "When a gateway freezes"),
 * accepts, and the sweep every 100 ms (edge deadlines, idle connections). gate_int.h holds what
 * the gateway's files share; the contract is gate.h.
 */
#include "gate_int.h"

static void gate_client_ping(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Pong pong = CROUPIER__PONG__INIT;
    sm.has_request_id = true;
    sm.request_id = m->request_id;
    pong.nonce = m->ping->nonce;
    pong.has_server_time_ms = true;
    pong.server_time_ms = (uint64_t)clock_wall_ms();
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PONG;
    sm.pong = &pong;
    gate_conn_send(c, &sm);
}

/* Takes one token from the connection's bucket; false when it is empty. */
static bool gate_conn_take_token(gate_conn_t *c)
{
    gate_t *g = c->g;
    int64_t now = gate_now_mono(g);
    c->tokens += (double)(now - c->tokens_ms) * g->cfg.rate_per_s / 1000.0;
    c->tokens_ms = now;
    if (c->tokens > g->cfg.rate_burst)
        c->tokens = g->cfg.rate_burst;
    if (c->tokens < 1.0)
        return false;
    c->tokens -= 1.0;
    return true;
}

/* The request_id (field 1, a varint) of a serialized ClientMessage the decoder refused, read
 * without a schema; 0 when absent, repeated or unreadable. Lets the refusal name its request
 * (docs/protocol.md "Transports", close code 1007). */
static uint64_t gate_wire_request_id(const uint8_t *payload, size_t len)
{
    frame_wire_reader_t r;
    frame_wire_value_t v;
    uint64_t id = 0;
    int n = 0;
    frame_wire_init(&r, payload, len);
    for (;;) {
        int rc = frame_wire_next(&r, &v);
        if (rc < 0)
            return n == 1 ? id : 0; /* the id read before the malformed part still names it */
        if (rc == 0)
            break;
        if (v.field == 1) {
            if (v.type != 0 || ++n > 1)
                return 0;
            id = v.num;
        }
    }
    return n == 1 ? id : 0;
}

/* Refuses a bad frame with an Error (with the request's id when it could be read) and closes
 * gracefully (the stream may not resync). */
static void gate_conn_bad_frame(gate_conn_t *c, const frame_error_t *err, uint64_t request_id)
{
    gate_t *g = c->g;
    metrics_add(g->m_bad_frames, 1);
    log_emit(LOG_INFO, "client_bad_frame", "{s:I,s:s,s:s}", "conn", (json_int_t)c->id, "code",
             frame_error_code_name(err->code), "detail", err->detail);
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Error e = CROUPIER__ERROR__INIT;
    e.code = err->code;
    e.message = (char *)err->detail;
    e.has_retriable = true;
    e.retriable = false;
    sm.has_request_id = request_id != 0;
    sm.request_id = request_id;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ERROR;
    sm.error = &e;
    gate_conn_send(c, &sm);
    gate_conn_close(c, "bad_frame");
}

static void gate_conn_read_frames(gate_conn_t *c, struct evbuffer *in);

/*
 * After the main loop stood still for more than GATE_STALL_MS, a connection with input that
 * waited through the stall is closed without acting on it. Its client may have found this
 * gateway silent, left for another and resumed there (docs/protocol.md "Keepalive"); a request
 * of its old connection, read only now and sent on with a fresh deadline, would make the game
 * server route the player's pushes back here, to a connection nobody reads, and the player
 * would miss its table's events (a turn, a round's end). A client that did not leave reconnects
 * and resumes. Which runs first after the stall, the reads or the sweep's late run, depends on
 * what the loop's first wait returns, so both look: the read (gate_conn_stalled: the sweep, due
 * every 100 ms, has not run for that long) and the sweep; whichever sees it first ends the stall
 * (gate_stall_end: bytes still unread in the sockets).
 */
static void gate_conn_close_stalled(gate_conn_t *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    evbuffer_drain(in, evbuffer_get_length(in));
    c->g->stall_closed++;
    gate_conn_close(c, "gateway_stalled");
}

/* The stall is over: first (the connection whose read saw it, if any) and every connection with
 * bytes still waiting in its socket are closed (gate_conn_close_stalled), the stall logged, and the
 * sweep's clock moved to now, so that what arrives from here on is served (a client that sent after
 * the gateway came back is not taken for one whose bytes waited). */
static void gate_stall_end(gate_t *g, int64_t now, gate_conn_t *first)
{
    /* Which sockets hold bytes is read for all before any is closed: a close is seen by its
     * client at once, and a client acting on it (sending on another connection) must not be
     * taken for one whose bytes waited. */
    size_t n = 0, cap = 0;
    uint64_t *ids = NULL;
    gate_conn_t *c;
    TAILQ_FOREACH(c, &g->conns, all)
    {
        int unread = 0;
        if (c != first && !c->closing && c->bev != NULL &&
            ioctl(bufferevent_getfd(c->bev), FIONREAD, &unread) == 0 && unread > 0) {
            if (n == cap) {
                cap = cap != 0 ? cap * 2 : 16;
                ids = xrealloc(ids, cap * sizeof *ids);
            }
            ids[n++] = c->id;
        }
    }
    if (first != NULL)
        gate_conn_close_stalled(first);
    for (size_t i = 0; i < n; i++)
        if ((c = gate_conn_get(g, ids[i])) != NULL && !c->closing)
            gate_conn_close_stalled(c);
    free(ids);
    /* The time the loop stood still is not the clients': the edge deadlines and the idle clock
     * of the connections left go on from where they stood (a client is not closed for output we
     * did not write, or for silence we did not hear, while we were frozen). */
    int64_t stalled = now - g->sweep_ms;
    TAILQ_FOREACH(c, &g->conns, all)
    {
        if (c->closing)
            continue;
        c->accept_ms += stalled;
        c->out_ms += stalled;
        c->last_rx_ms += stalled;
        if (c->partial_ms != 0)
            c->partial_ms += stalled;
    }
    log_emit(LOG_WARN, "gate_stalled", "{s:I,s:I}", "stalled_ms", (json_int_t)stalled,
             "connections_closed", (json_int_t)g->stall_closed);
    g->stall_closed = 0;
    g->sweep_ms = now;
}

/* The read's look: true when the connection was closed (gate_conn_close_stalled). */
static bool gate_conn_stalled(gate_conn_t *c)
{
    gate_t *g = c->g;
    int64_t now = clock_mono_ms();
    if (g->sweep_ms == 0 || now - g->sweep_ms <= GATE_STALL_MS)
        return false;
    gate_stall_end(g, now, c);
    return true;
}

/* Reads the clocks once for the frames of this read (see gate_t.rx_clock). */
static void gate_conn_read_cb(struct bufferevent *bev, void *arg)
{
    gate_conn_t *c = arg;
    gate_t *g = c->g;
    struct evbuffer *in = bufferevent_get_input(bev);
    if (c->closing) {
        evbuffer_drain(in, evbuffer_get_length(in));
        return;
    }
    if (gate_conn_stalled(c))
        return;
    bool saved = g->rx_clock;
    int64_t saved_mono = g->rx_mono_ms, saved_wall = g->rx_wall_ms;
    g->rx_mono_ms = clock_mono_ms();
    g->rx_wall_ms = clock_wall_ms();
    g->rx_clock = true;
    c->last_rx_ms = g->rx_mono_ms; /* any bytes: for WebSocket, pings and pongs count */
    int ws_close = c->ws != NULL ? gate_ws_read(c->ws, &in) : 0;
    if (c->refused >= 0 && !ws_close && c->ws != NULL && gate_ws_open(c->ws)) {
        /* Over a cap: told so now that frames can go out (gate_conn_accept). */
        evbuffer_drain(in, evbuffer_get_length(in));
        gate_conn_refuse(c);
    }
    uint64_t frames = c->rx_frames;
    bool ws = c->ws != NULL;
    uint64_t saved_in = g->in_frames; /* as the clocks: a read callback may nest */
    g->in_frames = 0;
    gate_conn_read_frames(c, in);
    if (g->in_frames != 0) {
        metrics_add(g->m_frames_in, (double)g->in_frames);
        metrics_add(g->m_tin[ws], (double)g->in_frames);
    }
    g->in_frames = saved_in;
    if (ws_close)
        gate_conn_close(c, "ws_close");
    /* A frame begun and not complete: its deadline (--frame-timeout-ms) runs from the first
     * read that left it so, and restarts whenever a frame completes. */
    bool partial =
        !c->closing && (c->ws != NULL ? gate_ws_partial(c->ws) : evbuffer_get_length(in) > 0);
    if (!partial || c->rx_frames != frames)
        c->partial_ms = 0;
    if (partial && c->partial_ms == 0)
        c->partial_ms = g->rx_mono_ms;
    g->rx_clock = saved;
    g->rx_mono_ms = saved_mono;
    g->rx_wall_ms = saved_wall;
}

/* The frames of one read callback, one at a time (the connection may close on the way). */
static void gate_conn_read_frames(gate_conn_t *c, struct evbuffer *in)
{
    gate_t *g = c->g;
    while (!c->closing) {
        /* frame_read_client() in steps, so that an Action's bytes can be taken from the frame
         * for forwarding before it is consumed. */
        const uint8_t *payload;
        size_t len;
        frame_error_t err;
        frame_result_t r = frame_peek(in, &g->lim, &payload, &len, NULL);
        if (r == FRAME_NEED_MORE)
            return;
        if (r == FRAME_TOO_LARGE) {
            memset(&err, 0, sizeof err);
            err.code = CROUPIER__ERROR_CODE__FRAME_TOO_LARGE;
            snprintf(err.detail, sizeof err.detail, "frame of %zu bytes, cap %zu", len,
                     g->lim.max_frame);
            gate_conn_bad_frame(c, &err, 0);
            return;
        }
        /* Decoded into the scratch (no malloc): every path below frees it before the next
         * frame, except the requests that keep their message, decoded again on the heap. */
        Croupier__ClientMessage *m =
            frame_unpack_client_scratch(payload, len, &g->lim, &err, &g->scratch);
        const uint8_t *act = NULL;
        size_t act_len = 0;
        uint8_t act_buf[GATE_ACTION_FWD_MAX];
        if (m != NULL && m->body_case == CROUPIER__CLIENT_MESSAGE__BODY_ACTION &&
            g->forward_action &&
            frame_wire_field(payload, len, g->fid_client_action, &act, &act_len) == 0 &&
            act_len <= sizeof act_buf) {
            memcpy(act_buf, act, act_len);
            act = act_buf;
        } else {
            act = NULL;
            act_len = 0;
        }
        if (m != NULL && gate_msg_kept(m->body_case, act_len)) {
            frame_free_client(m);
            m = frame_unpack_client(payload, len, &g->lim, &err);
        }
        uint64_t bad_rid = m == NULL ? gate_wire_request_id(payload, len) : 0;
        frame_consume(in, len);
        c->rx_frames++;
        if (m == NULL) {
            gate_conn_bad_frame(c, &err, bad_rid);
            return;
        }
        g->in_frames++; /* into the metrics once the read callback is done */
        if (!gate_conn_take_token(c)) {
            metrics_add(g->m_rate_limited, 1);
            metrics_add(g->m_reject[REJ_RATE], 1);
            gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__RATE_LIMITED,
                            "too many frames; slow down");
            frame_free_client(m);
            continue;
        }
        if (c->player != 0 && m->body_case != CROUPIER__CLIENT_MESSAGE__BODY_PING &&
            m->body_case != CROUPIER__CLIENT_MESSAGE__BODY_LOGIN && !gate_player_take(c)) {
            /* The player's requests over all its connections (--player-rate-limit). */
            metrics_add(g->m_edge[EDGE_PLAYER_RATE], 1);
            metrics_add(g->m_reject[REJ_RATE], 1);
            long skipped = gate_edge_note(g, EDGE_PLAYER_RATE, gate_now_mono(g));
            if (skipped >= 0)
                log_emit(LOG_WARN, "player_rate_limited", "{s:I,s:I,s:i,s:I}", "player",
                         (json_int_t)c->player, "conn", (json_int_t)c->id, "limit_per_s",
                         g->cfg.player_rate_per_s, "skipped_since_last", (json_int_t)skipped);
            gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__RATE_LIMITED,
                            "too many requests from this player; slow down");
            frame_free_client(m);
            continue;
        }
        if (c->watch != NULL && gate_watch_refuses(c, m)) { /* gate_watch.c */
            frame_free_client(m);
            continue;
        }
        switch (m->body_case) {
        case CROUPIER__CLIENT_MESSAGE__BODY_LOGIN:
            gate_client_login(c, m);
            frame_free_client(m);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_PING:
            gate_client_ping(c, m);
            frame_free_client(m);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_JOIN:
        case CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM:
        case CROUPIER__CLIENT_MESSAGE__BODY_JOIN_ROOM:
            gate_client_request(c, m, GATE_REQ_JOIN, NULL, 0);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_GET_ROOM:
            gate_client_get_room(c, m);
            frame_free_client(m);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_GET_REPLAY:
            gate_client_get_replay(c, m);
            frame_free_client(m);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_SHARE_REPLAY:
            gate_client_share_replay(c, m);
            frame_free_client(m);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_LEAVE:
            gate_client_request(c, m, GATE_REQ_LEAVE, NULL, 0);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_ACTION:
            gate_client_request(c, m, GATE_REQ_ACTION, act, act_len);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_RESUME:
            gate_client_request(c, m, GATE_REQ_RESUME, NULL, 0);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_LIST_TABLES:
            gate_client_list(c, m);
            frame_free_client(m);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_LIST_TOURNAMENTS:
        case CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT:
        case CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT:
        case CROUPIER__CLIENT_MESSAGE__BODY_UNREGISTER_TOURNAMENT:
        case CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT:
            gate_client_tour(c, m);
            frame_free_client(m);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_WATCH:
        case CROUPIER__CLIENT_MESSAGE__BODY_UNWATCH:
            gate_client_watch(c, m);
            frame_free_client(m);
            break;
        default:
            gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNKNOWN_REQUEST,
                            "unknown request");
            frame_free_client(m);
            break;
        }
    }
}

static void gate_conn_write_cb(struct bufferevent *bev, void *arg)
{
    (void)bev;
    gate_conn_write_idle(arg);
    gate_conn_close_progress(arg);
}

static void gate_conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    gate_conn_t *c = arg;
    if (what & BEV_EVENT_EOF) {
        c->eof = true;
        if (!c->closing) {
            /* The client closed its side: finish like a graceful close (flush what is queued). */
            gate_conn_close(c, "client_eof");
            return;
        }
        gate_conn_close_progress(c);
        return;
    }
    if (what & BEV_EVENT_ERROR) {
        log_emit(LOG_DEBUG, "client_socket_error", "{s:I,s:s}", "conn", (json_int_t)c->id, "error",
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        gate_conn_free(c);
    }
}

/*
 * A client connection on fd from sa, speaking the TCP framing or (ws) WebSocket. A connection
 * over a cap (gate_edge_admit) is set up all the same, to be told why and closed gracefully.
 */
static void gate_conn_accept(gate_t *g, evutil_socket_t fd, bool ws, const struct sockaddr *sa)
{
    gate_conn_t *c = xcalloc(1, sizeof *c);
    c->g = g;
    c->id = ++g->next_conn_id;
    SSL *ssl = g->cfg.tls != NULL ? gate_tls_new_ssl(g->cfg.tls) : NULL;
    if (g->cfg.tls == NULL)
        c->bev = bufferevent_socket_new(g->base, fd, BEV_OPT_CLOSE_ON_FREE);
    else if (ssl != NULL)
        c->bev = bufferevent_openssl_socket_new(g->base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                                BEV_OPT_CLOSE_ON_FREE);
    if (c->bev == NULL && ssl != NULL)
        SSL_free(ssl);
    if (c->bev != NULL && ssl != NULL) {
        c->tls = true;
        /* A client that closes without close_notify reads as EOF, not as an error. */
        bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
    }
    if (c->bev != NULL && ws && (c->ws = gate_ws_create(g->ws_srv, c->bev, c->id)) == NULL) {
        bufferevent_free(c->bev);
        c->bev = NULL;
        fd = -1;
    }
    if (c->bev == NULL) {
        if (fd >= 0)
            close(fd);
        free(c);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->last_rx_ms = clock_mono_ms();
    c->tokens_ms = c->last_rx_ms;
    c->tokens = g->cfg.rate_burst;
    c->accept_ms = c->out_ms = c->last_rx_ms;
    c->refused = (int8_t)gate_edge_admit(g, c, sa);
    bufferevent_setcb(c->bev, gate_conn_read_cb, gate_conn_write_cb, gate_conn_event_cb, c);
    /* The input holds at most one partial frame and one read's bytes: the read callback takes
     * every whole frame (or closes the connection, which drops the input). A plain TCP
     * connection needs no read watermark for that (it costs a callback and an event_add for
     * every frame taken), like the rpc links; the WebSocket and TLS layers keep theirs. */
    if (ws || g->cfg.tls != NULL)
        bufferevent_setwatermark(c->bev, EV_READ, 0, FRAME_HEADER_SIZE + g->lim.max_frame + 4096);
    evbuffer_add_cb(bufferevent_get_output(c->bev), gate_conn_out_cb, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    /* A plain TCP connection writes through gate_flush_cb (gate_conn_write_idle); a new
     * bufferevent has writing enabled. */
    if (c->ws == NULL && !c->tls)
        bufferevent_disable(c->bev, EV_WRITE);
    TAILQ_INSERT_TAIL(&g->conns, c, all);
    u64map_put(g->conn_by_id, c->id, (uint64_t)(uintptr_t)c);
    atomic_fetch_add(&g->nconns, 1);
    metrics_add(g->m_conns, 1);
    metrics_add(g->m_tconns[ws], 1);
    if (c->refused >= 0) {
        metrics_add(g->m_edge[c->refused], 1);
        long skipped = gate_edge_note(g, c->refused, c->accept_ms);
        if (skipped >= 0) {
            char addr[INET6_ADDRSTRLEN];
            gate_addr_text(sa, addr, sizeof addr);
            log_emit(LOG_WARN, "client_refused", "{s:s,s:s,s:I,s:I,s:I}", "cap",
                     gate_edge_names[c->refused], "addr", addr, "connections",
                     (json_int_t)g->admitted, "conn", (json_int_t)c->id, "skipped_since_last",
                     (json_int_t)skipped);
        }
        if (!ws)
            gate_conn_refuse(c); /* a WebSocket one once its handshake is done */
    }
}

void gate_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                    int socklen, void *arg)
{
    (void)lis;
    (void)socklen;
    gate_conn_accept(arg, fd, false, sa);
}

void gate_ws_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                       int socklen, void *arg)
{
    (void)lis;
    (void)socklen;
    gate_conn_accept(arg, fd, true, sa);
}

/* Every 100 ms: the edge deadlines and idle connections (GoAway{IDLE}); per-player buckets to
 * forget (every second); the heartbeat of the main loop. */
void gate_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    int64_t now = clock_mono_ms();
    gate_conn_t *c, *next;
    /* The sweep's look at a stall, when it runs before any read -- first, so that a deadline
     * the stall alone made due is not taken for the client's (gate_stall_end). */
    if (g->sweep_ms != 0 && now - g->sweep_ms > GATE_STALL_MS)
        gate_stall_end(g, now, NULL);
    for (c = TAILQ_FIRST(&g->conns); c != NULL; c = next) {
        next = TAILQ_NEXT(c, all);
        if (c->closing || gate_conn_check_edges(c, now))
            continue;
        if (now - c->last_rx_ms > g->cfg.idle_timeout_ms) {
            gate_conn_goaway(c, CROUPIER__GO_AWAY_REASON__GOAWAY_IDLE, 0, "idle timeout");
            gate_conn_close(c, "idle");
        }
    }
    if (now - g->buckets_swept_ms >= 1000) {
        g->buckets_swept_ms = now;
        gate_buckets_sweep(g, now);
    }
    g->sweep_ms = now;
    if (g->cfg.drain != NULL)
        drain_heartbeat_beat(g->cfg.drain, 0);
    atomic_store(&g->ready_flag,
                 g->registered && registry_view_refreshes(g->view) > 0 && g->exit_step == 0 &&
                     (g->cfg.redis_cluster == NULL || rconn_connected(g->rc))); /* slots served */
}
