/*
 * gate_watch.c -- spectators at the gateway (docs/spectators.md, docs/gateway.md "Spectators").
 *
 *   Watch{server_id, desk_id}  a table of the lobby (TableAd): a WatchTable request to its server
 *                              (GATE_REQ_WATCH through the usual request path: budget, retries,
 *                              the same rpc id), answered by the table's public Snapshot
 *   Watch{player_id}           the table where that player sits, from his seat record
 *                              ({croupier:seat}:<player>), read again every --watch-follow-ms:
 *                              when it names another table (a move, a whole-table move, a
 *                              tournament's re-seating, a drain) the spectator watches that one
 *   Unwatch                    ends the session (Result OK)
 *
 * The game server sends each public event of a table once per gateway (RpcFrame.watch_push);
 * it is packed once here and its bytes are written to every spectator of the table on this
 * gateway. A spectator whose unsent output would pass --watch-output-cap is dropped
 * (GoAway{OVERLOADED}): the table never waits for him. The gateway tells each server how many
 * spectators of each desk it holds (WatchTable, absolute counts, sent again every second so a
 * lost frame or link is repaired). A watch session refuses what a seat does (Join, rooms,
 * Action, Leave, Resume, tournament seats): WATCHING, nothing changed.
 */
#include "gate_int.h"

/* A followed player's table not found again within this long ends the watch (WatchEnded): a
 * tournament seats a moved player when his next table deals its next hand. */
#define GATE_WATCH_LOST_MS 60000

/* A table watched from this gateway: its spectators here (counted at its server as n). */
typedef struct gate_wtable {
    char address[72];
    char server_id[80];
    uint64_t desk;
    uint64_t key;
    uint32_t n;      /* spectators told to the server: watching, or asked and not answered */
    uint64_t *conns; /* connections watching (ids), nconns of cap */
    size_t nconns, cap;
    bool held; /* its batch is being written: not freed meanwhile */
    /* The table's events not yet written to its spectators, as frames (length-prefixed), and
     * how many: written to every spectator at once when the batch timer fires. */
    struct evbuffer *batch;
    unsigned nbatch;
    bool queued; /* on the list of tables whose batch waits (gate_watch_all.due) */
} gate_wtable_t;

/* Tables a watch session remembers having watched (gate_watch_saw). */
#define GATE_WATCH_SEEN 8

/* A connection's watch session (c->watch). */
typedef struct gate_watch {
    gate_wtable_t *table; /* watched or asked for; NULL: none (a follow between tables) */
    bool watching;        /* the Snapshot came: the table's events are written to it */
    uint64_t asked_rid;   /* the rpc id of the Watch in flight; 0: none */
    uint64_t client_rid;  /* the client's Watch, not answered yet; 0: answered */
    uint64_t follow;      /* the player followed; 0: a table by id */
    int64_t lost_ms;      /* follow: since when no table is watched; 0: one is */
    struct event *timer;  /* follow: the seat's reads */
    bool reading;         /* follow: a seat read in flight */
    struct {
        char server_id[80];
        uint64_t desk;
    } seen[GATE_WATCH_SEEN]; /* the tables watched in this session, the newest at seen_next-1 */
    unsigned seen_next;
} gate_watch_t;

/* A table's batch this large is written at once, without waiting for the timer. */
#define GATE_WATCH_BATCH_MAX 16384

struct gate_watch_all {
    u64map_t *tables; /* key -> gate_wtable_t * */
    uint64_t *due;    /* keys of the tables whose batch waits, ndue of capdue */
    size_t ndue, capdue;
    struct event *flush;  /* the batches' timer (--watch-flush-ms), armed while one waits */
    long sessions;        /* watch sessions on this gateway */
    struct event *resend; /* every second: every table's count again */
    metrics_t *m_spectators, *m_dropped, *m_refused;
};

/* A seat read for a follow: the connection may be gone when it answers. */
typedef struct {
    gate_t *g;
    uint64_t conn_id, session;
} gate_watch_read_t;

static uint64_t gate_watch_key(const char *address, uint64_t desk)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = address; *p != '\0'; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ULL;
    h ^= desk * 0x9e3779b97f4a7c15ULL;
    return h ? h : 1;
}

/* The table at (address, desk): found, or made (create), or NULL. A key taken by another table
 * (a hash collision) moves on to the next key. */
static gate_wtable_t *gate_wtable_get(gate_t *g, const char *address, const char *server_id,
                                      uint64_t desk, bool create)
{
    uint64_t key = gate_watch_key(address, desk), p;
    for (int i = 0; i < 8; i++, key = key + 1 ? key + 1 : 1) {
        if (!u64map_get(g->watch->tables, key, &p)) {
            if (!create)
                return NULL;
            gate_wtable_t *t = xcalloc(1, sizeof *t);
            snprintf(t->address, sizeof t->address, "%s", address);
            snprintf(t->server_id, sizeof t->server_id, "%s", server_id != NULL ? server_id : "");
            t->desk = desk;
            t->key = key;
            u64map_put(g->watch->tables, key, (uint64_t)(uintptr_t)t);
            return t;
        }
        gate_wtable_t *t = (gate_wtable_t *)(uintptr_t)p;
        if (t->desk == desk && strcmp(t->address, address) == 0)
            return t;
    }
    return NULL;
}

/* Tells the table's server how many spectators of it this gateway holds (one-way). */
static void gate_wtable_count(gate_t *g, gate_wtable_t *t)
{
    if (g->destroying)
        return;
    gate_link_t *l = gate_link_find(g, t->address);
    if (l == NULL || l->state != LINK_READY)
        return; /* a lost link counts 0 there; the resend repairs it once the link is back */
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__WatchTable w = CROUPIER__WATCH_TABLE__INIT;
    w.desk_id = t->desk;
    w.spectators = t->n;
    f.body_case = CROUPIER__RPC_FRAME__BODY_WATCH;
    f.watch = &w;
    gate_link_send_frame(l, &f);
}

/* Forgets a table nobody here watches or asks for any more. */
static void gate_wtable_put(gate_t *g, gate_wtable_t *t)
{
    if (t->n > 0 || t->nconns > 0 || t->held || t->queued)
        return;
    u64map_del(g->watch->tables, t->key);
    if (t->batch != NULL)
        evbuffer_free(t->batch);
    free(t->conns);
    free(t);
}

static void gate_wtable_remove_conn(gate_wtable_t *t, uint64_t conn_id)
{
    for (size_t i = 0; i < t->nconns; i++)
        if (t->conns[i] == conn_id) {
            t->conns[i] = t->conns[--t->nconns];
            return;
        }
}

/*
 * The session leaves its table: no longer written to, and no longer counted -- unless its Watch
 * is still in flight, whose answer (or end) counts it down (gate_watch_reply, _req_gone).
 */
static void gate_watch_detach(gate_t *g, gate_conn_t *c)
{
    gate_watch_t *w = c->watch;
    gate_wtable_t *t = w->table;
    if (t == NULL)
        return;
    w->table = NULL;
    if (w->watching)
        gate_wtable_remove_conn(t, c->id);
    if (w->asked_rid == 0 && t->n > 0) {
        t->n--;
        gate_wtable_count(g, t);
    }
    w->asked_rid = 0;
    w->watching = false;
    gate_wtable_put(g, t);
}

/* Ends a connection's watch session (Unwatch, a new Watch, the table's end, the connection's). */
static void gate_watch_end(gate_t *g, gate_conn_t *c)
{
    gate_watch_t *w = c->watch;
    if (w == NULL)
        return;
    gate_watch_detach(g, c);
    if (w->timer != NULL)
        event_free(w->timer);
    free(w);
    c->watch = NULL;
    g->watch->sessions--;
    metrics_set(g->watch->m_spectators, (double)g->watch->sessions);
}

/* Pushes WatchEnded{code, detail} to c and ends its session. */
static void gate_watch_ended(gate_t *g, gate_conn_t *c, int code, const char *detail)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__WatchEnded we = CROUPIER__WATCH_ENDED__INIT;
    we.code = (Croupier__ErrorCode)code;
    we.detail = (char *)detail;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_WATCH_ENDED;
    sm.watch_ended = &we;
    gate_conn_send(c, &sm);
    gate_watch_end(g, c);
}

/* Asks seat's server to let c watch seat's desk (a GATE_REQ_WATCH). client_rid: the client's
 * Watch to answer with the Snapshot, or 0 (a follow's next table: the Snapshot is pushed). */
static void gate_watch_ask(gate_t *g, gate_conn_t *c, const gate_seat_t *seat, uint64_t client_rid)
{
    gate_watch_t *w = c->watch;
    gate_wtable_t *t = gate_wtable_get(g, seat->address, seat->server_id, seat->desk, true);
    if (t == NULL) {
        if (client_rid != 0)
            gate_conn_error(c, client_rid, CROUPIER__ERROR_CODE__UNAVAILABLE,
                            "too many tables watched here; retry");
        return;
    }
    t->n++;
    w->table = t;
    w->watching = false;
    gate_req_t *r = gate_req_new(g, GATE_REQ_WATCH, c->player, c->session);
    r->conn_id = c->id;
    r->client_rid = client_rid;
    r->internal = client_rid == 0;
    r->target = *seat;
    r->have_target = true;
    if (!r->internal)
        c->inflight++;
    w->asked_rid = r->rid;
    w->client_rid = 0;
    gate_req_dispatch(r);
}

/* ---- follow a player ------------------------------------------------------------------------ */

static void gate_watch_read(gate_t *g, gate_conn_t *c);
static void gate_wtable_flush(gate_t *g, gate_wtable_t *t);

static void gate_watch_read_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_watch_read_t *rd = arg;
    gate_t *g = rd->g;
    gate_conn_t *c = g->destroying ? NULL : gate_conn_get(g, rd->conn_id);
    bool mine = c != NULL && !c->closing && c->session == rd->session && c->watch != NULL;
    free(rd);
    if (!mine)
        return;
    gate_watch_t *w = c->watch;
    w->reading = false;
    gate_seat_t s;
    bool seated = reply != NULL && reply->type == REDIS_REPLY_STRING &&
                  gate_seat_parse(reply->str, reply->len, &s) == 0;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        if (w->client_rid != 0) {
            gate_conn_error(c, w->client_rid, CROUPIER__ERROR_CODE__UNAVAILABLE,
                            "the seat store did not answer; retry");
            gate_watch_end(g, c);
        }
        return;
    }
    if (!seated) {
        if (w->client_rid != 0) { /* the first read: nothing to follow */
            gate_conn_error(c, w->client_rid, CROUPIER__ERROR_CODE__NOT_SEATED,
                            "the player sits at no table");
            gate_watch_end(g, c);
        } else if (w->table == NULL && w->lost_ms != 0 &&
                   gate_now_mono(g) - w->lost_ms > GATE_WATCH_LOST_MS) {
            gate_watch_ended(g, c, CROUPIER__ERROR_CODE__NOT_SEATED,
                             "the player you follow sits at no table");
        }
        return; /* he left his table: it is watched until it ends or he sits elsewhere */
    }
    if (w->table != NULL && w->table->desk == s.desk && strcmp(w->table->address, s.address) == 0)
        return; /* the same table */
    if (w->asked_rid != 0)
        return; /* a Watch is in flight: the next read decides */
    const registry_entry_t *e = registry_view_find(g->view, s.server_id);
    if (e == NULL || strcmp(e->address, s.address) != 0) {
        if (w->client_rid != 0) {
            gate_conn_error(c, w->client_rid, CROUPIER__ERROR_CODE__UNAVAILABLE,
                            "the player's table is moving; retry");
            gate_watch_end(g, c);
        }
        return; /* a seat whose server is not listed (yet): read again */
    }
    gate_watch_detach(g, c);
    if (w->lost_ms == 0)
        w->lost_ms = gate_now_mono(g);
    gate_watch_ask(g, c, &s, w->client_rid);
}

static void gate_watch_read(gate_t *g, gate_conn_t *c)
{
    gate_watch_t *w = c->watch;
    if (w->reading || g->rc == NULL)
        return;
    char key[64];
    gate_seat_key(w->follow, key, sizeof key);
    const char *argv[] = {"GET", key};
    gate_watch_read_t *rd = xcalloc(1, sizeof *rd);
    rd->g = g;
    rd->conn_id = c->id;
    rd->session = c->session;
    if (rconn_command_argv(g->rc, gate_watch_read_cb, rd, 2, argv, NULL) != 0) {
        free(rd);
        return;
    }
    w->reading = true;
}

static void gate_watch_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_conn_t *c = arg;
    if (c->watch == NULL || c->closing)
        return;
    gate_watch_t *w = c->watch;
    if (w->table == NULL && w->lost_ms != 0 && w->asked_rid == 0 &&
        gate_now_mono(c->g) - w->lost_ms > GATE_WATCH_LOST_MS) {
        gate_watch_ended(c->g, c, CROUPIER__ERROR_CODE__NOT_SEATED,
                         "the player you follow sits at no watchable table");
        return;
    }
    gate_watch_read(c->g, c);
}

/* ---- client requests ------------------------------------------------------------------------ */

void gate_client_watch(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    gate_t *g = c->g;
    if (c->player == 0 || c->login_busy) {
        metrics_add(g->m_reject[REJ_UNAUTH], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAUTHENTICATED,
                        c->player == 0 ? "log in first" : "login not complete");
        return;
    }
    if (m->body_case == CROUPIER__CLIENT_MESSAGE__BODY_UNWATCH) {
        gate_watch_end(g, c);
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Result res = CROUPIER__RESULT__INIT;
        sm.has_request_id = true;
        sm.request_id = m->request_id;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
        sm.result = &res;
        gate_conn_send(c, &sm);
        return;
    }
    const Croupier__Watch *q = m->watch;
    bool by_table = q->server_id != NULL || q->has_desk_id;
    bool by_player = q->has_player_id;
    if (by_table == by_player ||
        (by_table && (q->server_id == NULL || q->server_id[0] == '\0' ||
                      strlen(q->server_id) >= sizeof((gate_seat_t){0}.server_id) ||
                      !q->has_desk_id || q->desk_id == 0)) ||
        (by_player && q->player_id == 0)) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "Watch names a table (server_id and desk_id, as TableAd) or a player "
                        "(player_id), one of them");
        return;
    }
    if (by_player && q->player_id == c->player) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "you cannot watch yourself");
        return;
    }
    if (c->seat != NULL) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__ALREADY_SEATED,
                        "you hold a seat: a spectator holds none (Leave first)");
        return;
    }
    if (g->exit_step >= 3) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__DRAINING, "gateway closing");
        return;
    }
    if (c->inflight >= g->cfg.max_inflight) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__OVERLOADED,
                        "too many requests in flight");
        return;
    }
    gate_watch_end(g, c); /* a new Watch replaces the session */
    int max = g->cfg.watch_max == 0 ? 10000 : g->cfg.watch_max;
    if (max < 0 || g->watch->sessions >= max) {
        metrics_add(g->watch->m_refused, 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__WATCH_FULL,
                        "this gateway has as many spectators as it allows");
        return;
    }
    gate_watch_t *w = xcalloc(1, sizeof *w);
    c->watch = w;
    /* The kernel's share of a spectator's output is bounded too, so a spectator that does not
     * read shows up in the connection's own output within about the cap, and thousands of them
     * cannot pin megabytes of socket buffers each (Linux doubles the value). */
    int sndbuf = (int)(g->cfg.watch_output_cap > 0 ? g->cfg.watch_output_cap : 65536);
    evutil_socket_t fd = bufferevent_getfd(c->bev);
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    g->watch->sessions++;
    metrics_set(g->watch->m_spectators, (double)g->watch->sessions);
    if (by_player) {
        w->follow = q->player_id;
        w->client_rid = m->request_id;
        w->lost_ms = gate_now_mono(g);
        int ms = g->cfg.watch_follow_ms > 0 ? g->cfg.watch_follow_ms : 1000;
        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
        w->timer = event_new(g->base, -1, EV_PERSIST, gate_watch_timer_cb, c);
        event_add(w->timer, &tv);
        gate_watch_read(g, c);
        if (!w->reading) {
            gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE,
                            "the seat store is unreachable; retry");
            gate_watch_end(g, c);
        }
        return;
    }
    const registry_entry_t *e = registry_view_find(g->view, q->server_id);
    if (e == NULL) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__NO_SUCH_TABLE,
                        "no such server: its tables are gone");
        gate_watch_end(g, c);
        return;
    }
    gate_seat_t s = {0};
    snprintf(s.server_id, sizeof s.server_id, "%s", e->id);
    snprintf(s.address, sizeof s.address, "%s", e->address);
    s.desk = q->desk_id;
    s.epoch = e->epoch;
    gate_watch_ask(g, c, &s, m->request_id);
}

bool gate_watch_refuses(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    switch (m->body_case) {
    case CROUPIER__CLIENT_MESSAGE__BODY_JOIN:
    case CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM:
    case CROUPIER__CLIENT_MESSAGE__BODY_JOIN_ROOM:
    case CROUPIER__CLIENT_MESSAGE__BODY_LEAVE:
    case CROUPIER__CLIENT_MESSAGE__BODY_ACTION:
    case CROUPIER__CLIENT_MESSAGE__BODY_RESUME:
    case CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT:
    case CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT:
        metrics_add(c->g->watch->m_refused, 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__WATCHING,
                        "a watch session cannot sit, act or leave: Unwatch first");
        return true;
    default:
        return false;
    }
}

/*
 * Whether c's watch session watched the table of round_id ("service:slot:epoch:desk:seq": the
 * server "service:slot" and the desk): its spectator may then get the round's replay as anyone
 * with a share code would (docs/spectators.md "After the round").
 */
bool gate_watch_saw(const gate_conn_t *c, const char *round_id)
{
    const gate_watch_t *w = c->watch;
    if (w == NULL || round_id == NULL)
        return false;
    const char *p = strchr(round_id, ':');
    p = p != NULL ? strchr(p + 1, ':') : NULL;             /* the end of "service:slot" */
    const char *e = p != NULL ? strchr(p + 1, ':') : NULL; /* the end of the epoch */
    if (p == NULL || e == NULL)
        return false;
    size_t n = (size_t)(p - round_id);
    char *end = NULL;
    unsigned long long desk = strtoull(e + 1, &end, 10);
    if (end == NULL || *end != ':')
        return false;
    for (unsigned i = 0; i < GATE_WATCH_SEEN && i < w->seen_next; i++)
        if (w->seen[i].desk == desk && strlen(w->seen[i].server_id) == n &&
            strncmp(w->seen[i].server_id, round_id, n) == 0)
            return true;
    return false;
}

/* ---- the rpc side --------------------------------------------------------------------------- */

void gate_watch_fill(gate_req_t *r, Croupier__RpcFrame *f, Croupier__WatchTable *w)
{
    gate_wtable_t *t = gate_wtable_get(r->g, r->target.address, NULL, r->target.desk, false);
    w->desk_id = r->target.desk;
    w->spectators = t != NULL && t->n > 0 ? t->n : 1;
    f->body_case = CROUPIER__RPC_FRAME__BODY_WATCH;
    f->watch = w;
}

/* The session r was made for, if it still waits for r. */
static gate_conn_t *gate_watch_req_conn(gate_req_t *r)
{
    gate_conn_t *c = gate_conn_get(r->g, r->conn_id);
    if (c == NULL || c->closing || c->session != r->session || c->watch == NULL ||
        c->watch->asked_rid != r->rid)
        return NULL;
    return c;
}

/* r is over without being counted as watching: its table's count goes back down. */
static void gate_watch_uncount(gate_req_t *r)
{
    gate_wtable_t *t = gate_wtable_get(r->g, r->target.address, NULL, r->target.desk, false);
    if (t != NULL && t->n > 0) {
        t->n--;
        gate_wtable_count(r->g, t);
        gate_wtable_put(r->g, t);
    }
}

void gate_watch_reply(gate_req_t *r, Croupier__RpcFrame *f)
{
    gate_t *g = r->g;
    r->watch_done = true;
    gate_conn_t *c = gate_watch_req_conn(r);
    const Croupier__Reply *rep = f->reply;
    Croupier__ServerMessage *snap = rep->payload;
    bool ok = rep->code == CROUPIER__ERROR_CODE__OK && snap != NULL &&
              snap->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    if (c == NULL || !ok) {
        gate_watch_uncount(r);
        gate_conn_t *asker = c == NULL && r->client_rid != 0 ? gate_req_conn(r) : NULL;
        if (asker != NULL) /* an Unwatch or a new Watch came first: this one is answered */
            gate_conn_error_retriable(asker, r->client_rid, CROUPIER__ERROR_CODE__UNAVAILABLE,
                                      false, "superseded by a later Watch or Unwatch");
        if (c != NULL) {
            gate_watch_t *w = c->watch;
            w->asked_rid = 0;
            w->table = NULL;
            const char *msg = rep->error != NULL && rep->error->message != NULL
                                  ? rep->error->message
                                  : frame_error_code_name(rep->code);
            if (r->client_rid != 0) {
                gate_conn_error(c, r->client_rid, ok ? CROUPIER__ERROR_CODE__INTERNAL : rep->code,
                                msg);
                gate_watch_end(g, c);
            } else if (w->follow == 0) {
                gate_watch_ended(g, c, rep->code, msg);
            } /* a follow tries again at its next read */
        }
        gate_req_free(r);
        return;
    }
    gate_watch_t *w = c->watch;
    gate_wtable_t *t = w->table;
    w->asked_rid = 0;
    w->watching = true;
    w->lost_ms = 0;
    if (t->nconns == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 8;
        t->conns = xreallocarray(t->conns, t->cap, sizeof *t->conns);
    }
    gate_wtable_flush(g, t); /* what came before the Snapshot is in it */
    t->conns[t->nconns++] = c->id;
    unsigned k = w->seen_next++ % GATE_WATCH_SEEN;
    snprintf(w->seen[k].server_id, sizeof w->seen[k].server_id, "%s", r->target.server_id);
    w->seen[k].desk = r->target.desk;
    snap->has_request_id = r->client_rid != 0;
    snap->request_id = r->client_rid;
    gate_conn_send(c, snap);
    gate_req_free(r);
}

void gate_watch_req_gone(gate_req_t *r)
{
    if (r->watch_done)
        return;
    r->watch_done = true;
    gate_conn_t *c = gate_watch_req_conn(r);
    gate_watch_uncount(r);
    if (c == NULL)
        return;
    c->watch->asked_rid = 0;
    c->watch->table = NULL;
    if (c->watch->follow == 0)
        gate_watch_end(r->g, c); /* the client was answered (gate_req_fail) */
}

/*
 * Writes the table's batch to each of its spectators here: the same bytes to each (one copy into
 * each output, one write each after the loop turn's player output, GATE_WATCH_WRITES
 * spectators a turn: gate_out.c gate_flush_cb), each checked against
 * --watch-output-cap: a spectator it would pass is dropped, never waited for.
 */
static void gate_wtable_flush(gate_t *g, gate_wtable_t *t)
{
    size_t len = t->batch != NULL ? evbuffer_get_length(t->batch) : 0;
    if (len == 0)
        return;
    const uint8_t *bytes = evbuffer_pullup(t->batch, -1);
    size_t cap = g->cfg.watch_output_cap > 0 ? g->cfg.watch_output_cap : 65536;
    t->held = true;
    for (size_t i = 0; i < t->nconns;) {
        gate_conn_t *c = gate_conn_get(g, t->conns[i]);
        if (c == NULL || c->closing || c->watch == NULL || c->watch->table != t) {
            t->conns[i] = t->conns[--t->nconns]; /* its own end counts it down */
            continue;
        }
        if (gate_conn_queued(c) + len > cap) {
            metrics_add(g->watch->m_dropped, 1);
            log_emit(LOG_INFO, "spectator_dropped", "{s:I,s:I,s:I}", "conn", (json_int_t)c->id,
                     "player", (json_int_t)c->player, "queued", (json_int_t)gate_conn_queued(c));
            gate_watch_detach(g, c); /* takes it off the list */
            gate_conn_goaway_last(c, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED,
                                  "slow spectator: output above the cap");
            gate_conn_close(c, "slow_spectator");
            continue;
        }
        if (evbuffer_add(gate_conn_out(c), bytes, len) == 0) {
            metrics_add(g->m_frames_out, t->nbatch);
            metrics_add(g->m_tout[c->ws != NULL], t->nbatch);
            gate_conn_dirty_watch(c); /* after the players' frames, a slice at a time */
        }
        i++;
    }
    evbuffer_drain(t->batch, len);
    t->nbatch = 0;
    t->held = false;
}

static void gate_watch_flush_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    struct gate_watch_all *a = g->watch;
    size_t n = a->ndue;
    a->ndue = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t p;
        if (!u64map_get(a->tables, a->due[i], &p))
            continue;
        gate_wtable_t *t = (gate_wtable_t *)(uintptr_t)p;
        t->queued = false;
        gate_wtable_flush(g, t);
        gate_wtable_put(g, t);
    }
}

/* The table's batch waits for the timer (armed with the first batch that waits). */
static void gate_wtable_queue(gate_t *g, gate_wtable_t *t)
{
    struct gate_watch_all *a = g->watch;
    if (t->queued)
        return;
    if (a->ndue == a->capdue) {
        a->capdue = a->capdue ? a->capdue * 2 : 16;
        a->due = xreallocarray(a->due, a->capdue, sizeof *a->due);
    }
    a->due[a->ndue++] = t->key;
    t->queued = true;
    if (a->ndue == 1) {
        int ms = g->cfg.watch_flush_ms > 0 ? g->cfg.watch_flush_ms : 0;
        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
        event_add(a->flush, &tv);
    }
}

/*
 * The table is gone (its WatchEnded, packed in buf, or its server gone): its batch is written,
 * then a spectator of the table by id gets the end and his watch ends; one following a player
 * is kept, and his seat is read at once (it says where the player went).
 */
static void gate_wtable_end(gate_t *g, gate_wtable_t *t, const uint8_t *buf, size_t len)
{
    gate_wtable_flush(g, t);
    t->held = true;
    while (t->nconns > 0) {
        gate_conn_t *c = gate_conn_get(g, t->conns[0]);
        if (c == NULL || c->closing || c->watch == NULL || c->watch->table != t) {
            t->conns[0] = t->conns[--t->nconns];
            continue;
        }
        if (c->watch->follow != 0) {
            gate_watch_detach(g, c); /* takes it off the list */
            c->watch->lost_ms = gate_now_mono(g);
            gate_watch_read(g, c);
            continue;
        }
        if (frame_write_prefixed(gate_conn_out(c), 0, 0, buf, len, &g->lim) == 0) {
            gate_conn_count_out(c);
            gate_conn_dirty(c);
        }
        gate_watch_end(g, c); /* takes it off the list */
    }
    t->held = false;
    gate_wtable_put(g, t);
}

/*
 * A table's public event from its server. Its ServerMessage is packed once and appended to the
 * table's batch, written to the spectators here when the batch timer fires (--watch-flush-ms) or
 * the batch passes GATE_WATCH_BATCH_MAX. A WatchEnded is written at once after the batch: a
 * spectator of the table by id gets it and his watch ends; one following a player is kept
 * (the player's seat says where he went).
 */
void gate_watch_push(gate_link_t *l, Croupier__RpcFrame *f)
{
    gate_t *g = l->g;
    const Croupier__WatchPush *wp = f->watch_push;
    gate_wtable_t *t = gate_wtable_get(g, l->address, NULL, wp->desk_id, false);
    if (t == NULL || t->nconns == 0) {
        if (t == NULL) { /* nobody here watches it (any more): the server is told so */
            gate_wtable_t none = {.desk = wp->desk_id};
            snprintf(none.address, sizeof none.address, "%s", l->address);
            gate_wtable_count(g, &none);
        }
        return;
    }
    size_t len = protobuf_c_message_get_packed_size(&wp->msg->base);
    if (len > g->lim.max_frame) {
        log_emit(LOG_WARN, "watch_push_too_large", "{s:I,s:I}", "desk", (json_int_t)wp->desk_id,
                 "len", (json_int_t)len);
        return;
    }
    bool ended = wp->msg->body_case == CROUPIER__SERVER_MESSAGE__BODY_WATCH_ENDED;
    if (!ended) {
        if (t->batch == NULL)
            t->batch = evbuffer_new();
        uint8_t hdr[4] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                          (uint8_t)len};
        struct evbuffer_iovec v;
        evbuffer_add(t->batch, hdr, sizeof hdr);
        if (evbuffer_reserve_space(t->batch, (ev_ssize_t)len, &v, 1) != 1)
            return;
        protobuf_c_message_pack(&wp->msg->base, v.iov_base);
        v.iov_len = len;
        evbuffer_commit_space(t->batch, &v, 1);
        t->nbatch++;
        if (g->cfg.watch_flush_ms > 0 && evbuffer_get_length(t->batch) < GATE_WATCH_BATCH_MAX)
            gate_wtable_queue(g, t);
        else
            gate_wtable_flush(g, t);
        return;
    }
    /* The table is gone: its last events first, then the end. */
    uint8_t small[512];
    uint8_t *buf = len <= sizeof small ? small : xmalloc(len);
    protobuf_c_message_pack(&wp->msg->base, buf);
    gate_wtable_end(g, t, buf, len);
    if (buf != small)
        free(buf);
}

void gate_watch_conn_gone(gate_conn_t *c)
{
    if (c->watch != NULL)
        gate_watch_end(c->g, c);
}

/* ---- the gateway's side --------------------------------------------------------------------- */

typedef struct {
    uint64_t *keys;
    size_t n, cap;
} gate_watch_keys_t;

static void gate_watch_key_one(uint64_t key, uint64_t val, void *arg)
{
    (void)val;
    gate_watch_keys_t *k = arg;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 16;
        k->keys = xreallocarray(k->keys, k->cap, sizeof *k->keys);
    }
    k->keys[k->n++] = key;
}

/*
 * Every second: each table's count sent again (a frame lost with a link is repaired), and the
 * tables whose server the registry no longer lists (stopped without telling: a crash) end for
 * their spectators (WatchEnded{NO_SUCH_TABLE}); followers read their player's seat again.
 */
static void gate_watch_resend_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    gate_watch_keys_t k = {0};
    u64map_each(g->watch->tables, gate_watch_key_one, &k);
    uint8_t end[256];
    size_t endlen = 0;
    for (size_t i = 0; i < k.n; i++) {
        uint64_t p;
        if (!u64map_get(g->watch->tables, k.keys[i], &p))
            continue;
        gate_wtable_t *t = (gate_wtable_t *)(uintptr_t)p;
        const registry_entry_t *e =
            t->server_id[0] != '\0' ? registry_view_find(g->view, t->server_id) : NULL;
        if (t->server_id[0] == '\0' || (e != NULL && strcmp(e->address, t->address) == 0)) {
            gate_wtable_count(g, t);
            continue;
        }
        if (t->nconns == 0)
            continue; /* asked, not answered: the request's own end counts it down */
        if (endlen == 0) {
            Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
            Croupier__WatchEnded we = CROUPIER__WATCH_ENDED__INIT;
            we.code = CROUPIER__ERROR_CODE__NO_SUCH_TABLE;
            we.detail = "the table's server stopped";
            sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_WATCH_ENDED;
            sm.watch_ended = &we;
            endlen = protobuf_c_message_pack(&sm.base, end);
        }
        gate_wtable_end(g, t, end, endlen);
    }
    free(k.keys);
}

int gate_watch_init(gate_t *g)
{
    struct gate_watch_all *a = xcalloc(1, sizeof *a);
    a->tables = u64map_create();
    metrics_registry_t *m = g->cfg.metrics;
    a->m_spectators = metrics_gauge(m, "gate_spectators", NULL,
                                    "Watch sessions (spectators) on this gateway, apart from "
                                    "the players (docs/spectators.md)");
    a->m_dropped = metrics_counter(m, "gate_spectators_dropped_total", NULL,
                                   "Spectators dropped for reading too slowly");
    a->m_refused = metrics_counter(m, "gate_watch_refused_total", NULL,
                                   "Watches refused at this gateway's cap, and seat requests "
                                   "refused from watch sessions");
    a->resend = event_new(g->base, -1, EV_PERSIST, gate_watch_resend_cb, g);
    a->flush = evtimer_new(g->base, gate_watch_flush_cb, g);
    struct timeval tv = {1, 0};
    event_add(a->resend, &tv);
    g->watch = a;
    return 0;
}

static void gate_watch_free_one(uint64_t key, uint64_t val, void *arg)
{
    (void)key;
    (void)arg;
    gate_wtable_t *t = (gate_wtable_t *)(uintptr_t)val;
    if (t->batch != NULL)
        evbuffer_free(t->batch);
    free(t->conns);
    free(t);
}

void gate_watch_shutdown(gate_t *g)
{
    if (g->watch == NULL)
        return;
    u64map_each(g->watch->tables, gate_watch_free_one, NULL);
    u64map_destroy(g->watch->tables);
    if (g->watch->resend != NULL)
        event_free(g->watch->resend);
    if (g->watch->flush != NULL)
        event_free(g->watch->flush);
    free(g->watch->due);
    free(g->watch);
    g->watch = NULL;
}
