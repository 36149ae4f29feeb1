/*
 * bj_strategy -- basic strategy for any blackjack rule set, computed from the rules.
 *
 * Basic strategy is the play that maximises the expected return knowing only the player's
 * hand total (hard or soft, or the pair) and the dealer's up card. It is derived here by an
 * expected-value computation for the rules given:
 *   - the dealer's final-total probabilities for each up card, drawing without replacement
 *     from the full shoe less the up card, with the hole card conditioned on "no blackjack"
 *     when the dealer peeks;
 *   - the player's stand / hit / double / surrender values: first decisions are computed
 *     for each two-card hand with its own cards removed from the shoe too, then combined per
 *     total weighted by how often each hand is dealt ("total-dependent" basic strategy, as
 *     in published charts); later hit/stand decisions draw from the shoe less the up card;
 *   - splits valued per hand, with resplits (up to the table's limit) approximated by the
 *     infinite-resplit recurrence, doubling after split only under DAS, and split aces
 *     getting one card.
 * For six decks, S17, DAS this reproduces the published charts (e.g. Wizard of Odds "4-8
 * decks, dealer stands on soft 17") cell for cell; the unit tests check known cells.
 * Insurance and even money are never taken by basic strategy.
 */
#ifndef CROUPIER_BJ_STRATEGY_H
#define CROUPIER_BJ_STRATEGY_H

#include <stdio.h>

#include "blackjack.h"

typedef struct bj_strategy bj_strategy_t;

/* Computes the strategy for rules (a few milliseconds). Returns 0 and *out, or
 * BJ_ERR_INVALID if the rules are invalid. Free with bj_strategy_destroy(). */
int bj_strategy_create(const bj_rules_t *rules, bj_strategy_t **out);
void bj_strategy_destroy(bj_strategy_t *s);

/*
 * The basic-strategy action for hand against the dealer's up card, among allowed (a mask
 * of BJ_ACT_BIT(), as from bj_table_allowed()). Always returns an allowed action if allowed
 * contains BJ_ACT_STAND (it always does for a hand on turn).
 */
bj_action_t bj_strategy_decide(const bj_strategy_t *s, const bj_hand_t *hand, uint8_t up,
                               uint32_t allowed);

/*
 * The chart cell for a first-two-card decision, as one of "H" hit, "S" stand,
 * "Dh"/"Ds" double else hit/stand, "Rh"/"Rs"/"Rp" surrender else hit/stand/split,
 * "P" split. total: 4..21; soft: the total counts an ace as 11; pair_value: 1..10 for a pair
 * (then total/soft are ignored), 0 otherwise; up: dealer card value 1 (ace) .. 10.
 */
const char *bj_strategy_cell(const bj_strategy_t *s, int total, bool soft, int pair_value, int up);
/* Prints the whole chart (hard, soft, pairs) in the usual layout. */
void bj_strategy_print(const bj_strategy_t *s, FILE *to);

/* Expected return of a first-two-card decision as computed (for tests and the chart). */
double bj_strategy_ev(const bj_strategy_t *s, int total, bool soft, int up, bj_action_t a);

#endif
