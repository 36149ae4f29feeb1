#!/usr/bin/env bash
# tests/image/rollout.sh BUILD SRC IMAGE -- a rollout run from the image (docs/deploy.md "The
# image"): redis-server on loopback, croupier-game and croupier-gate as containers of IMAGE on
# the host network (as k8s/base runs them: the image's user 65532, a read-only root file system,
# no capabilities, no new privileges, the preStop script mounted where the ConfigMap puts it),
# croupier-bot from the build playing through the gateways. Then, as tests/e2e/rollout.sh does
# with processes, one game server and one gateway are replaced (maxSurge 1: the new container
# first, ready, then the old one terminated as kubelet does: the real preStop hook run inside
# the container, `podman exec NAME /bin/sh /etc/croupier/prestop/prestop.sh` -- busybox sh,
# the command of k8s/base's preStop -- then SIGTERM, the grace period, SIGKILL counted as a
# failure). The bots stop, every container is terminated the same way.
#
# Asserts: 0 torn games and 0 unexpected client errors, finished games, table moves off the
# drained game server, GoAway reconnects off the replaced gateway, every finished round settled
# in Redis and no voided one, wallets + rake unchanged, every container exited 0 with
# `exit reason=drained` and none needed SIGKILL, and the registry entries of the game
# containers and the gateway containers' entries carried the image's version.
#
# Env: ENGINE, GAME, JOIN (default test, test, traditional: the test engine; the image suite also
# runs holdem, holdem, holdem: chips in seat accounts, all back in the wallets at the end),
# BOTS (default 40), GAME_BOUND (drain bound, default 20 s), IMAGE_OUT (the run's files, default
# BUILD/image-rollout).
set -u
BUILD=$(cd "${1:?usage: rollout.sh BUILD SRC IMAGE}" && pwd)
SRC=$(cd "${2:?}" && pwd)
IMAGE=${3:?}
# shellcheck source=../e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
# shellcheck source=../../scripts/image.sh
. "$SRC/scripts/image.sh"

ENGINE=${ENGINE:-test}
GAME=${GAME:-test}
JOIN=${JOIN:-traditional} # the test engine's tables are joined as the traditional engine's
BOTS=${BOTS:-40}
GAME_BOUND=${GAME_BOUND:-20}
export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-500}
GATE_DRAIN_WINDOW_MS=${GATE_DRAIN_WINDOW_MS:-1000}
PLAYER_BASE=8000000
SEED_CHIPS=1000000
E2E_DIR=${IMAGE_OUT:-$BUILD/image-rollout}
rm -rf "$E2E_DIR"
mkdir -p "$E2E_DIR"
E2E_FAILURES=()
# Container names carry this run's pid: several runs never meet, and cleanup removes only ours.
CPREFIX=croupier-it-$$
CONTAINERS=()
cleanup() {
    local c
    e2e_cleanup
    for c in "${CONTAINERS[@]}"; do image_podman rm -f -t 0 "$c" >/dev/null 2>&1; done
}
trap cleanup EXIT
declare -A POD_CNAME

# The settings every container of the image gets (k8s/base: securityContext of both
# Deployments), the preStop script where the ConfigMap is mounted, and the CROUPIER_ variables of
# this run (request budgets from lib.sh, the test engine's round length).
run_container() { # run_container NAME HEALTH_PORT BOUND ARGS... (in the background)
    local name=$1 health=$2 bound=$3 envs=() v
    shift 3
    for v in $(compgen -e | grep '^CROUPIER_'); do envs+=(-e "$v"); done
    POD_CNAME[$name]=$CPREFIX-$name
    CONTAINERS+=("${POD_CNAME[$name]}")
    image_podman run --rm --name "${POD_CNAME[$name]}" --network host --read-only \
        --cap-drop all --security-opt no-new-privileges \
        -e "HEALTH_PORT=$health" -e "DRAIN_MAX_SECONDS=$bound" "${envs[@]}" \
        -v "$SRC/k8s/prestop.sh:/etc/croupier/prestop/prestop.sh:ro" \
        -v "$E2E_DIR/secret:/etc/croupier/token/token-secret:ro" \
        "$IMAGE" "$@" >>"${POD_LOG[$name]}" 2>&1 &
    POD_PID[$name]=$!
    E2E_PIDS+=($!)
}

game_start() { # game_start NAME
    local name=$1 port health
    port=$(e2e_free_port)
    health=$(e2e_free_port)
    POD_LOG[$name]=$E2E_DIR/$name.log
    run_container "$name" "$health" "$GAME_BOUND" /usr/local/bin/croupier-game \
        --engine "$ENGINE" --listen "127.0.0.1:$port" --advertise "127.0.0.1:$port" \
        --health-listen "127.0.0.1:$health" --redis "127.0.0.1:$REDIS_PORT" \
        --service "croupier-$ENGINE" --lease-pool-size 16 --lease-ttl-ms 3000 \
        --drain-max-seconds "$GAME_BOUND" --workers 1
    POD_HEALTH[$name]=$health
    POD_PORT[$name]=$port
    POD_KIND[$name]=game
    POD_BOUND[$name]=$GAME_BOUND
    POD_GRACE[$name]=$((GAME_BOUND + 10))
    e2e_wait_ready "$health" 60 || e2e_die "game container $name never became ready (log ${POD_LOG[$name]})"
    e2e_log "container $name up: croupier-game engine=$ENGINE rpc=$port health=$health"
}

gate_start() { # gate_start NAME
    local name=$1 port health
    port=$(e2e_free_port)
    health=$(e2e_free_port)
    POD_LOG[$name]=$E2E_DIR/$name.log
    e2e_gate_prestop "$name" # POD_BOUND / POD_GRACE as k8s/base/gate.yaml derives them
    run_container "$name" "$health" "${POD_BOUND[$name]}" /usr/local/bin/croupier-gate \
        --listen "127.0.0.1:$port" --health-listen "127.0.0.1:$health" \
        --redis "127.0.0.1:$REDIS_PORT" --token-secret-file /etc/croupier/token/token-secret \
        --gate-id "$name" --drain-window-ms "$GATE_DRAIN_WINDOW_MS" --close-timeout-ms 5000
    POD_HEALTH[$name]=$health
    POD_PORT[$name]=$port
    POD_KIND[$name]=gate
    e2e_wait_ready "$health" 60 || e2e_die "gate container $name never became ready (log ${POD_LOG[$name]})"
    e2e_log "container $name up: croupier-gate client=$port health=$health"
}

# kubelet deleting the pod: the preStop hook inside the container, SIGTERM, at most the grace
# period (from the start of the preStop) for the exit, then SIGKILL (a failure).
terminate() { # terminate NAME
    local name=$1 pid=${POD_PID[$1]} c=${POD_CNAME[$1]} t0=$SECONDS st=0
    local deadline=$((SECONDS + POD_GRACE[$1]))
    e2e_log "terminating container $name (grace ${POD_GRACE[$name]}s): preStop"
    timeout "${POD_GRACE[$name]}" "$SRC/scripts/image.sh" podman exec "$c" \
        /bin/sh /etc/croupier/prestop/prestop.sh \
        >>"$E2E_DIR/$name.prestop.log" 2>&1 ||
        E2E_FAILURES+=("container $name: podman exec of the preStop hook failed (see $name.prestop.log)")
    e2e_log "container $name preStop returned after $((SECONDS - t0))s; SIGTERM"
    image_podman kill --signal TERM "$c" >/dev/null 2>&1
    while e2e_alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    if e2e_alive "$pid"; then
        image_podman kill --signal KILL "$c" >/dev/null 2>&1
        wait "$pid" 2>/dev/null
        E2E_FAILURES+=("container $name needed SIGKILL after its grace period")
        return 1
    fi
    wait "$pid" 2>/dev/null || st=$?
    e2e_log "container $name exited status $st after $((SECONDS - t0))s"
    [ "$st" -eq 0 ] || E2E_FAILURES+=("container $name exited with status $st")
}

LIVE_GATES=()
publish() { e2e_endpoints_publish "$E2E_DIR/gateways" "${LIVE_GATES[@]}"; }
remove_gate() {
    local out=() x
    for x in "${LIVE_GATES[@]}"; do [ "$x" != "$1" ] && out+=("$x"); done
    LIVE_GATES=("${out[@]}")
}

# ---- the run -------------------------------------------------------------------------------
T0=$SECONDS
e2e_secret
chmod 0444 "$E2E_DIR/secret" # read by the containers' user 65532
e2e_redis_start
e2e_seed_wallets "$PLAYER_BASE" "$BOTS" "$SEED_CHIPS"
SUM0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
e2e_log "== start: 2 game containers, 2 gateway containers of $IMAGE"
game_start game-v1-1
game_start game-v1-2
gate_start gate-v1-1
gate_start gate-v1-2
LIVE_GATES=(gate-v1-1 gate-v1-2)
publish
VERSION=$(image_podman run --rm --network none "$IMAGE" /usr/local/bin/croupier-game --version |
    awk '{ print $2 }')
ENTRIES=$(for k in $(e2e_redis --scan --pattern '{croupier:registry}:server:*'); do e2e_redis get "$k"; done)
GATE_ENTRIES=$(for k in $(e2e_redis --scan --pattern '{croupier:gates}:*'); do e2e_redis get "$k"; done)

e2e_log "== bots start ($BOTS playing $GAME)"
"$BUILD/bots/croupier-bot" --gateways "@$E2E_DIR/gateways" --bots "$BOTS" --game "$GAME" \
    --engine "$JOIN" --seconds 86400 --player-base "$PLAYER_BASE" \
    --token-secret-file "$E2E_DIR/secret" --report "$E2E_DIR/report.json" \
    --rounds-file "$E2E_DIR/rounds.txt" --progress-ms 1000 \
    --finish-timeout-ms $((GAME_BOUND * 2000)) >"$E2E_DIR/bot.log" 2>&1 &
BOT_PID=$!
E2E_PIDS+=($!)
sleep 4

# The game container with the most seated players (its registry entry's load) is rolled, so
# that the drain has players to move.
load_of() { # load_of NAME: the "load" of the registry entry whose address is NAME's
    for k in $(e2e_redis --scan --pattern '{croupier:registry}:server:*'); do e2e_redis get "$k"; done |
        python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d["address"] == sys.argv[1]:
        print(d["load"])' "127.0.0.1:${POD_PORT[$1]}"
}
OLD_GAME=
for _ in $(seq 1 100); do
    l1=$(load_of game-v1-1) l2=$(load_of game-v1-2)
    if [ "${l1:-0}" -gt 0 ] || [ "${l2:-0}" -gt 0 ]; then
        OLD_GAME=game-v1-1
        [ "${l2:-0}" -gt "${l1:-0}" ] && OLD_GAME=game-v1-2
        break
    fi
    sleep 0.1
done
[ -n "$OLD_GAME" ] || e2e_die "no game container has seated players 10 s after the bots started"
e2e_log "== roll one game server: surge game-v2-1, then terminate $OLD_GAME (load $l1 / $l2)"
game_start game-v2-1
terminate "$OLD_GAME"
sleep 2
e2e_log "== roll one gateway: surge gate-v2-1, then terminate gate-v1-1"
gate_start gate-v2-1
LIVE_GATES+=(gate-v2-1)
remove_gate gate-v1-1 # the Service's endpoints drop the pod when its deletion starts
publish
terminate gate-v1-1
sleep 3

e2e_log "== bots stop"
kill -TERM "$BOT_PID"
BOT_STATUS=0
wait "$BOT_PID" || BOT_STATUS=$?
e2e_log "== scale down"
for n in gate-v1-2 gate-v2-1 game-v1-1 game-v1-2 game-v2-1; do
    [ "$n" = "$OLD_GAME" ] || terminate "$n"
done
ELAPSED=$((SECONDS - T0))

# ---- checks --------------------------------------------------------------------------------
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then
        echo "ok   $1"
    else
        echo "FAIL $1"
        fail=1
    fi
}
rep() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$E2E_DIR/report.json" "$1"; }
if [ -s "$E2E_DIR/report.json" ]; then
    check "croupier-bot exit status 0 (was $BOT_STATUS)" test "$BOT_STATUS" -eq 0
    check "finished games > 0 ($(rep 'd["games"]["finished"]'))" test "$(rep 'd["games"]["finished"]')" -gt 0
    check "torn games = 0 ($(rep 'd["games"]["torn"]'))" test "$(rep 'd["games"]["torn"]')" -eq 0
    check "unexpected client errors = 0 ($(rep 'd["unexpected_errors"]'))" test "$(rep 'd["unexpected_errors"]')" -eq 0
    check "bots moved off the drained game container ($(rep 'd["counters"]["moves"]') moves)" \
        test "$(rep 'd["counters"]["moves"]')" -gt 0
    check "bots reconnected after the gateway's GoAways ($(rep 'd["reconnects"]["after_goaway"]'))" \
        test "$(rep 'd["reconnects"]["after_goaway"]')" -gt 0
else
    check "croupier-bot wrote its report (log $E2E_DIR/bot.log)" false
fi
read -r fin missing void settled <<<"$(e2e_rounds_check "$E2E_DIR/rounds.txt")"
check "every finished round has its settlement in Redis ($fin rounds, $missing missing)" test "$missing" -eq 0
check "no voided round was settled ($void voided, $settled settled)" test "$settled" -eq 0
SUM1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
check "sum of wallets + rake unchanged ($SUM0 -> $SUM1)" test "$SUM0" -eq "$SUM1"
for n in game-v1-1 game-v1-2 game-v2-1 gate-v1-1 gate-v1-2 gate-v2-1; do
    check "container $n: exit reason=$(e2e_exit_reason "$n")" test "$(e2e_exit_reason "$n")" = drained
done
nentries=$(grep -c '"version"' <<<"$ENTRIES")
nversion=$(grep -cF "\"version\":\"$VERSION\"" <<<"$ENTRIES")
check "the game containers' registry entries carry the image's version $VERSION ($nversion of $nentries)" \
    test "$nentries" -eq 2 -a "$nversion" -eq 2
nentries=$(grep -c '"version"' <<<"$GATE_ENTRIES")
nversion=$(grep -cF "\"version\":\"$VERSION\"" <<<"$GATE_ENTRIES")
check "the gateway containers' entries carry the image's version $VERSION ($nversion of $nentries)" \
    test "$nentries" -eq 2 -a "$nversion" -eq 2
# chips at a table live in seat accounts (hold'em's hs.*, the table kit's ts.*; in the wallet sum
# above): every table closed on its drain, so all must be back at 0
for glob in 'hs.*' 'ts.*'; do
    read -r nacc left <<<"$(e2e_accounts_left "$glob")"
    check "seat accounts $glob all back at 0 ($nacc accounts, $left not)" test "$left" -eq 0
done
check "nothing is left held ($(e2e_redis scard '{croupier:money}:held'))" \
    test "$(e2e_redis scard '{croupier:money}:held')" -eq 0
for f in "${E2E_FAILURES[@]}"; do check "$f" false; done
echo "info image rollout: $ELAPSED s from the first container to the last exit; files in $E2E_DIR"
exit $fail
