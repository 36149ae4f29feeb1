/*
 * gate_int.h -- what the gateway's files share (gate.c and gate_*.c; gate.h is the contract):
 * the connection, link, request and gateway structures and the functions one file calls in
 * another. Internal to croupier-gate; see gate.h for the contract.
 */
#ifndef CROUPIER_GATE_INT_H
#define CROUPIER_GATE_INT_H

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
#include <sys/uio.h>

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
#include "gate_balance.h"
#include "gate_seat.h"
#include "room.h"
#include "tour_client.h"
#include "tour_director.h"
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
    bool dirty_watch; /* in_dirty on g->dirty_watch (a spectator's batch), not g->dirty_conns */
    /* The relay's frames queued in this loop iteration to a plain TCP client, ahead of its
     * socket's output (gate_conn_stage): a buffer of GATE_STAGE_SIZE lent while it is dirty. */
    uint8_t *stage;
    uint32_t stage_len;
    /* Tournaments this connection registered in or asked about, newest first (gate_tour.c):
     * their events are pushed to it. NULL until the first; GATE_TOUR_FOLLOW_MAX at most. */
    uint64_t *tours;
    uint8_t ntours;
    struct gate_watch *watch; /* a watch session (gate_watch.c), or NULL */
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
    bool tour;           /* the resume of a TakeTournamentSeat (gate_tour.c): a NOT_SEATED or a
                            gone server is answered NOT_SEATED, retriable */
    struct gate_room_lk *room_lk; /* JoinRoom: the record read in flight */
    bool watch_done;              /* a Watch answered (gate_watch.c); else counted back down */

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
    int64_t rebalanced_ms; /* monotonic: the last GoAway{REBALANCE} round (gate_rebalance) */
    int64_t over_since_ms; /* monotonic: since when the figures say we hold too many; 0: not */
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
    /* Frames queued to clients since the last flush, by transport ([0] tcp, [1] ws): counted
     * into gate_frames_out_total at the flush, not one atomic add per frame. */
    uint64_t out_frames[2];
    /* Staging buffers (gate_conn_stage): the free ones (linked through their first bytes) and
     * how many are lent. */
    void *stage_free;
    int stage_lent;
    TAILQ_HEAD(, gate_conn) dirty_conns;
    TAILQ_HEAD(, gate_link) dirty_links;
    /* Spectators with a table's batch to write (gate_conn_dirty_watch): written in paced
     * slices by watch_slice_ev (gate_watch_slice_cb), never in the players' flush, so a player's
     * frame never waits behind a thousand writes, nor the processes of his path behind the
     * gateway's core. */
    TAILQ_HEAD(, gate_conn) dirty_watch;
    size_t ndirty_watch;
    struct event *watch_slice_ev;
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
    metrics_t *m_goaway[7];
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
    /* The last push the relay's fast path checked (gate_link_fast): a table's same push to each
     * of its players is checked once (frame_scan_rpc_cached). */
    frame_scan_cache_t push_cache;
    bool forward_action;
    bool forward;

    /* The clocks as read once at the start of a client read callback: the requests it makes
     * take their time from them (microseconds apart) instead of reading the clocks per frame
     * (gate_now_mono / gate_now_wall; rx_clock is true only while the callback runs). */
    bool rx_clock;
    int64_t rx_mono_ms, rx_wall_ms;
    /* Frames read in this client read callback (gate_frames_in_total, added once at its end). */
    uint64_t in_frames;
    /* libevent common timeouts of each request kind's budget (gate_req_arm); NULL: none. */
    const struct timeval *budget_tv[GATE_REQ_KINDS];
    /* Tournament requests and pushes in flight (gate_tour.c), freed by gate_tour_shutdown. */
    struct gate_tour_op *tour_ops;
    struct gate_watch_all *watch; /* the tables watched here (gate_watch.c) */
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

/*
 * The bytes of a ServerMessage inside an rpc frame the link read and checked (a reply's payload
 * or a push), copied out of the link's input: p NULL when there are none to forward.
 */
typedef struct gate_fwd {
    const uint8_t *p;
    size_t len;
} gate_fwd_t;

typedef struct {
    gate_t *g;
    int64_t now;
    uint64_t *del;
    size_t n, cap;
} gate_bucket_sweep_t;

/* Largest ServerMessage forwarded as bytes (copied to the stack); larger ones are re-encoded. */
#define GATE_FWD_MAX 2048

/* A staging buffer's size, and how many may be lent at once (gate_conn_stage): at most 16 MiB
 * of frames staged in one loop iteration; beyond, frames go to the bufferevents as before. */
#define GATE_STAGE_SIZE (16u << 10)
#define GATE_STAGE_MAX 1024

/* Freed request records kept for reuse, at most (about 1 KiB each). */
#define GATE_REQ_KEEP 1024

/* A room record read on behalf of a JoinRoom (gate_room_lookup). */
typedef struct gate_room_lk {
    gate_t *g;
    gate_req_t *r; /* NULL once the request is gone */
} gate_room_lk_t;

typedef struct {
    gate_t *g;
    uint64_t player;
    char address[72];
    char offer[168]; /* a whole-table move's offer, or "" */
    bool forget;     /* the room ended, or the seat was a tournament table's: only forgotten */
    bool tour;       /* forget only a record marked tour (a TableClosing{CLOSING_TOURNAMENT}) */
    uint64_t desk;   /* tour: only a record of this desk (0: any) */
} gate_closing_lookup_t;

#define GATE_TABLE_GONE_MSG "table gone: its server stopped"

/* A connected player's seat found gone, while its record is read (gate_seat_crashed). */
typedef struct {
    gate_t *g;
    uint64_t conn_id, session, player;
    gate_seat_t from;
    gate_seat_verdict_t verdict;
} gate_crash_t;

typedef struct {
    gate_t *g;
    uint64_t token;
    char address[72];
} gate_probe_t;

typedef struct {
    gate_t *g;
    uint64_t conn_id, session, rid;
    gate_req_t *then; /* a request waiting for the seat (NULL for a login) */
} gate_lookup_t;

/* A player's wallet (money/money.h "Keys": an integer balance, absent = 0); with the money by
 * entity (gate_config_t.money_by_entity) {p:<player>}:bal in the player's slot instead
 * (docs/queues.md "The wallets outside the game server"). */
#define GATE_WALLET_KEY_PREFIX "{croupier:money}:wallet:"
#define GATE_WALLET_ENTITY_PREFIX "{p:"
#define GATE_WALLET_ENTITY_SUFFIX "}:bal"

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

/* One GetRoom in flight: answered when the record is read (rconn runs every callback once). */
typedef struct {
    gate_t *g;
    uint64_t conn_id, session, rid;
} gate_get_room_t;

/*
 * Longest stall of the gateway's own loop (SIGSTOP, a paused node, starved of CPU) after which
 * what waited in the clients' sockets is not acted on. Below the clients' keepalive bounds
 * (croupier-bot and the SDK leave a silent gateway after 8 s and more, docs/protocol.md
 * "Keepalive"), far above the sweep's 100 ms period.
 */
#define GATE_STALL_MS 5000

/* ---- data the files share ---------------------------------------------------------------------
 */

extern const char *const gate_edge_names[EDGE_CAUSES];
extern const char *const gate_reject_names[8];
extern const int gate_default_budget[GATE_REQ_KINDS];
extern const char gate_probe_lua[];
extern rconn_script_t *gate_script_probe;
extern rconn_script_t *gate_script_list;
extern const char gate_seat_del_lua[];
extern rconn_script_t *gate_script_seat_del;

/* ---- functions one file calls in another ---------------------------------------------------- */

void gate_session_msg_cb(rconn_t *rc, const char *channel, const char *data, size_t len, void *arg);
void gate_client_login(gate_conn_t *c, Croupier__ClientMessage *m);
void gate_client_dispatch(gate_conn_t *c, gate_req_t *r);
bool gate_msg_kept(int body_case, size_t act_len);
void gate_client_request(gate_conn_t *c, Croupier__ClientMessage *m, gate_req_kind_t kind,
                         const uint8_t *act, size_t act_len);
void gate_addr_text(const struct sockaddr *sa, char *buf, size_t cap);
int gate_edge_admit(gate_t *g, gate_conn_t *c, const struct sockaddr *sa);
void gate_conn_out_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg);
void gate_conn_refuse(gate_conn_t *c);
bool gate_conn_check_edges(gate_conn_t *c, int64_t now);
bool gate_player_take(gate_conn_t *c);
void gate_bucket_free_one(uint64_t player, uint64_t val, void *arg);
void gate_buckets_sweep(gate_t *g, int64_t now);
gate_seat_verdict_t gate_seat_check(gate_t *g, const gate_seat_t *s);
bool gate_entry_gone(gate_t *g, const registry_entry_t *e);
void gate_seat_forget(gate_t *g, uint64_t player, const gate_seat_t *gone, gate_seat_verdict_t v,
                      const char *where);
bool gate_target_gone(gate_req_t *r);
bool gate_seat_same(const gate_seat_t *a, const gate_seat_t *b);
void gate_crash_move(gate_t *g, gate_conn_t *c, const gate_crash_t *k);
void gate_check_server(gate_t *g, const char *server_id);
void gate_check_queue(gate_t *g, const char *server_id);
void gate_check_cb(evutil_socket_t fd, short what, void *arg);
void gate_probe_send(gate_link_t *l);
void gate_redis_ignore_cb(rconn_t *rc, redisReply *reply, void *arg);
void gate_seat_key(uint64_t player, char *buf, size_t cap);
void gate_seat_store(gate_t *g, uint64_t player, const gate_seat_t *s);
void gate_seat_delete_if(gate_t *g, uint64_t player, const gate_seat_t *s);
void gate_conn_set_seat(gate_conn_t *c, const gate_seat_t *s);
void gate_conn_expired_keep(gate_conn_t *c, uint64_t client_rid, const gate_seat_t *seat);
const gate_seat_t *gate_conn_expired_seat(const gate_conn_t *c, uint64_t client_rid);
gate_link_t *gate_link_find(gate_t *g, const char *address);
const char *gate_link_id(const gate_link_t *l);
gate_link_t *gate_link_get(gate_t *g, const char *address, const char *server_id);
void gate_link_free(gate_link_t *l);
int gate_link_send_frame(gate_link_t *l, const Croupier__RpcFrame *f);
void gate_req_write_action(gate_req_t *r);
void gate_req_unlink(gate_req_t *r);
void gate_link_timer_cb(evutil_socket_t fd, short what, void *arg);
void gate_link_connect(gate_link_t *l);
void gate_link_submit(gate_t *g, gate_req_t *r);
void gate_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                    int socklen, void *arg);
void gate_ws_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                       int socklen, void *arg);
void gate_sweep_cb(evutil_socket_t fd, short what, void *arg);
gate_conn_t *gate_conn_get(gate_t *g, uint64_t id);
int64_t gate_now_mono(const gate_t *g);
int64_t gate_now_wall(const gate_t *g);
uint64_t gate_next_rid(gate_t *g);
void gate_flush_cb(evutil_socket_t fd, short what, void *arg);
void gate_watch_slice_cb(evutil_socket_t fd, short what, void *arg);
void gate_conn_dirty(gate_conn_t *c);
void gate_conn_dirty_watch(gate_conn_t *c);
#define GATE_WATCH_WRITES 8
/* The pause between two slices of spectators' writes (gate_watch_slice_cb): libevent's epoll
 * backend waits in whole milliseconds. */
#define GATE_WATCH_PACE_US 1000
void gate_link_dirty(gate_link_t *l);
void gate_link_undirty(gate_link_t *l);
struct evbuffer *gate_conn_out(gate_conn_t *c);
size_t gate_conn_queued(gate_conn_t *c);
void gate_conn_count_out(gate_conn_t *c);
void gate_conn_write_idle(gate_conn_t *c);
int gate_conn_stage(gate_conn_t *c, uint32_t field, uint64_t value, const uint8_t *msg, size_t len);
void gate_conn_unstage(gate_conn_t *c);
void gate_stage_release(gate_t *g);
long gate_edge_note(gate_t *g, int cause, int64_t now);
void gate_conn_goaway_last(gate_conn_t *c, int reason, const char *detail);
int gate_conn_room(gate_conn_t *c);
int gate_conn_send(gate_conn_t *c, const Croupier__ServerMessage *m);
int gate_conn_forward(gate_conn_t *c, const gate_fwd_t *fwd, uint64_t rid,
                      const Croupier__ServerMessage *m);
void gate_conn_error(gate_conn_t *c, uint64_t rid, int code, const char *message);
void gate_conn_error_retriable(gate_conn_t *c, uint64_t rid, int code, bool retriable,
                               const char *message);
void gate_conn_goaway(gate_conn_t *c, int reason, uint32_t delay_ms, const char *detail);
void gate_conn_close_progress(gate_conn_t *c);
void gate_conn_unauth_remove(gate_conn_t *c);
void gate_conn_close(gate_conn_t *c, const char *reason);
void gate_edge_release(gate_conn_t *c);
void gate_conn_free(gate_conn_t *c);
void gate_req_free(gate_req_t *r);
gate_conn_t *gate_req_conn(gate_req_t *r);
void gate_req_fail(gate_req_t *r, int code, const char *message);
void gate_req_retry(gate_req_t *r, int code, const char *why);
const registry_entry_t *gate_pick(gate_t *g, gate_req_t *r, bool *any_offers);
void gate_req_dispatch(gate_req_t *r);
gate_req_t *gate_req_new(gate_t *g, gate_req_kind_t kind, uint64_t player, uint64_t session);
void gate_move_begin(gate_t *g, uint64_t player, bool crash);
void gate_move_end_player(gate_t *g, uint64_t player, bool crash);
void gate_on_reply(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd);
void gate_on_push(gate_link_t *l, Croupier__RpcFrame *f, const gate_fwd_t *fwd);
gate_req_t *gate_reseat_new(gate_t *g, uint64_t player, uint64_t conn_id, uint64_t session,
                            const gate_seat_t *from, bool crash);
void gate_reseat_go(gate_req_t *r);
void gate_on_desk_closing(gate_link_t *l, Croupier__RpcFrame *f);
void gate_seat_gone(gate_t *g, uint64_t player, const gate_seat_t *seat);
void gate_send_player_gone(gate_t *g, gate_conn_t *c);

/* gate_lobby.c: ListTables and GetRoom, dispatched by gate_read.c */
void gate_client_list(gate_conn_t *c, const Croupier__ClientMessage *m);
void gate_client_get_room(gate_conn_t *c, const Croupier__ClientMessage *m);
/* gate_replay.c: GetReplay and ShareReplay (docs/replays.md), answered from Redis. */
void gate_client_get_replay(gate_conn_t *c, const Croupier__ClientMessage *m);
void gate_client_share_replay(gate_conn_t *c, const Croupier__ClientMessage *m);

/* gate_tour.c: tournaments (docs/gateway.md "Tournaments"). */
#define GATE_TOUR_FOLLOW_MAX 8
void gate_client_tour(gate_conn_t *c, const Croupier__ClientMessage *m);
/* Answers of a TakeTournamentSeat that did not seat the player (gate_tour.c, gate_req.c). */
#define GATE_TOUR_WAIT_MSG "waiting for a seat; retry"
#define GATE_TOUR_TAKEOVER_MSG                                                                     \
    "your table is being taken over by another server: waiting for a seat; retry"
#define GATE_TOUR_CRASH_MSG "your table's server stopped; send TakeTournamentSeat"
void gate_tour_event_cb(rconn_t *rc, const char *channel, const char *data, size_t len, void *arg);
void gate_tour_shutdown(gate_t *g);

/* gate_watch.c: spectators (docs/spectators.md, docs/gateway.md "Spectators"). */
int gate_watch_init(gate_t *g);
void gate_watch_shutdown(gate_t *g);
void gate_client_watch(gate_conn_t *c, const Croupier__ClientMessage *m);
bool gate_watch_refuses(gate_conn_t *c, const Croupier__ClientMessage *m);
bool gate_watch_saw(const gate_conn_t *c, const char *round_id);
void gate_watch_fill(gate_req_t *r, Croupier__RpcFrame *f, Croupier__WatchTable *w);
void gate_watch_reply(gate_req_t *r, Croupier__RpcFrame *f);
void gate_watch_req_gone(gate_req_t *r);
void gate_watch_push(gate_link_t *l, Croupier__RpcFrame *f);
void gate_watch_conn_gone(gate_conn_t *c);

#endif
