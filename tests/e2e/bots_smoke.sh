#!/usr/bin/env bash
# Integration test (issue 10): redis + 2 croupier-game + 2 croupier-gate + croupier-bot for a few
# seconds. Passes when each bot report shows finished games > 0, torn = 0 and no unexpected
# error, every pod exits drained, the wallets still sum to what they were seeded with, and every
# finished round the bots saw has its settlement in Redis (and no voided one has).
#
#   tests/e2e/bots_smoke.sh BUILD_DIR [SOURCE_DIR]
# Env: ENGINE (test | traditional | holdem | persistent | zhajinhua | niuniu; default test), GAMES
# (default: "test", for traditional "doudizhu runfast bigtwo guandan": one croupier-bot per game,
# at once; "holdem"; "blackjack" for persistent; "zhajinhua", joined as ENGINE_GAME), BOTS per
# game (50 for test, 28 for persistent, 30 for zhajinhua, 24 otherwise), BOT_SECONDS (5 for
# test, 10 for persistent, 8 otherwise), GATE_ARGS / BOT_ARGS (extra flags of
# every croupier-gate / croupier-bot, split on spaces), CROUPIER_KEEP_LOGS=1 keeps the work
# dir. The persistent engine funds its house wallet (house.persistent) once at start: the wallet
# sum must then be the seeded sum plus CROUPIER_BJ_HOUSE_FUND, whatever the pods do after. Zha
# Jin Hua, Niu Niu and blackjack (the table kit) buy in from the wallets into seat accounts ts.*:
# they are in the wallet sum, and every one must be back at 0 once the pods have drained (tables
# cash out). The rake accounts of the games are added to the sum (Niu Niu rakes its winners).
set -u
BUILD=$(cd "${1:?usage: bots_smoke.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bots-smoke.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
ENGINE=${ENGINE:-test}
if [ "$ENGINE" = test ]; then
    GAMES=${GAMES:-test}
    BOTS=${BOTS:-50}
    BOT_SECONDS=${BOT_SECONDS:-5}
    BOT_ENGINE=traditional
elif [ "$ENGINE" = persistent ]; then
    GAMES=${GAMES:-blackjack}
    BOTS=${BOTS:-28}
    BOT_SECONDS=${BOT_SECONDS:-10}
    BOT_ENGINE=$ENGINE
    # short timers, like the test engine's 500 ms rounds
    export CROUPIER_BJ_BET_MS=${CROUPIER_BJ_BET_MS:-500} CROUPIER_BJ_ACTION_MS=${CROUPIER_BJ_ACTION_MS:-2000}
    export CROUPIER_BJ_GAP_MS=${CROUPIER_BJ_GAP_MS:-200} CROUPIER_BJ_HOUSE_FUND=${CROUPIER_BJ_HOUSE_FUND:-100000000}
elif [ "$ENGINE" = zhajinhua ]; then
    GAMES=${GAMES:-zhajinhua}
    BOTS=${BOTS:-30}
    BOT_SECONDS=${BOT_SECONDS:-8}
    BOT_ENGINE=game
    # a short pause between hands (croupier-game --help lists every --zhajinhua-* flag)
    export CROUPIER_ZHAJINHUA_GAP_MS=${CROUPIER_ZHAJINHUA_GAP_MS:-100}
elif [ "$ENGINE" = niuniu ]; then
    GAMES=${GAMES:-niuniu}
    BOTS=${BOTS:-24}
    BOT_SECONDS=${BOT_SECONDS:-8}
    BOT_ENGINE=game
    # short windows and gaps; every winner pays 5 % to the rake account (counted below)
    export CROUPIER_NIUNIU_GAP_MS=${CROUPIER_NIUNIU_GAP_MS:-100}
    export CROUPIER_NIUNIU_ACTION_MS=${CROUPIER_NIUNIU_ACTION_MS:-1500}
elif [ "$ENGINE" = holdem ]; then
    GAMES=${GAMES:-holdem}
    BOTS=${BOTS:-30}
    BOT_SECONDS=${BOT_SECONDS:-8}
    BOT_ENGINE=$ENGINE
else
    GAMES=${GAMES:-doudizhu runfast bigtwo guandan}
    BOTS=${BOTS:-24}
    BOT_SECONDS=${BOT_SECONDS:-8}
    BOT_ENGINE=$ENGINE
fi
SEED_CHIPS=1000000
export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-500}

e2e_secret
e2e_redis_start
base=5000000
for g in $GAMES; do
    e2e_seed_wallets $base "$BOTS" $SEED_CHIPS
    base=$((base + 100000))
done
# the house wallet the traditional engine's server bots play from
e2e_redis set '{croupier:money}:wallet:house-traditional' 100000000 >/dev/null
sum0=$(e2e_wallet_sum)
e2e_game_start game-a "$ENGINE" 30
e2e_game_start game-b "$ENGINE" 30
if [ "$ENGINE" = persistent ]; then
    # both pods fund the same service's house wallet; the fixed operation id makes it once
    for _ in $(seq 1 100); do
        [ "$(e2e_redis exists '{croupier:money}:wallet:house.persistent')" = 1 ] && break
        sleep 0.1
    done
    sum0=$((sum0 + CROUPIER_BJ_HOUSE_FUND))
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
if [ "$ENGINE" = zhajinhua ] || [ "$ENGINE" = persistent ] || [ "$ENGINE" = niuniu ]; then
    read -r nts ts_left <<<"$(e2e_accounts_left 'ts.*')"
    check "every seat account ts.* back at 0 ($nts accounts, $ts_left not)" \
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
