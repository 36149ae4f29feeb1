#!/usr/bin/env bash
# Integration test: croupier-bot --tournament plays a sit & go to its end (docs/bots.md
# "Tournaments"). Real processes on loopback: redis-server, croupier-director, croupier-game
# --engine holdem (hosting the tournament's table; absent players' moves after 2 ms, no gap
# between hands, short turns), croupier-gate, and one croupier-bot of 6 bots registered in an SNG
# of 6 created with croupier-ctl (blinds that grow fast). Passes when the fleet exits 0 by itself
# (every bot done, well before --seconds), its report's places cover 1..6 once and match the
# director's entries, the winner's prize is the whole pool (6 x the buy-in: the default payout
# curve pays one place for 6 entrants), every bot registered and reached a table, no round was
# torn and no unexpected error happened; then a second fleet of the same players (a restarted
# fleet) finds the tournament over, learns the same places and exits 0 at once; then a fleet in a
# second SNG of slow levels is stopped by --seconds mid-tournament: it sends no Leave (refused at
# a tournament seat), finishes its hands and exits 0 with no torn hand; and every pod exits
# drained.
#
#   tests/e2e/bots_tournament.sh BUILD_DIR [SOURCE_DIR]
# Env: BOTS (6: the SNG's size), CROUPIER_KEEP_LOGS=1 keeps the work dir.
set -u
BUILD=$(cd "${1:?usage: bots_tournament.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-bots-tournament.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
BOTS=${BOTS:-6}
BUY_IN=100
BASE=6100000

fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}

e2e_secret
e2e_redis_start
e2e_seed_wallets $BASE "$BOTS" 1000
e2e_director_start director-a --claim-ttl-ms 1500 --scan-ms 100
e2e_game_start game-a holdem 20 --holdem-trustee-ms 2 --holdem-gap-ms 0 --holdem-action-ms 2000 \
    --holdem-tour-host-ttl-ms 1200
e2e_gate_start gate-a

# The SNG: full at BOTS entrants; levels of 2 s whose blinds finish a field within a minute.
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
TOUR=$("$BUILD/tools/croupier-ctl" --redis "127.0.0.1:$REDIS_PORT" tour create \
    --structure "$E2E_DIR/sng.json" --name "bots sng" 2>"$E2E_DIR/ctl.err") ||
    e2e_die "tour create failed: $(cat "$E2E_DIR/ctl.err")"
e2e_log "tournament $TOUR created"

# run_fleet NAME SECONDS [TOURNAMENT [PLAYER_BASE]]: one croupier-bot of BOTS bots in the
# tournament (TOUR, BASE); its exit status in STATUS, its run time in RUN_S.
run_fleet() {
    local t0=$SECONDS
    STATUS=0
    "$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots "$BOTS" \
        --game holdem --tournament "${3:-$TOUR}" --seconds "$2" --player-base "${4:-$BASE}" \
        --token-secret-file "$E2E_DIR/secret" --think-percent 20 --finish-timeout-ms 10000 \
        --report "$E2E_DIR/report-$1.json" ${BOT_ARGS:-} >"$E2E_DIR/bot-$1.log" 2>&1 || STATUS=$?
    RUN_S=$((SECONDS - t0))
}
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$REP" "$1"; }
# places_of REPORT: "player:place" sorted by player, the report's view
places_of() {
    python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['tournament']['places']; print(' '.join('%s:%s' % (k, p[k]) for k in sorted(p)))" "$1"
}

run_fleet first 150
REP=$E2E_DIR/report-first.json
if [ ! -s "$REP" ]; then
    check "the fleet wrote its report (log $E2E_DIR/bot-first.log)" false
else
    check "fleet exit status 0 ($STATUS)" test "$STATUS" -eq 0
    check "the fleet ended by itself when every bot was done (${RUN_S}s < 150s)" test "$RUN_S" -lt 140
    check "the tournament is finished in Redis ($(e2e_redis hget "{croupier:tour:$TOUR}:meta" status))" \
        test "$(e2e_redis hget "{croupier:tour:$TOUR}:meta" status)" = finished
    check "every bot registered ($(num 'd["tournament"]["registered"]'))" \
        test "$(num 'd["tournament"]["registered"]')" -eq "$BOTS"
    check "every bot reached a table (seated $(num 'd["tournament"]["seated"]'), seat requests $(num 'd["tournament"]["seat_requests"]'))" \
        test "$(num 'd["tournament"]["seated"]')" -ge "$BOTS"
    check "every bot done ($(num 'd["tournament"]["done"]'))" test "$(num 'd["tournament"]["done"]')" -eq "$BOTS"
    check "places cover 1..$BOTS once ($(num 'sorted(d["tournament"]["places"].values())'))" \
        test "$(num 'sorted(d["tournament"]["places"].values()) == list(range(1, '"$BOTS"' + 1))')" = True
    check "eliminated $((BOTS - 1)), finished 1 ($(num 'd["tournament"]["eliminated"]'), $(num 'd["tournament"]["finished"]'))" \
        test "$(num 'd["tournament"]["eliminated"]'):$(num 'd["tournament"]["finished"]')" = "$((BOTS - 1)):1"
    pool=$(($(e2e_redis hget "{croupier:tour:$TOUR}:meta" entries) * BUY_IN))
    winner_prize=$(num '[d["tournament"]["prizes"][k] for k, v in d["tournament"]["places"].items() if v == 1][0]')
    check "the winner's prize is the pool ($winner_prize = $pool = $BOTS x $BUY_IN)" \
        test "$winner_prize" = "$pool" -a "$pool" -eq $((BOTS * BUY_IN))
    check "the other prizes are 0 ($(num 'sorted(d["tournament"]["prizes"].values())'))" \
        test "$(num 'sum(d["tournament"]["prizes"].values())')" = "$pool"
    # The bots' places are the director's.
    director=$(for p in $(seq $BASE $((BASE + BOTS - 1))); do
        e2e_redis hget "{croupier:tour:$TOUR}:entries" "$p" |
            python3 -c "import json,sys; print('$p:%d' % json.load(sys.stdin)['place'])"
    done | sort | tr '\n' ' ' | sed 's/ $//')
    check "the places are the director's ($(places_of "$REP"))" test "$(places_of "$REP")" = "$director"
    check "the events were seen (STARTED $(num 'd["tournament"]["events"].get("STARTED", 0)'), ELIMINATED $(num 'd["tournament"]["events"].get("ELIMINATED", 0)'))" \
        test "$(num 'd["tournament"]["events"].get("STARTED", 0)')" -ge 1
    # Money: the pool went to the winner's wallet, the fees to the house; nothing else moved.
    wallets=$(for p in $(seq $BASE $((BASE + BOTS - 1))); do e2e_redis get "{croupier:money}:wallet:$p"; done |
        awk '{ s += $1 } END { print s }')
    fees=$(e2e_redis get '{croupier:money}:rake:tournament')
    check "wallets + fees = what was seeded ($wallets + $fees = $((BOTS * 1000)))" \
        test "$((wallets + fees))" -eq $((BOTS * 1000))
    check "torn rounds = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0
    check "hands played (finished $(num 'd["games"]["finished"]'))" test "$(num 'd["games"]["finished"]')" -gt 0
    check "unexpected errors = 0 ($(num 'd["unexpected_errors"]'); $(num 'd["errors"]'))" \
        test "$(num 'd["unexpected_errors"]')" -eq 0
    check "no Leave sent ($(num 'd["counters"]["leaves"]'))" test "$(num 'd["counters"]["leaves"]')" -eq 0
    e2e_log "tournament report: $(num 'd["tournament"]')"
fi

# A restarted fleet of the same players: RegisterTournament answers TOURNAMENT_OVER, each bot
# asks its place (GetTournament) and is done at once.
run_fleet again 60
REP=$E2E_DIR/report-again.json
if [ ! -s "$REP" ]; then
    check "the restarted fleet wrote its report (log $E2E_DIR/bot-again.log)" false
else
    check "restarted fleet: exit status 0 ($STATUS) within 30 s (${RUN_S}s)" test "$STATUS" -eq 0 -a "$RUN_S" -lt 30
    check "restarted fleet: the same places, from GetTournament ($(places_of "$REP"))" \
        test "$(places_of "$REP")" = "$(places_of "$E2E_DIR/report-first.json")"
    check "restarted fleet: the same prizes ($(num 'd["tournament"]["prizes"]'))" \
        test "$(num 'd["tournament"]["prizes"]')" = "$(REP=$E2E_DIR/report-first.json num 'd["tournament"]["prizes"]')"
    check "restarted fleet: no bot registered or sat again" \
        test "$(num 'd["tournament"]["registered"] + d["tournament"]["seated"]')" -eq 0
fi

# A second SNG with levels of a minute: the fleet is stopped by --seconds while it plays.
BASE2=$((BASE + 1000))
e2e_seed_wallets $BASE2 "$BOTS" 1000
sed 's/"duration_ms": 2000/"duration_ms": 60000/' "$E2E_DIR/sng.json" >"$E2E_DIR/slow.json"
TOUR2=$("$BUILD/tools/croupier-ctl" --redis "127.0.0.1:$REDIS_PORT" tour create \
    --structure "$E2E_DIR/slow.json" --name "bots slow sng" 2>"$E2E_DIR/ctl.err") ||
    e2e_die "tour create failed: $(cat "$E2E_DIR/ctl.err")"
run_fleet stopped 6 "$TOUR2" $BASE2
REP=$E2E_DIR/report-stopped.json
if [ ! -s "$REP" ]; then
    check "the stopped fleet wrote its report (log $E2E_DIR/bot-stopped.log)" false
else
    check "stopped fleet: exit status 0 ($STATUS) after --seconds (${RUN_S}s)" \
        test "$STATUS" -eq 0 -a "$RUN_S" -ge 6 -a "$RUN_S" -lt 30
    check "stopped fleet: every bot reached a table ($(num 'd["tournament"]["seated"]')), hands played ($(num 'd["games"]["finished"]'))" \
        test "$(num 'd["tournament"]["seated"]')" -ge "$BOTS" -a "$(num 'd["games"]["finished"]')" -gt 0
    check "stopped fleet: no Leave ($(num 'd["counters"]["leaves"]')), no torn hand ($(num 'd["games"]["torn"]')), no unexpected error ($(num 'd["unexpected_errors"]'); $(num 'd["errors"]'))" \
        test "$(num 'd["counters"]["leaves"] + d["games"]["torn"] + d["unexpected_errors"]')" -eq 0
    check "stopped fleet: the tournament goes on without them ($(e2e_redis hget "{croupier:tour:$TOUR2}:meta" status))" \
        test "$(e2e_redis hget "{croupier:tour:$TOUR2}:meta" status)" = running
fi

for p in gate-a game-a director-a; do
    e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
done
for w in "${E2E_WARNINGS[@]}"; do e2e_log "warning: $w"; done
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
