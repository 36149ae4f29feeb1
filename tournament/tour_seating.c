/*
 * tour_seating -- initial draw, balancing and breaking of tournament tables (see
 * tour_seating.h and docs/tournaments.md, "Seating").
 */
#include "tour_seating.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

uint64_t tour_rng_splitmix64(void *state)
{
    uint64_t *s = state;
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t tour_rng_below(tour_rng_fn rng, void *arg, uint64_t n)
{
    /* Values below 2^64 mod n would make the low residues likelier: drawn again. */
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = rng(arg);
        if (x >= threshold)
            return x % n;
    }
}

tour_seating_rules_t tour_seating_rules_default(void)
{
    return (tour_seating_rules_t){.max_difference = 1, .prefer_fewest_moves = true};
}

uint32_t tour_seating_tables_for(uint32_t entrants, uint32_t seats)
{
    if (seats == 0)
        return 0;
    return (uint32_t)(((uint64_t)entrants + seats - 1) / seats);
}

uint32_t tour_table_count(const tour_table_t *t)
{
    uint32_t c = 0;
    for (uint32_t s = 0; s < t->seats; s++)
        c += t->seat[s].player != 0;
    return c;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

int tour_seating_draw(const uint64_t *players, uint32_t n, uint32_t seats, uint32_t first_id,
                      tour_rng_fn rng, void *rng_arg, tour_table_t *tables, size_t ntables)
{
    if (n == 0 || seats < TOUR_MIN_SEATS || seats > TOUR_MAX_SEATS || first_id == 0)
        return -EINVAL;
    uint32_t nt = tour_seating_tables_for(n, seats);
    if (ntables < nt || (uint64_t)first_id + nt - 1 > UINT32_MAX)
        return -EINVAL;
    uint64_t *p = xmalloc(n * sizeof *p);
    memcpy(p, players, n * sizeof *p);
    qsort(p, n, sizeof *p, u64_cmp);
    for (uint32_t i = 0; i < n; i++)
        if (p[i] == 0 || (i > 0 && p[i] == p[i - 1])) {
            free(p);
            return -EINVAL;
        }
    /* Shuffle the players (Fisher-Yates from the sorted list: the result depends on the
     * generator only, not on the caller's order). */
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = (uint32_t)tour_rng_below(rng, rng_arg, (uint64_t)i + 1);
        uint64_t x = p[i];
        p[i] = p[j];
        p[j] = x;
    }
    uint32_t base = n / nt, extra = n % nt, next = 0;
    for (uint32_t t = 0; t < nt; t++) {
        tour_table_t *tb = &tables[t];
        memset(tb, 0, sizeof *tb);
        tb->id = first_id + t;
        tb->seats = seats;
        tb->sb = tb->bb = -1;
        tb->between_hands = true;
        uint32_t order[TOUR_MAX_SEATS];
        for (uint32_t s = 0; s < seats; s++)
            order[s] = s;
        for (uint32_t s = seats - 1; s > 0; s--) {
            uint32_t j = (uint32_t)tour_rng_below(rng, rng_arg, (uint64_t)s + 1);
            uint32_t x = order[s];
            order[s] = order[j];
            order[j] = x;
        }
        uint32_t size = base + (t < extra ? 1 : 0);
        for (uint32_t k = 0; k < size; k++)
            tb->seat[order[k]].player = p[next++];
    }
    free(p);
    return 0;
}

/* Clockwise distance from seat a to seat b. */
static uint32_t dist(const tour_table_t *t, int a, int b)
{
    return (uint32_t)((b - a + (int)t->seats) % (int)t->seats);
}

/* May a player arriving now take seat s? It must be empty and not the next hand's small
 * blind seat (the last hand's big blind seat, empty when that player left). */
static bool seat_allowed(const tour_table_t *t, uint32_t s)
{
    return t->seat[s].player == 0 && (t->bb < 0 || s != (uint32_t)t->bb);
}

static uint32_t allowed_count(const tour_table_t *t)
{
    uint32_t c = 0;
    for (uint32_t s = 0; s < t->seats; s++)
        c += seat_allowed(t, s);
    return c;
}

/* Whether seat s lies strictly between the next hand's button (seat sb) and small blind
 * (seat bb), clockwise: a player seated there waits for the button to pass. */
static bool waits_for_button(const tour_table_t *t, uint32_t s)
{
    if (t->sb < 0 || t->bb < 0)
        return false;
    uint32_t d = dist(t, t->sb, (int)s);
    return d > 0 && d < dist(t, t->sb, t->bb);
}

/* The worst seat for a balanced-in player: the first allowed seat clockwise after bb (the big
 * blind reaches it first); before any hand, the lowest allowed seat. -1 when none. */
static int worst_seat(const tour_table_t *t)
{
    int from = t->bb < 0 ? (int)t->seats - 1 : t->bb;
    for (uint32_t k = 1; k <= t->seats; k++) {
        uint32_t s = (uint32_t)(from + (int)k) % t->seats;
        if (seat_allowed(t, s))
            return (int)s;
    }
    return -1;
}

/* The donor's player to move: in clockwise order from the seat after bb (the next big blind
 * first), the first one with the fewest moves (or the very first when !fewest). */
static int donor_seat(const tour_table_t *t, bool fewest)
{
    uint32_t least = UINT32_MAX;
    if (fewest)
        for (uint32_t s = 0; s < t->seats; s++)
            if (t->seat[s].player != 0 && t->seat[s].moves < least)
                least = t->seat[s].moves;
    int from = t->bb < 0 ? (int)t->seats - 1 : t->bb;
    for (uint32_t k = 1; k <= t->seats; k++) {
        uint32_t s = (uint32_t)(from + (int)k) % t->seats;
        if (t->seat[s].player != 0 && (!fewest || t->seat[s].moves == least))
            return (int)s;
    }
    return -1;
}

/* Moves the player at (from, fs) to (to, ts) in the model and records the move. */
static void apply_move(tour_table_t *from, uint32_t fs, tour_table_t *to, uint32_t ts,
                       tour_move_reason_t why, tour_move_t *m)
{
    *m = (tour_move_t){.player = from->seat[fs].player,
                       .from_table = from->id,
                       .from_seat = fs,
                       .to_table = to->id,
                       .to_seat = ts,
                       .reason = why,
                       .wait_for_button = waits_for_button(to, ts)};
    to->seat[ts].player = from->seat[fs].player;
    to->seat[ts].moves = from->seat[fs].moves + 1;
    from->seat[fs] = (tour_seat_t){0, 0};
}

static int check_model(const tour_table_t *tables, size_t n, const tour_seating_rules_t *r)
{
    if (r->max_difference < 1)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        const tour_table_t *t = &tables[i];
        if (t->id == 0 || t->seats < TOUR_MIN_SEATS || t->seats > TOUR_MAX_SEATS || t->sb < -1 ||
            t->sb >= (int)t->seats || t->bb < -1 || t->bb >= (int)t->seats)
            return -EINVAL;
    }
    return 0;
}

/* The plan's working state: the tables, their player counts (kept up to date) and the output. */
typedef struct {
    tour_table_t *t;
    size_t n;
    uint32_t *cnt;
    tour_move_t *out;
    size_t cap;
    size_t nout;
} plan_t;

static void plan_move(plan_t *p, size_t from, uint32_t fs, size_t to, uint32_t ts,
                      tour_move_reason_t why)
{
    apply_move(&p->t[from], fs, &p->t[to], ts, why, &p->out[p->nout++]);
    p->cnt[from]--;
    p->cnt[to]++;
}

/*
 * One table broken if one is due and possible. Due: the players fit in the seats of the open
 * tables but one. The table: the open table between hands with the fewest players, ties to
 * the highest number. Possible: the other open tables have as many allowed seats as it has
 * players (else wait for a hand to end). Each of its players, in random order, goes to the
 * open table with the fewest players that has an allowed seat (ties: lowest number), to a
 * random allowed seat there. Returns 1 when a table was broken, 0 when none is due, 2 when
 * one is due but must wait (no balancing then: players moved now would move again), -ENOSPC
 * when out has no room for all its moves (nothing is moved then).
 */
static int plan_break(plan_t *p, tour_rng_fn rng, void *rng_arg)
{
    uint64_t total = 0, seats = 0;
    size_t open = 0, victim = SIZE_MAX;
    for (size_t i = 0; i < p->n; i++) {
        if (p->cnt[i] == 0)
            continue;
        open++;
        total += p->cnt[i];
        seats += p->t[i].seats;
        if (!p->t[i].between_hands)
            continue;
        if (victim == SIZE_MAX || p->cnt[i] < p->cnt[victim] ||
            (p->cnt[i] == p->cnt[victim] && p->t[i].id > p->t[victim].id))
            victim = i;
    }
    if (open < 2 || victim == SIZE_MAX || total > seats - p->t[victim].seats)
        return 0;
    uint64_t room = 0;
    for (size_t i = 0; i < p->n; i++)
        if (i != victim && p->cnt[i] > 0)
            room += allowed_count(&p->t[i]);
    if (room < p->cnt[victim])
        return 2; /* due, but wait until a hand frees the small blind seats */
    if (p->cap - p->nout < p->cnt[victim])
        return -ENOSPC;
    uint32_t order[TOUR_MAX_SEATS], k = 0;
    tour_table_t *v = &p->t[victim];
    for (uint32_t s = 0; s < v->seats; s++)
        if (v->seat[s].player != 0)
            order[k++] = s;
    for (uint32_t i = k - 1; i > 0; i--) {
        uint32_t j = (uint32_t)tour_rng_below(rng, rng_arg, (uint64_t)i + 1);
        uint32_t x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (uint32_t i = 0; i < k; i++) {
        size_t to = SIZE_MAX;
        for (size_t j = 0; j < p->n; j++) {
            if (j == victim || p->cnt[j] == 0 || allowed_count(&p->t[j]) == 0)
                continue;
            if (to == SIZE_MAX || p->cnt[j] < p->cnt[to] ||
                (p->cnt[j] == p->cnt[to] && p->t[j].id < p->t[to].id))
                to = j;
        }
        /* room >= k guarantees a table; checked anyway */
        if (to == SIZE_MAX)
            return -EINVAL;
        tour_table_t *r = &p->t[to];
        uint32_t pick = (uint32_t)tour_rng_below(rng, rng_arg, allowed_count(r)), ts = 0;
        for (uint32_t s = 0; s < r->seats; s++)
            if (seat_allowed(r, s) && pick-- == 0) {
                ts = s;
                break;
            }
        plan_move(p, victim, order[i], to, ts, TOUR_MOVE_BREAK);
    }
    return 1;
}

/*
 * One balancing move if one is due and possible: the receiver is the open table with the
 * fewest players (ties: lowest number); the donor the table between hands with the most
 * players among those more than max_difference above it (ties: lowest number). Returns 1
 * when a player was moved, 0 when none is, -ENOSPC when out is full.
 */
static int plan_balance(plan_t *p, const tour_seating_rules_t *r)
{
    size_t small = SIZE_MAX, donor = SIZE_MAX;
    for (size_t i = 0; i < p->n; i++) {
        if (p->cnt[i] == 0)
            continue;
        if (small == SIZE_MAX || p->cnt[i] < p->cnt[small] ||
            (p->cnt[i] == p->cnt[small] && p->t[i].id < p->t[small].id))
            small = i;
    }
    if (small == SIZE_MAX)
        return 0;
    for (size_t i = 0; i < p->n; i++) {
        if (!p->t[i].between_hands || p->cnt[i] <= p->cnt[small] + r->max_difference)
            continue;
        if (donor == SIZE_MAX || p->cnt[i] > p->cnt[donor] ||
            (p->cnt[i] == p->cnt[donor] && p->t[i].id < p->t[donor].id))
            donor = i;
    }
    if (donor == SIZE_MAX)
        return 0;
    int ts = worst_seat(&p->t[small]);
    int fs = donor_seat(&p->t[donor], r->prefer_fewest_moves);
    if (ts < 0 || fs < 0) /* not reached: the smaller table has two empty seats or more */
        return 0;
    if (p->nout == p->cap)
        return -ENOSPC;
    plan_move(p, donor, (uint32_t)fs, small, (uint32_t)ts, TOUR_MOVE_BALANCE);
    return 1;
}

int tour_seating_plan(tour_table_t *tables, size_t ntables, const tour_seating_rules_t *rules,
                      tour_rng_fn rng, void *rng_arg, tour_move_t *out, size_t out_cap,
                      size_t *nout)
{
    int rc = check_model(tables, ntables, rules);
    if (rc != 0)
        return rc;
    plan_t p = {.t = tables, .n = ntables, .out = out, .cap = out_cap, .nout = 0};
    p.cnt = xmalloc((ntables ? ntables : 1) * sizeof *p.cnt);
    for (size_t i = 0; i < ntables; i++)
        p.cnt[i] = tour_table_count(&tables[i]);
    /* Each break closes a table and each balancing move lowers the sum of the squared table
     * sizes, so the loop ends. */
    for (;;) {
        rc = plan_break(&p, rng, rng_arg);
        if (rc == 1)
            continue;
        if (rc < 0)
            break;
        if (rc == 2) {
            rc = 0;
            break;
        }
        rc = plan_balance(&p, rules);
        if (rc != 1)
            break;
    }
    free(p.cnt);
    *nout = p.nout;
    return rc < 0 ? rc : 0;
}

bool tour_hand_for_hand(uint32_t remaining, uint32_t paid, uint32_t margin)
{
    return remaining > paid && (uint64_t)remaining <= (uint64_t)paid + margin;
}

bool tour_hand_for_hand_may_deal(const tour_table_t *tables, size_t ntables)
{
    for (size_t i = 0; i < ntables; i++)
        if (!tables[i].between_hands && tour_table_count(&tables[i]) > 0)
            return false;
    return true;
}
