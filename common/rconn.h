/*
 * rconn -- one asynchronous Redis connection on a libevent base (hiredis 0.14).
 *
 * hiredis 0.14 has no timeouts and frees its context by itself on some failures; this module
 * wraps one redisAsyncContext so that its owner never has to care:
 *
 *   - It connects to an IP literal (never a host name: hiredis would resolve it with a blocking
 *     getaddrinfo) with its own connect timeout, then sends PING; the connection counts as
 *     "connected" only once Redis has answered.
 *   - Every request has a deadline (opts.request_timeout_ms). When the oldest pending request
 *     passes it, the context is freed: every pending callback then runs once with reply == NULL,
 *     and the connection is re-established.
 *   - Lost or refused connections are retried forever with exponential backoff and jitter
 *     (opts.backoff_min_ms doubling up to opts.backoff_max_ms, each delay drawn uniformly from
 *     [delay/2, delay]). The last error is logged once per change and kept in rconn_last_error().
 *   - The owner learns about "connected" / "disconnected" through opts.on_state, always called
 *     from the event loop (a zero timer), never from inside a hiredis callback. Quick flaps that
 *     end in the state the owner already knows are not reported.
 *   - Commands are refused with -ENOTCONN while not connected; nothing is queued for later.
 *
 * Callbacks: every reply callback given to a successful rconn_command*() / rconn_eval() call runs
 * exactly once, on the base's thread, with either the reply or NULL (timeout, connection lost,
 * rconn_destroy). The reply (and everything inside it) is valid only during the callback. An
 * error reply (REDIS_REPLY_ERROR) is a reply, not NULL. A callback may issue new commands and may
 * call rconn_destroy().
 *
 * Threads: an rconn is used only from the thread that runs its event_base.
 *
 * SIGPIPE: a write to a connection Redis has closed raises SIGPIPE. hiredis does not block it,
 * so every process that uses this module must ignore it once at start-up:
 * `signal(SIGPIPE, SIG_IGN);` (this module never changes process-wide signal state itself).
 *
 * Sentinel mode (opts.sentinels + opts.master_name; common/sentinel.h, docs/deploy.md "Redis
 * Sentinel"): before every (re)connect the master is resolved anew through the sentinels (each
 * asked with the connect timeout, at most 500 ms, to connect and as much to answer), and
 * the connection counts as connected only once the node has answered PING and then `ROLE` with
 * `master` (else it is closed and resolved again after the backoff). While connected:
 *   - a connection to one sentinel is subscribed to `+switch-master`; a switch of this master
 *     closes the connection (pending callbacks get NULL) and the next connect goes to the new
 *     master. If that sentinel connection is lost, the next sentinel of the list takes over.
 *   - every second the node is asked `ROLE` again (not on subscriber connections, which
 *     Redis allows no other command), and any reply `-READONLY` closes the connection: a demoted
 *     master is left within about a second even when the switch message was missed.
 * A wrong master name or no reachable sentinel is one more connection error: logged once,
 * retried with backoff, kept in rconn_last_error().
 *
 * Cluster mode (opts.cluster; common/rconn_cluster.h, docs/deploy.md "Redis Cluster: the client"):
 * the same calls on a Redis Cluster through common/rcluster_async.h. Each command goes to the
 * master of its first key's slot (a script's keys must share one slot, else -EINVAL); keyless
 * commands (PING, INFO, PUBLISH) go to the master of the slot last written, and `WAIT` to that
 * master on the connection that carried the write. "connected" means the slot map serves every
 * slot; a master failed over within the cluster client's retry budget (request timeout + 2 s, at
 * least 4 s) is not a disconnect: commands wait for its replica. A subscriber connection is one
 * plain connection to any node (cluster PUBLISH reaches every node), moved to the next node when
 * lost. rconn_flush() also sends the commands still waiting in the cluster client.
 *
 * Subscriber connections: rconn_subscribe() puts the connection into pub/sub mode for good; such
 * a connection must be used for nothing else. Subscriptions are renewed after every reconnect.
 */
#ifndef CROUPIER_RCONN_H
#define CROUPIER_RCONN_H

#include <stdbool.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

struct event_base;

typedef struct rconn rconn_t;
typedef struct rconn_script rconn_script_t;

/* reply is NULL on timeout, lost connection or destroy; valid only during the call. */
typedef void (*rconn_reply_cb)(rconn_t *rc, redisReply *reply, void *arg);
/* connected: true once Redis answered PING after a (re)connect, false when that ended. */
typedef void (*rconn_state_cb)(rconn_t *rc, bool connected, void *arg);
/* One published message on a subscribed channel; data is not NUL-terminated necessarily. */
typedef void (*rconn_message_cb)(rconn_t *rc, const char *channel, const char *data, size_t len,
                                 void *arg);

typedef struct {
    const char *host; /* IP literal (IPv4 or IPv6), copied */
    int port;
    int connect_timeout_ms;  /* TCP connect + PING; 0 = 1000 */
    int request_timeout_ms;  /* per request; 0 = 1000 */
    int backoff_min_ms;      /* first retry delay; 0 = 50 */
    int backoff_max_ms;      /* cap of the doubling delay; 0 = 2000 */
    const char *name;        /* label in log records (e.g. "lease"); copied; may be NULL */
    rconn_state_cb on_state; /* may be NULL */
    void *arg;               /* passed to on_state */
    bool quiet;              /* log no connection errors (the owner reports them) */
    /* Sentinel mode (see below): "IP:PORT,..." of the sentinels and the master's name; both
     * copied. When sentinels is set, host and port are ignored. */
    const char *sentinels;
    const char *master_name;
    /* Cluster mode (see below): "IP:PORT,..." of seed nodes of a Redis Cluster, copied. When
     * set, host, port, sentinels and master_name are ignored (sentinels must be NULL). */
    const char *cluster;
} rconn_opts_t;

/*
 * Creates the connection and starts connecting at once (the result arrives through on_state).
 * Returns NULL with errno = EINVAL if host is not an IP literal or the port is out of range, or
 * (sentinel mode) the sentinel list or the master name is malformed.
 * The base must outlive the rconn.
 */
rconn_t *rconn_create(struct event_base *base, const rconn_opts_t *opts);

/*
 * Closes the connection. Every pending reply callback runs with NULL before this returns; no
 * callback of any kind runs afterwards. May be called from inside one of the rconn's own
 * callbacks (the last of the memory is then released on the next loop iteration, so the base
 * must be run once more or freed after the rconn). NULL is a no-op.
 */
void rconn_destroy(rconn_t *rc);

bool rconn_connected(const rconn_t *rc);
/*
 * Writes the commands queued on the connection now rather than at the event loop's next turn
 * (hiredis's write event): a caller about to tell someone of a write it just queued (croupier-gate
 * answering a Join after queuing the seat's SET) calls it first, so the command leaves before
 * the answer does. Does nothing unless the connection is ready and has output queued. A write
 * error closes the connection as the write event would (its callbacks run).
 */
void rconn_flush(rconn_t *rc);
/* Number of requests waiting for their reply. */
size_t rconn_pending(const rconn_t *rc);
/* The last connection error as text ("" if none yet); static storage inside rc. */
const char *rconn_last_error(const rconn_t *rc);
/* Successful connections so far (the first connect counts). */
unsigned rconn_connect_count(const rconn_t *rc);
/* The address connected to (or last tried): a fixed host, or the master last resolved through
 * the sentinels ("" and 0 before the first resolution). Static storage inside rc. */
const char *rconn_host(const rconn_t *rc);
int rconn_port(const rconn_t *rc);

/*
 * Sends one command built from a printf-like format (hiredis rules: %s for C strings, %b for
 * binary data followed by its size_t length). Returns 0 (cb will run once) or -ENOTCONN /
 * -ESHUTDOWN / -EINVAL (cb will not run).
 */
int rconn_command(rconn_t *rc, rconn_reply_cb cb, void *arg, const char *fmt, ...);

/*
 * Sends one command given as argc arguments with explicit lengths (binary-safe). The arguments
 * are copied into the output buffer before the call returns. Many calls in a row are pipelined.
 * argvlen may be NULL when every argument is a C string. Returns like rconn_command().
 */
int rconn_command_argv(rconn_t *rc, rconn_reply_cb cb, void *arg, int argc, const char **argv,
                       const size_t *argvlen);

/*
 * A Lua script known by its source. The first rconn_eval() on a connection that has not loaded
 * it yet sends SCRIPT LOAD (to learn its SHA1) pipelined with EVAL; afterwards EVALSHA is used,
 * and a NOSCRIPT error (e.g. Redis restarted empty) is answered by re-sending the same call as
 * EVAL, transparently to the callback. A script may be shared by several rconns of one thread.
 */
rconn_script_t *rconn_script_create(const char *lua_source);
/* Drops the creator's reference; requests still in flight keep the script alive until their
 * callbacks have run, so an owner may destroy its scripts at any time. NULL is a no-op. */
void rconn_script_destroy(rconn_script_t *s);
/* The SHA1 as 40 hex digits once known, else NULL. */
const char *rconn_script_sha(const rconn_script_t *s);

/*
 * Runs a script: argv holds nkeys key names followed by the remaining arguments (argc in all);
 * argvlen may be NULL for C strings. Returns like rconn_command().
 */
int rconn_eval(rconn_t *rc, rconn_script_t *s, rconn_reply_cb cb, void *arg, int nkeys, int argc,
               const char **argv, const size_t *argvlen);

/*
 * Subscribes to a channel for the life of the rconn; messages reach cb. The subscription is
 * sent now if connected and again after every reconnect. Messages published while the
 * connection was down are lost (pub/sub has no history): owners needing every change must also
 * re-read the state they follow when on_state reports a reconnect. Returns 0 or -ESHUTDOWN.
 */
int rconn_subscribe(rconn_t *rc, const char *channel, rconn_message_cb cb, void *arg);

/* Redis reply helpers: whether reply is an error reply starting with prefix (e.g. "NOSCRIPT"). */
bool rconn_reply_is_error(const redisReply *reply, const char *prefix);

#endif
