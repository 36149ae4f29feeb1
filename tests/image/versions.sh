#!/usr/bin/env bash
# tests/image/versions.sh BUILD SRC -- every installed binary (meson's list,
# BUILD/meson-info/intro-installed.json) prints `<name> <version>` for --version, all the same
# version (common/version.h), which is the source tree's `git describe --always --dirty` when the
# tree has git history (meson test rebuilds first, and every build regenerates version.c).
set -u
BUILD=$(cd "${1:?usage: versions.sh BUILD SRC}" && pwd)
SRC=$(cd "${2:?}" && pwd)
want=$(git -C "$SRC" describe --always --dirty 2>/dev/null || true)
fail=0 n=0 seen=
while read -r built name; do
    n=$((n + 1))
    out=$("$built" --version 2>&1) || { echo "FAIL $name --version: status $? ($out)"; fail=1; continue; }
    v=${out#"$name "}
    if [ "$out" = "$v" ] || [ -z "$v" ] || [ "${v#* }" != "$v" ]; then
        echo "FAIL $name --version printed '$out', not '$name <version>'"
        fail=1
    elif [ -n "$want" ] && [ "$v" != "$want" ]; then
        echo "FAIL $name --version says $v, the tree is $want"
        fail=1
    elif [ -n "$seen" ] && [ "$v" != "$seen" ]; then
        echo "FAIL $name --version says $v, another binary $seen"
        fail=1
    else
        echo "ok   $out"
    fi
    seen=$v
done < <(python3 -c '
import json, os, sys
for built, dest in json.load(open(sys.argv[1])).items():
    if dest.startswith("/usr/local/bin/"):
        print(built, os.path.basename(dest))' "$BUILD/meson-info/intro-installed.json")
[ "$n" -gt 0 ] || { echo "FAIL no installed binary in $BUILD/meson-info/intro-installed.json"; exit 1; }
exit $fail
