/*
 * registry: game servers (lease_holder processes with --register) publish entries; an
 * in-process registry_view follows them through pub/sub and periodic full reads.
 */
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "registry.h"
#include "support.h"

typedef struct {
    int changes, removals, drains;
} watch_t;

static void watch_cb(registry_view_t *v, const registry_entry_t *e, bool removed, void *arg)
{
    (void)v;
    watch_t *w = arg;
    w->changes++;
    if (removed)
        w->removals++;
    else if (e->state == REGISTRY_DRAINING)
        w->drains++;
}

static void run_for(struct event_base *base, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

/* Runs the loop in 10 ms slices until pred(v, arg) holds or ms pass. */
static bool run_until(struct event_base *base, bool (*pred)(registry_view_t *, const void *),
                      registry_view_t *v, const void *arg, int ms)
{
    long long end = ts_now_ms() + ms;
    while (!pred(v, arg) && ts_now_ms() < end)
        run_for(base, 10);
    return pred(v, arg);
}

static bool has_size(registry_view_t *v, const void *arg)
{
    return registry_view_size(v) == *(const size_t *)arg;
}

static bool is_draining(registry_view_t *v, const void *arg)
{
    const registry_entry_t *e = registry_view_find(v, arg);
    return e != NULL && e->state == REGISTRY_DRAINING;
}

static bool is_absent(registry_view_t *v, const void *arg)
{
    return registry_view_find(v, arg) == NULL;
}

static ts_proc_t *spawn_server(ts_redis_t *r, const char *advertise, const char *load)
{
    char redis[64], adv[64], ld[32];
    snprintf(redis, sizeof redis, "--redis=%s", ts_redis_addr(r));
    snprintf(adv, sizeof adv, "--advertise=%s", advertise);
    snprintf(ld, sizeof ld, "--load=%s", load);
    char *argv[] = {(char *)ts_build_path("lease/lease_holder"),
                    redis,
                    "--service=holdem",
                    "--lease-pool-size=4",
                    "--ttl-ms=600",
                    "--register",
                    "--engine=holdem",
                    "--games=holdem,shortdeck",
                    adv,
                    ld,
                    NULL};
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ts_proc_wait_log(p, "\"event\":\"lease_acquired\"", 5000), 0);
    return p;
}

static const char *id_of(registry_view_t *v, const char *address)
{
    for (size_t i = 0; i < registry_view_size(v); i++)
        if (strcmp(registry_view_at(v, i)->address, address) == 0)
            return registry_view_at(v, i)->id;
    return NULL;
}

START_TEST(test_registry_draining_reaches_subscribers_and_release_removes_entry)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_proc_t *busy = spawn_server(r, "127.0.0.1:7001", "5");
    ts_proc_t *idle = spawn_server(r, "127.0.0.1:7002", "2");

    struct event_base *base = event_base_new();
    metrics_registry_t *m = metrics_create();
    watch_t w = {0};
    /* A full read only at connect and then every 30 s: later changes can only come through
     * the channel. */
    registry_view_opts_t o = {.host = "127.0.0.1",
                              .port = ts_redis_port(r),
                              .refresh_ms = 30000,
                              .metrics = m,
                              .on_change = watch_cb,
                              .arg = &w};
    registry_view_t *v = registry_view_create(base, &o);
    ck_assert_ptr_nonnull(v);
    size_t two = 2;
    ck_assert(run_until(base, has_size, v, &two, 5000));

    const registry_entry_t *e = registry_pick(v, "holdem", "holdem");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->address, "127.0.0.1:7002");
    ck_assert_int_eq(e->load, 2);
    ck_assert_int_gt(e->epoch, 0);
    /* The protocol's engine number travels with the entry (lease_holder: ENGINE_HOLDEM). */
    ck_assert_int_eq(e->engine_id, 2);
    ck_assert_ptr_nonnull(registry_pick(v, "holdem", "shortdeck"));
    ck_assert_ptr_null(registry_pick(v, "holdem", "ddz"));
    ck_assert_ptr_null(registry_pick(v, "traditional", NULL));
    char idle_id[80];
    snprintf(idle_id, sizeof idle_id, "%s", id_of(v, "127.0.0.1:7002"));

    /* The switch to draining arrives through pub/sub; pick moves to the other server. */
    ts_proc_signal(idle, SIGUSR1);
    ck_assert(run_until(base, is_draining, v, idle_id, 2000));
    ck_assert_int_eq(w.drains, 1);
    e = registry_pick(v, "holdem", NULL);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->address, "127.0.0.1:7001");
    size_t len;
    char *text = metrics_render(m, &len);
    ck_assert_ptr_nonnull(strstr(text, "registry_servers{engine=\"holdem\",state=\"draining\"} 1"));
    ck_assert_ptr_nonnull(strstr(text, "registry_servers{engine=\"holdem\",state=\"ready\"} 1"));
    free(text);

    /* Graceful exit: deregister (delete + publish), then release. */
    ts_proc_signal(idle, SIGTERM);
    ck_assert(run_until(base, is_absent, v, idle_id, 2000));
    ck_assert_int_eq(w.removals, 1);
    int st = 0;
    ck_assert_int_eq(ts_proc_wait(idle, 5000, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(idle, "exit reason=drained"));
    char *members = ts_redis_cmd(r, "SISMEMBER %s %s", REGISTRY_MEMBERS_KEY, idle_id);
    ck_assert_str_eq(members, "0");
    free(members);
    ts_proc_free(idle);
    ck_assert_uint_eq(registry_view_size(v), 1);

    registry_view_destroy(v);
    metrics_destroy(m);
    event_base_free(base);
    ts_proc_free(busy);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_registry_entry_expires_with_lease_when_server_dies)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_proc_t *p = spawn_server(r, "127.0.0.1:7003", "1");
    struct event_base *base = event_base_new();
    watch_t w = {0};
    registry_view_opts_t o = {.host = "127.0.0.1",
                              .port = ts_redis_port(r),
                              .refresh_ms = 300,
                              .on_change = watch_cb,
                              .arg = &w};
    registry_view_t *v = registry_view_create(base, &o);
    size_t one = 1;
    ck_assert(run_until(base, has_size, v, &one, 5000));
    char id[80];
    snprintf(id, sizeof id, "%s", registry_view_at(v, 0)->id);
    /* SIGKILL: no deregistration, no message. The key's TTL (the lease TTL) ends it, and the
     * periodic full read notices. */
    ts_proc_signal(p, SIGKILL);
    ck_assert(run_until(base, is_absent, v, id, 3000));
    ck_assert_int_eq(w.removals, 1);
    char *members = ts_redis_cmd(r, "SCARD %s", REGISTRY_MEMBERS_KEY);
    ck_assert_str_eq(members, "0");
    free(members);
    registry_view_destroy(v);
    event_base_free(base);
    ts_proc_free(p);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_registry_view_recovers_after_redis_restart)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_proc_t *p = spawn_server(r, "127.0.0.1:7004", "1");
    struct event_base *base = event_base_new();
    registry_view_opts_t o = {.host = "127.0.0.1", .port = ts_redis_port(r), .refresh_ms = 300};
    registry_view_t *v = registry_view_create(base, &o);
    size_t one = 1;
    ck_assert(run_until(base, has_size, v, &one, 5000));
    int64_t epoch = registry_view_at(v, 0)->epoch;
    ck_assert_int_eq(ts_redis_restart(r), 0);
    /* The server takes its lease back (new epoch) and re-writes its entry; the view follows. */
    long long end = ts_now_ms() + 5000;
    while (ts_now_ms() < end &&
           !(registry_view_size(v) == 1 && registry_view_at(v, 0)->epoch > epoch))
        run_for(base, 10);
    ck_assert_uint_eq(registry_view_size(v), 1);
    ck_assert_int_gt(registry_view_at(v, 0)->epoch, epoch);
    registry_view_destroy(v);
    event_base_free(base);
    ts_proc_signal(p, SIGTERM);
    int st;
    ck_assert_int_eq(ts_proc_wait(p, 5000, &st), 0);
    ts_proc_free(p);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_registry_entry_parse_rejects_malformed_entries)
{
    registry_entry_t e;
    const char *good = "{\"id\":\"s:1\",\"service\":\"s\",\"slot\":1,\"address\":\"1.2.3.4:5\","
                       "\"engine\":\"holdem\",\"games\":\"holdem\",\"version\":\"v\","
                       "\"state\":\"draining\",\"load\":3,\"epoch\":9,\"seq\":2}";
    ck_assert_int_eq(registry_entry_parse(good, strlen(good), &e), 0);
    ck_assert_int_eq(e.state, REGISTRY_DRAINING);
    ck_assert_int_eq(e.epoch, 9);
    /* Without "engine_id" (an older publisher) the engine number is 0: no preference. */
    ck_assert_int_eq(e.engine_id, 0);
    const char *with_id = "{\"id\":\"s:1\",\"slot\":1,\"address\":\"a\",\"engine\":\"kit\","
                          "\"engine_id\":4,\"state\":\"ready\",\"load\":1,\"epoch\":1,\"seq\":1}";
    ck_assert_int_eq(registry_entry_parse(with_id, strlen(with_id), &e), 0);
    ck_assert_int_eq(e.engine_id, 4);
    ck_assert_str_eq(e.engine, "kit");
    const char *bad[] = {
        "",
        "[]",
        "{\"id\":\"x\"}",
        "not json",
        "{\"id\":\"s:1\",\"slot\":1,\"address\":\"a\",\"engine\":\"e\",\"state\":\"weird\","
        "\"load\":1,\"epoch\":1,\"seq\":1}",
        "{\"id\":\"s:1\",\"slot\":-4,\"address\":\"a\",\"engine\":\"e\",\"state\":\"ready\","
        "\"load\":1,\"epoch\":1,\"seq\":1}",
        "{\"id\":\"s:1\",\"slot\":1,\"address\":\"a\",\"engine\":"
        "\"an-engine-name-that-is-far-too-long-to-fit\",\"state\":\"ready\","
        "\"load\":1,\"epoch\":1,\"seq\":1}",
        "{\"id\":\"s:1\",\"slot\":1,\"address\":\"a\",\"engine\":\"e\",\"engine_id\":\"2\","
        "\"state\":\"ready\",\"load\":1,\"epoch\":1,\"seq\":1}",
        "{\"id\":\"s:1\",\"slot\":1,\"address\":\"a\",\"engine\":\"e\",\"engine_id\":-1,"
        "\"state\":\"ready\",\"load\":1,\"epoch\":1,\"seq\":1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_int_eq(registry_entry_parse(bad[i], strlen(bad[i]), &e), -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("propagation");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_registry_draining_reaches_subscribers_and_release_removes_entry);
    tcase_add_test(tc, test_registry_entry_expires_with_lease_when_server_dies);
    tcase_add_test(tc, test_registry_view_recovers_after_redis_restart);
    suite_add_tcase(s, tc);
    tc = tcase_create("entry");
    tcase_add_test(tc, test_registry_entry_parse_rejects_malformed_entries);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
