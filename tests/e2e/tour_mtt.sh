#!/usr/bin/env bash
# End-to-end test (issue 28, docs/tournaments.md): a multi-table tournament of BOTS (90) bots on
# three hold'em servers and two gateways, with fast levels. While it plays, every game server
# rolls (a new pod ready, then the old one's preStop and SIGTERM: its tables are handed over
# between hands), both gateways roll (the bots follow the endpoints), one game server is
# SIGKILLed (its tables' claims expire and other servers re-deal the hands it was playing), and
# the director's process is SIGKILLed (the standby director takes the tournament over).
#
# Checks: the tournament finishes with exactly one winner; every entrant has one place; the
# prizes paid equal the buy-ins (no guarantee) and the fees are the house's; wallets + rake +
# prize pools equal what was seeded; the hand histories replayed player by player conserve the
# chips at every hand and end with the winner holding them all; the last hands are played at one
# table (the field broken down to a final table); no bot saw a torn hand or an unexpected error.
#
#   tests/e2e/tour_mtt.sh BUILD_DIR [SOURCE_DIR]
# Env: BOTS (90), CROUPIER_KEEP_LOGS=1 keeps the work dir.
set -u
BUILD=$(cd "${1:?usage: tour_mtt.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/croupier-tour-mtt.XXXXXX")
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
BOTS=${BOTS:-90}
BASE=9100000
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}

# Hold'em servers that host tournament tables: absent players' moves after 200 ms, 200 ms
# between hands, claims lapsing 1.5 s after their server stopped renewing them.
game_pod() { # NAME
    e2e_game_start "$1" holdem 30 --service croupier-holdem --lease-ttl-ms 2000 \
        --recover-grace-ms 3000 --sweep-ms 200 --holdem-trustee-ms 200 --holdem-gap-ms 200 \
        --holdem-action-ms 5000 --holdem-tour-host-ttl-ms 1500 ${GAME_ARGS:-}
}
GATES=()
publish() { e2e_endpoints_publish "$E2E_DIR/gateways" "${GATES[@]}"; }
gate_pod() { # NAME
    e2e_gate_start "$1"
    e2e_gate_prestop "$1"
    GATES+=("$1")
    publish
}
gate_roll() { # OLD NEW: the new one ready and published, the old one withdrawn, then ended
    local out=() g
    gate_pod "$2"
    for g in "${GATES[@]}"; do [ "$g" != "$1" ] && out+=("$g"); done
    GATES=("${out[@]}")
    publish
    check "$1 ended cleanly (preStop, SIGTERM)" e2e_pod_terminate "$1"
}
meta() { e2e_tour_meta "$1"; }
# The tournament tables a game pod hosts now (claimed minus let go, from its log).
hosting() { e2e_tour_hosting "$1"; }
handed_over() { [ "$(grep -c '"tk_tour_table_released"' "${POD_LOG[$1]}")" -gt 0 ]; }

e2e_secret
e2e_redis_start
e2e_director_start dir-a --claim-ttl-ms 1500 --scan-ms 100
e2e_director_start dir-b --claim-ttl-ms 1500 --scan-ms 100
for n in game-1 game-2 game-3; do game_pod "$n"; done
gate_pod gate-a
gate_pod gate-b
e2e_seed_wallets $BASE "$BOTS" 100000
sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))

# Nine-handed tables; levels of 15 s that outgrow the stacks within a few minutes.
STRUCTURE='{"format":"mtt","seats_per_table":9,"starting_stack":1500,"buy_in":100,"fee":10,
"min_entrants":2,"max_entrants":1000,"levels":[
{"small_blind":10,"big_blind":20,"duration_ms":15000},
{"small_blind":25,"big_blind":50,"duration_ms":15000},
{"small_blind":50,"big_blind":100,"ante":10,"duration_ms":15000},
{"small_blind":100,"big_blind":200,"ante":25,"duration_ms":15000},
{"small_blind":300,"big_blind":600,"ante":600,"big_blind_ante":true,"duration_ms":15000},
{"small_blind":1000,"big_blind":2000,"ante":2000,"big_blind_ante":true,"duration_ms":15000},
{"small_blind":5000,"big_blind":10000,"ante":10000,"big_blind_ante":true,"duration_ms":15000},
{"small_blind":50000,"big_blind":100000,"ante":100000,"big_blind_ante":true,"duration_ms":15000}]}'
echo "$STRUCTURE" >"$E2E_DIR/structure.json"
ID=$("$BUILD/tools/croupier-ctl" --redis "127.0.0.1:$REDIS_PORT" --json tour create \
    --name "e2e mtt" --structure "$E2E_DIR/structure.json" --start-in-seconds 8 |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
    e2e_die "croupier-ctl tour create failed"
TOUR_ID=$ID
e2e_log "tournament $ID: $BOTS bots, starts in 8 s"

"$BUILD/bots/croupier-bot" --gateways "@$E2E_DIR/gateways" --bots "$BOTS" --game holdem \
    --engine holdem --tournament "$ID" --seconds 600 --player-base $BASE \
    --token-secret-file "$E2E_DIR/secret" --report "$E2E_DIR/report.json" \
    >"$E2E_DIR/bots.log" 2>&1 &
BOT_PID=$!
E2E_PIDS+=($BOT_PID)

wait_status() { e2e_tour_wait_status "$@"; }
check "the MTT starts with every bot registered" wait_status running 30
check "every bot is an entrant ($(meta entries) of $BOTS)" test "$(meta entries)" -eq "$BOTS"
sleep 8
e2e_log "tables hosted: game-1 $(hosting game-1), game-2 $(hosting game-2), game-3 $(hosting game-3)"
# The servers roll one by one (a replacement ready first), with the gateways between them.
for step in "game-1 game-4 gate-a gate-c" "game-2 game-5 gate-b gate-d" "game-3 game-6"; do
    read -r old new gold gnew <<<"$step"
    game_pod "$new"
    h=$(hosting "$old")
    check "$old ended cleanly" e2e_pod_terminate "$old"
    [ "$h" -gt 0 ] && check "$old handed its $h tables over between hands" handed_over "$old"
    [ -n "${gold:-}" ] && gate_roll "$gold" "$gnew"
done
running=$([ "$(meta status)" = running ] && echo 1 || echo 0)
check "still running after the rolls (the faults below strike a tournament in play)" test "$running" = 1
# A game server that hosts tables dies mid-hand; then the director that owns the tournament dies.
victim=game-4
for g in game-5 game-6; do [ "$(hosting $g)" -gt "$(hosting $victim)" ] && victim=$g; done
check "the server to kill hosts tables ($victim: $(hosting $victim))" test "$(hosting $victim)" -gt 0
kill -KILL "${POD_PID[$victim]}"
e2e_log "$victim SIGKILLed with $(hosting $victim) tables"
owner=$(meta owner_id)
kill -KILL "${POD_PID[$owner]}"
e2e_log "director $owner (the tournament's owner) SIGKILLed"
check "the tournament finishes (one winner)" wait_status finished "${FINISH_S:-300}"
if [ "$(meta status)" != finished ]; then # what the tables and the director say, for the log
    e2e_redis hgetall "{croupier:tour:$ID}:meta" | paste - - | grep -v structure
    e2e_redis hgetall "{croupier:tour:$ID}:tables" | paste - - | grep -v '"closed":true'
    for t in $(seq 1 12); do echo "host:$t $(e2e_redis get "{croupier:tour:$ID}:host:$t")"; done
    e2e_redis xrevrange "{croupier:tour:$ID}:log" + - COUNT 20 | paste - - - - - | tail -20
fi
redeals=$(e2e_redis xrange "{croupier:tour:$ID}:log" - + | grep -c '^redeal$')
e2e_log "hands re-dealt after the crash or a handover: $redeals"
wait "$BOT_PID"
bot_status=$?

# Places, prizes, money.
read -r entrants firsts placed prizes <<<"$(e2e_redis hgetall "{croupier:tour:$ID}:entries" |
    python3 -c '
import json, sys
lines = sys.stdin.read().split("\n")
es = [json.loads(v) for v in lines[1::2] if v]
print(len(es), sum(1 for e in es if e["place"] == 1), sum(1 for e in es if e["place"] >= 1),
      sum(e["prize"] for e in es))')"
check "one place per entrant ($placed of $entrants), one winner ($firsts)" \
    test "$placed" -eq "$entrants" -a "$firsts" -eq 1 -a "$entrants" -eq "$BOTS"
check "the prizes paid equal the buy-ins ($prizes, $((BOTS * 100)))" test "$prizes" -eq $((BOTS * 100))
fees=$(e2e_redis get '{croupier:money}:rake:tournament')
check "the fees are the house's (${fees:-0}, $((BOTS * 10)))" test "${fees:-0}" -eq $((BOTS * 10))
check "no prize pool is left ($(e2e_redis exists "{croupier:money}:tourpool:$ID"))" \
    test "$(e2e_redis exists "{croupier:money}:tourpool:$ID")" -eq 0
sum1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
check "wallets + rake + pools equal what was seeded ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"

# The hand histories, replayed player by player (an independent check of the director's chips).
e2e_redis --raw xrange '{croupier:history:holdem}:stream' - + >"$E2E_DIR/history.txt"
verdict=$(python3 - "$E2E_DIR/history.txt" "$ID" "$BOTS" 1500 <<'EOF'
import json, sys
path, tid, n, starting = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
recs = []
for line in open(path):
    line = line.strip()
    if line.startswith("{") and '"tournament"' in line:
        r = json.loads(line)
        if r.get("tournament", {}).get("id") == tid and r["outcome"] == "completed":
            recs.append(r)
stack, bad, tables = {}, [], []
for r in recs:
    res = {x["seat"]: x["delta"] for x in r["results"]}
    if sum(res.values()) != 0:
        bad.append("hand %s: results sum to %d" % (r["round"], sum(res.values())))
    for s in r["seats"]:
        p = s["player"]
        want = stack.get(p, starting)
        if s["stack"] != want:
            bad.append("player %s starts hand %s with %d, had %d" % (p, r["round"], s["stack"], want))
        stack[p] = s["stack"] + res.get(s["seat"], 0)
        if stack[p] < 0:
            bad.append("player %s below 0" % p)
    tables.append(r["tournament"]["table"])
total = sum(stack.values()) + starting * (n - len(stack))
last = tables[-5:]
print(len(recs), len(bad), total, max(stack.values() or [0]), len(set(tables)), len(set(last)),
      (bad[:3] or ["-"])[0].replace(" ", "_"))
EOF
)
read -r hands nbad total biggest ntables last_tables first_bad <<<"$verdict"
check "the hand histories conserve the chips at every hand ($hands hands, $nbad bad: $first_bad)" \
    test "$hands" -gt 0 -a "$nbad" -eq 0
check "the chips in play are what was handed out ($total of $((BOTS * 1500)))" \
    test "$total" -eq $((BOTS * 1500))
check "the winner holds every chip ($biggest)" test "$biggest" -eq $((BOTS * 1500))
check "played on $ntables tables, broken down to one final table (last hands on $last_tables)" \
    test "$ntables" -ge $(((BOTS + 8) / 9)) -a "$last_tables" -eq 1

# What the bots saw.
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$E2E_DIR/report.json" "$1"; }
if [ -s "$E2E_DIR/report.json" ]; then
    check "bots: exit status 0 ($bot_status)" test "$bot_status" -eq 0
    check "bots: torn hands = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
    check "bots: unexpected errors = 0 ($(num 'sum(e["unexpected"] for e in d["errors"].values())'))" \
        test "$(num 'sum(e["unexpected"] for e in d["errors"].values())')" -eq 0
    check "bots: every bot learned its place ($(num 'len(d["tournament"]["places"])'))" \
        test "$(num 'len(d["tournament"]["places"])')" -eq "$BOTS"
else
    check "bots wrote their report (log $E2E_DIR/bots.log)" false
fi
for p in game-4 game-5 game-6; do
    [ "$p" != "$victim" ] && e2e_pod_terminate "$p"
done
for p in "${GATES[@]}"; do e2e_pod_terminate "$p"; done
exit $fail
