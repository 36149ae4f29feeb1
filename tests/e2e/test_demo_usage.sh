#!/usr/bin/env bash
# The demo's command line (scripts/demo-cluster.sh, `./dev run`; docs/demo.md): bad flags are
# refused before anything starts, each with one line on stderr and exit status 2 --
# --redis-ha beside --redis-cluster (in either order), an unknown flag, --seconds and --bots out
# of range -- and --help names every Redis mode. Nothing is started (a second or so).
#
#   tests/e2e/test_demo_usage.sh SOURCE_DIR
set -u
SRC=$(cd "${1:?usage: test_demo_usage.sh SOURCE_DIR}" && pwd)
DEMO=$SRC/scripts/demo-cluster.sh
OUT=$(mktemp -d /tmp/croupier-demo-usage.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
fail=0

refused() { # WANT_PATTERN FLAGS...: exit 2, one stderr line matching WANT, nothing on stdout
    local want=$1 st=0 lines
    shift
    # (a build directory that does not exist: a flag that got past the checks would stop there)
    CROUPIER_BUILD_DIR=$OUT/no-build CROUPIER_DEMO_OUT=$OUT/demo timeout 20 "$DEMO" "$@" \
        >"$OUT/out" 2>"$OUT/err" || st=$?
    lines=$(wc -l <"$OUT/err")
    if [ "$st" = 2 ] && [ "$lines" = 1 ] && grep -q -- "$want" "$OUT/err" && [ ! -s "$OUT/out" ]; then
        echo "ok: $* refused: $(cat "$OUT/err")"
    else
        echo "FAIL: $*: status $st, $lines stderr lines: $(head -c 300 "$OUT/err")"
        fail=1
    fi
}

refused "exclude each other" --redis-ha --redis-cluster
refused "exclude each other" --redis-cluster --redis-ha
refused "exclude each other" --seconds 30 --redis-cluster --prometheus --redis-ha
refused "unknown argument '--redis-clusters'" --redis-clusters
refused "seconds must be 20..86400" --redis-cluster --seconds 5
refused "bots must be 12..5000" --redis-cluster --bots 3
refused "is not a whole number" --redis-cluster --seconds x

st=0
"$DEMO" --help >"$OUT/help" 2>&1 || st=$?
if [ "$st" = 0 ] && grep -q -- '--redis-cluster' "$OUT/help" && grep -q -- '--redis-ha' "$OUT/help"; then
    echo "ok: --help names --redis-ha and --redis-cluster"
else
    echo "FAIL: --help (status $st): $(head -c 300 "$OUT/help")"
    fail=1
fi
exit $fail
