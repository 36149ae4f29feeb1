/*
 * tcluster -- a real Redis Cluster on loopback for integration tests (support.h's habits: free
 * ports, private temp dirs, children killed with the test process, everything stopped).
 *
 * ts_cluster_start(M, R) starts M masters and R replicas per master, each a `redis-server
 * --cluster-enabled yes` on its own port and its own cluster bus port (`--cluster-port`, so that
 * port + 10000 need not be free), --cluster-node-timeout 1000. It builds the cluster itself the
 * way `redis-cli --cluster create` does: a distinct config epoch per node, the 16384 slots split
 * evenly over the masters (CLUSTER ADDSLOTSRANGE), CLUSTER MEET, CLUSTER REPLICATE; then it waits
 * for `cluster_state:ok` on every node, every replica in sync and every node knowing every
 * replica. Nodes 0..M-1 are the masters; the replicas of master m are M + m*R .. M + m*R + R-1.
 */
#ifndef CROUPIER_TEST_TCLUSTER_H
#define CROUPIER_TEST_TCLUSTER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ts_cluster ts_cluster_t;

/* Whether this redis-server can run in cluster mode (one node started and asked); when not,
 * the reason in why (one line). */
bool ts_cluster_supported(char *why, size_t len);
/* For a test program's main(): true when cluster mode cannot run here, having said so as a
 * visible TAP skip ("1..0 # SKIP <why>") and one line "<name>: skipped: <why>" on stderr. */
bool ts_cluster_skip(const char *name);

/* Starts and forms the cluster (within about 30 s); NULL with one line on stderr if it cannot. */
ts_cluster_t *ts_cluster_start(int masters, int replicas_per_master);
/* Stops every node (SIGTERM, then SIGKILL) and removes their directories. NULL is a no-op. */
void ts_cluster_stop(ts_cluster_t *c);

int ts_cluster_size(const ts_cluster_t *c);
int ts_cluster_port(const ts_cluster_t *c, int i);
/* The node's 40-character cluster id. */
const char *ts_cluster_id(const ts_cluster_t *c, int i);
/* "127.0.0.1:P,..." of every node (masters first). */
const char *ts_cluster_seeds(const ts_cluster_t *c);
/* The index of the node listening on port, or -1. */
int ts_cluster_index(const ts_cluster_t *c, int port);
/* The node that serves slot according to node asker's CLUSTER SLOTS, or -1. */
int ts_cluster_slot_owner(const ts_cluster_t *c, int asker, unsigned slot);
/* A command to node i (ts_redis_cmd_port's text); caller frees; NULL on I/O error. */
char *ts_cluster_cmd(const ts_cluster_t *c, int i, const char *fmt, ...);
/* SIGKILLs node i (a crash). Works from a forked test process too: the parent reaps it at stop. */
void ts_cluster_crash(ts_cluster_t *c, int i);
/* SIGSTOP / SIGCONT node i (a hung node; keep it under --cluster-node-timeout, 1000 ms, unless
 * a failover is wanted). */
void ts_cluster_pause(ts_cluster_t *c, int i);
void ts_cluster_resume(ts_cluster_t *c, int i);
/* Waits until every node not crashed says cluster_state:ok; 0 or -ETIMEDOUT. */
int ts_cluster_wait_ok(ts_cluster_t *c, int timeout_ms);

/*
 * Moves one slot from node `from` to node `to` (both masters) with every key in it, as
 * `redis-cli --cluster reshard` does: SETSLOT IMPORTING / MIGRATING, MIGRATE of the keys,
 * SETSLOT NODE on every master. ts_cluster_migrate_begin() stops half-way: the migration stays
 * open and only the keys named in keys[] (n of them) are moved -- the state in which the source
 * answers -ASK for them; ts_cluster_migrate_finish() moves the rest and ends it. 0 or -EIO.
 */
int ts_cluster_migrate_slot(ts_cluster_t *c, unsigned slot, int from, int to);
int ts_cluster_migrate_begin(ts_cluster_t *c, unsigned slot, int from, int to,
                             const char *const *keys, int n);
int ts_cluster_migrate_finish(ts_cluster_t *c, unsigned slot, int from, int to);

#endif
