/*
 * gate_edge.c -- the edge limits: connection caps, handshake / Login / frame / write
 * deadlines, the per-player request rate (docs/gateway.md "Edge limits").
 */
#include "gate_int.h"

/* ---- edge limits ----------------------------------------------------------------------------- */

/*
 * The key under which connections from one source are counted (--max-conns-per-addr): an IPv4
 * address (also IPv4-mapped IPv6) as itself, an IPv6 address by its /64 prefix (one subscriber
 * usually holds a whole /64, so counting single IPv6 addresses would cap nothing). 0 for any
 * other family (not counted).
 */
static uint64_t gate_addr_key(const struct sockaddr *sa)
{
    if (sa == NULL)
        return 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return 1ULL << 32 | ntohl(in->sin_addr.s_addr);
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            uint32_t v4;
            memcpy(&v4, a->s6_addr + 12, 4);
            return 1ULL << 32 | ntohl(v4);
        }
        uint64_t h = 14695981039346656037ULL; /* FNV-1a of the /64 prefix */
        for (int i = 0; i < 8; i++) {
            h ^= a->s6_addr[i];
            h *= 1099511628211ULL;
        }
        return h | 1ULL << 63;
    }
    return 0;
}

/* The source address as text for a log line ("?" when unknown). */
void gate_addr_text(const struct sockaddr *sa, char *buf, size_t cap)
{
    const void *a = NULL;
    if (sa != NULL && sa->sa_family == AF_INET)
        a = &((const struct sockaddr_in *)sa)->sin_addr;
    else if (sa != NULL && sa->sa_family == AF_INET6)
        a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (a == NULL || inet_ntop(sa->sa_family, a, buf, (socklen_t)cap) == NULL)
        snprintf(buf, cap, "?");
}

/*
 * At --max-conns, the oldest connection that has not logged in (it may be a slowloris, or a
 * socket that never speaks) makes room for the new one: told GoAway{OVERLOADED} and closed, no
 * longer counted. Logged-in players are never taken; so a flood of sockets that never log in
 * cannot keep players out, only compete with each other. Returns true when one was evicted.
 */
static bool gate_edge_evict(gate_t *g, int64_t now)
{
    gate_conn_t *v = TAILQ_FIRST(&g->unauth);
    if (v == NULL)
        return false;
    metrics_add(g->m_edge[EDGE_EVICTED], 1);
    long skipped = gate_edge_note(g, EDGE_EVICTED, now);
    if (skipped >= 0)
        log_emit(LOG_WARN, "client_evicted", "{s:I,s:I,s:i,s:I}", "conn", (json_int_t)v->id,
                 "age_ms", (json_int_t)(now - v->accept_ms), "max_conns", g->cfg.max_conns,
                 "skipped_since_last", (json_int_t)skipped);
    gate_edge_release(v);
    v->refused = EDGE_EVICTED; /* its close is bounded as a refusal's */
    gate_conn_goaway_last(v, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED,
                          "over capacity: the gateway is full and this connection had not "
                          "logged in");
    gate_conn_close(v, "over_capacity");
    return true;
}

/*
 * Admits a new connection under the caps (--max-conns, --max-conns-per-addr), counting it, or
 * says which cap refuses it (EDGE_MAX_CONNS, EDGE_MAX_PER_ADDR; -1: admitted). A refused
 * connection is counted in neither cap: it gets its GoAway{OVERLOADED} and is closed. At the
 * total cap a connection not logged in makes room first when there is one (gate_edge_evict).
 */
int gate_edge_admit(gate_t *g, gate_conn_t *c, const struct sockaddr *sa)
{
    uint64_t key = gate_addr_key(sa), n = 0;
    if (key != 0)
        u64map_get(g->addr_conns, key, &n);
    if (g->cfg.max_conns_per_addr > 0 && key != 0 && n >= (uint64_t)g->cfg.max_conns_per_addr)
        return EDGE_MAX_PER_ADDR;
    if (g->cfg.max_conns > 0 && g->admitted >= g->cfg.max_conns &&
        !gate_edge_evict(g, c->accept_ms))
        return EDGE_MAX_CONNS;
    n = 0; /* again: the evicted one may have shared the address */
    if (key != 0)
        u64map_get(g->addr_conns, key, &n);
    c->admitted = true;
    c->in_unauth = true;
    TAILQ_INSERT_TAIL(&g->unauth, c, unauth);
    g->admitted++;
    if (key != 0) {
        c->addr_key = key;
        u64map_put(g->addr_conns, key, n + 1);
    }
    return -1;
}

/* Notes that output left a client's socket buffer (the write deadline sees progress). */
void gate_conn_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    (void)buf;
    if (info->n_deleted > 0)
        ((gate_conn_t *)arg)->out_moved = true;
}

/*
 * Closes a connection refused by a cap: GoAway{OVERLOADED} naming the cap, then the graceful
 * close (a WebSocket one once its handshake is done: frames cannot go out before it; until
 * then the handshake deadline bounds it).
 */
void gate_conn_refuse(gate_conn_t *c)
{
    gate_t *g = c->g;
    char detail[96];
    if (c->refused == EDGE_MAX_CONNS)
        snprintf(detail, sizeof detail, "over capacity: the gateway holds %d connections",
                 g->cfg.max_conns);
    else
        snprintf(detail, sizeof detail, "over capacity: %d connections from your address",
                 g->cfg.max_conns_per_addr);
    gate_conn_goaway_last(c, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED, detail);
    gate_conn_close(c, "over_capacity");
}

/*
 * Closes a connection whose deadline passed (cause: EDGE_HANDSHAKE, EDGE_LOGIN, EDGE_FRAME,
 * EDGE_WRITE), with a GoAway saying which and why (a WebSocket close 1008 follows; a handshake
 * never completed gets an HTTP 408 instead), counted in gate_deadline_closes_total{deadline}.
 */
static void gate_conn_deadline(gate_conn_t *c, int cause, int limit_ms, int64_t now)
{
    gate_t *g = c->g;
    metrics_add(g->m_edge[cause], 1);
    long skipped = gate_edge_note(g, cause, now);
    if (skipped >= 0)
        log_emit(LOG_WARN, "client_deadline", "{s:s,s:I,s:I,s:i,s:I}", "deadline",
                 gate_edge_names[cause], "conn", (json_int_t)c->id, "player", (json_int_t)c->player,
                 "limit_ms", limit_ms, "skipped_since_last", (json_int_t)skipped);
    char detail[96];
    switch (cause) {
    case EDGE_HANDSHAKE:
        gate_ws_timeout(c->ws);
        gate_conn_close(c, "handshake_timeout");
        return;
    case EDGE_LOGIN:
        snprintf(detail, sizeof detail, "no Login within %d ms of connecting", limit_ms);
        gate_conn_goaway_last(c, CROUPIER__GO_AWAY_REASON__GOAWAY_PROTOCOL_ERROR, detail);
        gate_conn_close(c, "login_timeout");
        return;
    case EDGE_FRAME:
        snprintf(detail, sizeof detail, "a frame begun was not completed within %d ms", limit_ms);
        gate_conn_goaway_last(c, CROUPIER__GO_AWAY_REASON__GOAWAY_PROTOCOL_ERROR, detail);
        gate_conn_close(c, "frame_timeout");
        return;
    default:
        snprintf(detail, sizeof detail, "slow consumer: no output taken for %d ms", limit_ms);
        gate_conn_goaway_last(c, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED, detail);
        gate_conn_close(c, "write_timeout");
        return;
    }
}

/*
 * The sweep's checks of one open connection: the WebSocket handshake, Login and partial-frame
 * deadlines, then its output (still above the cap with nothing new queued, or making no progress
 * for write_timeout_ms). Returns true when it closed the connection.
 */
bool gate_conn_check_edges(gate_conn_t *c, int64_t now)
{
    gate_t *g = c->g;
    const gate_config_t *cf = &g->cfg;
    if (c->ws != NULL && !gate_ws_open(c->ws)) {
        if (cf->handshake_timeout_ms > 0 && now - c->accept_ms > cf->handshake_timeout_ms) {
            gate_conn_deadline(c, EDGE_HANDSHAKE, cf->handshake_timeout_ms, now);
            return true;
        }
        return false;
    }
    if (c->player == 0 && cf->login_timeout_ms > 0 && now - c->accept_ms > cf->login_timeout_ms) {
        gate_conn_deadline(c, EDGE_LOGIN, cf->login_timeout_ms, now);
        return true;
    }
    if (c->partial_ms != 0 && cf->frame_timeout_ms > 0 &&
        now - c->partial_ms > cf->frame_timeout_ms) {
        gate_conn_deadline(c, EDGE_FRAME, cf->frame_timeout_ms, now);
        return true;
    }
    size_t q = gate_conn_queued(c);
    if (q == 0 || c->out_moved) {
        c->out_ms = now;
        c->out_moved = false;
    } else if (cf->write_timeout_ms > 0 && now - c->out_ms > cf->write_timeout_ms) {
        gate_conn_deadline(c, EDGE_WRITE, cf->write_timeout_ms, now);
        return true;
    }
    if (q > cf->output_cap) {
        /* Over the cap by the last frame queued, with nothing queued since (which would have
         * closed it): the same slow-consumer close. */
        gate_conn_room(c);
        return true;
    }
    return false;
}

/*
 * Takes one token from the player's bucket (--player-rate-limit / --player-rate-burst): one
 * bucket per player id for all its connections to this gateway, and kept across them (a
 * reconnect or a takeover does not refill it). False when it is empty.
 */
bool gate_player_take(gate_conn_t *c)
{
    gate_t *g = c->g;
    int64_t now = gate_now_mono(g);
    uint64_t p;
    gate_bucket_t *b;
    if (u64map_get(g->player_buckets, c->player, &p)) {
        b = (gate_bucket_t *)(uintptr_t)p;
        b->tokens += (double)(now - b->ms) * g->cfg.player_rate_per_s / 1000.0;
        if (b->tokens > g->cfg.player_rate_burst)
            b->tokens = g->cfg.player_rate_burst;
    } else {
        b = xmalloc(sizeof *b);
        b->tokens = g->cfg.player_rate_burst;
        u64map_put(g->player_buckets, c->player, (uint64_t)(uintptr_t)b);
    }
    b->ms = now;
    if (b->tokens < 1.0)
        return false;
    b->tokens -= 1.0;
    return true;
}

static void gate_bucket_sweep_one(uint64_t player, uint64_t val, void *arg)
{
    gate_bucket_sweep_t *s = arg;
    const gate_bucket_t *b = (const gate_bucket_t *)(uintptr_t)val;
    double full = b->tokens + (double)(s->now - b->ms) * s->g->cfg.player_rate_per_s / 1000.0;
    if (full < s->g->cfg.player_rate_burst || u64map_get(s->g->conn_by_player, player, NULL))
        return;
    if (s->n == s->cap) {
        s->cap = s->cap != 0 ? 2 * s->cap : 64;
        s->del = xrealloc(s->del, s->cap * sizeof *s->del);
    }
    s->del[s->n++] = player;
}

void gate_bucket_free_one(uint64_t player, uint64_t val, void *arg)
{
    (void)player;
    (void)arg;
    free((void *)(uintptr_t)val);
}

/* Forgets the buckets that are full again and whose player has no connection here (a fresh
 * bucket is the same): memory stays bounded by the players active in the last burst/rate s. */
void gate_buckets_sweep(gate_t *g, int64_t now)
{
    gate_bucket_sweep_t s = {.g = g, .now = now};
    u64map_each(g->player_buckets, gate_bucket_sweep_one, &s);
    for (size_t i = 0; i < s.n; i++) {
        uint64_t p;
        if (u64map_get(g->player_buckets, s.del[i], &p)) {
            free((void *)(uintptr_t)p);
            u64map_del(g->player_buckets, s.del[i]);
        }
    }
    free(s.del);
}
