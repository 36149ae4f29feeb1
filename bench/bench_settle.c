/*
 * bench_settle -- settlements per second into a local Redis through the money writer queue.
 *
 *   bench_settle [TOTAL] [DESKS] [MAX_INFLIGHT] [BATCH_MAX] [PLAYERS]
 *                                                       (defaults 200000 4 512 64 8)
 *
 * Starts its own redis-server on a free loopback port (tests/support), then DESKS threads submit
 * TOTAL settlements of 3 players each as fast as the writer's watermark allows; the clock stops
 * when money_writer_flush() has seen every reply. Prints the rate and checks that every round
 * was applied once (every wallet and the rake reconcile). With PLAYERS = 8 the rounds are those
 * of tests/integration/money_gen.h (8 players: a batch of 64 rounds touches 8 wallets); with
 * more players each round picks 3 of them, so that a batch touches ~3 wallets per round as on a
 * server with many desks.
 *
 * CPU: with SETTLE_REDIS_CPU=<n> the redis-server is pinned to CPU n (sched_setaffinity on the
 * pid INFO reports); pin the bench itself with taskset, e.g.
 *   SETTLE_REDIS_CPU=0 taskset -c 1 bench/bench_settle
 * With SETTLE_RATE=<settlements/s> the desks submit at that total rate instead of as fast as
 * the watermark allows (to see the latency of a queue that is not full).
 * With SETTLE_WAIT=<n> the redis-server gets n replicas and the run has two passes on them: the
 * settlements without WAIT, then (after a FLUSHALL) the same ones through a writer with
 * min_replicas n, each acknowledged only once n replicas have it (money_writer.h "Durability");
 * it prints both rates and their ratio.
 * Besides wall-clock time it prints Redis's own CPU time (INFO cpu, user + sys) and the script
 * time (INFO commandstats) per settlement, the bench process's CPU time per settlement
 * (getrusage: desks + writer thread), and the submit -> done latency of the settlements.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../tests/integration/money_gen.h"
#include "clock.h"
#include "log.h"
#include "money_writer.h"
#include "support.h"

/* ok: applied (replayed: of those, answered as a replay -- sent again after a request timeout
 * or a lost connection, already applied the first time); failed: any error. */
static _Atomic long ok_count, replayed_count, bad_count;
static int64_t *latencies; /* submit -> done, ns, one per settlement */
static _Atomic long nlatencies;

/* arg carries the submit time (clock_mono_ns). */
static void done_cb(money_result_t *r, void *arg)
{
    long i = atomic_fetch_add(&nlatencies, 1);
    latencies[i] = clock_mono_ns() - (int64_t)(intptr_t)arg;
    if (r->status == MONEY_OK)
        atomic_fetch_add(&ok_count, 1);
    else
        atomic_fetch_add(&bad_count, 1);
    if (r->status == MONEY_OK && r->replayed)
        atomic_fetch_add(&replayed_count, 1);
    free(r);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A numeric field "name:value" of an INFO reply, or -1. */
static double info_field(const char *info, const char *name)
{
    const char *p = info ? strstr(info, name) : NULL;
    return p ? atof(p + strlen(name)) : -1.0;
}

/* Redis's CPU time (user + sys) in seconds, from INFO cpu; -1 on error. */
static double redis_cpu_s(ts_redis_t *redis)
{
    char *info = ts_redis_cmd(redis, "INFO cpu");
    double u = info_field(info, "used_cpu_user:"), s = info_field(info, "used_cpu_sys:");
    free(info);
    return u < 0 || s < 0 ? -1.0 : u + s;
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int nplayers = MONEY_GEN_PLAYERS;
static char (*player_names)[16];

/* Round (desk, seq): money_gen's with 8 players, else 3 distinct players of nplayers (> 20)
 * spread over all of them; the first wins 2x - rake, the others lose x each. */
static void bench_settlement(uint64_t desk, uint64_t seq, money_settlement_t *s, int idx[3])
{
    money_gen_settlement(1, desk, seq, s);
    if (nplayers == MONEY_GEN_PLAYERS) {
        for (int i = 0; i < 3; i++)
            for (int p = 0; p < MONEY_GEN_PLAYERS; p++)
                if (s->players[i] == money_gen_names[p])
                    idx[i] = p;
        return;
    }
    uint64_t p0 = (desk * 7919 + seq * 104729) % (uint64_t)nplayers;
    idx[0] = (int)p0;
    idx[1] = (int)((p0 + 1 + seq % 5) % (uint64_t)nplayers);
    idx[2] = (int)((p0 + 7 + seq % 11) % (uint64_t)nplayers);
    for (int i = 0; i < 3; i++)
        s->players[i] = player_names[idx[i]];
}

typedef struct {
    money_writer_t *w;
    uint64_t desk;
    uint64_t count;
    int ndesks;
} bench_desk_t;

static double rate; /* settlements/s over all desks; 0 = as fast as the watermark allows */

static void *desk_main(void *arg)
{
    bench_desk_t *d = arg;
    int64_t start = clock_mono_ns();
    for (uint64_t seq = 1; seq <= d->count;) {
        if (rate > 0) {
            /* Paced: settlement seq is due at start + seq / (rate per desk). */
            int64_t due = start + (int64_t)((double)seq * 1e9 * (double)d->ndesks / rate);
            int64_t now = clock_mono_ns();
            if (due > now + 200000) {
                usleep((useconds_t)((due - now) / 1000));
                continue;
            }
        }
        if (!money_writer_can_start_round(d->w)) {
            /* A desk at the watermark waits for its next timer tick; polling faster would only
             * burn the writer's CPU. */
            usleep(1000);
            continue;
        }
        money_settlement_t s;
        int idx[3];
        bench_settlement(d->desk, seq, &s, idx);
        if (money_writer_submit_settle(d->w, &s, done_cb, (void *)(intptr_t)clock_mono_ns()) != 0)
            abort();
        seq++;
    }
    return NULL;
}

/* Writes a key and WAITs for n replicas on the same connection: 0 once they have everything. */
static int replicas_caught_up(ts_redis_t *redis, int n)
{
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", ts_redis_port(redis), tv);
    if (c == NULL || c->err != 0) {
        redisFree(c);
        return -1;
    }
    redisSetTimeout(c, tv);
    freeReplyObject(redisCommand(c, "SET bench:probe 1"));
    redisReply *r = redisCommand(c, "WAIT %d 10000", n);
    int rc = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= n ? 0 : -1;
    freeReplyObject(r);
    redisFree(c);
    return rc;
}

/*
 * One pass: wallets set up, TOTAL settlements from the desks through a writer that WAITs for
 * min_replicas replicas (0: no WAIT), the wallets checked, the figures printed. Returns 0 when
 * every settlement was applied once; *rate_out is the settlements/s.
 */
static int bench_pass(ts_redis_t *redis, long total, int ndesks, long inflight, long batch,
                      const char *rate_env, const char *rcpu, const char *loadavg, int min_replicas,
                      double *rate_out)
{
    atomic_store(&ok_count, 0);
    atomic_store(&replayed_count, 0);
    atomic_store(&bad_count, 0);
    atomic_store(&nlatencies, 0);
    latencies = calloc((size_t)total, sizeof *latencies);
    if (latencies == NULL)
        return 1;
    char key[128];
    money_key_epoch("bench", 1, key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s 1", key));
    /* Every wallet starts with MONEY_GEN_START (pipelined SETs). */
    struct timeval tv = {5, 0};
    redisContext *rc = redisConnectWithTimeout("127.0.0.1", ts_redis_port(redis), tv);
    if (rc == NULL || rc->err != 0)
        return 1;
    for (int p = 0; p < nplayers; p++) {
        money_key_wallet(nplayers == MONEY_GEN_PLAYERS ? money_gen_names[p] : player_names[p], key,
                         sizeof key);
        redisAppendCommand(rc, "SET %s %lld", key, MONEY_GEN_START);
    }
    for (int p = 0; p < nplayers; p++) {
        redisReply *r = NULL;
        if (redisGetReply(rc, (void **)&r) != REDIS_OK)
            return 1;
        freeReplyObject(r);
    }
    money_writer_config_t cfg = {.redis_host = "127.0.0.1",
                                 .redis_port = ts_redis_port(redis),
                                 .service = "bench",
                                 .high_watermark = 8192,
                                 .max_inflight = (size_t)inflight,
                                 .batch_max = (size_t)batch,
                                 .min_replicas = min_replicas,
                                 .request_timeout_ms = 10000};
    money_writer_t *w = money_writer_create(&cfg);
    for (int i = 0; i < 200 && !money_writer_connected(w); i++)
        usleep(10000);
    /* Let Redis finish rehashing its dict after the wallets were created (incremental, in
     * serverCron), so that the run measures settlements, not the setup. */
    usleep(1000000);

    bench_desk_t desks[64];
    pthread_t th[64];
    free(ts_redis_cmd(redis, "CONFIG RESETSTAT"));
    double rcpu0 = redis_cpu_s(redis), cpu0 = self_cpu_s();
    int64_t t0 = clock_mono_ns();
    for (int i = 0; i < ndesks; i++) {
        desks[i] = (bench_desk_t){w, (uint64_t)i, (uint64_t)(total / ndesks + (i < total % ndesks)),
                                  ndesks};
        pthread_create(&th[i], NULL, desk_main, &desks[i]);
    }
    for (int i = 0; i < ndesks; i++)
        pthread_join(th[i], NULL);
    long flushed = money_writer_flush(w, 600000);
    int64_t t1 = clock_mono_ns();
    double cpu1 = self_cpu_s(), rcpu1 = redis_cpu_s(redis);
    money_writer_destroy(w);

    int64_t *expected = calloc((size_t)nplayers, sizeof *expected), rake = 0, mismatches = 0;
    for (int i = 0; i < ndesks; i++) {
        for (uint64_t seq = 1; seq <= desks[i].count; seq++) {
            money_settlement_t s;
            int idx[3];
            bench_settlement((uint64_t)i, seq, &s, idx);
            for (int k = 0; k < 3; k++)
                expected[idx[k]] += s.deltas[k];
            rake += s.rake;
        }
    }
    for (int p = 0; p < nplayers; p++) {
        money_key_wallet(nplayers == MONEY_GEN_PLAYERS ? money_gen_names[p] : player_names[p], key,
                         sizeof key);
        redisAppendCommand(rc, "GET %s", key);
    }
    for (int p = 0; p < nplayers; p++) {
        redisReply *r = NULL;
        if (redisGetReply(rc, (void **)&r) != REDIS_OK || r->type != REDIS_REPLY_STRING ||
            atoll(r->str) != MONEY_GEN_START + expected[p])
            mismatches++;
        freeReplyObject(r);
    }
    money_key_rake(MONEY_GEN_GAME, key, sizeof key);
    char *rv = ts_redis_cmd(redis, "GET %s", key);
    if (rv == NULL || atoll(rv) != rake)
        mismatches++;
    free(rv);
    redisFree(rc);
    free(expected);
    /* Time Redis spent inside the settle script (per call = per batch), from INFO. */
    char *stats = ts_redis_cmd(redis, "INFO commandstats");
    char *line = stats ? strstr(stats, "cmdstat_evalsha:") : NULL;
    long long calls = 0, usec = 0, waits = 0;
    if (line != NULL)
        sscanf(line, "cmdstat_evalsha:calls=%lld,usec=%lld", &calls, &usec);
    line = stats ? strstr(stats, "cmdstat_wait:") : NULL;
    if (line != NULL)
        sscanf(line, "cmdstat_wait:calls=%lld", &waits);
    free(stats);
    double secs = (double)(t1 - t0) / 1e9;
    long nlat = atomic_load(&nlatencies);
    qsort(latencies, (size_t)nlat, sizeof *latencies, cmp_i64);
    double p50 = nlat ? (double)latencies[nlat / 2] / 1e6 : 0.0;
    double p99 = nlat ? (double)latencies[nlat * 99 / 100] / 1e6 : 0.0;
    double pmax = nlat ? (double)latencies[nlat - 1] / 1e6 : 0.0;
    free(latencies);
    *rate_out = (double)total / secs;
    if (min_replicas > 0)
        printf("with WAIT %d (--redis-min-replicas): %lld WAITs, %.1f settlements per WAIT\n",
               min_replicas, waits, waits ? (double)total / (double)waits : 0.0);
    else
        printf("without WAIT:\n");
    printf("settle: %ld settlements (3 of %d wallets each), %d desks, max_inflight %ld, batch_max "
           "%ld: %.3f s, %.0f settlements/s (flushed %ld, ok %ld of which replayed after a resend "
           "%ld, "
           "failed %ld, wallet/rake mismatches %lld)\n",
           total, nplayers, ndesks, inflight, batch, secs, (double)total / secs, flushed,
           atomic_load(&ok_count), atomic_load(&replayed_count), atomic_load(&bad_count),
           (long long)mismatches);
    printf("redis: cpu %.2f s = %.2f us per settlement (%.0f settlements per redis cpu second); "
           "%lld script calls, %.1f settlements per call, script time %.2f us per settlement\n",
           rcpu1 - rcpu0, (rcpu1 - rcpu0) * 1e6 / (double)total, (double)total / (rcpu1 - rcpu0),
           calls, calls ? (double)total / (double)calls : 0.0, (double)usec / (double)total);
    printf("bench process (desks + writer): cpu %.2f s = %.2f us per settlement\n", cpu1 - cpu0,
           (cpu1 - cpu0) * 1e6 / (double)total);
    if (rate > 0)
        printf("latency submit -> done: p50 %.2f ms, p99 %.2f ms, max %.2f ms (paced at %.0f "
               "settlements/s)\n",
               p50, p99, pmax, rate);
    else
        printf("latency submit -> done: p50 %.1f ms, p99 %.1f ms, max %.1f ms (closed loop: the "
               "queue is kept full up to the watermark 8192)\n",
               p50, p99, pmax);
    (void)rate_env;
    (void)rcpu;
    (void)loadavg;
    latencies = NULL;
    return atomic_load(&ok_count) == total && mismatches == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    long total = argc > 1 ? atol(argv[1]) : 200000;
    int ndesks = argc > 2 ? atoi(argv[2]) : 4;
    long inflight = argc > 3 ? atol(argv[3]) : 512;
    long batch = argc > 4 ? atol(argv[4]) : 64;
    nplayers = argc > 5 ? atoi(argv[5]) : MONEY_GEN_PLAYERS;
    if (total < 1 || ndesks < 1 || ndesks > 64 || inflight < 1 || batch < 1 ||
        batch > MONEY_WRITER_BATCH_CAP ||
        (nplayers != MONEY_GEN_PLAYERS && (nplayers <= 20 || nplayers > 10000000))) {
        fprintf(stderr,
                "usage: %s [TOTAL] [DESKS 1..64] [MAX_INFLIGHT] [BATCH_MAX 1..%d] "
                "[PLAYERS 8 or 21..10000000]\n",
                argv[0], MONEY_WRITER_BATCH_CAP);
        return 2;
    }
    player_names = calloc((size_t)nplayers, sizeof *player_names);
    for (int p = 0; p < nplayers; p++)
        snprintf(player_names[p], sizeof player_names[p], "p%d", p);
    log_set_level(LOG_WARN);
    ts_redis_t *redis = ts_redis_start();
    if (redis == NULL)
        return 1;
    /* SETTLE_WAIT=N: N replicas, and two passes on them: without WAIT, then with WAIT N. */
    const char *wait_env = getenv("SETTLE_WAIT");
    int nwait = wait_env != NULL ? atoi(wait_env) : 0;
    if (nwait < 0 || nwait > 4) {
        fprintf(stderr, "SETTLE_WAIT: 0..4 replicas\n");
        return 2;
    }
    ts_redis_t *replicas[4] = {0};
    for (int i = 0; i < nwait; i++) {
        replicas[i] = ts_redis_start_replica(ts_redis_port(redis));
        if (replicas[i] == NULL || ts_redis_wait_synced(replicas[i], 10000) != 0)
            return 1;
    }
    const char *rate_env = getenv("SETTLE_RATE");
    rate = rate_env != NULL ? atof(rate_env) : 0.0;
    const char *rcpu = getenv("SETTLE_REDIS_CPU");
    if (rcpu != NULL && *rcpu != '\0') {
        char *info = ts_redis_cmd(redis, "INFO server");
        pid_t pid = (pid_t)info_field(info, "process_id:");
        free(info);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(atoi(rcpu), &set);
        if (pid <= 0 || sched_setaffinity(pid, sizeof set, &set) != 0) {
            fprintf(stderr, "could not pin redis-server (pid %d) to CPU %s\n", (int)pid, rcpu);
            return 1;
        }
    }
    char loadavg[64] = "?";
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf != NULL) {
        if (fgets(loadavg, sizeof loadavg, lf) != NULL)
            loadavg[strcspn(loadavg, "\n")] = '\0';
        fclose(lf);
    }

    double rates[2] = {0, 0};
    int bad =
        bench_pass(redis, total, ndesks, inflight, batch, rate_env, rcpu, loadavg, 0, &rates[0]);
    if (nwait > 0) {
        /* The same rounds again on an empty store (replicated), now acknowledged after WAIT. */
        free(ts_redis_cmd(redis, "FLUSHALL"));
        if (replicas_caught_up(redis, nwait) != 0) {
            fprintf(stderr, "the replicas did not acknowledge the FLUSHALL\n");
            return 1;
        }
        bad |= bench_pass(redis, total, ndesks, inflight, batch, rate_env, rcpu, loadavg, nwait,
                          &rates[1]);
        printf("WAIT %d: %.0f settlements/s against %.0f without, ratio %.2f\n", nwait, rates[1],
               rates[0], rates[0] > 0 ? rates[1] / rates[0] : 0.0);
    }
    for (int i = 0; i < nwait; i++)
        ts_redis_stop(replicas[i]);
    ts_redis_stop(redis);
    printf("load average at start: %s\n", loadavg);
    printf("command: %s%s%s%s%s%s%sbench/bench_settle %ld %d %ld %ld %d\n",
           nwait > 0 ? "SETTLE_WAIT=" : "", nwait > 0 ? wait_env : "", nwait > 0 ? " " : "",
           rate > 0 ? "SETTLE_RATE=" : "", rate > 0 ? rate_env : "", rate > 0 ? " " : "",
           rcpu ? "SETTLE_REDIS_CPU=<n> taskset -c <m> " : "", total, ndesks, inflight, batch,
           nplayers);
    free(player_names);
    return bad ? 1 : 0;
}
