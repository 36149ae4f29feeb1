#!/usr/bin/env bash
# scripts/run-main.sh [ARGS...]: what `./dev run` runs (after ./dev has built build/).
#
# The local cluster (Redis, gateways, game servers, bots) is not assembled yet. Until it is,
# this runs what really exists: the desk-actor runtime demo (engine/rt_demo.c), which starts the
# runtime with 2 workers and a few thousand bot desks playing timed rounds, prints live figures
# once a second for 10 s (ARGS are passed on, e.g. --seconds 30, --desks 5000, --help), then
# stops intake, shows the rounds finishing and exits.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${CROUPIER_BUILD_DIR:-$ROOT/build}
DEMO=$BUILD/engine/croupier-runtime-demo
if [ ! -x "$DEMO" ]; then
    echo "run-main: $DEMO is missing; build first (./dev setup, or ninja -C $BUILD)" >&2
    exit 1
fi
echo "run-main: the full cluster does not exist yet; running the desk-actor runtime demo" >&2
exec "$DEMO" "$@"
