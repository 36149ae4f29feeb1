/*
 * bench_trad -- Dou Dizhu speed: move generation and whole bot-vs-bot deals.
 *
 *   1. Move generation: every move (leading, nothing to beat) of random 20-card hands, on one
 *      core. Figure: hands per second (target >= 1,000,000).
 *   2. Bot-vs-bot deals in-process: T threads (default 2), each with its own shed_game_t,
 *      dealing (seeded shuffles), bidding and playing whole deals with random legal movers
 *      through the validating state machine. Figure: deals per second (target >= 100,000).
 *
 * Usage: bench_trad [seconds-per-figure (default 2)] [threads (default 2)]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "ddz.h"
#include "shed_game.h"
#include "xmalloc.h"

#define NHANDS 4096

/* CPU time of the calling thread: on a shared machine, wall-clock rates understate what a core
 * does, so each figure is printed both per wall-clock second and per CPU second. */
static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double seconds = 2.0;

static void bench_movegen(void)
{
    shed_counts_t *hands = xreallocarray(NULL, NHANDS, sizeof *hands);
    ddz_move_t *moves = xreallocarray(NULL, DDZ_MOVES_MAX, sizeof *moves);
    shed_rng_t rng;
    shed_rng_seed(&rng, 1);
    shed_card_t deck[54];
    for (int i = 0; i < NHANDS; i++) {
        shed_deck_build(deck, 1, true);
        shed_shuffle_seeded(deck, 54, &rng);
        shed_set_t s = {{0, 0}};
        for (int k = 0; k < 20; k++)
            shed_set_add(&s, deck[k]);
        hands[i] = shed_set_counts(s);
    }
    long done = 0, total_moves = 0;
    double c0 = thread_cpu_seconds();
    int64_t t0 = clock_mono_ns(), t1;
    do {
        for (int i = 0; i < NHANDS; i++)
            total_moves += ddz_moves_generate(hands[i], NULL, moves, DDZ_MOVES_MAX);
        done += NHANDS;
        t1 = clock_mono_ns();
    } while (t1 - t0 < (int64_t)(seconds * 1e9));
    double secs = (double)(t1 - t0) / 1e9, cpu = thread_cpu_seconds() - c0;
    printf("ddz_movegen_20card_hands_per_sec %.0f wall, %.0f per CPU second  (1 thread, %.1f "
           "moves/hand, %ld hands)\n",
           (double)done / secs, (double)done / cpu, (double)total_moves / (double)done, done);
    free(hands);
    free(moves);
}

typedef struct {
    uint64_t seed;
    long deals;
    long actions;
    long voided;
    long refused;
    double cpu;
} worker_t;

static int64_t stop_at_ns;

/* One thread of random bots: deal, bid and play until the clock runs out. */
static void *bench_deals_worker(void *arg)
{
    worker_t *w = arg;
    shed_config_t cfg = {.base_stake = 1, .rake_permille = 20};
    shed_game_t *g = shed_game_create(shed_rules_find("doudizhu"), &cfg);
    ddz_move_t *moves = xreallocarray(NULL, DDZ_MOVES_MAX, sizeof *moves);
    shed_rng_t rng;
    shed_rng_seed(&rng, w->seed);
    uint64_t deal_seed = w->seed << 32;
    double c0 = thread_cpu_seconds();
    while ((w->deals & 255) != 0 || clock_mono_ns() < stop_at_ns) {
        shed_game_deal_seeded(g, deal_seed++);
        while (shed_game_phase(g) != SHED_PHASE_OVER) {
            shed_action_t a = {.seat = shed_game_turn(g)};
            if (shed_game_phase(g) == SHED_PHASE_BID) {
                int bids[8];
                int n = shed_game_legal_bids(g, bids);
                a.kind = SHED_ACT_BID;
                a.bid = bids[shed_rng_below(&rng, (uint32_t)n)];
            } else {
                shed_set_t hand = shed_game_hand(g, a.seat);
                shed_combo_t c = shed_game_to_beat(g, NULL);
                ddz_move_t beat = {.type = c.type, .rank = c.rank, .len = c.len};
                int n = ddz_moves_generate(shed_set_counts(hand), &beat, moves, DDZ_MOVES_MAX);
                int may_pass = c.type != DDZ_PASS;
                int pick = (int)shed_rng_below(&rng, (uint32_t)(n + may_pass));
                if (pick == n) {
                    a.kind = SHED_ACT_PASS;
                } else {
                    a.kind = SHED_ACT_PLAY;
                    shed_set_pick(hand, moves[pick].counts, &a.cards);
                }
            }
            if (shed_game_apply(g, &a) != SHED_OK)
                w->refused++;
            w->actions++;
        }
        w->voided += shed_game_settlement(g)->voided;
        w->deals++;
    }
    w->cpu = thread_cpu_seconds() - c0;
    free(moves);
    shed_game_destroy(g);
    return NULL;
}

static void bench_deals(int threads)
{
    pthread_t tid[64];
    worker_t w[64] = {{0}};
    int64_t t0 = clock_mono_ns();
    stop_at_ns = t0 + (int64_t)(seconds * 1e9);
    for (int i = 0; i < threads; i++) {
        w[i].seed = (uint64_t)i + 1;
        pthread_create(&tid[i], NULL, bench_deals_worker, &w[i]);
    }
    long deals = 0, actions = 0, voided = 0, refused = 0;
    double per_cpu = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        per_cpu += (double)w[i].deals / w[i].cpu;
        deals += w[i].deals;
        actions += w[i].actions;
        voided += w[i].voided;
        refused += w[i].refused;
    }
    double secs = (double)(clock_mono_ns() - t0) / 1e9;
    printf("ddz_bot_deals_per_sec %.0f wall, %.0f with each thread on its own core (per CPU "
           "second, summed)  (%d threads, %.1f actions/deal, %.1f%% thrown in, %ld deals, %ld "
           "refused)\n",
           (double)deals / secs, per_cpu, threads, (double)actions / (double)deals,
           100.0 * (double)voided / (double)deals, deals, refused);
}

int main(int argc, char **argv)
{
    int threads = 2;
    if (argc > 1)
        seconds = atof(argv[1]);
    if (argc > 2)
        threads = atoi(argv[2]);
    if (seconds <= 0 || seconds > 600 || threads < 1 || threads > 64) {
        fprintf(stderr, "usage: bench_trad [seconds 0..600] [threads 1..64]\n");
        return 2;
    }
    bench_movegen();
    bench_deals(threads);
    return 0;
}
