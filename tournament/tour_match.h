/*
 * tour_match -- the director's model of a running match (比赛场, a tournament of format "match":
 * docs/tournaments.md "Match halls: the director"): its entries, its stages (match.h and the
 * formats, one match_stage_t per stage played so far) and its tables as the game servers see
 * them (the same `tables` records and claim protocol as hold'em's, tour_table.h). The requests
 * its tables make:
 *
 *   deal  (table, hand, host)   may the table deal? OK names the deal to play: the stage, the
 *                               format, the deal id (打立出局) or the round and its deal number,
 *                               the base score, the players by seat with their scores (and the
 *                               round's seed with a duplicate Swiss); WAIT while the table has
 *                               no players (re-pairing, the round's other tables); TABLE_CLOSED.
 *                               A deal of the hand in play is a re-deal (the same deal, now
 *                               dealt to host).
 *   hand  (table, hand, host, result)  the deal ended: result = "PLAYER:RESULT,..." with every
 *                               seated player's deal result in stake units
 *                               (docs/rules/match-halls.md "Deal results"). Applied to the stage
 *                               (match_*_deal_end), then the waiting players are re-paired, a
 *                               round is seated, a stage ends and the next begins, or the match
 *                               ends with its places and prizes -- all in the same commit as the
 *                               deal's history record.
 *
 * Like tour_play.h: every step is computed here and appended to a tour_commit_t that the
 * director sends fenced (TOUR_COMMIT_LUA); a refused request changes nothing. Randomness comes
 * from splitmix64 over the meta field `rng`. The stages are kept in {croupier:tour:<id>}:stages
 * (field = stage index, value = match_stage_to_json), written by the commit op `S`.
 * Private to tournament/ (the director).
 */
#ifndef CROUPIER_TOUR_MATCH_H
#define CROUPIER_TOUR_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "tour_play.h"
#include "tour_structure.h"

typedef struct tour_match tour_match_t;

tour_match_t *tour_match_create(const tour_structure_t *st, uint64_t tournament);
void tour_match_free(tour_match_t *m); /* NULL is a no-op */

/* Loading from Redis (a new owner): an entry, a table record, a stage (field = its index), and
 * the meta numbers (stage_clock0: the level clock when the current stage began). Each returns 0
 * or -EINVAL (malformed: the director idles the match for an operator). */
int tour_match_load_entry(tour_match_t *m, const char *player, const char *json);
int tour_match_load_table(tour_match_t *m, const char *json);
int tour_match_load_stage(tour_match_t *m, const char *index, const char *json);
void tour_match_set_meta(tour_match_t *m, uint64_t rng, int64_t pool, uint32_t entries,
                         int64_t stage_clock0);
/* After loading: 0, or -EINVAL when the stages do not follow each other (0, 1, ... k). */
int tour_match_loaded(tour_match_t *m);

/* Whether the first stage exists (the start and the first pairing are two steps). */
bool tour_match_begun(const tour_match_t *m);
/* Players not out; whether the match ended (places and prizes written). */
uint32_t tour_match_left(const tour_match_t *m);
bool tour_match_finished(const tour_match_t *m);

/* The first stage from the playing entries, its first tables, at level clock clock_ms.
 * Appends the writes to c. Returns 0 or -EINVAL. */
int tour_match_begin(tour_match_t *m, int64_t clock_ms, tour_commit_t *c);

/* A table's requests (see above); the answer's body (malloc'd, the fields after "code") with
 * *code "OK", "WAIT", "TABLE_CLOSED", "NOT_HOST", "BAD_REQUEST" or "INTERNAL" (the model moved
 * and cannot be trusted: the director reloads it). clock_ms: the director's clock (the rising
 * line's time, docs/tournaments.md). */
char *tour_match_deal(tour_match_t *m, uint32_t table, uint64_t hand, const char *host,
                      tour_commit_t *c, const char **code);
char *tour_match_hand(tour_match_t *m, uint32_t table, uint64_t hand, const char *host,
                      const char *result, const char *record, int64_t clock_ms, tour_commit_t *c,
                      const char **code);

#endif
