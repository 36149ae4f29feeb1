#!/usr/bin/env python3
"""Checks the demo's chart (tests/e2e/chart.py) on a short real run's data, trimmed
(tests/e2e/chart-fixture/), without running a demo: a person must be able to read it
(docs/demo.md "The chart").

usage: test_chart.py SOURCE_ROOT [KEEP_DIR]

Runs chart.py on a copy of the fixture and checks its chart.svg: no two texts overlap (each
text's box estimated from its font size: CHAR_W font sizes a character, as chart.py lays them
out), every text lies on the canvas, every legend entry lies outside every plot area (the plot
areas are the SVG's border rectangles), the torn rounds' and unexpected errors' lines lie above
their plot's bottom axis (a zero visibly zero), every rollout of steps.tsv and the crash is
named, and the title carries the verdict of checks.txt; then again with a failed check added:
the title must say ZERO LOSS: NO. With gnuplot's pngcairo terminal, chart.png must be a PNG.
The checker first proves on made-up boxes that it finds an overlap, a legend inside a plot and
a text off the canvas. Exit 0 when all
pass, 1 otherwise, 77 (skipped) without gnuplot. KEEP_DIR: where to leave the charts to look at.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

CHAR_W = 0.6     # a character's width in font sizes (Arial's widest common letters are ~0.6)
SVG = "{http://www.w3.org/2000/svg}"
BORDER = re.compile(r"^M([\d.]+),([\d.]+) L\1,([\d.]+) L([\d.]+),\3 L\4,\2 L\1,\2 Z$")
TRANSFORM = re.compile(r"translate\(([-\d.]+),([-\d.]+)\)(?:\s*rotate\(([-\d.]+)\))?")


def texts_of(root):
    """[(text, (x0, y0, x1, y1), in_legend)] of every non-empty text of a gnuplot SVG."""
    out = []

    def walk(el, legend):
        if el.tag == SVG + "g" and (el.get("id") or "").startswith("gnuplot_plot_"):
            legend = True
        m = TRANSFORM.match(el.get("transform") or "")
        if el.tag == SVG + "g" and m and el.find(SVG + "text") is not None:
            text = "".join(el.find(SVG + "text").itertext()).strip()
            if text:
                x, y, rot = float(m.group(1)), float(m.group(2)), float(m.group(3) or 0)
                size = float(el.get("font-size", "12"))
                w = CHAR_W * size * len(text)
                a0 = {"start": 0.0, "middle": -w / 2, "end": -w}[el.get("text-anchor", "start")]
                a1 = a0 + w
                up, down = -0.8 * size, 0.25 * size  # above and below the baseline
                if rot % 360 == 0:
                    box = (x + a0, y + up, x + a1, y + down)
                elif rot % 360 == 270:  # reading upwards
                    box = (x + up, y - a1, x + down, y - a0)
                else:
                    raise ValueError("text %r rotated %g degrees" % (text, rot))
                out.append((text, box, legend))
        for child in el:
            walk(child, legend)

    walk(root, False)
    return out


def plot_areas(root):
    """The border rectangles (x0, y0, x1, y1) of the SVG's plots."""
    areas = []
    for el in root.iter(SVG + "path"):
        m = BORDER.match(" ".join((el.get("d") or "").split()))
        if m:
            x0, y0, y1, x1 = (float(v) for v in m.groups())
            area = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
            if area not in areas:  # (gnuplot may draw a border twice)
                areas.append(area)
    return areas


def series_points(root):
    """{legend text: [(x, y)]}: the points of every plotted line, by its legend entry (gnuplot
    writes a plot's group twice with an opaque key: its line, then its key entry)."""
    label, points = {}, {}
    for g in root.iter(SVG + "g"):
        gid = g.get("id") or ""
        if not gid.startswith("gnuplot_plot_"):
            continue
        for t in g.iter(SVG + "text"):
            label.setdefault(gid, "".join(t.itertext()).strip())
        for path in g.iter(SVG + "path"):
            points.setdefault(gid, []).extend(
                (float(x), float(y)) for x, y in re.findall(r"([-\d.]+),([-\d.]+)",
                                                            path.get("d") or ""))
    return {label[gid]: pts for gid, pts in points.items() if gid in label}


def zero_problems(root, areas, prefixes=("torn rounds: ", "unexpected errors: ")):
    """A count that stays 0 must be a line visibly above its plot's bottom axis."""
    out = []
    for name, pts in series_points(root).items():
        if not name.startswith(prefixes):
            continue
        inside = [(a, [(x, y) for x, y in pts if a[0] <= x <= a[2] and a[1] <= y <= a[3]])
                  for a in areas]
        area, drawn = max(inside, key=lambda x: len(x[1]))
        if not drawn:
            out.append("the line %r is not drawn in any plot" % name)
        elif max(y for _, y in drawn) > area[3] - 3:
            out.append("the line %r touches its plot's bottom axis (y %.1f, axis at %.1f): a zero "
                       "must be drawn above it" % (name, max(y for _, y in drawn), area[3]))
    return out


def meet(a, b, slack=0.5):
    return (a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack
            and b[1] < a[3] - slack)


def problems(svg_path):
    """What makes the chart hard to read, as sentences; [] when none."""
    root = ElementTree.parse(svg_path).getroot()
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    texts, areas, out = texts_of(root), plot_areas(root), []
    for i, (t, box, _) in enumerate(texts):
        if box[0] < 0 or box[1] < 0 or box[2] > width or box[3] > height:
            out.append("text %r %s leaves the %gx%g canvas" % (t, fmt(box), width, height))
        for u, other, _ in texts[i + 1:]:
            if meet(box, other):
                out.append("texts %r %s and %r %s overlap" % (t, fmt(box), u, fmt(other)))
    for t, box, legend in texts:
        for area in areas if legend else []:
            if meet(box, area):
                out.append("legend entry %r %s lies in the plot area %s" % (t, fmt(box), fmt(area)))
    return out, texts, areas


def fmt(box):
    return "(%.0f,%.0f)-(%.0f,%.0f)" % box


def self_test():
    """The checker finds what it is to find (a checker that cannot fail is no check)."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 300">'
           '<path d="M50.00,20.00 L50.00,200.00 L300.00,200.00 L300.00,20.00 L50.00,20.00 Z"/>'
           '<g transform="translate(60,40)" font-size="12" text-anchor="start"><text>'
           '<tspan>first words</tspan></text></g>'
           '<g transform="translate(100,44)" font-size="12" text-anchor="start"><text>'
           '<tspan>second</tspan></text></g>'
           '<g id="gnuplot_plot_1a"><g transform="translate(290,100)" font-size="12" '
           'text-anchor="start"><text>legend</text></g></g>'
           '<g transform="translate(380,290)" font-size="12" text-anchor="start"><text>'
           'cut off</text></g></svg>')
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False) as f:
        f.write(svg)
    found, texts, areas = problems(f.name)
    os.unlink(f.name)
    want = ["texts 'first words'", "legend entry 'legend'", "text 'cut off'"]
    missed = [w for w in want if not any(p.startswith(w) for p in found)]
    if missed or len(areas) != 1 or len(texts) != 4:
        return ["the checker's self-test: it missed %s (found %s; %d areas, %d texts)"
                % (missed, found, len(areas), len(texts))]
    return []


def check_run(src, run, expect_verdict):
    fail = []
    r = subprocess.run([sys.executable, os.path.join(src, "tests/e2e/chart.py"), run],
                       capture_output=True, text=True)
    svg = os.path.join(run, "chart.svg")
    if r.returncode != 0 or not os.path.exists(svg):
        return ["chart.py %s: exit %d, no chart.svg: %s" % (run, r.returncode, r.stderr.strip())]
    if subprocess.call([sys.executable, os.path.join(src, "tests/e2e/chart.py"), "--check-svg",
                        svg]) != 0:
        return ["%s is not a valid SVG" % svg]
    found, texts, areas = problems(svg)
    fail += found
    fail += zero_problems(ElementTree.parse(svg).getroot(), areas)
    # the panels: the step strip, one per engine, connections, what the players felt
    pods = set(re.findall(r'"pod":\s*"([^"]+)"', open(os.path.join(run, "samples.jsonl")).read()))
    engines = {p.rpartition("-v")[0] for p in pods if not p.startswith("gate-")}
    if len(areas) != len(engines) + 3:
        fail.append("%d plot areas, expected %d (steps, %d engines, connections, players)"
                    % (len(areas), len(engines) + 3, len(engines)))
    legend = {t for t, _, is_legend in texts if is_legend}
    for pod in pods:
        if pod not in legend:
            fail.append("pod %s has no legend entry" % pod)
    for name in ("torn rounds: ", "unexpected errors: "):
        if not any(t.startswith(name) for t in legend):
            fail.append("no legend entry %r" % name)
    words = [t for t, _, _ in texts]
    steps = [line.rstrip("\n").split("\t")[1] for line in open(os.path.join(run, "steps.tsv"))]
    for name in {s.split(":")[0] for s in steps if s.startswith("roll ")}:
        if name not in words:
            fail.append("the rollout band %r is not named" % name)
    if any(s.startswith("crash:") for s in steps) and not any("CRASH" in t for t in words):
        fail.append("the crash band is not named")
    # the title: the text with the largest font, at the top
    top = min(texts, key=lambda x: x[1][1]) if texts else ("", None, False)
    if expect_verdict not in top[0]:
        fail.append("the title %r does not carry %r" % (top[0], expect_verdict))
    has_cairo = subprocess.run(["gnuplot", "-e", "set terminal pngcairo"],
                               capture_output=True).returncode == 0
    png = os.path.join(run, "chart.png")
    if has_cairo and (not os.path.exists(png) or open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n"):
        fail.append("gnuplot has pngcairo but %s is not a PNG" % png)
    return fail


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src = sys.argv[1]
    if not shutil.which("gnuplot"):
        print("test_chart: gnuplot not found (./dev installs gnuplot-nox): skipped")
        return 77
    fail = self_test()
    tmp = tempfile.mkdtemp(prefix="croupier-chart-")
    try:
        fixture = os.path.join(src, "tests/e2e/chart-fixture")
        ok_run, no_run = os.path.join(tmp, "ok"), os.path.join(tmp, "no")
        shutil.copytree(fixture, ok_run)
        shutil.copytree(fixture, no_run)
        with open(os.path.join(no_run, "checks.txt"), "a") as f:
            f.write("FAIL holdem: torn games = 0 (1)\n")
        checks = open(os.path.join(ok_run, "checks.txt")).read()
        want = "ZERO LOSS: NO" if re.search(r"^FAIL", checks, re.M) else "ZERO LOSS: yes"
        for run, verdict in ((ok_run, want), (no_run, "ZERO LOSS: NO")):
            fail += ["%s: %s" % (os.path.basename(run), p) for p in check_run(src, run, verdict)]
        if len(sys.argv) == 3:
            os.makedirs(sys.argv[2], exist_ok=True)
            for name in ("chart.svg", "chart.png"):
                if os.path.exists(os.path.join(ok_run, name)):
                    shutil.copy(os.path.join(ok_run, name), sys.argv[2])
    finally:
        shutil.rmtree(tmp)
    for p in fail:
        print("FAIL " + p)
    print("test_chart: %s" % ("%d problem(s)" % len(fail) if fail else "ok"))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
