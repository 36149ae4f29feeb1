#!/bin/sh
# croupier-rules niuniu eval / compare (docs/rules/niuniu.md "Hand categories", "Splits", "Ties",
# "On the command line"): known answers; bad input prints one line on stderr, nothing on stdout,
# and exits 2. $1: the croupier-rules binary.
set -u
R=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# expect ARGS... EXPECTED: the output of croupier-rules ARGS must be EXPECTED, status 0.
expect() {
    want=$1; shift
    out=$("$R" "$@" 2>"$T/err"); rc=$?
    [ "$rc" -eq 0 ] || fail "$* exited $rc: $(cat "$T/err")"
    [ "$out" = "$want" ] || fail "$*: got '$out', want '$want'"
    [ ! -s "$T/err" ] || fail "$*: wrote to stderr"
}

expect "niu_7 KsQhTc/9d8s 7" niuniu eval KsQhTc9d8s
expect "niu_7 KsQhTc/9d8s 7" niuniu eval 8s9dTcQhKs        # any order, the same split
expect "niu_7 KsQhTc/9d8s 7" niuniu eval "8s 9d Tc Qh Ks"  # spaces between cards
expect "niu_niu KsQhJc/5s5d 0" niuniu eval KsQhJc5d5s
expect "niu_2 8s7h5c/AsAd 2" niuniu eval As8s7h5cAd         # sorted high to low, first three
expect "no_niu - -" niuniu eval As2c3d4h9s
expect "no_niu - -" niuniu eval AsAc2d3h4s                   # sum 11: not five small
expect "five_small - -" niuniu eval AsAc2d3h3s               # sum 10
expect "five_small - -" niuniu eval AsAhAcAd2s               # also four of a kind: five small
expect "bomb - -" niuniu eval 9s9h9c9dKs
expect "bomb KsKhKc/KdQs 0" niuniu eval KsKhKcKdQs           # also five faces: bomb
expect "five_faces KsKdQh/JsJc 0" niuniu eval KsQhJcKdJs

expect "A" niuniu compare KsQhTc9d8s KhQsTd9c8h     # niu 7 both: Ks over Kh
expect "A" niuniu compare KhQsTd9c8h KcQhTc9d8s     # hearts over clubs
expect "A" niuniu compare KcQhTc9d8s KdQsTd9c8h     # clubs over diamonds
expect "A" niuniu compare KsQhJc5d5s KhQsJd5c4s     # niu niu over niu 9
expect "A" niuniu compare KsQhTc9d8s 2s3h4c5dQd     # niu 7 over niu 4
expect "B" niuniu compare KsQhTc9d5s 9s8h3c7d2d     # niu 4 (top K) under niu 9 (top 9)
expect "tie" niuniu compare KsQhTc9d8s 8s9dTcQhKs   # the same top card
expect "A" niuniu compare AsAhAcAd2s 9s9h9c9dKs     # five small over bomb
expect "A" niuniu compare 2s2h2c2d3s KsQhJcKdJs     # bomb over five faces
expect "A" niuniu compare KsQhJcQdJs KsQhJc5d5s     # five faces over niu niu
expect "A" niuniu compare As8s7h5cAd As2c3d4h9s     # niu 2 over no niu
expect "A" niuniu compare Ks7h6c5d2s Qd9h7c6d2s     # no niu both: the top card

for bad in "niuniu eval KsQhTc9d" "niuniu eval KsQhTc9d8s7s" "niuniu eval KsKsTc9d8s" \
    "niuniu eval XsQhTc9d8s" "niuniu eval KsQhTc9d8" "niuniu eval" "niuniu eval KsQhTc9d8s x" \
    "niuniu compare KsQhTc9d8s" "niuniu compare KsQhTc9d8s 2c" "niuniu compare 2c KsQhTc9d8s" \
    "niuniu" "niuniu bogus KsQhTc9d8s" "niuniu eval ''"; do
    eval "set -- $bad"
    "$R" "$@" >"$T/out" 2>"$T/err"; rc=$?
    [ "$rc" -eq 2 ] || fail "$bad: exit $rc, want 2"
    [ ! -s "$T/out" ] || fail "$bad: wrote to stdout"
    [ "$(wc -l <"$T/err")" -eq 1 ] || fail "$bad: not one line on stderr"
done
# the line says which card is wrong and why (common/cardtext.h cardtext_parse_hand())
why() { # why REASON ARGS...: exit 2 and REASON in the one line on stderr
    want=$1; shift
    "$R" "$@" >"$T/out" 2>"$T/err"; rc=$?
    [ "$rc" -eq 2 ] || fail "$*: exit $rc, want 2"
    grep -qF -- "$want" "$T/err" || fail "$*: '$(cat "$T/err")' lacks '$want'"
}
why "4 cards, 5 needed" niuniu eval KsQhTc9d
why "more than 5 cards" niuniu eval KsQhTc9d8s7s
why "card 2 'Ks': the same card as card 1" niuniu eval KsKsTc9d8s
why "card 1 'Xs': 'X' is not a rank (2-9 T J Q K A)" niuniu eval XsQhTc9d8s
why "card 5 '8': a rank without its suit (c d h s)" niuniu eval KsQhTc9d8
why "card 1 '2x': 'x' is not a suit (c d h s)" niuniu compare KsQhTc9d8s 2xQhTc9d8s
echo "ok"
