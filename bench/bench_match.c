/*
 * bench_match -- re-pairing throughput of a 打立出局 stage (docs/rules/match-halls.md
 * "打立出局"), in process: 10,000 Dou Dizhu players on tables of 3; deals end one at a time in
 * a random order among the tables in play (random zero-sum results), each end followed by the
 * pairing of the waiting (match_rising_deal_end + match_rising_pair), until the stage ends at N
 * players. The stage time advances 20 ms per deal end (a deal of ~1 minute at ~3,300 tables),
 * so the line rises and players go out along the way.
 *
 * With STEADY > 0, the field is held at its size instead (no line: out_pct 0, base 1, no
 * growth) for STEADY deal ends: the throughput with all 10,000 players in play throughout.
 *
 * Prints the players re-seated per CPU second of this thread (the figure; wall alongside), the
 * deal ends, the players out and the target (>= 10,000 players re-seated per second).
 *
 *   bench_match [PLAYERS [ADVANCE [SEED [STEADY]]]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "match_rising.h"
#include "xmalloc.h"

#define TARGET_PER_S 10000.0

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000;
    uint32_t adv = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 18;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 20261206;
    uint64_t steady = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
    match_stage_config_t c = match_stage_config_default(MATCH_RISING, 3);
    c.advance = adv;
    if (steady > 0) {
        c.out_pct = 0;
        c.growth_pct = 0;
        c.base_score = 1;
    }
    if (n < 4 || adv < 3 || adv >= n) {
        fprintf(stderr, "usage: bench_match [PLAYERS>=4 [ADVANCE 3..PLAYERS-1 [SEED]]]\n");
        return 2;
    }
    uint64_t *ids = xmalloc(n * sizeof *ids);
    int64_t *sc = xmalloc(n * sizeof *sc);
    for (uint32_t i = 0; i < n; i++) {
        ids[i] = 1 + i;
        sc[i] = 1000;
    }
    match_stage_t *st;
    if (match_stage_create(&c, ids, sc, n, tour_rng_splitmix64, &seed, &st) != 0) {
        fprintf(stderr, "match_stage_create failed\n");
        return 1;
    }
    match_new_table_t *t = xmalloc((n / 3 + 1) * sizeof *t);
    uint32_t *live = xmalloc((n / 3 + 1) * sizeof *live); /* table numbers in play */
    uint32_t nlive = 0;
    uint64_t seated = 0, ends = 0;
    size_t nt;
    int64_t now = 0;
    double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
    if (match_rising_pair(st, now, tour_rng_splitmix64, &seed, t, n / 3 + 1, &nt, NULL, 0, NULL) !=
        0)
        return 1;
    double first_cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    for (size_t j = 0; j < nt; j++)
        live[nlive++] = t[j].table;
    uint64_t first = nt * 3;
    while (!st->over && nlive > 0 && (steady == 0 || ends < steady)) {
        uint32_t k = (uint32_t)tour_rng_below(tour_rng_splitmix64, &seed, nlive);
        uint32_t tab = live[k];
        live[k] = live[--nlive];
        int64_t u = 1 + (int64_t)tour_rng_below(tour_rng_splitmix64, &seed, 12);
        int64_t res[3];
        match_result_doudizhu((uint32_t)tour_rng_below(tour_rng_splitmix64, &seed, 3),
                              tour_rng_below(tour_rng_splitmix64, &seed, 2) == 0, u, res);
        now += 20;
        if (match_rising_deal_end(st, tab, st->tables[tab - 1].deal, res, now, NULL, NULL) != 0)
            return 1;
        ends++;
        if (st->over)
            break;
        if (match_rising_pair(st, now, tour_rng_splitmix64, &seed, t, n / 3 + 1, &nt, NULL, 0,
                              NULL) != 0)
            return 1;
        for (size_t j = 0; j < nt; j++)
            live[nlive++] = t[j].table;
        seated += nt * 3;
    }
    double cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0 - first_cpu;
    double wall = clock_s(CLOCK_MONOTONIC) - w0;
    double rate = (double)seated / cpu;
    printf(
        "match: 打立出局 of %u players (tables of 3) to %u%s: first draw %llu players in %.3f ms "
        "cpu\n",
        n, adv, steady > 0 ? ", steady (no line)" : "", (unsigned long long)first, first_cpu * 1e3);
    printf("match: %llu deal ends, %llu players re-seated after a deal end, %u out, stage time "
           "%.1f min, %s\n",
           (unsigned long long)ends, (unsigned long long)seated, n - st->remaining,
           (double)now / 60000.0, st->over ? "over" : "not over");
    printf("match: players re-seated per second: %.0f per CPU second (%.3f us each), %.0f wall\n",
           rate, cpu / (double)(seated ? seated : 1) * 1e6, (double)seated / wall);
    printf("match: target >= %.0f/s: %s\n", TARGET_PER_S, rate >= TARGET_PER_S ? "met" : "NOT met");
    if (steady > 0)
        printf("match: command: bench_match %u %u %llu %llu\n", n, adv,
               (unsigned long long)(argc > 3 ? strtoull(argv[3], NULL, 10) : 20261206),
               (unsigned long long)steady);
    else
        printf("match: command: bench_match %u %u\n", n, adv);
    match_stage_destroy(st);
    free(ids);
    free(sc);
    free(t);
    free(live);
    return 0;
}
