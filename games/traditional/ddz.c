/* ddz -- Dou Dizhu move rules; see ddz.h and docs/rules/doudizhu.md. */
#include "ddz.h"

#include <errno.h>

#define RANK_A 11 /* highest rank a chain may reach */

static const char *const ddz_type_names[DDZ_NTYPES] = {
    "pass",       "solo",          "pair",          "trio",       "trio_solo",
    "trio_pair",  "solo_chain",    "pair_chain",    "trio_chain", "plane_solo",
    "plane_pair", "four_two_solo", "four_two_pair", "bomb",       "rocket",
};

const char *ddz_type_name(int type)
{
    return (type >= 0 && type < DDZ_NTYPES) ? ddz_type_names[type] : "?";
}

static inline shed_counts_t one(int rank, int k)
{
    return (shed_counts_t)k << (4 * rank);
}

/* ---- classifier ------------------------------------------------------------------------- */

static void move_set(ddz_move_t *m, shed_counts_t c, int type, int rank, int len, int n)
{
    m->counts = c;
    m->type = (uint8_t)type;
    m->rank = (uint8_t)rank;
    m->len = (uint8_t)len;
    m->ncards = (uint8_t)n;
}

/*
 * Is ranks [s, s+k) an airplane body of exactly-three cards each, with the rest of `cnt`
 * acceptable as `k` kickers of the given kind (1 = solos, 2 = pairs)? See the kicker rules in
 * docs/rules/doudizhu.md.
 */
static bool plane_fits(const int *cnt, int s, int k, int kind)
{
    for (int r = s; r < s + k; r++)
        if (cnt[r] != 3)
            return false;
    for (int r = 0; r < SHED_NRANKS; r++) {
        if (r >= s && r < s + k)
            continue;
        if (cnt[r] == 0)
            continue;
        if (kind == 2) {
            if (cnt[r] != 2)
                return false;
        } else {
            if (cnt[r] > 3)
                return false;
            if (cnt[r] == 3 && (r == s - 1 || (r == s + k && r <= RANK_A)))
                return false;
        }
    }
    if (kind == 1 && cnt[SHED_RANK_BJ] && cnt[SHED_RANK_RJ])
        return false;
    return true;
}

int ddz_classify(shed_counts_t c, ddz_move_t *out)
{
    int cnt[SHED_NRANKS], hist[9] = {0}, n = 0, lo = -1, hi = -1, distinct = 0;
    int rank_of[9] = {0};
    for (int r = 0; r < SHED_NRANKS; r++) {
        cnt[r] = shed_counts_get(c, r);
        if (cnt[r] > (r >= SHED_RANK_BJ ? 1 : 4))
            return -EINVAL;
        hist[cnt[r]]++;
        rank_of[cnt[r]] = r;
        n += cnt[r];
        if (cnt[r]) {
            if (lo < 0)
                lo = r;
            hi = r;
            distinct++;
        }
    }
    if (n == 0 || n > DDZ_MAX_MOVE_CARDS || (c >> (4 * SHED_NRANKS)) != 0)
        return -EINVAL;
    if (n == 2 && cnt[SHED_RANK_BJ] && cnt[SHED_RANK_RJ]) {
        move_set(out, c, DDZ_ROCKET, SHED_RANK_BJ, 1, n);
        return 0;
    }
    if (n == 4 && hist[4] == 1) {
        move_set(out, c, DDZ_BOMB, rank_of[4], 1, n);
        return 0;
    }
    if (distinct == 1 && n <= 3) {
        move_set(out, c, n == 1 ? DDZ_SOLO : n == 2 ? DDZ_PAIR : DDZ_TRIO, lo, 1, n);
        return 0;
    }
    if (n == 4 && hist[3] == 1) {
        move_set(out, c, DDZ_TRIO_SOLO, rank_of[3], 1, n);
        return 0;
    }
    if (n == 5 && hist[3] == 1 && hist[2] == 1) {
        move_set(out, c, DDZ_TRIO_PAIR, rank_of[3], 1, n);
        return 0;
    }
    if (hi <= RANK_A && hi - lo + 1 == distinct && n % distinct == 0) {
        int unit = n / distinct;
        if (hist[unit] == distinct) {
            if (unit == 1 && distinct >= 5) {
                move_set(out, c, DDZ_SOLO_CHAIN, lo, distinct, n);
                return 0;
            }
            if (unit == 2 && distinct >= 3) {
                move_set(out, c, DDZ_PAIR_CHAIN, lo, distinct, n);
                return 0;
            }
            if (unit == 3 && distinct >= 2) {
                move_set(out, c, DDZ_TRIO_CHAIN, lo, distinct, n);
                return 0;
            }
        }
    }
    if (n == 6 && hist[4] == 1 && !(cnt[SHED_RANK_BJ] && cnt[SHED_RANK_RJ])) {
        move_set(out, c, DDZ_FOUR_TWO_SOLO, rank_of[4], 1, n);
        return 0;
    }
    if (n == 8 && hist[4] == 1 && hist[2] == 2) {
        move_set(out, c, DDZ_FOUR_TWO_PAIR, rank_of[4], 1, n);
        return 0;
    }
    for (int kind = 1; kind <= 2; kind++) {
        int per = 3 + kind;
        if (n % per)
            continue;
        int k = n / per;
        if (k < 2 || (kind == 2 && k > 4))
            continue;
        for (int s = 0; s + k - 1 <= RANK_A; s++) {
            if (plane_fits(cnt, s, k, kind)) {
                move_set(out, c, kind == 1 ? DDZ_PLANE_SOLO : DDZ_PLANE_PAIR, s, k, n);
                return 0;
            }
        }
    }
    return -EINVAL;
}

bool ddz_beats(const ddz_move_t *a, const ddz_move_t *b)
{
    if (a->type == DDZ_PASS)
        return false;
    if (b == NULL || b->type == DDZ_PASS)
        return true;
    if (b->type == DDZ_ROCKET)
        return false;
    if (a->type == DDZ_ROCKET)
        return true;
    if (a->type == DDZ_BOMB)
        return b->type != DDZ_BOMB || a->rank > b->rank;
    if (b->type == DDZ_BOMB)
        return false;
    return a->type == b->type && a->len == b->len && a->rank > b->rank;
}

/* ---- generator -------------------------------------------------------------------------- */

typedef struct {
    ddz_move_t *out;
    ddz_visit_cb visit; /* when set, moves go to visit(ctx, move) instead of out */
    void *ctx;
    size_t cap;
    size_t n;
    bool overflow;
    shed_counts_t hand;
    uint32_t ge[5]; /* ge[u]: mask of the ranks holding at least u cards */
} gen_t;

static inline __attribute__((always_inline)) void emit(gen_t *g, shed_counts_t c, int type,
                                                       int rank, int len, int ncards)
{
    if (__builtin_expect(g->visit != NULL, 0)) {
        if (g->overflow)
            return;
        ddz_move_t m;
        move_set(&m, c, type, rank, len, ncards);
        if (g->visit(g->ctx, &m) != 0)
            g->overflow = true;
        g->n++;
        return;
    }
    if (g->n >= g->cap) {
        g->overflow = true;
        return;
    }
    move_set(&g->out[g->n++], c, type, rank, len, ncards);
}

/*
 * Enumerates multisets of `left` solo kickers over candidate ranks cand[idx..] (each at most
 * cap[i] times, never both jokers) and emits body + kickers for each.
 */
static void gen_solo_wings(gen_t *g, shed_counts_t body, int type, int rank, int len, int ncards,
                           const uint8_t *cand, const uint8_t *cap, int nc, int idx, int left,
                           int room)
{
    if (left == 0) {
        if (shed_counts_get(body, SHED_RANK_BJ) && shed_counts_get(body, SHED_RANK_RJ))
            return;
        emit(g, body, type, rank, len, ncards);
        return;
    }
    if (idx == nc || room < left)
        return;
    if (left == 2) {
        /* the common case (four + two, two-trio airplanes), without recursion */
        for (int i = idx; i < nc; i++) {
            shed_counts_t bi = body + one(cand[i], 1);
            if (cap[i] >= 2)
                emit(g, bi + one(cand[i], 1), type, rank, len, ncards);
            for (int j = i + 1; j < nc; j++) {
                if (cand[i] == SHED_RANK_BJ && cand[j] == SHED_RANK_RJ)
                    continue;
                emit(g, bi + one(cand[j], 1), type, rank, len, ncards);
            }
        }
        return;
    }
    int r = cand[idx], max = cap[idx] < left ? cap[idx] : left;
    for (int k = 0; k <= max; k++)
        gen_solo_wings(g, body + one(r, k), type, rank, len, ncards, cand, cap, nc, idx + 1,
                       left - k, room - cap[idx]);
}

/* Enumerates `left` distinct pair kickers from cand[idx..] and emits body + kickers. */
static void gen_pair_wings(gen_t *g, shed_counts_t body, int type, int rank, int len, int ncards,
                           const uint8_t *cand, int nc, int idx, int left)
{
    if (left == 0) {
        emit(g, body, type, rank, len, ncards);
        return;
    }
    for (int i = idx; i <= nc - left; i++)
        gen_pair_wings(g, body + one(cand[i], 2), type, rank, len, ncards, cand, nc, i + 1,
                       left - 1);
}

/* Mask of the ranks strictly above `min` (min = -1: all). */
static inline uint32_t above(int min)
{
    return min < 0 ? 0xffffu : ~((2u << min) - 1) & 0xffffu;
}

static void gen_singles(gen_t *g, int type, int unit, int min)
{
    uint32_t m = g->ge[unit] & (unit == 1 ? 0x7fffu : 0x1fffu) & above(min);
    while (m) {
        int r = __builtin_ctz(m);
        m &= m - 1;
        emit(g, one(r, unit), type, r, 1, unit);
    }
}

static void gen_trio_kick(gen_t *g, int kind, int min)
{
    uint32_t trios = g->ge[3] & 0x1fffu & above(min);
    while (trios) {
        int r = __builtin_ctz(trios);
        trios &= trios - 1;
        uint32_t k = g->ge[kind] & (kind == 2 ? 0x1fffu : 0x7fffu) & ~(1u << r);
        while (k) {
            int kr = __builtin_ctz(k);
            k &= k - 1;
            emit(g, one(r, 3) + one(kr, kind), kind == 1 ? DDZ_TRIO_SOLO : DDZ_TRIO_PAIR, r, 1,
                 3 + kind);
        }
    }
}

static void gen_chains(gen_t *g, int unit, int minlen, int onlylen, int min)
{
    static const int type_of[4] = {0, DDZ_SOLO_CHAIN, DDZ_PAIR_CHAIN, DDZ_TRIO_CHAIN};
    uint32_t m = g->ge[unit] & 0xfffu, starts = m & above(min);
    int maxlen = DDZ_MAX_MOVE_CARDS / unit;
    while (starts) {
        int s = __builtin_ctz(starts);
        starts &= starts - 1;
        int run = __builtin_ctz(~(m >> s));
        if (run < minlen)
            continue;
        if (run > maxlen)
            run = maxlen;
        shed_counts_t c = 0;
        for (int len = 1; len <= run; len++) {
            c += one(s + len - 1, unit);
            if (len >= minlen && (onlylen == 0 || len == onlylen))
                emit(g, c, type_of[unit], s, len, len * unit);
        }
    }
}

static void gen_planes(gen_t *g, int kind, int onlylen, int min)
{
    int maxk = kind == 1 ? 5 : 4;
    uint32_t m3 = g->ge[3] & 0xfffu, starts = m3 & (m3 >> 1) & above(min);
    while (starts) {
        int s = __builtin_ctz(starts);
        starts &= starts - 1;
        shed_counts_t body = 0;
        for (int k = 1; k <= maxk && s + k - 1 <= RANK_A && (g->ge[3] >> (s + k - 1) & 1); k++) {
            body += one(s + k - 1, 3);
            if (k < 2 || (onlylen && k != onlylen))
                continue;
            uint8_t cand[SHED_NRANKS], cap[SHED_NRANKS];
            int nc = 0, room = 0;
            for (int r = 0; r < SHED_NRANKS; r++) {
                if (r >= s && r < s + k)
                    continue;
                if (kind == 2) {
                    if (r <= SHED_RANK_2 && shed_counts_get(g->hand, r) >= 2)
                        cand[nc++] = (uint8_t)r;
                    continue;
                }
                int c = shed_counts_get(g->hand, r) > 3 ? 3 : shed_counts_get(g->hand, r);
                if (c == 3 && (r == s - 1 || (r == s + k && r <= RANK_A)))
                    c = 2;
                if (c > 0) {
                    cand[nc] = (uint8_t)r;
                    cap[nc++] = (uint8_t)c;
                    room += c;
                }
            }
            if (kind == 1)
                gen_solo_wings(g, body, DDZ_PLANE_SOLO, s, k, 4 * k, cand, cap, nc, 0, k, room);
            else
                gen_pair_wings(g, body, DDZ_PLANE_PAIR, s, k, 5 * k, cand, nc, 0, k);
        }
    }
}

static void gen_four_two(gen_t *g, int kind, int min)
{
    uint32_t quads = g->ge[4] & 0x1fffu & above(min);
    while (quads) {
        int r = __builtin_ctz(quads);
        quads &= quads - 1;
        uint8_t cand[SHED_NRANKS], cap[SHED_NRANKS];
        int nc = 0, room = 0;
        for (int k = 0; k < SHED_NRANKS; k++) {
            if (k == r || shed_counts_get(g->hand, k) < kind || (kind == 2 && k > SHED_RANK_2))
                continue;
            cand[nc] = (uint8_t)k;
            cap[nc] = (uint8_t)(shed_counts_get(g->hand, k) > 2 ? 2 : shed_counts_get(g->hand, k));
            room += cap[nc++];
        }
        if (kind == 1)
            gen_solo_wings(g, one(r, 4), DDZ_FOUR_TWO_SOLO, r, 1, 6, cand, cap, nc, 0, 2, room);
        else
            gen_pair_wings(g, one(r, 4), DDZ_FOUR_TWO_PAIR, r, 1, 8, cand, nc, 0, 2);
    }
}

static void gen_bombs(gen_t *g, int min)
{
    uint32_t quads = g->ge[4] & 0x1fffu & above(min);
    while (quads) {
        int r = __builtin_ctz(quads);
        quads &= quads - 1;
        emit(g, one(r, 4), DDZ_BOMB, r, 1, 4);
    }
}

static void gen_rocket(gen_t *g)
{
    if ((g->ge[1] >> SHED_RANK_BJ & 3) == 3)
        emit(g, one(SHED_RANK_BJ, 1) + one(SHED_RANK_RJ, 1), DDZ_ROCKET, SHED_RANK_BJ, 1, 2);
}

/* Generates the moves of one type above rank `min` (and of length `len` when len != 0). */
static void gen_type(gen_t *g, int type, int len, int min)
{
    switch (type) {
    case DDZ_SOLO:
        gen_singles(g, DDZ_SOLO, 1, min);
        break;
    case DDZ_PAIR:
        gen_singles(g, DDZ_PAIR, 2, min);
        break;
    case DDZ_TRIO:
        gen_singles(g, DDZ_TRIO, 3, min);
        break;
    case DDZ_TRIO_SOLO:
        gen_trio_kick(g, 1, min);
        break;
    case DDZ_TRIO_PAIR:
        gen_trio_kick(g, 2, min);
        break;
    case DDZ_SOLO_CHAIN:
        gen_chains(g, 1, 5, len, min);
        break;
    case DDZ_PAIR_CHAIN:
        gen_chains(g, 2, 3, len, min);
        break;
    case DDZ_TRIO_CHAIN:
        gen_chains(g, 3, 2, len, min);
        break;
    case DDZ_PLANE_SOLO:
        gen_planes(g, 1, len, min);
        break;
    case DDZ_PLANE_PAIR:
        gen_planes(g, 2, len, min);
        break;
    case DDZ_FOUR_TWO_SOLO:
        gen_four_two(g, 1, min);
        break;
    case DDZ_FOUR_TWO_PAIR:
        gen_four_two(g, 2, min);
        break;
    case DDZ_BOMB:
        gen_bombs(g, min);
        break;
    case DDZ_ROCKET:
        gen_rocket(g);
        break;
    default:
        break;
    }
}

/* Gathers bit 4r of v (the other bits zero) into bit r, for r = 0..15. */
static inline uint32_t nibble_mask(uint64_t v)
{
    v = (v | (v >> 3)) & 0x0303030303030303ull;
    v = (v | (v >> 6)) & 0x000f000f000f000full;
    v = (v | (v >> 12)) & 0x000000ff000000ffull;
    v = (v | (v >> 24)) & 0xffffull;
    return (uint32_t)v;
}

/* Runs the generators that apply to `beat` (see ddz_moves_generate). */
static void gen_all(gen_t *g, shed_counts_t hand, const ddz_move_t *beat)
{
    g->hand = hand;
    uint64_t b0 = hand & 0x1111111111111111ull, b1 = (hand >> 1) & 0x1111111111111111ull;
    uint64_t b2 = (hand >> 2) & 0x1111111111111111ull;
    g->ge[0] = 0x7fffu;
    g->ge[1] = nibble_mask(b0 | b1 | b2);
    g->ge[2] = nibble_mask(b1 | b2);
    g->ge[3] = nibble_mask((b0 & b1) | b2);
    g->ge[4] = nibble_mask(b2);
    if (beat == NULL || beat->type == DDZ_PASS) {
        for (int t = DDZ_SOLO; t < DDZ_NTYPES; t++)
            gen_type(g, t, 0, -1);
    } else if (beat->type == DDZ_ROCKET) {
        /* nothing beats the rocket */
    } else if (beat->type == DDZ_BOMB) {
        gen_bombs(g, beat->rank);
        gen_rocket(g);
    } else {
        gen_type(g, beat->type, beat->len, beat->rank);
        gen_bombs(g, -1);
        gen_rocket(g);
    }
}

int ddz_moves_generate(shed_counts_t hand, const ddz_move_t *beat, ddz_move_t *out, size_t cap)
{
    gen_t g = {.out = out, .cap = cap, .n = 0, .overflow = false};
    gen_all(&g, hand, beat);
    return g.overflow ? -ENOSPC : (int)g.n;
}

int ddz_moves_visit(shed_counts_t hand, const ddz_move_t *beat, ddz_visit_cb visit, void *ctx)
{
    gen_t g = {.visit = visit, .ctx = ctx, .n = 0, .overflow = false};
    gen_all(&g, hand, beat);
    return g.overflow ? -ECANCELED : (int)g.n;
}
