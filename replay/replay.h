/*
 * replay -- a finished round's replay, built from its hand history record (docs/hand-history.md)
 * for one viewer by the game's view policy (docs/replays.md).
 *
 * The builder is game-neutral: it reads the record's seats, cards, actions and results, and
 * turns them into Replay events (client.proto): each seat's deal, the table's cards, every action
 * in order, the hands shown at the end. What each game adds is a row of replay_rules_t: whose
 * cards a viewer may see once the round is over (none but his own, those shown down, or all),
 * whether the deck and its nonce are shown (for blackjack: its shoes, and the shoes the round
 * retired, opened), and, for hold'em, when the board came out between
 * the actions (the record keeps cards and actions apart: games/holdem/holdem_record.h plays the
 * hand again to know).
 *
 * The viewer is a player id: a player dealt into the round always sees his own cards; everything
 * else follows the policy, the same for every other viewer (a share code's too).
 *
 * Threads: none; pure, no I/O.
 */
#ifndef CROUPIER_REPLAY_H
#define CROUPIER_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "client.pb-c.h"

/* Whose cards, besides his own, a viewer sees after the round. */
typedef enum {
    REPLAY_SHOW_NONE = 0, /* nobody else's */
    REPLAY_SHOW_DOWN,     /* the hands shown down at the end (hold'em's showdown) */
    REPLAY_SHOW_ALL,      /* every hand dealt: from the deal on */
} replay_show_t;

typedef struct {
    const char *game; /* NULL: the row of every game not listed */
    replay_show_t show;
    bool deck_public;   /* the record's deck and deck_nonce */
    bool holdem_board;  /* the board between the actions, by the hold'em streets */
    const char *policy; /* Replay.policy: the name docs/replays.md gives the row */
    bool shoes_public;  /* blackjack: the record's shoes and the retired shoes it opens */
    bool compare_shows; /* Zha Jin Hua: a compare's two players see each other's hand (the
                         * record's compare actions name their target) */
} replay_rules_t;

/* The rules of game (never NULL: the default row, REPLAY_SHOW_NONE, for a game not listed). */
const replay_rules_t *replay_rules(const char *game);

/* The seat player was dealt into the record's round, or -1. */
int replay_seat_of(const json_t *rec, uint64_t player);

/* Whether the record is a round's, completed or voided (a table record is not: it has "record"). */
bool replay_is_round(const json_t *rec);

/*
 * The replay of the record for viewer (a player id; 0: nobody dealt in). Returns a Replay
 * whose every part is malloc'd (free it with croupier__replay__free_unpacked(r, NULL)), or NULL
 * with the reason in err (errlen bytes): a record that is no round, a field of the wrong type, a
 * card that is no card, out of memory.
 */
Croupier__Replay *replay_build(const json_t *rec, uint64_t viewer, char *err, size_t errlen);

/*
 * Blackjack (docs/fairness.md "Blackjack's shoes"): the id of the table record of the table that
 * dealt round_id on its server -- the round id with round number 0, service:slot:epoch:desk:0
 * (docs/hand-history.md "Table records") -- into out (outlen bytes). Its seen key finds the
 * table's shoe retirement record as a round's seen key finds the round (a record written before
 * the shoe index, which finds it by its commitment). 0, or -EINVAL (not a round id of five
 * fields, a round number 0, or out too small).
 */
int replay_table_record_id(const char *round_id, char *out, size_t outlen);

/* Whether r (a built replay) dealt from a shoe it does not reveal: a later record may. */
bool replay_wants_shoe_reveal(const Croupier__Replay *r);

/*
 * The commitments of the shoes r dealt from and does not reveal, each once, into out (at most
 * max; borrowed from r): the keys of the shoe index (docs/hand-history.md "The shoe index":
 * <history tag>:seen:shoe:<commitment> names the record that revealed the shoe). A commitment
 * that is not 64 lower-case hex digits, as records write them, is left out. Returns how many.
 */
size_t replay_shoes_unrevealed(const Croupier__Replay *r, const char **out, size_t max);

/*
 * Adds to r, a blackjack round's replay, the reveals of `later` -- any record with a
 * `shoe_reveal`: the round that retired a shoe r dealt from (found by the shoe index,
 * replay_shoes_unrevealed()), wherever its table dealt it, or a table's shoe retirement record
 * -- of the shoes r dealt from and does not reveal yet: the same shoe number and commitment. A
 * retired shoe deals no more, so its order is no secret to any viewer of a round dealt from it;
 * this is how a shoe reaches the players of its rounds that the retiring round did not deal in
 * (docs/replays.md, the SDK's shoeRecordFromReplay() + verifyShoe()). Entries that are not a
 * shoe's reveal are skipped. Returns the number added (0: none fits).
 */
int replay_add_shoe_reveals(Croupier__Replay *r, const json_t *later);

/*
 * The deck position of a card under the game's dealing rule (docs/fairness.md "Where each card
 * was dealt"): the k-th card (from 0) of seat `seat`, or the k-th card of the board (seat -1,
 * hold'em), in a round whose button is `button` and whose seats dealt in are seats[0..nseats)
 * (any order). Hold'em: one card at a time from the button's left, twice round, then a burn
 * before the flop's three cards, the turn and the river; Zha Jin Hua: one card at a time from
 * the button's left, three times round; the shedding games: replay_deal_as_set() (the button
 * ignored; the seats must be the game's 0 .. seats-1). Returns the position, or -1 (a game
 * without the rule, a seat not dealt in, k past the cards it gets).
 */
int replay_deal_position(const char *game, int button, const uint32_t *seats, size_t nseats,
                         int seat, size_t k);
/*
 * Whether the game shows a seat's cards as a set (in the game's order, not the order dealt): the
 * shedding games (Dou Dizhu, Run Fast, Big Two, Guandan). replay_deal_position() then gives the
 * positions of a seat's k-th card dealt (seat s of k seats: k-th card at position k * seats + s,
 * the button playing no part; the table's cards after every hand), and a seat's shown cards must
 * be the cards at those positions as a multiset. Such a game's per-card deal is a match hall's
 * duplicate deal (docs/fairness.md "Duplicate deals").
 */
bool replay_deal_as_set(const char *game);

/*
 * A player's check of a replay under the per-card commitment (Replay.deck_scheme 2; what the
 * SDK's verifyDealCards() does): the leaves give deck_commitment (and `commitment`, the one the
 * player's Deals carried, when not NULL); every opening matches its leaf; every card the replay
 * shows (the seats' cards, the board) is opened at the position the game's dealing rule gives
 * it, with that card (a shedding game's hand, a set: at the positions the deal gave that seat,
 * as a multiset); and nothing else is opened. Returns 0 (the cards check), -EBADMSG (a
 * mismatch: the reason in err) or -EINVAL (not a per-card replay, no button, a game without a
 * dealing rule; the reason in err).
 */
int replay_check_cards(const Croupier__Replay *r, const uint8_t *commitment, char *err,
                       size_t errlen);

/* The wire code (docs/protocol.md "Cards") of a history card ("As", "Td", jokers "Xb" "Xr"), or
 * -1. */
int replay_card_code(const char *text);

#endif
