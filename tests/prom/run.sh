#!/usr/bin/env bash
# tests/prom/run.sh SOURCE_ROOT BUILD_ROOT -- the alert rules and the dashboard under k8s/,
# proven with Prometheus' own tools (docs/deploy.md "Alerts and dashboard"):
#
#  1. every overlay under k8s/overlays rendered (k8s/render.sh); each PrometheusRule's spec
#     written as a rule file and checked by `promtool check rules`, every dashboard expression
#     (the ConfigMap labelled grafana_dashboard) too, as a recording rule (tests/prom/prom_check.py);
#  2. `promtool test rules`: unit tests generated from each overlay's own thresholds (drain
#     bound, grace, pool size), so each alert fires just above its threshold and not at it, not
#     for another engine or namespace, not before its `for`; and a self-test: each alert of the
#     gateway and of one engine made to never fire and to always fire must fail them;
#  3. the metric names: real redis-server, croupier-game of every engine, croupier-gate and
#     croupier-director on loopback, a few bots playing the test game for a few seconds, every pod's /metrics scraped;
#     every metric name the rules and the dashboard use must be exported, and every expression
#     must parse with Prometheus' PromQL grammar (tests/prom/metric_names.mjs; self-tested on an
#     unknown name and a broken expression).
#
# Needs promtool (Debian `prometheus`, in ./dev's PKGS), kubectl with kustomize v5 (as
# tests/k8s), node and npm (the grammar is installed with `npm ci` from tests/prom's lock file
# into BUILD_ROOT/prom-check, never into the source tree), redis-server, curl. A missing tool is
# a failure, said in one line.
set -uo pipefail
SRC=$(cd "${1:?usage: run.sh SOURCE_ROOT BUILD_ROOT}" && pwd)
BUILD=$(cd "${2:?usage: run.sh SOURCE_ROOT BUILD_ROOT}" && pwd)
CACHE=$BUILD/prom-check
say() { echo "prom: $*" >&2; }
die() {
    say "FAIL: $*"
    exit 1
}

# node and npm as tests/k8s gets them: Debian's nodejs and npm when missing (as root).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || die "node/npm missing and not root: apt-get install nodejs npm"
    say "installing nodejs npm with apt-get"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
for t in promtool kubectl node npm redis-server curl python3; do
    command -v "$t" >/dev/null 2>&1 ||
        die "$t is missing (./dev installs what this test needs: prometheus, kubernetes-client, nodejs, npm, redis-server, curl)"
done
KV=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\{0,1\}\([0-9][0-9]*\).*/\1/p')
[ -n "$KV" ] && [ "$KV" -ge 5 ] ||
    die "$(command -v kubectl) embeds kustomize '${KV:-unknown}', older than v5: install kubectl >= 1.27"
python3 -c 'import yaml' 2>/dev/null || die "python3 cannot import yaml (Debian python3-yaml)"

mkdir -p "$CACHE"
LOCK=$SRC/tests/prom/package-lock.json
STAMP=$CACHE/lock.sha256
if [ ! -d "$CACHE/node_modules" ] || ! sha256sum --status -c "$STAMP" 2>/dev/null; then
    cp "$SRC/tests/prom/package.json" "$LOCK" "$CACHE/"
    say "npm ci into $CACHE"
    (cd "$CACHE" && npm ci --no-audit --no-fund --loglevel=error >"$CACHE/npm.log" 2>&1) || {
        cat "$CACHE/npm.log" >&2
        die "npm ci failed"
    }
    (cd "$CACHE" && sha256sum package-lock.json) | sed "s|package-lock.json|$LOCK|" >"$STAMP"
fi

# ---- 1 and 2: every overlay ----------------------------------------------------------------
exprs=()
first=1
for dir in "$SRC"/k8s/overlays/*/; do
    env=$(basename "$dir")
    out=$CACHE/$env
    rm -rf "$out"
    mkdir -p "$out"
    KUBECTL=kubectl sh "$SRC/k8s/render.sh" "$env" >"$out/rendered.yaml" 2>"$out/render.err" || {
        cat "$out/render.err" >&2
        die "kubectl kustomize failed for overlay $env"
    }
    mut=()
    [ $first = 1 ] && mut=(--mutants)
    python3 "$SRC/tests/prom/prom_check.py" "${mut[@]}" "$out/rendered.yaml" "$out" >"$out/gen.log" 2>&1 || {
        cat "$out/gen.log" >&2
        die "$env: prom_check.py failed"
    }
    say "$env: $(cat "$out/gen.log")"
    (cd "$out" && promtool check rules rules-*.yml dashboard-*.yml) >"$out/check.log" 2>&1 || {
        cat "$out/check.log" >&2
        die "$env: promtool check rules refused a rule file (above)"
    }
    (cd "$out" && promtool test rules test-*.yml) >"$out/test.log" 2>&1 || {
        cat "$out/test.log" >&2
        die "$env: promtool test rules failed (above)"
    }
    ntests=$(grep -c '^- name: ' "$out"/test-*.yml | awk -F: '{ s += $2 } END { print s }')
    say "$env: promtool check rules ok; promtool test rules ok ($ntests test groups in $(ls "$out"/test-*.yml | wc -l) files)"
    if [ $first = 1 ]; then
        # Every mutant must fail: promtool prints "Unit Testing:  FILE" then SUCCESS or FAILED.
        (cd "$out" && promtool test rules mutants/*/test.yml) >"$out/mutants.log" 2>&1
        nm=$(ls -d "$out"/mutants/*/ | wc -l)
        survived=$(awk '/^Unit Testing:/ { f = $3; next } /^  SUCCESS/ { print f }' "$out/mutants.log")
        nfailed=$(grep -c '^  FAILED' "$out/mutants.log")
        [ -z "$survived" ] || die "$env: the unit tests miss these broken alerts: $survived"
        [ "$nm" -gt 0 ] && [ "$nfailed" -eq "$nm" ] ||
            die "$env: self-test: $nm mutants, $nfailed failed (log $out/mutants.log)"
        say "$env: self-test ok: each of $nm broken alerts (never / always firing) fails the tests"
    fi
    exprs+=("$out/exprs.json")
    first=0
done
[ ${#exprs[@]} -gt 0 ] || die "no overlay under $SRC/k8s/overlays"

# ---- 3: metric names exported by the real binaries -----------------------------------------
# shellcheck source=../e2e/lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-prom.XXXXXX)
trap 'st=$?; e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ $st -ne 0 ] || rm -rf "$E2E_DIR"' EXIT
export CROUPIER_TEST_ROUND_MS=${CROUPIER_TEST_ROUND_MS:-300}
e2e_secret
e2e_redis_start
e2e_seed_wallets 7000000 6 1000000
e2e_redis set '{croupier:money}:wallet:house-traditional' 100000000 >/dev/null
pods=()
for e in traditional holdem persistent zhajinhua test; do
    e2e_game_start "game-$e" "$e" 10
    pods+=("game-$e")
done
e2e_gate_start gate-a
pods+=(gate-a)
# The tournament director: its drain shell's metrics (director_*) and its own (tour_*) exist from
# the start, every counter at 0.
e2e_director_start director-a
pods+=(director-a)
# A few rounds on the test engine, so that the per-round series (game_rounds_total) exist.
"$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" --bots 6 --game test \
    --engine traditional --seconds 3 --player-base 7000000 --token-secret-file "$E2E_DIR/secret" \
    --finish-timeout-ms 20000 --report "$E2E_DIR/report.json" >"$E2E_DIR/bot.log" 2>&1 ||
    die "croupier-bot failed (log $E2E_DIR/bot.log)"
scrapes=()
for p in "${pods[@]}"; do
    e2e_get "${POD_HEALTH[$p]}/metrics" 5 >"$E2E_DIR/$p.metrics" ||
        die "$p: GET /metrics failed (log ${POD_LOG[$p]})"
    scrapes+=("$E2E_DIR/$p.metrics")
done
grep -q '^game_rounds_total{' "$E2E_DIR/game-test.metrics" ||
    die "the bots played no round on the test engine (log $E2E_DIR/bot.log)"
IFS=, joined="${exprs[*]}"
unset IFS
node "$SRC/tests/prom/metric_names.mjs" --modules "$CACHE" --exprs "$joined" "${scrapes[@]}" ||
    die "a metric the rules or the dashboard use is not exported, or an expression does not parse (above)"
# Self-test: an unknown metric name and a broken expression are both caught.
printf '[{"where":"self-test","expr":"sum(rate(croupier_no_such_metric_total[5m]))"},{"where":"self-test broken","expr":"sum by (pod (game_desks)"}]' \
    >"$E2E_DIR/bad.json"
node "$SRC/tests/prom/metric_names.mjs" --modules "$CACHE" --exprs "$E2E_DIR/bad.json" \
    "${scrapes[@]}" >"$E2E_DIR/bad.log" 2>&1 && die "self-test: metric_names.mjs accepted bad expressions"
grep -q 'croupier_no_such_metric_total (used by self-test)' "$E2E_DIR/bad.log" &&
    grep -q 'self-test broken: does not parse' "$E2E_DIR/bad.log" ||
    die "self-test: metric_names.mjs did not name both problems: $(cat "$E2E_DIR/bad.log")"
say "ok: every metric the rules and the dashboard use is exported by the real processes; self-test ok"
