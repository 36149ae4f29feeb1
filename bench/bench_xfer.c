/*
 * bench_xfer -- transfers between slots per second and their latency on a 3-master Redis
 * Cluster on loopback (money/xfer.h; docs/queues.md "Redis Cluster: keys by entity and
 * transfers between slots").
 *
 *   bench_xfer [TRANSFERS] [CLIENTS] [WAIT_REPLICAS] [ACCOUNTS]   (defaults 5000 2 1 1000)
 *
 * Starts a cluster of 3 masters with one replica each (tests/support/tcluster.h), seeds
 * ACCOUNTS wallets ({p:N}:bal, spread over the masters by their tags), then CLIENTS threads
 * (one blocking rcluster client each) run TRANSFERS transfers in all between random wallets of
 * different slots, each transfer being debit + WAIT + credit + WAIT + ack (WAIT_REPLICAS 0: no
 * WAIT). Prints transfers/s and the p50/p99/max latency of one transfer, checks with the audit
 * that nothing was made or lost (exit 1 if not), and the command line.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "tcluster.h"
#include "xfer.h"

typedef struct {
    int idx, count, wait;
    int accounts;
    const char *seeds;
    long long *lat_us; /* count entries */
    int failed;
} worker_t;

static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    char err[600];
    rcluster_t *c = rcluster_create(w->seeds, NULL, err, sizeof err);
    if (c == NULL) {
        fprintf(stderr, "worker %d: %s\n", w->idx, err);
        w->failed = w->count;
        return NULL;
    }
    xfer_opts_t o = {.wait_replicas = w->wait, .wait_timeout_ms = 1000};
    xfer_t *x = xfer_create(c, &o);
    unsigned seed = 1234u + (unsigned)w->idx;
    for (int i = 0; i < w->count; i++) {
        char src[32], dst[32], id[48];
        int a = rand_r(&seed) % w->accounts, b;
        do
            b = rand_r(&seed) % w->accounts;
        while (b == a);
        snprintf(src, sizeof src, "{p:%d}:bal", a);
        snprintf(dst, sizeof dst, "{p:%d}:bal", b);
        if (rcluster_key_slot(src, strlen(src)) == rcluster_key_slot(dst, strlen(dst))) {
            i--;
            continue;
        }
        snprintf(id, sizeof id, "bench-%d-%d", w->idx, i);
        xfer_result_t res;
        long long t0 = now_us();
        int rc = xfer_transfer(x, id, src, dst, 1, &res);
        w->lat_us[i] = now_us() - t0;
        if (rc != 0 || res.state != XFER_COMPLETED) {
            if (w->failed++ < 3)
                fprintf(stderr, "%s: %d %s\n", id, rc, res.reason);
        }
    }
    xfer_destroy(x);
    rcluster_destroy(c);
    return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int total = argc > 1 ? atoi(argv[1]) : 5000;
    int clients = argc > 2 ? atoi(argv[2]) : 2;
    int wait = argc > 3 ? atoi(argv[3]) : 1;
    int accounts = argc > 4 ? atoi(argv[4]) : 1000;
    if (total < 1 || clients < 1 || clients > 64 || wait < 0 || wait > 1 || accounts < 2) {
        fprintf(stderr, "usage: bench_xfer [TRANSFERS>=1] [CLIENTS 1..64] [WAIT_REPLICAS 0|1] "
                        "[ACCOUNTS>=2]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    ts_cluster_t *cl = ts_cluster_start(3, 1);
    if (cl == NULL) {
        fprintf(stderr, "bench_xfer: could not start the cluster\n");
        return 1;
    }
    char err[600];
    rcluster_t *c = rcluster_create(ts_cluster_seeds(cl), NULL, err, sizeof err);
    if (c == NULL) {
        fprintf(stderr, "bench_xfer: %s\n", err);
        ts_cluster_stop(cl);
        return 1;
    }
    xfer_t *x = xfer_create(c, NULL);
    for (int i = 0; i < accounts; i++) {
        char key[32], op[32];
        snprintf(key, sizeof key, "{p:%d}:bal", i);
        snprintf(op, sizeof op, "bench-seed-%d", i);
        if (xfer_seed(x, key, 1000000, op) != 0) {
            fprintf(stderr, "seed %s: %s\n", key, xfer_last_error(x));
            return 1;
        }
    }
    worker_t *w = calloc((size_t)clients, sizeof *w);
    pthread_t *th = calloc((size_t)clients, sizeof *th);
    long long *lat = calloc((size_t)total, sizeof *lat);
    int off = 0;
    long long t0 = now_us();
    for (int k = 0; k < clients; k++) {
        int n = total / clients + (k < total % clients);
        w[k] = (worker_t){.idx = k,
                          .count = n,
                          .wait = wait,
                          .accounts = accounts,
                          .seeds = ts_cluster_seeds(cl),
                          .lat_us = lat + off};
        off += n;
        pthread_create(&th[k], NULL, worker, &w[k]);
    }
    int failed = 0;
    for (int k = 0; k < clients; k++) {
        pthread_join(th[k], NULL);
        failed += w[k].failed;
    }
    double secs = (double)(now_us() - t0) / 1e6;
    qsort(lat, (size_t)total, sizeof *lat, cmp_ll);
    xfer_audit_t a;
    int rc = xfer_audit(x, &a);
    printf("xfer: %d transfers between slots (%d clients, WAIT %d replica(s), %d wallets on 3 "
           "masters): %.0f transfers/s; latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; "
           "%d failed\n",
           total, clients, wait, accounts, total / secs, lat[total / 2] / 1000.0,
           lat[(size_t)((total - 1) * 0.99)] / 1000.0, lat[total - 1] / 1000.0, failed);
    printf("audit: %s (balances %lld + in flight %lld, seeded %lld)\n",
           rc == 0 && a.balanced ? "balanced" : "NOT BALANCED", a.balances, a.in_flight_amount,
           a.seeded);
    printf("command: bench/bench_xfer %d %d %d %d\n", total, clients, wait, accounts);
    xfer_destroy(x);
    rcluster_destroy(c);
    ts_cluster_stop(cl);
    free(w);
    free(th);
    free(lat);
    return rc == 0 && a.balanced && failed == 0 ? 0 : 1;
}
