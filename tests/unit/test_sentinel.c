/*
 * sentinel: master discovery through Redis Sentinel (common/sentinel.h) and rconn's sentinel
 * mode (common/rconn.h), against real processes on loopback: a master and a replica
 * (redis-server --replicaof) and three sentinels (redis-server --sentinel, quorum 2,
 * down-after-milliseconds 1000). The cases run in order on one set of processes; the last one
 * SIGKILLs the master and follows the failover.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rconn.h"
#include "sentinel.h"
#include "support.h"
#include "testenv.h"

#define MASTER "croupier"

static ts_redis_t *g_master, *g_replica;
static ts_sentinel_t *g_sent[3];
static char g_list[256];   /* the three sentinels */
static int g_dead_port;    /* nothing listens there */
static int g_mute_fd = -1; /* listens, never answers */
static int g_mute_port;
static bool g_ready;

/* Whether `text` (a flat reply from ts_redis_cmd) holds the field followed by value. */
static bool reply_has(const char *text, const char *field, const char *value)
{
    char want[128];
    snprintf(want, sizeof want, "%s\n%s\n", field, value);
    if (text == NULL)
        return false;
    if (strstr(text, want) != NULL)
        return true;
    size_t n = strlen(text), w = strlen(want) - 1; /* the value may end the text */
    return n >= w && strncmp(text + n - w, want, w) == 0 && (n == w || text[n - w - 1] == '\n');
}

static bool sentinels_see_everyone(void)
{
    for (int i = 0; i < 3; i++) {
        char *t = ts_redis_cmd_port(ts_sentinel_port(g_sent[i]), "SENTINEL master %s", MASTER);
        bool ok = reply_has(t, "num-slaves", "1") && reply_has(t, "num-other-sentinels", "2");
        free(t);
        if (!ok)
            return false;
    }
    return true;
}

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    g_master = ts_redis_start();
    if (g_master == NULL)
        return;
    g_replica = ts_redis_start_replica(ts_redis_port(g_master));
    if (g_replica == NULL)
        return;
    if (ts_redis_wait_synced(g_replica, 10000) != 0) {
        fprintf(stderr, "# the replica never linked to the master\n");
        return;
    }
    size_t len = 0;
    for (int i = 0; i < 3; i++) {
        g_sent[i] = ts_sentinel_start(MASTER, ts_redis_port(g_master), 2, 1000, 3000);
        if (g_sent[i] == NULL)
            return;
        len += (size_t)snprintf(g_list + len, sizeof g_list - len, "%s127.0.0.1:%d", i ? "," : "",
                                ts_sentinel_port(g_sent[i]));
    }
    /* Sentinels find each other through hello messages on the master (every 2 s). */
    long long end = ts_now_ms() + 15000;
    while (!sentinels_see_everyone()) {
        if (ts_now_ms() > end) {
            fprintf(stderr, "# the sentinels never saw the replica and each other\n");
            return;
        }
        ts_sleep_ms(100);
    }
    g_dead_port = ts_free_port();
    g_mute_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t al = sizeof a;
    if (bind(g_mute_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(g_mute_fd, 16) != 0 ||
        getsockname(g_mute_fd, (struct sockaddr *)&a, &al) != 0)
        return;
    g_mute_port = ntohs(a.sin_port);
    g_ready = true;
}

static void teardown(void)
{
    for (int i = 0; i < 3; i++)
        ts_sentinel_stop(g_sent[i]);
    ts_redis_stop(g_replica);
    ts_redis_stop(g_master);
    if (g_mute_fd >= 0)
        close(g_mute_fd);
}

#define NEED_RIG() ck_assert_msg(g_ready, "could not start redis-server x2 + sentinel x3")

START_TEST(test_set_parsing_and_switch_messages)
{
    char err[256];
    sentinel_set_t *s =
        sentinel_set_create("127.0.0.1:1,[::1]:2,10.0.0.3:26379", "m", err, sizeof err);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(sentinel_set_count(s), 3);
    ck_assert_str_eq(sentinel_set_host(s, 1), "::1");
    sentinel_set_promote(s, 2);
    ck_assert_str_eq(sentinel_set_host(s, 0), "10.0.0.3");
    ck_assert_int_eq(sentinel_set_port(s, 1), 1);
    ck_assert_int_eq(sentinel_set_port(s, 2), 2);
    sentinel_set_free(s);

    const char *bad[] = {
        "", "127.0.0.1", "127.0.0.1:1,", "redis:26379", "127.0.0.1:0", "127.0.0.1:1,127.0.0.1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        ck_assert_ptr_null(sentinel_set_create(bad[i], "m", err, sizeof err));
        ck_assert_msg(err[0] != '\0', "no reason for \"%s\"", bad[i]);
    }
    ck_assert_ptr_null(sentinel_set_create("127.0.0.1:1", "", err, sizeof err));
    ck_assert_ptr_null(sentinel_set_create("127.0.0.1:1", "a b", err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "master name"));

    char host[64];
    int port = 0;
    const char *msg = "m 127.0.0.1 6379 127.0.0.2 6380";
    ck_assert(sentinel_parse_switch(msg, strlen(msg), "m", host, sizeof host, &port));
    ck_assert_str_eq(host, "127.0.0.2");
    ck_assert_int_eq(port, 6380);
    ck_assert(!sentinel_parse_switch(msg, strlen(msg), "other", host, sizeof host, &port));
    const char *shorter = "m 127.0.0.1 6379 127.0.0.2";
    ck_assert(!sentinel_parse_switch(shorter, strlen(shorter), "m", host, sizeof host, &port));

    /* Bad options for rconn's sentinel mode are refused like a bad host. */
    struct event_base *base = event_base_new();
    rconn_opts_t o = {.sentinels = "127.0.0.1:1", .master_name = NULL};
    errno = 0;
    ck_assert_ptr_null(rconn_create(base, &o));
    ck_assert_int_eq(errno, EINVAL);
    event_base_free(base);
}
END_TEST

START_TEST(test_sync_resolution_skips_dead_and_mute_sentinels)
{
    NEED_RIG();
    char list[400], err[512], host[64];
    int port = 0;
    snprintf(list, sizeof list, "127.0.0.1:%d,127.0.0.1:%d,%s", g_dead_port, g_mute_port, g_list);
    sentinel_set_t *s = sentinel_set_create(list, MASTER, err, sizeof err);
    ck_assert_ptr_nonnull(s);
    long long t0 = ts_now_ms();
    ck_assert_int_eq(sentinel_resolve_sync(s, 200, host, sizeof host, &port, err, sizeof err), 0);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, ts_redis_port(g_master));
    ck_assert_int_lt(ts_now_ms() - t0, 2000);
    /* The sentinel that answered comes first now: the next resolution asks it at once. */
    ck_assert_int_eq(sentinel_set_port(s, 0), ts_sentinel_port(g_sent[0]));
    ck_assert_int_eq(sentinel_set_port(s, 1), g_dead_port);
    sentinel_set_free(s);

    s = sentinel_set_create(g_list, "nosuch", err, sizeof err);
    ck_assert_int_eq(sentinel_resolve_sync(s, 200, host, sizeof host, &port, err, sizeof err),
                     -ENOENT);
    ck_assert_msg(strstr(err, "does not know master \"nosuch\"") != NULL, "%s", err);
    sentinel_set_free(s);

    snprintf(list, sizeof list, "127.0.0.1:%d", g_dead_port);
    s = sentinel_set_create(list, MASTER, err, sizeof err);
    ck_assert_int_eq(sentinel_resolve_sync(s, 200, host, sizeof host, &port, err, sizeof err),
                     -ENOENT);
    ck_assert_msg(strstr(err, "unreachable") != NULL, "%s", err);
    sentinel_set_free(s);
}
END_TEST

typedef struct {
    int ups, downs, replies, nulls, errors;
    char last[128];
} probe_t;

static void probe_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    probe_t *p = arg;
    if (connected)
        p->ups++;
    else
        p->downs++;
}

static void probe_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    probe_t *p = arg;
    if (reply == NULL) {
        p->nulls++;
        return;
    }
    p->replies++;
    if (reply->type == REDIS_REPLY_ERROR)
        p->errors++;
    if (reply->str != NULL)
        snprintf(p->last, sizeof p->last, "%s", reply->str);
}

static bool run_until(struct event_base *base, const int *counter, int want, int ms)
{
    long long end = ts_now_ms() + ms;
    while (*counter < want && ts_now_ms() < end) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    return *counter >= want;
}

static rconn_t *open_sentinel_conn(struct event_base *base, const char *list, const char *master,
                                   probe_t *p)
{
    rconn_opts_t o = {.sentinels = list,
                      .master_name = master,
                      .connect_timeout_ms = 200,
                      .request_timeout_ms = 500,
                      .backoff_min_ms = 20,
                      .backoff_max_ms = 300,
                      .name = "test",
                      .on_state = probe_state_cb,
                      .arg = p};
    return rconn_create(base, &o);
}

START_TEST(test_rconn_finds_the_master_past_a_dead_and_a_mute_sentinel)
{
    NEED_RIG();
    struct event_base *base = event_base_new();
    char list[400];
    snprintf(list, sizeof list, "127.0.0.1:%d,127.0.0.1:%d,%s", g_dead_port, g_mute_port, g_list);
    probe_t p = {0};
    rconn_t *rc = open_sentinel_conn(base, list, MASTER, &p);
    ck_assert_ptr_nonnull(rc);
    ck_assert_msg(run_until(base, &p.ups, 1, 3000), "not connected: %s", rconn_last_error(rc));
    ck_assert_int_eq(rconn_port(rc), ts_redis_port(g_master));
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "SET %s %s", "k", "v"), 0);
    ck_assert(run_until(base, &p.replies, 1, 2000));
    ck_assert_str_eq(p.last, "OK");
    rconn_destroy(rc);
    int never = 0;
    run_until(base, &never, 1, 50); /* deferred frees of the sentinel connections */
    event_base_free(base);
}
END_TEST

START_TEST(test_rconn_wrong_master_name_or_no_sentinel_is_an_error_retried)
{
    NEED_RIG();
    struct event_base *base = event_base_new();
    probe_t p = {0}, q = {0};
    rconn_t *rc = open_sentinel_conn(base, g_list, "nosuch", &p);
    char dead[64];
    snprintf(dead, sizeof dead, "127.0.0.1:%d", g_dead_port);
    rconn_t *rd = open_sentinel_conn(base, dead, MASTER, &q);
    ck_assert_ptr_nonnull(rc);
    ck_assert_ptr_nonnull(rd);
    int never = 0;
    run_until(base, &never, 1, 1500);
    ck_assert_int_eq(p.ups, 0);
    ck_assert_int_eq(q.ups, 0);
    ck_assert(!rconn_connected(rc));
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "PING"), -ENOTCONN);
    ck_assert_msg(strstr(rconn_last_error(rc), "does not know master \"nosuch\"") != NULL, "%s",
                  rconn_last_error(rc));
    ck_assert_msg(strstr(rconn_last_error(rd), "master not found") != NULL, "%s",
                  rconn_last_error(rd));
    rconn_destroy(rc);
    rconn_destroy(rd);
    run_until(base, &never, 1, 50);
    event_base_free(base);
}
END_TEST

START_TEST(test_rconn_follows_a_failover_by_itself)
{
    NEED_RIG();
    struct event_base *base = event_base_new();
    probe_t p = {0};
    rconn_t *rc = open_sentinel_conn(base, g_list, MASTER, &p);
    ck_assert(run_until(base, &p.ups, 1, 3000));
    ck_assert_int_eq(rconn_port(rc), ts_redis_port(g_master));
    int old_port = ts_redis_port(g_master);

    long long t0 = ts_now_ms();
    ts_redis_crash(g_master);
    /* Sentinel: 1 s to call it down, then the election and the promotion of the replica. */
    long long end = t0 + 20000;
    while (ts_now_ms() < end &&
           !(rconn_connected(rc) && rconn_port(rc) == ts_redis_port(g_replica))) {
        int never = 0;
        run_until(base, &never, 1, 50);
    }
    ck_assert_msg(rconn_connected(rc) && rconn_port(rc) == ts_redis_port(g_replica),
                  "no reconnect to the promoted replica within 20 s: %s (sentinel log %s)",
                  rconn_last_error(rc), ts_sentinel_log_path(g_sent[0]));
    fprintf(stderr, "# reconnected to the new master %d ms after the SIGKILL\n",
            (int)(ts_now_ms() - t0));
    ck_assert_int_ge((int)rconn_connect_count(rc), 2);
    ck_assert_int_ne(rconn_port(rc), old_port);

    /* Commands succeed on the new master (a replica would answer -READONLY). */
    p.replies = 0;
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "SET %s %s", "after", "failover"), 0);
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "GET %s", "after"), 0);
    ck_assert(run_until(base, &p.replies, 2, 2000));
    ck_assert_int_eq(p.errors, 0);
    ck_assert_str_eq(p.last, "failover");
    char *role = ts_redis_cmd(g_replica, "ROLE");
    ck_assert_ptr_nonnull(role);
    ck_assert_msg(strncmp(role, "master", 6) == 0, "%s", role);
    free(role);
    rconn_destroy(rc);
    int never = 0;
    run_until(base, &never, 1, 50);
    event_base_free(base);
}
END_TEST

typedef struct {
    probe_t *p;
    char err_at_reply[300];
} readonly_probe_t;

static void readonly_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    readonly_probe_t *r = arg;
    snprintf(r->err_at_reply, sizeof r->err_at_reply, "%s", rconn_last_error(rc));
    probe_reply_cb(rc, reply, r->p);
}

/*
 * The master is demoted behind Sentinel's back (REPLICAOF): the write gets -READONLY and the
 * connection is closed at once; the re-resolution finds the node named by the sentinels is not
 * a master (ROLE) and keeps retrying; once it is a master again, the connection comes back.
 */
START_TEST(test_rconn_leaves_a_demoted_master_and_comes_back)
{
    NEED_RIG();
    struct event_base *base = event_base_new();
    probe_t p = {0};
    rconn_t *rc = open_sentinel_conn(base, g_list, MASTER, &p);
    ck_assert_msg(run_until(base, &p.ups, 1, 5000), "%s", rconn_last_error(rc));
    ck_assert_int_eq(rconn_port(rc), ts_redis_port(g_replica)); /* promoted above */
    char *r = ts_redis_cmd(g_replica, "REPLICAOF 127.0.0.1 %d", g_dead_port);
    ck_assert_ptr_nonnull(r);
    free(r);
    readonly_probe_t ro = {.p = &p};
    ck_assert_int_eq(rconn_command(rc, readonly_reply_cb, &ro, "SET %s %s", "k", "v"), 0);
    ck_assert(run_until(base, &p.replies, 1, 2000));
    ck_assert_int_eq(p.errors, 1);
    ck_assert_msg(strncmp(p.last, "READONLY", 8) == 0, "%s", p.last);
    ck_assert_msg(strstr(ro.err_at_reply, "READONLY") != NULL, "%s", ro.err_at_reply);
    ck_assert(run_until(base, &p.downs, 1, 500));
    int never = 0;
    run_until(base, &never, 1, 800);
    ck_assert(!rconn_connected(rc));
    ck_assert_msg(strstr(rconn_last_error(rc), "ROLE is slave") != NULL, "%s",
                  rconn_last_error(rc));

    r = ts_redis_cmd(g_replica, "REPLICAOF NO ONE");
    free(r);
    ck_assert_msg(run_until(base, &p.ups, 2, 5000), "%s", rconn_last_error(rc));
    p.replies = p.errors = 0;
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "SET %s %s", "k", "v"), 0);
    ck_assert(run_until(base, &p.replies, 1, 2000));
    ck_assert_int_eq(p.errors, 0);
    rconn_destroy(rc);
    run_until(base, &never, 1, 50);
    event_base_free(base);
}
END_TEST

/* ---- croupier-game and croupier-gate with --redis-sentinels ---------------------------- */

#define SECRET "sentinel-test-secret-0123456789"

static testenv_t g_env;
static ts_redis_t *g_env_replica;
static ts_sentinel_t *g_env_sent[3];
static char g_env_list[256];
static bool g_env_ready;

static void env_setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (testenv_start(&g_env, SECRET) != 0)
        return;
    int mport = ts_redis_port(g_env.redis);
    g_env_replica = ts_redis_start_replica(mport);
    if (g_env_replica == NULL || ts_redis_wait_synced(g_env_replica, 10000) != 0) {
        fprintf(stderr, "# could not start a replica linked to the master\n");
        return;
    }
    size_t len = 0;
    for (int i = 0; i < 3; i++) {
        g_env_sent[i] = ts_sentinel_start(MASTER, mport, 2, 1000, 3000);
        if (g_env_sent[i] == NULL)
            return;
        len += (size_t)snprintf(g_env_list + len, sizeof g_env_list - len, "%s127.0.0.1:%d",
                                i ? "," : "", ts_sentinel_port(g_env_sent[i]));
    }
    long long end = ts_now_ms() + 15000;
    for (;;) {
        bool ok = true;
        for (int i = 0; i < 3 && ok; i++) {
            char *t =
                ts_redis_cmd_port(ts_sentinel_port(g_env_sent[i]), "SENTINEL master %s", MASTER);
            ok = reply_has(t, "num-slaves", "1") && reply_has(t, "num-other-sentinels", "2");
            free(t);
        }
        if (ok)
            break;
        if (ts_now_ms() > end) {
            fprintf(stderr, "# the sentinels never saw the replica and each other\n");
            return;
        }
        ts_sleep_ms(100);
    }
    g_env_ready = true;
}

static void env_teardown(void)
{
    for (int i = 0; i < 3; i++)
        ts_sentinel_stop(g_env_sent[i]);
    ts_redis_stop(g_env_replica);
    testenv_stop(&g_env);
}

/* Subscribers of channel on the node (PUBSUB NUMSUB). */
static int subscribers(ts_redis_t *r, const char *channel)
{
    char *t = ts_redis_cmd(r, "PUBSUB NUMSUB %s", channel);
    const char *nl = t ? strchr(t, '\n') : NULL;
    int n = nl ? atoi(nl + 1) : -1;
    free(t);
    return n;
}

/* A command's call count since the last CONFIG RESETSTAT (INFO commandstats), 0 if none. */
static long command_calls(ts_redis_t *r, const char *cmd)
{
    char *t = ts_redis_cmd(r, "INFO commandstats");
    char want[64];
    snprintf(want, sizeof want, "cmdstat_%s:calls=", cmd);
    const char *p = t ? strstr(t, want) : NULL;
    long n = p ? atol(p + strlen(want)) : 0;
    free(t);
    return n;
}

/*
 * croupier-game and croupier-gate find Redis through the sentinels (their --redis points at a
 * port where nothing listens), get ready, and after the master is SIGKILLed they work on the
 * promoted replica by themselves: the game keeps renewing its lease there (EVALSHA calls on the
 * new master) and both stay ready.
 */
START_TEST(test_game_and_gate_follow_the_master_through_sentinel)
{
    ck_assert_msg(g_env_ready, "could not start redis-server x2 + sentinel x3");
    char dead[32];
    snprintf(dead, sizeof dead, "127.0.0.1:%d", ts_free_port());
    char *args[] = {
        "--redis-sentinels", g_env_list, "--redis-master", MASTER, "--redis", dead, NULL};
    /* A lease outlives the failover (about 2-3 s here): this test is about finding the master,
     * not about a lease that expired meanwhile (the lease's own states handle that). */
    char *game_args[] = {"--redis-sentinels",
                         g_env_list,
                         "--redis-master",
                         MASTER,
                         "--redis",
                         dead,
                         "--lease-ttl-ms",
                         "6000",
                         NULL};
    testenv_server_t game, gate;
    ck_assert_int_eq(testenv_start_game(&g_env, &game, "test", 5, game_args, NULL), 0);
    ck_assert_int_eq(testenv_start_gate(&g_env, &gate, "g1", args), 0);

    long long t0 = ts_now_ms();
    ts_redis_crash(g_env.redis);
    long long end = t0 + 20000;
    bool promoted = false;
    while (!promoted && ts_now_ms() < end) {
        char *role = ts_redis_cmd(g_env_replica, "ROLE");
        promoted = role != NULL && strncmp(role, "master", 6) == 0;
        free(role);
        if (!promoted)
            ts_sleep_ms(50);
    }
    ck_assert_msg(promoted, "no failover within 20 s");
    free(ts_redis_cmd(g_env_replica, "CONFIG RESETSTAT"));
    /* The game's lease is renewed every ttl/3 (2 s) with EVALSHA; the gate's two subscriber
     * connections (sessions, registry events) come back on the new master. */
    end = ts_now_ms() + 12000;
    long calls = 0;
    int sess = 0, reg = 0;
    while (ts_now_ms() < end) {
        calls = command_calls(g_env_replica, "evalsha") + command_calls(g_env_replica, "eval");
        sess = subscribers(g_env_replica, "croupier:gates:sessions");
        reg = subscribers(g_env_replica, "croupier:registry:events");
        if (calls > 1 && sess >= 1 && reg >= 1)
            break;
        ts_sleep_ms(100);
    }
    fprintf(stderr, "# new master %d ms after the SIGKILL: %ld script calls, subscribers %d+%d\n",
            (int)(ts_now_ms() - t0), calls, sess, reg);
    ck_assert_msg(calls > 1, "no lease renewals on the new master (game log %s)",
                  ts_proc_log_path(game.proc));
    ck_assert_int_ge(sess, 1);
    ck_assert_int_ge(reg, 1);
    int ready = ts_http_wait_status("127.0.0.1", game.health, "/readyz", 200, 5000);
    if (ready != 0) {
        char *log = ts_proc_log(game.proc);
        fprintf(stderr, "%s\n", log ? log : "");
        free(log);
    }
    ck_assert_int_eq(ready, 0);
    ck_assert_int_eq(ts_http_wait_status("127.0.0.1", gate.health, "/readyz", 200, 5000), 0);
    ck_assert(ts_proc_alive(game.proc));
    ck_assert(ts_proc_alive(gate.proc));
    ck_assert(!ts_proc_log_has(game.proc, "\"level\":\"fatal\""));
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sentinel");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_set_parsing_and_switch_messages);
    suite_add_tcase(s, tc);
    tc = tcase_create("discovery");
    tcase_set_timeout(tc, 40);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_sync_resolution_skips_dead_and_mute_sentinels);
    tcase_add_test(tc, test_rconn_finds_the_master_past_a_dead_and_a_mute_sentinel);
    tcase_add_test(tc, test_rconn_wrong_master_name_or_no_sentinel_is_an_error_retried);
    tcase_add_test(tc, test_rconn_follows_a_failover_by_itself);
    tcase_add_test(tc, test_rconn_leaves_a_demoted_master_and_comes_back);
    suite_add_tcase(s, tc);
    tc = tcase_create("processes");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, env_setup, env_teardown);
    tcase_add_test(tc, test_game_and_gate_follow_the_master_through_sentinel);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
