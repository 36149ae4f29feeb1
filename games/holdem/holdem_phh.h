/*
 * holdem_phh -- Poker Hand History (PHH) files: a reader for the TOML subset they use and a
 * replay that drives the real holdem_table through each hand.
 *
 * Fields read: variant ('NT' only), antes, blinds_or_straddles, min_bet, starting_stacks,
 * actions, finishing_stacks; everything else is skipped. Players are numbered from the small
 * blind and the last one holds the button (heads-up the lists are given by blind position, so
 * p1 is the big blind). See ../shared/oracles/README.md.
 */
#ifndef CROUPIER_HOLDEM_PHH_H
#define CROUPIER_HOLDEM_PHH_H

#include <stddef.h>
#include <stdint.h>

#include "holdem_table.h"

#define HOLDEM_PHH_MAX_ACTIONS 512
#define HOLDEM_PHH_ACTION_LEN 48

typedef struct {
    int players;
    int64_t antes[HOLDEM_MAX_SEATS];
    int64_t blinds[HOLDEM_MAX_SEATS];
    int nantes, nblinds, nfinish;
    int64_t min_bet;
    int64_t starting[HOLDEM_MAX_SEATS];
    double finishing[HOLDEM_MAX_SEATS]; /* may hold .5 for a split odd chip */
    int has_variant_nt;
    int nactions;
    char actions[HOLDEM_PHH_MAX_ACTIONS][HOLDEM_PHH_ACTION_LEN];
} holdem_phh_t;

/*
 * Parses the text of one PHH file into *out. Returns 0, or -EINVAL with a reason in err
 * (errlen bytes) for text it cannot read or a hand it does not support.
 */
int holdem_phh_parse(const char *text, holdem_phh_t *out, char *err, size_t errlen);

/*
 * Replays a parsed hand through a fresh holdem_table: seats, blinds and antes from the file,
 * the deck ordered so the table deals exactly the recorded cards, then every action in order.
 * Writes the finishing stacks to stacks[0..players). Returns 0 when the table accepted every
 * action and finished the hand, else -EINVAL with the reason in err.
 */
int holdem_phh_replay(const holdem_phh_t *h, int64_t *stacks, char *err, size_t errlen);

/*
 * Reads, replays and checks one file: 0 when the finishing stacks match (a .5 within half a
 * chip), 1 on a mismatch or a refused action, -errno when the file cannot be read or parsed.
 * msg (msglen bytes) says what differed. scratch must hold a holdem_phh_t (it is large).
 */
int holdem_phh_check_file(const char *path, holdem_phh_t *scratch, char *msg, size_t msglen);

#endif
