/*
 * strategy_shed -- plays the traditional engine's shedding games (Dou Dizhu, Run Fast, Big Two,
 * Guandan) with legal moves from the same rules code the server uses
 * (games/traditional/shed_game.h).
 *
 * The engine's events do not carry everything a player needs to know what beats what (a
 * trick's reset is not pushed), so on its turn the bot asks for the authoritative view: a
 * Resume, whose Snapshot holds its hand, the phase, the highest bid and the play to beat. From
 * that it sets up the position in a private shed_game_t (shed_game_setup_position), lists the
 * legal plays (shed_game_legal_plays, shed_game_may_pass) and picks one: mostly the smallest
 * play, sometimes a random one, sometimes a pass when passing is allowed. Bids: on an open
 * auction it bids the lowest bid half of the time, else declines.
 *
 * Opening rules (Big Two: the first play holds the 3 of diamonds; Run Fast: the 3 of spades):
 * the holder of that card leads the deal and must include it, so a bot that leads while still
 * holding it only considers plays containing it.
 *
 * Guandan: the snapshot gives the deal's level rank (wild hearts, level cards above the aces),
 * and in the tribute phase whether the bot pays tribute or returns a card. The position is set
 * up at that level (shed_game_setup_level_position, or shed_game_setup_tribute, whose legal
 * plays are the cards it may give; a card is given as a SHEDDING_PLAY of that one card). A play
 * to beat that holds a wild card can have several readings and the engine keeps the one it
 * read when the card was played; the bot reads the strongest, so it then answers only with a
 * bomb (a bomb beats every non-bomb reading, and a bomb reading is the strongest) or passes.
 *
 * Rule options: the table's options (SheddingState.rule_options and bomb_units, croupier-game
 * --trad-options) are applied to the analysis game, which is created again when they change.
 * Under Run Fast's "report single" the next seat's card count matters: when the snapshot says
 * it holds one card, the position gives that seat one card the bot cannot see, so the legal
 * singles are the bot's highest ones (and "must beat when able" follows from them).
 */
#include <string.h>

#include "bot_strategy.h"
#include "log.h"
#include "shed_game.h"

#define SHED_BOT_MOVES_CAP 4096

typedef struct {
    const char *game;
    int decks;
    shed_card_t opening; /* SHED_CARD_NONE: no opening rule */
    bool levels;         /* Guandan: level, wild cards and tribute from the snapshot */
} shed_bot_game_t;

typedef struct {
    const shed_bot_game_t *spec;
    bool my_turn;                 /* a Turn for our seat, not yet answered */
    uint32_t turn_gen, acted_gen; /* Turns for our seat seen / the one our last move answered */
    bool have_view;               /* the snapshot below is newer than that Turn */
    bool closing;
    Croupier__SheddingPhase phase;
    uint8_t hand[FRAME_MAX_CARDS];
    size_t nhand;
    uint8_t last[FRAME_MAX_CARDS];
    size_t nlast;
    uint32_t last_seat;
    bool has_last;
    uint32_t bid;
    uint32_t seat;
    int level;           /* Guandan: the level's core rank index, -1 when not known */
    bool tribute_return; /* Guandan, tribute phase: returning a card (else paying tribute) */
    unsigned options;    /* the table's SHED_OPT_* (from the snapshot) */
    int bomb_units;      /* SHED_OPT_RF_BOMB_PAYS: units per bomb, 0 = the default */
    uint32_t next_left;  /* cards held by the seat after ours (UINT32_MAX: not known) */
    shed_game_t *g;      /* analysis game for `options`, created on first use */
} st_shed_t;

/* Core card (deck 0) of a wire code; SHED_CARD_NONE when no card. Same mapping as the engine
 * (wire suits 0 clubs 1 diamonds; core suits 0 diamonds 1 clubs; core rank 0 = "3"). */
static shed_card_t shed_bot_from_wire(uint8_t code)
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

static uint8_t shed_bot_to_wire(shed_card_t c)
{
    int r = shed_card_rank(c);
    if (r == SHED_RANK_BJ)
        return FRAME_CARD_BLACK_JOKER;
    if (r == SHED_RANK_RJ)
        return FRAME_CARD_RED_JOKER;
    int suit = shed_card_suit(c);
    int ws = suit == SHED_SUIT_D ? 1 : suit == SHED_SUIT_C ? 0 : suit;
    return FRAME_CARD(r == SHED_RANK_2 ? 2 : r + 3, ws);
}

/* Wire codes to a set; a code listed twice takes the second deck's copy, and `avoid` (the
 * hand, when mapping the play to beat) pushes a code to the copy not held. -1 on bad codes. */
static int shed_bot_set(const uint8_t *codes, size_t n, int decks, shed_set_t avoid,
                        shed_set_t *out)
{
    shed_set_t s = {{0, 0}};
    for (size_t i = 0; i < n; i++) {
        shed_card_t c = shed_bot_from_wire(codes[i]);
        if (c == SHED_CARD_NONE)
            return -1;
        if (shed_set_has(s, c) || shed_set_has(avoid, c)) {
            if (decks < 2)
                return -1;
            c = (shed_card_t)(c + 64);
        }
        shed_set_add(&s, c);
    }
    *out = s;
    return 0;
}

/*
 * Reads the table's rule options from a snapshot. A name this bot does not know, or one of
 * another game, is logged and left out (the bot then plays the rules it knows).
 */
static void st_shed_read_options(st_shed_t *st, const Croupier__SheddingState *s)
{
    const shed_rules_t *rules = shed_rules_find(st->spec->game);
    unsigned accepted = rules != NULL ? shed_rules_options(rules) : 0, o = 0;
    for (size_t i = 0; i < s->n_rule_options; i++) {
        unsigned f = shed_option_from_name(s->rule_options[i]);
        if (f == 0 || (accepted & f) == 0) {
            log_emit(LOG_WARN, "bot_shed_unknown_option", "{s:s,s:s}", "game", st->spec->game,
                     "option", s->rule_options[i]);
            continue;
        }
        o |= f;
    }
    st->options = o;
    st->bomb_units = 0;
    if ((o & SHED_OPT_RF_BOMB_PAYS) && s->has_bomb_units && s->bomb_units >= 1 &&
        s->bomb_units <= 1000)
        st->bomb_units = (int)s->bomb_units;
}

static void st_shed_on_seat(void *stp, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    st_shed_t *st = stp;
    st->seat = seat->seat;
    st->closing = false;
    st->my_turn = false;
    st->have_view = false;
    if (snap == NULL || snap->state_case != CROUPIER__SNAPSHOT__STATE_SHEDDING)
        return;
    const Croupier__SheddingState *s = snap->shedding;
    st->phase = s->phase;
    st->nhand = s->has_hand ? s->hand.len : 0;
    if (st->nhand > FRAME_MAX_CARDS)
        st->nhand = FRAME_MAX_CARDS;
    if (st->nhand > 0)
        memcpy(st->hand, s->hand.data, st->nhand);
    st->has_last = s->has_last_play && s->last_play.len > 0 && s->has_last_play_seat;
    st->nlast = st->has_last ? s->last_play.len : 0;
    if (st->nlast > FRAME_MAX_CARDS)
        st->nlast = FRAME_MAX_CARDS;
    if (st->nlast > 0)
        memcpy(st->last, s->last_play.data, st->nlast);
    st->last_seat = s->last_play_seat;
    st->bid = s->has_bid ? s->bid : 0;
    /* Wire rank 2..14 (ace 14) to the core's rank index (0 = "3" ... 11 = "A", 12 = "2"). */
    st->level = !s->has_level || s->level < 2 || s->level > 14 ? -1
                : s->level == 2                                ? SHED_RANK_2
                                                               : (int)s->level - 3;
    st->tribute_return = s->has_tribute_return && s->tribute_return;
    st_shed_read_options(st, s);
    size_t next = s->n_cards_left > 0 ? (st->seat + 1) % s->n_cards_left : 0;
    st->next_left = next < s->n_cards_left ? s->cards_left[next] : UINT32_MAX;
    st->my_turn = snap->has_turn_seat && snap->turn_seat == snap->your_seat;
    st->have_view = st->my_turn;
}

static void st_shed_on_event(void *stp, const bot_seat_t *seat, const Croupier__ServerMessage *m)
{
    st_shed_t *st = stp;
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
        st->my_turn = m->turn->seat == seat->seat;
        if (st->my_turn)
            st->turn_gen++;
        st->have_view = false;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END:
        st->my_turn = false;
        st->have_view = false;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
        st->closing = true;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT:
        /* The reply to our action: the turn is answered (a refusal waits for the next Turn).
         * A Turn for us pushed before this reply (the trick came back to us) is newer: keep. */
        if (st->acted_gen == st->turn_gen) {
            st->my_turn = false;
            st->have_view = false;
        }
        break;
    default:
        break;
    }
}

static void shed_bot_cards(bot_move_t *out, shed_set_t cards)
{
    size_t n = 0;
    for (int c = 0; c < 128 && n < FRAME_MAX_CARDS; c++)
        if (shed_card_valid((shed_card_t)c) && shed_set_has(cards, (shed_card_t)c))
            out->cards[n++] = shed_bot_to_wire((shed_card_t)c);
    out->shedding.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY;
    out->shedding.has_cards = true;
    out->shedding.cards.data = out->cards;
    out->shedding.cards.len = n;
}

/* The private analysis game with the table's options, created on first use and again when the
 * options change; NULL when the game is unknown. */
static shed_game_t *st_shed_game(st_shed_t *st)
{
    if (st->g != NULL && shed_game_options(st->g) != st->options) {
        shed_game_destroy(st->g);
        st->g = NULL;
    }
    if (st->g == NULL) {
        const shed_rules_t *rules = shed_rules_find(st->spec->game);
        shed_config_t cfg = {.base_stake = 1,
                             .rake_permille = 0,
                             .options = st->options,
                             .bomb_units =
                                 (st->options & SHED_OPT_RF_BOMB_PAYS) ? st->bomb_units : 0};
        if (rules != NULL)
            st->g = shed_game_create(rules, &cfg);
    }
    return st->g;
}

/*
 * Run Fast "report single": when the next seat holds one card, gives it one card of the deck
 * that is neither in `hand` nor in `beat` (which one does not matter: only the count is read).
 * Returns 0, or -1 when no card could be placed.
 */
static int st_shed_report_single(st_shed_t *st, shed_set_t hand, shed_set_t beat)
{
    if (!(st->options & SHED_OPT_RF_REPORT_SINGLE) || st->next_left != 1)
        return 0;
    int next = (int)(st->seat + 1) % shed_game_seats(st->g);
    for (int c = 0; c < 64; c++) {
        if (!shed_card_valid((shed_card_t)c) || shed_set_has(hand, (shed_card_t)c) ||
            shed_set_has(beat, (shed_card_t)c))
            continue;
        shed_set_t one = {{0, 0}};
        shed_set_add(&one, (shed_card_t)c);
        if (shed_game_setup_hand(st->g, next, one) == 0)
            return 0;
    }
    return -1;
}

/* Guandan: whether `cards` hold a wild card (a heart of the level rank). */
static bool shed_bot_has_wild(shed_set_t cards, int level)
{
    for (int c = 0; c < 128; c++)
        if (shed_card_valid((shed_card_t)c) && shed_set_has(cards, (shed_card_t)c) &&
            shed_card_rank((shed_card_t)c) == level &&
            shed_card_suit((shed_card_t)c) == SHED_SUIT_H)
            return true;
    return false;
}

/* The combination type the game gives a natural four of a kind (a bomb in Guandan). */
static int shed_bot_bomb_type(const shed_game_t *g)
{
    shed_set_t four = {{0, 0}};
    for (int suit = 0; suit < 4; suit++)
        shed_set_add(&four, shed_card_make(0, 2, suit)); /* the four 5s */
    shed_combo_t c;
    return shed_game_classify(g, four, false, &c) == 0 ? c.type : -1;
}

/* Guandan's tribute phase: gives one of the cards the rules allow (mostly the lowest listed).
 * 1 with *out filled, 0 when no move. */
static int st_shed_give(st_shed_t *st, bot_rng_t *rng, bot_move_t *out)
{
    static const shed_set_t none = {{0, 0}};
    shed_set_t hand, gives[SHED_MAX_CARDS];
    shed_game_t *g = st_shed_game(st);
    const char *why = NULL;
    int n = 0;
    if (g == NULL || !st->spec->levels)
        why = "no tribute in this game";
    else if (st->level < 0)
        why = "no level in the snapshot";
    else if (shed_bot_set(st->hand, st->nhand, st->spec->decks, none, &hand) != 0)
        why = "hand has bad codes";
    else if (shed_game_setup_tribute(g, (int)st->seat, hand, st->level, st->tribute_return) != 0)
        why = "tribute position refused by the rules";
    else if ((n = shed_game_legal_plays(g, gives, SHED_MAX_CARDS)) <= 0)
        why = "no card may be given";
    if (why != NULL) {
        log_emit(LOG_WARN, "bot_shed_no_give", "{s:s,s:s,s:i}", "game", st->spec->game, "why", why,
                 "hand", (int)st->nhand);
        return 0;
    }
    out->action.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    out->action.shedding = &out->shedding;
    shed_bot_cards(out, gives[bot_rng_below(rng, 4) == 0 ? bot_rng_below(rng, (uint32_t)n) : 0]);
    return 1;
}

/* Picks a play or pass from the position in the view. 1 with *out filled, 0 when no move. */
static int st_shed_play(st_shed_t *st, bot_rng_t *rng, bot_move_t *out)
{
    if (st_shed_game(st) == NULL)
        return 0;
    shed_set_t hand, beat = {{0, 0}};
    static const shed_set_t none = {{0, 0}};
    const char *why = NULL;
    bool lead = !st->has_last || st->last_seat == st->seat;
    if (shed_bot_set(st->hand, st->nhand, st->spec->decks, none, &hand) != 0)
        why = "hand has bad codes";
    else if (!lead && shed_bot_set(st->last, st->nlast, st->spec->decks, hand, &beat) != 0)
        why = "play to beat has bad codes";
    else if (st->spec->levels && st->level < 0)
        why = "no level in the snapshot";
    else if (st->spec->levels
                 ? shed_game_setup_level_position(st->g, (int)st->seat, hand, beat, st->level) != 0
                 : shed_game_setup_position(st->g, (int)st->seat, hand, beat) != 0)
        why = "position refused by the rules";
    else if (st_shed_report_single(st, hand, beat) != 0)
        why = "no card to give the next seat (report single)";
    if (why != NULL) {
        log_emit(LOG_WARN, "bot_shed_no_view", "{s:s,s:s,s:i,s:i,s:b}", "game", st->spec->game,
                 "why", why, "hand", (int)st->nhand, "to_beat", (int)st->nlast, "lead", lead);
        return 0;
    }
    static shed_set_t moves[SHED_BOT_MOVES_CAP];
    int n = shed_game_legal_plays(st->g, moves, SHED_BOT_MOVES_CAP);
    if (n < 0)
        n = SHED_BOT_MOVES_CAP;
    if (lead && st->spec->opening != SHED_CARD_NONE && shed_set_has(hand, st->spec->opening)) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (shed_set_has(moves[i], st->spec->opening))
                moves[k++] = moves[i];
        n = k;
    }
    if (st->spec->levels && !lead && shed_bot_has_wild(beat, st->level)) {
        /* Several readings of the play to beat: answer with bombs only (see the top). */
        shed_combo_t bc;
        int bomb = shed_bot_bomb_type(st->g);
        if (shed_game_classify(st->g, beat, false, &bc) != 0 || bc.type != bomb) {
            int k = 0;
            for (int i = 0; i < n; i++) {
                shed_combo_t c;
                if (shed_game_classify(st->g, moves[i], false, &c) == 0 && c.type == bomb)
                    moves[k++] = moves[i];
            }
            n = k;
        }
    }
    bool may_pass = !lead && shed_game_may_pass(st->g);
    out->action.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    out->action.shedding = &out->shedding;
    if (n == 0 || (may_pass && bot_rng_below(rng, 4) == 0)) {
        if (!may_pass && n == 0) {
            log_emit(LOG_WARN, "bot_shed_no_move", "{s:s,s:i,s:i,s:b}", "game", st->spec->game,
                     "hand", (int)st->nhand, "to_beat", (int)st->nlast, "lead", lead);
            return 0;
        }
        out->shedding.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
        return 1;
    }
    /* Mostly the smallest play (fewest cards, lowest), sometimes any legal one. */
    int pick = 0;
    if (bot_rng_below(rng, 5) == 0) {
        pick = (int)bot_rng_below(rng, (uint32_t)n);
    } else {
        int best = -1;
        uint64_t bw = UINT64_MAX;
        for (int i = 0; i < n; i++) {
            shed_combo_t c;
            if (shed_game_classify(st->g, moves[i], false, &c) != 0)
                continue;
            uint64_t w = ((uint64_t)c.ncards << 40) | c.key;
            if (w < bw) {
                bw = w;
                best = i;
            }
        }
        pick = best < 0 ? 0 : best;
    }
    shed_bot_cards(out, moves[pick]);
    return 1;
}

static int st_shed_decide(void *stp, const bot_seat_t *seat, bot_rng_t *rng, bot_move_t *out,
                          int *delay_ms)
{
    (void)seat;
    st_shed_t *st = stp;
    *delay_ms = -1;
    if (!st->my_turn || st->closing)
        return 0;
    if (!st->have_view) {
        *delay_ms = 0;
        return 2; /* ask for the snapshot first */
    }
    *delay_ms = 30 + (int)bot_rng_below(rng, 200);
    st->acted_gen = st->turn_gen;
    if (st->phase == CROUPIER__SHEDDING_PHASE__SHEDDING_BIDDING) {
        out->action.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
        out->action.shedding = &out->shedding;
        out->shedding.move = CROUPIER__SHEDDING_MOVE__SHEDDING_BID;
        out->shedding.has_bid = true;
        out->shedding.bid = (st->bid == 0 && bot_rng_below(rng, 2) == 0) ? 1 : 0;
        return 1;
    }
    if (st->phase == CROUPIER__SHEDDING_PHASE__SHEDDING_TRIBUTE)
        return st_shed_give(st, rng, out);
    return st_shed_play(st, rng, out);
}

static void st_shed_free(void *stp)
{
    st_shed_t *st = stp;
    shed_game_destroy(st->g);
    st->g = NULL;
}

static const shed_bot_game_t shed_bot_ddz = {"doudizhu", 1, SHED_CARD_NONE, false};
/* Core id of the 3 of spades (rank index 0) and of the 3 of diamonds. */
static const shed_bot_game_t shed_bot_runfast = {"runfast", 1, 0 * 4 + SHED_SUIT_S, false};
static const shed_bot_game_t shed_bot_bigtwo = {"bigtwo", 1, 0 * 4 + SHED_SUIT_D, false};
static const shed_bot_game_t shed_bot_guandan = {"guandan", 2, SHED_CARD_NONE, true};

static void st_ddz_on_seat(void *st, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    ((st_shed_t *)st)->spec = &shed_bot_ddz;
    st_shed_on_seat(st, seat, snap);
}
static void st_runfast_on_seat(void *st, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    ((st_shed_t *)st)->spec = &shed_bot_runfast;
    st_shed_on_seat(st, seat, snap);
}
static void st_bigtwo_on_seat(void *st, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    ((st_shed_t *)st)->spec = &shed_bot_bigtwo;
    st_shed_on_seat(st, seat, snap);
}
static void st_guandan_on_seat(void *st, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    ((st_shed_t *)st)->spec = &shed_bot_guandan;
    st_shed_on_seat(st, seat, snap);
}

#define SHED_BOT_STRATEGY(var, name, on_seat_fn)                                                   \
    const bot_strategy_ops_t var = {                                                               \
        .game = name,                                                                              \
        .engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL,                                            \
        .state_size = sizeof(st_shed_t),                                                           \
        .round_in_snapshot = true,                                                                 \
        .round_by_action = false,                                                                  \
        .on_seat = on_seat_fn,                                                                     \
        .on_event = st_shed_on_event,                                                              \
        .decide = st_shed_decide,                                                                  \
        .refusal_expected = NULL,                                                                  \
        .free_state = st_shed_free,                                                                \
    }

SHED_BOT_STRATEGY(bot_strategy_doudizhu, "doudizhu", st_ddz_on_seat);
SHED_BOT_STRATEGY(bot_strategy_runfast, "runfast", st_runfast_on_seat);
SHED_BOT_STRATEGY(bot_strategy_bigtwo, "bigtwo", st_bigtwo_on_seat);
SHED_BOT_STRATEGY(bot_strategy_guandan, "guandan", st_guandan_on_seat);
