/*
 * niuniu -- Niu Niu (斗牛, banker version): hand evaluation, comparison, the payout
 * multipliers, the choice of the banker and the settlement of one round against the banker, as
 * pure functions.
 *
 * No I/O, no clock, no randomness of its own: a random number is an argument, time limits are
 * configuration numbers the caller (the game's adapter) enforces. Same inputs, same outputs.
 * Rules, exactly as implemented: docs/rules/niuniu.md (the section names in comments below are
 * that document's).
 *
 * Every function validates its input first; a refused input returns -EINVAL and writes nothing
 * but what the function documents. Chips are int64_t integers.
 *
 * Cards use the project's wire code (proto/frame.h FRAME_CARD, common/cardtext.h):
 * code = rank << 2 | suit, rank 2..14 (J 11, Q 12, K 13, A 14), suit 0 clubs, 1 diamonds,
 * 2 hearts, 3 spades. Valid codes are the bytes 8..59. Text form "AsKd2cTh9h" (cardtext.h).
 *
 * Thread-safe (no state).
 */
#ifndef CROUPIER_NIUNIU_H
#define CROUPIER_NIUNIU_H

#include <stdbool.h>
#include <stdint.h>

#define NIUNIU_HAND_CARDS 5
#define NIUNIU_DECK_CARDS 52
#define NIUNIU_MAX_SEATS 10 /* 52 cards, five each */
/* The range of the banker draw's rnd (niuniu_banker_bid(), niuniu_banker_rotate()): 2520 =
 * lcm(1..NIUNIU_MAX_SEATS), so an rnd uniform in [0, NIUNIU_DRAW_RANGE) makes rnd % count
 * exactly uniform for every count of seats (the engine draws it so, deck_uniform(): no modulo
 * bias, docs/fairness.md "The scaling"). */
#define NIUNIU_DRAW_RANGE 2520
#define NIUNIU_MAX_BET_OPTIONS 8
#define NIUNIU_MAX_BID 10
#define NIUNIU_MAX_MULT 100
/* Stakes and stacks above this are refused, so that no product or sum can overflow. */
#define NIUNIU_MAX_CHIPS (INT64_MAX / 65536)

/* ---- hands ("Hand categories") ---------------------------------------------------------- */

/* The categories, low to high; the value is the index of the multiplier table. */
typedef enum {
    NIUNIU_INVALID = -1,
    NIUNIU_NO_NIU = 0,
    NIUNIU_NIU_1 = 1, /* niu N (N = 1..9) is category N */
    NIUNIU_NIU_2 = 2,
    NIUNIU_NIU_3 = 3,
    NIUNIU_NIU_4 = 4,
    NIUNIU_NIU_5 = 5,
    NIUNIU_NIU_6 = 6,
    NIUNIU_NIU_7 = 7,
    NIUNIU_NIU_8 = 8,
    NIUNIU_NIU_9 = 9,
    NIUNIU_NIU_NIU = 10,
    NIUNIU_FIVE_FACES = 11,
    NIUNIU_BOMB = 12,
    NIUNIU_FIVE_SMALL = 13,
} niuniu_category_t;

#define NIUNIU_CATEGORIES 14

/* One evaluated hand of five cards. */
typedef struct {
    niuniu_category_t category;
    bool has_niu;    /* three of the cards sum to a multiple of 10 (J, Q, K count 10, A 1) */
    uint8_t niu[3];  /* when has_niu: those three cards (the first such three, see "Splits") */
    uint8_t rest[2]; /* when has_niu: the other two */
    int points;      /* when has_niu: the sum of rest mod 10 (0 = niu niu); else -1 */
    uint8_t top;     /* the highest card: rank K..A (the ace lowest), then suit s > h > c > d */
    int32_t key;     /* orders hands: category * 256 + the top card's order (4..55) */
} niuniu_hand_t;

/* The points of a card (A 1, 2..10 their rank, J Q K 10); 0 for an invalid code. */
int niuniu_card_points(uint8_t code);
/* The order of a card for ties: rank (A 1 .. K 13) * 4 + suit (d 0, c 1, h 2, s 3); 0 when
 * invalid. Spades > hearts > clubs > diamonds, which is not the wire code's suit order. */
int niuniu_card_order(uint8_t code);

/*
 * Evaluates n cards into *out. n must be NIUNIU_HAND_CARDS and the cards distinct valid codes;
 * otherwise returns -EINVAL and out->category is NIUNIU_INVALID (when out is not NULL). The
 * card order given does not matter: the same five cards in any order give the same *out.
 * Returns 0.
 */
int niuniu_eval(const uint8_t *cards, int n, niuniu_hand_t *out);
/* > 0 if a is stronger, < 0 if b is, 0 if they tie (only when both have the same top card,
 * which two hands of one deal never have). Both must come from niuniu_eval(). */
int niuniu_compare(const niuniu_hand_t *a, const niuniu_hand_t *b);
/* "five_small", "bomb", "five_faces", "niu_niu", "niu_9" .. "niu_1", "no_niu", "invalid". */
const char *niuniu_category_name(niuniu_category_t cat);

/* ---- configuration ("Configuration") ---------------------------------------------------- */

typedef enum {
    NIUNIU_BANKER_BID = 0,    /* everyone bids for the banker each round (抢庄) */
    NIUNIU_BANKER_ROTATE = 1, /* the banker passes clockwise each round */
} niuniu_banker_mode_t;

typedef struct {
    int seats;                               /* 2..NIUNIU_MAX_SEATS; default 6 */
    int64_t stake;                           /* > 0: the base stake in chips; default 10 */
    int nbet_options;                        /* 1..NIUNIU_MAX_BET_OPTIONS; default 5 */
    int bet_options[NIUNIU_MAX_BET_OPTIONS]; /* bets in stakes, rising, >= 1; default 1..5 */
    niuniu_banker_mode_t banker_mode;        /* default NIUNIU_BANKER_BID */
    int max_bid;                             /* 1..NIUNIU_MAX_BID; default 4 */
    int mult[NIUNIU_CATEGORIES]; /* per category, 1..NIUNIU_MAX_MULT, never falling as the
                                    category rises; default 1 x7, 2 x3, 3, 4, 5, 5 */
    int64_t bank_min_stakes;     /* >= 0: stack (in stakes) needed to be banker; default 100 */
    int cards_before_bid;        /* 0..5: cards seen before bidding; default 4 */
    int64_t bid_ms;              /* >= 0: the bid window; default 8000 */
    int64_t bet_ms;              /* >= 0: the bet window; default 8000 */
    int64_t show_ms;             /* >= 0: the show window; default 10000 */
} niuniu_config_t;

/* Fills *cfg with the defaults of docs/rules/niuniu.md "Configuration". */
void niuniu_config_default(niuniu_config_t *cfg);
/* 0 if *cfg is valid, else -EINVAL. */
int niuniu_config_check(const niuniu_config_t *cfg);
/* The multiplier of a category under cfg (1..NIUNIU_MAX_MULT); -EINVAL for an invalid one. */
int niuniu_multiplier(const niuniu_config_t *cfg, niuniu_category_t cat);
/* The largest multiplier of cfg's table (that of five small when the table is valid). */
int niuniu_max_multiplier(const niuniu_config_t *cfg);

/* ---- the banker ("The banker") ---------------------------------------------------------- */

/* Whether a stack may bank under cfg: stack >= bank_min_stakes * stake. */
bool niuniu_may_bank(const niuniu_config_t *cfg, int64_t stack);

/*
 * The bid-for-banker result. bids[s]: -1 seat s is not in the round, 0 it did not bid (also
 * its default move), 1..cfg->max_bid its bid. stacks[s]: the seats' stacks (those in the round
 * must be > 0). A seat bidding > 0 must be able to bank (niuniu_may_bank()). The highest bid
 * banks with that bid as the round's multiplier; equal highest bids are split by rnd: the
 * (rnd % count)-th of them in seat order (uniform when rnd is uniform in [0, NIUNIU_DRAW_RANGE)). With no bid, a seat that may bank is drawn the same
 * way among all such seats in the round, multiplier 1. Needs two seats in the round.
 * Returns 0 and sets *banker and *mult; -ENOENT when no seat in the round may bank (no round);
 * -EINVAL for bad input.
 */
int niuniu_banker_bid(const niuniu_config_t *cfg, const int bids[NIUNIU_MAX_SEATS],
                      const int64_t stacks[NIUNIU_MAX_SEATS], uint32_t rnd, int *banker, int *mult);

/*
 * The rotating banker. in[s]: seat s is in the round; stacks[s] as above. prev: the last
 * round's banker, or -1 for the first round (then a seat that may bank is drawn by rnd, as in
 * niuniu_banker_bid()). Otherwise the first seat clockwise after prev (prev itself last) that is
 * in the round and may bank. The multiplier is always 1. Returns 0 and sets *banker; -ENOENT
 * when no seat may bank; -EINVAL for bad input.
 */
int niuniu_banker_rotate(const niuniu_config_t *cfg, int prev, const bool in[NIUNIU_MAX_SEATS],
                         const int64_t stacks[NIUNIU_MAX_SEATS], uint32_t rnd, int *banker);

/*
 * Whether a player with stack may bet bet_stakes (in stakes) against a banker who won the bid
 * at mult: the bet is one of cfg's options and its worst loss, bet * stake * mult * the
 * largest multiplier, is covered by the stack.
 */
bool niuniu_bet_allowed(const niuniu_config_t *cfg, int64_t stack, int mult, int bet_stakes);
/* The default bet (a timeout, an away player): the smallest option, in stakes. */
int niuniu_default_bet(const niuniu_config_t *cfg);

/* ---- settlement ("Settlement") ---------------------------------------------------------- */

/* One round to settle. */
typedef struct {
    int banker;                      /* 0..cfg->seats-1 */
    int mult;                        /* the round's banker multiplier: 1..cfg->max_bid */
    int64_t stack[NIUNIU_MAX_SEATS]; /* every seat's stack before the round, banker's too */
    int64_t bet[NIUNIU_MAX_SEATS];   /* in chips; > 0 = a player in the round; banker's 0 */
    uint8_t cards[NIUNIU_MAX_SEATS][NIUNIU_HAND_CARDS]; /* the banker's and the players' */
} niuniu_round_t;

/* One transfer between a player and the banker. */
typedef struct {
    int seat;                   /* the player */
    bool player_won;            /* the player's hand beat the banker's */
    niuniu_category_t category; /* the winning hand's category (its multiplier applied) */
    int64_t owed;               /* bet * mult * the multiplier: what the loser owes */
    int64_t amount; /* what moved: owed, except for winners a short banker could not pay in
                       full (less, down to 0) */
} niuniu_transfer_t;

typedef struct {
    int n; /* transfers, one per player: the losers (player -> banker) clockwise from the
              banker's left, then the winners (banker -> player) strongest hand first */
    niuniu_transfer_t t[NIUNIU_MAX_SEATS - 1];
    int64_t delta[NIUNIU_MAX_SEATS]; /* per seat; they sum to 0 */
    bool banker_short;               /* some winner got less than owed */
} niuniu_settlement_t;

/*
 * Settles one round (docs/rules/niuniu.md "Settlement"): each player against the banker only.
 * Input: cfg valid; r->banker in range with bet 0 and stack >= 0; at least one player; every
 * player's bet one whose worst loss its stack covers (bet * mult * the largest multiplier <=
 * stack; the bet need not be an option: the caller checked that); the cards of the banker and
 * of every player valid and all distinct. Seats with bet 0 other than the banker are not in
 * the round (their cards are ignored). Returns 0 and fills *out, or -EINVAL.
 */
int niuniu_settle(const niuniu_config_t *cfg, const niuniu_round_t *r, niuniu_settlement_t *out);

#endif
