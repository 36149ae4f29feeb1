#!/usr/bin/env bash
# bench/crash_recovery.sh BUILD_DIR [KILLS] [LEASE_TTL_MS]: the time from a game server's
# SIGKILL to (a) its held chips being back in the wallets (its epoch gone from the held index,
# money/sweeper.h) and (b) every player it seated being seated on another server (their seat
# records, written by the gateways' crash moves, name another server), over KILLS kills (default
# 10) of hold'em servers with bots playing through two gateways. Alternate kills are
#   replaced  a new server starts at once and takes the dead slot when its lease expires: the
#             next holder returns the chips at its start;
#   unheld    nobody takes the slot: the survivor's sweeper claims it after --recover-grace-ms
#             (the default, 2 x the lease TTL) of seeing it unheld.
# What sets both: the lease TTL (the registry entry shares it: the gateways find the server
# gone between 2/3 TTL and TTL after the kill), plus, unheld, the grace.
# Prints one line per kill and p50/p99 per mode.
set -u
BUILD=$(cd "${1:?usage: crash_recovery.sh BUILD_DIR [KILLS] [LEASE_TTL_MS]}" && pwd)
KILLS=${2:-10}
TTL=${3:-2000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bench-crash.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; rm -rf "$E2E_DIR"' EXIT
SERVICE=bench-crash
now_ms() { date +%s%3N; }
n=0
game_pod() {
    n=$((n + 1))
    e2e_game_start "g$n" holdem 30 --service "$SERVICE" --lease-pool-size 2 --lease-ttl-ms "$TTL" \
        --sweep-ms 100 >/dev/null
    ALIVE+=("g$n")
}
ALIVE=()
e2e_secret
e2e_redis_start
e2e_seed_wallets 8000000 36 100000000
game_pod
game_pod
e2e_gate_start gate-a >/dev/null
e2e_gate_start gate-b >/dev/null
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]},127.0.0.1:${POD_PORT[gate-b]}" \
    --bots 36 --game holdem --engine holdem --seconds 3600 --player-base 8000000 \
    --token-secret-file "$E2E_DIR/secret" --report "$E2E_DIR/report.json" \
    >"$E2E_DIR/bot.log" 2>&1 &
E2E_PIDS+=($!)
sleep 5
: >"$E2E_DIR/times.txt"
for ((k = 0; k < KILLS; k++)); do
    mode=replaced
    [ $((k % 2)) = 1 ] && mode=unheld
    # The victim: the live server holding more.
    v=${ALIVE[0]} s=${ALIVE[1]}
    read -r sv ev <<<"$(e2e_lease_of "$v")"
    read -r ss es <<<"$(e2e_lease_of "$s")"
    if [ "$(e2e_redis hlen "{croupier:money}:held:$SERVICE:$ss:$es")" -gt \
        "$(e2e_redis hlen "{croupier:money}:held:$SERVICE:$sv:$ev")" ]; then
        t=$v v=$s s=$t
        read -r sv ev <<<"$(e2e_lease_of "$v")"
    fi
    players=$(e2e_redis hvals "{croupier:money}:held:$SERVICE:$sv:$ev" | grep -E '^[0-9]+$' | sort -u)
    np=$(printf '%s' "$players" | grep -c .)
    kill -KILL "${POD_PID[$v]}"
    t0=$(now_ms)
    wait "${POD_PID[$v]}" 2>/dev/null
    ALIVE=("$s")
    # The poller runs beside the replacement's start (which blocks until it is ready).
    (
        chips=-1 seated=-1
        while (($(now_ms) - t0 < 60000)) && { [ $chips -lt 0 ] || [ $seated -lt 0 ]; }; do
            if [ $chips -lt 0 ] && [ "$(e2e_redis sismember '{croupier:money}:held' "$SERVICE:$sv:$ev")" = 0 ]; then
                chips=$(($(now_ms) - t0))
            fi
            if [ $seated -lt 0 ]; then
                left=0
                for p in $players; do
                    # "server address desk engine stake game epoch" (gateway/gate_seat.c)
                    read -r rs _ _ _ _ _ re <<<"$(e2e_redis get "{croupier:seat}:$p")"
                    if [ -z "$rs" ] || { [ "$rs" = "$SERVICE:$sv" ] && [ "$re" = "$ev" ]; }; then
                        left=$((left + 1))
                    fi
                done
                [ $left = 0 ] && seated=$(($(now_ms) - t0))
            fi
            sleep 0.02
        done
        echo "$mode $chips $seated $np" >>"$E2E_DIR/times.txt"
        echo "kill $((k + 1)) ($mode, $np players): chips back ${chips} ms, players seated elsewhere ${seated} ms"
    ) &
    poller=$!
    [ $mode = replaced ] && game_pod
    wait $poller
    [ $mode = unheld ] && game_pod
    sleep 2
done
python3 - "$E2E_DIR/times.txt" "$TTL" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
for mode in ("replaced", "unheld"):
    r = [x for x in rows if x[0] == mode]
    if not r:
        continue
    c = [int(x[1]) for x in r]
    s = [int(x[2]) for x in r]
    print("%-8s kills=%d lease_ttl=%s ms  chips back: p50 %d ms p99 %d ms  players seated: p50 %d ms p99 %d ms"
          % (mode, len(r), sys.argv[2], pct(c, 50), pct(c, 99), pct(s, 50), pct(s, 99)))
EOF
