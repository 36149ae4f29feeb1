/*
 * test_deck_heavy -- the statistical tests of the kit's shuffle (docs/fairness.md "The tests"),
 * suite 'heavy'. For each deck size (48, 52, 54, 108 cards) DECK_HEAVY_DECKS decks (10^6) are
 * dealt through the production function of every kit game's round, deck_deal() (what
 * tk_deal_shuffle() runs: the shuffle, then the round's nonce from the same stream and the
 * commitment), starting from the order 0..n-1, and four statistics are taken, each at the 99 %
 * confidence level:
 *
 *   position   chi-square of the card x position counts (n x n cells, df (n-1)^2);
 *   adjacency  chi-square of the ordered pairs (a, b) with b right after a (n(n-1) cells,
 *              each with chance 1/n per deck; df n(n-1) - 1);
 *   runs       chi-square of the number of ascents per deck against the Eulerian
 *              distribution (bins of expected count < 5 merged);
 *   first      chi-square of the first card (n cells, df n - 1).
 *
 * Blackjack's shoes (D decks of the 52 card values, 2, 6 and 8 decks: 104, 312 and 416 cards,
 * each value D times, started in the order 0..51 repeated) go through deck_shuffle(), what a
 * production table's bj_shuffle() runs (games/persistent/blackjack.c), and take three statistics
 * over the card values, with DECK_HEAVY_DECKS shoes each:
 *
 *   position   chi-square of the value x position counts (52 x n cells, each expecting
 *              shoes / 52; df 51 (n - 1));
 *   adjacency  chi-square of the ordered value pairs (a, b) at neighbouring positions (52 x 52
 *              cells, expecting D^2 / n per position pair and (D - 1) D / n when a = b, over
 *              n - 1 pairs; df 52^2 - 1);
 *   first      chi-square of the first card's value (52 cells; df 51).
 *
 * (The runs statistic needs distinct cards: it is taken on the decks above.) A match hall's
 * duplicate deals (deck_deal_keyed(): the same Fisher-Yates, its draws from HMAC-SHA256 under
 * the deal's key) take the four deck statistics on 52 and 108 cards, 10^6 decks each.
 * A sound shuffle fails one statistic with chance 1 %; a statistic that fails is taken again
 * on fresh decks, up to three times in all, and the test fails only if it fails every time
 * (chance 10^-6 per statistic: with some twenty statistics, twice was 2 x 10^-3 a run, and a
 * suite run met it). The test of the test: the Planet Poker shuffle (for every i, j uniform in
 * [0, n-1]) must fail every statistic on the same number of decks, twice.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck.h"

#ifndef DECK_HEAVY_DECKS
#define DECK_HEAVY_DECKS 1000000
#endif
#define MAXN 108
#define MAXSHOE (8 * 52)

typedef int (*shuffle_fn)(uint8_t *cards, size_t n);

/* A kit game's round: deck_deal(), the shuffle and then the nonce drawn from the same stream (so
 * consecutive decks are separated by the 32 bytes of a nonce, as on a server) and the commitment. */
static int shuffle_deal(uint8_t *cards, size_t n)
{
    static deck_deal_t deal;
    return deck_deal(&deal, cards, n);
}

/* A duplicate deal of a match hall (docs/fairness.md "Duplicate deals"): deck_deal_keyed() with
 * the production key, croupier-dup:<seed>:<deal>, a seed drawn once and the deals counted from
 * 0, and the first of 4 seats drawn from the same stream after the deck, as trad_round_start()
 * does. */
static int shuffle_keyed(uint8_t *cards, size_t n)
{
    static deck_deal_t deal;
    static uint64_t seed, next;
    if (next == 0 && deck_random_bytes(&seed, sizeof seed) != 0)
        return -1;
    char key[64];
    int len = snprintf(key, sizeof key, "croupier-dup:%llu:%llu", (unsigned long long)seed,
                       (unsigned long long)next++);
    uint32_t first;
    return deck_deal_keyed(&deal, cards, n, key, (size_t)len, 4, &first);
}

/* Planet Poker's 1999 shuffle: j from the whole deck for every i. Biased: n^n paths onto n!. */
static int shuffle_planet_poker(uint8_t *cards, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t j;
        if (deck_uniform((uint32_t)n, &j) != 0)
            return -1;
        uint8_t c = cards[i];
        cards[i] = cards[j];
        cards[j] = c;
    }
    return 0;
}

/* The chi-square value that df degrees of freedom exceed with chance 1 % (Wilson-Hilferty;
 * within 0.1 % of the exact value for df >= 30, and within 1 % for df >= 3). */
static double chi2_crit99(double df)
{
    const double z = 2.326347874; /* the normal 99 % quantile */
    double a = 2.0 / (9.0 * df);
    return df * pow(1.0 - a + z * sqrt(a), 3.0);
}

typedef struct {
    double stat[4];
    double crit[4];
} result_t;

enum { ST_POSITION, ST_ADJACENCY, ST_RUNS, ST_FIRST };
static const char *const st_name[] = {"position", "adjacency", "runs", "first"};

/* Eulerian probabilities: p[k] = chance of k ascents in a uniform permutation of n. */
static void eulerian(int n, double *p)
{
    double q[MAXN + 1];
    memset(p, 0, sizeof(double) * (MAXN + 1));
    p[0] = 1.0; /* n = 1 */
    for (int m = 2; m <= n; m++) {
        memcpy(q, p, sizeof q);
        for (int k = 0; k < m; k++)
            p[k] = ((k + 1) * q[k] + (k > 0 ? (m - k) * q[k - 1] : 0.0)) / m;
    }
}

/* Shuffles decks of n and takes the four statistics. */
static void run_stats(shuffle_fn fn, int n, long decks, result_t *r)
{
    static uint64_t pos[MAXN][MAXN], adj[MAXN][MAXN], first[MAXN], ascents[MAXN + 1];
    memset(pos, 0, sizeof pos);
    memset(adj, 0, sizeof adj);
    memset(first, 0, sizeof first);
    memset(ascents, 0, sizeof ascents);
    uint8_t d[MAXN];
    for (long k = 0; k < decks; k++) {
        for (int i = 0; i < n; i++)
            d[i] = (uint8_t)i;
        ck_assert_int_eq(fn(d, (size_t)n), 0);
        int up = 0;
        for (int i = 0; i < n; i++) {
            pos[d[i]][i]++;
            if (i + 1 < n) {
                adj[d[i]][d[i + 1]]++;
                up += d[i + 1] > d[i];
            }
        }
        first[d[0]]++;
        ascents[up]++;
    }
    double chi = 0, e = (double)decks / n;
    for (int c = 0; c < n; c++)
        for (int i = 0; i < n; i++)
            chi += ((double)pos[c][i] - e) * ((double)pos[c][i] - e) / e;
    r->stat[ST_POSITION] = chi;
    r->crit[ST_POSITION] = chi2_crit99((double)(n - 1) * (n - 1));
    chi = 0;
    e = (double)decks / n; /* P(b right after a) = (n-1) * 1/(n(n-1)) = 1/n */
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b)
                chi += ((double)adj[a][b] - e) * ((double)adj[a][b] - e) / e;
    r->stat[ST_ADJACENCY] = chi;
    r->crit[ST_ADJACENCY] = chi2_crit99((double)n * (n - 1) - 1);
    double p[MAXN + 1];
    eulerian(n, p);
    double bo[MAXN + 1], be[MAXN + 1], obs = 0, exp = 0;
    int bins = 0;
    for (int k = 0; k < n; k++) {
        obs += (double)ascents[k];
        exp += p[k] * (double)decks;
        if (exp >= 5.0) { /* a bin closes once it expects 5; the low tail joins the next */
            bo[bins] = obs;
            be[bins++] = exp;
            obs = exp = 0;
        }
    }
    if (bins == 0) {
        bo[0] = be[0] = 0;
        bins = 1;
    }
    bo[bins - 1] += obs; /* the high tail joins the last bin */
    be[bins - 1] += exp;
    chi = 0;
    for (int b = 0; b < bins; b++)
        chi += (bo[b] - be[b]) * (bo[b] - be[b]) / be[b];
    r->stat[ST_RUNS] = chi;
    r->crit[ST_RUNS] = chi2_crit99((double)(bins - 1));
    chi = 0;
    e = (double)decks / n;
    for (int c = 0; c < n; c++)
        chi += ((double)first[c] - e) * ((double)first[c] - e) / e;
    r->stat[ST_FIRST] = chi;
    r->crit[ST_FIRST] = chi2_crit99((double)(n - 1));
}

static void report(const char *what, int n, int round, const result_t *r)
{
    for (int s = 0; s < 4; s++)
        if (r->crit[s] > 0) /* 0: not taken (the runs of a shoe) */
            fprintf(stderr, "# deck_heavy %s n=%d try=%d %-9s chi2=%.1f crit99=%.1f %s\n", what, n,
                    round, st_name[s], r->stat[s], r->crit[s],
                    r->stat[s] > r->crit[s] ? "FAIL" : "pass");
}

#define SOUND_TRIES 3

static void run_shoe_stats(shuffle_fn fn, int decks, long shoes, result_t *r);

/* The real shuffle passes every statistic (a statistic failed is taken again, up to
 * SOUND_TRIES runs in all; it fails the test only if it failed in every one). shoe_decks 0:
 * decks of n distinct cards (run_stats), else shoes of that many decks (the runs statistic
 * aside). */
static void check_sound_runs(int n, int shoe_decks, shuffle_fn fn, const char *label)
{
    bool failing[4] = {true, true, true, true};
    double last[4] = {0}, crit[4] = {0};
    for (int k = 1; k <= SOUND_TRIES; k++) {
        result_t r;
        if (shoe_decks > 0)
            run_shoe_stats(fn, shoe_decks, DECK_HEAVY_DECKS, &r);
        else
            run_stats(fn, n, DECK_HEAVY_DECKS, &r);
        report(label, n, k, &r);
        bool any = false;
        for (int s = 0; s < 4; s++) {
            if (shoe_decks > 0 && s == ST_RUNS)
                failing[s] = false;
            failing[s] = failing[s] && r.stat[s] > r.crit[s];
            last[s] = r.stat[s];
            crit[s] = r.crit[s];
            any = any || failing[s];
        }
        if (!any)
            return;
    }
    for (int s = 0; s < 4; s++)
        ck_assert_msg(!failing[s], "%s n=%d fails %s %d times at 99 %%: last %.1f > %.1f", label,
                      n, st_name[s], SOUND_TRIES, last[s], crit[s]);
}

static void check_sound(int n)
{
    check_sound_runs(n, 0, shuffle_deal, "deck_deal");
}

/* The biased shuffle fails every statistic, twice (the same rule the sound one must pass). */
static void check_biased(int n)
{
    for (int round = 1; round <= 2; round++) {
        result_t r;
        run_stats(shuffle_planet_poker, n, DECK_HEAVY_DECKS, &r);
        report("planet_poker", n, round, &r);
        for (int s = 0; s < 4; s++)
            ck_assert_msg(r.stat[s] > r.crit[s],
                          "the biased shuffle (n=%d) passes %s: %.1f <= %.1f: the test cannot "
                          "see the bias",
                          n, st_name[s], r.stat[s], r.crit[s]);
    }
}

/* Shuffles shoes of decks x 52 cards (the values 0..51, each `decks` times) and takes the
 * position, adjacency and first statistics over the values (the runs slot stays 0). */
static void run_shoe_stats(shuffle_fn fn, int decks, long shoes, result_t *r)
{
    static uint64_t pos[52][MAXSHOE], adj[52][52], first[52];
    memset(pos, 0, sizeof pos);
    memset(adj, 0, sizeof adj);
    memset(first, 0, sizeof first);
    int n = decks * 52;
    uint8_t d[MAXSHOE];
    for (long k = 0; k < shoes; k++) {
        for (int i = 0; i < n; i++)
            d[i] = (uint8_t)(i % 52);
        ck_assert_int_eq(fn(d, (size_t)n), 0);
        for (int i = 0; i < n; i++) {
            pos[d[i]][i]++;
            if (i + 1 < n)
                adj[d[i]][d[i + 1]]++;
        }
        first[d[0]]++;
    }
    double chi = 0, e = (double)shoes / 52;
    for (int c = 0; c < 52; c++)
        for (int i = 0; i < n; i++)
            chi += ((double)pos[c][i] - e) * ((double)pos[c][i] - e) / e;
    r->stat[ST_POSITION] = chi;
    r->crit[ST_POSITION] = chi2_crit99(51.0 * (n - 1));
    chi = 0;
    for (int a = 0; a < 52; a++)
        for (int b = 0; b < 52; b++) {
            double pairs = a == b ? (double)decks * (decks - 1) : (double)decks * decks;
            double ex = (double)shoes * (n - 1) * pairs / ((double)n * (n - 1));
            chi += ((double)adj[a][b] - ex) * ((double)adj[a][b] - ex) / ex;
        }
    r->stat[ST_ADJACENCY] = chi;
    r->crit[ST_ADJACENCY] = chi2_crit99(52.0 * 52 - 1);
    r->stat[ST_RUNS] = r->crit[ST_RUNS] = 0;
    chi = 0;
    for (int c = 0; c < 52; c++)
        chi += ((double)first[c] - e) * ((double)first[c] - e) / e;
    r->stat[ST_FIRST] = chi;
    r->crit[ST_FIRST] = chi2_crit99(51.0);
}

/* The shoe statistics (ST_RUNS aside): the real shuffle passes (check_sound_runs' rule). */
static void check_sound_shoe(int decks)
{
    check_sound_runs(decks * 52, decks, deck_shuffle, "deck_shuffle shoe");
}

/* The biased shuffle fails the position and first statistics of a shoe, twice (the test of the
 * test; its bias on neighbouring values is at the edge of what the adjacency statistic sees in a
 * shoe: it fails it in 2 decks, passes it in 6 and 8). */
static void check_biased_shoe(int decks)
{
    for (int round = 1; round <= 2; round++) {
        result_t r;
        run_shoe_stats(shuffle_planet_poker, decks, DECK_HEAVY_DECKS, &r);
        report("planet_poker shoe", decks * 52, round, &r);
        for (int st = ST_POSITION; st <= ST_FIRST; st += ST_FIRST - ST_POSITION)
            ck_assert_msg(r.stat[st] > r.crit[st],
                          "the biased shuffle (a shoe of %d decks) passes %s: %.1f <= %.1f: the "
                          "test cannot see the bias",
                          decks, st_name[st], r.stat[st], r.crit[st]);
    }
}

START_TEST(test_deck_heavy_shoe_shuffle_passes_at_99_percent)
{
    static const int decks[] = {2, 6, 8};
    check_sound_shoe(decks[_i]);
}
END_TEST

START_TEST(test_deck_heavy_planet_poker_shoe_fails_position_and_first)
{
    static const int decks[] = {2, 6, 8};
    check_biased_shoe(decks[_i]);
}
END_TEST

START_TEST(test_deck_heavy_shuffle_passes_at_99_percent)
{
    static const int sizes[] = {48, 52, 54, 108};
    check_sound(sizes[_i]);
}
END_TEST

START_TEST(test_deck_heavy_keyed_deal_passes_at_99_percent)
{
    static const int sizes[] = {52, 108};
    check_sound_runs(sizes[_i], 0, shuffle_keyed, "deck_deal_keyed");
}
END_TEST

START_TEST(test_deck_heavy_planet_poker_shuffle_fails_every_statistic)
{
    static const int sizes[] = {48, 52, 54, 108};
    check_biased(sizes[_i]);
}
END_TEST

START_TEST(test_deck_heavy_critical_values_match_the_tables)
{
    /* Exact 99 % points (the regularized incomplete gamma function): df 3: 11.345, df 51:
     * 77.386, df 2601: 2771.72. */
    ck_assert(fabs(chi2_crit99(3) - 11.345) < 0.15);
    ck_assert(fabs(chi2_crit99(51) - 77.386) < 0.1);
    ck_assert(fabs(chi2_crit99(2601) - 2771.72) < 1.0);
    double p[MAXN + 1], sum = 0;
    eulerian(4, p); /* Eulerian numbers 1 11 11 1 over 24 */
    ck_assert(fabs(p[0] - 1.0 / 24) < 1e-12 && fabs(p[1] - 11.0 / 24) < 1e-12);
    eulerian(52, p);
    for (int k = 0; k < 52; k++)
        sum += p[k];
    ck_assert(fabs(sum - 1.0) < 1e-9);
}
END_TEST

static Suite *deck_heavy_suite(void)
{
    Suite *s = suite_create("deck_heavy");
    TCase *tc = tcase_create("tables");
    tcase_add_test(tc, test_deck_heavy_critical_values_match_the_tables);
    suite_add_tcase(s, tc);
    tc = tcase_create("sound");
    tcase_set_timeout(tc, 1800);
    tcase_add_loop_test(tc, test_deck_heavy_shuffle_passes_at_99_percent, 0, 4);
    suite_add_tcase(s, tc);
    tc = tcase_create("keyed");
    tcase_set_timeout(tc, 1800);
    tcase_add_loop_test(tc, test_deck_heavy_keyed_deal_passes_at_99_percent, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("biased");
    tcase_set_timeout(tc, 1800);
    tcase_add_loop_test(tc, test_deck_heavy_planet_poker_shuffle_fails_every_statistic, 0, 4);
    suite_add_tcase(s, tc);
    tc = tcase_create("shoes");
    tcase_set_timeout(tc, 1800);
    tcase_add_loop_test(tc, test_deck_heavy_shoe_shuffle_passes_at_99_percent, 0, 3);
    tcase_add_loop_test(tc, test_deck_heavy_planet_poker_shoe_fails_position_and_first, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(deck_heavy_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
