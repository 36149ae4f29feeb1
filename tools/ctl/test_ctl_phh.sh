#!/usr/bin/env bash
# The PHH export (docs/replays.md "PHH export") on every hand of a test run: real redis-server,
# croupier-game --engine holdem (no rake: PHH has none), croupier-gate and nine croupier-bot
# players on loopback play for a few seconds; then every completed hand of the hold'em stream is
# exported with `croupier-ctl round ROUND_ID --phh` and the files are replayed by
# `croupier-rules phh-replay` (the repository's PHH tooling: every action accepted, every
# finishing stack matched) and, when PokerKit can be imported (PYTHONPATH, see
# tests/phh/gen_pokerkit.py), by PokerKit itself (tests/phh/check_pokerkit.py). Also: a voided
# or unknown round and a game other than hold'em are refused with a reason (exit 1).
#
#   tools/ctl/test_ctl_phh.sh BUILD_DIR [SOURCE_DIR]   (CROUPIER_KEEP_LOGS=1 keeps the work dir)
set -u
BUILD=$(cd "${1:?usage: test_ctl_phh.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=../../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-ctl-phh.XXXXXX)
FAILS=0
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ $FAILS -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
CTL=$BUILD/tools/croupier-ctl
RULES=$BUILD/tools/croupier-rules
{ [ -x "$CTL" ] && [ -x "$RULES" ]; } || e2e_die "no $CTL or $RULES (build first)"
export CROUPIER_HOLDEM_GAP_MS=50 CROUPIER_HOLDEM_RAKE_BP=0
# shellcheck source=ctl_test_lib.sh
. "$SRC/tools/ctl/ctl_test_lib.sh"

e2e_secret
e2e_redis_start
BASE=6300000
e2e_seed_wallets $BASE 9 1000000
e2e_game_start holdem holdem 10
e2e_gate_start gate
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate]}" --bots 9 --game holdem \
    --engine holdem --stake 10 --seconds "${PHH_SECONDS:-8}" --player-base $BASE \
    --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 20000 \
    --report "$E2E_DIR/report.json" >"$E2E_DIR/bot.log" 2>&1 ||
    bad "croupier-bot exited $? (log $E2E_DIR/bot.log)"

# Every record of the stream: completed hands are exported, the others refused.
e2e_redis xrange '{croupier:history:holdem}:stream' - + >"$E2E_DIR/stream.txt"
python3 - "$E2E_DIR/stream.txt" >"$E2E_DIR/rounds.txt" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().split('\n')
for i, l in enumerate(lines):
    if l == 'data' and i + 1 < len(lines):
        d = json.loads(lines[i + 1])
        print(d['round'], d.get('outcome', ''), len(d['seats']))
EOF
mkdir -p "$E2E_DIR/phh"
n=0
while read -r round outcome _; do
    ctl round "$round" --phh
    if [ "$outcome" = completed ]; then
        if [ "$RC" = 0 ]; then
            n=$((n + 1))
            printf '%s\n' "$OUT" >"$E2E_DIR/phh/$n.phh"
        else
            bad "round $round --phh: exit $RC: $ERR"
        fi
    else
        check "a $outcome hand is refused with a reason" test "$RC" = 1 -a -n "$ERR"
    fi
done <"$E2E_DIR/rounds.txt"
check "the run dealt hands to export ($n)" test "$n" -ge 5
out=$("$RULES" phh-replay "$E2E_DIR/phh" 2>&1)
check "croupier-rules phh-replay replays all $n exported hands ($out)" test $? = 0
if python3 -c 'import pokerkit' 2>/dev/null; then
    out=$(python3 "$SRC/tests/phh/check_pokerkit.py" "$E2E_DIR/phh" 2>&1)
    check "PokerKit replays all $n exported hands exactly ($out)" test $? = 0
else
    e2e_log "skip: PokerKit not importable (PYTHONPATH; tests/phh/gen_pokerkit.py says how)"
fi
check "the file names the round and its players" has "$(cat "$E2E_DIR/phh/1.phh")" "players = ["
expect 1 "an unknown round is refused" round holdem:1:1:1:999999 --phh
expect 2 "a malformed round id is refused" round not-a-round --phh
# A record of another game: a Zha Jin Hua hand written into Redis as its writer would.
zround="zhajinhua:9:1:1:1"
e2e_redis xadd '{croupier:history:zhajinhua}:stream' 1-1 round "$zround" data \
    '{"round":"zhajinhua:9:1:1:1","game":"zhajinhua","engine":"zhajinhua","seats":[],"cards":[],"actions":[],"results":[],"outcome":"completed"}' >/dev/null
e2e_redis set "{croupier:history:zhajinhua}:seen:$zround" 1-1 >/dev/null
expect 1 "a hand of another game is refused (not hold'em)" round "$zround" --phh
has "$ERR" "hold'em" || bad "the refusal says it is not a hold'em hand: $ERR"
[ $FAILS -eq 0 ] && e2e_log "PASS ($n hands exported and replayed)"
exit $((FAILS > 0))
