#!/usr/bin/env python3
"""Turns a rollout run into a report: data files, a gnuplot chart (SVG) and report.md.

usage: chart.py RUN_DIR
       chart.py --check-svg FILE   exit 0 if FILE exists and is an SVG document (root <svg>)

Reads RUN_DIR/samples.jsonl (poll.py), RUN_DIR/bot-<game>.log (croupier-bot progress lines,
JSON), RUN_DIR/steps.tsv ("seconds<TAB>text" of each rollout step, same clock origin as the
samples within a fraction of a second), RUN_DIR/report-<game>.json (the bot reports) and, when
present, RUN_DIR/checks.txt (the verdict's checks, scripts/demo_report.py) and RUN_DIR/groups.tsv
(the demo's bot groups: which games each engine serves). Writes RUN_DIR/chart.svg (gnuplot;
./dev installs gnuplot-nox), RUN_DIR/chart.png (where gnuplot has pngcairo) and RUN_DIR/report.md,
which starts with the verdict. What the chart shows: docs/demo.md "The chart".
"""
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree


def svg_problem(path):
    """None if path is a well-formed XML document whose root is <svg>, else what is wrong."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as e:
        return str(e)
    if root.tag not in ("svg", "{http://www.w3.org/2000/svg}svg"):
        return "root element is <%s>, not <svg>" % root.tag
    if len(root) == 0:
        return "the <svg> element is empty"
    return None


if len(sys.argv) == 3 and sys.argv[1] == "--check-svg":
    problem = svg_problem(sys.argv[2])
    if problem:
        print("chart.py: %s is not a valid SVG: %s" % (sys.argv[2], problem), file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
if len(sys.argv) != 2:
    print(__doc__.strip(), file=sys.stderr)
    sys.exit(2)
run = sys.argv[1]
series = collections.defaultdict(list)  # (metric, pod) -> [(t, v)]
with open(os.path.join(run, "samples.jsonl")) as f:
    for line in f:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r["kind"] == "game":
            if r.get("desks") is not None:
                series[("desks", r["pod"])].append((r["t"], r["desks"]))
            if r.get("human_desks") is not None:
                series[("human_desks", r["pod"])].append((r["t"], r["human_desks"]))
        elif r.get("connections") is not None:
            series[("connections", r["pod"])].append((r["t"], r["connections"]))

# Bot progress: cumulative counters; the bot started at bot_t0 on the samples' clock.
bot_t0 = 0.0
steps = []
if os.path.exists(os.path.join(run, "steps.tsv")):
    with open(os.path.join(run, "steps.tsv")) as f:
        for line in f:
            t, _, text = line.rstrip("\n").partition("\t")
            steps.append((float(t), text))
            if text == "bots start":
                bot_t0 = float(t)
# game -> [(t, unexpected, goaways, reconnects, torn, connected, reconnects after a lost
# connection)]; the last is 0 in logs of bots older than its field.
errs = {}
for path in sorted(glob.glob(os.path.join(run, "bot-*.log"))):
    game = os.path.basename(path)[4:-4]
    errs[game] = []
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("event") == "bot_progress":
                errs[game].append((bot_t0 + r["ms"] / 1000.0, r["unexpected_errors"], r["goaways"],
                                   r["reconnects"], r["torn"], r["connected"],
                                   r.get("reconnects_after_loss", 0)))

os.makedirs(os.path.join(run, "data"), exist_ok=True)
files = collections.defaultdict(list)  # metric -> [(pod, path)]
for (metric, pod), pts in sorted(series.items()):
    path = os.path.join(run, "data", "%s-%s.dat" % (metric, pod))
    with open(path, "w") as out:
        for t, v in pts:
            out.write("%.3f %s\n" % (t, v))
    files[metric].append((pod, path))
err_paths = {}
for game, pts in errs.items():
    err_paths[game] = os.path.join(run, "data", "bot-%s.dat" % game)
    with open(err_paths[game], "w") as out:
        for e in pts:
            out.write("%.3f %d %d %d %d %d %d\n" % e)

reports = {}
for path in sorted(glob.glob(os.path.join(run, "report-*.json"))):
    reports[os.path.basename(path)[7:-5]] = json.load(open(path))
# The verdict (checks.txt: "ok"/"FAIL"/"warn"/"info" lines, scripts/demo_report.py): the chart's
# title and report.md's first line.
verdict, fails, nchecks = None, [], 0
if os.path.exists(os.path.join(run, "checks.txt")):
    lines = open(os.path.join(run, "checks.txt")).read().splitlines()
    fails = [line[4:].strip() for line in lines if line.startswith("FAIL")]
    nchecks = sum(1 for line in lines if line.startswith("ok") or line.startswith("FAIL"))
    verdict = ("ZERO LOSS: NO -- %d of %d checks failed" % (len(fails), nchecks) if fails
               else "ZERO LOSS: yes -- all %d checks passed" % nchecks)

# The chart's layout (docs/demo.md "The chart"), in pixels of a W-wide canvas, top to bottom: the
# title with the verdict; a strip naming the steps (each rollout one blue band from its surge to
# its old pod gone, the crash one red band, other steps thin grey marks), the same bands shaded in
# every panel below; one small panel per game server engine (desks per pod, coloured by pod
# version); connections per gateway; what the players felt. Every plot area is fixed here
# (margins "at screen") and every legend sits in the column right of its plot.
W = 1200
FONT = 11            # points; the SVG's font-size
CHAR_W = 0.6         # a character's width in font sizes (tests/e2e/test_chart.py estimates alike)
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000",
           "#999933", "#882255", "#44AA99", "#332288", "#AA4499"]


def text_px(text, size=FONT):
    return CHAR_W * size * len(text)


def gp_str(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def engine_of(pod):
    """The engine of a game pod named ENGINE-vN[-r...] (scripts/demo-cluster.sh)."""
    head, sep, _ = pod.rpartition("-v")
    return head if sep else pod


def version_of(pod):
    head, sep, tail = pod.rpartition("-v")
    return "v" + tail if sep else pod


# Steps -> bands and marks. A rollout of X: the demo's "roll X: ..." steps, or rollout.sh's
# "roll X deployment to V (N pods)" followed by its "surge: ...", "terminate ..." and "... gone"
# steps; the crash: the "crash: ..." steps; any other step a mark.
bands = collections.OrderedDict()  # name -> [t0, t1, kind]
marks = []                         # (t, text)
kills = []                         # t of each SIGKILL
rolling = None
sealed = set()                     # rollout bands another step followed
for t, text in steps:
    head, sep, rest = text.partition(": ")
    if sep and head.startswith("roll "):
        key, kind = head, "roll"
    elif text.startswith("roll ") and " deployment to " in text:
        key, kind = text[:text.index(" deployment to ")], "roll"
        rolling = key
    elif rolling and (text.startswith("surge: ") or text.startswith("terminate ")
                      or text.endswith(" gone")):
        key, kind = rolling, "roll"
    elif sep and head == "crash":
        key, kind = "crash", "crash"
        if rest.startswith("SIGKILL"):
            kills.append(t)
    else:
        marks.append((t, text))
        rolling = None
        sealed |= {k for k in bands if bands[k][2] == "roll"}
        continue
    if kind == "crash":
        rolling = None
    # A Deployment rolled again after other steps (the demo repeats its rollouts on long runs):
    # a band of its own, "roll X (2)". Its pods' consecutive steps stay one band.
    base, n = key, 2
    while key in sealed:
        key, n = "%s (%d)" % (base, n), n + 1
    sealed |= {k for k in bands if k != key and bands[k][2] == "roll"}
    if key in bands:
        bands[key][1] = t
    else:
        bands[key] = [t, t, kind]
game_engines = collections.defaultdict(list)  # engine -> games its bots play (groups.tsv)
if os.path.exists(os.path.join(run, "groups.tsv")):
    for line in open(os.path.join(run, "groups.tsv")):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 2:
            game_engines[f[1]].append(f[0])

# What the players felt: every bot group's cumulative counters summed at each progress time.
felt_kinds = [(4, "torn rounds", "#D55E00", 3), (1, "unexpected errors", "#882255", 3),
              (3, "reconnects", "#0072B2", 2), (6, "reconnects after loss", "#56B4E9", 2),
              (2, "GoAways", "#009E73", 2)]
felt_path = os.path.join(run, "data", "felt.dat")
felt_tot = {}
times = sorted({e[0] for pts in errs.values() for e in pts})
with open(felt_path, "w") as out:
    idx = {g: -1 for g in errs}
    for t in times:
        row = [0] * 7
        for g, pts in errs.items():
            while idx[g] + 1 < len(pts) and pts[idx[g] + 1][0] <= t:
                idx[g] += 1
            if idx[g] >= 0:
                for c in range(1, 7):
                    row[c] += pts[idx[g]][c]
        out.write("%.3f %s\n" % (t, " ".join(str(v) for v in row[1:])))
        felt_tot = {c: row[c] for c in range(1, 7)}
bots_total = sum(r.get("bots") or 0 for r in reports.values())
table_moves = sum((r.get("counters") or {}).get("moves") or 0 for r in reports.values())

chart = None
if not shutil.which("gnuplot"):
    print("chart.py: gnuplot not found (./dev installs gnuplot-nox): no chart", file=sys.stderr)
elif not series:
    print("chart.py: no pod samples in %s: no chart" % run, file=sys.stderr)
if shutil.which("gnuplot") and series:
    chart = os.path.join(run, "chart.svg")
    tmax = max([p[-1][0] for p in series.values()] + [t for t, _ in steps] + [0]) + 1
    # A legend column is as wide as its longest entry (plus the line sample), a panel as tall
    # as its legend.
    KEY_ROW = 19
    key_w = max([text_px(pod) + 50 for pods in (files["desks"], files["connections"])
                 for pod, _ in pods] + [170])
    L, R = 70, W - max(250, key_w + 20)  # full-width plots: x from L to R, legends right of R
    # The step strip's labels in lanes: a label starts at its band (or mark) and goes right (left
    # of its end when it would pass R); the first lane where it overlaps no earlier label.
    def xpx(t):
        return L + (R - L) * t / tmax

    labels = [(b[0], b[1], name if b[2] == "roll" else "CRASH (SIGKILL)", b[2])
              for name, b in bands.items()]
    labels += [(t, t, text if len(text) <= 60 else text[:57] + "...", "mark") for t, text in marks]
    labels.sort(key=lambda x: x[0])
    lanes, placed = [], []
    for t0, t1, text, kind in labels:
        w = text_px(text) + 8
        x0 = xpx(t0) + 3
        right = x0 + w > R
        if right:
            x0 = xpx(t1) - 3 - w
        for i, end in enumerate(lanes):
            if end < x0:
                lanes[i] = x0 + w
                break
        else:
            i = len(lanes)
            lanes.append(x0 + w)
        placed.append((t0, t1, text, kind, i, right))
    nlanes = max(1, len(lanes))
    LANE = 17
    strip_h = nlanes * LANE + 6
    engines = sorted({engine_of(pod) for pod, _ in files["desks"]})
    per_engine = collections.Counter(engine_of(pod) for pod, _ in files["desks"])
    COLS, CELL_W = 2, W // 2
    CELL_H = max(190, 76 + KEY_ROW * max(list(per_engine.values()) + [0]))
    rows_e = (len(engines) + COLS - 1) // COLS
    top = 56
    strip_top = top + 22
    eng_top = strip_top + strip_h + 40
    conn_top = eng_top + rows_e * CELL_H + 20
    conn_h = max(170, 10 + KEY_ROW * len(files["connections"]))
    felt_top = conn_top + conn_h + 75
    felt_h = 190
    H = felt_top + felt_h + 60

    def sx(x):
        return "%.5f" % (x / W)

    def sy(y):
        return "%.5f" % (1 - y / H)

    def area(x0, y0, x1, y1):
        return ["set lmargin at screen " + sx(x0), "set rmargin at screen " + sx(x1),
                "set tmargin at screen " + sy(y0), "set bmargin at screen " + sy(y1)]

    def band_objects(with_kills=True):
        out = ["unset object", "unset arrow"]
        for n, (t0, t1, kind) in enumerate(bands.values(), 1):
            colour = "#F4A6A6" if kind == "crash" else "#C6DBEF"
            out.append("set object %d rect from first %f, graph 0 to first %f, graph 1 "
                       "fc rgb \"%s\" fs solid 0.55 noborder behind"
                       % (n, t0, max(t1, t0 + tmax / 400.0), colour))
        if with_kills:
            for t in kills:
                out.append("set arrow from first %f, graph 0 to first %f, graph 1 nohead "
                           "lc rgb \"#C00000\" lw 1.5 front" % (t, t))
        return out

    def key_at(x, y):
        return ("set key at screen %s,%s left top Left reverse samplen 2 spacing 1.15 "
                "width -2 noautotitle nobox opaque" % (sx(x), sy(y)))

    def panel_title(n, x, y, text, size=FONT + 1):
        return "set label %d %s at screen %s,%s left font \",%d\"" % (n, gp_str(text), sx(x),
                                                                      sy(y), size)

    title = "Rolling update under load -- %s" % (verdict or "no verdict (no checks.txt)")
    g = ['set terminal svg size %d,%d dynamic background rgb "white" font "Arial,%d"'
         % (W, H, FONT), 'set output "%s"' % chart, "set termoption noenhanced", "set multiplot",
         "set xrange [0:%f]" % tmax, "set grid lc rgb \"#DDDDDD\"", "set border lc rgb \"#444444\"",
         "set xtics nomirror out", "set ytics nomirror out", "set tics textcolor rgb \"#333333\""]
    # the title (with the verdict) and the step strip
    g += area(L, strip_top, R, strip_top + strip_h)
    g += band_objects(False)
    g += ["unset key", "set yrange [0:%d]" % nlanes, "unset ytics", "set format x \"\"",
          "unset grid",
          "set label 1 %s at screen 0.5,%s center font \",17\" textcolor rgb \"%s\""
          % (gp_str(title), sy(30), "#B00000" if fails else "#006400"),
          panel_title(2, L, strip_top - 8, "steps (blue: a rollout, surge to old pod gone; "
                      "red: the crash, SIGKILLs as red lines; grey: other steps)")]
    for n, (t0, t1, text, kind, lane, right) in enumerate(placed, 3):
        y = nlanes - lane - 0.5
        if right:
            g.append("set label %d %s at first %f, first %f right offset -0.3,0 font \",%d\""
                     % (n, gp_str(text), t1, y, FONT - 1))
        else:
            g.append("set label %d %s at first %f, first %f left offset 0.3,0 font \",%d\""
                     % (n, gp_str(text), t0, y, FONT - 1))
        if kind == "mark":
            g.append("set arrow from first %f, first %f to first %f, first %f nohead "
                     "lc rgb \"#888888\" lw 1" % (t0, y - 0.5, t0, y + 0.5))
    for t in kills:
        g.append("set arrow from first %f, graph 0 to first %f, graph 1 nohead "
                 "lc rgb \"#C00000\" lw 1.5 front" % (t, t))
    g.append("plot NaN notitle")
    g += ["unset label", "set grid", "set ytics", "set format x \"%g\"", "set yrange [*:*]",
          "set offsets 0, 0, 1, 0"]
    # one panel per engine: desks per pod, colour by version (the same version, the same colour)
    versions = sorted({version_of(pod) for pod, _ in files["desks"]})
    vcolour = {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(versions)}
    g += band_objects()
    for i, eng in enumerate(engines):
        cx, cy = (i % COLS) * CELL_W, eng_top + (i // COLS) * CELL_H
        x0, x1, y0, y1 = cx + L, cx + CELL_W - key_w - 10, cy + 28, cy + CELL_H - 38
        games = game_engines.get(eng, [])
        name = "%s servers: desks per pod" % eng
        if games:
            name += " (%s)" % ", ".join(games)
        while text_px(name, FONT + 1) > CELL_W - 20 and ", " in name:
            name = name[:name.rindex(", ")] + ", ...)"
        g += area(x0, y0, x1, y1)
        top_desks = max([v for pod, _ in files["desks"] if engine_of(pod) == eng
                         for _, v in series[("desks", pod)]] + [1])
        g += ["set yrange [0:%d]" % (top_desks + 1 + top_desks // 8),
              "set ytics %d" % max(1, (top_desks + 3) // 4), key_at(x1 + 12, y0),
              panel_title(1, cx + 10, y0 - 12, name)]
        plots = ['"%s" using 1:2 with steps lw 2 lc rgb "%s" title %s'
                 % (p, vcolour[version_of(pod)], gp_str(pod))
                 for pod, p in files["desks"] if engine_of(pod) == eng]
        g.append("plot " + ", ".join(plots))
        g.append("unset label")
    # connections per gateway
    gates = [pod for pod, _ in files["connections"]]
    g += area(L, conn_top, R, conn_top + conn_h)
    g += ["set ytics autofreq", "set yrange [0:*]", key_at(R + 15, conn_top),
          panel_title(1, 10, conn_top - 12, "client connections per gateway")]
    plots = ['"%s" using 1:2 with steps lw 2 lc rgb "%s" title %s'
             % (p, PALETTE[i % len(PALETTE)], gp_str(pod))
             for i, (pod, p) in enumerate(files["connections"])]
    g.append("plot " + (", ".join(plots) if plots else "NaN notitle"))
    g.append("unset label")
    # what the players felt: zero lines drawn above the axis (the y range starts below 0) and
    # every total in the legend and the title
    peak = max([felt_tot.get(c, 0) for c, _, _, _ in felt_kinds] + [1])
    g += area(L, felt_top, R, felt_top + felt_h)
    g += ["set yrange [%f:%f]" % (-0.08 * peak, 1.1 * peak), key_at(R + 15, felt_top),
          "set xlabel \"seconds since the demo started\""]
    said = ", ".join("%s %d" % (text, felt_tot.get(c, 0)) for c, text, _, _ in felt_kinds)
    said = ("in total: " + said if times else "no bot progress lines (bot-<game>.log): nothing "
            "known of what the players felt")
    g.append(panel_title(1, 10, felt_top - 30, "what the players felt (%d bots, cumulative)"
                         % bots_total if bots_total else "what the players felt (cumulative)"))
    g.append(panel_title(2, 10, felt_top - 12, said
                         + (", table moves %d" % table_moves if reports else ""), FONT))
    plots = []
    if times:
        for c, text, colour, lw in felt_kinds:
            plots.append('"%s" using 1:%d with steps lw %d lc rgb "%s" title %s'
                         % (felt_path, c + 1, lw, colour,
                            gp_str("%s: %d" % (text, felt_tot.get(c, 0)))))
    g.append("plot " + (", ".join(plots) if plots else "NaN notitle"))
    g.append("unset multiplot")
    with open(os.path.join(run, "chart.gp"), "w") as out:
        out.write("\n".join(g) + "\n")
    if subprocess.call(["gnuplot", os.path.join(run, "chart.gp")]) != 0:
        chart = None
    elif svg_problem(chart):
        print("chart.py: gnuplot wrote an invalid %s: %s" % (chart, svg_problem(chart)),
              file=sys.stderr)
        chart = None
    # The same chart as PNG where gnuplot has the cairo terminal (a point smaller: its fonts
    # come out wider than the SVG's).
    png = os.path.join(run, "chart.png")
    with open(os.path.join(run, "chart-png.gp"), "w") as out:
        out.write("\n".join(['set terminal pngcairo size %d,%d background rgb "white" '
                             'font "Arial,%d"' % (W, H, FONT - 1),
                             'set output "%s"' % png] + g[2:]) + "\n")
    if subprocess.call(["gnuplot", os.path.join(run, "chart-png.gp")],
                       stderr=subprocess.DEVNULL) != 0 and os.path.exists(png):
        os.unlink(png)

md = ["# Rolling update report", ""]
# The verdict first (as in the chart's title), with the failed checks.
if verdict:
    if fails:
        md += ["**ZERO LOSS: NO** -- %d of %d checks failed:" % (len(fails), nchecks), ""]
        md += ["* FAIL %s" % text for text in fails] + [""]
    else:
        md += ["**ZERO LOSS: yes** -- all %d checks passed" % nchecks, ""]
for game, report in sorted(reports.items()):
    games = report.get("games", {})
    lat = report.get("action_latency_ms", {})
    md += ["## Bots playing %s" % game, "",
           "| figure | value |", "|---|---|",
           "| bots | %s |" % report.get("bots"),
           "| games started / finished / voided / torn | %s / %s / %s / %s |" % (
               games.get("started"), games.get("finished"), games.get("voided"),
               games.get("torn")),
           "| distinct rounds finished / voided | %s / %s |" % (
               games.get("distinct", {}).get("finished"),
               games.get("distinct", {}).get("voided")),
           "| rounds that ended while a bot was reconnecting | %s |" % games.get("ended_unseen"),
           "| actions | %s |" % report.get("actions"),
           "| action latency p50 / p99 (ms) | %s / %s |" % (lat.get("p50"), lat.get("p99")),
           "| GoAways | %s |" % json.dumps(report.get("goaways")),
           # after_loss: connections lost without a GoAway (a gateway killed) and recovered;
           # "other" no longer counts them (bots/bot_book.c).
           "| reconnects (after GoAway / after a lost connection / other) | %s / %s / %s |" % (
               report.get("reconnects", {}).get("after_goaway"),
               report.get("reconnects", {}).get("after_loss", 0),
               report.get("reconnects", {}).get("other")),
           "| table moves | %s |" % report.get("counters", {}).get("moves"),
           "| unexpected errors | %s |" % report.get("unexpected_errors"),
           "| errors by code | %s |" % json.dumps(report.get("errors")), ""]
md += ["## Steps", ""]
md += ["* %7.2f s  %s" % (t, text) for t, text in steps]
md += ["", "Chart: %s" % (chart or "(not drawn: see chart.py's error output)"), ""]
if chart and os.path.exists(os.path.join(run, "chart.png")):
    md += ["Chart (PNG): %s" % os.path.join(run, "chart.png"), ""]
if os.path.exists(os.path.join(run, "checks.txt")):
    md += ["## Checks", "", "```"] + open(os.path.join(run, "checks.txt")).read().splitlines() + ["```"]
with open(os.path.join(run, "report.md"), "w") as out:
    out.write("\n".join(md) + "\n")
print(os.path.join(run, "report.md"))
