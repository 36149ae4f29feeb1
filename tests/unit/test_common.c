/* Unit tests for common/: config, metrics, log, clock. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cardtext.h"
#include "clock.h"
#include "config.h"
#include "log.h"
#include "metrics.h"
#include "u64map.h"

static const char *t_str;
static long t_int;
static bool t_bool;
static config_addr_t t_addr;

static const config_flag_t t_flags[] = {
    {"redis", CONFIG_ADDR, "127.0.0.1:6379", "Redis address", &t_addr, 0, 0},
    {"drain-max-seconds", CONFIG_INT, "600", "drain bound", &t_int, 1, 86400},
    {"service", CONFIG_STR, "game", "service name", &t_str, 0, 0},
    {"verbose", CONFIG_BOOL, "false", "more logs", &t_bool, 0, 0},
    {0},
};

static int parse(int argc, char **argv, char *err)
{
    return config_parse(t_flags, "t", "test", argc, argv, err, 256);
}

START_TEST(test_config_defaults_apply)
{
    char err[256];
    char *argv[] = {"t", NULL};
    unsetenv("CROUPIER_DRAIN_MAX_SECONDS");
    ck_assert_int_eq(parse(1, argv, err), CONFIG_OK);
    ck_assert_int_eq(t_int, 600);
    ck_assert_str_eq(t_str, "game");
    ck_assert_str_eq(t_addr.host, "127.0.0.1");
    ck_assert_int_eq(t_addr.port, 6379);
    ck_assert(!t_bool);
}
END_TEST

START_TEST(test_config_flag_beats_env_beats_default)
{
    char err[256];
    setenv("CROUPIER_DRAIN_MAX_SECONDS", "120", 1);
    char *argv1[] = {"t", NULL};
    ck_assert_int_eq(parse(1, argv1, err), CONFIG_OK);
    ck_assert_int_eq(t_int, 120);
    char *argv2[] = {"t", "--drain-max-seconds", "30", "--verbose", "--redis=[::1]:7000", NULL};
    ck_assert_int_eq(parse(5, argv2, err), CONFIG_OK);
    ck_assert_int_eq(t_int, 30);
    ck_assert(t_bool);
    ck_assert_str_eq(t_addr.host, "::1");
    ck_assert_int_eq(t_addr.port, 7000);
    unsetenv("CROUPIER_DRAIN_MAX_SECONDS");
}
END_TEST

START_TEST(test_config_bad_input_is_explained)
{
    char err[256];
    char *a1[] = {"t", "--nope", NULL};
    ck_assert_int_eq(parse(2, a1, err), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "unknown flag '--nope'"));
    char *a2[] = {"t", "--drain-max-seconds", "ten", NULL};
    ck_assert_int_eq(parse(3, a2, err), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "not a whole number"));
    char *a3[] = {"t", "--drain-max-seconds", "0", NULL};
    ck_assert_int_eq(parse(3, a3, err), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "outside"));
    char *a4[] = {"t", "--redis", "localhost:6379", NULL};
    ck_assert_int_eq(parse(3, a4, err), CONFIG_ERROR);
    char *a5[] = {"t", "--service", NULL};
    ck_assert_int_eq(parse(2, a5, err), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "needs a value"));
    char *a6[] = {"t", "stray", NULL};
    ck_assert_int_eq(parse(2, a6, err), CONFIG_ERROR);
    setenv("CROUPIER_VERBOSE", "maybe", 1);
    char *a7[] = {"t", NULL};
    ck_assert_int_eq(parse(1, a7, err), CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "CROUPIER_VERBOSE"));
    unsetenv("CROUPIER_VERBOSE");
}
END_TEST

/* Runs parse() with stdout (the TAP stream) sent to a file; returns what it printed (caller
 * frees) and the result in *rc. */
static char *parse_printed(int argc, char **argv, char *err, int *rc)
{
    char path[] = "/tmp/croupier-test-stdout-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
    *rc = parse(argc, argv, err);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    char *out = calloc(1, (size_t)n + 1);
    ck_assert_int_eq(pread(fd, out, (size_t)n, 0), n);
    close(fd);
    return out;
}

/* --version exists only in programs that set config_program_version (the installed binaries,
 * common/version.h); it prints "<prog> <version>" and ends the program like --help. */
START_TEST(test_config_version_flag_only_when_the_program_has_one)
{
    char err[256];
    int rc;
    char *a1[] = {"t", "--version", NULL};
    config_program_version = NULL;
    free(parse_printed(2, a1, err, &rc));
    ck_assert_int_eq(rc, CONFIG_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "unknown flag '--version'"));
    char *a2[] = {"t", "--help", NULL};
    char *help = parse_printed(2, a2, err, &rc);
    ck_assert_int_eq(rc, CONFIG_HELP);
    ck_assert_ptr_null(strstr(help, "--version"));
    free(help);

    config_program_version = "v1.2-3-gabc-dirty";
    char *out = parse_printed(2, a1, err, &rc);
    ck_assert_int_eq(rc, CONFIG_HELP);
    ck_assert_str_eq(out, "t v1.2-3-gabc-dirty\n");
    free(out);
    char *a3[] = {"t", "--drain-max-seconds", "30", "--version", NULL};
    out = parse_printed(4, a3, err, &rc);
    ck_assert_int_eq(rc, CONFIG_HELP);
    ck_assert_str_eq(out, "t v1.2-3-gabc-dirty\n");
    free(out);
    help = parse_printed(2, a2, err, &rc);
    ck_assert_int_eq(rc, CONFIG_HELP);
    ck_assert_ptr_nonnull(strstr(help, "--version"));
    free(help);
    config_program_version = NULL;
}
END_TEST

START_TEST(test_config_env_name_derivation)
{
    char buf[64];
    config_env_name("drain-max-seconds", buf, sizeof buf);
    ck_assert_str_eq(buf, "CROUPIER_DRAIN_MAX_SECONDS");
}
END_TEST

START_TEST(test_config_list_has_matches_whole_names_only)
{
    ck_assert(config_list_has("doudizhu,runfast,guandan", "runfast"));
    ck_assert(config_list_has("doudizhu,runfast,guandan", "doudizhu"));
    ck_assert(config_list_has("doudizhu,runfast,guandan", "guandan"));
    ck_assert(!config_list_has("doudizhu,runfast,guandan", "run"));
    ck_assert(!config_list_has("doudizhu,runfast", "runfast2"));
    ck_assert(!config_list_has("", "runfast"));
    ck_assert(!config_list_has("runfast", ""));
}
END_TEST

START_TEST(test_config_addr_forms)
{
    config_addr_t a;
    ck_assert_int_eq(config_parse_addr("0.0.0.0:8080", &a), 0);
    ck_assert_int_eq(a.port, 8080);
    ck_assert_int_eq(config_parse_addr("[::1]:0", &a), 0);
    ck_assert_int_eq(config_parse_addr("127.0.0.1:70000", &a), -EINVAL);
    ck_assert_int_eq(config_parse_addr("127.0.0.1", &a), -EINVAL);
    ck_assert_int_eq(config_parse_addr(":80", &a), -EINVAL);
    ck_assert_int_eq(config_parse_addr("1.2.3.4:x", &a), -EINVAL);
}
END_TEST

START_TEST(test_metrics_render_prometheus_text)
{
    metrics_registry_t *r = metrics_create();
    metrics_t *c =
        metrics_counter(r, "game_rounds_total", "game=\"ddz\",outcome=\"completed\"", "Rounds");
    ck_assert_ptr_eq(
        c, metrics_counter(r, "game_rounds_total", "game=\"ddz\",outcome=\"completed\"", "Rounds"));
    metrics_add(c, 3);
    metrics_t *g = metrics_gauge(r, "game_draining", NULL, "Draining");
    metrics_set(g, 1);
    ck_assert_ptr_null(metrics_gauge(r, "game_rounds_total", NULL, "wrong type"));
    double b[] = {0.1, 1};
    metrics_t *h = metrics_histogram(r, "lat_seconds", "", "Latency", b, 2);
    metrics_observe(h, 0.05);
    metrics_observe(h, 0.5);
    metrics_observe(h, 5);
    char *text = metrics_render(r, NULL);
    ck_assert_ptr_nonnull(strstr(text, "# TYPE game_rounds_total counter\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "game_rounds_total{game=\"ddz\",outcome=\"completed\"} 3\n"));
    ck_assert_ptr_nonnull(strstr(text, "game_draining 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "lat_seconds_bucket{le=\"0.1\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "lat_seconds_bucket{le=\"1\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(text, "lat_seconds_bucket{le=\"+Inf\"} 3\n"));
    ck_assert_ptr_nonnull(strstr(text, "lat_seconds_sum 5.55\n"));
    ck_assert_ptr_nonnull(strstr(text, "lat_seconds_count 3\n"));
    free(text);
    metrics_destroy(r);
    metrics_destroy(NULL);
}
END_TEST

static metrics_t *shared_counter;

static void *bump(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100000; i++)
        metrics_add(shared_counter, 1);
    return NULL;
}

START_TEST(test_metrics_counter_exact_under_threads)
{
    metrics_registry_t *r = metrics_create();
    shared_counter = metrics_counter(r, "c_total", NULL, "c");
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, bump, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq((long)metrics_value(shared_counter), 400000);
    metrics_destroy(r);
}
END_TEST

START_TEST(test_log_writes_one_json_line_per_record)
{
    char path[] = "/tmp/croupier-log-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    log_set_fd(fd);
    log_set_level(LOG_INFO);
    log_emit(LOG_DEBUG, "hidden", NULL);
    log_emit(LOG_INFO, "lease_acquired", "{s:i,s:s}", "slot", 3, "service", "game");
    log_emit(LOG_WARN, "bad_format", "{s:q}", "key");
    log_set_fd(2);
    lseek(fd, 0, SEEK_SET);
    char buf[1024] = {0};
    ck_assert_int_gt(read(fd, buf, sizeof buf - 1), 0);
    close(fd);
    unlink(path);
    ck_assert_ptr_null(strstr(buf, "hidden"));
    char *nl = strchr(buf, '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = '\0';
    json_error_t e;
    json_t *rec = json_loads(buf, 0, &e);
    ck_assert_ptr_nonnull(rec);
    ck_assert_str_eq(json_string_value(json_object_get(rec, "event")), "lease_acquired");
    ck_assert_str_eq(json_string_value(json_object_get(rec, "level")), "info");
    ck_assert_int_eq(json_integer_value(json_object_get(rec, "slot")), 3);
    json_decref(rec);
    ck_assert_ptr_nonnull(strstr(nl + 1, "log_format_error"));
}
END_TEST

START_TEST(test_clock_monotonic_and_boot_advance)
{
    int64_t a = clock_mono_ns(), b = clock_boot_ns();
    usleep(2000);
    ck_assert_int_ge(clock_mono_ns() - a, 2000000);
    ck_assert_int_ge(clock_boot_ns() - b, 2000000);
    ck_assert_int_gt(clock_wall_ms(), 1700000000000LL);
}
END_TEST

START_TEST(test_u64map_matches_a_reference_under_random_churn)
{
    /* Keys from a small range so puts, overwrites and deletes collide often. */
    enum { N = 4096 };
    static uint64_t ref[N];
    static bool has[N];
    memset(has, 0, sizeof has);
    u64map_t *m = u64map_create();
    unsigned seed = 12345;
    for (int step = 0; step < 200000; step++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 8) % N;
        uint64_t key = (uint64_t)k * 0x100000001ULL + 1; /* non-zero, spread */
        int op = (int)((seed >> 4) % 3);
        if (op < 2) {
            u64map_put(m, key, step);
            ref[k] = (uint64_t)step;
            has[k] = true;
        } else {
            ck_assert_int_eq(u64map_del(m, key), has[k]);
            has[k] = false;
        }
    }
    size_t count = 0;
    for (unsigned k = 0; k < N; k++) {
        uint64_t v;
        uint64_t key = (uint64_t)k * 0x100000001ULL + 1;
        ck_assert_int_eq(u64map_get(m, key, &v), has[k]);
        if (has[k]) {
            ck_assert_uint_eq(v, ref[k]);
            count++;
        }
    }
    ck_assert_uint_eq(u64map_size(m), count);
    ck_assert(!u64map_get(m, 0, NULL));
    u64map_destroy(m);
    u64map_destroy(NULL);
}
END_TEST

/* The shared card text (cardtext.h): the wire code, every card round-trips, and the errors. */
START_TEST(test_cardtext_parses_and_formats_the_wire_code)
{
    uint8_t c[8];
    char buf[32];
    ck_assert_int_eq(cardtext_parse_card("2c"), 2 << 2 | 0);
    ck_assert_int_eq(cardtext_parse_card("Td"), 10 << 2 | 1);
    ck_assert_int_eq(cardtext_parse_card("As"), 14 << 2 | 3);
    ck_assert_int_eq(cardtext_parse_card("1s"), -EINVAL);
    ck_assert_int_eq(cardtext_parse_card("as"), -EINVAL);
    ck_assert_int_eq(cardtext_parse_card("As "), -EINVAL);
    ck_assert_int_eq(cardtext_parse_card(""), -EINVAL);
    ck_assert_int_eq(cardtext_parse_card(NULL), -EINVAL);
    ck_assert_int_eq(cardtext_parse("Ks Qh TcJd", c, 8), 4);
    ck_assert_int_eq(c[3], 11 << 2 | 1);
    ck_assert_int_eq(cardtext_parse("", c, 8), 0);
    ck_assert_int_eq(cardtext_parse("KsKs", c, 8), -EINVAL);
    ck_assert_int_eq(cardtext_parse("KsQ", c, 8), -EINVAL);
    ck_assert_int_eq(cardtext_parse("KsQhTc", c, 2), -E2BIG);
    ck_assert_int_eq(cardtext_parse("Ks", NULL, 1), -EINVAL);
    for (int code = 0; code < 256; code++) {
        uint8_t b = (uint8_t)code;
        int n = cardtext_format(&b, 1, buf, sizeof buf);
        ck_assert_int_eq(cardtext_valid(b), code >= 8 && code <= 59);
        if (!cardtext_valid(b)) {
            ck_assert_int_eq(n, -EINVAL);
            ck_assert_str_eq(buf, "");
            continue;
        }
        ck_assert_int_eq(n, 2);
        ck_assert_int_eq(cardtext_parse_card(buf), code);
    }
    c[0] = 14 << 2 | 3;
    c[1] = 2 << 2 | 0;
    ck_assert_int_eq(cardtext_format(c, 2, buf, 5), 4);
    ck_assert_str_eq(buf, "As2c");
    ck_assert_int_eq(cardtext_format(c, 2, buf, 4), -EINVAL); /* no room for the NUL */
}
END_TEST

/* A refused card text says which card is wrong and why (cardtext_parse_why()). */
START_TEST(test_cardtext_refusals_name_the_card_and_the_reason)
{
    static const struct {
        const char *text;
        int max, rc;
        const char *why;
    } cases[] = {
        {"KsQhTc", 5, 3, ""},
        {"Ks Qx", 5, -EINVAL, "card 2 'Qx': 'x' is not a suit (c d h s)"},
        {"KsXh", 5, -EINVAL, "card 2 'Xh': 'X' is not a rank (2-9 T J Q K A)"},
        {"ks", 5, -EINVAL, "card 1 'ks': 'k' is not a rank (2-9 T J Q K A)"},
        {"10s", 5, -EINVAL, "card 1 '10': '1' is not a rank (2-9 T J Q K A)"},
        {"KsQhT", 5, -EINVAL, "card 3 'T': a rank without its suit (c d h s)"},
        {"Ks Q h", 5, -EINVAL, "card 2 'Q': a rank without its suit (c d h s)"},
        {"KsQhKs", 5, -EINVAL, "card 3 'Ks': the same card as card 1"},
        {"KsQhTc", 2, -E2BIG, "more than 2 cards"},
        {"Ks", 0, -E2BIG, "more than 0 cards"},
        {"K\x07", 5, -EINVAL, "card 1 'K' byte 0x07: byte 0x07 is not a suit (c d h s)"},
        {"\xe7\x89\x8c", 5, -EINVAL,
         "card 1 byte 0xe7 byte 0x89: byte 0xe7 is not a rank (2-9 T J Q K A)"},
    };
    uint8_t c[8];
    char why[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(why, 'x', sizeof why);
        ck_assert_int_eq(cardtext_parse_why(cases[i].text, c, cases[i].max, why, sizeof why),
                         cases[i].rc);
        ck_assert_str_eq(why, cases[i].why);
        ck_assert_int_eq(cardtext_parse(cases[i].text, c, cases[i].max), cases[i].rc);
    }
    ck_assert_int_eq(cardtext_parse_why(NULL, c, 5, why, sizeof why), -EINVAL);
    ck_assert_str_eq(why, "no text");
    /* a short buffer holds the start of the reason; none at all is fine */
    ck_assert_int_eq(cardtext_parse_why("KsKs", c, 5, why, 8), -EINVAL);
    ck_assert_str_eq(why, "card 2 ");
    ck_assert_int_eq(cardtext_parse_why("KsKs", c, 5, NULL, 0), -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, test_config_defaults_apply);
    tcase_add_test(tc, test_config_flag_beats_env_beats_default);
    tcase_add_test(tc, test_config_bad_input_is_explained);
    tcase_add_test(tc, test_config_env_name_derivation);
    tcase_add_test(tc, test_config_version_flag_only_when_the_program_has_one);
    tcase_add_test(tc, test_config_addr_forms);
    tcase_add_test(tc, test_config_list_has_matches_whole_names_only);
    suite_add_tcase(s, tc);
    tc = tcase_create("metrics");
    tcase_add_test(tc, test_metrics_render_prometheus_text);
    tcase_add_test(tc, test_metrics_counter_exact_under_threads);
    suite_add_tcase(s, tc);
    tc = tcase_create("log");
    tcase_add_test(tc, test_log_writes_one_json_line_per_record);
    tcase_add_test(tc, test_clock_monotonic_and_boot_advance);
    suite_add_tcase(s, tc);
    tc = tcase_create("u64map");
    tcase_add_test(tc, test_u64map_matches_a_reference_under_random_churn);
    suite_add_tcase(s, tc);
    tc = tcase_create("cardtext");
    tcase_add_test(tc, test_cardtext_parses_and_formats_the_wire_code);
    tcase_add_test(tc, test_cardtext_refusals_name_the_card_and_the_reason);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
