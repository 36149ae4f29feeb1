/*
 * holdem_table -- one no-limit Texas hold'em table as a pure state machine.
 *
 * The table knows seats, stacks, the button, the cards and the betting; it knows nothing about
 * clocks, sockets or money outside its stacks. A caller (the game server's desk, a replay
 * tool, a test) feeds it inputs -- seat changes between hands, holdem_table_start_hand() with
 * the deck order to use (or holdem_table_start_hand_at() with a tournament hand's positions),
 * and one player action at a time -- and receives events through a callback plus a
 * settlement at the end of each hand. Same inputs, same outputs: replays are exact. Rules:
 * docs/rules/holdem.md.
 *
 * Every input is validated first; a refused input returns a negative holdem_err_t and leaves
 * the table exactly as it was (and emits nothing). Chips are int64_t integers.
 *
 * Not thread-safe: one table belongs to one thread (the desk's worker).
 */
#ifndef CROUPIER_HOLDEM_TABLE_H
#define CROUPIER_HOLDEM_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#define HOLDEM_MAX_SEATS 9
#define HOLDEM_MAX_POTS (HOLDEM_MAX_SEATS + 1)

typedef enum {
    HOLDEM_OK = 0,
    HOLDEM_E_MALFORMED = -1,   /* bad seat number, unknown action, bad deck, bad config */
    HOLDEM_E_OUT_OF_TURN = -2, /* not this seat's turn */
    HOLDEM_E_BELOW_MIN = -3,   /* bet or raise below the minimum (and not all-in) */
    HOLDEM_E_OVER_STACK = -4,  /* more chips than the seat has */
    HOLDEM_E_NOT_ALLOWED = -5, /* not possible now: check facing a bet, raise not reopened... */
} holdem_err_t;

typedef struct {
    int seats;              /* 2..HOLDEM_MAX_SEATS */
    int64_t small_blind;    /* > 0 */
    int64_t big_blind;      /* >= small_blind */
    int64_t ante;           /* paid by every player dealt in; 0 = none */
    int64_t big_blind_ante; /* paid by the big blind alone, for the table; 0 = none */
    int64_t straddle;       /* the first straddle (under the gun); 0 = no straddles */
    int max_straddles;      /* straddles a hand may have: the first and its re-straddles, each
                               twice the one before, by the next seats in order; 0 = 1 */
    int straddle_position;  /* where the chain starts: 0 = under the gun; k = k seats later (a
                               Mississippi straddle; at the button a button straddle) */
    bool straddle_offers;   /* ask each seat in turn before the deal (a straddle offer, see
                               holdem_table_act()) instead of the seats' standing choices
                               (holdem_table_set_straddle()) */
    bool pokerkit_rules;    /* PokerKit's conventions where the house rules differ (replays of
                               PHH files, docs/rules/holdem.md "Replays (PHH)"): the minimum
                               raise over a straddle is the big blind; all-in raises reopen the
                               betting as PokerKit counts them; a short big blind is called for
                               what it posted and its ante comes first; equal blinds heads-up:
                               the big blind acts first; pots merged for the split, the odd
                               chips to the first winner */
    int64_t min_bet;        /* smallest opening bet; 0 = the big blind */
    int rake_basis_points;  /* rake per hand in 1/10000 of the pots; 0 = no rake (default) */
    int64_t rake_cap;       /* most rake per hand; 0 = no cap */
    bool no_flop_no_drop;   /* no rake on hands that end before the flop */
    int64_t action_ms;      /* time per action before the time bank is used */
    int64_t time_bank_ms;   /* each seat's time bank when it sits down */
} holdem_config_t;

typedef enum {
    HOLDEM_FOLD = 0,
    HOLDEM_CHECK = 1,
    HOLDEM_CALL = 2,
    HOLDEM_BET = 3,    /* amount = the seat's total bet for the street ("bet to") */
    HOLDEM_RAISE = 4,  /* amount = the seat's total bet for the street ("raise to") */
    HOLDEM_ALL_IN = 5, /* the whole stack: a call, bet or raise as the amount makes it */
    HOLDEM_TIMEOUT = 6 /* the player's time ran out: check if possible, else fold */
} holdem_action_kind_t;
/* A straddle offer (holdem_legal_t.straddle_offer) is answered with HOLDEM_BET (or HOLDEM_RAISE)
 * for exactly the offered amount (legal.min_to) or HOLDEM_ALL_IN to straddle, HOLDEM_CHECK or
 * HOLDEM_TIMEOUT to decline; a fold or a call is refused HOLDEM_E_NOT_ALLOWED. */

typedef enum {
    HOLDEM_POST_ANTE = 0,
    HOLDEM_POST_BB_ANTE = 1,
    HOLDEM_POST_SMALL_BLIND = 2,
    HOLDEM_POST_BIG_BLIND = 3,
    HOLDEM_POST_STRADDLE = 4,
} holdem_post_kind_t;

typedef enum {
    HOLDEM_EV_HAND_START,  /* seat = button (may be an empty seat: a dead button, see
                              holdem_table_start_hand_at()); amount = hand number */
    HOLDEM_EV_POST,        /* seat posts (detail = holdem_post_kind_t) amount; all_in */
    HOLDEM_EV_HOLE,        /* seat's two cards: private to that seat */
    HOLDEM_EV_TO_ACT,      /* seat must act; amount = to call; to = min raise-to; max = most;
                              detail 1: a straddle offer of `to` chips (before the deal) */
    HOLDEM_EV_ACTION,      /* seat did detail (holdem_action_kind_t after timeout resolution):
                              amount = chips put in, to = street total after; all_in */
    HOLDEM_EV_BOARD,       /* detail = street (1 flop, 2 turn, 3 river); cards = new cards */
    HOLDEM_EV_RETURN,      /* uncalled chips amount returned to seat */
    HOLDEM_EV_SHOW,        /* seat shows cards; value = hand value (holdem_eval.h) */
    HOLDEM_EV_MUCK,        /* seat mucks (gives up its claim unseen) */
    HOLDEM_EV_RAKE,        /* amount taken as rake */
    HOLDEM_EV_AWARD,       /* seat wins amount from pot number detail (0 = main) */
    HOLDEM_EV_HAND_END,    /* amount = hand number */
    HOLDEM_EV_NO_DECISION, /* seat gets no turn: it owes nothing and every other live player
                              is all-in (nothing to call, nobody to raise against) */
} holdem_event_kind_t;

typedef struct {
    holdem_event_kind_t kind;
    int seat;   /* -1 when the event is about no seat */
    int detail; /* see the kinds */
    int64_t amount;
    int64_t to;
    int64_t max;
    bool all_in;
    uint16_t value;
    int ncards;
    uint8_t cards[5];
} holdem_event_t;

/* Receives every event in order; the event is only valid during the call. */
typedef void (*holdem_event_cb)(void *ud, const holdem_event_t *ev);

/* What the seat to act may do now (holdem_table_legal()). */
typedef struct {
    int seat; /* -1 when nobody is to act */
    bool can_check;
    int64_t to_call;     /* chips a call puts in (0 when checking is possible) */
    bool can_bet;        /* no bet yet this street: HOLDEM_BET */
    bool can_raise;      /* a bet stands and raising is open to this seat: HOLDEM_RAISE */
    int64_t min_to;      /* smallest legal bet-to / raise-to (below it only an all-in) */
    int64_t max_to;      /* the seat's street bet plus its whole stack */
    bool straddle_offer; /* before the deal: straddle min_to (== max_to) chips, or check */
} holdem_legal_t;

/* The result of the last finished hand. Deltas sum to minus the rake. */
typedef struct {
    uint64_t hand;
    int64_t delta[HOLDEM_MAX_SEATS]; /* stack after the hand minus stack before it */
    int64_t rake;
    bool dealt[HOLDEM_MAX_SEATS];
} holdem_settlement_t;

typedef struct holdem_table holdem_table_t;

/*
 * Creates an empty table. Returns NULL (and sets *err when err is not NULL) if the config is
 * invalid. cb may be NULL (no events). The caller owns the table.
 */
holdem_table_t *holdem_table_create(const holdem_config_t *cfg, holdem_event_cb cb, void *ud,
                                    int *err);
void holdem_table_destroy(holdem_table_t *t);
/* A copy with the same state, callback and user data (for what-if checks and tests). */
holdem_table_t *holdem_table_clone(const holdem_table_t *t);
/* 1 if two tables hold the same state, else 0. */
int holdem_table_same_state(const holdem_table_t *a, const holdem_table_t *b);

/* Seats a player with stack chips (> 0) in an empty seat. Not while that seat is dealt in. */
int holdem_table_sit(holdem_table_t *t, int seat, int64_t stack);
/* Empties a seat, giving its stack in *stack_out; refused while the seat is in a hand. */
int holdem_table_leave(holdem_table_t *t, int seat, int64_t *stack_out);
/* Sitting out: not dealt into the next hands (a current hand continues). */
int holdem_table_sit_out(holdem_table_t *t, int seat);
int holdem_table_sit_in(holdem_table_t *t, int seat);
/* Adds chips to a seated player's stack between hands (or while not dealt in). */
int holdem_table_add_chips(holdem_table_t *t, int seat, int64_t chips);
/* Whether the seat straddles when its turn in the straddle chain comes (under the gun, or the
 * next seat after a straddler while cfg.max_straddles allows); needs cfg.straddle > 0. Not used
 * with cfg.straddle_offers. */
int holdem_table_set_straddle(holdem_table_t *t, int seat, bool on);

/*
 * Starts a hand: moves the button (to `button` if >= 0, else to the next seat that is dealt
 * in), posts antes and blinds, deals from deck[0..ncards) and asks the first player to act.
 * Dealing: one card at a time round the table from the seat left of the button, twice; then a
 * burn card before the flop, the turn and the river. The deck needs 2 * players + 8 distinct
 * cards (a whole shuffled deck is fine). Needs at least two seated players with chips who are
 * not sitting out. The hand may end at once (everyone all-in on the blinds). The cash-game
 * rule: no dead button (tournaments: holdem_table_start_hand_at()). With
 * cfg.straddle_offers the hole cards are dealt only once the straddle offers are answered.
 */
int holdem_table_start_hand(holdem_table_t *t, int button, const uint8_t *deck, int ncards);

/*
 * Tournament hands (docs/rules/holdem.md "Tournament hands"; docs/tournaments.md "Positions").
 *
 * The positions of one hand, given by the caller (the tournament director computes them by the
 * big-blind-forward rule, TDA "Dead button"):
 *   button      any seat 0..seats-1; an empty seat or one not dealt in is a dead button: the deal
 *               and the postflop action still start left of it;
 *   small_blind -1, or a seat; -1, an empty seat or a seat not dealt in is a dead small blind:
 *               nobody posts a small blind that hand;
 *   big_blind   a seat dealt in;
 *   dealt_mask  bit s set = seat s is dealt in; 0 = every seat with chips not sitting out. A
 *               seated player left out (moved in between the button and the small blind: he
 *               waits for the button) is not dealt in and posts nothing.
 * With three players or more dealt in, the seats go button, small blind, big blind clockwise:
 * button != big_blind; a small_blind seat lies strictly after the button and before the big
 * blind; and between the button and the big blind no seat but the small blind is dealt in.
 * Heads-up (two dealt in) the TDA rule applies whatever button and small_blind say (both need
 * only be in range and small_blind != big_blind): the player who is not the big blind has the
 * button, posts the small blind, acts first before the flop and last after it. So the
 * big-blind-forward positions are accepted as they come heads-up (a button on the big blind's
 * seat, a dead button, a dead small blind).
 */
typedef struct {
    int button;
    int small_blind;
    int big_blind;
    uint32_t dealt_mask;
} holdem_positions_t;

/*
 * Starts a hand at the given positions: antes by every seat dealt in (from the button's left),
 * the small blind unless dead, the big blind, the big-blind ante by the big blind, straddles as
 * holdem_table_start_hand(), then the deal from the button's left. Before the flop the first
 * to act is the first seat dealt in after the big blind (or the last straddler); after it the
 * first one left of the button. Refused with the table unchanged: HOLDEM_E_NOT_ALLOWED during
 * a hand or with fewer than two players to deal in (dealt_mask 0); HOLDEM_E_MALFORMED for a
 * bad deck, a dealt_mask naming an empty, sitting-out or chipless seat (or fewer than two), or
 * positions breaking the rules above.
 */
int holdem_table_start_hand_at(holdem_table_t *t, const holdem_positions_t *pos,
                               const uint8_t *deck, int ncards);

/*
 * The positions of the current or last hand: the button the hand was played with (heads-up:
 * the seat that posted the small blind), the small blind as given to
 * holdem_table_start_hand_at() (a dead one's seat or -1 included; heads-up too, even when the
 * other player posted it, so that the big-blind-forward rule goes on from the seats it
 * computed) or the seat that posted it in a holdem_table_start_hand() hand, the big blind, and
 * the seats dealt in. HOLDEM_E_NOT_ALLOWED before the first hand.
 */
int holdem_table_last_positions(const holdem_table_t *t, holdem_positions_t *out);

/*
 * New blinds and antes from the next hand on (a tournament level, TDA 23). Only between hands
 * (HOLDEM_E_NOT_ALLOWED during one); the values follow holdem_config_t's rules (small_blind > 0,
 * big_blind >= small_blind, ante >= 0, big_blind_ante >= 0), else HOLDEM_E_MALFORMED. Either
 * way a refused call changes nothing. A minimum bet left at 0 in the config follows the new big
 * blind; one set explicitly stays.
 */
int holdem_table_set_blinds(holdem_table_t *t, int64_t small_blind, int64_t big_blind, int64_t ante,
                            int64_t big_blind_ante);

/*
 * One action by seat. amount is used by HOLDEM_BET and HOLDEM_RAISE only. elapsed_ms is the
 * time the player took; what exceeds cfg.action_ms is taken from the seat's time bank
 * (HOLDEM_TIMEOUT empties it). Returns HOLDEM_OK or a negative holdem_err_t (state unchanged).
 */
int holdem_table_act(holdem_table_t *t, int seat, holdem_action_kind_t kind, int64_t amount,
                     int64_t elapsed_ms);

/* True while a hand is being played. */
bool holdem_table_in_hand(const holdem_table_t *t);
/* The seat to act, or -1. */
int holdem_table_to_act(const holdem_table_t *t);
/* Fills *out with what the seat to act may do. */
void holdem_table_legal(const holdem_table_t *t, holdem_legal_t *out);
/* The time the seat to act has: action_ms plus its time bank. -1 if nobody is to act. */
int64_t holdem_table_time_allowed_ms(const holdem_table_t *t);
/* A seat's stack, or -1 for an empty or invalid seat. */
int64_t holdem_table_stack(const holdem_table_t *t, int seat);
/* Chips in the middle: antes and bets of the current hand not yet awarded. */
int64_t holdem_table_pot_total(const holdem_table_t *t);
/* All rake taken since the table was created. */
int64_t holdem_table_rake_total(const holdem_table_t *t);
/* The button seat of the current or last hand (-1 before the first); a dead button's seat
 * may be empty (holdem_table_start_hand_at()). */
int holdem_table_button(const holdem_table_t *t);
/* The board so far; returns the number of cards (0..5) written to cards. */
int holdem_table_board(const holdem_table_t *t, uint8_t *cards);
/* The settlement of the last finished hand; HOLDEM_E_NOT_ALLOWED before the first one. */
int holdem_table_settlement(const holdem_table_t *t, holdem_settlement_t *out);
/* A short name for an error code ("out of turn", ...). */
const char *holdem_err_name(int err);

#endif
