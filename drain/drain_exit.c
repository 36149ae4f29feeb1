/*
 * drain_exit -- the exit sequence as a state machine on the owner's event_base (see drain.h).
 *
 *   IDLE --begin/SIGTERM--> WAITING --human_desks==0--------------------> HOOKS --> DONE
 *                              |     --bound passed / skipped / lease_lost / fatal --^
 *
 * WAITING re-evaluates on every wake-up: drain_notify() (through drain_watch), a second signal,
 * and a 20 ms tick that also notices the bound. HOOKS runs void_unfinished_rounds (only when the
 * wait did not end cleanly), flush_queues, deregister and release_lease one after another; each
 * may complete asynchronously through drain_exit_hook_done() and is bounded by hook_timeout_ms.
 * DONE writes the one "exit reason=..." line and calls the owner's done callback.
 *
 * Everything except drain_exit_skip_wait() and drain_exit_hook_done() runs on the base's thread;
 * those two only store into atomics / a mutex-guarded slot and event_active() the wake event.
 */
#include "drain.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/event.h>

#include <jansson.h>

#include "clock.h"
#include "log.h"
#include "xmalloc.h"

#define DRAIN_EXIT_TICK_MS 20

enum { X_IDLE, X_WAITING, X_HOOKS, X_DONE };
enum { STEP_VOID, STEP_FLUSH, STEP_DEREGISTER, STEP_RELEASE, STEP_END };

static const char *const step_names[] = {"void_unfinished_rounds", "flush_queues", "deregister",
                                         "release_lease"};

struct drain_exit {
    drain_t *d;
    struct event_base *base;
    drain_exit_hooks_t hooks;
    drain_exit_done_cb done;
    void *arg;

    int state;                /* base thread only */
    drain_exit_reason_t mode; /* what begin asked for */
    drain_exit_reason_t reason;
    _Atomic bool skip;
    _Atomic bool finished;
    int step;
    long flushed;
    int64_t hook_started_ms;

    pthread_mutex_t mu; /* guards the hook slot below */
    unsigned token;     /* token of the hook under way; 0 = none */
    bool hook_complete;
    long hook_result;

    struct event *wake_ev, *tick_ev, *hook_timer, *sig_term, *sig_int;
};

const char *drain_exit_reason_name(drain_exit_reason_t r)
{
    switch (r) {
    case DRAIN_EXIT_DRAINED:
        return "drained";
    case DRAIN_EXIT_FORCED:
        return "forced";
    case DRAIN_EXIT_LEASE_LOST:
        return "lease_lost";
    case DRAIN_EXIT_FATAL:
        return "fatal";
    }
    return "unknown";
}

static void drain_exit_advance(drain_exit_t *x);

static void drain_exit_wake_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drain_exit_advance(arg);
}

static void drain_exit_hook_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drain_exit_t *x = arg;
    pthread_mutex_lock(&x->mu);
    bool expired = x->token != 0 && !x->hook_complete;
    if (expired) {
        x->hook_complete = true;
        x->hook_result = -ETIMEDOUT;
    }
    pthread_mutex_unlock(&x->mu);
    if (expired)
        log_emit(LOG_WARN, "exit_hook_timeout", "{s:s,s:i}", "hook", step_names[x->step],
                 "timeout_ms", x->hooks.hook_timeout_ms);
    drain_exit_advance(x);
}

/* The hook of a step, or NULL when the step does not apply. */
static drain_exit_hook_fn drain_exit_hook_of(const drain_exit_t *x, int step)
{
    switch (step) {
    case STEP_VOID:
        return x->reason == DRAIN_EXIT_DRAINED ? NULL : x->hooks.void_unfinished_rounds;
    case STEP_FLUSH:
        return x->hooks.flush_queues;
    case STEP_DEREGISTER:
        return x->hooks.deregister;
    case STEP_RELEASE:
        return x->hooks.release_lease;
    }
    return NULL;
}

/*
 * Starts the next applicable hook (from x->step on), or finishes when none is left. The hook
 * is called last, after the slot is armed, so a synchronous completion inside it is recorded
 * and picked up by the wake event on the next loop iteration (never re-entrantly).
 */
static void drain_exit_start_hook(drain_exit_t *x)
{
    while (x->step < STEP_END && drain_exit_hook_of(x, x->step) == NULL)
        x->step++;
    if (x->step == STEP_END) {
        x->state = X_DONE;
        int64_t el_ms = drain_elapsed_ns(x->d) / 1000000;
        char msg[48];
        snprintf(msg, sizeof msg, "exit reason=%s", drain_exit_reason_name(x->reason));
        log_emit(x->reason == DRAIN_EXIT_DRAINED ? LOG_INFO : LOG_WARN, "exit",
                 "{s:s,s:s,s:I,s:I,s:I}", "msg", msg, "reason", drain_exit_reason_name(x->reason),
                 "flushed", (json_int_t)x->flushed, "human_desks",
                 (json_int_t)drain_human_desks_now(x->d), "drain_elapsed_ms", (json_int_t)el_ms);
        atomic_store(&x->finished, true);
        /* Last: the owner may free x from its callback. */
        x->done(x, x->reason, x->flushed, x->arg);
        return;
    }
    pthread_mutex_lock(&x->mu);
    unsigned token = x->token + 1;
    if (token == 0)
        token = 1;
    x->token = token;
    x->hook_complete = false;
    x->hook_result = 0;
    pthread_mutex_unlock(&x->mu);
    x->hook_started_ms = clock_mono_ms();
    struct timeval tv = {x->hooks.hook_timeout_ms / 1000, (x->hooks.hook_timeout_ms % 1000) * 1000};
    evtimer_add(x->hook_timer, &tv);
    drain_exit_hook_of(x, x->step)(x, token, x->hooks.ctx);
}

/* Leaves WAITING with the given outcome and starts the hooks. */
static void drain_exit_end_wait(drain_exit_t *x, drain_exit_reason_t reason, const char *why)
{
    x->state = X_HOOKS;
    x->reason = reason;
    evtimer_del(x->tick_ev);
    drain_watch(x->d, NULL);
    log_emit(LOG_INFO, "exit_wait_ended", "{s:s,s:s,s:I}", "outcome",
             drain_exit_reason_name(reason), "why", why, "human_desks",
             (json_int_t)drain_human_desks_now(x->d));
    x->step = STEP_VOID;
    drain_exit_start_hook(x);
}

/* One evaluation of the machine; called on every wake-up, tick and hook timeout. */
static void drain_exit_advance(drain_exit_t *x)
{
    if (x->state == X_WAITING) {
        if (x->mode != DRAIN_EXIT_DRAINED) {
            drain_exit_end_wait(x, x->mode, "no wait for this reason");
        } else if (drain_human_desks_now(x->d) == 0) {
            drain_exit_end_wait(x, DRAIN_EXIT_DRAINED, "human_desks reached 0");
        } else if (atomic_load(&x->skip)) {
            drain_exit_end_wait(x, DRAIN_EXIT_FORCED, "wait skipped by a second signal");
        } else if (drain_elapsed_ns(x->d) >= (int64_t)drain_max_seconds(x->d) * 1000000000) {
            drain_exit_end_wait(x, DRAIN_EXIT_FORCED, "drain_max_seconds passed");
        }
        return;
    }
    if (x->state != X_HOOKS)
        return;
    pthread_mutex_lock(&x->mu);
    bool complete = x->hook_complete;
    long result = x->hook_result;
    pthread_mutex_unlock(&x->mu);
    if (!complete)
        return;
    evtimer_del(x->hook_timer);
    if (x->step == STEP_FLUSH && result > 0)
        x->flushed = result;
    log_emit(result < 0 ? LOG_WARN : LOG_INFO, "exit_hook_done", "{s:s,s:I,s:I}", "hook",
             step_names[x->step], "result", (json_int_t)result, "ms",
             (json_int_t)(clock_mono_ms() - x->hook_started_ms));
    x->step++;
    drain_exit_start_hook(x);
}

drain_exit_t *drain_exit_create(drain_t *d, struct event_base *base,
                                const drain_exit_hooks_t *hooks, drain_exit_done_cb done, void *arg)
{
    drain_exit_t *x = xcalloc(1, sizeof *x);
    x->d = d;
    x->base = base;
    if (hooks != NULL)
        x->hooks = *hooks;
    if (x->hooks.hook_timeout_ms <= 0)
        x->hooks.hook_timeout_ms = 10000;
    x->done = done;
    x->arg = arg;
    x->state = X_IDLE;
    pthread_mutex_init(&x->mu, NULL);
    x->wake_ev = event_new(base, -1, 0, drain_exit_wake_cb, x);
    if (x->wake_ev == NULL)
        goto fail_wake;
    x->tick_ev = event_new(base, -1, EV_PERSIST, drain_exit_wake_cb, x);
    if (x->tick_ev == NULL)
        goto fail_tick;
    x->hook_timer = evtimer_new(base, drain_exit_hook_timeout_cb, x);
    if (x->hook_timer == NULL)
        goto fail_hook_timer;
    return x;

fail_hook_timer:
    event_free(x->tick_ev);
fail_tick:
    event_free(x->wake_ev);
fail_wake:
    pthread_mutex_destroy(&x->mu);
    free(x);
    return NULL;
}

/* SIGTERM/SIGINT, delivered by libevent on the base's thread: begin, or skip the wait. */
static void drain_exit_signal_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    drain_exit_t *x = arg;
    log_emit(LOG_INFO, "signal", "{s:s,s:b}", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT",
             "exit_under_way", x->state != X_IDLE);
    drain_exit_begin(x, DRAIN_EXIT_DRAINED);
}

int drain_exit_watch_signals(drain_exit_t *x)
{
    if (x->sig_term != NULL)
        return 0;
    /* libevent saves the disposition it finds and puts it back when the events are freed (or
     * the base is). Ignoring the signals first makes that restored disposition "ignore": a late
     * SIGTERM (kubelet sends one after the preStop hook, which may have run the whole exit)
     * arriving during the teardown can no longer turn a clean exit into a kill (status 143).
     * A signal in the few instructions until evsignal_add() is ignored. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    x->sig_term = evsignal_new(x->base, SIGTERM, drain_exit_signal_cb, x);
    x->sig_int = evsignal_new(x->base, SIGINT, drain_exit_signal_cb, x);
    if (x->sig_term == NULL || x->sig_int == NULL || evsignal_add(x->sig_term, NULL) != 0 ||
        evsignal_add(x->sig_int, NULL) != 0)
        goto fail_signals;
    return 0;

fail_signals:
    if (x->sig_term != NULL)
        event_free(x->sig_term);
    if (x->sig_int != NULL)
        event_free(x->sig_int);
    x->sig_term = x->sig_int = NULL;
    return -EIO;
}

/*
 * Starts the drain (if /drain has not already) and the wait. The bound counts from the start
 * of the drain, so a drain begun earlier by preStop's /drain only waits for what is left.
 */
int drain_exit_begin(drain_exit_t *x, drain_exit_reason_t mode)
{
    if (mode < DRAIN_EXIT_DRAINED || mode > DRAIN_EXIT_FATAL || mode == DRAIN_EXIT_FORCED)
        return -EINVAL;
    if (x->state != X_IDLE) {
        /* A lost lease or a fatal error during a graceful exit is what the exit line reports. */
        if (mode != DRAIN_EXIT_DRAINED && x->state == X_WAITING)
            x->mode = mode;
        else if (mode != DRAIN_EXIT_DRAINED && x->state == X_HOOKS)
            x->reason = mode;
        drain_exit_skip_wait(x);
        return 0;
    }
    x->mode = mode;
    x->state = X_WAITING;
    log_emit(LOG_INFO, "exit_begin", "{s:s,s:I,s:i}", "mode", drain_exit_reason_name(mode),
             "human_desks", (json_int_t)drain_human_desks_now(x->d), "drain_max_seconds",
             drain_max_seconds(x->d));
    drain_watch(x->d, x->wake_ev);
    drain_start(x->d);
    struct timeval tv = {0, DRAIN_EXIT_TICK_MS * 1000};
    evtimer_add(x->tick_ev, &tv);
    event_active(x->wake_ev, EV_READ, 0);
    return 0;
}

void drain_exit_skip_wait(drain_exit_t *x)
{
    atomic_store(&x->skip, true);
    event_active(x->wake_ev, EV_READ, 0);
}

void drain_exit_hook_done(drain_exit_t *x, unsigned token, long result)
{
    pthread_mutex_lock(&x->mu);
    bool current = token != 0 && token == x->token && !x->hook_complete;
    if (current) {
        x->hook_complete = true;
        x->hook_result = result;
    }
    pthread_mutex_unlock(&x->mu);
    if (current)
        event_active(x->wake_ev, EV_READ, 0);
}

bool drain_exit_finished(const drain_exit_t *x)
{
    return atomic_load(&x->finished);
}

void drain_exit_destroy(drain_exit_t *x)
{
    if (x == NULL)
        return;
    drain_watch(x->d, NULL);
    if (x->sig_term != NULL)
        event_free(x->sig_term);
    if (x->sig_int != NULL)
        event_free(x->sig_int);
    event_free(x->hook_timer);
    event_free(x->tick_ev);
    event_free(x->wake_ev);
    pthread_mutex_destroy(&x->mu);
    free(x);
}
