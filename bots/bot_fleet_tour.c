/*
 * bot_fleet_tour.c -- a bot that plays a hold'em tournament (cfg.tournament; docs/bots.md
 * "Tournaments", docs/protocol.md "Tournaments"): what it asks instead of a Join and, after a
 * Login, instead of a Resume; the answers; the director's TournamentEvent pushes;
 * TableClosing{CLOSING_TOURNAMENT}; the stop without a Leave; and the end of its tournament.
 * Internal to the fleet: bot_fleet_int.h has the contract and lists the hooks in the other files.
 * The verdicts on the answers and the tally are bot_tour.h's (no I/O).
 *
 * A bot's way through a tournament:
 *
 *   Login (the first of the process)  RegisterTournament; ok or ALREADY_REGISTERED: registered
 *   Login (a later one)               GetTournament: the new connection follows the tournament
 *                                     again (its pushes), and the entry says whether the bot is
 *                                     still in (a Register could re-enter an MTT)
 *   registered / still in             TakeTournamentSeat until seated: NOT_SEATED retriable is
 *                                     asked again after 200-500 ms; the Snapshot seats the bot
 *                                     and it plays its table like any hold'em table
 *   TableClosing{CLOSING_TOURNAMENT}  moved, busted, the table broken, its server gone: no Moved
 *                                     follows; TakeTournamentSeat again at once (a hand open then
 *                                     was voided with its table: crash-voided, never torn)
 *   done                              its ELIMINATED, the FINISHED that names it (or any
 *                                     FINISHED, CANCELLED), TOURNAMENT_OVER / NOT_REGISTERED /
 *                                     NO_REENTRY, or a refused registration: the place and prize
 *                                     are recorded (asked with GetTournament when no push told
 *                                     them), and the bot closes its connection once its last hand
 *                                     has ended (at most TOUR_LAST_HAND_MS); when every bot is
 *                                     done, cfg.all_done runs
 *   the fleet stops (--seconds)       no Leave (a tournament seat cannot be left, BAD_REQUEST):
 *                                     the bot finishes its hand and closes; its seat plays on by
 *                                     the automatic move
 */
#include "bot_fleet_int.h"

#define TOUR_WAIT_MS 200        /* NOT_SEATED (retriable): asked again after 200 ms ... */
#define TOUR_WAIT_JITTER_MS 300 /* ... plus up to 300 */
#define TOUR_LAST_HAND_MS 5000  /* a done bot waits this long at most for its hand's RoundEnd */

static bot_tour_book_t *tour_book(const bot_t *b)
{
    return b->f->cfg.tour_book;
}

/* A match hall's bots (a shedding game's tables): a player out learns his place at the end. */
static bool tour_is_match(const bot_t *b)
{
    return strcmp(b->f->cfg.strategy->game, "holdem") != 0;
}

/* Sends the tournament request of that kind (the bot's one request in flight). */
static void tour_send(bot_t *b, bot_req_kind_t kind)
{
    uint64_t id = b->f->cfg.tournament;
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__RegisterTournament rt = CROUPIER__REGISTER_TOURNAMENT__INIT;
    Croupier__GetTournament gt = CROUPIER__GET_TOURNAMENT__INIT;
    Croupier__TakeTournamentSeat ts = CROUPIER__TAKE_TOURNAMENT_SEAT__INIT;
    switch (kind) {
    case RQ_TOUR_REGISTER:
        rt.tournament = id;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT;
        m.register_tournament = &rt;
        break;
    case RQ_TOUR_INFO:
        gt.tournament = id;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT;
        m.get_tournament = &gt;
        break;
    default:
        ts.tournament = id;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT;
        m.take_tournament_seat = &ts;
        bot_tour_count(tour_book(b), BOT_TOUR_C_SEAT_REQUESTS);
        kind = RQ_TOUR_SEAT;
        break;
    }
    b->st = BS_JOIN; /* a retry timer in this state comes back through bot_send_join */
    bot_req_send(b, kind, &m);
}

/* Closes a done bot's connection for good; all_done when it was the last one. */
static void tour_close(bot_t *b)
{
    bot_fleet_t *f = b->f;
    bool had_login = b->st >= BS_RESUME && b->st != BS_DONE;
    if (b->bev != NULL) {
        bufferevent_free(b->bev);
        b->bev = NULL;
        if (had_login && f->connected > 0)
            f->connected--;
    }
    bot_req_clear(b);
    evtimer_del(b->timer);
    b->has_seat = false;
    b->st = BS_DONE;
    log_emit(LOG_INFO, "bot_tour_closed", "{s:i,s:I,s:i}", "bot", (int)b->idx, "player",
             (json_int_t)b->player, "place", (int)bot_tour_place_of(tour_book(b), b->idx));
    fleet_check_stopped(f);
    bot_fleet_tour_check_all(f);
}

/*
 * The bot is done with its tournament (why: for the log). ask_place: when no push told its
 * place, ask GetTournament for it first (not after a refusal or an error: it has no entry).
 * A connection lost on the way was recovered: the bot got back to its tournament.
 */
static void tour_done(bot_t *b, const char *why, bool ask_place)
{
    if (b->tour_done)
        return;
    bot_tour_book_t *t = tour_book(b);
    b->tour_done = true;
    b->tour_close_ms = bot_now_ms() + TOUR_LAST_HAND_MS;
    bot_tour_count(t, BOT_TOUR_C_DONE);
    b->lost_connection = false;
    if (b->loss_pending) {
        b->loss_pending = false;
        bot_book_count(b->f->cfg.book, BOT_C_RECONNECTS_LOST);
        bot_book_error(b->f->cfg.book, "connection_lost", true);
    }
    log_emit(LOG_INFO, "bot_tour_done", "{s:i,s:I,s:s,s:i}", "bot", (int)b->idx, "player",
             (json_int_t)b->player, "why", why, "place", (int)bot_tour_place_of(t, b->idx));
    if (ask_place && !bot_tour_has_place(t, b->idx) && b->bev != NULL && !b->f->stopping &&
        b->st >= BS_RESUME && b->st <= BS_LEFT) {
        b->tour_step = BOT_TS_FINAL;
        tour_send(b, RQ_TOUR_INFO); /* abandons a move in flight: the bot is out */
        return;
    }
    bot_fleet_tour_settle(b);
}

/* Done as out or won, the director's word: the bot's last hand ended before it (the director
 * places a player from the hand's result), so a round still open for the bot is counted ended
 * unseen, never torn (bot_fleet_tour_settle, bot_fleet_tour_dropped). */
static void tour_done_known(bot_t *b, const char *why)
{
    if (!b->tour_done)
        b->tour_end_known = true;
    tour_done(b, why, true);
}

/* A done bot's open round that it will not see end: unseen when the director stated its end
 * (or when its RoundEnd went to a connection it lost), torn otherwise. */
static void tour_last_hand_unseen(bot_t *b, const char *where)
{
    bot_book_t *book = b->f->cfg.book;
    if (!bot_book_round_open(book, b->idx))
        return;
    /* Its connection was lost during the hand (a gateway rolled: GoAway) and the bot was out
     * before it took its seat again: the table's pushes, the hand's RoundEnd among them,
     * followed its last request's gateway. Or the director's elimination or FINISHED reached
     * the bot before the hand's RoundEnd, or instead of it (the connection rolled, the server
     * went on without the player). Its end was unseen, not lost. Otherwise: torn. */
    if (bot_book_round_unseen_if_away(book, b->idx) ||
        (b->tour_end_known && bot_book_round_unseen(book, b->idx)))
        log_emit(LOG_INFO, "bot_tour_last_hand_unseen", "{s:i,s:I,s:s}", "bot", (int)b->idx,
                 "desk", (json_int_t)b->seat.desk_id, "at", where);
    else
        log_emit(LOG_WARN, "bot_tour_last_hand_not_ended", "{s:i,s:I,s:s}", "bot", (int)b->idx,
                 "desk", (json_int_t)b->seat.desk_id, "at", where);
}

void bot_fleet_tour_dropped(bot_t *b)
{
    if (b->tour_done)
        tour_last_hand_unseen(b, "connection closed");
}

/* A done bot: closes now, or once the hand it is in has ended (bounded). */
void bot_fleet_tour_settle(bot_t *b)
{
    if (!b->tour_done || b->st == BS_DONE || b->rq == RQ_TOUR_INFO)
        return;
    if (b->bev != NULL && bot_book_round_open(b->f->cfg.book, b->idx)) {
        int64_t left = b->tour_close_ms - bot_now_ms();
        if (left > 0) {
            /* Plays no more; the timer bounds the wait. Armed again on every call: a message
             * handled meanwhile may have cleared it (match_hall: a bot out of its match waited
             * for ever, its hand open, until the fleet's --seconds). */
            b->st = BS_LEFT;
            bot_timer_set(b, (int)left, false);
            return;
        }
        tour_last_hand_unseen(b, "wait over");
    }
    tour_close(b);
}

void bot_fleet_tour_check_all(bot_fleet_t *f)
{
    if (f->cfg.tournament == 0 || f->stopping || f->tour_all_done || f->cfg.all_done == NULL)
        return;
    for (uint32_t i = 0; i < f->cfg.bots; i++)
        if (f->bots[i].st != BS_DONE)
            return;
    f->tour_all_done = true;
    log_emit(LOG_INFO, "bot_tour_all_done", "{s:I,s:i}", "tournament",
             (json_int_t)f->cfg.tournament, "bots", (int)f->cfg.bots);
    f->cfg.all_done(f->cfg.all_done_arg);
}

/* ---- requests ------------------------------------------------------------------------------ */

void bot_fleet_tour_login(bot_t *b)
{
    /* A new connection follows no tournament yet, and the bot may have been moved, busted or
     * placed while it was away: GetTournament says which, then TakeTournamentSeat finds the
     * table. A Resume by the remembered seat could find a table the bot has left. */
    if (b->tour_step == BOT_TS_SEAT)
        b->tour_step = BOT_TS_FOLLOW;
    bot_fleet_tour_next(b);
}

void bot_fleet_tour_next(bot_t *b)
{
    if (b->tour_done && b->tour_step != BOT_TS_FINAL) {
        bot_fleet_tour_settle(b);
        return;
    }
    switch (b->tour_step) {
    case BOT_TS_REGISTER:
        tour_send(b, RQ_TOUR_REGISTER);
        return;
    case BOT_TS_FOLLOW:
    case BOT_TS_FINAL:
        tour_send(b, RQ_TOUR_INFO);
        return;
    case BOT_TS_SEAT:
        tour_send(b, RQ_TOUR_SEAT);
        return;
    }
}

static bool tour_entry_out(const Croupier__TournamentEntry *you)
{
    return you->state == CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_OUT ||
           you->state == CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_WON ||
           you->state == CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_CANCELLED ||
           you->state == CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_REFUNDED;
}

/* GetTournament's answer: the bot's entry (its place when out), then the next step. */
static void tour_on_info(bot_t *b, const Croupier__ServerMessage *m, const Croupier__Error *e)
{
    bot_tour_book_t *t = tour_book(b);
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT) {
        const Croupier__TournamentInfo *ti = m->tournament;
        const Croupier__TournamentEntry *you = ti->you;
        bot_req_clear(b);
        b->rq_newtries = 0;
        if (log_enabled(LOG_DEBUG))
            log_emit(LOG_DEBUG, "bot_tour_info", "{s:i,s:i,s:i,s:i,s:i}", "bot", (int)b->idx,
                     "status", (int)ti->status, "entry", you != NULL ? (int)you->state : -1,
                     "place", you != NULL ? (int)you->place : -1, "step", (int)b->tour_step);
        if (you != NULL && you->has_place && you->place > 0)
            bot_tour_place(t, b->idx, b->player, you->place, you->has_prize ? you->prize : 0);
        if (b->tour_step == BOT_TS_FINAL || b->tour_done) {
            bot_fleet_tour_settle(b); /* done while this answer was on its way: settle now */
            return;
        }
        bool over = ti->status == CROUPIER__TOURNAMENT_STATUS__TOUR_FINISHED ||
                    ti->status == CROUPIER__TOURNAMENT_STATUS__TOUR_CANCELLED;
        bool out = you == NULL || tour_entry_out(you);
        if (over || out) {
            const char *why = over ? "tournament over" : you == NULL ? "no entry" : "out";
            if (ti->status == CROUPIER__TOURNAMENT_STATUS__TOUR_FINISHED ||
                (you != NULL && (you->state == CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_OUT ||
                                 you->state == CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_WON)))
                tour_done_known(b, why);
            else
                tour_done(b, why, true);
            return;
        }
        if (ti->format == CROUPIER__TOURNAMENT_FORMAT__TOUR_MATCH &&
            you->state == CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_BUSTED) {
            b->tour_out_waiting = true; /* out of the match (a new connection): its place
                                         * comes with the end */
            b->st = BS_JOIN;
            return;
        }
        b->tour_step = BOT_TS_SEAT;
        bot_fleet_tour_next(b);
        return;
    }
    if (e != NULL && bot_code_retriable(e)) {
        bot_retry_later(b, RQ_JOIN, e);
        return;
    }
    bot_req_clear(b);
    if (b->tour_step == BOT_TS_FINAL) {
        bot_fleet_tour_settle(b); /* its place stays unknown */
        return;
    }
    bot_book_error(b->f->cfg.book, e != NULL ? bot_code_name(e->code) : "tour_info_bad_reply",
                   false);
    tour_done(b, "GetTournament refused", false);
}

void bot_fleet_tour_reply(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    bot_tour_book_t *t = tour_book(b);
    bot_req_kind_t kind = b->rq;
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    if (kind == RQ_TOUR_INFO) {
        tour_on_info(b, m, e);
        return;
    }
    int code = e != NULL ? (int)e->code : 0;
    bool well_formed = kind == RQ_TOUR_REGISTER
                           ? m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT
                           : m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT || e != NULL;
    if (!well_formed) {
        bot_req_clear(b);
        bot_book_error(book,
                       kind == RQ_TOUR_REGISTER ? "tour_register_bad_reply" : "tour_seat_bad_reply",
                       false);
        tour_done(b, "bad reply", false);
        return;
    }
    bool retriable = e != NULL && e->has_retriable && e->retriable;
    bot_tour_verdict_t v = kind == RQ_TOUR_REGISTER ? bot_tour_register_verdict(code, retriable)
                                                    : bot_tour_seat_verdict(code, retriable);
    if (log_enabled(LOG_DEBUG))
        log_emit(LOG_DEBUG, "bot_tour_answer", "{s:i,s:s,s:s,s:s}", "bot", (int)b->idx, "request",
                 kind == RQ_TOUR_REGISTER ? "register" : "seat", "code",
                 e != NULL ? bot_code_name(code) : "OK", "verdict", bot_tour_verdict_name(v));
    if (v == BOT_TOUR_RETRY) {
        bot_retry_later(b, RQ_JOIN, e); /* back through bot_send_join: the same step again */
        return;
    }
    if (kind == RQ_TOUR_SEAT && v == BOT_TOUR_OK) {
        /* The table's Snapshot: seated there, as a Resume's answer seats a bot. */
        bot_tour_count(t, BOT_TOUR_C_SEATED);
        b->seat_view_set = true;
        b->seat_view = b->view_changes;
        b->seat_first_hand = true;
        bot_on_resume(b, m);
        return;
    }
    bot_req_clear(b);
    b->rq_newtries = 0;
    const char *name = e != NULL ? bot_code_name(code) : "OK";
    switch (v) {
    case BOT_TOUR_OK: /* registered */
        bot_tour_count(t, BOT_TOUR_C_REGISTERED);
        if (code == CROUPIER__ERROR_CODE__ALREADY_REGISTERED)
            bot_tour_count(t, BOT_TOUR_C_ALREADY_REGISTERED);
        b->tour_step = BOT_TS_SEAT;
        bot_fleet_tour_next(b);
        return;
    case BOT_TOUR_WAIT:
        bot_tour_count(t, BOT_TOUR_C_NOT_SEATED);
        b->st = BS_JOIN;
        bot_timer_set(b, TOUR_WAIT_MS + bot_jitter(b, TOUR_WAIT_JITTER_MS), false);
        return;
    case BOT_TOUR_OVER:
        if (tour_is_match(b) && kind == RQ_TOUR_SEAT) {
            /* Out of a match (its place comes with the end) or the match over: GetTournament
             * says which (tour_on_info). */
            b->tour_step = BOT_TS_FOLLOW;
            bot_fleet_tour_next(b);
            return;
        }
        tour_done(b, name, true);
        return;
    case BOT_TOUR_REFUSED:
        /* Expected (docs/bots.md "Tournaments"): the run goes on without this bot. */
        bot_tour_refused(t, name);
        bot_book_error(book, name, true);
        log_emit(LOG_WARN, "bot_tour_refused", "{s:i,s:s,s:s}", "bot", (int)b->idx, "request",
                 kind == RQ_TOUR_REGISTER ? "register" : "seat", "code", name);
        tour_done(b, name, false);
        return;
    default:
        bot_book_error(book, name, false);
        log_emit(LOG_WARN, "bot_tour_unexpected_answer", "{s:i,s:s,s:s,s:s}", "bot", (int)b->idx,
                 "request", kind == RQ_TOUR_REGISTER ? "register" : "seat", "code", name, "message",
                 e != NULL && e->message != NULL ? e->message : "");
        tour_done(b, name, false);
        return;
    }
}

/* ---- pushes -------------------------------------------------------------------------------- */

void bot_fleet_tour_event(bot_t *b, const Croupier__TournamentEvent *te)
{
    bot_tour_book_t *t = tour_book(b);
    if (te->tournament != b->f->cfg.tournament)
        return;
    bot_tour_event(t, (int)te->kind);
    bool mine = te->has_player && te->player == b->player;
    switch (te->kind) {
    case CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_ELIMINATED:
        if (!mine)
            return;
        if (!te->has_place) {
            /* Out of a match: its place comes with the match's end (a push then, or the
             * FINISHED every follower gets): the bot waits for it, unseated. */
            b->tour_out_waiting = true;
            log_emit(LOG_INFO, "bot_tour_out_waiting", "{s:i,s:I}", "bot", (int)b->idx, "player",
                     (json_int_t)b->player);
            return;
        }
        bot_tour_place(t, b->idx, b->player, te->place, te->has_prize ? te->prize : 0);
        tour_done_known(b, "eliminated");
        return;
    case CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_FINISHED:
        /* The winner's place and prize; any other bot still in missed its ELIMINATED. */
        if (mine)
            bot_tour_place(t, b->idx, b->player, te->has_place && te->place > 0 ? te->place : 1,
                           te->has_prize ? te->prize : 0);
        tour_done_known(b, mine ? "won" : "finished");
        return;
    case CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_CANCELLED:
        if (!b->tour_done)
            bot_tour_count(t, BOT_TOUR_C_CANCELLED);
        tour_done(b, "cancelled", true);
        return;
    case CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_MOVED_TABLE:
        /* A match's next table deals now and waits for its players: a bot waiting to retry
         * TakeTournamentSeat asks at once (a hold'em move: the TableClosing at the old table
         * drives). */
        if (mine && !b->has_seat && !b->tour_done && !b->tour_out_waiting &&
            b->tour_step == BOT_TS_SEAT && b->rq == RQ_NONE && b->st == BS_JOIN &&
            !b->f->stopping) {
            evtimer_del(b->timer);
            bot_fleet_tour_next(b);
        }
        return;
    default:
        return;
    }
}

void bot_fleet_tour_closing(bot_t *b, const Croupier__TableClosing *tc)
{
    bot_book_t *book = b->f->cfg.book;
    bot_tour_count(tour_book(b), BOT_TOUR_C_TABLE_CHANGES);
    log_emit(LOG_INFO, "bot_tour_table_closing", "{s:i,s:I,s:s}", "bot", (int)b->idx, "desk",
             (json_int_t)(b->has_seat ? b->seat.desk_id : 0), "detail",
             tc->detail != NULL ? tc->detail : "");
    if (b->st != BS_SEATED && b->st != BS_LEAVING && b->st != BS_LEFT)
        return; /* between Login and the seat: the request in flight tells */
    if (tc->has_desk_id && b->has_seat && tc->desk_id != b->seat.desk_id)
        return; /* a table left before: the bot sits at its next one already (kept) */
    /* Players leave a table between hands; a hand still open here died with its table (its host
     * gone or stopped): it is voided and dealt again by the next host, no RoundEnd comes. */
    if (bot_book_round_open(book, b->idx))
        bot_book_crash_voided(book, b->idx, bot_now_ms());
    b->seat.in_round = false;
    b->action_abandoned = false;
    b->closing_seen = false;
    b->crash_wait = false;
    evtimer_del(b->timer);
    if (b->tour_done) {
        bot_fleet_tour_settle(b);
        return;
    }
    b->has_seat = false;
    if (b->f->stopping) {
        b->st = BS_LEFT; /* nothing to finish: closed by the stop */
        fleet_check_stopped(b->f);
        return;
    }
    if (b->tour_out_waiting) {
        b->st = BS_JOIN; /* out of its match: no seat to take, its place comes at the end */
        return;
    }
    b->tour_step = BOT_TS_SEAT;
    if (b->rq == RQ_NONE) {
        bot_fleet_tour_next(b);
        return;
    }
    b->rq_moved = true; /* its answer is about the table just left */
    b->st = BS_JOIN;
    bot_timer_set(b, 50, false);
}

/* Stopping at a tournament seat: no Leave (refused), the bot just goes; the automatic move
 * plays its seat. Called once its hand is over (bot_maybe_leave). */
void bot_fleet_tour_stop_seat(bot_t *b)
{
    b->left_sent = true;
    b->st = BS_LEFT;
    fleet_check_stopped(b->f);
}
