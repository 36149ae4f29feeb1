/*
 * drain -- the drain shell and the health HTTP server shared by every engine and the gateway
 * (docs/architecture.md §4 and §7; the paths and the status JSON are a contract).
 *
 * The owner (a game-server engine or the gateway) injects what the shell needs to know through
 * drain_config_t: how many human desks are still in a round, how to stop intake, whether the
 * process is otherwise ready, and optionally how many desks it hosts. The shell keeps the one
 * piece of drain state (`draining`, with the start time taken once from the monotonic clock) and
 * serves, on its own thread with its own event_base:
 *
 *   /healthz               200 while the owner's liveness check and heartbeats are fresh
 *   /readyz                200 only when the readiness gate says ready and not draining
 *   /drain                 starts the drain (idempotent); 200 + status JSON      (allow-list)
 *   /drain/status          status JSON                                            (allow-list)
 *   /drain/wait?timeout=S  long poll: answers when human_desks reaches 0, or after S seconds
 *   /metrics               Prometheus text of the owner's registry
 *   POST /admin/drain      starts the drain like /drain, for any peer that sends
 *                          "Authorization: Bearer <token>" accepted by cfg.admin_auth (401
 *                          without a token, 403 with a refused one; an audit line either way);
 *                          only when admin_auth is set (docs/ops.md, croupier-ctl drain)
 *
 * Status JSON is compact: {"draining":true,"human_desks":1,"elapsedSeconds":12,"total_desks":5}
 * ("total_desks" only when the owner provides total_desks(); "elapsedSeconds" is 0 whenever not
 * draining). The gauges <prefix>_draining, <prefix>_drain_duration_seconds, <prefix>_human_desks,
 * <prefix>_desks and <prefix>_ready (1 while /readyz would answer 200) are refreshed whenever the
 * status is written (every /metrics scrape).
 *
 * The exit sequence (drain_exit_*) is a state machine on the owner's event_base, driven by
 * SIGTERM: start the drain, wait (bounded) for human_desks to reach 0, then void unfinished rounds
 * if the wait did not end cleanly, flush queues, deregister, release the lease, and log exactly one
 * line containing "exit reason=drained|forced|lease_lost|fatal".
 */
#ifndef CROUPIER_DRAIN_H
#define CROUPIER_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "metrics.h"

struct event;
struct event_base;

typedef struct drain drain_t;

typedef struct {
    void *ctx; /* passed to every callback below */

    /* Required, called from any thread (the HTTP thread, the exit machine's base): the number
     * of desks in a round with at least one human seated. Must be cheap (an atomic sum). */
    long (*human_desks)(void *ctx);
    /* Required, idempotent: stop starting new rounds and leave matchmaking. Called once, on
     * the thread that starts the drain (the HTTP thread for /drain, the caller of drain_start()
     * otherwise), after `draining` is set and readiness reports 503. */
    void (*stop_intake)(void *ctx);
    /* Required, any thread: whether the process is otherwise ready (lease held, registered,
     * warmed up). /readyz is 200 only when this says true and the drain has not started. */
    bool (*ready)(void *ctx);
    /* Optional, any thread: the number of desks hosted. NULL leaves "total_desks" out of the
     * status JSON and <prefix>_desks out of the metrics. */
    long (*total_desks)(void *ctx);
    /* Optional, any thread: liveness beyond the heartbeats (false makes /healthz 503). */
    bool (*alive)(void *ctx);

    /* Optional, HTTP thread: judges the bearer token of POST /admin/drain. Returns 0 and writes
     * who asked (for the audit line) into who, or non-zero with a short reason ("invalid",
     * "expired"). NULL: no /admin/drain (404). */
    int (*admin_auth)(void *ctx, const char *token, char *who, size_t wholen, const char **reason);

    int drain_max_seconds; /* the engine's bound; also /drain/wait's default timeout */
    config_addr_t listen;  /* health listen address; port 0 picks a free port */
    /* Peers allowed on /drain*: NULL means loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104);
     * otherwise a comma-separated list of IP literals that are the only ones allowed. */
    const char *drain_allow;
    metrics_registry_t *metrics; /* the owner's registry for /metrics; NULL: the shell's own */
    const char *metric_prefix;   /* "game" when NULL; e.g. "gate" for the gateway */
    int heartbeat_max_age_ms;    /* a heartbeat older than this fails /healthz; 0 = 5000 */
    int recheck_ms;              /* safety re-check of /drain/wait without notify; 0 = 100 */
    int http_timeout_s;          /* evhttp read/write timeout; 0 = 10 */
    /* Slowloris bounds of the health server (evhttp's timeout restarts with every byte): a
     * request's headers must end within header_timeout_ms of its first byte (of the accept, for
     * a connection's first request) and its body within body_timeout_ms of the headers, else
     * the connection is closed; at most max_conns connections at once: the next one takes the
     * place of the connection whose request has been read the longest, or, when every
     * connection is between requests (a long poll parked, a response being written), is
     * answered 503 and closed. 0 = 5000, 5000, 512. Metrics: <prefix>_http_connections,
     * <prefix>_http_timeouts_total{phase="headers"|"body"}, <prefix>_http_evicted_total,
     * <prefix>_http_refused_total. */
    int header_timeout_ms;
    int body_timeout_ms;
    int max_conns;
} drain_config_t;

/*
 * Validates the config and creates the shell (not serving yet). Returns 0 and the shell in *out,
 * or -EINVAL (a missing required callback, a negative bound, a bad allow-list) with one log line
 * saying which. The config's strings and registry must outlive the shell.
 */
int drain_create(const drain_config_t *cfg, drain_t **out);
/*
 * Starts the health HTTP thread: creates its event_base and evhttp there, binds the listen
 * address and waits until it is serving. Returns 0, or a negative errno (-EADDRINUSE, ...) with
 * nothing left running. Call at most once.
 */
int drain_serve(drain_t *d);
/* The port the health server listens on (after drain_serve), or -1. */
int drain_port(const drain_t *d);
/* Stops the HTTP thread (pending long polls get their answer first) and frees everything.
 * NULL is a no-op. No other drain_* call on d may run concurrently or afterwards. */
void drain_destroy(drain_t *d);

/*
 * Starts the drain; safe from any thread, idempotent. The first call records the start time
 * (monotonic), makes /readyz answer 503 and calls stop_intake(). Returns 1 if this call started
 * the drain, 0 if it had already started.
 */
int drain_start(drain_t *d);
bool drain_is_draining(const drain_t *d);
/* The injected human_desks() now, and the configured bound (accessors for the exit machine). */
long drain_human_desks_now(const drain_t *d);
int drain_max_seconds(const drain_t *d);
/* Whole seconds since the drain started; 0 whenever not draining. */
long drain_elapsed_seconds(const drain_t *d);
/* Nanoseconds since the drain started; 0 whenever not draining. */
int64_t drain_elapsed_ns(const drain_t *d);
/* Tells the shell human_desks() may have changed; any thread, cheap (wakes waiters only). */
void drain_notify(drain_t *d);
/* Writes the status JSON (NUL-terminated, no newline) into buf and refreshes the metrics.
 * Returns the length, or -ENOSPC if cap is too small (128 bytes always suffice). */
int drain_status_json(drain_t *d, char *buf, int cap);
/* Makes drain_notify() (and the start of the drain) also activate ev, an event of another
 * base (the exit machine's wake-up); NULL stops it. One watcher at a time; any thread. */
void drain_watch(drain_t *d, struct event *ev);
/* Number of /drain/wait requests currently waiting (for tests and benchmarks). */
int drain_waiters(const drain_t *d);
/* The shell's metrics registry (the owner's, or its own). */
metrics_registry_t *drain_metrics(const drain_t *d);

/*
 * Heartbeats: the owner registers one per loop that must stay responsive (main loop, each worker)
 * before drain_serve, and bumps it from that loop (a timer every second or so). /healthz answers
 * 503 naming the first heartbeat older than heartbeat_max_age_ms. drain_heartbeat_add returns
 * the slot (>= 0) or -ENOSPC (at most 64); name is copied.
 */
int drain_heartbeat_add(drain_t *d, const char *name);
void drain_heartbeat_beat(drain_t *d, int slot);

/* ---- the exit sequence ---- */

typedef struct drain_exit drain_exit_t;

typedef enum {
    DRAIN_EXIT_DRAINED = 0,    /* human_desks reached 0 within the bound */
    DRAIN_EXIT_FORCED = 1,     /* the bound passed or the wait was skipped: rounds voided */
    DRAIN_EXIT_LEASE_LOST = 2, /* begun by drain_exit_begin(x, DRAIN_EXIT_LEASE_LOST) */
    DRAIN_EXIT_FATAL = 3,      /* begun by drain_exit_begin(x, DRAIN_EXIT_FATAL) */
} drain_exit_reason_t;

/* "drained", "forced", "lease_lost", "fatal". */
const char *drain_exit_reason_name(drain_exit_reason_t r);

/*
 * A hook starts its work and reports completion with drain_exit_hook_done(x, token, result),
 * exactly once, from any thread, synchronously inside the hook or later (a Redis reply). The
 * result of flush_queues is the number of items flushed; the others' results are only logged
 * (negative = failed; the sequence goes on). A hook that does not complete within
 * hook_timeout_ms is logged and skipped; its late completion is ignored. NULL hooks are skipped.
 */
typedef void (*drain_exit_hook_fn)(drain_exit_t *x, unsigned token, void *ctx);

typedef struct {
    void *ctx;
    drain_exit_hook_fn void_unfinished_rounds; /* only when forced / lease_lost / fatal */
    drain_exit_hook_fn flush_queues;
    drain_exit_hook_fn deregister;
    drain_exit_hook_fn release_lease;
    int hook_timeout_ms; /* 0 = 10000 */
} drain_exit_hooks_t;

/* Called once, on the base's thread, after the last hook and the exit line. */
typedef void (*drain_exit_done_cb)(drain_exit_t *x, drain_exit_reason_t reason, long flushed,
                                   void *arg);

/*
 * Creates the exit machine on base (the owner's main loop; evthreads_enable() must have
 * been called before the base was created). Nothing happens until drain_exit_begin or a watched
 * signal. The shell must outlive x. Returns NULL only on a libevent failure.
 */
drain_exit_t *drain_exit_create(drain_t *d, struct event_base *base,
                                const drain_exit_hooks_t *hooks, drain_exit_done_cb done,
                                void *arg);
/*
 * Watches SIGTERM and SIGINT on the base (libevent signal events; the handlers only wake the
 * loop): the first starts a graceful exit, the next skips the wait. Returns 0 or -EIO.
 */
int drain_exit_watch_signals(drain_exit_t *x);
/*
 * Begins the exit; on the base's thread. DRAIN_EXIT_DRAINED asks for the graceful sequence (the
 * outcome is then drained or forced); LEASE_LOST and FATAL skip the wait. Calling it again while
 * the exit is under way skips the wait (a second signal), and LEASE_LOST or FATAL then also
 * becomes the reason of the exit line. Returns 0, or -EINVAL for a bad reason (FORCED is an
 * outcome, not a mode).
 */
int drain_exit_begin(drain_exit_t *x, drain_exit_reason_t mode);
/* Skips the wait (the outcome becomes forced unless human_desks is already 0); any thread.
 * Before begin it takes effect when the exit begins; after the wait it changes nothing. */
void drain_exit_skip_wait(drain_exit_t *x);
/* Reports a hook's completion; any thread. Stale tokens are ignored. */
void drain_exit_hook_done(drain_exit_t *x, unsigned token, long result);
/* Whether the exit line has been written. */
bool drain_exit_finished(const drain_exit_t *x);
/* Frees the machine; NULL is a no-op. Call on the base's thread, not from inside its hooks. */
void drain_exit_destroy(drain_exit_t *x);

#endif
