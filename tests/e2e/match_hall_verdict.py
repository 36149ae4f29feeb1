#!/usr/bin/env python3
"""The match halls' independent check (tests/e2e/match_hall.sh): every player's stage scores,
and for a Swiss stage every round's seating and every player's match points, recomputed from
the deals' hand histories alone by docs/rules/match-halls.md, against what the director kept.

    match_hall_verdict.py DIR MATCH_ID LOGGED_DEALS HALL
DIR holds history-HALL.txt (the game's history stream, XRANGE --raw), stage0-HALL.json and, for
rising, stage1-HALL.json. Prints: deals players0 players1 bad first_bad.
"""
import json, math, sys
d, tid, logged, hall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
recs, rounds = [], set()
for line in open(d + "/history-%s.txt" % hall):
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
s0 = json.load(open(d + "/stage0-%s.json" % hall))
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
s1 = json.load(open(d + "/stage1-%s.json" % hall))
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
