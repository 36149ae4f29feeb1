/*
 * strategy_holdem -- plays the holdem engine (games/holdem/holdem_engine.h) from what its Turn
 * says. The engine fills each Turn from the rules code itself (holdem_table_legal): to_call,
 * min_amount (the smallest total a bet or raise may make this street; absent when neither is
 * allowed) and max_amount (the stack's limit). So every move the bot picks is legal by
 * construction:
 *
 *   nothing to call:  check (a Turn does not tell a bet from the big blind's option, which
 *                      decides between BET and RAISE, so the bot never opens the betting);
 *   something to call: call (6 in 10), fold (2 in 10), raise to min_amount (2 in 10, when
 *                      raising is allowed; else call);
 *   a straddle offer:  (tables with --holdem-straddles: a Turn before the hand's own hole cards,
 *                      nothing to call, min_amount = max_amount = the straddle) straddle with a
 *                      BET of exactly that amount 1 in 4, else decline with a check.
 *
 * Amounts are totals put in this street, as the protocol says. Every refusal is an unexpected
 * error.
 */
#include "bot_strategy.h"

typedef struct {
    bool my_turn;
    uint32_t turn_gen, acted_gen; /* Turns for our seat seen / the one our last move answered */
    bool closing;
    int64_t to_call, min_to, max_to;
    bool has_min;
    bool dealt; /* our hole cards of the hand in play have come (a Turn before them is an offer) */
} st_holdem_t;

static void st_holdem_on_seat(void *stp, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    st_holdem_t *st = stp;
    (void)seat;
    st->closing = false;
    st->my_turn = false;
    st->dealt = false;
    if (snap == NULL || snap->state_case != CROUPIER__SNAPSHOT__STATE_HOLDEM)
        return;
    const Croupier__HoldemState *h = snap->holdem;
    /* Our hole cards of the hand in play, whoever's turn it is: a seat taken after its hand was
     * dealt (a tournament seat taken when its table deals, a reconnect) never sees that Deal,
     * and without them a Turn with nothing to call and min = max (a short stack's all-in
     * raise, the big blind's option) looked like a straddle offer: the bot answered it with a
     * BET, refused ACTION_NOT_ALLOWED (tour_mtt, the demo; test bot_holdem). */
    st->dealt = h->has_hole_cards && h->hole_cards.len > 0;
    /* After a reconnect the Turn for us may have been pushed while we were away: the snapshot
     * says whose turn it is and holds the same limits (from holdem_table_legal too). */
    if (snap->has_turn_seat && snap->turn_seat == snap->your_seat) {
        st->my_turn = true;
        st->turn_gen++;
        st->to_call = h->has_to_call ? h->to_call : 0;
        st->has_min = h->has_min_raise;
        st->min_to = h->min_raise;
        /* The snapshot has no max; it only matters for an offer, whose max is its min. */
        st->max_to = st->dealt ? 0 : h->min_raise;
    }
}

static void st_holdem_on_event(void *stp, const bot_seat_t *seat, const Croupier__ServerMessage *m)
{
    st_holdem_t *st = stp;
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_TURN: {
        const Croupier__Turn *t = m->turn;
        st->my_turn = t->seat == seat->seat;
        if (st->my_turn)
            st->turn_gen++;
        st->to_call = t->has_to_call ? t->to_call : 0;
        st->has_min = t->has_min_amount;
        st->min_to = t->min_amount;
        st->max_to = t->has_max_amount ? t->max_amount : 0;
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
        if (m->deal->has_seat && m->deal->seat == seat->seat)
            st->dealt = true;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END:
        st->my_turn = false;
        st->dealt = false;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT:
        /* The reply to our move. A Turn for us pushed before this reply (the engine may push
         * the events of a move before answering it) is a newer turn: keep it. */
        if (st->acted_gen == st->turn_gen)
            st->my_turn = false;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
        st->closing = true;
        st->my_turn = false;
        break;
    default:
        break;
    }
}

static int st_holdem_decide(void *stp, const bot_seat_t *seat, bot_rng_t *rng, bot_move_t *out,
                            int *delay_ms)
{
    (void)seat;
    st_holdem_t *st = stp;
    *delay_ms = -1;
    if (!st->my_turn || st->closing)
        return 0;
    *delay_ms = 30 + (int)bot_rng_below(rng, 200);
    st->acted_gen = st->turn_gen;
    out->action.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
    out->action.holdem = &out->holdem;
    uint32_t r = bot_rng_below(rng, 20);
    if (!st->dealt && st->to_call == 0 && st->has_min && st->min_to > 0 &&
        st->min_to == st->max_to) {
        /* A straddle offer: the only bet is the straddle itself; a check declines. */
        if (r < 5) {
            out->holdem.move = CROUPIER__HOLDEM_MOVE__HOLDEM_BET;
            out->holdem.has_amount = true;
            out->holdem.amount = st->min_to;
        } else {
            out->holdem.move = CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK;
        }
        return 1;
    }
    if (st->to_call == 0) {
        /* Always check: a Turn does not say whether the street has a bet already (the big
         * blind's option), which decides between BET and RAISE. */
        out->holdem.move = CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK;
        return 1;
    }
    if (r < 4) {
        out->holdem.move = CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD;
    } else if (r < 8 && st->has_min && st->min_to > 0) {
        out->holdem.move = CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE;
        out->holdem.has_amount = true;
        out->holdem.amount = st->min_to;
    } else {
        out->holdem.move = CROUPIER__HOLDEM_MOVE__HOLDEM_CALL;
    }
    return 1;
}

const bot_strategy_ops_t bot_strategy_holdem = {
    .game = "holdem",
    .engine = CROUPIER__ENGINE__ENGINE_HOLDEM,
    .state_size = sizeof(st_holdem_t),
    .round_in_snapshot = true,
    .round_by_action = false,
    .on_seat = st_holdem_on_seat,
    .on_event = st_holdem_on_event,
    .decide = st_holdem_decide,
    .refusal_expected = NULL,
    .free_state = NULL,
};
