#!/usr/bin/env bash
# End-to-end test (issue 15): the chips of a game server that dies without a clean exit come
# back, exactly once (docs/queues.md "Where every chip is").
#
# Redis + 2 croupier-game of one engine (a lease pool of 2 slots) + 2 croupier-gate + bots
# playing through both gateways. Then, with no preStop and no SIGTERM:
#   1. game-a is SIGKILLed mid-play and a replacement (game-c) starts at once: the pool is full
#      until game-a's lease expires, then game-c takes game-a's slot under a new epoch and
#      returns game-a's held chips at its start (recovery "dead");
#   2. game-b is SIGKILLed and nobody takes its slot: game-c's sweeper claims it once it has
#      seen it unheld for --recover-grace-ms (recovery "claim": the fence moves first).
# The bots play on until they stop; the last pods are then terminated as kubelet does.
# Checks: wallets + rake equal what was seeded; no held record and no seat account with chips
# is left; every round the bots saw finish settled (the kit shows RoundEnd only once the
# settlement is applied); the dead servers' rounds in progress are voided in the hand history
# (VOID_SERVER_CRASHED), and none of them settled; each recovery is logged with its chips.
# The times from each kill to its chips being back go to the log (bench/crash_recovery.sh
# measures them over repeated kills).
#
#   tests/e2e/crash_recovery.sh BUILD_DIR [SOURCE_DIR]
# Env: ENGINE (test | traditional | holdem | persistent | zhajinhua; default holdem), GAME (one
# game of it; default its first), BOTS (24), LEASE_TTL_MS (2000), GRACE_MS (3000),
# CROUPIER_KEEP_LOGS=1 keeps the work dir.
set -u
BUILD=$(cd "${1:?usage: crash_recovery.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-crash-recovery.XXXXXX)
E2E_FAILURES=()
E2E_WARNINGS=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
ENGINE=${ENGINE:-holdem}
BOTS=${BOTS:-24}
TTL=${LEASE_TTL_MS:-2000}
GRACE=${GRACE_MS:-3000}
HOUSE_FUND=0
case $ENGINE in
test) GAME=${GAME:-test} BOT_ENGINE=traditional ;;
traditional) GAME=${GAME:-doudizhu} BOT_ENGINE=traditional ;;
holdem) GAME=${GAME:-holdem} BOT_ENGINE=holdem ;;
zhajinhua)
    GAME=${GAME:-zhajinhua} BOT_ENGINE=game
    export CROUPIER_ZHAJINHUA_GAP_MS=${CROUPIER_ZHAJINHUA_GAP_MS:-100}
    ;;
persistent)
    GAME=${GAME:-blackjack} BOT_ENGINE=persistent
    export CROUPIER_BJ_BET_MS=${CROUPIER_BJ_BET_MS:-500} CROUPIER_BJ_ACTION_MS=${CROUPIER_BJ_ACTION_MS:-2000}
    export CROUPIER_BJ_GAP_MS=${CROUPIER_BJ_GAP_MS:-200}
    HOUSE_FUND=100000000
    export CROUPIER_BJ_HOUSE_FUND=$HOUSE_FUND
    ;;
*) e2e_die "unknown ENGINE $ENGINE" ;;
esac
export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-500}
SERVICE=crash-$ENGINE

fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}
now_ms() { date +%s%3N; }
# open_rounds SLOT EPOCH: appends to open-rounds.txt the rounds a held epoch had begun without a
# settle record yet (its r: records, money.h "Held chips"): in progress, or settling, when read
# right after its server's kill.
open_rounds() {
    e2e_redis hgetall "{croupier:money}:held:$SERVICE:$1:$2" | python3 -c '
import json, sys
lines = sys.stdin.read().split("\n")
for f, v in zip(lines[0::2], lines[1::2]):
    if f.startswith("r:"):
        print(json.loads(v)["round"])' | while read -r r; do
        [ "$(e2e_redis exists "{croupier:money}:round:$r")" = 1 ] || echo "$r"
    done >>"$E2E_DIR/open-rounds.txt"
}
game_pod() { # NAME
    e2e_game_start "$1" "$ENGINE" 30 --service "$SERVICE" --lease-pool-size 2 \
        --lease-ttl-ms "$TTL" --recover-grace-ms "$GRACE" --sweep-ms 200
}

e2e_secret
e2e_redis_start
e2e_seed_wallets 6000000 "$BOTS" 1000000
e2e_redis set '{croupier:money}:wallet:house-traditional' 100000000 >/dev/null
sum0=$(($(e2e_wallet_sum) + HOUSE_FUND))
game_pod game-a
game_pod game-b
e2e_gate_start gate-a
e2e_gate_start gate-b
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]},127.0.0.1:${POD_PORT[gate-b]}" \
    --bots "$BOTS" --game "$GAME" --engine "$BOT_ENGINE" --seconds 19 --player-base 6000000 \
    --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 60000 \
    --report "$E2E_DIR/report.json" --rounds-file "$E2E_DIR/rounds.txt" \
    >"$E2E_DIR/bot.log" 2>&1 &
BOT=$!
E2E_PIDS+=("$BOT")
sleep 6

# 1. The server holding more dies (called game-a from here on); its replacement takes its slot.
read -r slot_a epoch_a <<<"$(e2e_lease_of game-a)"
read -r slot_b epoch_b <<<"$(e2e_lease_of game-b)"
held_a=$(e2e_redis hlen "{croupier:money}:held:$SERVICE:$slot_a:$epoch_a")
held_b=$(e2e_redis hlen "{croupier:money}:held:$SERVICE:$slot_b:$epoch_b")
if [ "$held_b" -gt "$held_a" ]; then
    for f in POD_PID POD_LOG POD_HEALTH POD_PORT; do
        declare -n arr=$f
        t=${arr[game-a]} arr[game-a]=${arr[game-b]} arr[game-b]=$t
        unset -n arr
    done
    read -r slot_a epoch_a slot_b epoch_b held_a held_b <<<"$slot_b $epoch_b $slot_a $epoch_a $held_b $held_a"
fi
kill -KILL "${POD_PID[game-a]}"
t_kill=$(now_ms) # at the kill: the bounds below count from it (open_rounds takes a while)
open_rounds "$slot_a" "$epoch_a"
e2e_log "game-a (slot $slot_a epoch $epoch_a, $held_a held records) SIGKILLed"
game_pod game-c # ready once game-a's lease expired and it took the slot
read -r slot_c epoch_c <<<"$(e2e_lease_of game-c)"
ms_a=-1
e2e_wait_unheld "$SERVICE:$slot_a:$epoch_a" 30 && ms_a=$(($(now_ms) - t_kill))
e2e_log "game-c took slot $slot_c epoch $epoch_c; game-a's chips back ${ms_a} ms after the kill"
check "the replacement took the dead server's slot under a newer epoch ($slot_a:$epoch_a -> $slot_c:$epoch_c)" \
    test "$slot_c" = "$slot_a" -a "$epoch_c" -gt "$epoch_a"
check "game-a's held records were recovered (${ms_a} ms after the kill)" test "$ms_a" -ge 0
check "game-a held something when it died ($held_a records; game-b $held_b)" test "$held_a" -gt 0
check "game-c logged the recovery of game-a's epoch" \
    grep -q "\"money_recovered\".*\"slot\":$slot_a,\"epoch\":$epoch_a,\"mode\":\"dead\".*\"status\":0" "${POD_LOG[game-c]}"
sleep 3

# 2. Of game-b and game-c, the one holding more dies (called game-b from here on) and nobody
# takes its slot: the survivor's (game-c's) sweeper claims it after the grace.
held_b=$(e2e_redis hlen "{croupier:money}:held:$SERVICE:$slot_b:$epoch_b")
held_c=$(e2e_redis hlen "{croupier:money}:held:$SERVICE:$slot_c:$epoch_c")
if [ "$held_c" -gt "$held_b" ]; then
    for f in POD_PID POD_LOG POD_HEALTH POD_PORT; do
        declare -n arr=$f
        t=${arr[game-b]} arr[game-b]=${arr[game-c]} arr[game-c]=$t
        unset -n arr
    done
    read -r slot_b epoch_b slot_c epoch_c held_b held_c <<<"$slot_c $epoch_c $slot_b $epoch_b $held_c $held_b"
fi
check "game-b held something when it died ($held_b records; game-c $held_c)" test "$held_b" -gt 0
kill -KILL "${POD_PID[game-b]}"
t_kill=$(now_ms) # at the kill: the bounds below count from it (open_rounds takes a while)
# What is left of game-b's lease: its slot is unheld from then on, and the grace counts from there.
# (Read, not assumed: a renew that ran late under load leaves less than 2/3 of the TTL.)
pttl_b=$(e2e_redis pttl "{croupier:lease:$SERVICE}:slot:$slot_b")
[ "$pttl_b" -ge 0 ] 2>/dev/null || pttl_b=0
open_rounds "$slot_b" "$epoch_b"
e2e_log "game-b (slot $slot_b epoch $epoch_b) SIGKILLed"
ms_b=-1
e2e_wait_unheld "$SERVICE:$slot_b:$epoch_b" 40 && ms_b=$(($(now_ms) - t_kill))
e2e_log "game-b's chips back ${ms_b} ms after the kill (lease TTL $TTL ms + grace $GRACE ms)"
check "game-b's held records were claimed and recovered (${ms_b} ms after the kill)" test "$ms_b" -ge 0
# The lease expires a TTL after its last renew (every TTL/3, so normally 2/3 TTL or more after the
# kill; read off the key above); the sweeper then waits the grace before it claims.
check "game-b's recovery waited for the lease to expire ($pttl_b ms left at the kill) and the grace ($ms_b >= $((pttl_b + GRACE)) ms)" \
    test "$ms_b" -ge $((pttl_b + GRACE))
check "game-c's sweeper claimed game-b's epoch" \
    grep -q "\"money_recovered\".*\"slot\":$slot_b,\"epoch\":$epoch_b,\"mode\":\"claim\".*\"status\":0" "${POD_LOG[game-c]}"
fence_b=$(e2e_redis get "{croupier:lease:$SERVICE}:slot:$slot_b:epoch")
check "the claim moved game-b's fence past its epoch ($epoch_b -> $fence_b)" test "$fence_b" -gt "$epoch_b"

wait "$BOT"
bot_status=$?
for p in gate-a gate-b game-c; do
    e2e_pod_terminate "$p"
done
check "bot wrote its report (status $bot_status, log $E2E_DIR/bot.log)" test -s "$E2E_DIR/report.json"
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$E2E_DIR/report.json" "$1"; }
if [ -s "$E2E_DIR/report.json" ]; then
    check "bot exit status 0" test "$bot_status" -eq 0
    check "torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
    check "unexpected errors = 0 ($(num 'd["errors"]'))" \
        test "$(num 'sum(e["unexpected"] for e in d["errors"].values())')" -eq 0
    # (A bot whose table crashed between rounds -- blackjack's betting window -- has no round to
    # count as crash-voided; it is told and moved all the same.)
    check "the bots were told of the crashes and moved ($(num 'd["counters"]["table_closings"]') closings, $(num 'd["counters"]["moves"]') moves, $(num 'd["games"]["crash_voided"]') crash-voided rounds)" \
        test "$(num 'd["counters"]["table_closings"]')" -gt 0 -a "$(num 'd["counters"]["moves"]')" -gt 0
fi

sum1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
check "wallets + rake equal what was seeded ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"
check "no held epoch is left ($(e2e_redis scard '{croupier:money}:held'))" \
    test "$(e2e_redis scard '{croupier:money}:held')" -eq 0
read -r nts ts_left <<<"$(e2e_accounts_left "ts.*")"
check "no seat account holds chips ($nts accounts, $ts_left not at 0)" test "$ts_left" -eq 0
read -r fin missing void settled <<<"$(e2e_rounds_check "$E2E_DIR/rounds.txt")"
check "every round the bots saw finish settled ($fin finished, $missing without a settle record)" \
    test "$fin" -gt 0 -a "$missing" -eq 0
check "no round the bots saw voided settled ($void voided, $settled settled)" test "$settled" -eq 0
# The crash voids: hand histories of the dead epochs with VOID_SERVER_CRASHED, none settled.
e2e_redis --no-raw xrange "{croupier:history:$GAME}:stream" - + >"$E2E_DIR/history.txt"
e2e_redis xrange "{croupier:history:$GAME}:stream" - + | python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        d = json.loads(line)
        if d.get("void_reason") == "VOID_SERVER_CRASHED":
            print(d["round"])' | sort -u >"$E2E_DIR/crash-voids.txt"
ncv=$(wc -l <"$E2E_DIR/crash-voids.txt")
bad=0
while read -r r; do
    [ "$(e2e_redis exists "{croupier:money}:round:$r")" = 0 ] || bad=$((bad + 1))
    case $r in "$SERVICE:$slot_a:$epoch_a:"* | "$SERVICE:$slot_b:$epoch_b:"*) ;; *) bad=$((bad + 1)) ;; esac
done <"$E2E_DIR/crash-voids.txt"
# Every round the dead servers had open when they died either settled (its settlement was in
# Redis already) or is voided; a kill between rounds leaves none open.
touch "$E2E_DIR/open-rounds.txt"
nopen=$(sort -u "$E2E_DIR/open-rounds.txt" | wc -l)
unaccounted=0
while read -r r; do
    [ "$(e2e_redis exists "{croupier:money}:round:$r")" = 1 ] || grep -qx "$r" "$E2E_DIR/crash-voids.txt" ||
        unaccounted=$((unaccounted + 1))
done < <(sort -u "$E2E_DIR/open-rounds.txt")
check "every round open at a kill settled or is crash-voided ($nopen open, $ncv crash-voided, $unaccounted neither)" \
    test "$unaccounted" -eq 0
[ "$nopen" -gt 0 ] || e2e_log "note: both kills fell between rounds (no round was open)"
check "every crash-voided round is a dead epoch's and none settled ($bad wrong)" test "$bad" -eq 0
for w in "${E2E_WARNINGS[@]}"; do e2e_log "warning: $w"; done
e2e_log "crash recovery ($ENGINE): replaced slot ${ms_a} ms, unheld slot ${ms_b} ms (TTL $TTL, grace $GRACE)"
exit $fail
