/*
 * rcluster -- a blocking Redis Cluster client on hiredis 0.14 (docs/deploy.md, "Redis Cluster:
 * the client"). Debian 12 packages no cluster client for C, so the routing is ours.
 *
 * What it does:
 *   - Key slots: CRC16 (XMODEM) of the key, or of its hash tag -- the bytes between the first
 *     `{` and the first `}` after it, when that is not empty -- modulo 16384.
 *   - The slot map: `CLUSTER SLOTS` asked of the known nodes in turn (the seeds first, then every
 *     node a previous map named), the first complete answer wins. One blocking connection per
 *     master, opened when first needed, each connect and each command bounded by timeouts.
 *   - `-MOVED slot ip:port`: the slot is pointed at the new master at once, the whole map is
 *     refreshed (at most once per opts.refresh_min_ms, a resharding moves many keys) and the
 *     command is sent again. `-ASK slot ip:port`: `ASKING` then the command, once, on that node;
 *     the map is left alone. Both count against opts.max_redirects per command.
 *   - `-TRYAGAIN` (a multi-key command during a slot migration), `-CLUSTERDOWN` (slots uncovered
 *     for a moment, e.g. during a failover), `-LOADING` (a node reading its data set at start)
 *     and a node that cannot be reached (nothing was sent): the map is refreshed and the command
 *     is sent again after a backoff (opts.retry_min_ms doubling up to opts.retry_max_ms), all of
 *     it bounded by opts.retry_budget_ms per command.
 *   - A lost reply (timeout or connection lost after the command was written) is NOT resent
 *     unless the call says the command is safe to resend (RCLUSTER_RESEND): the command may have
 *     run. The connection is closed and the map refreshed before the next command either way.
 *   - Scripts: EVALSHA; a `-NOSCRIPT` (each node has its own cache, empty after a restart or on a
 *     promoted replica) is answered with EVAL of the source, which also loads it there. The SHA1
 *     is learned once with `SCRIPT LOAD`. Every key of a script must be in one slot.
 *   - `WAIT`: sent on the connection to the master of a slot, the one that just took the write.
 *
 * The same routing for event loops, on common/rconn.h: common/rcluster_async.h.
 *
 * Not done (docs/deploy.md lists them): reads from replicas, pipelines across nodes, multi-slot
 * commands, pub/sub, host names (IP literals only).
 *
 * Threads: an rcluster_t is used by one thread at a time (it owns blocking connections).
 * Replies: every reply returned is the caller's, freed with freeReplyObject(). An error reply
 * other than the redirections above (e.g. WRONGTYPE, a script's error) is returned as a reply.
 */
#ifndef CROUPIER_RCLUSTER_H
#define CROUPIER_RCLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "config.h"

#define RCLUSTER_SLOTS 16384
/* At most this many seeds in a --redis-cluster list, and nodes in a map. */
#define RCLUSTER_MAX_NODES 256

/* The CRC16 of the Redis Cluster spec (XMODEM: polynomial 0x1021, initial 0, no reflection). */
uint16_t rcluster_crc16(const void *buf, size_t len);
/* The slot of a key (0..16383), hash tags applied. */
unsigned rcluster_key_slot(const void *key, size_t len);

/*
 * Parses a seed list "IP:PORT,IP:PORT,..." (IPv6 as [V6]:PORT; IP literals only, no host names,
 * port 1..65535). Returns the number of seeds (>= 1) with a fresh array in *out (free it), or
 * -EINVAL with one line in err: an empty list, an empty item, a bad address, a bad port, a
 * duplicate, more than RCLUSTER_MAX_NODES seeds.
 */
int rcluster_seeds_parse(const char *list, config_addr_t **out, char *err, size_t errlen);

typedef struct {
    int connect_timeout_ms; /* per connect; 0 = 500 */
    int command_timeout_ms; /* per command round trip; 0 = 2000 */
    int max_redirects;      /* MOVED + ASK per command; 0 = 8 */
    int retry_budget_ms;    /* TRYAGAIN / CLUSTERDOWN / unreachable per command; 0 = 4000 */
    int retry_min_ms;       /* first backoff; 0 = 20 */
    int retry_max_ms;       /* cap of the doubling backoff; 0 = 500 */
    int refresh_min_ms;     /* least time between two MOVED-driven map refreshes; 0 = 100 */
} rcluster_opts_t;

typedef struct rcluster rcluster_t;

/*
 * Parses the seeds, asks them for the slot map and checks it (rcluster_check_map): every one of
 * the 16384 slots must be served. Returns the client, or NULL with one line in err (bad list,
 * no seed reachable, a seed that is not a cluster node, slots uncovered). opts may be NULL.
 * Connects only to IP literals.
 */
rcluster_t *rcluster_create(const char *seeds, const rcluster_opts_t *opts, char *err,
                            size_t errlen);
/* Closes every connection. NULL is a no-op. */
void rcluster_destroy(rcluster_t *c);

/*
 * Asks the known nodes for the slot map again and replaces it (connections to nodes that are no
 * longer masters are closed). Returns 0, or -EIO with the map unchanged and the reason in
 * rcluster_last_error(). Done by itself on topology changes; exposed for tests and tools.
 */
int rcluster_refresh(rcluster_t *c);

/* Flags of one command. */
enum {
    /* The command is safe to run twice (a read, or a write deduplicated by an id): after a lost
     * reply it is sent again (within the retry budget) instead of returning NULL. */
    RCLUSTER_RESEND = 1,
};

/*
 * Runs one command on the master of key's slot (argv as redisCommandArgv; argvlen may be NULL
 * for C strings; the key is usually one of argv, given apart so the router need not know the
 * command). Returns the reply (the caller's), or NULL with the reason in rcluster_last_error():
 * the slot is not served, the retries or redirections ran out, or the reply was lost (the
 * command may have run; see RCLUSTER_RESEND).
 */
redisReply *rcluster_command_argv(rcluster_t *c, unsigned flags, const void *key, size_t keylen,
                                  int argc, const char **argv, const size_t *argvlen);
/* The same with a hiredis format (%s, %b ...), routed by key (a C string). */
redisReply *rcluster_command(rcluster_t *c, unsigned flags, const char *key, const char *fmt, ...);
/* The same for a command without a key (PING, INFO, CLUSTER ...): to the master of slot. */
redisReply *rcluster_command_slot(rcluster_t *c, unsigned flags, unsigned slot, const char *fmt,
                                  ...);

/* A Lua script known by its source; shared by any number of rcluster_t of one thread. */
typedef struct rcluster_script rcluster_script_t;
rcluster_script_t *rcluster_script_create(const char *lua_source);
void rcluster_script_destroy(rcluster_script_t *s); /* NULL is a no-op */
/* The SHA1 (40 hex digits) once learned, else NULL. */
const char *rcluster_script_sha(const rcluster_script_t *s);

/*
 * Runs a script: argv holds nkeys key names then the other arguments (argc in all; argvlen may
 * be NULL). nkeys >= 1 and every key in one slot, else NULL at once (rcluster_last_error() says
 * which key differs) -- a cluster would answer -CROSSSLOT. Returns like rcluster_command_argv().
 */
redisReply *rcluster_eval(rcluster_t *c, rcluster_script_t *s, unsigned flags, int nkeys, int argc,
                          const char **argv, const size_t *argvlen);

/*
 * `WAIT numreplicas timeout_ms` on the connection to the current master of slot: the number of
 * replicas that acknowledged this connection's writes (>= 0), or -EIO (reason in
 * rcluster_last_error()). Call it right after the write(s) to that slot: WAIT counts only the
 * writes of its own connection, and a connection re-opened in between has none (the answer is
 * then meaningless, hence -EIO when the connection was re-opened since the last command to
 * this slot's master). The command timeout is stretched by timeout_ms for this call.
 */
int rcluster_wait(rcluster_t *c, unsigned slot, int numreplicas, int timeout_ms);

/*
 * For the blocking users that keep a plain hiredis context (the money jobs, the sweeper, a
 * game's last recovery, croupier-ctl) while every key they touch is in one slot: the master
 * that serves key's slot now (a map asked of the seeds, each bounded by timeout_ms). 0 with
 * host and port, or -ENOENT / -EINVAL with one line in err. A later -MOVED (a failover or a
 * resharding since) is the caller's connection error: it asks again on its next connect.
 */
int rcluster_master_addr(const char *seeds, const char *key, int timeout_ms, char *host,
                         size_t hostlen, int *port, char *err, size_t errlen);

/* The master of slot in the current map ("" and 0 when uncovered); static storage inside c. */
const char *rcluster_slot_host(const rcluster_t *c, unsigned slot, int *port);
/* Number of masters in the current map. */
size_t rcluster_master_count(const rcluster_t *c);
/* The last error as one line ("" if none). Static storage inside c. */
const char *rcluster_last_error(const rcluster_t *c);

/* Counters since create (for tests and metrics). */
typedef struct {
    unsigned long moved, ask, tryagain, clusterdown, loading, noscript, refreshes, reconnects,
        resent;
} rcluster_stats_t;
void rcluster_get_stats(const rcluster_t *c, rcluster_stats_t *out);

/*
 * The start-up check of a --redis-cluster list (blocking, each node bounded by timeout_ms): the
 * list parses, at least one seed answers, every seed that answers is a cluster node
 * (`cluster_enabled:1` in INFO cluster), and the slot map it gives covers all 16384 slots.
 * Returns 0, or -EINVAL (bad list), -ENOENT (no seed reachable), -ENOTSUP (a seed is no cluster
 * node), -ERANGE (slots uncovered) with one line in err naming the node or the first uncovered
 * ranges.
 */
int rcluster_check(const char *seeds, int timeout_ms, char *err, size_t errlen);

/*
 * Program flag (common/config.h): the entry of a config_flag_t table that offers
 * --redis-cluster IP:PORT,... (CONFIG_STR, default NULL) as the alternative to --redis.
 */
/* clang-format off */
#define RCLUSTER_CONFIG_FLAG(cluster_out)                                                        \
    {"redis-cluster", CONFIG_STR, NULL,                                                          \
     "Redis Cluster seed nodes IP:PORT,... (instead of --redis)", (cluster_out), 0, 0}
/* clang-format on */

/* With --redis-cluster given (cluster not NULL): -EINVAL with one line in err when --redis was
 * given too, on the command line (--redis ADDR, --redis=ADDR) or in its environment variable
 * (common/config.h); else 0. */
int rcluster_redis_flag_check(const char *cluster, int argc, char **argv, char *err, size_t errlen);

/* Whether --redis-cluster parses and is not combined with --redis-sentinels; 0, or -EINVAL with
 * one line in err. NULL cluster is fine (not in cluster mode). */
int rcluster_flags_check(const char *cluster, const char *sentinels, char *err, size_t errlen);

#endif
