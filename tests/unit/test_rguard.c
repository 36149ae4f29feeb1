/*
 * rguard: the Redis eviction guard (common/rguard.h; docs/deploy.md "Redis must not evict").
 * INFO parsing on its own, then the guard against a real redis-server on loopback: the verdict
 * at connect, a CONFIG SET at runtime seen within seconds, evicted keys exported and logged.
 */
#include <check.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "rguard.h"
#include "support.h"

START_TEST(test_rguard_parses_info_sections)
{
    const char info[] = "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\n"
                        "total_system_memory:8589934592\r\nmaxmemory:4194304\r\n"
                        "maxmemory_policy:allkeys-lru\r\n\r\n# Stats\r\nevicted_keys:17\r\n"
                        "evicted_clients:0\r\n";
    rguard_info_t in;
    ck_assert_int_eq(rguard_parse_info(info, sizeof info - 1, &in), 0);
    ck_assert_str_eq(in.policy, "allkeys-lru");
    ck_assert_int_eq(in.used_memory, 1048576);
    ck_assert_int_eq(in.maxmemory, 4194304);
    ck_assert_int_eq(in.total_system_memory, 8589934592LL);
    ck_assert_int_eq(in.evicted_keys, 17); /* not evicted_clients */

    /* No policy line (a Redis that hides it, or garbage): refused, numbers absent = -1. */
    const char none[] = "# Server\r\nredis_version:7.0.15\r\nmaxmemory:x12\r\n";
    ck_assert_int_eq(rguard_parse_info(none, sizeof none - 1, &in), -EINVAL);
    ck_assert_int_eq(in.maxmemory, -1);
    ck_assert_int_eq(in.evicted_keys, -1);
    ck_assert_int_eq(rguard_parse_info("", 0, &in), -EINVAL);
    /* \n line ends and a last line without one are read too; an overlong policy is refused. */
    const char lf[] = "maxmemory_policy:noeviction\nevicted_keys:3";
    ck_assert_int_eq(rguard_parse_info(lf, sizeof lf - 1, &in), 0);
    ck_assert_str_eq(in.policy, "noeviction");
    ck_assert_int_eq(in.evicted_keys, 3);
    char big[128];
    snprintf(big, sizeof big, "maxmemory_policy:%080d\r\n", 0);
    ck_assert_int_eq(rguard_parse_info(big, strlen(big), &in), -EINVAL);
}
END_TEST

typedef struct {
    int changes;
    rguard_verdict_t last;
} seen_t;

static void seen_cb(rguard_t *g, rguard_verdict_t v, void *arg)
{
    (void)g;
    seen_t *s = arg;
    s->changes++;
    s->last = v;
}

/* Runs the loop in 10 ms slices until the verdict is want or ms pass. */
static bool run_until_verdict(struct event_base *base, rguard_t *g, rguard_verdict_t want, int ms)
{
    long long end = ts_now_ms() + ms;
    while (rguard_verdict(g) != want && ts_now_ms() < end) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    return rguard_verdict(g) == want;
}

static void run_for(struct event_base *base, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

static double metric(metrics_registry_t *m, const char *name)
{
    size_t len;
    char *text = metrics_render(m, &len);
    char want[128];
    snprintf(want, sizeof want, "\n%s ", name);
    char *p = strstr(text, want);
    double v = p != NULL ? strtod(p + strlen(want), NULL) : -1;
    free(text);
    return v;
}

/* The log of the process goes to a file the test reads back. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return strdup("");
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

START_TEST(test_rguard_follows_the_policy_and_counts_evictions)
{
    signal(SIGPIPE, SIG_IGN);
    char logpath[] = "/tmp/test_rguard_log_XXXXXX";
    int fd = mkstemp(logpath);
    ck_assert_int_ge(fd, 0);
    log_set_fd(fd);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    metrics_registry_t *m = metrics_create();
    seen_t seen = {0};
    rguard_opts_t o = {.conn = {.host = "127.0.0.1", .port = ts_redis_port(r)},
                       .interval_ms = 100,
                       .metrics = m,
                       .on_change = seen_cb,
                       .arg = &seen};
    rguard_t *g = rguard_create(base, &o);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(rguard_verdict(g), RGUARD_UNKNOWN);
    ck_assert(!rguard_blocks(g));

    /* Read at connect: the test Redis runs noeviction. */
    ck_assert(run_until_verdict(base, g, RGUARD_SAFE, 3000));
    ck_assert_int_eq(seen.changes, 1);
    ck_assert_str_eq(rguard_policy(g), "noeviction");
    ck_assert(metric(m, "redis_eviction_policy_safe") == 1);
    ck_assert(metric(m, "redis_used_memory_bytes") > 0);
    ck_assert(metric(m, "redis_memory_headroom_ratio") > 0);

    /* Changed at runtime: seen by the next read, blocks, logged with the policy. */
    free(ts_redis_cmd(r, "CONFIG SET maxmemory-policy allkeys-lru"));
    ck_assert(run_until_verdict(base, g, RGUARD_EVICTING, 3000));
    ck_assert(rguard_blocks(g));
    ck_assert_int_eq(seen.last, RGUARD_EVICTING);
    ck_assert(metric(m, "redis_eviction_policy_safe") == 0);

    /* Evictions: a small maxmemory filled until Redis evicts (allkeys-lru evicts our own
     * filler keys: nothing else is in this Redis). */
    free(ts_redis_cmd(r, "CONFIG SET maxmemory 3mb"));
    ck_assert(metric(m, "redis_evicted_keys") == 0);
    bool evicted = false;
    for (int i = 0; i < 20000 && !evicted; i++) {
        free(ts_redis_cmd(r, "SET filler:%d %01024d", i, 0));
        if (i % 100 == 99) {
            char *st = ts_redis_cmd(r, "INFO stats");
            evicted = st != NULL && strstr(st, "evicted_keys:0\r") == NULL;
            free(st);
        }
    }
    ck_assert_msg(evicted, "Redis never evicted under maxmemory 3mb");
    long long end = ts_now_ms() + 3000;
    while (metric(m, "redis_evicted_keys") <= 0 && ts_now_ms() < end)
        run_for(base, 50);
    ck_assert(metric(m, "redis_evicted_keys") > 0);
    double headroom = metric(m, "redis_memory_headroom_ratio");
    ck_assert(headroom < 0.5);
    ck_assert(metric(m, "redis_maxmemory_bytes") == 3 * 1024 * 1024);

    /* Fixed: safe again. */
    free(ts_redis_cmd(r, "CONFIG SET maxmemory-policy noeviction"));
    ck_assert(run_until_verdict(base, g, RGUARD_SAFE, 3000));
    ck_assert(!rguard_blocks(g));

    char *log = read_file(logpath);
    ck_assert_msg(strstr(log, "\"event\":\"redis_eviction_policy\"") != NULL &&
                      strstr(log, "allkeys-lru") != NULL,
                  "%s", log);
    ck_assert_msg(strstr(log, "\"event\":\"redis_keys_evicted\"") != NULL, "%s", log);
    ck_assert_msg(strstr(log, "\"event\":\"redis_eviction_policy_ok\"") != NULL, "%s", log);
    free(log);

    rguard_destroy(g);
    event_base_free(base);
    metrics_destroy(m);
    ts_redis_stop(r);
    log_set_fd(2);
    close(fd);
    unlink(logpath);
}
END_TEST

/* --redis-allow-eviction: the verdict and the metric stay true to Redis, but nothing blocks. */
START_TEST(test_rguard_allowed_eviction_never_blocks)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    free(ts_redis_cmd(r, "CONFIG SET maxmemory-policy volatile-lru"));
    struct event_base *base = event_base_new();
    rguard_opts_t o = {.conn = {.host = "127.0.0.1", .port = ts_redis_port(r)},
                       .allow_eviction = true};
    rguard_t *g = rguard_create(base, &o);
    ck_assert(run_until_verdict(base, g, RGUARD_EVICTING, 3000));
    ck_assert(!rguard_blocks(g));
    ck_assert_str_eq(rguard_policy(g), "volatile-lru");
    rguard_destroy(g);
    rguard_destroy(NULL);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rguard");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_rguard_parses_info_sections);
    suite_add_tcase(s, tc);
    tc = tcase_create("redis");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rguard_follows_the_policy_and_counts_evictions);
    tcase_add_test(tc, test_rguard_allowed_eviction_never_blocks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
