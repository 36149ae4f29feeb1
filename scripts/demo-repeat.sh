#!/usr/bin/env bash
# scripts/demo-repeat.sh N [DEMO ARGS...] -- runs the `./dev run` demo (scripts/demo-cluster.sh)
# N times in a row on the current build and tallies the verdicts: the proof that the headline
# job does not fail now and then (issue 27). Each run writes to its own directory
# BUILD/demo-repeat/run-K (its output beside it, run-K.txt); a passing run's are removed, a
# failing run's kept whole (logs, bot reports, report.md) for the post-mortem. Prints one line a run and a tally; exit
# status 0 only when every run said `ZERO LOSS: yes`.
#
#   scripts/demo-repeat.sh 20 --seconds 120
#
# Env: CROUPIER_BUILD_DIR (default build/, built by ./dev setup).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${CROUPIER_BUILD_DIR:-$ROOT/build}
N=${1:-}
if ! [[ "$N" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: scripts/demo-repeat.sh N [DEMO ARGS...]   (N >= 1 runs of scripts/demo-cluster.sh)" >&2
    exit 2
fi
shift
[ -x "$BUILD/engine/process/croupier-game" ] ||
    { echo "demo-repeat: $BUILD is not built (./dev setup)" >&2; exit 2; }
BASE=$BUILD/demo-repeat
mkdir -p "$BASE"
pass=0 fail=0 failed=()
for k in $(seq 1 "$N"); do
    out=$BASE/run-$k txt=$BASE/run-$k.txt
    rm -rf "$out" "$txt"
    mkdir -p "$out"
    t0=$SECONDS
    CROUPIER_BUILD_DIR=$BUILD CROUPIER_DEMO_OUT=$out "$ROOT/scripts/demo-cluster.sh" "$@" \
        >"$txt" 2>&1 </dev/null
    st=$?
    verdict=$(grep -m1 '^ZERO LOSS:' "$txt" || echo "ZERO LOSS: (no verdict: exit $st)")
    printf 'run %d/%d: %s (exit %d, %d s)\n' "$k" "$N" "$verdict" "$st" $((SECONDS - t0))
    if [ "$st" -eq 0 ] && [[ "$verdict" == "ZERO LOSS: yes"* ]]; then
        pass=$((pass + 1))
        rm -rf "$out" "$txt"
    else
        fail=$((fail + 1))
        failed+=("$out")
        grep '^  FAIL' "$txt" | sort -u | sed 's/^/    /'
    fi
done
echo "demo-repeat: $pass of $N runs ZERO LOSS: yes, $fail failed"
for d in "${failed[@]}"; do echo "  kept: $d and $d.txt"; done
[ "$fail" -eq 0 ]
