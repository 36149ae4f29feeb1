#!/bin/sh
# Starts one pod of the Redis StatefulSet (k8s/components/redis-ha) as the master or as a
# replica, then runs redis-server with the StatefulSet's own arguments ("$@").
#
# The master is whoever the sentinels name (the first of them that answers); on the very first
# start of the set, when no sentinel knows it yet, pod 0 is the master and the others replicate
# it (FIRST_MASTER: pod 0's DNS name). A pod the sentinels name as the master starts as the
# master again. Every pod announces its pod IP, so the sentinels and croupier see IP literals
# only (docs/deploy.md "Redis Sentinel in Kubernetes"). tests/k8s/redis_ha.sh runs this script
# on loopback (REDIS_PORT, SENTINELS, FIRST_MASTER and HOSTNAME set by the test).
set -eu
: "${POD_IP:?}" "${MASTER_NAME:?}"
port=${REDIS_PORT:-6379}
sentinels=${SENTINELS:-croupier-sentinel-0:26379 croupier-sentinel-1:26379 croupier-sentinel-2:26379}
first=${FIRST_MASTER:-${HOSTNAME%-*}-0.${HEADLESS:?} 6379}
master=""
for s in $sentinels; do
    a=$(timeout 2 redis-cli -h "${s%:*}" -p "${s##*:}" --raw \
        sentinel get-master-addr-by-name "$MASTER_NAME" 2>/dev/null | tr '\n' ' ') || a=""
    case "$a" in
    *[0-9]*' '[0-9]*) master=${a% } && break ;;
    esac
done
if [ -z "$master" ]; then
    case "$HOSTNAME" in
    *-0) master="$POD_IP $port" ;;
    *) master=$first ;;
    esac
fi
if [ "$master" = "$POD_IP $port" ]; then
    echo "redis-start: $HOSTNAME starts as the master of $MASTER_NAME" >&2
    exec redis-server "$@" --replica-announce-ip "$POD_IP"
fi
echo "redis-start: $HOSTNAME starts as a replica of $master" >&2
# shellcheck disable=SC2086 # master is "HOST PORT"
exec redis-server "$@" --replica-announce-ip "$POD_IP" --replicaof $master
