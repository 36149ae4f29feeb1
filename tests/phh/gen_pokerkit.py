#!/usr/bin/env python3
"""Random no-limit hold'em hands played by PokerKit, written as PHH files for the replay test.

PokerKit (https://github.com/uoftcprg/pokerkit, MIT, pure Python, never copied into this
repository) plays every hand and computes its finishing stacks; the files land in
tests/phh/pokerkit/ and the suite replays each one through croupier's own table with
`croupier-rules phh-replay` (test `phh_pokerkit`, tests/phh/meson.build). The PokerKit
conventions the replay relies on are in docs/rules/holdem.md, "Replays (PHH)".

Getting PokerKit without PyPI, from the fetched mirror's git directory:

    mkdir /tmp/pokerkit && git --git-dir=/work/.mirror/uoftcprg+pokerkit/repo archive HEAD \\
        | tar -x -C /tmp/pokerkit
    PYTHONPATH=/tmp/pokerkit python3 tests/phh/gen_pokerkit.py --count 400 --seed 20 \\
        --out tests/phh/pokerkit

To check many more hands than the committed ones (every one replayed so far: 20,000 with
--seed 99 and 30,000 with --seed 2026 before this generator dealt Mississippi straddles,
3,000 with --seed 5 and 15,000 with --seed 11 since), generate them into a temporary folder
and replay it:

    PYTHONPATH=/tmp/pokerkit python3 tests/phh/gen_pokerkit.py --count 20000 --seed 99 \
        --out /tmp/phh && build/tools/croupier-rules phh-replay /tmp/phh

What the hands have, at random (the seed makes a run repeatable): 2 to 9 players; blinds (the
small blind mostly half the big blind); no ante, an ante for everyone or a big-blind ante; from
3 players on, often a straddle chain (a straddle and up to three re-straddles, each twice the
one before) from under the gun, sometimes from a later seat (a Mississippi or button straddle); stacks from a fraction of the big blind to 300 big
blinds, many of them short, so players go all-in often and side pots pile up; every decision
picked at random among what PokerKit allows (fold, check or call, a bet or raise to its minimum,
to a random size or all-in). Cards come from a shuffled deck, burns included.
"""

import argparse
import os
import random
import sys

try:
    from pokerkit import Automation, HandHistory, NoLimitTexasHoldem
except ImportError:
    sys.exit('gen_pokerkit.py: cannot import pokerkit; put a PokerKit checkout on PYTHONPATH '
             '(see the docstring)')

RANKS = '23456789TJQKA'
SUITS = 'cdhs'
DECK = [r + s for r in RANKS for s in SUITS]

AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


def random_stack(rng, bb):
    """A stack in chips: short ones often, so that all-ins and side pots are common."""
    r = rng.random()
    if r < 0.06:
        return rng.randint(1, max(1, bb))            # cannot even cover the big blind
    if r < 0.35:
        return rng.randint(bb, 12 * bb)              # short
    if r < 0.75:
        return rng.randint(12 * bb, 60 * bb)         # medium
    return rng.randint(60 * bb, 300 * bb)            # deep


def random_setup(rng):
    """Players, blinds, straddles, antes and stacks of one hand."""
    n = rng.randint(2, 9)
    bb = rng.choice([2, 4, 10, 20, 50, 100, 200])
    sb = bb // 2 if rng.random() < 0.8 else rng.randint(1, bb)
    blinds = [sb, bb] + [0] * (n - 2)
    if n >= 3 and rng.random() < 0.55:
        # Mostly from under the gun; sometimes later (Mississippi), up to the button.
        first = 2 if rng.random() < 0.75 else rng.randint(2, n - 1)
        chain = min(n - first, rng.choice([1, 1, 1, 2, 2, 3, 4]))
        for k in range(chain):
            blinds[first + k] = bb << (k + 1)
    kind = rng.choice(['none', 'ante', 'bb-ante'])
    if kind == 'ante':
        antes = [rng.randint(1, max(1, bb // 2))] * n
    elif kind == 'bb-ante':
        antes = [0] * n
        antes[1] = rng.choice([bb, bb // 2 or 1, rng.randint(1, bb)])
    else:
        antes = [0] * n
    stacks = [random_stack(rng, bb) for _ in range(n)]
    return n, antes, blinds, bb, stacks


def pick_action(rng, state):
    """A random decision among those PokerKit allows the player to act."""
    choices = []
    if state.can_fold():
        choices.append(('f', 25))
    if state.can_check_or_call():
        choices.append(('cc', 45))
    if state.can_complete_bet_or_raise_to():
        choices.append(('cbr', 30))
    total = sum(w for _, w in choices)
    x = rng.uniform(0, total)
    for what, w in choices:
        x -= w
        if x <= 0:
            break
    if what == 'f':
        state.fold()
    elif what == 'cc':
        state.check_or_call()
    else:
        lo = state.min_completion_betting_or_raising_to_amount
        hi = state.max_completion_betting_or_raising_to_amount
        r = rng.random()
        if r < 0.3:
            amount = lo
        elif r < 0.6:
            amount = hi
        else:
            amount = rng.randint(lo, hi)
        state.complete_bet_or_raise_to(amount)


def play_hand(rng):
    """Plays one random hand to its end; returns (game, state, what happened)."""
    n, antes, blinds, bb, stacks = random_setup(rng)
    game = NoLimitTexasHoldem(AUTOMATIONS, False, antes, blinds, bb)
    state = game(stacks, n)
    deck = DECK[:]
    rng.shuffle(deck)
    seen = {'all-in': False, 'pots': 0}
    while state.status:
        seen['pots'] = max(seen['pots'], len(list(state.pots)))
        if state.can_burn_card():
            state.burn_card(deck.pop())
        elif state.can_deal_hole():
            state.deal_hole(deck.pop() + deck.pop())
        elif state.can_deal_board():
            state.deal_board(''.join(deck.pop() for _ in range(state.board_dealing_count)))
        elif state.actor_index is not None:
            actor = state.actor_index
            pick_action(rng, state)
            seen['all-in'] = seen['all-in'] or state.stacks[actor] == 0
        else:
            raise RuntimeError('PokerKit waits for an operation this generator does not make')
    assert sum(state.stacks) == sum(stacks), 'chips not conserved'
    return game, state, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--count', type=int, default=400)
    ap.add_argument('--seed', type=int, default=20)
    ap.add_argument('--out', required=True, help='folder for the .phh files')
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    stats = {'straddled': 0, 're-straddled': 0, 'all-in': 0, 'side pots': 0, 'heads-up': 0}
    for i in range(args.count):
        game, state, seen = play_hand(rng)
        hh = HandHistory.from_game_state(game, state)
        hh.finishing_stacks = list(state.stacks)
        text = hh.dumps()
        straddles = sum(1 for b in state.blinds_or_straddles[2:] if b)
        stats['straddled'] += straddles >= 1
        stats['re-straddled'] += straddles >= 2
        stats['heads-up'] += state.player_count == 2
        stats['all-in'] += seen['all-in']
        stats['side pots'] += seen['pots'] >= 2
        path = os.path.join(args.out, f'{i:04d}.phh')
        with open(path, 'w') as f:
            f.write(f'# tests/phh/gen_pokerkit.py --seed {args.seed}, hand {i}: played and '
                    f'settled by PokerKit\n')
            f.write(text + '\n')
    print(f'{args.count} hands in {args.out}: ' +
          ', '.join(f'{v} {k}' for k, v in stats.items()))


if __name__ == '__main__':
    main()
