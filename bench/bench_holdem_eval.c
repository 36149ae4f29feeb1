/*
 * bench_holdem_eval -- hand evaluator speed on one core.
 *
 *   enumeration: all 133,784,560 seven-card hands, cards added incrementally per loop level
 *     (best of three runs);
 *   holdem_enum enumeration: the same hands through the state machine of holdem_enum.h (one
 *     table read per card; its build time and table size are printed too); for a side-by-side
 *     comparison with OMPEval in one process see bench/sidebyside/;
 *   random (card arrays): 10 M random seven-card hands stored as 7 card numbers, each
 *     evaluated from its cards with holdem_cards_value(), 20 passes (total, and the best pass);
 *   random (card arrays, holdem_hand_add): the same, the hand built card by card with
 *     holdem_hand_add() and evaluated with holdem_hand_value();
 *   random (prebuilt hands): the same hands stored as holdem_hand_t, evaluated only.
 *
 * The same measurements as OMPEval's benchmark.cpp (which builds its hands card by card), so
 * the figures compare side by side (BENCHMARKS.md). Prints one line per figure and a checksum so
 * nothing is optimised away.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "holdem_enum.h"
#include "holdem_eval.h"
#include "sidebyside/holdem_loops.h"
#include "xmalloc.h"

#define RANDOM_HANDS 10000000
#define RANDOM_PASSES 20

/*
 * CPU time of this thread: on a shared machine it stays close to what one free core would
 * take, where wall time would include other processes' turns. Both are printed.
 */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double w0;

static void report(const char *what, uint64_t count, double t0, uint64_t sum)
{
    double cpu = cpu_s() - t0, wall = wall_s() - w0;
    printf("holdem_eval %s: %llu evals, %.3f s cpu = %.0f M evals/s (wall %.3f s = %.0f M/s) "
           "checksum %llu\n",
           what, (unsigned long long)count, cpu, count / cpu * 1e-6, wall, count / wall * 1e-6,
           (unsigned long long)sum);
}

static uint64_t rng = 0x853c49e6748fea9bull;

static unsigned rnd52(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)((rng >> 32) % 52);
}

enum random_mode { RANDOM_FROM_CARDS, RANDOM_FROM_ADD, RANDOM_PREBUILT };

/*
 * One random-order figure: RANDOM_PASSES passes over the same hands, each timed. Cards: the
 * hand's 7 card numbers through holdem_cards_value(); add: the same cards added one by one with
 * holdem_hand_add() (what OMPEval's Hand += Hand(card) does); prebuilt: holdem_hand_value() of
 * a holdem_hand_t built beforehand.
 */
static void random_run(const char *what, enum random_mode mode, const uint8_t (*cards)[8],
                       const holdem_hand_t *hands)
{
    double best = 1e9;
    uint64_t sum = 0;
    w0 = wall_s();
    double t0 = cpu_s();
    for (int p = 0; p < RANDOM_PASSES; p++) {
        double p0 = cpu_s();
        switch (mode) {
        case RANDOM_FROM_CARDS:
            for (int i = 0; i < RANDOM_HANDS; i++)
                sum += holdem_cards_value(cards[i], 7);
            break;
        case RANDOM_FROM_ADD:
            for (int i = 0; i < RANDOM_HANDS; i++) {
                const uint8_t *c = cards[i];
                holdem_hand_t h = holdem_hand_empty();
                h = holdem_hand_add(h, c[0]);
                h = holdem_hand_add(h, c[1]);
                h = holdem_hand_add(h, c[2]);
                h = holdem_hand_add(h, c[3]);
                h = holdem_hand_add(h, c[4]);
                h = holdem_hand_add(h, c[5]);
                h = holdem_hand_add(h, c[6]);
                sum += holdem_hand_value(h);
            }
            break;
        case RANDOM_PREBUILT:
            for (int i = 0; i < RANDOM_HANDS; i++)
                sum += holdem_hand_value(hands[i]);
            break;
        }
        if (cpu_s() - p0 < best)
            best = cpu_s() - p0;
    }
    report(what, (uint64_t)RANDOM_PASSES * RANDOM_HANDS, t0, sum);
    printf("holdem_eval %s, best pass: %.0f M evals/s cpu\n", what, RANDOM_HANDS / best * 1e-6);
}

/*
 * Enumeration through the state machine of holdem_enum.h: the same nested loops (those of
 * bench/sidebyside/holdem_loops.c, which the OMPEval comparison runs too), one table read per
 * card, the seventh read being the hand's value, every value summed (the checksum equals the
 * hash evaluator's). Also prints the table's build time and size. Best of three runs.
 */
static void enum_run(void)
{
    double b0 = cpu_s(), bw = wall_s();
    holdem_enum_t *e = holdem_enum_create();
    if (e == NULL) {
        fprintf(stderr, "holdem_enum_create: out of memory\n");
        exit(EXIT_FAILURE);
    }
    printf("holdem_enum build: %.3f s cpu (wall %.3f s), %u states (%u before merging), "
           "%zu table bytes (%.1f MiB)\n",
           cpu_s() - b0, wall_s() - bw, holdem_enum_state_count(e), holdem_enum_raw_state_count(e),
           holdem_enum_table_bytes(e), holdem_enum_table_bytes(e) / 1048576.0);
    uint64_t sum = 0, count = 0, best_sum = 0;
    double best = 1e9, best_wall = 0;
    for (int run = 0; run < 3; run++) {
        w0 = wall_s();
        double t0 = cpu_s();
        sum = sbs_enum_sum(e); /* the loops of the side-by-side comparison, shared */
        count = 133784560;     /* C(52, 7) */
        if (cpu_s() - t0 < best) {
            best = cpu_s() - t0;
            best_wall = wall_s() - w0;
            best_sum = sum;
        }
    }
    printf("holdem_enum enumeration (all 7-card hands, state machine), best of 3: %llu evals, "
           "%.3f s cpu = %.0f M evals/s (wall %.3f s) checksum %llu\n",
           (unsigned long long)count, best, count / best * 1e-6, best_wall,
           (unsigned long long)best_sum);
    holdem_enum_destroy(e);
}

int main(void)
{
    /* Enumeration: three runs, the best one reported (the least disturbed by others). */
    uint64_t sum = 0, count = 0, best_sum = 0;
    double best_enum = 1e9, best_wall = 0;
    for (int run = 0; run < 3; run++) {
        sum = 0;
        count = 0;
        w0 = wall_s();
        double t0 = cpu_s();
        for (int a = 0; a < 52; a++) {
            holdem_hand_t ha = holdem_hand_add(holdem_hand_empty(), a);
            for (int b = a + 1; b < 52; b++) {
                holdem_hand_t hb = holdem_hand_add(ha, b);
                for (int c = b + 1; c < 52; c++) {
                    holdem_hand_t hc = holdem_hand_add(hb, c);
                    for (int d = c + 1; d < 52; d++) {
                        holdem_hand_t hd = holdem_hand_add(hc, d);
                        for (int e = d + 1; e < 52; e++) {
                            holdem_hand_t he = holdem_hand_add(hd, e);
                            for (int f = e + 1; f < 52; f++) {
                                holdem_hand_t hf = holdem_hand_add(he, f);
                                for (int g = f + 1; g < 52; g++) {
                                    sum += holdem_hand_value(holdem_hand_add(hf, g));
                                    count++;
                                }
                            }
                        }
                    }
                }
            }
        }
        if (cpu_s() - t0 < best_enum) {
            best_enum = cpu_s() - t0;
            best_wall = wall_s() - w0;
            best_sum = sum;
        }
    }
    printf("holdem_eval enumeration (all 7-card hands), best of 3: %llu evals, %.3f s cpu = "
           "%.0f M evals/s (wall %.3f s) checksum %llu\n",
           (unsigned long long)count, best_enum, count / best_enum * 1e-6, best_wall,
           (unsigned long long)best_sum);

    enum_run();

    uint8_t(*cards)[8] = xmalloc(RANDOM_HANDS * sizeof *cards);
    holdem_hand_t *hands = xmalloc(RANDOM_HANDS * sizeof *hands);
    for (int i = 0; i < RANDOM_HANDS; i++) {
        uint64_t used = 0;
        holdem_hand_t h = holdem_hand_empty();
        for (int k = 0; k < 7;) {
            unsigned c = rnd52();
            if (used & (1ull << c))
                continue;
            used |= 1ull << c;
            cards[i][k++] = (uint8_t)c;
            h = holdem_hand_add(h, (int)c);
        }
        hands[i] = h;
    }
    /* Random order: RANDOM_PASSES passes per figure, timed one by one; the best pass is the
     * figure least disturbed by other processes, the total is printed as well. */
    random_run("random (card arrays)", RANDOM_FROM_CARDS, cards, hands);
    random_run("random (card arrays, holdem_hand_add)", RANDOM_FROM_ADD, cards, hands);
    random_run("random (prebuilt hands)", RANDOM_PREBUILT, cards, hands);
    free(cards);
    free(hands);
    return 0;
}
