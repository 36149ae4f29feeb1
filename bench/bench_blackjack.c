/*
 * bench_blackjack: simulated rounds per second through the real blackjack table code
 * (games/persistent), one core, basic-strategy player, 6 decks S17 DAS LS RSA 3:2.
 * Usage: bench_blackjack [ROUNDS]   (default 20,000,000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bj_sim.h"

int main(int argc, char **argv)
{
    unsigned long long rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000ULL;
    if (rounds == 0) {
        fprintf(stderr, "usage: bench_blackjack [ROUNDS]\n");
        return 2;
    }
    bj_rules_t r;
    bj_rules_default(&r);
    bj_sim_result_t res;
    char err[200];
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    int rc = bj_sim_run(&r, rounds, 1, 10, &res, err, sizeof(err));
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != 0) {
        fprintf(stderr, "bench_blackjack: %s\n", err);
        return 1;
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
    /* The simulator is single-threaded: CPU time is the time of the one core it ran on,
     * which stays meaningful when other processes share the machine. */
    printf("blackjack simulated rounds: %llu; one core: %.3f s CPU = %.2f M rounds/s "
           "(wall %.3f s = %.2f M rounds/s; mean return %+.3f %%)\n",
           rounds, cpu, (double)rounds / cpu / 1e6, secs, (double)rounds / secs / 1e6,
           res.mean * 100);
    printf("command: bench/bench_blackjack %llu\n", rounds);
    return 0;
}
