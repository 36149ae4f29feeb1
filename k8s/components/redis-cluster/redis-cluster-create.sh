#!/bin/sh
# Forms the Redis Cluster of k8s/components/redis-cluster once (the Job croupier-redis-cluster-
# create runs it): waits until every node answers, then `redis-cli --cluster create` with
# REPLICAS_PER_MASTER replicas for each master, then waits until every node says
# cluster_state:ok. Idempotent: when any node already has all 16384 slots assigned the cluster
# exists and nothing is done (a later run of the Job, an apply of the manifests again). It
# refuses (exit 1, one line) nodes that are neither all empty nor a formed cluster (a creation
# cut short, a node with data): that needs an operator (docs/deploy.md "Redis Cluster on
# Kubernetes").
#
# Environment: NODES (HOST:PORT of every node, space-separated; host names are resolved by
# asking each node its own announced address), REPLICAS_PER_MASTER (1), WAIT_S (600: how long
# to wait for the nodes, then for cluster_state:ok). Exit 0 = formed (now or before), 1 = not,
# 2 = bad configuration. tests/k8s/redis_cluster.sh runs it on loopback.
set -eu
nodes=${NODES:?NODES: the HOST:PORT of every node}
per=${REPLICAS_PER_MASTER:-1}
wait_s=${WAIT_S:-600}
say() { echo "redis-cluster-create: $*" >&2; }

case $per in '' | *[!0-9]*) say "REPLICAS_PER_MASTER '$per' is not a number"; exit 2 ;; esac
n=0
for hp in $nodes; do
    case $hp in
    ?*:[0-9]*) case ${hp##*:} in *[!0-9]*) say "'$hp' is not HOST:PORT"; exit 2 ;; esac ;;
    *) say "'$hp' is not HOST:PORT"; exit 2 ;;
    esac
    n=$((n + 1))
done
if [ $((n % (per + 1))) -ne 0 ] || [ $((n / (per + 1))) -lt 3 ]; then
    say "$n nodes: a cluster needs 3 masters or more, each with $per replica(s): a multiple of $((per + 1)), at least $((3 * (per + 1)))"
    exit 2
fi

cli() { # HOST:PORT command... (timeout 5 s; nothing on failure)
    hp=$1
    shift
    timeout 5 redis-cli -h "${hp%:*}" -p "${hp##*:}" "$@" 2>/dev/null | tr -d '\r'
}
field() { # HOST:PORT name: a field of CLUSTER INFO
    cli "$1" cluster info | sed -n "s/^$2://p"
}

deadline=$(($(date +%s) + wait_s))
told=$(date +%s)
while :; do
    down=""
    for hp in $nodes; do
        assigned=$(field "$hp" cluster_slots_assigned)
        if [ -z "$assigned" ]; then
            down="$down $hp"
        elif [ "$assigned" = 16384 ]; then
            say "already formed: $hp has all 16384 slots assigned (cluster_state:$(field "$hp" cluster_state)); nothing to do"
            exit 0
        fi
    done
    [ -z "$down" ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then
        say "gave up after ${wait_s} s: no answer to CLUSTER INFO from$down (a node not in cluster mode answers an error)"
        exit 1
    fi
    if [ $(($(date +%s) - told)) -ge 30 ]; then
        say "waiting for$down"
        told=$(date +%s)
    fi
    sleep 2
done

# Every node answers and none has the whole map: they must all be empty and alone.
addrs=""
for hp in $nodes; do
    known=$(field "$hp" cluster_known_nodes)
    assigned=$(field "$hp" cluster_slots_assigned)
    keys=$(cli "$hp" dbsize)
    if [ "$known" != 1 ] || [ "$assigned" != 0 ] || [ "$keys" != 0 ]; then
        say "refused: $hp is not an empty lone node (known nodes $known, slots assigned $assigned, keys $keys) and no node has the whole map: a creation cut short? check with redis-cli --cluster check $hp (docs/deploy.md)"
        exit 1
    fi
    # Its own announced address (an IP literal: CLUSTER MEET takes no host names in Redis 7.0).
    me=$(cli "$hp" cluster nodes | awk '$3 ~ /myself/ { split($2, a, "@"); print a[1] }')
    case $me in
    :* | '') say "$hp does not know its own address (run it with --cluster-announce-ip)"; exit 1 ;;
    esac
    addrs="$addrs $me"
done
say "forming a cluster of $n nodes ($((n / (per + 1))) masters, $per replica(s) each):$addrs"
# shellcheck disable=SC2086 # addrs is a list
if ! redis-cli --cluster create $addrs --cluster-replicas "$per" --cluster-yes </dev/null >&2; then
    say "redis-cli --cluster create failed"
    exit 1
fi
while :; do
    bad=""
    for hp in $nodes; do
        [ "$(field "$hp" cluster_state)" = ok ] || bad="$bad $hp"
    done
    [ -z "$bad" ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then
        say "formed, but not cluster_state:ok after ${wait_s} s on$bad"
        exit 1
    fi
    sleep 1
done
say "formed: $n nodes, every one says cluster_state:ok"
