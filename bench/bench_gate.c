/*
 * bench_gate -- the gateway's figures (issue 9), against real processes on loopback: a real
 * redis-server, croupier-game --engine test and croupier-gate (started by the bench; run it from
 * the build directory or set CROUPIER_BUILD).
 *
 *   bench_gate idle N
 *       N client connections, each logged in, held idle by one gateway; source addresses
 *       127.0.0.2, .3, ... (5,000 per address). Prints the gateway's RSS growth per connection.
 *   bench_gate relay SECONDS CONNS WINDOW
 *       Closed loop: CONNS players keep WINDOW actions in flight each; every action is a frame
 *       client -> proxy -> game server and its answer back. Three paths relay the same rpc
 *       traffic to the same game server: direct (no proxy), nginx's TCP stream proxy, and
 *       croupier-gate (client protocol in, rpc out). Prints frames/s per path.
 *   bench_gate latency SECONDS RATE
 *       Open loop at RATE actions/s in total over 8 players: p50/p99/p999 round trip per path,
 *       and the p99 added by each proxy over the direct path.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "support.h"
#include "token.h"

#define SECRET "bench-gate-secret-0123456789"

static token_secret_t secret;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    long v = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            v = strtol(line + 6, NULL, 10);
    fclose(f);
    return v;
}

/* CPU time (user + system) a process has used so far, in seconds; -1 if unknown. */
static double proc_cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long ut = 0, st = 0;
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU time of this process (the bench's own clients). */
static double self_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- processes ------------------------------------------------------------------------------ */

static ts_redis_t *redis;
static char secret_path[256];
static int game_port, game_health, gate_port, gate_health, nginx_port;
static ts_proc_t *game, *gate, *nginx;
static char nginx_dir[256];

static char *fmt(const char *f, int v)
{
    char *s;
    if (asprintf(&s, f, v) < 0)
        abort();
    return s;
}

static void start_game(void)
{
    game_port = ts_free_port();
    game_health = ts_free_port();
    char *listen = fmt("127.0.0.1:%d", game_port), *health = fmt("127.0.0.1:%d", game_health);
    char *env[] = {"CROUPIER_TEST_ROUND_MS=3600000", "CROUPIER_TEST_SEATS=9", NULL};
    char *argv[] = {(char *)ts_build_path("engine/process/croupier-game"),
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
                    "--log-level",
                    "warn",
                    NULL};
    game = ts_proc_spawn(argv, env);
    if (game == NULL || ts_http_wait_status("127.0.0.1", game_health, "/readyz", 200, 10000)) {
        fprintf(stderr, "game server did not start\n");
        exit(1);
    }
}

static void start_gate(void)
{
    gate_port = ts_free_port();
    gate_health = ts_free_port();
    char *listen = fmt("127.0.0.1:%d", gate_port), *health = fmt("127.0.0.1:%d", gate_health);
    char *argv[] = {(char *)ts_build_path("gateway/croupier-gate"),
                    "--listen",
                    listen,
                    "--health-listen",
                    health,
                    "--redis",
                    (char *)ts_redis_addr(redis),
                    "--token-secret-file",
                    secret_path,
                    "--gate-id",
                    "bench",
                    "--rate-limit",
                    "1000000",
                    "--rate-burst",
                    "1000000",
                    "--max-inflight",
                    "4096",
                    "--idle-timeout-ms",
                    "3600000",
                    "--budget-action-ms",
                    "5000",
                    "--budget-join-ms",
                    "5000",
                    "--output-cap",
                    "16777216",
                    "--log-level",
                    "warn",
                    "--drain-window-ms",
                    "0",
                    "--close-timeout-ms",
                    "3000",
                    NULL};
    gate = ts_proc_spawn(argv, NULL);
    if (gate == NULL || ts_http_wait_status("127.0.0.1", gate_health, "/readyz", 200, 10000)) {
        fprintf(stderr, "gateway did not start\n");
        exit(1);
    }
}

static void start_nginx(void)
{
    char *d = ts_tmpdir();
    snprintf(nginx_dir, sizeof nginx_dir, "%s", d);
    free(d);
    nginx_port = ts_free_port();
    char conf[512];
    snprintf(conf, sizeof conf, "%s/nginx.conf", nginx_dir);
    FILE *f = fopen(conf, "w");
    fprintf(f,
            "load_module /usr/lib/nginx/modules/ngx_stream_module.so;\n"
            "daemon off; master_process off; worker_processes 1; pid %s/nginx.pid;\n"
            "error_log %s/error.log warn;\n"
            "events { worker_connections 4096; }\n"
            "stream { server { listen 127.0.0.1:%d; proxy_pass 127.0.0.1:%d; "
            "tcp_nodelay on; } }\n",
            nginx_dir, nginx_dir, nginx_port, game_port);
    fclose(f);
    char *argv[] = {"/usr/sbin/nginx", "-c", conf, "-p", nginx_dir, NULL};
    nginx = ts_proc_spawn(argv, NULL);
    for (int i = 0; i < 100; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)nginx_port)};
        inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
        int ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        close(fd);
        if (ok)
            return;
        ts_sleep_ms(50);
    }
    fprintf(stderr, "nginx did not start (%s)\n", ts_proc_log_path(nginx));
    exit(1);
}

/* Stops everything started (also at exit(), so no failure path leaves a process behind). */
static void stop_all(void)
{
    ts_proc_t **ps[] = {&nginx, &gate, &game};
    for (int i = 0; i < 3; i++) {
        if (*ps[i] == NULL)
            continue;
        ts_proc_signal(*ps[i], SIGTERM);
        ts_proc_signal(*ps[i], SIGTERM);
        ts_proc_wait(*ps[i], 10000, NULL);
        ts_proc_free(*ps[i]);
        *ps[i] = NULL;
    }
    if (redis != NULL)
        ts_redis_stop(redis);
    redis = NULL;
}

/* ---- connections ------------------------------------------------------------------------------
 */

typedef enum { PATH_DIRECT = 0, PATH_NGINX = 1, PATH_GATE = 2 } path_t;
static const char *const path_names[3] = {"direct", "nginx-stream", "croupier-gate"};

typedef struct {
    int fd;
    path_t path;
    uint64_t player;
    struct evbuffer *in;
    uint8_t out[1 << 16];
    size_t outlen;
    int inflight;
} conn_t;

static int dial(int port, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (src != NULL) {
        int one = 1;
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        struct sockaddr_in la = {.sin_family = AF_INET};
        inet_pton(AF_INET, src, &la.sin_addr);
        if (bind(fd, (struct sockaddr *)&la, sizeof la) != 0) {
            int e = -errno;
            close(fd);
            return e;
        }
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void put_frame(conn_t *c, const ProtobufCMessage *m)
{
    frame_error_t err;
    ssize_t n = frame_encode(m, NULL, c->out + c->outlen, sizeof c->out - c->outlen, &err);
    if (n < 0) {
        fprintf(stderr, "encode failed: %s\n", err.detail);
        exit(1);
    }
    c->outlen += (size_t)n;
}

static void flush_out(conn_t *c)
{
    size_t off = 0;
    while (off < c->outlen) {
        ssize_t n = send(c->fd, c->out + off, c->outlen - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            perror("send");
            exit(1);
        }
        off += (size_t)n;
    }
    c->outlen = 0;
}

/* Reads what is there (blocking up to ms when wait). Returns false on EOF/error. */
static bool fill(conn_t *c, int ms)
{
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
        return true;
    char buf[65536];
    ssize_t n = recv(c->fd, buf, sizeof buf, 0);
    if (n <= 0)
        return false;
    evbuffer_add(c->in, buf, (size_t)n);
    return true;
}

/* The request id of the next answer in the buffer (0: none yet); *ok tells OK vs error. */
static uint64_t next_answer(conn_t *c, int *code)
{
    for (;;) {
        if (c->path == PATH_GATE) {
            Croupier__ServerMessage *m;
            frame_error_t err;
            frame_result_t r = frame_read_server(c->in, NULL, &m, &err);
            if (r == FRAME_NEED_MORE)
                return 0;
            if (r != FRAME_OK)
                continue;
            uint64_t rid = m->has_request_id ? m->request_id : 0;
            int cd = 0;
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT && m->result->error)
                cd = m->result->error->code;
            frame_free_server(m);
            if (rid != 0) {
                *code = cd;
                return rid;
            }
        } else {
            Croupier__RpcFrame *f;
            frame_error_t err;
            frame_result_t r = frame_read_rpc(c->in, NULL, &f, &err);
            if (r == FRAME_NEED_MORE)
                return 0;
            if (r != FRAME_OK)
                continue;
            uint64_t rid = 0;
            int cd = 0;
            if (f->body_case == CROUPIER__RPC_FRAME__BODY_REPLY) {
                rid = f->request_id;
                cd = f->reply->code;
            } else if (f->body_case == CROUPIER__RPC_FRAME__BODY_HELLO_ACK) {
                rid = f->request_id;
            }
            frame_free_rpc(f);
            if (rid != 0) {
                *code = cd;
                return rid;
            }
        }
    }
}

static uint64_t wait_answer(conn_t *c, int *code)
{
    int64_t end = now_us() + 5000000;
    while (now_us() < end) {
        uint64_t rid = next_answer(c, code);
        if (rid != 0)
            return rid;
        if (!fill(c, 100))
            break;
    }
    fprintf(stderr, "no answer on %s\n", path_names[c->path]);
    exit(1);
}

static void send_action(conn_t *c, uint64_t rid)
{
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction s = CROUPIER__SHEDDING_ACTION__INIT;
    s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &s;
    if (c->path == PATH_GATE) {
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        m.request_id = rid;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
        m.action = &a;
        put_frame(c, &m.base);
    } else {
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.request_id = rid;
        f.has_player_id = true;
        f.player_id = c->player;
        f.has_deadline_unix_ms = true;
        f.deadline_unix_ms = (uint64_t)(wall_ms() + 5000);
        f.has_session_id = true;
        f.session_id = c->player;
        f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
        f.action = &a;
        put_frame(c, &f.base);
    }
}

/* Connects a player on a path: hello (rpc) or login (gate), then a join at stake 10. */
static conn_t *player_open(path_t path, uint64_t player)
{
    conn_t *c = calloc(1, sizeof *c);
    c->path = path;
    c->player = player;
    c->in = evbuffer_new();
    int port = path == PATH_DIRECT ? game_port : path == PATH_NGINX ? nginx_port : gate_port;
    c->fd = dial(port, NULL);
    if (c->fd < 0) {
        fprintf(stderr, "dial %s: %s\n", path_names[path], strerror(-c->fd));
        exit(1);
    }
    int code;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    j.game = "test";
    j.stake = 10;
    if (path == PATH_GATE) {
        char tok[TOKEN_MAX_LEN + 1];
        token_mint(&secret, player, time(NULL) + 3600, tok, sizeof tok);
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        Croupier__Login l = CROUPIER__LOGIN__INIT;
        l.token = tok;
        m.request_id = 1;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
        m.login = &l;
        put_frame(c, &m.base);
        flush_out(c);
        wait_answer(c, &code);
        Croupier__ClientMessage jm = CROUPIER__CLIENT_MESSAGE__INIT;
        jm.request_id = 2;
        jm.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN;
        jm.join = &j;
        put_frame(c, &jm.base);
    } else {
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        Croupier__LinkHello h = CROUPIER__LINK_HELLO__INIT;
        h.version = 1;
        h.gate_id = "bench";
        f.request_id = 1;
        f.body_case = CROUPIER__RPC_FRAME__BODY_HELLO;
        f.hello = &h;
        put_frame(c, &f.base);
        flush_out(c);
        wait_answer(c, &code);
        Croupier__RpcFrame jf = CROUPIER__RPC_FRAME__INIT;
        jf.request_id = ((uint64_t)path << 40) | (player << 20) | 2;
        jf.has_player_id = true;
        jf.player_id = player;
        jf.has_deadline_unix_ms = true;
        jf.deadline_unix_ms = (uint64_t)(wall_ms() + 5000);
        jf.has_session_id = true;
        jf.session_id = player;
        jf.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
        jf.join = &j;
        put_frame(c, &jf.base);
    }
    flush_out(c);
    wait_answer(c, &code);
    if (code != 0) {
        fprintf(stderr, "join on %s answered %s\n", path_names[path], frame_error_code_name(code));
        exit(1);
    }
    return c;
}

static void player_close(conn_t *c)
{
    close(c->fd);
    evbuffer_free(c->in);
    free(c);
}

/* ---- relay (closed loop) ----------------------------------------------------------------------
 */

/* CPU time per round trip of one relay run, in microseconds: the proxy on the path (nginx or
 * croupier-gate; 0 for direct), the game server and the bench's clients. */
typedef struct {
    double proxy_us, game_us, client_us;
} relay_cpu_t;

static double relay(path_t path, int seconds, int nconn, int window, uint64_t base_player,
                    double *errors_out, relay_cpu_t *cpu)
{
    conn_t **cs = calloc((size_t)nconn, sizeof *cs);
    for (int i = 0; i < nconn; i++)
        cs[i] = player_open(path, base_player + (uint64_t)i);
    uint64_t rid = 1000, done = 0, errors = 0;
    for (int i = 0; i < nconn; i++) {
        for (int k = 0; k < window; k++)
            send_action(cs[i], rid++);
        cs[i]->inflight = window;
        flush_out(cs[i]);
    }
    struct pollfd *p = calloc((size_t)nconn, sizeof *p);
    pid_t proxy = path == PATH_NGINX  ? ts_proc_pid(nginx)
                  : path == PATH_GATE ? ts_proc_pid(gate)
                                      : 0;
    double proxy0 = proxy != 0 ? proc_cpu_s(proxy) : 0, game0 = proc_cpu_s(ts_proc_pid(game)),
           self0 = self_cpu_s();
    int64_t t0 = now_us(), end = t0 + (int64_t)seconds * 1000000;
    while (now_us() < end) {
        for (int i = 0; i < nconn; i++)
            p[i] = (struct pollfd){.fd = cs[i]->fd, .events = POLLIN};
        if (poll(p, (nfds_t)nconn, 100) <= 0)
            continue;
        for (int i = 0; i < nconn; i++) {
            if (!(p[i].revents & POLLIN))
                continue;
            conn_t *c = cs[i];
            char buf[65536];
            ssize_t n = recv(c->fd, buf, sizeof buf, 0);
            if (n <= 0) {
                fprintf(stderr, "%s: connection lost\n", path_names[path]);
                exit(1);
            }
            evbuffer_add(c->in, buf, (size_t)n);
            int code;
            while (next_answer(c, &code) != 0) {
                done++;
                if (code != 0 && code != CROUPIER__ERROR_CODE__NO_ROUND)
                    errors++;
                send_action(c, rid++);
            }
            flush_out(c);
        }
    }
    double secs = (double)(now_us() - t0) / 1e6;
    double per = done > 0 ? 1e6 / (double)done : 0;
    cpu->proxy_us = proxy != 0 ? (proc_cpu_s(proxy) - proxy0) * per : 0;
    cpu->game_us = (proc_cpu_s(ts_proc_pid(game)) - game0) * per;
    cpu->client_us = (self_cpu_s() - self0) * per;
    for (int i = 0; i < nconn; i++)
        player_close(cs[i]);
    free(cs);
    free(p);
    *errors_out = (double)errors;
    return (double)done / secs;
}

/* ---- latency (open loop) --------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void latency(path_t path, int seconds, int rate, uint64_t base_player, double pct[3])
{
    enum { NC = 8 };
    conn_t *cs[NC];
    for (int i = 0; i < NC; i++)
        cs[i] = player_open(path, base_player + (uint64_t)i);
    size_t total = (size_t)rate * (size_t)seconds;
    int64_t *sent_at = calloc(total + 1, sizeof *sent_at);
    int64_t *rtt = calloc(total + 1, sizeof *rtt);
    size_t nsent = 0, nrtt = 0;
    int64_t t0 = now_us();
    double interval = 1e6 / rate;
    struct pollfd p[NC];
    while (nrtt < nsent || nsent < total) {
        int64_t now = now_us();
        if (now - t0 > (int64_t)seconds * 1000000 + 5000000)
            break;
        while (nsent < total && now >= t0 + (int64_t)(nsent * interval)) {
            conn_t *c = cs[nsent % NC];
            sent_at[nsent] = now;
            send_action(c, 1000 + nsent);
            flush_out(c);
            nsent++;
        }
        for (int i = 0; i < NC; i++)
            p[i] = (struct pollfd){.fd = cs[i]->fd, .events = POLLIN};
        if (poll(p, NC, 0) <= 0) {
            int64_t next = t0 + (int64_t)(nsent * interval);
            if (next > now_us() + 50)
                usleep(30);
            continue;
        }
        for (int i = 0; i < NC; i++) {
            if (!(p[i].revents & POLLIN))
                continue;
            char buf[65536];
            ssize_t n = recv(cs[i]->fd, buf, sizeof buf, 0);
            if (n <= 0)
                exit(1);
            evbuffer_add(cs[i]->in, buf, (size_t)n);
            int code;
            uint64_t rid;
            int64_t t = now_us();
            while ((rid = next_answer(cs[i], &code)) != 0)
                if (rid >= 1000 && rid - 1000 < total)
                    rtt[nrtt++] = t - sent_at[rid - 1000];
        }
    }
    qsort(rtt, nrtt, sizeof *rtt, cmp_i64);
    pct[0] = nrtt ? (double)rtt[nrtt / 2] : -1;
    pct[1] = nrtt ? (double)rtt[(size_t)(nrtt * 0.99)] : -1;
    pct[2] = nrtt ? (double)rtt[(size_t)(nrtt * 0.999)] : -1;
    if (nrtt < total)
        fprintf(stderr, "%s: %zu of %zu answered\n", path_names[path], nrtt, total);
    for (int i = 0; i < NC; i++)
        player_close(cs[i]);
    free(sent_at);
    free(rtt);
}

/* ---- idle connections ------------------------------------------------------------------------ */

static void idle(int n)
{
    int *fds = calloc((size_t)n, sizeof *fds);
    pid_t pid = ts_proc_pid(gate);
    ts_sleep_ms(300);
    long rss0 = rss_kib(pid);
    int64_t t0 = now_us();
    enum { BATCH = 500 };
    struct evbuffer *in = evbuffer_new();
    for (int i = 0; i < n; i += BATCH) {
        int m = i + BATCH <= n ? BATCH : n - i;
        for (int k = 0; k < m; k++) {
            char src[32];
            snprintf(src, sizeof src, "127.0.0.%d", 2 + (i + k) / 5000);
            fds[i + k] = dial(gate_port, src);
            if (fds[i + k] < 0) {
                fprintf(stderr, "connection %d: %s\n", i + k, strerror(-fds[i + k]));
                exit(1);
            }
            char tok[TOKEN_MAX_LEN + 1];
            token_mint(&secret, 1000000 + (uint64_t)(i + k), time(NULL) + 3600, tok, sizeof tok);
            Croupier__ClientMessage cm = CROUPIER__CLIENT_MESSAGE__INIT;
            Croupier__Login l = CROUPIER__LOGIN__INIT;
            l.token = tok;
            cm.request_id = 1;
            cm.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
            cm.login = &l;
            uint8_t buf[256];
            ssize_t len = frame_encode(&cm.base, NULL, buf, sizeof buf, NULL);
            if (send(fds[i + k], buf, (size_t)len, MSG_NOSIGNAL) != len)
                exit(1);
        }
        for (int k = 0; k < m; k++) {
            /* wait for the LoginResult of each */
            struct pollfd p = {.fd = fds[i + k], .events = POLLIN};
            if (poll(&p, 1, 10000) <= 0) {
                fprintf(stderr, "no login answer on %d\n", i + k);
                exit(1);
            }
            char buf[512];
            if (recv(fds[i + k], buf, sizeof buf, 0) <= 0) {
                fprintf(stderr, "connection %d closed\n", i + k);
                exit(1);
            }
        }
    }
    double secs = (double)(now_us() - t0) / 1e6;
    ts_sleep_ms(1000);
    long rss1 = rss_kib(pid);
    char *body = NULL;
    ts_http_get("127.0.0.1", gate_health, "/metrics", 5000, &body);
    const char *at = body != NULL ? strstr(body, "\ngate_connections ") : NULL;
    long held = at != NULL ? strtol(at + 18, NULL, 10) : -1;
    free(body);
    printf("idle: %d connections logged in over %d source addresses in %.1f s; gateway holds "
           "%ld\n",
           n, 1 + (n - 1) / 5000, secs, held);
    printf("idle: gateway RSS %ld KiB -> %ld KiB: %.0f bytes per connection\n", rss0, rss1,
           (double)(rss1 - rss0) * 1024.0 / n);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    evbuffer_free(in);
    free(fds);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_gate idle N | relay SECONDS CONNS WINDOW | latency "
                        "SECONDS RATE\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl = {1048576, 1048576};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        rl.rlim_cur = rl.rlim_max = 20000;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    token_secret_set(&secret, SECRET, strlen(SECRET));
    char *dir = ts_tmpdir();
    snprintf(secret_path, sizeof secret_path, "%s/secret", dir);
    FILE *f = fopen(secret_path, "w");
    fputs(SECRET, f);
    fclose(f);
    redis = ts_redis_start();
    if (redis == NULL)
        return 1;
    atexit(stop_all);
    double load[3] = {0};
    getloadavg(load, 3);
    printf("bench_gate %s: load average %.2f %.2f %.2f, %ld cores\n", argv[1], load[0], load[1],
           load[2], sysconf(_SC_NPROCESSORS_ONLN));
    if (strcmp(argv[1], "idle") == 0) {
        start_gate();
        idle(atoi(argv[2]));
    } else if (strcmp(argv[1], "relay") == 0 && argc >= 5) {
        start_game();
        start_nginx();
        start_gate();
        int secs = atoi(argv[2]), nconn = atoi(argv[3]), window = atoi(argv[4]);
        double r[3], err[3];
        relay_cpu_t cpu[3];
        for (int p = 0; p < 3; p++) {
            r[p] = relay((path_t)p, secs, nconn, window, 1 + (uint64_t)p * 1000, &err[p], &cpu[p]);
            printf("relay %-14s %d conns x %d in flight: %9.0f frames/s (round trips), %.0f "
                   "errors\n",
                   path_names[p], nconn, window, r[p], err[p]);
            printf("      cpu per round trip: proxy %.2f us, game server %.2f us, bench clients "
                   "%.2f us\n",
                   cpu[p].proxy_us, cpu[p].game_us, cpu[p].client_us);
            fflush(stdout);
        }
        printf("relay: croupier-gate / nginx-stream = %.2f\n", r[2] / r[1]);
        /* What the proxies would relay with a core each to themselves (their own CPU time per
         * round trip), which the shared 2 cores do not show. */
        printf("relay: proxy cpu per round trip: croupier-gate %.2f us, nginx-stream %.2f us "
               "(ratio %.2f); one core of croupier-gate = %.0f round trips/s = %.0f frames/s "
               "relayed (client->game and game->client)\n",
               cpu[2].proxy_us, cpu[1].proxy_us,
               cpu[2].proxy_us > 0 ? cpu[1].proxy_us / cpu[2].proxy_us : 0,
               cpu[2].proxy_us > 0 ? 1e6 / cpu[2].proxy_us : 0,
               cpu[2].proxy_us > 0 ? 2e6 / cpu[2].proxy_us : 0);
    } else if (strcmp(argv[1], "latency") == 0 && argc >= 4) {
        start_game();
        start_nginx();
        start_gate();
        int secs = atoi(argv[2]), rate = atoi(argv[3]);
        double pct[3][3];
        for (int p = 0; p < 3; p++) {
            latency((path_t)p, secs, rate, 5000 + (uint64_t)p * 1000, pct[p]);
            printf("latency %-14s %d/s: p50 %6.0f us  p99 %6.0f us  p99.9 %6.0f us\n",
                   path_names[p], rate, pct[p][0], pct[p][1], pct[p][2]);
            fflush(stdout);
        }
        printf("latency: p99 added over direct: nginx-stream %.0f us, croupier-gate %.0f us\n",
               pct[1][1] - pct[0][1], pct[2][1] - pct[0][1]);
    } else {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    stop_all();
    unlink(secret_path);
    rmdir(dir);
    free(dir);
    return 0;
}
