/*
 * bj_engine -- blackjack on the table kit (engine/tk.h): the adapter between the kit and the
 * pure rules (blackjack.h, docs/rules/blackjack.md). bj_engine.h says what the engine does; the
 * kit holds seats, buy-ins, seat accounts, settlements, turn timers, resume, drain and void.
 * This file maps the rules' events to the protocol (the built-in BlackjackAction and
 * BlackjackState members of Action and Snapshot) and the kit's calls to the rules.
 *
 * One kit round is one betting window and everything it leads to: round_start opens the window
 * (a timer of the game's own), the deal, the insurance window (another), each hand's decisions
 * (tk_turn; the kit's timeout is the rules' timeout input: the hand stands) and the dealer, then
 * tk_round_end_house() with the deltas of the seats that bet and the house's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bj_engine.h"
#include "blackjack.h"
#include "clock.h"
#include "deck.h"
#include "log.h"
#include "tk.h"

#define BJ_GAME "blackjack"
#define BJ_STACK_ROUNDS 64 /* CROUPIER_BJ_TEST_STACK entries */
#define BJ_STACK_CARDS 64  /* cards per entry */

static long bj_bet_ms = 10000, bj_decks = 6, bj_max_mult = 100, bj_sitout_after = 2;

/* The engine's own flags beside the kit's (--bj-seats, -action-ms, -gap-ms, -buyin, ...). */
static const config_flag_t bj_flags[] = {
    {"bj-bet-ms", CONFIG_INT, "10000", "the betting window (ms)", &bj_bet_ms, 1, 3600000},
    {"bj-decks", CONFIG_INT, "6", "decks in the shoe", &bj_decks, 1, BJ_MAX_DECKS},
    {"bj-max-mult", CONFIG_INT, "100", "largest bet, in table minimums (the stake)", &bj_max_mult,
     1, 1000000},
    {"bj-sitout-after", CONFIG_INT, "2", "betting windows without a bet before a seat sits out",
     &bj_sitout_after, 1, 1000},
    {0},
};

/* CROUPIER_BJ_TEST_STACK, parsed once at engine start (main thread, before any table) and only
 * read afterwards. */
static int bj_nstacked;
static uint8_t bj_stacked[BJ_STACK_ROUNDS][BJ_STACK_CARDS];
static int bj_nstacked_cards[BJ_STACK_ROUNDS];

enum { BJ_WIN_BET = 1, BJ_WIN_INSURANCE = 2 }; /* the windows timed by the game (tk_timer) */

/* One table's game: the rules' table, what the kit's seats were when it last looked, and the
 * Snapshot state it hands out (tk_snapshot_msg: the memory stays here). */
typedef struct {
    tk_table_t *t;
    bj_rules_t rules;
    bj_table_t *core;
    uint64_t core_player[BJ_MAX_SEATS]; /* who sits at the rules' table */
    int64_t pre_bet[BJ_MAX_SEATS];      /* a bet for the next window (0: none) */
    int64_t bet[BJ_MAX_SEATS];          /* the bet of this round (0: none) */
    int missed[BJ_MAX_SEATS];           /* windows in a row without a bet */
    /* The running window's timer: cookie = gen << 2 | kind, so a stale expiry is recognised. */
    rt_timer_id_t timer;
    bool timer_armed;
    uint64_t timer_gen;
    int64_t window_end_ms;
    bool settled; /* the rules settled inside the input just made */
    bool voiding; /* the kit voids the round: the rules' settlement is not the round's end */
    bj_settlement_t st;
    Croupier__BlackjackState snap;
    Croupier__BlackjackHand hands[BJ_MAX_SEATS * BJ_MAX_HANDS];
    Croupier__BlackjackHand *hptr[BJ_MAX_SEATS * BJ_MAX_HANDS];
    uint8_t cards[BJ_MAX_SEATS * BJ_MAX_HANDS][BJ_MAX_CARDS];
    uint8_t dealer[BJ_MAX_CARDS];
    uint8_t snap_commitment[DECK_COMMIT_LEN]; /* the Snapshot's shoe commitment */
} bj_game_t;

/* ---- cards and names --------------------------------------------------------------------- */

uint8_t bj_engine_card_code(uint8_t card)
{
    if (card >= 52)
        return 0;
    int rank = card % 13, suit = card / 13;
    int prank = rank == 0 ? 14 : rank + 1;
    return (uint8_t)(prank << 2 | suit);
}

/* Parses "As" style names (ranks A23456789TJQK, suits cdhs) into core cards. */
static int bj_parse_card(const char *s, size_t n, uint8_t *out)
{
    static const char ranks[] = "A23456789TJQK", suits[] = "cdhs";
    if (n != 2 || s[0] == '\0' || s[1] == '\0')
        return -EINVAL;
    const char *r = strchr(ranks, s[0]), *u = strchr(suits, s[1]);
    if (r == NULL || u == NULL)
        return -EINVAL;
    *out = (uint8_t)((u - suits) * 13 + (r - ranks));
    return 0;
}

/* CROUPIER_BJ_TEST_STACK: rounds separated by ';', cards by ','. 0 or -EINVAL. */
static int bj_parse_stack(const char *spec)
{
    for (const char *p = spec; *p != '\0' && bj_nstacked < BJ_STACK_ROUNDS;) {
        const char *end = strchr(p, ';');
        const char *stop = end != NULL ? end : p + strlen(p);
        int n = 0;
        for (const char *q = p; q < stop;) {
            const char *c = memchr(q, ',', (size_t)(stop - q));
            size_t cl = (size_t)((c != NULL ? c : stop) - q);
            if (cl > 0 &&
                (n == BJ_STACK_CARDS || bj_parse_card(q, cl, &bj_stacked[bj_nstacked][n++]) != 0))
                return -EINVAL;
            q += cl + (c != NULL);
        }
        bj_nstacked_cards[bj_nstacked++] = n;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return 0;
}

static Croupier__ErrorCode bj_code(int rc, bj_phase_t phase)
{
    switch (rc) {
    case BJ_ERR_TURN:
        return CROUPIER__ERROR_CODE__NOT_YOUR_TURN;
    case BJ_ERR_DOUBLE_AFTER_HIT:
        return CROUPIER__ERROR_CODE__ILLEGAL_MOVE;
    case BJ_ERR_PHASE:
        return phase == BJ_PHASE_IDLE ? CROUPIER__ERROR_CODE__NO_ROUND
                                      : CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    case BJ_ERR_INVALID:
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    default: /* SPLIT_UNEQUAL, NOT_ALLOWED, ALREADY, SITTING_OUT, SEAT_EMPTY, ... */
        return CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    }
}

static Croupier__BlackjackMove bj_move_of(bj_action_t a)
{
    static const Croupier__BlackjackMove moves[] = {
        CROUPIER__BLACKJACK_MOVE__BJ_HIT, CROUPIER__BLACKJACK_MOVE__BJ_STAND,
        CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE, CROUPIER__BLACKJACK_MOVE__BJ_SPLIT,
        CROUPIER__BLACKJACK_MOVE__BJ_SURRENDER};
    return (unsigned)a < BJ_ACT_COUNT ? moves[a] : CROUPIER__BLACKJACK_MOVE__BJ_STAND;
}

static const char *bj_action_name(bj_action_t a)
{
    static const char *names[] = {"hit", "stand", "double", "split", "surrender"};
    return (unsigned)a < BJ_ACT_COUNT ? names[a] : "?";
}

/* ---- windows ----------------------------------------------------------------------------- */

static void bj_window_cancel(bj_game_t *b)
{
    if (b->timer_armed)
        tk_timer_cancel(b->t, b->timer);
    b->timer_armed = false;
    b->timer_gen++;
}

static void bj_window_open(bj_game_t *b, int kind, int64_t ms)
{
    bj_window_cancel(b);
    if (tk_timer(b->t, ms, b->timer_gen << 2 | (uint64_t)kind, &b->timer) == 0) {
        b->timer_armed = true;
        b->window_end_ms = clock_mono_ms() + ms;
    }
}

/* A Turn pushed to everyone: a betting window's (min/max) or an insurance offer's (to_call). */
static void bj_push_turn(bj_game_t *b, Croupier__Turn *tu)
{
    Croupier__ServerMessage m = CROUPIER__SERVER_MESSAGE__INIT;
    m.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
    m.turn = tu;
    tk_push_all(b->t, &m);
}

/* The betting window opened: every seated player is told what they may bet, also a seat not in
 * this round (sitting out): its bet is the next window's and brings it back. */
static void bj_on_betting_open(bj_game_t *b)
{
    bj_window_open(b, BJ_WIN_BET, bj_bet_ms);
    memset(b->bet, 0, sizeof b->bet);
    for (int i = 0; i < b->rules.seats; i++) {
        if (tk_seat_player(b->t, i) == 0)
            continue;
        int64_t stack = tk_seat_stack(b->t, i);
        Croupier__Turn tu = CROUPIER__TURN__INIT;
        tu.seat = (uint32_t)i;
        tu.time_left_ms = (uint32_t)bj_bet_ms;
        tu.has_min_amount = tu.has_max_amount = true;
        tu.min_amount = b->rules.min_bet;
        tu.max_amount = stack < b->rules.max_bet ? stack : b->rules.max_bet;
        bj_push_turn(b, &tu);
    }
}

static void bj_on_insurance_open(bj_game_t *b)
{
    int64_t ms = tk_settings(b->t)->action_ms;
    bj_window_open(b, BJ_WIN_INSURANCE, ms);
    for (int i = 0; i < b->rules.seats; i++) {
        if (b->bet[i] == 0)
            continue;
        Croupier__Turn tu = CROUPIER__TURN__INIT;
        tu.seat = (uint32_t)i;
        tu.time_left_ms = (uint32_t)ms;
        tu.has_to_call = true;
        tu.to_call = b->bet[i] / 2; /* the insurance bet */
        bj_push_turn(b, &tu);
    }
}

/* ---- the rules' events ------------------------------------------------------------------- */

/* A card dealt (seat -1: the dealer's), face up to everyone, or the hole card face down; with
 * the shoe it came from, its position there and the shoe's commitment. history: the card the
 * hand history records (the hole card at its draw, so the record's cards are in shoe order),
 * 0xFF for none (the hole card shown: recorded when dealt). */
static void bj_push_card(bj_game_t *b, const bj_event_t *ev, int seat, uint8_t card,
                         uint8_t history)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Deal deal = CROUPIER__DEAL__INIT;
    uint8_t code = bj_engine_card_code(card);
    deal.has_seat = deal.has_hand = seat >= 0;
    deal.seat = seat >= 0 ? (uint32_t)seat : 0;
    deal.hand = seat >= 0 ? (uint32_t)ev->hand : 0;
    deal.round_id = (char *)tk_round_id(b->t);
    if (card == BJ_CARD_HIDDEN) {
        deal.has_count = true;
        deal.count = 1;
    } else {
        deal.has_cards = true;
        deal.cards = (ProtobufCBinaryData){1, &code};
    }
    if (ev->commitment != NULL) {
        deal.has_deck_commitment = deal.has_shoe = deal.has_shoe_position = true;
        deal.deck_commitment = (ProtobufCBinaryData){DECK_COMMIT_LEN, (uint8_t *)ev->commitment};
        deal.shoe = ev->shoe_id;
        deal.shoe_position = (uint32_t)ev->shoe_pos;
    }
    if (history != BJ_CARD_HIDDEN)
        tk_history_card(b->t, seat, bj_engine_card_code(history));
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
    sm.deal = &deal;
    tk_push_all(b->t, &sm);
}

/*
 * The round's record names every shoe it dealt from (docs/hand-history.md "Blackjack's shoes"):
 * "shoes": [{"shoe", "commitment", "first", "count"}], first the position of the round's first
 * card from that shoe, count the cards dealt from it (two entries when the shoe ran dry and a
 * refill followed). The cards themselves are the record's "cards", in the same order.
 */
static void bj_history_shoe_card(bj_game_t *b, const bj_event_t *ev)
{
    json_t *h = tk_history(b->t);
    if (h == NULL)
        return;
    json_t *shoes = json_object_get(h, "shoes");
    if (shoes == NULL) {
        shoes = json_array();
        json_object_set_new(h, "shoes", shoes);
    }
    size_t n = json_array_size(shoes);
    json_t *last = n > 0 ? json_array_get(shoes, n - 1) : NULL;
    if (last != NULL &&
        (uint64_t)json_integer_value(json_object_get(last, "shoe")) == ev->shoe_id) {
        json_object_set_new(last, "count",
                            json_integer(json_integer_value(json_object_get(last, "count")) + 1));
        return;
    }
    char hex[2 * DECK_COMMIT_LEN + 1];
    deck_hex(ev->commitment, DECK_COMMIT_LEN, hex);
    json_array_append_new(shoes, json_pack("{s:I,s:s,s:i,s:i}", "shoe", (json_int_t)ev->shoe_id,
                                           "commitment", hex, "first", ev->shoe_pos, "count", 1));
}

/*
 * A shoe retired (no card of it will be dealt): its order (the core's card bytes, 0..51 = suit
 * x 13 + rank), nonce and the cards dealt from it go out as {"shoe", "commitment", "deck",
 * "nonce", "dealt"} (docs/hand-history.md "Blackjack's cards, actions and shoes"). In a round,
 * into that round's record's "shoe_reveal" (the record leaves the server only after the
 * round); outside one (the table closes, bj_table_close), into a table record of its own,
 * "record":"shoe_retirement" (docs/hand-history.md "Table records").
 */
static void bj_history_shoe_reveal(bj_game_t *b, const bj_event_t *ev)
{
    char hex[2 * BJ_MAX_DECKS * 52 + 1];
    json_t *o = json_pack("{s:I}", "shoe", (json_int_t)ev->shoe_id);
    deck_hex(ev->commitment, DECK_COMMIT_LEN, hex);
    json_object_set_new(o, "commitment", json_string(hex));
    deck_hex(ev->shoe_cards, (size_t)ev->amount, hex);
    json_object_set_new(o, "deck", json_string(hex));
    deck_hex(ev->shoe_nonce, DECK_NONCE_LEN, hex);
    json_object_set_new(o, "nonce", json_string(hex));
    json_object_set_new(o, "dealt", json_integer(ev->shoe_pos));
    json_t *h = tk_history(b->t);
    if (h != NULL) {
        json_t *rev = json_object_get(h, "shoe_reveal");
        if (rev == NULL) {
            rev = json_array();
            json_object_set_new(h, "shoe_reveal", rev);
        }
        json_array_append_new(rev, o);
        return;
    }
    int rc = tk_table_record(b->t, "shoe_retirement", json_pack("{s:[o]}", "shoe_reveal", o));
    if (rc != 0)
        log_emit(LOG_WARN, "bj_shoe_unrevealed", "{s:I,s:i,s:s}", "shoe", (json_int_t)ev->shoe_id,
                 "errno", -rc, "msg",
                 "a shoe retired outside a round and its table record could not be queued");
}

/* A move made (a bet, an insurance decision, a hand's action), as Play to everyone. */
static void bj_push_play(bj_game_t *b, int seat, Croupier__BlackjackAction *ba, bool timed_out)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play play = CROUPIER__PLAY__INIT;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    act.kind_case = CROUPIER__ACTION__KIND_BLACKJACK;
    act.blackjack = ba;
    play.seat = (uint32_t)seat;
    play.action = &act;
    play.has_timed_out = ba->move != CROUPIER__BLACKJACK_MOVE__BJ_BET &&
                         ba->move != CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE;
    play.timed_out = timed_out;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &play;
    tk_push_all(b->t, &sm);
}

/* The rules' events, in order, inside the input that caused them: pushes, history and timers.
 * The round's end waits until the input has returned (bj_after_input): the kit's round end
 * calls back into the game, and the rules must not be re-entered from their own callback. */
static void bj_on_event(void *ctx, const bj_event_t *ev)
{
    bj_game_t *b = ctx;
    Croupier__BlackjackAction ba = CROUPIER__BLACKJACK_ACTION__INIT;
    switch (ev->type) {
    case BJ_EV_BETTING_OPEN:
        bj_on_betting_open(b);
        break;
    case BJ_EV_BET:
        b->bet[ev->seat] = ev->amount;
        ba.move = CROUPIER__BLACKJACK_MOVE__BJ_BET;
        ba.has_amount = true;
        ba.amount = ev->amount;
        tk_history_action(b->t, ev->seat, "bet", ev->amount);
        bj_push_play(b, ev->seat, &ba, false);
        break;
    case BJ_EV_SHOE_RETIRED:
        bj_history_shoe_reveal(b, ev);
        break;
    case BJ_EV_CARD:
        bj_history_shoe_card(b, ev);
        bj_push_card(b, ev, ev->seat, ev->card,
                     ev->card == BJ_CARD_HIDDEN ? ev->hole_card : ev->card);
        break;
    case BJ_EV_HOLE:
        bj_push_card(b, ev, -1, ev->card, BJ_CARD_HIDDEN);
        break;
    case BJ_EV_INSURANCE_OPEN:
        bj_on_insurance_open(b);
        break;
    case BJ_EV_INSURANCE:
        ba.move = CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE;
        ba.has_insure = true;
        ba.insure = ev->card == BJ_INS_TAKEN || ev->card == BJ_INS_EVEN_MONEY;
        tk_history_action(b->t, ev->seat,
                          ev->card == BJ_INS_EVEN_MONEY ? "even_money"
                          : ba.insure                   ? "insurance"
                                                        : "no_insurance",
                          ev->amount);
        bj_push_play(b, ev->seat, &ba, false);
        break;
    case BJ_EV_TURN: {
        Croupier__Turn turn = CROUPIER__TURN__INIT;
        bj_window_cancel(b);
        turn.has_hand = true;
        turn.hand = (uint32_t)ev->hand;
        tk_turn(b->t, ev->seat, &turn);
        break;
    }
    case BJ_EV_ACTION:
        ba.move = bj_move_of(ev->action);
        ba.has_hand = true;
        ba.hand = (uint32_t)ev->hand;
        tk_history_action(b->t, ev->seat, bj_action_name(ev->action), ev->amount);
        bj_push_play(b, ev->seat, &ba, ev->timed_out);
        break;
    case BJ_EV_NO_ROUND: /* the window closed without a bet */
        memset(&b->st, 0, sizeof b->st);
        b->settled = true;
        break;
    case BJ_EV_SETTLED:
        if (!b->voiding) {
            b->st = *ev->settlement;
            b->settled = true;
        }
        break;
    default: /* SHUFFLE (its commitment goes out on the Deals), SEAT, PEEK */
        break;
    }
}

/*
 * After every input to the rules: when they settled, the kit's round ends with the house as the
 * counterparty. A seat that bet gets its delta (0 if the rules voided the round); a seat dealt
 * into the kit's round that let the window pass gets 0 and counts a missed window, and sits out
 * after bj_sitout_after of them in a row (any bet brings it back, bj_on_bet).
 */
static void bj_after_input(bj_game_t *b)
{
    if (!b->settled)
        return;
    b->settled = false;
    bj_window_cancel(b);
    int64_t delta[TK_MAX_SEATS] = {0}, house = 0;
    for (int i = 0; i < b->rules.seats; i++) {
        if (!tk_seat_playing(b->t, i))
            continue;
        if (i < b->st.nseats && b->st.seats[i].played) {
            delta[i] = b->st.voided ? 0 : b->st.seats[i].delta;
            house -= delta[i];
            b->missed[i] = 0;
        } else if (++b->missed[i] >= bj_sitout_after) {
            tk_seat_sit_out(b->t, i, true);
        }
    }
    if (b->st.voided)
        tk_history_action(b->t, -1, "void", 0); /* the shoe ran out: every bet returned */
    if (tk_last_round(b->t))
        bj_table_retire_shoe(b->core); /* no round follows here: revealed in this one's record */
    tk_round_end_house(b->t, delta, house, 0);
}

/* ---- the kit's calls --------------------------------------------------------------------- */

static void *bj_table_new(tk_table_t *t, const char *game, int64_t stake)
{
    (void)game;
    bj_game_t *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->t = t;
    bj_rules_default(&b->rules);
    b->rules.decks = (int)bj_decks;
    b->rules.seats = tk_seats(t);
    b->rules.min_bet = stake;
    b->rules.max_bet = stake <= BJ_MAX_BET / bj_max_mult ? stake * bj_max_mult : 0;
    char err[160] = "";
    if (bj_rules_validate(&b->rules, err, sizeof err) != 0 ||
        bj_table_create(&b->rules, NULL, bj_on_event, b, &b->core) != 0) {
        log_emit(LOG_ERROR, "bj_table_rules", "{s:I,s:s}", "stake", (json_int_t)stake, "error",
                 err);
        free(b);
        return NULL;
    }
    return b;
}

static void bj_table_free(void *g)
{
    bj_game_t *b = g;
    bj_table_destroy(b->core);
    free(b);
}

/* The rules' table gets the kit's seats: who sits where, and (sitting out) who is not dealt
 * into this round. The rules are between rounds here. */
static void bj_sync_seats(bj_game_t *b)
{
    for (int i = 0; i < b->rules.seats; i++) {
        uint64_t p = tk_seat_player(b->t, i);
        if (b->core_player[i] != p) {
            if (b->core_player[i] != 0)
                bj_table_leave(b->core, i);
            b->core_player[i] = p != 0 && bj_table_sit(b->core, i, p) == 0 ? p : 0;
        }
        if (b->core_player[i] != 0)
            bj_table_sit_out(b->core, i, !tk_seat_playing(b->t, i));
    }
}

/* Opens the betting window of the round (the test stack first, if any for this round), then
 * places the bets made for it between rounds (they were checked when made). */
static int bj_round_start(tk_table_t *t, void *g)
{
    bj_game_t *b = g;
    bj_sync_seats(b);
    uint64_t n = tk_round_seq(t) - 1;
    if (n < (uint64_t)bj_nstacked && bj_nstacked_cards[n] > 0) {
        int rc = bj_table_stack_shoe(b->core, bj_stacked[n], bj_nstacked_cards[n]);
        if (rc != 0)
            log_emit(LOG_WARN, "bj_test_stack_failed", "{s:I,s:s}", "round", (json_int_t)n, "error",
                     bj_strerror(rc));
    }
    int rc = bj_table_open_betting(b->core);
    if (rc != 0) {
        log_emit(LOG_ERROR, "bj_open_betting_failed", "{s:s}", "error", bj_strerror(rc));
        return -EINVAL;
    }
    for (int i = 0; i < b->rules.seats && bj_table_phase(b->core) == BJ_PHASE_BETTING; i++) {
        int64_t amount = b->pre_bet[i];
        b->pre_bet[i] = 0;
        if (amount > 0 && tk_seat_playing(t, i) && amount <= tk_seat_stack(t, i) &&
            bj_table_bet(b->core, i, amount) == 0)
            b->missed[i] = 0;
    }
    bj_after_input(b);
    return 0;
}

/* Chips the seat has at stake in the running round (every hand's bet plus insurance). */
static int64_t bj_committed(const bj_snapshot_t *snap, int seat)
{
    const bj_seat_t *st = &snap->seats[seat];
    if (!st->in_round)
        return 0;
    int64_t c = st->insurance_bet;
    for (int h = 0; h < st->nhands; h++)
        c += st->hands[h].bet;
    return st->nhands == 0 ? c + st->bet : c; /* betting: no hand dealt yet */
}

/* A BJ_BET: in the window by a seat dealt into the round, the bet; otherwise, by a seat not
 * betting in the running round, the bet for the next window (placed when it opens), which also
 * brings a seat that sits out back. */
static Croupier__ErrorCode bj_on_bet(bj_game_t *b, int seat, int64_t amount, const char **why)
{
    int64_t stack = tk_seat_stack(b->t, seat);
    /* A seated player without chips: the table closed (cashed everyone out); a seat below the
     * table minimum after a round is busted (unseated) by the kit. */
    if (stack == 0) {
        *why = "table closing: no next round";
        return CROUPIER__ERROR_CODE__NO_ROUND;
    }
    if (amount < b->rules.min_bet) {
        *why = "bet below the table minimum";
        return CROUPIER__ERROR_CODE__BET_BELOW_MIN;
    }
    if (amount > b->rules.max_bet) {
        *why = "bet above the table maximum";
        return CROUPIER__ERROR_CODE__BET_ABOVE_MAX;
    }
    if (amount > stack) {
        *why = "bet larger than your chips at the table";
        return CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS;
    }
    bj_snapshot_t snap;
    bj_table_snapshot(b->core, &snap);
    bool playing = tk_seat_playing(b->t, seat);
    if (playing && snap.phase == BJ_PHASE_BETTING) {
        int rc = snap.seats[seat].in_round ? BJ_ERR_ALREADY : bj_table_bet(b->core, seat, amount);
        if (rc != 0) {
            *why = bj_strerror(rc);
            return bj_code(rc, snap.phase);
        }
        b->missed[seat] = 0;
        bj_after_input(b);
        return CROUPIER__ERROR_CODE__OK;
    }
    if (playing && snap.phase != BJ_PHASE_IDLE && snap.seats[seat].in_round) {
        *why = "betting is closed for this round";
        return CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    }
    if (b->pre_bet[seat] != 0) {
        *why = "a bet for the next round is already placed";
        return CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    }
    b->pre_bet[seat] = amount;
    b->missed[seat] = 0;
    tk_seat_sit_out(b->t, seat, false);
    return CROUPIER__ERROR_CODE__OK;
}

static Croupier__ErrorCode bj_on_insurance(bj_game_t *b, int seat, bool take, const char **why)
{
    bj_snapshot_t snap;
    bj_table_snapshot(b->core, &snap);
    const bj_seat_t *st = &snap.seats[seat];
    if (take && snap.phase == BJ_PHASE_INSURANCE && st->in_round &&
        st->insurance == BJ_INS_PENDING && !(st->hands[0].flags & BJ_HAND_BLACKJACK) &&
        bj_committed(&snap, seat) + st->bet / 2 > tk_seat_stack(b->t, seat)) {
        *why = "not enough chips at the table for insurance";
        return CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS;
    }
    int rc = bj_table_insurance(b->core, seat, take);
    if (rc != 0) {
        *why = bj_strerror(rc);
        return bj_code(rc, snap.phase);
    }
    bj_after_input(b);
    return CROUPIER__ERROR_CODE__OK;
}

static Croupier__ErrorCode bj_on_play(bj_game_t *b, int seat, bj_action_t a,
                                      const Croupier__BlackjackAction *ba, const char **why)
{
    bj_snapshot_t snap;
    bj_table_snapshot(b->core, &snap);
    bool on_turn = snap.phase == BJ_PHASE_PLAYERS && snap.turn_seat == seat;
    if (on_turn && ba->has_hand && (int)ba->hand != snap.turn_hand) {
        *why = "that hand is not on turn";
        return CROUPIER__ERROR_CODE__NOT_YOUR_TURN;
    }
    if (on_turn && (snap.allowed & BJ_ACT_BIT(a)) && (a == BJ_ACT_DOUBLE || a == BJ_ACT_SPLIT)) {
        const bj_seat_t *st = &snap.seats[seat];
        int64_t extra = a == BJ_ACT_DOUBLE ? st->hands[snap.turn_hand].bet : st->bet;
        if (bj_committed(&snap, seat) + extra > tk_seat_stack(b->t, seat)) {
            *why = a == BJ_ACT_DOUBLE ? "not enough chips at the table to double"
                                      : "not enough chips at the table to split";
            return CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS;
        }
    }
    int rc = bj_table_act(b->core, seat, a);
    if (rc != 0) {
        *why = bj_strerror(rc);
        return bj_code(rc, snap.phase);
    }
    bj_after_input(b);
    return CROUPIER__ERROR_CODE__OK;
}

/* Every action of a seated player (any_time_actions), with its own member of Action.kind. */
static Croupier__ErrorCode bj_action(tk_table_t *t, void *g, int seat, const ProtobufCMessage *m,
                                     const char **why)
{
    bj_game_t *b = g;
    const Croupier__Action *a = (const Croupier__Action *)m;
    if (a->kind_case != CROUPIER__ACTION__KIND_BLACKJACK || a->blackjack == NULL) {
        *why = "this table plays blackjack";
        return CROUPIER__ERROR_CODE__WRONG_ENGINE;
    }
    const Croupier__BlackjackAction *ba = a->blackjack;
    int act;
    switch (ba->move) {
    case CROUPIER__BLACKJACK_MOVE__BJ_BET:
        if (!ba->has_amount) {
            *why = "amount required for BET";
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
        return bj_on_bet(b, seat, ba->amount, why);
    case CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE:
        if (!ba->has_insure) {
            *why = "insure required";
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
        act = -1;
        break;
    case CROUPIER__BLACKJACK_MOVE__BJ_HIT:
        act = BJ_ACT_HIT;
        break;
    case CROUPIER__BLACKJACK_MOVE__BJ_STAND:
        act = BJ_ACT_STAND;
        break;
    case CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE:
        act = BJ_ACT_DOUBLE;
        break;
    case CROUPIER__BLACKJACK_MOVE__BJ_SPLIT:
        act = BJ_ACT_SPLIT;
        break;
    case CROUPIER__BLACKJACK_MOVE__BJ_SURRENDER:
        act = BJ_ACT_SURRENDER;
        break;
    default:
        *why = "unknown blackjack move";
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
    if (!tk_seat_playing(t, seat)) {
        *why = "not in this round: bet for the next one";
        return CROUPIER__ERROR_CODE__NO_ROUND;
    }
    return act < 0 ? bj_on_insurance(b, seat, ba->insure, why)
                   : bj_on_play(b, seat, (bj_action_t)act, ba, why);
}

/* The decision turn timed out (or the seat is on trustee): the rules' timeout, the hand stands
 * (and every later hand of the seat). */
static void bj_timeout(tk_table_t *t, void *g, int seat)
{
    (void)t;
    bj_game_t *b = g;
    int turn_seat;
    if (bj_table_turn(b->core, &turn_seat, NULL) && turn_seat == seat) {
        bj_table_timeout(b->core);
        bj_after_input(b);
    }
}

/* A window's timer: the betting window closes (the deal, or no round) or undecided seats
 * decline insurance. */
static void bj_on_timer(tk_table_t *t, void *g, uint64_t cookie)
{
    (void)t;
    bj_game_t *b = g;
    if (cookie >> 2 != b->timer_gen || !b->timer_armed)
        return; /* replaced or cancelled meanwhile */
    b->timer_armed = false;
    bj_phase_t ph = bj_table_phase(b->core);
    int kind = (int)(cookie & 3);
    if ((kind == BJ_WIN_BET && ph == BJ_PHASE_BETTING) ||
        (kind == BJ_WIN_INSURANCE && ph == BJ_PHASE_INSURANCE)) {
        bj_table_timeout(b->core);
        bj_after_input(b);
    }
}

/* The kit voids the round (drain bound, shutdown): every bet goes back (the rules' void). */
static void bj_round_void(tk_table_t *t, void *g)
{
    bj_game_t *b = g;
    bj_window_cancel(b);
    b->voiding = true;
    if (bj_table_phase(b->core) != BJ_PHASE_IDLE)
        bj_table_void_round(b->core);
    if (tk_last_round(t))
        bj_table_retire_shoe(b->core); /* the table closes: the shoe is revealed in this record */
    b->voiding = false;
    b->settled = false;
}

/* The table closes for good with its shoe here (drained without a move, empty for idle_ms):
 * the shoe in use is retired, and -- outside a round -- revealed in a table record of its own
 * (bj_history_shoe_reveal), so every shoe the players were committed to is opened unless the
 * server dies (docs/fairness.md "Blackjack's shoes"). */
static void bj_table_close(tk_table_t *t, void *g)
{
    (void)t;
    bj_game_t *b = g;
    if (bj_table_phase(b->core) == BJ_PHASE_IDLE)
        bj_table_retire_shoe(b->core);
}

/* A seat changed hands: what the game kept for it (a bet for the next window, missed windows)
 * goes. The rules' table follows at the next round start (bj_sync_seats). */
static void bj_seat_changed(tk_table_t *t, void *g, int seat, bool seated)
{
    (void)t;
    (void)seated;
    bj_game_t *b = g;
    if (seat >= 0 && seat < BJ_MAX_SEATS) {
        b->pre_bet[seat] = 0;
        b->missed[seat] = 0;
    }
}

/* The BlackjackState of a Snapshot: every hand in the round, the dealer's visible cards, the
 * phase and the table limits; the time left of a betting or insurance window (a decision's is
 * the kit's). */
static void bj_snapshot(tk_table_t *t, void *g, int seat)
{
    (void)seat;
    bj_game_t *b = g;
    Croupier__Snapshot *s = tk_snapshot_msg(t);
    bj_snapshot_t snap;
    bj_table_snapshot(b->core, &snap);
    Croupier__BlackjackState *bs = &b->snap;
    *bs = (Croupier__BlackjackState)CROUPIER__BLACKJACK_STATE__INIT;
    bs->phase = snap.phase == BJ_PHASE_INSURANCE ? CROUPIER__BLACKJACK_PHASE__BJ_INSURANCE_OFFER
                : snap.phase == BJ_PHASE_PLAYERS ? CROUPIER__BLACKJACK_PHASE__BJ_PLAYING
                                                 : CROUPIER__BLACKJACK_PHASE__BJ_BETTING;
    if (b->timer_armed && s != NULL) {
        int64_t left = b->window_end_ms - clock_mono_ms();
        s->has_time_left_ms = true;
        s->time_left_ms = left > 0 ? (uint32_t)left : 0;
    }
    size_t nd = 0;
    for (int c = 0; c < snap.ndealer; c++)
        if (snap.dealer[c] != BJ_CARD_HIDDEN)
            b->dealer[nd++] = bj_engine_card_code(snap.dealer[c]);
    bs->has_dealer_cards = true;
    bs->dealer_cards = (ProtobufCBinaryData){nd, b->dealer};
    size_t nh = 0;
    for (int i = 0; i < b->rules.seats; i++) {
        const bj_seat_t *st = &snap.seats[i];
        if (!st->in_round)
            continue;
        for (int h = 0; h < (st->nhands > 0 ? st->nhands : 1); h++) {
            Croupier__BlackjackHand bh = CROUPIER__BLACKJACK_HAND__INIT;
            const bj_hand_t *hd = &st->hands[h];
            bh.seat = (uint32_t)i;
            bh.has_hand = bh.has_bet = bh.has_cards = bh.has_insured = true;
            bh.hand = (uint32_t)h;
            bh.bet = st->nhands > 0 ? hd->bet : st->bet;
            bh.cards = (ProtobufCBinaryData){0, b->cards[nh]};
            if (st->nhands > 0) {
                for (int c = 0; c < hd->ncards; c++)
                    b->cards[nh][bh.cards.len++] = bj_engine_card_code(hd->cards[c]);
                bh.has_doubled = bh.has_done = true;
                bh.doubled = (hd->flags & BJ_HAND_DOUBLED) != 0;
                bh.done = (hd->flags & BJ_HAND_DONE) != 0;
            }
            bh.insured = st->insurance == BJ_INS_TAKEN || st->insurance == BJ_INS_EVEN_MONEY;
            b->hands[nh] = bh;
            b->hptr[nh] = &b->hands[nh];
            nh++;
        }
    }
    bs->n_hands = nh;
    bs->hands = b->hptr;
    bs->has_min_bet = bs->has_max_bet = true;
    bs->min_bet = b->rules.min_bet;
    bs->max_bet = b->rules.max_bet;
    if (!snap.shoe_retired) { /* the shoe the next card comes from, and its commitment */
        bs->has_shoe = bs->has_shoe_dealt = true;
        bs->shoe = snap.shoe_id;
        bs->shoe_dealt = (uint32_t)snap.shoe_dealt;
        memcpy(b->snap_commitment, snap.shoe_commitment, DECK_COMMIT_LEN);
        if (s != NULL) {
            s->has_deck_commitment = true;
            s->deck_commitment = (ProtobufCBinaryData){DECK_COMMIT_LEN, b->snap_commitment};
        }
    }
    if (s != NULL) {
        s->state_case = CROUPIER__SNAPSHOT__STATE_BLACKJACK;
        s->blackjack = bs;
    }
}

/* Whole-table moves: the shoe goes with the table (docs/fairness.md "Blackjack's shoes"), so the
 * adopter deals on from the same position under the same number and commitment and reveals it
 * when it retires it. {"shoe": {"id", "len", "pos", "cut", "retired", "cards", "nonce",
 * "commitment"}} (hex). */
static json_t *bj_export_state(tk_table_t *t, void *g)
{
    (void)t;
    bj_game_t *b = g;
    bj_shoe_state_t sh;
    if (bj_table_export_shoe(b->core, &sh) != 0 || sh.len == 0)
        return NULL; /* mid-round, or no shoe (the generator failed): the adopter shuffles */
    char cards[2 * BJ_MAX_DECKS * 52 + 1], nonce[2 * DECK_NONCE_LEN + 1],
        commit[2 * DECK_COMMIT_LEN + 1];
    deck_hex(sh.cards, (size_t)sh.len, cards);
    deck_hex(sh.nonce, DECK_NONCE_LEN, nonce);
    deck_hex(sh.commitment, DECK_COMMIT_LEN, commit);
    return json_pack("{s:{s:I,s:i,s:i,s:i,s:b,s:s,s:s,s:s}}", "shoe", "id", (json_int_t)sh.id,
                     "len", sh.len, "pos", sh.pos, "cut", sh.cut, "retired", sh.retired, "cards",
                     cards, "nonce", nonce, "commitment", commit);
}

static int bj_import_state(tk_table_t *t, void *g, const json_t *state)
{
    (void)t;
    bj_game_t *b = g;
    bj_shoe_state_t local, *p = &local;
    memset(p, 0, sizeof *p);
    json_int_t id = 0;
    int len = 0, pos = 0, cut = 0, retired = 0;
    const char *cards = NULL, *nonce = NULL, *commit = NULL;
    if (json_unpack((json_t *)state, "{s:{s:I,s:i,s:i,s:i,s:b,s:s,s:s,s:s}}", "shoe", "id", &id,
                    "len", &len, "pos", &pos, "cut", &cut, "retired", &retired, "cards", &cards,
                    "nonce", &nonce, "commitment", &commit) != 0 ||
        id < 0 || deck_unhex(cards, p->cards, sizeof p->cards) != len ||
        deck_unhex(nonce, p->nonce, sizeof p->nonce) != DECK_NONCE_LEN ||
        deck_unhex(commit, p->commitment, sizeof p->commitment) != DECK_COMMIT_LEN)
        return -EINVAL;
    p->id = (uint64_t)id;
    p->len = len;
    p->pos = pos;
    p->cut = cut;
    p->retired = retired;
    return bj_table_import_shoe(b->core, p) == 0 ? 0 : -EINVAL;
}

static int64_t bj_min_stack(tk_table_t *t, void *g)
{
    (void)g;
    return tk_stake(t); /* the table minimum: a seat below it cannot bet */
}

static void bj_house_name(const char *service, char *buf, size_t len)
{
    snprintf(buf, len, "house.%s", service);
}

/* The engine runs: CROUPIER_BJ_TEST_STACK (tests only) is read, loudly. */
static void bj_engine_started(tk_engine_t *eng)
{
    (void)eng;
    const char *spec = getenv("CROUPIER_BJ_TEST_STACK");
    if (spec == NULL)
        return;
    if (bj_parse_stack(spec) != 0) {
        bj_nstacked = 0;
        log_emit(LOG_ERROR, "bj_bad_test_stack", "{s:s}", "value", spec);
        return;
    }
    log_emit(LOG_WARN, "bj_test_stack_in_use", "{s:i}", "rounds", bj_nstacked);
}

static const tk_game_t bj_game = {
    .watchable = true, /* docs/spectators.md */
    .engine = "persistent",
    .games = BJ_GAME,
    .proto_engine = CROUPIER__ENGINE__ENGINE_PERSISTENT,
    .min_seats = 2,
    .max_seats = BJ_MAX_SEATS,
    .min_players = 1,
    .house = true,
    .house_name = bj_house_name,
    .house_fund_op = "bj-house-fund", /* the id the engine used before the kit: funded once */
    .flag_prefix = "bj",
    .any_time_actions = true,
    .defaults = {.seats = 7,
                 .action_ms = 15000,
                 .time_bank_ms = 0,
                 .gap_ms = 1500,
                 .idle_ms = 60000,
                 .buyin = 100,
                 .min_buyin = 1, /* one table minimum: a move re-seats a player who lost a little */
                 .house_fund = 1000000000000L},
    .extra_flags = bj_flags,
    .action_desc = NULL, /* Action.blackjack, judged by bj_action */
    .table_create = bj_table_new,
    .table_destroy = bj_table_free,
    .round_start = bj_round_start,
    .action = bj_action,
    .timeout = bj_timeout,
    .round_void = bj_round_void,
    .snapshot = bj_snapshot,
    .seat_changed = bj_seat_changed,
    .min_stack = bj_min_stack,
    .engine_started = bj_engine_started,
    .on_timer = bj_on_timer,
    .export_state = bj_export_state,
    .import_state = bj_import_state,
    .table_close = bj_table_close,
};

TK_ENGINE(persistent, &bj_game, CROUPIER__ENGINE__ENGINE_PERSISTENT);
