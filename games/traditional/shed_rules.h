/*
 * shed_rules -- what a game plugs into the shared state machine (private to games/traditional).
 *
 * The state machine (shed_game.c) owns turns, passes, tricks, bidding bookkeeping, validation
 * order, events and the rake; a rule set supplies only what differs between games: the deck,
 * how cards classify and compare, who starts, legal-move listing and the scoring.
 */
#ifndef CROUPIER_SHED_RULES_H
#define CROUPIER_SHED_RULES_H

#include "shed_game.h"

struct shed_game {
    const shed_rules_t *rules;
    shed_config_t cfg;
    int seats;
    int phase;
    int turn;
    shed_set_t hand[SHED_MAX_SEATS];
    shed_set_t extra;  /* cards set aside by the deal */
    int lead_seat;     /* who made the move to beat, -1 when none */
    shed_combo_t beat; /* type 0 = the player to act leads */
    int passes;        /* consecutive passes since the move to beat */
    int bid_best;      /* highest bid so far, 0 = none */
    int bid_seat;      /* who made it, -1 = none */
    int bids_made;
    int landlord;
    int doublings;              /* stake doublings so far (bombs, rocket, spring, ...) */
    int bombs[SHED_MAX_SEATS];  /* Run Fast, SHED_OPT_RF_BOMB_PAYS: bombs played per seat */
    int plays[SHED_MAX_SEATS];  /* non-pass plays made per seat this deal */
    int nplays;                 /* non-pass plays made this deal */
    bool out[SHED_MAX_SEATS];   /* emptied their hand (games that play on) */
    int finish[SHED_MAX_SEATS]; /* seats in the order they went out */
    int nfinished;
    /* Guandan: match state that survives deals, and this deal's tribute */
    int level;                       /* rank index of this deal's level cards, -1 when none */
    int team_step[2];                /* each team's level: 0 = "2", 1 = "3", ..., 12 = "A" */
    int a_fails[2];                  /* deals each team failed at its level A (an option) */
    int prev_finish[SHED_MAX_SEATS]; /* finishing order of the previous deal */
    int have_prev;                   /* a previous deal of this match exists */
    int prev_upgrade;                /* levels the previous deal's winners went up (1..3) */
    int trib_payer[2];               /* tribute payers (-1 none) ... */
    int trib_recv[2];                /* ... and who receives from each */
    int trib_card[2];                /* the card each payer gave (-1 not yet) */
    int ntrib;                       /* 0, 1 or 2 tributes this deal */
    int trib_stage;                  /* 0 none, 1 paying, 2 returning */
    int trib_done[2];                /* return given for tribute i */
    shed_settlement_t settle;
    shed_event_t ev[SHED_MAX_EVENTS];
    int nev;
};

struct shed_rules {
    const char *name;
    int seats;
    int deck_size; /* cards in the game's deck */
    int hand_size; /* cards per seat at the deal */
    bool bidding;  /* Dou Dizhu style 1..max_bid auction for the extra cards */
    int max_bid;
    bool must_beat;   /* a player who can beat the move to beat may not pass */
    unsigned options; /* the SHED_OPT_* flags this rule set accepts */
    /* Fills out with the game's deck (deck_size cards). */
    void (*deck)(shed_card_t *out);
    /* Classifies cards; 0 or SHED_E_MALFORMED. `last` says the cards would empty the hand
     * (some games allow short combinations only as the last cards). g is NULL when no game is
     * at hand; otherwise a game may use its state (Guandan: the level, and the move to beat to
     * choose how wild cards are read). */
    int (*classify)(const shed_game_t *g, shed_set_t cards, bool last, shed_combo_t *out);
    bool (*beats)(const shed_combo_t *a, const shed_combo_t *b);
    /* Seat that acts first after the deal (bidding or playing); `first` is the deal's hint. */
    int (*first_seat)(const shed_game_t *g, int first);
    /* Extra rule for the deal's first play (may be NULL): 0 or SHED_E_OPENING. */
    int (*check_opening)(const shed_game_t *g, shed_set_t cards);
    /* Extra rule for a play that classifies and beats (may be NULL): 0 or a shed_err_t. */
    int (*check_play)(const shed_game_t *g, shed_set_t cards, const shed_combo_t *c);
    /* Lists the plays of g->turn as card sets; count or -ENOSPC. */
    int (*legal_plays)(const shed_game_t *g, shed_set_t *out, int cap);
    /* Called after a play is applied (e.g. bombs double the stake). May push events. */
    void (*on_play)(shed_game_t *g, int seat, const shed_combo_t *c);
    /* Fills g->settle.delta (sum zero), winner and units once `winner` emptied its hand. */
    void (*settle)(shed_game_t *g, int winner);
    /* Optional, for games that play on after a player goes out (Guandan). */
    bool continue_after_out;
    int partner_offset; /* partner = (seat + offset) % seats; 0: no partners */
    /* True when the deal is over (called after each player goes out). */
    bool (*deal_over)(const shed_game_t *g);
    /* Called at the end of game_start (may enter SHED_PHASE_TRIBUTE and set the turn). */
    void (*start)(shed_game_t *g);
    /* Handles SHED_ACT_GIVE in SHED_PHASE_TRIBUTE: SHED_OK or an error, state unchanged. */
    int (*give)(shed_game_t *g, const shed_action_t *a);
    /* Lists the cards the player to act may give now (one card per set). */
    int (*legal_gives)(const shed_game_t *g, shed_set_t *out, int cap);
};

/* Appends an event (silently dropped beyond SHED_MAX_EVENTS, which no game reaches). */
void shed_game_push_event(shed_game_t *g, int kind, int seat, int value, shed_set_t cards);

extern const shed_rules_t shed_rules_doudizhu;
extern const shed_rules_t shed_rules_runfast;
extern const shed_rules_t shed_rules_bigtwo;
extern const shed_rules_t shed_rules_guandan;

#endif
