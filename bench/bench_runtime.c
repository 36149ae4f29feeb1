/*
 * bench_runtime -- throughput and footprint of the desk-actor runtime (engine/runtime.h).
 *
 *   bench_runtime [SECONDS_PER_CASE]   (default 2)
 *
 * Prints, one line each:
 *   ping-pong: desk pairs bouncing one message each (many pairs in flight), with 1 worker, with
 *              2 workers and each pair on one worker, and with 2 workers and every pair split
 *              across the workers. Figure: messages delivered per second.
 *   fan-in:    T poster threads (not workers) posting to 1000 desks spread over the workers,
 *              one rt_post per message, then in rt_post_batch calls of 256 messages.
 *   create:    time to create 100k desks from one thread, and to destroy them (posted).
 *   memory:    RSS growth per idle desk over 100k desks, and the runtime's per-desk struct size.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "runtime.h"

enum { MSG_PING = RT_MSG_USER, MSG_COUNT };

typedef struct {
    rt_desk_id_t peer;
} pinger_t;

static void pinger_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    pinger_t *p = state;
    if (msg->type == MSG_PING)
        rt_post(rt_desk_rt(desk), p->peer, msg);
}

static const rt_desk_ops_t pinger_ops = {pinger_on_message, NULL};

/* Runs `pairs` ping-pong pairs for `seconds`; returns delivered messages per second. */
static double bench_pingpong(unsigned workers, int pairs, bool split, double seconds)
{
    rt_t *rt;
    if (rt_create(workers, &rt) != 0)
        abort();
    pinger_t *st = calloc((size_t)pairs * 2, sizeof(*st));
    rt_desk_id_t *ids = calloc((size_t)pairs * 2, sizeof(*ids));
    for (int i = 0; i < pairs; i++) {
        int wa = split ? 0 : i % (int)workers, wb = split ? 1 : wa;
        if (rt_desk_create(rt, &pinger_ops, &st[2 * i], wa, &ids[2 * i]) != 0 ||
            rt_desk_create(rt, &pinger_ops, &st[2 * i + 1], wb, &ids[2 * i + 1]) != 0)
            abort();
    }
    /* Peers are set before the first message, so the workers read them after the post. */
    for (int i = 0; i < pairs; i++) {
        st[2 * i].peer = ids[2 * i + 1];
        st[2 * i + 1].peer = ids[2 * i];
    }
    for (int i = 0; i < pairs; i++)
        rt_post(rt, ids[2 * i], &(rt_msg_t){.type = MSG_PING});
    usleep(100000); /* warm up */
    uint64_t m0 = rt_messages_delivered(rt);
    int64_t t0 = clock_mono_ns();
    usleep((useconds_t)(seconds * 1e6));
    uint64_t m1 = rt_messages_delivered(rt);
    int64_t t1 = clock_mono_ns();
    rt_destroy(rt);
    free(st);
    free(ids);
    return (double)(m1 - m0) / ((double)(t1 - t0) / 1e9);
}

static void counter_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    (void)desk;
    (void)msg;
    (*(uint64_t *)state)++;
}

static const rt_desk_ops_t counter_ops = {counter_on_message, NULL};

typedef struct {
    rt_t *rt;
    rt_desk_id_t *ids;
    int ndesks;
    long count;
    bool batched;
} poster_t;

static void *poster_main(void *arg)
{
    enum { B = 256 };
    poster_t *p = arg;
    if (!p->batched) {
        for (long i = 0; i < p->count; i++)
            rt_post(p->rt, p->ids[i % p->ndesks],
                    &(rt_msg_t){.type = MSG_COUNT, .arg = (uint64_t)i});
        return NULL;
    }
    rt_desk_id_t to[B];
    rt_msg_t msgs[B];
    for (long i = 0; i < p->count;) {
        size_t n = 0;
        for (; n < B && i < p->count; n++, i++) {
            to[n] = p->ids[i % p->ndesks];
            msgs[n] = (rt_msg_t){.type = MSG_COUNT, .arg = (uint64_t)i};
        }
        rt_post_batch(p->rt, to, msgs, n);
    }
    return NULL;
}

/* T posters each post `per_thread` messages; returns delivered messages per second, measured
 * from the first post to the last delivery. */
static double bench_fanin(unsigned workers, int threads, long per_thread, bool batched)
{
    enum { NDESKS = 1000 };
    rt_t *rt;
    if (rt_create(workers, &rt) != 0)
        abort();
    uint64_t *counts = calloc(NDESKS, sizeof(*counts));
    rt_desk_id_t ids[NDESKS];
    for (int i = 0; i < NDESKS; i++)
        if (rt_desk_create(rt, &counter_ops, &counts[i], -1, &ids[i]) != 0)
            abort();
    pthread_t th[16];
    poster_t p = {rt, ids, NDESKS, per_thread, batched};
    uint64_t want = (uint64_t)threads * (uint64_t)per_thread;
    int64_t t0 = clock_mono_ns();
    for (int t = 0; t < threads; t++)
        pthread_create(&th[t], NULL, poster_main, &p);
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    while (rt_messages_delivered(rt) < want)
        usleep(100);
    int64_t t1 = clock_mono_ns();
    rt_destroy(rt);
    free(counts);
    return (double)want / ((double)(t1 - t0) / 1e9);
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void idle_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    (void)desk;
    (void)state;
    (void)msg;
}

static const rt_desk_ops_t idle_ops = {idle_on_message, NULL};

static void bench_create_and_memory(void)
{
    enum { N = 100000 };
    rt_t *rt;
    if (rt_create(2, &rt) != 0)
        abort();
    rt_desk_id_t *ids = calloc(N, sizeof(*ids));
    long rss0 = rss_kib();
    int64_t t0 = clock_mono_ns();
    for (int i = 0; i < N; i++)
        if (rt_desk_create(rt, &idle_ops, NULL, -1, &ids[i]) != 0)
            abort();
    int64_t t1 = clock_mono_ns();
    long rss1 = rss_kib();
    for (int i = 0; i < N; i++)
        rt_post_destroy(rt, ids[i]);
    while (rt_desks(rt) > 0)
        usleep(100);
    int64_t t2 = clock_mono_ns();
    printf("create: 100000 desks (2 workers, one creating thread) in %.1f ms; "
           "destroyed (posted) in %.1f ms\n",
           (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6);
    printf("memory: RSS +%.1f bytes per idle desk over 100000 desks; "
           "rt_desk_t = %zu bytes (state not included)\n",
           (double)(rss1 - rss0) * 1024.0 / N, rt_desk_overhead_bytes());
    rt_destroy(rt);
    free(ids);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    if (secs <= 0 || secs > 60) {
        fprintf(stderr, "usage: %s [SECONDS_PER_CASE (0..60], default 2]\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* The machine is shared: the load average says how much else was running. */
    char load[64] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(load, sizeof(load), f))
            strcpy(load, "?\n");
        fclose(f);
    }
    printf("bench_runtime: %.1f s per throughput case; load average at start: %s", secs, load);
    printf("ping-pong 1 worker, 1000 pairs: %.2f M msg/s\n",
           bench_pingpong(1, 1000, false, secs) / 1e6);
    printf("ping-pong 2 workers, 1000 pairs, each pair on one worker: %.2f M msg/s\n",
           bench_pingpong(2, 1000, false, secs) / 1e6);
    printf("ping-pong 2 workers, 1000 pairs, every pair split across workers: %.2f M msg/s\n",
           bench_pingpong(2, 1000, true, secs) / 1e6);
    long per = (long)(secs * 2e6);
    for (int batched = 0; batched < 2; batched++) {
        const char *how = batched ? "rt_post_batch of 256" : "rt_post";
        printf("fan-in (%s) 1 worker, 1 poster thread -> 1000 desks: %.2f M msg/s\n", how,
               bench_fanin(1, 1, per, batched) / 1e6);
        printf("fan-in (%s) 2 workers, 2 poster threads -> 1000 desks: %.2f M msg/s\n", how,
               bench_fanin(2, 2, per / 2, batched) / 1e6);
        printf("fan-in (%s) 2 workers, 4 poster threads -> 1000 desks: %.2f M msg/s\n", how,
               bench_fanin(2, 4, per / 4, batched) / 1e6);
    }
    bench_create_and_memory();
    return 0;
}
