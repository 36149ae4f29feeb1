/*
 * tk_lobby.c -- the lobby desk (docs/architecture.md §12 "Desks", "Idle tables"): one per kit
 * engine, on worker 0. It keeps a reference to every table (tk_ref_t), routes a join to a table
 * of its game and stake with a free seat (or opens one), a JoinRoom to the room of its code and
 * an Adopt to the table of its offer, counts the joins on their way so that no seat is
 * overbooked, retires idle tables, and keeps the tables' ads in the shared lobby (lease/lobby.h).
 * Internal to the kit: tk_int.h has the contract. Everything runs on the lobby's desk thread.
 */
#include "tk_int.h"

/* ---- lobby ------------------------------------------------------------------------------- */

static tk_ref_t *tk_lobby_find(tk_lobby_t *lb, rt_desk_id_t desk)
{
    for (size_t i = 0; i < lb->nrefs; i++)
        if (lb->refs[i].desk == desk)
            return &lb->refs[i];
    return NULL;
}

static void tk_lobby_forget(tk_lobby_t *lb, tk_ref_t *ref)
{
    if (lb->eng->ads != NULL)
        lobby_pub_remove(lb->eng->ads, ref->desk);
    *ref = lb->refs[--lb->nrefs];
}

static void tk_lobby_advertise(tk_lobby_t *lb, const tk_ref_t *ref)
{
    if (lb->eng->ads == NULL || ref->is_room)
        return; /* a room is joined by its code only */
    if (ref->closed || ref->free <= 0)
        lobby_pub_remove(lb->eng->ads, ref->desk);
    else
        lobby_pub_set(lb->eng->ads, ref->desk, ref->game, ref->stake, ref->seats, ref->free);
}

static tk_ref_t *tk_lobby_add(tk_lobby_t *lb, rt_desk_id_t id, const char *game, int64_t stake)
{
    if (lb->nrefs == lb->cap) {
        lb->cap = lb->cap == 0 ? 16 : lb->cap * 2;
        lb->refs = xreallocarray(lb->refs, lb->cap, sizeof *lb->refs);
    }
    tk_ref_t *ref = &lb->refs[lb->nrefs++];
    int seats = tk_game_seats(lb->eng, game);
    *ref = (tk_ref_t){.desk = id, .stake = stake, .seats = seats, .free = seats};
    snprintf(ref->game, sizeof ref->game, "%s", game);
    return ref;
}

/* Lobby: opens a table with bots (tk_engine_open_table). */
static void tk_lobby_open(rt_desk_t *desk, tk_lobby_t *lb, const tk_open_t *o)
{
    rt_desk_id_t id;
    if (tk_table_open(lb->eng, o->game, o->stake, NULL, &id) != 0) {
        log_emit(LOG_ERROR, "tk_open_table_failed", "{s:s,s:I}", "game", o->game, "stake",
                 (json_int_t)o->stake);
        return;
    }
    tk_ref_t *ref = tk_lobby_add(lb, id, o->game, o->stake);
    ref->free -= o->bots < ref->seats ? o->bots : ref->seats;
    tk_lobby_advertise(lb, ref);
    rt_msg_t m = {.type = TK_MSG_ADD_BOTS, .arg = (uint64_t)o->bots};
    rt_post(rt_desk_rt(desk), id, &m);
}

/* Frees a join and the room it still carries; NULL is a no-op. */
void tk_join_free(tk_join_t *j)
{
    if (j != NULL)
        free(j->room);
    free(j);
}

void tk_join_dropped(void *p)
{
    tk_join_t *j = p;
    gs_reply(j->gs, j->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "desk unavailable", NULL);
    tk_join_free(j);
}

static void tk_lobby_join(rt_desk_t *desk, tk_lobby_t *lb, rt_msg_t *msg)
{
    tk_join_t *j = msg->ptr;
    msg->ptr = NULL;
    msg->free_fn = NULL;
    gs_t *gs = gs_of_desk(desk);
    if (rt_intake_stopped(rt_desk_rt(desk))) {
        tk_count_refusal(lb->eng, CROUPIER__ERROR_CODE__DRAINING);
        gs_reply(gs, j->req, CROUPIER__ERROR_CODE__DRAINING, "server is draining", NULL);
        tk_join_free(j);
        return;
    }
    const Croupier__Join *jn = j->req->frame->join;
    const Croupier__RoomJoin *rj = j->req->frame->room;
    tk_ref_t *ref = NULL;
    if (rj != NULL && rj->create != NULL && j->room == NULL) {
        gs_reply(gs, j->req, CROUPIER__ERROR_CODE__INTERNAL, "room rules lost", NULL);
        tk_join_free(j);
        return;
    }
    if (rj != NULL && rj->code != NULL) {
        /* JoinRoom: the table of that code, whatever its seats (the table judges). */
        for (size_t i = 0; i < lb->nrefs && ref == NULL; i++)
            if (lb->refs[i].is_room && strcmp(lb->refs[i].room, rj->code) == 0)
                ref = &lb->refs[i];
        if (ref == NULL) {
            tk_count_refusal(lb->eng, CROUPIER__ERROR_CODE__ROOM_NOT_FOUND);
            gs_reply(gs, j->req, CROUPIER__ERROR_CODE__ROOM_NOT_FOUND,
                     "no room of that code on this server", NULL);
            tk_join_free(j);
            return;
        }
    }
    for (size_t i = 0; rj == NULL && i < lb->nrefs && ref == NULL; i++)
        if (lb->refs[i].stake == jn->stake && lb->refs[i].free > 0 && !lb->refs[i].closed &&
            !lb->refs[i].is_room && strcmp(lb->refs[i].game, jn->game) == 0)
            ref = &lb->refs[i];
    if (ref == NULL) {
        /* A new table: for a join that found none, or a CreateRoom (always its own). */
        rt_desk_id_t id;
        int rc = tk_table_open(lb->eng, jn->game, jn->stake, j->room, &id);
        if (rc != 0) {
            tk_count_refusal(lb->eng, CROUPIER__ERROR_CODE__UNAVAILABLE);
            gs_reply(gs, j->req, CROUPIER__ERROR_CODE__UNAVAILABLE, "could not open a table", NULL);
            tk_join_free(j);
            return;
        }
        ref = tk_lobby_add(lb, id, jn->game, jn->stake);
        if (j->room != NULL) {
            ref->is_room = true;
            ref->seats = ref->free = j->room->rec.seats;
            j->room = NULL; /* the table's now */
        }
    }
    ref->free--;
    ref->joins_sent++;
    tk_lobby_advertise(lb, ref);
    rt_msg_t m = {.type = TK_MSG_JOIN, .ptr = j, .free_fn = tk_join_dropped};
    rt_post(rt_desk_rt(desk), ref->desk, &m);
}

/* Lobby: an Adopt goes to the table of its offer, or to a new table opened for it (not
 * joinable until the adopted table reports its free seats). */
static void tk_lobby_adopt(rt_desk_t *desk, tk_lobby_t *lb, rt_msg_t *msg)
{
    tk_join_t *j = msg->ptr;
    msg->ptr = NULL;
    msg->free_fn = NULL;
    gs_t *gs = gs_of_desk(desk);
    const Croupier__Adopt *a = j->req->frame->adopt;
    tk_ref_t *ref = NULL;
    for (size_t i = 0; i < lb->nrefs && ref == NULL; i++)
        if (strcmp(lb->refs[i].offer, a->offer_id) == 0)
            ref = &lb->refs[i];
    if (ref == NULL) {
        rt_desk_id_t id;
        int rc = rt_intake_stopped(rt_desk_rt(desk))
                     ? -ESHUTDOWN
                     : tk_table_open(lb->eng, a->game, a->stake, NULL, &id);
        if (rc != 0) {
            Croupier__ErrorCode code = rc == -ESHUTDOWN ? CROUPIER__ERROR_CODE__DRAINING
                                                        : CROUPIER__ERROR_CODE__UNAVAILABLE;
            tk_count_refusal(lb->eng, code);
            gs_reply(gs, j->req, code,
                     rc == -ESHUTDOWN ? "server is draining" : "could not open a table", NULL);
            free(j);
            return;
        }
        ref = tk_lobby_add(lb, id, a->game, a->stake);
        ref->free = 0;
        snprintf(ref->offer, sizeof ref->offer, "%s", a->offer_id);
    }
    rt_msg_t m = {.type = TK_MSG_ADOPT, .ptr = j, .free_fn = tk_join_dropped};
    rt_post(rt_desk_rt(desk), ref->desk, &m);
}

static void tk_lobby_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    tk_lobby_t *lb = state;
    if (msg->type == TK_MSG_JOIN) {
        tk_lobby_join(desk, lb, msg);
        return;
    }
    if (msg->type == TK_MSG_ADOPT) {
        tk_lobby_adopt(desk, lb, msg);
        return;
    }
    if (msg->type == TK_MSG_OPEN) {
        tk_lobby_open(desk, lb, msg->ptr);
        return;
    }
    if (msg->type == TK_MSG_TOUR_SCAN) {
        tk_tour_lobby_scan(desk, lb->eng);
        return;
    }
    if (msg->type == TK_MSG_TOUR_CLAIMED) {
        tk_tour_lobby_claimed(desk, lb->eng, msg->ptr); /* the runtime frees the job after */
        return;
    }
    tk_ref_t *ref = tk_lobby_find(lb, msg->arg);
    if (ref == NULL)
        return;
    switch (msg->type) {
    case TK_MSG_SEATS: {
        /* The table's free seats, less the joins still on their way there. */
        uint32_t seen = (uint32_t)(msg->arg2 >> 32), inflight = ref->joins_sent - seen;
        ref->free = (int)(uint32_t)msg->arg2 - (int)inflight;
        tk_lobby_advertise(lb, ref);
        return;
    }
    case TK_MSG_CLOSED:
        ref->closed = true;
        ref->free = 0;
        tk_lobby_advertise(lb, ref);
        return;
    case TK_MSG_GONE:
        tk_lobby_forget(lb, ref);
        return;
    case TK_MSG_ROOM:
        ref->is_room = true;
        snprintf(ref->room, sizeof ref->room, "%s", (const char *)msg->ptr);
        if (lb->eng->ads != NULL)
            lobby_pub_remove(lb->eng->ads, ref->desk); /* an adopted room is never an ad */
        return;
    case TK_MSG_IDLE: {
        /* Retire the table only when no join is on its way there; either way it is told. */
        uint32_t seen = (uint32_t)(msg->arg2 >> 32);
        bool go = seen == ref->joins_sent && !ref->closed;
        rt_desk_id_t id = ref->desk;
        if (go)
            tk_lobby_forget(lb, ref);
        rt_msg_t m = {.type = TK_MSG_RETIRE, .arg2 = go};
        rt_post(rt_desk_rt(desk), id, &m);
        return;
    }
    default:
        return;
    }
}

static void tk_lobby_on_request(rt_desk_t *desk, void *state, gs_request_t *req)
{
    (void)state;
    if (req->kind == GS_REQ_WATCH) { /* the lobby is no table (docs/spectators.md) */
        if (req->request_id == 0)
            gs_request_free(req);
        else
            gs_reply(gs_of_desk(desk), req, CROUPIER__ERROR_CODE__NO_SUCH_TABLE,
                     "no such table at this server", NULL);
        return;
    }
    gs_reply(gs_of_desk(desk), req, CROUPIER__ERROR_CODE__NOT_SEATED, "not seated on this server",
             NULL);
}

static void tk_lobby_on_nothing(rt_desk_t *desk, void *state)
{
    (void)desk;
    (void)state;
}

static void tk_lobby_on_destroy(rt_desk_t *desk, void *state)
{
    (void)desk;
    tk_lobby_t *lb = state;
    /* The runtime stops: handoff results are no longer posted (tk_job_done). */
    pthread_mutex_lock(&lb->eng->jobs_mu);
    lb->eng->rt_stopped = true;
    pthread_mutex_unlock(&lb->eng->jobs_mu);
    free(lb->refs);
    free(lb);
}

/* The lobby's one timer: the next look for tournament tables to host (tk_tour.c). */
static void tk_lobby_on_timer(rt_desk_t *desk, void *state, uint64_t cookie)
{
    tk_lobby_t *lb = state;
    if ((cookie & 0xff) == TK_TIMER_TOUR_SCAN)
        tk_tour_lobby_scan(desk, lb->eng);
}

const gs_desk_ops_t tk_lobby_ops = {
    .on_request = tk_lobby_on_request,
    .on_timer = tk_lobby_on_timer,
    .on_intake_stopped = tk_lobby_on_nothing,
    .on_void = tk_lobby_on_nothing,
    .on_message = tk_lobby_on_message,
    .on_destroy = tk_lobby_on_destroy,
};
