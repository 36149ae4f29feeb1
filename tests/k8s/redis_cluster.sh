#!/usr/bin/env bash
# tests/k8s/redis_cluster.sh SOURCE_ROOT [CROUPIER_CTL] -- runs the scripts of
# k8s/components/redis-cluster on loopback with real redis-server processes, the way the pods and
# the Job run them: six "pods" started by redis-cluster-start.sh, each on an address of its own in
# 127.0.0.0/8 (its pod IP) and a name a test resolver maps to it (the headless Service's DNS).
# redis-cluster-create.sh forms 3 masters and 3 replicas, a second run does nothing;
# cluster-wait.sh sees the cluster; the preStop script hands a master's slots to its replica (and
# leaves a replica alone); a replica restarted on a new address is seen there by every node; then
# every pod is stopped and started again on a NEW address (a whole-cluster restart) and the start
# script's rewrite of nodes.conf must bring the cluster back (cluster_state:ok, every node seen at
# its new address, the keys still there). With CROUPIER_CTL (the build's croupier-ctl), croupier
# takes the cluster by its six seeds as the pods do (--redis-cluster: every slot served, IP
# literals in the map), refused before it is formed, taken after, and after the restart. Bad
# input: a node count that is no cluster, a bad HOST:PORT, nodes already joined (a creation cut
# short), cluster-wait before the cluster.
# Exit 0 = passed, 1 = failed (the reason printed), 77 = skipped (no redis-server).
set -euo pipefail
SRC=$(cd "${1:?usage: redis_cluster.sh SOURCE_ROOT [CROUPIER_CTL]}" && pwd)
CTL=${2:-}
CL=$SRC/k8s/components/redis-cluster
for t in redis-server redis-cli timeout python3; do
    command -v "$t" >/dev/null || { echo "redis_cluster: SKIP: $t not installed"; exit 77; }
done
TMP=$(mktemp -d)
declare -A PID
cleanup() {
    exec 2>/dev/null # bash's "Killed" notices
    for p in "${PID[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
fail() {
    echo "redis_cluster: FAIL: $*"
    for f in "$TMP"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 8 "$f"; }; done
    exit 1
}
# Six ports whose cluster bus port (+10000) is free too.
mapfile -t PORT < <(python3 - <<'PY'
import random, socket
got = []
while len(got) < 6:
    p = random.randint(20000, 55000)
    try:
        for q in (p, p + 10000):
            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
    except OSError:
        continue
    if p not in got:
        got.append(p)
print("\n".join(map(str, got)))
PY
)
NET=127.0.$((RANDOM % 200 + 20))
# The scripts run in the redis:7.0.15-alpine image: busybox sh and busybox awk, sed, date,
# timeout... When busybox is here they run the same way (else the system's sh and tools).
RUN=(sh)
if command -v busybox >/dev/null; then
    mkdir -p "$TMP/bb"
    for a in sh awk sed tr date timeout sleep grep head cat mv rm; do ln -s "$(command -v busybox)" "$TMP/bb/$a"; done
    RUN=(env "PATH=$TMP/bb:$PATH" busybox sh)
fi
declare -A IP
: >"$TMP/hosts"
# The resolver the start script is given (RESOLVE): like `getent hosts NAME`, from $TMP/hosts.
cat >"$TMP/resolve" <<RES
#!/bin/sh
awk -v n="\$1" '\$2 == n { print; found = 1 } END { exit !found }' "$TMP/hosts"
RES
chmod +x "$TMP/resolve"

start_pod() { # ordinal, last octet of its address
    local i=$1
    IP[$i]=$NET.$2
    grep -v " node$i.test\$" "$TMP/hosts" >"$TMP/hosts.new" || true
    echo "${IP[$i]} node$i.test" >>"$TMP/hosts.new"
    mv "$TMP/hosts.new" "$TMP/hosts"
    mkdir -p "$TMP/d$i"
    POD_IP=${IP[$i]} HOSTNAME=node$i HEADLESS=test DATA_DIR=$TMP/d$i RESOLVE=$TMP/resolve \
        RESOLVE_WAIT_S=2 "${RUN[@]}" "$CL/redis-cluster-start.sh" --port "${PORT[i]}" --bind "${IP[$i]}" \
        --dir "$TMP/d$i" --save "" --appendonly yes --cluster-node-timeout 1000 \
        >>"$TMP/pod-$i.log" 2>&1 &
    PID[$i]=$!
}
up() { redis-cli -h "${IP[$1]}" -p "${PORT[$1]}" ping >/dev/null 2>&1; }
until_true() { # seconds, command...
    local n=$(($1 * 10))
    shift
    for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
    return 1
}
info() { redis-cli -h "${IP[$1]}" -p "${PORT[$1]}" cluster info | tr -d '\r' | sed -n "s/^$2://p"; }
all_ok() { for i in 0 1 2 3 4 5; do [ "$(info "$i" cluster_state)" = ok ] || return 1; done; }
seeds() { local s=""; for i in 0 1 2 3 4 5; do s="$s,${IP[$i]}:${PORT[i]}"; done; echo "${s#,}"; }
ctl_servers() { # croupier-ctl on the cluster by the six seeds, as the pods take it
    [ -n "$CTL" ] || return 0
    local out rc
    set +e
    out=$("$CTL" --redis-cluster="$(seeds)" servers 2>&1)
    rc=$?
    set -e
    [ $rc -eq 0 ] || fail "croupier-ctl --redis-cluster=$(seeds) servers: status $rc: $out"
    echo "redis_cluster: croupier-ctl servers on the cluster by its six seeds: status 0"
}
nodes_list() { local s=""; for i in 0 1 2 3 4 5; do s="$s ${IP[$i]}:${PORT[i]}"; done; echo "${s# }"; }

# --- bad input first: nothing runs yet
set +e
out=$(NODES="$NET.1:1 $NET.2:2 $NET.3:3 $NET.4:4 $NET.5:5" "${RUN[@]}" "$CL/redis-cluster-create.sh" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && [[ $out == *"5 nodes: a cluster needs 3 masters"* ]] || fail "5 nodes accepted (status $rc: $out)"
set +e
out=$(NODES="$NET.1:x" "${RUN[@]}" "$CL/redis-cluster-create.sh" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && [[ $out == *"is not HOST:PORT"* ]] || fail "a bad HOST:PORT accepted (status $rc: $out)"

for i in 0 1 2 3 4 5; do start_pod "$i" $((10 + i)); done
for i in 0 1 2 3 4 5; do until_true 5 up "$i" || fail "pod $i did not start"; done
grep -q "starts as node0.test at ${IP[0]}" "$TMP/pod-0.log" || fail "pod 0 did not say what it announces"

# Two nodes that know each other (a creation cut short): refused, nothing formed.
redis-cli -h "${IP[5]}" -p "${PORT[5]}" cluster meet "${IP[4]}" "${PORT[4]}" >/dev/null
met() { [ "$(info 5 cluster_known_nodes)" = 2 ]; }
until_true 5 met || fail "CLUSTER MEET of pods 4 and 5 did not take"
set +e
out=$(NODES="$(nodes_list)" WAIT_S=10 "${RUN[@]}" "$CL/redis-cluster-create.sh" 2>&1); rc=$?
set -e
[ $rc -eq 1 ] && [[ $out == *"refused: "*" is not an empty lone node (known nodes 2"* ]] ||
    fail "nodes already joined were not refused (status $rc: $out)"
[ "$(info 0 cluster_known_nodes)" = 1 ] || fail "the refused creation joined nodes"
for i in 4 5; do redis-cli -h "${IP[$i]}" -p "${PORT[i]}" cluster reset hard >/dev/null; done
alone() { [ "$(info 4 cluster_known_nodes)" = 1 ] && [ "$(info 5 cluster_known_nodes)" = 1 ]; }
until_true 5 alone || fail "CLUSTER RESET of pods 4 and 5 did not take"

# cluster-wait: no seed is a formed cluster yet.
set +e
out=$(SEEDS="${IP[0]}:${PORT[0]},${IP[1]}:${PORT[1]}" WAIT_S=1 "${RUN[@]}" "$CL/cluster-wait.sh" 2>&1); rc=$?
set -e
[ $rc -eq 1 ] && [[ $out == *"no seed says cluster_state:ok"*"fail"* ]] || fail "cluster-wait passed before the cluster was formed (status $rc: $out)"

if [ -n "$CTL" ]; then
    set +e
    out=$("$CTL" --redis-cluster="$(seeds)" servers 2>&1); rc=$?
    set -e
    [ $rc -ne 0 ] && [[ $out == *"slots not served"* ]] ||
        fail "croupier-ctl took the unformed nodes (status $rc: $out)"
fi
t0=$SECONDS
NODES="$(nodes_list)" WAIT_S=30 "${RUN[@]}" "$CL/redis-cluster-create.sh" >"$TMP/create-1.log" 2>&1 ||
    fail "redis-cluster-create.sh failed: $(tail -n 5 "$TMP/create-1.log")"
grep -q "formed: 6 nodes, every one says cluster_state:ok" "$TMP/create-1.log" || fail "no 'formed' line"
all_ok || fail "cluster_state is not ok on every node after the create script"
masters=0 replicas=0
for i in 0 1 2 3 4 5; do
    role=$(redis-cli -h "${IP[$i]}" -p "${PORT[i]}" role | head -n 1)
    case $role in master) masters=$((masters + 1)) ;; slave) replicas=$((replicas + 1)) ;; esac
done
[ $masters -eq 3 ] && [ $replicas -eq 3 ] || fail "$masters masters and $replicas replicas, not 3 and 3"
[ "$(info 0 cluster_size)" = 3 ] && [ "$(info 0 cluster_known_nodes)" = 6 ] || fail "cluster_size/known_nodes not 3/6"
echo "redis_cluster: 6 pods formed 3 masters + 3 replicas in $((SECONDS - t0)) s"

# Idempotent: a second run changes nothing. Node 0's table first shows the three replicas as
# such (every node knows its own role at once, the others learn it by gossip: under load node 0
# still listed six masters when the table was first read, and the "after" differed by that).
settled() {
    [ "$(redis-cli -h "${IP[0]}" -p "${PORT[0]}" cluster nodes | awk '$3 ~ /slave/' | wc -l)" = 3 ]
}
until_true 10 settled || fail "node 0 does not list 3 replicas within 10 s"
epoch=$(info 0 cluster_current_epoch)
before=$(redis-cli -h "${IP[0]}" -p "${PORT[0]}" cluster nodes | awk '{print $1, $3, $4}' | sort)
NODES="$(nodes_list)" WAIT_S=30 "${RUN[@]}" "$CL/redis-cluster-create.sh" >"$TMP/create-2.log" 2>&1 ||
    fail "the second run failed: $(cat "$TMP/create-2.log")"
grep -q "already formed" "$TMP/create-2.log" || fail "the second run did not say 'already formed'"
grep -q "forming" "$TMP/create-2.log" && fail "the second run formed again"
[ "$(info 0 cluster_current_epoch)" = "$epoch" ] || fail "the second run changed the config epoch"
after=$(redis-cli -h "${IP[0]}" -p "${PORT[0]}" cluster nodes | awk '{print $1, $3, $4}' | sort)
[ "$before" = "$after" ] || fail "the second run changed the nodes: $before / $after"
echo "redis_cluster: a second run of the create script did nothing"

SEEDS="${IP[3]}:${PORT[3]},${IP[0]}:${PORT[0]}" WAIT_S=5 "${RUN[@]}" "$CL/cluster-wait.sh" 2>"$TMP/wait.log" ||
    fail "cluster-wait did not see the formed cluster: $(cat "$TMP/wait.log")"
# The slot map croupier reads gives the announced IPs (IP literals, no host names).
# (replicas once their first sync is done).
in_slots() {
    local slots
    slots=$(redis-cli -h "${IP[1]}" -p "${PORT[1]}" cluster slots | tr -d '\r')
    for i in 0 1 2 3 4 5; do grep -qx "${IP[$i]}" <<<"$slots" || return 1; done
}
until_true 10 in_slots || fail "CLUSTER SLOTS does not give every pod's IP: $(redis-cli -h "${IP[1]}" -p "${PORT[1]}" cluster slots | tr '\n' ' ')"
for k in $(seq 1 30); do redis-cli -c -h "${IP[0]}" -p "${PORT[0]}" set "key:$k" "v$k" >/dev/null; done
ctl_servers

# preStop: a master hands its slots to its replica (CLUSTER FAILOVER) before it stops; a
# replica does nothing.
role_of() { redis-cli -h "${IP[$1]}" -p "${PORT[$1]}" role | head -n 1; }
M=""
R=""
for i in 0 1 2 3 4 5; do
    case $(role_of "$i") in master) [ -n "$M" ] || M=$i ;; slave) [ -n "$R" ] || R=$i ;; esac
done
out=$(REDIS_PORT=${PORT[M]} HOST=${IP[$M]} "${RUN[@]}" "$CL/redis-cluster-prestop.sh" 2>&1) ||
    fail "the preStop script failed on master pod $M: $out"
[[ $out == *"handed over in"* ]] || fail "master pod $M did not hand over: $out"
[ "$(role_of "$M")" = slave ] || fail "pod $M is still a master after its preStop"
until_true 10 all_ok || fail "cluster_state not ok after the handover"
for k in $(seq 1 30); do
    [ "$(redis-cli -c -h "${IP[$M]}" -p "${PORT[M]}" get "key:$k")" = "v$k" ] || fail "key:$k lost in the handover"
done
echo "redis_cluster: preStop on master pod $M: ${out##*: }"
out=$(REDIS_PORT=${PORT[R]} HOST=${IP[$R]} "${RUN[@]}" "$CL/redis-cluster-prestop.sh" 2>&1) ||
    fail "the preStop script failed on replica pod $R: $out"
[[ $out == *"not a master"* ]] || fail "the preStop script on replica pod $R: $out"

seen() { # every node sees every other at its current address, none failing
    for i in 0 1 2 3 4 5; do
        local t
        t=$(redis-cli -h "${IP[$i]}" -p "${PORT[i]}" cluster nodes)
        for j in 0 1 2 3 4 5; do [[ $t == *" ${IP[$j]}:${PORT[j]}@"* ]] || return 1; done
        [[ $t != *fail* ]] || return 1
    done
}

# One pod restarted on a new address (a pod rescheduled): the others learn it from its pings.
redis-cli -h "${IP[$R]}" -p "${PORT[R]}" shutdown >/dev/null 2>&1 || true
wait "${PID[$R]}" 2>/dev/null || true
start_pod "$R" $((60 + R))
until_true 5 up "$R" || fail "pod $R did not start again"
until_true 15 seen || fail "pod $R on its new address ${IP[$R]} is not seen by every node"
until_true 10 all_ok || fail "cluster_state not ok after pod $R moved"
echo "redis_cluster: pod $R restarted on a new address, seen there by every node"

# A whole-cluster restart on new addresses: every nodes.conf is stale, the start script
# rewrites it from the names.
for i in 0 1 2 3 4 5; do redis-cli -h "${IP[$i]}" -p "${PORT[i]}" shutdown >/dev/null 2>&1 || true; done
for i in 0 1 2 3 4 5; do wait "${PID[$i]}" 2>/dev/null || true; done
: >"$TMP/hosts" # the pods are gone: so are their names (each comes back with its new pod)
for i in 0 1 2 3 4 5; do start_pod "$i" $((110 + i)); done
for i in 0 1 2 3 4 5; do until_true 5 up "$i" || fail "pod $i did not start again"; done
t0=$SECONDS
until_true 20 all_ok || fail "the cluster did not come back after every pod moved to a new address"
grep -q "now at ${IP[1]}" "$TMP/pod-0.log" || fail "pod 0's start script did not rewrite pod 1's address"
until_true 10 seen || fail "not every node sees every other at its new address"
for k in $(seq 1 30); do
    [ "$(redis-cli -c -h "${IP[2]}" -p "${PORT[2]}" get "key:$k")" = "v$k" ] || fail "key:$k lost in the restart"
done
echo "redis_cluster: every pod restarted on a new address, cluster_state:ok on all 6 after $((SECONDS - t0)) s, 30 keys kept"
ctl_servers
NODES="$(nodes_list)" WAIT_S=30 "${RUN[@]}" "$CL/redis-cluster-create.sh" 2>&1 | grep -q "already formed" ||
    fail "the create script after the restart did not say 'already formed'"
echo "redis_cluster: passed"
