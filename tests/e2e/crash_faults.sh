#!/usr/bin/env bash
# End-to-end test (issue 15): faults other than a clean exit, with bots playing through two
# gateways (docs/queues.md "Where every chip is").
#
#   FAULT=redis     Redis (AOF, appendfsync always) is SIGKILLed and restarted from its AOF
#                   after longer than the lease TTL, with a game server of every kit engine
#                   playing. Every server fences itself (its tables stop, their players are
#                   told; docs/queues.md "A server cut off from Redis"), then takes its slot back
#                   under the SAME epoch (the fence proves nobody held it meanwhile, lease.h),
#                   lifts its fence and stays up; every round the bots
#                   saw finish settled once, no player got NOT_SEATED, nothing stays held.
#   FAULT=pause     A hold'em server is paused (SIGSTOP) until its lease expired and the other
#                   server's sweeper claimed its epoch and returned its chips; then it is
#                   resumed (SIGCONT): it must not settle, buy in or cash out anything (the
#                   moved fence refuses it), it finds its lease lost and exits (status 3), and
#                   its players are moved.
#   FAULT=inflight  Redis pauses writes (CLIENT PAUSE WRITE) while hold'em bots join and play,
#                   so buy-ins, settlements and cash-outs are in flight, and the server is
#                   SIGKILLed in that window; a replacement recovers what it held. Then the same
#                   during the exit flush (SIGTERM, then SIGKILL while its cash-outs wait).
#   FAULT=failover  Redis with two replicas and three Sentinels (issue 18, docs/deploy.md
#                   "Failover and durability"); every kit engine plays through two gateways,
#                   all of them finding the master through the sentinels. The master is
#                   SIGKILLed, a replica is promoted, the dead node comes back as a replica;
#                   later the new master is SIGKILLed too. The game servers run with
#                   --redis-min-replicas 1 (the default; MIN_REPLICAS=2 as the prod overlay):
#                   what a promoted replica lacks their replay journals apply again. No process
#                   exits, every server keeps its epoch, every round the bots saw finish has its
#                   settle record.
#   FAULT=failover-stop  The same, but each master is SIGSTOPped (alive, answering nothing)
#                   instead, and resumed (SIGCONT) 10 s later: Sentinel demotes it to a replica
#                   of the new master, whatever it still held in its socket buffers is applied
#                   there and then thrown away by the resync.
#   FAULT=partition  (issue 26) Two game servers (hold'em, Dou Dizhu) run in a network namespace
#                   the test makes, reaching the gateways over one veth pair and Redis over
#                   another; two more servers of the same engines run outside. While bots play
#                   through two gateways, the namespace's Redis link goes dark (its host side
#                   down: packets dropped, as by a firewall) for 3 x the lease TTL. Each cut-off
#                   server must fence itself (docs/queues.md "A server cut off from Redis") before
#                   a sweeper returns its chips, its players are moved to the servers outside;
#                   after the link is back it finds its lease lost and exits 3. Needs root
#                   (ip netns): without it the test says so and is skipped (77).
#   FAULT=clock     (issue 26) A hold'em server and one gateway run under libfaketime (Debian
#                   faketime): while bots play, the server's wall clock steps 10 minutes ahead
#                   and later 10 minutes back, the gateway's the other way. Leases, timers and
#                   request deadlines are on monotonic clocks (rpc.proto budget_ms) or fenced:
#                   nothing expires, no lease is lost, no request fails, no round is torn.
#                   Without libfaketime the test says so and is skipped (77).
#   FAULT=evict     (issue 26) While bots play hold'em and Dou Dizhu through two gateways, Redis's
#                   maxmemory-policy is set to allkeys-lru (CONFIG SET, as a misconfigured
#                   shared Redis would be): every server and gateway turns unready within
#                   seconds (common/rguard.h) and no round starts; back to noeviction, play goes
#                   on. A server started meanwhile is refused (exit 2).
#   FAULT=freeze-gate  Hold'em and Zha Jin Hua bots play through two gateways; one gateway is
#                   frozen (SIGSTOP) for 30 s, then resumed (SIGCONT). Its kernel still accepts
#                   and acknowledges what the bots write, so only their keepalive tells
#                   (docs/protocol.md "Keepalive"): every bot on it leaves for the other gateway
#                   within the keepalive's bound (counted gateway_silent) and resumes its seat;
#                   the game servers drop the silent gateway's links (rpc_link_silent); the
#                   resumed gateway closes, unread, the connections whose bytes waited through
#                   the stall (gate_stalled) and serves again; no request times out, nothing is
#                   torn.
#   FAULT=freeze-game  The same two games with two servers each; one server of each game is
#                   frozen for 30 s: every gateway finds it gone once its lease expires and
#                   moves its players to the other server (docs/gateway.md "When a game server
#                   freezes"), the survivor's sweeper returns its chips; resumed, it finds its
#                   lease lost, writes nothing (the fence) and exits (status 3).
#   FAULT=freeze-game-short  The same, frozen 4.5 s with a 12 s lease TTL: the links fail, the
#                   registry entries live on; resumed, each server is the same process to the
#                   gateways, keeps its lease, seats and players; nobody is moved.
# Always: wallets + rake equal what was seeded, no held epoch and no seat account with chips is
# left, every round the bots saw finish has its settle record and no voided one has.
#
#   tests/e2e/crash_faults.sh BUILD_DIR [SOURCE_DIR]
# Env: FAULT (redis | pause | inflight | failover | failover-stop | partition | clock | evict |
# freeze-gate | freeze-game | freeze-game-short; default redis), FREEZE_S (freeze-gate,
# freeze-game: how long the freeze lasts, 30), MIN_REPLICAS
# (failover*: 1), CROUPIER_KEEP_LOGS=1 keeps the work dir.
set -u
BUILD=$(cd "${1:?usage: crash_faults.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/croupier-crash-faults.XXXXXX")
E2E_FAILURES=()
E2E_WARNINGS=()
net_cleanup() { :; } # FAULT=partition: its network namespace and links
trap 'e2e_cleanup; net_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
FAULT=${FAULT:-redis}
TTL=2000
GRACE=3000
export CROUPIER_TEST_ROUND_MS=500 CROUPIER_ZHAJINHUA_GAP_MS=100
export CROUPIER_BJ_BET_MS=500 CROUPIER_BJ_ACTION_MS=2000 CROUPIER_BJ_GAP_MS=200
export CROUPIER_BJ_HOUSE_FUND=100000000

fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); return 1; fi
}
now_ms() { date +%s%3N; }
game_pod() { # NAME ENGINE [flags]
    local n=$1 e=$2
    shift 2
    e2e_game_start "$n" "$e" 30 --lease-ttl-ms "$TTL" --recover-grace-ms "$GRACE" --sweep-ms 200 "$@"
}
declare -A BOT_PID BOT_GAME
BOT_ARGS=() # more croupier-bot flags (a case's own)
# (Seed the wallets -- e2e_seed_wallets BASE COUNT 1000000 -- and sum them first: a sum read
# while bots play is not a snapshot.)
bots_start() { # GAME ENGINE BASE COUNT SECONDS
    "$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]},127.0.0.1:${POD_PORT[gate-b]}" \
        --bots "$4" --game "$1" --engine "$2" --seconds "$5" --player-base "$3" \
        --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 60000 \
        --report "$E2E_DIR/report-$1.json" --rounds-file "$E2E_DIR/rounds-$1.txt" \
        "${BOT_ARGS[@]}" >"$E2E_DIR/bot-$1.log" 2>&1 &
    BOT_PID[$1]=$!
    E2E_PIDS+=($!)
}
# Waits for every bot fleet and checks its report; $1 = 1: players are moved by a crash.
bots_check() {
    local g st rep
    for g in "${!BOT_PID[@]}"; do
        st=0
        wait "${BOT_PID[$g]}" || st=$?
        rep=$E2E_DIR/report-$g.json
        if [ ! -s "$rep" ]; then
            check "$g: bot wrote its report (log $E2E_DIR/bot-$g.log)" false
            continue
        fi
        num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
        check "$g: bot exit status 0" test "$st" -eq 0
        check "$g: finished games > 0 ($(num 'd["games"]["finished"]'))" test "$(num 'd["games"]["finished"]')" -gt 0
        check "$g: torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0 ||
            e2e_torn_detail "$rep" "$E2E_DIR/bot-$g.log"
        check "$g: unexpected errors = 0 ($(num 'd["errors"]'))" \
            test "$(num 'sum(e["unexpected"] for e in d["errors"].values())')" -eq 0 ||
            e2e_fail_detail "$E2E_DIR/bot-$g.log" '"level":"(warn|error)"'
        check "$g: no NOT_SEATED ($(num 'd["errors"].get("NOT_SEATED", {}).get("total", 0)'))" \
            test "$(num 'd["errors"].get("NOT_SEATED", {}).get("total", 0)')" -eq 0
        read -r fin missing void settled <<<"$(e2e_rounds_check "$E2E_DIR/rounds-$g.txt")"
        check "$g: every round the bots saw finish settled ($fin finished, $missing without a record)" \
            test "$missing" -eq 0
        check "$g: no voided round settled ($void voided, $settled settled)" test "$settled" -eq 0
        if [ "$1" = 1 ]; then
            check "$g: the bots were moved off the crashed server ($(num 'd["counters"]["moves"]') moves)" \
                test "$(num 'd["counters"]["moves"]')" -gt 0
        fi
    done
}
money_check() { # SUM0
    local sum1 nts ts_left
    sum1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    check "wallets + rake equal what was seeded ($1 -> $sum1)" test "$1" -eq "$sum1"
    check "no held epoch is left ($(e2e_redis smembers '{croupier:money}:held' | tr '\n' ' '))" \
        test "$(e2e_redis scard '{croupier:money}:held')" -eq 0
    read -r nts ts_left <<<"$(e2e_accounts_left "ts.*")"
    check "no seat account holds chips ($nts accounts, $ts_left not at 0)" test "$ts_left" -eq 0
}

e2e_secret
case $FAULT in
redis)
    export E2E_REDIS_AOF=1
    e2e_redis_start
    e2e_redis set '{croupier:money}:wallet:house-traditional' 100000000 >/dev/null
    ENGINES="test holdem persistent traditional zhajinhua"
    for e in $ENGINES; do game_pod "game-$e" "$e"; done
    for _ in $(seq 1 100); do
        [ "$(e2e_redis exists '{croupier:money}:wallet:house.persistent')" = 1 ] && break
        sleep 0.1
    done
    e2e_gate_start gate-a
    e2e_gate_start gate-b
    e2e_seed_wallets 7000000 16 1000000
    for base in 7100000 7200000 7300000 7400000; do e2e_seed_wallets $base 12 1000000; done
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    bots_start test traditional 7000000 16 18
    bots_start holdem holdem 7100000 12 18
    bots_start blackjack persistent 7200000 12 18
    bots_start doudizhu traditional 7300000 12 18
    bots_start zhajinhua game 7400000 12 18
    sleep 6
    kill -KILL "$REDIS_PID"
    e2e_log "redis SIGKILLed; down for 4 s (lease TTL $TTL ms)"
    sleep 4
    e2e_redis_restart
    e2e_log "redis restarted from its AOF"
    bots_check 0
    for e in $ENGINES; do
        read -r slot epoch <<<"$(e2e_lease_of "game-$e")"
        check "game-$e stayed up through the outage" e2e_alive "${POD_PID[game-$e]}"
        # down longer than the TTL: every server stopped its tables (docs/queues.md "A server
        # cut off from Redis") and took players again once Redis confirmed its lease
        check "game-$e fenced itself during the outage" grep -q '"self_fenced"' "${POD_LOG[game-$e]}"
        check "game-$e lifted its fence after it" grep -q '"self_fence_lifted"' "${POD_LOG[game-$e]}"
        check "game-$e took its slot back under the same epoch ($slot:$epoch)" \
            grep -q "\"lease_regained\".*\"slot\":$slot,\"epoch\":$epoch," "${POD_LOG[game-$e]}"
        check "game-$e: no settlement refused" bash -c "! grep -q 'tk_settlement_failed\|MONEY_STALE_EPOCH' '${POD_LOG[game-$e]}'"
    done
    for p in gate-a gate-b; do e2e_pod_terminate "$p"; done
    for e in $ENGINES; do e2e_pod_terminate "game-$e"; done
    money_check "$sum0"
    ;;
pause)
    e2e_redis_start
    game_pod game-a holdem --lease-pool-size 2
    game_pod game-b holdem --lease-pool-size 2
    e2e_gate_start gate-a
    e2e_gate_start gate-b
    e2e_seed_wallets 7500000 24 1000000
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    bots_start holdem holdem 7500000 24 20
    sleep 5
    read -r sa ea <<<"$(e2e_lease_of game-a)"
    read -r sb eb <<<"$(e2e_lease_of game-b)"
    victim=game-a survivor=game-b
    if [ "$(e2e_redis hlen "{croupier:money}:held:holdem:$sb:$eb")" -gt "$(e2e_redis hlen "{croupier:money}:held:holdem:$sa:$ea")" ]; then
        victim=game-b survivor=game-a sa=$sb ea=$eb
    fi
    kill -STOP "${POD_PID[$victim]}"
    e2e_log "$victim (slot $sa epoch $ea) paused"
    e2e_wait_unheld "holdem:$sa:$ea" 30
    check "$survivor's sweeper claimed the paused server's epoch" \
        grep -q "\"money_recovered\".*\"slot\":$sa,\"epoch\":$ea,\"mode\":\"claim\".*\"status\":0" "${POD_LOG[$survivor]}"
    before=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    kill -CONT "${POD_PID[$victim]}"
    e2e_log "$victim resumed"
    st=0
    for _ in $(seq 1 100); do e2e_alive "${POD_PID[$victim]}" || break; sleep 0.1; done
    wait "${POD_PID[$victim]}" || st=$?
    check "the resumed server found its lease lost and exited (status $st)" test "$st" -eq 3
    check "it logged the lost lease" grep -q '"lease_lost"' "${POD_LOG[$victim]}"
    # Everything it tried after resuming was refused by the moved fence: no held record of its
    # epoch came back, and the wallets did not move on its account.
    check "nothing of the paused epoch is held again" \
        test "$(e2e_redis exists "{croupier:money}:held:holdem:$sa:$ea")" = 0
    bots_check 1
    for p in gate-a gate-b "$survivor"; do e2e_pod_terminate "$p"; done
    e2e_log "wallets + rake when the paused server resumed: $before"
    money_check "$sum0"
    ;;
inflight)
    # Writes pause up to 1.5 s here: a TTL that outlives a pause plus a renew period, or the
    # survivors would fence themselves (docs/queues.md "A server cut off from Redis") and their
    # registry entries lapse mid-pause -- that is FAULT=partition's subject, not this one's.
    TTL=4000
    e2e_redis_start
    game_pod game-1 holdem
    game_pod game-2 holdem # (so that game-1's players always have a server to be moved to)
    e2e_gate_start gate-a
    e2e_gate_start gate-b
    e2e_seed_wallets 7600000 20 1000000
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    held_of() { # NAME: held records of its epoch
        local sl ep
        read -r sl ep <<<"$(e2e_lease_of "$1")"
        e2e_redis hlen "{croupier:money}:held:holdem:$sl:$ep"
    }
    # kill_in_pause VICTIM PAUSE_MS DELAY WHAT [NEW...]: Redis pauses writes, VICTIM is
    # SIGKILLed DELAY s later with its writes waiting, the NEW pods start; VICTIM held
    # something, and its epoch ends up recovered with nothing left held.
    # MUST_HOLD=0: the victim may have held nothing (its first writes never ran: a killed
    # client's waiting commands are dropped by Redis, so its buy-ins never debited anyone).
    # SIGNAL_FIRST=TERM: the victim gets that signal once writes are paused (its exit flush).
    kill_in_pause() {
        local v=$1 pause=$2 delay=$3 what=$4 sl ep n
        shift 4
        read -r sl ep <<<"$(e2e_lease_of "$v")"
        e2e_redis client pause "$pause" write >/dev/null
        [ -n "${SIGNAL_FIRST:-}" ] && kill "-$SIGNAL_FIRST" "${POD_PID[$v]}"
        sleep "$delay"
        kill -KILL "${POD_PID[$v]}"
        e2e_log "$v (slot $sl epoch $ep) SIGKILLed with $what waiting in Redis"
        for n in "$@"; do game_pod "$n" holdem; done
        sleep "$((pause / 1000 + 1))"
        local held
        held=$(e2e_redis exists "{croupier:money}:held:holdem:$sl:$ep")
        [ "${MUST_HOLD:-1}" = 0 ] || check "$v held something when it died" test "$held" = 1
        e2e_wait_unheld "holdem:$sl:$ep" 30
        [ "$held" = 0 ] || check "$v's epoch was recovered" \
            grep -qh "\"money_recovered\".*\"slot\":$sl,\"epoch\":$ep,.*\"status\":0" "$E2E_DIR"/game-*.log
        check "$v's epoch left nothing held" \
            test "$(e2e_redis exists "{croupier:money}:held:holdem:$sl:$ep")" = 0
    }
    # (a) The bots join game-1 and game-2 while writes wait: buy-ins in flight.
    e2e_redis client pause 1500 write >/dev/null
    bots_start holdem holdem 7600000 20 20
    sleep 1
    MUST_HOLD=0 kill_in_pause game-1 1000 0.1 "buy-ins" game-3
    # (b) Mid-play on the server holding more: settlements, marks, top-ups, cash-outs.
    sleep 3
    if [ "$(held_of game-2)" -ge "$(held_of game-3)" ]; then v=game-2 s=game-3; else v=game-3 s=game-2; fi
    kill_in_pause "$v" 1500 0.5 "settlements" game-4
    bots_check 1
    # (c) The exit flush of the one left with the players: SIGTERM, then SIGKILL while its
    # closing cash-outs wait.
    if [ "$(held_of "$s")" -ge "$(held_of game-4)" ]; then v=$s s=game-4; else v=game-4; fi
    SIGNAL_FIRST=TERM kill_in_pause "$v" 1500 0.5 "its exit flush"
    for p in gate-a gate-b "$s"; do e2e_pod_terminate "$p"; done
    money_check "$sum0"
    ;;
failover | failover-stop)
    # A master and two replicas, three sentinels (quorum 2, down-after 1000 ms); from here on
    # every look at Redis goes to whichever node is the master (tests/e2e/lib.sh).
    e2e_ha_start
    # kill_master: SIGKILLs (or SIGSTOPs) the master, waits for the promotion, brings the dead
    # node back (empty, as a replaced node does) as a replica of the new master.
    kill_master() {
        local old new t0
        old=$(e2e_ha_master_port)
        t0=$(now_ms)
        if [ "$FAULT" = failover-stop ]; then
            kill -STOP "${E2E_HA_PID[$old]}"
            e2e_log "failover: master (port $old) SIGSTOPped"
        else
            kill -KILL "${E2E_HA_PID[$old]}"
            e2e_log "failover: master (port $old) SIGKILLed"
        fi
        new=$(e2e_ha_wait_promoted "$old")
        check "a replica was promoted after port $old died ($(($(now_ms) - t0)) ms, port $new)" test -n "$new"
        [ -n "$new" ] || return
        # The node comes back only once every sentinel has ended the failover, and counts again
        # once the sentinels see it among the replicas.
        e2e_ha_wait_settled "$new"
        if [ "$FAULT" = failover-stop ]; then
            sleep $((10 - ($(now_ms) - t0) / 1000))
            kill -CONT "${E2E_HA_PID[$old]}"
            e2e_log "failover: port $old resumed after 10 s"
            demoted() { [ "$(redis-cli -p "$old" role 2>/dev/null | head -1)" = slave ]; }
            for _ in $(seq 1 150); do demoted && break; sleep 0.1; done
            check "the resumed port $old was demoted to a replica" demoted
            e2e_ha_wait_all 15
            e2e_log "failover: port $old a replica of port $new ($(($(now_ms) - t0)) ms after the stop)"
            return
        fi
        e2e_ha_node_start "$old" "$new"
        e2e_ha_wait_all 15
        e2e_log "failover: port $old back as a replica of port $new ($(($(now_ms) - t0)) ms after the kill)"
    }
    e2e_redis set '{croupier:money}:wallet:house-traditional' 100000000 >/dev/null
    # --redis-min-replicas 1, the default with sentinels: Sentinel may promote the replica that
    # lacks the newest acknowledged writes, and the settlement writer's replay journal puts them
    # back (docs/deploy.md "Failover and durability", Sizing); handoffs wait for both replicas.
    # MIN_REPLICAS=2 runs it as the prod overlay does.
    HA=(--redis-sentinels "$E2E_HA_SENTINELS" --redis-master croupier)
    GAME_HA=("${HA[@]}" --redis-min-replicas "${MIN_REPLICAS:-1}")
    TTL=6000 GRACE=12000 # a lease outlives a failover (down-after 1000 ms + the election)
    ENGINES="test holdem persistent traditional zhajinhua"
    for e in $ENGINES; do game_pod "game-$e" "$e" "${GAME_HA[@]}"; done
    for _ in $(seq 1 100); do
        [ "$(e2e_redis exists '{croupier:money}:wallet:house.persistent')" = 1 ] && break
        sleep 0.1
    done
    e2e_gate_start gate-a "${HA[@]}"
    e2e_gate_start gate-b "${HA[@]}"
    e2e_seed_wallets 7000000 16 1000000
    for base in 7100000 7200000 7300000 7400000; do e2e_seed_wallets $base 12 1000000; done
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    play=26
    [ "$FAULT" = failover-stop ] && play=40
    bots_start test traditional 7000000 16 $play
    bots_start holdem holdem 7100000 12 $play
    bots_start blackjack persistent 7200000 12 $play
    bots_start doudizhu traditional 7300000 12 $play
    bots_start zhajinhua game 7400000 12 $play
    sleep 6
    kill_master
    sleep 4
    kill_master
    bots_check 0
    for g in test holdem blackjack doudizhu zhajinhua; do # which rounds, if any, went missing
        awk '$2 == "finished" { print $1 }' "$E2E_DIR/rounds-$g.txt" | sort -u | while read -r id; do
            [ "$(e2e_redis exists "{croupier:money}:round:$id")" = 1 ] || echo "$g $id"
        done
    done >"$E2E_DIR/missing.txt"
    for e in $ENGINES; do
        read -r slot epoch <<<"$(e2e_lease_of "game-$e")"
        check "game-$e stayed up through both failovers" e2e_alive "${POD_PID[game-$e]}" ||
            e2e_fail_detail "${POD_LOG[game-$e]}" '' 3
        check "game-$e kept its slot and epoch ($slot:$epoch): one acquisition, never lost" \
            test "$(grep -c '"lease_acquired"' "${POD_LOG[game-$e]}"):$(grep -c '"lease_lost"' "${POD_LOG[game-$e]}")" = 1:0
        check "game-$e: no settlement refused" bash -c "! grep -q 'tk_settlement_failed\|MONEY_STALE_EPOCH' '${POD_LOG[game-$e]}'"
    done
    for p in gate-a gate-b; do check "$p stayed up" e2e_alive "${POD_PID[$p]}"; done
    # what the journals applied again on a promoted replica (money_writer_replayed's count)
    replayed=0
    for e in $ENGINES; do
        n=$(grep '"event":"money_writer_replayed"' "${POD_LOG[game-$e]}" |
            grep -o '"count":[0-9]*' | awk -F: '{ s += $2 } END { print s + 0 }')
        replayed=$((replayed + ${n:-0}))
    done
    e2e_log "info: the replay journals applied $replayed operations again after the failovers"
    for p in gate-a gate-b; do e2e_pod_terminate "$p"; done
    for e in $ENGINES; do e2e_pod_terminate "game-$e"; done
    money_check "$sum0"
    ;;
partition)
    if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! ip netns add "croupier-probe-$$" 2>/dev/null; then
        echo "crash_faults_partition: SKIP: cutting one server's Redis traffic needs root and ip netns (iproute2)" >&2
        exit 77
    fi
    ip netns del "croupier-probe-$$"
    NS=croupier-part-$$ VA=cpa$$ VB=cpb$$ n=$(($$ % 200 + 20))
    A_HOST=10.231.$n.1 A_NS=10.231.$n.2 B_HOST=10.232.$n.1
    net_cleanup() {
        ip netns del "$NS" 2>/dev/null
        ip link del "$VA" 2>/dev/null
        ip link del "$VB" 2>/dev/null
    }
    ip netns add "$NS" || e2e_die "ip netns add $NS"
    for v in "$VA" "$VB"; do
        ip link add "$v" type veth peer name "${v}n" && ip link set "${v}n" netns "$NS" ||
            e2e_die "veth $v"
    done
    ip addr add "$A_HOST/30" dev "$VA" && ip addr add "$B_HOST/30" dev "$VB" &&
        ip link set "$VA" up && ip link set "$VB" up &&
        ip -n "$NS" addr add "$A_NS/30" dev "${VA}n" &&
        ip -n "$NS" addr add "10.232.$n.2/30" dev "${VB}n" &&
        ip -n "$NS" link set "${VA}n" up && ip -n "$NS" link set "${VB}n" up &&
        ip -n "$NS" link set lo up || e2e_die "could not set up the namespace's links"
    E2E_REDIS_BIND=$B_HOST e2e_redis_start
    e2e_redis set '{croupier:money}:wallet:house-traditional' 100000000 >/dev/null
    E2E_GAME_NETNS=$NS E2E_GAME_HOST=$A_NS E2E_GAME_REDIS=$B_HOST:$REDIS_PORT game_pod cut-holdem holdem
    E2E_GAME_NETNS=$NS E2E_GAME_HOST=$A_NS E2E_GAME_REDIS=$B_HOST:$REDIS_PORT game_pod cut-trad traditional
    e2e_gate_start gate-a
    e2e_gate_start gate-b
    e2e_seed_wallets 7700000 16 1000000
    e2e_seed_wallets 7800000 12 1000000
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    bots_start holdem holdem 7700000 16 40
    bots_start doudizhu traditional 7800000 12 40
    # The bots sit down at the cut-off servers (the only ones yet); then the others start.
    sleep 5
    game_pod out-holdem holdem
    game_pod out-trad traditional
    sleep 3
    declare -A SLOT EPOCH
    for v in cut-holdem cut-trad; do
        read -r SLOT[$v] EPOCH[$v] <<<"$(e2e_lease_of "$v")"
    done
    held=$(($(e2e_redis hlen "{croupier:money}:held:holdem:${SLOT[cut-holdem]}:${EPOCH[cut-holdem]}") +
        $(e2e_redis hlen "{croupier:money}:held:traditional:${SLOT[cut-trad]}:${EPOCH[cut-trad]}")))
    check "the cut-off servers hold seats when the link goes ($held held records)" test "$held" -gt 0
    ip link set "$VB" down
    t_cut=$(now_ms)
    e2e_log "the namespace's Redis link is down (lease TTL $TTL ms, recovery grace $GRACE ms)"
    sleep $((3 * TTL / 1000))
    ip link set "$VB" up
    e2e_log "the link is back after $(($(now_ms) - t_cut)) ms"
    for v in cut-holdem cut-trad; do
        svc=${v#cut-}
        [ "$svc" = trad ] && svc=traditional
        fenced_ts=$(grep -m1 '"event":"self_fenced"' "${POD_LOG[$v]}" | sed -n 's/.*"ts":"\([^"]*\)".*/\1/p')
        rec_ts=$(grep -h "\"money_recovered\".*\"slot\":${SLOT[$v]},\"epoch\":${EPOCH[$v]},.*\"status\":0" \
            "${POD_LOG[out-holdem]}" "${POD_LOG[out-trad]}" | head -1 | sed -n 's/.*"ts":"\([^"]*\)".*/\1/p')
        check "$v fenced itself (self_fenced at ${fenced_ts:-never})" test -n "$fenced_ts"
        check "$v's chips were returned by a sweeper outside (at ${rec_ts:-never})" test -n "$rec_ts"
        check "$v stopped its tables before they were (${fenced_ts:-?} < ${rec_ts:-?})" \
            test -n "$fenced_ts" -a -n "$rec_ts" -a "$fenced_ts" \< "$rec_ts"
        check "$v told its players their table closed" \
            grep -q '"event":"tk_fenced"' "${POD_LOG[$v]}"
        st=0
        for _ in $(seq 1 150); do e2e_alive "${POD_PID[$v]}" || break; sleep 0.1; done
        wait "${POD_PID[$v]}" || st=$?
        check "$v found its lease lost once the link was back and exited (status $st)" test "$st" -eq 3
        check "nothing of $v's epoch is held again" \
            test "$(e2e_redis exists "{croupier:money}:held:$svc:${SLOT[$v]}:${EPOCH[$v]}")" = 0
    done
    bots_check 1
    for g in holdem doudizhu; do
        # The rounds a fence left to Redis (no RoundEnd came): settled (applied before the
        # link went), voided by the recovery (their start had reached Redis), or neither (they
        # began after the link went: nothing of them reached Redis, nothing moved -- the
        # accounting below proves it). Counted, as the demo does.
        awk '$2 == "crash_voided" { print $1, "unseen" }' "$E2E_DIR/rounds-$g.txt" >"$E2E_DIR/fenced-$g.txt"
        read -r nf none <<<"$(e2e_unseen_check "$E2E_DIR/fenced-$g.txt")"
        e2e_log "info: $g: $nf rounds left to Redis by a fence, $none of them never reached it"
    done
    for p in gate-a gate-b out-holdem out-trad; do e2e_pod_terminate "$p"; done
    money_check "$sum0"
    ;;
clock)
    FT=$(dpkg -L libfaketime 2>/dev/null | grep '/libfaketimeMT\.so\.1$' | head -1)
    if [ -z "$FT" ] || [ ! -f "$FT" ]; then
        echo "crash_faults_clock: SKIP: libfaketime is not installed (Debian package faketime; ./dev installs it)" >&2
        exit 77
    fi
    # Each faked process reads its offset from its own file, again every second.
    echo "+0" >"$E2E_DIR/clock-game"
    echo "+0" >"$E2E_DIR/clock-gate"
    faked() { # FILE: the environment of a process whose wall clock FILE sets
        echo LD_PRELOAD="$FT" FAKETIME_TIMESTAMP_FILE="$1" FAKETIME_CACHE_DURATION=1 \
            FAKETIME_DONT_FAKE_MONOTONIC=1
    }
    e2e_redis_start
    env $(faked "$E2E_DIR/clock-game") true || e2e_die "libfaketime does not load"
    export $(faked "$E2E_DIR/clock-game")
    game_pod game-stepped holdem
    export $(faked "$E2E_DIR/clock-gate")
    e2e_gate_start gate-a
    unset LD_PRELOAD FAKETIME_TIMESTAMP_FILE FAKETIME_CACHE_DURATION FAKETIME_DONT_FAKE_MONOTONIC
    e2e_gate_start gate-b
    e2e_seed_wallets 7900000 16 1000000
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    bots_start holdem holdem 7900000 16 24
    # The bots sit down at the stepped server (the only one yet); then a steady one starts.
    sleep 4
    game_pod game-steady holdem
    sleep 1
    echo "+10m" >"$E2E_DIR/clock-game"
    echo "-10m" >"$E2E_DIR/clock-gate"
    e2e_log "wall clocks stepped: game-stepped +10 min, gate-a -10 min"
    sleep 7
    # the lobby's index is scored on Redis's clock (lease/lobby.h): no ad 10 minutes off
    read -r nads off <<<"$(python3 - "$REDIS_PORT" <<'EOF'
import subprocess, sys
cli = ["redis-cli", "-p", sys.argv[1]]
t = subprocess.run(cli + ["TIME"], capture_output=True, text=True).stdout.split()
now = int(t[0]) * 1000 + int(t[1]) // 1000
out = subprocess.run(cli + ["ZRANGE", "{croupier:lobby}:ads", "0", "-1", "WITHSCORES"],
                     capture_output=True, text=True).stdout.split()
scores = [float(x) for x in out[1::2]]
print(len(scores), sum(1 for s in scores if not (now - 60000 <= s <= now + 60000)))
EOF
)"
    check "no lobby ad is scored off Redis's clock ($off of $nads)" test "$off" -eq 0
    echo "-10m" >"$E2E_DIR/clock-game"
    echo "+10m" >"$E2E_DIR/clock-gate"
    e2e_log "wall clocks stepped: game-stepped -10 min, gate-a +10 min"
    sleep 7
    ts=$(e2e_get "${POD_HEALTH[game-stepped]}/metrics" | grep -c . )
    check "game-stepped still answers /metrics ($ts lines)" test "$ts" -gt 0
    bots_check 0
    for p in game-stepped game-steady; do
        check "$p kept its lease (no self-fence, no loss)" \
            bash -c "! grep -q '\"self_fenced\"\|\"lease_lost\"\|\"lease_unconfirmed\"' '${POD_LOG[$p]}'"
        n=$(e2e_get "${POD_HEALTH[$p]}/metrics" | awk '$1 == "game_rpc_deadline_exceeded_total" { print $2 }')
        check "$p: no request expired (${n:-?})" test "${n:-1}" = 0
    done
    n=$(e2e_get "${POD_HEALTH[game-stepped]}/metrics" | awk '$1 == "game_rpc_clock_skew_total" { print $2 }')
    check "game-stepped saw the gateways' wall clocks disagree and kept to the budgets (${n:-?} requests)" \
        test "${n:-0}" -gt 0
    # the faked clock is really faked: the stepped server's log lines are 10 minutes off
    span=$(python3 - "${POD_LOG[game-stepped]}" <<'EOF'
import datetime, json, sys
ts = []
for line in open(sys.argv[1]):
    if line.startswith('{'):
        try:
            ts.append(datetime.datetime.fromisoformat(json.loads(line)["ts"].rstrip("Z")))
        except (ValueError, KeyError):
            pass
print(int((max(ts) - min(ts)).total_seconds()) if ts else 0)
EOF
)
    check "game-stepped's own clock stepped (its log spans $span s of wall time)" test "$span" -gt 300
    for p in gate-a gate-b game-stepped game-steady; do e2e_pod_terminate "$p"; done
    money_check "$sum0"
    ;;
evict)
    e2e_redis_start
    game_pod game-holdem holdem
    game_pod game-trad traditional
    e2e_gate_start gate-a
    e2e_gate_start gate-b
    e2e_seed_wallets 8000000 12 1000000
    e2e_seed_wallets 8100000 12 1000000
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    bots_start holdem holdem 8000000 12 30
    bots_start doudizhu traditional 8100000 12 30
    sleep 6
    rounds() { # the settle records so far
        e2e_redis --scan --pattern '{croupier:money}:round:*' | wc -l
    }
    e2e_redis config set maxmemory-policy allkeys-lru >/dev/null
    t0=$(now_ms)
    e2e_log "Redis's maxmemory-policy set to allkeys-lru"
    unready=""
    for _ in $(seq 1 50); do
        unready=""
        for p in game-holdem game-trad gate-a gate-b; do
            e2e_get "${POD_HEALTH[$p]}/readyz" 1 >/dev/null || unready="$unready $p"
        done
        [ "$unready" = " game-holdem game-trad gate-a gate-b" ] && break
        sleep 0.1
    done
    check "every server and gateway unready within 5 s ($((($(now_ms) - t0))) ms:$unready)" \
        test "$unready" = " game-holdem game-trad gate-a gate-b"
    for p in game-holdem game-trad; do
        check "$p logged the policy" grep -q '"redis_eviction_policy".*allkeys-lru' "${POD_LOG[$p]}"
    done
    st=0
    "$BUILD/engine/process/croupier-game" --engine holdem --listen 127.0.0.1:0 \
        --health-listen 127.0.0.1:0 --redis "127.0.0.1:$REDIS_PORT" >"$E2E_DIR/refused.log" 2>&1 || st=$?
    check "a server started on the evicting Redis is refused (status $st)" test "$st" -eq 2
    # No round starts: the rounds under way end (a Dou Dizhu deal of bots takes seconds, more
    # on a loaded machine) and then no desk of either server is in a round (game_human_desks 0,
    # drain/drain.h) -- while rounds still started, bots would keep desks busy -- for 3 s.
    busy() { # the desks in a round with a human, on both servers
        local p n t=0
        for p in game-holdem game-trad; do
            n=$(e2e_get "${POD_HEALTH[$p]}/metrics" | awk '$1 == "game_human_desks" { print $2 }')
            t=$((t + ${n:-1}))
        done
        echo "$t"
    }
    idle=0
    for _ in $(seq 1 60); do
        if [ "$(busy)" -eq 0 ]; then idle=$((idle + 1)); else idle=0; fi
        [ "$idle" -ge 6 ] && break
        sleep 0.5
    done
    r2=$(rounds)
    check "no round starts while Redis may evict (no desk in a round for ${idle}x0.5 s)" \
        test "$idle" -ge 6
    e2e_redis config set maxmemory-policy noeviction >/dev/null
    e2e_log "Redis's maxmemory-policy back to noeviction"
    for p in game-holdem game-trad gate-a gate-b; do
        check "$p ready again" e2e_wait_ready "${POD_HEALTH[$p]}" 10
    done
    r3=$r2
    for _ in $(seq 1 40); do # a new settle record within 20 s (a loaded machine's deals are slow)
        r3=$(rounds)
        [ "$r3" -gt "$r2" ] && break
        sleep 0.5
    done
    check "rounds settle again ($r2 -> $r3)" test "$r3" -gt "$r2"
    bots_check 0
    for p in gate-a gate-b game-holdem game-trad; do e2e_pod_terminate "$p"; done
    money_check "$sum0"
    ;;
freeze-gate)
    FREEZE_S=${FREEZE_S:-30}
    e2e_redis_start
    game_pod game-holdem holdem
    game_pod game-zhajinhua zhajinhua
    e2e_gate_start gate-a
    e2e_gate_start gate-b
    e2e_seed_wallets 7700000 12 1000000
    e2e_seed_wallets 7800000 12 1000000
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    play=$((FREEZE_S + 22))
    bots_start holdem holdem 7700000 12 $play
    bots_start zhajinhua game 7800000 12 $play
    sleep 8
    # the bots' connections to a gateway (its client port as their destination)
    conns_to() { ss -Htn state established "( dport = :${POD_PORT[$1]} )" | wc -l; }
    on_a=$(conns_to gate-a)
    check "bots play through gate-a before the freeze ($on_a connections)" test "$on_a" -gt 0
    kill -STOP "${POD_PID[gate-a]}"
    t0=$(now_ms)
    e2e_log "gate-a frozen (SIGSTOP) with $on_a bot connections, for $FREEZE_S s"
    # The bound: the bots' keepalive (idle 3000 + timeout 5000 + two sweeps of 750 ms; docs/
    # bots.md) plus slack for a loaded machine. Looked at until the thaw.
    # settle records of a game so far (round ids begin with the service, the engine's name)
    settled() { e2e_redis --scan --pattern "{croupier:money}:round:$1:*" | wc -l; }
    left_ms=-1
    declare -A SET0
    while [ $(($(now_ms) - t0)) -lt $((FREEZE_S * 1000)) ]; do
        if [ "$left_ms" -lt 0 ] && [ "$(conns_to gate-a)" -eq 0 ]; then
            left_ms=$(($(now_ms) - t0))
            e2e_log "every bot left the frozen gate-a $left_ms ms after the freeze"
            for g in holdem zhajinhua; do SET0[$g]=$(settled "$g"); done
        fi
        sleep 0.25
    done
    # Play goes on through the other gateway while this one is still frozen.
    for g in holdem zhajinhua; do
        n=$(settled "$g")
        check "$g rounds settled while gate-a was still frozen (${SET0[$g]:-?} -> $n)" \
            test "$n" -gt "${SET0[$g]:-999999}"
    done
    check "every bot left the frozen gateway within 15 s ($left_ms ms)" \
        test "$left_ms" -ge 0 -a "$left_ms" -le 15000
    for g in game-holdem game-zhajinhua; do
        check "$g dropped the frozen gateway's silent link" grep -q '"rpc_link_silent"' "${POD_LOG[$g]}"
    done
    # The connections that hold bytes gate-a has not read (Recv-Q > 0: a probe, an action). Not
    # every one of the $on_a: a bot whose probe gate-a read just before the SIGSTOP sent nothing
    # more, and its connection holds only the FIN, an ordinary end of stream after the thaw.
    waiting=$(ss -Htn "( sport = :${POD_PORT[gate-a]} )" | awk '$2 > 0' | wc -l)
    e2e_log "$waiting of gate-a's sockets hold unread bytes at the thaw"
    check "the bots wrote to the frozen gate-a ($waiting sockets with unread bytes)" test "$waiting" -gt 0
    kill -CONT "${POD_PID[gate-a]}"
    e2e_log "gate-a resumed (SIGCONT) after $(($(now_ms) - t0)) ms"
    check "gate-a serves again after the freeze (/readyz)" e2e_wait_ready "${POD_HEALTH[gate-a]}" 10
    # What the bots had sent it meanwhile is stale (they resumed elsewhere): closed unread.
    for _ in $(seq 1 50); do grep -q '"gate_stalled"' "${POD_LOG[gate-a]}" && break; sleep 0.1; done
    stalled=$(grep -h '"gate_stalled"' "${POD_LOG[gate-a]}" | tail -n 1 |
        sed -n 's/.*"connections_closed":\([0-9]*\).*/\1/p')
    check "gate-a closed unread every connection whose bytes waited through the stall (${stalled:-none} of $waiting)" \
        test "${stalled:-0}" -ge "$waiting"
    bots_check 0
    silent=0
    for g in holdem zhajinhua; do
        n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"]["gateway_silent"])' \
            "$E2E_DIR/report-$g.json" 2>/dev/null || echo 0)
        silent=$((silent + n))
    done
    check "the bots counted the silent gateway ($silent gateway_silent, $on_a were on it)" \
        test "$silent" -ge "$on_a"
    slowest=$(grep -ho '"bot_gateway_silent".*"silent_ms":[0-9]*' "$E2E_DIR"/bot-*.log |
        sed 's/.*"silent_ms"://' | sort -n | tail -n 1)
    check "each bot took the gateway for silent within its keepalive bound (slowest ${slowest:-none} ms)" \
        test "${slowest:-99999}" -le 11000
    for p in gate-a gate-b game-holdem game-zhajinhua; do e2e_pod_terminate "$p"; done
    money_check "$sum0"
    ;;
freeze-game | freeze-game-short)
    FREEZE_MS=$((${FREEZE_S:-30} * 1000))
    if [ "$FAULT" = freeze-game-short ]; then
        # Shorter than a lease survives: TTL 12 s, re-armed every 4 s, so a 4.5 s freeze never
        # loses the registry entry, while every link fails (no pong for over 3 pings, checked
        # every 1000 ms: within 4 s). The attempts of one bot request (1500 ms budget each) must
        # outlast the freeze and the links' reconnect (docs/bots.md): 7 of them.
        FREEZE_MS=4500 TTL=12000 GRACE=24000
        BOT_ARGS=(--max-retries 6)
    fi
    e2e_redis_start
    for g in holdem zhajinhua; do
        game_pod "$g-1" "$g" --service "$g" --lease-pool-size 2
        game_pod "$g-2" "$g" --service "$g" --lease-pool-size 2
    done
    e2e_gate_start gate-a
    e2e_gate_start gate-b
    e2e_seed_wallets 7700000 12 1000000
    e2e_seed_wallets 7800000 12 1000000
    sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
    play=$((FREEZE_MS / 1000 + 22))
    bots_start holdem holdem 7700000 12 $play
    bots_start zhajinhua game 7800000 12 $play
    sleep 8
    # the victim of each game: the server holding more seats
    declare -A VICTIM SLOT EPOCH
    for g in holdem zhajinhua; do
        read -r s1 e1 <<<"$(e2e_lease_of "$g-1")"
        read -r s2 e2 <<<"$(e2e_lease_of "$g-2")"
        VICTIM[$g]=$g-1 SLOT[$g]=$s1 EPOCH[$g]=$e1
        if [ "$(e2e_redis hlen "{croupier:money}:held:$g:$s2:$e2")" -gt "$(e2e_redis hlen "{croupier:money}:held:$g:$s1:$e1")" ]; then
            VICTIM[$g]=$g-2 SLOT[$g]=$s2 EPOCH[$g]=$e2
        fi
        check "${VICTIM[$g]} holds chips before the freeze" \
            test "$(e2e_redis hlen "{croupier:money}:held:$g:${SLOT[$g]}:${EPOCH[$g]}")" -gt 0
    done
    for g in holdem zhajinhua; do kill -STOP "${POD_PID[${VICTIM[$g]}]}"; done
    t0=$(now_ms)
    e2e_log "${VICTIM[holdem]} and ${VICTIM[zhajinhua]} frozen (SIGSTOP) for $FREEZE_MS ms"
    # Each gateway finds each frozen server gone once its registry entry expires (the lease TTL,
    # $TTL ms here), then moves its players; looked at until the thaw.
    declare -A GONE_MS=() SET0=()
    settled() { e2e_redis --scan --pattern "{croupier:money}:round:$1:*" | wc -l; }
    while [ $(($(now_ms) - t0)) -lt "$FREEZE_MS" ]; do
        for g in holdem zhajinhua; do
            for gw in gate-a gate-b; do
                [ -n "${GONE_MS[$g$gw]:-}" ] && continue
                if grep -F '"event":"server_gone"' "${POD_LOG[$gw]}" |
                    grep -qF "\"address\":\"127.0.0.1:${POD_PORT[${VICTIM[$g]}]}\""; then
                    GONE_MS[$g$gw]=$(($(now_ms) - t0))
                    e2e_log "$gw: ${VICTIM[$g]} gone ${GONE_MS[$g$gw]} ms after the freeze"
                fi
            done
        done
        if [ ${#GONE_MS[@]} -eq 4 ] && [ ${#SET0[@]} -eq 0 ]; then
            sleep 2 # the moves
            for g in holdem zhajinhua; do SET0[$g]=$(settled "$g"); done
        fi
        sleep 0.25
    done
    if [ "$FAULT" = freeze-game ]; then
        # The moved players play on at the other servers while the victims are still frozen.
        for g in holdem zhajinhua; do
            n=$(settled "$g")
            check "$g rounds settled while ${VICTIM[$g]} was still frozen (${SET0[$g]:-?} -> $n)" \
                test "$n" -gt "${SET0[$g]:-999999}"
        done
    fi
    if [ "$FAULT" = freeze-game-short ]; then
        # docs/gateway.md "When a game server freezes": resumed, the same process under the
        # same epoch; its seats stay and its players play on there.
        for g in holdem zhajinhua; do kill -CONT "${POD_PID[${VICTIM[$g]}]}"; done
        e2e_log "frozen servers resumed (SIGCONT) after $(($(now_ms) - t0)) ms"
        sleep 8 # play on
        for g in holdem zhajinhua; do
            v=${VICTIM[$g]}
            check "no gateway took the briefly frozen $v for gone" \
                test -z "${GONE_MS[${g}gate-a]:-}${GONE_MS[${g}gate-b]:-}"
            check "$v stayed up and kept its lease" \
                bash -c "kill -0 ${POD_PID[$v]} && ! grep -q '\"lease_lost\"' '${POD_LOG[$v]}'"
            for gw in gate-a gate-b; do
                check "$gw lost its link to $v and found the same process again" \
                    bash -c "grep -F '\"rpc_link_down\"' '${POD_LOG[$gw]}' | grep -qF '127.0.0.1:${POD_PORT[$v]}' &&
                        grep -F '\"rpc_link_ready\"' '${POD_LOG[$gw]}' | grep -F '127.0.0.1:${POD_PORT[$v]}' |
                        grep -qF '\"same_process\":true'"
            done
        done
        bots_check 0
        for g in holdem zhajinhua; do
            n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"]["crash_closings"])' \
                "$E2E_DIR/report-$g.json" 2>/dev/null || echo 0)
            check "$g: nobody was told a table closed ($n crash_closings)" test "$n" -eq 0
        done
        for g in holdem zhajinhua; do for n in "$g-1" "$g-2"; do e2e_pod_terminate "$n"; done; done
        for p in gate-a gate-b; do e2e_pod_terminate "$p"; done
        money_check "$sum0"
    else
        for g in holdem zhajinhua; do
            for gw in gate-a gate-b; do
                check "$gw found the frozen ${VICTIM[$g]} gone within 10 s (${GONE_MS[$g$gw]:-never} ms)" \
                    test "${GONE_MS[$g$gw]:-99999}" -le 10000
            done
            check "the sweeper returned the frozen ${VICTIM[$g]}'s chips" \
                e2e_wait_unheld "$g:${SLOT[$g]}:${EPOCH[$g]}" 1
            seats=$(e2e_redis --scan --pattern '{croupier:seat}:*' | sed 's/^/GET /' | e2e_redis |
                grep -c " 127.0.0.1:${POD_PORT[${VICTIM[$g]}]} " || true)
            check "no seat record names the frozen ${VICTIM[$g]} ($seats)" test "$seats" -eq 0
        done
        before=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
        for g in holdem zhajinhua; do kill -CONT "${POD_PID[${VICTIM[$g]}]}"; done
        e2e_log "frozen servers resumed (SIGCONT) after $(($(now_ms) - t0)) ms"
        for g in holdem zhajinhua; do
            v=${VICTIM[$g]} st=0
            for _ in $(seq 1 100); do e2e_alive "${POD_PID[$v]}" || break; sleep 0.1; done
            e2e_alive "${POD_PID[$v]}" && kill -KILL "${POD_PID[$v]}" # (then its status says so)
            wait "${POD_PID[$v]}" || st=$?
            check "the resumed $v found its lease lost and exited (status $st)" test "$st" -eq 3
            check "nothing of $v's epoch is held again" \
                test "$(e2e_redis exists "{croupier:money}:held:$g:${SLOT[$g]}:${EPOCH[$g]}")" = 0
        done
        bots_check 1
        for g in holdem zhajinhua; do
            n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"]["crash_closings"])' \
                "$E2E_DIR/report-$g.json" 2>/dev/null || echo 0)
            check "$g: the bots were told their frozen table closed ($n crash_closings)" test "$n" -gt 0
        done
        after=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
        e2e_log "wallets + rake: at the thaw $before, once the bots stopped $after"
        for g in holdem zhajinhua; do
            for n in "$g-1" "$g-2"; do [ "$n" = "${VICTIM[$g]}" ] || e2e_pod_terminate "$n"; done
        done
        for p in gate-a gate-b; do e2e_pod_terminate "$p"; done
        money_check "$sum0"
    fi
    ;;
*) e2e_die "unknown FAULT $FAULT" ;;
esac
for w in "${E2E_WARNINGS[@]}"; do e2e_log "warning: $w"; done
exit $fail
