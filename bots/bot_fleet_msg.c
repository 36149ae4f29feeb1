/*
 * bot_fleet_msg.c -- what a bot does with the gateway's messages: the replies to its request
 * (Login, Resume, Join, Action, Leave; retriable refusals made again later as new requests)
 * and the pushed events (Deal, Turn, RoundEnd, Snapshot, Moved, TableClosing and its CRASHED
 * form, GoAway, a room's news, a pushed Error), each counted in the bot_book_t. Internal to the
 * fleet: bot_fleet_int.h has the contract.
 *
 * docs/bots.md "What a bot does", "Rooms (--room-seats N)" and "Bookkeeping and the report"
 * are the design; docs/protocol.md the messages. bot_fleet.c's read callback hands every
 * decoded message here (bot_on_reply, bot_on_event).
 */
#include "bot_fleet_int.h"

/* ---- replies ----------------------------------------------------------------------------- */

bool bot_code_retriable(const Croupier__Error *e)
{
    if (e->has_retriable && e->retriable)
        return true;
    switch (e->code) {
    case CROUPIER__ERROR_CODE__DRAINING:
    case CROUPIER__ERROR_CODE__UNAVAILABLE:
    case CROUPIER__ERROR_CODE__OVERLOADED:
    case CROUPIER__ERROR_CODE__RATE_LIMITED:
        return true;
    default:
        return false;
    }
}

/*
 * A retriable refusal: counted as expected and made again as a new request after a jittered
 * backoff, at most max_retries times; beyond that it is an unexpected error and the bot starts
 * over on a new connection.
 */
void bot_retry_later(bot_t *b, bot_req_kind_t kind, const Croupier__Error *e)
{
    bot_book_t *book = b->f->cfg.book;
    if (++b->rq_newtries > b->f->cfg.max_retries) {
        bot_book_error(book, bot_code_name(e->code), false);
        b->rq_newtries = 0;
        bot_req_clear(b);
        bot_drop(b, "retries exhausted", false);
        return;
    }
    bot_book_error(book, bot_code_name(e->code), true);
    bot_book_count(book, BOT_C_RETRIES);
    bot_req_clear(b);
    b->rq = RQ_NONE;
    b->st = kind == RQ_JOIN ? BS_JOIN : kind == RQ_RESUME ? BS_RESUME : b->st;
    /* The timer's handler looks at the state to know what to send again. */
    b->timer_is_action = false;
    bot_timer_arm(b->timer, 100 * b->rq_newtries + bot_jitter(b, 200 * b->rq_newtries));
}

static void bot_on_login(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    if (m->body_case != CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT) {
        const Croupier__Error *e =
            m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
        if (e != NULL && bot_code_retriable(e)) {
            bot_retry_later(b, RQ_LOGIN, e);
            return;
        }
        bot_book_error(book, e != NULL ? bot_code_name(e->code) : "login_bad_reply", false);
        bot_req_clear(b);
        bot_drop(b, "login refused", false);
        return;
    }
    bot_req_clear(b);
    b->rq_newtries = 0;
    bot_book_count(book, BOT_C_LOGINS);
    b->f->connected++;
    if (b->f->cfg.tournament != 0) {
        bot_fleet_tour_login(b); /* the seat is asked for, never resumed by memory */
        return;
    }
    if ((m->login_result->has_seated && m->login_result->seated) || b->has_seat) {
        /* Resume whenever we had a seat, even if the gateway does not say so: joining again
         * while seated could sit the player at two tables. */
        bot_send_resume(b);
        return;
    }
    bot_send_join(b);
}

/* The seat and the strategy's view from a Snapshot (a Resume's answer, or the table's state
 * after a whole-table Moved), checked against the table left when it follows such a move. */
static void bot_take_snapshot(bot_t *b, const Croupier__ServerMessage *m)
{
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    const Croupier__Snapshot *sn = m->snapshot;
    bool after_move = b->check_move;
    bot_set_seat(b, sn->desk_id, sn->your_seat, sn->engine, sn->game, sn->stake);
    if (b->check_move)
        bot_check_moved_table(b, sn);
    if (sn->room != NULL)
        bot_room_seen(b, sn->room, after_move);
    bot_seen_table(b, sn->seats, sn->n_seats);
    if (s->on_seat != NULL)
        s->on_seat(b->sst, &b->seat, sn);
    bot_game_body(b, m);
}

void bot_on_resume(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    if (b->rq_moved) {
        /* A Resume (a refresh of the view) sent before a TableClosing that ended the seat (a
         * match table re-paired or taken over by another server, a bust, no server to take the
         * seat) or before a Moved, answered after it: the answer is the old table's. Its
         * Snapshot is not taken (the seat is gone, or the bot sits at the new table); its
         * NOT_SEATED / NO_SUCH_DESK / TABLE_CLOSED are expected (match_hall: a Guandan bot's
         * refresh met a table its server gave up). What the closing or the Moved arranged (a
         * join on the bot timer, the new seat) goes on. */
        const Croupier__Error *oe =
            m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
        bool old_table =
            m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT
                ? !b->has_seat || m->snapshot->desk_id != b->seat.desk_id
                : oe != NULL && (oe->code == CROUPIER__ERROR_CODE__NOT_SEATED ||
                                 oe->code == CROUPIER__ERROR_CODE__NO_SUCH_DESK ||
                                 oe->code == CROUPIER__ERROR_CODE__TABLE_CLOSED);
        if (old_table) {
            const char *what = oe != NULL ? bot_code_name(oe->code) : "SNAPSHOT";
            if (oe != NULL)
                bot_book_error(book, what, true);
            log_emit(LOG_INFO, "bot_reply_for_old_seat", "{s:i,s:s,s:s,s:I,s:i}", "bot",
                     (int)b->idx, "request", "resume", "code", what, "desk",
                     (json_int_t)b->seat.desk_id, "attempts", (int)b->rq_attempts);
            bot_req_clear(b);
            b->rq_newtries = 0;
            if (b->st == BS_RESUME)
                b->st = b->has_seat ? BS_SEATED : BS_JOIN;
            if (b->st == BS_JOIN && !b->tour_out_waiting)
                bot_timer_set(b, 50, false); /* the join the closing put off (bot timer) */
            return;
        }
    }
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT) {
        const Croupier__Snapshot *sn = m->snapshot;
        /* A Resume sent before its table's TableClosing (a refresh of the view) and answered
         * after it: the Snapshot is the closing table's, and the closing stands -- a Moved or,
         * when no server took the seat, a second TableClosing follows. Taking the Snapshot as
         * a fresh seat forgot the closing, and that second TableClosing was then read as a
         * first one: the bot waited 15 s for a Moved that never came (crash_faults_failover-stop,
         * a Zha Jin Hua bot). Not after a reconnect: the seat may have moved meanwhile. */
        bool closing = b->closing_seen && !b->crash_wait && !b->lost_connection && b->has_seat &&
                       sn->desk_id == b->seat.desk_id;
        bot_req_clear(b);
        b->rq_newtries = 0;
        b->seat_doubt = false;
        bot_book_seated(book, b->idx, sn->desk_id, b->lost_connection, s->round_in_snapshot,
                        sn->round_id, bot_now_ms());
        if (sn->round_id != NULL && sn->round_id[0] != '\0')
            bot_book_round_started(book, b->idx, sn->desk_id, sn->round_id, bot_now_ms());
        bot_take_snapshot(b, m);
        if (closing) {
            b->closing_seen = true; /* bot_set_seat cleared it */
            b->st = BS_SEATED;
            int64_t left = b->closing_ms + 15000 - bot_now_ms(); /* the watchdog, re-armed */
            bot_timer_set(b, left > 100 ? (int)left : 100, false);
            return;
        }
        bot_after_seat(b);
        return;
    }
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    if (e != NULL && bot_code_retriable(e)) {
        bot_retry_later(b, RQ_RESUME, e);
        return;
    }
    bot_req_clear(b);
    if (e != NULL && (e->code == CROUPIER__ERROR_CODE__NOT_SEATED ||
                      e->code == CROUPIER__ERROR_CODE__NO_SUCH_DESK ||
                      e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED)) {
        /* The seat is gone (the table closed while we were away): join again. TABLE_CLOSED:
         * its server is gone (docs/gateway.md), the round we were in was crash-voided. */
        bool gone = e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED;
        if (gone)
            bot_book_crash_voided(book, b->idx, bot_now_ms());
        bot_book_error(book, bot_code_name(e->code), b->lost_connection || gone || b->seat_doubt);
        b->seat_doubt = false;
        bot_book_seated(book, b->idx, 0, b->lost_connection, true, NULL, bot_now_ms());
        b->has_seat = false;
        bot_send_join(b);
        return;
    }
    bot_book_error(book, e != NULL ? bot_code_name(e->code) : "resume_bad_reply", false);
    bot_drop(b, "resume refused", false);
}

static void bot_on_joined(bot_t *b, const Croupier__Joined *j, bool moved)
{
    bot_book_t *book = b->f->cfg.book;
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    if (j->room != NULL && !moved) {
        bot_fleet_t *f = b->f;
        if (f->cfg.room_seats > 0 && b->idx % (uint32_t)f->cfg.room_seats == 0) {
            bot_group_t *g = &f->groups[b->idx / (uint32_t)f->cfg.room_seats];
            snprintf(g->code, sizeof g->code, "%s", j->room->code);
            g->gen++;
            bot_book_count(book, BOT_C_ROOMS_CREATED);
        } else {
            bot_book_count(book, BOT_C_ROOMS_JOINED);
        }
        bot_room_seen(b, j->room, false);
    }
    bot_book_seated(book, b->idx, j->desk_id, false, false, NULL, bot_now_ms());
    bot_set_seat(b, j->desk_id, j->seat, j->engine, j->game, j->stake);
    /* A whole-table move keeps the seats seen at the old table: the Snapshot that follows is
     * checked against them. A seat moved alone (a crash, a drain's single move) is at another
     * table: its seats are the ones to know from now on. */
    if (!moved || !b->check_move)
        bot_seen_table(b, j->seats, j->n_seats);
    if (s->on_seat != NULL)
        s->on_seat(b->sst, &b->seat, NULL);
    if (moved && b->rq != RQ_NONE)
        return; /* a request is in flight; its reply continues the flow */
    bot_after_seat(b);
}

static void bot_on_join(bot_t *b, const Croupier__ServerMessage *m)
{
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT) {
        /* Seated already (a move the gateway made landed first): the seat's state. */
        bot_on_resume(b, m);
        return;
    }
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED) {
        bot_req_clear(b);
        b->rq_newtries = 0;
        bot_on_joined(b, m->joined, false);
        return;
    }
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    if (e != NULL && (bot_code_retriable(e) || e->code == CROUPIER__ERROR_CODE__TABLE_FULL)) {
        bot_retry_later(b, RQ_JOIN, e);
        return;
    }
    if (e != NULL && b->f->cfg.room_seats > 0 &&
        (e->code == CROUPIER__ERROR_CODE__ROOM_NOT_FOUND ||
         e->code == CROUPIER__ERROR_CODE__ROOM_ENDED ||
         e->code == CROUPIER__ERROR_CODE__ROOM_STARTED ||
         e->code == CROUPIER__ERROR_CODE__ROOM_FULL)) {
        /* The group's room went on without us (or is gone): wait for its next one. */
        bot_req_clear(b);
        bot_book_error(b->f->cfg.book, bot_code_name(e->code), true);
        b->st = BS_JOIN;
        bot_timer_set(b, 100 + bot_jitter(b, 100), false);
        return;
    }
    if (e != NULL && e->code == CROUPIER__ERROR_CODE__ALREADY_SEATED) {
        /* A seat the gateway still holds for us (a room's end crossing our request): see it;
         * NOT_SEATED then is expected (the gateway forgets it and we join). */
        bot_req_clear(b);
        bot_book_error(b->f->cfg.book, bot_code_name(e->code), true);
        b->seat_doubt = true;
        bot_send_resume(b);
        return;
    }
    bot_req_clear(b);
    bot_book_error(b->f->cfg.book, e != NULL ? bot_code_name(e->code) : "join_bad_reply", false);
    bot_drop(b, "join refused", false);
}

static void bot_on_action_reply(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    int64_t lat = clock_mono_ns() / 1000 - b->rq_sent_us;
    bool old_seat = b->rq_moved;
    bot_req_clear(b);
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    bot_book_latency(book, lat);
    if (e != NULL && e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED && !b->crash_wait && !old_seat) {
        /* The gateway found the seat's server gone: the round is crash-voided, join again. */
        bot_book_count(book, BOT_C_ACTIONS_REFUSED);
        bot_book_error(book, bot_code_name(e->code), true);
        bot_book_crash_voided(book, b->idx, bot_now_ms());
        b->action_abandoned = false;
        b->has_seat = false;
        evtimer_del(b->timer);
        bot_send_join(b);
        return;
    }
    if (e == NULL) {
        b->action_abandoned = false;
        bot_book_count(book, BOT_C_ACTIONS_OK);
        /* A move accepted after the table's TableClosing came (its answer was on its way)
         * starts nothing we could see end: the table stopped (its round voided or left to
         * Redis, counted at the closing). */
        if (s->round_by_action && b->has_seat && !b->closing_seen)
            bot_book_round_started(book, b->idx, b->seat.desk_id, NULL, bot_now_ms());
    } else {
        bot_book_count(book, BOT_C_ACTIONS_REFUSED);
        /* An action abandoned by a lost connection may still have been applied after the bot
         * resumed elsewhere: the next move can then find the turn gone. */
        bool stale = b->action_abandoned && (e->code == CROUPIER__ERROR_CODE__NOT_YOUR_TURN ||
                                             e->code == CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED ||
                                             e->code == CROUPIER__ERROR_CODE__NO_ROUND);
        b->action_abandoned = false;
        /* A Moved came while the action was in flight (maybe sent again after it, on
         * DEADLINE_EXCEEDED): it was made at the old table, and the gateway answers it for that
         * seat, never plays it at the new one (docs/gateway.md): TABLE_CLOSED when its server is
         * gone, NOT_SEATED / NO_SUCH_DESK from a live server that closed it. Those leave the new
         * seat alone; any other refusal stays unexpected. */
        /* The table moved on while it was in flight (a Deal, a Turn, a RoundEnd, a Snapshot
         * came first: a tournament table's hand re-dealt by its new host, an away seat's
         * automatic move, a round that ended): it was decided on a view that is gone, and the
         * turn or the move it made may be gone too. */
        bool overtaken = b->rq_view != b->view_changes &&
                         (e->code == CROUPIER__ERROR_CODE__NOT_YOUR_TURN ||
                          e->code == CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED ||
                          e->code == CROUPIER__ERROR_CODE__NO_ROUND);
        if (overtaken)
            log_emit(LOG_INFO, "bot_action_overtaken", "{s:i,s:s,s:I}", "bot", (int)b->idx,
                     "code", bot_code_name(e->code), "desk", (json_int_t)b->seat.desk_id);
        /* Decided on a tournament seat's Snapshot alone, at a table a new host took over mid-hand
         * (it re-deals the hand in play): refusals seen in the demo, not yet explained (docs/
         * bots.md "Tournaments"); counted apart and logged, never hidden among the others. */
        bool on_seat_snap = !overtaken &&
                            ((b->seat_view_set && b->rq_view == b->seat_view) ||
                             b->seat_first_hand) &&
                            (e->code == CROUPIER__ERROR_CODE__NOT_YOUR_TURN ||
                             e->code == CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
        if (on_seat_snap) {
            bot_book_error(book, "tour_snapshot_action_refused", true);
            log_emit(LOG_WARN, "bot_tour_snapshot_action_refused", "{s:i,s:s,s:s,s:I}", "bot",
                     (int)b->idx, "code", bot_code_name(e->code), "message",
                     e->message != NULL ? e->message : "", "desk", (json_int_t)b->seat.desk_id);
        }
        bool for_old_seat = old_seat && (e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED ||
                                         e->code == CROUPIER__ERROR_CODE__NOT_SEATED ||
                                         e->code == CROUPIER__ERROR_CODE__NO_SUCH_DESK);
        if (for_old_seat)
            log_emit(LOG_INFO, "bot_reply_for_old_seat", "{s:i,s:s,s:s,s:I,s:i}", "bot",
                     (int)b->idx, "request", "action", "code", bot_code_name(e->code), "desk",
                     (json_int_t)b->seat.desk_id, "attempts", (int)b->rq_attempts);
        /* After TableClosing{CRASHED} the seat is gone: TABLE_CLOSED, or UNAVAILABLE while the
         * gateway moves us, answer what was in flight. UNAVAILABLE can also come first: the
         * gateway begins a crash move by reading the player's seat record, and answers what
         * arrives meanwhile (a same-id retry, say) before its TableClosing{CRASHED} goes out
         * (docs/gateway.md "When a game server dies"). It is retriable: the notice and the
         * Moved follow, and the bot plays on at the new table. */
        bool expected = stale || overtaken || on_seat_snap || for_old_seat ||
                        e->code == CROUPIER__ERROR_CODE__UNAVAILABLE ||
                        (s->refusal_expected != NULL && s->refusal_expected(e->code)) ||
                        (b->closing_seen && e->code == CROUPIER__ERROR_CODE__NO_ROUND) ||
                        b->crash_wait;
        bot_book_error(book, bot_code_name(e->code), expected);
        if (!expected)
            log_emit(LOG_WARN, "bot_action_refused", "{s:i,s:s,s:s,s:I,s:i}", "bot", (int)b->idx,
                     "code", bot_code_name(e->code), "message",
                     e->message != NULL ? e->message : "", "desk", (json_int_t)b->seat.desk_id,
                     "attempts", (int)b->rq_attempts);
    }
    if (s->on_event != NULL)
        s->on_event(b->sst, &b->seat, m);
    bot_maybe_leave(b);
    bot_schedule_decide(b);
}

static void bot_on_leave(bot_t *b, const Croupier__ServerMessage *m)
{
    bool old_seat = b->rq_moved;
    bot_req_clear(b);
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    if (e != NULL && old_seat && b->has_seat && !b->crash_wait) {
        /* Refused for the seat we were moved from (a Moved came while it was in flight): we sit
         * at the new table, so say the Leave there. */
        log_emit(LOG_INFO, "bot_reply_for_old_seat", "{s:i,s:s,s:s,s:I,s:i}", "bot", (int)b->idx,
                 "request", "leave", "code", bot_code_name(e->code), "desk",
                 (json_int_t)b->seat.desk_id, "attempts", (int)b->rq_attempts);
        bot_book_error(b->f->cfg.book, bot_code_name(e->code), true);
        b->left_sent = false;
        b->st = BS_SEATED;
        bot_maybe_leave(b);
        bot_schedule_decide(b); /* a round it is dealt into there is finished first */
        return;
    }
    if (e != NULL && b->crash_wait) {
        /* Our table's server is gone and the gateway is moving us: say the Leave at the new
         * table (the Moved brings it), or nowhere if no move follows. */
        bot_book_error(b->f->cfg.book, bot_code_name(e->code), true);
        b->left_sent = false;
        b->st = BS_SEATED;
        return;
    }
    if (e != NULL && e->code == CROUPIER__ERROR_CODE__ROOM_STARTED) {
        /* A room in play is left when it ends: the bot stops here, its seat plays on (on
         * trustee) until the room's last deal. */
        bot_book_error(b->f->cfg.book, bot_code_name(e->code), true);
    } else if (e != NULL && e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED) {
        /* The seat went with its server: nothing is left to leave. */
        bot_book_error(b->f->cfg.book, bot_code_name(e->code), true);
        bot_book_crash_voided(b->f->cfg.book, b->idx, bot_now_ms());
    } else if (e != NULL && e->code != CROUPIER__ERROR_CODE__NOT_SEATED) {
        bot_book_error(b->f->cfg.book, bot_code_name(e->code),
                       !bot_code_retriable(e) ? false : true);
    }
    b->st = BS_LEFT;
    fleet_check_stopped(b->f);
}

void bot_on_reply(bot_t *b, const Croupier__ServerMessage *m)
{
    if (m->request_id != b->rq_id || b->rq == RQ_NONE)
        return; /* a late answer to an attempt already answered */
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT && m->result->error != NULL &&
        m->result->error->code == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED &&
        b->rq_attempts <= b->f->cfg.max_retries) {
        /* docs/gateway.md: the budget ran out; the request is idempotent, so it is sent again
         * with the same id (by the request timer, after a short jittered pause). */
        bot_book_error(b->f->cfg.book, bot_code_name(CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED),
                       true);
        bot_timer_arm(b->rq_timer, 20 + bot_jitter(b, 80 * b->rq_attempts));
        return;
    }
    switch (b->rq) {
    case RQ_LOGIN:
        bot_on_login(b, m);
        break;
    case RQ_RESUME:
        bot_on_resume(b, m);
        break;
    case RQ_JOIN:
        bot_on_join(b, m);
        break;
    case RQ_ACTION:
        bot_on_action_reply(b, m);
        break;
    case RQ_LEAVE:
        bot_on_leave(b, m);
        break;
    case RQ_TOUR_REGISTER:
    case RQ_TOUR_INFO:
    case RQ_TOUR_SEAT:
        bot_fleet_tour_reply(b, m);
        break;
    case RQ_NONE:
        break;
    }
}

/* ---- pushed events ----------------------------------------------------------------------- */

/*
 * TableClosing{CLOSING_CRASHED} (docs/gateway.md): the table's server stopped without a clean
 * exit. The round in progress is crash-voided (no RoundEnd comes for it), the gateway forgot the
 * seat. With after_ms the gateway moves us: a Moved (or a second TableClosing) comes within it,
 * watched by the bot timer; without after_ms nothing follows and the bot joins again.
 */
static void bot_on_crash_closing(bot_t *b, const Croupier__TableClosing *tc)
{
    bot_book_t *book = b->f->cfg.book;
    bot_book_count(book, BOT_C_CRASH_CLOSINGS);
    bot_book_crash_voided(book, b->idx, bot_now_ms());
    b->seat.in_round = false;
    b->action_abandoned = false;
    if (b->st != BS_SEATED && b->st != BS_LEAVING && b->st != BS_LEFT)
        return; /* between Login and the seat: the Resume or Join in flight tells */
    if (b->st == BS_LEFT) {
        b->has_seat = false; /* left already: nothing to wait for */
        fleet_check_stopped(b->f);
        return;
    }
    if (b->timer_is_action)
        evtimer_del(b->timer);
    if (tc->has_after_ms) {
        b->crash_wait = true;
        b->closing_seen = true;
        b->closing_reason = (int)tc->reason;
        b->closing_ms = bot_now_ms();
        bot_timer_set(b, (int)tc->after_ms + 5000, false);
        return;
    }
    /* No move follows: join again (at once, or when the request in flight is answered). */
    b->crash_wait = false;
    b->closing_seen = false;
    b->has_seat = false;
    evtimer_del(b->timer);
    if (b->rq == RQ_NONE) {
        bot_send_join(b);
    } else {
        b->st = BS_JOIN;
        bot_timer_set(b, 50, false);
    }
}

void bot_on_event(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    uint64_t desk = b->has_seat ? b->seat.desk_id : 0;
    if (log_enabled(LOG_DEBUG))
        log_emit(LOG_DEBUG, "bot_push", "{s:i,s:i,s:i,s:i,s:i}", "bot", (int)b->idx, "state",
                 (int)b->st, "body", (int)m->body_case, "turn_seat",
                 m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN ? (int)m->turn->seat : -1,
                 "rq", (int)b->rq);
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END ||
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT ||
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN ||
        (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && b->has_seat &&
         m->deal->has_seat && m->deal->seat == b->seat.seat))
        b->view_changes++; /* see bot_t.rq_view */
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
        if (m->deal->round_id != NULL && m->deal->round_id[0] != '\0') {
            /* Only a Deal to our seat says we play the round: blackjack deals every seat's and
             * the dealer's cards to the whole table, also to seats without a bet (or whose
             * Leave is on its way: a round counted as ours then would never end for us). */
            if (!b->has_seat || !m->deal->has_seat || m->deal->seat != b->seat.seat)
                break;
            bot_book_round_started(book, b->idx, desk, m->deal->round_id, bot_now_ms());
            b->seat.in_round = true;
        } else if (b->has_seat && m->deal->has_seat && m->deal->seat == b->seat.seat &&
                   m->deal->cards.len > 0) {
            /* Our own cards without a round id (hold'em hole cards): a round started; it is
             * named by its RoundEnd. */
            bot_book_round_started(book, b->idx, desk, NULL, bot_now_ms());
            b->seat.in_round = true;
        }
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END: {
        if (b->seat.in_round)
            b->seat_first_hand = false; /* the first hand the bot played at that seat ended */
        b->last_round_end_us = clock_mono_ns() / 1000;
        const Croupier__RoundEnd *re = m->round_end;
        bot_round_outcome_t o = BOT_ROUND_NO_MONEY;
        if (re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED)
            o = BOT_ROUND_VOIDED;
        else if (re->has_rake && re->rake != 0)
            o = BOT_ROUND_FINISHED;
        for (size_t i = 0; i < re->n_deltas && o == BOT_ROUND_NO_MONEY; i++)
            if (re->deltas[i]->delta != 0)
                o = BOT_ROUND_FINISHED;
        bot_book_round_ended(book, b->idx, desk, re->round_id, o, bot_now_ms());
        /* The players dealt into the round, seat by seat: the table as it is now (players come
         * and go between rounds; a later whole-table move is checked against these). */
        if (re->n_deltas > 0) {
            memset(b->seen_players, 0, sizeof b->seen_players);
            for (size_t i = 0; i < re->n_deltas; i++)
                if (re->deltas[i]->seat < 9)
                    b->seen_players[re->deltas[i]->seat] = re->deltas[i]->player_id;
        }
        if (b->f->cfg.room_seats > 0 && re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED) {
            b->room_seen++;
            for (size_t i = 0; i < re->n_deltas; i++)
                if (re->deltas[i]->player_id == b->player)
                    b->room_sum += re->deltas[i]->delta;
        }
    }
        b->seat.in_round = false;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING: {
        bot_book_count(book, BOT_C_TABLE_CLOSINGS);
        if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_TOURNAMENT) {
            bot_fleet_tour_closing(b, m->table_closing); /* no Moved: the seat is asked for */
            return;
        }
        if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_BUSTED ||
            m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED) {
            /* Out of chips (hold'em), or our room ended: the seat is gone, no Moved follows;
             * buy in again (the group's next room). */
            log_emit(LOG_DEBUG, "bot_busted", "{s:i}", "bot", (int)b->idx);
            if (b->st == BS_SEATED) {
                b->has_seat = false;
                evtimer_del(b->timer);
                if (b->rq == RQ_NONE)
                    bot_send_join(b);
                else {
                    /* Its answer is about the seat that just ended: an action the server
                     * took after the seat went is answered NOT_SEATED (a room whose last
                     * deal ended while the bot's move was on its way), which is expected. */
                    b->rq_moved = true;
                    b->st = BS_JOIN; /* joins once the request in flight is answered */
                    bot_timer_set(b, 50, false);
                }
            }
            return;
        }
        if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_CRASHED) {
            bot_on_crash_closing(b, m->table_closing);
            return;
        }
        if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_STORE_UNREACHABLE &&
            bot_book_round_open(book, b->idx)) {
            /* The server cut off from Redis stopped its tables (docs/protocol.md): a round in
             * play got its RoundEnd{VOID_STORE_UNREACHABLE} first; one still open here was being
             * recorded and is decided by Redis (no RoundEnd comes): counted like a crash's. */
            bot_book_crash_voided(book, b->idx, bot_now_ms());
            b->seat.in_round = false;
        }
        if (b->closing_seen && b->st == BS_SEATED && !m->table_closing->has_after_ms) {
            /* A second TableClosing before any Moved: the gateway found no server to take the
             * seat (all draining, or cut off from Redis at once: docs/gateway.md "Table moves")
             * and says we are seated nowhere: join again. */
            bot_book_count(book, BOT_C_MOVES_FAILED);
            /* A round still open at that table gets no RoundEnd now: its server stopped it
             * (fenced: decided by Redis; gone: voided by the recovery), counted like a crash's
             * (crash_faults_redis: a fenced table's round torn otherwise). */
            if (bot_book_round_open(book, b->idx))
                bot_book_crash_voided(book, b->idx, bot_now_ms());
            b->seat.in_round = false;
            b->closing_seen = false;
            b->has_seat = false;
            evtimer_del(b->timer);
            if (b->rq == RQ_NONE) {
                bot_send_join(b);
            } else {
                b->rq_moved = true; /* its answer is about the seat that is gone */
                b->st = BS_JOIN;
                bot_timer_set(b, 50, false);
            }
            return;
        }
        b->closing_seen = true;
        b->closing_reason = (int)m->table_closing->reason;
        b->closing_ms = bot_now_ms();
        if (b->st == BS_SEATED) {
            /* A Moved must follow; the watchdog shares the bot timer with actions. */
            int after = m->table_closing->has_after_ms ? (int)m->table_closing->after_ms : 0;
            bot_timer_set(b, after + 15000, false);
        }
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_MOVED:
        bot_book_count(book, BOT_C_MOVES);
        if (m->moved->has_whole_table && m->moved->whole_table) {
            bot_book_count(book, BOT_C_TABLE_MOVES);
            if (b->last_round_end_us > 0)
                bot_book_move_latency(book, clock_mono_ns() / 1000 - b->last_round_end_us);
            b->check_move = true; /* against the Snapshot that follows */
            b->move_seat = b->seat.seat;
        }
        if (b->rq != RQ_NONE)
            b->rq_moved = true; /* its answer is about the seat we leave now */
        if (b->st == BS_SEATED || b->st == BS_LEAVING || b->st == BS_LEFT) {
            evtimer_del(b->timer);
            b->left_sent = false; /* a Leave said at the old table: say it at the new one */
            bot_on_joined(b, m->moved->to, true);
        } else {
            /* Between Login and our own Join/Resume reply: the seat we will get is reported
             * by that reply. */
            bot_set_seat(b, m->moved->to->desk_id, m->moved->to->seat, m->moved->to->engine,
                         m->moved->to->game, m->moved->to->stake);
        }
        return;
    case CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY: {
        const char *reason = "OTHER";
        bool expected = false;
        switch (m->go_away->reason) {
        case CROUPIER__GO_AWAY_REASON__GOAWAY_SHUTDOWN:
            reason = "SHUTDOWN";
            expected = true;
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED:
            reason = "OVERLOADED";
            expected = true;
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_REBALANCE:
            reason = "REBALANCE"; /* docs/gateway.md "Connection balance" */
            expected = true;
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_SESSION_REPLACED:
            reason = "SESSION_REPLACED";
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_PROTOCOL_ERROR:
            reason = "PROTOCOL_ERROR";
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_IDLE:
            reason = "IDLE";
            break;
        default:
            break;
        }
        bot_book_goaway(book, reason);
        if (!expected) {
            char name[48];
            snprintf(name, sizeof name, "goaway_%s", reason);
            bot_book_error(book, name, false);
        }
        b->goaway = true;
        b->goaway_delay_ms = m->go_away->reconnect_delay_ms;
        return;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_ROOM:
        bot_room_seen(b, m->room, false);
        return;
    case CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_EVENT:
        if (b->f->cfg.tournament != 0)
            bot_fleet_tour_event(b, m->tournament_event);
        return;
    case CROUPIER__SERVER_MESSAGE__BODY_ERROR: {
        char name[64];
        snprintf(name, sizeof name, "server_error_%s", bot_code_name(m->error->code));
        bot_book_error(book, name, false);
        return;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT:
        /* The whole table moved (after its Moved): the table's state on its new server. */
        if (b->has_seat && m->snapshot->desk_id == b->seat.desk_id) {
            bot_take_snapshot(b, m);
            if (!b->closing_seen && b->rq == RQ_NONE)
                bot_schedule_decide(b);
            return;
        }
        break;
    default:
        break;
    }
    if (s->on_event != NULL && b->has_seat)
        s->on_event(b->sst, &b->seat, m);
    if (b->has_seat)
        bot_game_body(b, m);
    bot_maybe_leave(b); /* stopping, and the round just ended */
    if (!b->closing_seen && b->rq == RQ_NONE)
        bot_schedule_decide(b); /* bot_may_play() decides whether the state allows it */
    if (b->st == BS_LEFT)
        fleet_check_stopped(b->f);
    if (b->tour_done)
        bot_fleet_tour_settle(b); /* done with its tournament: closes once its hand ended */
}
