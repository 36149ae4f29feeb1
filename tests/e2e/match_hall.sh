#!/usr/bin/env bash
# End-to-end test (issue 29, docs/tournaments.md "Match halls", docs/rules/match-halls.md): two
# matches at once on three traditional-engine servers and two gateways --
#   rising: a Dou Dizhu match of 96 bots, 打立出局 to 18, then 定局积分 to the final;
#   swiss:  a Guandan Swiss match of 32 bots, 8 tables of 4, 3 rounds of two deals.
# While they play, every game server rolls (a new pod ready, then the old one's preStop and
# SIGTERM: its tables handed over between deals), a gateway rolls (the bots follow the
# endpoints), one game server is SIGKILLed (its claims expire and other servers deal the deals it
# was playing again) and the directors that own the matches are SIGKILLed (a standby takes them
# over: three directors run, so one is left whoever the owners are).
#
# Checks, for each match: it finishes; every entrant has a place and the winner place 1; the
# prizes paid equal the buy-ins and no pool is left; an independent check
# (tests/e2e/match_hall_verdict.py) recomputes every player's stage scores from the deals' hand
# histories (result x base; the carry-over of docs/rules/match-halls.md) and finds the
# director's, no deal recorded twice; no bot saw a torn deal or an unexpected error, every bot
# learned its place. For both: the fees are the house's; wallets + rake + pools equal what was
# seeded.
#   rising: the median wait between a player's deals is under 1.5 s (players come to their next
#   table at once; a deal waits at most 3 s for them).
#   swiss: every deal seats every player once at a table of 4 (partners 0 + 2 against 1 + 3,
#   their results equal and opposite), every round's seating is the rules doc's ranking, and
#   every player's match points are those of his round scores (win 3, draw 2, loss 1; "瑞士移位").
#
#   tests/e2e/match_hall.sh BUILD_DIR [SOURCE_DIR]
# Env: HALLS ("rising swiss", or either alone), CROUPIER_KEEP_LOGS=1 keeps the work dir.
set -u
BUILD=$(cd "${1:?usage: match_hall.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/croupier-match-hall.XXXXXX")
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
HALLS=${HALLS:-rising swiss}
declare -A H_GAME H_BOTS H_BASE H_ID H_PID H_STATUS
for hall in $HALLS; do
    case $hall in
    rising) H_GAME[$hall]=doudizhu H_BOTS[$hall]=96 H_BASE[$hall]=9600000 ;;
    swiss) H_GAME[$hall]=guandan H_BOTS[$hall]=32 H_BASE[$hall]=9700000 ;;
    *) echo "HALLS: rising and/or swiss, not '$hall'" >&2; exit 2 ;;
    esac
done
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); return 1; fi
}

# Traditional servers hosting match tables: a turn of 3 s, absent players' moves after 100 ms,
# a deal waiting up to 3 s for its players, claims lapsing 1.5 s after their server stopped
# renewing them.
game_pod() { # NAME
    e2e_game_start "$1" traditional 30 --service croupier-trad --lease-ttl-ms 2000 \
        --recover-grace-ms 3000 --sweep-ms 200 --trad-action-ms 3000 --trad-trustee-ms 100 \
        --trad-gap-ms 100 --trad-tour-join-ms 3000 --trad-tour-host-ttl-ms 1500
}
GATES=()
publish() { e2e_endpoints_publish "$E2E_DIR/gateways" "${GATES[@]}"; }
gate_pod() { # NAME
    e2e_gate_start "$1"
    e2e_gate_prestop "$1"
    GATES+=("$1")
    publish
}
meta() { TOUR_ID=${H_ID[$1]} e2e_tour_meta "$2"; }                          # HALL FIELD
wait_status() { TOUR_ID=${H_ID[$1]} e2e_tour_wait_status "$2" "$3"; }      # HALL STATUS SECONDS
deals() { e2e_redis xrange "{croupier:tour:${H_ID[$1]}}:log" - + | grep -c '^match_deal$'; } # HALL
all_deals() {
    local h out=""
    for h in $HALLS; do out+="$h $(deals "$h"), "; done
    echo "${out%, }"
}
hosting() { e2e_tour_hosting "$1"; }

e2e_secret
e2e_redis_start
for d in dir-a dir-b dir-c; do e2e_director_start "$d" --claim-ttl-ms 1500 --scan-ms 100; done
for n in game-1 game-2 game-3; do game_pod "$n"; done
gate_pod gate-a
gate_pod gate-b
for hall in $HALLS; do e2e_seed_wallets "${H_BASE[$hall]}" "${H_BOTS[$hall]}" 100000; done
sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))

# rising: 打立出局 from 1,000 with a base of 10 growing 25 % every 3 s, out below 20 x base: the
# line passes the field within about 45 s; the 18 left play 定局积分 rounds of 2 deals.
# swiss: 3 rounds of two deals at tables of 4.
structure() { # HALL
    local n=${H_BOTS[$1]}
    if [ "$1" = rising ]; then
        printf '%s\n' '{"format": "match", "game": "doudizhu", "buy_in": 100, "fee": 10,' \
            " \"min_entrants\": $n, \"max_entrants\": $n, \"stages\": [" \
            ' {"format": "rising", "seats": 3, "start_score": 1000, "base_score": 10, "growth_pct": 25,' \
            '  "growth_ms": 3000, "out_pct": 2000, "advance": 18},' \
            ' {"format": "fixed", "seats": 3, "deals_per_round": 2}]}'
    else
        printf '%s\n' '{"format": "match", "game": "guandan", "buy_in": 100, "fee": 10,' \
            " \"min_entrants\": $n, \"max_entrants\": $n, \"stages\": [" \
            ' {"format": "swiss", "seats": 4, "rounds": 3, "deals_per_round": 2}]}'
    fi
}
for hall in $HALLS; do
    structure "$hall" >"$E2E_DIR/structure-$hall.json"
    H_ID[$hall]=$("$BUILD/tools/croupier-ctl" --redis "127.0.0.1:$REDIS_PORT" --json tour create \
        --name "e2e $hall match" --structure "$E2E_DIR/structure-$hall.json" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
        e2e_die "croupier-ctl tour create failed ($hall)"
    e2e_log "$hall match ${H_ID[$hall]}: ${H_BOTS[$hall]} bots of ${H_GAME[$hall]}, starts when full"
    "$BUILD/bots/croupier-bot" --gateways "@$E2E_DIR/gateways" --bots "${H_BOTS[$hall]}" \
        --game "${H_GAME[$hall]}" --engine traditional --tournament "${H_ID[$hall]}" \
        --seconds 600 --player-base "${H_BASE[$hall]}" --token-secret-file "$E2E_DIR/secret" \
        --report "$E2E_DIR/report-$hall.json" >"$E2E_DIR/bots-$hall.log" 2>&1 &
    H_PID[$hall]=$!
    E2E_PIDS+=($!)
done

for hall in $HALLS; do
    check "$hall: the match starts with every bot registered" wait_status "$hall" running 60
    check "$hall: every bot is an entrant ($(meta "$hall" entries) of ${H_BOTS[$hall]})" \
        test "$(meta "$hall" entries)" -eq "${H_BOTS[$hall]}"
done
sleep 6
e2e_log "deals so far: $(all_deals); tables hosted: game-1 $(hosting game-1), game-2 $(hosting game-2), game-3 $(hosting game-3)"
# The servers roll one by one (a replacement ready first); a gateway rolls between them.
for step in "game-1 game-4" "game-2 game-5" "game-3 game-6"; do
    read -r old new <<<"$step"
    game_pod "$new"
    check "$old ended cleanly" e2e_pod_terminate "$old"
    if [ "$old" = game-1 ]; then
        gate_pod gate-c
        GATES=(gate-b gate-c)
        publish
        check "gate-a ended cleanly (preStop, SIGTERM)" e2e_pod_terminate gate-a
    fi
done
for hall in $HALLS; do
    check "$hall: still running after the rolls ($(deals "$hall") deals; the faults below strike a match in play)" \
        test "$(meta "$hall" status)" = running
done
victim=game-4
for g in game-5 game-6; do [ "$(hosting $g)" -gt "$(hosting $victim)" ] && victim=$g; done
kill -KILL "${POD_PID[$victim]}"
e2e_log "$victim SIGKILLed with $(hosting $victim) tables"
for hall in $HALLS; do
    owner=$(meta "$hall" owner_id)
    if [ -n "$owner" ] && [ -n "${POD_PID[$owner]:-}" ] && kill -0 "${POD_PID[$owner]}" 2>/dev/null; then
        kill -KILL "${POD_PID[$owner]}"
        e2e_log "director $owner (the $hall match's owner) SIGKILLed"
    fi
done
for hall in $HALLS; do
    ID=${H_ID[$hall]}
    check "$hall: the match finishes" wait_status "$hall" finished "${FINISH_S:-300}"
    if [ "$(meta "$hall" status)" != finished ]; then
        e2e_redis hgetall "{croupier:tour:$ID}:meta" | paste - - | grep -v structure
        e2e_redis hgetall "{croupier:tour:$ID}:tables" | paste - - | grep -v '"closed":true'
        e2e_redis xrevrange "{croupier:tour:$ID}:log" + - COUNT 20 | paste - - - - - | tail -20
    fi
    wait "${H_PID[$hall]}"
    H_STATUS[$hall]=$?
done

# Each match: places, prizes; the scores recomputed from the deals' hand histories alone
# (result x base per deal; the carry-over into the next stage) against the stages the director
# kept; what its bots saw.
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$REPORT" "$1"; }
fees_want=0
for hall in $HALLS; do
    ID=${H_ID[$hall]} BOTS=${H_BOTS[$hall]} REPORT=$E2E_DIR/report-$hall.json
    fees_want=$((fees_want + BOTS * 10))
    read -r entrants firsts placed prizes <<<"$(e2e_redis hgetall "{croupier:tour:$ID}:entries" |
        python3 -c '
import json, sys
lines = sys.stdin.read().split("\n")
es = [json.loads(v) for v in lines[1::2] if v]
print(len(es), sum(1 for e in es if e.get("place") == 1), sum(1 for e in es if e.get("place", 0) >= 1),
      sum(e.get("prize", 0) for e in es))')"
    check "$hall: a place for every entrant ($placed of $entrants), a winner ($firsts)" \
        test "$placed" -eq "$entrants" -a "$firsts" -ge 1 -a "$entrants" -eq "$BOTS"
    check "$hall: the prizes paid equal the buy-ins ($prizes, $((BOTS * 100)))" \
        test "$prizes" -eq $((BOTS * 100))
    check "$hall: no prize pool is left" test "$(e2e_redis exists "{croupier:money}:tourpool:$ID")" -eq 0

    e2e_redis --raw xrange "{croupier:history:${H_GAME[$hall]}}:stream" - + >"$E2E_DIR/history-$hall.txt"
    e2e_redis --raw hget "{croupier:tour:$ID}:stages" 0 >"$E2E_DIR/stage0-$hall.json"
    e2e_redis --raw hget "{croupier:tour:$ID}:stages" 1 >"$E2E_DIR/stage1-$hall.json"
    verdict=$(python3 "$SRC/tests/e2e/match_hall_verdict.py" "$E2E_DIR" "$ID" "$(deals "$hall")" "$hall")
    read -r nrecs n0 n1 nbad first_bad <<<"$verdict"
    want1=$([ "$hall" = rising ] && echo 18 || echo 0)
    check "$hall: the scores recomputed from $nrecs deals' histories are the director's (stage 0: $n0 players, stage 1: $n1; $nbad bad: $first_bad)" \
        test "${nrecs:-0}" -gt 0 -a "${nbad:-1}" -eq 0 -a "${n0:-0}" -eq "$BOTS" -a "${n1:-0}" -eq "$want1"

    if [ -s "$REPORT" ]; then
        check "$hall bots: exit status 0 (${H_STATUS[$hall]})" test "${H_STATUS[$hall]}" -eq 0
        check "$hall bots: torn deals = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0 ||
            e2e_torn_detail "$REPORT" "$E2E_DIR/bots-$hall.log"
        check "$hall bots: unexpected errors = 0 ($(num 'd["errors"]'))" \
            test "$(num 'sum(e["unexpected"] for e in d["errors"].values())')" -eq 0 ||
            e2e_fail_detail "$E2E_DIR/bots-$hall.log" '"level":"(warn|error)"' 8
        check "$hall bots: every bot learned its place ($(num 'len(d["tournament"]["places"])'))" \
            test "$(num 'len(d["tournament"]["places"])')" -eq "$BOTS"
    else
        check "$hall bots wrote their report (log $E2E_DIR/bots-$hall.log)" false
    fi
done

# Money, both matches: the fees the house's, nothing created or lost.
fees=$(e2e_redis get '{croupier:money}:rake:tournament')
check "the fees are the house's (${fees:-0}, $fees_want)" test "${fees:-0}" -eq "$fees_want"
sum1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
check "wallets + rake + pools equal what was seeded ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"

for p in game-4 game-5 game-6; do
    [ "$p" != "$victim" ] && e2e_pod_terminate "$p"
done
for p in "${GATES[@]}"; do e2e_pod_terminate "$p"; done
exit $fail
