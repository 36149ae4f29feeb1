#!/usr/bin/env bash
# Integration test (issue 10): redis + 2 croupier-game --engine test + 2 croupier-gate +
# croupier-bot with ~50 bots for a few seconds. Passes when the bot report shows finished
# games > 0, torn = 0 and no unexpected error, the wallets still sum to what they were seeded
# with, and every finished round the bots saw has its settlement in Redis.
#
#   tests/e2e/bots_smoke.sh BUILD_DIR [SOURCE_DIR]
# Env: BOTS (50), BOT_SECONDS (5), CROUPIER_KEEP_LOGS=1 keeps the work dir.
set -u
BUILD=$(cd "${1:?usage: bots_smoke.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bots-smoke.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
BOTS=${BOTS:-50}
BOT_SECONDS=${BOT_SECONDS:-5}
PLAYER_BASE=5000000
SEED_CHIPS=100000

export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-500}
e2e_secret
e2e_redis_start
e2e_seed_wallets $PLAYER_BASE "$BOTS" $SEED_CHIPS
sum0=$(e2e_wallet_sum)
e2e_game_start game-a test 30
e2e_game_start game-b test 30
e2e_gate_start gate-a
e2e_gate_start gate-b
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]},127.0.0.1:${POD_PORT[gate-b]}" \
    --bots "$BOTS" --game test --seconds "$BOT_SECONDS" --player-base $PLAYER_BASE \
    --token-secret-file "$E2E_DIR/secret" --report "$E2E_DIR/report.json" \
    --rounds-file "$E2E_DIR/rounds.txt" >"$E2E_DIR/bot.log" 2>&1
bot_status=$?
e2e_log "croupier-bot exited $bot_status"
cat "$E2E_DIR/report.json" >&2 || e2e_die "no report (log $E2E_DIR/bot.log)"

fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}
jq_num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$E2E_DIR/report.json" "$1"; }
check "bot exit status 0" test "$bot_status" -eq 0
check "finished games > 0" test "$(jq_num 'd["games"]["finished"]')" -gt 0
check "torn games = 0" test "$(jq_num 'd["games"]["torn"]')" -eq 0
check "unexpected errors = 0" test "$(jq_num 'd["unexpected_errors"]')" -eq 0
# Stop the pods the way kubelet does; each must exit drained.
for p in gate-a gate-b game-a game-b; do
    check "pod $p terminated cleanly" e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
done
sum1=$(e2e_wallet_sum)
check "wallets sum unchanged ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"
awk '$2 == "finished" { print "EXISTS {croupier:money}:round:" $1 }' "$E2E_DIR/rounds.txt" |
    e2e_redis >"$E2E_DIR/exists.txt"
missing=$(grep -vc '^1$' "$E2E_DIR/exists.txt")
check "every finished round settled in Redis ($(wc -l <"$E2E_DIR/exists.txt") rounds, $missing missing)" test "$missing" -eq 0
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
