/*
 * bench_game_drain -- drain overhead of the real game server (issue 4's benchmark).
 *
 * For each run: a fresh croupier-game (--engine test) on a real redis-server, two players seated
 * through a real rpc link, rounds running back to back. The real k8s/prestop.sh is started under
 * busybox; when the round in progress ends (seen as its RoundEnd push) the clock starts, and we
 * record when preStop returns and, after SIGTERM is sent at that moment (as kubelet does), when
 * the process has exited. Prints p50/p99/max of both over the runs.
 *
 * usage: bench_game_drain [RUNS]   (default 30; bench/run.sh sets CROUPIER_BUILD and
 *        CROUPIER_SOURCE)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpcc.h"
#include "support.h"

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, long long *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_ll);
    int p99 = (int)((n - 1) * 0.99 + 0.5);
    printf("%-34s n=%d p50=%.1f ms p99=%.1f ms max=%.1f ms\n", what, n, v[n / 2] / 1000.0,
           v[p99] / 1000.0, v[n - 1] / 1000.0);
}

static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Waits for a RoundEnd push whose round id differs from *last; returns 0 or -1 on timeout. */
static int wait_round_end(rpcc_t *c, char *last, size_t cap, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0)
            return -1;
        Croupier__RpcFrame *f = rpcc_next_event(c, left);
        if (f == NULL)
            return -1;
        int hit = f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
                  f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END &&
                  strcmp(f->push->round_end->round_id, last) != 0;
        if (hit)
            snprintf(last, cap, "%s", f->push->round_end->round_id);
        frame_free_rpc(f);
        if (hit)
            return 0;
    }
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 30;
    if (runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: %s [RUNS 1..1000]\n", argv[0]);
        return 2;
    }
    if (getenv("CROUPIER_BUILD") == NULL || getenv("CROUPIER_SOURCE") == NULL) {
        fprintf(stderr, "set CROUPIER_BUILD and CROUPIER_SOURCE (bench/run.sh does)\n");
        return 2;
    }
    long long *pre = calloc((size_t)runs, sizeof *pre);
    long long *ex = calloc((size_t)runs, sizeof *ex);
    int done = 0;
    ts_redis_t *redis = ts_redis_start();
    if (redis == NULL)
        return 1;
    for (int r = 0; r < runs; r++) {
        int rpc = ts_free_port(), health = ts_free_port();
        char listen[64], hl[64], port_env[48];
        snprintf(listen, sizeof listen, "127.0.0.1:%d", rpc);
        snprintf(hl, sizeof hl, "127.0.0.1:%d", health);
        snprintf(port_env, sizeof port_env, "HEALTH_PORT=%d", health);
        char *gargv[] = {(char *)ts_build_path("engine/process/croupier-game"),
                         "--engine",
                         "test",
                         "--listen",
                         listen,
                         "--advertise",
                         listen,
                         "--health-listen",
                         hl,
                         "--redis",
                         (char *)ts_redis_addr(redis),
                         "--lease-ttl-ms",
                         "900",
                         "--drain-max-seconds",
                         "60",
                         NULL};
        char *genv[] = {"CROUPIER_TEST_ROUND_MS=400", "CROUPIER_TEST_GAP_MS=5", NULL};
        ts_proc_t *g = ts_proc_spawn(gargv, genv);
        if (ts_http_wait_status("127.0.0.1", health, "/readyz", 200, 10000) != 0) {
            fprintf(stderr, "run %d: server not ready (%s)\n", r, ts_proc_log_path(g));
            ts_proc_free(g);
            continue;
        }
        rpcc_t *c = rpcc_connect("127.0.0.1", rpc, 5000);
        char last[128] = "";
        rpcc_join(c, 1, 7000 + (uint64_t)r * 2, "test", 10, 0);
        rpcc_join(c, 2, 7001 + (uint64_t)r * 2, "test", 10, 0);
        if (c == NULL || wait_round_end(c, last, sizeof last, 5000) != 0) {
            fprintf(stderr, "run %d: no round\n", r);
            rpcc_close(c);
            ts_proc_free(g);
            continue;
        }
        usleep(100000); /* the next round is under way */
        char *pargv[] = {"/bin/busybox", "sh", (char *)ts_source_path("k8s/prestop.sh"), NULL};
        char *penv[] = {port_env, "DRAIN_MAX_SECONDS=60", NULL};
        ts_proc_t *p = ts_proc_spawn(pargv, penv);
        if (wait_round_end(c, last, sizeof last, 5000) != 0) {
            fprintf(stderr, "run %d: round did not end\n", r);
        } else {
            long long t0 = now_us();
            ts_proc_wait(p, 10000, NULL);
            long long t1 = now_us();
            ts_proc_signal(g, SIGTERM);
            ts_proc_wait(g, 10000, NULL);
            long long t2 = now_us();
            pre[done] = t1 - t0;
            ex[done] = t2 - t0;
            done++;
        }
        ts_proc_free(p);
        rpcc_close(c);
        ts_proc_free(g);
    }
    ts_redis_stop(redis);
    if (done == 0)
        return 1;
    report("last round end -> preStop return", pre, done);
    report("last round end -> process exit", ex, done);
    printf("command: build-release/bench/bench_game_drain %d\n", runs);
    free(pre);
    free(ex);
    return 0;
}
