/* Unit tests for tournament/tour_seating.h: the initial draw, balancing, breaking tables and
 * the final table; a simulation of thousands of random tournaments checks the invariants of
 * every plan (docs/tournaments.md, "Seating", "Balancing", "Breaking tables"). */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tour_seating.h"

/* An assertion for hot loops: check's ck_assert writes to its pipe on every call (fork mode),
 * this one only on failure. */
#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);                             \
    } while (0)

static uint64_t seed = 0x5ea7u;

static uint64_t rnd(uint64_t n)
{
    return tour_rng_below(tour_rng_splitmix64, &seed, n);
}

/* A table with the given players (0 = empty) and blinds. */
static tour_table_t table(uint32_t id, uint32_t seats, int sb, int bb, const uint64_t *players)
{
    tour_table_t t = {.id = id, .seats = seats, .sb = sb, .bb = bb, .between_hands = true};
    for (uint32_t s = 0; s < seats; s++)
        t.seat[s].player = players[s];
    return t;
}

/* Field by field (struct padding is not compared). */
static bool same_tables(const tour_table_t *a, const tour_table_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].id != b[i].id || a[i].seats != b[i].seats || a[i].sb != b[i].sb ||
            a[i].bb != b[i].bb || a[i].between_hands != b[i].between_hands)
            return false;
        for (uint32_t s = 0; s < a[i].seats; s++)
            if (a[i].seat[s].player != b[i].seat[s].player ||
                a[i].seat[s].moves != b[i].seat[s].moves)
                return false;
    }
    return true;
}

static bool same_moves(const tour_move_t *a, const tour_move_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].player != b[i].player || a[i].from_table != b[i].from_table ||
            a[i].from_seat != b[i].from_seat || a[i].to_table != b[i].to_table ||
            a[i].to_seat != b[i].to_seat || a[i].reason != b[i].reason ||
            a[i].wait_for_button != b[i].wait_for_button)
            return false;
    return true;
}

START_TEST(test_tour_seating_draw_sizes_within_one_and_everyone_once)
{
    static uint64_t players[1000];
    static tour_table_t t[500];
    for (int k = 0; k < 300; k++) {
        uint32_t n = 1 + (uint32_t)rnd(1000), seats = 2 + (uint32_t)rnd(9);
        for (uint32_t i = 0; i < n; i++)
            players[i] = 1 + i * 7;
        uint32_t nt = tour_seating_tables_for(n, seats);
        uint64_t s = 42 + (uint64_t)k;
        ck_assert_int_eq(tour_seating_draw(players, n, seats, 1, tour_rng_splitmix64, &s, t, 500),
                         0);
        uint32_t lo = UINT32_MAX, hi = 0, total = 0;
        static uint8_t seen[7000];
        memset(seen, 0, sizeof seen);
        for (uint32_t i = 0; i < nt; i++) {
            uint32_t c = tour_table_count(&t[i]);
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
            total += c;
            ck_assert_uint_eq(t[i].id, 1 + i);
            ck_assert_int_eq(t[i].bb, -1);
            for (uint32_t j = 0; j < seats; j++)
                if (t[i].seat[j].player != 0) {
                    ck_assert(!seen[t[i].seat[j].player]);
                    seen[t[i].seat[j].player] = 1;
                }
        }
        ck_assert_uint_eq(total, n);
        ck_assert(hi - lo <= 1);
    }
    uint64_t dup[3] = {5, 6, 5}, s = 1;
    ck_assert_int_eq(tour_seating_draw(dup, 3, 9, 1, tour_rng_splitmix64, &s, t, 200), -EINVAL);
    ck_assert_int_eq(tour_seating_draw(players, 3, 11, 1, tour_rng_splitmix64, &s, t, 200),
                     -EINVAL);
}
END_TEST

START_TEST(test_tour_seating_draw_is_a_function_of_the_seed)
{
    uint64_t players[50];
    for (int i = 0; i < 50; i++)
        players[i] = 100 + (uint64_t)i;
    tour_table_t a[6], b[6], c[6];
    uint64_t s1 = 9, s2 = 9, s3 = 10;
    tour_seating_draw(players, 50, 9, 1, tour_rng_splitmix64, &s1, a, 6);
    tour_seating_draw(players, 50, 9, 1, tour_rng_splitmix64, &s2, b, 6);
    tour_seating_draw(players, 50, 9, 1, tour_rng_splitmix64, &s3, c, 6);
    ck_assert(same_tables(a, b, 6));
    ck_assert(!same_tables(a, c, 6));
}
END_TEST

/* The next big blind of the donor moves to the worst seat of the short table: the first empty
 * seat after its big blind (it will be the big blind next), never the small blind seat. */
START_TEST(test_tour_seating_balance_moves_next_big_blind_to_worst_seat)
{
    uint64_t full[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    /* Table 2: last hand sb = seat 3, bb = seat 4 (empty: that player busted), seats 4, 6, 7
     * empty; seat 4 is the next small blind seat and refused; 6 is the first after bb. */
    uint64_t shortp[9] = {11, 12, 13, 14, 0, 16, 0, 0, 18};
    shortp[4] = 0;
    tour_table_t t[2] = {table(1, 9, 2, 3, full), table(2, 9, 3, 4, shortp)};
    /* counts 9 and 6 -> one move (8 and 7) */
    tour_seating_rules_t r = tour_seating_rules_default();
    tour_move_t m[8];
    size_t n;
    uint64_t s = 1;
    ck_assert_int_eq(tour_seating_plan(t, 2, &r, tour_rng_splitmix64, &s, m, 8, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(m[0].player, 5); /* seat 4 of table 1: first after its bb (seat 3) */
    ck_assert_uint_eq(m[0].from_table, 1);
    ck_assert_uint_eq(m[0].from_seat, 4);
    ck_assert_uint_eq(m[0].to_table, 2);
    ck_assert_uint_eq(m[0].to_seat, 6); /* seat 5 holds 16; 4 is the small blind seat */
    ck_assert(!m[0].wait_for_button);
    ck_assert_int_eq(m[0].reason, TOUR_MOVE_BALANCE);
    ck_assert_uint_eq(t[1].seat[6].player, 5);
    ck_assert_uint_eq(t[1].seat[6].moves, 1);
    ck_assert_uint_eq(t[0].seat[4].player, 0);
}
END_TEST

/* With prefer_fewest_moves the donor gives, in big-blind order, the first player among those
 * moved least; without, strictly the next big blind. */
START_TEST(test_tour_seating_balance_prefers_players_moved_least)
{
    uint64_t full[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    uint64_t shortp[9] = {11, 12, 13, 14, 15, 16, 17, 0, 0};
    tour_table_t t[2] = {table(1, 9, 2, 3, full), table(2, 9, 2, 3, shortp)};
    t[0].seat[4].moves = 2; /* the next big blind has moved twice */
    t[0].seat[5].moves = 1;
    /* seats 6.. have 0 moves: seat 6 (player 7) goes */
    tour_table_t copy[2], untouched[2];
    memcpy(copy, t, sizeof t);
    memcpy(untouched, t, sizeof t);
    /* No room for the move: -ENOSPC, nothing moved. */
    {
        tour_seating_rules_t r0 = tour_seating_rules_default();
        tour_move_t none[1];
        size_t n0 = 99;
        uint64_t s0 = 1;
        ck_assert_int_eq(tour_seating_plan(t, 2, &r0, tour_rng_splitmix64, &s0, none, 0, &n0),
                         -ENOSPC);
        ck_assert_uint_eq(n0, 0);
        ck_assert(same_tables(t, untouched, 2));
    }
    tour_seating_rules_t r = tour_seating_rules_default();
    tour_move_t m[8];
    size_t n;
    uint64_t s = 1;
    /* 9 and 7: differ by 2 -> one move */
    ck_assert_int_eq(tour_seating_plan(t, 2, &r, tour_rng_splitmix64, &s, m, 8, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(m[0].player, 7);
    ck_assert_uint_eq(t[1].seat[7].moves, 1);
    r.prefer_fewest_moves = false;
    ck_assert_int_eq(tour_seating_plan(copy, 2, &r, tour_rng_splitmix64, &s, m, 8, &n), 0);
    ck_assert_uint_eq(m[0].player, 5);
    ck_assert_uint_eq(copy[1].seat[7].moves, 3);
}
END_TEST

/* A table in a hand never gives a player; once its hand ends it does. */
START_TEST(test_tour_seating_no_move_from_a_table_in_a_hand)
{
    uint64_t full[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    uint64_t shortp[9] = {11, 12, 13, 14, 15, 16, 0, 0, 0};
    tour_table_t t[2] = {table(1, 9, 0, 1, full), table(2, 9, 0, 1, shortp)};
    t[0].between_hands = false;
    tour_seating_rules_t r = tour_seating_rules_default();
    tour_move_t m[8];
    size_t n;
    uint64_t s = 1;
    ck_assert_int_eq(tour_seating_plan(t, 2, &r, tour_rng_splitmix64, &s, m, 8, &n), 0);
    ck_assert_uint_eq(n, 0);
    t[0].between_hands = true;
    ck_assert_int_eq(tour_seating_plan(t, 2, &r, tour_rng_splitmix64, &s, m, 8, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(m[0].player, 3);
    ck_assert_uint_eq(m[0].to_seat, 6); /* the first empty seat after its bb (seat 1) */
    /* out too small: -ENOSPC with the moves that fit applied */
    ck_assert_int_eq(tour_seating_plan(t, 2, &r, tour_rng_splitmix64, &s, m, 0, &n), 0);
}
END_TEST

/* Nine players left on two tables: the smaller table (between hands) breaks into the other;
 * a player whose new seat lies between the button and the small blind waits for the button. */
START_TEST(test_tour_seating_final_table_from_two)
{
    uint64_t a[9] = {1, 0, 3, 0, 5, 0, 7, 0, 9};
    uint64_t b[9] = {0, 12, 0, 14, 0, 16, 0, 18, 0};
    tour_table_t t[2] = {table(1, 9, 0, 2, a), table(2, 9, 1, 3, b)};
    tour_seating_rules_t r = tour_seating_rules_default();
    tour_move_t m[8];
    size_t n;
    uint64_t s = 3;
    ck_assert_int_eq(tour_seating_plan(t, 2, &r, tour_rng_splitmix64, &s, m, 8, &n), 0);
    ck_assert_uint_eq(n, 4); /* table 2 (4 players) breaks into table 1 */
    ck_assert_uint_eq(tour_table_count(&t[0]), 9);
    ck_assert_uint_eq(tour_table_count(&t[1]), 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(m[i].reason, TOUR_MOVE_BREAK);
        ck_assert_uint_eq(m[i].to_table, 1);
        /* sb 0, bb 2: seat 1 is between the next button (0) and small blind (2) */
        ck_assert(m[i].wait_for_button == (m[i].to_seat == 1));
    }
    /* Table 1's bb seat empty (its player busted): the break waits, for want of seats. */
    uint64_t c[9] = {1, 2, 0, 4, 5, 6, 7, 8, 0};
    uint64_t d[9] = {11, 0, 0, 0, 0, 0, 0, 0, 0};
    tour_table_t u[2] = {table(1, 9, 1, 2, c), table(2, 9, -1, -1, d)};
    ck_assert_int_eq(tour_seating_plan(u, 2, &r, tour_rng_splitmix64, &s, m, 8, &n), 0);
    ck_assert_uint_eq(n, 1); /* seat 8 is allowed, seat 2 (next small blind) is not */
    ck_assert_uint_eq(m[0].to_seat, 8);
    d[1] = 12;
    tour_table_t v[2] = {table(1, 9, 1, 2, c), table(2, 9, -1, -1, d)};
    ck_assert_int_eq(tour_seating_plan(v, 2, &r, tour_rng_splitmix64, &s, m, 8, &n), 0);
    ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_tour_seating_bad_model_refused)
{
    uint64_t a[9] = {1, 2, 3, 0, 0, 0, 0, 0, 0};
    tour_table_t t[1] = {table(1, 9, 0, 9, a)};
    tour_seating_rules_t r = tour_seating_rules_default();
    tour_move_t m[8];
    size_t n;
    uint64_t s = 3;
    ck_assert_int_eq(tour_seating_plan(t, 1, &r, tour_rng_splitmix64, &s, m, 8, &n), -EINVAL);
    t[0].bb = 1;
    t[0].seats = 11;
    ck_assert_int_eq(tour_seating_plan(t, 1, &r, tour_rng_splitmix64, &s, m, 8, &n), -EINVAL);
    t[0].seats = 9;
    r.max_difference = 0;
    ck_assert_int_eq(tour_seating_plan(t, 1, &r, tour_rng_splitmix64, &s, m, 8, &n), -EINVAL);
    ck_assert(tour_hand_for_hand(16, 15, 1));
    ck_assert(!tour_hand_for_hand(17, 15, 1));
    ck_assert(!tour_hand_for_hand(15, 15, 1));
    ck_assert(tour_hand_for_hand(17, 15, 2));
    /* Hand-for-hand waits for every open table; an empty (closed) table does not count. */
    uint64_t b[9] = {4, 5, 0, 0, 0, 0, 0, 0, 0}, none[9] = {0};
    tour_table_t h[3] = {table(1, 9, 0, 1, a), table(2, 9, 0, 1, b), table(3, 9, -1, -1, none)};
    h[2].between_hands = false;
    ck_assert(tour_hand_for_hand_may_deal(h, 3));
    h[1].between_hands = false;
    ck_assert(!tour_hand_for_hand_may_deal(h, 3));
}
END_TEST

/* Plays a hand at table t in the model: blinds move forward (big blind forward rule). */
static void play_hand(tour_table_t *t)
{
    if (tour_table_count(t) < 2)
        return;
    int from = t->bb < 0 ? (int)rnd(t->seats) : t->bb;
    t->sb = t->bb;
    for (uint32_t k = 1; k <= t->seats; k++) {
        uint32_t s = (uint32_t)(from + (int)k) % t->seats;
        if (t->seat[s].player != 0) {
            t->bb = (int)s;
            break;
        }
    }
}

/*
 * Checks one plan against the model before it (`before`, replayed move by move) and after it
 * (`after`): every move takes a seated player from a table between hands to an empty seat that
 * is not the next small blind seat; a balancing move takes a player moved least at his table
 * (when rules prefer so) and goes to the table with the fewest players; wait_for_button is
 * right; replaying gives exactly the model after; when every table is between hands, the
 * tables end balanced and no table could be broken.
 */
static void check_plan(tour_table_t *before, const tour_table_t *after, size_t nt,
                       const tour_move_t *m, size_t n, const tour_seating_rules_t *r)
{
    for (size_t i = 0; i < n; i++) {
        tour_table_t *from = NULL, *to = NULL;
        for (size_t j = 0; j < nt; j++) {
            if (before[j].id == m[i].from_table)
                from = &before[j];
            if (before[j].id == m[i].to_table)
                to = &before[j];
        }
        REQUIRE(from != NULL && to != NULL && from != to);
        REQUIRE(from->between_hands);
        REQUIRE((from->seat[m[i].from_seat].player) == (m[i].player));
        REQUIRE((to->seat[m[i].to_seat].player) == (0));
        ck_assert_msg(to->bb < 0 || (int)m[i].to_seat != to->bb, "seated into the small blind");
        uint32_t d = (m[i].to_seat - (uint32_t)to->sb + to->seats) % to->seats;
        uint32_t dbb = (uint32_t)(to->bb - to->sb + (int)to->seats) % to->seats;
        REQUIRE(m[i].wait_for_button == (to->sb >= 0 && to->bb >= 0 && d > 0 && d < dbb));
        if (m[i].reason == TOUR_MOVE_BALANCE) {
            uint32_t least = UINT32_MAX;
            for (uint32_t s = 0; s < from->seats; s++)
                if (from->seat[s].player != 0 && from->seat[s].moves < least)
                    least = from->seat[s].moves;
            if (r->prefer_fewest_moves)
                ck_assert_msg(from->seat[m[i].from_seat].moves == least,
                              "moved a player moved more than another at his table");
            uint32_t tc = tour_table_count(to);
            for (size_t j = 0; j < nt; j++) {
                uint32_t c = tour_table_count(&before[j]);
                REQUIRE(c == 0 || c >= tc);
            }
            REQUIRE(tour_table_count(from) > tc + r->max_difference);
        }
        to->seat[m[i].to_seat].player = m[i].player;
        to->seat[m[i].to_seat].moves = from->seat[m[i].from_seat].moves + 1;
        from->seat[m[i].from_seat] = (tour_seat_t){0, 0};
    }
    REQUIRE(same_tables(before, after, nt));
    bool all_between = true, sb_seat_free = false;
    uint32_t lo = UINT32_MAX, hi = 0, total = 0, open = 0, seats = 0;
    for (size_t j = 0; j < nt; j++) {
        uint32_t c = tour_table_count(&after[j]);
        if (c == 0)
            continue;
        all_between = all_between && after[j].between_hands;
        sb_seat_free = sb_seat_free || (after[j].bb >= 0 && after[j].seat[after[j].bb].player == 0);
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
        total += c;
        open++;
        seats = after[j].seats;
    }
    /* A free small blind seat may hold a due break (and balancing) back until a hand ends. */
    if (all_between && open > 0 && !sb_seat_free) {
        ck_assert_msg(hi - lo <= r->max_difference, "unbalanced: %u and %u", hi, lo);
        REQUIRE((open) == (tour_seating_tables_for(total, seats)));
    } else if (all_between && open > 0) {
        REQUIRE(hi - lo <= r->max_difference || total <= seats * (open - 1));
    }
}

/* Thousands of random tournaments to the end: random eliminations, tables in or between
 * hands at random, every plan checked by check_plan(); no player lost or duplicated. */
START_TEST(test_tour_seating_random_tournaments_keep_invariants)
{
    enum { MAXN = 400, MAXT = 200 };
    static uint64_t players[MAXN];
    static tour_table_t t[MAXT], before[MAXT];
    static tour_table_t again[MAXT];
    static tour_move_t m[MAXN], m_again[MAXN];
    static uint8_t seen[MAXN + 1];
    long plans = 0, moves = 0;
    /* 2000 tournaments; 200 under valgrind (CROUPIER_VALGRIND=1, set by ./dev). */
    int runs = getenv("CROUPIER_VALGRIND") != NULL ? 200 : 2000;
    for (int k = 0; k < runs; k++) {
        uint32_t n = 2 + (uint32_t)rnd(k % 10 == 0 ? MAXN - 1 : 60);
        uint32_t seats = 2 + (uint32_t)rnd(9);
        tour_seating_rules_t r = tour_seating_rules_default();
        r.max_difference = rnd(5) == 0 ? 2 : 1;
        r.prefer_fewest_moves = rnd(4) != 0;
        for (uint32_t i = 0; i < n; i++)
            players[i] = 1 + i;
        uint32_t nt = tour_seating_tables_for(n, seats);
        uint64_t s = (uint64_t)k * 1000003;
        REQUIRE((tour_seating_draw(players, n, seats, 1, tour_rng_splitmix64, &s, t, MAXT)) == (0));
        uint32_t left = n;
        while (left > 1) {
            /* Some tables play a hand; one elimination (sometimes two at one table). */
            for (uint32_t j = 0; j < nt; j++) {
                if (rnd(2) == 0)
                    play_hand(&t[j]);
                t[j].between_hands = rnd(4) != 0;
            }
            uint32_t victim = 1 + (uint32_t)rnd(left), busts = rnd(8) == 0 ? 2 : 1;
            for (uint32_t j = 0; j < nt && busts > 0; j++)
                for (uint32_t q = 0; q < t[j].seats && busts > 0; q++)
                    if (t[j].seat[q].player != 0 && --victim == 0) {
                        t[j].seat[q] = (tour_seat_t){0, 0};
                        left--;
                        t[j].between_hands = true; /* its hand ended */
                        if (--busts > 0 && left > 1)
                            victim = 1;
                        else
                            busts = 0;
                    }
            if (left <= 1)
                break;
            if (rnd(3) == 0) /* sometimes the whole field is between hands */
                for (uint32_t j = 0; j < nt; j++)
                    t[j].between_hands = true;
            memcpy(before, t, nt * sizeof *t);
            memcpy(again, t, nt * sizeof *t);
            uint64_t s_again = s;
            size_t nm, nm_again;
            REQUIRE((tour_seating_plan(t, nt, &r, tour_rng_splitmix64, &s, m, MAXN, &nm)) == (0));
            /* A plan is a function of the model and the generator: replayed, the same. */
            REQUIRE(tour_seating_plan(again, nt, &r, tour_rng_splitmix64, &s_again, m_again, MAXN,
                                      &nm_again) == 0);
            REQUIRE(nm == nm_again && same_moves(m, m_again, nm) && same_tables(t, again, nt) &&
                    s == s_again);
            check_plan(before, t, nt, m, nm, &r);
            plans++;
            moves += (long)nm;
            memset(seen, 0, sizeof seen);
            uint32_t count = 0;
            for (uint32_t j = 0; j < nt; j++)
                for (uint32_t q = 0; q < t[j].seats; q++)
                    if (t[j].seat[q].player != 0) {
                        REQUIRE(!seen[t[j].seat[q].player]);
                        seen[t[j].seat[q].player] = 1;
                        count++;
                    }
            REQUIRE((count) == (left));
        }
    }
    REQUIRE(plans > 5 * runs && moves > runs / 2); /* the simulation did exercise the planner */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tour_seating");
    TCase *tc = tcase_create("draw");
    tcase_add_test(tc, test_tour_seating_draw_sizes_within_one_and_everyone_once);
    tcase_add_test(tc, test_tour_seating_draw_is_a_function_of_the_seed);
    suite_add_tcase(s, tc);
    tc = tcase_create("balance");
    tcase_add_test(tc, test_tour_seating_balance_moves_next_big_blind_to_worst_seat);
    tcase_add_test(tc, test_tour_seating_balance_prefers_players_moved_least);
    tcase_add_test(tc, test_tour_seating_no_move_from_a_table_in_a_hand);
    tcase_add_test(tc, test_tour_seating_bad_model_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("break");
    tcase_add_test(tc, test_tour_seating_final_table_from_two);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_add_test(tc, test_tour_seating_random_tournaments_keep_invariants);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
