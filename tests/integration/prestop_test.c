/*
 * k8s/prestop.sh under `busybox sh` (with busybox's wget, date, sleep and timeout first in PATH,
 * as in an alpine image) against a live health server: tests/integration/drain_test_server,
 * whose human_desks drops to 0 when the test sends it SIGUSR1. docs/architecture.md §4 "preStop".
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static char path_env[512];
static char *bin_dir;

/* A directory of busybox applet links, put first in PATH for the script. */
static void setup_busybox_path(void)
{
    bin_dir = ts_tmpdir();
    ck_assert_ptr_nonnull(bin_dir);
    const char *applets[] = {"wget", "date", "sleep", "timeout"};
    for (int i = 0; i < 4; i++) {
        char link[512];
        snprintf(link, sizeof link, "%s/%s", bin_dir, applets[i]);
        ck_assert_int_eq(symlink("/usr/bin/busybox", link), 0);
    }
    snprintf(path_env, sizeof path_env, "PATH=%s:/usr/bin:/bin", bin_dir);
}

static void teardown_busybox_path(void)
{
    const char *applets[] = {"wget", "date", "sleep", "timeout"};
    for (int i = 0; i < 4; i++) {
        char link[512];
        snprintf(link, sizeof link, "%s/%s", bin_dir, applets[i]);
        unlink(link);
    }
    rmdir(bin_dir);
    free(bin_dir);
}

/* Starts the test server on a free port; waits until it serves. */
static ts_proc_t *start_server(int *port, const char *human, const char *bound)
{
    *port = ts_free_port();
    char listen[64];
    snprintf(listen, sizeof listen, "--health-listen=127.0.0.1:%d", *port);
    char hd[64], mx[64];
    snprintf(hd, sizeof hd, "--human-desks=%s", human);
    snprintf(mx, sizeof mx, "--drain-max-seconds=%s", bound);
    char *argv[] = {(char *)ts_build_path("drain/drain_test_server"), listen, hd, mx, NULL};
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ts_proc_wait_log(p, "test_server_ready", 5000), 0);
    return p;
}

static ts_proc_t *start_prestop(int port, const char *bound, const char *wait_path)
{
    char hp[64], db[64], wp[128];
    snprintf(hp, sizeof hp, "HEALTH_PORT=%d", port);
    snprintf(db, sizeof db, "DRAIN_MAX_SECONDS=%s", bound);
    snprintf(wp, sizeof wp, "PRESTOP_WAIT_PATH=%s", wait_path ? wait_path : "/drain/wait");
    char *env[] = {path_env, hp, db, wp, NULL};
    char *argv[] = {"/usr/bin/busybox", "sh", (char *)ts_source_path("k8s/prestop.sh"), NULL};
    ts_proc_t *p = ts_proc_spawn(argv, env);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Stops the server with SIGTERM and checks its single exit line. */
static void stop_server(ts_proc_t *srv, const char *reason_line)
{
    ck_assert_int_eq(ts_proc_signal(srv, SIGTERM), 0);
    int st;
    ck_assert_int_eq(ts_proc_wait(srv, 10000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(srv, reason_line));
    ts_proc_free(srv);
}

START_TEST(test_prestop_returns_soon_after_last_round_ends)
{
    int port;
    ts_proc_t *srv = start_server(&port, "1", "30");
    ts_proc_t *ps = start_prestop(port, "30", NULL);
    ck_assert_int_eq(ts_proc_wait_log(srv, "drain_started", 5000), 0);
    ts_sleep_ms(500); /* prestop is now parked in /drain/wait */
    ck_assert(ts_proc_alive(ps));
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", port, "/readyz", 2000, &body), 503);
    free(body);
    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_proc_signal(srv, SIGUSR1), 0);
    int st;
    ck_assert_int_eq(ts_proc_wait(ps, 10000, &st), 0);
    long long took = ts_now_ms() - t0;
    fprintf(stderr, "prestop returned %lld ms after human_desks reached 0\n", took);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    /* Long before the 2 s status polling could have noticed. */
    ck_assert_int_lt(took, 1500);
    ck_assert(ts_proc_log_has(ps, "prestop: drain started: {\"draining\":true,\"human_desks\":1"));
    ck_assert(
        ts_proc_log_has(ps, "no human desk in a round ({\"draining\":true,\"human_desks\":0"));
    ck_assert(!ts_proc_log_has(ps, "falling back"));
    ts_proc_free(ps);
    stop_server(srv, "\"msg\":\"exit reason=drained\"");
}
END_TEST

START_TEST(test_prestop_gives_up_at_the_drain_bound)
{
    int port;
    ts_proc_t *srv = start_server(&port, "1", "30");
    long long t0 = ts_now_ms();
    ts_proc_t *ps = start_prestop(port, "2", NULL);
    int st;
    ck_assert_int_eq(ts_proc_wait(ps, 15000, &st), 0);
    long long took = ts_now_ms() - t0;
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert_int_ge(took, 1000); /* date +%s has whole-second resolution */
    ck_assert_int_lt(took, 5000);
    ck_assert(ts_proc_log_has(ps, "gave up after"));
    ck_assert(ts_proc_log_has(ps, "DRAIN_MAX_SECONDS=2 passed"));
    ts_proc_free(ps);
    /* The server is still draining with a round running; a second SIGTERM forces the exit. */
    ck_assert_int_eq(ts_proc_signal(srv, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait_log(srv, "exit_begin", 5000), 0);
    stop_server(srv, "\"msg\":\"exit reason=forced\"");
}
END_TEST

START_TEST(test_prestop_falls_back_to_polling_status)
{
    int port;
    ts_proc_t *srv = start_server(&port, "1", "30");
    ts_proc_t *ps = start_prestop(port, "30", "/drain/missing");
    ck_assert_int_eq(ts_proc_wait_log(ps, "falling back to polling /drain/status", 5000), 0);
    ts_sleep_ms(500);
    ck_assert(ts_proc_alive(ps));
    ck_assert_int_eq(ts_proc_signal(srv, SIGUSR1), 0);
    int st;
    ck_assert_int_eq(ts_proc_wait(ps, 10000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(ps, "404"));
    ck_assert(ts_proc_log_has(ps, "no human desk in a round"));
    ts_proc_free(ps);
    stop_server(srv, "\"msg\":\"exit reason=drained\"");
}
END_TEST

START_TEST(test_prestop_idle_server_returns_at_once)
{
    int port;
    ts_proc_t *srv = start_server(&port, "0", "30");
    long long t0 = ts_now_ms();
    ts_proc_t *ps = start_prestop(port, "30", NULL);
    int st;
    ck_assert_int_eq(ts_proc_wait(ps, 5000, &st), 0);
    long long took = ts_now_ms() - t0;
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    /* The script counts whole seconds (date +%s): a run that crosses a second boundary says
     * "1s"; what matters is that it did not wait for a poll interval or the bound. */
    ck_assert(ts_proc_log_has(ps, "done after 0s") || ts_proc_log_has(ps, "done after 1s"));
    ck_assert_msg(took < 2500, "preStop took %lld ms on an idle server", took);
    ts_proc_free(ps);
    stop_server(srv, "\"msg\":\"exit reason=drained\"");
}
END_TEST

START_TEST(test_prestop_without_server_gives_up_and_exits_zero)
{
    int port = ts_free_port();
    ts_proc_t *ps = start_prestop(port, "20", NULL);
    int st;
    ck_assert_int_eq(ts_proc_wait(ps, 15000, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(ps, "the health server does not answer"));
    ts_proc_free(ps);
}
END_TEST

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    Suite *s = suite_create("prestop");
    TCase *tc = tcase_create("prestop");
    tcase_set_timeout(tc, 40);
    tcase_add_checked_fixture(tc, setup_busybox_path, teardown_busybox_path);
    tcase_add_test(tc, test_prestop_returns_soon_after_last_round_ends);
    tcase_add_test(tc, test_prestop_gives_up_at_the_drain_bound);
    tcase_add_test(tc, test_prestop_falls_back_to_polling_status);
    tcase_add_test(tc, test_prestop_idle_server_returns_at_once);
    tcase_add_test(tc, test_prestop_without_server_gives_up_and_exits_zero);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
