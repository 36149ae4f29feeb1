#!/usr/bin/env bash
# Integration test (issue 14): a player whose wallet holds exactly one buy-in sits, plays, the
# server is drained, the player is moved and plays on the other server -- for every engine on
# the table kit. The kit cashes a closing table's stacks out before the gateway is told to move
# the players (engine/tk.h "moves"), so the buy-in the new server asks for is back in the wallet:
# no move may fail with INSUFFICIENT_FUNDS.
#
#   tests/e2e/move_exact_buyin.sh BUILD_DIR [SOURCE_DIR]
#
# For each engine: redis, two croupier-game of the engine, one croupier-gate, bots of one game
# whose wallets hold exactly the buy-in of the stake they join at (hold'em 100 big blinds,
# blackjack 100 table minimums, Zha Jin Hua 200 antes, Dou Dizhu its escrow of 96 stakes).
# After a few rounds the game server that seats more of the players is terminated as kubelet
# does (preStop, SIGTERM); its tables finish their round, cash out and close; the gateway moves
# every player to the other one. Checks: the bots
# were moved (moves > 0), the gateway logged no failed move and no INSUFFICIENT_FUNDS answer
# reached a moved player, rounds finished on the other server, no torn round, every pod
# exited drained, wallets conserved and every seat account back at 0.
# Env: ENGINES (default "zhajinhua holdem persistent traditional"), CROUPIER_KEEP_LOGS=1.
set -u
BUILD=$(cd "${1:?usage: move_exact_buyin.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
ENGINES=${ENGINES:-zhajinhua holdem persistent traditional}
STAKE=10
BOTS=12
BOT_SECONDS=9
fail=0
trap 'e2e_cleanup' EXIT

check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}

# The game, the bots' --engine and the exact buy-in (chips) at STAKE of each engine.
engine_setup() {
    case $1 in
    zhajinhua) GAME=zhajinhua BOT_ENGINE=game BUYIN=$((200 * STAKE))
        export CROUPIER_ZHAJINHUA_GAP_MS=100 ;;
    holdem) GAME=holdem BOT_ENGINE=holdem BUYIN=$((100 * STAKE))
        export CROUPIER_HOLDEM_GAP_MS=100 ;;
    persistent) GAME=blackjack BOT_ENGINE=persistent BUYIN=$((100 * STAKE))
        export CROUPIER_BJ_BET_MS=500 CROUPIER_BJ_ACTION_MS=2000 CROUPIER_BJ_GAP_MS=200
        export CROUPIER_BJ_HOUSE_FUND=100000000 ;;
    # A shedding seat needs its whole escrow for every deal: after a lost deal the kit tops it
    # up from the wallet, at the old table before a whole-table move as after any deal
    # (engine/tk.h "moves"), so these wallets hold one more escrow than the buy-in.
    traditional) GAME=doudizhu BOT_ENGINE=traditional BUYIN=$((96 * STAKE)) WALLET=$((192 * STAKE))
        # quick server bots and trustee, so that a deal ends well within the drain bound
        export CROUPIER_TRAD_GAP_MS=100 CROUPIER_TRAD_BOT_FILL_MS=500 CROUPIER_TRAD_BOT_MS=50
        export CROUPIER_TRAD_TRUSTEE_MS=100 ;;
    *) e2e_die "unknown engine $1" ;;
    esac
}

# The lease slot a game pod logged when it became ready.
pod_slot() {
    grep -o '"event":"ready","service":"[^"]*","slot":[0-9]*' "${POD_LOG[$1]}" | head -n 1 |
        grep -o '[0-9]*$'
}

# Players seated at a game pod's kit tables (its /metrics tk_seated), 0 when unknown.
pod_seated() {
    e2e_get "${POD_HEALTH[$1]}/metrics" | awk '/^tk_seated\{/ { n += $2 } END { print n + 0 }'
}

run_engine() {
    local engine=$1
    engine_setup "$engine"
    E2E_DIR=$(mktemp -d "/tmp/croupier-move-$engine.XXXXXX")
    E2E_FAILURES=()
    E2E_WARNINGS=()
    E2E_PIDS=()
    e2e_log "== $engine: $BOTS bots of $GAME, wallets of exactly one buy-in ($BUYIN chips)"
    e2e_secret
    e2e_redis_start
    local base=7000000
    e2e_seed_wallets $base "$BOTS" "${WALLET:-$BUYIN}"
    e2e_redis set '{croupier:money}:wallet:house-traditional' 100000000 >/dev/null
    e2e_game_start game-a "$engine" 90
    e2e_game_start game-b "$engine" 90
    if [ "$engine" = persistent ]; then
        for _ in $(seq 1 100); do
            [ "$(e2e_redis exists '{croupier:money}:wallet:house.persistent')" = 1 ] && break
            sleep 0.1
        done
    fi
    local sum0
    sum0=$(e2e_wallet_sum)
    e2e_gate_start gate-a
    "$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots "$BOTS" \
        --game "$GAME" --engine "$BOT_ENGINE" --stake "$STAKE" --seconds "$BOT_SECONDS" \
        --player-base $base --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 60000 \
        --report "$E2E_DIR/report.json" --rounds-file "$E2E_DIR/rounds.txt" \
        >"$E2E_DIR/bot.log" 2>&1 &
    local bot=$!
    sleep 3
    # Drain the server that seats more of the players (the gateway spreads joins by load).
    local from=game-a to=game-b
    if [ "$(pod_seated game-b)" -gt "$(pod_seated game-a)" ]; then
        from=game-b to=game-a
    fi
    local slot_a slot_b
    slot_a=$(pod_slot $from)
    slot_b=$(pod_slot $to)
    e2e_log "$engine: draining $from ($(pod_seated $from) seated; $to has $(pod_seated $to))"
    e2e_pod_terminate $from
    local st=0
    wait "$bot" || st=$?
    for p in gate-a $to; do
        e2e_pod_terminate "$p"
    done
    local rep=$E2E_DIR/report.json
    num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
    if [ ! -s "$rep" ]; then
        check "$engine: bot wrote its report (log $E2E_DIR/bot.log)" false
    else
        check "$engine: bot exit status 0" test "$st" -eq 0
        check "$engine: players were moved ($(num 'd["counters"]["moves"]') moves)" \
            test "$(num 'd["counters"]["moves"]')" -gt 0
        check "$engine: torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
        local poor
        poor=$(num 'd["errors"].get("INSUFFICIENT_FUNDS", {}).get("total", 0)')
        if [ "$engine" = traditional ]; then
            # A Dou Dizhu player who lost a deal can no longer cover the next escrow: such a
            # seat leaves and its rejoin is refused; what counts is that no move failed (below).
            e2e_log "$engine: INSUFFICIENT_FUNDS answers to rejoins after a lost deal: $poor"
        else
            check "$engine: no INSUFFICIENT_FUNDS answer ($poor)" test "$poor" -eq 0
        fi
    fi
    local failed
    failed=$(grep -c '"event":"player_move_failed"' "${POD_LOG[gate-a]}")
    if [ "$engine" = traditional ]; then
        # An escrow game: a player who lost chips in a deal holds less than the next deal's
        # escrow anywhere, so the new server refuses them as the old one would have at its next
        # deal. What must hold is that every refused player's chips were back in the wallet when
        # the move was tried (the cash-out came first): the wallet the refusal names is the
        # player's whole balance, never an amount still missing its table chips.
        local bad=0 line player amount
        while read -r line; do
            player=$(sed -n 's/.*"player":\([0-9]*\).*/\1/p' <<<"$line")
            amount=$(sed -n 's/.*"why":"wallet \([0-9]*\) is below.*/\1/p' <<<"$line")
            [ -n "$amount" ] && [ "$amount" = "$(e2e_redis get "{croupier:money}:wallet:$player")" ] ||
                bad=$((bad + 1))
        done < <(grep '"event":"player_move_failed"' "${POD_LOG[gate-a]}")
        check "$engine: every refused move named the player's whole wallet ($failed refused: players who lost a deal; $bad otherwise)" \
            test "$bad" -eq 0
    else
        check "$engine: the gateway logged no failed move ($failed)" test "$failed" -eq 0
    fi
    # Rounds finished on the other server: round ids are service:slot:epoch:desk:seq.
    local on_b
    on_b=$(awk -v s="$slot_b" '$2 == "finished" { split($1, f, ":"); if (f[2] == s) n++ } END { print n + 0 }' "$E2E_DIR/rounds.txt")
    check "$engine: rounds finished on $to, where the players were moved ($on_b; slots $slot_a -> $slot_b)" \
        test "$on_b" -gt 0
    for p in gate-a game-a game-b; do
        check "$engine: pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
    done
    local sum1 nts left
    sum1=$(e2e_wallet_sum)
    check "$engine: wallets sum unchanged ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"
    read -r nts left <<<"$(e2e_accounts_left 'ts.*')"
    check "$engine: every seat account ts.* back at 0 ($nts accounts, $left not)" test "$left" -eq 0
    for w in "${E2E_WARNINGS[@]}"; do e2e_log "warning: $w"; done
    e2e_cleanup
    if [ ${#E2E_FAILURES[@]} -eq 0 ] && [ "${CROUPIER_KEEP_LOGS:-0}" != 1 ]; then
        rm -rf "$E2E_DIR"
    else
        e2e_log "$engine: logs kept in $E2E_DIR"
    fi
}

for engine in $ENGINES; do
    run_engine "$engine"
done
exit $fail
