#!/usr/bin/env bash
# Rolling-update harness (issue 10): emulates Kubernetes Deployment rollouts with
# maxSurge 1 / maxUnavailable 0 and kubelet's termination, on one machine, while croupier-bot
# plays through the gateways.
#
# For each old pod of a deployment, one at a time: start the new pod process, wait for its
# /readyz, (gateways: publish it in the bots' endpoint list and withdraw the old one, as a
# Service's endpoints do), then terminate the old pod as kubelet does: the real k8s/prestop.sh
# under `busybox sh`, SIGTERM, up to terminationGracePeriodSeconds, SIGKILL if still alive (a
# failure). The game deployments roll first (one per engine in ENGINES), then the gateway
# deployment. Bots: one croupier-bot per game (test engine: game "test"; traditional engine:
# Dou Dizhu and Guandan; holdem engine: hold'em; persistent engine: blackjack; zhajinhua and
# niuniu engines, on the table kit: Zha Jin Hua and Niu Niu, joined as ENGINE_GAME; each engine's
# games and Join from its folder's e2e.env, tests/e2e/lib.sh e2e_engine_desc), each with its own
# report, all playing
# at once through every roll. After the first rollout of every deployment, the crash step
# (crash_step below): one game server of every engine and one gateway are SIGKILLed once and
# replaced, and the harness waits until the killed servers' held chips are back in the wallets.
#
# Asserts: croupier-bot exits 0 with zero torn games and zero unexpected errors (GoAway
# reconnects are counted apart), the bots saw finished games, table moves and GoAways (so the
# rollout really happened under play), settlements reconcile with wallets (the sum of every
# wallet is unchanged; every finished round the bots saw has exactly one settle record; no
# voided round has one), no pod needed SIGKILL, and every pod logged `exit reason=drained`.
# The crash step: rounds the bots saw crash-voided are expected (not torn: torn stays 0, and no
# unexpected error either); every engine's killed server had players told and moved (crash
# closings), the killed gateway's bots reconnected (reconnects after a lost connection), every
# killed server's held epoch left {croupier:money}:held (its chips back in the wallets: wallets
# + rake equal what was seeded), every crash-voided hand history (VOID_SERVER_CRASHED) is a
# killed epoch's round without a settle record, and nothing is held when every pod has exited.
# Blackjack's money lives in one more wallet: the house wallet house.croupier-persistent, funded
# once (fixed operation id) by the first persistent pod, so the expected sum is the seeded sum
# plus CROUPIER_BJ_HOUSE_FUND. Blackjack, Zha Jin Hua and Niu Niu (the table kit) buy in from the
# wallets into seat accounts ts.* (in the wallet sum; blackjack's ts.croupier-persistent.*), all
# back at 0 once every table has closed on its drain and the bots have left. Niu Niu rakes its
# winners into {croupier:money}:rake:niuniu, in the money check with every rake account.
# It samples /drain/status and /metrics of every live pod every 250 ms and writes a report with
# a chart (gnuplot SVG; ./dev installs gnuplot-nox); a check fails unless chart.svg is a valid SVG.
#
#   tests/e2e/rollout.sh BUILD_DIR [SOURCE_DIR]
# Env:
#   ROLLOUT_SOAK=1        long soak: more bots, longer rounds, ROLLOUT_CYCLES rollouts; runs
#                         only with CROUPIER_SOAK=1 too (else exit 77 = skipped), so the suite
#                         entry `rollout_soak` is opt-in
#   ROLLOUT_CYCLES        rollouts of every deployment (default 1; soak 5)
#   BOTS                  bots per game (default 60; soak 300)
#   CROUPIER_TEST_ROUND_MS  round length of the test engine (default 500; soak 3000)
#   GAME_REPLICAS / GATE_REPLICAS  replicas per deployment (default 2 / 2)
#   ENGINES               game deployments to roll (default "test traditional holdem
#                         persistent zhajinhua niuniu"; an engine without a description is an
#                         error, exit 2)
#   CROUPIER_ZHAJINHUA_GAP_MS  pause between Zha Jin Hua hands (default 200; soak 1000)
#   CROUPIER_NIUNIU_GAP_MS / _ACTION_MS  Niu Niu's pause between rounds and its windows
#                         (default 200 / 1500; soak 1000 / 3000)
#   Drain bounds: GAME_BOUND (20 s; soak 60 s) for every engine but persistent, whose bound in
#   the soak is its real 120 s (docs/architecture.md §4) with a 180 s grace period (short test:
#   GAME_BOUND too, with the blackjack timers CROUPIER_BJ_BET_MS/_ACTION_MS/_GAP_MS short like
#   the test engine's rounds);
#   the traditional engine's is TRAD_BOUND (short test 45 s: a margin over a Guandan deal of a
#   few seconds at TRAD_THINK_PERCENT, on loaded cores with ASan; soak GAME_BOUND)
#   TRAD_THINK_PERCENT    the Dou Dizhu and Guandan bots' pace (croupier-bot --think-percent;
#                         default 25)
#   ROLLOUT_OUT           where the run's files go (default BUILD_DIR/e2e-rollout)
set -u
BUILD=$(cd "${1:?usage: rollout.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"

SOAK=${ROLLOUT_SOAK:-0}
if [ "$SOAK" = 1 ] && [ "${CROUPIER_SOAK:-0}" != 1 ]; then
    echo "rollout soak skipped: opt in with CROUPIER_SOAK=1" >&2
    exit 77
fi
if [ "$SOAK" = 1 ]; then
    CYCLES=${ROLLOUT_CYCLES:-5}
    BOTS=${BOTS:-300}
    export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-3000}
    GAME_BOUND=${GAME_BOUND:-60}
    PLAY_BETWEEN=${PLAY_BETWEEN:-20}
    BJ_BOUND=${BJ_BOUND:-120}
    BJ_GRACE=${BJ_GRACE:-180}
    TRAD_BOUND=${TRAD_BOUND:-$GAME_BOUND}
    export CROUPIER_BJ_BET_MS=${CROUPIER_BJ_BET_MS:-3000} CROUPIER_BJ_ACTION_MS=${CROUPIER_BJ_ACTION_MS:-5000}
    export CROUPIER_BJ_GAP_MS=${CROUPIER_BJ_GAP_MS:-1000}
    export CROUPIER_ZHAJINHUA_GAP_MS=${CROUPIER_ZHAJINHUA_GAP_MS:-1000}
    export CROUPIER_NIUNIU_GAP_MS=${CROUPIER_NIUNIU_GAP_MS:-1000}
    export CROUPIER_NIUNIU_ACTION_MS=${CROUPIER_NIUNIU_ACTION_MS:-3000}
else
    CYCLES=${ROLLOUT_CYCLES:-1}
    BOTS=${BOTS:-60}
    export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-500}
    GAME_BOUND=${GAME_BOUND:-20}
    PLAY_BETWEEN=${PLAY_BETWEEN:-2}
    BJ_BOUND=${BJ_BOUND:-$GAME_BOUND}
    BJ_GRACE=${BJ_GRACE:-$((BJ_BOUND + 10))}
    # a Guandan deal (108 cards, 100 and more moves) takes seconds at the bots' pace below
    # (ENGINE_THINK), several times that on loaded shared cores with ASan: a wide margin
    TRAD_BOUND=${TRAD_BOUND:-45}
    export CROUPIER_BJ_BET_MS=${CROUPIER_BJ_BET_MS:-500} CROUPIER_BJ_ACTION_MS=${CROUPIER_BJ_ACTION_MS:-2000}
    export CROUPIER_BJ_GAP_MS=${CROUPIER_BJ_GAP_MS:-200}
    export CROUPIER_ZHAJINHUA_GAP_MS=${CROUPIER_ZHAJINHUA_GAP_MS:-200}
    export CROUPIER_NIUNIU_GAP_MS=${CROUPIER_NIUNIU_GAP_MS:-200}
    export CROUPIER_NIUNIU_ACTION_MS=${CROUPIER_NIUNIU_ACTION_MS:-1500}
fi
export CROUPIER_BJ_HOUSE_FUND=${CROUPIER_BJ_HOUSE_FUND:-100000000}
GAME_REPLICAS=${GAME_REPLICAS:-2}
ENGINES=${ENGINES:-test traditional holdem persistent zhajinhua niuniu}
# The games the bots play on each engine (one croupier-bot per game), the engine their Join
# names, the seat accounts and a house wallet to seed: the engine's e2e.env (the variables set
# above are kept; the description's env lines fill in only what is unset).
declare -A ENGINE_GAMES ENGINE_JOIN ENGINE_SEATS ENGINE_HOUSE_SEED
for e in $ENGINES; do
    e2e_engine_desc "$e" || exit 2
    ENGINE_GAMES[$e]=$E2E_ROLLOUT_GAMES
    ENGINE_JOIN[$e]=$E2E_JOIN
    ENGINE_SEATS[$e]=$E2E_SEAT_ACCOUNTS
    ENGINE_HOUSE_SEED[$e]=$E2E_HOUSE_SEED
done
declare -A ENGINE_BOUND=([persistent]=$BJ_BOUND [traditional]=$TRAD_BOUND)
# the bots' pace (croupier-bot --think-percent, docs/bots.md "Pace"): at 100 a Guandan deal of
# bot moves takes ~20 s, and a drain waits for the longest deal under way (on the CI's shared
# cores with ASan that outlasted the 45 s bound); a quarter of it keeps deals of a few seconds
declare -A ENGINE_THINK=([traditional]=${TRAD_THINK_PERCENT:-25})
declare -A ENGINE_GRACE=([persistent]=$BJ_GRACE)
declare -A POD_ENGINE
GATE_REPLICAS=${GATE_REPLICAS:-2}
GATE_DRAIN_WINDOW_MS=${GATE_DRAIN_WINDOW_MS:-1000}
GATE_CLOSE_TIMEOUT_MS=5000
PLAYER_BASE=7000000
SEED_CHIPS=1000000
# The game servers' lease TTL (a dead server's registry entry expires within it: the gateways'
# detection) and the sweepers' grace after a dead server's lease expired (default 2 x TTL, the
# time a server whose Redis blipped has to take its slot back; no Redis restarts here). A killed
# server's chips are back within TTL + grace + one sweep.
LEASE_TTL_MS=3000
RECOVER_GRACE_MS=${RECOVER_GRACE_MS:-2000}

if [ "$SOAK" = 1 ]; then
    E2E_DIR=${ROLLOUT_OUT:-$BUILD/e2e-soak}
else
    E2E_DIR=${ROLLOUT_OUT:-$BUILD/e2e-rollout}
fi
rm -rf "$E2E_DIR"
mkdir -p "$E2E_DIR"
E2E_FAILURES=()
T0=$(date +%s.%N)
POLL_PID=
trap 'touch "$E2E_DIR/STOP"; e2e_cleanup' EXIT

step() {
    printf '%.2f\t%s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*" >>"$E2E_DIR/steps.tsv"
    e2e_log "== $*"
}

# The live pods file the poller reads: "name kind health_port".
pods_publish() {
    local n
    : >"$E2E_DIR/pods.tmp"
    for n in "${LIVE[@]}"; do
        echo "$n ${POD_KIND[$n]} ${POD_HEALTH[$n]}" >>"$E2E_DIR/pods.tmp"
    done
    mv "$E2E_DIR/pods.tmp" "$E2E_DIR/pods"
}

# The gateways' Service endpoints as the bots see them.
endpoints_publish() {
    local n
    : >"$E2E_DIR/gateways.tmp"
    for n in "${ENDPOINTS[@]}"; do
        echo "127.0.0.1:${POD_PORT[$n]}" >>"$E2E_DIR/gateways.tmp"
    done
    mv "$E2E_DIR/gateways.tmp" "$E2E_DIR/gateways"
}

LIVE=()
ENDPOINTS=()
remove_from() { # remove_from ARRAY_NAME VALUE
    local -n arr=$1
    local out=() x
    for x in "${arr[@]}"; do [ "$x" != "$2" ] && out+=("$x"); done
    arr=("${out[@]}")
}

start_game_pod() { # start_game_pod NAME ENGINE
    e2e_game_start "$1" "$2" "${ENGINE_BOUND[$2]:-$GAME_BOUND}" --service "croupier-$2" \
        --lease-pool-size 16 --lease-ttl-ms "$LEASE_TTL_MS" --recover-grace-ms "$RECOVER_GRACE_MS" \
        --sweep-ms 250
    [ -n "${ENGINE_GRACE[$2]:-}" ] && POD_GRACE[$1]=${ENGINE_GRACE[$2]}
    POD_ENGINE[$1]=$2
    LIVE+=("$1")
    pods_publish
}

start_gate_pod() {
    e2e_gate_start "$1"
    # the gateway's preStop bound (k8s/base/gate.yaml): drain window + close timeout
    POD_BOUND[$1]=$(((GATE_DRAIN_WINDOW_MS + GATE_CLOSE_TIMEOUT_MS + 999) / 1000))
    POD_GRACE[$1]=$((POD_BOUND[$1] + (GATE_DRAIN_WINDOW_MS + GATE_CLOSE_TIMEOUT_MS) / 1000 + 15))
    LIVE+=("$1")
    ENDPOINTS+=("$1")
    pods_publish
    endpoints_publish
}

# kubelet terminates NAME; the endpoint is withdrawn when the deletion starts.
stop_pod() {
    remove_from ENDPOINTS "$1"
    endpoints_publish
    e2e_pod_terminate "$1"
    remove_from LIVE "$1"
    pods_publish
    ALL_PODS+=("$1")
}
ALL_PODS=()

# roll_deployment KIND VERSION [ENGINE]: replaces every live pod of KIND (and ENGINE) with a
# VERSION pod, one at a time, surge first.
roll_deployment() {
    local kind=$1 ver=$2 engine=${3:-} old=() n i=0 dep=$1
    [ -n "$engine" ] && dep="$kind-$engine"
    for n in "${LIVE[@]}"; do
        [ "${POD_KIND[$n]}" = "$kind" ] && [ -z "$engine" -o "${POD_ENGINE[$n]:-}" = "$engine" ] &&
            old+=("$n")
    done
    step "roll $dep deployment to $ver (${#old[@]} pods)"
    for n in "${old[@]}"; do
        i=$((i + 1))
        local new="$dep-$ver-$i"
        step "surge: start $new"
        if [ "$kind" = game ]; then start_game_pod "$new" "$engine"; else start_gate_pod "$new"; fi
        step "terminate $n"
        stop_pod "$n"
        step "$n gone"
    done
}

# ---- the crash step (issue 15) -------------------------------------------------------------
# Once, after the first rollout of every deployment: one game server of every engine (of each,
# the pod holding the most in {croupier:money}:held) and the gateway with the most connections
# are SIGKILLed -- no preStop, no SIGTERM -- and replaced as a ReplicaSet would (a pod named
# <old>-r; started first when the engine has no other pod, so that its players can be moved).
# Then the gateways find each dead server gone within the lease TTL and move its players
# (TableClosing{CLOSING_CRASHED}, Moved), a sweeper returns its held chips once its lease expired
# and the grace (RECOVER_GRACE_MS) passed, voiding its rounds in progress in the hand history
# (VOID_SERVER_CRASHED), and the dead gateway's bots reconnect to another one and resume.
# docs/gateway.md "When a game server dies", docs/queues.md "Where every chip is".
CRASHED=()
CRASH_GAMES=()
declare -A CRASH_MEMBER CRASH_SEATS CRASH_T CRASH_MS
now_ms() { date +%s%3N; }
held_member() { # NAME: "<service>:<slot>:<epoch>", the game pod's member of the held index
    local slot epoch
    read -r slot epoch <<<"$(e2e_lease_of "$1")"
    echo "croupier-${POD_ENGINE[$1]}:$slot:$epoch"
}
crash_kill() { # NAME: SIGKILL, reaped; out of the live pods and the endpoints at once
    kill -KILL "${POD_PID[$1]}" 2>/dev/null
    wait "${POD_PID[$1]}" 2>/dev/null
    CRASH_T[$1]=$(now_ms)
    remove_from LIVE "$1"
    remove_from ENDPOINTS "$1"
    pods_publish
    endpoints_publish
    CRASHED+=("$1")
}
crash_step() {
    local e n m h best bestn g left deadline victims=() later=()
    declare -A alive
    for n in "${LIVE[@]}"; do
        [ "${POD_KIND[$n]}" = game ] || continue
        e=${POD_ENGINE[$n]}
        alive[$e]=$((${alive[$e]:-0} + 1))
    done
    for e in $ENGINES; do
        best= bestn=-1
        for n in "${LIVE[@]}"; do
            [ "${POD_KIND[$n]}" = game ] && [ "${POD_ENGINE[$n]}" = "$e" ] || continue
            m=$(held_member "$n")
            h=$(e2e_redis hlen "{croupier:money}:held:$m")
            [ "$h" -gt "$bestn" ] && best=$n bestn=$h
        done
        [ -n "$best" ] || continue
        victims+=("$best")
        CRASH_MEMBER[$best]=$(held_member "$best")
        CRASH_SEATS[$best]=$(e2e_redis hkeys "{croupier:money}:held:${CRASH_MEMBER[$best]}" |
            grep -vc '^r:')
        if [ "${alive[$e]}" -lt 2 ]; then
            step "crash: start $best-r first (no other $e pod)"
            start_game_pod "$best-r" "$e"
        else
            later+=("$best")
        fi
    done
    step "crash: SIGKILL ${victims[*]}"
    for n in "${victims[@]}"; do crash_kill "$n"; done
    CRASH_GAMES=("${victims[@]}")
    for n in "${victims[@]}"; do
        e2e_log "crash: $n SIGKILLed (held epoch ${CRASH_MEMBER[$n]}," \
            "${CRASH_SEATS[$n]} seat accounts)"
    done
    for n in "${later[@]}"; do
        step "crash: replace $n with $n-r"
        start_game_pod "$n-r" "${POD_ENGINE[$n]}"
    done
    # the gateways find the servers gone within the lease TTL: then one gateway dies
    while (($(now_ms) < CRASH_T[${victims[0]}] + LEASE_TTL_MS + 1000)); do sleep 0.1; done
    best= bestn=-1
    for n in "${ENDPOINTS[@]}"; do
        h=$(e2e_get "${POD_HEALTH[$n]}/metrics" 1 |
            awk '$1 == "gate_connections" { print int($2) }')
        [ "${h:-0}" -gt "$bestn" ] && best=$n bestn=${h:-0}
    done
    g=$best
    step "crash: SIGKILL $g ($bestn connections)"
    crash_kill "$g"
    step "crash: replace $g with $g-r"
    start_gate_pod "$g-r"
    e2e_wait_crash_recovered sleep "${victims[@]}"
    step "crash: the killed servers' chips are back"
}

# ---- setup -------------------------------------------------------------------------------
ulimit -c unlimited 2>/dev/null # keep a crashing pod's core in its directory for a backtrace
command -v gnuplot >/dev/null ||
    e2e_log "gnuplot missing (./dev installs gnuplot-nox): the chart check below will fail"
e2e_secret
e2e_redis_start
declare -A BOT_BASE
base=$PLAYER_BASE
for e in $ENGINES; do
    for g in ${ENGINE_GAMES[$e]}; do
        BOT_BASE[$g]=$base
        e2e_seed_wallets "$base" "$BOTS" $SEED_CHIPS
        base=$((base + 100000))
    done
done
# the house wallets the engines' server bots play from (the traditional engine's)
for e in $ENGINES; do
    h=${ENGINE_HOUSE_SEED[$e]}
    [ -n "$h" ] && e2e_redis set "{croupier:money}:wallet:${h%%:*}" "${h#*:}" >/dev/null
done
SUM0=$(e2e_wallet_sum)
python3 "$SRC/tests/e2e/poll.py" "$E2E_DIR/pods" "$E2E_DIR/samples.jsonl" 0.25 "$T0" &
POLL_PID=$!
E2E_PIDS+=("$POLL_PID")
step "start v1 pods"
for e in $ENGINES; do
    for ((i = 1; i <= GAME_REPLICAS; i++)); do start_game_pod "game-$e-v1-$i" "$e"; done
done
for ((i = 1; i <= GATE_REPLICAS; i++)); do start_gate_pod "gate-v1-$i"; done
BJ_HOUSE='{croupier:money}:wallet:house.croupier-persistent'
if [[ " $ENGINES " == *" persistent "* ]]; then
    # the first persistent pod funds the house (asynchronously, once for the service)
    for _ in $(seq 1 100); do
        [ "$(e2e_redis exists "$BJ_HOUSE")" = 1 ] && break
        sleep 0.1
    done
    SUM0=$((SUM0 + CROUPIER_BJ_HOUSE_FUND))
fi

step "bots start"
declare -A BOT_PID
for e in $ENGINES; do
    for g in ${ENGINE_GAMES[$e]}; do
        "$BUILD/bots/croupier-bot" --gateways "@$E2E_DIR/gateways" --bots "$BOTS" --game "$g" \
            --engine "${ENGINE_JOIN[$e]}" --seconds 86400 --player-base "${BOT_BASE[$g]}" \
            --token-secret-file "$E2E_DIR/secret" --report "$E2E_DIR/report-$g.json" \
            --rounds-file "$E2E_DIR/rounds-$g.txt" --progress-ms 250 \
            --think-percent "${ENGINE_THINK[$e]:-100}" \
            --finish-timeout-ms $((${ENGINE_BOUND[$e]:-$GAME_BOUND} * 1000 * 2)) \
            >"$E2E_DIR/bot-$g.log" 2>&1 &
        BOT_PID[$g]=$!
        E2E_PIDS+=($!)
    done
done
sleep $((PLAY_BETWEEN + 1))

for ((c = 2; c <= CYCLES + 1; c++)); do
    for e in $ENGINES; do
        roll_deployment game "v$c" "$e"
        sleep "$PLAY_BETWEEN"
    done
    roll_deployment gate "v$c"
    [ "$c" = 2 ] && crash_step
    sleep "$PLAY_BETWEEN"
done

step "bots stop"
declare -A BOT_STATUS
for g in "${!BOT_PID[@]}"; do kill -TERM "${BOT_PID[$g]}"; done
for g in "${!BOT_PID[@]}"; do
    BOT_STATUS[$g]=0
    wait "${BOT_PID[$g]}" || BOT_STATUS[$g]=$?
done
step "bots exited"
step "scale down"
for n in "${LIVE[@]}"; do [ "${POD_KIND[$n]}" = gate ] && stop_pod "$n"; done
for n in "${LIVE[@]}"; do stop_pod "$n"; done
touch "$E2E_DIR/STOP"
wait "$POLL_PID" 2>/dev/null

# ---- checks ------------------------------------------------------------------------------
fail=0
declare -A CRASH_CLOSINGS GAME_ENGINE
AFTER_LOSS=0
for e in $ENGINES; do for g in ${ENGINE_GAMES[$e]}; do GAME_ENGINE[$g]=$e; done; done
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then
        echo "ok   $1" >>"$E2E_DIR/checks.txt"
    else
        echo "FAIL $1" >>"$E2E_DIR/checks.txt"
        fail=1
    fi
}
: >"$E2E_DIR/checks.txt"
for g in "${!BOT_PID[@]}"; do
    R=$E2E_DIR/report-$g.json
    rep() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$R" "$1"; }
    if [ ! -s "$R" ]; then
        check "$g: croupier-bot wrote its report" false
        continue
    fi
    check "$g: croupier-bot exit status 0 (was ${BOT_STATUS[$g]})" test "${BOT_STATUS[$g]}" -eq 0
    check "$g: finished games > 0 ($(rep 'd["games"]["finished"]'))" test "$(rep 'd["games"]["finished"]')" -gt 0
    check "$g: torn games = 0 ($(rep 'd["games"]["torn"]'))" test "$(rep 'd["games"]["torn"]')" -eq 0
    check "$g: unexpected client errors = 0 ($(rep 'd["unexpected_errors"]') $(rep '",".join("%s:%d" % (k, v["unexpected"]) for k, v in d["errors"].items() if v["unexpected"])'))" test "$(rep 'd["unexpected_errors"]')" -eq 0
    if [ "$(rep 'd["unexpected_errors"]')" -ne 0 ]; then
        grep -E '"level":"(warn|error)"' "$E2E_DIR/bot-$g.log" | grep -v bot_connection_dropped |
            tail -n 20 | sed "s/^/  bot-$g: /" || true
    fi
    check "$g: bots were moved off draining game pods ($(rep 'd["counters"]["moves"]') moves)" test "$(rep 'd["counters"]["moves"]')" -gt 0
    check "$g: bots reconnected after GoAways ($(rep 'd["reconnects"]["after_goaway"]'))" test "$(rep 'd["reconnects"]["after_goaway"]')" -gt 0
    # whole-table moves (docs/protocol.md): the tables the rollouts moved kept their seats
    check "$g: no match state lost across $(rep 'd["counters"]["table_moves"]') whole-table moves ($(rep 'd["counters"]["match_state_lost"]'))" test "$(rep 'd["counters"]["match_state_lost"]')" -eq 0
    # the crash step: rounds voided by a killed server are expected (crash_voided, not torn)
    read -r cv cc mv al <<<"$(rep '"%d %d %d %d" % (d["games"]["crash_voided"],
        d["counters"]["crash_closings"], d["counters"]["moves"], d["reconnects"]["after_loss"])')"
    echo "info $g: crash step: $cv rounds crash-voided (per bot seat), $cc crash closings," \
        "$mv moves, $al reconnects after a lost connection" >>"$E2E_DIR/checks.txt"
    e=${GAME_ENGINE[$g]}
    CRASH_CLOSINGS[$e]=$((${CRASH_CLOSINGS[$e]:-0} + cc))
    AFTER_LOSS=$((AFTER_LOSS + al))
done
if [ ${#CRASHED[@]} -gt 0 ]; then
    for e in $ENGINES; do
        cc=${CRASH_CLOSINGS[$e]:-0}
        check "crash: the gateways told the killed $e server's players and moved them ($cc crash closings)" \
            test "$cc" -gt 0
    done
    check "crash: the killed gateway's bots reconnected to another one and resumed ($AFTER_LOSS)" \
        test "$AFTER_LOSS" -gt 0
fi
for f in "${E2E_FAILURES[@]}"; do check "$f" false; done
for w in "${E2E_WARNINGS[@]}"; do echo "warn $w" >>"$E2E_DIR/checks.txt"; done
for n in "${ALL_PODS[@]}"; do
    check "pod $n logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$n]}"
done
SUM1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
check "sum of wallets + rake unchanged ($SUM0 -> $SUM1)" test "$SUM0" -eq "$SUM1"
# The crash step: every killed server's held epoch left the index (its chips are back in the
# wallets: in the sum above), recovered by a sweeper; its rounds in progress voided in the hand
# history and never settled; nothing is held by anyone now that every pod has exited.
members=()
for n in "${CRASHED[@]}"; do
    if [ "${POD_KIND[$n]}" != game ]; then
        echo "info pod $n (gateway) SIGKILLed by the crash step" >>"$E2E_DIR/checks.txt"
        continue
    fi
    m=${CRASH_MEMBER[$n]}
    members+=("$m")
    # what the pods logged of recovering it (money_recovered, modes dead/claim, status 0)
    rec=$(cat "$E2E_DIR"/*.log | grep -F '"money_recovered"' | grep -F "\"service\":\"${m%%:*}\"" |
        python3 -c '
import json, sys
slot, epoch = sys.argv[1].split(":")[-2:]
chips = voided = 0
modes = set()
for line in sys.stdin:
    d = json.loads(line[line.index("{"):])
    if str(d["slot"]) == slot and str(d["epoch"]) == epoch and d["status"] == 0 and d["mode"] != "self":
        chips += d["chips"]; voided += d["voided"]; modes.add(d["mode"])
print("%d chips, %d rounds voided, by %s" % (chips, voided, "+".join(sorted(modes)) or "nobody"))' "$m")
    what="$n's held epoch $m (${CRASH_SEATS[$n]} seat accounts at the kill) left the index"
    check "crash: $what: chips back ${CRASH_MS[$n]:-never} ms after the kill ($rec)" \
        test -n "${CRASH_MS[$n]:-}" -a "$(e2e_redis sismember '{croupier:money}:held' "$m")" = 0
done
if [ ${#CRASHED[@]} -gt 0 ]; then
    # crash-voided hand histories: every {croupier:history:<game>}:stream entry with
    # "void_reason":"VOID_SERVER_CRASHED"; each must be a killed epoch's round
    # ("<service>:<slot>:<epoch>:<desk>:<seq>") without a settle record
    for k in $(e2e_redis --scan --pattern '{croupier:history:*}:stream'); do
        e2e_redis xrange "$k" - +
    done | python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{") and "VOID_SERVER_CRASHED" in line:
        d = json.loads(line)
        if d.get("void_reason") == "VOID_SERVER_CRASHED":
            print(d["round"])' | sort -u >"$E2E_DIR/crash-voids.txt"
    ncv=$(wc -l <"$E2E_DIR/crash-voids.txt")
    # (a round id without its last two fields, desk and seq, is its epoch's member)
    cv_killed=$(awk -v m=" ${members[*]} " '{ r = $1; sub(/:[^:]*:[^:]*$/, "", r)
        if (index(m, " " r " ")) n++ } END { print n + 0 }' "$E2E_DIR/crash-voids.txt")
    cv_settled=0
    [ "$ncv" -gt 0 ] && cv_settled=$(sed 's/^/EXISTS {croupier:money}:round:/' \
        "$E2E_DIR/crash-voids.txt" | e2e_redis | grep -c '^1$')
    what="$ncv crash-voided rounds in the hand histories (VOID_SERVER_CRASHED)"
    check "crash: $what, all of killed epochs ($cv_killed) and none settled ($cv_settled)" \
        test "$cv_killed" -eq "$ncv" -a "$cv_settled" -eq 0
fi
check "nothing is left held: {croupier:money}:held is empty ($(e2e_redis scard '{croupier:money}:held'))" \
    test "$(e2e_redis scard '{croupier:money}:held')" -eq 0
if [[ " $ENGINES " == *" persistent "* ]]; then
    check "blackjack: house wallet funded once ($(e2e_redis get "$BJ_HOUSE"))" \
        test "$(e2e_redis exists "$BJ_HOUSE")" = 1
    read -r nbjs bjs_left <<<"$(e2e_accounts_left 'ts.croupier-persistent.*')"
    check "blackjack: every seat account ts.croupier-persistent.* back at 0 ($nbjs accounts, $bjs_left not)" \
        test "$bjs_left" -eq 0 -a "$nbjs" -gt 0
fi
# every engine whose tables buy into seat accounts (its e2e.env): all back at 0, and there
nseated=0
for e in $ENGINES; do [ "${ENGINE_SEATS[$e]}" = none ] || nseated=$((nseated + 1)); done
if [ "$nseated" -gt 0 ]; then
    read -r nts ts_left <<<"$(e2e_accounts_left 'ts.*')"
    check "table-kit seat accounts ts.* all back at 0 ($nts accounts, $ts_left not)" \
        test "$nts" -gt 0 -a "$ts_left" -eq 0
fi
for g in "${!BOT_PID[@]}"; do
    [ -f "$E2E_DIR/rounds-$g.txt" ] || continue
    awk '$2 == "finished" { print "EXISTS {croupier:money}:round:" $1 }' "$E2E_DIR/rounds-$g.txt" |
        e2e_redis >"$E2E_DIR/finished-exists-$g.txt"
    nfin=$(wc -l <"$E2E_DIR/finished-exists-$g.txt")
    missing=$(grep -vc '^1$' "$E2E_DIR/finished-exists-$g.txt")
    check "$g: every finished round the bots saw has its settlement in Redis ($nfin rounds, $missing missing)" test "$missing" -eq 0
    awk '$2 == "voided" { print "EXISTS {croupier:money}:round:" $1 }' "$E2E_DIR/rounds-$g.txt" |
        e2e_redis >"$E2E_DIR/voided-exists-$g.txt"
    settled=$(grep -c '^1$' "$E2E_DIR/voided-exists-$g.txt")
    check "$g: no voided round was settled ($(wc -l <"$E2E_DIR/voided-exists-$g.txt") voided, $settled settled)" test "$settled" -eq 0
    read -r unseen unaccounted <<<"$(e2e_unseen_check "$E2E_DIR/rounds-$g.txt")"
    check "$g: every round that ended while its bot reconnected was finished ($unseen rounds, $unaccounted not)" test "$unaccounted" -eq 0
done
records=$(e2e_redis --scan --pattern '{croupier:money}:round:*' | wc -l)
echo "settle records in Redis: $records (one per round id: the key is the id)" >>"$E2E_DIR/checks.txt"
python3 "$SRC/tests/e2e/chart.py" "$E2E_DIR" >/dev/null || e2e_log "report generation failed"
check "the chart $E2E_DIR/chart.svg exists and is a valid SVG" \
    python3 "$SRC/tests/e2e/chart.py" --check-svg "$E2E_DIR/chart.svg"
cat "$E2E_DIR/checks.txt" >&2
e2e_log "report: $E2E_DIR/report.md, chart: $E2E_DIR/chart.svg"
[ $fail -eq 0 ]
