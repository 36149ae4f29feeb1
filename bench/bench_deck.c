/*
 * bench_deck -- the kit's deck source (common/deck.h, docs/fairness.md), on one core:
 *
 *   1. deck_shuffle() of a 52-card deck (OpenSSL's DRBG, Lemire's rejection, Fisher-Yates).
 *      Figure: decks per second (target >= 1,000,000), also for 108 cards and a 6-deck shoe.
 *   2. deck_deal() of a 52-card deck: the shuffle, a 32-byte nonce and the SHA-256 commitment,
 *      what tk_deal_shuffle() does once per round. Figure: microseconds per round, and the
 *      commitment's own share (deck_commitment() alone).
 *   3. the per-card commitment (docs/fairness.md "The per-card commitment"): deck_deal() then
 *      deck_deal_per_card() of a 52-card deck, what tk_deal_shuffle_per_card() does once per
 *      round of hold'em and Zha Jin Hua (52 HMAC-SHA256 card nonces, 52 leaf SHA-256s, the
 *      commitment over the leaves). Figure: microseconds per round, and the per-card
 *      commitment's own share (deck_commitment_cards() alone).
 *   4. deck_random_bytes(): raw generator output, MB/s (what croupier-rules rng-raw writes).
 *
 * Each figure is printed per wall-clock second and per CPU second of the thread (the machine
 * is shared). Usage: bench_deck [seconds-per-figure (default 2)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "deck.h"

static double seconds = 2.0;

static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint8_t sink;

static void bench_shuffle(size_t n, const char *name)
{
    uint8_t d[DECK_MAX_CARDS];
    for (size_t i = 0; i < n; i++)
        d[i] = (uint8_t)(i % 52);
    long done = 0;
    double c0 = thread_cpu_seconds();
    int64_t t0 = clock_mono_ns(), t1;
    do {
        for (int k = 0; k < 1000; k++)
            if (deck_shuffle(d, n) != 0) {
                fprintf(stderr, "bench_deck: the generator failed\n");
                exit(1);
            }
        done += 1000;
        t1 = clock_mono_ns();
    } while (t1 - t0 < (int64_t)(seconds * 1e9));
    sink = d[0];
    double secs = (double)(t1 - t0) / 1e9, cpu = thread_cpu_seconds() - c0;
    printf("deck_shuffle_%s_per_sec %.0f wall, %.0f per CPU second (1 thread)\n", name,
           (double)done / secs, (double)done / cpu);
}

static void bench_deal(void)
{
    uint8_t d[52];
    deck_deal_t deal;
    for (int i = 0; i < 52; i++)
        d[i] = (uint8_t)i;
    long done = 0;
    double c0 = thread_cpu_seconds();
    int64_t t0 = clock_mono_ns(), t1;
    do {
        for (int k = 0; k < 1000; k++)
            if (deck_deal(&deal, d, 52) != 0) {
                fprintf(stderr, "bench_deck: the generator failed\n");
                exit(1);
            }
        done += 1000;
        t1 = clock_mono_ns();
    } while (t1 - t0 < (int64_t)(seconds * 1e9));
    double secs = (double)(t1 - t0) / 1e9, cpu = thread_cpu_seconds() - c0;
    printf("deck_deal_52_us_per_round %.3f wall, %.3f CPU (shuffle + nonce + commitment)\n",
           secs * 1e6 / (double)done, cpu * 1e6 / (double)done);

    uint8_t out[DECK_COMMIT_LEN];
    done = 0;
    c0 = thread_cpu_seconds();
    t0 = clock_mono_ns();
    do {
        for (int k = 0; k < 1000; k++) {
            deal.nonce[0] = (uint8_t)k;
            deck_commitment(deal.cards, 52, deal.nonce, out);
        }
        done += 1000;
        t1 = clock_mono_ns();
    } while (t1 - t0 < (int64_t)(seconds * 1e9));
    sink = out[0];
    secs = (double)(t1 - t0) / 1e9;
    cpu = thread_cpu_seconds() - c0;
    printf("deck_commitment_52_us %.3f wall, %.3f CPU (SHA-256 of 102 bytes)\n",
           secs * 1e6 / (double)done, cpu * 1e6 / (double)done);
}

/* The per-card code of a hold'em card: the protocol's (games/holdem/holdem_engine.c). */
static uint8_t bench_code(uint8_t card)
{
    return (uint8_t)(card + 8);
}

static void bench_deal_per_card(void)
{
    uint8_t d[52];
    deck_deal_t deal;
    for (int i = 0; i < 52; i++)
        d[i] = (uint8_t)i;
    long done = 0;
    double c0 = thread_cpu_seconds();
    int64_t t0 = clock_mono_ns(), t1;
    do {
        for (int k = 0; k < 1000; k++) {
            if (deck_deal(&deal, d, 52) != 0) {
                fprintf(stderr, "bench_deck: the generator failed\n");
                exit(1);
            }
            deck_deal_per_card(&deal, bench_code);
        }
        done += 1000;
        t1 = clock_mono_ns();
    } while (t1 - t0 < (int64_t)(seconds * 1e9));
    sink = deal.commitment[0];
    double secs = (double)(t1 - t0) / 1e9, cpu = thread_cpu_seconds() - c0;
    printf("deck_deal_per_card_52_us_per_round %.3f wall, %.3f CPU (shuffle + nonce + "
           "per-card commitment)\n",
           secs * 1e6 / (double)done, cpu * 1e6 / (double)done);

    uint8_t out[DECK_COMMIT_LEN];
    done = 0;
    c0 = thread_cpu_seconds();
    t0 = clock_mono_ns();
    do {
        for (int k = 0; k < 1000; k++) {
            deal.nonce[0] = (uint8_t)k;
            deck_commitment_cards(deal.codes, 52, deal.nonce, out);
        }
        done += 1000;
        t1 = clock_mono_ns();
    } while (t1 - t0 < (int64_t)(seconds * 1e9));
    sink = out[0];
    secs = (double)(t1 - t0) / 1e9;
    cpu = thread_cpu_seconds() - c0;
    printf("deck_commitment_cards_52_us %.3f wall, %.3f CPU (52 HMAC-SHA256 + 52 SHA-256 of 51 "
           "bytes + SHA-256 of 1682 bytes)\n",
           secs * 1e6 / (double)done, cpu * 1e6 / (double)done);
}

static void bench_raw(void)
{
    static uint8_t buf[1 << 16];
    double bytes = 0;
    double c0 = thread_cpu_seconds();
    int64_t t0 = clock_mono_ns(), t1;
    do {
        if (deck_random_bytes(buf, sizeof buf) != 0) {
            fprintf(stderr, "bench_deck: the generator failed\n");
            exit(1);
        }
        bytes += sizeof buf;
        t1 = clock_mono_ns();
    } while (t1 - t0 < (int64_t)(seconds * 1e9));
    sink = buf[0];
    double secs = (double)(t1 - t0) / 1e9, cpu = thread_cpu_seconds() - c0;
    printf("deck_random_bytes_MB_per_sec %.0f wall, %.0f per CPU second\n", bytes / secs / 1e6,
           bytes / cpu / 1e6);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        seconds = atof(argv[1]);
        if (!(seconds > 0 && seconds <= 600)) {
            fprintf(stderr, "usage: bench_deck [seconds-per-figure (0 < s <= 600)]\n");
            return 2;
        }
    }
    bench_shuffle(52, "52");
    bench_shuffle(108, "108");
    bench_shuffle(312, "shoe312");
    bench_deal();
    bench_deal_per_card();
    bench_raw();
    return 0;
}
