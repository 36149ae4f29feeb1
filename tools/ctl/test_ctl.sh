#!/usr/bin/env bash
# Integration test of croupier-ctl (docs/ops.md) against real redis-server, croupier-game
# (zhajinhua with an admin secret and a /drain allow-list that excludes loopback; test without
# an admin secret), croupier-gate and six croupier-bot players on loopback:
#   servers, where, tables while the bots play (three more play private rooms); wallet, round
#   and room after; credit (applied once,
#   replayed, a reused op id refused, a debit beyond the balance refused, the audit entries);
#   drain refused without a token, with a malformed, expired or wrongly signed one and where there
#   is no admin endpoint, then
#   done with the right one (the allow-list refuses /drain to the same peer); bad arguments
#   (exit 2) and unknown ids (exit 1) for every command.
#
#   tools/ctl/test_ctl.sh BUILD_DIR [SOURCE_DIR]        (CROUPIER_KEEP_LOGS=1 keeps the work dir)
set -u
BUILD=$(cd "${1:?usage: test_ctl.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=../../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-ctl.XXXXXX)
FAILS=0
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ $FAILS -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
CTL=$BUILD/tools/croupier-ctl
[ -x "$CTL" ] || e2e_die "no $CTL (build first)"
export CROUPIER_ZHAJINHUA_GAP_MS=100 CROUPIER_TEST_ROUND_MS=300
# Short turns: the room bots may stop in the middle of a room's deal, whose seats stay (away)
# with their full turn time (engine/tk.h); the drain near the end waits for that deal.
export CROUPIER_ZHAJINHUA_ACTION_MS=1000 CROUPIER_ZHAJINHUA_TIME_BANK_MS=0

# shellcheck source=ctl_test_lib.sh
. "$SRC/tools/ctl/ctl_test_lib.sh"

e2e_secret
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$E2E_DIR/admin"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$E2E_DIR/wrong"
e2e_redis_start
BASE=6100000
e2e_seed_wallets $BASE 6 1000000
RBASE=6200000 # three bots that play private rooms of two deals
e2e_seed_wallets $RBASE 3 1000000
MONEY0=$(($(e2e_wallet_sum) + $(e2e_rake_sum))) # wallets + rake: what rounds and credits conserve
# a drain bound above the time from the drain test to the end (its exit must be "drained")
e2e_game_start zjh zhajinhua 30 --admin-secret-file "$E2E_DIR/admin" --drain-allow 10.255.255.1
e2e_game_start plain test 10
e2e_gate_start gate
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate]}" --bots 6 --game zhajinhua \
    --engine game --seconds 12 --player-base $BASE --token-secret-file "$E2E_DIR/secret" \
    --finish-timeout-ms 20000 --report "$E2E_DIR/report.json" \
    --rounds-file "$E2E_DIR/rounds.txt" >"$E2E_DIR/bot.log" 2>&1 &
BOT=$!
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate]}" --bots 3 --game zhajinhua \
    --engine game --seconds 12 --player-base $RBASE --token-secret-file "$E2E_DIR/secret" \
    --room-seats 3 --room-deals 2 --finish-timeout-ms 20000 --report "$E2E_DIR/room-report.json" \
    --rounds-file "$E2E_DIR/room-rounds.txt" >"$E2E_DIR/room-bot.log" 2>&1 &
RBOT=$!

# ---- while the bots play -------------------------------------------------------------------
ctl servers --json
check "servers --json lists both servers" test "$(j 'len(d["servers"])')" = 2
ZJH=$(j '[s["id"] for s in d["servers"] if s["engine"]=="zhajinhua"][0]')
PLAIN=$(j '[s["id"] for s in d["servers"] if s["engine"]=="test"][0]')
check "servers: $ZJH has engine, games, version, ready, epoch, admin, desks" \
    test "$(j '[(s["games"], s["version"] != None, s["ready"], s["epoch"] >= 1, s["admin"] == "127.0.0.1:'"${POD_HEALTH[zjh]}"'", s["desks"] >= 1) for s in d["servers"] if s["id"]=="'"$ZJH"'"][0]')" \
    = "(['zhajinhua'], True, True, True, True, True)"
ctl servers
check "servers prints a table with a header and both ids" \
    bash -c '[[ "$1" == SERVER* && "$1" == *"$2"* && "$1" == *"$3"* ]]' _ "$OUT" "$ZJH" "$PLAIN"

seated=""
for _ in $(seq 1 100); do
    for p in $(seq $BASE $((BASE + 5))); do
        ctl where "$p" --json
        if [ "$RC" = 0 ] && [ "$(j 'd["seat"] is not None')" = True ]; then
            seated=$p
            break 2
        fi
    done
    sleep 0.1
done
[ -n "$seated" ] || e2e_die "no bot got a seat within 10 s (log $E2E_DIR/bot.log)"
TABLE=$(j 'd["table"]')
SEAT=$(j 'd["seat"]')
check "where $seated: on $ZJH, table $TABLE, seat $SEAT, game zhajinhua" \
    test "$(j '(d["server"], d["game"], d["server_state"])')" = "('$ZJH', 'zhajinhua', 'ready')"
ctl tables "$ZJH" --json
check "tables $ZJH: table $TABLE seats $seated at seat $SEAT" \
    test "$(j '[[s["seat"] for s in t["seats"] if s["player"]=="'"$seated"'"] for t in d["tables"] if t["desk"]=='"$TABLE"'][0]')" = "[$SEAT]"
ctl where "$seated"
check "where prints a table (exit $RC: $OUT$ERR)" bash -c '[[ "$1" == PLAYER* && "$1" == *"$2"* ]]' _ "$OUT" "$ZJH"
ctl tables "$ZJH"
check "tables prints a table (exit $RC: $ERR)" bash -c '[[ "$1" == *DESK* && "$1" == *"$2"* ]]' _ "$OUT" "$seated"
check "tables' rows fit 160 columns ($(awk '{ if (length > m) m = length } END { print m }' <<<"$OUT"))" \
    test "$(awk '{ if (length > m) m = length } END { print m + 0 }' <<<"$OUT")" -le 160
expect 1 "tables of a service name, not a server id" tables "${ZJH%%:*}"
check "a near miss names the servers it could mean ($ERR)" \
    bash -c '[[ "$1" == *"did you mean"*"$2"* ]]' _ "$ERR" "$ZJH"
# a credit while the bots play: its chips come from the house's account, not from nowhere
expect 0 "credit +40 to $((BASE + 5)) while the bots play" credit $((BASE + 5)) 40 --reason "mid-game goodwill" --op-id live-1
wait $BOT || bad "croupier-bot exited non-zero (log $E2E_DIR/bot.log)"
# The room bots are only the source of a room for `room` here (bots_smoke and room_drains test
# the rooms themselves): an error of theirs is logged, and their rounds are still checked below.
wait $RBOT || e2e_log "note: the room bots' croupier-bot exited non-zero: $(python3 -c \
    'import json,sys; print(json.load(open(sys.argv[1])).get("errors"))' "$E2E_DIR/room-report.json" 2>&1)"

# ---- room ----------------------------------------------------------------------------------
CODE=""
for k in $(e2e_redis --scan --pattern '{croupier:rooms}:room:*'); do
    if [ "$(e2e_redis get "$k" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = 3 ]; then
        CODE=${k##*:}
        break
    fi
done
check "the room bots finished a room ($CODE)" test -n "$CODE"
ctl room "$CODE" --json
check "room $CODE: finished on $ZJH, zhajinhua, 2 of 2 deals, each settled (exit $RC: $ERR)" \
    test "$(j '(d["state"], d["record"]["server"], d["record"]["game"], d["record"]["played"], [x["settled"] for x in d["deals_played"]])' 2>/dev/null)" \
    = "('finished', '$ZJH', 'zhajinhua', 2, [True, True])"
check "room $CODE: the scoreboard seats the three room bots, its totals sum to minus the rake at most" \
    test "$(j 'sorted(s["player"] for s in d["record"]["scores"]) == ["'$RBASE'", "'$((RBASE + 1))'", "'$((RBASE + 2))'"] and sum(s["total"] for s in d["record"]["scores"]) <= 0')" = True
check "room $CODE: its deals are the rounds the room bots saw finish" \
    test "$(j '" ".join(sorted(x["round"] for x in d["deals_played"]))')" = \
    "$(for r in $(j '" ".join(x["round"] for x in d["deals_played"])'); do grep -q "^$r finished" "$E2E_DIR/room-rounds.txt" && echo "$r"; done | sort | tr '\n' ' ' | sed 's/ $//')"
ctl room "$CODE"
check "room prints the room, the scoreboard and the deals" \
    bash -c '[[ "$1" == "room $2: finished, zhajinhua"* && "$1" == *scoreboard:* && "$1" == *SETTLED* ]]' _ "$OUT" "$CODE"

# ---- wallet, round -------------------------------------------------------------------------
P=$seated # a player who played rounds
ctl wallet $P --json
bal=$(e2e_redis get "{croupier:money}:wallet:$P")
check "wallet $P: balance $(j 'd["balance"]') = Redis $bal" test "$(j 'd["balance"]')" = "$bal"
check "wallet $P: recent rounds with their deltas" test "$(j 'len([o for o in d["recent"] if o["kind"]=="round" and "delta" in o]) > 0')" = True
ROUND=$(j '[o["round"] for o in d["recent"] if o["kind"]=="round" and o["outcome"]=="completed"][0]')
ctl wallet $P
check "wallet prints operations with their UTC time" \
    bash -c '[[ "$1" == *"TIME (UTC)"* && "$1" =~ [0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} ]]' _ "$OUT"
ctl round "$ROUND" --json
check "round $ROUND: settled, its settle record and hand history" \
    test "$(j '(d["settled"], d["history"]["game"], d["history"]["record"]["round"], len(d["settle"]["balances_after"]) == len(d["history"]["record"]["seats"]))')" \
    = "(True, 'zhajinhua', '$ROUND', True)"
check "round: the hand history has $P at a seat" test "$(j '"'$P'" in [s["player"] for s in d["history"]["record"]["seats"]]')" = True
ctl round "$ROUND"
check "round prints the seats" bash -c '[[ "$1" == *"settled: yes"* && "$1" == *SEAT* ]]' _ "$OUT"
check "round lists the actions in order" bash -c '[[ "$1" == *"actions, in order:"*"  1  seat "* ]]' _ "$OUT"

# ---- credit --------------------------------------------------------------------------------
b0=$(e2e_redis get "{croupier:money}:wallet:$P")
expect 0 "credit +250" credit $P 250 --reason "goodwill: lost hand" --op-id test-1 --operator 9 --json
check "credit: balance_after = $((b0 + 250)), not replayed" test "$(j '(d["balance_after"], d["replayed"])')" = "($((b0 + 250)), False)"
expect 0 "the same credit again" credit $P 250 --reason "goodwill: lost hand" --op-id test-1 --json
check "replay: replayed, balance unchanged" test "$(j '(d["balance_after"], d["replayed"])')" = "($((b0 + 250)), True)"
check "replay: the wallet holds $((b0 + 250))" test "$(e2e_redis get "{croupier:money}:wallet:$P")" = $((b0 + 250))
expect 1 "the op id reused for another amount" credit $P 300 --reason x --op-id test-1
expect 1 "the op id reused for another player" credit $((P + 1)) 250 --reason x --op-id test-1
expect 0 "credit -100 (a debit)" credit $P -100 --reason "chargeback" --op-id test-2
expect 1 "a debit beyond the balance" credit $P -99999999 --reason x --op-id test-3
check "after the refusals the wallet holds $((b0 + 150))" test "$(e2e_redis get "{croupier:money}:wallet:$P")" = $((b0 + 150))
check "three audit entries (one per applied op id)" test "$(e2e_redis xlen '{croupier:money}:audit')" = 3
CR='{croupier:money}:round:ctl:credit'
check "credit test-1 has its settle record (balance after $((b0 + 250)))" test "$(e2e_redis get "$CR:test-1")" = $((b0 + 250))
check "credit test-2 has its settle record (balance after $((b0 + 150)))" test "$(e2e_redis get "$CR:test-2")" = $((b0 + 150))
check "the refused debit test-3 has no settle record" test "$(e2e_redis exists "$CR:test-3")" = 0
check "the settle records of credits expire like a round's" test "$(e2e_redis ttl "$CR:test-1")" -gt 600000
check "the house account rake:credits paid the net 190 credited" test "$(e2e_redis get '{croupier:money}:rake:credits')" = -190
ctl round ctl:credit:test-1 --json
check "round ctl:credit:test-1: settled, balance after, the audit entry" \
    test "$(j '(d["kind"], d["settled"], d["settle"]["balances_after"], d["audit"]["player"], d["audit"]["amount"], d["audit"]["reason"], d["audit"]["operator"])')" \
    = "('credit', True, [$((b0 + 250))], '$P', '250', 'goodwill: lost hand', '9')"
ctl round ctl:credit:test-1
check "round ctl:credit:test-1 prints the credit" bash -c '[[ "$1" == *"operator credit"* && "$1" == *"settled: yes"* && "$1" == *"goodwill"* ]]' _ "$OUT"
expect 0 "the same credit a third time, as a table" credit $P 250 --reason "goodwill: lost hand" --op-id test-1
check "the table says replayed" bash -c '[[ "$1" == "replayed, nothing changed"* ]]' _ "$OUT"
check "the replays wrote no audit entry and changed no wallet" \
    test "$(e2e_redis xlen '{croupier:money}:audit') $(e2e_redis get "{croupier:money}:wallet:$P")" = "3 $((b0 + 150))"
ctl wallet $P --json --limit 2
check "wallet: the two credits are the recent operations, with reason and operator" \
    test "$(j '[(o["kind"], o["delta"], o["reason"]) for o in d["recent"]]')" = "[('credit', -100, 'chargeback'), ('credit', 250, 'goodwill: lost hand')]"
ctl wallet $P
check "wallet prints the balance" bash -c '[[ "$1" == "player $2: balance $3"* ]]' _ "$OUT" $P $((b0 + 150))

# ---- drain ---------------------------------------------------------------------------------
H=${POD_HEALTH[zjh]}
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$H/admin/drain")
check "POST /admin/drain without a token: 401 ($code)" test "$code" = 401
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer v1.1.9999999999.00' "http://127.0.0.1:$H/admin/drain")
check "POST /admin/drain with a malformed token: 403 ($code)" test "$code" = 403
expired=$("$BUILD/gateway/croupier-gate" token --secret-file "$E2E_DIR/admin" --player 3 --ttl 1)
sleep 2.1
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $expired" "http://127.0.0.1:$H/admin/drain")
check "POST /admin/drain with an expired admin token: 403 ($code)" test "$code" = 403
check "the refusal names the reason: expired" grep -q '"event":"admin_drain_refused".*"reason":"expired"' "${POD_LOG[zjh]}"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$H/admin/drain")
check "GET /admin/drain: 405 ($code)" test "$code" = 405
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$H/drain")
check "the allow-list refuses /drain to this peer: 403 ($code)" test "$code" = 403
expect 2 "drain without --admin-secret-file" drain "$ZJH"
expect 1 "drain with a wrong admin secret" drain "$ZJH" --admin-secret-file "$E2E_DIR/wrong"
expect 1 "drain of a player token signed with the players' secret" drain "$ZJH" --admin-secret-file "$E2E_DIR/secret"
check "after the refusals $ZJH is still ready" e2e_get "$H/readyz" 2
expect 1 "drain of a server without an admin endpoint (404)" drain "$PLAIN" --admin-secret-file "$E2E_DIR/admin"
check "each of the 5 refusals is audited in the server's log (admin_drain_refused)" \
    test "$(grep -c '"event":"admin_drain_refused"' "${POD_LOG[zjh]}")" -eq 5
expect 0 "drain $ZJH with the admin secret" drain "$ZJH" --admin-secret-file "$E2E_DIR/admin" --operator 42 --json
check "drain: the answer says draining" test "$(j 'd["status"]["draining"]')" = True
check "drain: /readyz answers 503" bash -c '! curl -fsS "http://127.0.0.1:$1/readyz" >/dev/null 2>&1' _ "$H"
check "drain: the audit line names operator 42 and the peer" \
    grep -q '"event":"admin_drain","operator":"operator 42","peer":"127.0.0.1:[0-9]*","started":true' "${POD_LOG[zjh]}"
ctl servers --json
check "servers: $ZJH draining" test "$(j '[s["draining"] for s in d["servers"] if s["id"]=="'"$ZJH"'"][0]')" = True

# ---- bad arguments (exit 2) and unknown ids (exit 1) ---------------------------------------
expect 2 "no command"
expect 2 "an unknown command" frobnicate
expect 2 "an unknown flag" servers --frob
expect 2 "servers with an argument" servers extra
expect 2 "tables without SERVER" tables
expect 2 "where without PLAYER" where
expect 2 "where of a malformed player id" where 'no such!'
expect 2 "wallet of a malformed player id" wallet '../x'
expect 2 "round of a malformed round id" round not-a-round
expect 2 "credit of 0" credit $P 0 --reason x --op-id t9
expect 2 "credit of a non-number" credit $P 12abc --reason x --op-id t9
expect 2 "credit beyond the maximum" credit $P 100000000000001 --reason x --op-id t9
expect 2 "credit without --reason" credit $P 5 --op-id t9
expect 2 "credit without --op-id" credit $P 5 --reason x
expect 2 "credit with a malformed --op-id" credit $P 5 --reason x --op-id 'a b'
expect 2 "credit with a control character in --reason" credit $P 5 --reason $'a\tb' --op-id t9
expect 2 "--op-id on another command" wallet $P --op-id t9
expect 2 "round of a malformed credit id" round 'ctl:credit:a b'
expect 1 "round of an unknown credit" round ctl:credit:nosuch
expect 2 "room of a malformed code" room 12ab56
expect 2 "room without CODE" room
expect 1 "room of an unknown code" room 000000
expect 1 "tables of an unknown server" tables nosuch:1
expect 1 "where of a player without a seat" where 999999999
expect 1 "wallet of an unknown player" wallet 999999999
expect 1 "round of an unknown round" round zhajinhua:1:1:1:999999
# A table record (docs/hand-history.md "Table records"; blackjack's shoe_retirement) is shown
# with its kind where a round's outcome stands, never as a completed round.
TR=zhajinhua:1:1:1:0
sid=$(e2e_redis xadd '{croupier:history:zhajinhua}:stream' '*' data \
    "{\"round\":\"$TR\",\"record\":\"shoe_retirement\",\"game\":\"zhajinhua\",\"seats\":[],\"results\":[]}")
e2e_redis set "{croupier:history:zhajinhua}:seen:$TR" "$sid" >/dev/null
ctl round "$TR" --json
check "round of a table record: its kind as the outcome, not settled" \
    test "$(j '(d["outcome"], d["settled"])')" = "('shoe_retirement', False)"
expect 1 "drain of an unknown server" drain nosuch:1 --admin-secret-file "$E2E_DIR/admin"
check "nothing of t9 was applied" test "$(e2e_redis exists "$CR:t9" '{croupier:money}:audit:seen:ctl:t9')" = 0
"$CTL" --redis 127.0.0.1:1 servers >/dev/null 2>&1
check "Redis unreachable: exit 1" test $? = 1

for p in gate zjh plain; do
    e2e_pod_terminate "$p" || bad "pod $p did not exit cleanly"
    check "pod $p exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
done
# ---- the money audit (docs/ops.md, "credit"): every chip is in a wallet or a rake account ----
MONEY1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
check "wallets + rake unchanged by the rounds and the credits ($MONEY0 -> $MONEY1)" test "$MONEY0" = "$MONEY1"
cat "$E2E_DIR/room-rounds.txt" >>"$E2E_DIR/rounds.txt"
read -r fin missing void settled <<<"$(e2e_rounds_check "$E2E_DIR/rounds.txt")"
check "every finished round has its settle record ($fin rounds, $missing missing), no voided one ($void, $settled)" \
    test "$fin" -gt 0 -a "$missing" = 0 -a "$settled" = 0
check "the three applied credits have settle records" \
    test "$(e2e_redis --scan --pattern "$CR:*" | wc -l)" = 3
[ $FAILS -eq 0 ] || e2e_log "$FAILS check(s) failed; work dir $E2E_DIR"
[ $FAILS -eq 0 ]
