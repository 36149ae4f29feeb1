/*
 * holdem_record -- a hold'em hand history record (docs/hand-history.md) played again through
 * the real table (holdem_table.h), for what the record alone does not say: when each street's
 * board came out between the actions, who showed and who mucked at the end. Used by the
 * replays (docs/replays.md: the order of a hold'em replay's events) and by the PHH export
 * (croupier-ctl round ROUND_ID --phh; docs/replays.md "PHH export").
 *
 * The table is set up from the record: the seats dealt in with their stacks at the hand's start,
 * the blinds (the stake is the big blind, half of it the small blind; a tournament hand's own
 * blinds, antes and positions), straddles as the record's straddle answers say, the deck in
 * dealing order (the record's "deck"), the button; then every recorded action is applied in
 * order. The record and the table must agree on everything: the blinds posted, every action
 * accepted, the deltas and the rake; else the call fails with the reason.
 *
 * Pure: no I/O. Not thread-safe per call (no shared state between calls).
 */
#ifndef CROUPIER_HOLDEM_RECORD_H
#define CROUPIER_HOLDEM_RECORD_H

#include <stddef.h>

#include <jansson.h>

#include "holdem_table.h"

/*
 * Plays the record again, calling cb (when not NULL) with every event of the table in order,
 * and writes into *order (when not NULL) the number of recorded actions applied before each
 * street's board came out: order[0] flop, [1] turn, [2] river (-1 for a street never dealt).
 * pokerkit_rules: play by PokerKit's conventions (holdem_config_t.pokerkit_rules), as a PHH
 * replay does. Returns 0, -EINVAL (a record that is not a completed hold'em hand this table can
 * play: no deck, a refused action, different deltas; the reason in err, errlen bytes), or
 * -ENOMEM.
 */
int holdem_record_play(const json_t *rec, bool pokerkit_rules, holdem_event_cb cb, void *ud,
                       int order[3], char *err, size_t errlen);

/*
 * The record as a Poker Hand History file (PHH, variant 'NT'): players p1.. from the seat left
 * of the button to the button (heads-up p1 is the big blind), their blinds, straddles, antes
 * and stacks, the hole cards dealt, every action ('f', 'cc', 'cbr TO'), the boards and the
 * showdown ('sm CARDS' shown, 'sm' mucked) where PokerKit expects them, and the finishing
 * stacks. The hand is checked both ways first: by the house rules (the record) and by
 * PokerKit's conventions (the file), which must give the same result, so the file replays
 * exactly in PokerKit (and in croupier-rules phh-replay). A raked hand carries `_rake` (a
 * user-defined field): PokerKit gives the same stacks only with that rake.
 * hidden (NULL: none) names the seats whose hole cards the file must not show (docs/replays.md:
 * a viewer's policy): their cards are written '????', which PokerKit deals as unknown (such a
 * seat folded or mucked: its cards decide nothing).
 * Returns 0 and *out (malloc'd text, the caller frees), -EINVAL with the reason in err (not a
 * hold'em hand, a hand PokerKit's rules would play differently), or -ENOMEM.
 */
int holdem_record_phh(const json_t *rec, const bool *hidden, char **out, char *err, size_t errlen);

#endif
