#!/usr/bin/env bash
# Integration test (issue 16): a private Dou Dizhu room of 8 deals survives three drains in
# between (docs/protocol.md "Private rooms", engine/tk.h "rooms").
#
#   tests/e2e/room_drains.sh BUILD_DIR [SOURCE_DIR]
#
# redis, croupier-game A (--engine traditional --games doudizhu), one croupier-gate, three
# croupier-bot players (--think-percent 25: deals of seconds) in one room (--room-seats 3
# --room-deals 8: the first creates it, the others join by its code). After two deals B starts and A is terminated as kubelet does
# (preStop, SIGTERM): A finishes its deal and the room moves whole to B; after two more, C
# takes it from B; after two more, D from C. Checks: the room's record ends FINISHED with 8
# deals, all of them distinct rounds; each deal settled exactly once (one settle record and one
# hand history per round id); the final scoreboard is, player by player, the sum of the chips
# the settle records moved (each deal's seat balance after, from its settle record, less the
# stack it began with); the room moved three times (3 players x 3 whole-table moves), no match
# state lost, no torn game. Then E starts, the bots' next room plays on D and D is SIGKILLed
# mid-room: its players are told TableClosing{CRASHED} and not seated at any other table (the
# gateway logs why), the recovery returns the room's chips, and the bots' next room plays on
# E. Every pod but D exits drained; wallets + rake unchanged, every seat account back at 0.
# Env: CROUPIER_KEEP_LOGS=1 keeps the logs.
set -u
BUILD=$(cd "${1:?usage: room_drains.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
STAKE=10
BOTS=3
DEALS=8
fail=0
trap 'e2e_cleanup' EXIT

check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}

E2E_DIR=$(mktemp -d /tmp/croupier-room-drains.XXXXXX)
E2E_FAILURES=()
E2E_WARNINGS=()
E2E_PIDS=()
# A gap between deals long enough for a drain to land in it or in the deal before.
export CROUPIER_TRAD_GAP_MS=800 CROUPIER_TRAD_TRUSTEE_MS=100
e2e_secret
e2e_redis_start
base=7300000
e2e_seed_wallets $base "$BOTS" 1000000
e2e_game_start game-a traditional 60 --games doudizhu
e2e_gate_start gate-a
sum0=$(( $(e2e_wallet_sum) + $(e2e_rake_sum) ))
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots "$BOTS" \
    --game doudizhu --engine traditional --stake "$STAKE" --seconds 240 \
    --room-seats 3 --room-deals "$DEALS" --think-percent 25 \
    --player-base $base --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 60000 \
    --report "$E2E_DIR/report.json" --rounds-file "$E2E_DIR/rounds.txt" \
    >"$E2E_DIR/bot.log" 2>&1 &
bot=$!

# The room's record (the group's first room: when it ends the bots open another).
key=""
for _ in $(seq 1 300); do
    key=$(e2e_redis --scan --pattern '{croupier:rooms}:room:*' | head -n 1)
    [ -n "$key" ] && break
    sleep 0.1
done
check "the bots created a room ($key)" test -n "$key"
# played: the deals the room's record says it played.
played() {
    e2e_redis get "$key" | python3 -c 'import json,sys; print(json.load(sys.stdin)["played"])' \
        2>/dev/null || echo 0
}
wait_played() { # wait_played N: until the room played N deals (120 s)
    for _ in $(seq 1 1200); do
        [ "$(played)" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
check "the room played 2 deals on game-a" wait_played 2
e2e_game_start game-b traditional 60 --games doudizhu
e2e_pod_terminate game-a &
term_a=$!
check "the room played 4 deals (the last ones on game-b)" wait_played 4
e2e_game_start game-c traditional 60 --games doudizhu
e2e_pod_terminate game-b &
term_b=$!
check "the room played 6 deals (the last ones on game-c)" wait_played 6
e2e_game_start game-d traditional 60 --games doudizhu --recover-grace-ms 1000 --sweep-ms 200
e2e_pod_terminate game-c &
term_c=$!
check "the room played all $DEALS deals" wait_played "$DEALS"
wait $term_a || true
wait $term_b || true
wait $term_c || true

e2e_redis get "$key" >"$E2E_DIR/room.json"
e2e_log "room record: $(cat "$E2E_DIR/room.json")"
for _ in $(seq 1 100); do
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["state"] != 3)' \
        "$E2E_DIR/room.json" && break
    sleep 0.1
    e2e_redis get "$key" >"$E2E_DIR/room.json"
done
# Every deal's settle record and hand history, read back by round id.
python3 - "$E2E_DIR/room.json" >"$E2E_DIR/rounds.list" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))["rounds"]:
    print(r)
EOF
while read -r id; do
    echo "$id $(e2e_redis get "{croupier:money}:round:$id")"
done <"$E2E_DIR/rounds.list" >"$E2E_DIR/settles.txt"
e2e_redis xrange '{croupier:history:doudizhu}:stream' - + >"$E2E_DIR/histories.txt"
verdict=$(python3 - "$E2E_DIR/room.json" "$E2E_DIR/settles.txt" "$E2E_DIR/histories.txt" \
    "$DEALS" <<'EOF'
import json, sys
room = json.load(open(sys.argv[1]))
deals = int(sys.argv[4])
problems = []
if room["state"] != 3:
    problems.append("state %r, not FINISHED" % room["state"])
if room["played"] != deals or len(room["rounds"]) != deals:
    problems.append("%d deals played, %d round ids" % (room["played"], len(room["rounds"])))
if len(set(room["rounds"])) != len(room["rounds"]):
    problems.append("a round id twice")
hist = {}
for line in open(sys.argv[3]):
    line = line.strip()
    if line.startswith("{"):
        h = json.loads(line)
        hist.setdefault(h["round"], []).append(h)
settle = {}
for line in open(sys.argv[2]):
    parts = line.split()
    settle[parts[0]] = parts[1:]
moved = {}
for rid in room["rounds"]:
    hs = hist.get(rid, [])
    if len(hs) != 1:
        problems.append("%s: %d hand histories" % (rid, len(hs)))
        continue
    h = hs[0]
    bal = settle.get(rid, [])
    seats = sorted(h["seats"], key=lambda s: s["seat"])
    if len(bal) < len(seats):
        problems.append("%s: settle record %r for %d seats" % (rid, bal, len(seats)))
        continue
    # the settle record: each seat account's balance after, in seat order (then the rake)
    for s, after in zip(seats, bal):
        moved[s["player"]] = moved.get(s["player"], 0) + int(after) - s["stack"]
    deltas = {r["seat"]: r["delta"] for r in h["results"]}
    for s, after in zip(seats, bal):
        if int(after) - s["stack"] != deltas.get(s["seat"]):
            problems.append("%s seat %d: settle %s - stack %d != delta %r" %
                            (rid, s["seat"], after, s["stack"], deltas.get(s["seat"])))
score = {s["player"]: s["total"] for s in room["scores"]}
if score != moved:
    problems.append("scoreboard %r != settle records %r" % (score, moved))
print("scoreboard %r; %s" % (score, "; ".join(problems) if problems else "matches"))
sys.exit(1 if problems else 0)
EOF
)
st=$?
check "8 deals, each settled once, final scoreboard = sum of the settle records: $verdict" \
    test "$st" -eq 0

# The crash of a room's server: the bots' next room plays on game-d or game-e (both ready now);
# the one that hosts it is SIGKILLed, and the room after it plays on the other.
e2e_game_start game-e traditional 60 --games doudizhu --recover-grace-ms 1000 --sweep-ms 200
# room_where PRED SKIP...: the key of a room (none of SKIP) whose record r satisfies the Python
# expression PRED, looked for 60 s at most; nothing when none.
room_where() {
    local pred=$1 k found=""
    shift
    for _ in $(seq 1 600); do
        for k in $(e2e_redis --scan --pattern '{croupier:rooms}:room:*'); do
            [[ " $* " == *" $k "* ]] && continue
            e2e_redis get "$k" | python3 -c "import json,sys; r=json.load(sys.stdin); sys.exit(not ($pred))" \
                2>/dev/null && found=$k
        done
        [ -n "$found" ] && { echo "$found"; return 0; }
        sleep 0.1
    done
}
# room_pod KEY: the pod (game-d or game-e) whose lease slot the room's record names as its server.
room_pod() {
    local slot p
    slot=$(e2e_redis get "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["server"].split(":")[-1])' 2>/dev/null)
    for p in game-d game-e; do
        [ "$(e2e_lease_of "$p" | cut -d' ' -f1)" = "$slot" ] && { echo "$p"; return; }
    done
}
second=$(room_where 'r["state"] == 2 and r["played"] >= 1' "$key")
victim=$(room_pod "$second")
survivor=game-e
[ "$victim" = game-e ] && survivor=game-d
check "the bots' next room plays on game-d or game-e ($second on ${victim:-neither})" test -n "$victim"
read -r slot_d epoch_d <<<"$(e2e_lease_of "$victim")"
kill -KILL "${POD_PID[$victim]}" 2>/dev/null
wait "${POD_PID[$victim]}" 2>/dev/null
state=$(e2e_redis get "$second" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
e2e_log "$victim SIGKILLed (held epoch traditional:$slot_d:$epoch_d; its room's state then: $state)"
refused=0
for _ in $(seq 1 200); do
    refused=$(grep -c '"event":"player_move_failed".*a private room' "${POD_LOG[gate-a]}")
    [ "$refused" -ge 3 ] && break
    sleep 0.1
done
if [ "$state" = 2 ]; then
    check "the crashed room's 3 players were not seated at another table ($refused)" \
        test "$refused" -ge 3
else # its last deal ended between the look and the kill: nobody was seated there
    e2e_log "info: the room ended before the kill (state $state): no move to refuse ($refused)"
fi
check "the recovery returned the crashed room's chips" \
    e2e_wait_unheld "traditional:$slot_d:$epoch_d" 30
third=$(room_where 'r["played"] >= 1' "$key" "$second")
check "after the crash the bots' next room plays on $survivor ($third on $(room_pod "$third"))" \
    test -n "$third" -a "$(room_pod "$third")" = "$survivor"

kill -TERM "$bot" 2>/dev/null
st=0
wait "$bot" || st=$?
e2e_pod_terminate gate-a
e2e_pod_terminate "$survivor"
rep=$E2E_DIR/report.json
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
if [ ! -s "$rep" ]; then
    check "bot wrote its report (log $E2E_DIR/bot.log)" false
else
    check "bot exit status 0" test "$st" -eq 0
    check "every player moved with the room three times ($(num 'd["counters"]["table_moves"]') whole-table moves)" \
        test "$(num 'd["counters"]["table_moves"]')" -eq 9
    check "no match state lost across the moves ($(num 'd["counters"]["match_state_lost"]'))" \
        test "$(num 'd["counters"]["match_state_lost"]')" -eq 0
    check "one room created, joined by two, finished for all three ($(num 'd["counters"]["rooms_created"]'), $(num 'd["counters"]["rooms_joined"]'), $(num 'd["counters"]["rooms_finished"]'))" \
        test "$(num 'd["counters"]["rooms_created"]')" -ge 1 -a \
        "$(num 'd["counters"]["rooms_finished"]')" -ge 3
    check "torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
fi
read -r fin missing void settled < <(e2e_rounds_check "$E2E_DIR/rounds.txt")
check "every finished deal has its settle record ($fin finished, $missing missing)" \
    test "$missing" -eq 0 -a "$settled" -eq 0
check "the gateway logged no failed move (but the crashed room's)" \
    test "$(grep '"event":"player_move_failed"\|"event":"table_adopt_failed"' "${POD_LOG[gate-a]}" |
        grep -vc 'a private room')" -eq 0
for p in game-a game-b game-c "$survivor" gate-a; do
    check "pod $p logged exit reason=drained" test "$(e2e_exit_reason "$p")" = drained
done
sum1=$(( $(e2e_wallet_sum) + $(e2e_rake_sum) ))
check "wallets + rake unchanged ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"
read -r n left < <(e2e_accounts_left 'ts.*')
check "every seat account ts.* back at 0 ($n accounts, $left not)" test "$left" -eq 0
if [ "$fail" -ne 0 ] || [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ]; then
    e2e_log "logs kept in $E2E_DIR"
    E2E_KEEP=1
fi
exit "$fail"
