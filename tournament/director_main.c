/*
 * croupier-director -- the tournament director's process (tour_director.h, docs/tournaments.md
 * "The director"): flags, the health server and the drain shell (drain/drain.h), signals.
 *
 * Any number of replicas run side by side; each claims tournaments nobody owns. Its "human
 * desks" (what a drain waits for, docs/architecture.md §4) are the tournaments it owns: the
 * drain hands every one back (the level clock written, the claim deleted) and another replica
 * claims it at its next scan; SIGKILL leaves claims that expire after --claim-ttl-ms.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "drain.h"
#include "evthreads.h"
#include "log.h"
#include "metrics.h"
#include "rguard.h"
#include "rcluster.h"
#include "sentinel.h"
#include "tour_director.h"
#include "version.h"

static struct {
    config_addr_t health, redis;
    const char *redis_cluster;
    const char *redis_sentinels, *redis_master, *director_id, *drain_allow, *log_level;
    long claim_ttl_ms, scan_ms, max_owned, drain_max_s, min_replicas, wait_ms;
    bool allow_eviction, money_by_entity;
} O;

static const config_flag_t director_flags[] = {
    {"health-listen", CONFIG_ADDR, "0.0.0.0:8080", "health/drain/metrics HTTP address", &O.health,
     0, 0},
    {"redis", CONFIG_ADDR, "127.0.0.1:6379", "Redis address (IP literal)", &O.redis, 0, 0},
    SENTINEL_CONFIG_FLAGS(&O.redis_sentinels, &O.redis_master),
    RCLUSTER_CONFIG_FLAG(&O.redis_cluster),
    {"money-by-entity", CONFIG_BOOL, "false",
     "EXPERIMENTAL, --redis-cluster only: the tournaments by entity ({t:<id>} keys, buy-ins and "
     "payouts as transfers; docs/tournaments.md \"Tournaments by entity\"): designed, its money "
     "layer built (money/mtour.h), the director not yet on it -- refused",
     &O.money_by_entity, 0, 0},
    {"redis-min-replicas", CONFIG_INT, "-1",
     "replicas every step (a registration, a hand, a prize) must reach (WAIT) before it is "
     "answered (-1: 1 with --redis-sentinels, else 0; docs/tournaments.md \"The director\")",
     &O.min_replicas, -1, 100},
    {"redis-wait-ms", CONFIG_INT, "500",
     "bound of each WAIT for --redis-min-replicas; short of them after 10, the tournament is let "
     "go unanswered",
     &O.wait_ms, 1, 60000},
    {"redis-allow-eviction", CONFIG_BOOL, "false",
     "run even when Redis's maxmemory-policy is not noeviction (TESTS ONLY; docs/deploy.md "
     "\"Redis must not evict\")",
     &O.allow_eviction, 0, 0},
    {"director-id", CONFIG_STR, NULL,
     "this director's name in logs and in a tournament's owner_id (default director-<host>-<pid>)",
     &O.director_id, 0, 0},
    {"claim-ttl-ms", CONFIG_INT, "3000",
     "a tournament's claim expires this long after its owner's last renewal (renewed every "
     "third); a crashed director's tournaments are taken over after it",
     &O.claim_ttl_ms, 30, 600000},
    {"scan-ms", CONFIG_INT, "500", "how often tournaments nobody owns are looked for", &O.scan_ms,
     10, 60000},
    {"max-owned", CONFIG_INT, "0", "tournaments owned at most (0 = no limit)", &O.max_owned, 0,
     1000000},
    {"drain-max-seconds", CONFIG_INT, "30",
     "exit: wait at most this long for every owned tournament to be handed back", &O.drain_max_s, 0,
     86400},
    {"drain-allow", CONFIG_STR, NULL, "IPs allowed on /drain* (default loopback)", &O.drain_allow,
     0, 0},
    {"log-level", CONFIG_STR, "info", "debug|info|warn|error", &O.log_level, 0, 0},
    {0},
};

static struct {
    struct event_base *base;
    drain_t *drain;
    drain_exit_t *exit;
    tour_director_t *dir;
    rguard_t *guard;
    bool guard_read;
    struct event *release_ev, *tick_ev;
    int hb_main;
    int exit_code;
} G;

static long director_owned(void *ctx)
{
    (void)ctx;
    return tour_director_owned(G.dir);
}

static void director_released(void *arg)
{
    (void)arg;
    log_emit(LOG_INFO, "tour_all_released", NULL);
    drain_notify(G.drain);
}

/* On the main loop: the drain's stop_intake runs on the thread that started the drain. */
static void director_release_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    tour_director_release_all(G.dir, director_released, NULL);
}

static void director_stop_intake(void *ctx)
{
    (void)ctx;
    event_active(G.release_ev, EV_TIMEOUT, 1);
}

static bool director_ready(void *ctx)
{
    (void)ctx;
    rguard_verdict_t v = rguard_verdict(G.guard);
    return tour_director_ready(G.dir) &&
           (v == RGUARD_SAFE || (v == RGUARD_EVICTING && !rguard_blocks(G.guard)));
}

static void director_guard_cb(rguard_t *g, rguard_verdict_t v, void *arg)
{
    (void)arg;
    bool first = !G.guard_read;
    G.guard_read = G.guard_read || v != RGUARD_UNKNOWN;
    if (first && rguard_blocks(g)) {
        log_emit(LOG_FATAL, "redis_refused", "{s:s,s:s,s:s}", "maxmemory_policy", rguard_policy(g),
                 "required", "noeviction", "msg", rguard_why());
        fprintf(stderr, "croupier-director: Redis maxmemory-policy is '%s', not noeviction: %s\n",
                rguard_policy(g), rguard_why());
        G.exit_code = 2;
        drain_exit_begin(G.exit, DRAIN_EXIT_FATAL);
    }
}

static void director_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    drain_heartbeat_beat(G.drain, G.hb_main);
    drain_notify(G.drain);
}

/* Exit hooks: the drain's wait already handed every tournament back; a forced exit leaves the
 * rest to expire (their claims' TTL), which is what a crash does too. */
static void director_hook_noop(drain_exit_t *x, unsigned token, void *ctx)
{
    (void)ctx;
    drain_exit_hook_done(x, token, 0);
}

static void director_exit_done(drain_exit_t *x, drain_exit_reason_t reason, long flushed, void *arg)
{
    (void)x;
    (void)flushed;
    (void)arg;
    if (reason == DRAIN_EXIT_FATAL)
        G.exit_code = G.exit_code ? G.exit_code : 1;
    event_base_loopexit(G.base, NULL);
}

int main(int argc, char **argv)
{
    config_program_version = croupier_version;
    char err[256];
    int rc = config_parse(director_flags, "croupier-director",
                          "The croupier tournament director: owns tournaments, takes them over "
                          "from a director that drains or dies (docs/tournaments.md).",
                          argc, argv, err, sizeof err);
    if (rc == CONFIG_HELP)
        return 0;
    if (rc == CONFIG_OK &&
        (sentinel_flags_check(O.redis_sentinels, O.redis_master, err, sizeof err) != 0 ||
         rcluster_flags_check(O.redis_cluster, O.redis_sentinels, err, sizeof err) != 0 ||
         rcluster_redis_flag_check(O.redis_cluster, argc, argv, err, sizeof err) != 0))
        rc = CONFIG_ERROR;
    if (rc != CONFIG_OK) {
        fprintf(stderr, "croupier-director: %s\n", err);
        return 2;
    }
    if (O.money_by_entity && O.redis_cluster == NULL) { /* as croupier-game refuses it */
        fprintf(stderr, "croupier-director: --money-by-entity needs --redis-cluster\n");
        return 2;
    }
    if (O.money_by_entity) { /* docs/tournaments.md "Tournaments by entity": not wired yet */
        fprintf(stderr, "croupier-director: --money-by-entity: the tournaments by entity are not "
                        "built yet (docs/tournaments.md \"Tournaments by entity\")\n");
        return 2;
    }
    if (O.redis_cluster != NULL &&
        rcluster_check(O.redis_cluster, 1000, err, sizeof err) != 0) { /* docs/deploy.md */
        fprintf(stderr, "croupier-director: --redis-cluster: %s\n", err);
        return 2;
    }
    /* a tournament's keys in the money slot on a cluster (common/keytag.h) */
    keytag_set_cluster(O.redis_cluster != NULL);
    keytag_set_tour_entity(O.money_by_entity); /* a tournament's keys {t:<id>} by entity */
    log_level_t lvl;
    if (log_parse_level(O.log_level, &lvl) != 0) {
        fprintf(stderr, "croupier-director: --log-level: '%s' is not debug|info|warn|error\n",
                O.log_level);
        return 2;
    }
    log_set_level(lvl);
    log_set_process("director");
    char idbuf[128], host[64] = "";
    if (O.director_id == NULL) {
        gethostname(host, sizeof host - 1);
        snprintf(idbuf, sizeof idbuf, "director-%s-%d", host[0] != '\0' ? host : "host",
                 (int)getpid());
        O.director_id = idbuf;
    }

    signal(SIGPIPE, SIG_IGN);
    evthreads_enable();
    G.base = event_base_new();
    if (G.base == NULL) {
        fprintf(stderr, "croupier-director: no event base\n");
        return 1;
    }
    metrics_registry_t *metrics = metrics_create();
    drain_config_t dc = {.human_desks = director_owned,
                         .stop_intake = director_stop_intake,
                         .ready = director_ready,
                         .drain_max_seconds = (int)O.drain_max_s,
                         .listen = O.health,
                         .drain_allow = O.drain_allow,
                         .metrics = metrics,
                         .metric_prefix = "director"};
    if (drain_create(&dc, &G.drain) != 0)
        return 2;
    G.hb_main = drain_heartbeat_add(G.drain, "main");
    G.release_ev = event_new(G.base, -1, 0, director_release_cb, NULL);
    tour_director_config_t tc = {.base = G.base,
                                 .redis_host = O.redis.host,
                                 .redis_port = O.redis.port,
                                 .redis_sentinels = O.redis_sentinels,
                                 .redis_master = O.redis_master,
                                 .redis_cluster = O.redis_cluster,
                                 .director_id = O.director_id,
                                 .claim_ttl_ms = (int)O.claim_ttl_ms,
                                 .scan_ms = (int)O.scan_ms,
                                 .max_owned = (int)O.max_owned,
                                 .min_replicas = (int)(O.min_replicas >= 0 ? O.min_replicas
                                                       : O.redis_sentinels ? 1
                                                                           : 0),
                                 .wait_ms = (int)O.wait_ms,
                                 .metrics = metrics};
    if (G.release_ev == NULL || tour_director_create(&tc, &G.dir) != 0) {
        fprintf(stderr, "croupier-director: could not start the director\n");
        return 1;
    }
    rguard_opts_t go = {.conn = {.host = O.redis.host,
                                 .port = O.redis.port,
                                 .name = "guard",
                                 .sentinels = O.redis_sentinels,
                                 .master_name = O.redis_master,
                                 .cluster = O.redis_cluster},
                        .allow_eviction = O.allow_eviction,
                        .metrics = metrics,
                        .on_change = director_guard_cb};
    G.guard = rguard_create(G.base, &go);
    drain_exit_hooks_t hooks = {.flush_queues = director_hook_noop,
                                .deregister = director_hook_noop,
                                .release_lease = director_hook_noop};
    /* Ignored first: libevent restores the disposition it found when the signal events are
     * freed, so a late SIGTERM (kubelet sends one after the preStop hook) cannot kill the
     * teardown. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    G.exit = drain_exit_create(G.drain, G.base, &hooks, director_exit_done, NULL);
    if (G.guard == NULL || G.exit == NULL || drain_exit_watch_signals(G.exit) != 0) {
        fprintf(stderr, "croupier-director: could not set up the Redis guard or the exit\n");
        return 1;
    }
    rc = drain_serve(G.drain);
    if (rc != 0) {
        log_emit(LOG_FATAL, "health_listen_failed", "{s:s,s:i,s:s}", "host", O.health.host, "port",
                 O.health.port, "error", strerror(-rc));
        return 1;
    }
    G.tick_ev = event_new(G.base, -1, EV_PERSIST, director_tick, NULL);
    struct timeval sec = {1, 0};
    event_add(G.tick_ev, &sec);
    log_emit(LOG_INFO, "listening", "{s:s,s:i,s:s}", "id", O.director_id, "health_port",
             drain_port(G.drain), "version", croupier_version);

    event_base_dispatch(G.base);

    /* The exit machine watches the shell, and the health thread reads the director: the machine
     * goes first, then the shell (its thread stopped), then the director. */
    event_free(G.tick_ev);
    drain_exit_destroy(G.exit);
    drain_destroy(G.drain);
    tour_director_destroy(G.dir);
    rguard_destroy(G.guard);
    event_free(G.release_ev);
    event_base_free(G.base);
    metrics_destroy(metrics);
    return G.exit_code;
}
