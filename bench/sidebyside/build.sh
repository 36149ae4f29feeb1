#!/usr/bin/env bash
# bench/sidebyside/build.sh OMPEVAL_DIR BUILD_DIR: builds BUILD_DIR/holdem_vs_ompeval, the paired
# comparison of croupier's evaluators with OMPEval (holdem_vs_ompeval.cpp explains it).
#   OMPEVAL_DIR  a checkout of https://github.com/zekyll/OMPEval; its lib/ompeval.a is built
#                with its own Makefile when missing (gcc 12 needs `#include <cstddef>` and
#                `<cstdint>` where its headers use size_t / uint64_t, and a `constexpr` dropped
#                where gcc refuses one; those edits stay in that checkout)
#   BUILD_DIR    a croupier release build (meson setup BUILD_DIR -Dbuildtype=release
#                -Db_ndebug=true && ninja -C BUILD_DIR): its generated evaluator tables are used
# Croupier's code is compiled as C with the release build's flags (-O3, no -march); OMPEval
# with its Makefile's (-O3 -msse4.2).
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 OMPEVAL_DIR BUILD_DIR" >&2
    exit 2
fi
omp=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
tables=$build/games/holdem/holdem_eval_tables.c
[ -f "$tables" ] || { echo "$tables missing: build $build first" >&2; exit 1; }
[ -f "$omp/omp/HandEvaluator.h" ] || { echo "$omp is not an OMPEval checkout" >&2; exit 1; }
[ -f "$omp/lib/ompeval.a" ] || make -C "$omp" lib/ompeval.a
out=$build/sidebyside
mkdir -p "$out"
cflags=(-O3 -std=c11 -D_GNU_SOURCE -DNDEBUG -Wall -Wextra -Werror -I"$src/games/holdem"
        -I"$src/bench/sidebyside")
for f in "$src/bench/sidebyside/holdem_loops.c" "$src/games/holdem/holdem_enum.c" \
         "$src/games/holdem/holdem_eval.c" "$tables"; do
    cc "${cflags[@]}" -c "$f" -o "$out/$(basename "${f%.c}").o"
done
c++ -O3 -std=c++11 -msse4.2 -I"$omp" -I"$src/bench/sidebyside" \
    "$src/bench/sidebyside/holdem_vs_ompeval.cpp" "$out"/*.o "$omp/lib/ompeval.a" -lpthread \
    -o "$build/holdem_vs_ompeval"
echo "built $build/holdem_vs_ompeval"
