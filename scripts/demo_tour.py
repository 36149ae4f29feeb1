#!/usr/bin/env python3
"""The demo's tournament facts (scripts/demo-cluster.sh), gathered from Redis after every pod exited.

usage: demo_tour.py [--cluster] REDIS_PORT RUN_DIR STATUS...

--cluster: the keys are laid out as on a Redis Cluster, every tournament key and the hand
histories in the money slot (common/keytag.h; docs/tournaments.md "On a Redis Cluster"), and
REDIS_PORT is that slot's master.

RUN_DIR/tours.tsv names the demo's tournaments ("NAME ID FORMAT BOTS FIRST_PLAYER" a line);
STATUS is each tournament fleet's croupier-bot exit status, in that order. Prints lines for
RUN_DIR/final.tsv (scripts/demo_report.py makes the checks):

  tour       JSON: name, id, format, bots, bot exit status; from the director's records
             (docs/tournaments.md "The director"): status, entrants, places given, winners
             (place 1), the prizes paid, the pool's buy-ins and overlay, whether the prize pool
             key is left; players left, level and open tables (the state, for a tournament not
             over); its last log events; the hands re-dealt (after a handover or a crash); from
             the hand histories ({croupier:history:holdem}:stream, records with this
             tournament's "tournament" object, docs/hand-history.md) replayed player by player:
             completed hands, hands that do not add up (with the first), the chips at the end,
             the biggest stack, the tables played on
  tour_fees  RAKE EXPECTED: {croupier:money}:rake:tournament and the entries x fee of every
             tournament of the run (the demo's are the only ones; an entry counts its re-entries)
"""
import json
import os
import subprocess
import sys

cluster = len(sys.argv) > 1 and sys.argv[1] == "--cluster"
port, run, statuses = sys.argv[1 + cluster], sys.argv[2 + cluster], sys.argv[3 + cluster:]


def tkey(tid, what):
    """A tournament's key (tour_director.h): {croupier:tour:ID}:WHAT, or on a cluster
    {croupier:money}:tour:ID:WHAT."""
    return ("{croupier:money}:tour:%d:%s" if cluster else "{croupier:tour:%d}:%s") % (tid, what)


HISTORY = "{croupier:money}:history:holdem:stream" if cluster else "{croupier:history:holdem}:stream"


def redis(*args):
    return subprocess.run(["redis-cli", "-p", port] + list(args), capture_output=True,
                          text=True).stdout.splitlines()


def hash_of(key):
    lines = redis("hgetall", key)
    return dict(zip(lines[0::2], lines[1::2]))


tours = []
with open(os.path.join(run, "tours.tsv")) as f:
    for line in f:
        r = line.rstrip("\n").split("\t")
        if len(r) >= 5:
            tours.append(r)

# Every hold'em hand history once (the cash tables' too; the tournament's are picked below).
history = {}
for line in redis("--raw", "xrange", HISTORY, "-", "+"):
    line = line.strip()
    if line.startswith("{") and '"tournament"' in line:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        tid = r.get("tournament", {}).get("id")
        if r.get("outcome") == "completed":
            history.setdefault(tid, []).append(r)

fees_expected = 0
for i, (name, tid, fmt, bots, base) in enumerate(tours):
    tid = int(tid)
    meta = hash_of(tkey(tid, "meta"))
    try:
        structure = json.loads(meta.get("structure", "{}"))
    except ValueError:
        structure = {}
    starting = int(structure.get("starting_stack", 0))
    entries = []
    for player, v in hash_of(tkey(tid, "entries")).items():
        e = json.loads(v)
        e["player"] = player
        entries.append(e)
    n_entries = sum(int(e.get("entries", 1)) for e in entries)
    fees_expected += n_entries * int(structure.get("fee", 0))
    tables = hash_of(tkey(tid, "tables"))
    open_tables = []
    for t, v in sorted(tables.items()):
        try:
            d = json.loads(v)
        except ValueError:
            continue
        if not d.get("closed"):
            open_tables.append(t)
    log = redis("xrevrange", tkey(tid, "log"), "+", "-", "COUNT", "8")
    # xrevrange prints id, then field and value lines; keep the event names with their ids
    events = [log[j + 2] for j in range(len(log) - 2) if log[j + 1] == "event"][:8]

    redeals = sum(1 for l in redis("xrange", tkey(tid, "log"), "-", "+")
                  if l == "redeal")
    # the hand histories, replayed player by player
    stack, bad, tables_played = {}, [], []
    for r in history.get(tid, []):
        res = {x["seat"]: x["delta"] for x in r.get("results", [])}
        if sum(res.values()) != 0:
            bad.append("hand %s: results sum to %d" % (r["round"], sum(res.values())))
        for s in r.get("seats", []):
            p = s["player"]
            want = stack.get(p, starting)
            if s["stack"] != want:
                bad.append("player %s starts hand %s with %d, had %d"
                           % (p, r["round"], s["stack"], want))
            stack[p] = s["stack"] + res.get(s["seat"], 0)
            if stack[p] < 0:
                bad.append("player %s below 0 after hand %s" % (p, r["round"]))
        tables_played.append(r["tournament"].get("table"))
    players = len(entries)
    out = {
        "name": name, "id": tid, "format": fmt, "bots": int(bots),
        "bot_status": int(statuses[i]) if i < len(statuses) and statuses[i] != "" else None,
        "status": meta.get("status", "?"), "level": meta.get("level"),
        "players_left": sum(1 for e in entries
                            if e.get("state") in ("playing", "waiting", "busted")), "entries": n_entries, "entrants": players,
        "placed": sum(1 for e in entries if int(e.get("place", 0)) >= 1),
        "winners": sum(1 for e in entries if int(e.get("place", 0)) == 1),
        "prizes": sum(int(e.get("prize", 0)) for e in entries),
        "buy_ins": sum(int(e.get("paid", 0)) for e in entries),
        "overlay": int(meta.get("overlay") or 0), "pool": int(meta.get("pool") or 0),
        "pool_key": int((redis("exists", "{croupier:money}:tourpool:%d" % tid) or ["0"])[0]),
        "places": {e["player"]: int(e.get("place", 0)) for e in entries},
        "open_tables": open_tables, "last_events": events, "redeals": redeals,
        "hands": len(history.get(tid, [])), "bad_hands": len(bad),
        "first_bad": bad[0] if bad else "",
        "chips": sum(stack.values()) + starting * (players - len(stack)),
        "chips_expected": starting * players,
        "biggest": max(stack.values() or [0]),
        "tables_played": len(set(tables_played)),
        "last_tables": len(set(tables_played[-5:])),
    }
    print("tour\t%s" % json.dumps(out, sort_keys=True))
rake = (redis("get", "{croupier:money}:rake:tournament") or [""])[0]
print("tour_fees\t%d\t%d" % (int(rake or 0), fees_expected))
