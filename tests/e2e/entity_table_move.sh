#!/usr/bin/env bash
# Integration test (issue 34): whole-table moves with the money by entity on a Redis Cluster
# (croupier-game --money-by-entity, EXPERIMENTAL; docs/queues.md "Whole-table moves by entity",
# docs/protocol.md "Whole-table moves"). A real cluster of 3 masters and 3 replicas on
# loopback, a gateway with --money-by-entity and a hold'em server game-a; bots play. Mid-play
# game-b starts and game-a is drained as kubelet does (preStop, SIGTERM): each table of game-a
# whose round is over is offered in game-a's epoch slot ({s:<service>:<slot>:<epoch>}:handoff:),
# game-b claims it there and its seat accounts move to game-b's epoch slot as transfers, and
# hands go on at game-b. Passes when game-b adopted at least one table of game-a and every offer
# of game-a reads adopted or withdrawn (none void), the bots saw whole-table moves and no torn
# game or unexpected error, rounds finished on game-b after the move, every finished round has
# its settlement in its epoch's slot, no script was refused for keys in two slots, both pods
# exit drained, and croupier-ctl audit balances with nothing in flight and every seat account
# back at 0, no epoch left in the epochs' index.
#
#   tests/e2e/entity_table_move.sh BUILD_DIR [SOURCE_DIR]
# Env: BOT_SECONDS (30), MOVE_AFTER (seconds of play before the drain, 8), DURABLE=1 (2 replicas
# per master and --redis-min-replicas 1: every step of the handoff WAITs for a replica),
# CROUPIER_KEEP_LOGS=1 keeps the work dir. Exit 77 (skip) when redis-server cannot run a cluster.
set -u
BUILD=$(cd "${1:?usage: entity_table_move.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-entity-move.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
BOT_SECONDS=${BOT_SECONDS:-30}
MOVE_AFTER=${MOVE_AFTER:-8}
command -v redis-server >/dev/null || { echo "entity_table_move: SKIP: no redis-server" >&2; exit 77; }
DURABLE=${DURABLE:-0}
REPLICAS=1 DUR=()
[ "$DURABLE" = 1 ] && REPLICAS=2 DUR=(--redis-min-replicas 1)
e2e_cluster_start 3 "$REPLICAS" || { echo "entity_table_move: SKIP: $E2E_CLUSTER_WHY" >&2; exit 77; }
e2e_log "cluster up: $E2E_REDIS_CLUSTER"
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}
CTL=$BUILD/tools/croupier-ctl
e2e_secret

e2e_engine_desc holdem || exit 2
SEED_CHIPS=1000000
base=5200000
# shellcheck disable=SC2034 # read by e2e_seed_wallets (lib.sh)
E2E_MONEY_BY_ENTITY=1
check "seeded $E2E_BOTS wallets with croupier-ctl --money-by-entity credit" \
    e2e_seed_wallets $base "$E2E_BOTS" $SEED_CHIPS
seeded=$((E2E_BOTS * SEED_CHIPS))

# ---- play on game-a, then game-b up and game-a drained -----------------------------------
e2e_game_start game-a holdem 30 --money-by-entity "${DUR[@]}"
e2e_gate_start gate-a --money-by-entity
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" \
    --bots "$E2E_BOTS" --game holdem --engine "$E2E_JOIN" \
    --seconds "$BOT_SECONDS" --player-base $base --token-secret-file "$E2E_DIR/secret" \
    --finish-timeout-ms 60000 --report "$E2E_DIR/report.json" \
    --rounds-file "$E2E_DIR/rounds.txt" >"$E2E_DIR/bot.log" 2>&1 &
bot=$!
sleep "$MOVE_AFTER"
e2e_game_start game-b holdem 30 --money-by-entity "${DUR[@]}"
sleep 1 # game-b registered ready: the gateway and game-a's offers see it
t0=$(date +%s%3N)
e2e_pod_terminate game-a
check "pod game-a logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[game-a]}"

offers=$(grep -o '"event":"tk_table_offered"[^}]*"offer":"[^"]*"' "${POD_LOG[game-a]}" |
    sed 's/.*"offer":"//; s/"$//' | sort -u)
noffers=$(grep -c . <<<"$offers")
adopted=0
for o in $offers; do
    # the offer id "<service>:<slot>:<epoch>:<desk>:<n>" names its epoch's slot
    IFS=: read -r sv sl ep _ <<<"$o"
    status=$(e2e_redis hget "{s:$sv:$sl:$ep}:handoff:$o" status)
    e2e_log "offer $o: $status"
    check "offer $o adopted or withdrawn, not void ($status)" \
        bash -c "[ '$status' = adopted ] || [ '$status' = withdrawn ]"
    if [ "$status" = adopted ] &&
        grep -q "\"event\":\"tk_table_adopted\".*\"offer\":\"$o\"" "${POD_LOG[game-b]}"; then
        adopted=$((adopted + 1))
    fi
done
check "game-b adopted game-a's tables whole ($adopted of $noffers offers)" test "$adopted" -gt 0

st=0
wait "$bot" || st=$?
rep=$E2E_DIR/report.json
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
if [ -s "$rep" ]; then
    check "bot exit status 0" test "$st" -eq 0
    check "finished games > 0 ($(num 'd["games"]["finished"]'))" test "$(num 'd["games"]["finished"]')" -gt 0
    check "players moved with their tables ($(num 'd["counters"]["table_moves"]') whole-table moves)" \
        test "$(num 'd["counters"]["table_moves"]')" -gt 0
    check "torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0 ||
        e2e_torn_detail "$rep" "$E2E_DIR/bot.log"
    check "unexpected errors = 0 ($(num 'd["unexpected_errors"]'); $(num 'd["errors"]'))" test "$(num 'd["unexpected_errors"]')" -eq 0
else
    check "bot wrote its report (log $E2E_DIR/bot.log)" false
fi
for p in gate-a game-b; do
    e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
done
for p in game-a game-b; do
    check "pod $p: no script refused for keys in two slots" \
        bash -c "! grep -q redis_cluster_crossslot '${POD_LOG[$p]}'" ||
        e2e_fail_detail "${POD_LOG[$p]}" redis_cluster_crossslot 3
    check "pod $p: no failed adoption or move" \
        bash -c "! grep -q '\"tk_adopt_failed\"\|\"tk_move_check_failed\"' '${POD_LOG[$p]}'" ||
        e2e_fail_detail "${POD_LOG[$p]}" 'tk_adopt_failed\|tk_move_check_failed' 3
done
check "the gateway logged no failed move" \
    test "$(grep -c '"event":"player_move_failed"\|"event":"table_adopt_failed"' "${POD_LOG[gate-a]}")" -eq 0

# hands went on at game-b after the move: its rounds finished after the drain began
slot_b=$(grep -o '"event":"ready","service":"[^"]*","slot":[0-9]*' "${POD_LOG[game-b]}" | head -n 1 |
    grep -o '[0-9]*$')
n=$(e2e_redis xrange "{croupier:money}:history:holdem:stream" "$t0" + | grep -c '^round$')
on_b=$(awk -v s="$slot_b" '$2 == "finished" { split($1, a, ":"); if (a[2] == s) print $1 }' \
    "$E2E_DIR/rounds.txt" | sort -u | wc -l)
check "hands went on at game-b after the move ($on_b rounds there; $n hands since the drain)" \
    test "$on_b" -gt 0 -a "$n" -gt 0

# ---- the settlements, in their epochs' slots ---------------------------------------------
rounds_in() { # VERB(finished|voided): the EXISTS of each distinct round's record, one a line
    awk -v v="$1" '$2 == v { print $1 }' "$E2E_DIR/rounds.txt" 2>/dev/null | sort -u |
        awk -F: '{ printf "EXISTS {s:%s:%s:%s}:round:%s\n", $1, $2, $3, $0 }' | e2e_redis
}
fin=$(awk '$2 == "finished" { print $1 }' "$E2E_DIR/rounds.txt" 2>/dev/null | sort -u | wc -l)
answers=$(rounds_in finished)
missing=$(grep -c '^0$' <<<"$answers")
present=$(grep -c '^1$' <<<"$answers")
check "every finished round settled in its epoch's slot ($fin rounds, $present found, $missing missing)" \
    test "$missing" -eq 0 -a "$present" -eq "$fin" -a "$fin" -gt 0

# ---- the books ------------------------------------------------------------------------------
ok=0
for _ in $(seq 1 40); do
    "$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" audit >"$E2E_DIR/audit.txt" 2>&1
    if grep -q '^balanced' "$E2E_DIR/audit.txt" && grep -q '^in flight *0 transfers' "$E2E_DIR/audit.txt" &&
        ! grep -Eq '^  seat accounts +[0-9]+ holding [1-9]' "$E2E_DIR/audit.txt"; then
        ok=1
        break
    fi
    sleep 0.5
done
e2e_log "audit: $(tr '\n' ';' <"$E2E_DIR/audit.txt")"
check "the audit balances, nothing in flight, every seat account back at 0" test "$ok" = 1
check "seeded: the bots' wallets ($seeded)" grep -q "^seeded *$seeded\$" "$E2E_DIR/audit.txt"
# both servers exited drained: each recovered its own epoch (the moved accounts included, their
# moves settled), so no epoch is left in the index
left=$(e2e_redis scard '{croupier:money}:epochs')
check "no epoch left in {croupier:money}:epochs ($left)" test "$left" = 0

for f in "${E2E_FAILURES[@]}"; do fail=1; e2e_log "failed: $f"; done
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
