/*
 * durable: money and lease epochs reach the replicas before they count (WAIT), against real
 * redis-server processes on loopback (a master and replicas, and a sentinel for the failover):
 * docs/deploy.md "Failover and durability".
 */
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../integration/money_gen.h"
#include "clock.h"
#include "jobs.h"
#include "lease.h"
#include "money_writer.h"
#include "rconn.h"
#include "registry.h"
#include "support.h"
#include "testenv.h"
#include "xmalloc.h"

static ts_redis_t *g_master, *g_replica;

/*
 * Writes a key on the master and WAITs for n replicas on the same connection: after a diskless
 * first sync the master streams to a replica only from its first ACK (up to a second later), so
 * a fresh replica is not caught up before this returns 0.
 */
static int replicas_streaming(ts_redis_t *m, int n)
{
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", ts_redis_port(m), tv);
    if (c == NULL || c->err) {
        redisFree(c);
        return -EIO;
    }
    redisSetTimeout(c, tv);
    freeReplyObject(redisCommand(c, "SET durable:probe 1"));
    redisReply *r = redisCommand(c, "WAIT %d 5000", n);
    int rc = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= n ? 0 : -ETIMEDOUT;
    freeReplyObject(r);
    redisFree(c);
    return rc;
}

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    g_master = ts_redis_start();
    ck_assert_msg(g_master != NULL, "could not start redis-server");
    g_replica = ts_redis_start_replica(ts_redis_port(g_master));
    ck_assert_msg(g_replica != NULL, "could not start a replica redis-server");
    ck_assert_msg(ts_redis_wait_synced(g_replica, 10000) == 0, "the replica never synced");
    char key[128];
    money_key_epoch("game", 1, key, sizeof key);
    free(ts_redis_cmd(g_master, "SET %s 3", key));
    for (int p = 0; p < MONEY_GEN_PLAYERS; p++) {
        money_key_wallet(money_gen_names[p], key, sizeof key);
        free(ts_redis_cmd(g_master, "SET %s %lld", key, MONEY_GEN_START));
    }
    ck_assert_msg(replicas_streaming(g_master, 1) == 0, "the replica never acknowledged");
}

static void teardown(void)
{
    ts_redis_resume(g_replica);
    ts_redis_stop(g_replica);
    ts_redis_stop(g_master);
}

typedef struct {
    _Atomic long ok, replayed, failed;
} tally_t;

static void tally_cb(money_result_t *r, void *arg)
{
    tally_t *t = arg;
    atomic_fetch_add(r->status == MONEY_OK ? &t->ok : &t->failed, 1);
    if (r->replayed)
        atomic_fetch_add(&t->replayed, 1);
    free(r);
}

static money_writer_t *durable_writer(metrics_registry_t *reg, int min_replicas)
{
    money_writer_config_t cfg = {.redis_host = "127.0.0.1",
                                 .redis_port = ts_redis_port(g_master),
                                 .service = "game",
                                 .backoff_max_ms = 200,
                                 .min_replicas = min_replicas,
                                 .wait_timeout_ms = 200,
                                 .metrics = reg};
    money_writer_t *w = money_writer_create(&cfg);
    ck_assert_ptr_nonnull(w);
    return w;
}

static long long stat_calls(ts_redis_t *r, const char *cmd)
{
    char *stats = ts_redis_cmd(r, "INFO commandstats");
    ck_assert_ptr_nonnull(stats);
    char want[64];
    snprintf(want, sizeof want, "cmdstat_%s:calls=", cmd);
    char *line = strstr(stats, want);
    long long calls = line ? atoll(line + strlen(want)) : 0;
    free(stats);
    return calls;
}

static long long count_keys(ts_redis_t *r, const char *pattern)
{
    char *t = ts_redis_cmd(r, "EVAL %s 0 %s", "return #redis.call('KEYS', ARGV[1])", pattern);
    ck_assert_ptr_nonnull(t);
    long long n = atoll(t);
    free(t);
    return n;
}

/* Every wallet and the rake on r are what exactly one application of rounds 1..n of desk 0
 * gives. */
static void verify_once(ts_redis_t *r, uint64_t n)
{
    int64_t expected[MONEY_GEN_PLAYERS] = {0}, rake = 0;
    for (uint64_t seq = 1; seq <= n; seq++)
        money_gen_expect(0, seq, expected, &rake);
    ck_assert_int_eq(count_keys(r, "{croupier:money}:round:*"), (long long)n);
    char key[128];
    for (int p = 0; p < MONEY_GEN_PLAYERS; p++) {
        money_key_wallet(money_gen_names[p], key, sizeof key);
        char *v = ts_redis_cmd(r, "GET %s", key);
        ck_assert_int_eq(atoll(v), MONEY_GEN_START + expected[p]);
        free(v);
    }
    money_key_rake(MONEY_GEN_GAME, key, sizeof key);
    char *v = ts_redis_cmd(r, "GET %s", key);
    ck_assert_int_eq(atoll(v), rake);
    free(v);
}

static double metric(metrics_registry_t *reg, const char *name)
{
    size_t len = 0;
    char *text = metrics_render(reg, &len);
    char want[128];
    snprintf(want, sizeof want, "\n%s ", name);
    char *at = strstr(text, want);
    double v = at ? atof(at + strlen(want)) : -1;
    free(text);
    return v;
}

/* With a live replica every settlement completes, and one WAIT covers a whole batch. */
START_TEST(test_durable_settlements_complete_with_one_wait_per_batch)
{
    money_writer_t *w = durable_writer(NULL, 1);
    tally_t tally = {0};
    money_settlement_t s;
    enum { N = 3000 };
    for (uint64_t seq = 1; seq <= N; seq++) {
        money_gen_settlement(3, 0, seq, &s);
        ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
    }
    ck_assert_int_ge(money_writer_flush(w, 30000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), N);
    ck_assert_int_eq(atomic_load(&tally.replayed), 0);
    ck_assert(money_writer_durable(w));
    long long waits = stat_calls(g_master, "wait"),
              calls = stat_calls(g_master, "evalsha") + stat_calls(g_master, "eval");
    ck_assert_msg(waits >= 1 && waits <= calls, "%lld WAITs for %lld script calls", waits, calls);
    /* Completed means replicated: the replica holds every round, applied once. */
    verify_once(g_replica, N);
    money_writer_destroy(w);
}
END_TEST

/*
 * The replica stops answering (SIGSTOP): the settlements are applied on the master but not
 * acknowledged, rounds may not start, the WAITs that fell short are counted; once the replica
 * is back, every settlement completes (sent again under its round id: applied once).
 */
START_TEST(test_durable_short_wait_holds_rounds_and_retries_under_the_round_id)
{
    metrics_registry_t *reg = metrics_create();
    money_writer_t *w = durable_writer(reg, 1);
    tally_t tally = {0};
    money_settlement_t s;
    money_gen_settlement(3, 0, 1, &s);
    ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 1);
    ck_assert(money_writer_can_start_round(w));

    ts_redis_pause(g_replica);
    enum { N = 40 };
    for (uint64_t seq = 2; seq <= N; seq++) {
        money_gen_settlement(3, 0, seq, &s);
        ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
    }
    ts_sleep_ms(1500);
    ck_assert_int_eq(atomic_load(&tally.ok), 1); /* none of the new ones acknowledged */
    ck_assert(!money_writer_durable(w));
    ck_assert(!money_writer_can_start_round(w));
    ck_assert_int_eq(money_writer_depth(w), N - 1);
    ck_assert_double_ge(metric(reg, "money_writer_wait_short_total"), 2);
    ck_assert_double_eq(metric(reg, "money_writer_durable"), 0);
    verify_once(g_master, N); /* applied on the master, once, however often sent */

    ts_redis_resume(g_replica);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), N);
    ck_assert_int_eq(atomic_load(&tally.failed), 0);
    ck_assert_int_eq(atomic_load(&tally.replayed), N - 1); /* the first answers were held back */
    ck_assert(money_writer_durable(w));
    ck_assert(money_writer_can_start_round(w));
    ck_assert_double_eq(metric(reg, "money_writer_durable"), 1);
    ck_assert_int_eq(replicas_streaming(g_master, 1), 0);
    verify_once(g_replica, N);
    money_writer_destroy(w);
    metrics_destroy(reg);
}
END_TEST

static void keep_cb(money_result_t *r, void *arg)
{
    _Atomic(money_result_t *) *slot = arg;
    atomic_store(slot, r);
}

/* A writer destroyed while its item waits for a WAIT cancels it, saying it may have been
 * applied (the logged command may be replayed). */
START_TEST(test_durable_destroy_says_an_unconfirmed_item_may_have_been_applied)
{
    money_writer_t *w = durable_writer(NULL, 1);
    _Atomic(money_result_t *) got = NULL;
    money_settlement_t s;
    ts_redis_pause(g_replica);
    money_gen_settlement(3, 0, 1, &s);
    ck_assert_int_eq(money_writer_submit_settle(w, &s, keep_cb, &got), 0);
    ts_sleep_ms(600);
    ck_assert_ptr_null(atomic_load(&got));
    money_writer_destroy(w);
    money_result_t *r = atomic_load(&got);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->status, -ECANCELED);
    ck_assert_msg(strstr(r->error, "may have been applied") != NULL, "%s", r->error);
    free(r);
    ts_redis_resume(g_replica);
}
END_TEST

/* Without min_replicas nothing waits: a stopped replica changes nothing. */
START_TEST(test_durable_no_min_replicas_sends_no_wait)
{
    money_writer_t *w = durable_writer(NULL, 0);
    ts_redis_pause(g_replica);
    tally_t tally = {0};
    money_settlement_t s;
    for (uint64_t seq = 1; seq <= 100; seq++) {
        money_gen_settlement(3, 0, seq, &s);
        ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
    }
    ck_assert_int_ge(money_writer_flush(w, 5000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 100);
    ck_assert_int_eq(stat_calls(g_master, "wait"), 1); /* the setup's own */
    money_writer_destroy(w);
}
END_TEST

/* ---- the replay journal: what a promoted replica lacks is put back -------------------------- */

static money_writer_t *journal_writer(metrics_registry_t *reg, int window_ms, size_t max_items)
{
    money_writer_config_t cfg = {.redis_host = "127.0.0.1",
                                 .redis_port = ts_redis_port(g_master),
                                 .service = "game",
                                 .backoff_max_ms = 200,
                                 .replay_window_ms = window_ms,
                                 .replay_max_items = max_items,
                                 .metrics = reg};
    money_writer_t *w = money_writer_create(&cfg);
    ck_assert_ptr_nonnull(w);
    return w;
}

/* Waits until metric name reaches at least v (the writer updates it on its thread). */
static bool metric_reaches(metrics_registry_t *reg, const char *name, double v, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (metric(reg, name) < v && ts_now_ms() < end)
        ts_sleep_ms(20);
    return metric(reg, name) >= v;
}

static void submit_wallet(money_writer_t *w, money_kind_t kind, const char *player, int64_t amount,
                          const char *op_id, tally_t *t)
{
    int rc = kind == MONEY_KIND_BUYIN ? money_writer_submit_buyin(w, player, amount, op_id,
                                                                  tally_cb, t)
                                      : money_writer_submit_cashout(w, player, amount, op_id,
                                                                    tally_cb, t);
    ck_assert_int_eq(rc, 0);
}

static void submit_seat(money_writer_t *w, money_kind_t kind, const char *op_id, tally_t *t)
{
    money_seat_t seat = {.slot = 1, .epoch = 3, .account = "seatA", .owner = "g1"};
    ck_assert_int_eq(money_writer_submit_seat(w, kind, &seat, 50, op_id, tally_cb, t), 0);
}

static void submit_history(money_writer_t *w, uint64_t seq, tally_t *t)
{
    money_settlement_t s;
    money_gen_settlement(3, 0, seq, &s);
    ck_assert_int_eq(money_round_id_set_service(&s.round, "game"), 0);
    json_t *h = money_history_new(&s.round, MONEY_GEN_GAME);
    for (size_t i = 0; i < s.nplayers; i++)
        money_history_add_seat(h, (int)i, s.players[i], false, MONEY_GEN_START);
    ck_assert_int_eq(money_writer_submit_history(w, MONEY_GEN_GAME, h, tally_cb, t), 0);
}

static void submit_rounds(money_writer_t *w, uint64_t from, uint64_t to, tally_t *t)
{
    money_settlement_t s;
    for (uint64_t seq = from; seq <= to; seq++) {
        money_gen_settlement(3, 0, seq, &s);
        ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, t), 0);
    }
}

#define HELD_KEY "{croupier:money}:held:game:1:3"
#define STREAM_KEY "{croupier:history:" MONEY_GEN_GAME "}:stream"

/* What the money operations of the replay test left on r, as text (one line per fact). */
static char *money_state(ts_redis_t *r)
{
    static const char *const cmds[][3] = {
        {"GET", "{croupier:money}:wallet:g0", NULL}, {"GET", "{croupier:money}:wallet:g1", NULL},
        {"GET", "{croupier:money}:wallet:g2", NULL}, {"GET", "{croupier:money}:wallet:g3", NULL},
        {"GET", "{croupier:money}:wallet:g4", NULL}, {"GET", "{croupier:money}:wallet:g5", NULL},
        {"GET", "{croupier:money}:wallet:g6", NULL}, {"GET", "{croupier:money}:wallet:g7", NULL},
        {"GET", "{croupier:money}:wallet:seatA", NULL},
        {"GET", "{croupier:money}:rake:" MONEY_GEN_GAME, NULL},
        {"HGET", HELD_KEY, "seatA"}, {"HGET", HELD_KEY, "r:0"}, {"HGET", HELD_KEY, "r:1"},
        {"HGET", HELD_KEY, "r:2"},
        {"HLEN", HELD_KEY, NULL}, {"XLEN", STREAM_KEY, NULL}};
    size_t cap = 4096, len = 0;
    char *out = xcalloc(1, cap);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *const *c = cmds[i];
        char *v = c[2] ? ts_redis_cmd(r, "%s %s %s", c[0], c[1], c[2])
                       : ts_redis_cmd(r, "%s %s", c[0], c[1]);
        ck_assert_ptr_nonnull(v);
        len += (size_t)snprintf(out + len, cap - len, "%s %s %s = %s\n", c[0], c[1],
                                c[2] ? c[2] : "", v);
        free(v);
        ck_assert_uint_lt(len, cap);
    }
    len += (size_t)snprintf(out + len, cap - len, "rounds = %lld\nops = %lld\nseen = %lld\n",
                            count_keys(r, "{croupier:money}:round:*"),
                            count_keys(r, "{croupier:money}:op:*"),
                            count_keys(r, "{croupier:history:*}:seen:*"));
    return out;
}

static char *config_dir(ts_redis_t *r)
{
    char *t = ts_redis_cmd(r, "CONFIG GET dir");
    ck_assert_ptr_nonnull(t);
    char *nl = strchr(t, '\n');
    ck_assert_ptr_nonnull(nl);
    char *dir = xstrdup(nl + 1);
    free(t);
    return dir;
}

/*
 * The replica is cut off (REPLICAOF NO ONE: it keeps what it had and gets nothing more), the
 * writer completes settlements, wallet and seat operations, marks and a history on the master
 * alone (no WAIT, as a WAIT satisfied by another replica would allow), then the master dies and
 * the writer's next connection lands on a node holding exactly the replica's data (its dump,
 * loaded on the master's port: the promoted replica). The writer finds the newest operation the
 * node has and applies everything after it again, in order, before anything new: the node ends
 * up with what the old master had, each operation once, and the seat account emptied after the
 * cut is not held again.
 */
START_TEST(test_durable_replay_puts_back_what_a_promoted_replica_lacks)
{
    metrics_registry_t *reg = metrics_create();
    money_writer_t *w = journal_writer(reg, 0, 0);
    tally_t tally = {0};
    /* Before the cut: on both. */
    submit_rounds(w, 1, 5, &tally);
    submit_wallet(w, MONEY_KIND_BUYIN, "g0", 100, "pre-buyin", &tally);
    submit_seat(w, MONEY_KIND_SEAT_IN, "pre-seat-in", &tally);
    ck_assert_int_eq(money_writer_submit_mark(w, 1, 3, "r:0", "{\"round\":\"A\"}", tally_cb,
                                              &tally),
                     0);
    ck_assert_int_eq(money_writer_submit_mark(w, 1, 3, "r:2", "{\"round\":\"X\"}", tally_cb,
                                              &tally),
                     0);
    submit_history(w, 1, &tally);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 10);
    /* A later operation outside the writer undoes a held record the writer made (as a
     * recovery does): replaying the whole journal blindly would bring it back. */
    free(ts_redis_cmd(g_master, "HDEL %s r:2", HELD_KEY));
    ck_assert_int_eq(replicas_streaming(g_master, 1), 0);

    /* The cut: the replica stops replicating, and really lacks what follows. */
    free(ts_redis_cmd(g_replica, "REPLICAOF NO ONE"));
    free(ts_redis_cmd(g_master, "SET durable:after-cut 1"));
    ts_sleep_ms(200);
    char *probe = ts_redis_cmd(g_replica, "EXISTS durable:after-cut");
    ck_assert_str_eq(probe, "0");
    free(probe);

    /* After the cut: on the master alone (21 operations). */
    submit_rounds(w, 6, 20, &tally);
    submit_wallet(w, MONEY_KIND_BUYIN, "g2", 30, "b2", &tally);
    submit_wallet(w, MONEY_KIND_CASHOUT, "g3", 40, "c2", &tally);
    submit_seat(w, MONEY_KIND_SEAT_OUT, "seat-out", &tally); /* seatA empty: no longer held */
    ck_assert_int_eq(money_writer_submit_mark(w, 1, 3, "r:0", "{\"round\":\"B\"}", tally_cb,
                                              &tally),
                     0);
    ck_assert_int_eq(money_writer_submit_mark(w, 1, 3, "r:1", "{\"round\":\"C\"}", tally_cb,
                                              &tally),
                     0);
    submit_history(w, 6, &tally);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 31);
    ck_assert_int_eq(atomic_load(&tally.failed), 0);
    ck_assert_double_eq(metric(reg, "money_writer_journal_items"), 31);
    char *want = money_state(g_master);
    char *lacking = money_state(g_replica);
    ck_assert_str_ne(want, lacking);
    free(lacking);
    ck_assert_msg(strstr(want, "HGET " HELD_KEY " seatA = (nil)\n") != NULL, "%s", want);
    ck_assert_msg(strstr(want, "HGET " HELD_KEY " r:2 = (nil)\n") != NULL, "%s", want);
    ck_assert_msg(strstr(want, "HGET " HELD_KEY " r:1 = {\"round\":\"C\"}\n") != NULL, "%s",
                  want);

    /* The master dies; the node on its port comes back with the replica's data. */
    char *mdir = config_dir(g_master), *rdir = config_dir(g_replica);
    free(ts_redis_cmd(g_replica, "SAVE"));
    ts_redis_kill(g_master);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s/dump.rdb' '%s/dump.rdb'", rdir, mdir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(ts_redis_restart(g_master), 0);
    free(mdir);
    free(rdir);

    /* The writer reconnects, probes, and puts back exactly the 21 lost operations. */
    ck_assert_msg(metric_reaches(reg, "money_writer_replayed_total", 21, 15000),
                  "replayed %g operations", metric(reg, "money_writer_replayed_total"));
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_double_eq(metric(reg, "money_writer_replayed_total"), 21);
    ck_assert_double_eq(metric(reg, "money_writer_journal_checks_total"), 1);
    char *got = money_state(g_master);
    ck_assert_str_eq(got, want);
    free(got);
    /* Nobody was told twice. */
    ck_assert_int_eq(atomic_load(&tally.ok), 31);
    ck_assert_int_eq(atomic_load(&tally.replayed), 0);

    /* Normal sending resumes behind the replay. */
    submit_rounds(w, 21, 21, &tally);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 32);
    ck_assert_int_eq(count_keys(g_master, "{croupier:money}:round:*"), 21);
    ck_assert_double_eq(metric(reg, "money_writer_replayed_total"), 21);
    money_writer_destroy(w);
    metrics_destroy(reg);
    free(want);
}
END_TEST

/* A reconnect to the same master, which has everything: checked, nothing sent again. */
START_TEST(test_durable_replay_nothing_after_a_plain_reconnect)
{
    metrics_registry_t *reg = metrics_create();
    money_writer_t *w = journal_writer(reg, 0, 0);
    tally_t tally = {0};
    submit_rounds(w, 1, 50, &tally);
    ck_assert_int_eq(money_writer_submit_mark(w, 1, 3, "r:0", "{\"round\":\"A\"}", tally_cb,
                                              &tally),
                     0);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 51);
    free(ts_redis_cmd(g_master, "CLIENT KILL TYPE normal"));
    ck_assert(metric_reaches(reg, "money_writer_journal_checks_total", 1, 10000));
    submit_rounds(w, 51, 60, &tally);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 61);
    ck_assert_int_eq(atomic_load(&tally.replayed), 0);
    ck_assert_double_eq(metric(reg, "money_writer_replayed_total"), 0);
    verify_once(g_master, 60);
    money_writer_destroy(w);
    metrics_destroy(reg);
}
END_TEST

/* Entries leave the journal after the window and beyond the count cap; a window that reaches
 * the records' TTL is refused (a record expired would make its entry look lost). */
START_TEST(test_durable_replay_journal_is_bounded)
{
    metrics_registry_t *reg = metrics_create();
    money_writer_t *w = journal_writer(reg, 300, 0);
    tally_t tally = {0};
    submit_rounds(w, 1, 10, &tally);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_double_eq(metric(reg, "money_writer_journal_items"), 10);
    ck_assert_double_gt(metric(reg, "money_writer_journal_bytes"), 10 * 100);
    ts_sleep_ms(800);
    ck_assert_double_eq(metric(reg, "money_writer_journal_items"), 0);
    ck_assert_double_eq(metric(reg, "money_writer_journal_bytes"), 0);
    money_writer_destroy(w);
    metrics_destroy(reg);

    reg = metrics_create();
    w = journal_writer(reg, 0, 4);
    submit_rounds(w, 11, 20, &tally);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_double_eq(metric(reg, "money_writer_journal_items"), 4);
    money_writer_destroy(w);
    metrics_destroy(reg);

    reg = metrics_create();
    w = journal_writer(reg, -1, 0); /* no journal */
    submit_rounds(w, 21, 25, &tally);
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_double_eq(metric(reg, "money_writer_journal_items"), 0);
    money_writer_destroy(w);
    metrics_destroy(reg);
    ck_assert_int_eq(atomic_load(&tally.ok), 25);

    money_writer_config_t cfg = {.redis_host = "127.0.0.1",
                                 .redis_port = ts_redis_port(g_master),
                                 .service = "game",
                                 .record_ttl_s = 60,
                                 .replay_window_ms = 60000};
    ck_assert_ptr_null(money_writer_create(&cfg));
    cfg.replay_window_ms = 0; /* the default 60 s: not below a 60 s TTL either */
    ck_assert_ptr_null(money_writer_create(&cfg));
    cfg.replay_window_ms = 59999;
    w = money_writer_create(&cfg);
    ck_assert_ptr_nonnull(w);
    money_writer_destroy(w);
}
END_TEST

/* ---- lease epochs across a failover --------------------------------------------------------- */

#define LSVC "dsvc"

typedef struct {
    int acquired;
} lease_probe_t;

static void probe_cb(lease_t *l, lease_event_t ev, void *arg)
{
    (void)l;
    lease_probe_t *p = arg;
    if (ev == LEASE_EV_ACQUIRED)
        p->acquired++;
}

/* Runs base for ms milliseconds. */
static void run_for(struct event_base *base, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

static long long get_ll(ts_redis_t *r, const char *key)
{
    char *v = ts_redis_cmd(r, "GET %s", key);
    ck_assert_ptr_nonnull(v);
    long long n = atoll(v);
    free(v);
    return n;
}

static bool sentinel_sees_replicas(ts_sentinel_t *s, int n)
{
    char *t = ts_redis_cmd_port(ts_sentinel_port(s), "SENTINEL master %s", "dmaster");
    char want[32];
    snprintf(want, sizeof want, "num-slaves\n%d\n", n);
    bool ok = t != NULL && strstr(t, want) != NULL;
    free(t);
    return ok;
}

/*
 * An epoch increment made on the master and never replicated (both replicas cut off) is not
 * used -- the acquisition's WAIT falls short -- and, after the master dies and a replica is
 * promoted, is never handed out again: the promoted replica's counter lags behind, and the
 * acquisition lifts it above every epoch the process was given.
 */
START_TEST(test_durable_unreplicated_epoch_is_never_reused_after_failover)
{
    ts_redis_t *r2 = ts_redis_start_replica(ts_redis_port(g_master));
    ck_assert_msg(r2 != NULL && ts_redis_wait_synced(r2, 10000) == 0, "no second replica");
    char ekey[128];
    lease_format_epoch_key(LSVC, ekey, sizeof ekey);
    free(ts_redis_cmd(g_master, "SET %s 5", ekey));
    ck_assert_msg(replicas_streaming(g_master, 2) == 0, "the replicas never acknowledged");
    ts_sentinel_t *sen = ts_sentinel_start("dmaster", ts_redis_port(g_master), 1, 500, 2000);
    ck_assert_msg(sen != NULL, "could not start redis-sentinel");
    long long end = ts_now_ms() + 15000;
    while (!sentinel_sees_replicas(sen, 2) && ts_now_ms() < end)
        ts_sleep_ms(100);
    ck_assert_msg(sentinel_sees_replicas(sen, 2), "the sentinel never saw both replicas");

    struct event_base *base = event_base_new();
    char sentinels[64];
    snprintf(sentinels, sizeof sentinels, "127.0.0.1:%d", ts_sentinel_port(sen));
    rconn_t *rc = rconn_create(base, &(rconn_opts_t){.sentinels = sentinels,
                                                     .master_name = "dmaster",
                                                     .connect_timeout_ms = 500,
                                                     .request_timeout_ms = 1000,
                                                     .backoff_max_ms = 200});
    ck_assert_ptr_nonnull(rc);
    metrics_registry_t *reg = metrics_create();
    lease_probe_t probe = {0};
    lease_t *l = lease_create(base, rc,
                              &(lease_opts_t){.service = LSVC,
                                              .pool_size = 4,
                                              .ttl_ms = 3000,
                                              .metrics = reg,
                                              .on_event = probe_cb,
                                              .arg = &probe,
                                              .min_replicas = 1,
                                              .wait_timeout_ms = 300});
    ck_assert_ptr_nonnull(l);
    long long end2 = ts_now_ms() + 10000;
    while (!rconn_connected(rc) && ts_now_ms() < end2)
        run_for(base, 20);
    ck_assert_msg(rconn_connected(rc), "the lease's connection never came up");

    /* Cut the replicas off: a password they do not know (connections already open stay
     * authenticated), then their links are closed. Nothing written from now on replicates. */
    struct timeval tv = {5, 0};
    redisContext *mc = redisConnectWithTimeout("127.0.0.1", ts_redis_port(g_master), tv);
    ck_assert(mc != NULL && mc->err == 0);
    freeReplyObject(redisCommand(mc, "CONFIG SET requirepass durable-test-cut"));
    freeReplyObject(redisCommand(mc, "CLIENT KILL TYPE replica"));
    end2 = ts_now_ms() + 10000;
    for (;;) {
        redisReply *rr = redisCommand(mc, "INFO replication");
        bool none = rr != NULL && rr->type == REDIS_REPLY_STRING &&
                    strstr(rr->str, "connected_slaves:0") != NULL;
        freeReplyObject(rr);
        if (none || ts_now_ms() > end2)
            break;
        ts_sleep_ms(20);
    }
    lease_start(l);
    run_for(base, 2500);
    /* The master counted epochs the replicas never saw; none of them was used. */
    redisReply *er = redisCommand(mc, "GET %s", ekey);
    ck_assert(er != NULL && er->type == REDIS_REPLY_STRING);
    long long lost = atoll(er->str);
    freeReplyObject(er);
    redisFree(mc);
    ck_assert_int_gt(lost, 5);
    ck_assert_int_eq(probe.acquired, 0);
    ck_assert_int_eq(lease_state(l), LEASE_ACQUIRING);
    ck_assert_int_le(lease_epoch(l), 0);
    ck_assert_double_ge(metric(reg, "lease_wait_short_total"), 1);

    /* The master dies; one replica is promoted, its counter still at 5. */
    ts_redis_crash(g_master);
    end = ts_now_ms() + 30000;
    while (probe.acquired == 0 && ts_now_ms() < end)
        run_for(base, 100);
    ck_assert_msg(probe.acquired == 1, "no acquisition after the failover");
    ck_assert_int_gt(lease_epoch(l), lost);
    ts_redis_t *now = rconn_port(rc) == ts_redis_port(g_replica) ? g_replica : r2;
    ck_assert_int_eq(rconn_port(rc), ts_redis_port(now));
    ck_assert_int_eq(get_ll(now, ekey), lease_epoch(l));
    char fkey[128];
    lease_format_fence_key(LSVC, lease_slot(l), fkey, sizeof fkey);
    ck_assert_int_eq(get_ll(now, fkey), lease_epoch(l));

    lease_destroy(l);
    rconn_destroy(rc);
    event_base_free(base);
    metrics_destroy(reg);
    ts_sentinel_stop(sen);
    ts_redis_stop(r2);
}
END_TEST

/* ---- what the game servers own heals after a failover ---------------------------------------- */

/*
 * The replica Sentinel promotes lacks the game server's registry entry (deleted on it alone, as
 * if the write had not reached it before the master died): the game server re-publishes the
 * entry from its own state as soon as its connection is on the new master, long before its
 * periodic refresh (every ttl/3 = 20 s here) would have.
 */
START_TEST(test_durable_registry_entry_lost_in_a_failover_is_republished)
{
    testenv_t env;
    ck_assert_int_eq(testenv_start(&env, NULL), 0);
    ts_redis_t *rep = ts_redis_start_replica(ts_redis_port(env.redis));
    ck_assert_msg(rep != NULL && ts_redis_wait_synced(rep, 10000) == 0, "no replica");
    ck_assert_int_eq(replicas_streaming(env.redis, 1), 0);
    ts_sentinel_t *sen = ts_sentinel_start("dmaster", ts_redis_port(env.redis), 1, 500, 2000);
    ck_assert_msg(sen != NULL, "could not start redis-sentinel");
    long long end = ts_now_ms() + 15000;
    while (!sentinel_sees_replicas(sen, 1) && ts_now_ms() < end)
        ts_sleep_ms(100);
    ck_assert_msg(sentinel_sees_replicas(sen, 1), "the sentinel never saw the replica");

    char sentinels[64], dead[32];
    snprintf(sentinels, sizeof sentinels, "127.0.0.1:%d", ts_sentinel_port(sen));
    snprintf(dead, sizeof dead, "127.0.0.1:%d", ts_free_port());
    char *args[] = {"--redis-sentinels", sentinels, "--redis-master",
                    "dmaster",           "--redis", dead,
                    "--lease-ttl-ms",    "60000",   NULL};
    testenv_server_t game;
    ck_assert_int_eq(testenv_start_game(&env, &game, "test", 5, args, NULL), 0);
    const char *pattern = "{croupier:registry}:server:*" /* REGISTRY_KEY_PREFIX off a cluster */;
    end = ts_now_ms() + 5000;
    while (count_keys(rep, pattern) != 1 && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(count_keys(rep, pattern), 1);

    /* The replica loses the entry; then the master dies and the replica is promoted. */
    free(ts_redis_cmd(rep, "CONFIG SET replica-read-only no"));
    free(ts_redis_cmd(rep, "EVAL %s 0 %s",
                      "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                      "redis.call('DEL', k) end return 1",
                      pattern));
    free(ts_redis_cmd(rep, "DEL %s", REGISTRY_MEMBERS_KEY));
    ck_assert_int_eq(count_keys(rep, pattern), 0);
    ts_redis_crash(env.redis);
    end = ts_now_ms() + 20000;
    bool promoted = false;
    while (!promoted && ts_now_ms() < end) {
        char *role = ts_redis_cmd(rep, "ROLE");
        promoted = role != NULL && strncmp(role, "master", 6) == 0;
        free(role);
        if (!promoted)
            ts_sleep_ms(50);
    }
    ck_assert_msg(promoted, "no failover within 20 s");
    long long t0 = ts_now_ms();
    end = t0 + 5000;
    while (count_keys(rep, pattern) != 1 && ts_now_ms() < end)
        ts_sleep_ms(20);
    fprintf(stderr, "# registry entry back %lld ms after the promotion\n", ts_now_ms() - t0);
    ck_assert_msg(count_keys(rep, pattern) == 1, "the entry was not re-published (log %s)",
                  ts_proc_log_path(game.proc));
    char *members = ts_redis_cmd(rep, "SCARD %s", REGISTRY_MEMBERS_KEY);
    ck_assert_str_eq(members, "1");
    free(members);
    ck_assert(ts_proc_alive(game.proc));
    testenv_stop_server(&game);
    ts_sentinel_stop(sen);
    ts_redis_stop(rep);
    testenv_stop(&env);
}
END_TEST

/* ---- the engines' money jobs (table handoffs) ------------------------------------------------ */

typedef struct {
    money_job_t job;
    int result;
    int runs;
    _Atomic bool done;
} durable_job_t;

/* A write (INCR) like a handoff operation's; c NULL: -EIO, as the real jobs report. */
static void durable_job_run(redisContext *c, money_job_t *job)
{
    durable_job_t *d = (durable_job_t *)job;
    d->runs++;
    if (c == NULL) {
        d->result = -EIO;
        return;
    }
    redisReply *r = redisCommand(c, "INCR durable:job");
    d->result = r != NULL && r->type == REDIS_REPLY_INTEGER ? 0 : -EIO;
    freeReplyObject(r);
}

static void durable_job_done(money_job_t *job)
{
    atomic_store(&((durable_job_t *)job)->done, true);
}

static void wait_job(durable_job_t *d, int ms)
{
    for (int i = 0; i < ms / 10 && !atomic_load(&d->done); i++)
        ts_sleep_ms(10);
    ck_assert(atomic_load(&d->done));
}

/*
 * A job is done only once WAIT reports the replica: while the replica is stopped it is run
 * again (idempotent operations), done once it is back; stopped for longer than 10 x wait_ms,
 * the job reports -EIO (Redis unreachable) instead of an acknowledgement nothing backs.
 */
START_TEST(test_durable_money_jobs_wait_for_the_replica)
{
    money_jobs_t *j = money_jobs_create("127.0.0.1", ts_redis_port(g_master));
    ck_assert_ptr_nonnull(j);
    money_jobs_set_min_replicas(j, 1, 100);
    durable_job_t a = {.job = {.run = durable_job_run, .done = durable_job_done}};
    ck_assert_int_eq(money_jobs_submit(j, &a.job), 0);
    wait_job(&a, 5000);
    ck_assert_int_eq(a.result, 0);
    ck_assert_int_eq(a.runs, 1);

    ts_redis_pause(g_replica);
    durable_job_t b = {.job = {.run = durable_job_run, .done = durable_job_done}};
    ck_assert_int_eq(money_jobs_submit(j, &b.job), 0);
    ts_sleep_ms(500);
    ck_assert(!atomic_load(&b.done));
    ts_redis_resume(g_replica);
    wait_job(&b, 5000);
    ck_assert_int_eq(b.result, 0);
    ck_assert_int_ge(b.runs, 2);

    ts_redis_pause(g_replica);
    durable_job_t c = {.job = {.run = durable_job_run, .done = durable_job_done}};
    ck_assert_int_eq(money_jobs_submit(j, &c.job), 0);
    wait_job(&c, 5000);
    ck_assert_int_eq(c.result, -EIO);
    ts_redis_resume(g_replica);
    money_jobs_destroy(j);
}
END_TEST

/*
 * Jobs through Sentinel while neither the master nor any sentinel answers (the seconds of a
 * failover): the first job fails on the dead connection, the next ones on the master lookup;
 * each reports -EIO, and the thread stays alive for the next (a failed lookup once left the
 * freed connection behind: the next job freed it again and the process aborted).
 */
START_TEST(test_durable_money_jobs_survive_a_failed_master_lookup)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_sentinel_t *sen = ts_sentinel_start("jmaster", ts_redis_port(r), 1, 500, 2000);
    ck_assert_msg(sen != NULL, "could not start redis-sentinel");
    char sentinels[64];
    snprintf(sentinels, sizeof sentinels, "127.0.0.1:%d", ts_sentinel_port(sen));
    money_jobs_t *j = money_jobs_create_sentinel("127.0.0.1", ts_redis_port(r), sentinels,
                                                 "jmaster");
    ck_assert_ptr_nonnull(j);
    durable_job_t a = {.job = {.run = durable_job_run, .done = durable_job_done}};
    ck_assert_int_eq(money_jobs_submit(j, &a.job), 0);
    wait_job(&a, 5000);
    ck_assert_int_eq(a.result, 0);

    ts_redis_crash(r);
    ts_sentinel_crash(sen);
    for (int i = 0; i < 4; i++) {
        durable_job_t b = {.job = {.run = durable_job_run, .done = durable_job_done}};
        ck_assert_int_eq(money_jobs_submit(j, &b.job), 0);
        wait_job(&b, 10000);
        ck_assert_int_eq(b.result, -EIO);
    }
    money_jobs_destroy(j);
    ts_sentinel_stop(sen);
    ts_redis_stop(r);
}
END_TEST

/*
 * The money calls outside the writer wait for every connected replica (no journal covers them):
 * with two replicas and min_replicas 1 both are waited for; one stopped, the wait ends after
 * wait_ms with the other one (enough, the write is on a replica); min_replicas 2 is then short,
 * with the reason; a master that has no replica connected needs only min_replicas 0.
 */
START_TEST(test_durable_wait_replicas_waits_for_every_connected_replica)
{
    ts_redis_t *r2 = ts_redis_start_replica(ts_redis_port(g_master));
    ck_assert_ptr_nonnull(r2);
    ck_assert_int_eq(ts_redis_wait_synced(r2, 10000), 0);
    ck_assert_int_eq(replicas_streaming(g_master, 2), 0);
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", ts_redis_port(g_master), tv);
    ck_assert(c != NULL && c->err == 0);
    redisSetTimeout(c, tv);

    money_wait_result_t w;
    freeReplyObject(redisCommand(c, "INCR durable:credit"));
    ck_assert_int_eq(money_sync_wait_replicas(c, 1, 2000, &w), 0);
    ck_assert_int_eq(w.want, 2);
    ck_assert_int_eq(w.got, 2);

    ts_redis_pause(r2);
    freeReplyObject(redisCommand(c, "INCR durable:credit"));
    int64_t t0 = clock_mono_ms();
    ck_assert_int_eq(money_sync_wait_replicas(c, 1, 300, &w), 0);
    ck_assert_int_ge(clock_mono_ms() - t0, 250); /* it waited for the stopped one too */
    ck_assert_int_eq(w.want, 2);
    ck_assert_int_eq(w.got, 1);
    ck_assert_int_eq(money_sync_wait_replicas(c, 2, 300, &w), -1);
    ck_assert_int_eq(w.got, 1);
    ck_assert_msg(strstr(w.error, "WAIT reached 1 of 2 replicas within 300 ms") != NULL, "%s",
                  w.error);
    ts_redis_resume(r2);
    ck_assert_int_eq(money_sync_wait_replicas(c, 2, 5000, &w), 0);
    ck_assert_int_eq(w.got, 2);
    redisFree(c);
    ts_redis_stop(r2);

    /* a master without replicas: min 0 needs nothing, min 1 is short */
    ts_redis_t *lone = ts_redis_start();
    ck_assert_ptr_nonnull(lone);
    c = redisConnectWithTimeout("127.0.0.1", ts_redis_port(lone), tv);
    ck_assert(c != NULL && c->err == 0);
    ck_assert_int_eq(money_sync_wait_replicas(c, 0, 100, &w), 0);
    ck_assert_int_eq(w.want, 0);
    ck_assert_int_eq(money_sync_wait_replicas(c, 1, 100, &w), -1);
    ck_assert_int_eq(w.got, 0);
    redisFree(c);
    ts_redis_stop(lone);
}
END_TEST

static Suite *durable_suite(void)
{
    Suite *s = suite_create("durable");
    TCase *tc = tcase_create("money");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_durable_settlements_complete_with_one_wait_per_batch);
    tcase_add_test(tc, test_durable_short_wait_holds_rounds_and_retries_under_the_round_id);
    tcase_add_test(tc, test_durable_no_min_replicas_sends_no_wait);
    tcase_add_test(tc, test_durable_destroy_says_an_unconfirmed_item_may_have_been_applied);
    tcase_add_test(tc, test_durable_money_jobs_wait_for_the_replica);
    tcase_add_test(tc, test_durable_money_jobs_survive_a_failed_master_lookup);
    tcase_add_test(tc, test_durable_wait_replicas_waits_for_every_connected_replica);
    suite_add_tcase(s, tc);
    tc = tcase_create("replay");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_durable_replay_puts_back_what_a_promoted_replica_lacks);
    tcase_add_test(tc, test_durable_replay_nothing_after_a_plain_reconnect);
    tcase_add_test(tc, test_durable_replay_journal_is_bounded);
    suite_add_tcase(s, tc);
    tc = tcase_create("lease");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_durable_unreplicated_epoch_is_never_reused_after_failover);
    suite_add_tcase(s, tc);
    tc = tcase_create("heal");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_durable_registry_entry_lost_in_a_failover_is_republished);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(durable_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
