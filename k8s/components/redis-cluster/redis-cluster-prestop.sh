#!/bin/sh
# The preStop hook of a Redis Cluster node (k8s/components/redis-cluster): a master hands its
# slots to one of its replicas before it stops (CLUSTER FAILOVER, sent to the replica: the
# replica catches up with the master's writes first, then takes over; no write is lost and the
# slots are never unserved), so a rolling update or a drained Kubernetes node costs the clients
# a MOVED per slot, not a failure detection of NODE_TIMEOUT_MS with the slots down meanwhile.
# A replica, a master without a replica that is up, or a handover not seen within
# FAILOVER_WAIT_S (15) leaves the node to stop as it is (the cluster then fails over by itself).
# Always exits 0: the pod is stopping either way. tests/k8s/redis_cluster.sh runs it (REDIS_PORT
# and HOST set by the test).
set -u
port=${REDIS_PORT:-6379}
host=${HOST:-127.0.0.1}
wait_s=${FAILOVER_WAIT_S:-15}
say() { echo "redis-cluster-prestop: $*" >&2; }
me() { timeout 3 redis-cli -h "$host" -p "$port" "$@" 2>/dev/null | tr -d '\r'; }

nodes=$(me cluster nodes)
id=$(echo "$nodes" | awk '$3 ~ /myself/ { print $1 }')
case $(echo "$nodes" | awk '$3 ~ /myself/ { print $3 }') in
*master*) ;;
*) say "not a master: nothing to hand over"; exit 0 ;;
esac
# A replica of this master that is not failing: field 4 is its master's id.
rep=$(echo "$nodes" | awk -v m="$id" '$4 == m && $3 !~ /fail/ && $8 == "connected" { split($2, a, "@"); print a[1]; exit }')
if [ -z "$id" ] || [ -z "$rep" ]; then
    say "master ${id:-?} has no replica up: it stops with its slots (the cluster fails over, or waits)"
    exit 0
fi
say "master $id hands its slots to its replica $rep"
if ! timeout 3 redis-cli -h "${rep%:*}" -p "${rep##*:}" cluster failover 2>&1 | grep -q '^OK'; then
    say "CLUSTER FAILOVER refused by $rep: it stops with its slots"
    exit 0
fi
start=$(date +%s)
while [ $(($(date +%s) - start)) -lt "$wait_s" ]; do
    if [ "$(me role | head -n 1)" = slave ]; then
        say "handed over in $(($(date +%s) - start)) s: $rep is the master"
        exit 0
    fi
    sleep 0.2
done
say "no handover seen within ${wait_s} s: it stops as it is"
exit 0
