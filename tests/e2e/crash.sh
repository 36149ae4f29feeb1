#!/usr/bin/env bash
# End-to-end test (issue 15): a process SIGKILLed while bots play -- no preStop, no SIGTERM.
# Redis + 2 croupier-game of one engine + 2 croupier-gate + one croupier-bot playing through both
# gateways; a few seconds in, one process is SIGKILLed; the bots play on, then stop; the rest of
# the pods are terminated as kubelet does.
#
#   tests/e2e/crash.sh BUILD_DIR [SOURCE_DIR]
# Env: CRASH (game | gate; default game), ENGINE (default test), GAME (default test), BOT_ENGINE
# (the Join's engine, default the engine's; traditional for the test game), BOTS (40),
# BOT_SECONDS (12), KILL_AFTER (seconds of play before the kill, 4), LEASE_TTL_MS (the game
# servers' lease TTL = their registry entries' TTL, 3000), CROUPIER_KEEP_LOGS=1 keeps the work
# dir.
#
# CRASH=game: the game server holding the most seats is killed. Checks: every gateway reports
# the server gone (log server_gone) within the lease TTL of the kill plus slack, its players are
# told TableClosing{CRASHED} and moved to the other server (bots: crash_closings > 0, moves > 0,
# torn 0, no unexpected error, exit 0), no seat record names the dead server once the moves are
# done, a player whose record still named it (planted before the kill, not connected) is not
# seated when it logs in later and joins at once, and every finished round of the surviving
# server settled. The measured times go to the log. Money is not checked for the killed server:
# its held chips and its unsettled rounds are the recovery's (docs/queues.md), checked elsewhere.
#
# CRASH=gate: a gateway is killed. Checks: every bot that was on it reconnects to the other one
# and resumes its seat (reconnects.after_loss = counters.connections_lost > 0), torn 0, no
# unexpected error, exit 0, and the money checks of bots_smoke.sh: wallets unchanged, every
# finished round settled, no voided one, every round that ended unseen accounted for.
set -u
BUILD=$(cd "${1:?usage: crash.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-crash.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
CRASH=${CRASH:-game}
ENGINE=${ENGINE:-test}
GAME=${GAME:-test}
# the Join's engine (croupier-bot --engine): the test game is joined as bots_smoke.sh does
if [ "$ENGINE" = test ]; then BOT_ENGINE=${BOT_ENGINE:-traditional}; else BOT_ENGINE=${BOT_ENGINE:-$ENGINE}; fi
BOTS=${BOTS:-40}
BOT_SECONDS=${BOT_SECONDS:-12}
KILL_AFTER=${KILL_AFTER:-4}
LEASE_TTL_MS=${LEASE_TTL_MS:-3000}
SEED_CHIPS=1000000
BASE=6000000
STRAY=$((BASE + 90000)) # a player who is away when the server dies, its record naming it
export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-500}

now_ms() { date +%s%3N; }
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}
# The wall-clock ms of the first log line of EVENT in FILE (matching the extra grep -F text), or
# nothing.
log_ts() { # log_ts FILE EVENT [TEXT] [first|last]
    local pick="head -n 1"
    [ "${4:-first}" = last ] && pick="tail -n 1"
    grep -F "\"event\":\"$2\"" "$1" | grep -F -- "${3:-}" | $pick |
        python3 -c 'import sys, json, datetime
for line in sys.stdin:
    ts = json.loads(line)["ts"]
    d = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    print(int(d.timestamp() * 1000))'
}

e2e_secret
e2e_redis_start
e2e_seed_wallets $BASE "$BOTS" $SEED_CHIPS
e2e_seed_wallets $STRAY 1 $SEED_CHIPS
sum0=$(e2e_wallet_sum)
e2e_game_start game-a "$ENGINE" 30 --lease-ttl-ms "$LEASE_TTL_MS" --lease-pool-size 4
e2e_game_start game-b "$ENGINE" 30 --lease-ttl-ms "$LEASE_TTL_MS" --lease-pool-size 4
e2e_gate_start gate-a
e2e_gate_start gate-b
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]},127.0.0.1:${POD_PORT[gate-b]}" \
    --bots "$BOTS" --game "$GAME" --engine "$BOT_ENGINE" --seconds "$BOT_SECONDS" \
    --player-base $BASE --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 30000 \
    --report "$E2E_DIR/report.json" --rounds-file "$E2E_DIR/rounds.txt" \
    >"$E2E_DIR/bot.log" 2>&1 &
bot_pid=$!
E2E_PIDS+=("$bot_pid")
sleep "$KILL_AFTER"

# Seats per game server address (the records the gateways keep), the away player's left out.
seats_at() { # seats_at ADDRESS
    local n=0 k
    for k in $(e2e_redis --scan --pattern '{croupier:seat}:*'); do
        [ "$k" = "{croupier:seat}:$STRAY" ] && continue
        case "$(e2e_redis get "$k")" in *" $1 "*) n=$((n + 1)) ;; esac
    done
    echo "$n"
}
# "SERVER_ID EPOCH" of a game pod, from its "ready" log line.
pod_identity() { # pod_identity NAME
    python3 -c 'import sys, json
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("event") == "ready":
        print("%s:%d %d" % (r["service"], r["slot"], r["epoch"]))
        break' "${POD_LOG[$1]}"
}

if [ "$CRASH" = game ]; then
    na=$(seats_at "127.0.0.1:${POD_PORT[game-a]}")
    nb=$(seats_at "127.0.0.1:${POD_PORT[game-b]}")
    victim=game-a
    [ "$nb" -gt "$na" ] && victim=game-b
    vaddr="127.0.0.1:${POD_PORT[$victim]}"
    read -r vid vepoch <<<"$(pod_identity "$victim")"
    e2e_log "seats: game-a $na, game-b $nb; killing $victim ($vid epoch $vepoch at $vaddr)"
    # A player who is away holds a seat there (as a record written before the kill).
    e2e_redis set "{croupier:seat}:$STRAY" "$vid $vaddr 1 1 10 $GAME $vepoch" >/dev/null
    t_kill=$(now_ms)
    kill -KILL "${POD_PID[$victim]}"
    wait "${POD_PID[$victim]}" 2>/dev/null
    e2e_log "$victim SIGKILLed"
    # The moves are done once both gateways reported the server gone and no record names it.
    deadline=$((SECONDS + 20))
    left=-1
    while ((SECONDS < deadline)); do
        if grep -q '"event":"server_gone"' "${POD_LOG[gate-a]}" &&
            grep -q '"event":"server_gone"' "${POD_LOG[gate-b]}"; then
            sleep 0.5 # the moves in flight
            left=$(seats_at "$vaddr")
            [ "$left" -eq 0 ] && break
        fi
        sleep 0.1
    done
    t_clean=$(now_ms)
    check "no connected player's seat record names the killed server ($left left, $((t_clean - t_kill)) ms after the kill)" \
        test "$left" -eq 0
    # The stray player comes back: not seated, joins at once (a one-bot run of 2 s).
    t0=$(now_ms)
    "$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-b]}" --bots 1 --game "$GAME" \
        --engine "$BOT_ENGINE" --seconds 2 --player-base $STRAY --token-secret-file "$E2E_DIR/secret" \
        --report "$E2E_DIR/report-stray.json" --ramp-ms 1 >"$E2E_DIR/bot-stray.log" 2>&1
    st_stray=$?
    srep() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$E2E_DIR/report-stray.json" "$1"; }
    check "the away player: bot exit 0 ($st_stray)" test "$st_stray" -eq 0
    check "the away player joined without a resume ($(srep 'd["counters"]["joins"]') joins, $(srep 'd["counters"]["resumes"]') resumes)" \
        test "$(srep 'd["counters"]["joins"]')" -ge 1 -a "$(srep 'd["counters"]["resumes"]')" -eq 0
    check "the away player saw no DEADLINE_EXCEEDED ($(srep 'd["errors"]'))" \
        test "$(srep 'd["errors"].get("DEADLINE_EXCEEDED", {}).get("total", 0)')" -eq 0
    for gw in gate-a gate-b; do
        t_gone=$(log_ts "${POD_LOG[$gw]}" server_gone "\"server\":\"$vid\"")
        t_moved=$(log_ts "${POD_LOG[$gw]}" player_moved '"reason":"crashed"' last)
        n_moved=$(grep -F '"event":"player_moved"' "${POD_LOG[$gw]}" | grep -cF '"reason":"crashed"')
        n_failed=$(grep -F '"event":"player_move_failed"' "${POD_LOG[$gw]}" | grep -cF '"reason":"crashed"')
        lost=$(grep -F '"event":"server_gone"' "${POD_LOG[$gw]}" | head -n 1 | sed -n 's/.*"link_lost_ms":\([0-9-]*\).*/\1/p')
        e2e_log "$gw: server gone $((t_gone - t_kill)) ms after the kill (link lost for ${lost:-?} ms), $n_moved players moved, the last $((${t_moved:-$t_kill} - t_kill)) ms after the kill, $n_failed moves failed (lease TTL $LEASE_TTL_MS ms)"
        check "$gw found the server gone within the lease TTL + 1 s ($((t_gone - t_kill)) ms)" \
            test -n "$t_gone" -a $((t_gone - t_kill)) -le $((LEASE_TTL_MS + 1000))
        check "$gw: no crash move failed ($n_failed)" test "$n_failed" -eq 0
        echo "$gw $((t_gone - t_kill)) ${t_moved:+$((t_moved - t_kill))} $n_moved" >>"$E2E_DIR/times.txt"
    done
    killed=$victim
else
    t_kill=$(now_ms)
    kill -KILL "${POD_PID[gate-a]}"
    wait "${POD_PID[gate-a]}" 2>/dev/null
    e2e_log "gate-a SIGKILLed"
    killed=gate-a
fi

st=0
wait "$bot_pid" || st=$?
rep=$E2E_DIR/report.json
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
if [ ! -s "$rep" ]; then
    check "bot wrote its report (log $E2E_DIR/bot.log)" false
else
    check "bot exit status 0 ($st)" test "$st" -eq 0
    check "finished games > 0 ($(num 'd["games"]["finished"]'))" test "$(num 'd["games"]["finished"]')" -gt 0
    check "torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
    check "unexpected errors = 0 ($(num 'd["unexpected_errors"]'); $(num 'd["errors"]'))" test "$(num 'd["unexpected_errors"]')" -eq 0
    e2e_log "bots: games $(num 'd["games"]'), reconnects $(num 'd["reconnects"]'), moves $(num 'd["counters"]["moves"]'), crash closings $(num 'd["counters"]["crash_closings"]')"
    if [ "$CRASH" = game ]; then
        check "the killed server's players were told it crashed ($(num 'd["counters"]["crash_closings"]'))" \
            test "$(num 'd["counters"]["crash_closings"]')" -gt 0
        check "and moved ($(num 'd["counters"]["moves"]') moves)" test "$(num 'd["counters"]["moves"]')" -ge "$(num 'd["counters"]["crash_closings"]')"
    else
        check "bots lost their gateway and recovered ($(num 'd["counters"]["connections_lost"]') lost, $(num 'd["reconnects"]["after_loss"]') recovered)" \
            test "$(num 'd["counters"]["connections_lost"]')" -gt 0 -a \
            "$(num 'd["reconnects"]["after_loss"]')" -eq "$(num 'd["counters"]["connections_lost"]')"
        check "they resumed their seats ($(num 'd["counters"]["resumes"]') resumes)" \
            test "$(num 'd["counters"]["resumes"]')" -ge "$(num 'd["reconnects"]["after_loss"]')"
    fi
fi
# Stop the rest the way kubelet does; each must exit drained.
for p in gate-a gate-b game-a game-b; do
    [ "$p" = "$killed" ] && continue
    e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
done
for w in "${E2E_WARNINGS[@]}"; do e2e_log "warning: $w"; done
if [ "$CRASH" = game ]; then
    # The surviving server's rounds settled (round ids: service:slot:epoch:desk:seq).
    vprefix="$vid:$vepoch:"
    awk -v p="$vprefix" '$2 == "finished" && index($1, p) != 1 { print "EXISTS {croupier:money}:round:" $1 }' \
        "$E2E_DIR/rounds.txt" | e2e_redis >"$E2E_DIR/exists.txt"
    missing=$(grep -vc '^1$' "$E2E_DIR/exists.txt")
    check "every finished round of the surviving server settled ($(wc -l <"$E2E_DIR/exists.txt") rounds, $missing missing)" \
        test "$missing" -eq 0
else
    sum1=$(e2e_wallet_sum)
    check "wallets sum unchanged ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"
    read -r fin missing void settled <<<"$(e2e_rounds_check "$E2E_DIR/rounds.txt")"
    check "every finished round settled ($fin rounds, $missing missing)" test "$missing" -eq 0
    check "no voided round settled ($void voided, $settled settled)" test "$settled" -eq 0
    read -r unseen unaccounted <<<"$(e2e_unseen_check "$E2E_DIR/rounds.txt")"
    check "every round that ended while its bot reconnected was finished ($unseen rounds, $unaccounted not)" test "$unaccounted" -eq 0
fi
[ ${#E2E_FAILURES[@]} -gt 0 ] && fail=1
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
