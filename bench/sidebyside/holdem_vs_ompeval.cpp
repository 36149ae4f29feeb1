// holdem_vs_ompeval -- croupier's hand evaluators and OMPEval measured in alternating passes
// inside one process, so that both see the same machine: on a shared host the speed of either
// program moves by up to 2x from one minute to the next, and two programs run one after the
// other are not compared under the same conditions. OMPEval is built from its own repository
// (https://github.com/zekyll/OMPEval, never copied here); build.sh compiles this driver against
// such a checkout. The croupier side is C compiled with the project's release flags
// (holdem_loops.c); the OMPEval side uses OMPEval's own flags and API.
//
// Passes, repeated `rounds` times (default 15), each pass timed by the thread's CPU clock:
//   enumeration: all 133,784,560 seven-card hands, cards in increasing order, one more card per
//     loop level (croupier: the state machine of holdem_enum.h; OMPEval: Hand + Hand(card));
//   random: 10,000,000 random seven-card hands stored as card bytes (the same hands for both,
//     the xorshift of bench_holdem_eval.c), evaluated from the cards (croupier:
//     holdem_cards_value(); OMPEval: the hand built card by card, then evaluate()).
// Prints each pass, then per measurement the medians, the median ratio and in how many passes
// croupier was ahead. Checksums make sure no work is optimised away.
#include "omp/HandEvaluator.h"
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "holdem_loops.h"

static double cpu_s()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x853c49e6748fea9bull;
static unsigned rnd52()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)((rng >> 32) % 52);
}

static uint64_t omp_enum_sum(omp::HandEvaluator &eval)
{
    uint64_t sum = 0;
    for (unsigned a = 0; a < 52; a++) {
        omp::Hand ha = omp::Hand::empty() + omp::Hand(a);
        for (unsigned b = a + 1; b < 52; b++) {
            omp::Hand hb = ha + omp::Hand(b);
            for (unsigned c = b + 1; c < 52; c++) {
                omp::Hand hc = hb + omp::Hand(c);
                for (unsigned d = c + 1; d < 52; d++) {
                    omp::Hand hd = hc + omp::Hand(d);
                    for (unsigned e = d + 1; e < 52; e++) {
                        omp::Hand he = hd + omp::Hand(e);
                        for (unsigned f = e + 1; f < 52; f++) {
                            omp::Hand hf = he + omp::Hand(f);
                            for (unsigned g = f + 1; g < 52; g++)
                                sum += eval.evaluate(hf + omp::Hand(g));
                        }
                    }
                }
            }
        }
    }
    return sum;
}

static uint64_t omp_random_sum(omp::HandEvaluator &eval, const std::vector<std::array<uint8_t, 8>> &cards)
{
    uint64_t sum = 0;
    for (const auto &c : cards) {
        omp::Hand h = omp::Hand::empty();
        h += omp::Hand(c[0]);
        h += omp::Hand(c[1]);
        h += omp::Hand(c[2]);
        h += omp::Hand(c[3]);
        h += omp::Hand(c[4]);
        h += omp::Hand(c[5]);
        h += omp::Hand(c[6]);
        sum += eval.evaluate(h);
    }
    return sum;
}

struct series {
    const char *what;
    std::vector<double> ours, theirs;
    uint64_t sum_ours, sum_theirs;
};

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static void summary(const series &s)
{
    std::vector<double> ratio;
    int ahead = 0;
    for (size_t i = 0; i < s.ours.size(); i++) {
        ratio.push_back(s.ours[i] / s.theirs[i]);
        ahead += s.ours[i] > s.theirs[i];
    }
    printf("%s: croupier median %.0f M/s (best %.0f), OMPEval median %.0f M/s (best %.0f); ratio "
           "median %.2f (min %.2f, max %.2f); croupier ahead in %d of %zu passes; checksums %llu %llu\n",
           s.what, median(s.ours), *std::max_element(s.ours.begin(), s.ours.end()),
           median(s.theirs), *std::max_element(s.theirs.begin(), s.theirs.end()), median(ratio),
           *std::min_element(ratio.begin(), ratio.end()),
           *std::max_element(ratio.begin(), ratio.end()), ahead, s.ours.size(),
           (unsigned long long)s.sum_ours, (unsigned long long)s.sum_theirs);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    if (rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: holdem_vs_ompeval [ROUNDS 1..1000]\n");
        return 2;
    }
    void *machine = sbs_enum_create();
    if (machine == nullptr) {
        fprintf(stderr, "holdem_enum_create: out of memory\n");
        return 1;
    }
    omp::HandEvaluator eval;
    const int hands = 10000000;
    std::vector<std::array<uint8_t, 8>> cards(hands);
    for (auto &row : cards) {
        uint64_t used = 0;
        row = {};
        for (int k = 0; k < 7;) {
            unsigned c = rnd52();
            if (used & (1ull << c))
                continue;
            used |= 1ull << c;
            row[k++] = (uint8_t)c;
        }
    }
    const uint8_t(*rows)[8] = reinterpret_cast<const uint8_t(*)[8]>(cards.data());
    series en{"enumeration (133,784,560 hands)", {}, {}, 0, 0};
    series rnd{"random (10,000,000 card arrays)", {}, {}, 0, 0};
    for (int i = 0; i < rounds; i++) {
        double t0 = cpu_s();
        en.sum_ours = sbs_enum_sum(machine);
        double t1 = cpu_s();
        en.sum_theirs = omp_enum_sum(eval);
        double t2 = cpu_s();
        rnd.sum_ours = sbs_random_sum(rows, hands);
        double t3 = cpu_s();
        rnd.sum_theirs = omp_random_sum(eval, cards);
        double t4 = cpu_s();
        en.ours.push_back(133784560.0 / (t1 - t0) * 1e-6);
        en.theirs.push_back(133784560.0 / (t2 - t1) * 1e-6);
        rnd.ours.push_back(hands / (t3 - t2) * 1e-6);
        rnd.theirs.push_back(hands / (t4 - t3) * 1e-6);
        printf("pass %2d: enumeration croupier %5.0f OMPEval %5.0f M/s | random croupier %4.0f "
               "OMPEval %4.0f M/s\n",
               i + 1, en.ours.back(), en.theirs.back(), rnd.ours.back(), rnd.theirs.back());
    }
    summary(en);
    summary(rnd);
    sbs_enum_destroy(machine);
    return 0;
}
