/*
 * trad_engine -- the traditional engine on the table kit (engine/tk.h, docs/architecture.md §12):
 * the adapter between the kit and the unchanged shedding rules (shed_game.h and the four rule
 * sets; docs/rules/traditional-engine.md). The kit holds the lobby by (game, stake), the seats and
 * their escrow (one stack per seat, topped up after every deal), settlements, turn timers,
 * trustee, server bots, resume, drain and void; this file maps the kit's calls to the rules and
 * the rules' events to the protocol's shedding messages (SheddingAction, SheddingState). Each
 * table owns one shed_game_t for life, so Guandan's levels, tribute and teams carry over between
 * deals. trad_engine.h says what changed from the engine before the kit.
 */
#include "trad_engine.h"
#include "deck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/string.h>

#include "config.h"
#include "log.h"
#include "tk.h"
#include "xmalloc.h"

#define TRAD_MOVES_CAP 32768

/* The engine's own flags besides the kit's (CROUPIER_TRAD_RAKE_PERMILLE, _MAX_UNITS, _TEST_DECK);
 * the initial values are the defaults where no flags are parsed (tests, tools). */
static long trad_rake_permille = 0;
static long trad_units_override = 0;
static const char *trad_test_deck_text = NULL;

static const config_flag_t trad_flags[] = {
    {"trad-rake-permille", CONFIG_INT, "0", "rake, per mille of each winner's gain",
     &trad_rake_permille, 0, 1000},
    {"trad-max-units", CONFIG_INT, "0",
     "loss cap and escrow in stakes for every game (0: each game's own)", &trad_units_override, 0,
     1000000},
    {"trad-test-deck", CONFIG_STR, NULL,
     "tests only: GAME:CARDS, every deal of that one-deck game from this deck order",
     &trad_test_deck_text, 0, 0},
    {0},
};

/* CROUPIER_TRAD_TEST_DECK, parsed once when the engine starts (trad_engine_started). */
static const shed_rules_t *trad_deck_rules;
static shed_card_t trad_deck[SHED_MAX_CARDS];
static int trad_deck_n;

/* ---- pure helpers ------------------------------------------------------------------------ */

uint8_t trad_card_to_wire(shed_card_t c)
{
    int r = shed_card_rank(c);
    if (r == SHED_RANK_BJ)
        return FRAME_CARD_BLACK_JOKER;
    if (r == SHED_RANK_RJ)
        return FRAME_CARD_RED_JOKER;
    int suit = shed_card_suit(c);
    /* core suits: 0 diamonds, 1 clubs; wire: 0 clubs, 1 diamonds */
    int ws = suit == SHED_SUIT_D ? 1 : suit == SHED_SUIT_C ? 0 : suit;
    int wr = r == SHED_RANK_2 ? 2 : r + 3;
    return FRAME_CARD(wr, ws);
}

shed_card_t trad_card_from_wire(uint8_t code)
{
    if (!frame_card_valid(code))
        return SHED_CARD_NONE;
    int wr = FRAME_CARD_RANK(code), ws = FRAME_CARD_SUIT(code);
    if (wr == FRAME_RANK_JOKER)
        return ws == 0 ? SHED_CARD_BJ : SHED_CARD_RJ;
    int r = wr == 2 ? SHED_RANK_2 : wr - 3;
    int suit = ws == 0 ? SHED_SUIT_C : ws == 1 ? SHED_SUIT_D : ws;
    return shed_card_make(0, r, suit);
}

int trad_cards_from_wire(const uint8_t *codes, size_t n, int decks, shed_set_t hand,
                         shed_set_t *out)
{
    shed_set_t s = {{0, 0}};
    bool missing = false;
    for (size_t i = 0; i < n; i++) {
        shed_card_t c = trad_card_from_wire(codes[i]);
        if (c == SHED_CARD_NONE)
            return -EINVAL;
        shed_card_t c1 = (shed_card_t)(c + 64);
        bool used0 = shed_set_has(s, c), used1 = decks > 1 && shed_set_has(s, c1);
        if (used0 && (decks < 2 || used1))
            return -EINVAL; /* listed more often than the game has copies */
        shed_card_t pick = c;
        if (decks > 1 && (used0 || (!shed_set_has(hand, c) && shed_set_has(hand, c1))))
            pick = c1;
        if (!shed_set_has(hand, pick))
            missing = true;
        shed_set_add(&s, pick);
    }
    if (missing)
        return -ENOENT;
    *out = s;
    return 0;
}

int64_t trad_settle_cap(int64_t *delta, int seats, int64_t cap, int rake_permille)
{
    int64_t worst = 0, won = 0;
    for (int i = 0; i < seats; i++) {
        if (delta[i] < 0) {
            if (-delta[i] > worst)
                worst = -delta[i];
        } else {
            won += delta[i];
        }
    }
    if (cap > 0 && worst > cap && won > 0) {
        /* Scale losses by cap/worst (rounding down), then share the reduced pot among the
         * winners in proportion to their gains; the remainder goes to the first winner. */
        int64_t pot = 0;
        for (int i = 0; i < seats; i++) {
            if (delta[i] < 0) {
                delta[i] = -(int64_t)((__int128)(-delta[i]) * cap / worst);
                pot += -delta[i];
            }
        }
        int64_t given = 0;
        int first = -1;
        for (int i = 0; i < seats; i++) {
            if (delta[i] > 0) {
                if (first < 0)
                    first = i;
                delta[i] = (int64_t)((__int128)delta[i] * pot / won);
                given += delta[i];
            }
        }
        if (first >= 0)
            delta[first] += pot - given;
    }
    int64_t rake = 0;
    for (int i = 0; i < seats; i++) {
        if (delta[i] > 0) {
            int64_t cut = delta[i] * rake_permille / 1000;
            delta[i] -= cut;
            rake += cut;
        }
    }
    return rake;
}

int64_t trad_max_units(const char *game)
{
    if (strcmp(game, "doudizhu") == 0)
        return 96; /* landlord pays 2 x bid 3 x 2^4 (four doublings) */
    if (strcmp(game, "runfast") == 0)
        return 64; /* 16 cards, closed in (x2), one bomb (x2) */
    if (strcmp(game, "bigtwo") == 0)
        return 39; /* 13 cards left x 3 */
    if (strcmp(game, "guandan") == 0)
        return 3; /* a double win moves three levels */
    return 0;
}

/* ---- rule options (--trad-options) -------------------------------------------------------- */

/* Every option name, in the order trad_option_names() lists them. */
static const char *const trad_option_order[] = {"report-single", "four-with-two", "four-with-three",
                                                "bomb-pays", "a-three-fails"};

int trad_option_names(unsigned options, const char **names, int cap)
{
    int n = 0;
    for (size_t i = 0; i < sizeof trad_option_order / sizeof trad_option_order[0]; i++)
        if ((options & shed_option_from_name(trad_option_order[i])) && n < cap)
            names[n++] = trad_option_order[i];
    return n;
}

/* Writes the option names a rule set accepts ("report-single, four-with-two, ...") to buf. */
static void trad_option_list(const shed_rules_t *r, char *buf, size_t len)
{
    const char *names[8];
    int n = trad_option_names(shed_rules_options(r), names, 8);
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i > 0)
            strlcat(buf, ", ", len);
        strlcat(buf, names[i], len);
    }
    if (n == 0)
        strlcpy(buf, "none", len);
}

/*
 * Parses one game's option list "OPT[+OPT...]" (NUL-terminated, modified in place) for rules r
 * into *options and *units. Returns 0, or -EINVAL with the reason in err.
 */
static int trad_options_game(char *list, const shed_rules_t *r, unsigned *options, int *units,
                             char *err, size_t errlen)
{
    const char *game = shed_rules_name(r);
    char known[128];
    trad_option_list(r, known, sizeof known);
    *options = 0;
    *units = 0;
    if (*list == '\0') {
        snprintf(err, errlen, "%s: no options after '=' (options: %s)", game, known);
        return -EINVAL;
    }
    char *save = NULL;
    for (char *tok = strtok_r(list, "+", &save); tok != NULL; tok = strtok_r(NULL, "+", &save)) {
        char *colon = strchr(tok, ':');
        if (colon != NULL)
            *colon++ = '\0';
        unsigned f = shed_option_from_name(tok);
        if (f == 0 || (shed_rules_options(r) & f) == 0) {
            snprintf(err, errlen, "%s: '%s' is not an option of %s (options: %s)", game, tok, game,
                     known);
            return -EINVAL;
        }
        if (*options & f) {
            snprintf(err, errlen, "%s: option '%s' given twice", game, tok);
            return -EINVAL;
        }
        *options |= f;
        if (colon != NULL) {
            char *end;
            long u = strtol(colon, &end, 10);
            if (f != SHED_OPT_RF_BOMB_PAYS || *colon == '\0' || *end != '\0' || u < 1 || u > 1000) {
                snprintf(err, errlen,
                         f != SHED_OPT_RF_BOMB_PAYS
                             ? "%s: option '%s' takes no value"
                             : "%s: '%s:' wants bomb units 1..1000 (e.g. bomb-pays:10)",
                         game, tok);
                return -EINVAL;
            }
            *units = (int)u;
        }
    }
    if ((*options & SHED_OPT_RF_BOMB_PAYS) && *units == 0)
        *units = SHED_BOMB_UNITS_DEFAULT;
    return 0;
}

int trad_options_parse(const char *text, const char *games, trad_options_t *out, char *err,
                       size_t errlen)
{
    trad_options_t o = {0};
    char buf[512];
    if (text == NULL)
        text = "";
    if (strlen(text) >= sizeof buf) {
        snprintf(err, errlen, "too long (at most %zu characters)", sizeof buf - 1);
        return -EINVAL;
    }
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (eq == NULL) {
            snprintf(err, errlen, "'%s' is not GAME=OPTION[+OPTION...] (e.g. %s)", tok,
                     "runfast=report-single+four-with-two,guandan=a-three-fails");
            return -EINVAL;
        }
        *eq = '\0';
        const shed_rules_t *r = shed_rules_find(tok);
        if (r == NULL) {
            snprintf(err, errlen, "unknown game '%s' (doudizhu, runfast, bigtwo, guandan)", tok);
            return -EINVAL;
        }
        if (games != NULL && !config_list_has(games, tok)) { /* NULL: every game */
            snprintf(err, errlen, "%s has options but is not served (--games %s)", tok, games);
            return -EINVAL;
        }
        for (int i = 0; i < o.n; i++) {
            if (o.game[i].rules == r) {
                snprintf(err, errlen, "game '%s' given twice", tok);
                return -EINVAL;
            }
        }
        unsigned options;
        int units;
        if (trad_options_game(eq + 1, r, &options, &units, err, errlen) != 0)
            return -EINVAL;
        shed_config_t cfg = {
            .base_stake = 1, .rake_permille = 0, .options = options, .bomb_units = units};
        shed_game_t *g = shed_game_create(r, &cfg);
        if (g == NULL) {
            snprintf(err, errlen, "%s: the rules refuse this set of options", tok);
            return -EINVAL;
        }
        shed_game_destroy(g);
        o.game[o.n].rules = r;
        o.game[o.n].options = options;
        o.game[o.n].bomb_units = units;
        o.n++;
    }
    if (out != NULL)
        *out = o;
    return 0;
}

/* ---- the adapter: one table's game ------------------------------------------------------- */

/* One table: its rules' game for life, the deal's view the events build up, and the memory of
 * the SheddingState a Snapshot points at (the kit sends the Snapshot after snapshot() returns). */
typedef struct {
    tk_table_t *t;
    const shed_rules_t *rules;
    shed_game_t *g;
    int seats, decks;
    int64_t escrow; /* the loss cap of a deal: max_units x stake, also the seat's stack */
    int doublings;
    shed_set_t last_play;
    int last_play_seat;
    Croupier__SheddingState st;
    uint8_t hand[SHED_MAX_CARDS], last[SHED_MAX_CARDS], kitty[SHED_MAX_CARDS];
    uint32_t left[SHED_MAX_SEATS], team_levels[2];
    const char *opt_names[8];
} trad_table_t;

static const shed_set_t trad_none = {{0, 0}};

static int64_t trad_units(const char *game)
{
    return trad_units_override > 0 ? trad_units_override : trad_max_units(game);
}

/* Writes the wire codes of a set into buf (room for SHED_MAX_CARDS); returns the count. */
static size_t trad_set_wire(shed_set_t s, uint8_t *buf)
{
    shed_card_t cards[SHED_MAX_CARDS];
    int n = shed_set_list(s, cards);
    for (int i = 0; i < n; i++)
        buf[i] = trad_card_to_wire(cards[i]);
    return (size_t)n;
}

/* "what" and the cards as text ("play 3d4d", jokers Xb / Xr as the kit writes cards), for the
 * hand history's actions; buf has room for 2 * SHED_MAX_CARDS + 16. */
static void trad_action_text(const char *what, shed_set_t cards, char *buf, size_t len)
{
    static const char ranks[] = "??23456789TJQKAX", suits[] = "cdhs";
    uint8_t w[SHED_MAX_CARDS];
    size_t n = trad_set_wire(cards, w);
    size_t k = (size_t)snprintf(buf, len, "%s%s", what, n > 0 ? " " : "");
    for (size_t i = 0; i < n && k + 2 < len; i++) {
        unsigned r = FRAME_CARD_RANK(w[i]), s = FRAME_CARD_SUIT(w[i]);
        buf[k++] = ranks[r < sizeof ranks - 1 ? r : 0];
        buf[k++] = r == FRAME_RANK_JOKER ? "br??"[s] : suits[s];
    }
    buf[k] = '\0';
}

static void trad_history(tk_table_t *t, int seat, const char *what, shed_set_t cards,
                         int64_t amount)
{
    char buf[2 * SHED_MAX_CARDS + 16];
    trad_action_text(what, cards, buf, sizeof buf);
    tk_history_action(t, seat, buf, amount);
}

/*
 * The table's rule options, as Joined, a seat's own Deal and SheddingState carry them: names
 * (room for 8, must outlive the message) and their count; the bomb units with "bomb-pays".
 */
static size_t trad_table_options(const trad_table_t *x, const char **names,
                                 protobuf_c_boolean *has_units, uint32_t *units)
{
    unsigned o = shed_game_options(x->g);
    *has_units = (o & SHED_OPT_RF_BOMB_PAYS) != 0;
    *units = *has_units ? (uint32_t)shed_game_bomb_units(x->g) : 0;
    return (size_t)trad_option_names(o, names, 8);
}

/* Builds a wire action of kind move with cards (may be empty) or a bid. */
static void trad_wire_action(Croupier__Action *a, Croupier__SheddingAction *sa,
                             Croupier__SheddingMove move, const uint8_t *cards, size_t n, int bid)
{
    croupier__action__init(a);
    croupier__shedding_action__init(sa);
    sa->move = move;
    if (move == CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY) {
        sa->has_cards = true;
        sa->cards.data = (uint8_t *)cards;
        sa->cards.len = n;
    } else if (move == CROUPIER__SHEDDING_MOVE__SHEDDING_BID) {
        sa->has_bid = true;
        sa->bid = (uint32_t)bid;
    }
    a->kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a->shedding = sa;
}

/* Play{seat, SheddingAction, cards_left, timed_out} to everyone. */
static void trad_push_play(trad_table_t *x, int seat, Croupier__SheddingMove mv, shed_set_t cards,
                           int bid, bool timed_out)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play p = CROUPIER__PLAY__INIT;
    Croupier__Action a;
    Croupier__SheddingAction sa;
    uint8_t buf[SHED_MAX_CARDS];
    trad_wire_action(&a, &sa, mv, buf, trad_set_wire(cards, buf), bid);
    p.seat = (uint32_t)seat;
    p.action = &a;
    p.has_cards_left = true;
    p.cards_left = (uint32_t)shed_set_size(shed_game_hand(x->g, seat));
    p.has_timed_out = timed_out;
    p.timed_out = timed_out;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &p;
    tk_push_all(x->t, &sm);
}

/* The round's deck commitment on a Deal (docs/fairness.md), when the kit shuffled the deck. */
static void trad_set_commitment(tk_table_t *t, Croupier__Deal *d)
{
    const uint8_t *cm = tk_deal_commitment(t);
    d->has_deck_commitment = cm != NULL;
    d->deck_commitment.data = (uint8_t *)cm;
    d->deck_commitment.len = cm != NULL ? DECK_COMMIT_LEN : 0;
    /* A duplicate deal is committed per card (docs/fairness.md "Duplicate deals"). */
    d->has_deck_scheme = tk_deal_scheme(t) == DECK_SCHEME_CARDS;
    d->deck_scheme = d->has_deck_scheme ? DECK_SCHEME_CARDS : 0;
}

/* Deal{seat, cards, count} seen by everyone (the landlord's bottom cards). */
static void trad_push_deal_public(trad_table_t *x, int seat, shed_set_t cards)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Deal d = CROUPIER__DEAL__INIT;
    uint8_t buf[SHED_MAX_CARDS];
    d.has_seat = true;
    d.seat = (uint32_t)seat;
    d.has_cards = true;
    d.cards.data = buf;
    d.cards.len = trad_set_wire(cards, buf);
    d.has_count = true;
    d.count = (uint32_t)d.cards.len;
    d.round_id = (char *)tk_round_id(x->t);
    trad_set_commitment(x->t, &d);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
    sm.deal = &d;
    tk_push_all(x->t, &sm);
}

/* The deal's start as each human sees it: one Deal per seat, with the cards (and the table's
 * rule options) only in the player's own; the others' say how many cards they hold. */
static void trad_push_deals(trad_table_t *x)
{
    tk_table_t *t = x->t;
    for (int i = 0; i < x->seats; i++) {
        if (tk_seat_player(t, i) == 0 || tk_seat_bot(t, i))
            continue;
        for (int k = 0; k < x->seats; k++) {
            Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
            Croupier__Deal d = CROUPIER__DEAL__INIT;
            uint8_t buf[SHED_MAX_CARDS];
            shed_set_t h = shed_game_hand(x->g, k);
            d.has_seat = true;
            d.seat = (uint32_t)k;
            d.has_count = true;
            d.count = (uint32_t)shed_set_size(h);
            d.round_id = (char *)tk_round_id(t);
            trad_set_commitment(t, &d);
            if (k == i) {
                d.has_cards = true;
                d.cards.data = buf;
                d.cards.len = trad_set_wire(h, buf);
                d.n_rule_options =
                    trad_table_options(x, x->opt_names, &d.has_bomb_units, &d.bomb_units);
                d.rule_options = (char **)x->opt_names;
            }
            sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
            sm.deal = &d;
            tk_push_seat(t, i, &sm);
        }
    }
    /* The spectators: every seat's count, no card (docs/spectators.md). */
    for (int k = 0; k < x->seats; k++) {
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Deal d = CROUPIER__DEAL__INIT;
        d.has_seat = true;
        d.seat = (uint32_t)k;
        d.has_count = true;
        d.count = (uint32_t)shed_set_size(shed_game_hand(x->g, k));
        d.round_id = (char *)tk_round_id(t);
        trad_set_commitment(t, &d);
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
        sm.deal = &d;
        tk_push_watch(t, &sm);
    }
}

/*
 * The deal is over: every hand left is shown, and the kit ends the round. Completed: the rules'
 * deltas capped at the escrow and raked (trad_settle_cap). Thrown in (nobody bid): a completed
 * round with every delta 0, recorded in the history like any other.
 */
static void trad_deal_end(trad_table_t *x)
{
    tk_table_t *t = x->t;
    const shed_settlement_t *ss = shed_game_settlement(x->g);
    int64_t delta[TK_MAX_SEATS] = {0}, rake = 0;
    for (int i = 0; i < x->seats; i++) {
        uint8_t buf[SHED_MAX_CARDS];
        size_t n = trad_set_wire(shed_game_hand(x->g, i), buf);
        if (n > 0)
            tk_round_show(t, i, buf, n);
    }
    if (ss == NULL || ss->voided) {
        tk_history_action(t, -1, "thrown_in", 0);
    } else {
        for (int i = 0; i < x->seats; i++)
            delta[i] = ss->delta[i];
        /* A match's deal reports its results as they are: points, no cap, no rake (tk.h
         * tk_tour_match). */
        if (!tk_tour_table(t))
            rake = trad_settle_cap(delta, x->seats, x->escrow, (int)trad_rake_permille);
    }
    tk_round_end(t, delta, rake);
}

/* The deal goes on: the next seat's turn, or the deal's end. */
static void trad_next(trad_table_t *x)
{
    if (shed_game_phase(x->g) == SHED_PHASE_OVER) {
        trad_deal_end(x);
        return;
    }
    Croupier__Turn turn = CROUPIER__TURN__INIT;
    tk_turn(x->t, shed_game_turn(x->g), &turn);
}

/* Turns the rules' events of the last accepted action into pushes and history, then moves the
 * deal on. timed_out: the move was trustee's (Play.timed_out, "(auto)" in the history). */
static void trad_after_action(trad_table_t *x, bool timed_out)
{
    tk_table_t *t = x->t;
    int nev;
    const shed_event_t *ev = shed_game_events(x->g, &nev);
    for (int k = 0; k < nev; k++) {
        const shed_event_t *e = &ev[k];
        switch (e->kind) {
        case SHED_EV_BID:
            trad_history(t, e->seat, "bid", trad_none, e->value);
            trad_push_play(x, e->seat, CROUPIER__SHEDDING_MOVE__SHEDDING_BID, trad_none, e->value,
                           timed_out);
            break;
        case SHED_EV_LANDLORD:
            trad_history(t, e->seat, "landlord", e->cards, e->value);
            trad_push_deal_public(x, e->seat, e->cards);
            break;
        case SHED_EV_PLAY:
            trad_history(t, e->seat, timed_out ? "play(auto)" : "play", e->cards,
                         shed_set_size(e->cards));
            trad_push_play(x, e->seat, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, e->cards, 0,
                           timed_out);
            x->last_play = e->cards;
            x->last_play_seat = e->seat;
            break;
        case SHED_EV_TRIBUTE:
            trad_history(t, e->seat, "give", e->cards, e->value);
            trad_push_play(x, e->seat, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, e->cards, 0,
                           timed_out);
            break;
        case SHED_EV_PASS:
            trad_history(t, e->seat, timed_out ? "pass(auto)" : "pass", trad_none, 0);
            trad_push_play(x, e->seat, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, trad_none, 0,
                           timed_out);
            break;
        case SHED_EV_TRICK:
            x->last_play = trad_none;
            x->last_play_seat = -1;
            break;
        case SHED_EV_DOUBLE:
            x->doublings = e->value;
            break;
        default:
            break;
        }
    }
    trad_next(x);
}

/* Rank of a candidate play for "smallest": same type as the move to beat first, then fewer
 * cards, then the lower key. */
static uint64_t trad_play_weight(const shed_game_t *g, shed_set_t cards, const shed_combo_t *beat)
{
    shed_combo_t c;
    if (shed_game_classify(g, cards, false, &c) != 0)
        return UINT64_MAX;
    return ((uint64_t)(beat->type != 0 && c.type != beat->type) << 62) |
           ((uint64_t)c.ncards << 40) | c.key;
}

/*
 * Chooses a move for the seat to act: for a bot, or for a human in trustee (timeout, away,
 * leaving). Bots bid the smallest bid when nobody has bid yet; trustee declines. Both give the
 * first allowed tribute card; trustee passes when allowed; otherwise the smallest legal play.
 */
static void trad_choose(const shed_game_t *g, bool bot, shed_action_t *a)
{
    memset(a, 0, sizeof *a);
    a->seat = shed_game_turn(g);
    int phase = shed_game_phase(g);
    if (phase == SHED_PHASE_BID) {
        int bids[8];
        int n = shed_game_legal_bids(g, bids);
        bool nobody = n > 1 && bids[1] == 1; /* the lowest bid is still open: no bid yet */
        a->kind = SHED_ACT_BID;
        a->bid = (bot && nobody) ? bids[1] : 0;
        return;
    }
    if (phase == SHED_PHASE_PLAY && !bot && shed_game_may_pass(g)) {
        a->kind = SHED_ACT_PASS;
        return;
    }
    shed_set_t *moves = xmalloc(TRAD_MOVES_CAP * sizeof *moves);
    int n = shed_game_legal_plays(g, moves, TRAD_MOVES_CAP);
    if (n < 0)
        n = TRAD_MOVES_CAP;
    if (phase == SHED_PHASE_TRIBUTE || n == 0) {
        a->kind = n == 0 ? SHED_ACT_PASS : SHED_ACT_GIVE;
        a->cards = n == 0 ? trad_none : moves[0];
        free(moves);
        return;
    }
    shed_combo_t beat = shed_game_to_beat(g, NULL);
    int best = 0;
    uint64_t bw = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        uint64_t w = trad_play_weight(g, moves[i], &beat);
        if (w < bw) {
            bw = w;
            best = i;
        }
    }
    a->kind = SHED_ACT_PLAY;
    a->cards = moves[best];
    free(moves);
}

/* The automatic move of seat: a server bot's (bot) or trustee's (timeout, away, leaving). */
static void trad_auto(trad_table_t *x, int seat, bool bot, bool timed_out)
{
    if (shed_game_turn(x->g) != seat)
        return;
    shed_action_t a;
    trad_choose(x->g, bot, &a);
    int rc = shed_game_apply(x->g, &a);
    if (rc != SHED_OK) {
        /* Cannot happen with moves from the generator; never leave the deal stuck: numbers no
         * round can end with make the kit void it (VOID_INTERNAL_ERROR, tk.h). */
        log_emit(LOG_ERROR, "trad_auto_move_refused", "{s:i,s:s}", "seat", seat, "error",
                 shed_strerror(rc));
        int64_t zero[TK_MAX_SEATS] = {0};
        tk_round_end(x->t, zero, -1);
        return;
    }
    trad_after_action(x, timed_out);
}

/* ---- the kit's calls --------------------------------------------------------------------- */

static int trad_seats_for(const char *game, int configured)
{
    const shed_rules_t *r = shed_rules_find(game);
    return r != NULL ? shed_rules_seats(r) : configured;
}

static long trad_buyin_for(const char *game)
{
    return (long)trad_units(game);
}

/* Each table of a game is created with that game's --trad-options (checked at start). */
static void *trad_table_new(tk_table_t *t, const char *game, int64_t stake)
{
    const shed_rules_t *r = shed_rules_find(game);
    if (r == NULL || tk_seats(t) != shed_rules_seats(r))
        return NULL;
    shed_config_t cfg = {.base_stake = stake, .rake_permille = 0};
    trad_options_t opts;
    char err[256];
    if (trad_options_parse(tk_engine_options(t), NULL, &opts, err, sizeof err) == 0) {
        for (int i = 0; i < opts.n; i++) {
            if (opts.game[i].rules == r) {
                cfg.options = opts.game[i].options;
                cfg.bomb_units = opts.game[i].bomb_units;
            }
        }
    }
    trad_table_t *x = xcalloc(1, sizeof *x);
    x->g = shed_game_create(r, &cfg);
    if (x->g == NULL) {
        free(x);
        return NULL;
    }
    x->t = t;
    x->rules = r;
    x->seats = shed_rules_seats(r);
    x->decks = r == shed_rules_find("guandan") ? 2 : 1;
    x->escrow = trad_units(game) * stake;
    x->last_play_seat = -1;
    return x;
}

static void trad_table_free(void *gp)
{
    trad_table_t *x = gp;
    shed_game_destroy(x->g);
    free(x);
}

static uint32_t trad_rank_wire(int rank);

/* Deals to every seat (min_players 0: a deal starts when every seat is taken and holds its
 * escrow): a deck the kit shuffled (tk_deal_shuffle, the one deck source: docs/fairness.md) and
 * a first seat drawn from the same source, or CROUPIER_TRAD_TEST_DECK's order. */
static int trad_round_start(tk_table_t *t, void *gp)
{
    trad_table_t *x = gp;
    for (int i = 0; i < x->seats; i++)
        if (!tk_seat_playing(t, i))
            return -EINVAL;
    x->doublings = 0;
    x->last_play = trad_none;
    x->last_play_seat = -1;
    if (tk_tour_table(t)) {
        /* A match's deal starts from the game's starting state (tk.h tk_tour_match): the
         * players change between deals, so nothing of an earlier deal carries over. */
        shed_match_t fresh = {0};
        if (shed_game_match_set(x->g, &fresh) != 0)
            return -EINVAL;
    }
    if (x->rules == trad_deck_rules) {
        shed_game_deal_order(x->g, trad_deck, trad_deck_n, 0);
    } else {
        shed_card_t deck[SHED_MAX_CARDS];
        int n = shed_game_deck(x->g, deck);
        uint32_t first;
        /* A duplicate Swiss round: every table deals the same cards and first seat. */
        int rc =
            tk_deal_shuffle_dup(t, deck, (size_t)n, (uint32_t)x->seats, &first, trad_card_to_wire);
        if (rc == -ENOENT) {
            rc = tk_deal_shuffle(t, deck, (size_t)n);
            if (rc == 0 && deck_uniform((uint32_t)x->seats, &first) != 0)
                rc = -EIO;
        }
        if (rc != 0)
            return rc; /* the generator failed: no card is dealt (the kit voids the round) */
        if (shed_game_deal_order(x->g, deck, n, (int)first) != 0)
            return -EINVAL;
    }
    for (int i = -1; i < x->seats; i++) {
        uint8_t buf[SHED_MAX_CARDS];
        size_t n = trad_set_wire(i < 0 ? shed_game_extra(x->g) : shed_game_hand(x->g, i), buf);
        for (size_t k = 0; k < n; k++)
            tk_history_card(t, i, buf[k]);
    }
    int steps[2];
    int level = shed_game_level(x->g, steps);
    if (level >= 0) {
        /* Guandan: the deal's level (its wild cards and level cards) and each team's level, as
         * wire ranks (2..14): the history replays only with them. */
        tk_history_action(t, -1, "level", trad_rank_wire(level));
        for (int k = 0; k < 2; k++)
            tk_history_action(t, k, "team_level", trad_rank_wire((steps[k] + 12) % 13));
    }
    trad_push_deals(x);
    trad_next(x);
    return 0;
}

static Croupier__ErrorCode trad_shed_code(int rc)
{
    switch (rc) {
    case SHED_E_TURN:
        return CROUPIER__ERROR_CODE__NOT_YOUR_TURN;
    case SHED_E_NOT_HELD:
        return CROUPIER__ERROR_CODE__CARDS_NOT_HELD;
    case SHED_E_WEAKER:
        return CROUPIER__ERROR_CODE__TOO_WEAK;
    case SHED_E_PHASE:
        return CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    default:
        return CROUPIER__ERROR_CODE__ILLEGAL_MOVE;
    }
}

/* A player's move (the Croupier__Action itself: action_desc NULL), validated in full by the
 * rules: refused with a specific code and nothing changed, or applied and announced. */
static Croupier__ErrorCode trad_action(tk_table_t *t, void *gp, int seat, const ProtobufCMessage *m,
                                       const char **why)
{
    (void)t;
    trad_table_t *x = gp;
    const Croupier__Action *wa = (const Croupier__Action *)m;
    if (wa->kind_case != CROUPIER__ACTION__KIND_SHEDDING || wa->shedding == NULL) {
        *why = "this table plays a shedding game";
        return CROUPIER__ERROR_CODE__WRONG_ENGINE;
    }
    const Croupier__SheddingAction *sa = wa->shedding;
    if (shed_game_turn(x->g) != seat) {
        *why = "not your turn";
        return CROUPIER__ERROR_CODE__NOT_YOUR_TURN;
    }
    shed_action_t a = {.seat = seat};
    switch (sa->move) {
    case CROUPIER__SHEDDING_MOVE__SHEDDING_BID:
        a.kind = SHED_ACT_BID;
        a.bid = sa->bid > 1000 ? 1000 : (int)sa->bid;
        break;
    case CROUPIER__SHEDDING_MOVE__SHEDDING_PASS:
        a.kind = SHED_ACT_PASS;
        break;
    case CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY: {
        a.kind = shed_game_phase(x->g) == SHED_PHASE_TRIBUTE ? SHED_ACT_GIVE : SHED_ACT_PLAY;
        int rc = trad_cards_from_wire(sa->cards.data, sa->cards.len, x->decks,
                                      shed_game_hand(x->g, seat), &a.cards);
        if (rc == -EINVAL) {
            *why = "a card is listed more often than the game has copies";
            return CROUPIER__ERROR_CODE__ILLEGAL_MOVE;
        }
        if (rc == -ENOENT) {
            *why = "cards not held";
            return CROUPIER__ERROR_CODE__CARDS_NOT_HELD;
        }
        break;
    }
    default:
        *why = "unknown move";
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
    int rc = shed_game_apply(x->g, &a);
    if (rc != SHED_OK) {
        *why = shed_strerror(rc);
        return trad_shed_code(rc);
    }
    trad_after_action(x, false);
    return CROUPIER__ERROR_CODE__OK;
}

/* At a match's table the trustee plays as the server's bots do (bids when nobody has, plays
 * rather than passes): a deal of absent players is played out, never thrown in for want of a
 * bid again and again (docs/rules/match-halls.md "Disconnects"). */
static void trad_timeout(tk_table_t *t, void *gp, int seat)
{
    trad_auto(gp, seat, tk_tour_table(t), true);
}

static void trad_bot_move(tk_table_t *t, void *gp, int seat)
{
    (void)t;
    trad_auto(gp, seat, true, false);
}

/* The kit voids the deal (drain bound, shutdown, an internal error): nothing was paid. The
 * rules' game keeps the match (Guandan's levels stay those of the last completed deal) and the
 * next deal starts afresh. */
static void trad_round_void(tk_table_t *t, void *gp)
{
    (void)t;
    trad_table_t *x = gp;
    x->doublings = 0;
    x->last_play = trad_none;
    x->last_play_seat = -1;
}

/* Wire rank (2..14, ace 14) of a core rank index (0 = "3" ... 11 = "A", 12 = "2"). */
static uint32_t trad_rank_wire(int rank)
{
    return rank == SHED_RANK_2 ? 2u : (uint32_t)rank + 3u;
}

/*
 * Guandan's part of a snapshot (nothing for games without levels): the deal's level rank, each
 * team's level rank (a team's level step 0 = "2" ... 12 = "A"), and in the tribute phase
 * whether the seat to act returns a card and to whom the card goes.
 */
static void trad_snapshot_levels(trad_table_t *x, Croupier__SheddingState *st)
{
    int steps[2];
    int level = shed_game_level(x->g, steps);
    if (level < 0)
        return;
    st->has_level = true;
    st->level = trad_rank_wire(level);
    for (int i = 0; i < 2; i++)
        x->team_levels[i] = trad_rank_wire((steps[i] + 12) % 13);
    st->n_team_levels = 2;
    st->team_levels = x->team_levels;
    int to = -1;
    int stage = shed_game_tribute(x->g, &to);
    if (stage != 0) {
        st->has_tribute_return = true;
        st->tribute_return = stage == 2;
        if (to >= 0) {
            st->has_tribute_to = true;
            st->tribute_to = (uint32_t)to;
        }
    }
}

/*
 * seat's view for a Snapshot (the kit's header is filled): during a deal the shedding state as
 * that seat may see it (own hand only; the others' card counts; the move to beat; the landlord,
 * bid, multiplier and bottom cards once known; Guandan's levels; the rule options), set on
 * Snapshot.shedding in the table's own memory. Between deals: the header only.
 */
static void trad_snapshot(tk_table_t *t, void *gp, int seat)
{
    trad_table_t *x = gp;
    Croupier__Snapshot *s = tk_snapshot_msg(t);
    if (s == NULL || s->round_id == NULL || shed_game_phase(x->g) == SHED_PHASE_OVER)
        return;
    Croupier__SheddingState *st = &x->st;
    croupier__shedding_state__init(st);
    int phase = shed_game_phase(x->g);
    st->phase = phase == SHED_PHASE_BID       ? CROUPIER__SHEDDING_PHASE__SHEDDING_BIDDING
                : phase == SHED_PHASE_TRIBUTE ? CROUPIER__SHEDDING_PHASE__SHEDDING_TRIBUTE
                                              : CROUPIER__SHEDDING_PHASE__SHEDDING_PLAYING;
    st->has_hand = seat >= 0; /* -1: a spectator, who holds no hand */
    st->hand.data = x->hand;
    st->hand.len = seat >= 0 ? trad_set_wire(shed_game_hand(x->g, seat), x->hand) : 0;
    for (int i = 0; i < x->seats; i++)
        x->left[i] = (uint32_t)shed_set_size(shed_game_hand(x->g, i));
    st->n_cards_left = (size_t)x->seats;
    st->cards_left = x->left;
    int bid = 0;
    int landlord = shed_game_landlord(x->g, &bid);
    if (landlord >= 0) {
        st->has_declarer_seat = true;
        st->declarer_seat = (uint32_t)landlord;
        st->has_kitty = true;
        st->kitty.data = x->kitty;
        st->kitty.len = trad_set_wire(shed_game_extra(x->g), x->kitty);
    }
    if (phase == SHED_PHASE_BID || landlord >= 0) {
        int bids[8];
        int nb = shed_game_legal_bids(x->g, bids);
        st->has_bid = true; /* the winning bid, or the highest so far while bidding */
        st->bid = landlord >= 0 ? (uint32_t)bid : nb > 1 ? (uint32_t)(bids[1] - 1) : 0;
    }
    if (!shed_set_empty(x->last_play)) {
        st->has_last_play = true;
        st->last_play.data = x->last;
        st->last_play.len = trad_set_wire(x->last_play, x->last);
        st->has_last_play_seat = true;
        st->last_play_seat = (uint32_t)x->last_play_seat;
    }
    st->has_multiplier = true;
    st->multiplier = 1u << (x->doublings > 20 ? 20 : x->doublings);
    trad_snapshot_levels(x, st);
    st->n_rule_options = trad_table_options(x, x->opt_names, &st->has_bomb_units, &st->bomb_units);
    st->rule_options = (char **)x->opt_names;
    s->state_case = CROUPIER__SNAPSHOT__STATE_SHEDDING;
    s->shedding = st;
}

/* Joined names the table's rule options, so a player knows them before the first deal. */
static void trad_joined(tk_table_t *t, void *gp, int seat, Croupier__Joined *j)
{
    (void)t;
    (void)seat;
    trad_table_t *x = gp;
    j->n_rule_options = trad_table_options(x, x->opt_names, &j->has_bomb_units, &j->bomb_units);
    j->rule_options = (char **)x->opt_names;
}

/* A seat needs its whole escrow for a deal; below it after a deal, the kit tops it up from the
 * wallet (topup), or the seat leaves the table when the wallet cannot cover it. */
static int64_t trad_min_stack(tk_table_t *t, void *gp)
{
    (void)t;
    return ((trad_table_t *)gp)->escrow;
}

/* engine_ops_t.check_options: --trad-options checked at start (trad_options_parse). */
static int trad_check_options(const char *options, const char *games, char *err, size_t errlen)
{
    return trad_options_parse(options, games, NULL, err, errlen) == 0 ? 0 : -1;
}

/*
 * Reads CROUPIER_TRAD_TEST_DECK, "GAME:CARDS" with CARDS the game's whole deck as rank+suit
 * pairs in deal order ("3s4h..."; one-deck games), for tests that need a known deal. A text that
 * is no deck order of such a game is logged (trad_bad_test_deck) and ignored.
 */
static void trad_engine_started(tk_engine_t *eng)
{
    (void)eng;
    const char *v = trad_test_deck_text;
    if (v == NULL || v[0] == '\0')
        return;
    const char *colon = strchr(v, ':');
    char game[16] = "";
    if (colon != NULL && (size_t)(colon - v) < sizeof game)
        memcpy(game, v, (size_t)(colon - v));
    const shed_rules_t *r = colon != NULL ? shed_rules_find(game) : NULL;
    int n = 0;
    bool ok = r != NULL;
    for (const char *p = ok ? colon + 1 : ""; ok && *p != '\0'; p += 2) {
        int rank = shed_rank_from_char(p[0]);
        const char *su = p[1] != '\0' ? strchr(shed_suit_chars, p[1]) : NULL;
        ok = rank >= 0 && rank < SHED_RANK_BJ && su != NULL && n < SHED_MAX_CARDS;
        if (ok)
            trad_deck[n++] = shed_card_make(0, rank, (int)(su - shed_suit_chars));
    }
    if (ok) {
        shed_game_t *g = shed_game_create(r, NULL);
        ok = g != NULL && shed_game_deal_order(g, trad_deck, n, 0) == 0;
        shed_game_destroy(g);
    }
    if (!ok) {
        log_emit(LOG_ERROR, "trad_bad_test_deck", "{s:s,s:s}", "value", v, "reason",
                 "want GAME:CARDS, a one-deck game's whole deck in deal order");
        return;
    }
    trad_deck_rules = r;
    trad_deck_n = n;
    log_emit(LOG_WARN, "trad_test_deck_in_use", "{s:s}", "game", game);
}

/* Whole-table moves (engine/tk.h "moves"): the match between deals -- Guandan's team levels,
 * failures at level A and the previous deal's finishing order, which decide the next deal's
 * level and tribute. Games without a match state export nothing. */
static json_t *trad_export_state(tk_table_t *t, void *gp)
{
    (void)t;
    trad_table_t *x = gp;
    if (strcmp(shed_rules_name(x->rules), "guandan") != 0)
        return NULL;
    shed_match_t m;
    shed_game_match_get(x->g, &m);
    json_t *fin = json_array();
    for (int i = 0; i < x->seats; i++)
        json_array_append_new(fin, json_integer(m.prev_finish[i]));
    return json_pack("{s:[i,i],s:[i,i],s:o,s:i,s:i}", "team_steps", m.team_step[0], m.team_step[1],
                     "a_fails", m.a_fails[0], m.a_fails[1], "prev_finish", fin, "have_prev",
                     m.have_prev, "prev_upgrade", m.prev_upgrade);
}

static int trad_import_state(tk_table_t *t, void *gp, const json_t *st)
{
    (void)t;
    trad_table_t *x = gp;
    shed_match_t m = {0};
    const json_t *ts = json_object_get(st, "team_steps"), *af = json_object_get(st, "a_fails"),
                 *fin = json_object_get(st, "prev_finish");
    if (json_array_size(ts) != 2 || json_array_size(af) != 2 ||
        json_array_size(fin) != (size_t)x->seats)
        return -EINVAL;
    for (int i = 0; i < 2; i++) {
        m.team_step[i] = (int)json_integer_value(json_array_get(ts, (size_t)i));
        m.a_fails[i] = (int)json_integer_value(json_array_get(af, (size_t)i));
    }
    for (int i = 0; i < x->seats; i++)
        m.prev_finish[i] = (int)json_integer_value(json_array_get(fin, (size_t)i));
    m.have_prev = (int)json_integer_value(json_object_get(st, "have_prev"));
    m.prev_upgrade = (int)json_integer_value(json_object_get(st, "prev_upgrade"));
    return shed_game_match_set(x->g, &m);
}

static const tk_game_t trad_game = {
    .watchable = true, /* docs/spectators.md */
    .engine = "traditional",
    .games = "doudizhu,runfast,bigtwo,guandan",
    .proto_engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL,
    .min_seats = 3,
    .max_seats = SHED_MAX_SEATS,
    .min_players = 0, /* every seat */
    .money = TK_MONEY_STACK,
    .bots = true,
    .topup = true,
    .seats_for = trad_seats_for,
    .buyin_for = trad_buyin_for,
    .flag_prefix = "trad",
    .trustee_when_away = true,
    .tournaments = true, /* a match hall's tables (docs/tournaments.md "Match halls") */
    .check_options = trad_check_options,
    .defaults = {.seats = SHED_MAX_SEATS, /* unused: each game has its own (seats_for) */
                 .action_ms = 15000,
                 .time_bank_ms = 0,
                 .gap_ms = 1500,
                 .idle_ms = 60000,
                 .buyin = 1, /* unused: the escrow is the game's (buyin_for) */
                 .min_buyin = 1,
                 .rake_bp = 0, /* unused: the rake is --trad-rake-permille of each gain */
                 .rake_cap = 0,
                 .bot_ms = 400,
                 .bot_fill_ms = 10000,
                 .trustee_ms = 400,
                 .tour_tables = 50,
                 .tour_host_ttl_ms = 3000,
                 .tour_join_ms = 5000,
                 .house = "house-traditional"},
    .extra_flags = trad_flags,
    .action_desc = NULL, /* SheddingAction is the protocol's own member of Action.kind */
    .table_create = trad_table_new,
    .table_destroy = trad_table_free,
    .round_start = trad_round_start,
    .action = trad_action,
    .timeout = trad_timeout,
    .round_void = trad_round_void,
    .snapshot = trad_snapshot,
    .joined = trad_joined,
    .min_stack = trad_min_stack,
    .bot_move = trad_bot_move,
    .engine_started = trad_engine_started,
    .export_state = trad_export_state,
    .import_state = trad_import_state,
};

TK_ENGINE(traditional, &trad_game, CROUPIER__ENGINE__ENGINE_TRADITIONAL);
