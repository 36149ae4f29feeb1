/*
 * replay -- the builder and the games' view rules. The contract is replay.h; the policy of each
 * game is docs/replays.md, the record docs/hand-history.md.
 */
#include "replay.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "deck.h"
#include "frame.h"
#include "holdem_record.h"
#include "xmalloc.h"

/* docs/replays.md "The policy of each game". */
static const replay_rules_t replay_rows[] = {
    {"holdem", REPLAY_SHOW_DOWN, false, true, "showdown", false, false},
    {"zhajinhua", REPLAY_SHOW_NONE, false, false, "own", false, true},
    {"doudizhu", REPLAY_SHOW_ALL, true, false, "all", false, false},
    {"runfast", REPLAY_SHOW_ALL, true, false, "all", false, false},
    {"bigtwo", REPLAY_SHOW_ALL, true, false, "all", false, false},
    {"guandan", REPLAY_SHOW_ALL, true, false, "all", false, false},
    {"blackjack", REPLAY_SHOW_ALL, false, false, "all", true, false},
    {"niuniu", REPLAY_SHOW_ALL, true, false, "all", false, false},
    {"test", REPLAY_SHOW_ALL, true, false, "all", false, false},
    {NULL, REPLAY_SHOW_NONE, false, false, "own", false, false},
};

const replay_rules_t *replay_rules(const char *game)
{
    const replay_rules_t *r = replay_rows;
    for (; r->game != NULL; r++)
        if (game != NULL && strcmp(r->game, game) == 0)
            return r;
    return r;
}

int replay_card_code(const char *t)
{
    static const char ranks[] = "23456789TJQKA";
    static const char suits[] = "cdhs";
    if (t == NULL || strlen(t) != 2)
        return -1;
    if (t[0] == 'X')
        return t[1] == 'b' ? 15 << 2 : t[1] == 'r' ? (15 << 2 | 1) : -1;
    const char *r = strchr(ranks, t[0]), *s = strchr(suits, t[1]);
    if (r == NULL || s == NULL || t[0] == '\0' || t[1] == '\0')
        return -1;
    return (int)((r - ranks + 2) << 2 | (s - suits));
}

static int64_t rp_int(const json_t *o, const char *key, int64_t dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

int replay_seat_of(const json_t *rec, uint64_t player)
{
    size_t i;
    const json_t *s;
    char id[24];
    snprintf(id, sizeof id, "%" PRIu64, player);
    json_array_foreach(json_object_get(rec, "seats"), i, s)
    {
        const char *p = json_string_value(json_object_get(s, "player"));
        if (p != NULL && strcmp(p, id) == 0 && player != 0)
            return (int)rp_int(s, "seat", -1);
    }
    return -1;
}

bool replay_is_round(const json_t *rec)
{
    return json_is_object(rec) && json_object_get(rec, "record") == NULL &&
           json_is_string(json_object_get(rec, "round")) &&
           json_is_string(json_object_get(rec, "game")) &&
           json_is_array(json_object_get(rec, "seats")) &&
           json_is_array(json_object_get(rec, "cards")) &&
           json_is_array(json_object_get(rec, "actions"));
}

static int rp_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

#define RP_MAX_SEATS 16
#define RP_MAX_CARDS 128

/* The replay under construction. */
typedef struct {
    Croupier__Replay *r;
    size_t cap_events;
    /* The hold'em table's end: the seats it showed. */
    bool shown[RP_MAX_SEATS];
    bool played; /* the hand was played again: shown[] is the table's */
} rp_t;

static Croupier__ReplayEvent *rp_event(rp_t *b, Croupier__ReplayEventKind kind, int seat)
{
    Croupier__Replay *r = b->r;
    if (r->n_events == b->cap_events) {
        b->cap_events = b->cap_events ? 2 * b->cap_events : 32;
        r->events = xrealloc(r->events, b->cap_events * sizeof *r->events);
    }
    Croupier__ReplayEvent *e = xcalloc(1, sizeof *e);
    croupier__replay_event__init(e);
    e->kind = kind;
    if (seat >= 0) {
        e->has_seat = true;
        e->seat = (uint32_t)seat;
    }
    r->events[r->n_events++] = e;
    return e;
}

static void rp_set_cards(ProtobufCBinaryData *b, const uint8_t *cards, size_t n)
{
    b->len = n;
    b->data = n ? xmalloc(n) : NULL;
    if (n)
        memcpy(b->data, cards, n);
}

static char *rp_strdup(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* The hold'em table's end, for the policy: which seats it showed. */
static void rp_holdem_event(void *ud, const holdem_event_t *ev)
{
    rp_t *b = ud;
    if (ev->kind == HOLDEM_EV_SHOW && ev->seat >= 0 && ev->seat < RP_MAX_SEATS)
        b->shown[ev->seat] = true;
}

/* A deal event of cards to seat: face up when the viewer may see them, else a count. */
static void rp_deal(rp_t *b, int seat, const uint8_t *cards, size_t n, bool visible)
{
    Croupier__ReplayEvent *e = rp_event(b, CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL, seat);
    if (visible) {
        e->has_cards = true;
        rp_set_cards(&e->cards, cards, n);
    } else {
        e->has_count = true;
        e->count = (uint32_t)n;
    }
}

static bool rp_hex(const char *hex, uint8_t *out, size_t n)
{
    if (hex == NULL || strlen(hex) != 2 * n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return false;
        out[i] = (uint8_t)v;
    }
    return true;
}

/* A string of exactly n hex digits (n 0: any even count, at least 2), else NULL. */
static const char *rp_hexstr(const json_t *o, const char *key, size_t n)
{
    const char *h = json_string_value(json_object_get(o, key));
    size_t len = h != NULL ? strlen(h) : 0;
    if (h == NULL || (n > 0 ? len != n : len < 2 || len % 2 != 0) ||
        strspn(h, "0123456789abcdefABCDEF") != len)
        return NULL;
    return h;
}

/* A shoe's reveal for Replay.shoe_reveal (dealt < 0: not recorded). */
static Croupier__ReplayShoeReveal *
rp_shoe_reveal(int64_t shoe, const char *commit, const char *deck, const char *nonce, int64_t dealt)
{
    Croupier__ReplayShoeReveal *rv = xcalloc(1, sizeof *rv);
    croupier__replay_shoe_reveal__init(rv);
    rv->shoe = (uint32_t)shoe;
    rv->commitment = xstrdup(commit);
    rv->deck = xstrdup(deck);
    rv->nonce = xstrdup(nonce);
    if (dealt >= 0) {
        rv->has_dealt = true;
        rv->dealt = (uint32_t)dealt;
    }
    return rv;
}

/*
 * Blackjack (docs/fairness.md "Blackjack's shoes"): the record's shoes, each with the round's
 * cards from it (the record's cards are the shoes' cards in the order of `shoes`), and the shoes
 * the round retired, opened (`shoe_reveal`: a retired shoe deals no more, so its order is no
 * secret). 0, or -EINVAL with the reason in err.
 */
static int rp_shoes(Croupier__Replay *r, const json_t *rec, const uint8_t *code, size_t ncards,
                    char *err, size_t errlen)
{
    const json_t *shoes = json_object_get(rec, "shoes");
    const json_t *reveal = json_object_get(rec, "shoe_reveal");
    size_t nshoes = json_array_size(shoes), nreveal = json_array_size(reveal), at = 0;
    if (nshoes > 0) {
        r->shoes = xcalloc(nshoes, sizeof *r->shoes);
        for (size_t i = 0; i < nshoes; i++) {
            const json_t *s = json_array_get(shoes, i);
            int64_t shoe = rp_int(s, "shoe", -1), first = rp_int(s, "first", -1),
                    count = rp_int(s, "count", -1);
            const char *commit = rp_hexstr(s, "commitment", 64);
            if (shoe < 0 || shoe > UINT32_MAX || first < 0 || first > UINT32_MAX || count < 0 ||
                (uint64_t)count > ncards - at || commit == NULL)
                return rp_fail(err, errlen, "shoes[%zu]: no shoe, commitment, first or count", i);
            Croupier__ReplayShoe *rs = xcalloc(1, sizeof *rs);
            croupier__replay_shoe__init(rs);
            r->shoes[r->n_shoes++] = rs;
            rs->shoe = (uint32_t)shoe;
            rs->commitment = xstrdup(commit);
            rs->first = (uint32_t)first;
            rs->has_cards = true;
            rp_set_cards(&rs->cards, code + at, (size_t)count);
            at += (size_t)count;
        }
    }
    if (nreveal > 0) {
        r->shoe_reveal = xcalloc(nreveal, sizeof *r->shoe_reveal);
        for (size_t i = 0; i < nreveal; i++) {
            const json_t *v = json_array_get(reveal, i);
            int64_t shoe = rp_int(v, "shoe", -1), dealt = rp_int(v, "dealt", -1);
            const char *commit = rp_hexstr(v, "commitment", 64), *nonce = rp_hexstr(v, "nonce", 64),
                       *deck = rp_hexstr(v, "deck", 0);
            if (shoe < 0 || shoe > UINT32_MAX || commit == NULL || nonce == NULL || deck == NULL ||
                dealt > UINT32_MAX)
                return rp_fail(err, errlen, "shoe_reveal[%zu]: no shoe, commitment, deck or nonce",
                               i);
            r->shoe_reveal[r->n_shoe_reveal++] = rp_shoe_reveal(shoe, commit, deck, nonce, dealt);
        }
    }
    return 0;
}

/*
 * The shedding games' deal (games/traditional/shed_game.c game_start, what
 * shed_game_deal_order() deals): the deck one card at a time to seats 0, 1, ... in turn, `hand`
 * cards each, whatever the button; what is left (Dou Dizhu's three bottom cards) stays with the
 * table. Their hands are shown as sets, in the game's order, not in the order dealt
 * (docs/fairness.md "Where each card was dealt").
 */
typedef struct {
    const char *game;
    int seats, hand, deck;
} rp_shed_t;

static const rp_shed_t rp_shed_rows[] = {
    {"doudizhu", 3, 17, 54},
    {"runfast", 3, 16, 48},
    {"bigtwo", 4, 13, 52},
    {"guandan", 4, 27, 108},
};

static const rp_shed_t *rp_shed(const char *game)
{
    for (size_t i = 0; game != NULL && i < sizeof rp_shed_rows / sizeof rp_shed_rows[0]; i++)
        if (strcmp(rp_shed_rows[i].game, game) == 0)
            return &rp_shed_rows[i];
    return NULL;
}

bool replay_deal_as_set(const char *game)
{
    return rp_shed(game) != NULL;
}

int replay_table_record_id(const char *round_id, char *out, size_t outlen)
{
    /* service:slot:epoch:desk:seq -> service:slot:epoch:desk:0 */
    const char *last = round_id != NULL ? strrchr(round_id, ':') : NULL;
    int colons = 0;
    for (const char *p = round_id; p != NULL && *p != '\0'; p++)
        colons += *p == ':';
    if (last == NULL || colons != 4 || last[1] == '\0' ||
        strspn(last + 1, "0123456789") != strlen(last + 1) || strtoull(last + 1, NULL, 10) == 0)
        return -EINVAL;
    size_t head = (size_t)(last - round_id) + 1;
    if (head + 2 > outlen)
        return -EINVAL;
    memcpy(out, round_id, head);
    out[head] = '0';
    out[head + 1] = '\0';
    return 0;
}

/* The reveal of shoe number `shoe` with `commitment` among r's, or NULL. */
static const Croupier__ReplayShoeReveal *rp_reveal_of(const Croupier__Replay *r, uint32_t shoe,
                                                      const char *commitment)
{
    for (size_t i = 0; i < r->n_shoe_reveal; i++)
        if (r->shoe_reveal[i]->shoe == shoe &&
            strcasecmp(r->shoe_reveal[i]->commitment, commitment) == 0)
            return r->shoe_reveal[i];
    return NULL;
}

bool replay_wants_shoe_reveal(const Croupier__Replay *r)
{
    for (size_t i = 0; r != NULL && i < r->n_shoes; i++)
        if (rp_reveal_of(r, r->shoes[i]->shoe, r->shoes[i]->commitment) == NULL)
            return true;
    return false;
}

size_t replay_shoes_unrevealed(const Croupier__Replay *r, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; r != NULL && i < r->n_shoes; i++) {
        const char *c = r->shoes[i]->commitment;
        size_t len = c != NULL ? strspn(c, "0123456789abcdef") : 0;
        if (len != 64 || c[len] != '\0' || rp_reveal_of(r, r->shoes[i]->shoe, c) != NULL)
            continue;
        bool dup = false;
        for (size_t k = 0; k < n && !dup; k++)
            dup = strcmp(out[k], c) == 0;
        if (!dup && n < max)
            out[n++] = c;
    }
    return n;
}

int replay_add_shoe_reveals(Croupier__Replay *r, const json_t *later)
{
    const json_t *reveal = json_object_get(later, "shoe_reveal");
    int added = 0;
    for (size_t i = 0; i < json_array_size(reveal); i++) {
        const json_t *v = json_array_get(reveal, i);
        int64_t shoe = rp_int(v, "shoe", -1), dealt = rp_int(v, "dealt", -1);
        const char *commit = rp_hexstr(v, "commitment", 64), *nonce = rp_hexstr(v, "nonce", 64),
                   *deck = rp_hexstr(v, "deck", 0);
        if (shoe < 0 || shoe > UINT32_MAX || commit == NULL || nonce == NULL || deck == NULL ||
            dealt > UINT32_MAX || rp_reveal_of(r, (uint32_t)shoe, commit) != NULL)
            continue;
        bool dealt_from = false;
        for (size_t k = 0; k < r->n_shoes; k++)
            dealt_from = dealt_from || (r->shoes[k]->shoe == (uint32_t)shoe &&
                                        strcasecmp(r->shoes[k]->commitment, commit) == 0);
        if (!dealt_from)
            continue;
        r->shoe_reveal = xrealloc(r->shoe_reveal, (r->n_shoe_reveal + 1) * sizeof *r->shoe_reveal);
        r->shoe_reveal[r->n_shoe_reveal++] = rp_shoe_reveal(shoe, commit, deck, nonce, dealt);
        added++;
    }
    return added;
}

/* Marks the first position of codes[0..n) holding card and not yet marked; false if none. */
static bool rp_open_card(const uint8_t *codes, size_t n, bool *open, uint8_t card)
{
    for (size_t i = 0; i < n; i++)
        if (codes[i] == card && !open[i]) {
            open[i] = true;
            return true;
        }
    return false;
}

/*
 * The per-card commitment (docs/fairness.md "The per-card commitment"; docs/replays.md): a
 * record with deck_scheme 2 gets every leaf, computed from its deck_codes and deck_nonce, and an
 * opening of each card the replay shows this viewer -- the seats' cards in r->seats (his own,
 * those shown down) and the table's (table[0..ntable): a board) -- in position order. No other
 * card's nonce leaves the record. A record whose codes and nonce do not give its commitment is
 * refused; a shown card the deck does not hold stays unopened (the player's check names it).
 * 0 or -EINVAL with the reason in err.
 */
static int rp_openings(Croupier__Replay *r, const json_t *rec, const uint8_t *table, size_t ntable,
                       char *err, size_t errlen)
{
    if (rp_int(rec, "deck_scheme", DECK_SCHEME_WHOLE) != DECK_SCHEME_CARDS)
        return 0;
    uint8_t codes[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN], got[DECK_COMMIT_LEN];
    const char *hex = json_string_value(json_object_get(rec, "deck_codes"));
    int n = hex != NULL ? deck_unhex(hex, codes, DECK_MAX_CARDS) : -EINVAL;
    if (n <= 0 ||
        !rp_hex(json_string_value(json_object_get(rec, "deck_nonce")), nonce, DECK_NONCE_LEN) ||
        !r->has_deck_commitment)
        return rp_fail(err, errlen, "deck_scheme 2 without deck_codes, deck_nonce or a commitment");
    uint8_t *leaves = xmalloc((size_t)n * DECK_LEAF_LEN);
    deck_card_leaves(codes, (size_t)n, nonce, leaves);
    deck_leaves_commitment(leaves, (size_t)n, got);
    if (memcmp(got, r->deck_commitment.data, DECK_COMMIT_LEN) != 0) {
        free(leaves);
        return rp_fail(err, errlen, "deck_codes and deck_nonce do not open deck_commitment");
    }
    r->has_deck_scheme = true;
    r->deck_scheme = DECK_SCHEME_CARDS;
    r->has_deck_leaves = true;
    r->deck_leaves = (ProtobufCBinaryData){(size_t)n * DECK_LEAF_LEN, leaves};
    bool open[DECK_MAX_CARDS] = {false};
    size_t nopen = 0;
    if (replay_deal_as_set(r->game)) {
        /* A shedding game's hand is a set: each card opens at one of the positions the deal
         * gave that seat (Guandan's two decks hold every card twice, at two seats perhaps). */
        uint32_t seats[RP_MAX_SEATS];
        for (size_t i = 0; i < r->n_seats; i++)
            seats[i] = r->seats[i]->seat;
        for (size_t i = 0; i <= r->n_seats; i++) {
            int seat = i < r->n_seats ? (int)seats[i] : -1;
            const uint8_t *cards = i < r->n_seats ? r->seats[i]->cards.data : table;
            size_t ncards =
                i < r->n_seats ? (r->seats[i]->has_cards ? r->seats[i]->cards.len : 0) : ntable;
            for (size_t c = 0; c < ncards; c++) {
                for (size_t k = 0;; k++) {
                    int pos = replay_deal_position(r->game, -1, seats, r->n_seats, seat, k);
                    if (pos < 0 || pos >= n)
                        break;
                    if (!open[pos] && codes[pos] == cards[c]) {
                        open[pos] = true;
                        nopen++;
                        break;
                    }
                }
            }
        }
    } else {
        for (size_t i = 0; i < r->n_seats; i++)
            for (size_t k = 0; r->seats[i]->has_cards && k < r->seats[i]->cards.len; k++)
                nopen += rp_open_card(codes, (size_t)n, open, r->seats[i]->cards.data[k]);
        for (size_t k = 0; k < ntable; k++)
            nopen += rp_open_card(codes, (size_t)n, open, table[k]);
    }
    r->openings = xcalloc(nopen ? nopen : 1, sizeof *r->openings);
    for (size_t i = 0; i < (size_t)n; i++) {
        if (!open[i])
            continue;
        Croupier__ReplayCardOpening *o = xcalloc(1, sizeof *o);
        croupier__replay_card_opening__init(o);
        r->openings[r->n_openings++] = o;
        o->position = (uint32_t)i;
        o->card = codes[i];
        o->nonce.len = DECK_NONCE_LEN;
        o->nonce.data = xmalloc(DECK_NONCE_LEN);
        deck_card_nonce(nonce, i, o->nonce.data);
    }
    explicit_bzero(nonce, sizeof nonce);
    return 0;
}

Croupier__Replay *replay_build(const json_t *rec, uint64_t viewer, char *err, size_t errlen)
{
    if (!replay_is_round(rec)) {
        rp_fail(err, errlen, "not a round's hand history");
        return NULL;
    }
    const char *game = json_string_value(json_object_get(rec, "game"));
    const replay_rules_t *rules = replay_rules(game);
    /* A duplicate deal of a match hall (docs/hand-history.md "match": its seed) is dealt at every
     * table of the round, some of which may still be playing it: nobody's cards but one's own,
     * and no deck (docs/replays.md "The policy of each game"). */
    static const replay_rules_t duplicate = {NULL, REPLAY_SHOW_NONE, false, false, "own", false,
                                             false};
    const json_t *match = json_object_get(rec, "match");
    if (json_is_object(match) && json_object_get(match, "seed") != NULL)
        rules = &duplicate;
    rp_t b = {0};
    Croupier__Replay *r = xcalloc(1, sizeof *r);
    croupier__replay__init(r);
    b.r = r;
    r->round_id = rp_strdup(json_string_value(json_object_get(rec, "round")));
    r->game = rp_strdup(game);
    r->engine = rp_strdup(json_string_value(json_object_get(rec, "engine")));
    r->policy = rp_strdup(rules->policy);
    if (json_is_integer(json_object_get(rec, "stake"))) {
        r->has_stake = true;
        r->stake = rp_int(rec, "stake", 0);
    }
    if (rp_int(rec, "ts", -1) >= 0) {
        r->has_started_unix_ms = true;
        r->started_unix_ms = (uint64_t)rp_int(rec, "ts", 0);
    }
    const char *outcome = json_string_value(json_object_get(rec, "outcome"));
    bool completed = outcome != NULL && strcmp(outcome, "completed") == 0;
    r->has_outcome = true;
    r->outcome = completed ? CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED
                           : CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
    if (!completed) {
        const char *why = json_string_value(json_object_get(rec, "void_reason"));
        const ProtobufCEnumValue *v = why ? protobuf_c_enum_descriptor_get_value_by_name(
                                                &croupier__void_reason__descriptor, why)
                                          : NULL;
        r->has_void_reason = true;
        r->void_reason =
            v ? (Croupier__VoidReason)v->value : CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR;
    }
    r->has_rake = true;
    r->rake = rp_int(rec, "rake", 0);
    /* A tournament hand's button is the director's (docs/hand-history.md: the record's own
     * "button" means nothing there). */
    const json_t *tour = json_object_get(rec, "tournament");
    int64_t button = json_is_object(tour) ? rp_int(tour, "button", -1) : rp_int(rec, "button", -1);
    if (button >= 0 && button < RP_MAX_SEATS) {
        r->has_button_seat = true;
        r->button_seat = (uint32_t)button;
    }
    if (rp_int(rec, "banker", -1) >= 0) {
        r->has_banker_seat = true;
        r->banker_seat = (uint32_t)rp_int(rec, "banker", 0);
    }
    int me = replay_seat_of(rec, viewer);
    if (me >= 0) {
        r->has_your_seat = true;
        r->your_seat = (uint32_t)me;
    }
    uint8_t commit[32];
    if (rp_hex(json_string_value(json_object_get(rec, "deck_commitment")), commit, 32)) {
        r->has_deck_commitment = true;
        rp_set_cards(&r->deck_commitment, commit, 32);
    }
    if (rules->deck_public) {
        r->deck = rp_strdup(json_string_value(json_object_get(rec, "deck")));
        r->deck_nonce = rp_strdup(json_string_value(json_object_get(rec, "deck_nonce")));
    }

    /* Cards by seat, in the order recorded. */
    const json_t *cards = json_object_get(rec, "cards");
    size_t ncards = json_array_size(cards);
    if (ncards > 4 * RP_MAX_CARDS) {
        rp_fail(err, errlen, "%zu cards recorded", ncards);
        goto fail;
    }
    int seat_of[4 * RP_MAX_CARDS];
    uint8_t code[4 * RP_MAX_CARDS];
    for (size_t i = 0; i < ncards; i++) {
        const json_t *c = json_array_get(cards, i);
        int64_t s = rp_int(c, "seat", -2);
        int v = replay_card_code(json_string_value(json_object_get(c, "card")));
        if (s < -1 || s >= RP_MAX_SEATS || v < 0) {
            rp_fail(err, errlen, "cards[%zu]: no seat or no card", i);
            goto fail;
        }
        seat_of[i] = (int)s;
        code[i] = (uint8_t)v;
    }

    if (rules->shoes_public && rp_shoes(r, rec, code, ncards, err, errlen) != 0)
        goto fail;

    /* Hold'em: the hand played again says when the board came out and who showed. */
    int order[3] = {-1, -1, -1};
    if (rules->holdem_board) {
        char why[200];
        b.played = holdem_record_play(rec, false, rp_holdem_event, &b, order, why, sizeof why) == 0;
        if (!b.played) {
            memset(b.shown, 0, sizeof b.shown);
            order[0] = order[1] = order[2] = -1;
        }
    }
    /* The seats' hands shown at the end (REPLAY_SHOW_DOWN). Without the table's word: the
     * seats that did not fold, when two or more did not. */
    bool down[RP_MAX_SEATS] = {false};
    if (rules->show == REPLAY_SHOW_DOWN && completed) {
        if (b.played) {
            memcpy(down, b.shown, sizeof down);
        } else {
            bool folded[RP_MAX_SEATS] = {false};
            size_t i;
            const json_t *a;
            json_array_foreach(json_object_get(rec, "actions"), i, a)
            {
                const char *n = json_string_value(json_object_get(a, "action"));
                int64_t s = rp_int(a, "seat", -1);
                if (n != NULL && s >= 0 && s < RP_MAX_SEATS && strstr(n, "fold") != NULL)
                    folded[s] = true;
            }
            int live = 0;
            json_array_foreach(json_object_get(rec, "seats"), i, a)
            {
                int64_t s = rp_int(a, "seat", -1);
                live += s >= 0 && s < RP_MAX_SEATS && !folded[s];
            }
            json_array_foreach(json_object_get(rec, "seats"), i, a)
            {
                int64_t s = rp_int(a, "seat", -1);
                if (s >= 0 && s < RP_MAX_SEATS && live >= 2 && !folded[s])
                    down[s] = true;
            }
        }
    }

    /* Zha Jin Hua: the hands a compare showed the viewer (he asked, or was asked). */
    bool compared[RP_MAX_SEATS] = {false};
    if (rules->compare_shows && me >= 0) {
        size_t i;
        const json_t *a;
        json_array_foreach(json_object_get(rec, "actions"), i, a)
        {
            const char *n = json_string_value(json_object_get(a, "action"));
            int64_t s = rp_int(a, "seat", -1), tg = rp_int(a, "target", -1);
            if (n == NULL || strncmp(n, "compare", 7) != 0 || s < 0 || s >= RP_MAX_SEATS ||
                tg < 0 || tg >= RP_MAX_SEATS)
                continue;
            if (s == me)
                compared[tg] = true;
            else if (tg == me)
                compared[s] = true;
        }
    }

    /* Seats. */
    const json_t *seats = json_object_get(rec, "seats");
    size_t nseats = json_array_size(seats);
    if (nseats > RP_MAX_SEATS) {
        rp_fail(err, errlen, "%zu seats", nseats);
        goto fail;
    }
    r->seats = xcalloc(nseats ? nseats : 1, sizeof *r->seats);
    for (size_t i = 0; i < nseats; i++) {
        const json_t *s = json_array_get(seats, i);
        int64_t seat = rp_int(s, "seat", -1);
        if (seat < 0 || seat >= RP_MAX_SEATS) {
            rp_fail(err, errlen, "seats[%zu]: no seat", i);
            goto fail;
        }
        Croupier__ReplaySeat *rs = xcalloc(1, sizeof *rs);
        croupier__replay_seat__init(rs);
        r->seats[r->n_seats++] = rs;
        rs->seat = (uint32_t)seat;
        const char *p = json_string_value(json_object_get(s, "player"));
        if (p != NULL) {
            rs->has_player_id = true;
            rs->player_id = strtoull(p, NULL, 10);
        }
        rs->has_bot = true;
        rs->bot = json_is_true(json_object_get(s, "bot"));
        rs->has_stack = true;
        rs->stack = rp_int(s, "stack", 0);
        size_t k;
        const json_t *res;
        json_array_foreach(json_object_get(rec, "results"), k, res)
        {
            if (rp_int(res, "seat", -1) == seat) {
                rs->has_delta = true;
                rs->delta = rp_int(res, "delta", 0);
            }
        }
        bool visible = seat == me || rules->show == REPLAY_SHOW_ALL || down[seat] || compared[seat];
        uint8_t mine[RP_MAX_CARDS];
        size_t n = 0;
        for (size_t c = 0; c < ncards && n < RP_MAX_CARDS; c++)
            if (seat_of[c] == seat)
                mine[n++] = code[c];
        if (visible) {
            rs->has_cards = true;
            rp_set_cards(&rs->cards, mine, n);
        } else if (n > 0) {
            rs->has_hidden = true;
            rs->hidden = (uint32_t)n;
        }
    }

    /* Events: each seat's deal (runs of one seat's cards), the table's cards where they came
     * out, the actions in order, the hands shown down. */
    size_t c = 0;
    uint8_t board[RP_MAX_CARDS];
    size_t nboard = 0;
    while (c < ncards) {
        size_t end = c;
        while (end < ncards && seat_of[end] == seat_of[c])
            end++;
        int s = seat_of[c];
        if (s < 0 && rules->holdem_board) {
            for (size_t k = c; k < end && nboard < RP_MAX_CARDS; k++)
                board[nboard++] = code[k];
        } else {
            bool visible = s < 0 || s == me || rules->show == REPLAY_SHOW_ALL;
            rp_deal(&b, s, code + c, end - c, visible);
        }
        c = end;
    }
    /* The board's streets: 3, 1, 1 cards, each before the action the table had reached. */
    size_t street_at[3] = {0, 3, 4}, street_n[3] = {3, 1, 1};
    const json_t *actions = json_object_get(rec, "actions");
    size_t nactions = json_array_size(actions);
    int street = 0;
    for (size_t i = 0; i <= nactions; i++) {
        while (street < 3 && street_at[street] + street_n[street] <= nboard && order[street] >= 0 &&
               (size_t)order[street] <= i) {
            rp_deal(&b, -1, board + street_at[street], street_n[street], true);
            street++;
        }
        if (i == nactions)
            break;
        const json_t *a = json_array_get(actions, i);
        const char *name = json_string_value(json_object_get(a, "action"));
        if (name == NULL) {
            rp_fail(err, errlen, "actions[%zu]: no action name", i);
            goto fail;
        }
        Croupier__ReplayEvent *e =
            rp_event(&b, CROUPIER__REPLAY_EVENT_KIND__REPLAY_ACTION, (int)rp_int(a, "seat", -1));
        e->action = xstrdup(name);
        e->has_amount = true;
        e->amount = rp_int(a, "amount", 0);
        /* A compare the viewer took part in: the other hand, shown to him there. */
        int64_t as = rp_int(a, "seat", -1), at = rp_int(a, "target", -1);
        int other = as == me ? (int)at : at == me ? (int)as : -1;
        if (me >= 0 && other >= 0 && other < RP_MAX_SEATS && compared[other] &&
            strncmp(name, "compare", 7) == 0) {
            for (size_t k = 0; k < r->n_seats; k++) {
                if ((int)r->seats[k]->seat != other || !r->seats[k]->has_cards)
                    continue;
                Croupier__ReplayEvent *sh =
                    rp_event(&b, CROUPIER__REPLAY_EVENT_KIND__REPLAY_SHOW, other);
                sh->has_cards = true;
                rp_set_cards(&sh->cards, r->seats[k]->cards.data, r->seats[k]->cards.len);
            }
        }
    }
    /* A board the table's replay did not place (an older record): after the actions. */
    size_t placed = street == 0 ? 0 : street_at[street - 1] + street_n[street - 1];
    if (placed < nboard)
        rp_deal(&b, -1, board + placed, nboard - placed, true);
    /* Hold'em: the PHH file, masked for the viewer. */
    if (rules->holdem_board && completed && b.played) {
        bool hidden[HOLDEM_MAX_SEATS];
        for (int s = 0; s < HOLDEM_MAX_SEATS; s++)
            hidden[s] = s != me && rules->show != REPLAY_SHOW_ALL && !down[s];
        char *phh = NULL, why[200];
        if (holdem_record_phh(rec, hidden, &phh, why, sizeof why) == 0 &&
            strlen(phh) <= FRAME_DEFAULT_MAX_STRING)
            r->phh = phh;
        else
            free(phh);
    }
    if (rules->show == REPLAY_SHOW_DOWN) {
        for (size_t i = 0; i < r->n_seats; i++) {
            Croupier__ReplaySeat *rs = r->seats[i];
            if (!down[rs->seat] || (int)rs->seat == me)
                continue;
            Croupier__ReplayEvent *e =
                rp_event(&b, CROUPIER__REPLAY_EVENT_KIND__REPLAY_SHOW, (int)rs->seat);
            e->has_cards = true;
            rp_set_cards(&e->cards, rs->cards.data, rs->cards.len);
        }
    }
    /* The per-card commitment's leaves and the openings of the cards shown above. */
    uint8_t table[4 * RP_MAX_CARDS];
    size_t ntable = 0;
    for (size_t k = 0; k < ncards; k++)
        if (seat_of[k] < 0)
            table[ntable++] = code[k];
    if (rp_openings(r, rec, table, ntable, err, errlen) != 0)
        goto fail;
    return r;
fail:
    croupier__replay__free_unpacked(r, NULL);
    return NULL;
}

/* ---- the player's check of the per-card commitment ------------------------------------------ */

int replay_deal_position(const char *game, int button, const uint32_t *seats, size_t nseats,
                         int seat, size_t k)
{
    const rp_shed_t *sh = rp_shed(game);
    if (sh != NULL) {
        /* Seats 0 .. seats-1, each dealt in; one card each in turn from seat 0 (the button plays
         * no part), then the table's. */
        bool dealt = false;
        if (nseats != (size_t)sh->seats)
            return -1;
        for (size_t i = 0; i < nseats; i++) {
            if (seats[i] >= (uint32_t)sh->seats)
                return -1;
            dealt = dealt || (int)seats[i] == seat;
        }
        if (seat < 0)
            return k < (size_t)(sh->deck - sh->hand * sh->seats) ? sh->hand * sh->seats + (int)k
                                                                 : -1;
        return dealt && k < (size_t)sh->hand ? (int)k * sh->seats + seat : -1;
    }
    if (game == NULL || button < 0 || nseats == 0)
        return -1;
    bool holdem = strcmp(game, "holdem") == 0;
    if (!holdem && strcmp(game, "zhajinhua") != 0)
        return -1;
    size_t per_seat = holdem ? 2 : 3;
    if (seat < 0) {
        /* The board: burn, flop (3), burn, turn, burn, river, after every hole card. */
        static const int at[5] = {1, 2, 3, 5, 7};
        if (!holdem || k >= 5)
            return -1;
        return (int)(per_seat * nseats) + at[k];
    }
    if (k >= per_seat)
        return -1;
    /* The seat's place in the dealing order: seats after the button first, then the rest (the
     * table's seat numbers wrap at its size; any bound above every seat gives the same order). */
    size_t j = 0;
    bool dealt = false;
    unsigned key = ((unsigned)seat - (unsigned)button - 1u) & 0xffffu;
    for (size_t i = 0; i < nseats; i++) {
        if ((int)seats[i] == seat)
            dealt = true;
        else if ((((unsigned)seats[i] - (unsigned)button - 1u) & 0xffffu) < key)
            j++;
    }
    return dealt ? (int)(k * nseats + j) : -1;
}

/* The opening at position pos among r's openings, or NULL. */
static const Croupier__ReplayCardOpening *rp_opening_at(const Croupier__Replay *r, size_t pos)
{
    for (size_t i = 0; i < r->n_openings; i++)
        if (r->openings[i]->position == pos)
            return r->openings[i];
    return NULL;
}

/*
 * A shedding game's card shown at seat (-1: the table): the first of the positions the deal gave
 * that seat whose opening holds card and that no other shown card took (used[]), marked; or -1.
 * The hand is a set, so its cards match its positions as a multiset (docs/fairness.md "Where
 * each card was dealt").
 */
static int rp_set_position(const Croupier__Replay *r, const uint32_t *seats, size_t nseats,
                           int seat, uint8_t card, bool *used)
{
    for (size_t k = 0;; k++) {
        int pos = replay_deal_position(r->game, -1, seats, nseats, seat, k);
        if (pos < 0 || pos >= DECK_MAX_CARDS)
            return -1;
        const Croupier__ReplayCardOpening *o = rp_opening_at(r, (size_t)pos);
        if (!used[pos] && o != NULL && o->card == card) {
            used[pos] = true;
            return pos;
        }
    }
}

int replay_check_cards(const Croupier__Replay *r, const uint8_t *commitment, char *err,
                       size_t errlen)
{
    if (!r->has_deck_scheme || r->deck_scheme != DECK_SCHEME_CARDS || !r->has_deck_leaves ||
        !r->has_deck_commitment || r->deck_commitment.len != DECK_COMMIT_LEN)
        return rp_fail(err, errlen, "not a round under the per-card commitment (deck_scheme 2)");
    size_t n = r->deck_leaves.len / DECK_LEAF_LEN;
    if (n == 0 || n > DECK_MAX_CARDS || r->deck_leaves.len % DECK_LEAF_LEN != 0)
        return rp_fail(err, errlen, "deck_leaves: %zu bytes, not 1 to %d leaves of %d",
                       r->deck_leaves.len, DECK_MAX_CARDS, DECK_LEAF_LEN);
    /* The shedding games deal from seat 0 whatever the button, and show hands as sets. */
    bool as_set = replay_deal_as_set(r->game);
    if (!r->has_button_seat && !as_set)
        return rp_fail(err, errlen, "no button: the dealing order is unknown");
    int button = r->has_button_seat ? (int)r->button_seat : -1;
    uint32_t seats[RP_MAX_SEATS];
    size_t nseats = 0;
    for (size_t i = 0; i < r->n_seats && nseats < RP_MAX_SEATS; i++)
        seats[nseats++] = r->seats[i]->seat;
    if (nseats == 0 || replay_deal_position(r->game, button, seats, nseats, (int)seats[0], 0) < 0)
        return rp_fail(err, errlen, "%s: no dealing rule known", r->game ? r->game : "no game");

    uint8_t got[DECK_COMMIT_LEN];
    deck_leaves_commitment(r->deck_leaves.data, n, got);
    if (memcmp(got, r->deck_commitment.data, DECK_COMMIT_LEN) != 0) {
        rp_fail(err, errlen, "the %zu leaves do not give the replay's deck_commitment", n);
        return -EBADMSG;
    }
    if (commitment != NULL && memcmp(got, commitment, DECK_COMMIT_LEN) != 0) {
        rp_fail(err, errlen, "the leaves give the replay's commitment, not the one the Deals had");
        return -EBADMSG;
    }
    bool seen[DECK_MAX_CARDS] = {false};
    for (size_t i = 0; i < r->n_openings; i++) {
        const Croupier__ReplayCardOpening *o = r->openings[i];
        uint8_t leaf[DECK_LEAF_LEN];
        if (o->position >= n || o->card > 255 || o->nonce.len != DECK_NONCE_LEN ||
            seen[o->position]) {
            rp_fail(err, errlen, "opening %zu: position %u is no position or opened twice", i,
                    o->position);
            return -EBADMSG;
        }
        seen[o->position] = true;
        deck_card_leaf(o->position, (uint8_t)o->card, o->nonce.data, leaf);
        if (memcmp(leaf, r->deck_leaves.data + (size_t)o->position * DECK_LEAF_LEN,
                   DECK_LEAF_LEN) != 0) {
            rp_fail(err, errlen, "position %u: card %u with its nonce does not give its leaf",
                    o->position, o->card);
            return -EBADMSG;
        }
    }
    /* Every card shown is opened where the dealing rule puts it, and nothing else is. */
    size_t matched = 0;
    bool used[DECK_MAX_CARDS] = {false};
    for (size_t i = 0; i < r->n_seats; i++) {
        const Croupier__ReplaySeat *s = r->seats[i];
        for (size_t k = 0; s->has_cards && k < s->cards.len; k++) {
            int pos = as_set
                          ? rp_set_position(r, seats, nseats, (int)s->seat, s->cards.data[k], used)
                          : replay_deal_position(r->game, button, seats, nseats, (int)s->seat, k);
            const Croupier__ReplayCardOpening *o = pos >= 0 ? rp_opening_at(r, (size_t)pos) : NULL;
            if (o == NULL || o->card != s->cards.data[k]) {
                rp_fail(err, errlen, "seat %u's card %zu (code %u) is not opened at position %d",
                        s->seat, k, s->cards.data[k], pos);
                return -EBADMSG;
            }
            matched++;
        }
    }
    size_t b = 0;
    for (size_t i = 0; i < r->n_events; i++) {
        const Croupier__ReplayEvent *e = r->events[i];
        if (e->kind != CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL || e->has_seat || !e->has_cards)
            continue;
        for (size_t k = 0; k < e->cards.len; k++, b++) {
            int pos = as_set ? rp_set_position(r, seats, nseats, -1, e->cards.data[k], used)
                             : replay_deal_position(r->game, button, seats, nseats, -1, b);
            const Croupier__ReplayCardOpening *o = pos >= 0 ? rp_opening_at(r, (size_t)pos) : NULL;
            if (o == NULL || o->card != e->cards.data[k]) {
                rp_fail(err, errlen, "board card %zu (code %u) is not opened at position %d", b,
                        e->cards.data[k], pos);
                return -EBADMSG;
            }
            matched++;
        }
    }
    if (matched != r->n_openings) {
        rp_fail(err, errlen,
                "%zu openings, %zu cards shown: a card is opened that the replay "
                "does not show",
                r->n_openings, matched);
        return -EBADMSG;
    }
    return 0;
}
