#!/usr/bin/env bash
# bench/run.sh BUILD_DIR [NAME...]: runs every benchmark (or the named ones) of an optimised
# build. Each prints its figures and the command line that reproduces them.
set -euo pipefail
dir=$1
shift
cd "$dir/bench"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    mapfile -t names < <(find . -maxdepth 1 -type f -executable -name 'bench_*' -printf '%f\n' | sort)
fi
for n in "${names[@]}"; do
    echo "== $n"
    "./$n"
done
