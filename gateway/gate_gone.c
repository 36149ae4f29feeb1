/*
 * gate_gone.c -- servers gone: seats that went with their server, crash moves, the
 * probes of seats whose server is in doubt (docs/gateway.md "When a game server dies").
 */
#include "gate_int.h"

/* ---- servers gone: seats that went with their server (gate_seat.h) --------------------------- */

/* What is known now of the server a seat names (gate_seat_facts_t). */
static void gate_seat_facts(gate_t *g, const gate_seat_t *s, gate_seat_facts_t *f)
{
    memset(f, 0, sizeof *f);
    f->view_read = registry_view_refreshes(g->view) > 0;
    const registry_entry_t *e = registry_view_find(g->view, s->server_id);
    if (e != NULL) {
        f->listed = true;
        f->listed_epoch = e->epoch;
        f->listed_address = e->address;
    }
    gate_link_t *l = gate_link_find(g, s->address);
    if (l == NULL)
        return;
    if (l->state == LINK_READY) {
        f->link_ready = true;
        f->link_server_id = gate_link_id(l);
        f->link_floor = l->floor_epoch;
    } else if (l->probed && strcmp(l->probed_id, s->server_id) == 0) {
        f->probed = true;
        f->probed_absent = l->probed_absent;
        f->probed_epoch = l->probed_epoch;
        f->probed_address = l->probed_absent ? NULL : l->probed_address;
    }
}

gate_seat_verdict_t gate_seat_check(gate_t *g, const gate_seat_t *s)
{
    gate_seat_facts_t f;
    gate_seat_facts(g, s, &f);
    return gate_seat_judge(s, &f);
}

/*
 * Whether the server of a registry entry is known to be gone although the view still lists it:
 * a probe found its entry expired or moved, or another process answers at its address. Joins
 * are not sent there and its link is not dialed. (The entry's own epoch is not compared: a view
 * that lags behind a process's new epoch lists a live server.)
 */
bool gate_entry_gone(gate_t *g, const registry_entry_t *e)
{
    gate_seat_t s;
    memset(&s, 0, sizeof s);
    snprintf(s.server_id, sizeof s.server_id, "%s", e->id);
    snprintf(s.address, sizeof s.address, "%s", e->address);
    return gate_seat_check(g, &s) != GATE_SEAT_LIVE;
}

static gate_conn_t *gate_player_conn(gate_t *g, uint64_t player)
{
    uint64_t cid;
    return u64map_get(g->conn_by_player, player, &cid) ? gate_conn_get(g, cid) : NULL;
}

/*
 * Forgets a seat found gone with its server (verdict v): on the player's connection here while
 * it still holds that seat (later requests needing a seat get TABLE_CLOSED), and in Redis while
 * the record still names it. where: what found it (logs).
 */
void gate_seat_forget(gate_t *g, uint64_t player, const gate_seat_t *gone, gate_seat_verdict_t v,
                      const char *where)
{
    gate_seat_t s = *gone; /* gone may be the connection's seat, freed below */
    metrics_add(g->m_stale_seats, 1);
    log_emit(LOG_INFO, "seat_gone", "{s:I,s:s,s:s,s:I,s:I,s:s,s:s}", "player", (json_int_t)player,
             "server", s.server_id, "address", s.address, "desk", (json_int_t)s.desk, "epoch",
             (json_int_t)s.epoch, "why", gate_seat_verdict_name(v), "where", where);
    gate_conn_t *c = gate_player_conn(g, player);
    if (c != NULL && c->seat != NULL && strcmp(c->seat->server_id, s.server_id) == 0 &&
        strcmp(c->seat->address, s.address) == 0 && c->seat->desk == s.desk) {
        gate_conn_set_seat(c, NULL);
        c->seat_lost = true;
    }
    gate_seat_delete_if(g, player, &s);
}

/*
 * A request whose target is gone (gate_seat_check): a join of the gateway's own choosing picks
 * another server (the gone one is remembered as tried); a request for a seat there ends
 * TABLE_CLOSED, the seat forgotten. Returns true when r ended (freed).
 */
bool gate_target_gone(gate_req_t *r)
{
    gate_t *g = r->g;
    gate_seat_verdict_t v = gate_seat_check(g, &r->target);
    if (v == GATE_SEAT_LIVE)
        return false;
    if (r->kind == GATE_REQ_JOIN && !r->seat_target) {
        if (r->ntried < 4)
            snprintf(r->tried[r->ntried++], sizeof r->tried[0], "%s", r->target.server_id);
        r->have_target = false;
        return false;
    }
    /* The seat is forgotten here unless a crash move of the player does it (gate_crash_move). */
    if (r->seat_target && !r->internal && !u64map_get(g->crash_moves, r->player, NULL))
        gate_seat_forget(g, r->player, &r->target, v, "request");
    gate_req_fail(r, CROUPIER__ERROR_CODE__TABLE_CLOSED, GATE_TABLE_GONE_MSG);
    return true;
}

/*
 * Ends now what waits for a gone server (its link down, or a new process at its address): every
 * request targeting server_id at address that is not in flight on a ready link, or only
 * player's when player is not 0 (else the requests of players with a crash move in flight are
 * left to their move, which ends them after telling the player). Joins pick another server;
 * the rest end TABLE_CLOSED (gate_target_gone). Collected first: ending one request never ends
 * another.
 */
static void gate_reqs_of_gone(gate_t *g, const char *server_id, const char *address,
                              uint64_t player)
{
    gate_req_t **list = NULL, *r;
    size_t n = 0, cap = 0;
    LIST_FOREACH(r, &g->reqs, live)
    {
        if (!r->have_target || (player != 0 && r->player != player) ||
            (player == 0 && !r->reseat && u64map_get(g->crash_moves, r->player, NULL)) ||
            (r->link != NULL && r->sent) || strcmp(r->target.server_id, server_id) != 0 ||
            strcmp(r->target.address, address) != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            list = xreallocarray(list, cap, sizeof *list);
        }
        list[n++] = r;
    }
    for (size_t i = 0; i < n; i++) {
        r = list[i];
        if (gate_seat_check(g, &r->target) == GATE_SEAT_LIVE)
            continue;
        gate_req_unlink(r);
        r->waiting_retry = false;
        evtimer_del(r->timer);
        if (!gate_target_gone(r))
            gate_req_dispatch(r); /* a join: to another server */
    }
    free(list);
}

/* Whether two seats are the same seat (server, address, desk). */
bool gate_seat_same(const gate_seat_t *a, const gate_seat_t *b)
{
    return strcmp(a->server_id, b->server_id) == 0 && strcmp(a->address, b->address) == 0 &&
           a->desk == b->desk;
}

/*
 * The crash move of a connected player whose record still names the gone seat: the player is
 * told TableClosing{CRASHED}, the seat is forgotten (here and in Redis), and, when a ready server
 * offers the seat's game, the player is moved there as a drain's move does (Moved{reason
 * CRASHED}); else nothing follows and the player may Join again. Requests of the player waiting
 * for that seat end TABLE_CLOSED, after the TableClosing. The move was begun (gate_move_begin).
 * A tournament table's seat is only forgotten: TableClosing{CLOSING_TOURNAMENT} says to send
 * TakeTournamentSeat (another server takes the table over), and no move follows.
 */
void gate_crash_move(gate_t *g, gate_conn_t *c, const gate_crash_t *k)
{
    gate_seat_t from = k->from;
    gate_seat_forget(g, c->player, &from, k->verdict, "server_gone");
    if (from.tour) {
        /* A tournament table is the director's: another server claims it once the dead host's
         * claim expires and deals its next hand; the player finds it with TakeTournamentSeat.
         * Never a cash table, no Moved. */
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__TableClosing tc = CROUPIER__TABLE_CLOSING__INIT;
        tc.reason = CROUPIER__CLOSING_REASON__CLOSING_TOURNAMENT;
        tc.detail = GATE_TOUR_CRASH_MSG;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
        sm.table_closing = &tc;
        gate_conn_send(c, &sm);
        gate_reqs_of_gone(g, from.server_id, from.address, c->player);
        gate_move_end_player(g, c->player, true);
        log_emit(LOG_INFO, "tour_seat_gone", "{s:I,s:s,s:I}", "player", (json_int_t)c->player,
                 "server", from.server_id, "desk", (json_int_t)from.desk);
        return;
    }
    gate_req_t *r = gate_reseat_new(g, c->player, c->id, c->session, &from, true);
    bool offered;
    /* A private room went with its server: its players are not seated at a stranger's table. */
    bool can_move = !from.room && gate_pick(g, r, &offered) != NULL;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableClosing tc = CROUPIER__TABLE_CLOSING__INIT;
    tc.reason = CROUPIER__CLOSING_REASON__CLOSING_CRASHED;
    if (from.room) {
        tc.detail = "your private room's server stopped without a clean exit: the deal in "
                    "progress is voided and your chips go back to your wallet; the room cannot go "
                    "on: you are not seated";
    } else if (can_move) {
        tc.detail = "your table's server stopped without a clean exit: the round in progress is "
                    "voided; you are being moved to another table";
        tc.has_after_ms = true; /* the move's bound: a Moved comes before it, or a TableClosing */
        tc.after_ms = (uint32_t)(r->deadline_mono - clock_mono_ms());
    } else {
        tc.detail = "your table's server stopped without a clean exit: the round in progress is "
                    "voided; no other server can take your seat now: you are not seated, join "
                    "again later";
    }
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
    sm.table_closing = &tc;
    gate_conn_send(c, &sm);
    gate_reqs_of_gone(g, from.server_id, from.address, c->player);
    if (!can_move) {
        gate_move_end_player(g, c->player, true);
        metrics_add(g->m_moves_failed, 1);
        log_emit(LOG_WARN, "player_move_failed", "{s:I,s:s,s:s,s:s}", "player",
                 (json_int_t)c->player, "from", from.server_id, "why",
                 from.room ? "a private room's server is gone" : "no ready server", "reason",
                 "crashed");
        gate_req_free(r);
        return;
    }
    gate_reseat_go(r);
}

/*
 * The player's record, read before the crash move: another gateway may have moved the player
 * since this connection's seat was set (a drain's move of a player whose last request went
 * through that gateway), and the seat here was only stale -- then the record's seat is taken
 * and nothing is moved. A record that names the gone seat, none, or no answer: the move.
 */
static void gate_crash_lookup_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_crash_t *k = arg;
    gate_t *g = k->g;
    if (g->destroying) {
        free(k);
        return;
    }
    gate_conn_t *c = gate_conn_get(g, k->conn_id);
    if (c != NULL && (c->closing || c->session != k->session))
        c = NULL;
    gate_seat_t rec;
    bool elsewhere = reply != NULL && reply->type == REDIS_REPLY_STRING &&
                     gate_seat_parse(reply->str, reply->len, &rec) == 0 &&
                     !gate_seat_same(&rec, &k->from);
    if (c != NULL && c->seat != NULL && gate_seat_same(c->seat, &k->from) && !elsewhere) {
        gate_crash_move(g, c, k);
        free(k);
        return;
    }
    gate_move_end_player(g, k->player, true);
    if (elsewhere && c != NULL && c->seat != NULL && gate_seat_same(c->seat, &k->from)) {
        log_emit(LOG_INFO, "seat_moved_elsewhere", "{s:I,s:s,s:s,s:I}", "player",
                 (json_int_t)k->player, "from", k->from.server_id, "to", rec.server_id, "desk",
                 (json_int_t)rec.desk);
        gate_conn_set_seat(c, &rec);
    } else if (c == NULL && !elsewhere) {
        gate_seat_forget(g, k->player, &k->from, k->verdict, "server_gone");
    }
    free(k);
}

/*
 * A connected player's seat went with its server: its requests wait (UNAVAILABLE) while its
 * record is read (gate_crash_lookup_cb), then it is moved (gate_crash_move).
 */
static void gate_seat_crashed(gate_t *g, gate_conn_t *c, gate_seat_verdict_t v)
{
    gate_crash_t *k = xcalloc(1, sizeof *k);
    k->g = g;
    k->conn_id = c->id;
    k->session = c->session;
    k->player = c->player;
    k->from = *c->seat;
    k->verdict = v;
    gate_move_begin(g, c->player, true);
    char key[64];
    gate_seat_key(c->player, key, sizeof key);
    const char *argv[] = {"GET", key};
    if (rconn_command_argv(g->rc, gate_crash_lookup_cb, k, 2, argv, NULL) != 0)
        gate_crash_lookup_cb(g->rc, NULL, k);
}

/*
 * Judges again the seats at server_id (what changed: its link, its registry entry, a probe):
 * every connected player seated there whose seat is gone is moved (gate_seat_crashed: told
 * first, then its requests end); then the process that was lost is reported gone once, and what
 * else waits on it ends. Players already being moved are left to their move.
 */
void gate_check_server(gate_t *g, const char *server_id)
{
    gate_conn_t *c, *next;
    for (c = TAILQ_FIRST(&g->conns); c != NULL; c = next) {
        next = TAILQ_NEXT(c, all);
        if (c->closing || c->seat == NULL || strcmp(c->seat->server_id, server_id) != 0 ||
            u64map_get(g->moves, c->player, NULL))
            continue;
        gate_seat_verdict_t v = gate_seat_check(g, c->seat);
        if (v != GATE_SEAT_LIVE)
            gate_seat_crashed(g, c, v);
    }
    int64_t now = clock_mono_ms();
    char gone[8][72];
    size_t ngone = 0;
    gate_link_t *l;
    TAILQ_FOREACH(l, &g->links, all)
    {
        if (l->gone_reported || l->state == LINK_READY || strcmp(gate_link_id(l), server_id) != 0)
            continue;
        gate_seat_t self;
        memset(&self, 0, sizeof self);
        snprintf(self.server_id, sizeof self.server_id, "%s", server_id);
        snprintf(self.address, sizeof self.address, "%s", l->address);
        self.epoch = l->known_epoch;
        gate_seat_verdict_t v = gate_seat_check(g, &self);
        if (v == GATE_SEAT_LIVE)
            continue;
        l->gone_reported = true;
        metrics_add(g->m_servers_gone, 1);
        log_emit(LOG_WARN, "server_gone", "{s:s,s:s,s:I,s:s,s:I}", "server", server_id, "address",
                 l->address, "epoch", (json_int_t)l->known_epoch, "why", gate_seat_verdict_name(v),
                 "link_lost_ms", (json_int_t)(l->down_since_ms > 0 ? now - l->down_since_ms : -1));
        if (ngone < sizeof gone / sizeof gone[0])
            snprintf(gone[ngone++], sizeof gone[0], "%s", l->address);
    }
    for (size_t i = 0; i < ngone; i++)
        gate_reqs_of_gone(g, server_id, gone[i], 0);
}

/* Queues server_id for gate_check_server() on the next loop iteration (never from inside the
 * link, registry or Redis callbacks that noticed the change). */
void gate_check_queue(gate_t *g, const char *server_id)
{
    if (server_id[0] == '\0' || g->check_ev == NULL)
        return;
    for (size_t i = 0; i < g->ncheck; i++)
        if (strcmp(g->check_ids[i], server_id) == 0)
            return;
    if (g->ncheck == g->capcheck) {
        g->capcheck = g->capcheck ? g->capcheck * 2 : 8;
        g->check_ids = xreallocarray(g->check_ids, g->capcheck, sizeof *g->check_ids);
    }
    snprintf(g->check_ids[g->ncheck++], sizeof g->check_ids[0], "%s", server_id);
    event_active(g->check_ev, EV_TIMEOUT, 0);
}

void gate_check_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    /* Checks may queue more (a move's join failing over): those run on the next iteration. */
    size_t n = g->ncheck;
    char(*ids)[80] = xcalloc(n > 0 ? n : 1, sizeof *ids);
    memcpy(ids, g->check_ids, n * sizeof *ids);
    g->ncheck = 0;
    for (size_t i = 0; i < n; i++)
        gate_check_server(g, ids[i]);
    free(ids);
}

/*
 * Probes: while a link is lost, its server's registry entry is read directly, timed to its
 * expiry (PTTL), so the gateway knows the process is gone as soon as Redis does rather than at
 * the view's next full read. A live entry (a blip, a partition between this gateway and the
 * server) is read again when it would expire; an absent, moved or re-taken one ends the probing
 * and the seats there are judged again.
 */
const char gate_probe_lua[] = "local v = redis.call('GET', KEYS[1]) "
                              "if not v then return {} end "
                              "return {v, redis.call('PTTL', KEYS[1])}";
rconn_script_t *gate_script_probe;
rconn_script_t *gate_script_list; /* the lobby's live ads (LOBBY_LIST_LUA) */

static void gate_probe_arm(gate_link_t *l, int ms)
{
    if (l->probe_ev == NULL)
        return;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(l->probe_ev, &tv);
}

static void gate_probe_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_probe_t *p = arg;
    gate_t *g = p->g;
    gate_link_t *l = g->destroying ? NULL : gate_link_find(g, p->address);
    if (l == NULL || l->probe_token != p->token || l->state == LINK_READY) {
        free(p);
        return;
    }
    l->probe_token = 0;
    free(p);
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
        gate_probe_arm(l, 500); /* Redis did not answer: try again */
        return;
    }
    registry_entry_t e;
    if (reply->elements == 0) {
        l->probed = true;
        l->probed_absent = true;
        gate_check_queue(g, l->probed_id);
        return;
    }
    if (reply->elements != 2 || reply->element[0]->type != REDIS_REPLY_STRING ||
        registry_entry_parse(reply->element[0]->str, reply->element[0]->len, &e) != 0) {
        gate_probe_arm(l, 1000);
        return;
    }
    long long pttl =
        reply->element[1]->type == REDIS_REPLY_INTEGER ? reply->element[1]->integer : -1;
    l->probed = true;
    l->probed_absent = false;
    l->probed_epoch = e.epoch;
    snprintf(l->probed_address, sizeof l->probed_address, "%s", e.address);
    if ((l->known_epoch > 0 && e.epoch > l->known_epoch) || strcmp(e.address, l->address) != 0) {
        gate_check_queue(g, l->probed_id); /* the slot was taken again */
        return;
    }
    /* Still there: read it again just after it would expire (a live server re-arms it). */
    int ms = pttl < 0 ? 1000 : (int)(pttl > 2000 ? 2000 : pttl) + 5;
    gate_probe_arm(l, ms);
}

static void gate_probe_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_probe_send(arg);
}

/* Sends one probe of the link's server (none while the link is ready or one is in flight). */
void gate_probe_send(gate_link_t *l)
{
    gate_t *g = l->g;
    const char *id = gate_link_id(l);
    if (l->state == LINK_READY || l->probe_token != 0 || id[0] == '\0' || g->destroying)
        return;
    if (l->probe_ev == NULL)
        l->probe_ev = evtimer_new(g->base, gate_probe_timer_cb, l);
    if (strcmp(l->probed_id, id) != 0) {
        l->probed = false;
        snprintf(l->probed_id, sizeof l->probed_id, "%s", id);
    }
    char key[160];
    snprintf(key, sizeof key, "%s%s", REGISTRY_KEY_PREFIX, id);
    gate_probe_t *p = xcalloc(1, sizeof *p);
    p->g = g;
    p->token = ++g->next_probe_token;
    snprintf(p->address, sizeof p->address, "%s", l->address);
    const char *argv[] = {key};
    if (rconn_eval(g->rc, gate_script_probe, gate_probe_cb, p, 1, 1, argv, NULL) != 0) {
        free(p);
        gate_probe_arm(l, 500);
        return;
    }
    l->probe_token = p->token;
}
