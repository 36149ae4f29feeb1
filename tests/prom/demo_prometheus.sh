#!/usr/bin/env bash
# `./dev run --prometheus` (scripts/demo-cluster.sh, docs/demo.md "Prometheus"): the demo runs
# short (20 s of play, 72 bots) with Debian's prometheus on 127.0.0.1 scraping every real pod,
# and its zero-loss report must
#   * pass (exit 0, "ZERO LOSS: yes");
#   * quote the query it sent and, for every game the bots played, the rounds Prometheus
#     answered beside the bots' own count: a number > 0, the same number as Prometheus's raw
#     answer (prometheus-rounds.json, a successful instant query), and plausible against the
#     bots' count (Prometheus counts the servers' completed rounds from their last scrape; the
#     bots the distinct rounds they saw finish: within a factor of 2, give or take 5 rounds);
#   * show the two operator credits made mid-run (croupier-ctl credit) with their settle records,
#     and wallets + rake unchanged;
#   * show that prometheus scraped every pod: each game and gateway pod of the run has an `up`
#     series that was 1 at least once.
# Prometheus not installed: one line and exit 77 (skipped).
#
#   tests/prom/demo_prometheus.sh SOURCE_ROOT BUILD_ROOT     (CROUPIER_KEEP_LOGS=1 keeps the dir)
set -u
SRC=$(cd "${1:?usage: demo_prometheus.sh SOURCE_ROOT BUILD_ROOT}" && pwd)
BUILD=$(cd "${2:?usage: demo_prometheus.sh SOURCE_ROOT BUILD_ROOT}" && pwd)
if ! command -v prometheus >/dev/null 2>&1; then
    echo "demo_prometheus: SKIP: Debian's prometheus is not installed (./dev setup installs it)"
    exit 77
fi
DIR=$(mktemp -d /tmp/croupier-demo-prom.XXXXXX)
FAILS=0
trap '[ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ $FAILS -gt 0 ] || rm -rf "$DIR"' EXIT
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
ok() { log "ok: $1"; }
bad() {
    log "FAIL: $1"
    FAILS=$((FAILS + 1))
}

log "running scripts/demo-cluster.sh --seconds 20 --bots 72 --prometheus (about 90 s)"
CROUPIER_BUILD_DIR=$BUILD CROUPIER_DEMO_OUT=$DIR/out \
    "$SRC/scripts/demo-cluster.sh" --seconds 20 --bots 72 --prometheus >"$DIR/stdout" 2>"$DIR/stderr"
st=$?
if [ $st = 0 ] && grep -q '^ZERO LOSS: yes' "$DIR/stdout"; then
    ok "the demo passed every zero-loss check"
else
    bad "the demo exited $st: $(grep -E '^ZERO LOSS|FAIL ' "$DIR/stdout" | head -n 8 | tr '\n' ';')"
fi

python3 - "$DIR/stdout" "$DIR/out" <<'EOF'
import json, os, re, sys
stdout, out = open(sys.argv[1]).read(), sys.argv[2]
fails = 0
def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what, file=sys.stderr)
    fails += 0 if cond else 1

m = re.search(r"^Prometheus \(Debian's prometheus on http://127\.0\.0\.1:(\d+), [^\n]*\n"
              r"  (sum by \(game\) [^\n]*)\n  game +rounds \(Prometheus\) +rounds the bots saw\n"
              r"((?:  \S+ +\S+ +\S+\n)+)", stdout, re.M)
check(m is not None, "the report has the Prometheus section: its URL, the query, the table")
if m is None:
    sys.exit(1)
query = m.group(2)
table = {}
for line in m.group(3).splitlines():
    g, p, b = line.split()
    table[g] = (p, b)
try:
    raw = json.load(open(os.path.join(out, "prometheus-rounds.json")))
except (OSError, ValueError) as e:
    raw = None
    check(False, "prometheus-rounds.json (Prometheus's answer) is readable JSON: %s" % e)
if raw is not None:
    check(raw.get("status") == "success" and raw["data"]["resultType"] == "vector",
          "Prometheus answered the instant query with a vector (status %s)" % raw.get("status"))
    answer = {r["metric"].get("game"): round(float(r["value"][1])) for r in raw["data"]["result"]}
else:
    answer = {}
final = open(os.path.join(out, "final.tsv")).read().splitlines()
q = [l.split("\t") for l in final if l.startswith("prom_query\t")]
check(len(q) == 1 and q[0][2] == query, "the report quotes the query the demo sent (%s)" % query)
groups = [l.split("\t") for l in open(os.path.join(out, "groups.tsv")).read().splitlines()]
check(len(groups) >= 2, "the bots played %d games" % len(groups))
for g, engine, nbots, base, *_ in groups:
    if g.endswith("-rooms"):
        continue  # a game's private rooms: counted with the game (scripts/demo_report.py)
    p, b = table.get(g, ("-", "-"))
    if not (p.isdigit() and b.isdigit()):
        check(False, "%s: the report quotes Prometheus %s beside the bots' %s" % (g, p, b))
        continue
    p, b = int(p), int(b)
    check(p > 0 and p == answer.get(g),
          "%s: the report quotes %d rounds from Prometheus, its answer says %s" % (g, p, answer.get(g)))
    check(b > 0 and b / 2 - 5 <= p <= 2 * b + 5,
          "%s: %d rounds (Prometheus) is plausible beside the bots' %d" % (g, p, b))
# every pod of the run (game servers and gateways) was scraped: its `up` was 1 at least once
pods = [l.split("\t")[1] for l in final if l.startswith("pod\t")]
up = {l.split("\t")[1]: l.split("\t")[2] for l in final if l.startswith("prom_up\t")}
check(len(pods) >= 4 and all(up.get(p) == "1" for p in pods),
      "Prometheus scraped every one of the %d pods (not: %s)" % (
          len(pods), ", ".join(p for p in pods if up.get(p) != "1") or "none"))
check(re.search(r"^  pods scraped \(up == 1 at least once\): (\d+) of \1$", stdout, re.M) is not None,
      "the report says every pod was scraped")
# the operator's credits mid-run (croupier-ctl credit): booked with settle records, and the
# money check above still passed
check(re.search(r"^  operator credits \(croupier-ctl credit, docs/ops\.md\): 2 applied mid-run, 2 settle "
                r"records ctl:credit:<id>, house account rake:credits -300", stdout, re.M) is not None
      and re.search(r"^  ok   wallets \+ rake .*unchanged", stdout, re.M) is not None,
      "the report shows the two operator credits with their settle records, wallets + rake unchanged")
sys.exit(1 if fails else 0)
EOF
[ $? = 0 ] || FAILS=$((FAILS + 1))
[ $FAILS -eq 0 ] || log "$FAILS check(s) failed; demo output in $DIR (stdout, stderr, out/)"
[ $FAILS -eq 0 ]
