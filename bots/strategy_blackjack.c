/*
 * strategy_blackjack -- plays the persistent engine's blackjack tables (games/persistent/
 * bj_engine.h) with basic strategy (bj_strategy.h).
 *
 * The engine pushes three kinds of Turn, told apart by their fields:
 *   - betting window (min_amount/max_amount set): the bot bets the table minimum, if its stack
 *     (max_amount is min(stack, max_bet), and the buy-in is at most max_bet) covers it;
 *   - insurance offer (to_call = the insurance bet): the bot declines (basic strategy never
 *     insures);
 *   - a hand's decision (hand set): bj_strategy_decide on the hand the bot tracked from the
 *     Deal events, against the dealer's up card (the first dealer card dealt face up).
 * A Turn for a decision does not carry the allowed moves, so the bot computes the mask the
 * table does (blackjack.c bj_allowed_mask) for the engine's rules (bj_rules_default: the
 * engine changes only decks, seats and the bet limits), and leaves out a double or split its
 * chips at the table would not cover (the engine refuses those with INSUFFICIENT_FUNDS).
 *
 * A split is followed from the Play event of its own seat (emitted before the cards): the
 * hand keeps its first card, the new hand right after it gets the second. After a reconnect the
 * Snapshot gives the hands, the dealer's cards and whose turn it is (the first hand of ours
 * not done). Every refusal is an unexpected error.
 */
#include <pthread.h>
#include <string.h>

#include "bj_strategy.h"
#include "blackjack.h"
#include "bot_strategy.h"

typedef struct {
    uint8_t cards[BJ_MAX_CARDS];
    uint8_t n;
    uint8_t flags; /* BJ_HAND_SPLIT, BJ_HAND_SPLIT_ACES */
    int64_t bet;
} st_bj_hand_t;

typedef enum { BJS_NONE = 0, BJS_BET, BJS_INSURANCE, BJS_PLAY } bjs_kind_t;

typedef struct {
    bjs_kind_t pending;           /* what the last Turn for our seat asks for */
    uint32_t turn_gen, acted_gen; /* Turns for our seat seen / the one our last move answered */
    bool closing;
    uint32_t turn_hand;
    int64_t min_bet, stack; /* from the betting Turn: the minimum, min(stack, max_bet) */
    int64_t committed;      /* chips at stake this round (bets, doubles, splits) */
    uint8_t up;             /* the dealer's up card (core encoding), 0xFF = not seen */
    uint8_t nhands;
    st_bj_hand_t hands[BJ_MAX_HANDS];
} st_bj_t;

static bj_rules_t bj_rules;
static bj_strategy_t *bj_strat;
static pthread_once_t bj_once = PTHREAD_ONCE_INIT;

/* The engine's rules as far as decisions go, and the strategy for them (once per process). */
static void st_bj_init_once(void)
{
    bj_rules_default(&bj_rules);
    if (bj_strategy_create(&bj_rules, &bj_strat) != 0)
        bj_strat = NULL; /* decide then stands on every hand (always allowed) */
}

/* Protocol card code (rank << 2 | suit, ace = 14) to the core's card, or 0xFF. */
static uint8_t st_bj_card(uint8_t code)
{
    int prank = code >> 2, suit = code & 3;
    if (prank < 2 || prank > 14)
        return 0xFF;
    int rank = prank == 14 ? 0 : prank - 1;
    return (uint8_t)(suit * 13 + rank);
}

static void st_bj_new_round(st_bj_t *st)
{
    st->nhands = 0;
    st->committed = 0;
    st->up = 0xFF;
    memset(st->hands, 0, sizeof st->hands);
}

static void st_bj_hand_add(st_bj_t *st, uint32_t h, uint8_t card)
{
    if (h >= BJ_MAX_HANDS || card == 0xFF)
        return;
    if (h >= st->nhands)
        st->nhands = (uint8_t)(h + 1);
    st_bj_hand_t *hd = &st->hands[h];
    if (hd->n < BJ_MAX_CARDS)
        hd->cards[hd->n++] = card;
}

/* Hand hi splits: it keeps its first card, the new hand hi+1 (the rest move up) the second. */
static void st_bj_split(st_bj_t *st, uint32_t hi)
{
    if (hi >= st->nhands || st->nhands >= BJ_MAX_HANDS || st->hands[hi].n != 2)
        return;
    memmove(&st->hands[hi + 2], &st->hands[hi + 1],
            (size_t)(st->nhands - hi - 1) * sizeof st->hands[0]);
    st->nhands++;
    st_bj_hand_t *h = &st->hands[hi], *nh = &st->hands[hi + 1];
    uint8_t flags = BJ_HAND_SPLIT;
    if (bj_card_value(h->cards[0]) == 1)
        flags |= BJ_HAND_SPLIT_ACES;
    *nh = (st_bj_hand_t){.n = 1, .flags = flags, .bet = h->bet};
    nh->cards[0] = h->cards[1];
    h->n = 1;
    h->flags = flags;
    st->committed += h->bet;
}

static void st_bj_on_seat(void *stp, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    st_bj_t *st = stp;
    (void)seat;
    pthread_once(&bj_once, st_bj_init_once);
    st->closing = false;
    st->pending = BJS_NONE;
    st_bj_new_round(st);
    st->min_bet = seat->stake;
    if (snap == NULL || snap->state_case != CROUPIER__SNAPSHOT__STATE_BLACKJACK)
        return;
    const Croupier__BlackjackState *b = snap->blackjack;
    if (b->has_min_bet)
        st->min_bet = b->min_bet;
    if (b->dealer_cards.len > 0)
        st->up = st_bj_card(b->dealer_cards.data[0]);
    for (size_t i = 0; i < b->n_hands; i++) {
        const Croupier__BlackjackHand *h = b->hands[i];
        if (h->seat != snap->your_seat)
            continue;
        uint32_t hi = h->has_hand ? h->hand : 0;
        if (hi >= BJ_MAX_HANDS)
            continue;
        for (size_t c = 0; c < h->cards.len; c++)
            st_bj_hand_add(st, hi, st_bj_card(h->cards.data[c]));
        if (hi >= st->nhands)
            st->nhands = (uint8_t)(hi + 1);
        st->hands[hi].bet = h->bet;
        st->committed += h->bet;
        if (h->done)
            st->hands[hi].flags |= BJ_HAND_DONE;
    }
    /* The turn pushed while we were away: the first hand of ours not done. The stack is not in
     * the snapshot: committed stands for it (no double or split until the next window). */
    st->stack = st->committed;
    if (b->phase == CROUPIER__BLACKJACK_PHASE__BJ_PLAYING && snap->has_turn_seat &&
        snap->turn_seat == snap->your_seat) {
        for (uint32_t h = 0; h < st->nhands; h++) {
            if (!(st->hands[h].flags & BJ_HAND_DONE)) {
                st->pending = BJS_PLAY;
                st->turn_hand = h;
                st->turn_gen++;
                break;
            }
        }
    }
}

static void st_bj_on_turn(st_bj_t *st, const bot_seat_t *seat, const Croupier__Turn *t)
{
    if (t->seat != seat->seat) {
        /* Another seat's decision: ours (if any was pending) is over. Betting and insurance
         * Turns go to every seat at once, so they do not end ours. */
        if (t->has_hand && st->pending == BJS_PLAY)
            st->pending = BJS_NONE;
        return;
    }
    st->turn_gen++;
    if (t->has_min_amount) {
        st_bj_new_round(st);
        st->pending = BJS_BET;
        st->min_bet = t->min_amount;
        st->stack = t->has_max_amount ? t->max_amount : t->min_amount;
    } else if (t->has_to_call) {
        st->pending = BJS_INSURANCE;
    } else {
        st->pending = BJS_PLAY;
        st->turn_hand = t->has_hand ? t->hand : 0;
    }
}

static void st_bj_on_event(void *stp, const bot_seat_t *seat, const Croupier__ServerMessage *m)
{
    st_bj_t *st = stp;
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
        st_bj_on_turn(st, seat, m->turn);
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL: {
        const Croupier__Deal *d = m->deal;
        if (d->cards.len == 0)
            break; /* the dealer's hole card face down */
        if (!d->has_seat) {
            if (st->up == 0xFF)
                st->up = st_bj_card(d->cards.data[0]);
        } else if (d->seat == seat->seat) {
            for (size_t c = 0; c < d->cards.len; c++)
                st_bj_hand_add(st, d->has_hand ? d->hand : 0, st_bj_card(d->cards.data[c]));
        }
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY: {
        const Croupier__Play *p = m->play;
        if (p->seat != seat->seat || p->action == NULL ||
            p->action->kind_case != CROUPIER__ACTION__KIND_BLACKJACK)
            break;
        const Croupier__BlackjackAction *a = p->action->blackjack;
        uint32_t hi = a->has_hand ? a->hand : 0;
        if (a->move == CROUPIER__BLACKJACK_MOVE__BJ_BET) {
            st->committed = a->amount;
            st->hands[0].bet = a->amount;
            if (st->pending == BJS_BET)
                st->pending = BJS_NONE;
        } else if (a->move == CROUPIER__BLACKJACK_MOVE__BJ_SPLIT) {
            st_bj_split(st, hi);
        } else if (a->move == CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE && hi < BJ_MAX_HANDS) {
            st->committed += st->hands[hi].bet;
            st->hands[hi].bet *= 2;
        }
        if (a->move == CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE && st->pending == BJS_INSURANCE)
            st->pending = BJS_NONE;
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END:
        st->pending = BJS_NONE;
        st_bj_new_round(st);
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT:
        /* The reply to our move. A Turn for us pushed before this reply (the engine pushes a
         * move's events before answering it) is a newer turn: keep it. */
        if (st->acted_gen == st->turn_gen)
            st->pending = BJS_NONE;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
        st->closing = true;
        st->pending = BJS_NONE;
        break;
    default:
        break;
    }
}

/* The moves the table allows the hand (blackjack.c bj_allowed_mask for bj_rules), less a
 * double or split the chips at the table would not cover. */
static uint32_t st_bj_allowed(const st_bj_t *st, const bj_hand_t *h)
{
    const bj_rules_t *r = &bj_rules;
    bool split_aces = h->flags & BJ_HAND_SPLIT_ACES;
    uint32_t m = BJ_ACT_BIT(BJ_ACT_STAND);
    if (!split_aces)
        m |= BJ_ACT_BIT(BJ_ACT_HIT);
    if (h->ncards != 2)
        return m;
    bool covered = st->committed + h->bet <= st->stack;
    if (!split_aces && (r->das || !(h->flags & BJ_HAND_SPLIT)) && covered) {
        int hard = h->hard;
        if (r->double_on == BJ_DOUBLE_ANY ||
            (r->double_on == BJ_DOUBLE_9_11 && hard >= 9 && hard <= 11 &&
             !(h->flags & BJ_HAND_ACE)) ||
            (r->double_on == BJ_DOUBLE_10_11 && hard >= 10 && hard <= 11 &&
             !(h->flags & BJ_HAND_ACE)))
            m |= BJ_ACT_BIT(BJ_ACT_DOUBLE);
    }
    if (bj_card_value(h->cards[0]) == bj_card_value(h->cards[1]) && st->nhands < r->max_hands &&
        (r->rsa || !split_aces) && covered)
        m |= BJ_ACT_BIT(BJ_ACT_SPLIT);
    if (r->late_surrender && st->nhands == 1)
        m |= BJ_ACT_BIT(BJ_ACT_SURRENDER);
    return m;
}

static Croupier__BlackjackMove st_bj_move_of(bj_action_t a)
{
    switch (a) {
    case BJ_ACT_HIT:
        return CROUPIER__BLACKJACK_MOVE__BJ_HIT;
    case BJ_ACT_DOUBLE:
        return CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE;
    case BJ_ACT_SPLIT:
        return CROUPIER__BLACKJACK_MOVE__BJ_SPLIT;
    case BJ_ACT_SURRENDER:
        return CROUPIER__BLACKJACK_MOVE__BJ_SURRENDER;
    default:
        return CROUPIER__BLACKJACK_MOVE__BJ_STAND;
    }
}

static int st_bj_decide(void *stp, const bot_seat_t *seat, bot_rng_t *rng, bot_move_t *out,
                        int *delay_ms)
{
    (void)seat;
    st_bj_t *st = stp;
    *delay_ms = -1;
    if (st->pending == BJS_NONE || st->closing)
        return 0;
    /* Quick: the betting window and the turn timer are short in the tests. */
    *delay_ms = 5 + (int)bot_rng_below(rng, 30);
    out->action.kind_case = CROUPIER__ACTION__KIND_BLACKJACK;
    out->action.blackjack = &out->blackjack;
    switch (st->pending) {
    case BJS_BET:
        if (st->stack < st->min_bet) {
            st->pending = BJS_NONE; /* broke at this table: let the window pass */
            return 0;
        }
        out->blackjack.move = CROUPIER__BLACKJACK_MOVE__BJ_BET;
        out->blackjack.has_amount = true;
        out->blackjack.amount = st->min_bet;
        break;
    case BJS_INSURANCE:
        out->blackjack.move = CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE;
        out->blackjack.has_insure = true;
        out->blackjack.insure = false;
        break;
    default: {
        bj_hand_t h;
        memset(&h, 0, sizeof h);
        uint32_t hi = st->turn_hand < BJ_MAX_HANDS ? st->turn_hand : 0;
        const st_bj_hand_t *sh = &st->hands[hi];
        for (uint8_t c = 0; c < sh->n; c++) {
            int v = bj_card_value(sh->cards[c]);
            h.cards[h.ncards++] = sh->cards[c];
            h.hard = (uint8_t)(h.hard + v);
            if (v == 1)
                h.flags |= BJ_HAND_ACE;
        }
        h.flags |= sh->flags & (BJ_HAND_SPLIT | BJ_HAND_SPLIT_ACES);
        h.bet = sh->bet;
        bj_action_t a = BJ_ACT_STAND;
        if (bj_strat != NULL && st->up != 0xFF && h.ncards > 0)
            a = bj_strategy_decide(bj_strat, &h, st->up, st_bj_allowed(st, &h));
        out->blackjack.move = st_bj_move_of(a);
        out->blackjack.has_hand = true;
        out->blackjack.hand = hi;
        break;
    }
    }
    st->acted_gen = st->turn_gen;
    return 1;
}

const bot_strategy_ops_t bot_strategy_blackjack = {
    .game = "blackjack",
    .engine = CROUPIER__ENGINE__ENGINE_PERSISTENT,
    .state_size = sizeof(st_bj_t),
    .round_in_snapshot = true,
    .round_by_action = false,
    .on_seat = st_bj_on_seat,
    .on_event = st_bj_on_event,
    .decide = st_bj_decide,
    .refusal_expected = NULL,
    .free_state = NULL,
};
