#!/usr/bin/env python3
"""The demo's live summary (scripts/demo-cluster.sh): once a second, per pod and per bot group.

usage: demo_summary.py RUN_DIR REDIS_PORT ORIGIN [cluster]

Reads, every second, until RUN_DIR/STOP exists:
  RUN_DIR/pods           the live pods, "name kind health_port" a line (tests/e2e/lib.sh
                         e2e_pods_publish; the demo rewrites it as pods come and go)
  RUN_DIR/pods-info.tsv  every pod started: name, kind, engine, health port, rpc port, pid, log
  RUN_DIR/groups.tsv     the bot groups: game, engine, bots, first player id
  RUN_DIR/tours.tsv      the tournaments: name, id, format, bots (their status and players left
                         from {croupier:tour:<id>}:meta in Redis: one line)
  RUN_DIR/bot-GAME.log   croupier-bot's log; its last "bot_progress" line (JSON)
  RUN_DIR/demo.log       the demo's own log; lines added since the last tick are printed first
  RUN_DIR/web-url        the browser table's address, when the demo serves it (shown last)
and from the live processes: each pod's /readyz, /drain/status and /metrics on 127.0.0.1, the
seats the gateways keep in Redis ({croupier:seat}:<player> = "server address desk ...",
counted per game server address) and the held epochs ({croupier:money}:held: one per game
server holding chips in seat accounts; a killed server's stays until its chips are recovered).
ORIGIN (unix seconds) is the demo's start. "cluster": Redis is a Redis Cluster, the tournaments'
keys in the money slot ({croupier:money}:tour:<id>:meta, common/keytag.h) whose master REDIS_PORT
names.

On a terminal the table is redrawn in place below the scrolling log (one screen, updated);
otherwise (a pipe, a file) one plain line every ten seconds sums it up (pods by state, bots
connected, games finished, torn, errors) between the log's lines. Nothing here is computed from a model: every figure is read from a process
or from Redis at that tick, or shown as "-" when the pod did not answer.
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

run, redis_arg, origin = sys.argv[1], sys.argv[2], float(sys.argv[3])
cluster = len(sys.argv) > 4 and sys.argv[4] == "cluster"
TOUR_KEY = "{croupier:money}:tour:%s:%s" if cluster else "{croupier:tour:%s}:%s"


def redis_port_now():
    """The Redis port: the argument, or with "@FILE" the port the file names now (the demo
    rewrites it when Sentinel promotes another master, --redis-ha, or when the master of the
    money slot of its Redis Cluster is replaced, --redis-cluster)."""
    if not redis_arg.startswith("@"):
        return redis_arg
    try:
        with open(redis_arg[1:]) as f:
            return f.read().strip()
    except OSError:
        return "0"



stop_file = os.path.join(run, "STOP")
tty = sys.stdout.isatty()

# Seats per game server address, in one round trip (a few hundred keys in the demo). The key named
# ({croupier:seat}, the seats' hash tag) routes the script to the seats' master on a Redis
# Cluster (redis-cli -c follows the redirection; every seat key is in that slot: docs/deploy.md
# "Key layout on a cluster"); a single Redis ignores it.
SEATS_LUA = """
local c = {}
for _, k in ipairs(redis.call('KEYS', '{croupier:seat}:*')) do
  local v = redis.call('GET', k)
  if v then
    local a = string.match(v, '^%S+ (%S+)')
    if a then c[a] = (c[a] or 0) + 1 end
  end
end
local r = {}
for a, n in pairs(c) do r[#r + 1] = a; r[#r + 1] = tostring(n) end
return r
"""


def get(port, path):
    """(status, body) of GET 127.0.0.1:port/path; (None, None) when the pod does not answer."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s%s" % (port, path), timeout=0.3) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        try:
            return e.code, e.read().decode("utf-8", "replace")
        except Exception:  # noqa: BLE001
            return e.code, None
    except Exception:  # noqa: BLE001 -- a closed port is data: the pod is gone or not up
        return None, None


def metric_sum(text, name, label=None):
    """Sum of every sample of a metric (optionally only those whose labels contain label)."""
    if text is None:
        return None
    total = None
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            if label is not None and label not in line.split(" ", 1)[0]:
                continue
            try:
                total = (total or 0) + float(line.rsplit(" ", 1)[1])
            except ValueError:
                pass
    return total


def seats():
    try:
        out = subprocess.run(["redis-cli", "-c", "-p", redis_port_now(), "EVAL", SEATS_LUA, "1",
                              "{croupier:seat}"],
                             capture_output=True, text=True, timeout=2).stdout.split()
    except Exception:  # noqa: BLE001
        return None
    if len(out) % 2:
        return None
    return {out[i]: int(out[i + 1]) for i in range(0, len(out), 2)}


def held_epochs():
    try:
        out = subprocess.run(["redis-cli", "-c", "-p", redis_port_now(), "SCARD",
                              "{croupier:money}:held"],
                             capture_output=True, text=True, timeout=2).stdout.strip()
        return int(out)
    except Exception:  # noqa: BLE001 -- Redis busy or gone: shown as "-"
        return None


def read_tsv(name):
    try:
        with open(os.path.join(run, name)) as f:
            return [l.rstrip("\n").split("\t") for l in f if l.strip()]
    except OSError:
        return []


class Tail:
    """Lines appended to a file since the last call."""

    def __init__(self, path):
        self.path, self.pos, self.part = path, 0, ""

    def lines(self):
        try:
            with open(self.path, errors="replace") as f:
                f.seek(self.pos)
                data = f.read()
                self.pos = f.tell()
        except OSError:
            return []
        data = self.part + data
        out = data.split("\n")
        self.part = out.pop()
        return out


progress = {}  # game -> last bot_progress record
bot_tails = {}
log_tail = Tail(os.path.join(run, "demo.log"))


def fmt(v, answered=False):
    """A figure; "-" when the pod did not answer; 0 for a counter not yet created."""
    if v is None:
        return "0" if answered else "-"
    return str(int(v))


def table():
    width = shutil.get_terminal_size((100, 24)).columns if tty else 100
    info = {r[0]: r for r in read_tsv("pods-info.tsv") if len(r) >= 5}
    try:
        with open(os.path.join(run, "pods")) as f:
            live = [l.split() for l in f if len(l.split()) == 3]
    except OSError:
        live = []
    seat = seats()
    held = held_epochs()
    rows = ["--- %3d s into the demo --- game servers holding chips in Redis: %s " % (
                time.time() - origin, fmt(held)) + "-" * 30,
            "%-16s %-11s %-9s %6s %7s %8s %7s %7s" % (
                "pod", "engine", "state", "desks", "in play", "players", "rounds", "voided")]
    for name, kind, hport in live:
        engine = info[name][2] if name in info else kind
        code, _ = get(hport, "/readyz")
        _, st = get(hport, "/drain/status")
        _, m = get(hport, "/metrics")
        try:
            status = json.loads(st) if st else None
        except ValueError:
            status = None
        if code is None and status is None:
            state = "down"
        elif status is not None and status.get("draining"):
            state = "draining"
        elif code == 200:
            state = "ready"
        else:
            state = "starting"
        if kind == "game":
            desks = status.get("total_desks") if status else metric_sum(m, "game_desks")
            human = status.get("human_desks") if status else metric_sum(m, "game_human_desks")
            addr = "127.0.0.1:%s" % info[name][4] if name in info else None
            players = None if seat is None or addr is None else seat.get(addr, 0)
            rows.append("%-16s %-11s %-9s %6s %7s %8s %7s %7s" % (
                name, engine, state, fmt(desks), fmt(human), fmt(players),
                fmt(metric_sum(m, "game_rounds_total", 'outcome="completed"'), m is not None),
                fmt(metric_sum(m, "game_rounds_total", 'outcome="voided"'), m is not None)))
        elif kind == "director":  # in play: the tournaments it owns
            rows.append("%-16s %-11s %-9s %6s %7s %8s %7s %7s" % (
                name, "director", state, "", fmt(status.get("human_desks") if status else None),
                "", "", ""))
        else:
            rows.append("%-16s %-11s %-9s %6s %7s %8s %7s %7s" % (
                name, "gateway", state, "", "", fmt(metric_sum(m, "gate_connections")), "", ""))
    rows.append("%-16s %-11s %9s %8s %7s %5s %7s %10s %6s %7s" % (
        "bots of game", "engine", "connected", "finished", "voided", "torn", "goaways",
        "reconnects", "errors", "crashed"))
    for g in read_tsv("groups.tsv"):
        if len(g) < 3:
            continue
        game = g[0]
        t = bot_tails.setdefault(game, Tail(os.path.join(run, "bot-%s.log" % game)))
        for line in t.lines():
            if '"bot_progress"' in line:
                try:
                    progress[game] = json.loads(line)
                except ValueError:
                    pass
        p = progress.get(game, {})
        rows.append("%-16s %-11s %9s %8s %7s %5s %7s %10s %6s %7s" % (
            game, g[1], "%s/%s" % (p.get("connected", "-"), g[2]), p.get("finished", "-"),
            p.get("voided", "-"), p.get("torn", "-"), p.get("goaways", "-"),
            p.get("reconnects", "-"), p.get("unexpected_errors", "-"),
            p.get("crash_voided", "-")))
    t = tours_line()
    if t:
        rows.append(t)
    try:
        with open(os.path.join(run, "web-url")) as f:
            rows.append("%-16s %s" % ("browser table", f.read().strip()))
    except OSError:
        pass
    return [r[:width - 1] for r in rows]


def tours_line():
    """The tournaments (RUN_DIR/tours.tsv: name, id, format, bots), from their meta in Redis:
    "tournaments: sng 1 running 5 of 9 left, mtt 2 registering 27 entries"; "" without any."""
    parts = []
    for r in read_tsv("tours.tsv"):
        if len(r) < 4:
            continue
        st = left = entries = ""
        try:
            out = subprocess.run(["redis-cli", "-p", redis_port_now(), "HMGET",
                                  TOUR_KEY % (r[1], "meta"), "status", "entries"],
                                 capture_output=True, text=True, timeout=1)
            st, entries = (out.stdout.splitlines() + ["", ""])[:2]
            if st == "running":  # the players still in: entries playing or waiting for a seat
                out = subprocess.run(["redis-cli", "-p", redis_port_now(), "HVALS",
                                      TOUR_KEY % (r[1], "entries")],
                                     capture_output=True, text=True, timeout=1)
                left = 0
                for line in out.stdout.splitlines():
                    try:
                        left += json.loads(line).get("state") in ("playing", "waiting", "busted")
                    except ValueError:
                        pass
        except (OSError, subprocess.SubprocessError):
            pass
        if st == "running":
            parts.append("%s %s running, %s of %s left" % (r[0], r[1], left, entries or "-"))
        elif st == "registering":
            parts.append("%s %s registering, %s entries" % (r[0], r[1], entries or "0"))
        else:
            parts.append("%s %s %s" % (r[0], r[1], st or "-"))
    return "tournaments: " + ", ".join(parts) if parts else ""


def plain_line():
    """Off a terminal: one line every PLAIN_EVERY seconds instead of the table."""
    try:
        with open(os.path.join(run, "pods")) as f:
            live = [l.split() for l in f if len(l.split()) == 3]
    except OSError:
        live = []
    states = {}
    for name, kind, hport in live:
        code, _ = get(hport, "/readyz")
        _, st = get(hport, "/drain/status")
        try:
            draining = bool(st and json.loads(st).get("draining"))
        except ValueError:
            draining = False
        state = "draining" if draining else "ready" if code == 200 else \
            "down" if code is None and st is None else "starting"
        states[state] = states.get(state, 0) + 1
    conn = fin = torn = err = 0
    total = 0
    for g in read_tsv("groups.tsv"):
        if len(g) < 3:
            continue
        t = bot_tails.setdefault(g[0], Tail(os.path.join(run, "bot-%s.log" % g[0])))
        for line in t.lines():
            if '"bot_progress"' in line:
                try:
                    progress[g[0]] = json.loads(line)
                except ValueError:
                    pass
        p = progress.get(g[0], {})
        total += int(g[2])
        conn += int(p.get("connected", 0))
        fin += int(p.get("finished", 0))
        torn += int(p.get("torn", 0))
        err += int(p.get("unexpected_errors", 0))
    t = tours_line()
    return "[%3d s] pods: %s; bots: %d/%d connected, %d games finished, %d torn, %d errors%s" % (
        time.time() - origin,
        ", ".join("%d %s" % (n, k) for k, n in sorted(states.items())) or "none",
        conn, total, fin, torn, err, "; " + t if t else "")


PLAIN_EVERY = 10
prev = 0
last_plain = 0.0
while True:
    stopping = os.path.exists(stop_file)
    out = []
    if tty and prev and not stopping:
        out.append("\x1b[%dA\x1b[J" % prev)
    logs = log_tail.lines()
    out += [l + "\n" for l in logs]
    if not stopping and tty:
        rows = table()
        out += [r + "\n" for r in rows]
        prev = len(rows)
    elif not stopping and time.time() - last_plain >= PLAIN_EVERY - 0.5:
        out.append(plain_line() + "\n")
        last_plain = time.time()
    sys.stdout.write("".join(out))
    sys.stdout.flush()
    if stopping:
        break
    time.sleep(max(0.0, 1.0 - (time.time() % 1.0)))
