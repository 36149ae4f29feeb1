/* shed_game -- the shared shedding-game state machine; see shed_game.h and shed_rules.h. */
#include "shed_rules.h"

#include <bsd/stdlib.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deck.h"
#include "xmalloc.h"

static const shed_rules_t *const shed_all_rules[] = {
    &shed_rules_doudizhu,
    &shed_rules_runfast,
    &shed_rules_bigtwo,
    &shed_rules_guandan,
};

const shed_rules_t *shed_rules_find(const char *name)
{
    for (size_t i = 0; i < sizeof shed_all_rules / sizeof shed_all_rules[0]; i++)
        if (!strcmp(shed_all_rules[i]->name, name))
            return shed_all_rules[i];
    return NULL;
}

const char *shed_rules_name(const shed_rules_t *rules)
{
    return rules->name;
}

int shed_rules_seats(const shed_rules_t *rules)
{
    return rules->seats;
}

unsigned shed_rules_options(const shed_rules_t *rules)
{
    return rules->options;
}

unsigned shed_option_from_name(const char *name)
{
    static const struct {
        const char *name;
        unsigned flag;
    } opts[] = {
        {"report-single", SHED_OPT_RF_REPORT_SINGLE},
        {"four-with-two", SHED_OPT_RF_FOUR_WITH_TWO},
        {"four-with-three", SHED_OPT_RF_FOUR_WITH_THREE},
        {"bomb-pays", SHED_OPT_RF_BOMB_PAYS},
        {"a-three-fails", SHED_OPT_GD_A_THREE_FAILS},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (!strcmp(opts[i].name, name))
            return opts[i].flag;
    return 0;
}

int shed_rules_classify(const shed_rules_t *rules, shed_set_t cards, bool last, shed_combo_t *out)
{
    if (shed_set_empty(cards))
        return SHED_E_MALFORMED;
    return rules->classify(NULL, cards, last, out) ? SHED_E_MALFORMED : 0;
}

bool shed_rules_beats(const shed_rules_t *rules, const shed_combo_t *a, const shed_combo_t *b)
{
    return a->type != 0 && (b->type == 0 || rules->beats(a, b));
}

const char *shed_strerror(int err)
{
    switch (err) {
    case SHED_OK:
        return "ok";
    case SHED_E_PHASE:
        return "action not allowed in this phase of the deal";
    case SHED_E_TURN:
        return "not this seat's turn";
    case SHED_E_NOT_HELD:
        return "cards not held";
    case SHED_E_MALFORMED:
        return "not a valid combination";
    case SHED_E_WEAKER:
        return "does not beat the move to beat";
    case SHED_E_MUST_BEAT:
        return "must beat when able";
    case SHED_E_MUST_LEAD:
        return "the leader must play";
    case SHED_E_BAD_BID:
        return "bid not allowed";
    case SHED_E_OPENING:
        return "first play breaks the opening rule";
    case SHED_E_ACTION:
        return "unknown action";
    case SHED_E_TRIBUTE:
        return "card not allowed as tribute or return";
    case SHED_E_NOT_HIGHEST:
        return "the next player has one card left: a single must be your highest card";
    default:
        return "unknown error";
    }
}

shed_game_t *shed_game_create(const shed_rules_t *rules, const shed_config_t *cfg)
{
    shed_config_t c = {.base_stake = 1, .rake_permille = 0};
    if (rules == NULL)
        return NULL;
    if (cfg != NULL) {
        if (cfg->base_stake < 1 || cfg->base_stake > ((int64_t)1 << 40) || cfg->rake_permille < 0 ||
            cfg->rake_permille > 1000 || (cfg->options & ~rules->options) != 0 ||
            cfg->bomb_units < 0 || cfg->bomb_units > 1000 ||
            (cfg->bomb_units != 0 && !(cfg->options & SHED_OPT_RF_BOMB_PAYS)))
            return NULL;
        c = *cfg;
        if ((c.options & SHED_OPT_RF_BOMB_PAYS) && c.bomb_units == 0)
            c.bomb_units = SHED_BOMB_UNITS_DEFAULT;
    }
    shed_game_t *g = xcalloc(1, sizeof *g);
    g->rules = rules;
    g->cfg = c;
    g->seats = rules->seats;
    g->phase = SHED_PHASE_IDLE;
    g->turn = -1;
    g->lead_seat = -1;
    g->landlord = -1;
    g->bid_seat = -1;
    g->level = -1;
    return g;
}

void shed_game_destroy(shed_game_t *g)
{
    free(g);
}

void shed_game_push_event(shed_game_t *g, int kind, int seat, int value, shed_set_t cards)
{
    if (g->nev >= SHED_MAX_EVENTS)
        return;
    shed_event_t *e = &g->ev[g->nev++];
    e->kind = kind;
    e->seat = seat;
    e->value = value;
    e->cards = cards;
}

static const shed_set_t no_cards = {{0, 0}};

/*
 * Deals `order` (already checked to be the game's deck) round-robin and resets every per-deal
 * field. Leftover cards go to g->extra.
 */
static void game_start(shed_game_t *g, const shed_card_t *order, int first)
{
    const shed_rules_t *R = g->rules;
    memset(g->hand, 0, sizeof g->hand);
    g->extra = no_cards;
    int dealt = R->hand_size * g->seats;
    for (int i = 0; i < dealt; i++)
        shed_set_add(&g->hand[i % g->seats], order[i]);
    for (int i = dealt; i < R->deck_size; i++)
        shed_set_add(&g->extra, order[i]);
    g->lead_seat = -1;
    memset(&g->beat, 0, sizeof g->beat);
    g->passes = 0;
    g->bid_best = 0;
    g->bid_seat = -1;
    g->bids_made = 0;
    g->landlord = -1;
    g->doublings = 0;
    memset(g->bombs, 0, sizeof g->bombs);
    memset(g->plays, 0, sizeof g->plays);
    g->nplays = 0;
    memset(g->out, 0, sizeof g->out);
    memset(g->finish, 0, sizeof g->finish);
    g->nfinished = 0;
    memset(&g->settle, 0, sizeof g->settle);
    g->nev = 0;
    g->turn = R->first_seat(g, ((first % g->seats) + g->seats) % g->seats);
    g->phase = R->bidding ? SHED_PHASE_BID : SHED_PHASE_PLAY;
    if (R->start)
        R->start(g);
    shed_game_push_event(g, SHED_EV_DEALT, g->turn, 0, no_cards);
}

/* The next seat after `seat` that still holds cards (games that play on after going out). */
static int next_active(const shed_game_t *g, int seat)
{
    for (int i = 1; i <= g->seats; i++) {
        int s = (seat + i) % g->seats;
        if (!g->out[s])
            return s;
    }
    return seat;
}

int shed_game_deal_order(shed_game_t *g, const shed_card_t *order, int n, int first)
{
    shed_card_t deck[SHED_MAX_CARDS];
    if (n != g->rules->deck_size)
        return -EINVAL;
    g->rules->deck(deck);
    /* A permutation of the deck: same multiset of ids (decks are sets, so same set). */
    shed_set_t want = {{0, 0}}, got = {{0, 0}};
    for (int i = 0; i < n; i++) {
        shed_set_add(&want, deck[i]);
        if (!shed_card_valid(order[i]) || shed_set_has(got, order[i]))
            return -EINVAL;
        shed_set_add(&got, order[i]);
    }
    if (!shed_set_eq(want, got))
        return -EINVAL;
    game_start(g, order, first);
    return 0;
}

/* shed_game_setup_position with, when level >= 0, the deal's level rank index set before the
 * play to beat is classified (Guandan reads wild cards and level cards by it). */
static int setup_position(shed_game_t *g, int seat, shed_set_t hand, shed_set_t to_beat, int level)
{
    shed_card_t deck[SHED_MAX_CARDS];
    shed_set_t all = {{0, 0}};
    int rc;
    g->rules->deck(deck);
    for (int i = 0; i < g->rules->deck_size; i++)
        shed_set_add(&all, deck[i]);
    if (seat < 0 || seat >= g->seats || shed_set_empty(hand) ||
        !shed_set_contains(all, shed_set_union(hand, to_beat)) ||
        shed_set_size(shed_set_union(hand, to_beat)) !=
            shed_set_size(hand) + shed_set_size(to_beat))
        return -EINVAL;
    shed_game_t saved = *g;
    game_start(g, deck, seat); /* resets the per-deal state (and runs the game's start hook) */
    memset(g->hand, 0, sizeof g->hand);
    g->extra = no_cards;
    g->hand[seat] = hand;
    g->phase = SHED_PHASE_PLAY;
    g->turn = seat;
    g->nplays = 1;
    g->landlord = g->rules->bidding ? seat : -1;
    g->bid_best = g->rules->bidding ? 1 : 0;
    g->nev = 0;
    if (level >= 0)
        g->level = level;
    if (!shed_set_empty(to_beat)) {
        shed_combo_t c;
        rc = g->rules->classify(g, to_beat, false, &c);
        if (rc != 0) {
            *g = saved;
            return -EINVAL;
        }
        g->beat = c;
        g->lead_seat = (seat + g->seats - 1) % g->seats;
    }
    return 0;
}

int shed_game_setup_position(shed_game_t *g, int seat, shed_set_t hand, shed_set_t to_beat)
{
    return setup_position(g, seat, hand, to_beat, -1);
}

int shed_game_setup_hand(shed_game_t *g, int seat, shed_set_t hand)
{
    shed_card_t deck[SHED_MAX_CARDS];
    shed_set_t all = {{0, 0}}, used = g->extra;
    if (g->phase != SHED_PHASE_PLAY || seat < 0 || seat >= g->seats || seat == g->turn)
        return -EINVAL;
    g->rules->deck(deck);
    for (int i = 0; i < g->rules->deck_size; i++)
        shed_set_add(&all, deck[i]);
    for (int s = 0; s < g->seats; s++)
        if (s != seat)
            used = shed_set_union(used, g->hand[s]);
    if (!shed_set_contains(all, hand) || !shed_set_eq(shed_set_minus(hand, used), hand))
        return -EINVAL;
    g->hand[seat] = hand;
    g->out[seat] = false;
    return 0;
}

int shed_game_setup_level_position(shed_game_t *g, int seat, shed_set_t hand, shed_set_t to_beat,
                                   int level)
{
    if (g->rules->legal_gives == NULL || level < 0 || level > 12)
        return -EINVAL;
    return setup_position(g, seat, hand, to_beat, level);
}

int shed_game_setup_tribute(shed_game_t *g, int seat, shed_set_t hand, int level, bool returning)
{
    if (g->rules->legal_gives == NULL || level < 0 || level > 12 || g->seats < 2)
        return -EINVAL;
    int rc = setup_position(g, seat, hand, no_cards, level);
    if (rc != 0)
        return rc;
    /* One tribute between `seat` and the next seat; only the giver's hand, the stage and the
     * level decide which cards may be given. */
    int other = (seat + 1) % g->seats;
    g->phase = SHED_PHASE_TRIBUTE;
    g->ntrib = 1;
    g->trib_stage = returning ? 2 : 1;
    g->trib_payer[0] = returning ? other : seat;
    g->trib_recv[0] = returning ? seat : other;
    g->trib_card[0] = -1;
    g->trib_payer[1] = g->trib_recv[1] = g->trib_card[1] = -1;
    g->trib_done[0] = g->trib_done[1] = 0;
    return 0;
}

int shed_game_tribute(const shed_game_t *g, int *to_seat)
{
    int to = -1;
    if (g->phase != SHED_PHASE_TRIBUTE || g->trib_stage == 0) {
        if (to_seat)
            *to_seat = -1;
        return 0;
    }
    if (g->trib_stage == 1) {
        /* One tribute goes to the first out; with two, the cards decide after both are in. */
        if (g->ntrib == 1)
            to = g->trib_recv[0];
    } else {
        int t = g->turn == g->trib_recv[0] && !g->trib_done[0] ? 0 : 1;
        to = g->trib_payer[t];
    }
    if (to_seat)
        *to_seat = to;
    return g->trib_stage;
}

int shed_game_deal_secure(shed_game_t *g)
{
    shed_card_t deck[SHED_MAX_CARDS];
    uint32_t first;
    g->rules->deck(deck);
    if (shed_shuffle_secure(deck, g->rules->deck_size) != 0 ||
        deck_uniform((uint32_t)g->seats, &first) != 0)
        return -EIO;
    game_start(g, deck, (int)first);
    return 0;
}

int shed_game_deck(const shed_game_t *g, shed_card_t *out)
{
    g->rules->deck(out);
    return g->rules->deck_size;
}

void shed_game_deal_seeded(shed_game_t *g, uint64_t seed)
{
    shed_card_t deck[SHED_MAX_CARDS];
    shed_rng_t rng;
    shed_rng_seed(&rng, seed);
    g->rules->deck(deck);
    shed_shuffle_seeded(deck, g->rules->deck_size, &rng);
    game_start(g, deck, (int)shed_rng_below(&rng, (uint32_t)g->seats));
}

/*
 * Ends the deal: `winner` emptied its hand (or -1: voided). The rule set computes gross
 * deltas; the rake is then taken from each winner's gain, so the deltas sum to -rake.
 */
static void game_finish(shed_game_t *g, int winner)
{
    shed_settlement_t *s = &g->settle;
    memset(s, 0, sizeof *s);
    s->seats = g->seats;
    s->winner = winner;
    if (winner < 0) {
        s->voided = true;
    } else {
        g->rules->settle(g, winner);
        for (int i = 0; i < g->seats; i++) {
            if (s->delta[i] > 0) {
                int64_t cut = s->delta[i] * g->cfg.rake_permille / 1000;
                s->delta[i] -= cut;
                s->rake += cut;
            }
        }
    }
    g->phase = SHED_PHASE_OVER;
    g->turn = -1;
    shed_game_push_event(g, SHED_EV_SETTLED, winner, 0, no_cards);
}

/*
 * A bid (0 = pass) in the bidding phase. Ends the bidding after a maximum bid or once every
 * seat has spoken: the highest bidder becomes landlord and takes the extra cards, or, with no
 * bid at all, the deal is voided. Returns SHED_OK or an error with nothing changed.
 */
static int apply_bid(shed_game_t *g, const shed_action_t *a)
{
    if (g->phase != SHED_PHASE_BID)
        return SHED_E_PHASE;
    if (a->seat != g->turn)
        return SHED_E_TURN;
    if (a->bid != 0 && (a->bid <= g->bid_best || a->bid > g->rules->max_bid))
        return SHED_E_BAD_BID;
    g->nev = 0;
    shed_game_push_event(g, SHED_EV_BID, a->seat, a->bid, no_cards);
    g->bids_made++;
    if (a->bid) {
        g->bid_best = a->bid;
        g->bid_seat = a->seat;
    }
    if (a->bid == g->rules->max_bid || g->bids_made == g->seats) {
        if (g->bid_seat < 0) {
            shed_game_push_event(g, SHED_EV_VOID, -1, 0, no_cards);
            game_finish(g, -1);
            return SHED_OK;
        }
        g->landlord = g->bid_seat;
        g->hand[g->landlord] = shed_set_union(g->hand[g->landlord], g->extra);
        shed_game_push_event(g, SHED_EV_LANDLORD, g->landlord, g->bid_best, g->extra);
        g->phase = SHED_PHASE_PLAY;
        g->turn = g->landlord;
        return SHED_OK;
    }
    g->turn = (g->turn + 1) % g->seats;
    return SHED_OK;
}

/*
 * A play: checked in the order phase, turn, cards held, combination, opening rule, beats the
 * move to beat; only then applied. Emptying the hand ends the deal, or (games that play on)
 * marks the seat out until the game says the deal is over.
 */
static int apply_play(shed_game_t *g, const shed_action_t *a)
{
    shed_combo_t c;
    if (g->phase != SHED_PHASE_PLAY)
        return SHED_E_PHASE;
    if (a->seat != g->turn)
        return SHED_E_TURN;
    if (shed_set_empty(a->cards))
        return SHED_E_MALFORMED;
    if (!shed_set_contains(g->hand[a->seat], a->cards))
        return SHED_E_NOT_HELD;
    shed_set_t after = shed_set_minus(g->hand[a->seat], a->cards);
    if (g->rules->classify(g, a->cards, shed_set_empty(after), &c) != 0)
        return SHED_E_MALFORMED;
    if (g->nplays == 0 && g->rules->check_opening && g->rules->check_opening(g, a->cards) != 0)
        return SHED_E_OPENING;
    if (g->beat.type != 0 && !g->rules->beats(&c, &g->beat))
        return SHED_E_WEAKER;
    if (g->rules->check_play) {
        int rc = g->rules->check_play(g, a->cards, &c);
        if (rc != 0)
            return rc;
    }
    g->nev = 0;
    g->hand[a->seat] = after;
    g->plays[a->seat]++;
    g->nplays++;
    g->beat = c;
    g->lead_seat = a->seat;
    g->passes = 0;
    shed_game_push_event(g, SHED_EV_PLAY, a->seat, c.type, a->cards);
    if (g->rules->on_play)
        g->rules->on_play(g, a->seat, &c);
    if (shed_set_empty(after)) {
        shed_game_push_event(g, SHED_EV_OUT, a->seat, g->nfinished, no_cards);
        g->out[a->seat] = true;
        g->finish[g->nfinished++] = a->seat;
        if (!g->rules->continue_after_out || g->rules->deal_over(g)) {
            game_finish(g, g->finish[0]);
            return SHED_OK;
        }
    }
    g->turn = next_active(g, g->turn);
    return SHED_OK;
}

/* True when the player to act has some play that beats the move to beat. */
static bool can_beat(const shed_game_t *g)
{
    shed_set_t one;
    int n = g->rules->legal_plays(g, &one, 1);
    return n != 0;
}

/*
 * A pass: refused to the leader, and where the game demands it to a player who can beat. When
 * every other player still in has passed, the trick's winner (or its partner, or the next
 * player still in) leads a new trick.
 */
static int apply_pass(shed_game_t *g, const shed_action_t *a)
{
    if (g->phase != SHED_PHASE_PLAY)
        return SHED_E_PHASE;
    if (a->seat != g->turn)
        return SHED_E_TURN;
    if (g->beat.type == 0)
        return SHED_E_MUST_LEAD;
    if (g->rules->must_beat && can_beat(g))
        return SHED_E_MUST_BEAT;
    g->nev = 0;
    shed_game_push_event(g, SHED_EV_PASS, a->seat, 0, no_cards);
    g->passes++;
    int active = 0;
    for (int s = 0; s < g->seats; s++)
        active += !g->out[s];
    if (g->passes >= active - (g->out[g->lead_seat] ? 0 : 1)) {
        /* trick over: its winner leads; if out, the partner ("jie feng"), else the next */
        int lead = g->lead_seat;
        if (g->out[lead]) {
            int partner = (lead + g->rules->partner_offset) % g->seats;
            lead = (g->rules->partner_offset && !g->out[partner]) ? partner : next_active(g, lead);
        }
        g->turn = lead;
        g->passes = 0;
        memset(&g->beat, 0, sizeof g->beat);
        shed_game_push_event(g, SHED_EV_TRICK, g->turn, 0, no_cards);
    } else {
        g->turn = next_active(g, g->turn);
    }
    return SHED_OK;
}

/* A tribute or return card (Guandan): one held card, then the game's own checks. */
static int apply_give(shed_game_t *g, const shed_action_t *a)
{
    if (g->phase != SHED_PHASE_TRIBUTE || g->rules->give == NULL)
        return SHED_E_PHASE;
    if (a->seat != g->turn)
        return SHED_E_TURN;
    if (shed_set_size(a->cards) != 1)
        return SHED_E_TRIBUTE;
    if (!shed_set_contains(g->hand[a->seat], a->cards))
        return SHED_E_NOT_HELD;
    return g->rules->give(g, a);
}

int shed_game_apply(shed_game_t *g, const shed_action_t *a)
{
    if (a->seat < 0 || a->seat >= g->seats)
        return SHED_E_TURN;
    switch (a->kind) {
    case SHED_ACT_BID:
        return apply_bid(g, a);
    case SHED_ACT_PLAY:
        return apply_play(g, a);
    case SHED_ACT_PASS:
        return apply_pass(g, a);
    case SHED_ACT_GIVE:
        return apply_give(g, a);
    default:
        return SHED_E_ACTION;
    }
}

const shed_event_t *shed_game_events(const shed_game_t *g, int *n)
{
    *n = g->nev;
    return g->ev;
}

const shed_rules_t *shed_game_rules(const shed_game_t *g)
{
    return g->rules;
}
int shed_game_phase(const shed_game_t *g)
{
    return g->phase;
}
int shed_game_turn(const shed_game_t *g)
{
    return g->turn;
}
int shed_game_seats(const shed_game_t *g)
{
    return g->seats;
}
shed_set_t shed_game_hand(const shed_game_t *g, int seat)
{
    return (seat >= 0 && seat < g->seats) ? g->hand[seat] : no_cards;
}
shed_set_t shed_game_extra(const shed_game_t *g)
{
    return g->extra;
}
shed_combo_t shed_game_to_beat(const shed_game_t *g, int *by_seat)
{
    if (by_seat)
        *by_seat = g->beat.type ? g->lead_seat : -1;
    return g->beat;
}
int shed_game_landlord(const shed_game_t *g, int *bid)
{
    if (bid)
        *bid = g->landlord >= 0 ? g->bid_best : 0;
    return g->landlord;
}
const shed_settlement_t *shed_game_settlement(const shed_game_t *g)
{
    return g->phase == SHED_PHASE_OVER ? &g->settle : NULL;
}

int shed_game_legal_plays(const shed_game_t *g, shed_set_t *out, int cap)
{
    if (g->phase == SHED_PHASE_TRIBUTE && g->rules->legal_gives)
        return g->rules->legal_gives(g, out, cap);
    if (g->phase != SHED_PHASE_PLAY)
        return 0;
    return g->rules->legal_plays(g, out, cap);
}

bool shed_game_may_pass(const shed_game_t *g)
{
    if (g->phase != SHED_PHASE_PLAY || g->beat.type == 0)
        return false;
    return !(g->rules->must_beat && can_beat(g));
}

int shed_game_legal_bids(const shed_game_t *g, int *out)
{
    if (g->phase != SHED_PHASE_BID)
        return 0;
    int n = 0;
    out[n++] = 0;
    for (int b = g->bid_best + 1; b <= g->rules->max_bid; b++)
        out[n++] = b;
    return n;
}

int shed_game_classify(const shed_game_t *g, shed_set_t cards, bool last, shed_combo_t *out)
{
    if (shed_set_empty(cards))
        return SHED_E_MALFORMED;
    return g->rules->classify(g, cards, last, out) ? SHED_E_MALFORMED : 0;
}

bool shed_game_is_out(const shed_game_t *g, int seat)
{
    return seat >= 0 && seat < g->seats && g->out[seat];
}

unsigned shed_game_options(const shed_game_t *g)
{
    return g->cfg.options;
}

int shed_game_bomb_units(const shed_game_t *g)
{
    return g->cfg.bomb_units;
}

int shed_game_a_failures(const shed_game_t *g, int team)
{
    return (team == 0 || team == 1) ? g->a_fails[team] : 0;
}

int shed_game_level(const shed_game_t *g, int *team_steps)
{
    if (team_steps) {
        team_steps[0] = g->team_step[0];
        team_steps[1] = g->team_step[1];
    }
    return g->level;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/*
 * The state's fields, in a fixed order, hashed in four interleaved lanes folded at the end
 * (the random deal test takes two digests per refused action, so their cost matters).
 */
uint64_t shed_game_digest(const shed_game_t *g)
{
    /* each step (h ^ v) * odd is a bijection of h: a lane differs once one of its values does */
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    uint64_t h0 = 1469598103934665603ull, h1 = 0x6a09e667f3bcc908ull;
    uint64_t h2 = 0xbb67ae8584caa73bull, h3 = 0x3c6ef372fe94f82bull;
#define DIGEST_ROUND(a, b, c, d)                                                                   \
    do {                                                                                           \
        h0 = (h0 ^ (uint64_t)(a)) * k;                                                             \
        h1 = (h1 ^ (uint64_t)(b)) * k;                                                             \
        h2 = (h2 ^ (uint64_t)(c)) * k;                                                             \
        h3 = (h3 ^ (uint64_t)(d)) * k;                                                             \
    } while (0)
    DIGEST_ROUND(g->phase, (int64_t)g->turn, g->extra.w[0], g->extra.w[1]);
    for (int i = 0; i < g->seats; i++)
        DIGEST_ROUND(g->hand[i].w[0], g->hand[i].w[1], g->plays[i], g->settle.delta[i]);
    DIGEST_ROUND((int64_t)g->lead_seat,
                 ((uint64_t)g->beat.type << 24) | ((uint64_t)g->beat.rank << 16) |
                     ((uint64_t)g->beat.len << 8) | g->beat.ncards,
                 g->beat.key, g->passes);
    DIGEST_ROUND(((uint64_t)g->bid_best << 32) | (uint32_t)(g->bid_seat + 1), g->bids_made,
                 (int64_t)g->landlord, g->doublings);
    uint64_t seat[SHED_MAX_SEATS] = {0};
    for (int i = 0; i < g->seats; i++)
        seat[i] =
            (uint64_t)g->out[i] | (uint64_t)g->finish[i] << 8 | (uint64_t)g->prev_finish[i] << 16;
    DIGEST_ROUND(seat[0], seat[1], seat[2], seat[3]);
    uint64_t trib[2];
    for (int i = 0; i < 2; i++)
        trib[i] = (uint64_t)(g->trib_payer[i] + 1) | (uint64_t)(g->trib_recv[i] + 1) << 8 |
                  (uint64_t)(g->trib_card[i] + 1) << 16 | (uint64_t)g->trib_done[i] << 32;
    DIGEST_ROUND(g->nplays, g->settle.rake,
                 (uint64_t)g->nfinished | (uint64_t)(g->level + 1) << 8 |
                     (uint64_t)g->team_step[0] << 16 | (uint64_t)g->team_step[1] << 24 |
                     (uint64_t)g->have_prev << 32 | (uint64_t)g->prev_upgrade << 40,
                 (uint64_t)g->ntrib | (uint64_t)g->trib_stage << 8);
    DIGEST_ROUND(trib[0], trib[1], g->a_fails[0] | (uint64_t)g->a_fails[1] << 8,
                 (uint64_t)g->bombs[0] | (uint64_t)g->bombs[1] << 16 | (uint64_t)g->bombs[2] << 32 |
                     (uint64_t)g->bombs[3] << 48);
#undef DIGEST_ROUND
    return mix(mix(mix(h0, h1), h2), h3);
}

void shed_game_match_get(const shed_game_t *g, shed_match_t *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 2; i++) {
        out->team_step[i] = g->team_step[i];
        out->a_fails[i] = g->a_fails[i];
    }
    memcpy(out->prev_finish, g->prev_finish, sizeof out->prev_finish);
    out->have_prev = g->have_prev;
    out->prev_upgrade = g->prev_upgrade;
}

int shed_game_match_set(shed_game_t *g, const shed_match_t *m)
{
    bool ok =
        (m->have_prev == 0 || m->have_prev == 1) && m->prev_upgrade >= 0 && m->prev_upgrade <= 3;
    for (int i = 0; i < 2; i++)
        ok = ok && m->team_step[i] >= 0 && m->team_step[i] <= 12 && m->a_fails[i] >= 0 &&
             m->a_fails[i] <= 3;
    /* a previous deal's finishing order is a permutation of the seats */
    unsigned seen = 0;
    for (int i = 0; ok && m->have_prev && i < g->seats; i++) {
        int f = m->prev_finish[i];
        ok = f >= 0 && f < g->seats && !(seen & (1u << f));
        seen |= 1u << (f >= 0 && f < 32 ? f : 0);
    }
    if (!ok)
        return -EINVAL;
    for (int i = 0; i < 2; i++) {
        g->team_step[i] = m->team_step[i];
        g->a_fails[i] = m->a_fails[i];
    }
    memcpy(g->prev_finish, m->prev_finish, sizeof g->prev_finish);
    g->have_prev = m->have_prev;
    g->prev_upgrade = m->prev_upgrade;
    return 0;
}
