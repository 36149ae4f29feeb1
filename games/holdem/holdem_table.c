/*
 * holdem_table -- the no-limit hold'em table state machine (see holdem_table.h and
 * docs/rules/holdem.md).
 *
 * All state lives in one flat struct without pointers (besides the callback), so a clone is a
 * memcpy and "state unchanged" is a memcmp. Every input is checked completely before anything
 * is written.
 */
#include "holdem_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "holdem_eval.h"
#include "xmalloc.h"

enum { SEAT_EMPTY = 0, SEAT_TAKEN = 1 };
enum { STREET_PREFLOP = 0, STREET_FLOP = 1, STREET_TURN = 2, STREET_RIVER = 3 };

typedef struct {
    int64_t stack;
    int64_t bank_ms;
    int64_t start_stack; /* stack when the hand started */
    int64_t bet;         /* this street */
    int64_t total;       /* all streets of this hand, antes excluded */
    int64_t faced;       /* the high bet just after this seat last acted this street */
    uint8_t state;
    uint8_t sitting_out;
    uint8_t straddle_opt;
    uint8_t in_hand; /* dealt into the current hand */
    uint8_t folded;
    uint8_t all_in;
    uint8_t acted;    /* acted voluntarily this street */
    uint8_t pk_acted; /* pokerkit_rules: acted since the last raise that reopened the betting */
    uint8_t hole[2];
    uint8_t pad_[6];
} table_seat_t;

typedef struct {
    holdem_config_t cfg;
    table_seat_t seat[HOLDEM_MAX_SEATS];
    holdem_settlement_t settle;
    int64_t high;       /* highest street bet */
    int64_t last_raise; /* size of the last full bet or raise this street */
    int64_t dead;       /* antes: dead money for the main pot */
    int64_t rake_total;
    uint64_t hand_no;
    int in_hand;
    int street;
    int button, sb, bb;
    int to_act;
    int last_aggressor; /* seat that made the last bet or raise this street, or -1 */
    int last_blind;     /* the last seat with the highest blind or straddle: preflop action
                           starts after it */
    int straddles;      /* straddles posted this hand */
    int chain_seat; /* the big blind or the last seat that straddled: the chain goes on after it */
    int offering;   /* straddle offers running: to_act is offered offer_amount */
    int pad_i_;
    int64_t offer_amount;
    /* pokerkit_rules: the largest bet or raise increment this street, and the all-in raises
     * since the last raise that was not all-in (their count and the sum of their increments). */
    int64_t pk_completion;
    int64_t pk_allin_run;
    int pk_allin_n;
    int pos_sb;         /* the small blind reported by holdem_table_last_positions(): sb,
                           or the dead small blind's seat as given (-1: none) */
    uint32_t pos_dealt; /* the seats dealt into the current or last hand */
    int min_bet_auto;   /* cfg.min_bet was 0: it follows the big blind (set_blinds) */
    int pad_j_;
    int has_settlement;
    int deck_pos, deck_len;
    int nboard;
    uint8_t deck[HOLDEM_CARDS];
    uint8_t board[5];
    uint8_t pad_[3];
} table_state_t;

struct holdem_table {
    table_state_t s;
    holdem_event_cb cb;
    void *ud;
};

static void table_emit(holdem_table_t *t, const holdem_event_t *ev)
{
    if (t->cb != NULL)
        t->cb(t->ud, ev);
}

static void table_emit_simple(holdem_table_t *t, holdem_event_kind_t kind, int seat, int detail,
                              int64_t amount)
{
    if (t->cb == NULL)
        return;
    holdem_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    ev.seat = seat;
    ev.detail = detail;
    ev.amount = amount;
    t->cb(t->ud, &ev);
}

const char *holdem_err_name(int err)
{
    switch (err) {
    case HOLDEM_OK:
        return "ok";
    case HOLDEM_E_MALFORMED:
        return "malformed";
    case HOLDEM_E_OUT_OF_TURN:
        return "out of turn";
    case HOLDEM_E_BELOW_MIN:
        return "below minimum";
    case HOLDEM_E_OVER_STACK:
        return "more than stack";
    case HOLDEM_E_NOT_ALLOWED:
        return "not allowed now";
    default:
        return "unknown error";
    }
}

static int table_config_ok(const holdem_config_t *c)
{
    return c->seats >= 2 && c->seats <= HOLDEM_MAX_SEATS && c->small_blind > 0 &&
           c->big_blind >= c->small_blind && c->ante >= 0 && c->big_blind_ante >= 0 &&
           c->straddle >= 0 && c->max_straddles >= 0 && c->max_straddles < HOLDEM_MAX_SEATS &&
           c->straddle_position >= 0 && c->straddle_position < HOLDEM_MAX_SEATS &&
           (c->straddle == 0 || c->straddle <= INT64_MAX >> HOLDEM_MAX_SEATS) && c->min_bet >= 0 &&
           c->rake_basis_points >= 0 && c->rake_basis_points <= 10000 && c->rake_cap >= 0 &&
           c->action_ms >= 0 && c->time_bank_ms >= 0;
}

holdem_table_t *holdem_table_create(const holdem_config_t *cfg, holdem_event_cb cb, void *ud,
                                    int *err)
{
    if (cfg == NULL || !table_config_ok(cfg)) {
        if (err != NULL)
            *err = HOLDEM_E_MALFORMED;
        return NULL;
    }
    holdem_table_t *t = xcalloc(1, sizeof *t);
    t->s.cfg = *cfg;
    if (t->s.cfg.min_bet == 0) {
        t->s.cfg.min_bet = cfg->big_blind;
        t->s.min_bet_auto = 1;
    }
    if (t->s.cfg.max_straddles == 0)
        t->s.cfg.max_straddles = 1;
    t->s.button = -1;
    t->s.sb = t->s.bb = t->s.pos_sb = -1;
    t->s.to_act = -1;
    t->s.last_aggressor = -1;
    t->cb = cb;
    t->ud = ud;
    if (err != NULL)
        *err = HOLDEM_OK;
    return t;
}

void holdem_table_destroy(holdem_table_t *t)
{
    free(t);
}

holdem_table_t *holdem_table_clone(const holdem_table_t *t)
{
    holdem_table_t *c = xmalloc(sizeof *c);
    memcpy(c, t, sizeof *c);
    return c;
}

int holdem_table_same_state(const holdem_table_t *a, const holdem_table_t *b)
{
    return memcmp(&a->s, &b->s, sizeof a->s) == 0;
}

static int table_seat_ok(const holdem_table_t *t, int seat)
{
    return seat >= 0 && seat < t->s.cfg.seats;
}

int holdem_table_sit(holdem_table_t *t, int seat, int64_t stack)
{
    if (!table_seat_ok(t, seat) || stack <= 0)
        return HOLDEM_E_MALFORMED;
    table_seat_t *p = &t->s.seat[seat];
    if (p->state != SEAT_EMPTY)
        return HOLDEM_E_NOT_ALLOWED;
    memset(p, 0, sizeof *p);
    p->state = SEAT_TAKEN;
    p->stack = stack;
    p->bank_ms = t->s.cfg.time_bank_ms;
    return HOLDEM_OK;
}

static int table_seat_busy(const holdem_table_t *t, int seat)
{
    return t->s.in_hand && t->s.seat[seat].in_hand;
}

int holdem_table_leave(holdem_table_t *t, int seat, int64_t *stack_out)
{
    if (!table_seat_ok(t, seat))
        return HOLDEM_E_MALFORMED;
    table_seat_t *p = &t->s.seat[seat];
    if (p->state == SEAT_EMPTY || table_seat_busy(t, seat))
        return HOLDEM_E_NOT_ALLOWED;
    if (stack_out != NULL)
        *stack_out = p->stack;
    memset(p, 0, sizeof *p);
    return HOLDEM_OK;
}

int holdem_table_sit_out(holdem_table_t *t, int seat)
{
    if (!table_seat_ok(t, seat))
        return HOLDEM_E_MALFORMED;
    if (t->s.seat[seat].state == SEAT_EMPTY)
        return HOLDEM_E_NOT_ALLOWED;
    t->s.seat[seat].sitting_out = 1;
    return HOLDEM_OK;
}

int holdem_table_sit_in(holdem_table_t *t, int seat)
{
    if (!table_seat_ok(t, seat))
        return HOLDEM_E_MALFORMED;
    if (t->s.seat[seat].state == SEAT_EMPTY)
        return HOLDEM_E_NOT_ALLOWED;
    t->s.seat[seat].sitting_out = 0;
    return HOLDEM_OK;
}

int holdem_table_add_chips(holdem_table_t *t, int seat, int64_t chips)
{
    if (!table_seat_ok(t, seat) || chips <= 0)
        return HOLDEM_E_MALFORMED;
    table_seat_t *p = &t->s.seat[seat];
    if (p->state == SEAT_EMPTY || table_seat_busy(t, seat))
        return HOLDEM_E_NOT_ALLOWED;
    if (p->stack > INT64_MAX / 4 - chips)
        return HOLDEM_E_MALFORMED;
    p->stack += chips;
    return HOLDEM_OK;
}

int holdem_table_set_blinds(holdem_table_t *t, int64_t small_blind, int64_t big_blind, int64_t ante,
                            int64_t big_blind_ante)
{
    if (t->s.in_hand)
        return HOLDEM_E_NOT_ALLOWED;
    holdem_config_t c = t->s.cfg;
    c.small_blind = small_blind;
    c.big_blind = big_blind;
    c.ante = ante;
    c.big_blind_ante = big_blind_ante;
    if (t->s.min_bet_auto)
        c.min_bet = big_blind;
    if (!table_config_ok(&c))
        return HOLDEM_E_MALFORMED;
    t->s.cfg = c;
    return HOLDEM_OK;
}

int holdem_table_set_straddle(holdem_table_t *t, int seat, bool on)
{
    if (!table_seat_ok(t, seat))
        return HOLDEM_E_MALFORMED;
    if (t->s.seat[seat].state == SEAT_EMPTY || (on && t->s.cfg.straddle == 0))
        return HOLDEM_E_NOT_ALLOWED;
    t->s.seat[seat].straddle_opt = on;
    return HOLDEM_OK;
}

/* Whether a seat would be dealt into a new hand. */
static int table_eligible(const holdem_table_t *t, int seat)
{
    const table_seat_t *p = &t->s.seat[seat];
    return p->state == SEAT_TAKEN && !p->sitting_out && p->stack > 0;
}

/* The next seat after `from` (clockwise) that is in the hand and satisfies the mode. */
enum { NEXT_DEALT, NEXT_LIVE, NEXT_CAN_ACT };
static int table_next(const holdem_table_t *t, int from, int mode)
{
    int n = t->s.cfg.seats;
    for (int i = 1; i <= n; i++) {
        int s = (from + i) % n;
        const table_seat_t *p = &t->s.seat[s];
        if (!p->in_hand)
            continue;
        if (mode >= NEXT_LIVE && p->folded)
            continue;
        if (mode >= NEXT_CAN_ACT && p->all_in)
            continue;
        return s;
    }
    return -1;
}

static int table_count(const holdem_table_t *t, int mode)
{
    int c = 0;
    for (int s = 0; s < t->s.cfg.seats; s++) {
        const table_seat_t *p = &t->s.seat[s];
        if (p->in_hand && !(mode >= NEXT_LIVE && p->folded) && !(mode >= NEXT_CAN_ACT && p->all_in))
            c++;
    }
    return c;
}

/* Moves up to want chips from a seat's stack into its street bet (or dead money). */
static int64_t table_put(holdem_table_t *t, int seat, int64_t want, int dead)
{
    table_seat_t *p = &t->s.seat[seat];
    int64_t put = want < p->stack ? want : p->stack;
    p->stack -= put;
    if (dead) {
        t->s.dead += put;
    } else {
        p->bet += put;
        p->total += put;
    }
    if (p->stack == 0)
        p->all_in = 1;
    return put;
}

static void table_post(holdem_table_t *t, int seat, int64_t want, holdem_post_kind_t kind)
{
    int dead = kind == HOLDEM_POST_ANTE || kind == HOLDEM_POST_BB_ANTE;
    int64_t put = table_put(t, seat, want, dead);
    if (t->cb != NULL) {
        holdem_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = HOLDEM_EV_POST;
        ev.seat = seat;
        ev.detail = kind;
        ev.amount = put;
        ev.to = t->s.seat[seat].bet;
        ev.all_in = t->s.seat[seat].all_in;
        t->cb(t->ud, &ev);
    }
}

/* Live seats other than `seat` that still have chips to bet with. */
static int table_others_can_act(const holdem_table_t *t, int seat)
{
    int others = 0;
    for (int s = 0; s < t->s.cfg.seats; s++)
        if (s != seat && t->s.seat[s].in_hand && !t->s.seat[s].folded && !t->s.seat[s].all_in)
            others++;
    return others;
}

/*
 * Does this seat still have to act in the current betting round? 1 yes; 0 no; 2 it has not
 * acted but has no decision to make (docs/rules/holdem.md "Betting", no-decision turns): it owes
 * nothing and every other live player is all-in, so it could only check.
 */
static int table_needs_action(const holdem_table_t *t, int seat)
{
    const table_seat_t *p = &t->s.seat[seat];
    if (!p->in_hand || p->folded || p->all_in)
        return 0;
    if (p->bet < t->s.high)
        return 1;
    if (!p->acted)
        return table_others_can_act(t, seat) > 0 ? 1 : 2;
    return 0;
}

/* Whether the seat to act may bet or raise (TDA: a short all-in does not reopen the betting). */
static int table_may_raise(const holdem_table_t *t, int seat)
{
    const table_seat_t *p = &t->s.seat[seat];
    if (p->stack + p->bet <= t->s.high)
        return 0;
    /* Someone else must be able to answer a raise. */
    if (table_others_can_act(t, seat) == 0)
        return 0;
    if (t->s.cfg.pokerkit_rules) {
        /* PokerKit: a player who acted may raise again unless the all-in raises since the last
         * full one add up to less than the largest raise of the street. */
        if (!p->pk_acted || t->s.pk_allin_n == 0)
            return 1;
        return t->s.pk_allin_run >= t->s.pk_completion;
    }
    if (!p->acted)
        return 1;
    return p->faced == 0 || t->s.high - p->faced >= t->s.last_raise;
}

void holdem_table_legal(const holdem_table_t *t, holdem_legal_t *out)
{
    memset(out, 0, sizeof *out);
    out->seat = t->s.in_hand ? t->s.to_act : -1;
    if (out->seat < 0)
        return;
    const table_seat_t *p = &t->s.seat[out->seat];
    if (t->s.offering) {
        out->straddle_offer = true;
        out->can_check = true;
        out->can_bet = true;
        out->min_to = out->max_to = t->s.offer_amount;
        return;
    }
    int64_t need = t->s.high - p->bet;
    out->can_check = need <= 0;
    out->to_call = need <= 0 ? 0 : (need < p->stack ? need : p->stack);
    out->max_to = p->bet + p->stack;
    int may = table_may_raise(t, out->seat);
    out->can_bet = may && t->s.high == 0;
    out->can_raise = may && t->s.high > 0;
    if (t->s.high == 0)
        out->min_to = t->s.cfg.min_bet;
    else
        out->min_to = t->s.high + t->s.last_raise;
    if (out->min_to > out->max_to)
        out->min_to = out->max_to;
}

static void table_emit_to_act(holdem_table_t *t)
{
    if (t->cb == NULL)
        return;
    holdem_legal_t l;
    holdem_table_legal(t, &l);
    holdem_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = HOLDEM_EV_TO_ACT;
    ev.seat = l.seat;
    ev.detail = l.straddle_offer ? 1 : 0;
    ev.amount = l.to_call;
    ev.to = (l.can_bet || l.can_raise) ? l.min_to : 0;
    ev.max = l.max_to;
    t->cb(t->ud, &ev);
}

/* Deals board cards for a street (after a burn card). */
static void table_deal_street(holdem_table_t *t, int street)
{
    int n = street == STREET_FLOP ? 3 : 1;
    holdem_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = HOLDEM_EV_BOARD;
    ev.seat = -1;
    ev.detail = street;
    t->s.deck_pos++; /* burn */
    for (int i = 0; i < n; i++) {
        uint8_t c = t->s.deck[t->s.deck_pos++];
        t->s.board[t->s.nboard++] = c;
        ev.cards[ev.ncards++] = c;
    }
    table_emit(t, &ev);
}

/* Pays amount to the given winners (ordered from the button's left); odd chips go first. */
static void table_split(holdem_table_t *t, int pot, int64_t amount, const int *winners, int k)
{
    int64_t share = amount / k, odd = amount % k;
    for (int i = 0; i < k; i++) {
        int64_t win = share + (t->s.cfg.pokerkit_rules ? (i == 0 ? odd : 0) : (i < odd ? 1 : 0));
        t->s.seat[winners[i]].stack += win;
        if (win > 0)
            table_emit_simple(t, HOLDEM_EV_AWARD, winners[i], pot, win);
    }
}

/* Returns the uncalled part of the largest bet to its owner. */
static void table_return_uncalled(holdem_table_t *t)
{
    int top = -1;
    int64_t top_total = -1, second = 0;
    for (int s = 0; s < t->s.cfg.seats; s++) {
        const table_seat_t *p = &t->s.seat[s];
        if (!p->in_hand)
            continue;
        if (p->total > top_total) {
            second = top_total > second ? top_total : second;
            top_total = p->total;
            top = s;
        } else if (p->total > second) {
            second = p->total;
        }
    }
    if (top < 0 || top_total <= second)
        return;
    int64_t back = top_total - second;
    table_seat_t *p = &t->s.seat[top];
    p->total -= back;
    p->stack += back;
    if (p->bet >= back)
        p->bet -= back;
    table_emit_simple(t, HOLDEM_EV_RETURN, top, 0, back);
}

typedef struct {
    int64_t amount;
    int n;
    int eligible[HOLDEM_MAX_SEATS];
} table_pot_t;

/* Builds the main pot (with the dead antes) and side pots from the seats' totals. */
static int table_build_pots(holdem_table_t *t, table_pot_t *pots)
{
    int64_t levels[HOLDEM_MAX_SEATS];
    int nl = 0;
    for (int s = 0; s < t->s.cfg.seats; s++) {
        const table_seat_t *p = &t->s.seat[s];
        if (!p->in_hand || p->folded)
            continue;
        int64_t v = p->total;
        int i = 0;
        while (i < nl && levels[i] < v)
            i++;
        if (i < nl && levels[i] == v)
            continue;
        memmove(levels + i + 1, levels + i, (size_t)(nl - i) * sizeof levels[0]);
        levels[i] = v;
        nl++;
    }
    int np = 0;
    int64_t prev = 0;
    for (int li = 0; li < nl; li++) {
        table_pot_t *pot = &pots[np];
        memset(pot, 0, sizeof *pot);
        int64_t lv = levels[li];
        for (int k = 0; k < t->s.cfg.seats; k++) {
            int s = (t->s.button + 1 + k) % t->s.cfg.seats;
            const table_seat_t *p = &t->s.seat[s];
            if (!p->in_hand)
                continue;
            int64_t hi = p->total < lv ? p->total : lv;
            int64_t lo = p->total < prev ? p->total : prev;
            pot->amount += hi - lo;
            if (!p->folded && p->total >= lv)
                pot->eligible[pot->n++] = s;
        }
        if (li == 0)
            pot->amount += t->s.dead;
        prev = lv;
        if (pot->amount > 0 || li == 0)
            np++;
    }
    /* Chips of folded seats above every live level (cannot happen after the uncalled return,
     * kept so that no chip can ever vanish) go to the last pot. */
    int64_t extra = 0;
    for (int s = 0; s < t->s.cfg.seats; s++) {
        const table_seat_t *p = &t->s.seat[s];
        if (p->in_hand && p->total > prev)
            extra += p->total - prev;
    }
    if (np > 0)
        pots[np - 1].amount += extra;
    return np;
}

/* Takes the rake from the pots, main pot first. */
static int64_t table_take_rake(holdem_table_t *t, table_pot_t *pots, int np)
{
    const holdem_config_t *c = &t->s.cfg;
    if (c->rake_basis_points == 0)
        return 0;
    if (c->no_flop_no_drop && t->s.nboard == 0)
        return 0;
    int64_t total = 0;
    for (int i = 0; i < np; i++)
        total += pots[i].amount;
    int64_t rake =
        total / 10000 * c->rake_basis_points + total % 10000 * c->rake_basis_points / 10000;
    if (c->rake_cap > 0 && rake > c->rake_cap)
        rake = c->rake_cap;
    int64_t left = rake;
    for (int i = 0; i < np && left > 0; i++) {
        int64_t take = pots[i].amount < left ? pots[i].amount : left;
        pots[i].amount -= take;
        left -= take;
    }
    if (rake > 0)
        table_emit_simple(t, HOLDEM_EV_RAKE, -1, 0, rake);
    return rake;
}

/* Ends the hand: settlement, events, no more actions. */
static void table_finish(holdem_table_t *t, int64_t rake)
{
    holdem_settlement_t *st = &t->s.settle;
    memset(st, 0, sizeof *st);
    st->hand = t->s.hand_no;
    st->rake = rake;
    for (int s = 0; s < t->s.cfg.seats; s++) {
        table_seat_t *p = &t->s.seat[s];
        if (!p->in_hand)
            continue;
        st->dealt[s] = true;
        st->delta[s] = p->stack - p->start_stack;
        p->bet = p->total = 0;
    }
    t->s.rake_total += rake;
    t->s.dead = 0;
    t->s.has_settlement = 1;
    t->s.in_hand = 0;
    t->s.to_act = -1;
    table_emit_simple(t, HOLDEM_EV_HAND_END, -1, 0, (int64_t)t->s.hand_no);
}

/*
 * Showdown: hands are revealed in order -- the last river aggressor first, else the first live
 * seat left of the button -- and a seat that can no longer win or tie any pot it is in mucks,
 * unless a player is all-in, in which case every hand is tabled. Each pot goes to its best
 * shown eligible hands.
 */
static void table_showdown(holdem_table_t *t)
{
    table_pot_t pots[HOLDEM_MAX_POTS];
    int np = table_build_pots(t, pots);
    int64_t rake = table_take_rake(t, pots, np);
    int n = t->s.cfg.seats;
    uint16_t value[HOLDEM_MAX_SEATS] = {0};
    uint8_t shown[HOLDEM_MAX_SEATS] = {0};
    int any_all_in = 0;
    for (int s = 0; s < n; s++)
        if (t->s.seat[s].in_hand && !t->s.seat[s].folded && t->s.seat[s].all_in)
            any_all_in = 1;
    holdem_hand_t board = holdem_hand_empty();
    for (int i = 0; i < t->s.nboard; i++)
        board = holdem_hand_add(board, t->s.board[i]);
    int first = t->s.last_aggressor >= 0 && t->s.street == STREET_RIVER && !any_all_in
                    ? t->s.last_aggressor
                    : table_next(t, t->s.button, NEXT_LIVE);
    for (int k = 0; k < n; k++) {
        int s = (first + k) % n;
        table_seat_t *p = &t->s.seat[s];
        if (!p->in_hand || p->folded)
            continue;
        holdem_hand_t h = holdem_hand_add(holdem_hand_add(board, p->hole[0]), p->hole[1]);
        uint16_t v = holdem_hand_value(h);
        int show = any_all_in;
        for (int pi = 0; pi < np && !show; pi++) {
            int in = 0;
            uint16_t best = 0;
            for (int e = 0; e < pots[pi].n; e++) {
                int o = pots[pi].eligible[e];
                in |= o == s;
                if (shown[o] && value[o] > best)
                    best = value[o];
            }
            show = in && v >= best;
        }
        holdem_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.seat = s;
        if (show) {
            shown[s] = 1;
            value[s] = v;
            ev.kind = HOLDEM_EV_SHOW;
            ev.value = v;
            ev.ncards = 2;
            ev.cards[0] = p->hole[0];
            ev.cards[1] = p->hole[1];
        } else {
            ev.kind = HOLDEM_EV_MUCK;
        }
        table_emit(t, &ev);
    }
    int winners[HOLDEM_MAX_POTS][HOLDEM_MAX_SEATS], nwin[HOLDEM_MAX_POTS];
    for (int pi = 0; pi < np; pi++) {
        uint16_t best = 0;
        for (int e = 0; e < pots[pi].n; e++) {
            int o = pots[pi].eligible[e];
            if (shown[o] && value[o] > best)
                best = value[o];
        }
        int k = 0;
        for (int e = 0; e < pots[pi].n; e++) /* eligible[] is ordered from the button's left */
            if (shown[pots[pi].eligible[e]] && value[pots[pi].eligible[e]] == best)
                winners[pi][k++] = pots[pi].eligible[e];
        if (k == 0) {
            /* Nobody eligible showed (cannot happen: the first eligible seat always shows). */
            for (int e = 0; e < pots[pi].n; e++)
                winners[pi][k++] = pots[pi].eligible[e];
        }
        nwin[pi] = k;
    }
    /*
     * PokerKit keeps, for the split, the live hands at least as good as the best hand of some
     * pot -- any pot, one the player is not in included -- and kills the others; then it merges
     * neighbouring pots that the same kept players are in and splits each merged pot once.
     */
    unsigned kept = 0;
    if (t->s.cfg.pokerkit_rules) {
        uint16_t all[HOLDEM_MAX_SEATS] = {0}, low = UINT16_MAX;
        for (int s = 0; s < n; s++)
            if (t->s.seat[s].in_hand && !t->s.seat[s].folded)
                all[s] = holdem_hand_value(holdem_hand_add(
                    holdem_hand_add(board, t->s.seat[s].hole[0]), t->s.seat[s].hole[1]));
        for (int pi = 0; pi < np; pi++) {
            uint16_t best = 0;
            for (int e = 0; e < pots[pi].n; e++)
                if (all[pots[pi].eligible[e]] > best)
                    best = all[pots[pi].eligible[e]];
            if (pots[pi].amount > 0 && pots[pi].n > 0 && best < low)
                low = best;
        }
        for (int s = 0; s < n; s++)
            if (t->s.seat[s].in_hand && !t->s.seat[s].folded && all[s] >= low)
                kept |= 1u << s;
    }
    for (int pi = 0; pi < np; pi++) {
        int64_t amount = pots[pi].amount;
        if (t->s.cfg.pokerkit_rules) {
            unsigned in = 0;
            for (int e = 0; e < pots[pi].n; e++)
                in |= 1u << pots[pi].eligible[e];
            in &= kept;
            while (pi + 1 < np) {
                unsigned next = 0;
                for (int e = 0; e < pots[pi + 1].n; e++)
                    next |= 1u << pots[pi + 1].eligible[e];
                if ((next & kept) != in)
                    break;
                amount += pots[++pi].amount;
            }
        }
        if (nwin[pi] > 0 && amount > 0)
            table_split(t, pi, amount, winners[pi], nwin[pi]);
    }
    table_finish(t, rake);
}

/* Everyone else folded: the last live seat takes every pot without showing. */
static void table_win_uncontested(holdem_table_t *t)
{
    int w = table_next(t, t->s.button, NEXT_LIVE);
    table_pot_t pots[HOLDEM_MAX_POTS];
    int np = table_build_pots(t, pots);
    int64_t rake = table_take_rake(t, pots, np);
    for (int i = 0; i < np; i++)
        if (pots[i].amount > 0)
            table_split(t, i, pots[i].amount, &w, 1);
    table_finish(t, rake);
}

/* Starts a betting round on the current street (bets already reset). */
static void table_open_round(holdem_table_t *t, int first)
{
    t->s.to_act = first;
    table_emit_to_act(t);
}

/*
 * Moves the hand on after an action (or after the deal): next seat to act, or the end of the
 * street (deal the next one, or run the board out when at most one player can still bet), or
 * the end of the hand.
 */
static void table_advance(holdem_table_t *t, int from)
{
    if (table_count(t, NEXT_LIVE) == 1) {
        table_return_uncalled(t);
        table_win_uncontested(t);
        return;
    }
    int n = t->s.cfg.seats;
    for (int i = 1; i <= n; i++) {
        int s = (from + i) % n;
        int need = table_needs_action(t, s);
        if (need == 1) {
            table_open_round(t, s);
            return;
        }
        if (need == 2) {
            /* Nothing to decide: no turn, no timer (the board runs out below). */
            t->s.seat[s].acted = 1;
            t->s.seat[s].faced = t->s.high;
            table_emit_simple(t, HOLDEM_EV_NO_DECISION, s, 0, 0);
        }
    }
    /* The street is over. */
    for (;;) {
        for (int s = 0; s < n; s++)
            t->s.seat[s].bet = 0, t->s.seat[s].acted = 0, t->s.seat[s].faced = 0,
            t->s.seat[s].pk_acted = 0;
        t->s.pk_completion = t->s.pk_allin_run = 0;
        t->s.pk_allin_n = 0;
        if (t->s.street == STREET_RIVER) {
            table_return_uncalled(t);
            table_showdown(t);
            return;
        }
        t->s.street++;
        t->s.high = 0;
        t->s.last_raise = t->s.cfg.min_bet;
        t->s.last_aggressor = -1;
        if (table_count(t, NEXT_CAN_ACT) <= 1)
            table_return_uncalled(t);
        table_deal_street(t, t->s.street);
        if (table_count(t, NEXT_CAN_ACT) >= 2) {
            table_open_round(t, table_next(t, t->s.button, NEXT_CAN_ACT));
            return;
        }
    }
}

/* The k-th straddle of a hand (0 = the first): each is twice the one before. */
static int64_t table_straddle_amount(const holdem_table_t *t, int k)
{
    return t->s.cfg.straddle << k;
}

/*
 * The seat whose turn in the straddle chain comes next -- the seat after the big blind (or
 * cfg.straddle_position seats later), then the seat after each straddler -- or -1 when the
 * chain cannot go on: no straddles configured, heads-up, as many straddles as
 * cfg.max_straddles, or the chain would reach the blinds.
 */
static int table_next_straddler(const holdem_table_t *t)
{
    const table_state_t *S = &t->s;
    if (S->cfg.straddle == 0 || table_count(t, NEXT_DEALT) < 3 ||
        S->straddles >= S->cfg.max_straddles)
        return -1;
    int s = S->chain_seat;
    for (int k = 0; k <= (S->straddles == 0 ? S->cfg.straddle_position : 0); k++) {
        s = table_next(t, s, NEXT_DEALT);
        if (s == S->sb || s == S->bb)
            return -1;
    }
    return s;
}

/*
 * Seat s posts the next straddle of the chain (what it has, when its stack is short) and is the
 * new last blind: the action starts after it and it acts last before the flop (unless it is so
 * short that it does not reach the bet to call). A full straddle
 * is the new big blind: the minimum raise is its size. A short (all-in) one is an all-in raise:
 * it sets the minimum raise only when it raises by at least a full raise (PokerKit: straddles
 * never change it, the big blind stays the minimum raise).
 */
static void table_post_straddle(holdem_table_t *t, int s)
{
    table_state_t *S = &t->s;
    int64_t amount = table_straddle_amount(t, S->straddles);
    table_post(t, s, amount, HOLDEM_POST_STRADDLE);
    S->straddles++;
    S->chain_seat = s;
    const table_seat_t *p = &S->seat[s];
    /* The action starts after the (last) seat with the highest blind: a straddle too short to
     * reach the bet to call does not move it. */
    if (p->bet >= S->high)
        S->last_blind = s;
    if (p->bet > S->high) {
        if (S->cfg.pokerkit_rules)
            ; /* the minimum raise stays */
        else if (p->bet >= amount)
            S->last_raise = amount;
        else if (p->bet - S->high >= S->last_raise)
            S->last_raise = p->bet - S->high;
        S->high = p->bet;
    }
}

/*
 * With cfg.straddle_offers: offers the next straddle of the chain to the seat whose turn it is,
 * if it can post it in full (house choice: no all-in straddles on offer). Returns 1 when an
 * offer is out (the seat is to act), 0 when the chain is over.
 */
static int table_offer_next(holdem_table_t *t)
{
    table_state_t *S = &t->s;
    int s = table_next_straddler(t);
    if (s < 0 || S->seat[s].stack < table_straddle_amount(t, S->straddles)) {
        S->offering = 0;
        return 0;
    }
    S->offering = 1;
    S->offer_amount = table_straddle_amount(t, S->straddles);
    S->to_act = s;
    table_emit_to_act(t);
    return 1;
}

/* Blinds and straddles are in: deals the hole cards and opens the betting after the last blind. */
static void table_deal_and_open(holdem_table_t *t)
{
    table_state_t *S = &t->s;
    int n = S->cfg.seats;
    S->offering = 0;
    S->to_act = -1;
    for (int s = 0; s < n; s++)
        if (S->seat[s].bet > S->high)
            S->high = S->seat[s].bet;
    /* Deal: one card at a time from the button's left, twice round. */
    for (int r = 0; r < 2; r++)
        for (int k = 1; k <= n; k++) {
            int s = (S->button + k) % n;
            if (S->seat[s].in_hand)
                S->seat[s].hole[r] = S->deck[S->deck_pos++];
        }
    if (t->cb != NULL)
        for (int k = 1; k <= n; k++) {
            int s = (S->button + k) % n;
            if (!S->seat[s].in_hand)
                continue;
            holdem_event_t ev;
            memset(&ev, 0, sizeof ev);
            ev.kind = HOLDEM_EV_HOLE;
            ev.seat = s;
            ev.ncards = 2;
            ev.cards[0] = S->seat[s].hole[0];
            ev.cards[1] = S->seat[s].hole[1];
            t->cb(t->ud, &ev);
        }
    table_advance(t, S->last_blind);
}

/* Time: what exceeds the action time comes out of the bank; a timeout empties it. */
static void table_spend_time(holdem_table_t *t, int seat, int timeout, int64_t elapsed_ms)
{
    table_seat_t *p = &t->s.seat[seat];
    if (timeout) {
        p->bank_ms = 0;
    } else if (elapsed_ms > t->s.cfg.action_ms) {
        int64_t over = elapsed_ms - t->s.cfg.action_ms;
        p->bank_ms = over >= p->bank_ms ? 0 : p->bank_ms - over;
    }
}

/*
 * The answer to a straddle offer (see holdem_table.h): the exact amount straddles (and the next
 * seat is offered the double), a check or a timeout declines and ends the chain; then the deal.
 */
static int table_answer_offer(holdem_table_t *t, int seat, holdem_action_kind_t kind,
                              int64_t amount, int64_t elapsed_ms)
{
    table_state_t *S = &t->s;
    if (!table_seat_ok(t, seat) || (unsigned)kind > HOLDEM_TIMEOUT || elapsed_ms < 0)
        return HOLDEM_E_MALFORMED;
    if (seat != S->to_act)
        return HOLDEM_E_OUT_OF_TURN;
    const table_seat_t *p = &S->seat[seat];
    int accept;
    switch (kind) {
    case HOLDEM_CHECK:
    case HOLDEM_TIMEOUT:
        accept = 0;
        break;
    case HOLDEM_ALL_IN:
        amount = p->stack;
        /* fall through */
    case HOLDEM_BET:
    case HOLDEM_RAISE:
        if (amount < 0)
            return HOLDEM_E_MALFORMED;
        if (amount > p->stack)
            return HOLDEM_E_OVER_STACK;
        if (amount < S->offer_amount)
            return HOLDEM_E_BELOW_MIN;
        if (amount > S->offer_amount)
            return HOLDEM_E_NOT_ALLOWED;
        accept = 1;
        break;
    default:
        return HOLDEM_E_NOT_ALLOWED;
    }
    table_spend_time(t, seat, kind == HOLDEM_TIMEOUT, elapsed_ms);
    if (accept) {
        table_post_straddle(t, seat);
        if (table_offer_next(t))
            return HOLDEM_OK;
    } else if (t->cb != NULL) {
        holdem_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = HOLDEM_EV_ACTION;
        ev.seat = seat;
        ev.detail = HOLDEM_CHECK;
        ev.to = p->bet;
        ev.all_in = p->all_in;
        t->cb(t->ud, &ev);
    }
    table_deal_and_open(t);
    return HOLDEM_OK;
}

/* Whether deck[0..ncards) is a usable deck for a hand of `players`: distinct valid cards. */
static int table_deck_ok(const uint8_t *deck, int ncards, int players)
{
    if (deck == NULL || ncards < 2 * players + 8 || ncards > HOLDEM_CARDS)
        return 0;
    uint64_t seen = 0;
    for (int i = 0; i < ncards; i++) {
        if (deck[i] >= HOLDEM_CARDS || (seen & (1ull << deck[i])))
            return 0;
        seen |= 1ull << deck[i];
    }
    return 1;
}

static int table_popcount(uint32_t m)
{
    int c = 0;
    for (; m != 0; m &= m - 1)
        c++;
    return c;
}

/*
 * Starts a validated hand: the seats of `dealt` are dealt in; button (any seat: empty or not
 * dealt in is a dead button), sb (a dealt-in seat, or -1: no small blind posted), bb (a
 * dealt-in seat); pos_sb is the small blind holdem_table_last_positions() reports. Posts the
 * antes from the button's left, then the blinds (and the big-blind ante), then straddles, then
 * deals and opens the betting after the big blind.
 */
static int table_begin(holdem_table_t *t, int button, int sb, int bb, uint32_t dealt, int pos_sb,
                       const uint8_t *deck, int ncards)
{
    table_state_t *S = &t->s;
    int n = S->cfg.seats;
    int players = table_popcount(dealt);
    S->in_hand = 1;
    S->hand_no++;
    S->button = button;
    S->street = STREET_PREFLOP;
    S->dead = 0;
    S->nboard = 0;
    S->last_aggressor = -1;
    S->pk_completion = S->pk_allin_run = 0;
    S->pk_allin_n = 0;
    memcpy(S->deck, deck, (size_t)ncards);
    S->deck_len = ncards;
    S->deck_pos = 0;
    for (int s = 0; s < n; s++) {
        table_seat_t *p = &S->seat[s];
        p->in_hand = (uint8_t)((dealt >> s) & 1u);
        p->folded = p->all_in = p->acted = 0;
        p->bet = p->total = p->faced = 0;
        p->pk_acted = 0;
        p->start_stack = p->stack;
    }
    table_emit_simple(t, HOLDEM_EV_HAND_START, button, 0, (int64_t)S->hand_no);

    S->sb = sb;
    S->bb = bb;
    S->pos_sb = pos_sb;
    S->pos_dealt = dealt;
    S->last_blind = bb;
    S->chain_seat = bb;
    S->straddles = 0;
    S->offering = 0;
    if (S->cfg.ante > 0)
        for (int k = 1; k <= n; k++) {
            int s = (button + k) % n;
            if (S->seat[s].in_hand)
                table_post(t, s, S->cfg.ante, HOLDEM_POST_ANTE);
        }
    /* PokerKit posts every ante, the big-blind ante included, before the blinds. */
    int bb_ante_first = S->cfg.pokerkit_rules && S->cfg.big_blind_ante > 0;
    if (bb_ante_first)
        table_post(t, bb, S->cfg.big_blind_ante, HOLDEM_POST_BB_ANTE);
    if (sb >= 0)
        table_post(t, sb, S->cfg.small_blind, HOLDEM_POST_SMALL_BLIND);
    table_post(t, bb, S->cfg.big_blind, HOLDEM_POST_BIG_BLIND);
    /* The big blind has priority over the big-blind ante when the stack is short (TDA). */
    if (S->cfg.big_blind_ante > 0 && !bb_ante_first && !S->seat[bb].all_in)
        table_post(t, bb, S->cfg.big_blind_ante, HOLDEM_POST_BB_ANTE);
    /* Callers call the full big blind even when it is short (TDA); PokerKit: what it posted. */
    S->high = S->cfg.big_blind;
    if (S->cfg.pokerkit_rules)
        S->high = sb >= 0 && S->seat[sb].bet > S->seat[bb].bet ? S->seat[sb].bet : S->seat[bb].bet;
    S->last_raise = S->cfg.pokerkit_rules ? S->cfg.min_bet : S->cfg.big_blind;
    /* PokerKit opens after the last seat with the highest blind: heads-up with blinds that came
     * out equal, that is the button (the small blind), so the big blind acts first. */
    if (S->cfg.pokerkit_rules && players == 2 && sb >= 0 && S->seat[sb].bet >= S->seat[bb].bet)
        S->last_blind = sb;
    if (S->cfg.straddle_offers) {
        if (table_offer_next(t))
            return HOLDEM_OK; /* the deal waits for the answers */
    } else {
        int s;
        while ((s = table_next_straddler(t)) >= 0 && S->seat[s].straddle_opt)
            table_post_straddle(t, s);
    }
    table_deal_and_open(t);
    return HOLDEM_OK;
}

int holdem_table_start_hand(holdem_table_t *t, int button, const uint8_t *deck, int ncards)
{
    table_state_t *S = &t->s;
    int n = S->cfg.seats;
    if (S->in_hand)
        return HOLDEM_E_NOT_ALLOWED;
    int players = 0;
    uint32_t dealt = 0;
    for (int s = 0; s < n; s++)
        if (table_eligible(t, s)) {
            players++;
            dealt |= 1u << s;
        }
    if (players < 2)
        return HOLDEM_E_NOT_ALLOWED;
    if (!table_deck_ok(deck, ncards, players))
        return HOLDEM_E_MALFORMED;
    if (button >= 0) {
        if (button >= n || !table_eligible(t, button))
            return HOLDEM_E_MALFORMED;
    } else {
        button = -1;
        for (int i = 1; i <= n; i++) {
            int s = ((S->button < 0 ? n - 1 : S->button) + i) % n;
            if (table_eligible(t, s)) {
                button = s;
                break;
            }
        }
    }
    /* The next dealt-in seats after the button; heads-up the button posts the small blind. */
    int sb = button, bb = -1;
    for (int k = 1; k <= n && bb < 0; k++) {
        int s = (button + k) % n;
        if (!((dealt >> s) & 1u))
            continue;
        if (players > 2 && sb == button)
            sb = s;
        else
            bb = s;
    }
    return table_begin(t, button, sb, bb, dealt, sb, deck, ncards);
}

/* Clockwise distance from seat a to seat b (0..n-1). */
static int table_dist(int n, int a, int b)
{
    return ((b - a) % n + n) % n;
}

int holdem_table_start_hand_at(holdem_table_t *t, const holdem_positions_t *pos,
                               const uint8_t *deck, int ncards)
{
    table_state_t *S = &t->s;
    int n = S->cfg.seats;
    if (S->in_hand)
        return HOLDEM_E_NOT_ALLOWED;
    if (pos == NULL)
        return HOLDEM_E_MALFORMED;
    uint32_t eligible = 0;
    for (int s = 0; s < n; s++)
        if (table_eligible(t, s))
            eligible |= 1u << s;
    uint32_t dealt = pos->dealt_mask;
    if (dealt == 0) {
        if (table_popcount(eligible) < 2)
            return HOLDEM_E_NOT_ALLOWED;
        dealt = eligible;
    } else if ((dealt & ~eligible) != 0 || table_popcount(dealt) < 2) {
        return HOLDEM_E_MALFORMED; /* a seat that cannot be dealt in, or fewer than two */
    }
    int players = table_popcount(dealt);
    if (!table_deck_ok(deck, ncards, players))
        return HOLDEM_E_MALFORMED;
    int button = pos->button, sb = pos->small_blind, bb = pos->big_blind;
    if (button < 0 || button >= n || sb < -1 || sb >= n || bb < 0 || bb >= n ||
        !((dealt >> bb) & 1u) || sb == bb)
        return HOLDEM_E_MALFORMED;
    if (players == 2) {
        /* Heads-up (TDA): the player who is not the big blind has the button and posts the
         * small blind, whatever the button and small blind given (the big-blind-forward rule
         * gives a button on the big blind, or a dead one, or a dead small blind). The small
         * blind given is the one reported: the rule goes on from the seats it computed (a
         * player waiting for the button is passed by the next hand's button). */
        int other = -1;
        for (int s = 0; s < n; s++)
            if (((dealt >> s) & 1u) && s != bb)
                other = s;
        return table_begin(t, other, other, bb, dealt, sb, deck, ncards);
    }
    /* Three or more: button, small blind, big blind clockwise; between the button and the big
     * blind the only seat dealt in is the small blind's (a player seated there waits for the
     * button: leave him out of dealt_mask). */
    if (button == bb)
        return HOLDEM_E_MALFORMED;
    int to_bb = table_dist(n, button, bb);
    if (sb >= 0 && (sb == button || table_dist(n, button, sb) >= to_bb))
        return HOLDEM_E_MALFORMED;
    for (int k = 1; k < to_bb; k++) {
        int s = (button + k) % n;
        if (((dealt >> s) & 1u) && s != sb)
            return HOLDEM_E_MALFORMED;
    }
    int live_sb = sb >= 0 && ((dealt >> sb) & 1u) ? sb : -1;
    return table_begin(t, button, live_sb, bb, dealt, sb, deck, ncards);
}

int holdem_table_last_positions(const holdem_table_t *t, holdem_positions_t *out)
{
    if (t->s.hand_no == 0)
        return HOLDEM_E_NOT_ALLOWED;
    out->button = t->s.button;
    out->small_blind = t->s.pos_sb;
    out->big_blind = t->s.bb;
    out->dealt_mask = t->s.pos_dealt;
    return HOLDEM_OK;
}

/*
 * Validates an action completely, resolving TIMEOUT and ALL_IN into a plain kind and amount.
 * Returns HOLDEM_OK with *kind and *to (the street total after the action) filled in.
 */
static int table_check_action(const holdem_table_t *t, int seat, holdem_action_kind_t *kind,
                              int64_t *to)
{
    const table_state_t *S = &t->s;
    if (!table_seat_ok(t, seat) || (unsigned)*kind > HOLDEM_TIMEOUT)
        return HOLDEM_E_MALFORMED;
    if (!S->in_hand || S->to_act < 0)
        return HOLDEM_E_NOT_ALLOWED;
    if (seat != S->to_act)
        return HOLDEM_E_OUT_OF_TURN;
    const table_seat_t *p = &S->seat[seat];
    int64_t max_to = p->bet + p->stack;
    if (*kind == HOLDEM_TIMEOUT)
        *kind = p->bet >= S->high ? HOLDEM_CHECK : HOLDEM_FOLD;
    if (*kind == HOLDEM_ALL_IN) {
        *to = max_to;
        if (max_to <= S->high) {
            *kind = HOLDEM_CALL;
        } else {
            *kind = S->high == 0 ? HOLDEM_BET : HOLDEM_RAISE;
            if (!table_may_raise(t, seat))
                return HOLDEM_E_NOT_ALLOWED;
            return HOLDEM_OK;
        }
    }
    switch (*kind) {
    case HOLDEM_FOLD:
        *to = p->bet;
        return HOLDEM_OK;
    case HOLDEM_CHECK:
        if (p->bet < S->high)
            return HOLDEM_E_NOT_ALLOWED;
        *to = p->bet;
        return HOLDEM_OK;
    case HOLDEM_CALL:
        if (p->bet >= S->high)
            return HOLDEM_E_NOT_ALLOWED;
        *to = S->high < max_to ? S->high : max_to;
        return HOLDEM_OK;
    case HOLDEM_BET:
    case HOLDEM_RAISE:
        if (*to < 0)
            return HOLDEM_E_MALFORMED;
        if ((*kind == HOLDEM_BET) != (S->high == 0))
            return HOLDEM_E_NOT_ALLOWED;
        if (!table_may_raise(t, seat))
            return HOLDEM_E_NOT_ALLOWED;
        if (*to > max_to)
            return HOLDEM_E_OVER_STACK;
        if (*to <= S->high)
            return HOLDEM_E_BELOW_MIN;
        int64_t min_to = S->high == 0 ? S->cfg.min_bet : S->high + S->last_raise;
        if (*to < min_to && *to != max_to)
            return HOLDEM_E_BELOW_MIN;
        return HOLDEM_OK;
    default:
        return HOLDEM_E_MALFORMED;
    }
}

int holdem_table_act(holdem_table_t *t, int seat, holdem_action_kind_t kind, int64_t amount,
                     int64_t elapsed_ms)
{
    holdem_action_kind_t asked = kind;
    int64_t to = amount;
    if (elapsed_ms < 0)
        return HOLDEM_E_MALFORMED;
    if (t->s.in_hand && t->s.offering)
        return table_answer_offer(t, seat, kind, amount, elapsed_ms);
    int rc = table_check_action(t, seat, &kind, &to);
    if (rc != HOLDEM_OK)
        return rc;
    table_state_t *S = &t->s;
    table_seat_t *p = &S->seat[seat];

    table_spend_time(t, seat, asked == HOLDEM_TIMEOUT, elapsed_ms);

    int64_t put = 0;
    if (kind == HOLDEM_FOLD) {
        p->folded = 1;
    } else if (kind == HOLDEM_CALL || kind == HOLDEM_BET || kind == HOLDEM_RAISE) {
        int64_t old_high = S->high;
        put = table_put(t, seat, to - p->bet, 0);
        if (kind != HOLDEM_CALL) {
            int64_t inc = p->bet - old_high;
            if (inc >= S->last_raise)
                S->last_raise = inc; /* a full bet or raise */
            S->high = p->bet;
            S->last_aggressor = seat;
            if (inc >= S->pk_completion) /* PokerKit reopens the betting for everyone */
                for (int s = 0; s < S->cfg.seats; s++)
                    S->seat[s].pk_acted = 0;
            if (inc > S->pk_completion)
                S->pk_completion = inc;
            if (p->all_in) {
                S->pk_allin_n++;
                S->pk_allin_run += inc;
            } else {
                S->pk_allin_n = 0;
                S->pk_allin_run = 0;
            }
        }
    }
    p->acted = 1;
    p->pk_acted = 1;
    p->faced = S->high;
    if (t->cb != NULL) {
        holdem_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = HOLDEM_EV_ACTION;
        ev.seat = seat;
        ev.detail = kind;
        ev.amount = put;
        ev.to = p->bet;
        ev.all_in = p->all_in;
        t->cb(t->ud, &ev);
    }
    table_advance(t, seat);
    return HOLDEM_OK;
}

bool holdem_table_in_hand(const holdem_table_t *t)
{
    return t->s.in_hand != 0;
}

int holdem_table_to_act(const holdem_table_t *t)
{
    return t->s.in_hand ? t->s.to_act : -1;
}

int64_t holdem_table_time_allowed_ms(const holdem_table_t *t)
{
    int s = holdem_table_to_act(t);
    return s < 0 ? -1 : t->s.cfg.action_ms + t->s.seat[s].bank_ms;
}

int64_t holdem_table_stack(const holdem_table_t *t, int seat)
{
    if (!table_seat_ok(t, seat) || t->s.seat[seat].state == SEAT_EMPTY)
        return -1;
    return t->s.seat[seat].stack;
}

int64_t holdem_table_pot_total(const holdem_table_t *t)
{
    if (!t->s.in_hand)
        return 0;
    int64_t sum = t->s.dead;
    for (int s = 0; s < t->s.cfg.seats; s++)
        if (t->s.seat[s].in_hand)
            sum += t->s.seat[s].total;
    return sum;
}

int64_t holdem_table_rake_total(const holdem_table_t *t)
{
    return t->s.rake_total;
}

int holdem_table_button(const holdem_table_t *t)
{
    return t->s.button;
}

int holdem_table_board(const holdem_table_t *t, uint8_t *cards)
{
    memcpy(cards, t->s.board, (size_t)t->s.nboard);
    return t->s.nboard;
}

int holdem_table_settlement(const holdem_table_t *t, holdem_settlement_t *out)
{
    if (!t->s.has_settlement)
        return HOLDEM_E_NOT_ALLOWED;
    *out = t->s.settle;
    return HOLDEM_OK;
}
