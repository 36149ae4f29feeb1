/*
 * gate_req.c -- requests: routing to a server, per-kind deadline budgets, retries within
 * the budget with the same request id, table moves (reseat, adopt; docs/gateway.md "Table
 * moves").
 */
#include "gate_int.h"

/* ---- requests ----------------------------------------------------------------------------------
 */

/* Ends a request: unlinked, its timer stopped, its record kept for reuse (or freed). */

void gate_req_free(gate_req_t *r)
{
    if (r->room_lk != NULL)
        r->room_lk->r = NULL;
    if (r->kind == GATE_REQ_WATCH)
        gate_watch_req_gone(r); /* gate_watch.c: a Watch that ended unanswered */
    LIST_REMOVE(r, live);
    gate_req_unlink(r);
    if (r->timer != NULL)
        event_del(r->timer);
    gate_conn_t *c = gate_conn_get(r->g, r->conn_id);
    if (c != NULL && c->inflight > 0 && !r->internal && !r->reseat)
        c->inflight--;
    frame_free_client(r->msg);
    if (r->g->nreq_free < GATE_REQ_KEEP) {
        r->q.tqe_next = r->g->req_free; /* the queue entry links the free list */
        r->g->req_free = r;
        r->g->nreq_free++;
    } else {
        free(r);
    }
}

/* The connection a reply goes to: the one that asked, if it still holds the same session. */
gate_conn_t *gate_req_conn(gate_req_t *r)
{
    gate_conn_t *c = gate_conn_get(r->g, r->conn_id);
    if (c == NULL || c->closing || c->session != r->session)
        return NULL;
    return c;
}

static void gate_req_start_internal_leave(gate_t *g, uint64_t player, const gate_seat_t *seat);
static void gate_reseat_failed(gate_req_t *r, const char *why);

/* Ends a request with an error answered to its client (or handled for a move). */
void gate_req_fail(gate_req_t *r, int code, const char *message)
{
    gate_t *g = r->g;
    if (code == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED ||
        code == CROUPIER__ERROR_CODE__UNAVAILABLE)
        metrics_add(g->m_degraded, 1);
    if (r->reseat) {
        gate_reseat_failed(r, message);
    } else if (r->tour && (code == CROUPIER__ERROR_CODE__NOT_SEATED ||
                           code == CROUPIER__ERROR_CODE__TABLE_CLOSED)) {
        /* A TakeTournamentSeat whose table did not seat the player yet (it seats him when it
         * deals its next hand), or whose server is gone (another server claims the table after
         * the claim's TTL): he waits for his seat and asks again. */
        gate_conn_t *c = gate_req_conn(r);
        if (c != NULL)
            gate_conn_error_retriable(c, r->client_rid, CROUPIER__ERROR_CODE__NOT_SEATED, true,
                                      code == CROUPIER__ERROR_CODE__NOT_SEATED
                                          ? GATE_TOUR_WAIT_MSG
                                          : GATE_TOUR_TAKEOVER_MSG);
    } else if (!r->internal) {
        gate_conn_t *c = gate_req_conn(r);
        if (c != NULL && code == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED && r->seat_target &&
            r->have_target && r->client_rid != 0 &&
            (r->kind == GATE_REQ_ACTION || r->kind == GATE_REQ_LEAVE))
            gate_conn_expired_keep(c, r->client_rid, &r->target);
        if (c != NULL)
            gate_conn_error(c, r->client_rid, code, message);
    }
    gate_req_free(r);
}

static void gate_req_arm(gate_req_t *r, int64_t at_mono, int64_t now);

static void gate_req_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_req_t *r = arg;
    int64_t now = clock_mono_ms();
    if (now >= r->deadline_mono) {
        char msg[96];
        snprintf(msg, sizeof msg, "budget spent after %d attempt(s)%s%s", r->attempts,
                 r->last_code ? ", last error " : "",
                 r->last_code ? frame_error_code_name(r->last_code) : "");
        gate_req_fail(r, CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED, msg);
        return;
    }
    if (r->waiting_retry) {
        r->waiting_retry = false;
        gate_req_dispatch(r);
        return;
    }
    /* Early by the difference between libevent's cached time and this clock: wait the rest. */
    gate_req_arm(r, r->deadline_mono, now);
}

/*
 * Arms the request's timer for at_mono; now is the monotonic clock read by the caller. A whole
 * budget (a request's first dispatch) goes on libevent's common timeout queue of its kind: an
 * O(1) add and remove instead of the timer heap, since all of them have the same duration.
 */
static void gate_req_arm(gate_req_t *r, int64_t at_mono, int64_t now)
{
    int64_t ms = at_mono - now;
    if (ms < 0)
        ms = 0;
    if (ms == r->g->cfg.budget_ms[r->kind] && r->g->budget_tv[r->kind] != NULL) {
        evtimer_add(r->timer, r->g->budget_tv[r->kind]);
        return;
    }
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)((ms % 1000) * 1000)};
    evtimer_add(r->timer, &tv);
}

/*
 * A retriable failure (DRAINING, UNAVAILABLE, link lost): tries again after a short doubling
 * pause if what is left of the budget allows it, else answers DEADLINE_EXCEEDED. The request id
 * stays the same.
 */
void gate_req_retry(gate_req_t *r, int code, const char *why)
{
    gate_t *g = r->g;
    r->last_code = code;
    int64_t now = clock_mono_ms();
    int pause = 10 << (r->attempts < 5 ? r->attempts : 5);
    if (now + pause >= r->deadline_mono) {
        char msg[128];
        snprintf(msg, sizeof msg, "budget spent after %d attempt(s), last: %s", r->attempts, why);
        gate_req_fail(r, CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED, msg);
        return;
    }
    metrics_add(g->m_retries, 1);
    r->waiting_retry = true;
    gate_req_arm(r, now + pause, now);
}

/*
 * Picks a ready server offering game, skipping tried ones. Servers whose registry entry names
 * the request's engine number (registry_entry_t.engine_id) come first; a Join of ENGINE_GAME
 * (a table-kit game, routed by its game name alone) or of no engine prefers none. The gateway
 * compares numbers only: it knows no engine by name.
 */
/* FNV-1a of "offer|server": the rendezvous weight of a server for an offer. */
static uint64_t gate_offer_hash(const char *offer, const char *server)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = offer; *p != '\0'; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ULL;
    h = (h ^ '|') * 1099511628211ULL;
    for (const char *p = server; *p != '\0'; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ULL;
    return h;
}

/* Notes that an entry offers game now. */
static void gate_game_seen(gate_t *g, const char *game)
{
    unsigned oldest = 0;
    for (unsigned i = 0; i < g->noffered; i++) {
        if (strcmp(g->offered[i].game, game) == 0) {
            g->offered[i].seen_ms = clock_mono_ms();
            return;
        }
        if (g->offered[i].seen_ms < g->offered[oldest].seen_ms)
            oldest = i;
    }
    unsigned k = g->noffered < GATE_OFFERED_MAX ? g->noffered++ : oldest;
    snprintf(g->offered[k].game, sizeof g->offered[k].game, "%s", game);
    g->offered[k].seen_ms = clock_mono_ms();
}

/* Whether an entry offered game within GATE_OFFERED_RECENT_MS. */
static bool gate_game_offered_recently(const gate_t *g, const char *game)
{
    for (unsigned i = 0; i < g->noffered; i++)
        if (strcmp(g->offered[i].game, game) == 0)
            return clock_mono_ms() - g->offered[i].seen_ms < GATE_OFFERED_RECENT_MS;
    return false;
}

const registry_entry_t *gate_pick(gate_t *g, gate_req_t *r, bool *any_offers)
{
    const registry_entry_t *best = NULL;
    uint64_t best_hash = 0;
    int best_rank = 0;
    bool prefer = r->engine != CROUPIER__ENGINE__ENGINE_UNSPECIFIED &&
                  r->engine != CROUPIER__ENGINE__ENGINE_GAME;
    *any_offers = false;
    for (size_t i = 0; i < registry_view_size(g->view); i++) {
        const registry_entry_t *e = registry_view_at(g->view, i);
        if (!config_list_has(e->games, r->game))
            continue;
        if (!*any_offers)
            gate_game_seen(g, r->game);
        *any_offers = true;
        if (e->state != REGISTRY_READY)
            continue;
        bool skip = false;
        for (int k = 0; k < r->ntried; k++)
            if (strcmp(r->tried[k], e->id) == 0)
                skip = true;
        /* A move leaves the closing server; a crash move may go to a new holder of its slot. */
        if (r->reseat && strcmp(e->id, r->from.server_id) == 0 &&
            !(r->crash && r->from.epoch > 0 && e->epoch > r->from.epoch))
            skip = true;
        if (skip || gate_entry_gone(g, e))
            continue;
        int rank = prefer && e->engine_id == r->engine ? 2 : 1;
        if (r->adopt) {
            /* Every gateway of the table's players picks the same server for its offer (the
             * highest hash of offer and server id), so they converge on one adopter; one that
             * lost the race redirects (Reply.adopted_by). */
            uint64_t h = gate_offer_hash(r->offer, e->id);
            if (best == NULL || rank > best_rank || (rank == best_rank && h > best_hash)) {
                best = e;
                best_rank = rank;
                best_hash = h;
            }
            continue;
        }
        if (best == NULL || rank > best_rank || (rank == best_rank && e->load < best->load) ||
            (rank == best_rank && e->load == best->load && strcmp(e->id, best->id) < 0)) {
            best = e;
            best_rank = rank;
        }
    }
    return best;
}

/* A join's target: the server of registry entry e, at the join's game and stake. */
static void gate_req_target_entry(gate_req_t *r, const registry_entry_t *e)
{
    memset(&r->target, 0, sizeof r->target);
    snprintf(r->target.server_id, sizeof r->target.server_id, "%s", e->id);
    snprintf(r->target.address, sizeof r->target.address, "%s", e->address);
    r->target.epoch = e->epoch;
    r->target.engine = r->engine;
    r->target.stake = r->stake;
    snprintf(r->target.game, sizeof r->target.game, "%s", r->game);
    r->have_target = true;
}

/*
 * Sends (or re-sends) a request: refuses expired work, resolves the target (the seat's server,
 * or a registry pick for a join), records the remaining budget, hands it to the link. A target
 * whose server is gone (gate_target_gone) is not sent to: a join picks again, anything else
 * ends TABLE_CLOSED.
 */
static void gate_req_send(gate_req_t *r, int64_t now);
static void gate_room_lookup(gate_req_t *r, int64_t now);

void gate_req_dispatch(gate_req_t *r)
{
    gate_t *g = r->g;
    /* The read callback's clock for a new request: the one its deadline was set from, so that
     * its whole budget goes on the common timeout queue (gate_req_arm); a retry reads it. */
    int64_t now = gate_now_mono(g);
    if (now >= r->deadline_mono) {
        metrics_add(g->m_reject[REJ_DEADLINE], 1);
        gate_req_fail(r, CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED, "deadline passed");
        return;
    }
    if (r->seat_target && !r->internal && u64map_get(g->crash_moves, r->player, NULL)) {
        /* A retry while the gateway moves the player off a gone server (gate_crash_move). */
        gate_req_fail(r, CROUPIER__ERROR_CODE__UNAVAILABLE,
                      "your table's server stopped; you are being moved to another table");
        return;
    }
    if (r->have_target && gate_target_gone(r))
        return;
    if (r->kind == GATE_REQ_JOIN && r->room && r->room_code[0] != '\0' && !r->have_target) {
        gate_room_lookup(r, now); /* the room's server, from its record */
        return;
    }
    if (r->kind == GATE_REQ_JOIN && !r->have_target) {
        bool offered;
        const registry_entry_t *e = gate_pick(g, r, &offered);
        if (e == NULL) {
            if (!offered && !r->reseat && r->attempts == 0 &&
                !gate_game_offered_recently(g, r->game)) {
                metrics_add(g->m_reject[REJ_NO_SERVER], 1);
                gate_req_fail(r, CROUPIER__ERROR_CODE__NO_SUCH_GAME, "no server offers this game");
                return;
            }
            r->attempts++;
            gate_req_retry(r, CROUPIER__ERROR_CODE__UNAVAILABLE, "no ready server");
            return;
        }
        gate_req_target_entry(r, e);
    }
    gate_req_send(r, now);
}

/* Sends a request whose target is resolved: its remaining budget recorded, to its link. */
static void gate_req_send(gate_req_t *r, int64_t now)
{
    gate_t *g = r->g;
    r->attempts++;
    metrics_observe(g->m_budget, (double)(r->deadline_mono - now) / 1000.0);
    gate_req_arm(r, r->deadline_mono, now);
    gate_link_submit(g, r);
}

/*
 * A JoinRoom's record arrived: the request goes to the server holding the room -- refused when
 * there is no such room, it started or ended, or its server stopped; it waits (a retry reads the
 * record again) while the room's server drains and the room moves.
 */
static void gate_room_lookup_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_room_lk_t *lk = arg;
    gate_req_t *r = lk->r;
    free(lk);
    if (r == NULL)
        return;
    r->room_lk = NULL;
    gate_t *g = r->g;
    if (g->destroying)
        return;
    evtimer_del(r->timer);
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        r->attempts++;
        gate_req_retry(r, CROUPIER__ERROR_CODE__UNAVAILABLE, "room store unreachable");
        return;
    }
    if (reply->type != REDIS_REPLY_STRING) {
        gate_req_fail(r, CROUPIER__ERROR_CODE__ROOM_NOT_FOUND, "no room has that code");
        return;
    }
    room_record_t *rec = xmalloc(sizeof *rec);
    int code = CROUPIER__ERROR_CODE__OK;
    const char *why = NULL;
    const registry_entry_t *e = NULL;
    if (room_record_parse(reply->str, reply->len, rec) != 0) {
        code = CROUPIER__ERROR_CODE__ROOM_NOT_FOUND;
        why = "the room's record is unreadable";
    } else if (rec->state == CROUPIER__ROOM_STATE__ROOM_FINISHED ||
               rec->state == CROUPIER__ROOM_STATE__ROOM_DISBANDED) {
        code = CROUPIER__ERROR_CODE__ROOM_ENDED;
        why = rec->state == CROUPIER__ROOM_STATE__ROOM_DISBANDED ? "the room was disbanded"
                                                                 : "the room is over";
    } else if (rec->state != CROUPIER__ROOM_STATE__ROOM_WAITING) {
        code = CROUPIER__ERROR_CODE__ROOM_STARTED;
        why = "the room has started";
    } else if ((e = registry_view_find(g->view, rec->server)) == NULL ||
               (uint64_t)e->epoch != rec->epoch || strlen(rec->game) >= sizeof r->game) {
        code = CROUPIER__ERROR_CODE__ROOM_NOT_FOUND;
        why = "the room's server stopped";
    }
    if (code != CROUPIER__ERROR_CODE__OK) {
        free(rec);
        gate_req_fail(r, code, why);
        return;
    }
    if (e->state != REGISTRY_READY || gate_entry_gone(g, e)) {
        free(rec);
        r->attempts++;
        gate_req_retry(r, CROUPIER__ERROR_CODE__UNAVAILABLE,
                       "the room is moving to another server");
        return;
    }
    r->engine = rec->engine;
    r->stake = rec->stake;
    snprintf(r->game, sizeof r->game, "%s", rec->game);
    free(rec);
    gate_req_target_entry(r, e);
    gate_req_send(r, clock_mono_ms());
}

static void gate_room_lookup(gate_req_t *r, int64_t now)
{
    gate_t *g = r->g;
    gate_room_lk_t *lk = xcalloc(1, sizeof *lk);
    lk->g = g;
    lk->r = r;
    char key[64];
    room_key(r->room_code, key, sizeof key);
    const char *argv[] = {"GET", key};
    gate_req_arm(r, r->deadline_mono, now); /* a record that never comes ends at the deadline */
    if (g->rc == NULL || rconn_command_argv(g->rc, gate_room_lookup_cb, lk, 2, argv, NULL) != 0) {
        free(lk);
        r->attempts++;
        gate_req_retry(r, CROUPIER__ERROR_CODE__UNAVAILABLE, "room store unreachable");
        return;
    }
    r->room_lk = lk;
}

gate_req_t *gate_req_new(gate_t *g, gate_req_kind_t kind, uint64_t player, uint64_t session)
{
    gate_req_t *r = g->req_free;
    if (r != NULL) {
        g->req_free = r->q.tqe_next;
        g->nreq_free--;
        memset(r, 0, offsetof(gate_req_t, timer_ev));
    } else {
        r = xcalloc(1, sizeof *r);
        evtimer_assign(&r->timer_ev, g->base, gate_req_timer_cb, r);
    }
    r->g = g;
    r->kind = kind;
    r->player = player;
    /* Requests made on a player's behalf without a connection get a session of their own (the
     * rpc link requires one on every player request). */
    r->session = session != 0 ? session : (((uint64_t)arc4random() << 32 | arc4random()) | 1);
    r->rid = gate_next_rid(g);
    int budget = g->cfg.budget_ms[kind];
    r->deadline_mono = gate_now_mono(g) + budget;
    r->deadline_wall = gate_now_wall(g) + budget;
    r->timer = &r->timer_ev;
    LIST_INSERT_HEAD(&g->reqs, r, live);
    return r;
}

/* Fills a Joined from a reply payload (Joined, or a Snapshot when the player was seated). */
static bool gate_payload_seat(const Croupier__ServerMessage *p, gate_seat_t *s)
{
    if (p == NULL)
        return false;
    if (p->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED) {
        s->desk = p->joined->desk_id;
        s->engine = p->joined->engine;
        s->stake = p->joined->stake;
        snprintf(s->game, sizeof s->game, "%s", p->joined->game);
        s->room = p->joined->room != NULL;
        return true;
    }
    if (p->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT) {
        s->desk = p->snapshot->desk_id;
        s->engine = p->snapshot->engine;
        s->stake = p->snapshot->stake;
        snprintf(s->game, sizeof s->game, "%s", p->snapshot->game);
        s->room = p->snapshot->room != NULL;
        return true;
    }
    return false;
}

/* Remembers a new seat for player: on its connection here (if any) and in Redis. */
static void gate_seat_taken(gate_t *g, uint64_t player, const gate_seat_t *s)
{
    uint64_t cid;
    if (u64map_get(g->conn_by_player, player, &cid)) {
        gate_conn_t *c = gate_conn_get(g, cid);
        if (c != NULL)
            gate_conn_set_seat(c, s);
    }
    gate_seat_store(g, player, s);
}

/* Forgets player's seat if it is (still) seat: here, and in Redis only while the record names
 * it (another gateway may have written a newer seat since). */
void gate_seat_gone(gate_t *g, uint64_t player, const gate_seat_t *seat)
{
    uint64_t cid;
    gate_conn_t *c = NULL;
    if (u64map_get(g->conn_by_player, player, &cid))
        c = gate_conn_get(g, cid);
    if (c != NULL && c->seat != NULL && strcmp(c->seat->server_id, seat->server_id) != 0)
        return;            /* seated elsewhere since */
    gate_seat_t s = *seat; /* seat may be the connection's own, cleared below */
    if (c != NULL)
        gate_conn_set_seat(c, NULL);
    gate_seat_delete_if(g, player, &s);
}

/* A move of r->player begins (crash: its server is gone, its requests wait) or ends. */
void gate_move_begin(gate_t *g, uint64_t player, bool crash)
{
    uint64_t n = 0;
    u64map_get(g->moves, player, &n);
    u64map_put(g->moves, player, n + 1);
    if (crash)
        u64map_put(g->crash_moves, player, 1);
}

void gate_move_end_player(gate_t *g, uint64_t player, bool crash)
{
    uint64_t n = 0;
    if (u64map_get(g->moves, player, &n) && n > 1)
        u64map_put(g->moves, player, n - 1);
    else
        u64map_del(g->moves, player);
    if (crash)
        u64map_del(g->crash_moves, player);
}

static void gate_move_end(gate_req_t *r)
{
    gate_move_end_player(r->g, r->player, r->crash);
}

static void gate_reseat_done(gate_req_t *r, Croupier__ServerMessage *payload)
{
    gate_t *g = r->g;
    gate_move_end(r);
    gate_seat_t s = r->target;
    gate_payload_seat(payload, &s);
    gate_seat_taken(g, r->player, &s);
    metrics_add(g->m_moves_ok, 1);
    log_emit(LOG_INFO, "player_moved", "{s:I,s:s,s:s,s:I,s:s,s:s}", "player", (json_int_t)r->player,
             "from", r->from.server_id, "to", s.server_id, "desk", (json_int_t)s.desk, "reason",
             r->crash ? "crashed" : "draining", "offer", r->adopt ? r->offer : "");
    uint64_t cid;
    gate_conn_t *c = NULL;
    if (u64map_get(g->conn_by_player, r->player, &cid))
        c = gate_conn_get(g, cid);
    if (c != NULL) {
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Moved mv = CROUPIER__MOVED__INIT;
        Croupier__Joined j = CROUPIER__JOINED__INIT;
        if (payload->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED) {
            mv.to = payload->joined;
        } else {
            j.desk_id = s.desk;
            j.seat = payload->snapshot->your_seat;
            j.engine = (Croupier__Engine)s.engine;
            j.game = s.game;
            j.stake = s.stake;
            j.n_seats = payload->snapshot->n_seats;
            j.seats = payload->snapshot->seats;
            mv.to = &j;
        }
        mv.has_reason = true;
        mv.reason = r->crash ? CROUPIER__CLOSING_REASON__CLOSING_CRASHED
                             : CROUPIER__CLOSING_REASON__CLOSING_DRAINING;
        mv.has_whole_table = r->adopt;
        mv.whole_table = r->adopt;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_MOVED;
        sm.moved = &mv;
        gate_conn_send(c, &sm);
        /* A whole table moved: the player's view of it there follows the Moved. */
        if (r->adopt && payload->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT)
            gate_conn_send(c, payload);
    }
    if (r->adopt)
        metrics_add(g->m_table_moves, 1);
    /* A closing table gives the seat up after the move; a gone server has nothing to give up
     * (and a new holder of its slot at the same address must not hear of this player); an
     * adopted table's old desk lets go by itself once the adoption is recorded. */
    if (!r->crash && !r->adopt)
        gate_req_start_internal_leave(g, r->player, &r->from);
}

static void gate_reseat_failed(gate_req_t *r, const char *why)
{
    gate_t *g = r->g;
    gate_move_end(r);
    if (r->adopt) {
        /* The table stays with its server, which withdraws the offer and re-seats its players
         * one by one (or its recovery returns their chips if it died): nothing to tell yet. */
        metrics_add(g->m_moves_failed, 1);
        log_emit(LOG_WARN, "table_adopt_failed", "{s:I,s:s,s:s,s:s}", "player",
                 (json_int_t)r->player, "from", r->from.server_id, "offer", r->offer, "why",
                 why != NULL ? why : "");
        return;
    }
    metrics_add(g->m_moves_failed, 1);
    log_emit(LOG_WARN, "player_move_failed", "{s:I,s:s,s:s,s:s}", "player", (json_int_t)r->player,
             "from", r->from.server_id, "why", why != NULL ? why : "", "reason",
             r->crash ? "crashed" : "draining");
    if (!r->crash)
        gate_seat_gone(g, r->player, &r->from);
    uint64_t cid;
    gate_conn_t *c = NULL;
    if (u64map_get(g->conn_by_player, r->player, &cid))
        c = gate_conn_get(g, cid);
    if (c != NULL) {
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__TableClosing tc = CROUPIER__TABLE_CLOSING__INIT;
        tc.reason = r->crash ? CROUPIER__CLOSING_REASON__CLOSING_CRASHED
                             : CROUPIER__CLOSING_REASON__CLOSING_DRAINING;
        tc.detail = "no other server could take your seat; you are not seated, join again";
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
        sm.table_closing = &tc;
        gate_conn_send(c, &sm);
    }
    if (!r->crash)
        gate_req_start_internal_leave(g, r->player, &r->from);
}

/* A reply from a game server: the end of a request, or a retry. */
void gate_on_reply(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd)
{
    gate_t *g = l->g;
    uint64_t p;
    if (!u64map_get(l->pending, f->request_id, &p))
        return; /* late (the request expired) or unknown */
    gate_req_t *r = (gate_req_t *)(uintptr_t)p;
    u64map_del(l->pending, r->rid);
    r->link = NULL;
    r->sent = false;
    evtimer_del(r->timer);
    if (r->kind == GATE_REQ_WATCH) {
        gate_watch_reply(r, f); /* gate_watch.c */
        return;
    }
    Croupier__Reply *rep = f->reply;
    int code = rep->code;
    if (r->adopt && rep->adopted_by != NULL && rep->adopted_by[0] != '\0' && r->redirects < 3) {
        /* Another server adopted the table first: ask that one. */
        const registry_entry_t *e = registry_view_find(g->view, rep->adopted_by);
        if (e != NULL) {
            r->redirects++;
            gate_req_target_entry(r, e);
            gate_req_dispatch(r);
            return;
        }
    }
    if (code == CROUPIER__ERROR_CODE__DRAINING || code == CROUPIER__ERROR_CODE__UNAVAILABLE) {
        if (r->kind == GATE_REQ_JOIN) {
            if (r->ntried < 4)
                snprintf(r->tried[r->ntried++], sizeof r->tried[0], "%s", r->target.server_id);
            r->have_target = false;
        }
        gate_req_retry(r, code, frame_error_code_name(code));
        return;
    }
    if (code == CROUPIER__ERROR_CODE__NOT_SEATED && r->kind == GATE_REQ_JOIN && !r->internal &&
        !r->reseat && !r->adopt) {
        /* The server took the join for a resume of a seat it still maps to the player, at a
         * table that closed (its players told, none taken by another server: all draining or
         * cut off from Redis), or the seat record named a seat its server no longer has. That
         * seat is forgotten and the join goes to another server, within its budget. */
        if (r->seat_target)
            gate_seat_gone(g, r->player, &r->target);
        if (r->ntried < 4)
            snprintf(r->tried[r->ntried++], sizeof r->tried[0], "%s", r->target.server_id);
        r->have_target = false;
        r->seat_target = false;
        gate_req_retry(r, code, "the seat held there was gone");
        return;
    }
    if (code != CROUPIER__ERROR_CODE__OK) {
        if (code == CROUPIER__ERROR_CODE__NOT_SEATED && r->kind != GATE_REQ_JOIN && !r->internal)
            gate_seat_gone(g, r->player, &r->target);
        const char *msg = rep->error != NULL && rep->error->message != NULL
                              ? rep->error->message
                              : frame_error_code_name(code);
        gate_req_fail(r, code, msg);
        return;
    }
    Croupier__ServerMessage *payload = rep->payload;
    /* The seat is the process's that answered: it carries that process's epoch. */
    if (l->known_epoch > 0 && strcmp(gate_link_id(l), r->target.server_id) == 0)
        r->target.epoch = l->known_epoch;
    if (r->reseat) {
        if (!gate_payload_seat(payload, &(gate_seat_t){0})) {
            gate_reseat_failed(r, "unexpected join answer");
            gate_req_free(r);
            return;
        }
        gate_reseat_done(r, payload);
        gate_req_free(r);
        return;
    }
    if (r->kind == GATE_REQ_JOIN || r->kind == GATE_REQ_RESUME) {
        gate_seat_t s = r->target;
        if (gate_payload_seat(payload, &s))
            gate_seat_taken(g, r->player, &s);
    } else if (r->kind == GATE_REQ_LEAVE && !r->internal) {
        gate_seat_gone(g, r->player, &r->target);
    }
    gate_conn_t *c = r->internal ? NULL : gate_req_conn(r);
    if (c != NULL) {
        Croupier__ServerMessage empty = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Result res = CROUPIER__RESULT__INIT;
        Croupier__ServerMessage *sm = payload;
        if (sm == NULL) {
            empty.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
            empty.result = &res;
            sm = &empty;
        }
        sm->has_request_id = true;
        sm->request_id = r->client_rid;
        if (sm == payload && r->client_rid != 0)
            gate_conn_forward(c, fwd, r->client_rid, sm);
        else
            gate_conn_send(c, sm);
    }
    gate_req_free(r);
}

static void gate_closing_lookup_cb(rconn_t *rc, redisReply *reply, void *arg);

/*
 * A tournament table let the player go (TableClosing{CLOSING_TOURNAMENT}: moved, busted, the
 * table broken or handed to another server): his seat there is forgotten -- on his connection
 * here (c, NULL when he is not connected here) and in Redis while the record still names a
 * tournament seat at that server -- so a later Resume or Action does not go to the old table.
 * Nobody is re-seated: TakeTournamentSeat finds his next table (docs/gateway.md "Tournaments").
 */
static void gate_tour_closing(gate_link_t *l, uint64_t player, uint64_t desk, gate_conn_t *c)
{
    gate_t *g = l->g;
    log_emit(LOG_INFO, "tour_seat_closed", "{s:I,s:s,s:I,s:b}", "player", (json_int_t)player,
             "server", gate_link_id(l), "desk", (json_int_t)desk, "connected", c != NULL);
    if (c != NULL && c->seat_known) {
        /* Only the seat at the table that let him go: a seat he took at his next table of the
         * same server meanwhile (desk_id differs) stays. */
        if (c->seat != NULL && c->seat->tour && strcmp(c->seat->address, l->address) == 0 &&
            (desk == 0 || c->seat->desk == desk))
            gate_seat_gone(g, player, c->seat);
        return;
    }
    if (g->rc == NULL)
        return;
    gate_closing_lookup_t *lk = xcalloc(1, sizeof *lk);
    lk->g = g;
    lk->player = player;
    snprintf(lk->address, sizeof lk->address, "%s", l->address);
    lk->forget = true;
    lk->tour = true;
    lk->desk = desk;
    char key[64];
    gate_seat_key(player, key, sizeof key);
    const char *argv[] = {"GET", key};
    if (rconn_command_argv(g->rc, gate_closing_lookup_cb, lk, 2, argv, NULL) != 0)
        free(lk);
}

/* A push to one player: player_id's, or one its push_to names. */
static void gate_push_one(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd,
                          uint64_t player)
{
    gate_t *g = l->g;
    uint64_t cid;
    gate_conn_t *c = NULL;
    if (u64map_get(g->conn_by_player, player, &cid))
        c = gate_conn_get(g, cid);
    if (f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING &&
        f->push->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_TOURNAMENT)
        gate_tour_closing(l, player,
                          f->push->table_closing->has_desk_id ? f->push->table_closing->desk_id : 0,
                          c != NULL && !c->closing ? c : NULL);
    if (c != NULL)
        gate_conn_forward(c, fwd, 0, f->push);
}

void gate_on_push(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd)
{
    gate_t *g = l->g;
    if (!f->has_player_id)
        return;
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH) {
        /* One push, many players: player_id and those push_to names (docs/protocol.md). */
        gate_push_one(l, f, fwd, f->player_id);
        for (size_t i = 0; i < f->n_push_to; i++)
            gate_push_one(l, f, fwd, f->push_to[i]);
        return;
    }
    uint64_t cid;
    gate_conn_t *c = NULL;
    if (u64map_get(g->conn_by_player, f->player_id, &cid))
        c = gate_conn_get(g, cid);
    if (c == NULL)
        return;
    /* A move decided by the game server itself. */
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_MOVED;
    sm.moved = f->moved;
    if (f->moved->to != NULL && c->seat != NULL) {
        gate_seat_t s = *c->seat;
        s.desk = f->moved->to->desk_id;
        gate_seat_taken(g, f->player_id, &s);
    }
    gate_conn_send(c, &sm);
}

/*
 * A desk of this server closes (drain): each named player still seated there is re-seated on
 * another ready server of the same game and stake, on their behalf.
 */
/* The join that moves one player from seat `from` (a closing desk, or a gone server's), not
 * sent yet. conn_id/session: the player's connection here, or 0 when the player is not
 * connected to this gateway. A move may wait longer than a client's join: twice its budget. */
gate_req_t *gate_reseat_new(gate_t *g, uint64_t player, uint64_t conn_id, uint64_t session,
                            const gate_seat_t *from, bool crash)
{
    gate_req_t *r = gate_req_new(g, GATE_REQ_JOIN, player, session);
    r->reseat = true;
    r->crash = crash;
    r->conn_id = conn_id;
    r->from = *from;
    r->engine = from->engine;
    r->stake = from->stake;
    snprintf(r->game, sizeof r->game, "%s", from->game);
    r->deadline_mono += g->cfg.budget_ms[GATE_REQ_JOIN];
    r->deadline_wall += g->cfg.budget_ms[GATE_REQ_JOIN];
    return r;
}

/* Sends a move made by gate_reseat_new() whose gate_move_begin() was done. */
void gate_reseat_go(gate_req_t *r)
{
    log_emit(LOG_INFO, "player_move_start", "{s:I,s:s,s:I,s:b,s:s}", "player",
             (json_int_t)r->player, "from", r->from.server_id, "desk", (json_int_t)r->from.desk,
             "connected", r->conn_id != 0, "reason", r->crash ? "crashed" : "draining");
    gate_req_dispatch(r);
}

/* Sends a move made by gate_reseat_new(). */
static void gate_reseat_send(gate_req_t *r)
{
    gate_move_begin(r->g, r->player, r->crash);
    gate_reseat_go(r);
}

/* Starts the move of one player from a closing desk (see gate_reseat_new). */
static void gate_reseat_start(gate_t *g, uint64_t player, uint64_t conn_id, uint64_t session,
                              const gate_seat_t *from)
{
    gate_reseat_send(gate_reseat_new(g, player, conn_id, session, from, false));
}

/* Starts the Adopt of a whole table's offer for one player (see gate_reseat_new). */
static void gate_adopt_start(gate_t *g, uint64_t player, uint64_t conn_id, uint64_t session,
                             const gate_seat_t *from, const char *offer)
{
    gate_req_t *r = gate_reseat_new(g, player, conn_id, session, from, false);
    r->adopt = true;
    snprintf(r->offer, sizeof r->offer, "%s", offer);
    gate_reseat_send(r);
}

/* The seat of a player who is not connected here, read from Redis: moved if it is still at
 * the closing server (the player finds the new seat with Resume through any gateway). */
static void gate_closing_lookup_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_closing_lookup_t *lk = arg;
    gate_seat_t s;
    uint64_t cid;
    if (reply != NULL && reply->type == REDIS_REPLY_STRING &&
        gate_seat_parse(reply->str, reply->len, &s) == 0 && strcmp(s.address, lk->address) == 0 &&
        (!lk->tour || (s.tour && (lk->desk == 0 || s.desk == lk->desk))) &&
        !u64map_get(lk->g->conn_by_player, lk->player, &cid) && lk->g->rc != NULL) {
        /* A tournament seat is never re-seated at a cash table: only forgotten. */
        if (lk->forget || s.tour)
            gate_seat_delete_if(lk->g, lk->player, &s);
        else if (lk->offer[0] != '\0')
            gate_adopt_start(lk->g, lk->player, 0, 0, &s, lk->offer);
        else
            gate_reseat_start(lk->g, lk->player, 0, 0, &s);
    }
    free(lk);
}

/*
 * A desk of this server closes (drain): each named player still seated there is re-seated on
 * another ready server of the same game and stake, on their behalf -- connected here or not
 * (the server names the players whose last request came through this gateway).
 */
void gate_on_desk_closing(gate_link_t *l, Croupier__RpcFrame *f)
{
    gate_t *g = l->g;
    Croupier__DeskClosing *dc = f->desk_closing;
    const char *offer = dc->offer_id != NULL && dc->offer_id[0] != '\0' &&
                                strlen(dc->offer_id) < sizeof(((gate_req_t *)0)->offer)
                            ? dc->offer_id
                            : NULL;
    /* A private room ended: its players left it (no one is re-seated), their seats go. */
    bool forget = dc->reason == CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED;
    for (size_t i = 0; i < dc->n_player_ids; i++) {
        uint64_t player = dc->player_ids[i], cid;
        gate_conn_t *c = NULL;
        if (u64map_get(g->conn_by_player, player, &cid))
            c = gate_conn_get(g, cid);
        if (c != NULL && c->seat_known) {
            if (c->seat != NULL && strcmp(c->seat->address, l->address) == 0) {
                if (forget || c->seat->tour)
                    gate_seat_gone(g, player, c->seat);
                else if (offer != NULL)
                    gate_adopt_start(g, player, c->id, c->session, c->seat, offer);
                else
                    gate_reseat_start(g, player, c->id, c->session, c->seat);
            }
            continue;
        }
        gate_closing_lookup_t *lk = xcalloc(1, sizeof *lk);
        lk->g = g;
        lk->player = player;
        snprintf(lk->address, sizeof lk->address, "%s", l->address);
        snprintf(lk->offer, sizeof lk->offer, "%s", offer != NULL ? offer : "");
        lk->forget = forget;
        char key[64];
        gate_seat_key(player, key, sizeof key);
        const char *argv[] = {"GET", key};
        if (rconn_command_argv(g->rc, gate_closing_lookup_cb, lk, 2, argv, NULL) != 0)
            free(lk);
    }
}

static void gate_req_start_internal_leave(gate_t *g, uint64_t player, const gate_seat_t *seat)
{
    gate_req_t *r = gate_req_new(g, GATE_REQ_LEAVE, player, 0);
    r->internal = true;
    r->target = *seat;
    r->have_target = true;
    gate_req_dispatch(r);
}

void gate_send_player_gone(gate_t *g, gate_conn_t *c)
{
    gate_link_t *l = gate_link_find(g, c->seat->address);
    if (l == NULL || l->state != LINK_READY)
        return;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone pg = CROUPIER__PLAYER_GONE__INIT;
    f.request_id = 0;
    f.has_player_id = true;
    f.player_id = c->player;
    f.has_session_id = true;
    f.session_id = c->session;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &pg;
    gate_link_send_frame(l, &f);
}
