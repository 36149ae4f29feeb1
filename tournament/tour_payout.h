/*
 * tour_payout -- prize pool, payout table, places shared by players busted in the same hand,
 * and the cancellation split of a tournament (docs/tournaments.md, "Payouts" and "Cancelling
 * a tournament").
 *
 * Pure functions: no I/O, no clock, no randomness, no allocation that outlives a call. Every
 * amount is a whole number of chips (int64_t), and every function that splits an amount gives
 * out exactly that amount, no chip more or less: the odd chips go to places or players in an
 * order each function states.
 *
 * Errors: 0 on success, -EINVAL for bad input (a negative amount, a stack of 0 where chips are
 * needed, places out of range), -EOVERFLOW when an amount does not fit in int64_t, -ENOSPC
 * when the caller's output array is too small. Nothing is written to an output on error.
 */
#ifndef CROUPIER_TOUR_PAYOUT_H
#define CROUPIER_TOUR_PAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Shares are in basis points: 10000 = the whole pool. */
#define TOUR_PAYOUT_BP 10000
/* Most places one payout table pays (a tier's length, the default curve's cap). */
#define TOUR_PAYOUT_MAX_PLACES 100000
/* An item prize (docs/tournaments.md "Payouts", "Items"): a string the studio defines, 1..64
 * characters of [A-Za-z0-9_.:-], at most TOUR_PAYOUT_MAX_ITEMS places given one. */
#define TOUR_ITEM_MAX 64
#define TOUR_PAYOUT_MAX_ITEMS 100

/* One row of an operator's payout chart: from min_entrants to max_entrants (inclusive) the
 * places 1..nplaces get shares_bp[0..nplaces-1], non-increasing, summing to TOUR_PAYOUT_BP. */
typedef struct {
    uint32_t min_entrants;
    uint32_t max_entrants;
    uint32_t nplaces;
    uint32_t *shares_bp; /* owned by the config (tour_structure_destroy frees it) */
} tour_payout_tier_t;

/* An item given to the player (or each tied player) of a place, beside its chips or alone. */
typedef struct {
    uint32_t place; /* 1..TOUR_PAYOUT_MAX_PLACES */
    char item[TOUR_ITEM_MAX + 1];
} tour_payout_item_t;

/*
 * How a tournament pays. A tier covering the number of entrants wins; otherwise the default
 * curve: places paid = max(min_paid, ceil(entrants * percent_paid / 100)), at most entrants,
 * place i (1-based) weighing 1 / (i + 1) (docs/tournaments.md, "The default payout curve").
 */
typedef struct {
    uint32_t percent_paid; /* 1..100, default 15 */
    uint32_t min_paid;     /* default 1 */
    size_t ntiers;
    tour_payout_tier_t *tiers; /* sorted by min_entrants, not overlapping */
    size_t nitems;
    tour_payout_item_t *items; /* sorted by place, one per place (tour_structure_destroy frees) */
} tour_payout_config_t;

/* The default: 15 % paid, at least 1 place, no tier. */
tour_payout_config_t tour_payout_config_default(void);

/*
 * The prize pool: buy_in x entries (each re-entry is one more entry; fees are never in the
 * pool), raised to guarantee when that is larger (the house adds the overlay). guarantee 0 =
 * none. Returns 0, -EINVAL (negative input) or -EOVERFLOW.
 */
int tour_payout_pool(int64_t buy_in, uint32_t entries, int64_t guarantee, int64_t *pool);

/* Whether s[0..len) is a valid item string: 1..TOUR_ITEM_MAX characters of [A-Za-z0-9_.:-]
 * (no space, quote or control character: it travels in log lines and JSON as it is). */
bool tour_payout_item_valid(const char *s, size_t len);

/* The item of a place (a tied group's shared best place: each of them gets it), or NULL when the
 * config gives none. Independent of the places paid in chips: a place may get an item alone. */
const char *tour_payout_item(const tour_payout_config_t *c, uint32_t place);

/* How many places the config pays for `entrants` entries (>= 1); 0 when entrants is 0. */
uint32_t tour_payout_places(const tour_payout_config_t *c, uint32_t entrants);

/*
 * The payout table: prizes[i] is place i+1's prize. The shares (tier or default curve) are
 * applied with floor(pool x share / total); the chips left over (fewer than the places paid)
 * go one each to places 1, 2, 3... so the table stays non-increasing and sums to pool exactly.
 * *nplaces receives the places paid. Returns 0, -EINVAL (pool < 0, entrants 0, a tier whose
 * shares sum to 0), -ENOSPC (cap < places paid).
 */
int tour_payout_table(const tour_payout_config_t *c, uint32_t entrants, int64_t pool,
                      int64_t *prizes, size_t cap, size_t *nplaces);

/* A player busted in a hand: his stack when that hand began, and the order in which he gets
 * an odd chip of a shared prize (lower first; the director passes the entry number). */
typedef struct {
    uint64_t player;
    int64_t start_stack; /* > 0 */
    uint64_t tiebreak;
} tour_bust_t;

/* What a player is awarded: his finishing place (players tied share the best of their
 * places) and his prize. */
typedef struct {
    uint64_t player;
    uint32_t place;
    int64_t amount;
} tour_award_t;

/*
 * Places of the n players busted in one hand (hand-for-hand: in the same hand on any table;
 * TDA "Players busted in the same hand"). They take places best_place .. best_place + n - 1,
 * where best_place is the number of players left after the hand + 1. The bigger stack at the
 * start of the hand finishes higher; players with equal starting stacks tie: they share the
 * best of their places and split the sum of those places' prizes equally, the odd chips one
 * each in ascending tiebreak (then player id). A place beyond nplaces pays 0. out[] follows
 * the finishing order (best first). Returns 0, -EINVAL (n == 0, best_place == 0, a stack
 * <= 0, a negative prize, a duplicate player) or -EOVERFLOW (prizes summing beyond int64_t).
 */
int tour_payout_busts(const int64_t *prizes, size_t nplaces, uint32_t best_place,
                      const tour_bust_t *busted, size_t n, tour_award_t *out);

/* A player still in when a tournament is cancelled. */
typedef struct {
    uint64_t player;
    int64_t chips;       /* > 0 */
    int64_t buyins_paid; /* his buy-ins (and re-entries) paid into the pool, fees excluded */
} tour_survivor_t;

/*
 * The cancellation split (docs/tournaments.md, "Cancelling a tournament") among the n players
 * still in. prizes/nplaces: the payout table; pool: the prize pool.
 *
 *   before the money (n > nplaces): each gets his buyins_paid back; what is left of the pool
 *   (the busted players' buy-ins and any overlay) is split half equally (floor(rest / 2)),
 *   half (the other ceil) in proportion to chips. Total = pool.
 *   in the money (n <= nplaces): each gets prize[n] (the smallest prize not yet awarded);
 *   the rest of places 1..n's prizes is split in proportion to chips. Total = the sum of
 *   prizes 1..n.
 *
 * An equal split gives floor(x / n) each and the odd chips one each to the biggest stacks
 * (ties: input order); a split by chips gives floor(x * chips / total) each and the odd chips
 * to the largest remainders (ties: bigger stack, then input order). amounts[i] is survivors[i]'s
 * (input order). Returns 0, -EINVAL (n == 0, chips <= 0, negative buyins, refunds above the
 * pool, a prize table that is not non-increasing) or -EOVERFLOW.
 */
int tour_payout_cancel(const int64_t *prizes, size_t nplaces, int64_t pool,
                       const tour_survivor_t *survivors, size_t n, int64_t *amounts);

/*
 * The cancellation of a running match (docs/tournaments.md "Match halls: cancelling a running
 * match"): a match pays only at its end, so nobody still in holds a place yet. Each of the n
 * players still in gets his buyins_paid back, and the rest of the pool (the buy-ins of the
 * players already out and any overlay) is split equally: floor(rest / n) each, the odd chips
 * one each in input order (the director lists them by entry number: who registered first).
 * chips is not used. Total = pool. amounts[i] is survivors[i]'s. Returns 0, -EINVAL (n == 0,
 * a negative pool or buy-in, refunds above the pool) or -EOVERFLOW.
 */
int tour_payout_cancel_match(int64_t pool, const tour_survivor_t *survivors, size_t n,
                             int64_t *amounts);

#endif
