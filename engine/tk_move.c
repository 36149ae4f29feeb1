/*
 * tk_move.c -- whole-table moves (tk.h "moves", docs/architecture.md §12 "Whole-table moves",
 * docs/protocol.md "Whole-table moves", money.h "Table handoff"): the old table's side (prepare,
 * offer, check, withdraw, release or fall back to the close) and the adopter's (the adoption and
 * the import of the kit's and the game's state), with the handoff calls they make on the
 * engine's jobs thread (tk_job_t; tk_room.c's record writes go through the same thread).
 * Internal to the kit: tk_int.h has the contract.
 *
 * tk_job_run() runs on the jobs thread and touches only its job; tk_job_done() posts the result
 * to the table as TK_MSG_MOVE_DONE (under eng->jobs_mu, never once the runtime stopped).
 * Everything else runs on the table's desk thread.
 */
#include "tk_int.h"

#include <time.h>

/* ---- whole-table moves (tk.h "moves", money.h "Table handoff") --------------------------- */

static void tk_job_free(void *p)
{
    tk_job_t *j = p;
    if (j == NULL)
        return;
    free(j->state);
    free(j->room);
    free(j);
}

static void tk_job_set_error(tk_job_t *j, int status, const char *error)
{
    j->status = status;
    snprintf(j->error, sizeof j->error, "%s", error != NULL ? error : money_strerror(status));
}

/* Whether another server that could adopt the table is registered and ready: serving the game,
 * not this server (its entry id is the server id, "<service>:<slot>"). An offer nobody can take
 * would only hold the drain for the move wait. -EIO when the registry cannot be read. */
static int tk_job_adopter_exists(redisContext *c, const char *self, const char *game)
{
    redisReply *m = redisCommand(c, "SMEMBERS %s", REGISTRY_MEMBERS_KEY);
    if (m == NULL || m->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(m);
        return -EIO;
    }
    int found = 0;
    for (size_t i = 0; i < m->elements && !found; i++) {
        const redisReply *id = m->element[i];
        if (id->type != REDIS_REPLY_STRING || strcmp(id->str, self) == 0)
            continue;
        redisReply *r = redisCommand(c, "GET %s%s", REGISTRY_KEY_PREFIX, id->str);
        registry_entry_t e;
        if (r != NULL && r->type == REDIS_REPLY_STRING &&
            registry_entry_parse(r->str, r->len, &e) == 0 && e.state == REGISTRY_READY &&
            config_list_has(e.games, game))
            found = 1;
        freeReplyObject(r);
    }
    freeReplyObject(m);
    return found;
}

/* ADOPT on the jobs thread: read the offer, check it fits the table, adopt its accounts. */
static void tk_job_adopt(redisContext *c, tk_job_t *j)
{
    money_offer_info_t info;
    int rc = money_sync_offer_read(c, j->offer_id, &info);
    if (rc != 0) {
        tk_job_set_error(j, rc, NULL);
        return;
    }
    j->state = info.state;
    if (strcmp(info.status, "adopted") == 0 && info.adopter[0] != '\0')
        snprintf(j->adopter, sizeof j->adopter, "%s", info.adopter);
    json_error_t jerr;
    json_t *st = json_loads(info.state, 0, &jerr);
    const char *game = st != NULL ? json_string_value(json_object_get(st, "game")) : NULL;
    json_int_t stake = json_integer_value(json_object_get(st, "stake"));
    json_int_t seats = json_integer_value(json_object_get(st, "seats"));
    /* A room keeps its own seat count (the table takes it at the import). */
    bool room = json_is_object(json_object_get(st, "room"));
    bool fits = game != NULL && strcmp(game, j->game) == 0 && stake == j->stake &&
                (seats == j->nseats || (room && seats >= 2 && seats <= TK_MAX_SEATS)) &&
                info.nseats <= (size_t)seats;
    json_decref(st);
    const char *accts[MONEY_MAX_PLAYERS];
    for (size_t i = 0; fits && i < info.nseats; i++) {
        fits = info.seats[i] >= 0 && info.seats[i] < seats;
        if (fits) {
            accts[i] = j->table_accts[info.seats[i]];
            j->seats[i] = info.seats[i];
        }
    }
    if (!fits) {
        tk_job_set_error(j, MONEY_ERR_BAD_ARGS,
                         "the offered table is not one of this game and stake");
        return;
    }
    money_result_t res;
    rc = money_sync_adopt(c, j->offer_id, j->service, j->slot, j->epoch, j->desk, accts,
                          info.nseats, j->stacks, &res);
    j->status = rc;
    if (rc != MONEY_OK) {
        tk_job_set_error(j, rc, res.error);
        if (rc == MONEY_ERR_ADOPTED && j->adopter[0] == '\0') {
            money_offer_info_t again;
            if (money_sync_offer_read(c, j->offer_id, &again) == 0) {
                snprintf(j->adopter, sizeof j->adopter, "%s", again.adopter);
                free(again.state);
            }
        }
        return;
    }
    j->n = info.nseats;
}

/* ---- the money by entity (money_entity(): mcluster.h "whole-table moves") ----------------- */

/* The engine's cluster client and money for the handoff calls, made on first use (jobs thread
 * only), or NULL when the cluster cannot be reached now (the next job tries again). */
static mcluster_t *tk_job_mcluster(tk_engine_t *eng)
{
    if (eng->ho_m != NULL)
        return eng->ho_m;
    char err[300] = "";
    eng->ho_rc = rcluster_create(gs_redis_cluster(eng->gs), NULL, err, sizeof err);
    if (eng->ho_rc == NULL) {
        log_emit(LOG_WARN, "tk_handoff_cluster_unreachable", "{s:s}", "error", err);
        return NULL;
    }
    int replicas = gs_redis_min_replicas(eng->gs);
    mcluster_opts_t o = {.xfer = {.wait_replicas = replicas > 0 ? replicas : 0,
                                  .wait_timeout_ms = gs_redis_wait_ms(eng->gs)}};
    eng->ho_m = mcluster_create(eng->ho_rc, &o);
    return eng->ho_m;
}

/* Calls that answer -EAGAIN (applied, a WAIT short; a move in flight) are idempotent: sent again
 * after 50 ms doubling, for about 3 s, before the job reports it. */
#define TK_JOB_TRIES 7

static void tk_job_pause(int attempt)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (50L << attempt) * 1000000L};
    while (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    nanosleep(&ts, NULL);
}

/* ADOPT with the money by entity: the offer read in its epoch's slot, checked against the table
 * as tk_job_adopt does, then claimed and its accounts moved (mcluster_adopt). */
static void tk_job_adopt_entity(mcluster_t *m, tk_job_t *j)
{
    money_offer_info_t info;
    int rc = mcluster_offer_read(m, j->offer_id, &info);
    if (rc != 0) {
        tk_job_set_error(j, rc, NULL);
        return;
    }
    j->state = info.state;
    if (strcmp(info.status, "adopted") == 0 && info.adopter[0] != '\0')
        snprintf(j->adopter, sizeof j->adopter, "%s", info.adopter);
    json_t *st = json_loads(info.state, 0, NULL);
    const char *game = st != NULL ? json_string_value(json_object_get(st, "game")) : NULL;
    bool fits = game != NULL && strcmp(game, j->game) == 0 &&
                json_integer_value(json_object_get(st, "stake")) == j->stake &&
                json_integer_value(json_object_get(st, "seats")) == j->nseats &&
                info.nseats <= (size_t)j->nseats;
    json_decref(st);
    const char *accts[MONEY_MAX_PLAYERS];
    for (size_t i = 0; fits && i < info.nseats; i++) {
        fits = info.seats[i] >= 0 && info.seats[i] < j->nseats;
        if (fits) {
            accts[i] = j->table_accts[info.seats[i]];
            j->seats[i] = info.seats[i];
        }
    }
    if (!fits) {
        tk_job_set_error(j, MONEY_ERR_BAD_ARGS,
                         "the offered table is not one of this game and stake");
        return;
    }
    money_result_t res;
    for (int a = 0; a < TK_JOB_TRIES; a++) {
        rc = mcluster_adopt(m, j->offer_id, j->service, j->slot, j->epoch, j->desk, accts,
                            info.nseats, j->stacks, &res);
        if (rc != -EAGAIN)
            break;
        tk_job_pause(a);
    }
    j->status = rc;
    if (rc != MONEY_OK) {
        tk_job_set_error(j, rc, res.error);
        money_offer_info_t again;
        if (rc == MONEY_ERR_ADOPTED && j->adopter[0] == '\0' &&
            mcluster_offer_read(m, j->offer_id, &again) == 0) {
            snprintf(j->adopter, sizeof j->adopter, "%s", again.adopter);
            free(again.state);
        }
        return;
    }
    j->n = info.nseats;
}

/*
 * A room's record written by entity ({r:<code>}:room, lease/room.h) over the handoff calls'
 * cluster client. The jobs thread's own durability wait covers only the money slot's master, so
 * with --redis-min-replicas the write waits for the room slot's replicas here (a shortfall is
 * logged: the record is rewritten whole at the room's next change).
 */
static void tk_job_room_entity(tk_engine_t *eng, tk_job_t *j)
{
    if (eng->room_script == NULL)
        eng->room_script = room_cluster_script();
    if (eng->room_script == NULL) {
        j->status = -ENOMEM;
        return;
    }
    if (j->kind == TK_JOB_ROOM_CREATE)
        j->status = room_cluster_create(eng->ho_rc, j->room, j->ttl_ms);
    else
        j->status = room_cluster_write(eng->ho_rc, eng->room_script, j->room, j->ttl_ms, j->take);
    int replicas = gs_redis_min_replicas(eng->gs);
    if (replicas > 0 && (j->status == 0 || j->status == 1)) {
        char key[64];
        room_key(j->room->code, key, sizeof key);
        unsigned slot = rcluster_key_slot(key, strlen(key));
        int acked = rcluster_wait(eng->ho_rc, slot, replicas, gs_redis_wait_ms(eng->gs));
        if (acked < replicas)
            log_emit(LOG_WARN, "tk_room_write_not_durable", "{s:s,s:i,s:i}", "room", j->room->code,
                     "acked", acked, "min_replicas", replicas);
    }
}

/* A handoff job with the money by entity, or a room's record write. c is the jobs thread's
 * connection to the money slot, where the registry is. */
static void tk_job_run_entity(redisContext *c, tk_job_t *j)
{
    mcluster_t *m = tk_job_mcluster(j->eng);
    if (m == NULL) {
        tk_job_set_error(j, -EIO, "redis cluster unreachable");
        return;
    }
    money_result_t res = {0};
    switch (j->kind) {
    case TK_JOB_OFFER: {
        int any = tk_job_adopter_exists(c, j->self, j->game);
        if (any == 0) {
            tk_job_set_error(j, -ENOENT, "no other ready server of the game to adopt the table");
            return;
        }
        for (int a = 0; a < TK_JOB_TRIES; a++) {
            j->status = mcluster_offer(m, j->service, &j->offer, &res);
            if (j->status != -EAGAIN)
                break;
            tk_job_pause(a);
        }
        break;
    }
    case TK_JOB_CHECK: {
        money_offer_info_t info;
        j->status = mcluster_offer_read(m, j->offer_id, &info);
        if (j->status == 0) {
            snprintf(j->status_text, sizeof j->status_text, "%s", info.status);
            free(info.state);
        }
        snprintf(res.error, sizeof res.error, "%s", money_strerror(j->status));
        break;
    }
    case TK_JOB_WITHDRAW:
        for (int a = 0; a < TK_JOB_TRIES; a++) {
            j->status = mcluster_offer_withdraw(m, j->service, &j->offer, j->status_text, &res);
            if (j->status != -EAGAIN)
                break;
            tk_job_pause(a);
        }
        break;
    case TK_JOB_ADOPT:
        tk_job_adopt_entity(m, j);
        return;
    case TK_JOB_ROOM_CREATE:
    case TK_JOB_ROOM_WRITE:
        tk_job_room_entity(j->eng, j); /* its status is the room's (tk_room_job_done) */
        return;
    }
    if (j->status != MONEY_OK)
        tk_job_set_error(j, j->status, res.error);
}

static void tk_job_run(redisContext *c, money_job_t *job)
{
    tk_job_t *j = (tk_job_t *)job;
    if (c == NULL) {
        tk_job_set_error(j, -EIO, "redis unreachable");
        return;
    }
    if (money_entity()) {
        tk_job_run_entity(c, j);
        return;
    }
    money_result_t res;
    switch (j->kind) {
    case TK_JOB_OFFER: {
        int any = tk_job_adopter_exists(c, j->self, j->game);
        if (any == 0) {
            tk_job_set_error(j, -ENOENT, "no other ready server of the game to adopt the table");
            return;
        }
        j->status = money_sync_offer(c, j->service, &j->offer, &res);
        if (j->status != MONEY_OK)
            tk_job_set_error(j, j->status, res.error);
        return;
    }
    case TK_JOB_CHECK: {
        money_offer_info_t info;
        j->status = money_sync_offer_read(c, j->offer_id, &info);
        if (j->status == 0) {
            snprintf(j->status_text, sizeof j->status_text, "%s", info.status);
            free(info.state);
        } else {
            tk_job_set_error(j, j->status, NULL);
        }
        return;
    }
    case TK_JOB_WITHDRAW:
        j->status = money_sync_offer_withdraw(c, j->service, &j->offer, j->status_text, &res);
        if (j->status != MONEY_OK)
            tk_job_set_error(j, j->status, res.error);
        return;
    case TK_JOB_ADOPT:
        tk_job_adopt(c, j);
        return;
    case TK_JOB_ROOM_CREATE:
        j->status = room_sync_create(c, j->room, j->ttl_ms);
        return;
    case TK_JOB_ROOM_WRITE:
        j->status = room_sync_write(c, j->room, j->ttl_ms, j->take);
        return;
    }
}

/* Jobs thread: the result goes back to its table (dropped with the job if the desk is gone).
 * Once the runtime stops (the lobby desk is destroyed then, before the runtime is freed) a
 * result is only freed. */
static void tk_job_done(money_job_t *job)
{
    tk_job_t *j = (tk_job_t *)job;
    tk_engine_t *eng = j->eng;
    pthread_mutex_lock(&eng->jobs_mu);
    if (eng->rt_stopped) {
        tk_job_free(j);
    } else {
        rt_msg_t m = {.type = TK_MSG_MOVE_DONE, .ptr = j, .free_fn = tk_job_free};
        rt_post(j->rt, j->desk, &m);
    }
    pthread_mutex_unlock(&eng->jobs_mu);
}

/* This server's id ("<service>:<slot>", its registry entry), from any thread. */
void tk_server_id(tk_table_t *t, char *buf, size_t len)
{
    gs_t *gs = gs_of_desk(t->desk);
    const char *svc = gs_service(gs);
    snprintf(buf, len, "%s:%" PRIu32, svc != NULL ? svc : t->eng->game->engine, gs_server_slot(gs));
}

tk_job_t *tk_job_new(tk_table_t *t, tk_job_kind_t kind)
{
    tk_job_t *j = xcalloc(1, sizeof *j);
    j->job.run = tk_job_run;
    j->job.done = tk_job_done;
    j->kind = kind;
    j->eng = t->eng;
    j->rt = rt_desk_rt(t->desk);
    j->desk = rt_desk_id(t->desk);
    const char *svc = gs_service(gs_of_desk(t->desk));
    snprintf(j->service, sizeof j->service, "%s", svc != NULL ? svc : t->eng->game->engine);
    snprintf(j->offer_id, sizeof j->offer_id, "%s", t->offer_id);
    return j;
}

int tk_job_submit(tk_table_t *t, tk_job_t *j)
{
    int rc = money_jobs_submit(t->eng->jobs, &j->job);
    if (rc != 0)
        tk_job_free(j);
    return rc;
}

/* The offer of this table (desk, handoff number 1: a desk moves at most once). */
static void tk_offer_base(const tk_table_t *t, money_offer_t *o)
{
    *o = (money_offer_t){.slot = t->slot, .epoch = t->epoch, .desk = rt_desk_id(t->desk), .n = 1};
}

/* The kit's state of the table (and the game's export_state) as the offer's JSON text. */
static char *tk_move_state(tk_table_t *t)
{
    json_t *st = json_object();
    json_object_set_new(st, "v", json_integer(1));
    json_object_set_new(st, "engine", json_string(t->eng->game->engine));
    json_object_set_new(st, "game", json_string(t->game));
    json_object_set_new(st, "stake", json_integer(t->stake));
    json_object_set_new(st, "seats", json_integer(t->nseats));
    json_object_set_new(st, "seq", json_integer((json_int_t)t->seq));
    json_object_set_new(st, "button", json_integer(t->button));
    json_object_set_new(st, "event_seq", json_integer((json_int_t)t->event_seq));
    json_t *players = json_array();
    for (int i = 0; i < t->nseats; i++) {
        const tk_seat_t *s = &t->seat[i];
        if (s->state != TK_SEATED)
            continue;
        char id[24];
        tk_player_name(s->player, id, sizeof id);
        json_array_append_new(players, json_pack("{s:i,s:s,s:b,s:I,s:I,s:b}", "seat", i, "player",
                                                 id, "bot", s->bot, "stack", (json_int_t)s->stack,
                                                 "bank_ms", (json_int_t)s->bank_ms, "out", s->out));
    }
    json_object_set_new(st, "players", players);
    if (t->room != NULL) {
        char *room = room_record_json(&t->room->rec);
        json_t *r = room != NULL ? json_loads(room, 0, NULL) : NULL;
        free(room);
        if (r != NULL)
            json_object_set_new(st, "room", r);
    }
    if (t->eng->game->export_state != NULL) {
        json_t *g = t->eng->game->export_state(t, t->g);
        if (g != NULL)
            json_object_set_new(st, "game_state", g);
    }
    char *text = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    return text;
}

/* A move in progress counts as a human desk (gs_table_move_begin): its round is over, but its
 * players are still here until the adopter has them, so the drain waits for it (within its
 * bound) before the server exits. */
void tk_move_hold(tk_table_t *t, bool hold)
{
    if (hold == t->move_held)
        return;
    t->move_held = hold;
    if (hold)
        gs_table_move_begin(gs_of_desk(t->desk));
    else
        gs_table_move_end(gs_of_desk(t->desk));
}

/* The table cannot move (or gave up): it closes as before, each player re-seated alone. */
static void tk_move_fallback(tk_table_t *t, const char *why)
{
    log_emit(LOG_WARN, "tk_table_move_fallback", "{s:I,s:s,s:s}", "desk",
             (json_int_t)rt_desk_id(t->desk), "offer", t->offer_id, "why", why);
    t->move = TK_MOVE_NONE;
    t->move_refused = true;
    t->closed = false;
    tk_close(t);
    tk_move_hold(t, false);
}

static void tk_move_arm(tk_table_t *t, int64_t ms)
{
    if (rt_desk_timer_arm(t->desk, ms, TK_TIMER_MOVE, NULL) != 0)
        log_emit(LOG_ERROR, "tk_move_timer_failed", "{s:I}", "desk",
                 (json_int_t)rt_desk_id(t->desk));
}

/* Writes the offer once no seat has money in flight (TK_MOVE_PREPARING). */
static void tk_move_offer(tk_table_t *t)
{
    bool busy = t->pending_cashouts > 0;
    for (int i = 0; i < t->nseats; i++)
        busy = busy || t->seat[i].state == TK_BUYING || t->seat[i].topping;
    if (busy) {
        if (clock_mono_ms() >= t->move_until_ms)
            tk_move_fallback(t, "seats still had money in flight");
        else
            tk_move_arm(t, 20);
        return;
    }
    tk_job_t *j = tk_job_new(t, TK_JOB_OFFER);
    tk_offer_base(t, &j->offer);
    if (money_offer_id(j->service, &j->offer, t->offer_id, sizeof t->offer_id) != 0) {
        tk_job_free(j);
        tk_move_fallback(t, "no offer id");
        return;
    }
    snprintf(j->offer_id, sizeof j->offer_id, "%s", t->offer_id);
    tk_server_id(t, j->self, sizeof j->self);
    snprintf(j->game, sizeof j->game, "%s", t->game);
    j->state = tk_move_state(t);
    j->offer.state = j->state;
    if (t->eng->game->money == TK_MONEY_STACK) {
        for (int i = 0; i < t->nseats; i++) {
            tk_seat_t *s = &t->seat[i];
            if (s->state != TK_SEATED)
                continue;
            size_t k = j->offer.nseats++;
            snprintf(j->accts[k], sizeof j->accts[k], "%s", s->acct);
            tk_owner_wallet(t->eng, s, j->owners[k], sizeof j->owners[k]);
            j->offer.seats[k] =
                (money_handoff_seat_t){.account = j->accts[k], .owner = j->owners[k], .seat = i};
        }
    }
    if (j->state == NULL || tk_job_submit(t, j) != 0) {
        tk_move_fallback(t, "the offer could not be queued");
        return;
    }
    t->move = TK_MOVE_OFFERING;
}

/*
 * The server drains and the table's round is over: it moves as a whole when it can (players
 * seated, Redis for the handoff, not a table of bots), else it closes (tk_close). Leavers go
 * first, and players who cannot cover a round are busted, as after any round.
 */
void tk_move_or_close(tk_table_t *t)
{
    if (t->closed || t->move != TK_MOVE_NONE)
        return;
    if (t->eng->jobs == NULL || t->bot_table || t->move_refused || tk_humans(t) == 0 ||
        t->eng->set.move_wait_ms < 0) {
        tk_close(t);
        return;
    }
    t->closed = true; /* no round, fill or idle from now on */
    t->gap_armed = false;
    int64_t least = tk_min_stack(t);
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (s->state == TK_LEAVING) {
            tk_cash_out(t, i);
            tk_unseat(t, i);
        } else if (s->state == TK_SEATED && s->stack < least) {
            if (t->eng->game->topup)
                tk_topup(t, i); /* the offer waits for it (tk_move_offer) */
            else
                tk_bust(t, i);
        }
    }
    rt_msg_t m = {.type = TK_MSG_CLOSED, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    unsigned humans = 0;
    for (int i = 0; i < t->nseats; i++)
        humans += t->seat[i].state == TK_SEATED && !t->seat[i].bot;
    if (humans == 0) {
        t->closed = false;
        tk_close(t);
        return;
    }
    t->move = TK_MOVE_PREPARING;
    tk_move_hold(t, true);
    t->move_start_ms = clock_mono_ms();
    t->move_until_ms = t->move_start_ms +
                       (t->eng->set.move_wait_ms > 0 ? t->eng->set.move_wait_ms : TK_MOVE_WAIT_MS);
    tk_move_offer(t);
}

/* The table was adopted elsewhere: its players sit there now; the desk lets go. */
static void tk_move_release(tk_table_t *t)
{
    gs_t *gs = gs_of_desk(t->desk);
    unsigned moved = 0;
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (s->state == TK_EMPTY)
            continue;
        if (!s->bot) {
            gs_seat(gs, s->player, 0);
            moved++;
        }
        memset(s, 0, offsetof(tk_seat_t, ops));
    }
    tk_sync(t);
    metrics_add(t->eng->m_moved_out, 1);
    log_emit(LOG_INFO, "tk_table_moved", "{s:I,s:s,s:i,s:I}", "desk",
             (json_int_t)rt_desk_id(t->desk), "offer", t->offer_id, "players", (int)moved, "ms",
             (json_int_t)(clock_mono_ms() - t->move_start_ms));
    t->move = TK_MOVE_NONE;
    tk_move_hold(t, false);
    rt_msg_t m = {.type = TK_MSG_GONE, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    rt_desk_destroy(t->desk);
}

/* The offer was voided (this server's epoch was recovered elsewhere: the chips are back in
 * the wallets): the players are told and re-seated by their gateways; nothing to cash out. */
static void tk_move_voided(tk_table_t *t)
{
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state == TK_SEATED || t->seat[i].state == TK_LEAVING) {
            t->seat[i].stack = 0;
            t->seat[i].state = TK_CLOSED;
        }
    t->move = TK_MOVE_NONE;
    t->move_refused = true;
    tk_tell_closing(t);
    tk_move_hold(t, false);
}

/* When to read the offer again: 25 ms, then twice as long each time up to 400 ms. The players
 * have moved once their gateway has the adopter's answer; this only decides how soon the old
 * desk lets go, and keeps a drain of many tables from flooding the handoff thread. */
static int64_t tk_move_check_ms(tk_table_t *t)
{
    int k = t->move_checks < 4 ? t->move_checks : 4;
    t->move_checks++;
    return 25LL << k;
}

/* TK_TIMER_MOVE: go on with the move (check the offer, withdraw it when time is up). */
void tk_move_timer(tk_table_t *t)
{
    if (t->move == TK_MOVE_PREPARING) {
        tk_move_offer(t);
        return;
    }
    if (t->move != TK_MOVE_OFFERED)
        return;
    bool late = clock_mono_ms() >= t->move_until_ms;
    tk_job_t *j = tk_job_new(t, late ? TK_JOB_WITHDRAW : TK_JOB_CHECK);
    tk_offer_base(t, &j->offer);
    if (tk_job_submit(t, j) != 0) {
        tk_move_arm(t, 100);
        return;
    }
    t->move = late ? TK_MOVE_WITHDRAWING : TK_MOVE_CHECKING;
}

/* Old table: an offer, check or withdrawal answered. */
static void tk_move_done_old(tk_table_t *t, tk_job_t *j)
{
    if (j->kind == TK_JOB_OFFER) {
        if (j->status != MONEY_OK) {
            tk_move_fallback(t, j->error);
            return;
        }
        t->move = TK_MOVE_OFFERED;
        uint64_t players[TK_MAX_SEATS];
        size_t n = 0;
        for (int i = 0; i < t->nseats; i++)
            if (t->seat[i].state == TK_SEATED && !t->seat[i].bot)
                players[n++] = t->seat[i].player;
        gs_move_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n, t->offer_id);
        /* Its spectators follow a player, or watch another table (docs/spectators.md). */
        tk_spect_end(t, CROUPIER__ERROR_CODE__NO_SUCH_TABLE, "the table moved to another server");
        log_emit(LOG_INFO, "tk_table_offered", "{s:I,s:s,s:i,s:I}", "desk",
                 (json_int_t)rt_desk_id(t->desk), "offer", t->offer_id, "players", (int)n, "ms",
                 (json_int_t)(clock_mono_ms() - t->move_start_ms));
        t->move_checks = 0;
        tk_move_arm(t, tk_move_check_ms(t));
        return;
    }
    /* CHECK or WITHDRAW */
    t->move = TK_MOVE_OFFERED;
    if (j->status != MONEY_OK) {
        if (j->status == MONEY_ERR_STALE_EPOCH || j->status == MONEY_ERR_NO_OFFER) {
            /* The fence moved (the recovery voids the offer) or the record is gone. */
            tk_move_voided(t);
            return;
        }
        log_emit(LOG_WARN, "tk_move_check_failed", "{s:s,s:i,s:s}", "offer", t->offer_id, "status",
                 j->status, "error", j->error);
        tk_move_arm(t, 100);
        return;
    }
    if (strcmp(j->status_text, "adopted") == 0) {
        tk_move_release(t);
    } else if (strcmp(j->status_text, "withdrawn") == 0) {
        metrics_add(t->eng->m_move_withdrawn, 1);
        tk_move_fallback(t, "no server adopted the table in time");
    } else if (strcmp(j->status_text, "void") == 0) {
        tk_move_voided(t);
    } else {
        tk_move_arm(t, tk_move_check_ms(t)); /* still offered */
    }
}

void tk_adopt_answer_all(tk_table_t *t, Croupier__ErrorCode code, const char *why,
                         const char *adopted_by)
{
    gs_t *gs = gs_of_desk(t->desk);
    for (int k = 0; k < t->nadopt_q; k++) {
        if (adopted_by != NULL)
            gs_reply_adopted_by(gs, t->adopt_q[k], adopted_by);
        else
            gs_reply(gs, t->adopt_q[k], code, why, NULL);
    }
    t->nadopt_q = 0;
}

/* The adoption failed here: the requests are answered, the table goes. */
static void tk_adopt_abandon(tk_table_t *t, tk_job_t *j)
{
    metrics_add(t->eng->m_move_failed, 1);
    log_emit(LOG_INFO, "tk_adopt_failed", "{s:s,s:i,s:s,s:s}", "offer", t->offer_id, "status",
             j->status, "error", j->error, "adopter", j->adopter);
    char by[MONEY_ID_MAX + 1] = "";
    if (j->status == MONEY_ERR_ADOPTED && j->adopter[0] != '\0') {
        /* "<service>:<slot>:<epoch>:<desk>" -> the server id "<service>:<slot>" */
        snprintf(by, sizeof by, "%s", j->adopter);
        char *c = strchr(by, ':');
        c = c != NULL ? strchr(c + 1, ':') : NULL;
        if (c != NULL)
            *c = '\0';
        char self[MONEY_ID_MAX + 1];
        tk_server_id(t, self, sizeof self);
        if (strcmp(by, self) == 0)
            by[0] = '\0'; /* never send a gateway back here */
    }
    if (by[0] != '\0')
        tk_adopt_answer_all(t, CROUPIER__ERROR_CODE__UNAVAILABLE, NULL, by);
    else if (j->status == MONEY_ERR_OFFER_VOID || j->status == MONEY_ERR_NO_OFFER ||
             j->status == MONEY_ERR_BAD_ARGS || j->status == MONEY_ERR_ADOPTED)
        tk_adopt_answer_all(t, CROUPIER__ERROR_CODE__TABLE_CLOSED,
                            "the table's move was called off; its server re-seats its players",
                            NULL);
    else
        tk_adopt_answer_all(t, CROUPIER__ERROR_CODE__UNAVAILABLE, j->error, NULL);
    t->move = TK_MOVE_NONE;
    rt_msg_t m = {.type = TK_MSG_GONE, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    rt_desk_destroy(t->desk);
}

/* The adopted table takes its seats, players and match state. */
static void tk_adopt_import(tk_table_t *t, tk_job_t *j)
{
    gs_t *gs = gs_of_desk(t->desk);
    json_t *st = json_loads(j->state, 0, NULL);
    bool stacks = t->eng->game->money == TK_MONEY_STACK;
    json_t *room = json_object_get(st, "room");
    if (room != NULL)
        tk_room_import(t, room); /* its seats and rules first: the seats below are its own */
    t->seq = (uint64_t)json_integer_value(json_object_get(st, "seq"));
    t->event_seq = (uint64_t)json_integer_value(json_object_get(st, "event_seq"));
    json_t *b = json_object_get(st, "button");
    t->button =
        json_is_integer(b) && json_integer_value(b) >= -1 && json_integer_value(b) < t->nseats
            ? (int)json_integer_value(b)
            : -1;
    size_t idx;
    json_t *p;
    json_array_foreach(json_object_get(st, "players"), idx, p)
    {
        json_int_t seat = json_integer_value(json_object_get(p, "seat"));
        const char *id = json_string_value(json_object_get(p, "player"));
        if (seat < 0 || seat >= t->nseats || id == NULL || t->seat[seat].state != TK_EMPTY)
            continue;
        tk_seat_t *s = &t->seat[seat];
        int64_t stack = json_integer_value(json_object_get(p, "stack"));
        if (stacks) {
            bool found = false;
            for (size_t k = 0; k < j->n && !found; k++)
                if (j->seats[k] == seat) {
                    stack = j->stacks[k]; /* what the account held: the chips themselves */
                    found = true;
                }
            if (!found)
                continue;
        } else {
            stack = 0;
        }
        s->player = strtoull(id, NULL, 10);
        s->state = TK_SEATED;
        s->bot = json_is_true(json_object_get(p, "bot"));
        s->away = !s->bot; /* until the player's Adopt or resume arrives */
        s->stack = stack;
        s->bank_ms = json_integer_value(json_object_get(p, "bank_ms"));
        s->out = json_is_true(json_object_get(p, "out"));
        if (!s->bot)
            gs_seat(gs, s->player, rt_desk_id(t->desk));
        if (t->eng->game->seat_changed != NULL)
            t->eng->game->seat_changed(t, t->g, (int)seat, true);
    }
    json_t *gst = json_object_get(st, "game_state");
    if (gst != NULL && t->eng->game->import_state != NULL &&
        t->eng->game->import_state(t, t->g, gst) != 0)
        log_emit(LOG_ERROR, "tk_import_state_refused", "{s:s,s:s}", "offer", t->offer_id, "game",
                 t->game);
    json_decref(st);
    t->adopted = true;
    t->move = TK_MOVE_NONE;
    tk_sync(t);
    metrics_add(t->eng->m_moved_in, 1);
    log_emit(LOG_INFO, "tk_table_adopted", "{s:I,s:s,s:i,s:I}", "desk",
             (json_int_t)rt_desk_id(t->desk), "offer", t->offer_id, "players", (int)tk_humans(t),
             "ms", (json_int_t)(clock_mono_ms() - t->move_start_ms));
    for (int k = 0; k < t->nadopt_q; k++) {
        gs_request_t *req = t->adopt_q[k];
        int i = tk_find(t, req->player_id);
        if (i < 0) {
            gs_reply(gs, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not at the moved table", NULL);
            continue;
        }
        t->seat[i].away = false;
        tk_reply_snapshot(t, req, i);
    }
    t->nadopt_q = 0;
    if (t->room != NULL) {
        rt_msg_t m = {.type = TK_MSG_ROOM,
                      .arg = rt_desk_id(t->desk),
                      .ptr = xstrdup(t->room->rec.code),
                      .free_fn = free};
        rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    }
    tk_tell_lobby(t);
    if (stacks) {
        int64_t least = tk_min_stack(t);
        for (int i = 0; i < t->nseats; i++)
            if (t->seat[i].state == TK_SEATED && t->seat[i].stack < least && t->eng->game->topup)
                tk_topup(t, i);
    }
    tk_maybe_schedule(t);
    tk_maybe_fill(t);
    /* This server began to drain while the adoption was in flight: the table moves on again. */
    if (rt_intake_stopped(rt_desk_rt(t->desk)))
        tk_move_or_close(t);
}

/* Table: an Adopt request (from the lobby). */
void tk_table_adopt(tk_table_t *t, gs_request_t *req)
{
    if (t->adopted) {
        int i = tk_find(t, req->player_id);
        if (i < 0) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__NOT_SEATED, "not at the moved table");
            return;
        }
        t->seat[i].away = false;
        tk_reply_snapshot(t, req, i);
        return;
    }
    if (t->move == TK_MOVE_NONE && tk_free_seats(t) == t->nseats) {
        snprintf(t->offer_id, sizeof t->offer_id, "%s", req->frame->adopt->offer_id);
        tk_job_t *j = tk_job_new(t, TK_JOB_ADOPT);
        snprintf(j->game, sizeof j->game, "%s", t->game);
        j->stake = t->stake;
        j->nseats = t->nseats;
        for (int i = 0; i < TK_MAX_SEATS; i++)
            snprintf(j->table_accts[i], sizeof j->table_accts[i], "%s", t->seat[i].acct);
        /* the adopter's accounts carry the adopter's epoch: the table's own */
        j->slot = t->slot;
        j->epoch = t->epoch;
        if (tk_job_submit(t, j) != 0) {
            tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "server stopping");
            return;
        }
        t->move = TK_MOVE_ADOPTING;
        t->move_start_ms = clock_mono_ms();
    }
    if (t->move != TK_MOVE_ADOPTING || t->nadopt_q == TK_ADOPT_QUEUE) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__UNAVAILABLE, "the table is busy; retry");
        return;
    }
    t->adopt_q[t->nadopt_q++] = req;
}

void tk_move_done(tk_table_t *t, tk_job_t *j)
{
    if (j->kind == TK_JOB_ROOM_CREATE || j->kind == TK_JOB_ROOM_WRITE) {
        tk_room_job_done(t, j);
        return;
    }
    if (j->kind == TK_JOB_ADOPT) {
        if (t->move != TK_MOVE_ADOPTING)
            return;
        if (j->status == MONEY_OK) {
            tk_adopt_import(t, j);
            if (gs_fenced(gs_of_desk(t->desk)))
                tk_fence(t); /* adopted while cut off from Redis: it closes at once */
        } else {
            tk_adopt_abandon(t, j);
        }
        return;
    }
    if (t->move == TK_MOVE_OFFERING || t->move == TK_MOVE_CHECKING ||
        t->move == TK_MOVE_WITHDRAWING)
        tk_move_done_old(t, j);
}
