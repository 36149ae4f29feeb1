/*
 * bench_watch -- spectators' figures (issue 31, docs/spectators.md "Fan-out"), against real
 * processes on loopback: a real redis-server, croupier-game --engine test and two croupier-gate
 * (started by the bench; run it from the build directory or set CROUPIER_BUILD).
 *
 *   [BENCH_PIN=1] bench_watch SECONDS SPECTATORS [WINDOW [RATE [ROUNDS]]]
 *
 * Two players sit at one test table through gateway A. One of them keeps WINDOW actions in
 * flight (closed loop, default 1), or with RATE > 0 sends RATE actions per second on a fixed
 * schedule (open loop, at most WINDOW in flight: the table's event rate is RATE whatever the
 * round trips); each action is answered and pushed to the table as a Play.
 * First SECONDS without spectators: the players' action round trips (p50, p90, p99, max, and the
 * number of samples). Then SPECTATORS connections, half on each gateway, log in and
 * Watch{player}; SECONDS again: the round trips with them, the frames delivered to the
 * spectators per second, and each gateway's CPU per frame delivered (gateway B holds only
 * spectators: its CPU is the fan-out's alone). For each run it prints the CPU of each process
 * (in cores), how many of the machine's cores were busy (every process, ours or not:
 * /proc/stat) and the load average: a round trip measured on a saturated machine measures the
 * saturation. ROUNDS (default 1) repeats the pair of runs, the spectators connecting anew each
 * time, and pools the round trips of each kind (alternating runs meet the same drift of a
 * shared machine's load).
 *
 * BENCH_PIN=1 puts the players' path (gateway A, the game server, the player's loop) on the last
 * CPU and what a deployment runs on other machines (gateway B, the spectators' clients) on CPU 0:
 * the players then share their CPU only with gateway A's own work for its spectators.
 *
 * One thread drives the players (epoll, non-blocking sockets), another reads the spectators,
 * whose frames are counted by their length prefix, not decoded; the players' answers are decoded
 * and matched by request id. The pids are printed to stderr (for perf record -p).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "clock.h"
#include "frame.h"
#include "support.h"
#include "token.h"

#define SECRET "bench-watch-secret-0123456789"
#define PLAYER 9100001
#define SPECT0 9200000

static token_secret_t secret;
static ts_redis_t *redis;
static char secret_path[256];
static ts_proc_t *game, *gate[2];
static int gate_port[2], gate_health[2];

static int64_t now_us(void)
{
    return clock_mono_ns() / 1000;
}

static ts_sched_t sched_since(ts_sched_t now, ts_sched_t before)
{
    return (ts_sched_t){.run_s = now.run_s - before.run_s,
                        .wait_s = now.wait_s - before.wait_s,
                        .slices = now.slices - before.slices};
}

/* The machine's CPU time, busy and total, in clock ticks over all CPUs (/proc/stat). */
static void machine_ticks(double *busy, double *total)
{
    unsigned long long v[8] = {0};
    *busy = *total = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL)
        return;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n != 8)
        return;
    for (int i = 0; i < 8; i++)
        *total += (double)v[i];
    *busy = *total - (double)v[3] - (double)v[4]; /* not idle, not waiting for I/O */
}

static double loadavg1(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

/* BENCH_PIN=1 (main): the CPU of the players' path, and of the rest. */
static bool pinned;
static int pin_players_cpu, pin_rest_cpu;

static char *fmt(const char *f, int v)
{
    char *s = NULL;
    if (asprintf(&s, f, v) < 0)
        exit(1);
    return s;
}

static void die(const char *why)
{
    fprintf(stderr, "bench_watch: %s\n", why);
    exit(1);
}

/* ---- processes ------------------------------------------------------------------------------ */

static void start_all(int spectators)
{
    redis = ts_redis_start();
    if (redis == NULL)
        die("redis-server did not start");
    char *dir = ts_tmpdir();
    snprintf(secret_path, sizeof secret_path, "%s/secret", dir);
    FILE *f = fopen(secret_path, "w");
    if (f == NULL)
        die("secret file");
    fprintf(f, "%s\n", SECRET);
    fclose(f);
    token_secret_set(&secret, SECRET, strlen(SECRET));
    int gp = ts_free_port(), gh = ts_free_port();
    char *listen = fmt("127.0.0.1:%d", gp), *health = fmt("127.0.0.1:%d", gh);
    char *cap = fmt("%d", spectators + 10);
    char *env[] = {"CROUPIER_TEST_ROUND_MS=3600000", NULL};
    char *gargv[] = {(char *)ts_build_path("engine/process/croupier-game"),
                     "--engine",
                     "test",
                     "--listen",
                     listen,
                     "--advertise",
                     listen,
                     "--health-listen",
                     health,
                     "--redis",
                     (char *)ts_redis_addr(redis),
                     "--test-spectators",
                     cap,
                     "--log-level",
                     "warn",
                     NULL};
    game = ts_proc_spawn(gargv, env);
    if (game == NULL || ts_http_wait_status("127.0.0.1", gh, "/readyz", 200, 10000))
        die("game server did not start");
    for (int i = 0; i < 2; i++) {
        gate_port[i] = ts_free_port();
        gate_health[i] = ts_free_port();
        char *argv[] = {(char *)ts_build_path("gateway/croupier-gate"),
                        "--listen",
                        fmt("127.0.0.1:%d", gate_port[i]),
                        "--health-listen",
                        fmt("127.0.0.1:%d", gate_health[i]),
                        "--redis",
                        (char *)ts_redis_addr(redis),
                        "--token-secret-file",
                        secret_path,
                        "--gate-id",
                        i == 0 ? "bench-watch-a" : "bench-watch-b",
                        "--rate-limit",
                        "1000000",
                        "--rate-burst",
                        "1000000",
                        "--player-rate-limit",
                        "1000000",
                        "--player-rate-burst",
                        "1000000",
                        "--max-inflight",
                        "4096",
                        "--idle-timeout-ms",
                        "3600000",
                        "--watch-max",
                        cap,
                        "--log-level",
                        "warn",
                        "--drain-window-ms",
                        "0",
                        "--close-timeout-ms",
                        "3000",
                        NULL};
        gate[i] = ts_proc_spawn(argv, NULL);
        if (gate[i] == NULL ||
            ts_http_wait_status("127.0.0.1", gate_health[i], "/readyz", 200, 10000))
            die("gateway did not start");
    }
    ts_sleep_ms(500); /* the gateways list the game server */
}

static void stop_all(void)
{
    for (int i = 0; i < 2; i++)
        if (gate[i] != NULL) {
            ts_proc_signal(gate[i], SIGTERM);
            ts_proc_wait(gate[i], 5000, NULL);
            ts_proc_free(gate[i]);
        }
    if (game != NULL) {
        ts_proc_signal(game, SIGTERM);
        ts_proc_signal(game, SIGTERM);
        ts_proc_wait(game, 10000, NULL);
        ts_proc_free(game);
    }
    ts_redis_stop(redis);
}

/* ---- connections ---------------------------------------------------------------------------- */

typedef struct {
    int fd;
    uint8_t *in;
    size_t have, cap;
    uint64_t frames; /* frames read (spectators: counted by their length prefix) */
    bool player;
} conn_t;

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void send_msg(conn_t *c, const Croupier__ClientMessage *m)
{
    struct evbuffer *b = evbuffer_new();
    frame_error_t err;
    if (frame_pack_client(b, m, NULL, &err) != 0)
        die(err.detail);
    size_t n = evbuffer_get_length(b);
    uint8_t *p = evbuffer_pullup(b, -1);
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(c->fd, p + off, n - off);
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            die("write");
        if (w > 0)
            off += (size_t)w;
    }
    evbuffer_free(b);
}

/* Reads what the socket has (blocking when block): 0, or -1 at EOF / error. */
static int read_some(conn_t *c, bool block)
{
    if (c->cap - c->have < 65536) {
        c->cap = c->cap * 2 + 65536;
        c->in = realloc(c->in, c->cap);
    }
    ssize_t r = recv(c->fd, c->in + c->have, c->cap - c->have, block ? 0 : MSG_DONTWAIT);
    if (r == 0)
        return -1;
    if (r < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    c->have += (size_t)r;
    return 0;
}

/* The next whole frame's payload, removed from the buffer into *out (malloc'd), or false. */
static bool take_frame(conn_t *c, uint8_t **out, size_t *len)
{
    if (c->have < 4)
        return false;
    uint32_t n =
        (uint32_t)c->in[0] << 24 | (uint32_t)c->in[1] << 16 | (uint32_t)c->in[2] << 8 | c->in[3];
    if (c->have < 4 + (size_t)n)
        return false;
    if (out != NULL) {
        *out = malloc(n ? n : 1);
        memcpy(*out, c->in + 4, n);
        *len = n;
    }
    memmove(c->in, c->in + 4 + n, c->have - 4 - n);
    c->have -= 4 + n;
    c->frames++;
    return true;
}

/* Blocks until the answer to rid; returns it (free it). */
static Croupier__ServerMessage *wait_reply(conn_t *c, uint64_t rid)
{
    int64_t end = now_us() + 10000000;
    while (now_us() < end) {
        uint8_t *p;
        size_t n;
        while (take_frame(c, &p, &n)) {
            Croupier__ServerMessage *m = frame_unpack_server(p, n, NULL, NULL);
            free(p);
            if (m != NULL && m->request_id == rid)
                return m;
            frame_free_server(m);
        }
        if (read_some(c, true) != 0)
            die("connection lost");
    }
    die("no answer");
    return NULL;
}

static void login(conn_t *c, uint64_t player)
{
    char tok[TOKEN_MAX_LEN + 1];
    token_mint(&secret, player, time(NULL) + 3600, tok, sizeof tok);
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Login l = CROUPIER__LOGIN__INIT;
    l.token = tok;
    m.request_id = 1;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
    m.login = &l;
    send_msg(c, &m);
    Croupier__ServerMessage *a = wait_reply(c, 1);
    if (a->body_case != CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT)
        die("login refused");
    frame_free_server(a);
}

static void join(conn_t *c)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    j.game = "test";
    j.stake = 10;
    m.request_id = 2;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN;
    m.join = &j;
    send_msg(c, &m);
    Croupier__ServerMessage *a = wait_reply(c, 2);
    if (a->body_case != CROUPIER__SERVER_MESSAGE__BODY_JOINED)
        die("join refused");
    frame_free_server(a);
}

static void watch(conn_t *c)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Watch w = CROUPIER__WATCH__INIT;
    w.has_player_id = true;
    w.player_id = PLAYER;
    m.request_id = 2;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_WATCH;
    m.watch = &w;
    send_msg(c, &m);
    Croupier__ServerMessage *a = wait_reply(c, 2);
    if (a->body_case != CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT)
        die("watch refused");
    frame_free_server(a);
}

static void act(conn_t *c, uint64_t rid)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction s = CROUPIER__SHEDDING_ACTION__INIT;
    s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &s;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = &a;
    send_msg(c, &m);
}

/* ---- a run ---------------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The spectators' reader: a thread of its own, so that the player's round trips are not
 * measured behind the bench's own reads of a thousand sockets. */
typedef struct {
    conn_t *spect;
    int n;
    atomic_bool stop;
    ts_sched_t sched; /* the thread's own, read as it ends (its /proc entry goes with it) */
} reader_t;

static void *reader_main(void *arg)
{
    reader_t *r = arg;
    if (pinned && ts_proc_pin(0, pin_rest_cpu) != 0)
        die("BENCH_PIN: sched_setaffinity failed");
    int ep = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < r->n; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &r->spect[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, r->spect[i].fd, &ev);
    }
    struct epoll_event evs[256];
    while (!atomic_load(&r->stop)) {
        int n = epoll_wait(ep, evs, 256, 20);
        for (int e = 0; e < n; e++) {
            conn_t *c = evs[e].data.ptr;
            if (read_some(c, false) != 0)
                die("a spectator was dropped");
            while (take_frame(c, NULL, NULL))
                ;
        }
    }
    close(ep);
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long run, wait, n;
    if (f != NULL && fscanf(f, "%llu %llu %llu", &run, &wait, &n) == 3)
        r->sched = (ts_sched_t){.run_s = (double)run / 1e9,
                                .wait_s = (double)wait / 1e9,
                                .slices = (double)n,
                                .threads = 1};
    if (f != NULL)
        fclose(f);
    return NULL;
}

typedef struct {
    double p50_us, p90_us, p99_us, max_us;
    long actions;
    long late; /* open loop: actions sent more than 2 ms after their slot (a full window) */
    uint64_t spect_frames[2];
    ts_sched_t proc[4]; /* gateway A, gateway B, the game server, the bench */
    double busy_cores;  /* the machine's CPUs busy on average (every process, ours or not) */
    double load;        /* the 1-minute load average at the end */
    double seconds;
    int64_t *lat; /* the round trips, sorted (us; the caller frees them) */
    size_t nl;
} run_t;

/*
 * SECONDS of the player's actions: a closed loop (window actions in flight), or with rate > 0 an
 * open loop: an action every 1/rate s on a fixed schedule (never more than window in flight), so
 * that the table's event rate is the stated one whatever the round trips. The spectators are read
 * as their frames come. Every answer must be OK and come once.
 */
static run_t run(conn_t *p, conn_t *other, conn_t *spect, int nspect, int seconds, int window,
                 int rate)
{
    run_t r = {0};
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    ev.data.ptr = p;
    epoll_ctl(ep, EPOLL_CTL_ADD, p->fd, &ev);
    ev.data.ptr = other; /* the other player: its pushes read and dropped */
    epoll_ctl(ep, EPOLL_CTL_ADD, other->fd, &ev);
    reader_t rd = {.spect = spect, .n = nspect};
    pthread_t th;
    if (nspect > 0 && pthread_create(&th, NULL, reader_main, &rd) != 0)
        die("thread");
    size_t cap = 1 << 20;
    int64_t *lat = malloc(cap * sizeof *lat);
    int64_t sent_at[4096];
    static uint64_t rid = 1000;
    uint64_t first = rid;
    int inflight = 0;
    int64_t period = rate > 0 ? 1000000 / rate : 0;
    for (int k = 0; k < window && rate == 0; k++, inflight++) {
        sent_at[rid % 4096] = now_us();
        act(p, rid++);
    }
    uint64_t base[2] = {0, 0};
    for (int i = 0; i < nspect; i++)
        base[i % 2] += spect[i].frames;
    pid_t pids[4] = {ts_proc_pid(gate[0]), ts_proc_pid(gate[1]), ts_proc_pid(game), getpid()};
    ts_sched_t sched0[4];
    for (int k = 0; k < 4; k++)
        sched0[k] = ts_proc_sched(pids[k]);
    double busy0, total0;
    machine_ticks(&busy0, &total0);
    int64_t start = now_us(), end = start + (int64_t)seconds * 1000000, next_send = start;
    struct epoll_event evs[256];
    for (int64_t t = start; t < end; t = now_us()) {
        while (rate > 0 && inflight < window && t >= next_send) {
            if (t - next_send > 2000)
                r.late++;
            sent_at[rid % 4096] = t;
            act(p, rid++);
            inflight++;
            next_send += period;
        }
        int timeout = 50; /* ms: the closed loop, or a full window */
        if (rate > 0 && inflight < window)
            timeout = next_send > t ? (int)((next_send - t + 999) / 1000) : 0;
        int n = epoll_wait(ep, evs, 256, timeout);
        for (int e = 0; e < n; e++) {
            conn_t *c = evs[e].data.ptr;
            if (read_some(c, false) != 0)
                die(c->player ? "the player's connection was lost" : "a spectator was dropped");
            if (c == other) {
                c->have = 0; /* whole frames or not: never parsed */
                continue;
            }
            uint8_t *pl;
            size_t len;
            while (take_frame(c, &pl, &len)) {
                Croupier__ServerMessage *m = frame_unpack_server(pl, len, NULL, NULL);
                free(pl);
                if (m == NULL)
                    die("a bad frame to the player");
                if (m->request_id != 0) {
                    if (m->request_id < first || m->request_id >= rid)
                        die("an answer to no action");
                    if (m->body_case != CROUPIER__SERVER_MESSAGE__BODY_RESULT ||
                        m->result->error != NULL)
                        die("an action refused");
                    if ((size_t)r.actions < cap)
                        lat[r.actions] = now_us() - sent_at[m->request_id % 4096];
                    r.actions++;
                    inflight--;
                    if (rate == 0) {
                        sent_at[rid % 4096] = now_us();
                        act(p, rid++);
                        inflight++;
                    }
                }
                frame_free_server(m);
            }
        }
    }
    r.seconds = (double)(now_us() - start) / 1e6;
    if (nspect > 0) {
        atomic_store(&rd.stop, true);
        pthread_join(th, NULL);
    }
    for (int k = 0; k < 4; k++)
        r.proc[k] = sched_since(ts_proc_sched(pids[k]), sched0[k]);
    r.proc[3].run_s += rd.sched.run_s; /* the reader (started in this run) ended */
    r.proc[3].wait_s += rd.sched.wait_s;
    r.proc[3].slices += rd.sched.slices;
    double busy1, total1;
    machine_ticks(&busy1, &total1);
    if (total1 > total0)
        r.busy_cores = (busy1 - busy0) / (total1 - total0) * (double)sysconf(_SC_NPROCESSORS_ONLN);
    r.load = loadavg1();
    /* The answers still in flight are read before the next run (not counted). */
    for (int left = inflight; left > 0;) {
        uint8_t *pl;
        size_t len;
        while (left > 0 && take_frame(p, &pl, &len)) {
            Croupier__ServerMessage *m = frame_unpack_server(pl, len, NULL, NULL);
            free(pl);
            if (m != NULL && m->request_id != 0)
                left--;
            frame_free_server(m);
        }
        if (left > 0 && read_some(p, true) != 0)
            die("the player's connection was lost");
    }
    for (int i = 0; i < nspect; i++) {
        while (read_some(&spect[i], false) == 0 && take_frame(&spect[i], NULL, NULL))
            ;
        r.spect_frames[i % 2] += spect[i].frames;
    }
    r.spect_frames[0] -= base[0];
    r.spect_frames[1] -= base[1];
    size_t nl = (size_t)r.actions < cap ? (size_t)r.actions : cap;
    qsort(lat, nl, sizeof *lat, cmp_i64);
    r.p50_us = nl ? (double)lat[nl / 2] : 0;
    r.p90_us = nl ? (double)lat[nl * 90 / 100] : 0;
    r.p99_us = nl ? (double)lat[nl * 99 / 100] : 0;
    r.max_us = nl ? (double)lat[nl - 1] : 0;
    r.lat = lat;
    r.nl = nl;
    close(ep);
    return r;
}

/* The round trips of one kind of run, pooled over the rounds. */
typedef struct {
    int64_t *lat;
    size_t n, cap;
} pool_t;

static void pool_add(pool_t *p, const run_t *r)
{
    if (p->n + r->nl > p->cap) {
        p->cap = (p->n + r->nl) * 2;
        p->lat = realloc(p->lat, p->cap * sizeof *p->lat);
        if (p->lat == NULL)
            die("out of memory");
    }
    memcpy(p->lat + p->n, r->lat, r->nl * sizeof *r->lat);
    p->n += r->nl;
}

static double pool_pct(pool_t *p, int pct)
{
    if (p->n == 0)
        return 0;
    qsort(p->lat, p->n, sizeof *p->lat, cmp_i64);
    return (double)p->lat[pct == 100 ? p->n - 1 : p->n * (size_t)pct / 100];
}

static void print_round(const run_t *without, const run_t *with, double setup_s, int nspect,
                        int rate)
{
    printf("  watch set-up: %d logins + watches in %.2f s\n", nspect, setup_s);
    const run_t *runs[2] = {without, with};
    for (int k = 0; k < 2; k++) {
        const run_t *r = runs[k];
        printf("  %s %ld actions (%.0f/s), round trip p50 %.0f us, p90 %.0f, p99 %.0f, max "
               "%.0f",
               k == 0 ? "without spectators:" : "with spectators:   ", r->actions,
               (double)r->actions / r->seconds, r->p50_us, r->p90_us, r->p99_us, r->max_us);
        if (k == 1)
            printf(" (p50 added %.0f us, p99 added %.0f us)", with->p50_us - without->p50_us,
                   with->p99_us - without->p99_us);
        if (rate > 0)
            printf("; %ld sent > 2 ms late", r->late);
        printf("\n");
    }
    static const char *const names[4] = {"gateway A", "gateway B", "game server", "bench"};
    for (int k = 0; k < 2; k++) {
        const run_t *r = runs[k];
        printf("  CPU %s machine %.2f of %ld cores busy (every process), load %.2f; cores "
               "used (mean wait for a CPU per time slice):",
               k == 0 ? "without:" : "with:   ", r->busy_cores, sysconf(_SC_NPROCESSORS_ONLN),
               r->load);
        for (int q = 0; q < 4; q++)
            printf("%s %s %.2f (%.0f us)", q ? "," : "", names[q], r->proc[q].run_s / r->seconds,
                   r->proc[q].slices > 0 ? r->proc[q].wait_s * 1e6 / r->proc[q].slices : 0);
        printf("\n");
    }
    uint64_t frames = with->spect_frames[0] + with->spect_frames[1];
    printf("  frames delivered to spectators: %" PRIu64 " (%.0f/s; gateway A %" PRIu64
           ", B %" PRIu64 ")\n",
           frames, (double)frames / with->seconds, with->spect_frames[0], with->spect_frames[1]);
    printf("  gateway CPU per frame delivered: A %.3f us (it also relays the players), B %.3f us "
           "(spectators only)\n",
           with->spect_frames[0] ? with->proc[0].run_s * 1e6 / (double)with->spect_frames[0] : 0,
           with->spect_frames[1] ? with->proc[1].run_s * 1e6 / (double)with->spect_frames[1] : 0);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_watch SECONDS SPECTATORS [WINDOW [RATE [ROUNDS]]]\n");
        return 2;
    }
    int seconds = atoi(argv[1]), nspect = atoi(argv[2]), window = argc > 3 ? atoi(argv[3]) : 1;
    int rate = argc > 4 ? atoi(argv[4]) : 0, rounds = argc > 5 ? atoi(argv[5]) : 1;
    if (seconds < 1 || nspect < 2 || window < 1 || window > 1024 || rate < 0 || rate > 100000 ||
        rounds < 1 || rounds > 20) {
        fprintf(stderr, "bench_watch: SECONDS >= 1, SPECTATORS >= 2, WINDOW 1..1024, RATE "
                        "0..100000, ROUNDS 1..20\n");
        return 2;
    }
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    start_all(nspect);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (getenv("BENCH_PIN") != NULL && strcmp(getenv("BENCH_PIN"), "1") == 0 && ncpu >= 2) {
        /* The players' path (gateway A, the game server, the player's loop) on the last CPU;
         * what a real deployment runs elsewhere (gateway B, the spectators' clients) on the
         * first; redis-server, idle once the players sit, is left alone. The spectators'
         * reader pins itself (reader_main). */
        pinned = true;
        pin_players_cpu = (int)ncpu - 1;
        pin_rest_cpu = 0;
        if (ts_proc_pin(ts_proc_pid(gate[0]), pin_players_cpu) != 0 ||
            ts_proc_pin(ts_proc_pid(game), pin_players_cpu) != 0 ||
            ts_proc_pin(ts_proc_pid(gate[1]), pin_rest_cpu) != 0 ||
            ts_proc_pin(0, pin_players_cpu) != 0)
            die("BENCH_PIN: sched_setaffinity failed");
    }
    free(ts_redis_cmd(redis, "SET {croupier:money}:wallet:%d 100000000", PLAYER));
    free(ts_redis_cmd(redis, "SET {croupier:money}:wallet:%d 100000000", PLAYER + 1));
    conn_t players[2] = {{0}};
    for (int i = 0; i < 2; i++) {
        players[i].fd = dial(gate_port[0]);
        players[i].player = true;
        login(&players[i], PLAYER + (uint64_t)i);
        join(&players[i]);
    }
    ts_sleep_ms(300); /* the round begins (the test engine's gap) */
    conn_t *p = &players[0];
    fprintf(stderr, "bench_watch: pids: game server %d, gateway A %d, gateway B %d, bench %d\n",
            (int)ts_proc_pid(game), (int)ts_proc_pid(gate[0]), (int)ts_proc_pid(gate[1]),
            (int)getpid());
    printf("bench_watch %d s, %d spectators (half on each of two gateways), window %d, %s, %d "
           "round%s; %s\n",
           seconds, nspect, window,
           rate > 0 ? fmt("open loop: %d actions/s on a fixed schedule", rate) : "closed loop",
           rounds, rounds > 1 ? "s (without, then with spectators, each)" : "",
           pinned ? fmt("pinned (BENCH_PIN=1): gateway A, the game server and the player on CPU "
                        "%d; gateway B and the spectators' reader on CPU 0",
                        pin_players_cpu)
                  : "not pinned (BENCH_PIN=1 pins)");
    fflush(stdout);
    pool_t pool[2] = {{0}};
    conn_t *spect = calloc((size_t)nspect, sizeof *spect);
    for (int round = 0; round < rounds; round++) {
        run_t without = run(p, &players[1], NULL, 0, seconds, window, rate);
        memset(spect, 0, (size_t)nspect * sizeof *spect);
        int64_t t0 = now_us();
        for (int i = 0; i < nspect; i++) {
            spect[i].fd = dial(gate_port[i % 2]);
            login(&spect[i], SPECT0 + (uint64_t)round * (uint64_t)nspect + (uint64_t)i);
            watch(&spect[i]);
        }
        double setup_s = (double)(now_us() - t0) / 1e6;
        run_t with = run(p, &players[1], spect, nspect, seconds, window, rate);
        for (int i = 0; i < nspect; i++) {
            close(spect[i].fd);
            free(spect[i].in);
        }
        if (rounds > 1)
            printf(" round %d:\n", round + 1);
        print_round(&without, &with, setup_s, nspect, rate);
        fflush(stdout);
        pool_add(&pool[0], &without);
        pool_add(&pool[1], &with);
        free(without.lat);
        free(with.lat);
        if (round + 1 < rounds)
            ts_sleep_ms(1500); /* the closed watches counted off at the table (its cap) */
    }
    if (rounds > 1) {
        double p99[2];
        for (int k = 0; k < 2; k++) {
            p99[k] = pool_pct(&pool[k], 99);
            printf(" all %d rounds, %s %zu actions, round trip p50 %.0f us, p90 %.0f, p99 %.0f, "
                   "max %.0f\n",
                   rounds, k == 0 ? "without spectators:" : "with spectators:   ", pool[k].n,
                   pool_pct(&pool[k], 50), pool_pct(&pool[k], 90), p99[k], pool_pct(&pool[k], 100));
        }
        printf(" all %d rounds: p50 added %.0f us, p99 added %.0f us\n", rounds,
               pool_pct(&pool[1], 50) - pool_pct(&pool[0], 50), p99[1] - p99[0]);
    }
    free(pool[0].lat);
    free(pool[1].lat);
    free(spect);
    stop_all();
    return 0;
}
