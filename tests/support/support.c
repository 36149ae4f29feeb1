#include "support.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long ts_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ts_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* Whether nothing is bound to 127.0.0.1:port (or, with port 0, a port the kernel picks): returns
 * the port or a negative errno. */
static int ts_try_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    close(fd);
    return ntohs(a.sin_port);
}

/*
 * A port picked at random BELOW the kernel's ephemeral range (ip_local_port_range). A port the
 * kernel hands to bind(port 0) comes from the same range it gives every outgoing connection:
 * between this check and the server's bind, any client of any test running in parallel (a
 * Redis client, a bot) may take it as its local port, and the server then fails to start
 * (listen_failed, "Address already in use"). Below the range only another test's pick can
 * collide, which the random choice among thousands of ports makes rare and testenv's retry covers.
 */
int ts_free_port(void)
{
    static __thread unsigned seed;
    if (seed == 0)
        seed = (unsigned)ts_now_ms() ^ ((unsigned)getpid() * 2654435761u) ^ (unsigned)(uintptr_t)&seed;
    int lo = 32768;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f != NULL) {
        if (fscanf(f, "%d", &lo) != 1)
            lo = 32768;
        fclose(f);
    }
    if (lo > 12000) {
        int from = lo - 10000 < 20000 ? lo - 10000 : 20000;
        for (int i = 0; i < 64; i++) {
            int port = from + (int)(rand_r(&seed) % (unsigned)(lo - from));
            if (ts_try_port(port) == port)
                return port;
        }
    }
    return ts_try_port(0);
}

static const char *ts_env_path(const char *var, const char *fallback, const char *rel)
{
    static __thread char buf[4096];
    const char *root = getenv(var);
    snprintf(buf, sizeof buf, "%s/%s", root ? root : fallback, rel);
    return buf;
}

const char *ts_build_path(const char *rel)
{
    return ts_env_path("CROUPIER_BUILD", ".", rel);
}

const char *ts_source_path(const char *rel)
{
    return ts_env_path("CROUPIER_SOURCE", "..", rel);
}

char *ts_tmpdir(void)
{
    char tmpl[] = "/tmp/croupier-test-XXXXXX";
    if (mkdtemp(tmpl) == NULL)
        return NULL;
    return strdup(tmpl);
}

void ts_rmtree(const char *dir)
{
    if (dir == NULL)
        return;
    const char *keep = getenv("CROUPIER_KEEP_LOGS");
    if (keep != NULL && strcmp(keep, "1") == 0) {
        fprintf(stderr, "# kept %s\n", dir);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execlp("rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

/* ---- processes ---------------------------------------------------------------------- */

struct ts_proc {
    pid_t pid;
    int status;
    bool reaped;
    char *dir;
    char log[4200];
};

ts_proc_t *ts_proc_spawn(char *const argv[], char *const extra_env[])
{
    ts_proc_t *p = calloc(1, sizeof *p);
    p->dir = ts_tmpdir();
    if (p->dir == NULL) {
        free(p);
        return NULL;
    }
    snprintf(p->log, sizeof p->log, "%s/log", p->dir);
    int fd = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        goto fail;
    p->pid = fork();
    if (p->pid < 0) {
        close(fd);
        goto fail;
    }
    if (p->pid == 0) {
        /* A test that fails (check forks one process per test) must not leave servers behind:
         * the child dies with the process that started it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fd, 1);
        dup2(fd, 2);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        for (char *const *e = extra_env; e != NULL && *e != NULL; e++)
            putenv(*e);
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], argv);
        dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    return p;
fail:
    ts_rmtree(p->dir);
    free(p->dir);
    free(p);
    return NULL;
}

pid_t ts_proc_pid(const ts_proc_t *p)
{
    return p->pid;
}

const char *ts_proc_log_path(const ts_proc_t *p)
{
    return p->log;
}

int ts_proc_signal(ts_proc_t *p, int sig)
{
    if (p->reaped)
        return -ESRCH;
    return kill(p->pid, sig) == 0 ? 0 : -errno;
}

int ts_proc_wait(ts_proc_t *p, int timeout_ms, int *status)
{
    long long end = ts_now_ms() + timeout_ms;
    while (!p->reaped) {
        pid_t r = waitpid(p->pid, &p->status, WNOHANG);
        if (r == p->pid) {
            p->reaped = true;
            break;
        }
        if (r < 0 && errno != EINTR)
            return -errno;
        if (ts_now_ms() >= end)
            return -ETIMEDOUT;
        ts_sleep_ms(5);
    }
    if (status != NULL)
        *status = p->status;
    return 0;
}

bool ts_proc_alive(ts_proc_t *p)
{
    if (p->reaped)
        return false;
    return ts_proc_wait(p, 0, NULL) == -ETIMEDOUT;
}

char *ts_proc_log(const ts_proc_t *p)
{
    FILE *f = fopen(p->log, "rb");
    if (f == NULL)
        return strdup("");
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

bool ts_proc_log_has(const ts_proc_t *p, const char *text)
{
    char *log = ts_proc_log(p);
    bool has = strstr(log, text) != NULL;
    free(log);
    return has;
}

int ts_proc_wait_log(const ts_proc_t *p, const char *text, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        if (ts_proc_log_has(p, text))
            return 0;
        if (ts_now_ms() >= end)
            return -ETIMEDOUT;
        ts_sleep_ms(10);
    }
}

void ts_proc_free(ts_proc_t *p)
{
    if (p == NULL)
        return;
    if (!p->reaped) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
    }
    ts_rmtree(p->dir);
    free(p->dir);
    free(p);
}

/* ---- redis -------------------------------------------------------------------------- */

struct ts_redis {
    int port;
    char addr[32];
    char *dir;
    ts_proc_t *proc;
    int replicaof; /* master's port, or 0 */
};

static int ts_redis_ping(int port, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        struct timeval tv = {0, 200000};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
        if (c != NULL && !c->err) {
            redisSetTimeout(c, tv);
            redisReply *rep = redisCommand(c, "PING");
            bool ok = rep != NULL && rep->type == REDIS_REPLY_STATUS;
            freeReplyObject(rep);
            redisFree(c);
            if (ok)
                return 0;
        } else if (c != NULL) {
            redisFree(c);
        }
        if (ts_now_ms() >= end)
            return -ETIMEDOUT;
        ts_sleep_ms(10);
    }
}

static int ts_redis_launch(ts_redis_t *r)
{
    char port[16];
    snprintf(port, sizeof port, "%d", r->port);
    char *argv[] = {"/usr/bin/redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--dir", r->dir, "--maxmemory-policy", "noeviction",
                    "--daemonize", "no",
                    /* a replica's first sync starts at once, not after the default 5 s */
                    "--repl-diskless-sync-delay", "0", NULL, NULL, NULL, NULL};
    char master[16];
    if (r->replicaof > 0) {
        snprintf(master, sizeof master, "%d", r->replicaof);
        argv[17] = "--replicaof";
        argv[18] = "127.0.0.1";
        argv[19] = master;
    }
    r->proc = ts_proc_spawn(argv, NULL);
    if (r->proc == NULL)
        return -EIO;
    if (ts_redis_ping(r->port, 5000) != 0) {
        ts_proc_free(r->proc);
        r->proc = NULL;
        return -ETIMEDOUT;
    }
    return 0;
}

ts_redis_t *ts_redis_start(void)
{
    return ts_redis_start_replica(0);
}

ts_redis_t *ts_redis_start_replica(int master_port)
{
    ts_redis_t *r = calloc(1, sizeof *r);
    r->replicaof = master_port;
    r->dir = ts_tmpdir();
    for (int attempt = 0; attempt < 5; attempt++) {
        r->port = ts_free_port();
        snprintf(r->addr, sizeof r->addr, "127.0.0.1:%d", r->port);
        if (r->port > 0 && ts_redis_launch(r) == 0)
            return r;
    }
    fprintf(stderr, "# could not start redis-server\n");
    ts_rmtree(r->dir);
    free(r->dir);
    free(r);
    return NULL;
}

int ts_redis_port(const ts_redis_t *r)
{
    return r->port;
}

const char *ts_redis_addr(const ts_redis_t *r)
{
    return r->addr;
}

void ts_redis_pause(ts_redis_t *r)
{
    if (r->proc != NULL)
        ts_proc_signal(r->proc, SIGSTOP);
}

void ts_redis_resume(ts_redis_t *r)
{
    if (r->proc != NULL)
        ts_proc_signal(r->proc, SIGCONT);
}

void ts_redis_kill(ts_redis_t *r)
{
    if (r->proc == NULL)
        return;
    ts_proc_signal(r->proc, SIGCONT);
    ts_proc_signal(r->proc, SIGTERM);
    if (ts_proc_wait(r->proc, 5000, NULL) != 0)
        ts_proc_signal(r->proc, SIGKILL);
    ts_proc_free(r->proc);
    r->proc = NULL;
}

int ts_redis_wait_synced(ts_redis_t *r, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        char *info = ts_redis_cmd(r, "INFO replication");
        bool up = info != NULL && strstr(info, "master_link_status:up") != NULL;
        free(info);
        if (up)
            return 0;
        if (ts_now_ms() >= end)
            return -ETIMEDOUT;
        ts_sleep_ms(20);
    }
}

void ts_redis_crash(ts_redis_t *r)
{
    if (r->proc == NULL)
        return;
    ts_proc_signal(r->proc, SIGKILL);
    ts_proc_wait(r->proc, 5000, NULL);
    ts_proc_free(r->proc);
    r->proc = NULL;
}

int ts_redis_restart(ts_redis_t *r)
{
    ts_redis_kill(r);
    /* The port may linger in TIME_WAIT for clients only; the server side can rebind. */
    for (int attempt = 0; attempt < 50; attempt++) {
        if (ts_redis_launch(r) == 0)
            return 0;
        ts_sleep_ms(100);
    }
    return -EIO;
}

static char *ts_reply_text(const redisReply *rep)
{
    char *out = NULL;
    switch (rep->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
        out = strndup(rep->str, rep->len);
        break;
    case REDIS_REPLY_ERROR:
        out = strndup(rep->str, rep->len);
        break;
    case REDIS_REPLY_INTEGER:
        if (asprintf(&out, "%lld", rep->integer) < 0)
            out = NULL;
        break;
    case REDIS_REPLY_NIL:
        out = strdup("(nil)");
        break;
    case REDIS_REPLY_ARRAY: {
        size_t cap = 64, len = 0;
        out = calloc(1, cap);
        for (size_t i = 0; i < rep->elements; i++) {
            char *e = ts_reply_text(rep->element[i]);
            size_t n = strlen(e);
            if (len + n + 2 > cap) {
                cap = (len + n + 2) * 2;
                out = realloc(out, cap);
            }
            if (i > 0)
                out[len++] = '\n';
            memcpy(out + len, e, n + 1);
            len += n;
            free(e);
        }
        break;
    }
    default:
        out = strdup("(unknown)");
    }
    return out;
}

static char *ts_vcmd(int port, const char *fmt, va_list ap)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c == NULL || c->err) {
        if (c != NULL)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    redisReply *rep = redisvCommand(c, fmt, ap);
    char *out = rep != NULL ? ts_reply_text(rep) : NULL;
    freeReplyObject(rep);
    redisFree(c);
    return out;
}

char *ts_redis_cmd_port(int port, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = ts_vcmd(port, fmt, ap);
    va_end(ap);
    return out;
}

char *ts_redis_cmd(ts_redis_t *r, const char *fmt, ...)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", r->port, tv);
    if (c == NULL || c->err) {
        if (c != NULL)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = redisvCommand(c, fmt, ap);
    va_end(ap);
    char *out = rep != NULL ? ts_reply_text(rep) : NULL;
    freeReplyObject(rep);
    redisFree(c);
    return out;
}

void ts_redis_stop(ts_redis_t *r)
{
    if (r == NULL)
        return;
    ts_redis_kill(r);
    ts_rmtree(r->dir);
    free(r->dir);
    free(r);
}

/* ---- sentinel ---------------------------------------------------------------------- */

struct ts_sentinel {
    int port;
    char *dir;
    ts_proc_t *proc;
};

ts_sentinel_t *ts_sentinel_start(const char *master, int master_port, int quorum, int down_after_ms,
                                 int failover_timeout_ms)
{
    ts_sentinel_t *s = calloc(1, sizeof *s);
    s->dir = ts_tmpdir();
    char conf[512];
    snprintf(conf, sizeof conf, "%s/sentinel.conf", s->dir);
    for (int attempt = 0; attempt < 5; attempt++) {
        s->port = ts_free_port();
        FILE *f = fopen(conf, "w");
        if (f == NULL || s->port <= 0) {
            if (f != NULL)
                fclose(f);
            continue;
        }
        /* Sentinel rewrites its config file: it must be writable and its own. */
        fprintf(f,
                "port %d\nbind 127.0.0.1\ndir %s\ndaemonize no\n"
                "sentinel monitor %s 127.0.0.1 %d %d\n"
                "sentinel down-after-milliseconds %s %d\n"
                "sentinel failover-timeout %s %d\n"
                "sentinel parallel-syncs %s 1\n",
                s->port, s->dir, master, master_port, quorum, master, down_after_ms, master,
                failover_timeout_ms, master);
        fclose(f);
        char *argv[] = {"/usr/bin/redis-server", conf, "--sentinel", NULL};
        s->proc = ts_proc_spawn(argv, NULL);
        if (s->proc != NULL && ts_redis_ping(s->port, 5000) == 0)
            return s;
        ts_proc_free(s->proc);
        s->proc = NULL;
    }
    fprintf(stderr, "# could not start redis-server --sentinel\n");
    ts_rmtree(s->dir);
    free(s->dir);
    free(s);
    return NULL;
}

int ts_sentinel_port(const ts_sentinel_t *s)
{
    return s->port;
}

const char *ts_sentinel_log_path(const ts_sentinel_t *s)
{
    return s->proc != NULL ? ts_proc_log_path(s->proc) : "";
}

void ts_sentinel_crash(ts_sentinel_t *s)
{
    if (s->proc == NULL)
        return;
    ts_proc_signal(s->proc, SIGKILL);
    ts_proc_wait(s->proc, 5000, NULL);
    ts_proc_free(s->proc);
    s->proc = NULL;
}

void ts_sentinel_stop(ts_sentinel_t *s)
{
    if (s == NULL)
        return;
    if (s->proc != NULL) {
        ts_proc_signal(s->proc, SIGTERM);
        if (ts_proc_wait(s->proc, 5000, NULL) != 0)
            ts_proc_signal(s->proc, SIGKILL);
        ts_proc_free(s->proc);
    }
    ts_rmtree(s->dir);
    free(s->dir);
    free(s);
}

/* ---- http --------------------------------------------------------------------------- */

int ts_http_get(const char *host, int port, const char *path, int timeout_ms, char **body)
{
    if (body != NULL)
        *body = NULL;
    long long end = ts_now_ms() + timeout_ms;
    int fd = socket(strchr(host, ':') ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int rc;
    if (strchr(host, ':')) {
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
        inet_pton(AF_INET6, host, &a.sin6_addr);
        rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        inet_pton(AF_INET, host, &a.sin_addr);
        rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    }
    if (rc != 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    char req[1024];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, host);
    if (write(fd, req, (size_t)n) != n) {
        rc = -errno;
        close(fd);
        return rc ? rc : -EIO;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0) {
            free(buf);
            close(fd);
            return -ETIMEDOUT;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, left) <= 0)
            continue;
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            free(buf);
            close(fd);
            return rc;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    int status = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
        free(buf);
        return -EPROTO;
    }
    if (body != NULL) {
        char *b = strstr(buf, "\r\n\r\n");
        *body = strdup(b ? b + 4 : "");
    }
    free(buf);
    return status;
}

int ts_http_wait_status(const char *host, int port, const char *path, int want_status,
                        int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        if (ts_http_get(host, port, path, 1000, NULL) == want_status)
            return 0;
        if (ts_now_ms() >= end)
            return -ETIMEDOUT;
        ts_sleep_ms(10);
    }
}

static redisReply *ts_rcmd(redisContext *c, const char *fmt, va_list ap)
{
    redisReply *r = redisvCommand(c, fmt, ap);
    if (r == NULL) {
        fprintf(stderr, "support: no reply from Redis to \"%s\": %s\n", fmt,
                c->errstr[0] != '\0' ? c->errstr : "connection lost");
        abort();
    }
    return r;
}

long long ts_rnum(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = ts_rcmd(c, fmt, ap);
    va_end(ap);
    long long v = r->type == REDIS_REPLY_INTEGER  ? r->integer
                  : r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10)
                                                  : 0;
    freeReplyObject(r);
    return v;
}

char *ts_rstr(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = ts_rcmd(c, fmt, ap);
    va_end(ap);
    char *v = r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
    freeReplyObject(r);
    return v;
}

uint64_t ts_tour_create(redisContext *c, const char *name, const char *format,
                        const char *structure, long long created_ms, long long start_at_ms)
{
    uint64_t id = (uint64_t)ts_rnum(c, "INCR {croupier:tours}:seq");
    long long n = ts_rnum(c,
                          "HSET {croupier:tour:%" PRIu64 "}:meta id %" PRIu64 " name %s "
                          "structure %s format %s status registering created_ms %lld "
                          "start_at_ms %lld started_ms 0 ended_ms 0 clock_ms 0 level 0 entries 0 "
                          "players 0 pool 0 cursor 0-0",
                          id, id, name, structure, format, created_ms, start_at_ms);
    if (n <= 0) {
        fprintf(stderr, "ts_tour_create: the meta hash of %" PRIu64 " was not written\n", id);
        abort();
    }
    ts_rnum(c, "ZADD {croupier:tours}:all %lld %" PRIu64, created_ms, id);
    ts_rnum(c, "SADD {croupier:tours}:live %" PRIu64, id);
    return id;
}

ts_proc_t *ts_director_spawn(ts_redis_t *r, const char *id, char *const extra[], int *health)
{
    *health = ts_free_port();
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", *health);
    char *argv[32] = {(char *)ts_build_path("tournament/croupier-director"),
                      "--redis",
                      (char *)ts_redis_addr(r),
                      "--health-listen",
                      listen,
                      "--director-id",
                      (char *)id};
    int n = 7;
    for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return ts_proc_spawn(argv, NULL);
}

ts_sched_t ts_proc_sched(pid_t pid)
{
    ts_sched_t s = {0};
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return s;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char tpath[384];
        snprintf(tpath, sizeof tpath, "%s/%s/schedstat", path, e->d_name);
        FILE *f = fopen(tpath, "r");
        unsigned long long run, wait, n;
        if (f != NULL && fscanf(f, "%llu %llu %llu", &run, &wait, &n) == 3) {
            s.run_s += (double)run / 1e9;
            s.wait_s += (double)wait / 1e9;
            s.slices += (double)n;
            s.threads++;
        }
        if (f != NULL)
            fclose(f);
    }
    closedir(d);
    return s;
}

int ts_proc_pin(pid_t pid, int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pid == 0)
        return sched_setaffinity(0, sizeof set, &set);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' &&
            sched_setaffinity((pid_t)atoi(e->d_name), sizeof set, &set) != 0)
            rc = -1;
    closedir(d);
    return rc;
}
