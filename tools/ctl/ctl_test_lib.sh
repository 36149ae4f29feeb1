# The helpers the croupier-ctl test scripts share (sourced after tests/e2e/lib.sh, with $CTL,
# $E2E_DIR and $REDIS_PORT set by the script; FAILS counts the failed checks).
# shellcheck shell=bash

ok() { e2e_log "ok: $1"; }
bad() {
    e2e_log "FAIL: $1"
    FAILS=$((FAILS + 1))
}
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then ok "$1"; else bad "$1"; fi
}
# ctl ARGS...: runs croupier-ctl against this Redis; stdout in $OUT, stderr in $ERR, status in $RC.
ctl() {
    OUT=$("$CTL" --redis "127.0.0.1:$REDIS_PORT" "$@" 2>"$E2E_DIR/ctl.err")
    RC=$?
    ERR=$(cat "$E2E_DIR/ctl.err")
}
# expect STATUS DESCRIPTION ARGS...: croupier-ctl ARGS must exit with STATUS and say why on stderr.
expect() {
    local want=$1 what=$2
    shift 2
    ctl "$@"
    if [ "$RC" -eq "$want" ] && { [ "$want" -eq 0 ] || [ -n "$ERR" ]; }; then
        ok "$what (exit $RC${ERR:+: $ERR})"
    else
        bad "$what: exit $RC, wanted $want (stdout: $OUT; stderr: $ERR)"
    fi
}
# j EXPR: Python over the JSON in $OUT (as d)
j() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print($1)" "$OUT"; }
# has TEXT NEEDLE: whether TEXT contains NEEDLE
has() { [[ "$1" == *"$2"* ]]; }
