#!/usr/bin/env bash
# scripts/demo-cluster.sh -- the local cluster demo (`./dev run`; issue 10, "The demo").
#
# Everything on 127.0.0.1, on ports free at start, in a temporary directory:
#   * redis-server;
#   * one croupier-game per engine (traditional, holdem, persistent, zhajinhua, niuniu) plus one
#     --engine test;
#   * two croupier-gate; two croupier-director (the tournament director);
#   * croupier-bot processes, one per game the bots have a strategy for (asked of croupier-bot
#     itself); the bots of every game without a strategy yet play the "test" game on the test
#     engine instead, and the output says so;
#   * a Sit & Go of 9 and an MTT of 27 (croupier-ctl tour create), each played by a croupier-bot
#     --tournament fleet on the hold'em servers' tournament tables (TOUR_* below);
#   * a live summary (scripts/demo_summary.py: each pod's /readyz, /drain/status and /metrics,
#     the seats in Redis, the bots' progress lines; one screen updated on a terminal);
#   * the harness's pod sampler (tests/e2e/poll.py) for the chart.
# Spread over the play time (schedule below) every Deployment rolls as tests/e2e/rollout.sh does it (maxSurge 1,
# maxUnavailable 0): the new pod starts and becomes ready, then kubelet's termination of the old
# one (tests/e2e/lib.sh e2e_pod_terminate: the real k8s/prestop.sh under busybox, SIGTERM, grace
# period, SIGKILL = failure). The game Deployments roll first, then the gateways. Then the crash
# step (crash_step below): one game server of every engine and one gateway are SIGKILLed once and
# replaced, and the demo waits until the killed servers' held chips are back in the wallets. A
# long run rolls every Deployment again while time is left. Then the bots stop, every pod is terminated the same way, and the zero-loss report is printed
# (scripts/demo_report.py; chart and report.md by tests/e2e/chart.py).
#
#   scripts/demo-cluster.sh [--seconds N] [--bots N] [--prometheus] [--redis-ha | --redis-cluster]
#                           [--help]
#
# --prometheus: Debian's prometheus on 127.0.0.1 scrapes every live pod's /metrics every second
# (file_sd targets rewritten as pods come and go); the zero-loss report quotes the rounds by game
# it holds beside the bots' count.
#
# --redis-ha: Redis as the prod overlay runs it (a master, two replicas, three Sentinels; the
# master SIGKILLed once). --redis-cluster: a Redis Cluster of 3 masters and 3 replicas on
# loopback instead of the redis-server (cluster_start below), the directors and tournaments too
# (docs/tournaments.md "On a Redis Cluster"); the crash step also SIGKILLs the master of the
# money slot. The two exclude each other.
#
# Files: the run's report, chart, samples, bot reports and pod logs stay in BUILD/demo/ (replaced
# by the next run); Redis's directory and the pods' working directories live in a temporary
# directory that is removed at exit. Exit status 0 when every zero-loss check passed, 1 when one
# failed, 2 on a usage error, 130 when interrupted.
#
# Ctrl-C (or SIGTERM / SIGHUP): the bots are stopped, then every pod and Redis are sent SIGTERM
# and waited for (SIGKILL after a bound), and the temporary directory is removed. The children
# run in a session of their own, so the terminal's Ctrl-C reaches only this script, which stops
# them in that order.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${CROUPIER_BUILD_DIR:-$ROOT/build}
SRC=$ROOT

usage() {
    cat <<EOF
usage: ./dev run [--seconds N] [--bots N] [--prometheus] [--redis-ha | --redis-cluster]
       scripts/run-main.sh [same flags]                  (scripts/demo-cluster.sh)
       scripts/run-main.sh --runtime-demo [ARGS]         (the desk-actor runtime demo instead)

Starts a local cluster on 127.0.0.1: redis-server, one croupier-game per engine (traditional,
holdem, persistent, zhajinhua, niuniu, and test), two croupier-gate, two croupier-director,
croupier-bot players for every game the bots have a strategy for (the others' share plays the
test engine instead), and a Sit & Go and an MTT played by bots on the hold'em servers. Prints a live
summary, rolls every deployment while the bots play (new pod ready, then
k8s/prestop.sh under busybox and SIGTERM for the old one), SIGKILLs one game server of every
engine and one gateway (replaced; their held chips come back), stops, and prints the zero-loss
report (torn games, client errors, settlements vs wallets, chips back after the kills,
crash-voided rounds, exit reasons, each tournament's places, prizes and hand histories) and the
chart's path.

  --seconds N   how long the bots play (default 75; at least 20). The rollouts and the crash step
                are spread over that time (~70 s of them on an idle machine; the bots play on
                until 3 s after them); longer runs roll every deployment again and again. A run
                takes N + 15 to 55 s (docs/demo.md "How long a run takes").
  --bots N      bots at the cash tables (default 300; 12..5000); 36 more play the tournaments
                (a Sit & Go of 9, an MTT of 27: the bots play on until both are over)
  --prometheus  also run Debian's prometheus on 127.0.0.1, scraping every pod every second; the
                report quotes its rounds by game beside the bots' count (its URL is printed)
  --redis-ha    Redis as in the prod overlay: a master, two replicas and three Sentinels; every
                pod finds the master through the sentinels (money waits for both replicas); the
                master is SIGKILLed once mid-run, and the report says when the failover happened
  --redis-cluster  a Redis Cluster instead (3 masters, 3 replicas on loopback): every game
                server, gateway, director and croupier-ctl call with --redis-cluster, the
                tournaments too; the crash step also SIGKILLs the master of the money slot (its
                replica takes over); the money checks read every master.
                Excludes --redis-ha
  --help        this text

Files: BUILD/demo/ (report.md, chart.svg, reports, logs). Ctrl-C stops everything cleanly.
EOF
}

PLAY_SECONDS=75
BOTS=300
PROMETHEUS=0
REDIS_HA=0
REDIS_CLUSTER=0
while [ $# -gt 0 ]; do
    case $1 in
    --prometheus)
        PROMETHEUS=1
        shift
        ;;
    --redis-ha)
        REDIS_HA=1
        shift
        ;;
    --redis-cluster)
        REDIS_CLUSTER=1
        shift
        ;;
    --seconds | --bots)
        [ $# -ge 2 ] || { echo "demo: $1 needs a value (see --help)" >&2; exit 2; }
        case $2 in '' | *[!0-9]*) echo "demo: $1 '$2' is not a whole number" >&2; exit 2 ;; esac
        if [ "$1" = --seconds ]; then PLAY_SECONDS=$((10#$2)); else BOTS=$((10#$2)); fi
        shift 2
        ;;
    --seconds=* | --bots=*)
        set -- "${1%%=*}" "${1#*=}" "${@:2}"
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        echo "demo: unknown argument '$1' (see --help)" >&2
        exit 2
        ;;
    esac
done
if [ "$PLAY_SECONDS" -lt 20 ] || [ "$PLAY_SECONDS" -gt 86400 ]; then
    echo "demo: --seconds must be 20..86400" >&2
    exit 2
fi
if [ "$BOTS" -lt 12 ] || [ "$BOTS" -gt 5000 ]; then
    echo "demo: --bots must be 12..5000" >&2
    exit 2
fi
if [ "$REDIS_HA" = 1 ] && [ "$REDIS_CLUSTER" = 1 ]; then
    echo "demo: --redis-ha and --redis-cluster exclude each other (Sentinel or Cluster, not both)" >&2
    exit 2
fi

# ---- outer process: keep the terminal's Ctrl-C away from the children --------------------
# The cluster runs in a session of its own (setsid), so a Ctrl-C reaches only this process; it
# forwards SIGTERM to the inner script (and to a preStop hook it may be waiting on), whose trap
# stops the children in order.
if [ "${CROUPIER_DEMO_INNER:-0}" != 1 ]; then
    tools=(setsid redis-server redis-cli busybox python3 curl)
    [ "$PROMETHEUS" = 1 ] && tools+=(prometheus)
    for tool in "${tools[@]}"; do
        command -v "$tool" >/dev/null ||
            { echo "demo: '$tool' is missing (./dev setup installs what the demo needs)" >&2; exit 1; }
    done
    pflag=()
    [ "$PROMETHEUS" = 1 ] && pflag=(--prometheus)
    [ "$REDIS_HA" = 1 ] && pflag+=(--redis-ha)
    [ "$REDIS_CLUSTER" = 1 ] && pflag+=(--redis-cluster)
    CROUPIER_DEMO_INNER=1 CROUPIER_BUILD_DIR=$BUILD setsid "$0" --seconds "$PLAY_SECONDS" \
        --bots "$BOTS" "${pflag[@]}" </dev/null &
    inner=$!
    forward() {
        kill -TERM "$inner" 2>/dev/null
        # a foreground `timeout ... prestop.sh` or `sleep` of the inner script would delay its
        # trap; end those helpers (children of the inner script only)
        local p c
        while read -r p c; do
            case $c in timeout | sleep) kill -TERM "$p" 2>/dev/null ;; esac
        done < <(ps -o pid=,comm= --ppid "$inner" 2>/dev/null)
    }
    trap forward INT TERM HUP
    st=0
    while kill -0 "$inner" 2>/dev/null; do
        wait "$inner"
        st=$?
    done
    exit "$st"
fi

# ---- inner process -----------------------------------------------------------------------
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "demo: no build directory ${CROUPIER_BUILD_DIR:-build}" >&2; exit 1; }
# shellcheck source=../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"

NEED=(engine/process/croupier-game gateway/croupier-gate bots/croupier-bot)
[ "$REDIS_CLUSTER" = 1 ] && NEED+=(tests/tcluster_run tools/croupier-ctl)
for b in "${NEED[@]}"; do
    [ -x "$BUILD/$b" ] || { echo "demo: $BUILD/$b is missing; build first (./dev setup)" >&2; exit 1; }
done

OUT=${CROUPIER_DEMO_OUT:-$BUILD/demo}
rm -rf "$OUT"
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
E2E_DIR=$(mktemp -d /tmp/croupier-demo.XXXXXX) || exit 1
E2E_FAILURES=()
# Timers at human speed (the games' defaults: a person at the browser table has 15 s a move,
# blackjack's betting window is 10 s and closes as soon as every seated player bet, so the bots'
# tables are not slowed down), except the test engine's rounds, which no person plays. A smaller
# blackjack house fund (the persistent engine credits it once per Redis, with a fixed operation
# id) for readable sums.
export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-500}
export CROUPIER_BJ_HOUSE_FUND=${CROUPIER_BJ_HOUSE_FUND:-100000000}
GATE_DRAIN_WINDOW_MS=1000 # read by e2e_gate_start / e2e_gate_prestop
SEED_CHIPS=1000000
HOUSE_CHIPS=100000000
PLAYER_BASE=7000000
WARMUP=6  # seconds of play before the first rollout
# The game servers' lease TTL (the gateways find a dead server gone within it) and how long a
# sweeper waits after the lease of a dead server expired before it returns its chips (default 2
# x the TTL: time for a server whose Redis blipped to take its slot back; the demo restarts no
# Redis). A kill's chips are back within TTL + grace + one sweep (250 ms).
LEASE_TTL_MS=3000
RECOVER_GRACE_MS=2000
# On a Redis Cluster the crash step also SIGKILLs the master of the money slot, and its replica
# takes over about 2.6 s later (docs/deploy.md "Redis Cluster: the client"): a lease TTL of 6 s
# (croupier-game's default) lets the game servers ride that out without fencing themselves.
[ "$REDIS_CLUSTER" = 1 ] && LEASE_TTL_MS=6000
PAUSE=2   # seconds between two Deployments' rollouts
declare -A BOUND=([traditional]=40 [holdem]=40 [persistent]=30 [zhajinhua]=30 [niuniu]=30 [test]=20)
ENGINES=(traditional holdem persistent zhajinhua niuniu test)
# The tournaments (docs/tournaments.md) beside the cash tables: a Sit & Go of 9 and an MTT of 27
# (3 tables of 9), played by croupier-bot --tournament fleets of their own (players from
# TOUR_PLAYER_BASE, wallets seeded like the other bots') on the hold'em servers' tournament
# tables, run by two croupier-director replicas. Their levels are sized by the play time (TOUR_S:
# --seconds, at least 75; tour_structure below): the blinds and antes outgrow every stack at about
# half of it for the Sit & Go and 12 s after it for the MTT (which starts at a fifth of it), so
# both play through the hold'em and director rollouts, the MTT through the gateways' and usually
# into the crash step; the bots play on (TOUR_WAIT at most) until both are over. tours.tsv: NAME
# ID FORMAT BOTS FIRST_PLAYER.
TOUR_PLAYER_BASE=6600000
TOUR_S=$((PLAY_SECONDS > 75 ? PLAY_SECONDS : 75))
TOUR_WAIT=90

T0=$(date +%s.%N)
LIVE=()      # pods alive now
ENDPOINTS=() # gateway pods in the bots' endpoint list
ALL_PODS=()  # pods terminated so far
BOT_PIDS=()
TOUR_PIDS=() # the tournament fleets (croupier-bot --tournament)
BOT_GAMES=()
SUMMARY_PID=
POLL_PID=
STDERR_SAVED=0
declare -A POD_ENGINE CURRENT

# Seconds since the start, 1 decimal.
elapsed() {
    awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { printf "%.1f", a - b }'
}

# step TEXT: a rollout step: steps.tsv (chart.py draws it) and the log.
step() {
    printf '%s\t%s\n' "$(elapsed)" "$*" >>"$OUT/steps.tsv"
    e2e_log "== $*"
}

# nap SECONDS: a sleep a signal interrupts at once (the trap runs without waiting for it).
nap() {
    sleep "$1" &
    local p=$!
    wait "$p" 2>/dev/null
    kill "$p" 2>/dev/null
}

remove_from() { # remove_from ARRAY_NAME VALUE
    local -n arr=$1
    local out=() x
    for x in "${arr[@]}"; do [ "$x" != "$2" ] && out+=("$x"); done
    arr=("${out[@]}")
}

publish() {
    e2e_pods_publish "$OUT/pods" "${LIVE[@]}"
    e2e_endpoints_publish "$OUT/gateways" "${ENDPOINTS[@]}"
    ws_endpoints_publish
    [ "$PROMETHEUS" = 1 ] && prom_targets_publish
}

# The gateways' WebSocket addresses (--ws-listen), the browser table's server forwards /ws to
# one of them (clients/web/serve.mjs --gateways-file), replaced atomically like the others.
declare -A POD_WS
ws_endpoints_publish() {
    local n
    : >"$OUT/ws-gateways.tmp"
    for n in "${ENDPOINTS[@]}"; do echo "127.0.0.1:${POD_WS[$n]}" >>"$OUT/ws-gateways.tmp"; done
    mv "$OUT/ws-gateways.tmp" "$OUT/ws-gateways"
}

# ---- the browser table (clients/web) -------------------------------------------------------
# clients/web/serve.mjs on a free port of 127.0.0.1: the page (built by ./dev setup into
# clients/web/dist), /ws forwarded to a live gateway (a Service's part), and /config.json with a
# token minted for one human player (HUMAN_PLAYER, wallet seeded like a bot's). Left out, with a
# line saying why, when node or the built page is missing; the demo runs on without it.
HUMAN_PLAYER=6900001
WEB_PID=
WEB_URL=
WEB_TOKEN=
web_start() {
    local dist=$SRC/clients/web/dist port token
    if ! command -v node >/dev/null 2>&1; then
        e2e_log "browser table: not served (node is missing; ./dev setup installs it)"
        return 0
    fi
    if [ ! -f "$dist/index.html" ] || [ ! -f "$dist/app.js" ]; then
        e2e_log "browser table: not served ($dist is not built; ./dev setup builds it)"
        return 0
    fi
    e2e_seed_wallets "$HUMAN_PLAYER" 1 $SEED_CHIPS
    token=$("$BUILD/gateway/croupier-gate" token --secret-file "$E2E_DIR/secret" \
        --player "$HUMAN_PLAYER" --ttl 86400) || { e2e_log "browser table: no token minted"; return 0; }
    printf '{"token": "%s", "player": %s}\n' "$token" "$HUMAN_PLAYER" >"$OUT/web-config.json"
    WEB_TOKEN=$token
    port=$(e2e_free_port)
    node "$SRC/clients/web/serve.mjs" --listen "127.0.0.1:$port" --root "$dist" \
        --gateways-file "$OUT/ws-gateways" --config "$OUT/web-config.json" \
        >>"$E2E_DIR/web.log" 2>&1 &
    WEB_PID=$!
    E2E_PIDS+=("$WEB_PID")
    local i
    for i in $(seq 1 50); do
        if curl -fsS --max-time 1 "http://127.0.0.1:$port/" >/dev/null 2>&1; then
            WEB_URL="http://127.0.0.1:$port/"
            echo "$WEB_URL (player $HUMAN_PLAYER)" >"$OUT/web-url"
            return 0
        fi
        sleep 0.1
    done
    e2e_log "browser table: serve.mjs did not answer (log $E2E_DIR/web.log)"
}

# ---- operator credits ----------------------------------------------------------------------
# While the bots play, an operator credits one bot's wallet and debits another's with
# croupier-ctl (docs/ops.md, "credit"): each is booked against the house account
# {croupier:money}:rake:credits with a settle record ctl:credit:<id>, so wallets + rake stays
# what it was. credits.tsv: "OP_ID PLAYER AMOUNT STATUS" (STATUS: croupier-ctl's exit status).
operator_credits() {
    local ctl=$BUILD/tools/croupier-ctl p1 p2
    : >"$OUT/credits.tsv"
    [ -x "$ctl" ] || { e2e_log "no $ctl: no operator credits"; return 0; }
    p1=$(awk -F'\t' 'NR == 1 { print $4 }' "$OUT/groups.tsv")
    p2=$(awk -F'\t' 'NR == 2 { print $4 }' "$OUT/groups.tsv")
    step "operator: croupier-ctl credit $p1 +500, $p2 -200"
    # shellcheck disable=SC2046 # the Redis flags are words
    "$ctl" $(e2e_redis_flags) credit "$p1" 500 --reason "demo: goodwill" --op-id demo-1
    printf 'demo-1\t%s\t500\t%s\n' "$p1" $? >>"$OUT/credits.tsv"
    # shellcheck disable=SC2046
    "$ctl" $(e2e_redis_flags) credit "$p2" -200 --reason "demo: chargeback" --op-id demo-2
    printf 'demo-2\t%s\t-200\t%s\n' "$p2" $? >>"$OUT/credits.tsv"
}

# ---- Prometheus (--prometheus) -------------------------------------------------------------
# Debian's prometheus on 127.0.0.1, its data in the temporary directory; it scrapes the live
# pods' health ports every second, read from a file_sd file rewritten (atomically) with the pods,
# each target labelled pod, kind and engine as the PodMonitor of k8s/ labels them.
PROM_PID=
PROM_PORT=
prom_targets_publish() {
    local n sep=
    {
        echo "["
        for n in "${LIVE[@]}"; do
            printf '%s{"targets":["127.0.0.1:%s"],"labels":{"pod":"%s","kind":"%s","engine":"%s"}}\n' \
                "$sep" "${POD_HEALTH[$n]}" "$n" "${POD_KIND[$n]}" "${POD_ENGINE[$n]:-}"
            sep=,
        done
        echo "]"
    } >"$OUT/prom-targets.json.tmp"
    mv "$OUT/prom-targets.json.tmp" "$OUT/prom-targets.json"
}

prom_start() {
    PROM_PORT=$(e2e_free_port)
    echo "[]" >"$OUT/prom-targets.json"
    cat >"$E2E_DIR/prometheus.yml" <<PEOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
- job_name: croupier
  file_sd_configs:
  - files: ["$OUT/prom-targets.json"]
    refresh_interval: 1s
PEOF
    prometheus --config.file="$E2E_DIR/prometheus.yml" --storage.tsdb.path="$E2E_DIR/prometheus" \
        --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn \
        >>"$E2E_DIR/prometheus.log" 2>&1 &
    PROM_PID=$!
    E2E_PIDS+=("$PROM_PID")
    local i
    for i in $(seq 1 100); do
        curl -fsS --max-time 1 "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    e2e_die "prometheus did not become ready (log $E2E_DIR/prometheus.log)"
}

# prom_query EXPR: the instant query's JSON answer.
prom_query() {
    curl -fsS --max-time 10 -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"
}

# Every pod ever started: what the summary and the report read.
pod_info() {
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "${POD_KIND[$1]}" "${POD_ENGINE[$1]}" \
        "${POD_HEALTH[$1]}" "${POD_PORT[$1]}" "${POD_PID[$1]}" "${POD_LOG[$1]}" >>"$OUT/pods-info.tsv"
}

start_game() { # NAME ENGINE
    e2e_game_start "$1" "$2" "${BOUND[$2]}" --lease-pool-size 16 --lease-ttl-ms "$LEASE_TTL_MS" \
        --recover-grace-ms "$RECOVER_GRACE_MS" --sweep-ms 250 "${HA_FLAGS[@]}"
    POD_ENGINE[$1]=$2
    CURRENT[$2]=$1
    LIVE+=("$1")
    pod_info "$1"
    publish
}

start_director() { # NAME: a croupier-director replica (k8s/base/director.yaml runs two)
    e2e_director_start "$1" "${HA_FLAGS[@]}"
    POD_ENGINE[$1]=director
    POD_PORT[$1]=- # no client port: it talks only to Redis
    LIVE+=("$1")
    pod_info "$1"
    publish
}

start_gate() { # NAME
    POD_WS[$1]=$(e2e_free_port)
    e2e_gate_start "$1" --ws-listen "127.0.0.1:${POD_WS[$1]}" "${HA_GATE_FLAGS[@]}"
    e2e_gate_prestop "$1"
    POD_ENGINE[$1]=gateway
    LIVE+=("$1")
    ENDPOINTS+=("$1")
    pod_info "$1"
    publish
}

# kubelet deletes NAME: its endpoint is withdrawn when the deletion starts.
stop_pod() {
    remove_from ENDPOINTS "$1"
    publish
    e2e_pod_terminate "$1"
    remove_from LIVE "$1"
    publish
    ALL_PODS+=("$1")
    e2e_log "pod $1: exit reason=$(e2e_exit_reason "$1")"
}

roll_game() { # ENGINE
    local eng=$1 old=${CURRENT[$1]}
    local ver=${old##*-v}
    ver=${ver%%-*} # holdem-v2-r (a crash replacement) is version 2
    local new="$eng-v$((ver + 1))"
    step "roll $eng: surge $new"
    start_game "$new" "$eng"
    step "roll $eng: terminate $old"
    stop_pod "$old"
    step "roll $eng: $old gone"
}

GATE_VERSION=1
roll_gates() {
    local old=() n i=0
    GATE_VERSION=$((GATE_VERSION + 1))
    for n in "${LIVE[@]}"; do [ "${POD_KIND[$n]}" = gate ] && old+=("$n"); done
    for n in "${old[@]}"; do
        i=$((i + 1))
        step "roll gateway: surge gate-v$GATE_VERSION-$i"
        start_gate "gate-v$GATE_VERSION-$i"
        step "roll gateway: terminate $n"
        stop_pod "$n"
        step "roll gateway: $n gone"
    done
}

# The director Deployment (two replicas) rolls as the gateways do, one replica at a time: the new
# one ready, then the old one's preStop (k8s/prestop.sh waits until it owns no tournament: it
# hands each back, level clock written) and SIGTERM; the other replicas claim them at their next
# scan.
DIRECTOR_VERSION=1
roll_directors() {
    local old=() n i=0
    DIRECTOR_VERSION=$((DIRECTOR_VERSION + 1))
    for n in "${LIVE[@]}"; do [ "${POD_KIND[$n]}" = director ] && old+=("$n"); done
    for n in "${old[@]}"; do
        i=$((i + 1))
        step "roll director: surge director-v$DIRECTOR_VERSION-$i"
        start_director "director-v$DIRECTOR_VERSION-$i"
        step "roll director: terminate $n"
        stop_pod "$n"
        step "roll director: $n gone"
    done
}

# ---- the schedule ---------------------------------------------------------------------------
# schedule EVENT...: runs the events (commands) one after the other, spreading them over the
# play time left: after each, a pause of (time left - the time the remaining events are expected
# to take - 3 s of play after the last) / (remaining events + 1), at least PAUSE and at most
# MAX_GAP seconds. An event's expected time is the mean of those run so far (EVENT_S).
MAX_GAP=30
EVENT_S=12 # seconds per event, until measured
EVENTS_RUN=0
EVENTS_SPENT=0
schedule() {
    local ev t0 left rest gap
    rest=$#
    for ev in "$@"; do
        t0=$SECONDS
        $ev
        EVENTS_RUN=$((EVENTS_RUN + 1))
        EVENTS_SPENT=$((EVENTS_SPENT + SECONDS - t0))
        EVENT_S=$(((EVENTS_SPENT + EVENTS_RUN - 1) / EVENTS_RUN))
        rest=$((rest - 1))
        [ "$rest" -eq 0 ] && break
        left=$((BOTS_T0 + PLAY_SECONDS - SECONDS))
        gap=$(((left - EVENT_S * rest - 3) / (rest + 1)))
        [ "$gap" -lt "$PAUSE" ] && gap=$PAUSE
        [ "$gap" -gt "$MAX_GAP" ] && gap=$MAX_GAP
        nap "$gap"
    done
}

# ---- the crash step (issue 15) -------------------------------------------------------------
# One game server of every engine and one gateway die without a clean exit (SIGKILL: no preStop,
# no SIGTERM). What the cluster does about it (docs/gateway.md "When a game server dies",
# docs/queues.md "Where every chip is"): the gateways find each dead server gone within the lease
# TTL and move its players (TableClosing{CLOSING_CRASHED}, Moved) to the other server of its
# engine; any croupier-game's sweeper returns the dead server's held chips to the wallets once
# its lease expired and the grace passed, and voids its rounds in progress in the hand history
# (VOID_SERVER_CRASHED); the dead gateway's clients reconnect to the other one and resume.
CRASHED=()      # pods SIGKILLed by the crash step (not terminated: no exit reason to check)
CRASH_GAMES=()  # the game servers among them
declare -A CRASH_MEMBER CRASH_SEATS CRASH_T CRASH_MS

now_ms() { date +%s%3N; }

# crash_kill NAME: SIGKILL, reaped; the pod leaves the live list and the endpoints at once (the
# kubelet reports it dead; nothing of it runs any more).
crash_kill() {
    kill -KILL "${POD_PID[$1]}" 2>/dev/null
    wait "${POD_PID[$1]}" 2>/dev/null
    CRASH_T[$1]=$(now_ms)
    remove_from LIVE "$1"
    remove_from ENDPOINTS "$1"
    publish
    CRASHED+=("$1")
}

# The gateway with the most client connections (the one whose kill hits the most bots).
busiest_gate() {
    local n c best= bestc=-1
    for n in "${ENDPOINTS[@]}"; do
        c=$(e2e_get "${POD_HEALTH[$n]}/metrics" 1 |
            awk '$1 == "gate_connections" { print int($2) }')
        [ "${c:-0}" -gt "$bestc" ] && best=$n bestc=${c:-0}
    done
    echo "$best"
}

# The crash step: a replacement of every engine's server starts first (a second server of the
# engine for its players to be moved to: the demo runs one per engine), then the old one of every
# engine is SIGKILLed at once; once the gateways have found them gone (lease TTL + 1 s), the
# busiest gateway is SIGKILLed and replaced; then it waits (bounded) until every killed server's
# held epoch has left {croupier:money}:held, i.e. its chips are back in the wallets.
crash_step() {
    local e n g svc slot epoch victims=() left deadline
    for e in "${ENGINES[@]}"; do victims+=("${CURRENT[$e]}"); done
    step "crash: start ${victims[*]/%/-r} (replacements first: a server of each engine stays up)"
    for n in "${victims[@]}"; do start_game "$n-r" "${POD_ENGINE[$n]}"; done
    for n in "${victims[@]}"; do
        # (a demo game pod's lease service is its engine's name, --service's default)
        read -r slot epoch <<<"$(e2e_lease_of "$n")"
        svc=${POD_ENGINE[$n]}
        CRASH_MEMBER[$n]="$svc:$slot:$epoch"
        CRASH_SEATS[$n]=$(e2e_redis hkeys "{croupier:money}:held:$svc:$slot:$epoch" |
            grep -vc '^r:')
    done
    step "crash: SIGKILL ${victims[*]}"
    for n in "${victims[@]}"; do crash_kill "$n"; done
    CRASH_GAMES=("${victims[@]}")
    for n in "${victims[@]}"; do
        e2e_log "crash: $n SIGKILLed (held epoch ${CRASH_MEMBER[$n]}," \
            "${CRASH_SEATS[$n]} seat accounts)"
    done
    nap $((LEASE_TTL_MS / 1000 + 1))
    g=$(busiest_gate)
    step "crash: SIGKILL $g"
    crash_kill "$g"
    step "crash: start $g-r (replacement)"
    start_gate "$g-r"
    e2e_wait_crash_recovered nap "${victims[@]}"
    step "crash: the killed servers' chips are back"
    [ "$REDIS_CLUSTER" = 1 ] && cluster_failover
}

# recovered_of MEMBER: what the pods logged of recovering that held epoch ("money_recovered",
# modes dead and claim, status 0; several sweepers may race, each chip comes back once):
# "CHIPS VOIDED BY" -- chips returned, rounds voided, the pod(s) that returned something.
recovered_of() {
    python3 - "$1" "$E2E_DIR" <<'EOF'
import glob, json, os, sys
svc, slot, epoch = sys.argv[1].rsplit(":", 2)
chips = voided = 0
by = []
for path in sorted(glob.glob(os.path.join(sys.argv[2], "*.log"))):
    for line in open(path, errors="replace"):
        if '"money_recovered"' not in line:
            continue
        try:
            d = json.loads(line[line.index("{"):])
        except ValueError:
            continue
        if (d.get("service"), str(d.get("slot")), str(d.get("epoch"))) != (svc, slot, epoch) \
                or d.get("status") != 0 or d.get("mode") == "self":
            continue
        chips += d.get("chips", 0)
        voided += d.get("voided", 0)
        name = os.path.basename(path)[:-4]
        if (d.get("chips") or d.get("voided") or not by) and name + "/" + d["mode"] not in by:
            by.append(name + "/" + d["mode"])
print(chips, voided, ",".join(by) or "-")
EOF
}

# crash_voids MEMBER...: the crash-voided rounds of the hand histories (entries of every
# {croupier:history:<game>}:stream -- on a cluster {croupier:money}:history:<game>:stream -- with
# "void_reason":"VOID_SERVER_CRASHED"): "TOTAL KILLED SETTLED" -- distinct rounds, how many of
# them a killed server's (round id
# "<service>:<slot>:<epoch>:<desk>:<seq>" of one of the MEMBERs), how many have a settle record
# (none may: the fence refuses a dead epoch's settlement). The ids go to OUT/crash-voids.txt.
crash_voids() {
    # (the streams' keys: e2e_history_key, every master of a cluster; redis-cli -c follows a
    # cluster's redirections)
    HISTORY_STREAMS=$(e2e_redis_scan "$(e2e_history_key '*' stream)") \
        python3 - "$REDIS_PORT" "$OUT/crash-voids.txt" "$@" <<'EOF'
import json, os, subprocess, sys
port, out, dead = sys.argv[1], sys.argv[2], set(sys.argv[3:])
def redis(*args, stdin=None):
    return subprocess.run(["redis-cli", "-c", "-p", port] + list(args), input=stdin,
                          capture_output=True, text=True).stdout.splitlines()
rounds = set()
for key in os.environ["HISTORY_STREAMS"].split():
    for line in redis("xrange", key, "-", "+"):
        if line.startswith("{") and "VOID_SERVER_CRASHED" in line:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("void_reason") == "VOID_SERVER_CRASHED":
                rounds.add(d["round"])
rounds = sorted(rounds)
killed = sum(1 for r in rounds if r.rsplit(":", 2)[0] in dead)
settled = 0
if rounds:
    cmds = "".join("EXISTS {croupier:money}:round:%s\n" % r for r in rounds)
    settled = sum(1 for l in redis(stdin=cmds) if l.strip() == "1")
with open(out, "w") as f:
    f.write("".join(r + "\n" for r in rounds))
print(len(rounds), killed, settled)
EOF
}

# Waits (bounded) until no game pod has settlements queued: the money at rest.
wait_money_idle() {
    local deadline=$((SECONDS + 15)) n busy
    while ((SECONDS < deadline)); do
        busy=0
        for n in "${LIVE[@]}"; do
            [ "${POD_KIND[$n]}" = game ] || continue
            e2e_get "${POD_HEALTH[$n]}/metrics" 1 | grep -q '^money_writer_depth 0$' || busy=1
        done
        [ $busy = 0 ] && return 0
        sleep 0.2
    done
    e2e_log "warning: settlements still queued after 15 s"
}

money_now() {
    echo $(($(e2e_wallet_sum) + $(e2e_rake_sum)))
}

restore_stderr() {
    if [ "$STDERR_SAVED" = 1 ]; then
        exec 2>&3 3>&-
        STDERR_SAVED=0
    fi
}

stop_watchers() {
    touch "$OUT/STOP"
    local p=() i
    # they stop by themselves at STOP (the summary prints the last log lines first)
    for i in $(seq 1 30); do
        { [ -n "$SUMMARY_PID" ] && e2e_alive "$SUMMARY_PID"; } ||
            { [ -n "$POLL_PID" ] && e2e_alive "$POLL_PID"; } || break
        sleep 0.1
    done
    [ -n "$SUMMARY_PID" ] && p+=("$SUMMARY_PID")
    [ -n "$POLL_PID" ] && p+=("$POLL_PID")
    [ ${#p[@]} -gt 0 ] && e2e_stop_pids 5 "${p[@]}" >/dev/null
    SUMMARY_PID=
    POLL_PID=
}

# Ctrl-C / SIGTERM / SIGHUP: stop the bots, then the pods, then Redis; the EXIT trap removes the
# temporary directory.
on_signal() {
    trap '' INT TERM HUP
    stop_watchers
    restore_stderr
    echo
    echo "demo: interrupted -- stopping everything (bots, then pods, then Redis)"
    if [ $((${#BOT_PIDS[@]} + ${#TOUR_PIDS[@]})) -gt 0 ]; then
        echo "demo: SIGTERM to $((${#BOT_PIDS[@]} + ${#TOUR_PIDS[@]})) croupier-bot (they leave their tables; 10 s at most)"
        e2e_stop_pids 10 "${BOT_PIDS[@]}" "${TOUR_PIDS[@]}" >/dev/null
    fi
    local pods=() n
    for n in "${LIVE[@]}"; do e2e_alive "${POD_PID[$n]}" && pods+=("${POD_PID[$n]}"); done
    if [ ${#pods[@]} -gt 0 ]; then
        echo "demo: SIGTERM to ${#pods[@]} pods (twice: a second SIGTERM skips the drain wait)"
        for n in "${pods[@]}"; do kill -TERM "$n" 2>/dev/null; done
        sleep 0.3
        e2e_stop_pids 15 "${pods[@]}" >/dev/null
    fi
    [ -n "$WEB_PID" ] && e2e_stop_pids 5 "$WEB_PID" >/dev/null
    [ -n "${REDIS_PID:-}" ] && e2e_stop_pids 5 "$REDIS_PID" >/dev/null
    # the Redis Cluster: tcluster_run stops every node and removes their directories
    [ -n "$E2E_CLUSTER_PID" ] && e2e_stop_pids 10 "$E2E_CLUSTER_PID" >/dev/null
    echo "demo: stopped; logs of this run in $OUT"
    exit 130
}

on_exit() {
    local st=$?
    trap '' INT TERM HUP
    stop_watchers
    restore_stderr
    # anything still running (a failure path): SIGTERM, wait, SIGKILL
    local alive=() p
    for p in "${E2E_PIDS[@]}"; do e2e_alive "$p" && alive+=("$p"); done
    [ ${#alive[@]} -gt 0 ] && e2e_cleanup
    if [ "$st" -ne 0 ] && [ "$st" -ne 130 ] && [ -s "$OUT/demo.log" ] && [ -z "${REPORTED:-}" ]; then
        echo "demo: failed; the last lines of $OUT/demo.log:" >&2
        tail -n 15 "$OUT/demo.log" >&2
    fi
    if [ -d "$E2E_DIR" ]; then
        mkdir -p "$OUT/logs"
        cp "$E2E_DIR"/*.log "$OUT/logs/" 2>/dev/null
        rm -rf "$E2E_DIR"
    fi
}
trap on_signal INT TERM HUP
trap on_exit EXIT

# ---- Redis with replicas and Sentinels (--redis-ha) -----------------------------------------
# As k8s/components/redis-ha runs it: a master, two replicas, three Sentinels (quorum 2,
# down-after 1000 ms). The pods find the master through the sentinels (--redis-sentinels; the
# --redis they are also given is then unused); the game servers acknowledge money once both
# replicas have it (--redis-min-replicas 2, as the prod overlay: docs/deploy.md "Sizing").
# e2e_redis, and everything the demo reads from Redis, follow the master of the moment;
# OUT/redis-port names it for the live summary.
HA_FLAGS=()
HA_GATE_FLAGS=()
HA_FAILOVER=""
ha_start() {
    E2E_HA_NAP=nap
    e2e_ha_start # tests/e2e/lib.sh
    HA_GATE_FLAGS=(--redis-sentinels "$E2E_HA_SENTINELS" --redis-master croupier)
    HA_FLAGS=("${HA_GATE_FLAGS[@]}" --redis-min-replicas 2)
    echo "$REDIS_PORT" >"$OUT/redis-port"
    e2e_log "redis-ha up: master 127.0.0.1:$REDIS_PORT, sentinels $E2E_HA_SENTINELS"
}
# The master SIGKILLed; Sentinel promotes a replica; the dead node comes back (empty, as a
# replaced pod) as a replica of the new master once the failover ended. HA_FAILOVER: "OLD NEW
# PROMOTED_MS BACK_MS AT_S" for the report.
ha_failover() {
    local old=$REDIS_PORT new t0 promoted back at
    step "redis-ha: SIGKILL the Redis master (127.0.0.1:$old)"
    at=$(elapsed)
    t0=$(date +%s%3N)
    kill -KILL "${E2E_HA_PID[$old]}" 2>/dev/null
    new=$(e2e_ha_wait_promoted "$old")
    promoted=$(($(date +%s%3N) - t0))
    if [ -z "$new" ]; then
        E2E_FAILURES+=("redis-ha: no replica was promoted within 10 s of the master's kill")
        return
    fi
    REDIS_PORT=$new
    echo "$REDIS_PORT" >"$OUT/redis-port"
    step "redis-ha: Sentinel promoted 127.0.0.1:$new (${promoted} ms after the kill)"
    e2e_ha_wait_settled "$new"
    e2e_ha_node_start "$old" "$new"
    e2e_ha_wait_all 15
    back=$(($(date +%s%3N) - t0))
    step "redis-ha: 127.0.0.1:$old back as a replica (${back} ms after the kill)"
    HA_FAILOVER="$old $new $promoted $back $at"
}

# ---- Redis Cluster (--redis-cluster) ---------------------------------------------------------
# A real Redis Cluster on loopback, 3 masters and 3 replicas (tests/e2e/lib.sh e2e_cluster_start:
# redis-server --cluster-enabled yes on free ports, --cluster-node-timeout 1000). Every game
# server, gateway and croupier-ctl call gets --redis-cluster with every node as a seed
# (e2e_redis_flags); docs/deploy.md "Key layout on a cluster" puts the lease, registry, rooms and
# hand-history (and tournament) keys in the money slot beside the money, so e2e_redis talks to
# that slot's master
# (redis-cli -c: it follows a redirection for the seats' and the lobby's keys) and the sums and
# scans of the report read every master (e2e_redis_scan). OUT/redis-port names the money slot's
# master for the live summary. The directors and the tournaments run as on one Redis, every
# tournament key in the money slot too (docs/tournaments.md "On a Redis Cluster").
CL_FAILOVER=""
cluster_start() {
    e2e_cluster_start 3 1 || e2e_die "no Redis Cluster on this machine: $E2E_CLUSTER_WHY"
    REDIS_PORT=$E2E_CLUSTER_MONEY
    echo "$REDIS_PORT" >"$OUT/redis-port"
    e2e_log "redis cluster up: $E2E_REDIS_CLUSTER (tests/tcluster_run pid $E2E_CLUSTER_PID);" \
        "the money slot's master 127.0.0.1:$REDIS_PORT"
}
# The end of the crash step (its steps "crash: ...": the chart draws them in the crash's band):
# the master of the money slot SIGKILLed; its replica takes the slot over; the game servers'
# money writers check their replay journals against it (docs/deploy.md "The binaries on a
# cluster"). The dead node stays down. CL_FAILOVER: "OLD NEW PROMOTED_MS AT_S" for the report.
cluster_failover() {
    local dead=$E2E_CLUSTER_MONEY new t0 at promoted
    step "crash: SIGKILL the Redis master of the money slot (127.0.0.1:$dead)"
    at=$(elapsed)
    t0=$(now_ms)
    new=$(e2e_cluster_kill_master '{croupier:money}' "the money slot")
    promoted=$(($(now_ms) - t0))
    if [ -z "$new" ]; then
        E2E_FAILURES+=("redis-cluster: no replica took the money slot over within 10 s of its master's kill")
        return
    fi
    E2E_CLUSTER_MONEY=$new
    REDIS_PORT=$new
    echo "$REDIS_PORT" >"$OUT/redis-port"
    step "crash: Redis replica 127.0.0.1:$new took the money slot over (${promoted} ms after the kill)"
    CL_FAILOVER="$dead $new $promoted $at"
}

# ---- start ---------------------------------------------------------------------------------
cat <<EOF
croupier local cluster demo: $BOTS bots play for $PLAY_SECONDS s while every deployment rolls once,
then one game server of every engine and one gateway are SIGKILLed once (and replaced).
All processes listen on 127.0.0.1 only; temporary directory $E2E_DIR; run files in $OUT.
Ctrl-C stops everything.

EOF
if [ "$REDIS_CLUSTER" = 1 ]; then
    echo "Redis: a Redis Cluster of 3 masters and 3 replicas on loopback (--redis-cluster); the crash"
    echo "step also SIGKILLs the master of the money slot (its replica takes over)."
    echo
fi
e2e_secret
if [ "$REDIS_HA" = 1 ]; then
    ha_start
elif [ "$REDIS_CLUSTER" = 1 ]; then
    cluster_start
else
    e2e_redis_start
    echo "$REDIS_PORT" >"$OUT/redis-port"
    e2e_log "redis-server up: 127.0.0.1:$REDIS_PORT pid $REDIS_PID (no persistence; dir $E2E_DIR/redis)"
fi
e2e_redis set '{croupier:money}:wallet:house-traditional' $HOUSE_CHIPS >/dev/null
if [ "$PROMETHEUS" = 1 ]; then
    prom_start
    e2e_log "prometheus up: http://127.0.0.1:$PROM_PORT pid $PROM_PID (scrapes every pod every 1 s)"
fi
python3 "$SRC/tests/e2e/poll.py" "$OUT/pods" "$OUT/samples.jsonl" 0.25 "$T0" &
POLL_PID=$!
E2E_PIDS+=("$POLL_PID")
step "start v1 pods"
for e in "${ENGINES[@]}"; do start_game "$e-v1" "$e"; done
start_director director-v1-1
start_director director-v1-2
start_gate gate-v1-1
start_gate gate-v1-2

# Which games each engine offers (the registry entries in Redis), which of them the bots can
# play (croupier-bot refuses a game it has no strategy for), and the bots' share of each.
# (the registry's keys: {croupier:registry}, on a cluster in the money slot: docs/deploy.md "Key
# layout on a cluster")
REG_KEYS='{croupier:registry}:server:*'
[ "$REDIS_CLUSTER" = 1 ] && REG_KEYS='{croupier:money}:registry:server:*'
REG=$(for k in $(e2e_redis_scan "$REG_KEYS"); do e2e_redis get "$k"; done)
mapfile -t OFFERS < <(printf '%s\n' "$REG" | python3 -c '
import json, sys
seen = {}
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    for g in e.get("games", "").split(","):
        if g and g not in seen:
            seen[g] = e["engine"]
order = ["traditional", "holdem", "persistent", "zhajinhua", "niuniu", "test"]
for g, eng in sorted(seen.items(), key=lambda x: (order.index(x[1]) if x[1] in order else 9, x[0])):
    print(g, eng)')
PLAYABLE=()   # "game engine"
FALLBACK=()   # "game(engine)"
for ge in "${OFFERS[@]}"; do
    read -r g eng <<<"$ge"
    [ "$eng" = test ] && continue
    if "$BUILD/bots/croupier-bot" --game "$g" --gateways 127.0.0.1:1 --report /dev/null \
        --token-secret-file /nonexistent 2>&1 | grep -q 'cannot play game'; then
        FALLBACK+=("$g $eng")
    else
        PLAYABLE+=("$g $eng")
    fi
done
NGAMES=$((${#PLAYABLE[@]} + ${#FALLBACK[@]}))
[ "$NGAMES" -gt 0 ] || e2e_die "no game server registered a game (registry: $REG)"
SHARE=$((BOTS / NGAMES))
BOT_GROUPS=() # "game engine bots"
for ge in "${PLAYABLE[@]}"; do BOT_GROUPS+=("$ge $SHARE"); done
TEST_BOTS=$((BOTS - SHARE * ${#PLAYABLE[@]}))
if [ "$TEST_BOTS" = 1 ] && [ ${#PLAYABLE[@]} -gt 0 ]; then
    # one bot alone never finishes a round of the test game (it needs two players): it plays
    # with the last group instead
    last=$((${#BOT_GROUPS[@]} - 1))
    BOT_GROUPS[last]="${PLAYABLE[last]} $((SHARE + 1))"
    TEST_BOTS=0
fi
# A person at the browser table sits where bots play: the games whose tables only players fill
# (no server bots: hold'em's 6 seats, Zha Jin Hua's 5, Niu Niu's 6) get a number of bots that
# leaves a table with at least two free seats (the lobby fills tables in order); the bots taken
# off play the test game.
declare -A HUMAN_SEATS=([holdem]=6 [zhajinhua]=5 [niuniu]=6)
for k in "${!BOT_GROUPS[@]}"; do
    read -r g eng n <<<"${BOT_GROUPS[k]}"
    s=${HUMAN_SEATS[$g]:-0}
    [ "$s" -gt 0 ] || continue
    while [ "$n" -gt "$s" ] && { [ $((n % s)) -eq 0 ] || [ $((n % s)) -gt $((s - 2)) ]; }; do
        n=$((n - 1))
        TEST_BOTS=$((TEST_BOTS + 1))
    done
    BOT_GROUPS[k]="$g $eng $n"
done
if [ "$TEST_BOTS" = 1 ]; then # (alone it would never finish a round, as above)
    read -r g eng n <<<"${BOT_GROUPS[0]}"
    BOT_GROUPS[0]="$g $eng $((n + 1))"
    TEST_BOTS=0
fi
[ "$TEST_BOTS" -gt 0 ] && BOT_GROUPS+=("test test $TEST_BOTS")
# Private rooms next to the matchmade tables (docs/protocol.md "Private rooms"): six of the Dou
# Dizhu bots play rooms of 4 deals, three bots a room (croupier-bot --room-seats).
ROOM_BOTS=6
for k in "${!BOT_GROUPS[@]}"; do
    read -r g eng n <<<"${BOT_GROUPS[k]}"
    if [ "$g" = doudizhu ] && [ "$n" -ge $((ROOM_BOTS + 6)) ]; then
        BOT_GROUPS[k]="$g $eng $((n - ROOM_BOTS))"
        BOT_GROUPS+=("doudizhu-rooms $eng $ROOM_BOTS doudizhu --room-seats 3 --room-deals 4")
    fi
done

# groups.tsv: NAME ENGINE BOTS FIRST_PLAYER [GAME [EXTRA croupier-bot FLAGS]] (GAME: NAME's)
: >"$OUT/groups.tsv"
base=$PLAYER_BASE
for grp in "${BOT_GROUPS[@]}"; do
    read -r g eng n game extra <<<"$grp"
    e2e_seed_wallets "$base" "$n" $SEED_CHIPS
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$g" "$eng" "$n" "$base" "${game:-$g}" "${extra:-}" \
        >>"$OUT/groups.tsv"
    base=$((base + 100000))
done
: >"$OUT/tours.tsv"
e2e_seed_wallets "$TOUR_PLAYER_BASE" 9 $SEED_CHIPS
e2e_seed_wallets $((TOUR_PLAYER_BASE + 10000)) 27 $SEED_CHIPS
web_start
wait_money_idle
MONEY0=$(money_now)

echo
echo "Running (every figure below comes from these processes and from Redis):"
if [ "$REDIS_CLUSTER" = 1 ]; then
    printf '  %-16s pid %-7s %s\n' redis-cluster "$E2E_CLUSTER_PID" \
        "3 masters + 3 replicas (tests/tcluster_run); money slot's master 127.0.0.1:$REDIS_PORT"
    printf '  %-16s %s\n' "" "seeds $E2E_REDIS_CLUSTER"
else
    printf '  %-16s pid %-7s 127.0.0.1:%s\n' redis-server "$REDIS_PID" "$REDIS_PORT"
fi
[ "$PROMETHEUS" = 1 ] && printf '  %-16s pid %-7s http://127.0.0.1:%s (scrapes every pod every 1 s)\n' \
    prometheus "$PROM_PID" "$PROM_PORT"
for n in "${LIVE[@]}"; do
    if [ "${POD_KIND[$n]}" = game ]; then
        printf '  %-16s pid %-7s croupier-game --engine %-11s rpc :%s health :%s drain bound %s s\n' \
            "$n" "${POD_PID[$n]}" "${POD_ENGINE[$n]}" "${POD_PORT[$n]}" "${POD_HEALTH[$n]}" \
            "${POD_BOUND[$n]}"
    elif [ "${POD_KIND[$n]}" = director ]; then
        printf '  %-16s pid %-7s croupier-director (tournaments) health :%s drain bound %s s\n' \
            "$n" "${POD_PID[$n]}" "${POD_HEALTH[$n]}" "${POD_BOUND[$n]}"
    else
        printf '  %-16s pid %-7s croupier-gate clients :%s websocket :%s health :%s preStop bound %s s\n' \
            "$n" "${POD_PID[$n]}" "${POD_PORT[$n]}" "${POD_WS[$n]}" "${POD_HEALTH[$n]}" "${POD_BOUND[$n]}"
    fi
done
# games_list "game engine"...: "g1, g2 (engine); g3 (engine2)" (one engine's games grouped)
games_list() {
    local ge g eng res='' cur='' names=''
    for ge in "$@"; do
        read -r g eng <<<"$ge"
        if [ "$eng" != "$cur" ]; then
            [ -n "$cur" ] && res+="${res:+; }$names ($cur)"
            cur=$eng
            names=$g
        else
            names+=", $g"
        fi
    done
    [ -n "$cur" ] && res+="${res:+; }$names ($cur)"
    echo "${res:-(none)}"
}
echo "Games the servers offer (from the registry in Redis): $(games_list "${OFFERS[@]}")" | fold -s -w 100
echo "Games the bots have a strategy for (asked of croupier-bot): $(games_list "${PLAYABLE[@]}")" | fold -s -w 100
if [ ${#FALLBACK[@]} -gt 0 ]; then
    echo "No bot strategy yet for: $(games_list "${FALLBACK[@]}"). Their share of the bots"
    echo "  ($TEST_BOTS) plays the \"test\" game on the test engine instead (croupier-game --engine test)."
elif [ "$TEST_BOTS" -gt 0 ]; then
    echo "Every game has a bot strategy; the $TEST_BOTS bots left over (the even split's remainder, and"
    echo "  those held back so that hold'em and Zha Jin Hua keep free seats for a person) play \"test\"."
else
    echo "Every game has a bot strategy; the test engine runs without bots."
fi
if [ -n "$WEB_URL" ]; then
    printf '  %-16s pid %-7s %s (clients/web/serve.mjs: /ws to a live gateway)\n' \
        "browser table" "$WEB_PID" "$WEB_URL"
    echo "Play against the bots in a browser: open $WEB_URL and log in (the token of player"
    echo "  $HUMAN_PLAYER is filled in; any of the seven games, at the bots' tables)."
    # The SDK's quick start (clients/ts/README.md "Quick start", built with the page) through
    # the same /ws, as the human player: one round of blackjack.
    echo "Try the TypeScript SDK (one blackjack round as player $HUMAN_PLAYER): node" \
        "$SRC/clients/ts/examples/quickstart.mjs ws://${WEB_URL#http://}ws $WEB_TOKEN"
fi
echo "Wallets seeded: $SEED_CHIPS chips per bot, house-traditional $HOUSE_CHIPS;" \
    "wallets + rake now: $MONEY0"
# A ready-made operator command (docs/ops.md): the servers of this cluster while it runs.
echo "Look inside while it runs: $BUILD/tools/croupier-ctl $(e2e_redis_flags) servers" \
    "(then: tables SERVER, where PLAYER, wallet PLAYER, round ROUND_ID)"
echo

# ---- the tournaments ---------------------------------------------------------------------
# tour_structure FORMAT: the structure (docs/tournaments.md "Configuration"). Stacks of 1,500.
# The Sit & Go: levels of TOUR_S / 10 seconds; its antes reach every stack (9 x 1,500) at half of
# TOUR_S. The MTT starts at a fifth of TOUR_S; its 8 levels before the last end 12 s after TOUR_S
# (9 s each with --seconds 75): from the one before last on the blinds and antes take most stacks,
# and the last one's antes every stack (27 x 1,500), at about the time the crash step comes (the
# last of the first round of events: ~80 s into the play of a default run on an idle machine).
# Each ends within a few hands of its last level.
tour_structure() {
    local ms=$((TOUR_S * 100)) lv=() l sep=
    [ "$1" = mtt ] && ms=$(((TOUR_S * 4 / 5 + 12) * 1000 / 8))
    if [ "$1" = sng ]; then
        lv=("25 50 0" "50 100 10" "100 200 25" "200 400 50" "600 1200 300" "10000 20000 15000")
        printf '{"format":"sng","seats_per_table":9,"starting_stack":1500,"buy_in":1000,"fee":100,'
        printf '"min_entrants":9,"max_entrants":9,"levels":['
    else
        lv=("25 50 0" "50 100 10" "100 200 25" "150 300 50" "200 400 75" "400 800 100"
            "1000 2000 500" "3000 6000 3000" "20000 40000 50000")
        printf '{"format":"mtt","seats_per_table":9,"starting_stack":1500,"buy_in":1000,"fee":100,'
        printf '"min_entrants":2,"max_entrants":27,"levels":['
    fi
    for l in "${lv[@]}"; do
        read -r sb bb ante <<<"$l"
        printf '%s{"small_blind":%s,"big_blind":%s,"ante":%s,"duration_ms":%s}' "$sep" "$sb" "$bb" \
            "$ante" "$ms"
        sep=,
    done
    printf ']}\n'
}

# tour_create NAME FORMAT BOTS FIRST_PLAYER [START_IN_SECONDS]: croupier-ctl tour create; a line
# of tours.tsv.
tour_create() {
    local id start=()
    tour_structure "$2" >"$OUT/structure-$1.json"
    [ -n "${5:-}" ] && start=(--start-in-seconds "$5")
    # shellcheck disable=SC2046 # e2e_redis_flags: the flag and its value, two words
    id=$("$BUILD/tools/croupier-ctl" $(e2e_redis_flags) --json tour create \
        --name "demo $1" --structure "$OUT/structure-$1.json" "${start[@]}" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
        e2e_die "croupier-ctl tour create failed ($1)"
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$id" "$2" "$3" "$4" >>"$OUT/tours.tsv"
    step "tournament $id: $1 of $3${5:+, starts in $5 s}"
}

# Whether every tournament is over (finished or cancelled).
tours_over() {
    local name id st
    while IFS=$'\t' read -r name id _; do
        st=$(e2e_redis hget "$(e2e_tour_key "$id" meta)" status)
        case $st in finished | cancelled) ;; *) return 1 ;; esac
    done <"$OUT/tours.tsv"
    return 0
}

TOUR_STATUS=()
tour_create sng sng 9 "$TOUR_PLAYER_BASE"
tour_create mtt mtt 27 $((TOUR_PLAYER_BASE + 10000)) $((TOUR_S / 5))

# ---- play ----------------------------------------------------------------------------------
step "bots start"
i=0
while IFS=$'\t' read -r g eng n base game extra; do
    i=$((i + 1))
    engflag=()
    case $eng in
    test) ;;
    traditional | holdem | persistent) engflag=(--engine "$eng") ;;
    *) engflag=(--engine game) ;; # a table-kit engine: its Join names the game alone
    esac
    # the shedding games' bots at half their natural pace (docs/bots.md "Pace"): a Guandan deal
    # of bot moves then takes ~10 s, well inside the traditional pods' 40 s drain bound
    pace=()
    [ "$eng" = traditional ] && pace=(--think-percent 50)
    # shellcheck disable=SC2086 # the group's extra flags are words
    "$BUILD/bots/croupier-bot" --gateways "@$OUT/gateways" --bots "$n" --game "${game:-$g}" \
        "${engflag[@]}" "${pace[@]}" ${extra:-} \
        --seconds 86400 --player-base "$base" --seed "$i" --token-secret-file "$E2E_DIR/secret" \
        --report "$OUT/report-$g.json" --rounds-file "$OUT/rounds-$g.txt" --progress-ms 1000 \
        --finish-timeout-ms 60000 >"$OUT/bot-$g.log" 2>&1 &
    BOT_PIDS+=($!)
    BOT_GAMES+=("$g")
    E2E_PIDS+=($!)
    printf '  %-16s pid %-7s croupier-bot --game %s --bots %s%s%s\n' "bots $g" "$!" "${game:-$g}" \
        "$n" "${engflag[*]:+ ${engflag[*]}}" "${extra:+ $extra}"
done <"$OUT/groups.tsv"
# the tournament fleets: each registers its bots, takes their seats and plays until every bot
# knows its place (then it exits by itself)
while IFS=$'\t' read -r name id format n base; do
    "$BUILD/bots/croupier-bot" --gateways "@$OUT/gateways" --bots "$n" --game holdem \
        --engine holdem --tournament "$id" --seconds 86400 --player-base "$base" \
        --token-secret-file "$E2E_DIR/secret" --report "$OUT/report-tour-$name.json" \
        --progress-ms 1000 --finish-timeout-ms 60000 >"$OUT/bot-tour-$name.log" 2>&1 &
    TOUR_PIDS+=($!)
    E2E_PIDS+=($!)
    printf '  %-16s pid %-7s croupier-bot --game holdem --bots %s --engine holdem --tournament %s\n' \
        "bots tour-$name" "$!" "$n" "$id"
done <"$OUT/tours.tsv"
BOTS_T0=$SECONDS
echo
if [ -t 1 ]; then
    cat <<EOF
Live summary (one screen, updated every second), read from the pods' /readyz, /drain/status and
/metrics, the seats in Redis and the bots' progress lines. desks: a server's actors (its tables
and its lobby); in play: tables with a player in a round; players: seated players (game
servers) or connections (gateways); rounds: completed rounds. Per game the bots' finished,
voided and torn games, the GoAways they were sent, their reconnects (sessions resumed), their
errors other than those, and the rounds a crash voided. Rollout and crash steps scroll above it.
EOF
else
    echo "Every 10 s a line sums the cluster up (pods by state; the bots' connections, finished"
    echo "and torn games, errors); rollout and crash steps appear as they happen."
fi
SUMMARY_LAYOUT=()
[ "$REDIS_CLUSTER" = 1 ] && SUMMARY_LAYOUT=(cluster)
python3 "$SRC/scripts/demo_summary.py" "$OUT" "@$OUT/redis-port" "$T0" "${SUMMARY_LAYOUT[@]}" &
SUMMARY_PID=$!
E2E_PIDS+=("$SUMMARY_PID")
exec 3>&2 2>>"$OUT/demo.log"
STDERR_SAVED=1

nap "$WARMUP"
operator_credits
if [ "$REDIS_HA" = 1 ]; then
    ha_failover
    nap "$PAUSE"
fi
# The first round of events: every game Deployment rolls (the directors after hold'em, while
# both tournaments play), then the gateways, then the crash
# step; spread over the play time (schedule). Rounds after it, while time is left for one:
# every Deployment rolls again (no second crash), so a person at the browser table meets a
# rollout whenever they play.
EVENTS=()
for e in "${ENGINES[@]}"; do
    EVENTS+=("roll_game $e")
    # while both tournaments play
    [ "$e" = holdem ] && EVENTS+=(roll_directors)
done
EVENTS+=(roll_gates crash_step)
schedule "${EVENTS[@]}"
EVENTS=()
for e in "${ENGINES[@]}"; do
    EVENTS+=("roll_game $e")
    [ "$e" = holdem ] && EVENTS+=(roll_directors)
done
EVENTS+=(roll_gates)
while [ $((BOTS_T0 + PLAY_SECONDS - SECONDS)) -gt $((EVENT_S * ${#EVENTS[@]} + 2 * MAX_GAP)) ]; do
    nap "$MAX_GAP"
    schedule "${EVENTS[@]}"
done
left=$((BOTS_T0 + PLAY_SECONDS - SECONDS))
[ "$left" -lt 3 ] && left=3
e2e_log "the rollouts and the crash step are done; the bots play $left s more"
nap "$left"
if ! tours_over; then
    e2e_log "the tournaments are not over: the bots play on until they are ($TOUR_WAIT s at most)"
    end=$((SECONDS + TOUR_WAIT))
    while ! tours_over && ((SECONDS < end)); do nap 1; done
    step "tournaments $(tours_over && echo over || echo 'NOT over')"
fi

step "bots stop"
BOT_STATUS=()
for p in "${BOT_PIDS[@]}" "${TOUR_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
for p in "${BOT_PIDS[@]}"; do
    st=0
    wait "$p" || st=$?
    BOT_STATUS+=("$st")
done
for p in "${TOUR_PIDS[@]}"; do
    st=0
    wait "$p" || st=$?
    TOUR_STATUS+=("$st")
done
step "bots exited (${BOT_STATUS[*]}; tournaments ${TOUR_STATUS[*]})"
step "scale down"
for n in "${LIVE[@]}"; do [ "${POD_KIND[$n]}" = gate ] && stop_pod "$n"; done
for n in "${LIVE[@]}"; do stop_pod "$n"; done
[ -n "$WEB_PID" ] && e2e_stop_pids 5 "$WEB_PID" >/dev/null
stop_watchers
restore_stderr

# ---- report --------------------------------------------------------------------------------
MONEY1=$(money_now)
: >"$OUT/final.tsv"
# The crash step: per killed pod, whether its held epoch is still in the index (0: its chips came
# back), after how long it left it, and what the pods logged of its recovery; the crash-voided
# rounds in the hand histories; what is left held now that every pod has exited.
members=()
for n in "${CRASHED[@]}"; do
    if [ "${POD_KIND[$n]}" = game ]; then
        m=${CRASH_MEMBER[$n]}
        members+=("$m")
        read -r chips voided by <<<"$(recovered_of "$m")"
        printf 'crash\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "${POD_ENGINE[$n]}" "$m" \
            "${CRASH_SEATS[$n]}" "$(e2e_redis sismember '{croupier:money}:held' "$m")" \
            "${CRASH_MS[$n]:--1}" "$chips" "$voided" "$by" >>"$OUT/final.tsv"
    else
        printf 'crash\t%s\tgateway\t-\t-\t-\t-\t-\t-\t-\n' "$n" >>"$OUT/final.tsv"
    fi
done
printf 'held_index\t%s\n' "$(e2e_redis scard '{croupier:money}:held')" >>"$OUT/final.tsv"
if [ "$REDIS_HA" = 1 ]; then
    # shellcheck disable=SC2086 # five words
    [ -n "$HA_FAILOVER" ] && printf 'failover\t%s\t%s\t%s\t%s\t%s\n' $HA_FAILOVER >>"$OUT/final.tsv"
    [ -n "$HA_FAILOVER" ] || printf 'failover\t-\n' >>"$OUT/final.tsv"
fi
if [ "$REDIS_CLUSTER" = 1 ]; then
    # the masters whose keys the sums and counts below read, and the money slot's failover
    printf 'redis_cluster\t%s\t%s\n' "$E2E_REDIS_CLUSTER" "$(e2e_cluster_masters | sort -n | tr '\n' ',' |
        sed 's/,$//')" >>"$OUT/final.tsv"
    # shellcheck disable=SC2086 # four words
    [ -n "$CL_FAILOVER" ] && printf 'cluster_failover\t%s\t%s\t%s\t%s\n' $CL_FAILOVER >>"$OUT/final.tsv"
    [ -n "$CL_FAILOVER" ] || printf 'cluster_failover\t-\n' >>"$OUT/final.tsv"
    # a script whose keys hash to two slots is refused before it is sent and logged once per
    # connection (docs/deploy.md "The binaries on a cluster"): no pod may have met one
    for n in "${ALL_PODS[@]}" "${CRASHED[@]}"; do
        grep -q redis_cluster_crossslot "${POD_LOG[$n]}" 2>/dev/null &&
            E2E_FAILURES+=("pod $n: a script refused for keys in two slots (redis_cluster_crossslot in its log)")
    done
fi
printf 'crash_voids\t%s\t%s\t%s\n' $(crash_voids "${members[@]}") >>"$OUT/final.tsv"
i=0
while IFS=$'\t' read -r g eng n base _; do
    read -r fin missing void settled <<<"$(e2e_rounds_check "$OUT/rounds-$g.txt")"
    # the rounds the bots saw crash-voided: with a crash-void hand history, settled (their
    # result was applied just before the kill), or neither (their start never reached Redis,
    # so nothing of them moved)
    awk '$2 == "crash_voided" { print $1 }' "$OUT/rounds-$g.txt" 2>/dev/null | sort -u \
        >"$OUT/crashed-$g.txt"
    cv_n=$(wc -l <"$OUT/crashed-$g.txt")
    cv_hist=$(grep -cFxf "$OUT/crash-voids.txt" "$OUT/crashed-$g.txt")
    cv_settled=0
    [ "$cv_n" -gt 0 ] && cv_settled=$(sed 's/^/EXISTS {croupier:money}:round:/' \
        "$OUT/crashed-$g.txt" | e2e_redis | grep -c '^1$')
    printf 'bot_crash\t%s\t%s\t%s\t%s\n' "$g" "$cv_n" "$cv_hist" "$cv_settled" >>"$OUT/final.tsv"
    read -r unseen unaccounted <<<"$(e2e_unseen_check "$OUT/rounds-$g.txt" 2>>"$OUT/demo.log")"
    [ "$unaccounted" -eq 0 ] ||
        E2E_FAILURES+=("$g: $unaccounted of $unseen rounds that ended while a bot reconnected were never finished")
    printf 'group\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$g" "$eng" "$n" "${BOT_STATUS[$i]}" \
        "$fin" "$missing" "$void" "$settled" >>"$OUT/final.tsv"
    i=$((i + 1))
done <"$OUT/groups.tsv"
for n in "${ALL_PODS[@]}"; do
    printf 'pod\t%s\t%s\t%s\n' "$n" "${POD_ENGINE[$n]}" "$(e2e_exit_reason "$n")" >>"$OUT/final.tsv"
done
printf 'money\t%s\t%s\n' "$MONEY0" "$MONEY1" >>"$OUT/final.tsv"
# the table-kit games' seat accounts (Zha Jin Hua, Niu Niu, blackjack...): every table cashed out
# when it closed
printf 'accounts\t%s\t%s\t%s\n' 'ts.*' $(e2e_accounts_left 'ts.*') >>"$OUT/final.tsv"
# the rake accounts, each (in the money sum above): the games' (Niu Niu rakes its winners), the
# tournaments' fees, the operator credits' house account
for k in $(e2e_redis_scan '{croupier:money}:rake:*' | sort); do
    printf 'rake\t%s\t%s\n' "${k#\{croupier:money\}:rake:}" "$(e2e_redis get "$k")" >>"$OUT/final.tsv"
done
printf 'settle_records\t%s\n' "$(e2e_redis_scan '{croupier:money}:round:*' | wc -l)" \
    >>"$OUT/final.tsv"
# operator credits: applied, their settle records, the house account's balance
printf 'credits\t%s\t%s\t%s\t%s\t%s\n' "$(awk -F'\t' '$4 == 0' "$OUT/credits.tsv" 2>/dev/null | wc -l)" \
    "$(awk -F'\t' '$4 == 0 { s -= $3 } END { print s + 0 }' "$OUT/credits.tsv" 2>/dev/null)" \
    "$(e2e_redis_scan '{croupier:money}:round:ctl:credit:*' | wc -l)" \
    "$(e2e_redis get '{croupier:money}:rake:credits')" "$(wc -l <"$OUT/credits.tsv")" \
    >>"$OUT/final.tsv"
# the tournaments: the director's records, the hand histories replayed, the fees (demo_tour.py;
# on a Redis Cluster from the money slot's master, REDIS_PORT)
TOUR_LAYOUT=()
[ "$REDIS_CLUSTER" = 1 ] && TOUR_LAYOUT=(--cluster)
python3 "$SRC/scripts/demo_tour.py" "${TOUR_LAYOUT[@]}" "$REDIS_PORT" "$OUT" "${TOUR_STATUS[@]}" \
    >>"$OUT/final.tsv" 2>>"$OUT/demo.log" ||
    E2E_FAILURES+=("the tournaments' records could not be read (scripts/demo_tour.py; see demo.log)")
for f in "${E2E_FAILURES[@]}"; do printf 'failure\t%s\n' "$f" >>"$OUT/final.tsv"; done
for w in "${E2E_WARNINGS[@]}"; do printf 'warning\t%s\n' "$w" >>"$OUT/final.tsv"; done
if [ ${#FALLBACK[@]} -gt 0 ]; then
    printf 'fallback\t%s\n' "$(games_list "${FALLBACK[@]}")" >>"$OUT/final.tsv"
fi
if [ "$PROMETHEUS" = 1 ]; then
    # Every pod has exited: each round counter's last scrape is in the TSDB. A counter lives as
    # long as its pod, so its maximum over the run is what that pod counted; summed by game.
    range=$(awk -v a="$(date +%s)" -v b="$T0" 'BEGIN { printf "%d", a - b + 60 }')
    q="sum by (game) (max_over_time(game_rounds_total{outcome=\"completed\"}[${range}s]))"
    if prom_query "$q" >"$OUT/prometheus-rounds.json" 2>>"$OUT/demo.log"; then
        python3 - "$OUT/prometheus-rounds.json" "$q" "$PROM_PORT" >>"$OUT/final.tsv" <<'PEOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("prom_query\t%s\t%s" % (sys.argv[3], sys.argv[2]))
for r in d["data"]["result"]:
    print("prom_rounds\t%s\t%d" % (r["metric"].get("game", "?"), round(float(r["value"][1]))))
PEOF
    else
        printf 'failure\t%s\n' "prometheus did not answer the rounds query (log $E2E_DIR/prometheus.log)" \
            >>"$OUT/final.tsv"
    fi
    # Whether it scraped every pod: each pod's `up` (1 after a successful scrape) over the run.
    q='max by (pod) (max_over_time(up{job="croupier"}['"${range}"'s]))'
    if prom_query "$q" >"$OUT/prometheus-up.json" 2>>"$OUT/demo.log"; then
        python3 - "$OUT/prometheus-up.json" >>"$OUT/final.tsv" <<'PEOF'
import json, sys
for r in json.load(open(sys.argv[1]))["data"]["result"]:
    print("prom_up\t%s\t%d" % (r["metric"].get("pod", "?"), round(float(r["value"][1]))))
PEOF
    else
        printf 'failure\t%s\n' "prometheus did not answer the up query (log $E2E_DIR/prometheus.log)" \
            >>"$OUT/final.tsv"
    fi
    e2e_stop_pids 5 "$PROM_PID" >/dev/null
fi
if [ "$REDIS_CLUSTER" = 1 ]; then
    e2e_stop_pids 10 "$E2E_CLUSTER_PID" >/dev/null # every node stopped, their directories removed
else
    e2e_stop_pids 5 "$REDIS_PID" >/dev/null
fi

echo
REPORTED=1
python3 "$SRC/scripts/demo_report.py" "$OUT"
verdict=$?
python3 "$SRC/tests/e2e/chart.py" "$OUT" >/dev/null 2>"$OUT/chart.log" ||
    echo "demo: chart.py failed (see $OUT/chart.log)"
if [ -s "$OUT/chart.svg" ]; then
    echo "Chart (the verdict; each rollout and the crash a named band; desks per pod of every"
    echo "engine, connections per gateway, what the players felt: torn rounds, errors, reconnects):"
    echo "  $OUT/chart.svg"
    [ -s "$OUT/chart.png" ] && echo "  $OUT/chart.png"
else
    echo "Chart: not drawn (./dev installs gnuplot-nox; is it there?): see $OUT/chart.log"
fi
echo "Report: $OUT/report.md   bot reports: $OUT/report-*.json   pod logs: $OUT/logs/"
exit "$verdict"
