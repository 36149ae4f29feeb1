/*
 * gate_link.c -- seats in Redis and the rpc links to the game servers: connects with
 * jittered backoff, heartbeats, frames in and out (docs/gateway.md "Routing, deadlines,
 * retries").
 */
#include "gate_int.h"

static void gate_link_fail(gate_link_t *l, const char *why);

/* ---- seats in Redis ------------------------------------------------------------------------ */

void gate_redis_ignore_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    (void)arg;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        log_emit(LOG_WARN, "seat_write_failed", "{s:s}", "error",
                 reply != NULL ? reply->str : "no reply");
}

void gate_seat_key(uint64_t player, char *buf, size_t cap)
{
    snprintf(buf, cap, GATE_SEAT_KEY_PREFIX "%" PRIu64, player);
}

void gate_seat_store(gate_t *g, uint64_t player, const gate_seat_t *s)
{
    char key[64], val[GATE_SEAT_RECORD_MAX + 1], ttl[24];
    gate_seat_key(player, key, sizeof key);
    if (gate_seat_format(s, val, sizeof val) < 0) {
        log_emit(LOG_ERROR, "seat_write_failed", "{s:I,s:s}", "player", (json_int_t)player, "error",
                 "seat not representable");
        return;
    }
    snprintf(ttl, sizeof ttl, "%d", g->cfg.seat_ttl_s);
    const char *argv[] = {"SET", key, val, "EX", ttl};
    if (rconn_command_argv(g->rc, gate_redis_ignore_cb, NULL, 5, argv, NULL) != 0)
        log_emit(LOG_WARN, "seat_write_failed", "{s:I,s:s}", "player", (json_int_t)player, "error",
                 "redis not connected");
}

/*
 * Deletes player's record only while it still names the seat s (its server, address and desk):
 * a record written since for another seat (by a move, or by another gateway) is kept.
 */
const char gate_seat_del_lua[] =
    "local v = redis.call('GET', KEYS[1]) "
    "if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";
rconn_script_t *gate_script_seat_del;

void gate_seat_delete_if(gate_t *g, uint64_t player, const gate_seat_t *s)
{
    char key[64], head[GATE_SEAT_RECORD_MAX + 1];
    gate_seat_key(player, key, sizeof key);
    snprintf(head, sizeof head, "%s %s %" PRIu64 " ", s->server_id, s->address, s->desk);
    const char *argv[] = {key, head};
    rconn_eval(g->rc, gate_script_seat_del, gate_redis_ignore_cb, NULL, 1, 2, argv, NULL);
}

/* Sets (or clears, s NULL) the connection's seat. */
void gate_conn_set_seat(gate_conn_t *c, const gate_seat_t *s)
{
    if (s == NULL) {
        free(c->seat);
        c->seat = NULL;
    } else {
        if (c->seat == NULL)
            c->seat = xmalloc(sizeof *c->seat);
        *c->seat = *s;
        c->seat_lost = false;
    }
    c->seat_known = true;
}

/*
 * Remembers that the client's request client_rid, made for seat, was answered DEADLINE_EXCEEDED:
 * its outcome is unknown, and the client may send it again with the same request id
 * (docs/gateway.md), which must then go to that seat and no other (gate_client_dispatch). The
 * last GATE_EXPIRED_KEEP are kept (a client has few requests in flight); an entry stays until a
 * newer one takes its place, so every repeat of the request is answered alike.
 */
void gate_conn_expired_keep(gate_conn_t *c, uint64_t client_rid, const gate_seat_t *seat)
{
    if (c->expired == NULL)
        c->expired = xcalloc(GATE_EXPIRED_KEEP, sizeof *c->expired);
    gate_expired_t *x = NULL;
    for (unsigned i = 0; i < GATE_EXPIRED_KEEP && x == NULL; i++)
        if (c->expired[i].client_rid == client_rid)
            x = &c->expired[i];
    if (x == NULL)
        x = &c->expired[c->expired_next++ % GATE_EXPIRED_KEEP];
    x->client_rid = client_rid;
    x->seat = *seat;
}

/*
 * The seat a request with this client request id was made for, when an attempt of it was
 * answered DEADLINE_EXCEEDED (gate_conn_expired_keep); NULL otherwise. Borrowed: valid until the
 * next gate_conn_expired_keep() or the connection's end.
 */
const gate_seat_t *gate_conn_expired_seat(const gate_conn_t *c, uint64_t client_rid)
{
    if (c->expired == NULL || client_rid == 0)
        return NULL;
    for (unsigned i = 0; i < GATE_EXPIRED_KEEP; i++)
        if (c->expired[i].client_rid == client_rid)
            return &c->expired[i].seat;
    return NULL;
}

/* ---- rpc links ------------------------------------------------------------------------------- */

gate_link_t *gate_link_find(gate_t *g, const char *address)
{
    gate_link_t *l;
    TAILQ_FOREACH(l, &g->links, all)
    if (strcmp(l->address, address) == 0)
        return l;
    return NULL;
}

/* The server id of the process behind a link: its hello's, else the registry's. */
const char *gate_link_id(const gate_link_t *l)
{
    return l->ack_server_id[0] != '\0' ? l->ack_server_id : l->server_id;
}

gate_link_t *gate_link_get(gate_t *g, const char *address, const char *server_id)
{
    gate_link_t *l = gate_link_find(g, address);
    if (l != NULL) {
        if (server_id != NULL && server_id[0] != '\0' && strcmp(l->server_id, server_id) != 0)
            snprintf(l->server_id, sizeof l->server_id, "%s", server_id);
        return l;
    }
    l = xcalloc(1, sizeof *l);
    l->g = g;
    snprintf(l->address, sizeof l->address, "%s", address);
    snprintf(l->server_id, sizeof l->server_id, "%s", server_id != NULL ? server_id : "");
    l->pending = u64map_create();
    TAILQ_INIT(&l->queue);
    l->backoff_ms = 0;
    TAILQ_INSERT_TAIL(&g->links, l, all);
    return l;
}

static bool gate_link_idle(const gate_link_t *l)
{
    return u64map_size(l->pending) == 0 && TAILQ_EMPTY(&l->queue);
}

void gate_link_free(gate_link_t *l)
{
    gate_t *g = l->g;
    TAILQ_REMOVE(&g->links, l, all);
    gate_link_undirty(l);
    if (l->bev != NULL) {
        bufferevent_free(l->bev);
        if (l->state == LINK_READY)
            metrics_add(g->m_links, -1);
    }
    if (l->timer != NULL)
        event_free(l->timer);
    if (l->probe_ev != NULL)
        event_free(l->probe_ev);
    u64map_destroy(l->pending);
    free(l);
}

int gate_link_send_frame(gate_link_t *l, const Croupier__RpcFrame *f)
{
    frame_error_t err;
    int rc = frame_pack_rpc(bufferevent_get_output(l->bev), f, NULL, &err);
    if (rc != 0)
        log_emit(LOG_ERROR, "rpc_encode_failed", "{s:i,s:s}", "errno", -rc, "detail", err.detail);
    else
        gate_link_dirty(l);
    return rc;
}

static uint8_t *gate_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/*
 * Writes an action's RpcFrame around the client's Action bytes, without decoding and
 * re-encoding them: RpcFrame{request_id, deadline_unix_ms, player_id, session_id,
 * client_request_id, action}, the fields and order frame_pack_rpc() writes. The bytes passed
 * the client frame's checks as an Action (the same message type RpcFrame.action holds), and
 * are at most GATE_ACTION_FWD_MAX long, far under the link's frame cap.
 */
/* What is left of a request's budget now, in ms (at least 1: it was not expired when sent). */
static uint32_t gate_req_budget_left(const gate_req_t *r)
{
    int64_t left = r->deadline_mono - gate_now_mono(r->g);
    return left < 1 ? 1 : left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
}

void gate_req_write_action(gate_req_t *r)
{
    gate_link_t *l = r->link;
    struct evbuffer_iovec v;
    size_t cap = FRAME_HEADER_SIZE + 6 * 11 + 3 + r->action_len;
    if (evbuffer_reserve_space(bufferevent_get_output(l->bev), (ev_ssize_t)cap, &v, 1) != 1 ||
        v.iov_len < cap) {
        r->link = NULL;
        gate_req_fail(r, CROUPIER__ERROR_CODE__INTERNAL, "request could not be encoded");
        return;
    }
    uint8_t *h = v.iov_base, *p = h + FRAME_HEADER_SIZE;
    p = gate_put_varint(p, 1 << 3);
    p = gate_put_varint(p, r->rid);
    p = gate_put_varint(p, 3 << 3);
    p = gate_put_varint(p, (uint64_t)r->deadline_wall);
    p = gate_put_varint(p, 8 << 3); /* budget_ms: clock steps change nothing (rpc.proto) */
    p = gate_put_varint(p, gate_req_budget_left(r));
    p = gate_put_varint(p, 4 << 3);
    p = gate_put_varint(p, r->player);
    if (r->session != 0) {
        p = gate_put_varint(p, 5 << 3);
        p = gate_put_varint(p, r->session);
    }
    if (r->client_rid != 0) {
        p = gate_put_varint(p, 6 << 3);
        p = gate_put_varint(p, r->client_rid);
    }
    p = gate_put_varint(p, r->g->fid_action << 3 | 2);
    p = gate_put_varint(p, r->action_len);
    memcpy(p, r->action, r->action_len);
    p += r->action_len;
    frame_put_header(h, (uint32_t)(p - h - FRAME_HEADER_SIZE));
    v.iov_len = (size_t)(p - h);
    evbuffer_commit_space(bufferevent_get_output(l->bev), &v, 1);
    gate_link_dirty(l);
    r->sent = true;
    u64map_put(l->pending, r->rid, (uint64_t)(uintptr_t)r);
}

/* Builds and writes the rpc frame of a request on its (ready) link. */
static void gate_req_write(gate_req_t *r)
{
    gate_link_t *l = r->link;
    if (evbuffer_get_length(bufferevent_get_output(l->bev)) > GATE_LINK_OUTPUT_CAP) {
        /* The game server does not keep up: memory stays bounded, the request waits (within
         * its budget) as if the link were lost before the send. */
        r->link = NULL;
        gate_req_retry(r, CROUPIER__ERROR_CODE__UNAVAILABLE, "rpc link output full");
        return;
    }
    if (r->kind == GATE_REQ_ACTION && r->action_len > 0) {
        gate_req_write_action(r);
        return;
    }
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join join = CROUPIER__JOIN__INIT;
    Croupier__Leave leave = CROUPIER__LEAVE__INIT;
    Croupier__Resume resume = CROUPIER__RESUME__INIT;
    Croupier__Adopt adopt = CROUPIER__ADOPT__INIT;
    Croupier__RoomJoin room = CROUPIER__ROOM_JOIN__INIT;
    Croupier__WatchTable watch = CROUPIER__WATCH_TABLE__INIT;
    f.request_id = r->rid;
    f.has_deadline_unix_ms = true;
    f.deadline_unix_ms = (uint64_t)r->deadline_wall;
    f.has_budget_ms = true;
    f.budget_ms = gate_req_budget_left(r);
    f.has_player_id = true;
    f.player_id = r->player;
    f.has_session_id = r->session != 0;
    f.session_id = r->session;
    f.has_client_request_id = r->client_rid != 0;
    f.client_request_id = r->client_rid;
    switch (r->kind) {
    case GATE_REQ_JOIN:
        if (r->adopt) {
            adopt.offer_id = r->offer;
            adopt.engine = (Croupier__Engine)r->engine;
            adopt.game = r->game;
            adopt.stake = r->stake;
            f.body_case = CROUPIER__RPC_FRAME__BODY_ADOPT;
            f.adopt = &adopt;
            break;
        }
        join.engine = (Croupier__Engine)r->engine;
        join.game = r->game;
        join.stake = r->stake;
        f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
        f.join = &join;
        if (r->room) {
            if (r->room_code[0] != '\0')
                room.code = r->room_code;
            else if (r->msg != NULL && r->msg->create_room != NULL)
                room.create = r->msg->create_room->rules;
            f.room = &room;
        }
        break;
    case GATE_REQ_LEAVE:
        leave.has_disband_room = r->disband;
        leave.disband_room = r->disband;
        f.body_case = CROUPIER__RPC_FRAME__BODY_LEAVE;
        f.leave = &leave;
        break;
    case GATE_REQ_ACTION:
        f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
        f.action = r->msg->action;
        break;
    case GATE_REQ_RESUME:
        f.body_case = CROUPIER__RPC_FRAME__BODY_RESUME;
        f.resume = r->msg != NULL && r->msg->resume != NULL ? r->msg->resume : &resume;
        break;
    case GATE_REQ_WATCH:
        gate_watch_fill(r, &f, &watch); /* gate_watch.c */
        break;
    default:
        return;
    }
    if (gate_link_send_frame(l, &f) != 0) {
        r->link = NULL;
        gate_req_fail(r, CROUPIER__ERROR_CODE__INTERNAL, "request could not be encoded");
        return;
    }
    r->sent = true;
    u64map_put(l->pending, r->rid, (uint64_t)(uintptr_t)r);
}

static void gate_link_arm(gate_link_t *l, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(l->timer, &tv);
}

/* Removes a request from wherever it waits on its link. */
void gate_req_unlink(gate_req_t *r)
{
    gate_link_t *l = r->link;
    if (l == NULL)
        return;
    if (r->sent)
        u64map_del(l->pending, r->rid);
    else
        TAILQ_REMOVE(&l->queue, r, q);
    r->link = NULL;
    r->sent = false;
}

static void gate_req_detach_cb(uint64_t key, uint64_t val, void *arg)
{
    (void)key;
    gate_req_t **list = arg;
    gate_req_t *r = (gate_req_t *)(uintptr_t)val;
    r->q.tqe_next = *list; /* reuse the queue entry as a singly linked list */
    *list = r;
}

/*
 * The link failed (error, EOF, missed heartbeats, protocol error): every request queued or in
 * flight on it is retried within its budget (with the same request id: the game server answers a
 * repeated request from memory), and the link reconnects after a jittered, doubling backoff.
 */
static void gate_link_fail(gate_link_t *l, const char *why)
{
    gate_t *g = l->g;
    if (l->state == LINK_DOWN)
        return;
    log_emit(LOG_WARN, "rpc_link_down", "{s:s,s:s,s:s}", "address", l->address, "server",
             l->server_id, "why", why);
    if (l->state == LINK_READY)
        metrics_add(g->m_links, -1);
    l->state = LINK_DOWN;
    l->gen++;
    gate_link_undirty(l);
    if (l->bev != NULL) {
        bufferevent_free(l->bev);
        l->bev = NULL;
    }
    evtimer_del(l->timer);
    l->backoff_ms = l->backoff_ms == 0 ? 50 : (l->backoff_ms * 2 > 2000 ? 2000 : l->backoff_ms * 2);
    int delay = l->backoff_ms / 2 + (int)arc4random_uniform((uint32_t)(l->backoff_ms / 2) + 1);
    l->down_until_ms = clock_mono_ms() + delay;
    if (l->down_since_ms == 0)
        l->down_since_ms = clock_mono_ms();
    gate_link_arm(l, delay);
    /* Lost alone proves nothing (a blip, a listener restarting): the registry says whether the
     * process is gone. Read its entry directly (its expiry is the earliest proof), and judge
     * the seats there again with what is known now. */
    if (!l->gone_reported) {
        if (l->probe_token == 0 && (l->probe_ev == NULL || !evtimer_pending(l->probe_ev, NULL)))
            gate_probe_send(l);
        gate_check_queue(g, gate_link_id(l));
    }
    gate_req_t *list = NULL;
    u64map_each(l->pending, gate_req_detach_cb, &list);
    gate_req_t *r;
    while ((r = TAILQ_FIRST(&l->queue)) != NULL) {
        TAILQ_REMOVE(&l->queue, r, q);
        r->q.tqe_next = list;
        list = r;
    }
    while (list != NULL) {
        r = list;
        list = r->q.tqe_next;
        if (r->sent)
            u64map_del(l->pending, r->rid);
        r->link = NULL;
        r->sent = false;
        gate_req_retry(r, CROUPIER__ERROR_CODE__UNAVAILABLE, "rpc link lost");
    }
}

void gate_link_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_link_t *l = arg;
    gate_t *g = l->g;
    if (l->state == LINK_DOWN) {
        /* Reconnect if anyone waits or the registry lists a server here that is not known to be
         * gone (a probe may know before the view does: then wait, so the facts are kept). */
        bool listed = false, live = false;
        for (size_t i = 0; i < registry_view_size(g->view); i++) {
            const registry_entry_t *e = registry_view_at(g->view, i);
            if (strcmp(e->address, l->address) == 0) {
                listed = true;
                live = live || !gate_entry_gone(g, e);
            }
        }
        if (!gate_link_idle(l) || live) {
            gate_link_connect(l);
        } else if (listed) {
            gate_link_arm(l, 1000);
        } else {
            log_emit(LOG_INFO, "rpc_link_dropped", "{s:s,s:s}", "address", l->address, "server",
                     gate_link_id(l));
            gate_link_free(l);
        }
        return;
    }
    if (l->state != LINK_READY) {
        gate_link_fail(l, "hello timeout");
        return;
    }
    int64_t now = gate_now_mono(g);
    if (now - l->last_pong_ms > 3 * g->cfg.link_ping_ms) {
        gate_link_fail(l, "heartbeat missed");
        return;
    }
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__RpcPing ping = CROUPIER__RPC_PING__INIT;
    f.request_id = gate_next_rid(g);
    ping.nonce = ++l->nonce;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PING;
    f.ping = &ping;
    gate_link_send_frame(l, &f);
    gate_link_arm(l, g->cfg.link_ping_ms);
}

/*
 * The link is ready: its hello names the process behind it. The same server id under the epoch
 * the link knew is the same process (a fencing epoch belongs to one holder), which keeps the
 * lowest epoch it served under; anything else is a new process, and the seats of the one that
 * was there before are judged again (gate_seat.h).
 */
static void gate_link_on_ready(gate_link_t *l, const Croupier__LinkHelloAck *ack)
{
    gate_t *g = l->g;
    l->state = LINK_READY;
    l->backoff_ms = 0;
    l->last_pong_ms = clock_mono_ms();
    metrics_add(g->m_links, 1);
    int64_t epoch = ack->has_lease_epoch ? (int64_t)ack->lease_epoch : 0;
    char prev[sizeof l->ack_server_id];
    snprintf(prev, sizeof prev, "%s", l->ack_server_id);
    bool same = prev[0] != '\0' && strcmp(prev, ack->server_id) == 0 && epoch > 0 &&
                epoch == l->known_epoch;
    if (!same) {
        snprintf(l->ack_server_id, sizeof l->ack_server_id, "%s", ack->server_id);
        l->floor_epoch = epoch;
        l->known_epoch = epoch;
    }
    l->down_since_ms = 0;
    l->gone_reported = false;
    l->probed = false;
    l->probe_token = 0; /* a read still in flight is ignored */
    if (l->probe_ev != NULL)
        evtimer_del(l->probe_ev);
    log_emit(LOG_INFO, "rpc_link_ready", "{s:s,s:s,s:I,s:b,s:b}", "address", l->address, "server",
             ack->server_id, "epoch", (json_int_t)epoch, "same_process", same, "draining",
             ack->has_draining && ack->draining);
    if (prev[0] != '\0' && !same)
        gate_check_queue(g, prev);
    gate_link_arm(l, g->cfg.link_ping_ms);
    gate_req_t *r;
    while ((r = TAILQ_FIRST(&l->queue)) != NULL) {
        TAILQ_REMOVE(&l->queue, r, q);
        gate_req_write(r);
    }
}

/*
 * Finds the bytes of the ServerMessage that f (decoded from payload) carries for a client, a
 * reply's payload or a push, and copies them to buf. Leaves fwd->p NULL when there are none
 * or they cannot be forwarded as they are.
 */
static void gate_fwd_find(const gate_t *g, const Croupier__RpcFrame *f, const uint8_t *payload,
                          size_t len, uint8_t *buf, gate_fwd_t *fwd)
{
    const uint8_t *p = NULL;
    size_t n = 0;
    fwd->p = NULL;
    if (!g->forward)
        return;
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_REPLY) {
        const uint8_t *rep;
        size_t rep_len;
        if (f->reply->payload == NULL ||
            frame_wire_field(payload, len, g->fid_reply, &rep, &rep_len) != 0 ||
            frame_wire_field(rep, rep_len, g->fid_payload, &p, &n) != 0)
            return;
    } else if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH) {
        if (frame_wire_field(payload, len, g->fid_push, &p, &n) != 0)
            return;
    } else {
        return;
    }
    if (n > GATE_FWD_MAX)
        return;
    memcpy(buf, p, n);
    fwd->p = buf;
    fwd->len = n;
}

/*
 * Queues the serialized ServerMessage msg (from a frame frame_scan_rpc() vouched for) to a
 * client as it is, with request_id = rid written in front when field is not 0 (msg does not
 * set request_id itself). The caller checked that the frame fits the client's cap.
 */
static void gate_conn_put(gate_conn_t *c, uint32_t field, uint64_t rid, const uint8_t *msg,
                          size_t len)
{
    if (gate_conn_room(c) != 0)
        return;
    int rc = gate_conn_stage(c, field, rid, msg, len);
    if (rc == -EAGAIN)
        rc = frame_write_prefixed(gate_conn_out(c), field, rid, msg, len, &c->g->lim);
    if (rc != 0) {
        log_emit(LOG_ERROR, "client_forward_failed", "{s:i}", "errno", -rc);
        return;
    }
    gate_conn_count_out(c);
    gate_conn_dirty(c);
}

/*
 * The relay's fast path: a reply to an action (code OK, a payload without request_id) or a
 * push, read with frame_scan_rpc() instead of being decoded, and its ServerMessage bytes
 * queued to the client as they are. Does what gate_on_reply() and gate_on_push() do for those
 * frames. Returns false, having changed nothing, for every frame it does not handle (other
 * bodies, error codes, a reply to a join, resume, leave or move, which read the payload,
 * unusual encodings, invalid frames): the caller decodes those.
 */
static bool gate_link_fast(gate_link_t *l, const uint8_t *payload, size_t len)
{
    gate_t *g = l->g;
    frame_rpc_scan_t s;
    if (frame_scan_rpc_cached(payload, len, NULL, &g->push_cache, &s) != 0)
        return false;
    if (s.body == CROUPIER__RPC_FRAME__BODY_PUSH) {
        /* A TableClosing may concern the seat (a tournament table's: gate_on_push). */
        if (s.msg_len > g->lim.max_frame ||
            s.msg_body == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING)
            return false;
        uint64_t cid, player = s.player_id;
        size_t pos = 0;
        gate_conn_t *c;
        do {
            if (u64map_get(g->conn_by_player, player, &cid) && (c = gate_conn_get(g, cid)) != NULL)
                gate_conn_put(c, 0, 0, s.msg, s.msg_len);
        } while (frame_push_to_next(&s, &pos, &player)); /* the others it names (push_to) */
        return true;
    }
    uint64_t p;
    if (!u64map_get(l->pending, s.request_id, &p))
        return true; /* late (the request expired) or unknown: dropped, as gate_on_reply does */
    gate_req_t *r = (gate_req_t *)(uintptr_t)p;
    if (r->kind != GATE_REQ_ACTION || r->reseat || r->internal || s.msg_request_id ||
        s.msg_len + 11 > g->lim.max_frame)
        return false;
    u64map_del(l->pending, r->rid);
    r->link = NULL;
    r->sent = false;
    evtimer_del(r->timer);
    gate_conn_t *c = gate_req_conn(r);
    if (c != NULL)
        gate_conn_put(c, g->fid_request_id, r->client_rid, s.msg, s.msg_len);
    gate_req_free(r);
    return true;
}

/* What libevent 2.1 reads from a socket per read callback at most (its EVBUFFER_MAX_READ). */
#define GATE_LIBEVENT_READ_MAX 4096
/* A link's input after gate_link_read_more, at most (beside a partial frame). */
#define GATE_LINK_READ_MAX (64u << 10)

/*
 * libevent 2.1 reads at most 4 KiB per read callback (one ioctl and one readv): a game server's
 * burst (a table's Play pushed to each of its players, the answers to many actions) would take
 * a loop turn per 4 KiB, each with its own write to every client it concerns. When that read
 * filled its 4 KiB, the rest waiting in the socket, up to GATE_LINK_READ_MAX in all, is read
 * here with one readv, so that the frames of one turn are relayed, and each client written,
 * together. EOF and errors are left to the bufferevent's next read (the socket stays readable).
 * The input holds at most a partial frame and GATE_LINK_READ_MAX bytes, as the read callback
 * consumes every complete frame: the link needs no read watermark (gate_link_connect).
 */
static void gate_link_read_more(gate_link_t *l, struct evbuffer *in)
{
    size_t have = evbuffer_get_length(in);
    if (have < GATE_LIBEVENT_READ_MAX || have >= GATE_LINK_READ_MAX)
        return;
    struct evbuffer_iovec iv[2];
    /* The input's end is frozen while the bufferevent owns it: thawed for this one read. */
    evbuffer_unfreeze(in, 0);
    int n = evbuffer_reserve_space(in, (ev_ssize_t)(GATE_LINK_READ_MAX - have), iv, 2);
    if (n > 0) {
        ssize_t got = readv(bufferevent_getfd(l->bev), (struct iovec *)iv, n);
        size_t left = got > 0 ? (size_t)got : 0;
        int used = 0;
        for (; used < n && left > 0; used++) {
            if (iv[used].iov_len > left)
                iv[used].iov_len = left;
            left -= iv[used].iov_len;
        }
        evbuffer_commit_space(in, iv, used);
    }
    evbuffer_freeze(in, 0);
}

/* What gate_link_fast_run() stopped at. */
typedef enum {
    GATE_RUN_MORE, /* the next frame is not whole in the input's first chain (or there is none) */
    GATE_RUN_SLOW, /* the next frame is whole there and the fast path does not take it */
    GATE_RUN_GONE, /* the link failed on the way: its input is freed */
} gate_run_t;

/*
 * The fast path over the frames where they lie: every whole frame at the front of the input's
 * first chain (where libevent read it) is relayed by gate_link_fast() in place, and all of them
 * are drained at once, instead of a length copy, a pullup and a drain per frame. The bytes stay
 * put meanwhile: nothing reads from the link's socket or drains its input during the callbacks.
 * A frame over the cap stops the run (GATE_RUN_MORE): the caller refuses it.
 */
static gate_run_t gate_link_fast_run(gate_link_t *l, struct evbuffer *in, unsigned gen)
{
    struct evbuffer_iovec iv;
    if (evbuffer_peek(in, -1, NULL, &iv, 1) < 1)
        return GATE_RUN_MORE;
    const uint8_t *p = iv.iov_base;
    size_t n = iv.iov_len, off = 0;
    gate_run_t why = GATE_RUN_MORE;
    while (n - off >= FRAME_HEADER_SIZE) {
        const uint8_t *h = p + off;
        size_t len = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
        if (len > FRAME_DEFAULT_MAX || n - off - FRAME_HEADER_SIZE < len)
            break;
        bool done = gate_link_fast(l, h + FRAME_HEADER_SIZE, len);
        if (l->gen != gen)
            return GATE_RUN_GONE;
        if (!done) {
            why = GATE_RUN_SLOW;
            break;
        }
        off += FRAME_HEADER_SIZE + len;
    }
    if (off > 0)
        evbuffer_drain(in, off);
    return why;
}

static void gate_link_read_cb(struct bufferevent *bev, void *arg)
{
    gate_link_t *l = arg;
    unsigned gen = l->gen;
    struct evbuffer *in = bufferevent_get_input(bev);
    uint8_t fwd_buf[GATE_FWD_MAX];
    if (l->state == LINK_READY)
        gate_link_read_more(l, in);
    while (l->gen == gen && l->state != LINK_DOWN) {
        bool fast = l->state == LINK_READY && l->g->forward;
        if (fast) {
            gate_run_t run = gate_link_fast_run(l, in, gen);
            if (run == GATE_RUN_GONE)
                return;
            fast = run == GATE_RUN_MORE; /* a frame split between chains: tried below */
        }
        /* frame_read_rpc() in two steps: the frame's bytes stay readable until the client's
         * part of it is copied out for forwarding. */
        const uint8_t *payload;
        size_t len;
        frame_result_t r = frame_peek(in, NULL, &payload, &len, NULL);
        if (r == FRAME_NEED_MORE)
            return;
        if (r == FRAME_TOO_LARGE) {
            gate_link_fail(l, "frame too large");
            return;
        }
        if (fast) {
            bool done = gate_link_fast(l, payload, len);
            if (l->gen != gen)
                return;
            if (done) {
                frame_consume(in, len);
                continue;
            }
        }
        frame_error_t err;
        Croupier__RpcFrame *f = frame_unpack_rpc(payload, len, NULL, &err);
        gate_fwd_t fwd = {NULL, 0};
        if (f != NULL)
            gate_fwd_find(l->g, f, payload, len, fwd_buf, &fwd);
        frame_consume(in, len);
        if (f == NULL) {
            log_emit(LOG_WARN, "rpc_frame_malformed", "{s:s,s:s}", "address", l->address, "detail",
                     err.detail);
            continue;
        }
        if (l->state == LINK_HELLO) {
            if (f->body_case != CROUPIER__RPC_FRAME__BODY_HELLO_ACK) {
                frame_free_rpc(f);
                gate_link_fail(l, "no hello ack");
                return;
            }
            gate_link_on_ready(l, f->hello_ack);
            frame_free_rpc(f);
            continue;
        }
        switch (f->body_case) {
        case CROUPIER__RPC_FRAME__BODY_REPLY:
            gate_on_reply(l, f, &fwd);
            break;
        case CROUPIER__RPC_FRAME__BODY_PUSH:
        case CROUPIER__RPC_FRAME__BODY_MOVED:
            gate_on_push(l, f, &fwd);
            break;
        case CROUPIER__RPC_FRAME__BODY_DESK_CLOSING:
            gate_on_desk_closing(l, f);
            break;
        case CROUPIER__RPC_FRAME__BODY_WATCH_PUSH:
            gate_watch_push(l, f); /* gate_watch.c */
            break;
        case CROUPIER__RPC_FRAME__BODY_PONG:
            l->last_pong_ms = clock_mono_ms();
            break;
        case CROUPIER__RPC_FRAME__BODY_PING: {
            Croupier__RpcFrame p = CROUPIER__RPC_FRAME__INIT;
            Croupier__RpcPong pong = CROUPIER__RPC_PONG__INIT;
            p.request_id = f->request_id;
            pong.nonce = f->ping->nonce;
            p.body_case = CROUPIER__RPC_FRAME__BODY_PONG;
            p.pong = &pong;
            gate_link_send_frame(l, &p);
            break;
        }
        default:
            break;
        }
        frame_free_rpc(f);
    }
}

static void gate_link_event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    gate_link_t *l = arg;
    if (what & BEV_EVENT_CONNECTED) {
        int one = 1;
        setsockopt(bufferevent_getfd(l->bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        l->state = LINK_HELLO;
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        Croupier__LinkHello h = CROUPIER__LINK_HELLO__INIT;
        f.request_id = gate_next_rid(l->g);
        h.version = 1;
        h.gate_id = l->g->gate_id;
        h.has_max_frame = true;
        h.max_frame = FRAME_DEFAULT_MAX;
        h.has_push_to = true; /* one push, many players (gate_link_fast, gate_on_push) */
        h.push_to = true;
        f.body_case = CROUPIER__RPC_FRAME__BODY_HELLO;
        f.hello = &h;
        gate_link_send_frame(l, &f);
        return;
    }
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        gate_link_fail(l, (what & BEV_EVENT_EOF) ? "closed by peer" : "socket error");
}

/* Opens the TCP connection of a link (state DOWN -> CONNECTING); the hello follows. */
void gate_link_connect(gate_link_t *l)
{
    gate_t *g = l->g;
    config_addr_t a;
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    if (config_parse_addr(l->address, &a) != 0) {
        l->state = LINK_CONNECTING; /* so that fail runs its course */
        gate_link_fail(l, "bad address");
        return;
    }
    if (strchr(a.host, ':') != NULL) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)a.port);
        inet_pton(AF_INET6, a.host, &s6->sin6_addr);
        len = sizeof *s6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)a.port);
        inet_pton(AF_INET, a.host, &s4->sin_addr);
        len = sizeof *s4;
    }
    l->bev = bufferevent_socket_new(g->base, -1, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(l->bev, gate_link_read_cb, NULL, gate_link_event_cb, l);
    /* No read watermark: the input is bounded by gate_link_read_more and the read callback, and
     * a watermark costs a callback (and an event_add) for every frame consumed. */
    bufferevent_enable(l->bev, EV_READ | EV_WRITE);
    l->state = LINK_CONNECTING;
    if (bufferevent_socket_connect(l->bev, (struct sockaddr *)&ss, (int)len) != 0) {
        gate_link_fail(l, "connect failed");
        return;
    }
    gate_link_arm(l, 2000); /* connect + hello bound */
}

/* Hands a request to the link of its target: written now if ready, else queued. */
void gate_link_submit(gate_t *g, gate_req_t *r)
{
    gate_link_t *l = gate_link_get(g, r->target.address, r->target.server_id);
    if (l->timer == NULL)
        l->timer = evtimer_new(g->base, gate_link_timer_cb, l);
    r->link = l;
    r->sent = false;
    if (l->state == LINK_READY) {
        gate_req_write(r);
        return;
    }
    TAILQ_INSERT_TAIL(&l->queue, r, q);
    if (l->state == LINK_DOWN && clock_mono_ms() >= l->down_until_ms)
        gate_link_connect(l);
}
