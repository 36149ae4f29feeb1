/* The integration-test helpers themselves: a real redis-server, child processes and the testenv
 * rig (redis-server plus croupier-game / croupier-gate). */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"
#include "testenv.h"

START_TEST(test_support_redis_starts_answers_and_restarts_empty)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    char *s = ts_redis_cmd(r, "SET k v");
    ck_assert_str_eq(s, "OK");
    free(s);
    s = ts_redis_cmd(r, "GET k");
    ck_assert_str_eq(s, "v");
    free(s);
    int port = ts_redis_port(r);
    ck_assert_int_eq(ts_redis_restart(r), 0);
    ck_assert_int_eq(ts_redis_port(r), port);
    s = ts_redis_cmd(r, "GET k");
    ck_assert_str_eq(s, "(nil)");
    free(s);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_support_process_log_and_exit_status)
{
    char *argv[] = {"/bin/sh", "-c", "echo hello-$X; exit 3", NULL};
    char *env[] = {"X=world", NULL};
    ts_proc_t *p = ts_proc_spawn(argv, env);
    ck_assert_ptr_nonnull(p);
    int st;
    ck_assert_int_eq(ts_proc_wait(p, 5000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    ck_assert(ts_proc_log_has(p, "hello-world"));
    ts_proc_free(p);
}
END_TEST

START_TEST(test_support_http_get_refused_port_is_an_error)
{
    int port = ts_free_port();
    ck_assert_int_gt(port, 0);
    ck_assert_int_lt(ts_http_get("127.0.0.1", port, "/", 500, NULL), 0);
}
END_TEST

#define TESTENV_SECRET "testenv-secret-0123456789"

START_TEST(test_testenv_secret_file_holds_the_secret_until_stop)
{
    testenv_t e;
    ck_assert_int_eq(testenv_start(&e, TESTENV_SECRET), 0);
    ck_assert_ptr_nonnull(e.redis);
    ck_assert_ptr_nonnull(e.secret_path);
    char *path = strdup(e.secret_path);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char buf[64] = {0};
    ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
    fclose(f);
    ck_assert_str_eq(buf, TESTENV_SECRET "\n");
    testenv_stop(&e);
    ck_assert_ptr_null(e.redis);
    ck_assert_ptr_null(e.secret_path);
    ck_assert_int_eq(access(path, F_OK), -1);
    *strrchr(path, '/') = '\0';
    ck_assert_int_eq(access(path, F_OK), -1); /* the directory is gone too */
    free(path);
    testenv_stop(&e); /* stopping twice is harmless */
}
END_TEST

START_TEST(test_testenv_game_and_gate_become_ready_and_stop)
{
    testenv_t e;
    ck_assert_int_eq(testenv_start(&e, TESTENV_SECRET), 0);
    ck_assert_int_eq(testenv_start_game(&e, &e.game, "test", 5, NULL, NULL), 0);
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/readyz", 2000, NULL), 200);
    testenv_server_t gate;
    ck_assert_int_eq(testenv_start_gate(&e, &gate, "g1", NULL), 0);
    ck_assert_int_ne(gate.port, gate.health);
    ck_assert_int_eq(ts_http_get("127.0.0.1", gate.health, "/readyz", 2000, NULL), 200);
    testenv_stop_server(&gate);
    ck_assert_ptr_null(gate.proc);
    ck_assert_int_lt(ts_http_get("127.0.0.1", gate.health, "/readyz", 500, NULL), 0);
    testenv_stop_server(&gate); /* no-op once stopped */
    int health = e.game.health;
    testenv_stop(&e);
    ck_assert_ptr_null(e.game.proc);
    ck_assert_int_lt(ts_http_get("127.0.0.1", health, "/readyz", 500, NULL), 0);
}
END_TEST

START_TEST(test_testenv_server_that_exits_is_reported_without_waiting_out_the_timeout)
{
    testenv_t e;
    ck_assert_int_eq(testenv_start(&e, NULL), 0);
    testenv_server_t s;
    ck_assert_int_eq(testenv_start_gate(&e, &s, "g1", NULL), -EINVAL); /* no secret file */
    ck_assert_ptr_null(s.proc);
    long long t0 = ts_now_ms();
    char *bad[] = {"--no-such-flag", NULL};
    ck_assert_int_eq(testenv_start_game(&e, &s, "test", 5, bad, NULL), -ESRCH);
    ck_assert_ptr_null(s.proc);
    ck_assert_int_eq(s.port, 0);
    ck_assert_int_eq(testenv_start_game(&e, &s, "chess", 5, NULL, NULL), -ESRCH);
    ck_assert_int_lt(ts_now_ms() - t0, 9000);
    testenv_stop(&e);
    ck_assert_int_eq(testenv_start(&e, "short"), 0); /* croupier-gate wants 16 bytes or more */
    ck_assert_int_eq(testenv_start_gate(&e, &s, "g1", NULL), -ESRCH);
    ck_assert_ptr_null(s.proc);
    testenv_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("support");
    TCase *tc = tcase_create("support");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_support_redis_starts_answers_and_restarts_empty);
    tcase_add_test(tc, test_support_process_log_and_exit_status);
    tcase_add_test(tc, test_support_http_get_refused_port_is_an_error);
    suite_add_tcase(s, tc);
    TCase *te = tcase_create("testenv");
    tcase_set_timeout(te, 60);
    tcase_add_test(te, test_testenv_secret_file_holds_the_secret_until_stop);
    tcase_add_test(te, test_testenv_game_and_gate_become_ready_and_stop);
    tcase_add_test(te, test_testenv_server_that_exits_is_reported_without_waiting_out_the_timeout);
    suite_add_tcase(s, te);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
