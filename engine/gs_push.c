/*
 * gs_push.c -- what a desk tells its players through the gateways (gs.h "pushes and seats"):
 * pushes to one player or to many (gs_push, gs_push_many: a table's public event encoded once,
 * docs/protocol.md "One push, many players"), the player -> desk routing (gs_seat, gs_unseat),
 * and the notices of a closing or moving desk. Each is an item of the outbox (gs_int.h) that a
 * desk thread enqueues; the main thread sends it on the link that serves each player
 * (gs_out_apply in gs.c; gs_push_many_apply here for the pushes to many).
 */
#include "gs.h"
#include "gs_int.h"

#include <stdlib.h>
#include <string.h>

#include "u64map.h"
#include "xmalloc.h"

void gs_push(gs_t *gs, uint64_t player_id, const Croupier__ServerMessage *msg)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    f.request_id = 0;
    f.has_player_id = true;
    f.player_id = player_id;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
    f.push = (Croupier__ServerMessage *)msg;
    gs_out_t *o = xcalloc(1, sizeof *o);
    o->kind = GS_OUT_PUSH;
    o->player_id = player_id;
    o->bytes = gs_encode(&f, &o->len);
    if (o->bytes == NULL) {
        free(o);
        return;
    }
    gs_out_enqueue(gs, o);
}

void gs_push_many(gs_t *gs, const uint64_t *players, size_t n, const Croupier__ServerMessage *msg)
{
    if (n <= 1) {
        if (n == 1)
            gs_push(gs, players[0], msg);
        return;
    }
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    f.request_id = 0;
    f.has_player_id = true;
    f.player_id = players[0];
    f.body_case = CROUPIER__RPC_FRAME__BODY_PUSH;
    f.push = (Croupier__ServerMessage *)msg;
    gs_out_t *o = xcalloc(1, sizeof *o);
    o->kind = GS_OUT_PUSH_MANY;
    o->player_id = players[0];
    o->bytes = gs_encode(&f, &o->len); /* the checks of the frame, and msg's bytes inside it */
    if (o->bytes == NULL) {
        free(o);
        return;
    }
    o->players = xreallocarray(NULL, n, sizeof *o->players);
    memcpy(o->players, players, n * sizeof *players);
    o->nplayers = n;
    gs_out_enqueue(gs, o);
}

void gs_seat(gs_t *gs, uint64_t player_id, rt_desk_id_t desk)
{
    gs_out_t *o = xcalloc(1, sizeof *o);
    o->kind = GS_OUT_SEAT;
    o->player_id = player_id;
    o->desk_id = desk;
    gs_out_enqueue(gs, o);
}

void gs_unseat(gs_t *gs, uint64_t player_id, rt_desk_id_t desk)
{
    gs_out_t *o = xcalloc(1, sizeof *o);
    o->kind = GS_OUT_UNSEAT;
    o->player_id = player_id;
    o->desk_id = desk;
    gs_out_enqueue(gs, o);
}

/* One DeskClosing per player, addressed through the player's link: the main thread sends it on
 * the link that serves that player, so each gateway hears of its own players. offer_id: a
 * whole-table move's offer, or NULL. */
static void gs_desk_notices(gs_t *gs, rt_desk_id_t desk, const uint64_t *players, size_t n,
                            Croupier__ClosingReason reason, const char *detail,
                            const char *offer_id)
{
    for (size_t i = 0; i < n; i++) {
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        Croupier__DeskClosing dc = CROUPIER__DESK_CLOSING__INIT;
        dc.desk_id = desk;
        dc.reason = reason;
        dc.n_player_ids = 1;
        dc.player_ids = (uint64_t *)&players[i];
        dc.detail = (char *)(detail != NULL ? detail : "");
        dc.offer_id = (char *)offer_id;
        f.has_player_id = true;
        f.player_id = players[i];
        f.body_case = CROUPIER__RPC_FRAME__BODY_DESK_CLOSING;
        f.desk_closing = &dc;
        gs_out_t *o = xcalloc(1, sizeof *o);
        o->kind = GS_OUT_NOTICE;
        o->player_id = players[i];
        o->bytes = gs_encode(&f, &o->len);
        if (o->bytes == NULL) {
            free(o);
            continue;
        }
        gs_out_enqueue(gs, o);
    }
}

void gs_close_desk_seats(gs_t *gs, rt_desk_id_t desk, const uint64_t *players, size_t n,
                         Croupier__ClosingReason reason, const char *detail)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableClosing tc = CROUPIER__TABLE_CLOSING__INIT;
    tc.reason = reason;
    tc.detail = (char *)(detail != NULL ? detail : "");
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
    sm.table_closing = &tc;
    /* A room's end: the gateway forgets the seat (DeskClosing) before the player hears of it on
     * the same link, so the player's next request (the next room) never finds it held. */
    bool notice_first = reason == CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED;
    if (notice_first)
        gs_desk_notices(gs, desk, players, n, reason, detail, NULL);
    for (size_t i = 0; i < n; i++) {
        gs_push(gs, players[i], &sm);
    }
    if (!notice_first)
        gs_desk_notices(gs, desk, players, n, reason, detail, NULL);
}

void gs_move_desk_seats(gs_t *gs, rt_desk_id_t desk, const uint64_t *players, size_t n,
                        const char *offer_id)
{
    gs_desk_notices(gs, desk, players, n, CROUPIER__CLOSING_REASON__CLOSING_DRAINING,
                    "server draining: the table moves", offer_id);
}

/* ---- the main-thread side ---------------------------------------------------------------- */

/*
 * A GS_OUT_PUSH_MANY on the main thread: its players grouped by the link that serves them, in
 * their order; each group one frame (frame_pack_push) on a link that takes push_to, else one
 * frame per player. A player's frames keep their order: each group is sent where its first
 * player's single push would have been.
 */
void gs_push_many_apply(gs_t *gs, gs_out_t *o)
{
    const uint8_t *msg;
    size_t msg_len;
    if (frame_wire_field(o->bytes + FRAME_HEADER_SIZE, o->len - FRAME_HEADER_SIZE,
                         CROUPIER__RPC_FRAME__BODY_PUSH, &msg, &msg_len) != 0)
        return;
    size_t n = o->nplayers;
    uint64_t *links = xreallocarray(NULL, n, sizeof *links);
    uint64_t *group = xreallocarray(NULL, n, sizeof *group);
    for (size_t i = 0; i < n; i++)
        if (!u64map_get(gs->player_link, o->players[i], &links[i]))
            links[i] = 0;
    for (size_t i = 0; i < n; i++) {
        if (links[i] == 0)
            continue;
        uint64_t link_id = links[i];
        gs_link_t *l = gs_link_get(gs, link_id);
        size_t k = 0;
        for (size_t j = i; j < n; j++)
            if (links[j] == link_id) {
                group[k++] = o->players[j];
                links[j] = 0;
            }
        if (l == NULL)
            continue;
        size_t per = l->push_to ? FRAME_PUSH_TO_MAX + 1 : 1;
        for (size_t at = 0; at < k && gs_link_get(gs, link_id) != NULL; at += per) {
            size_t m = k - at < per ? k - at : per;
            size_t len;
            uint8_t *frame = frame_pack_push(group + at, m, msg, msg_len, &len);
            if (m > 1 && (frame == NULL || len - FRAME_HEADER_SIZE > FRAME_DEFAULT_MAX)) {
                /* Not one frame (a player named twice, or the ids would take the frame past
                 * the gateway's cap): one frame each, as to a gateway without push_to. */
                free(frame);
                for (size_t x = at; x < at + m && gs_link_get(gs, link_id) != NULL; x++) {
                    if ((frame = frame_pack_push(group + x, 1, msg, msg_len, &len)) != NULL)
                        gs_link_send(l, frame, len);
                    free(frame);
                }
                continue;
            }
            if (frame != NULL)
                gs_link_send(l, frame, len); /* may close the link as too slow */
            free(frame);
        }
    }
    free(group);
    free(links);
}
