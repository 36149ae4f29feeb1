/*
 * Random-deal tests of the shedding-game state machine (games/traditional/shed_game.h) for
 * every rule set: deals are played to the end by random legal movers while illegal actions are
 * injected at every turn. Checked each step (docs/rules/<game>.md):
 *   - every injected illegal action is refused with its specific error, state unchanged;
 *   - every listed legal play is accepted;
 *   - cards are conserved (hands + set-aside + played = the deck, nothing twice);
 *   - turns go round in seat order, and a trick returns to whoever made the last play;
 *   - the settlement sums to minus the rake, the rake is never negative.
 * TRAD_DEALS deals per game (5,000 in suite 'unit', 1,000,000 in 'heavy', Guandan 250,000 there:
 * games/traditional/meson.build); the rule options
 * (shed_config_t.options) get their own shorter runs in suite 'unit'.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shed_game.h"

#ifndef TRAD_DEALS
#define TRAD_DEALS 5000
#endif
#define PLAYS_CAP 30000
#ifndef TRAD_OPTION_DEALS
#define TRAD_OPTION_DEALS 5000
#endif

/* check's ck_assert reports every passing call to the parent process in fork mode, which
 * dominates a loop of millions of checks; these only call into check when they fail. */
#define T_ASSERT(c)                                                                                \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_abort_msg("Assertion '%s' failed", #c);                                             \
    } while (0)
#define T_CMP(a, op, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_))                                                                           \
            ck_abort_msg("Assertion '%s %s %s' failed: %lld vs %lld", #a, #op, #b, a_, b_);        \
    } while (0)

static shed_set_t *plays;

static void setup(void)
{
    plays = malloc(PLAYS_CAP * sizeof *plays);
}

static void teardown(void)
{
    free(plays);
}

typedef struct {
    shed_game_t *g;
    shed_rng_t rng;
    shed_set_t played;
    int seats;
    long refused;
    long deals;      /* deals played (fewer under valgrind) */
    uint64_t digest; /* digest of the current state, set before a series of refusals */
    unsigned opts;   /* the game's SHED_OPT_* flags */
    long not_highest, fours, bomb_paid, a_failed, a_fallbacks; /* what the options did */
} run_t;

#define RF_FOUR_TYPE 7 /* runfast.c's type of four of a kind with kickers */

/* Run Fast "report single" in force: the option is on and the next player holds one card. */
static bool report_single(const run_t *r)
{
    int next = (shed_game_turn(r->g) + 1) % r->seats;
    return (r->opts & SHED_OPT_RF_REPORT_SINGLE) && shed_set_size(shed_game_hand(r->g, next)) == 1;
}

/* The highest rank of a one-deck hand (-1 when empty). */
static int top_rank(shed_set_t hand)
{
    int top = -1;
    for (int r = 0; r < 13; r++)
        if (shed_counts_get(shed_set_counts(hand), r) > 0)
            top = r;
    return top;
}

/* Refused with `want` and nothing changed. r->digest holds the state's digest beforehand (each
 * refusal leaves it unchanged, so one digest serves a whole series of refusals). */
static void expect_refused(run_t *r, const shed_action_t *a, int want, const char *what)
{
    uint64_t before = r->digest;
    int nev0;
    shed_game_events(r->g, &nev0);
    int rc = shed_game_apply(r->g, a);
    if (rc != want)
        ck_abort_msg("%s: %s: got '%s', want '%s'", shed_rules_name(shed_game_rules(r->g)), what,
                     shed_strerror(rc), shed_strerror(want));
    if (shed_game_digest(r->g) != before)
        ck_abort_msg("%s changed the state", what);
    int nev1;
    shed_game_events(r->g, &nev1);
    T_CMP(nev0, ==, nev1);
    r->refused++;
}

/* Cards set aside and not (yet) taken by anyone: Dou Dizhu's bottom cards before a landlord. */
static shed_set_t aside(const run_t *r)
{
    static const shed_set_t none = {{0, 0}};
    return shed_game_landlord(r->g, NULL) < 0 ? shed_game_extra(r->g) : none;
}

static shed_set_t all_held(const run_t *r)
{
    shed_set_t u = aside(r);
    for (int s = 0; s < r->seats; s++)
        u = shed_set_union(u, shed_game_hand(r->g, s));
    return u;
}

/* Injects the illegal actions that make sense in the current state. */
static void inject_illegal(run_t *r)
{
    shed_game_t *g = r->g;
    int turn = shed_game_turn(g), phase = shed_game_phase(g);
    int other = (turn + 1 + (int)shed_rng_below(&r->rng, (uint32_t)r->seats - 1)) % r->seats;
    shed_set_t hand = shed_game_hand(g, turn);
    shed_action_t a = {0};
    r->digest = shed_game_digest(g);

    /* wrong turn: the same kind of action by another seat, and a seat out of range */
    a.kind = phase == SHED_PHASE_BID       ? SHED_ACT_BID
             : phase == SHED_PHASE_TRIBUTE ? SHED_ACT_GIVE
                                           : SHED_ACT_PASS;
    a.seat = other;
    a.bid = 0;
    expect_refused(r, &a, SHED_E_TURN, "action out of turn");
    a.seat = r->seats;
    expect_refused(r, &a, SHED_E_TURN, "seat out of range");
    a.seat = -1;
    expect_refused(r, &a, SHED_E_TURN, "negative seat");
    a.seat = turn;
    a.kind = 77;
    expect_refused(r, &a, SHED_E_ACTION, "unknown action");

    if (phase == SHED_PHASE_BID) {
        int bids[8];
        int nb = shed_game_legal_bids(g, bids);
        a.kind = SHED_ACT_BID;
        a.bid = 4;
        expect_refused(r, &a, SHED_E_BAD_BID, "bid above the maximum");
        a.bid = -1;
        expect_refused(r, &a, SHED_E_BAD_BID, "negative bid");
        if (nb > 1 && bids[1] > 1) {
            a.bid = bids[1] - 1; /* not above the highest bid */
            expect_refused(r, &a, SHED_E_BAD_BID, "bid not above the highest");
        }
        a.kind = SHED_ACT_PLAY;
        a.cards = hand;
        expect_refused(r, &a, SHED_E_PHASE, "play while bidding");
        a.kind = SHED_ACT_PASS;
        expect_refused(r, &a, SHED_E_PHASE, "pass while bidding");
        return;
    }

    a.kind = SHED_ACT_BID;
    a.bid = 1;
    expect_refused(r, &a, SHED_E_PHASE, "bid while playing");

    if (phase == SHED_PHASE_TRIBUTE) {
        int ng = shed_game_legal_plays(g, plays, PLAYS_CAP);
        T_CMP(ng, >, 0);
        shed_card_t list[SHED_MAX_CARDS];
        int n = shed_set_list(hand, list);
        for (int i = 0; i < n; i++) {
            shed_set_t one = {{0, 0}};
            shed_set_add(&one, list[i]);
            bool ok = false;
            for (int j = 0; j < ng && !ok; j++)
                ok = shed_set_eq(plays[j], one);
            if (!ok) {
                a.kind = SHED_ACT_GIVE;
                a.cards = one;
                expect_refused(r, &a, SHED_E_TRIBUTE, "card not allowed as tribute/return");
                break;
            }
        }
        a.kind = SHED_ACT_GIVE;
        a.cards = plays[0];
        for (int i = 0; i < n && shed_set_size(a.cards) < 2; i++)
            shed_set_add(&a.cards, list[i]);
        expect_refused(r, &a, SHED_E_TRIBUTE, "two cards as tribute");
        a.cards = (shed_set_t){{0, 0}};
        expect_refused(r, &a, SHED_E_TRIBUTE, "no card as tribute");
        a.kind = SHED_ACT_PLAY;
        a.cards = plays[0];
        expect_refused(r, &a, SHED_E_PHASE, "play during the tribute");
        a.kind = SHED_ACT_PASS;
        expect_refused(r, &a, SHED_E_PHASE, "pass during the tribute");
        return;
    }
    if (!shed_set_empty(hand)) {
        shed_card_t first[SHED_MAX_CARDS];
        shed_set_list(hand, first);
        a.kind = SHED_ACT_GIVE;
        a.cards = (shed_set_t){{0, 0}};
        shed_set_add(&a.cards, first[0]);
        expect_refused(r, &a, SHED_E_PHASE, "tribute while playing");
    }

    /* cards not held: one card of someone else's hand (or of the set-aside cards) */
    shed_set_t theirs = shed_set_minus(all_held(r), hand);
    if (!shed_set_empty(theirs)) {
        shed_card_t list[SHED_MAX_CARDS];
        int n = shed_set_list(theirs, list);
        a.kind = SHED_ACT_PLAY;
        a.cards = (shed_set_t){{0, 0}};
        shed_set_add(&a.cards, list[shed_rng_below(&r->rng, (uint32_t)n)]);
        expect_refused(r, &a, SHED_E_NOT_HELD, "card not held");
        /* a card already played is not held either */
        if (!shed_set_empty(r->played)) {
            n = shed_set_list(r->played, list);
            a.cards = (shed_set_t){{0, 0}};
            shed_set_add(&a.cards, list[shed_rng_below(&r->rng, (uint32_t)n)]);
            expect_refused(r, &a, SHED_E_NOT_HELD, "card already played");
        }
    }
    a.kind = SHED_ACT_PLAY;
    a.cards = (shed_set_t){{0, 0}};
    expect_refused(r, &a, SHED_E_MALFORMED, "no cards");

    /* malformed: random subsets of the hand that do not classify */
    shed_card_t list[SHED_MAX_CARDS];
    int n = shed_set_list(hand, list);
    for (int tries = 0; tries < 4; tries++) {
        shed_set_t sub = {{0, 0}};
        int k = 2 + (int)shed_rng_below(&r->rng, 4);
        for (int i = 0; i < k && n > 0; i++)
            shed_set_add(&sub, list[shed_rng_below(&r->rng, (uint32_t)n)]);
        shed_combo_t c;
        if (shed_game_classify(g, sub, false, &c) != 0 &&
            shed_game_classify(g, sub, true, &c) != 0) {
            a.cards = sub;
            expect_refused(r, &a, SHED_E_MALFORMED, "not a combination");
            break;
        }
    }

    int by;
    shed_combo_t beat = shed_game_to_beat(g, &by);
    bool rs = report_single(r);
    int top = rs ? top_rank(hand) : -1;
    a.kind = SHED_ACT_PASS;
    a.cards = (shed_set_t){{0, 0}};
    if (beat.type == 0) {
        expect_refused(r, &a, SHED_E_MUST_LEAD, "pass when leading");
        /* report single: leading a single below the highest */
        for (int i = 0; i < n && rs; i++) {
            if (shed_card_rank(list[i]) == top)
                continue;
            a.kind = SHED_ACT_PLAY;
            a.cards = (shed_set_t){{0, 0}};
            shed_set_add(&a.cards, list[i]);
            expect_refused(r, &a, SHED_E_NOT_HIGHEST, "leading a single below the highest");
            r->not_highest++;
            break;
        }
    } else {
        /* weaker: single cards that are valid combinations but do not beat */
        int np = shed_game_legal_plays(g, plays, PLAYS_CAP);
        T_CMP(np, >=, 0);
        for (int i = 0; i < n; i++) {
            shed_set_t one = {{0, 0}};
            shed_set_add(&one, list[i]);
            /* no listed play has this rank alone (listing may choose another suit) */
            bool listed = false;
            for (int j = 0; j < np && !listed; j++)
                listed = shed_set_counts(plays[j]) == shed_set_counts(one);
            shed_combo_t c;
            if (!listed && shed_game_classify(g, one, n == 1, &c) == 0) {
                a.kind = SHED_ACT_PLAY;
                a.cards = one;
                /* Big Two's opening rule never applies here: someone already played; under
                 * report single, a single that beats is unlisted for being below the highest */
                if (rs && shed_rules_beats(shed_game_rules(g), &c, &beat)) {
                    T_CMP(shed_card_rank(list[i]), !=, top);
                    expect_refused(r, &a, SHED_E_NOT_HIGHEST, "single below the highest");
                    r->not_highest++;
                } else {
                    expect_refused(r, &a, SHED_E_WEAKER, "single that does not beat");
                }
                break;
            }
        }
        if (!shed_game_may_pass(g)) {
            a.kind = SHED_ACT_PASS;
            a.cards = (shed_set_t){{0, 0}};
            expect_refused(r, &a, SHED_E_MUST_BEAT, "pass when able to beat");
        }
    }
}

/* The next seat after `seat` still holding cards. */
static int next_in(const run_t *r, int seat)
{
    for (int i = 1; i <= r->seats; i++)
        if (!shed_game_is_out(r->g, (seat + i) % r->seats))
            return (seat + i) % r->seats;
    return seat;
}

/* Checks conservation: hands + extra + played are disjoint and make up the deck. */
static void check_conservation(const run_t *r, shed_set_t deck, int deck_size)
{
    int sum = shed_set_size(aside(r)) + shed_set_size(r->played);
    for (int s = 0; s < r->seats; s++)
        sum += shed_set_size(shed_game_hand(r->g, s));
    T_CMP(sum, ==, deck_size);
    T_ASSERT(shed_set_eq(shed_set_union(all_held(r), r->played), deck));
}

/*
 * What the options did in the last accepted action: report single lists only the highest
 * single, four of a kind with kickers only when switched on, bomb payments of the configured
 * units, Guandan's failures at A counted and the level back at 2 after the third. `np` plays
 * were listed before the action (in plays[]).
 */
static void check_options(run_t *r, bool rs, int top, int np)
{
    for (int i = 0; i < np && rs; i++)
        if (shed_set_size(plays[i]) == 1)
            T_CMP(top_rank(plays[i]), ==, top);
    int nev;
    const shed_event_t *ev = shed_game_events(r->g, &nev);
    for (int i = 0; i < nev; i++) {
        if (ev[i].kind == SHED_EV_PLAY && ev[i].value == RF_FOUR_TYPE &&
            !strcmp(shed_rules_name(shed_game_rules(r->g)), "runfast")) {
            int k = shed_set_size(ev[i].cards) - 4;
            T_ASSERT(r->opts & (k == 2 ? SHED_OPT_RF_FOUR_WITH_TWO : SHED_OPT_RF_FOUR_WITH_THREE));
            r->fours++;
        }
        if (ev[i].kind == SHED_EV_BOMB_PAID) {
            T_ASSERT(r->opts & SHED_OPT_RF_BOMB_PAYS);
            T_CMP(ev[i].value, ==, SHED_BOMB_UNITS_DEFAULT);
            r->bomb_paid++;
        }
        if (ev[i].kind == SHED_EV_DOUBLE)
            T_ASSERT(!(r->opts & SHED_OPT_RF_BOMB_PAYS));
        if (ev[i].kind == SHED_EV_A_FAILED) {
            int steps[2], team = ev[i].seat;
            T_ASSERT(r->opts & SHED_OPT_GD_A_THREE_FAILS);
            T_ASSERT(ev[i].value >= 1 && ev[i].value <= 3);
            shed_game_level(r->g, steps);
            T_CMP(steps[team], ==, ev[i].value == 3 ? 0 : 12);
            T_CMP(shed_game_a_failures(r->g, team), ==, ev[i].value == 3 ? 0 : ev[i].value);
            r->a_failed++;
            r->a_fallbacks += ev[i].value == 3;
        }
    }
}

/* Plays one whole deal with random legal actions, checking every invariant on the way. */
static void play_one_deal(run_t *r, shed_set_t deck, int deck_size, uint64_t seed)
{
    shed_game_t *g = r->g;
    shed_game_deal_seeded(g, seed);
    r->played = (shed_set_t){{0, 0}};
    check_conservation(r, deck, deck_size);
    int landlord_phase_seen = 0;
    for (int step = 0; step < 1000; step++) {
        int phase = shed_game_phase(g);
        if (phase == SHED_PHASE_OVER)
            break;
        int turn = shed_game_turn(g);
        T_ASSERT(turn >= 0 && turn < r->seats);
        if (shed_rng_below(&r->rng, 4) == 0)
            inject_illegal(r);
        shed_action_t a = {.seat = turn};
        int by_before;
        shed_combo_t beat_before = shed_game_to_beat(g, &by_before);
        if (phase == SHED_PHASE_BID) {
            int bids[8];
            int nb = shed_game_legal_bids(g, bids);
            T_CMP(nb, >, 0);
            a.kind = SHED_ACT_BID;
            a.bid = bids[shed_rng_below(&r->rng, (uint32_t)nb)];
            T_CMP(shed_game_apply(g, &a), ==, SHED_OK);
            landlord_phase_seen = 1;
            continue;
        }
        if (phase == SHED_PHASE_TRIBUTE) {
            int ng = shed_game_legal_plays(g, plays, PLAYS_CAP);
            T_CMP(ng, >, 0);
            a.kind = SHED_ACT_GIVE;
            a.cards = plays[shed_rng_below(&r->rng, (uint32_t)ng)];
            T_CMP(shed_game_apply(g, &a), ==, SHED_OK);
            check_conservation(r, deck, deck_size);
            continue;
        }
        int np = shed_game_legal_plays(g, plays, PLAYS_CAP);
        T_CMP(np, >=, 0);
        bool may_pass = shed_game_may_pass(g);
        T_ASSERT(np > 0 || may_pass);
        bool rs = report_single(r);
        int top = rs ? top_rank(shed_game_hand(g, turn)) : -1;
        int pick = (int)shed_rng_below(&r->rng, (uint32_t)np + (may_pass ? 1 : 0));
        if (pick == np) {
            a.kind = SHED_ACT_PASS;
        } else {
            a.kind = SHED_ACT_PLAY;
            a.cards = plays[pick];
        }
        int rc = shed_game_apply(g, &a);
        if (rc != SHED_OK)
            ck_abort_msg("legal action refused: %s", shed_strerror(rc));
        if (a.kind == SHED_ACT_PLAY)
            r->played = shed_set_union(r->played, a.cards);
        check_conservation(r, deck, deck_size);
        if (r->opts)
            check_options(r, rs, top, np);
        if (shed_game_phase(g) == SHED_PHASE_OVER)
            break;
        /* turn order */
        int by_after;
        shed_combo_t beat_after = shed_game_to_beat(g, &by_after);
        if (a.kind == SHED_ACT_PASS && beat_after.type == 0) {
            /* trick back to the last player; if out, the partner (Guandan), else the next */
            int want = by_before;
            if (shed_game_is_out(g, want))
                want = r->seats == 4 && !strcmp(shed_rules_name(shed_game_rules(g)), "guandan") &&
                               !shed_game_is_out(g, (want + 2) % 4)
                           ? (want + 2) % 4
                           : next_in(r, want);
            T_CMP(shed_game_turn(g), ==, want);
        } else {
            T_CMP(shed_game_turn(g), ==, next_in(r, turn));
        }
        (void)beat_before;
    }
    T_CMP(shed_game_phase(g), ==, SHED_PHASE_OVER);
    const shed_settlement_t *s = shed_game_settlement(g);
    T_ASSERT(NULL != s);
    int64_t sum = 0;
    for (int i = 0; i < r->seats; i++)
        sum += s->delta[i];
    T_CMP(s->rake, >=, 0);
    T_CMP(sum, ==, -s->rake);
    if (!s->voided) {
        T_ASSERT(shed_set_empty(shed_game_hand(g, s->winner)));
        /* the first out is always on the winning side (bombs paid at once may outweigh it) */
        if (!(r->opts & SHED_OPT_RF_BOMB_PAYS))
            T_CMP(s->delta[s->winner], >, 0);
    } else {
        T_ASSERT(landlord_phase_seen);
        for (int i = 0; i < r->seats; i++)
            T_CMP(s->delta[i], ==, 0);
    }
    /* after the end every action is refused */
    shed_action_t a = {.kind = SHED_ACT_PASS, .seat = 0};
    r->digest = shed_game_digest(g);
    expect_refused(r, &a, SHED_E_PHASE, "pass after the end");
}

/* Plays `deals` random deals of game `name` with the rule options `opts`; *out (may be NULL)
 * gets the run's counters. */
static void run_game_opts(const char *name, long deals, unsigned opts, run_t *out)
{
    /* Under valgrind (./dev test sets CROUPIER_VALGRIND=1) a fiftieth of the deals checks the
     * same code paths for memory errors in a bearable time; the full count runs natively. */
    /* CROUPIER_TRAD_DEALS overrides the count (a shorter or longer run by hand). */
    const char *ov = getenv("CROUPIER_TRAD_DEALS");
    if (ov != NULL && atol(ov) > 0)
        deals = atol(ov);
    const char *vg = getenv("CROUPIER_VALGRIND");
    if (vg != NULL && strcmp(vg, "1") == 0 && deals > 50)
        deals /= 50;
    const shed_rules_t *rules = shed_rules_find(name);
    T_ASSERT(NULL != rules);
    shed_config_t cfg = {.base_stake = 10, .rake_permille = 50, .options = opts};
    run_t r = {.g = shed_game_create(rules, &cfg),
               .seats = shed_rules_seats(rules),
               .opts = opts,
               .deals = deals};
    T_ASSERT(NULL != r.g);
    shed_rng_seed(&r.rng, 7);
    /* the deck: union of all cards right after a deal */
    shed_game_deal_seeded(r.g, 1);
    r.played = (shed_set_t){{0, 0}};
    shed_set_t deck = all_held(&r);
    int deck_size = shed_set_size(deck);
    for (long d = 0; d < deals; d++)
        play_one_deal(&r, deck, deck_size, 1000003ull * (uint64_t)d + 17);
    T_CMP(r.refused, >, deals);
    shed_game_destroy(r.g);
    r.g = NULL;
    if (out)
        *out = r;
}

static void run_game(const char *name, long deals)
{
    run_game_opts(name, deals, 0, NULL);
}

START_TEST(test_doudizhu_random_deals_keep_invariants)
{
    run_game("doudizhu", TRAD_DEALS);
}
END_TEST

START_TEST(test_runfast_random_deals_keep_invariants)
{
    run_game("runfast", TRAD_DEALS);
}
END_TEST

START_TEST(test_bigtwo_random_deals_keep_invariants)
{
    run_game("bigtwo", TRAD_DEALS);
}
END_TEST

START_TEST(test_guandan_random_deals_keep_invariants)
{
    run_game("guandan", TRAD_DEALS);
}
END_TEST

/* Run Fast with every option on: the same invariants, and each option at work (a report
 * single refused below the highest, fours with kickers played, bombs paid at once). */
START_TEST(test_runfast_random_deals_with_all_options_keep_invariants)
{
    run_t r;
    run_game_opts("runfast", TRAD_OPTION_DEALS,
                  SHED_OPT_RF_REPORT_SINGLE | SHED_OPT_RF_FOUR_WITH_TWO |
                      SHED_OPT_RF_FOUR_WITH_THREE | SHED_OPT_RF_BOMB_PAYS,
                  &r);
    /* each option at work (a run shortened for valgrind may be too short to see all) */
    if (r.deals >= 1000) {
        T_CMP(r.not_highest, >, 0);
        T_CMP(r.fours, >, 0);
        T_CMP(r.bomb_paid, >, 0);
    }
}
END_TEST

/* Guandan with three failures at A: the same invariants; failures counted, levels back at 2. */
START_TEST(test_guandan_random_deals_with_a_three_fails_keep_invariants)
{
    run_t r;
    run_game_opts("guandan", TRAD_OPTION_DEALS / 2, SHED_OPT_GD_A_THREE_FAILS, &r);
    if (r.deals >= 1000) {
        T_CMP(r.a_failed, >, 0);
        T_CMP(r.a_fallbacks, >, 0);
    }
}
END_TEST

/*
 * Pins the move generators' output, order included: seeded deals played by a seeded random
 * mover, every listing (legal plays, Guandan's gives, Dou Dizhu's bids) folded into a
 * checksum. The expected values were recorded with the straightforward generators the
 * current ones replaced (enumerate every candidate, classify, sort); a change to any listed
 * set or to the order changes the checksum.
 */
static void listing_checksum(const char *name, int deals, long *nlisted, uint64_t *sum)
{
    shed_game_t *g = shed_game_create(shed_rules_find(name), NULL);
    shed_rng_t rng;
    shed_rng_seed(&rng, 2024);
    uint64_t h = 1469598103934665603ull;
    long listed = 0;
    for (int d = 0; d < deals; d++) {
        shed_game_deal_seeded(g, 7919ull * (uint64_t)d + 3);
        for (int step = 0; step < 1000 && shed_game_phase(g) != SHED_PHASE_OVER; step++) {
            shed_action_t a = {.seat = shed_game_turn(g)};
            if (shed_game_phase(g) == SHED_PHASE_BID) {
                int bids[8], nb = shed_game_legal_bids(g, bids);
                for (int i = 0; i < nb; i++)
                    h = (h ^ (uint64_t)bids[i]) * 0x100000001b3ull;
                a.kind = SHED_ACT_BID;
                a.bid = bids[shed_rng_below(&rng, (uint32_t)nb)];
            } else {
                int np = shed_game_legal_plays(g, plays, PLAYS_CAP);
                T_CMP(np, >=, 0);
                for (int i = 0; i < np; i++) {
                    h = (h ^ plays[i].w[0]) * 0x100000001b3ull;
                    h = (h ^ plays[i].w[1]) * 0x100000001b3ull;
                }
                h = (h ^ (uint64_t)np) * 0x100000001b3ull;
                listed += np;
                bool pass = shed_game_may_pass(g);
                int pick = (int)shed_rng_below(&rng, (uint32_t)np + (pass ? 1 : 0));
                a.kind = shed_game_phase(g) == SHED_PHASE_TRIBUTE ? SHED_ACT_GIVE
                         : pick == np                             ? SHED_ACT_PASS
                                                                  : SHED_ACT_PLAY;
                if (pick < np)
                    a.cards = plays[pick];
            }
            T_CMP(shed_game_apply(g, &a), ==, SHED_OK);
        }
    }
    shed_game_destroy(g);
    *nlisted = listed;
    *sum = h;
}

START_TEST(test_move_listings_match_the_recorded_checksums)
{
    static const struct {
        const char *name;
        int deals;
        long listed;
        uint64_t sum;
    } want[] = {
        {"doudizhu", 200, 58916, 0xee84432506280603ull},
        {"runfast", 200, 37819, 0x0bde0eccc70ec1bbull},
        {"bigtwo", 200, 37910, 0xca44ef007b9a281full},
        {"guandan", 100, 56684, 0xccf177c5d6853c8eull},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        long listed;
        uint64_t sum;
        listing_checksum(want[i].name, want[i].deals, &listed, &sum);
        if (listed != want[i].listed || sum != want[i].sum)
            ck_abort_msg("%s: %ld moves listed, checksum 0x%016llxull; recorded %ld, 0x%016llxull",
                         want[i].name, listed, (unsigned long long)sum, want[i].listed,
                         (unsigned long long)want[i].sum);
    }
}
END_TEST

START_TEST(test_seeded_deals_are_reproducible)
{
    shed_game_t *a = shed_game_create(shed_rules_find("doudizhu"), NULL);
    shed_game_t *b = shed_game_create(shed_rules_find("doudizhu"), NULL);
    shed_game_deal_seeded(a, 42);
    shed_game_deal_seeded(b, 42);
    ck_assert(shed_game_digest(a) == shed_game_digest(b));
    shed_game_deal_seeded(b, 43);
    ck_assert(shed_game_digest(a) != shed_game_digest(b));
    ck_assert_int_eq(shed_game_deal_secure(b), 0);
    shed_set_t u = shed_game_extra(b);
    for (int s = 0; s < 3; s++) {
        ck_assert_int_eq(shed_set_size(shed_game_hand(b, s)), 17);
        u = shed_set_union(u, shed_game_hand(b, s));
    }
    ck_assert_int_eq(shed_set_size(u), 54);
    shed_game_destroy(a);
    shed_game_destroy(b);
    shed_game_destroy(NULL);
}
END_TEST

START_TEST(test_create_rejects_bad_config_and_deal_order)
{
    const shed_rules_t *ddz = shed_rules_find("doudizhu");
    ck_assert_ptr_null(shed_rules_find("nosuchgame"));
    shed_config_t bad = {.base_stake = 0, .rake_permille = 0};
    ck_assert_ptr_null(shed_game_create(ddz, &bad));
    bad.base_stake = 1;
    bad.rake_permille = 1001;
    ck_assert_ptr_null(shed_game_create(ddz, &bad));
    shed_game_t *g = shed_game_create(ddz, NULL);
    shed_card_t deck[SHED_MAX_CARDS];
    int n = shed_deck_build(deck, 1, true);
    ck_assert_int_eq(shed_game_deal_order(g, deck, n - 1, 0), -EINVAL);
    deck[5] = deck[6];
    ck_assert_int_eq(shed_game_deal_order(g, deck, n, 0), -EINVAL);
    ck_assert_int_eq(shed_game_phase(g), SHED_PHASE_IDLE);
    shed_game_destroy(g);
}
END_TEST

static Suite *play_suite(void)
{
    Suite *s = suite_create("trad_play");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_seeded_deals_are_reproducible);
    tcase_add_test(tc, test_create_rejects_bad_config_and_deal_order);
    suite_add_tcase(s, tc);
    tc = tcase_create("listing");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_move_listings_match_the_recorded_checksums);
    suite_add_tcase(s, tc);
    tc = tcase_create("doudizhu");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 36000);
    tcase_add_test(tc, test_doudizhu_random_deals_keep_invariants);
    suite_add_tcase(s, tc);
    tc = tcase_create("runfast");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 36000);
    tcase_add_test(tc, test_runfast_random_deals_keep_invariants);
    suite_add_tcase(s, tc);
    tc = tcase_create("bigtwo");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 36000);
    tcase_add_test(tc, test_bigtwo_random_deals_keep_invariants);
    suite_add_tcase(s, tc);
    tc = tcase_create("guandan");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 36000);
    tcase_add_test(tc, test_guandan_random_deals_keep_invariants);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 36000);
    tcase_add_test(tc, test_runfast_random_deals_with_all_options_keep_invariants);
    tcase_add_test(tc, test_guandan_random_deals_with_a_three_fails_keep_invariants);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(play_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
