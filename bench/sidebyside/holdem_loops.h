/*
 * holdem_loops -- croupier's side of the paired evaluator comparison (holdem_vs_ompeval.cpp),
 * callable from C++ without croupier's headers.
 */
#ifndef CROUPIER_BENCH_HOLDEM_LOOPS_H
#define CROUPIER_BENCH_HOLDEM_LOOPS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Builds the state machine of holdem_enum.h; NULL when memory runs out. */
void *sbs_enum_create(void);
void sbs_enum_destroy(void *e);
/* Every seven-card hand through the state machine, cards in increasing order: sum of values. */
uint64_t sbs_enum_sum(const void *e);
/* n hands of 7 cards (rows of 8 bytes) evaluated with holdem_cards_value(): sum of values. */
uint64_t sbs_random_sum(const uint8_t (*cards)[8], int n);
#ifdef __cplusplus
}
#endif

#endif
