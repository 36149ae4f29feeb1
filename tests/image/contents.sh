#!/usr/bin/env bash
# tests/image/contents.sh BUILD SRC IMAGE -- what the image holds (docs/deploy.md "The image"):
#   * no compiler, assembler, linker or build tool, no headers, static libraries or objects, no
#     package manager or interpreter besides busybox;
#   * no test file: no test, replay, fuzz or benchmark program, no test helper process, no
#     source, test script or build directory;
#   * /usr/local/bin holds exactly the binaries `meson install` installs (the build's
#     meson-info/intro-installed.json), each printing `<name> <version>` for --version, the
#     version being the image's label and the source tree's git describe;
#   * busybox's sh, wget, timeout, date and sleep (k8s/prestop.sh under /bin/sh, the preStop
#     hook of k8s/base), and the user 65532:65532.
# Prints one line per check; exit 0 when all pass, 1 otherwise.
set -u
BUILD=$(cd "${1:?usage: contents.sh BUILD SRC IMAGE}" && pwd)
SRC=$(cd "${2:?}" && pwd)
IMAGE=${3:?}
# shellcheck source=../../scripts/image.sh
. "$SRC/scripts/image.sh"

fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then
        echo "ok   $1"
    else
        echo "FAIL $1"
        fail=1
    fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cid=$(image_podman create "$IMAGE" /bin/true) || {
    echo "FAIL image $IMAGE cannot be used (scripts/image.sh build first)"
    exit 1
}
image_podman export "$cid" | tar -t | sed 's|^\./||; s|^|/|; s|/$||' | sort -u >"$tmp/files"
image_podman rm "$cid" >/dev/null
n=$(wc -l <"$tmp/files")
check "the image lists its files ($n)" test "$n" -gt 10

# Compilers and build tools by name, then by what they leave (headers, archives, objects).
grep -E '/(cc|c89|c99|gcc|g\+\+|c\+\+|cpp|cc1|cc1plus|collect2|clang[^/]*|tcc|ld|ld\.[a-z]+|as|gold|lto[^/]*|make|meson|ninja|cmake|pkg-config|pkgconf|protoc[^/]*|[a-z0-9_]+-linux-gnu-[^/]+)$' \
    "$tmp/files" >"$tmp/compilers" || true
grep -E '^/usr/(lib/gcc|libexec/gcc|include)(/|$)|\.(h|a|o|c)$|/pkgconfig(/|$)' "$tmp/files" \
    >>"$tmp/compilers" || true
check "no compiler, linker or build tool ($(wc -l <"$tmp/compilers"): $(head -3 "$tmp/compilers" | tr '\n' ' '))" \
    test ! -s "$tmp/compilers"
grep -E '/(apt|apt-get|dpkg|perl|python[0-9.]*|bash)$' "$tmp/files" >"$tmp/tools" || true
check "no package manager or interpreter but busybox ($(tr '\n' ' ' <"$tmp/tools"))" \
    test ! -s "$tmp/tools"

# Test files: programs and helpers of the test suites, sources, scripts, build directories.
grep -E '/(test_[^/]*|replay_[^/]*|fuzz_[^/]*|bench_[^/]*|[^/]*_test[^/]*|lease_holder|drain_test_server|money_producer|proto_corpus_gen|zjh_corpus_gen|holdem_eval_gen|croupier-runtime-demo|redis-server|redis-cli)$' \
    "$tmp/files" >"$tmp/tests" || true
grep -E '(^|/)(tests|bench|fuzz|src|build|meson-logs|meson-info)(/|$)|\.(sh|py|mjs|proto|ninja)$|/meson\.build$' \
    "$tmp/files" >>"$tmp/tests" || true
check "no test file ($(wc -l <"$tmp/tests"): $(head -3 "$tmp/tests" | tr '\n' ' '))" \
    test ! -s "$tmp/tests"

# The installed binaries, all and only them.
python3 -c '
import json, os, sys
for dest in json.load(open(sys.argv[1])).values():
    if dest.startswith("/usr/local/bin/"):
        print(dest)' "$BUILD/meson-info/intro-installed.json" | sort >"$tmp/want"
grep -E '^/usr/local/bin/' "$tmp/files" | sort >"$tmp/have"
check "/usr/local/bin is what meson installs: $(tr '\n' ' ' <"$tmp/want")" \
    cmp -s "$tmp/want" "$tmp/have"
label=$(image_podman image inspect -f '{{index .Labels "org.opencontainers.image.version"}}' "$IMAGE")
version=$(image_version)
check "the image's version label is the tree's git describe ($label, tree $version)" \
    test "$label" = "$version"
while read -r b; do
    out=$(image_podman run --rm --network none "$IMAGE" "$b" --version 2>&1)
    check "$b --version prints '${b##*/} $label' ($out)" test "$out" = "${b##*/} $label"
done <"$tmp/want"

# The same features as the build's binaries (an optional dependency missing from the image's
# build, libwslay say, would drop flags): each binary's --help lists the same flags.
python3 -c '
import json, sys
for built, dest in json.load(open(sys.argv[1])).items():
    if dest.startswith("/usr/local/bin/"):
        print(dest, built)' "$BUILD/meson-info/intro-installed.json" | sort >"$tmp/built"
while read -r b built; do
    "$built" --help 2>&1 | grep -oE '^  --[a-z0-9-]+' | sort >"$tmp/help-build"
    image_podman run --rm --network none "$IMAGE" "$b" --help 2>&1 | grep -oE '^  --[a-z0-9-]+' |
        sort >"$tmp/help-image"
    check "$b --help lists the build's flags ($(wc -l <"$tmp/help-image") flags; differing: $(comm -3 "$tmp/help-build" "$tmp/help-image" | tr -d ' \t' | tr '\n' ' '))" \
        cmp -s "$tmp/help-build" "$tmp/help-image"
done <"$tmp/built"

# What the preStop hook needs, and the user.
for a in sh wget timeout date sleep; do
    check "busybox $a is /bin/$a" grep -qx "/bin/$a" "$tmp/files"
done
out=$(image_podman run --rm --network none "$IMAGE" /bin/sh -c 'echo "$(id -u):$(id -g)"; wget --help 2>&1 | head -1')
check "runs as 65532:65532 with busybox's wget ($(echo "$out" | tr '\n' ' '))" \
    test "$(echo "$out" | head -1)" = 65532:65532
user=$(image_podman image inspect -f '{{.Config.User}}' "$IMAGE")
check "the image's user is 65532:65532 ($user)" test "$user" = 65532:65532
size=$(image_podman image inspect -f '{{.Size}}' "$IMAGE")
echo "info image $IMAGE: $((size / 1024 / 1024)) MiB, $n files"
exit $fail
