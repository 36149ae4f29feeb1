/*
 * holdem_eval_gen -- build-time generator of the evaluator's tables (see holdem_eval.h).
 *
 * Run by meson as `holdem_eval_gen OUT.c`; writes the card constants, the flush table, the
 * rank-key perfect hash and the category boundaries as C arrays. Building the perfect hash
 * takes about a second, which is why it happens once at build time and not at every start.
 * Nothing it writes is committed to the source tree.
 */
#include "holdem_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

/*
 * Per-rank keys: every multiset of at most seven cards with at most four of a rank has its own
 * sum. Found once by a greedy search (each key the smallest above the previous one that keeps
 * all sums distinct); the largest seven-card sum is 18,393,157, below 2^25, which is what the
 * hash's multiply-modulo-2^25 needs. The generator checks the distinctness again while
 * building the table.
 */
static const uint32_t eval_rank_keys[13] = {1,     5,      24,     112,    521,     2247,   9244,
                                            30823, 103066, 250154, 667453, 1526359, 3453520};

#define EVAL_MAX_KEY (4u * 3453520u + 3u * 1526359u)
_Static_assert(EVAL_MAX_KEY < (1u << HOLDEM_EVAL_HASH_BITS), "rank keys exceed the hash range");

static uint32_t eval_class_scores[HOLDEM_VALUE_MAX]; /* sorted comparable scores, by value-1 */
static int eval_category_first[HOLDEM_CATEGORIES + 1];
static uint64_t gen_card_key[HOLDEM_CARDS], gen_card_mask[HOLDEM_CARDS];
static uint16_t gen_flush_values[8192];

/* One rank-key perfect hash: which multisets it holds, its shape, and the tables built. */
typedef struct {
    int min_cards;  /* 5: every multiset of 5..7 cards; 7: seven-card multisets only */
    unsigned shift; /* column bits (the row is the rest of the 25 hash bits) */
    int wide;       /* 1: 32-bit offsets, slot = hash + offset; 0: slot = column + 16-bit disp */
    uint32_t *disp; /* 2^(25 - shift) offsets or displacements */
    uint16_t *values;
    size_t size; /* entries in values */
} eval_hash_t;

static unsigned eval_sort_shift; /* the row shift eval_cmp_entry_row sorts by */

/* A comparable score: category in bits 20..23, then up to five ranks, most significant first. */
static uint32_t eval_score(int cat, const int *r, int n)
{
    uint32_t s = (uint32_t)cat << 20;
    for (int i = 0; i < 5; i++)
        s |= (uint32_t)(i < n ? r[i] : 0) << (16 - 4 * i);
    return s;
}

/* The highest card of a five-card straight in a 13-bit rank set, or -1 (the wheel gives 3). */
static int eval_straight_top(unsigned mask)
{
    for (int top = 12; top >= 4; top--) {
        unsigned run = 0x1fu << (top - 4);
        if ((mask & run) == run)
            return top;
    }
    if ((mask & 0x100f) == 0x100f)
        return 3;
    return -1;
}

/* Score of the best flush or straight flush in a set of one suit's ranks (at least five). */
static uint32_t eval_score_flush(unsigned mask)
{
    int top = eval_straight_top(mask);
    if (top >= 0)
        return eval_score(HOLDEM_STRAIGHT_FLUSH, &top, 1);
    int r[5], n = 0;
    for (int i = 12; i >= 0 && n < 5; i--)
        if (mask & (1u << i))
            r[n++] = i;
    return eval_score(HOLDEM_FLUSH, r, 5);
}

/*
 * Score of the best non-flush five-card hand from rank counts (five to seven cards). Written
 * for clarity, not speed: it runs only while the tables are built.
 */
static uint32_t eval_score_counts(const int *count)
{
    int quad = -1, trips[2] = {-1, -1}, pairs[3] = {-1, -1, -1}, nt = 0, np = 0;
    unsigned mask = 0;
    for (int r = 12; r >= 0; r--) {
        if (count[r])
            mask |= 1u << r;
        if (count[r] == 4 && quad < 0)
            quad = r;
        else if (count[r] == 3 && nt < 2)
            trips[nt++] = r;
        else if (count[r] == 2 && np < 3)
            pairs[np++] = r;
    }
    int k[5], n = 0;
#define KICKERS(want, ...)                                                                         \
    do {                                                                                           \
        int ex_[] = {__VA_ARGS__};                                                                 \
        for (int r_ = 12; r_ >= 0 && n < (want); r_--) {                                           \
            int skip_ = 0;                                                                         \
            for (unsigned e_ = 0; e_ < sizeof ex_ / sizeof ex_[0]; e_++)                           \
                skip_ |= ex_[e_] == r_;                                                            \
            if (count[r_] && !skip_)                                                               \
                k[n++] = r_;                                                                       \
        }                                                                                          \
    } while (0)
    if (quad >= 0) {
        k[n++] = quad;
        KICKERS(2, quad);
        return eval_score(HOLDEM_FOUR_OF_A_KIND, k, n);
    }
    if (nt >= 1 && (nt >= 2 || np >= 1)) {
        k[0] = trips[0];
        k[1] = nt >= 2 ? (trips[1] > pairs[0] ? trips[1] : pairs[0]) : pairs[0];
        return eval_score(HOLDEM_FULL_HOUSE, k, 2);
    }
    int top = eval_straight_top(mask);
    if (top >= 0)
        return eval_score(HOLDEM_STRAIGHT, &top, 1);
    if (nt == 1) {
        k[n++] = trips[0];
        KICKERS(3, trips[0]);
        return eval_score(HOLDEM_THREE_OF_A_KIND, k, n);
    }
    if (np >= 2) {
        k[n++] = pairs[0];
        k[n++] = pairs[1];
        KICKERS(3, pairs[0], pairs[1]);
        return eval_score(HOLDEM_TWO_PAIR, k, n);
    }
    if (np == 1) {
        k[n++] = pairs[0];
        KICKERS(4, pairs[0]);
        return eval_score(HOLDEM_ONE_PAIR, k, n);
    }
    KICKERS(5, -1);
    return eval_score(HOLDEM_HIGH_CARD, k, n);
#undef KICKERS
}

static int eval_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The value (1..7462) of a score; aborts if the score is not a class (a construction bug). */
static uint16_t eval_value_of(uint32_t score)
{
    const uint32_t *p =
        bsearch(&score, eval_class_scores, HOLDEM_VALUE_MAX, sizeof score, eval_cmp_u32);
    if (p == NULL) {
        fprintf(stderr, "holdem_eval: score %#x is not a hand class\n", score);
        abort();
    }
    return (uint16_t)(p - eval_class_scores + 1);
}

/* Lists the 7,462 five-card classes in ascending order (6,175 rank multisets + 1,287 flushes). */
static void eval_build_classes(void)
{
    int n = 0, count[13];
    for (unsigned m = 0; m < 8192; m++)
        if (__builtin_popcount(m) == 5)
            eval_class_scores[n++] = eval_score_flush(m);
    /* Rank multisets of five cards: odometer over counts 0..4. */
    memset(count, 0, sizeof count);
    for (;;) {
        int total = 0;
        for (int r = 0; r < 13; r++)
            total += count[r];
        if (total == 5)
            eval_class_scores[n++] = eval_score_counts(count);
        int r = 0;
        while (r < 13) {
            if (++count[r] <= 4 && total + 1 <= 5)
                break;
            total -= count[r] - 1;
            count[r] = 0;
            r++;
        }
        if (r == 13)
            break;
    }
    if (n != HOLDEM_VALUE_MAX) {
        fprintf(stderr, "holdem_eval: %d classes, expected %d\n", n, HOLDEM_VALUE_MAX);
        abort();
    }
    qsort(eval_class_scores, (size_t)n, sizeof eval_class_scores[0], eval_cmp_u32);
    for (int c = 0, i = 0; c <= HOLDEM_CATEGORIES; c++) {
        while (i < n && (int)(eval_class_scores[i] >> 20) < c)
            i++;
        eval_category_first[c] = i + 1;
    }
}

typedef struct {
    uint32_t key;
    uint32_t hash; /* key * HOLDEM_EVAL_HASH_MUL modulo 2^HOLDEM_EVAL_HASH_BITS */
    uint16_t value;
} eval_entry_t;

/* The row/column hash of a rank key, exactly as holdem_hand_value() computes it. */
static uint32_t eval_hash(uint32_t key)
{
    return (key * HOLDEM_EVAL_HASH_MUL) & ((1u << HOLDEM_EVAL_HASH_BITS) - 1);
}

static int eval_cmp_entry_row(const void *a, const void *b)
{
    const eval_entry_t *x = a, *y = b;
    uint32_t rx = x->hash >> eval_sort_shift, ry = y->hash >> eval_sort_shift;
    return rx < ry ? -1 : rx > ry;
}

typedef struct {
    uint32_t row;
    uint32_t first, n;
} eval_row_t;

/* The first free slot at or after i (path-halving union-find over taken slots). */
static uint32_t eval_find_free(uint32_t *next, uint32_t i)
{
    while (next[i] != i) {
        next[i] = next[next[i]];
        i = next[i];
    }
    return i;
}

static int eval_cmp_row_size(const void *a, const void *b)
{
    const eval_row_t *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The slot of hash x, exactly as holdem_eval_rank_value_() / _value7_() compute it. */
static uint32_t eval_slot(const eval_hash_t *hs, uint32_t x)
{
    if (hs->wide)
        return x + hs->disp[x >> hs->shift];
    return (x & ((1u << hs->shift) - 1)) + hs->disp[x >> hs->shift];
}

/*
 * Builds a rank-key perfect hash: every rank multiset of hs->min_cards..7 cards (73,775 for 5..7,
 * 49,205 for 7 alone), keyed by its key sum. The multiply scatters the keys evenly over the
 * rows, and because it is a bijection modulo 2^25 no two keys share a row and a column. Rows
 * are placed largest first at the smallest displacement where none of their columns lands on
 * a slot already taken (first-fit decreasing), which fills 89 % (all) and 94 % (seven cards)
 * of the value table. A wide table stores displacement minus row * columns, so that the
 * evaluator adds it to the whole hash without masking out the column.
 */
static void eval_build_rank_hash(eval_hash_t *hs)
{
    const uint32_t nrows_max = 1u << (HOLDEM_EVAL_HASH_BITS - hs->shift);
    const uint32_t col_mask = (1u << hs->shift) - 1;
    size_t cap = 80000, n = 0;
    eval_entry_t *e = xmalloc(cap * sizeof *e);
    int count[13] = {0}, total = 0;
    for (;;) {
        if (total >= hs->min_cards) {
            uint32_t key = 0;
            for (int r = 0; r < 13; r++)
                key += (uint32_t)count[r] * eval_rank_keys[r];
            if (n == cap)
                e = xreallocarray(e, cap *= 2, sizeof *e);
            e[n].key = key;
            e[n].hash = eval_hash(key);
            e[n++].value = eval_value_of(eval_score_counts(count));
        }
        int r = 0;
        while (r < 13) {
            if (++count[r] <= 4 && total + 1 <= 7) {
                total++;
                break;
            }
            total -= count[r] - 1;
            count[r] = 0;
            r++;
        }
        if (r == 13)
            break;
    }
    eval_sort_shift = hs->shift;
    qsort(e, n, sizeof *e, eval_cmp_entry_row);
    eval_row_t *rows = xcalloc(nrows_max, sizeof *rows);
    size_t nrows = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        uint32_t row = e[i].hash >> hs->shift;
        while (j < n && (e[j].hash >> hs->shift) == row)
            j++;
        rows[nrows++] = (eval_row_t){row, (uint32_t)i, (uint32_t)(j - i)};
        i = j;
    }
    qsort(rows, nrows, sizeof *rows, eval_cmp_row_size);

    /* An empty row keeps its columns at slots 0..col_mask, inside the table. */
    uint32_t *disp = xcalloc(nrows_max, sizeof *disp);
    hs->disp = disp;
    for (uint32_t r = 0; r < nrows_max && hs->wide; r++)
        disp[r] = 0u - (r << hs->shift);
    /* the largest slot a displacement can reach, or more than any table needs */
    const size_t tcap = (size_t)65536 * (hs->wide ? 4 : 1) + col_mask + 1;
    uint16_t *values = xcalloc(tcap, sizeof *values);
    uint8_t *used = xcalloc(tcap, 1);
    size_t tsize = 0;
    /*
     * First fit: only displacements that put the row's smallest column on a free slot can
     * work, so the search walks the free slots (found through next_free, a union-find of
     * taken runs).
     */
    uint32_t *next_free = xmalloc((tcap + 1) * sizeof *next_free);
    for (size_t i = 0; i <= tcap; i++)
        next_free[i] = (uint32_t)i;
    for (size_t ri = 0; ri < nrows; ri++) {
        const eval_row_t *row = &rows[ri];
        uint32_t min_col = col_mask;
        for (uint32_t i = 0; i < row->n; i++)
            if ((e[row->first + i].hash & col_mask) < min_col)
                min_col = e[row->first + i].hash & col_mask;
        for (uint32_t slot = eval_find_free(next_free, min_col);;
             slot = eval_find_free(next_free, slot + 1)) {
            uint32_t off = slot - min_col;
            if ((!hs->wide && off > UINT16_MAX) || off + col_mask >= tcap) {
                fprintf(stderr, "holdem_eval: rank hash displacement overflow\n");
                abort();
            }
            int ok = 1;
            for (uint32_t i = 0; i < row->n && ok; i++)
                ok = !used[(e[row->first + i].hash & col_mask) + off];
            if (!ok)
                continue;
            for (uint32_t i = 0; i < row->n; i++) {
                const eval_entry_t *x = &e[row->first + i];
                size_t pos = (x->hash & col_mask) + off;
                used[pos] = 1;
                next_free[pos] = (uint32_t)pos + 1;
                values[pos] = x->value;
                if (pos + 1 > tsize)
                    tsize = pos + 1;
            }
            disp[row->row] = hs->wide ? off - (row->row << hs->shift) : off;
            break;
        }
    }
    free(next_free);
    /* Every key must map home through the same arithmetic as the evaluator. */
    for (size_t i = 0; i < n; i++) {
        uint32_t x = eval_hash(e[i].key);
        uint32_t pos = eval_slot(hs, x);
        if (values[pos] != e[i].value) {
            fprintf(stderr, "holdem_eval: rank key %u does not map home\n", e[i].key);
            abort();
        }
    }
    /*
     * A meaningless hand (a card added twice) may hash to any row and column: size the table
     * to the largest slot any row can reach, so such a hand reads a zero, never past the end.
     */
    for (uint32_t r = 0; r < nrows_max; r++) {
        uint32_t last = eval_slot(hs, (r << hs->shift) | col_mask);
        if (last >= tcap) {
            fprintf(stderr, "holdem_eval: rank hash row %u reaches past the table\n", r);
            abort();
        }
        if (last + 1 > tsize)
            tsize = last + 1;
    }
    free(used);
    free(rows);
    free(e);
    hs->disp = disp;
    hs->values = values;
    hs->size = tsize;
}

/* Writes one array as C. */
static void gen_print_u32(FILE *f, const char *decl, const uint32_t *v, size_t n)
{
    fprintf(f, "%s[%zu] = {", decl, n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%u,", i % 10 ? " " : "\n    ", v[i]);
    fprintf(f, "\n};\n\n");
}

static void gen_print_u16(FILE *f, const char *decl, const uint16_t *v, size_t n)
{
    fprintf(f, "%s[%zu] = {", decl, n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%u,", i % 14 ? " " : "\n    ", v[i]);
    fprintf(f, "\n};\n\n");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: holdem_eval_gen OUT.c\n");
        return 2;
    }
    for (int c = 0; c < HOLDEM_CARDS; c++) {
        int rank = c >> 2, suit = c & 3;
        gen_card_key[c] = ((uint64_t)eval_hash(eval_rank_keys[rank]) << HOLDEM_EVAL_HASH_SHIFT) +
                          (1ull << (4 * suit));
        gen_card_mask[c] = 1ull << (16 * suit + rank);
    }
    eval_build_classes();
    for (unsigned m = 0; m < 8192; m++)
        gen_flush_values[m] = __builtin_popcount(m) >= 5 ? eval_value_of(eval_score_flush(m)) : 0;
    FILE *f = fopen(argv[1], "w");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    eval_hash_t all = {5, HOLDEM_EVAL_ROW_SHIFT, 1, NULL, NULL, 0};
    eval_hash_t seven = {7, HOLDEM_EVAL_ROW_SHIFT7, 0, NULL, NULL, 0};
    eval_build_rank_hash(&all);
    eval_build_rank_hash(&seven);
    fprintf(f, "/* Generated by holdem_eval_gen at build time; do not edit or commit. */\n");
    fprintf(f, "#include \"holdem_eval.h\"\n\n");
    fprintf(f, "const holdem_lanes_t_ holdem_eval_cards_[%d] = {", HOLDEM_CARDS);
    for (int c = 0; c < HOLDEM_CARDS; c++)
        fprintf(f, "\n    {%#llxull, %#llxull},", (unsigned long long)gen_card_key[c],
                (unsigned long long)gen_card_mask[c]);
    fprintf(f, "\n};\n\n");
    fprintf(f, "const uint64_t holdem_eval_card_keys_[%d] = {", HOLDEM_CARDS);
    for (int c = 0; c < HOLDEM_CARDS; c++)
        fprintf(f, "%s%#llxull,", c % 4 ? " " : "\n    ", (unsigned long long)gen_card_key[c]);
    fprintf(f, "\n};\n\n");
    gen_print_u16(f, "const uint16_t holdem_eval_flush_values_", gen_flush_values, 8192);
    gen_print_u32(f, "const uint32_t holdem_eval_offsets_", all.disp,
                  1u << (HOLDEM_EVAL_HASH_BITS - all.shift));
    gen_print_u16(f, "const uint16_t holdem_eval_rank_values_", all.values, all.size);
    fprintf(f, "const uint32_t holdem_eval_rank_values_size_ = %zu;\n\n", all.size);
    uint16_t disp7[1u << (HOLDEM_EVAL_HASH_BITS - HOLDEM_EVAL_ROW_SHIFT7)];
    for (size_t r = 0; r < sizeof disp7 / sizeof disp7[0]; r++)
        disp7[r] = (uint16_t)seven.disp[r];
    gen_print_u16(f, "const uint16_t holdem_eval_disp7_", disp7, sizeof disp7 / sizeof disp7[0]);
    gen_print_u16(f, "const uint16_t holdem_eval_rank_values7_", seven.values, seven.size);
    fprintf(f, "const uint32_t holdem_eval_rank_values7_size_ = %zu;\n\n", seven.size);
    uint32_t first[HOLDEM_CATEGORIES + 1];
    for (int i = 0; i <= HOLDEM_CATEGORIES; i++)
        first[i] = (uint32_t)eval_category_first[i];
    gen_print_u32(f, "const uint32_t holdem_eval_category_first_", first, HOLDEM_CATEGORIES + 1);
    int rc = 0;
    if (fclose(f) != 0) {
        perror(argv[1]);
        rc = 1;
    }
    free(all.disp);
    free(all.values);
    free(seven.disp);
    free(seven.values);
    return rc;
}
