#!/usr/bin/env bash
# Integration test (issue 34): tournaments on a Redis Cluster (docs/tournaments.md "On a Redis
# Cluster"; common/keytag.h). A real cluster of 3 masters and 3 replicas on loopback
# (tests/integration/tcluster_run.c), croupier-director, croupier-game --engine holdem and
# --engine traditional (hosting the tournament tables), croupier-gate, all with --redis-cluster.
#   SNG:   croupier-ctl tour create on the cluster, one croupier-bot fleet of 6 plays a hold'em
#          sit & go of 6 to its end.
#   hall:  croupier-ctl tour hall on the cluster; the director's schedule opens a Dou Dizhu
#          match of 3 (one 定局积分 stage of 2 deals, an item prize for first place), 3 bots
#          play it to its end.
# Passes when each fleet exits 0 by itself, places cover 1..N once and match the director's,
# the prizes paid equal the buy-ins (the winner's, for these sizes) and no pool is left, the
# item prize is in the winner's items (croupier-ctl tour items), no torn round and no
# unexpected error; the fees are the house's and wallets + rake + pools (read on every master)
# equal what was seeded; every tournament key is in the money slot on its master (none under
# {croupier:tour:*}, {croupier:tours} or {croupier:items} on any master); croupier-ctl tour
# list / show / halls answer on the cluster; every pod exits drained and none logged a script
# refused for keys in two slots (redis_cluster_crossslot).
#
#   tests/e2e/cluster_tour.sh BUILD_DIR [SOURCE_DIR]
# Env: CROUPIER_KEEP_LOGS=1 keeps the work dir. Exit 77 (skip) when redis-server cannot run a
# cluster.
set -u
BUILD=$(cd "${1:?usage: cluster_tour.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-cluster-tour.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
command -v redis-server >/dev/null || { echo "cluster_tour: SKIP: no redis-server" >&2; exit 77; }
BOTS=6
BUY_IN=100
BASE=6300000     # the SNG's players
MBASE=6310000    # the match's players
CTL=$BUILD/tools/croupier-ctl

fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}

e2e_cluster_start 3 1 || { echo "cluster_tour: SKIP: $E2E_CLUSTER_WHY" >&2; exit 77; }
e2e_log "cluster up: $E2E_REDIS_CLUSTER (money slot on port $E2E_CLUSTER_MONEY)"
ctl() { "$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" "$@"; }

e2e_secret
e2e_seed_wallets $BASE $BOTS 1000
e2e_seed_wallets $MBASE 3 1000
sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
e2e_log "seeded: $sum0 chips"
e2e_director_start director-a --claim-ttl-ms 1500 --scan-ms 100
e2e_game_start game-holdem holdem 20 --holdem-trustee-ms 2 --holdem-gap-ms 0 \
    --holdem-action-ms 2000 --holdem-tour-host-ttl-ms 1200
e2e_game_start game-trad traditional 20 --trad-action-ms 3000 --trad-trustee-ms 100 \
    --trad-gap-ms 100 --trad-tour-join-ms 3000 --trad-tour-host-ttl-ms 1500
e2e_gate_start gate-a

# ---- the SNG: created with croupier-ctl on the cluster; levels of 2 s that end it within a minute
cat >"$E2E_DIR/sng.json" <<EOF
{"format": "sng", "seats_per_table": 6, "starting_stack": 1000, "buy_in": $BUY_IN, "fee": 10,
 "min_entrants": $BOTS, "max_entrants": $BOTS,
 "levels": [{"small_blind": 10, "big_blind": 20, "duration_ms": 2000},
            {"small_blind": 50, "big_blind": 100, "duration_ms": 2000},
            {"small_blind": 200, "big_blind": 400, "ante": 50, "duration_ms": 2000},
            {"small_blind": 1000, "big_blind": 2000, "ante": 200, "duration_ms": 2000},
            {"small_blind": 10000, "big_blind": 20000, "ante": 2000, "duration_ms": 2000},
            {"small_blind": 100000, "big_blind": 200000, "ante": 20000, "duration_ms": 2000}]}
EOF
TOUR=$(ctl tour create --structure "$E2E_DIR/sng.json" --name "cluster sng" 2>"$E2E_DIR/ctl.err") ||
    e2e_die "tour create on the cluster failed: $(cat "$E2E_DIR/ctl.err")"
e2e_log "tournament $TOUR created"
# ---- the match hall: a Dou Dizhu match of 3 opened by the director's schedule
cat >"$E2E_DIR/match.json" <<EOF
{"format": "match", "game": "doudizhu", "buy_in": $BUY_IN, "fee": 10,
 "min_entrants": 3, "max_entrants": 3,
 "payouts": {"items": [{"place": 1, "item": "trophy:cluster"}]},
 "stages": [{"format": "fixed", "seats": 3, "deals_per_round": 2}]}
EOF
HALL=$(ctl tour hall --structure "$E2E_DIR/match.json" --every-seconds 10 --name "cluster hall" \
    2>"$E2E_DIR/ctl.err") || e2e_die "tour hall on the cluster failed: $(cat "$E2E_DIR/ctl.err")"
MATCH=""
for _ in $(seq 1 100); do
    MATCH=$(e2e_redis hget "{croupier:money}:tours:hall:$HALL" open)
    [ -n "$MATCH" ] && break
    sleep 0.1
done
[ -n "$MATCH" ] || e2e_die "the director opened no match of hall $HALL within 10 s"
e2e_log "hall $HALL opened match $MATCH"

# fleet NAME BOTS GAME ENGINE TOURNAMENT BASE: one croupier-bot fleet, in the background
declare -A F_PID F_T0
fleet() {
    "$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots "$2" \
        --game "$3" --engine "$4" --tournament "$5" --seconds 150 --player-base "$6" \
        --token-secret-file "$E2E_DIR/secret" --think-percent 20 --finish-timeout-ms 10000 \
        --report "$E2E_DIR/report-$1.json" >"$E2E_DIR/bot-$1.log" 2>&1 &
    F_PID[$1]=$!
    F_T0[$1]=$SECONDS
    E2E_PIDS+=($!)
}
fleet sng $BOTS holdem holdem "$TOUR" $BASE
fleet match 3 doudizhu traditional "$MATCH" $MBASE

# croupier-ctl reads on the cluster while they play
sleep 2
# (the hall may have opened its next match already: both are listed, maybe beside it)
check "croupier-ctl tour list on the cluster lists both" \
    bash -c "'$CTL' --redis-cluster '$E2E_REDIS_CLUSTER' --json tour list | python3 -c '
import json, sys
ids = set(str(t[\"id\"]) for t in json.load(sys.stdin)[\"tournaments\"])
sys.exit(0 if {\"$TOUR\", \"$MATCH\"} <= ids else 1)'"
check "croupier-ctl tour halls on the cluster shows the hall's open match" \
    bash -c "'$CTL' --redis-cluster '$E2E_REDIS_CLUSTER' tour halls | grep -q 'cluster hall'"

num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$REP" "$1"; }
places_of() {
    python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['tournament']['places']; print(' '.join('%s:%s' % (k, p[k]) for k in sorted(p)))" "$1"
}
# verdict NAME TOURNAMENT PLAYERS BASE: the checks of one fleet and its tournament
verdict() {
    local name=$1 id=$2 n=$3 base=$4 st=0
    wait "${F_PID[$name]}" || st=$?
    local run=$((SECONDS - ${F_T0[$name]}))
    REP=$E2E_DIR/report-$name.json
    if [ ! -s "$REP" ]; then
        check "$name: the fleet wrote its report (log $E2E_DIR/bot-$name.log)" false
        return
    fi
    check "$name: fleet exit status 0 ($st), ended by itself (${run}s < 140s)" test "$st" -eq 0 -a "$run" -lt 140
    local status
    status=$(e2e_redis hget "$(e2e_tour_key "$id" meta)" status)
    check "$name: tournament $id finished in Redis ($status)" test "$status" = finished
    check "$name: every bot registered and done ($(num 'd["tournament"]["registered"]'), $(num 'd["tournament"]["done"]'))" \
        test "$(num 'd["tournament"]["registered"]'):$(num 'd["tournament"]["done"]')" = "$n:$n"
    check "$name: places cover 1..$n once ($(num 'sorted(d["tournament"]["places"].values())'))" \
        test "$(num 'sorted(d["tournament"]["places"].values()) == list(range(1, '"$n"' + 1))')" = True
    local director
    director=$(for p in $(seq "$base" $((base + n - 1))); do
        e2e_redis hget "$(e2e_tour_key "$id" entries)" "$p" |
            python3 -c "import json,sys; print('$p:%d' % json.load(sys.stdin)['place'])"
    done | sort | tr '\n' ' ' | sed 's/ $//')
    check "$name: the places are the director's ($(places_of "$REP"))" test "$(places_of "$REP")" = "$director"
    local prizes
    prizes=$(for p in $(seq "$base" $((base + n - 1))); do
        e2e_redis hget "$(e2e_tour_key "$id" entries)" "$p" |
            python3 -c "import json,sys; print(json.load(sys.stdin)['prize'])"
    done | awk '{ s += $1 } END { print s }')
    check "$name: the prizes paid are the buy-ins ($prizes = $n x $BUY_IN), the bots saw them ($(num 'sum(d["tournament"]["prizes"].values())'))" \
        test "$prizes:$(num 'sum(d["tournament"]["prizes"].values())')" = "$((n * BUY_IN)):$((n * BUY_IN))"
    check "$name: no pool left ($(e2e_redis exists "{croupier:money}:tourpool:$id"))" \
        test "$(e2e_redis exists "{croupier:money}:tourpool:$id")" = 0
    check "$name: no torn round ($(num 'd["games"]["torn"]')), hands played ($(num 'd["games"]["finished"]')), no unexpected error ($(num 'd["unexpected_errors"]'); $(num 'd["errors"]'))" \
        test "$(num 'd["games"]["torn"] + d["unexpected_errors"]'):$(num 'd["games"]["finished"] > 0')" = "0:True"
    # the tournament's keys: on the money slot's master itself (no redirection followed)
    check "$name: the meta is {croupier:money}:tour:$id:meta on the money slot's master" \
        test "$(redis-cli -p "$E2E_CLUSTER_MONEY" exists "{croupier:money}:tour:$id:meta")" = 1
}
verdict sng "$TOUR" $BOTS $BASE
verdict match "$MATCH" 3 $MBASE
winner=$(python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['tournament']['places']; print([k for k, v in p.items() if v == 1][0])" \
    "$E2E_DIR/report-match.json" 2>/dev/null)
check "match: the winner's item prize is his (croupier-ctl tour items $winner)" \
    bash -c "'$CTL' --redis-cluster '$E2E_REDIS_CLUSTER' tour items '$winner' | grep -q 'trophy:cluster'"
check "croupier-ctl tour show $TOUR on the cluster" \
    bash -c "'$CTL' --redis-cluster '$E2E_REDIS_CLUSTER' tour show '$TOUR' | grep -q finished"

for p in gate-a game-holdem game-trad director-a; do
    e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
    check "pod $p: no script refused for keys in two slots" \
        bash -c "! grep -q redis_cluster_crossslot '${POD_LOG[$p]}'" ||
        e2e_fail_detail "${POD_LOG[$p]}" redis_cluster_crossslot 3
done
stray=$( (e2e_redis_scan '{croupier:tour*'; e2e_redis_scan '{croupier:items}*') | head -n 3 | tr '\n' ' ')
check "no tournament key outside the money slot on any master ('$stray')" test -z "$stray"
sum1=$(e2e_wallet_sum)
rake=$(e2e_rake_sum)
fees=$(e2e_redis get '{croupier:money}:rake:tournament')
check "the fees are the house's ($fees = $((BOTS + 3)) x 10)" test "$fees" = $(((BOTS + 3) * 10))
check "wallets + rake + pools sum unchanged over every master ($sum0 -> $sum1 + $rake)" \
    test "$sum0" -eq $((sum1 + rake))
for f in "${E2E_FAILURES[@]}"; do fail=1; e2e_log "failed: $f"; done
for w in "${E2E_WARNINGS[@]}"; do e2e_log "warning: $w"; done
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
