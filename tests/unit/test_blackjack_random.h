/*
 * Random legal and illegal play against the blackjack table, shared by the unit test (short)
 * and the heavy test (1,000,000 rounds). See docs/rules/blackjack.md.
 *
 * A seeded driver plays rounds with random rules, seat changes, bets, insurance decisions,
 * actions and timeouts, and between legal inputs throws illegal ones at the table. It checks:
 *   - every refused input returns an error, emits no event and leaves the snapshot
 *     byte-for-byte unchanged; an action is accepted exactly when bj_table_allowed() says so;
 *   - shoe integrity: no card is dealt more times than there are decks within one shoe, and
 *     the shoe's undealt count always matches what was dealt from it;
 *   - chips: every hand's result, recomputed here from the cards, matches the settlement,
 *     seat deltas are the sums of their hands and insurance, and all deltas sum to zero.
 */
#ifndef TEST_BLACKJACK_RANDOM_H
#define TEST_BLACKJACK_RANDOM_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "blackjack.h"

typedef struct {
    int decks;
    int counts[52];
    int shoe_size;
    int dealt;
    int round_cards[52]; /* visible cards on the table this round, by card */
    uint64_t events;
    uint64_t rounds_settled;
    uint64_t voided;
    uint64_t shuffles;
    uint64_t midround_shuffles;
    bool bad;
    char why[160];
} bjr_track_t;

static void bjr_fail(bjr_track_t *tr, const char *why)
{
    if (!tr->bad)
        snprintf(tr->why, sizeof(tr->why), "%s", why);
    tr->bad = true;
}

static void bjr_count(bjr_track_t *tr, uint8_t card)
{
    if (card >= 52) {
        bjr_fail(tr, "card out of range");
        return;
    }
    tr->round_cards[card]++;
    if (++tr->counts[card] > tr->decks)
        bjr_fail(tr, "a card was dealt more often than there are decks in the shoe");
}

static void bjr_event_cb(void *ctx, const bj_event_t *ev)
{
    bjr_track_t *tr = ctx;
    tr->events++;
    switch (ev->type) {
    case BJ_EV_SHUFFLE:
        tr->shuffles++;
        tr->midround_shuffles += ev->card;
        tr->shoe_size = (int)ev->amount;
        tr->dealt = 0;
        for (int c = 0; c < 52; c++)
            tr->counts[c] = ev->card ? tr->round_cards[c] : 0;
        break;
    case BJ_EV_CARD:
        tr->dealt++;
        if (ev->card != BJ_CARD_HIDDEN)
            bjr_count(tr, ev->card);
        break;
    case BJ_EV_HOLE:
        bjr_count(tr, ev->card);
        break;
    case BJ_EV_SETTLED:
        tr->rounds_settled++;
        tr->voided += ev->settlement->voided;
        memset(tr->round_cards, 0, sizeof(tr->round_cards));
        break;
    default:
        break;
    }
}

static int bjr_total(const uint8_t *cards, int n, bool *soft)
{
    int hard = 0;
    bool ace = false;
    for (int i = 0; i < n; i++) {
        int v = bj_card_value(cards[i]);
        hard += v;
        ace |= v == 1;
    }
    bool s = ace && hard + 10 <= 21;
    if (soft)
        *soft = s;
    return hard + (s ? 10 : 0);
}

/* Recomputes every hand of a settled round from the cards and checks the settlement. */
static void bjr_check_settlement(bjr_track_t *tr, const bj_snapshot_t *sn)
{
    const bj_settlement_t *st = &sn->last;
    const bj_rules_t *r = &sn->rules;
    int64_t sum = 0;
    int dealer = bjr_total(sn->dealer, sn->ndealer, NULL);
    bool dealer_bj = sn->ndealer == 2 && dealer == 21;
    for (int s = 0; s < r->seats; s++) {
        const bj_seat_t *seat = &sn->seats[s];
        const bj_seat_result_t *res = &st->seats[s];
        sum += res->delta;
        if (!res->played) {
            if (res->delta != 0 || res->wagered != 0)
                bjr_fail(tr, "a seat without a bet has chips in the settlement");
            continue;
        }
        int64_t expect = 0, wagered = 0;
        for (int h = 0; h < seat->nhands; h++) {
            const bj_hand_t *hand = &seat->hands[h];
            int total = bjr_total(hand->cards, hand->ncards, NULL);
            bool bj = seat->nhands == 1 && hand->ncards == 2 && total == 21;
            int64_t bet = hand->bet, want;
            if (bet != seat->bet && bet != 2 * seat->bet)
                bjr_fail(tr, "a hand's bet is neither the bet nor double it");
            if (st->voided)
                want = 0;
            else if (seat->insurance == BJ_INS_EVEN_MONEY)
                want = bet;
            else if (hand->flags & BJ_HAND_SURRENDERED)
                want = -(bet - bet / 2);
            else if (bj)
                want = dealer_bj ? 0 : bet * r->bj_pay_num / r->bj_pay_den;
            else if (total > 21 || dealer_bj)
                want = -bet;
            else if (dealer > 21 || total > dealer)
                want = bet;
            else
                want = total == dealer ? 0 : -bet;
            if (want != hand->result)
                bjr_fail(tr, "a hand's result differs from the one recomputed from its cards");
            if (!st->voided && (dealer < 17 && !dealer_bj) && total <= 21 && !bj &&
                !(hand->flags & BJ_HAND_SURRENDERED) && seat->insurance != BJ_INS_EVEN_MONEY)
                bjr_fail(tr, "the dealer stopped under 17 against a live hand");
            expect += want;
            wagered += bet;
        }
        if (seat->insurance == BJ_INS_TAKEN) {
            wagered += seat->insurance_bet;
            if (!st->voided)
                expect += dealer_bj ? 2 * seat->insurance_bet : -seat->insurance_bet;
        }
        if (expect != res->delta || wagered != res->wagered)
            bjr_fail(tr, "a seat's delta or wager differs from the sum of its hands");
    }
    if (sum + st->house_delta != 0)
        bjr_fail(tr, "chips not conserved: deltas do not sum to zero");
}

/* Tries input k (random kind) that the driver expects may be illegal; checks a refusal
 * changed nothing. Returns the table's answer. */
static int bjr_try(bj_table_t *t, bjr_track_t *tr, bj_rng_t *rng, int kind)
{
    static bj_snapshot_t before, after;
    bj_table_snapshot(t, &before);
    uint64_t events = tr->events;
    int seat = (int)bj_rng_uniform(rng, BJ_MAX_SEATS + 2) - 1;
    int rc = 0;
    uint32_t allowed = bj_table_allowed(t);
    int turn_seat = -1;
    bj_table_turn(t, &turn_seat, NULL);
    switch (kind) {
    case 0: {
        int a = (int)bj_rng_uniform(rng, BJ_ACT_COUNT + 1);
        rc = bj_table_act(t, seat, (bj_action_t)a);
        bool legal = before.phase == BJ_PHASE_PLAYERS && seat == turn_seat && a < BJ_ACT_COUNT &&
                     (allowed & BJ_ACT_BIT(a));
        if ((rc == 0) != legal)
            bjr_fail(tr, "an action was accepted or refused against bj_table_allowed()");
        break;
    }
    case 1:
        rc = bj_table_bet(t, seat, (int64_t)bj_rng_uniform(rng, 300) - 10);
        break;
    case 2:
        rc = bj_table_insurance(t, seat, bj_rng_uniform(rng, 2));
        break;
    case 3:
        rc = bj_table_sit(t, seat, 1000 + bj_rng_uniform(rng, 5));
        break;
    case 4:
        rc = bj_table_leave(t, seat);
        break;
    case 5:
        rc = bj_table_open_betting(t);
        break;
    default:
        rc = bj_table_sit_out(t, seat, bj_rng_uniform(rng, 2));
        break;
    }
    if (rc != 0) {
        bj_table_snapshot(t, &after);
        if (memcmp(&before, &after, sizeof(before)) != 0)
            bjr_fail(tr, "a refused input changed the table");
        if (tr->events != events)
            bjr_fail(tr, "a refused input emitted an event");
    }
    return rc;
}

/* Random rules with whole-chip payouts. */
static void bjr_random_rules(bj_rng_t *rng, bj_rules_t *r)
{
    bj_rules_default(r);
    r->decks = 1 + (int)bj_rng_uniform(rng, 8);
    r->h17 = bj_rng_uniform(rng, 2);
    r->double_on = (bj_double_t)bj_rng_uniform(rng, 3);
    r->das = bj_rng_uniform(rng, 2);
    r->late_surrender = bj_rng_uniform(rng, 2);
    r->rsa = bj_rng_uniform(rng, 2);
    r->max_hands = 1 + (int)bj_rng_uniform(rng, BJ_MAX_HANDS);
    bool six_five = bj_rng_uniform(rng, 2);
    r->bj_pay_num = six_five ? 6 : 3;
    r->bj_pay_den = six_five ? 5 : 2;
    r->insurance = bj_rng_uniform(rng, 4) != 0;
    r->peek = bj_rng_uniform(rng, 4) != 0;
    r->penetration = 100 + (int)bj_rng_uniform(rng, 851);
    r->min_bet = 10;
    r->max_bet = 200;
    r->seats = 1 + (int)bj_rng_uniform(rng, BJ_MAX_SEATS);
}

/*
 * Plays rounds rounds, switching to new random rules every rules_every rounds. Fails the
 * running check test with the first broken invariant. Returns how many times the shoe ran
 * out in the middle of a round (rules §2), so callers can check that path was exercised.
 */
static uint64_t bjr_run(uint64_t seed, uint64_t rounds, uint64_t rules_every)
{
    bj_rng_t rng, drv;
    bj_rng_seed(&drv, seed);
    bj_rng_seed(&rng, seed ^ 0x5eed);
    bjr_track_t tr;
    memset(&tr, 0, sizeof(tr));
    bj_table_t *t = NULL;
    bj_snapshot_t sn;
    uint64_t played = 0, refused = 0, midround = 0;
    for (uint64_t i = 0; i < rounds && !tr.bad; i++) {
        if (i % rules_every == 0) {
            bj_table_destroy(t);
            midround += tr.midround_shuffles;
            bj_rules_t r;
            bjr_random_rules(&drv, &r);
            memset(&tr, 0, sizeof(tr));
            tr.decks = r.decks;
            ck_assert_int_eq(bj_table_create(&r, &rng, bjr_event_cb, &tr, &t), 0);
            for (int s = 0; s < r.seats; s++)
                if (bj_rng_uniform(&drv, 3) != 0)
                    bj_table_sit(t, s, 1 + (uint64_t)s);
        }
        /* Between rounds: seat changes and illegal inputs. */
        for (int k = bj_rng_uniform(&drv, 3); k > 0; k--)
            refused += bjr_try(t, &tr, &drv, (int)bj_rng_uniform(&drv, 7)) != 0;
        if (bj_table_open_betting(t) == BJ_ERR_NO_PLAYERS) {
            bj_table_sit(t, 0, 1);
            bj_table_sit_out(t, 0, false);
            ck_assert_int_eq(bj_table_open_betting(t), 0);
        }
        /* Bounded: every legal step makes progress and each phase ends on timeout. */
        for (int steps = 0; bj_table_phase(t) != BJ_PHASE_IDLE && steps < 10000; steps++) {
            uint32_t dice = bj_rng_uniform(&drv, 100);
            if (dice < 25) {
                refused += bjr_try(t, &tr, &drv, (int)bj_rng_uniform(&drv, 7)) != 0;
                continue;
            }
            if (dice < 28) {
                ck_assert_int_eq(bj_table_timeout(t), 0);
                continue;
            }
            if (dice < 29) {
                ck_assert_int_eq(bj_table_void_round(t), 0);
                continue;
            }
            bj_table_snapshot(t, &sn);
            switch (sn.phase) {
            case BJ_PHASE_BETTING: {
                int s = (int)bj_rng_uniform(&drv, (uint32_t)sn.rules.seats);
                if (sn.seats[s].player != 0 && !sn.seats[s].sitting_out && !sn.seats[s].in_round)
                    ck_assert_int_eq(bj_table_bet(t, s, 10 * (1 + bj_rng_uniform(&drv, 20))), 0);
                break;
            }
            case BJ_PHASE_INSURANCE: {
                int s = (int)bj_rng_uniform(&drv, (uint32_t)sn.rules.seats);
                if (sn.seats[s].in_round && sn.seats[s].insurance == BJ_INS_PENDING)
                    ck_assert_int_eq(bj_table_insurance(t, s, bj_rng_uniform(&drv, 2)), 0);
                break;
            }
            case BJ_PHASE_PLAYERS: {
                uint32_t allowed = sn.allowed, pick;
                ck_assert(allowed & BJ_ACT_BIT(BJ_ACT_STAND));
                do
                    pick = bj_rng_uniform(&drv, BJ_ACT_COUNT);
                while (!(allowed & BJ_ACT_BIT(pick)));
                ck_assert_int_eq(bj_table_act(t, sn.turn_seat, (bj_action_t)pick), 0);
                break;
            }
            default:
                break;
            }
        }
        ck_assert_int_eq(bj_table_phase(t), BJ_PHASE_IDLE);
        bj_table_snapshot(t, &sn);
        if (sn.cards_left != tr.shoe_size - tr.dealt)
            bjr_fail(&tr, "the shoe's undealt count does not match the cards dealt from it");
        if (sn.has_settlement && sn.last.round == sn.round) {
            bjr_check_settlement(&tr, &sn);
            played++;
        }
    }
    if (tr.bad)
        ck_abort_msg("round %llu: %s", (unsigned long long)played, tr.why);
    ck_assert_uint_gt(played, rounds / 2);
    ck_assert_uint_gt(refused, rounds / 4);
    bj_table_destroy(t);
    return midround + tr.midround_shuffles;
}

#endif
