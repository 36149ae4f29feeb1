/*
 * gs_spect.c -- spectators at the game server (docs/spectators.md, docs/architecture.md §7):
 * WatchTable frames from the gateways reach their desk as GS_REQ_WATCH requests, and a desk's
 * public events go once to each link that holds spectators of it (GS_OUT_WATCH), encoded once.
 *
 * Who keeps what. The desk keeps each link's count of spectators (absolute, as the gateway
 * sends it) and decides: the cap per table, whether the table may be watched. It tells the main
 * thread which links to send its public events to (gs_watch_link -> GS_OUT_WATCH_LINK). The
 * main thread keeps only that: desk -> links. A link that goes away is taken off every desk
 * here at once, and its desks are told its count is 0 (a request with request_id 0), so the
 * desks' caps forget its spectators.
 */
#include "gs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "xmalloc.h"

/* Links (gateways) with spectators of one desk, at most. */
#define GS_SPECT_LINKS 32

typedef struct {
    uint64_t link[GS_SPECT_LINKS];
    int n;
} gs_spect_desk_t;

static gs_spect_desk_t *gs_spect_get(gs_t *gs, uint64_t desk, bool create)
{
    uint64_t p;
    if (u64map_get(gs->spect, desk, &p))
        return (gs_spect_desk_t *)(uintptr_t)p;
    if (!create)
        return NULL;
    gs_spect_desk_t *d = xcalloc(1, sizeof *d);
    u64map_put(gs->spect, desk, (uint64_t)(uintptr_t)d);
    return d;
}

static void gs_spect_del(gs_t *gs, uint64_t desk, gs_spect_desk_t *d)
{
    u64map_del(gs->spect, desk);
    free(d);
}

/*
 * A WatchTable from a gateway (main thread; takes in). A request (a new spectator) goes to its
 * desk, or is answered NO_SUCH_TABLE when no desk has that id; a count change goes to its desk
 * unanswered, or is dropped with the desk gone.
 */
void gs_link_spect(gs_link_t *l, Croupier__RpcFrame *in)
{
    gs_t *gs = l->gs;
    uint64_t desk = in->watch->desk_id;
    pthread_mutex_lock(&gs->desks_mu);
    bool live = desk != 0 && u64map_get(gs->desks, desk, NULL);
    pthread_mutex_unlock(&gs->desks_mu);
    if (!live) {
        if (in->request_id != 0)
            gs_link_reply_now(l, in, CROUPIER__ERROR_CODE__NO_SUCH_TABLE,
                              "no such table at this server");
        frame_free_rpc(in);
        return;
    }
    gs_request_t *req = xcalloc(1, sizeof *req);
    req->kind = GS_REQ_WATCH;
    req->link_id = l->id;
    req->request_id = in->request_id;
    req->player_id = in->has_player_id ? in->player_id : 0;
    req->session_id = in->has_session_id ? in->session_id : 0;
    req->deadline_ms = in->request_id != 0 && (in->has_budget_ms || in->has_deadline_unix_ms)
                           ? gs_request_deadline(gs, in)
                           : 0;
    req->frame = in;
    gs_request_post(gs, desk, req);
}

/* An outbox item of the spectators (main thread). */
void gs_spect_apply(gs_t *gs, gs_out_t *o)
{
    if (o->kind == GS_OUT_WATCH) {
        gs_spect_desk_t *d = gs_spect_get(gs, o->desk_id, false);
        for (int i = 0; d != NULL && i < d->n; i++) {
            gs_link_t *l = gs_link_get(gs, d->link[i]);
            if (l != NULL)
                gs_link_send(l, o->bytes, o->len);
        }
        return;
    }
    gs_spect_desk_t *d = gs_spect_get(gs, o->desk_id, o->player_id != 0);
    if (d == NULL)
        return;
    if (o->link_id == 0) { /* the desk closes: no link watches it */
        gs_spect_del(gs, o->desk_id, d);
        return;
    }
    int at = -1;
    for (int i = 0; i < d->n; i++)
        if (d->link[i] == o->link_id)
            at = i;
    if (o->player_id != 0 && at < 0 && d->n < GS_SPECT_LINKS)
        d->link[d->n++] = o->link_id;
    else if (o->player_id == 0 && at >= 0)
        d->link[at] = d->link[--d->n];
    if (d->n == 0)
        gs_spect_del(gs, o->desk_id, d);
}

typedef struct {
    uint64_t link;
    uint64_t *desks;
    size_t n, cap;
} gs_spect_gone_t;

static void gs_spect_gone_one(uint64_t desk, uint64_t val, void *arg)
{
    gs_spect_gone_t *g = arg;
    gs_spect_desk_t *d = (gs_spect_desk_t *)(uintptr_t)val;
    for (int i = 0; i < d->n; i++) {
        if (d->link[i] != g->link)
            continue;
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 16;
            g->desks = xrealloc(g->desks, g->cap * sizeof *g->desks);
        }
        g->desks[g->n++] = desk;
        return;
    }
}

/*
 * A link went away (main thread): it is taken off every desk it watched, and each of those desks
 * is told the link's count is 0, as if its gateway had said so.
 */
void gs_spect_link_gone(gs_t *gs, uint64_t link_id)
{
    gs_spect_gone_t g = {link_id, NULL, 0, 0};
    u64map_each(gs->spect, gs_spect_gone_one, &g);
    for (size_t i = 0; i < g.n; i++) {
        gs_spect_desk_t *d = gs_spect_get(gs, g.desks[i], false);
        for (int k = 0; d != NULL && k < d->n; k++)
            if (d->link[k] == link_id) {
                d->link[k] = d->link[--d->n];
                break;
            }
        if (d != NULL && d->n == 0)
            gs_spect_del(gs, g.desks[i], d);
        Croupier__RpcFrame *f = xcalloc(1, sizeof *f);
        Croupier__WatchTable *w = xcalloc(1, sizeof *w);
        croupier__rpc_frame__init(f);
        croupier__watch_table__init(w);
        w->desk_id = g.desks[i];
        w->spectators = 0;
        f->body_case = CROUPIER__RPC_FRAME__BODY_WATCH;
        f->watch = w;
        gs_request_t *req = xcalloc(1, sizeof *req);
        req->kind = GS_REQ_WATCH;
        req->link_id = link_id;
        req->frame = f;
        gs_request_post(gs, g.desks[i], req);
    }
    free(g.desks);
}

static void gs_spect_free_one(uint64_t desk, uint64_t val, void *arg)
{
    (void)desk;
    (void)arg;
    free((void *)(uintptr_t)val);
}

void gs_spect_free(gs_t *gs)
{
    if (gs->spect == NULL)
        return;
    u64map_each(gs->spect, gs_spect_free_one, NULL);
    u64map_destroy(gs->spect);
    gs->spect = NULL;
}

void gs_push_watch(gs_t *gs, rt_desk_id_t desk, const Croupier__ServerMessage *msg)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__WatchPush wp = CROUPIER__WATCH_PUSH__INIT;
    wp.desk_id = desk;
    wp.msg = (Croupier__ServerMessage *)msg;
    f.body_case = CROUPIER__RPC_FRAME__BODY_WATCH_PUSH;
    f.watch_push = &wp;
    gs_out_t *o = xcalloc(1, sizeof *o);
    o->kind = GS_OUT_WATCH;
    o->desk_id = desk;
    o->bytes = gs_encode(&f, &o->len);
    if (o->bytes == NULL) {
        free(o);
        return;
    }
    gs_out_enqueue(gs, o);
}

void gs_watch_link(gs_t *gs, rt_desk_id_t desk, uint64_t link_id, bool on)
{
    gs_out_t *o = xcalloc(1, sizeof *o);
    o->kind = GS_OUT_WATCH_LINK;
    o->desk_id = desk;
    o->link_id = link_id;
    o->player_id = on ? 1 : 0;
    gs_out_enqueue(gs, o);
}
