/*
 * croupier-gate -- the gateway process (docs/architecture.md §7, §8): flags, the health server,
 * signals, and the gate core (gate.h). `croupier-gate token ...` mints a login token (token.h)
 * for bots and tests.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "drain.h"
#include "evthreads.h"
#include "gate.h"
#include "gate_tls.h"
#include "keytag.h"
#include "room.h"
#include "log.h"
#include "metrics.h"
#include "rguard.h"
#include "rcluster.h"
#include "sentinel.h"
#include "token.h"
#include "version.h"

static struct {
    config_addr_t listen, ws_listen, health, redis;
    const char *ws_path, *ws_origins, *tls_cert, *tls_key;
    const char *secret_file, *gate_id, *advertise, *drain_allow, *log_level;
    const char *redis_sentinels, *redis_master;
    const char *redis_cluster;
    long drain_window_ms, close_timeout_ms, goaway_spread_ms;
    long rebalance_ms, rebalance_slack, rebalance_step;
    long budget[GATE_REQ_KINDS];
    long max_frame, output_cap, rate, burst, inflight, idle_ms, ping_ms, seat_ttl_s, gate_ttl_ms,
        replay_code_ttl_s, watch_max, watch_output_cap, watch_follow_ms, watch_flush_ms,
        watch_replay_delay_s;
    long max_conns, max_conns_per_addr, hs_ms, login_ms, frame_ms, write_ms, prate, pburst;
    long health_header_ms, health_body_ms, health_max_conns;
    bool allow_eviction;
    bool money_by_entity;
} O;

static const config_flag_t gate_flags[] = {
    {"listen", CONFIG_ADDR, "0.0.0.0:7100", "client listen address", &O.listen, 0, 0},
    {"ws-listen", CONFIG_ADDR, NULL,
     "WebSocket listen address (RFC 6455; one binary message = one ClientMessage); none if unset",
     &O.ws_listen, 0, 0},
    {"ws-path", CONFIG_STR, "/", "WebSocket request path (others get 404)", &O.ws_path, 0, 0},
    {"ws-origins", CONFIG_STR, NULL,
     "comma-separated Origins allowed on the WebSocket listener, others get 403 (default any)",
     &O.ws_origins, 0, 0},
    {"tls-cert", CONFIG_STR, NULL,
     "PEM certificate chain: both listeners speak TLS 1.2+ (re-read on SIGHUP); with --tls-key",
     &O.tls_cert, 0, 0},
    {"tls-key", CONFIG_STR, NULL, "PEM private key of --tls-cert (re-read on SIGHUP)", &O.tls_key,
     0, 0},
    {"health-listen", CONFIG_ADDR, "0.0.0.0:8080", "health/drain/metrics HTTP address", &O.health,
     0, 0},
    {"redis", CONFIG_ADDR, "127.0.0.1:6379", "Redis address (IP literal)", &O.redis, 0, 0},
    SENTINEL_CONFIG_FLAGS(&O.redis_sentinels, &O.redis_master),
    RCLUSTER_CONFIG_FLAG(&O.redis_cluster),
    {"money-by-entity", CONFIG_BOOL, "false",
     "EXPERIMENTAL, --redis-cluster only: the wallets by entity, as croupier-game "
     "--money-by-entity keeps them -- the balance at login read from {p:<player>}:bal, "
     "JoinRoom and GetRoom read the room at {r:<code>}:room "
     "(docs/queues.md \"The wallets outside the game server\"); a tournament's keys read from "
     "{t:<id>} (docs/tournaments.md \"Tournaments by entity\")",
     &O.money_by_entity, 0, 0},
    {"redis-allow-eviction", CONFIG_BOOL, "false",
     "run even when Redis's maxmemory-policy is not noeviction (TESTS ONLY; docs/deploy.md "
     "\"Redis must not evict\")",
     &O.allow_eviction, 0, 0},
    {"token-secret-file", CONFIG_STR, NULL, "file holding the HMAC-SHA256 token secret (required)",
     &O.secret_file, 0, 0},
    {"drain-window-ms", CONFIG_INT, "5000",
     "exit step 3: still serving and accepting this long after deregistering", &O.drain_window_ms,
     0, 3600000},
    {"close-timeout-ms", CONFIG_INT, "5000", "exit step 4 bound: graceful closes of every client",
     &O.close_timeout_ms, 1, 3600000},
    {"goaway-spread-ms", CONFIG_INT, "1000", "GoAway reconnect delays drawn from [0, spread]",
     &O.goaway_spread_ms, 1, 600000},
    {"rebalance-ms", CONFIG_INT, "0",
     "connection balance: at most once this often, GoAway{REBALANCE} to some players when this "
     "gateway holds well above its share (docs/gateway.md \"Connection balance\"; 0 = off)",
     &O.rebalance_ms, 0, 3600000},
    {"rebalance-slack-percent", CONFIG_INT, "20",
     "connection balance: act only above the fair share plus this percent (and plus 10)",
     &O.rebalance_slack, 1, 1000},
    {"rebalance-step-percent", CONFIG_INT, "5",
     "connection balance: at most this percent of the connections per round (at least 1)",
     &O.rebalance_step, 1, 100},
    {"gate-id", CONFIG_STR, NULL, "gateway id in the registry (default gate-<hostname>-<pid>)",
     &O.gate_id, 0, 0},
    {"advertise", CONFIG_STR, NULL, "client address published for this gateway (default listen)",
     &O.advertise, 0, 0},
    {"budget-join-ms", CONFIG_INT, "800", "deadline budget of a Join", &O.budget[GATE_REQ_JOIN], 1,
     600000},
    {"budget-leave-ms", CONFIG_INT, "500", "deadline budget of a Leave", &O.budget[GATE_REQ_LEAVE],
     1, 600000},
    {"budget-action-ms", CONFIG_INT, "300", "deadline budget of an Action",
     &O.budget[GATE_REQ_ACTION], 1, 600000},
    {"budget-resume-ms", CONFIG_INT, "800", "deadline budget of a Resume",
     &O.budget[GATE_REQ_RESUME], 1, 600000},
    {"budget-list-ms", CONFIG_INT, "500", "deadline budget of a ListTables (the lobby in Redis)",
     &O.budget[GATE_REQ_LIST], 1, 600000},
    {"budget-tour-ms", CONFIG_INT, "3000",
     "how long a tournament registration waits for the director's answer", &O.budget[GATE_REQ_TOUR],
     1, 600000},
    {"max-frame", CONFIG_INT, "65536", "largest client frame payload (bytes)", &O.max_frame, 64,
     65536},
    {"output-cap", CONFIG_INT, "262144", "unsent bytes to one client before it is dropped",
     &O.output_cap, 1024, 1 << 30},
    {"rate-limit", CONFIG_INT, "50", "client frames per second (token bucket rate)", &O.rate, 1,
     1000000},
    {"rate-burst", CONFIG_INT, "100", "client frames in a burst (token bucket size)", &O.burst, 1,
     1000000},
    {"max-inflight", CONFIG_INT, "16", "requests in flight per connection", &O.inflight, 1, 4096},
    {"idle-timeout-ms", CONFIG_INT, "60000", "close connections silent this long", &O.idle_ms, 100,
     86400000},
    {"max-conns", CONFIG_INT, "100000",
     "client connections in all, both listeners (at it the oldest not logged in makes room, else "
     "GoAway OVERLOADED); 0 = no cap",
     &O.max_conns, 0, 10000000},
    {"max-conns-per-addr", CONFIG_INT, "0",
     "client connections per source IPv4 address or IPv6 /64 (over it: GoAway OVERLOADED, "
     "close); 0 = no cap (behind a proxy or NAT every client may share one address)",
     &O.max_conns_per_addr, 0, 10000000},
    {"ws-handshake-timeout-ms", CONFIG_INT, "5000",
     "WebSocket handshake complete within this of the accept, else 408 and close; 0 = off",
     &O.hs_ms, 0, 3600000},
    {"login-timeout-ms", CONFIG_INT, "10000",
     "a successful Login within this of the accept, else GoAway PROTOCOL_ERROR; 0 = off",
     &O.login_ms, 0, 3600000},
    {"frame-timeout-ms", CONFIG_INT, "10000",
     "a frame begun is complete within this (slowloris), else GoAway PROTOCOL_ERROR; 0 = off",
     &O.frame_ms, 0, 3600000},
    {"write-timeout-ms", CONFIG_INT, "30000",
     "close a client whose unsent output made no progress this long (GoAway OVERLOADED); 0 = off",
     &O.write_ms, 0, 3600000},
    {"player-rate-limit", CONFIG_INT, "50",
     "requests per second of one player over all its connections (token bucket rate)", &O.prate, 1,
     1000000},
    {"player-rate-burst", CONFIG_INT, "100", "requests in a burst of one player (bucket size)",
     &O.pburst, 1, 1000000},
    {"health-header-timeout-ms", CONFIG_INT, "5000",
     "health port: a request's headers complete within this of its first byte (or the accept)",
     &O.health_header_ms, 100, 3600000},
    {"health-body-timeout-ms", CONFIG_INT, "5000",
     "health port: a request's body complete within this of its headers", &O.health_body_ms, 100,
     3600000},
    {"health-max-conns", CONFIG_INT, "512",
     "health port: concurrent connections (over it: the slowest request read is closed, else "
     "503)",
     &O.health_max_conns, 1, 100000},
    {"link-ping-ms", CONFIG_INT, "1000", "rpc link heartbeat period (3 missed: reconnect)",
     &O.ping_ms, 10, 60000},
    {"seat-ttl-s", CONFIG_INT, "3600", "TTL of a remembered seat in Redis", &O.seat_ttl_s, 1,
     31 * 86400},
    {"watch-max", CONFIG_INT, "10000",
     "spectators on this gateway at most (docs/spectators.md; 0: none)", &O.watch_max, 0, 10000000},
    {"watch-output-cap", CONFIG_INT, "65536",
     "unsent bytes to one spectator before he is dropped (a slow spectator)", &O.watch_output_cap,
     1024, 1 << 30},
    {"watch-flush-ms", CONFIG_INT, "20",
     "a table's events are written to its spectators in batches this often (0: each at once)",
     &O.watch_flush_ms, 0, 1000},
    {"watch-replay-delay-s", CONFIG_INT, "0",
     "a spectator gets a watched round's replay (its hidden cards) only this long after the round "
     "began (0: once it ends)",
     &O.watch_replay_delay_s, 0, 86400},
    {"watch-follow-ms", CONFIG_INT, "1000",
     "how often the seat of a player watched (Watch{player_id}) is read again", &O.watch_follow_ms,
     50, 600000},
    {"replay-code-ttl-s", CONFIG_INT, "604800",
     "how long a replay's share code resolves (ShareReplay; docs/replays.md)", &O.replay_code_ttl_s,
     1, 366 * 86400},
    {"gate-ttl-ms", CONFIG_INT, "6000", "TTL of the gateway's registry entry", &O.gate_ttl_ms, 30,
     600000},
    {"drain-allow", CONFIG_STR, NULL, "IPs allowed on /drain* (default loopback)", &O.drain_allow,
     0, 0},
    {"log-level", CONFIG_STR, "info", "debug|info|warn|error", &O.log_level, 0, 0},
    {0},
};

static struct {
    const char *secret_file;
    long player, ttl;
} T;

static const config_flag_t token_flags[] = {
    {"secret-file", CONFIG_STR, NULL, "file holding the token secret (required)", &T.secret_file, 0,
     0},
    {"player", CONFIG_INT, "0", "player id (required, > 0)", &T.player, 0, 0},
    {"ttl", CONFIG_INT, "3600", "seconds until the token expires", &T.ttl, 0, 0},
    {0},
};

/* `croupier-gate token --secret-file F --player N --ttl S`: prints one token. */
static int gate_token_cmd(int argc, char **argv)
{
    char err[256];
    int rc = config_parse(token_flags, "croupier-gate token",
                          "Mints a login token (v1.<player>.<expiry>.<hmac>).", argc, argv, err,
                          sizeof err);
    if (rc == CONFIG_HELP)
        return 0;
    if (rc != CONFIG_OK) {
        fprintf(stderr, "croupier-gate token: %s\n", err);
        return 2;
    }
    if (T.secret_file == NULL || T.player <= 0) {
        fprintf(stderr, "croupier-gate token: --secret-file and --player (> 0) are required\n");
        return 2;
    }
    token_secret_t *s = calloc(1, sizeof *s);
    rc = token_secret_load(T.secret_file, s);
    if (rc != 0) {
        fprintf(stderr, "croupier-gate token: %s: %s\n", T.secret_file,
                rc == -EINVAL ? "secret shorter than 16 bytes" : strerror(-rc));
        free(s);
        return 1;
    }
    char tok[TOKEN_MAX_LEN + 1];
    rc = token_mint(s, (uint64_t)T.player, clock_wall_ms() / 1000 + T.ttl, tok, sizeof tok);
    free(s);
    if (rc < 0) {
        fprintf(stderr, "croupier-gate token: %s\n", strerror(-rc));
        return 1;
    }
    printf("%s\n", tok);
    return 0;
}

static struct {
    struct event_base *base;
    gate_t *gate;
    drain_t *drain;
    gate_tls_t *tls;
    rguard_t *guard; /* Redis's eviction policy (rguard.h) */
    bool guard_read; /* a verdict was read once */
    int signals;
    int exit_code;
} G;

/* SIGHUP: the certificate and key are read again; a failure keeps the current ones. */
static void gate_sighup_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    (void)arg;
    if (G.tls == NULL) {
        log_emit(LOG_INFO, "sighup_ignored", "{s:s}", "why", "no --tls-cert");
        return;
    }
    char err[512];
    if (gate_tls_reload(G.tls, err, sizeof err) == 0)
        log_emit(LOG_INFO, "tls_reloaded", "{s:s,s:i}", "cert", O.tls_cert, "generation",
                 (int)gate_tls_generation(G.tls));
    else
        log_emit(LOG_ERROR, "tls_reload_failed", "{s:s,s:s}", "error", err, "kept", "previous");
}

static long gate_human_desks(void *ctx)
{
    (void)ctx;
    return G.gate != NULL ? gate_connections(G.gate) : 0;
}

static void gate_stop_intake(void *ctx)
{
    (void)ctx;
    if (G.gate != NULL)
        gate_exit_request(G.gate);
}

static bool gate_is_ready(void *ctx)
{
    (void)ctx;
    /* Read from the health thread: the guard's verdict is an atomic. */
    rguard_verdict_t v = rguard_verdict(G.guard);
    return G.gate != NULL && gate_ready(G.gate) &&
           (v == RGUARD_SAFE || (v == RGUARD_EVICTING && !rguard_blocks(G.guard)));
}

/*
 * The eviction guard's verdict changed (docs/deploy.md "Redis must not evict"): an evicting
 * Redis found by the first read ends the gateway with status 2 (it never turned ready); found
 * later, the gateway is unready until the policy is noeviction again.
 */
static void gate_guard_cb(rguard_t *g, rguard_verdict_t v, void *arg)
{
    (void)arg;
    bool first = !G.guard_read;
    G.guard_read = G.guard_read || v != RGUARD_UNKNOWN;
    if (first && rguard_blocks(g)) {
        log_emit(LOG_FATAL, "redis_refused", "{s:s,s:s,s:s}", "maxmemory_policy", rguard_policy(g),
                 "required", "noeviction", "msg", rguard_why());
        fprintf(stderr, "croupier-gate: Redis maxmemory-policy is '%s', not noeviction: %s\n",
                rguard_policy(g), rguard_why());
        G.exit_code = 2;
        gate_exit_begin(G.gate);
    }
}

static void gate_signal_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    (void)arg;
    G.signals++;
    log_emit(LOG_INFO, "signal", "{s:i,s:i}", "signal", (int)sig, "count", G.signals);
    gate_exit_begin(G.gate);
}

static void gate_on_exit(gate_t *g, void *arg)
{
    (void)g;
    (void)arg;
    event_base_loopexit(G.base, NULL);
}

int main(int argc, char **argv)
{
    config_program_version = croupier_version;
    if (argc > 1 && strcmp(argv[1], "token") == 0)
        return gate_token_cmd(argc - 1, argv + 1);
    char err[256];
    int rc = config_parse(gate_flags, "croupier-gate",
                          "The croupier gateway: players' connections, routing, resume. "
                          "`croupier-gate token --help` mints login tokens.",
                          argc, argv, err, sizeof err);
    if (rc == CONFIG_HELP)
        return 0;
    if (rc == CONFIG_OK &&
        (sentinel_flags_check(O.redis_sentinels, O.redis_master, err, sizeof err) != 0 ||
         rcluster_flags_check(O.redis_cluster, O.redis_sentinels, err, sizeof err) != 0 ||
         rcluster_redis_flag_check(O.redis_cluster, argc, argv, err, sizeof err) != 0))
        rc = CONFIG_ERROR;
    if (rc != CONFIG_OK) {
        fprintf(stderr, "croupier-gate: %s\n", err);
        return 2;
    }
    if (O.money_by_entity && O.redis_cluster == NULL) { /* as croupier-game refuses it */
        fprintf(stderr, "croupier-gate: --money-by-entity needs --redis-cluster\n");
        return 2;
    }
    if (O.redis_cluster != NULL &&
        rcluster_check(O.redis_cluster, 1000, err, sizeof err) != 0) { /* docs/deploy.md */
        fprintf(stderr, "croupier-gate: --redis-cluster: %s\n", err);
        return 2;
    }
    keytag_set_cluster(O.redis_cluster != NULL); /* the cluster's key layout (common/keytag.h) */
    keytag_set_tour_entity(O.money_by_entity);   /* the tour client's and replays' {t:<id>} */
    if (O.money_by_entity)
        room_set_entity(true); /* JoinRoom, GetRoom: the records by code (lease/room.h) */
    log_level_t lvl;
    if (log_parse_level(O.log_level, &lvl) != 0) {
        fprintf(stderr, "croupier-gate: --log-level: '%s' is not debug|info|warn|error\n",
                O.log_level);
        return 2;
    }
    log_set_level(lvl);
    log_set_process("gate");
    if (O.secret_file == NULL) {
        fprintf(stderr, "croupier-gate: --token-secret-file is required\n");
        return 2;
    }
    static token_secret_t secret;
    rc = token_secret_load(O.secret_file, &secret);
    if (rc != 0) {
        fprintf(stderr, "croupier-gate: --token-secret-file %s: %s\n", O.secret_file,
                rc == -EINVAL ? "secret shorter than 16 bytes" : strerror(-rc));
        return 2;
    }
    char idbuf[128], host[64] = "";
    if (O.gate_id == NULL) {
        /* The host name (the pod name under Kubernetes, where every pid is 1) and the pid. */
        gethostname(host, sizeof host - 1);
        snprintf(idbuf, sizeof idbuf, "gate-%s-%d", host[0] != '\0' ? host : "host", (int)getpid());
        O.gate_id = idbuf;
    }

    if ((O.tls_cert == NULL) != (O.tls_key == NULL)) {
        fprintf(stderr, "croupier-gate: --tls-cert and --tls-key go together\n");
        return 2;
    }

    signal(SIGPIPE, SIG_IGN);
    evthreads_enable();
    /* The changelist lets gate.c's end-of-iteration flush write a client's or a link's output
     * directly without the kernel hearing of the write event libevent adds and it removes in the
     * same iteration (no epoll_ctl per frame). No descriptor is ever dup()ed here, which is the
     * changelist's one caveat. */
    struct event_config *ecfg = event_config_new();
    event_config_set_flag(ecfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    G.base = event_base_new_with_config(ecfg);
    event_config_free(ecfg);
    if (G.base == NULL) {
        fprintf(stderr, "croupier-gate: no event base\n");
        return 1;
    }
    metrics_registry_t *metrics = metrics_create();
    if (O.tls_cert != NULL &&
        gate_tls_create(O.tls_cert, O.tls_key, metrics, &G.tls, err, sizeof err) != 0) {
        fprintf(stderr, "croupier-gate: TLS: %s\n", err);
        return 2;
    }

    drain_config_t dc = {.human_desks = gate_human_desks,
                         .stop_intake = gate_stop_intake,
                         .ready = gate_is_ready,
                         .drain_max_seconds =
                             (int)((O.drain_window_ms + O.close_timeout_ms) / 1000 + 1),
                         .listen = O.health,
                         .drain_allow = O.drain_allow,
                         .metrics = metrics,
                         .metric_prefix = "gate",
                         .header_timeout_ms = (int)O.health_header_ms,
                         .body_timeout_ms = (int)O.health_body_ms,
                         .max_conns = (int)O.health_max_conns};
    if (drain_create(&dc, &G.drain) != 0)
        return 2;
    drain_heartbeat_add(G.drain, "main");
    gate_config_t gc = {.base = G.base,
                        .listen = O.listen,
                        .ws_listen = O.ws_listen,
                        .ws_path = O.ws_path,
                        .ws_origins = O.ws_origins,
                        .tls = G.tls,
                        .advertise = O.advertise,
                        .redis = O.redis,
                        .redis_sentinels = O.redis_sentinels,
                        .redis_master = O.redis_master,
                        .redis_cluster = O.redis_cluster,
                        .money_by_entity = O.money_by_entity,
                        .secret = &secret,
                        .gate_id = O.gate_id,
                        .version = croupier_version,
                        .metrics = metrics,
                        .drain = G.drain,
                        .max_frame = (size_t)O.max_frame,
                        .output_cap = (size_t)O.output_cap,
                        .rate_per_s = (int)O.rate,
                        .rate_burst = (int)O.burst,
                        .max_inflight = (int)O.inflight,
                        .idle_timeout_ms = (int)O.idle_ms,
                        .max_conns = (int)O.max_conns,
                        .max_conns_per_addr = (int)O.max_conns_per_addr,
                        .handshake_timeout_ms = O.hs_ms == 0 ? -1 : (int)O.hs_ms,
                        .login_timeout_ms = O.login_ms == 0 ? -1 : (int)O.login_ms,
                        .frame_timeout_ms = O.frame_ms == 0 ? -1 : (int)O.frame_ms,
                        .write_timeout_ms = O.write_ms == 0 ? -1 : (int)O.write_ms,
                        .player_rate_per_s = (int)O.prate,
                        .player_rate_burst = (int)O.pburst,
                        .link_ping_ms = (int)O.ping_ms,
                        .seat_ttl_s = (int)O.seat_ttl_s,
                        .replay_code_ttl_s = (int)O.replay_code_ttl_s,
                        .watch_max = O.watch_max > 0 ? (int)O.watch_max : -1,
                        .watch_output_cap = (size_t)O.watch_output_cap,
                        .watch_follow_ms = (int)O.watch_follow_ms,
                        .watch_flush_ms = (int)O.watch_flush_ms,
                        .watch_replay_delay_s = (int)O.watch_replay_delay_s,
                        .gate_ttl_ms = (int)O.gate_ttl_ms,
                        .drain_window_ms = (int)O.drain_window_ms,
                        .close_timeout_ms = (int)O.close_timeout_ms,
                        .goaway_spread_ms = (int)O.goaway_spread_ms,
                        .rebalance_ms = (int)O.rebalance_ms,
                        .rebalance_slack_percent = (int)O.rebalance_slack,
                        .rebalance_step_percent = (int)O.rebalance_step,
                        .on_exit = gate_on_exit};
    for (int k = 0; k < GATE_REQ_KINDS; k++)
        gc.budget_ms[k] = (int)O.budget[k];
    rc = gate_create(&gc, &G.gate);
    if (rc != 0)
        return 1;
    rguard_opts_t go = {.conn = {.host = O.redis.host,
                                 .port = O.redis.port,
                                 .name = "guard",
                                 .sentinels = O.redis_sentinels,
                                 .master_name = O.redis_master,
                                 .cluster = O.redis_cluster},
                        .allow_eviction = O.allow_eviction,
                        .metrics = metrics,
                        .on_change = gate_guard_cb};
    G.guard = rguard_create(G.base, &go);
    if (G.guard == NULL) {
        fprintf(stderr, "croupier-gate: the Redis eviction guard could not be set up\n");
        return 2;
    }
    rc = drain_serve(G.drain);
    if (rc != 0) {
        log_emit(LOG_FATAL, "health_listen_failed", "{s:s,s:i,s:s}", "host", O.health.host, "port",
                 O.health.port, "error", strerror(-rc));
        return 1;
    }
    /* Ignored first: libevent restores the disposition it found when the events are freed, so
     * a late SIGTERM (kubelet sends one after the preStop hook, which may have run the whole
     * exit) cannot kill the teardown (status 143). */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    struct event *sigterm = evsignal_new(G.base, SIGTERM, gate_signal_cb, NULL);
    struct event *sigint = evsignal_new(G.base, SIGINT, gate_signal_cb, NULL);
    signal(SIGHUP, SIG_IGN);
    struct event *sighup = evsignal_new(G.base, SIGHUP, gate_sighup_cb, NULL);
    event_add(sigterm, NULL);
    event_add(sigint, NULL);
    event_add(sighup, NULL);
    log_emit(LOG_INFO, "listening", "{s:s,s:i,s:i,s:i,s:b,s:s}", "id", O.gate_id, "port",
             gate_port(G.gate), "ws_port", gate_port_ws(G.gate), "health_port", drain_port(G.drain),
             "tls", G.tls != NULL, "version", croupier_version);

    event_base_dispatch(G.base);

    /* The exit line is written; freeing the signal events puts back SIG_IGN (set above). */
    event_free(sigterm);
    event_free(sigint);
    event_free(sighup);
    /* The health thread reads G.gate: stop it first. */
    drain_destroy(G.drain);
    rguard_destroy(G.guard);
    gate_destroy(G.gate);
    gate_tls_destroy(G.tls);
    event_base_free(G.base);
    metrics_destroy(metrics);
    return G.exit_code;
}
