/*
 * bench_tour_balance -- time of one seating decision (tour_seating_plan(): breaking tables and
 * balancing, docs/tournaments.md "Seating") in a multi-table tournament of 10,000 entrants on
 * 1,112 tables of 9, played down to one player: one elimination at a time, at a random
 * player; between two eliminations some tables play a hand (the blinds move forward) and each
 * table is between hands with probability 3/4 (the table of the elimination always is). One
 * decision = one tour_seating_plan() call after an elimination, over the whole field.
 *
 * Prints p50, p99 and max of the CPU time of this thread per decision (the figure; wall time
 * alongside), the moves and breaks made, and the target (p99 <= 1 ms).
 *
 *   bench_tour_balance [ENTRANTS [SEED]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tour_seating.h"
#include "xmalloc.h"

#define TARGET_P99_MS 1.0

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

static uint64_t seed;

static uint64_t rnd(uint64_t n)
{
    return tour_rng_below(tour_rng_splitmix64, &seed, n);
}

/* A hand at table t: the blinds move forward (the next occupied seat after bb is the new bb). */
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

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000;
    seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 20261206;
    if (n < 2) {
        fprintf(stderr, "usage: bench_tour_balance [ENTRANTS>=2 [SEED]]\n");
        return 2;
    }
    const uint32_t seats = 9;
    uint32_t nt = tour_seating_tables_for(n, seats);
    uint64_t *players = xmalloc(n * sizeof *players);
    for (uint32_t i = 0; i < n; i++)
        players[i] = 1 + i;
    tour_table_t *t = xcalloc(nt, sizeof *t);
    double d0 = cpu_s();
    if (tour_seating_draw(players, n, seats, 1, tour_rng_splitmix64, &seed, t, nt) != 0) {
        fprintf(stderr, "tour_seating_draw failed\n");
        return 1;
    }
    double draw_ms = (cpu_s() - d0) * 1e3;
    tour_seating_rules_t rules = tour_seating_rules_default();
    tour_move_t *moves = xmalloc(n * sizeof *moves);
    double *cpu = xmalloc(n * sizeof *cpu), *wall = xmalloc(n * sizeof *wall);
    uint32_t left = n, decisions = 0;
    uint64_t nmoves = 0, breaks = 0, balances = 0;
    while (left > 1) {
        for (uint32_t k = 0; k < 64; k++) /* some tables play a hand */
            play_hand(&t[rnd(nt)]);
        for (uint32_t j = 0; j < nt; j++)
            t[j].between_hands = rnd(4) != 0;
        uint32_t victim = 1 + (uint32_t)rnd(left);
        for (uint32_t j = 0; j < nt && victim > 0; j++) {
            uint32_t c = tour_table_count(&t[j]);
            if (victim > c) {
                victim -= c;
                continue;
            }
            for (uint32_t s = 0; s < t[j].seats; s++)
                if (t[j].seat[s].player != 0 && --victim == 0) {
                    t[j].seat[s] = (tour_seat_t){0, 0};
                    t[j].between_hands = true;
                    break;
                }
        }
        left--;
        size_t nm = 0;
        double w0 = wall_s(), c0 = cpu_s();
        int rc = tour_seating_plan(t, nt, &rules, tour_rng_splitmix64, &seed, moves, n, &nm);
        cpu[decisions] = (cpu_s() - c0) * 1e3;
        wall[decisions] = (wall_s() - w0) * 1e3;
        decisions++;
        if (rc != 0) {
            fprintf(stderr, "tour_seating_plan: %d\n", rc);
            return 1;
        }
        nmoves += nm;
        for (size_t i = 0; i < nm; i++) {
            if (moves[i].reason == TOUR_MOVE_BREAK)
                breaks += i == 0 || moves[i - 1].from_table != moves[i].from_table ||
                          moves[i - 1].reason != TOUR_MOVE_BREAK;
            else
                balances++;
        }
    }
    qsort(cpu, decisions, sizeof *cpu, dbl_cmp);
    qsort(wall, decisions, sizeof *wall, dbl_cmp);
    size_t p50 = decisions / 2, p99 = (size_t)((double)decisions * 0.99);
    if (p99 >= decisions)
        p99 = decisions - 1;
    printf("tour_balance: %u entrants on %u tables of %u, initial draw %.3f ms cpu\n", n, nt, seats,
           draw_ms);
    printf("tour_balance: %u decisions (one per elimination), %llu moves (%llu balancing, "
           "%llu by %llu broken tables)\n",
           decisions, (unsigned long long)nmoves, (unsigned long long)balances,
           (unsigned long long)(nmoves - balances), (unsigned long long)breaks);
    printf("tour_balance: time per decision, cpu: p50 %.4f ms, p99 %.4f ms, max %.4f ms; wall: "
           "p50 %.4f ms, p99 %.4f ms, max %.4f ms\n",
           cpu[p50], cpu[p99], cpu[decisions - 1], wall[p50], wall[p99], wall[decisions - 1]);
    printf("tour_balance: target p99 <= %.1f ms: %s\n", TARGET_P99_MS,
           cpu[p99] <= TARGET_P99_MS ? "met" : "NOT met");
    free(players);
    free(t);
    free(moves);
    free(cpu);
    free(wall);
    return 0;
}
