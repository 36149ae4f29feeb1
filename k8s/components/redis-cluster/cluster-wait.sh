#!/bin/sh
# The init container of every croupier pod on Redis Cluster (k8s/components/redis-cluster):
# waits until one of the seeds (SEEDS: IP:PORT,... as --redis-cluster takes them) says
# cluster_state:ok, so that the croupier process, which refuses to start while slots are
# unserved (docs/deploy.md "The binaries on a cluster"), starts once the cluster is formed
# instead of restarting in a back-off loop meanwhile. Gives up after WAIT_S (600) with exit 1
# (the pod then starts the init container again). tests/k8s/redis_cluster.sh runs it.
set -eu
seeds=${SEEDS:?SEEDS: IP:PORT,... of the cluster}
wait_s=${WAIT_S:-600}
start=$(date +%s)
told=$start
last=""
while :; do
    for s in $(echo "$seeds" | tr ',' ' '); do
        st=$(timeout 3 redis-cli -h "${s%:*}" -p "${s##*:}" cluster info 2>/dev/null |
            tr -d '\r' | sed -n 's/^cluster_state://p') || st=""
        if [ "$st" = ok ]; then
            echo "cluster-wait: $s says cluster_state:ok after $(($(date +%s) - start)) s" >&2
            exit 0
        fi
        last="$s: ${st:-no answer}"
    done
    if [ $(($(date +%s) - start)) -ge "$wait_s" ]; then
        echo "cluster-wait: no seed says cluster_state:ok after ${wait_s} s (last: $last)" >&2
        exit 1
    fi
    if [ $(($(date +%s) - told)) -ge 30 ]; then
        echo "cluster-wait: waiting ($last)" >&2
        told=$(date +%s)
    fi
    sleep 2
done
