/*
 * gs.c -- the game-server core: gateway links, request routing, deadlines, idempotent replies,
 * the live-desk index (pushes and seats: gs_push.c). See gs.h for the contract.
 */
#include "gs.h"
#include "deck.h"
#include "gs_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "clock.h"
#include "log.h"
#include "money_writer.h"
#include "u64map.h"
#include "xmalloc.h"

static void gs_link_free(gs_link_t *l);
static void gs_link_close(gs_link_t *l);

/* ---- small helpers ----------------------------------------------------------------------- */

static uint64_t gs_pair_key(uint64_t a, uint64_t b)
{
    uint64_t k = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL + (a << 6) + (a >> 2));
    return k ? k : 1;
}

/* Encodes an RpcFrame into a fresh malloc'd buffer (header included). Returns NULL and logs if
 * the frame breaks a protocol rule: that is a bug on this side, never silently sent. Frames
 * that fit GS_ENCODE_SMALL bytes (replies, most pushes) are checked and sized once, encoded on
 * the stack and copied; larger ones are sized again once the checks passed. */
#define GS_ENCODE_SMALL 1024
uint8_t *gs_encode(const Croupier__RpcFrame *f, size_t *len)
{
    uint8_t small[GS_ENCODE_SMALL];
    frame_error_t err;
    uint8_t *buf = NULL;
    ssize_t n = frame_encode(&f->base, NULL, small, sizeof small, &err);
    if (n >= 0) {
        buf = xmalloc((size_t)n);
        memcpy(buf, small, (size_t)n);
    } else if (n == -ENOBUFS) {
        size_t need = protobuf_c_message_get_packed_size(&f->base) + FRAME_HEADER_SIZE;
        buf = xmalloc(need);
        n = frame_encode(&f->base, NULL, buf, need, &err);
    }
    if (n < 0) {
        log_emit(LOG_ERROR, "rpc_encode_failed", "{s:i,s:s}", "errno", (int)-n, "detail",
                 err.detail);
        free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

void gs_out_enqueue(gs_t *gs, gs_out_t *o)
{
    o->next = NULL;
    pthread_mutex_lock(&gs->out_mu);
    bool was_empty = gs->out_head == NULL;
    *gs->out_tail = o;
    gs->out_tail = &o->next;
    pthread_mutex_unlock(&gs->out_mu);
    if (was_empty)
        event_active(gs->out_ev, EV_READ, 0);
}

/* Writes a frame to a link, dropping the link if its peer does not keep up. Main thread. */
void gs_link_send(gs_link_t *l, const uint8_t *bytes, size_t len)
{
    struct evbuffer *out = bufferevent_get_output(l->bev);
    if (evbuffer_get_length(out) + len > l->gs->link_output_cap) {
        log_emit(LOG_WARN, "rpc_link_slow", "{s:I,s:s,s:I}", "link", (json_int_t)l->id, "peer",
                 l->peer, "queued", (json_int_t)evbuffer_get_length(out));
        metrics_add(l->gs->m_slow, 1);
        gs_link_close(l);
        return;
    }
    evbuffer_add(out, bytes, len);
}

gs_link_t *gs_link_get(gs_t *gs, uint64_t id)
{
    uint64_t p;
    if (!u64map_get(gs->links, id, &p))
        return NULL;
    gs_link_t *l = (gs_link_t *)(uintptr_t)p;
    return l->dead ? NULL : l;
}

static void gs_send_frame(gs_link_t *l, const Croupier__RpcFrame *f)
{
    size_t len;
    uint8_t *b = gs_encode(f, &len);
    if (b != NULL) {
        gs_link_send(l, b, len);
        free(b);
    }
}

/* ---- requests ---------------------------------------------------------------------------- */

void gs_request_free(gs_request_t *req)
{
    if (req == NULL)
        return;
    frame_free_rpc(req->frame);
    free(req);
}

static void gs_reply_full(gs_t *gs, gs_request_t *req, Croupier__ErrorCode code,
                          const char *message, const Croupier__ServerMessage *payload,
                          const char *adopted_by)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Reply r = CROUPIER__REPLY__INIT;
    Croupier__Error e = CROUPIER__ERROR__INIT;
    f.request_id = req->request_id;
    f.has_player_id = req->player_id != 0;
    f.player_id = req->player_id;
    f.has_session_id = req->session_id != 0;
    f.session_id = req->session_id;
    f.has_trace_id = req->trace_id != 0;
    f.trace_id = req->trace_id;
    f.body_case = CROUPIER__RPC_FRAME__BODY_REPLY;
    f.reply = &r;
    r.code = code;
    r.adopted_by = (char *)adopted_by;
    if (code == CROUPIER__ERROR_CODE__OK) {
        r.payload = (Croupier__ServerMessage *)payload;
    } else {
        e.code = code;
        e.message = (char *)(message != NULL ? message : frame_error_code_name(code));
        e.has_retriable = true;
        e.retriable = code == CROUPIER__ERROR_CODE__DRAINING ||
                      code == CROUPIER__ERROR_CODE__UNAVAILABLE ||
                      code == CROUPIER__ERROR_CODE__OVERLOADED;
        r.error = &e;
    }
    gs_out_t *o = xcalloc(1, sizeof *o);
    o->kind = GS_OUT_REPLY;
    o->link_id = req->link_id;
    o->player_id = req->player_id;
    o->request_id = req->request_id;
    o->dedupe_id = req->_dedupe;
    o->bytes = gs_encode(&f, &o->len);
    gs_request_free(req);
    if (o->bytes == NULL) {
        free(o);
        return;
    }
    gs_out_enqueue(gs, o);
}

void gs_reply(gs_t *gs, gs_request_t *req, Croupier__ErrorCode code, const char *message,
              const Croupier__ServerMessage *payload)
{
    gs_reply_full(gs, req, code, message, payload, NULL);
}

void gs_reply_adopted_by(gs_t *gs, gs_request_t *req, const char *server_id)
{
    gs_reply_full(gs, req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                  "the table was adopted by another server", NULL, server_id);
}

/*
 * A request the runtime could not deliver (dead desk, runtime stopping) is still answered:
 * UNAVAILABLE is retriable, so the gateway tries again within its budget (another desk or
 * server). Player-gone notices need no answer.
 */
static void gs_request_dropped_cb(void *p)
{
    gs_request_t *req = p;
    if (req->kind == GS_REQ_PLAYER_GONE || req->_gs == NULL ||
        (req->kind == GS_REQ_WATCH && req->request_id == 0)) { /* no answer expected */
        gs_request_free(req);
        return;
    }
    gs_reply(req->_gs, req,
             req->kind == GS_REQ_WATCH ? CROUPIER__ERROR_CODE__NO_SUCH_TABLE
                                       : CROUPIER__ERROR_CODE__UNAVAILABLE,
             req->kind == GS_REQ_WATCH ? "no such table at this server" : "desk unavailable", NULL);
}

void gs_request_post(gs_t *gs, rt_desk_id_t to, gs_request_t *req)
{
    req->_gs = gs;
    rt_msg_t m = {.type = GS_MSG_REQUEST, .ptr = req, .free_fn = gs_request_dropped_cb};
    rt_post(gs->rt, to, &m); /* consumes req: delivered, or answered by the drop callback */
}

/* ---- desks ------------------------------------------------------------------------------- */

/* The desk stops as its server fenced itself (gs_set_fenced). Idempotent: an action can bring
 * it before the desk's own GS_MSG_FENCE comes. */
static void gs_desk_fence(rt_desk_t *desk, gs_desk_t *d)
{
    if (d->ops->on_fence != NULL)
        d->ops->on_fence(desk, d->state);
    else if (rt_desk_in_round(desk) && d->ops->on_void != NULL)
        d->ops->on_void(desk, d->state);
}

static void gs_desk_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    gs_desk_t *d = state;
    switch (msg->type) {
    case GS_MSG_REQUEST: {
        gs_request_t *req = msg->ptr;
        msg->ptr = NULL;
        msg->free_fn = NULL;
        if (req->deadline_ms != 0 && clock_mono_ms() > req->deadline_ms &&
            req->kind != GS_REQ_PLAYER_GONE) {
            metrics_add(d->gs->m_deadline, 1);
            gs_reply(d->gs, req, CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED,
                     "deadline passed before the desk took the request", NULL);
            return;
        }
        if (req->kind == GS_REQ_ACTION && atomic_load(&d->gs->fenced)) {
            /* The table stops first, so its TableClosing{CLOSING_STORE_UNREACHABLE} goes out
             * before this answer and the player reads the refusal as the closing table's: his
             * gateway is moving him (docs/queues.md "A server cut off from Redis"). Not
             * TABLE_CLOSED, which tells a client its seat is gone and to join again. */
            gs_desk_fence(desk, d);
            gs_reply(d->gs, req, CROUPIER__ERROR_CODE__NO_ROUND,
                     "this table stopped: its server lost its connection to Redis (you are "
                     "being moved to another server)",
                     NULL);
            return;
        }
        d->ops->on_request(desk, d->state, req);
        return;
    }
    case GS_MSG_FENCE:
        gs_desk_fence(desk, d);
        return;
    case GS_MSG_VOID:
        if (rt_desk_in_round(desk) && d->ops->on_void != NULL)
            d->ops->on_void(desk, d->state);
        return;
    case RT_MSG_TIMER:
        if (d->ops->on_timer != NULL)
            d->ops->on_timer(desk, d->state, msg->arg);
        return;
    case RT_MSG_INTAKE_STOPPED:
        if (d->ops->on_intake_stopped != NULL)
            d->ops->on_intake_stopped(desk, d->state);
        return;
    default:
        if (d->ops->on_message != NULL)
            d->ops->on_message(desk, d->state, msg);
    }
}

static void gs_desk_on_destroy(rt_desk_t *desk, void *state)
{
    gs_desk_t *d = state;
    gs_t *gs = d->gs;
    if (d->ops->on_destroy != NULL)
        d->ops->on_destroy(desk, d->state);
    pthread_mutex_lock(&gs->desks_mu);
    u64map_del(gs->desks, rt_desk_id(desk));
    pthread_mutex_unlock(&gs->desks_mu);
    free(d);
}

static const rt_desk_ops_t gs_desk_rt_ops = {
    .on_message = gs_desk_on_message,
    .on_destroy = gs_desk_on_destroy,
};

int gs_desk_create(gs_t *gs, const gs_desk_ops_t *ops, void *state, int worker, rt_desk_id_t *out)
{
    gs_desk_t *d = xcalloc(1, sizeof *d);
    d->gs = gs;
    d->ops = ops;
    d->state = state;
    /* The index lock is held across the create so a desk that dies at once (destroy on its
     * own thread) cannot remove its id before it was added. */
    pthread_mutex_lock(&gs->desks_mu);
    int rc = rt_desk_create(gs->rt, &gs_desk_rt_ops, d, worker, out);
    if (rc == 0)
        u64map_put(gs->desks, *out, 1);
    pthread_mutex_unlock(&gs->desks_mu);
    if (rc != 0)
        free(d);
    return rc;
}

gs_t *gs_of_desk(rt_desk_t *desk)
{
    return ((gs_desk_t *)rt_desk_state(desk))->gs;
}

static void gs_void_one(uint64_t id, uint64_t val, void *arg)
{
    (void)val;
    gs_t *gs = arg;
    rt_msg_t m = {.type = GS_MSG_VOID};
    rt_post(gs->rt, id, &m);
}

void gs_void_all(gs_t *gs)
{
    pthread_mutex_lock(&gs->desks_mu);
    u64map_each(gs->desks, gs_void_one, gs);
    pthread_mutex_unlock(&gs->desks_mu);
}

static void gs_fence_one(uint64_t id, uint64_t val, void *arg)
{
    (void)val;
    gs_t *gs = arg;
    rt_msg_t m = {.type = GS_MSG_FENCE};
    rt_post(gs->rt, id, &m);
}

void gs_set_fenced(gs_t *gs, bool fenced)
{
    if (atomic_exchange(&gs->fenced, fenced) == fenced || !fenced)
        return;
    pthread_mutex_lock(&gs->desks_mu);
    u64map_each(gs->desks, gs_fence_one, gs);
    pthread_mutex_unlock(&gs->desks_mu);
}

bool gs_fenced(const gs_t *gs)
{
    return atomic_load(&gs->fenced);
}

/* ---- the main-thread side of the outbox -------------------------------------------------- */

static gs_cached_t *gs_cache_find(gs_t *gs, uint64_t player, uint64_t rid)
{
    uint64_t idx;
    if (!u64map_get(gs->cache_index, gs_pair_key(player, rid), &idx))
        return NULL;
    gs_cached_t *c = &gs->cache[idx];
    return (c->player_id == player && c->request_id == rid) ? c : NULL;
}

static gs_cached_t *gs_cache_insert(gs_t *gs, uint64_t player, uint64_t rid)
{
    gs_cached_t *c = &gs->cache[gs->cache_next];
    if (c->key != 0) {
        uint64_t idx;
        if (u64map_get(gs->cache_index, c->key, &idx) && idx == gs->cache_next)
            u64map_del(gs->cache_index, c->key);
        free(c->reply);
    }
    memset(c, 0, sizeof *c);
    c->player_id = player;
    c->request_id = rid;
    c->key = gs_pair_key(player, rid);
    c->in_flight = true;
    u64map_put(gs->cache_index, c->key, gs->cache_next);
    gs->cache_next = (gs->cache_next + 1) % gs->cache_cap;
    return c;
}

/*
 * Sends a remembered answer for a retry. The retry may come through another link (the player
 * moved to another gateway), where the rpc request id differs: the answer is then re-addressed
 * to the retry's id, so the gateway can match it.
 */
static void gs_send_cached(gs_link_t *l, const gs_cached_t *c, uint64_t rid)
{
    Croupier__RpcFrame *f = frame_unpack_rpc(c->reply + FRAME_HEADER_SIZE,
                                             c->reply_len - FRAME_HEADER_SIZE, NULL, NULL);
    if (f == NULL)
        return;
    if (f->request_id == rid) {
        frame_free_rpc(f);
        gs_link_send(l, c->reply, c->reply_len);
        return;
    }
    f->request_id = rid;
    gs_send_frame(l, f);
    frame_free_rpc(f);
}

static void gs_out_apply(gs_t *gs, gs_out_t *o)
{
    switch (o->kind) {
    case GS_OUT_REPLY: {
        gs_cached_t *c = gs_cache_find(gs, o->player_id, o->dedupe_id);
        uint64_t link_id = o->link_id;
        if (c != NULL && c->in_flight) {
            c->in_flight = false;
            c->reply = o->bytes;
            c->reply_len = o->len;
            o->bytes = NULL;
            gs_link_t *l = gs_link_get(gs, link_id);
            if (l != NULL)
                gs_link_send(l, c->reply, c->reply_len);
            for (int i = 0; i < c->nwait; i++)
                if ((l = gs_link_get(gs, c->wait_link[i])) != NULL)
                    gs_send_cached(l, c, c->wait_rid[i]);
            c->nwait = 0;
            break;
        }
        gs_link_t *l = gs_link_get(gs, link_id);
        if (l != NULL)
            gs_link_send(l, o->bytes, o->len);
        break;
    }
    case GS_OUT_PUSH:
    case GS_OUT_NOTICE: {
        uint64_t link_id;
        if (u64map_get(gs->player_link, o->player_id, &link_id)) {
            gs_link_t *l = gs_link_get(gs, link_id);
            if (l != NULL)
                gs_link_send(l, o->bytes, o->len);
        }
        break;
    }
    case GS_OUT_PUSH_MANY:
        gs_push_many_apply(gs, o);
        break;
    case GS_OUT_SEAT:
        if (o->desk_id != 0)
            u64map_put(gs->player_desk, o->player_id, o->desk_id);
        else
            u64map_del(gs->player_desk, o->player_id);
        break;
    case GS_OUT_WATCH:
    case GS_OUT_WATCH_LINK:
        gs_spect_apply(gs, o);
        break;
    case GS_OUT_UNSEAT: {
        uint64_t at;
        if (u64map_get(gs->player_desk, o->player_id, &at) && at == o->desk_id)
            u64map_del(gs->player_desk, o->player_id);
        break;
    }
    }
}

static void gs_out_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gs_t *gs = arg;
    pthread_mutex_lock(&gs->out_mu);
    gs_out_t *o = gs->out_head;
    gs->out_head = NULL;
    gs->out_tail = &gs->out_head;
    pthread_mutex_unlock(&gs->out_mu);
    while (o != NULL) {
        gs_out_t *next = o->next;
        gs_out_apply(gs, o);
        free(o->bytes);
        free(o->players);
        free(o);
        o = next;
    }
}

/* ---- link input ---------------------------------------------------------------------------- */

void gs_link_reply_now(gs_link_t *l, const Croupier__RpcFrame *in, Croupier__ErrorCode code,
                       const char *message)
{
    gs_request_t *req = xcalloc(1, sizeof *req);
    req->link_id = l->id;
    req->request_id = in->request_id;
    req->player_id = in->has_player_id ? in->player_id : 0;
    req->session_id = in->has_session_id ? in->session_id : 0;
    gs_reply(l->gs, req, code, message, NULL);
}

typedef struct {
    uint64_t from;
    uint64_t *players;
    size_t n, cap;
} gs_relink_t;

static void gs_relink_collect(uint64_t player, uint64_t link, void *arg)
{
    gs_relink_t *r = arg;
    if (link != r->from)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->players = xreallocarray(r->players, r->cap, sizeof *r->players);
    }
    r->players[r->n++] = player;
}

/*
 * A gateway's link said hello. Pushes and DeskClosing notices go to the link of the player's
 * last request (player_link); when that link was lost and the gateway connected again (a missed
 * heartbeat, a blip: docs/architecture.md "Rpc links"), a player who sends nothing meanwhile --
 * one who disconnected, whose seat the gateway still moves on a drain (docs/gateway.md "Table
 * moves") -- would be routed to a link that no longer exists, and the gateway never learn that
 * the table closes or moves. So the players of the gateway's previous link follow its new one.
 * Links without a gateway id (test clients) are left as they are.
 */
static void gs_gate_relink(gs_t *gs, const char *gate_id, uint64_t link_id)
{
    if (gate_id == NULL || gate_id[0] == '\0')
        return;
    gs_gate_t *gt = NULL;
    for (size_t i = 0; i < gs->ngates && gt == NULL; i++)
        if (strncmp(gs->gates[i].id, gate_id, sizeof gs->gates[i].id - 1) == 0)
            gt = &gs->gates[i];
    if (gt == NULL) {
        if (gs->ngates < GS_GATES_MAX) {
            if (gs->gates == NULL)
                gs->gates = xcalloc(GS_GATES_MAX, sizeof *gs->gates);
            gt = &gs->gates[gs->ngates++];
        } else {
            for (size_t i = 0; i < gs->ngates && gt == NULL; i++)
                if (!u64map_get(gs->links, gs->gates[i].link, NULL))
                    gt = &gs->gates[i];
            if (gt == NULL)
                return; /* GS_GATES_MAX gateways connected at once */
        }
        snprintf(gt->id, sizeof gt->id, "%s", gate_id);
        gt->link = link_id;
        return;
    }
    uint64_t old = gt->link;
    gt->link = link_id;
    if (old == link_id)
        return;
    gs_relink_t r = {.from = old};
    u64map_each(gs->player_link, gs_relink_collect, &r);
    for (size_t i = 0; i < r.n; i++)
        u64map_put(gs->player_link, r.players[i], link_id);
    free(r.players);
    if (r.n > 0)
        log_emit(LOG_INFO, "rpc_link_players_followed", "{s:s,s:I,s:I,s:i}", "gate", gt->id,
                 "from_link", (json_int_t)old, "link", (json_int_t)link_id, "players", (int)r.n);
}

static void gs_link_hello(gs_link_t *l, const Croupier__RpcFrame *in)
{
    gs_t *gs = l->gs;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__LinkHelloAck ack = CROUPIER__LINK_HELLO_ACK__INIT;
    f.request_id = in->request_id;
    f.body_case = CROUPIER__RPC_FRAME__BODY_HELLO_ACK;
    f.hello_ack = &ack;
    ack.version = 1;
    ack.server_id = gs->server_id;
    ack.engine = gs->engine->engine;
    /* The games list is split on commas into a small array on the stack. */
    char games[256];
    char *vec[16];
    size_t n = 0;
    snprintf(games, sizeof games, "%s", gs->games != NULL ? gs->games : "");
    for (char *save = NULL, *t = strtok_r(games, ",", &save); t != NULL && n < 16;
         t = strtok_r(NULL, ",", &save))
        vec[n++] = t;
    ack.n_games = n;
    ack.games = vec;
    ack.has_lease_epoch = true;
    ack.lease_epoch = atomic_load(&gs->lease_epoch);
    ack.has_draining = true;
    ack.draining = atomic_load(&gs->intake_stopped);
    l->hello_done = true;
    l->push_to = in->hello->has_push_to && in->hello->push_to;
    log_emit(LOG_INFO, "rpc_link_hello", "{s:I,s:s,s:s,s:b}", "link", (json_int_t)l->id, "peer",
             l->peer, "gate", in->hello->gate_id, "push_to", l->push_to);
    gs_gate_relink(gs, in->hello->gate_id, l->id);
    gs_send_frame(l, &f);
}

static void gs_link_ping(gs_link_t *l, const Croupier__RpcFrame *in)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__RpcPong pong = CROUPIER__RPC_PONG__INIT;
    f.request_id = in->request_id;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PONG;
    f.pong = &pong;
    pong.nonce = in->ping->nonce;
    pong.has_draining = true;
    pong.draining = atomic_load(&l->gs->intake_stopped);
    pong.has_human_desks = true;
    pong.human_desks = (uint32_t)gs_human_desks(l->gs);
    gs_send_frame(l, &f);
    /* A peer that pings is held to the silence bound (gs_link_event_cb) from its first ping on:
     * every gateway pings each --link-ping-ms. A peer that never pings (a tool, a test's rpc
     * client) is not judged by its silence. */
    int ms = l->gs->link_silent_ms;
    if (!l->pinged && ms > 0 && !l->dead) {
        struct timeval rto = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
        bufferevent_set_timeouts(l->bev, &rto, NULL); /* reads only */
        l->pinged = true;
    }
}

/*
 * One player request from a link: deadline, remembered answers, then routing. The frame is
 * owned by this function (handed to a request, or freed).
 */

static void gs_link_request(gs_link_t *l, Croupier__RpcFrame *in, gs_req_kind_t kind)
{
    gs_t *gs = l->gs;
    metrics_add(gs->m_requests, 1);
    uint64_t player = in->has_player_id ? in->player_id : 0;
    if (player == 0 || (kind != GS_REQ_PLAYER_GONE && in->request_id == 0)) {
        gs_link_reply_now(l, in, CROUPIER__ERROR_CODE__BAD_REQUEST,
                          "player requests need player_id and request_id");
        frame_free_rpc(in);
        return;
    }
    /* Pushes follow the player's last request. A PlayerGone is not one: the gateway the player
     * left sends it when it frees the old connection, which can be after the player already
     * resumed through another gateway; re-routing then would send every later push to a link
     * without that player (the client waits for events that never come). Such a late
     * PlayerGone is dropped: the player is back, and a desk told it is gone would let trustee
     * play its turns at bot speed (its own move then finds the turn gone). */
    uint64_t cur_link;
    if (kind == GS_REQ_PLAYER_GONE) {
        if (u64map_get(gs->player_link, player, &cur_link) && cur_link != l->id) {
            frame_free_rpc(in);
            return;
        }
    } else {
        u64map_put(gs->player_link, player, l->id);
    }
    /* The deadline on our own monotonic clock (gs_request_deadline). */
    bool has_deadline = in->has_budget_ms || in->has_deadline_unix_ms;
    int64_t deadline = gs_request_deadline(gs, in);
    /* Retries of an action are recognised by the id the CLIENT gave it, which stays the same
     * through any gateway (a retry after a reconnect comes with a new session and a new rpc
     * request id). Joins, resumes and leaves are idempotent at the desk by nature, and rpc
     * request ids are only unique per link, so for them (and for actions without a client id)
     * the link is part of the key. */
    uint64_t dedupe =
        kind == GS_REQ_ACTION && in->has_client_request_id && in->client_request_id != 0
            ? in->client_request_id
            : (in->request_id ^ (l->id << 48) ^ (1ULL << 63));
    if (kind != GS_REQ_PLAYER_GONE) {
        if (has_deadline && clock_mono_ms() > deadline) {
            metrics_add(gs->m_deadline, 1);
            gs_link_reply_now(l, in, CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED,
                              "deadline passed before the server received the request");
            frame_free_rpc(in);
            return;
        }
        gs_cached_t *c = gs_cache_find(gs, player, dedupe);
        if (c != NULL) {
            metrics_add(gs->m_dupes, 1);
            if (c->in_flight) {
                if (c->nwait < 4) {
                    c->wait_link[c->nwait] = l->id;
                    c->wait_rid[c->nwait++] = in->request_id;
                }
            } else {
                gs_send_cached(l, c, in->request_id);
            }
            frame_free_rpc(in);
            return;
        }
        gs_cache_insert(gs, player, dedupe);
    }
    gs_request_t *req = xcalloc(1, sizeof *req);
    req->kind = kind;
    req->link_id = l->id;
    req->request_id = in->request_id;
    req->player_id = player;
    req->session_id = in->has_session_id ? in->session_id : 0;
    req->trace_id = in->has_trace_id ? in->trace_id : 0;
    req->deadline_ms = has_deadline ? deadline : 0; /* clock_mono_ms() is never 0 */
    req->frame = in;
    req->_dedupe = dedupe;
    if (kind == GS_REQ_ADOPT) {
        uint64_t seated;
        if (u64map_get(gs->player_desk, player, &seated)) {
            /* Seated here already (its table was adopted here): answered with its Snapshot. */
            req->kind = GS_REQ_RESUME;
            gs_request_post(gs, seated, req);
            return;
        }
        if (atomic_load(&gs->intake_stopped)) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
            return;
        }
        if (atomic_load(&gs->fenced)) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING,
                     "server cut off from Redis: its tables are stopped", NULL);
            return;
        }
        if (gs->engine->adopt == NULL) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__UNKNOWN_REQUEST,
                     "this engine does not adopt tables", NULL);
            return;
        }
        gs->engine->adopt(gs->engine_state, req);
        return;
    }
    if (kind == GS_REQ_JOIN) {
        uint64_t seated;
        if (u64map_get(gs->player_desk, player, &seated)) {
            /* Already seated here: a join is answered by the seat it has (as a resume). */
            req->kind = GS_REQ_RESUME;
            gs_request_post(gs, seated, req);
            return;
        }
        if (atomic_load(&gs->intake_stopped)) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
            return;
        }
        if (atomic_load(&gs->fenced)) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING,
                     "server cut off from Redis: its tables are stopped", NULL);
            return;
        }
        gs->engine->join(gs->engine_state, req);
        return;
    }
    uint64_t desk;
    if (!u64map_get(gs->player_desk, player, &desk)) {
        if (kind == GS_REQ_PLAYER_GONE)
            gs_request_free(req);
        else
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated on this server", NULL);
        return;
    }
    gs_request_post(gs, desk, req);
}

static void gs_link_read_cb(struct bufferevent *bev, void *arg)
{
    gs_link_t *l = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    while (!l->dead) {
        Croupier__RpcFrame *f;
        frame_error_t err;
        frame_result_t r = frame_read_rpc(in, NULL, &f, &err);
        if (r == FRAME_NEED_MORE)
            return;
        if (r == FRAME_TOO_LARGE) {
            log_emit(LOG_WARN, "rpc_frame_too_large", "{s:I,s:s}", "link", (json_int_t)l->id,
                     "peer", l->peer);
            metrics_add(l->gs->m_bad_frames, 1);
            gs_link_close(l);
            return;
        }
        if (r == FRAME_MALFORMED) {
            log_emit(LOG_WARN, "rpc_frame_malformed", "{s:I,s:s}", "link", (json_int_t)l->id,
                     "detail", err.detail);
            metrics_add(l->gs->m_bad_frames, 1);
            continue;
        }
        if (!l->hello_done && f->body_case != CROUPIER__RPC_FRAME__BODY_HELLO) {
            log_emit(LOG_WARN, "rpc_link_no_hello", "{s:I}", "link", (json_int_t)l->id);
            frame_free_rpc(f);
            gs_link_close(l);
            return;
        }
        switch (f->body_case) {
        case CROUPIER__RPC_FRAME__BODY_HELLO:
            gs_link_hello(l, f);
            frame_free_rpc(f);
            break;
        case CROUPIER__RPC_FRAME__BODY_PING:
            gs_link_ping(l, f);
            frame_free_rpc(f);
            break;
        case CROUPIER__RPC_FRAME__BODY_JOIN:
            gs_link_request(l, f, GS_REQ_JOIN);
            break;
        case CROUPIER__RPC_FRAME__BODY_LEAVE:
            gs_link_request(l, f, GS_REQ_LEAVE);
            break;
        case CROUPIER__RPC_FRAME__BODY_ACTION:
            gs_link_request(l, f, GS_REQ_ACTION);
            break;
        case CROUPIER__RPC_FRAME__BODY_RESUME:
            gs_link_request(l, f, GS_REQ_RESUME);
            break;
        case CROUPIER__RPC_FRAME__BODY_PLAYER_GONE:
            gs_link_request(l, f, GS_REQ_PLAYER_GONE);
            break;
        case CROUPIER__RPC_FRAME__BODY_ADOPT:
            gs_link_request(l, f, GS_REQ_ADOPT);
            break;
        case CROUPIER__RPC_FRAME__BODY_WATCH:
            gs_link_spect(l, f);
            break;
        case CROUPIER__RPC_FRAME__BODY_PONG:
            frame_free_rpc(f);
            break;
        default:
            if (f->request_id != 0)
                gs_link_reply_now(l, f, CROUPIER__ERROR_CODE__UNKNOWN_REQUEST,
                                  "not a request a game server handles");
            frame_free_rpc(f);
            break;
        }
    }
}

static void gs_link_event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    gs_link_t *l = arg;
    if (what & BEV_EVENT_TIMEOUT) {
        /* Nothing from the gateway for link_silent_ms (armed at its first RpcPing,
         * gs_link_ping), though a live one pings every --link-ping-ms: it is frozen (SIGSTOP,
         * a stalled node) or cut off. Its players are moving to other gateways
         * (docs/protocol.md "Keepalive"), whose requests re-route their pushes; this link
         * would only queue frames nobody reads. A gateway that comes back connects again, and
         * its hello takes its players over (gs_gate_relink). */
        log_emit(LOG_WARN, "rpc_link_silent", "{s:I,s:s,s:i}", "link", (json_int_t)l->id, "peer",
                 l->peer, "silent_ms", l->gs->link_silent_ms);
        metrics_add(l->gs->m_silent, 1);
        gs_link_close(l);
        return;
    }
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        log_emit(LOG_INFO, "rpc_link_closed", "{s:I,s:s,s:b}", "link", (json_int_t)l->id, "peer",
                 l->peer, "error", (what & BEV_EVENT_ERROR) != 0);
        gs_link_close(l);
    }
}

static void gs_link_close_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gs_link_free(arg);
}

/*
 * Closes a link from inside code that may still hold its pointer (a read loop, a send): the
 * link stops reading and is marked dead at once, and is freed on the next loop iteration.
 */
static void gs_link_close(gs_link_t *l)
{
    if (l->dead)
        return;
    l->dead = true;
    bufferevent_disable(l->bev, EV_READ | EV_WRITE);
    event_base_once(l->gs->base, -1, EV_TIMEOUT, gs_link_close_cb, l, NULL);
}

static void gs_link_free(gs_link_t *l)
{
    gs_t *gs = l->gs;
    u64map_del(gs->links, l->id);
    gs_spect_link_gone(gs, l->id);
    bufferevent_free(l->bev);
    metrics_set(gs->m_links, (double)u64map_size(gs->links));
    free(l);
}

static void gs_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                         int socklen, void *arg)
{
    (void)lis;
    (void)socklen;
    gs_t *gs = arg;
    gs_link_t *l = xcalloc(1, sizeof *l);
    l->gs = gs;
    l->id = ++gs->next_link_id;
    if (sa->sa_family == AF_INET)
        evutil_inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, l->peer, sizeof l->peer);
    else if (sa->sa_family == AF_INET6)
        evutil_inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, l->peer,
                         sizeof l->peer);
    l->bev = bufferevent_socket_new(gs->base, fd, BEV_OPT_CLOSE_ON_FREE);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    bufferevent_setcb(l->bev, gs_link_read_cb, NULL, gs_link_event_cb, l);
    bufferevent_setwatermark(l->bev, EV_READ, 0, FRAME_HEADER_SIZE + FRAME_DEFAULT_MAX + 4096);
    bufferevent_enable(l->bev, EV_READ | EV_WRITE);
    u64map_put(gs->links, l->id, (uint64_t)(uintptr_t)l);
    metrics_set(gs->m_links, (double)u64map_size(gs->links));
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static void gs_watch_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gs_t *gs = arg;
    int64_t now = clock_mono_ms();
    if (gs->loop_seen_ms != 0 && now - gs->loop_seen_ms > GS_STALL_MS)
        gs->stall_end_ms = now; /* a freeze (SIGSTOP, a paused VM): frames waited meanwhile */
    gs->loop_seen_ms = now;
    uint64_t h = gs_human_desks(gs);
    if (h != gs->last_human_desks) {
        gs->last_human_desks = h;
        if (gs->observer != NULL)
            gs->observer(gs->observer_arg);
    }
}

/*
 * A request's deadline on our monotonic clock (rpc.proto budget_ms, deadline_unix_ms); 0 when it
 * has none. Two measures of what is left arrive: the budget (counted from the frame's arrival:
 * blind to a delay before it was read, e.g. while this process was frozen) and the gateway's
 * wall-clock deadline (blind to a step of either wall clock). The smaller one holds, unless the
 * wall clock says much less than the budget (more than GS_CLOCK_TOLERANCE_MS) while this loop
 * did not stand still: then the two wall clocks disagree (a step), and the budget holds alone
 * -- counted in game_rpc_clock_skew_total and logged at most once a minute.
 */
int64_t gs_request_deadline(gs_t *gs, const Croupier__RpcFrame *in)
{
    int64_t now = clock_mono_ms();
    if (!in->has_budget_ms && !in->has_deadline_unix_ms)
        return 0;
    int64_t by_wall = (int64_t)in->deadline_unix_ms - clock_wall_ms();
    if (!in->has_budget_ms)
        return now + by_wall;
    int64_t by_budget = in->budget_ms;
    if (!in->has_deadline_unix_ms)
        return now + by_budget;
    bool stalled = now - gs->loop_seen_ms > GS_STALL_MS ||
                   (gs->stall_end_ms != 0 && now - gs->stall_end_ms < 2 * GS_STALL_MS);
    if (by_wall >= by_budget - GS_CLOCK_TOLERANCE_MS || stalled)
        return now + (by_wall < by_budget ? by_wall : by_budget);
    metrics_add(gs->m_skew, 1);
    if (gs->skew_logged_ms == 0 || now - gs->skew_logged_ms >= 60000) {
        gs->skew_logged_ms = now;
        log_emit(LOG_WARN, "rpc_clock_skew", "{s:I,s:s}", "skew_ms",
                 (json_int_t)(by_wall - by_budget), "msg",
                 "a gateway's wall-clock deadline and its budget disagree by more than a delay "
                 "can explain: the two wall clocks differ; deadlines follow the budget");
    }
    return now + by_budget;
}

int gs_create(const gs_config_t *cfg, gs_t **out)
{
    if (cfg->base == NULL || cfg->engine == NULL || cfg->metrics == NULL)
        return -EINVAL;
    gs_t *gs = xcalloc(1, sizeof *gs);
    gs->base = cfg->base;
    gs->engine = cfg->engine;
    gs->games = cfg->games != NULL ? xstrdup(cfg->games) : NULL;
    gs->engine_options = cfg->engine_options != NULL ? xstrdup(cfg->engine_options) : NULL;
    gs->redis_host = cfg->redis_host != NULL ? xstrdup(cfg->redis_host) : NULL;
    gs->redis_port = cfg->redis_port;
    gs->redis_sentinels = cfg->redis_sentinels != NULL ? xstrdup(cfg->redis_sentinels) : NULL;
    gs->redis_master = cfg->redis_master != NULL ? xstrdup(cfg->redis_master) : NULL;
    gs->redis_cluster = cfg->redis_cluster != NULL ? xstrdup(cfg->redis_cluster) : NULL;
    gs->redis_min_replicas = cfg->redis_min_replicas;
    gs->redis_wait_ms = cfg->redis_wait_ms;
    gs->service = xstrdup(cfg->service != NULL ? cfg->service : cfg->engine->name);
    snprintf(gs->server_id, sizeof gs->server_id, "%s",
             cfg->server_id != NULL ? cfg->server_id : "unassigned");
    gs->metrics = cfg->metrics;
    gs->link_output_cap = cfg->link_output_cap ? cfg->link_output_cap : 8u << 20;
    gs->link_silent_ms = cfg->link_silent_ms != 0 ? cfg->link_silent_ms : 10000;
    gs->cache_cap = cfg->request_cache_max > 0 ? (size_t)cfg->request_cache_max : 65536;
    gs->cache = xcalloc(gs->cache_cap, sizeof *gs->cache);
    gs->cache_index = u64map_create();
    gs->links = u64map_create();
    gs->player_link = u64map_create();
    gs->player_desk = u64map_create();
    gs->desks = u64map_create();
    gs->spect = u64map_create();
    pthread_mutex_init(&gs->out_mu, NULL);
    pthread_mutex_init(&gs->desks_mu, NULL);
    gs->out_tail = &gs->out_head;
    gs->out_ev = event_new(gs->base, -1, 0, gs_out_cb, gs);
    gs->watch_ev = event_new(gs->base, -1, EV_PERSIST, gs_watch_cb, gs);
    struct timeval tv = {0, 5000};
    event_add(gs->watch_ev, &tv);

    metrics_registry_t *m = gs->metrics;
    gs->m_requests =
        metrics_counter(m, "game_rpc_requests_total", NULL, "Player requests received");
    gs->m_deadline = metrics_counter(m, "game_rpc_deadline_exceeded_total", NULL,
                                     "Requests refused because their deadline had passed");
    gs->m_skew = metrics_counter(m, "game_rpc_clock_skew_total", NULL,
                                 "Requests whose wall-clock deadline disagreed with their budget "
                                 "(the two wall clocks differ): the budget held");
    gs->m_dupes = metrics_counter(m, "game_rpc_duplicate_requests_total", NULL,
                                  "Retries answered from the remembered result");
    gs->m_links = metrics_gauge(m, "game_rpc_links", NULL, "Gateway links connected");
    gs->m_slow = metrics_counter(m, "game_rpc_links_dropped_slow_total", NULL,
                                 "Links dropped because their peer did not read fast enough");
    gs->m_bad_frames = metrics_counter(m, "game_rpc_bad_frames_total", NULL,
                                       "Malformed or oversized frames from gateways");
    gs->m_silent = metrics_counter(m, "game_rpc_links_dropped_silent_total", NULL,
                                   "Links dropped because their gateway sent nothing, not even "
                                   "a ping, for the silence bound");

    int rc = rt_create(cfg->workers ? cfg->workers : 2, &gs->rt);
    if (rc != 0)
        goto fail_rt;
    *out = gs;
    return 0;

fail_rt:
    event_free(gs->watch_ev);
    event_free(gs->out_ev);
    gs_spect_free(gs);
    u64map_destroy(gs->desks);
    u64map_destroy(gs->player_desk);
    u64map_destroy(gs->player_link);
    u64map_destroy(gs->links);
    u64map_destroy(gs->cache_index);
    free(gs->cache);
    free(gs->games);
    free(gs->engine_options);
    free(gs->redis_host);
    free(gs->redis_sentinels);
    free(gs->redis_cluster);
    free(gs->redis_master);
    free(gs->service);
    free(gs);
    return rc;
}

int gs_start_engine(gs_t *gs)
{
    return gs->engine->create(gs, gs->games, &gs->engine_state);
}

int gs_listen_fd(gs_t *gs, int fd)
{
    gs->listener = evconnlistener_new(gs->base, gs_accept_cb, gs,
                                      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, -1, fd);
    return gs->listener != NULL ? 0 : -EIO;
}

void gs_stop_listening(gs_t *gs)
{
    if (gs->listener != NULL) {
        evconnlistener_free(gs->listener);
        gs->listener = NULL;
    }
}

void gs_set_identity(gs_t *gs, const char *server_id, uint32_t slot, uint64_t lease_epoch)
{
    snprintf(gs->server_id, sizeof gs->server_id, "%s", server_id);
    atomic_store(&gs->slot, slot);
    atomic_store(&gs->lease_epoch, lease_epoch);
}

void gs_set_money(gs_t *gs, money_writer_t *w)
{
    gs->money = w;
}

money_writer_t *gs_money(gs_t *gs)
{
    return gs->money;
}

void gs_money_followup_begin(gs_t *gs)
{
    atomic_fetch_add(&gs->money_followups, 1);
}

void gs_money_followup_end(gs_t *gs)
{
    atomic_fetch_sub(&gs->money_followups, 1);
}

void gs_money_result_free(void *money_result)
{
    money_result_t *res = money_result;
    if (res == NULL)
        return;
    gs_t *gs = res->arg;
    free(res);
    if (gs != NULL)
        gs_money_followup_end(gs);
}

uint64_t gs_money_followups(const gs_t *gs)
{
    return atomic_load(&gs->money_followups);
}

uint32_t gs_server_slot(const gs_t *gs)
{
    return atomic_load(&gs->slot);
}

uint64_t gs_epoch(const gs_t *gs)
{
    return atomic_load(&gs->lease_epoch);
}

money_round_id_t gs_round_id(const gs_t *gs, uint64_t desk, uint64_t seq)
{
    money_round_id_t rid = {
        .server = gs_server_slot(gs), .epoch = gs_epoch(gs), .desk = desk, .seq = seq};
    money_round_id_set_service(&rid, gs_service(gs));
    return rid;
}

void gs_set_redis_quorum(gs_t *gs, bool ok)
{
    atomic_store(&gs->quorum_lost, !ok);
}

void gs_set_redis_unsafe(gs_t *gs, bool unsafe)
{
    atomic_store(&gs->redis_unsafe, unsafe);
}

bool gs_can_start_round(const gs_t *gs)
{
    if (atomic_load(&gs->intake_stopped) || atomic_load(&gs->quorum_lost) ||
        atomic_load(&gs->redis_unsafe) || atomic_load(&gs->fenced) || !deck_healthy())
        return false;
    return gs->money == NULL || money_writer_can_start_round(gs->money);
}

void gs_stop_intake(gs_t *gs)
{
    if (atomic_exchange(&gs->intake_stopped, true))
        return;
    rt_stop_intake(gs->rt);
    if (gs->engine->stop_intake != NULL && gs->engine_state != NULL)
        gs->engine->stop_intake(gs->engine_state);
}

bool gs_intake_stopped(const gs_t *gs)
{
    return atomic_load(&gs->intake_stopped);
}

static void gs_free_link_entry(uint64_t key, uint64_t val, void *arg)
{
    (void)key;
    (void)arg;
    gs_link_t *l = (gs_link_t *)(uintptr_t)val;
    bufferevent_free(l->bev);
    free(l);
}

void gs_destroy(gs_t *gs)
{
    if (gs == NULL)
        return;
    gs_stop_listening(gs);
    rt_destroy(gs->rt);
    if (gs->engine->destroy != NULL && gs->engine_state != NULL)
        gs->engine->destroy(gs->engine_state);
    gs_out_cb(-1, 0, gs); /* frees what desks left in the outbox (links may take it) */
    u64map_each(gs->links, gs_free_link_entry, NULL);
    u64map_destroy(gs->links);
    event_free(gs->watch_ev);
    event_free(gs->out_ev);
    for (size_t i = 0; i < gs->cache_cap; i++)
        free(gs->cache[i].reply);
    free(gs->cache);
    u64map_destroy(gs->cache_index);
    u64map_destroy(gs->player_link);
    free(gs->gates);
    u64map_destroy(gs->player_desk);
    gs_spect_free(gs);
    u64map_destroy(gs->desks);
    pthread_mutex_destroy(&gs->out_mu);
    pthread_mutex_destroy(&gs->desks_mu);
    free(gs->games);
    free(gs->engine_options);
    free(gs->redis_host);
    free(gs->redis_sentinels);
    free(gs->redis_cluster);
    free(gs->redis_master);
    free(gs->service);
    free(gs);
}

struct event_base *gs_base(gs_t *gs)
{
    return gs->base;
}

const char *gs_redis_host(const gs_t *gs)
{
    return gs->redis_host;
}

int gs_redis_port(const gs_t *gs)
{
    return gs->redis_port;
}

const char *gs_redis_cluster(const gs_t *gs)
{
    return gs->redis_cluster;
}

const char *gs_redis_sentinels(const gs_t *gs)
{
    return gs->redis_sentinels;
}

const char *gs_redis_master(const gs_t *gs)
{
    return gs->redis_master;
}

int gs_redis_min_replicas(const gs_t *gs)
{
    return gs->redis_min_replicas;
}

int gs_redis_wait_ms(const gs_t *gs)
{
    return gs->redis_wait_ms;
}

const char *gs_service(const gs_t *gs)
{
    return gs->service;
}

const char *gs_engine_options(const gs_t *gs)
{
    return gs->engine_options;
}

const char *gs_server_id(const gs_t *gs)
{
    return gs->server_id;
}

rt_t *gs_rt(gs_t *gs)
{
    return gs->rt;
}

void *gs_engine_state(gs_t *gs)
{
    return gs->engine_state;
}

metrics_registry_t *gs_metrics(gs_t *gs)
{
    return gs->metrics;
}

void gs_table_move_begin(gs_t *gs)
{
    atomic_fetch_add(&gs->moving, 1);
}

void gs_table_move_end(gs_t *gs)
{
    atomic_fetch_sub(&gs->moving, 1);
}

uint64_t gs_human_desks(const gs_t *gs)
{
    return rt_human_desks(gs->rt) + atomic_load(&gs->moving);
}

uint64_t gs_desks(const gs_t *gs)
{
    return rt_desks(gs->rt);
}

unsigned gs_links(const gs_t *gs)
{
    return (unsigned)u64map_size(gs->links);
}

void gs_set_human_desks_observer(gs_t *gs, void (*fn)(void *arg), void *arg)
{
    gs->observer = fn;
    gs->observer_arg = arg;
}

void gs_count_round(gs_t *gs, const char *game, rt_outcome_t outcome)
{
    static const char *const names[] = {"completed", "voided", "abandoned"};
    char labels[128];
    snprintf(labels, sizeof labels, "game=\"%s\",outcome=\"%s\"", game,
             names[outcome < RT_ROUND_OUTCOMES ? outcome : 0]);
    metrics_add(metrics_counter(gs->metrics, "game_rounds_total", labels, "Rounds ended"), 1);
}
