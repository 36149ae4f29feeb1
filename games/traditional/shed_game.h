/*
 * shed_game -- the shared shedding-game state machine ("shed" = shedding games: Dou Dizhu, Run
 * Fast, Big Two, ...).
 *
 * One shed_game_t is one table's deal at a time, driven only by input actions (bid, play
 * cards, pass). Each action is validated in full before anything changes: a refused action
 * returns a specific error (wrong turn, cards not held, weaker than the move to beat, not a
 * valid combination, must beat when able, ...) and leaves the state exactly as it was. An
 * accepted action changes the state and produces events (read them with shed_game_events()),
 * and the action that ends the deal produces a settlement whose deltas sum to minus the rake.
 *
 * The module is pure: no I/O, no clocks, no threads, no allocation after create. Real deals
 * shuffle from the kit's deck source (shed_game_deal_secure, common/deck.h; the engine uses
 * shed_game_deck + tk_deal_shuffle + shed_game_deal_order); tests and replays use a seed
 * (shed_game_deal_seeded) or an explicit deck order (shed_game_deal_order). A game is not
 * thread-safe: one owner (a desk) drives it.
 *
 * Each game contributes a rule set (shed_rules_t, see shed_rules.h), found by name with
 * shed_rules_find(); the rules themselves are written up in docs/rules/<game>.md.
 */
#ifndef CROUPIER_SHED_GAME_H
#define CROUPIER_SHED_GAME_H

#include <stdbool.h>
#include <stdint.h>

#include "shed_card.h"

#define SHED_MAX_SEATS 4
#define SHED_MAX_EVENTS 8

typedef struct shed_game shed_game_t;
typedef struct shed_rules shed_rules_t;

/* Errors of shed_game_apply(); 0 is success. The state is unchanged after any of them. */
typedef enum {
    SHED_OK = 0,
    SHED_E_PHASE = -1,     /* this kind of action is not taken now (e.g. bid while playing) */
    SHED_E_TURN = -2,      /* not this seat's turn (or no such seat) */
    SHED_E_NOT_HELD = -3,  /* some of the cards are not in the player's hand */
    SHED_E_MALFORMED = -4, /* the cards are no valid combination (or no cards at all) */
    SHED_E_WEAKER = -5,    /* a valid combination that does not beat the move to beat */
    SHED_E_MUST_BEAT = -6, /* pass refused: the game says you must beat when you can */
    SHED_E_MUST_LEAD = -7, /* pass refused: the player leads the trick and must play */
    SHED_E_BAD_BID = -8,   /* bid out of range or not above the highest bid */
    SHED_E_OPENING = -9,   /* the deal's first play breaks the opening rule (e.g. 3 of diamonds) */
    SHED_E_ACTION = -10,   /* unknown action kind */
    SHED_E_TRIBUTE = -11,  /* Guandan: not a card that may be given as tribute / return */
    SHED_E_NOT_HIGHEST = -12, /* Run Fast "report single": the next player holds one card, so a
                                 single must be the player's highest card */
} shed_err_t;

/* Human-readable name of an error code ("wrong turn", ...). */
const char *shed_strerror(int err);

typedef enum {
    SHED_PHASE_IDLE = 0, /* created, nothing dealt yet */
    SHED_PHASE_BID,      /* bidding (Dou Dizhu) */
    SHED_PHASE_TRIBUTE,  /* tribute and return tribute (Guandan) */
    SHED_PHASE_PLAY,
    SHED_PHASE_OVER, /* the deal ended; the settlement is final */
} shed_phase_t;

typedef enum { SHED_ACT_PLAY = 1, SHED_ACT_PASS, SHED_ACT_BID, SHED_ACT_GIVE } shed_act_kind_t;

typedef struct {
    int kind; /* shed_act_kind_t */
    int seat;
    shed_set_t cards; /* SHED_ACT_PLAY: the exact cards played; SHED_ACT_GIVE: one card */
    int bid;          /* SHED_ACT_BID: 0 = pass, else the bid */
} shed_action_t;

/* A classified combination: game-specific type (0 = none / pass), main rank, length in units,
 * number of cards and a tie-break key that orders combinations of one type and length. */
typedef struct {
    uint8_t type;
    uint8_t rank;
    uint8_t len;
    uint8_t ncards;
    uint32_t key;
} shed_combo_t;

typedef enum {
    SHED_EV_DEALT = 1,  /* seat = first to act */
    SHED_EV_BID,        /* seat bid value (0 = pass) */
    SHED_EV_LANDLORD,   /* seat became landlord at value; cards = the bottom cards it took */
    SHED_EV_PLAY,       /* seat played cards; value = combination type */
    SHED_EV_PASS,       /* seat passed */
    SHED_EV_TRICK,      /* everyone else passed: seat leads a new trick */
    SHED_EV_DOUBLE,     /* the stake doubled; value = total doublings so far */
    SHED_EV_OUT,        /* seat emptied its hand */
    SHED_EV_VOID,       /* nobody bid: the deal is thrown in, nothing is paid */
    SHED_EV_SETTLED,    /* the deal is over; see shed_game_settlement() */
    SHED_EV_TRIBUTE,    /* seat gave cards to seat `value` (tribute or return tribute) */
    SHED_EV_NO_TRIBUTE, /* the payers hold both red jokers: no tribute this deal */
    SHED_EV_LEVEL,      /* team `seat` (0: seats 0+2, 1: seats 1+3) is now at level step value */
    SHED_EV_MATCH,      /* team `seat` won the match (levels start again at 2) */
    SHED_EV_BOMB_PAID,  /* Run Fast, SHED_OPT_RF_BOMB_PAYS: each other seat owes `seat` value
                           units for the bomb just played (settled with the deal) */
    SHED_EV_A_FAILED,   /* Guandan, SHED_OPT_GD_A_THREE_FAILS: team `seat` failed a deal at its
                           level A for the value-th time (3: its level is back at 2) */
} shed_ev_kind_t;

typedef struct {
    int kind;
    int seat;
    int value;
    shed_set_t cards;
} shed_event_t;

/*
 * Rule options (shed_config_t.options): variants a rule set may play, all off by default (the
 * rules of docs/rules/<game>.md without them). A game refuses options of another rule set.
 */
enum {
    /* Run Fast: when the next player holds a single card, a single played must be the
     * player's highest card ("report single", docs/rules/runfast.md). */
    SHED_OPT_RF_REPORT_SINGLE = 1u << 0,
    /* Run Fast: four of a kind with exactly two other cards is a (non-bomb) combination. */
    SHED_OPT_RF_FOUR_WITH_TWO = 1u << 1,
    /* Run Fast: four of a kind with exactly three other cards is a (non-bomb) combination. */
    SHED_OPT_RF_FOUR_WITH_THREE = 1u << 2,
    /* Run Fast: a bomb no longer doubles the payments; instead each other player owes the
     * bomber bomb_units units at once, whoever wins the deal. */
    SHED_OPT_RF_BOMB_PAYS = 1u << 3,
    /* Guandan: a partnership failing three deals at its level A drops back to level 2. */
    SHED_OPT_GD_A_THREE_FAILS = 1u << 8,
};

typedef struct {
    int64_t base_stake; /* chips per unit of stake, >= 1 */
    int rake_permille;  /* taken from each winner's gain, 0..1000 */
    unsigned options;   /* SHED_OPT_* of the game's rule set; 0: none */
    int bomb_units;     /* SHED_OPT_RF_BOMB_PAYS: units per bomb from each other player, 0..1000
                           (0: the default, 10); must be 0 without that option */
} shed_config_t;

/* Default units a bomb collects from each other player under SHED_OPT_RF_BOMB_PAYS. */
#define SHED_BOMB_UNITS_DEFAULT 10

typedef struct {
    int seats;
    int64_t delta[SHED_MAX_SEATS]; /* net chips per seat, after rake */
    int64_t rake;                  /* sum(delta) == -rake */
    int winner;                    /* first seat out, -1 when voided */
    int64_t units;                 /* stake units of the deal (multipliers applied) */
    bool voided;
} shed_settlement_t;

/* The rule set called `name` ("doudizhu", "runfast", "bigtwo", "guandan"), or NULL. */
const shed_rules_t *shed_rules_find(const char *name);
const char *shed_rules_name(const shed_rules_t *rules);
int shed_rules_seats(const shed_rules_t *rules);
/* The SHED_OPT_* flags a rule set accepts (0: none). */
unsigned shed_rules_options(const shed_rules_t *rules);
/*
 * The option flag called `name` ("report-single", "four-with-two", "four-with-three",
 * "bomb-pays", "a-three-fails"), or 0 when unknown.
 */
unsigned shed_option_from_name(const char *name);
/* Classifies cards under a rule set without options; `last` says they would be a player's last
 * cards. Returns 0 or SHED_E_MALFORMED. */
int shed_rules_classify(const shed_rules_t *rules, shed_set_t cards, bool last, shed_combo_t *out);
/* True when combination `a` may be played on `b` under the rule set. */
bool shed_rules_beats(const shed_rules_t *rules, const shed_combo_t *a, const shed_combo_t *b);

/*
 * Creates a game for a rule set. cfg may be NULL (base stake 1, no rake, no options). Returns
 * NULL when cfg is out of range (including options the rule set does not have, or bomb_units
 * without SHED_OPT_RF_BOMB_PAYS). The game is freed with shed_game_destroy (NULL is a no-op).
 */
shed_game_t *shed_game_create(const shed_rules_t *rules, const shed_config_t *cfg);
void shed_game_destroy(shed_game_t *g);

/* Starts a new deal shuffled by the kit's deck source (common/deck.h), the first seat drawn
 * from it too. 0, or -EIO when the generator failed (no deal starts). */
int shed_game_deal_secure(shed_game_t *g);
/* The game's whole deck in its unshuffled order into out (SHED_MAX_CARDS room); returns the
 * count. The engine shuffles it (tk_deal_shuffle) and deals it with shed_game_deal_order(). */
int shed_game_deck(const shed_game_t *g, shed_card_t *out);
/* Starts a new deal shuffled by a seeded generator: equal seeds give equal deals. */
void shed_game_deal_seeded(shed_game_t *g, uint64_t seed);
/*
 * Starts a new deal from an explicit deck order (the game's whole deck, dealt in seat order
 * one card at a time; what is left over, e.g. Dou Dizhu's three bottom cards, stays aside).
 * `first` is the seat that bids first where the game has bidding (ignored otherwise).
 * Returns 0, or -EINVAL when `order` is not a permutation of the game's deck.
 */
int shed_game_deal_order(shed_game_t *g, const shed_card_t *order, int n, int first);

/*
 * Sets up a position for analysis (tools, tests): `seat` to act in the play phase holding
 * `hand`, with `to_beat` on the table as played by the previous seat (empty: `seat` leads),
 * everybody else's hand empty, not the deal's first play. Returns 0, or -EINVAL when the
 * hand is empty, a card is not in the game's deck, hand and to_beat share a card, or to_beat
 * is no valid combination. On error the game is unchanged.
 */
int shed_game_setup_position(shed_game_t *g, int seat, shed_set_t hand, shed_set_t to_beat);
/*
 * Completes a position set up by shed_game_setup_position (tools, tests): gives `seat`, which
 * is not the seat to act, the cards `hand` (e.g. one card, for Run Fast's "report single").
 * Returns 0, or -EINVAL when the game is not in the play phase, `seat` is the seat to act or
 * out of range, or a card is not in the game's deck or is held by another seat (the caller
 * keeps it apart from the move to beat). On error the game is unchanged.
 */
int shed_game_setup_hand(shed_game_t *g, int seat, shed_set_t hand);
/*
 * Guandan (games with a level and tribute; bots, tools): shed_game_setup_position at the deal
 * level rank index `level` (0..12, shed_card_rank order: 0 = "3" ... 11 = "A", 12 = "2"), which
 * decides the wild cards and the level cards' strength, also in reading `to_beat`.
 * Returns 0, or -EINVAL as shed_game_setup_position, for a level out of range or a game
 * without levels. On error the game is unchanged.
 */
int shed_game_setup_level_position(shed_game_t *g, int seat, shed_set_t hand, shed_set_t to_beat,
                                   int level);
/*
 * Guandan: sets up the tribute phase at level `level`: `seat` holding `hand` gives one card,
 * paying tribute (returning false) or returning one (true); shed_game_legal_plays then lists
 * the cards it may give. Returns 0 or -EINVAL (as above). On error the game is unchanged.
 */
int shed_game_setup_tribute(shed_game_t *g, int seat, shed_set_t hand, int level, bool returning);

/* Applies one action. Returns SHED_OK or a shed_err_t (state unchanged). */
int shed_game_apply(shed_game_t *g, const shed_action_t *a);

/* The events produced by the last deal or accepted action; valid until the next call. */
const shed_event_t *shed_game_events(const shed_game_t *g, int *n);

const shed_rules_t *shed_game_rules(const shed_game_t *g);
int shed_game_phase(const shed_game_t *g);
int shed_game_turn(const shed_game_t *g);
int shed_game_seats(const shed_game_t *g);
shed_set_t shed_game_hand(const shed_game_t *g, int seat);
/* Cards set aside by the deal (Dou Dizhu's bottom cards, visible once a landlord is known). */
shed_set_t shed_game_extra(const shed_game_t *g);
/* The move to beat (type 0 when the player to act leads) and who made it (-1 if none). */
shed_combo_t shed_game_to_beat(const shed_game_t *g, int *by_seat);
/* True when the seat has played out all its cards (games that play on after that). */
bool shed_game_is_out(const shed_game_t *g, int seat);
/*
 * The match state that outlives a deal (Guandan's team levels, the failures at level A and what
 * the next deal's level and tribute are decided from), for a table that moves to another server
 * as a whole (engine/tk.h "moves"): read between deals, and set on a new game of the same rules
 * before its first deal. Other games keep none (the fields stay zero).
 */
typedef struct {
    int team_step[2]; /* 0 = "2" ... 12 = "A" */
    int a_fails[2];
    int prev_finish[SHED_MAX_SEATS];
    int have_prev;
    int prev_upgrade;
} shed_match_t;
void shed_game_match_get(const shed_game_t *g, shed_match_t *out);
/* 0, or -EINVAL for values out of range (the game is unchanged). */
int shed_game_match_set(shed_game_t *g, const shed_match_t *m);

/* Guandan: the deal's level rank index (-1 for other games); team_steps (may be NULL) gets
 * each team's level step (0 = "2" ... 12 = "A"). */
int shed_game_level(const shed_game_t *g, int *team_steps);
/* The game's SHED_OPT_* flags. */
unsigned shed_game_options(const shed_game_t *g);
/* With SHED_OPT_RF_BOMB_PAYS: the units each other player owes a bomber (default applied). */
int shed_game_bomb_units(const shed_game_t *g);
/* Guandan with SHED_OPT_GD_A_THREE_FAILS: the deals team (0 or 1) has failed at its level A
 * since it last reached A (0 otherwise). */
int shed_game_a_failures(const shed_game_t *g, int team);
/* Guandan: the tribute stage (0 none, 1 paying tribute, 2 returning it); to_seat (may be NULL)
 * gets the seat that receives the card the seat to act gives, -1 when not known yet (two
 * tributes go to the first and second out by their strength once both are given). */
int shed_game_tribute(const shed_game_t *g, int *to_seat);
/* Dou Dizhu: the landlord seat (-1 before bidding ends) and the winning bid. */
int shed_game_landlord(const shed_game_t *g, int *bid);
/* The settlement, or NULL while the deal is not over. */
const shed_settlement_t *shed_game_settlement(const shed_game_t *g);

/*
 * Lists the plays the player to act may make now (not the pass) as card sets, one per
 * combination the game tells apart (suits chosen lowest first where suits do not matter);
 * in the tribute phase, the single cards it may give. Returns the count, or -ENOSPC when
 * more than cap (the list is then incomplete).
 */
int shed_game_legal_plays(const shed_game_t *g, shed_set_t *out, int cap);
/* True when the player to act may pass now. */
bool shed_game_may_pass(const shed_game_t *g);
/* Fills out with the bids allowed now (0 = pass first); returns how many (0 if not bidding). */
int shed_game_legal_bids(const shed_game_t *g, int *out);
/* Classifies cards under the game's rules (ignoring whose they are); `last` says they would be
 * a player's last cards. Returns 0 or SHED_E_MALFORMED. */
int shed_game_classify(const shed_game_t *g, shed_set_t cards, bool last, shed_combo_t *out);

/* A 64-bit digest of the whole game state (for "state unchanged" checks and replays). */
uint64_t shed_game_digest(const shed_game_t *g);

#endif
