/*
 * holdem_eval -- the evaluator's small run-time functions; the tables themselves are generated
 * at build time by holdem_eval_gen.c (see holdem_eval.h for the idea).
 */
#include "holdem_eval.h"

#include <errno.h>
#include <string.h>

/*
 * Checks the count and every card (in range, no repeat: the card-set lane of the hand built so
 * far must not hold it yet) before adding it, so a bad array never reaches the tables.
 */
int holdem_eval_cards(const uint8_t *cards, int n)
{
    if (n < 5 || n > 7)
        return -EINVAL;
    holdem_hand_t h = holdem_hand_empty();
    for (int i = 0; i < n; i++) {
        if (cards[i] >= HOLDEM_CARDS || (h.lanes_[1] & holdem_eval_cards_[cards[i]][1]))
            return -EINVAL;
        h = holdem_hand_add(h, cards[i]);
    }
    return holdem_hand_value(h);
}

/*
 * The flush path of holdem_cards_value(): collects the ranks of the flush suit from the cards.
 * Out of line so that the common path keeps its registers.
 */
uint16_t holdem_eval_flush_cards_(const uint8_t *cards, int n, unsigned suit)
{
    unsigned ranks = 0;
    for (int i = 0; i < n; i++)
        ranks |= (unsigned)((cards[i] & 3u) == suit) << (cards[i] >> 2);
    return holdem_eval_flush_values_[ranks & 0x1fff];
}

holdem_category_t holdem_value_category(uint16_t value)
{
    int c = HOLDEM_CATEGORIES - 1;
    while (c > 0 && value < (int)holdem_eval_category_first_[c])
        c--;
    return (holdem_category_t)c;
}

int holdem_value_rank_in_category(uint16_t value)
{
    return value - (int)holdem_eval_category_first_[holdem_value_category(value)] + 1;
}

const char *holdem_category_name(holdem_category_t cat)
{
    static const char *names[HOLDEM_CATEGORIES] = {
        "high card", "one pair",   "two pair",       "three of a kind", "straight",
        "flush",     "full house", "four of a kind", "straight flush",
    };
    return (unsigned)cat < HOLDEM_CATEGORIES ? names[cat] : "?";
}

static const char eval_rank_chars[] = "23456789TJQKA";
static const char eval_suit_chars[] = "cdhs";

int holdem_card_parse(const char *s)
{
    if (s == NULL || s[0] == '\0' || s[1] == '\0')
        return -EINVAL;
    const char *r = strchr(eval_rank_chars, s[0] >= 'a' && s[0] <= 'z' ? s[0] - 32 : s[0]);
    const char *u = strchr(eval_suit_chars, s[1] >= 'A' && s[1] <= 'Z' ? s[1] + 32 : s[1]);
    if (r == NULL || u == NULL)
        return -EINVAL;
    return (int)(r - eval_rank_chars) * 4 + (int)(u - eval_suit_chars);
}

int holdem_cards_parse(const char *s, uint8_t *out, int max)
{
    uint64_t seen = 0;
    int n = 0;
    size_t len = strlen(s);
    if (len % 2)
        return -EINVAL;
    for (size_t i = 0; i < len; i += 2) {
        int c = holdem_card_parse(s + i);
        if (c < 0 || (seen & (1ull << c)))
            return -EINVAL;
        if (n == max)
            return -E2BIG;
        seen |= 1ull << c;
        out[n++] = (uint8_t)c;
    }
    return n;
}

char *holdem_card_format(int card, char *buf)
{
    if (card < 0 || card >= HOLDEM_CARDS) {
        buf[0] = buf[1] = '?';
    } else {
        buf[0] = eval_rank_chars[card >> 2];
        buf[1] = eval_suit_chars[card & 3];
    }
    buf[2] = '\0';
    return buf;
}
