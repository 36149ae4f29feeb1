/*
 * tk_table.c -- the table desk (docs/architecture.md §12 "Desks"): its callbacks (requests,
 * messages, timers, intake stopped, the drain's void, the fence, destroy), the requests of a
 * seated player (Action, Leave, Resume), a join reaching its seat, the server bots that fill it,
 * and the opening of a table desk for the lobby. Internal to the kit: tk_int.h has the contract.
 *
 * Every callback enters through tk_enter(), which sets t->desk: only from there on may the
 * table's functions of any kit file run. Nothing here runs on another thread.
 */
#include "tk_int.h"

/* ---- requests ---------------------------------------------------------------------------- */

int tk_find(const tk_table_t *t, uint64_t player)
{
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state != TK_EMPTY && t->seat[i].player == player)
            return i;
    return -1;
}

void tk_refuse(tk_table_t *t, gs_request_t *req, Croupier__ErrorCode code, const char *why)
{
    tk_count_refusal(t->eng, code);
    gs_reply(gs_of_desk(t->desk), req, code, why, NULL);
}

static void tk_action(tk_table_t *t, gs_request_t *req, int seat)
{
    tk_seat_t *s = &t->seat[seat];
    if (t->tour != NULL)
        tk_tour_acted(t, seat); /* a match reports who played none of a deal himself */
    if ((!rt_desk_in_round(t->desk) || !s->playing) && !t->eng->game->any_time_actions) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__NO_ROUND,
                  rt_desk_in_round(t->desk) ? "not dealt into this round" : "no round in progress");
        return;
    }
    if (rt_desk_in_round(t->desk) && tk_window_refused(t, req, seat))
        return; /* an action window is open and this seat has no decision pending in it */
    const Croupier__Action *a = req->frame->action;
    const tk_game_t *gm = t->eng->game;
    ProtobufCMessage *m = NULL;
    if (gm->action_desc == NULL) {
        /* An engine with its own member of Action.kind: it judges the Action itself. */
        if (a == NULL) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "an action needs a body");
            return;
        }
    } else {
        if (a == NULL || a->kind_case != CROUPIER__ACTION__KIND_GAME || a->game == NULL) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__WRONG_ENGINE,
                      "this table takes Action.game with the game's own action message");
            return;
        }
        frame_error_t err;
        m = frame_unpack_game(gm->action_desc, a->game->body.data, a->game->body.len,
                              &frame_limits_default, gm->action_rules, &err);
        if (m == NULL) {
            tk_refuse(t, req, err.code, err.detail);
            return;
        }
    }
    s->away = false;
    /* The time bank pays for what a move took beyond action_ms, once: only for an accepted
     * move that ended the seat's turn (a refusal, or a move that keeps the turn, costs none). */
    bool my_turn = seat == t->turn_seat && t->turn_armed && !s->trustee;
    uint64_t turn = t->turn_serial;
    int64_t used = clock_mono_ms() - t->turn_start_ms;
    const char *why = NULL;
    /* The player acts: a turn this move starts for the same seat (blackjack: the bet that
     * closes the window deals, and the seat's first hand is on turn) is theirs again, not the
     * trustee's short one. A refused move changes nothing. */
    bool was_trustee = s->trustee;
    s->trustee = false;
    Croupier__ErrorCode code =
        gm->action(t, t->g, seat, m != NULL ? m : (const ProtobufCMessage *)&a->base, &why);
    if (m != NULL)
        frame_free(m);
    if (code != CROUPIER__ERROR_CODE__OK) {
        s->trustee = was_trustee;
        tk_refuse(t, req, code, why);
        return;
    }
    if (my_turn && t->turn_serial != turn)
        tk_spend_bank(t, seat, used);
    s->trustee = false;
    tk_window_restore(t, seat); /* still deciding in a window: the player is back */
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result r = CROUPIER__RESULT__INIT;
    sm.has_event_seq = true;
    sm.event_seq = t->event_seq;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    sm.result = &r;
    gs_reply(gs_of_desk(t->desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

static void tk_leave(tk_table_t *t, gs_request_t *req, int i)
{
    tk_seat_t *s = &t->seat[i];
    gs_t *gs = gs_of_desk(t->desk);
    const Croupier__Leave *lv = req->frame->leave;
    bool disband = lv != NULL && lv->has_disband_room && lv->disband_room;
    if (t->room == NULL && disband) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__BAD_REQUEST, "this table is no private room");
        return;
    }
    if (t->room != NULL && !t->room->ended) {
        if (t->room->rec.state != CROUPIER__ROOM_STATE__ROOM_WAITING) {
            if (!disband && !s->bot) {
                /* The player goes: their turns are the automatic move's until they act again
                 * (or resume), so the room plays on without waiting out their turn time. */
                s->trustee = true;
                if (t->turn_seat == i && t->turn_armed)
                    tk_turn_hurry(t);
                tk_window_hurry(t, i);
            }
            tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_STARTED,
                      disband ? "the room has started: it can no longer be disbanded"
                              : "the room has started: you leave it when its last deal ends; "
                                "your turns are played for you meanwhile");
            return;
        }
        if (disband && s->player != t->room->rec.host) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__NOT_HOST, "only the host disbands the room");
            return;
        }
        if (disband || s->player == t->room->rec.host) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, NULL);
            tk_room_end(t, "the host disbanded the room");
            return;
        }
    }
    if (s->topping && (s->state == TK_SEATED || s->state == TK_CLOSED)) {
        /* Its top-up's chips are on their way from the wallet: it leaves once they are in the
         * seat account (tk_topup_done), so they go back with the stack. */
        s->leave_after_topup = true;
    } else if (s->state == TK_CLOSED) {
        tk_unseat(t, i); /* cashed out when the table closed */
    } else if (rt_desk_in_round(t->desk) && s->playing) {
        s->state = TK_LEAVING; /* after the round: a seat is never torn mid-round */
        s->trustee = true;     /* its turns meanwhile are the automatic move */
        if (t->turn_seat == i && t->turn_armed)
            tk_turn_hurry(t);
        tk_window_hurry(t, i); /* and its decision in a window */
    } else if (s->state == TK_SEATED) {
        tk_cash_out(t, i);
        tk_unseat(t, i);
    }
    gs_reply(gs, req, CROUPIER__ERROR_CODE__OK, NULL, NULL);
}

static tk_table_t *tk_enter(rt_desk_t *desk, void *state)
{
    tk_table_t *t = state;
    t->desk = desk;
    if (t->seat[0].acct[0] == '\0') {

        for (int i = 0; i < TK_MAX_SEATS; i++) /* an adopted room may have more seats */
            snprintf(t->seat[i].acct, sizeof t->seat[i].acct,
                     TK_ACCOUNT_PREFIX "%s.%" PRIu32 ".%" PRIu64 ".%" PRIx64 ".%d", t->eng->svc,
                     t->slot, t->epoch, rt_desk_id(desk), i);
    }
    return t;
}

/* ---- the table desk ---------------------------------------------------------------------- */

static void tk_table_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    tk_table_t *t = tk_enter(desk, state);
    if (req->kind == GS_REQ_WATCH) {
        tk_spect_request(t, req);
        return;
    }
    int i = tk_find(t, req->player_id);
    if (req->kind == GS_REQ_PLAYER_GONE) {
        if (i >= 0) {
            t->seat[i].away = true; /* the seat is kept: the player may resume */
            if ((t->eng->game->trustee_when_away || t->tour != NULL) && t->turn_seat == i &&
                t->turn_armed)
                tk_turn_hurry(t);
            if (t->eng->game->trustee_when_away || t->tour != NULL)
                tk_window_hurry(t, i);
        }
        gs_request_free(req);
        return;
    }
    if (i >= 0 && t->seat[i].state == TK_BUYING && req->kind != GS_REQ_ACTION) {
        /* The player's join is in progress (its buy-in not applied yet): a retry of the join,
         * through any gateway, gets its seat once the buy-in is done. */
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "join in progress; retry");
        return;
    }
    if (i < 0 || !tk_seat_told(&t->seat[i])) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated at this table");
        return;
    }
    if (tk_tour_request_refused(t, req))
        return;
    if (t->move != TK_MOVE_NONE && t->move != TK_MOVE_ADOPTING &&
        (req->kind == GS_REQ_ACTION || req->kind == GS_REQ_LEAVE)) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                  "the table is moving to another server; retry");
        return;
    }
    switch (req->kind) {
    case GS_REQ_JOIN:
    case GS_REQ_RESUME: {
        tk_seat_t *s = &t->seat[i];
        bool away_auto = t->eng->game->trustee_when_away || t->tour != NULL;
        bool hurried = s->trustee || (s->away && away_auto);
        s->away = false;
        s->trustee = s->state == TK_LEAVING;
        if (hurried && !s->trustee && away_auto && t->turn_seat == i && t->turn_armed)
            tk_turn_restore(t);
        tk_window_restore(t, i); /* a decision pending in a window gets the rest of it */
        tk_reply_snapshot(t, req, i);
        if (t->tour != NULL)
            tk_tour_present(t); /* a match's deal may wait for him */
        return;
    }
    case GS_REQ_LEAVE:
        tk_leave(t, req, i);
        return;
    case GS_REQ_ACTION:
        tk_action(t, req, i);
        return;
    default:
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNKNOWN_REQUEST, "unknown request");
    }
}
/* A join with its buy-in chosen reaches the table: reserve a seat and submit the buy-in. */
void tk_table_join(tk_table_t *t, tk_join_t *j)
{
    gs_t *gs = gs_of_desk(t->desk);
    gs_request_t *req = j->req;
    t->joins_seen++;
    t->retiring = false; /* the lobby counted this join: it will not retire the table */
    int i = tk_find(t, req->player_id);
    if (i >= 0) {
        /* The same player's joins crossed on their way here (the gs routes a join of a player
         * it knows to be seated as a resume): the seat it has, or its join is in progress. */
        if (tk_seat_told(&t->seat[i]))
            tk_reply_snapshot(t, req, i);
        else
            tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "join in progress; retry");
        tk_tell_lobby(t);
        return;
    }
    if (t->closed || rt_intake_stopped(rt_desk_rt(t->desk))) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__DRAINING, "table closing");
        return;
    }
    if (t->room != NULL) {
        const Croupier__RoomJoin *rj = req->frame->room;
        if (rj != NULL && rj->create != NULL && t->room->rec.code[0] == '\0' &&
            t->room->create == NULL && !t->room->ended) {
            tk_room_create(t, j); /* the host sits down once the code is drawn */
            return;
        }
        if (tk_room_join_refused(t, req)) {
            tk_tell_lobby(t);
            return;
        }
    }
    for (i = 0; i < t->nseats && t->seat[i].state != TK_EMPTY; i++)
        ;
    if (i == t->nseats) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__TABLE_FULL, "table full");
        tk_tell_lobby(t);
        return;
    }
    tk_seat_t *s = &t->seat[i];
    s->player = req->player_id;
    s->bank_ms = t->eng->set.time_bank_ms;
    t->idle_serial++; /* an idle timer armed before this join is stale now */
    gs_seat(gs, s->player, rt_desk_id(t->desk)); /* a second join now reaches this seat */
    if (t->eng->game->money == TK_MONEY_WALLET) {
        tk_seated(t, i);
        tk_reply_joined(t, req, i);
        return;
    }
    s->state = TK_BUYING;
    s->buyin = j->amount;
    s->join_req = req;
    char player[24];
    tk_player_name(s->player, player, sizeof player);
    if (tk_submit_buyin(t, i, player, j->amount, false) != 0) {
        gs_seat(gs, s->player, 0);
        s->state = TK_EMPTY;
        s->player = 0;
        s->join_req = NULL;
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "wallet unavailable");
        tk_maybe_idle(t);
        tk_tell_lobby(t);
        return;
    }
    tk_sync(t);
}

int tk_seat_add_bot(tk_table_t *t)
{
    if (t->closed || rt_intake_stopped(rt_desk_rt(t->desk)))
        return -ESHUTDOWN;
    int i;
    for (i = 0; i < t->nseats && t->seat[i].state != TK_EMPTY; i++)
        ;
    if (i == t->nseats)
        return -ENOSPC;
    static _Atomic uint64_t next_bot = 1;
    tk_seat_t *s = &t->seat[i];
    s->player = TK_BOT_ID_BASE | next_bot++;
    s->bot = true;
    t->idle_serial++;
    if (t->eng->game->money == TK_MONEY_WALLET) {
        tk_seated(t, i);
        tk_tell_lobby(t);
        return i;
    }
    s->state = TK_BUYING;
    int64_t least;
    tk_buyin_range(t->eng, t->game, t->stake, &s->buyin, &least);
    if (tk_submit_buyin(t, i, t->eng->house, s->buyin, false) != 0) {
        memset(s, 0, offsetof(tk_seat_t, ops));
        tk_maybe_idle(t);
        return -ENOTCONN;
    }
    tk_tell_lobby(t);
    return i;
}

/* A table with a human and empty seats gets server bots after bot_fill_ms (tk_game_t.bots). */
void tk_maybe_fill(tk_table_t *t)
{
    /* A room gets server bots only when its host asked for them (then even with fill off). */
    bool room = t->room != NULL;
    if ((room && (!t->room->rec.bot_fill || t->room->ended)) || t->tour != NULL)
        return;
    if (!t->eng->game->bots || (!room && t->eng->set.bot_fill_ms < 0) || t->fill_armed ||
        t->closed || tk_humans(t) == 0 || tk_free_seats(t) == 0)
        return;
    long ms = t->eng->set.bot_fill_ms < 0 ? 0 : t->eng->set.bot_fill_ms;
    if (rt_desk_timer_arm(t->desk, ms, TK_TIMER_FILL, NULL) == 0)
        t->fill_armed = true;
}

static void tk_table_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    tk_table_t *t = tk_enter(desk, state);
    switch (msg->type) {
    case TK_MSG_JOIN: {
        tk_join_t *j = msg->ptr;
        msg->ptr = NULL;
        msg->free_fn = NULL;
        tk_table_join(t, j);
        free(j);
        return;
    }
    case TK_MSG_BUYIN_DONE:
        tk_buyin_done(t, (int)msg->arg, msg->arg2, msg->ptr);
        return;
    case TK_MSG_TOPUP_DONE:
        tk_topup_done(t, (int)msg->arg, msg->arg2, msg->ptr);
        return;
    case TK_MSG_SETTLED:
        tk_settled(t, msg->arg2, msg->ptr);
        return;
    case TK_MSG_ADOPT: {
        tk_join_t *j = msg->ptr;
        msg->ptr = NULL;
        msg->free_fn = NULL;
        gs_request_t *req = j->req;
        free(j);
        tk_table_adopt(t, req);
        return;
    }
    case TK_MSG_MOVE_DONE:
        tk_move_done(t, msg->ptr); /* the runtime frees the job after this */
        return;
    case TK_MSG_TOUR_START:
        tk_tour_start(t);
        return;
    case TK_MSG_TOUR_DONE:
        tk_tour_done(t, msg->ptr); /* the runtime frees the job after this */
        return;
    case TK_MSG_ADD_BOTS:
        t->bot_table = true;
        for (uint64_t k = 0; k < msg->arg; k++)
            if (tk_seat_add_bot(t) < 0)
                break;
        return;
    case TK_MSG_CASHOUT_DONE:
        if (t->pending_cashouts > 0 && --t->pending_cashouts == 0)
            tk_tell_closing(t);
        return;
    case TK_MSG_RETIRE:
        /* arg2 1: the lobby no longer routes joins here (it forgot the table), and every join
         * it sent has arrived; still empty, the table goes. 0: a join is on its way. */
        if (msg->arg2 == 1 && tk_free_seats(t) == t->nseats && !rt_desk_in_round(desk) &&
            !t->closed) {
            tk_game_close(t); /* empty for idle_ms: the table goes (e.g. its shoe revealed) */
            rt_desk_destroy(desk);
            return;
        }
        t->retiring = false;
        if (msg->arg2 == 1)
            log_emit(LOG_ERROR, "tk_retire_refused", "{s:I}", "desk", (json_int_t)rt_desk_id(desk));
        tk_maybe_idle(t);
        return;
    default:
        return;
    }
}

static void tk_table_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    tk_table_t *t = tk_enter(desk, state);
    uint64_t kind = cookie & 0xff, serial = cookie >> 8;
    if (kind == TK_TIMER_NOTICE) {
        if (!t->close_told)
            log_emit(LOG_WARN, "tk_cash_out_slow", "{s:i}", "pending", t->pending_cashouts);
        tk_tell_closing(t);
    } else if (kind == TK_TIMER_MOVE) {
        tk_move_timer(t);
    } else if (kind == TK_TIMER_ROOM) {
        tk_room_timer(t);
    } else if (kind == TK_TIMER_TOUR_ASK || kind == TK_TIMER_TOUR_RENEW) {
        tk_tour_timer(t, (int)kind);
    } else if (kind == TK_TIMER_TOUR_JOIN) {
        tk_tour_join_timer(t, serial);
    } else if (kind == TK_TIMER_GAME) {
        if (t->eng->game->on_timer != NULL)
            t->eng->game->on_timer(t, t->g, cookie >> 8);
    } else if (kind == TK_TIMER_FILL) {
        t->fill_armed = false;
        if (t->closed || tk_humans(t) == 0)
            return;
        while (tk_free_seats(t) > 0 && tk_seat_add_bot(t) >= 0)
            ;
    } else if (kind == TK_TIMER_GAP) {
        t->gap_armed = false;
        if (t->tour != NULL)
            tk_tour_ask(t); /* the director deals (tk_tour.c) */
        else
            tk_start_round(t);
    } else if (kind == TK_TIMER_IDLE) {
        t->idle_armed = false;
        if (serial != t->idle_serial || t->closed || t->retiring || tk_free_seats(t) != t->nseats ||
            rt_desk_in_round(desk))
            return;
        t->retiring = true;
        rt_msg_t m = {.type = TK_MSG_IDLE, .arg = rt_desk_id(desk), .arg2 = tk_seats_word(t)};
        rt_post(rt_desk_rt(desk), t->eng->lobby, &m);
    } else if (kind == TK_TIMER_WINDOW) {
        tk_window_timer(t, serial);
    } else if (kind == TK_TIMER_TURN && serial == t->turn_serial && t->turn_armed) {
        t->turn_armed = false;
        int seat = t->turn_seat;
        if (!rt_desk_in_round(desk) || seat < 0)
            return;
        tk_seat_t *s = &t->seat[seat];
        if (s->bot) {
            if (t->eng->game->bot_move != NULL)
                t->eng->game->bot_move(t, t->g, seat);
            else
                t->eng->game->timeout(t, t->g, seat);
            return;
        }
        if (s->trustee) {
            metrics_add(t->eng->m_auto, 1);
        } else {
            metrics_add(t->eng->m_timeouts, 1);
            s->bank_ms = 0;
            s->trustee = true;
        }
        t->eng->game->timeout(t, t->g, seat);
    }
}

static void tk_table_on_intake_stopped(rt_desk_t *desk, void *state)
{
    tk_table_t *t = tk_enter(desk, state);
    if (t->tour != NULL) {
        /* Between hands it goes now (unless a deal is being asked: its answer lets it go);
         * else after the hand (tk_tour_after_round). */
        if (!rt_desk_in_round(desk) && !t->settling)
            tk_tour_ask(t);
        return;
    }
    if (!rt_desk_in_round(desk) && !t->settling)
        tk_move_or_close(t);
    /* else: the round finishes, then the table moves or closes (tk_finish). */
}

static void tk_table_on_void(rt_desk_t *desk, void *state)
{
    tk_table_t *t = tk_enter(desk, state);
    if (t->tour != NULL) {
        if (rt_desk_in_round(desk))
            tk_void(t, CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT); /* dealt again elsewhere */
        tk_tour_stop_now(t, "the server stopped during the hand (voided: it is dealt again)");
        return;
    }
    if (t->move >= TK_MOVE_OFFERING && t->move <= TK_MOVE_WITHDRAWING) {
        /* Offered: the seat accounts are the offer's now (an adopter may be taking them); the
         * exit's recovery voids an offer nobody adopted and returns its chips. */
        log_emit(LOG_WARN, "tk_move_unfinished_at_drain_bound", "{s:s}", "offer", t->offer_id);
        tk_move_hold(t, false);
        return;
    }
    t->move = TK_MOVE_NONE;
    if (rt_desk_in_round(desk))
        tk_void(t, CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT);
    t->closed = false;
    t->move_refused = true;
    tk_close(t);
    tk_move_hold(t, false);
}

/*
 * The server fenced itself (gs.h gs_set_fenced; docs/queues.md "A server cut off from Redis"):
 * its lease could not be confirmed, and once it lapses another server may return this table's
 * chips. Everything stops now, without waiting for Redis: a round in play is voided (its seat
 * accounts still hold the stacks of its start: no chip moved), the seats are cashed out (queued:
 * applied if Redis comes back to this server, else the recovery returns them), and the players
 * are told TableClosing{CLOSING_STORE_UNREACHABLE} at once, so their gateways seat them
 * elsewhere. A round whose settlement is on its way is left to Redis: applied or not, the
 * seats' cash-outs queued behind it return exactly what the players hold; its players are told
 * now and get no RoundEnd.
 */
void tk_fence(tk_table_t *t)
{
    rt_desk_t *desk = t->desk;
    if (t->fenced)
        return;
    if (t->move >= TK_MOVE_OFFERING && t->move <= TK_MOVE_WITHDRAWING) {
        /* Offered: the seat accounts are the offer's (an adopter may be taking them, and its
         * players were sent there); the recovery voids an offer nobody adopted. */
        tk_move_hold(t, false);
        return;
    }
    if (t->move == TK_MOVE_ADOPTING)
        return; /* the adoption's answer comes first, then the table fences (tk_move_done) */
    t->fenced = true;
    log_emit(LOG_WARN, "tk_fenced", "{s:s,s:b,s:b,s:i}", "game", t->game, "in_round",
             rt_desk_in_round(desk), "settling", t->settling, "humans", rt_desk_humans(desk));
    t->move = TK_MOVE_NONE;
    if (rt_desk_in_round(desk) && !t->settling)
        tk_void(t, CROUPIER__VOID_REASON__VOID_STORE_UNREACHABLE); /* closes the table */
    t->move_refused = true;
    tk_close(t);
    tk_tell_closing(t);
    tk_move_hold(t, false);
}

static void tk_table_on_fence(rt_desk_t *desk, void *state)
{
    tk_fence(tk_enter(desk, state));
}

static void tk_table_on_destroy(rt_desk_t *desk, void *state)
{
    tk_table_t *t = tk_enter(desk, state);
    if (rt_desk_in_round(desk))
        tk_void(t, CROUPIER__VOID_REASON__VOID_SHUTDOWN);
    tk_spect_end(t, CROUPIER__ERROR_CODE__NO_SUCH_TABLE, "the table closed");
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state == TK_BUYING && t->seat[i].join_req != NULL)
            gs_reply(gs_of_desk(desk), t->seat[i].join_req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                     "server stopping", NULL);
    tk_adopt_answer_all(t, CROUPIER__ERROR_CODE__UNAVAILABLE, "server stopping", NULL);
    if (t->room != NULL && t->room->create != NULL) {
        gs_reply(gs_of_desk(desk), t->room->create->req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                 "server stopping", NULL);
        free(t->room->create);
    }
    free(t->room);
    tk_tour_destroy(t);
    tk_move_hold(t, false);
    metrics_add(t->eng->m_seated, -(double)rt_desk_humans(desk));
    rt_desk_set_humans(desk, 0);
    metrics_add(t->eng->m_tables, -1);
    t->eng->game->table_destroy(t->g);
    json_decref(t->history);
    free(t->snap);
    free(t);
}

static const gs_desk_ops_t tk_table_ops = {
    .on_request = tk_table_on_request,
    .on_timer = tk_table_on_timer,
    .on_intake_stopped = tk_table_on_intake_stopped,
    .on_void = tk_table_on_void,
    .on_fence = tk_table_on_fence,
    .on_message = tk_table_on_message,
    .on_destroy = tk_table_on_destroy,
};

/* Seats of a table of game: the game's own count, or the setting. */
int tk_game_seats(const tk_engine_t *eng, const char *game)
{
    int n = (int)eng->set.seats;
    if (eng->game->seats_for != NULL)
        n = eng->game->seats_for(game, n);
    return n < 2 ? 2 : n > TK_MAX_SEATS ? TK_MAX_SEATS : n;
}

/* Opens a table desk of game at stake -- room: a private room's (the table takes it on
 * success, with its seats and rules). Lobby thread. */
static int tk_table_open_with(tk_engine_t *eng, const char *game, int64_t stake, tk_room_t *room,
                              tk_tour_t *tour, rt_desk_id_t *out)
{
    tk_table_t *t = xcalloc(1, sizeof *t);
    t->eng = eng;
    snprintf(t->game, sizeof t->game, "%s", game);
    t->stake = stake;
    t->nseats = tk_game_seats(eng, game);
    if (room != NULL) {
        t->nseats = room->rec.seats;
        room_options_text(&room->rec, t->options, sizeof t->options);
    }
    t->slot = gs_server_slot(eng->gs);
    t->epoch = gs_epoch(eng->gs);
    t->button = -1;
    t->tour = tour; /* before table_create: the game asks tk_tour_table() */
    if (tour != NULL)
        t->nseats = tk_tour_seats(tour); /* the structure's seats_per_table (<= TK_MAX_SEATS) */
    t->turn_seat = -1;
    t->banker = t->last_banker = -1;
    t->g = eng->game->table_create(t, t->game, stake);
    if (t->g == NULL) {
        free(t->tour);
        free(t);
        return -EINVAL;
    }
    int rc = gs_desk_create(eng->gs, &tk_table_ops, t, -1, out);
    if (rc != 0) {
        eng->game->table_destroy(t->g);
        free(t->tour);
        free(t);
        return rc;
    }
    t->room = room;
    metrics_add(eng->m_tables, 1);
    metrics_add(eng->m_opened, 1);
    return 0;
}

int tk_table_open(tk_engine_t *eng, const char *game, int64_t stake, tk_room_t *room,
                  rt_desk_id_t *out)
{
    return tk_table_open_with(eng, game, stake, room, NULL, out);
}

int tk_table_open_tour(tk_engine_t *eng, const char *game, int64_t stake, tk_tour_t *tour,
                       rt_desk_id_t *out)
{
    return tk_table_open_with(eng, game, stake, NULL, tour, out);
}
