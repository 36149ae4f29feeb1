#!/usr/bin/env bash
# Integration test of croupier-ctl's tour commands (docs/ops.md "tour") against a real
# redis-server on loopback, with no director running:
#   create of an SNG and an MTT (every key and meta field as tournament/tour_director.h and
#   docs/ops.md say); a refused structure (its sentence, nothing written), an MTT without
#   --start-in-seconds and an SNG with it refused; list and show (table and --json), show of an
#   unknown id; register with nobody to answer (exit 1, "no director answered", the request in
#   the stream); register, unregister and cancel answered by the test itself (it plays the
#   director: reads the request id from the stream and RPUSHes an answer to its reply list):
#   ok -> exit 0, refused -> exit 1; bad arguments (exit 2) and unknown ids (exit 1); tour and
#   croupier-director refusing --money-by-entity (exit 2; docs/tournaments.md "Tournaments by
#   entity").
#
#   tools/ctl/test_ctl_tour.sh BUILD_DIR [SOURCE_DIR]   (CROUPIER_KEEP_LOGS=1 keeps the work dir)
set -u
BUILD=$(cd "${1:?usage: test_ctl_tour.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=../../tests/e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-ctl-tour.XXXXXX)
FAILS=0
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ $FAILS -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
CTL=$BUILD/tools/croupier-ctl
[ -x "$CTL" ] || e2e_die "no $CTL (build first)"

# shellcheck source=ctl_test_lib.sh
. "$SRC/tools/ctl/ctl_test_lib.sh"
now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }
# meta ID FIELD
meta() { e2e_redis hget "{croupier:tour:$1}:meta" "$2"; }
# the request ids of tournament ID's stream, oldest first
reqs() { e2e_redis --raw xrange "{croupier:tour:$1}:in" - + | awk 'p { print; p = 0 } $0 == "req" { p = 1 }'; }
# director_answers ID JSON_TEMPLATE: waits for a request in ID's stream not answered yet, then
# pushes JSON_TEMPLATE (REQ replaced by its id) onto its reply list; in the background.
director_answers() {
    local id=$1 tmpl=$2 before
    before=$(reqs "$id" | wc -l)
    (
        for _ in $(seq 1 100); do
            if [ "$(reqs "$id" | wc -l)" -gt "$before" ]; then
                req=$(reqs "$id" | tail -n 1)
                e2e_redis rpush "{croupier:tour:$id}:reply:$req" "${tmpl//REQ/$req}" >/dev/null
                exit 0
            fi
            sleep 0.05
        done
    ) &
    ANSWERER=$!
}

e2e_redis_start
SNG=$E2E_DIR/sng.json
MTT=$E2E_DIR/mtt.json
BADS=$E2E_DIR/bad.json
# The structure's JSON with spaces: the meta holds it compacted (jansson, keys in file order).
cat >"$SNG" <<'EOF'
{ "format": "sng", "seats_per_table": 6, "starting_stack": 1500, "buy_in": 10, "fee": 1,
  "max_entrants": 6,
  "levels": [ { "small_blind": 10, "big_blind": 20, "duration_ms": 300000 },
              { "small_blind": 20, "big_blind": 40, "duration_ms": 300000 } ] }
EOF
SNG_COMPACT='{"format":"sng","seats_per_table":6,"starting_stack":1500,"buy_in":10,"fee":1,"max_entrants":6,"levels":[{"small_blind":10,"big_blind":20,"duration_ms":300000},{"small_blind":20,"big_blind":40,"duration_ms":300000}]}'
cp "$SRC/fuzz/corpus/tour_structure/mtt.json" "$MTT"
cat >"$BADS" <<'EOF'
{ "format": "sng", "seats_per_table": 6, "starting_stack": 1500, "buy_in": 10,
  "max_entrants": 6,
  "levels": [ { "small_blind": 10, "big_blind": 20, "duration_ms": 300000 },
              { "small_blind": 5, "big_blind": 10, "duration_ms": 300000 } ] }
EOF

# ---- create ----------------------------------------------------------------------------------
T0=$(now_ms)
ctl tour create --structure "$SNG"
T1=$(now_ms)
check "create SNG prints its id 1 (exit $RC: $OUT$ERR)" test "$RC:$OUT" = "0:1"
check "the SNG's meta: id, default name, structure compacted, format, status" \
    test "$(meta 1 id)|$(meta 1 name)|$(meta 1 structure)|$(meta 1 format)|$(meta 1 status)" \
    = "1|Tournament 1|$SNG_COMPACT|sng|registering"
check "the SNG's meta: start_at_ms 0 and every counter 0, cursor 0-0" \
    test "$(for f in start_at_ms started_ms ended_ms clock_ms level entries players pool cursor; do printf '%s ' "$(meta 1 $f)"; done)" \
    = "0 0 0 0 0 0 0 0 0-0 "
C1=$(meta 1 created_ms)
check "the SNG's created_ms $C1 is the wall clock of the create ($T0..$T1)" \
    test "$C1" -ge "$T0" -a "$C1" -le "$T1"
check "the meta has exactly the 15 fields" test "$(e2e_redis hlen '{croupier:tour:1}:meta')" = 15
check "{croupier:tours}:all scores 1 with created_ms" \
    test "$(e2e_redis zscore '{croupier:tours}:all' 1)" = "$C1"
check "{croupier:tours}:live holds 1" test "$(e2e_redis sismember '{croupier:tours}:live' 1)" = 1
check "{croupier:tours}:seq is 1" test "$(e2e_redis get '{croupier:tours}:seq')" = 1
check "the log has one event: created" \
    test "$(e2e_redis --raw xrange '{croupier:tour:1}:log' - + | tail -n 2 | tr '\n' ' ')" = "event created "

T0=$(now_ms)
ctl tour create --structure "$MTT" --name "Sunday 100" --start-in-seconds 3600 --json
T1=$(now_ms)
check "create MTT --json: id 2, name, format (exit $RC: $ERR)" \
    test "$(j '(d["id"], d["name"], d["format"], d["status"])')" = "(2, 'Sunday 100', 'mtt', 'registering')"
C2=$(meta 2 created_ms)
check "the MTT's meta: name, format, structure (compacted file)" \
    test "$(meta 2 name)|$(meta 2 format)|$(meta 2 structure)" \
    = "Sunday 100|mtt|$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")))' "$MTT")"
check "the MTT's start_at_ms is created_ms + 3600 s ($C2 in $T0..$T1)" \
    test "$(meta 2 start_at_ms)" = "$((C2 + 3600000))" -a "$C2" -ge "$T0" -a "$C2" -le "$T1"
check "the MTT's counters 0, cursor 0-0, status registering" \
    test "$(for f in started_ms ended_ms clock_ms level entries players pool cursor status; do printf '%s ' "$(meta 2 $f)"; done)" \
    = "0 0 0 0 0 0 0 0-0 registering "
check "the MTT is in :all and :live, its log says created" \
    test "$(e2e_redis zscore '{croupier:tours}:all' 2) $(e2e_redis sismember '{croupier:tours}:live' 2) $(e2e_redis --raw xrange '{croupier:tour:2}:log' - + | tail -n 1)" \
    = "$C2 1 created"

# ---- create refused: nothing written -----------------------------------------------------------
KEYS0=$(e2e_redis --raw keys '*' | sort | tr '\n' ' ')
expect 2 "a refused structure" tour create --structure "$BADS"
check "its sentence names the field" has "$ERR" "levels[1].big_blind"
expect 2 "an MTT without --start-in-seconds" tour create --structure "$MTT"
check "... says it needs --start-in-seconds" has "$ERR" "--start-in-seconds"
expect 2 "an SNG with --start-in-seconds" tour create --structure "$SNG" --start-in-seconds 60
expect 2 "create without --structure" tour create
expect 2 "a structure file that does not exist" tour create --structure "$E2E_DIR/none.json"
expect 2 "--start-in-seconds not a number" tour create --structure "$MTT" --start-in-seconds 1h
expect 2 "--start-in-seconds negative" tour create --structure "$MTT" --start-in-seconds -5
expect 2 "an empty --name" tour create --structure "$SNG" --name ""
check "nothing was written by the refused creates" \
    test "$(e2e_redis --raw keys '*' | sort | tr '\n' ' ')|$(e2e_redis get '{croupier:tours}:seq')" = "$KEYS0|2"

# ---- list / show -------------------------------------------------------------------------------
ctl tour list --json
check "list --json: newest first, 2 then 1, with their fields (exit $RC: $ERR)" \
    test "$(j '[(t["id"], t["name"], t["format"], t["status"], t["entries"], t["players"], t["pool"], t["owner"]) for t in d["tournaments"]]')" \
    = "[(2, 'Sunday 100', 'mtt', 'registering', 0, 0, 0, None), (1, 'Tournament 1', 'sng', 'registering', 0, 0, 0, None)]"
ctl tour list --json --limit 1
check "list --limit 1: only 2, total 2" test "$(j '([t["id"] for t in d["tournaments"]], d["total"])')" = "([2], 2)"
# An owner: the owner key exists and the meta names the director.
e2e_redis set '{croupier:tour:2}:owner' token-abc px 60000 >/dev/null
e2e_redis hset '{croupier:tour:2}:meta' owner_id director-7 >/dev/null
e2e_redis set '{croupier:tour:2}:epoch' 4 >/dev/null
ctl tour list
check "list prints a table: header, 2 before 1, the owner, the MTT's start time" \
    bash -c '[[ "$1" == ID*NAME*FORMAT*STATUS*ENTRIES*LEFT*POOL*START*OWNER* ]] &&
             [[ "$1" == *"Sunday 100"*mtt*director-7*"Tournament 1"*sng*"when full"* ]] &&
             [[ "$1" == *"$2"* ]]' _ "$OUT" "$(date -u -d "@$((C2 / 1000 + 3600))" '+%Y-%m-%d %H:%M:%S')"
# Entries as the director writes them (tour_director.h), and more events.
e2e_redis hset '{croupier:tour:2}:entries' \
    11 '{"entry":2,"entries":1,"stack":20000,"state":"playing","paid":100,"fees":10,"place":0,"prize":0}' \
    12 '{"entry":1,"entries":2,"stack":0,"state":"busted","paid":200,"fees":20,"place":3,"prize":0,"item":"ticket:final-2027"}' \
    13 '{"entry":3,"entries":1,"stack":25000,"state":"playing","paid":100,"fees":10,"place":0,"prize":0}' >/dev/null
e2e_redis hset '{croupier:tour:2}:meta' level 1 entries 4 players 2 pool 400 >/dev/null
for i in $(seq 1 25); do
    e2e_redis xadd '{croupier:tour:2}:log' '*' event registered player "$i" >/dev/null
done
ctl tour show 2 --json
check "show --json: meta fields as numbers and the structure as an object (exit $RC: $ERR)" \
    test "$(j '(d["meta"]["id"], d["meta"]["start_at_ms"] - d["meta"]["created_ms"], d["meta"]["structure"]["seats_per_table"], d["meta"]["cursor"])')" \
    = "(2, 3600000, 9, '0-0')"
check "show --json: owner director-7, epoch 4" test "$(j '(d["owner"], d["epoch"])')" = "('director-7', 4)"
check "show --json: summary 9 seats, 20000, 100+10, 4 levels, level index 1's blinds 200/400 ante 400 (bb ante)" \
    test "$(j 'tuple(d["structure_summary"][k] for k in ("seats","stack","buy_in","fee","levels")) + tuple(d["structure_summary"]["current"][k] for k in ("small_blind","big_blind","ante","big_blind_ante"))')" \
    = "(9, 20000, 100, 10, 4, 200, 400, 400, True)"
check "show --json: entries sorted by place then entry (11, 13 in play, 12 3rd)" \
    test "$(j '[(e["player"], e["entry"], e["entries"], e["stack"], e["state"], e["place"]) for e in d["entries"]]')" \
    = "[('11', 2, 1, 20000, 'playing', 0), ('13', 3, 1, 25000, 'playing', 0), ('12', 1, 2, 0, 'busted', 3)]"
check "show --json: the last 20 events, oldest first (players 6..25)" \
    test "$(j '(len(d["events"]), d["events"][0]["player"], d["events"][-1]["player"], d["events"][-1]["event"])')" \
    = "(20, '6', '25', 'registered')"
ctl tour show 2
check "show prints the tournament, its structure, owner, entries and events" \
    bash -c 'for w in "tournament 2 \"Sunday 100\": mtt, registering" "9 seats" "stack 20000" "buy-in 100+10" "4 levels" \
                      "blinds 200/400, ante 400 (big blind ante)" "owner: director-7 (epoch 4)" \
                      "entries 4, players left 2, pool 400" PLAYER*ENTRY*STATE*PLACE*PRIZE "player=25"; do
                 [[ "$1" == *$w* ]] || { echo "missing: $w" >&2; exit 1; }
             done' _ "$OUT"
check "show's entries table lists 11, 13, 12 in that order" \
    test "$(awk '$1 ~ /^1[123]$/ && $3 ~ /^[0-9]+$/ { printf "%s ", $1 }' <<<"$OUT")" = "11 13 12 "
check "show's entries table has an ITEM column: 12's item (docs/tournaments.md \"Items\")" \
    bash -c '[[ "$1" == *PRIZE*ITEM* ]] && [[ "$(grep -E "^12 " <<<"$1")" == *ticket:final-2027* ]]' _ "$OUT"
ctl tour show 2 --json
check "show --json: an entry's item, null without one" \
    test "$(j '[e["item"] for e in d["entries"]]')" = "[None, None, 'ticket:final-2027']"

# ---- a player's item prizes (the director writes them with the place) ---------------------------
e2e_redis hset '{croupier:items}:player:12' \
    '7:1' '{"tournament":7,"place":1,"item":"trophy:gold"}' \
    '2:3' '{"tournament":2,"place":3,"item":"ticket:final-2027"}' >/dev/null
ctl tour items 12 --json
check "items --json: by tournament then place (exit $RC: $ERR)" \
    test "$(j '[(i["tournament"], i["place"], i["item"]) for i in d["items"]]')" \
    = "[(2, 3, 'ticket:final-2027'), (7, 1, 'trophy:gold')]"
ctl tour items 12
check "items prints a table" \
    bash -c '[[ "$1" == *"player 12: 2 item prizes"*TOURNAMENT*PLACE*ITEM*ticket:final-2027*trophy:gold* ]]' _ "$OUT"
ctl tour items 13
check "items of a player without any (exit $RC)" bash -c '[ "$2" = 0 ] && [[ "$1" == *"player 13: 0 item prizes"* ]]' _ "$OUT" "$RC"
expect 2 "items without a player" tour items
expect 2 "items of player 0" tour items 0
ctl tour show 1
check "show of the SNG: starts when full, level 1 blinds 10/20, no owner" \
    bash -c '[[ "$1" == *"starts when full"* && "$1" == *"blinds 10/20"* && "$1" == *"owner: - (epoch -)"* ]]' _ "$OUT"
expect 1 "show of an unknown id" tour show 99
check "... says no tournament 99" has "$ERR" "no tournament 99"

# ---- requests with no director -----------------------------------------------------------------
T0=$(date +%s%N)
expect 1 "register with no director" tour register 1 7 --timeout-ms 400
T1=$(date +%s%N)
REQ=$(reqs 1 | tail -n 1)
check "... says no director answered within 400 ms, queued as $REQ" \
    has "$ERR" "no director answered within 400 ms (is croupier-director running?); the request stays queued as $REQ"
check "... waited about 400 ms ($(((T1 - T0) / 1000000)) ms)" test $(((T1 - T0) / 1000000)) -ge 390
check "the request id is ctl-<16 hex>" bash -c '[[ "$1" =~ ^ctl-[0-9a-f]{16}$ ]]' _ "$REQ"
check "the stream holds op register, req, player 7 (and nothing else)" \
    test "$(e2e_redis --raw xrange '{croupier:tour:1}:in' - + | tail -n 6 | tr '\n' ' ')" = "op register req $REQ player 7 "
expect 1 "cancel with no director, --op-id" tour cancel 1 --reason "no players" --op-id ticket-42 --timeout-ms 200
check "the stream holds op cancel, req ticket-42, by ctl, reason" \
    test "$(e2e_redis --raw xrange '{croupier:tour:1}:in' - + | tail -n 8 | tr '\n' '|')" = "op|cancel|req|ticket-42|by|ctl|reason|no players|"
expect 1 "register in an unknown tournament" tour register 99 7
check "... says no tournament 99 and writes no stream" \
    test "$(has "$ERR" "no tournament 99" && echo y)$(e2e_redis exists '{croupier:tour:99}:in')" = y0

# ---- requests answered (the test plays the director) --------------------------------------------
director_answers 1 '{"req":"REQ","op":"register","ok":true,"code":"OK","entry":5}'
ctl tour register 1 7
wait "$ANSWERER"
check "an ok answer: exit 0, 'registered player 7 in tournament 1 (entry 5)' (exit $RC: $OUT$ERR)" \
    test "$RC|$OUT" = "0|registered player 7 in tournament 1 (entry 5)"
check "the reply list was consumed" test "$(e2e_redis --scan --pattern '{croupier:tour:1}:reply:*' | wc -l)" = 0
director_answers 1 '{"req":"REQ","op":"register","ok":false,"code":"TOURNAMENT_FULL"}'
ctl tour register 1 8
wait "$ANSWERER"
check "a refusal: exit 1, 'refused: TOURNAMENT_FULL' (exit $RC: $OUT$ERR)" \
    test "$RC|$(has "$ERR" "refused: TOURNAMENT_FULL" && echo y)" = "1|y"
director_answers 1 '{"req":"REQ","op":"register","ok":false,"code":"INSUFFICIENT_FUNDS"}'
ctl tour register 1 9 --json
wait "$ANSWERER"
check "a refusal --json: the answer printed, exit 1 (exit $RC: $OUT)" \
    test "$RC|$(j '(d["ok"], d["code"], d["req"].startswith("ctl-"))')" = "1|(False, 'INSUFFICIENT_FUNDS', True)"
director_answers 1 '{"req":"REQ","op":"unregister","ok":true,"code":"OK"}'
ctl tour unregister 1 7 --op-id unreg-1 --json
wait "$ANSWERER"
check "unregister --json --op-id: the answer with req unreg-1, exit 0 (exit $RC: $OUT$ERR)" \
    test "$RC|$(j '(d["req"], d["op"], d["ok"], d["code"])')" = "0|('unreg-1', 'unregister', True, 'OK')"
check "... its request in the stream: op unregister req unreg-1 player 7" \
    test "$(e2e_redis --raw xrange '{croupier:tour:1}:in' - + | tail -n 6 | tr '\n' ' ')" = "op unregister req unreg-1 player 7 "
director_answers 2 '{"req":"REQ","op":"cancel","ok":true,"code":"OK"}'
ctl tour cancel 2 --reason "server maintenance"
wait "$ANSWERER"
check "cancel answered ok: 'cancelled tournament 2' (exit $RC: $OUT$ERR)" test "$RC|$OUT" = "0|cancelled tournament 2"
# A tournament that is over: nobody reads its stream, ctl answers TOURNAMENT_OVER itself.
e2e_redis hset '{croupier:tour:2}:meta' status cancelled >/dev/null
N2=$(e2e_redis xlen '{croupier:tour:2}:in')
ctl tour register 2 11
check "register to a cancelled tournament: exit 1, TOURNAMENT_OVER, nothing queued (exit $RC: $ERR)" \
    test "$RC|$(has "$ERR" "TOURNAMENT_OVER" && echo y)|$(e2e_redis xlen '{croupier:tour:2}:in')" = "1|y|$N2"
director_answers 1 'not json'
ctl tour register 1 10
wait "$ANSWERER"
check "an answer that does not parse: exit 1 with a line (exit $RC: $ERR)" \
    test "$RC|$(has "$ERR" "does not parse" && echo y)" = "1|y"

# ---- bad arguments (exit 2, nothing queued) -----------------------------------------------------
N0=$(e2e_redis xlen '{croupier:tour:1}:in')
expect 2 "tour alone" tour
expect 2 "an unknown tour command" tour start 1
expect 2 "show without an id" tour show
expect 2 "show with a bad id" tour show abc
expect 2 "show of id 0" tour show 0
expect 2 "list with an argument" tour list 3
expect 2 "register without a player" tour register 1
expect 2 "register player 0" tour register 1 0
expect 2 "register player -3" tour register 1 -3
expect 2 "register player 07 (leading zero)" tour register 1 07
expect 2 "register player 2^64" tour register 1 18446744073709551616
expect 2 "register player x1" tour register 1 x1
expect 2 "register with a bad --op-id" tour register 1 7 --op-id "a b"
expect 2 "register with --reason" tour register 1 7 --reason why
expect 2 "cancel without --reason" tour cancel 1
expect 2 "cancel with a control character in --reason" tour cancel 1 --reason "$(printf 'a\tb')"
expect 2 "show with --structure" tour show 1 --structure "$SNG"
expect 2 "list with --op-id" tour list --op-id x
expect 2 "--name outside tour" servers --name x
expect 2 "--timeout-ms out of range" tour register 1 7 --timeout-ms 5
check "nothing was queued by the bad arguments" test "$(e2e_redis xlen '{croupier:tour:1}:in')" = "$N0"

# ---- --money-by-entity: refused for now (docs/tournaments.md "Tournaments by entity") -------------
# Without --redis-cluster as every binary refuses it; with it, as not built yet: one line, exit 2,
# before anything is sent (the cluster address below is nobody's).
NOBODY="127.0.0.1:$(e2e_free_port)"
OUT=$("$CTL" --money-by-entity tour list 2>&1)
RC=$?
check "ctl tour --money-by-entity without --redis-cluster: exit 2 ($OUT)" \
    test "$RC" = 2 -a "$OUT" = "croupier-ctl: --money-by-entity needs --redis-cluster"
OUT=$("$CTL" --redis-cluster "$NOBODY" --money-by-entity tour list 2>&1)
RC=$?
check "ctl tour --money-by-entity on a cluster: not built yet, exit 2 ($OUT)" \
    test "$RC" = 2 -a "$OUT" = 'croupier-ctl: tour: the tournaments by entity are not built yet (docs/tournaments.md "Tournaments by entity")'
DIRECTOR=$BUILD/tournament/croupier-director
OUT=$("$DIRECTOR" --money-by-entity --health-listen 127.0.0.1:0 2>&1)
RC=$?
check "director --money-by-entity without --redis-cluster: exit 2 ($OUT)" \
    test "$RC" = 2 -a "$OUT" = "croupier-director: --money-by-entity needs --redis-cluster"
OUT=$("$DIRECTOR" --redis-cluster "$NOBODY" --money-by-entity --health-listen 127.0.0.1:0 2>&1)
RC=$?
check "director --money-by-entity on a cluster: not built yet, exit 2 ($OUT)" \
    test "$RC" = 2 -a "$OUT" = 'croupier-director: --money-by-entity: the tournaments by entity are not built yet (docs/tournaments.md "Tournaments by entity")'

# ---- unreachable Redis -------------------------------------------------------------------------
OUT=$("$CTL" --redis "127.0.0.1:$(e2e_free_port)" tour list 2>&1)
RC=$?
check "Redis unreachable: exit 1 ($OUT)" test "$RC" = 1

if [ $FAILS -gt 0 ]; then
    e2e_log "$FAILS check(s) failed (work dir $E2E_DIR)"
    exit 1
fi
e2e_log "all tour checks passed"
