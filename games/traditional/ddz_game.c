/*
 * ddz_game -- the Dou Dizhu rule set for the shed state machine (docs/rules/doudizhu.md):
 * 54 cards, 17 each and 3 bottom cards, bidding 1-3 for landlord, bombs/rocket/spring/
 * anti-spring double the stake.
 */
#include <errno.h>
#include <stdlib.h>

#include "ddz.h"
#include "shed_rules.h"

static void ddz_deck(shed_card_t *out)
{
    shed_deck_build(out, 1, true);
}

static void combo_from_move(const ddz_move_t *m, shed_combo_t *c)
{
    c->type = m->type;
    c->rank = m->rank;
    c->len = m->len;
    c->ncards = m->ncards;
    c->key = m->rank;
}

static void move_from_combo(const shed_combo_t *c, ddz_move_t *m)
{
    m->counts = 0;
    m->type = c->type;
    m->rank = c->rank;
    m->len = c->len;
    m->ncards = c->ncards;
}

static int ddz_rules_classify(const shed_game_t *g, shed_set_t cards, bool last, shed_combo_t *out)
{
    (void)g;
    ddz_move_t m;
    (void)last;
    if (cards.w[1] != 0 || ddz_classify(shed_set_counts(cards), &m) != 0)
        return SHED_E_MALFORMED;
    combo_from_move(&m, out);
    return 0;
}

static bool ddz_rules_beats(const shed_combo_t *a, const shed_combo_t *b)
{
    ddz_move_t ma, mb;
    move_from_combo(a, &ma);
    move_from_combo(b, &mb);
    return ddz_beats(&ma, &mb);
}

static int ddz_first_seat(const shed_game_t *g, int first)
{
    (void)g;
    return first;
}

typedef struct {
    shed_set_t hand;
    shed_set_t *out;
    int cap;
    int n;
} pick_ctx_t;

static int pick_cb(void *ctx, const ddz_move_t *m)
{
    pick_ctx_t *p = ctx;
    if (p->n >= p->cap)
        return 1;
    shed_set_pick(p->hand, m->counts, &p->out[p->n++]);
    return 0;
}

/*
 * Generates the move types of the player to act and picks the lowest-suited cards for each,
 * straight into out (no allocation). Returns the count or -ENOSPC (more than cap).
 */
static int ddz_legal_plays(const shed_game_t *g, shed_set_t *out, int cap)
{
    ddz_move_t beat;
    pick_ctx_t p = {.hand = g->hand[g->turn], .out = out, .cap = cap, .n = 0};
    move_from_combo(&g->beat, &beat);
    int n = ddz_moves_visit(shed_set_counts(p.hand), &beat, pick_cb, &p);
    return n < 0 ? -ENOSPC : p.n;
}

static void ddz_on_play(shed_game_t *g, int seat, const shed_combo_t *c)
{
    static const shed_set_t none = {{0, 0}};
    (void)seat;
    if (c->type == DDZ_BOMB || c->type == DDZ_ROCKET) {
        g->doublings++;
        shed_game_push_event(g, SHED_EV_DOUBLE, seat, g->doublings, none);
    }
}

/*
 * Stake units = bid x 2^(bombs + rockets) x 2 if spring (landlord wins before either peasant
 * plays) or anti-spring (peasants win after the landlord played only once). Each peasant pays
 * the landlord units x base stake when the landlord wins, and is paid as much when it loses.
 */
static void ddz_settle(shed_game_t *g, int winner)
{
    static const shed_set_t none = {{0, 0}};
    int L = g->landlord;
    bool spring = false;
    if (winner == L)
        spring = g->plays[(L + 1) % 3] == 0 && g->plays[(L + 2) % 3] == 0;
    else
        spring = g->plays[L] == 1;
    if (spring) {
        g->doublings++;
        shed_game_push_event(g, SHED_EV_DOUBLE, winner, g->doublings, none);
    }
    int64_t units = (int64_t)g->bid_best << (g->doublings > 40 ? 40 : g->doublings);
    int64_t stake = units * g->cfg.base_stake;
    int sign = winner == L ? 1 : -1;
    for (int s = 0; s < 3; s++)
        g->settle.delta[s] = s == L ? sign * 2 * stake : -sign * stake;
    g->settle.units = units;
}

const shed_rules_t shed_rules_doudizhu = {
    .name = "doudizhu",
    .seats = 3,
    .deck_size = 54,
    .hand_size = 17,
    .bidding = true,
    .max_bid = 3,
    .must_beat = false,
    .deck = ddz_deck,
    .classify = ddz_rules_classify,
    .beats = ddz_rules_beats,
    .first_seat = ddz_first_seat,
    .check_opening = NULL,
    .legal_plays = ddz_legal_plays,
    .on_play = ddz_on_play,
    .settle = ddz_settle,
};
