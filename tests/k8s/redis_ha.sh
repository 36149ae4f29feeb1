#!/usr/bin/env bash
# tests/k8s/redis_ha.sh SOURCE_ROOT -- runs the start scripts of k8s/components/redis-ha on
# loopback with real redis-server and redis-sentinel processes, the way the pods run them: three
# Redis "pods" (pod 0 first master, 1 and 2 replicas) and three sentinels (quorum 2); then pod 0
# is SIGKILLed, a replica must be promoted, pod 0 started again by its script must come back as a
# replica of the new master, and a sentinel started again must monitor the new master.
# Exit 0 = passed, 1 = failed (the reason printed), 77 = skipped (no redis-server).
set -euo pipefail
SRC=$(cd "${1:?usage: redis_ha.sh SOURCE_ROOT}" && pwd)
HA=$SRC/k8s/components/redis-ha
for t in redis-server redis-cli timeout; do
    command -v "$t" >/dev/null || { echo "redis_ha: SKIP: $t not installed"; exit 77; }
done
TMP=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
fail() {
    echo "redis_ha: FAIL: $*"
    for f in "$TMP"/*.log; do echo "--- $f"; tail -n 20 "$f"; done
    exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
RP=() SP=()
for i in 0 1 2; do RP[i]=$(free_port); SP[i]=$(free_port); done
SENTINELS="127.0.0.1:${SP[0]} 127.0.0.1:${SP[1]} 127.0.0.1:${SP[2]}"
export POD_IP=127.0.0.1 MASTER_NAME=croupier SENTINELS FIRST_MASTER="127.0.0.1 ${RP[0]}"
declare -A RPID SPID

start_redis() { # ordinal
    local i=$1
    mkdir -p "$TMP/r$i"
    HOSTNAME=croupier-redis-$i REDIS_PORT=${RP[i]} sh "$HA/redis-start.sh" --port "${RP[i]}" \
        --bind 127.0.0.1 --save "" --appendonly no --dir "$TMP/r$i" --repl-diskless-sync-delay 0 \
        >>"$TMP/redis-$i.log" 2>&1 &
    RPID[$i]=$!
    pids+=("$!")
    for _ in $(seq 100); do redis-cli -p "${RP[i]}" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
    fail "redis pod $i did not start"
}
start_sentinel() { # ordinal
    local i=$1
    mkdir -p "$TMP/s$i"
    HOSTNAME=croupier-sentinel-$i SENTINEL_PORT=${SP[i]} CONF_DIR=$TMP/s$i DOWN_AFTER_MS=1000 \
        sh "$HA/sentinel-start.sh" >>"$TMP/sentinel-$i.log" 2>&1 &
    SPID[$i]=$!
    pids+=("$!")
    for _ in $(seq 100); do redis-cli -p "${SP[i]}" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
    fail "sentinel $i did not start"
}
field() { redis-cli -p "$1" info replication | tr -d '\r' | sed -n "s/^$2://p"; }
master_of() { redis-cli -p "$1" --raw sentinel get-master-addr-by-name croupier | tr '\n' ' '; }
until_true() { # seconds, command...
    local n=$(( $1 * 10 )); shift
    for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
    return 1
}
sees_all() {
    for i in 0 1 2; do
        local t
        t=$(redis-cli -p "${SP[i]}" sentinel master croupier | tr -d '\r' | tr '\n' ' ')
        [[ $t == *"num-slaves 2 "* && $t == *"num-other-sentinels 2 "* ]] || return 1
    done
}

for i in 0 1 2; do start_redis "$i"; done
[ "$(field "${RP[0]}" role)" = master ] || fail "pod 0 is not the first master"
for i in 1 2; do
    [ "$(field "${RP[i]}" master_port)" = "${RP[0]}" ] || fail "pod $i does not replicate pod 0"
done
for i in 0 1 2; do start_sentinel "$i"; done
until_true 30 sees_all || fail "the sentinels never saw both replicas and each other"
echo "redis_ha: 3 pods and 3 sentinels up, pod 0 is the master"

{ kill -9 "${RPID[0]}" && wait "${RPID[0]}"; } 2>/dev/null || true
newport() { local m; m=$(master_of "${SP[0]}"); [[ $m == "127.0.0.1 "* && $m != "127.0.0.1 ${RP[0]} " ]]; }
until_true 30 newport || fail "no failover after pod 0 died"
NEW=$(master_of "${SP[0]}" | cut -d' ' -f2)
[ "$(field "$NEW" role)" = master ] || fail "the promoted node $NEW is not a master"
echo "redis_ha: pod 0 killed, the node on port $NEW was promoted"

start_redis 0
rejoined() { [ "$(field "${RP[0]}" role)" = slave ] && [ "$(field "${RP[0]}" master_port)" = "$NEW" ]; }
until_true 10 rejoined || fail "pod 0 did not come back as a replica of $NEW"
echo "redis_ha: pod 0 restarted by its script as a replica of $NEW"

{ kill -9 "${SPID[2]}" && wait "${SPID[2]}"; } 2>/dev/null || true
rm -rf "$TMP/s2"
start_sentinel 2
[ "$(master_of "${SP[2]}")" = "127.0.0.1 $NEW " ] || fail "a restarted sentinel does not monitor $NEW"
echo "redis_ha: a restarted sentinel monitors the new master: passed"
