/*
 * Scripted deals for each rule set of games/traditional, one behaviour per test, following
 * docs/rules/doudizhu.md, docs/rules/runfast.md and docs/rules/bigtwo.md.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "shed_game.h"

/* Cards in rank+suit notation ("3d4sTh", jokers "B"/"R"). */
static shed_set_t cards(const char *text)
{
    shed_set_t s;
    char err[128];
    int rc = shed_set_parse(text, &s, err, sizeof err);
    ck_assert_msg(rc == 0, "bad card text '%s': %s", text, err);
    return s;
}

/*
 * Deals so that seat i holds hands[i] (NULL: nothing chosen) and the set-aside cards hold
 * `extra`; the rest is filled from the unused cards, highest first, seat by seat.
 */
static void deal(shed_game_t *g, const char *const *hands, const char *extra, int first)
{
    const shed_rules_t *R = shed_game_rules(g);
    int seats = shed_rules_seats(R);
    shed_card_t deck[SHED_MAX_CARDS], order[SHED_MAX_CARDS];
    /* the deck: what a seeded deal hands out */
    shed_game_deal_seeded(g, 1);
    shed_set_t all = shed_game_extra(g);
    for (int s = 0; s < seats; s++)
        all = shed_set_union(all, shed_game_hand(g, s));
    int n = shed_set_list(all, deck);
    int hand_size = shed_set_size(shed_game_hand(g, 0));
    shed_set_t want[SHED_MAX_SEATS + 1], used = {{0, 0}};
    for (int s = 0; s <= seats; s++) {
        const char *t = s < seats ? hands[s] : extra;
        want[s] = cards(t ? t : "");
        ck_assert(shed_set_contains(all, want[s]));
        ck_assert((used.w[0] & want[s].w[0]) == 0 && (used.w[1] & want[s].w[1]) == 0);
        used = shed_set_union(used, want[s]);
    }
    int next = n - 1;
    for (int s = 0; s <= seats; s++) {
        int size = s < seats ? hand_size : n - hand_size * seats;
        while (shed_set_size(want[s]) < size) {
            while (shed_set_has(used, deck[next]))
                next--;
            shed_set_add(&want[s], deck[next]);
            shed_set_add(&used, deck[next]);
        }
    }
    for (int s = 0; s < seats; s++) {
        shed_card_t list[SHED_MAX_CARDS];
        ck_assert_int_eq(shed_set_list(want[s], list), hand_size);
        for (int i = 0; i < hand_size; i++)
            order[i * seats + s] = list[i];
    }
    shed_card_t list[SHED_MAX_CARDS];
    int ne = shed_set_list(want[seats], list);
    for (int i = 0; i < ne; i++)
        order[hand_size * seats + i] = list[i];
    ck_assert_int_eq(shed_game_deal_order(g, order, n, first), 0);
}

static int act(shed_game_t *g, int kind, int seat, const char *text, int bid)
{
    shed_action_t a = {.kind = kind, .seat = seat, .bid = bid};
    if (text)
        a.cards = cards(text);
    return shed_game_apply(g, &a);
}
#define PLAY(g, seat, text) act(g, SHED_ACT_PLAY, seat, text, 0)
#define PASS(g, seat) act(g, SHED_ACT_PASS, seat, NULL, 0)
#define BID(g, seat, v) act(g, SHED_ACT_BID, seat, NULL, v)

static bool has_event(const shed_game_t *g, int kind, int seat, int value)
{
    int n;
    const shed_event_t *ev = shed_game_events(g, &n);
    for (int i = 0; i < n; i++)
        if (ev[i].kind == kind && ev[i].seat == seat && ev[i].value == value)
            return true;
    return false;
}

/* ---- Dou Dizhu ---------------------------------------------------------------------------- */

static shed_game_t *ddz_game(int64_t base, int rake)
{
    shed_config_t cfg = {.base_stake = base, .rake_permille = rake};
    return shed_game_create(shed_rules_find("doudizhu"), &cfg);
}

/* doudizhu.md "Bidding": highest bidder takes the bottom cards and leads. */
START_TEST(test_ddz_highest_bidder_takes_bottom_cards_and_leads)
{
    shed_game_t *g = ddz_game(1, 0);
    const char *hands[3] = {"3d", "4d", "5d"};
    deal(g, hands, "6d6c6h", 1);
    ck_assert_int_eq(shed_game_phase(g), SHED_PHASE_BID);
    ck_assert_int_eq(shed_game_turn(g), 1);
    ck_assert_int_eq(BID(g, 1, 1), SHED_OK);
    ck_assert_int_eq(BID(g, 2, 1), SHED_E_BAD_BID); /* not above the highest */
    ck_assert_int_eq(BID(g, 2, 0), SHED_OK);
    ck_assert_int_eq(BID(g, 0, 2), SHED_OK);
    int bid;
    ck_assert_int_eq(shed_game_landlord(g, &bid), 0);
    ck_assert_int_eq(bid, 2);
    ck_assert(has_event(g, SHED_EV_LANDLORD, 0, 2));
    ck_assert_int_eq(shed_set_size(shed_game_hand(g, 0)), 20);
    ck_assert(shed_set_contains(shed_game_hand(g, 0), cards("6d6c6h")));
    ck_assert_int_eq(shed_game_phase(g), SHED_PHASE_PLAY);
    ck_assert_int_eq(shed_game_turn(g), 0);
    ck_assert_int_eq(PASS(g, 0), SHED_E_MUST_LEAD);
    shed_game_destroy(g);
}
END_TEST

START_TEST(test_ddz_bid_of_three_ends_bidding_at_once)
{
    shed_game_t *g = ddz_game(1, 0);
    const char *hands[3] = {NULL, NULL, NULL};
    deal(g, hands, NULL, 2);
    ck_assert_int_eq(BID(g, 2, 3), SHED_OK);
    ck_assert_int_eq(shed_game_landlord(g, NULL), 2);
    ck_assert_int_eq(shed_game_phase(g), SHED_PHASE_PLAY);
    ck_assert_int_eq(BID(g, 0, 0), SHED_E_PHASE);
    shed_game_destroy(g);
}
END_TEST

START_TEST(test_ddz_all_pass_throws_the_deal_in)
{
    shed_game_t *g = ddz_game(5, 100);
    const char *hands[3] = {NULL, NULL, NULL};
    deal(g, hands, NULL, 0);
    ck_assert_int_eq(BID(g, 0, 0), SHED_OK);
    ck_assert_int_eq(BID(g, 1, 0), SHED_OK);
    ck_assert_int_eq(BID(g, 2, 0), SHED_OK);
    const shed_settlement_t *s = shed_game_settlement(g);
    ck_assert_ptr_nonnull(s);
    ck_assert(s->voided);
    ck_assert(has_event(g, SHED_EV_VOID, -1, 0));
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(s->delta[i], 0);
    ck_assert_int_eq(s->rake, 0);
    shed_game_destroy(g);
}
END_TEST

/* doudizhu.md "Scoring": spring doubles; landlord wins 2 x units x base, rake from the gain. */
START_TEST(test_ddz_spring_doubles_the_stake)
{
    shed_game_t *g = ddz_game(10, 50);
    /* landlord (seat 0) ends up with a 20-card airplane: 3-7 trios + 9 J Q K A */
    const char *hands[3] = {"3d3c3h4d4c4h5d5c5h6d6c6h7d7c7h9dJd", NULL, NULL};
    deal(g, hands, "QdKdAd", 0);
    ck_assert_int_eq(BID(g, 0, 3), SHED_OK);
    ck_assert_int_eq(PLAY(g, 1, "3s"), SHED_E_TURN);
    ck_assert_int_eq(PLAY(g, 0, "3d3c3h4d4c4h5d5c5h6d6c6h7d7c7h9dJdQdKdAd"), SHED_OK);
    const shed_settlement_t *s = shed_game_settlement(g);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->winner, 0);
    ck_assert_int_eq(s->units, 6); /* bid 3 x spring 2 */
    ck_assert_int_eq(s->delta[1], -60);
    ck_assert_int_eq(s->delta[2], -60);
    ck_assert_int_eq(s->rake, 6); /* 5% of 120 */
    ck_assert_int_eq(s->delta[0], 114);
    ck_assert_int_eq(PASS(g, 1), SHED_E_PHASE);
    shed_game_destroy(g);
}
END_TEST

/* doudizhu.md "Scoring": the rocket and an anti-spring each double; peasants win. */
START_TEST(test_ddz_rocket_and_anti_spring_double_for_the_peasants)
{
    shed_game_t *g = ddz_game(10, 50);
    const char *hands[3] = {"3d", "BR8d8c8h9d9c9hTdTcThJdJcJhQdQcQh", NULL};
    deal(g, hands, NULL, 0);
    ck_assert_int_eq(BID(g, 0, 1), SHED_OK);
    ck_assert_int_eq(BID(g, 1, 0), SHED_OK);
    ck_assert_int_eq(BID(g, 2, 0), SHED_OK);
    ck_assert_int_eq(shed_game_landlord(g, NULL), 0);
    ck_assert_int_eq(PLAY(g, 0, "3d"), SHED_OK);
    ck_assert_int_eq(PLAY(g, 1, "BR"), SHED_OK);
    ck_assert(has_event(g, SHED_EV_DOUBLE, 1, 1));
    ck_assert_int_eq(PASS(g, 2), SHED_OK);
    ck_assert_int_eq(PASS(g, 0), SHED_OK);
    ck_assert(has_event(g, SHED_EV_TRICK, 1, 0));
    ck_assert_int_eq(shed_game_turn(g), 1);
    ck_assert_int_eq(PLAY(g, 1, "8d8c8h9d9c9hTdTcThJdJcJhQdQcQh"), SHED_OK);
    const shed_settlement_t *s = shed_game_settlement(g);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->winner, 1);
    ck_assert_int_eq(s->units, 4); /* bid 1 x rocket 2 x anti-spring 2 */
    ck_assert_int_eq(s->delta[0], -80);
    ck_assert_int_eq(s->delta[1], 38);
    ck_assert_int_eq(s->delta[2], 38);
    ck_assert_int_eq(s->rake, 4);
    shed_game_destroy(g);
}
END_TEST

/* doudizhu.md "Errors": each refusal names its reason and changes nothing. */
START_TEST(test_ddz_refusals_name_the_reason_and_change_nothing)
{
    shed_game_t *g = ddz_game(1, 0);
    const char *hands[3] = {"3d3c4d5d6d7d", "8d8c", "9d"};
    deal(g, hands, NULL, 0);
    ck_assert_int_eq(PLAY(g, 0, "3d"), SHED_E_PHASE);
    ck_assert_int_eq(BID(g, 0, 2), SHED_OK);
    ck_assert_int_eq(BID(g, 1, 0), SHED_OK);
    ck_assert_int_eq(BID(g, 2, 0), SHED_OK);
    uint64_t d = shed_game_digest(g);
    ck_assert_int_eq(PLAY(g, 0, "3d4d"), SHED_E_MALFORMED);
    ck_assert_int_eq(PLAY(g, 0, "8d"), SHED_E_NOT_HELD);
    ck_assert_int_eq(PLAY(g, 1, "8d"), SHED_E_TURN);
    ck_assert_int_eq(PASS(g, 0), SHED_E_MUST_LEAD);
    ck_assert_int_eq(BID(g, 0, 3), SHED_E_PHASE);
    ck_assert(shed_game_digest(g) == d);
    ck_assert_int_eq(PLAY(g, 0, "3d3c"), SHED_OK);
    d = shed_game_digest(g);
    ck_assert_int_eq(PLAY(g, 1, "8d"), SHED_E_WEAKER);
    ck_assert_int_eq(PLAY(g, 1, "8d8c"), SHED_OK);
    ck_assert(shed_game_digest(g) != d);
    shed_game_destroy(g);
}
END_TEST

/* ---- Big Two ------------------------------------------------------------------------------ */

static shed_combo_t b2(const char *text)
{
    shed_combo_t c;
    ck_assert_int_eq(shed_rules_classify(shed_rules_find("bigtwo"), cards(text), false, &c), 0);
    return c;
}

static bool b2_beats(const char *a, const char *b)
{
    shed_combo_t x = b2(a), y = b2(b);
    return shed_rules_beats(shed_rules_find("bigtwo"), &x, &y);
}

/* bigtwo.md "Combinations": ranks then suits; five-card kinds in order; same size only. */
START_TEST(test_bigtwo_combinations_order)
{
    const shed_rules_t *R = shed_rules_find("bigtwo");
    shed_combo_t c;
    ck_assert(b2_beats("3c", "3d"));
    ck_assert(b2_beats("2s", "2h"));
    ck_assert(b2_beats("4d", "3s"));
    ck_assert(b2_beats("9d9s", "9c9h"));
    ck_assert(!b2_beats("9d9c", "9h9s"));
    ck_assert(!b2_beats("9d9c", "3d")); /* different size */
    ck_assert(b2_beats("4d4c4h", "3d3c3h"));
    ck_assert(b2_beats("4d5d6d7d9d", "TdJcQhKsAs")); /* flush > straight */
    ck_assert(b2_beats("3d3c3h4d4c", "4s6s8sTsQs")); /* full house > flush */
    ck_assert(b2_beats("3d3c3h3s4c", "AdAcAh2s2c")); /* four > full house */
    ck_assert(b2_beats("3c4c5c6c7c", "2d2c2h2s3d")); /* straight flush > four */
    ck_assert(b2_beats("4d5c6h7s8d", "3s4s5s6s7d")); /* higher straight */
    ck_assert(b2_beats("3s4s5s6h7s", "3d4d5d6d7h")); /* same ranks: top suit */
    ck_assert(b2_beats("3h5h7h9hKh", "3s5s7s9sQs")); /* flush: ranks first */
    ck_assert_int_eq(shed_rules_classify(R, cards("JdQdKdAd2d"), false, &c), 0);
    ck_assert_int_eq(c.type, 5); /* only a flush: 2 never in a straight */
    ck_assert_int_eq(shed_rules_classify(R, cards("3d3c4d4c"), false, &c), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_rules_classify(R, cards("3d3c"), false, &c), 0);
    ck_assert_int_eq(shed_rules_classify(R, cards("3d4c"), false, &c), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_rules_classify(R, cards("3d4c5h6s8d"), false, &c), SHED_E_MALFORMED);
}
END_TEST

/* bigtwo.md "Play": the 3 of diamonds' holder leads, and its first play must contain it. */
START_TEST(test_bigtwo_three_of_diamonds_opens)
{
    shed_game_t *g = shed_game_create(shed_rules_find("bigtwo"), NULL);
    const char *hands[4] = {"4d", "5d", "3d3c7d", "6d"};
    deal(g, hands, NULL, 0);
    ck_assert_int_eq(shed_game_turn(g), 2);
    ck_assert_int_eq(PLAY(g, 2, "7d"), SHED_E_OPENING);
    ck_assert_int_eq(PLAY(g, 2, "3c"), SHED_E_OPENING);
    ck_assert_int_eq(PLAY(g, 2, "3d3c"), SHED_OK);
    ck_assert_int_eq(shed_game_turn(g), 3);
    ck_assert_int_eq(PLAY(g, 3, "6d"), SHED_E_WEAKER); /* a single on a pair */
    ck_assert_int_eq(PASS(g, 3), SHED_OK);             /* no obligation to beat */
    shed_game_destroy(g);
}
END_TEST

/* bigtwo.md "Scoring": 1 per card, x2 with 10-12 left, x3 with 13. */
START_TEST(test_bigtwo_penalty_per_card_left)
{
    shed_game_t *g = shed_game_create(shed_rules_find("bigtwo"), NULL);
    /* seat 0 leads 3d then can finish with two five-card hands and a triple? Keep it short:
     * everybody passes and seat 0 plays out 3 combinations. */
    const char *hands[4] = {"3d4d5d6d7d8c9cTcJcQc2d2c2h", "3c", "3h", "3s"};
    deal(g, hands, NULL, 0);
    ck_assert_int_eq(PLAY(g, 0, "3d4d5d6d7d"), SHED_OK); /* straight flush */
    ck_assert_int_eq(PASS(g, 1), SHED_OK);
    ck_assert_int_eq(PASS(g, 2), SHED_OK);
    ck_assert_int_eq(PASS(g, 3), SHED_OK);
    ck_assert_int_eq(PLAY(g, 0, "8c9cTcJcQc"), SHED_OK);
    ck_assert_int_eq(PLAY(g, 1, "3c"), SHED_E_WEAKER);
    ck_assert_int_eq(PASS(g, 1), SHED_OK);
    ck_assert_int_eq(PASS(g, 2), SHED_OK);
    ck_assert_int_eq(PASS(g, 3), SHED_OK);
    ck_assert_int_eq(PLAY(g, 0, "2d2c2h"), SHED_OK);
    const shed_settlement_t *s = shed_game_settlement(g);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->delta[1], -39);
    ck_assert_int_eq(s->delta[2], -39);
    ck_assert_int_eq(s->delta[3], -39);
    ck_assert_int_eq(s->delta[0], 117);
    shed_game_destroy(g);
}
END_TEST

/* ---- Run Fast ----------------------------------------------------------------------------- */

/* runfast.md "Cards and deal": 48 cards, the only 2 is the 2 of hearts, no ace of spades. */
START_TEST(test_runfast_deck_is_the_48_card_variant)
{
    shed_game_t *g = shed_game_create(shed_rules_find("runfast"), NULL);
    ck_assert_int_eq(shed_game_deal_secure(g), 0);
    shed_set_t all = {{0, 0}};
    for (int s = 0; s < 3; s++) {
        ck_assert_int_eq(shed_set_size(shed_game_hand(g, s)), 16);
        all = shed_set_union(all, shed_game_hand(g, s));
    }
    ck_assert_int_eq(shed_set_size(all), 48);
    ck_assert(shed_set_has(all, shed_card_make(0, SHED_RANK_2, SHED_SUIT_H)));
    ck_assert(!shed_set_has(all, shed_card_make(0, SHED_RANK_2, SHED_SUIT_S)));
    ck_assert(!shed_set_has(all, shed_card_make(0, 11, SHED_SUIT_S)));
    ck_assert(shed_set_has(all, shed_card_make(0, 11, SHED_SUIT_H)));
    ck_assert(
        shed_set_has(shed_game_hand(g, shed_game_turn(g)), shed_card_make(0, 0, SHED_SUIT_S)));
    shed_game_destroy(g);
}
END_TEST

/* runfast.md "Play": must beat when able; pass allowed only when unable. */
START_TEST(test_runfast_must_beat_when_able)
{
    shed_game_t *g = shed_game_create(shed_rules_find("runfast"), NULL);
    const char *hands[3] = {"3s3d", "4d", "3c3h"};
    deal(g, hands, NULL, 0);
    ck_assert_int_eq(shed_game_turn(g), 0);
    ck_assert_int_eq(PLAY(g, 0, "3d"), SHED_E_OPENING);
    ck_assert_int_eq(PLAY(g, 0, "3s"), SHED_OK);
    ck_assert(!shed_game_may_pass(g));
    ck_assert_int_eq(PASS(g, 1), SHED_E_MUST_BEAT);
    ck_assert_int_eq(PLAY(g, 1, "4d"), SHED_OK);
    shed_game_destroy(g);
}
END_TEST

/* runfast.md "Combinations": a short trio only as the last cards; trio with any two. */
START_TEST(test_runfast_short_trio_only_as_last_cards)
{
    const shed_rules_t *R = shed_rules_find("runfast");
    shed_combo_t c, d;
    ck_assert_int_eq(shed_rules_classify(R, cards("3d3c3h4d"), false, &c), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_rules_classify(R, cards("3d3c3h4d"), true, &c), 0);
    ck_assert_int_eq(shed_rules_classify(R, cards("3d3c3h4d9c"), false, &c), 0);
    ck_assert_int_eq(shed_rules_classify(R, cards("4d4c4h"), true, &d), 0);
    ck_assert(shed_rules_beats(R, &d, &c)); /* a last short trio beats a full one */
    ck_assert_int_eq(shed_rules_classify(R, cards("3d3c3h4d4c4h5d6d7d8d"), false, &c), 0);
    ck_assert_int_eq(c.len, 2);
    ck_assert_int_eq(shed_rules_classify(R, cards("3d4c5h6d"), false, &c), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_rules_classify(R, cards("3d4c5h6d7d"), false, &c), 0);
    ck_assert_int_eq(shed_rules_classify(R, cards("Qd Kc Ah 2h 3d"), false, &c), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_rules_classify(R, cards("3d3c4d4c"), false, &c), 0);
    ck_assert_int_eq(shed_rules_classify(R, cards("9d9c9h9s"), false, &d), 0);
    ck_assert(shed_rules_beats(R, &d, &c)); /* a bomb beats a run of pairs */
}
END_TEST

/* ---- Run Fast options ----------------------------------------------------------------------- */

static shed_game_t *rf_game(unsigned opts, int64_t base, int rake)
{
    shed_config_t cfg = {.base_stake = base, .rake_permille = rake, .options = opts};
    shed_game_t *g = shed_game_create(shed_rules_find("runfast"), &cfg);
    ck_assert_ptr_nonnull(g);
    return g;
}

/* Seat 0 to act holding `hand` on `beat` (NULL: leads), seat 1 (next) holding `next`, seat 2
 * holding `third` (NULL: nothing). */
static void rf_position(shed_game_t *g, const char *hand, const char *beat, const char *next,
                        const char *third)
{
    ck_assert_int_eq(shed_game_setup_position(g, 0, cards(hand), cards(beat ? beat : "")), 0);
    ck_assert_int_eq(shed_game_setup_hand(g, 1, cards(next)), 0);
    if (third)
        ck_assert_int_eq(shed_game_setup_hand(g, 2, cards(third)), 0);
}

/* The legal plays as rank strings joined by ' ' (e.g. "33 K "). */
static const char *listing(const shed_game_t *g, char *buf, size_t len)
{
    shed_set_t plays[512];
    int n = shed_game_legal_plays(g, plays, 512);
    ck_assert_int_ge(n, 0);
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char one[SHED_MAX_CARDS + 1];
        shed_counts_format(shed_set_counts(plays[i]), one);
        at += (size_t)snprintf(buf + at, len - at, "%s ", one);
        ck_assert_uint_lt(at, len);
    }
    return buf;
}

/* Refused with `want` and nothing changed (state digest and events). */
static void rf_refused(shed_game_t *g, int seat, const char *text, int want)
{
    uint64_t before = shed_game_digest(g);
    int nev0, nev1;
    shed_game_events(g, &nev0);
    ck_assert_int_eq(PLAY(g, seat, text), want);
    shed_game_events(g, &nev1);
    ck_assert(shed_game_digest(g) == before);
    ck_assert_int_eq(nev0, nev1);
}

/* runfast.md "Options": without "report single" any single may be played on a one-card
 * next player. */
START_TEST(test_runfast_report_single_off_allows_any_single)
{
    shed_game_t *g = rf_game(0, 1, 0);
    char buf[512];
    rf_position(g, "3d3c5d9dKd", NULL, "7h", NULL);
    ck_assert_str_eq(listing(g, buf, sizeof buf), "3 33 5 9 K ");
    ck_assert_int_eq(PLAY(g, 0, "5d"), SHED_OK);
    shed_game_destroy(g);
}
END_TEST

/* runfast.md "Options": with "report single" and a one-card next player, a single led must be
 * the highest; other combinations stay free. Refused: SHED_E_NOT_HIGHEST, nothing changed. */
START_TEST(test_runfast_report_single_leads_only_the_highest_single)
{
    shed_game_t *g = rf_game(SHED_OPT_RF_REPORT_SINGLE, 1, 0);
    char buf[512];
    rf_position(g, "3d3c5d9dKd", NULL, "7h", NULL);
    ck_assert_str_eq(listing(g, buf, sizeof buf), "33 K ");
    rf_refused(g, 0, "5d", SHED_E_NOT_HIGHEST);
    rf_refused(g, 0, "3d", SHED_E_NOT_HIGHEST);
    ck_assert_int_eq(PLAY(g, 0, "3d3c"), SHED_OK);
    shed_game_destroy(g);
    /* next player with two cards: no restriction */
    g = rf_game(SHED_OPT_RF_REPORT_SINGLE, 1, 0);
    rf_position(g, "3d3c5d9dKd", NULL, "7h8h", NULL);
    ck_assert_str_eq(listing(g, buf, sizeof buf), "3 33 5 9 K ");
    ck_assert_int_eq(PLAY(g, 0, "5d"), SHED_OK);
    shed_game_destroy(g);
}
END_TEST

/* runfast.md "Options": following a single under "report single": only the highest beats it
 * legally, passing is refused (must beat), a lower single that beats is SHED_E_NOT_HIGHEST and
 * one that does not beat stays SHED_E_WEAKER. */
START_TEST(test_runfast_report_single_follows_with_the_highest_single)
{
    shed_game_t *g = rf_game(SHED_OPT_RF_REPORT_SINGLE, 1, 0);
    char buf[512];
    rf_position(g, "3d5d9dKd", "4c", "7h", NULL);
    ck_assert_str_eq(listing(g, buf, sizeof buf), "K ");
    ck_assert(!shed_game_may_pass(g));
    ck_assert_int_eq(PASS(g, 0), SHED_E_MUST_BEAT);
    rf_refused(g, 0, "9d", SHED_E_NOT_HIGHEST);
    rf_refused(g, 0, "3d", SHED_E_WEAKER);
    ck_assert_int_eq(PLAY(g, 0, "Kd"), SHED_OK);
    shed_game_destroy(g);
    /* the highest single does not beat: nothing to play, the pass is allowed */
    g = rf_game(SHED_OPT_RF_REPORT_SINGLE, 1, 0);
    rf_position(g, "3d5d9dKd", "2h", "7h", NULL);
    ck_assert_str_eq(listing(g, buf, sizeof buf), "");
    ck_assert_int_eq(PASS(g, 0), SHED_OK);
    shed_game_destroy(g);
}
END_TEST

/* runfast.md "Options": four of a kind with exactly two (or three) kickers, each only with its
 * option; compared by the four's rank within the same number of kickers; bombs beat them. */
START_TEST(test_runfast_four_with_kickers_only_under_its_option)
{
    shed_game_t *off = rf_game(0, 1, 0);
    shed_game_t *two = rf_game(SHED_OPT_RF_FOUR_WITH_TWO, 1, 0);
    shed_game_t *three = rf_game(SHED_OPT_RF_FOUR_WITH_THREE, 1, 0);
    shed_game_t *both = rf_game(SHED_OPT_RF_FOUR_WITH_TWO | SHED_OPT_RF_FOUR_WITH_THREE, 1, 0);
    const shed_rules_t *R = shed_rules_find("runfast");
    shed_combo_t a, b, c, bomb;
    shed_set_t f2 = cards("5d5c5h5s3d4d"), f3 = cards("5d5c5h5s3d4d9c");
    ck_assert_int_eq(shed_game_classify(off, f2, false, &a), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_game_classify(off, f3, false, &a), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_rules_classify(R, f2, false, &a), SHED_E_MALFORMED); /* no options */
    ck_assert_int_eq(shed_game_classify(two, f3, false, &a), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_game_classify(three, f2, false, &a), SHED_E_MALFORMED);
    ck_assert_int_eq(shed_game_classify(two, f2, false, &a), 0);
    ck_assert_int_eq(a.len, 2);
    ck_assert_int_eq(shed_game_classify(three, f3, false, &b), 0);
    ck_assert_int_eq(b.len, 3);
    ck_assert_int_eq(a.type, b.type); /* one type, told apart by the number of kickers */
    ck_assert(!shed_rules_beats(R, &a, &b) && !shed_rules_beats(R, &b, &a));
    ck_assert_int_eq(shed_game_classify(both, cards("6d6c6h6s3c4c"), false, &c), 0);
    ck_assert(shed_rules_beats(R, &c, &a) && !shed_rules_beats(R, &a, &c));
    ck_assert_int_eq(shed_game_classify(both, cards("3d3c3h3s"), false, &bomb), 0);
    ck_assert(shed_rules_beats(R, &bomb, &c) && !shed_rules_beats(R, &c, &bomb));
    /* kickers may be a pair or a trio of one rank */
    ck_assert_int_eq(shed_game_classify(both, cards("6d6c6h6s3c3d"), false, &c), 0);
    ck_assert_int_eq(shed_game_classify(both, cards("6d6c6h6s3c3d3h"), false, &c), 0);
    ck_assert_int_eq(c.len, 3);
    shed_game_destroy(off);
    shed_game_destroy(two);
    shed_game_destroy(three);
    shed_game_destroy(both);
}
END_TEST

/* runfast.md "Options": the generator lists exactly the fours with kickers that beat (and the
 * bomb); plays are checked with the specific errors and must beat applies to them. */
START_TEST(test_runfast_four_with_kickers_listed_and_checked)
{
    shed_game_t *g = rf_game(SHED_OPT_RF_FOUR_WITH_TWO, 1, 0);
    char buf[512];
    rf_position(g, "6d6c6h6s3d5d7dTd", "4d4c4h4s8d9d", "JdQd", NULL);
    ck_assert_str_eq(listing(g, buf, sizeof buf),
                     "6666 356666 366667 566667 36666T 56666T 66667T ");
    ck_assert(!shed_game_may_pass(g));
    rf_refused(g, 0, "6d6c6h6s3d5d7d", SHED_E_MALFORMED); /* three kickers: not this option */
    rf_refused(g, 0, "6d6c6h6s3d", SHED_E_MALFORMED);
    ck_assert_int_eq(PLAY(g, 0, "6d6c6h6s3d5d"), SHED_OK);
    shed_game_destroy(g);
    /* both options: a four with three kickers is valid but does not beat one with two */
    g = rf_game(SHED_OPT_RF_FOUR_WITH_TWO | SHED_OPT_RF_FOUR_WITH_THREE, 1, 0);
    rf_position(g, "6d6c6h6s3d5d7dTd", "4d4c4h4s8d9d", "JdQd", NULL);
    rf_refused(g, 0, "6d6c6h6s3d5d7d", SHED_E_WEAKER);
    shed_game_destroy(g);
    /* leading with four-with-three on: listed as plays of 7 cards */
    g = rf_game(SHED_OPT_RF_FOUR_WITH_THREE, 1, 0);
    rf_position(g, "6d6c6h6s3d5d7d", NULL, "JdQd", NULL);
    ck_assert_str_eq(listing(g, buf, sizeof buf), "3 5 6 66 35666 6666 7 36667 56667 3566667 ");
    shed_game_destroy(g);
    /* off: the same hand has no such play */
    g = rf_game(0, 1, 0);
    rf_position(g, "6d6c6h6s3d5d7d", NULL, "JdQd", NULL);
    ck_assert_str_eq(listing(g, buf, sizeof buf), "3 5 6 66 35666 6666 7 36667 56667 ");
    shed_game_destroy(g);
}
END_TEST

/* runfast.md "Scoring": without the option a bomb doubles every payment. */
START_TEST(test_runfast_bomb_doubles_without_bomb_pays)
{
    shed_game_t *g = rf_game(0, 3, 100);
    rf_position(g, "5d5c5h5s7d", NULL, "3d4d", "8d");
    ck_assert_int_eq(PLAY(g, 0, "5d5c5h5s"), SHED_OK);
    ck_assert(has_event(g, SHED_EV_DOUBLE, 0, 1));
    ck_assert_int_eq(PASS(g, 1), SHED_OK);
    ck_assert_int_eq(PASS(g, 2), SHED_OK);
    ck_assert_int_eq(PLAY(g, 0, "7d"), SHED_OK);
    const shed_settlement_t *s = shed_game_settlement(g);
    ck_assert_ptr_nonnull(s);
    /* closed in (x2) and the bomb (x2): 2 cards -> 8, 1 card -> 4 units; stake 3, rake 10% */
    ck_assert_int_eq(s->delta[1], -24);
    ck_assert_int_eq(s->delta[2], -12);
    ck_assert_int_eq(s->rake, 3);
    ck_assert_int_eq(s->delta[0], 33);
    ck_assert_int_eq(s->delta[0] + s->delta[1] + s->delta[2], -s->rake);
    shed_game_destroy(g);
}
END_TEST

/* runfast.md "Options": with "bombs pay at once" a bomb collects 10 units from each other
 * player, doubles nothing, and is paid even when the bomber loses the deal. */
START_TEST(test_runfast_bomb_pays_at_once_even_to_a_loser)
{
    shed_game_t *g = rf_game(SHED_OPT_RF_BOMB_PAYS, 3, 100);
    rf_position(g, "5d5c5h5s7d", NULL, "3d4d", "8d");
    ck_assert_int_eq(PLAY(g, 0, "5d5c5h5s"), SHED_OK);
    ck_assert(has_event(g, SHED_EV_BOMB_PAID, 0, 10));
    ck_assert(!has_event(g, SHED_EV_DOUBLE, 0, 1));
    ck_assert_int_eq(PASS(g, 1), SHED_OK);
    ck_assert_int_eq(PASS(g, 2), SHED_OK);
    ck_assert_int_eq(PLAY(g, 0, "7d"), SHED_OK);
    const shed_settlement_t *s = shed_game_settlement(g);
    ck_assert_ptr_nonnull(s);
    /* cards: 2 x 2 = 4 and 1 x 2 = 2 units (closed in), the bomb 10 from each; stake 3 */
    ck_assert_int_eq(s->delta[1], -(4 + 10) * 3);
    ck_assert_int_eq(s->delta[2], -(2 + 10) * 3);
    ck_assert_int_eq(s->rake, (6 + 20) * 3 / 10);
    ck_assert_int_eq(s->delta[0], (6 + 20) * 3 - s->rake);
    ck_assert_int_eq(s->delta[0] + s->delta[1] + s->delta[2], -s->rake);
    ck_assert_int_eq(s->units, 26);
    shed_game_destroy(g);
    /* the bomber (seat 1) loses the deal to seat 2 and is still paid; units per bomb set to 5 */
    shed_config_t cfg = {
        .base_stake = 1, .rake_permille = 0, .options = SHED_OPT_RF_BOMB_PAYS, .bomb_units = 5};
    g = shed_game_create(shed_rules_find("runfast"), &cfg);
    rf_position(g, "7d8d", NULL, "9d9c9h9s3dJd", "4d");
    ck_assert_int_eq(PLAY(g, 0, "7d"), SHED_OK);
    ck_assert_int_eq(PLAY(g, 1, "9d9c9h9s"), SHED_OK);
    ck_assert(has_event(g, SHED_EV_BOMB_PAID, 1, 5));
    ck_assert_int_eq(PASS(g, 2), SHED_OK);
    ck_assert_int_eq(PASS(g, 0), SHED_OK);
    ck_assert_int_eq(PLAY(g, 1, "3d"), SHED_OK);
    ck_assert_int_eq(PLAY(g, 2, "4d"), SHED_OK);
    s = shed_game_settlement(g);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->winner, 2);
    ck_assert_int_eq(s->delta[0], -1 - 5);
    ck_assert_int_eq(s->delta[1], -1 + 10);
    ck_assert_int_eq(s->delta[2], 2 - 5);
    ck_assert_int_eq(s->delta[0] + s->delta[1] + s->delta[2], 0);
    shed_game_destroy(g);
}
END_TEST

/* Options belong to one rule set; bomb units only with the bomb option and in range. */
START_TEST(test_options_of_another_game_are_refused)
{
    shed_config_t cfg = {.base_stake = 1, .options = SHED_OPT_GD_A_THREE_FAILS};
    ck_assert_ptr_null(shed_game_create(shed_rules_find("runfast"), &cfg));
    cfg.options = SHED_OPT_RF_REPORT_SINGLE;
    ck_assert_ptr_null(shed_game_create(shed_rules_find("guandan"), &cfg));
    ck_assert_ptr_null(shed_game_create(shed_rules_find("doudizhu"), &cfg));
    ck_assert_ptr_null(shed_game_create(shed_rules_find("bigtwo"), &cfg));
    cfg.options = 1u << 20;
    ck_assert_ptr_null(shed_game_create(shed_rules_find("runfast"), &cfg));
    cfg.options = 0;
    cfg.bomb_units = 5; /* without the option */
    ck_assert_ptr_null(shed_game_create(shed_rules_find("runfast"), &cfg));
    cfg.options = SHED_OPT_RF_BOMB_PAYS;
    cfg.bomb_units = 1001;
    ck_assert_ptr_null(shed_game_create(shed_rules_find("runfast"), &cfg));
    cfg.bomb_units = -1;
    ck_assert_ptr_null(shed_game_create(shed_rules_find("runfast"), &cfg));
    cfg.bomb_units = 0; /* the default, 10 */
    shed_game_t *g = shed_game_create(shed_rules_find("runfast"), &cfg);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(shed_game_options(g), SHED_OPT_RF_BOMB_PAYS);
    shed_game_destroy(g);
    ck_assert_uint_eq(shed_option_from_name("report-single"), SHED_OPT_RF_REPORT_SINGLE);
    ck_assert_uint_eq(shed_option_from_name("a-three-fails"), SHED_OPT_GD_A_THREE_FAILS);
    ck_assert_uint_eq(shed_option_from_name("nope"), 0);
    ck_assert_uint_eq(shed_rules_options(shed_rules_find("bigtwo")), 0);
}
END_TEST

/* ---- Guandan ------------------------------------------------------------------------------ */

/* A set from "rank suit deck" triples, e.g. "3d0 2h1" (deck 0 or 1); jokers "B0", "R1". */
static shed_set_t gd_cards(const char *text)
{
    shed_set_t s = {{0, 0}};
    for (const char *p = text; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        int r = shed_rank_from_char(p[0]);
        ck_assert_int_ge(r, 0);
        int suit = 0;
        if (r < SHED_RANK_BJ) {
            suit = (int)(strchr(shed_suit_chars, p[1]) - shed_suit_chars);
            p++;
        }
        int deck = p[1] - '0';
        ck_assert(deck == 0 || deck == 1);
        shed_set_add(&s, shed_card_make(deck, r, suit));
        p += 2;
    }
    return s;
}

static shed_combo_t gd(const char *text)
{
    shed_combo_t c;
    ck_assert_msg(shed_rules_classify(shed_rules_find("guandan"), gd_cards(text), false, &c) == 0,
                  "'%s' should be a combination", text);
    return c;
}

static bool gd_valid(const char *text)
{
    shed_combo_t c;
    return shed_rules_classify(shed_rules_find("guandan"), gd_cards(text), false, &c) == 0;
}

static bool gd_beats(const char *a, const char *b)
{
    shed_combo_t x = gd(a), y = gd(b);
    return shed_rules_beats(shed_rules_find("guandan"), &x, &y);
}

/* guandan.md "Combinations" at level 2 (the first deal): the hearts 2s are wild. */
START_TEST(test_guandan_combinations_and_wild_hearts)
{
    ck_assert(gd_beats("2d0", "Ad0")); /* the level rank outranks the ace */
    ck_assert(gd_beats("B0", "2d0"));
    ck_assert(gd_beats("R0", "B1"));
    ck_assert(gd_beats("R0R1", "B0B1"));
    ck_assert(!gd_valid("B0R0")); /* jokers pair only with their twin */
    ck_assert(gd_beats("4d04c0", "3d13c1"));
    ck_assert(gd_beats("4d04c04h0Ad0Ac0", "3d03c13h1Kd0Kc0")); /* full house by the trio */
    ck_assert(gd_beats("3d04c05h06s07d0", "Ad02c03h04s05d0")); /* A-2-3-4-5 is the lowest */
    ck_assert(gd_beats("Td0Jc0Qh0Ks0Ad0", "9d0Tc0Jh0Qs0Kd0")); /* 10-J-Q-K-A the highest */
    ck_assert(!gd_valid("Jd0Qc0Kh0As02d0"));                   /* no wrap-around */
    ck_assert(gd_valid("Ad0Ac02d02c03d03c0"));                 /* tube A-2-3 */
    ck_assert(gd_valid("Qd0Qc0Kd0Kc0Ad0Ac0"));                 /* tube */
    ck_assert(gd_valid("Kd0Kc0Kh0Ad0Ac0Ah0"));                 /* plate */
    ck_assert(!gd_valid("3d04d0"));
    ck_assert(!gd_valid("3d03c03h0B0B1")); /* no jokers in a full house */
    /* wild hearts of the level (2h0, 2h1) */
    ck_assert_int_eq(gd("3d04d05d06d02h0").type, 8);              /* straight flush (a bomb) */
    ck_assert_int_eq(gd("3d04c05d06d02h0").type, 5);              /* a plain straight */
    ck_assert_int_eq(gd("3d03c03h04d02h0").type, 4);              /* full house, wild as a 4 */
    ck_assert(gd_beats("3d03c03h03s02h0", "Kd0Kc0Kh0Ks0"));       /* 5-bomb > 4-bomb */
    ck_assert(gd_beats("3d04d05d06d02h0", "Ad0Ac0Ah0As0Ad1"));    /* SF > 5-bomb */
    ck_assert(gd_beats("3d03c03h03s03d13c1", "9s0Ts0Js0Qs0Ks0")); /* 6-bomb > SF */
    ck_assert(gd_beats("B0B1R0R1", "3d03c03h03s03d13c13h13s1"));  /* jokers > 8-bomb */
    ck_assert(gd_beats("4d04c04h04s0", "3d03c12h02h1"));          /* a 4-bomb of 3s with wilds */
}
END_TEST

/*
 * guandan.md "End of a deal", "Levels" and "Tribute": random legal deals of one match; each
 * deal ends when a partnership is out, the winners go up 3/2/1, and the next deal starts with
 * the tribute from the losers (unless they hold both red jokers), after which everybody again
 * holds 27 cards and a payer leads.
 */
START_TEST(test_guandan_levels_rise_and_tribute_follows)
{
    shed_game_t *g = shed_game_create(shed_rules_find("guandan"), NULL);
    shed_set_t *plays = malloc(4096 * sizeof *plays);
    shed_rng_t rng;
    shed_rng_seed(&rng, 99);
    int tributes = 0, no_tributes = 0, matches = 0;
    for (int deal = 0; deal < 200; deal++) {
        int steps_before[2];
        shed_game_level(g, steps_before);
        shed_game_deal_seeded(g, (uint64_t)deal + 500);
        int n;
        const shed_event_t *ev = shed_game_events(g, &n);
        for (int i = 0; i < n; i++)
            no_tributes += ev[i].kind == SHED_EV_NO_TRIBUTE;
        if (deal > 0 && shed_game_phase(g) == SHED_PHASE_TRIBUTE) {
            tributes++;
            while (shed_game_phase(g) == SHED_PHASE_TRIBUTE) {
                int k = shed_game_legal_plays(g, plays, 4096);
                ck_assert_msg(k > 0, "no legal gift: deal %d seat %d holds %d cards", deal,
                              shed_game_turn(g),
                              shed_set_size(shed_game_hand(g, shed_game_turn(g))));
                shed_action_t a = {
                    .kind = SHED_ACT_GIVE, .seat = shed_game_turn(g), .cards = plays[0]};
                ck_assert_int_eq(shed_game_apply(g, &a), SHED_OK);
            }
            for (int s = 0; s < 4; s++)
                ck_assert_int_eq(shed_set_size(shed_game_hand(g, s)), 27);
        }
        while (shed_game_phase(g) == SHED_PHASE_PLAY) {
            shed_action_t a = {.seat = shed_game_turn(g)};
            int k = shed_game_legal_plays(g, plays, 4096);
            ck_assert_int_ge(k, 0);
            if (shed_game_may_pass(g) && (k == 0 || shed_rng_below(&rng, 3) == 0)) {
                a.kind = SHED_ACT_PASS;
            } else {
                ck_assert_int_gt(k, 0);
                a.kind = SHED_ACT_PLAY;
                a.cards = plays[shed_rng_below(&rng, (uint32_t)k)];
            }
            ck_assert_int_eq(shed_game_apply(g, &a), SHED_OK);
        }
        const shed_settlement_t *s = shed_game_settlement(g);
        ck_assert_ptr_nonnull(s);
        int team = s->winner % 2, partner = (s->winner + 2) % 4;
        ck_assert(shed_game_is_out(g, s->winner));
        ck_assert(s->units >= 1 && s->units <= 3);
        ck_assert_int_eq(s->units == 3, shed_game_is_out(g, partner) &&
                                            !shed_game_is_out(g, (s->winner + 1) % 4) &&
                                            !shed_game_is_out(g, (s->winner + 3) % 4));
        for (int i = 0; i < 4; i++)
            ck_assert_int_eq(s->delta[i], (i % 2 == team ? 1 : -1) * s->units);
        int steps_after[2];
        shed_game_level(g, steps_after);
        ev = shed_game_events(g, &n);
        bool match = false;
        for (int i = 0; i < n; i++)
            match = match || ev[i].kind == SHED_EV_MATCH;
        if (match) {
            matches++;
            ck_assert_int_eq(steps_before[team], 12);
            ck_assert_int_eq(steps_after[0] + steps_after[1], 0);
        } else {
            int want = steps_before[team] + (int)s->units;
            ck_assert_int_eq(steps_after[team], want > 12 ? 12 : want);
            ck_assert_int_eq(steps_after[1 - team], steps_before[1 - team]);
        }
    }
    ck_assert_int_gt(tributes, 100);
    ck_assert_int_gt(matches, 0);
    (void)no_tributes;
    free(plays);
    shed_game_destroy(g);
}
END_TEST

/* ---- Guandan: three failures at A ---------------------------------------------------------- */

/*
 * How a scripted Guandan deal goes: GD_TEAM_WINS: the players of `team` play the first listed
 * play whenever they can, the others pass whenever they may (so `team` goes out first and
 * second: 3 levels); GD_LAST_PARTNER: only seat `seat` plays until it is out, then its
 * opponents play and its partner passes (the partner comes last: 1 level).
 */
enum { GD_TEAM_WINS, GD_LAST_PARTNER };

/* Plays one deal of g (tribute included) as the mode says; returns the settlement, checked to
 * sum to minus the rake. */
static const shed_settlement_t *gd_scripted_deal(shed_game_t *g, uint64_t seed, int mode, int who)
{
    shed_set_t *plays = malloc(4096 * sizeof *plays);
    shed_game_deal_seeded(g, seed);
    for (int step = 0; step < 2000 && shed_game_phase(g) != SHED_PHASE_OVER; step++) {
        int turn = shed_game_turn(g), k = shed_game_legal_plays(g, plays, 4096);
        ck_assert_int_ge(k, 0);
        shed_action_t a = {.seat = turn, .kind = SHED_ACT_PLAY};
        if (shed_game_phase(g) == SHED_PHASE_TRIBUTE) {
            a.kind = SHED_ACT_GIVE;
            a.cards = plays[0];
            ck_assert_int_eq(shed_game_apply(g, &a), SHED_OK);
            continue;
        }
        bool eager;
        if (mode == GD_TEAM_WINS)
            eager = turn % 2 == who;
        else if (!shed_game_is_out(g, who))
            eager = turn == who;
        else
            eager = turn % 2 != who % 2;
        if ((!eager || k == 0) && shed_game_may_pass(g)) {
            a.kind = SHED_ACT_PASS;
        } else {
            ck_assert_int_gt(k, 0);
            a.cards = plays[0];
        }
        ck_assert_int_eq(shed_game_apply(g, &a), SHED_OK);
    }
    free(plays);
    const shed_settlement_t *s = shed_game_settlement(g);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->delta[0] + s->delta[1] + s->delta[2] + s->delta[3], -s->rake);
    if (mode == GD_TEAM_WINS) {
        ck_assert_int_eq(s->winner % 2, who);
        ck_assert_int_eq(s->units, 3);
    } else {
        ck_assert_int_eq(s->winner, who);
        ck_assert_int_eq(s->units, 1);
    }
    return s;
}

static shed_game_t *gd_game(unsigned opts)
{
    shed_config_t cfg = {.base_stake = 10, .rake_permille = 50, .options = opts};
    shed_game_t *g = shed_game_create(shed_rules_find("guandan"), &cfg);
    ck_assert_ptr_nonnull(g);
    return g;
}

/* Team 0 wins four deals by 3 levels (2 -> 5 -> 8 -> J -> A) and then plays at A; returns the
 * next seed to deal. */
static uint64_t gd_reach_a(shed_game_t *g)
{
    int steps[2];
    uint64_t seed = 1;
    for (int d = 0; d < 4; d++)
        gd_scripted_deal(g, seed++, GD_TEAM_WINS, 0);
    shed_game_level(g, steps);
    ck_assert_int_eq(steps[0], 12);
    ck_assert_int_eq(steps[1], 0);
    ck_assert_int_eq(shed_game_a_failures(g, 0), 0); /* reaching A is no failure */
    return seed;
}

/* guandan.md "Options": at A, winning with the partner last (1 level) twice and then losing is
 * three failures: team 0 is back at level 2 after the third, still at A after two. */
START_TEST(test_guandan_third_failure_at_a_drops_the_level_to_2)
{
    shed_game_t *g = gd_game(SHED_OPT_GD_A_THREE_FAILS);
    uint64_t seed = gd_reach_a(g);
    int steps[2];
    for (int fail = 1; fail <= 2; fail++) {
        gd_scripted_deal(g, seed++, GD_LAST_PARTNER, 0); /* seat 0 first, seat 2 last */
        ck_assert(has_event(g, SHED_EV_A_FAILED, 0, fail));
        ck_assert(!has_event(g, SHED_EV_MATCH, 0, 12));
        shed_game_level(g, steps);
        ck_assert_int_eq(steps[0], 12);
        ck_assert_int_eq(shed_game_a_failures(g, 0), fail);
    }
    gd_scripted_deal(g, seed++, GD_TEAM_WINS, 1); /* the opponents win at team 0's A */
    ck_assert(has_event(g, SHED_EV_A_FAILED, 0, 3));
    ck_assert(has_event(g, SHED_EV_LEVEL, 0, 0));
    shed_game_level(g, steps);
    ck_assert_int_eq(steps[0], 0);
    ck_assert_int_eq(steps[1], 3);
    ck_assert_int_eq(shed_game_a_failures(g, 0), 0);
    /* the next deal is at the opponents' level 5, nobody at A: no failure counted */
    gd_scripted_deal(g, seed++, GD_TEAM_WINS, 1);
    ck_assert_int_eq(shed_game_level(g, steps), 2); /* the deal just played: at 5 (rank 2) */
    ck_assert(!has_event(g, SHED_EV_A_FAILED, 0, 1) && !has_event(g, SHED_EV_A_FAILED, 1, 1));
    ck_assert_int_eq(steps[0], 0);
    ck_assert_int_eq(steps[1], 6);
    shed_game_destroy(g);
}
END_TEST

/* guandan.md: without the option the same deals leave team 0 at A (no failures counted). */
START_TEST(test_guandan_without_option_stays_at_a_after_three_failures)
{
    shed_game_t *g = gd_game(0);
    uint64_t seed = gd_reach_a(g);
    int steps[2];
    gd_scripted_deal(g, seed++, GD_LAST_PARTNER, 0);
    gd_scripted_deal(g, seed++, GD_LAST_PARTNER, 0);
    gd_scripted_deal(g, seed++, GD_TEAM_WINS, 1);
    ck_assert(!has_event(g, SHED_EV_A_FAILED, 0, 3));
    shed_game_level(g, steps);
    ck_assert_int_eq(steps[0], 12);
    ck_assert_int_eq(steps[1], 3);
    ck_assert_int_eq(shed_game_a_failures(g, 0), 0);
    shed_game_destroy(g);
}
END_TEST

/* guandan.md "Options": after two failures a win at A with the partner not last still wins the
 * match (levels and failures start again). */
START_TEST(test_guandan_win_at_a_after_two_failures_wins_the_match)
{
    shed_game_t *g = gd_game(SHED_OPT_GD_A_THREE_FAILS);
    uint64_t seed = gd_reach_a(g);
    int steps[2];
    gd_scripted_deal(g, seed++, GD_LAST_PARTNER, 0);
    gd_scripted_deal(g, seed++, GD_LAST_PARTNER, 0);
    ck_assert_int_eq(shed_game_a_failures(g, 0), 2);
    gd_scripted_deal(g, seed++, GD_TEAM_WINS, 0);
    ck_assert(has_event(g, SHED_EV_MATCH, 0, 12));
    ck_assert(!has_event(g, SHED_EV_A_FAILED, 0, 3));
    shed_game_level(g, steps);
    ck_assert_int_eq(steps[0] + steps[1], 0);
    ck_assert_int_eq(shed_game_a_failures(g, 0), 0);
    shed_game_destroy(g);
}
END_TEST

/* ---- croupier-rules moves for the other games ---------------------------------------------- */

/* Runs croupier-rules with args; returns its exit code and its stdout (lines joined by ' '). */
static int run_rules(const char *args, char *out, size_t outlen)
{
    const char *build = getenv("CROUPIER_BUILD");
    char cmd[512];
    ck_assert_ptr_nonnull(build);
    snprintf(cmd, sizeof cmd, "%s/tools/croupier-rules %s 2>/dev/null", build, args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = 0;
    int ch;
    while ((ch = fgetc(p)) != EOF)
        if (n + 1 < outlen)
            out[n++] = ch == '\n' ? ' ' : (char)ch;
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_cli_lists_moves_for_every_game)
{
    char out[4096];
    ck_assert_int_eq(run_rules("moves bigtwo 3d4d5d6d7d8c 7s", out, sizeof out), 0);
    ck_assert_str_eq(out, "8c pass ");
    /* runfast: trio with two on 333+69: 444 or 555 with any two others */
    ck_assert_int_eq(run_rules("moves runfast 44455567 33369", out, sizeof out), 0);
    ck_assert_str_eq(out, "44455 44555 44456 45556 44457 45557 44467 55567 pass ");
    /* guandan at level 2: the heart 2 is wild (pairs, straight flush) */
    ck_assert_int_eq(run_rules("moves guandan 3d4d5d6d2h 3c", out, sizeof out), 0);
    ck_assert_str_eq(out, "4d 5d 6d 2h 3d4d5d6d2h pass ");
    ck_assert_int_eq(run_rules("moves bigtwo 3d 3z", out, sizeof out), 2);
    ck_assert_int_eq(run_rules("moves bigtwo 3d3c 4d5d", out, sizeof out), 2);
    ck_assert_int_eq(run_rules("moves guandan 3d3d3d", out, sizeof out), 2);
    ck_assert_int_eq(run_rules("moves runfast 2222", out, sizeof out), 2);
    ck_assert_int_eq(run_rules("moves runfast 44455567 3336", out, sizeof out), 2);
    ck_assert_str_eq(out, "");
}
END_TEST

/* croupier-rules moves with rule options: report single (the next player then holds one
 * card), four with kickers; an option of another game or an unknown one is refused. */
START_TEST(test_cli_lists_moves_under_rule_options)
{
    char out[4096];
    ck_assert_int_eq(run_rules("moves runfast 3356K 4", out, sizeof out), 0);
    ck_assert_str_eq(out, "5 6 K pass ");
    ck_assert_int_eq(run_rules("moves runfast --report-single 3356K 4", out, sizeof out), 0);
    ck_assert_str_eq(out, "K pass ");
    ck_assert_int_eq(run_rules("moves runfast --report-single 3356K", out, sizeof out), 0);
    ck_assert_str_eq(out, "33 K ");
    ck_assert_int_eq(run_rules("moves runfast --four-with-two 6666357T 444489", out, sizeof out),
                     0);
    ck_assert_str_eq(out, "6666 356666 366667 566667 36666T 56666T 66667T pass ");
    ck_assert_int_eq(run_rules("moves runfast 6666357T 444489", out, sizeof out), 2);
    ck_assert_int_eq(run_rules("moves guandan --a-three-fails 3d4d 3c", out, sizeof out), 0);
    ck_assert_str_eq(out, "4d pass ");
    ck_assert_int_eq(run_rules("moves guandan --report-single 3d", out, sizeof out), 2);
    ck_assert_int_eq(run_rules("moves runfast --no-such-option 3", out, sizeof out), 2);
    ck_assert_int_eq(run_rules("moves doudizhu --bomb-pays 3", out, sizeof out), 2);
    ck_assert_str_eq(out, "");
}
END_TEST

static Suite *rules_suite(void)
{
    Suite *s = suite_create("trad_rules");
    TCase *tc = tcase_create("doudizhu");
    tcase_add_test(tc, test_ddz_highest_bidder_takes_bottom_cards_and_leads);
    tcase_add_test(tc, test_ddz_bid_of_three_ends_bidding_at_once);
    tcase_add_test(tc, test_ddz_all_pass_throws_the_deal_in);
    tcase_add_test(tc, test_ddz_spring_doubles_the_stake);
    tcase_add_test(tc, test_ddz_rocket_and_anti_spring_double_for_the_peasants);
    tcase_add_test(tc, test_ddz_refusals_name_the_reason_and_change_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("bigtwo");
    tcase_add_test(tc, test_bigtwo_combinations_order);
    tcase_add_test(tc, test_bigtwo_three_of_diamonds_opens);
    tcase_add_test(tc, test_bigtwo_penalty_per_card_left);
    suite_add_tcase(s, tc);
    tc = tcase_create("runfast");
    tcase_add_test(tc, test_runfast_deck_is_the_48_card_variant);
    tcase_add_test(tc, test_runfast_must_beat_when_able);
    tcase_add_test(tc, test_runfast_short_trio_only_as_last_cards);
    suite_add_tcase(s, tc);
    tc = tcase_create("runfast_report_single");
    tcase_add_test(tc, test_runfast_report_single_off_allows_any_single);
    tcase_add_test(tc, test_runfast_report_single_leads_only_the_highest_single);
    tcase_add_test(tc, test_runfast_report_single_follows_with_the_highest_single);
    suite_add_tcase(s, tc);
    tc = tcase_create("runfast_four_with_kickers");
    tcase_add_test(tc, test_runfast_four_with_kickers_only_under_its_option);
    tcase_add_test(tc, test_runfast_four_with_kickers_listed_and_checked);
    suite_add_tcase(s, tc);
    tc = tcase_create("runfast_bomb_pays");
    tcase_add_test(tc, test_runfast_bomb_doubles_without_bomb_pays);
    tcase_add_test(tc, test_runfast_bomb_pays_at_once_even_to_a_loser);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_add_test(tc, test_options_of_another_game_are_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("guandan_a_three_fails");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_guandan_third_failure_at_a_drops_the_level_to_2);
    tcase_add_test(tc, test_guandan_without_option_stays_at_a_after_three_failures);
    tcase_add_test(tc, test_guandan_win_at_a_after_two_failures_wins_the_match);
    suite_add_tcase(s, tc);
    tc = tcase_create("guandan");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_guandan_combinations_and_wild_hearts);
    tcase_add_test(tc, test_guandan_levels_rise_and_tribute_follows);
    suite_add_tcase(s, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cli_lists_moves_for_every_game);
    tcase_add_test(tc, test_cli_lists_moves_under_rule_options);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rules_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
