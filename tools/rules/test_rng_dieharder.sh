#!/bin/sh
# The deck generator's raw output (croupier-rules rng-raw, the stream the shuffles consume) through
# a few dieharder tests (docs/fairness.md "The tests"). A test fails on a FAILED assessment
# (p < 10^-6, dieharder's own rule); WEAK (p < 0.005 or > 0.995) happens by chance in about one
# test of 100 and is only reported. $1: the croupier-rules binary. Exit 77 (skipped) without
# dieharder (Debian: apt-get install dieharder).
set -u
R=$1
if ! command -v dieharder >/dev/null 2>&1; then
    echo "SKIP: dieharder is not installed (apt-get install dieharder)"
    exit 77
fi
# birthdays, operm5, rank 32x32, runs, sts monobit, sts runs
status=0
for d in 0 1 2 15 100 101; do
    out=$("$R" rng-raw 1099511627776 | dieharder -g 200 -d "$d" 2>&1 | grep -E 'PASSED|WEAK|FAILED')
    echo "$out" | sed 's/^/# /'
    if [ -z "$out" ] || echo "$out" | grep -q FAILED; then
        echo "FAIL: dieharder -d $d" >&2
        status=1
    fi
done
exit $status
