/*
 * bot_strategy.c -- the table of games bots can play, and the small helpers strategies share.
 */
#include "bot_strategy.h"

#include <string.h>

extern const bot_strategy_ops_t bot_strategy_test;
extern const bot_strategy_ops_t bot_strategy_doudizhu, bot_strategy_runfast, bot_strategy_bigtwo;
extern const bot_strategy_ops_t bot_strategy_guandan;
extern const bot_strategy_ops_t bot_strategy_holdem;
extern const bot_strategy_ops_t bot_strategy_blackjack;

/* One line per game. */
static const bot_strategy_ops_t *const strategies[] = {
    &bot_strategy_test,   &bot_strategy_doudizhu,  &bot_strategy_runfast, &bot_strategy_bigtwo,
    &bot_strategy_holdem, &bot_strategy_blackjack, &bot_strategy_guandan,
};

const bot_strategy_ops_t *bot_strategy_find(const char *game)
{
    for (size_t i = 0; i < sizeof strategies / sizeof strategies[0]; i++)
        if (strcmp(strategies[i]->game, game) == 0)
            return strategies[i];
    return NULL;
}

const char *bot_strategy_names(void)
{
    return "test, doudizhu, runfast, bigtwo, guandan, holdem, blackjack";
}

uint64_t bot_rng_next(bot_rng_t *r)
{
    /* xorshift64*; a zero state would stay zero. */
    if (r->s == 0)
        r->s = 0x9E3779B97F4A7C15ULL;
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

uint32_t bot_rng_below(bot_rng_t *r, uint32_t n)
{
    return n == 0 ? 0 : (uint32_t)((bot_rng_next(r) >> 32) % n);
}

void bot_move_init(bot_move_t *m)
{
    memset(m, 0, sizeof *m);
    croupier__action__init(&m->action);
    croupier__shedding_action__init(&m->shedding);
    croupier__holdem_action__init(&m->holdem);
    croupier__blackjack_action__init(&m->blackjack);
}
