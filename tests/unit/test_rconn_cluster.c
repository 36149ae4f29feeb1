/*
 * rconn_cluster: rconn's cluster mode (common/rconn.h opts.cluster, common/rconn_cluster.h;
 * docs/deploy.md "Redis Cluster: the client") against a real cluster on loopback
 * (tests/support/tcluster.h): 3 masters, one replica each. The cases run in order on that one
 * cluster; the last ones SIGKILL masters. What the owners of rconns rely on is checked: on_state,
 * commands and formatted commands routed by their key, keyless ones (INFO, PUBLISH), scripts
 * (and a script whose keys are in two slots refused), WAIT on the master that took the write,
 * pending callbacks on destroy, a subscriber that hears a PUBLISH sent to another node and moves
 * to another node when its own dies, a master failed over under a connection.
 *
 * A redis-server without cluster mode makes the whole program a visible SKIP (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "rcluster.h"
#include "rconn.h"
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

static int owner_of(const char *key)
{
    unsigned slot = rcluster_key_slot(key, strlen(key));
    for (int i = 0; i < ts_cluster_size(g_cl); i++) {
        int o = ts_cluster_slot_owner(g_cl, i, slot);
        if (o >= 0)
            return o;
    }
    return -1;
}

static void key_on(int node, const char *fmt, char *key, size_t len)
{
    for (int i = 0; i < 100000; i++) {
        snprintf(key, len, fmt, i);
        if (owner_of(key) == node)
            return;
    }
    ck_abort_msg("no key found on node %d", node);
}

/* What a reply callback saw. */
typedef struct {
    int done;
    int type; /* -1: NULL */
    long long integer;
    char str[256];
} res_t;

static void res_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    res_t *x = arg;
    x->done++;
    x->type = r != NULL ? r->type : -1;
    if (r != NULL && r->type == REDIS_REPLY_INTEGER)
        x->integer = r->integer;
    if (r != NULL && r->str != NULL)
        snprintf(x->str, sizeof x->str, "%s", r->str);
}

typedef struct {
    int ups, downs;
    bool up;
} state_t;

static void state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    state_t *s = arg;
    s->up = connected;
    if (connected)
        s->ups++;
    else
        s->downs++;
}

typedef struct {
    int n;
    char last[64];
} msgs_t;

static void msg_cb(rconn_t *rc, const char *channel, const char *data, size_t len, void *arg)
{
    (void)rc;
    (void)channel;
    msgs_t *m = arg;
    m->n++;
    snprintf(m->last, sizeof m->last, "%.*s", (int)len, data);
}

/* Runs the loop until *count >= want or ms pass; whether it got there. */
static bool spin(struct event_base *base, const int *count, int want, int ms)
{
    long long end = ts_now_ms() + ms;
    while (*count < want && ts_now_ms() < end) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    return *count >= want;
}

static rconn_t *cluster_conn(struct event_base *base, state_t *st, int request_ms)
{
    rconn_opts_t o = {.cluster = ts_cluster_seeds(g_cl),
                      .request_timeout_ms = request_ms,
                      .name = "test",
                      .on_state = state_cb,
                      .arg = st,
                      .quiet = true};
    rconn_t *rc = rconn_create(base, &o);
    ck_assert_ptr_nonnull(rc);
    ck_assert(!rconn_connected(rc));
    ck_assert_msg(spin(base, &st->ups, 1, 10000), "never connected: %s", rconn_last_error(rc));
    ck_assert(rconn_connected(rc));
    return rc;
}

START_TEST(test_bad_options_are_refused)
{
    struct event_base *base = event_base_new();
    rconn_opts_t o = {.cluster = "127.0.0.1:1,localhost:2"};
    errno = 0;
    ck_assert_ptr_null(rconn_create(base, &o));
    ck_assert_int_eq(errno, EINVAL);
    o.cluster = "";
    ck_assert_ptr_null(rconn_create(base, &o));
    o.cluster = "127.0.0.1:7000";
    o.sentinels = "127.0.0.1:26379";
    o.master_name = "m";
    ck_assert_ptr_null(rconn_create(base, &o));
    event_base_free(base);
}
END_TEST

START_TEST(test_commands_scripts_and_wait)
{
    NEED_CLUSTER();
    struct event_base *base = event_base_new();
    state_t st = {0};
    rconn_t *rc = cluster_conn(base, &st, 2000);
    /* a key on every master, by argv and by format */
    for (int m = 0; m < MASTERS; m++) {
        char key[64];
        key_on(m, "rcm:%d", key, sizeof key);
        const char *argv[] = {"SET", key, "v"};
        res_t r = {0};
        ck_assert_int_eq(rconn_command_argv(rc, res_cb, &r, 3, argv, NULL), 0);
        ck_assert(spin(base, &r.done, 1, 5000));
        ck_assert_msg(r.type == REDIS_REPLY_STATUS, "SET %s: %d %s", key, r.type, r.str);
        char *t = ts_cluster_cmd(g_cl, m, "GET %s", key);
        ck_assert_str_eq(t, "v");
        free(t);
        res_t g = {0};
        ck_assert_int_eq(rconn_command(rc, res_cb, &g, "GET %s", key), 0);
        ck_assert(spin(base, &g.done, 1, 5000));
        ck_assert_msg(g.type == REDIS_REPLY_STRING && strcmp(g.str, "v") == 0, "GET %d %s", g.type,
                      g.str);
        /* WAIT goes to the master that took the write: its replica acknowledged it */
        res_t w = {0};
        ck_assert_int_eq(rconn_command(rc, res_cb, &w, "WAIT 1 500"), 0);
        ck_assert(spin(base, &w.done, 1, 5000));
        ck_assert_msg(w.type == REDIS_REPLY_INTEGER && w.integer == 1, "WAIT: %d %lld %s", w.type,
                      w.integer, w.str);
    }
    /* keyless: INFO answers, PUBLISH reaches a subscriber elsewhere (checked below) */
    res_t info = {0};
    ck_assert_int_eq(rconn_command(rc, res_cb, &info, "INFO"), 0);
    ck_assert(spin(base, &info.done, 1, 5000));
    ck_assert_int_eq(info.type, REDIS_REPLY_STRING);
    /* scripts: keys of one slot, NOSCRIPT after a flush, two slots refused */
    rconn_script_t *s = rconn_script_create("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    const char *ev[] = {"{rcs}:n", "{rcs}:m", "5"};
    res_t e = {0};
    ck_assert_int_eq(rconn_eval(rc, s, res_cb, &e, 2, 3, ev, NULL), 0);
    ck_assert(spin(base, &e.done, 1, 5000));
    ck_assert_msg(e.type == REDIS_REPLY_INTEGER && e.integer == 5, "%d %s", e.type, e.str);
    free(ts_cluster_cmd(g_cl, owner_of("{rcs}:n"), "SCRIPT FLUSH"));
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(rconn_eval(rc, s, res_cb, &e, 1, 2, (const char *[]){"{rcs}:n", "2"}, NULL),
                     0);
    ck_assert(spin(base, &e.done, 1, 5000));
    ck_assert_msg(e.type == REDIS_REPLY_INTEGER && e.integer == 7, "%d %s", e.type, e.str);
    const char *cross[] = {"{a}x", "{b}y", "1"};
    ck_assert_int_eq(rconn_eval(rc, s, res_cb, &e, 2, 3, cross, NULL), -EINVAL);
    rconn_script_destroy(s); /* the connection's calls keep it while they run */
    /* destroy with commands in flight: each callback once, with NULL */
    res_t last[3] = {{0}, {0}, {0}};
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(rconn_command(rc, res_cb, &last[i], "GET rcm:%d", i), 0);
    ck_assert_uint_eq(rconn_pending(rc), 3);
    rconn_destroy(rc);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(last[i].done, 1);
        ck_assert_int_eq(last[i].type, -1);
    }
    event_base_free(base);
}
END_TEST

START_TEST(test_subscriber_moves_and_commands_follow_a_failover)
{
    NEED_CLUSTER();
    struct event_base *base = event_base_new();
    state_t st = {0}, sst = {0};
    rconn_t *rc = cluster_conn(base, &st, 1000);
    rconn_opts_t so = {.cluster = ts_cluster_seeds(g_cl),
                       .name = "test-sub",
                       .on_state = state_cb,
                       .arg = &sst,
                       .quiet = true};
    rconn_t *sub = rconn_create(base, &so);
    ck_assert_ptr_nonnull(sub);
    msgs_t m = {0};
    ck_assert_int_eq(rconn_subscribe(sub, "rc:events", msg_cb, &m), 0);
    ck_assert(spin(base, &sst.ups, 1, 10000));
    int sub_node = ts_cluster_index(g_cl, rconn_port(sub));
    ck_assert_int_ge(sub_node, 0);
    /* a PUBLISH sent to any other node reaches it; and ours, through the cluster connection */
    int other = (sub_node + 1) % MASTERS;
    free(ts_cluster_cmd(g_cl, other, "PUBLISH rc:events one"));
    ck_assert_msg(spin(base, &m.n, 1, 5000), "no message from node %d", other);
    ck_assert_str_eq(m.last, "one");
    res_t p = {0};
    ck_assert_int_eq(rconn_command(rc, res_cb, &p, "PUBLISH rc:events two"), 0);
    ck_assert(spin(base, &m.n, 2, 5000));
    ck_assert_str_eq(m.last, "two");

    /* the master of a key dies: the connection stays up, its replica answers */
    char key[64];
    int victim = sub_node < MASTERS ? sub_node : 0;
    key_on(victim, "rcf:%d", key, sizeof key);
    res_t w = {0};
    ck_assert_int_eq(rconn_command(rc, res_cb, &w, "SET %s kept", key), 0);
    ck_assert(spin(base, &w.done, 1, 5000));
    memset(&w, 0, sizeof w);
    ck_assert_int_eq(rconn_command(rc, res_cb, &w, "WAIT 1 500"), 0);
    ck_assert(spin(base, &w.done, 1, 5000));
    ck_assert_msg(w.type == REDIS_REPLY_INTEGER && w.integer == 1, "WAIT %d %s", w.type, w.str);
    ts_cluster_crash(g_cl, victim);
    long long t0 = ts_now_ms();
    res_t g = {0};
    ck_assert_int_eq(rconn_command(rc, res_cb, &g, "GET %s", key), 0); /* a read: resent */
    ck_assert(spin(base, &g.done, 1, 15000));
    ck_assert_msg(g.type == REDIS_REPLY_STRING && strcmp(g.str, "kept") == 0, "GET %d %s", g.type,
                  g.str);
    fprintf(stderr,
            "# rconn cluster mode: a read answered %lld ms after its master's crash (%d "
            "disconnects reported while slots were unserved)\n",
            ts_now_ms() - t0, st.downs);
    ck_assert_msg(spin(base, &st.ups, st.downs + 1, 10000), "not connected again");
    /* its master replaced: told as a reconnect, as a Sentinel switch is */
    res_t again = {0};
    ck_assert_int_eq(rconn_command(rc, res_cb, &again, "SET %s again", key), 0);
    ck_assert(spin(base, &again.done, 1, 5000));
    ck_assert_msg(spin(base, &st.downs, 1, 3000), "the failover was not told as a reconnect");
    ck_assert(spin(base, &st.ups, st.downs + 1, 3000));
    ck_assert_uint_ge(rconn_connect_count(rc), 2);
    /* the subscriber lost its node: it moved, said so, and hears again */
    ck_assert_msg(spin(base, &sst.ups, 2, 15000), "the subscriber did not come back");
    ck_assert_int_ge(sst.downs, 1);
    ck_assert_int_ne(ts_cluster_index(g_cl, rconn_port(sub)), victim);
    int before = m.n;
    memset(&p, 0, sizeof p);
    ck_assert_int_eq(rconn_command(rc, res_cb, &p, "PUBLISH rc:events three"), 0);
    ck_assert(spin(base, &m.n, before + 1, 5000));
    ck_assert_str_eq(m.last, "three");
    rconn_destroy(sub);
    rconn_destroy(rc);
    event_base_free(base);
}
END_TEST

/* A cluster that stops serving slots: the connection says so (on_state false, commands refused),
 * and is connected again once they are served, without any command in between. */
START_TEST(test_unserved_slots_disconnect_until_served)
{
    ts_cluster_t *one = ts_cluster_start(1, 0);
    ck_assert_msg(one != NULL, "could not start a one-node cluster");
    struct event_base *base = event_base_new();
    state_t st = {0};
    rconn_opts_t o = {.cluster = ts_cluster_seeds(one),
                      .name = "test-gaps",
                      .on_state = state_cb,
                      .arg = &st,
                      .quiet = true};
    rconn_t *rc = rconn_create(base, &o);
    ck_assert_ptr_nonnull(rc);
    ck_assert(spin(base, &st.ups, 1, 10000));
    free(ts_cluster_cmd(one, 0, "CLUSTER DELSLOTSRANGE 100 199"));
    /* commands to any slot meet CLUSTERDOWN, the map is asked again and has a gap */
    res_t r = {0};
    for (int i = 0; i < 50 && st.downs == 0; i++) {
        memset(&r, 0, sizeof r);
        if (rconn_command(rc, res_cb, &r, "GET gaps:%d", i) == 0)
            (void)spin(base, &r.done, 1, 5000);
        (void)spin(base, &st.downs, 1, 200);
    }
    ck_assert_msg(st.downs == 1, "no disconnect while slots 100-199 are unserved");
    ck_assert(!rconn_connected(rc));
    ck_assert_int_eq(rconn_command(rc, res_cb, &r, "GET gaps"), -ENOTCONN);
    ck_assert_msg(strstr(rconn_last_error(rc), "unserved") != NULL, "%s", rconn_last_error(rc));
    free(ts_cluster_cmd(one, 0, "CLUSTER ADDSLOTSRANGE 100 199"));
    ck_assert_msg(spin(base, &st.ups, 2, 10000), "not connected again once the slots are served");
    ck_assert(rconn_connected(rc));
    rconn_destroy(rc);
    event_base_free(base);
    ts_cluster_stop(one);
}
END_TEST

int main(void)
{
    if (ts_cluster_skip("rconn_cluster"))
        return 0;
    Suite *s = suite_create("rconn_cluster");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, test_bad_options_are_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("gaps");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_unserved_slots_disconnect_until_served);
    suite_add_tcase(s, tc);
    tc = tcase_create("cluster");
    tcase_set_timeout(tc, 90);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_commands_scripts_and_wait);
    tcase_add_test(tc, test_subscriber_moves_and_commands_follow_a_failover);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
