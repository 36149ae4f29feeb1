/*
 * The traditional engine's snapshots and reconnects (games/traditional/trad_engine.c,
 * docs/rules/traditional-engine.md), through the real binary (trad_engine_fixture.h): Guandan's
 * snapshot carries the deal's level, both team levels and the tribute step (other games none of
 * it); a late PlayerGone from the gateway a player left does not put the resumed player on
 * trustee; a resume during one's own turn after PlayerGone gives the turn time back.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "trad_engine_fixture.h"

/*
 * Guandan's snapshot carries what a client needs to play legally: the deal's level rank (2 in
 * a match's first deal, then the level of the previous deal's winners, which went up), both
 * team levels, and in the tribute phase whether the seat to act pays or returns and to whom
 * (a return always names the payer). Other games carry none of it. The snapshot is taken at
 * every Turn while server bots (100 ms a move) and trustee (for the idle human) play deals.
 */
START_TEST(test_guandan_snapshot_has_level_team_levels_and_tribute_step)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=100",
                   "CROUPIER_TRAD_BOT_MS=100",
                   "CROUPIER_TRAD_TRUSTEE_MS=100",
                   "CROUPIER_TRAD_BOT_FILL_MS=0",
                   "CROUPIER_TRAD_GAP_MS=10",
                   "CROUPIER_TRAD_HOUSE=house-t",
                   NULL};
    env_start(&e, 30, "doudizhu,guandan", env);
    wallet_set(&e, "house-t", 1000000);
    wallet_set(&e, "7701", 100000);
    wallet_set(&e, "7702", 100000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(join(c, 7701, "guandan", 1, NULL), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(join(c, 7702, "doudizhu", 1, NULL), CROUPIER__ERROR_CODE__OK);
    int deals = 0, snaps = 0, tributes = 0, returns = 0, raised = 0, ddz = 0;
    long long end = ts_now_ms() + 100000;
    while ((tributes == 0 || returns == 0 || ddz == 0) && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f == NULL)
            continue;
        bool turn = f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
                    f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END && f->player_id == 7701)
            deals++;
        uint64_t who = f->player_id;
        frame_free_rpc(f);
        if (!turn)
            continue;
        Croupier__RpcFrame *r = snapshot_of(c, who);
        const Croupier__Snapshot *sn = r->reply->payload->snapshot;
        if (sn->state_case != CROUPIER__SNAPSHOT__STATE_SHEDDING) {
            frame_free_rpc(r);
            continue;
        }
        const Croupier__SheddingState *st = sn->shedding;
        if (who == 7702) {
            ck_assert(!st->has_level);
            ck_assert_int_eq(st->n_team_levels, 0);
            ck_assert(!st->has_tribute_return);
            ck_assert_int_ne(st->phase, CROUPIER__SHEDDING_PHASE__SHEDDING_TRIBUTE);
            ddz++;
            frame_free_rpc(r);
            continue;
        }
        snaps++;
        ck_assert(st->has_level);
        ck_assert_int_eq(st->n_team_levels, 2);
        for (int t = 0; t < 2; t++)
            ck_assert(st->team_levels[t] >= 2 && st->team_levels[t] <= 14);
        /* the deal's level is one team's level: 2 in the first deal */
        ck_assert(st->level == st->team_levels[0] || st->level == st->team_levels[1]);
        if (deals == 0)
            ck_assert_int_eq(st->level, 2);
        if (st->team_levels[0] != 2 || st->team_levels[1] != 2)
            raised++;
        if (st->phase == CROUPIER__SHEDDING_PHASE__SHEDDING_TRIBUTE) {
            ck_assert(st->has_tribute_return);
            ck_assert(sn->has_turn_seat);
            if (st->tribute_return) {
                ck_assert(st->has_tribute_to);
                ck_assert_int_ne(st->tribute_to, sn->turn_seat);
                returns++;
            } else {
                tributes++;
                if (st->has_tribute_to)
                    ck_assert_int_ne(st->tribute_to, sn->turn_seat);
            }
        } else {
            ck_assert(!st->has_tribute_return);
        }
        frame_free_rpc(r);
    }
    ck_assert_int_gt(snaps, 0);
    ck_assert_int_gt(ddz, 0);
    ck_assert_msg(tributes > 0 && returns > 0,
                  "tribute steps seen: %d paid, %d returned (%d deals)", tributes, returns, deals);
    ck_assert_int_gt(raised, 0);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * A player who resumed through another gateway is not "gone" when the gateway it left reports
 * its old connection gone afterwards (it frees it late): trustee would otherwise play its turns
 * at bot speed and its own move would find the turn gone (NOT_YOUR_TURN).
 */
START_TEST(test_late_player_gone_from_the_old_gateway_leaves_a_resumed_player_connected)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=20000", "CROUPIER_TRAD_BOT_MS=50",
                   "CROUPIER_TRAD_TRUSTEE_MS=50",   "CROUPIER_TRAD_BOT_FILL_MS=0",
                   "CROUPIER_TRAD_HOUSE=house-t",   NULL};
    env_start(&e, 30, "doudizhu", env);
    wallet_set(&e, "house-t", 100000);
    wallet_set(&e, "7801", 1000);
    rpcc_t *old_gw = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    rpcc_t *new_gw = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(old_gw);
    ck_assert_ptr_nonnull(new_gw);
    int seat = -1;
    ck_assert_int_eq(join(old_gw, 7801, "doudizhu", 1, &seat), CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(snapshot_of(new_gw, 7801)); /* resumed through the new gateway */
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone pg = CROUPIER__PLAYER_GONE__INIT;
    f.has_player_id = true;
    f.player_id = 7801;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &pg;
    ck_assert_int_eq(rpcc_send(old_gw, &f), 0);
    /* Server bots fill the table and move in 50 ms; the human's turn, once it comes, waits
     * its 20 s (a seat taken for gone would be played by trustee after 50 ms). */
    ts_sleep_ms(3000);
    Croupier__RpcFrame *r = snapshot_of(new_gw, 7801);
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert_ptr_nonnull(sn->round_id);
    ck_assert(sn->has_turn_seat);
    ck_assert_int_eq(sn->turn_seat, seat);
    ck_assert_msg(sn->time_left_ms > 10000, "the turn has %u ms left", sn->time_left_ms);
    frame_free_rpc(r);
    rpcc_close(old_gw);
    rpcc_close(new_gw);
    env_stop(&e);
}
END_TEST

/*
 * A player reported gone during its turn (trustee's short timer starts) who resumes before
 * trustee moved gets its own turn time back, so its move is not refused as NOT_YOUR_TURN.
 */
START_TEST(test_resume_during_own_turn_after_player_gone_restores_the_turn_time)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=20000", "CROUPIER_TRAD_BOT_MS=1500",
                   "CROUPIER_TRAD_TRUSTEE_MS=1500", "CROUPIER_TRAD_BOT_FILL_MS=0",
                   "CROUPIER_TRAD_HOUSE=house-t",   NULL};
    env_start(&e, 30, "doudizhu", env);
    wallet_set(&e, "house-t", 100000);
    wallet_set(&e, "7802", 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    int seat = -1;
    ck_assert_int_eq(join(c, 7802, "doudizhu", 1, &seat), CROUPIER__ERROR_CODE__OK);
    /* Wait for our turn (the server bots bid after 1.5 s each). */
    long long end = ts_now_ms() + 15000;
    bool mine = false;
    while (!mine && ts_now_ms() < end) {
        Croupier__RpcFrame *r = snapshot_of(c, 7802);
        const Croupier__Snapshot *sn = r->reply->payload->snapshot;
        mine = sn->round_id != NULL && sn->has_turn_seat && sn->turn_seat == (uint32_t)seat;
        frame_free_rpc(r);
        if (!mine)
            ts_sleep_ms(100);
    }
    ck_assert(mine);
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone pg = CROUPIER__PLAYER_GONE__INIT;
    f.has_player_id = true;
    f.player_id = 7802;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &pg;
    ck_assert_int_eq(rpcc_send(c, &f), 0);        /* trustee's 1.5 s timer starts */
    Croupier__RpcFrame *r = snapshot_of(c, 7802); /* back at once */
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert(sn->has_turn_seat);
    ck_assert_int_eq(sn->turn_seat, seat);
    ck_assert_msg(sn->time_left_ms > 10000, "the turn has %u ms left", sn->time_left_ms);
    frame_free_rpc(r);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trad_engine_snapshot");
    TCase *tc = tcase_create("snapshot_reconnect");
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, test_guandan_snapshot_has_level_team_levels_and_tribute_step);
    tcase_add_test(tc,
                   test_late_player_gone_from_the_old_gateway_leaves_a_resumed_player_connected);
    tcase_add_test(tc, test_resume_during_own_turn_after_player_gone_restores_the_turn_time);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
