/*
 * gate.c -- the gateway core: client connections, sessions, rpc links, routing, deadlines,
 * seats, table moves and the four-step exit. See gate.h for the contract.
 */
#include "gate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <bsd/stdlib.h>
#include <bsd/sys/queue.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/bufferevent_struct.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/listener.h>
#include <jansson.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "config.h"
#include "drain.h"
#include "frame.h"
#include "gate_seat.h"
#include "room.h"
#include "gate_tls.h"
#include "gate_ws.h"
#include "lobby.h"
#include "log.h"
#include "rconn.h"
#include "registry.h"
#include "u64map.h"
#include "xmalloc.h"

/* ---- types ---------------------------------------------------------------------------------- */

typedef struct gate_link gate_link_t;
typedef struct gate_req gate_req_t;

/* Requests of a connection kept after DEADLINE_EXCEEDED (gate_conn_expired_keep), at most. */
#define GATE_EXPIRED_KEEP 4

/* An Action or Leave answered DEADLINE_EXCEEDED, and the seat it was made for. */
typedef struct gate_expired {
    uint64_t client_rid; /* 0: a free entry */
    gate_seat_t seat;
} gate_expired_t;

typedef struct gate_conn {
    TAILQ_ENTRY(gate_conn) all;
    gate_t *g;
    uint64_t id;
    struct bufferevent *bev;
    gate_ws_t *ws;   /* a WebSocket connection (gate_ws.h); NULL: the TCP framing */
    bool tls;        /* bev is a bufferevent_openssl (gate_tls.h): never written to directly */
    uint64_t player; /* 0 until a successful login */
    uint64_t session;
    gate_seat_t *seat; /* NULL: not seated (or not known yet) */
    bool seat_known;   /* the seat was read from Redis (or set by a reply) */
    bool seat_lost;    /* the seat was forgotten because its server is gone (gate_seat.h); a
                          request needing a seat then gets TABLE_CLOSED, not NOT_SEATED */
    bool login_busy;   /* a login's seat lookup is in flight */
    /* Seat requests answered DEADLINE_EXCEEDED, which the client may send again with the same
     * request id: GATE_EXPIRED_KEEP entries (allocated at the first), the oldest reused. */
    gate_expired_t *expired;
    unsigned expired_next;
    bool closing;
    bool shut_wr;
    bool eof;
    uint16_t inflight;
    uint64_t login_rid; /* client request id of the login in flight */
    int64_t last_rx_ms;
    int64_t tokens_ms;
    double tokens;
    /* Edge limits (docs/gateway.md "Edge limits"). */
    int64_t accept_ms;  /* monotonic: the Login and WebSocket handshake deadlines run from it */
    int64_t partial_ms; /* since when a frame is begun and not complete; 0: none */
    int64_t out_ms;     /* the last sweep that saw the output empty or moving */
    uint64_t rx_frames; /* frames read (a partial frame's deadline restarts with each) */
    uint64_t addr_key;  /* the source address's key in g->addr_conns; 0: not counted */
    bool admitted;      /* counted in g->admitted (not refused by a cap) */
    bool out_moved;     /* bytes left the output since the last sweep (gate_conn_out_cb) */
    int8_t refused;     /* EDGE_* of the cap that refused it, -1: none */
    bool in_unauth;     /* on g->unauth: admitted, not logged in, not closing */
    TAILQ_ENTRY(gate_conn) unauth;
    struct event *close_ev;       /* close-timeout timer, only while closing */
    TAILQ_ENTRY(gate_conn) dirty; /* on g->dirty_conns: output queued this loop iteration */
    bool in_dirty;
} gate_conn_t;

TAILQ_HEAD(gate_conn_list, gate_conn);

/* Bytes queued to one game server before new requests wait instead (memory bound). */
#define GATE_LINK_OUTPUT_CAP (8u << 20)

enum { LINK_DOWN = 0, LINK_CONNECTING = 1, LINK_HELLO = 2, LINK_READY = 3 };

struct gate_link {
    TAILQ_ENTRY(gate_link) all;
    gate_t *g;
    char address[72];
    char server_id[80]; /* registry id */
    struct bufferevent *bev;
    int state;
    unsigned gen;                 /* bumped at every failure (stale callbacks check it) */
    u64map_t *pending;            /* rpc request id -> gate_req_t * (sent, waiting for the reply) */
    TAILQ_HEAD(, gate_req) queue; /* waiting for the link to be ready */
    struct event *timer;          /* reconnect backoff, then ping period */
    int backoff_ms;
    int64_t down_until_ms; /* no reconnect before this (monotonic) */
    int64_t last_pong_ms;
    uint64_t nonce;
    TAILQ_ENTRY(gate_link) dirty; /* on g->dirty_links: output queued this loop iteration */
    bool in_dirty;
    /* The process behind the link, from its hello and the registry (gate_seat.h): the server
     * id it holds, the lowest and highest lease epochs known to be its own (a process that
     * regains its slot under a new epoch keeps its floor while the link stays up). Kept after
     * the link is lost: they name the process that was lost. */
    char ack_server_id[80];
    int64_t floor_epoch, known_epoch;
    int64_t down_since_ms; /* monotonic time the link was lost; 0 while ready or never lost */
    bool gone_reported;    /* that process was found gone (logged once) */
    /* Direct reads of the server's registry entry while the link is lost (gate_probe_send). */
    struct event *probe_ev;
    uint64_t probe_token; /* of the read in flight; 0 = none */
    bool probed, probed_absent;
    int64_t probed_epoch;
    char probed_id[80], probed_address[72];
};

TAILQ_HEAD(gate_link_list, gate_link);

/* Largest client Action forwarded to the game server as bytes; larger ones are re-encoded. */
#define GATE_ACTION_FWD_MAX 256

struct gate_req {
    TAILQ_ENTRY(gate_req) q;
    LIST_ENTRY(gate_req) live; /* every request alive, for gate_destroy */
    gate_t *g;
    gate_req_kind_t kind;
    bool reseat;      /* a table move on the player's behalf */
    bool adopt;       /* reseat of a whole table: an Adopt of offer (docs/protocol.md) */
    bool crash;       /* reseat: the old table's server is gone (no leave there afterwards) */
    bool seat_target; /* target is the player's seat (not a join's pick) */
    bool internal;    /* no client waits for the answer (leave after a move) */
    uint64_t conn_id; /* the connection that asked (0 for internal requests) */
    uint64_t player, session, client_rid;
    uint64_t rid; /* the rpc request id: the same for every retry */
    int64_t deadline_mono, deadline_wall;
    Croupier__ClientMessage *msg; /* the client's message (action / resume bodies); owned */
    int engine;
    int64_t stake;
    bool have_target; /* target is set */
    int ntried;
    gate_link_t *link; /* queued on or pending at */
    bool sent;
    int attempts;
    int last_code;
    bool waiting_retry;
    struct event *timer; /* the deadline, or the next retry when earlier: &timer_ev */
    size_t action_len;   /* > 0: the client's Action bytes are in action (forwarded as is) */
    bool room;           /* a join for a private room: CreateRoom (msg) or JoinRoom (room_code) */
    bool disband;        /* a leave that disbands the host's room */
    struct gate_room_lk *room_lk; /* JoinRoom: the record read in flight */

    /* Not cleared when a record is reused (gate_req_new): each is read only after it is set. */
    struct event timer_ev; /* embedded, assigned once per record (no allocation per request) */
    gate_seat_t target;    /* where the request goes (seat): set when have_target is */
    char game[48];         /* joins: the game asked for (set for every join) */
    gate_seat_t from;      /* reseat: the closing seat (set when reseat is) */
    char tried[4][80];     /* servers that refused a join with DRAINING/UNAVAILABLE (ntried) */
    char offer[168];       /* adopt: the handoff offer id (set when adopt is) */
    int redirects;         /* adopt: answers naming the adopter followed */
    char room_code[ROOM_CODE_LEN + 1];   /* JoinRoom: the code (set when room is, else "") */
    uint8_t action[GATE_ACTION_FWD_MAX]; /* action_len bytes */
};

/* A game some registry entry offered, and when (gate_game_offered). */
typedef struct {
    char game[48];
    int64_t seen_ms;
} gate_offered_t;
#define GATE_OFFERED_MAX 64
/* A game offered this recently is not "no such game" while no entry offers it: a registry gap
 * (entries expired while Redis could not be written, a failover) is waited out like a server
 * that is not ready. */
#define GATE_OFFERED_RECENT_MS 60000

/*
 * Edge limits (docs/gateway.md "Edge limits"): the caps that refuse a connection, the deadlines
 * that close one, and the per-player rate. Each cause has a counter and a log line written at
 * most once per GATE_NOTE_MS (the lines skipped in between are counted in the next one), so a
 * flood of slowloris sockets or refused connections cannot flood the log.
 */
enum {
    EDGE_MAX_CONNS = 0,    /* refused: --max-conns */
    EDGE_MAX_PER_ADDR = 1, /* refused: --max-conns-per-addr */
    EDGE_HANDSHAKE = 2,    /* closed: --ws-handshake-timeout-ms */
    EDGE_LOGIN = 3,        /* closed: --login-timeout-ms */
    EDGE_FRAME = 4,        /* closed: --frame-timeout-ms */
    EDGE_WRITE = 5,        /* closed: --write-timeout-ms */
    EDGE_OUTPUT = 6,       /* closed: --output-cap, found by the sweep */
    EDGE_PLAYER_RATE = 7,  /* refused request: --player-rate-limit */
    EDGE_EVICTED = 8,      /* closed: not logged in yet, its place taken at --max-conns */
    EDGE_CAUSES = 9,
};
static const char *const gate_edge_names[EDGE_CAUSES] = {
    "max_conns", "max_conns_per_addr", "ws_handshake", "login",  "frame",
    "write",     "output_cap",         "player_rate",  "evicted"};
#define GATE_NOTE_MS 10000
/* The close of a connection refused by a cap is bounded by this (or --close-timeout-ms). */
#define GATE_REFUSED_CLOSE_MS 1000

/* Per-player token bucket (g->player_buckets: player -> gate_bucket_t *). */
typedef struct {
    double tokens;
    int64_t ms;
} gate_bucket_t;

struct gate {
    gate_config_t cfg;
    gate_offered_t offered[GATE_OFFERED_MAX];
    unsigned noffered;
    char gate_id[80];
    char advertise[96];
    char version[48];
    frame_limits_t lim;
    struct event_base *base;
    struct evconnlistener *listener, *ws_listener;
    int port, ws_port;
    gate_ws_server_t *ws_srv; /* the WebSocket listener's settings (NULL: none) */
    struct gate_conn_list conns;
    u64map_t *conn_by_id;     /* conn id -> gate_conn_t * */
    u64map_t *conn_by_player; /* player -> conn id */
    uint64_t next_conn_id;
    uint64_t next_rid;
    struct gate_link_list links;
    LIST_HEAD(, gate_req) reqs;
    _Atomic long nconns;
    atomic_bool ready_flag;
    bool registered;
    rconn_t *rc;
    rconn_t *sub; /* subscriber: logins on other gateways (GATE_SESSION_CHANNEL) */
    registry_view_t *view;
    bool destroying;
    /* Each listed server's epoch and address as last seen (gate_view_change_cb). */
    struct {
        char id[80];
        char address[72];
        int64_t epoch;
    } * seen;
    size_t nseen, capseen;
    /* Players with a table move in flight (player -> moves), and those of them moved because
     * their server is gone (player -> 1): their requests wait (UNAVAILABLE) until it ends. */
    u64map_t *moves, *crash_moves;
    /* Servers whose seats are to be judged again (gate_check_cb), and the event that runs it. */
    char (*check_ids)[80];
    size_t ncheck, capcheck;
    struct event *check_ev;
    uint64_t next_probe_token;
    struct event *sweep_ev, *register_ev, *exit_ev, *exit_timer;
    int64_t sweep_ms;      /* the sweep's last run: the main loop's pulse (gate_conn_stalled) */
    uint64_t stall_closed; /* connections closed unread after a stall (gate_conn_stalled) */

    /* Output batching: frames queued to a client or a link during one loop iteration are
     * written with one writev at its end (flush_ev, activated by the first of them). */
    struct event *flush_ev;
    TAILQ_HEAD(, gate_conn) dirty_conns;
    TAILQ_HEAD(, gate_link) dirty_links;
    /* Request records kept for reuse (no malloc/free per request). */
    gate_req_t *req_free;
    int nreq_free;

    /* exit machine */
    int exit_step; /* 0 none, 1 deregistering, 2 window, 3 closing, 4 done */
    bool exit_forced;

    metrics_t *m_conns, *m_frames_in, *m_frames_out, *m_budget, *m_retries, *m_slow, *m_links,
        *m_degraded, *m_bad_frames, *m_rate_limited, *m_logins, *m_reconnects, *m_moves_ok,
        *m_moves_failed, *m_table_moves, *m_servers_gone, *m_stale_seats;
    metrics_t *m_reject[8];
    metrics_t *m_tconns[2], *m_tin[2], *m_tout[2]; /* by transport: [0] tcp, [1] ws */
    metrics_t *m_goaway[6];
    metrics_t *m_edge[EDGE_CAUSES]; /* refusals, deadline closes, per-player refusals */
    /* Rate-limited edge log lines: when the last was written, and how many were skipped. */
    struct {
        int64_t last_ms;
        long skipped;
    } note[EDGE_CAUSES];
    long admitted; /* connections not refused by a cap (the caps count these) */
    /* Admitted connections not logged in yet, oldest first: at --max-conns the oldest of them
     * makes room for a new connection (gate_edge_admit). */
    TAILQ_HEAD(, gate_conn) unauth;
    u64map_t *addr_conns;     /* source address key -> admitted connections from it */
    u64map_t *player_buckets; /* player -> gate_bucket_t * (per-player request rate) */
    int64_t buckets_swept_ms;

    /* Field numbers for forwarding bytes (from the descriptors): RpcFrame.reply, Reply.payload,
     * RpcFrame.push, ServerMessage.request_id. forward: the client limits let every payload the
     * rpc link accepts through unchanged (max_string at least the link's). */
    uint32_t fid_reply, fid_payload, fid_push, fid_request_id;
    uint32_t fid_client_action, fid_action; /* ClientMessage.action, RpcFrame.action */
    frame_scratch_t scratch; /* the client message being read (gate_conn_read_frames) */
    bool forward_action;
    bool forward;

    /* The clocks as read once at the start of a client read callback: the requests it makes
     * take their time from them (microseconds apart) instead of reading the clocks per frame
     * (gate_now_mono / gate_now_wall; rx_clock is true only while the callback runs). */
    bool rx_clock;
    int64_t rx_mono_ms, rx_wall_ms;
    /* libevent common timeouts of each request kind's budget (gate_req_arm); NULL: none. */
    const struct timeval *budget_tv[GATE_REQ_KINDS];
};

enum {
    REJ_DEADLINE = 0,
    REJ_UNAUTH = 1,
    REJ_NOT_SEATED = 2,
    REJ_RATE = 3,
    REJ_INFLIGHT = 4,
    REJ_TOKEN = 5,
    REJ_NO_SERVER = 6,
    REJ_DRAINING = 7,
};
static const char *const gate_reject_names[8] = {"deadline",     "unauthenticated",   "not_seated",
                                                 "rate_limited", "too_many_inflight", "bad_token",
                                                 "no_server",    "draining"};

static const int gate_default_budget[GATE_REQ_KINDS] = {800, 500, 300, 800, 500};

static void gate_conn_close(gate_conn_t *c, const char *reason);
static void gate_conn_free(gate_conn_t *c);
static void gate_req_dispatch(gate_req_t *r);
static void gate_req_retry(gate_req_t *r, int code, const char *why);
static void gate_link_fail(gate_link_t *l, const char *why);
static void gate_link_connect(gate_link_t *l);
static void gate_exit_step(gate_t *g);
static void gate_check_queue(gate_t *g, const char *server_id);
static void gate_probe_send(gate_link_t *l);
static bool gate_entry_gone(gate_t *g, const registry_entry_t *e);

/* ---- small helpers ------------------------------------------------------------------------- */

static gate_conn_t *gate_conn_get(gate_t *g, uint64_t id)
{
    uint64_t p;
    if (id == 0 || !u64map_get(g->conn_by_id, id, &p))
        return NULL;
    return (gate_conn_t *)(uintptr_t)p;
}

/* Monotonic and wall-clock milliseconds: the read callback's reading while one runs. */
static int64_t gate_now_mono(const gate_t *g)
{
    return g->rx_clock ? g->rx_mono_ms : clock_mono_ms();
}

static int64_t gate_now_wall(const gate_t *g)
{
    return g->rx_clock ? g->rx_wall_ms : clock_wall_ms();
}

static uint64_t gate_next_rid(gate_t *g)
{
    if (++g->next_rid == 0)
        g->next_rid = 1;
    return g->next_rid;
}

/* ---- output batching ------------------------------------------------------------------------- */

/*
 * Writes what a bufferevent has queued now, with one writev, instead of leaving it to
 * libevent's write event (that costs an epoll round and two epoll_ctl per frame at low rates:
 * the event is added when data is queued and removed once the buffer is empty). When all of it
 * was written, the write event the bufferevent added in this same loop iteration is removed
 * again: with the event base's changelist (gate_main.c) the kernel hears of neither. What
 * cannot be written now (EAGAIN, an error) stays queued in order, and the write event handles
 * it as before (so errors still reach the event callback).
 */
static void gate_bev_flush(struct bufferevent *bev)
{
    struct evbuffer *out = bufferevent_get_output(bev);
    if (evbuffer_get_length(out) == 0)
        return;
    if (evbuffer_write(out, bufferevent_getfd(bev)) < 0)
        return;
    if (evbuffer_get_length(out) == 0 && event_pending(&bev->ev_write, EV_WRITE, NULL))
        event_del(&bev->ev_write);
}

/*
 * The end of a loop iteration's callbacks (flush_ev runs after the reads that were ready, being
 * activated by the first frame they queued): every link, then every client connection, that
 * had output queued is written once. Links first, so requests reach the game servers sooner.
 * Connections that are closing, and links still connecting, are left to libevent (their write
 * events drive the close and the connect).
 */
static void gate_flush_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    gate_link_t *l;
    while ((l = TAILQ_FIRST(&g->dirty_links)) != NULL) {
        TAILQ_REMOVE(&g->dirty_links, l, dirty);
        l->in_dirty = false;
        if (l->bev != NULL && (l->state == LINK_HELLO || l->state == LINK_READY))
            gate_bev_flush(l->bev);
    }
    gate_conn_t *c;
    while ((c = TAILQ_FIRST(&g->dirty_conns)) != NULL) {
        TAILQ_REMOVE(&g->dirty_conns, c, dirty);
        c->in_dirty = false;
        if (!c->closing && c->ws != NULL)
            gate_ws_flush(c->ws);
        if (!c->closing && !c->tls)
            gate_bev_flush(c->bev);
    }
}

/* Notes that a connection has output queued in this loop iteration (see gate_flush_cb). */
static void gate_conn_dirty(gate_conn_t *c)
{
    if (c->in_dirty)
        return;
    c->in_dirty = true;
    TAILQ_INSERT_TAIL(&c->g->dirty_conns, c, dirty);
    event_active(c->g->flush_ev, EV_TIMEOUT, 0);
}

/* Notes that a link has output queued in this loop iteration (see gate_flush_cb). */
static void gate_link_dirty(gate_link_t *l)
{
    if (l->in_dirty)
        return;
    l->in_dirty = true;
    TAILQ_INSERT_TAIL(&l->g->dirty_links, l, dirty);
    event_active(l->g->flush_ev, EV_TIMEOUT, 0);
}

static void gate_link_undirty(gate_link_t *l)
{
    if (l->in_dirty)
        TAILQ_REMOVE(&l->g->dirty_links, l, dirty);
    l->in_dirty = false;
}

/* ---- client output --------------------------------------------------------------------------- */

/* Where a client's frames are queued: the socket's output, or the WebSocket layer's (gate_ws.h
 * turns each frame into one binary message when it is flushed). */
static struct evbuffer *gate_conn_out(gate_conn_t *c)
{
    return c->ws != NULL ? gate_ws_out(c->ws) : bufferevent_get_output(c->bev);
}

static size_t gate_conn_queued(gate_conn_t *c)
{
    return c->ws != NULL ? gate_ws_queued(c->ws) : evbuffer_get_length(gate_conn_out(c));
}

static void gate_conn_count_out(gate_conn_t *c)
{
    metrics_add(c->g->m_frames_out, 1);
    metrics_add(c->g->m_tout[c->ws != NULL], 1);
}

/*
 * Whether the log line of an edge cause is due: at most one per GATE_NOTE_MS per cause. Returns
 * the number of lines skipped since the last one written (>= 0) when it is due, -1 when not.
 */
static long gate_edge_note(gate_t *g, int cause, int64_t now)
{
    if (g->note[cause].last_ms != 0 && now - g->note[cause].last_ms < GATE_NOTE_MS) {
        g->note[cause].skipped++;
        return -1;
    }
    long skipped = g->note[cause].skipped;
    g->note[cause].last_ms = now;
    g->note[cause].skipped = 0;
    return skipped;
}

/*
 * Queues a GoAway as the last frame before a close the gateway decides on (a slow consumer, an
 * edge limit): past the output cap, since it only adds one small frame to output that is about
 * to be flushed or given up. The WebSocket close that follows names the reason.
 */
static void gate_conn_goaway_last(gate_conn_t *c, int reason, const char *detail)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__GoAway ga = CROUPIER__GO_AWAY__INIT;
    ga.reason = (Croupier__GoAwayReason)reason;
    ga.reconnect_delay_ms = arc4random_uniform(1000);
    ga.detail = (char *)detail;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY;
    sm.go_away = &ga;
    if (frame_pack_server(gate_conn_out(c), &sm, &c->g->lim, NULL) == 0) {
        gate_conn_count_out(c);
        gate_conn_dirty(c);
        metrics_add(c->g->m_goaway[reason], 1);
    }
    if (c->ws != NULL)
        gate_ws_goaway(c->ws, reason, ga.reconnect_delay_ms);
}

/*
 * Whether one more frame may be queued to a client. The connection is closed as a slow consumer
 * when its unsent output would pass output_cap (one last GoAway is still queued, so the close
 * has a reason). Returns 0, or -EPIPE when the connection is closing or was just closed.
 */
static int gate_conn_room(gate_conn_t *c)
{
    if (c->closing)
        return -EPIPE;
    if (gate_conn_queued(c) > c->g->cfg.output_cap) {
        long skipped = gate_edge_note(c->g, EDGE_OUTPUT, clock_mono_ms());
        if (skipped >= 0)
            log_emit(LOG_WARN, "client_slow_consumer", "{s:I,s:I,s:I,s:I}", "conn",
                     (json_int_t)c->id, "player", (json_int_t)c->player, "queued",
                     (json_int_t)gate_conn_queued(c), "skipped_since_last", (json_int_t)skipped);
        metrics_add(c->g->m_slow, 1);
        gate_conn_goaway_last(c, CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED,
                              "slow consumer: output above the cap");
        gate_conn_close(c, "slow_consumer");
        return -EPIPE;
    }
    return 0;
}

/* Queues one frame to a client (see gate_conn_room). Returns 0 or a negative errno. */
static int gate_conn_send(gate_conn_t *c, const Croupier__ServerMessage *m)
{
    int rc = gate_conn_room(c);
    if (rc != 0)
        return rc;
    struct evbuffer *out = gate_conn_out(c);
    frame_error_t err;
    rc = frame_pack_server(out, m, &c->g->lim, &err);
    if (rc != 0) {
        log_emit(LOG_ERROR, "client_encode_failed", "{s:i,s:s}", "errno", -rc, "detail",
                 err.detail);
        return rc;
    }
    gate_conn_count_out(c);
    gate_conn_dirty(c);
    return 0;
}

/*
 * The bytes of a ServerMessage inside an rpc frame the link read and checked (a reply's payload
 * or a push), copied out of the link's input: p NULL when there are none to forward.
 */
typedef struct gate_fwd {
    const uint8_t *p;
    size_t len;
} gate_fwd_t;

/*
 * Queues m to a client as the bytes in fwd (with request_id set to rid when rid is not 0)
 * instead of re-encoding it: the rpc frame they came in passed the same checks as a
 * ServerMessage (RpcFrame.reply.payload and RpcFrame.push are checked as one). Falls back to
 * encoding m when there are no bytes or they cannot be forwarded. Returns 0 or a negative errno.
 */
static int gate_conn_forward(gate_conn_t *c, const gate_fwd_t *fwd, uint64_t rid,
                             const Croupier__ServerMessage *m)
{
    if (fwd == NULL || fwd->p == NULL)
        return gate_conn_send(c, m);
    int rc = gate_conn_room(c);
    if (rc != 0)
        return rc;
    rc = frame_write_forward(gate_conn_out(c), fwd->p, fwd->len,
                             rid != 0 ? c->g->fid_request_id : 0, rid, &c->g->lim);
    if (rc != 0)
        return gate_conn_send(c, m);
    gate_conn_count_out(c);
    gate_conn_dirty(c);
    return 0;
}

/* Answers a client request with Result{error}. */
static void gate_conn_error(gate_conn_t *c, uint64_t rid, int code, const char *message)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result res = CROUPIER__RESULT__INIT;
    Croupier__Error e = CROUPIER__ERROR__INIT;
    sm.has_request_id = true;
    sm.request_id = rid;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &res;
    res.error = &e;
    e.code = (Croupier__ErrorCode)code;
    e.message = (char *)(message != NULL ? message : frame_error_code_name(code));
    e.has_retriable = true;
    e.retriable =
        code == CROUPIER__ERROR_CODE__DRAINING || code == CROUPIER__ERROR_CODE__UNAVAILABLE ||
        code == CROUPIER__ERROR_CODE__RATE_LIMITED || code == CROUPIER__ERROR_CODE__OVERLOADED ||
        code == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED;
    gate_conn_send(c, &sm);
}

static void gate_conn_goaway(gate_conn_t *c, int reason, uint32_t delay_ms, const char *detail)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__GoAway ga = CROUPIER__GO_AWAY__INIT;
    ga.reason = (Croupier__GoAwayReason)reason;
    ga.reconnect_delay_ms = delay_ms;
    ga.detail = (char *)detail;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY;
    sm.go_away = &ga;
    if (gate_conn_send(c, &sm) == 0 && reason >= 0 && reason < 6)
        metrics_add(c->g->m_goaway[reason], 1);
    if (c->ws != NULL)
        gate_ws_goaway(c->ws, reason, delay_ms); /* the WS close that follows names it */
}

/* ---- graceful close ------------------------------------------------------------------------ */

/*
 * Frees the connection once the close is complete: output flushed and shut down, the peer's EOF
 * read (so close() finds no unread input and sends FIN, not RST).
 */
static void gate_conn_close_progress(gate_conn_t *c)
{
    if (!c->closing)
        return;
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (!c->shut_wr && evbuffer_get_length(out) == 0) {
        c->shut_wr = true;
        if (c->tls)
            SSL_shutdown(bufferevent_openssl_get_ssl(c->bev)); /* close_notify, then the FIN */
        shutdown(bufferevent_getfd(c->bev), SHUT_WR);
    }
    if (c->shut_wr && c->eof)
        gate_conn_free(c);
}

static void gate_conn_close_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_conn_t *c = arg;
    log_emit(LOG_INFO, "client_close_timeout", "{s:I,s:b,s:b}", "conn", (json_int_t)c->id,
             "flushed", c->shut_wr, "eof", c->eof);
    if (c->g->exit_step == 3)
        c->g->exit_forced = true;
    gate_conn_free(c);
}

/*
 * Starts the graceful close: no more requests are handled, queued output is flushed, then
 * shutdown(SHUT_WR), then input is read and dropped until EOF, bounded by close_timeout_ms.
 * The player's session ends now (a takeover or a reconnect may already own it).
 */
/* Takes c off the list of connections not logged in (a login, a close, its end). */
static void gate_conn_unauth_remove(gate_conn_t *c)
{
    if (!c->in_unauth)
        return;
    TAILQ_REMOVE(&c->g->unauth, c, unauth);
    c->in_unauth = false;
}

static void gate_conn_close(gate_conn_t *c, const char *reason)
{
    if (c->closing)
        return;
    gate_t *g = c->g;
    c->closing = true;
    gate_conn_unauth_remove(c);
    log_emit(LOG_DEBUG, "client_closing", "{s:I,s:I,s:s}", "conn", (json_int_t)c->id, "player",
             (json_int_t)c->player, "reason", reason);
    if (c->player != 0) {
        uint64_t owner;
        if (u64map_get(g->conn_by_player, c->player, &owner) && owner == c->id)
            u64map_del(g->conn_by_player, c->player);
    }
    if (c->ws != NULL)
        gate_ws_close(c->ws, reason); /* the WebSocket close frame before the TCP close */
    c->close_ev = evtimer_new(g->base, gate_conn_close_timeout_cb, c);
    /* A connection refused by a cap is not counted by the caps while it closes: its close is
     * bounded tighter, so a flood of refused connections holds descriptors only briefly. */
    int ms = g->cfg.close_timeout_ms;
    if (c->refused >= 0 && ms > GATE_REFUSED_CLOSE_MS)
        ms = GATE_REFUSED_CLOSE_MS;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(c->close_ev, &tv);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    evbuffer_drain(bufferevent_get_input(c->bev),
                   evbuffer_get_length(bufferevent_get_input(c->bev)));
    gate_conn_close_progress(c);
}

/* Tells the seat's server the player is gone (one-way; the seat stays for a resume). */
static void gate_send_player_gone(gate_t *g, gate_conn_t *c);

/* The connection no longer counts against the caps (it ends, or it was evicted). */
static void gate_edge_release(gate_conn_t *c)
{
    gate_t *g = c->g;
    if (!c->admitted)
        return;
    c->admitted = false;
    g->admitted--;
    uint64_t n;
    if (c->addr_key != 0 && u64map_get(g->addr_conns, c->addr_key, &n)) {
        if (n <= 1)
            u64map_del(g->addr_conns, c->addr_key);
        else
            u64map_put(g->addr_conns, c->addr_key, n - 1);
    }
    c->addr_key = 0;
}

static void gate_conn_free(gate_conn_t *c)
{
    gate_t *g = c->g;
    if (c->player != 0) {
        uint64_t owner;
        if (u64map_get(g->conn_by_player, c->player, &owner) && owner == c->id)
            u64map_del(g->conn_by_player, c->player);
        if (c->seat != NULL && !u64map_get(g->conn_by_player, c->player, NULL))
            gate_send_player_gone(g, c);
    }
    gate_conn_unauth_remove(c);
    gate_edge_release(c);
    TAILQ_REMOVE(&g->conns, c, all);
    if (c->in_dirty)
        TAILQ_REMOVE(&g->dirty_conns, c, dirty);
    u64map_del(g->conn_by_id, c->id);
    if (c->close_ev != NULL)
        event_free(c->close_ev);
    bufferevent_free(c->bev);
    gate_ws_destroy(c->ws);
    metrics_add(g->m_tconns[c->ws != NULL], -1);
    free(c->seat);
    free(c->expired);
    free(c);
    atomic_fetch_sub(&g->nconns, 1);
    metrics_add(g->m_conns, -1);
    if (g->exit_step != 0 && g->cfg.drain != NULL)
        drain_notify(g->cfg.drain); /* /drain/wait counts connections down */
    if (g->exit_step == 3 && TAILQ_EMPTY(&g->conns))
        event_active(g->exit_ev, EV_READ, 0);
}

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
static void gate_addr_text(const struct sockaddr *sa, char *buf, size_t cap)
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
static int gate_edge_admit(gate_t *g, gate_conn_t *c, const struct sockaddr *sa)
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
static void gate_conn_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
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
static void gate_conn_refuse(gate_conn_t *c)
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
static bool gate_conn_check_edges(gate_conn_t *c, int64_t now)
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
static bool gate_player_take(gate_conn_t *c)
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

typedef struct {
    gate_t *g;
    int64_t now;
    uint64_t *del;
    size_t n, cap;
} gate_bucket_sweep_t;

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

static void gate_bucket_free_one(uint64_t player, uint64_t val, void *arg)
{
    (void)player;
    (void)arg;
    free((void *)(uintptr_t)val);
}

/* Forgets the buckets that are full again and whose player has no connection here (a fresh
 * bucket is the same): memory stays bounded by the players active in the last burst/rate s. */
static void gate_buckets_sweep(gate_t *g, int64_t now)
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

/* ---- seats in Redis ------------------------------------------------------------------------ */

static void gate_redis_ignore_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    (void)arg;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        log_emit(LOG_WARN, "seat_write_failed", "{s:s}", "error",
                 reply != NULL ? reply->str : "no reply");
}

static void gate_seat_key(uint64_t player, char *buf, size_t cap)
{
    snprintf(buf, cap, GATE_SEAT_KEY_PREFIX "%" PRIu64, player);
}

static void gate_seat_store(gate_t *g, uint64_t player, const gate_seat_t *s)
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
static const char gate_seat_del_lua[] =
    "local v = redis.call('GET', KEYS[1]) "
    "if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";
static rconn_script_t *gate_script_seat_del;

static void gate_seat_delete_if(gate_t *g, uint64_t player, const gate_seat_t *s)
{
    char key[64], head[GATE_SEAT_RECORD_MAX + 1];
    gate_seat_key(player, key, sizeof key);
    snprintf(head, sizeof head, "%s %s %" PRIu64 " ", s->server_id, s->address, s->desk);
    const char *argv[] = {key, head};
    rconn_eval(g->rc, gate_script_seat_del, gate_redis_ignore_cb, NULL, 1, 2, argv, NULL);
}

/* Sets (or clears, s NULL) the connection's seat. */
static void gate_conn_set_seat(gate_conn_t *c, const gate_seat_t *s)
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
static void gate_conn_expired_keep(gate_conn_t *c, uint64_t client_rid, const gate_seat_t *seat)
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
static const gate_seat_t *gate_conn_expired_seat(const gate_conn_t *c, uint64_t client_rid)
{
    if (c->expired == NULL || client_rid == 0)
        return NULL;
    for (unsigned i = 0; i < GATE_EXPIRED_KEEP; i++)
        if (c->expired[i].client_rid == client_rid)
            return &c->expired[i].seat;
    return NULL;
}

/* ---- rpc links ------------------------------------------------------------------------------- */

static gate_link_t *gate_link_find(gate_t *g, const char *address)
{
    gate_link_t *l;
    TAILQ_FOREACH(l, &g->links, all)
    if (strcmp(l->address, address) == 0)
        return l;
    return NULL;
}

/* The server id of the process behind a link: its hello's, else the registry's. */
static const char *gate_link_id(const gate_link_t *l)
{
    return l->ack_server_id[0] != '\0' ? l->ack_server_id : l->server_id;
}

static gate_link_t *gate_link_get(gate_t *g, const char *address, const char *server_id)
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

static void gate_link_free(gate_link_t *l)
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

static int gate_link_send_frame(gate_link_t *l, const Croupier__RpcFrame *f)
{
    frame_error_t err;
    int rc = frame_pack_rpc(bufferevent_get_output(l->bev), f, NULL, &err);
    if (rc != 0)
        log_emit(LOG_ERROR, "rpc_encode_failed", "{s:i,s:s}", "errno", -rc, "detail", err.detail);
    else
        gate_link_dirty(l);
    return rc;
}

static void gate_req_fail(gate_req_t *r, int code, const char *message);

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

static void gate_req_write_action(gate_req_t *r)
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
static void gate_req_unlink(gate_req_t *r)
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

static void gate_link_timer_cb(evutil_socket_t fd, short what, void *arg)
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

static void gate_on_reply(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd);
static void gate_req_free(gate_req_t *r);
static gate_conn_t *gate_req_conn(gate_req_t *r);
static void gate_on_push(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd);
static void gate_on_desk_closing(gate_link_t *l, Croupier__RpcFrame *f);

/* Largest ServerMessage forwarded as bytes (copied to the stack); larger ones are re-encoded. */
#define GATE_FWD_MAX 2048

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
    int rc = frame_write_prefixed(gate_conn_out(c), field, rid, msg, len, &c->g->lim);
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
    if (frame_scan_rpc(payload, len, NULL, &s) != 0)
        return false;
    if (s.body == CROUPIER__RPC_FRAME__BODY_PUSH) {
        if (s.msg_len > g->lim.max_frame)
            return false;
        uint64_t cid;
        gate_conn_t *c;
        if (u64map_get(g->conn_by_player, s.player_id, &cid) && (c = gate_conn_get(g, cid)) != NULL)
            gate_conn_put(c, 0, 0, s.msg, s.msg_len);
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

static void gate_link_read_cb(struct bufferevent *bev, void *arg)
{
    gate_link_t *l = arg;
    unsigned gen = l->gen;
    struct evbuffer *in = bufferevent_get_input(bev);
    uint8_t fwd_buf[GATE_FWD_MAX];
    while (l->gen == gen && l->state != LINK_DOWN) {
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
        if (l->state == LINK_READY && l->g->forward) {
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
        f.body_case = CROUPIER__RPC_FRAME__BODY_HELLO;
        f.hello = &h;
        gate_link_send_frame(l, &f);
        return;
    }
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        gate_link_fail(l, (what & BEV_EVENT_EOF) ? "closed by peer" : "socket error");
}

/* Opens the TCP connection of a link (state DOWN -> CONNECTING); the hello follows. */
static void gate_link_connect(gate_link_t *l)
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
    bufferevent_setwatermark(l->bev, EV_READ, 0, FRAME_HEADER_SIZE + FRAME_DEFAULT_MAX + 4096);
    bufferevent_enable(l->bev, EV_READ | EV_WRITE);
    l->state = LINK_CONNECTING;
    if (bufferevent_socket_connect(l->bev, (struct sockaddr *)&ss, (int)len) != 0) {
        gate_link_fail(l, "connect failed");
        return;
    }
    gate_link_arm(l, 2000); /* connect + hello bound */
}

/* Hands a request to the link of its target: written now if ready, else queued. */
static void gate_link_submit(gate_t *g, gate_req_t *r)
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

/* ---- requests ----------------------------------------------------------------------------------
 */

/* Freed request records kept for reuse, at most (about 1 KiB each). */
#define GATE_REQ_KEEP 1024

/* Ends a request: unlinked, its timer stopped, its record kept for reuse (or freed). */
/* A room record read on behalf of a JoinRoom (gate_room_lookup). */
typedef struct gate_room_lk {
    gate_t *g;
    gate_req_t *r; /* NULL once the request is gone */
} gate_room_lk_t;

static void gate_req_free(gate_req_t *r)
{
    if (r->room_lk != NULL)
        r->room_lk->r = NULL;
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
static gate_conn_t *gate_req_conn(gate_req_t *r)
{
    gate_conn_t *c = gate_conn_get(r->g, r->conn_id);
    if (c == NULL || c->closing || c->session != r->session)
        return NULL;
    return c;
}

static void gate_req_start_internal_leave(gate_t *g, uint64_t player, const gate_seat_t *seat);
static void gate_reseat_failed(gate_req_t *r, const char *why);

/* Ends a request with an error answered to its client (or handled for a move). */
static void gate_req_fail(gate_req_t *r, int code, const char *message)
{
    gate_t *g = r->g;
    if (code == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED ||
        code == CROUPIER__ERROR_CODE__UNAVAILABLE)
        metrics_add(g->m_degraded, 1);
    if (r->reseat) {
        gate_reseat_failed(r, message);
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
static void gate_req_retry(gate_req_t *r, int code, const char *why)
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

static const registry_entry_t *gate_pick(gate_t *g, gate_req_t *r, bool *any_offers)
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

static bool gate_target_gone(gate_req_t *r);

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

static void gate_req_dispatch(gate_req_t *r)
{
    gate_t *g = r->g;
    int64_t now = clock_mono_ms();
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

static gate_req_t *gate_req_new(gate_t *g, gate_req_kind_t kind, uint64_t player, uint64_t session)
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
static void gate_seat_gone(gate_t *g, uint64_t player, const gate_seat_t *seat)
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
static void gate_move_begin(gate_t *g, uint64_t player, bool crash)
{
    uint64_t n = 0;
    u64map_get(g->moves, player, &n);
    u64map_put(g->moves, player, n + 1);
    if (crash)
        u64map_put(g->crash_moves, player, 1);
}

static void gate_move_end_player(gate_t *g, uint64_t player, bool crash)
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
static void gate_on_reply(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd)
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

static void gate_on_push(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd)
{
    gate_t *g = l->g;
    if (!f->has_player_id)
        return;
    uint64_t cid;
    if (!u64map_get(g->conn_by_player, f->player_id, &cid))
        return;
    gate_conn_t *c = gate_conn_get(g, cid);
    if (c == NULL)
        return;
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH) {
        gate_conn_forward(c, fwd, 0, f->push);
        return;
    }
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
static gate_req_t *gate_reseat_new(gate_t *g, uint64_t player, uint64_t conn_id, uint64_t session,
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
static void gate_reseat_go(gate_req_t *r)
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

typedef struct {
    gate_t *g;
    uint64_t player;
    char address[72];
    char offer[168]; /* a whole-table move's offer, or "" */
    bool forget;     /* the room ended: the seat is only forgotten */
} gate_closing_lookup_t;

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
        !u64map_get(lk->g->conn_by_player, lk->player, &cid) && lk->g->rc != NULL) {
        if (lk->forget)
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
static void gate_on_desk_closing(gate_link_t *l, Croupier__RpcFrame *f)
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
                if (forget)
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

static void gate_send_player_gone(gate_t *g, gate_conn_t *c)
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

/* ---- servers gone: seats that went with their server (gate_seat.h) --------------------------- */

#define GATE_TABLE_GONE_MSG "table gone: its server stopped"

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

static gate_seat_verdict_t gate_seat_check(gate_t *g, const gate_seat_t *s)
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
static bool gate_entry_gone(gate_t *g, const registry_entry_t *e)
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
static void gate_seat_forget(gate_t *g, uint64_t player, const gate_seat_t *gone,
                             gate_seat_verdict_t v, const char *where)
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
static bool gate_target_gone(gate_req_t *r)
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
static bool gate_seat_same(const gate_seat_t *a, const gate_seat_t *b)
{
    return strcmp(a->server_id, b->server_id) == 0 && strcmp(a->address, b->address) == 0 &&
           a->desk == b->desk;
}

/* A connected player's seat found gone, while its record is read (gate_seat_crashed). */
typedef struct {
    gate_t *g;
    uint64_t conn_id, session, player;
    gate_seat_t from;
    gate_seat_verdict_t verdict;
} gate_crash_t;

/*
 * The crash move of a connected player whose record still names the gone seat: the player is
 * told TableClosing{CRASHED}, the seat is forgotten (here and in Redis), and, when a ready server
 * offers the seat's game, the player is moved there as a drain's move does (Moved{reason
 * CRASHED}); else nothing follows and the player may Join again. Requests of the player waiting
 * for that seat end TABLE_CLOSED, after the TableClosing. The move was begun (gate_move_begin).
 */
static void gate_crash_move(gate_t *g, gate_conn_t *c, const gate_crash_t *k)
{
    gate_seat_t from = k->from;
    gate_seat_forget(g, c->player, &from, k->verdict, "server_gone");
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
static void gate_check_server(gate_t *g, const char *server_id)
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
static void gate_check_queue(gate_t *g, const char *server_id)
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

static void gate_check_cb(evutil_socket_t fd, short what, void *arg)
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
static const char gate_probe_lua[] = "local v = redis.call('GET', KEYS[1]) "
                                     "if not v then return {} end "
                                     "return {v, redis.call('PTTL', KEYS[1])}";
static rconn_script_t *gate_script_probe;
static rconn_script_t *gate_script_list; /* the lobby's live ads (LOBBY_LIST_LUA) */

typedef struct {
    gate_t *g;
    uint64_t token;
    char address[72];
} gate_probe_t;

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
static void gate_probe_send(gate_link_t *l)
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
    snprintf(key, sizeof key, REGISTRY_KEY_PREFIX "%s", id);
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

/* ---- client requests ---------------------------------------------------------------------------
 */

typedef struct {
    gate_t *g;
    uint64_t conn_id, session, rid;
    gate_req_t *then; /* a request waiting for the seat (NULL for a login) */
} gate_lookup_t;

static void gate_client_dispatch(gate_conn_t *c, gate_req_t *r);

/* A player's wallet (money/money.h "Keys": an integer balance, absent = 0). */
#define GATE_WALLET_KEY_PREFIX "{croupier:money}:wallet:"

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
static void gate_session_msg_cb(rconn_t *rc, const char *channel, const char *data, size_t len,
                                void *arg)
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

static void gate_client_login(gate_conn_t *c, Croupier__ClientMessage *m)
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
static void gate_client_dispatch(gate_conn_t *c, gate_req_t *r)
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
static bool gate_msg_kept(int body_case, size_t act_len)
{
    return body_case == CROUPIER__CLIENT_MESSAGE__BODY_RESUME ||
           body_case == CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM ||
           (body_case == CROUPIER__CLIENT_MESSAGE__BODY_ACTION && act_len == 0);
}

/* A client request that needs a game server. act/act_len: the Action's bytes inside the
 * client's frame (NULL for other kinds, or when they cannot be forwarded as they are). m may
 * live in the read loop's scratch: it is freed here unless gate_msg_kept() says otherwise. */
static void gate_client_request(gate_conn_t *c, Croupier__ClientMessage *m, gate_req_kind_t kind,
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

/* ---- the lobby: ListTables ------------------------------------------------------------------ */

/* One table of a TableList being built, with the ad it was read from (holding its strings). */
typedef struct gate_ad {
    Croupier__TableAd ad;
    lobby_ad_t lobby;
} gate_ad_t;

/*
 * One ListTables in flight. It lives until its last Redis callback has run (every callback of
 * rconn runs exactly once, with NULL on a timeout, a lost connection or rconn_destroy), even
 * when the client was answered earlier (the budget ran out, or the connection went away).
 */
typedef struct gate_list {
    gate_t *g;
    uint64_t conn_id, session, rid;
    char game[40];       /* filter; "" = any */
    lobby_filter_t want; /* the filters (engine 0: any); want.game points at game */
    int pending;         /* Redis callbacks still to run */
    bool done;           /* answered (or nobody is left to answer) */
    bool failed;         /* an ad could not be read: the list would be incomplete */
    struct event *timer;
    gate_ad_t *ads; /* matching ads, cap entries */
    size_t nads, cap;
} gate_list_t;

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
static void gate_client_list(gate_conn_t *c, const Croupier__ClientMessage *m)
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

/* One GetRoom in flight: answered when the record is read (rconn runs every callback once). */
typedef struct {
    gate_t *g;
    uint64_t conn_id, session, rid;
} gate_get_room_t;

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
static void gate_client_get_room(gate_conn_t *c, const Croupier__ClientMessage *m)
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
 * Longest stall of the gateway's own loop (SIGSTOP, a paused node, starved of CPU) after which
 * what waited in the clients' sockets is not acted on. Below the clients' keepalive bounds
 * (croupier-bot and the SDK leave a silent gateway after 8 s and more, docs/protocol.md
 * "Keepalive"), far above the sweep's 100 ms period.
 */
#define GATE_STALL_MS 5000

/*
 * After the main loop stood still for more than GATE_STALL_MS, a connection with input that
 * waited through the stall is closed without acting on it. Its client may have found this
 * gateway silent, left for another and resumed there (docs/protocol.md "Keepalive"); a request
 * of its old connection, read only now and sent on with a fresh deadline, would make the game
 * server route the player's pushes back here, to a connection nobody reads, and the player
 * would miss its table's events (a turn, a round's end). A client that did not leave reconnects
 * and resumes. Which runs first after the stall, the reads or the sweep's late run, depends on
 * what the loop's first wait returns, so both look: the read (gate_conn_stalled: the sweep, due
 * every 100 ms, has not run for that long) and the sweep (gate_conns_stalled: bytes still unread
 * in the socket).
 */
static void gate_conn_close_stalled(gate_conn_t *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    evbuffer_drain(in, evbuffer_get_length(in));
    c->g->stall_closed++;
    gate_conn_close(c, "gateway_stalled");
}

/* The read's look: true when the connection was closed (gate_conn_close_stalled). */
static bool gate_conn_stalled(gate_conn_t *c)
{
    gate_t *g = c->g;
    if (g->sweep_ms == 0 || clock_mono_ms() - g->sweep_ms <= GATE_STALL_MS)
        return false;
    gate_conn_close_stalled(c);
    return true;
}

/* The sweep's look, when it runs late by more than GATE_STALL_MS: every connection with bytes
 * waiting in its socket (gate_conn_close_stalled). */
static void gate_conns_stalled(gate_t *g)
{
    gate_conn_t *c, *next;
    for (c = TAILQ_FIRST(&g->conns); c != NULL; c = next) {
        next = TAILQ_NEXT(c, all);
        int n = 0;
        if (!c->closing && c->bev != NULL && ioctl(bufferevent_getfd(c->bev), FIONREAD, &n) == 0 &&
            n > 0)
            gate_conn_close_stalled(c);
    }
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
    gate_conn_read_frames(c, in);
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
        metrics_add(g->m_frames_in, 1);
        metrics_add(g->m_tin[c->ws != NULL], 1);
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
    bufferevent_setwatermark(c->bev, EV_READ, 0, FRAME_HEADER_SIZE + g->lim.max_frame + 4096);
    evbuffer_add_cb(bufferevent_get_output(c->bev), gate_conn_out_cb, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
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

static void gate_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                           int socklen, void *arg)
{
    (void)lis;
    (void)socklen;
    gate_conn_accept(arg, fd, false, sa);
}

static void gate_ws_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                              int socklen, void *arg)
{
    (void)lis;
    (void)socklen;
    gate_conn_accept(arg, fd, true, sa);
}

/* Every 100 ms: the edge deadlines and idle connections (GoAway{IDLE}); per-player buckets to
 * forget (every second); the heartbeat of the main loop. */
static void gate_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_t *g = arg;
    int64_t now = clock_mono_ms();
    gate_conn_t *c, *next;
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
    if (g->sweep_ms != 0 && now - g->sweep_ms > GATE_STALL_MS) {
        gate_conns_stalled(g);
        log_emit(LOG_WARN, "gate_stalled", "{s:I,s:I}", "stalled_ms",
                 (json_int_t)(now - g->sweep_ms), "connections_closed",
                 (json_int_t)g->stall_closed);
        g->stall_closed = 0;
    }
    g->sweep_ms = now;
    if (g->cfg.drain != NULL)
        drain_heartbeat_beat(g->cfg.drain, 0);
    atomic_store(&g->ready_flag,
                 g->registered && registry_view_refreshes(g->view) > 0 && g->exit_step == 0);
}

/* ---- gateway registration -------------------------------------------------------------------- */

static const char gate_register_lua[] = "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) "
                                        "redis.call('PUBLISH', ARGV[3], ARGV[1]) return 1";
static const char gate_deregister_lua[] = "local n = redis.call('DEL', KEYS[1]) "
                                          "redis.call('PUBLISH', ARGV[2], ARGV[1]) return n";

static rconn_script_t *gate_script_register, *gate_script_deregister;

static void gate_register_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_t *g = arg;
    bool ok = reply != NULL && reply->type == REDIS_REPLY_INTEGER;
    if (ok && !g->registered)
        log_emit(LOG_INFO, "gate_registered", "{s:s,s:s}", "id", g->gate_id, "address",
                 g->advertise);
    if (g->exit_step == 0)
        g->registered = ok;
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
    const char *argv[] = {key, val, ttl, GATE_CHANNEL};
    rconn_eval(g->rc, gate_script_register, gate_register_cb, g, 1, 4, argv, NULL);
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
    const char *argv[] = {key, val, GATE_CHANNEL};
    struct timeval tv = {1, 0};
    evtimer_add(g->exit_timer, &tv);
    if (rconn_eval(g->rc, gate_script_deregister, gate_deregister_cb, g, 1, 3, argv, NULL) != 0) {
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
    GATE_DEF(gate_ttl_ms, 6000);
    GATE_DEF(close_timeout_ms, 5000);
    GATE_DEF(goaway_spread_ms, 1000);
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
    g->flush_ev = event_new(g->base, -1, 0, gate_flush_cb, g);
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
    static const char *const ga_names[6] = {"unspecified",    "shutdown", "session_replaced",
                                            "protocol_error", "idle",     "overloaded"};
    for (int i = 0; i < 6; i++) {
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
                       .master_name = cfg->redis_master};
    g->rc = rconn_create(g->base, &ro);
    rconn_opts_t so = {.host = cfg->redis.host,
                       .port = cfg->redis.port,
                       .name = "gate-sub",
                       .sentinels = cfg->redis_sentinels,
                       .master_name = cfg->redis_master};
    g->sub = rconn_create(g->base, &so);
    if (g->sub != NULL)
        rconn_subscribe(g->sub, GATE_SESSION_CHANNEL, gate_session_msg_cb, g);
    registry_view_opts_t vo = {.host = cfg->redis.host,
                               .port = cfg->redis.port,
                               .sentinels = cfg->redis_sentinels,
                               .master_name = cfg->redis_master,
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
    gate_req_t *r;
    while ((r = LIST_FIRST(&g->reqs)) != NULL)
        gate_req_free(r);
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
