#!/usr/bin/env bash
# The engines' descriptions for the e2e scripts (games/<folder>/e2e.env, engine/e2e.env; read by
# tests/e2e/lib.sh e2e_engine_desc): every game folder that registers an engine describes it,
# every description reads, and an unknown engine or a bad description is an error, never a
# default (bots_smoke.sh with an unknown ENGINE exits 2 before starting anything).
#
#   tests/e2e/test_engine_desc.sh SOURCE_DIR
# shellcheck disable=SC2015 # "A && ok || bad": ok only echoes, it never fails
set -u
SRC=$(cd "${1:?usage: test_engine_desc.sh SOURCE_DIR}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

for mb in "$SRC"/games/*/meson.build; do
    d=$(dirname "$mb")
    grep -q '^game_engines +=' "$mb" || continue
    if [ -f "$d/e2e.env" ]; then ok "$(basename "$d") has e2e.env"; else bad "$(basename "$d") registers an engine but has no e2e.env"; fi
done
names=$(e2e_engine_names)
for e in $names; do
    if (e2e_engine_desc "$e" && [ -n "$E2E_GAMES" ] && [ -n "$E2E_JOIN" ]); then
        ok "engine $e reads"
    else
        bad "engine $e does not read"
    fi
done
for e in test traditional holdem persistent zhajinhua niuniu; do
    [[ " $names " == *" $e "* ]] && ok "engine $e is described" || bad "engine $e is not described"
done
# the description's values
(e2e_engine_desc niuniu && [ "$E2E_JOIN" = game ] && [ "$E2E_SEAT_ACCOUNTS" = "ts.*" ] &&
    [ -n "${CROUPIER_NIUNIU_ACTION_MS:-}" ]) && ok "niuniu: joined as game, ts.*, its env" ||
    bad "niuniu's description"
(CROUPIER_NIUNIU_GAP_MS=7 && export CROUPIER_NIUNIU_GAP_MS && e2e_engine_desc niuniu &&
    [ "$CROUPIER_NIUNIU_GAP_MS" = 7 ]) && ok "an env default does not override the caller's" ||
    bad "an env default overrode the caller's"
(e2e_engine_desc traditional && [ "$E2E_ROLLOUT_GAMES" = "doudizhu guandan" ] &&
    [ "$E2E_HOUSE_SEED" = "house-traditional:100000000" ]) && ok "traditional: rollout games, house seed" ||
    bad "traditional's description"

msg=$(e2e_engine_desc nosuch 2>&1) && bad "an unknown engine was accepted" ||
    { [[ $msg == *"no engine 'nosuch'"*niuniu* ]] && ok "unknown engine refused: $msg" || bad "unknown engine: '$msg'"; }
# bad descriptions, in a tree of their own
T=$(mktemp -d /tmp/croupier-engine-desc.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/games/a" "$T/engine"
try() { # try CONTENT EXPECTED-MESSAGE-PART
    printf '%s\n' "$1" >"$T/games/a/e2e.env"
    local m
    if m=$(SRC=$T e2e_engine_desc a 2>&1); then
        bad "accepted: $(echo "$1" | tr '\n' ';')"
    elif [[ $m == *"$2"* ]]; then
        ok "refused: $m"
    else
        bad "refused with '$m', expected '$2'"
    fi
}
base=$'engine=a\ngames=a\njoin=game\nbots=2\nbot_seconds=3\nseat_accounts=ts.*'
try "$base"$'\ncolour=blue' "unknown key 'colour'"
try $'engine=a\ngames=a\njoin=game\nbots=2\nbot_seconds=3' "'seat_accounts' is required"
try "${base/bots=2/bots=two}" "bots 'two' is not a positive number"
try "$base"$'\nenv=lower=1' "env needs VARIABLE=DEFAULT"
try "$base"$'\nhouse_fund=nowallet' "house_fund needs WALLET:VALUE"
try "$base"$'\njust words' "not KEY=VALUE"
printf '%s\n' "$base" >"$T/games/a/e2e.env"
(SRC=$T e2e_engine_desc a) && ok "a good description reads" || bad "a good description refused"

st=0
out=$(ENGINE=nosuch "$SRC/tests/e2e/bots_smoke.sh" "$T" "$SRC" 2>&1) || st=$?
[ "$st" = 2 ] && [[ $out == *"no engine 'nosuch'"* ]] && ok "bots_smoke.sh ENGINE=nosuch exits 2" ||
    bad "bots_smoke.sh ENGINE=nosuch: status $st, '$out'"
exit $fail
