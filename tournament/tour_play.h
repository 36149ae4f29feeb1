/*
 * tour_play -- the director's model of a running tournament: its entries (stacks, places,
 * prizes), its tables (seats, the last hand's button and blinds), and the two requests its tables
 * make (docs/tournaments.md "Tables and hands"):
 *
 *   deal  (table, hand, host)    may the table deal its next hand? The answer gives the hand's
 *                                blinds (the level in force now, TDA 23), its button, small and
 *                                big blind seats (big blind forward, dead button) and who is dealt
 *                                in with which stack -- or WAIT, or TABLE_CLOSED. A deal of the
 *                                hand in play is a re-deal (its host voided it or lost the table):
 *                                the same positions, seats and stacks, now dealt to host.
 *   hand  (table, hand, host, result)  the hand ended with these stacks: the director checks that
 * chips were conserved, places the busted players (shared places for equal starting stacks), pays
 * prizes in the money, finishes the tournament with its last player, and plans the seating (tables
 *                                broken and balanced between hands, tour_seating.h).
 *
 * Every step is computed here on the model and written as one commit (tour_commit_t: the
 * argument list of TOUR_COMMIT_LUA, tour_lua.h), which the director sends fenced; the model is
 * changed at once, so a commit that is refused makes the director hand the tournament back (the
 * next owner loads the state from Redis). Private to tournament/ (the director).
 *
 * Randomness (the first hand's button, the draw, the seats of a broken table) comes from
 * splitmix64 over the meta field `rng`, written with every commit that used it.
 */
#ifndef CROUPIER_TOUR_PLAY_H
#define CROUPIER_TOUR_PLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tour_seating.h"
#include "tour_structure.h"

/* A table's host: the server that plays it (docs/tournaments.md "Tables at the servers"), a
 * token [A-Za-z0-9_.:-]{1,92}. */
#define TOUR_HOST_MAX 92

/* The arguments of one commit (strings owned by the commit) and its answer. */
typedef struct {
    char **v;
    size_t n, cap;
    bool failed; /* out of memory while building */
} tour_commit_t;

void tour_commit_add(tour_commit_t *c, const char *s);
void tour_commit_addf(tour_commit_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tour_commit_free(tour_commit_t *c);

/* The ids a hand's history record names (a table's `hand` report, docs/tournaments.md "Tables
 * at the servers"): its "game" (the stream: lower-case letters, digits, '_' and '-', shorter
 * than 64) into game, its "round" (the dedupe key, shorter than 200) into round. NULL record:
 * both "" and 0. Returns 0, or -EINVAL for a record that is not such JSON. */
int tour_record_ids(const char *record, char game[64], char round[200]);

typedef struct tour_play tour_play_t;

tour_play_t *tour_play_create(const tour_structure_t *st, uint64_t tournament);
void tour_play_free(tour_play_t *p);

/* Loading from Redis (a new owner): one entry (its JSON), one table (its JSON), and the meta
 * numbers. Returns 0 or -EINVAL (malformed). */
int tour_play_load_entry(tour_play_t *p, const char *player, const char *json);
int tour_play_load_table(tour_play_t *p, const char *json);
void tour_play_set_meta(tour_play_t *p, uint64_t rng, int64_t pool, int64_t paid_out,
                        uint32_t entries);

/* A registration or re-entry applied while play goes on (the answer's entry number and stack):
 * the entry waits for a seat (given after the next hand that ends). */
int tour_play_register(tour_play_t *p, uint64_t player, uint32_t entry, int64_t stack,
                       int64_t buy_in, int64_t fee);

/* Hand-for-hand state (meta h4h_on, h4h_round) when loading; whether it is on (the level clock
 * pauses while it is: docs/tournaments.md "Hand-for-hand"). */
void tour_play_set_h4h(tour_play_t *p, bool on, uint32_t round);
bool tour_play_h4h(const tour_play_t *p);

/* Whether the tables have been drawn. */
bool tour_play_drawn(const tour_play_t *p);
/* Players still in. */
uint32_t tour_play_left(const tour_play_t *p);

/* The initial draw of every playing entry (at the start). Appends its writes to c. */
int tour_play_draw(tour_play_t *p, tour_commit_t *c);

/*
 * A table's `deal` request. Appends the writes to c and returns the answer's JSON body (the
 * fields after "code"; malloc'd) with *code set ("OK", "WAIT", "TABLE_CLOSED", "BAD_REQUEST").
 * Every answer but OK leaves the model as it was, except "INTERNAL" (a bug: the model moved and
 * cannot be trusted; the director reloads it from Redis).
 */
char *tour_play_deal(tour_play_t *p, uint32_t table, uint64_t hand, const char *host,
                     int64_t clock_ms, tour_commit_t *c, const char **code);

/* A table's `hand` result: "PLAYER:STACK,PLAYER:STACK,..." for every player dealt in, from the
 * host the hand was dealt to (else NOT_HOST, nothing changed). record: the hand's history record
 * (docs/hand-history.md, with its `round` and `game`), written in the same commit (at most once
 * per round), or NULL. */
char *tour_play_hand(tour_play_t *p, uint32_t table, uint64_t hand, const char *host,
                     const char *result, const char *record, int64_t now_ms, tour_commit_t *c,
                     const char **code);

#endif
