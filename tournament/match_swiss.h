/*
 * match_swiss -- 瑞士移位, Swiss rounds (docs/rules/match-halls.md "瑞士移位").
 *
 * A Swiss stage (match_stage_create with MATCH_SWISS) plays cfg.rounds rounds. Before each,
 * match_swiss_seat_round() ranks everyone (match points, opponents' match points, stage score,
 * the draw), gives the byes (players mod seats, the lowest-ranked among those with the fewest
 * byes) and seats the others: table = ceil(rank / seats), seats in rank order (in Guandan the
 * 1st and 3rd of a table are partners). Each table plays deals_per_round deals
 * (match_swiss_deal_end); when a table's last deal ends its players get their match points (win
 * above 0, draw at 0, loss below 0 of their round score; mp_absent when the director reported
 * them absent for the round with match_swiss_set_round_absent). After the last round st->over
 * is set; with cfg.advance > 0 only the best advance players go on (the others are out in
 * ranking order; absent_out applies to those going on).
 */
#ifndef CROUPIER_MATCH_SWISS_H
#define CROUPIER_MATCH_SWISS_H

#include "match.h"

/* Sorts idx[0..n-1] (player indices) into the Swiss ranking, best first. */
void match_swiss_rank(const match_stage_t *st, uint32_t *idx, uint32_t n);

/* Opponents' match points (Buchholz) of player index i, with the match points held now. */
int64_t match_swiss_buchholz(const match_stage_t *st, uint32_t i);

/*
 * Seats the next round (see above): tables[] gets the tables (cap >= n / seats), byes[] the ids
 * given a bye (cap >= seats - 1). With cfg.duplicate a new st->round_seed is drawn. Returns 0,
 * -EINVAL (not Swiss, a round in play, all rounds played) or -ENOSPC.
 */
int match_swiss_seat_round(match_stage_t *st, tour_rng_fn rng, void *rng_arg,
                           match_new_table_t *tables, size_t cap, size_t *ntables, uint64_t *byes,
                           size_t byes_cap, size_t *nbyes);

/* The director's report that player `id` played none of the current round's deals himself.
 * Returns 0 or -EINVAL (unknown id, no round in play, his table already done). */
int match_swiss_set_round_absent(match_stage_t *st, uint64_t id);

/* Deal `deal` (1..deals_per_round) of `table` ended with res[seat]; *round_over when it was the
 * round's last. Returns 0, -ESTALE or -EINVAL (nothing changed on error). */
int match_swiss_deal_end(match_stage_t *st, uint32_t table, uint32_t deal, const int64_t *res,
                         bool *round_over);

#endif
