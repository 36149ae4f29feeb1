#!/usr/bin/env python3
"""Turns a rollout run into a report: data files, a gnuplot chart (SVG) and report.md.

usage: chart.py RUN_DIR
       chart.py --check-svg FILE   exit 0 if FILE exists and is an SVG document (root <svg>)

Reads RUN_DIR/samples.jsonl (poll.py), RUN_DIR/bot-<game>.log (croupier-bot progress lines,
JSON), RUN_DIR/steps.tsv ("seconds<TAB>text" of each rollout step, same clock origin as the
samples within a fraction of a second) and RUN_DIR/report-<game>.json (the bot reports). Writes
RUN_DIR/chart.svg (gnuplot; ./dev installs gnuplot-nox) and RUN_DIR/report.md.
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
chart = None
if not shutil.which("gnuplot"):
    print("chart.py: gnuplot not found (./dev installs gnuplot-nox): no chart", file=sys.stderr)
elif not series:
    print("chart.py: no pod samples in %s: no chart" % run, file=sys.stderr)
if shutil.which("gnuplot") and series:
    chart = os.path.join(run, "chart.svg")
    # Four panels, one above the other, each with its key below it inside the panel: each is
    # 300 px of plot plus 20 px per key row (as many titles to a row as about fit in 1000 px),
    # so many pods or games (five bot series each) do not squash the plots.
    pod_keys = {m: [pod for pod, _ in files[m]] for m in ("desks", "human_desks", "connections")}
    bot_kinds = ("unexpected errors", "GoAways", "reconnects",
                 "reconnects after a lost connection", "torn rounds")
    bot_keys = ["%s: %s" % (game, k) for game in sorted(err_paths) for k in bot_kinds]

    def panel_height(titles):
        per_row = max(1, 1000 // (7 * max([len(t) for t in titles] + [1]) + 90))
        return 300 + 20 * ((len(titles) + per_row - 1) // per_row)

    heights = [panel_height(pod_keys[m]) for m in ("desks", "human_desks", "connections")]
    heights.append(panel_height(bot_keys))
    height = 40 + sum(heights)
    g = ['set terminal svg size 1100,%d dynamic background rgb "white"' % height,
         'set output "%s"' % chart, "set multiplot title \"rolling update under load\"",
         "set key below horizontal", "set grid", "set xlabel \"seconds\""]
    # Panel i's origin and size as fractions of the canvas, top to bottom.
    panel = ["set origin 0,%f; set size 1,%f" % (sum(heights[i + 1:]) / height, h / height)
             for i, h in enumerate(heights)]
    tmax = max([p[-1][0] for p in series.values()] + [0]) + 1
    g.append("set xrange [0:%f]" % tmax)
    arrows = ["set arrow from first %f, graph 0 to first %f, graph 1 nohead dt 3 lc rgb \"gray\""
              % (t, t) for t, text in steps if not text.endswith(" gone")]
    for metric, title in (("desks", "desks per game pod"),
                          ("human_desks", "human desks per game pod"),
                          ("connections", "connections per gateway")):
        g.append("unset arrow")
        g += arrows
        g.append(panel.pop(0))
        g.append('set title "%s"' % title)
        plots = ['"%s" using 1:2 with steps title "%s"' % (p, pod) for pod, p in files[metric]]
        g.append("plot " + ", ".join(plots) if plots else "plot 0 notitle")
    g.append("unset arrow")
    g += arrows
    g.append(panel.pop(0))
    g.append('set title "bot view (cumulative)"')
    plots = []
    for game, p in sorted(err_paths.items()):
        plots.append('"%s" using 1:2 with steps title "%s: unexpected errors" lw 2, '
                     '"" using 1:3 with steps title "%s: GoAways", '
                     '"" using 1:4 with steps title "%s: reconnects", '
                     '"" using 1:7 with steps title "%s: reconnects after a lost connection", '
                     '"" using 1:5 with steps title "%s: torn rounds" lw 2'
                     % (p, game, game, game, game, game))
    g.append("plot " + ", ".join(plots) if plots else "plot 0 notitle")
    g.append("unset multiplot")
    with open(os.path.join(run, "chart.gp"), "w") as out:
        out.write("\n".join(g) + "\n")
    if subprocess.call(["gnuplot", os.path.join(run, "chart.gp")]) != 0:
        chart = None
    elif svg_problem(chart):
        print("chart.py: gnuplot wrote an invalid %s: %s" % (chart, svg_problem(chart)),
              file=sys.stderr)
        chart = None
    # The same chart as PNG where gnuplot has the cairo terminal (some SVG viewers draw the
    # dotted step markers badly).
    png = os.path.join(run, "chart.png")
    with open(os.path.join(run, "chart-png.gp"), "w") as out:
        out.write("\n".join(['set terminal pngcairo size 1100,%d' % height, 'set output "%s"' % png]
                            + g[2:]) + "\n")
    if subprocess.call(["gnuplot", os.path.join(run, "chart-png.gp")],
                       stderr=subprocess.DEVNULL) != 0 and os.path.exists(png):
        os.unlink(png)

md = ["# Rolling update report", ""]
# The verdict first (checks.txt: "ok"/"FAIL"/"warn"/"info" lines), with the failed checks.
if os.path.exists(os.path.join(run, "checks.txt")):
    lines = open(os.path.join(run, "checks.txt")).read().splitlines()
    fails = [line[4:].strip() for line in lines if line.startswith("FAIL")]
    nchecks = sum(1 for line in lines if line.startswith("ok") or line.startswith("FAIL"))
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
