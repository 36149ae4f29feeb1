/*
 * bench_settle -- settlements per second into a local Redis through the money writer queue.
 *
 *   bench_settle [TOTAL] [DESKS] [MAX_INFLIGHT]     (defaults 200000 4 512)
 *
 * Starts its own redis-server on a free loopback port (tests/support), then DESKS threads submit
 * TOTAL settlements of 3 players each (tests/integration/money_gen.h) as fast as the writer's
 * watermark allows; the clock stops when money_writer_flush() has seen every reply. Prints the
 * rate and checks that every round was applied once (wallets reconcile).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tests/integration/money_gen.h"
#include "clock.h"
#include "log.h"
#include "money_writer.h"
#include "support.h"

static _Atomic long ok_count, bad_count;

static void done_cb(money_result_t *r, void *arg)
{
    (void)arg;
    if (r->status == MONEY_OK && !r->replayed)
        atomic_fetch_add(&ok_count, 1);
    else
        atomic_fetch_add(&bad_count, 1);
    free(r);
}

typedef struct {
    money_writer_t *w;
    uint64_t desk;
    uint64_t count;
} bench_desk_t;

static void *desk_main(void *arg)
{
    bench_desk_t *d = arg;
    for (uint64_t seq = 1; seq <= d->count;) {
        if (!money_writer_can_start_round(d->w)) {
            usleep(100);
            continue;
        }
        money_settlement_t s;
        money_gen_settlement(1, d->desk, seq, &s);
        if (money_writer_submit_settle(d->w, &s, done_cb, NULL) != 0)
            abort();
        seq++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long total = argc > 1 ? atol(argv[1]) : 200000;
    int ndesks = argc > 2 ? atoi(argv[2]) : 4;
    long inflight = argc > 3 ? atol(argv[3]) : 512;
    if (total < 1 || ndesks < 1 || ndesks > 64 || inflight < 1) {
        fprintf(stderr, "usage: %s [TOTAL] [DESKS 1..64] [MAX_INFLIGHT]\n", argv[0]);
        return 2;
    }
    log_set_level(LOG_WARN);
    ts_redis_t *redis = ts_redis_start();
    if (redis == NULL)
        return 1;
    char key[128];
    money_key_epoch("bench", 1, key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s 1", key));
    for (int p = 0; p < MONEY_GEN_PLAYERS; p++) {
        money_key_wallet(money_gen_names[p], key, sizeof key);
        free(ts_redis_cmd(redis, "SET %s %lld", key, MONEY_GEN_START));
    }
    money_writer_config_t cfg = {.redis_host = "127.0.0.1",
                                 .redis_port = ts_redis_port(redis),
                                 .service = "bench",
                                 .high_watermark = 8192,
                                 .max_inflight = (size_t)inflight};
    money_writer_t *w = money_writer_create(&cfg);
    for (int i = 0; i < 200 && !money_writer_connected(w); i++)
        usleep(10000);

    bench_desk_t desks[64];
    pthread_t th[64];
    int64_t t0 = clock_mono_ns();
    for (int i = 0; i < ndesks; i++) {
        desks[i] =
            (bench_desk_t){w, (uint64_t)i, (uint64_t)(total / ndesks + (i < total % ndesks))};
        pthread_create(&th[i], NULL, desk_main, &desks[i]);
    }
    for (int i = 0; i < ndesks; i++)
        pthread_join(th[i], NULL);
    long flushed = money_writer_flush(w, 600000);
    int64_t t1 = clock_mono_ns();
    money_writer_destroy(w);

    int64_t expected[MONEY_GEN_PLAYERS] = {0}, rake = 0, mismatches = 0;
    for (int i = 0; i < ndesks; i++)
        for (uint64_t seq = 1; seq <= desks[i].count; seq++)
            money_gen_expect((uint64_t)i, seq, expected, &rake);
    for (int p = 0; p < MONEY_GEN_PLAYERS; p++) {
        money_key_wallet(money_gen_names[p], key, sizeof key);
        char *v = ts_redis_cmd(redis, "GET %s", key);
        if (v == NULL || atoll(v) != MONEY_GEN_START + expected[p])
            mismatches++;
        free(v);
    }
    /* Time Redis spent inside the settle script (per call = per batch), from INFO. */
    char *stats = ts_redis_cmd(redis, "INFO commandstats");
    char *line = stats ? strstr(stats, "cmdstat_evalsha:") : NULL;
    long long calls = 0, usec = 0;
    if (line != NULL)
        sscanf(line, "cmdstat_evalsha:calls=%lld,usec=%lld", &calls, &usec);
    free(stats);
    ts_redis_stop(redis);
    double secs = (double)(t1 - t0) / 1e9;
    printf("settle: %ld settlements (3 wallets each), %d desks, max_inflight %ld: %.3f s, "
           "%.0f settlements/s (flushed %ld, ok %ld, other %ld, wallet mismatches %lld)\n",
           total, ndesks, inflight, secs, (double)total / secs, flushed, atomic_load(&ok_count),
           atomic_load(&bad_count), (long long)mismatches);
    printf("redis: %lld script calls, %.1f settlements per call, %.2f us of script time per "
           "settlement\n",
           calls, calls ? (double)total / (double)calls : 0.0,
           total ? (double)usec / (double)total : 0.0);
    printf("command: bench/bench_settle %ld %d %ld\n", total, ndesks, inflight);
    return atomic_load(&ok_count) == total && mismatches == 0 ? 0 : 1;
}
