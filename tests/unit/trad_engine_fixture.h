/*
 * trad_engine_fixture -- what the traditional engine's tests share (test_trad_engine_deals.c,
 * test_trad_engine_leaving.c, test_trad_engine_snapshot.c, test_trad_engine_options.c).
 *
 * The engine (games/traditional/trad_engine.c) runs in the real croupier-game binary with a
 * real redis-server, driven through a real rpc link (rpcc) as a gateway would. Rules:
 * docs/rules/doudizhu.md, docs/rules/bigtwo.md, docs/rules/runfast.md,
 * docs/rules/traditional-engine.md.
 *
 * The engine stands on the table kit (engine/tk.h); where the kit changed what a client sees,
 * the tests follow it (docs/rules/traditional-engine.md, "Since the table kit"): the turn time
 * is CROUPIER_TRAD_ACTION_MS (was _TURN_MS), trustee's delay CROUPIER_TRAD_TRUSTEE_MS (was
 * _BOT_MS's), a full table's first deal waits the gap too, and a seat keeps one stack topped up
 * after each deal.
 *
 * Every function asserts with check's ck_assert_*: call them from a test.
 */
#ifndef CROUPIER_TEST_TRAD_ENGINE_FIXTURE_H
#define CROUPIER_TEST_TRAD_ENGINE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcc.h"
#include "testenv.h"
#include "trad_engine.h"

/* ---- the rig ----------------------------------------------------------------------------- */

/* redis-server and croupier-game --engine traditional (tests/support/testenv.h). */
typedef struct {
    testenv_t rig;
} env_t;

/* Starts the rig: the server serves games ("doudizhu,bigtwo"...) with env (NULL-terminated
 * CROUPIER_TRAD_* settings) and drain_max_s as its drain bound, without whole-table moves. */
void env_start(env_t *e, int drain_max_s, const char *games, char *const env[]);
void env_stop(env_t *e);
void wallet_set(env_t *e, const char *who, long v);
/* The integer at key (0 for none). */
long redis_long(env_t *e, const char *key);
long wallet(env_t *e, const char *who);
/* /drain/status's human_desks (testenv_human_desks), asserted to be there. */
long human_desks(env_t *e);

/* ---- the players' client ----------------------------------------------------------------- */

/* The next request id of the tests' frames (starts at 100). */
extern uint64_t next_rid;

/* Rule option names joined by '+' into buf (len bytes). */
void format_options(char *const *names, size_t n, char *buf, size_t len);
/* Joins; on OK gives the seat and, when opts is not NULL, the Joined's rule options joined by
 * '+' and its bomb units (0 when absent). Returns the reply code. */
int join_options(rpcc_t *c, uint64_t player, const char *game, int64_t stake, int *seat, char *opts,
                 size_t len, uint32_t *units);
/* Joins and returns the reply code; *seat gets the seat on success. */
int join(rpcc_t *c, uint64_t player, const char *game, int64_t stake, int *seat);
/* Sends a shedding action (or a hold'em one when holdem is true); returns the reply code. */
int act(rpcc_t *c, uint64_t player, Croupier__SheddingMove move, const uint8_t *cards, size_t n,
        int bid, bool holdem);

/* A player's view of the table, from a Resume. */
typedef struct {
    bool in_round;
    int turn, phase, declarer, last_seat;
    uint32_t time_left;
    uint8_t hand[32], last[32], kitty[8];
    size_t nhand, nlast, nkitty;
    uint32_t left[4];
    uint8_t packed[2048]; /* the snapshot packed with time_left cleared (for "unchanged") */
    size_t npacked;
} view_t;

/* Resumes player into *v. */
void resume(rpcc_t *c, uint64_t player, view_t *v);
/* The same snapshot (time left aside). */
bool view_same(const view_t *a, const view_t *b);
/* Resumes player until its table is in a deal (5 s at most) and asserts it is. On the table kit
 * a full table deals after the gap (CROUPIER_TRAD_GAP_MS), its first deal too; the engine before
 * the kit dealt a full table's first deal at once. */
void wait_in_round(rpcc_t *c, uint64_t player, view_t *v);
/* The Snapshot of a seat (Resume), as its player sees it (asserted OK; the caller frees it). */
Croupier__RpcFrame *snapshot_of(rpcc_t *c, uint64_t player);

/* What the events told the gateway so far. */
typedef struct {
    int round_ends, completed, voided, desk_closings, table_closings, timed_out_plays, plays;
    int void_reason;
    long delta[8]; /* by player index (player id - base) */
    long rake;
    char round_id[128];
} seen_t;

/* Reads the events on c into *s (players base..base+7 by index): waits timeout_ms for the first,
 * then takes what is there. */
void collect(rpcc_t *c, seen_t *s, uint64_t base, int timeout_ms);

#endif
