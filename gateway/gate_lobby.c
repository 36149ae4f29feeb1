/*
 * gate_lobby.c -- the lobby (ListTables from the ads in Redis, docs/gateway.md "The
 * lobby") and private rooms (GetRoom).
 */
#include "gate_int.h"

/* ---- the lobby: ListTables ------------------------------------------------------------------ */

static void gate_list_free(gate_list_t *op)
{
    if (op->timer != NULL)
        event_free(op->timer);
    free(op->ads);
    free(op);
}

/* Orders tables by stake, then server, then desk (the same list reads the same every time). */
static int gate_ad_cmp(const void *a, const void *b)
{
    const lobby_ad_t *x = &((const gate_ad_t *)a)->lobby, *y = &((const gate_ad_t *)b)->lobby;
    if (x->stake != y->stake)
        return x->stake < y->stake ? -1 : 1;
    int c = strcmp(x->server_id, y->server_id);
    if (c != 0)
        return c;
    return x->desk < y->desk ? -1 : x->desk > y->desk;
}

/* Fills out's TableAd from the ad read back from the lobby. Its strings point into out, so this
 * runs once the ads are sorted (sorting moves them). */
static void gate_ad_fill(gate_ad_t *out)
{
    Croupier__TableAd init = CROUPIER__TABLE_AD__INIT;
    out->ad = init;
    out->ad.desk_id = out->lobby.desk;
    out->ad.server_id = out->lobby.server_id;
    out->ad.game = out->lobby.game;
    out->ad.stake = out->lobby.stake;
    out->ad.seats = out->lobby.seats;
    out->ad.seats_free = out->lobby.seats_free;
}

/* Sends the TableList: sorted, at most GATE_LIST_MAX tables, cut further to fit the frame cap. */
static void gate_list_send(gate_conn_t *c, gate_list_t *op)
{
    qsort(op->ads, op->nads, sizeof op->ads[0], gate_ad_cmp);
    size_t n = op->nads < GATE_LIST_MAX ? op->nads : GATE_LIST_MAX;
    Croupier__TableAd **ptrs = xcalloc(n > 0 ? n : 1, sizeof *ptrs);
    for (size_t i = 0; i < n; i++) {
        gate_ad_fill(&op->ads[i]);
        ptrs[i] = &op->ads[i].ad;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableList tl = CROUPIER__TABLE_LIST__INIT;
    sm.has_request_id = true;
    sm.request_id = op->rid;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST;
    sm.table_list = &tl;
    tl.tables = ptrs;
    tl.n_tables = n;
    size_t size = protobuf_c_message_get_packed_size(&sm.base);
    while (tl.n_tables > 0 && size > c->g->lim.max_frame) {
        size_t fit = tl.n_tables * c->g->lim.max_frame / size;
        tl.n_tables = fit < tl.n_tables ? fit : tl.n_tables - 1;
        size = protobuf_c_message_get_packed_size(&sm.base);
    }
    gate_conn_send(c, &sm);
    free(ptrs);
}

/*
 * Ends a list: answers the client (the TableList when code is OK, else Result{error}) if its
 * connection and session are still there, and frees op once no Redis callback is left to run.
 */
static void gate_list_finish(gate_list_t *op, int code, const char *message)
{
    if (!op->done) {
        op->done = true;
        evtimer_del(op->timer);
        gate_conn_t *c = gate_conn_get(op->g, op->conn_id);
        if (c != NULL && c->inflight > 0)
            c->inflight--;
        if (c != NULL && !c->closing && c->session == op->session) {
            if (code == CROUPIER__ERROR_CODE__OK)
                gate_list_send(c, op);
            else
                gate_conn_error(c, op->rid, code, message);
        }
        if (code == CROUPIER__ERROR_CODE__UNAVAILABLE)
            metrics_add(op->g->m_degraded, 1);
    }
    if (op->pending == 0)
        gate_list_free(op);
}

static void gate_list_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_list_finish(arg, CROUPIER__ERROR_CODE__UNAVAILABLE,
                     "the lobby store did not answer within the budget");
}

/* One ad arrived: kept if it matches the filters; the list is answered after the last one. */
static void gate_list_ad_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_list_t *op = arg;
    op->pending--;
    if (!op->done) {
        if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
            op->failed = true;
        } else if (op->nads < op->cap && lobby_ad_parse(reply, &op->ads[op->nads].lobby) == 0 &&
                   lobby_ad_matches(&op->ads[op->nads].lobby, &op->want))
            op->nads++;
        if (op->pending > 0)
            return;
        if (op->failed)
            gate_list_finish(op, CROUPIER__ERROR_CODE__UNAVAILABLE, "the lobby store failed");
        else
            gate_list_finish(op, CROUPIER__ERROR_CODE__OK, NULL);
        return;
    }
    if (op->pending == 0)
        gate_list_free(op);
}

/* The index arrived (members "<server>:<desk>" not expired yet): each ad is read, pipelined. */
static void gate_list_index_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    gate_list_t *op = arg;
    op->pending--;
    if (op->done) {
        if (op->pending == 0)
            gate_list_free(op);
        return;
    }
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
        gate_list_finish(op, CROUPIER__ERROR_CODE__UNAVAILABLE,
                         reply == NULL ? "the lobby store did not answer"
                                       : "the lobby store failed");
        return;
    }
    op->cap = reply->elements;
    op->ads = xcalloc(op->cap > 0 ? op->cap : 1, sizeof *op->ads);
    /* Held while the reads are sent, so that no callback can end op in between. */
    op->pending++;
    for (size_t i = 0; i < reply->elements; i++) {
        const redisReply *m = reply->element[i];
        char key[256];
        if (m->type != REDIS_REPLY_STRING || lobby_ad_key(m->str, m->len, key, sizeof key) != 0)
            continue; /* not a member a publisher writes: no ad to read */
        const char *argv[] = {"HGETALL", key};
        if (rconn_command_argv(rc, gate_list_ad_cb, op, 2, argv, NULL) != 0) {
            op->failed = true;
            break;
        }
        op->pending++;
    }
    op->pending--;
    if (op->pending > 0)
        return;
    /* Nothing left to wait for: no members, or none could be asked for. */
    if (op->failed)
        gate_list_finish(op, CROUPIER__ERROR_CODE__UNAVAILABLE, "the lobby store failed");
    else
        gate_list_finish(op, CROUPIER__ERROR_CODE__OK, NULL);
}

/*
 * ListTables from a logged-in client: answered here from the lobby in Redis (see gate.h), within
 * budget_ms[GATE_REQ_LIST]. Counts as a request in flight on the connection until answered.
 */
void gate_client_list(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    gate_t *g = c->g;
    const Croupier__ListTables *lt = m->list_tables;
    if (c->player == 0 || c->login_busy) {
        metrics_add(g->m_reject[REJ_UNAUTH], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAUTHENTICATED,
                        c->player == 0 ? "log in first" : "login not complete");
        return;
    }
    if (g->exit_step >= 3) {
        metrics_add(g->m_reject[REJ_DRAINING], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__DRAINING, "gateway closing");
        return;
    }
    if (c->inflight >= g->cfg.max_inflight) {
        metrics_add(g->m_reject[REJ_INFLIGHT], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__OVERLOADED,
                        "too many requests in flight");
        return;
    }
    gate_list_t *op = xcalloc(1, sizeof *op);
    op->g = g;
    op->conn_id = c->id;
    op->session = c->session;
    op->rid = m->request_id;
    if (lt->game != NULL)
        snprintf(op->game, sizeof op->game, "%s", lt->game); /* the codec bounds it to 32 */
    op->want.engine = lt->has_engine ? (int)lt->engine : 0;
    op->want.game = op->game;
    op->want.has_stake = lt->has_stake;
    op->want.stake = lt->stake;
    char scan[24];
    snprintf(scan, sizeof scan, "%d", GATE_LIST_SCAN);
    const char *argv[] = {LOBBY_INDEX_KEY, scan}; /* live ads on Redis's clock (lobby.h) */
    if (rconn_eval(g->rc, gate_script_list, gate_list_index_cb, op, 1, 2, argv, NULL) != 0) {
        free(op);
        metrics_add(g->m_degraded, 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE,
                        "the lobby store is not connected");
        return;
    }
    op->pending = 1;
    c->inflight++;
    op->timer = evtimer_new(g->base, gate_list_timer_cb, op);
    int ms = g->cfg.budget_ms[GATE_REQ_LIST];
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(op->timer, &tv);
}

/* ---- private rooms: GetRoom --------------------------------------------------------------- */

static void gate_get_room_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_get_room_t *op = arg;
    gate_conn_t *c = gate_conn_get(op->g, op->conn_id);
    if (c == NULL || c->closing || c->session != op->session || op->g->destroying) {
        free(op);
        return;
    }
    room_record_t *rec = NULL;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, "room store unreachable");
    } else if (reply->type != REDIS_REPLY_STRING) {
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__ROOM_NOT_FOUND,
                        "no room has that code (or it expired)");
    } else if (room_record_parse(reply->str, reply->len, rec = xmalloc(sizeof *rec)) != 0) {
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__ROOM_NOT_FOUND,
                        "the room's record is unreadable");
    } else {
        /* A room whose server is gone (not registered under the record's epoch) ended with it. */
        const registry_entry_t *e = registry_view_find(op->g->view, rec->server);
        bool live = rec->state == CROUPIER__ROOM_STATE__ROOM_WAITING ||
                    rec->state == CROUPIER__ROOM_STATE__ROOM_PLAYING;
        if (live && registry_view_refreshes(op->g->view) > 0 &&
            (e == NULL || (uint64_t)e->epoch != rec->epoch)) {
            rec->state = rec->state == CROUPIER__ROOM_STATE__ROOM_WAITING
                             ? CROUPIER__ROOM_STATE__ROOM_DISBANDED
                             : CROUPIER__ROOM_STATE__ROOM_FINISHED;
            snprintf(rec->detail, sizeof rec->detail, "%s",
                     "the room's server stopped without a clean exit: its deal in progress was "
                     "voided and its chips returned; the room ended with the deals played");
        }
        room_info_buf_t *rib = xmalloc(sizeof *rib);
        room_info_fill(rec, rib);
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        sm.has_request_id = true;
        sm.request_id = op->rid;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROOM;
        sm.room = &rib->info;
        gate_conn_send(c, &sm);
        free(rib);
    }
    free(rec);
    free(op);
}

/* GetRoom: the room's record, read from Redis by the gateway itself (no seat needed). */
void gate_client_get_room(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    gate_t *g = c->g;
    if (c->player == 0 || c->login_busy) {
        metrics_add(g->m_reject[REJ_UNAUTH], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAUTHENTICATED,
                        c->player == 0 ? "log in first" : "login not complete");
        return;
    }
    if (!room_code_valid(m->get_room->code)) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "a room code is 6 digits");
        return;
    }
    gate_get_room_t *op = xcalloc(1, sizeof *op);
    *op = (gate_get_room_t){.g = g, .conn_id = c->id, .session = c->session, .rid = m->request_id};
    char key[64];
    room_key(m->get_room->code, key, sizeof key);
    const char *argv[] = {"GET", key};
    if (g->rc == NULL || rconn_command_argv(g->rc, gate_get_room_cb, op, 2, argv, NULL) != 0) {
        free(op);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE,
                        "room store unreachable");
    }
}
