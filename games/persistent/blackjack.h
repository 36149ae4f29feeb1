/*
 * blackjack -- the pure blackjack table: rules, shoe and the round state machine.
 *
 * A bj_table_t is one table with 1..7 seats playing rounds back to back against the dealer.
 * It does no I/O, keeps no clock and touches no wallet: the caller (a desk actor, a test, the
 * simulator) feeds it inputs -- seat changes, bets, insurance decisions, player actions and
 * "timeout" -- and gets back events (through a callback) and, at the end of every round, a
 * settlement with one integer chip delta per seat. Rules are in docs/rules/blackjack.md.
 *
 * Round: IDLE --open_betting--> BETTING --(every active seat bet, or timeout)--> deal
 *   --(dealer shows an ace and insurance is offered)--> INSURANCE --> dealer peeks
 *   --> PLAYERS (each hand of each seat in seat order) --> dealer plays --> settle --> IDLE.
 * The dealer's play and the settlement need no input and happen inside the call that ends
 * the players' turns.
 *
 * Every input is validated first. A refused input returns a negative BJ_ERR_* code and leaves
 * the table exactly as it was (no card drawn, no event emitted). Timeouts never fail in an
 * input phase: a seat that times out places no bet, declines insurance, or stands.
 *
 * Not thread-safe: one table belongs to one thread (its desk's worker).
 */
#ifndef CROUPIER_BLACKJACK_H
#define CROUPIER_BLACKJACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bj_rng.h"

#define BJ_MAX_SEATS 7
#define BJ_MAX_DECKS 8
#define BJ_MAX_HANDS 8  /* per seat, after splits */
#define BJ_MAX_CARDS 24 /* per hand: more cards than this cannot stay at or under 21 */

/*
 * Cards are 0..51: suit = card / 13, rank = card % 13 with 0 = ace, 1..8 = two..nine,
 * 9 = ten, 10 = jack, 11 = queen, 12 = king. A shoe holds each card once per deck.
 */
#define BJ_CARD_HIDDEN 0xFF /* the dealer's hole card as shown to players */

/* Blackjack value of a card: ace 1, two..nine face value, ten and court cards 10. */
extern const uint8_t bj_card_values[256];
static inline int bj_card_value(uint8_t card)
{
    return bj_card_values[card]; /* 0 for anything that is not a card (e.g. hidden) */
}

typedef enum {
    BJ_DOUBLE_ANY = 0, /* double on any first two cards */
    BJ_DOUBLE_9_11,    /* only on a hard 9, 10 or 11 */
    BJ_DOUBLE_10_11,   /* only on a hard 10 or 11 */
} bj_double_t;

/* Everything that differs between blackjack tables. See bj_rules_default() and the doc. */
typedef struct {
    int decks;             /* 1..8 */
    bool h17;              /* dealer hits soft 17 (false: stands on all 17s) */
    bj_double_t double_on; /* which first two cards may be doubled */
    bool das;              /* double after split */
    bool late_surrender;   /* give up half the bet as the first decision, after the peek */
    bool rsa;              /* resplit aces */
    int max_hands;         /* most hands one seat may hold after splits, 1..8 (1: no split) */
    int bj_pay_num;        /* blackjack pays num:den (3:2, 6:5, ...) */
    int bj_pay_den;
    bool insurance;  /* insurance (and even money) offered when the dealer shows an ace */
    bool peek;       /* dealer takes a hole card and peeks under an ace or ten; false is the
                        European no-hole-card game, where a dealer blackjack takes every bet */
    int penetration; /* cut card position in per mille of the shoe, 100..950 */
    int64_t min_bet; /* >= 1 */
    int64_t max_bet; /* >= min_bet, <= BJ_MAX_BET */
    int seats;       /* 1..7 */
} bj_rules_t;

#define BJ_MAX_BET ((int64_t)1 << 40)

/* Fills r with the common six-deck shoe game: S17, DAS, late surrender, RSA, 4 hands, 3:2,
 * insurance, peek, 75 % penetration, bets 10..10000, 7 seats. */
void bj_rules_default(bj_rules_t *r);
/* Returns 0, or BJ_ERR_INVALID with one sentence naming the bad rule in err. */
int bj_rules_validate(const bj_rules_t *r, char *err, size_t errlen);
/* Writes a one-line summary such as "6 decks, S17, DAS, LS, RSA, ..."; returns like snprintf. */
int bj_rules_describe(const bj_rules_t *r, char *buf, size_t len);

/* Results of table inputs: 0 or one of these (all negative). */
enum {
    BJ_OK = 0,
    BJ_ERR_INVALID = -1,          /* bad argument: unknown action, seat out of range, ... */
    BJ_ERR_PHASE = -2,            /* not possible in the table's current phase */
    BJ_ERR_TURN = -3,             /* acting out of turn */
    BJ_ERR_SEAT_EMPTY = -4,       /* nobody sits there, or the seat is not in this round */
    BJ_ERR_SEAT_TAKEN = -5,       /* somebody already sits there */
    BJ_ERR_SITTING_OUT = -6,      /* the seat sits out this round */
    BJ_ERR_ALREADY = -7,          /* the bet or insurance decision was already made */
    BJ_ERR_BET_LIMIT = -8,        /* bet below the minimum or above the maximum */
    BJ_ERR_DOUBLE_AFTER_HIT = -9, /* doubling a hand that has more than two cards */
    BJ_ERR_SPLIT_UNEQUAL = -10,   /* splitting a hand that is not a pair of equal values */
    BJ_ERR_NOT_ALLOWED = -11,     /* the table's rules forbid this action on this hand */
    BJ_ERR_NO_PLAYERS = -12,      /* no seated player who is not sitting out */
    BJ_ERR_NO_CARD = -13,         /* (stacking) that card is not left in the shoe */
    BJ_ERR_RNG = -14,             /* the shuffle generator failed (common/deck.h): no deal */
};
/* A short English sentence for a BJ_ERR_* code. */
const char *bj_strerror(int err);

typedef enum {
    BJ_PHASE_IDLE = 0,  /* between rounds: seats may change; open_betting starts a round */
    BJ_PHASE_BETTING,   /* the betting window */
    BJ_PHASE_INSURANCE, /* dealer shows an ace: each seat takes or declines insurance */
    BJ_PHASE_PLAYERS,   /* one hand at a time acts (see bj_table_turn) */
} bj_phase_t;

typedef enum {
    BJ_ACT_HIT = 0,
    BJ_ACT_STAND,
    BJ_ACT_DOUBLE,
    BJ_ACT_SPLIT,
    BJ_ACT_SURRENDER,
    BJ_ACT_COUNT,
} bj_action_t;
#define BJ_ACT_BIT(a) (1u << (a))

/* bj_hand_t.flags */
enum {
    BJ_HAND_ACE = 1 << 0,         /* holds at least one ace */
    BJ_HAND_DONE = 1 << 1,        /* no further action */
    BJ_HAND_DOUBLED = 1 << 2,     /* bet doubled, one card taken */
    BJ_HAND_SPLIT = 1 << 3,       /* comes from a split (so 21 is not a blackjack) */
    BJ_HAND_SPLIT_ACES = 1 << 4,  /* comes from splitting aces: one card only */
    BJ_HAND_SURRENDERED = 1 << 5, /* half the bet given up */
    BJ_HAND_BLACKJACK = 1 << 6,   /* ace and ten-value card as the unsplit first two cards */
};

/* Outcome of a settled hand. */
typedef enum {
    BJ_OUT_NONE = 0, /* not settled yet */
    BJ_OUT_WIN,
    BJ_OUT_LOSE,
    BJ_OUT_PUSH,
    BJ_OUT_BLACKJACK,  /* paid at the blackjack rate */
    BJ_OUT_SURRENDER,  /* half the bet lost */
    BJ_OUT_BUST,       /* lost by going over 21 */
    BJ_OUT_EVEN_MONEY, /* blackjack paid 1:1 on request against a dealer ace */
    BJ_OUT_VOID,       /* round voided, bet returned */
} bj_outcome_t;

typedef struct {
    uint8_t cards[BJ_MAX_CARDS];
    uint8_t ncards;
    uint8_t hard;   /* total counting every ace as 1 */
    uint8_t flags;  /* BJ_HAND_* */
    int8_t outcome; /* bj_outcome_t once settled */
    int64_t bet;    /* chips riding on this hand (a double included) */
    int64_t result; /* chip delta of this hand once settled */
} bj_hand_t;

/* Best total of a hand (an ace counts 11 when that stays <= 21); *soft says it did. */
static inline int bj_hand_total(const bj_hand_t *h, bool *soft)
{
    bool s = (h->flags & BJ_HAND_ACE) && h->hard + 10 <= 21;
    if (soft != NULL)
        *soft = s;
    return h->hard + (s ? 10 : 0);
}

/* bj_seat_t.insurance */
enum {
    BJ_INS_NONE = 0, /* not offered */
    BJ_INS_PENDING,  /* offered, no decision yet */
    BJ_INS_DECLINED,
    BJ_INS_TAKEN,      /* insurance_bet = half the bet, rounded down */
    BJ_INS_EVEN_MONEY, /* a blackjack took even money */
};

typedef struct {
    uint64_t player;  /* 0: empty seat */
    bool sitting_out; /* seated but skipping rounds */
    bool in_round;    /* placed a bet this round */
    int8_t insurance; /* BJ_INS_* */
    uint8_t nhands;
    int64_t bet; /* initial bet this round */
    int64_t insurance_bet;
    bj_hand_t hands[BJ_MAX_HANDS];
} bj_seat_t;

typedef struct {
    uint64_t player;
    bool played;     /* the seat had a bet in this round */
    int hands;       /* hands it played (more than 1 after splits) */
    int64_t wagered; /* chips risked: every hand's bet plus insurance */
    int64_t insurance;
    int64_t delta; /* net chips won (> 0) or lost (< 0) this round */
} bj_seat_result_t;

/* The money outcome of one round. Seat deltas and house_delta sum to zero. */
typedef struct {
    uint64_t round;
    bool voided; /* round voided: every bet returned, every delta 0 */
    int nseats;
    bj_seat_result_t seats[BJ_MAX_SEATS];
    int64_t house_delta;
} bj_settlement_t;

typedef enum {
    BJ_EV_SHUFFLE,        /* new shoe: amount = cards in it, card = 1 if mid-round; shoe_id and
                             commitment: its number and commitment (never its order) */
    BJ_EV_SEAT,           /* seat changed: player (0 = left), card = 1 if sitting out */
    BJ_EV_BETTING_OPEN,   /* a round's betting window opened */
    BJ_EV_BET,            /* seat bet amount */
    BJ_EV_NO_ROUND,       /* betting closed without a bet; back to idle */
    BJ_EV_CARD,           /* card to seat/hand, or to the dealer (seat -1); may be hidden */
    BJ_EV_INSURANCE_OPEN, /* dealer shows an ace: insurance decisions are awaited */
    BJ_EV_INSURANCE,      /* seat decided: amount = insurance bet, card = BJ_INS_* */
    BJ_EV_PEEK,           /* dealer peeked: no blackjack */
    BJ_EV_TURN,           /* seat/hand to act; allowed = mask of BJ_ACT_BIT() */
    BJ_EV_ACTION,         /* seat/hand did action (timed_out if by timeout) */
    BJ_EV_HOLE,           /* dealer's hole card shown: card */
    BJ_EV_SETTLED,        /* round over: settlement */
    BJ_EV_SHOE_RETIRED,   /* no card is dealt from the shoe shoe_id any more: its order
                             (shoe_cards, amount cards) and nonce open its commitment */
} bj_event_type_t;

typedef struct {
    bj_event_type_t type;
    uint64_t round;
    int seat; /* -1: dealer or whole table */
    int hand;
    uint8_t card;
    bj_action_t action;
    bool timed_out;
    uint32_t allowed;
    int64_t amount;
    uint64_t player;
    const bj_settlement_t *settlement; /* BJ_EV_SETTLED only; valid during the callback */
    /* The shoe (docs/fairness.md "Blackjack's shoes"): SHUFFLE, SHOE_RETIRED, and CARD / HOLE
     * (the shoe the card came from and its position in it, 0-based). commitment (DECK_COMMIT_LEN
     * bytes), shoe_cards and shoe_nonce (SHOE_RETIRED only) are valid during the callback. */
    uint64_t shoe_id;
    int shoe_pos;
    uint8_t hole_card; /* CARD with card BJ_CARD_HIDDEN: the hole card itself, for the hand
                          history only (never shown before BJ_EV_HOLE) */
    const uint8_t *commitment;
    const uint8_t *shoe_cards;
    const uint8_t *shoe_nonce;
} bj_event_t;

/* Called synchronously from inside the input that caused the event. Must not call back
 * into the table. */
typedef void (*bj_event_cb)(void *ctx, const bj_event_t *ev);

/* Everything a (re)connecting player may see, by value. The hole card is BJ_CARD_HIDDEN
 * until the dealer shows it. */
typedef struct {
    bj_rules_t rules;
    bj_phase_t phase;
    uint64_t round;
    int turn_seat; /* -1 outside BJ_PHASE_PLAYERS */
    int turn_hand;
    uint32_t allowed; /* actions allowed to the hand on turn */
    int ndealer;
    uint8_t dealer[BJ_MAX_CARDS];
    bj_seat_t seats[BJ_MAX_SEATS];
    uint64_t shoe_id;  /* increments with every shuffle */
    int cards_left;    /* undealt cards in the shoe */
    bool cut_card_out; /* the shoe is reshuffled before the next deal */
    int shoe_dealt;    /* cards dealt from the shoe: the position of the next card */
    bool shoe_retired; /* the shoe deals no more (revealed): the next deal shuffles a new one */
    uint8_t shoe_commitment[32]; /* the shoe's commitment (DECK_COMMIT_LEN) */
    bool has_settlement;
    bj_settlement_t last; /* the previous round's settlement, if any */
} bj_snapshot_t;

typedef struct bj_table bj_table_t;

/*
 * Creates a table. rules are copied (validated: BJ_ERR_INVALID if bad). rng: NULL to shuffle
 * with the kit's deck source (production, common/deck.h); else a seeded generator that stays
 * owned by the caller and must outlive the table. cb may be NULL (no events, e.g. the
 * simulator). The first shoe is shuffled here. Returns 0 and *out, BJ_ERR_INVALID, or
 * BJ_ERR_RNG (the deck generator failed). With rng NULL, bj_table_open_betting() answers
 * BJ_ERR_RNG once the generator failed, and a round whose shuffle fails is voided (every bet
 * goes back) before a card is dealt.
 */
int bj_table_create(const bj_rules_t *rules, bj_rng_t *rng, bj_event_cb cb, void *cb_ctx,
                    bj_table_t **out);
void bj_table_destroy(bj_table_t *t);

/* Seats (IDLE or BETTING only): player ids are non-zero. */
int bj_table_sit(bj_table_t *t, int seat, uint64_t player);
/* Leaves the seat; a bet placed in this betting window is withdrawn. */
int bj_table_leave(bj_table_t *t, int seat);
/* Sit out (or come back) from the next betting window; in BETTING, only before betting. */
int bj_table_sit_out(bj_table_t *t, int seat, bool sitting_out);

/* IDLE -> BETTING. BJ_ERR_NO_PLAYERS if no seat can bet. */
int bj_table_open_betting(bj_table_t *t);
/* One bet per seat; the deal follows as soon as every active seat has bet. */
int bj_table_bet(bj_table_t *t, int seat, int64_t amount);
/* Take (true) or decline insurance; a blackjack taking it gets even money. */
int bj_table_insurance(bj_table_t *t, int seat, bool take);
/* The hand on turn acts. */
int bj_table_act(bj_table_t *t, int seat, bj_action_t action);
/*
 * The current wait is over: BETTING closes (seats without a bet sit the round out);
 * INSURANCE: undecided seats decline; PLAYERS: the seat on turn stands on all its remaining
 * hands. BJ_ERR_PHASE in IDLE.
 */
int bj_table_timeout(bj_table_t *t);
/* Ends the round in progress with every bet returned (e.g. a forced drain). */
int bj_table_void_round(bj_table_t *t);

bj_phase_t bj_table_phase(const bj_table_t *t);
uint64_t bj_table_round(const bj_table_t *t);
/* Seat and hand on turn; returns false outside BJ_PHASE_PLAYERS. */
bool bj_table_turn(const bj_table_t *t, int *seat, int *hand);
/* Mask of BJ_ACT_BIT() the hand on turn may do (0 outside BJ_PHASE_PLAYERS). */
uint32_t bj_table_allowed(const bj_table_t *t);

/* Everything a player (or bot) needs to decide the hand on turn, in one call. */
typedef struct {
    int seat;
    int hand;
    const bj_hand_t *cards; /* the hand on turn; valid until the next input */
    uint8_t up;             /* the dealer's face-up card */
    uint32_t allowed;       /* mask of BJ_ACT_BIT() */
} bj_decision_t;
/* Fills *out and returns true in BJ_PHASE_PLAYERS; returns false otherwise. */
bool bj_table_decision(const bj_table_t *t, bj_decision_t *out);
/* A seat's hand (read-only, valid until the next input), or NULL. */
const bj_hand_t *bj_table_hand(const bj_table_t *t, int seat, int hand);
/* The dealer's face-up card, or BJ_CARD_HIDDEN before the deal. */
uint8_t bj_table_dealer_up(const bj_table_t *t);
/* Last round's settlement, or NULL before the first one ends. Valid until the next round
 * ends. */
const bj_settlement_t *bj_table_settlement(const bj_table_t *t);
/* Fills *out with everything a player may see. */
void bj_table_snapshot(const bj_table_t *t, bj_snapshot_t *out);

/*
 * For tests and replays only: moves the given cards, in order, to the top of the undealt
 * shoe (IDLE only; a due reshuffle happens first). BJ_ERR_NO_CARD if a card is not left.
 * Stacking changes the committed order, so (n > 0) the shoe is retired (BJ_EV_SHOE_RETIRED)
 * and its undealt cards, stacked, become a new shoe with a new number and commitment
 * (BJ_EV_SHUFFLE); the cut card keeps its place. BJ_ERR_RNG if its nonce cannot be drawn.
 */
int bj_table_stack_shoe(bj_table_t *t, const uint8_t *cards, int n);

/*
 * Shoes and their commitments (docs/fairness.md "Blackjack's shoes"). Every shoe is committed to
 * when it is shuffled: commitment = deck_commitment_tagged(DECK_SHOE_TAG, its order, a 32-byte
 * nonce from the deck source; a seeded table's nonce is the shoe number, big-endian, in the last
 * 8 bytes: tests and the simulator only). A shoe is retired -- BJ_EV_SHOE_RETIRED reveals its
 * order and nonce -- once no card of it will be dealt: at the end of the round that brought the
 * cut card out, when it runs dry mid-round (the refill is a new shoe), when it is stacked, and
 * on bj_table_retire_shoe().
 */
/* Retires the current shoe now (e.g. the table closes; IDLE, or at a round's void): the next
 * deal shuffles a new one. Nothing happens if it is retired already. */
void bj_table_retire_shoe(bj_table_t *t);

/* A shoe as it moves with its table (whole-table moves): the adopter deals on from pos under the
 * same number and commitment. */
typedef struct {
    uint64_t id;
    int len, pos, cut;
    bool retired;
    uint8_t cards[BJ_MAX_DECKS * 52];
    uint8_t nonce[32];
    uint8_t commitment[32];
} bj_shoe_state_t;
/* The shoe's state (IDLE only: BJ_ERR_PHASE). */
int bj_table_export_shoe(const bj_table_t *t, bj_shoe_state_t *out);
/* Replaces the shoe (IDLE only) with s, checked first: the card counts fit the table's decks,
 * 0 <= pos <= len, and the order and nonce open the commitment (BJ_ERR_INVALID otherwise, the
 * table unchanged). The shoe it replaces was never dealt from and is not revealed. */
int bj_table_import_shoe(bj_table_t *t, const bj_shoe_state_t *s);

#endif
