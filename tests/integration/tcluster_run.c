/*
 * tcluster_run -- a Redis Cluster on loopback for the shell tests (tests/support/tcluster.h:
 * M masters, R replicas each, random ports, --cluster-node-timeout 1000).
 *
 *   tcluster_run FILE [MASTERS [REPLICAS]]   (default 3 masters, 1 replica each)
 *
 * Writes "IP:PORT,..." of every node (masters first) to FILE once the cluster is formed, then
 * waits for SIGTERM or SIGINT and stops every node (their directories removed). A node the
 * test SIGKILLs itself is fine. Exit 77 with one line when redis-server cannot run a cluster,
 * 1 when the cluster does not form.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "tcluster.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tcluster_run FILE [MASTERS [REPLICAS]]\n");
        return 2;
    }
    int m = argc > 2 ? atoi(argv[2]) : 3, r = argc > 3 ? atoi(argv[3]) : 1;
    char why[300];
    if (!ts_cluster_supported(why, sizeof why)) {
        fprintf(stderr, "tcluster_run: no Redis Cluster here: %s\n", why);
        return 77;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    ts_cluster_t *c = ts_cluster_start(m, r); /* its nodes die with us (support.h) */
    if (c == NULL)
        return 1;
    sigprocmask(SIG_BLOCK, &set, NULL); /* after the nodes started: they must not inherit it */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", ts_cluster_seeds(c)) < 0 || fclose(f) != 0 ||
        rename(tmp, argv[1]) != 0) {
        perror(argv[1]);
        ts_cluster_stop(c);
        return 1;
    }
    int sig;
    sigwait(&set, &sig);
    ts_cluster_stop(c);
    return 0;
}
