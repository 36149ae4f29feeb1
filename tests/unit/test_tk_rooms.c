/*
 * The table kit's private rooms (engine/tk.h "rooms", lease/room.h), on Zha Jin Hua through the
 * real binary (tk_fixture.h): rules refused, never advertised, joined by code, the full /
 * started / ended / not-host refusals, a scoreboard after every deal and a final record, disband
 * by the host or when not full in time; a room moved whole plays its remaining deals on the
 * adopter.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "room.h"
#include "support.h"
#include "tk_fixture.h"

/* A Join for a room: by code, or (code NULL) a CreateRoom with these rules. */
static void send_room(rpcc_t *c, uint64_t rid, uint64_t player, const char *code,
                      const Croupier__RoomRules *rules)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    Croupier__RoomJoin rj = CROUPIER__ROOM_JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_GAME;
    j.game = "zhajinhua";
    j.stake = STAKE;
    rj.code = (char *)code;
    rj.create = code == NULL ? (Croupier__RoomRules *)rules : NULL;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
    f.join = &j;
    f.room = &rj;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

static void send_leave(rpcc_t *c, uint64_t rid, uint64_t player, bool disband)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Leave l = CROUPIER__LEAVE__INIT;
    l.has_disband_room = disband;
    l.disband_room = disband;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_LEAVE;
    f.leave = &l;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

/* A room join answered Joined with its room: the seat; the code and desk go to code/desk. */
static int room_joined(rpcc_t *c, uint64_t rid, model_t *m, uint64_t player, char *code,
                       uint64_t *desk)
{
    Croupier__RpcFrame *r;
    ck_assert_int_eq(reply_code(c, rid, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    const Croupier__Joined *j = r->reply->payload->joined;
    ck_assert_ptr_nonnull(j->room);
    ck_assert(room_code_valid(j->room->code));
    ck_assert_int_eq(j->room->state, CROUPIER__ROOM_STATE__ROOM_WAITING);
    if (code != NULL)
        snprintf(code, ROOM_CODE_LEN + 1, "%s", j->room->code);
    if (desk != NULL)
        *desk = j->desk_id;
    m->seat_player[j->seat] = player;
    int seat = (int)j->seat;
    frame_free_rpc(r);
    return seat;
}

static bool room_over(const model_t *m)
{
    return m->room_desk_end >= m->nplayers && m->room_closing >= m->nplayers &&
           m->room_state == CROUPIER__ROOM_STATE__ROOM_FINISHED;
}

/* The room's record as Redis holds it. */
static void room_read(env_t *e, const char *code, room_record_t *out)
{
    char *json = ts_redis_cmd(e->redis, "GET " ROOM_KEY_PREFIX "%s", code);
    ck_assert_ptr_nonnull(json);
    ck_assert_int_eq(room_record_parse(json, strlen(json), out), 0);
    free(json);
}

/* The record once it is in state want (written on the handoff thread, it may trail the
 * players' notices), within 5 s; else the last read. */
static void room_read_state(env_t *e, const char *code, int want, room_record_t *out)
{
    long long end = ts_now_ms() + 5000;
    room_read(e, code, out);
    while ((int)out->state != want && ts_now_ms() < end) {
        ts_sleep_ms(20);
        room_read(e, code, out);
    }
}

/* The final record: every deal once, in order, its scoreboard the sum of the RoundEnds. */
static void check_room_final(env_t *e, const char *code, const model_t *m, int deals)
{
    room_record_t *rec = calloc(1, sizeof *rec);
    room_read_state(e, code, CROUPIER__ROOM_STATE__ROOM_FINISHED, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_FINISHED);
    ck_assert_int_eq(rec->played, deals);
    ck_assert_int_eq(m->nrounds, deals);
    int64_t total = 0;
    for (int i = 0; i < deals; i++) {
        ck_assert_str_eq(rec->rounds[i], m->rounds[i]);
        /* each deal settled once: its settle record exists */
        ck_assert_int_eq(redis_int((env_t *)e, "EXISTS {croupier:money}:round:%s", m->rounds[i]),
                         1);
    }
    for (int k = 0; k < rec->nscores; k++) {
        total += rec->scores[k].total;
        int found = 0;
        for (int p = 0; p < m->nplayers; p++)
            if (m->players[p] == rec->scores[k].player) {
                ck_assert_int_eq(rec->scores[k].total, m->won[p]);
                found = 1;
            }
        ck_assert(found);
    }
    ck_assert_int_eq(total, -m->rake);
    free(rec);
}

/* Plays the deals of a room on link c (everyone folds in turn) until its end. */
static void play_room_out(rpcc_t *c, model_t *m, uint64_t *rid)
{
    long long end = ts_now_ms() + 30000;
    while (!room_over(m) && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f != NULL) {
            model_apply(m, f);
            frame_free_rpc(f);
        }
        if (m->turn_seat >= 0 && m->seat_player[m->turn_seat] != m->hands_off) {
            uint64_t p = m->seat_player[m->turn_seat];
            m->turn_seat = -1;
            send_move(c, ++*rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
            ck_assert_int_eq(reply_code(c, *rid, NULL), CROUPIER__ERROR_CODE__OK);
        }
    }
    ck_assert_msg(room_over(m), "the room did not end (%d deals seen)", m->nrounds);
}

/* A room (tk.h "rooms") is made by CreateRoom with its rules (checked), never advertised,
 * joined by its code only, refuses what its state forbids with the room's own codes, deals
 * once full, pushes its scoreboard after every deal and ends after its last: everyone told,
 * cashed out, the record final. A host disbands a room that has not started; one not full
 * within its wait is disbanded. */
START_TEST(test_tk_room_is_joined_by_code_plays_its_deals_and_ends_with_its_scoreboard)
{
    env_t e;
    env_start_gap(&e, 30, "10000", "1500");
    const uint64_t players[] = {301, 302, 303, 304, 305, 306};
    for (int i = 0; i < 6; i++)
        wallet_set(&e, players[i], 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m, &e, players, 3);
    uint64_t rid = 1;
    /* Rules the engine cannot play are refused and open nothing. */
    Croupier__RoomRules bad = CROUPIER__ROOM_RULES__INIT;
    bad.deals = 2;
    bad.has_seats = true;
    bad.seats = 7;
    send_room(c, ++rid, players[0], NULL, &bad);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__BAD_REQUEST);
    bad.has_seats = false;
    bad.has_bot_fill = bad.bot_fill = true;
    send_room(c, ++rid, players[0], NULL, &bad);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__BAD_REQUEST);
    bad.has_bot_fill = bad.bot_fill = false;
    char *opt = "no-such-option";
    bad.n_rule_options = 1;
    bad.rule_options = &opt;
    send_room(c, ++rid, players[0], NULL, &bad);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__BAD_REQUEST);
    ck_assert_int_eq(wallet(&e, players[0]), 1000);

    Croupier__RoomRules rules = CROUPIER__ROOM_RULES__INIT;
    rules.deals = 2;
    char code[ROOM_CODE_LEN + 1];
    uint64_t desk, desk_b, desk_d;
    send_room(c, ++rid, players[0], NULL, &rules);
    room_joined(c, rid, &m, players[0], code, &desk);
    room_record_t *rec = calloc(1, sizeof *rec);
    room_read(&e, code, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_WAITING);
    ck_assert_uint_eq(rec->host, players[0]);
    ck_assert_int_eq(rec->seats, 3);
    ck_assert_uint_eq(rec->desk, desk);
    /* A plain join never lands in the room; the room is never advertised, the table is. */
    ck_assert_int_ne(join_ok(c, NULL, ++rid, players[3], &desk_d), -1);
    ck_assert_uint_ne(desk_d, desk);
    ck_assert_int_eq(redis_int(&e, "ZCARD %s", "{croupier:lobby}:ads"), 1);
    /* Unknown code, then the code. */
    char other[16];
    snprintf(other, sizeof other, "%06ld", (strtol(code, NULL, 10) + 1) % 1000000);
    send_room(c, ++rid, players[1], other, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_NOT_FOUND);
    send_room(c, ++rid, players[1], code, NULL);
    room_joined(c, rid, &m, players[1], NULL, &desk_b);
    ck_assert_uint_eq(desk_b, desk);
    send_leave(c, ++rid, players[1], true);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__NOT_HOST);
    send_room(c, ++rid, players[2], code, NULL);
    room_joined(c, rid, &m, players[2], NULL, NULL);
    /* Full (the first deal waits for the gap), then started. */
    send_room(c, ++rid, players[4], code, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_FULL);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    send_room(c, ++rid, players[4], code, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_STARTED);
    send_leave(c, ++rid, players[0], false);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_STARTED);
    send_leave(c, ++rid, players[0], true);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_STARTED);
    room_read_state(&e, code, CROUPIER__ROOM_STATE__ROOM_PLAYING, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_PLAYING);
    /* The refused leaver's turns are played for them (quickly: not their 10 s turn time). */
    m.hands_off = players[0];
    long long until = ts_now_ms() + 8000;
    while (m.timed_out == 0 && ts_now_ms() < until) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f != NULL) {
            model_apply(&m, f);
            frame_free_rpc(f);
        }
        if (m.turn_seat >= 0 && m.seat_player[m.turn_seat] != players[0]) {
            uint64_t p = m.seat_player[m.turn_seat];
            m.turn_seat = -1;
            send_move(c, ++rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
            ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__OK);
        }
    }
    ck_assert_msg(m.timed_out > 0, "the leaver's turn was not played for them");
    /* Two deals: a scoreboard after the first, the final one after the second. */
    play_room_out(c, &m, &rid);
    ck_assert_int_eq(m.room_played, 2);
    ck_assert_int_eq(m.room_infos, 3 * 2); /* each of 3 players: deal 1, the end */
    ck_assert_int_eq(m.room_closing, 3);
    ck_assert_int_eq(m.room_desk_end, 3);
    check_room_final(&e, code, &m, 2);
    long long keep = redis_int(&e, "PTTL " ROOM_KEY_PREFIX "%s", code);
    ck_assert(keep > 0 && keep <= 86400000);
    send_room(c, ++rid, players[4], code, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_ENDED);
    /* The players left the room with their chips. */
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    ck_assert_int_eq(rake, m.rake);
    ck_assert_int_eq(wallets(&m) + rake, 3000);
    ck_assert_int_eq(rpcc_resume(c, ++rid, players[0]), 0);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__NOT_SEATED);

    /* A second room: a guest leaves it, its host disbands it before the first deal. */
    model_t m2;
    model_init(&m2, &e, players + 4, 2);
    char code2[ROOM_CODE_LEN + 1];
    send_room(c, ++rid, players[4], NULL, &rules);
    room_joined(c, rid, &m2, players[4], code2, NULL);
    ck_assert_str_ne(code2, code);
    send_room(c, ++rid, players[5], code2, NULL);
    room_joined(c, rid, &m2, players[5], NULL, NULL);
    send_leave(c, ++rid, players[5], false);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__OK);
    send_leave(c, ++rid, players[4], true);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__OK);
    room_read_state(&e, code2, CROUPIER__ROOM_STATE__ROOM_DISBANDED, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_DISBANDED);
    ck_assert_str_eq(rec->detail, "the host disbanded the room");
    send_room(c, ++rid, players[5], code2, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_ENDED);
    long long end = ts_now_ms() + 5000;
    while ((wallet(&e, players[4]) != 1000 || wallet(&e, players[5]) != 1000) && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(wallet(&e, players[4]), 1000);
    ck_assert_int_eq(wallet(&e, players[5]), 1000);

    /* A third room nobody else joins: its wait (--zhajinhua-room-wait-ms) ends it. */
    Croupier__RpcFrame *old;
    while ((old = rpcc_next_event(c, 300)) != NULL)
        frame_free_rpc(old); /* the second room's last events */
    model_t m3;
    model_init(&m3, &e, players + 4, 1);
    char code3[ROOM_CODE_LEN + 1];
    long long made = ts_now_ms();
    send_room(c, ++rid, players[4], NULL, &rules);
    room_joined(c, rid, &m3, players[4], code3, NULL);
    ck_assert_int_lt(wallet(&e, players[4]), 1000);
    end = ts_now_ms() + 8000;
    while (m3.room_closing == 0 && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f != NULL) {
            model_apply(&m3, f);
            frame_free_rpc(f);
        }
    }
    ck_assert_int_eq(m3.room_closing, 1);
    ck_assert_int_eq(m3.room_state, CROUPIER__ROOM_STATE__ROOM_DISBANDED);
    ck_assert_int_ge(ts_now_ms() - made, 3500); /* not before its wait */
    room_read_state(&e, code3, CROUPIER__ROOM_STATE__ROOM_DISBANDED, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_DISBANDED);
    ck_assert_str_eq(rec->detail, "the room was not full in time");
    end = ts_now_ms() + 5000;
    while (wallet(&e, players[4]) != 1000 && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(wallet(&e, players[4]), 1000);
    free(rec);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* A room moves with a whole-table move (tk.h "moves"): the drained server finishes its deal,
 * the adopter seats the room's players with its scoreboard and plays the deals left; the
 * record follows the room, and the final scoreboard is the sum of every deal's RoundEnd. */
START_TEST(test_tk_room_moves_whole_and_plays_its_remaining_deals_on_the_adopter)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b;
    env_start_other(&e, &b);
    const uint64_t players[] = {311, 312, 313};
    for (int i = 0; i < 3; i++)
        wallet_set(&e, players[i], 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m, &e, players, 3);
    uint64_t rid = 1;
    Croupier__RoomRules rules = CROUPIER__ROOM_RULES__INIT;
    rules.deals = 3;
    char code[ROOM_CODE_LEN + 1];
    send_room(c, ++rid, players[0], NULL, &rules);
    int seat0 = room_joined(c, rid, &m, players[0], code, NULL);
    room_record_t *rec = calloc(1, sizeof *rec);
    room_read(&e, code, rec);
    char first[ROOM_ID_MAX + 1];
    snprintf(first, sizeof first, "%s", rec->server);
    for (int i = 1; i < 3; i++) {
        send_room(c, ++rid, players[i], code, NULL);
        room_joined(c, rid, &m, players[i], NULL, NULL);
    }
    /* Deal 1 runs when the server starts to drain: it finishes there, then the table moves. */
    ck_assert(pump_until(c, &m, has_turn, 5000));
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 5000, NULL), 200);
    long long end = ts_now_ms() + 10000;
    while (m.offers < 3 && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f != NULL) {
            model_apply(&m, f);
            frame_free_rpc(f);
        }
        if (m.turn_seat >= 0) {
            uint64_t p = m.seat_player[m.turn_seat];
            m.turn_seat = -1;
            send_move(c, ++rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
            ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__OK);
        }
    }
    ck_assert_int_eq(m.offers, 3);
    ck_assert_int_eq(m.nrounds, 1);
    ck_assert_int_eq(m.room_closing, 0); /* moved, not ended */
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    for (int i = 0; i < 3; i++) {
        send_adopt(cb, 100 + i, players[i], m.offer_id);
        Croupier__RpcFrame *r = rpcc_wait_reply(cb, 100 + i, 5000);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
        const Croupier__Snapshot *sn = r->reply->payload->snapshot;
        ck_assert_ptr_nonnull(sn->room);
        ck_assert_str_eq(sn->room->code, code);
        ck_assert_uint_eq(sn->room->deals_played, 1);
        ck_assert_int_eq(sn->room->state, CROUPIER__ROOM_STATE__ROOM_PLAYING);
        if (i == 0)
            ck_assert_int_eq((int)sn->your_seat, seat0);
        frame_free_rpc(r);
    }
    end = ts_now_ms() + 5000;
    do {
        room_read(&e, code, rec);
    } while (strcmp(rec->server, first) == 0 && ts_now_ms() < end && (ts_sleep_ms(20), 1));
    ck_assert_str_ne(rec->server, first);
    ck_assert_int_eq(rec->played, 1);
    free(rec);
    rid = 200;
    play_room_out(cb, &m, &rid);
    check_room_final(&e, code, &m, 3);
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    int nz;
    ck_assert_int_eq(wallets(&m) + seat_accounts(&e, &nz) + rake, 3000);
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    rpcc_close(c);
    rpcc_close(cb);
    testenv_stop_server(&b);
    testenv_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tk_rooms");
    TCase *tc = tcase_create("rooms");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tk_room_is_joined_by_code_plays_its_deals_and_ends_with_its_scoreboard);
    tcase_add_test(tc, test_tk_room_moves_whole_and_plays_its_remaining_deals_on_the_adopter);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
