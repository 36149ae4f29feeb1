#!/bin/sh
# run-fuzzer.sh FUZZER CORPUS: fuzz for CROUPIER_FUZZ_SECONDS (default 20) on a scratch copy
# of the committed corpus, so new inputs never dirty the source tree.
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$2"/. "$work/"
# libFuzzer's default exit code for a finding is 77, which meson reads as "skipped": make every
# finding (crash, leak, timeout, OOM) a plain failure. A crashing input is saved in the
# current directory (the build dir under meson test) as crash-<sha1>.
exec "$1" -max_total_time="${CROUPIER_FUZZ_SECONDS:-20}" -print_final_stats=1 \
    -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 "$work"
