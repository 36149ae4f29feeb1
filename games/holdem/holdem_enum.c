/*
 * holdem_enum -- builds the card-by-card state machine of holdem_enum.h.
 *
 * Three steps:
 *   1. Explore: from the empty hand, level by level, every state's 52 successors. A state is a
 *      128-bit key (rank counts, cards so far, each suit's rank set or "dead"); a per-level
 *      open-addressing map gives each new key a raw id. A successor that no set of distinct
 *      cards can produce (a fifth copy of a rank, a card already in a live suit's set, rank
 *      copies that do not fit the dead suits) is marked impossible. A six-card state's entries
 *      are the values of the seven cards: the flush of the live suit's set if one is left,
 *      otherwise the evaluator's rank-only value of the rank counts (enum_key_value()).
 *   2. Merge, bottom-up: two six-card states with the same 52 values are one state; then two
 *      five-card states whose successors are the same merged states are one, and so on up.
 *   3. Lay out: the merged states level after level, each level in the order the exploration
 *      (cards in increasing order) first reached them; entries become row offsets (state * 52),
 *      impossible ones 0 (the root row: still inside the table). Six-card rows go to a uint16
 *      value table: half the bytes of the level the enumeration visits most (18 M times).
 */
#include "holdem_enum.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "holdem_eval.h"

#define ENUM_NONE UINT32_MAX /* an impossible successor, while building */
#define ENUM_LEVEL_SHIFT 39  /* key.lo: 13 rank counts of 3 bits, then the card count */
#define ENUM_LIVE 0x8000u    /* key.hi: 16 bits per suit, the live flag and its rank set */

typedef struct {
    uint64_t lo, hi;
} enum_key_t;

/* An open-addressing map from key to uint32, or from a row of 52 entries to its first id. */
typedef struct {
    enum_key_t *keys;
    uint32_t *vals; /* ENUM_NONE = free slot */
    size_t mask;
    size_t n;
} enum_map_t;

/* Growable arrays of the exploration: keys and 52-entry rows, by raw id. */
typedef struct {
    enum_key_t *keys;
    uint32_t *rows;
    size_t n, cap;
} enum_raw_t;

static uint64_t enum_mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    return x;
}

static uint64_t enum_key_hash(enum_key_t k)
{
    return enum_mix(k.lo * 0xff51afd7ed558ccdull ^ enum_mix(k.hi));
}

static int enum_map_init(enum_map_t *m, size_t cap)
{
    m->keys = malloc(cap * sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    if (m->keys == NULL || m->vals == NULL) {
        free(m->keys);
        free(m->vals);
        return -ENOMEM;
    }
    memset(m->vals, 0xff, cap * sizeof *m->vals);
    m->mask = cap - 1;
    m->n = 0;
    return 0;
}

static void enum_map_free(enum_map_t *m)
{
    free(m->keys);
    free(m->vals);
}

/*
 * The slot of key in m: either where it is (vals != ENUM_NONE) or the free slot where it
 * belongs. The map is kept at most half full, so a free slot always exists.
 */
static size_t enum_map_slot(const enum_map_t *m, enum_key_t k)
{
    size_t i = (size_t)enum_key_hash(k) & m->mask;
    while (m->vals[i] != ENUM_NONE && (m->keys[i].lo != k.lo || m->keys[i].hi != k.hi))
        i = (i + 1) & m->mask;
    return i;
}

/* Doubles m's capacity. Returns 0 or -ENOMEM (m unchanged). */
static int enum_map_grow(enum_map_t *m)
{
    enum_map_t bigger;
    if (enum_map_init(&bigger, (m->mask + 1) * 2) < 0)
        return -ENOMEM;
    for (size_t i = 0; i <= m->mask; i++) {
        if (m->vals[i] == ENUM_NONE)
            continue;
        size_t j = enum_map_slot(&bigger, m->keys[i]);
        bigger.keys[j] = m->keys[i];
        bigger.vals[j] = m->vals[i];
    }
    bigger.n = m->n;
    enum_map_free(m);
    *m = bigger;
    return 0;
}

static int enum_raw_push(enum_raw_t *raw, enum_key_t k)
{
    if (raw->n == raw->cap) {
        size_t cap = raw->cap ? raw->cap * 2 : 4096;
        enum_key_t *keys = realloc(raw->keys, cap * sizeof *keys);
        if (keys == NULL)
            return -ENOMEM;
        raw->keys = keys;
        uint32_t *rows = realloc(raw->rows, cap * HOLDEM_CARDS * sizeof *rows);
        if (rows == NULL)
            return -ENOMEM;
        raw->rows = rows;
        raw->cap = cap;
    }
    raw->keys[raw->n++] = k;
    return 0;
}

static enum_key_t enum_key_root(void)
{
    enum_key_t k = {0, 0};
    for (int s = 0; s < 4; s++)
        k.hi |= (uint64_t)ENUM_LIVE << (16 * s);
    return k;
}

static int enum_key_level(enum_key_t k)
{
    return (int)(k.lo >> ENUM_LEVEL_SHIFT) & 7;
}

/*
 * The key after adding card to in: the rank count and the card count go up, the card joins
 * its suit's set if the suit is live, and every suit that can no longer reach five cards with
 * the cards still to come dies. Returns 0, or -1 for a fifth copy of a rank or a card already
 * in its live suit's set.
 */
static int enum_key_add(enum_key_t in, int card, enum_key_t *out)
{
    int r = card >> 2, s = card & 3;
    if (((in.lo >> (3 * r)) & 7) >= 4)
        return -1;
    uint64_t hi = in.hi;
    unsigned lane = (unsigned)(hi >> (16 * s)) & 0xffffu;
    if (lane & ENUM_LIVE) {
        if (lane & (1u << r))
            return -1;
        hi |= (uint64_t)1 << (16 * s + r);
    }
    out->lo = in.lo + ((uint64_t)1 << (3 * r)) + ((uint64_t)1 << ENUM_LEVEL_SHIFT);
    int left = 7 - enum_key_level(*out);
    out->hi = 0;
    for (int t = 0; t < 4; t++) {
        unsigned l = (unsigned)(hi >> (16 * t)) & 0xffffu;
        if ((l & ENUM_LIVE) && __builtin_popcount(l & 0x1fffu) + left >= 5)
            out->hi |= (uint64_t)l << (16 * t);
    }
    return 0;
}

/*
 * Places the copies of ranks that are not in a live suit's set (copies[0..n), each a rank) into
 * dead suits: at most one copy of a rank per suit and at most cap cards per dead suit.
 */
static int enum_place(const int *copies, int n, int i, const int *dead, int ndead, int cap,
                      int *load, unsigned *ranks, uint8_t *cards)
{
    if (i == n)
        return 0;
    int r = copies[i];
    for (int d = 0; d < ndead; d++) {
        int s = dead[d];
        if (load[s] >= cap || (ranks[s] & (1u << r)))
            continue;
        load[s]++;
        ranks[s] |= 1u << r;
        cards[i] = (uint8_t)(r * 4 + s);
        if (enum_place(copies, n, i + 1, dead, ndead, cap, load, ranks, cards) == 0)
            return 0;
        load[s]--;
        ranks[s] &= ~(1u << r);
    }
    return -1;
}

/*
 * A hand of distinct cards whose key is k, into cards (up to 7). A dead suit of a k-card key
 * holds at most k - 3 cards (count + 7 - k < 5). Returns the card count, or -1 when no such
 * hand exists.
 */
static int enum_key_realize(enum_key_t k, uint8_t *cards)
{
    int level = enum_key_level(k), n = 0, ncopies = 0, ndead = 0;
    int copies[7], dead[4], load[4] = {0};
    unsigned ranks[4] = {0};
    for (int s = 0; s < 4; s++) {
        unsigned l = (unsigned)(k.hi >> (16 * s)) & 0xffffu;
        if (!(l & ENUM_LIVE)) {
            dead[ndead++] = s;
            continue;
        }
        for (int r = 0; r < 13; r++)
            if (l & (1u << r))
                cards[n++] = (uint8_t)(r * 4 + s);
    }
    for (int r = 0; r < 13; r++) {
        int c = (int)(k.lo >> (3 * r)) & 7;
        for (int s = 0; s < 4; s++)
            c -= (int)((k.hi >> (16 * s + 15)) & (k.hi >> (16 * s + r)) & 1);
        if (c < 0 || ncopies + c > 7)
            return -1;
        while (c-- > 0)
            copies[ncopies++] = r;
    }
    if (n + ncopies != level)
        return -1;
    if (enum_place(copies, ncopies, 0, dead, ndead, level - 3, load, ranks, cards + n) < 0)
        return -1;
    return level;
}

/*
 * The value of a seven-card key. With seven cards a live suit holds five or more, and then the
 * flush (or straight flush) of its rank set is the hand's value: the two other cards cannot
 * make four of a kind or a full house with it. Otherwise the value depends on the ranks alone
 * and comes from the evaluator's seven-card rank table (holdem_eval.h), whose hash part of a
 * card's key depends on its rank only.
 */
static uint32_t enum_key_value(enum_key_t k)
{
    for (int s = 0; s < 4; s++) {
        unsigned l = (unsigned)(k.hi >> (16 * s)) & 0xffffu;
        if (l & ENUM_LIVE)
            return holdem_eval_flush_values_[l & 0x1fffu];
    }
    uint64_t key = HOLDEM_EVAL_EMPTY_KEY;
    for (int r = 0; r < 13; r++)
        for (int n = (int)(k.lo >> (3 * r)) & 7; n > 0; n--)
            key += holdem_eval_card_keys_[r * 4 + n - 1];
    return holdem_eval_rank_value7_(key);
}

/*
 * Step 1: every state reachable from the empty hand, with its raw row: the raw ids of its
 * successors (ENUM_NONE when impossible) or, for six cards, the seven cards' values (0 when
 * impossible). level_first[k] is the first raw id of level k (level_first[7] = total).
 * Returns 0 or -ENOMEM.
 */
static int enum_explore(enum_raw_t *raw, uint32_t level_first[8])
{
    enum_map_t map;
    if (enum_map_init(&map, 1u << 16) < 0)
        return -ENOMEM;
    if (enum_raw_push(raw, enum_key_root()) < 0)
        goto fail;
    level_first[0] = 0;
    for (int level = 0; level < 6; level++) {
        uint32_t end = (uint32_t)raw->n;
        level_first[level + 1] = end;
        memset(map.vals, 0xff, (map.mask + 1) * sizeof *map.vals);
        map.n = 0;
        for (uint32_t id = level_first[level]; id < end; id++) {
            for (int c = 0; c < HOLDEM_CARDS; c++) {
                enum_key_t k;
                uint32_t next = ENUM_NONE;
                if (enum_key_add(raw->keys[id], c, &k) == 0) {
                    size_t slot = enum_map_slot(&map, k);
                    if (map.vals[slot] == ENUM_NONE) {
                        uint8_t cards[7];
                        /* ENUM_NONE - 1 marks a key no distinct cards produce */
                        uint32_t v = ENUM_NONE - 1;
                        if (enum_key_realize(k, cards) >= 0) {
                            v = (uint32_t)raw->n;
                            if (enum_raw_push(raw, k) < 0)
                                goto fail;
                        }
                        map.keys[slot] = k;
                        map.vals[slot] = v;
                        if (++map.n * 2 > map.mask + 1 && enum_map_grow(&map) < 0)
                            goto fail;
                        next = v;
                    } else {
                        next = map.vals[slot];
                    }
                    if (next == ENUM_NONE - 1)
                        next = ENUM_NONE;
                }
                raw->rows[(size_t)id * HOLDEM_CARDS + c] = next;
            }
        }
    }
    level_first[7] = (uint32_t)raw->n;
    for (uint32_t id = level_first[6]; id < level_first[7]; id++) {
        for (int c = 0; c < HOLDEM_CARDS; c++) {
            enum_key_t k;
            raw->rows[(size_t)id * HOLDEM_CARDS + c] =
                enum_key_add(raw->keys[id], c, &k) == 0 ? enum_key_value(k) : 0;
        }
    }
    enum_map_free(&map);
    return 0;
fail:
    enum_map_free(&map);
    return -ENOMEM;
}

static uint64_t enum_row_hash(const uint32_t *row)
{
    uint64_t h = 0x243f6a8885a308d3ull;
    for (int c = 0; c < HOLDEM_CARDS; c++)
        h = enum_mix(h ^ row[c]) + (uint64_t)c;
    return h;
}

/*
 * Step 2, one level: the raw rows of level [first, end) already name their successors by
 * class; gives each raw id the class of its row (the raw id of the first row equal to it) in
 * cls. Returns the number of classes, or -ENOMEM.
 */
static long enum_merge_level(const enum_raw_t *raw, uint32_t first, uint32_t end, uint32_t *cls)
{
    size_t cap = 1024;
    while (cap < 2 * (size_t)(end - first))
        cap *= 2;
    uint32_t *slots = malloc(cap * sizeof *slots);
    if (slots == NULL)
        return -ENOMEM;
    memset(slots, 0xff, cap * sizeof *slots);
    long classes = 0;
    for (uint32_t id = first; id < end; id++) {
        const uint32_t *row = raw->rows + (size_t)id * HOLDEM_CARDS;
        size_t i = (size_t)enum_row_hash(row) & (cap - 1);
        while (slots[i] != ENUM_NONE && memcmp(raw->rows + (size_t)slots[i] * HOLDEM_CARDS, row,
                                               HOLDEM_CARDS * sizeof *row) != 0)
            i = (i + 1) & (cap - 1);
        if (slots[i] == ENUM_NONE) {
            slots[i] = id;
            classes++;
        }
        cls[id] = slots[i];
    }
    free(slots);
    return classes;
}

/* Allocates the final table, on huge pages where the kernel gives them (fewer TLB misses). */
static uint32_t *enum_table_alloc(size_t bytes, void **mem, size_t *mem_size)
{
    size_t huge = (size_t)2 << 20;
    size_t size = (bytes + huge - 1) / huge * huge;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, size, MADV_HUGEPAGE);
#endif
    *mem = p;
    *mem_size = size;
    return p;
}

holdem_enum_t *holdem_enum_create(void)
{
    enum_raw_t raw = {0};
    uint32_t level_first[8], *cls = NULL, *final = NULL;
    holdem_enum_t *e = calloc(1, sizeof *e);
    if (e == NULL)
        goto fail_alloc;
    if (enum_explore(&raw, level_first) < 0)
        goto fail_explore;
    uint32_t nraw = (uint32_t)raw.n;
    cls = malloc((size_t)nraw * sizeof *cls);
    final = malloc((size_t)nraw * sizeof *final);
    if (cls == NULL || final == NULL)
        goto fail_merge;

    /* Step 2: merge bottom-up. Rows of level 0..5 are rewritten to name their successors'
     * classes (ENUM_NONE stays) before their own level is merged. */
    for (int level = 6; level >= 0; level--) {
        uint32_t first = level_first[level], end = level_first[level + 1];
        if (level < 6) {
            for (size_t i = (size_t)first * HOLDEM_CARDS; i < (size_t)end * HOLDEM_CARDS; i++)
                if (raw.rows[i] != ENUM_NONE)
                    raw.rows[i] = cls[raw.rows[i]];
        }
        if (enum_merge_level(&raw, first, end, cls) < 0)
            goto fail_merge;
    }

    /* Step 3: number the classes (each named by its first raw id) in raw order, which is
     * level by level and, within a level, the exploration's order. States of 0..5 cards get
     * rows of the uint32 table, six-card states rows of the uint16 value table (numbered from
     * 0 again). */
    uint32_t states = 0, states6 = 0;
    for (uint32_t id = 0; id < nraw; id++)
        if (cls[id] == id)
            final[id] = id < level_first[6] ? states++ : states6++;
    /* A repeated card can send a hand back to the root mid-way, so that the state passed to
     * holdem_enum_value() is a row of the uint32 table: the value table is padded (with 0) to
     * at least as many entries, so that such a read stays inside it. */
    size_t entries = (size_t)states * HOLDEM_CARDS, entries6 = (size_t)states6 * HOLDEM_CARDS;
    if (entries6 < entries)
        entries6 = entries;
    size_t bytes = entries * sizeof(uint32_t) + entries6 * sizeof(uint16_t);
    uint32_t *table = enum_table_alloc(bytes, &e->mem_, &e->mem_size_);
    if (table == NULL)
        goto fail_merge;
    uint16_t *values = (uint16_t *)(table + entries);
    for (uint32_t id = 0; id < nraw; id++) {
        if (cls[id] != id)
            continue;
        const uint32_t *row = raw.rows + (size_t)id * HOLDEM_CARDS;
        if (id >= level_first[6]) {
            uint16_t *out = values + (size_t) final[id] * HOLDEM_CARDS;
            for (int c = 0; c < HOLDEM_CARDS; c++)
                out[c] = (uint16_t)row[c];
            continue;
        }
        uint32_t *out = table + (size_t) final[id] * HOLDEM_CARDS;
        for (int c = 0; c < HOLDEM_CARDS; c++)
            out[c] = row[c] == ENUM_NONE ? 0 : final[row[c]] * HOLDEM_CARDS;
    }
    e->table_ = table;
    e->values_ = values;
    e->entries_ = entries;
    e->entries6_ = entries6;
    e->states_ = states + states6;
    e->raw_states_ = nraw;
    free(cls);
    free(final);
    free(raw.keys);
    free(raw.rows);
    return e;

fail_merge:
    free(cls);
    free(final);
fail_explore:
    free(raw.keys);
    free(raw.rows);
    free(e);
fail_alloc:
    return NULL;
}

void holdem_enum_destroy(holdem_enum_t *e)
{
    if (e == NULL)
        return;
    munmap(e->mem_, e->mem_size_);
    free(e);
}
