/*
 * tk_bank.c -- the banker of banker games (engine/tk.h "tk_banker_set", docs/writing-a-game.md
 * "Banker games"): who may bank (the game's may_bank and the stack bank_stack asks), the round's
 * banker, and the rotation from one round's banker to the next. Internal to the kit: tk_int.h
 * has the contract. Everything runs on the table's desk thread.
 */
#include "tk_int.h"

/* The least stack a banker needs this round: bank_stack(), else min_stack(). */
static int64_t tk_bank_stack(tk_table_t *t)
{
    const tk_game_t *gm = t->eng->game;
    return gm->bank_stack != NULL ? gm->bank_stack(t, t->g) : tk_min_stack(t);
}

bool tk_banker_eligible(tk_table_t *t, int seat)
{
    if (seat < 0 || seat >= t->nseats || !rt_desk_in_round(t->desk) || t->settling ||
        !t->seat[seat].playing)
        return false;
    const tk_game_t *gm = t->eng->game;
    if (gm->may_bank != NULL && !gm->may_bank(t, t->g, seat))
        return false;
    return gm->money == TK_MONEY_WALLET || t->seat[seat].stack >= tk_bank_stack(t);
}

int tk_banker_set(tk_table_t *t, int seat)
{
    if (!tk_banker_eligible(t, seat))
        return -EINVAL;
    t->banker = seat;
    t->last_banker = seat;
    if (t->history != NULL)
        json_object_set_new(t->history, "banker", json_integer(seat));
    return 0;
}

int tk_banker(const tk_table_t *t)
{
    return t->banker;
}

int tk_banker_next(tk_table_t *t)
{
    /* After the last banker (itself last), or from the button on (itself first). */
    int from = t->last_banker >= 0 ? t->last_banker : t->button - 1;
    for (int k = 1; k <= t->nseats; k++) {
        int i = ((from + k) % t->nseats + t->nseats) % t->nseats;
        if (tk_banker_eligible(t, i))
            return i;
    }
    return -1;
}
