#!/usr/bin/env python3
"""Replays PHH files in PokerKit and checks each one's finishing stacks.

Every action of every file must be accepted by PokerKit (https://github.com/uoftcprg/pokerkit,
imported from a checkout on PYTHONPATH, see tests/phh/gen_pokerkit.py) and the stacks it ends
with must be the file's `finishing_stacks`. A file with a `_rake` (a user-defined field: the
chips the house took, docs/replays.md "PHH export") is checked with the rake added back to the
pot's winners: PokerKit is given no rake.

    PYTHONPATH=/tmp/pokerkit python3 tests/phh/check_pokerkit.py DIR|FILE...

Exit status: 0 when every file replays exactly, 1 otherwise (each failure on stderr), 2 when
PokerKit cannot be imported.
"""

import os
import sys

try:
    from pokerkit import HandHistory
except ImportError:
    sys.exit(2)


def check(path):
    with open(path, 'rb') as f:
        hh = HandHistory.load(f)
    state = None
    for state in hh:
        pass
    if state is None:
        return 'no state'
    if state.status:
        return 'the hand is not over after the last action'
    got = list(state.stacks)
    want = list(hh.finishing_stacks)
    rake = hh.user_defined_fields.get('_rake', 0)
    if rake == 0 and got != want:
        return f'finishing stacks {got}, the file says {want}'
    if rake and sum(got) - sum(want) != rake:
        return f'finishing stacks {got}, the file says {want} with a rake of {rake}'
    return None


def main():
    files = []
    for a in sys.argv[1:]:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, n) for n in os.listdir(a) if n.endswith('.phh'))
        else:
            files.append(a)
    bad = 0
    for p in files:
        try:
            why = check(p)
        except Exception as e:  # PokerKit refuses an action: ValueError and kin
            why = f'{type(e).__name__}: {e}'
        if why:
            bad += 1
            print(f'{p}: {why}', file=sys.stderr)
    print(f'{len(files) - bad} of {len(files)} files replay exactly in PokerKit')
    sys.exit(1 if bad or not files else 0)


if __name__ == '__main__':
    main()
