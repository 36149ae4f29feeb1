/*
 * Unit tests for games/persistent: the blackjack table, shoe, basic strategy and simulator.
 * Rules cited are those of docs/rules/blackjack.md (section numbers in comments).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bj_sim.h"
#include "bj_strategy.h"
#include "blackjack.h"
#include "deck.h"
#include "test_blackjack_random.h"

/* Cards of the first suit: ace, two..ten, king. */
#define CA 0
#define C(v) ((uint8_t)((v)-1))
#define CK 12

typedef struct {
    bj_table_t *t;
    bj_rng_t rng;
    bjr_track_t tr;
} fixture_t;

/* A table with `seats` seated players and the shoe stacked with cards, betting open. */
static void fx_open(fixture_t *fx, const bj_rules_t *rules, int seats, const uint8_t *cards, int n)
{
    memset(fx, 0, sizeof(*fx));
    bj_rng_seed(&fx->rng, 42);
    fx->tr.decks = rules->decks;
    ck_assert_int_eq(bj_table_create(rules, &fx->rng, bjr_event_cb, &fx->tr, &fx->t), 0);
    for (int s = 0; s < seats; s++)
        ck_assert_int_eq(bj_table_sit(fx->t, s, 100 + (uint64_t)s), 0);
    ck_assert_int_eq(bj_table_stack_shoe(fx->t, cards, n), 0);
    ck_assert_int_eq(bj_table_open_betting(fx->t), 0);
}

/* Same, and every seat bets 10 (so the deal happens). */
static void fx_deal(fixture_t *fx, const bj_rules_t *rules, int seats, const uint8_t *cards, int n)
{
    fx_open(fx, rules, seats, cards, n);
    for (int s = 0; s < seats; s++)
        ck_assert_int_eq(bj_table_bet(fx->t, s, 10), 0);
}

static void fx_done(fixture_t *fx)
{
    ck_assert_msg(!fx->tr.bad, "%s", fx->tr.why);
    bj_table_destroy(fx->t);
}

/* Asserts that input rc is the error want and that the table did not change. */
#define ASSERT_REFUSED(fx, call, want)                                                             \
    do {                                                                                           \
        static bj_snapshot_t b_, a_;                                                               \
        bj_table_snapshot((fx)->t, &b_);                                                           \
        uint64_t ev_ = (fx)->tr.events;                                                            \
        ck_assert_int_eq((call), (want));                                                          \
        bj_table_snapshot((fx)->t, &a_);                                                           \
        ck_assert(memcmp(&b_, &a_, sizeof(b_)) == 0);                                              \
        ck_assert_uint_eq((fx)->tr.events, ev_);                                                   \
    } while (0)

static int64_t fx_delta(fixture_t *fx, int seat)
{
    const bj_settlement_t *st = bj_table_settlement(fx->t);
    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq(bj_table_phase(fx->t), BJ_PHASE_IDLE);
    return st->seats[seat].delta;
}

/* ---- rules ---------------------------------------------------------------------------- */

START_TEST(test_bj_rules_default_valid_and_bad_rules_named)
{
    bj_rules_t r;
    char err[128];
    bj_rules_default(&r);
    ck_assert_int_eq(bj_rules_validate(&r, err, sizeof(err)), 0);
    r.decks = 9;
    ck_assert_int_eq(bj_rules_validate(&r, err, sizeof(err)), BJ_ERR_INVALID);
    ck_assert(strstr(err, "decks") != NULL);
    bj_rules_default(&r);
    r.max_bet = 5;
    ck_assert_int_eq(bj_rules_validate(&r, err, sizeof(err)), BJ_ERR_INVALID);
    bj_rules_default(&r);
    r.seats = 8;
    ck_assert_int_eq(bj_rules_validate(&r, err, sizeof(err)), BJ_ERR_INVALID);
    bj_rules_default(&r);
    r.penetration = 990;
    ck_assert_int_eq(bj_rules_validate(&r, err, sizeof(err)), BJ_ERR_INVALID);
    bj_table_t *t = NULL;
    ck_assert_int_eq(bj_table_create(&r, NULL, NULL, NULL, &t), BJ_ERR_INVALID);
    ck_assert_ptr_null(t);
    bj_table_destroy(NULL);
}
END_TEST

START_TEST(test_bj_rng_seeded_is_reproducible_and_bounded)
{
    bj_rng_t a, b;
    bj_rng_seed(&a, 7);
    bj_rng_seed(&b, 7);
    int hist[6] = {0};
    for (int i = 0; i < 60000; i++) {
        uint32_t x = bj_rng_uniform(&a, 6);
        ck_assert_uint_eq(x, bj_rng_uniform(&b, 6));
        ck_assert_uint_lt(x, 6);
        hist[x]++;
    }
    for (int i = 0; i < 6; i++)
        ck_assert(hist[i] > 9500 && hist[i] < 10500);
}
END_TEST

/* ---- shoe (rules §2) ------------------------------------------------------------------ */

START_TEST(test_bj_shoe_holds_each_card_once_per_deck_and_reshuffles_at_cut)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 2;
    r.penetration = 500;
    fixture_t fx;
    fx_open(&fx, &r, 1, NULL, 0);
    bj_table_timeout(fx.t); /* no bet: no round */
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_IDLE);
    bj_snapshot_t sn;
    uint64_t shoes = fx.tr.shuffles;
    for (int i = 0; i < 200; i++) {
        ck_assert_int_eq(bj_table_open_betting(fx.t), 0);
        ck_assert_int_eq(bj_table_bet(fx.t, 0, 10), 0);
        while (bj_table_phase(fx.t) != BJ_PHASE_IDLE)
            bj_table_timeout(fx.t);
        bj_table_snapshot(fx.t, &sn);
        ck_assert_int_eq(sn.cards_left, fx.tr.shoe_size - fx.tr.dealt);
        /* The cut card is at half of 104 cards: a shoe never deals much past it. */
        ck_assert_int_ge(sn.cards_left, 52 - 12);
    }
    ck_assert_uint_gt(fx.tr.shuffles, shoes + 10);
    fx_done(&fx);
}
END_TEST

/* Production tables shuffle with the CSPRNG (rules §2): same integrity, no seed. */
START_TEST(test_bj_csprng_shoe_keeps_integrity)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 1;
    r.penetration = 800;
    bjr_track_t tr;
    memset(&tr, 0, sizeof(tr));
    tr.decks = 1;
    bj_table_t *t;
    ck_assert_int_eq(bj_table_create(&r, NULL, bjr_event_cb, &tr, &t), 0);
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(bj_table_sit(t, s, 10 + (uint64_t)s), 0);
    bj_snapshot_t sn;
    for (int round = 0; round < 300; round++) {
        ck_assert_int_eq(bj_table_open_betting(t), 0);
        for (int s = 0; s < 4; s++)
            ck_assert_int_eq(bj_table_bet(t, s, 20), 0);
        while (bj_table_phase(t) != BJ_PHASE_IDLE)
            ck_assert_int_eq(bj_table_timeout(t), 0);
        bj_table_snapshot(t, &sn);
        ck_assert_int_eq(sn.cards_left, tr.shoe_size - tr.dealt);
        bjr_check_settlement(&tr, &sn);
    }
    ck_assert_msg(!tr.bad, "%s", tr.why);
    ck_assert_uint_gt(tr.shuffles, 30);
    bj_table_destroy(t);
}
END_TEST

static int bj_failing_gen(unsigned char *buf, int n)
{
    (void)buf;
    (void)n;
    return 0;
}

/* docs/fairness.md: a failed deck generator takes no bet and deals no card; never a fallback. */
START_TEST(test_bj_failed_generator_refuses_bets_and_voids_the_reshuffled_round)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 1;
    r.penetration = 500;
    bj_table_t *t;
    ck_assert_int_eq(bj_table_create(&r, NULL, NULL, NULL, &t), 0);
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(bj_table_sit(t, s, 10 + (uint64_t)s), 0);
    bj_snapshot_t sn;
    /* Play until the cut card is out: the next deal reshuffles. */
    for (int round = 0; round < 50; round++) {
        bj_table_snapshot(t, &sn);
        if (sn.cut_card_out)
            break;
        ck_assert_int_eq(bj_table_open_betting(t), 0);
        for (int s = 0; s < 4; s++)
            ck_assert_int_eq(bj_table_bet(t, s, 20), 0);
        while (bj_table_phase(t) != BJ_PHASE_IDLE)
            ck_assert_int_eq(bj_table_timeout(t), 0);
    }
    ck_assert(sn.cut_card_out);
    ck_assert_int_eq(bj_table_open_betting(t), 0);
    deck_set_generator(bj_failing_gen);
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(bj_table_bet(t, s, 20), 0);
    /* The last bet closed betting; the reshuffle failed: the round is over, voided. */
    ck_assert_int_eq(bj_table_phase(t), BJ_PHASE_IDLE);
    bj_table_snapshot(t, &sn);
    ck_assert(sn.last.voided);
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(sn.last.seats[s].delta, 0);
    ck_assert(!deck_healthy());
    ck_assert_int_eq(bj_table_open_betting(t), BJ_ERR_RNG);
    bj_table_t *t2;
    deck_set_generator(NULL); /* a working generator again changes nothing: sticky */
    ck_assert_int_eq(bj_table_create(&r, NULL, NULL, NULL, &t2), BJ_ERR_RNG);
    ck_assert_int_eq(bj_table_open_betting(t), BJ_ERR_RNG);
    deck_health_reset();
    ck_assert_int_eq(bj_table_open_betting(t), 0);
    bj_table_destroy(t);
}
END_TEST

START_TEST(test_bj_stack_shoe_refuses_missing_card)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 1;
    bj_table_t *t;
    ck_assert_int_eq(bj_table_create(&r, NULL, NULL, NULL, &t), 0);
    uint8_t two_kings[2] = {CK, CK};
    ck_assert_int_eq(bj_table_stack_shoe(t, two_kings, 2), BJ_ERR_NO_CARD);
    uint8_t bad[1] = {60};
    ck_assert_int_eq(bj_table_stack_shoe(t, bad, 1), BJ_ERR_NO_CARD);
    ck_assert_int_eq(bj_table_stack_shoe(t, two_kings, 1), 0);
    bj_table_destroy(t);
}
END_TEST

START_TEST(test_bj_shoe_running_dry_mid_round_refills_from_discards)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 1;
    r.penetration = 950;
    fixture_t fx;
    fx_open(&fx, &r, 7, NULL, 0);
    ck_assert_int_eq(bj_table_timeout(fx.t), 0);
    bj_snapshot_t sn;
    for (int round = 0; round < 100 && fx.tr.midround_shuffles == 0; round++) {
        ck_assert_int_eq(bj_table_open_betting(fx.t), 0);
        for (int s = 0; s < 7; s++)
            ck_assert_int_eq(bj_table_bet(fx.t, s, 10), 0);
        bj_decision_t d;
        while (bj_table_phase(fx.t) == BJ_PHASE_INSURANCE)
            ck_assert_int_eq(bj_table_timeout(fx.t), 0);
        /* everybody hits to the end: many cards per round */
        while (bj_table_decision(fx.t, &d))
            ck_assert_int_eq(
                bj_table_act(fx.t, d.seat,
                             (d.allowed & BJ_ACT_BIT(BJ_ACT_HIT)) ? BJ_ACT_HIT : BJ_ACT_STAND),
                0);
        bj_table_snapshot(fx.t, &sn);
        ck_assert_int_eq(sn.cards_left, fx.tr.shoe_size - fx.tr.dealt);
        bjr_check_settlement(&fx.tr, &sn);
    }
    ck_assert_uint_gt(fx.tr.midround_shuffles, 0);
    bj_table_snapshot(fx.t, &sn);
    ck_assert(sn.cut_card_out); /* a full reshuffle follows */
    fx_done(&fx);
}
END_TEST

/* ---- shoe commitments (docs/fairness.md "Blackjack's shoes") --------------------------- */

/* Watches the shoe events of a table: every card's shoe, position and commitment, every shoe's
 * reveal opening its commitment and holding the dealt cards at their positions. */
typedef struct {
    bjr_track_t tr;
    uint64_t shoe;
    uint8_t commit[DECK_COMMIT_LEN];
    bool have_shoe, retired;
    int next_pos; /* cards dealt from the shoe: the next card's position */
    uint8_t dealt[BJ_MAX_DECKS * 52];
    int round_cards_shoe; /* cards of the running round from the current shoe */
    int shuffles, reveals, midround_reveals;
    int rounds_this_shoe, max_rounds_one_shoe; /* rounds dealt from one commitment */
    uint8_t last_reveal_commit[DECK_COMMIT_LEN];
    bool in_round;
    bool bad;
    char why[200];
} shoe_watch_t;

static void sw_fail(shoe_watch_t *w, const char *why)
{
    if (!w->bad)
        snprintf(w->why, sizeof w->why, "%s", why);
    w->bad = true;
}

static void shoe_watch_cb(void *ctx, const bj_event_t *ev)
{
    shoe_watch_t *w = ctx;
    bjr_event_cb(&w->tr, ev);
    switch (ev->type) {
    case BJ_EV_SHUFFLE:
        if (w->have_shoe && !w->retired)
            sw_fail(w, "a new shoe before the old one was revealed");
        if (w->have_shoe && ev->shoe_id <= w->shoe)
            sw_fail(w, "the shoe number did not grow");
        if (w->have_shoe && memcmp(ev->commitment, w->commit, DECK_COMMIT_LEN) == 0)
            sw_fail(w, "a new shoe under the old commitment");
        w->shoe = ev->shoe_id;
        memcpy(w->commit, ev->commitment, DECK_COMMIT_LEN);
        w->have_shoe = true;
        w->retired = false;
        w->next_pos = 0;
        w->rounds_this_shoe = 0;
        w->round_cards_shoe = 0;
        w->shuffles++;
        break;
    case BJ_EV_BETTING_OPEN:
        w->in_round = true;
        w->round_cards_shoe = 0;
        break;
    case BJ_EV_CARD:
        if (w->retired || ev->shoe_id != w->shoe ||
            memcmp(ev->commitment, w->commit, DECK_COMMIT_LEN) != 0)
            sw_fail(w, "a card not from the committed shoe");
        if (ev->shoe_pos != w->next_pos)
            sw_fail(w, "a card not at the next position of the shoe");
        if (w->round_cards_shoe++ == 0)
            w->rounds_this_shoe++;
        if (w->rounds_this_shoe > w->max_rounds_one_shoe)
            w->max_rounds_one_shoe = w->rounds_this_shoe;
        w->dealt[w->next_pos++] = ev->card == BJ_CARD_HIDDEN ? ev->hole_card : ev->card;
        break;
    case BJ_EV_HOLE:
        if (ev->shoe_id == w->shoe && w->dealt[ev->shoe_pos] != ev->card)
            sw_fail(w, "the hole card shown is not the card dealt at its position");
        break;
    case BJ_EV_SHOE_RETIRED: {
        uint8_t got[DECK_COMMIT_LEN];
        if (ev->shoe_id != w->shoe || w->retired)
            sw_fail(w, "a reveal of another shoe, or twice");
        deck_commitment_tagged(DECK_SHOE_TAG, ev->shoe_cards, (size_t)ev->amount, ev->shoe_nonce,
                               got);
        if (memcmp(got, w->commit, DECK_COMMIT_LEN) != 0 ||
            memcmp(ev->commitment, w->commit, DECK_COMMIT_LEN) != 0)
            sw_fail(w, "the revealed order and nonce do not open the commitment");
        if (ev->shoe_pos != w->next_pos ||
            memcmp(ev->shoe_cards, w->dealt, (size_t)w->next_pos) != 0)
            sw_fail(w, "the revealed order is not the cards dealt at their positions");
        w->retired = true;
        w->reveals++;
        w->midround_reveals += w->in_round;
        memcpy(w->last_reveal_commit, got, sizeof got);
        break;
    }
    case BJ_EV_SETTLED:
    case BJ_EV_NO_ROUND:
        w->in_round = false;
        break;
    default:
        break;
    }
}

/* Rounds of a production table (the kit's deck source): one commitment per shoe, the same on
 * every card of every round of that shoe, a new one at the reshuffle; the reveal at the end of
 * the round that brought the cut card out opens it, and the rounds' cards are the shoe's cards
 * at consecutive positions. The snapshot carries the shoe, its commitment and its position. */
START_TEST(test_bj_shoe_commitment_per_shoe_opened_when_retired)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 1;
    r.penetration = 600;
    shoe_watch_t w;
    memset(&w, 0, sizeof w);
    w.tr.decks = 1;
    bj_table_t *t;
    ck_assert_int_eq(bj_table_create(&r, NULL, shoe_watch_cb, &w, &t), 0);
    ck_assert_int_eq(w.shuffles, 1);
    for (int s = 0; s < 3; s++)
        ck_assert_int_eq(bj_table_sit(t, s, 10 + (uint64_t)s), 0);
    bj_snapshot_t sn;
    for (int round = 0; round < 60; round++) {
        ck_assert_int_eq(bj_table_open_betting(t), 0);
        for (int s = 0; s < 3; s++)
            ck_assert_int_eq(bj_table_bet(t, s, 20), 0);
        while (bj_table_phase(t) != BJ_PHASE_IDLE)
            ck_assert_int_eq(bj_table_timeout(t), 0);
        bj_table_snapshot(t, &sn);
        ck_assert_msg(!w.bad, "%s", w.why);
        ck_assert_uint_eq(sn.shoe_id, w.shoe);
        ck_assert(sn.shoe_retired == w.retired);
        /* retired exactly when the cut card is out (60 % of 52 cards: position 31) */
        ck_assert(sn.shoe_retired == sn.cut_card_out);
        if (!sn.shoe_retired) {
            ck_assert_int_eq(sn.shoe_dealt, w.next_pos);
            ck_assert(memcmp(sn.shoe_commitment, w.commit, DECK_COMMIT_LEN) == 0);
        } else {
            ck_assert_int_ge(w.next_pos, 31);
        }
    }
    ck_assert_msg(!w.bad, "%s", w.why);
    ck_assert_int_ge(w.reveals, 5);
    ck_assert_int_ge(w.shuffles, w.reveals);
    ck_assert_int_ge(w.max_rounds_one_shoe, 3); /* one commitment over several rounds */
    /* A revealed order opens only under the shoe's tag, never as a round's deck. */
    ck_assert(!w.tr.bad);
    bj_table_retire_shoe(t); /* e.g. the table closes: revealed at once, then a new shoe */
    ck_assert(w.retired);
    int reveals = w.reveals;
    bj_table_retire_shoe(t);
    ck_assert_int_eq(w.reveals, reveals); /* once per shoe */
    ck_assert_int_eq(bj_table_open_betting(t), 0);
    ck_assert_int_eq(bj_table_bet(t, 0, 20), 0);
    ck_assert_int_eq(bj_table_bet(t, 1, 20), 0);
    ck_assert_int_eq(bj_table_bet(t, 2, 20), 0);
    ck_assert(!w.retired); /* the deal shuffled a new, committed shoe */
    ck_assert_msg(!w.bad, "%s", w.why);
    bj_table_destroy(t);
}
END_TEST

/* The shoe runs dry mid-round: the old shoe is revealed in that round, the refill is a shoe of
 * its own (a new commitment, positions from 0), and it is revealed when the round ends. */
START_TEST(test_bj_shoe_refill_mid_round_is_a_shoe_of_its_own)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 1;
    r.penetration = 950;
    shoe_watch_t w;
    memset(&w, 0, sizeof w);
    w.tr.decks = 1;
    bj_rng_t rng;
    bj_rng_seed(&rng, 7);
    bj_table_t *t;
    ck_assert_int_eq(bj_table_create(&r, &rng, shoe_watch_cb, &w, &t), 0);
    for (int s = 0; s < 7; s++)
        ck_assert_int_eq(bj_table_sit(t, s, 100 + (uint64_t)s), 0);
    for (int round = 0; round < 100 && w.tr.midround_shuffles == 0; round++) {
        ck_assert_int_eq(bj_table_open_betting(t), 0);
        for (int s = 0; s < 7; s++)
            ck_assert_int_eq(bj_table_bet(t, s, 10), 0);
        bj_decision_t d;
        while (bj_table_phase(t) == BJ_PHASE_INSURANCE)
            ck_assert_int_eq(bj_table_timeout(t), 0);
        while (bj_table_decision(t, &d))
            ck_assert_int_eq(
                bj_table_act(t, d.seat,
                             (d.allowed & BJ_ACT_BIT(BJ_ACT_HIT)) ? BJ_ACT_HIT : BJ_ACT_STAND),
                0);
        ck_assert_msg(!w.bad, "%s", w.why);
    }
    ck_assert_uint_gt(w.tr.midround_shuffles, 0);
    ck_assert_int_ge(w.midround_reveals, 2); /* the dry shoe, then the refill at the round's end */
    ck_assert(w.retired);
    bj_table_destroy(t);
}
END_TEST

/* A whole-table move: the shoe's state goes to the adopting table, which deals on from the same
 * position under the same number and commitment; a state whose order does not open its
 * commitment, or does not fit the decks, is refused and changes nothing. */
START_TEST(test_bj_shoe_moves_with_its_commitment)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 2;
    bj_table_t *a, *b;
    shoe_watch_t wa, wb;
    memset(&wa, 0, sizeof wa);
    memset(&wb, 0, sizeof wb);
    wa.tr.decks = wb.tr.decks = 2;
    ck_assert_int_eq(bj_table_create(&r, NULL, shoe_watch_cb, &wa, &a), 0);
    ck_assert_int_eq(bj_table_create(&r, NULL, shoe_watch_cb, &wb, &b), 0);
    ck_assert_int_eq(bj_table_sit(a, 0, 5), 0);
    ck_assert_int_eq(bj_table_sit(b, 0, 5), 0);
    for (int round = 0; round < 3; round++) {
        ck_assert_int_eq(bj_table_open_betting(a), 0);
        ck_assert_int_eq(bj_table_bet(a, 0, 10), 0);
        while (bj_table_phase(a) != BJ_PHASE_IDLE)
            ck_assert_int_eq(bj_table_timeout(a), 0);
    }
    static bj_shoe_state_t st, bad;
    ck_assert_int_eq(bj_table_export_shoe(a, &st), 0);
    ck_assert(!st.retired);
    ck_assert_int_eq(st.pos, wa.next_pos);
    bad = st;
    bad.cards[st.pos] = (uint8_t)((bad.cards[st.pos] + 1) % 52); /* a changed undealt card */
    bj_snapshot_t before, after;
    bj_table_snapshot(b, &before);
    ck_assert_int_eq(bj_table_import_shoe(b, &bad), BJ_ERR_INVALID);
    bad = st;
    bad.cards[0] = bad.cards[1] = bad.cards[2] = 7; /* three sevens of clubs in two decks */
    ck_assert_int_eq(bj_table_import_shoe(b, &bad), BJ_ERR_INVALID);
    bj_table_snapshot(b, &after);
    ck_assert(memcmp(&before, &after, sizeof before) == 0);
    ck_assert_int_eq(bj_table_import_shoe(b, &st), 0);
    bj_table_snapshot(b, &after);
    ck_assert_uint_eq(after.shoe_id, st.id);
    ck_assert_int_eq(after.shoe_dealt, st.pos);
    ck_assert(memcmp(after.shoe_commitment, st.commitment, DECK_COMMIT_LEN) == 0);
    /* b deals the very next cards of a's shoe, under its commitment. */
    wb.shoe = st.id;
    memcpy(wb.commit, st.commitment, DECK_COMMIT_LEN);
    memcpy(wb.dealt, st.cards, (size_t)st.pos);
    wb.next_pos = st.pos;
    wb.retired = false;
    ck_assert_int_eq(bj_table_open_betting(b), 0);
    ck_assert_int_eq(bj_table_bet(b, 0, 10), 0);
    while (bj_table_phase(b) != BJ_PHASE_IDLE)
        ck_assert_int_eq(bj_table_timeout(b), 0);
    ck_assert_msg(!wb.bad, "%s", wb.why);
    ck_assert_int_gt(wb.next_pos, st.pos);
    ck_assert(memcmp(wb.dealt + st.pos, st.cards + st.pos, (size_t)(wb.next_pos - st.pos)) == 0);
    bj_table_retire_shoe(b);
    ck_assert_msg(!wb.bad, "%s", wb.why); /* the adopted shoe opens with its own nonce */
    ck_assert(memcmp(wb.last_reveal_commit, st.commitment, DECK_COMMIT_LEN) == 0);
    bj_table_destroy(a);
    bj_table_destroy(b);
}
END_TEST

/* Stacking (tests only) changes the committed order: the shoe is revealed and its undealt cards,
 * stacked, are committed to as a new shoe whose first cards are the stacked ones. */
START_TEST(test_bj_stacked_shoe_is_committed_anew)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.decks = 1;
    shoe_watch_t w;
    memset(&w, 0, sizeof w);
    w.tr.decks = 1;
    bj_table_t *t;
    ck_assert_int_eq(bj_table_create(&r, NULL, shoe_watch_cb, &w, &t), 0);
    uint8_t first_commit[DECK_COMMIT_LEN];
    memcpy(first_commit, w.commit, sizeof first_commit);
    uint8_t cards[3] = {CK, CA, C(5)};
    ck_assert_int_eq(bj_table_stack_shoe(t, cards, 3), 0);
    ck_assert_msg(!w.bad, "%s", w.why);
    ck_assert_int_eq(w.reveals, 1);
    ck_assert_int_eq(w.shuffles, 2);
    ck_assert(memcmp(w.commit, first_commit, DECK_COMMIT_LEN) != 0);
    ck_assert_int_eq(bj_table_sit(t, 0, 9), 0);
    ck_assert_int_eq(bj_table_open_betting(t), 0);
    ck_assert_int_eq(bj_table_bet(t, 0, 10), 0);
    ck_assert_uint_eq(w.dealt[0], CK);
    ck_assert_uint_eq(w.dealt[1], CA);
    ck_assert_uint_eq(w.dealt[2], C(5));
    ck_assert_msg(!w.bad, "%s", w.why);
    bj_table_destroy(t);
}
END_TEST

/* ---- betting and seats (rules §3) ----------------------------------------------------- */

START_TEST(test_bj_bet_outside_limits_refused_unchanged)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    fx_open(&fx, &r, 2, NULL, 0);
    ASSERT_REFUSED(&fx, bj_table_bet(fx.t, 0, 9), BJ_ERR_BET_LIMIT);
    ASSERT_REFUSED(&fx, bj_table_bet(fx.t, 0, 10001), BJ_ERR_BET_LIMIT);
    ASSERT_REFUSED(&fx, bj_table_bet(fx.t, 3, 10), BJ_ERR_SEAT_EMPTY);
    ASSERT_REFUSED(&fx, bj_table_bet(fx.t, 7, 10), BJ_ERR_INVALID);
    ck_assert_int_eq(bj_table_bet(fx.t, 0, 10), 0);
    ASSERT_REFUSED(&fx, bj_table_bet(fx.t, 0, 10), BJ_ERR_ALREADY);
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_BETTING); /* seat 1 still to bet */
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_HIT), BJ_ERR_PHASE);
    ASSERT_REFUSED(&fx, bj_table_open_betting(fx.t), BJ_ERR_PHASE);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_betting_timeout_deals_only_seats_with_bets)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    fx_open(&fx, &r, 3, NULL, 0);
    ck_assert_int_eq(bj_table_bet(fx.t, 1, 50), 0);
    ck_assert_int_eq(bj_table_timeout(fx.t), 0);
    ck_assert_int_ne(bj_table_phase(fx.t), BJ_PHASE_BETTING);
    ck_assert_ptr_null(bj_table_hand(fx.t, 0, 0));
    ck_assert_ptr_nonnull(bj_table_hand(fx.t, 1, 0));
    ck_assert_ptr_null(bj_table_hand(fx.t, 2, 0));
    while (bj_table_phase(fx.t) != BJ_PHASE_IDLE)
        ck_assert_int_eq(bj_table_timeout(fx.t), 0);
    ck_assert(bj_table_settlement(fx.t)->seats[1].played);
    ck_assert(!bj_table_settlement(fx.t)->seats[0].played);
    ASSERT_REFUSED(&fx, bj_table_timeout(fx.t), BJ_ERR_PHASE);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_seats_change_between_rounds_and_sit_out)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.seats = 3;
    fixture_t fx;
    uint8_t cards[] = {C(10), C(10), C(9), C(7)};
    fx_open(&fx, &r, 1, cards, 4);
    ASSERT_REFUSED(&fx, bj_table_sit(fx.t, 0, 5), BJ_ERR_SEAT_TAKEN);
    ASSERT_REFUSED(&fx, bj_table_sit(fx.t, 3, 5), BJ_ERR_INVALID);
    ck_assert_int_eq(bj_table_sit(fx.t, 1, 5), 0); /* joins during the betting window */
    ck_assert_int_eq(bj_table_sit_out(fx.t, 1, true), 0);
    ck_assert_int_eq(bj_table_bet(fx.t, 0, 10), 0); /* the only active seat: deal */
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_PLAYERS);
    ASSERT_REFUSED(&fx, bj_table_leave(fx.t, 0), BJ_ERR_PHASE);
    ASSERT_REFUSED(&fx, bj_table_sit(fx.t, 2, 9), BJ_ERR_PHASE);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0);
    ck_assert_int_eq(fx_delta(&fx, 0), 10); /* 20 against 17 */
    ck_assert_int_eq(bj_table_leave(fx.t, 0), 0);
    ASSERT_REFUSED(&fx, bj_table_open_betting(fx.t), BJ_ERR_NO_PLAYERS);
    ck_assert_int_eq(bj_table_sit_out(fx.t, 1, false), 0);
    ck_assert_int_eq(bj_table_open_betting(fx.t), 0);
    ASSERT_REFUSED(&fx, bj_table_bet(fx.t, 0, 10), BJ_ERR_SEAT_EMPTY);
    fx_done(&fx);
}
END_TEST

/* ---- actions (rules §4) ---------------------------------------------------------------- */

START_TEST(test_bj_double_after_hit_refused_unchanged)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    /* player 2,3 ; dealer 10 (hole 7); player hits a 4 */
    uint8_t cards[] = {C(2), C(10), C(3), C(7), C(4), C(10)};
    fx_deal(&fx, &r, 1, cards, 6);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_HIT), 0);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), BJ_ERR_DOUBLE_AFTER_HIT);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_SURRENDER), BJ_ERR_NOT_ALLOWED);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_SPLIT), BJ_ERR_SPLIT_UNEQUAL);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, (bj_action_t)9), BJ_ERR_INVALID);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_HIT), 0); /* 19 */
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0);
    ck_assert_int_eq(fx_delta(&fx, 0), 10); /* 19 beats 17 */
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_split_needs_equal_values)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    uint8_t unequal[] = {C(8), C(10), C(9), C(7)};
    fx_deal(&fx, &r, 1, unequal, 4);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_SPLIT), BJ_ERR_SPLIT_UNEQUAL);
    fx_done(&fx);
    /* king and ten are both worth ten: a pair (rules §4.4) */
    uint8_t tens[] = {CK, C(6), C(10), C(10), C(9), C(8), C(10)};
    fx_deal(&fx, &r, 1, tens, 7);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SPLIT), 0);
    ck_assert_int_eq(bj_table_hand(fx.t, 0, 0)->ncards, 2); /* K,9 */
    ck_assert_int_eq(bj_table_hand(fx.t, 0, 1)->ncards, 1);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0);
    ck_assert_int_eq(bj_table_hand(fx.t, 0, 1)->ncards, 2); /* 10,8 */
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0);
    /* dealer 6,10 draws 10: bust; both hands win */
    ck_assert_int_eq(fx_delta(&fx, 0), 20);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_acting_out_of_turn_refused)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    uint8_t cards[] = {C(10), C(9), C(6), C(10), C(8), C(7)};
    fx_deal(&fx, &r, 2, cards, 6);
    int seat, hand;
    ck_assert(bj_table_turn(fx.t, &seat, &hand));
    ck_assert_int_eq(seat, 0);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 1, BJ_ACT_STAND), BJ_ERR_TURN);
    ASSERT_REFUSED(&fx, bj_table_insurance(fx.t, 0, true), BJ_ERR_PHASE);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_STAND), BJ_ERR_TURN);
    ck_assert_int_eq(bj_table_act(fx.t, 1, BJ_ACT_STAND), 0);
    /* dealer 6,7 = 13 draws the next card of the shoe, whatever it is */
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_IDLE);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_surrender_only_when_the_rules_allow)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.late_surrender = false;
    fixture_t fx;
    uint8_t cards[] = {C(10), C(10), C(6), C(8)};
    fx_deal(&fx, &r, 1, cards, 4);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_SURRENDER), BJ_ERR_NOT_ALLOWED);
    fx_done(&fx);
    r.late_surrender = true;
    fx_deal(&fx, &r, 1, cards, 4);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SURRENDER), 0);
    ck_assert_int_eq(fx_delta(&fx, 0), -5);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_no_das_refuses_double_after_split)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.das = false;
    fixture_t fx;
    uint8_t cards[] = {C(5), C(6), C(5), C(10), C(6)};
    fx_deal(&fx, &r, 1, cards, 5);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SPLIT), 0);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), BJ_ERR_NOT_ALLOWED);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_SURRENDER), BJ_ERR_NOT_ALLOWED);
    fx_done(&fx);
    r.das = true;
    fx_deal(&fx, &r, 1, cards, 5);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SPLIT), 0);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), 0);
    ck_assert_int_eq(bj_table_hand(fx.t, 0, 0)->bet, 20);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_split_aces_get_one_card_and_resplit_only_with_rsa)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.rsa = false;
    fixture_t fx;
    /* player A,A vs dealer 9 (hole 9); split: first ace gets an ace */
    uint8_t cards[] = {CA, C(9), CA + 13, C(9), CA + 26, C(5), C(10)};
    fx_deal(&fx, &r, 1, cards, 7);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SPLIT), 0);
    /* without RSA the A,A split hand is finished; the second ace gets the 5 and stands */
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_IDLE);
    ck_assert_int_eq(fx_delta(&fx, 0), -20); /* soft 12 and soft 16 lose to 18 */
    fx_done(&fx);
    r.rsa = true;
    fx_deal(&fx, &r, 1, cards, 7);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SPLIT), 0);
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_PLAYERS);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_HIT), BJ_ERR_NOT_ALLOWED);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), BJ_ERR_NOT_ALLOWED);
    ck_assert_uint_eq(bj_table_allowed(fx.t), BJ_ACT_BIT(BJ_ACT_STAND) | BJ_ACT_BIT(BJ_ACT_SPLIT));
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SPLIT), 0);
    /* three aces with 5, 10 (21, not a blackjack) and the next card */
    const bj_hand_t *h1 = bj_table_hand(fx.t, 0, 1);
    ck_assert_int_eq(bj_hand_total(h1, NULL), 21);
    ck_assert(!(h1->flags & BJ_HAND_BLACKJACK));
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_IDLE);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_max_hands_limits_splits)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.max_hands = 2;
    fixture_t fx;
    uint8_t cards[] = {C(8), C(10), C(8) + 13, C(9), C(8) + 26};
    fx_deal(&fx, &r, 1, cards, 5);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SPLIT), 0);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_SPLIT), BJ_ERR_NOT_ALLOWED);
    fx_done(&fx);
    r.max_hands = 1;
    fx_deal(&fx, &r, 1, cards, 5);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_SPLIT), BJ_ERR_NOT_ALLOWED);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_double_restricted_to_10_11)
{
    bj_rules_t r;
    bj_rules_default(&r);
    r.double_on = BJ_DOUBLE_10_11;
    fixture_t fx;
    uint8_t nine[] = {C(4), C(6), C(5), C(10)};
    fx_deal(&fx, &r, 1, nine, 4);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), BJ_ERR_NOT_ALLOWED);
    fx_done(&fx);
    uint8_t soft[] = {CA, C(6), C(9), C(10)}; /* soft 20... and A,9 is not hard 10 */
    fx_deal(&fx, &r, 1, soft, 4);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), BJ_ERR_NOT_ALLOWED);
    fx_done(&fx);
    uint8_t eleven[] = {C(5), C(6), C(6), C(10), C(10), C(10) + 13};
    fx_deal(&fx, &r, 1, eleven, 6);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), 0);
    ck_assert_int_eq(fx_delta(&fx, 0), 20); /* 21 against 16 that draws a ten and busts */
    fx_done(&fx);
}
END_TEST

/* ---- payouts (rules §5) ---------------------------------------------------------------- */

START_TEST(test_bj_blackjack_pays_3_2_or_6_5)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    uint8_t cards[] = {CA, C(9), CK, C(8)};
    fx_deal(&fx, &r, 1, cards, 4);
    ck_assert_int_eq(fx_delta(&fx, 0), 15);
    ck_assert_int_eq(bj_table_settlement(fx.t)->house_delta, -15);
    fx_done(&fx);
    r.bj_pay_num = 6;
    r.bj_pay_den = 5;
    fx_deal(&fx, &r, 1, cards, 4);
    ck_assert_int_eq(fx_delta(&fx, 0), 12);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_dealer_blackjack_peek_takes_only_the_bet)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    /* dealer 10 with an ace in the hole: peeked, round over before any decision */
    uint8_t cards[] = {C(5), C(6), C(10), C(9), CK, CA};
    fx_deal(&fx, &r, 2, cards, 6);
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_IDLE);
    ck_assert_int_eq(fx_delta(&fx, 0), -10);
    ck_assert_int_eq(fx_delta(&fx, 1), -10);
    fx_done(&fx);
    /* Without a hole card the dealer's blackjack also takes doubled bets (rules §4.6). */
    r.peek = false;
    uint8_t enhc[] = {C(5), C(10), C(6), C(10), CA};
    fx_deal(&fx, &r, 1, enhc, 5);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), 0);
    ck_assert_int_eq(fx_delta(&fx, 0), -20);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_insurance_pays_2_to_1_and_even_money_pays_1_to_1)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    /* seat 0: 10,9 ; seat 1: A,K (blackjack) ; dealer A, hole K */
    uint8_t cards[] = {C(10), CA, CA + 13, C(9), CK, CK + 13};
    fx_deal(&fx, &r, 2, cards, 6);
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_INSURANCE);
    ck_assert_int_eq(bj_table_insurance(fx.t, 0, true), 0);
    ASSERT_REFUSED(&fx, bj_table_insurance(fx.t, 0, false), BJ_ERR_ALREADY);
    ASSERT_REFUSED(&fx, bj_table_act(fx.t, 0, BJ_ACT_STAND), BJ_ERR_PHASE);
    ck_assert_int_eq(bj_table_insurance(fx.t, 1, true), 0); /* even money */
    ck_assert_int_eq(fx_delta(&fx, 0), -10 + 10);           /* loses 10, insurance +10 */
    ck_assert_int_eq(fx_delta(&fx, 1), 10);
    ck_assert_int_eq(bj_table_settlement(fx.t)->seats[0].wagered, 15);
    fx_done(&fx);
    /* no dealer blackjack: insurance lost, timeout declines for the undecided seat */
    uint8_t cards2[] = {C(10), CA, CA + 13, C(9), CK, C(7), C(10)};
    fx_deal(&fx, &r, 2, cards2, 7);
    ck_assert_int_eq(bj_table_insurance(fx.t, 0, true), 0);
    ck_assert_int_eq(bj_table_timeout(fx.t), 0);
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_PLAYERS);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0); /* 19 vs soft 18 */
    ck_assert_int_eq(fx_delta(&fx, 0), 10 - 5);
    ck_assert_int_eq(fx_delta(&fx, 1), 15);
    fx_done(&fx);
}
END_TEST

/* ---- dealer (rules §4.5) --------------------------------------------------------------- */

START_TEST(test_bj_dealer_hits_soft_17_only_under_h17)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    /* player 10,8 ; dealer 6, hole A (soft 17), next card 3 */
    uint8_t cards[] = {C(10), C(6), C(8), CA, C(3)};
    fx_deal(&fx, &r, 1, cards, 5);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0);
    ck_assert_int_eq(fx_delta(&fx, 0), 10); /* S17: dealer stands on soft 17 */
    fx_done(&fx);
    r.h17 = true;
    fx_deal(&fx, &r, 1, cards, 5);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0);
    ck_assert_int_eq(fx_delta(&fx, 0), -10); /* H17: dealer draws the 3: 20 */
    fx_done(&fx);
}
END_TEST

/* ---- timeouts, snapshot, void (rules §3, §6) ------------------------------------------ */

START_TEST(test_bj_timeout_stands_every_remaining_hand)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    /* seat 0: 8,8 ; seat 1: 10,9 ; dealer 7, hole 10 ; then 3 and 2 for the split hands */
    uint8_t cards[] = {C(8), C(10), C(7), C(8) + 13, C(9), C(10) + 13, C(3), C(2)};
    fx_deal(&fx, &r, 2, cards, 8);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_SPLIT), 0);
    ck_assert_int_eq(bj_table_timeout(fx.t), 0);
    int seat;
    ck_assert(bj_table_turn(fx.t, &seat, NULL));
    ck_assert_int_eq(seat, 1);
    const bj_hand_t *h = bj_table_hand(fx.t, 0, 1);
    ck_assert_int_eq(h->ncards, 2);
    ck_assert(h->flags & BJ_HAND_DONE);
    ck_assert_int_eq(bj_table_timeout(fx.t), 0);
    ck_assert_int_eq(bj_table_phase(fx.t), BJ_PHASE_IDLE);
    fx_done(&fx);
}
END_TEST

START_TEST(test_bj_snapshot_hides_hole_card_until_shown)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    uint8_t cards[] = {C(10), C(9), C(8), CK + 13, C(5)};
    fx_deal(&fx, &r, 1, cards, 5);
    bj_snapshot_t sn;
    bj_table_snapshot(fx.t, &sn);
    ck_assert_int_eq(sn.phase, BJ_PHASE_PLAYERS);
    ck_assert_int_eq(sn.ndealer, 2);
    ck_assert_uint_eq(sn.dealer[0], C(9));
    ck_assert_uint_eq(sn.dealer[1], BJ_CARD_HIDDEN);
    ck_assert_int_eq(sn.turn_seat, 0);
    ck_assert_uint_eq(sn.seats[0].hands[0].cards[1], C(8));
    ck_assert(sn.allowed & BJ_ACT_BIT(BJ_ACT_DOUBLE));
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_STAND), 0);
    bj_table_snapshot(fx.t, &sn);
    ck_assert_uint_eq(sn.dealer[1], CK + 13);
    ck_assert(sn.has_settlement);
    ck_assert_int_eq(sn.last.seats[0].delta, -10); /* 18 against 19 */
    fx_done(&fx);
}
END_TEST

typedef struct {
    bj_event_t ev[64];
    int n;
} ev_log_t;

static void ev_log_cb(void *ctx, const bj_event_t *ev)
{
    ev_log_t *log = ctx;
    if (log->n < 64)
        log->ev[log->n++] = *ev;
}

START_TEST(test_bj_events_hide_hole_card_and_announce_turns)
{
    bj_rules_t r;
    bj_rules_default(&r);
    ev_log_t log = {.n = 0};
    bj_rng_t rng;
    bj_rng_seed(&rng, 1);
    bj_table_t *t;
    ck_assert_int_eq(bj_table_create(&r, &rng, ev_log_cb, &log, &t), 0);
    ck_assert_int_eq(log.ev[0].type, BJ_EV_SHUFFLE);
    ck_assert_int_eq(log.ev[0].amount, 312);
    ck_assert_int_eq(bj_table_sit(t, 2, 77), 0);
    uint8_t cards[] = {C(10), C(9), C(6), C(8), C(5)};
    ck_assert_int_eq(bj_table_stack_shoe(t, cards, 5), 0);
    log.n = 0;
    ck_assert_int_eq(bj_table_open_betting(t), 0);
    ck_assert_int_eq(bj_table_bet(t, 2, 10), 0);
    /* betting open, bet, 4 cards, turn */
    ck_assert_int_eq(log.n, 7);
    ck_assert_int_eq(log.ev[0].type, BJ_EV_BETTING_OPEN);
    ck_assert_int_eq(log.ev[1].type, BJ_EV_BET);
    ck_assert_uint_eq(log.ev[1].player, 77);
    ck_assert_int_eq(log.ev[2].type, BJ_EV_CARD);
    ck_assert_int_eq(log.ev[2].seat, 2);
    ck_assert_int_eq(log.ev[3].seat, -1);
    ck_assert_uint_eq(log.ev[3].card, C(9));
    ck_assert_uint_eq(log.ev[5].card, BJ_CARD_HIDDEN); /* the hole card */
    ck_assert_int_eq(log.ev[6].type, BJ_EV_TURN);
    ck_assert_uint_eq(log.ev[6].allowed, bj_table_allowed(t));
    ck_assert(log.ev[6].allowed & BJ_ACT_BIT(BJ_ACT_DOUBLE));
    log.n = 0;
    ck_assert_int_eq(bj_table_act(t, 2, BJ_ACT_HIT), 0); /* 16 + 5 = 21: done */
    ck_assert_int_eq(log.ev[0].type, BJ_EV_ACTION);
    ck_assert_int_eq(log.ev[1].type, BJ_EV_CARD);
    ck_assert_int_eq(log.ev[2].type, BJ_EV_HOLE);
    ck_assert_uint_eq(log.ev[2].card, C(8));
    ck_assert_int_eq(log.ev[log.n - 1].type, BJ_EV_SETTLED);
    ck_assert_int_eq(log.ev[log.n - 1].settlement->seats[2].delta, 10);
    bj_table_destroy(t);
}
END_TEST

START_TEST(test_bj_void_round_returns_every_bet)
{
    bj_rules_t r;
    bj_rules_default(&r);
    fixture_t fx;
    uint8_t cards[] = {C(5), C(10), C(5), C(7)};
    fx_deal(&fx, &r, 1, cards, 4);
    ck_assert_int_eq(bj_table_act(fx.t, 0, BJ_ACT_DOUBLE), 0);
    fx_done(&fx);
    fx_deal(&fx, &r, 2, cards, 4);
    ck_assert_int_eq(bj_table_void_round(fx.t), 0);
    const bj_settlement_t *st = bj_table_settlement(fx.t);
    ck_assert(st->voided);
    ck_assert_int_eq(st->seats[0].delta, 0);
    ck_assert_int_eq(st->seats[0].wagered, 10);
    ck_assert_int_eq(st->house_delta, 0);
    ck_assert_int_eq(bj_table_void_round(fx.t), BJ_ERR_PHASE);
    fx_done(&fx);
}
END_TEST

/* ---- random play ----------------------------------------------------------------------- */

START_TEST(test_bj_random_legal_and_illegal_play_short)
{
    (void)bjr_run(2026, 20000, 500);
}
END_TEST

/* ---- strategy -------------------------------------------------------------------------- */

static void check_cell(const bj_strategy_t *s, int total, bool soft, int pair, int up,
                       const char *want)
{
    const char *got = bj_strategy_cell(s, total, soft, pair, up);
    ck_assert_msg(!strcmp(got, want), "total %d soft %d pair %d vs %d: got %s, want %s", total,
                  soft, pair, up, got, want);
}

/* Cells of the published 4-8 deck charts (Wizard of Odds, "4-Deck to 8-Deck Blackjack
 * Strategy"), dealer stands / hits soft 17, DAS, late surrender. */
START_TEST(test_bj_strategy_matches_published_charts)
{
    bj_rules_t r;
    bj_rules_default(&r);
    bj_strategy_t *s;
    ck_assert_int_eq(bj_strategy_create(&r, &s), 0);
    check_cell(s, 16, false, 0, 10, "Rh");
    check_cell(s, 15, false, 0, 10, "Rh");
    check_cell(s, 16, false, 0, 9, "Rh");
    check_cell(s, 15, false, 0, 1, "H");
    check_cell(s, 12, false, 0, 2, "H");
    check_cell(s, 12, false, 0, 4, "S");
    check_cell(s, 11, false, 0, 1, "H");
    check_cell(s, 10, false, 0, 10, "H");
    check_cell(s, 9, false, 0, 2, "H");
    check_cell(s, 9, false, 0, 3, "Dh");
    check_cell(s, 18, true, 0, 2, "S");
    check_cell(s, 18, true, 0, 3, "Ds");
    check_cell(s, 18, true, 0, 9, "H");
    /* A,2 vs 5 is a near-tie that the player's own two cards tip towards the double. */
    check_cell(s, 13, true, 0, 5, "Dh");
    check_cell(s, 13, true, 0, 6, "Dh");
    check_cell(s, 14, true, 0, 5, "Dh");
    check_cell(s, 13, true, 0, 4, "H");
    check_cell(s, 0, false, 1, 1, "P");
    check_cell(s, 0, false, 8, 1, "P");
    check_cell(s, 0, false, 9, 7, "S");
    check_cell(s, 0, false, 4, 5, "P");
    check_cell(s, 0, false, 10, 6, "S");
    check_cell(s, 0, false, 5, 9, "Dh");
    check_cell(s, 0, false, 2, 2, "P");
    bj_strategy_destroy(s);

    r.h17 = true;
    ck_assert_int_eq(bj_strategy_create(&r, &s), 0);
    check_cell(s, 11, false, 0, 1, "Dh");
    check_cell(s, 18, true, 0, 2, "Ds");
    check_cell(s, 19, true, 0, 6, "Ds");
    check_cell(s, 15, false, 0, 1, "Rh");
    check_cell(s, 17, false, 0, 1, "Rs");
    check_cell(s, 0, false, 8, 1, "Rp");
    check_cell(s, 13, true, 0, 5, "Dh");
    bj_strategy_destroy(s);

    r.h17 = false;
    r.das = false;
    ck_assert_int_eq(bj_strategy_create(&r, &s), 0);
    check_cell(s, 0, false, 2, 2, "H");
    check_cell(s, 0, false, 4, 5, "H");
    check_cell(s, 0, false, 6, 2, "H");
    check_cell(s, 0, false, 2, 4, "P");
    bj_strategy_destroy(s);
}
END_TEST

START_TEST(test_bj_strategy_decisions_are_always_allowed)
{
    bj_rules_t r;
    bj_rules_default(&r);
    bj_strategy_t *s;
    ck_assert_int_eq(bj_strategy_create(&r, &s), 0);
    bj_hand_t h;
    memset(&h, 0, sizeof(h));
    h.cards[0] = CA;
    h.cards[1] = CA + 13;
    h.ncards = 2;
    h.hard = 2;
    h.flags = BJ_HAND_ACE | BJ_HAND_SPLIT | BJ_HAND_SPLIT_ACES;
    /* split aces that cannot be resplit: only stand is allowed */
    ck_assert_int_eq(bj_strategy_decide(s, &h, C(6), BJ_ACT_BIT(BJ_ACT_STAND)), BJ_ACT_STAND);
    ck_assert_int_eq(
        bj_strategy_decide(s, &h, C(6), BJ_ACT_BIT(BJ_ACT_STAND) | BJ_ACT_BIT(BJ_ACT_SPLIT)),
        BJ_ACT_SPLIT);
    bj_strategy_destroy(s);
}
END_TEST

/* ---- simulator ------------------------------------------------------------------------- */

/* The oracle figure (../shared/oracles/blackjack.md): 6 decks S17 DAS LS RSA 3:2 returns
 * -0.281 % with variance 1.303. A short run must land within 3 standard errors. */
START_TEST(test_bj_sim_short_run_matches_published_return)
{
    bj_rules_t r;
    bj_rules_default(&r);
    bj_sim_result_t res;
    char err[200];
    ck_assert_int_eq(bj_sim_run(&r, 200000, 11, 10, &res, err, sizeof(err)), 0);
    ck_assert_uint_eq(res.rounds, 200000);
    ck_assert_msg(res.mean > -0.00281 - 3 * res.stderr_mean &&
                      res.mean < -0.00281 + 3 * res.stderr_mean,
                  "mean %f se %f", res.mean, res.stderr_mean);
    ck_assert_msg(res.variance > 1.26 && res.variance < 1.35, "variance %f", res.variance);
    ck_assert_uint_gt(res.hands, res.rounds);
    ck_assert_int_eq(bj_sim_run(&r, 10, 1, 15, &res, err, sizeof(err)), BJ_ERR_BET_LIMIT);
    r.bj_pay_num = 6;
    r.bj_pay_den = 5;
    ck_assert_int_eq(bj_sim_run(&r, 10, 1, 12, &res, err, sizeof(err)), BJ_ERR_BET_LIMIT);
}
END_TEST

START_TEST(test_bj_sim_is_reproducible_by_seed)
{
    bj_rules_t r;
    bj_rules_default(&r);
    bj_sim_result_t a, b, c;
    char err[200];
    ck_assert_int_eq(bj_sim_run(&r, 5000, 3, 10, &a, err, sizeof(err)), 0);
    ck_assert_int_eq(bj_sim_run(&r, 5000, 3, 10, &b, err, sizeof(err)), 0);
    ck_assert_int_eq(bj_sim_run(&r, 5000, 4, 10, &c, err, sizeof(err)), 0);
    ck_assert_int_eq(a.net, b.net);
    ck_assert_uint_eq(a.hands, b.hands);
    ck_assert(a.net != c.net || a.hands != c.hands);
}
END_TEST

/* ---- croupier-rules bj-sim ------------------------------------------------------------- */

static int run_rules(const char *args, char *out, size_t outlen)
{
    const char *build = getenv("CROUPIER_BUILD");
    ck_assert_ptr_nonnull(build);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/tools/croupier-rules %s 2>&1", build, args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_bj_cli_sim_prints_figures_and_rejects_bad_flags)
{
    char out[4096];
    ck_assert_int_eq(run_rules("bj-sim --decks 6 --s17 --das --surrender --rsa --rounds 2000 "
                               "--seed 1",
                               out, sizeof(out)),
                     0);
    ck_assert(strstr(out, "mean return per initial bet") != NULL);
    ck_assert(strstr(out, "standard error") != NULL);
    ck_assert(strstr(out, "variance") != NULL);
    ck_assert_int_eq(run_rules("bj-sim --h17 --no-das --no-surrender --no-rsa --payout 6:5 "
                               "--max-hands 3 --penetration 0.6 --rounds 500",
                               out, sizeof(out)),
                     0);
    ck_assert(strstr(out, "H17") != NULL && strstr(out, "6:5") != NULL);
    ck_assert_int_eq(run_rules("bj-sim --decks 0", out, sizeof(out)), 2);
    ck_assert(strstr(out, "--decks") != NULL);
    ck_assert_int_eq(run_rules("bj-sim --bogus", out, sizeof(out)), 2);
    ck_assert_int_eq(run_rules("bj-sim --payout 3-2", out, sizeof(out)), 2);
    ck_assert_int_eq(run_rules("bj-sim --penetration 1.5", out, sizeof(out)), 2);
    ck_assert_int_eq(run_rules("bj-sim --payout 6:5 --bet 15", out, sizeof(out)), 2);
    ck_assert_int_eq(run_rules("bj-strategy --h17", out, sizeof(out)), 0);
    ck_assert(strstr(out, "A,A") != NULL);
}
END_TEST

static Suite *blackjack_suite(void)
{
    Suite *s = suite_create("blackjack");
    TCase *tc;

    tc = tcase_create("rules");
    tcase_add_test(tc, test_bj_rules_default_valid_and_bad_rules_named);
    tcase_add_test(tc, test_bj_rng_seeded_is_reproducible_and_bounded);
    suite_add_tcase(s, tc);

    tc = tcase_create("shoe");
    tcase_add_test(tc, test_bj_shoe_holds_each_card_once_per_deck_and_reshuffles_at_cut);
    tcase_add_test(tc, test_bj_stack_shoe_refuses_missing_card);
    tcase_add_test(tc, test_bj_csprng_shoe_keeps_integrity);
    tcase_add_test(tc, test_bj_failed_generator_refuses_bets_and_voids_the_reshuffled_round);
    tcase_add_test(tc, test_bj_shoe_running_dry_mid_round_refills_from_discards);
    tcase_add_test(tc, test_bj_shoe_commitment_per_shoe_opened_when_retired);
    tcase_add_test(tc, test_bj_shoe_refill_mid_round_is_a_shoe_of_its_own);
    tcase_add_test(tc, test_bj_shoe_moves_with_its_commitment);
    tcase_add_test(tc, test_bj_stacked_shoe_is_committed_anew);
    suite_add_tcase(s, tc);

    tc = tcase_create("betting");
    tcase_add_test(tc, test_bj_bet_outside_limits_refused_unchanged);
    tcase_add_test(tc, test_bj_betting_timeout_deals_only_seats_with_bets);
    tcase_add_test(tc, test_bj_seats_change_between_rounds_and_sit_out);
    suite_add_tcase(s, tc);

    tc = tcase_create("actions");
    tcase_add_test(tc, test_bj_double_after_hit_refused_unchanged);
    tcase_add_test(tc, test_bj_split_needs_equal_values);
    tcase_add_test(tc, test_bj_acting_out_of_turn_refused);
    tcase_add_test(tc, test_bj_surrender_only_when_the_rules_allow);
    tcase_add_test(tc, test_bj_no_das_refuses_double_after_split);
    tcase_add_test(tc, test_bj_split_aces_get_one_card_and_resplit_only_with_rsa);
    tcase_add_test(tc, test_bj_max_hands_limits_splits);
    tcase_add_test(tc, test_bj_double_restricted_to_10_11);
    suite_add_tcase(s, tc);

    tc = tcase_create("payouts");
    tcase_add_test(tc, test_bj_blackjack_pays_3_2_or_6_5);
    tcase_add_test(tc, test_bj_dealer_blackjack_peek_takes_only_the_bet);
    tcase_add_test(tc, test_bj_insurance_pays_2_to_1_and_even_money_pays_1_to_1);
    tcase_add_test(tc, test_bj_dealer_hits_soft_17_only_under_h17);
    suite_add_tcase(s, tc);

    tc = tcase_create("flow");
    tcase_add_test(tc, test_bj_timeout_stands_every_remaining_hand);
    tcase_add_test(tc, test_bj_snapshot_hides_hole_card_until_shown);
    tcase_add_test(tc, test_bj_void_round_returns_every_bet);
    tcase_add_test(tc, test_bj_events_hide_hole_card_and_announce_turns);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bj_random_legal_and_illegal_play_short);
    suite_add_tcase(s, tc);

    tc = tcase_create("strategy");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bj_strategy_matches_published_charts);
    tcase_add_test(tc, test_bj_strategy_decisions_are_always_allowed);
    suite_add_tcase(s, tc);

    tc = tcase_create("sim");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_bj_sim_short_run_matches_published_return);
    tcase_add_test(tc, test_bj_sim_is_reproducible_by_seed);
    tcase_add_test(tc, test_bj_cli_sim_prints_figures_and_rejects_bad_flags);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(blackjack_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
