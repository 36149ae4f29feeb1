/*
 * strategy_niuniu -- plays Niu Niu (docs/rules/niuniu.md, "The engine") on the table kit: engine
 * ENGINE_GAME, the game's own messages (games/niuniu/niuniu.proto) in the envelope. The client
 * decodes the bodies and hands them over through on_game (bots/bot_strategy.h): NiuState from a
 * Snapshot, NiuEvent (the banker, the hands shown) and the NiuAction of every Play.
 *
 * The view of a round, kept from the events: its cards (the Deals to this seat: four at the
 * deal, the fifth at the show), the banker's multiplier (NiuEvent.banker), and the stack (the
 * seat's chips in a Snapshot, moved by every RoundEnd's delta). A round is three action windows
 * (docs/protocol.md "Action windows"); a Turn naming this seat is its decision, and the Turn's
 * terms say which window: min_amount 0 .. max_bid, the bid; min .. max bet option, the bets;
 * none, the show.
 *
 * Play, in its window only:
 *   bid   with a niu among its four cards (three summing to a multiple of 10), a random bid
 *         1..max_bid; without, no bid 8 times in 10, else 1;
 *   bet   with a niu among its four cards, a random option up to 3 stakes, else 1 stake; never
 *         one its stack does not cover at the banker's multiplier (niuniu_bet_allowed(), the
 *         server's own rule); with the stack not known yet, it asks for a Snapshot first;
 *   show  at once.
 * A move the server refuses (none should be) makes the bot refresh its view with a Resume.
 */
#include <stdio.h>
#include <string.h>

#include "bot_strategy.h"
#include "niuniu.h"
#include "niuniu.pb-c.h"

enum { NB_NONE, NB_BID, NB_BET, NB_SHOW };

typedef struct {
    char round[128]; /* the round's id ("" = none seen) */
    uint8_t cards[NIUNIU_HAND_CARDS];
    int ncards;
    int mult;          /* the banker's multiplier (0: no banker yet) */
    int64_t stack;     /* <= 0: not known (the client zeroes the block at every seat) */
    int window;        /* NB_*: the decision this seat has to make now */
    int max_bid;       /* the bid window's max_amount */
    uint32_t turn_gen; /* Turns for this seat seen */
    uint32_t last_gen; /* decide()'s last move was for this Turn */
    uint32_t sent_gen; /* ... and the one sent */
    bool sent, refresh, closing;
} st_niu_t;

static void nb_new_round(st_niu_t *st, const char *id)
{
    snprintf(st->round, sizeof st->round, "%s", id);
    st->ncards = 0;
    st->mult = 0;
    st->window = NB_NONE;
}

/* Whether three of the first n cards sum to a multiple of 10 (docs/rules/niuniu.md "Hand
 * categories": a niu). */
static bool nb_niu(const uint8_t *c, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            for (int k = j + 1; k < n; k++)
                if ((niuniu_card_points(c[i]) + niuniu_card_points(c[j]) +
                     niuniu_card_points(c[k])) %
                        10 ==
                    0)
                    return true;
    return false;
}

static void nb_on_seat(void *stp, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    st_niu_t *st = stp;
    st->refresh = st->sent = st->closing = false;
    st->window = NB_NONE;
    for (size_t i = 0; snap != NULL && i < snap->n_seats; i++)
        if (snap->seats[i]->seat == seat->seat)
            st->stack = snap->seats[i]->chips;
}

static void nb_on_game(void *stp, const bot_seat_t *seat, const Croupier__ServerMessage *m,
                       const ProtobufCMessage *body)
{
    st_niu_t *st = stp;
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT) {
        const Croupier__Niuniu__NiuEvent *e = (const Croupier__Niuniu__NiuEvent *)body;
        if (e->kind_case == CROUPIER__NIUNIU__NIU_EVENT__KIND_BANKER)
            st->mult = (int)e->banker->mult;
        return;
    }
    if (m->body_case != CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT)
        return;
    /* A Snapshot: the round again (the Turn of an open window may have been pushed while away:
     * the header's window_seats say whether this seat still decides). */
    const Croupier__Snapshot *sn = m->snapshot;
    const Croupier__Niuniu__NiuState *z = (const Croupier__Niuniu__NiuState *)body;
    nb_new_round(st, sn->round_id != NULL ? sn->round_id : "");
    st->mult = z->has_mult ? (int)z->mult : 0;
    st->max_bid = (int)z->max_bid;
    if (z->has_own_cards && z->own_cards.len <= NIUNIU_HAND_CARDS) {
        memcpy(st->cards, z->own_cards.data, z->own_cards.len);
        st->ncards = (int)z->own_cards.len;
    }
    for (size_t i = 0; z->has_phase && i < sn->n_window_seats; i++)
        if (sn->window_seats[i] == seat->seat) {
            st->window = (int)z->phase;
            st->turn_gen++;
        }
}

static void nb_on_event(void *stp, const bot_seat_t *seat, const Croupier__ServerMessage *m)
{
    st_niu_t *st = stp;
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL: {
        const Croupier__Deal *d = m->deal;
        if (d->round_id != NULL && d->round_id[0] != '\0' && strcmp(d->round_id, st->round) != 0)
            nb_new_round(st, d->round_id);
        if (d->has_seat && d->seat == seat->seat && d->has_cards)
            for (size_t i = 0; i < d->cards.len && st->ncards < NIUNIU_HAND_CARDS; i++)
                st->cards[st->ncards++] = d->cards.data[i];
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_TURN: {
        const Croupier__Turn *t = m->turn;
        if (t->seat != seat->seat) {
            st->window = NB_NONE;
            break;
        }
        st->turn_gen++;
        st->window = !(t->has_min_amount && t->has_max_amount) ? NB_SHOW
                     : t->min_amount == 0                      ? NB_BID
                                                               : NB_BET;
        if (st->window == NB_BID)
            st->max_bid = (int)t->max_amount;
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END:
        for (size_t i = 0; i < m->round_end->n_deltas; i++)
            if (m->round_end->deltas[i]->seat == seat->seat && st->stack > 0)
                st->stack += m->round_end->deltas[i]->delta;
        st->window = NB_NONE;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_RESULT:
        /* The reply to the move sent last: our decision is made, or our view was wrong. */
        if (!st->sent)
            break;
        st->sent = false;
        if (m->result->error != NULL)
            st->refresh = true;
        else if (st->sent_gen == st->turn_gen)
            st->window = NB_NONE;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
        st->closing = true;
        st->window = NB_NONE;
        break;
    default:
        break;
    }
}

static void nb_on_sent(void *stp, const bot_seat_t *seat, const bot_move_t *mv)
{
    (void)seat;
    (void)mv;
    st_niu_t *st = stp;
    st->sent = true;
    st->sent_gen = st->last_gen;
}

/* The bet: 1 stake, or with a niu among the first four cards a random option up to 3 stakes;
 * never one the stack does not cover at the banker's multiplier. */
static int nb_bet(const st_niu_t *st, const bot_seat_t *seat, bot_rng_t *rng)
{
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    cfg.stake = seat->stake > 0 ? seat->stake : 1;
    int want =
        nb_niu(st->cards, st->ncards < 4 ? st->ncards : 4) ? 1 + (int)bot_rng_below(rng, 3) : 1;
    int mult = st->mult >= 1 && st->mult <= cfg.max_bid ? st->mult : cfg.max_bid;
    cfg.max_bid = mult > cfg.max_bid ? mult : cfg.max_bid;
    while (want > 1 && !niuniu_bet_allowed(&cfg, st->stack, mult, want))
        want--;
    return want;
}

static int nb_decide(void *stp, const bot_seat_t *seat, bot_rng_t *rng, bot_move_t *out,
                     int *delay_ms)
{
    st_niu_t *st = stp;
    *delay_ms = -1;
    if (st->closing)
        return 0;
    if (st->refresh || (st->window == NB_BET && st->stack <= 0)) {
        *delay_ms = 0; /* the Snapshot comes to a zeroed block: refresh is over then */
        return 2;
    }
    if (st->window == NB_NONE)
        return 0;
    *delay_ms = 40 + (int)bot_rng_below(rng, 200);
    Croupier__Niuniu__NiuAction a = CROUPIER__NIUNIU__NIU_ACTION__INIT;
    a.move = (Croupier__Niuniu__NiuMove)st->window;
    a.has_amount = st->window != NB_SHOW;
    if (st->window == NB_BID) {
        int top = st->max_bid > 0 ? st->max_bid : 1;
        bool niu = nb_niu(st->cards, st->ncards < 4 ? st->ncards : 4);
        a.amount = niu ? 1 + bot_rng_below(rng, (uint32_t)top) : bot_rng_below(rng, 10) < 8 ? 0 : 1;
    } else if (st->window == NB_BET) {
        a.amount = (uint32_t)nb_bet(st, seat, rng);
    }
    if (bot_move_game(out, &a.base) != 0)
        return 0;
    st->last_gen = st->turn_gen;
    return 1;
}

const bot_strategy_ops_t bot_strategy_niuniu = {
    .game = "niuniu",
    .engine = CROUPIER__ENGINE__ENGINE_GAME,
    .state_size = sizeof(st_niu_t),
    .round_in_snapshot = true,
    .round_by_action = false,
    .on_seat = nb_on_seat,
    .on_event = nb_on_event,
    .decide = nb_decide,
    .on_sent = nb_on_sent,
    .game_state_desc = &croupier__niuniu__niu_state__descriptor,
    .game_event_desc = &croupier__niuniu__niu_event__descriptor,
    .game_action_desc = &croupier__niuniu__niu_action__descriptor,
    .on_game = nb_on_game,
};
