/*
 * trad_engine_fixture.c -- the traditional engine tests' shared rig and client
 * (trad_engine_fixture.h says what each function does and which tests use them).
 */
#include "trad_engine_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

void env_start(env_t *e, int drain_max_s, const char *games, char *const env[])
{
    memset(e, 0, sizeof *e);
    ck_assert_int_eq(testenv_start(&e->rig, NULL), 0);
    /* One server without a gateway: a drained table closes and its players are re-seated one
     * by one (tk.h "moves"; whole-table moves are tested in test_tk_drain, test_gate and the e2e
     * move_exact_buyin). */
    ck_assert_int_eq(
        testenv_start_game(&e->rig, &e->rig.game, "traditional", drain_max_s,
                           (char *[]){"--games", (char *)games, "--trad-move-wait-ms", "-1", NULL},
                           env),
        0);
}

void env_stop(env_t *e)
{
    testenv_stop(&e->rig);
}

void wallet_set(env_t *e, const char *who, long v)
{
    free(ts_redis_cmd(e->rig.redis, "SET {croupier:money}:wallet:%s %ld", who, v));
}

long redis_long(env_t *e, const char *key)
{
    char *r = ts_redis_cmd(e->rig.redis, "GET %s", key);
    ck_assert_ptr_nonnull(r);
    long v = strcmp(r, "(nil)") == 0 ? 0 : strtol(r, NULL, 10);
    free(r);
    return v;
}

long wallet(env_t *e, const char *who)
{
    char key[128];
    snprintf(key, sizeof key, "{croupier:money}:wallet:%s", who);
    return redis_long(e, key);
}

/* /drain/status's human_desks (testenv_human_desks), asserted to be there. */
long human_desks(env_t *e)
{
    long v = testenv_human_desks(&e->rig.game);
    ck_assert_int_ge(v, 0);
    return v;
}

uint64_t next_rid = 100;

/* Rule option names joined by '+' into buf (len bytes). */
void format_options(char *const *names, size_t n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i > 0 ? "+" : "", names[i]);
}

/* Joins; on OK gives the seat and, when opts is not NULL, the Joined's rule options joined by
 * '+' and its bomb units (0 when absent). Returns the reply code. */
int join_options(rpcc_t *c, uint64_t player, const char *game, int64_t stake, int *seat, char *opts,
                 size_t len, uint32_t *units)
{
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_join(c, rid, player, game, stake, 0), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    int code = r->reply->code;
    if (code == CROUPIER__ERROR_CODE__OK) {
        ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
        const Croupier__Joined *j = r->reply->payload->joined;
        ck_assert_str_eq(j->game, game);
        if (seat != NULL)
            *seat = (int)j->seat;
        if (opts != NULL) {
            format_options(j->rule_options, j->n_rule_options, opts, len);
            *units = j->has_bomb_units ? j->bomb_units : 0;
        }
    }
    frame_free_rpc(r);
    return code;
}

int join(rpcc_t *c, uint64_t player, const char *game, int64_t stake, int *seat)
{
    return join_options(c, player, game, stake, seat, NULL, 0, NULL);
}

/* Sends a shedding action (or a hold'em one when holdem is true); returns the reply code. */
int act(rpcc_t *c, uint64_t player, Croupier__SheddingMove move, const uint8_t *cards, size_t n,
        int bid, bool holdem)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction sa = CROUPIER__SHEDDING_ACTION__INIT;
    Croupier__HoldemAction ha = CROUPIER__HOLDEM_ACTION__INIT;
    uint64_t rid = next_rid++;
    f.request_id = rid;
    f.has_player_id = true;
    f.player_id = player;
    f.has_session_id = true;
    f.session_id = player;
    f.has_deadline_unix_ms = true;
    f.deadline_unix_ms = (uint64_t)(rpcc_wall_ms() + 5000);
    if (holdem) {
        ha.move = CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK;
        a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
        a.holdem = &ha;
    } else {
        sa.move = move;
        if (move == CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY) {
            sa.has_cards = true;
            sa.cards.data = (uint8_t *)cards;
            sa.cards.len = n;
        }
        if (move == CROUPIER__SHEDDING_MOVE__SHEDDING_BID) {
            sa.has_bid = true;
            sa.bid = (uint32_t)bid;
        }
        a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
        a.shedding = &sa;
    }
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    int code = r->reply->code;
    frame_free_rpc(r);
    return code;
}

void resume(rpcc_t *c, uint64_t player, view_t *v)
{
    uint64_t rid = next_rid++;
    memset(v, 0, sizeof *v);
    ck_assert_int_eq(rpcc_resume(c, rid, player), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    Croupier__Snapshot *s = r->reply->payload->snapshot;
    ck_assert_int_eq(s->engine, CROUPIER__ENGINE__ENGINE_TRADITIONAL);
    v->in_round = s->round_id != NULL && s->round_id[0] != '\0';
    v->turn = s->has_turn_seat ? (int)s->turn_seat : -1;
    v->time_left = s->time_left_ms;
    v->declarer = -1;
    v->last_seat = -1;
    if (s->state_case == CROUPIER__SNAPSHOT__STATE_SHEDDING) {
        Croupier__SheddingState *st = s->shedding;
        v->phase = st->phase;
        v->nhand = st->hand.len;
        if (st->hand.len > 0) /* an empty bytes field may have no data pointer */
            memcpy(v->hand, st->hand.data, st->hand.len);
        v->nlast = st->last_play.len;
        if (st->last_play.len > 0)
            memcpy(v->last, st->last_play.data, st->last_play.len);
        v->last_seat = st->has_last_play_seat ? (int)st->last_play_seat : -1;
        v->nkitty = st->kitty.len;
        if (st->kitty.len > 0)
            memcpy(v->kitty, st->kitty.data, st->kitty.len);
        v->declarer = st->has_declarer_seat ? (int)st->declarer_seat : -1;
        for (size_t i = 0; i < st->n_cards_left && i < 4; i++)
            v->left[i] = st->cards_left[i];
    }
    s->has_time_left_ms = false;
    s->time_left_ms = 0;
    r->reply->payload->request_id = 0;
    r->reply->payload->has_request_id = false;
    size_t len = protobuf_c_message_get_packed_size(&r->reply->payload->base);
    ck_assert_uint_le(len, sizeof v->packed);
    v->npacked = protobuf_c_message_pack(&r->reply->payload->base, v->packed);
    frame_free_rpc(r);
}

bool view_same(const view_t *a, const view_t *b)
{
    return a->npacked == b->npacked && memcmp(a->packed, b->packed, a->npacked) == 0;
}

/* Resumes player until its table is in a deal (5 s at most) and asserts it is. On the table kit
 * a full table deals after the gap (CROUPIER_TRAD_GAP_MS), its first deal too; the engine before
 * the kit dealt a full table's first deal at once. */
void wait_in_round(rpcc_t *c, uint64_t player, view_t *v)
{
    long long end = ts_now_ms() + 5000;
    resume(c, player, v);
    while (!v->in_round && ts_now_ms() < end) {
        ts_sleep_ms(20);
        resume(c, player, v);
    }
    ck_assert(v->in_round);
}

void collect(rpcc_t *c, seen_t *s, uint64_t base, int timeout_ms)
{
    for (;;) {
        Croupier__RpcFrame *f = rpcc_next_event(c, timeout_ms);
        if (f == NULL)
            return;
        timeout_ms = 0;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING)
            s->desk_closings += (int)f->desk_closing->n_player_ids;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH) {
            Croupier__ServerMessage *m = f->push;
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING)
                s->table_closings++;
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_PLAY) {
                s->plays++;
                s->timed_out_plays += m->play->timed_out;
            }
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END &&
                strcmp(m->round_end->round_id, s->round_id) != 0) {
                Croupier__RoundEnd *re = m->round_end;
                snprintf(s->round_id, sizeof s->round_id, "%s", re->round_id);
                s->round_ends++;
                s->completed += re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
                s->voided += re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
                s->void_reason = re->void_reason;
                s->rake += re->rake;
                long sum = 0;
                for (size_t i = 0; i < re->n_deltas; i++) {
                    sum += re->deltas[i]->delta;
                    uint64_t p = re->deltas[i]->player_id;
                    if (p >= base && p < base + 8)
                        s->delta[p - base] += re->deltas[i]->delta;
                }
                ck_assert_int_eq(sum, -re->rake);
            }
        }
        frame_free_rpc(f);
    }
}

/* The Snapshot of a seat (Resume), as its player sees it (asserted OK; the caller frees it). */
Croupier__RpcFrame *snapshot_of(rpcc_t *c, uint64_t player)
{
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_resume(c, rid, player), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    return r;
}
