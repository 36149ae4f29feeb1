#!/usr/bin/env bash
# End-to-end test (issue 29, docs/tournaments.md "Match halls", docs/rules/match-halls.md): a Dou
# Dizhu match of BOTS (96) bots -- 打立出局 to 18, then 定局积分 to the final -- on three
# traditional-engine servers and two gateways. While it plays, every game server rolls (a new pod
# ready, then the old one's preStop and SIGTERM: its tables handed over between deals), a gateway
# rolls (the bots follow the endpoints), one game server is SIGKILLed (its claims expire and
# other servers deal the deals it was playing again) and the director that owns the match is
# SIGKILLed (the standby takes it over).
#
# Checks: the match finishes; every entrant has a place and the winner place 1; the prizes paid
# equal the buy-ins and the fees are the house's; wallets + rake + pools equal what was seeded;
# an independent check recomputes every player's stage scores from the deals' hand histories
# (result x base; the carry-over of docs/rules/match-halls.md) and finds the director's; no deal
# recorded twice; the median wait between a player's deals is under 1.5 s (players come to their
# next table at once; a deal waits at most 3 s for them); no bot saw a torn deal or an unexpected
# error, every bot learned its place.
#
# HALL=swiss: a Guandan Swiss match of BOTS (32) bots -- 8 tables of 4, 3 rounds of two deals --
# through the same faults; besides the checks above, every deal seats every player once at a
# table of 4 (partners 0 + 2 against 1 + 3, their results equal and opposite), and every player's
# match points are those of his round scores (win 3, draw 2, loss 1; docs/rules/match-halls.md
# "瑞士移位").
#
#   tests/e2e/match_hall.sh BUILD_DIR [SOURCE_DIR]
# Env: HALL (rising | swiss; rising), BOTS (96 rising, 32 swiss), CROUPIER_KEEP_LOGS=1 keeps the
# work dir.
set -u
BUILD=$(cd "${1:?usage: match_hall.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/croupier-match-hall.XXXXXX")
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
HALL=${HALL:-rising}
case $HALL in
rising) GAME=doudizhu BOTS=${BOTS:-96} ;;
swiss) GAME=guandan BOTS=${BOTS:-32} ;;
*) echo "HALL must be rising or swiss" >&2; exit 2 ;;
esac
BASE=9600000
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
meta() { e2e_tour_meta "$1"; }
hosting() { e2e_tour_hosting "$1"; }
deals() { e2e_redis xrange "{croupier:tour:$ID}:log" - + | grep -c '^match_deal$'; }

e2e_secret
e2e_redis_start
e2e_director_start dir-a --claim-ttl-ms 1500 --scan-ms 100
e2e_director_start dir-b --claim-ttl-ms 1500 --scan-ms 100
for n in game-1 game-2 game-3; do game_pod "$n"; done
gate_pod gate-a
gate_pod gate-b
e2e_seed_wallets $BASE "$BOTS" 100000
sum0=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))

# 打立出局 from 1,000 with a base of 10 growing 25 % every 3 s, out below 20 x base: the line
# passes the field within about 45 s; the 18 left play 定局积分 rounds of 2 deals.
if [ "$HALL" = rising ]; then
    cat >"$E2E_DIR/structure.json" <<EOF
{"format": "match", "game": "doudizhu", "buy_in": 100, "fee": 10,
 "min_entrants": $BOTS, "max_entrants": $BOTS, "stages": [
 {"format": "rising", "seats": 3, "start_score": 1000, "base_score": 10, "growth_pct": 25,
  "growth_ms": 3000, "out_pct": 2000, "advance": 18},
 {"format": "fixed", "seats": 3, "deals_per_round": 2}]}
EOF
else # Swiss: 3 rounds of one deal at tables of 4
    cat >"$E2E_DIR/structure.json" <<EOF
{"format": "match", "game": "guandan", "buy_in": 100, "fee": 10,
 "min_entrants": $BOTS, "max_entrants": $BOTS, "stages": [
 {"format": "swiss", "seats": 4, "rounds": 3, "deals_per_round": 2}]}
EOF
fi
ID=$("$BUILD/tools/croupier-ctl" --redis "127.0.0.1:$REDIS_PORT" --json tour create \
    --name "e2e match" --structure "$E2E_DIR/structure.json" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
    e2e_die "croupier-ctl tour create failed"
TOUR_ID=$ID
e2e_log "match $ID: $BOTS bots, starts when full"

"$BUILD/bots/croupier-bot" --gateways "@$E2E_DIR/gateways" --bots "$BOTS" --game "$GAME" \
    --engine traditional --tournament "$ID" --seconds 600 --player-base $BASE \
    --token-secret-file "$E2E_DIR/secret" --report "$E2E_DIR/report.json" \
    >"$E2E_DIR/bots.log" 2>&1 &
BOT_PID=$!
E2E_PIDS+=($BOT_PID)

wait_status() { e2e_tour_wait_status "$@"; }
check "the match starts with every bot registered" wait_status running 60
check "every bot is an entrant ($(meta entries) of $BOTS)" test "$(meta entries)" -eq "$BOTS"
sleep 6
e2e_log "deals so far $(deals); tables hosted: game-1 $(hosting game-1), game-2 $(hosting game-2), game-3 $(hosting game-3)"
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
check "still running after the rolls ($(deals) deals; the faults below strike a match in play)" \
    test "$(meta status)" = running
victim=game-4
for g in game-5 game-6; do [ "$(hosting $g)" -gt "$(hosting $victim)" ] && victim=$g; done
kill -KILL "${POD_PID[$victim]}"
e2e_log "$victim SIGKILLed with $(hosting $victim) tables (stage $(meta match_stage))"
owner=$(meta owner_id)
kill -KILL "${POD_PID[$owner]}"
e2e_log "director $owner (the match's owner) SIGKILLed"
check "the match finishes" wait_status finished "${FINISH_S:-300}"
if [ "$(meta status)" != finished ]; then
    e2e_redis hgetall "{croupier:tour:$ID}:meta" | paste - - | grep -v structure
    e2e_redis hgetall "{croupier:tour:$ID}:tables" | paste - - | grep -v '"closed":true'
    e2e_redis xrevrange "{croupier:tour:$ID}:log" + - COUNT 20 | paste - - - - - | tail -20
fi
wait "$BOT_PID"
bot_status=$?

# Places, prizes, money.
read -r entrants firsts placed prizes <<<"$(e2e_redis hgetall "{croupier:tour:$ID}:entries" |
    python3 -c '
import json, sys
lines = sys.stdin.read().split("\n")
es = [json.loads(v) for v in lines[1::2] if v]
print(len(es), sum(1 for e in es if e.get("place") == 1), sum(1 for e in es if e.get("place", 0) >= 1),
      sum(e.get("prize", 0) for e in es))')"
check "a place for every entrant ($placed of $entrants), a winner ($firsts)" \
    test "$placed" -eq "$entrants" -a "$firsts" -ge 1 -a "$entrants" -eq "$BOTS"
check "the prizes paid equal the buy-ins ($prizes, $((BOTS * 100)))" test "$prizes" -eq $((BOTS * 100))
fees=$(e2e_redis get '{croupier:money}:rake:tournament')
check "the fees are the house's (${fees:-0}, $((BOTS * 10)))" test "${fees:-0}" -eq $((BOTS * 10))
check "no prize pool is left" test "$(e2e_redis exists "{croupier:money}:tourpool:$ID")" -eq 0
sum1=$(($(e2e_wallet_sum) + $(e2e_rake_sum)))
check "wallets + rake + pools equal what was seeded ($sum0 -> $sum1)" test "$sum0" -eq "$sum1"

# The scores, recomputed from the deals' hand histories alone (result x base per deal; the
# carry-over into the next stage) against the stages the director kept.
e2e_redis --raw xrange "{croupier:history:$GAME}:stream" - + >"$E2E_DIR/history.txt"
e2e_redis --raw hget "{croupier:tour:$ID}:stages" 0 >"$E2E_DIR/stage0.json"
e2e_redis --raw hget "{croupier:tour:$ID}:stages" 1 >"$E2E_DIR/stage1.json"
verdict=$(python3 - "$E2E_DIR" "$ID" "$(deals)" "$HALL" <<'EOF'
import json, math, sys
d, tid, logged, hall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
recs, rounds = [], set()
for line in open(d + "/history.txt"):
    line = line.strip()
    if line.startswith("{") and '"match"' in line:
        r = json.loads(line)
        if r.get("match", {}).get("id") == tid and r["outcome"] == "completed":
            recs.append(r)
            rounds.add(r["round"])
bad = []
if len(rounds) != len(recs):
    bad.append("a_deal_recorded_twice")
if len(recs) != logged:
    bad.append("%d_records_for_%d_deals" % (len(recs), logged))
got = [{}, {}]
for r in recs:
    m = r["match"]
    res = {x["seat"]: x["delta"] for x in r["results"]}
    if sum(res.values()) != 0:
        bad.append("deal_%s_sums_to_%d" % (r["round"], sum(res.values())))
    for s in r["seats"]:
        p = int(s["player"])
        got[m["stage"]][p] = got[m["stage"]].get(p, 0) + res.get(s["seat"], 0) * m["base"]
s0 = json.load(open(d + "/stage0.json"))
if hall == "swiss":
    # Every round: each player once, at a table of 4, partners equal and opposite; the scores
    # (from 0) and the match points of the round scores.
    rnd = {}
    absent_deals = {}  # (round, player): deals he was absent from
    seen_deal = set()
    for r in recs:
        m = r["match"]
        res = {x["seat"]: x["delta"] for x in r["results"]}
        if not (res.get(0) == res.get(2) == -res.get(1) == -res.get(3) != 0):
            bad.append("deal_%s_partners_%s" % (r["round"], sorted(res.items())))
        for s in r["seats"]:
            key = (m["round"], int(s["player"]))
            once = (m["round"], m["deal"], int(s["player"]))
            if once in seen_deal:
                bad.append("player_%d_twice_in_round_%d_deal_%d" % (once[2], once[0], once[1]))
            seen_deal.add(once)
            rnd[key] = rnd.get(key, 0) + res.get(s["seat"], 0) * m["base"]
            if s["seat"] in m.get("absent", []):
                absent_deals[key] = absent_deals.get(key, 0) + 1
    cfg = s0["config"]
    # absent from every deal of a round: mp_absent for it
    away = {k for k, n in absent_deals.items() if n == cfg.get("deals_per_round", 6)}
    # The seating of every round by the ranking before it (docs/rules/match-halls.md "The
    # ranking", "Seating"): match points, Buchholz, stage score, the seeded draw; table =
    # ceil(rank / 4), seats in rank order. Recomputed from the histories alone.
    draw = {p["id"]: int(p["draw"]) for p in s0["players"]}
    seats_of = {}  # round -> table -> {seat: player}
    for r in recs:
        m = r["match"]
        for st in r["seats"]:
            seats_of.setdefault(m["round"], {}).setdefault(m["table"], {})[st["seat"]] = int(st["player"])
    mpt = {p: 0 for p in draw}
    score = {p: 0 for p in draw}
    opp = {p: [] for p in draw}
    def outcome(v):
        return cfg.get("mp_win", 3) if v > 0 else cfg.get("mp_draw", 2) if v == 0 else cfg.get("mp_loss", 1)
    for rn in range(1, cfg.get("rounds", 3) + 1):
        ranked = sorted(draw, key=lambda p: (-mpt[p], -sum(mpt[o] for o in opp[p]), -score[p], draw[p]))
        tables = seats_of.get(rn, {})
        for t, byseat in tables.items():
            want = ranked[(t - 1) * 4:(t - 1) * 4 + 4]
            got_seats = [byseat.get(k) for k in range(4)]
            if got_seats != want:
                bad.append("round_%d_table_%d_seats_%s_not_%s" % (rn, t, got_seats, want))
        for t, byseat in tables.items():
            for k, p in byseat.items():
                v = rnd.get((rn, p), 0)
                mpt[p] += cfg.get("mp_absent", 0) if (rn, p) in away else outcome(v)
                score[p] += v
                opp[p] += [byseat[j] for j in byseat if j % 2 != k % 2]
    for p in s0["players"]:
        mp = 0
        for r in range(1, cfg.get("rounds", 3) + 1):
            if (r, p["id"]) not in rnd:
                bad.append("player_%d_missing_in_round_%d" % (p["id"], r))
                continue
            v = rnd[(r, p["id"])]
            if (r, p["id"]) in away:
                mp += cfg.get("mp_absent", 0)
                continue
            mp += cfg.get("mp_win", 3) if v > 0 else cfg.get("mp_draw", 2) if v == 0 else cfg.get("mp_loss", 1)
        if p["mp"] != mp:
            bad.append("player_%d_mp_%d_not_%d" % (p["id"], p["mp"], mp))
        if p["score"] != got[0].get(p["id"], 0):
            bad.append("player_%d_score_%d_not_%d" % (p["id"], p["score"], got[0].get(p["id"], 0)))
    print(len(recs), len(s0["players"]), 0, len(bad), (bad[:3] or ["-"])[0])
    sys.exit(0)
s1 = json.load(open(d + "/stage1.json"))
k = s0["config"].get("carry_sqrt_permille", 10000)
c = s0["config"].get("carry_neg_permille", 1000)
def carry(s):
    if s > 0:
        return math.isqrt(s * k * k) // 1000
    return -((-s * c) // 1000) if s < 0 else 0
# Players come to their next table at once (the MOVED_TABLE push; a deal waits up to 3 s for
# them): the median wait from a deal's end to the player's next deal is well under that.
waits = []
byp = {}
for r in recs:
    if r["match"]["stage"] == 0 and "ended_ms" in r["match"]:
        for st in r["seats"]:
            byp.setdefault(st["player"], []).append((r["ts"], r["match"]["ended_ms"]))
for ds in byp.values():
    ds.sort()
    waits += [c - b for (a, b), (c, d2) in zip(ds, ds[1:])]
waits.sort()
if waits and waits[len(waits) // 2] >= 1500:
    bad.append("median_wait_between_deals_%d_ms" % waits[len(waits) // 2])
score0 = {}
for p in s0["players"]:
    score0[p["id"]] = p["score"]
    want = 1000 + got[0].get(p["id"], 0)
    if p["score"] != want:
        bad.append("stage0_player_%d_%d_not_%d" % (p["id"], p["score"], want))
for p in s1["players"]:
    want = carry(score0[p["id"]]) + got[1].get(p["id"], 0)
    if p["score"] != want:
        bad.append("stage1_player_%d_%d_not_%d" % (p["id"], p["score"], want))
print(len(recs), len(s0["players"]), len(s1["players"]), len(bad), (bad[:3] or ["-"])[0])
EOF
)
read -r nrecs n0 n1 nbad first_bad <<<"$verdict"
want1=$([ "$HALL" = rising ] && echo 18 || echo 0)
check "the scores recomputed from $nrecs deals' histories are the director's (stage 0: $n0 players, stage 1: $n1; $nbad bad: $first_bad)" \
    test "${nrecs:-0}" -gt 0 -a "${nbad:-1}" -eq 0 -a "${n0:-0}" -eq "$BOTS" -a "${n1:-0}" -eq "$want1"

# What the bots saw.
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$E2E_DIR/report.json" "$1"; }
if [ -s "$E2E_DIR/report.json" ]; then
    check "bots: exit status 0 ($bot_status)" test "$bot_status" -eq 0
    check "bots: torn deals = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0 ||
        e2e_torn_detail "$E2E_DIR/report.json" "$E2E_DIR/bots.log"
    check "bots: unexpected errors = 0 ($(num 'd["errors"]'))" \
        test "$(num 'sum(e["unexpected"] for e in d["errors"].values())')" -eq 0
    check "bots: every bot learned its place ($(num 'len(d["tournament"]["places"])'))" \
        test "$(num 'len(d["tournament"]["places"])')" -eq "$BOTS"
else
    check "bots wrote their report (log $E2E_DIR/bots.log)" false
fi
for p in game-4 game-5 game-6; do
    [ "$p" != "$victim" ] && e2e_pod_terminate "$p"
done
for p in "${GATES[@]}"; do e2e_pod_terminate "$p"; done
exit $fail
