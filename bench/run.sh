#!/usr/bin/env bash
# bench/run.sh BUILD_DIR [NAME...]: runs every benchmark (or the named ones) of an optimised
# build. Each prints its figures and the command line that reproduces them.
set -euo pipefail
dir=$(cd "$1" && pwd)
shift
export CROUPIER_BUILD=$dir
CROUPIER_SOURCE=$(cd "$(dirname "$0")/.." && pwd)
export CROUPIER_SOURCE
cd "$dir/bench"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    mapfile -t names < <(find . -maxdepth 1 -type f -executable -name 'bench_*' -printf '%f\n' | sort)
fi
for n in "${names[@]}"; do
    echo "== $n"
    "./$n"
done
