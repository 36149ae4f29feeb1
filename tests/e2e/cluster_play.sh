#!/usr/bin/env bash
# Integration test (issue 34): the game path on a Redis Cluster with today's key layout
# (docs/deploy.md "Redis Cluster: the client"). A real cluster of 3 masters and 3 replicas on
# loopback (tests/integration/tcluster_run.c: random ports, removed at the end), two
# croupier-game (hold'em, and the traditional engine's Dou Dizhu) and one croupier-gate, all with
# --redis-cluster, and a croupier-bot fleet per game for BOT_SECONDS (20). Mid-play the master
# that serves the money slot is SIGKILLed and its replica takes over, then the seats' master (the
# gateway's keys) the same way. Passes when each bot report shows finished games > 0, torn = 0
# and no unexpected error, hands were recorded after the kill, no server fenced itself, every pod
# exits drained, the wallets + rake still sum to what was seeded, and every finished round the
# bots saw has its settlement in Redis (and no voided one has); then a game server is unready
# while a one-node cluster leaves slots unserved, and ready again once they are served. Before
# all, the refusals at start: --redis-cluster naming a plain redis-server, beside --redis, or
# with a host name: each one clear line and exit status 2. (The tournaments on a cluster:
# tests/e2e/cluster_tour.sh.)
#
#   tests/e2e/cluster_play.sh BUILD_DIR [SOURCE_DIR]
# Env: BOT_SECONDS, KILL_AFTER (seconds of play before the kill, 8; 3 or less: no kill),
# CROUPIER_KEEP_LOGS=1 keeps the work dir. Exit 77 (skip) when redis-server cannot run a cluster.
set -u
BUILD=$(cd "${1:?usage: cluster_play.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-cluster-play.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
BOT_SECONDS=${BOT_SECONDS:-20}
KILL_AFTER=${KILL_AFTER:-8}
command -v redis-server >/dev/null || { echo "cluster_play: SKIP: no redis-server" >&2; exit 77; }

# ---- the cluster ------------------------------------------------------------------------------
# tests/e2e/lib.sh e2e_cluster_start: e2e_redis then talks to the master of the money slot
# (E2E_CLUSTER_MONEY, set again after the kill), which lib.sh's single-key reads need; its sums
# and scans read every master (e2e_redis_scan).
e2e_cluster_start 3 1 || { echo "cluster_play: SKIP: $E2E_CLUSTER_WHY" >&2; exit 77; }
e2e_log "cluster up: $E2E_REDIS_CLUSTER"

# ---- the refusals at start (nothing to play with yet: a plain redis-server, bad flags) -----
e2e_redis_start # a plain redis-server, not a cluster node
bad() { # DESCRIPTION WANT_PATTERN BINARY FLAGS...: exit 2 and one stderr line matching WANT
    local what=$1 want=$2 bin=$3 st=0
    shift 3
    timeout 20 "$bin" "$@" >"$E2E_DIR/bad.out" 2>"$E2E_DIR/bad.err" || st=$?
    local lines
    lines=$(wc -l <"$E2E_DIR/bad.err")
    if [ "$st" = 2 ] && [ "$lines" = 1 ] && grep -q -- "$want" "$E2E_DIR/bad.err"; then
        e2e_log "ok: $what refused: $(cat "$E2E_DIR/bad.err")"
    else
        e2e_log "FAIL: $what: status $st, $lines lines: $(head -c 400 "$E2E_DIR/bad.err")"
        E2E_FAILURES+=("$what")
    fi
}
GAME=$BUILD/engine/process/croupier-game
GATE=$BUILD/gateway/croupier-gate
DIRECTOR=$BUILD/tournament/croupier-director
e2e_secret
for b in "$GAME --engine holdem" "$GATE --token-secret-file $E2E_DIR/secret" "$DIRECTOR"; do
    name=$(basename "${b%% *}")
    # shellcheck disable=SC2086 # the binary and its own flags
    bad "$name --redis-cluster at a plain redis-server" "is not a Redis Cluster node" \
        $b --health-listen 127.0.0.1:0 --redis-cluster "127.0.0.1:$REDIS_PORT"
    # shellcheck disable=SC2086
    bad "$name --redis-cluster with --redis" "exclude each other" \
        $b --health-listen 127.0.0.1:0 --redis-cluster "$E2E_REDIS_CLUSTER" --redis "127.0.0.1:$REDIS_PORT"
    # shellcheck disable=SC2086
    bad "$name --redis-cluster with a host name" "not an IP literal" \
        $b --health-listen 127.0.0.1:0 --redis-cluster "localhost:7000"
done
kill "$REDIS_PID" 2>/dev/null

# ---- play ------------------------------------------------------------------------------------
SEED_CHIPS=1000000
declare -A G_GAMES G_BOTS G_JOIN G_SEATS
base=5000000
for engine in holdem traditional; do
    e2e_engine_desc "$engine" || exit 2
    games=$E2E_GAMES
    [ "$engine" = traditional ] && games=doudizhu
    G_GAMES[$engine]=$games G_BOTS[$engine]=$E2E_BOTS G_JOIN[$engine]=$E2E_JOIN
    G_SEATS[$engine]=$E2E_SEAT_ACCOUNTS
    for g in $games; do
        e2e_seed_wallets $base "$E2E_BOTS" $SEED_CHIPS
        base=$((base + 100000))
    done
    [ -n "$E2E_HOUSE_SEED" ] &&
        e2e_redis set "{croupier:money}:wallet:${E2E_HOUSE_SEED%%:*}" "${E2E_HOUSE_SEED#*:}" >/dev/null
done
sum0=$(e2e_wallet_sum)
e2e_log "seeded: $sum0 chips"
# No --redis-min-replicas: with one replica per master, the promoted replica has none to WAIT
# for. What the killed master acknowledged and its replica lacked comes back through the money
# writer's replay journal (docs/deploy.md "Failover and durability"): the kill is reported to
# it as a reconnect (rconn's cluster mode), and it re-applies what the new master lacks.
# The lease TTL is croupier-game's default (6 s; the other e2e scripts shorten it to 3 s): a
# failover (about 2.6 s after the kill here) then ends before a server fences itself.
e2e_game_start game-holdem holdem 30 --lease-ttl-ms 6000
e2e_game_start game-trad traditional 30 --lease-ttl-ms 6000
e2e_gate_start gate-a
# croupier-ctl on the cluster: the registry and the wallets (the money slot)
CTL=$BUILD/tools/croupier-ctl
nserv=$("$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" --json servers 2>"$E2E_DIR/ctl.err" |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["servers"]))' 2>/dev/null)
if [ "$nserv" = 2 ]; then
    e2e_log "ok: croupier-ctl servers lists both game servers"
else
    E2E_FAILURES+=("croupier-ctl --redis-cluster servers: '$nserv' servers: $(head -c 300 "$E2E_DIR/ctl.err")")
fi
bal=$("$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" --json wallet 5000000 2>"$E2E_DIR/ctl.err" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["balance"])' 2>/dev/null)
if [ "$bal" = "$SEED_CHIPS" ]; then
    e2e_log "ok: croupier-ctl wallet reads a seeded wallet"
else
    E2E_FAILURES+=("croupier-ctl --redis-cluster wallet: '$bal': $(head -c 300 "$E2E_DIR/ctl.err")")
fi
base=5000000
bots=()
for engine in holdem traditional; do
    for g in ${G_GAMES[$engine]}; do
        "$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" \
            --bots "${G_BOTS[$engine]}" --game "$g" --engine "${G_JOIN[$engine]}" \
            --seconds "$BOT_SECONDS" --player-base $base --token-secret-file "$E2E_DIR/secret" \
            --finish-timeout-ms 60000 --report "$E2E_DIR/report-$g.json" \
            --rounds-file "$E2E_DIR/rounds-$g.txt" >"$E2E_DIR/bot-$g.log" 2>&1 &
        bots+=("$!:$g")
        base=$((base + 100000))
    done
done
# croupier-ctl where / tables: the seats (their own slot) beside the registry (the money slot)
sleep 3
seated=""
for i in $(seq 0 9); do
    if "$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" --json where $((5000000 + i)) >"$E2E_DIR/where.json" 2>"$E2E_DIR/ctl.err"; then
        seated=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["server"])' "$E2E_DIR/where.json" 2>/dev/null)
        [ -n "$seated" ] && break
    fi
done
if [ -n "$seated" ]; then
    e2e_log "ok: croupier-ctl where finds a seated bot on $seated"
    "$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" --json tables "$seated" >"$E2E_DIR/tables.json" 2>"$E2E_DIR/ctl.err" ||
        E2E_FAILURES+=("croupier-ctl --redis-cluster tables $seated: $(head -c 300 "$E2E_DIR/ctl.err")")
else
    E2E_FAILURES+=("croupier-ctl --redis-cluster where: no seated bot among 10: $(head -c 300 "$E2E_DIR/ctl.err")")
fi
if [ "$KILL_AFTER" -gt 3 ]; then
    sleep $((KILL_AFTER - 3))
    t0=$(date +%s%3N)
    new=$(e2e_cluster_kill_master '{croupier:money}' "the money slot")
    [ -n "$new" ] && E2E_CLUSTER_MONEY=$new
    # then the gateways' side: the master of the seats (or of the gateways' keys, or the lobby's)
    # that still has a replica (the money slot's new master has none)
    sleep 3
    for key in '{croupier:seat}' '{croupier:gates}' '{croupier:lobby}'; do
        if [ "$(e2e_cluster_master_of "$key")" != "$E2E_CLUSTER_MONEY" ]; then
            e2e_cluster_kill_master "$key" "the slot of $key" >/dev/null
            break
        fi
    done
fi
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}
for b in "${bots[@]}"; do
    st=0
    wait "${b%%:*}" || st=$?
    g=${b#*:}
    rep=$E2E_DIR/report-$g.json
    num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
    if [ ! -s "$rep" ]; then
        check "$g: bot wrote its report (log $E2E_DIR/bot-$g.log)" false
        continue
    fi
    check "$g: bot exit status 0" test "$st" -eq 0
    check "$g: finished games > 0 ($(num 'd["games"]["finished"]'))" test "$(num 'd["games"]["finished"]')" -gt 0
    check "$g: torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0 ||
        e2e_torn_detail "$rep" "$E2E_DIR/bot-$g.log"
    check "$g: unexpected errors = 0 ($(num 'd["unexpected_errors"]'); $(num 'd["errors"]'))" test "$(num 'd["unexpected_errors"]')" -eq 0
    e2e_log "$g: finished $(num 'd["games"]["finished"]'), actions $(num 'd["actions"]'), latency ms $(num 'd["action_latency_ms"]')"
done
# play went on after the kill: hands recorded in each game's history stream since then (the
# stream ids are the new master's clock, in ms)
if [ "$KILL_AFTER" -gt 0 ] && [ -n "${t0:-}" ]; then
    for engine in holdem traditional; do
        for g in ${G_GAMES[$engine]}; do
            n=$(e2e_redis xrange "{croupier:money}:history:$g:stream" "$t0" + | grep -c '^round$')
            check "$g: hands recorded after the kill ($n)" test "$n" -gt 0
        done
    done
fi
for p in gate-a game-holdem game-trad; do
    e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
    check "pod $p: no script refused for keys in two slots" \
        bash -c "! grep -q redis_cluster_crossslot '${POD_LOG[$p]}'" ||
        e2e_fail_detail "${POD_LOG[$p]}" redis_cluster_crossslot 3
    [ "$p" = gate-a ] && continue
    check "pod $p: no self-fence during the failover" bash -c "! grep -q '\"self_fenced\"' '${POD_LOG[$p]}'" ||
        e2e_fail_detail "${POD_LOG[$p]}" self_fenced 2
done
sum1=$(e2e_wallet_sum)
rake=$(e2e_rake_sum)
check "wallets + rake sum unchanged ($sum0 -> $sum1 + $rake)" test "$sum0" -eq $((sum1 + rake))
for engine in holdem traditional; do
    read -r nts ts_left <<<"$(e2e_accounts_left "${G_SEATS[$engine]}")"
    check "$engine: every seat account ${G_SEATS[$engine]} back at 0 ($nts accounts, $ts_left not)" \
        test "$ts_left" -eq 0
    for g in ${G_GAMES[$engine]}; do
        read -r fin missing void settled <<<"$(e2e_rounds_check "$E2E_DIR/rounds-$g.txt")"
        check "$g: every finished round settled in Redis ($fin rounds, $missing missing)" test "$missing" -eq 0
        check "$g: no voided round settled ($void voided, $settled settled)" test "$settled" -eq 0
    done
done
# ---- /readyz while slots are unserved: a one-node cluster, a game server on it, 100 slots
# taken away and given back
"$BUILD/tests/tcluster_run" "$E2E_DIR/seeds1" 1 0 >"$E2E_DIR/cluster1.log" 2>&1 &
E2E_PIDS+=("$!")
for _ in $(seq 1 300); do [ -s "$E2E_DIR/seeds1" ] && break; sleep 0.1; done
if [ -s "$E2E_DIR/seeds1" ]; then
    one=$(cat "$E2E_DIR/seeds1")
    E2E_REDIS_CLUSTER=$one e2e_game_start game-one holdem 5 --lease-ttl-ms 6000
    redis-cli -p "${one##*:}" cluster delslotsrange 100 199 >/dev/null
    unready=0
    for _ in $(seq 1 100); do
        e2e_get "${POD_HEALTH[game-one]}/readyz" 1 >/dev/null || { unready=1; break; }
        sleep 0.1
    done
    check "game server unready while slots 100-199 are unserved" test "$unready" = 1
    redis-cli -p "${one##*:}" cluster addslotsrange 100 199 >/dev/null
    check "game server ready again once they are served" e2e_wait_ready "${POD_HEALTH[game-one]}" 15
    e2e_pod_terminate game-one
else
    check "a one-node cluster started" false
fi
for f in "${E2E_FAILURES[@]}"; do fail=1; e2e_log "failed: $f"; done
for w in "${E2E_WARNINGS[@]}"; do e2e_log "warning: $w"; done
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
