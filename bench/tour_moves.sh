#!/usr/bin/env bash
# bench/tour_moves.sh BUILD_DIR [PLAYERS] [SERVERS]: tournament seat moves through the real
# servers (docs/tournaments.md "Tables at the servers"): an MTT of PLAYERS (default 270: thirty
# nine-handed tables) absent players -- blinded away, so hands are as fast as the servers and the
# director go -- on SERVERS hold'em servers (default 2) and one director, played to one winner.
# No hand-for-hand (absent players only lose chips to blinds that grow, and it would stop the
# level clock).
#
# From the hand histories the director wrote (docs/hand-history.md, the `tournament` object):
#   - seat moves per second: the players whose next hand was at another table (a balance or a
#     break; not a bust), over the time from the first hand's start to the last hand's end;
#   - the wait of a moved player: from the end of his last hand at the old table (`ended_ms`) to
#     the start of his first hand at the new one (`ts`), p50 / p99 / max. It includes waiting for
#     the new table's hand in play to end (a moved player is dealt in at its next hand) and for
#     the button when he arrives between the small blind and the button.
# Prints the figures and the hands, tables and time.
set -u
BUILD=$(cd "${1:?usage: tour_moves.sh BUILD_DIR [PLAYERS] [SERVERS]}" && pwd)
PLAYERS=${2:-270}
SERVERS=${3:-2}
SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bench-tour.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; rm -rf "$E2E_DIR"' EXIT
e2e_redis_start
e2e_director_start dir-a --claim-ttl-ms 1500 --scan-ms 100 >/dev/null
for i in $(seq 1 "$SERVERS"); do
    e2e_game_start "g$i" holdem 30 --holdem-trustee-ms 1 --holdem-gap-ms 0 \
        --holdem-tour-host-ttl-ms 1500 >/dev/null
done
cat >"$E2E_DIR/structure.json" <<'EOF'
{"format":"mtt","seats_per_table":9,"starting_stack":1000,"buy_in":10,"fee":1,"min_entrants":2,
 "max_entrants":100000,"hand_for_hand_margin":0,"levels":[
 {"small_blind":10,"big_blind":20,"duration_ms":4000},
 {"small_blind":50,"big_blind":100,"ante":10,"duration_ms":4000},
 {"small_blind":200,"big_blind":400,"ante":50,"duration_ms":4000},
 {"small_blind":1000,"big_blind":2000,"ante":200,"duration_ms":4000},
 {"small_blind":10000,"big_blind":20000,"ante":2000,"duration_ms":4000},
 {"small_blind":100000,"big_blind":200000,"ante":20000,"duration_ms":4000},
 {"small_blind":1000000,"big_blind":2000000,"duration_ms":4000}]}
EOF
ID=$("$BUILD/tools/croupier-ctl" --redis "127.0.0.1:$REDIS_PORT" --json tour create \
    --name bench --structure "$E2E_DIR/structure.json" --start-in-seconds 6 |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') || e2e_die "tour create failed"
for p in $(seq 1 "$PLAYERS"); do
    echo "SET {croupier:money}:wallet:$((7700000 + p)) 1000"
    echo "XADD {croupier:tour:$ID}:in * op register req b$p player $((7700000 + p))"
done | e2e_redis >/dev/null
end=$((SECONDS + 600))
while [ "$(e2e_redis hget "{croupier:tour:$ID}:meta" status)" != finished ] && [ $SECONDS -lt $end ]; do
    sleep 0.5
done
[ "$(e2e_redis hget "{croupier:tour:$ID}:meta" status)" = finished ] || e2e_die "not finished"
e2e_redis --raw xrange '{croupier:history:holdem}:stream' - + >"$E2E_DIR/history.txt"
python3 - "$E2E_DIR/history.txt" "$ID" "$PLAYERS" <<'EOF'
import json, sys
path, tid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
recs = []
for line in open(path):
    line = line.strip()
    if line.startswith("{") and '"tournament"' in line:
        r = json.loads(line)
        t = r.get("tournament", {})
        if t.get("id") == tid and r["outcome"] == "completed":
            recs.append(r)
recs.sort(key=lambda r: r["ts"])
last = {}  # player -> (table, ended_ms)
waits = []
for r in recs:
    t = r["tournament"]
    for s in r["seats"]:
        p = s["player"]
        if p in last and last[p][0] != t["table"]:
            waits.append(r["ts"] - last[p][1])
        last[p] = (t["table"], t["ended_ms"])
span = (max(r["tournament"]["ended_ms"] for r in recs) - min(r["ts"] for r in recs)) / 1000.0
waits.sort()
pct = lambda q: waits[min(len(waits) - 1, int(q * len(waits)))] if waits else 0
tables = len({r["tournament"]["table"] for r in recs})
print("players %d, tables %d, hands %d, %.1f s" % (n, tables, len(recs), span))
print("seat moves: %d, %.1f per second" % (len(waits), len(waits) / span if span else 0))
print("moved player's wait (ms): p50 %d, p99 %d, max %d" % (pct(0.5), pct(0.99), waits[-1] if waits else 0))
EOF
