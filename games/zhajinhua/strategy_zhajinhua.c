/*
 * strategy_zhajinhua -- plays Zha Jin Hua (docs/rules/zhajinhua.md) on the table kit: engine
 * ENGINE_GAME, the game's own messages (games/zhajinhua/zhajinhua.proto) in the envelope. The
 * client decodes the bodies and hands them over through on_game (bots/bot_strategy.h): ZjhState
 * from a Snapshot, ZjhEvent (looked, own cards, compared, all-in, betting round) and the ZjhAction
 * of every Play. Hand strength comes from the rules module itself (zjh_rank, games/zhajinhua).
 *
 * The view of a hand, kept from the events: which seats were dealt in (every Deal, face down,
 * names its seat and the round id; a new round id is a new hand), which are out (a Play of
 * ZJH_FOLD, the loser of a compare asked for, an all-in call that lost; the compares of an
 * all-in call put nobody out, its ZjhAllIn decides), whether this seat looked and its
 * cards (ZjhEvent.cards, sent to it alone after its look), the betting round (1 at the deal,
 * then ZjhEvent.round). A Turn for this seat carries what the rules allow: to_call (the cost of
 * a call or compare; the whole stack when short, an all-in), min_amount / max_amount (the units
 * a raise may name; absent = no raise). After a reconnect the Snapshot's ZjhState holds the same
 * (to_call for the seat to act; the raise range from the unit, the cap and the stack, as the
 * rules compute it: unit + 1 .. min(max_unit, stack / (looked ? 2 : 1))).
 *
 * Play, on its own turn only:
 *   look      at its first turn 7 hands in 10; else it plays blind for one or two of its turns
 *             (and looks at the latest in betting round 3). Never twice: after its look it
 *             waits for the Turn the rules announce again with the doubled costs;
 *   blind     calls; one time in ten raises to the lowest unit allowed;
 *   looked    weak (a high card below king high; the 2-3-5 counts as weak): folds 17 times in
 *             20 (a free call when the call costs nothing); medium (a pair below tens, a king
 *             or ace high): calls, or from betting round 2 compares with a random live player
 *             (4 in 10, 7 in 10 from round 4, so hands end); strong (tens or better, a straight
 *             or above): raises 6 in 10 within [min_amount, max_amount] (the lower half), else
 *             compares from round 2 (3 in 10; 9 in 10 when no raise is allowed), else calls.
 * A compare is sent only from betting round 2 and names a seat dealt in and still live. A move
 * refused by the server (none should be: every one is built from what the rules allow) makes
 * the bot refresh its view with a Resume before its next move; every refusal is an unexpected
 * error of the report.
 */
#include <stdio.h>
#include <string.h>

#include "bot_strategy.h"
#include "zhajinhua.pb-c.h"
#include "zjh.h"

#define ZB_SEATS ZJH_MAX_SEATS

typedef struct {
    /* the hand */
    char round[128]; /* its round id ("" = none seen) */
    bool in_hand;
    bool dealt[ZB_SEATS], out[ZB_SEATS];
    bool looked, have_cards;
    uint8_t cards[ZJH_HAND_CARDS];
    uint32_t betting_round;
    int call_seat;     /* the seat of the last Play of ZJH_CALL since the last Turn, else -1 */
    uint32_t my_turns; /* moves of ours this hand (a look is not one) */
    bool plan_set;
    uint32_t blind_turns; /* turns to play blind before looking */
    /* the turn */
    bool my_turn;
    uint32_t turn_gen; /* Turns for our seat seen */
    int64_t to_call;
    bool has_raise;
    int64_t min_unit, max_unit;
    bool closing;
    bool refresh; /* ask for a Snapshot before the next move */
    /* the last move decide() returned, and the one sent (the next Result answers it) */
    Croupier__Zjh__ZjhMove last_move;
    uint32_t last_gen;
    bool sent;
    Croupier__Zjh__ZjhMove sent_move;
    uint32_t sent_gen;
} st_zjh_t;

/* A new hand (round id id): forget the last one's view, keep the turn counter. */
static void zb_new_hand(st_zjh_t *st, const char *id)
{
    uint32_t gen = st->turn_gen;
    bool closing = st->closing;
    memset(st, 0, sizeof *st);
    st->turn_gen = gen;
    st->closing = closing;
    snprintf(st->round, sizeof st->round, "%s", id != NULL ? id : "");
    st->in_hand = true;
    st->betting_round = 1;
    st->call_seat = -1;
}

static bool zb_seat_ok(uint32_t s)
{
    return s < ZB_SEATS;
}

/* The Snapshot's state: the whole view again (the client zeroed the block at the new seat). */
static void zb_on_state(st_zjh_t *st, const bot_seat_t *seat, const Croupier__Snapshot *sn,
                        const Croupier__Zjh__ZjhState *z)
{
    zb_new_hand(st, sn->round_id);
    st->in_hand = z->in_hand;
    if (!z->in_hand)
        return;
    st->betting_round = z->has_betting_round ? z->betting_round : 1;
    st->my_turns = st->betting_round - 1;
    const Croupier__Zjh__ZjhSeat *me = NULL;
    for (size_t i = 0; i < z->n_seats; i++) {
        const Croupier__Zjh__ZjhSeat *s = z->seats[i];
        if (!zb_seat_ok(s->seat))
            continue;
        st->dealt[s->seat] = true;
        st->out[s->seat] = s->has_folded && s->folded;
        if (s->seat == seat->seat)
            me = s;
    }
    if (me == NULL)
        return;
    st->looked = me->has_looked && me->looked;
    if (z->has_own_cards && z->own_cards.len == ZJH_HAND_CARDS) {
        memcpy(st->cards, z->own_cards.data, ZJH_HAND_CARDS);
        st->have_cards = true;
        st->looked = true;
    }
    if (sn->has_turn_seat && sn->turn_seat == seat->seat && !st->out[seat->seat]) {
        /* The Turn may have been pushed while we were away: the state holds its terms. */
        st->my_turn = true;
        st->turn_gen++;
        st->to_call = z->has_to_call ? z->to_call : 0;
        int64_t stack = me->has_stack ? me->stack : 0;
        int64_t hi = stack / (st->looked ? 2 : 1);
        if (z->has_max_unit && hi > z->max_unit)
            hi = z->max_unit;
        int64_t lo = (z->has_unit ? z->unit : 0) + 1;
        st->has_raise = z->has_unit && z->has_max_unit && lo <= hi;
        st->min_unit = lo;
        st->max_unit = hi;
    }
}

static void zb_on_seat(void *stp, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    (void)seat;
    (void)snap; /* its state comes through on_game */
    st_zjh_t *st = stp;
    st->call_seat = -1;
    st->closing = false;
    st->my_turn = false;
    st->refresh = false;
    st->sent = false;
}

static void zb_on_game(void *stp, const bot_seat_t *seat, const Croupier__ServerMessage *m,
                       const ProtobufCMessage *body)
{
    st_zjh_t *st = stp;
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT:
        zb_on_state(st, seat, m->snapshot, (const Croupier__Zjh__ZjhState *)body);
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY: {
        const Croupier__Zjh__ZjhAction *a = (const Croupier__Zjh__ZjhAction *)body;
        if (a->move == CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD && zb_seat_ok(m->play->seat))
            st->out[m->play->seat] = true;
        if (a->move == CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL)
            st->call_seat = (int)m->play->seat;
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT: {
        const Croupier__Zjh__ZjhEvent *e = (const Croupier__Zjh__ZjhEvent *)body;
        switch (e->kind_case) {
        case CROUPIER__ZJH__ZJH_EVENT__KIND_LOOKED:
            if (e->looked->seat == seat->seat)
                st->looked = true;
            break;
        case CROUPIER__ZJH__ZJH_EVENT__KIND_CARDS:
            if (e->cards->seat == seat->seat && e->cards->cards.len == ZJH_HAND_CARDS) {
                memcpy(st->cards, e->cards->cards.data, ZJH_HAND_CARDS);
                st->have_cards = true;
                st->looked = true;
            }
            break;
        case CROUPIER__ZJH__ZJH_EVENT__KIND_COMPARED: {
            /* The compares of an all-in call (its Play of ZJH_CALL came just before) put
             * nobody out: the ZjhAllIn that follows says who is. A compare asked for, all-in
             * or not, puts its loser out. */
            const Croupier__Zjh__ZjhCompared *c = e->compared;
            bool of_call = c->has_all_in && c->all_in && (int)c->asker == st->call_seat;
            if (!of_call && zb_seat_ok(c->loser))
                st->out[c->loser] = true;
            break;
        }
        case CROUPIER__ZJH__ZJH_EVENT__KIND_ALL_IN:
            for (uint32_t s = 0; s < ZB_SEATS; s++)
                if (e->all_in->won ? s != e->all_in->seat : s == e->all_in->seat)
                    st->out[s] = true;
            break;
        case CROUPIER__ZJH__ZJH_EVENT__KIND_ROUND:
            st->betting_round = e->round->betting_round;
            break;
        default:
            break;
        }
        break;
    }
    default:
        break;
    }
}

static void zb_on_event(void *stp, const bot_seat_t *seat, const Croupier__ServerMessage *m)
{
    st_zjh_t *st = stp;
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL: {
        const Croupier__Deal *d = m->deal;
        if (d->round_id != NULL && d->round_id[0] != '\0' && strcmp(d->round_id, st->round) != 0)
            zb_new_hand(st, d->round_id);
        if (d->has_seat && zb_seat_ok(d->seat))
            st->dealt[d->seat] = true;
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_TURN: {
        const Croupier__Turn *t = m->turn;
        st->call_seat = -1;
        st->my_turn = t->seat == seat->seat;
        if (!st->my_turn)
            break;
        st->turn_gen++;
        st->to_call = t->has_to_call ? t->to_call : 0;
        st->has_raise = t->has_min_amount && t->has_max_amount && t->min_amount > 0 &&
                        t->min_amount <= t->max_amount;
        st->min_unit = t->min_amount;
        st->max_unit = t->max_amount;
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END:
        st->in_hand = false;
        st->my_turn = false;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT: {
        /* The reply to the move sent last. */
        bool ok = m->result->error == NULL;
        if (!st->sent)
            break;
        st->sent = false;
        if (!ok) {
            st->refresh = true; /* our view was wrong: take the server's */
            break;
        }
        if (st->sent_move == CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK) {
            st->looked = true;
            /* The rules announce the turn again with the doubled costs (pushed before this
             * reply); without it the terms held are stale. */
            if (st->turn_gen == st->sent_gen)
                st->refresh = true;
        } else if (st->sent_gen == st->turn_gen) {
            /* A Turn for us pushed before this reply is a newer turn: keep it. */
            st->my_turn = false;
        }
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
        st->closing = true;
        st->my_turn = false;
        break;
    default:
        break;
    }
}

static void zb_on_sent(void *stp, const bot_seat_t *seat, const bot_move_t *mv)
{
    (void)seat;
    (void)mv; /* the move decide() returned last */
    st_zjh_t *st = stp;
    st->sent = true;
    st->sent_move = st->last_move;
    st->sent_gen = st->last_gen;
    if (st->last_move != CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK)
        st->my_turns++;
}

/* 0 weak, 1 medium, 2 strong (docs/rules/zhajinhua.md "Hand ranking"). */
static int zb_strength(const uint8_t cards[ZJH_HAND_CARDS])
{
    zjh_rank_t r = zjh_rank(cards);
    int top = (int)(r.value / 10000 % 100); /* the deciding rank: a pair's rank, a high card's */
    switch (r.category) {
    case ZJH_CAT_THREE_OF_A_KIND:
    case ZJH_CAT_STRAIGHT_FLUSH:
    case ZJH_CAT_FLUSH:
    case ZJH_CAT_STRAIGHT:
        return 2;
    case ZJH_CAT_PAIR:
        return top >= 10 ? 2 : 1;
    case ZJH_CAT_HIGH_CARD:
        return top >= 13 ? 1 : 0;
    default:
        return 0;
    }
}

/* A random live seat other than ours, or -1. */
static int zb_target(const st_zjh_t *st, const bot_seat_t *seat, bot_rng_t *rng)
{
    int live[ZB_SEATS], n = 0;
    for (int s = 0; s < ZB_SEATS; s++)
        if ((uint32_t)s != seat->seat && st->dealt[s] && !st->out[s])
            live[n++] = s;
    return n == 0 ? -1 : live[bot_rng_below(rng, (uint32_t)n)];
}

/* A unit in the lower half of [min_unit, max_unit]. */
static int64_t zb_raise_unit(const st_zjh_t *st, bot_rng_t *rng)
{
    int64_t span = (st->max_unit - st->min_unit) / 2 + 1;
    if (span > 1000000)
        span = 1000000;
    return st->min_unit + (int64_t)bot_rng_below(rng, (uint32_t)span);
}

static int zb_decide(void *stp, const bot_seat_t *seat, bot_rng_t *rng, bot_move_t *out,
                     int *delay_ms)
{
    st_zjh_t *st = stp;
    *delay_ms = -1;
    if (st->closing)
        return 0;
    if (st->refresh) {
        *delay_ms = 0;
        return 2;
    }
    if (!st->my_turn || !st->in_hand || !zb_seat_ok(seat->seat) || st->out[seat->seat])
        return 0;
    *delay_ms = 40 + (int)bot_rng_below(rng, 200);
    if (!st->plan_set) {
        st->plan_set = true;
        st->blind_turns = bot_rng_below(rng, 10) < 7 ? 0 : 1 + bot_rng_below(rng, 2);
    }
    Croupier__Zjh__ZjhMove move = CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL;
    int64_t unit = 0;
    int target = -1;
    bool can_compare = st->betting_round >= 2;
    if (!st->looked && (st->my_turns >= st->blind_turns || st->betting_round >= 3)) {
        move = CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK;
    } else if (!st->looked || !st->have_cards) {
        /* Blind (or looked and its cards not here yet: never happens in order; play it safe). */
        if (st->has_raise && bot_rng_below(rng, 10) == 0) {
            move = CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE;
            unit = st->min_unit;
        }
    } else {
        int strength = zb_strength(st->cards);
        uint32_t r = bot_rng_below(rng, 20);
        if (strength == 0) {
            if (st->to_call > 0 && r < 17)
                move = CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD;
        } else if (strength == 1) {
            uint32_t want = st->betting_round >= 4 ? 14 : 8;
            if (can_compare && r < want)
                target = zb_target(st, seat, rng);
        } else {
            if (st->has_raise && r < 12) {
                move = CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE;
                unit = zb_raise_unit(st, rng);
            } else if (can_compare && r < 18) {
                target = zb_target(st, seat, rng);
            }
        }
        if (target >= 0)
            move = CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE;
    }
    Croupier__Zjh__ZjhAction a = CROUPIER__ZJH__ZJH_ACTION__INIT;
    a.move = move;
    a.has_unit = move == CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE;
    a.unit = unit;
    a.has_target = move == CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE;
    a.target = target >= 0 ? (uint32_t)target : 0;
    if (bot_move_game(out, &a.base) != 0)
        return 0;
    st->last_move = move;
    st->last_gen = st->turn_gen;
    return 1;
}

const bot_strategy_ops_t bot_strategy_zhajinhua = {
    .game = "zhajinhua",
    .engine = CROUPIER__ENGINE__ENGINE_GAME,
    .state_size = sizeof(st_zjh_t),
    .round_in_snapshot = true,
    .round_by_action = false,
    .on_seat = zb_on_seat,
    .on_event = zb_on_event,
    .decide = zb_decide,
    .refusal_expected = NULL,
    .free_state = NULL,
    .on_sent = zb_on_sent,
    .game_state_desc = &croupier__zjh__zjh_state__descriptor,
    .game_event_desc = &croupier__zjh__zjh_event__descriptor,
    .game_action_desc = &croupier__zjh__zjh_action__descriptor,
    .on_game = zb_on_game,
};
