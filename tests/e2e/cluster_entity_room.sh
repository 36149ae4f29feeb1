#!/usr/bin/env bash
# Integration test (issue 34): private rooms with the money by entity on a Redis Cluster
# (croupier-game --money-by-entity, EXPERIMENTAL; docs/queues.md "Private rooms by entity").
# A real cluster of 3 masters and 1 replica each on loopback, one Dou Dizhu server
# (--engine traditional) and one gateway, both with --money-by-entity; six croupier-bot players
# in two groups of three (--room-seats 3 --room-deals 4: the first of a group creates a room
# through the gateway, the others join it by its code, the gateway reading the record to route
# the joins) for BOT_SECONDS (20): rooms one after the other. Once a room has played a deal,
# game-b starts and game-a is drained: its rooms in play move whole to game-b (the adopter takes
# the record in its code's slot) and finish there. Checks: the rooms' records are at
# {r:<code>}:room, each in its code's own slot (none left in the money slot), at least one
# room ended FINISHED with its 3 deals, each deal settled in the server epoch's slot
# ({s:...}:round:<id>), GetRoom through the gateway and croupier-ctl --money-by-entity room read
# it, the room in play at the
# drain finished on game-b with its deals on two epochs, no script was refused for
# keys in two slots, and after the drain croupier-ctl audit balances with every seat account
# back at 0 and nothing in flight.
#
#   tests/e2e/cluster_entity_room.sh BUILD_DIR [SOURCE_DIR]
# With DURABLE_WAIT=1 (meson test cluster_entity_room_durable) the cluster has 2 replicas per
# master and the servers run with --redis-min-replicas 1: each room record write WAITs for a
# replica of its code's slot (tk_room_write_not_durable never logged).
# Env: BOT_SECONDS, DURABLE_WAIT, CROUPIER_KEEP_LOGS=1 keeps the work dir. Exit 77 (skip) when redis-server
# cannot run a cluster.
set -u
BUILD=$(cd "${1:?usage: cluster_entity_room.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-cluster-room.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
BOT_SECONDS=${BOT_SECONDS:-20}
BOTS=6
DEALS=4
command -v redis-server >/dev/null || { echo "cluster_entity_room: SKIP: no redis-server" >&2; exit 77; }
REPLICAS=1 DURABLE=()
[ "${DURABLE_WAIT:-0}" = 1 ] && REPLICAS=2 DURABLE=(--redis-min-replicas 1)
e2e_cluster_start 3 "$REPLICAS" || { echo "cluster_entity_room: SKIP: $E2E_CLUSTER_WHY" >&2; exit 77; }
e2e_log "cluster up: $E2E_REDIS_CLUSTER"
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}
CTL=$BUILD/tools/croupier-ctl
e2e_secret
# Deals of a few seconds: the bots think quickly, short gaps between deals.
export CROUPIER_TRAD_GAP_MS=300 CROUPIER_TRAD_TRUSTEE_MS=100

# ---- seed the bots' wallets {p:<id>}:bal (croupier-ctl --money-by-entity credit) ---------------
SEED_CHIPS=1000000
base=5400000
# shellcheck disable=SC2034 # read by e2e_seed_wallets (lib.sh)
E2E_MONEY_BY_ENTITY=1
check "seeded $BOTS wallets with croupier-ctl --money-by-entity credit" \
    e2e_seed_wallets $base "$BOTS" $SEED_CHIPS
seeded=$((BOTS * SEED_CHIPS))

# ---- play rooms -------------------------------------------------------------------------------
e2e_game_start game-a traditional 30 --games doudizhu --money-by-entity "${DURABLE[@]}"
e2e_gate_start gate-a --money-by-entity
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots "$BOTS" \
    --game doudizhu --engine traditional --stake 10 --seconds "$BOT_SECONDS" \
    --room-seats 3 --room-deals "$DEALS" --think-percent 25 \
    --player-base $base --token-secret-file "$E2E_DIR/secret" --finish-timeout-ms 30000 \
    --report "$E2E_DIR/report.json" --rounds-file "$E2E_DIR/rounds.txt" \
    >"$E2E_DIR/bot.log" 2>&1 &
bot=$!
# rooms_where PRED: the keys "PORT KEY" of the records r (on every master) for which the Python
# expression PRED holds.
rooms_where() {
    local p k
    for p in $(e2e_cluster_masters); do
        for k in $(redis-cli -p "$p" --scan --pattern '{r:*}:room'); do
            redis-cli -p "$p" get "$k" | python3 -c "import json,sys; r=json.load(sys.stdin); sys.exit(not ($1))" \
                2>/dev/null && echo "$p $k"
        done
    done
}
# The drain of a room's server: once a room has played a deal, game-b starts and game-a is
# terminated (preStop, SIGTERM): its rooms in play move whole to game-b, which takes their
# records in their codes' slots and plays their remaining deals.
playing=""
for _ in $(seq 1 300); do
    playing=$(rooms_where 'r["state"] == 2 and 1 <= r["played"] < r["deals"]' | head -n 1)
    [ -n "$playing" ] && break
    sleep 0.1
done
check "a room is in play on game-a (${playing#* })" test -n "$playing"
e2e_game_start game-b traditional 30 --games doudizhu --money-by-entity "${DURABLE[@]}"
e2e_pod_terminate game-a
check "pod game-a logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[game-a]}"
st=0
wait "$bot" || st=$?
rep=$E2E_DIR/report.json
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1" 2>/dev/null || echo -1; }
check "bot exit status 0 ($st)" test "$st" -eq 0
created=$(num 'd["counters"]["rooms_created"] if "counters" in d else d.get("rooms_created", -1)')
e2e_log "report: $(head -c 600 "$rep" 2>/dev/null)"
check "torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
check "unexpected errors = 0 ($(num 'd["unexpected_errors"]'))" test "$(num 'd["unexpected_errors"]')" -eq 0

# ---- the records: {r:<code>}:room in their codes' slots, none in the money slot --------------
: >"$E2E_DIR/rooms.txt"
for p in $(e2e_cluster_masters); do
    redis-cli -p "$p" --scan --pattern '{r:*}:room' | sed "s/^/$p /" >>"$E2E_DIR/rooms.txt"
done
nrooms=$(wc -l <"$E2E_DIR/rooms.txt")
nmasters=$(cut -d' ' -f1 "$E2E_DIR/rooms.txt" | sort -u | wc -l)
e2e_log "room records: $nrooms on $nmasters masters (bots' rooms created: $created)"
check "the rooms' records are at {r:<code>}:room ($nrooms, on $nmasters masters)" test "$nrooms" -ge 2
old=$(e2e_redis --scan --pattern '{croupier:money}:rooms:*' | wc -l)
check "no room record in the money slot ($old)" test "$old" -eq 0
wrong=0
while read -r p k; do
    [ "$(e2e_cluster_master_of "$k")" = "$p" ] || wrong=$((wrong + 1))
done <"$E2E_DIR/rooms.txt"
check "each record is served by its code's slot's master ($wrong elsewhere)" test "$wrong" -eq 0

# a finished room: its deals, each settled in the epoch's slot
fin=""
while read -r p k; do
    redis-cli -p "$p" get "$k" >"$E2E_DIR/room.json"
    if python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (r["state"] == 3 and r["played"] == int(sys.argv[2])))' \
        "$E2E_DIR/room.json" "$DEALS" 2>/dev/null; then
        fin=$k
        break
    fi
done <"$E2E_DIR/rooms.txt"
check "a room ended FINISHED with its $DEALS deals ($fin)" test -n "$fin"
if [ -n "$fin" ]; then
    e2e_log "room record: $(cat "$E2E_DIR/room.json")"
    missing=0
    for id in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["rounds"]))' "$E2E_DIR/room.json"); do
        IFS=: read -r sv sl ep _ <<<"$id"
        [ "$(e2e_redis exists "{s:$sv:$sl:$ep}:round:$id")" = 1 ] || { missing=$((missing + 1)); e2e_log "  no settle record: $id"; }
    done
    check "each of its deals settled in the epoch's slot ($missing missing)" test "$missing" -eq 0
    code=${fin#\{r:}
    code=${code%%\}*}
    "$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" --money-by-entity room "$code" >"$E2E_DIR/ctl-room.txt" 2>&1
    cst=$?
    check "croupier-ctl --money-by-entity room $code reads it ($(head -n 1 "$E2E_DIR/ctl-room.txt"))" \
        bash -c "[ $cst = 0 ] && grep -q '$code' '$E2E_DIR/ctl-room.txt'"
    # GetRoom through the gateway (it reads the record in the code's slot), while it still runs
    got=$("$BUILD/tests/gate_get_room" 127.0.0.1 "${POD_PORT[gate-a]}" "$E2E_DIR/secret" $base "$code" 2>&1)
    check "GetRoom $code through the gateway: $got" test "$got" = "room $code state 3 played $DEALS"
    got=$("$BUILD/tests/gate_get_room" 127.0.0.1 "${POD_PORT[gate-a]}" "$E2E_DIR/secret" $base 000000 2>&1)
    check "GetRoom of a code without a room: ROOM_NOT_FOUND ($got)" test "$got" = "error 80"
    nset=$(grep -cE ' yes *$' "$E2E_DIR/ctl-room.txt")
    check "croupier-ctl room finds each deal's settle record in its epoch's slot ($nset of $DEALS)" \
        test "$nset" -eq "$DEALS" || e2e_log "ctl room: $(tr '\n' ';' <"$E2E_DIR/ctl-room.txt")"
fi
# the room that was in play at the drain: it moved whole and played its last deals on game-b
if [ -n "$playing" ]; then
    redis-cli -p "${playing%% *}" get "${playing#* }" >"$E2E_DIR/moved.json"
    e2e_log "the room in play at the drain: $(cat "$E2E_DIR/moved.json")"
    # shellcheck disable=SC2016
    check "it moved whole to game-b and finished there: FINISHED, $DEALS deals on two epochs" \
        python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
epochs = {":".join(x.split(":")[:3]) for x in r["rounds"]}
sys.exit(not (r["state"] == 3 and r["played"] == int(sys.argv[2]) and len(epochs) == 2))' \
        "$E2E_DIR/moved.json" "$DEALS"
fi

# ---- the end: drain, then the books -----------------------------------------------------------
for p in gate-a game-b; do
    e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
done
for p in game-a game-b; do
    check "pod $p: no script refused for keys in two slots" \
        bash -c "! grep -q redis_cluster_crossslot '${POD_LOG[$p]}'" ||
        e2e_fail_detail "${POD_LOG[$p]}" redis_cluster_crossslot 3
    check "pod $p: no room record write failed" \
        bash -c "! grep -q 'tk_room_write_failed\|tk_room_create_failed' '${POD_LOG[$p]}'" ||
        e2e_fail_detail "${POD_LOG[$p]}" tk_room_ 3
    if [ "${#DURABLE[@]}" -gt 0 ]; then # each record write waited for a replica of its slot
        check "pod $p: every room record write reached a replica" \
            bash -c "! grep -q tk_room_write_not_durable '${POD_LOG[$p]}'" ||
            e2e_fail_detail "${POD_LOG[$p]}" tk_room_write_not_durable 3
    fi
done
ok=0
for _ in $(seq 1 40); do
    "$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" audit >"$E2E_DIR/audit.txt" 2>&1
    if grep -q '^balanced' "$E2E_DIR/audit.txt" && grep -q '^in flight *0 transfers' "$E2E_DIR/audit.txt" &&
        ! grep -Eq '^  seat accounts +[0-9]+ holding [1-9]' "$E2E_DIR/audit.txt"; then
        ok=1
        break
    fi
    sleep 0.5
done
e2e_log "audit: $(tr '\n' ';' <"$E2E_DIR/audit.txt")"
check "the audit balances, nothing in flight, every seat account back at 0" test "$ok" = 1
check "seeded: the bots' wallets ($seeded)" grep -q "^seeded *$seeded\$" "$E2E_DIR/audit.txt"

for f in "${E2E_FAILURES[@]}"; do fail=1; e2e_log "failed: $f"; done
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
