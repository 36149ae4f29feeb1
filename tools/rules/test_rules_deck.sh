#!/bin/sh
# croupier-rules verify-deal / verify-shoe / rng-raw / deals (docs/fairness.md): known answers, exit codes,
# clear errors on bad input. $1: the croupier-rules binary.
set -u
R=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
seq_hex() { i=0; out=; while [ "$i" -lt "$1" ]; do out=$out$(printf %02x "$i"); i=$((i + 1)); done; echo "$out"; }
DECK=$(seq_hex 52)
NONCE=$(seq_hex 32)
C=e6e2e38e721486641d108e09aa7ade38542eb1c7ea83514f26657c6c39392fdd

# The known answer of docs/fairness.md opens; one card moved does not.
"$R" verify-deal "$C" "$DECK" "$NONCE" | grep -q '^ok:' || fail "known answer not verified"
BAD=$(echo "$DECK" | sed 's/33$/32/')
"$R" verify-deal "$C" "$BAD" "$NONCE" >/dev/null; [ $? -eq 1 ] || fail "a changed deck verified"
# From a hand-history record on stdin.
printf '{"round":"x","deck_commitment":"%s","deck":"%s","deck_nonce":"%s"}' "$C" "$DECK" "$NONCE" |
    "$R" verify-deal --record - | grep -q '^ok:' || fail "record not verified"
echo '{"round":"x"}' | "$R" verify-deal --record - 2>/dev/null; [ $? -eq 2 ] || fail "record without a deck"
"$R" verify-deal zz "$DECK" "$NONCE" 2>/dev/null; [ $? -eq 2 ] || fail "bad commitment accepted"
"$R" verify-deal 2>/dev/null; [ $? -eq 2 ] || fail "no arguments accepted"

# The per-card commitment (docs/fairness.md "The per-card commitment"): its known answer, the
# codes 08..3b (2c 2d 2h 2s 3c ...) under the nonce 00..1f, as a Zha Jin Hua record: button 0,
# seats 0 1 2, so the deal goes 1 2 0 three times round (seat 1 at positions 0 3 6: 2c 2s 3h;
# seat 2 at 1 4 7: 2d 3c 3s; seat 0 at 2 5 8: 2h 3d 4c).
V2=69d4f69b62af0c0db8d8218c3dc8d94452b8e33d6dfcf4eed2d1ed3c7b6d04f3
CODES=$(i=8; out=; while [ "$i" -lt 60 ]; do out=$out$(printf %02x "$i"); i=$((i + 1)); done; echo "$out")
zc() { printf '{"seat":%d,"card":"%s"}' "$1" "$2"; }
zrec() { # $1: seat 1's first card
    printf '{"round":"zhajinhua:1:1:1:1","game":"zhajinhua","engine":"zhajinhua","ts":1,"button":0,'
    printf '"seats":[{"seat":0,"player":"1001","stack":100},{"seat":1,"player":"1002","stack":100},'
    printf '{"seat":2,"player":"1003","stack":100}],"cards":[%s,%s,%s,%s,%s,%s,%s,%s,%s],' \
        "$(zc 1 "$1")" "$(zc 1 2s)" "$(zc 1 3h)" "$(zc 2 2d)" "$(zc 2 3c)" "$(zc 2 3s)" \
        "$(zc 0 2h)" "$(zc 0 3d)" "$(zc 0 4c)"
    printf '"actions":[{"seat":1,"action":"ante","amount":1}],"results":[{"seat":0,"delta":0},'
    printf '{"seat":1,"delta":0},{"seat":2,"delta":0}],"outcome":"completed","rake":0,'
    printf '"deck_scheme":2,"deck_commitment":"%s","deck":"%s","deck_codes":"%s","deck_nonce":"%s"}' \
        "$V2" "$CODES" "$CODES" "$NONCE"
}
zrec 2c > "$T/zjh.json"
"$R" verify-deal --record "$T/zjh.json" | grep -q '^ok:.* 9 recorded cards' || fail "per-card record not verified"
zrec 4h | "$R" verify-deal --record - >/dev/null; [ $? -eq 1 ] || fail "a per-card record with a changed card verified"
sed "s/$V2/$C/" "$T/zjh.json" | "$R" verify-deal --record - >/dev/null; [ $? -eq 1 ] || fail "a per-card record verified under another commitment"
# The player of seat 1 gets his replay: every leaf, his three cards opened at 0 3 6, and checks
# it against the commitment his Deals carried; a share code's viewer (0) gets no opening.
"$R" replay --record "$T/zjh.json" --viewer 1002 > "$T/zjh.replay" || fail "no replay"
"$R" verify-deal --replay "$T/zjh.replay" "$V2" | grep -q '^ok:.* 3 cards opened.* 0=2c 3=2s 6=3h$' ||
    fail "the player's replay does not check: $("$R" verify-deal --replay "$T/zjh.replay" "$V2")"
"$R" verify-deal --replay "$T/zjh.replay" "$C" >/dev/null; [ $? -eq 1 ] || fail "a replay checked against another commitment"
"$R" replay --record "$T/zjh.json" --viewer 0 | "$R" verify-deal --replay - | grep -q '^ok:.* 0 cards opened' ||
    fail "a share code's replay opens cards"
"$R" replay --record "$T/zjh.json" --viewer 0 | "$R" verify-deal --replay - "$V2" >/dev/null || fail "a share code's replay does not check"
printf 'junk' | "$R" verify-deal --replay - 2>/dev/null; [ $? -eq 2 ] || fail "junk accepted as a replay"

# A match hall's duplicate deal under the per-card commitment (docs/fairness.md "Duplicate
# deals"): the codes 08..3b 3c 3d (the 52 cards, then the two jokers) under the nonce 00..1f as a
# duplicate Dou Dizhu deal (its match has a seed). The shedding games deal one card at a time
# from seat 0 (seat s at s, s+3, ..., s+48) and the bottom last (51..53: As Xb Xr); the record
# keeps each hand as a set, here in reverse dealing order. Its commitment, computed by Python's
# hmac and hashlib: D2.
D2=3d1f03828bfe665e2ee086ac90bb1a8a6d337270bb45e6ee7413e292a8ae2267
H0="Ac Kd Qh Js Jc Td 9h 8s 8c 7d 6h 5s 5c 4d 3h 2s 2c"
H1="Ad Kh Qs Qc Jd Th 9s 9c 8d 7h 6s 6c 5d 4h 3s 3c 2d"
H2="Ah Ks Kc Qd Jh Ts Tc 9d 8h 7s 7c 6d 5h 4s 4c 3d 2h"
dcards() { # $1 $2 $3: the hands of seats 0 1 2
    out=; for c in As Xb Xr; do out="$out$(zc -1 "$c"),"; done
    s=0; for h in "$1" "$2" "$3"; do for c in $h; do out="$out$(zc "$s" "$c"),"; done; s=$((s + 1)); done
    echo "${out%,}"
}
drec() { # $1 $2 $3: the hands
    printf '{"round":"traditional:1:1:1:1","game":"doudizhu","engine":"traditional","ts":1,"button":2,'
    printf '"match":{"id":7,"stage":1,"round":1,"deal":1,"seed":"99"},'
    printf '"seats":[{"seat":0,"player":"1001","stack":100},{"seat":1,"player":"1002","stack":100},'
    printf '{"seat":2,"player":"1003","stack":100}],"cards":[%s],"actions":[],' "$(dcards "$1" "$2" "$3")"
    printf '"results":[{"seat":0,"delta":0},{"seat":1,"delta":0},{"seat":2,"delta":0}],"outcome":"completed",'
    printf '"rake":0,"deck_scheme":2,"deck_commitment":"%s","deck":"%s3c3d","deck_codes":"%s3c3d","deck_nonce":"%s"}' \
        "$D2" "$CODES" "$CODES" "$NONCE"
}
drec "$H0" "$H1" "$H2" > "$T/dup.json"
"$R" verify-deal --record "$T/dup.json" | grep -q '^ok:.* 54 recorded cards' ||
    fail "duplicate per-card record not verified: $("$R" verify-deal --record "$T/dup.json")"
# Seat 0's 2c and seat 1's 2d swapped: each is a committed card, at the other seat's position.
drec "$(echo "$H0" | sed 's/2c/2d/')" "$(echo "$H1" | sed 's/2d/2c/')" "$H2" | "$R" verify-deal --record - >/dev/null
[ $? -eq 1 ] || fail "a duplicate record with a card at another seat's position verified"
# The player of seat 1: his 17 cards and the bottom opened (positions 1 4 ... 49, 51 52 53).
"$R" replay --record "$T/dup.json" --viewer 1002 > "$T/dup.replay" || fail "no duplicate replay"
"$R" verify-deal --replay "$T/dup.replay" "$D2" | grep -q '^ok:.* 20 cards opened.* 1=2d 4=3c .* 49=Ad 51=As 52=Xb 53=Xr$' ||
    fail "the duplicate replay does not check: $("$R" verify-deal --replay "$T/dup.replay" "$D2")"
"$R" verify-deal --replay "$T/dup.replay" "$V2" >/dev/null; [ $? -eq 1 ] || fail "a duplicate replay checked against another commitment"
"$R" replay --record "$T/dup.json" --viewer 0 | "$R" verify-deal --replay - "$D2" | grep -q '^ok:.* 3 cards opened' ||
    fail "a share code's duplicate replay opens more than the bottom"

# verify-shoe: blackjack's shoe commitment (tag croupier-shoe-v1; known answer of
# docs/fairness.md) opened by the record that retired it, each round's cards at its positions.
S=33abbb89a33ffb5d1f839e18f64274990a5286b60ddef9b949b92eab0be741ca
card() { printf '{"seat":0,"card":"%s"}' "$1"; }
shoe() { printf '"shoes":[{"shoe":1,"commitment":"%s","first":%d,"count":%d}]' "$S" "$1" "$2"; }
R1='{"round":"r1","cards":['$(card Ac),$(card 2c),$(card 3c),$(card 4c),$(card 5c)'],'$(shoe 0 5)'}'
REV='"shoe_reveal":[{"shoe":1,"commitment":"'$S'","deck":"'$DECK'","nonce":"'$NONCE'"}]'
R2='{"round":"r2","cards":['$(card 6c),$(card 7c),$(card 8c),$(card 9c)'],'$(shoe 5 4),$REV'}'
printf '%s\n%s\n' "$R1" "$R2" > "$T/shoe.jsonl"
"$R" verify-shoe "$T/shoe.jsonl" | grep -q '^ok: shoe 1' || fail "shoe known answer not verified"
printf '[%s,%s]' "$R1" "$R2" | "$R" verify-shoe - | grep -q '^ok:' || fail "shoe records as an array"
echo "$R1" | sed 's/"5c"/"6c"/' > "$T/bad.jsonl"
echo "$R2" >> "$T/bad.jsonl"
"$R" verify-shoe "$T/bad.jsonl" >/dev/null; [ $? -eq 1 ] || fail "a card off its position verified"
echo "$R1" > "$T/twice.jsonl"
echo '{"round":"r2","cards":['$(card 5c),$(card 6c)'],'$(shoe 4 2),$REV'}' >> "$T/twice.jsonl"
"$R" verify-shoe "$T/twice.jsonl" >/dev/null; [ $? -eq 1 ] || fail "a position dealt twice verified"
echo "$R2" | sed "s/$NONCE/$(seq_hex 31)ff/" > "$T/nonce.jsonl"
"$R" verify-shoe "$T/nonce.jsonl" >/dev/null; [ $? -eq 1 ] || fail "a wrong nonce opened the shoe"
echo "$R1" | "$R" verify-shoe - 2>/dev/null; [ $? -eq 2 ] || fail "records without a reveal"
"$R" verify-shoe 2>/dev/null; [ $? -eq 2 ] || fail "verify-shoe without records"
# A shoe retirement record (docs/hand-history.md "Table records": the table closed between
# rounds) opens the shoe as a retiring round's record does; its "dealt" bounds the rounds.
REVD='"shoe_reveal":[{"shoe":1,"commitment":"'$S'","deck":"'$DECK'","nonce":"'$NONCE'","dealt":9}]'
RET='{"round":"bj:1:2:3:0","record":"shoe_retirement","seats":[],"cards":[],"actions":[],"results":[],'$REVD'}'
R2B='{"round":"r2","cards":['$(card 6c),$(card 7c),$(card 8c),$(card 9c)'],'$(shoe 5 4)'}'
printf '%s\n%s\n%s\n' "$R1" "$R2B" "$RET" > "$T/retired.jsonl"
out=$("$R" verify-shoe "$T/retired.jsonl") || fail "a shoe retirement record not verified"
echo "$out" | grep -q '^ok: shoe 1' || fail "a shoe retirement record not verified"
echo "$out" | grep -q 'positions 9..51 never were' || fail "the undealt rest not named"
echo "$RET" | sed 's/"dealt":9/"dealt":7/' > "$T/past.jsonl"
printf '%s\n%s\n' "$R1" "$R2B" >> "$T/past.jsonl"
"$R" verify-shoe "$T/past.jsonl" >/dev/null; [ $? -eq 1 ] || fail "a round past dealt verified"
echo "$RET" | sed 's/"dealt":9/"dealt":53/' | "$R" verify-shoe - 2>/dev/null
[ $? -eq 2 ] || fail "a dealt count past the shoe accepted"
# The round commitment's known answer is no shoe's: the tags keep them apart.
[ "$S" != "$C" ] || fail "the shoe tag does not separate"

# rng-raw: exactly N bytes; N must be a positive count.
[ "$("$R" rng-raw 100000 | wc -c)" -eq 100000 ] || fail "rng-raw 100000 is not 100000 bytes"
for bad in 0 -1 12x '' 99999999999999999999; do
    "$R" rng-raw "$bad" >/dev/null 2>&1; [ $? -eq 2 ] || fail "rng-raw '$bad' accepted"
done

# deals: N lines, each a permutation of the game's deck (hex, two digits a card).
for g in holdem:52 zhajinhua:52 niuniu:52 doudizhu:54 runfast:48 bigtwo:52 guandan:108 blackjack:312 blackjack:1:52; do
    game=${g%:*}; n=${g##*:}
    "$R" deals "$game" 5 > "$T/deals.out" || fail "deals $game"
    [ "$(wc -l < "$T/deals.out")" -eq 5 ] || fail "deals $game: not 5 lines"
    while read -r line; do
        [ ${#line} -eq $((2 * n)) ] || fail "deals $game: a line of ${#line} digits, not $((2 * n))"
        # the same multiset as the first line
        a=$(echo "$line" | fold -w2 | sort | tr -d '\n')
        b=$(head -1 "$T/deals.out" | fold -w2 | sort | tr -d '\n')
        [ "$a" = "$b" ] || fail "deals $game: lines are not permutations of one deck"
    done < "$T/deals.out"
    [ "$(sort -u "$T/deals.out" | wc -l)" -eq 5 ] || fail "deals $game: repeated deck orders"
done
"$R" deals poker 1 2>/dev/null; [ $? -eq 2 ] || fail "unknown game accepted"
"$R" deals blackjack:9 1 2>/dev/null; [ $? -eq 2 ] || fail "9 decks accepted"
"$R" deals holdem 0 2>/dev/null; [ $? -eq 2 ] || fail "deals holdem 0 accepted"
echo "ok"
