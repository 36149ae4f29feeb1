/*
 * libFuzzer driver: Niu Niu's evaluator on its input paths (docs/rules/niuniu.md). Each input is
 * used three ways:
 *
 *   - as card text, the way croupier-rules reads it (common/cardtext.h, at most five cards),
 *     then evaluated when it names five;
 *   - its first bytes as raw card codes (as many as the input holds, up to six), evaluated as
 *     they are: refused unless exactly five distinct valid codes;
 *   - as the parameters of a round (seats, banker, multiplier, stacks, bets, a deal drawn from
 *     the bytes), settled.
 *
 * Invariants; breaking one aborts, which libFuzzer reports:
 *   - an accepted hand has a category; its niu and rest are the five cards, the niu's points
 *     are a multiple of 10, the rest's give the value; the same cards in reverse order give the
 *     same result; it compares equal to itself; card text formats back and parses to the same;
 *   - a refused hand is NIUNIU_INVALID;
 *   - a settled round has one transfer per player, losers first then winners strongest first,
 *     losers pay what they owe, winners get at most that and only while the banker has chips,
 *     and the deltas sum to zero.
 * Corpus: fuzz/corpus/niuniu_eval (text hands and raw bytes, written by hand).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cardtext.h"
#include "niuniu.h"

static void fuzz_die(const char *what)
{
    fprintf(stderr, "fuzz invariant broken: %s\n", what);
    abort();
}

/* Checks an evaluated hand of the five cards c. */
static void fuzz_check_hand(const uint8_t c[NIUNIU_HAND_CARDS], const niuniu_hand_t *h)
{
    if (h->category < NIUNIU_NO_NIU || h->category > NIUNIU_FIVE_SMALL)
        fuzz_die("an accepted hand without a category");
    if (niuniu_compare(h, h) != 0)
        fuzz_die("a hand does not tie itself");
    uint8_t rev[NIUNIU_HAND_CARDS];
    for (int i = 0; i < NIUNIU_HAND_CARDS; i++)
        rev[i] = c[NIUNIU_HAND_CARDS - 1 - i];
    niuniu_hand_t h2;
    if (niuniu_eval(rev, NIUNIU_HAND_CARDS, &h2) != 0 || memcmp(&h2, h, sizeof h2) != 0)
        fuzz_die("the card order changed the result");
    int top = 0;
    for (int i = 0; i < NIUNIU_HAND_CARDS; i++)
        if (niuniu_card_order(c[i]) > top)
            top = niuniu_card_order(c[i]);
    if (niuniu_card_order(h->top) != top)
        fuzz_die("the top card is not the highest");
    if (!h->has_niu) {
        if (h->points != -1 || (h->category >= NIUNIU_NIU_1 && h->category <= NIUNIU_NIU_NIU))
            fuzz_die("a niu category without a niu");
        return;
    }
    uint8_t all[NIUNIU_HAND_CARDS] = {h->niu[0], h->niu[1], h->niu[2], h->rest[0], h->rest[1]};
    for (int i = 0; i < NIUNIU_HAND_CARDS; i++) {
        int found = 0;
        for (int j = 0; j < NIUNIU_HAND_CARDS; j++)
            found += all[j] == c[i];
        if (found != 1)
            fuzz_die("the split is not the hand");
    }
    int niu = niuniu_card_points(h->niu[0]) + niuniu_card_points(h->niu[1]) +
              niuniu_card_points(h->niu[2]);
    int rest = niuniu_card_points(h->rest[0]) + niuniu_card_points(h->rest[1]);
    if (niu % 10 != 0 || rest % 10 != h->points)
        fuzz_die("the split does not add up");
}

static void fuzz_text(const uint8_t *data, size_t size)
{
    char text[64];
    if (size >= sizeof text)
        size = sizeof text - 1;
    memcpy(text, data, size);
    text[size] = '\0';
    uint8_t c[NIUNIU_HAND_CARDS];
    int n = cardtext_parse(text, c, NIUNIU_HAND_CARDS);
    /* The reason of a refusal (croupier-rules prints it): the same answer, a reason exactly when
     * refused, always terminated, even cut short by a small buffer. */
    uint8_t cw[NIUNIU_HAND_CARDS];
    char why[96], small[8];
    int nw = cardtext_parse_why(text, cw, NIUNIU_HAND_CARDS, why, sizeof why);
    if (nw != n || (n < 0) != (why[0] != '\0') || strlen(why) >= sizeof why)
        fuzz_die("cardtext_parse_why disagrees with cardtext_parse");
    if (cardtext_parse_why(text, cw, NIUNIU_HAND_CARDS, small, sizeof small) != n ||
        strlen(small) >= sizeof small || strncmp(small, why, strlen(small)) != 0)
        fuzz_die("a reason cut short is not the reason's start");
    if (n != NIUNIU_HAND_CARDS)
        return;
    niuniu_hand_t h;
    if (niuniu_eval(c, n, &h) != 0)
        fuzz_die("five parsed cards refused");
    fuzz_check_hand(c, &h);
    char back[16];
    uint8_t c2[NIUNIU_HAND_CARDS];
    if (cardtext_format(c, n, back, sizeof back) != 2 * n ||
        cardtext_parse(back, c2, NIUNIU_HAND_CARDS) != n || memcmp(c, c2, sizeof c) != 0)
        fuzz_die("card text does not round-trip");
}

static void fuzz_raw(const uint8_t *data, size_t size)
{
    int n = size > 6 ? 6 : (int)size;
    niuniu_hand_t h;
    int rc = niuniu_eval(data, n, &h);
    bool ok = n == NIUNIU_HAND_CARDS;
    for (int i = 0; ok && i < n; i++) {
        ok = cardtext_valid(data[i]);
        for (int j = 0; ok && j < i; j++)
            ok = data[j] != data[i];
    }
    if (ok != (rc == 0))
        fuzz_die("raw cards accepted or refused wrongly");
    if (rc != 0) {
        if (h.category != NIUNIU_INVALID)
            fuzz_die("a refused hand has a category");
        return;
    }
    fuzz_check_hand(data, &h);
}

/* Takes the next byte of the input (0 when it is used up). */
static uint8_t fuzz_byte(const uint8_t *data, size_t size, size_t *pos)
{
    return *pos < size ? data[(*pos)++] : 0;
}

static void fuzz_settle(const uint8_t *data, size_t size)
{
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    size_t pos = 0;
    cfg.seats = 2 + fuzz_byte(data, size, &pos) % (NIUNIU_MAX_SEATS - 1);
    niuniu_round_t r;
    memset(&r, 0, sizeof r);
    r.banker = fuzz_byte(data, size, &pos) % cfg.seats;
    r.mult = 1 + fuzz_byte(data, size, &pos) % cfg.max_bid;
    for (int s = 0; s < cfg.seats; s++) {
        r.stack[s] = (int64_t)fuzz_byte(data, size, &pos) * 37;
        int64_t bet = fuzz_byte(data, size, &pos) % 6;
        if (s != r.banker && bet * r.mult * niuniu_max_multiplier(&cfg) <= r.stack[s])
            r.bet[s] = bet;
    }
    /* The deal: a Fisher-Yates permutation of the deck driven by the bytes. */
    uint8_t deck[NIUNIU_DECK_CARDS];
    for (int i = 0; i < NIUNIU_DECK_CARDS; i++)
        deck[i] = CARDTEXT_CARD(2 + i / 4, i % 4);
    for (int i = NIUNIU_DECK_CARDS - 1; i > 0; i--) {
        int j = fuzz_byte(data, size, &pos) % (i + 1);
        uint8_t t = deck[i];
        deck[i] = deck[j];
        deck[j] = t;
    }
    for (int s = 0; s < cfg.seats; s++)
        memcpy(r.cards[s], deck + s * NIUNIU_HAND_CARDS, NIUNIU_HAND_CARDS);
    int players = 0;
    for (int s = 0; s < cfg.seats; s++)
        players += r.bet[s] > 0;
    niuniu_settlement_t out;
    int rc = niuniu_settle(&cfg, &r, &out);
    if ((rc == 0) != (players > 0))
        fuzz_die("a round settled or refused wrongly");
    if (rc != 0)
        return;
    if (out.n != players)
        fuzz_die("not one transfer per player");
    int64_t sum = 0, available = r.stack[r.banker];
    niuniu_hand_t bh, prev = {0};
    niuniu_eval(r.cards[r.banker], NIUNIU_HAND_CARDS, &bh);
    bool winners = false;
    for (int i = 0; i < out.n; i++) {
        const niuniu_transfer_t *t = &out.t[i];
        niuniu_hand_t ph;
        niuniu_eval(r.cards[t->seat], NIUNIU_HAND_CARDS, &ph);
        if (t->player_won != (niuniu_compare(&ph, &bh) > 0))
            fuzz_die("a transfer's winner is wrong");
        if (t->owed !=
            r.bet[t->seat] * r.mult * cfg.mult[t->player_won ? ph.category : bh.category])
            fuzz_die("a transfer owes the wrong amount");
        if (!t->player_won) {
            if (winners || t->amount != t->owed)
                fuzz_die("a loser after a winner, or a loser not paying in full");
            available += t->amount;
        } else {
            if (winners && niuniu_compare(&ph, &prev) > 0)
                fuzz_die("winners not strongest first");
            int64_t due = t->owed < available ? t->owed : available;
            if (t->amount != due)
                fuzz_die("a winner paid the wrong amount");
            available -= t->amount;
            winners = true;
            prev = ph;
        }
    }
    for (int s = 0; s < cfg.seats; s++)
        sum += out.delta[s];
    if (sum != 0 || available < 0)
        fuzz_die("the deltas do not sum to zero");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_text(data, size);
    fuzz_raw(data, size);
    fuzz_settle(data, size);
    return 0;
}
