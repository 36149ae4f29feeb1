/*
 * match_rising -- 打立出局, elimination by a rising line (docs/rules/match-halls.md "打立出局").
 *
 * The director drives a rising stage (created by match_stage_create with MATCH_RISING) with two
 * calls and the stage time t (milliseconds since the stage started, never decreasing):
 *
 *   match_rising_pair()     whenever players wait (after match_stage_create, after every deal
 *                           end, when an absent player comes back): the waiting players below
 *                           the line go out, then every full table that the waiting players
 *                           fill is formed and returned; the director starts those deals.
 *   match_rising_deal_end() when a table's deal ends: its scores move by result x the deal's
 *                           base, its players below the line go out, the others wait.
 *
 * st->finishing: no table is formed any more (N remain); st->over: no deal in play either, the
 * players not out go on (match_carry, then the next stage). Players put out at the end because
 * they are absent (absent_out) are not listed in gone[]: match_stage_standings shows them. A voided
 * deal is replayed by the same table (match_rising_deal_void).
 */
#ifndef CROUPIER_MATCH_RISING_H
#define CROUPIER_MATCH_RISING_H

#include "match.h"

/* The base score and the line at stage time t_ms (>= 0; negative is taken as 0). */
int64_t match_rising_base_at(const match_stage_config_t *c, int64_t t_ms);
int64_t match_rising_line_at(const match_stage_config_t *c, int64_t t_ms);

/*
 * Pairs the waiting players at time now_ms (see above). Tables are written to tables[] (cap:
 * at least st->nqueue / seats), the ids of the players out to gone[] (may be NULL; otherwise cap
 * at least st->nqueue). Returns 0 with *ntables and *ngone (either pointer may be NULL), or
 * -EINVAL (not a rising stage, a stage over), -ENOSPC (nothing changed).
 */
int match_rising_pair(match_stage_t *st, int64_t now_ms, tour_rng_fn rng, void *rng_arg,
                      match_new_table_t *tables, size_t tables_cap, size_t *ntables, uint64_t *gone,
                      size_t gone_cap, size_t *ngone);

/*
 * The deal `deal` of table `table` ended at now_ms with res[seat] (deal results in stake units,
 * match_result_*). The ids of the players out go to gone[] (MATCH_MAX_SEATS; may be NULL).
 * Returns 0 with *ngone (may be NULL), -ESTALE (the table is not playing that deal: a repeated
 * report; nothing changed) or -EINVAL (results that do not sum to 0, partners unequal, not a
 * rising stage; nothing changed).
 */
int match_rising_deal_end(match_stage_t *st, uint32_t table, uint64_t deal, const int64_t *res,
                          int64_t now_ms, uint64_t *gone, size_t *ngone);

/* The deal in play at `table` is voided: the same players replay at the same base under a
 * new deal id (*new_deal). Returns 0 or -ESTALE. */
int match_rising_deal_void(match_stage_t *st, uint32_t table, uint64_t deal, uint64_t *new_deal);

#endif
