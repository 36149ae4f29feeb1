/*
 * tour_seating -- seats of a multi-table tournament: the initial random draw, balancing,
 * breaking tables, down to the final table (docs/tournaments.md, "Seating", "Balancing",
 * "Breaking tables"; TDA rules on balancing and breaking).
 *
 * The caller (the director) keeps a model of its tables as an array of tour_table_t and asks
 * tour_seating_plan() what to do after eliminations. The plan is applied to the model at once
 * (players moved, moves counters raised), and returned as a list of moves that the director
 * then carries out at the real tables. Randomness comes from the caller's generator
 * (tour_rng_fn; tour_rng_splitmix64 is one, seeded), so a plan is a pure function of the model
 * and the generator's output: the director can log the seed and replay any decision.
 *
 * Positions. Blinds move by the "big blind forward" rule (dead button, TDA): the next hand's
 * big blind is the first occupied seat clockwise after the last hand's big blind seat (bb), its
 * small blind is the seat bb (dead if that player left), its button the seat sb. So the model
 * needs, per table, the seats of the small and big blind of the most recent hand started there
 * (sb, bb; -1 before the first hand). Seats are numbered 0..seats-1 clockwise.
 *
 * Nobody is moved in the middle of a hand: only a table the caller marks between_hands gives
 * players (to balance or because it is broken). Any open table may receive players; they play
 * from its next hand (see tour_move_t.wait_for_button).
 */
#ifndef CROUPIER_TOUR_SEATING_H
#define CROUPIER_TOUR_SEATING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tour_structure.h"

/* 64 random bits per call. */
typedef uint64_t (*tour_rng_fn)(void *arg);

/* A generator for tour_rng_fn: splitmix64 over *(uint64_t *)state (the seed). */
uint64_t tour_rng_splitmix64(void *state);

/* A uniform number in [0, n) (n >= 1) from rng, without modulo bias (rejection). */
uint64_t tour_rng_below(tour_rng_fn rng, void *arg, uint64_t n);

typedef struct {
    uint64_t player; /* 0 = empty seat */
    uint32_t moves;  /* times this player was moved to balance or by a broken table */
} tour_seat_t;

typedef struct {
    uint32_t id;    /* table number, unique, > 0 */
    uint32_t seats; /* TOUR_MIN_SEATS..TOUR_MAX_SEATS */
    int sb;         /* seats of the most recent hand's small and big blind, -1 = none yet */
    int bb;
    bool between_hands; /* no hand in play: the table may give players */
    tour_seat_t seat[TOUR_MAX_SEATS];
} tour_table_t;

typedef enum { TOUR_MOVE_BALANCE = 1, TOUR_MOVE_BREAK = 2 } tour_move_reason_t;

typedef struct {
    uint64_t player;
    uint32_t from_table;
    uint32_t from_seat;
    uint32_t to_table;
    uint32_t to_seat;
    tour_move_reason_t reason;
    /* true: the seat lies between the button and the small blind of the receiving table's next
     * hand; the player is not dealt in until the button has passed him (he is dealt in from
     * the hand after next; TDA: a moved player is dealt in unless between the small blind and
     * the button). false: he is dealt in from the table's next hand. */
    bool wait_for_button;
} tour_move_t;

typedef struct {
    /* Balance when the largest and the smallest table differ by more than this (TDA: 1 in
     * flop games). >= 1. */
    uint32_t max_difference;
    /* Among the donor's players, take the one who would be big blind next among those moved
     * the fewest times (true, the default), or strictly the next big blind (false). */
    bool prefer_fewest_moves;
} tour_seating_rules_t;

tour_seating_rules_t tour_seating_rules_default(void);

/* ceil(entrants / seats): the tables of the initial draw. */
uint32_t tour_seating_tables_for(uint32_t entrants, uint32_t seats);

/*
 * The initial draw: the n players (ids > 0, distinct) over ntables = tour_seating_tables_for()
 * tables numbered first_id, first_id + 1..., table sizes differing by at most one (the first
 * n % ntables tables get the extra player), each player's table and seat drawn at random.
 * Tables are between hands with no blinds yet (sb = bb = -1): each table draws for the button
 * as its game does. tables must hold ntables entries. Returns 0 or -EINVAL (n == 0, seats out
 * of range, a player id 0).
 */
int tour_seating_draw(const uint64_t *players, uint32_t n, uint32_t seats, uint32_t first_id,
                      tour_rng_fn rng, void *rng_arg, tour_table_t *tables, size_t ntables);

/* Players seated at t. */
uint32_t tour_table_count(const tour_table_t *t);

/*
 * What to do now (after eliminations, or when a table's hand ends): first break tables while
 * the players fit in one table fewer (the table broken: the open table between hands with the
 * fewest players, ties to the highest number; its players go to random seats at the tables
 * with the fewest players; when the other tables lack allowed seats for them, nothing at all
 * is done until a hand ends: neither the break nor any balancing), then balance while the largest
 * and smallest open tables differ by more than rules->max_difference (donor: the table between
 * hands with the most players among those more than max_difference above the smallest, ties to the
 * lowest number; receiver: the open table with the fewest players, ties to the lowest number; the
 * player: see tour_seating_rules_t; his seat: the worst one, the first empty seat clockwise after
 * the receiver's bb, never its small blind seat). A table with no player is closed and ignored; a
 * table emptied by a break is left with no player. Seats never go to the next hand's small blind
 * seat. The moves are applied to tables[] and written to out[] in order.
 *
 * Returns 0 with *nout moves (0: nothing to do now, or nothing possible until a hand ends),
 * -ENOSPC when out_cap is reached (the moves written so far are applied; call again),
 * -EINVAL for a bad model (a table id 0, seats or blind seats out of range, max_difference
 * 0). Table ids and player ids must be unique: the director's model keeps them so, and they
 * are not checked (that would cost more than the plan itself on 1,000 tables).
 */
int tour_seating_plan(tour_table_t *tables, size_t ntables, const tour_seating_rules_t *rules,
                      tour_rng_fn rng, void *rng_arg, tour_move_t *out, size_t out_cap,
                      size_t *nout);

/*
 * Hand-for-hand (TDA: near the money, every table plays one hand at a time and waits for the
 * others): whether it applies with `remaining` players, `paid` places and `margin` (>= 1; 1 =
 * from the bubble: remaining == paid + 1) -- remaining > paid and remaining <= paid + margin.
 */
bool tour_hand_for_hand(uint32_t remaining, uint32_t paid, uint32_t margin);

/*
 * Hand-for-hand: whether the next hand may be dealt everywhere, that is every open table (with
 * at least one player) is between hands -- the tables wait for each other. The director then
 * deals one hand at every table with two players or more, marks them in a hand, collects the
 * busts of that hand from all tables (they share places, tour_payout_busts()), and plans the
 * seating (tour_seating_plan()) before the next round of hands.
 */
bool tour_hand_for_hand_may_deal(const tour_table_t *tables, size_t ntables);

#endif
