/*
 * tour_table -- the servers' side of the director's table protocol (docs/tournaments.md "Tables
 * at the servers"): a game server finds the tables of running tournaments that nobody hosts and
 * claims them, keeps its claims alive, asks the director whether a table may deal (`deal`) and
 * reports every hand's result (`hand`), and lets a table go.
 *
 * Keys (tour_director.h lists the director's; this module adds one per table; on a Redis
 * Cluster they are {croupier:money}:tour:<id>:<what>, common/keytag.h):
 *
 *   {croupier:tour:<id>}:host:<table>   the host's token (PX = the claim's TTL): the server
 *                                       playing the table. Claimed with SET NX, renewed and
 *                                       released by compare-and-set scripts, so only the holder
 *                                       renews or releases it.
 *   {croupier:tour:<id>}:where          hash table -> where it is played, JSON {"host","server",
 *                                       "epoch","desk","engine","game","stake"} (server: the
 *                                       registry id "<service>:<slot>", epoch its lease epoch):
 *                                       written by a host's table desk with its first deal, read by
 *                                       the gateway to send a player to his table
 *                                       (TakeTournamentSeat, docs/protocol.md "Tournaments").
 *
 * A token is "<prefix>.<random hex>" ([A-Za-z0-9_.:-], at most TOUR_HOST_MAX), new for every
 * claim: the director deals a hand to one token, and a result from any other is refused
 * (NOT_HOST), so a host that lost its claim (frozen, cut off) can never record a hand that
 * another host re-dealt.
 *
 * Requests go to the tournament's stream with the request ids "<token>.d<hand>.<attempt>" and
 * "<token>.h<hand>.<attempt>": asking again after a lost answer (the same id) is answered from
 * the director's record of the first answer, never applied twice; a table told WAIT asks again
 * under the next attempt number (else it would get the same WAIT back forever).
 *
 * Threads: none of its own. Every call blocks on the redisContext it is given (a game server
 * calls them from a jobs thread, money/jobs.h); the parsers are pure.
 */
#ifndef CROUPIER_TOUR_TABLE_H
#define CROUPIER_TOUR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "tour_play.h"
#include "tour_structure.h"

/* A table this server claimed (tour_table_scan). */
typedef struct {
    uint64_t tournament;
    uint32_t table;
    uint32_t seats; /* seats_per_table of its structure */
    char game[16];  /* the game its tables play: "holdem", or a match's ("doudizhu", ...) */
    char host[TOUR_HOST_MAX + 1];
} tour_claim_t;

/*
 * Looks over the running tournaments for open tables with no host and claims up to max of them
 * (SET NX PX ttl_ms) under new tokens "<prefix>.<random>", in each tournament only while this
 * server (its tokens start with "<prefix>.") hosts fewer of its open tables than its share: the
 * open tables over the ready servers of engine in the registry, rounded up -- so servers share a
 * tournament's tables instead of the fastest taking them all. Tables of more than max_seats
 * seats are left to others (*skipped counts them).
 * Returns the number claimed (0..max), or -EIO when Redis failed (claims made before the failure
 * are returned in out all the same: *n).
 */
int tour_table_scan(redisContext *c, const char *prefix, const char *engine, int ttl_ms,
                    uint32_t max_seats, tour_claim_t *out, size_t max, size_t *n, size_t *skipped);

/* Renews a claim: 1 held (TTL ttl_ms again), 0 lost (another token holds it, or none), -EIO. */
int tour_table_renew(redisContext *c, uint64_t tournament, uint32_t table, const char *host,
                     int ttl_ms);
/* Writes where the table is played (the JSON above) into the `where` hash: 0, or -EIO. */
int tour_table_locate(redisContext *c, uint64_t tournament, uint32_t table, const char *where);
/* Lets a claim go (deleted only if host still holds it): 0, or -EIO. */
int tour_table_release(redisContext *c, uint64_t tournament, uint32_t table, const char *host);

/* Whether the tournament is over (finished, cancelled, or gone): 1 over, 0 not, -EIO. A host
 * asks at every renew, so a cancellation stops the deal in play at once (docs/tournaments.md
 * "Match halls: cancelling a running match"). */
int tour_table_over(redisContext *c, uint64_t tournament);

/*
 * The hand a table is to ask for next, from the director's table record: the hand in play when
 * one is (a re-deal: its host voided it or lost the table), else the next. *closed when the
 * director closed the table (or it does not exist). 0, or -EIO.
 */
int tour_table_next_hand(redisContext *c, uint64_t tournament, uint32_t table, uint64_t *hand,
                         bool *closed);

/*
 * Sends a request of a table to the director and waits up to wait_ms for its answer: op "deal"
 * (result and record NULL) or "hand" (result "PLAYER:STACK,...", record the hand's history
 * record or NULL: the director writes it with the stacks, docs/tournaments.md). Returns 0 with
 * *answer (the director's JSON answer, a new reference), -ETIMEDOUT (no answer yet: ask again, the
 * same request id makes it safe), -ESHUTDOWN (the tournament is over: nobody reads its requests),
 * or -EIO.
 */
int tour_table_ask(redisContext *c, uint64_t tournament, const char *op, uint32_t table,
                   uint64_t hand, uint32_t attempt, const char *host, const char *result,
                   const char *record, int wait_ms, json_t **answer);

/* A deal answer (code OK), parsed. */
typedef struct {
    int seat;
    uint64_t player;
    int64_t stack; /* hold'em: the chips; a match: 0 */
    int64_t score; /* a match: the player's stage score before the deal */
    bool dealt;
} tour_deal_seat_t;

typedef struct {
    uint32_t table, level;
    uint64_t hand;
    int64_t small_blind, big_blind, ante;
    bool big_blind_ante;
    int button, sb, bb; /* seats; button and sb may be empty (dead) */
    /* A match's deal (docs/tournaments.md "Match halls: the director", `deal`): scored, no
     * blinds; every seat is dealt in. */
    bool scored;
    char game[16];
    char format[8]; /* "rising", "fixed" or "swiss" */
    uint32_t stage, round;
    uint64_t deal;
    int64_t base;  /* the deal's base score: a result of r units moves the score by r x base */
    char seed[24]; /* a duplicate Swiss round's deal seed (decimal), else "" */
    size_t nseats;
    tour_deal_seat_t seats[TOUR_MAX_SEATS];
} tour_deal_t;

/* Parses an OK deal answer, hold'em's or (with a "format") a match's; 0, or -EINVAL (a field
 * missing or out of range for seats). */
int tour_deal_parse(const json_t *answer, uint32_t seats, tour_deal_t *out);

/* Who leaves a table after a hand (from an OK hand answer): the players it busted (out) and
 * those the director moved from it to another table. */
typedef struct {
    uint64_t player;
    bool busted; /* else moved */
    uint32_t place, to_table;
    int64_t prize;
} tour_leaver_t;

/* The leavers of table (at most max; more are dropped). Returns their number. */
size_t tour_hand_leavers(const json_t *answer, uint32_t table, tour_leaver_t *out, size_t max);

/* A match's OK hand answer, for the players seated at its table (seated[0..n)): out[i] when
 * seated[i] is out of the match (`out`: the answer lists every player out after the deal, at
 * any table; places come with the match's end), stays[i] when he plays the table's next deal
 * (`next`; the others wait to be re-paired). Returns 0, or -EINVAL (not such an answer). */
int tour_match_hand_parse(const json_t *answer, const uint64_t *seated, size_t n, bool *out,
                          bool *stays);

#endif
