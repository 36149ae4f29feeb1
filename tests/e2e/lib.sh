# shellcheck shell=bash
# tests/e2e/lib.sh -- helpers shared by the end-to-end scripts (sourced, bash): a real
# redis-server, croupier-game / croupier-gate "pods" on loopback, and kubelet's termination of a
# pod (preStop under busybox, SIGTERM, grace period, SIGKILL). Everything lives under $E2E_DIR
# and listens on 127.0.0.1 only. Every process started here is stopped by e2e_cleanup (trap).
#
# Needs: BUILD (the meson build dir), SRC (the source tree).

E2E_PIDS=()
E2E_WARNINGS=()

# Request budgets of the gateways started here. These scripts run a whole cluster (Redis, up to
# 10 pods, a few hundred bots) on the test machine's 2 cores, next to whatever else runs there;
# on such a host the action latency's p99 reaches 1-2 s, and the production budgets (action
# 300 ms, join/resume 800 ms, docs/gateway.md) would turn CPU starvation into DEADLINE_EXCEEDED
# answers that have nothing to do with what these tests check (nothing lost, torn or applied
# twice across drains and rollouts). The deadline paths themselves are tested with the default
# budgets in tests/unit/test_gate.c. Each stays below croupier-bot's attempt timeout (3 s).
# Override by exporting the variables.
export CROUPIER_BUDGET_ACTION_MS=${CROUPIER_BUDGET_ACTION_MS:-1500}
export CROUPIER_BUDGET_JOIN_MS=${CROUPIER_BUDGET_JOIN_MS:-2500}
export CROUPIER_BUDGET_LEAVE_MS=${CROUPIER_BUDGET_LEAVE_MS:-1500}
export CROUPIER_BUDGET_RESUME_MS=${CROUPIER_BUDGET_RESUME_MS:-2500}

e2e_log() {
    echo "[$(date +%H:%M:%S.%3N)] $*" >&2
}

# e2e_fail_detail FILE [PATTERN] [N]: after a failed check, the last N (5) lines of FILE that
# match PATTERN (every line), each as a "FAIL detail:" line, so a CI log that keeps only the
# failures' lines still shows the cause (a bot's bot_no_move, a pod's last words).
e2e_fail_detail() {
    [ -s "$1" ] || return 0
    grep -a -E -- "${2:-.}" "$1" | tail -n "${3:-5}" | cut -c1-400 | while IFS= read -r l; do
        e2e_log "FAIL detail ($(basename "$1")): $l"
    done
}

# A bot fleet's torn rounds, for a failed "torn games = 0": each as the report lists it (bot,
# desk, round id, why) and the bot log's last lines about that bot or round (REPORT LOG).
e2e_torn_detail() {
    [ -s "$1" ] || return 0
    python3 -c '
import json, sys
for t in json.load(open(sys.argv[1])).get("torn_rounds", []):
    print("%s\t%s\t%s\t%s" % (t.get("bot"), t.get("desk"), t.get("round_id"), t.get("why")))
' "$1" 2>/dev/null | head -n 5 | while IFS=$'\t' read -r bot desk rid why; do
        e2e_log "FAIL detail ($(basename "$1")): torn round $rid of bot $bot at desk $desk: $why"
        [ -n "$rid" ] && e2e_fail_detail "$2" "$rid" 8
    done
}

# Tournaments (docs/tournaments.md), for the scripts that set TOUR_ID: a field of its meta hash;
# waiting up to SECONDS for a status; the tables a game pod hosts now (claimed minus let go, from
# its log).
e2e_tour_meta() { e2e_redis hget "$(e2e_tour_key "$TOUR_ID" meta)" "$1"; }
e2e_tour_wait_status() { # STATUS SECONDS
    local end=$((SECONDS + $2))
    while [ "$(e2e_tour_meta status)" != "$1" ] && [ $SECONDS -lt $end ]; do sleep 0.5; done
    [ "$(e2e_tour_meta status)" = "$1" ]
}
e2e_tour_hosting() { # POD
    echo $(($(grep -c '"tk_tour_table_claimed"' "${POD_LOG[$1]}") - $(grep -c '"tk_tour_table_released"' "${POD_LOG[$1]}")))
}

e2e_die() {
    e2e_log "FAIL: $*"
    exit 1
}

# A port free on 127.0.0.1 a moment ago, picked at random below the kernel's ephemeral range:
# a port from bind(0) comes from the range every outgoing connection draws its local port from,
# so a client of a test running in parallel could take it before our server binds it
# (tests/support/support.c ts_free_port says the same).
e2e_free_port() {
    python3 -c '
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for port in ([random.randrange(min(lo - 10000, 20000), lo) for _ in range(64)] if lo > 12000 else []) + [0]:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        s.close()
        continue
    print(s.getsockname()[1])
    s.close()
    break
'
}

# HTTP GET with a timeout; prints the body; returns non-zero unless the status is 200.
# e2e_get PORT/PATH [TIMEOUT [HOST]] (HOST: 127.0.0.1).
e2e_get() {
    curl -fsS --max-time "${2:-2}" "http://${3:-127.0.0.1}:$1" 2>/dev/null
}

# e2e_wait_ready PORT SECONDS [HOST]: waits for /readyz 200.
e2e_wait_ready() {
    local deadline=$((SECONDS + $2))
    while ((SECONDS < deadline)); do
        e2e_get "$1/readyz" 1 "${3:-127.0.0.1}" >/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# e2e_redis_start: redis-server on a free port (REDIS_PORT, REDIS_PID), without persistence
# unless E2E_REDIS_AOF=1 (appendonly, appendfsync always: e2e_redis_restart, on the same port,
# reloads every acknowledged write).
e2e_redis_start() {
    REDIS_PORT=$(e2e_free_port)
    e2e_redis_run
}

e2e_redis_restart() {
    e2e_redis_run
}

e2e_redis_run() {
    mkdir -p "$E2E_DIR/redis"
    local persist=(--appendonly no)
    [ "${E2E_REDIS_AOF:-0}" = 1 ] && persist=(--appendonly yes --appendfsync always)
    # E2E_REDIS_BIND: more addresses to listen on (a network namespace the test made); Redis's
    # protected mode would refuse those peers (no password on a test Redis).
    local bind=(--bind 127.0.0.1)
    [ -n "${E2E_REDIS_BIND:-}" ] && bind=(--bind 127.0.0.1 "$E2E_REDIS_BIND" --protected-mode no)
    redis-server --port "$REDIS_PORT" "${bind[@]}" --save '' "${persist[@]}" \
        --dir "$E2E_DIR/redis" --maxmemory-policy noeviction >>"$E2E_DIR/redis.log" 2>&1 &
    E2E_PIDS+=($!)
    REDIS_PID=$!
    local i
    for i in $(seq 1 50); do
        redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    e2e_die "redis-server did not start (log $E2E_DIR/redis.log)"
}

e2e_redis() {
    redis-cli -p "$REDIS_PORT" "$@"
}

# ---- Redis with replicas and Sentinels (docs/deploy.md "Failover and durability") ----------
# e2e_ha_start: as k8s/components/redis-ha runs it, on loopback: the master of e2e_redis_start,
# two replicas and three Sentinels (quorum 2, down-after-milliseconds 1000, failover-timeout
# 3000). Sets E2E_HA_SENTINELS ("127.0.0.1:P,..." for --redis-sentinels; the master's name is
# "croupier"), E2E_HA_SPORTS (the sentinels' ports), E2E_HA_PID[port] (every node); from then on
# e2e_redis talks to the master of the moment. E2E_HA_NAP is the command that pauses between
# looks (default sleep; the demo passes its Ctrl-C-aware nap).
declare -A E2E_HA_PID
E2E_HA_SPORTS=()
E2E_HA_SENTINELS=""
E2E_HA_NAP=${E2E_HA_NAP:-sleep}
e2e_ha_node_start() { # PORT [MASTER_PORT]: a node, empty; a replica of MASTER_PORT when given
    local rep=() i
    [ -n "${2:-}" ] && rep=(--replicaof 127.0.0.1 "$2")
    rm -rf "$E2E_DIR/redis-$1"
    mkdir -p "$E2E_DIR/redis-$1"
    redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no --dir "$E2E_DIR/redis-$1" \
        --maxmemory-policy noeviction --repl-diskless-sync-delay 0 "${rep[@]}" \
        >>"$E2E_DIR/redis-$1.log" 2>&1 &
    E2E_PIDS+=($!)
    E2E_HA_PID[$1]=$!
    for i in $(seq 1 50); do
        redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    e2e_die "redis-server on port $1 did not start (log $E2E_DIR/redis-$1.log)"
}
e2e_ha_master_port() { # the master the sentinels name (empty when none answers)
    local s p
    for s in "${E2E_HA_SPORTS[@]}"; do
        p=$(redis-cli -p "$s" --raw sentinel get-master-addr-by-name croupier 2>/dev/null | sed -n 2p)
        [ -n "$p" ] && { echo "$p"; return; }
    done
}
e2e_ha_sees_all() { # every sentinel sees two replicas and the two other sentinels
    local s t
    for s in "${E2E_HA_SPORTS[@]}"; do
        t=$(redis-cli -p "$s" sentinel master croupier 2>/dev/null | tr '\n' ' ')
        [[ $t == *"num-slaves 2 "* && $t == *"num-other-sentinels 2 "* ]] || return 1
    done
}
e2e_ha_wait_all() { # e2e_ha_wait_all SECONDS: until e2e_ha_sees_all (status: whether it did)
    local i
    for i in $(seq 1 $(($1 * 10))); do
        e2e_ha_sees_all && return 0
        $E2E_HA_NAP 0.1
    done
    e2e_ha_sees_all
}
e2e_ha_start() {
    e2e_redis_start
    E2E_HA_PID[$REDIS_PORT]=$REDIS_PID
    local p i
    for i in 1 2; do e2e_ha_node_start "$(e2e_free_port)" "$REDIS_PORT"; done
    for i in 0 1 2; do
        p=$(e2e_free_port)
        mkdir -p "$E2E_DIR/sentinel-$i"
        printf 'port %s\nbind 127.0.0.1\nsentinel monitor croupier 127.0.0.1 %s 2\nsentinel down-after-milliseconds croupier 1000\nsentinel failover-timeout croupier 3000\n' \
            "$p" "$REDIS_PORT" >"$E2E_DIR/sentinel-$i/sentinel.conf"
        redis-server "$E2E_DIR/sentinel-$i/sentinel.conf" --sentinel >>"$E2E_DIR/sentinel-$i.log" 2>&1 &
        E2E_PIDS+=($!)
        E2E_HA_SPORTS+=("$p")
        E2E_HA_SENTINELS+="${E2E_HA_SENTINELS:+,}127.0.0.1:$p"
    done
    e2e_ha_wait_all 20 || e2e_die "the sentinels never saw both replicas and each other"
    # the master of the moment; while no sentinel names one (mid-failover), REDIS_PORT
    e2e_redis() {
        local p
        p=$(e2e_ha_master_port)
        redis-cli -p "${p:-$REDIS_PORT}" "$@"
    }
}
# e2e_ha_wait_promoted OLD_PORT: waits (10 s at most) until the sentinels name a master other
# than OLD_PORT, and prints it (nothing when none was promoted).
e2e_ha_wait_promoted() {
    local new i
    for i in $(seq 1 200); do
        new=$(e2e_ha_master_port)
        [ -n "$new" ] && [ "$new" != "$1" ] && { echo "$new"; return 0; }
        $E2E_HA_NAP 0.05
    done
    return 1
}
# e2e_ha_wait_settled NEW_PORT: waits (10 s at most) until every sentinel names NEW_PORT as the
# master and none has a failover in progress: a node brought back now joins as NEW_PORT's replica.
e2e_ha_wait_settled() {
    local i s t ok
    for i in $(seq 1 100); do
        ok=1
        for s in "${E2E_HA_SPORTS[@]}"; do
            t=$(redis-cli -p "$s" sentinel master croupier 2>/dev/null | tr '\n' ' ')
            [[ $t == *"port $1 "* && $t != *failover_in_progress* ]] || { ok=0; break; }
        done
        [ "$ok" = 1 ] && return 0
        $E2E_HA_NAP 0.1
    done
    return 1
}

# ---- Redis Cluster (docs/deploy.md "Redis Cluster: the client") -----------------------------
# e2e_cluster_start [MASTERS [REPLICAS]]: a real Redis Cluster on loopback, MASTERS (3) masters
# with REPLICAS (1) replicas each: the build's tests/tcluster_run (tests/support/tcluster.h:
# `redis-server --cluster-enabled yes` on free ports, formed as `redis-cli --cluster create`
# forms one, --cluster-node-timeout 1000; SIGTERM stops every node and removes their
# directories). Sets E2E_REDIS_CLUSTER (the seeds "127.0.0.1:P,...", masters first: the pods
# started here then get --redis-cluster), E2E_CLUSTER_NODES (every node's port), E2E_CLUSTER_PID
# (tcluster_run, in E2E_PIDS) and E2E_CLUSTER_MONEY (the port of the master that serves the slot
# of {croupier:money}); from then on e2e_redis is `redis-cli -c` at that master: on a cluster the
# money, lease, registry, rooms and hand-history keys all live in that slot (docs/deploy.md "Key
# layout on a cluster"), and -c follows a redirection for any other key. After a failover the
# caller sets E2E_CLUSTER_MONEY to the new master (e2e_cluster_kill_master prints it). Status 77
# with the reason in E2E_CLUSTER_WHY when redis-server cannot run a cluster; e2e_die when it does
# not form within 60 s.
E2E_CLUSTER_NODES=()
E2E_CLUSTER_PID=
E2E_CLUSTER_MONEY=
E2E_CLUSTER_WHY=
e2e_cluster_start() {
    local st seeds=$E2E_DIR/cluster-seeds
    "$BUILD/tests/tcluster_run" "$seeds" "${1:-3}" "${2:-1}" >"$E2E_DIR/cluster.log" 2>&1 &
    E2E_CLUSTER_PID=$!
    E2E_PIDS+=("$E2E_CLUSTER_PID")
    for _ in $(seq 1 600); do
        [ -s "$seeds" ] && break
        if ! e2e_alive "$E2E_CLUSTER_PID"; then
            st=0
            wait "$E2E_CLUSTER_PID" || st=$?
            if [ "$st" = 77 ]; then
                E2E_CLUSTER_WHY=$(tail -n 1 "$E2E_DIR/cluster.log")
                return 77
            fi
            e2e_fail_detail "$E2E_DIR/cluster.log" '' 8
            e2e_die "the Redis Cluster did not form (status $st)"
        fi
        sleep 0.1
    done
    [ -s "$seeds" ] || e2e_die "the Redis Cluster did not form within 60 s"
    E2E_REDIS_CLUSTER=$(cat "$seeds")
    local seed all
    E2E_CLUSTER_NODES=()
    IFS=, read -r -a all <<<"$E2E_REDIS_CLUSTER"
    for seed in "${all[@]}"; do E2E_CLUSTER_NODES+=("${seed##*:}"); done
    E2E_CLUSTER_MONEY=$(e2e_cluster_master_of '{croupier:money}')
    [ -n "$E2E_CLUSTER_MONEY" ] || e2e_die "no master of the Redis Cluster serves the money slot"
    e2e_redis() {
        redis-cli -c -p "$E2E_CLUSTER_MONEY" "$@"
    }
}

# e2e_cluster_nodes_text: CLUSTER NODES as the first live node answers it (nothing when none does).
e2e_cluster_nodes_text() {
    local p t
    for p in "${E2E_CLUSTER_NODES[@]}"; do
        t=$(redis-cli -p "$p" cluster nodes 2>/dev/null)
        [ -n "$t" ] && { echo "$t"; return 0; }
    done
}

# e2e_cluster_master_of KEY: the port of the master that serves KEY's slot now, as a live node's
# CLUSTER NODES says ("" when none).
e2e_cluster_master_of() {
    local p slot
    for p in "${E2E_CLUSTER_NODES[@]}"; do
        slot=$(redis-cli -p "$p" cluster keyslot "$1" 2>/dev/null) || continue
        [ -n "$slot" ] || continue
        redis-cli -p "$p" cluster nodes 2>/dev/null | python3 -c '
import sys
slot = int(sys.argv[1])
for line in sys.stdin:
    f = line.split()
    if len(f) < 8 or "master" not in f[2] or "fail" in f[2]:
        continue
    for r in f[8:]:
        if r.startswith("["):
            continue
        a, _, b = r.partition("-")
        if int(a) <= slot <= int(b or a):
            print(f[1].split("@")[0].rsplit(":", 1)[1])
            sys.exit(0)
' "$slot" && return 0
    done
}

# e2e_cluster_masters: the ports of the masters that serve slots now, one a line.
e2e_cluster_masters() {
    e2e_cluster_nodes_text | awk '$3 ~ /master/ && $3 !~ /fail/ && NF > 8 {
        a = $2; sub(/@.*/, "", a); sub(/.*:/, "", a); print a }'
}

# e2e_cluster_kill_master KEY WHAT: SIGKILLs the master that serves KEY's slot and waits (10 s at
# most) for a replica to take it over; prints the new master's port (nothing when none did, and
# a failure is recorded in E2E_FAILURES unless called in a subshell: check the output).
e2e_cluster_kill_master() {
    local victim vpid new t
    victim=$(e2e_cluster_master_of "$1")
    vpid=$(redis-cli -p "$victim" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')
    if [ -z "$vpid" ]; then
        E2E_FAILURES+=("$2's master (port '$victim') not found")
        return
    fi
    e2e_log "SIGKILL $2's master (port $victim, pid $vpid)"
    kill -KILL "$vpid"
    t=$(date +%s%3N)
    for _ in $(seq 1 200); do
        new=$(e2e_cluster_master_of "$1")
        if [ -n "$new" ] && [ "$new" != "$victim" ]; then
            e2e_log "the replica on port $new took $2 over after $(($(date +%s%3N) - t)) ms"
            echo "$new"
            return
        fi
        sleep 0.05
    done
    E2E_FAILURES+=("no replica took $2 over within 10 s")
}

# e2e_cluster_reshard_all FROM_PORT TO_PORT: every slot of the master on FROM_PORT moved to the
# master on TO_PORT with `redis-cli --cluster reshard` (the slots one by one, each MIGRATING /
# IMPORTING while its keys move, then given to TO_PORT: the live resharding an operator runs,
# while the clients play on). Logs to $E2E_DIR/reshard.log; returns redis-cli's status.
e2e_cluster_reshard_all() {
    local from=$1 to=$2 fid tid n st=0
    fid=$(redis-cli -p "$from" cluster myid | tr -d '\r')
    tid=$(redis-cli -p "$to" cluster myid | tr -d '\r')
    n=$(redis-cli -p "$from" cluster nodes | awk -v id="$fid" '$1 == id {
        for (i = 9; i <= NF; i++) { if ($i ~ /^\[/) continue; split($i, r, "-");
            n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } } END { print n + 0 }')
    e2e_log "resharding: the $n slots of port $from to port $to"
    redis-cli --cluster reshard "127.0.0.1:$from" --cluster-from "$fid" --cluster-to "$tid" \
        --cluster-slots "$n" --cluster-yes >"$E2E_DIR/reshard.log" 2>&1 || st=$?
    return "$st"
}

# e2e_redis_scan PATTERN: the keys matching PATTERN, one a line: SCAN of e2e_redis's server, or
# on a Redis Cluster (E2E_REDIS_CLUSTER) of every master (a SCAN sees one node).
e2e_redis_scan() {
    if [ -n "${E2E_REDIS_CLUSTER:-}" ] && [ ${#E2E_CLUSTER_NODES[@]} -gt 0 ]; then
        local p
        for p in $(e2e_cluster_masters); do redis-cli -p "$p" --scan --pattern "$1"; done
    else
        e2e_redis --scan --pattern "$1"
    fi
}

# e2e_history_key GAME REST: the key REST (stream, seen:<round>) of GAME's hand history:
# {croupier:history:GAME}:REST, or on a Redis Cluster {croupier:money}:history:GAME:REST
# (docs/deploy.md "Key layout on a cluster"). GAME '*' makes a SCAN pattern.
e2e_history_key() {
    if [ -n "${E2E_REDIS_CLUSTER:-}" ]; then
        echo "{croupier:money}:history:$1:$2"
    else
        echo "{croupier:history:$1}:$2"
    fi
}

# e2e_tour_key ID REST: the key REST (meta, entries, log, ...) of tournament ID:
# {croupier:tour:ID}:REST, or on a Redis Cluster {croupier:money}:tour:ID:REST (common/keytag.h;
# docs/tournaments.md "On a Redis Cluster").
e2e_tour_key() {
    if [ -n "${E2E_REDIS_CLUSTER:-}" ]; then
        echo "{croupier:money}:tour:$1:$2"
    else
        echo "{croupier:tour:$1}:$2"
    fi
}

# e2e_redis_flags [ADDR]: the Redis flags of a pod started here: --redis ADDR (default the
# e2e_redis_start server), or --redis-cluster E2E_REDIS_CLUSTER when a script set that (a Redis
# Cluster's seeds: tests/e2e/cluster_play.sh).
e2e_redis_flags() {
    if [ -n "${E2E_REDIS_CLUSTER:-}" ]; then
        echo "--redis-cluster $E2E_REDIS_CLUSTER"
    else
        echo "--redis ${1:-127.0.0.1:$REDIS_PORT}"
    fi
}

# Pods: each has a name, a pid, a health port, a log. POD_<field>[name].
declare -A POD_PID POD_HEALTH POD_PORT POD_LOG POD_KIND POD_BOUND POD_GRACE POD_HOST

# e2e_game_start NAME ENGINE DRAIN_MAX_SECONDS [extra flags...]
e2e_game_start() {
    local name=$1 engine=$2 bound=$3
    shift 3
    local port health
    port=$(e2e_free_port)
    health=$(e2e_free_port)
    POD_LOG[$name]="$E2E_DIR/$name.log"
    mkdir -p "$E2E_DIR/$name.d" # the pod's working directory (a core dump lands there)
    # E2E_GAME_NETNS runs it in that network namespace (ip netns exec keeps the pid), at
    # E2E_GAME_HOST, reaching Redis at E2E_GAME_REDIS (crash_faults.sh FAULT=partition).
    local host=${E2E_GAME_HOST:-127.0.0.1} wrap=()
    [ -n "${E2E_GAME_NETNS:-}" ] && wrap=(ip netns exec "$E2E_GAME_NETNS")
    (cd "$E2E_DIR/$name.d" && exec "${wrap[@]}" "$BUILD/engine/process/croupier-game" --engine "$engine" --listen "$host:$port" \
        --advertise "$host:$port" --health-listen "$host:$health" \
        $(e2e_redis_flags "${E2E_GAME_REDIS:-}") --lease-ttl-ms 3000 --drain-max-seconds "$bound" \
        --workers 1 "$@") >>"${POD_LOG[$name]}" 2>&1 &
    POD_HOST[$name]=$host
    POD_PID[$name]=$!
    E2E_PIDS+=($!)
    POD_HEALTH[$name]=$health
    POD_PORT[$name]=$port
    POD_KIND[$name]=game
    POD_BOUND[$name]=$bound
    # terminationGracePeriodSeconds: the drain bound plus the shutdown margin (k8s/: +60 s at
    # 600 s; here proportionally, at least 10 s above the bound).
    POD_GRACE[$name]=$((bound + 10))
    e2e_wait_ready "$health" 20 "$host" || { e2e_fail_detail "${POD_LOG[$name]}" '' 8; e2e_die "game pod $name never became ready (log ${POD_LOG[$name]})"; }
    e2e_log "pod $name up: game engine=$engine rpc=$port health=$health pid=${POD_PID[$name]}"
}

# e2e_gate_start NAME [extra flags...]
e2e_gate_start() {
    local name=$1
    shift
    local port health
    port=$(e2e_free_port)
    health=$(e2e_free_port)
    POD_LOG[$name]="$E2E_DIR/$name.log"
    mkdir -p "$E2E_DIR/$name.d" # the pod's working directory (a core dump lands there)
    (cd "$E2E_DIR/$name.d" && exec "$BUILD/gateway/croupier-gate" --listen "127.0.0.1:$port" --health-listen "127.0.0.1:$health" \
        $(e2e_redis_flags) --token-secret-file "$E2E_DIR/secret" \
        --gate-id "$name" --drain-window-ms "${GATE_DRAIN_WINDOW_MS:-1000}" \
        --close-timeout-ms 5000 "$@") >>"${POD_LOG[$name]}" 2>&1 &
    POD_PID[$name]=$!
    E2E_PIDS+=($!)
    POD_HEALTH[$name]=$health
    POD_PORT[$name]=$port
    POD_KIND[$name]=gate
    POD_BOUND[$name]=0
    POD_GRACE[$name]=30
    e2e_wait_ready "$health" 20 || { e2e_fail_detail "${POD_LOG[$name]}" '' 8; e2e_die "gate pod $name never became ready (log ${POD_LOG[$name]})"; }
    e2e_log "pod $name up: gateway client=$port health=$health pid=${POD_PID[$name]}"
}

# e2e_director_start NAME [FLAGS...]: croupier-director (the tournament director) on loopback,
# its drain bound 5 s as POD_BOUND (the preStop of e2e_pod_terminate), ready when /readyz is 200.
e2e_director_start() {
    local name=$1
    shift
    local health
    health=$(e2e_free_port)
    POD_LOG[$name]="$E2E_DIR/$name.log"
    mkdir -p "$E2E_DIR/$name.d"
    (cd "$E2E_DIR/$name.d" && exec "$BUILD/tournament/croupier-director" \
        --health-listen "127.0.0.1:$health" $(e2e_redis_flags) \
        --director-id "$name" --drain-max-seconds 5 "$@") >>"${POD_LOG[$name]}" 2>&1 &
    POD_PID[$name]=$!
    E2E_PIDS+=($!)
    POD_HEALTH[$name]=$health
    POD_KIND[$name]=director
    POD_BOUND[$name]=5
    POD_GRACE[$name]=65
    e2e_wait_ready "$health" 20 || { e2e_fail_detail "${POD_LOG[$name]}" '' 8; e2e_die "director pod $name never became ready (log ${POD_LOG[$name]})"; }
    e2e_log "pod $name up: director health=$health pid=${POD_PID[$name]}"
}

e2e_secret() {
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$E2E_DIR/secret"
}

# e2e_pod_terminate NAME: what kubelet does to a pod being deleted. preStop (the real
# k8s/prestop.sh under busybox sh, with the pod's HEALTH_PORT and DRAIN_MAX_SECONDS, as both
# Deployments in k8s/base run it; skipped when POD_BOUND is 0), then SIGTERM, then up to terminationGracePeriodSeconds
# (counted from the start of the preStop, as kubelet does) for the exit; SIGKILL if still
# alive, which is a failure. Returns non-zero on SIGKILL or a non-zero exit status.
e2e_pod_terminate() {
    local name=$1 pid=${POD_PID[$1]} t0=$SECONDS
    local deadline=$((SECONDS + ${POD_GRACE[$1]}))
    e2e_log "terminating pod $name (pid $pid, grace ${POD_GRACE[$name]}s)"
    if [ "${POD_BOUND[$name]}" -gt 0 ]; then
        HEALTH_PORT=${POD_HEALTH[$name]} DRAIN_MAX_SECONDS=${POD_BOUND[$name]} \
            timeout "${POD_GRACE[$name]}" busybox sh "$SRC/k8s/prestop.sh" \
            >>"$E2E_DIR/$name.prestop.log" 2>&1
        e2e_log "pod $name preStop returned after $((SECONDS - t0))s"
    fi
    kill -TERM "$pid" 2>/dev/null
    while e2e_alive "$pid" && ((SECONDS < deadline)); do
        sleep 0.1
    done
    if e2e_alive "$pid"; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        e2e_log "pod $name: SIGKILL after the grace period"
        E2E_FAILURES+=("pod $name needed SIGKILL")
        return 1
    fi
    local st=0
    wait "$pid" 2>/dev/null || st=$?
    e2e_log "pod $name exited status $st after $((SECONDS - t0))s"
    if [ "$st" -eq 143 ] && grep -q 'exit reason=' "${POD_LOG[$name]}"; then
        # Killed by the SIGTERM itself after its exit line: the process had finished its exit
        # (started by the preStop's /drain) and was past its signal handling. Kubernetes does
        # not care for a deleted pod; reported, not failed.
        E2E_WARNINGS+=("pod $name: SIGTERM after its exit line killed it (status 143)")
    elif [ "$st" -ne 0 ]; then
        E2E_FAILURES+=("pod $name exited with status $st")
        e2e_backtrace "$name"
        return 1
    fi
    return 0
}

# e2e_backtrace NAME: after a crash, the backtrace of NAME's core dump (when the run allows
# core dumps: ulimit -c, core_pattern "core") into $E2E_DIR/NAME.backtrace.txt.
e2e_backtrace() {
    local core bin
    core=$(ls "$E2E_DIR/$1.d"/core* 2>/dev/null | head -1)
    [ -n "$core" ] && command -v gdb >/dev/null || return 0
    if [ "${POD_KIND[$1]}" = game ]; then
        bin=$BUILD/engine/process/croupier-game
    else
        bin=$BUILD/gateway/croupier-gate
    fi
    gdb -batch -ex 'thread apply all bt' "$bin" "$core" >"$E2E_DIR/$1.backtrace.txt" 2>&1
    e2e_log "pod $1 crashed: backtrace in $E2E_DIR/$1.backtrace.txt"
}

# Whether pid runs (a zombie child that exited does not count).
e2e_alive() {
    # Read the state in one go: a child bash has just reaped can still pass `[ -e /proc/PID ]`
    # while its stat is no longer readable, which once made a clean exit look alive (SIGKILL).
    local st
    { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
    [[ ${st##*) } != [ZXx]* ]]
}

e2e_cleanup() {
    local p
    for p in "${E2E_PIDS[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    sleep 0.3
    for p in "${E2E_PIDS[@]}"; do
        if kill -0 "$p" 2>/dev/null; then
            kill -TERM "$p" 2>/dev/null
        fi
    done
    local i
    for i in $(seq 1 30); do
        local alive=0
        for p in "${E2E_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.2
    done
    for p in "${E2E_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
}

# Sum of every wallet balance in Redis (on a Redis Cluster: of every master's wallets).
e2e_wallet_sum() {
    local sum=0 k v
    for k in $(e2e_redis_scan '{croupier:money}:wallet:*'); do
        v=$(e2e_redis get "$k")
        sum=$((sum + v))
    done
    echo "$sum"
}

# e2e_accounts_left GLOB: the wallets {croupier:money}:wallet:GLOB of chips held at a table
# (seat accounts: the table kit's ts.*, hold'em's hs.*), which
# every cash-out (a leave, a bust, the table closing on a drain) brings back to 0; the keys stay.
# Prints "COUNT NONZERO": how many exist and how many still hold chips.
e2e_accounts_left() {
    local n=0 left=0 k
    for k in $(e2e_redis_scan "{croupier:money}:wallet:$1"); do
        n=$((n + 1))
        [ "$(e2e_redis get "$k")" = 0 ] || left=$((left + 1))
    done
    echo "$n $left"
}

# e2e_lease_of NAME: "SLOT EPOCH" of the lease the game pod NAME acquired first (its
# lease_acquired log line).
e2e_lease_of() {
    python3 - "${POD_LOG[$1]}" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    if '"lease_acquired"' in line:
        d = json.loads(line[line.index('{'):])
        print(d["slot"], d["epoch"])
        break
EOF
}

# e2e_wait_unheld MEMBER SECONDS: waits until the held index ({croupier:money}:held, money.h
# "Held chips") no longer has MEMBER ("service:slot:epoch"); fails if it still has it then.
e2e_wait_unheld() {
    local deadline=$((SECONDS + $2))
    while [ "$(e2e_redis sismember '{croupier:money}:held' "$1")" = 1 ] && ((SECONDS < deadline)); do
        sleep 0.05
    done
    [ "$(e2e_redis sismember '{croupier:money}:held' "$1")" = 0 ]
}

# e2e_wait_crash_recovered SLEEP NAME...: the crash step of the demo and of rollout.sh waits, at
# most 30 s, until each SIGKILLed game pod NAME's held epoch (CRASH_MEMBER[NAME]) has left the
# held index, and sets CRASH_MS[NAME] to the time since its kill (CRASH_T[NAME], ms); SLEEP is
# the command that pauses between looks (the demo's Ctrl-C-aware nap, or sleep).
e2e_wait_crash_recovered() {
    local nap=$1 deadline=$((SECONDS + 30)) left n
    shift
    while :; do
        left=0
        for n in "$@"; do
            [ -n "${CRASH_MS[$n]:-}" ] && continue
            if [ "$(e2e_redis sismember '{croupier:money}:held' "${CRASH_MEMBER[$n]}")" = 0 ]; then
                CRASH_MS[$n]=$(($(date +%s%3N) - CRASH_T[$n]))
                e2e_log "crash: $n's chips are back ${CRASH_MS[$n]} ms after its kill"
            else
                left=$((left + 1))
            fi
        done
        [ "$left" -eq 0 ] && return 0
        if ((SECONDS >= deadline)); then
            e2e_log "crash: $left killed servers still hold chips after 30 s"
            return 0
        fi
        "$nap" 0.1
    done
}

# e2e_seed_wallets FIRST COUNT AMOUNT: gives players FIRST..FIRST+COUNT-1 a balance. With
# E2E_MONEY_BY_ENTITY=1 (a Redis Cluster run with --money-by-entity: docs/queues.md "The wallets
# outside the game server") each is an operator credit, `croupier-ctl --money-by-entity credit`
# with the op id e2e-seed-<player>: created in {p:<player>}:bal, counted as seeded, booked in
# the audit stream, once; otherwise a SET of the one-slot wallet. Returns 1 when a credit fails.
e2e_seed_wallets() {
    local i
    if [ "${E2E_MONEY_BY_ENTITY:-0}" = 1 ]; then
        for ((i = $1; i < $1 + $2; i++)); do
            # shellcheck disable=SC2046 # e2e_redis_flags is several words
            "$BUILD/tools/croupier-ctl" $(e2e_redis_flags) --money-by-entity credit "$i" "$3" \
                --reason "e2e: starting wallet" --op-id "e2e-seed-$i" >/dev/null || return 1
        done
        return 0
    fi
    for ((i = $1; i < $1 + $2; i++)); do
        echo "SET {croupier:money}:wallet:$i $3"
    done | e2e_redis >/dev/null
}

# ---- used by scripts/demo-cluster.sh (the `./dev run` demo); additions only ------------------

# e2e_pods_publish FILE NAME...: the live pods as poll.py reads them ("name kind health_port" a
# line), replaced atomically (written beside, then renamed).
e2e_pods_publish() {
    local file=$1 n
    shift
    : >"$file.tmp"
    for n in "$@"; do
        echo "$n ${POD_KIND[$n]} ${POD_HEALTH[$n]}" >>"$file.tmp"
    done
    mv "$file.tmp" "$file"
}

# e2e_endpoints_publish FILE NAME...: the gateway pods' client addresses as croupier-bot's
# --gateways @FILE reads them (a Service's endpoints), replaced atomically.
e2e_endpoints_publish() {
    local file=$1 n
    shift
    : >"$file.tmp"
    for n in "$@"; do
        echo "127.0.0.1:${POD_PORT[$n]}" >>"$file.tmp"
    done
    mv "$file.tmp" "$file"
}

# e2e_gate_prestop NAME: gives a pod started by e2e_gate_start the preStop hook and grace period
# of k8s/base/gate.yaml, so e2e_pod_terminate runs k8s/prestop.sh for it too: bound = drain
# window + close timeout (e2e_gate_start passes --close-timeout-ms 5000), grace = bound +
# window + close + 15 s (the rule tests/k8s checks).
e2e_gate_prestop() {
    local window=${GATE_DRAIN_WINDOW_MS:-1000} close=5000
    POD_BOUND[$1]=$(((window + close + 999) / 1000))
    POD_GRACE[$1]=$((POD_BOUND[$1] + (window + close) / 1000 + 15))
}

# e2e_exit_reason NAME: the reason of the pod's last "exit reason=..." log line, or "none".
e2e_exit_reason() {
    local r
    r=$(grep -o 'exit reason=[a-z_]*' "${POD_LOG[$1]}" 2>/dev/null | tail -n 1)
    echo "${r#exit reason=}" | sed 's/^$/none/'
}

# Sum of the rake every game collected ({croupier:money}:rake:*, the tournaments' fees among
# them) and of the tournaments' prize pools ({croupier:money}:tourpool:*, chips held for a
# tournament: docs/queues.md "Where every chip is"); wallets + this is what every script
# conserves.
e2e_rake_sum() {
    local sum=0 k v
    for k in $(e2e_redis_scan '{croupier:money}:rake:*') \
        $(e2e_redis_scan '{croupier:money}:tourpool:*'); do
        v=$(e2e_redis get "$k")
        sum=$((sum + v))
    done
    echo "$sum"
}

# e2e_rounds_check ROUNDS_FILE: checks croupier-bot's --rounds-file against Redis. Prints
# "FINISHED MISSING VOIDED SETTLED": distinct rounds the bots saw finish with money moved, how
# many of those have no settle record {croupier:money}:round:<id>, distinct voided rounds, how
# many of those have one (both must be 0). "nomoney" rounds need no record and are not counted.
e2e_rounds_check() {
    local fin=0 missing=0 void=0 settled=0
    if [ -s "$1" ]; then
        fin=$(awk '$2 == "finished" { print $1 }' "$1" | sort -u | wc -l)
        void=$(awk '$2 == "voided" { print $1 }' "$1" | sort -u | wc -l)
        if [ "$fin" -gt 0 ]; then
            missing=$(awk '$2 == "finished" { print $1 }' "$1" | sort -u |
                sed 's/^/EXISTS {croupier:money}:round:/' | e2e_redis | grep -vc '^1$')
        fi
        if [ "$void" -gt 0 ]; then
            settled=$(awk '$2 == "voided" { print $1 }' "$1" | sort -u |
                sed 's/^/EXISTS {croupier:money}:round:/' | e2e_redis | grep -c '^1$')
        fi
    fi
    echo "$fin $missing $void $settled"
}

# e2e_unseen_check ROUNDS_FILE: the rounds a bot had open when it lost its connection and that
# ended while it was away ("ID unseen" lines of the --rounds-file). Prints "UNSEEN UNACCOUNTED":
# distinct such rounds, and how many of them have neither a settle record
# ({croupier:money}:round:<id>) nor a hand-history record for their round id
# ({croupier:history:<game>}:seen:<id>, docs/hand-history.md: every round a table-kit game
# begins has exactly one, settled, thrown in or voided; on a Redis Cluster the history keys of
# e2e_history_key). UNACCOUNTED must be 0: the server
# finished every such round. Which record each round has goes to ROUNDS_FILE's sibling
# <name>-unseen.txt ("ID settle|history|settle+history|none"), and a count of each to stderr.
e2e_unseen_check() {
    local unseen=0 bad=0 ids games k out
    out="${1%.txt}-unseen.txt"
    if [ -s "$1" ]; then
        ids=$(awk '$2 == "unseen" { print $1 }' "$1" | sort -u)
        unseen=$(printf '%s' "$ids" | grep -c .)
        if [ "$unseen" -gt 0 ]; then
            # the games that have hand histories: {croupier:history:<game>}:stream
            games=$(e2e_redis_scan "$(e2e_history_key '*' stream)" |
                sed -n -e 's/^{croupier:history:\(.*\)}:stream$/\1/p' \
                    -e 's/^{croupier:money}:history:\(.*\):stream$/\1/p' | sort -u | tr '\n' ' ')
            k=$(printf '%s' "$games" | wc -w)
            # per round id: its settle record, then its history record in each game
            printf '%s\n' "$ids" |
                awk -v games="$games" -v seen="$(e2e_history_key @G@ seen:)" '{
                    print "EXISTS {croupier:money}:round:" $1
                    n = split(games, g, " ")
                    for (i = 1; i <= n; i++) {
                        k = seen
                        sub(/@G@/, g[i], k)
                        print "EXISTS " k $1
                    }
                }' | e2e_redis >"$out.raw"
            printf '%s\n' "$ids" |
                awk -v k="$k" -v raw="$out.raw" '{
                    getline r <raw; s = r == "1"; h = 0
                    for (i = 0; i < k; i++) { getline r <raw; if (r == "1") h = 1 }
                    print $1, s && h ? "settle+history" : s ? "settle" : h ? "history" : "none"
                }' >"$out"
            rm -f "$out.raw"
            bad=$(awk '$2 == "none"' "$out" | wc -l)
            awk '{ n[$2]++ } END { for (w in n) printf "%s %d ", w, n[w] }' "$out" |
                sed "s|^|unseen rounds of $(basename "$1") by record: |" >&2
            echo >&2
        fi
    fi
    echo "$unseen $bad"
}

# e2e_stop_pids SECONDS PID...: SIGTERM each, wait up to SECONDS for all to exit, SIGKILL the
# rest; reaps those that are children of this shell. Prints how many needed SIGKILL.
e2e_stop_pids() {
    local deadline=$((SECONDS + $1)) p alive killed=0
    shift
    for p in "$@"; do kill -TERM "$p" 2>/dev/null; done
    while ((SECONDS < deadline)); do
        alive=0
        for p in "$@"; do e2e_alive "$p" && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for p in "$@"; do
        if e2e_alive "$p"; then
            kill -KILL "$p" 2>/dev/null
            killed=$((killed + 1))
        fi
        wait "$p" 2>/dev/null
    done
    echo "$killed"
}

# ---- the engines' descriptions (a game's folder says how the e2e scripts run it) -------------
# e2e_engine_files: every engine description, one path a line: games/<folder>/e2e.env and the
# test engine's engine/e2e.env.
e2e_engine_files() {
    local f
    for f in "$SRC"/games/*/e2e.env "$SRC"/engine/e2e.env; do
        [ -f "$f" ] && echo "$f"
    done
}

# e2e_engine_names: the engines described, space-separated, in file order.
e2e_engine_names() {
    local f
    for f in $(e2e_engine_files); do sed -n 's/^engine=//p' "$f"; done | tr '\n' ' ' | sed 's/ $//'
}

# e2e_engine_desc ENGINE: reads ENGINE's description, the e2e.env (games/<folder>/e2e.env, the
# test engine's engine/e2e.env) whose engine= line names it. Lines are KEY=VALUE (the value is the
# rest of the line) or comments (#); the keys:
#   engine          the engine's name (croupier-game --engine)              required
#   games           the games its bots play, space-separated (one croupier-bot each)  required
#   join            the engine the bots' Join names (croupier-bot --engine)  required
#   bots            bots per game in bots_smoke.sh                          required
#   bot_seconds     how long they play there                                required
#   seat_accounts   the glob of the seat accounts its tables buy into (ts.*), or none
#   rollout_games   the games its bots play in rollout.sh (default: games)
#   house_seed      WALLET:CHIPS seeded before the money is counted (server bots' house wallet)
#   house_fund      WALLET:VARIABLE: a house wallet the pods fund once with $VARIABLE chips
#   env             VARIABLE=DEFAULT exported unless already set (repeatable)
# Sets E2E_ENGINE_FILE, E2E_GAMES, E2E_JOIN, E2E_BOTS, E2E_BOT_SECONDS, E2E_SEAT_ACCOUNTS,
# E2E_ROLLOUT_GAMES, E2E_HOUSE_SEED, E2E_HOUSE_FUND and exports the env defaults. An engine no
# description names, a missing required key, an unknown key or a bad value: a message on stderr
# and status 1 (nothing set).
e2e_engine_desc() {
    local want=$1 f file="" line key val
    for f in $(e2e_engine_files); do
        if grep -qx "engine=$want" "$f"; then file=$f; break; fi
    done
    if [ -z "$file" ]; then
        echo "e2e: no engine '$want' is described (games/*/e2e.env, engine/e2e.env: $(e2e_engine_names))" >&2
        return 1
    fi
    local -A d=()
    local envs=()
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in '' | '#'*) continue ;; esac
        if [[ $line != *=* ]]; then
            echo "e2e: $file: not KEY=VALUE: '$line'" >&2
            return 1
        fi
        key=${line%%=*}
        val=${line#*=}
        case $key in
        engine | games | join | bots | bot_seconds | seat_accounts | rollout_games | house_seed | house_fund)
            d[$key]=$val ;;
        env)
            if ! [[ $val =~ ^[A-Z][A-Z0-9_]*=.*$ ]]; then
                echo "e2e: $file: env needs VARIABLE=DEFAULT: '$val'" >&2
                return 1
            fi
            envs+=("$val") ;;
        *)
            echo "e2e: $file: unknown key '$key'" >&2
            return 1 ;;
        esac
    done <"$file"
    for key in engine games join bots bot_seconds seat_accounts; do
        if [ -z "${d[$key]:-}" ]; then
            echo "e2e: $file: '$key' is required" >&2
            return 1
        fi
    done
    for key in bots bot_seconds; do
        if ! [[ ${d[$key]} =~ ^[1-9][0-9]*$ ]]; then
            echo "e2e: $file: $key '${d[$key]}' is not a positive number" >&2
            return 1
        fi
    done
    for key in house_seed house_fund; do
        if [ -n "${d[$key]:-}" ] && ! [[ ${d[$key]} =~ ^[A-Za-z0-9_.-]+:[A-Za-z0-9_]+$ ]]; then
            echo "e2e: $file: $key needs WALLET:VALUE: '${d[$key]}'" >&2
            return 1
        fi
    done
    E2E_ENGINE_FILE=$file
    E2E_GAMES=${d[games]}
    E2E_JOIN=${d[join]}
    E2E_BOTS=${d[bots]}
    E2E_BOT_SECONDS=${d[bot_seconds]}
    E2E_SEAT_ACCOUNTS=${d[seat_accounts]}
    E2E_ROLLOUT_GAMES=${d[rollout_games]:-${d[games]}}
    E2E_HOUSE_SEED=${d[house_seed]:-}
    E2E_HOUSE_FUND=${d[house_fund]:-}
    for line in "${envs[@]}"; do
        key=${line%%=*}
        [ -n "${!key+x}" ] || export "$key=${line#*=}"
    done
    return 0
}
