/*
 * zjh -- Zha Jin Hua ranking and the hand state machine (see zjh.h and
 * docs/rules/zhajinhua.md).
 *
 * All table state lives in one flat struct without pointers (besides the callback), so a clone
 * is a memcpy and "state unchanged" is a memcmp. Every input is checked completely before
 * anything is written or emitted.
 */
#include "zjh.h"

#include <stdlib.h>
#include <string.h>

#include "cardtext.h"
#include "xmalloc.h"

/* Stacks and units above this are refused, so that no sum or doubling can overflow. */
#define ZJH_MAX_CHIPS (INT64_MAX / 64)

/* ---- cards ------------------------------------------------------------------------------ */

/* The text form is the shared one (common/cardtext.h); these keep zjh.h's -1 on failure. */

bool zjh_card_valid(uint8_t code)
{
    return cardtext_valid(code);
}

int zjh_card_parse(const char *s)
{
    int c = cardtext_parse_card(s);
    return c < 0 ? -1 : c;
}

int zjh_cards_parse(const char *s, uint8_t *out, int max)
{
    int n = cardtext_parse(s, out, max);
    return n < 0 ? -1 : n;
}

int zjh_cards_format(const uint8_t *cards, int n, char *buf, size_t len)
{
    int r = cardtext_format(cards, n, buf, len);
    return r < 0 ? -1 : r;
}

/* ---- hand ranking ----------------------------------------------------------------------- */

static int32_t zjh_value(zjh_category_t cat, int a, int b, int c)
{
    return (int32_t)cat * 1000000 + a * 10000 + b * 100 + c;
}

/*
 * Ranks three cards (docs/rules/zhajinhua.md, "Hand ranking"): sorts the ranks high to low,
 * then tests the categories from the top. Only a 2-3-5 of three different suits gets
 * beats_trips.
 */
zjh_rank_t zjh_rank(const uint8_t cards[ZJH_HAND_CARDS])
{
    zjh_rank_t out = {ZJH_CAT_INVALID, 0, false};
    if (cards == NULL)
        return out;
    for (int i = 0; i < 3; i++) {
        if (!zjh_card_valid(cards[i]))
            return out;
        for (int j = 0; j < i; j++)
            if (cards[i] == cards[j])
                return out;
    }
    int r[3] = {ZJH_CARD_RANK(cards[0]), ZJH_CARD_RANK(cards[1]), ZJH_CARD_RANK(cards[2])};
    for (int i = 1; i < 3; i++)
        for (int j = i; j > 0 && r[j] > r[j - 1]; j--) {
            int x = r[j];
            r[j] = r[j - 1];
            r[j - 1] = x;
        }
    int s0 = ZJH_CARD_SUIT(cards[0]), s1 = ZJH_CARD_SUIT(cards[1]), s2 = ZJH_CARD_SUIT(cards[2]);
    bool flush = s0 == s1 && s1 == s2;
    bool run = r[0] == r[1] + 1 && r[1] == r[2] + 1;
    bool wheel = r[0] == 14 && r[1] == 3 && r[2] == 2; /* A-2-3: the ace counts 1 */
    if (r[0] == r[2]) {
        out.category = ZJH_CAT_THREE_OF_A_KIND;
        out.value = zjh_value(out.category, r[0], r[0], r[0]);
    } else if (run || wheel) {
        out.category = flush ? ZJH_CAT_STRAIGHT_FLUSH : ZJH_CAT_STRAIGHT;
        out.value =
            wheel ? zjh_value(out.category, 3, 2, 1) : zjh_value(out.category, r[0], r[1], r[2]);
    } else if (flush) {
        out.category = ZJH_CAT_FLUSH;
        out.value = zjh_value(out.category, r[0], r[1], r[2]);
    } else if (r[0] == r[1] || r[1] == r[2]) {
        int pair = r[1], kicker = r[0] == r[1] ? r[2] : r[0];
        out.category = ZJH_CAT_PAIR;
        out.value = zjh_value(out.category, pair, pair, kicker);
    } else {
        out.category = ZJH_CAT_HIGH_CARD;
        out.value = zjh_value(out.category, r[0], r[1], r[2]);
        out.beats_trips = r[0] == 5 && r[1] == 3 && r[2] == 2 && s0 != s1 && s1 != s2 && s0 != s2;
    }
    return out;
}

int zjh_rank_compare(zjh_rank_t a, zjh_rank_t b)
{
    if (a.beats_trips && b.category == ZJH_CAT_THREE_OF_A_KIND)
        return 1;
    if (b.beats_trips && a.category == ZJH_CAT_THREE_OF_A_KIND)
        return -1;
    return (a.value > b.value) - (a.value < b.value);
}

int zjh_compare(const uint8_t a[ZJH_HAND_CARDS], const uint8_t b[ZJH_HAND_CARDS])
{
    return zjh_rank_compare(zjh_rank(a), zjh_rank(b));
}

const char *zjh_category_name(zjh_category_t cat)
{
    switch (cat) {
    case ZJH_CAT_THREE_OF_A_KIND:
        return "three_of_a_kind";
    case ZJH_CAT_STRAIGHT_FLUSH:
        return "straight_flush";
    case ZJH_CAT_FLUSH:
        return "flush";
    case ZJH_CAT_STRAIGHT:
        return "straight";
    case ZJH_CAT_PAIR:
        return "pair";
    case ZJH_CAT_HIGH_CARD:
        return "high_card";
    default:
        return "invalid";
    }
}

/* ---- the table -------------------------------------------------------------------------- */

const char *zjh_err_name(int err)
{
    switch (err) {
    case ZJH_OK:
        return "ok";
    case ZJH_E_BAD_ARGS:
        return "bad arguments";
    case ZJH_E_NO_HAND:
        return "no hand";
    case ZJH_E_OUT_OF_TURN:
        return "out of turn";
    case ZJH_E_RAISE_OVER_CAP:
        return "raise over cap";
    case ZJH_E_RAISE_NOT_HIGHER:
        return "raise not higher";
    case ZJH_E_COMPARE_TOO_EARLY:
        return "compare too early";
    case ZJH_E_COMPARE_TARGET:
        return "bad compare target";
    case ZJH_E_ALREADY_LOOKED:
        return "already looked";
    case ZJH_E_OVER_STACK:
        return "more than stack";
    case ZJH_E_NOT_LIVE:
        return "not in the hand";
    case ZJH_E_IN_HAND:
        return "hand in progress";
    default:
        return "unknown error";
    }
}

typedef struct {
    int64_t stack;
    int64_t put_in;
    int64_t won;
    uint8_t dealt;
    uint8_t looked;
    uint8_t folded; /* out: folded, timed out, lost a compare or an all-in call */
    uint8_t all_in;
    uint8_t cards[ZJH_HAND_CARDS];
    uint8_t pad_;
} table_seat_t;

typedef struct {
    zjh_config_t cfg;
    table_seat_t seat[ZJH_MAX_SEATS];
    zjh_settlement_t settle;
    int64_t unit;
    int64_t rake_total;
    uint64_t hand_no;
    int in_hand;
    int has_settlement;
    int dealer;
    int to_act;
    int round;
    int pad_;
} table_state_t;

struct zjh_table {
    table_state_t s;
    zjh_event_cb cb;
    void *ud;
};

static void table_ev_init(zjh_event_t *ev, zjh_event_kind_t kind, int seat)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    ev->seat = seat;
    ev->target = -1;
    ev->loser = -1;
}

static void table_emit(zjh_table_t *t, const zjh_event_t *ev)
{
    if (t->cb != NULL)
        t->cb(t->ud, ev);
}

static void table_emit_simple(zjh_table_t *t, zjh_event_kind_t kind, int seat, int detail,
                              int64_t amount)
{
    if (t->cb == NULL)
        return;
    zjh_event_t ev;
    table_ev_init(&ev, kind, seat);
    ev.detail = detail;
    ev.amount = amount;
    t->cb(t->ud, &ev);
}

static int table_config_ok(const zjh_config_t *c)
{
    return c->seats >= 2 && c->seats <= ZJH_MAX_SEATS && c->ante > 0 && c->max_unit >= c->ante &&
           c->max_unit <= ZJH_MAX_CHIPS && c->max_rounds >= 2 && c->rake_basis_points >= 0 &&
           c->rake_basis_points <= 10000 && c->rake_cap >= 0 && c->action_ms >= 0;
}

zjh_table_t *zjh_table_create(const zjh_config_t *cfg, zjh_event_cb cb, void *ud, int *err)
{
    if (cfg == NULL || !table_config_ok(cfg)) {
        if (err != NULL)
            *err = ZJH_E_BAD_ARGS;
        return NULL;
    }
    zjh_table_t *t = xcalloc(1, sizeof *t);
    /* Field by field, so that the padding of the copy stays zero (same_state is a memcmp). */
    t->s.cfg.seats = cfg->seats;
    t->s.cfg.ante = cfg->ante;
    t->s.cfg.max_unit = cfg->max_unit;
    t->s.cfg.max_rounds = cfg->max_rounds;
    t->s.cfg.rake_basis_points = cfg->rake_basis_points;
    t->s.cfg.rake_cap = cfg->rake_cap;
    t->s.cfg.action_ms = cfg->action_ms;
    t->s.dealer = -1;
    t->s.to_act = -1;
    t->cb = cb;
    t->ud = ud;
    if (err != NULL)
        *err = ZJH_OK;
    return t;
}

void zjh_table_destroy(zjh_table_t *t)
{
    free(t);
}

zjh_table_t *zjh_table_clone(const zjh_table_t *t)
{
    zjh_table_t *c = xmalloc(sizeof *c);
    memcpy(c, t, sizeof *c);
    return c;
}

int zjh_table_same_state(const zjh_table_t *a, const zjh_table_t *b)
{
    return memcmp(&a->s, &b->s, sizeof a->s) == 0;
}

static bool table_live(const zjh_table_t *t, int seat)
{
    return t->s.seat[seat].dealt && !t->s.seat[seat].folded;
}

static int table_live_count(const zjh_table_t *t)
{
    int n = 0;
    for (int i = 0; i < t->s.cfg.seats; i++)
        n += table_live(t, i);
    return n;
}

/* The seat's place in the turn order: 0 left of the dealer ... seats - 1 the dealer. */
static int table_offset(const zjh_table_t *t, int seat)
{
    int n = t->s.cfg.seats;
    return (seat - t->s.dealer - 1 + 2 * n) % n;
}

/* The next live seat clockwise after seat (never seat itself), or -1. */
static int table_next_live(const zjh_table_t *t, int seat)
{
    int n = t->s.cfg.seats;
    for (int k = 1; k < n; k++) {
        int i = (seat + k) % n;
        if (table_live(t, i))
            return i;
    }
    return -1;
}

/* A call or compare for this seat: the unit, doubled once the seat has looked. */
static int64_t table_call_cost(const zjh_table_t *t, int seat)
{
    return t->s.unit * (t->s.seat[seat].looked ? 2 : 1);
}

static void table_pay(zjh_table_t *t, int seat, int64_t chips)
{
    table_seat_t *p = &t->s.seat[seat];
    p->stack -= chips;
    p->put_in += chips;
    if (p->stack == 0)
        p->all_in = 1;
}

void zjh_table_turn(const zjh_table_t *t, zjh_turn_t *out)
{
    memset(out, 0, sizeof *out);
    out->seat = -1;
    if (!t->s.in_hand || t->s.to_act < 0)
        return;
    int seat = t->s.to_act;
    const table_seat_t *p = &t->s.seat[seat];
    int64_t mult = p->looked ? 2 : 1;
    out->seat = seat;
    out->cost = table_call_cost(t, seat);
    if (p->stack < out->cost) {
        out->cost = p->stack;
        out->all_in = true;
    }
    int64_t hi = p->stack / mult;
    if (hi > t->s.cfg.max_unit)
        hi = t->s.cfg.max_unit;
    if (t->s.unit + 1 <= hi) {
        out->min_unit = t->s.unit + 1;
        out->max_unit = hi;
    }
    out->can_compare = t->s.round >= 2;
}

static void table_emit_turn(zjh_table_t *t)
{
    if (t->cb == NULL)
        return;
    zjh_turn_t turn;
    zjh_table_turn(t, &turn);
    zjh_event_t ev;
    table_ev_init(&ev, ZJH_EV_TURN, turn.seat);
    ev.amount = turn.cost;
    ev.all_in = turn.all_in;
    ev.unit = t->s.unit;
    ev.to = turn.min_unit;
    ev.max = turn.max_unit;
    ev.detail = turn.can_compare;
    t->cb(t->ud, &ev);
}

/*
 * Ends the hand (docs/rules/zhajinhua.md, "Split pots and rake"): takes the rake from the
 * whole pot, splits the rest evenly between the k winners (the odd chips to the first of them
 * left of the dealer), records the settlement and emits the awards and the hand's end.
 */
static void table_finish(zjh_table_t *t, const int *winners, int k)
{
    const zjh_config_t *c = &t->s.cfg;
    int64_t pot = 0;
    for (int i = 0; i < c->seats; i++)
        pot += t->s.seat[i].put_in;
    int64_t rake = 0;
    if (c->rake_basis_points > 0) {
        rake = pot / 10000 * c->rake_basis_points + pot % 10000 * c->rake_basis_points / 10000;
        if (c->rake_cap > 0 && rake > c->rake_cap)
            rake = c->rake_cap;
    }
    if (rake > 0)
        table_emit_simple(t, ZJH_EV_RAKE, -1, 0, rake);
    int64_t share = (pot - rake) / k, odd = (pot - rake) % k;
    int first = winners[0];
    for (int w = 1; w < k; w++)
        if (table_offset(t, winners[w]) < table_offset(t, first))
            first = winners[w];
    for (int w = 0; w < k; w++) {
        int seat = winners[w];
        int64_t amount = share + (seat == first ? odd : 0);
        t->s.seat[seat].won += amount;
        t->s.seat[seat].stack += amount;
        table_emit_simple(t, ZJH_EV_AWARD, seat, 0, amount);
    }
    zjh_settlement_t *st = &t->s.settle;
    st->hand = t->s.hand_no;
    for (int i = 0; i < ZJH_MAX_SEATS; i++) {
        const table_seat_t *p = &t->s.seat[i];
        st->dealt[i] = p->dealt;
        st->delta[i] = p->won - p->put_in;
    }
    st->rake = rake;
    t->s.rake_total += rake;
    t->s.has_settlement = 1;
    t->s.in_hand = 0;
    t->s.to_act = -1;
    table_emit_simple(t, ZJH_EV_HAND_END, -1, 0, (int64_t)t->s.hand_no);
}

/*
 * The forced showdown after the last betting round (docs/rules/zhajinhua.md, "Showdown"):
 * every live hand is shown; the winners are the hands that no other live hand beats in
 * zjh_compare(); if there are none (a 2-3-5 beating three of a kind that loses to a third
 * hand), the best hands in the normal order win.
 */
static void table_showdown(zjh_table_t *t)
{
    int n = t->s.cfg.seats;
    zjh_rank_t rank[ZJH_MAX_SEATS];
    int live[ZJH_MAX_SEATS], nl = 0;
    for (int k = 0; k < n; k++) {
        int seat = (t->s.dealer + 1 + k) % n;
        if (!table_live(t, seat))
            continue;
        live[nl++] = seat;
        rank[seat] = zjh_rank(t->s.seat[seat].cards);
        if (t->cb != NULL) {
            zjh_event_t ev;
            table_ev_init(&ev, ZJH_EV_SHOWDOWN, seat);
            memcpy(ev.cards[0], t->s.seat[seat].cards, ZJH_HAND_CARDS);
            ev.value[0] = rank[seat].value;
            t->cb(t->ud, &ev);
        }
    }
    int winners[ZJH_MAX_SEATS], k = 0;
    for (int i = 0; i < nl; i++) {
        bool unbeaten = true;
        for (int j = 0; j < nl && unbeaten; j++)
            if (j != i && zjh_rank_compare(rank[live[i]], rank[live[j]]) < 0)
                unbeaten = false;
        if (unbeaten)
            winners[k++] = live[i];
    }
    if (k == 0) {
        int32_t best = 0;
        for (int i = 0; i < nl; i++)
            if (rank[live[i]].value > best)
                best = rank[live[i]].value;
        for (int i = 0; i < nl; i++)
            if (rank[live[i]].value == best)
                winners[k++] = live[i];
    }
    table_finish(t, winners, k);
}

/*
 * Passes the turn on after seat acted (docs/rules/zhajinhua.md, "Betting rounds"). With one
 * live seat left it wins. Otherwise the turn goes to the next live seat clockwise; when that
 * seat sits at or before seat in the order that starts left of the dealer, the turn has gone
 * round: a new betting round begins, or, after the last one, the showdown.
 */
static void table_advance(zjh_table_t *t, int seat)
{
    if (table_live_count(t) == 1) {
        int winner = table_next_live(t, seat);
        if (table_live(t, seat))
            winner = seat;
        table_finish(t, &winner, 1);
        return;
    }
    int next = table_next_live(t, seat);
    if (table_offset(t, next) <= table_offset(t, seat)) {
        if (t->s.round >= t->s.cfg.max_rounds) {
            t->s.to_act = -1;
            table_showdown(t);
            return;
        }
        t->s.round++;
        table_emit_simple(t, ZJH_EV_ROUND, -1, t->s.round, 0);
    }
    t->s.to_act = next;
    table_emit_turn(t);
}

/* Emits the compare of asker and target, whose loser is loser. */
static void table_emit_compare(zjh_table_t *t, int asker, int target, int loser, int64_t paid,
                               bool all_in)
{
    if (t->cb == NULL)
        return;
    zjh_event_t ev;
    table_ev_init(&ev, ZJH_EV_COMPARE, asker);
    ev.target = target;
    ev.loser = loser;
    ev.amount = paid;
    ev.all_in = all_in;
    ev.unit = t->s.unit;
    memcpy(ev.cards[0], t->s.seat[asker].cards, ZJH_HAND_CARDS);
    memcpy(ev.cards[1], t->s.seat[target].cards, ZJH_HAND_CARDS);
    ev.value[0] = zjh_rank(t->s.seat[asker].cards).value;
    ev.value[1] = zjh_rank(t->s.seat[target].cards).value;
    t->cb(t->ud, &ev);
}

/*
 * A call from a seat whose stack is short of the call (docs/rules/zhajinhua.md, "All-in"):
 * the whole stack goes in and the seat is compared with every other live seat, clockwise
 * from its left, until one is not beaten. Beating them all wins the whole pot at once;
 * otherwise the seat is out and the hand goes on.
 */
static void table_all_in_call(zjh_table_t *t, int seat)
{
    table_seat_t *p = &t->s.seat[seat];
    int64_t paid = p->stack;
    table_pay(t, seat, paid);
    p->all_in = 1;
    if (t->cb != NULL) {
        zjh_event_t ev;
        table_ev_init(&ev, ZJH_EV_CALL, seat);
        ev.amount = paid;
        ev.unit = t->s.unit;
        ev.all_in = true;
        t->cb(t->ud, &ev);
    }
    int n = t->s.cfg.seats;
    bool won = true;
    for (int k = 1; k < n && won; k++) {
        int o = (seat + k) % n;
        if (!table_live(t, o))
            continue;
        won = zjh_compare(p->cards, t->s.seat[o].cards) > 0;
        table_emit_compare(t, seat, o, won ? o : seat, 0, true);
    }
    table_emit_simple(t, ZJH_EV_ALL_IN, seat, won, paid);
    if (won) {
        for (int i = 0; i < n; i++)
            if (i != seat && table_live(t, i))
                t->s.seat[i].folded = 1;
        table_finish(t, &seat, 1);
        return;
    }
    p->folded = 1;
    table_advance(t, seat);
}

/* Checks a seat's input against the rules; ZJH_OK or the refusal. Writes nothing. */
static int table_check(const zjh_table_t *t, int seat, zjh_action_t action, int64_t arg)
{
    if (seat < 0 || seat >= t->s.cfg.seats || (int)action < ZJH_FOLD || (int)action > ZJH_TIMEOUT)
        return ZJH_E_BAD_ARGS;
    if (!t->s.in_hand)
        return ZJH_E_NO_HAND;
    const table_seat_t *p = &t->s.seat[seat];
    if (action == ZJH_LOOK) {
        if (!table_live(t, seat))
            return ZJH_E_NOT_LIVE;
        return p->looked ? ZJH_E_ALREADY_LOOKED : ZJH_OK;
    }
    if (seat != t->s.to_act)
        return ZJH_E_OUT_OF_TURN;
    if (action == ZJH_RAISE) {
        if (arg <= t->s.unit)
            return ZJH_E_RAISE_NOT_HIGHER;
        if (arg > t->s.cfg.max_unit)
            return ZJH_E_RAISE_OVER_CAP;
        if (arg * (p->looked ? 2 : 1) > p->stack)
            return ZJH_E_OVER_STACK;
    } else if (action == ZJH_COMPARE) {
        if (t->s.round < 2)
            return ZJH_E_COMPARE_TOO_EARLY;
        if (arg < 0 || arg >= t->s.cfg.seats || arg == seat || !table_live(t, (int)arg))
            return ZJH_E_COMPARE_TARGET;
    }
    return ZJH_OK;
}

int zjh_table_act(zjh_table_t *t, int seat, zjh_action_t action, int64_t arg)
{
    if (t == NULL)
        return ZJH_E_BAD_ARGS;
    int err = table_check(t, seat, action, arg);
    if (err != ZJH_OK)
        return err;
    table_seat_t *p = &t->s.seat[seat];
    zjh_event_t ev;
    switch (action) {
    case ZJH_LOOK:
        p->looked = 1;
        if (t->cb != NULL) {
            table_ev_init(&ev, ZJH_EV_LOOK, seat);
            memcpy(ev.cards[0], p->cards, ZJH_HAND_CARDS);
            t->cb(t->ud, &ev);
        }
        if (seat == t->s.to_act)
            table_emit_turn(t);
        return ZJH_OK;
    case ZJH_FOLD:
    case ZJH_TIMEOUT:
        p->folded = 1;
        table_ev_init(&ev, ZJH_EV_FOLD, seat);
        ev.timed_out = action == ZJH_TIMEOUT;
        table_emit(t, &ev);
        table_advance(t, seat);
        return ZJH_OK;
    case ZJH_CALL: {
        int64_t cost = table_call_cost(t, seat);
        if (p->stack < cost) {
            table_all_in_call(t, seat);
            return ZJH_OK;
        }
        table_pay(t, seat, cost);
        table_ev_init(&ev, ZJH_EV_CALL, seat);
        ev.amount = cost;
        ev.unit = t->s.unit;
        table_emit(t, &ev);
        table_advance(t, seat);
        return ZJH_OK;
    }
    case ZJH_RAISE: {
        int64_t cost = arg * (p->looked ? 2 : 1);
        table_pay(t, seat, cost);
        t->s.unit = arg;
        table_ev_init(&ev, ZJH_EV_RAISE, seat);
        ev.amount = cost;
        ev.unit = arg;
        table_emit(t, &ev);
        table_advance(t, seat);
        return ZJH_OK;
    }
    case ZJH_COMPARE: {
        /* docs/rules/zhajinhua.md, "Compare": the lower hand is out, a tie loses the asker. */
        int target = (int)arg;
        int64_t cost = table_call_cost(t, seat);
        bool all_in = p->stack < cost;
        if (all_in)
            cost = p->stack;
        table_pay(t, seat, cost);
        int loser = zjh_compare(p->cards, t->s.seat[target].cards) > 0 ? target : seat;
        t->s.seat[loser].folded = 1;
        table_emit_compare(t, seat, target, loser, cost, all_in);
        table_advance(t, seat);
        return ZJH_OK;
    }
    }
    return ZJH_E_BAD_ARGS;
}

/* Checks start_hand's arguments; returns the number of players or a negative zjh_err_t. */
static int table_check_start(const zjh_table_t *t, int dealer, const int64_t *stacks,
                             const uint8_t *deck, int ncards)
{
    if (t->s.in_hand)
        return ZJH_E_IN_HAND;
    const zjh_config_t *c = &t->s.cfg;
    if (dealer < 0 || dealer >= c->seats || stacks == NULL || deck == NULL)
        return ZJH_E_BAD_ARGS;
    int players = 0;
    for (int i = 0; i < ZJH_MAX_SEATS; i++) {
        if (stacks[i] == 0)
            continue;
        if (i >= c->seats || stacks[i] < c->ante || stacks[i] > ZJH_MAX_CHIPS)
            return ZJH_E_BAD_ARGS;
        players++;
    }
    if (players < 2 || ncards < ZJH_HAND_CARDS * players || ncards > ZJH_DECK_CARDS)
        return ZJH_E_BAD_ARGS;
    uint64_t seen = 0;
    for (int i = 0; i < ncards; i++) {
        if (!zjh_card_valid(deck[i]) || (seen >> deck[i] & 1))
            return ZJH_E_BAD_ARGS;
        seen |= UINT64_C(1) << deck[i];
    }
    return players;
}

/*
 * Starts a hand (docs/rules/zhajinhua.md, "Antes and dealing"): everyone dealt in posts the
 * ante, cards go one at a time clockwise from the seat left of the dealer, three rounds, and
 * the seat left of the dealer acts first in betting round 1 at the ante's unit.
 */
int zjh_table_start_hand(zjh_table_t *t, int dealer, const int64_t stacks[ZJH_MAX_SEATS],
                         const uint8_t *deck, int ncards)
{
    if (t == NULL)
        return ZJH_E_BAD_ARGS;
    int players = table_check_start(t, dealer, stacks, deck, ncards);
    if (players < 0)
        return players;
    int n = t->s.cfg.seats;
    memset(t->s.seat, 0, sizeof t->s.seat);
    t->s.hand_no++;
    t->s.dealer = dealer;
    t->s.unit = t->s.cfg.ante;
    t->s.round = 1;
    t->s.in_hand = 1;
    t->s.to_act = -1;
    for (int i = 0; i < n; i++)
        if (stacks[i] > 0) {
            t->s.seat[i].dealt = 1;
            t->s.seat[i].stack = stacks[i];
        }
    table_emit_simple(t, ZJH_EV_HAND_START, dealer, 0, (int64_t)t->s.hand_no);
    for (int k = 0; k < n; k++) {
        int seat = (dealer + 1 + k) % n;
        if (!t->s.seat[seat].dealt)
            continue;
        table_pay(t, seat, t->s.cfg.ante);
        table_emit_simple(t, ZJH_EV_ANTE, seat, 0, t->s.cfg.ante);
    }
    int pos = 0;
    for (int c = 0; c < ZJH_HAND_CARDS; c++)
        for (int k = 0; k < n; k++) {
            int seat = (dealer + 1 + k) % n;
            if (t->s.seat[seat].dealt)
                t->s.seat[seat].cards[c] = deck[pos++];
        }
    for (int k = 0; k < n; k++) {
        int seat = (dealer + 1 + k) % n;
        if (!t->s.seat[seat].dealt || t->cb == NULL)
            continue;
        zjh_event_t ev;
        table_ev_init(&ev, ZJH_EV_DEAL, seat);
        memcpy(ev.cards[0], t->s.seat[seat].cards, ZJH_HAND_CARDS);
        t->cb(t->ud, &ev);
    }
    t->s.to_act = table_next_live(t, dealer);
    table_emit_turn(t);
    return ZJH_OK;
}

/* ---- accessors -------------------------------------------------------------------------- */

bool zjh_table_in_hand(const zjh_table_t *t)
{
    return t->s.in_hand != 0;
}

int zjh_table_to_act(const zjh_table_t *t)
{
    return t->s.in_hand ? t->s.to_act : -1;
}

int64_t zjh_table_unit(const zjh_table_t *t)
{
    return t->s.unit;
}

int64_t zjh_table_pot(const zjh_table_t *t)
{
    int64_t pot = 0;
    for (int i = 0; i < ZJH_MAX_SEATS; i++)
        pot += t->s.seat[i].put_in;
    return pot;
}

int zjh_table_round(const zjh_table_t *t)
{
    return t->s.round;
}

int zjh_table_dealer(const zjh_table_t *t)
{
    return t->s.dealer;
}

uint64_t zjh_table_hand_no(const zjh_table_t *t)
{
    return t->s.hand_no;
}

const zjh_config_t *zjh_table_config(const zjh_table_t *t)
{
    return &t->s.cfg;
}

int zjh_table_seat(const zjh_table_t *t, int seat, zjh_seat_t *out)
{
    if (seat < 0 || seat >= t->s.cfg.seats || out == NULL)
        return ZJH_E_BAD_ARGS;
    const table_seat_t *p = &t->s.seat[seat];
    memset(out, 0, sizeof *out);
    out->dealt = p->dealt;
    out->stack = p->stack;
    out->put_in = p->put_in;
    out->looked = p->looked;
    out->folded = p->folded;
    out->all_in = p->all_in;
    return ZJH_OK;
}

int zjh_table_cards(const zjh_table_t *t, int seat, uint8_t out[ZJH_HAND_CARDS])
{
    if (seat < 0 || seat >= t->s.cfg.seats || out == NULL)
        return ZJH_E_BAD_ARGS;
    if (t->s.hand_no == 0)
        return ZJH_E_NO_HAND;
    if (!t->s.seat[seat].dealt)
        return ZJH_E_NOT_LIVE;
    memcpy(out, t->s.seat[seat].cards, ZJH_HAND_CARDS);
    return ZJH_OK;
}

int64_t zjh_table_rake_total(const zjh_table_t *t)
{
    return t->s.rake_total;
}

int zjh_table_settlement(const zjh_table_t *t, zjh_settlement_t *out)
{
    if (!t->s.has_settlement || out == NULL)
        return ZJH_E_NO_HAND;
    *out = t->s.settle;
    return ZJH_OK;
}
