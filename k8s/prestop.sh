#!/bin/sh
# preStop hook of croupier-game (docs/architecture.md §4 "preStop"): start the drain and wait,
# bounded by the engine's drain bound, until no desk with a human seated is in a round.
#
#   HEALTH_PORT        port of the health server on 127.0.0.1 (default 8080)
#   DRAIN_MAX_SECONDS  the engine's drain bound, the most this script waits (default 600)
#
# POSIX sh for busybox: GET only, with `wget -q -O-`. It calls /drain, then long-polls
# /drain/wait?timeout=S until the status says "human_desks":0; if /drain/wait fails it falls back
# to polling /drain/status every 2 s. It always exits 0 (kubelet ignores preStop failures anyway,
# and the process's own SIGTERM handling still voids, flushes and releases); the log line says
# why it stopped waiting. PRESTOP_WAIT_PATH overrides "/drain/wait" (tests use it to exercise
# the fallback).

PORT=${HEALTH_PORT:-8080}
BOUND=${DRAIN_MAX_SECONDS:-600}
WAIT_PATH=${PRESTOP_WAIT_PATH:-/drain/wait}

log() {
    echo "prestop: $*" >&2
}

case $PORT in
'' | *[!0-9]*)
    log "HEALTH_PORT='$PORT' is not a port number; using 8080"
    PORT=8080
    ;;
esac
case $BOUND in
'' | *[!0-9]*)
    log "DRAIN_MAX_SECONDS='$BOUND' is not a whole number of seconds; using 600"
    BOUND=600
    ;;
esac

BASE=http://127.0.0.1:$PORT
START=$(date +%s)
DEADLINE=$((START + BOUND))

# get PATH SECONDS: GET BASE/PATH, killed after SECONDS if `timeout` exists. Prints the body on
# success; on failure prints wget's error and returns non-zero.
get() {
    if command -v timeout >/dev/null 2>&1; then
        timeout "$2" wget -q -O- "$BASE$1" 2>&1
    else
        wget -q -O- "$BASE$1" 2>&1
    fi
}

# Whether a status JSON body says no human desk is in a round.
drained() {
    case $1 in
    *'"human_desks":0,'* | *'"human_desks":0}'*) return 0 ;;
    esac
    return 1
}

# at_most N: N, or the seconds left before the deadline if fewer (at least 1).
at_most() {
    l=$((DEADLINE - $(date +%s)))
    [ "$l" -lt "$1" ] && set -- "$l"
    [ "$1" -lt 1 ] && set -- 1
    echo "$1"
}

if body=$(get /drain "$(at_most 5)"); then
    log "drain started: $body"
else
    log "GET /drain failed: $body"
    body=
fi

mode='wait'
failures=0
while :; do
    now=$(date +%s)
    if drained "$body"; then
        log "done after $((now - START))s: no human desk in a round ($body)"
        exit 0
    fi
    left=$((DEADLINE - now))
    if [ "$left" -le 0 ]; then
        log "gave up after $((now - START))s: the drain bound DRAIN_MAX_SECONDS=$BOUND passed" \
            "with human desks still in a round (last status: ${body:-none})"
        exit 0
    fi
    if [ "$mode" = wait ]; then
        t=$left
        [ "$t" -gt 60 ] && t=60
        if body=$(get "$WAIT_PATH?timeout=$t" $((t + 1))); then
            continue
        fi
        log "GET $WAIT_PATH failed ($body); falling back to polling /drain/status every 2s"
        body=
        mode='poll'
        continue
    fi
    sleep "$(at_most 2)"
    if body=$(get /drain/status "$(at_most 5)"); then
        failures=0
    else
        failures=$((failures + 1))
        log "GET /drain/status failed ($failures in a row): $body"
        body=
        if [ "$failures" -ge 3 ]; then
            log "gave up after $(($(date +%s) - START))s: the health server does not answer"
            exit 0
        fi
    fi
done
