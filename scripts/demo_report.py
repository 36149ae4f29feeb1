#!/usr/bin/env python3
"""The demo's zero-loss report (scripts/demo-cluster.sh), printed at the end of a run.

usage: demo_report.py RUN_DIR

Reads what the demo collected after the cluster stopped:
  RUN_DIR/final.tsv        tab-separated facts gathered with tests/e2e/lib.sh against Redis and
                           the pods' logs:
                             group  GAME ENGINE BOTS EXIT_STATUS FINISHED MISSING VOIDED SETTLED
                             pod    NAME ENGINE EXIT_REASON
                             money  BEFORE AFTER        (sum of wallets + rake in Redis)
                             accounts GLOB COUNT NONZERO (table chips: seat accounts ts.*)
                             rake NAME CHIPS    (each rake account {croupier:money}:rake:NAME)
                             settle_records N
                             credits APPLIED HOUSE_EXPECTED RECORDS HOUSE TRIED (operator credits)
                             crash    NAME ENGINE HELD_EPOCH SEATS IN_INDEX MS CHIPS VOIDED BY
                                      (a pod the crash step SIGKILLed; a gateway's fields "-")
                             held_index N       (held epochs left in {croupier:money}:held)
                             crash_voids TOTAL KILLED SETTLED (crash-voided hand histories)
                             bot_crash GAME ROUNDS WITH_HISTORY SETTLED (rounds the bots saw
                                      crash-voided)
                             failure TEXT / warning TEXT / fallback TEXT
                             prom_query PORT EXPR / prom_rounds GAME N (--prometheus: the rounds
                                      by game Prometheus scraped from the pods)
                             prom_up POD 0|1 (--prometheus: whether it ever scraped the pod)
                             tour JSON (a tournament: the director's records and its hand
                                      histories replayed, scripts/demo_tour.py)
                             tour_fees RAKE EXPECTED ({croupier:money}:rake:tournament)
                             failover OLD NEW PROMOTED_MS BACK_MS AT_S (--redis-ha), or "-"
                             redis_cluster SEEDS MASTERS (--redis-cluster: the nodes, and the
                                      masters every sum and count read at the end)
                             cluster_failover OLD NEW PROMOTED_MS AT_S (--redis-cluster: the
                                      money slot's master SIGKILLed by the crash step), or "-"
  RUN_DIR/report-GAME.json croupier-bot's report of each group
  RUN_DIR/report-tour-NAME.json croupier-bot --tournament's report of each tournament's fleet
and prints the report with a verdict. Writes RUN_DIR/checks.txt ("ok"/"FAIL"/"warn" lines;
tests/e2e/chart.py copies them into report.md). Exit status 0 when every check passed, 1
otherwise.
"""
import io
import json
import os
import sys

run = sys.argv[1]
# The body is printed after the verdict and the failed checks, so that they come first.
real_stdout, sys.stdout = sys.stdout, io.StringIO()
groups, pods, failures, warnings, fallback, accounts = [], [], [], [], None, []
crashed, bot_crash = [], {}
prom_query, prom_rounds, prom_up = None, {}, {}
failover = None  # --redis-ha: OLD NEW PROMOTED_MS BACK_MS AT_S, or ["-"]
redis_cluster = None  # --redis-cluster: SEEDS MASTERS
cluster_failover = None  # --redis-cluster: OLD NEW PROMOTED_MS AT_S, or ["-"]
tours, tour_fees = [], None
rake = {}  # rake account name -> chips (games by name, "tournament", "credits")
money = settle_records = held_index = crash_voids = credits = None
with open(os.path.join(run, "final.tsv")) as f:
    for line in f:
        r = line.rstrip("\n").split("\t")
        if r[0] == "group":
            groups.append(r[1:])
        elif r[0] == "pod":
            pods.append(r[1:])
        elif r[0] == "money":
            money = (int(r[1]), int(r[2]))
        elif r[0] == "rake":
            rake[r[1]] = int(r[2] or 0)
        elif r[0] == "accounts":
            accounts.append((r[1], int(r[2]), int(r[3])))
        elif r[0] == "settle_records":
            settle_records = int(r[1])
        elif r[0] == "credits":
            credits = tuple(int(x or 0) for x in (r[1:6] + ["0"] * 5)[:5])
        elif r[0] == "crash":
            crashed.append(r[1:])
        elif r[0] == "held_index":
            held_index = int(r[1])
        elif r[0] == "crash_voids":
            crash_voids = tuple(int(x) for x in r[1:4])
        elif r[0] == "bot_crash":
            bot_crash[r[1]] = tuple(int(x) for x in r[2:5])
        elif r[0] == "failure":
            failures.append(r[1])
        elif r[0] == "warning":
            warnings.append(r[1])
        elif r[0] == "fallback":
            fallback = r[1]
        elif r[0] == "prom_query":
            prom_query = (r[1], r[2])
        elif r[0] == "prom_rounds":
            prom_rounds[r[1]] = int(r[2])
        elif r[0] == "prom_up":
            prom_up[r[1]] = int(r[2])
        elif r[0] == "failover":
            failover = r[1:]
        elif r[0] == "redis_cluster":
            redis_cluster = (r + ["", ""])[1:3]
        elif r[0] == "cluster_failover":
            cluster_failover = r[1:]
        elif r[0] == "tour":
            tours.append(json.loads(r[1]))
        elif r[0] == "tour_fees":
            tour_fees = (int(r[1]), int(r[2]))

checks = []  # (ok, text)


def check(ok, text):
    checks.append((bool(ok), text))


reports = {}
for g in groups:
    path = os.path.join(run, "report-%s.json" % g[0])
    try:
        with open(path) as f:
            reports[g[0]] = json.load(f)
    except (OSError, ValueError):
        reports[g[0]] = None

def torn_detail(d):
    """The torn rounds a bot report lists (bot, desk, round id, why), for a failed check's line:
    CI keeps only the FAIL lines."""
    rows = d.get("torn_rounds") or []
    return "".join("; bot %s desk %s round %s: %s" % (r.get("bot"), r.get("desk"),
                                                       r.get("round_id") or "-", r.get("why"))
                   for r in rows[:4])


print("=" * 78)
print("Zero-loss report")
print("=" * 78)
print("Bots (from each croupier-bot's JSON report; games counted per bot seat, so three bots at")
print("one table see one deal three times; 'rounds' are distinct round ids):")
print("  %-9s %-11s %5s %9s %7s %5s %7s %7s %7s %6s %6s" % (
    "game", "engine", "bots", "finished", "voided", "torn", "rounds", "goaways", "reconn",
    "errors", "crashv"))
for game, engine, bots, status, fin, missing, void, settled in groups:
    d = reports[game]
    if d is None:
        print("  %-9s %-11s %5s  (no report: see bot-%s.log)" % (game, engine, bots, game))
        check(False, "%s: croupier-bot wrote its report (exit status %s)" % (game, status))
        continue
    gm = d.get("games", {})
    print("  %-9s %-11s %5s %9s %7s %5s %7s %7s %7s %6s %6s" % (
        game, engine, bots, gm.get("finished"), gm.get("voided"), gm.get("torn"),
        gm.get("distinct", {}).get("finished"), sum(d.get("goaways", {}).values()),
        d.get("reconnects", {}).get("total"), d.get("unexpected_errors"),
        gm.get("crash_voided")))
    check(status == "0", "%s: croupier-bot exit status 0 (was %s)" % (game, status))
    check(gm.get("finished", 0) > 0, "%s: games finished > 0 (%s)" % (game, gm.get("finished")))
    check(gm.get("torn", 1) == 0, "%s: torn games = 0 (%s%s)" % (game, gm.get("torn"),
                                                               torn_detail(d)))
    errs = {k: v for k, v in d.get("errors", {}).items() if v.get("unexpected")}
    check(d.get("unexpected_errors", 1) == 0,
          "%s: client errors other than GoAway reconnects = 0 (%s%s)" % (
              game, d.get("unexpected_errors"), " " + json.dumps(errs) if errs else ""))
    check(int(missing) == 0, "%s: every finished round settled in Redis (%s rounds, %s missing)"
          % (game, fin, missing))
    check(int(settled) == 0, "%s: no voided round settled (%s voided, %s settled)"
          % (game, void, settled))
    expected = {k: v["total"] for k, v in d.get("errors", {}).items()
                if v.get("total") and not v.get("unexpected")}
    if expected:
        print("  %-9s expected refusals/notices: %s" % ("", json.dumps(expected)))


def total(section, key):
    return sum((d or {}).get(section, {}).get(key, 0) for d in reports.values())


moves = total("counters", "moves")
table_moves = total("counters", "table_moves")
match_lost = total("counters", "match_state_lost")
after_goaway = total("reconnects", "after_goaway")
after_loss = total("reconnects", "after_loss")
crash_closings = total("counters", "crash_closings")
crash_voided = total("games", "crash_voided")
print("  (crashv: rounds the bots saw voided because their server was killed -- expected, not"
      " torn)")
print("  table moves off draining and killed game servers: %d; reconnects after a gateway's"
      " GoAway: %d," % (moves, after_goaway))
print("  after a lost connection (the killed gateway): %d; crash closings"
      " (TableClosing{CLOSING_CRASHED}): %d" % (after_loss, crash_closings))
print("  of the moves, whole-table moves (the table moved with its seats and match,"
      " docs/protocol.md): %d; match state lost across them: %d" % (table_moves, match_lost))
if fallback:
    print("  (no bot strategy yet for %s: those bots played the test game instead)" % fallback)
if prom_query:
    print()
    print("Prometheus (Debian's prometheus on http://127.0.0.1:%s, scraping every pod every 1 s):"
          % prom_query[0])
    print("  %s" % prom_query[1])
    print("  %-9s %22s %22s" % ("game", "rounds (Prometheus)", "rounds the bots saw"))
    for game, engine, bots, status, fin, missing, void, settled in groups:
        if game.endswith("-rooms"):
            continue  # a game's rooms: counted with the game
        d = reports.get(game) or {}
        print("  %-9s %22s %22s" % (game, prom_rounds.get(game, "-"),
                                     d.get("games", {}).get("distinct", {}).get("finished", "-")))
    print("  (Prometheus counts every completed round of the servers, the bots the distinct rounds"
          " they saw finish;\n  rounds that ended in a pod's last second before its exit are not"
          " in its last scrape)")
    scraped = [name for name, engine, reason in pods if prom_up.get(name) == 1]
    print("  pods scraped (up == 1 at least once): %d of %d" % (len(scraped), len(pods)))
    check(len(scraped) == len(pods), "Prometheus scraped every pod (%d of %d%s)" % (
        len(scraped), len(pods), "" if len(scraped) == len(pods) else ": not " + ", ".join(
            name for name, engine, reason in pods if name not in scraped)))
    for game, engine, bots, status, fin, missing, void, settled in groups:
        if game.endswith("-rooms"):
            continue  # a game's rooms: counted with the game
        check(prom_rounds.get(game, 0) > 0,
              "%s: Prometheus scraped completed rounds from the pods (%s)" % (
                  game, prom_rounds.get(game, 0)))
check(moves > 0, "the game rollouts moved players to new servers (%d moves)" % moves)
check(table_moves > 0, "the game rollouts moved whole tables (%d players moved with their table)"
      % table_moves)
check(match_lost == 0, "no match state lost across whole-table moves (%d)" % match_lost)
room_groups = [g[0] for g in groups if g[0].endswith("-rooms")]
if room_groups:
    created = total("counters", "rooms_created")
    finished = total("counters", "rooms_finished")
    print("  private rooms (docs/protocol.md): %d created, %d bot seats saw their room finish"
          " (its final scoreboard checked)" % (created, finished))
    check(finished > 0, "private rooms played to their end next to the tables (%d created, %d"
          " finished seats)" % (created, finished))
check(after_goaway > 0, "the gateway rollout sent GoAways and bots reconnected (%d)" % after_goaway)

if failover is not None:
    print()
    if len(failover) == 5:
        print("Redis failover (--redis-ha: a master, two replicas, three Sentinels): at %s s the master"
              " 127.0.0.1:%s was SIGKILLed; Sentinel promoted 127.0.0.1:%s %s ms later; the dead node"
              " was back as a replica after %s ms. Every check below read the new master." % (
                  failover[4], failover[0], failover[1], failover[2], failover[3]))
        check(True, "Redis failed over mid-run (promoted in %s ms) and every check still ran"
              % failover[2])
    else:
        check(False, "Redis failed over mid-run (no promotion was seen)")
if redis_cluster is not None:
    seeds, masters = redis_cluster
    print()
    print("Redis Cluster (--redis-cluster: 3 masters, 3 replicas on loopback; every game server,"
          " gateway and croupier-ctl call")
    print("  with --redis-cluster %s):" % seeds)
    if cluster_failover is not None and len(cluster_failover) == 4:
        print("  at %s s the crash step SIGKILLed the master of the money slot 127.0.0.1:%s; its"
              " replica 127.0.0.1:%s took it over %s ms later." % (
                  cluster_failover[3], cluster_failover[0], cluster_failover[1],
                  cluster_failover[2]))
        check(True, "Redis Cluster: the money slot's master failed over mid-run (replica"
              " promoted in %s ms) and every check still ran" % cluster_failover[2])
    else:
        check(False, "Redis Cluster: the money slot's master failed over mid-run (no replica"
              " took it over)")
    print("  The money sums, the settle records and the hand histories below were read from every"
          " master (%s)." % (", ".join("127.0.0.1:" + m for m in masters.split(",") if m) or "-"))
    check(masters != "", "Redis Cluster: the report read every master (%s)" % (masters or "none"))
    print("  The tournaments ran on it too, every tournament key in the money slot"
          " (docs/tournaments.md \"On a Redis Cluster\").")
print()
print("Pods (exit reason from each pod's log line 'exit reason=...'):")
for name, engine, reason in pods:
    print("  %-16s %-11s exit reason=%s" % (name, engine, reason))
    check(reason == "drained", "pod %s exit reason=drained (%s)" % (name, reason))
for c in crashed:
    print("  %-16s %-11s SIGKILLed by the crash step" % (c[0], c[1]))
for f in failures:
    check(False, f)
for w in warnings:
    print("  warning: %s" % w)

if crashed:
    print()
    print("Crash step (one game server of every engine and one gateway SIGKILLed while the bots"
          " played):")
    for name, engine, member, seats, in_index, ms, chips, voided, by in crashed:
        if engine == "gateway":
            print("  %-16s gateway: its bots reconnected to the other one (%d after a lost"
                  " connection)" % (name, after_loss))
            continue
        print("  %-16s held epoch %s: %s seat accounts at the kill, %s" % (
            name, member, seats, "chips back after %s ms" % ms if ms != "-1" else
            "NOT back within 30 s"))
        print("  %-16s (%s chips returned to wallets, %s rounds voided, by %s)" % (
            "", chips, voided, by))
        check(in_index == "0" and ms != "-1",
              "crash: %s's held epoch %s left {croupier:money}:held -- its chips came back"
              " (%s ms after the kill, %s chips)" % (name, member, ms, chips))
    if crash_voids is not None:
        print("  hand histories voided VOID_SERVER_CRASHED: %d rounds (%d of the killed epochs,"
              " %d settled)" % crash_voids)
        check(crash_voids[1] == crash_voids[0] and crash_voids[2] == 0,
              "every crash-voided round in the hand histories is a killed server's and none"
              " settled (%d rounds, %d of killed epochs, %d settled)" % crash_voids)
    seen = [sum(v[i] for v in bot_crash.values()) for i in range(3)]
    print("  rounds the bots saw crash-voided: %d (%d per bot seat); of them %d have a crash-void"
          % (seen[0], crash_voided, seen[1]))
    print("    hand history, %d had settled just before the kill, %d had not reached Redis"
          " (nothing moved)" % (seen[2], seen[0] - seen[1] - seen[2]))
    check(crash_closings > 0, "crash: the gateways told the killed servers' players"
          " (%d crash closings) and moved them" % crash_closings)
    check(after_loss > 0, "crash: the killed gateway's bots reconnected to another and resumed"
          " (%d)" % after_loss)

if tours:
    print()
    print("Tournaments (docs/tournaments.md; the director's records in Redis, the hand histories"
          " replayed player by player,")
    print("the bots' reports; each played on the hold'em servers through their rollouts and"
          " crash, and the directors' rollout):")
    print("  %-5s %4s %-9s %7s %6s %7s %7s %6s %7s %6s %5s %6s" % (
        "name", "id", "status", "entries", "placed", "prizes", "pool", "hands", "tables",
        "moved", "torn", "errors"))
for t in tours:
    name = "%s %d" % (t["name"], t["id"])
    try:
        with open(os.path.join(run, "report-tour-%s.json" % t["name"])) as f:
            d = json.load(f)
    except (OSError, ValueError):
        d = None
    tr = (d or {}).get("tournament", {})
    gm = (d or {}).get("games", {})
    print("  %-5s %4d %-9s %7d %6d %7d %7d %6d %7d %6s %5s %6s" % (
        t["name"], t["id"], t["status"], t["entries"], t["placed"], t["prizes"],
        t["buy_ins"] + t["overlay"], t["hands"], t["tables_played"],
        tr.get("table_changes", "-"), gm.get("torn", "-"), (d or {}).get("unexpected_errors", "-")))
    if t["status"] != "finished":
        print("  %s NOT finished: status %s, level index %s, players left %s, open tables %s;"
              " last events (newest first): %s" % (
                  name, t["status"], t["level"], t["players_left"],
                  ",".join(t["open_tables"]) or "-", ", ".join(t["last_events"]) or "-"))
    check(t["status"] == "finished", "tournament %s (%s) finished before the end of the run"
          " (status %s, %s players left)" % (name, t["format"], t["status"], t["players_left"]))
    check(t["winners"] == 1 and t["placed"] == t["entrants"] == t["bots"],
          "tournament %s: one place per entrant (%d of %d entrants, %d bots), one winner (%d)"
          % (name, t["placed"], t["entrants"], t["bots"], t["winners"]))
    check(t["prizes"] == t["buy_ins"] + t["overlay"] and t["pool_key"] == 0,
          "tournament %s: the prizes paid are the pool (%d = buy-ins %d + overlay %d), no prize"
          " pool left (%d)" % (name, t["prizes"], t["buy_ins"], t["overlay"], t["pool_key"]))
    check(t["hands"] > 0 and t["bad_hands"] == 0 and t["chips"] == t["chips_expected"]
          and (t["status"] != "finished" or t["biggest"] == t["chips_expected"]),
          "tournament %s: its hand histories replayed player by player conserve the chips (%d"
          " hands, %d bad%s; %d chips of %d; the winner holds %d)" % (
              name, t["hands"], t["bad_hands"], ": " + t["first_bad"] if t["first_bad"] else "",
              t["chips"], t["chips_expected"], t["biggest"]))
    if d is None:
        check(False, "tournament %s: its bots wrote their report (bot-tour-%s.log; exit status %s)"
              % (name, t["name"], t["bot_status"]))
        continue
    places = tr.get("places", {})
    wrong = sum(1 for p, pl in places.items() if t["places"].get(p) != pl)
    check(t["bot_status"] == 0 and gm.get("torn", 1) == 0 and d.get("unexpected_errors", 1) == 0,
          "tournament %s: its bots exited 0 (%s), nothing torn (%s%s), no unexpected error (%s)"
          % (name, t["bot_status"], gm.get("torn"), torn_detail(d), d.get("unexpected_errors")))
    check(len(places) == t["bots"] and wrong == 0,
          "tournament %s: every bot learned its place (%d of %d; %d differ from the director's)"
          % (name, len(places), t["bots"], wrong))
if tour_fees is not None and tours:
    print("  (moved: TableClosing{CLOSING_TOURNAMENT} the bots saw -- moves, breaks, handovers;"
          " re-dealt hands: %s)" % ", ".join("%s %d" % (t["name"], t["redeals"]) for t in tours))
    print("  fees {croupier:money}:rake:tournament: %d (entries x fee: %d)" % tour_fees)
    check(tour_fees[0] == tour_fees[1], "the tournaments' fees are the house's:"
          " {croupier:money}:rake:tournament %d = entries x fee %d" % tour_fees)

print()
print("Money (Redis):")
if money is not None:
    print("  wallets + rake + prize pools before the bots: %d, after every pod exited: %d"
          " (difference %d)"
          % (money[0], money[1], money[1] - money[0]))
    check(money[0] == money[1], "wallets + rake (the tournaments' fees too) + prize pools"
          " unchanged (%d -> %d)" % money)
if rake:
    print("  rake accounts (in the sum): %s" % ", ".join(
        "%s %d" % (name, chips) for name, chips in sorted(rake.items())))
# Niu Niu rakes every winner of a round (docs/rules/niuniu.md "The engine", --niuniu-rake-bp
# 500 by default): rounds finished at its tables leave chips in its rake account.
for game, engine, bots, status, fin, missing, void, settled in groups:
    if engine == "niuniu" and fin.isdigit() and int(fin) > 0:
        check(rake.get("niuniu", 0) > 0, "niuniu: its winners were raked: {croupier:money}:rake:"
              "niuniu %d after %s finished rounds" % (rake.get("niuniu", 0), fin))
for glob, count, nonzero in accounts:
    print("  table chips {croupier:money}:wallet:%s: %d accounts, %d still holding chips"
          % (glob, count, nonzero))
    check(nonzero == 0, "every %s account back at 0 after the tables closed (%d accounts, %d not)"
          % (glob, count, nonzero))
if held_index is not None:
    print("  held epochs left in {croupier:money}:held after every pod exited: %d" % held_index)
    check(held_index == 0, "nothing is held any more: {croupier:money}:held is empty (%d)"
          % held_index)
if settle_records is not None:
    print("  settle records {croupier:money}:round:<id> in Redis: %d (the key is the round id, "
          "so a round cannot settle twice)" % settle_records)
if credits is not None and credits[4] > 0:
    applied, expected, records, house, tried = credits
    print("  operator credits (croupier-ctl credit, docs/ops.md): %d applied mid-run, %d settle "
          "records ctl:credit:<id>, house account rake:credits %d (in the sum above)"
          % (applied, records, house))
    check(applied == tried, "croupier-ctl applied every operator credit (%d of %d)"
          % (applied, tried))
    check(records == applied and house == expected,
          "every operator credit has its settle record and the house account paid it (%d of %d, "
          "rake:credits %d, expected %d)" % (records, applied, house, expected))

print()
print("Checks:")
for ok, text in checks:
    print("  %s %s" % ("ok  " if ok else "FAIL", text))
with open(os.path.join(run, "checks.txt"), "w") as out:
    for ok, text in checks:
        out.write("%s %s\n" % ("ok  " if ok else "FAIL", text))
    for w in warnings:
        out.write("warn %s\n" % w)
passed = all(ok for ok, _ in checks)
failed = [text for ok, text in checks if not ok]
verdict = "ZERO LOSS: %s" % ("yes -- all %d checks passed" % len(checks) if passed else
                             "NO -- %d of %d checks failed" % (len(failed), len(checks)))
body, sys.stdout = sys.stdout.getvalue(), real_stdout
print(verdict)
for text in failed:
    print("  FAIL %s" % text)
print()
print(body, end="")
print()
print(verdict)
for text in failed:
    print("  FAIL %s" % text)

sys.exit(0 if passed else 1)
