/*
 * tk_room.c -- private rooms (tk.h "rooms", docs/architecture.md §12 "Private rooms",
 * docs/protocol.md "Private rooms", lease/room.h): a CreateRoom's rules checked on the main loop
 * (tk_room_prepare), the room's code drawn and its record written through the handoff jobs thread
 * (tk_move.c's tk_job_t), its first deal, its scoreboard, its end through one path (tk_room_end),
 * its wait timer, and an adopted room's import. Internal to the kit: tk_int.h has the contract.
 * Apart from tk_room_prepare, everything runs on the table's desk thread.
 */
#include "tk_int.h"

/* ---- private rooms (tk.h "rooms", lease/room.h) ------------------------------------------ */

/* Whether the table's room has ended (false for a table that is no room). */
bool tk_room_ended(const tk_table_t *t)
{
    return t->room != NULL && t->room->ended;
}

static int64_t tk_room_keep_ms(const tk_table_t *t)
{
    return t->eng->set.room_keep_ms > 0 ? t->eng->set.room_keep_ms : TK_ROOM_KEEP_MS;
}

static int64_t tk_room_wait_ms(const tk_engine_t *eng)
{
    return eng->set.room_wait_ms > 0 ? eng->set.room_wait_ms : TK_ROOM_WAIT_MS;
}

/* The record names this server, its epoch and the table as where the room is played. */
static void tk_room_here(tk_table_t *t)
{
    room_record_t *r = &t->room->rec;
    tk_server_id(t, r->server, sizeof r->server);
    r->epoch = t->epoch;
    r->desk = rt_desk_id(t->desk);
    room_owner(r->server, r->epoch, r->desk, r->owner, sizeof r->owner);
}

/* Rewrites the room's record (take: as its new owner, after an adoption). The jobs thread runs
 * the writes of a server in order, so the record ends as the last one says. */
static void tk_room_write(tk_table_t *t, bool take)
{
    if (t->room == NULL || t->room->rec.code[0] == '\0' || t->eng->jobs == NULL)
        return;
    tk_job_t *j = tk_job_new(t, TK_JOB_ROOM_WRITE);
    j->room = xmalloc(sizeof *j->room);
    *j->room = t->room->rec;
    int64_t left = t->room->rec.expires_ms - clock_wall_ms();
    j->ttl_ms = left > 1000 ? left : 1000;
    j->take = take;
    if (tk_job_submit(t, j) != 0)
        log_emit(LOG_ERROR, "tk_room_write_refused", "{s:s}", "room", t->room->rec.code);
}

/* Pushes the room's RoomInfo (its scoreboard) to everyone seated. */
static void tk_room_push(tk_table_t *t)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    room_info_buf_t rib;
    room_info_fill(&t->room->rec, &rib);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROOM;
    sm.room = &rib.info;
    tk_push_all(t, &sm);
}

/* The first deal starts: every seat is taken, the scoreboard counts from 0. */
void tk_room_started(tk_table_t *t)
{
    room_record_t *r = &t->room->rec;
    r->state = CROUPIER__ROOM_STATE__ROOM_PLAYING;
    r->nscores = 0;
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state == TK_SEATED)
            r->scores[r->nscores++] = (room_score_t){.seat = i, .player = t->seat[i].player};
    r->expires_ms = clock_wall_ms() + tk_room_keep_ms(t);
    tk_room_write(t, false);
    log_emit(LOG_INFO, "tk_room_started", "{s:s,s:s,s:i,s:i}", "room", r->code, "game", t->game,
             "seats", t->nseats, "deals", r->deals);
}

/* A deal was played and settled: the scoreboard adds its deltas; after the last the room ends. */
void tk_room_dealt(tk_table_t *t, const int64_t *delta)
{
    room_record_t *r = &t->room->rec;
    if (r->played < ROOM_MAX_DEALS)
        snprintf(r->rounds[r->played], sizeof r->rounds[0], "%s", t->round_id);
    r->played++;
    for (int k = 0; k < r->nscores; k++)
        r->scores[k].total += delta[r->scores[k].seat];
    if (r->played >= r->deals) {
        tk_room_end(t, NULL);
        return;
    }
    r->expires_ms = clock_wall_ms() + tk_room_keep_ms(t);
    tk_room_write(t, false);
    tk_room_push(t);
}

/*
 * The room ends (its last deal, its host, its wait, or the server): the record keeps the final
 * scoreboard, everyone is told RoomInfo and TableClosing{CLOSING_ROOM_ENDED} (their gateways
 * forget the seat: no one is re-seated) and cashed out. The empty table retires when idle.
 */
void tk_room_end(tk_table_t *t, const char *detail)
{
    tk_room_t *rm = t->room;
    if (rm == NULL || rm->ended)
        return;
    rm->ended = true;
    room_record_t *r = &rm->rec;
    bool started = r->state == CROUPIER__ROOM_STATE__ROOM_PLAYING;
    r->state = started ? CROUPIER__ROOM_STATE__ROOM_FINISHED : CROUPIER__ROOM_STATE__ROOM_DISBANDED;
    snprintf(r->detail, sizeof r->detail, "%s", detail != NULL ? detail : "");
    r->expires_ms = clock_wall_ms() + tk_room_keep_ms(t);
    tk_room_write(t, false);
    tk_room_push(t);
    log_emit(LOG_INFO, "tk_room_ended", "{s:s,s:s,s:i,s:i,s:s}", "room", r->code, "state",
             started ? "finished" : "disbanded", "played", r->played, "deals", r->deals, "detail",
             r->detail);
    const char *why = detail != NULL ? detail
                      : started      ? "the room played its last deal"
                                     : "the room was disbanded";
    uint64_t players[TK_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if ((s->state == TK_SEATED || s->state == TK_LEAVING || s->state == TK_CLOSED) && !s->bot)
            players[n++] = s->player;
    }
    gs_close_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n,
                        CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED, why);
    tk_spect_end(t, CROUPIER__ERROR_CODE__NO_SUCH_TABLE, "the room ended"); /* spectators.md */
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (s->state != TK_SEATED && s->state != TK_LEAVING && s->state != TK_CLOSED)
            continue; /* empty, or buying: refunded when its buy-in returns (tk_buyin_done) */
        if (s->topping) {
            s->leave_after_topup = true; /* its chips go back once the top-up is in */
            continue;
        }
        if (s->state != TK_CLOSED)
            tk_cash_out(t, i);
        tk_unseat(t, i);
    }
}

/* The room of a table that was just opened for it starts: its code is drawn (a job); the host's
 * join waits for it. */
void tk_room_create(tk_table_t *t, const tk_join_t *join)
{
    tk_room_here(t);
    t->room->rec.host = join->req->player_id;
    tk_join_t *keep = xmalloc(sizeof *keep);
    *keep = *join;
    keep->room = NULL;
    t->room->create = keep;
    tk_job_t *j = tk_job_new(t, TK_JOB_ROOM_CREATE);
    j->room = xmalloc(sizeof *j->room);
    *j->room = t->room->rec;
    j->ttl_ms = t->room->rec.expires_ms - clock_wall_ms() + 60000;
    if (tk_job_submit(t, j) != 0) {
        t->room->create = NULL;
        tk_refuse(t, keep->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "server stopping");
        free(keep);
        t->room->ended = true;
        tk_maybe_idle(t);
    }
}

void tk_room_job_done(tk_table_t *t, tk_job_t *j)
{
    if (t->room == NULL)
        return;
    if (j->kind == TK_JOB_ROOM_WRITE) {
        if (j->status != 1)
            log_emit(j->status == 0 ? LOG_WARN : LOG_ERROR, "tk_room_write_failed", "{s:s,s:i,s:s}",
                     "room", t->room->rec.code, "status", j->status, "why",
                     j->status == 0        ? "the record expired"
                     : j->status == -EPERM ? "another server owns the room"
                                           : "redis unreachable");
        return;
    }
    tk_join_t *keep = t->room->create;
    t->room->create = NULL;
    if (keep == NULL)
        return;
    if (j->status != 0) {
        log_emit(LOG_ERROR, "tk_room_create_failed", "{s:i}", "status", j->status);
        tk_refuse(t, keep->req, CROUPIER__ERROR_CODE__UNAVAILABLE,
                  j->status == -EEXIST ? "no free room code; retry" : "room store unreachable");
        free(keep);
        t->room->ended = true; /* nobody knows the room: the empty table retires */
        tk_maybe_idle(t);
        return;
    }
    snprintf(t->room->rec.code, sizeof t->room->rec.code, "%s", j->room->code);
    rt_msg_t m = {.type = TK_MSG_ROOM,
                  .arg = rt_desk_id(t->desk),
                  .ptr = xstrdup(t->room->rec.code),
                  .free_fn = free};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    int64_t wait = t->room->rec.expires_ms - clock_wall_ms();
    if (rt_desk_timer_arm(t->desk, wait > 0 ? wait : 0, TK_TIMER_ROOM, NULL) != 0)
        log_emit(LOG_ERROR, "tk_room_timer_failed", "{s:s}", "room", t->room->rec.code);
    log_emit(LOG_INFO, "tk_room_created", "{s:s,s:s,s:I,s:i,s:i}", "room", t->room->rec.code,
             "game", t->game, "stake", (json_int_t)t->stake, "seats", t->nseats, "deals",
             t->room->rec.deals);
    t->joins_seen--;        /* the lobby's one join, seen once already */
    tk_table_join(t, keep); /* the host sits down */
    free(keep);
}

/* TK_TIMER_ROOM: a room still not full when its wait is over is disbanded. */
void tk_room_timer(tk_table_t *t)
{
    if (t->room == NULL || t->room->ended ||
        t->room->rec.state != CROUPIER__ROOM_STATE__ROOM_WAITING || t->move != TK_MOVE_NONE)
        return;
    if (clock_wall_ms() + 50 < t->room->rec.expires_ms) {
        rt_desk_timer_arm(t->desk, t->room->rec.expires_ms - clock_wall_ms(), TK_TIMER_ROOM, NULL);
        return;
    }
    if (rt_desk_in_round(t->desk))
        return;
    tk_room_end(t, "the room was not full in time");
}

/*
 * An adopted table is a room: it takes the room's record, seats and rules (the game's state is
 * made anew when they differ from the server's), and the record names this server now.
 */
void tk_room_import(tk_table_t *t, const json_t *room)
{
    char *text = json_dumps(room, JSON_COMPACT);
    tk_room_t *rm = xcalloc(1, sizeof *rm);
    if (text == NULL || room_record_parse(text, strlen(text), &rm->rec) != 0) {
        log_emit(LOG_ERROR, "tk_room_import_refused", "{s:s}", "offer", t->offer_id);
        free(text);
        free(rm);
        return;
    }
    free(text);
    t->room = rm;
    char opts[sizeof t->options];
    room_options_text(&rm->rec, opts, sizeof opts);
    if (rm->rec.seats != t->nseats || strcmp(opts, t->options) != 0) {
        int was = t->nseats;
        char was_opts[sizeof t->options];
        snprintf(was_opts, sizeof was_opts, "%s", t->options);
        t->nseats = rm->rec.seats;
        snprintf(t->options, sizeof t->options, "%s", opts);
        void *g = t->eng->game->table_create(t, t->game, t->stake);
        if (g == NULL) {
            /* This server's game cannot play the room's rules: it plays no deal here. */
            t->nseats = was;
            snprintf(t->options, sizeof t->options, "%s", was_opts);
            log_emit(LOG_ERROR, "tk_room_rules_refused", "{s:s}", "room", rm->rec.code);
        } else {
            t->eng->game->table_destroy(t->g);
            t->g = g;
        }
    }
    tk_room_here(t);
    tk_room_write(t, true);
    if (rm->rec.state == CROUPIER__ROOM_STATE__ROOM_WAITING) {
        int64_t wait = rm->rec.expires_ms - clock_wall_ms();
        rt_desk_timer_arm(t->desk, wait > 0 ? wait : 0, TK_TIMER_ROOM, NULL);
    }
}

/* A join of a room at its table: refused when it started, ended or is full. */
bool tk_room_join_refused(tk_table_t *t, gs_request_t *req)
{
    const room_record_t *r = &t->room->rec;
    if (t->room->ended) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_ENDED,
                  r->state == CROUPIER__ROOM_STATE__ROOM_DISBANDED ? "the room was disbanded"
                                                                   : "the room is over");
        return true;
    }
    if (r->state != CROUPIER__ROOM_STATE__ROOM_WAITING) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_STARTED, "the room has started");
        return true;
    }
    if (tk_free_seats(t) == 0) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_FULL, "every seat of the room is taken");
        return true;
    }
    return false;
}

/* ---- a CreateRoom on the main loop ------------------------------------------------------- */

/*
 * A CreateRoom's rules, checked against the engine (seats within its bounds, rule options the
 * game takes, bot fill only with server bots): the room to open, or the refusal and its reason.
 */
Croupier__ErrorCode tk_room_prepare(tk_engine_t *eng, const Croupier__Join *jn,
                                    const Croupier__RoomRules *rules, tk_room_t **out,
                                    const char **why)
{
    static char err[256]; /* main loop only */
    const tk_game_t *gm = eng->game;
    *out = NULL;
    if (eng->jobs == NULL) {
        *why = "no room store (Redis) configured";
        return CROUPIER__ERROR_CODE__UNAVAILABLE;
    }
    int seats = tk_game_seats(eng, jn->game);
    if (rules->has_seats && (int)rules->seats != seats) {
        if (gm->seats_for != NULL) {
            snprintf(err, sizeof err, "%s is played with %d seats", jn->game, seats);
            *why = err;
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
        if ((int)rules->seats < gm->min_seats || (int)rules->seats > gm->max_seats) {
            snprintf(err, sizeof err, "seats: %d..%d at %s", gm->min_seats, gm->max_seats,
                     jn->game);
            *why = err;
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
        seats = (int)rules->seats;
    }
    if (rules->has_bot_fill && rules->bot_fill && !gm->bots) {
        *why = "this game has no server bots to fill a room";
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    }
    tk_room_t *rm = xcalloc(1, sizeof *rm);
    room_record_t *r = &rm->rec;
    r->state = CROUPIER__ROOM_STATE__ROOM_WAITING;
    r->engine = gm->proto_engine;
    snprintf(r->game, sizeof r->game, "%s", jn->game);
    r->stake = jn->stake;
    r->seats = seats;
    r->deals = (int)rules->deals;
    r->bot_fill = rules->has_bot_fill && rules->bot_fill;
    r->no_spectators = rules->has_no_spectators && rules->no_spectators;
    for (size_t i = 0; i < rules->n_rule_options && i < ROOM_MAX_OPTIONS; i++)
        snprintf(r->options[r->noptions++], sizeof r->options[0], "%s", rules->rule_options[i]);
    r->created_ms = clock_wall_ms();
    r->expires_ms = r->created_ms + tk_room_wait_ms(eng);
    if (r->noptions > 0) {
        char text[256], e[200];
        room_options_text(r, text, sizeof text);
        int rc = gm->check_options != NULL ? gm->check_options(text, jn->game, e, sizeof e) : -1;
        if (rc != 0) {
            snprintf(err, sizeof err, "rule_options: %s",
                     gm->check_options != NULL ? e : "this game takes no rule options");
            *why = err;
            free(rm);
            return CROUPIER__ERROR_CODE__BAD_REQUEST;
        }
    }
    *out = rm;
    return CROUPIER__ERROR_CODE__OK;
}
