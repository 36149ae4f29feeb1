/*
 * bench_drain -- latency from "the last round ends" (human_desks -> 0) to the answer of the
 * drain long poll, which is what bounds how soon preStop returns. Target: <= 100 ms.
 *
 *   A. in process: the shell on 127.0.0.1, a client parked in /drain/wait; the owner sets
 *      human_desks to 0 and calls drain_notify(); time until the client has the whole answer.
 *   B. end to end: drain_test_server + `busybox sh k8s/prestop.sh` parked in /drain/wait;
 *      SIGUSR1 to the server (human_desks -> 0); time until the preStop process has exited.
 *
 * Usage: bench_drain [RUNS_A [RUNS_B [SERVER [PRESTOP]]]] (defaults 500, 30,
 * ../drain/drain_test_server, $CROUPIER_SOURCE/k8s/prestop.sh or ../../k8s/prestop.sh),
 * run from the build's bench/ directory as bench/run.sh does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "drain.h"
#include "log.h"

static _Atomic long human = 1;

static long b_human(void *ctx)
{
    (void)ctx;
    return atomic_load(&human);
}
static void b_stop(void *ctx)
{
    (void)ctx;
}
static bool b_ready(void *ctx)
{
    (void)ctx;
    return true;
}

/* Blocking GET on 127.0.0.1; returns the HTTP status or -1. */
static int http_get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char req[256], buf[4096];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\n\r\n", path);
    size_t len = 0;
    if (write(fd, req, (size_t)n) == n) {
        ssize_t r;
        while (len < sizeof buf - 1 && (r = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
            len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    int code = -1;
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
        return -1;
    return code;
}

typedef struct {
    int port;
    int code;
    int64_t done_ns;
} client_t;

static void *client_main(void *arg)
{
    client_t *c = arg;
    c->code = http_get(c->port, "/drain/wait?timeout=10");
    c->done_ns = clock_mono_ns();
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    printf("%s: runs=%d p50=%.3f ms p99=%.3f ms max=%.3f ms\n", what, n, ms[n / 2],
           ms[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], ms[n - 1]);
}

static int bench_in_process(int runs)
{
    drain_config_t c = {.human_desks = b_human,
                        .stop_intake = b_stop,
                        .ready = b_ready,
                        .drain_max_seconds = 600,
                        .recheck_ms = 10000};
    snprintf(c.listen.host, sizeof c.listen.host, "127.0.0.1");
    drain_t *d = NULL;
    if (drain_create(&c, &d) != 0 || drain_serve(d) != 0)
        return -1;
    drain_start(d);
    double *ms = calloc((size_t)runs, sizeof *ms);
    int ok = 0;
    for (int i = 0; i < runs; i++) {
        atomic_store(&human, 1);
        client_t cl = {.port = drain_port(d)};
        pthread_t t;
        pthread_create(&t, NULL, client_main, &cl);
        for (int k = 0; k < 5000 && drain_waiters(d) == 0; k++)
            usleep(200);
        int64_t t0 = clock_mono_ns();
        atomic_store(&human, 0);
        drain_notify(d);
        pthread_join(t, NULL);
        if (cl.code == 200)
            ms[ok++] = (double)(cl.done_ns - t0) / 1e6;
    }
    if (ok > 0)
        report("A in-process human_desks->0 to /drain/wait answer", ms, ok);
    free(ms);
    drain_destroy(d);
    return ok == runs ? 0 : -1;
}

static pid_t spawn(char *const argv[], char *const env_add[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        for (char *const *e = env_add; e && *e; e++)
            putenv(*e);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t l = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &l) != 0) {
        close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

static int bench_prestop(int runs, const char *server, const char *prestop)
{
    char dir[] = "/tmp/bench_drain_XXXXXX";
    if (mkdtemp(dir) == NULL)
        return -1;
    const char *applets[] = {"wget", "date", "sleep", "timeout"};
    for (int i = 0; i < 4; i++) {
        char l[128];
        snprintf(l, sizeof l, "%s/%s", dir, applets[i]);
        if (symlink("/usr/bin/busybox", l) != 0)
            return -1;
    }
    int port = free_port();
    char listen[64], path_env[256], port_env[64];
    snprintf(listen, sizeof listen, "--health-listen=127.0.0.1:%d", port);
    snprintf(path_env, sizeof path_env, "PATH=%s:/usr/bin:/bin", dir);
    snprintf(port_env, sizeof port_env, "HEALTH_PORT=%d", port);
    char *sargv[] = {(char *)server, listen, "--human-desks=1", "--drain-max-seconds=600", NULL};
    pid_t srv = spawn(sargv, NULL);
    int up = -1;
    for (int k = 0; k < 500 && up != 200; k++) {
        usleep(10000);
        up = http_get(port, "/healthz");
    }
    double *ms = calloc((size_t)runs, sizeof *ms);
    int ok = 0;
    for (int i = 0; up == 200 && i < runs; i++) {
        kill(srv, SIGUSR2); /* a round is running again */
        usleep(20000);
        char *penv[] = {path_env, port_env, "DRAIN_MAX_SECONDS=600", NULL};
        char *pargv[] = {"/usr/bin/busybox", "sh", (char *)prestop, NULL};
        pid_t ps = spawn(pargv, penv);
        usleep(300000); /* preStop is parked in /drain/wait */
        int64_t t0 = clock_mono_ns();
        kill(srv, SIGUSR1);
        int st;
        waitpid(ps, &st, 0);
        int64_t t1 = clock_mono_ns();
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ms[ok++] = (double)(t1 - t0) / 1e6;
    }
    if (ok > 0)
        report("B end-to-end human_desks->0 to preStop exit (busybox sh)", ms, ok);
    free(ms);
    kill(srv, SIGTERM);
    usleep(50000);
    kill(srv, SIGTERM); /* a second signal skips the wait */
    waitpid(srv, NULL, 0);
    for (int i = 0; i < 4; i++) {
        char l[128];
        snprintf(l, sizeof l, "%s/%s", dir, applets[i]);
        unlink(l);
    }
    rmdir(dir);
    return ok == runs ? 0 : -1;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_WARN);
    int runs_a = argc > 1 ? atoi(argv[1]) : 500;
    int runs_b = argc > 2 ? atoi(argv[2]) : 30;
    const char *server = argc > 3 ? argv[3] : "../drain/drain_test_server";
    char prestop[1024];
    if (argc > 4)
        snprintf(prestop, sizeof prestop, "%s", argv[4]);
    else if (getenv("CROUPIER_SOURCE"))
        snprintf(prestop, sizeof prestop, "%s/k8s/prestop.sh", getenv("CROUPIER_SOURCE"));
    else
        snprintf(prestop, sizeof prestop, "../../k8s/prestop.sh");
    printf("command: bench_drain %d %d %s %s\n", runs_a, runs_b, server, prestop);
    int rc = 0;
    if (runs_a > 0 && bench_in_process(runs_a) != 0) {
        fprintf(stderr, "bench_drain: in-process runs failed\n");
        rc = 1;
    }
    if (runs_b > 0 && bench_prestop(runs_b, server, prestop) != 0) {
        fprintf(stderr, "bench_drain: preStop runs failed (server %s, script %s)\n", server,
                prestop);
        rc = 1;
    }
    return rc;
}
