/*
 * gate -- the gateway core (docs/architecture.md §7): players' long connections, login, routing
 * over rpc links to the game servers, deadlines and retries, seat memory for resume, table moves,
 * and the four-step exit. croupier-gate (gate_main.c) is a thin shell of flags around it.
 *
 * Everything runs on one event_base (the main loop). The drain shell's HTTP thread only reads
 * atomics (connection count, readiness) and wakes the loop through an event to start the exit.
 *
 * Client side: 4-byte big-endian length + client.proto frames (proto/frame.h). A connection
 * must Login with a token (token.h) before anything else; the player id comes only from that
 * token. One live session per player, across gateways: a newer Login takes over and the older
 * connection (here, or on another gateway through GATE_SESSION_CHANNEL) gets
 * GoAway{SESSION_REPLACED} and a graceful close. Bad frames get an Error and a graceful close
 * (flush, shutdown(SHUT_WR), read to EOF, close -- never an RST); input is rate limited
 * (token bucket -> RATE_LIMITED); idle connections are closed with GoAway{IDLE}; a connection
 * whose unsent output passes output_cap is closed (slow consumer).
 *
 * Edge limits (docs/gateway.md "Edge limits"): connections over max_conns or
 * max_conns_per_addr get GoAway{OVERLOADED} and are closed; the WebSocket handshake, the first
 * Login and a partial frame have deadlines; output that makes no progress for write_timeout_ms
 * closes a slow consumer; each player's requests over all its connections share one token
 * bucket (RATE_LIMITED), kept across reconnects. Each has a counter and a log line written at
 * most once per cause every 10 s.
 *
 * Routing: Join picks a ready game server from the registry (lease/registry.h) by game name
 * (servers whose engine matches the request's Engine are preferred); Leave, Action and Resume
 * go to the server holding the player's seat. The seat (server, address, desk, engine, game,
 * stake, the server process's lease epoch: gate_seat.h) is kept in Redis under
 * `{croupier:seat}:<player>` (TTL seat_ttl_s), written when a Join/Resume/move succeeds and
 * deleted on Leave, so another gateway finds it after a reconnect.
 *
 * Crashes (docs/gateway.md "When a game server dies"): a server is gone when its rpc link is
 * lost and its registry entry is gone or taken again (another epoch or address), or a new
 * process answers at its address (gate_seat.h has the rule). While a link is lost the entry is
 * read directly at its expiry, so that takes at most the lease TTL. Connected players seated
 * there get TableClosing{CLOSING_CRASHED} and are moved like a drain's move (Moved{CRASHED});
 * a seat found naming a gone server by a request or a login is forgotten at once (Resume,
 * Action, Leave: TABLE_CLOSED "table gone"; a Join: a fresh join). A lost link with a live entry
 * is retried as any lost link.
 *
 * Deadlines: each request gets budget_ms[kind] at entry; its absolute wall-clock deadline
 * travels in the rpc frame. DRAINING / UNAVAILABLE replies and links lost before the answer are
 * retried within what is left of the budget, always with the same rpc request id; a Join refused
 * with DRAINING goes to another server. When the budget is spent the client gets
 * DEADLINE_EXCEEDED.
 *
 * Lobby: ListTables is answered by the gateway alone, from the ads the game servers of every
 * engine keep in Redis (lease/lobby.h): the index ZSET read from now to +inf (expired members
 * left out), then each ad HASH (pipelined), filtered by engine number, game and stake (each when
 * given), sorted by stake, server and desk, at most GATE_LIST_MAX tables. No answer from Redis
 * within budget_ms[LIST] -> UNAVAILABLE (retriable). The gateway knows no engine by name.
 *
 * Tournaments (gate_tour.c, docs/gateway.md "Tournaments"): ListTournaments and GetTournament
 * read the director's state in Redis; Register/UnregisterTournament append a request to the
 * tournament's stream and poll for the director's answer within budget_ms[TOUR]; the events the
 * director publishes reach the connections that registered in or asked about the tournament.
 * TakeTournamentSeat reads the player's entry and where his table is played, writes his seat
 * (marked tour: gate_seat.h) and resumes it there; a tournament seat is never re-seated by the
 * gateway (TableClosing{CLOSING_TOURNAMENT} and a crash only forget it).
 *
 * Gateway registration: `{croupier:gates}:<gate_id>` = {"id","address","state","version"} (version:
 * the build's, common/version.h) with TTL
 * gate_ttl_ms, refreshed every ttl/3; changes and deletion are published on GATE_CHANNEL.
 */
#ifndef CROUPIER_GATE_H
#define CROUPIER_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"
#include "token.h"

struct event_base;
struct drain;

#define GATE_SEAT_KEY_PREFIX "{croupier:seat}:"
#define GATE_KEY_PREFIX "{croupier:gates}:"
#define GATE_CHANNEL "croupier:gates:events"
/* HASH gate id -> "<logged-in connections> <expiry, Redis ms>": the connection balance's
 * figures, written and read by every registration (same hash tag as the entries, outside
 * their pattern). */
#define GATE_LOAD_KEY "{croupier:gates}.load"
/* "<player> <session> <gate id>" published at every login: the player's connection on any other
 * gateway is replaced (GoAway{SESSION_REPLACED}), so a player has one live session in all. */
#define GATE_SESSION_CHANNEL "croupier:gates:sessions"
/* Most tables in one TableList, and most index members read for one ListTables. */
#define GATE_LIST_MAX 200
#define GATE_LIST_SCAN 1000

typedef enum {
    GATE_REQ_JOIN = 0,
    GATE_REQ_LEAVE = 1,
    GATE_REQ_ACTION = 2,
    GATE_REQ_RESUME = 3,
    GATE_REQ_LIST = 4,  /* ListTables: answered by the gateway itself from the lobby in Redis */
    GATE_REQ_TOUR = 5,  /* Register/UnregisterTournament: the director's answer (gate_tour.c) */
    GATE_REQ_WATCH = 6, /* Watch: a spectator's WatchTable request (gate_watch.c) */
    GATE_REQ_KINDS = 7,
} gate_req_kind_t;

typedef struct gate gate_t;

typedef struct {
    struct event_base *base; /* the main loop (evthreads_enable() before creating it) */
    config_addr_t listen;    /* client listener; port 0 picks a free port */
    config_addr_t ws_listen; /* WebSocket listener (gate_ws.h); host "" = none; port 0: free */
    const char *ws_path;     /* its request path; NULL = "/" */
    const char *ws_origins;  /* Origin allow-list, comma-separated; NULL = any */
    struct gate_tls *tls;    /* TLS on both listeners (gate_tls.h), not owned; NULL = none */
    const char *advertise;   /* address published in the gateway entry; NULL = listen */
    config_addr_t redis;
    const char *redis_sentinels; /* with redis_master: find Redis through Sentinel, ignore redis */
    const char *redis_cluster;   /* seeds of a Redis Cluster (rconn's cluster mode), ignore redis */
    bool money_by_entity;        /* with redis_cluster: the wallet read at login is {p:<id>}:bal
                                    (docs/queues.md "The wallets outside the game server") */
    const char *redis_master;
    const token_secret_t *secret;  /* not owned; must outlive the gate */
    const char *gate_id;           /* copied */
    const char *version;           /* published in the gateway entry; copied; NULL = "" */
    metrics_registry_t *metrics;   /* not owned */
    struct drain *drain;           /* not owned; NULL = no health server (tests) */
    int budget_ms[GATE_REQ_KINDS]; /* 0 = defaults: join 800, leave 500, action 300, resume 800,
                                      list 500 (ListTables, ListTournaments, GetTournament),
                                      tour 3000 (a tournament registration's answer) */
    size_t max_frame;              /* client frame cap; 0 = FRAME_DEFAULT_MAX */
    size_t output_cap;             /* unsent bytes before a slow-consumer close; 0 = 256 KiB */
    int rate_per_s;                /* client frames per second; 0 = 50 */
    int rate_burst;                /* bucket size; 0 = 100 */
    int max_inflight;              /* requests in flight per connection; 0 = 16 */
    int idle_timeout_ms;           /* no frame for this long -> GoAway{IDLE}; 0 = 60000 */
    /* Edge limits (docs/gateway.md "Edge limits"). For the deadlines 0 means the default and a
     * negative value turns the limit off; for the caps 0 means no cap. */
    int max_conns;            /* client connections in all (both listeners); 0 = no cap */
    int max_conns_per_addr;   /* per source IPv4 address or IPv6 /64; 0 = no cap */
    int handshake_timeout_ms; /* WebSocket opening handshake complete within; 0 = 5000 */
    int login_timeout_ms;     /* a successful Login within this of the accept; 0 = 10000 */
    int frame_timeout_ms;     /* a frame begun is completed within; 0 = 10000 */
    int write_timeout_ms;     /* unsent output that makes no progress this long; 0 = 30000 */
    int player_rate_per_s;    /* a player's requests per second, all its connections; 0 = 50 */
    int player_rate_burst;    /* its bucket size; 0 = 100 */
    int link_ping_ms;         /* rpc heartbeat period; 0 = 1000 (3 missed -> reconnect) */
    int seat_ttl_s;           /* 0 = 3600 */
    int replay_code_ttl_s;    /* a replay's share code lives this long; 0 = 604800 (7 days) */
    int gate_ttl_ms;          /* gateway entry TTL; 0 = 6000 */
    int drain_window_ms;      /* exit step 3; < 0 = 0 */
    int close_timeout_ms;     /* exit step 4 bound; 0 = 5000 */
    int goaway_spread_ms;     /* reconnect delays drawn from [0, spread]; 0 = 1000 */
    /* Spectators (docs/spectators.md): at most watch_max on this gateway (0 = 10000; < 0: none);
     * a spectator whose unsent output would pass watch_output_cap is dropped (0 = 65536); a
     * followed player's seat is read again every watch_follow_ms (0 = 1000); a table's events
     * are written to its spectators in batches, every watch_flush_ms (0: each at once). */
    int watch_max;
    size_t watch_output_cap;
    int watch_follow_ms;
    int watch_flush_ms;
    int watch_replay_delay_s; /* a spectator's replay of a round this long after it began; 0 */
    /* Connection balance (gate_balance.h, docs/gateway.md "Connection balance"): every
     * registration publishes the logged-in connections and reads the other gateways'; once the
     * figures have said "too many" for rebalance_ms, and at most once per rebalance_ms, this
     * gateway sends GoAway{REBALANCE} to the share gate_balance_shed() says. rebalance_ms <= 0:
     * off (the counts are still published). */
    int rebalance_ms;
    int rebalance_slack_percent; /* 0 = 20 */
    int rebalance_step_percent;  /* 0 = 5 */
    /* Called once on the loop when the exit sequence has finished (exit line written). */
    void (*on_exit)(gate_t *g, void *arg);
    void *exit_arg;
} gate_config_t;

/*
 * Creates the gate: binds and listens, opens the Redis connections and the registry view,
 * starts registering. Returns 0 and *out, or a negative errno (-EADDRINUSE...) with a log line.
 */
int gate_create(const gate_config_t *cfg, gate_t **out);
/* Closes everything without the graceful sequence (after the exit, or on a start-up failure);
 * never touches cfg.drain, which may already be destroyed. NULL is a no-op. */
void gate_destroy(gate_t *g);
/* The bound client port. */
int gate_port(const gate_t *g);
/* The bound WebSocket port; 0 without a WebSocket listener. */
int gate_port_ws(const gate_t *g);
/* Ready: registered, registry read at least once, not exiting. Any thread. */
bool gate_ready(const gate_t *g);
/* Live client connections. Any thread. */
long gate_connections(const gate_t *g);

/*
 * The four-step exit (docs/architecture.md §7): (1) drain_start (readiness 503), (2) deregister,
 * (3) drain window still serving and accepting, (4) stop listening, GoAway to every client with
 * a jittered reconnect delay, flush, shutdown(SHUT_WR), read to EOF, close -- bounded by
 * close_timeout_ms. Then the line `exit reason=drained` (or `forced` if connections had to be
 * cut at the bound) and done(). Idempotent; calling it again skips the drain window.
 */
void gate_exit_begin(gate_t *g);
/* Makes the exit start from any thread (the drain shell's /drain); wakes the loop. */
void gate_exit_request(gate_t *g);

#endif
