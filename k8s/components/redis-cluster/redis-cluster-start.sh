#!/bin/sh
# Starts one pod of the Redis Cluster StatefulSet (k8s/components/redis-cluster), then runs
# redis-server with the StatefulSet's own arguments ("$@") in cluster mode.
#
# Every node announces its pod IP (croupier takes IP literals only, docs/deploy.md "Redis
# Cluster: the client") and its stable DNS name (cluster-announce-hostname: Redis 7.0 keeps it
# beside each node's address in nodes.conf, and gossips it). A pod that restarts gets a new IP:
# the other nodes learn it when it pings them, since it still knows their addresses. When every
# pod restarts at once (a whole-cluster restart, a node pool replaced) every address in every
# nodes.conf is stale and no node could reach another, so before redis-server starts this script
# rewrites nodes.conf: its own line gets POD_IP, every other node's line the address its DNS
# name resolves to now (waiting up to RESOLVE_WAIT_S for names not published yet; a name still
# unresolved keeps its last address, and gossip from the nodes that do connect corrects it).
#
# Environment: POD_IP (downward API), HOSTNAME (the pod's name), HEADLESS (the governing
# Service: the announced name is $HOSTNAME.$HEADLESS), DATA_DIR (/data, where nodes.conf is
# kept), RESOLVE (the command printing "IP NAME..." for a name, `getent hosts`),
# RESOLVE_WAIT_S (10). tests/k8s/redis_cluster.sh runs this script on loopback (DATA_DIR,
# RESOLVE and HOSTNAME set by the test).
# shellcheck disable=SC3028 # HOSTNAME: the pod's name, in every container's environment
set -eu
: "${POD_IP:?}" "${HOSTNAME:?}"
dir=${DATA_DIR:-/data}
name=${ANNOUNCE_HOSTNAME:-$HOSTNAME.${HEADLESS:?}}
wait_s=${RESOLVE_WAIT_S:-10}
conf=$dir/nodes.conf

resolve() { # name -> its first address, or nothing
    ${RESOLVE:-getent hosts} "$1" 2>/dev/null | awk 'NR == 1 { print $1 }'
}

if [ -s "$conf" ]; then
    map=$conf.names
    : >"$map"
    deadline=$(($(date +%s) + wait_s))
    # The other nodes' names: field 2 is ip:port@cport[,hostname]; "myself" is this pod.
    # shellcheck disable=SC2013 # host names: one word each
    for h in $(awk '$3 !~ /myself/ && split($2, a, ",") > 1 { print a[2] }' "$conf"); do
        while :; do
            ip=$(resolve "$h")
            [ -z "$ip" ] && [ "$(date +%s)" -lt "$deadline" ] && { sleep 1; continue; }
            break
        done
        if [ -n "$ip" ]; then
            echo "$h $ip" >>"$map"
        else
            echo "redis-cluster-start: $h does not resolve; its last address stays" >&2
        fi
    done
    awk -v self="$POD_IP" '
        NR == FNR { ip[$1] = $2; next }
        split($2, a, ",") >= 1 && match(a[1], /:[0-9]+@[0-9]+$/) {
            new = ""
            if ($3 ~ /myself/) new = self
            else if ((a[2] != "") && (a[2] in ip)) new = ip[a[2]]
            if (new != "" && new != substr(a[1], 1, RSTART - 1)) {
                printf "redis-cluster-start: %s (%s) now at %s\n", $1, (a[2] != "" ? a[2] : "myself"), new > "/dev/stderr"
                $2 = new substr(a[1], RSTART) (a[2] != "" ? "," a[2] : "")
            }
        }
        { print }' "$map" "$conf" >"$conf.new"
    mv "$conf.new" "$conf"
    rm -f "$map"
fi
echo "redis-cluster-start: $HOSTNAME starts as $name at $POD_IP" >&2
exec redis-server "$@" --cluster-enabled yes --cluster-config-file "$conf" \
    --cluster-announce-ip "$POD_IP" --cluster-announce-hostname "$name" \
    --cluster-preferred-endpoint-type ip
