/*
 * bench_registry -- registry propagation on loopback: a game server's state change
 * (ready <-> draining, one fenced script = SET + PUBLISH) until all 10 gateway views
 * (each with its own subscriber connection) have applied it. Starts its own redis-server.
 * Prints p50 / p99 / max over ROUNDS changes. Target: p99 <= 5 ms.
 */
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "lease.h"
#include "log.h"
#include "registry.h"
#include "support.h"

#define VIEWS 10
#define ROUNDS 2000

typedef struct {
    struct event_base *base;
    registry_state_t target;
    int arrived;
    bool seen[VIEWS];
    int64_t done_ns;
} bench_t;

typedef struct {
    bench_t *b;
    int idx;
} view_arg_t;

static void bench_change_cb(registry_view_t *v, const registry_entry_t *e, bool removed, void *arg)
{
    (void)v;
    view_arg_t *va = arg;
    bench_t *b = va->b;
    if (removed || e->state != b->target || b->seen[va->idx])
        return;
    b->seen[va->idx] = true;
    if (++b->arrived == VIEWS) {
        b->done_ns = clock_mono_ns();
        event_base_loopbreak(b->base);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void run_ms(struct event_base *base, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_WARN);
    ts_redis_t *r = ts_redis_start();
    if (r == NULL) {
        fprintf(stderr, "bench_registry: cannot start redis-server\n");
        return 1;
    }
    bench_t b = {.base = event_base_new()};
    rconn_opts_t ro = {.host = "127.0.0.1", .port = ts_redis_port(r), .name = "bench"};
    rconn_t *rc = rconn_create(b.base, &ro);
    lease_opts_t lo = {.service = "bench", .pool_size = 1, .ttl_ms = 10000};
    lease_t *lease = lease_create(b.base, rc, &lo);
    registry_info_t info = {.address = "127.0.0.1:7000", .engine = "holdem"};
    registry_t *reg = registry_create(b.base, rc, lease, &info);
    view_arg_t va[VIEWS];
    registry_view_t *views[VIEWS];
    for (int i = 0; i < VIEWS; i++) {
        va[i] = (view_arg_t){.b = &b, .idx = i};
        registry_view_opts_t vo = {.host = "127.0.0.1",
                                   .port = ts_redis_port(r),
                                   .refresh_ms = 60000,
                                   .on_change = bench_change_cb,
                                   .arg = &va[i]};
        views[i] = registry_view_create(b.base, &vo);
    }
    lease_start(lease);
    for (int i = 0; i < 500 && lease_state(lease) != LEASE_VALID; i++)
        run_ms(b.base, 10);
    if (lease_state(lease) != LEASE_VALID || registry_start(reg) != 0) {
        fprintf(stderr, "bench_registry: no lease\n");
        return 1;
    }
    for (int tries = 0; tries < 500; tries++) {
        int ok = 0;
        for (int i = 0; i < VIEWS; i++)
            ok += registry_view_size(views[i]) == 1;
        if (ok == VIEWS)
            break;
        run_ms(b.base, 10);
    }
    run_ms(b.base, 100); /* every SUBSCRIBE answered */

    int64_t *lat = calloc(ROUNDS, sizeof *lat);
    int done = 0;
    for (int i = 0; i < ROUNDS; i++) {
        b.target = (i % 2 == 0) ? REGISTRY_DRAINING : REGISTRY_READY;
        b.arrived = 0;
        memset(b.seen, 0, sizeof b.seen);
        int64_t t0 = clock_mono_ns();
        registry_set_state(reg, b.target);
        int64_t limit = t0 + 2000000000LL;
        while (b.arrived < VIEWS && clock_mono_ns() < limit)
            event_base_loop(b.base, EVLOOP_ONCE);
        if (b.arrived < VIEWS) {
            fprintf(stderr, "bench_registry: change %d did not reach every view\n", i);
            break;
        }
        lat[done++] = b.done_ns - t0;
    }
    qsort(lat, (size_t)done, sizeof *lat, cmp_i64);
    if (done > 0)
        printf("registry propagation, 1 publisher -> %d views (own subscriber connection each), "
               "%d changes: p50 %.3f ms  p99 %.3f ms  max %.3f ms\n",
               VIEWS, done, lat[done / 2] / 1e6, lat[(done * 99) / 100] / 1e6, lat[done - 1] / 1e6);
    FILE *la = fopen("/proc/loadavg", "r");
    char load[64] = "?";
    if (la != NULL) {
        if (fgets(load, sizeof load, la) != NULL)
            load[strcspn(load, "\n")] = '\0';
        fclose(la);
    }
    printf("load average during the run: %s\n", load);
    printf("command: ./dev bench  (or: build-release/bench/bench_registry)\n");
    free(lat);
    for (int i = 0; i < VIEWS; i++)
        registry_view_destroy(views[i]);
    registry_destroy(reg);
    lease_destroy(lease);
    rconn_destroy(rc);
    event_base_free(b.base);
    ts_redis_stop(r);
    return done == ROUNDS ? 0 : 1;
}
