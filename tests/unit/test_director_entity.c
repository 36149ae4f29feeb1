/*
 * The director's own keys by entity (docs/tournaments.md "Tournaments by entity", issue 34):
 * the director in process (tour_director.h) with keytag_set_tour_entity(true) on a real Redis
 * Cluster of 3 masters with a replica each (tests/support/tcluster.h). A tournament's keys are
 * {t:<id>}: two tournaments created as croupier-ctl tour create does by entity (the meta and
 * log in {t:<id>}, idempotent, then the index: tour_director.h TOUR_CREATE_META_LUA), the
 * director claims the two live ones in two slots there (owner, fence, meta; the claim
 * script no longer names the live set, in the money slot), renews them past their TTL without a
 * new claim, lets the one that is over leave the live set (a second step), and hands the
 * tournaments back at a drain (the owner keys gone). Nothing is written under the money slot's
 * tournament layout. The request streams are read one XREAD per tournament (exercised here with
 * empty streams; what is read is not observed, since no request is applied yet).
 *
 * The money steps (registration, payouts) are not wired yet: croupier-director refuses
 * --money-by-entity, and this test sends no request.
 *
 * A redis-server without cluster mode makes the whole program a visible SKIP (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "keytag.h"
#include "log.h"
#include "rcluster.h"
#include "support.h"
#include "tcluster.h"
#include "tour_director.h"

#define SNG3                                                                                       \
    "{\"format\":\"sng\",\"seats_per_table\":3,\"starting_stack\":1500,\"buy_in\":100,"            \
    "\"fee\":10,\"min_entrants\":3,\"max_entrants\":3,\"levels\":[{\"small_blind\":10,"            \
    "\"big_blind\":20,\"duration_ms\":60000}]}"

static ts_cluster_t *g_cl;
static rcluster_t *g_c;

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_ERROR + 1);
    evthread_use_pthreads();
    keytag_set_cluster(true);
    keytag_set_tour_entity(true);
    g_cl = ts_cluster_start(3, 1);
    if (g_cl != NULL) {
        char err[600] = "";
        g_c = rcluster_create(ts_cluster_seeds(g_cl), NULL, err, sizeof err);
    }
}

static void teardown(void)
{
    rcluster_destroy(g_c);
    ts_cluster_stop(g_cl);
    g_cl = NULL;
}

static redisReply *cmd(const char *key, const char *fmt, const char *a, const char *b)
{
    redisReply *r = rcluster_command(g_c, 0, key, fmt, key, a, b);
    ck_assert_msg(r != NULL && r->type != REDIS_REPLY_ERROR, "%s: %s", fmt,
                  r ? r->str : rcluster_last_error(g_c));
    return r;
}

/* GET key as a number (-1: absent). */
static long long get_num(const char *key)
{
    redisReply *r = cmd(key, "GET %s", NULL, NULL);
    long long v = r->type == REDIS_REPLY_STRING ? atoll(r->str) : -1;
    freeReplyObject(r);
    return v;
}

static bool is_member(const char *key, const char *m)
{
    redisReply *r = cmd(key, "SISMEMBER %s %s", m, NULL);
    bool v = r->integer == 1;
    freeReplyObject(r);
    return v;
}

/* Creates tournament id by entity as croupier-ctl tour create does (tour_director.h: the meta
 * and log in {t:<id>}, then the index), the meta step twice (the second keeps the first). */
static void create(const char *id)
{
    char m[64], l[64], all[96], live[96];
    snprintf(m, sizeof m, "{t:%s}:meta", id);
    snprintf(l, sizeof l, "{t:%s}:log", id);
    snprintf(all, sizeof all, "%s:all", keytag_tours());
    snprintf(live, sizeof live, "%s:live", keytag_tours());
    rcluster_script_t *ms = rcluster_script_create(TOUR_CREATE_META_LUA);
    rcluster_script_t *is = rcluster_script_create(TOUR_CREATE_INDEX_LUA);
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {m, l, id, i ? "again" : "", SNG3, "sng", "1", "0"};
        redisReply *r = rcluster_eval(g_c, ms, 0, 2, 8, argv, NULL);
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_INTEGER, "meta: %s",
                      r ? r->str : rcluster_last_error(g_c));
        ck_assert_int_eq(r->integer, i == 0);
        freeReplyObject(r);
    }
    const char *argv[] = {all, live, "1", id};
    redisReply *r = rcluster_eval(g_c, is, 0, 2, 4, argv, NULL);
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_INTEGER, "index");
    freeReplyObject(r);
    rcluster_script_destroy(ms);
    rcluster_script_destroy(is);
    char want[48];
    snprintf(want, sizeof want, "Tournament %s", id);
    r = cmd(m, "HGET %s name", NULL, NULL);
    ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
    ck_assert_str_eq(r->str, want); /* the first write, kept */
    freeReplyObject(r);
}

static void meta(const char *id, const char *status)
{
    char k[64];
    snprintf(k, sizeof k, "{t:%s}:meta", id);
    redisReply *r =
        rcluster_command(g_c, 0, k,
                         "HSET %s id %s name T structure %s format sng status %s "
                         "created_ms 1 start_at_ms 0 started_ms 0 ended_ms 0 clock_ms 0 "
                         "level 0 entries 0 players 0 pool 0 cursor 0-0",
                         k, id, SNG3, status);
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_INTEGER, "meta");
    freeReplyObject(r);
    r = cmd(keytag_tours(), "SADD %s:live %s", id, NULL);
    freeReplyObject(r);
}

static bool g_released;
static void released_cb(void *arg)
{
    (void)arg;
    g_released = true;
}

/* Runs base for ms. */
static void run_ms(struct event_base *base, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

START_TEST(test_the_director_claims_renews_reads_and_releases_a_tournament_in_its_own_slot)
{
    ck_assert_msg(g_c != NULL, "could not start a 3+3 Redis Cluster");
    char live_id[24], over_id[24], owner[64], epoch[64], in[64], old_owner[96], live[96];
    snprintf(live_id, sizeof live_id, "%d1", (int)getpid());
    snprintf(over_id, sizeof over_id, "%d2", (int)getpid());
    snprintf(owner, sizeof owner, "{t:%s}:owner", live_id);
    snprintf(epoch, sizeof epoch, "{t:%s}:epoch", live_id);
    snprintf(in, sizeof in, "{t:%s}:in", live_id);
    snprintf(old_owner, sizeof old_owner, "{croupier:money}:tour:%s:owner", live_id);
    snprintf(live, sizeof live, "%s:live", keytag_tours());
    create(live_id);
    meta(over_id, "finished");
    /* a second live one in another slot: one XREAD over both would be refused (CROSSSLOT) */
    char two_id[24], two_in[64];
    for (int k = 3;; k++) {
        snprintf(two_id, sizeof two_id, "%d%d", (int)getpid(), k);
        snprintf(two_in, sizeof two_in, "{t:%s}:in", two_id);
        if (rcluster_key_slot(two_in, strlen(two_in)) != rcluster_key_slot(in, strlen(in)))
            break;
    }
    create(two_id);

    struct event_base *base = event_base_new();
    tour_director_config_t cfg = {.base = base,
                                  .redis_cluster = ts_cluster_seeds(g_cl),
                                  .director_id = "d-entity",
                                  .claim_ttl_ms = 600,
                                  .scan_ms = 100};
    tour_director_t *d = NULL;
    ck_assert_int_eq(tour_director_create(&cfg, &d), 0);
    for (int i = 0; i < 100 && (tour_director_owned(d) < 2 || is_member(live, over_id)); i++)
        run_ms(base, 100);
    ck_assert_int_eq(tour_director_owned(d), 2);
    ck_assert(!is_member(live, over_id)); /* over: left the live set, a step of its own */
    ck_assert(is_member(live, live_id));
    ck_assert_int_eq(get_num(epoch), 1);
    ck_assert_int_eq(get_num(old_owner), -1); /* nothing in the money slot's layout */
    redisReply *r = cmd(owner, "GET %s", NULL, NULL);
    ck_assert_int_eq(r->type, REDIS_REPLY_STRING);
    freeReplyObject(r);

    run_ms(base, 1500); /* past the TTL twice: renewed, never claimed again */
    ck_assert_int_eq(tour_director_owned(d), 2);
    ck_assert_int_eq(get_num(epoch), 1);
    r = cmd(owner, "PTTL %s", NULL, NULL);
    ck_assert_int_gt(r->integer, 0);
    freeReplyObject(r);
    /* Its stream is read on its own (an empty read is no error, and reads go on). */
    r = cmd(in, "XADD %s MAXLEN 0 * %s %s", "noop", "1");
    freeReplyObject(r);
    r = cmd(two_in, "XADD %s MAXLEN 0 * %s %s", "noop", "1");
    freeReplyObject(r);
    run_ms(base, 300);
    ck_assert_int_eq(tour_director_owned(d), 2);

    tour_director_release_all(d, released_cb, NULL);
    for (int i = 0; i < 50 && !g_released; i++)
        run_ms(base, 100);
    ck_assert(g_released);
    ck_assert_int_eq(tour_director_owned(d), 0);
    r = cmd(owner, "EXISTS %s", NULL, NULL);
    ck_assert_int_eq(r->integer, 0);
    freeReplyObject(r);
    tour_director_destroy(d);
    event_base_free(base);
}
END_TEST

int main(void)
{
    if (ts_cluster_skip("director_entity"))
        return 0;
    Suite *s = suite_create("director_entity");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc,
                   test_the_director_claims_renews_reads_and_releases_a_tournament_in_its_own_slot);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
