/*
 * bench_gate -- the gateway's figures (issue 9), against real processes on loopback: a real
 * redis-server, croupier-game --engine test and croupier-gate (started by the bench; run it from
 * the build directory or set CROUPIER_BUILD).
 *
 *   bench_gate idle N
 *       N client connections, each logged in, held idle by one gateway; source addresses
 *       127.0.0.2, .3, ... (5,000 per address). Prints the gateway's RSS growth per connection.
 *   bench_gate relay SECONDS CONNS WINDOW [ROUNDS]
 *       Closed loop: CONNS players keep WINDOW actions in flight each; every action is a frame
 *       client -> proxy -> game server and its answer back (a round trip: 2 frames relayed by
 *       the proxy), and the table pushes each action to its players (the test engine's Play):
 *       frames relayed counts every frame the clients sent and read. Each run's players sit at
 *       tables of their own. Three paths relay the same rpc traffic to the same game server:
 *       direct (no proxy), nginx's TCP stream proxy, and croupier-gate (client protocol in, rpc
 *       out).
 *       The direct path runs once, then ROUNDS (default 3) rounds of nginx and croupier-gate,
 *       the order flipping every round. Prints round trips/s, frames relayed/s and CPU per frame
 *       of each run (with the load average before it), the ratios of each round, and the
 *       medians over the rounds with the ratio of the medians: the figure to quote, as the two
 *       proxies run one after the other on a shared machine. CPU is each process's run time as
 *       the scheduler counts it (/proc/PID/task/TID/schedstat, in ns, all threads), the same
 *       measure for both proxies. BENCH_PIN=1: the proxy alone on the last CPU, the game server
 *       and the load generator on the first (both proxies meet the same load from one core).
 *   bench_gate idle-ws N
 *       The same over the WebSocket listener: each connection shakes hands and logs in with one
 *       binary message (both in one write); prints the RSS growth per connection and the
 *       handshakes (with their logins) per second.
 *   bench_gate transports SECONDS CONNS WINDOW [ROUNDS]
 *       The relay's closed loop through croupier-gate over its three client transports, in one
 *       run against one game server: TCP and WebSocket on one gateway (--listen, --ws-listen),
 *       TLS (TCP framing, a certificate the bench makes) on a second one started with
 *       --tls-cert. ROUNDS (default 3) times, the order rotating. Prints frames relayed/s, the
 *       ratios WebSocket / TCP and TLS / TCP, and the gateway's CPU per frame of each.
 *   bench_gate latency SECONDS FRAMES_PER_S [CONNS [ROUNDS]]
 *       Open loop at FRAMES_PER_S frames relayed per second through a proxy (FRAMES_PER_S / 2
 *       actions/s, each with its answer; the players sit two to a table, so each action also
 *       pushes 2 Play frames) over CONNS players (default 100): p50/p99/p99.9 round
 *       trip per path, and what each proxy adds over the direct path; ROUNDS (default 3) times.
 *
 * The load generator is one thread (epoll, non-blocking sockets, frames built from pre-encoded
 * bytes and answers read by scanning the wire); every answer is checked: one per action, in
 * order per connection, none lost or duplicated (the bench exits otherwise).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <sched.h>
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
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <wslay/wslay.h>

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

/* CPU time (user + system) a process has used so far, in seconds, from the clock ticks of
 * /proc/PID/stat (10 ms each here); -1 if unknown. The fallback of proc_cpu_s(). */
static double proc_cpu_ticks_s(pid_t pid)
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

/*
 * CPU time a process has used so far, in seconds: the scheduler's own count of the time each of
 * its threads ran (the first field of /proc/PID/task/TID/schedstat, in nanoseconds), summed over
 * its threads. Exact to the nanosecond, where /proc/PID/stat counts 10 ms ticks, and the same
 * measure for every process the bench compares (nginx's one thread, the gateway's several).
 * Falls back to /proc/PID/stat when the kernel has no schedstat; -1 if unknown.
 */
static double proc_cpu_s(pid_t pid)
{
    ts_sched_t t = ts_proc_sched(pid);
    return t.threads > 0 ? t.run_s : proc_cpu_ticks_s(pid);
}

/* The median of n values (sorted in place). */
static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
/* transports: the first gateway's WebSocket port; the TLS gateway and its ports. */
static int gate_ws_port, tls_port, tls_health;
static ts_proc_t *tls_gate;
static char tls_cert[600], tls_key[600];
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

/* A croupier-gate on the given ports (ws 0: no WebSocket listener; tls: with --tls-cert). */
static ts_proc_t *spawn_gate(int port, int health_port, int ws, bool tls)
{
    char *listen = fmt("127.0.0.1:%d", port), *health = fmt("127.0.0.1:%d", health_port);
    /* BENCH_GATE_BIN: another croupier-gate binary (a before/after comparison of two builds
     * against the same nginx and game server). */
    const char *bin = getenv("BENCH_GATE_BIN");
    char *argv[48] = {(char *)(bin != NULL ? bin : ts_build_path("gateway/croupier-gate")),
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
                      "--player-rate-limit",
                      "1000000",
                      "--player-rate-burst",
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
    int n = 0;
    while (argv[n] != NULL)
        n++;
    if (ws != 0) {
        argv[n++] = "--ws-listen";
        argv[n++] = fmt("127.0.0.1:%d", ws);
    }
    if (tls) {
        argv[n++] = "--tls-cert";
        argv[n++] = tls_cert;
        argv[n++] = "--tls-key";
        argv[n++] = tls_key;
        argv[n++] = "--gate-id";
        argv[n++] = "bench-tls";
    }
    argv[n] = NULL;
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    if (p == NULL || ts_http_wait_status("127.0.0.1", health_port, "/readyz", 200, 10000)) {
        fprintf(stderr, "gateway did not start\n");
        exit(1);
    }
    return p;
}

static void start_gate(void)
{
    gate_port = ts_free_port();
    gate_health = ts_free_port();
    gate = spawn_gate(gate_port, gate_health, 0, false);
}

/* transports: one gateway with TCP and WebSocket, one with TLS (a P-256 certificate made with
 * the openssl command in a private directory). */
static void start_gates_transports(const char *dir)
{
    gate_port = ts_free_port();
    gate_health = ts_free_port();
    gate_ws_port = ts_free_port();
    gate = spawn_gate(gate_port, gate_health, gate_ws_port, false);
    snprintf(tls_cert, sizeof tls_cert, "%s/cert.pem", dir);
    snprintf(tls_key, sizeof tls_key, "%s/key.pem", dir);
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout %s -out %s -days 2 -subj /CN=bench >/dev/null 2>&1",
             tls_key, tls_cert);
    if (system(cmd) != 0) {
        fprintf(stderr, "transports: cannot make a certificate (openssl command failed)\n");
        exit(1);
    }
    tls_port = ts_free_port();
    tls_health = ts_free_port();
    tls_gate = spawn_gate(tls_port, tls_health, 0, true);
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
    if (tls_gate != NULL) {
        ts_proc_signal(tls_gate, SIGTERM);
        ts_proc_wait(tls_gate, 5000, NULL);
        ts_proc_free(tls_gate);
        tls_gate = NULL;
    }
    if (redis != NULL)
        ts_redis_stop(redis);
    redis = NULL;
}

/* ---- connections ------------------------------------------------------------------------------
 */

/* PATH_GATE and the paths after it all speak the client protocol through a croupier-gate. */
typedef enum {
    PATH_DIRECT = 0,
    PATH_NGINX = 1,
    PATH_GATE = 2,
    PATH_GATE_WS = 3,
    PATH_GATE_TLS = 4,
} path_t;
static const char *const path_names[5] = {"direct", "nginx-stream", "croupier-gate",
                                          "gate-websocket", "gate-tls"};

typedef struct {
    int fd;
    path_t path;
    /* WebSocket: outgoing messages framed (masked) by wslay's frame API into out, incoming
     * ones read by a wslay client event context, each handed on as a 4-byte-length frame. */
    wslay_frame_context_ptr ws_fr;
    wslay_event_context_ptr ws_ev;
    const uint8_t *ws_raw; /* the bytes being fed to ws_ev */
    size_t ws_raw_len;
    uint8_t *ws_dst; /* where framed messages go, and how much room */
    size_t ws_dst_len, ws_dst_cap;
    SSL *ssl; /* TLS */
    uint64_t player;
    struct evbuffer *in;
    uint8_t out[1 << 16];
    size_t outlen;
    int idx; /* its index in the relay and latency loops */
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

static SSL_CTX *tls_client;
/* Players join at stake 10 + player / players_per_stake (0: all at stake 10), so that those who
 * share a stake share tables. relay, transports: 2000, a stake per run (each run's player ids
 * are 2000 apart), so that no run shares a table with the players a previous run left seated (a
 * table of the test engine has 9 seats; 8 players a run would otherwise fill the last run's
 * table up, a different mix in every run). latency: 2, two to a table (the test engine's
 * smallest), so that each action's push goes to 2 players, not 9, and the load stays what
 * FRAMES_PER_S says plus one push per frame. */
static uint64_t players_per_stake;

/* Bytes to the socket (through TLS when the connection has it): like send(), -1 with errno
 * EAGAIN when the socket cannot take them now. */
static ssize_t conn_send(conn_t *c, const uint8_t *p, size_t len)
{
    if (c->ssl == NULL)
        return send(c->fd, p, len, MSG_NOSIGNAL);
    int r = SSL_write(c->ssl, p, (int)len);
    if (r > 0)
        return r;
    int e = SSL_get_error(c->ssl, r);
    errno = e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ? EAGAIN : EPIPE;
    return -1;
}

static ssize_t ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                          void *arg)
{
    (void)flags;
    conn_t *c = arg;
    if (c->ws_raw_len == 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    size_t n = len < c->ws_raw_len ? len : c->ws_raw_len;
    memcpy(buf, c->ws_raw, n);
    c->ws_raw += n;
    c->ws_raw_len -= n;
    return (ssize_t)n;
}

static ssize_t ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                          void *arg)
{
    (void)ctx;
    (void)data;
    (void)flags;
    (void)arg;
    return (ssize_t)len; /* pongs are not sent: the gateway pings nobody */
}

static int ws_genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *arg)
{
    (void)ctx;
    (void)arg;
    return RAND_bytes(buf, (int)len) == 1 ? 0 : -1;
}

static void ws_msg_cb(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *a,
                      void *arg)
{
    (void)ctx;
    conn_t *c = arg;
    if (a->opcode != WSLAY_BINARY_FRAME) {
        fprintf(stderr, "gate-websocket: opcode %d (close code %d)\n", a->opcode, a->status_code);
        exit(1);
    }
    if (c->ws_dst_cap - c->ws_dst_len < FRAME_HEADER_SIZE + a->msg_length) {
        fprintf(stderr, "gate-websocket: input buffer full\n");
        exit(1);
    }
    frame_put_header(c->ws_dst + c->ws_dst_len, (uint32_t)a->msg_length);
    memcpy(c->ws_dst + c->ws_dst_len + FRAME_HEADER_SIZE, a->msg, a->msg_length);
    c->ws_dst_len += FRAME_HEADER_SIZE + a->msg_length;
}

static ssize_t ws_fr_send_cb(const uint8_t *data, size_t len, int flags, void *arg)
{
    (void)flags;
    conn_t *c = arg;
    if (sizeof c->out - c->outlen < len) {
        fprintf(stderr, "output buffer full\n");
        exit(1);
    }
    memcpy(c->out + c->outlen, data, len);
    c->outlen += len;
    return (ssize_t)len;
}

static ssize_t ws_fr_recv_cb(uint8_t *buf, size_t len, int flags, void *arg)
{
    (void)buf;
    (void)len;
    (void)flags;
    (void)arg;
    return -1;
}

/* Masks from a xorshift: a load generator needs no unpredictable masks (browsers do: RFC 6455
 * section 10.3), and RAND_bytes per frame would weigh on the cores the gateway shares. */
static int ws_fr_genmask_cb(uint8_t *buf, size_t len, void *arg)
{
    (void)arg;
    static uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    return 0;
}

/*
 * Reads what the connection has into buf as the gateway's TCP framing would carry it: the bytes
 * (through TLS when it has it), or each WebSocket binary message as a 4-byte-length frame.
 * Returns the bytes put in buf (> 0), 0 when nothing is there now, -1 at EOF or an error.
 */
static ssize_t conn_recv(conn_t *c, uint8_t *buf, size_t cap)
{
    static uint8_t raw[1 << 16];
    for (;;) {
        uint8_t *to = c->ws_ev != NULL ? raw : buf;
        size_t room = c->ws_ev != NULL ? (cap / 2 < sizeof raw ? cap / 2 : sizeof raw) : cap;
        ssize_t n;
        if (c->ssl != NULL) {
            int r = SSL_read(c->ssl, to, (int)room);
            if (r <= 0) {
                int e = SSL_get_error(c->ssl, r);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                    return 0;
                return -1;
            }
            n = r;
        } else {
            n = recv(c->fd, to, room, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return 0;
            if (n <= 0)
                return -1;
        }
        if (c->ws_ev == NULL)
            return n;
        c->ws_raw = raw;
        c->ws_raw_len = (size_t)n;
        c->ws_dst = buf;
        c->ws_dst_len = 0;
        c->ws_dst_cap = cap;
        if (wslay_event_recv(c->ws_ev) != 0 || !wslay_event_get_read_enabled(c->ws_ev)) {
            fprintf(stderr, "gate-websocket: the gateway closed or sent a bad frame\n");
            exit(1);
        }
        if (c->ws_dst_len > 0)
            return (ssize_t)c->ws_dst_len;
    }
}

/* Queues one message's payload: framed as a masked binary WebSocket message, or with the
 * 4-byte length. */
static void put_payload(conn_t *c, const uint8_t *p, size_t len)
{
    if (c->ws_fr != NULL) {
        struct wslay_frame_iocb io = {.fin = 1,
                                      .opcode = WSLAY_BINARY_FRAME,
                                      .mask = 1,
                                      .payload_length = len,
                                      .data = p,
                                      .data_length = len};
        if (wslay_frame_send(c->ws_fr, &io) != (ssize_t)len) {
            fprintf(stderr, "gate-websocket: wslay_frame_send failed\n");
            exit(1);
        }
        return;
    }
    if (sizeof c->out - c->outlen < FRAME_HEADER_SIZE + len) {
        fprintf(stderr, "output buffer full\n");
        exit(1);
    }
    frame_put_header(c->out + c->outlen, (uint32_t)len);
    memcpy(c->out + c->outlen + FRAME_HEADER_SIZE, p, len);
    c->outlen += FRAME_HEADER_SIZE + len;
}

static void put_frame(conn_t *c, const ProtobufCMessage *m)
{
    uint8_t buf[4096];
    frame_error_t err;
    ssize_t n = frame_encode(m, NULL, buf, sizeof buf, &err);
    if (n < 0) {
        fprintf(stderr, "encode failed: %s\n", err.detail);
        exit(1);
    }
    put_payload(c, buf + FRAME_HEADER_SIZE, (size_t)n - FRAME_HEADER_SIZE);
}

/* The WebSocket opening handshake on a fresh (blocking) connection; exits if refused. */
static void ws_handshake(conn_t *c)
{
    static const char req[] =
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n";
    if (send(c->fd, req, sizeof req - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof req - 1)) {
        perror("gate-websocket: send");
        exit(1);
    }
    /* The answer, byte by byte up to its empty line (nothing follows it before a request). */
    char head[1024];
    size_t n = 0;
    while (n < sizeof head - 1 && (n < 4 || memcmp(head + n - 4, "\r\n\r\n", 4) != 0)) {
        if (recv(c->fd, head + n, 1, 0) != 1) {
            fprintf(stderr, "gate-websocket: no handshake answer\n");
            exit(1);
        }
        n++;
    }
    head[n] = '\0';
    if (strncmp(head, "HTTP/1.1 101 ", 13) != 0 ||
        strstr(head, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n") == NULL) {
        fprintf(stderr, "gate-websocket: handshake refused: %s\n", head);
        exit(1);
    }
    static const struct wslay_event_callbacks cbs = {.recv_callback = ws_recv_cb,
                                                     .send_callback = ws_send_cb,
                                                     .genmask_callback = ws_genmask_cb,
                                                     .on_msg_recv_callback = ws_msg_cb};
    static const struct wslay_frame_callbacks fcbs = {.send_callback = ws_fr_send_cb,
                                                      .recv_callback = ws_fr_recv_cb,
                                                      .genmask_callback = ws_fr_genmask_cb};
    if (wslay_event_context_client_init(&c->ws_ev, &cbs, c) != 0 ||
        wslay_frame_context_init(&c->ws_fr, &fcbs, c) != 0) {
        fprintf(stderr, "gate-websocket: wslay init failed\n");
        exit(1);
    }
}

/* The TLS handshake on a fresh (blocking) connection; exits if it fails. */
static void tls_handshake(conn_t *c)
{
    if (tls_client == NULL) {
        tls_client = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_verify(tls_client, SSL_VERIFY_NONE, NULL); /* the bench's own certificate */
    }
    c->ssl = SSL_new(tls_client);
    SSL_set_fd(c->ssl, c->fd);
    if (SSL_connect(c->ssl) != 1) {
        fprintf(stderr, "gate-tls: TLS handshake failed\n");
        exit(1);
    }
}

static void flush_out(conn_t *c)
{
    size_t off = 0;
    while (off < c->outlen) {
        ssize_t n = conn_send(c, c->out + off, c->outlen - off);
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
    if ((c->ssl == NULL || SSL_pending(c->ssl) == 0) && poll(&p, 1, ms) <= 0)
        return true;
    uint8_t buf[65536];
    ssize_t n = conn_recv(c, buf, sizeof buf);
    if (n < 0)
        return false;
    evbuffer_add(c->in, buf, (size_t)n);
    return true;
}

/* The request id of the next answer in the buffer (0: none yet); *ok tells OK vs error. */
static uint64_t next_answer(conn_t *c, int *code)
{
    for (;;) {
        if (c->path >= PATH_GATE) {
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

/* Connects a player on a path: hello (rpc) or login (gate), then a join at stake 10. */
static conn_t *player_open(path_t path, uint64_t player)
{
    conn_t *c = calloc(1, sizeof *c);
    c->path = path;
    c->player = player;
    c->in = evbuffer_new();
    int port = path == PATH_DIRECT     ? game_port
               : path == PATH_NGINX    ? nginx_port
               : path == PATH_GATE_WS  ? gate_ws_port
               : path == PATH_GATE_TLS ? tls_port
                                       : gate_port;
    c->fd = dial(port, NULL);
    if (c->fd < 0) {
        fprintf(stderr, "dial %s: %s\n", path_names[path], strerror(-c->fd));
        exit(1);
    }
    if (path == PATH_GATE_WS)
        ws_handshake(c);
    if (path == PATH_GATE_TLS)
        tls_handshake(c);
    int code;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    j.game = "test";
    j.stake = 10 + (players_per_stake > 0 ? (int64_t)(player / players_per_stake) : 0);
    if (path >= PATH_GATE) {
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
    if (c->ws_ev != NULL)
        wslay_event_context_free(c->ws_ev);
    if (c->ws_fr != NULL)
        wslay_frame_context_free(c->ws_fr);
    SSL_free(c->ssl);
    close(c->fd);
    evbuffer_free(c->in);
    free(c);
}

/* Keeps the gateway's and the game server's logs (removed with the processes at exit) as
 * bench_gate-gate.log and bench_gate-game.log in the current directory, for a failed check. */
static void keep_logs(void)
{
    const ts_proc_t *ps[2] = {gate, game};
    const char *names[2] = {"bench_gate-gate.log", "bench_gate-game.log"};
    for (int i = 0; i < 2; i++) {
        if (ps[i] == NULL)
            continue;
        FILE *in = fopen(ts_proc_log_path(ps[i]), "r"), *out = fopen(names[i], "w");
        char buf[4096];
        size_t n;
        while (in != NULL && out != NULL && (n = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, n, out);
        if (in != NULL)
            fclose(in);
        if (out != NULL)
            fclose(out);
        fprintf(stderr, "log kept: %s\n", names[i]);
    }
}

/* ---- the load generator's wire work ------------------------------------------------------------
 * After the setup (login/hello, join), the relay and latency loops build their action frames
 * from a pre-encoded Action and read answers by scanning the top-level protobuf fields, with no
 * allocation and no full decode: the load generator shares the 2 cores with what it measures,
 * so it should cost as little as it can. Every answer is still matched to its request id. */

static uint8_t action_bytes[64];
static size_t action_len;

static void action_prepare(void)
{
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction s = CROUPIER__SHEDDING_ACTION__INIT;
    s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &s;
    action_len = protobuf_c_message_get_packed_size(&a.base);
    if (action_len > sizeof action_bytes)
        abort();
    protobuf_c_message_pack(&a.base, action_bytes);
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Appends one action frame: ClientMessage{request_id, action} on the gateway path, RpcFrame
 * {request_id, deadline, player, session, action} on the rpc paths (the same Action bytes). */
static void put_action(conn_t *c, uint64_t rid)
{
    uint8_t msg[128];
    uint8_t *h = msg, *p = h + FRAME_HEADER_SIZE;
    p = put_varint(p, 1 << 3);
    p = put_varint(p, rid);
    if (c->path < PATH_GATE) {
        p = put_varint(p, 3 << 3);
        p = put_varint(p, (uint64_t)(wall_ms() + 5000));
        p = put_varint(p, 4 << 3);
        p = put_varint(p, c->player);
        p = put_varint(p, 5 << 3);
        p = put_varint(p, c->player);
    }
    p = put_varint(p, 14 << 3 | 2); /* ClientMessage.action and RpcFrame.action are both 14 */
    p = put_varint(p, action_len);
    memcpy(p, action_bytes, action_len);
    p += action_len;
    put_payload(c, h + FRAME_HEADER_SIZE, (size_t)(p - h - FRAME_HEADER_SIZE));
}

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int sh = 0; sh < 64 && *p < end; sh += 7) {
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* Scans a message's top-level fields: the varint field vf into *v (left alone when absent) and
 * the bytes of the length-delimited field lf into *lp and *ll (NULL when absent). False when the
 * bytes are not well-formed protobuf. */
static bool scan_fields(const uint8_t *p, size_t len, uint32_t vf, uint64_t *v, uint32_t lf,
                        const uint8_t **lp, size_t *ll)
{
    const uint8_t *end = p + len;
    *lp = NULL;
    *ll = 0;
    while (p < end) {
        uint64_t key, x;
        if (!get_varint(&p, end, &key))
            return false;
        switch (key & 7) {
        case 0:
            if (!get_varint(&p, end, &x))
                return false;
            if ((key >> 3) == vf)
                *v = x;
            break;
        case 1:
            if (end - p < 8)
                return false;
            p += 8;
            break;
        case 5:
            if (end - p < 4)
                return false;
            p += 4;
            break;
        case 2:
            if (!get_varint(&p, end, &x) || x > (uint64_t)(end - p))
                return false;
            if ((key >> 3) == lf) {
                *lp = p;
                *ll = (size_t)x;
            }
            p += x;
            break;
        default:
            return false;
        }
    }
    return true;
}

/* The request id and error code of one answer frame's payload (rid 0: a push, not an answer).
 * Gateway path: ServerMessage{request_id=1, result=12{error=1{code=1}}}; rpc paths:
 * RpcFrame{request_id=1, reply=16{code=1}}. Exits on bytes that are not protobuf. */
static uint64_t answer_of(const conn_t *c, const uint8_t *m, size_t len, int *code)
{
    uint64_t rid = 0, cd = 0;
    const uint8_t *sub, *sub2;
    size_t sublen, sub2len;
    bool ok;
    if (c->path >= PATH_GATE) {
        ok = scan_fields(m, len, 1, &rid, 12, &sub, &sublen);
        if (ok && sub != NULL) {
            uint64_t unused;
            ok = scan_fields(sub, sublen, 0, &unused, 1, &sub2, &sub2len);
            if (ok && sub2 != NULL)
                ok = scan_fields(sub2, sub2len, 1, &cd, 0, &sub, &sublen);
        }
    } else {
        ok = scan_fields(m, len, 1, &rid, 16, &sub, &sublen);
        if (ok && sub != NULL)
            ok = scan_fields(sub, sublen, 1, &cd, 0, &sub2, &sub2len);
        else if (ok)
            rid = 0; /* hello ack, push, ping: not an action's answer */
    }
    if (!ok) {
        fprintf(stderr, "%s: malformed answer\n", path_names[c->path]);
        exit(1);
    }
    *code = (int)cd;
    return rid;
}

/* The input side of a connection in the loops: bytes read, answers taken from the front. */
typedef struct {
    uint8_t buf[1 << 17];
    size_t len;
} inbuf_t;

/* Complete frames read by read_answers (answers and pushes alike): relay's frame count. */
static uint64_t frames_read;

/* Reads what the socket has (the connection is non-blocking) and calls on_answer for every
 * complete answer frame. Exits when the peer closed or a frame is over 64 KiB. */
static void read_answers(conn_t *c, inbuf_t *ib, void (*on_answer)(conn_t *, uint64_t, int, void *),
                         void *arg)
{
    for (;;) {
        ssize_t n = conn_recv(c, ib->buf + ib->len, sizeof ib->buf - ib->len);
        if (n == 0)
            return;
        if (n < 0) {
            fprintf(stderr, "%s: connection lost\n", path_names[c->path]);
            exit(1);
        }
        ib->len += (size_t)n;
        size_t off = 0;
        while (ib->len - off >= FRAME_HEADER_SIZE) {
            const uint8_t *h = ib->buf + off;
            size_t flen = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
            if (flen > 65536) {
                fprintf(stderr, "%s: frame of %zu bytes\n", path_names[c->path], flen);
                exit(1);
            }
            if (ib->len - off < FRAME_HEADER_SIZE + flen)
                break;
            int code;
            uint64_t rid = answer_of(c, h + FRAME_HEADER_SIZE, flen, &code);
            off += FRAME_HEADER_SIZE + flen;
            frames_read++;
            if (rid != 0)
                on_answer(c, rid, code, arg);
        }
        memmove(ib->buf, ib->buf + off, ib->len - off);
        ib->len -= off;
        if ((size_t)n < sizeof ib->buf / 4 && (c->ssl == NULL || SSL_pending(c->ssl) == 0))
            return; /* short read: the socket is drained */
    }
}

/* Switches a connection from the blocking setup to the loops; bytes already read must be
 * none (the setup waited for every answer). */
static void conn_to_loop(conn_t *c, int ep, int idx)
{
    if (evbuffer_get_length(c->in) != 0) {
        fprintf(stderr, "%s: unexpected frame after the join\n", path_names[c->path]);
        exit(1);
    }
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)idx};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        perror("epoll_ctl");
        exit(1);
    }
}

/* Sends what a connection has queued (non-blocking socket: waits in poll if the kernel's
 * buffer is full, which the windows used here never reach). */
static void flush_nb(conn_t *c)
{
    size_t off = 0;
    while (off < c->outlen) {
        ssize_t n = conn_send(c, c->out + off, c->outlen - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = {.fd = c->fd, .events = POLLOUT};
            poll(&p, 1, 100);
            continue;
        }
        if (n < 0) {
            perror("send");
            exit(1);
        }
        off += (size_t)n;
    }
    c->outlen = 0;
}

/* ---- relay (closed loop) ----------------------------------------------------------------------
 */

/* CPU time per round trip of one relay run, in microseconds: the proxy on the path (nginx or
 * croupier-gate; 0 for direct), the game server and the bench's clients. */
typedef struct {
    double proxy_us, game_us, client_us;
    /* frames through the path per round trip: the action, its answer, and the pushes the
     * table sends its players (the test engine's Play to every seated player) */
    double frames_per_rt;
} relay_cpu_t;

typedef struct {
    uint64_t *next_rid;   /* per connection: the next request id to send */
    uint64_t *expect_rid; /* per connection: the id the next answer must carry (order check) */
    int *index;           /* conn -> its index */
    uint64_t done, errors;
    bool refill;
} relay_state_t;

static void relay_answer(conn_t *c, uint64_t rid, int code, void *arg)
{
    relay_state_t *st = arg;
    int i = c->idx;
    if (rid != st->expect_rid[i]) {
        /* Every frame of a connection must come back once, in order: no loss, no duplicate,
         * no reordering. */
        fprintf(stderr, "%s: answer %" PRIu64 " where %" PRIu64 " was due\n", path_names[c->path],
                rid, st->expect_rid[i]);
        keep_logs();
        exit(1);
    }
    st->expect_rid[i]++;
    st->done++;
    if (code != 0 && code != CROUPIER__ERROR_CODE__NO_ROUND)
        st->errors++;
    if (st->refill)
        put_action(c, st->next_rid[i]++);
}

/*
 * One closed-loop run on a path: nconn players with `window` actions in flight each, every
 * answer immediately replaced by a new action on the same connection, for `seconds`; then the
 * windows are drained (every action sent is answered, checked in order). Returns round trips
 * per second; each is 2 frames relayed by the proxy (client -> game server, game server ->
 * client).
 */
static double relay(path_t path, int seconds, int nconn, int window, uint64_t base_player,
                    double *errors_out, relay_cpu_t *cpu)
{
    conn_t **cs = calloc((size_t)nconn, sizeof *cs);
    inbuf_t *ibs = malloc((size_t)nconn * sizeof *ibs);
    relay_state_t st = {.next_rid = calloc((size_t)nconn, sizeof(uint64_t)),
                        .expect_rid = calloc((size_t)nconn, sizeof(uint64_t)),
                        .refill = true};
    int ep = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < nconn; i++) {
        cs[i] = player_open(path, base_player + (uint64_t)i);
        conn_to_loop(cs[i], ep, i);
        cs[i]->idx = i;
        ibs[i].len = 0;
        st.next_rid[i] = st.expect_rid[i] = 1000;
    }
    pid_t proxy = path == PATH_NGINX      ? ts_proc_pid(nginx)
                  : path == PATH_GATE_TLS ? ts_proc_pid(tls_gate)
                  : path >= PATH_GATE     ? ts_proc_pid(gate)
                                          : 0;
    double proxy0 = proxy != 0 ? proc_cpu_s(proxy) : 0, game0 = proc_cpu_s(ts_proc_pid(game)),
           self0 = self_cpu_s();
    for (int i = 0; i < nconn; i++) {
        for (int k = 0; k < window; k++)
            put_action(cs[i], st.next_rid[i]++);
        flush_nb(cs[i]);
    }
    int64_t t0 = now_us(), end = t0 + (int64_t)seconds * 1000000;
    uint64_t done_at_end = 0, frames0 = frames_read, frames_at_end = 0;
    int64_t t_end = 0;
    struct epoll_event evs[256];
    for (;;) {
        int64_t now = now_us();
        if (st.refill && now >= end) {
            st.refill = false; /* stop sending; drain what is in flight */
            done_at_end = st.done;
            frames_at_end = frames_read;
            t_end = now;
        }
        bool drained = true;
        for (int i = 0; i < nconn && !st.refill; i++)
            if (st.expect_rid[i] != st.next_rid[i])
                drained = false;
        if (!st.refill && drained)
            break;
        if (!st.refill && now > end + 10000000) {
            fprintf(stderr, "%s: answers missing after the run\n", path_names[path]);
            exit(1);
        }
        int n = epoll_wait(ep, evs, 256, 100);
        for (int k = 0; k < n; k++) {
            conn_t *c = cs[evs[k].data.u32];
            read_answers(c, &ibs[evs[k].data.u32], relay_answer, &st);
            flush_nb(c);
        }
    }
    double secs = (double)(t_end - t0) / 1e6;
    double per = done_at_end > 0 ? 1e6 / (double)st.done : 0;
    cpu->proxy_us = proxy != 0 ? (proc_cpu_s(proxy) - proxy0) * per : 0;
    cpu->game_us = (proc_cpu_s(ts_proc_pid(game)) - game0) * per;
    cpu->client_us = (self_cpu_s() - self0) * per;
    cpu->frames_per_rt =
        done_at_end > 0 ? 1 + (double)(frames_at_end - frames0) / (double)done_at_end : 2;
    for (int i = 0; i < nconn; i++)
        player_close(cs[i]);
    close(ep);
    free(cs);
    free(ibs);
    free(st.next_rid);
    free(st.expect_rid);
    *errors_out = (double)st.errors;
    return (double)done_at_end / secs;
}

/* ---- latency (open loop) --------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    int64_t *sent_at; /* by sequence number (request id - 1000) */
    int64_t *rtt;
    size_t nrtt, total;
    uint64_t *expect_rid; /* per connection: the next answer due (its sends are i, i + nconn...) */
    int nconn;
    size_t reordered;
} lat_state_t;

static void lat_answer(conn_t *c, uint64_t rid, int code, void *arg)
{
    (void)code;
    lat_state_t *st = arg;
    int i = c->idx;
    if (rid < 1000 || rid - 1000 >= st->total ||
        (rid - 1000) % (uint64_t)st->nconn != (uint64_t)i || st->sent_at[rid - 1000] <= 0) {
        /* Not sent on this connection, not sent yet, or answered before: a duplicate. */
        fprintf(stderr, "%s: unexpected answer %" PRIu64 " (duplicate or never sent)\n",
                path_names[c->path], rid);
        keep_logs();
        exit(1);
    }
    if (rid != st->expect_rid[i])
        st->reordered++; /* answered out of the order sent (a retry after a link loss) */
    st->expect_rid[i] = rid + (uint64_t)st->nconn;
    st->rtt[st->nrtt++] = now_us() - st->sent_at[rid - 1000];
    st->sent_at[rid - 1000] = -1;
}

/*
 * Open loop: `rate` actions per second in total over nconn players, the k-th sent at t0 +
 * k / rate (a 100 us timer paces the sends; each frame is sent on its own, as a player would),
 * each on its own connection in turn (round robin: a connection sends every nconn / rate
 * seconds). The round trip of every action is measured from its send to its answer; every
 * answer is checked to come once and in order. pct: p50, p99, p99.9 in microseconds.
 */
static void latency(path_t path, int seconds, int rate, int nconn, uint64_t base_player,
                    double pct[3], relay_cpu_t *cpu)
{
    conn_t **cs = calloc((size_t)nconn, sizeof *cs);
    inbuf_t *ibs = malloc((size_t)nconn * sizeof *ibs);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    lat_state_t st = {.total = (size_t)rate * (size_t)seconds,
                      .expect_rid = calloc((size_t)nconn, sizeof(uint64_t)),
                      .nconn = nconn};
    for (int i = 0; i < nconn; i++) {
        cs[i] = player_open(path, base_player + (uint64_t)i);
        conn_to_loop(cs[i], ep, i);
        cs[i]->idx = i;
        ibs[i].len = 0;
        st.expect_rid[i] = 1000 + (uint64_t)i;
    }
    st.sent_at = calloc(st.total + 1, sizeof *st.sent_at);
    st.rtt = calloc(st.total + 1, sizeof *st.rtt);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct itimerspec its = {.it_interval = {0, 100000}, .it_value = {0, 100000}};
    timerfd_settime(tfd, 0, &its, NULL);
    struct epoll_event tev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &tev);
    size_t nsent = 0;
    pid_t proxy = path == PATH_NGINX      ? ts_proc_pid(nginx)
                  : path == PATH_GATE_TLS ? ts_proc_pid(tls_gate)
                  : path >= PATH_GATE     ? ts_proc_pid(gate)
                                          : 0;
    double proxy0 = proxy != 0 ? proc_cpu_s(proxy) : 0, game0 = proc_cpu_s(ts_proc_pid(game)),
           self0 = self_cpu_s();
    int64_t t0 = now_us();
    double interval = 1e6 / rate;
    struct epoll_event evs[256];
    while (st.nrtt < st.total) {
        int64_t now = now_us();
        if (now - t0 > (int64_t)seconds * 1000000 + 10000000) {
            fprintf(stderr, "%s: %zu of %zu answered\n", path_names[path], st.nrtt, st.total);
            exit(1);
        }
        while (nsent < st.total && now >= t0 + (int64_t)((double)nsent * interval)) {
            conn_t *c = cs[nsent % (size_t)nconn];
            st.sent_at[nsent] = now;
            put_action(c, 1000 + nsent);
            flush_nb(c);
            nsent++;
        }
        int n = epoll_wait(ep, evs, 256, 100);
        for (int k = 0; k < n; k++) {
            if (evs[k].data.u32 == UINT32_MAX) {
                uint64_t ticks;
                if (read(tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN)
                    exit(1);
                continue;
            }
            conn_t *c = cs[evs[k].data.u32];
            read_answers(c, &ibs[evs[k].data.u32], lat_answer, &st);
        }
    }
    double per = 1e6 / (double)st.nrtt;
    cpu->proxy_us = proxy != 0 ? (proc_cpu_s(proxy) - proxy0) * per : 0;
    cpu->game_us = (proc_cpu_s(ts_proc_pid(game)) - game0) * per;
    cpu->client_us = (self_cpu_s() - self0) * per;
    if (st.reordered > 0) {
        fprintf(stderr, "%s: %zu answers came out of the order sent (none lost or duplicated)\n",
                path_names[path], st.reordered);
        keep_logs();
    }
    qsort(st.rtt, st.nrtt, sizeof *st.rtt, cmp_i64);
    pct[0] = (double)st.rtt[st.nrtt / 2];
    pct[1] = (double)st.rtt[(size_t)((double)st.nrtt * 0.99)];
    pct[2] = (double)st.rtt[(size_t)((double)st.nrtt * 0.999)];
    for (int i = 0; i < nconn; i++)
        player_close(cs[i]);
    close(tfd);
    close(ep);
    free(cs);
    free(ibs);
    free(st.sent_at);
    free(st.rtt);
    free(st.expect_rid);
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

/* idle over WebSocket (see the top comment). */
static void idle_ws(int n)
{
    int *fds = calloc((size_t)n, sizeof *fds);
    pid_t pid = ts_proc_pid(gate);
    conn_t *scratch = calloc(1, sizeof *scratch); /* frames the logins with wslay */
    static const struct wslay_frame_callbacks fcbs = {.send_callback = ws_fr_send_cb,
                                                      .recv_callback = ws_fr_recv_cb,
                                                      .genmask_callback = ws_fr_genmask_cb};
    if (wslay_frame_context_init(&scratch->ws_fr, &fcbs, scratch) != 0)
        exit(1);
    static const char req[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                              "Connection: Upgrade\r\nSec-WebSocket-Key: "
                              "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    ts_sleep_ms(300);
    long rss0 = rss_kib(pid);
    int64_t t0 = now_us();
    enum { BATCH = 500 };
    for (int i = 0; i < n; i += BATCH) {
        int m = i + BATCH <= n ? BATCH : n - i;
        for (int k = 0; k < m; k++) {
            char src[32];
            snprintf(src, sizeof src, "127.0.0.%d", 2 + (i + k) / 5000);
            fds[i + k] = dial(gate_ws_port, src);
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
            memcpy(scratch->out, req, sizeof req - 1);
            scratch->outlen = sizeof req - 1;
            put_frame(scratch, &cm.base);
            if (send(fds[i + k], scratch->out, scratch->outlen, MSG_NOSIGNAL) !=
                (ssize_t)scratch->outlen)
                exit(1);
        }
        for (int k = 0; k < m; k++) {
            /* the 101 and the LoginResult message after it */
            char buf[1024];
            size_t have = 0;
            for (;;) {
                char *e = have >= 4 ? memmem(buf, have, "\r\n\r\n", 4) : NULL;
                if (e != NULL && (size_t)(e + 4 - buf) + 2 <= have)
                    break;
                struct pollfd p = {.fd = fds[i + k], .events = POLLIN};
                ssize_t r = poll(&p, 1, 10000) > 0
                                ? recv(fds[i + k], buf + have, sizeof buf - have, 0)
                                : -1;
                if (r <= 0) {
                    fprintf(stderr, "no handshake and login answer on %d\n", i + k);
                    exit(1);
                }
                have += (size_t)r;
            }
            if (strncmp(buf, "HTTP/1.1 101 ", 13) != 0) {
                fprintf(stderr, "connection %d: handshake refused\n", i + k);
                exit(1);
            }
        }
    }
    double secs = (double)(now_us() - t0) / 1e6;
    ts_sleep_ms(1000);
    long rss1 = rss_kib(pid);
    char *body = NULL;
    ts_http_get("127.0.0.1", gate_health, "/metrics", 5000, &body);
    const char *at =
        body != NULL ? strstr(body, "\ngate_transport_connections{transport=\"ws\"} ") : NULL;
    long held = at != NULL ? strtol(at + strlen("\ngate_transport_connections{transport=\"ws\"} "),
                                    NULL, 10)
                           : -1;
    at = body != NULL ? strstr(body, "\ngate_logins_total ") : NULL;
    long logins = at != NULL ? strtol(at + strlen("\ngate_logins_total "), NULL, 10) : -1;
    free(body);
    printf("idle-ws: %d WebSocket connections shaken hands and logged in over %d source addresses "
           "in %.1f s (%.0f handshakes+logins/s); gateway holds %ld, logins %ld\n",
           n, 1 + (n - 1) / 5000, secs, n / secs, held, logins);
    printf("idle-ws: gateway RSS %ld KiB -> %ld KiB: %.0f bytes per connection\n", rss0, rss1,
           (double)(rss1 - rss0) * 1024.0 / n);
    if (held != n || logins != n) {
        fprintf(stderr, "idle-ws: the gateway holds %ld connections with %ld logins, not %d\n",
                held, logins, n);
        exit(1);
    }
    for (int i = 0; i < n; i++)
        close(fds[i]);
    wslay_frame_context_free(scratch->ws_fr);
    free(scratch);
    free(fds);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr,
                "usage: bench_gate idle N | idle-ws N | relay SECONDS CONNS WINDOW [ROUNDS] | "
                "transports SECONDS CONNS WINDOW [ROUNDS] | "
                "latency SECONDS FRAMES_PER_S [CONNS [ROUNDS]]\n");
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
    } else if (strcmp(argv[1], "idle-ws") == 0) {
        gate_port = ts_free_port();
        gate_health = ts_free_port();
        gate_ws_port = ts_free_port();
        gate = spawn_gate(gate_port, gate_health, gate_ws_port, false);
        idle_ws(atoi(argv[2]));
    } else if (strcmp(argv[1], "relay") == 0 && argc >= 5) {
        start_game();
        start_nginx();
        start_gate();
        action_prepare();
        players_per_stake = 2000; /* each run's players at tables of their own */
        int secs = atoi(argv[2]), nconn = atoi(argv[3]), window = atoi(argv[4]);
        int rounds = argc >= 6 ? atoi(argv[5]) : 3;
        if (secs < 1 || nconn < 1 || nconn > 1000 || window < 1 || window > 256 || rounds < 1 ||
            rounds > 20) {
            fprintf(stderr, "relay: SECONDS >= 1, CONNS 1..1000, WINDOW 1..256, ROUNDS 1..20\n");
            return 2;
        }
        bool pin = getenv("BENCH_PIN") != NULL && strcmp(getenv("BENCH_PIN"), "1") == 0;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (pin && ncpu >= 2) {
            /* The proxies on the last CPU, the load (game server, the bench) on the first
             * (ts_proc_pin); redis-server, idle once the players sit, is left alone. */
            if (ts_proc_pin(ts_proc_pid(nginx), (int)ncpu - 1) != 0 ||
                ts_proc_pin(ts_proc_pid(gate), (int)ncpu - 1) != 0 ||
                ts_proc_pin(ts_proc_pid(game), 0) != 0 || ts_proc_pin(0, 0) != 0) {
                fprintf(stderr, "relay: BENCH_PIN: sched_setaffinity failed\n");
                return 1;
            }
        }
        printf("relay: %d conns x %d actions in flight, %d s per run, each run's players at a "
               "table of their own; a round trip (action client -> game server and its answer "
               "back) is 2 frames relayed by a proxy, plus the pushes the table sends its "
               "players; the direct path once, then %d rounds of nginx and croupier-gate (the "
               "order flips every round); CPU is each process's run time from "
               "/proc/PID/task/*/schedstat; %s\n",
               nconn, window, secs, rounds,
               pin && ncpu >= 2 ? "pinned: the proxy alone on the last CPU, game server and the "
                                  "bench on the first"
                                : "not pinned (BENCH_PIN=1 pins)");
        double rt[20][3], fpr[20][3], err, ratio[20], gcpu[20], ncpu_us[20], cratio[20];
        relay_cpu_t cpu;
        /* direct (the game server alone) once: what the game server does without a proxy */
        double drt = relay(PATH_DIRECT, secs, nconn, window, 1, &err, &cpu);
        printf("relay    %-14s %8.0f round trips/s (%.2f frames a round trip), %.0f errors; cpu "
               "per round trip: game server %.2f us, bench clients %.2f us\n",
               path_names[PATH_DIRECT], drt, cpu.frames_per_rt, err, cpu.game_us, cpu.client_us);
        for (int k = 0; k < rounds; k++) {
            /* nginx and croupier-gate one after the other, the order flipping every round so
             * that neither always runs first. */
            path_t order[2] = {k % 2 ? PATH_GATE : PATH_NGINX, k % 2 ? PATH_NGINX : PATH_GATE};
            for (int j = 0; j < 2; j++) {
                path_t p = order[j];
                double load[3] = {0};
                getloadavg(load, 3);
                rt[k][p] = relay(p, secs, nconn, window,
                                 1 + (uint64_t)(k * 2 + (int)p) * 2000 + 2000, &err, &cpu);
                fpr[k][p] = cpu.frames_per_rt;
                printf("relay #%d %-14s %8.0f round trips/s = %8.0f frames relayed/s (%.2f a "
                       "round trip), %.0f errors, load %.2f\n",
                       k + 1, path_names[p], rt[k][p], fpr[k][p] * rt[k][p], fpr[k][p], err,
                       load[0]);
                printf("      cpu per frame relayed: proxy %.3f us; per round trip: proxy %.2f "
                       "us, game server %.2f us, bench clients %.2f us\n",
                       cpu.proxy_us / fpr[k][p], cpu.proxy_us, cpu.game_us, cpu.client_us);
                fflush(stdout);
                if (p == PATH_GATE)
                    gcpu[k] = cpu.proxy_us / fpr[k][p];
                if (p == PATH_NGINX)
                    ncpu_us[k] = cpu.proxy_us / fpr[k][p];
            }
            ratio[k] = rt[k][PATH_GATE] / rt[k][PATH_NGINX];
            cratio[k] = gcpu[k] / ncpu_us[k];
            printf("relay #%d: frames/s croupier-gate / nginx-stream = %.2f; cpu per frame "
                   "croupier-gate / nginx-stream = %.2f\n",
                   k + 1, ratio[k], cratio[k]);
        }
        double gfr[20], nfr[20];
        printf("relay summary: croupier-gate frames relayed/s:");
        for (int k = 0; k < rounds; k++)
            printf(" %.0f", gfr[k] = fpr[k][PATH_GATE] * rt[k][PATH_GATE]);
        printf("\nrelay summary: nginx-stream frames relayed/s:");
        for (int k = 0; k < rounds; k++)
            printf(" %.0f", nfr[k] = fpr[k][PATH_NGINX] * rt[k][PATH_NGINX]);
        printf("\nrelay summary: ratio croupier-gate / nginx-stream:");
        for (int k = 0; k < rounds; k++)
            printf(" %.2f", ratio[k]);
        printf("\nrelay summary: cpu per frame relayed (us), croupier-gate:");
        for (int k = 0; k < rounds; k++)
            printf(" %.3f", gcpu[k]);
        printf(" / nginx-stream:");
        for (int k = 0; k < rounds; k++)
            printf(" %.3f", ncpu_us[k]);
        printf("\nrelay summary: cpu per frame ratio croupier-gate / nginx-stream, each round:");
        for (int k = 0; k < rounds; k++)
            printf(" %.2f", cratio[k]);
        double mg = median(gcpu, rounds), mn = median(ncpu_us, rounds);
        printf("\nrelay median: cpu per frame relayed croupier-gate %.3f us, nginx-stream %.3f us, "
               "ratio of the medians %.2f (median of the rounds' ratios %.2f); frames relayed/s "
               "croupier-gate %.0f, nginx-stream %.0f\n",
               mg, mn, mn > 0 ? mg / mn : 0, median(cratio, rounds), median(gfr, rounds),
               median(nfr, rounds));
    } else if (strcmp(argv[1], "transports") == 0 && argc >= 5) {
        start_game();
        start_gates_transports(dir);
        action_prepare();
        players_per_stake = 2000;
        int secs = atoi(argv[2]), nconn = atoi(argv[3]), window = atoi(argv[4]);
        int rounds = argc >= 6 ? atoi(argv[5]) : 3;
        if (secs < 1 || nconn < 1 || nconn > 1000 || window < 1 || window > 256 || rounds < 1 ||
            rounds > 20) {
            fprintf(stderr, "transports: SECONDS >= 1, CONNS 1..1000, WINDOW 1..256, ROUNDS "
                            "1..20\n");
            return 2;
        }
        printf("transports: %d conns x %d actions in flight, %d s per run, through croupier-gate "
               "over TCP, WebSocket (same gateway) and TLS (a second gateway); a round trip is 2 "
               "frames relayed\n",
               nconn, window, secs);
        path_t ps[3] = {PATH_GATE, PATH_GATE_WS, PATH_GATE_TLS};
        /* BENCH_TRANSPORTS_ONLY=ws|tcp|tls: every run on that one (to look at one alone). */
        const char *only = getenv("BENCH_TRANSPORTS_ONLY");
        if (only != NULL)
            ps[0] = ps[1] = ps[2] = strcmp(only, "ws") == 0    ? PATH_GATE_WS
                                    : strcmp(only, "tls") == 0 ? PATH_GATE_TLS
                                                               : PATH_GATE;
        double fr[20][5], cpuf[20][5], err;
        relay_cpu_t cpu;
        for (int k = 0; k < rounds; k++) {
            for (int j = 0; j < 3; j++) {
                path_t p = ps[(j + k) % 3]; /* the order rotates every round */
                fr[k][p] =
                    2 * relay(p, secs, nconn, window, 1 + (uint64_t)(k * 3 + j) * 2000, &err, &cpu);
                cpuf[k][p] = cpu.proxy_us / 2;
                printf("transports #%d %-14s %8.0f frames relayed/s, cpu per frame: gateway "
                       "%.2f us, bench clients %.2f us; %.0f errors\n",
                       k + 1, path_names[p], fr[k][p], cpuf[k][p], cpu.client_us / 2, err);
                fflush(stdout);
            }
            printf("transports #%d: websocket / tcp = %.2f, tls / tcp = %.2f\n", k + 1,
                   fr[k][PATH_GATE_WS] / fr[k][PATH_GATE], fr[k][PATH_GATE_TLS] / fr[k][PATH_GATE]);
        }
        for (int j = 0; j < 3; j++) {
            printf("transports summary: %s frames relayed/s:", path_names[ps[j]]);
            for (int k = 0; k < rounds; k++)
                printf(" %.0f", fr[k][ps[j]]);
            printf("; gateway cpu us per frame:");
            for (int k = 0; k < rounds; k++)
                printf(" %.2f", cpuf[k][ps[j]]);
            printf("\n");
        }
        printf("transports summary: ratio websocket / tcp:");
        for (int k = 0; k < rounds; k++)
            printf(" %.2f", fr[k][PATH_GATE_WS] / fr[k][PATH_GATE]);
        printf("; ratio tls / tcp:");
        for (int k = 0; k < rounds; k++)
            printf(" %.2f", fr[k][PATH_GATE_TLS] / fr[k][PATH_GATE]);
        printf("\n");
    } else if (strcmp(argv[1], "latency") == 0 && argc >= 4) {
        start_game();
        start_nginx();
        start_gate();
        action_prepare();
        players_per_stake = 2;
        int secs = atoi(argv[2]), frames = atoi(argv[3]);
        int nconn = argc >= 5 ? atoi(argv[4]) : 100, rounds = argc >= 6 ? atoi(argv[5]) : 3;
        if (secs < 1 || frames < 2 || nconn < 1 || nconn > 1000 || rounds < 1 || rounds > 20) {
            fprintf(stderr, "latency: SECONDS >= 1, FRAMES_PER_S >= 2, CONNS 1..1000, ROUNDS "
                            "1..20\n");
            return 2;
        }
        int rate = frames / 2;
        printf("latency: %d frames/s relayed through a proxy = %d actions/s (each action and its "
               "answer), over %d connections, %d s per run\n",
               frames, rate, nconn, secs);
        for (int k = 0; k < rounds; k++) {
            double pct[3][3];
            path_t order[3] = {PATH_DIRECT, k % 2 ? PATH_GATE : PATH_NGINX,
                               k % 2 ? PATH_NGINX : PATH_GATE};
            for (int j = 0; j < 3; j++) {
                path_t p = order[j];
                relay_cpu_t cpu;
                latency(p, secs, rate, nconn, 100000 + (uint64_t)(k * 3 + (int)p) * 2000, pct[p],
                        &cpu);
                printf("latency #%d %-14s: p50 %6.0f us  p99 %6.0f us  p99.9 %6.0f us; cpu per "
                       "round trip: proxy %.2f us, game server %.2f us, bench %.2f us\n",
                       k + 1, path_names[p], pct[p][0], pct[p][1], pct[p][2], cpu.proxy_us,
                       cpu.game_us, cpu.client_us);
                fflush(stdout);
            }
            printf("latency #%d: added over direct: p99 nginx-stream %.0f us, croupier-gate %.0f "
                   "us; p50 nginx-stream %.0f us, croupier-gate %.0f us\n",
                   k + 1, pct[PATH_NGINX][1] - pct[PATH_DIRECT][1],
                   pct[PATH_GATE][1] - pct[PATH_DIRECT][1],
                   pct[PATH_NGINX][0] - pct[PATH_DIRECT][0],
                   pct[PATH_GATE][0] - pct[PATH_DIRECT][0]);
        }
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
