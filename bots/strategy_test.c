/*
 * strategy_test -- plays the "test" engine (engine/testgame.c): rounds run by themselves; an
 * action of any kind during a round is shown as a Play. The engine pushes nothing when a round
 * begins, so the bot sends an action every 150..450 ms while seated; an accepted one is the sign
 * that a round runs (round_by_action), and NO_ROUND between rounds is expected. Its Snapshot
 * names the running round (the table kit's header, engine/tk.h), so a resume tells whether the
 * round the bot had open is still on (round_in_snapshot).
 */
#include "bot_strategy.h"

typedef struct {
    bool closing; /* TableClosing seen: stop acting until moved */
} st_test_t;

static void st_test_on_seat(void *st, const bot_seat_t *seat, const Croupier__Snapshot *snap)
{
    (void)seat;
    (void)snap;
    ((st_test_t *)st)->closing = false;
}

static void st_test_on_event(void *st, const bot_seat_t *seat, const Croupier__ServerMessage *m)
{
    (void)seat;
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING)
        ((st_test_t *)st)->closing = true;
}

static int st_test_decide(void *st, const bot_seat_t *seat, bot_rng_t *rng, bot_move_t *out,
                          int *delay_ms)
{
    (void)seat;
    *delay_ms = 150 + (int)bot_rng_below(rng, 300);
    if (((st_test_t *)st)->closing)
        return 0;
    /* The test engine takes any kind; a shedding pass is the smallest valid Action. */
    out->shedding.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    out->action.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    out->action.shedding = &out->shedding;
    return 1;
}

static bool st_test_refusal_expected(int code)
{
    /* Between rounds, and after the table closed (the seat is kept until the player leaves,
     * but no round starts there). */
    return code == CROUPIER__ERROR_CODE__NO_ROUND;
}

const bot_strategy_ops_t bot_strategy_test = {
    .game = "test",
    .engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL,
    .state_size = sizeof(st_test_t),
    .round_in_snapshot = true,
    .round_by_action = true,
    .on_seat = st_test_on_seat,
    .on_event = st_test_on_event,
    .decide = st_test_decide,
    .refusal_expected = st_test_refusal_expected,
};
