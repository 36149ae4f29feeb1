/*
 * rcluster_async -- the Redis Cluster client for event loops, on common/rconn.h (docs/deploy.md,
 * "Redis Cluster: the client"). The routing rules are those of the blocking client
 * (common/rcluster.h): key slots, the map from `CLUSTER SLOTS`, MOVED (map updated and refreshed,
 * command resent), ASK (`ASKING` + the command on that node, map untouched), TRYAGAIN /
 * CLUSTERDOWN / LOADING and unreachable masters (backoff within a budget per command), a lost
 * reply resent only for RCLUSTER_RESEND commands, EVALSHA with EVAL on NOSCRIPT.
 *
 * How it sits on rconn:
 *   - One rconn per master of the map, created when the map names it; rconn reconnects by
 *     itself (its own backoff) and bounds every request (opts.request_timeout_ms). A node that
 *     stops being a master is closed once its requests in flight have their replies.
 *   - The first map comes from rconns to the seeds (closed once a map names the masters); later
 *     maps from a connected master, or, when none is connected, from rconns opened to every
 *     other node the last map named (its replicas) and to the seeds.
 *   - A command whose master is not connected (or during a backoff) waits in the client, not in
 *     rconn (which refuses commands while disconnected), until it can be sent or its budget ends.
 *
 * Callbacks: every callback given to a successful rcluster_async_command*() / _eval() runs
 * exactly once, from the event loop, with the reply (valid only during the call; an error reply
 * that is not a redirection is a reply) or with NULL and a one-line reason (budget spent, reply
 * lost, too many redirections, the client destroyed). A callback may send commands; it must not
 * destroy the client.
 *
 * Threads: used only from the thread that runs its event_base. The process ignores SIGPIPE
 * (rconn.h).
 */
#ifndef CROUPIER_RCLUSTER_ASYNC_H
#define CROUPIER_RCLUSTER_ASYNC_H

#include <stdbool.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

#include "rcluster.h"

struct event_base;

typedef struct rcluster_async rcluster_async_t;

/* reply NULL: why says what happened. Both valid only during the call. */
typedef void (*rcluster_async_cb)(rcluster_async_t *c, redisReply *reply, const char *why,
                                  void *arg);

typedef struct {
    int connect_timeout_ms; /* rconn's, per connect; 0 = 500 */
    int request_timeout_ms; /* rconn's, per request; 0 = 2000 */
    int max_redirects;      /* MOVED + ASK per command; 0 = 8 */
    int retry_budget_ms;    /* from the call to the reply, retries included; 0 = 4000 */
    int retry_min_ms;       /* first backoff; 0 = 20 */
    int retry_max_ms;       /* cap of the doubling backoff; 0 = 500 */
    int refresh_min_ms;     /* least time between two map refreshes; 0 = 100 */
    const char *name;       /* label of the rconns' log records; copied; NULL = "cluster" */
    bool quiet;             /* the rconns log no connection errors */
} rcluster_async_opts_t;

/*
 * Parses the seeds (rcluster_seeds_parse rules) and starts asking them for the slot map at once.
 * Returns NULL with one line in err on a bad list. Commands may be sent before the map is
 * there: they wait for it within their budget. The base must outlive the client.
 */
rcluster_async_t *rcluster_async_create(struct event_base *base, const char *seeds,
                                        const rcluster_async_opts_t *opts, char *err,
                                        size_t errlen);
/* Every pending callback runs with NULL ("destroyed") before this returns. NULL is a no-op. Not
 * from inside one of the client's callbacks. */
void rcluster_async_destroy(rcluster_async_t *c);

/* Whether a map is loaded and serves every slot. While the map leaves slots unserved it is asked
 * for again (at most every opts.refresh_min_ms), commands or not. */
bool rcluster_async_ready(const rcluster_async_t *c);
/* Commands given and not yet answered. */
size_t rcluster_async_pending(const rcluster_async_t *c);
/* The master of slot in the current map ("" and 0 when none); static storage inside c. */
const char *rcluster_async_slot_host(const rcluster_async_t *c, unsigned slot, int *port);
void rcluster_async_get_stats(const rcluster_async_t *c, rcluster_stats_t *out);

/*
 * Sends one command (argv copied; argvlen may be NULL) to the master of key's slot. Returns 0
 * (cb will run once) or -EINVAL (argc < 1; cb will not run).
 */
int rcluster_async_command_argv(rcluster_async_t *c, unsigned flags, const void *key, size_t keylen,
                                int argc, const char **argv, const size_t *argvlen,
                                rcluster_async_cb cb, void *arg);

/* The same for a command without a key (PING, INFO, PUBLISH ...): to the master of slot. */
int rcluster_async_command_slot(rcluster_async_t *c, unsigned flags, unsigned slot, int argc,
                                const char **argv, const size_t *argvlen, rcluster_async_cb cb,
                                void *arg);

/*
 * Runs a script (common/rcluster.h's rcluster_script_t, shareable by the clients of one thread;
 * it must outlive the calls): argv holds nkeys >= 1 keys, all in one slot, then the arguments.
 * The first call anywhere learns its SHA1 (SCRIPT LOAD pipelined before an EVAL); later calls
 * use EVALSHA, and EVAL on NOSCRIPT. Returns 0, or -EINVAL (no key, keys in two slots).
 */
int rcluster_async_eval(rcluster_async_t *c, rcluster_script_t *s, unsigned flags, int nkeys,
                        int argc, const char **argv, const size_t *argvlen, rcluster_async_cb cb,
                        void *arg);

/*
 * `WAIT numreplicas timeout_ms` on the connection to slot's master that carried the last command
 * sent there: call it right after the write(s); it is sent once no command for that slot waits
 * in the client any more (they go first). cb gets the integer reply, or NULL when that
 * connection was re-opened since or is down (a WAIT on a fresh connection would count nothing)
 * or the answer is lost. timeout_ms must stay below opts.request_timeout_ms, which bounds the
 * request. Returns 0, or -EINVAL.
 */
int rcluster_async_wait(rcluster_async_t *c, unsigned slot, int numreplicas, int timeout_ms,
                        rcluster_async_cb cb, void *arg);

/*
 * Writes now what can go at once: commands waiting in the client (they are sent from the loop)
 * whose master is connected, then every connection's output (rconn_flush). For a caller about to
 * tell someone of a write it just gave. Runs no callback.
 */
void rcluster_async_flush(rcluster_async_t *c);

#endif
