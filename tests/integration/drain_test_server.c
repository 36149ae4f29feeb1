/*
 * drain_test_server -- the drain shell with a test engine, as a process, for the preStop
 * integration test and the drain benchmark.
 *
 * The engine has `human_desks` (set by --human-desks) and nothing else. Signals, handled on the
 * main loop through libevent (the handlers only wake the loop):
 *   SIGUSR1  the last round ends: human_desks = 0, then drain_notify() (logs "human_desks_zero")
 *   SIGUSR2  a round starts again: human_desks = 1 (logs "human_desks_one")
 *   SIGTERM  the exit sequence (a second one skips the wait); exits 0 after "exit reason=..."
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/event.h>

#include "config.h"
#include "drain.h"
#include "evthreads.h"
#include "log.h"

static _Atomic long human;
static struct event_base *base;
static drain_t *shell;

static long test_human_desks(void *ctx)
{
    (void)ctx;
    return atomic_load(&human);
}

static void test_stop_intake(void *ctx)
{
    (void)ctx;
    log_emit(LOG_INFO, "stop_intake", NULL);
}

static bool test_ready(void *ctx)
{
    (void)ctx;
    return true;
}

static void on_usr_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    (void)arg;
    atomic_store(&human, sig == SIGUSR1 ? 0 : 1);
    drain_notify(shell);
    log_emit(LOG_INFO, sig == SIGUSR1 ? "human_desks_zero" : "human_desks_one", NULL);
}

static void hook_void(drain_exit_t *x, unsigned token, void *ctx)
{
    (void)ctx;
    atomic_store(&human, 0);
    drain_exit_hook_done(x, token, 0);
}

static void hook_flush(drain_exit_t *x, unsigned token, void *ctx)
{
    (void)ctx;
    drain_exit_hook_done(x, token, 0);
}

static void on_exit_done(drain_exit_t *x, drain_exit_reason_t reason, long flushed, void *arg)
{
    (void)x;
    (void)reason;
    (void)flushed;
    (void)arg;
    event_base_loopbreak(base);
}

int main(int argc, char **argv)
{
    config_addr_t listen;
    long human_start = 1, max_seconds = 600;
    const config_flag_t flags[] = {
        {"health-listen", CONFIG_ADDR, "127.0.0.1:0", "health server address", &listen, 0, 0},
        {"human-desks", CONFIG_INT, "1", "human desks at start", &human_start, 0, 1000000},
        {"drain-max-seconds", CONFIG_INT, "600", "drain bound", &max_seconds, 0, 86400},
        {0},
    };
    char err[256];
    int rc = config_parse(flags, "drain_test_server", "the drain shell with a test engine", argc,
                          argv, err, sizeof err);
    if (rc == CONFIG_HELP)
        return 0;
    if (rc != CONFIG_OK) {
        fprintf(stderr, "drain_test_server: %s\n", err);
        return 2;
    }
    log_set_process("drain_test_server");
    atomic_store(&human, human_start);
    evthreads_enable();
    base = event_base_new();
    drain_config_t c = {
        .human_desks = test_human_desks,
        .stop_intake = test_stop_intake,
        .ready = test_ready,
        .drain_max_seconds = (int)max_seconds,
        .listen = listen,
    };
    if (base == NULL || drain_create(&c, &shell) != 0 || drain_serve(shell) != 0)
        return 1;
    drain_exit_hooks_t hooks = {.void_unfinished_rounds = hook_void, .flush_queues = hook_flush};
    drain_exit_t *x = drain_exit_create(shell, base, &hooks, on_exit_done, NULL);
    struct event *u1 = evsignal_new(base, SIGUSR1, on_usr_cb, NULL);
    struct event *u2 = evsignal_new(base, SIGUSR2, on_usr_cb, NULL);
    if (x == NULL || u1 == NULL || u2 == NULL || drain_exit_watch_signals(x) != 0 ||
        evsignal_add(u1, NULL) != 0 || evsignal_add(u2, NULL) != 0)
        return 1;
    log_emit(LOG_INFO, "test_server_ready", "{s:i}", "port", drain_port(shell));
    event_base_dispatch(base);
    event_free(u1);
    event_free(u2);
    drain_exit_destroy(x);
    drain_destroy(shell);
    event_base_free(base);
    return 0;
}
