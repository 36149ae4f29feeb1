#!/usr/bin/env bash
# bench/failover_rounds.sh BUILD_DIR [FAILOVERS] [MIN_REPLICAS]: how long real tables stop
# starting and finishing rounds while Redis fails over, against Sentinel's own detection time
# (docs/deploy.md "Failover and durability").
#
# Redis as the prod overlay runs it (a master, two replicas, three Sentinels with
# down-after-milliseconds 1000: tests/e2e/lib.sh e2e_ha_start), two croupier-game servers of the
# test engine (rounds of 300 ms) and two gateways finding the master through the sentinels, and
# bots playing through both gateways. FAILOVERS times (default 8): the master is SIGKILLed,
# Sentinel promotes a replica, the dead node comes back empty as a replica of the new master,
# the tables play on for a few seconds. The hand histories are the clock: each record's `ts` is
# when its round began (the game server's clock), its stream id when Redis stored it
# (docs/hand-history.md). Per failover, from the kill to the next one (30 s at most):
#   no-start  the longest time between two round starts across all tables;
#   no-record the longest time between two rounds recorded (settled and in the history);
# and p50/p99/max of each over the failovers, beside the promotion time (kill -> a new master
# named by the sentinels). Then the zero-loss checks of the e2e tests: every round the bots saw
# finish has its settle record, wallets + rake equal what was seeded; exit 1 when one fails.
# MIN_REPLICAS: --redis-min-replicas of the game servers (default: theirs, 1 with sentinels).
set -u
BUILD=$(cd "${1:?usage: failover_rounds.sh BUILD_DIR [FAILOVERS] [MIN_REPLICAS]}" && pwd)
FAILOVERS=${2:-8}
MIN_REPLICAS=${3:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bench-failover.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
case $FAILOVERS in '' | *[!0-9]* | 0) e2e_die "FAILOVERS must be a positive whole number" ;; esac
export CROUPIER_TEST_ROUND_MS=300
BOTS=40
now_ms() { date +%s%3N; }
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}

e2e_secret
e2e_ha_start
HA=(--redis-sentinels "$E2E_HA_SENTINELS" --redis-master croupier)
GAME_HA=("${HA[@]}")
[ -n "$MIN_REPLICAS" ] && GAME_HA+=(--redis-min-replicas "$MIN_REPLICAS")
# A lease outlives a failover (down-after 1000 ms + the election); the sweeper's grace longer.
for g in game-a game-b; do
    e2e_game_start "$g" test 30 --lease-ttl-ms 6000 --recover-grace-ms 12000 "${GAME_HA[@]}" >/dev/null
done
e2e_gate_start gate-a "${HA[@]}" >/dev/null
e2e_gate_start gate-b "${HA[@]}" >/dev/null
e2e_seed_wallets 9000000 "$BOTS" 1000000
sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
play=$((FAILOVERS * 12 + 10))
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]},127.0.0.1:${POD_PORT[gate-b]}" \
    --bots "$BOTS" --game test --engine traditional --seconds "$play" --player-base 9000000 \
    --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 60000 \
    --report "$E2E_DIR/report.json" --rounds-file "$E2E_DIR/rounds.txt" >"$E2E_DIR/bot.log" 2>&1 &
BOT=$!
E2E_PIDS+=("$BOT")
sleep 5
: >"$E2E_DIR/kills.txt"
for ((k = 1; k <= FAILOVERS; k++)); do
    old=$(e2e_ha_master_port)
    t0=$(now_ms)
    kill -KILL "${E2E_HA_PID[$old]}"
    new=$(e2e_ha_wait_promoted "$old")
    promoted=$(($(now_ms) - t0))
    if [ -z "$new" ]; then
        check "failover $k: a replica was promoted within 10 s" false
        break
    fi
    e2e_ha_wait_settled "$new"
    e2e_ha_node_start "$old" "$new"
    e2e_ha_wait_all 15 || e2e_log "failover $k: the sentinels do not see every node yet"
    echo "$t0 $promoted" >>"$E2E_DIR/kills.txt"
    e2e_log "failover $k: master $old SIGKILLed, $new promoted after $promoted ms"
    # Tables play on between failovers, and the window after a kill holds no other kill.
    sleep $((12 - ($(now_ms) - t0) / 1000 > 4 ? 12 - ($(now_ms) - t0) / 1000 : 4))
done
wait "$BOT"
bot_status=$?
for p in gate-a gate-b game-a game-b; do e2e_pod_terminate "$p" >/dev/null; done

e2e_redis xrange '{croupier:history:test}:stream' - + >"$E2E_DIR/history.txt"
python3 - "$E2E_DIR/history.txt" "$E2E_DIR/kills.txt" <<'EOF'
import json, re, sys
starts, records = [], []
sid = None
for l in open(sys.argv[1]):
    l = l.strip()
    if re.fullmatch(r"\d+-\d+", l):
        sid = int(l.split("-")[0])  # an entry's stream id: the ms Redis stored it
    elif l.startswith("{") and sid is not None:
        starts.append(int(json.loads(l)["ts"]))
        records.append(sid)
starts.sort()
records.sort()
kills = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
def gap(ts, t0, t1):
    # the longest pause between two times that brackets a moment in [t0, t1): from the kill
    # (t0) to the next kill or 30 s on (t1); -1 when none
    w = [t for t in ts if t0 - 5000 <= t <= t1]
    return max((b - a for a, b in zip(w, w[1:]) if b > t0 and a < t1), default=-1)
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
rows = []
for n, (t0, promoted) in enumerate(kills, 1):
    t1 = min(t0 + 30000, kills[n][0]) if n < len(kills) else t0 + 30000
    s, r = gap(starts, t0, t1), gap(records, t0, t1)
    rows.append((promoted, s, r))
    print("failover %d: promoted %d ms; no round started for %d ms, none recorded for %d ms" % (n, promoted, s, r))
for name, i in (("promotion", 0), ("no round started", 1), ("no round recorded", 2)):
    v = [row[i] for row in rows]
    print("%s: p50 %d ms, p99 %d ms, max %d ms (%d failovers; down-after-milliseconds 1000)" %
          (name, pct(v, 50), pct(v, 99), max(v), len(v)))
print("rounds recorded: %d" % len(records))
EOF
read -r fin missing void settled <<<"$(e2e_rounds_check "$E2E_DIR/rounds.txt")"
check "bot exit status 0 (log $E2E_DIR/bot.log)" test "$bot_status" -eq 0
check "every round the bots saw finish settled ($fin finished, $missing without a settle record)" \
    test "$fin" -gt 0 -a "$missing" -eq 0
sum1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
check "wallets + rake equal what was seeded ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"
exit $fail
