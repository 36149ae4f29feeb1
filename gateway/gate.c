/*
 * gate.c -- the gateway's life: its registration in Redis (with the connection balance,
 * gate_balance.h), the four-step exit, create / destroy and the rest of gate.h's contract.
 * The gateway is split by concern; gate_int.h holds what the files share:
 *   gate_out.c    client connections: output batching, replies and GoAway, graceful closes
 *   gate_edge.c   the edge limits (docs/gateway.md "Edge limits")
 *   gate_link.c   seats in Redis, the rpc links to the game servers
 *   gate_req.c    requests: routing, deadlines, retries, table moves
 *   gate_gone.c   servers gone: seats that went with their server, crash moves
 *   gate_client.c client requests: Login, Join, Action, Leave, Resume ...
 *   gate_lobby.c  the lobby (ListTables) and private rooms (GetRoom)
 *   gate_tour.c   tournaments: lists, state, registration through the director, its events
 *   gate_read.c   the client read path: frames in, the stall guard, accepts, the sweep
 */
#include "gate_int.h"

static void gate_exit_step(gate_t *g);

const char *const gate_edge_names[EDGE_CAUSES] = {
    "max_conns", "max_conns_per_addr", "ws_handshake", "login",  "frame",
    "write",     "output_cap",         "player_rate",  "evicted"};
const char *const gate_reject_names[8] = {"deadline",     "unauthenticated",   "not_seated",
                                          "rate_limited", "too_many_inflight", "bad_token",
                                          "no_server",    "draining"};
const int gate_default_budget[GATE_REQ_KINDS] = {800, 500, 300, 800, 500, 3000, 800};

/* ---- gateway registration -------------------------------------------------------------------- */

/* KEYS[1] the entry, KEYS[2] GATE_LOAD_KEY; ARGV: the entry, its TTL, the channel, our id, our
 * logged-in connections. Returns the other live gateways' figures, {id, count, ...}; expired
 * ones (a gateway that died) are removed. */
static const char gate_register_lua[] =
    "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) "
    "redis.call('PUBLISH', ARGV[3], ARGV[1]) "
    "local t = redis.call('TIME') "
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) "
    "redis.call('HSET', KEYS[2], ARGV[4], ARGV[5] .. ' ' .. (now + tonumber(ARGV[2]))) "
    "local all = redis.call('HGETALL', KEYS[2]) "
    "local out = {} "
    "for i = 1, #all, 2 do "
    "  local n, exp = string.match(all[i + 1], '^(%d+) (%d+)$') "
    "  if n == nil or tonumber(exp) < now then redis.call('HDEL', KEYS[2], all[i]) "
    "  elseif all[i] ~= ARGV[4] then out[#out + 1] = all[i] out[#out + 1] = n end "
    "end "
    "return out";
static const char gate_deregister_lua[] = "local n = redis.call('DEL', KEYS[1]) "
                                          "redis.call('HDEL', KEYS[2], ARGV[3]) "
                                          "redis.call('PUBLISH', ARGV[2], ARGV[1]) return n";

static rconn_script_t *gate_script_register, *gate_script_deregister;

/* The connection balance (docs/gateway.md "Connection balance"): from the other gateways'
 * figures of a registration's reply, the share to send away now, oldest connections first;
 * a connection with a request in flight or a login under way is left for the next time. */
static void gate_rebalance(gate_t *g, const redisReply *peers)
{
    int64_t now = clock_mono_ms();
    if (g->cfg.rebalance_ms <= 0 || g->exit_step != 0 || !g->registered) {
        g->over_since_ms = 0;
        return;
    }
    long counts[64];
    size_t n = 0;
    for (size_t i = 0; i + 1 < peers->elements && n < sizeof counts / sizeof counts[0]; i += 2) {
        const redisReply *v = peers->element[i + 1];
        if (v->type != REDIS_REPLY_STRING)
            return;
        counts[n++] = strtol(v->str, NULL, 10);
    }
    long mine = (long)u64map_size(g->conn_by_player);
    gate_balance_opts_t o = {.slack_percent = g->cfg.rebalance_slack_percent,
                             .min_excess = 10,
                             .step_percent = g->cfg.rebalance_step_percent};
    long shed = gate_balance_shed(mine, counts, n, &o);
    if (shed <= 0) {
        g->over_since_ms = 0;
        return;
    }
    /* Only an imbalance that lasted a whole period: players connecting at start, a rollout's
     * GoAways and a crash's reconnects move the figures for a few seconds, and each gateway's
     * count is up to a registration old. */
    if (g->over_since_ms == 0)
        g->over_since_ms = now;
    if (now - g->over_since_ms < g->cfg.rebalance_ms ||
        now - g->rebalanced_ms < g->cfg.rebalance_ms)
        return;
    g->rebalanced_ms = now;
    long sent = 0;
    uint32_t spread = (uint32_t)g->cfg.goaway_spread_ms;
    gate_conn_t *c, *next;
    for (c = TAILQ_FIRST(&g->conns); c != NULL && sent < shed; c = next) {
        next = TAILQ_NEXT(c, all);
        if (c->closing || c->player == 0 || c->inflight > 0 || c->login_busy)
            continue;
        gate_conn_goaway(c, CROUPIER__GO_AWAY_REASON__GOAWAY_REBALANCE,
                         arc4random_uniform(spread + 1),
                         "rebalancing the gateways' connections: reconnect");
        gate_conn_close(c, "rebalance");
        sent++;
    }
    long total = mine;
    for (size_t i = 0; i < n; i++)
        total += counts[i];
    log_emit(LOG_INFO, "gate_rebalance", "{s:I,s:I,s:I,s:I,s:I}", "connections", (json_int_t)mine,
             "gateways", (json_int_t)(n + 1), "total", (json_int_t)total, "shed", (json_int_t)shed,
             "sent", (json_int_t)sent);
}

static void gate_register_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_t *g = arg;
    bool ok = reply != NULL && reply->type == REDIS_REPLY_ARRAY;
    if (ok && !g->registered)
        log_emit(LOG_INFO, "gate_registered", "{s:s,s:s}", "id", g->gate_id, "address",
                 g->advertise);
    if (g->exit_step == 0)
        g->registered = ok;
    if (ok)
        gate_rebalance(g, reply);
}

static void gate_register_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    if (g->exit_step != 0 || !rconn_connected(g->rc))
        return;
    char key[128], ttl[24];
    snprintf(key, sizeof key, GATE_KEY_PREFIX "%s", g->gate_id);
    json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "id", g->gate_id, "address", g->advertise, "state",
                          "ready", "version", g->version);
    char *val = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (val == NULL)
        return; /* out of memory: the next tick tries again */
    snprintf(ttl, sizeof ttl, "%d", g->cfg.gate_ttl_ms);
    char conns[24];
    snprintf(conns, sizeof conns, "%zu", u64map_size(g->conn_by_player));
    const char *argv[] = {key, GATE_LOAD_KEY, val, ttl, GATE_CHANNEL, g->gate_id, conns};
    rconn_eval(g->rc, gate_script_register, gate_register_cb, g, 2, 7, argv, NULL);
    free(val);
}

/* Registers as soon as Redis answers (and again after every reconnect). */
/*
 * The connection came back -- perhaps to a replica promoted after a failover, which may lack the
 * last seat records written on the old master (docs/deploy.md "Failover and durability"): the
 * seats of the players connected here are written again from this gateway's own state, so a
 * player who reconnects through another gateway still finds theirs.
 */
static void gate_seats_republish(gate_t *g)
{
    gate_conn_t *c;
    size_t n = 0;
    TAILQ_FOREACH(c, &g->conns, all)
    {
        if (c->player != 0 && c->seat_known && c->seat != NULL && !c->closing) {
            gate_seat_store(g, c->player, c->seat);
            n++;
        }
    }
    if (n > 0)
        log_emit(LOG_INFO, "seats_republished", "{s:I}", "seats", (json_int_t)n);
}

static void gate_redis_state_cb(rconn_t *rc, bool connected, void *arg)
{
    gate_t *g = arg;
    if (connected) {
        gate_register_tick_cb(-1, 0, g);
        if (rconn_connect_count(rc) > 1)
            gate_seats_republish(g);
    } else {
        g->registered = false;
    }
}

static void gate_deregister_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_t *g = arg;
    log_emit(LOG_INFO, "gate_deregistered", "{s:s,s:b}", "id", g->gate_id, "ok",
             reply != NULL && reply->type == REDIS_REPLY_INTEGER);
    if (g->exit_step == 1)
        gate_exit_step(g);
}

/* ---- the four-step exit ---------------------------------------------------------------------- */

static void gate_exit_goaway_all(gate_t *g)
{
    gate_conn_t *c, *next;
    uint32_t spread = (uint32_t)g->cfg.goaway_spread_ms;
    for (c = TAILQ_FIRST(&g->conns); c != NULL; c = next) {
        next = TAILQ_NEXT(c, all);
        if (c->closing)
            continue;
        gate_conn_goaway(c, CROUPIER__GO_AWAY_REASON__GOAWAY_SHUTDOWN,
                         arc4random_uniform(spread + 1), "gateway restarting: reconnect");
        gate_conn_close(c, "shutdown");
    }
}

static void gate_exit_finish(gate_t *g)
{
    g->exit_step = 4;
    evtimer_del(g->exit_timer);
    gate_conn_t *c;
    while ((c = TAILQ_FIRST(&g->conns)) != NULL) {
        g->exit_forced = true;
        gate_conn_free(c);
    }
    log_emit(LOG_INFO, "exit", "{s:s,s:s}", "message",
             g->exit_forced ? "exit reason=forced" : "exit reason=drained", "reason",
             g->exit_forced ? "forced" : "drained");
    if (g->cfg.on_exit != NULL)
        g->cfg.on_exit(g, g->cfg.exit_arg);
}

/* Advances the exit machine by one step (called from its timer, Redis replies and the last
 * connection's free). */
static void gate_exit_step(gate_t *g)
{
    switch (g->exit_step) {
    case 1: {
        /* deregistered (or timed out): step 3, the drain window. */
        g->exit_step = 2;
        log_emit(LOG_INFO, "gate_drain_window", "{s:i,s:I}", "ms", g->cfg.drain_window_ms,
                 "connections", (json_int_t)atomic_load(&g->nconns));
        struct timeval tv = {g->cfg.drain_window_ms / 1000, (g->cfg.drain_window_ms % 1000) * 1000};
        evtimer_add(g->exit_timer, &tv);
        return;
    }
    case 2: {
        /* step 4: stop listening, GoAway, graceful closes, bounded. */
        g->exit_step = 3;
        if (g->listener != NULL) {
            evconnlistener_free(g->listener);
            g->listener = NULL;
        }
        if (g->ws_listener != NULL) {
            evconnlistener_free(g->ws_listener);
            g->ws_listener = NULL;
        }
        log_emit(LOG_INFO, "gate_closing_clients", "{s:I}", "connections",
                 (json_int_t)atomic_load(&g->nconns));
        gate_exit_goaway_all(g);
        int ms = g->cfg.close_timeout_ms + 100;
        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
        evtimer_add(g->exit_timer, &tv);
        if (TAILQ_EMPTY(&g->conns))
            gate_exit_finish(g);
        return;
    }
    case 3:
        gate_exit_finish(g);
        return;
    default:
        return;
    }
}

static void gate_exit_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    if (g->exit_step == 1)
        log_emit(LOG_WARN, "gate_deregister_timeout", NULL);
    gate_exit_step(g);
}

void gate_exit_begin(gate_t *g)
{
    if (g->exit_step == 2) {
        /* A second request skips the rest of the drain window. */
        evtimer_del(g->exit_timer);
        gate_exit_step(g);
        return;
    }
    if (g->exit_step != 0)
        return;
    /* step 1: readiness 503 */
    g->exit_step = 1;
    atomic_store(&g->ready_flag, false);
    if (g->cfg.drain != NULL)
        drain_start(g->cfg.drain);
    log_emit(LOG_INFO, "gate_exit_begin", "{s:I}", "connections",
             (json_int_t)atomic_load(&g->nconns));
    /* step 2: deregister (bounded by 1 s) */
    evtimer_del(g->register_ev);
    g->registered = false;
    char key[128], val[160];
    snprintf(key, sizeof key, GATE_KEY_PREFIX "%s", g->gate_id);
    snprintf(val, sizeof val, "{\"op\":\"del\",\"id\":\"%s\"}", g->gate_id);
    const char *argv[] = {key, GATE_LOAD_KEY, val, GATE_CHANNEL, g->gate_id};
    struct timeval tv = {1, 0};
    evtimer_add(g->exit_timer, &tv);
    if (rconn_eval(g->rc, gate_script_deregister, gate_deregister_cb, g, 2, 5, argv, NULL) != 0) {
        log_emit(LOG_WARN, "gate_deregister_failed", "{s:s}", "error", "redis not connected");
        evtimer_del(g->exit_timer);
        gate_exit_step(g);
    }
}

static void gate_exit_ev_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    if (g->exit_step == 3) {
        if (TAILQ_EMPTY(&g->conns))
            gate_exit_finish(g);
        return;
    }
    if (g->exit_step == 0)
        gate_exit_begin(g);
}

void gate_exit_request(gate_t *g)
{
    event_active(g->exit_ev, EV_READ, 0);
}

/* ---- create / destroy ---------------------------------------------------------------------- */

static int gate_listen_fd(const config_addr_t *a)
{
    int v6 = strchr(a->host, ':') != NULL;
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    if (v6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)a->port);
        inet_pton(AF_INET6, a->host, &s6->sin6_addr);
        len = sizeof *s6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)a->port);
        inet_pton(AF_INET, a->host, &s4->sin_addr);
        len = sizeof *s4;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4096) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        return fd;
    return fd;
}

static int gate_fd_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/*
 * A registry change. The seats at a server are judged again (gate_check_server, on the next
 * iteration) when its entry is removed or names another epoch or address than the gateway last
 * saw: not on a load or state change, which are frequent. A ready link to the entry's address
 * learns the process's epoch from it (a process that regained its slot under a new epoch keeps
 * its floor), or its server id when its hello came before it had one ("unassigned").
 */
static void gate_view_change_cb(registry_view_t *v, const registry_entry_t *e, bool removed,
                                void *arg)
{
    (void)v;
    gate_t *g = arg;
    log_emit(LOG_DEBUG, "registry_change", "{s:s,s:s,s:s,s:I,s:b}", "id", e->id, "address",
             e->address, "state", registry_state_name(e->state), "epoch", (json_int_t)e->epoch,
             "removed", removed);
    size_t i;
    for (i = 0; i < g->nseen && strcmp(g->seen[i].id, e->id) != 0; i++)
        ;
    if (removed) {
        if (i < g->nseen)
            g->seen[i] = g->seen[--g->nseen];
        gate_check_queue(g, e->id);
        return;
    }
    if (i == g->nseen) {
        if (g->nseen == g->capseen) {
            g->capseen = g->capseen ? g->capseen * 2 : 16;
            g->seen = xreallocarray(g->seen, g->capseen, sizeof *g->seen);
        }
        g->nseen++;
        g->seen[i].epoch = -1;
    }
    if (g->seen[i].epoch != e->epoch || strcmp(g->seen[i].address, e->address) != 0) {
        snprintf(g->seen[i].id, sizeof g->seen[i].id, "%s", e->id);
        snprintf(g->seen[i].address, sizeof g->seen[i].address, "%s", e->address);
        g->seen[i].epoch = e->epoch;
        gate_check_queue(g, e->id);
    }
    gate_link_t *fl = gate_link_find(g, e->address);
    if (fl != NULL && fl->state == LINK_READY &&
        (strcmp(fl->ack_server_id, e->id) == 0 || fl->known_epoch == 0)) {
        if (strcmp(fl->ack_server_id, e->id) != 0) {
            snprintf(fl->ack_server_id, sizeof fl->ack_server_id, "%s", e->id);
            fl->floor_epoch = e->epoch;
        }
        if (e->epoch > fl->known_epoch)
            fl->known_epoch = e->epoch;
        if (fl->floor_epoch == 0)
            fl->floor_epoch = e->epoch;
    }
    /* One link per game server, opened as soon as the server is known. */
    gate_link_t *l = gate_link_get(g, e->address, e->id);
    if (l->timer == NULL)
        l->timer = evtimer_new(g->base, gate_link_timer_cb, l);
    if (l->state == LINK_DOWN && clock_mono_ms() >= l->down_until_ms &&
        !evtimer_pending(l->timer, NULL))
        gate_link_connect(l);
}

/* The WebSocket listener (cfg.ws_listen): the same connections behind gate_ws.h. 0 or a
 * negative errno with a log line. */
static int gate_ws_listen(gate_t *g)
{
    int fd = gate_listen_fd(&g->cfg.ws_listen);
    if (fd < 0) {
        log_emit(LOG_FATAL, "listen_failed", "{s:s,s:s,s:i,s:s}", "transport", "ws", "host",
                 g->cfg.ws_listen.host, "port", g->cfg.ws_listen.port, "error", strerror(-fd));
        return fd;
    }
    g->ws_port = gate_fd_port(fd);
    gate_ws_config_t wc = {.path = g->cfg.ws_path,
                           .origins = g->cfg.ws_origins,
                           .max_msg = g->lim.max_frame,
                           .metrics = g->cfg.metrics};
    g->ws_srv = gate_ws_server_create(&wc);
    if (g->ws_srv == NULL) {
        close(fd);
        return -ENOMEM;
    }
    g->ws_listener =
        evconnlistener_new(g->base, gate_ws_accept_cb, g, LEV_OPT_CLOSE_ON_FREE, -1, fd);
    return 0;
}

int gate_create(const gate_config_t *cfg, gate_t **out)
{
    if (cfg->base == NULL || cfg->secret == NULL || cfg->gate_id == NULL || cfg->metrics == NULL)
        return -EINVAL;
    if (cfg->version != NULL && strlen(cfg->version) >= sizeof((gate_t *)0)->version)
        return -EINVAL;
    gate_t *g = xcalloc(1, sizeof *g);
    g->cfg = *cfg;
    g->base = cfg->base;
    for (int k = 0; k < GATE_REQ_KINDS; k++)
        if (g->cfg.budget_ms[k] <= 0)
            g->cfg.budget_ms[k] = gate_default_budget[k];
    g->lim = frame_limits_default;
    if (cfg->max_frame > 0)
        g->lim.max_frame = cfg->max_frame;
    g->fid_reply =
        protobuf_c_message_descriptor_get_field_by_name(&croupier__rpc_frame__descriptor, "reply")
            ->id;
    g->fid_payload =
        protobuf_c_message_descriptor_get_field_by_name(&croupier__reply__descriptor, "payload")
            ->id;
    g->fid_push =
        protobuf_c_message_descriptor_get_field_by_name(&croupier__rpc_frame__descriptor, "push")
            ->id;
    g->fid_request_id = protobuf_c_message_descriptor_get_field_by_name(
                            &croupier__server_message__descriptor, "request_id")
                            ->id;
    /* Rpc frames are read with the default limits; their payloads go out under g->lim. */
    g->forward = g->lim.max_string >= frame_limits_default.max_string;
    /* Actions go out as the client's bytes in an RpcFrame written by gate_req_write_action(),
     * which uses the field numbers of rpc.proto: checked here against the descriptors. */
    g->fid_client_action = protobuf_c_message_descriptor_get_field_by_name(
                               &croupier__client_message__descriptor, "action")
                               ->id;
    g->fid_action =
        protobuf_c_message_descriptor_get_field_by_name(&croupier__rpc_frame__descriptor, "action")
            ->id;
    static const struct {
        const char *name;
        uint32_t id;
    } rpc_fields[] = {{"request_id", 1}, {"deadline_unix_ms", 3}, {"budget_ms", 8},
                      {"player_id", 4},  {"session_id", 5},       {"client_request_id", 6}};
    g->forward_action = true;
    for (size_t i = 0; i < sizeof rpc_fields / sizeof rpc_fields[0]; i++) {
        const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field_by_name(
            &croupier__rpc_frame__descriptor, rpc_fields[i].name);
        if (fd == NULL || fd->id != rpc_fields[i].id ||
            (fd->type != PROTOBUF_C_TYPE_UINT64 && fd->type != PROTOBUF_C_TYPE_UINT32))
            g->forward_action = false;
    }
#define GATE_DEF(f, v)                                                                             \
    if (g->cfg.f <= 0)                                                                             \
    g->cfg.f = (v)
    GATE_DEF(output_cap, 256 * 1024);
    GATE_DEF(rate_per_s, 50);
    GATE_DEF(rate_burst, 100);
    GATE_DEF(max_inflight, 16);
    GATE_DEF(idle_timeout_ms, 60000);
    GATE_DEF(link_ping_ms, 1000);
    GATE_DEF(seat_ttl_s, 3600);
    GATE_DEF(replay_code_ttl_s, 7 * 86400);
    GATE_DEF(gate_ttl_ms, 6000);
    GATE_DEF(close_timeout_ms, 5000);
    GATE_DEF(goaway_spread_ms, 1000);
    GATE_DEF(rebalance_slack_percent, 20);
    GATE_DEF(rebalance_step_percent, 5);
    GATE_DEF(player_rate_per_s, 50);
    GATE_DEF(player_rate_burst, 100);
#undef GATE_DEF
    /* Deadlines: 0 = the default, negative = off. Caps: 0 or negative = none. */
#define GATE_DEADLINE(f, v)                                                                        \
    if (g->cfg.f == 0)                                                                             \
        g->cfg.f = (v);                                                                            \
    else if (g->cfg.f < 0)                                                                         \
    g->cfg.f = 0
    GATE_DEADLINE(handshake_timeout_ms, 5000);
    GATE_DEADLINE(login_timeout_ms, 10000);
    GATE_DEADLINE(frame_timeout_ms, 10000);
    GATE_DEADLINE(write_timeout_ms, 30000);
#undef GATE_DEADLINE
    if (g->cfg.max_conns < 0)
        g->cfg.max_conns = 0;
    if (g->cfg.max_conns_per_addr < 0)
        g->cfg.max_conns_per_addr = 0;
    if (g->cfg.drain_window_ms < 0)
        g->cfg.drain_window_ms = 0;
    snprintf(g->gate_id, sizeof g->gate_id, "%s", cfg->gate_id);
    TAILQ_INIT(&g->conns);
    TAILQ_INIT(&g->unauth);
    TAILQ_INIT(&g->links);
    LIST_INIT(&g->reqs);
    TAILQ_INIT(&g->dirty_conns);
    TAILQ_INIT(&g->dirty_links);
    TAILQ_INIT(&g->dirty_watch);
    g->flush_ev = event_new(g->base, -1, 0, gate_flush_cb, g);
    g->watch_slice_ev = evtimer_new(g->base, gate_watch_slice_cb, g);
    for (int k = 0; k < GATE_REQ_KINDS; k++) {
        struct timeval tv = {g->cfg.budget_ms[k] / 1000, (g->cfg.budget_ms[k] % 1000) * 1000};
        g->budget_tv[k] = event_base_init_common_timeout(g->base, &tv);
    }
    g->conn_by_id = u64map_create();
    g->conn_by_player = u64map_create();
    g->addr_conns = u64map_create();
    g->player_buckets = u64map_create();
    g->moves = u64map_create();
    g->crash_moves = u64map_create();
    g->check_ev = event_new(g->base, -1, 0, gate_check_cb, g);
    g->next_rid = ((uint64_t)arc4random() << 32 | arc4random()) & ~0xffffffULL;

    metrics_registry_t *m = cfg->metrics;
    g->m_conns = metrics_gauge(m, "gate_connections", NULL, "Client connections open");
    g->m_frames_in =
        metrics_counter(m, "gate_frames_in_total", NULL, "Client frames received and decoded");
    g->m_frames_out = metrics_counter(m, "gate_frames_out_total", NULL, "Frames sent to clients");
    static const double budget_bounds[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                           0.2,   0.3,   0.5,  0.8,   1.0,  2.0};
    g->m_budget = metrics_histogram(m, "gate_dispatch_budget_seconds", NULL,
                                    "Budget left when a request is sent to a game server",
                                    budget_bounds, sizeof budget_bounds / sizeof budget_bounds[0]);
    g->m_retries = metrics_counter(m, "gate_retries_total", NULL, "Request retries");
    g->m_slow = metrics_counter(m, "gate_slow_consumer_closes_total", NULL,
                                "Connections closed because their output passed the cap");
    g->m_links = metrics_gauge(m, "gate_rpc_links", NULL, "Rpc links to game servers ready");
    g->m_degraded = metrics_counter(m, "gate_degraded_responses_total", NULL,
                                    "Requests answered DEADLINE_EXCEEDED or UNAVAILABLE");
    g->m_bad_frames =
        metrics_counter(m, "gate_bad_frames_total", NULL, "Malformed or over-cap client frames");
    g->m_rate_limited =
        metrics_counter(m, "gate_rate_limited_total", NULL, "Frames refused by the rate limit");
    g->m_logins = metrics_counter(m, "gate_logins_total", NULL, "Successful logins");
    g->m_table_moves = metrics_counter(m, "gate_table_moves_total", NULL,
                                       "players moved with their whole table (Adopt answered)");
    g->m_reconnects = metrics_counter(m, "gate_reconnects_total", NULL,
                                      "Logins of a player whose seat was live (a reconnect)");
    g->m_moves_ok = metrics_counter(m, "gate_moves_total", "outcome=\"moved\"",
                                    "Players re-seated after their table closed");
    g->m_moves_failed = metrics_counter(m, "gate_moves_total", "outcome=\"failed\"",
                                        "Players re-seated after their table closed");
    g->m_servers_gone = metrics_counter(
        m, "gate_servers_gone_total", NULL,
        "Game server processes found gone (rpc link lost, registry entry expired or taken again)");
    g->m_stale_seats = metrics_counter(m, "gate_stale_seats_total", NULL,
                                       "Seats forgotten because their server was gone");
    gate_watch_init(g); /* its metrics and timer (gate_watch.c) */
    for (int i = 0; i < 2; i++) {
        const char *lab = i == 0 ? "transport=\"tcp\"" : "transport=\"ws\"";
        g->m_tconns[i] = metrics_gauge(m, "gate_transport_connections", lab,
                                       "Client connections open, by transport");
        g->m_tin[i] = metrics_counter(m, "gate_transport_frames_in_total", lab,
                                      "Client frames received and decoded, by transport");
        g->m_tout[i] = metrics_counter(m, "gate_transport_frames_out_total", lab,
                                       "Frames sent to clients, by transport");
    }
    for (int i = 0; i < 8; i++) {
        char lab[64];
        snprintf(lab, sizeof lab, "reason=\"%s\"", gate_reject_names[i]);
        g->m_reject[i] = metrics_counter(m, "gate_early_rejections_total", lab,
                                         "Requests refused before reaching a game server");
    }
    for (int i = 0; i < EDGE_CAUSES; i++) {
        char lab[64];
        if (i <= EDGE_MAX_PER_ADDR) {
            snprintf(lab, sizeof lab, "reason=\"%s\"", gate_edge_names[i]);
            g->m_edge[i] = metrics_counter(m, "gate_connections_refused_total", lab,
                                           "Client connections refused by a cap (GoAway "
                                           "OVERLOADED)");
        } else if (i <= EDGE_WRITE) {
            snprintf(lab, sizeof lab, "deadline=\"%s\"", gate_edge_names[i]);
            g->m_edge[i] = metrics_counter(m, "gate_deadline_closes_total", lab,
                                           "Client connections closed by an edge deadline");
        }
    }
    g->m_edge[EDGE_OUTPUT] = g->m_slow;
    g->m_edge[EDGE_EVICTED] = metrics_counter(
        m, "gate_connections_evicted_total", NULL,
        "Connections not logged in closed at --max-conns to make room for a new one");
    g->m_edge[EDGE_PLAYER_RATE] = metrics_counter(
        m, "gate_player_rate_limited_total", NULL,
        "Requests refused RATE_LIMITED by the per-player rate (all its connections)");
    static const char *const ga_names[7] = {"unspecified",    "shutdown", "session_replaced",
                                            "protocol_error", "idle",     "overloaded",
                                            "rebalance"};
    for (int i = 0; i < 7; i++) {
        char lab[64];
        snprintf(lab, sizeof lab, "reason=\"%s\"", ga_names[i]);
        g->m_goaway[i] = metrics_counter(m, "gate_goaways_total", lab, "GoAway frames sent");
    }

    int fd = gate_listen_fd(&cfg->listen);
    if (fd < 0) {
        log_emit(LOG_FATAL, "listen_failed", "{s:s,s:i,s:s}", "host", cfg->listen.host, "port",
                 cfg->listen.port, "error", strerror(-fd));
        int e = fd;
        u64map_destroy(g->conn_by_id);
        u64map_destroy(g->conn_by_player);
        u64map_destroy(g->addr_conns);
        u64map_destroy(g->player_buckets);
        u64map_destroy(g->moves);
        u64map_destroy(g->crash_moves);
        event_free(g->check_ev);
        event_free(g->flush_ev);
        if (g->watch_slice_ev != NULL)
            event_free(g->watch_slice_ev);
        free(g);
        return e;
    }
    g->port = gate_fd_port(fd);
    snprintf(g->version, sizeof g->version, "%s", cfg->version != NULL ? cfg->version : "");
    if (cfg->advertise != NULL)
        snprintf(g->advertise, sizeof g->advertise, "%s", cfg->advertise);
    else if (strchr(cfg->listen.host, ':') != NULL)
        snprintf(g->advertise, sizeof g->advertise, "[%s]:%d", cfg->listen.host, g->port);
    else
        snprintf(g->advertise, sizeof g->advertise, "%s:%d", cfg->listen.host, g->port);
    g->listener = evconnlistener_new(g->base, gate_accept_cb, g, LEV_OPT_CLOSE_ON_FREE, -1, fd);

    if (gate_script_register == NULL) {
        gate_script_register = rconn_script_create(gate_register_lua);
        gate_script_deregister = rconn_script_create(gate_deregister_lua);
        gate_script_seat_del = rconn_script_create(gate_seat_del_lua);
        gate_script_probe = rconn_script_create(gate_probe_lua);
        gate_script_list = rconn_script_create(LOBBY_LIST_LUA);
    }
    rconn_opts_t ro = {.host = cfg->redis.host,
                       .port = cfg->redis.port,
                       .name = "gate",
                       .on_state = gate_redis_state_cb,
                       .arg = g,
                       .sentinels = cfg->redis_sentinels,
                       .master_name = cfg->redis_master,
                       .cluster = cfg->redis_cluster};
    g->rc = rconn_create(g->base, &ro);
    rconn_opts_t so = {.host = cfg->redis.host,
                       .port = cfg->redis.port,
                       .name = "gate-sub",
                       .sentinels = cfg->redis_sentinels,
                       .master_name = cfg->redis_master,
                       .cluster = cfg->redis_cluster};
    g->sub = rconn_create(g->base, &so);
    if (g->sub != NULL)
        rconn_subscribe(g->sub, GATE_SESSION_CHANNEL, gate_session_msg_cb, g);
    if (g->sub != NULL)
        rconn_subscribe(g->sub, TOUR_EVENTS_CHANNEL, gate_tour_event_cb, g);
    registry_view_opts_t vo = {.host = cfg->redis.host,
                               .port = cfg->redis.port,
                               .sentinels = cfg->redis_sentinels,
                               .master_name = cfg->redis_master,
                               .cluster = cfg->redis_cluster,
                               .refresh_ms = 1000,
                               .metrics = cfg->metrics,
                               .on_change = gate_view_change_cb,
                               .arg = g};
    g->view = registry_view_create(g->base, &vo);
    if (g->rc == NULL || g->sub == NULL || g->view == NULL) {
        log_emit(LOG_FATAL, "redis_setup_failed", "{s:s,s:i}", "host", cfg->redis.host, "port",
                 cfg->redis.port);
        gate_destroy(g);
        return -EINVAL;
    }
    int wrc;
    if (cfg->ws_listen.host[0] != '\0' && (wrc = gate_ws_listen(g)) != 0) {
        gate_destroy(g);
        return wrc;
    }
    g->sweep_ev = event_new(g->base, -1, EV_PERSIST, gate_sweep_cb, g);
    struct timeval sweep = {0, 100000};
    event_add(g->sweep_ev, &sweep);
    g->register_ev = event_new(g->base, -1, EV_PERSIST, gate_register_tick_cb, g);
    int period = g->cfg.gate_ttl_ms / 3 > 0 ? g->cfg.gate_ttl_ms / 3 : 1;
    struct timeval rt = {period / 1000, (period % 1000) * 1000};
    event_add(g->register_ev, &rt);
    g->exit_ev = event_new(g->base, -1, 0, gate_exit_ev_cb, g);
    g->exit_timer = evtimer_new(g->base, gate_exit_timer_cb, g);
    log_emit(LOG_INFO, "gate_listening", "{s:s,s:i,s:s}", "id", g->gate_id, "port", g->port,
             "advertise", g->advertise);
    *out = g;
    return 0;
}

void gate_destroy(gate_t *g)
{
    if (g == NULL)
        return;
    g->cfg.drain = NULL; /* the owner may have freed the shell already */
    g->destroying = true;
    gate_conn_t *c;
    while ((c = TAILQ_FIRST(&g->conns)) != NULL)
        gate_conn_free(c);
    /* Pending seat lookups end here (their callbacks run with NULL and, the connections being
     * gone, free the requests they hold); the requests still alive are freed without answers
     * (nobody is left to read them); then the links. */
    rconn_destroy(g->rc);
    g->rc = NULL;
    gate_tour_shutdown(g);
    gate_req_t *r;
    while ((r = LIST_FIRST(&g->reqs)) != NULL)
        gate_req_free(r);
    gate_watch_shutdown(g);
    gate_link_t *l;
    while ((l = TAILQ_FIRST(&g->links)) != NULL)
        gate_link_free(l);
    if (g->listener != NULL)
        evconnlistener_free(g->listener);
    if (g->ws_listener != NULL)
        evconnlistener_free(g->ws_listener);
    gate_ws_server_destroy(g->ws_srv);
    registry_view_destroy(g->view);
    rconn_destroy(g->sub);
    if (g->sweep_ev != NULL)
        event_free(g->sweep_ev);
    if (g->register_ev != NULL)
        event_free(g->register_ev);
    if (g->exit_ev != NULL)
        event_free(g->exit_ev);
    if (g->exit_timer != NULL)
        event_free(g->exit_timer);
    if (g->flush_ev != NULL)
        event_free(g->flush_ev);
    if (g->watch_slice_ev != NULL)
        event_free(g->watch_slice_ev);
    gate_stage_release(g);
    while (g->req_free != NULL) {
        r = g->req_free;
        g->req_free = r->q.tqe_next;
        free(r);
    }
    if (g->check_ev != NULL)
        event_free(g->check_ev);
    free(g->check_ids);
    free(g->seen);
    u64map_destroy(g->moves);
    u64map_destroy(g->crash_moves);
    u64map_destroy(g->conn_by_id);
    u64map_destroy(g->conn_by_player);
    u64map_destroy(g->addr_conns);
    u64map_each(g->player_buckets, gate_bucket_free_one, NULL);
    u64map_destroy(g->player_buckets);
    free(g);
}

int gate_port_ws(const gate_t *g)
{
    return g->ws_port;
}

int gate_port(const gate_t *g)
{
    return g->port;
}

bool gate_ready(const gate_t *g)
{
    return atomic_load(&g->ready_flag);
}

long gate_connections(const gate_t *g)
{
    return atomic_load(&g->nconns);
}
