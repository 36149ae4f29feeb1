/*
 * bot_shed_view -- the snapshot a shedding-game bot sees, built by the bot unit tests
 * (test_bot_guandan.c, test_bot_shed_options.c): seat 1 of desk 9 to act, playing.
 */
#ifndef CROUPIER_TEST_BOT_SHED_VIEW_H
#define CROUPIER_TEST_BOT_SHED_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bot_strategy.h"
#include "client.pb-c.h"

/*
 * Fills *sn and *ss (zeroed to their INIT values first): `game`, seat 1 of desk 9 to act, the
 * playing phase, the hand's nhand wire cards copied into hand_buf (which must hold them; ss
 * points into it). sn->shedding points to ss.
 */
static inline void bot_shed_view_init(Croupier__Snapshot *sn, Croupier__SheddingState *ss,
                                      const char *game, uint8_t *hand_buf, const uint8_t *hand,
                                      size_t nhand)
{
    Croupier__Snapshot s0 = CROUPIER__SNAPSHOT__INIT;
    Croupier__SheddingState ss0 = CROUPIER__SHEDDING_STATE__INIT;
    *sn = s0;
    *ss = ss0;
    sn->desk_id = 9;
    sn->your_seat = 1;
    sn->game = (char *)game;
    sn->has_turn_seat = true;
    sn->turn_seat = 1;
    sn->state_case = CROUPIER__SNAPSHOT__STATE_SHEDDING;
    sn->shedding = ss;
    ss->phase = CROUPIER__SHEDDING_PHASE__SHEDDING_PLAYING;
    memcpy(hand_buf, hand, nhand);
    ss->has_hand = true;
    ss->hand.data = hand_buf;
    ss->hand.len = nhand;
}

/* The play on the table: n wire cards (copied into last_buf) played by seat `by`. */
static inline void bot_shed_view_beat(Croupier__SheddingState *ss, uint8_t *last_buf,
                                      const uint8_t *cards, size_t n, uint32_t by)
{
    memcpy(last_buf, cards, n);
    ss->has_last_play = true;
    ss->last_play.data = last_buf;
    ss->last_play.len = n;
    ss->has_last_play_seat = true;
    ss->last_play_seat = by;
}

/* Frees what the strategy holds in st (not st itself). */
static inline void bot_shed_view_free(const bot_strategy_ops_t *ops, void *st)
{
    if (ops->free_state)
        ops->free_state(st);
}

/*
 * The bot's answer to the view: a fresh strategy state in st (the old one freed, as after a
 * Resume), seated with sn, then decide() with an rng from seed. Returns decide()'s result (1
 * with *mv, 0 for nothing).
 */
static inline int bot_shed_view_decide(const bot_strategy_ops_t *ops, void *st,
                                       const bot_seat_t *seat, const Croupier__Snapshot *sn,
                                       uint64_t seed, bot_move_t *mv)
{
    bot_shed_view_free(ops, st);
    memset(st, 0, ops->state_size);
    ops->on_seat(st, seat, sn);
    bot_rng_t rng = {.s = seed * 0x9E3779B97F4A7C15ULL + 1};
    bot_move_init(mv);
    int delay = 0;
    return ops->decide(st, seat, &rng, mv, &delay);
}

#endif
