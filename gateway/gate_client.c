/*
 * gate_client.c -- client requests: what each ClientMessage does at the gateway
 * (docs/protocol.md, docs/gateway.md "Client flow").
 */
#include "gate_int.h"

/* ---- client requests ---------------------------------------------------------------------------
 */

/* Completes a login: the LoginResult, with the wallet's balance when it was read. */
static void gate_login_send(gate_conn_t *c, uint64_t rid, bool has_chips, int64_t chips)
{
    c->login_busy = false;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__LoginResult lr = CROUPIER__LOGIN_RESULT__INIT;
    sm.has_request_id = true;
    sm.request_id = rid;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT;
    sm.login_result = &lr;
    lr.player_id = c->player;
    lr.session_id = c->session;
    lr.has_seated = c->seat_known; /* absent: unknown (the seat store did not answer) */
    lr.seated = c->seat != NULL;
    lr.has_chips = has_chips; /* absent: the wallet could not be read */
    lr.chips = chips;
    lr.has_server_time_ms = true;
    lr.server_time_ms = (uint64_t)clock_wall_ms();
    gate_conn_send(c, &sm);
}

/* The wallet read at login (GET): its balance (nil: no wallet yet, 0 chips) in the LoginResult;
 * absent when Redis did not answer or the value is no integer. Chips at a table are not in it
 * (the Snapshot's seats carry them). */
static void gate_login_wallet_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_lookup_t *lk = arg;
    gate_conn_t *c = gate_conn_get(lk->g, lk->conn_id);
    if (c != NULL && !c->closing && c->session == lk->session) {
        bool has = false;
        long long chips = 0;
        if (reply != NULL && reply->type == REDIS_REPLY_NIL) {
            has = true;
        } else if (reply != NULL && reply->type == REDIS_REPLY_STRING && reply->len > 0 &&
                   reply->len < 24) {
            char buf[24], *end;
            memcpy(buf, reply->str, reply->len);
            buf[reply->len] = '\0';
            errno = 0;
            chips = strtoll(buf, &end, 10);
            has = errno == 0 && *end == '\0';
        }
        gate_login_send(c, lk->rid, has, has ? (int64_t)chips : 0);
    }
    free(lk);
}

/* The seat read from Redis: completes a login (LoginResult) or resumes a waiting request. */
static void gate_seat_lookup_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_lookup_t *lk = arg;
    gate_t *g = lk->g;
    gate_conn_t *c = gate_conn_get(g, lk->conn_id);
    if (c != NULL && (c->closing || c->session != lk->session))
        c = NULL;
    if (c != NULL) {
        gate_seat_t s;
        if (reply != NULL && reply->type == REDIS_REPLY_STRING &&
            gate_seat_parse(reply->str, reply->len, &s) == 0) {
            gate_conn_set_seat(c, &s);
            /* A login is not told of a seat that went with its server (gate_seat.h). */
            gate_seat_verdict_t v = lk->then == NULL ? gate_seat_check(g, &s) : GATE_SEAT_LIVE;
            if (v != GATE_SEAT_LIVE)
                gate_seat_forget(g, c->player, &s, v, "login");
            else if (lk->then == NULL)
                metrics_add(g->m_reconnects, 1); /* a login back to a live seat */
        } else if (reply != NULL && reply->type == REDIS_REPLY_NIL) {
            gate_conn_set_seat(c, NULL);
        }
    }
    if (lk->then != NULL) {
        if (c == NULL)
            gate_req_free(lk->then);
        else
            gate_client_dispatch(c, lk->then);
    } else if (c != NULL) {
        /* The wallet's balance next; the LoginResult goes out with it (gate_login_wallet_cb). */
        char key[64];
        if (g->cfg.money_by_entity)
            snprintf(key, sizeof key,
                     GATE_WALLET_ENTITY_PREFIX "%" PRIu64 GATE_WALLET_ENTITY_SUFFIX, c->player);
        else
            snprintf(key, sizeof key, GATE_WALLET_KEY_PREFIX "%" PRIu64, c->player);
        const char *argv[] = {"GET", key};
        if (rconn_command_argv(g->rc, gate_login_wallet_cb, lk, 2, argv, NULL) == 0)
            return; /* lk goes on to the callback */
        gate_login_send(c, lk->rid, false, 0);
    }
    free(lk);
}

static int gate_seat_lookup(gate_t *g, gate_conn_t *c, uint64_t rid, gate_req_t *then)
{
    gate_lookup_t *lk = xcalloc(1, sizeof *lk);
    lk->g = g;
    lk->conn_id = c->id;
    lk->session = c->session;
    lk->rid = rid;
    lk->then = then;
    char key[64];
    gate_seat_key(c->player, key, sizeof key);
    const char *argv[] = {"GET", key};
    int rc = rconn_command_argv(g->rc, gate_seat_lookup_cb, lk, 2, argv, NULL);
    if (rc != 0)
        free(lk);
    return rc;
}

/* A login on another gateway: the player's connection here (if any) is replaced. */
void gate_session_msg_cb(rconn_t *rc, const char *channel, const char *data, size_t len, void *arg)
{
    (void)rc;
    (void)channel;
    gate_t *g = arg;
    char buf[192], gid[96];
    unsigned long long player, session;
    if (len >= sizeof buf)
        return;
    memcpy(buf, data, len);
    buf[len] = '\0';
    if (sscanf(buf, "%llu %llu %95s", &player, &session, gid) != 3 || strcmp(gid, g->gate_id) == 0)
        return;
    uint64_t cid;
    if (!u64map_get(g->conn_by_player, player, &cid))
        return;
    gate_conn_t *c = gate_conn_get(g, cid);
    if (c == NULL || c->closing)
        return;
    log_emit(LOG_INFO, "session_replaced", "{s:I,s:I,s:s}", "player", (json_int_t)player,
             "old_conn", (json_int_t)c->id, "by_gate", gid);
    u64map_del(g->conn_by_player, player);
    gate_conn_goaway(c, CROUPIER__GO_AWAY_REASON__GOAWAY_SESSION_REPLACED, 0,
                     "a newer login of this player on another gateway took the session over");
    gate_conn_close(c, "session_replaced");
}

void gate_client_login(gate_conn_t *c, Croupier__ClientMessage *m)
{
    gate_t *g = c->g;
    if (c->player != 0) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__ALREADY_LOGGED_IN,
                        "this connection is logged in already");
        return;
    }
    uint64_t player;
    const char *tok = m->login->token;
    token_result_t tr =
        token_verify(g->cfg.secret, tok, strlen(tok), clock_wall_ms() / 1000, &player, NULL);
    if (tr != TOKEN_OK) {
        metrics_add(g->m_reject[REJ_TOKEN], 1);
        gate_conn_error(c, m->request_id,
                        tr == TOKEN_EXPIRED ? CROUPIER__ERROR_CODE__TOKEN_EXPIRED
                                            : CROUPIER__ERROR_CODE__TOKEN_INVALID,
                        tr == TOKEN_EXPIRED ? "token expired" : "token invalid");
        return;
    }
    uint64_t old;
    if (u64map_get(g->conn_by_player, player, &old)) {
        gate_conn_t *oc = gate_conn_get(g, old);
        if (oc != NULL && oc != c) {
            log_emit(LOG_INFO, "session_replaced", "{s:I,s:I,s:I}", "player", (json_int_t)player,
                     "old_conn", (json_int_t)oc->id, "new_conn", (json_int_t)c->id);
            u64map_del(g->conn_by_player, player);
            gate_conn_goaway(oc, CROUPIER__GO_AWAY_REASON__GOAWAY_SESSION_REPLACED, 0,
                             "a newer login of this player took the session over");
            gate_conn_close(oc, "session_replaced");
        }
    }
    c->player = player;
    gate_conn_unauth_remove(c);
    c->session = ((uint64_t)arc4random() << 32 | arc4random()) | 1;
    u64map_put(g->conn_by_player, player, c->id);
    metrics_add(g->m_logins, 1);
    /* Other gateways close their connection of this player (one live session in all). */
    char note[128];
    snprintf(note, sizeof note, "%" PRIu64 " %" PRIu64 " %s", player, c->session, g->gate_id);
    const char *pargv[] = {"PUBLISH", GATE_SESSION_CHANNEL, note};
    rconn_command_argv(g->rc, gate_redis_ignore_cb, NULL, 3, pargv, NULL);
    c->login_busy = true;
    c->login_rid = m->request_id;
    if (gate_seat_lookup(g, c, m->request_id, NULL) != 0) {
        /* Redis is unreachable: the seat stays unknown and is looked up again when needed. */
        gate_lookup_t *lk = xcalloc(1, sizeof *lk);
        lk->g = g;
        lk->conn_id = c->id;
        lk->session = c->session;
        lk->rid = m->request_id;
        gate_seat_lookup_cb(g->rc, NULL, lk);
    }
}

/*
 * A client request with its seat known: requests that need a seat go to the seat's server
 * (NOT_SEATED at once when there is none), a join goes to the seat's server when the player
 * holds one (the server answers a Snapshot), else to a registry pick.
 */
void gate_client_dispatch(gate_conn_t *c, gate_req_t *r)
{
    gate_t *g = c->g;
    if (u64map_get(g->crash_moves, c->player, NULL)) {
        /* The gateway is moving the player off a gone server: answered once that is done. */
        gate_req_fail(r, CROUPIER__ERROR_CODE__UNAVAILABLE,
                      "your table's server stopped; you are being moved to another table");
        return;
    }
    if (c->seat != NULL) {
        /* A seat whose server is gone (gate_seat.h) went with it: forgotten at once. */
        gate_seat_verdict_t v = gate_seat_check(g, c->seat);
        if (v != GATE_SEAT_LIVE)
            gate_seat_forget(g, c->player, c->seat, v, "request");
    }
    const gate_seat_t *made_for = r->kind == GATE_REQ_ACTION || r->kind == GATE_REQ_LEAVE
                                      ? gate_conn_expired_seat(c, r->client_rid)
                                      : NULL;
    if (made_for != NULL && (c->seat == NULL || !gate_seat_same(c->seat, made_for))) {
        /* Sent again after DEADLINE_EXCEEDED, and the player holds another seat by now (moved,
         * or the seat was lost): the request is still the one made for the earlier seat. It
         * goes there (whose server answers a repeat from memory), or ends TABLE_CLOSED when that
         * server is gone -- never to the seat taken since, where it would be another move. */
        if (gate_seat_check(g, made_for) != GATE_SEAT_LIVE) {
            gate_req_fail(r, CROUPIER__ERROR_CODE__TABLE_CLOSED, GATE_TABLE_GONE_MSG);
            return;
        }
        r->target = *made_for;
        r->have_target = true;
        r->seat_target = true;
        gate_req_dispatch(r);
        return;
    }
    if (c->seat != NULL && r->room) {
        gate_req_fail(r, CROUPIER__ERROR_CODE__ALREADY_SEATED,
                      "you hold a seat: leave it (or Resume it) before a private room");
        return;
    }
    if (c->seat != NULL) {
        r->target = *c->seat;
        r->have_target = true;
        r->seat_target = true;
    } else if (!c->seat_known) {
        /* Without the seat store a join could seat the player twice: refuse (retriable). */
        gate_req_fail(r, CROUPIER__ERROR_CODE__UNAVAILABLE, "seat store unreachable");
        return;
    } else if (r->kind != GATE_REQ_JOIN) {
        metrics_add(g->m_reject[REJ_NOT_SEATED], 1);
        if (c->seat_lost)
            gate_req_fail(r, CROUPIER__ERROR_CODE__TABLE_CLOSED, GATE_TABLE_GONE_MSG);
        else
            gate_req_fail(r, CROUPIER__ERROR_CODE__NOT_SEATED, "you hold no seat");
        return;
    }
    gate_req_dispatch(r);
}

/*
 * Whether a request keeps the client's message after gate_client_request() (r->msg): a resume
 * (its body is sent, maybe after retries) and an action whose bytes are not forwarded. Only
 * those are decoded on the heap; every other message lives in the read loop's scratch.
 */
bool gate_msg_kept(int body_case, size_t act_len)
{
    return body_case == CROUPIER__CLIENT_MESSAGE__BODY_RESUME ||
           body_case == CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM ||
           (body_case == CROUPIER__CLIENT_MESSAGE__BODY_ACTION && act_len == 0);
}

/* A client request that needs a game server. act/act_len: the Action's bytes inside the
 * client's frame (NULL for other kinds, or when they cannot be forwarded as they are). m may
 * live in the read loop's scratch: it is freed here unless gate_msg_kept() says otherwise. */
void gate_client_request(gate_conn_t *c, Croupier__ClientMessage *m, gate_req_kind_t kind,
                         const uint8_t *act, size_t act_len)
{
    gate_t *g = c->g;
    if (c->player == 0 || c->login_busy) {
        metrics_add(g->m_reject[REJ_UNAUTH], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAUTHENTICATED,
                        c->player == 0 ? "log in first" : "login not complete");
        frame_free_client(m);
        return;
    }
    if (g->exit_step >= 3) {
        metrics_add(g->m_reject[REJ_DRAINING], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__DRAINING, "gateway closing");
        frame_free_client(m);
        return;
    }
    if (c->inflight >= g->cfg.max_inflight) {
        metrics_add(g->m_reject[REJ_INFLIGHT], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__OVERLOADED,
                        "too many requests in flight");
        frame_free_client(m);
        return;
    }
    gate_req_t *r = gate_req_new(g, kind, c->player, c->session);
    r->conn_id = c->id;
    r->client_rid = m->request_id;
    r->msg = m;
    if (act != NULL && act_len > 0 && act_len <= sizeof r->action) {
        memcpy(r->action, act, act_len);
        r->action_len = act_len;
    }
    c->inflight++;
    frame_error_t ferr;
    if (kind == GATE_REQ_JOIN && m->body_case == CROUPIER__CLIENT_MESSAGE__BODY_JOIN_ROOM &&
        !room_code_valid(m->join_room->code)) {
        gate_req_fail(r, CROUPIER__ERROR_CODE__BAD_REQUEST, "a room code is 6 digits");
        return;
    }
    if (kind == GATE_REQ_JOIN && m->body_case == CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM &&
        frame_check_room_rules(m->create_room->rules, "CreateRoom.rules", &ferr) != 0) {
        gate_req_fail(r, CROUPIER__ERROR_CODE__BAD_REQUEST, ferr.detail);
        return;
    }
    if (kind == GATE_REQ_JOIN && m->body_case == CROUPIER__CLIENT_MESSAGE__BODY_JOIN_ROOM) {
        r->room = true; /* its engine, game and stake come with its record */
        snprintf(r->room_code, sizeof r->room_code, "%s", m->join_room->code);
        r->game[0] = '\0';
    } else if (kind == GATE_REQ_JOIN) {
        /* body is a oneof (a union): create_room is only meaningful for a CreateRoom. */
        const Croupier__CreateRoom *cr =
            m->body_case == CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM ? m->create_room : NULL;
        r->room = cr != NULL;
        r->room_code[0] = '\0';
        r->engine = cr != NULL ? cr->engine : m->join->engine;
        r->stake = cr != NULL ? cr->stake : m->join->stake;
        const char *game = cr != NULL ? cr->game : m->join->game;
        snprintf(r->game, sizeof r->game, "%s", game);
        if (strlen(game) >= sizeof r->game) {
            gate_req_fail(r, CROUPIER__ERROR_CODE__NO_SUCH_GAME, "game name too long");
            return;
        }
    }
    if (kind == GATE_REQ_LEAVE)
        r->disband = m->leave->has_disband_room && m->leave->disband_room;
    if (!gate_msg_kept(m->body_case, r->action_len)) {
        r->msg = NULL;
        frame_free_client(m);
        m = NULL;
    }
    if (!c->seat_known && gate_seat_lookup(g, c, r->client_rid, r) == 0)
        return; /* dispatched when the seat is known */
    gate_client_dispatch(c, r);
}
