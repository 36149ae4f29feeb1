/*
 * croupier-game -- one game server: one engine, its desks, a server-ID lease, a registry entry,
 * gateway links, the health server, the settlement writer, and the exit that never tears a
 * round (docs/architecture.md §4).
 *
 * Start order: config -> Redis connection -> lease -> rpc listener + health server (/readyz 503)
 * -> warm-up (engine created once the lease is held) -> register -> ready (once Redis has
 * acknowledged the registry entry's first write).
 * Exit (SIGTERM, or lease lost): drain (stop intake, finish rounds, bounded), void what is left
 * when the bound passes, flush settlements, deregister, release the lease, exit.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "clock.h"
#include "config.h"
#include "drain.h"
#include "engines.h"
#include "evthreads.h"
#include "game_admin.h"
#include "gs.h"
#include "keytag.h"
#include "room.h"
#include "lease.h"
#include "log.h"
#include "deck.h"
#include "metrics.h"
#include "money_writer.h"
#include "rconn.h"
#include "registry.h"
#include "rguard.h"
#include "mcluster.h"
#include "rcluster.h"
#include "sentinel.h"
#include "sweeper.h"
#include "version.h"
#include "xmalloc.h"

typedef struct {
    const char *engine, *games, *trad_options, *service, *log_level, *drain_allow, *admin_secret;
    config_addr_t listen, advertise, health, redis;
    const char *redis_sentinels, *redis_master;
    const char *redis_cluster; /* --redis-cluster seeds (rconn's cluster mode) */
    long pool_size, drain_max, workers, lease_ttl_ms, money_hwm, request_cache, sweep_ms, grace_ms;
    long min_replicas, wait_ms, replay_window_ms, fence_margin_ms;
    bool allow_eviction;
    bool money_by_entity; /* --money-by-entity (docs/queues.md "The game server's money by entity")
                           */
} game_opts_t;

typedef struct {
    game_opts_t o;
    const engine_ops_t *engine;
    struct event_base *base;
    metrics_registry_t *metrics;
    gs_t *gs;
    drain_t *drain;
    drain_exit_t *exit;
    rconn_t *rc;
    lease_t *lease;
    registry_t *registry;
    money_writer_t *money;
    money_sweeper_t *sweeper;
    rguard_t *guard; /* Redis's eviction policy (rguard.h): the lease starts once it is safe */
    bool lease_started;
    struct event *draining_ev; /* main-thread work when the drain starts (any thread fires it) */
    struct event *tick_ev;     /* heartbeats, load, void wait */
    /* --redis-sentinels: the sentinels' quorum, asked every second (game_quorum_cb) */
    sentinel_set_t *qset;
    sentinel_query_t *quorum_q;
    bool quorum_lost;
    metrics_t *m_quorum;
    int hb_main, hb_workers[RT_MAX_WORKERS];
    atomic_bool engine_started, registered, lease_valid;
    atomic_bool redis_unsafe;    /* the guard blocks: Redis evicts (game_guard_cb) */
    atomic_bool redis_uncovered; /* --redis-cluster: the slot map leaves slots unserved */
    bool exiting;
    int exit_code;
    /* The void hook waits for the voided rounds to end before the exit goes on. */
    bool voiding;
    unsigned void_token;
    int64_t void_deadline_ms;
} game_t;

static game_t G;

static const config_flag_t game_flags[] = {
    {"engine", CONFIG_STR, NULL, "engine (the list is the build's)", &G.o.engine, 0, 0},
    {"games", CONFIG_STR, NULL, "comma-separated games (default: all of the engine's)", &G.o.games,
     0, 0},
    {"trad-options", CONFIG_STR, NULL,
     "traditional engine: rule options per game, GAME=OPT[+OPT...][,...] (e.g. "
     "runfast=report-single+bomb-pays:10,guandan=a-three-fails; default: none)",
     &G.o.trad_options, 0, 0},
    {"listen", CONFIG_ADDR, "0.0.0.0:7000", "rpc listen address for gateway links", &G.o.listen, 0,
     0},
    {"advertise", CONFIG_ADDR, "127.0.0.1:7000",
     "address gateways connect to (registry); port 0 = the listen port", &G.o.advertise, 0, 0},
    {"health-listen", CONFIG_ADDR, "0.0.0.0:8080", "health/drain/metrics HTTP address", &G.o.health,
     0, 0},
    {"redis", CONFIG_ADDR, "127.0.0.1:6379", "Redis address (IP literal)", &G.o.redis, 0, 0},
    SENTINEL_CONFIG_FLAGS(&G.o.redis_sentinels, &G.o.redis_master),
    RCLUSTER_CONFIG_FLAG(&G.o.redis_cluster),
    {"redis-min-replicas", CONFIG_INT, "-1",
     "replicas a money operation or a lease epoch must reach (WAIT) before it counts "
     "(-1: 1 with --redis-sentinels, else 0; docs/deploy.md)",
     &G.o.min_replicas, -1, 100},
    {"redis-wait-ms", CONFIG_INT, "500",
     "bound of each WAIT for --redis-min-replicas; short of them, the operation is sent again "
     "and no round starts",
     &G.o.wait_ms, 1, 60000},
    {"redis-replay-window-ms", CONFIG_INT, "60000",
     "how long the money writer keeps completed operations to apply again the ones a promoted "
     "replica lacks after a failover (0: off; below the records' 7-day TTL; docs/deploy.md)",
     &G.o.replay_window_ms, 0, 86400000},
    {"money-by-entity", CONFIG_BOOL, "false",
     "EXPERIMENTAL, --redis-cluster only: the money by entity -- wallets in the players' slots, "
     "this server epoch's seat accounts and settlements in its own slot, buy-ins and cash-outs "
     "as transfers between slots, private rooms' records in their codes' slots ({r:<code>}); "
     "every engine but test (play money on the wallets) "
     "(docs/queues.md \"The game server's money by entity\")",
     &G.o.money_by_entity, 0, 0},
    {"redis-allow-eviction", CONFIG_BOOL, "false",
     "run even when Redis's maxmemory-policy is not noeviction (TESTS ONLY: an evicting Redis "
     "deletes wallets and leases silently; docs/deploy.md \"Redis must not evict\")",
     &G.o.allow_eviction, 0, 0},
    {"service", CONFIG_STR, NULL, "lease pool / service name (default: the engine's name)",
     &G.o.service, 0, 0},
    {"lease-pool-size", CONFIG_INT, "64", "server-ID pool size (>= versions x replicas x 2)",
     &G.o.pool_size, 1, 100000},
    {"lease-ttl-ms", CONFIG_INT, "6000", "server-ID lease TTL in ms (renewed every ttl/3)",
     &G.o.lease_ttl_ms, 30, 600000},
    {"lease-fence-margin-ms", CONFIG_INT, "0",
     "cut off from Redis, the server stops every table this long before its lease could lapse "
     "(0: ttl/10; below ttl/3; docs/queues.md \"A server cut off from Redis\")",
     &G.o.fence_margin_ms, 0, 200000},
    {"drain-max-seconds", CONFIG_INT, "600", "drain bound: rounds still running then are voided",
     &G.o.drain_max, 0, 86400},
    {"workers", CONFIG_INT, "2", "desk worker threads", &G.o.workers, 1, RT_MAX_WORKERS},
    {"money-high-watermark", CONFIG_INT, "4096",
     "settlement queue depth at which desks stop starting rounds", &G.o.money_hwm, 1, 10000000},
    {"request-cache-max", CONFIG_INT, "65536",
     "answers remembered for retries by request id (the oldest are forgotten first)",
     &G.o.request_cache, 16, 10000000},
    {"sweep-ms", CONFIG_INT, "1000",
     "how often the held chips of dead servers are looked for (docs/queues.md)", &G.o.sweep_ms, 50,
     600000},
    {"recover-grace-ms", CONFIG_INT, "0",
     "an unheld slot's chips are recovered after it was seen unheld this long (0: 2 x the lease "
     "TTL)",
     &G.o.grace_ms, 0, 3600000},
    {"drain-allow", CONFIG_STR, NULL,
     "peers allowed on /drain* (comma-separated IPs; default: loopback only)", &G.o.drain_allow, 0,
     0},
    {"admin-secret-file", CONFIG_STR, NULL,
     "secret of the operator tokens of POST /admin/drain, open to any peer (croupier-ctl drain, "
     "docs/ops.md; default: no /admin/drain)",
     &G.o.admin_secret, 0, 0},
    {"log-level", CONFIG_STR, "info", "debug|info|warn|error", &G.o.log_level, 0, 0},
    {0},
};

/* ---- readiness and drain callbacks (any thread) ------------------------------------------ */

static long game_human_desks(void *ctx)
{
    (void)ctx;
    return G.gs != NULL ? (long)gs_human_desks(G.gs) : 0;
}

static long game_total_desks(void *ctx)
{
    (void)ctx;
    return G.gs != NULL ? (long)gs_desks(G.gs) : 0;
}

static bool game_ready(void *ctx)
{
    (void)ctx;
    /* Read from the HTTP thread: every input is an atomic the main thread keeps current. */
    return atomic_load(&G.engine_started) && atomic_load(&G.registered) &&
           atomic_load(&G.lease_valid) && !atomic_load(&G.redis_unsafe) &&
           !atomic_load(&G.redis_uncovered) && deck_healthy();
}

static void game_stop_intake(void *ctx)
{
    (void)ctx;
    gs_stop_intake(G.gs);
    event_active(G.draining_ev, EV_READ, 0);
}

/* Main thread: the registry learns of the drain (gateways stop routing within milliseconds). */
static void game_draining_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    if (G.registry != NULL)
        registry_set_state(G.registry, REGISTRY_DRAINING);
    log_emit(LOG_INFO, "drain_started", "{s:I,s:I}", "human_desks",
             (json_int_t)gs_human_desks(G.gs), "desks", (json_int_t)gs_desks(G.gs));
}

static void game_human_desks_changed(void *arg)
{
    (void)arg;
    drain_notify(G.drain);
}

/* ---- lease and registry -------------------------------------------------------------------- */

/* The registry entry's first write was acknowledged: the gateways can find this server now, so
 * /readyz may say 200 (a rollout waiting for it then sees a server the gateways route to). */
static void game_registered_cb(registry_t *r, int result, void *arg)
{
    (void)r;
    (void)result;
    (void)arg;
    atomic_store(&G.registered, true);
    log_emit(LOG_INFO, "ready", "{s:s,s:i,s:I}", "service", G.o.service, "slot",
             lease_slot(G.lease), "epoch", (json_int_t)lease_epoch(G.lease));
}

/* --redis-min-replicas as a count of replicas to WAIT for (the default -1: none on a cluster). */
static int game_wait_replicas(void)
{
    return G.o.min_replicas > 0 ? (int)G.o.min_replicas : 0;
}

/*
 * The money by entity: the epoch opens its own slot's fence ({s:...}:live) before any money of
 * it is written (money/mcluster.h). Blocking, once per acquisition (idempotent). 0, or -1
 * (logged): the epoch cannot hold money (a recovery marked it dead, or Redis did not answer).
 */
static int game_open_epoch(lease_t *l)
{
    char err[600];
    rcluster_t *c = rcluster_create(G.o.redis_cluster, NULL, err, sizeof err);
    int rc = -1;
    if (c != NULL) {
        mcluster_opts_t mo = {
            .xfer = {.wait_replicas = game_wait_replicas(), .wait_timeout_ms = (int)G.o.wait_ms}};
        mcluster_t *m = mcluster_create(c, &mo);
        rc = mcluster_epoch_open(m, G.o.service, (uint32_t)lease_slot(l), (uint64_t)lease_epoch(l),
                                 err, sizeof err);
        mcluster_destroy(m);
        rcluster_destroy(c);
    }
    log_emit(rc == 0 ? LOG_INFO : LOG_FATAL,
             rc == 0 ? "money_epoch_opened" : "money_epoch_open_failed", "{s:s,s:i,s:I,s:s}",
             "service", G.o.service, "slot", lease_slot(l), "epoch", (json_int_t)lease_epoch(l),
             "error", rc == 0 ? "" : err);
    return rc == 0 ? 0 : -1;
}

static void game_on_lease(lease_t *l, lease_event_t ev, void *arg)
{
    (void)arg;
    char id[96];
    atomic_store(&G.lease_valid, lease_state(l) == LEASE_VALID);
    switch (ev) {
    case LEASE_EV_UNCONFIRMED:
        /* Self-fencing (docs/queues.md "A server cut off from Redis"): Redis has not confirmed
         * the lease for ttl - margin since the last confirmed renew was sent; at send + ttl the
         * key may be gone and another server may take the slot and return our tables' chips.
         * Every table stops now, margin ms before that. */
        log_emit(LOG_ERROR, "self_fenced", "{s:s,s:i,s:I,s:i,s:i,s:I,s:I,s:s}", "service",
                 G.o.service, "slot", lease_slot(l), "epoch", (json_int_t)lease_epoch(l), "ttl_ms",
                 lease_ttl_ms(l), "margin_ms", lease_margin_ms(l), "human_desks",
                 (json_int_t)gs_human_desks(G.gs), "desks", (json_int_t)gs_desks(G.gs), "msg",
                 "Redis has not confirmed the lease in time: every table stops, its players are "
                 "moved elsewhere; the server stays up, unready, until Redis confirms it again");
        gs_set_fenced(G.gs, true);
        break;
    case LEASE_EV_CONFIRMED:
        if (gs_fenced(G.gs)) {
            log_emit(LOG_INFO, "self_fence_lifted", "{s:s,s:i,s:I}", "service", G.o.service, "slot",
                     lease_slot(l), "epoch", (json_int_t)lease_epoch(l));
            gs_set_fenced(G.gs, false);
        }
        break;
    case LEASE_EV_REGAINED:
        if ((uint64_t)lease_epoch(l) != gs_epoch(G.gs)) {
            /* Redis lost its data (lease.h): the tables' seat accounts, round records and
             * settlements are named by the old epoch, which nothing can write any more. */
            log_emit(LOG_ERROR, "lease_lost", "{s:s,s:i,s:s}", "service", G.o.service, "slot",
                     lease_slot(l), "why", "regained under a new epoch");
            gs_stop_intake(G.gs);
            G.exit_code = 3;
            drain_exit_begin(G.exit, DRAIN_EXIT_LEASE_LOST);
            break;
        }
        /* The same epoch, the same tables (those a self-fence closed stay closed): */
        if (gs_fenced(G.gs)) {
            log_emit(LOG_INFO, "self_fence_lifted", "{s:s,s:i,s:I}", "service", G.o.service, "slot",
                     lease_slot(l), "epoch", (json_int_t)lease_epoch(l));
            gs_set_fenced(G.gs, false);
        }
        /* fall through */
    case LEASE_EV_ACQUIRED:
        if (money_entity() && game_open_epoch(l) != 0) {
            G.exit_code = 1;
            drain_exit_begin(G.exit, DRAIN_EXIT_FATAL);
            return;
        }
        /* The new holder returns its predecessors' chips at once (their epochs are dead). */
        money_sweeper_set_own(G.sweeper, G.o.service, (uint32_t)lease_slot(l),
                              (uint64_t)lease_epoch(l));
        snprintf(id, sizeof id, "%s:%d", G.o.service, lease_slot(l));
        gs_set_identity(G.gs, id, (uint32_t)lease_slot(l), (uint64_t)lease_epoch(l));
        if (!atomic_load(&G.engine_started)) {
            int rc = gs_start_engine(G.gs);
            if (rc != 0) {
                log_emit(LOG_FATAL, "engine_start_failed", "{s:s,s:i}", "engine", G.o.engine,
                         "errno", -rc);
                G.exit_code = 1;
                drain_exit_begin(G.exit, DRAIN_EXIT_FATAL);
                return;
            }
            atomic_store(&G.engine_started, true);
        }
        if (G.registry == NULL) {
            char addr[96];
            int port = G.o.advertise.port ? G.o.advertise.port : G.o.listen.port;
            snprintf(addr, sizeof addr, strchr(G.o.advertise.host, ':') ? "[%s]:%d" : "%s:%d",
                     G.o.advertise.host, port);
            char admin[96]; /* the health/admin endpoint, for croupier-ctl */
            snprintf(admin, sizeof admin, strchr(G.o.advertise.host, ':') ? "[%s]:%d" : "%s:%d",
                     G.o.advertise.host, drain_port(G.drain));
            registry_info_t info = {.address = addr,
                                    .engine = G.engine->name,
                                    .engine_id = (int)G.engine->engine,
                                    .games = G.engine->games(gs_engine_state(G.gs)),
                                    .version = croupier_version,
                                    .admin = admin};
            G.registry = registry_create(G.base, G.rc, G.lease, &info);
            if (G.registry == NULL) {
                log_emit(LOG_FATAL, "registry_create_failed", "{s:s}", "address", addr);
                G.exit_code = 1;
                drain_exit_begin(G.exit, DRAIN_EXIT_FATAL);
                return;
            }
            if (drain_is_draining(G.drain))
                registry_set_state(G.registry, REGISTRY_DRAINING);
            registry_on_first_write(G.registry, game_registered_cb, NULL);
            registry_start(G.registry);
        }
        break;
    case LEASE_EV_LOST:
        log_emit(LOG_ERROR, "lease_lost", "{s:s,s:i}", "service", G.o.service, "slot",
                 lease_slot(l));
        gs_stop_intake(G.gs);
        G.exit_code = 3;
        drain_exit_begin(G.exit, DRAIN_EXIT_LEASE_LOST);
        break;
    default:
        break;
    }
}

/* The lease's connection came back (perhaps to a new master after a failover, which may lack
 * the last writes of the old one): the registry entry is re-published from our own state at
 * once (docs/deploy.md "Failover and durability"; the engines' lobby ads do the same on theirs). */
static void game_rconn_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)arg;
    if (G.o.redis_cluster != NULL) /* connected: the map serves every slot (rconn.h) */
        atomic_store(&G.redis_uncovered, !connected);
    if (connected && G.registry != NULL && rconn_connect_count(rc) > 1)
        registry_refresh(G.registry);
}

/*
 * The eviction guard's verdict changed (rguard.h, docs/deploy.md "Redis must not evict"). The
 * lease is taken only once Redis is known not to evict: at start an evicting Redis is refused
 * with exit status 2 before anything is written. Later (a CONFIG SET, a failover to a master
 * configured otherwise) the server turns unready and starts no round until the policy is
 * noeviction again; rounds under way finish and settle (a refused write is retried).
 */
static void game_guard_cb(rguard_t *g, rguard_verdict_t v, void *arg)
{
    (void)arg;
    bool blocks = rguard_blocks(g);
    atomic_store(&G.redis_unsafe, blocks);
    gs_set_redis_unsafe(G.gs, blocks);
    if (blocks && !G.lease_started) {
        log_emit(LOG_FATAL, "redis_refused", "{s:s,s:s,s:s}", "maxmemory_policy", rguard_policy(g),
                 "required", "noeviction", "msg", rguard_why());
        fprintf(stderr, "croupier-game: Redis maxmemory-policy is '%s', not noeviction: %s\n",
                rguard_policy(g), rguard_why());
        G.exit_code = 2;
        drain_exit_begin(G.exit, DRAIN_EXIT_FATAL);
        return;
    }
    if (v != RGUARD_UNKNOWN && !blocks && !G.lease_started && !drain_is_draining(G.drain)) {
        G.lease_started = true;
        lease_start(G.lease);
    }
}

/* ---- exit hooks ---------------------------------------------------------------------------- */

static void game_hook_void(drain_exit_t *x, unsigned token, void *ctx)
{
    (void)x;
    (void)ctx;
    gs_stop_intake(G.gs);
    gs_void_all(G.gs);
    /* Desks void on their own threads; wait (bounded) until no round is left, so the void
     * settlements and notices are queued before the flush. */
    G.voiding = true;
    G.void_token = token;
    G.void_deadline_ms = clock_mono_ms() + 3000;
}

/*
 * Flushes the settlement writer. A result that comes back during the flush may make its desk
 * queue more money (a buy-in that lands after its table closed is returned), so the flush is
 * repeated until no such follow-up is pending and the queue is empty (gs.h, money follow-ups),
 * bounded by 8 s in all.
 */
static void game_hook_flush(drain_exit_t *x, unsigned token, void *ctx)
{
    (void)ctx;
    if (G.money == NULL) {
        drain_exit_hook_done(x, token, 0);
        return;
    }
    int64_t deadline = clock_mono_ms() + 8000;
    long total = 0;
    for (bool first = true;; first = false) {
        int64_t left = deadline - clock_mono_ms();
        /* The first pass always flushes (and logs); later ones only when a follow-up queued. */
        long n = first || money_writer_depth(G.money) > 0
                     ? money_writer_flush(G.money, left > 0 ? (int)left : 0)
                     : 0;
        if (n > 0)
            total += n;
        if (gs_money_followups(G.gs) == 0 && money_writer_depth(G.money) == 0)
            break;
        if (n < 0 || clock_mono_ms() >= deadline) {
            log_emit(LOG_ERROR, "flush_incomplete", "{s:I,s:I}", "left",
                     (json_int_t)money_writer_depth(G.money), "followups",
                     (json_int_t)gs_money_followups(G.gs));
            total = n < 0 ? n : -ETIMEDOUT;
            break;
        }
        usleep(1000); /* the desks handle the results on their own threads */
    }
    drain_exit_hook_done(x, token, total);
}

typedef struct {
    drain_exit_t *x;
    unsigned token;
} game_hook_ctx_t;

static game_hook_ctx_t game_dereg_ctx, game_release_ctx;

static void game_dereg_done(registry_t *r, int result, void *arg)
{
    (void)r;
    game_hook_ctx_t *c = arg;
    drain_exit_hook_done(c->x, c->token, result);
}

static void game_hook_deregister(drain_exit_t *x, unsigned token, void *ctx)
{
    (void)ctx;
    atomic_store(&G.registered, false);
    if (G.registry == NULL) {
        drain_exit_hook_done(x, token, 0);
        return;
    }
    game_dereg_ctx = (game_hook_ctx_t){x, token};
    registry_deregister(G.registry, game_dereg_done, &game_dereg_ctx);
}

static void game_release_done(lease_t *l, int result, void *arg)
{
    (void)l;
    game_hook_ctx_t *c = arg;
    drain_exit_hook_done(c->x, c->token, result);
}

/*
 * The end of a graceful exit, before the lease goes: whatever our seat accounts still hold (a
 * cash-out that failed) goes back to its owners now, and our held records are cleared
 * (MONEY_RECOVER_SELF), so a clean exit leaves nothing for a sweeper. Blocking, like the
 * flush; bounded by the connection's timeouts.
 */
static void game_recover_self(void)
{
    if (G.lease == NULL || lease_slot(G.lease) < 0)
        return;
    if (money_entity()) {
        char err[600];
        rcluster_t *rc = rcluster_create(G.o.redis_cluster, NULL, err, sizeof err);
        if (rc == NULL) {
            log_emit(LOG_ERROR, "recover_self_failed", "{s:s}", "error", err);
            return;
        }
        mcluster_opts_t mo = {
            .xfer = {.wait_replicas = game_wait_replicas(), .wait_timeout_ms = (int)G.o.wait_ms}};
        mcluster_t *m = mcluster_create(rc, &mo);
        money_recover_result_t out;
        int x = mcluster_recover(m, G.o.service, (uint32_t)lease_slot(G.lease),
                                 (uint64_t)lease_epoch(G.lease), MONEY_RECOVER_SELF,
                                 lease_token(G.lease), &out);
        if ((x == 0 || x == -EAGAIN) && out.chips > 0)
            log_emit(LOG_WARN, "recover_self_returned", "{s:I,s:i}", "chips", (json_int_t)out.chips,
                     "accounts", out.accounts);
        mcluster_destroy(m);
        rcluster_destroy(rc);
        return;
    }
    char host[64], err[600];
    int port = 0;
    if (G.o.redis_cluster != NULL
            ? rcluster_master_addr(G.o.redis_cluster, MONEY_HELD_INDEX_KEY, 500, host, sizeof host,
                                   &port, err, sizeof err) != 0
            : sentinel_connect_addr(G.o.redis.host, G.o.redis.port, G.o.redis_sentinels,
                                    G.o.redis_master, 500, host, sizeof host, &port, err,
                                    sizeof err) != 0) {
        log_emit(LOG_ERROR, "recover_self_failed", "{s:s}", "error", err);
        return;
    }
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (c == NULL || c->err != 0) {
        log_emit(LOG_ERROR, "recover_self_failed", "{s:s}", "error",
                 c != NULL ? c->errstr : "out of memory");
        redisFree(c);
        return;
    }
    redisSetTimeout(c, tv);
    money_recover_result_t out;
    int rc =
        money_recover(c, G.o.service, (uint32_t)lease_slot(G.lease), (uint64_t)lease_epoch(G.lease),
                      MONEY_RECOVER_SELF, lease_token(G.lease), 0, &out);
    if (rc == 0 && out.chips > 0)
        log_emit(LOG_WARN, "recover_self_returned", "{s:I,s:i}", "chips", (json_int_t)out.chips,
                 "accounts", out.accounts);
    redisFree(c);
}

static void game_hook_release(drain_exit_t *x, unsigned token, void *ctx)
{
    (void)ctx;
    if (G.lease == NULL || lease_state(G.lease) == LEASE_LOST) {
        drain_exit_hook_done(x, token, 0);
        return;
    }
    game_recover_self();
    game_release_ctx = (game_hook_ctx_t){x, token};
    lease_release(G.lease, game_release_done, &game_release_ctx);
}

static void game_exit_done(drain_exit_t *x, drain_exit_reason_t reason, long flushed, void *arg)
{
    (void)x;
    (void)flushed;
    (void)arg;
    if (reason == DRAIN_EXIT_LEASE_LOST)
        G.exit_code = 3;
    else if (reason == DRAIN_EXIT_FATAL)
        G.exit_code = G.exit_code ? G.exit_code : 1;
    G.exiting = true;
    event_base_loopexit(G.base, NULL);
}

/* ---- ticks: heartbeats, load, the void wait ---------------------------------------------- */

static void game_worker_beat(rt_t *rt, void *arg)
{
    (void)rt;
    drain_heartbeat_beat(G.drain, (int)(intptr_t)arg);
}

/* The sentinels' answer to CKQUORUM: without a quorum no round starts (gs_set_redis_quorum);
 * the change is logged once each way. */
static void game_quorum_cb(bool ok, const char *why, void *arg)
{
    (void)arg;
    G.quorum_q = NULL;
    if (ok == !G.quorum_lost)
        return;
    G.quorum_lost = !ok;
    gs_set_redis_quorum(G.gs, ok);
    metrics_set(G.m_quorum, ok ? 1 : 0);
    if (ok)
        log_emit(LOG_INFO, "redis_quorum_back", "{s:s}", "detail",
                 "the sentinels can fail the master over again: rounds start again");
    else
        log_emit(LOG_ERROR, "redis_quorum_lost", "{s:s,s:s}", "detail",
                 "no new round starts until the sentinels have a quorum (a master lost now would "
                 "not be replaced)",
                 "why", why != NULL ? why : "");
}

/* CROUPIER_TEST_RNG_FAIL_FILE (tests only): the deck generator fails once the file exists. */
static char game_rng_fail_file[512];

static int game_test_generator(unsigned char *buf, int n)
{
    if (access(game_rng_fail_file, F_OK) == 0)
        return 0;
    return deck_default_generator(buf, n);
}

static void game_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    static int64_t last_beat;
    int64_t now = clock_mono_ms();
    if (now - last_beat >= 1000) {
        last_beat = now;
        drain_heartbeat_beat(G.drain, G.hb_main);
        (void)deck_check(); /* a failed generator: unready, no new round (docs/fairness.md) */
        for (unsigned w = 0; w < rt_workers(gs_rt(G.gs)); w++)
            rt_post_job(gs_rt(G.gs), w, game_worker_beat, (void *)(intptr_t)G.hb_workers[w]);
        if (G.registry != NULL)
            registry_set_load(G.registry, (int64_t)rt_humans_seated(gs_rt(G.gs)));
        if (G.qset != NULL && G.quorum_q == NULL && !G.exiting)
            G.quorum_q = sentinel_quorum_start(G.base, G.qset, 300, game_quorum_cb, NULL);
    }
    if (G.voiding && (gs_human_desks(G.gs) == 0 || now >= G.void_deadline_ms)) {
        G.voiding = false;
        drain_exit_hook_done(G.exit, G.void_token, (long)gs_human_desks(G.gs));
    }
}

/* ---- start-up ------------------------------------------------------------------------------- */

static int game_listen(const config_addr_t *a)
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
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 1024) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd;
}

static int game_bound_port(int fd)
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
 * The process's flags followed by every engine's own flags (engine_ops_t.flags), so --help lists
 * them all and each is checked at start. Built once; lives as long as the process.
 */
static const config_flag_t *game_all_flags(void)
{
    size_t n = 0, cap = sizeof game_flags / sizeof game_flags[0];
    config_flag_t *all = xcalloc(cap, sizeof *all);
    static char engine_help[600];
    snprintf(engine_help, sizeof engine_help, "engine: %s", engines_names());
    for (const config_flag_t *f = game_flags; f->name != NULL; f++) {
        all[n] = *f;
        if (strcmp(f->name, "engine") == 0)
            all[n].help = engine_help;
        n++;
    }
    for (size_t e = 0; e < engines_count(); e++) {
        const engine_ops_t *ops = engines_at(e);
        if (ops->flags == NULL)
            continue;
        for (const config_flag_t *f = ops->flags(); f->name != NULL; f++) {
            if (n + 2 > cap) {
                cap *= 2;
                all = xreallocarray(all, cap, sizeof *all);
            }
            all[n++] = *f;
        }
    }
    memset(&all[n], 0, sizeof all[n]);
    static config_flag_t *built; /* reachable for the process's life: no leak at exit */
    built = all;
    return built;
}

int main(int argc, char **argv)
{
    char err[256];
    config_program_version = croupier_version;
    int rc = config_parse(game_all_flags(), "croupier-game",
                          "A croupier game server: one engine's desks, drained gracefully.", argc,
                          argv, err, sizeof err);
    if (rc == CONFIG_HELP)
        return 0;
    if (rc == CONFIG_OK &&
        (sentinel_flags_check(G.o.redis_sentinels, G.o.redis_master, err, sizeof err) != 0 ||
         rcluster_flags_check(G.o.redis_cluster, G.o.redis_sentinels, err, sizeof err) != 0 ||
         rcluster_redis_flag_check(G.o.redis_cluster, argc, argv, err, sizeof err) != 0))
        rc = CONFIG_ERROR;
    if (rc != CONFIG_OK) {
        fprintf(stderr, "croupier-game: %s\n", err);
        return 2;
    }
    if (G.o.redis_cluster != NULL &&
        rcluster_check(G.o.redis_cluster, 1000, err, sizeof err) != 0) { /* docs/deploy.md */
        fprintf(stderr, "croupier-game: --redis-cluster: %s\n", err);
        return 2;
    }
    keytag_set_cluster(G.o.redis_cluster != NULL); /* the cluster's key layout (common/keytag.h) */
    if (G.o.money_by_entity && G.o.redis_cluster == NULL) {
        fprintf(stderr, "croupier-game: --money-by-entity needs --redis-cluster\n");
        return 2;
    }
    log_level_t lvl;
    if (log_parse_level(G.o.log_level, &lvl) != 0) {
        fprintf(stderr, "croupier-game: --log-level: '%s' is not debug|info|warn|error\n",
                G.o.log_level);
        return 2;
    }
    log_set_level(lvl);
    log_set_process("game");
    if (G.o.engine == NULL) {
        fprintf(stderr, "croupier-game: --engine is required (%s)\n", engines_names());
        return 2;
    }
    G.engine = engines_find(G.o.engine);
    if (G.engine == NULL) {
        fprintf(stderr, "croupier-game: --engine: '%s' is not one of %s\n", G.o.engine,
                engines_names());
        return 2;
    }
    if (G.o.money_by_entity) {
        /* Engines whose rounds settle seat accounts only (docs/queues.md "The game server's
         * money by entity": the engines and table kinds it runs) */
        const char *why = G.engine->entity_refusal != NULL ? G.engine->entity_refusal()
                                                           : "is not on the table kit";
        if (why != NULL) {
            fprintf(stderr, "croupier-game: --money-by-entity: --engine %s %s\n", G.engine->name,
                    why);
            return 2;
        }
        money_set_entity(true);       /* before any thread (money.h) */
        keytag_set_tour_entity(true); /* a tournament table's keys {t:<id>} (common/keytag.h) */
        room_set_entity(true);        /* the rooms in their codes' slots (lease/room.h) */
    }
    if (G.o.trad_options != NULL && G.o.trad_options[0] != '\0') {
        if (G.engine->check_options == NULL) {
            fprintf(stderr, "croupier-game: --trad-options: only for --engine traditional\n");
            return 2;
        }
        if (G.engine->check_options(G.o.trad_options, G.o.games, err, sizeof err) != 0) {
            fprintf(stderr, "croupier-game: --trad-options: %s\n", err);
            return 2;
        }
    }
    if (G.o.service == NULL)
        G.o.service = G.engine->name;
    /* The self-fence's inequality (docs/queues.md "A server cut off from Redis"): the tables
     * stop at (last confirmed renew sent) + ttl - margin, strictly before the earliest moment
     * another process may act on our slot, (sent) + ttl (a new holder once the key expired;
     * a sweeper waits recover-grace more); and after two renewals (every ttl/3) could have
     * confirmed the lease. */
    long fence_margin = G.o.fence_margin_ms > 0 ? G.o.fence_margin_ms : G.o.lease_ttl_ms / 10;
    if (fence_margin < 1 || fence_margin >= G.o.lease_ttl_ms / 3) {
        fprintf(stderr,
                "croupier-game: --lease-fence-margin-ms %ld: must be at least 1 and below "
                "--lease-ttl-ms / 3 (%ld), so that the tables stop before the lease can lapse "
                "and after two renewals could have confirmed it\n",
                fence_margin, G.o.lease_ttl_ms / 3);
        return 2;
    }
    if (G.o.min_replicas < 0)
        G.o.min_replicas = G.o.redis_sentinels != NULL ? 1 : 0;
    if (G.o.admin_secret != NULL && (rc = game_admin_load(G.o.admin_secret)) != 0) {
        fprintf(stderr, "croupier-game: --admin-secret-file %s: %s\n", G.o.admin_secret,
                rc == -EINVAL ? "shorter than 16 bytes" : strerror(-rc));
        return 2;
    }

    signal(SIGPIPE, SIG_IGN);
    evthreads_enable();
    G.base = event_base_new();
    G.metrics = metrics_create();
    deck_metrics_register(G.metrics); /* rng_healthy, rng_failures_total (docs/fairness.md) */
    const char *fail_file = getenv("CROUPIER_TEST_RNG_FAIL_FILE");
    if (fail_file != NULL && fail_file[0] != '\0') {
        /* Tests only: the generator fails once this file exists (docs/fairness.md). */
        snprintf(game_rng_fail_file, sizeof game_rng_fail_file, "%s", fail_file);
        deck_set_generator(game_test_generator);
        log_emit(LOG_WARN, "rng_test_failure_armed", "{s:s}", "file", game_rng_fail_file);
    }
    (void)deck_check(); /* a generator that fails now leaves the server unready */

    gs_config_t gc = {.base = G.base,
                      .workers = (unsigned)G.o.workers,
                      .engine = G.engine,
                      .games = G.o.games,
                      .engine_options = G.o.trad_options,
                      .metrics = G.metrics,
                      .request_cache_max = (int)G.o.request_cache,
                      .redis_host = G.o.redis.host,
                      .redis_port = G.o.redis.port,
                      .redis_sentinels = G.o.redis_sentinels,
                      .redis_master = G.o.redis_master,
                      .redis_cluster = G.o.redis_cluster,
                      .redis_min_replicas = (int)G.o.min_replicas,
                      .redis_wait_ms = (int)G.o.wait_ms,
                      .service = G.o.service};
    rc = gs_create(&gc, &G.gs);
    if (rc != 0) {
        log_emit(LOG_FATAL, "runtime_start_failed", "{s:i}", "errno", -rc);
        return 1;
    }
    gs_set_human_desks_observer(G.gs, game_human_desks_changed, NULL);
    G.draining_ev = event_new(G.base, -1, 0, game_draining_cb, NULL);

    int lfd = game_listen(&G.o.listen);
    if (lfd < 0) {
        log_emit(LOG_FATAL, "listen_failed", "{s:s,s:i,s:s}", "host", G.o.listen.host, "port",
                 G.o.listen.port, "error", strerror(-lfd));
        return 1;
    }
    G.o.listen.port = game_bound_port(lfd);
    gs_listen_fd(G.gs, lfd);

    drain_config_t dc = {.human_desks = game_human_desks,
                         .stop_intake = game_stop_intake,
                         .ready = game_ready,
                         .total_desks = game_total_desks,
                         .drain_max_seconds = (int)G.o.drain_max,
                         .listen = G.o.health,
                         .drain_allow = G.o.drain_allow,
                         .admin_auth = G.o.admin_secret != NULL ? game_admin_auth : NULL,
                         .metrics = G.metrics,
                         .metric_prefix = "game"};
    rc = drain_create(&dc, &G.drain);
    if (rc != 0)
        return 2;
    G.hb_main = drain_heartbeat_add(G.drain, "main");
    for (unsigned w = 0; w < (unsigned)G.o.workers; w++) {
        char name[32];
        snprintf(name, sizeof name, "worker-%u", w);
        G.hb_workers[w] = drain_heartbeat_add(G.drain, name);
    }
    rc = drain_serve(G.drain);
    if (rc != 0) {
        log_emit(LOG_FATAL, "health_listen_failed", "{s:s,s:i,s:s}", "host", G.o.health.host,
                 "port", G.o.health.port, "error", strerror(-rc));
        return 1;
    }
    drain_exit_hooks_t hooks = {.void_unfinished_rounds = game_hook_void,
                                .flush_queues = game_hook_flush,
                                .deregister = game_hook_deregister,
                                .release_lease = game_hook_release};
    G.exit = drain_exit_create(G.drain, G.base, &hooks, game_exit_done, NULL);
    drain_exit_watch_signals(G.exit);

    log_emit(LOG_INFO, "listening", "{s:s,s:s,s:i,s:i,s:s,s:i,s:s}", "engine", G.engine->name,
             "service", G.o.service, "rpc_port", G.o.listen.port, "health_port",
             drain_port(G.drain), "redis", G.o.redis.host, "redis_port", G.o.redis.port, "version",
             croupier_version);

    money_writer_config_t mc = {.redis_host = G.o.redis.host,
                                .redis_port = G.o.redis.port,
                                .redis_sentinels = G.o.redis_sentinels,
                                .redis_master = G.o.redis_master,
                                .redis_cluster = G.o.redis_cluster,
                                .service = G.o.service,
                                .high_watermark = (size_t)G.o.money_hwm,
                                .min_replicas = (int)G.o.min_replicas,
                                .wait_timeout_ms = (int)G.o.wait_ms,
                                .replay_window_ms =
                                    G.o.replay_window_ms > 0 ? (int)G.o.replay_window_ms : -1,
                                .metrics = G.metrics};
    G.money = money_writer_create(&mc);
    if (G.money == NULL)
        return 1;
    gs_set_money(G.gs, G.money);
    money_sweeper_config_t sc = {.redis_host = G.o.redis.host,
                                 .redis_port = G.o.redis.port,
                                 .redis_sentinels = G.o.redis_sentinels,
                                 .redis_master = G.o.redis_master,
                                 .redis_cluster = G.o.redis_cluster,
                                 .min_replicas = game_wait_replicas(),
                                 .interval_ms = (int)G.o.sweep_ms,
                                 .grace_ms =
                                     (int)(G.o.grace_ms > 0 ? G.o.grace_ms : 2 * G.o.lease_ttl_ms),
                                 .metrics = G.metrics};
    G.sweeper = money_sweeper_create(&sc);
    if (G.sweeper == NULL)
        return 1;

    rconn_opts_t ro = {.host = G.o.redis.host,
                       .port = G.o.redis.port,
                       .request_timeout_ms =
                           (int)(G.o.lease_ttl_ms / 3 > 0 ? G.o.lease_ttl_ms / 3 : 1),
                       .name = "lease",
                       .on_state = game_rconn_state_cb,
                       .sentinels = G.o.redis_sentinels,
                       .master_name = G.o.redis_master,
                       .cluster = G.o.redis_cluster};
    G.rc = rconn_create(G.base, &ro);
    lease_opts_t lo = {.service = G.o.service,
                       .pool_size = (int)G.o.pool_size,
                       .ttl_ms = (int)G.o.lease_ttl_ms,
                       .metrics = G.metrics,
                       .min_replicas = (int)G.o.min_replicas,
                       .wait_timeout_ms = (int)G.o.wait_ms,
                       .margin_ms = (int)G.o.fence_margin_ms,
                       .on_event = game_on_lease};
    G.lease = lease_create(G.base, G.rc, &lo);
    if (G.rc == NULL || G.lease == NULL) {
        log_emit(LOG_FATAL, "lease_setup_failed", "{s:s}", "service", G.o.service);
        return 2;
    }
    rguard_opts_t go = {.conn = {.host = G.o.redis.host,
                                 .port = G.o.redis.port,
                                 .request_timeout_ms = ro.request_timeout_ms,
                                 .name = "guard",
                                 .sentinels = G.o.redis_sentinels,
                                 .master_name = G.o.redis_master,
                                 .cluster = G.o.redis_cluster},
                        .allow_eviction = G.o.allow_eviction,
                        .metrics = G.metrics,
                        .on_change = game_guard_cb};
    G.guard = rguard_create(G.base, &go);
    if (G.guard == NULL) {
        log_emit(LOG_FATAL, "redis_guard_setup_failed", "{s:s}", "service", G.o.service);
        return 2;
    }
    /* lease_start() once the guard read a policy that does not evict (game_guard_cb) */
    long grace = G.o.grace_ms > 0 ? G.o.grace_ms : 2 * G.o.lease_ttl_ms;
    log_emit(LOG_INFO, "lease_fence_rule", "{s:I,s:I,s:I,s:I,s:I,s:s}", "renew_every_ms",
             (json_int_t)(G.o.lease_ttl_ms / 3), "fence_after_ms",
             (json_int_t)(G.o.lease_ttl_ms - fence_margin), "takeover_after_ms",
             (json_int_t)G.o.lease_ttl_ms, "sweep_after_ms", (json_int_t)(G.o.lease_ttl_ms + grace),
             "margin_ms", (json_int_t)fence_margin, "msg",
             "cut off from Redis, every table stops fence_after_ms after the last confirmed renew "
             "was sent; nobody else may act on this server's chips before takeover_after_ms");

    if (G.o.redis_sentinels != NULL) {
        char qerr[256];
        G.qset = sentinel_set_create(G.o.redis_sentinels, G.o.redis_master, qerr, sizeof qerr);
        G.m_quorum = metrics_gauge(G.metrics, "redis_sentinel_quorum", NULL,
                                   "1 while the Redis Sentinels have a quorum to fail the master "
                                   "over (SENTINEL CKQUORUM); 0: no round starts");
        metrics_set(G.m_quorum, 1);
    }
    G.tick_ev = event_new(G.base, -1, EV_PERSIST, game_tick_cb, NULL);
    struct timeval tv = {0, 10000};
    event_add(G.tick_ev, &tv);

    event_base_dispatch(G.base);

    /* The exit line is written: a late SIGTERM (kubelet sends one after preStop) or SIGINT must
     * not turn the clean exit into a kill while the teardown runs. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);

    /* Teardown. The health server goes first: its thread calls back into the game server
     * (human_desks, ready) until it is joined. The exit line has been written already. */
    event_free(G.tick_ev);
    sentinel_query_cancel(G.quorum_q);
    sentinel_set_free(G.qset);
    event_free(G.draining_ev);
    drain_exit_destroy(G.exit);
    drain_destroy(G.drain);
    gs_destroy(G.gs);
    money_sweeper_destroy(G.sweeper);
    money_writer_destroy(G.money);
    rguard_destroy(G.guard);
    registry_destroy(G.registry);
    lease_destroy(G.lease);
    rconn_destroy(G.rc);
    event_base_free(G.base);
    metrics_destroy(G.metrics);
    return G.exit_code;
}
