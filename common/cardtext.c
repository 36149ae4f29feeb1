/*
 * cardtext -- the text form of wire-code cards (see cardtext.h).
 */
#include "cardtext.h"

#include <errno.h>
#include <stdio.h>
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

/* A character of the text as a person reads it: 'x', or its byte when it is not printable. */
static void cardtext_char(char c, char *buf, size_t len)
{
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f)
        snprintf(buf, len, "'%c'", c);
    else
        snprintf(buf, len, "byte 0x%02x", u);
}

/* The text of the card at s, as a person reads it: its two characters (one at the end). */
static void cardtext_card_text(const char *s, char *buf, size_t len)
{
    char a[16], b[16];
    cardtext_char(s[0], a, sizeof a);
    if (s[1] == '\0' || s[1] == ' ') {
        snprintf(buf, len, "%s", a);
        return;
    }
    cardtext_char(s[1], b, sizeof b);
    if (a[0] == '\'' && b[0] == '\'')
        snprintf(buf, len, "'%c%c'", s[0], s[1]);
    else
        snprintf(buf, len, "%s %s", a, b);
}

int cardtext_parse_why(const char *s, uint8_t *out, int max, char *err, size_t errlen)
{
    char card[48], ch[16];
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (s == NULL || max < 0 || (out == NULL && max > 0)) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "%s", s == NULL ? "no text" : "no room for the cards");
        return -EINVAL;
    }
    int n = 0;
    while (*s != '\0') {
        if (*s == ' ') {
            s++;
            continue;
        }
        int c = cardtext_parse2(s);
        if (c < 0) {
            if (err != NULL && errlen > 0) {
                cardtext_card_text(s, card, sizeof card);
                if (s[0] == '\0' || strchr(cardtext_ranks, s[0]) == NULL) {
                    cardtext_char(s[0], ch, sizeof ch);
                    snprintf(err, errlen, "card %d %s: %s is not a rank (2-9 T J Q K A)", n + 1,
                             card, ch);
                } else if (s[1] == '\0' || s[1] == ' ') {
                    snprintf(err, errlen, "card %d %s: a rank without its suit (c d h s)", n + 1,
                             card);
                } else {
                    cardtext_char(s[1], ch, sizeof ch);
                    snprintf(err, errlen, "card %d %s: %s is not a suit (c d h s)", n + 1, card,
                             ch);
                }
            }
            return -EINVAL;
        }
        for (int i = 0; i < n; i++)
            if (out[i] == c) {
                if (err != NULL && errlen > 0) {
                    cardtext_card_text(s, card, sizeof card);
                    snprintf(err, errlen, "card %d %s: the same card as card %d", n + 1, card,
                             i + 1);
                }
                return -EINVAL;
            }
        if (n >= max) {
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "more than %d card%s", max, max == 1 ? "" : "s");
            return -E2BIG;
        }
        out[n++] = (uint8_t)c;
        s += 2;
    }
    return n;
}

int cardtext_parse_hand(const char *s, uint8_t *out, int n, char *err, size_t errlen)
{
    int got = cardtext_parse_why(s, out, n, err, errlen);
    if (got == n)
        return 0;
    if (got >= 0 && err != NULL && errlen > 0)
        snprintf(err, errlen, "%d card%s, %d needed", got, got == 1 ? "" : "s", n);
    return -EINVAL;
}

int cardtext_parse(const char *s, uint8_t *out, int max)
{
    return cardtext_parse_why(s, out, max, NULL, 0);
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
