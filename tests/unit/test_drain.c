/*
 * The drain shell (drain/drain.h) against a test engine made of atomics, through the real health
 * HTTP server on 127.0.0.1 (random ports), and the exit sequence on a real event_base.
 * Contract: docs/architecture.md §4 (paths, status JSON, loopback-only /drain*, exit reasons).
 */
#include <arpa/inet.h>
#include <check.h>
#include <dlfcn.h>
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
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "drain.h"
#include "log.h"
#include "support.h"

/* ---- the test engine ---- */

typedef struct {
    _Atomic long human;
    _Atomic long total;
    _Atomic bool ready;
    _Atomic bool alive;
    _Atomic int stop_calls;
} engine_t;

static long eng_human(void *ctx)
{
    return atomic_load(&((engine_t *)ctx)->human);
}
static long eng_total(void *ctx)
{
    return atomic_load(&((engine_t *)ctx)->total);
}
static bool eng_ready(void *ctx)
{
    return atomic_load(&((engine_t *)ctx)->ready);
}
static bool eng_alive(void *ctx)
{
    return atomic_load(&((engine_t *)ctx)->alive);
}
static void eng_stop(void *ctx)
{
    atomic_fetch_add(&((engine_t *)ctx)->stop_calls, 1);
}

static drain_config_t test_config(engine_t *e)
{
    drain_config_t c = {
        .ctx = e,
        .human_desks = eng_human,
        .stop_intake = eng_stop,
        .ready = eng_ready,
        .drain_max_seconds = 30,
    };
    snprintf(c.listen.host, sizeof c.listen.host, "127.0.0.1");
    c.listen.port = 0;
    return c;
}

static drain_t *start_shell(const drain_config_t *c)
{
    drain_t *d = NULL;
    ck_assert_int_eq(drain_create(c, &d), 0);
    ck_assert_int_eq(drain_serve(d), 0);
    ck_assert_int_gt(drain_port(d), 0);
    return d;
}

static int get(drain_t *d, const char *path, char **body)
{
    return ts_http_get("127.0.0.1", drain_port(d), path, 5000, body);
}

/* One raw HTTP/1.0 request from a chosen loopback source address, any method. Returns the
 * status code and the body (caller frees), or a negative errno. */
static int raw_request(const char *src, const char *method, int port, const char *path, char **body)
{
    *body = NULL;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in s = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &s.sin_addr);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (bind(fd, (struct sockaddr *)&s, sizeof s) != 0 ||
        connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    char *req = NULL;
    int n = asprintf(&req, "%s %s HTTP/1.0\r\nHost: x\r\nContent-Length: 0\r\n\r\n", method, path);
    if (n < 0 || write(fd, req, (size_t)n) != n) {
        free(req);
        close(fd);
        return -EIO;
    }
    free(req);
    char buf[8192];
    size_t len = 0;
    for (int i = 0; i < 500 && len < sizeof buf - 1; i++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10) <= 0)
            continue;
        ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    int code = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
        return -EPROTO;
    char *b = strstr(buf, "\r\n\r\n");
    *body = strdup(b ? b + 4 : "");
    return code;
}

/* ---- drain state ---- */

START_TEST(test_drain_create_rejects_missing_required_callbacks)
{
    engine_t e = {0};
    drain_config_t c = test_config(&e);
    drain_t *d = (drain_t *)1;
    c.human_desks = NULL;
    ck_assert_int_eq(drain_create(&c, &d), -EINVAL);
    ck_assert_ptr_null(d);
    c = test_config(&e);
    c.stop_intake = NULL;
    ck_assert_int_eq(drain_create(&c, &d), -EINVAL);
    c = test_config(&e);
    c.ready = NULL;
    ck_assert_int_eq(drain_create(&c, &d), -EINVAL);
    c = test_config(&e);
    c.drain_allow = "127.0.0.1,not-an-ip";
    ck_assert_int_eq(drain_create(&c, &d), -EINVAL);
    c = test_config(&e);
    c.drain_max_seconds = -1;
    ck_assert_int_eq(drain_create(&c, &d), -EINVAL);
    c = test_config(&e);
    c.header_timeout_ms = -1;
    ck_assert_int_eq(drain_create(&c, &d), -EINVAL);
    c = test_config(&e);
    c.body_timeout_ms = -1;
    ck_assert_int_eq(drain_create(&c, &d), -EINVAL);
    c = test_config(&e);
    c.max_conns = -1;
    ck_assert_int_eq(drain_create(&c, &d), -EINVAL);
    drain_destroy(NULL);
}
END_TEST

START_TEST(test_drain_start_is_idempotent_and_stops_intake_once)
{
    engine_t e = {.human = 2};
    drain_config_t c = test_config(&e);
    drain_t *d = NULL;
    ck_assert_int_eq(drain_create(&c, &d), 0);
    ck_assert(!drain_is_draining(d));
    ck_assert_int_eq(drain_elapsed_seconds(d), 0);
    ck_assert_int_eq(drain_elapsed_ns(d), 0);
    ck_assert_int_eq(atomic_load(&e.stop_calls), 0);
    ck_assert_int_eq(drain_start(d), 1);
    ck_assert(drain_is_draining(d));
    ck_assert_int_eq(atomic_load(&e.stop_calls), 1);
    ck_assert_int_eq(drain_start(d), 0);
    ck_assert_int_eq(drain_start(d), 0);
    ck_assert_int_eq(atomic_load(&e.stop_calls), 1);
    ck_assert_int_gt(drain_elapsed_ns(d), 0);
    drain_destroy(d);
}
END_TEST

static void *start_thread(void *arg)
{
    return (void *)(intptr_t)drain_start(arg);
}

START_TEST(test_drain_start_from_many_threads_starts_once)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    drain_t *d = NULL;
    ck_assert_int_eq(drain_create(&c, &d), 0);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, start_thread, d);
    int started = 0;
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        started += (int)(intptr_t)r;
    }
    ck_assert_int_eq(started, 1);
    ck_assert_int_eq(atomic_load(&e.stop_calls), 1);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_status_json_is_compact_and_total_absent_without_callback)
{
    engine_t e = {.human = 3, .total = 7};
    drain_config_t c = test_config(&e);
    drain_t *d = NULL;
    ck_assert_int_eq(drain_create(&c, &d), 0);
    char buf[192];
    ck_assert_int_gt(drain_status_json(d, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "{\"draining\":false,\"human_desks\":3,\"elapsedSeconds\":0}");
    ck_assert_int_eq(drain_status_json(d, buf, 10), -ENOSPC);
    drain_destroy(d);

    c.total_desks = eng_total;
    ck_assert_int_eq(drain_create(&c, &d), 0);
    drain_status_json(d, buf, sizeof buf);
    ck_assert_str_eq(buf, "{\"draining\":false,\"human_desks\":3,\"elapsedSeconds\":0,"
                          "\"total_desks\":7}");
    atomic_store(&e.total, 0);
    drain_status_json(d, buf, sizeof buf);
    ck_assert_str_eq(buf, "{\"draining\":false,\"human_desks\":3,\"elapsedSeconds\":0,"
                          "\"total_desks\":0}");
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_elapsed_seconds_stay_zero_before_and_count_after)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    drain_t *d = start_shell(&c);
    ts_sleep_ms(1100);
    char *body = NULL;
    ck_assert_int_eq(get(d, "/drain/status", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":false,\"human_desks\":1,\"elapsedSeconds\":0}");
    free(body);
    ck_assert_int_eq(get(d, "/drain", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":true,\"human_desks\":1,\"elapsedSeconds\":0}");
    free(body);
    ts_sleep_ms(1100);
    ck_assert_int_eq(get(d, "/drain/status", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":true,\"human_desks\":1,\"elapsedSeconds\":1}");
    free(body);
    ck_assert_int_eq(drain_elapsed_seconds(d), 1);
    drain_destroy(d);
}
END_TEST

/* ---- the HTTP endpoints ---- */

START_TEST(test_drain_http_drain_is_idempotent_and_status_transitions)
{
    engine_t e = {.human = 2, .total = 5, .ready = true};
    drain_config_t c = test_config(&e);
    c.total_desks = eng_total;
    drain_t *d = start_shell(&c);
    char *body = NULL;
    ck_assert_int_eq(get(d, "/drain/status", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":false,\"human_desks\":2,\"elapsedSeconds\":0,"
                           "\"total_desks\":5}");
    free(body);
    ck_assert_int_eq(get(d, "/drain", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":true,\"human_desks\":2,\"elapsedSeconds\":0,"
                           "\"total_desks\":5}");
    free(body);
    ck_assert_int_eq(atomic_load(&e.stop_calls), 1);
    atomic_store(&e.human, 1);
    ck_assert_int_eq(get(d, "/drain", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":true,\"human_desks\":1,\"elapsedSeconds\":0,"
                           "\"total_desks\":5}");
    free(body);
    ck_assert_int_eq(atomic_load(&e.stop_calls), 1);
    atomic_store(&e.human, 0);
    atomic_store(&e.total, 0);
    ck_assert_int_eq(get(d, "/drain/status", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":true,\"human_desks\":0,\"elapsedSeconds\":0,"
                           "\"total_desks\":0}");
    free(body);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_readyz_follows_gate_and_is_503_from_drain_start)
{
    engine_t e = {.human = 1, .ready = false};
    drain_config_t c = test_config(&e);
    drain_t *d = start_shell(&c);
    char *body = NULL;
    ck_assert_int_eq(get(d, "/readyz", &body), 503);
    ck_assert_str_eq(body, "not ready\n");
    free(body);
    atomic_store(&e.ready, true);
    ck_assert_int_eq(get(d, "/readyz", NULL), 200);
    /* From the moment drain_start returns (stop_intake already ran), readiness is 503. */
    ck_assert_int_eq(drain_start(d), 1);
    ck_assert_int_eq(get(d, "/readyz", &body), 503);
    ck_assert_str_eq(body, "draining\n");
    free(body);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_healthz_fails_on_stale_heartbeat_or_liveness)
{
    engine_t e = {.alive = true};
    drain_config_t c = test_config(&e);
    c.alive = eng_alive;
    c.heartbeat_max_age_ms = 300;
    drain_t *d = NULL;
    ck_assert_int_eq(drain_create(&c, &d), 0);
    int hb = drain_heartbeat_add(d, "worker-0");
    ck_assert_int_ge(hb, 0);
    ck_assert_int_eq(drain_serve(d), 0);
    char *body = NULL;
    ck_assert_int_eq(get(d, "/healthz", &body), 200);
    ck_assert_str_eq(body, "ok\n");
    free(body);
    ts_sleep_ms(400);
    ck_assert_int_eq(get(d, "/healthz", &body), 503);
    ck_assert_ptr_nonnull(strstr(body, "stale heartbeat worker-0"));
    free(body);
    drain_heartbeat_beat(d, hb);
    ck_assert_int_eq(get(d, "/healthz", NULL), 200);
    atomic_store(&e.alive, false);
    ck_assert_int_eq(get(d, "/healthz", NULL), 503);
    /* Liveness never depends on draining. */
    atomic_store(&e.alive, true);
    drain_start(d);
    ck_assert_int_eq(get(d, "/healthz", NULL), 200);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_rejects_non_allowed_peer_with_403)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    c.drain_allow = "127.0.0.2";
    drain_t *d = start_shell(&c);
    const char *paths[] = {"/drain", "/drain/status", "/drain/wait?timeout=1"};
    for (int i = 0; i < 3; i++) {
        char *body = NULL;
        ck_assert_int_eq(get(d, paths[i], &body), 403);
        free(body);
    }
    ck_assert(!drain_is_draining(d));
    ck_assert_int_eq(atomic_load(&e.stop_calls), 0);
    /* Non-drain paths are open to everyone. */
    ck_assert_int_eq(get(d, "/healthz", NULL), 200);
    char *body = NULL;
    ck_assert_int_eq(raw_request("127.0.0.2", "GET", drain_port(d), "/drain", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":true,\"human_desks\":1,\"elapsedSeconds\":0}");
    free(body);
    drain_destroy(d);

    /* The default policy is loopback: 127.0.0.1 and 127.0.0.2 are both allowed. */
    c.drain_allow = NULL;
    d = start_shell(&c);
    ck_assert_int_eq(get(d, "/drain/status", NULL), 200);
    ck_assert_int_eq(raw_request("127.0.0.2", "GET", drain_port(d), "/drain/status", &body), 200);
    free(body);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_non_get_is_405_and_unknown_path_404)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    drain_t *d = start_shell(&c);
    char *body = NULL;
    const char *methods[] = {"POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(raw_request("127.0.0.1", methods[i], drain_port(d), "/drain", &body), 405);
        free(body);
    }
    ck_assert(!drain_is_draining(d));
    ck_assert_int_eq(raw_request("127.0.0.1", "POST", drain_port(d), "/healthz", &body), 405);
    free(body);
    ck_assert_int_eq(get(d, "/nope", NULL), 404);
    ck_assert_int_eq(get(d, "/drain/", NULL), 404);
    ck_assert_int_eq(get(d, "/healthz/x", NULL), 404);
    /* The query does not change the route. */
    ck_assert_int_eq(get(d, "/healthz?x=1", NULL), 200);
    ck_assert_int_eq(get(d, "/drain/wait?timeout=abc", NULL), 400);
    ck_assert_int_eq(get(d, "/drain/wait?timeout=-1", NULL), 400);
    ck_assert_int_eq(get(d, "/drain/wait?timeout=", NULL), 400);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_metrics_are_prometheus_text_refreshed_with_status)
{
    engine_t e = {.human = 4, .total = 9};
    drain_config_t c = test_config(&e);
    c.total_desks = eng_total;
    metrics_registry_t *reg = metrics_create();
    metrics_t *own = metrics_counter(reg, "game_rounds_total", "game=\"ddz\",outcome=\"completed\"",
                                     "Rounds ended, by outcome");
    metrics_add(own, 3);
    c.metrics = reg;
    drain_t *d = start_shell(&c);
    char *body = NULL;
    ck_assert_int_eq(get(d, "/metrics", &body), 200);
    ck_assert_ptr_nonnull(strstr(body, "# TYPE game_draining gauge\ngame_draining 0\n"));
    ck_assert_ptr_nonnull(strstr(body, "\ngame_human_desks 4\n"));
    ck_assert_ptr_nonnull(strstr(body, "\ngame_desks 9\n"));
    ck_assert_ptr_nonnull(strstr(body, "\ngame_drain_duration_seconds 0\n"));
    ck_assert_ptr_nonnull(strstr(body, "game_rounds_total{game=\"ddz\",outcome=\"completed\"} 3"));
    free(body);
    ck_assert_int_eq(get(d, "/drain", NULL), 200);
    atomic_store(&e.human, 2);
    ck_assert_int_eq(get(d, "/metrics", &body), 200);
    ck_assert_ptr_nonnull(strstr(body, "\ngame_draining 1\n"));
    ck_assert_ptr_nonnull(strstr(body, "\ngame_human_desks 2\n"));
    free(body);
    drain_destroy(d);
    metrics_destroy(reg);

    /* Another prefix (the gateway), and no total_desks: no <prefix>_desks series at all. */
    c = test_config(&e);
    c.metric_prefix = "gate";
    d = start_shell(&c);
    ck_assert_int_eq(get(d, "/metrics", &body), 200);
    ck_assert_ptr_nonnull(strstr(body, "gate_draining 0\n"));
    ck_assert_ptr_null(strstr(body, "gate_desks"));
    ck_assert_ptr_null(strstr(body, "game_"));
    free(body);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_serve_reports_port_in_use)
{
    engine_t e = {0};
    drain_config_t c = test_config(&e);
    drain_t *a = start_shell(&c);
    c.listen.port = drain_port(a);
    drain_t *b = NULL;
    ck_assert_int_eq(drain_create(&c, &b), 0);
    ck_assert_int_lt(drain_serve(b), 0);
    ck_assert_int_eq(drain_port(b), -1);
    drain_destroy(b);
    drain_destroy(a);
}
END_TEST

START_TEST(test_drain_http_ipv6_loopback_is_allowed_and_allow_list_applies)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    snprintf(c.listen.host, sizeof c.listen.host, "::1");
    drain_t *d = start_shell(&c);
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("::1", drain_port(d), "/drain/status", 5000, &body), 200);
    ck_assert_str_eq(body, "{\"draining\":false,\"human_desks\":1,\"elapsedSeconds\":0}");
    free(body);
    drain_destroy(d);
    c.drain_allow = "127.0.0.1, 127.0.0.3";
    d = start_shell(&c);
    ck_assert_int_eq(ts_http_get("::1", drain_port(d), "/drain", 5000, NULL), 403);
    ck_assert(!drain_is_draining(d));
    ck_assert_int_eq(ts_http_get("::1", drain_port(d), "/readyz", 5000, NULL), 503);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_oversized_request_is_refused_and_server_survives)
{
    engine_t e = {.human = 1, .ready = true};
    drain_config_t c = test_config(&e);
    drain_t *d = start_shell(&c);
    char path[12000];
    memset(path, 'a', sizeof path);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    char *body = NULL;
    int code = raw_request("127.0.0.1", "GET", drain_port(d), path, &body);
    free(body);
    /* Refused by the header cap (or the connection dropped), never routed. */
    ck_assert(code != 200 && code != 404);
    ck_assert_int_eq(get(d, "/readyz", NULL), 200);
    drain_destroy(d);
}
END_TEST

/*
 * HTTP/1.0 clients, which the server closes once the reply is written, and clients that reset
 * the connection right after sending a request, while another thread of the process opens and
 * closes sockets (as the game's Redis connections do). libevent 2.1's evhttp
 * closed such a connection's descriptor before the bufferevent holding it had removed it from
 * epoll, so the HTTP thread issued EPOLL_CTL_DEL on a closed number, one that another thread
 * may have been given in between (ThreadSanitizer reports that as a race on the descriptor).
 *
 * This test binary interposes epoll_ctl (libevent calls it through the PLT) and counts every
 * EPOLL_CTL_DEL that finds the descriptor closed (EBADF) or no longer the one registered
 * (ENOENT): there must be none. It also checks that no descriptor is left open and the server
 * still answers.
 */
static _Atomic long stale_epoll_del;

/* ThreadSanitizer's own epoll_ctl wrapper (it models the ordering through epoll): this
 * definition replaces it, so it is called when present. Other builds go to libc. */
extern int __interceptor_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
    __attribute__((weak));

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    static int (*_Atomic real)(int, int, int, struct epoll_event *);
    int (*f)(int, int, int, struct epoll_event *) = atomic_load(&real);
    if (f == NULL) {
        if (__interceptor_epoll_ctl != NULL)
            f = __interceptor_epoll_ctl;
        else
            *(void **)&f = dlsym(RTLD_NEXT, "epoll_ctl");
        atomic_store(&real, f);
    }
    int rc = f(epfd, op, fd, ev);
    if (rc == -1 && op == EPOLL_CTL_DEL && (errno == EBADF || errno == ENOENT))
        atomic_fetch_add(&stale_epoll_del, 1);
    return rc;
}

typedef struct {
    _Atomic bool stop;
    long opened;
} churn_t;

static void *churn_main(void *arg)
{
    churn_t *c = arg;
    while (!atomic_load(&c->stop)) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0) {
            c->opened++;
            close(fd);
        }
        usleep(50); /* never starve the client loop (valgrind runs one thread at a time) */
    }
    return NULL;
}

static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            n++;
    return n;
}

/* Sends one request and resets the connection without reading the reply. */
static void request_and_reset(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[128];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    ck_assert_int_eq(write(fd, req, (size_t)n), n);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

START_TEST(test_drain_http_clients_resetting_mid_reply_leave_no_descriptor_behind)
{
    engine_t e = {.human = 1, .ready = true};
    drain_config_t c = test_config(&e);
    drain_t *d = start_shell(&c);
    ck_assert_int_eq(get(d, "/readyz", NULL), 200);
    int before = open_fds();
    long stale_before = atomic_load(&stale_epoll_del); /* CK_FORK=no: one process for all */
    churn_t ch = {0};
    pthread_t t;
    pthread_create(&t, NULL, churn_main, &ch);
    const char *paths[] = {"/readyz", "/healthz", "/drain/status", "/metrics"};
    long long end = ts_now_ms() + 3000;
    int sent = 0;
    for (; sent < 3000 && ts_now_ms() < end; sent++) {
        if (sent % 2 == 0)
            request_and_reset(drain_port(d), paths[sent / 2 % 4]);
        else /* HTTP/1.0: the server closes the connection once the reply is written */
            ck_assert_int_gt(get(d, paths[sent / 2 % 4], NULL), 0);
    }
    atomic_store(&ch.stop, true);
    pthread_join(t, NULL);
    ck_assert_int_gt(sent, 100);
    ck_assert_int_gt(ch.opened, 0);
    /* The server still answers, and every connection it accepted is closed again. */
    ck_assert_int_eq(get(d, "/readyz", NULL), 200);
    int after = -1;
    for (int i = 0; i < 200; i++) {
        after = open_fds();
        if (after <= before)
            break;
        ts_sleep_ms(10);
    }
    ck_assert_msg(after <= before, "%d descriptors open before, %d after %d requests", before,
                  after, sent);
    long stale = atomic_load(&stale_epoll_del) - stale_before;
    ck_assert_msg(stale == 0, "%ld epoll_ctl(DEL) calls on a closed descriptor in %d requests",
                  stale, sent);
    drain_destroy(d);
}
END_TEST

/* ---- /drain/wait ---- */

typedef struct {
    drain_t *d;
    const char *path;
    int code;
    char *body;
    long long done_ms;
} waiter_t;

static void *waiter_main(void *arg)
{
    waiter_t *w = arg;
    w->code = ts_http_get("127.0.0.1", drain_port(w->d), w->path, 20000, &w->body);
    w->done_ms = ts_now_ms();
    return NULL;
}

static void wait_for_waiters(drain_t *d, int n)
{
    for (int i = 0; i < 500 && drain_waiters(d) < n; i++)
        ts_sleep_ms(2);
    ck_assert_int_eq(drain_waiters(d), n);
}

START_TEST(test_drain_wait_answers_when_human_desks_reaches_zero_with_notify)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    c.recheck_ms = 5000; /* only drain_notify can answer in time */
    drain_t *d = start_shell(&c);
    ck_assert_int_eq(get(d, "/drain", NULL), 200);
    waiter_t w[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (waiter_t){.d = d, .path = "/drain/wait?timeout=10"};
        pthread_create(&t[i], NULL, waiter_main, &w[i]);
    }
    wait_for_waiters(d, 3);
    ts_sleep_ms(200);
    ck_assert_int_eq(drain_waiters(d), 3); /* nobody answered while human_desks == 1 */
    long long t0 = ts_now_ms();
    atomic_store(&e.human, 0);
    drain_notify(d);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(w[i].code, 200);
        ck_assert_str_eq(w[i].body, "{\"draining\":true,\"human_desks\":0,\"elapsedSeconds\":0}");
        free(w[i].body);
        /* Answered by the notify, long before the re-check (5 s) or the timeout (10 s). */
        ck_assert_int_lt(w[i].done_ms - t0, 2000);
    }
    ck_assert_int_eq(drain_waiters(d), 0);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_wait_recheck_answers_without_notify)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    c.recheck_ms = 50;
    drain_t *d = start_shell(&c);
    waiter_t w = {.d = d, .path = "/drain/wait?timeout=10"};
    pthread_t t;
    pthread_create(&t, NULL, waiter_main, &w);
    wait_for_waiters(d, 1);
    long long t0 = ts_now_ms();
    atomic_store(&e.human, 0); /* no drain_notify: the owner forgot */
    pthread_join(t, NULL);
    ck_assert_int_eq(w.code, 200);
    ck_assert_str_eq(w.body, "{\"draining\":false,\"human_desks\":0,\"elapsedSeconds\":0}");
    ck_assert_int_lt(w.done_ms - t0, 2000);
    free(w.body);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_wait_times_out_with_current_status)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    drain_t *d = start_shell(&c);
    drain_start(d);
    long long t0 = ts_now_ms();
    char *body = NULL;
    ck_assert_int_eq(get(d, "/drain/wait?timeout=0.5", &body), 200);
    long long took = ts_now_ms() - t0;
    ck_assert_int_ge(took, 450); /* libevent timers use a coarse clock */
    ck_assert_str_eq(body, "{\"draining\":true,\"human_desks\":1,\"elapsedSeconds\":0}");
    free(body);
    /* timeout=0 answers at once; human_desks already 0 answers at once. */
    ck_assert_int_eq(get(d, "/drain/wait?timeout=0", NULL), 200);
    atomic_store(&e.human, 0);
    t0 = ts_now_ms();
    ck_assert_int_eq(get(d, "/drain/wait?timeout=30", &body), 200);
    ck_assert_int_lt(ts_now_ms() - t0, 5000);
    ck_assert_str_eq(body, "{\"draining\":true,\"human_desks\":0,\"elapsedSeconds\":0}");
    free(body);
    ck_assert_int_eq(drain_waiters(d), 0);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_wait_outlives_the_connection_idle_timeout)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    c.http_timeout_s = 1;
    drain_t *d = start_shell(&c);
    char *body = NULL;
    ck_assert_int_eq(get(d, "/drain/wait?timeout=2", &body), 200);
    ck_assert_str_eq(body, "{\"draining\":false,\"human_desks\":1,\"elapsedSeconds\":0}");
    free(body);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_destroy_answers_pending_waiters)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    drain_t *d = start_shell(&c);
    int port = drain_port(d);
    waiter_t w = {.d = d, .path = "/drain/wait?timeout=30"};
    pthread_t t;
    pthread_create(&t, NULL, waiter_main, &w);
    wait_for_waiters(d, 1);
    drain_destroy(d);
    pthread_join(t, NULL);
    ck_assert_int_eq(w.code, 200);
    free(w.body);
    ck_assert_int_lt(ts_http_get("127.0.0.1", port, "/healthz", 500, NULL), 0);
}
END_TEST

static void *notifier_main(void *arg)
{
    for (int i = 0; i < 2000; i++)
        drain_notify(arg);
    return NULL;
}

START_TEST(test_drain_notify_from_many_threads_is_safe)
{
    engine_t e = {.human = 1};
    drain_config_t c = test_config(&e);
    drain_t *d = start_shell(&c);
    waiter_t w = {.d = d, .path = "/drain/wait?timeout=10"};
    pthread_t t, n[3];
    pthread_create(&t, NULL, waiter_main, &w);
    wait_for_waiters(d, 1);
    for (int i = 0; i < 3; i++)
        pthread_create(&n[i], NULL, notifier_main, d);
    atomic_store(&e.human, 0);
    for (int i = 0; i < 3; i++)
        pthread_join(n[i], NULL);
    pthread_join(t, NULL);
    ck_assert_int_eq(w.code, 200);
    free(w.body);
    drain_destroy(d);
}
END_TEST

/* ---- slowloris bounds and the connection cap ---- */

/* A loopback TCP connection to the shell's port (blocking), or -1. */
static int dial(drain_t *d)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)drain_port(d))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/*
 * Sends `head` and then one byte of `drip` every 100 ms (a slowloris: each byte restarts
 * evhttp's own timeout) until the server closes the connection or `drip` runs out. Returns the
 * number of drip bytes sent before the close was seen, or -1 if the connection stayed open.
 */
static int slowloris(int fd, const char *head, const char *drip)
{
    ck_assert_int_eq(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    for (int i = 0; drip[i] != '\0'; i++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) > 0) {
            char buf[512];
            ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN))
                return i;
        }
        if (send(fd, drip + i, 1, MSG_NOSIGNAL) != 1)
            return i;
    }
    return -1;
}

/* The value of one series in the shell's /metrics, or -1 when it is missing. */
static long metric_of(drain_t *d, const char *series)
{
    char *body = NULL;
    ck_assert_int_eq(get(d, "/metrics", &body), 200);
    char want[160];
    snprintf(want, sizeof want, "\n%s ", series);
    const char *at = strstr(body, want);
    long v = at != NULL ? strtol(at + strlen(want), NULL, 10) : -1;
    free(body);
    return v;
}

/* 60 bytes of a header value: 6 s at one byte every 100 ms. */
#define DRIP "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

START_TEST(test_drain_http_partial_headers_are_closed_at_the_header_deadline)
{
    engine_t e = {.ready = true};
    drain_config_t c = test_config(&e);
    c.header_timeout_ms = 300;
    drain_t *d = start_shell(&c);
    int fd = dial(d);
    ck_assert_int_ge(fd, 0);
    /* The headers never end: cut at the deadline, long before the drip (6 s) runs out. */
    int sent = slowloris(fd, "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: ", DRIP);
    close(fd);
    ck_assert_int_ge(sent, 0);
    ck_assert_int_eq(metric_of(d, "game_http_timeouts_total{phase=\"headers\"}"), 1);
    ck_assert_int_eq(metric_of(d, "game_http_timeouts_total{phase=\"body\"}"), 0);
    /* A connection that sends nothing at all is closed too. */
    fd = dial(d);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(slowloris(fd, "", "                                                  "), 0);
    close(fd);
    ck_assert_int_eq(metric_of(d, "game_http_timeouts_total{phase=\"headers\"}"), 2);
    /* Honest requests are served as before. */
    ck_assert_int_eq(get(d, "/readyz", NULL), 200);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_partial_body_is_closed_at_the_body_deadline)
{
    engine_t e = {.ready = true};
    drain_config_t c = test_config(&e);
    c.body_timeout_ms = 300;
    drain_t *d = start_shell(&c);
    int fd = dial(d);
    ck_assert_int_ge(fd, 0);
    int sent = slowloris(
        fd, "POST /admin/drain HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", DRIP);
    close(fd);
    ck_assert_int_ge(sent, 0);
    ck_assert_int_eq(metric_of(d, "game_http_timeouts_total{phase=\"body\"}"), 1);
    ck_assert_int_eq(metric_of(d, "game_http_timeouts_total{phase=\"headers\"}"), 0);
    ck_assert_int_eq(get(d, "/readyz", NULL), 200);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_keepalive_requests_each_get_their_deadline)
{
    engine_t e = {.ready = true};
    drain_config_t c = test_config(&e);
    c.header_timeout_ms = 400;
    drain_t *d = start_shell(&c);
    int fd = dial(d);
    ck_assert_int_ge(fd, 0);
    /* Two requests answered with an idle pause longer than the header deadline between them
     * (idle time between requests is evhttp's timeout's business, not a request being read),
     * then a slow third request: cut. */
    static const char req[] = "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n";
    for (int k = 0; k < 2; k++) {
        if (k == 1)
            ts_sleep_ms(800);
        ck_assert_int_eq(write(fd, req, sizeof req - 1), (ssize_t)(sizeof req - 1));
        char buf[1024];
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ck_assert_int_eq(poll(&p, 1, 5000), 1);
        ssize_t r = recv(fd, buf, sizeof buf - 1, 0);
        ck_assert_int_gt(r, 0);
        buf[r] = '\0';
        ck_assert_ptr_nonnull(strstr(buf, "200 OK"));
    }
    ck_assert_int_eq(metric_of(d, "game_http_timeouts_total{phase=\"headers\"}"), 0);
    int sent = slowloris(fd, "GET /readyz HTTP/1.1\r\nX-Slow: ", DRIP);
    close(fd);
    ck_assert_int_ge(sent, 0);
    ck_assert_int_eq(metric_of(d, "game_http_timeouts_total{phase=\"headers\"}"), 1);
    drain_destroy(d);
}
END_TEST

START_TEST(test_drain_http_over_the_cap_a_slow_request_makes_room_else_503)
{
    engine_t e = {.human = 1, .ready = true};
    drain_config_t c = test_config(&e);
    c.max_conns = 2;
    c.header_timeout_ms = 20000;
    drain_t *d = start_shell(&c);
    /* Two connections that send nothing hold both places: a probe takes the place of the
     * older one (which is closed) and is answered. */
    int a = dial(d), b = dial(d);
    ck_assert_int_ge(a, 0);
    ck_assert_int_ge(b, 0);
    char *body = NULL;
    ck_assert_int_eq(get(d, "/readyz", &body), 200);
    free(body);
    body = NULL;
    struct pollfd p = {.fd = a, .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 5000), 1);
    char buf[64];
    ck_assert_int_le(recv(a, buf, sizeof buf, 0), 0); /* closed without an answer */
    close(a);
    /* (The probe's connection was freed before it read the end: /metrics needs no room.) */
    ck_assert_int_eq(metric_of(d, "game_http_evicted_total"), 1);
    close(b);
    /* Two /drain/wait long polls parked (human_desks is 1) are never taken: the next request
     * is refused with a 503 and the polls are still answered later. */
    int w[2];
    static const char wait[] = "GET /drain/wait?timeout=20 HTTP/1.1\r\nHost: x\r\n\r\n";
    for (int i = 0; i < 2; i++) {
        w[i] = dial(d);
        ck_assert_int_ge(w[i], 0);
        ck_assert_int_eq(write(w[i], wait, sizeof wait - 1), (ssize_t)(sizeof wait - 1));
    }
    for (int i = 0; i < 500 && drain_waiters(d) < 2; i++)
        ts_sleep_ms(10);
    ck_assert_int_eq(drain_waiters(d), 2);
    int code = raw_request("127.0.0.1", "GET", drain_port(d), "/readyz", &body);
    ck_assert_int_eq(code, 503);
    ck_assert_ptr_nonnull(strstr(body, "too many health connections"));
    free(body);
    atomic_store(&e.human, 0);
    drain_notify(d);
    for (int i = 0; i < 2; i++) {
        p = (struct pollfd){.fd = w[i], .events = POLLIN};
        ck_assert_int_eq(poll(&p, 1, 5000), 1);
        char resp[512];
        ssize_t r = recv(w[i], resp, sizeof resp - 1, 0);
        ck_assert_int_gt(r, 0);
        resp[r] = '\0';
        ck_assert_ptr_nonnull(strstr(resp, "200 OK"));
        close(w[i]);
    }
    code = 0;
    for (int i = 0; i < 100 && code != 200; i++) {
        code = raw_request("127.0.0.1", "GET", drain_port(d), "/readyz", &body);
        free(body);
        body = NULL;
        if (code != 200)
            ts_sleep_ms(20);
    }
    ck_assert_int_eq(code, 200);
    ck_assert_int_eq(metric_of(d, "game_http_refused_total"), 1);
    drain_destroy(d);
}
END_TEST

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    Suite *s = suite_create("drain");

    TCase *tc = tcase_create("state");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_drain_create_rejects_missing_required_callbacks);
    tcase_add_test(tc, test_drain_start_is_idempotent_and_stops_intake_once);
    tcase_add_test(tc, test_drain_start_from_many_threads_starts_once);
    tcase_add_test(tc, test_drain_status_json_is_compact_and_total_absent_without_callback);
    tcase_add_test(tc, test_drain_elapsed_seconds_stay_zero_before_and_count_after);
    suite_add_tcase(s, tc);

    tc = tcase_create("http");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_drain_http_drain_is_idempotent_and_status_transitions);
    tcase_add_test(tc, test_drain_http_readyz_follows_gate_and_is_503_from_drain_start);
    tcase_add_test(tc, test_drain_http_healthz_fails_on_stale_heartbeat_or_liveness);
    tcase_add_test(tc, test_drain_http_rejects_non_allowed_peer_with_403);
    tcase_add_test(tc, test_drain_http_non_get_is_405_and_unknown_path_404);
    tcase_add_test(tc, test_drain_http_metrics_are_prometheus_text_refreshed_with_status);
    tcase_add_test(tc, test_drain_serve_reports_port_in_use);
    tcase_add_test(tc, test_drain_http_ipv6_loopback_is_allowed_and_allow_list_applies);
    tcase_add_test(tc, test_drain_http_oversized_request_is_refused_and_server_survives);
    tcase_add_test(tc, test_drain_http_clients_resetting_mid_reply_leave_no_descriptor_behind);
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_drain_http_partial_headers_are_closed_at_the_header_deadline);
    tcase_add_test(tc, test_drain_http_partial_body_is_closed_at_the_body_deadline);
    tcase_add_test(tc, test_drain_http_keepalive_requests_each_get_their_deadline);
    tcase_add_test(tc, test_drain_http_over_the_cap_a_slow_request_makes_room_else_503);
    suite_add_tcase(s, tc);

    tc = tcase_create("wait");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_drain_wait_answers_when_human_desks_reaches_zero_with_notify);
    tcase_add_test(tc, test_drain_wait_recheck_answers_without_notify);
    tcase_add_test(tc, test_drain_wait_times_out_with_current_status);
    tcase_add_test(tc, test_drain_wait_outlives_the_connection_idle_timeout);
    tcase_add_test(tc, test_drain_destroy_answers_pending_waiters);
    tcase_add_test(tc, test_drain_notify_from_many_threads_is_safe);
    suite_add_tcase(s, tc);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
