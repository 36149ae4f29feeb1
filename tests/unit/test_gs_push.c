/*
 * One push, many players (docs/protocol.md "One push, many players"; engine/gs.h gs_push_many):
 * a table's public event is encoded once and reaches each gateway as one rpc frame naming every
 * player it serves there (RpcFrame.push_to), when that gateway's LinkHello said it takes them;
 * a gateway that did not gets one frame per player, as before. Driven through the real
 * croupier-game binary (the "test" engine's action windows: every seat decides in the first
 * window, so any seat's move is a Play pushed to the whole table) against a real redis-server,
 * over two real rpc links (rpcc) as two gateways: A says push_to, B does not.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpcc.h"
#include "support.h"
#include "testenv.h"

#define NP 3

static const uint64_t players[NP] = {7301, 7302, 7303};
static int next_rid = 1;

static void env_start(testenv_t *e)
{
    char *args[] = {
        "--test-seats", "3", "--test-windows", "1", "--test-action-ms", "20000", "--test-gap-ms",
        "1000",         NULL};
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    for (int i = 0; i < NP; i++)
        free(ts_redis_cmd(e->redis, "SET {croupier:money}:wallet:%llu 1000000",
                          (unsigned long long)players[i]));
    ck_assert_int_eq(testenv_start_game(e, &e->game, "test", 30, args, NULL), 0);
}

/* The pushes one link received: for each frame, its recipients and its message's kind. */
typedef struct {
    int n;
    uint64_t to[64][NP + 1]; /* player_id, then push_to */
    size_t nto[64];
    int body[64];
    uint64_t seq[64];
} seen_t;

static void collect(rpcc_t *c, seen_t *s, int ms)
{
    long long end = ts_now_ms() + ms;
    for (;;) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0)
            return;
        Croupier__RpcFrame *f = rpcc_next_event(c, left);
        if (f == NULL)
            return;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH && s->n < 64) {
            ck_assert(f->has_player_id);
            ck_assert_uint_le(f->n_push_to, NP);
            s->to[s->n][0] = f->player_id;
            for (size_t k = 0; k < f->n_push_to; k++)
                s->to[s->n][k + 1] = f->push_to[k];
            s->nto[s->n] = 1 + f->n_push_to;
            s->body[s->n] = (int)f->push->body_case;
            s->seq[s->n] = f->push->has_event_seq ? f->push->event_seq : 0;
            s->n++;
        }
        frame_free_rpc(f);
    }
}

/* How many times player got a message of kind body with event_seq seq on this link. */
static int got(const seen_t *s, uint64_t player, int body, uint64_t seq)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->nto[i]; k++)
            n += s->body[i] == body && s->seq[i] == seq && s->to[i][k] == player;
    return n;
}

static int act_pass(rpcc_t *c, uint64_t player)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction sa = CROUPIER__SHEDDING_ACTION__INIT;
    sa.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &sa;
    int rid = next_rid++;
    f.request_id = (uint64_t)rid;
    f.has_player_id = true;
    f.player_id = player;
    f.has_session_id = true;
    f.session_id = player;
    f.has_deadline_unix_ms = true;
    f.deadline_unix_ms = (uint64_t)rpcc_wall_ms() + 5000;
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, (uint64_t)rid, 5000);
    ck_assert_ptr_nonnull(r);
    int code = r->reply->code;
    frame_free_rpc(r);
    return code;
}

/*
 * Players 0 and 1 on link A (push_to), player 2 on link B (without): each Play of the table
 * reaches A as one frame for both of its players and B as one frame for its player; nobody gets
 * a message twice or a message for a player of the other link; the per-seat pushes (each
 * player's Turn) stay single frames.
 */
START_TEST(test_a_public_push_is_one_frame_per_gateway_that_takes_push_to)
{
    testenv_t e;
    env_start(&e);
    rpcc_t *a = rpcc_connect_push_to("127.0.0.1", e.game.port, "gate-a", 5000);
    rpcc_t *b = rpcc_connect_as("127.0.0.1", e.game.port, "gate-b", 5000);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    rpcc_t *link[NP] = {a, a, b};
    int rids[NP];
    for (int i = 0; i < NP; i++) {
        rids[i] = next_rid++;
        ck_assert_int_eq(rpcc_join(link[i], (uint64_t)rids[i], players[i], "test", 10, 0), 0);
    }
    uint64_t desk = 0;
    for (int i = 0; i < NP; i++) {
        Croupier__RpcFrame *r = rpcc_wait_reply(link[i], (uint64_t)rids[i], 5000);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
        if (i == 0)
            desk = r->reply->payload->joined->desk_id;
        ck_assert_uint_eq(r->reply->payload->joined->desk_id, desk); /* one table */
        frame_free_rpc(r);
    }
    seen_t sa = {0}, sb = {0};
    /* The round starts (every seat's window), then two seats pass: two Plays. */
    collect(a, &sa, 1500);
    collect(b, &sb, 200);
    ck_assert_int_eq(act_pass(a, players[0]), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act_pass(b, players[2]), CROUPIER__ERROR_CODE__OK);
    collect(a, &sa, 500);
    collect(b, &sb, 300);

    int plays = 0, turns = 0;
    for (int i = 0; i < sa.n; i++) {
        for (size_t k = 0; k < sa.nto[i]; k++)
            ck_assert_msg(sa.to[i][k] == players[0] || sa.to[i][k] == players[1],
                          "link A got a push for %llu", (unsigned long long)sa.to[i][k]);
        if (sa.body[i] == CROUPIER__SERVER_MESSAGE__BODY_PLAY) {
            plays++;
            ck_assert_uint_eq(sa.nto[i], 2); /* one frame, both of A's players */
            ck_assert_int_eq(got(&sa, players[0], sa.body[i], sa.seq[i]), 1);
            ck_assert_int_eq(got(&sa, players[1], sa.body[i], sa.seq[i]), 1);
            ck_assert_int_eq(got(&sb, players[2], sa.body[i], sa.seq[i]), 1);
        } else if (sa.body[i] == CROUPIER__SERVER_MESSAGE__BODY_TURN) {
            turns++;
            ck_assert_uint_eq(sa.nto[i], 1); /* a seat's own */
        }
    }
    ck_assert_int_eq(plays, 2);
    ck_assert_int_ge(turns, 2);
    for (int i = 0; i < sb.n; i++) {
        ck_assert_uint_eq(sb.nto[i], 1); /* B did not say push_to */
        ck_assert_uint_eq(sb.to[i][0], players[2]);
    }
    rpcc_close(a);
    rpcc_close(b);
    testenv_stop(&e);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gs_push");
    TCase *tc = tcase_create("push_to");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_a_public_push_is_one_frame_per_gateway_that_takes_push_to);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
