/*
 * mcluster_fixture -- what the tests of the game server's money by entity against a real Redis
 * Cluster share (test_mcluster.c, test_mcluster_handoff.c; money/mcluster.h, docs/queues.md
 * "The game server's money by entity"): the cluster of the test program (3 masters with 2
 * replicas each, started once by the unchecked fixture mcf_setup / mcf_teardown), clients on
 * it, the names of one test process (each case runs in a process of its own; the children it
 * forks keep them), the lease fence of a slot, balances, seeding and the conservation audit.
 */
#ifndef CROUPIER_TEST_MCLUSTER_FIXTURE_H
#define CROUPIER_TEST_MCLUSTER_FIXTURE_H

#include <check.h>
#include <stdint.h>

#include "mcluster.h"
#include "rcluster.h"
#include "tcluster.h"

/* The cluster's shape: 3 masters with two replicas each (after a failover the new master still
 * has one to WAIT for). */
#define MCF_MASTERS 3
#define MCF_REPLICAS 2

/* The program's cluster (NULL: it could not start; each case says so with MCF_NEED_CLUSTER). */
extern ts_cluster_t *mcf_cl;

/* The unchecked fixture: SIGPIPE ignored, logs quiet, the cluster's key layout (lease fences and
 * hand histories in the money slot), the cluster started / stopped. */
void mcf_setup(void);
void mcf_teardown(void);

#define MCF_NEED_CLUSTER() ck_assert_msg(mcf_cl != NULL, "could not start a 3+6 Redis Cluster")

/* A client of the cluster (the case fails when it cannot connect). */
rcluster_t *mcf_client(void);
/* The money by entity on c, every step WAITing for one replica (2 s at most). */
mcluster_t *mcf_money(rcluster_t *c);

/* The service name of this test process; a player name of it (name + pid; 8 at a time). */
const char *mcf_service(void);
const char *mcf_player(const char *name);

/* The lease fence of the service's slot (the money slot on a cluster, lease/lease.h). */
void mcf_set_fence(rcluster_t *c, uint32_t slot, uint64_t epoch);

/* Balances: a player's wallet, a seat account of an epoch of the service. */
int64_t mcf_wallet(mcluster_t *m, const char *player);
int64_t mcf_seat(mcluster_t *m, uint32_t slot, uint64_t epoch, const char *acct);

/* Money created in a player's wallet (xfer_seed, counted as seeded). */
void mcf_seed(mcluster_t *m, const char *player, long long amount);

/* The conservation audit balances, with exactly in_flight chips in flight (a walk that meets a
 * slot map change is run again, up to 20 times). */
void mcf_audit(mcluster_t *m, long long in_flight);

#endif
