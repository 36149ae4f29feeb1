/*
 * zjh -- Zha Jin Hua (three-card brag): hand ranking and one table's hand as a pure state
 * machine.
 *
 * The table knows the seats dealt into the current hand, their stacks, the cards and the
 * betting; it knows nothing about clocks, sockets or money outside the stacks it was given. A
 * caller (the game server's adapter, a test) starts each hand with the stacks of the players
 * and the deck order to use, feeds one input at a time and receives events through a callback
 * plus a settlement at the end of the hand. Same inputs, same outputs. Rules, exactly as
 * implemented: docs/rules/zhajinhua.md.
 *
 * Every input is validated first; a refused input returns a negative zjh_err_t, leaves the
 * table exactly as it was and emits nothing. Chips are int64_t integers.
 *
 * Cards use the project's wire code (proto/frame.h FRAME_CARD): code = rank << 2 | suit, rank
 * 2..14 (J 11, Q 12, K 13, A 14), suit 0 clubs, 1 diamonds, 2 hearts, 3 spades. Text form: a
 * rank character (2-9, T, J, Q, K, A) and a suit character (c, d, h, s), e.g. "AsKd2c".
 *
 * Not thread-safe: one table belongs to one thread (the desk's worker).
 */
#ifndef CROUPIER_ZJH_H
#define CROUPIER_ZJH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZJH_MAX_SEATS 6
#define ZJH_DECK_CARDS 52
#define ZJH_HAND_CARDS 3

/* ---- cards ------------------------------------------------------------------------------ */

#define ZJH_CARD(rank, suit) ((uint8_t)(((rank) << 2) | (suit)))
#define ZJH_CARD_RANK(code) ((code) >> 2)
#define ZJH_CARD_SUIT(code) ((code)&3)

/* True for the 52 codes of a standard deck (rank 2..14, any suit). */
bool zjh_card_valid(uint8_t code);
/* Parses one card ("As", "Td"); returns its code, or -1. */
int zjh_card_parse(const char *s);
/*
 * Parses a string of cards with no separators ("AsKd2c"); spaces between cards are allowed.
 * Writes at most max codes to out. Returns the number of cards, or -1 if the text is not
 * well-formed, holds a card twice or more than max cards.
 */
int zjh_cards_parse(const char *s, uint8_t *out, int max);
/*
 * Writes the text form of n cards ("AsKd2c") to buf, NUL-terminated. Needs 2 * n + 1 bytes;
 * returns the length written, or -1 if buf is too small or a code is invalid (buf then holds
 * an empty string when len > 0).
 */
int zjh_cards_format(const uint8_t *cards, int n, char *buf, size_t len);

/* ---- hand ranking ----------------------------------------------------------------------- */

typedef enum {
    ZJH_CAT_INVALID = -1, /* not three distinct valid cards */
    ZJH_CAT_HIGH_CARD = 0,
    ZJH_CAT_PAIR = 1,
    ZJH_CAT_STRAIGHT = 2,
    ZJH_CAT_FLUSH = 3,
    ZJH_CAT_STRAIGHT_FLUSH = 4,
    ZJH_CAT_THREE_OF_A_KIND = 5,
} zjh_category_t;

/*
 * The rank of a three-card hand. value orders hands in the normal order (bigger = better),
 * across categories too: value = category * 1000000 + r1 * 10000 + r2 * 100 + r3, where r1..r3
 * are the ranks that decide ties, most important first:
 *   three of a kind: the rank three times;
 *   straight, straight flush: the ranks from the top card down, the ace of A-2-3 counting 1
 *     (A-2-3 is 30201, the lowest; Q-K-A is 141312, the highest);
 *   flush, high card: the ranks from high to low;
 *   pair: the pair's rank twice, then the kicker.
 * Suits never count. beats_trips is true for 2-3-5 of three different suits (a plain high
 * card, the lowest one, that beats three of a kind in zjh_compare()).
 */
typedef struct {
    zjh_category_t category;
    int32_t value; /* 0 for ZJH_CAT_INVALID */
    bool beats_trips;
} zjh_rank_t;

/* Ranks three cards; category ZJH_CAT_INVALID unless they are three distinct valid codes. */
zjh_rank_t zjh_rank(const uint8_t cards[ZJH_HAND_CARDS]);
/*
 * Compares two ranked hands: > 0 if a is better, 0 if they tie, < 0 if b is better. The normal
 * order by value, except that a 2-3-5 of three different suits beats three of a kind.
 */
int zjh_rank_compare(zjh_rank_t a, zjh_rank_t b);
/* zjh_rank_compare() of two hands of three cards each (both must be valid). */
int zjh_compare(const uint8_t a[ZJH_HAND_CARDS], const uint8_t b[ZJH_HAND_CARDS]);
/* "three_of_a_kind", "straight_flush", "flush", "straight", "pair", "high_card", "invalid". */
const char *zjh_category_name(zjh_category_t cat);

/* ---- the table -------------------------------------------------------------------------- */

typedef enum {
    ZJH_OK = 0,
    ZJH_E_BAD_ARGS = -1,          /* bad seat number, action, stack, deck, dealer or config */
    ZJH_E_NO_HAND = -2,           /* no hand is being played */
    ZJH_E_OUT_OF_TURN = -3,       /* not this seat's turn (every action but LOOK) */
    ZJH_E_RAISE_OVER_CAP = -4,    /* raise to a unit above cfg.max_unit */
    ZJH_E_RAISE_NOT_HIGHER = -5,  /* raise to a unit not above the current one */
    ZJH_E_COMPARE_TOO_EARLY = -6, /* compare in the first betting round */
    ZJH_E_COMPARE_TARGET = -7,    /* compare with self, an empty or folded seat */
    ZJH_E_ALREADY_LOOKED = -8,    /* second look */
    ZJH_E_OVER_STACK = -9,        /* a raise that costs more than the stack */
    ZJH_E_NOT_LIVE = -10,         /* look by a seat that is not dealt in or is out */
    ZJH_E_IN_HAND = -11,          /* start_hand while a hand is being played */
} zjh_err_t;

/* A short name for an error code ("out of turn", ...). */
const char *zjh_err_name(int err);

typedef struct {
    int seats;             /* 2..ZJH_MAX_SEATS */
    int64_t ante;          /* > 0; also the first bet unit */
    int64_t max_unit;      /* >= ante: the highest unit a raise may reach (blind terms) */
    int max_rounds;        /* >= 2: betting rounds before the forced showdown */
    int rake_basis_points; /* 0..10000: rake in 1/10000 of the pot; 0 = none */
    int64_t rake_cap;      /* most rake per hand; 0 = no cap */
    int64_t action_ms;     /* >= 0: the turn time, carried for the adapter (the table has no
                              clock; the adapter calls ZJH_TIMEOUT) */
} zjh_config_t;

typedef enum {
    ZJH_FOLD = 0,
    ZJH_CALL = 1,    /* pay the unit (twice if looked); all-in call when the stack is short */
    ZJH_RAISE = 2,   /* arg = the new unit; pay it (twice if looked) */
    ZJH_COMPARE = 3, /* arg = the target seat; pay the call amount; round >= 2 */
    ZJH_LOOK = 4,    /* look at the own cards: any time, any live seat, once */
    ZJH_TIMEOUT = 5, /* the turn timer expired: the player folds */
} zjh_action_t;

typedef enum {
    ZJH_EV_HAND_START, /* seat = dealer; amount = hand number */
    ZJH_EV_ANTE,       /* seat posted amount */
    ZJH_EV_DEAL,       /* seat was dealt cards[0] (private: the adapter shows them to the player
                          only after their ZJH_EV_LOOK) */
    ZJH_EV_LOOK,       /* seat looked (public); cards[0] = its cards (private to the seat) */
    ZJH_EV_FOLD,       /* seat folded; timed_out when through ZJH_TIMEOUT */
    ZJH_EV_CALL,       /* seat paid amount at unit; all_in when it was the whole stack and
                          short of the call (an ZJH_EV_ALL_IN follows) */
    ZJH_EV_RAISE,      /* seat paid amount; unit = the new unit */
    ZJH_EV_COMPARE,    /* seat (asker) against target, loser lost (and is out); amount = chips
                          the asker paid (0 in an all-in call's compares); cards[0] = the
                          asker's, cards[1] = the target's hand, value[0..1] their values.
                          Private to the two seats. all_in: an all-in compare or part of an
                          all-in call */
    ZJH_EV_ALL_IN,     /* the all-in call of seat is decided: detail = 1 it beat every live
                          player (it takes the pot), 0 it lost (it is out) */
    ZJH_EV_ROUND,      /* a betting round began: detail = its number (2, 3, ...) */
    ZJH_EV_TURN,       /* seat must act: amount = cost of a call or compare (the whole stack,
                          all_in, when it is short), unit; to / max = the lowest / highest unit
                          it may raise to (0, 0 = no raise); detail = 1 if it may compare.
                          Emitted again when the seat to act looks (its costs double) */
    ZJH_EV_SHOWDOWN,   /* the forced showdown shows seat's cards[0], value[0] (public) */
    ZJH_EV_RAKE,       /* amount taken from the pot */
    ZJH_EV_AWARD,      /* seat wins amount */
    ZJH_EV_HAND_END,   /* amount = hand number */
} zjh_event_kind_t;

typedef struct {
    zjh_event_kind_t kind;
    int seat;   /* -1 when about no seat */
    int target; /* ZJH_EV_COMPARE: the target; else -1 */
    int loser;  /* ZJH_EV_COMPARE: the seat that lost; else -1 */
    int detail;
    bool timed_out;
    bool all_in;
    int64_t amount;
    int64_t unit;
    int64_t to;
    int64_t max;
    int32_t value[2];
    uint8_t cards[2][ZJH_HAND_CARDS];
} zjh_event_t;

/* Receives every event in order; the event is only valid during the call. */
typedef void (*zjh_event_cb)(void *ud, const zjh_event_t *ev);

/* One seat's state in the current (or last) hand. */
typedef struct {
    bool dealt;     /* dealt into the hand */
    int64_t stack;  /* chips not put in */
    int64_t put_in; /* chips put in this hand, ante included */
    bool looked;    /* false = still playing blind */
    bool folded;    /* out of the hand: folded, timed out, lost a compare or an all-in call */
    bool all_in;    /* has put its whole stack in */
} zjh_seat_t;

/* What the seat to act may do now (zjh_table_turn()). */
typedef struct {
    int seat;         /* -1 when nobody is to act */
    int64_t cost;     /* chips a call or compare puts in (the whole stack when short) */
    bool all_in;      /* the stack is short of the call: a call or compare is all-in */
    int64_t min_unit; /* lowest unit a raise may name; 0 when no raise is possible */
    int64_t max_unit; /* highest unit a raise may name (cap and stack); 0 = no raise */
    bool can_compare; /* round >= 2 */
} zjh_turn_t;

/* The result of the last finished hand. Deltas sum to minus the rake, always. */
typedef struct {
    uint64_t hand;
    int64_t delta[ZJH_MAX_SEATS]; /* chips won minus chips put in */
    int64_t rake;
    bool dealt[ZJH_MAX_SEATS];
} zjh_settlement_t;

typedef struct zjh_table zjh_table_t;

/*
 * Creates a table. Returns NULL (and sets *err to ZJH_E_BAD_ARGS when err is not NULL) if the
 * config is invalid. cb may be NULL (no events). The caller owns the table.
 */
zjh_table_t *zjh_table_create(const zjh_config_t *cfg, zjh_event_cb cb, void *ud, int *err);
/* Frees the table; NULL is a no-op. */
void zjh_table_destroy(zjh_table_t *t);
/* A copy with the same state, callback and user data (for what-if checks and tests). */
zjh_table_t *zjh_table_clone(const zjh_table_t *t);
/* 1 if two tables hold the same state (byte for byte), else 0. */
int zjh_table_same_state(const zjh_table_t *a, const zjh_table_t *b);

/*
 * Starts a hand. dealer is the dealer's (button) seat, 0..seats-1 (it need not be dealt in).
 * stacks[s] > 0 deals seat s in with that stack, 0 leaves it out; every stack given must be at
 * least the ante, and at least two seats must play. deck[0..ncards) is the card order the
 * caller chose (it shuffles; tests stack decks): at least 3 per player, at most 52, distinct
 * valid codes. Cards go one at a time round the table from the seat left of the dealer, three
 * times. Posts the antes, deals and asks the first seat left of the dealer to act.
 * Returns ZJH_OK, ZJH_E_IN_HAND or ZJH_E_BAD_ARGS (nothing changed).
 */
int zjh_table_start_hand(zjh_table_t *t, int dealer, const int64_t stacks[ZJH_MAX_SEATS],
                         const uint8_t *deck, int ncards);

/*
 * One input from seat: an action of zjh_action_t; arg is the new unit for ZJH_RAISE, the
 * target seat for ZJH_COMPARE and ignored otherwise. Returns ZJH_OK or a negative zjh_err_t
 * (the table unchanged, no event).
 */
int zjh_table_act(zjh_table_t *t, int seat, zjh_action_t action, int64_t arg);

/* True while a hand is being played. */
bool zjh_table_in_hand(const zjh_table_t *t);
/* The seat to act, or -1. */
int zjh_table_to_act(const zjh_table_t *t);
/* Fills *out with what the seat to act may do (out->seat = -1 when nobody is). */
void zjh_table_turn(const zjh_table_t *t, zjh_turn_t *out);
/* The current bet unit (blind terms). */
int64_t zjh_table_unit(const zjh_table_t *t);
/* Chips put in during the current hand (all of the last hand's once it ended). */
int64_t zjh_table_pot(const zjh_table_t *t);
/* The betting round, 1..max_rounds (0 before the first hand). */
int zjh_table_round(const zjh_table_t *t);
/* The dealer seat of the current or last hand (-1 before the first). */
int zjh_table_dealer(const zjh_table_t *t);
/* The number of the current or last hand (1, 2, ...; 0 before the first). */
uint64_t zjh_table_hand_no(const zjh_table_t *t);
/* The table's config. */
const zjh_config_t *zjh_table_config(const zjh_table_t *t);
/* Fills *out with a seat's state; ZJH_E_BAD_ARGS for a seat number out of range. */
int zjh_table_seat(const zjh_table_t *t, int seat, zjh_seat_t *out);
/*
 * Copies a dealt seat's three cards to out, looked or not (the adapter decides who sees them).
 * ZJH_E_BAD_ARGS for a bad seat number, ZJH_E_NOT_LIVE for a seat not dealt in, ZJH_E_NO_HAND
 * before the first hand.
 */
int zjh_table_cards(const zjh_table_t *t, int seat, uint8_t out[ZJH_HAND_CARDS]);
/* All rake taken since the table was created. */
int64_t zjh_table_rake_total(const zjh_table_t *t);
/* The settlement of the last finished hand; ZJH_E_NO_HAND before the first one ended. */
int zjh_table_settlement(const zjh_table_t *t, zjh_settlement_t *out);

#endif
