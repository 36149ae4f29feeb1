/*
 * rconn_cluster -- the Redis Cluster mode of common/rconn.h (opts.cluster), internal to common/:
 * rconn.c hands every call of an rconn created with cluster seeds to these functions, so that
 * the owners of rconns (the money writer, the lease and registry, the gateway, the tournament
 * director, the engines, the eviction guard) run on a cluster unchanged. docs/deploy.md, "Redis
 * Cluster: the client" describes the mode; in short:
 *
 *   - Commands and scripts go through one common/rcluster_async.h client (one rconn per master).
 *     A command is routed by its first key: argv[1] for most commands, the first key of an
 *     EVAL / EVALSHA, the first stream after STREAMS of an XREAD. Reads (GET, HGET, ...) are
 *     resent after a lost reply (RCLUSTER_RESEND); writes are not (the reply is NULL, as with a
 *     single Redis).
 *   - Commands without a key (PING, INFO, PUBLISH, ...) go to the master of the slot this
 *     connection last sent a keyed command to (slot 0 before any): PUBLISH reaches every node
 *     of a cluster from any of them. `WAIT n ms` is rcluster_async_wait() on that slot's master,
 *     on the connection that carried the write.
 *   - A script whose keys are in two slots is refused with -EINVAL (a cluster would answer
 *     -CROSSSLOT), logged once per connection (redis_cluster_crossslot, the keys named).
 *   - "connected" (on_state, rconn_connected) means the slot map is loaded and serves every
 *     slot; while not, commands are refused with -ENOTCONN as with a single Redis down. A master
 *     lost and replaced within the client's retry budget is not a disconnect: its commands wait.
 *     Once the map names another master for the slot this connection last wrote to (a failover,
 *     or the slot moved), the owner is told as a Sentinel switch tells it: on_state false then
 *     true, rconn_connect_count() one more (it re-reads its state; the money writer checks its
 *     replay journal against the new master).
 *   - Subscriptions: a cluster broadcasts every PUBLISH to all its nodes, so a subscriber
 *     connection is one plain rconn to any node (the seeds, then the masters of the map, in
 *     turn); when it is lost, or has not connected within 1.5 s, the next node is taken and the
 *     channels are subscribed there again (on_state reports the loss and the reconnect, so the
 *     owner re-reads what it follows, as after any reconnect).
 */
#ifndef CROUPIER_RCONN_CLUSTER_H
#define CROUPIER_RCONN_CLUSTER_H

#include "rcluster.h"
#include "rconn.h"

typedef struct rconn_cl rconn_cl_t;

/* owner: the rconn_t handed to callbacks. NULL with errno EINVAL on a bad seed list. */
rconn_cl_t *rconn_cl_create(rconn_t *owner, struct event_base *base, const rconn_opts_t *opts);
/* Pending callbacks run with NULL now; the rest is released now or, from inside one of its
 * callbacks, on the next loop turn. */
void rconn_cl_destroy(rconn_cl_t *cl);
bool rconn_cl_connected(const rconn_cl_t *cl);
void rconn_cl_flush(rconn_cl_t *cl);
size_t rconn_cl_pending(const rconn_cl_t *cl);
const char *rconn_cl_last_error(const rconn_cl_t *cl);
unsigned rconn_cl_connect_count(const rconn_cl_t *cl);
const char *rconn_cl_host(const rconn_cl_t *cl, int *port);
int rconn_cl_command_argv(rconn_cl_t *cl, rconn_reply_cb cb, void *arg, int argc, const char **argv,
                          const size_t *argvlen);
/* A command already formatted by redisvFormatCommand (a RESP array of bulk strings). */
int rconn_cl_command_formatted(rconn_cl_t *cl, rconn_reply_cb cb, void *arg, const char *cmd,
                               size_t len);
/* release(rel_arg) runs once the call is over (cb run), or at once when it is refused. */
int rconn_cl_eval(rconn_cl_t *cl, rcluster_script_t *s, void (*release)(void *), void *rel_arg,
                  rconn_reply_cb cb, void *arg, int nkeys, int argc, const char **argv,
                  const size_t *argvlen);
int rconn_cl_subscribe(rconn_cl_t *cl, const char *channel, rconn_message_cb cb, void *arg);

#endif
