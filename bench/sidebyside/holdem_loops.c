/*
 * holdem_loops -- croupier's side of the paired evaluator comparison (holdem_vs_ompeval.cpp):
 * the same loops as bench_holdem_eval.c, compiled as C with the project's release flags
 * (-O3, no -march), so the comparison measures the code as croupier ships it.
 */
#include "holdem_loops.h"

#include "holdem_enum.h"
#include "holdem_eval.h"

void *sbs_enum_create(void)
{
    return holdem_enum_create();
}

void sbs_enum_destroy(void *e)
{
    holdem_enum_destroy(e);
}

uint64_t sbs_enum_sum(const void *ev)
{
    const holdem_enum_t *e = ev;
    uint64_t sum = 0;
    uint32_t s0 = holdem_enum_root(e);
    for (int a = 0; a < 52; a++) {
        uint32_t sa = holdem_enum_next(e, s0, a);
        for (int b = a + 1; b < 52; b++) {
            uint32_t sb = holdem_enum_next(e, sa, b);
            for (int c = b + 1; c < 52; c++) {
                uint32_t sc = holdem_enum_next(e, sb, c);
                for (int d = c + 1; d < 52; d++) {
                    uint32_t sd = holdem_enum_next(e, sc, d);
                    for (int f = d + 1; f < 52; f++) {
                        uint32_t sf = holdem_enum_next(e, sd, f);
                        for (int g = f + 1; g < 52; g++) {
                            uint32_t sg = holdem_enum_next(e, sf, g);
                            for (int h = g + 1; h < 52; h++)
                                sum += holdem_enum_value(e, sg, h);
                        }
                    }
                }
            }
        }
    }
    return sum;
}

uint64_t sbs_random_sum(const uint8_t (*cards)[8], int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += holdem_cards_value(cards[i], 7);
    return sum;
}
