/*
 * rcluster: the Redis Cluster client (common/rcluster.h; docs/deploy.md "Redis Cluster: the
 * client") against a real cluster on loopback (tests/support/tcluster.h): 3 masters, one replica
 * each. The cases of the "cluster" TCase run in order on that one cluster, and change it as they
 * go: a slot is migrated (MOVED), another is left half-migrated then finished (ASK, TRYAGAIN),
 * and the last case SIGKILLs a master and follows its replica's promotion. The "refusals" TCase
 * starts its own servers: a plain redis-server, a one-node cluster with uncovered slots.
 *
 * A redis-server without cluster mode makes the whole program a visible SKIP (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <event2/event.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "rcluster.h"
#include "rcluster_async.h"
#include "support.h"
#include "tcluster.h"

#define MASTERS 3

static ts_cluster_t *g_cl;

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    g_cl = ts_cluster_start(MASTERS, 1);
}

static void teardown(void)
{
    ts_cluster_stop(g_cl);
    g_cl = NULL;
}

#define NEED_CLUSTER() ck_assert_msg(g_cl != NULL, "could not start a 3+3 Redis Cluster")

static rcluster_t *client(int budget_ms)
{
    char err[600] = "";
    rcluster_opts_t o = {.retry_budget_ms = budget_ms};
    rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), &o, err, sizeof err);
    ck_assert_msg(c != NULL, "rcluster_create: %s", err);
    return c;
}

/* The node that serves key, as the cluster itself says (node 0 asked, else node 1). */
static int owner_of(const char *key)
{
    unsigned slot = rcluster_key_slot(key, strlen(key));
    int o = ts_cluster_slot_owner(g_cl, 0, slot);
    return o >= 0 ? o : ts_cluster_slot_owner(g_cl, 1, slot);
}

/* A key made from fmt and a number (a "%d" in fmt) that node `node` serves. */
static void key_on(int node, const char *fmt, char *key, size_t len)
{
    for (int i = 0; i < 100000; i++) {
        snprintf(key, len, fmt, i);
        if (owner_of(key) == node)
            return;
    }
    ck_abort_msg("no key found on node %d", node);
}

static void set_ok(rcluster_t *c, const char *key, const char *val)
{
    redisReply *r = rcluster_command(c, 0, key, "SET %s %s", key, val);
    ck_assert_msg(r != NULL, "SET %s: %s", key, rcluster_last_error(c));
    ck_assert_msg(r->type == REDIS_REPLY_STATUS, "SET %s: %s", key, r->str ? r->str : "?");
    freeReplyObject(r);
}

static void get_is(rcluster_t *c, unsigned flags, const char *key, const char *want)
{
    redisReply *r = rcluster_command(c, flags, key, "GET %s", key);
    ck_assert_msg(r != NULL, "GET %s: %s", key, rcluster_last_error(c));
    ck_assert_msg(r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0,
                  "GET %s: type %d \"%s\", want \"%s\"", key, r->type, r->str ? r->str : "", want);
    freeReplyObject(r);
}

START_TEST(test_key_slots_agree_with_cluster_keyslot)
{
    NEED_CLUSTER();
    struct timeval tv = {2, 0};
    redisContext *ctx = redisConnectWithTimeout("127.0.0.1", ts_cluster_port(g_cl, 0), tv);
    ck_assert(ctx != NULL && ctx->err == 0);
    redisSetTimeout(ctx, tv);
    /* keys of 0..23 bytes from an alphabet rich in braces, some binary */
    const char alpha[] = "{}{}ab{c}\0\xff:x";
    unsigned seed = 12345;
    for (int i = 0; i < 3000; i++) {
        char key[24];
        size_t len = (size_t)(rand_r(&seed) % sizeof key);
        for (size_t k = 0; k < len; k++)
            key[k] = alpha[rand_r(&seed) % (sizeof alpha - 1)];
        redisReply *r = redisCommand(ctx, "CLUSTER KEYSLOT %b", key, len);
        ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
        ck_assert_msg((long long)rcluster_key_slot(key, len) == r->integer,
                      "key %d (%zu bytes): ours %u, Redis %lld", i, len,
                      rcluster_key_slot(key, len), r->integer);
        freeReplyObject(r);
    }
    redisFree(ctx);
}
END_TEST

START_TEST(test_commands_reach_the_slots_master)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    ck_assert_uint_eq(rcluster_master_count(c), MASTERS);
    for (int m = 0; m < MASTERS; m++) {
        char key[64];
        key_on(m, "route:%d", key, sizeof key);
        set_ok(c, key, "v");
        int port;
        rcluster_slot_host(c, rcluster_key_slot(key, strlen(key)), &port);
        ck_assert_int_eq(port, ts_cluster_port(g_cl, m));
        /* the key is on that master and no other: asked directly, the others redirect */
        char *t = ts_cluster_cmd(g_cl, m, "GET %s", key);
        ck_assert_str_eq(t, "v");
        free(t);
        t = ts_cluster_cmd(g_cl, (m + 1) % MASTERS, "GET %s", key);
        ck_assert_msg(t != NULL && strncmp(t, "MOVED ", 6) == 0, "%s", t ? t : "no answer");
        free(t);
        get_is(c, 0, key, "v");
    }
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    ck_assert_uint_eq(st.moved, 0);
    ck_assert_uint_eq(st.ask, 0);
    ck_assert_uint_eq(st.reconnects, MASTERS); /* one connection per master */
    /* an error reply that is no redirection reaches the caller as it is */
    char key[64];
    key_on(0, "route:%d", key, sizeof key);
    redisReply *r = rcluster_command(c, 0, key, "LPUSH %s x", key);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "WRONGTYPE", 9) == 0);
    freeReplyObject(r);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_moved_after_a_migration_reaches_no_caller)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    char key[64];
    key_on(0, "moved:%d", key, sizeof key);
    unsigned slot = rcluster_key_slot(key, strlen(key));
    set_ok(c, key, "before");
    ck_assert_int_eq(ts_cluster_migrate_slot(g_cl, slot, 0, 1), 0);
    /* the client's map still says node 0: MOVED, followed without the caller seeing it */
    get_is(c, 0, key, "before");
    set_ok(c, key, "after");
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    ck_assert_uint_ge(st.moved, 1);
    ck_assert_uint_le(st.moved, 2);
    int port;
    rcluster_slot_host(c, slot, &port);
    ck_assert_int_eq(port, ts_cluster_port(g_cl, 1));
    char *t = ts_cluster_cmd(g_cl, 1, "GET %s", key);
    ck_assert_str_eq(t, "after");
    free(t);
    /* the refreshed map routes straight away */
    get_is(c, 0, key, "after");
    rcluster_stats_t st2;
    rcluster_get_stats(c, &st2);
    ck_assert_uint_eq(st2.moved, st.moved);
    rcluster_destroy(c);
}
END_TEST

typedef struct {
    unsigned slot;
    int from, to, rc;
} migration_t;

/* Ends a migration 300 ms from now (a thread: the test meanwhile blocks in a command). */
static void *finish_later(void *arg)
{
    migration_t *m = arg;
    ts_sleep_ms(300);
    m->rc = ts_cluster_migrate_finish(g_cl, m->slot, m->from, m->to);
    return NULL;
}

/* Resumes the paused node 0 after 500 ms, under the cluster's node timeout (no failover). */
static void *resume_later(void *arg)
{
    (void)arg;
    ts_sleep_ms(500);
    ts_cluster_resume(g_cl, 0);
    return NULL;
}

START_TEST(test_ask_and_tryagain_during_a_migration)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    char a[32], b[64], fresh[64];
    key_on(2, "{ask%d}", a, sizeof a); /* b and fresh share the tag of a, so its slot */
    snprintf(b, sizeof b, "%s:b", a);
    snprintf(fresh, sizeof fresh, "%s:new", a);
    unsigned slot = rcluster_key_slot(a, strlen(a));
    ck_assert_uint_eq(rcluster_key_slot(b, strlen(b)), slot);
    set_ok(c, a, "A");
    set_ok(c, b, "B");
    const char *moved[] = {a};
    ck_assert_int_eq(ts_cluster_migrate_begin(g_cl, slot, 2, 0, moved, 1), 0);
    /* a is on node 0 now, b still on node 2: the source answers ASK for a */
    get_is(c, 0, a, "A");
    get_is(c, 0, b, "B");
    set_ok(c, fresh, "N"); /* a key the source lacks goes to the target (ASK) */
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    ck_assert_uint_ge(st.ask, 2);
    ck_assert_uint_eq(st.moved, 0);
    int port;
    rcluster_slot_host(c, slot, &port);
    ck_assert_int_eq(port, ts_cluster_port(g_cl, 2)); /* ASK leaves the map alone */
    /* a multi-key command over a split slot: TRYAGAIN, retried until the budget ends */
    rcluster_t *quick = client(300);
    redisReply *r = rcluster_command(quick, 0, a, "MGET %s %s", a, b);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(rcluster_last_error(quick), "TRYAGAIN") != NULL, "%s",
                  rcluster_last_error(quick));
    rcluster_get_stats(quick, &st);
    ck_assert_uint_ge(st.tryagain, 2);
    rcluster_destroy(quick);
    /* with the default budget the MGET waits: the migration ends meanwhile (another thread),
     * and the MGET then succeeds on the target (through ASK or MOVED) */
    migration_t mig = {.slot = slot, .from = 2, .to = 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, finish_later, &mig), 0);
    rcluster_stats_t before;
    rcluster_get_stats(c, &before);
    r = rcluster_command(c, 0, a, "MGET %s %s %s", a, b, fresh);
    pthread_join(th, NULL);
    ck_assert_int_eq(mig.rc, 0);
    ck_assert_msg(r != NULL, "%s", rcluster_last_error(c));
    ck_assert_int_eq(r->type, REDIS_REPLY_ARRAY);
    ck_assert_str_eq(r->element[0]->str, "A");
    ck_assert_str_eq(r->element[1]->str, "B");
    ck_assert_str_eq(r->element[2]->str, "N");
    rcluster_get_stats(c, &st);
    ck_assert_uint_ge(st.tryagain, before.tryagain + 1);
    freeReplyObject(r);
    /* it may have ended through ASK (keys all moved, slot not yet reassigned): MOVED now */
    get_is(c, 0, a, "A");
    rcluster_get_stats(c, &st);
    ck_assert_uint_ge(st.moved, 1);
    rcluster_slot_host(c, slot, &port);
    ck_assert_int_eq(port, ts_cluster_port(g_cl, 0));
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_scripts_by_sha_survive_noscript)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    rcluster_script_t *s = rcluster_script_create("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    char k[64];
    int m = owner_of("{script}x");
    snprintf(k, sizeof k, "{script}x");
    const char *argv[] = {k, "5"};
    redisReply *r = rcluster_eval(c, s, 0, 1, 2, argv, NULL);
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 5, "%s",
                  r ? (r->str ? r->str : "?") : rcluster_last_error(c));
    freeReplyObject(r);
    ck_assert_ptr_nonnull(rcluster_script_sha(s));
    ck_assert_uint_eq(strlen(rcluster_script_sha(s)), 40);
    /* the node forgets it (as after a restart or on a promoted replica): EVAL, transparently */
    free(ts_cluster_cmd(g_cl, m, "SCRIPT FLUSH"));
    r = rcluster_eval(c, s, 0, 1, 2, argv, NULL);
    ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 10);
    freeReplyObject(r);
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    ck_assert_uint_eq(st.noscript, 1);
    /* loaded again by that EVAL: EVALSHA works */
    r = rcluster_eval(c, s, 0, 1, 2, argv, NULL);
    ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 15);
    freeReplyObject(r);
    rcluster_get_stats(c, &st);
    ck_assert_uint_eq(st.noscript, 1);
    /* a master that never saw it */
    char other[64];
    key_on((m + 1) % MASTERS, "script:%d", other, sizeof other);
    const char *argv2[] = {other, "1"};
    r = rcluster_eval(c, s, 0, 1, 2, argv2, NULL);
    ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1);
    freeReplyObject(r);
    rcluster_get_stats(c, &st);
    ck_assert_uint_eq(st.noscript, 2);
    /* a script error is a reply */
    rcluster_script_t *bad = rcluster_script_create("return redis.call('NOSUCHCOMMAND')");
    r = rcluster_eval(c, bad, 0, 1, 1, argv, NULL);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ERROR);
    freeReplyObject(r);
    rcluster_script_destroy(bad);
    /* keys in two slots never leave the client */
    const char *cross[] = {"{script}x", "{other}y", "1"};
    ck_assert_ptr_null(rcluster_eval(c, s, 0, 2, 3, cross, NULL));
    ck_assert_ptr_nonnull(strstr(rcluster_last_error(c), "different slots"));
    ck_assert_ptr_null(rcluster_eval(c, s, 0, 0, 1, cross, NULL));
    rcluster_script_destroy(s);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_wait_goes_to_the_slots_master)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    char key[64];
    key_on(1, "wait:%d", key, sizeof key);
    unsigned slot = rcluster_key_slot(key, strlen(key));
    /* no write on this client yet: WAIT would answer for nothing */
    ck_assert_int_eq(rcluster_wait(c, slot, 1, 100), -EIO);
    set_ok(c, key, "w");
    ck_assert_int_eq(rcluster_wait(c, slot, 1, 3000), 1);
    /* more replicas than there are: the timeout passes and 1 is the answer */
    long long t0 = ts_now_ms();
    ck_assert_int_eq(rcluster_wait(c, slot, 2, 300), 1);
    ck_assert_int_ge(ts_now_ms() - t0, 250);
    ck_assert_int_eq(rcluster_wait(c, 16384, 1, 100), -EIO);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_crashed_master_is_replaced_and_the_client_follows)
{
    NEED_CLUSTER();
    rcluster_t *c = client(20000);
    char key[64], other[64];
    key_on(1, "failover:%d", key, sizeof key);
    key_on(2, "failover:%d", other, sizeof other);
    unsigned slot = rcluster_key_slot(key, strlen(key));
    set_ok(c, key, "kept");
    ck_assert_int_eq(rcluster_wait(c, slot, 1, 3000), 1); /* on the replica before the crash */
    set_ok(c, other, "o");
    ts_cluster_crash(g_cl, 1);
    /* the open connection to the dead master: the reply is lost, and said so (not resent) */
    redisReply *r = rcluster_command(c, 0, key, "INCR counter:{%s}", key);
    if (r == NULL)
        ck_assert_msg(strstr(rcluster_last_error(c), "may have run") != NULL ||
                          strstr(rcluster_last_error(c), "gave up") != NULL,
                      "%s", rcluster_last_error(c));
    freeReplyObject(r);
    /* safe to resend: retried through CLUSTERDOWN until the replica (node 4) is promoted */
    long long t0 = ts_now_ms();
    get_is(c, RCLUSTER_RESEND, key, "kept");
    int port;
    rcluster_slot_host(c, slot, &port);
    ck_assert_int_eq(port, ts_cluster_port(g_cl, MASTERS + 1));
    get_is(c, RCLUSTER_RESEND, other, "o");
    set_ok(c, key, "new");
    get_is(c, 0, key, "new");
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    ck_assert_uint_ge(st.refreshes, 2);
    fprintf(stderr, "# failover followed in %lld ms (clusterdown %lu, refreshes %lu)\n",
            ts_now_ms() - t0, st.clusterdown, st.refreshes);
    ck_assert_uint_eq(rcluster_master_count(c), MASTERS);
    rcluster_destroy(c);
    ck_assert_int_eq(ts_cluster_wait_ok(g_cl, 10000), 0);
}
END_TEST

/* ---- the asynchronous client ------------------------------------------------------------- */

typedef struct {
    int done;
    int type;
    long long integer;
    char str[64];
    char why[400];
} ares_t;

static void ares_cb(rcluster_async_t *c, redisReply *r, const char *why, void *arg)
{
    (void)c;
    ares_t *a = arg;
    a->done++;
    a->type = r != NULL ? r->type : -1;
    if (r != NULL && r->type == REDIS_REPLY_INTEGER)
        a->integer = r->integer;
    if (r != NULL && r->str != NULL)
        snprintf(a->str, sizeof a->str, "%s", r->str);
    snprintf(a->why, sizeof a->why, "%s", why != NULL ? why : "");
}

/* Runs the loop until every one of n results is in, or timeout_ms. */
static void run_until(struct event_base *base, ares_t *res, int n, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        int done = 0;
        for (int i = 0; i < n; i++)
            done += res[i].done;
        if (done >= n || ts_now_ms() > end)
            break;
        struct timeval tv = {0, 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    for (int i = 0; i < n; i++)
        ck_assert_msg(res[i].done == 1, "result %d: %d callbacks (after %d ms)", i, res[i].done,
                      timeout_ms);
}

static void async_cmd(rcluster_async_t *ac, unsigned flags, ares_t *res, const char *key,
                      const char *cmd, const char *val)
{
    const char *argv[] = {cmd, key, val};
    ck_assert_int_eq(rcluster_async_command_argv(ac, flags, key, strlen(key), val ? 3 : 2, argv,
                                                 NULL, ares_cb, res),
                     0);
}

static void async_get_is(struct event_base *base, rcluster_async_t *ac, unsigned flags,
                         const char *key, const char *want, int timeout_ms)
{
    ares_t res = {0};
    async_cmd(ac, flags, &res, key, "GET", NULL);
    ck_assert_int_eq(res.done, 0); /* never inside the call */
    run_until(base, &res, 1, timeout_ms);
    ck_assert_msg(res.type == REDIS_REPLY_STRING && strcmp(res.str, want) == 0,
                  "GET %s: type %d \"%s\" (%s), want \"%s\"", key, res.type, res.str, res.why,
                  want);
}

/* A GET whose result the caller inspects. */
static void async_run_get(struct event_base *base, rcluster_async_t *ac, unsigned flags,
                          const char *key, ares_t *res, int timeout_ms)
{
    async_cmd(ac, flags, res, key, "GET", NULL);
    run_until(base, res, 1, timeout_ms);
}

START_TEST(test_async_routes_and_follows_moved_ask_and_noscript)
{
    NEED_CLUSTER();
    struct event_base *base = event_base_new();
    char err[300];
    rcluster_async_t *ac =
        rcluster_async_create(base, ts_cluster_seeds(g_cl), NULL, err, sizeof err);
    ck_assert_msg(ac != NULL, "%s", err);
    ck_assert(!rcluster_async_ready(ac));
    /* sent before any map: they wait for it */
    enum { N = 60 };
    ares_t res[N];
    memset(res, 0, sizeof res);
    char keys[N][32];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "async:%d", i);
        async_cmd(ac, 0, &res[i], keys[i], "SET", keys[i]);
    }
    ck_assert_uint_eq(rcluster_async_pending(ac), N);
    run_until(base, res, N, 10000);
    ck_assert(rcluster_async_ready(ac));
    ck_assert_uint_eq(rcluster_async_pending(ac), 0);
    for (int i = 0; i < N; i++) {
        ck_assert_msg(res[i].type == REDIS_REPLY_STATUS, "SET %s: %s", keys[i], res[i].why);
        char *t = ts_cluster_cmd(g_cl, owner_of(keys[i]), "GET %s", keys[i]);
        ck_assert_str_eq(t, keys[i]);
        free(t);
    }
    rcluster_stats_t st;
    rcluster_async_get_stats(ac, &st);
    ck_assert_uint_eq(st.moved, 0);

    /* MOVED: a slot migrated under the client */
    char key[64];
    key_on(0, "amoved:%d", key, sizeof key);
    unsigned slot = rcluster_key_slot(key, strlen(key));
    ares_t one = {0};
    async_cmd(ac, 0, &one, key, "SET", "m");
    run_until(base, &one, 1, 5000);
    ck_assert_int_eq(ts_cluster_migrate_slot(g_cl, slot, 0, 2), 0);
    async_get_is(base, ac, 0, key, "m", 5000);
    rcluster_async_get_stats(ac, &st);
    ck_assert_uint_ge(st.moved, 1);
    int port;
    rcluster_async_slot_host(ac, slot, &port);
    ck_assert_int_eq(port, ts_cluster_port(g_cl, 2));

    /* ASK: a migration held half-way */
    char a[32], b[64];
    key_on(2, "{aask%d}", a, sizeof a);
    snprintf(b, sizeof b, "%s:b", a);
    slot = rcluster_key_slot(a, strlen(a));
    ares_t two[2] = {{0}, {0}};
    async_cmd(ac, 0, &two[0], a, "SET", "A");
    async_cmd(ac, 0, &two[1], b, "SET", "B");
    run_until(base, two, 2, 5000);
    const char *moved[] = {a};
    ck_assert_int_eq(ts_cluster_migrate_begin(g_cl, slot, 2, 0, moved, 1), 0);
    async_get_is(base, ac, 0, a, "A", 5000);
    async_get_is(base, ac, 0, b, "B", 5000);
    rcluster_async_get_stats(ac, &st);
    ck_assert_uint_ge(st.ask, 1);
    ck_assert_int_eq(ts_cluster_migrate_finish(g_cl, slot, 2, 0), 0);
    async_get_is(base, ac, 0, b, "B", 5000);

    /* scripts: SHA learned, NOSCRIPT answered with EVAL */
    rcluster_script_t *s = rcluster_script_create("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    const char *argv[] = {"{ascript}k", "3"};
    ares_t ev = {0};
    ck_assert_int_eq(rcluster_async_eval(ac, s, 0, 1, 2, argv, NULL, ares_cb, &ev), 0);
    run_until(base, &ev, 1, 5000);
    ck_assert_msg(ev.type == REDIS_REPLY_INTEGER && ev.integer == 3, "%d %s", ev.type, ev.why);
    ck_assert_ptr_nonnull(rcluster_script_sha(s));
    free(ts_cluster_cmd(g_cl, owner_of("{ascript}k"), "SCRIPT FLUSH"));
    memset(&ev, 0, sizeof ev);
    ck_assert_int_eq(rcluster_async_eval(ac, s, 0, 1, 2, argv, NULL, ares_cb, &ev), 0);
    run_until(base, &ev, 1, 5000);
    ck_assert_msg(ev.type == REDIS_REPLY_INTEGER && ev.integer == 6, "%d %s", ev.type, ev.why);
    rcluster_async_get_stats(ac, &st);
    ck_assert_uint_eq(st.noscript, 1);
    const char *cross[] = {"{x}1", "{y}2"};
    ck_assert_int_eq(rcluster_async_eval(ac, s, 0, 2, 2, cross, NULL, ares_cb, &ev), -EINVAL);

    /* destroyed with a command in flight: its callback runs, with NULL */
    ares_t last = {0};
    async_cmd(ac, 0, &last, key, "GET", NULL);
    rcluster_async_destroy(ac);
    ck_assert_int_eq(last.done, 1);
    ck_assert_int_eq(last.type, -1);
    ck_assert_ptr_nonnull(strstr(last.why, "destroyed"));
    rcluster_script_destroy(s);
    event_base_free(base);
}
END_TEST

START_TEST(test_async_follows_a_failover)
{
    NEED_CLUSTER();
    /* node 2 is a master with its replica (node 5); node 1 died in the case before */
    char key[64], other[64];
    key_on(2, "afail:%d", key, sizeof key);
    key_on(0, "afail:%d", other, sizeof other);
    unsigned slot = rcluster_key_slot(key, strlen(key));
    struct event_base *base = event_base_new();
    char err[300];
    rcluster_async_opts_t o = {.retry_budget_ms = 20000, .quiet = true};
    rcluster_async_t *ac = rcluster_async_create(base, ts_cluster_seeds(g_cl), &o, err, sizeof err);
    ck_assert_msg(ac != NULL, "%s", err);
    ares_t w[2] = {{0}, {0}};
    async_cmd(ac, 0, &w[0], key, "SET", "kept");
    ck_assert_int_eq(rcluster_async_wait(ac, slot, 1, 1000, ares_cb, &w[1]), 0);
    run_until(base, w, 2, 5000);
    ck_assert_msg(w[0].type == REDIS_REPLY_STATUS, "%s", w[0].why);
    /* on the replica before the crash */
    ck_assert_msg(w[1].type == REDIS_REPLY_INTEGER && w[1].integer == 1, "WAIT: %d %s", w[1].type,
                  w[1].why);
    /* WAIT where nothing was written, or longer than a request may last: refused */
    memset(w, 0, sizeof w);
    unsigned oslot = rcluster_key_slot(other, strlen(other));
    ck_assert_int_eq(rcluster_async_wait(ac, oslot, 1, 100, ares_cb, &w[0]), 0);
    run_until(base, w, 1, 5000);
    ck_assert_msg(w[0].type == -1 && strstr(w[0].why, "carried a write"), "%s", w[0].why);
    ck_assert_int_eq(rcluster_async_wait(ac, slot, 1, 2000, ares_cb, &w[1]), -EINVAL);
    ts_cluster_crash(g_cl, 2);
    long long t0 = ts_now_ms();
    async_get_is(base, ac, RCLUSTER_RESEND, key, "kept", 25000);
    int port;
    rcluster_async_slot_host(ac, slot, &port);
    ck_assert_int_eq(port, ts_cluster_port(g_cl, MASTERS + 2));
    ares_t after = {0};
    async_cmd(ac, 0, &after, key, "SET", "after");
    run_until(base, &after, 1, 5000);
    ck_assert_msg(after.type == REDIS_REPLY_STATUS, "%s", after.why);
    rcluster_stats_t st;
    rcluster_async_get_stats(ac, &st);
    fprintf(stderr, "# async: failover followed in %lld ms (refreshes %lu, resent %lu)\n",
            ts_now_ms() - t0, st.refreshes, st.resent);
    rcluster_async_destroy(ac);
    event_base_free(base);
}
END_TEST

START_TEST(test_one_seed_is_enough)
{
    NEED_CLUSTER();
    char seed[32], err[600];
    snprintf(seed, sizeof seed, "127.0.0.1:%d", ts_cluster_port(g_cl, MASTERS)); /* a replica */
    rcluster_t *c = rcluster_create(seed, NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_uint_eq(rcluster_master_count(c), MASTERS);
    for (int m = 0; m < MASTERS; m++) {
        char key[64];
        key_on(m, "seed:%d", key, sizeof key);
        set_ok(c, key, "s");
        get_is(c, 0, key, "s");
    }
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    ck_assert_uint_eq(st.moved, 0);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_hung_master_times_out_and_is_used_again)
{
    NEED_CLUSTER();
    char key[64];
    key_on(0, "hung:%d", key, sizeof key);
    rcluster_opts_t o = {.command_timeout_ms = 200, .retry_budget_ms = 3000};
    char err[600];
    rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), &o, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    set_ok(c, key, "h");
    ts_cluster_pause(g_cl, 0);
    long long t0 = ts_now_ms();
    redisReply *r = rcluster_command(c, 0, key, "GET %s", key);
    long long took = ts_now_ms() - t0;
    ts_cluster_resume(g_cl, 0);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(rcluster_last_error(c), "may have run") != NULL, "%s",
                  rcluster_last_error(c));
    ck_assert_int_ge(took, 150);
    ck_assert_int_lt(took, 900);
    get_is(c, 0, key, "h"); /* a new connection, the same master */
    /* resent while the node is hung: answered once it is back */
    ts_cluster_pause(g_cl, 0);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, resume_later, NULL), 0);
    get_is(c, RCLUSTER_RESEND, key, "h");
    pthread_join(th, NULL);
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    ck_assert_uint_ge(st.resent, 1);
    rcluster_destroy(c);

    /* the same with the asynchronous client (rconn's request timeout) */
    struct event_base *base = event_base_new();
    rcluster_async_opts_t ao = {.request_timeout_ms = 200, .retry_budget_ms = 3000, .quiet = true};
    rcluster_async_t *ac =
        rcluster_async_create(base, ts_cluster_seeds(g_cl), &ao, err, sizeof err);
    ck_assert_msg(ac != NULL, "%s", err);
    async_get_is(base, ac, 0, key, "h", 5000);
    ts_cluster_pause(g_cl, 0);
    ares_t res = {0};
    async_run_get(base, ac, 0, key, &res, 2000);
    ts_cluster_resume(g_cl, 0);
    ck_assert_msg(res.type == -1 && strstr(res.why, "may have run"), "%d %s", res.type, res.why);
    async_get_is(base, ac, 0, key, "h", 5000);
    ts_cluster_pause(g_cl, 0);
    ck_assert_int_eq(pthread_create(&th, NULL, resume_later, NULL), 0);
    async_get_is(base, ac, RCLUSTER_RESEND, key, "h", 5000);
    pthread_join(th, NULL);
    rcluster_async_destroy(ac);
    event_base_free(base);
}
END_TEST

/* ---- refusals at start ---------------------------------------------------------------------- */

START_TEST(test_a_plain_redis_or_nobody_is_refused)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *plain = ts_redis_start();
    ck_assert_ptr_nonnull(plain);
    char err[600] = "";
    ck_assert_int_eq(rcluster_check(ts_redis_addr(plain), 500, err, sizeof err), -ENOTSUP);
    ck_assert_msg(strstr(err, "cluster_enabled:0") && strstr(err, ts_redis_addr(plain)), "%s", err);
    ck_assert_ptr_null(rcluster_create(ts_redis_addr(plain), NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "not a cluster node") != NULL, "%s", err);
    char dead[64];
    snprintf(dead, sizeof dead, "127.0.0.1:%d", ts_free_port());
    ck_assert_int_eq(rcluster_check(dead, 300, err, sizeof err), -ENOENT);
    ck_assert_msg(strstr(err, "no node of the cluster list answered") != NULL, "%s", err);
    ck_assert_ptr_null(rcluster_create(dead, NULL, err, sizeof err));
    ck_assert_msg(strstr(err, "unreachable") != NULL, "%s", err);
    ts_redis_stop(plain);
}
END_TEST

START_TEST(test_uncovered_slots_are_refused)
{
    signal(SIGPIPE, SIG_IGN);
    ts_cluster_t *one = ts_cluster_start(1, 0);
    ck_assert_ptr_nonnull(one);
    char err[600] = "";
    ck_assert_int_eq(rcluster_check(ts_cluster_seeds(one), 500, err, sizeof err), 0);
    free(ts_cluster_cmd(one, 0, "CLUSTER DELSLOTSRANGE 100 100 16000 16383"));
    ck_assert_int_eq(rcluster_check(ts_cluster_seeds(one), 500, err, sizeof err), -ERANGE);
    ck_assert_msg(strstr(err, "not served") && strstr(err, " 100 ") && strstr(err, "16000-16383") &&
                      strstr(err, "(385 in all)"),
                  "%s", err);
    ck_assert_ptr_null(rcluster_create(ts_cluster_seeds(one), NULL, err, sizeof err));
    /* a cluster node and a plain one in one list: the plain one is named */
    ts_redis_t *plain = ts_redis_start();
    ck_assert_ptr_nonnull(plain);
    char list[128];
    snprintf(list, sizeof list, "%s,%s", ts_cluster_seeds(one), ts_redis_addr(plain));
    ck_assert_int_eq(rcluster_check(list, 500, err, sizeof err), -ENOTSUP);
    ck_assert_msg(strstr(err, ts_redis_addr(plain)) != NULL, "%s", err);
    ts_redis_stop(plain);
    ts_cluster_stop(one);
}
END_TEST

int main(void)
{
    if (ts_cluster_skip("rcluster"))
        return 0;
    Suite *s = suite_create("rcluster");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_key_slots_agree_with_cluster_keyslot);
    tcase_add_test(tc, test_commands_reach_the_slots_master);
    tcase_add_test(tc, test_moved_after_a_migration_reaches_no_caller);
    tcase_add_test(tc, test_ask_and_tryagain_during_a_migration);
    tcase_add_test(tc, test_scripts_by_sha_survive_noscript);
    tcase_add_test(tc, test_wait_goes_to_the_slots_master);
    tcase_add_test(tc, test_async_routes_and_follows_moved_ask_and_noscript);
    tcase_add_test(tc, test_one_seed_is_enough);
    tcase_add_test(tc, test_a_hung_master_times_out_and_is_used_again);
    tcase_add_test(tc, test_a_crashed_master_is_replaced_and_the_client_follows);
    tcase_add_test(tc, test_async_follows_a_failover);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_a_plain_redis_or_nobody_is_refused);
    tcase_add_test(tc, test_uncovered_slots_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
