#!/usr/bin/env bash
# bench/table_move.sh BUILD_DIR [DRAINS] [BOTS]: how long a whole-table move takes
# (docs/protocol.md "Whole-table moves"), over DRAINS drains (default 6) of Zha Jin Hua servers
# with BOTS bots (default 36: tables of three) playing through one gateway.
#
# Each drain starts a new server, then terminates the oldest one as kubelet does (preStop,
# SIGTERM); its tables offer themselves when their round ends (or at once, between rounds) and
# the others adopt them. A sample per moved player: from the table's move start on the old
# server (its round's end once settled, or the drain when the table was between rounds -- the
# game's own gap between rounds is not counted) to the gateway's Moved for that player (the
# adopter's Snapshot in hand): the old server's tk_table_offered line (ts - ms) to the gateway's
# player_moved line of that offer. The bots' own figure (their last RoundEnd -> the Moved, which
# does count a gap the drain fell into) is printed beside it.
# Prints p50/p99/max over all samples, and the phases: move start -> offer written, offer ->
# adopted, offer -> old desk released.
set -u
BUILD=$(cd "${1:?usage: table_move.sh BUILD_DIR [DRAINS] [BOTS]}" && pwd)
DRAINS=${2:-6}
BOTS=${3:-36}
SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bench-move.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; rm -rf "$E2E_DIR"' EXIT
export CROUPIER_ZHAJINHUA_GAP_MS=300
n=0
ALIVE=()
game_pod() {
    n=$((n + 1))
    e2e_game_start "g$n" zhajinhua 30 >/dev/null
    ALIVE+=("g$n")
}
e2e_secret
e2e_redis_start
e2e_seed_wallets 8100000 "$BOTS" 100000000
game_pod
game_pod
e2e_gate_start gate-a >/dev/null
secs=$((6 + DRAINS * 4))
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots "$BOTS" \
    --game zhajinhua --engine game --stake 10 --seconds "$secs" --player-base 8100000 \
    --token-secret-file "$E2E_DIR/secret" --report "$E2E_DIR/report.json" \
    >"$E2E_DIR/bot.log" 2>&1 &
bot=$!
sleep 5
for _ in $(seq 1 "$DRAINS"); do
    game_pod
    old=${ALIVE[0]}
    ALIVE=("${ALIVE[@]:1}")
    e2e_pod_terminate "$old" >/dev/null
    sleep 1
done
wait "$bot"
for p in "${ALIVE[@]}" gate-a; do e2e_pod_terminate "$p" >/dev/null; done
python3 - "$E2E_DIR" "$E2E_DIR/report.json" <<'EOF'
import glob, json, math, sys
from datetime import datetime

def ts(line):
    return datetime.strptime(line["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000.0

start, offered, released, adopted, moved = {}, {}, {}, {}, []
for path in glob.glob(sys.argv[1] + "/*.log"):
    for raw in open(path):
        if not raw.startswith("{"):
            continue
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        ev = e.get("event")
        if ev == "tk_table_offered":
            start[e["offer"]] = ts(e) - e["ms"]
            offered[e["offer"]] = ts(e)
        elif ev == "tk_table_moved":
            released[e["offer"]] = ts(e)
        elif ev == "tk_table_adopted":
            adopted[e["offer"]] = ts(e)
        elif ev == "player_moved" and e.get("offer"):
            moved.append((e["offer"], ts(e)))

def pct(v, p):
    v = sorted(v)
    return v[max(0, min(len(v) - 1, math.ceil(p / 100.0 * len(v)) - 1))] if v else float("nan")

def line(name, v):
    print("%-34s p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms  (%d)" %
          (name, pct(v, 50), pct(v, 99), max(v) if v else float("nan"), len(v)))

samples = [t - start[o] for o, t in moved if o in start]
line("move start -> player's Moved", samples)
line("move start -> offer written", [offered[o] - start[o] for o in offered])
line("offer -> adopted", [adopted[o] - offered[o] for o in adopted if o in offered])
line("offer -> old desk released", [released[o] - offered[o] for o in released if o in offered])
rep = json.load(open(sys.argv[2]))
m = rep.get("table_move_ms", {})
print("bots: last RoundEnd -> Moved       p50 %s ms  p99 %s ms  (%s); table moves %s, "
      "match state lost %s, torn %s" % (m.get("p50"), m.get("p99"), m.get("samples"),
      rep["counters"].get("table_moves"), rep["counters"].get("match_state_lost"),
      rep["games"].get("torn")))
EOF
