/*
 * The exit sequence of the drain shell (drain/drain.h, drain_exit_*) on a real event_base, with
 * a test engine made of atomics and hooks that record their order. Contract:
 * docs/architecture.md §4 steps 4-7 (bounded wait, void only when not drained, flush ->
 * deregister -> release, one exit line).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "drain.h"
#include "evthreads.h"
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
static bool eng_ready(void *ctx)
{
    return atomic_load(&((engine_t *)ctx)->ready);
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

/* ---- the exit sequence ---- */

typedef struct {
    engine_t *e;
    char order[8][32];
    int n;
    bool done;
    drain_exit_reason_t reason;
    long flushed;
    bool async_flush;
    bool hang_deregister;
    unsigned flush_token;
    pthread_t flush_thread;
    bool flush_thread_started;
    drain_exit_t *x;
    struct event_base *base;
} owner_t;

static void record(owner_t *o, const char *what)
{
    snprintf(o->order[o->n++], 32, "%s", what);
}

static void hook_void(drain_exit_t *x, unsigned token, void *ctx)
{
    owner_t *o = ctx;
    record(o, "void");
    atomic_store(&o->e->human, 0); /* every unfinished round voided */
    drain_exit_hook_done(x, token, 1);
}

static void *async_flush_main(void *arg)
{
    owner_t *o = arg;
    ts_sleep_ms(50);
    drain_exit_hook_done(o->x, o->flush_token, 42);
    drain_exit_hook_done(o->x, o->flush_token, 99); /* a second completion is ignored */
    return NULL;
}

static void hook_flush(drain_exit_t *x, unsigned token, void *ctx)
{
    owner_t *o = ctx;
    record(o, "flush");
    if (!o->async_flush) {
        drain_exit_hook_done(x, token, 5);
        return;
    }
    o->flush_token = token;
    o->flush_thread_started = pthread_create(&o->flush_thread, NULL, async_flush_main, o) == 0;
}

static void hook_deregister(drain_exit_t *x, unsigned token, void *ctx)
{
    owner_t *o = ctx;
    record(o, "deregister");
    if (!o->hang_deregister)
        drain_exit_hook_done(x, token, 0);
}

static void hook_release(drain_exit_t *x, unsigned token, void *ctx)
{
    owner_t *o = ctx;
    record(o, "release");
    drain_exit_hook_done(x, token, 0);
}

static void exit_done(drain_exit_t *x, drain_exit_reason_t reason, long flushed, void *arg)
{
    (void)x;
    owner_t *o = arg;
    o->done = true;
    o->reason = reason;
    o->flushed = flushed;
    event_base_loopbreak(o->base);
}

typedef struct {
    drain_t *d;
    drain_exit_t *x;
    struct event_base *base;
    int log_fd;
    char log_path[64];
} exit_rig_t;

static void rig_start(exit_rig_t *r, owner_t *o, engine_t *e, int max_seconds)
{
    evthreads_enable();
    snprintf(r->log_path, sizeof r->log_path, "/tmp/test_drain_log_XXXXXX");
    r->log_fd = mkstemp(r->log_path);
    ck_assert_int_ge(r->log_fd, 0);
    log_set_fd(r->log_fd);
    drain_config_t c = test_config(e);
    c.drain_max_seconds = max_seconds;
    ck_assert_int_eq(drain_create(&c, &r->d), 0);
    r->base = event_base_new();
    o->e = e;
    o->base = r->base;
    drain_exit_hooks_t h = {.ctx = o,
                            .void_unfinished_rounds = hook_void,
                            .flush_queues = hook_flush,
                            .deregister = hook_deregister,
                            .release_lease = hook_release,
                            .hook_timeout_ms = 300};
    r->x = drain_exit_create(r->d, r->base, &h, exit_done, o);
    ck_assert_ptr_nonnull(r->x);
    o->x = r->x;
}

/* Runs the base until the exit finishes or 20 s pass; returns the elapsed milliseconds. */
static long long rig_run(exit_rig_t *r)
{
    long long t0 = ts_now_ms();
    struct timeval limit = {20, 0};
    event_base_loopexit(r->base, &limit);
    event_base_dispatch(r->base);
    return ts_now_ms() - t0;
}

/* Counts the occurrences of text in the captured log. */
static int rig_log_count(exit_rig_t *r, const char *text)
{
    char buf[65536];
    ssize_t n = pread(r->log_fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    int count = 0;
    for (char *p = strstr(buf, text); p != NULL; p = strstr(p + 1, text))
        count++;
    return count;
}

static void rig_stop(exit_rig_t *r)
{
    drain_exit_destroy(r->x);
    event_base_free(r->base);
    drain_destroy(r->d);
    log_set_fd(2);
    close(r->log_fd);
    unlink(r->log_path);
}

START_TEST(test_drain_exit_idle_process_exits_drained_quickly)
{
    engine_t e = {.human = 0};
    owner_t o = {0};
    exit_rig_t r;
    rig_start(&r, &o, &e, 30);
    ck_assert_int_eq(drain_exit_begin(r.x, DRAIN_EXIT_DRAINED), 0);
    long long took = rig_run(&r);
    ck_assert(o.done);
    ck_assert(drain_exit_finished(r.x));
    ck_assert_int_eq(o.reason, DRAIN_EXIT_DRAINED);
    ck_assert_int_lt(took, 5000); /* nowhere near the 30 s bound */
    ck_assert_int_eq(atomic_load(&e.stop_calls), 1);
    ck_assert_int_eq(o.n, 3); /* no void: nothing was unfinished */
    ck_assert_str_eq(o.order[0], "flush");
    ck_assert_str_eq(o.order[1], "deregister");
    ck_assert_str_eq(o.order[2], "release");
    ck_assert_int_eq(o.flushed, 5);
    ck_assert_int_eq(rig_log_count(&r, "exit reason="), 1);
    ck_assert_int_eq(rig_log_count(&r, "\"msg\":\"exit reason=drained\""), 1);
    ck_assert_int_eq(rig_log_count(&r, "\"reason\":\"drained\""), 1);
    ck_assert_int_eq(rig_log_count(&r, "\"flushed\":5"), 1);
    rig_stop(&r);
}
END_TEST

START_TEST(test_drain_exit_waits_for_last_round_then_drained)
{
    engine_t e = {.human = 1};
    owner_t o = {0};
    exit_rig_t r;
    rig_start(&r, &o, &e, 30);
    o.async_flush = true;
    ck_assert_int_eq(drain_exit_begin(r.x, DRAIN_EXIT_DRAINED), 0);
    /* Still waiting after a while: the round is running. */
    struct timeval tv = {0, 200000};
    event_base_loopexit(r.base, &tv);
    event_base_dispatch(r.base);
    ck_assert(!o.done);
    ck_assert(drain_is_draining(r.d));
    atomic_store(&e.human, 0);
    drain_notify(r.d);
    rig_run(&r);
    ck_assert(o.done);
    ck_assert_int_eq(o.reason, DRAIN_EXIT_DRAINED);
    ck_assert_int_eq(o.n, 3);
    ck_assert(o.flush_thread_started);
    pthread_join(o.flush_thread, NULL);
    ck_assert_int_eq(o.flushed, 42); /* the asynchronous result, not the late duplicate */
    ck_assert_int_eq(rig_log_count(&r, "exit reason=drained"), 1);
    rig_stop(&r);
}
END_TEST

START_TEST(test_drain_exit_bound_passes_voids_rounds_and_is_forced)
{
    engine_t e = {.human = 2};
    owner_t o = {0};
    exit_rig_t r;
    rig_start(&r, &o, &e, 1);
    ck_assert_int_eq(drain_exit_begin(r.x, DRAIN_EXIT_DRAINED), 0);
    long long took = rig_run(&r);
    ck_assert(o.done);
    ck_assert_int_eq(o.reason, DRAIN_EXIT_FORCED);
    ck_assert_int_ge(took, 1000);
    ck_assert_int_eq(o.n, 4);
    ck_assert_str_eq(o.order[0], "void");
    ck_assert_str_eq(o.order[1], "flush");
    ck_assert_str_eq(o.order[2], "deregister");
    ck_assert_str_eq(o.order[3], "release");
    ck_assert_int_eq(rig_log_count(&r, "exit reason="), 1);
    ck_assert_int_eq(rig_log_count(&r, "\"msg\":\"exit reason=forced\""), 1);
    rig_stop(&r);
}
END_TEST

static void raise_term_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    raise(SIGTERM);
}

START_TEST(test_drain_exit_second_signal_skips_the_wait)
{
    engine_t e = {.human = 1};
    owner_t o = {0};
    exit_rig_t r;
    rig_start(&r, &o, &e, 30);
    ck_assert_int_eq(drain_exit_watch_signals(r.x), 0);
    struct timeval first = {0, 10000}, second = {0, 300000};
    struct event *t1 = evtimer_new(r.base, raise_term_cb, NULL);
    struct event *t2 = evtimer_new(r.base, raise_term_cb, NULL);
    evtimer_add(t1, &first);
    evtimer_add(t2, &second);
    long long took = rig_run(&r);
    ck_assert(o.done);
    ck_assert_int_eq(o.reason, DRAIN_EXIT_FORCED);
    ck_assert_int_lt(took, 10000); /* the 30 s bound did not pass */
    ck_assert_int_ge(took, 250);   /* the first signal alone did not end the wait */
    ck_assert_int_eq(atomic_load(&e.stop_calls), 1);
    ck_assert_str_eq(o.order[0], "void");
    ck_assert_int_eq(rig_log_count(&r, "\"msg\":\"exit reason=forced\""), 1);
    event_free(t1);
    event_free(t2);
    rig_stop(&r);
    /* Torn down, the signals stay ignored: kubelet's SIGTERM after the preStop hook cannot
     * kill a process that already wrote its exit line. */
    struct sigaction sa;
    ck_assert_int_eq(sigaction(SIGTERM, NULL, &sa), 0);
    ck_assert_ptr_eq((void *)sa.sa_handler, (void *)SIG_IGN);
    ck_assert_int_eq(sigaction(SIGINT, NULL, &sa), 0);
    ck_assert_ptr_eq((void *)sa.sa_handler, (void *)SIG_IGN);
    ck_assert_int_eq(raise(SIGTERM), 0); /* survived */
}
END_TEST

START_TEST(test_drain_exit_lease_lost_skips_wait_and_hung_hook_is_bounded)
{
    engine_t e = {.human = 3};
    owner_t o = {0};
    exit_rig_t r;
    rig_start(&r, &o, &e, 30);
    o.hang_deregister = true;
    ck_assert_int_eq(drain_exit_begin(r.x, DRAIN_EXIT_FORCED), -EINVAL);
    ck_assert_int_eq(drain_exit_begin(r.x, DRAIN_EXIT_LEASE_LOST), 0);
    long long took = rig_run(&r);
    ck_assert(o.done);
    ck_assert_int_eq(o.reason, DRAIN_EXIT_LEASE_LOST);
    ck_assert_int_lt(took, 10000);
    ck_assert_int_eq(o.n, 4);
    ck_assert_str_eq(o.order[0], "void");
    ck_assert_str_eq(o.order[3], "release"); /* reached despite the hung deregister */
    ck_assert_int_eq(rig_log_count(&r, "exit_hook_timeout"), 1);
    ck_assert_int_eq(rig_log_count(&r, "\"msg\":\"exit reason=lease_lost\""), 1);
    ck_assert_int_eq(rig_log_count(&r, "exit reason="), 1);
    rig_stop(&r);
}
END_TEST

START_TEST(test_drain_exit_bound_counts_from_an_earlier_drain_start)
{
    engine_t e = {.human = 1};
    owner_t o = {0};
    exit_rig_t r;
    rig_start(&r, &o, &e, 1);
    drain_start(r.d); /* preStop's /drain */
    ts_sleep_ms(1100);
    ck_assert_int_eq(drain_exit_begin(r.x, DRAIN_EXIT_DRAINED), 0);
    long long took = rig_run(&r);
    ck_assert_int_eq(o.reason, DRAIN_EXIT_FORCED);
    ck_assert_int_lt(took, 900);
    ck_assert_int_eq(atomic_load(&e.stop_calls), 1);
    rig_stop(&r);
}
END_TEST

START_TEST(test_drain_exit_lease_lost_during_graceful_wait_becomes_the_reason)
{
    engine_t e = {.human = 1};
    owner_t o = {0};
    exit_rig_t r;
    rig_start(&r, &o, &e, 30);
    ck_assert_int_eq(drain_exit_begin(r.x, DRAIN_EXIT_DRAINED), 0);
    struct timeval tv = {0, 100000};
    event_base_loopexit(r.base, &tv);
    event_base_dispatch(r.base);
    ck_assert(!o.done);
    ck_assert_int_eq(drain_exit_begin(r.x, DRAIN_EXIT_LEASE_LOST), 0);
    long long took = rig_run(&r);
    ck_assert(o.done);
    ck_assert_int_lt(took, 10000);
    ck_assert_int_eq(o.reason, DRAIN_EXIT_LEASE_LOST);
    ck_assert_str_eq(o.order[0], "void");
    ck_assert_int_eq(rig_log_count(&r, "exit reason="), 1);
    ck_assert_int_eq(rig_log_count(&r, "\"msg\":\"exit reason=lease_lost\""), 1);
    rig_stop(&r);
}
END_TEST

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    Suite *s = suite_create("drain_exit");
    TCase *tc;

    tc = tcase_create("exit");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_drain_exit_idle_process_exits_drained_quickly);
    tcase_add_test(tc, test_drain_exit_waits_for_last_round_then_drained);
    tcase_add_test(tc, test_drain_exit_bound_passes_voids_rounds_and_is_forced);
    tcase_add_test(tc, test_drain_exit_second_signal_skips_the_wait);
    tcase_add_test(tc, test_drain_exit_lease_lost_skips_wait_and_hung_hook_is_bounded);
    tcase_add_test(tc, test_drain_exit_bound_counts_from_an_earlier_drain_start);
    tcase_add_test(tc, test_drain_exit_lease_lost_during_graceful_wait_becomes_the_reason);
    suite_add_tcase(s, tc);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
