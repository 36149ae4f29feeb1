#!/usr/bin/env bash
# Integration test (issue 34): an engine with the money by entity on a Redis Cluster
# (croupier-game --money-by-entity, EXPERIMENTAL; docs/queues.md "The game server's money by
# entity"): hold'em, or the engine ENGINE names (zhajinhua, niuniu, traditional, persistent:
# meson test cluster_entity_<engine>). A real cluster of 3 masters and 3 replicas on loopback,
# two servers of the engine with --money-by-entity (each epoch's seat accounts and settlements
# in its own slot, the wallets in the players' slots, buy-ins and cash-outs as transfers between
# slots) and one gateway; a bot fleet per game for BOT_SECONDS (20). Mid-play the server that
# seats the most players is SIGKILLed: the other's sweeper claims its epoch after the grace and
# returns its seat accounts to the wallets as transfers, and the gateway seats its players on
# the other. Passes when each game's bots (one croupier-bot per game of GAMES, the engine's
# description's by default, tests/e2e/lib.sh e2e_engine_desc) finished games with none torn and
# no unexpected error, every finished round has its settlement in its epoch's slot (and no
# voided one has), no script was refused for keys in two slots, and croupier-ctl audit balances
# with every seat account back at 0: wallets + the epochs' rake + the house = what was seeded.
# The wallets are seeded, and an operator credits and debits two of them mid-play, with
# croupier-ctl --money-by-entity credit (docs/queues.md "The wallets outside the game server"),
# and the gateway runs with --money-by-entity; the three binaries refuse --money-by-entity
# without --redis-cluster, and croupier-game refuses it for the engine whose rounds settle the
# players' wallets (the test engine's play money).
# The traditional engine (Dou Dizhu and Guandan) adds its server bots, which play from the house
# wallet, funded by the servers (--trad-house-fund: money created once, counted as seeded), and
# fill a table after 1.5 s; their seat accounts go back to that wallet like everyone's; its
# top-ups after each deal (transfers from the wallets) and a rake account per game.
# Blackjack (persistent) settles its dealer through a seat account of the house in each epoch,
# funded from the house wallet by transfer (here with a float of 1 stake: funded again whenever
# a round would take it below 0, its winnings beyond 3 stakes sent back) and returned to it by
# the recovery.
#
#   tests/e2e/cluster_entity.sh BUILD_DIR [SOURCE_DIR]
# With FAILOVER=1 (meson test cluster_entity_failover, cluster_entity_failover_<engine>) the
# cluster has 2 replicas per master and the servers run with --redis-min-replicas 1, and mid-play
# it is the Redis master serving the busy server's epoch slot that is SIGKILLed: its replica
# takes over, both servers play on (no self-fence), and the same books must hold.
# With RESHARD=1 (meson test cluster_entity_reshard) nothing is killed: mid-play every slot of
# the master serving the busy server's epoch slot (its seat accounts, settlements, and a third
# of the wallets: a live resharding by `redis-cli --cluster reshard`) moves to another master
# while the bots play, and the same books must hold with no error reaching a player.
# Env: ENGINE (holdem), GAMES, BOTS (per game), BOT_SECONDS, KILL_AFTER (seconds of play before
# the kill, 8; 0: no kill), FAILOVER, RESHARD, CROUPIER_KEEP_LOGS=1 keeps the work dir. Exit 77
# (skip) when redis-server cannot run a cluster.
set -u
BUILD=$(cd "${1:?usage: cluster_entity.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
# shellcheck source=lib.sh
. "$SRC/tests/e2e/lib.sh"
E2E_DIR=$(mktemp -d /tmp/croupier-cluster-entity.XXXXXX)
E2E_FAILURES=()
trap 'e2e_cleanup; [ "${CROUPIER_KEEP_LOGS:-0}" = 1 ] || [ ${#E2E_FAILURES[@]} -gt 0 ] || rm -rf "$E2E_DIR"' EXIT
BOT_SECONDS=${BOT_SECONDS:-20}
ENGINE=${ENGINE:-holdem}
KILL_AFTER=${KILL_AFTER:-8}
command -v redis-server >/dev/null || { echo "cluster_entity: SKIP: no redis-server" >&2; exit 77; }

FAILOVER=${FAILOVER:-0}
RESHARD=${RESHARD:-0}
REPLICAS=1 DURABLE=()
[ "$FAILOVER" = 1 ] && REPLICAS=2 DURABLE=(--redis-min-replicas 1)
e2e_cluster_start 3 "$REPLICAS" || { echo "cluster_entity: SKIP: $E2E_CLUSTER_WHY" >&2; exit 77; }
e2e_log "cluster up: $E2E_REDIS_CLUSTER"
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then e2e_log "ok: $1"; else e2e_log "FAIL: $1"; fail=1; E2E_FAILURES+=("$1"); fi
}
GAME=$BUILD/engine/process/croupier-game
CTL=$BUILD/tools/croupier-ctl
e2e_secret

# ---- the refusals at start -----------------------------------------------------------------
# the engine whose rounds settle the players' wallets (play money): one line, exit 2
st=0
why="--money-by-entity: --engine test settles play money on the players' wallets"
timeout 20 "$GAME" --engine test --health-listen 127.0.0.1:0 --redis-cluster \
    "$E2E_REDIS_CLUSTER" --money-by-entity >"$E2E_DIR/bad.out" 2>"$E2E_DIR/bad.err" || st=$?
# shellcheck disable=SC2016 # the script's own positional parameters
check "--money-by-entity with --engine test refused ($(head -c 200 "$E2E_DIR/bad.err"))" \
    bash -c '[ "$1" = 2 ] && [ "$(wc -l <"$2")" = 1 ] && grep -qF -- "$3" "$2"' _ "$st" \
    "$E2E_DIR/bad.err" "$why"
e2e_redis_start
st=0
timeout 20 "$GAME" --engine holdem --health-listen 127.0.0.1:0 --redis "127.0.0.1:$REDIS_PORT" \
    --money-by-entity >"$E2E_DIR/bad.out" 2>"$E2E_DIR/bad.err" || st=$?
check "--money-by-entity without --redis-cluster refused ($(head -c 200 "$E2E_DIR/bad.err"))" \
    bash -c "[ $st = 2 ] && grep -q 'needs --redis-cluster' '$E2E_DIR/bad.err'"

# the gateway and croupier-ctl refuse the mode without a cluster as croupier-game does
refused() { # refused NAME COMMAND...: exit status 2 and the one line
    local st=0
    timeout 20 "${@:2}" >"$E2E_DIR/bad.out" 2>"$E2E_DIR/bad.err" || st=$?
    check "$1 --money-by-entity without --redis-cluster refused ($(head -c 200 "$E2E_DIR/bad.err"))" \
        bash -c "[ $st = 2 ] && grep -q -- '--money-by-entity needs --redis-cluster' '$E2E_DIR/bad.err'"
}
refused croupier-gate "$BUILD/gateway/croupier-gate" --listen 127.0.0.1:0 --health-listen \
    127.0.0.1:0 --redis "127.0.0.1:$REDIS_PORT" --token-secret-file "$E2E_DIR/secret" --money-by-entity
refused croupier-ctl "$CTL" --redis "127.0.0.1:$REDIS_PORT" --money-by-entity wallet 1
kill "$REDIS_PID" 2>/dev/null

# ---- seed: each bot's wallet {p:<id>}:bal, an operator credit each (croupier-ctl
# --money-by-entity credit: xfer_seed's, counted as seeded at {p:<id>}:xm; e2e_seed_wallets) -----
e2e_engine_desc "$ENGINE" || exit 2
if [ "$ENGINE" = traditional ]; then
    # two of its games, the 3-seat Dou Dizhu and the 4-seat Guandan, each with a rake account of
    # its own in the epoch's slot; 22 bots each, so that tables wait for server bots
    GAMES=${GAMES:-doudizhu guandan} BOTS=${BOTS:-22}
    export CROUPIER_TRAD_RAKE_PERMILLE=${CROUPIER_TRAD_RAKE_PERMILLE:-50}
    export CROUPIER_TRAD_BOT_MS=${CROUPIER_TRAD_BOT_MS:-100} CROUPIER_TRAD_GAP_MS=${CROUPIER_TRAD_GAP_MS:-300}
fi
GAMES=${GAMES:-$E2E_GAMES}
BOTS=${BOTS:-$E2E_BOTS}
SEED_CHIPS=1000000
base=5000000
# shellcheck disable=SC2034 # read by e2e_seed_wallets (lib.sh)
E2E_MONEY_BY_ENTITY=1
seeded=0 b=$base
for g in $GAMES; do # each game's bots from their own base, 100000 apart
    check "seeded $BOTS wallets of $g's bots with croupier-ctl --money-by-entity credit" \
        e2e_seed_wallets $b "$BOTS" $SEED_CHIPS
    seeded=$((seeded + BOTS * SEED_CHIPS)) b=$((b + 100000))
done
# The house wallet (the traditional engine's server bots play from it, blackjack's dealer
# settles with it) is funded by the servers themselves: money created once per service (the
# lane's xfer_seed), counted as seeded -- the description's house_fund, or for the traditional
# engine its house_seed's amount as --trad-house-fund.
HOUSE="" HOUSE_FUND=0
if [ -n "$E2E_HOUSE_FUND" ]; then
    HOUSE=${E2E_HOUSE_FUND%%:*} fundvar=${E2E_HOUSE_FUND#*:}
    HOUSE_FUND=${!fundvar}
    # blackjack: the dealer's seat account funded with a float of 1 stake beyond each need, so
    # that it is funded again many times during play (--bj-house-float)
    [ "$ENGINE" = persistent ] && export CROUPIER_BJ_HOUSE_FLOAT=${CROUPIER_BJ_HOUSE_FLOAT:-1}
elif [ -n "$E2E_HOUSE_SEED" ] && [ "$ENGINE" = traditional ]; then
    HOUSE=${E2E_HOUSE_SEED%%:*} HOUSE_FUND=${E2E_HOUSE_SEED#*:}
    export CROUPIER_TRAD_HOUSE_FUND=$HOUSE_FUND CROUPIER_TRAD_BOT_FILL_MS=${CROUPIER_TRAD_BOT_FILL_MS:-1500}
fi
"$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" audit >"$E2E_DIR/audit0.txt" 2>&1
check "seeded $seeded chips, the audit balances ($(tail -n 1 "$E2E_DIR/audit0.txt"))" \
    grep -q "^balanced: $seeded + 0 = $seeded" "$E2E_DIR/audit0.txt"
"$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" --money-by-entity wallet $base >"$E2E_DIR/wallet0.txt" 2>&1
check "croupier-ctl --money-by-entity wallet reads {p:$base}:bal ($(head -n 1 "$E2E_DIR/wallet0.txt"))" \
    grep -q "^player $base: balance $SEED_CHIPS at {p:$base}:bal" "$E2E_DIR/wallet0.txt"

# ---- play -------------------------------------------------------------------------------------
TTL=3000
[ "$FAILOVER" = 1 ] && TTL=6000 # a failover (about 2.6 s) ends before a server fences itself
e2e_game_start game-a "$ENGINE" 30 --lease-ttl-ms $TTL --money-by-entity "${DURABLE[@]}"
e2e_game_start game-b "$ENGINE" 30 --lease-ttl-ms $TTL --money-by-entity "${DURABLE[@]}"
if [ -n "$HOUSE" ]; then
    for _ in $(seq 1 100); do # both servers fund it under one op id: once
        [ "$(e2e_redis get "{p:$HOUSE}:bal")" = "$HOUSE_FUND" ] && break
        sleep 0.1
    done
    check "the servers funded the house wallet {p:$HOUSE}:bal once ($HOUSE_FUND)" \
        test "$(e2e_redis get "{p:$HOUSE}:bal")" = "$HOUSE_FUND"
fi
e2e_gate_start gate-a --money-by-entity
bots=() b=$base
for g in $GAMES; do
    "$BUILD/bots/croupier-bot" --gateways "127.0.0.1:${POD_PORT[gate-a]}" \
        --bots "$BOTS" --game "$g" --engine "$E2E_JOIN" \
        --seconds "$BOT_SECONDS" --player-base $b --token-secret-file "$E2E_DIR/secret" \
        --finish-timeout-ms 60000 --report "$E2E_DIR/report-$g.json" \
        --rounds-file "$E2E_DIR/rounds-$g.txt" >"$E2E_DIR/bot-$g.log" 2>&1 &
    bots+=("$!:$g")
    b=$((b + 100000))
done
# an operator's credit and debit while the bots play (croupier-ctl --money-by-entity credit:
# created in the wallet, counted as seeded; the debit a transfer to {house}:bal:credits)
"$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" --money-by-entity credit $((base + 1)) 500 \
    --reason "e2e: goodwill" --op-id e2e-credit >"$E2E_DIR/credit.txt" 2>&1
check "an operator credit mid-play ($(head -n 1 "$E2E_DIR/credit.txt"))" \
    grep -q "^credited $((base + 1)): +500 chips" "$E2E_DIR/credit.txt"
"$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" --money-by-entity credit $((base + 2)) -200 \
    --reason "e2e: chargeback" --op-id e2e-debit >"$E2E_DIR/debit.txt" 2>&1
check "an operator debit mid-play ($(head -n 1 "$E2E_DIR/debit.txt"))" \
    grep -q "^credited $((base + 2)): -200 chips" "$E2E_DIR/debit.txt"
# the server that seats the most players dies (the gateway puts them anywhere); the other stays
victim=game-a survivor=game-b
if [ "$KILL_AFTER" -gt 0 ]; then
    sleep "$KILL_AFTER"
    na=$(grep -c '"tk_sat"' "${POD_LOG[game-a]}")
    nb=$(grep -c '"tk_sat"' "${POD_LOG[game-b]}")
    [ "$nb" -gt "$na" ] && victim=game-b survivor=game-a
    if [ "$FAILOVER" = 1 ] || [ "$RESHARD" = 1 ]; then
        # the Redis master of the busy server's epoch slot ({s:<service>:<slot>:<epoch>})
        tag=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if "\"money_epoch_opened\"" in line:
        d = json.loads(line[line.index("{"):])
        print("{s:%s:%d:%d}" % (d["service"], d["slot"], d["epoch"]))
        break' "${POD_LOG[$victim]}")
        t0=$(date +%s%3N)
        if [ "$RESHARD" = 1 ]; then
            from=$(e2e_cluster_master_of "$tag")
            to=$(e2e_cluster_masters | grep -vx "$from" | head -n 1)
            e2e_log "seated: game-a $na, game-b $nb; $victim's epoch slot $tag is on port $from"
            check "redis-cli --cluster reshard moved every slot of port $from to port $to" \
                e2e_cluster_reshard_all "$from" "$to" ||
                e2e_fail_detail "$E2E_DIR/reshard.log" '' 8
            e2e_log "resharded in $(($(date +%s%3N) - t0)) ms"
            check "$victim's epoch slot $tag is served by port $to now" \
                test "$(e2e_cluster_master_of "$tag")" = "$to"
        else
            e2e_log "seated: game-a $na, game-b $nb; the master of $victim's epoch slot $tag dies"
            e2e_cluster_kill_master "$tag" "$victim's epoch slot" >/dev/null
        fi
        E2E_CLUSTER_MONEY=$(e2e_cluster_master_of '{croupier:money}')
        victim=""
    else
        e2e_log "SIGKILL $victim mid-play (seated: game-a $na, game-b $nb)"
        kill -KILL "${POD_PID[$victim]}"
    fi
fi
num() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$rep" "$1"; }
for pg in "${bots[@]}"; do
    g=${pg#*:} st=0
    wait "${pg%%:*}" || st=$?
    rep=$E2E_DIR/report-$g.json
    if [ -s "$rep" ]; then
        check "$g: bot exit status 0" test "$st" -eq 0
        check "$g: finished games > 0 ($(num 'd["games"]["finished"]'))" test "$(num 'd["games"]["finished"]')" -gt 0
        check "$g: torn games = 0 ($(num 'd["games"]["torn"]'))" test "$(num 'd["games"]["torn"]')" -eq 0 ||
            e2e_torn_detail "$rep" "$E2E_DIR/bot-$g.log"
        check "$g: unexpected errors = 0 ($(num 'd["unexpected_errors"]'); $(num 'd["errors"]'))" test "$(num 'd["unexpected_errors"]')" -eq 0
    else
        check "$g: bot wrote its report (log $E2E_DIR/bot-$g.log)" false
    fi
done
cat "$E2E_DIR"/rounds-*.txt >"$E2E_DIR/rounds.txt" 2>/dev/null
live=(gate-a "$survivor")
[ -z "$victim" ] && live=(gate-a game-a game-b)
for p in "${live[@]}"; do
    e2e_pod_terminate "$p"
    check "pod $p logged exit reason=drained" grep -q 'exit reason=drained' "${POD_LOG[$p]}"
    [ "$p" = gate-a ] && continue
    check "pod $p: no self-fence" bash -c "! grep -q '\"self_fenced\"' '${POD_LOG[$p]}'"
done
for p in game-a game-b; do
    check "pod $p: no script refused for keys in two slots" \
        bash -c "! grep -q redis_cluster_crossslot '${POD_LOG[$p]}'" ||
        e2e_fail_detail "${POD_LOG[$p]}" redis_cluster_crossslot 3
    check "pod $p opened its epoch" grep -q '"money_epoch_opened"' "${POD_LOG[$p]}"
done
if [ "$KILL_AFTER" -gt 0 ] && [ -n "$victim" ]; then
    check "$survivor's sweeper recovered $victim's epoch, chips back to the wallets" \
        grep -Eq '"money_recovered".*"layout":"cluster".*"mode":"claim","chips":[1-9]' "${POD_LOG[$survivor]}"
fi
if [ "$ENGINE" = traditional ]; then # server bots sat, bought in from the house wallet by transfer
    nbots=$(cat "${POD_LOG[game-a]}" "${POD_LOG[game-b]}" | grep '"tk_sat"' | grep -c '"bot":true')
    check "server bots bought in from {p:$HOUSE}:bal ($nbots)" test "$nbots" -gt 0
    ntop=$(cat "${POD_LOG[game-a]}" "${POD_LOG[game-b]}" | grep '"tk_topped_up"' | grep -c '"status":0')
    check "stacks topped up after a round, transfers from the wallets ($ntop)" test "$ntop" -gt 0
fi
if [ "$ENGINE" = persistent ]; then # the dealer's seat account in each epoch, from {p:<house>}
    nfund=$(cat "${POD_LOG[game-a]}" "${POD_LOG[game-b]}" | grep '"tk_house_account_funded"' | grep -c '"errno":0')
    check "the house's seat accounts funded from {p:$HOUSE}:bal by transfer, again when short ($nfund)" \
        test "$nfund" -gt 2
    nret=$(cat "${POD_LOG[game-a]}" "${POD_LOG[game-b]}" | grep '"tk_house_account_returned"' | grep -c '"errno":0')
    check "the house's winnings beyond three floats returned to {p:$HOUSE}:bal by transfer ($nret)" \
        test "$nret" -gt 0
fi

if [ -n "${t0:-}" ]; then # play went on after the failover (or the reshard): hands since (ms ids)
    n=0
    for g in $GAMES; do
        n=$((n + $(e2e_redis xrange "{croupier:money}:history:$g:stream" "$t0" + | grep -c '^round$')))
    done
    check "hands recorded after the $([ "$RESHARD" = 1 ] && echo reshard || echo failover) ($n)" \
        test "$n" -gt 0
fi

# ---- the settlements, in their epochs' slots ---------------------------------------------
# a round id service:slot:epoch:desk:seq has its record at {s:service:slot:epoch}:round:<id>
rounds_in() { # VERB(finished|voided): the EXISTS of each distinct round's record, one a line
    awk -v v="$1" '$2 == v { print $1 }' "$E2E_DIR/rounds.txt" 2>/dev/null | sort -u |
        awk -F: '{ printf "EXISTS {s:%s:%s:%s}:round:%s\n", $1, $2, $3, $0 }' | e2e_redis
}
fin=$(awk '$2 == "finished" { print $1 }' "$E2E_DIR/rounds.txt" 2>/dev/null | sort -u | wc -l)
answers=$(rounds_in finished)
missing=$(grep -c '^0$' <<<"$answers")
present=$(grep -c '^1$' <<<"$answers")
settled_void=$(rounds_in voided | grep -c '^1$')
if [ "$missing" -gt 0 ]; then
    awk '$2 == "finished" { print $1 }' "$E2E_DIR/rounds.txt" | sort -u | while read -r r; do
        IFS=: read -r sv sl ep _ <<<"$r"
        [ "$(e2e_redis exists "{s:$sv:$sl:$ep}:round:$r")" = 1 ] || e2e_log "  no settle record: $r"
    done
fi
check "every finished round settled in its epoch's slot ($fin rounds, $present found, $missing missing)" \
    test "$missing" -eq 0 -a "$present" -eq "$fin" -a "$fin" -gt 0
check "no voided round settled ($settled_void)" test "$settled_void" -eq 0

# ---- the books: every chip back in a wallet (or the epochs' rake), none made or lost -------
ok=0
for _ in $(seq 1 40); do
    "$CTL" --redis-cluster "$E2E_REDIS_CLUSTER" audit >"$E2E_DIR/audit.txt" 2>&1
    if grep -q '^balanced' "$E2E_DIR/audit.txt" && grep -q '^in flight *0 transfers' "$E2E_DIR/audit.txt" &&
        ! grep -Eq '^  seat accounts +[0-9]+ holding [1-9]' "$E2E_DIR/audit.txt"; then
        ok=1
        break
    fi
    sleep 0.5 # transfers still in flight: a sweeper (game-b's, gone now) or nobody
done
e2e_log "audit: $(tr '\n' ';' <"$E2E_DIR/audit.txt")"
check "the audit balances, nothing in flight, every seat account back at 0" test "$ok" = 1
check "seeded: the bots' wallets, the house's funding and the operator's credit ($((seeded + HOUSE_FUND + 500)))" \
    grep -q "^seeded *$((seeded + HOUSE_FUND + 500))\$" "$E2E_DIR/audit.txt"
house=$(redis-cli -c -p "${E2E_REDIS_CLUSTER##*:}" get '{house}:bal:credits')
check "the operator's debit is in the house's account of debits ($house)" test "$house" = 200

for f in "${E2E_FAILURES[@]}"; do fail=1; e2e_log "failed: $f"; done
if [ $fail -ne 0 ]; then
    e2e_log "logs kept in $E2E_DIR"
    exit 1
fi
exit 0
