#!/usr/bin/env bash
# croupier-ctl through Redis Sentinel (docs/ops.md, docs/deploy.md "Redis Sentinel"): real
# redis-server ×2 (a master and its replica) and redis-server --sentinel ×3 (quorum 2) on
# loopback, and a croupier-game that finds the master through them too.
#   * --redis-sentinels/--redis-master: servers, credit, wallet reach the master the sentinels
#     name (--redis points at nothing and is ignored);
#   * the first sentinel of the list dead: the next one answers;
#   * after a failover (SENTINEL FAILOVER) a credit lands on the promoted replica, not on the
#     demoted master, and the money is the same on both nodes once they are in sync;
#   * with the only replica stopped a credit is applied but refused as not durable (exit 1), and
#     done once the replica is back (the same command, replayed);
#   * a wrong master name, unreachable sentinels: exit 1 with one line; a flag without the
#     other, a malformed list: exit 2.
#
#   tools/ctl/test_ctl_sentinel.sh BUILD_DIR [SOURCE_DIR]   (CROUPIER_KEEP_LOGS=1 keeps the dir)
set -u
BUILD=$(cd "${1:?usage: test_ctl_sentinel.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=../../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-ctl-sentinel.XXXXXX)
FAILS=0
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ $FAILS -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
CTL=$BUILD/tools/croupier-ctl
[ -x "$CTL" ] || e2e_die "no $CTL (build first)"
command -v redis-server >/dev/null || e2e_die "redis-server is not installed"

ok() { e2e_log "ok: $1"; }
bad() {
    e2e_log "FAIL: $1"
    FAILS=$((FAILS + 1))
}
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then ok "$1"; else bad "$1"; fi
}
MASTER=croupier
# ctl ARGS...: croupier-ctl through the sentinels ($SENTINELS); --redis names a dead port.
ctl() {
    OUT=$("$CTL" --redis "127.0.0.1:$DEAD" --redis-sentinels "$SENTINELS" --redis-master "$MASTER" \
        "$@" 2>"$E2E_DIR/ctl.err")
    RC=$?
    ERR=$(cat "$E2E_DIR/ctl.err")
}
# expect STATUS DESCRIPTION CTL_ARGS...: croupier-ctl (no flags added) must exit with STATUS,
# saying why on stderr unless it is 0.
expect() {
    local want=$1 what=$2
    shift 2
    OUT=$("$CTL" "$@" 2>"$E2E_DIR/ctl.err")
    RC=$?
    ERR=$(cat "$E2E_DIR/ctl.err")
    if [ "$RC" -eq "$want" ] && { [ "$want" -eq 0 ] || [ -n "$ERR" ]; }; then
        ok "$what (exit $RC${ERR:+: $ERR})"
    else
        bad "$what: exit $RC, wanted $want (stdout: $OUT; stderr: $ERR)"
    fi
}
j() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print($1)" "$OUT"; }
rcli() { redis-cli -p "$1" "${@:2}"; }

# redis_node NAME PORT [redis-server flags]: one data node.
redis_node() {
    mkdir -p "$E2E_DIR/$1"
    redis-server --port "$2" --bind 127.0.0.1 --save '' --appendonly no --dir "$E2E_DIR/$1" \
        "${@:3}" >>"$E2E_DIR/$1.log" 2>&1 &
    E2E_PIDS+=($!)
    echo $! >"$E2E_DIR/$1.pid"
    local i
    for i in $(seq 1 50); do
        rcli "$2" ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    e2e_die "redis-server $1 did not start (log $E2E_DIR/$1.log)"
}
M=$(e2e_free_port)
REP=$(e2e_free_port)
DEAD=$(e2e_free_port)
redis_node master "$M"
redis_node replica "$REP" --replicaof 127.0.0.1 "$M"
declare -a SPORT SPID
for i in 0 1 2; do
    SPORT[i]=$(e2e_free_port)
    mkdir -p "$E2E_DIR/s$i"
    cat >"$E2E_DIR/s$i/sentinel.conf" <<EOF
port ${SPORT[i]}
bind 127.0.0.1
dir $E2E_DIR/s$i
sentinel monitor $MASTER 127.0.0.1 $M 2
sentinel down-after-milliseconds $MASTER 1000
sentinel failover-timeout $MASTER 3000
sentinel parallel-syncs $MASTER 1
EOF
    redis-server "$E2E_DIR/s$i/sentinel.conf" --sentinel >>"$E2E_DIR/s$i.log" 2>&1 &
    SPID[i]=$!
    E2E_PIDS+=($!)
done
# the sentinels must know the replica and each other before a failover can be asked for
for _ in $(seq 1 150); do
    seen=0
    for i in 0 1 2; do
        info=$(rcli "${SPORT[i]}" sentinel master $MASTER 2>/dev/null | tr '\n' ' ')
        [[ "$info" == *"num-slaves 1 "* && "$info" == *"num-other-sentinels 2 "* ]] && seen=$((seen + 1))
    done
    [ $seen = 3 ] && break
    sleep 0.2
done
[ $seen = 3 ] || e2e_die "the sentinels never saw the replica and each other (logs $E2E_DIR/s*.log)"
SENTINELS="127.0.0.1:${SPORT[0]},127.0.0.1:${SPORT[1]},127.0.0.1:${SPORT[2]}"
e2e_log "master $M, replica $REP, sentinels $SENTINELS"

# ---- a game server and croupier-ctl find the master through the sentinels -------------------
# shellcheck disable=SC2034 # read by e2e_game_start (tests/e2e/lib.sh)
REDIS_PORT=$DEAD # e2e_game_start passes --redis 127.0.0.1:$REDIS_PORT: nothing listens there
e2e_game_start plain test 10 --redis-sentinels "$SENTINELS" --redis-master $MASTER
ctl servers --json
check "servers through the sentinels lists the game server (exit $RC: $ERR)" \
    test "$RC:$(j 'len(d["servers"])' 2>/dev/null)" = "0:1"
P=7100001
rcli "$M" set "{croupier:money}:wallet:$P" 1000 >/dev/null
ctl credit $P 25 --reason "sentinel test" --op-id s-1 --json
check "credit through the sentinels applied (exit $RC: $ERR)" \
    test "$RC:$(j 'd["balance_after"]' 2>/dev/null)" = "0:1025"
check "the master holds the credit and its settle record" \
    test "$(rcli "$M" get "{croupier:money}:wallet:$P") $(rcli "$M" get '{croupier:money}:round:ctl:credit:s-1')" = "1025 1025"
ctl wallet $P --json
check "wallet through the sentinels: 1025 (exit $RC: $ERR)" test "$RC:$(j 'd["balance"]' 2>/dev/null)" = "0:1025"

# ---- the first sentinel of the list is dead: the next one answers ---------------------------
kill -STOP "${SPID[0]}"
t0=$(date +%s%3N)
ctl wallet $P --json
t1=$(date +%s%3N)
check "with sentinel 1 stopped, wallet still answers (exit $RC: $ERR) in $((t1 - t0)) ms (< 3000)" \
    test "$RC:$(j 'd["balance"]' 2>/dev/null)" = "0:1025" -a $((t1 - t0)) -lt 3000
kill -CONT "${SPID[0]}"

# ---- failover: the replica is promoted, the old master demoted -------------------------------
for _ in $(seq 1 50); do
    [ "$(rcli "$REP" get "{croupier:money}:wallet:$P")" = 1025 ] && break
    sleep 0.1
done
rcli "${SPORT[1]}" sentinel failover $MASTER >/dev/null
# (up to 30 s: the sentinels' reconfiguration is slow on a loaded machine; done, it ends at once)
for _ in $(seq 1 300); do
    [ "$(rcli "$REP" role 2>/dev/null | head -n 1)" = master ] &&
        [ "$(rcli "$M" role 2>/dev/null | head -n 1)" = slave ] &&
        rcli "${SPORT[0]}" sentinel get-master-addr-by-name $MASTER | grep -qx "$REP" &&
        rcli "${SPORT[2]}" sentinel get-master-addr-by-name $MASTER | grep -qx "$REP" && break
    sleep 0.1
done
check "the sentinels promoted the replica ($REP) and demoted the master ($M)" \
    test "$(rcli "$REP" role | head -n 1) $(rcli "$M" role | head -n 1)" = "master slave"
# the demoted master resyncs from the promoted one (a few seconds): until then no credit is
# durable, croupier-ctl says so, and the operator runs the same command again
tries=0
for _ in $(seq 1 40); do
    tries=$((tries + 1))
    ctl credit $P -5 --reason "after the failover" --op-id s-2 --json
    [ "$RC" = 0 ] && break
    [[ "$ERR" == *"not durable"* ]] || break
    sleep 0.25
done
check "a debit after the failover applied and durable after $tries run(s) (exit $RC: $ERR)" \
    test "$RC:$(j 'd["balance_after"]' 2>/dev/null)" = "0:1020"
check "the promoted replica holds it" \
    test "$(rcli "$REP" get "{croupier:money}:wallet:$P") $(rcli "$REP" get '{croupier:money}:round:ctl:credit:s-2')" = "1020 1020"
for _ in $(seq 1 50); do
    [ "$(rcli "$M" get "{croupier:money}:wallet:$P")" = 1020 ] && break
    sleep 0.1
done
check "the demoted master, now a replica, has the same wallet" test "$(rcli "$M" get "{croupier:money}:wallet:$P")" = 1020
# (a replay WAITs too: a replica that is still catching up makes it "not durable", run again)
for _ in $(seq 1 40); do
    ctl credit $P 25 --reason "sentinel test" --op-id s-1 --json
    [ "$RC" = 0 ] && break
    [[ "$ERR" == *"not durable"* ]] || break
    sleep 0.25
done
check "the first credit replayed on the new master changes nothing (exit $RC: $ERR)" \
    test "$RC:$(j '(d["replayed"], d["balance_after"])' 2>/dev/null)" = "0:(True, 1025)"
check "the wallet still holds 1020" test "$(rcli "$REP" get "{croupier:money}:wallet:$P")" = 1020

# ---- durability: with sentinels a credit is done only once a replica has it ----------------
kill -STOP "$(cat "$E2E_DIR/master.pid")" # the old master, now the only replica
ctl credit $P 7 --reason "replica stopped" --op-id s-3 --redis-wait-ms 300
check "with the replica stopped, a credit is refused as not durable (exit $RC: $ERR)" \
    bash -c '[ "$1" = 1 ] && [[ "$2" == *"not durable: WAIT reached 0 of 1 replicas within 300 ms"* ]]' _ "$RC" "$ERR"
check "the new master applied it (1027): it waits for the replica, it is not lost" \
    test "$(rcli "$REP" get "{croupier:money}:wallet:$P")" = 1027
ctl credit $P 1 --reason "no wait" --op-id s-4 --redis-min-replicas 0
check "--redis-min-replicas 0 reports a credit without waiting (exit $RC: $ERR)" test "$RC" = 0
kill -CONT "$(cat "$E2E_DIR/master.pid")"
ctl credit $P 7 --reason "replica stopped" --op-id s-3 --json
check "the replica back, the same command is replayed and done (exit $RC: $ERR)" \
    test "$RC:$(j '(d["replayed"], d["balance_after"])' 2>/dev/null)" = "0:(True, 1027)"
check "the wallet holds 1028: each credit applied once" test "$(rcli "$REP" get "{croupier:money}:wallet:$P")" = 1028

# ---- refusals --------------------------------------------------------------------------------
expect 1 "a master name the sentinels do not monitor" \
    --redis-sentinels "$SENTINELS" --redis-master nosuch wallet $P
check "the refusal names the master" bash -c '[[ "$1" == *nosuch* ]]' _ "$ERR"
expect 1 "no sentinel reachable" --redis-sentinels "127.0.0.1:$DEAD" --redis-master $MASTER servers
expect 2 "--redis-sentinels without --redis-master" --redis-sentinels "$SENTINELS" servers
expect 2 "--redis-master without --redis-sentinels" --redis-master $MASTER servers
expect 2 "a malformed sentinel list" --redis-sentinels "127.0.0.1:x,," --redis-master $MASTER servers

e2e_pod_terminate plain || bad "pod plain did not exit cleanly"
[ $FAILS -eq 0 ] || e2e_log "$FAILS check(s) failed; work dir $E2E_DIR"
[ $FAILS -eq 0 ]
