#!/usr/bin/env bash
# Integration test (issue 16): a Guandan match survives two drains in a row as a whole table
# (docs/protocol.md "Whole-table moves", engine/tk.h "moves").
#
#   tests/e2e/table_move.sh BUILD_DIR [SOURCE_DIR]
#
# redis, croupier-game A (--engine traditional --games guandan), one croupier-gate, two
# croupier-bot Guandan players (at a quarter of their natural pace, --think-percent 25) at one
# table with two server bots (quick ones: a deal takes
# seconds, not half a minute). Once deals of the match have been
# played on A, B starts and A is terminated as kubelet does (preStop, SIGTERM): the table
# finishes its deal, offers itself and B adopts it. C starts and B is terminated at once, in
# the gap before the next deal: C adopts the same table. Checks, from the two handoff offers in
# Redis: A's and B's exports are the same table -- the same players in the same seats with the
# same stacks, the same round count and button, and the same Guandan match state (team levels,
# failures at A, the previous finishing order), with a match in progress; each offer was adopted
# exactly once and the adopter logged it; every player got one whole-table Moved per move (4) and
# the bots saw no match state lost; deals finish on C; no torn game, no failed move; every pod
# exits drained; wallets + rake unchanged and every seat account ends at 0.
# Env: CROUPIER_KEEP_LOGS=1 keeps the logs.
set -u
BUILD=$(cd "${1:?usage: table_move.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
STAKE=10
BOTS=2
fail=0
trap 'e2e_cleanup' EXIT

check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}

E2E_DIR=$(mktemp -d /tmp/croupier-table-move.XXXXXX)
E2E_FAILURES=()
E2E_WARNINGS=()
E2E_PIDS=()
# Two humans and two quick server bots at a table, quick trustee, a gap between deals long
# enough for the second drain to land in it.
export CROUPIER_TRAD_BOT_FILL_MS=300 CROUPIER_TRAD_BOT_MS=50 CROUPIER_TRAD_TRUSTEE_MS=100
export CROUPIER_TRAD_GAP_MS=2500
e2e_secret
e2e_redis_start
base=7100000
e2e_seed_wallets $base "$BOTS" 1000000
e2e_redis set '{croupier:money}:wallet:house-traditional' 100000000 >/dev/null
e2e_game_start game-a traditional 60 --games guandan
e2e_gate_start gate-a
sum0=$(( $(e2e_wallet_sum) + $(e2e_rake_sum) ))
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots "$BOTS" \
    --game guandan --engine traditional --stake "$STAKE" --seconds 150 --think-percent 25 \
    --player-base $base --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 60000 \
    --report "$E2E_DIR/report.json" --rounds-file "$E2E_DIR/rounds.txt" \
    >"$E2E_DIR/bot.log" 2>&1 &
bot=$!

# Deals of the match on A first, until a team is at level 5 or more (the hand histories of the
# guandan stream record each deal's team levels, docs/hand-history.md).
deals=0 top=0
for _ in $(seq 1 1200); do
    deals=$(e2e_redis xlen '{croupier:history:guandan}:stream')
    if [ "${deals:-0}" -ge 1 ]; then
        top=$(e2e_redis xrevrange '{croupier:history:guandan}:stream' + - COUNT 1 | python3 -c '
import json, sys
best = 0
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        h = json.loads(line)
        for a in h.get("actions", []):
            if a.get("action") == "team_level":
                best = max(best, a.get("amount", 0))
print(best)')
        [ "${top:-0}" -ge 5 ] && break
    fi
    sleep 0.1
done
e2e_log "deals played on game-a: $deals, the highest team level at the last deal's start: $top"
check "a team reached level 5 on game-a before the drains (level $top)" test "${top:-0}" -ge 5

# offer_of POD: the offer id of the pod's tk_table_offered line (empty when none yet).
offer_of() {
    grep -o '"event":"tk_table_offered"[^}]*"offer":"[^"]*"' "${POD_LOG[$1]}" | head -n 1 |
        sed 's/.*"offer":"//; s/"$//'
}
# adopted_on POD OFFER: whether the pod logged adopting that offer.
adopted_on() {
    grep -q "\"event\":\"tk_table_adopted\".*\"offer\":\"$2\"" "${POD_LOG[$1]}"
}
# wait_adopted POD OFFER_POD: waits until OFFER_POD offered its table and POD adopted it;
# prints the offer id.
wait_adopted() {
    local offer=""
    for _ in $(seq 1 400); do
        offer=$(offer_of "$2")
        if [ -n "$offer" ] && adopted_on "$1" "$offer"; then
            echo "$offer"
            return 0
        fi
        sleep 0.05
    done
    echo "$offer"
    return 1
}

e2e_game_start game-b traditional 60 --games guandan
e2e_pod_terminate game-a &
term_a=$!
offer1=$(wait_adopted game-b game-a)
check "game-b adopted game-a's table (offer $offer1)" adopted_on game-b "$offer1"
e2e_game_start game-c traditional 60 --games guandan
e2e_pod_terminate game-b &
term_b=$!
offer2=$(wait_adopted game-c game-b)
deals_at_move=$(e2e_redis xlen '{croupier:history:guandan}:stream')
check "game-c adopted game-b's table (offer $offer2)" adopted_on game-c "$offer2"
wait $term_a || true
wait $term_b || true

# The two exports of the table, from the handoff records.
state_of() { e2e_redis hget "{croupier:money}:handoff:$1" state; }
s1=$(state_of "$offer1")
s2=$(state_of "$offer2")
echo "$s1" >"$E2E_DIR/offer1.json"
echo "$s2" >"$E2E_DIR/offer2.json"
cmp_out=$(python3 - "$E2E_DIR/offer1.json" "$E2E_DIR/offer2.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
problems = []
for k in ("game", "stake", "seats", "seq", "button", "players", "game_state"):
    if a.get(k) != b.get(k):
        problems.append("%s: %r != %r" % (k, a.get(k), b.get(k)))
gs = a.get("game_state") or {}
if len(a.get("players", [])) != 4:
    problems.append("%d players offered" % len(a.get("players", [])))
if gs.get("have_prev") != 1:
    problems.append("no match in progress (have_prev %r)" % gs.get("have_prev"))
print("levels %s, deals %s; %s" % (gs.get("team_steps"), a.get("seq"),
      "; ".join(problems) if problems else "identical"))
sys.exit(1 if problems else 0)
EOF
)
st=$?
check "both moves carried the same table and match: $cmp_out" test "$st" -eq 0
for o in "$offer1" "$offer2"; do
    check "offer $o is adopted" test "$(e2e_redis hget "{croupier:money}:handoff:$o" status)" = adopted
done

# A deal on C, the third server, then the bots stop (SIGTERM: they finish their round and leave).
for _ in $(seq 1 600); do
    [ "$(e2e_redis xlen '{croupier:history:guandan}:stream')" -gt "$deals_at_move" ] && break
    sleep 0.1
done
kill -TERM "$bot" 2>/dev/null
st=0
wait "$bot" || st=$?
e2e_pod_terminate gate-a
e2e_pod_terminate game-c
rep=$E2E_DIR/report.json
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
if [ ! -s "$rep" ]; then
    check "bot wrote its report (log $E2E_DIR/bot.log)" false
else
    check "bot exit status 0" test "$st" -eq 0
    check "every player moved with the table twice ($(num 'd["counters"]["table_moves"]') whole-table moves)" \
        test "$(num 'd["counters"]["table_moves"]')" -eq 4
    check "no match state lost across the moves ($(num 'd["counters"]["match_state_lost"]'))" \
        test "$(num 'd["counters"]["match_state_lost"]')" -eq 0
    check "torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
fi
slot_c=$(grep -o '"event":"ready","service":"[^"]*","slot":[0-9]*' "${POD_LOG[game-c]}" | head -n 1 |
    grep -o '[0-9]*$')
on_c=$(awk -v p="traditional:$slot_c:" '$2 == "finished" && index($1, p) == 1 { print $1 }' \
    "$E2E_DIR/rounds.txt" | sort -u | wc -l)
check "deals finished on game-c, where the table was moved last ($on_c)" test "$on_c" -gt 0
read -r fin missing void settled < <(e2e_rounds_check "$E2E_DIR/rounds.txt")
check "every finished deal has its settle record ($fin finished, $missing missing)" \
    test "$missing" -eq 0 -a "$settled" -eq 0
check "the gateway logged no failed move" \
    test "$(grep -c '"event":"player_move_failed"\|"event":"table_adopt_failed"' "${POD_LOG[gate-a]}")" -eq 0
for p in game-a game-b game-c gate-a; do
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
