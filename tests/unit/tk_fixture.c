/*
 * tk_fixture.c -- the table kit tests' shared rig, client and model (tk_fixture.h says what each
 * function does and which tests use them).
 */
#include "tk_fixture.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

long long redis_int(env_t *e, const char *fmt, const char *arg)
{
    char *r = ts_redis_cmd(e->redis, fmt, arg);
    ck_assert_ptr_nonnull(r);
    long long v = strcmp(r, "(nil)") == 0 ? 0 : strtoll(r, NULL, 10);
    free(r);
    return v;
}

void wallet_set(env_t *e, uint64_t player, long long amount)
{
    free(ts_redis_cmd(e->redis, "SET {croupier:money}:wallet:%d %d", (int)player, (int)amount));
}

long long wallet(env_t *e, uint64_t player)
{
    char key[64];
    snprintf(key, sizeof key, "{croupier:money}:wallet:%" PRIu64, player);
    return redis_int(e, "GET %s", key);
}

/* Sum of every kit seat account (wallets named ts.*), and how many hold chips. */
long long seat_accounts(env_t *e, int *nonzero)
{
    char *keys = ts_redis_cmd(e->redis, "KEYS {croupier:money}:wallet:ts.*");
    long long sum = 0;
    *nonzero = 0;
    for (char *p = keys; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        long long v = redis_int(e, "GET %s", p);
        sum += v;
        *nonzero += v != 0;
        p = nl != NULL ? nl + 1 : NULL;
    }
    free(keys);
    return sum;
}

long long wallets(model_t *m)
{
    long long sum = 0;
    for (int i = 0; i < m->nplayers; i++)
        sum += wallet(m->env, m->players[i]);
    return sum;
}

void env_start(env_t *e, int drain_max_s, const char *action_ms)
{
    env_start_ttl(e, drain_max_s, action_ms, "50", NULL);
}

void env_start_gap(env_t *e, int drain_max_s, const char *action_ms, const char *gap_ms)
{
    env_start_ttl(e, drain_max_s, action_ms, gap_ms, NULL);
}

/* ttl_ms (or NULL: testenv's 900) is the lease TTL: a test that keeps Redis from answering
 * for most of it needs a longer one, or the server fences itself (docs/queues.md "A server cut
 * off from Redis"). */
void env_start_ttl(env_t *e, int drain_max_s, const char *action_ms, const char *gap_ms,
                   const char *ttl_ms)
{
    /* A small retry cache, full after the memory test's warm-up, and no replay journal
     * (money_writer.h: completed operations kept for a failover; test_durable.c tests it): its
     * size follows the rate of operations over its window, which a loaded machine changes
     * between the warm-up and the measure, so that what the memory test measures is the
     * tables' memory. */
    char *args[] = {"--request-cache-max",
                    "1000",
                    "--redis-replay-window-ms",
                    "0",
                    "--zhajinhua-seats",
                    "3",
                    "--zhajinhua-gap-ms",
                    (char *)gap_ms,
                    "--zhajinhua-action-ms",
                    (char *)action_ms,
                    "--zhajinhua-time-bank-ms",
                    "0",
                    "--zhajinhua-idle-ms",
                    "300",
                    "--zhajinhua-rake-bp",
                    "500",
                    "--zhajinhua-rake-cap",
                    "1",
                    "--zhajinhua-move-wait-ms",
                    "300",
                    "--zhajinhua-room-wait-ms",
                    "4000",
                    ttl_ms != NULL ? "--lease-ttl-ms" : NULL,
                    (char *)ttl_ms,
                    NULL};
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    ck_assert_int_eq(testenv_start_game(e, &e->game, "zhajinhua", drain_max_s, args, NULL), 0);
}

/* Another game server of the same engine and settings on e's Redis. */
void env_start_other(env_t *e, testenv_server_t *s)
{
    char *args[] = {"--zhajinhua-seats",
                    "3",
                    "--zhajinhua-gap-ms",
                    "50",
                    "--zhajinhua-action-ms",
                    "10000",
                    "--zhajinhua-time-bank-ms",
                    "0",
                    "--zhajinhua-rake-bp",
                    "500",
                    "--zhajinhua-rake-cap",
                    "1",
                    "--zhajinhua-move-wait-ms",
                    "300",
                    NULL};
    ck_assert_int_eq(testenv_start_game(e, s, "zhajinhua", 30, args, NULL), 0);
}

void fill(Croupier__RpcFrame *f, uint64_t rid, uint64_t player)
{
    f->request_id = rid;
    f->has_player_id = true;
    f->player_id = player;
    f->has_session_id = true;
    f->session_id = player;
    f->has_deadline_unix_ms = true;
    f->deadline_unix_ms = (uint64_t)rpcc_wall_ms() + 5000;
}

void send_join_at(rpcc_t *c, uint64_t rid, uint64_t player, const char *game, int64_t stake)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_GAME;
    j.game = (char *)game;
    j.stake = stake;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
    f.join = &j;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

void send_join(rpcc_t *c, uint64_t rid, uint64_t player, const char *game)
{
    send_join_at(c, rid, player, game, STAKE);
}

/* Sends raw bytes as the body of Action.game. */
void send_body(rpcc_t *c, uint64_t rid, uint64_t player, const uint8_t *body, size_t len)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    ga.body.data = (uint8_t *)body;
    ga.body.len = len;
    a.kind_case = CROUPIER__ACTION__KIND_GAME;
    a.game = &ga;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

void send_move(rpcc_t *c, uint64_t rid, uint64_t player, Croupier__Zjh__ZjhMove move, int64_t unit,
               int target)
{
    Croupier__Zjh__ZjhAction a = CROUPIER__ZJH__ZJH_ACTION__INIT;
    a.move = move;
    a.has_unit = unit > 0;
    a.unit = unit;
    a.has_target = target >= 0;
    a.target = target >= 0 ? (uint32_t)target : 0;
    uint8_t buf[64];
    size_t n = croupier__zjh__zjh_action__pack(&a, buf);
    send_body(c, rid, player, buf, n);
}

int reply_code(rpcc_t *c, uint64_t rid, Croupier__RpcFrame **out)
{
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_msg(r != NULL, "no reply to request %" PRIu64, rid);
    int code = r->reply->code;
    if (out != NULL)
        *out = r;
    else
        frame_free_rpc(r);
    return code;
}

int join_ok(rpcc_t *c, model_t *m, uint64_t rid, uint64_t player, uint64_t *desk)
{
    send_join(c, rid, player, "zhajinhua");
    Croupier__RpcFrame *r;
    ck_assert_int_eq(reply_code(c, rid, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    const Croupier__Joined *j = r->reply->payload->joined;
    ck_assert_int_eq(j->engine, CROUPIER__ENGINE__ENGINE_GAME);
    ck_assert_str_eq(j->game, "zhajinhua");
    ck_assert_int_eq(j->stake, STAKE);
    int seat = (int)j->seat;
    ck_assert_int_lt(seat, NP);
    if (m != NULL)
        m->seat_player[seat] = player;
    if (desk != NULL)
        *desk = j->desk_id;
    frame_free_rpc(r);
    return seat;
}

void model_apply(model_t *m, const Croupier__RpcFrame *f)
{
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING &&
        f->desk_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED) {
        m->room_desk_end++;
        return;
    }
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
        f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROOM) {
        m->room_infos++;
        m->room_state = f->push->room->state;
        m->room_played = (int)f->push->room->deals_played;
        return;
    }
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
        f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING &&
        f->push->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED)
        m->room_closing++;
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING) {
        if (f->desk_closing->offer_id != NULL && f->desk_closing->offer_id[0] != '\0') {
            m->offers++;
            snprintf(m->offer_id, sizeof m->offer_id, "%s", f->desk_closing->offer_id);
            return;
        }
        if (m->desk_closing++ == 0 && m->env != NULL)
            m->wallets_at_closing = wallets(m);
        return;
    }
    if (f->body_case != CROUPIER__RPC_FRAME__BODY_PUSH)
        return;
    const Croupier__ServerMessage *sm = f->push;
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT) {
        Croupier__Zjh__ZjhEvent *ev = croupier__zjh__zjh_event__unpack(
            NULL, sm->game_event->body.len, sm->game_event->body.data);
        ck_assert_ptr_nonnull(ev);
        if (ev->kind_case == CROUPIER__ZJH__ZJH_EVENT__KIND_CARDS) {
            /* Own cards reach their owner only. */
            ck_assert_uint_eq(m->seat_player[ev->cards->seat], f->player_id);
            m->own_cards_seen = true;
            if (m->nlooked < 32 && m->ncommits > 0 && ev->cards->cards.len == 3) {
                memcpy(m->looked[m->nlooked].round, m->commit_round[(m->ncommits - 1) % 8],
                       sizeof m->looked[0].round);
                m->looked[m->nlooked].player = f->player_id;
                memcpy(m->looked[m->nlooked].cards, ev->cards->cards.data, 3);
                m->nlooked++;
            }
        }
        croupier__zjh__zjh_event__free_unpacked(ev, NULL);
    }
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL) {
        const Croupier__Deal *d = sm->deal;
        ck_assert(!d->has_cards); /* dealt face down, even to the owner */
        /* Every Deal carries the round's deck commitment (docs/fairness.md). */
        ck_assert(d->has_deck_commitment);
        ck_assert_uint_eq(d->deck_commitment.len, DECK_COMMIT_LEN);
        ck_assert(d->has_deck_scheme && d->deck_scheme == DECK_SCHEME_CARDS); /* per card */
        ck_assert_ptr_nonnull(d->round_id);
        int k = m->ncommits > 0 ? (m->ncommits - 1) % 8 : 0;
        if (m->ncommits == 0 || strcmp(m->commit_round[k], d->round_id) != 0) {
            k = m->ncommits++ % 8;
            snprintf(m->commit_round[k], sizeof m->commit_round[k], "%s", d->round_id);
            memcpy(m->commit[k], d->deck_commitment.data, DECK_COMMIT_LEN);
        } else {
            ck_assert(memcmp(m->commit[k], d->deck_commitment.data, DECK_COMMIT_LEN) == 0);
        }
    }
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING) {
        m->table_closing++;
        return;
    }
    ck_assert(sm->has_event_seq);
    if (sm->event_seq <= m->last_seq)
        return; /* another player's copy of an event already counted */
    m->last_seq = sm->event_seq;
    switch (sm->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
        m->turn_seat = (int)sm->turn->seat;
        m->to_call = sm->turn->to_call;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY:
        m->plays++;
        m->timed_out += sm->play->has_timed_out && sm->play->timed_out;
        ck_assert_int_eq(sm->play->action->kind_case, CROUPIER__ACTION__KIND_GAME);
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END: {
        const Croupier__RoundEnd *re = sm->round_end;
        if (re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED) {
            m->completed++;
        } else {
            m->voided++;
            m->void_reason = re->has_void_reason ? (int)re->void_reason : -1;
        }
        snprintf(m->round_id, sizeof m->round_id, "%s", re->round_id);
        if (re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED && m->nrounds < 8)
            snprintf(m->rounds[m->nrounds++], sizeof m->rounds[0], "%s", re->round_id);
        m->rake += re->has_rake ? re->rake : 0;
        int64_t sum = 0;
        for (size_t i = 0; i < re->n_deltas; i++) {
            sum += re->deltas[i]->delta;
            for (int k = 0; k < m->nplayers && k < 8; k++)
                if (m->players[k] == re->deltas[i]->player_id)
                    m->won[k] += re->deltas[i]->delta;
        }
        ck_assert_int_eq(sum, -(re->has_rake ? re->rake : 0));
        m->turn_seat = -1;
        break;
    }
    default:
        break;
    }
}

bool pump_until(rpcc_t *c, model_t *m, bool (*pred)(const model_t *), int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (!pred(m)) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0)
            return false;
        Croupier__RpcFrame *f = rpcc_next_event(c, left);
        if (f == NULL)
            return pred(m);
        model_apply(m, f);
        frame_free_rpc(f);
    }
    return true;
}

bool has_turn(const model_t *m)
{
    return m->turn_seat >= 0;
}

bool never(const model_t *m)
{
    (void)m;
    return false;
}

bool round_over(const model_t *m)
{
    return m->completed + m->voided > 0 && m->turn_seat < 0;
}

bool desk_closed(const model_t *m)
{
    return m->desk_closing > 0;
}

void model_init(model_t *m, env_t *e, const uint64_t *players, int n)
{
    memset(m, 0, sizeof *m);
    m->turn_seat = -1;
    m->env = e;
    m->players = players;
    m->nplayers = n;
}

/* Gives each player a wallet of 1000, connects a link and seats them all (rids 1..n). */
rpcc_t *seat_players(env_t *e, model_t *m, const uint64_t *players, int n)
{
    for (int i = 0; i < n; i++)
        wallet_set(e, players[i], 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e->game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_init(m, e, players, n);
    for (int i = 0; i < n; i++)
        join_ok(c, m, (uint64_t)i + 1, players[i], NULL);
    return c;
}

/* The seat to act folds; returns the reply code. */
int fold_turn(rpcc_t *c, model_t *m, uint64_t rid)
{
    ck_assert(pump_until(c, m, has_turn, 5000));
    uint64_t p = m->seat_player[m->turn_seat];
    m->turn_seat = -1;
    send_move(c, rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
    return reply_code(c, rid, NULL);
}

long metric(env_t *e, const char *series)
{
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e->game.health, "/metrics", 5000, &body), 200);
    const char *p = strstr(body, series);
    long v = p != NULL ? strtol(p + strlen(series), NULL, 10) : -1;
    free(body);
    return v;
}

void send_adopt(rpcc_t *c, uint64_t rid, uint64_t player, const char *offer)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Adopt a = CROUPIER__ADOPT__INIT;
    a.offer_id = (char *)offer;
    a.engine = CROUPIER__ENGINE__ENGINE_GAME;
    a.game = "zhajinhua";
    a.stake = STAKE;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_ADOPT;
    f.adopt = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}
