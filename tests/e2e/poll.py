#!/usr/bin/env python3
"""Samples every live pod's /drain/status and /metrics every PERIOD seconds during a rollout.

usage: poll.py PODS_FILE OUT_JSONL [PERIOD [ORIGIN]]

PODS_FILE holds one live pod a line, "name kind health_port" (the harness rewrites it as pods
come and go); the poller re-reads it at every tick and stops when the file STOP next to it
appears. ORIGIN (unix seconds, default now) is the clock origin of "t", shared with the harness's
step log. Each sample is one JSON line: {"t": seconds since ORIGIN, "pod", "kind", "status": the
status JSON or null, "desks", "human_desks", "connections", "draining"} (fields from /metrics
when present). Loopback only; each GET has a short timeout so a dying pod never stalls it.
"""
import json
import os
import sys
import time
import urllib.request

pods_file, out_path = sys.argv[1], sys.argv[2]
period = float(sys.argv[3]) if len(sys.argv) > 3 else 0.25
stop_file = os.path.join(os.path.dirname(pods_file), "STOP")


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s%s" % (port, path), timeout=0.2) as r:
            return r.read().decode("utf-8", "replace")
    except Exception as e:  # noqa: BLE001 -- a 503 or a closed port is data, not a failure
        if hasattr(e, "read"):
            try:
                return e.read().decode("utf-8", "replace")
            except Exception:  # noqa: BLE001
                return None
        return None


def metric(text, name):
    if text is None:
        return None
    total = None
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            try:
                total = (total or 0) + float(line.rsplit(" ", 1)[1])
            except ValueError:
                pass
    return total


t0 = float(sys.argv[4]) if len(sys.argv) > 4 else time.time()
with open(out_path, "a", buffering=1) as out:
    while not os.path.exists(stop_file):
        tick = time.time()
        try:
            with open(pods_file) as f:
                pods = [l.split() for l in f if len(l.split()) == 3]
        except OSError:
            pods = []
        for name, kind, port in pods:
            st = get(port, "/drain/status")
            try:
                status = json.loads(st) if st else None
            except ValueError:
                status = None
            m = get(port, "/metrics")
            rec = {"t": round(tick - t0, 3), "pod": name, "kind": kind, "status": status,
                   "desks": metric(m, "game_desks"), "human_desks": metric(m, "game_human_desks"),
                   "connections": metric(m, "gate_connections"),
                   "draining": metric(m, "game_draining")}
            if status is not None:
                rec["desks"] = status.get("total_desks", rec["desks"])
                rec["human_desks"] = status.get("human_desks", rec["human_desks"])
                rec["draining"] = status.get("draining", rec["draining"])
            out.write(json.dumps(rec) + "\n")
        time.sleep(max(0.0, period - (time.time() - tick)))
