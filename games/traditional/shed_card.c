/* shed_card -- see shed_card.h. */
#include "shed_card.h"
#include "deck.h"

#include <bsd/stdlib.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

const char shed_rank_chars[SHED_NRANKS + 1] = "3456789TJQKA2BR";
const char shed_suit_chars[5] = "dchs";

/* pick_low[x][k]: the lowest k (0..4) set bits of nibble x; pick_count[x]: its set bits. */
static const uint8_t pick_low[16][5] = {
    {0, 0, 0, 0, 0},    {0, 1, 1, 1, 1},   {0, 2, 2, 2, 2},    {0, 1, 3, 3, 3},
    {0, 4, 4, 4, 4},    {0, 1, 5, 5, 5},   {0, 2, 6, 6, 6},    {0, 1, 3, 7, 7},
    {0, 8, 8, 8, 8},    {0, 1, 9, 9, 9},   {0, 2, 10, 10, 10}, {0, 1, 3, 11, 11},
    {0, 4, 12, 12, 12}, {0, 1, 5, 13, 13}, {0, 2, 6, 14, 14},  {0, 1, 3, 7, 15}};
static const uint8_t pick_count[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};

/* Only the ranks asked for are visited (the move generators call this for every play). */
int shed_set_pick(shed_set_t hand, shed_counts_t counts, shed_set_t *out)
{
    shed_set_t r = {{0, 0}};
    counts &= ((uint64_t)1 << (4 * SHED_NRANKS)) - 1;
    while (counts) {
        int sh = __builtin_ctzll(counts) & ~3, need = (int)((counts >> sh) & 15);
        counts &= ~((uint64_t)15 << sh);
        for (int deck = 0; deck < 2 && need > 0; deck++) {
            unsigned nib = (unsigned)(hand.w[deck] >> sh) & 15;
            unsigned got = pick_low[nib][need < 4 ? need : 4];
            r.w[deck] |= (uint64_t)got << sh;
            need -= pick_count[got];
        }
        if (need > 0)
            return -ENOENT;
    }
    *out = r;
    return 0;
}

int shed_set_list(shed_set_t s, shed_card_t *out)
{
    int n = 0;
    for (int deck = 0; deck < 2; deck++) {
        uint64_t w = s.w[deck];
        while (w) {
            out[n++] = (shed_card_t)(deck * 64 + __builtin_ctzll(w));
            w &= w - 1;
        }
    }
    return n;
}

int shed_rank_from_char(char ch)
{
    const char *p = strchr(shed_rank_chars, toupper((unsigned char)ch));
    return (ch != '\0' && p != NULL) ? (int)(p - shed_rank_chars) : -1;
}

int shed_counts_parse(const char *text, int decks, shed_counts_t *out, char *err, size_t errlen)
{
    shed_counts_t c = 0;
    for (const char *p = text; *p; p++) {
        int r = shed_rank_from_char(*p);
        if (r < 0) {
            if (err)
                snprintf(err, errlen, "'%c' is not a rank (use 3456789TJQKA2, B, R)", *p);
            return -EINVAL;
        }
        int max = (r >= SHED_RANK_BJ ? 1 : 4) * decks;
        if (shed_counts_get(c, r) >= max) {
            if (err)
                snprintf(err, errlen, "more than %d card%s of rank '%c'", max, max > 1 ? "s" : "",
                         shed_rank_chars[r]);
            return -EINVAL;
        }
        c += (shed_counts_t)1 << (4 * r);
    }
    *out = c;
    return 0;
}

void shed_counts_format(shed_counts_t c, char *buf)
{
    char *p = buf;
    for (int r = 0; r < SHED_NRANKS; r++)
        for (int k = shed_counts_get(c, r); k > 0; k--)
            *p++ = shed_rank_chars[r];
    *p = '\0';
}

int shed_set_parse(const char *text, shed_set_t *out, char *err, size_t errlen)
{
    shed_set_t s = {{0, 0}};
    for (const char *p = text; *p;) {
        if (*p == ' ' || *p == ',') {
            p++;
            continue;
        }
        int r = shed_rank_from_char(*p);
        if (r < 0) {
            if (err)
                snprintf(err, errlen, "'%c' is not a rank (use 3456789TJQKA2, B, R)", *p);
            return -EINVAL;
        }
        int suit = 0;
        if (r < SHED_RANK_BJ) {
            const char *q = p[1] ? strchr(shed_suit_chars, tolower((unsigned char)p[1])) : NULL;
            if (q == NULL) {
                if (err)
                    snprintf(err, errlen, "card '%c' needs a suit d, c, h or s", *p);
                return -EINVAL;
            }
            suit = (int)(q - shed_suit_chars);
            p += 2;
        } else {
            p += 1;
        }
        shed_card_t card = shed_card_make(0, r, suit);
        if (shed_set_has(s, card)) {
            if (err)
                snprintf(err, errlen, "card '%c%s' given twice", shed_rank_chars[r],
                         r < SHED_RANK_BJ ? (char[2]){shed_suit_chars[suit], 0} : "");
            return -EINVAL;
        }
        shed_set_add(&s, card);
    }
    *out = s;
    return 0;
}

void shed_set_format(shed_set_t s, char *buf)
{
    shed_card_t cards[SHED_MAX_CARDS];
    int n = shed_set_list(s, cards);
    char *p = buf;
    for (int i = 0; i < n; i++) {
        int r = shed_card_rank(cards[i]);
        *p++ = shed_rank_chars[r];
        if (r < SHED_RANK_BJ)
            *p++ = shed_suit_chars[shed_card_suit(cards[i])];
    }
    *p = '\0';
}

static uint64_t rng_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void shed_rng_seed(shed_rng_t *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = rng_splitmix(&seed);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t shed_rng_next(shed_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return result;
}

/* Lemire's multiply-and-reject: unbiased and almost never loops. */
uint32_t shed_rng_below(shed_rng_t *r, uint32_t n)
{
    uint64_t m = (uint64_t)(uint32_t)(shed_rng_next(r) >> 32) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)-n % n;
        while (low < threshold) {
            m = (uint64_t)(uint32_t)(shed_rng_next(r) >> 32) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

int shed_shuffle_secure(shed_card_t *cards, int n)
{
    return n < 0 ? -EINVAL : deck_shuffle(cards, (size_t)n);
}

void shed_shuffle_seeded(shed_card_t *cards, int n, shed_rng_t *r)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)shed_rng_below(r, (uint32_t)i + 1);
        shed_card_t t = cards[i];
        cards[i] = cards[j];
        cards[j] = t;
    }
}

int shed_deck_build(shed_card_t *out, int decks, bool jokers)
{
    int n = 0;
    for (int d = 0; d < decks; d++) {
        for (int rank = 0; rank < 13; rank++)
            for (int suit = 0; suit < 4; suit++)
                out[n++] = shed_card_make(d, rank, suit);
        if (jokers) {
            out[n++] = shed_card_make(d, SHED_RANK_BJ, 0);
            out[n++] = shed_card_make(d, SHED_RANK_RJ, 0);
        }
    }
    return n;
}
