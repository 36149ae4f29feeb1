/*
 * tk_window.c -- action windows (engine/tk.h "Action windows", docs/architecture.md §12 "Action
 * windows", docs/writing-a-game.md "Simultaneous decisions: action windows"): several seats
 * decide at once, each at its own pace, before one deadline. Internal to the kit: tk_int.h has
 * the contract. Everything runs on the table's desk thread.
 *
 * One timer per window, armed for the earliest automatic move still due: each pending seat has
 * its due time (the deadline; sooner for a server bot, a seat on trustee, a disconnected seat
 * of a trustee_when_away game, a leaver). When the timer fires, every pending seat whose time
 * has come gets the automatic move, in seat order, and the timer is armed for the next. Every
 * arm takes a new serial, so a timer of an earlier arm (or an earlier window) finds itself
 * stale; every window takes a new id, so the kit sees a game callback that closed the window
 * or opened another one and stops at once.
 */
#include "tk_int.h"

static uint32_t tk_bit(int seat)
{
    return 1u << (unsigned)seat;
}

/* (Re)arms the window's timer for its earliest due seat, under a new serial. */
static void tk_window_arm(tk_table_t *t)
{
    tk_window_t *w = &t->win;
    if (w->armed)
        rt_desk_timer_cancel(t->desk, w->timer);
    w->armed = false;
    if (!w->open || w->pending == 0)
        return;
    int64_t next = w->expired ? INT64_MAX : w->deadline_ms;
    for (int i = 0; i < t->nseats; i++)
        if ((w->pending & tk_bit(i)) && w->due_ms[i] < next)
            next = w->due_ms[i];
    int64_t delay = next - clock_mono_ms();
    w->serial++;
    int rc = rt_desk_timer_arm(t->desk, delay < 0 ? 0 : delay, TK_TIMER_WINDOW | (w->serial << 8),
                               &w->timer);
    w->armed = rc == 0;
    if (rc != 0)
        log_emit(LOG_ERROR, "tk_window_timer_failed", "{s:s,s:i}", "round", t->round_id, "errno",
                 -rc);
}

/* When seat's automatic move comes, the window opening (or the seat's state changing) now. */
static int64_t tk_window_due(tk_table_t *t, int seat, int64_t now)
{
    const tk_seat_t *s = &t->seat[seat];
    bool away_auto = t->eng->game->trustee_when_away || t->tour != NULL;
    int64_t due = t->win.deadline_ms;
    if (s->bot)
        due = now + t->eng->set.bot_ms;
    else if (s->trustee || s->state == TK_LEAVING || (s->away && away_auto))
        due = now + tk_trustee_ms(t);
    return due < t->win.deadline_ms ? due : t->win.deadline_ms;
}

/* Pushes the window's Turn: to each seat of it with seat = its own, to everyone else with seat
 * = its first (an old client that knows no window_seats still sees its own turn). */
static void tk_window_push(tk_table_t *t, Croupier__Turn *turn, int64_t ms)
{
    uint32_t list[TK_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->nseats; i++)
        if (t->win.pending & tk_bit(i))
            list[n++] = (uint32_t)i;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    turn->time_left_ms = (uint32_t)ms;
    turn->n_window_seats = n;
    turn->window_seats = list;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
    sm.turn = turn;
    bool others = false;
    for (int i = 0; i < t->nseats; i++) {
        if (!tk_seat_told(&t->seat[i]) || t->seat[i].bot)
            continue; /* nobody to tell: no event number spent */
        if (t->win.pending & tk_bit(i)) {
            turn->seat = (uint32_t)i;
            tk_push_seat(t, i, &sm);
        } else {
            others = true;
        }
    }
    if (others) {
        turn->seat = list[0];
        for (int i = 0; i < t->nseats; i++)
            if (tk_seat_told(&t->seat[i]) && !t->seat[i].bot && !(t->win.pending & tk_bit(i)))
                tk_push_seat(t, i, &sm);
    }
    turn->seat = list[0]; /* the spectators' variant: the one of a seat outside the window */
    tk_push_watch(t, &sm);
    turn->n_window_seats = 0;
    turn->window_seats = NULL;
}

int tk_window_open(tk_table_t *t, uint32_t seats, int64_t ms, Croupier__Turn *turn)
{
    if (!rt_desk_in_round(t->desk) || t->settling)
        return -EINVAL;
    uint32_t mask = 0;
    for (int i = 0; i < t->nseats; i++)
        if ((seats & tk_bit(i)) && t->seat[i].playing)
            mask |= tk_bit(i);
    if (mask == 0)
        return -EINVAL;
    if (ms <= 0)
        ms = t->eng->set.action_ms;
    tk_turn_clear(t); /* a turn, or the window before: gone, without an automatic move */
    tk_window_t *w = &t->win;
    int64_t now = clock_mono_ms();
    w->open = true;
    w->expired = false;
    w->id++;
    w->seats = w->pending = mask;
    w->deadline_ms = now + ms;
    for (int i = 0; i < t->nseats; i++)
        w->due_ms[i] = (mask & tk_bit(i)) ? tk_window_due(t, i, now) : w->deadline_ms;
    tk_window_arm(t);
    if (!w->armed) {
        tk_window_close(t);
        return -EIO;
    }
    Croupier__Turn bare = CROUPIER__TURN__INIT;
    tk_window_push(t, turn != NULL ? turn : &bare, ms);
    return 0;
}

void tk_window_close(tk_table_t *t)
{
    tk_window_t *w = &t->win;
    if (w->armed)
        rt_desk_timer_cancel(t->desk, w->timer);
    w->armed = false;
    w->open = false;
    w->pending = 0;
}

int tk_window_done(tk_table_t *t, int seat)
{
    tk_window_t *w = &t->win;
    if (!w->open || seat < 0 || seat >= t->nseats || !(w->pending & tk_bit(seat)))
        return -ENOENT;
    w->pending &= ~tk_bit(seat);
    if (w->pending == 0) {
        tk_window_close(t);
        return 0;
    }
    return __builtin_popcount(w->pending);
}

bool tk_window_pending(const tk_table_t *t, int seat)
{
    return t->win.open && seat >= 0 && seat < t->nseats && (t->win.pending & tk_bit(seat));
}

uint32_t tk_window_seats(const tk_table_t *t)
{
    return t->win.open ? t->win.pending : 0;
}

bool tk_window_refused(tk_table_t *t, gs_request_t *req, int seat)
{
    tk_window_t *w = &t->win;
    if (!w->open || (w->pending & tk_bit(seat)))
        return false;
    tk_refuse(t, req, CROUPIER__ERROR_CODE__NOT_YOUR_TURN,
              (w->seats & tk_bit(seat)) ? "your decision in this action window is made"
                                        : "not in this action window");
    return true;
}

void tk_window_hurry(tk_table_t *t, int seat)
{
    tk_window_t *w = &t->win;
    if (!w->open || !(w->pending & tk_bit(seat)))
        return;
    int64_t due = clock_mono_ms() + tk_trustee_ms(t);
    if (due < w->due_ms[seat]) {
        w->due_ms[seat] = due;
        tk_window_arm(t);
    }
}

void tk_window_restore(tk_table_t *t, int seat)
{
    tk_window_t *w = &t->win;
    const tk_seat_t *s = &t->seat[seat];
    if (!w->open || w->expired || !(w->pending & tk_bit(seat)) || s->bot || s->trustee ||
        s->state == TK_LEAVING || w->due_ms[seat] == w->deadline_ms)
        return;
    w->due_ms[seat] = w->deadline_ms;
    tk_window_arm(t);
}

/* seat's automatic move (its time came): a server bot's move, or the game's automatic move for a
 * seat on trustee (counted as such) or one that ran out of the window (a timeout; it goes on
 * trustee). A seat the move leaves pending gets its next one after trustee_ms (bot_ms). */
static void tk_window_auto(tk_table_t *t, int seat)
{
    tk_window_t *w = &t->win;
    tk_seat_t *s = &t->seat[seat];
    const tk_game_t *gm = t->eng->game;
    void (*move)(tk_table_t *, void *, int) =
        gm->window_timeout != NULL ? gm->window_timeout : gm->timeout;
    if (s->bot) {
        if (gm->bot_move != NULL)
            move = gm->bot_move;
    } else if (s->trustee) {
        metrics_add(t->eng->m_auto, 1);
    } else {
        metrics_add(t->eng->m_timeouts, 1);
        s->trustee = true;
    }
    uint64_t id = w->id;
    move(t, t->g, seat);
    if (w->open && w->id == id && (w->pending & tk_bit(seat))) {
        int64_t now = clock_mono_ms();
        w->due_ms[seat] = now + (s->bot ? t->eng->set.bot_ms : tk_trustee_ms(t));
        if (w->due_ms[seat] <= now)
            w->due_ms[seat] = now + 1; /* never a loop within one firing */
    }
}

void tk_window_timer(tk_table_t *t, uint64_t serial)
{
    tk_window_t *w = &t->win;
    if (!w->open || !w->armed || serial != w->serial)
        return; /* stale: an earlier arm, or a window closed since */
    w->armed = false;
    if (!rt_desk_in_round(t->desk)) {
        tk_window_close(t);
        return;
    }
    int64_t now = clock_mono_ms();
    uint32_t due = 0;
    for (int i = 0; i < t->nseats; i++)
        if ((w->pending & tk_bit(i)) &&
            (w->due_ms[i] <= now || (!w->expired && w->deadline_ms <= now)))
            due |= tk_bit(i);
    /* Past the deadline, a seat left pending by its automatic move is on trustee: its next one
     * comes after trustee_ms (its due time), the deadline no longer counts. */
    if (w->deadline_ms <= now)
        w->expired = true;
    uint64_t id = w->id;
    for (int i = 0; i < t->nseats; i++) {
        if (!(due & tk_bit(i)))
            continue;
        if (!w->open || w->id != id)
            return; /* the game closed the window, or opened another (it has its own timer) */
        if (w->pending & tk_bit(i))
            tk_window_auto(t, i);
    }
    if (w->open && w->id == id)
        tk_window_arm(t);
}

void tk_window_snapshot(tk_table_t *t, Croupier__Snapshot *s, uint32_t *buf)
{
    tk_window_t *w = &t->win;
    if (!w->open)
        return;
    size_t n = 0;
    for (int i = 0; i < t->nseats; i++)
        if (w->pending & tk_bit(i))
            buf[n++] = (uint32_t)i;
    s->n_window_seats = n;
    s->window_seats = buf;
    int64_t left = w->expired ? 0 : w->deadline_ms - clock_mono_ms();
    s->has_time_left_ms = true;
    s->time_left_ms = (uint32_t)(left < 0 ? 0 : left);
}
