#!/usr/bin/env bash
# Integration test (issue 10): redis + 2 croupier-game + 2 croupier-gate + croupier-bot for a few
# seconds. Passes when each bot report shows finished games > 0, torn = 0 and no unexpected
# error, every pod exits drained, the wallets still sum to what they were seeded with, and every
# finished round the bots saw has its settlement in Redis (and no voided one has).
#
#   tests/e2e/bots_smoke.sh BUILD_DIR [SOURCE_DIR]
# Env: ENGINE (default test): an engine described by its folder's e2e.env (games/<folder>/e2e.env,
# the test engine's engine/e2e.env; tests/e2e/lib.sh e2e_engine_desc says every key); an engine
# no description names is an error (exit 2), nothing is started. The description gives the games
# (one croupier-bot per game, at once), the engine the bots' Join names, the bots per game and
# how long they play, the seat accounts its tables buy into, a house wallet seeded or funded by
# the pods, and environment defaults (short timers). GAMES, BOTS and BOT_SECONDS override the
# description's; GATE_ARGS / BOT_ARGS (extra flags of every croupier-gate / croupier-bot, split
# on spaces); CROUPIER_KEEP_LOGS=1 keeps the work dir.
# Every check runs for every engine: the bots' reports, every pod drained, wallets + the games'
# rake accounts unchanged (plus a house wallet's funding), the seat accounts of the description
# (ts.*) all back at 0 once the pods have drained and present (none for a play-money engine: then
# none may exist), every finished round settled and no voided one.
set -u
BUILD=$(cd "${1:?usage: bots_smoke.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bots-smoke.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
ENGINE=${ENGINE:-test}
e2e_engine_desc "$ENGINE" || exit 2
GAMES=${GAMES:-$E2E_GAMES}
BOTS=${BOTS:-$E2E_BOTS}
BOT_SECONDS=${BOT_SECONDS:-$E2E_BOT_SECONDS}
BOT_ENGINE=$E2E_JOIN
e2e_log "engine $ENGINE ($E2E_ENGINE_FILE): games $GAMES, $BOTS bots each, joined as $BOT_ENGINE"
SEED_CHIPS=1000000

e2e_secret
e2e_redis_start
base=5000000
for g in $GAMES; do
    e2e_seed_wallets $base "$BOTS" $SEED_CHIPS
    base=$((base + 100000))
done
# a house wallet the engine's server bots play from (the traditional engine's)
[ -n "$E2E_HOUSE_SEED" ] &&
    e2e_redis set "{croupier:money}:wallet:${E2E_HOUSE_SEED%%:*}" "${E2E_HOUSE_SEED#*:}" >/dev/null
sum0=$(e2e_wallet_sum)
e2e_game_start game-a "$ENGINE" 30
e2e_game_start game-b "$ENGINE" 30
if [ -n "$E2E_HOUSE_FUND" ]; then
    # both pods fund the same service's house wallet; the fixed operation id makes it once
    house=${E2E_HOUSE_FUND%%:*} fundvar=${E2E_HOUSE_FUND#*:}
    for _ in $(seq 1 100); do
        [ "$(e2e_redis exists "{croupier:money}:wallet:$house")" = 1 ] && break
        sleep 0.1
    done
    sum0=$((sum0 + ${!fundvar}))
fi
# shellcheck disable=SC2086 # GATE_ARGS / BOT_ARGS are lists of flags
e2e_gate_start gate-a ${GATE_ARGS:-}
# shellcheck disable=SC2086
e2e_gate_start gate-b ${GATE_ARGS:-}
base=5000000
pids=()
for g in $GAMES; do
    "$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]},127.0.0.1:${POD_PORT[gate-b]}" \
        --bots "$BOTS" --game "$g" --engine "$BOT_ENGINE" --seconds "$BOT_SECONDS" \
        --player-base $base --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 60000 \
        --report "$E2E_DIR/report-$g.json" --rounds-file "$E2E_DIR/rounds-$g.txt" ${BOT_ARGS:-} \
        >"$E2E_DIR/bot-$g.log" 2>&1 &
    pids+=($!)
    base=$((base + 100000))
done
statuses=()
for p in "${pids[@]}"; do
    st=0
    wait "$p" || st=$?
    statuses+=("$st")
done

fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}
i=0
for g in $GAMES; do
    rep=$E2E_DIR/report-$g.json
    num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
    if [ ! -s "$rep" ]; then
        check "$g: bot wrote its report (log $E2E_DIR/bot-$g.log)" false
        i=$((i + 1))
        continue
    fi
    check "$g: bot exit status 0" test "${statuses[$i]}" -eq 0
    check "$g: finished games > 0 ($(num 'd["games"]["finished"]'))" test "$(num 'd["games"]["finished"]')" -gt 0
    check "$g: torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
    check "$g: unexpected errors = 0 ($(num 'd["unexpected_errors"]'); $(num 'd["errors"]'))" test "$(num 'd["unexpected_errors"]')" -eq 0
    # Live gateways answer every keepalive probe (docs/protocol.md "Keepalive"): none is left.
    check "$g: no live gateway taken for silent ($(num 'd["counters"]["gateway_silent"]'))" \
        test "$(num 'd["counters"]["gateway_silent"]')" -eq 0
    e2e_log "$g: actions $(num 'd["actions"]'), latency ms $(num 'd["action_latency_ms"]')"
    i=$((i + 1))
done
# Stop the pods the way kubelet does; each must exit drained.
for p in gate-a gate-b game-a game-b; do
    e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
done
for f in "${E2E_FAILURES[@]}"; do fail=1; done
for w in "${E2E_WARNINGS[@]}"; do e2e_log "warning: $w"; done
sum1=$(e2e_wallet_sum)
# The rake the games took is in their rake accounts (Niu Niu rakes its winners by default).
for g in $GAMES; do
    r=$(e2e_redis get "{croupier:money}:rake:$g")
    sum1=$((sum1 + ${r:-0}))
done
check "wallets + rake sum unchanged ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"
if [ "$E2E_SEAT_ACCOUNTS" = none ]; then
    # play money: the rounds settle the wallets, no table may hold chips of its own
    read -r nts ts_left <<<"$(e2e_accounts_left 'ts.*')"
    check "no seat account ts.* (play money; $nts accounts)" test "$nts" -eq 0
else
    read -r nts ts_left <<<"$(e2e_accounts_left "$E2E_SEAT_ACCOUNTS")"
    check "every seat account $E2E_SEAT_ACCOUNTS back at 0 ($nts accounts, $ts_left not)" \
        test "$nts" -gt 0 -a "$ts_left" -eq 0
fi
for g in $GAMES; do
    awk '$2 == "finished" { print "EXISTS {croupier:money}:round:" $1 }' "$E2E_DIR/rounds-$g.txt" |
        e2e_redis >"$E2E_DIR/exists-$g.txt"
    missing=$(grep -vc '^1$' "$E2E_DIR/exists-$g.txt")
    check "$g: every finished round settled in Redis ($(wc -l <"$E2E_DIR/exists-$g.txt") rounds, $missing missing)" test "$missing" -eq 0
    awk '$2 == "voided" { print "EXISTS {croupier:money}:round:" $1 }' "$E2E_DIR/rounds-$g.txt" |
        e2e_redis >"$E2E_DIR/vexists-$g.txt"
    settled=$(grep -c '^1$' "$E2E_DIR/vexists-$g.txt")
    check "$g: no voided round settled ($settled)" test "$settled" -eq 0
    read -r unseen unaccounted <<<"$(e2e_unseen_check "$E2E_DIR/rounds-$g.txt")"
    check "$g: every round that ended while its bot reconnected was finished ($unseen rounds, $unaccounted not)" test "$unaccounted" -eq 0
done
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
