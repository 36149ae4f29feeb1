/*
 * tk_fixture -- what the table kit's tests share (test_tk_seats.c, test_tk_rounds.c,
 * test_tk_drain.c, test_tk_rooms.c; the action windows have their own, test_tk_window.c).
 *
 * The kit (engine/tk.h) is tested concern by concern through the one game that stands on
 * nothing else: Zha Jin Hua (games/zhajinhua/zjh_engine.c, docs/rules/zhajinhua.md) run by the
 * real croupier-game binary against a real redis-server (testenv.h), players driven over a real
 * rpc link (rpcc.h) as a gateway would. Settings come from the kit's own flags (--zhajinhua-*),
 * which also proves they are parsed at start. Every function asserts with check's ck_assert_*:
 * call them from a test.
 */
#ifndef CROUPIER_TEST_TK_FIXTURE_H
#define CROUPIER_TEST_TK_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deck.h"
#include "rpcc.h"
#include "testenv.h"
#include "zhajinhua.pb-c.h"

#define STAKE 10
#define NP 6

typedef testenv_t env_t;

/* What the players were told: the turn, rounds ended, closings, own cards. */
typedef struct {
    uint64_t last_seq;
    int turn_seat;
    int64_t to_call;
    int completed, voided, timed_out, plays;
    int table_closing, desk_closing;
    int offers;         /* DeskClosing naming a whole-table move's offer (one per player) */
    char offer_id[160]; /* the last one's */
    long long wallets_at_closing; /* sum of the test's wallets when DeskClosing arrived */
    uint64_t seat_player[NP];
    char round_id[160];
    int void_reason; /* of the last voided RoundEnd */
    bool own_cards_seen;
    env_t *env;
    const uint64_t *players;
    int nplayers;
    /* private rooms */
    int64_t won[8]; /* each of players' RoundEnd deltas, summed */
    int room_infos; /* RoomInfo pushes (one per player) */
    int room_state; /* the last one's state and deals played */
    int room_played;
    int room_closing;  /* TableClosing{CLOSING_ROOM_ENDED} */
    int room_desk_end; /* DeskClosing{CLOSING_ROOM_ENDED} */
    char rounds[8][160];
    int nrounds;
    long long rake;     /* summed from the RoundEnds */
    uint64_t hands_off; /* a player whose turns the kit plays (play_room_out leaves them) */
    /* Deck commitments seen on Deals (docs/fairness.md), by round: the last 8 rounds. */
    char commit_round[8][160];
    uint8_t commit[8][DECK_COMMIT_LEN];
    int ncommits;
    /* The cards each player saw when he looked (ZjhCards), by round. */
    struct {
        char round[160];
        uint64_t player;
        uint8_t cards[3];
    } looked[32];
    int nlooked;
} model_t;

/* ---- Redis: wallets and seat accounts ---------------------------------------------------- */

/* The integer a Redis command (fmt with one %s, arg) answers; 0 for (nil). */
long long redis_int(env_t *e, const char *fmt, const char *arg);
void wallet_set(env_t *e, uint64_t player, long long amount);
long long wallet(env_t *e, uint64_t player);
/* Sum of every kit seat account (wallets named ts.*), and how many hold chips. */
long long seat_accounts(env_t *e, int *nonzero);
/* Sum of the wallets of m's players. */
long long wallets(model_t *m);

/* ---- the rig ----------------------------------------------------------------------------- */

/* redis-server and croupier-game --engine zhajinhua (e->game) with the tests' settings of the
 * kit's flags (3 seats, a 50 ms gap between rounds, action_ms a turn and no time bank, 5 % rake,
 * a 300 ms move wait...: env_start_ttl's list); drain_max_s is the drain bound. */
void env_start(env_t *e, int drain_max_s, const char *action_ms);
/* The same with gap_ms between rounds. */
void env_start_gap(env_t *e, int drain_max_s, const char *action_ms, const char *gap_ms);
/* ttl_ms (or NULL: testenv's 900) is the lease TTL: a test that keeps Redis from answering
 * for most of it needs a longer one, or the server fences itself (docs/queues.md "A server cut
 * off from Redis"). */
void env_start_ttl(env_t *e, int drain_max_s, const char *action_ms, const char *gap_ms,
                   const char *ttl_ms);
/* Another game server of the same engine and settings on e's Redis. */
void env_start_other(env_t *e, testenv_server_t *s);

/* ---- the players' client (a gateway's frames over rpcc) ---------------------------------- */

/* A frame's request id, player and session (the player's id) and a deadline 5 s away. */
void fill(Croupier__RpcFrame *f, uint64_t rid, uint64_t player);
void send_join_at(rpcc_t *c, uint64_t rid, uint64_t player, const char *game, int64_t stake);
/* A Join at STAKE. */
void send_join(rpcc_t *c, uint64_t rid, uint64_t player, const char *game);
/* Sends raw bytes as the body of Action.game. */
void send_body(rpcc_t *c, uint64_t rid, uint64_t player, const uint8_t *body, size_t len);
/* A ZjhAction (unit when > 0, target when >= 0). */
void send_move(rpcc_t *c, uint64_t rid, uint64_t player, Croupier__Zjh__ZjhMove move, int64_t unit,
               int target);
/* An Adopt of a whole-table move's offer (tk.h "moves") at STAKE. */
void send_adopt(rpcc_t *c, uint64_t rid, uint64_t player, const char *offer);
/* The code of the reply to rid (asserted within 5 s); the reply goes to *out (the caller frees
 * it) unless out is NULL. */
int reply_code(rpcc_t *c, uint64_t rid, Croupier__RpcFrame **out);
/* A Join answered Joined at zhajinhua and STAKE: the seat (noted in m unless NULL), the desk to
 * *desk unless NULL. */
int join_ok(rpcc_t *c, model_t *m, uint64_t rid, uint64_t player, uint64_t *desk);

/* ---- the players' model ------------------------------------------------------------------ */

void model_init(model_t *m, env_t *e, const uint64_t *players, int n);
/* One frame into the model (asserting what every frame must hold: own cards to their owner
 * only, a commitment on every Deal, deltas summing to minus the rake). */
void model_apply(model_t *m, const Croupier__RpcFrame *f);
/* Applies events until pred holds; false after timeout_ms without it. */
bool pump_until(rpcc_t *c, model_t *m, bool (*pred)(const model_t *), int timeout_ms);
bool has_turn(const model_t *m);
bool never(const model_t *m);
bool round_over(const model_t *m);
bool desk_closed(const model_t *m);
/* Gives each player a wallet of 1000, connects a link and seats them all (rids 1..n). */
rpcc_t *seat_players(env_t *e, model_t *m, const uint64_t *players, int n);
/* The seat to act folds; returns the reply code. */
int fold_turn(rpcc_t *c, model_t *m, uint64_t rid);

/* The value of a series of the game server's /metrics ("name{labels} "), -1 when absent. */
long metric(env_t *e, const char *series);

#endif
