/* blackjack -- the table state machine; see blackjack.h and docs/rules/blackjack.md. */
#include "blackjack.h"

#include <bsd/stdlib.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "deck.h"
#include "xmalloc.h"

struct bj_table {
    bj_rules_t rules;
    bj_rng_t *rng; /* NULL: the kit's deck source (common/deck.h) */
    bj_event_cb cb;
    void *cb_ctx;

    uint8_t *shoe; /* shoe_cap = decks * 52 cards */
    int shoe_cap;
    int shoe_len; /* cards in the current shoe (less than cap after a mid-round refill) */
    int shoe_pos; /* next card to deal */
    int cut_pos;  /* the cut card sits before this position */
    uint64_t shoe_id;
    bool reshuffle_due;
    bool shoe_retired;             /* revealed (BJ_EV_SHOE_RETIRED): no card of it is dealt */
    uint8_t nonce[DECK_NONCE_LEN]; /* the shoe's nonce and commitment (docs/fairness.md) */
    uint8_t commitment[DECK_COMMIT_LEN];
    uint8_t hole_commitment[DECK_COMMIT_LEN]; /* where the hole card came from (a refill may */
    uint64_t hole_shoe;                       /* replace the shoe before it is shown) */
    int hole_pos;

    bj_phase_t phase;
    uint64_t round;
    int turn_seat, turn_hand;
    uint32_t turn_allowed; /* bj_allowed_mask() of the hand on turn, kept current */

    bj_seat_t seats[BJ_MAX_SEATS];
    uint8_t dealer[BJ_MAX_CARDS];
    int ndealer;
    int dealer_hard;
    bool dealer_ace;
    bool hole_shown;

    bj_settlement_t settlement;
    bool has_settlement;
};

#define BJ_SUIT_VALUES(s)                                                                          \
    [13 * (s) + 0] = 1, [13 * (s) + 1] = 2, [13 * (s) + 2] = 3, [13 * (s) + 3] = 4,                \
                [13 * (s) + 4] = 5, [13 * (s) + 5] = 6, [13 * (s) + 6] = 7, [13 * (s) + 7] = 8,    \
                [13 * (s) + 8] = 9, [13 * (s) + 9] = 10, [13 * (s) + 10] = 10,                     \
                [13 * (s) + 11] = 10, [13 * (s) + 12] = 10
const uint8_t bj_card_values[256] = {BJ_SUIT_VALUES(0), BJ_SUIT_VALUES(1), BJ_SUIT_VALUES(2),
                                     BJ_SUIT_VALUES(3)};

/* ---- rules ---------------------------------------------------------------------------- */

void bj_rules_default(bj_rules_t *r)
{
    memset(r, 0, sizeof(*r));
    r->decks = 6;
    r->h17 = false;
    r->double_on = BJ_DOUBLE_ANY;
    r->das = true;
    r->late_surrender = true;
    r->rsa = true;
    r->max_hands = 4;
    r->bj_pay_num = 3;
    r->bj_pay_den = 2;
    r->insurance = true;
    r->peek = true;
    r->penetration = 750;
    r->min_bet = 10;
    r->max_bet = 10000;
    r->seats = 7;
}

int bj_rules_validate(const bj_rules_t *r, char *err, size_t errlen)
{
    const char *why = NULL;
    if (r->decks < 1 || r->decks > BJ_MAX_DECKS)
        why = "decks must be 1..8";
    else if (r->double_on != BJ_DOUBLE_ANY && r->double_on != BJ_DOUBLE_9_11 &&
             r->double_on != BJ_DOUBLE_10_11)
        why = "double rule must be any, 9-11 or 10-11";
    else if (r->max_hands < 1 || r->max_hands > BJ_MAX_HANDS)
        why = "max hands must be 1..8";
    else if (r->bj_pay_num < 1 || r->bj_pay_den < 1 || r->bj_pay_num > 100 || r->bj_pay_den > 100)
        why = "blackjack payout must be N:D with 1 <= N, D <= 100";
    else if (r->penetration < 100 || r->penetration > 950)
        why = "penetration must be 10 % .. 95 % of the shoe";
    else if (r->min_bet < 1 || r->max_bet < r->min_bet || r->max_bet > BJ_MAX_BET)
        why = "bets must satisfy 1 <= min <= max <= 2^40";
    else if (r->seats < 1 || r->seats > BJ_MAX_SEATS)
        why = "seats must be 1..7";
    if (why == NULL)
        return 0;
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return BJ_ERR_INVALID;
}

int bj_rules_describe(const bj_rules_t *r, char *buf, size_t len)
{
    static const char *dbl[] = {"double any two", "double 9-11", "double 10-11"};
    return snprintf(buf, len,
                    "%d deck%s, %s, %s, %s, %s, %s, max %d hands, blackjack %d:%d, %s, %s, "
                    "penetration %.1f %%, bets %lld..%lld, %d seat%s",
                    r->decks, r->decks == 1 ? "" : "s", r->h17 ? "H17" : "S17", dbl[r->double_on],
                    r->das ? "DAS" : "no DAS",
                    r->late_surrender ? "late surrender" : "no surrender",
                    r->rsa ? "RSA" : "no RSA", r->max_hands, r->bj_pay_num, r->bj_pay_den,
                    r->insurance ? "insurance" : "no insurance", r->peek ? "peek" : "no hole card",
                    r->penetration / 10.0, (long long)r->min_bet, (long long)r->max_bet, r->seats,
                    r->seats == 1 ? "" : "s");
}

const char *bj_strerror(int err)
{
    switch (err) {
    case BJ_OK:
        return "ok";
    case BJ_ERR_INVALID:
        return "invalid argument";
    case BJ_ERR_PHASE:
        return "not possible at this point of the round";
    case BJ_ERR_TURN:
        return "not this seat's turn";
    case BJ_ERR_SEAT_EMPTY:
        return "seat is empty or not in this round";
    case BJ_ERR_SEAT_TAKEN:
        return "seat is taken";
    case BJ_ERR_SITTING_OUT:
        return "seat is sitting out";
    case BJ_ERR_ALREADY:
        return "already decided";
    case BJ_ERR_BET_LIMIT:
        return "bet outside the table limits";
    case BJ_ERR_DOUBLE_AFTER_HIT:
        return "cannot double after hitting";
    case BJ_ERR_SPLIT_UNEQUAL:
        return "can only split two cards of equal value";
    case BJ_ERR_NOT_ALLOWED:
        return "not allowed by the table rules";
    case BJ_ERR_NO_PLAYERS:
        return "no active player";
    case BJ_ERR_NO_CARD:
        return "card not left in the shoe";
    case BJ_ERR_RNG:
        return "the shuffle generator failed (no deal on this server: docs/fairness.md)";
    default:
        return "unknown error";
    }
}

/* ---- events --------------------------------------------------------------------------- */

static void bj_emit_slow(bj_table_t *t, bj_event_type_t type, int seat, int hand, uint8_t card,
                         int64_t amount)
{
    bj_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = type;
    ev.round = t->round;
    ev.seat = seat;
    ev.hand = hand;
    ev.card = card;
    ev.amount = amount;
    if (seat >= 0)
        ev.player = t->seats[seat].player;
    ev.shoe_id = t->shoe_id;
    ev.shoe_pos = t->shoe_pos - 1; /* a card event follows its draw */
    ev.commitment = t->commitment;
    if (type == BJ_EV_HOLE) {
        ev.shoe_id = t->hole_shoe;
        ev.shoe_pos = t->hole_pos;
        ev.commitment = t->hole_commitment;
    } else if (type == BJ_EV_CARD && card == BJ_CARD_HIDDEN) {
        ev.hole_card = t->dealer[t->ndealer - 1];
    }
    t->cb(t->cb_ctx, &ev);
}

/* Emits an event if anybody listens (the simulator does not: keep that path free). */
static inline void bj_emit(bj_table_t *t, bj_event_type_t type, int seat, int hand, uint8_t card,
                           int64_t amount)
{
    if (t->cb != NULL)
        bj_emit_slow(t, type, seat, hand, card, amount);
}

/* ---- shoe ----------------------------------------------------------------------------- */

/*
 * One Fisher-Yates step with a 21-bit random chunk x: swaps cards[i] with cards[j], j uniform
 * in [0, i]. Lemire's multiply-shift maps x to j; the few values of x in the biased low range
 * (fewer than i + 1 out of 2^21) are replaced by a fresh unbiased draw, so j is exactly
 * uniform.
 */
static inline void bj_shuffle_step(bj_rng_t *rng, uint8_t *cards, int i, uint32_t x)
{
    uint32_t bound = (uint32_t)i + 1;
    uint32_t m = x * bound; /* < 2^21 * 2^9: no overflow (a shoe holds at most 416 cards) */
    uint32_t j = m >> 21;
    uint32_t low = m & ((1u << 21) - 1);
    if (low < bound && low < ((1u << 21) % bound))
        j = bj_rng_uniform(rng, bound);
    uint8_t c = cards[i];
    cards[i] = cards[j];
    cards[j] = c;
}

/*
 * Fisher-Yates. Production (no seeded generator): the kit's deck source, common/deck.h
 * (docs/fairness.md); 0 or -EIO when the generator failed (the order must not be dealt).
 * Seeded (simulator, tests): each 64-bit output of the generator serves three steps (21 bits
 * each), see bj_shuffle_step(); always 0.
 */
static int bj_shuffle(bj_table_t *t, uint8_t *cards, int n)
{
    bj_rng_t *rng = t->rng;
    if (rng == NULL)
        return deck_shuffle(cards, (size_t)n) == 0 ? 0 : -EIO;
    int i = n - 1;
    for (; i >= 3; i -= 3) {
        uint64_t r = bj_rng_next(rng);
        bj_shuffle_step(rng, cards, i, (uint32_t)(r >> 43));
        bj_shuffle_step(rng, cards, i - 1, (uint32_t)(r >> 22) & ((1u << 21) - 1));
        bj_shuffle_step(rng, cards, i - 2, (uint32_t)(r >> 1) & ((1u << 21) - 1));
    }
    for (; i > 0; i--)
        bj_shuffle_step(rng, cards, i, (uint32_t)(bj_rng_next(rng) >> 43));
    return 0;
}

/*
 * Commits to the shoe just shuffled or stacked (shoe_id already its number): a fresh nonce from
 * the deck source (a seeded table: the shoe number in the last 8 bytes, tests and the simulator
 * only) and deck_commitment_tagged(DECK_SHOE_TAG, ...). -EIO when the generator failed.
 */
static int bj_shoe_commit(bj_table_t *t)
{
    if (t->rng == NULL) {
        if (deck_random_bytes(t->nonce, sizeof t->nonce) != 0)
            return -EIO;
    } else {
        memset(t->nonce, 0, sizeof t->nonce);
        for (int i = 0; i < 8; i++)
            t->nonce[DECK_NONCE_LEN - 1 - i] = (uint8_t)(t->shoe_id >> (8 * i));
    }
    deck_commitment_tagged(DECK_SHOE_TAG, t->shoe, (size_t)t->shoe_len, t->nonce, t->commitment);
    t->shoe_retired = false;
    return 0;
}

/* No card of the current shoe will be dealt any more: its order and nonce are revealed
 * (BJ_EV_SHOE_RETIRED) and the next deal shuffles. Once per shoe. */
static void bj_shoe_retire(bj_table_t *t)
{
    t->reshuffle_due = true;
    if (t->shoe_retired || t->shoe_len == 0)
        return;
    t->shoe_retired = true;
    if (t->cb == NULL)
        return;
    bj_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = BJ_EV_SHOE_RETIRED;
    ev.round = t->round;
    ev.seat = -1;
    ev.amount = t->shoe_len;
    ev.shoe_id = t->shoe_id;
    ev.shoe_pos = t->shoe_pos;
    ev.commitment = t->commitment;
    ev.shoe_cards = t->shoe;
    ev.shoe_nonce = t->nonce;
    t->cb(t->cb_ctx, &ev);
}

/* The shoe is gone (the generator failed): empty, due for a shuffle, nothing to reveal. */
static int bj_shoe_failed(bj_table_t *t)
{
    t->shoe_len = 0;
    t->shoe_pos = 0;
    t->cut_pos = 0;
    t->reshuffle_due = true;
    t->shoe_retired = true;
    return BJ_ERR_RNG;
}

/*
 * Shuffles a complete shoe; the cut card goes in at the penetration. The array already holds
 * every card once per deck unless a mid-round refill shortened it, and a uniform shuffle of
 * any arrangement is uniform, so it is rebuilt only then. BJ_ERR_RNG when the generator failed:
 * the shoe is left empty (no card of an unshuffled order can be drawn) and due for a shuffle.
 */
static int bj_shoe_new(bj_table_t *t)
{
    bj_shoe_retire(t); /* normally retired already, when its cut card came out */
    int n = t->shoe_cap;
    if (t->shoe_len != n) {
        n = 0;
        for (int d = 0; d < t->rules.decks; d++)
            for (int c = 0; c < 52; c++)
                t->shoe[n++] = (uint8_t)c;
    }
    if (bj_shuffle(t, t->shoe, n) != 0)
        return bj_shoe_failed(t);
    t->shoe_len = n;
    t->shoe_pos = 0;
    t->cut_pos = (int)((int64_t)n * t->rules.penetration / 1000);
    t->shoe_id++;
    if (bj_shoe_commit(t) != 0)
        return bj_shoe_failed(t);
    t->reshuffle_due = false;
    bj_emit(t, BJ_EV_SHUFFLE, -1, 0, 0, n);
    return 0;
}

/*
 * The shoe ran out in the middle of a round (a deep cut card and a crowded table): every
 * card not on the table is shuffled into a new shoe, and a full reshuffle follows the round.
 * Returns false only if every card of the shoe is on the table, or the generator failed (the
 * shoe is then left empty).
 */
static bool bj_shoe_refill(bj_table_t *t)
{
    int count[52];
    for (int c = 0; c < 52; c++)
        count[c] = t->rules.decks;
    for (int i = 0; i < t->ndealer; i++)
        count[t->dealer[i]]--;
    for (int s = 0; s < t->rules.seats; s++) {
        const bj_seat_t *st = &t->seats[s];
        if (!st->in_round)
            continue;
        for (int h = 0; h < st->nhands; h++)
            for (int i = 0; i < st->hands[h].ncards; i++)
                count[st->hands[h].cards[i]]--;
    }
    int n = 0;
    for (int c = 0; c < 52; c++)
        n += count[c];
    if (n == 0)
        return false;
    bj_shoe_retire(t); /* dealt to the last card: revealed before its array is reused */
    n = 0;
    for (int c = 0; c < 52; c++)
        for (int k = 0; k < count[c]; k++)
            t->shoe[n++] = (uint8_t)c;
    if (bj_shuffle(t, t->shoe, n) != 0) {
        bj_shoe_failed(t);
        return false;
    }
    t->shoe_len = n;
    t->shoe_pos = 0;
    t->cut_pos = 0;
    t->shoe_id++;
    if (bj_shoe_commit(t) != 0) {
        bj_shoe_failed(t);
        return false;
    }
    t->reshuffle_due = true;
    bj_emit(t, BJ_EV_SHUFFLE, -1, 0, 1, n);
    return true;
}

/* Next card of the shoe, or -1 if not a single card is left off the table. */
static inline int bj_draw(bj_table_t *t)
{
    if (t->shoe_pos >= t->shoe_len && !bj_shoe_refill(t))
        return -1;
    return t->shoe[t->shoe_pos++];
}

/* ---- hands ---------------------------------------------------------------------------- */

static inline void bj_hand_add(bj_hand_t *h, uint8_t card)
{
    h->cards[h->ncards++] = card;
    int v = bj_card_value(card);
    h->hard = (uint8_t)(h->hard + v);
    if (v == 1)
        h->flags |= BJ_HAND_ACE;
}

static inline void bj_hand_reset(bj_hand_t *h, int64_t bet, uint8_t flags)
{
    h->ncards = 0;
    h->hard = 0;
    h->flags = flags;
    h->outcome = BJ_OUT_NONE;
    h->bet = bet;
    h->result = 0;
}

static inline bool bj_hand_is_pair(const bj_hand_t *h)
{
    return h->ncards == 2 && bj_card_value(h->cards[0]) == bj_card_value(h->cards[1]);
}

/* Deals one card to seat s hand h; false if the shoe and discards are exhausted. */
static bool bj_deal_to(bj_table_t *t, int s, int h)
{
    int c = bj_draw(t);
    if (c < 0)
        return false;
    bj_hand_t *hand = &t->seats[s].hands[h];
    if (hand->ncards >= BJ_MAX_CARDS) /* cannot happen: a hand this long is over 21 */
        return false;
    bj_hand_add(hand, (uint8_t)c);
    bj_emit(t, BJ_EV_CARD, s, h, (uint8_t)c, 0);
    return true;
}

static bool bj_deal_dealer(bj_table_t *t, bool hidden)
{
    int c = bj_draw(t);
    if (c < 0 || t->ndealer >= BJ_MAX_CARDS)
        return false;
    t->dealer[t->ndealer++] = (uint8_t)c;
    if (hidden) {
        t->hole_shoe = t->shoe_id;
        t->hole_pos = t->shoe_pos - 1;
        memcpy(t->hole_commitment, t->commitment, DECK_COMMIT_LEN);
    }
    t->dealer_hard += bj_card_value((uint8_t)c);
    if (bj_card_value((uint8_t)c) == 1)
        t->dealer_ace = true;
    bj_emit(t, BJ_EV_CARD, -1, 0, hidden ? BJ_CARD_HIDDEN : (uint8_t)c, 0);
    return true;
}

static inline int bj_dealer_total(const bj_table_t *t, bool *soft)
{
    bool s = t->dealer_ace && t->dealer_hard + 10 <= 21;
    if (soft != NULL)
        *soft = s;
    return t->dealer_hard + (s ? 10 : 0);
}

static inline bool bj_dealer_blackjack(const bj_table_t *t)
{
    return t->ndealer == 2 && bj_dealer_total(t, NULL) == 21;
}

/*
 * Why the hand on turn may not do action: 0 if it may, else a BJ_ERR_* code. Reads only, so
 * callers validate before changing anything.
 */
static int bj_check_action(const bj_table_t *t, const bj_seat_t *st, const bj_hand_t *h,
                           bj_action_t action)
{
    const bj_rules_t *r = &t->rules;
    switch (action) {
    case BJ_ACT_STAND:
        return 0;
    case BJ_ACT_HIT:
        return (h->flags & BJ_HAND_SPLIT_ACES) ? BJ_ERR_NOT_ALLOWED : 0;
    case BJ_ACT_DOUBLE: {
        if (h->ncards != 2)
            return BJ_ERR_DOUBLE_AFTER_HIT;
        if (h->flags & BJ_HAND_SPLIT_ACES)
            return BJ_ERR_NOT_ALLOWED;
        if ((h->flags & BJ_HAND_SPLIT) && !r->das)
            return BJ_ERR_NOT_ALLOWED;
        if (r->double_on != BJ_DOUBLE_ANY) {
            bool soft;
            int total = bj_hand_total(h, &soft);
            int lo = r->double_on == BJ_DOUBLE_9_11 ? 9 : 10;
            if (soft || total < lo || total > 11)
                return BJ_ERR_NOT_ALLOWED;
        }
        return 0;
    }
    case BJ_ACT_SPLIT:
        if (!bj_hand_is_pair(h))
            return BJ_ERR_SPLIT_UNEQUAL;
        if (st->nhands >= r->max_hands)
            return BJ_ERR_NOT_ALLOWED;
        if ((h->flags & BJ_HAND_SPLIT_ACES) && !r->rsa)
            return BJ_ERR_NOT_ALLOWED;
        return 0;
    case BJ_ACT_SURRENDER:
        if (!r->late_surrender)
            return BJ_ERR_NOT_ALLOWED;
        if (st->nhands != 1 || h->ncards != 2)
            return BJ_ERR_NOT_ALLOWED;
        return 0;
    default:
        return BJ_ERR_INVALID;
    }
}

/* The same answers as bj_check_action() for every action, at once (the hot path of bots and
 * the simulator); the unit tests check that both agree. */
static uint32_t bj_allowed_mask(const bj_table_t *t, const bj_seat_t *st, const bj_hand_t *h)
{
    const bj_rules_t *r = &t->rules;
    bool split_aces = h->flags & BJ_HAND_SPLIT_ACES;
    uint32_t m = BJ_ACT_BIT(BJ_ACT_STAND);
    if (!split_aces)
        m |= BJ_ACT_BIT(BJ_ACT_HIT);
    if (h->ncards != 2)
        return m; /* double, split and surrender all need exactly two cards */
    if (!split_aces && (r->das || !(h->flags & BJ_HAND_SPLIT))) {
        if (r->double_on == BJ_DOUBLE_ANY)
            m |= BJ_ACT_BIT(BJ_ACT_DOUBLE);
        else if (bj_check_action(t, st, h, BJ_ACT_DOUBLE) == 0)
            m |= BJ_ACT_BIT(BJ_ACT_DOUBLE);
    }
    if (bj_card_value(h->cards[0]) == bj_card_value(h->cards[1]) && st->nhands < r->max_hands &&
        (r->rsa || !split_aces))
        m |= BJ_ACT_BIT(BJ_ACT_SPLIT);
    if (r->late_surrender && st->nhands == 1)
        m |= BJ_ACT_BIT(BJ_ACT_SURRENDER);
    return m;
}

/* ---- round flow ----------------------------------------------------------------------- */

static void bj_settle(bj_table_t *t, bool voided);
static void bj_dealer_play(bj_table_t *t);

/*
 * A hand just became the one on turn (or received a card): gives a split hand its second
 * card, and marks done what needs no decision -- 21, split aces that cannot be resplit.
 * Returns false if the shoe is exhausted (the caller voids the round).
 */
static bool bj_prepare_hand(bj_table_t *t, int s, int h)
{
    bj_seat_t *st = &t->seats[s];
    bj_hand_t *hand = &st->hands[h];
    if (hand->ncards == 1 && !bj_deal_to(t, s, h))
        return false;
    if (hand->flags & BJ_HAND_DONE)
        return true;
    if (bj_hand_total(hand, NULL) >= 21) {
        hand->flags |= BJ_HAND_DONE;
    } else if (hand->flags & BJ_HAND_SPLIT_ACES) {
        bool can_resplit = t->rules.rsa && bj_hand_is_pair(hand) && st->nhands < t->rules.max_hands;
        if (!can_resplit)
            hand->flags |= BJ_HAND_DONE;
    }
    return true;
}

/*
 * Moves the turn to the first hand, from (s, h) on in seat order, that awaits a decision,
 * and announces it; if none is left, the dealer plays and the round settles.
 */
static void bj_advance_from(bj_table_t *t, int s, int h)
{
    for (; s < t->rules.seats; s++, h = 0) {
        bj_seat_t *st = &t->seats[s];
        if (!st->in_round)
            continue;
        for (; h < st->nhands; h++) {
            if (!bj_prepare_hand(t, s, h)) {
                bj_settle(t, true);
                return;
            }
            if (!(st->hands[h].flags & BJ_HAND_DONE)) {
                t->phase = BJ_PHASE_PLAYERS;
                t->turn_seat = s;
                t->turn_hand = h;
                t->turn_allowed = bj_allowed_mask(t, st, &st->hands[h]);
                if (t->cb != NULL) {
                    bj_event_t ev;
                    memset(&ev, 0, sizeof(ev));
                    ev.type = BJ_EV_TURN;
                    ev.round = t->round;
                    ev.seat = s;
                    ev.hand = h;
                    ev.player = st->player;
                    ev.allowed = t->turn_allowed;
                    t->cb(t->cb_ctx, &ev);
                }
                return;
            }
        }
    }
    t->turn_seat = -1;
    t->turn_hand = 0;
    bj_dealer_play(t);
}

/* After the insurance decisions (or when none were asked): the peek, then the players. */
static void bj_after_insurance(bj_table_t *t)
{
    if (t->rules.peek) {
        int up = bj_card_value(t->dealer[0]);
        if (up == 1 || up == 10) {
            if (bj_dealer_blackjack(t)) {
                t->hole_shown = true;
                bj_emit(t, BJ_EV_HOLE, -1, 0, t->dealer[1], 0);
                bj_settle(t, false);
                return;
            }
            bj_emit(t, BJ_EV_PEEK, -1, 0, 0, 0);
        }
    }
    bj_advance_from(t, 0, 0);
}

/* Betting closed: deal two cards to every seat with a bet and to the dealer. */
static void bj_deal(bj_table_t *t)
{
    int playing = 0;
    for (int s = 0; s < t->rules.seats; s++)
        playing += t->seats[s].in_round;
    if (playing == 0) {
        t->phase = BJ_PHASE_IDLE;
        bj_emit(t, BJ_EV_NO_ROUND, -1, 0, 0, 0);
        return;
    }
    if (t->reshuffle_due && bj_shoe_new(t) != 0) {
        /* The generator failed (docs/fairness.md): no card is dealt, every bet goes back. */
        bj_settle(t, true);
        return;
    }
    t->ndealer = 0;
    t->dealer_hard = 0;
    t->dealer_ace = false;
    t->hole_shown = false;
    for (int s = 0; s < t->rules.seats; s++) {
        bj_seat_t *st = &t->seats[s];
        if (!st->in_round)
            continue;
        st->nhands = 1;
        bj_hand_reset(&st->hands[0], st->bet, 0);
    }
    /* A fresh round starts with an empty table, so at most 16 cards are needed and the
     * refill always succeeds: the draws below cannot fail. */
    for (int pass = 0; pass < 2; pass++) {
        for (int s = 0; s < t->rules.seats; s++)
            if (t->seats[s].in_round)
                (void)bj_deal_to(t, s, 0);
        if (pass == 0 || t->rules.peek)
            (void)bj_deal_dealer(t, pass == 1);
    }
    for (int s = 0; s < t->rules.seats; s++) {
        bj_hand_t *h = &t->seats[s].hands[0];
        if (t->seats[s].in_round && bj_hand_total(h, NULL) == 21)
            h->flags |= BJ_HAND_BLACKJACK | BJ_HAND_DONE;
    }
    if (t->rules.insurance && bj_card_value(t->dealer[0]) == 1) {
        t->phase = BJ_PHASE_INSURANCE;
        for (int s = 0; s < t->rules.seats; s++)
            if (t->seats[s].in_round)
                t->seats[s].insurance = BJ_INS_PENDING;
        bj_emit(t, BJ_EV_INSURANCE_OPEN, -1, 0, t->dealer[0], 0);
        return;
    }
    bj_after_insurance(t);
}

/* The dealer shows the hole card and draws to 17 (hitting soft 17 under H17) if any hand
 * still needs beating, then the round settles. */
static void bj_dealer_play(bj_table_t *t)
{
    if (!t->rules.peek) {
        if (!bj_deal_dealer(t, false)) {
            bj_settle(t, true);
            return;
        }
    } else {
        t->hole_shown = true;
        bj_emit(t, BJ_EV_HOLE, -1, 0, t->dealer[1], 0);
    }
    t->hole_shown = true;
    bool live = false;
    for (int s = 0; s < t->rules.seats && !live; s++) {
        const bj_seat_t *st = &t->seats[s];
        if (!st->in_round || st->insurance == BJ_INS_EVEN_MONEY)
            continue;
        for (int h = 0; h < st->nhands; h++) {
            const bj_hand_t *hand = &st->hands[h];
            if (hand->hard <= 21 && !(hand->flags & (BJ_HAND_SURRENDERED | BJ_HAND_BLACKJACK))) {
                live = true;
                break;
            }
        }
    }
    if (live && !bj_dealer_blackjack(t)) {
        for (;;) {
            bool soft;
            int total = bj_dealer_total(t, &soft);
            if (total > 17 || (total == 17 && !(soft && t->rules.h17)))
                break;
            if (!bj_deal_dealer(t, false)) {
                bj_settle(t, true);
                return;
            }
        }
    }
    bj_settle(t, false);
}

/* Result of one settled hand against the dealer's final cards. */
static void bj_settle_hand(const bj_table_t *t, const bj_seat_t *st, bj_hand_t *h, int dealer,
                           bool dealer_bj)
{
    const bj_rules_t *r = &t->rules;
    int total = bj_hand_total(h, NULL);
    if (st->insurance == BJ_INS_EVEN_MONEY) {
        h->outcome = BJ_OUT_EVEN_MONEY;
        h->result = h->bet;
    } else if (h->flags & BJ_HAND_SURRENDERED) {
        h->outcome = BJ_OUT_SURRENDER;
        h->result = -(h->bet - h->bet / 2);
    } else if (h->flags & BJ_HAND_BLACKJACK) {
        h->outcome = dealer_bj ? BJ_OUT_PUSH : BJ_OUT_BLACKJACK;
        h->result = dealer_bj ? 0 : h->bet * r->bj_pay_num / r->bj_pay_den;
    } else if (total > 21) {
        h->outcome = BJ_OUT_BUST;
        h->result = -h->bet;
    } else if (dealer_bj || (dealer <= 21 && dealer > total)) {
        h->outcome = BJ_OUT_LOSE;
        h->result = -h->bet;
    } else if (dealer > 21 || total > dealer) {
        h->outcome = BJ_OUT_WIN;
        h->result = h->bet;
    } else {
        h->outcome = BJ_OUT_PUSH;
        h->result = 0;
    }
}

/*
 * Ends the round: every hand's result, insurance, the per-seat deltas; back to IDLE. A voided
 * round returns every bet. Discards stay out of the shoe until the cut card comes out.
 */
static void bj_settle(bj_table_t *t, bool voided)
{
    bj_settlement_t *out = &t->settlement;
    int dealer = bj_dealer_total(t, NULL);
    bool dealer_bj = bj_dealer_blackjack(t);
    out->round = t->round;
    out->voided = voided;
    out->nseats = t->rules.seats;
    out->house_delta = 0;
    for (int s = 0; s < t->rules.seats; s++) {
        bj_seat_t *st = &t->seats[s];
        bj_seat_result_t *res = &out->seats[s];
        res->player = st->player;
        res->played = st->in_round;
        res->hands = st->in_round ? st->nhands : 0;
        res->wagered = 0;
        res->insurance = 0;
        res->delta = 0;
        if (!st->in_round)
            continue;
        for (int h = 0; h < st->nhands; h++) {
            bj_hand_t *hand = &st->hands[h];
            if (voided) {
                hand->outcome = BJ_OUT_VOID;
                hand->result = 0;
            } else {
                bj_settle_hand(t, st, hand, dealer, dealer_bj);
            }
            res->wagered += hand->bet;
            res->delta += hand->result;
        }
        if (st->insurance == BJ_INS_TAKEN) {
            res->insurance = st->insurance_bet;
            res->wagered += st->insurance_bet;
            if (!voided)
                res->delta += dealer_bj ? 2 * st->insurance_bet : -st->insurance_bet;
        }
        out->house_delta -= res->delta;
    }
    t->has_settlement = true;
    t->phase = BJ_PHASE_IDLE;
    t->turn_seat = -1;
    if (t->shoe_pos >= t->cut_pos || t->reshuffle_due)
        bj_shoe_retire(t); /* the cut card is out: its order goes into this round's record */
    if (t->cb != NULL) {
        bj_event_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = BJ_EV_SETTLED;
        ev.round = t->round;
        ev.seat = -1;
        ev.settlement = out;
        t->cb(t->cb_ctx, &ev);
    }
}

/* ---- public --------------------------------------------------------------------------- */

int bj_table_create(const bj_rules_t *rules, bj_rng_t *rng, bj_event_cb cb, void *cb_ctx,
                    bj_table_t **out)
{
    if (rules == NULL || out == NULL || bj_rules_validate(rules, NULL, 0) != 0)
        return BJ_ERR_INVALID;
    bj_table_t *t = xcalloc(1, sizeof(*t));
    t->rules = *rules;
    t->rng = rng;
    t->cb = cb;
    t->cb_ctx = cb_ctx;
    t->shoe_cap = rules->decks * 52;
    t->shoe = xmalloc((size_t)t->shoe_cap);
    t->phase = BJ_PHASE_IDLE;
    t->turn_seat = -1;
    if (bj_shoe_new(t) != 0) {
        free(t->shoe);
        free(t);
        return BJ_ERR_RNG;
    }
    *out = t;
    return 0;
}

void bj_table_destroy(bj_table_t *t)
{
    if (t == NULL)
        return;
    free(t->shoe);
    free(t);
}

static int bj_seat_check(const bj_table_t *t, int seat)
{
    if (seat < 0 || seat >= t->rules.seats)
        return BJ_ERR_INVALID;
    return t->seats[seat].player == 0 ? BJ_ERR_SEAT_EMPTY : 0;
}

static void bj_emit_seat(bj_table_t *t, int seat)
{
    bj_emit(t, BJ_EV_SEAT, seat, 0, t->seats[seat].sitting_out, 0);
}

/* In BETTING, once no active seat is left without a bet, the deal starts. */
static void bj_betting_check_complete(bj_table_t *t)
{
    for (int s = 0; s < t->rules.seats; s++) {
        const bj_seat_t *st = &t->seats[s];
        if (st->player != 0 && !st->sitting_out && !st->in_round)
            return;
    }
    bj_deal(t);
}

int bj_table_sit(bj_table_t *t, int seat, uint64_t player)
{
    if (seat < 0 || seat >= t->rules.seats || player == 0)
        return BJ_ERR_INVALID;
    if (t->phase != BJ_PHASE_IDLE && t->phase != BJ_PHASE_BETTING)
        return BJ_ERR_PHASE;
    bj_seat_t *st = &t->seats[seat];
    if (st->player != 0)
        return BJ_ERR_SEAT_TAKEN;
    memset(st, 0, sizeof(*st));
    st->player = player;
    bj_emit_seat(t, seat);
    return 0;
}

int bj_table_leave(bj_table_t *t, int seat)
{
    int rc = bj_seat_check(t, seat);
    if (rc != 0)
        return rc;
    if (t->phase != BJ_PHASE_IDLE && t->phase != BJ_PHASE_BETTING)
        return BJ_ERR_PHASE;
    bj_seat_t *st = &t->seats[seat];
    bool had_bet = st->in_round;
    memset(st, 0, sizeof(*st));
    bj_emit_seat(t, seat);
    /* A player who leaves without a bet may have been the last one the window waited for. */
    if (t->phase == BJ_PHASE_BETTING && !had_bet) {
        bool any = false;
        for (int s = 0; s < t->rules.seats; s++)
            any |= t->seats[s].in_round;
        if (any)
            bj_betting_check_complete(t);
    }
    return 0;
}

int bj_table_sit_out(bj_table_t *t, int seat, bool sitting_out)
{
    int rc = bj_seat_check(t, seat);
    if (rc != 0)
        return rc;
    bj_seat_t *st = &t->seats[seat];
    if (st->sitting_out == sitting_out)
        return 0;
    if (t->phase == BJ_PHASE_BETTING && st->in_round)
        return BJ_ERR_ALREADY;
    st->sitting_out = sitting_out;
    bj_emit_seat(t, seat);
    if (t->phase == BJ_PHASE_BETTING && sitting_out) {
        bool any = false;
        for (int s = 0; s < t->rules.seats; s++)
            any |= t->seats[s].in_round;
        if (any)
            bj_betting_check_complete(t);
    }
    return 0;
}

int bj_table_open_betting(bj_table_t *t)
{
    if (t->phase != BJ_PHASE_IDLE)
        return BJ_ERR_PHASE;
    if (t->rng == NULL && !deck_healthy())
        return BJ_ERR_RNG; /* no bet is taken for a deal that cannot be shuffled */
    bool any = false;
    for (int s = 0; s < t->rules.seats; s++)
        any |= t->seats[s].player != 0 && !t->seats[s].sitting_out;
    if (!any)
        return BJ_ERR_NO_PLAYERS;
    for (int s = 0; s < t->rules.seats; s++) {
        bj_seat_t *st = &t->seats[s];
        st->in_round = false;
        st->bet = 0;
        st->nhands = 0;
        st->insurance = BJ_INS_NONE;
        st->insurance_bet = 0;
    }
    t->ndealer = 0;
    t->dealer_hard = 0;
    t->dealer_ace = false;
    t->hole_shown = false;
    t->round++;
    t->phase = BJ_PHASE_BETTING;
    bj_emit(t, BJ_EV_BETTING_OPEN, -1, 0, 0, 0);
    return 0;
}

int bj_table_bet(bj_table_t *t, int seat, int64_t amount)
{
    if (t->phase != BJ_PHASE_BETTING)
        return BJ_ERR_PHASE;
    int rc = bj_seat_check(t, seat);
    if (rc != 0)
        return rc;
    bj_seat_t *st = &t->seats[seat];
    if (st->sitting_out)
        return BJ_ERR_SITTING_OUT;
    if (st->in_round)
        return BJ_ERR_ALREADY;
    if (amount < t->rules.min_bet || amount > t->rules.max_bet)
        return BJ_ERR_BET_LIMIT;
    st->in_round = true;
    st->bet = amount;
    bj_emit(t, BJ_EV_BET, seat, 0, 0, amount);
    bj_betting_check_complete(t);
    return 0;
}

static bool bj_insurance_complete(const bj_table_t *t)
{
    for (int s = 0; s < t->rules.seats; s++)
        if (t->seats[s].in_round && t->seats[s].insurance == BJ_INS_PENDING)
            return false;
    return true;
}

int bj_table_insurance(bj_table_t *t, int seat, bool take)
{
    if (t->phase != BJ_PHASE_INSURANCE)
        return BJ_ERR_PHASE;
    int rc = bj_seat_check(t, seat);
    if (rc != 0)
        return rc;
    bj_seat_t *st = &t->seats[seat];
    if (!st->in_round)
        return BJ_ERR_SEAT_EMPTY;
    if (st->insurance != BJ_INS_PENDING)
        return BJ_ERR_ALREADY;
    bool blackjack = st->hands[0].flags & BJ_HAND_BLACKJACK;
    if (take && !blackjack && st->bet / 2 == 0)
        return BJ_ERR_NOT_ALLOWED; /* half of a 1-chip bet is no bet */
    if (!take)
        st->insurance = BJ_INS_DECLINED;
    else if (blackjack)
        st->insurance = BJ_INS_EVEN_MONEY;
    else {
        st->insurance = BJ_INS_TAKEN;
        st->insurance_bet = st->bet / 2;
    }
    bj_emit(t, BJ_EV_INSURANCE, seat, 0, (uint8_t)st->insurance, st->insurance_bet);
    if (bj_insurance_complete(t))
        bj_after_insurance(t);
    return 0;
}

static void bj_emit_action(bj_table_t *t, int seat, int hand, bj_action_t a, bool timed_out)
{
    bj_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = BJ_EV_ACTION;
    ev.round = t->round;
    ev.seat = seat;
    ev.hand = hand;
    ev.action = a;
    ev.timed_out = timed_out;
    ev.player = t->seats[seat].player;
    ev.amount = t->seats[seat].hands[hand].bet;
    t->cb(t->cb_ctx, &ev);
}

int bj_table_act(bj_table_t *t, int seat, bj_action_t action)
{
    if (t->phase != BJ_PHASE_PLAYERS)
        return BJ_ERR_PHASE;
    if (seat < 0 || seat >= t->rules.seats)
        return BJ_ERR_INVALID;
    if (seat != t->turn_seat)
        return BJ_ERR_TURN;
    if ((unsigned)action >= BJ_ACT_COUNT)
        return BJ_ERR_INVALID;
    bj_seat_t *st = &t->seats[seat];
    int hi = t->turn_hand;
    bj_hand_t *h = &st->hands[hi];
    if (!(t->turn_allowed & BJ_ACT_BIT(action))) {
        /* Refused: say precisely why (the mask and the checks agree; tests hold them to it). */
        int rc = bj_check_action(t, st, h, action);
        return rc != 0 ? rc : BJ_ERR_NOT_ALLOWED;
    }
    if (t->cb != NULL)
        bj_emit_action(t, seat, hi, action, false);
    bool ok = true;
    switch (action) {
    case BJ_ACT_HIT:
        ok = bj_deal_to(t, seat, hi);
        if (ok && bj_hand_total(h, NULL) >= 21)
            h->flags |= BJ_HAND_DONE;
        break;
    case BJ_ACT_STAND:
        h->flags |= BJ_HAND_DONE;
        break;
    case BJ_ACT_DOUBLE:
        h->bet *= 2;
        h->flags |= BJ_HAND_DOUBLED | BJ_HAND_DONE;
        ok = bj_deal_to(t, seat, hi);
        break;
    case BJ_ACT_SPLIT: {
        /* The new hand goes right after this one and gets its second card on its turn. */
        if (hi + 1 < st->nhands)
            memmove(&st->hands[hi + 2], &st->hands[hi + 1],
                    (size_t)(st->nhands - hi - 1) * sizeof(bj_hand_t));
        st->nhands++;
        uint8_t flags = BJ_HAND_SPLIT;
        if (bj_card_value(h->cards[0]) == 1)
            flags |= BJ_HAND_SPLIT_ACES;
        bj_hand_t *nh = &st->hands[hi + 1];
        uint8_t second = h->cards[1];
        bj_hand_reset(nh, st->bet, flags);
        bj_hand_add(nh, second);
        uint8_t first = h->cards[0];
        int64_t bet = h->bet;
        bj_hand_reset(h, bet, flags);
        bj_hand_add(h, first);
        ok = bj_prepare_hand(t, seat, hi);
        break;
    }
    case BJ_ACT_SURRENDER:
        h->flags |= BJ_HAND_SURRENDERED | BJ_HAND_DONE;
        break;
    default:
        break;
    }
    if (!ok) {
        bj_settle(t, true);
        return 0;
    }
    if (h->flags & BJ_HAND_DONE)
        bj_advance_from(t, seat, hi + 1);
    else
        bj_advance_from(t, seat, hi); /* the same hand decides again: new mask, announced */
    return 0;
}

int bj_table_timeout(bj_table_t *t)
{
    switch (t->phase) {
    case BJ_PHASE_IDLE:
        return BJ_ERR_PHASE;
    case BJ_PHASE_BETTING:
        bj_deal(t);
        return 0;
    case BJ_PHASE_INSURANCE:
        for (int s = 0; s < t->rules.seats; s++) {
            bj_seat_t *st = &t->seats[s];
            if (st->in_round && st->insurance == BJ_INS_PENDING) {
                st->insurance = BJ_INS_DECLINED;
                bj_emit(t, BJ_EV_INSURANCE, s, 0, BJ_INS_DECLINED, 0);
            }
        }
        bj_after_insurance(t);
        return 0;
    case BJ_PHASE_PLAYERS: {
        int s = t->turn_seat;
        bj_seat_t *st = &t->seats[s];
        for (int h = t->turn_hand; h < st->nhands; h++) {
            if (!bj_prepare_hand(t, s, h)) {
                bj_settle(t, true);
                return 0;
            }
            if (!(st->hands[h].flags & BJ_HAND_DONE)) {
                if (t->cb != NULL)
                    bj_emit_action(t, s, h, BJ_ACT_STAND, true);
                st->hands[h].flags |= BJ_HAND_DONE;
            }
        }
        bj_advance_from(t, s + 1, 0);
        return 0;
    }
    }
    return BJ_ERR_PHASE;
}

int bj_table_void_round(bj_table_t *t)
{
    if (t->phase == BJ_PHASE_IDLE)
        return BJ_ERR_PHASE;
    bj_settle(t, true);
    return 0;
}

bj_phase_t bj_table_phase(const bj_table_t *t)
{
    return t->phase;
}

uint64_t bj_table_round(const bj_table_t *t)
{
    return t->round;
}

bool bj_table_turn(const bj_table_t *t, int *seat, int *hand)
{
    if (t->phase != BJ_PHASE_PLAYERS)
        return false;
    if (seat != NULL)
        *seat = t->turn_seat;
    if (hand != NULL)
        *hand = t->turn_hand;
    return true;
}

uint32_t bj_table_allowed(const bj_table_t *t)
{
    return t->phase == BJ_PHASE_PLAYERS ? t->turn_allowed : 0;
}

bool bj_table_decision(const bj_table_t *t, bj_decision_t *out)
{
    if (t->phase != BJ_PHASE_PLAYERS)
        return false;
    const bj_seat_t *st = &t->seats[t->turn_seat];
    out->seat = t->turn_seat;
    out->hand = t->turn_hand;
    out->cards = &st->hands[t->turn_hand];
    out->up = t->dealer[0];
    out->allowed = t->turn_allowed;
    return true;
}

const bj_hand_t *bj_table_hand(const bj_table_t *t, int seat, int hand)
{
    if (seat < 0 || seat >= t->rules.seats)
        return NULL;
    const bj_seat_t *st = &t->seats[seat];
    if (!st->in_round || hand < 0 || hand >= st->nhands)
        return NULL;
    return &st->hands[hand];
}

uint8_t bj_table_dealer_up(const bj_table_t *t)
{
    return t->ndealer > 0 ? t->dealer[0] : BJ_CARD_HIDDEN;
}

const bj_settlement_t *bj_table_settlement(const bj_table_t *t)
{
    return t->has_settlement ? &t->settlement : NULL;
}

void bj_table_snapshot(const bj_table_t *t, bj_snapshot_t *out)
{
    memset(out, 0, sizeof(*out));
    out->rules = t->rules;
    out->phase = t->phase;
    out->round = t->round;
    out->turn_seat = t->phase == BJ_PHASE_PLAYERS ? t->turn_seat : -1;
    out->turn_hand = t->phase == BJ_PHASE_PLAYERS ? t->turn_hand : 0;
    out->allowed = bj_table_allowed(t);
    out->ndealer = t->ndealer;
    memcpy(out->dealer, t->dealer, sizeof(out->dealer));
    if (t->ndealer >= 2 && !t->hole_shown)
        out->dealer[1] = BJ_CARD_HIDDEN;
    memcpy(out->seats, t->seats, sizeof(out->seats));
    out->shoe_id = t->shoe_id;
    out->cards_left = t->shoe_len - t->shoe_pos;
    out->cut_card_out = t->reshuffle_due || t->shoe_pos >= t->cut_pos;
    out->shoe_dealt = t->shoe_pos;
    out->shoe_retired = t->shoe_retired;
    memcpy(out->shoe_commitment, t->commitment, sizeof out->shoe_commitment);
    out->has_settlement = t->has_settlement;
    if (t->has_settlement)
        out->last = t->settlement;
}

int bj_table_stack_shoe(bj_table_t *t, const uint8_t *cards, int n)
{
    if (t->phase != BJ_PHASE_IDLE || n < 0 || (n > 0 && cards == NULL))
        return BJ_ERR_INVALID;
    if (t->reshuffle_due && bj_shoe_new(t) != 0)
        return BJ_ERR_RNG;
    if (n > t->shoe_len - t->shoe_pos)
        return BJ_ERR_NO_CARD;
    /* Check first so that a refusal changes nothing. */
    int left[52] = {0};
    for (int i = t->shoe_pos; i < t->shoe_len; i++)
        left[t->shoe[i]]++;
    for (int i = 0; i < n; i++)
        if (cards[i] >= 52 || left[cards[i]]-- == 0)
            return BJ_ERR_NO_CARD;
    if (n == 0)
        return 0;
    /* The committed order changes: the shoe is retired (revealed) and its undealt cards become a
     * new shoe, committed to once stacked; the cut card keeps its place. */
    bj_shoe_retire(t);
    int pos = t->shoe_pos;
    memmove(t->shoe, t->shoe + pos, (size_t)(t->shoe_len - pos));
    t->shoe_len -= pos;
    t->cut_pos = t->cut_pos > pos ? t->cut_pos - pos : 0;
    t->shoe_pos = 0;
    for (int i = 0; i < n; i++) {
        for (int j = i; j < t->shoe_len; j++) {
            if (t->shoe[j] == cards[i]) {
                t->shoe[j] = t->shoe[i];
                t->shoe[i] = cards[i];
                break;
            }
        }
    }
    t->shoe_id++;
    if (bj_shoe_commit(t) != 0)
        return bj_shoe_failed(t);
    t->reshuffle_due = false;
    bj_emit(t, BJ_EV_SHUFFLE, -1, 0, 0, t->shoe_len);
    return 0;
}

void bj_table_retire_shoe(bj_table_t *t)
{
    bj_shoe_retire(t);
}

int bj_table_export_shoe(const bj_table_t *t, bj_shoe_state_t *out)
{
    if (t->phase != BJ_PHASE_IDLE)
        return BJ_ERR_PHASE;
    memset(out, 0, sizeof(*out));
    out->id = t->shoe_id;
    out->len = t->shoe_len;
    out->pos = t->shoe_pos;
    out->cut = t->cut_pos;
    out->retired = t->shoe_retired || t->reshuffle_due;
    memcpy(out->cards, t->shoe, (size_t)t->shoe_len);
    memcpy(out->nonce, t->nonce, sizeof out->nonce);
    memcpy(out->commitment, t->commitment, sizeof out->commitment);
    return 0;
}

int bj_table_import_shoe(bj_table_t *t, const bj_shoe_state_t *s)
{
    if (t->phase != BJ_PHASE_IDLE)
        return BJ_ERR_PHASE;
    if (s->len < 1 || s->len > t->shoe_cap || s->pos < 0 || s->pos > s->len || s->cut < 0 ||
        s->cut > s->len)
        return BJ_ERR_INVALID;
    int count[52] = {0};
    for (int i = 0; i < s->len; i++)
        if (s->cards[i] >= 52 || ++count[s->cards[i]] > t->rules.decks)
            return BJ_ERR_INVALID;
    uint8_t got[DECK_COMMIT_LEN];
    deck_commitment_tagged(DECK_SHOE_TAG, s->cards, (size_t)s->len, s->nonce, got);
    if (memcmp(got, s->commitment, sizeof got) != 0)
        return BJ_ERR_INVALID;
    memcpy(t->shoe, s->cards, (size_t)s->len);
    t->shoe_len = s->len;
    t->shoe_pos = s->pos;
    t->cut_pos = s->cut;
    t->shoe_id = s->id;
    memcpy(t->nonce, s->nonce, sizeof t->nonce);
    memcpy(t->commitment, s->commitment, sizeof t->commitment);
    t->shoe_retired = s->retired;
    t->reshuffle_due = s->retired || s->pos >= s->cut;
    return 0;
}
