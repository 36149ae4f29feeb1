/* rconn: the asynchronous Redis connection, against a real redis-server on loopback. */
#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "rconn.h"
#include "support.h"

typedef struct {
    int states_up, states_down;
    bool connected;
    int replies, nulls, errors;
    long long last_int;
    char last_str[256];
    size_t last_len;
} probe_t;

static void probe_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    probe_t *p = arg;
    p->connected = connected;
    if (connected)
        p->states_up++;
    else
        p->states_down++;
}

static void probe_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    probe_t *p = arg;
    if (reply == NULL) {
        p->nulls++;
        return;
    }
    p->replies++;
    if (reply->type == REDIS_REPLY_ERROR)
        p->errors++;
    if (reply->type == REDIS_REPLY_INTEGER)
        p->last_int = reply->integer;
    if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS ||
        reply->type == REDIS_REPLY_ERROR) {
        size_t n = reply->len < sizeof p->last_str ? reply->len : sizeof p->last_str - 1;
        memcpy(p->last_str, reply->str, n);
        p->last_str[n] = '\0';
        p->last_len = reply->len;
    }
}

/* Runs the loop in 10 ms slices until *flag becomes at least want or ms pass. */
static bool run_until(struct event_base *base, const int *counter, int want, int ms)
{
    long long end = ts_now_ms() + ms;
    while (*counter < want && ts_now_ms() < end) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    return *counter >= want;
}

static void run_for(struct event_base *base, int ms)
{
    int never = 0;
    run_until(base, &never, 1, ms);
}

static rconn_t *open_conn(struct event_base *base, int port, probe_t *p, int req_timeout_ms)
{
    rconn_opts_t o = {.host = "127.0.0.1",
                      .port = port,
                      .connect_timeout_ms = 300,
                      .request_timeout_ms = req_timeout_ms,
                      .backoff_min_ms = 20,
                      .backoff_max_ms = 200,
                      .name = "test",
                      .on_state = probe_state_cb,
                      .arg = p};
    return rconn_create(base, &o);
}

START_TEST(test_rconn_commands_binary_args_and_pipelining)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    probe_t p = {0};
    rconn_t *rc = open_conn(base, ts_redis_port(r), &p, 1000);
    ck_assert_ptr_nonnull(rc);
    ck_assert(run_until(base, &p.states_up, 1, 3000));
    ck_assert(rconn_connected(rc));

    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "SET %s %s", "k", "v"), 0);
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "GET %s", "k"), 0);
    ck_assert(run_until(base, &p.replies, 2, 2000));
    ck_assert_str_eq(p.last_str, "v");

    /* Binary-safe argv: a value with an embedded NUL survives the round trip. */
    const char val[] = {'a', '\0', 'b'};
    const char *argv[] = {"SET", "bin", val};
    size_t lens[] = {3, 3, sizeof val};
    ck_assert_int_eq(rconn_command_argv(rc, probe_reply_cb, &p, 3, argv, lens), 0);
    const char *get[] = {"STRLEN", "bin"};
    ck_assert_int_eq(rconn_command_argv(rc, probe_reply_cb, &p, 2, get, NULL), 0);
    ck_assert(run_until(base, &p.replies, 4, 2000));
    ck_assert_int_eq(p.last_int, 3);

    /* 2000 pipelined commands all answered, in order. */
    for (int i = 0; i < 2000; i++) {
        const char *incr[] = {"INCR", "ctr"};
        ck_assert_int_eq(rconn_command_argv(rc, probe_reply_cb, &p, 2, incr, NULL), 0);
    }
    ck_assert_uint_gt(rconn_pending(rc), 0);
    ck_assert(run_until(base, &p.replies, 2004, 5000));
    ck_assert_int_eq(p.last_int, 2000);
    ck_assert_int_eq(p.nulls, 0);
    ck_assert_uint_eq(rconn_pending(rc), 0);

    /* An error reply is a reply, not NULL. */
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "NOSUCHCOMMAND"), 0);
    ck_assert(run_until(base, &p.replies, 2005, 2000));
    ck_assert_int_eq(p.errors, 1);

    rconn_destroy(rc);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_rconn_script_evalsha_falls_back_after_script_flush)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    probe_t p = {0};
    rconn_t *rc = open_conn(base, ts_redis_port(r), &p, 1000);
    ck_assert(run_until(base, &p.states_up, 1, 3000));
    rconn_script_t *s = rconn_script_create("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    const char *argv[] = {"sk", "5"};
    ck_assert_int_eq(rconn_eval(rc, s, probe_reply_cb, &p, 1, 2, argv, NULL), 0);
    ck_assert(run_until(base, &p.replies, 1, 2000));
    ck_assert_int_eq(p.last_int, 5);
    ck_assert_ptr_nonnull(rconn_script_sha(s));
    ck_assert_int_eq(strlen(rconn_script_sha(s)), 40);

    /* Redis forgets the script: the next call still succeeds (EVALSHA -> NOSCRIPT -> EVAL). */
    char *out = ts_redis_cmd(r, "SCRIPT FLUSH");
    ck_assert_str_eq(out, "OK");
    free(out);
    ck_assert_int_eq(rconn_eval(rc, s, probe_reply_cb, &p, 1, 2, argv, NULL), 0);
    ck_assert(run_until(base, &p.replies, 2, 2000));
    ck_assert_int_eq(p.errors, 0);
    ck_assert_int_eq(p.last_int, 10);

    /* A script error is returned as an error reply. */
    rconn_script_t *bad = rconn_script_create("return redis.call('NOPE')");
    ck_assert_int_eq(rconn_eval(rc, bad, probe_reply_cb, &p, 0, 0, NULL, NULL), 0);
    ck_assert(run_until(base, &p.replies, 3, 2000));
    ck_assert_int_eq(p.errors, 1);

    rconn_destroy(rc);
    rconn_script_destroy(s);
    rconn_script_destroy(bad);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_rconn_request_times_out_while_redis_is_stopped_then_recovers)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    probe_t p = {0};
    rconn_t *rc = open_conn(base, ts_redis_port(r), &p, 200);
    ck_assert(run_until(base, &p.states_up, 1, 3000));

    ts_redis_pause(r);
    long long t0 = ts_now_ms();
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "PING"), 0);
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "PING"), 0);
    ck_assert(run_until(base, &p.nulls, 2, 3000));
    long long waited = ts_now_ms() - t0;
    ck_assert_int_ge(waited, 150);
    ck_assert_int_eq(p.replies, 0);
    ck_assert(run_until(base, &p.states_down, 1, 1000));
    ck_assert(!rconn_connected(rc));
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "PING"), -ENOTCONN);
    /* Reconnect attempts keep failing (the PING is never answered) without crashing. */
    run_for(base, 800);
    ck_assert(!rconn_connected(rc));

    ts_redis_resume(r);
    ck_assert(run_until(base, &p.states_up, 2, 5000));
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "PING"), 0);
    ck_assert(run_until(base, &p.replies, 1, 2000));
    ck_assert_str_eq(p.last_str, "PONG");

    rconn_destroy(rc);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_rconn_reconnects_after_redis_restart)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    probe_t p = {0};
    rconn_t *rc = open_conn(base, ts_redis_port(r), &p, 1000);
    ck_assert(run_until(base, &p.states_up, 1, 3000));
    ck_assert_int_eq(ts_redis_restart(r), 0);
    ck_assert(run_until(base, &p.states_down, 1, 3000));
    ck_assert(run_until(base, &p.states_up, 2, 5000));
    ck_assert_uint_ge(rconn_connect_count(rc), 2);
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "SET %s %s", "after", "restart"), 0);
    ck_assert(run_until(base, &p.replies, 1, 2000));
    ck_assert_str_eq(p.last_str, "OK");
    rconn_destroy(rc);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_rconn_refused_at_start_reports_error_and_retries)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    ts_redis_kill(r); /* the port is known and nothing listens on it */
    struct event_base *base = event_base_new();
    probe_t p = {0};
    rconn_t *rc = open_conn(base, ts_redis_port(r), &p, 1000);
    ck_assert_ptr_nonnull(rc);
    run_for(base, 500);
    ck_assert(!rconn_connected(rc));
    ck_assert_int_eq(p.states_up, 0);
    ck_assert_ptr_nonnull(strstr(rconn_last_error(rc), "refused"));
    ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "PING"), -ENOTCONN);

    ck_assert_int_eq(ts_redis_restart(r), 0);
    ck_assert(run_until(base, &p.states_up, 1, 5000));
    ck_assert_str_eq(rconn_last_error(rc), "");
    rconn_destroy(rc);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

START_TEST(test_rconn_rejects_host_names)
{
    struct event_base *base = event_base_new();
    rconn_opts_t o = {.host = "localhost", .port = 6379};
    ck_assert_ptr_null(rconn_create(base, &o));
    o.host = "127.0.0.1";
    o.port = 0;
    ck_assert_ptr_null(rconn_create(base, &o));
    rconn_destroy(NULL);
    event_base_free(base);
}
END_TEST

typedef struct {
    rconn_t *rc;
    int calls;
    int nulls;
} destroyer_t;

static void destroy_in_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    destroyer_t *d = arg;
    d->calls++;
    if (reply == NULL)
        d->nulls++;
    if (d->rc != NULL) {
        d->rc = NULL;
        rconn_destroy(rc);
    }
}

START_TEST(test_rconn_destroy_runs_pending_callbacks_once_even_from_a_callback)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    probe_t p = {0};
    rconn_t *rc = open_conn(base, ts_redis_port(r), &p, 1000);
    ck_assert(run_until(base, &p.states_up, 1, 3000));
    /* Destroy from outside: every pending callback runs with NULL before destroy returns. */
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(rconn_command(rc, probe_reply_cb, &p, "PING"), 0);
    rconn_destroy(rc);
    ck_assert_int_eq(p.nulls, 10);

    /* Destroy from inside the first reply: the other nine still get exactly one NULL. */
    probe_t q = {0};
    rc = open_conn(base, ts_redis_port(r), &q, 1000);
    ck_assert(run_until(base, &q.states_up, 1, 3000));
    destroyer_t d = {.rc = rc};
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(rconn_command(rc, destroy_in_cb, &d, "PING"), 0);
    ck_assert(run_until(base, &d.calls, 10, 2000));
    run_for(base, 50);
    ck_assert_int_eq(d.calls, 10);
    ck_assert_int_eq(d.nulls, 9);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

typedef struct {
    int messages;
    char last[64];
} sub_probe_t;

static void sub_cb(rconn_t *rc, const char *channel, const char *data, size_t len, void *arg)
{
    (void)rc;
    (void)channel;
    sub_probe_t *s = arg;
    s->messages++;
    size_t n = len < sizeof s->last - 1 ? len : sizeof s->last - 1;
    memcpy(s->last, data, n);
    s->last[n] = '\0';
}

START_TEST(test_rconn_subscription_survives_redis_restart)
{
    signal(SIGPIPE, SIG_IGN);
    ts_redis_t *r = ts_redis_start();
    ck_assert_ptr_nonnull(r);
    struct event_base *base = event_base_new();
    probe_t sp = {0}, pp = {0};
    rconn_t *sub = open_conn(base, ts_redis_port(r), &sp, 1000);
    rconn_t *pub = open_conn(base, ts_redis_port(r), &pp, 1000);
    sub_probe_t s = {0};
    ck_assert_int_eq(rconn_subscribe(sub, "chan", sub_cb, &s), 0);
    ck_assert(run_until(base, &sp.states_up, 1, 3000));
    ck_assert(run_until(base, &pp.states_up, 1, 3000));
    run_for(base, 50); /* the SUBSCRIBE is answered */
    ck_assert_int_eq(rconn_command(pub, probe_reply_cb, &pp, "PUBLISH chan %s", "one"), 0);
    ck_assert(run_until(base, &s.messages, 1, 2000));
    ck_assert_str_eq(s.last, "one");

    ck_assert_int_eq(ts_redis_restart(r), 0);
    ck_assert(run_until(base, &sp.states_up, 2, 5000));
    ck_assert(run_until(base, &pp.states_up, 2, 5000));
    run_for(base, 50);
    ck_assert_int_eq(rconn_command(pub, probe_reply_cb, &pp, "PUBLISH chan %s", "two"), 0);
    ck_assert(run_until(base, &s.messages, 2, 2000));
    ck_assert_str_eq(s.last, "two");
    rconn_destroy(sub);
    rconn_destroy(pub);
    event_base_free(base);
    ts_redis_stop(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rconn");
    TCase *tc = tcase_create("commands");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_rconn_commands_binary_args_and_pipelining);
    tcase_add_test(tc, test_rconn_script_evalsha_falls_back_after_script_flush);
    tcase_add_test(tc, test_rconn_rejects_host_names);
    tcase_add_test(tc, test_rconn_destroy_runs_pending_callbacks_once_even_from_a_callback);
    suite_add_tcase(s, tc);
    tc = tcase_create("failures");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_rconn_request_times_out_while_redis_is_stopped_then_recovers);
    tcase_add_test(tc, test_rconn_reconnects_after_redis_restart);
    tcase_add_test(tc, test_rconn_refused_at_start_reports_error_and_retries);
    suite_add_tcase(s, tc);
    tc = tcase_create("subscribe");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_rconn_subscription_survives_redis_restart);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
