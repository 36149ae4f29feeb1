/*
 * tk_spect.c -- spectators of the kit's tables (docs/spectators.md, docs/architecture.md §12).
 *
 * A table keeps each gateway link's count of its spectators (rpc.proto WatchTable: absolute,
 * so a lost frame is repaired by the next) and decides alone: whether it may be watched (the
 * game's watchable, --<prefix>-spectators, a room's no_spectators), the cap per table, the
 * public Snapshot (the game's snapshot() for seat -1). Its public events -- every push to all
 * seats (tk_push_all), the public variant of a deal (tk_push_deal) or of a push sent in variants
 * (tk_push_watch) -- are encoded once (gs_push_watch) and sent once to each link with
 * spectators; the gateway writes those bytes to each of its spectators.
 */
#include "tk_int.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"

static int tk_spect_cap(const tk_table_t *t)
{
    long n = t->eng->set.spectators;
    return n < 0 ? 0 : n == 0 ? TK_SPECTATORS : (int)n;
}

/* Why the table may not be watched, or NULL when it may. */
static const char *tk_spect_refusal(const tk_table_t *t)
{
    if (!t->eng->game->watchable)
        return "this game's tables may not be watched";
    if (tk_spect_cap(t) == 0)
        return "this server's tables may not be watched";
    if (t->room != NULL && t->room->rec.no_spectators)
        return "this private room may not be watched";
    if (tk_tour_duplicate(t))
        return "a duplicate deal is not watched while other tables play it";
    return NULL;
}

static int tk_spect_find(const tk_table_t *t, uint64_t link)
{
    for (int i = 0; i < t->nspect_links; i++)
        if (t->spect_link[i] == link)
            return i;
    return -1;
}

/* Sets link's count to n (0 forgets it), keeps the sum and the metric, and tells the main
 * thread when the link starts or stops watching. */
static void tk_spect_set(tk_table_t *t, uint64_t link, uint32_t n)
{
    int i = tk_spect_find(t, link);
    gs_t *gs = gs_of_desk(t->desk);
    uint32_t before = i >= 0 ? t->spect_n[i] : 0;
    if (n == before || (t->spect_ended && n > 0))
        return;
    if (i < 0) {
        if (t->nspect_links == TK_SPECT_LINKS)
            return;
        i = t->nspect_links++;
        t->spect_link[i] = link;
        t->spect_n[i] = 0;
        gs_watch_link(gs, rt_desk_id(t->desk), link, true);
    }
    t->spectators = t->spectators - before + n;
    metrics_add(t->eng->m_spectators, (double)n - (double)before);
    t->spect_n[i] = n;
    if (n == 0) {
        t->spect_link[i] = t->spect_link[--t->nspect_links];
        t->spect_n[i] = t->spect_n[t->nspect_links];
        gs_watch_link(gs, rt_desk_id(t->desk), link, false);
    }
}

void tk_spect_request(tk_table_t *t, gs_request_t *req)
{
    uint32_t n = req->frame->watch->spectators;
    if (req->request_id == 0) { /* a count changed: no answer */
        tk_spect_set(t, req->link_id, n);
        gs_request_free(req);
        return;
    }
    const char *why = tk_spect_refusal(t);
    if (why != NULL) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__NOT_WATCHABLE, why);
        return;
    }
    if (t->closed || t->spect_ended) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__NO_SUCH_TABLE, "the table is closing");
        return;
    }
    int i = tk_spect_find(t, req->link_id);
    uint32_t here = i >= 0 ? t->spect_n[i] : 0;
    uint32_t others = t->spectators - here;
    if (others + n > (uint32_t)tk_spect_cap(t)) {
        tk_refuse(t, req, CROUPIER__ERROR_CODE__WATCH_FULL,
                  "the table has as many spectators "
                  "as it allows");
        return;
    }
    tk_spect_set(t, req->link_id, n);
    tk_reply_snapshot(t, req, -1);
}

void tk_spect_push(tk_table_t *t, const Croupier__ServerMessage *m)
{
    if (t->nspect_links > 0)
        gs_push_watch(gs_of_desk(t->desk), rt_desk_id(t->desk), m);
}

void tk_push_watch(tk_table_t *t, Croupier__ServerMessage *m)
{
    m->has_event_seq = true;
    m->event_seq = t->event_seq;
    tk_spect_push(t, m);
}

int tk_push_event_watch(tk_table_t *t, const ProtobufCMessage *ev)
{
    if (t->nspect_links == 0)
        return 0;
    frame_error_t err;
    ProtobufCBinaryData body = {0};
    if (frame_pack_game_body(ev, NULL, NULL, &body, &err) != 0) {
        log_emit(LOG_ERROR, "tk_game_message_refused", "{s:s,s:s}", "message", ev->descriptor->name,
                 "detail", err.detail);
        return -EINVAL;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__GameEvent ge = CROUPIER__GAME_EVENT__INIT;
    ge.body = body;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT;
    sm.game_event = &ge;
    tk_push_watch(t, &sm);
    free(body.data);
    return 0;
}

void tk_spect_drop(tk_table_t *t, Croupier__ErrorCode code, const char *detail)
{
    if (t->spect_ended || t->nspect_links == 0)
        return;
    tk_spect_end(t, code, detail);
    t->spect_ended = false;
}

void tk_spect_end(tk_table_t *t, Croupier__ErrorCode code, const char *detail)
{
    if (t->spect_ended)
        return;
    t->spect_ended = true;
    if (t->nspect_links == 0)
        return;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__WatchEnded we = CROUPIER__WATCH_ENDED__INIT;
    we.code = code;
    we.detail = (char *)detail;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_WATCH_ENDED;
    sm.watch_ended = &we;
    tk_spect_push(t, &sm);
    metrics_add(t->eng->m_spectators, -(double)t->spectators);
    t->spectators = 0;
    t->nspect_links = 0;
    gs_watch_link(gs_of_desk(t->desk), rt_desk_id(t->desk), 0, false);
}
