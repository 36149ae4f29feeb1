#!/usr/bin/env bash
# bench/match_wait.sh BUILD_DIR [PLAYERS] [SERVERS]: a match hall's re-pairing through the real
# servers (issue 29; docs/tournaments.md "Match halls"): a Dou Dizhu 打立出局 stage of PLAYERS
# (default 300) croupier-bot players through one gateway, SERVERS traditional servers (default 3)
# and one director. The base grows slowly (the stage lasts about a minute), the bots play their
# deals as fast as they move and take their next seat on the MOVED_TABLE push.
#
# From the hand histories the director wrote (docs/hand-history.md, the `match` object): the wait
# of a player between two deals of the stage -- from the end of his deal (`ended_ms`, when its
# table reported it) to the start of his next one (`ts`) -- p50 / p99 / max, over every player's
# consecutive deals. It includes waiting for three players to be free (a table starts when full),
# the director's pairing, the claim and deal at a server and the players coming to the table.
# Target (issue 29): p99 <= 2 s on loopback at 300 players. Prints the figures, the deals and time.
set -u
BUILD=$(cd "${1:?usage: match_wait.sh BUILD_DIR [PLAYERS] [SERVERS]}" && pwd)
PLAYERS=${2:-300}
SERVERS=${3:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bench-match.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; rm -rf "$E2E_DIR"' EXIT
BASE=8800000
e2e_secret
e2e_redis_start
e2e_director_start dir-a --claim-ttl-ms 1500 --scan-ms 100 >/dev/null
for i in $(seq 1 "$SERVERS"); do
    e2e_game_start "g$i" traditional 30 --trad-action-ms 5000 --trad-trustee-ms 100 \
        --trad-gap-ms 0 --trad-tour-join-ms 3000 --trad-tour-host-ttl-ms 1500 \
        --trad-tour-tables 200 >/dev/null
done
e2e_gate_start gate-a >/dev/null
e2e_seed_wallets $BASE "$PLAYERS" 1000 >/dev/null
# The stage ends when 30 are left; the line (20 x base) reaches the starting 1,000 after about
# 45 s (base 10, +10 % every 3 s).
cat >"$E2E_DIR/structure.json" <<EOF
{"format":"match","game":"doudizhu","buy_in":10,"fee":1,"min_entrants":$PLAYERS,
 "max_entrants":$PLAYERS,"stages":[
 {"format":"rising","seats":3,"start_score":1000,"base_score":10,"growth_pct":10,
  "growth_ms":3000,"out_pct":2000,"advance":30},
 {"format":"fixed","seats":3,"deals_per_round":1}]}
EOF
ID=$("$BUILD/tools/croupier-ctl" --redis "127.0.0.1:$REDIS_PORT" tour create \
    --structure "$E2E_DIR/structure.json" --name bench) || e2e_die "tour create failed"
t0=$(date +%s%3N)
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots "$PLAYERS" \
    --game doudizhu --engine traditional --tournament "$ID" --seconds 600 --player-base $BASE \
    --token-secret-file "$E2E_DIR/secret" --report "$E2E_DIR/report.json" \
    >"$E2E_DIR/bots.log" 2>&1 || e2e_log "croupier-bot exited $?"
t1=$(date +%s%3N)
[ "$(e2e_redis hget "{croupier:tour:$ID}:meta" status)" = finished ] ||
    e2e_die "the match did not finish"
e2e_redis --raw xrange '{croupier:history:doudizhu}:stream' - + >"$E2E_DIR/history.txt"
python3 - "$E2E_DIR/history.txt" "$ID" "$PLAYERS" "$SERVERS" $(((t1 - t0) / 1000)) <<'EOF'
import json, sys
path, tid, players, servers, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
deals = {}
n = 0
for line in open(path):
    line = line.strip()
    if not line.startswith("{") or '"match"' not in line:
        continue
    r = json.loads(line)
    m = r.get("match", {})
    if m.get("id") != tid or r["outcome"] != "completed" or m.get("stage") != 0:
        continue
    n += 1
    for s in r["seats"]:
        deals.setdefault(s["player"], []).append((r["ts"], m["ended_ms"]))
waits = []
for p, ds in deals.items():
    ds.sort()
    for (a, b), (c, d) in zip(ds, ds[1:]):
        waits.append(c - b)
waits.sort()
def pct(q):
    return waits[min(len(waits) - 1, int(q * len(waits)))] if waits else -1
print("match_wait: %s players, %s servers: %d deals of the 打立出局 stage, %d waits; "
      "wait from a deal's end to the next deal's start p50 %d ms, p99 %d ms, max %d ms "
      "(target p99 <= 2000 ms); the match took %s s" %
      (players, servers, n, len(waits), pct(0.5), pct(0.99), waits[-1] if waits else -1, secs))
EOF
