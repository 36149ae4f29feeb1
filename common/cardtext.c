/*
 * cardtext -- the text form of wire-code cards (see cardtext.h).
 */
#include "cardtext.h"

#include <errno.h>
#include <string.h>

static const char cardtext_ranks[] = "23456789TJQKA";
static const char cardtext_suits[] = "cdhs";

bool cardtext_valid(uint8_t code)
{
    int r = CARDTEXT_RANK(code);
    return r >= 2 && r <= 14;
}

/* The code of the two characters at s, or -EINVAL (strchr would match the NUL: checked). */
static int cardtext_parse2(const char *s)
{
    if (s[0] == '\0' || s[1] == '\0')
        return -EINVAL;
    const char *r = strchr(cardtext_ranks, s[0]);
    const char *u = strchr(cardtext_suits, s[1]);
    if (r == NULL || u == NULL)
        return -EINVAL;
    return CARDTEXT_CARD((int)(r - cardtext_ranks) + 2, (int)(u - cardtext_suits));
}

int cardtext_parse_card(const char *s)
{
    if (s == NULL || strlen(s) != 2)
        return -EINVAL;
    return cardtext_parse2(s);
}

int cardtext_parse(const char *s, uint8_t *out, int max)
{
    if (s == NULL || max < 0 || (out == NULL && max > 0))
        return -EINVAL;
    int n = 0;
    while (*s != '\0') {
        if (*s == ' ') {
            s++;
            continue;
        }
        int c = cardtext_parse2(s);
        if (c < 0)
            return -EINVAL;
        for (int i = 0; i < n; i++)
            if (out[i] == c)
                return -EINVAL;
        if (n >= max)
            return -E2BIG;
        out[n++] = (uint8_t)c;
        s += 2;
    }
    return n;
}

int cardtext_format(const uint8_t *cards, int n, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -EINVAL;
    buf[0] = '\0';
    if (n < 0 || (cards == NULL && n > 0) || len < (size_t)n * 2 + 1)
        return -EINVAL;
    for (int i = 0; i < n; i++)
        if (!cardtext_valid(cards[i]))
            return -EINVAL;
    for (int i = 0; i < n; i++) {
        buf[2 * i] = cardtext_ranks[CARDTEXT_RANK(cards[i]) - 2];
        buf[2 * i + 1] = cardtext_suits[CARDTEXT_SUIT(cards[i])];
    }
    buf[2 * n] = '\0';
    return 2 * n;
}
