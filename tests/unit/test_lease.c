/*
 * lease: server-ID lease pool, with real lease_holder processes against a real redis-server.
 * TTL 600 ms everywhere (renew every 200 ms), so each case takes a few seconds.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <event2/event.h>

#include "lease.h"
#include "support.h"

#define TTL "600"
#define SERVICE "tsvc"

static ts_proc_t *spawn_holder(ts_redis_t *r, const char *pool, const char *extra)
{
    char redis[64], poolflag[64];
    snprintf(redis, sizeof redis, "--redis=%s", ts_redis_addr(r));
    snprintf(poolflag, sizeof poolflag, "--lease-pool-size=%s", pool);
    char *argv[] = {(char *)ts_build_path("lease/lease_holder"),
                    redis,
                    "--service=" SERVICE,
                    poolflag,
                    "--ttl-ms=" TTL,
                    (char *)extra,
                    NULL};
    if (extra == NULL)
        argv[5] = NULL;
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* The integer field of the n-th (0-based; -1 = last) log line holding both needles. */
static long long log_int(const ts_proc_t *p, const char *needle, const char *field, int nth)
{
    char *log = ts_proc_log(p);
    ck_assert_ptr_nonnull(log);
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", field);
    long long val = -999;
    int seen = 0;
    for (char *line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (strstr(line, needle) == NULL)
            continue;
        char *f = strstr(line, key);
        if (f == NULL)
            continue;
        if (nth < 0 || seen == nth)
            val = strtoll(f + strlen(key), NULL, 10);
        seen++;
    }
    free(log);
    return val;
}

static int log_count(const ts_proc_t *p, const char *needle)
{
    char *log = ts_proc_log(p);
    int n = 0;
    for (char *s = log; (s = strstr(s, needle)) != NULL; s += strlen(needle))
        n++;
    free(log);
    return n;
}

static void dump_on_failure(ts_proc_t **ps, int n)
{
    for (int i = 0; i < n; i++) {
        if (ps[i] == NULL)
            continue;
        char *log = ts_proc_log(ps[i]);
        fprintf(stderr, "--- holder %d ---\n%s", i, log ? log : "(none)");
        free(log);
    }
}

static char *slot_key(int slot)
{
    static char buf[128];
    lease_format_slot_key(SERVICE, slot, buf, sizeof buf);
    return buf;
}

static void wait_acquired(ts_proc_t *p)
{
    ck_assert_int_eq(ts_proc_wait_log(p, "\"event\":\"lease_acquired\"", 5000), 0);
}

static void stop_holder(ts_proc_t *p, int want_code)
{
    ts_proc_signal(p, SIGTERM);
    int st = 0;
    ck_assert_int_eq(ts_proc_wait(p, 5000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), want_code);
    ts_proc_free(p);
}

START_TEST(test_lease_holders_never_share_a_slot)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    enum { N = 4 };
    ts_proc_t *h[N];
    for (int i = 0; i < N; i++)
        h[i] = spawn_holder(r, "4", NULL);
    for (int i = 0; i < N; i++)
        wait_acquired(h[i]);
    ts_sleep_ms(1500); /* several renewals */
    int used[N] = {0};
    for (int i = 0; i < N; i++) {
        long long slot = log_int(h[i], "lease_acquired", "slot", -1);
        ck_assert_int_ge(slot, 0);
        ck_assert_int_lt(slot, N);
        ck_assert_int_eq(used[slot], 0);
        used[slot] = 1;
        ck_assert(ts_proc_alive(h[i]));
        ck_assert(!ts_proc_log_has(h[i], "lease_lost"));
        ck_assert(!ts_proc_log_has(h[i], "lease_regained"));
        /* the slot key holds this holder's token (one line each; the token is in no log, but
         * the key is set and has a TTL no longer than the lease TTL) */
        char *ttl = ts_redis_cmd(r, "PTTL %s", slot_key((int)slot));
        ck_assert_int_gt(atoi(ttl), 0);
        ck_assert_int_le(atoi(ttl), 600);
        free(ttl);
    }
    /* epochs are distinct: every acquisition incremented the counter */
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            ck_assert_int_ne(log_int(h[i], "lease_acquired", "epoch", -1),
                             log_int(h[j], "lease_acquired", "epoch", -1));
    for (int i = 0; i < N; i++)
        stop_holder(h[i], 0);
    for (int i = 0; i < N; i++) {
        char *v = ts_redis_cmd(r, "EXISTS %s", slot_key(i));
        ck_assert_str_eq(v, "0"); /* released on graceful exit */
        free(v);
    }
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_pool_exhausted_extra_holder_waits_unready_then_gets_freed_slot)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_proc_t *a = spawn_holder(r, "2", NULL);
    ts_proc_t *b = spawn_holder(r, "2", NULL);
    wait_acquired(a);
    wait_acquired(b);
    ts_proc_t *c = spawn_holder(r, "2", NULL);
    ck_assert_int_eq(ts_proc_wait_log(c, "\"event\":\"lease_pool_exhausted\"", 5000), 0);
    ck_assert(ts_proc_log_has(c, "SIZE >= versions alive x replicas x 2"));
    ts_sleep_ms(1000);
    ck_assert(ts_proc_alive(c));
    ck_assert(!ts_proc_log_has(c, "\"ready\":true"));
    ck_assert(!ts_proc_log_has(c, "lease_acquired"));
    /* the clear message is logged once per episode, not once per retry */
    ck_assert_int_eq(log_count(c, "\"event\":\"lease_pool_exhausted\""), 1);

    long long freed = log_int(a, "lease_acquired", "slot", -1);
    stop_holder(a, 0);
    ck_assert_int_eq(ts_proc_wait_log(c, "\"event\":\"lease_acquired\"", 8000), 0);
    ck_assert_int_eq(log_int(c, "lease_acquired", "slot", -1), freed);
    ck_assert_int_eq(ts_proc_wait_log(c, "\"ready\":true", 2000), 0);
    stop_holder(b, 0);
    stop_holder(c, 0);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_renew_regains_evaporated_key)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_proc_t *h = spawn_holder(r, "3", NULL);
    wait_acquired(h);
    int slot = (int)log_int(h, "lease_acquired", "slot", -1);
    long long epoch = log_int(h, "lease_acquired", "epoch", -1);
    char *token = ts_redis_cmd(r, "GET %s", slot_key(slot));
    char *del = ts_redis_cmd(r, "DEL %s", slot_key(slot));
    ck_assert_str_eq(del, "1");
    free(del);
    /* one renew period is 200 ms; allow scheduling slack */
    ck_assert_int_eq(ts_proc_wait_log(h, "\"event\":\"lease_regained\"", 2000), 0);
    ck_assert_int_eq(log_int(h, "lease_regained", "gaps", -1), 1);
    /* The fence still held our epoch (nobody took the slot meanwhile): the same epoch. */
    ck_assert_int_eq(log_int(h, "lease_regained", "epoch", -1), epoch);
    char *again = ts_redis_cmd(r, "GET %s", slot_key(slot));
    ck_assert_str_eq(again, token);
    free(token);
    free(again);
    ck_assert(ts_proc_alive(h));
    ck_assert(!ts_proc_log_has(h, "lease_lost"));
    stop_holder(h, 0);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_overwritten_key_makes_holder_exit_lease_lost)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_proc_t *h = spawn_holder(r, "2", NULL);
    wait_acquired(h);
    int slot = (int)log_int(h, "lease_acquired", "slot", -1);
    char *ok = ts_redis_cmd(r, "SET %s %s PX 60000", slot_key(slot), "someone-else");
    ck_assert_str_eq(ok, "OK");
    free(ok);
    int st = 0;
    ck_assert_int_eq(ts_proc_wait(h, 3000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    ck_assert(ts_proc_log_has(h, "exit reason=lease_lost"));
    ck_assert(ts_proc_log_has(h, "\"ready\":false"));
    /* it did not delete or touch the other owner's key */
    char *v = ts_redis_cmd(r, "GET %s", slot_key(slot));
    ck_assert_str_eq(v, "someone-else");
    free(v);
    ts_proc_free(h);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_redis_restarted_empty_every_holder_regains_without_duplicates)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    enum { N = 3 };
    ts_proc_t *h[N];
    for (int i = 0; i < N; i++)
        h[i] = spawn_holder(r, "3", NULL);
    for (int i = 0; i < N; i++)
        wait_acquired(h[i]);
    long long epochs[N];
    for (int i = 0; i < N; i++)
        epochs[i] = log_int(h[i], "lease_acquired", "epoch", -1);
    ck_assert_int_eq(ts_redis_restart(r), 0);
    for (int i = 0; i < N; i++) {
        if (ts_proc_wait_log(h[i], "\"event\":\"lease_regained\"", 5000) != 0)
            dump_on_failure(h, N);
        ck_assert_int_eq(ts_proc_wait_log(h[i], "\"event\":\"lease_regained\"", 100), 0);
    }
    ts_sleep_ms(600);
    int used[N] = {0};
    for (int i = 0; i < N; i++) {
        ck_assert(ts_proc_alive(h[i]));
        ck_assert(!ts_proc_log_has(h[i], "lease_lost"));
        long long slot = log_int(h[i], "lease_acquired", "slot", -1);
        ck_assert_int_eq(used[slot], 0);
        used[slot] = 1;
        /* epochs never go backwards for a holder, even though Redis lost the counter */
        ck_assert_int_gt(log_int(h[i], "lease_regained", "epoch", -1), epochs[i]);
        char *e = ts_redis_cmd(r, "EXISTS %s", slot_key((int)slot));
        ck_assert_str_eq(e, "1");
        free(e);
    }
    for (int i = 0; i < N; i++)
        stop_holder(h[i], 0);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_redis_paused_past_ttl_unready_meanwhile_no_dual_ownership)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_proc_t *h[2];
    for (int i = 0; i < 2; i++)
        h[i] = spawn_holder(r, "2", NULL);
    for (int i = 0; i < 2; i++) {
        wait_acquired(h[i]);
        ck_assert_int_eq(ts_proc_wait_log(h[i], "\"ready\":true", 2000), 0);
    }
    ts_redis_pause(r);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(ts_proc_wait_log(h[i], "\"event\":\"lease_unconfirmed\"", 3000), 0);
    ts_sleep_ms(1200); /* 2 x TTL in total */
    for (int i = 0; i < 2; i++) {
        ck_assert(ts_proc_log_has(h[i], "\"ready\":false"));
        ck_assert(ts_proc_alive(h[i]));
    }
    ts_redis_resume(r);
    for (int i = 0; i < 2; i++) {
        if (ts_proc_wait_log(h[i], "\"event\":\"lease_regained\"", 5000) != 0 &&
            ts_proc_wait_log(h[i], "\"event\":\"lease_confirmed\"", 10) != 0)
            dump_on_failure(h, 2);
        ck_assert_int_eq(log_count(h[i], "\"ready\":true"), 2);
    }
    ts_sleep_ms(600);
    long long s0 = log_int(h[0], "lease_acquired", "slot", -1);
    long long s1 = log_int(h[1], "lease_acquired", "slot", -1);
    ck_assert_int_ne(s0, s1);
    for (int i = 0; i < 2; i++) {
        ck_assert(ts_proc_alive(h[i]));
        ck_assert(!ts_proc_log_has(h[i], "lease_lost"));
    }
    for (int i = 0; i < 2; i++)
        stop_holder(h[i], 0);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_paused_holder_loses_slot_and_stale_fenced_write_is_rejected)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_proc_t *a = spawn_holder(r, "1", NULL);
    wait_acquired(a);
    long long stale = log_int(a, "lease_acquired", "epoch", -1);
    ts_proc_t *b = spawn_holder(r, "1", NULL);
    ck_assert_int_eq(ts_proc_wait_log(b, "\"event\":\"lease_pool_exhausted\"", 5000), 0);

    ts_proc_signal(a, SIGSTOP);
    /* a's key expires after the TTL; b's retries (backoff up to 4 x TTL) take the slot */
    ck_assert_int_eq(ts_proc_wait_log(b, "\"event\":\"lease_acquired\"", 8000), 0);
    long long fresh = log_int(b, "lease_acquired", "epoch", -1);
    ck_assert_int_gt(fresh, stale);
    ts_proc_signal(a, SIGCONT);

    int st = 0;
    ck_assert_int_eq(ts_proc_wait(a, 3000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    ck_assert(ts_proc_log_has(a, "exit reason=lease_lost"));
    /* its last write, fenced with the stale epoch, was refused by Redis */
    ck_assert(ts_proc_log_has(a, "\"event\":\"fenced_write\",\"ok\":false"));
    ck_assert(ts_proc_log_has(a, "STALE_EPOCH"));
    ck_assert(ts_proc_alive(b));

    /* The same rule from the outside: stale epoch rejected, current epoch accepted. */
    char fence[128], e1[32], e2[32];
    lease_format_fence_key(SERVICE, 0, fence, sizeof fence);
    snprintf(e1, sizeof e1, "%lld", stale);
    snprintf(e2, sizeof e2, "%lld", fresh);
    char *v = ts_redis_cmd(r, "EVAL %s 2 %s %s %s %s", LEASE_FENCED_SET_LUA, fence,
                           "{croupier:lease:" SERVICE "}:probe", e1, "stale");
    ck_assert_ptr_nonnull(strstr(v, "STALE_EPOCH"));
    free(v);
    v = ts_redis_cmd(r, "GET %s", "{croupier:lease:" SERVICE "}:probe");
    ck_assert_str_eq(v, "(nil)");
    free(v);
    v = ts_redis_cmd(r, "EVAL %s 2 %s %s %s %s", LEASE_FENCED_SET_LUA, fence,
                     "{croupier:lease:" SERVICE "}:probe", e2, "fresh");
    ck_assert_str_eq(v, "1");
    free(v);
    ts_proc_free(a);
    stop_holder(b, 0);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_redis_unreachable_at_start_clear_error_then_acquires)
{
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_redis_kill(r);
    ts_proc_t *h = spawn_holder(r, "2", NULL);
    ck_assert_int_eq(ts_proc_wait_log(h, "\"event\":\"redis_unavailable\"", 3000), 0);
    ck_assert(ts_proc_log_has(h, "Connection refused"));
    ts_sleep_ms(1000);
    ck_assert(ts_proc_alive(h));
    ck_assert(!ts_proc_log_has(h, "\"ready\":true"));
    /* one line for the outage, not one per retry */
    ck_assert_int_le(log_count(h, "\"event\":\"redis_unavailable\""), 2);
    ck_assert_int_eq(ts_redis_restart(r), 0);
    wait_acquired(h);
    ck_assert_int_eq(ts_proc_wait_log(h, "\"ready\":true", 2000), 0);
    stop_holder(h, 0);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_rejects_bad_options)
{
    lease_opts_t o = {.service = "ok", .pool_size = 4, .ttl_ms = 600};
    ck_assert_ptr_null(lease_create(NULL, NULL, &o));
    char buf[16];
    ck_assert_int_eq(lease_format_slot_key("a-very-long-service-name", 1, buf, sizeof buf),
                     -ENOSPC);
    char big[64];
    ck_assert_int_gt(lease_format_fence_key("s", 1, big, sizeof big), 0);
    ck_assert_str_eq(big, "{croupier:lease:s}:slot:1:epoch");
    lease_destroy(NULL);
    /* a holder given a bad pool size refuses to start */
    char *argv[] = {(char *)ts_build_path("lease/lease_holder"), "--lease-pool-size=0", NULL};
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    int st = 0;
    ck_assert_int_eq(ts_proc_wait(p, 3000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    ts_proc_free(p);
}
END_TEST

typedef struct {
    int events[LEASE_EV_LOST + 1];
    int done_calls, done_result;
} lease_probe_t;

static void probe_event_cb(lease_t *l, lease_event_t ev, void *arg)
{
    (void)l;
    ((lease_probe_t *)arg)->events[ev]++;
}

static void probe_done_cb(lease_t *l, int result, void *arg)
{
    (void)l;
    lease_probe_t *p = arg;
    p->done_calls++;
    p->done_result = result;
}

static void loop_until(struct event_base *base, const int *counter, int want, int ms)
{
    long long end = ts_now_ms() + ms;
    while (*counter < want && ts_now_ms() < end) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
}

START_TEST(test_lease_in_process_events_metrics_and_release)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    rconn_opts_t ro = {.host = "127.0.0.1",
                       .port = ts_redis_port(r),
                       .request_timeout_ms = 200,
                       .connect_timeout_ms = 200};
    rconn_t *rc = rconn_create(base, &ro);
    metrics_registry_t *m = metrics_create();
    lease_probe_t p = {0};
    lease_opts_t o = {.service = SERVICE,
                      .pool_size = 3,
                      .ttl_ms = 600,
                      .metrics = m,
                      .on_event = probe_event_cb,
                      .arg = &p};
    lease_t *l = lease_create(base, rc, &o);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(lease_slot(l), -1);
    ck_assert_int_eq(lease_start(l), 0);
    ck_assert_int_eq(lease_start(l), -EALREADY);
    loop_until(base, &p.events[LEASE_EV_ACQUIRED], 1, 5000);
    ck_assert_int_eq(lease_state(l), LEASE_VALID);
    ck_assert_int_ge(lease_slot(l), 0);
    ck_assert_int_eq(strlen(lease_token(l)), 32);
    char *v = ts_redis_cmd(r, "GET %s", slot_key(lease_slot(l)));
    ck_assert_str_eq(v, lease_token(l));
    free(v);
    loop_until(base, &p.events[LEASE_EV_RENEWED], 2, 3000);
    int64_t epoch = lease_epoch(l);

    v = ts_redis_cmd(r, "DEL %s", slot_key(lease_slot(l)));
    free(v);
    loop_until(base, &p.events[LEASE_EV_REGAINED], 1, 3000);
    ck_assert_int_eq(p.events[LEASE_EV_REGAINED], 1);
    ck_assert_int_eq(lease_epoch(l), epoch); /* the fence proved nobody held it meanwhile */
    ck_assert_uint_eq(lease_gaps(l), 1);
    ck_assert_int_eq(lease_state(l), LEASE_VALID);
    size_t len;
    char *text = metrics_render(m, &len);
    ck_assert_ptr_nonnull(strstr(text, "lease_gaps_total 1"));
    ck_assert_ptr_nonnull(strstr(text, "lease_pool_in_use 1"));
    ck_assert_ptr_nonnull(strstr(text, "lease_renew_total{result=\"regained\"} 1"));
    ck_assert_ptr_nonnull(strstr(text, "lease_valid 1"));
    char want[64];
    snprintf(want, sizeof want, "lease_epoch %lld", (long long)lease_epoch(l));
    ck_assert_ptr_nonnull(strstr(text, want));
    free(text);

    lease_release(l, probe_done_cb, &p);
    loop_until(base, &p.done_calls, 1, 3000);
    ck_assert_int_eq(p.done_result, 0);
    ck_assert_int_eq(lease_state(l), LEASE_RELEASED);
    v = ts_redis_cmd(r, "EXISTS %s", slot_key(lease_slot(l)));
    ck_assert_str_eq(v, "0");
    free(v);
    /* the fence stays: a late writer with this epoch is still recognised as the last one */
    char fence[128];
    lease_format_fence_key(SERVICE, lease_slot(l), fence, sizeof fence);
    v = ts_redis_cmd(r, "GET %s", fence);
    ck_assert_int_eq(atoll(v), lease_epoch(l));
    free(v);
    ck_assert_int_eq(p.events[LEASE_EV_LOST], 0);
    lease_destroy(l);
    rconn_destroy(rc);
    metrics_destroy(m);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_lease_fenced_set_accepts_current_epoch_rejects_after_takeover)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    rconn_opts_t ro = {.host = "127.0.0.1", .port = ts_redis_port(r)};
    rconn_t *rc = rconn_create(base, &ro);
    lease_probe_t p = {0};
    lease_opts_t o = {
        .service = SERVICE, .pool_size = 1, .ttl_ms = 600, .on_event = probe_event_cb, .arg = &p};
    lease_t *l = lease_create(base, rc, &o);
    ck_assert_int_eq(lease_fenced_set(l, "k", "v", 1, NULL, NULL), -ENOENT);
    lease_start(l);
    loop_until(base, &p.events[LEASE_EV_ACQUIRED], 1, 5000);
    ck_assert_int_eq(lease_fenced_set(l, "{croupier:lease:" SERVICE "}:w", "one", 3, NULL, NULL),
                     0);
    int never = 0;
    loop_until(base, &never, 1, 100);
    char *v = ts_redis_cmd(r, "GET %s", "{croupier:lease:" SERVICE "}:w");
    ck_assert_str_eq(v, "one");
    free(v);
    /* Another process takes over the slot (new epoch in the fence): our writes bounce, and once
     * our key is gone too the renew does not take the slot back: the lease is lost. */
    char fence[128];
    lease_format_fence_key(SERVICE, 0, fence, sizeof fence);
    v = ts_redis_cmd(r, "SET %s %lld", fence, (long long)lease_epoch(l) + 1);
    free(v);
    ck_assert_int_eq(lease_fenced_set(l, "{croupier:lease:" SERVICE "}:w", "two", 3, NULL, NULL),
                     0);
    loop_until(base, &never, 1, 100);
    v = ts_redis_cmd(r, "GET %s", "{croupier:lease:" SERVICE "}:w");
    ck_assert_str_eq(v, "one");
    free(v);
    free(ts_redis_cmd(r, "DEL %s", slot_key(0)));
    loop_until(base, &p.events[LEASE_EV_LOST], 1, 3000);
    ck_assert_int_eq(lease_state(l), LEASE_LOST);
    v = ts_redis_cmd(r, "EXISTS %s", slot_key(0));
    ck_assert_str_eq(v, "0");
    free(v);
    lease_destroy(l);
    rconn_destroy(rc);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lease");
    TCase *tc = tcase_create("ownership");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lease_holders_never_share_a_slot);
    tcase_add_test(tc, test_lease_pool_exhausted_extra_holder_waits_unready_then_gets_freed_slot);
    tcase_add_test(tc, test_lease_rejects_bad_options);
    suite_add_tcase(s, tc);
    tc = tcase_create("renewal");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lease_in_process_events_metrics_and_release);
    tcase_add_test(tc, test_lease_renew_regains_evaporated_key);
    tcase_add_test(tc, test_lease_overwritten_key_makes_holder_exit_lease_lost);
    suite_add_tcase(s, tc);
    tc = tcase_create("redis_failures");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lease_redis_restarted_empty_every_holder_regains_without_duplicates);
    tcase_add_test(tc, test_lease_redis_paused_past_ttl_unready_meanwhile_no_dual_ownership);
    tcase_add_test(tc, test_lease_redis_unreachable_at_start_clear_error_then_acquires);
    suite_add_tcase(s, tc);
    tc = tcase_create("fencing");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_lease_fenced_set_accepts_current_epoch_rejects_after_takeover);
    tcase_add_test(tc, test_lease_paused_holder_loses_slot_and_stale_fenced_write_is_rejected);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
