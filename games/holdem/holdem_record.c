/*
 * holdem_record -- a hand history record played again through the table; the PHH export. The
 * contract is holdem_record.h; the record's fields are docs/hand-history.md's, the PHH
 * conventions docs/rules/holdem.md "Replays (PHH)", the export docs/replays.md "PHH export".
 */
#include "holdem_record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "holdem_eval.h"
#include "holdem_phh.h"

#define HR_MAX_ACTIONS 512

/* The record's hand, read once. */
typedef struct {
    int nseats;                       /* table size: the highest seat dealt in + 1 */
    bool dealt[HOLDEM_MAX_SEATS];     /* dealt into the hand */
    int64_t stack[HOLDEM_MAX_SEATS];  /* at the hand's start */
    int64_t result[HOLDEM_MAX_SEATS]; /* the record's deltas */
    uint8_t deck[HOLDEM_CARDS];
    int button;
    bool completed;
    int64_t rake, stake;
    holdem_config_t cfg;
    bool tour;
    holdem_positions_t pos;
    int nstraddles; /* straddles posted */
    bool offers;    /* the table offered straddles */
    int nactions;
    const json_t *actions;
} hr_hand_t;

static int hr_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static int64_t hr_int(const json_t *o, const char *key, int64_t dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

/* Reads what the table needs of the record into *h. */
static int hr_read(const json_t *rec, hr_hand_t *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (!json_is_object(rec))
        return hr_fail(err, errlen, "the record is not a JSON object");
    const char *engine = json_string_value(json_object_get(rec, "engine"));
    if (engine == NULL || strcmp(engine, "holdem") != 0)
        return hr_fail(err, errlen, "not a hold'em hand (engine '%s')", engine ? engine : "?");
    const char *outcome = json_string_value(json_object_get(rec, "outcome"));
    h->completed = outcome != NULL && strcmp(outcome, "completed") == 0;
    const json_t *seats = json_object_get(rec, "seats");
    size_t i;
    const json_t *s;
    if (!json_is_array(seats) || json_array_size(seats) < 2)
        return hr_fail(err, errlen, "fewer than two seats dealt in");
    json_array_foreach(seats, i, s)
    {
        int64_t seat = hr_int(s, "seat", -1), stack = hr_int(s, "stack", 0);
        if (seat < 0 || seat >= HOLDEM_MAX_SEATS || h->dealt[seat] || stack <= 0)
            return hr_fail(err, errlen, "seats[%zu]: bad seat or stack", i);
        h->dealt[seat] = true;
        h->stack[seat] = stack;
        if (seat + 1 > h->nseats)
            h->nseats = (int)seat + 1;
    }
    if (h->nseats < 2)
        h->nseats = 2;
    json_array_foreach(json_object_get(rec, "results"), i, s)
    {
        int64_t seat = hr_int(s, "seat", -1);
        if (seat >= 0 && seat < HOLDEM_MAX_SEATS)
            h->result[seat] = hr_int(s, "delta", 0);
    }
    const char *deck = json_string_value(json_object_get(rec, "deck"));
    if (deck == NULL || strlen(deck) != 2 * HOLDEM_CARDS)
        return hr_fail(err, errlen, "no deck in the record (a crash void, or an older record)");
    uint64_t seen = 0;
    for (int k = 0; k < HOLDEM_CARDS; k++) {
        unsigned c;
        if (sscanf(deck + 2 * k, "%2x", &c) != 1 || c >= HOLDEM_CARDS || (seen >> c & 1))
            return hr_fail(err, errlen, "deck: card %d is not a card of a 52-card deck", k);
        seen |= 1ull << c;
        h->deck[k] = (uint8_t)c;
    }
    h->button = (int)hr_int(rec, "button", -1);
    h->rake = hr_int(rec, "rake", 0);
    h->stake = hr_int(rec, "stake", 0);
    h->actions = json_object_get(rec, "actions");
    h->nactions = (int)json_array_size(h->actions);
    if (h->nactions > HR_MAX_ACTIONS)
        return hr_fail(err, errlen, "more than %d actions", HR_MAX_ACTIONS);
    const json_t *a;
    bool last_straddled = false;
    int offers = 0;
    json_array_foreach(h->actions, i, a)
    {
        const char *name = json_string_value(json_object_get(a, "action"));
        if (name != NULL && strcmp(name, "straddle") == 0) {
            h->nstraddles++;
            offers++;
            last_straddled = true;
        } else if (name != NULL && strcmp(name, "no_straddle") == 0) {
            offers++;
            last_straddled = false;
        }
    }
    const json_t *tour = json_object_get(rec, "tournament");
    h->cfg.seats = h->nseats;
    if (json_is_object(tour)) {
        h->tour = true;
        h->cfg.small_blind = hr_int(tour, "small_blind", 0);
        h->cfg.big_blind = hr_int(tour, "big_blind", 0);
        int64_t ante = hr_int(tour, "ante", 0);
        const json_t *b = json_object_get(tour, "big_blind_ante");
        bool bba = json_is_true(b) || (json_is_integer(b) && json_integer_value(b) != 0);
        h->cfg.ante = bba ? 0 : ante;
        h->cfg.big_blind_ante = bba ? ante : 0;
        h->pos.button = (int)hr_int(tour, "button", -1);
        h->pos.small_blind = (int)hr_int(tour, "sb", -1);
        h->pos.big_blind = (int)hr_int(tour, "bb", -1);
        for (int k = 0; k < HOLDEM_MAX_SEATS; k++)
            if (h->dealt[k])
                h->pos.dealt_mask |= 1u << k;
        for (int k = 0; k < 3; k++) {
            int p = k == 0 ? h->pos.button : k == 1 ? h->pos.small_blind : h->pos.big_blind;
            if (p >= h->nseats)
                h->nseats = h->cfg.seats = p + 1;
        }
    } else {
        h->cfg.small_blind = h->stake / 2;
        h->cfg.big_blind = h->stake;
    }
    if (h->cfg.small_blind <= 0 || h->cfg.big_blind < h->cfg.small_blind)
        return hr_fail(err, errlen, "no valid blinds (stake %" PRId64 ")", h->stake);
    /* Straddle offers (--holdem-straddles): the table offered each answer's seat; the chain ends
     * at a declined offer, else at the table's limit, which is then the count posted. */
    h->offers = offers > 0;
    if (h->offers) {
        h->cfg.straddle = 2 * h->cfg.big_blind;
        h->cfg.max_straddles = last_straddled ? h->nstraddles : HOLDEM_MAX_SEATS - 2;
    }
    return 0;
}

/* One run of the table over the record's actions. */
typedef struct {
    hr_hand_t *h;
    holdem_event_cb cb;
    void *ud;
    int applied; /* record actions consumed so far */
    int *order;
} hr_run_t;

static void hr_on_event(void *ud, const holdem_event_t *ev)
{
    hr_run_t *r = ud;
    if (ev->kind == HOLDEM_EV_BOARD && r->order != NULL && ev->detail >= 1 && ev->detail <= 3)
        r->order[ev->detail - 1] = r->applied;
    if (r->cb != NULL)
        r->cb(r->ud, ev);
}

/*
 * Plays h's hand once: house rules with straddle offers, or PokerKit's conventions with the
 * straddles as standing choices (as a PHH replay sets them up). delta gets the table's deltas
 * (no rake is configured: the record's rake is checked against the difference).
 */
static int hr_run(hr_hand_t *h, bool pokerkit, holdem_event_cb cb, void *ud, int order[3],
                  int64_t *delta, char *err, size_t errlen)
{
    hr_run_t run = {.h = h, .cb = cb, .ud = ud, .order = order};
    if (order != NULL)
        order[0] = order[1] = order[2] = -1;
    holdem_config_t cfg = h->cfg;
    cfg.pokerkit_rules = pokerkit;
    cfg.straddle_offers = h->offers && !pokerkit;
    if (pokerkit) {
        /* Standing choices of the seats that straddled, as a PHH replay sets them. */
        cfg.straddle = h->nstraddles > 0 ? 2 * h->cfg.big_blind : 0;
        cfg.max_straddles = h->nstraddles;
    }
    int rc = 0;
    holdem_table_t *t = holdem_table_create(&cfg, hr_on_event, &run, &rc);
    if (t == NULL)
        return hr_fail(err, errlen, "table config refused: %s", holdem_err_name(rc));
    for (int s = 0; s < h->nseats; s++)
        if (h->dealt[s])
            holdem_table_sit(t, s, h->stack[s]);
    if (pokerkit && h->nstraddles > 0) {
        /* The chain from under the gun: the seats after the big blind, in order. */
        int s = h->button, seen = 0, k = 0;
        for (int step = 0; step < h->nseats * 2 && k < h->nstraddles; step++) {
            s = (s + 1) % h->nseats;
            if (!h->dealt[s])
                continue;
            if (++seen > 2) {
                holdem_table_set_straddle(t, s, true);
                k++;
            }
        }
    }
    /* A board dealt at the start (everyone all-in on the blinds) comes after the posts. */
    for (run.applied = 0; run.applied < h->nactions; run.applied++) {
        const char *n = json_string_value(
            json_object_get(json_array_get(h->actions, (size_t)run.applied), "action"));
        if (n == NULL || (strcmp(n, "small_blind") && strcmp(n, "big_blind") && strcmp(n, "ante") &&
                          strcmp(n, "bb_ante")))
            break;
    }
    if (h->tour)
        rc = holdem_table_start_hand_at(t, &h->pos, h->deck, HOLDEM_CARDS);
    else
        rc = holdem_table_start_hand(t, h->button, h->deck, HOLDEM_CARDS);
    if (rc != HOLDEM_OK) {
        rc = hr_fail(err, errlen, "the hand does not start: %s", holdem_err_name(rc));
        goto done;
    }
    int64_t street_bet[HOLDEM_MAX_SEATS] = {0};
    int street = -1;
    for (int i = 0; i < h->nactions; i++) {
        const json_t *a = json_array_get(h->actions, (size_t)i);
        const char *name = json_string_value(json_object_get(a, "action"));
        int seat = (int)hr_int(a, "seat", -1);
        int64_t amount = hr_int(a, "amount", 0);
        run.applied = i;
        if (name == NULL) {
            rc = hr_fail(err, errlen, "actions[%d]: no action name", i);
            goto done;
        }
        /* The street bets, for a bet's or raise's total: the board count tells the street. */
        uint8_t board[5];
        int nb = holdem_table_board(t, board);
        int now = nb == 0 ? 0 : nb - 2;
        if (now != street) {
            memset(street_bet, 0, sizeof street_bet);
            street = now;
        }
        bool post = !strcmp(name, "small_blind") || !strcmp(name, "big_blind") ||
                    !strcmp(name, "ante") || !strcmp(name, "bb_ante");
        if (post || !strcmp(name, "straddle") || !strcmp(name, "no_straddle")) {
            if (seat >= 0 && seat < HOLDEM_MAX_SEATS && strcmp(name, "ante") != 0 &&
                strcmp(name, "bb_ante") != 0 && strcmp(name, "no_straddle") != 0)
                street_bet[seat] += amount;
            if (post || pokerkit)
                continue; /* posted by the table itself */
            holdem_legal_t legal;
            holdem_table_legal(t, &legal);
            holdem_action_kind_t kind = HOLDEM_CHECK;
            int64_t to = 0;
            if (!strcmp(name, "straddle")) {
                kind = HOLDEM_BET; /* the offer's amount, a short stack's whole stack */
                to = legal.min_to;
            }
            run.applied = i + 1;
            int arc = holdem_table_act(t, seat, kind, to, 0);
            if (arc != HOLDEM_OK) {
                rc = hr_fail(err, errlen, "actions[%d] %s by seat %d refused: %s", i, name, seat,
                             holdem_err_name(arc));
                goto done;
            }
            continue;
        }
        if (seat < 0 || seat >= HOLDEM_MAX_SEATS) {
            rc = hr_fail(err, errlen, "actions[%d] %s: bad seat %d", i, name, seat);
            goto done;
        }
        holdem_action_kind_t kind;
        int64_t to = 0;
        if (!strcmp(name, "fold"))
            kind = HOLDEM_FOLD;
        else if (!strcmp(name, "check"))
            kind = HOLDEM_CHECK;
        else if (!strcmp(name, "call"))
            kind = HOLDEM_CALL;
        else if (!strcmp(name, "all_in"))
            kind = HOLDEM_ALL_IN;
        else if (!strcmp(name, "timeout"))
            kind = HOLDEM_TIMEOUT;
        else if (!strcmp(name, "bet") || !strcmp(name, "raise")) {
            kind = name[0] == 'b' ? HOLDEM_BET : HOLDEM_RAISE;
            to = street_bet[seat] + amount;
        } else {
            rc = hr_fail(err, errlen, "actions[%d]: unknown action '%s'", i, name);
            goto done;
        }
        run.applied = i + 1;
        int arc = holdem_table_act(t, seat, kind, to, 0);
        if (arc != HOLDEM_OK) {
            rc = hr_fail(err, errlen, "actions[%d] %s by seat %d refused: %s", i, name, seat,
                         holdem_err_name(arc));
            goto done;
        }
        street_bet[seat] += amount;
    }
    run.applied = h->nactions;
    if (!h->completed) {
        rc = 0;
        goto done;
    }
    holdem_settlement_t st;
    if (holdem_table_in_hand(t) || holdem_table_settlement(t, &st) != HOLDEM_OK) {
        rc = hr_fail(err, errlen, "the actions end before the hand does (seat %d to act)",
                     holdem_table_to_act(t));
        goto done;
    }
    /* The record's deltas are the table's less the rake, which comes out of what seats win
     * from the pots (a seat that wins back what it put in may end below 0 by its share). */
    int64_t raked = 0;
    for (int s = 0; s < HOLDEM_MAX_SEATS; s++) {
        int64_t d = h->dealt[s] ? st.delta[s] - h->result[s] : 0;
        if (d < 0) {
            rc = hr_fail(err, errlen, "seat %d: the table gives %" PRId64 ", the record %" PRId64,
                         s, st.delta[s], h->result[s]);
            goto done;
        }
        raked += d;
        if (delta != NULL)
            delta[s] = st.delta[s];
    }
    if (raked != h->rake) {
        rc = hr_fail(err, errlen,
                     "the deltas differ from the table's by %" PRId64
                     ", the record's rake is %" PRId64,
                     raked, h->rake);
        goto done;
    }
    rc = 0;
done:
    holdem_table_destroy(t);
    return rc;
}

int holdem_record_play(const json_t *rec, bool pokerkit_rules, holdem_event_cb cb, void *ud,
                       int order[3], char *err, size_t errlen)
{
    hr_hand_t *h = malloc(sizeof *h);
    if (h == NULL)
        return -ENOMEM;
    int rc = hr_read(rec, h, err, errlen);
    if (rc == 0)
        rc = hr_run(h, pokerkit_rules, cb, ud, order, NULL, err, errlen);
    free(h);
    return rc;
}

/* ---- PHH ------------------------------------------------------------------------------- */

/* A growing text. */
typedef struct {
    char *buf;
    size_t len, cap;
    bool oom;
} hr_text_t;

static void hr_printf(hr_text_t *x, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(x->buf ? x->buf + x->len : NULL, x->buf ? x->cap - x->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            x->oom = true;
            return;
        }
        if (x->buf != NULL && x->len + (size_t)n < x->cap) {
            x->len += (size_t)n;
            return;
        }
        size_t cap = (x->cap ? x->cap * 2 : 1024) + (size_t)n;
        char *b = realloc(x->buf, cap);
        if (b == NULL) {
            x->oom = true;
            return;
        }
        x->buf = b;
        x->cap = cap;
    }
}

/* What the PHH writer follows of the PokerKit-rules run. */
typedef struct {
    hr_text_t acts;               /* the actions list's items, each "'...', " */
    int player[HOLDEM_MAX_SEATS]; /* seat -> player index (0-based), -1 not dealt */
    int nplayers;
    uint8_t hole[HOLDEM_MAX_SEATS][2];
    int nhole[HOLDEM_MAX_SEATS];
    bool holes_written;
    bool folded[HOLDEM_MAX_SEATS], all_in[HOLDEM_MAX_SEATS];
    bool shown_down;            /* the showdown's lines written */
    int show[HOLDEM_MAX_SEATS]; /* at the end: 1 shows, -1 mucks, 0 nothing said */
    int64_t max_bet;
    int64_t stack[HOLDEM_MAX_SEATS], bet[HOLDEM_MAX_SEATS]; /* behind; in this street */
    bool street_started;                                    /* the street's actors are known */
    bool actor[HOLDEM_MAX_SEATS]; /* PokerKit gives the seat turns this street */
    int bad_seat;
} hr_phh_t;

/*
 * The seats PokerKit lets act in a betting round, fixed when it begins: live, with chips, and
 * with something to lose against the others (its effective stack, min(stack, the second largest
 * bet + stack of the live seats - its bet)); a lone such seat that owes nothing does not act.
 */
static void hr_street_actors(hr_phh_t *p)
{
    int64_t first = 0, second = 0;
    for (int s = 0; s < HOLDEM_MAX_SEATS; s++) {
        if (p->player[s] < 0 || p->folded[s])
            continue;
        int64_t v = p->bet[s] + p->stack[s];
        if (v > first) {
            second = first;
            first = v;
        } else if (v > second) {
            second = v;
        }
    }
    int n = 0, last = -1;
    for (int s = 0; s < HOLDEM_MAX_SEATS; s++) {
        int64_t eff = second - p->bet[s] > 0 ? second - p->bet[s] : 0;
        if (p->stack[s] < eff)
            eff = p->stack[s];
        p->actor[s] = p->player[s] >= 0 && !p->folded[s] && p->stack[s] > 0 && eff > 0;
        if (p->actor[s]) {
            n++;
            last = s;
        }
    }
    if (n == 1 && p->bet[last] >= p->max_bet)
        p->actor[last] = false;
    p->street_started = true;
}

static void hr_cards_text(const uint8_t *cards, int n, char *out)
{
    char c[3];
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        strcat(out, holdem_card_format(cards[i], c));
}

static void hr_act(hr_phh_t *p, int seat, const char *what)
{
    hr_printf(&p->acts, "'p%d %s', ", p->player[seat] + 1, what);
}

static void hr_write_holes(hr_phh_t *p)
{
    if (p->holes_written)
        return;
    p->holes_written = true;
    for (int k = 0; k < p->nplayers; k++)
        for (int s = 0; s < HOLDEM_MAX_SEATS; s++)
            if (p->player[s] == k && p->nhole[s] == 2) {
                char c[8];
                hr_cards_text(p->hole[s], 2, c);
                hr_printf(&p->acts, "'d dh p%d %s', ", k + 1, c);
            }
}

/* The showdown's lines, in player order: every live hand shows, unless the table mucked it. */
static void hr_write_showdown(hr_phh_t *p)
{
    if (p->shown_down)
        return;
    p->shown_down = true;
    for (int k = 0; k < p->nplayers; k++)
        for (int s = 0; s < HOLDEM_MAX_SEATS; s++) {
            if (p->player[s] != k || p->folded[s])
                continue;
            char c[8];
            hr_cards_text(p->hole[s], 2, c);
            if (p->show[s] < 0)
                hr_act(p, s, "sm");
            else {
                char what[16];
                snprintf(what, sizeof what, "sm %s", c);
                hr_act(p, s, what);
            }
        }
}

static int hr_live(const hr_phh_t *p, int *with_chips)
{
    int live = 0, chips = 0;
    for (int s = 0; s < HOLDEM_MAX_SEATS; s++)
        if (p->player[s] >= 0 && !p->folded[s]) {
            live++;
            chips += !p->all_in[s];
        }
    *with_chips = chips;
    return live;
}

static void hr_phh_event(void *ud, const holdem_event_t *ev)
{
    hr_phh_t *p = ud;
    bool seat_ok = ev->seat >= 0 && ev->seat < HOLDEM_MAX_SEATS;
    if (seat_ok && p->player[ev->seat] < 0 && ev->kind != HOLDEM_EV_HAND_START) {
        p->bad_seat = ev->seat;
        return;
    }
    switch (ev->kind) {
    case HOLDEM_EV_POST:
        p->stack[ev->seat] -= ev->amount;
        if (ev->detail != HOLDEM_POST_ANTE && ev->detail != HOLDEM_POST_BB_ANTE) {
            p->bet[ev->seat] += ev->amount;
            if (p->bet[ev->seat] > p->max_bet)
                p->max_bet = p->bet[ev->seat];
        }
        p->all_in[ev->seat] = p->all_in[ev->seat] || ev->all_in;
        return;
    case HOLDEM_EV_HOLE:
        memcpy(p->hole[ev->seat], ev->cards, 2);
        p->nhole[ev->seat] = 2;
        return;
    case HOLDEM_EV_ACTION: {
        hr_write_holes(p);
        if (!p->street_started)
            hr_street_actors(p);
        p->all_in[ev->seat] = p->all_in[ev->seat] || ev->all_in;
        p->stack[ev->seat] -= ev->amount;
        p->bet[ev->seat] = ev->to;
        /* PokerKit refuses a raise nobody can call any part of (every other live player has
         * less than the bet to call behind): the table returns its excess, as after a call. */
        bool callable = false;
        for (int s = 0; s < HOLDEM_MAX_SEATS; s++)
            if (s != ev->seat && p->player[s] >= 0 && !p->folded[s] &&
                p->stack[s] + p->bet[s] > p->max_bet)
                callable = true;
        char what[40];
        switch (ev->detail) {
        case HOLDEM_FOLD:
            p->folded[ev->seat] = true;
            hr_act(p, ev->seat, "f");
            break;
        default:
            /* A bet, a raise, an all-in that raises: to its total; anything else (an all-in
             * that does not raise included) checks or calls. */
            if ((ev->detail == HOLDEM_BET || ev->detail == HOLDEM_RAISE ||
                 ev->detail == HOLDEM_ALL_IN) &&
                ev->to > p->max_bet && callable) {
                snprintf(what, sizeof what, "cbr %" PRId64, ev->to);
                hr_act(p, ev->seat, what);
                p->max_bet = ev->to;
            } else {
                hr_act(p, ev->seat, "cc");
            }
            break;
        }
        return;
    }
    case HOLDEM_EV_NO_DECISION:
        /* PokerKit gives such a seat its turn, where it can only check (docs/rules/holdem.md
         * "Replays (PHH)"), if it let the seat act in this betting round at all. */
        hr_write_holes(p);
        if (!p->street_started)
            hr_street_actors(p);
        if (p->actor[ev->seat])
            hr_act(p, ev->seat, "cc");
        return;
    case HOLDEM_EV_BOARD: {
        hr_write_holes(p);
        /* PokerKit shows the hands down as soon as a betting round ends with at most one live
         * player holding chips, before the rest of the board. */
        int chips, live = hr_live(p, &chips);
        if (live > 1 && chips <= 1)
            hr_write_showdown(p);
        char c[16];
        hr_cards_text(ev->cards, ev->ncards, c);
        hr_printf(&p->acts, "'d db %s', ", c);
        p->max_bet = 0;
        memset(p->bet, 0, sizeof p->bet);
        p->street_started = false;
        return;
    }
    case HOLDEM_EV_SHOW:
        p->show[ev->seat] = 1;
        return;
    case HOLDEM_EV_MUCK:
        p->show[ev->seat] = -1;
        return;
    case HOLDEM_EV_HAND_END: {
        hr_write_holes(p);
        int chips, live = hr_live(p, &chips);
        if (live > 1)
            hr_write_showdown(p);
        return;
    }
    default:
        return;
    }
}

int holdem_record_phh(const json_t *rec, const bool *hidden, char **out, char *err, size_t errlen)
{
    *out = NULL;
    hr_hand_t *h = malloc(sizeof *h);
    hr_phh_t *p = calloc(1, sizeof *p);
    hr_text_t x = {0};
    holdem_phh_t *check = NULL;
    int rc = -ENOMEM;
    if (h == NULL || p == NULL)
        goto done;
    rc = hr_read(rec, h, err, errlen);
    if (rc != 0)
        goto done;
    if (!h->completed) {
        rc = hr_fail(err, errlen, "not a completed hand (voided)");
        goto done;
    }
    /* The house's run validates the record; PokerKit's must give the same result. */
    int64_t house[HOLDEM_MAX_SEATS] = {0}, pk[HOLDEM_MAX_SEATS] = {0};
    rc = hr_run(h, false, NULL, NULL, NULL, house, err, errlen);
    if (rc != 0)
        goto done;
    /* Players: from the seat left of the button round to the button; heads-up p1 is the big
     * blind, which is the same order. */
    int button = h->tour ? h->pos.button : h->button;
    if (button < 0 || button >= HOLDEM_MAX_SEATS || !h->dealt[button]) {
        rc = hr_fail(err, errlen,
                     "the button is on no seat dealt in (a dead button): PHH has "
                     "no way to say it");
        goto done;
    }
    for (int s = 0; s < HOLDEM_MAX_SEATS; s++)
        p->player[s] = -1;
    int order[HOLDEM_MAX_SEATS];
    for (int k = 1; k <= h->nseats; k++) {
        int s = (button + k) % h->nseats;
        if (h->dealt[s]) {
            order[p->nplayers] = s;
            p->player[s] = p->nplayers++;
        }
    }
    if (h->tour && p->nplayers > 2 &&
        (h->pos.small_blind != order[0] || h->pos.big_blind != order[1])) {
        rc = hr_fail(err, errlen, "a dead small blind or moved blinds: PHH has no way to say it");
        goto done;
    }
    p->bad_seat = -1;
    memcpy(p->stack, h->stack, sizeof p->stack);
    rc = hr_run(h, true, hr_phh_event, p, NULL, pk, err, errlen);
    if (rc != 0) {
        char why[200];
        snprintf(why, sizeof why, "%s", err ? err : "");
        rc = hr_fail(err, errlen, "PokerKit's conventions play this hand differently: %s", why);
        goto done;
    }
    for (int s = 0; s < HOLDEM_MAX_SEATS; s++)
        if (house[s] != pk[s]) {
            rc = hr_fail(err, errlen,
                         "PokerKit's conventions give seat %d %" PRId64 " (the house %" PRId64
                         "): a house rule PokerKit does not have decided this hand",
                         s, pk[s], house[s]);
            goto done;
        }
    if (p->bad_seat >= 0 || p->acts.oom) {
        rc = p->acts.oom ? -ENOMEM
                         : hr_fail(err, errlen, "seat %d acted, not dealt in", p->bad_seat);
        goto done;
    }
    /* The file. Lists by position: index 0 the small blind's, 1 the big blind's, then the
     * players after them (heads-up: the button posts the small blind). */
    bool hu = p->nplayers == 2;
    const char *rid = json_string_value(json_object_get(rec, "round"));
    hr_printf(&x, "# croupier %s: exported by croupier-ctl round --phh (docs/replays.md)\n",
              rid ? rid : "?");
    hr_printf(&x, "variant = 'NT'\nante_trimming_status = false\nantes = [");
    for (int k = 0; k < p->nplayers; k++) {
        int64_t a = h->cfg.ante;
        if (k == 1 && h->cfg.big_blind_ante > 0)
            a = h->cfg.big_blind_ante;
        hr_printf(&x, "%s%" PRId64, k ? ", " : "", a);
    }
    hr_printf(&x, "]\nblinds_or_straddles = [");
    for (int k = 0; k < p->nplayers; k++) {
        int64_t b = k == 0 ? h->cfg.small_blind : k == 1 ? h->cfg.big_blind : 0;
        if (k >= 2 && k - 2 < h->nstraddles)
            b = h->cfg.straddle << (k - 2);
        hr_printf(&x, "%s%" PRId64, k ? ", " : "", b);
    }
    hr_printf(&x, "]\nmin_bet = %" PRId64 "\nstarting_stacks = [", h->cfg.big_blind);
    /* Players in order: heads-up the lists above are by position, the players still p1 = the
     * big blind (the seat after the button). */
    (void)hu;
    for (int k = 0; k < p->nplayers; k++)
        hr_printf(&x, "%s%" PRId64, k ? ", " : "", h->stack[order[k]]);
    hr_printf(&x, "]\nactions = [");
    if (p->acts.len >= 2)
        p->acts.buf[p->acts.len - 2] = '\0'; /* the last ", " */
    hr_printf(&x, "%s", p->acts.buf ? p->acts.buf : "");
    hr_printf(&x, "]\nfinishing_stacks = [");
    for (int k = 0; k < p->nplayers; k++)
        hr_printf(&x, "%s%" PRId64, k ? ", " : "", h->stack[order[k]] + h->result[order[k]]);
    hr_printf(&x, "]\nplayers = [");
    for (int k = 0; k < p->nplayers; k++) {
        const char *pl = NULL;
        size_t i;
        const json_t *s;
        json_array_foreach(json_object_get(rec, "seats"), i, s)
        {
            if (hr_int(s, "seat", -1) == order[k])
                pl = json_string_value(json_object_get(s, "player"));
        }
        hr_printf(&x, "%s'%s'", k ? ", " : "", pl ? pl : "");
    }
    hr_printf(&x, "]\n");
    if (h->rake > 0)
        hr_printf(&x, "_rake = %" PRId64 "\n", h->rake);
    if (rid != NULL)
        hr_printf(&x, "_round = '%s'\n", rid);
    if (x.oom) {
        rc = -ENOMEM;
        goto done;
    }
    /* The file through the repository's own PHH replay (PokerKit's conventions): the stacks it
     * finishes with are the table's (before the rake). */
    check = malloc(sizeof *check);
    if (check == NULL) {
        rc = -ENOMEM;
        goto done;
    }
    char why[256] = "";
    rc = holdem_phh_parse(x.buf, check, why, sizeof why);
    int64_t stacks[HOLDEM_MAX_SEATS];
    if (rc == 0)
        rc = holdem_phh_replay(check, stacks, why, sizeof why);
    if (rc == 0)
        for (int k = 0; k < p->nplayers; k++)
            if (stacks[k] != h->stack[order[k]] + pk[order[k]]) {
                snprintf(why, sizeof why, "p%d finishes with %" PRId64 ", the table's %" PRId64,
                         k + 1, stacks[k], h->stack[order[k]] + pk[order[k]]);
                rc = -EINVAL;
            }
    if (rc != 0) {
        rc = hr_fail(err, errlen, "the file does not replay: %s", why);
        goto done;
    }
    /* The viewer's mask, once the whole file is checked: a hidden seat's cards become ????. */
    for (int s = 0; hidden != NULL && s < HOLDEM_MAX_SEATS; s++) {
        if (!hidden[s] || p->player[s] < 0 || p->nhole[s] != 2)
            continue;
        char c[8], pat[24];
        hr_cards_text(p->hole[s], 2, c);
        const char *fmt[] = {"'d dh p%d %s'", "'p%d sm %s'"};
        for (int f = 0; f < 2; f++) {
            snprintf(pat, sizeof pat, fmt[f], p->player[s] + 1, c);
            char *at = strstr(x.buf, pat);
            if (at != NULL)
                memcpy(at + strlen(pat) - 5, "????", 4);
        }
    }
    *out = x.buf;
    x.buf = NULL;
    rc = 0;
done:
    free(x.buf);
    free(check);
    if (p != NULL)
        free(p->acts.buf);
    free(p);
    free(h);
    return rc;
}
