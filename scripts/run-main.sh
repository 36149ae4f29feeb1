#!/usr/bin/env bash
# scripts/run-main.sh [ARGS...]: what `./dev run` runs (after ./dev has built build/).
#
#   scripts/run-main.sh [--seconds N] [--bots N] [--prometheus] [--redis-ha | --redis-cluster]
#                       [--help]
#       the local cluster demo (scripts/demo-cluster.sh): Redis (one redis-server; with
#       --redis-ha a master, two replicas and three Sentinels; with --redis-cluster a Redis
#       Cluster of 3 masters and 3 replicas), two gateways, two directors, one game
#       server per engine and a few hundred bots on loopback; a live summary once a second; every
#       deployment rolled once; the zero-loss report and the chart. Ctrl-C stops everything.
#   scripts/run-main.sh --runtime-demo [ARGS...]
#       the desk-actor runtime demo (engine/rt_demo.c) instead: the runtime alone with a few
#       thousand bot desks (ARGS are its own: --seconds, --desks, --help).
#
# Env: CROUPIER_BUILD_DIR (default build/).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${CROUPIER_BUILD_DIR:-$ROOT/build}

if [ "${1:-}" = --runtime-demo ]; then
    shift
    DEMO=$BUILD/engine/croupier-runtime-demo
    if [ ! -x "$DEMO" ]; then
        echo "run-main: $DEMO is missing; build first (./dev setup, or ninja -C $BUILD)" >&2
        exit 1
    fi
    exec "$DEMO" "$@"
fi
CROUPIER_BUILD_DIR=$BUILD exec "$ROOT/scripts/demo-cluster.sh" "$@"
