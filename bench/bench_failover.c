/*
 * bench_failover -- how long settlements stop during a Redis failover, against Sentinel's own
 * detection time (docs/deploy.md "Failover and durability").
 *
 *   bench_failover [FAILOVERS] [MIN_REPLICAS] [RATE] [REPLAY_WINDOW_MS]   (defaults 5 2 500 60000)
 *
 * Starts a redis-server master with two replicas and three sentinels (quorum 2,
 * down-after-milliseconds 1000) on loopback, and a money writer that finds the master through
 * the sentinels and WAITs for MIN_REPLICAS replicas. One desk submits RATE settlements per
 * second. FAILOVERS times: the master is SIGKILLed, Sentinel promotes a replica, the dead node
 * comes back empty as a replica of the new master, and the run waits until the sentinels see
 * it. Per failover it measures
 *   - the gap: the longest time without a settlement completing, around the kill;
 *   - the not-durable time: how long money_writer_can_start_round() answered false (rounds
 *     could not start: a WAIT fell short);
 * and prints p50/p99/max of each over the failovers, and the number of settlements that were
 * acknowledged and are not on the last master (0 unless a lagging replica was promoted and the
 * writer's replay journal did not put them back: REPLAY_WINDOW_MS 0 turns it off), and how
 * many operations the journal applied again; it exits 1 when any are missing.
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
#include "metrics.h"
#include "money_writer.h"
#include "support.h"

#define DOWN_AFTER_MS 1000
#define MAX_ROUNDS 200000

static int64_t done_ns[MAX_ROUNDS + 1]; /* completion time of round seq (0 = not yet / failed) */
static _Atomic long completed;
static _Atomic bool stop;
static money_writer_t *writer;
static double rate = 500;
static _Atomic uint64_t submitted;

static void done_cb(money_result_t *r, void *arg)
{
    uint64_t seq = (uint64_t)(uintptr_t)arg;
    if (r->status == MONEY_OK && seq <= MAX_ROUNDS)
        done_ns[seq] = clock_mono_ns();
    atomic_fetch_add(&completed, 1);
    free(r);
}

static void *desk_main(void *arg)
{
    (void)arg;
    int64_t start = clock_mono_ns();
    for (uint64_t seq = 1; seq <= MAX_ROUNDS && !atomic_load(&stop); seq++) {
        int64_t due = start + (int64_t)((double)seq * 1e9 / rate);
        int64_t now = clock_mono_ns();
        if (due > now)
            usleep((useconds_t)((due - now) / 1000));
        money_settlement_t s;
        money_gen_settlement(1, 0, seq, &s);
        if (money_writer_submit_settle(writer, &s, done_cb, (void *)(uintptr_t)seq) != 0)
            abort();
        atomic_store(&submitted, seq);
    }
    return NULL;
}

/* Samples money_writer_can_start_round() every millisecond; adds the false time to *false_ns
 * while counting is on. */
static _Atomic int64_t false_ns;
static void *sampler_main(void *arg)
{
    (void)arg;
    int64_t last = clock_mono_ns();
    while (!atomic_load(&stop)) {
        usleep(1000);
        int64_t now = clock_mono_ns();
        if (!money_writer_can_start_round(writer))
            atomic_fetch_add(&false_ns, now - last);
        last = now;
    }
    return NULL;
}

/* The value of an unlabelled metric of reg (-1 if absent). */
static double metric_value(metrics_registry_t *reg, const char *name)
{
    size_t len = 0;
    char *text = metrics_render(reg, &len);
    char want[128];
    snprintf(want, sizeof want, "\n%s ", name);
    char *at = text ? strstr(text, want) : NULL;
    double v = at ? atof(at + strlen(want)) : -1;
    free(text);
    return v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int master_port(ts_sentinel_t *const *sen)
{
    for (int i = 0; i < 3; i++) {
        char *t = ts_redis_cmd_port(ts_sentinel_port(sen[i]), "SENTINEL get-master-addr-by-name %s",
                                    "bench");
        const char *nl = t ? strchr(t, '\n') : NULL;
        int p = nl ? atoi(nl + 1) : 0;
        free(t);
        if (p > 0)
            return p;
    }
    return 0;
}

static bool sees_replicas(ts_sentinel_t *const *sen, int n)
{
    char want[32];
    snprintf(want, sizeof want, "num-slaves\n%d\n", n);
    for (int i = 0; i < 3; i++) {
        char *t = ts_redis_cmd_port(ts_sentinel_port(sen[i]), "SENTINEL master %s", "bench");
        bool ok = t != NULL && strstr(t, want) != NULL;
        free(t);
        if (!ok)
            return false;
    }
    return true;
}

static void pct(const char *what, int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    printf("%s: p50 %.0f ms, p99 %.0f ms, max %.0f ms over %d failovers\n", what,
           (double)v[n / 2] / 1e6, (double)v[(n * 99) / 100] / 1e6, (double)v[n - 1] / 1e6, n);
}

int main(int argc, char **argv)
{
    int failovers = argc > 1 ? atoi(argv[1]) : 5;
    int min_replicas = argc > 2 ? atoi(argv[2]) : 2;
    rate = argc > 3 ? atof(argv[3]) : 500;
    int window_ms = argc > 4 ? atoi(argv[4]) : MONEY_WRITER_REPLAY_WINDOW_MS;
    if (failovers < 1 || failovers > 100 || min_replicas < 0 || min_replicas > 2 || rate < 10 ||
        rate > 20000 || window_ms < 0 || window_ms > 3600000) {
        fprintf(stderr,
                "usage: %s [FAILOVERS 1..100] [MIN_REPLICAS 0..2] [RATE 10..20000] "
                "[REPLAY_WINDOW_MS 0..3600000, 0 = no journal]\n",
                argv[0]);
        return 2;
    }
    log_set_level(LOG_FATAL);
    ts_redis_t *node[3];
    node[0] = ts_redis_start();
    if (node[0] == NULL)
        return 1;
    for (int i = 1; i < 3; i++) {
        node[i] = ts_redis_start_replica(ts_redis_port(node[0]));
        if (node[i] == NULL || ts_redis_wait_synced(node[i], 10000) != 0)
            return 1;
    }
    ts_sentinel_t *sen[3];
    char list[128] = "";
    for (int i = 0; i < 3; i++) {
        sen[i] = ts_sentinel_start("bench", ts_redis_port(node[0]), 2, DOWN_AFTER_MS, 3000);
        if (sen[i] == NULL)
            return 1;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s127.0.0.1:%d", i ? "," : "",
                 ts_sentinel_port(sen[i]));
    }
    for (int i = 0; i < 150 && !sees_replicas(sen, 2); i++)
        ts_sleep_ms(100);
    char key[128];
    money_key_epoch("bench", 1, key, sizeof key);
    free(ts_redis_cmd(node[0], "SET %s 1", key));
    for (int p = 0; p < MONEY_GEN_PLAYERS; p++) {
        money_key_wallet(money_gen_names[p], key, sizeof key);
        free(ts_redis_cmd(node[0], "SET %s %lld", key, MONEY_GEN_START));
    }
    metrics_registry_t *reg = metrics_create();
    money_writer_config_t cfg = {.redis_host = "127.0.0.1",
                                 .redis_port = ts_redis_port(node[0]),
                                 .redis_sentinels = list,
                                 .redis_master = "bench",
                                 .service = "bench",
                                 .min_replicas = min_replicas,
                                 .replay_window_ms = window_ms > 0 ? window_ms : -1,
                                 .metrics = reg};
    writer = money_writer_create(&cfg);
    for (int i = 0; i < 500 && !money_writer_connected(writer); i++)
        ts_sleep_ms(10);
    pthread_t desk, sampler;
    pthread_create(&desk, NULL, desk_main, NULL);
    pthread_create(&sampler, NULL, sampler_main, NULL);
    ts_sleep_ms(3000);

    int64_t gaps[100], nondurable[100], kills[100];
    for (int k = 0; k < failovers; k++) {
        int mp = master_port(sen);
        int victim = -1;
        for (int i = 0; i < 3; i++)
            if (ts_redis_port(node[i]) == mp)
                victim = i;
        if (victim < 0) {
            fprintf(stderr, "no master found\n");
            return 1;
        }
        int64_t f0 = atomic_load(&false_ns);
        kills[k] = clock_mono_ns();
        ts_redis_crash(node[victim]);
        int np = 0;
        for (int i = 0; i < 400 && ((np = master_port(sen)) == mp || np == 0); i++)
            ts_sleep_ms(50);
        if (np == mp || np == 0) {
            fprintf(stderr, "no failover within 20 s\n");
            return 1;
        }
        /* The dead node comes back empty, as a replica of the new master. */
        if (ts_redis_restart(node[victim]) != 0)
            return 1;
        free(ts_redis_cmd(node[victim], "REPLICAOF 127.0.0.1 %d", np));
        for (int i = 0; i < 200 && !sees_replicas(sen, 2); i++)
            ts_sleep_ms(100);
        ts_sleep_ms(3000);
        nondurable[k] = atomic_load(&false_ns) - f0;
    }
    atomic_store(&stop, true);
    pthread_join(desk, NULL);
    pthread_join(sampler, NULL);
    money_writer_flush(writer, 30000);
    money_writer_destroy(writer);

    /* The gap around each kill: the longest time between consecutive completions from 1 s
     * before the kill to the end of its window. Completions come in submission order. */
    uint64_t n = atomic_load(&submitted);
    for (int k = 0; k < failovers; k++) {
        int64_t from = kills[k] - 1000000000LL;
        int64_t to = k + 1 < failovers ? kills[k + 1] : clock_mono_ns();
        int64_t prev = 0, gap = 0;
        for (uint64_t s = 1; s <= n; s++) {
            int64_t t = done_ns[s];
            if (t == 0 || t < from || t > to)
                continue;
            if (prev != 0 && t - prev > gap)
                gap = t - prev;
            prev = t;
        }
        gaps[k] = gap;
    }
    long lost = 0, ok = 0;
    ts_redis_t *last = NULL;
    int mp = master_port(sen);
    for (int i = 0; i < 3; i++)
        if (ts_redis_port(node[i]) == mp)
            last = node[i];
    for (uint64_t s = 1; s <= n && last != NULL; s++) {
        if (done_ns[s] == 0)
            continue;
        ok++;
        money_round_id_t rid = {.server = 1, .epoch = 1, .desk = 0, .seq = s};
        char id[MONEY_ID_MAX + 1], rk[160];
        money_round_id_format(&rid, id, sizeof id);
        money_key_round(id, rk, sizeof rk);
        char *t = ts_redis_cmd(last, "EXISTS %s", rk);
        if (t == NULL || strcmp(t, "1") != 0)
            lost++;
        free(t);
    }
    printf("failover: %d failovers (master SIGKILLed, down-after-milliseconds %d), "
           "--redis-min-replicas %d, %.0f settlements/s offered\n",
           failovers, DOWN_AFTER_MS, min_replicas, rate);
    pct("longest time without a settlement completing", gaps, failovers);
    pct("time no round could start (WAIT short)", nondurable, failovers);
    printf("settlements: %lu submitted, %ld acknowledged, %ld of those not on the last master\n",
           (unsigned long)n, ok, lost);
    printf("replay journal (window %d ms): %.0f operations applied again, %.0f reconnects "
           "checked\n",
           window_ms, metric_value(reg, "money_writer_replayed_total"),
           metric_value(reg, "money_writer_journal_checks_total"));
    printf("command: bench/bench_failover %d %d %.0f %d\n", failovers, min_replicas, rate,
           window_ms);
    for (int i = 0; i < 3; i++)
        ts_sentinel_stop(sen[i]);
    for (int i = 0; i < 3; i++)
        ts_redis_stop(node[i]);
    metrics_destroy(reg);
    return lost == 0 ? 0 : 1;
}
