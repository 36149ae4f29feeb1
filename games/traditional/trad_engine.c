/*
 * trad_engine -- the traditional engine (see trad_engine.h for the rules of play, money and
 * drain). One lobby desk matches players to tables; each table is its own desk owning one
 * shed_game_t for life (Guandan's levels carry over between deals).
 */
#include "trad_engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/string.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "money_writer.h"
#include "xmalloc.h"

#define TRAD_MAX_GAMES 4
#define TRAD_MOVES_CAP 32768

enum {
    TRAD_MSG_SEATS_FREED = GS_MSG_ENGINE, /* table -> lobby: arg = table, arg2 = seats */
    TRAD_MSG_SEATS_TAKEN,                 /* table -> lobby: arg = table, arg2 = seats (bots) */
    TRAD_MSG_CLOSED,                      /* table -> lobby: arg = table */
    TRAD_MSG_MONEY,                       /* writer -> table: arg = seat, arg2 = generation */
};

enum { TRAD_TIMER_TURN = 1, TRAD_TIMER_GAP = 2, TRAD_TIMER_FILL = 3 };

enum { ESC_NONE = 0, ESC_PENDING = 1, ESC_HELD = 2 };

typedef struct {
    gs_t *gs;
    rt_desk_id_t lobby;
    const shed_rules_t *games[TRAD_MAX_GAMES];
    int ngames;
    char games_text[64];
    int turn_ms, bot_ms, bot_fill_ms, gap_ms, rake_permille;
    int64_t max_units_override;
    char house[MONEY_NAME_MAX + 1];
    trad_options_t opts; /* --trad-options: each table of a game is created with its options */
    /* CROUPIER_TRAD_TEST_DECK (tests only): every deal of test_deck_rules tables is dealt from
     * this deck order instead of the CSPRNG. */
    const shed_rules_t *test_deck_rules;
    shed_card_t test_deck[SHED_MAX_CARDS];
    int test_deck_n;
} trad_engine_t;

typedef struct {
    rt_desk_id_t id;
    const shed_rules_t *rules;
    int64_t stake;
    int free;
    bool closed;
} trad_ref_t;

typedef struct {
    trad_engine_t *eng;
    trad_ref_t *refs;
    int nrefs, cap;
} trad_lobby_t;

typedef struct {
    uint64_t player; /* 0 = empty */
    bool bot;
    bool leaving;       /* unseat after the deal */
    bool gone;          /* disconnected or leaving: trustee plays at once */
    int escrow;         /* ESC_* */
    uint64_t gen;       /* generation of the pending money operation */
    gs_request_t *join; /* join waiting for its escrow (not seated yet) */
    uint64_t seq;       /* event_seq of pushes to this seat */
    char wallet[MONEY_NAME_MAX + 1];
} trad_seat_t;

typedef struct {
    trad_engine_t *eng;
    rt_desk_id_t lobby;
    const shed_rules_t *rules;
    shed_game_t *g;
    int seats;
    int64_t stake, escrow;
    uint64_t deal_seq; /* deals begun */
    uint64_t op_seq;   /* money operations (ids) */
    bool closing;
    bool gap_armed, fill_armed;
    int64_t next_start_ns;
    rt_timer_id_t turn_timer;
    bool turn_armed;
    int64_t turn_deadline_ns;
    int doublings;
    shed_set_t last_play;
    int last_play_seat;
    json_t *hist; /* this deal's hand history (money.h), NULL between deals */
    trad_seat_t seat[SHED_MAX_SEATS];
} trad_table_t;

static int trad_env_int(const char *name, int def, int lo, int hi)
{
    const char *v = getenv(name);
    if (v == NULL)
        return def;
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < lo || x > hi) {
        log_emit(LOG_WARN, "trad_bad_env", "{s:s,s:s,s:i}", "name", name, "value", v, "using", def);
        return def;
    }
    return (int)x;
}

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

/* ---- table: pushes and views ------------------------------------------------------------ */

static int trad_table_humans(const trad_table_t *t)
{
    int h = 0;
    for (int i = 0; i < t->seats; i++)
        if (t->seat[i].player != 0 && !t->seat[i].bot && t->seat[i].join == NULL)
            h++;
    return h;
}

static int trad_table_taken(const trad_table_t *t)
{
    int n = 0;
    for (int i = 0; i < t->seats; i++)
        n += t->seat[i].player != 0;
    return n;
}

static void trad_table_sync_humans(rt_desk_t *desk, trad_table_t *t)
{
    rt_desk_set_humans(desk, (unsigned)trad_table_humans(t));
}

static bool trad_seat_human(const trad_seat_t *s)
{
    return s->player != 0 && !s->bot && s->join == NULL;
}

/* Sends m to seat i (a seated human), stamping the seat's next event_seq. */
static void trad_push(rt_desk_t *desk, trad_table_t *t, int i, Croupier__ServerMessage *m)
{
    if (!trad_seat_human(&t->seat[i]))
        return;
    m->has_event_seq = true;
    m->event_seq = ++t->seat[i].seq;
    gs_push(gs_of_desk(desk), t->seat[i].player, m);
}

static void trad_push_all(rt_desk_t *desk, trad_table_t *t, Croupier__ServerMessage *m)
{
    for (int i = 0; i < t->seats; i++)
        trad_push(desk, t, i, m);
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

static void trad_round_id(rt_desk_t *desk, trad_table_t *t, char *buf)
{
    money_round_id_t rid = gs_round_id(gs_of_desk(desk), rt_desk_id(desk), t->deal_seq);
    money_round_id_format(&rid, buf, MONEY_ID_MAX + 1);
}

static uint32_t trad_time_left(const trad_table_t *t)
{
    if (!t->turn_armed)
        return 0;
    int64_t left = (t->turn_deadline_ns - clock_mono_ns()) / 1000000;
    return left > 0 ? (uint32_t)left : 0;
}

static void trad_fill_seats(trad_table_t *t, Croupier__SeatInfo *infos, Croupier__SeatInfo **ptrs,
                            size_t *n)
{
    *n = 0;
    for (int i = 0; i < t->seats; i++) {
        if (t->seat[i].player == 0 || t->seat[i].join != NULL)
            continue;
        Croupier__SeatInfo si = CROUPIER__SEAT_INFO__INIT;
        si.seat = (uint32_t)i;
        si.has_player_id = true;
        si.player_id = t->seat[i].player;
        si.has_bot = true;
        si.bot = t->seat[i].bot;
        si.has_connected = true;
        si.connected = t->seat[i].bot || !t->seat[i].gone;
        si.has_chips = true;
        si.chips = t->seat[i].escrow == ESC_HELD ? t->escrow : 0;
        infos[*n] = si;
        ptrs[*n] = &infos[*n];
        (*n)++;
    }
}

/*
 * The table's rule options, as Joined, a seat's own Deal and SheddingState carry them: names
 * (room for 8, must outlive the message) and their count; the bomb units with "bomb-pays".
 */
static size_t trad_table_options(const trad_table_t *t, const char **names,
                                 protobuf_c_boolean *has_units, uint32_t *units)
{
    unsigned o = shed_game_options(t->g);
    *has_units = (o & SHED_OPT_RF_BOMB_PAYS) != 0;
    *units = *has_units ? (uint32_t)shed_game_bomb_units(t->g) : 0;
    return (size_t)trad_option_names(o, names, 8);
}

static void trad_reply_joined(rt_desk_t *desk, trad_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Joined j = CROUPIER__JOINED__INIT;
    Croupier__SeatInfo infos[SHED_MAX_SEATS];
    Croupier__SeatInfo *ptrs[SHED_MAX_SEATS];
    j.desk_id = rt_desk_id(desk);
    j.seat = (uint32_t)seat;
    j.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    j.game = (char *)shed_rules_name(t->rules);
    j.stake = t->stake;
    trad_fill_seats(t, infos, ptrs, &j.n_seats);
    j.seats = ptrs;
    const char *opt_names[8];
    j.n_rule_options = trad_table_options(t, opt_names, &j.has_bomb_units, &j.bomb_units);
    j.rule_options = (char **)opt_names;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED;
    sm.joined = &j;
    gs_reply(gs_of_desk(desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

/* Wire rank (2..14, ace 14) of a core rank index (0 = "3" ... 11 = "A", 12 = "2"). */
static uint32_t trad_rank_wire(int rank)
{
    return rank == SHED_RANK_2 ? 2u : (uint32_t)rank + 3u;
}

/*
 * Guandan's part of a snapshot (nothing for games without levels): the deal's level rank, each
 * team's level rank (a team's level step 0 = "2" ... 12 = "A"), and in the tribute phase
 * whether the seat to act returns a card and to whom the card goes. team_levels: room for 2.
 */
static void trad_snapshot_levels(const trad_table_t *t, Croupier__SheddingState *st,
                                 uint32_t *team_levels)
{
    int steps[2];
    int level = shed_game_level(t->g, steps);
    if (level < 0)
        return;
    st->has_level = true;
    st->level = trad_rank_wire(level);
    for (int i = 0; i < 2; i++)
        team_levels[i] = trad_rank_wire((steps[i] + 12) % 13);
    st->n_team_levels = 2;
    st->team_levels = team_levels;
    int to = -1;
    int stage = shed_game_tribute(t->g, &to);
    if (stage != 0) {
        st->has_tribute_return = true;
        st->tribute_return = stage == 2;
        if (to >= 0) {
            st->has_tribute_to = true;
            st->tribute_to = (uint32_t)to;
        }
    }
}

/* Fills a seat's own Deal with the table's rule options; names: room for 8 (outlives d). */
static void trad_deal_options(const trad_table_t *t, Croupier__Deal *d, const char **names)
{
    d->n_rule_options = trad_table_options(t, names, &d->has_bomb_units, &d->bomb_units);
    d->rule_options = (char **)names;
}

/*
 * Answers a resume with the full state: the seats, the round, whose turn and how long is left,
 * and the shedding state as seat `seat` may see it (own hand only; the others' card counts;
 * the move to beat; the landlord, bid, multiplier and bottom cards once known).
 */
static void trad_reply_snapshot(rt_desk_t *desk, trad_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot s = CROUPIER__SNAPSHOT__INIT;
    Croupier__SheddingState st = CROUPIER__SHEDDING_STATE__INIT;
    Croupier__SeatInfo infos[SHED_MAX_SEATS];
    Croupier__SeatInfo *ptrs[SHED_MAX_SEATS];
    uint8_t hand[SHED_MAX_CARDS], last[SHED_MAX_CARDS], kitty[SHED_MAX_CARDS];
    uint32_t left[SHED_MAX_SEATS];
    uint32_t team_levels[2];
    const char *opt_names[8];
    char round_id[MONEY_ID_MAX + 1];
    s.desk_id = rt_desk_id(desk);
    s.your_seat = (uint32_t)seat;
    s.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    s.game = (char *)shed_rules_name(t->rules);
    s.stake = t->stake;
    trad_fill_seats(t, infos, ptrs, &s.n_seats);
    s.seats = ptrs;
    s.has_event_seq = true;
    s.event_seq = t->seat[seat].seq;
    if (rt_desk_in_round(desk)) {
        trad_round_id(desk, t, round_id);
        s.round_id = round_id;
        int phase = shed_game_phase(t->g);
        int turn = shed_game_turn(t->g);
        if (turn >= 0) {
            s.has_turn_seat = true;
            s.turn_seat = (uint32_t)turn;
            s.has_time_left_ms = true;
            s.time_left_ms = trad_time_left(t);
        }
        st.phase = phase == SHED_PHASE_BID       ? CROUPIER__SHEDDING_PHASE__SHEDDING_BIDDING
                   : phase == SHED_PHASE_TRIBUTE ? CROUPIER__SHEDDING_PHASE__SHEDDING_TRIBUTE
                                                 : CROUPIER__SHEDDING_PHASE__SHEDDING_PLAYING;
        st.has_hand = true;
        st.hand.data = hand;
        st.hand.len = trad_set_wire(shed_game_hand(t->g, seat), hand);
        for (int i = 0; i < t->seats; i++)
            left[i] = (uint32_t)shed_set_size(shed_game_hand(t->g, i));
        st.n_cards_left = (size_t)t->seats;
        st.cards_left = left;
        int bid = 0;
        int landlord = shed_game_landlord(t->g, &bid);
        if (landlord >= 0) {
            st.has_declarer_seat = true;
            st.declarer_seat = (uint32_t)landlord;
            st.has_kitty = true;
            st.kitty.data = kitty;
            st.kitty.len = trad_set_wire(shed_game_extra(t->g), kitty);
        }
        if (phase == SHED_PHASE_BID || landlord >= 0) {
            int bids[8];
            int nb = shed_game_legal_bids(t->g, bids);
            st.has_bid = true; /* the winning bid, or the highest so far while bidding */
            st.bid = landlord >= 0 ? (uint32_t)bid : nb > 1 ? (uint32_t)(bids[1] - 1) : 0;
        }
        if (!shed_set_empty(t->last_play)) {
            st.has_last_play = true;
            st.last_play.data = last;
            st.last_play.len = trad_set_wire(t->last_play, last);
            st.has_last_play_seat = true;
            st.last_play_seat = (uint32_t)t->last_play_seat;
        }
        st.has_multiplier = true;
        st.multiplier = 1u << (t->doublings > 20 ? 20 : t->doublings);
        trad_snapshot_levels(t, &st, team_levels);
        st.n_rule_options = trad_table_options(t, opt_names, &st.has_bomb_units, &st.bomb_units);
        st.rule_options = (char **)opt_names;
        s.state_case = CROUPIER__SNAPSHOT__STATE_SHEDDING;
        s.shedding = &st;
    }
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    sm.snapshot = &s;
    gs_reply(gs_of_desk(desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

static int trad_table_find(const trad_table_t *t, uint64_t player)
{
    for (int i = 0; i < t->seats; i++)
        if (t->seat[i].player == player)
            return i;
    return -1;
}

static void trad_to_lobby(rt_desk_t *desk, trad_table_t *t, uint32_t type, int n)
{
    rt_msg_t m = {.type = type, .arg = rt_desk_id(desk), .arg2 = (uint64_t)n};
    rt_post(rt_desk_rt(desk), t->lobby, &m);
}

/* ---- table: money ------------------------------------------------------------------------ */

typedef struct {
    gs_t *gs;
    rt_t *rt;
    rt_desk_id_t desk;
    int seat;
    uint64_t gen;
} trad_money_arg_t;

/*
 * Writer thread: hands an escrow buy-in's result to its table. It is a money follow-up
 * (gs.h): the exit's flush waits until the table has handled it, since a table that closed
 * meanwhile returns the escrow then. A dead table drops it (a table lives while a seat waits
 * for its escrow).
 */
static void trad_escrow_cb(money_result_t *res, void *arg)
{
    trad_money_arg_t *a = arg;
    res->arg = a->gs;
    rt_msg_t m = {.type = TRAD_MSG_MONEY,
                  .arg = (uint64_t)a->seat,
                  .arg2 = a->gen,
                  .ptr = res,
                  .free_fn = gs_money_result_free};
    rt_post(a->rt, a->desk, &m);
    free(a);
}

/* Writer thread: cash-outs and settlements are only logged when they fail. */
static void trad_logged_cb(money_result_t *res, void *arg)
{
    (void)arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "trad_money_failed", "{s:i,s:s,s:i,s:s}", "kind", res->kind, "id",
                 res->id, "status", res->status, "error", res->error);
    free(res);
}

static void trad_op_id(rt_desk_t *desk, trad_table_t *t, char *buf, size_t len)
{
    gs_t *gs = gs_of_desk(desk);
    /* The service keeps op ids apart across services (each has its own slot pool). */
    const char *svc = gs_service(gs) != NULL ? gs_service(gs) : "";
    snprintf(buf, len, "trad:%s:%u:%llu:%llx:%llu", svc, gs_server_slot(gs),
             (unsigned long long)gs_epoch(gs), (unsigned long long)rt_desk_id(desk),
             (unsigned long long)++t->op_seq);
}

/*
 * Buys seat i's escrow for the coming deal; the result comes back as TRAD_MSG_MONEY. Without
 * a money writer (never in croupier-game) the escrow is held at once.
 */
static void trad_escrow_buy(rt_desk_t *desk, trad_table_t *t, int i)
{
    trad_seat_t *s = &t->seat[i];
    money_writer_t *w = gs_money(gs_of_desk(desk));
    s->gen++;
    if (w == NULL) {
        s->escrow = ESC_HELD;
        return;
    }
    char op[MONEY_ID_MAX + 1];
    trad_op_id(desk, t, op, sizeof op);
    gs_t *gs = gs_of_desk(desk);
    trad_money_arg_t *a = xmalloc(sizeof *a);
    *a = (trad_money_arg_t){gs, rt_desk_rt(desk), rt_desk_id(desk), i, s->gen};
    s->escrow = ESC_PENDING;
    gs_money_followup_begin(gs);
    int rc = money_writer_submit_buyin(w, s->wallet, t->escrow, op, trad_escrow_cb, a);
    if (rc != 0) {
        free(a);
        /* Answer as a refusal on the table's own thread, like any other result. */
        money_result_t *res = xcalloc(1, sizeof *res);
        res->kind = MONEY_KIND_BUYIN;
        res->status = rc;
        res->arg = gs;
        rt_msg_t m = {.type = TRAD_MSG_MONEY,
                      .arg = (uint64_t)i,
                      .arg2 = s->gen,
                      .ptr = res,
                      .free_fn = gs_money_result_free};
        rt_post(rt_desk_rt(desk), rt_desk_id(desk), &m);
    }
}

/* Gives seat i's held escrow back to its wallet. */
static void trad_escrow_return(rt_desk_t *desk, trad_table_t *t, int i)
{
    trad_seat_t *s = &t->seat[i];
    if (s->escrow != ESC_HELD)
        return;
    s->escrow = ESC_NONE;
    money_writer_t *w = gs_money(gs_of_desk(desk));
    if (w == NULL)
        return;
    char op[MONEY_ID_MAX + 1];
    trad_op_id(desk, t, op, sizeof op);
    int rc = money_writer_submit_cashout(w, s->wallet, t->escrow, op, trad_logged_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "trad_cashout_refused", "{s:s,s:I,s:i}", "wallet", s->wallet, "amount",
                 (json_int_t)t->escrow, "errno", -rc);
}

/* ---- table: seats ------------------------------------------------------------------------ */

static void trad_table_maybe_start(rt_desk_t *desk, trad_table_t *t);

/* Frees seat i (its escrow returned if held; a pending one is returned when it arrives). */
static void trad_table_vacate(rt_desk_t *desk, trad_table_t *t, int i, bool tell_lobby)
{
    trad_seat_t *s = &t->seat[i];
    if (s->escrow == ESC_PENDING) {
        s->leaving = true; /* the money message finishes the job */
        return;
    }
    trad_escrow_return(desk, t, i);
    if (!s->bot && s->join == NULL)
        gs_seat(gs_of_desk(desk), s->player, 0);
    memset(s, 0, sizeof *s);
    trad_table_sync_humans(desk, t);
    if (tell_lobby)
        trad_to_lobby(desk, t, TRAD_MSG_SEATS_FREED, 1);
}

/* With no human left (none seated, none joining), bots stand up too: a table of bots only
 * never deals. */
static void trad_table_release_bots(rt_desk_t *desk, trad_table_t *t)
{
    if (rt_desk_in_round(desk))
        return;
    for (int i = 0; i < t->seats; i++)
        if (t->seat[i].player != 0 && !t->seat[i].bot)
            return;
    for (int i = 0; i < t->seats; i++)
        if (t->seat[i].player != 0)
            trad_table_vacate(desk, t, i, !t->closing);
}

static void trad_table_arm_fill(rt_desk_t *desk, trad_table_t *t)
{
    if (t->fill_armed || t->closing || t->eng->bot_fill_ms < 0 || trad_table_humans(t) == 0 ||
        trad_table_taken(t) == t->seats)
        return;
    if (rt_desk_timer_arm(desk, t->eng->bot_fill_ms, TRAD_TIMER_FILL, NULL) == 0)
        t->fill_armed = true;
}

static void trad_table_fill_bots(rt_desk_t *desk, trad_table_t *t)
{
    static uint64_t next_bot = 1;
    if (t->closing || trad_table_humans(t) == 0)
        return;
    int n = 0;
    for (int i = 0; i < t->seats; i++) {
        trad_seat_t *s = &t->seat[i];
        if (s->player != 0)
            continue;
        memset(s, 0, sizeof *s);
        s->player = (1ULL << 62) | __atomic_fetch_add(&next_bot, 1, __ATOMIC_RELAXED);
        s->bot = true;
        s->gone = false;
        snprintf(s->wallet, sizeof s->wallet, "%s", t->eng->house);
        trad_escrow_buy(desk, t, i);
        n++;
    }
    if (n > 0)
        trad_to_lobby(desk, t, TRAD_MSG_SEATS_TAKEN, n);
}

/*
 * The table closes (drain): escrows go back, the humans are told (TableClosing) and the
 * gateway asked to place them elsewhere (DeskClosing); they stay seated until they leave.
 */
static void trad_table_close(rt_desk_t *desk, trad_table_t *t)
{
    if (t->closing)
        return;
    t->closing = true;
    uint64_t players[SHED_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->seats; i++) {
        trad_seat_t *s = &t->seat[i];
        if (s->player == 0)
            continue;
        if (s->bot) {
            trad_table_vacate(desk, t, i, false);
            continue;
        }
        trad_escrow_return(desk, t, i);
        if (s->join == NULL)
            players[n++] = s->player;
    }
    trad_to_lobby(desk, t, TRAD_MSG_CLOSED, 0);
    gs_close_desk_seats(gs_of_desk(desk), rt_desk_id(desk), players, n,
                        CROUPIER__CLOSING_REASON__CLOSING_DRAINING,
                        "server draining; no further deal at this table");
}

/* ---- table: hand history ---------------------------------------------------------------- */

/* Writes a set as card text ("3d", "Th", "B", "R" per card, concatenated); buf needs
 * 2 * SHED_MAX_CARDS + 1 bytes. */
static void trad_hist_cards(shed_set_t s, char *buf)
{
    static const char ranks[] = "??23456789TJQKA";
    static const char suits[] = "cdhs";
    uint8_t w[SHED_MAX_CARDS];
    size_t n = trad_set_wire(s, w), k = 0;
    for (size_t i = 0; i < n; i++) {
        int r = FRAME_CARD_RANK(w[i]);
        if (r == FRAME_RANK_JOKER) {
            buf[k++] = FRAME_CARD_SUIT(w[i]) == 0 ? 'B' : 'R';
        } else {
            buf[k++] = ranks[r];
            buf[k++] = suits[FRAME_CARD_SUIT(w[i])];
        }
    }
    buf[k] = '\0';
}

/* Starts the deal's history: seats (stack = escrow) and every dealt hand (-1: set aside). */
static void trad_hist_begin(rt_desk_t *desk, trad_table_t *t)
{
    money_round_id_t rid = gs_round_id(gs_of_desk(desk), rt_desk_id(desk), t->deal_seq);
    json_decref(t->hist);
    t->hist = money_history_new(&rid, shed_rules_name(t->rules));
    if (t->hist == NULL)
        return;
    char buf[2 * SHED_MAX_CARDS + 1];
    for (int i = 0; i < t->seats; i++) {
        money_history_add_seat(t->hist, i, t->seat[i].wallet, t->seat[i].bot, t->escrow);
        trad_hist_cards(shed_game_hand(t->g, i), buf);
        money_history_add_card(t->hist, i, buf);
    }
    if (!shed_set_empty(shed_game_extra(t->g))) {
        trad_hist_cards(shed_game_extra(t->g), buf);
        money_history_add_card(t->hist, -1, buf);
    }
}

static void trad_hist_action(trad_table_t *t, int seat, const char *what, shed_set_t cards,
                             int64_t amount)
{
    if (t->hist == NULL)
        return;
    char buf[2 * SHED_MAX_CARDS + 8];
    if (shed_set_empty(cards)) {
        snprintf(buf, sizeof buf, "%s", what);
    } else {
        size_t n = (size_t)snprintf(buf, sizeof buf, "%s ", what);
        trad_hist_cards(cards, buf + n);
    }
    money_history_add_action(t->hist, seat, buf, amount);
}

/* Completed deals: results added and the history handed to the writer; voided: dropped. */
static void trad_hist_end(rt_desk_t *desk, trad_table_t *t, const int64_t *delta, bool completed)
{
    money_writer_t *w = gs_money(gs_of_desk(desk));
    json_t *h = t->hist;
    t->hist = NULL;
    if (h == NULL)
        return;
    if (!completed || w == NULL) {
        json_decref(h);
        return;
    }
    for (int i = 0; i < t->seats; i++)
        money_history_add_result(h, i, delta[i]);
    json_object_set_new(h, "stake", json_integer(t->stake));
    money_round_id_t rid = gs_round_id(gs_of_desk(desk), rt_desk_id(desk), t->deal_seq);
    money_history_set_round(h, &rid); /* the settlement's id (gs_round_id) */
    int rc = money_writer_submit_history(w, shed_rules_name(t->rules), h, trad_logged_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "trad_history_refused", "{s:i}", "errno", -rc);
}

/* ---- table: the deal --------------------------------------------------------------------- */

static void trad_turn_begin(rt_desk_t *desk, trad_table_t *t);

static void trad_turn_cancel(rt_desk_t *desk, trad_table_t *t)
{
    if (t->turn_armed)
        rt_desk_timer_cancel(desk, t->turn_timer);
    t->turn_armed = false;
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

static void trad_push_play(rt_desk_t *desk, trad_table_t *t, int seat, Croupier__SheddingMove mv,
                           shed_set_t cards, int bid, bool timed_out)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play p = CROUPIER__PLAY__INIT;
    Croupier__Action a;
    Croupier__SheddingAction sa;
    uint8_t buf[SHED_MAX_CARDS];
    size_t n = trad_set_wire(cards, buf);
    trad_wire_action(&a, &sa, mv, buf, n, bid);
    p.seat = (uint32_t)seat;
    p.action = &a;
    p.has_cards_left = true;
    p.cards_left = (uint32_t)shed_set_size(shed_game_hand(t->g, seat));
    p.has_timed_out = timed_out;
    p.timed_out = timed_out;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &p;
    trad_push_all(desk, t, &sm);
}

/* Pushes Deal{seat, cards} (cards seen by all) to every human. */
static void trad_push_deal_public(rt_desk_t *desk, trad_table_t *t, int seat, shed_set_t cards)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Deal d = CROUPIER__DEAL__INIT;
    uint8_t buf[SHED_MAX_CARDS];
    char round_id[MONEY_ID_MAX + 1];
    trad_round_id(desk, t, round_id);
    d.has_seat = true;
    d.seat = (uint32_t)seat;
    d.has_cards = true;
    d.cards.data = buf;
    d.cards.len = trad_set_wire(cards, buf);
    d.has_count = true;
    d.count = (uint32_t)d.cards.len;
    d.round_id = round_id;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
    sm.deal = &d;
    trad_push_all(desk, t, &sm);
}

static void trad_deal_end(rt_desk_t *desk, trad_table_t *t, Croupier__VoidReason why);

/*
 * Turns the core's events of the last accepted action into pushes (Play, Deal of the bottom
 * cards, ...) and moves the deal on: next turn, or the end of the deal.
 */
static void trad_after_action(rt_desk_t *desk, trad_table_t *t, bool timed_out)
{
    int nev;
    const shed_event_t *ev = shed_game_events(t->g, &nev);
    static const shed_set_t none = {{0, 0}};
    for (int k = 0; k < nev; k++) {
        const shed_event_t *e = &ev[k];
        switch (e->kind) {
        case SHED_EV_BID:
            trad_hist_action(t, e->seat, "bid", none, e->value);
            trad_push_play(desk, t, e->seat, CROUPIER__SHEDDING_MOVE__SHEDDING_BID, none, e->value,
                           timed_out);
            break;
        case SHED_EV_LANDLORD:
            trad_hist_action(t, e->seat, "landlord", e->cards, e->value);
            trad_push_deal_public(desk, t, e->seat, e->cards);
            break;
        case SHED_EV_PLAY:
            trad_hist_action(t, e->seat, timed_out ? "play(auto)" : "play", e->cards,
                             shed_set_size(e->cards));
            trad_push_play(desk, t, e->seat, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, e->cards, 0,
                           timed_out);
            t->last_play = e->cards;
            t->last_play_seat = e->seat;
            break;
        case SHED_EV_TRIBUTE:
            trad_hist_action(t, e->seat, "give", e->cards, e->value);
            trad_push_play(desk, t, e->seat, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, e->cards, 0,
                           timed_out);
            break;
        case SHED_EV_PASS:
            trad_hist_action(t, e->seat, timed_out ? "pass(auto)" : "pass", none, 0);
            trad_push_play(desk, t, e->seat, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, none, 0,
                           timed_out);
            break;
        case SHED_EV_TRICK:
            t->last_play = none;
            t->last_play_seat = -1;
            break;
        case SHED_EV_DOUBLE:
            t->doublings = e->value;
            break;
        default:
            break;
        }
    }
    if (shed_game_phase(t->g) == SHED_PHASE_OVER)
        trad_deal_end(desk, t, CROUPIER__VOID_REASON__VOID_NONE);
    else
        trad_turn_begin(desk, t);
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
 * Chooses a move for the seat to act: for a bot, or for a human in trustee (timeout, gone).
 * Bots bid the smallest bid when nobody has bid yet; trustee declines. Both give the first
 * allowed tribute card; trustee passes when allowed; otherwise the smallest legal play.
 */
static void trad_choose(const trad_table_t *t, bool bot, shed_action_t *a)
{
    const shed_game_t *g = t->g;
    memset(a, 0, sizeof *a);
    a->seat = shed_game_turn(g);
    int phase = shed_game_phase(g);
    if (phase == SHED_PHASE_BID) {
        int bids[8];
        int n = shed_game_legal_bids(g, bids);
        bool nobody = n > 1 && bids[1] == 1; /* the lowest bid is still open: no bid yet */
        a->kind = SHED_ACT_BID;
        a->bid = (bot && nobody && n > 1) ? bids[1] : 0;
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
    if (phase == SHED_PHASE_TRIBUTE) {
        a->kind = SHED_ACT_GIVE;
        a->cards = moves[0];
        free(moves);
        return;
    }
    if (n == 0) {
        a->kind = SHED_ACT_PASS;
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

/* Arms the turn timer for the seat to act and tells the humans whose turn it is. */
static void trad_turn_begin(rt_desk_t *desk, trad_table_t *t)
{
    trad_turn_cancel(desk, t);
    int turn = shed_game_turn(t->g);
    if (turn < 0)
        return;
    const trad_seat_t *s = &t->seat[turn];
    /* A leaver stays in trustee even if it resumes: its seat goes when the deal ends. */
    int delay = (s->bot || s->gone || s->leaving) ? t->eng->bot_ms : t->eng->turn_ms;
    if (rt_desk_timer_arm(desk, delay, TRAD_TIMER_TURN, &t->turn_timer) == 0) {
        t->turn_armed = true;
        t->turn_deadline_ns = clock_mono_ns() + (int64_t)delay * 1000000;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Turn tu = CROUPIER__TURN__INIT;
    tu.seat = (uint32_t)turn;
    tu.time_left_ms = (uint32_t)delay;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
    sm.turn = &tu;
    trad_push_all(desk, t, &sm);
}

/* The turn timer expired: the bot moves, or trustee moves for the human. */
static void trad_turn_expired(rt_desk_t *desk, trad_table_t *t)
{
    t->turn_armed = false;
    if (!rt_desk_in_round(desk) || shed_game_turn(t->g) < 0)
        return;
    int turn = shed_game_turn(t->g);
    bool bot = t->seat[turn].bot;
    shed_action_t a;
    trad_choose(t, bot, &a);
    int rc = shed_game_apply(t->g, &a);
    if (rc != SHED_OK) {
        /* Cannot happen with moves from the generator; never leave the deal stuck. */
        log_emit(LOG_ERROR, "trad_auto_move_refused", "{s:i,s:s}", "seat", turn, "error",
                 shed_strerror(rc));
        trad_deal_end(desk, t, CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR);
        return;
    }
    trad_after_action(desk, t, !bot);
}

/* Starts a deal when every seat is taken with its escrow held, intake is open and the gap
 * since the last deal has passed. */
static void trad_table_maybe_start(rt_desk_t *desk, trad_table_t *t)
{
    if (t->closing || rt_desk_in_round(desk))
        return;
    for (int i = 0; i < t->seats; i++)
        if (t->seat[i].player == 0 || t->seat[i].escrow != ESC_HELD || t->seat[i].join != NULL ||
            t->seat[i].leaving)
            return;
    if (trad_table_humans(t) == 0)
        return;
    int64_t now = clock_mono_ns();
    if (now < t->next_start_ns || !gs_can_start_round(gs_of_desk(desk))) {
        if (rt_intake_stopped(rt_desk_rt(desk))) {
            trad_table_close(desk, t);
            return;
        }
        if (!t->gap_armed) {
            int64_t at = now < t->next_start_ns ? t->next_start_ns : now + 50 * 1000000LL;
            if (rt_desk_timer_arm_at(desk, at, TRAD_TIMER_GAP, NULL) == 0)
                t->gap_armed = true;
        }
        return;
    }
    if (rt_desk_begin_round(desk) != 0) {
        trad_table_close(desk, t); /* intake stopped */
        return;
    }
    t->deal_seq++;
    t->doublings = 0;
    t->last_play = (shed_set_t){{0, 0}};
    t->last_play_seat = -1;
    if (t->rules == t->eng->test_deck_rules)
        shed_game_deal_order(t->g, t->eng->test_deck, t->eng->test_deck_n, 0);
    else
        shed_game_deal_secure(t->g);
    trad_hist_begin(desk, t);
    char round_id[MONEY_ID_MAX + 1];
    trad_round_id(desk, t, round_id);
    const char *opt_names[8];
    for (int i = 0; i < t->seats; i++) {
        if (!trad_seat_human(&t->seat[i]))
            continue;
        for (int k = 0; k < t->seats; k++) {
            Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
            Croupier__Deal d = CROUPIER__DEAL__INIT;
            uint8_t buf[SHED_MAX_CARDS];
            shed_set_t h = shed_game_hand(t->g, k);
            d.has_seat = true;
            d.seat = (uint32_t)k;
            d.has_count = true;
            d.count = (uint32_t)shed_set_size(h);
            if (k == i) {
                d.has_cards = true;
                d.cards.data = buf;
                d.cards.len = trad_set_wire(h, buf);
            }
            d.round_id = round_id;
            if (k == i)
                trad_deal_options(t, &d, opt_names);
            sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
            sm.deal = &d;
            trad_push(desk, t, i, &sm);
        }
    }
    log_emit(LOG_DEBUG, "trad_deal_started", "{s:s,s:s}", "game", shed_rules_name(t->rules),
             "round", round_id);
    trad_turn_begin(desk, t);
}

/*
 * Ends the running deal. Completed: the core's deltas, capped at the escrow and raked, are
 * settled after every escrow is cashed out (the writer's FIFO applies them in that order).
 * Thrown in (nobody bid): escrows back, nothing settled. Voided (drain bound): escrows back,
 * nothing settled, the players told why. Then leavers go, and the table either closes (intake
 * stopped) or buys the next deal's escrows.
 */
static void trad_deal_end(rt_desk_t *desk, trad_table_t *t, Croupier__VoidReason why)
{
    bool drain_void = why != CROUPIER__VOID_REASON__VOID_NONE;
    gs_t *gs = gs_of_desk(desk);
    trad_turn_cancel(desk, t);
    const shed_settlement_t *ss = shed_game_settlement(t->g);
    bool thrown_in = !drain_void && (ss == NULL || ss->voided);
    int64_t delta[SHED_MAX_SEATS] = {0};
    int64_t rake = 0;
    if (!drain_void && !thrown_in) {
        for (int i = 0; i < t->seats; i++)
            delta[i] = ss->delta[i];
        rake = trad_settle_cap(delta, t->seats, t->escrow, t->eng->rake_permille);
    }
    for (int i = 0; i < t->seats; i++)
        trad_escrow_return(desk, t, i);
    char round_id[MONEY_ID_MAX + 1];
    trad_round_id(desk, t, round_id);
    money_writer_t *w = gs_money(gs);
    if (!drain_void && !thrown_in && w != NULL) {
        money_settlement_t ms = {0};
        ms.round = gs_round_id(gs, rt_desk_id(desk), t->deal_seq);
        ms.game = shed_rules_name(t->rules);
        ms.rake = rake;
        for (int i = 0; i < t->seats; i++) {
            size_t k = 0;
            while (k < ms.nplayers && strcmp(ms.players[k], t->seat[i].wallet) != 0)
                k++;
            if (k == ms.nplayers) {
                ms.players[k] = t->seat[i].wallet;
                ms.deltas[k] = 0;
                ms.nplayers++;
            }
            ms.deltas[k] += delta[i];
        }
        int rc = money_writer_submit_settle(w, &ms, trad_logged_cb, NULL);
        if (rc != 0)
            log_emit(LOG_ERROR, "trad_settle_refused", "{s:s,s:i}", "round", round_id, "errno",
                     -rc);
    }
    trad_hist_end(desk, t, delta, !drain_void && !thrown_in);
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    Croupier__SeatDelta deltas[SHED_MAX_SEATS];
    Croupier__SeatDelta *dptr[SHED_MAX_SEATS];
    uint8_t shown[SHED_MAX_SEATS][SHED_MAX_CARDS];
    re.round_id = round_id;
    if (drain_void) {
        re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
        re.has_void_reason = true;
        re.void_reason = why;
        re.detail = why == CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT
                        ? "the server had to stop before the deal could finish; nothing was paid "
                          "and every escrow was returned"
                        : "the deal could not go on; nothing was paid and every escrow was "
                          "returned";
    } else {
        re.outcome = CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
        if (thrown_in)
            re.detail = "nobody bid: the deal is thrown in, nothing is paid";
    }
    for (int i = 0; i < t->seats; i++) {
        Croupier__SeatDelta d = CROUPIER__SEAT_DELTA__INIT;
        d.seat = (uint32_t)i;
        d.player_id = t->seat[i].player;
        d.delta = delta[i];
        d.has_shown_cards = true;
        d.shown_cards.data = shown[i];
        d.shown_cards.len = trad_set_wire(shed_game_hand(t->g, i), shown[i]);
        deltas[i] = d;
        dptr[i] = &deltas[i];
    }
    re.n_deltas = (size_t)t->seats;
    re.deltas = dptr;
    re.has_rake = true;
    re.rake = rake;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
    sm.round_end = &re;
    trad_push_all(desk, t, &sm);
    rt_outcome_t oc = drain_void ? RT_ROUND_VOIDED : RT_ROUND_COMPLETED;
    rt_desk_end_round(desk, oc);
    gs_count_round(gs, shed_rules_name(t->rules), oc);
    t->next_start_ns = clock_mono_ns() + (int64_t)t->eng->gap_ms * 1000000;
    for (int i = 0; i < t->seats; i++)
        if (t->seat[i].player != 0 && t->seat[i].leaving)
            trad_table_vacate(desk, t, i, !t->closing);
    if (drain_void || rt_intake_stopped(rt_desk_rt(desk))) {
        trad_table_close(desk, t);
        return;
    }
    trad_table_release_bots(desk, t);
    for (int i = 0; i < t->seats; i++)
        if (t->seat[i].player != 0 && t->seat[i].escrow == ESC_NONE)
            trad_escrow_buy(desk, t, i);
    trad_table_arm_fill(desk, t);
}

/* A buy-in's result reached the table (arg = seat, arg2 = generation). */
static void trad_table_on_money(rt_desk_t *desk, trad_table_t *t, rt_msg_t *msg)
{
    money_result_t *res = msg->ptr;
    int i = (int)msg->arg;
    if (i < 0 || i >= t->seats || t->seat[i].gen != msg->arg2 || t->seat[i].escrow != ESC_PENDING) {
        log_emit(LOG_ERROR, "trad_money_stray", "{s:i,s:i}", "seat", i, "status", res->status);
        return;
    }
    gs_t *gs = gs_of_desk(desk);
    trad_seat_t *s = &t->seat[i];
    bool ok = res->status == MONEY_OK;
    s->escrow = ok ? ESC_HELD : ESC_NONE;
    gs_request_t *join = s->join;
    if (join != NULL) {
        s->join = NULL;
        if (ok && !t->closing && !s->leaving) {
            gs_seat(gs, s->player, rt_desk_id(desk));
            trad_table_sync_humans(desk, t);
            trad_reply_joined(desk, t, join, i);
            trad_table_arm_fill(desk, t);
            trad_table_maybe_start(desk, t);
            return;
        }
        if (ok || t->closing)
            gs_reply(gs, join, CROUPIER__ERROR_CODE__DRAINING, "table closing", NULL);
        else if (res->status == MONEY_ERR_INSUFFICIENT) {
            char m[128];
            snprintf(m, sizeof m, "wallet below the game's maximum loss (%lld chips at stake %lld)",
                     (long long)t->escrow, (long long)t->stake);
            gs_reply(gs, join, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS, m, NULL);
        } else
            gs_reply(gs, join, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet unavailable", NULL);
        s->leaving = false;
        trad_table_vacate(desk, t, i, true); /* returns the escrow if it was taken */
        trad_table_release_bots(desk, t);
        return;
    }
    if (t->closing && !s->leaving && !s->bot) {
        /* The table closed meanwhile: the player stays seated (until they leave), the escrow
         * goes back. */
        trad_escrow_return(desk, t, i);
        return;
    }
    if (ok && (t->closing || s->leaving)) {
        s->leaving = false;
        trad_table_vacate(desk, t, i, !t->closing);
        trad_table_release_bots(desk, t);
        return;
    }
    if (!ok) {
        if (!s->bot) {
            Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
            Croupier__Error e = CROUPIER__ERROR__INIT;
            e.code = res->status == MONEY_ERR_INSUFFICIENT
                         ? CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS
                         : CROUPIER__ERROR_CODE__UNAVAILABLE;
            e.message = "the wallet no longer covers the next deal; you have left the table";
            sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ERROR;
            sm.error = &e;
            trad_push(desk, t, i, &sm);
        } else {
            log_emit(LOG_WARN, "trad_house_short", "{s:s,s:I}", "wallet", s->wallet, "amount",
                     (json_int_t)t->escrow);
        }
        s->leaving = false;
        trad_table_vacate(desk, t, i, !t->closing);
        trad_table_release_bots(desk, t);
        trad_table_arm_fill(desk, t);
        return;
    }
    trad_table_maybe_start(desk, t);
}

/* ---- table: requests --------------------------------------------------------------------- */

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

/* A player's move: validated in full by the core; refused with a specific code and nothing
 * changed, or applied, answered OK and broadcast. */
static void trad_table_action(rt_desk_t *desk, trad_table_t *t, gs_request_t *req, int i)
{
    gs_t *gs = gs_of_desk(desk);
    const Croupier__Action *wa = req->frame->action;
    if (wa->kind_case != CROUPIER__ACTION__KIND_SHEDDING) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__WRONG_ENGINE, "this table plays a shedding game",
                 NULL);
        return;
    }
    if (!rt_desk_in_round(desk)) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__NO_ROUND, "no deal in progress", NULL);
        return;
    }
    const Croupier__SheddingAction *sa = wa->shedding;
    shed_action_t a = {.seat = i};
    int phase = shed_game_phase(t->g);
    if (shed_game_turn(t->g) != i) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_YOUR_TURN, "not your turn", NULL);
        return;
    }
    switch (sa->move) {
    case CROUPIER__SHEDDING_MOVE__SHEDDING_BID:
        a.kind = SHED_ACT_BID;
        a.bid = sa->bid > 1000 ? 1000 : (int)sa->bid;
        break;
    case CROUPIER__SHEDDING_MOVE__SHEDDING_PASS:
        a.kind = SHED_ACT_PASS;
        break;
    case CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY: {
        a.kind = phase == SHED_PHASE_TRIBUTE ? SHED_ACT_GIVE : SHED_ACT_PLAY;
        int decks = shed_rules_find("guandan") == t->rules ? 2 : 1;
        int rc = trad_cards_from_wire(sa->cards.data, sa->cards.len, decks, shed_game_hand(t->g, i),
                                      &a.cards);
        if (rc == -EINVAL) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__ILLEGAL_MOVE,
                     "a card is listed more often than the game has copies", NULL);
            return;
        }
        if (rc == -ENOENT) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__CARDS_NOT_HELD, "cards not held", NULL);
            return;
        }
        break;
    }
    default:
        gs_reply(gs, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "unknown move", NULL);
        return;
    }
    int rc = shed_game_apply(t->g, &a);
    if (rc != SHED_OK) {
        gs_reply(gs, req, trad_shed_code(rc), shed_strerror(rc), NULL);
        return;
    }
    t->seat[i].gone = false;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result r = CROUPIER__RESULT__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &r;
    gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
    trad_after_action(desk, t, false);
}

static void trad_table_join(rt_desk_t *desk, trad_table_t *t, gs_request_t *req, int i)
{
    gs_t *gs = gs_of_desk(desk);
    if (i >= 0) {
        if (t->seat[i].join != NULL)
            gs_reply(gs, req, CROUPIER__ERROR_CODE__ALREADY_SEATED, "join in progress", NULL);
        else
            trad_reply_joined(desk, t, req, i);
        trad_to_lobby(desk, t, TRAD_MSG_SEATS_FREED, 1); /* the lobby counted a seat for it */
        return;
    }
    if (t->closing || rt_intake_stopped(rt_desk_rt(desk))) {
        trad_to_lobby(desk, t, TRAD_MSG_SEATS_FREED, 1);
        gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
        return;
    }
    for (i = 0; i < t->seats && t->seat[i].player != 0; i++)
        ;
    if (i == t->seats) {
        /* Bots took the seat meanwhile: give the seat count back and let the lobby route the
         * join again (messages from this desk reach the lobby in order). */
        trad_to_lobby(desk, t, TRAD_MSG_SEATS_FREED, 1);
        gs_request_post(gs, t->lobby, req);
        return;
    }
    trad_seat_t *s = &t->seat[i];
    memset(s, 0, sizeof *s);
    s->player = req->player_id;
    s->join = req;
    snprintf(s->wallet, sizeof s->wallet, "%llu", (unsigned long long)req->player_id);
    trad_escrow_buy(desk, t, i);
    if (s->escrow == ESC_HELD) { /* no money writer: seated at once */
        s->join = NULL;
        gs_seat(gs, s->player, rt_desk_id(desk));
        trad_table_sync_humans(desk, t);
        trad_reply_joined(desk, t, req, i);
        trad_table_arm_fill(desk, t);
        trad_table_maybe_start(desk, t);
    }
}

static void trad_table_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    trad_table_t *t = state;
    gs_t *gs = gs_of_desk(desk);
    int i = trad_table_find(t, req->player_id);
    if (req->kind == GS_REQ_JOIN) {
        trad_table_join(desk, t, req, i);
        return;
    }
    if (i < 0 || t->seat[i].join != NULL) {
        if (req->kind == GS_REQ_PLAYER_GONE)
            gs_request_free(req);
        else
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated at this table", NULL);
        return;
    }
    trad_seat_t *s = &t->seat[i];
    switch (req->kind) {
    case GS_REQ_RESUME: {
        bool was_gone = s->gone;
        s->gone = false;
        /* Back (usually through another gateway after a GoAway): if its turn runs on the
         * trustee's short timer since the old connection was reported gone, it gets its own
         * turn time again (a new Turn, pushed before the snapshot), or trustee would move
         * under it and its own move would find the turn gone. A leaver stays in trustee. */
        if (was_gone && !s->leaving && rt_desk_in_round(desk) && shed_game_turn(t->g) == i)
            trad_turn_begin(desk, t);
        trad_reply_snapshot(desk, t, req, i);
        return;
    }
    case GS_REQ_LEAVE:
        gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, NULL);
        if (rt_desk_in_round(desk)) {
            /* A seat is never torn mid-deal: trustee plays it out, then it is freed. */
            s->leaving = true;
            s->gone = true;
            if (shed_game_turn(t->g) == i)
                trad_turn_begin(desk, t);
        } else {
            trad_table_vacate(desk, t, i, !t->closing);
            trad_table_release_bots(desk, t);
        }
        return;
    case GS_REQ_ACTION:
        trad_table_action(desk, t, req, i);
        return;
    case GS_REQ_PLAYER_GONE:
        gs_request_free(req);
        s->gone = true;
        if (rt_desk_in_round(desk) && shed_game_turn(t->g) == i)
            trad_turn_begin(desk, t); /* trustee moves after bot_ms */
        return;
    default:
        gs_request_free(req);
        return;
    }
}

static void trad_table_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    trad_table_t *t = state;
    switch (cookie) {
    case TRAD_TIMER_TURN:
        trad_turn_expired(desk, t);
        return;
    case TRAD_TIMER_GAP:
        t->gap_armed = false;
        trad_table_maybe_start(desk, t);
        return;
    case TRAD_TIMER_FILL:
        t->fill_armed = false;
        trad_table_fill_bots(desk, t);
        return;
    default:
        return;
    }
}

static void trad_table_on_intake_stopped(rt_desk_t *desk, void *state)
{
    trad_table_t *t = state;
    if (!rt_desk_in_round(desk))
        trad_table_close(desk, t);
    /* else: the deal finishes, then the table closes (trad_deal_end). */
}

static void trad_table_on_void(rt_desk_t *desk, void *state)
{
    trad_table_t *t = state;
    if (rt_desk_in_round(desk))
        trad_deal_end(desk, t, CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT);
    trad_table_close(desk, t);
}

static void trad_table_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    if (msg->type == TRAD_MSG_MONEY)
        trad_table_on_money(desk, state, msg);
}

static void trad_table_on_destroy(rt_desk_t *desk, void *state)
{
    trad_table_t *t = state;
    if (rt_desk_in_round(desk))
        trad_deal_end(desk, t, CROUPIER__VOID_REASON__VOID_SHUTDOWN);
    for (int i = 0; i < t->seats; i++) {
        trad_escrow_return(desk, t, i);
        if (t->seat[i].join != NULL)
            gs_reply(gs_of_desk(desk), t->seat[i].join, CROUPIER__ERROR_CODE__UNAVAILABLE,
                     "server stopping", NULL);
    }
    json_decref(t->hist);
    shed_game_destroy(t->g);
    free(t);
}

static const gs_desk_ops_t trad_table_ops = {
    .on_request = trad_table_on_request,
    .on_timer = trad_table_on_timer,
    .on_intake_stopped = trad_table_on_intake_stopped,
    .on_void = trad_table_on_void,
    .on_message = trad_table_on_message,
    .on_destroy = trad_table_on_destroy,
};

/* ---- lobby ------------------------------------------------------------------------------- */

static const shed_rules_t *trad_engine_game(const trad_engine_t *eng, const char *name)
{
    for (int i = 0; i < eng->ngames; i++)
        if (strcmp(shed_rules_name(eng->games[i]), name) == 0)
            return eng->games[i];
    return NULL;
}

static int64_t trad_engine_units(const trad_engine_t *eng, const shed_rules_t *r)
{
    return eng->max_units_override > 0 ? eng->max_units_override
                                       : trad_max_units(shed_rules_name(r));
}

static int trad_table_open(trad_engine_t *eng, const shed_rules_t *rules, int64_t stake,
                           rt_desk_id_t *out)
{
    shed_config_t cfg = {.base_stake = stake, .rake_permille = 0};
    for (int i = 0; i < eng->opts.n; i++) {
        if (eng->opts.game[i].rules == rules) {
            cfg.options = eng->opts.game[i].options;
            cfg.bomb_units = eng->opts.game[i].bomb_units;
        }
    }
    trad_table_t *t = xcalloc(1, sizeof *t);
    t->g = shed_game_create(rules, &cfg);
    if (t->g == NULL) {
        free(t);
        return -EINVAL;
    }
    t->eng = eng;
    t->lobby = eng->lobby;
    t->rules = rules;
    t->seats = shed_rules_seats(rules);
    t->stake = stake;
    t->escrow = trad_engine_units(eng, rules) * stake;
    t->last_play_seat = -1;
    int rc = gs_desk_create(eng->gs, &trad_table_ops, t, -1, out);
    if (rc != 0) {
        shed_game_destroy(t->g);
        free(t);
    }
    return rc;
}

static void trad_lobby_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    trad_lobby_t *lb = state;
    gs_t *gs = gs_of_desk(desk);
    if (req->kind != GS_REQ_JOIN) {
        if (req->kind == GS_REQ_PLAYER_GONE)
            gs_request_free(req);
        else
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated on this server", NULL);
        return;
    }
    if (rt_intake_stopped(rt_desk_rt(desk))) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
        return;
    }
    const Croupier__Join *j = req->frame->join;
    const shed_rules_t *rules = trad_engine_game(lb->eng, j->game);
    if (rules == NULL) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__NO_SUCH_GAME, "game not served here", NULL);
        return;
    }
    int64_t units = trad_engine_units(lb->eng, rules);
    if (j->stake > ((int64_t)1 << 40) || j->stake > MONEY_MAX_AMOUNT / units) {
        gs_reply(gs, req, CROUPIER__ERROR_CODE__BET_ABOVE_MAX, "stake too large", NULL);
        return;
    }
    trad_ref_t *ref = NULL;
    for (int i = 0; i < lb->nrefs; i++) {
        trad_ref_t *r = &lb->refs[i];
        if (!r->closed && r->rules == rules && r->stake == j->stake && r->free > 0) {
            ref = r;
            break;
        }
    }
    if (ref == NULL) {
        rt_desk_id_t id;
        if (trad_table_open(lb->eng, rules, j->stake, &id) != 0) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "could not open a table", NULL);
            return;
        }
        if (lb->nrefs == lb->cap) {
            lb->cap = lb->cap ? lb->cap * 2 : 16;
            lb->refs = xrealloc(lb->refs, (size_t)lb->cap * sizeof *lb->refs);
        }
        ref = &lb->refs[lb->nrefs++];
        *ref = (trad_ref_t){
            .id = id, .rules = rules, .stake = j->stake, .free = shed_rules_seats(rules)};
    }
    ref->free--;
    gs_request_post(gs, ref->id, req);
}

static void trad_lobby_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    (void)desk;
    trad_lobby_t *lb = state;
    for (int i = 0; i < lb->nrefs; i++) {
        if (lb->refs[i].id != msg->arg)
            continue;
        if (msg->type == TRAD_MSG_SEATS_FREED)
            lb->refs[i].free += (int)msg->arg2;
        else if (msg->type == TRAD_MSG_SEATS_TAKEN)
            lb->refs[i].free -= (int)msg->arg2;
        else if (msg->type == TRAD_MSG_CLOSED)
            lb->refs[i].closed = true;
    }
}

static void trad_lobby_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    (void)desk;
    (void)state;
    (void)cookie;
}

static void trad_lobby_on_intake_stopped(rt_desk_t *desk, void *state)
{
    /* The lobby leaves the pool: every later join is answered DRAINING. */
    (void)desk;
    (void)state;
}

static void trad_lobby_on_void(rt_desk_t *desk, void *state)
{
    (void)desk;
    (void)state;
}

static void trad_lobby_on_destroy(rt_desk_t *desk, void *state)
{
    (void)desk;
    trad_lobby_t *lb = state;
    free(lb->refs);
    free(lb);
}

static const gs_desk_ops_t trad_lobby_ops = {
    .on_request = trad_lobby_on_request,
    .on_timer = trad_lobby_on_timer,
    .on_intake_stopped = trad_lobby_on_intake_stopped,
    .on_void = trad_lobby_on_void,
    .on_message = trad_lobby_on_message,
    .on_destroy = trad_lobby_on_destroy,
};

/* ---- engine ------------------------------------------------------------------------------ */

/*
 * Reads CROUPIER_TRAD_TEST_DECK, "GAME:CARDS" with CARDS the game's whole deck as rank+suit
 * pairs in deal order ("3s4h..."; one-deck games), for tests that need a known deal. Returns 0
 * (also when unset) or -EINVAL (logged) when the text is no deck order of that game.
 */
static int trad_test_deck(trad_engine_t *eng)
{
    const char *v = getenv("CROUPIER_TRAD_TEST_DECK");
    if (v == NULL)
        return 0;
    const char *colon = strchr(v, ':');
    char game[16] = "";
    if (colon != NULL && (size_t)(colon - v) < sizeof game)
        memcpy(game, v, (size_t)(colon - v));
    const shed_rules_t *r = colon != NULL ? trad_engine_game(eng, game) : NULL;
    int n = 0;
    bool ok = r != NULL;
    for (const char *p = ok ? colon + 1 : ""; ok && *p != '\0'; p += 2) {
        int rank = shed_rank_from_char(p[0]);
        const char *su = p[1] != '\0' ? strchr(shed_suit_chars, p[1]) : NULL;
        ok = rank >= 0 && rank < SHED_RANK_BJ && su != NULL && n < SHED_MAX_CARDS;
        if (ok)
            eng->test_deck[n++] = shed_card_make(0, rank, (int)(su - shed_suit_chars));
    }
    if (ok) {
        shed_game_t *g = shed_game_create(r, NULL);
        ok = g != NULL && shed_game_deal_order(g, eng->test_deck, n, 0) == 0;
        shed_game_destroy(g);
    }
    if (!ok) {
        log_emit(LOG_ERROR, "trad_bad_test_deck", "{s:s,s:s}", "value", v, "reason",
                 "want GAME:CARDS, a served one-deck game's whole deck in deal order");
        return -EINVAL;
    }
    eng->test_deck_rules = r;
    eng->test_deck_n = n;
    log_emit(LOG_WARN, "trad_test_deck_in_use", "{s:s}", "game", game);
    return 0;
}

/*
 * Creates the engine: parses --games (default: all four) and --trad-options (gs_config_t's
 * engine_options), reads the CROUPIER_TRAD_* settings and opens the lobby desk. Returns 0 or
 * -EINVAL (unknown game, bad options or test deck, logged) or a desk error.
 */
static int trad_create(gs_t *gs, const char *games, void **out)
{
    trad_engine_t *eng = xcalloc(1, sizeof *eng);
    eng->gs = gs;
    const char *list = games != NULL ? games : "doudizhu,runfast,bigtwo,guandan";
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        const shed_rules_t *r = shed_rules_find(tok);
        if (r == NULL || eng->ngames == TRAD_MAX_GAMES || trad_engine_game(eng, tok) != NULL) {
            log_emit(LOG_ERROR, "engine_bad_games", "{s:s,s:s,s:s}", "engine", "traditional",
                     "games", list, "reason",
                     r == NULL ? "unknown game (doudizhu, runfast, bigtwo, guandan)"
                               : "game listed twice");
            free(eng);
            return -EINVAL;
        }
        eng->games[eng->ngames++] = r;
        if (eng->games_text[0] != '\0')
            strlcat(eng->games_text, ",", sizeof eng->games_text);
        strlcat(eng->games_text, tok, sizeof eng->games_text);
    }
    if (eng->ngames == 0) {
        log_emit(LOG_ERROR, "engine_bad_games", "{s:s,s:s}", "engine", "traditional", "games",
                 list);
        free(eng);
        return -EINVAL;
    }
    eng->turn_ms = trad_env_int("CROUPIER_TRAD_TURN_MS", 15000, 10, 600000);
    eng->bot_ms = trad_env_int("CROUPIER_TRAD_BOT_MS", 400, 0, 60000);
    eng->bot_fill_ms = trad_env_int("CROUPIER_TRAD_BOT_FILL_MS", 10000, -1, 3600000);
    eng->gap_ms = trad_env_int("CROUPIER_TRAD_GAP_MS", 1500, 0, 600000);
    eng->rake_permille = trad_env_int("CROUPIER_TRAD_RAKE_PERMILLE", 0, 0, 1000);
    eng->max_units_override = trad_env_int("CROUPIER_TRAD_MAX_UNITS", 0, 0, 1 << 20);
    char err[256];
    if (trad_options_parse(gs_engine_options(gs), games, &eng->opts, err, sizeof err) != 0) {
        log_emit(LOG_ERROR, "engine_bad_trad_options", "{s:s,s:s}", "trad_options",
                 gs_engine_options(gs), "reason", err);
        free(eng);
        return -EINVAL;
    }
    if (trad_test_deck(eng) != 0) {
        free(eng);
        return -EINVAL;
    }
    const char *house = getenv("CROUPIER_TRAD_HOUSE");
    if (house == NULL || !money_valid_player(house))
        house = "house-traditional";
    snprintf(eng->house, sizeof eng->house, "%s", house);
    trad_lobby_t *lb = xcalloc(1, sizeof *lb);
    lb->eng = eng;
    int rc = gs_desk_create(gs, &trad_lobby_ops, lb, 0, &eng->lobby);
    if (rc != 0) {
        free(lb);
        free(eng);
        return rc;
    }
    log_emit(LOG_INFO, "trad_engine_ready", "{s:s,s:i,s:i,s:i,s:s,s:s}", "games", eng->games_text,
             "turn_ms", eng->turn_ms, "bot_fill_ms", eng->bot_fill_ms, "rake_permille",
             eng->rake_permille, "house", eng->house, "trad_options",
             gs_engine_options(gs) != NULL ? gs_engine_options(gs) : "");
    *out = eng;
    return 0;
}

static void trad_join(void *e, gs_request_t *req)
{
    trad_engine_t *eng = e;
    const Croupier__Join *j = req->frame->join;
    if (j->engine != CROUPIER__ENGINE__ENGINE_TRADITIONAL) {
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__WRONG_ENGINE,
                 "this server runs shedding games", NULL);
        return;
    }
    if (trad_engine_game(eng, j->game) == NULL) {
        gs_reply(eng->gs, req, CROUPIER__ERROR_CODE__NO_SUCH_GAME, eng->games_text, NULL);
        return;
    }
    gs_request_post(eng->gs, eng->lobby, req);
}

static const char *trad_games(void *e)
{
    return ((trad_engine_t *)e)->games_text;
}

static void trad_destroy(void *e)
{
    free(e);
}

/* engine_ops_t.check_options: --trad-options checked at start (trad_options_parse). */
static int trad_check_options(const char *options, const char *games, char *err, size_t errlen)
{
    return trad_options_parse(options, games, NULL, err, errlen) == 0 ? 0 : -1;
}

const engine_ops_t trad_engine_ops = {
    .name = "traditional",
    .engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL,
    .create = trad_create,
    .join = trad_join,
    .games = trad_games,
    .destroy = trad_destroy,
    .check_options = trad_check_options,
};
