/*
 * money_gen -- deterministic settlements shared by the money tests, the producer child process
 * and the settle benchmark, so that a checker can recompute every wallet from the round ids.
 *
 * Round (desk, seq) of server 1 moves chips among three of MONEY_GEN_PLAYERS players:
 * the first wins 2x - rake, the other two lose x each; x = 1 + seq % 7, rake = seq % 3.
 */
#ifndef CROUPIER_MONEY_GEN_H
#define CROUPIER_MONEY_GEN_H

#include <stdint.h>
#include <stdio.h>

#include "money.h"

#define MONEY_GEN_PLAYERS 8
#define MONEY_GEN_START 1000000000LL /* every player's starting balance */
#define MONEY_GEN_GAME "gen"

static const char *const money_gen_names[MONEY_GEN_PLAYERS] = {"g0", "g1", "g2", "g3",
                                                               "g4", "g5", "g6", "g7"};

static inline void money_gen_settlement(uint64_t epoch, uint64_t desk, uint64_t seq,
                                        money_settlement_t *s)
{
    int base = (int)((desk * 3 + seq) % MONEY_GEN_PLAYERS);
    int idx[3] = {base, (int)((base + 1 + seq % 3) % MONEY_GEN_PLAYERS),
                  (int)((base + 4 + seq % 4) % MONEY_GEN_PLAYERS)};
    int64_t x = 1 + (int64_t)(seq % 7), rake = (int64_t)(seq % 3);
    *s = (money_settlement_t){.round = {.server = 1, .epoch = epoch, .desk = desk, .seq = seq},
                              .game = MONEY_GEN_GAME,
                              .nplayers = 3,
                              .rake = rake};
    for (int i = 0; i < 3; i++)
        s->players[i] = money_gen_names[idx[i]];
    s->deltas[0] = 2 * x - rake;
    s->deltas[1] = -x;
    s->deltas[2] = -x;
}

/* Adds round (desk, seq)'s deltas to expected[] (indexed like money_gen_names). */
static inline void money_gen_expect(uint64_t desk, uint64_t seq, int64_t expected[], int64_t *rake)
{
    money_settlement_t s;
    money_gen_settlement(0, desk, seq, &s);
    for (size_t i = 0; i < s.nplayers; i++)
        for (int p = 0; p < MONEY_GEN_PLAYERS; p++)
            if (s.players[i] == money_gen_names[p])
                expected[p] += s.deltas[i];
    *rake += s.rake;
}

#endif
