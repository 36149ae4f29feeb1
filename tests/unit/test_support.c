/* The integration-test helpers themselves: a real redis-server and child processes. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support.h"

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

int main(void)
{
    Suite *s = suite_create("support");
    TCase *tc = tcase_create("support");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_support_redis_starts_answers_and_restarts_empty);
    tcase_add_test(tc, test_support_process_log_and_exit_status);
    tcase_add_test(tc, test_support_http_get_refused_port_is_an_error);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
