/*
 * match_fixed -- 定局积分, rounds of fixed tables playing a fixed number of deals
 * (docs/rules/match-halls.md "定局积分").
 *
 * A fixed stage (match_stage_create with MATCH_FIXED: its players a multiple of seats) plays
 * rounds: match_fixed_seat_round() draws the players left to tables at random; each table plays
 * deals_per_round deals, reported one by one with match_fixed_deal_end(); after the last deal
 * of the last table the round ends by itself: per table the first advances, places 3 and below
 * are out, the best s seconds advance (match_fixed_seconds), or, when the round was played at
 * one table (the final), everyone is ranked and st->over is set. A fixed stage is always the
 * match's last.
 */
#ifndef CROUPIER_MATCH_FIXED_H
#define CROUPIER_MATCH_FIXED_H

#include "match.h"

/* How many of the seconds of T tables advance (T >= 2): the s in 0..T making T + s a multiple
 * of seats, closest to T x pct / 100, ties to the smaller. */
uint32_t match_fixed_seconds(uint32_t tables, uint32_t seats, uint32_t pct);

/* The order of this format: higher stage score, higher round score, then the draw (a
 * qsort_r comparator of player indices; arg = the stage). */
int match_fixed_cmp(const void *a, const void *b, void *st);

/*
 * Seats the next round: the players left, drawn at random to tables 1..T, seats drawn too.
 * tables[] gets the T tables (cap >= remaining / seats). Returns 0 with *ntables, -EINVAL (not a
 * fixed stage, a round in play, the stage over) or -ENOSPC.
 */
int match_fixed_seat_round(match_stage_t *st, tour_rng_fn rng, void *rng_arg,
                           match_new_table_t *tables, size_t cap, size_t *ntables);

/*
 * Deal number `deal` (1..deals_per_round) of `table` ended with res[seat]. When it ends the
 * round, the round's advancement is applied (the ids of the players out go to gone[], cap
 * st->n, may be NULL) and *round_over is set. Returns 0, -ESTALE (not that table's next deal;
 * nothing changed) or -EINVAL (bad results; nothing changed).
 */
int match_fixed_deal_end(match_stage_t *st, uint32_t table, uint32_t deal, const int64_t *res,
                         bool *round_over, uint64_t *gone, size_t *ngone);

#endif
