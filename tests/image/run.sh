#!/usr/bin/env bash
# tests/image/run.sh BUILD SRC -- the image suite (meson suite 'image', opt-in: it builds the
# image, a minute or more; docs/deploy.md "The image"):
#   1. `scripts/image.sh build` (what `./dev image` runs) from this source tree;
#   2. tests/image/contents.sh: no compiler, no test file, the installed binaries and their
#      --version, busybox for the preStop hook, uid 65532;
#   3. tests/image/manifest_flags.py --image: every flag and variable k8s/ passes to a binary
#      exists in the --help of the binary inside the image, and its value parses;
#   4. tests/image/rollout.sh: a rollout run from the image's containers under bots, on the test
#      engine, then on hold'em.
# Prints how long the build and the rollout took (also in BUILD/image-suite/timings.txt).
# Runs only with CROUPIER_TEST_IMAGE=1 (else exit 77 = skipped); needs root and podman
# (`./dev image` installs podman, buildah, runc and debootstrap), and fails saying so without.
set -u
BUILD=$(cd "${1:?usage: run.sh BUILD SRC}" && pwd)
SRC=$(cd "${2:?usage: run.sh BUILD SRC}" && pwd)
if [ "${CROUPIER_TEST_IMAGE:-0}" != 1 ]; then
    echo "image suite skipped: opt in with CROUPIER_TEST_IMAGE=1" >&2
    exit 77
fi
if [ "$(id -u)" -ne 0 ] || ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null; then
    echo "image suite: FAIL: needs root, podman and debootstrap (./dev image installs them)" >&2
    exit 1
fi
# shellcheck source=../../scripts/image.sh
. "$SRC/scripts/image.sh"
OUT=$BUILD/image-suite
mkdir -p "$OUT"
fail=0
step() { # step NAME COMMAND...: runs it, its output to OUT/NAME.log and to stdout
    local t0=$SECONDS rc=0
    echo "== $1" >&2
    "${@:2}" >"$OUT/$1.log" 2>&1 || rc=$?
    grep -E '^(ok|FAIL|info|manifest_flags:|image:)' "$OUT/$1.log" || true
    TIME[$1]=$((SECONDS - t0))
    if [ $rc -ne 0 ]; then
        echo "FAIL $1 (status $rc): $OUT/$1.log" >&2
        tail -n 30 "$OUT/$1.log" >&2
        fail=1
    fi
    return $rc
}
declare -A TIME
if step build "$SRC/scripts/image.sh" build; then
    IMAGE=$IMAGE_NAME:$(image_version)
    step contents "$SRC/tests/image/contents.sh" "$BUILD" "$SRC" "$IMAGE"
    step manifest_flags python3 "$SRC/tests/image/manifest_flags.py" --source "$SRC" --image "$IMAGE"
    step rollout "$SRC/tests/image/rollout.sh" "$BUILD" "$SRC" "$IMAGE"
    ENGINE=holdem GAME=holdem JOIN=holdem IMAGE_OUT=$BUILD/image-rollout-holdem \
        step rollout_holdem "$SRC/tests/image/rollout.sh" "$BUILD" "$SRC" "$IMAGE"
fi
{
    echo "image build: ${TIME[build]:-?} s (scripts/image.sh build)"
    echo "image contents check: ${TIME[contents]:-not run} s"
    echo "manifest flags in the image: ${TIME[manifest_flags]:-not run} s"
    echo "image rollout test: ${TIME[rollout]:-not run} s (tests/image/rollout.sh, test engine)"
    echo "image rollout test, hold'em: ${TIME[rollout_holdem]:-not run} s"
} | tee "$OUT/timings.txt"
exit $fail
