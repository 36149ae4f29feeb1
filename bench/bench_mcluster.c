/*
 * bench_mcluster -- settlements per second and Redis CPU per settlement with the game server's
 * money by entity (money/mcluster.h; docs/queues.md "The game server's money by entity") on a
 * 1-master and a 3-master Redis Cluster, in one run (issue 34's benchmark).
 *
 *   bench_mcluster [SETTLEMENTS] [THREADS] [EPOCHS] [BATCH] [SEATS]
 *                                                    (defaults 100000 2 24 64 8)
 *
 * Each pass starts its own cluster on loopback (tests/support/tcluster.h, no replicas: only
 * the masters' CPU is measured, and replicas would take the 2 cores; MCLUSTER_REPLICAS=1: one
 * replica per master and a WAIT for it after every write), seeds EPOCHS x SEATS wallets
 * ({p:<player>}:bal), opens EPOCHS server epochs ({s:bench:<n>:1}, spread over the masters by
 * their tags), buys every seat in and then tops seats up MCLUSTER_TOPUPS times (default 1000;
 * each a hold and a transfer between slots: their rate and p50/p99 on one client are
 * printed); then THREADS threads (one blocking rcluster client each, each
 * owning every THREADS-th epoch) settle SETTLEMENTS rounds in all, BATCH rounds of one epoch
 * per call (mcluster_settle_batch), each round moving chips between 3 of the epoch's SEATS
 * seat accounts with a rake of 1. Printed per pass: settlements/s, Redis CPU (INFO cpu, user +
 * sys, every master) per settlement, each master's share of that CPU and of the keys; at the
 * end the ratio of the 3-master figure to the 1-master one. Every round must be applied once
 * and the conservation audit must balance (exit 1 if not).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keytag.h"
#include "log.h"
#include "mcluster.h"
#include "support.h"
#include "tcluster.h"

/* MCLUSTER_REPLICAS (0 or 1): replicas per master, every write then WAITs for one;
 * MCLUSTER_TOPUPS: top-ups of one chip after the buy-ins (their rate and latency). */
static int g_replicas, g_topups = 1000;

typedef struct {
    int idx, nthreads, epochs, seats, batch;
    long count; /* settlements for this thread */
    const char *seeds;
    long ok, bad;
} worker_t;

static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void player_name(int epoch, int seat, char *buf, size_t len)
{
    snprintf(buf, len, "b%d.%d", epoch, seat);
}

static void acct_name(int seat, char *buf, size_t len)
{
    snprintf(buf, len, "ts.%d", seat);
}

static void *settler(void *arg)
{
    worker_t *w = arg;
    char err[600];
    rcluster_t *c = rcluster_create(w->seeds, NULL, err, sizeof err);
    if (c == NULL) {
        fprintf(stderr, "settler %d: %s\n", w->idx, err);
        w->bad = w->count;
        return NULL;
    }
    mcluster_opts_t mo = {.xfer = {.wait_replicas = g_replicas, .wait_timeout_ms = 1000}};
    mcluster_t *m = mcluster_create(c, &mo);
    money_settlement_t *s = calloc((size_t)w->batch, sizeof *s);
    money_result_t *out = calloc((size_t)w->batch, sizeof *out);
    char names[16][16];
    for (int i = 0; i < w->seats && i < 16; i++)
        acct_name(i, names[i], sizeof names[i]);
    unsigned seed = 99u + (unsigned)w->idx;
    uint64_t seq = 0;
    int e = w->idx;
    for (long done = 0; done < w->count;) {
        int n = (int)(w->count - done < w->batch ? w->count - done : w->batch);
        for (int i = 0; i < n; i++) {
            money_settlement_t *r = &s[i];
            memset(r, 0, sizeof *r);
            r->round =
                (money_round_id_t){.server = (uint32_t)e, .epoch = 1, .desk = 1, .seq = ++seq};
            money_round_id_set_service(&r->round, "bench");
            r->game = "holdem";
            r->nplayers = 3;
            int a = rand_r(&seed) % w->seats, b = (a + 1) % w->seats, d = (a + 2) % w->seats;
            r->players[0] = names[a];
            r->players[1] = names[b];
            r->players[2] = names[d];
            r->deltas[0] = 1; /* the winner takes 2, the rake 1 */
            r->deltas[1] = -1;
            r->deltas[2] = -1;
            if (rand_r(&seed) % 2) { /* and back, so that no stack runs dry */
                r->deltas[0] = -2;
                r->deltas[1] = 1;
                r->deltas[2] = 0;
            }
            r->rake = 1;
        }
        mcluster_settle_batch(m, "bench", s, (size_t)n, out);
        for (int i = 0; i < n; i++) {
            if (out[i].status == MONEY_OK && !out[i].replayed)
                w->ok++;
            else {
                if (w->bad++ < 3)
                    fprintf(stderr, "settle %s: %d %s\n", out[i].id, out[i].status, out[i].error);
            }
        }
        done += n;
        e += w->nthreads;
        if (e >= w->epochs)
            e = w->idx;
    }
    free(s);
    free(out);
    mcluster_destroy(m);
    rcluster_destroy(c);
    return NULL;
}

/* A numeric field "name:value" of an INFO reply, or -1. */
static double info_field(const char *info, const char *name)
{
    const char *p = info ? strstr(info, name) : NULL;
    return p ? atof(p + strlen(name)) : -1.0;
}

static double node_cpu_s(ts_cluster_t *cl, int i)
{
    char *info = ts_cluster_cmd(cl, i, "INFO cpu");
    double u = info_field(info, "used_cpu_user:"), s = info_field(info, "used_cpu_sys:");
    free(info);
    return u < 0 || s < 0 ? -1 : u + s;
}

static long node_keys(ts_cluster_t *cl, int i)
{
    char *r = ts_cluster_cmd(cl, i, "DBSIZE");
    long n = r != NULL ? atol(r) : -1;
    free(r);
    return n;
}

typedef struct {
    double rate, cpu_us, busiest_share, buyin_rate;
    long long buyin_p50, buyin_p99;
} pass_t;

/* One pass on a fresh cluster of `masters` masters; 0 or -1. */
static int bench_pass(int masters, long total, int nthreads, int epochs, int batch, int seats,
                      pass_t *res)
{
    ts_cluster_t *cl = ts_cluster_start(masters, g_replicas);
    if (cl == NULL)
        return -1;
    const char *seeds = ts_cluster_seeds(cl);
    char err[600];
    rcluster_t *c = rcluster_create(seeds, NULL, err, sizeof err);
    if (c == NULL) {
        fprintf(stderr, "%s\n", err);
        ts_cluster_stop(cl);
        return -1;
    }
    mcluster_opts_t mo = {.xfer = {.wait_replicas = g_replicas, .wait_timeout_ms = 1000}};
    mcluster_t *m = mcluster_create(c, &mo);
    int rc = 0;
    /* the lease fences of the epochs: each server slot e holds epoch 1 */
    long long *lat = calloc((size_t)(epochs * seats + g_topups), sizeof *lat);
    int nlat = 0;
    long long t0 = now_us();
    for (int e = 0; e < epochs && rc == 0; e++) {
        char lt[160], key[200];
        keytag_lease(lt, sizeof lt, "bench");
        snprintf(key, sizeof key, "%s:slot:%d:epoch", lt, e);
        redisReply *r = rcluster_command(c, RCLUSTER_RESEND, key, "SET %s 1", key);
        freeReplyObject(r);
        if (mcluster_epoch_open(m, "bench", (uint32_t)e, 1, err, sizeof err) != MONEY_OK) {
            fprintf(stderr, "open: %s\n", err);
            rc = -1;
        }
        for (int s = 0; s < seats && rc == 0; s++) {
            char p[32], a[32], wk[64], op[48];
            player_name(e, s, p, sizeof p);
            acct_name(s, a, sizeof a);
            mcluster_key_wallet(p, wk, sizeof wk);
            snprintf(op, sizeof op, "seed.%s", p);
            if (xfer_seed(mcluster_xfer(m), wk, 1000000, op) != 0) {
                fprintf(stderr, "seed: %s\n", xfer_last_error(mcluster_xfer(m)));
                rc = -1;
                break;
            }
            money_seat_t st = {.slot = (uint32_t)e, .epoch = 1, .account = a, .owner = p};
            money_result_t out;
            snprintf(op, sizeof op, "in.%d.%d", e, s);
            long long b0 = now_us();
            if (mcluster_seat(m, "bench", MONEY_KIND_SEAT_IN, &st, 500000, op, &out) != MONEY_OK) {
                fprintf(stderr, "buy-in: %s\n", out.error);
                rc = -1;
            }
            lat[nlat++] = now_us() - b0;
        }
    }
    /* top-ups of one chip, round robin over the seats: the same cross-slot path */
    for (int k = 0; k < g_topups && rc == 0; k++) {
        int e = k % epochs, st = (k / epochs) % seats;
        char p[32], a[32], op[48];
        player_name(e, st, p, sizeof p);
        acct_name(st, a, sizeof a);
        money_seat_t ms = {.slot = (uint32_t)e, .epoch = 1, .account = a, .owner = p};
        money_result_t out;
        snprintf(op, sizeof op, "top.%d", k);
        long long b0 = now_us();
        if (mcluster_seat(m, "bench", MONEY_KIND_SEAT_IN, &ms, 1, op, &out) != MONEY_OK) {
            fprintf(stderr, "top-up: %s\n", out.error);
            rc = -1;
        }
        lat[nlat++] = now_us() - b0;
    }
    long long setup_us = now_us() - t0;
    (void)setup_us;
    if (rc == 0 && nlat > 0) {
        long long sum = 0;
        for (int i = 0; i < nlat; i++)
            sum += lat[i];
        qsort(lat, (size_t)nlat, sizeof *lat, cmp_ll);
        res->buyin_rate = (double)nlat * 1e6 / (double)sum;
        res->buyin_p50 = lat[nlat / 2];
        res->buyin_p99 = lat[(nlat * 99) / 100 < nlat ? (nlat * 99) / 100 : nlat - 1];
    }
    free(lat);

    double cpu0[8] = {0}, cpu1[8] = {0};
    for (int i = 0; i < masters; i++)
        cpu0[i] = node_cpu_s(cl, i);
    worker_t w[16];
    pthread_t th[16];
    long long s0 = now_us();
    for (int t = 0; t < nthreads && rc == 0; t++) {
        w[t] = (worker_t){.idx = t,
                          .nthreads = nthreads,
                          .epochs = epochs,
                          .seats = seats,
                          .batch = batch,
                          .count = total / nthreads,
                          .seeds = seeds};
        if (t == nthreads - 1)
            w[t].count += total % nthreads;
        pthread_create(&th[t], NULL, settler, &w[t]);
    }
    long ok = 0, bad = 0;
    for (int t = 0; t < nthreads && rc == 0; t++) {
        pthread_join(th[t], NULL);
        ok += w[t].ok;
        bad += w[t].bad;
    }
    long long el = now_us() - s0;
    double total_cpu = 0;
    for (int i = 0; i < masters; i++) {
        cpu1[i] = node_cpu_s(cl, i);
        total_cpu += cpu1[i] - cpu0[i];
    }
    if (rc == 0) {
        res->rate = (double)ok * 1e6 / (double)el;
        res->cpu_us = total_cpu * 1e6 / (double)(ok > 0 ? ok : 1);
        printf("%d master%s: %ld settlements in %.2f s = %.0f/s; redis cpu %.2f s = %.2f us per "
               "settlement; %ld refused\n",
               masters, masters > 1 ? "s" : "", ok, (double)el / 1e6, res->rate, total_cpu,
               res->cpu_us, bad);
        printf("  buy-ins and top-ups (hold + transfer between slots, %s): %d, %.0f/s on one "
               "client; p50 %.2f ms, p99 %.2f ms\n",
               g_replicas ? "WAIT 1 after each write" : "no replica", epochs * seats + g_topups,
               res->buyin_rate, (double)res->buyin_p50 / 1000.0, (double)res->buyin_p99 / 1000.0);
        res->busiest_share = 0;
        long keys_total = 0, keys[8];
        for (int i = 0; i < masters; i++)
            keys_total += keys[i] = node_keys(cl, i);
        for (int i = 0; i < masters; i++) {
            double share = total_cpu > 0 ? (cpu1[i] - cpu0[i]) / total_cpu : 0;
            if (share > res->busiest_share)
                res->busiest_share = share;
            printf("  master %d: %.1f%% of the redis cpu, %ld keys (%.1f%%)\n", i, 100 * share,
                   keys[i], keys_total > 0 ? 100.0 * (double)keys[i] / (double)keys_total : 0);
        }
        if (bad != 0)
            rc = -1;
        xfer_audit_t a;
        int x = xfer_audit(mcluster_xfer(m), &a);
        printf("  audit: %s (accounts %zu, balances %lld, seeded %lld, in flight %lld)\n",
               x == 0 && a.balanced ? "balanced" : "NOT BALANCED", a.accounts, a.balances, a.seeded,
               a.in_flight_amount);
        if (x != 0 || !a.balanced)
            rc = -1;
    }
    mcluster_destroy(m);
    rcluster_destroy(c);
    ts_cluster_stop(cl);
    return rc;
}

int main(int argc, char **argv)
{
    long total = argc > 1 ? atol(argv[1]) : 100000;
    int nthreads = argc > 2 ? atoi(argv[2]) : 2;
    int epochs = argc > 3 ? atoi(argv[3]) : 24;
    int batch = argc > 4 ? atoi(argv[4]) : 64;
    int seats = argc > 5 ? atoi(argv[5]) : 8;
    if (total < 1 || nthreads < 1 || nthreads > 16 || epochs < nthreads || batch < 1 ||
        batch > 256 || seats < 3 || seats > 16) {
        fprintf(stderr, "usage: bench_mcluster [SETTLEMENTS >= 1] [THREADS 1..16] [EPOCHS >= "
                        "THREADS] [BATCH 1..256] [SEATS 3..16]\n");
        return 2;
    }
    const char *env = getenv("MCLUSTER_REPLICAS");
    g_replicas = env != NULL && atoi(env) > 0 ? 1 : 0;
    env = getenv("MCLUSTER_TOPUPS");
    if (env != NULL && atoi(env) >= 0)
        g_topups = atoi(env);
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_ERROR + 1);
    keytag_set_cluster(true);
    char why[200];
    if (!ts_cluster_supported(why, sizeof why)) {
        fprintf(stderr, "bench_mcluster: no Redis Cluster here: %s\n", why);
        return 1;
    }
    pass_t one = {0}, three = {0};
    int bad = bench_pass(1, total, nthreads, epochs, batch, seats, &one);
    bad |= bench_pass(3, total, nthreads, epochs, batch, seats, &three);
    if (bad == 0 && one.cpu_us > 0)
        printf("3 masters / 1 master: redis cpu per settlement %.2fx (target <= 1.2x), busiest "
               "master %.1f%% of the cpu (target <= 40%%), settlements/s %.2fx\n",
               three.cpu_us / one.cpu_us, 100 * three.busiest_share, three.rate / one.rate);
    printf("command: %sMCLUSTER_TOPUPS=%d bench_mcluster %ld %d %d %d %d\n",
           g_replicas ? "MCLUSTER_REPLICAS=1 " : "", g_topups, total, nthreads, epochs, batch,
           seats);
    return bad == 0 ? 0 : 1;
}
