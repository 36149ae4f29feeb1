/*
 * The hold'em lobby listed through the gateway (issue 7): ListTables against a real
 * redis-server, a real croupier-game --engine holdem and a real croupier-gate on loopback,
 * driven through the client protocol by gatec (tests/support/gatec.h). The ads themselves are
 * the engine's (games/holdem/holdem_engine.h, "Lobby ads"); some tests write ads by hand to
 * reach the cases a live engine does not produce (expired, broken, more than a list holds).
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"

#define SECRET "gate-lobby-test-secret-0123456789"
#define HOLDEM CROUPIER__ENGINE__ENGINE_HOLDEM
#define LOBBY "{croupier:lobby:holdem}"
#define SEATS 4

/* redis-server with the token secret in a file (tests/support/testenv.h), and the secret itself
 * for minting tokens. Game servers and gateways are started into testenv_server_t values. */
typedef struct {
    testenv_t rig;
    token_secret_t secret;
} env_t;

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void env_start(env_t *e)
{
    memset(e, 0, sizeof *e);
    ck_assert_int_eq(testenv_start(&e->rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&e->secret, SECRET, strlen(SECRET)), 0);
}

/* croupier-game --engine holdem, --drain-max-seconds 20: SEATS seats a table, ads refreshed every
 * 300 ms, no hand starts during a test (a minute between hands). */
static testenv_server_t holdem_start(env_t *e)
{
    char seats[64];
    snprintf(seats, sizeof seats, "CROUPIER_HOLDEM_SEATS=%d", SEATS);
    char *env[] = {seats, "CROUPIER_HOLDEM_AD_MS=300", "CROUPIER_HOLDEM_GAP_MS=60000", NULL};
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_game(&e->rig, &g, "holdem", 20, NULL, env), 0);
    return g;
}

/* croupier-gate "lobby-gate" with a 300 ms list budget. */
static testenv_server_t gate_start(env_t *e)
{
    char *args[] = {
        "--drain-window-ms", "100", "--close-timeout-ms", "2000", "--budget-list-ms", "300", NULL};
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_gate(&e->rig, &g, "lobby-gate", args), 0);
    return g;
}

/* Connects to the gateway and logs player in. */
static gatec_t *login(env_t *e, const testenv_server_t *gate, uint64_t player)
{
    gatec_t *c = gatec_connect("127.0.0.1", gate->port, 2000);
    ck_assert_ptr_nonnull(c);
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&e->secret, player, time(NULL) + 600, tok, sizeof tok), 0);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(m);
    return c;
}

static void wallet_set(env_t *e, uint64_t player, long long amount)
{
    free(ts_redis_cmd(e->rig.redis, "SET {croupier:money}:wallet:%llu %lld",
                      (unsigned long long)player, amount));
}

/* ListTables; asserts the answer is a TableList and returns it (free with frame_free_server). */
static Croupier__ServerMessage *list_ok(gatec_t *c, uint64_t rid, const char *game, int64_t stake)
{
    Croupier__ServerMessage *m = gatec_list_tables(c, rid, HOLDEM, game, stake, 3000);
    ck_assert_msg(m != NULL, "no answer to ListTables %" PRIu64, rid);
    ck_assert_msg(m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST,
                  "ListTables answered body %d, code %d", m->body_case, gatec_code(m));
    ck_assert_uint_eq(m->request_id, rid);
    return m;
}

/* How many tables a list shows, without filters. */
static size_t list_count(gatec_t *c, uint64_t rid)
{
    Croupier__ServerMessage *m = list_ok(c, rid, NULL, 0);
    size_t n = m->table_list->n_tables;
    frame_free_server(m);
    return n;
}

/* Lists until the table desk shows free seats (the ads follow the lobby asynchronously), at
 * most 3 s. Returns the last list (which the caller checks and frees). */
static Croupier__ServerMessage *list_until(gatec_t *c, uint64_t *rid, uint64_t desk,
                                           uint32_t free_seats)
{
    long long end = ts_now_ms() + 3000;
    for (;;) {
        Croupier__ServerMessage *m = list_ok(c, (*rid)++, NULL, 0);
        const Croupier__TableList *tl = m->table_list;
        if ((tl->n_tables == 1 && tl->tables[0]->desk_id == desk &&
             tl->tables[0]->seats_free == free_seats) ||
            ts_now_ms() >= end)
            return m;
        frame_free_server(m);
        ts_sleep_ms(50);
    }
}

START_TEST(test_list_shows_a_joined_table_until_the_server_drains)
{
    env_t e;
    env_start(&e);
    testenv_server_t game = holdem_start(&e);
    testenv_server_t gate = gate_start(&e);
    wallet_set(&e, 501, 100000);
    wallet_set(&e, 502, 100000);
    gatec_t *watcher = login(&e, &gate, 500); /* lists without a seat */
    uint64_t rid = 10;
    ck_assert_uint_eq(list_count(watcher, rid++), 0);

    gatec_t *p1 = login(&e, &gate, 501);
    Croupier__ServerMessage *j = gatec_join(p1, 2, HOLDEM, "holdem", 10, 5000);
    ck_assert_ptr_nonnull(j);
    ck_assert_msg(j->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED, "join answered %d (%d)",
                  j->body_case, gatec_code(j));
    uint64_t desk = j->joined->desk_id;
    frame_free_server(j);

    /* One player seated: the table is listed with seats - 1 free seats. */
    Croupier__ServerMessage *m = list_until(watcher, &rid, desk, SEATS - 1);
    ck_assert_uint_eq(m->table_list->n_tables, 1);
    const Croupier__TableAd *ad = m->table_list->tables[0];
    ck_assert_uint_eq(ad->desk_id, desk);
    ck_assert_str_eq(ad->game, "holdem");
    ck_assert_int_eq(ad->stake, 10);
    ck_assert_uint_eq(ad->seats, SEATS);
    ck_assert_uint_eq(ad->seats_free, SEATS - 1);
    /* server_id is the one the engine advertises under (the index member names it). */
    char *members = ts_redis_cmd(e.rig.redis, "ZRANGE %s 0 -1", LOBBY ":ads");
    char want[160];
    snprintf(want, sizeof want, "%s:%" PRIu64, ad->server_id, desk);
    ck_assert_msg(members != NULL && strcmp(members, want) == 0, "index '%s', want '%s'",
                  members != NULL ? members : "(null)", want);
    free(members);
    frame_free_server(m);

    /* Filters: the stake and the game must both match. */
    m = list_ok(watcher, rid++, "holdem", 10);
    ck_assert_uint_eq(m->table_list->n_tables, 1);
    frame_free_server(m);
    m = list_ok(watcher, rid++, NULL, 20);
    ck_assert_uint_eq(m->table_list->n_tables, 0);
    frame_free_server(m);
    m = list_ok(watcher, rid++, "shortdeck", 0);
    ck_assert_uint_eq(m->table_list->n_tables, 0);
    frame_free_server(m);

    /* A second player at the same stakes takes another seat of the same table. */
    gatec_t *p2 = login(&e, &gate, 502);
    j = gatec_join(p2, 2, HOLDEM, "holdem", 10, 5000);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(j->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    ck_assert_uint_eq(j->joined->desk_id, desk);
    frame_free_server(j);
    m = list_until(watcher, &rid, desk, SEATS - 2);
    ck_assert_uint_eq(m->table_list->n_tables, 1);
    ck_assert_uint_eq(m->table_list->tables[0]->seats_free, SEATS - 2);
    frame_free_server(m);

    /* /drain withdraws the ads at once: the list is empty (checked right after the drain
     * answered, then once more after a few refresh periods of the engine). */
    ck_assert_int_eq(ts_http_get("127.0.0.1", game.health, "/drain", 5000, NULL), 200);
    long long end = ts_now_ms() + 2000;
    size_t n;
    while ((n = list_count(watcher, rid++)) != 0 && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_uint_eq(n, 0);
    ts_sleep_ms(1000);
    ck_assert_uint_eq(list_count(watcher, rid++), 0);
    char *idx = ts_redis_cmd(e.rig.redis, "ZCARD %s", LOBBY ":ads");
    ck_assert_str_eq(idx, "0");
    free(idx);

    gatec_close(watcher);
    gatec_close(p1);
    gatec_close(p2);
    testenv_stop_server(&gate);
    testenv_stop_server(&game);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_list_needs_a_login_and_an_engine_with_a_lobby)
{
    env_t e;
    env_start(&e);
    testenv_server_t gate = gate_start(&e);
    gatec_t *c = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    /* Before Login: UNAUTHENTICATED, and the connection stays usable. */
    Croupier__ServerMessage *m = gatec_list_tables(c, 7, HOLDEM, NULL, 0, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_RESULT);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__UNAUTHENTICATED);
    ck_assert_uint_eq(m->request_id, 7);
    frame_free_server(m);
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&e.secret, 77, time(NULL) + 600, tok, sizeof tok), 0);
    m = gatec_login(c, 8, tok, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(m);
    /* Engines without a lobby: BAD_REQUEST (not retriable), connection still open. */
    static const int no_lobby[] = {CROUPIER__ENGINE__ENGINE_TRADITIONAL,
                                   CROUPIER__ENGINE__ENGINE_PERSISTENT};
    for (size_t i = 0; i < 2; i++) {
        m = gatec_list_tables(c, 9 + i, no_lobby[i], NULL, 0, 3000);
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__BAD_REQUEST);
        ck_assert(m->result->error->has_retriable && !m->result->error->retriable);
        frame_free_server(m);
    }
    /* Logged in, hold'em: an empty lobby is an empty list. */
    ck_assert_uint_eq(list_count(c, 20), 0);
    gatec_close(c);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

/* Writes one ad as the engine does (HASH + index member with score = expiry). */
static void ad_put(env_t *e, const char *server, int desk, const char *game, int stake, int seats,
                   int free_seats, long long expiry_ms)
{
    char member[96], key[160];
    snprintf(member, sizeof member, "%s:%d", server, desk);
    snprintf(key, sizeof key, LOBBY ":ad:%s", member);
    char *r = ts_redis_cmd(e->rig.redis,
                           "HSET %s table %d game %s stakes %d seats %d seats_free %d server %s",
                           key, desk, game, stake, seats, free_seats, server);
    ck_assert_ptr_nonnull(r);
    free(r);
    r = ts_redis_cmd(e->rig.redis, "ZADD %s %lld %s", LOBBY ":ads", expiry_ms, member);
    ck_assert_ptr_nonnull(r);
    free(r);
}

START_TEST(test_list_leaves_out_expired_broken_and_vanished_ads)
{
    env_t e;
    env_start(&e);
    testenv_server_t gate = gate_start(&e);
    gatec_t *c = login(&e, &gate, 88);
    long long later = wall_ms() + 600000;
    ad_put(&e, "srv-e", 3, "shortdeck", 20, 6, 1, later);
    ad_put(&e, "srv-a", 5, "holdem", 20, 6, 2, later);
    ad_put(&e, "srv-a", 4, "holdem", 5, 9, 9, later);
    ad_put(&e, "srv-b", 6, "holdem", 20, 6, 2, wall_ms() - 1000); /* expired */
    ad_put(&e, "srv-c", 7, "holdem", 20, 6, 9, later);            /* more free than seats */
    ad_put(&e, "srv-c", 8, "Hold Em", 20, 6, 1, later);           /* not a game name */
    ad_put(&e, "srv-c", 9, "holdem", 0, 6, 1, later);             /* no stake */
    free(ts_redis_cmd(e.rig.redis, "ZADD %s %lld %s", LOBBY ":ads", later, "srv-d:10")); /* no ad */

    /* Sorted by stake, then server, then desk. */
    Croupier__ServerMessage *m = list_ok(c, 30, NULL, 0);
    const Croupier__TableList *tl = m->table_list;
    ck_assert_uint_eq(tl->n_tables, 3);
    ck_assert_uint_eq(tl->tables[0]->desk_id, 4);
    ck_assert_int_eq(tl->tables[0]->stake, 5);
    ck_assert_uint_eq(tl->tables[0]->seats_free, 9);
    ck_assert_str_eq(tl->tables[1]->server_id, "srv-a");
    ck_assert_uint_eq(tl->tables[1]->desk_id, 5);
    ck_assert_uint_eq(tl->tables[1]->seats, 6);
    ck_assert_uint_eq(tl->tables[1]->seats_free, 2);
    ck_assert_str_eq(tl->tables[2]->server_id, "srv-e");
    ck_assert_str_eq(tl->tables[2]->game, "shortdeck");
    frame_free_server(m);

    m = list_ok(c, 31, "holdem", 0);
    ck_assert_uint_eq(m->table_list->n_tables, 2);
    frame_free_server(m);
    m = list_ok(c, 32, NULL, 20);
    ck_assert_uint_eq(m->table_list->n_tables, 2);
    ck_assert_uint_eq(m->table_list->tables[0]->desk_id, 5);
    ck_assert_uint_eq(m->table_list->tables[1]->desk_id, 3);
    frame_free_server(m);
    m = list_ok(c, 33, "holdem", 20);
    ck_assert_uint_eq(m->table_list->n_tables, 1);
    ck_assert_uint_eq(m->table_list->tables[0]->desk_id, 5);
    frame_free_server(m);
    /* The gateway only reads: the index is as it was. */
    char *n = ts_redis_cmd(e.rig.redis, "ZCARD %s", LOBBY ":ads");
    ck_assert_str_eq(n, "8");
    free(n);
    gatec_close(c);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_list_holds_at_most_200_tables_the_lowest_stakes_first)
{
    env_t e;
    env_start(&e);
    testenv_server_t gate = gate_start(&e);
    gatec_t *c = login(&e, &gate, 89);
    /* 250 ads, stakes 250 down to 1, in one script. */
    static const char script[] =
        "for i = 1, 250 do "
        "  local m = 'srv-bulk:' .. i "
        "  redis.call('HSET', '" LOBBY ":ad:' .. m, 'table', i, 'game', 'holdem', "
        "    'stakes', 251 - i, 'seats', 6, 'seats_free', 3, 'server', 'srv-bulk') "
        "  redis.call('ZADD', '" LOBBY ":ads', ARGV[1], m) "
        "end return 250";
    char *r = ts_redis_cmd(e.rig.redis, "EVAL %s 0 %lld", script, wall_ms() + 600000);
    ck_assert_str_eq(r, "250");
    free(r);
    Croupier__ServerMessage *m = list_ok(c, 40, NULL, 0);
    const Croupier__TableList *tl = m->table_list;
    ck_assert_uint_eq(tl->n_tables, 200);
    for (size_t i = 0; i < tl->n_tables; i++) {
        ck_assert_int_eq(tl->tables[i]->stake, (int64_t)i + 1);
        ck_assert_uint_eq(tl->tables[i]->desk_id, 250 - i);
    }
    frame_free_server(m);
    /* A filter applies before the bound: the stake-240 table is found. */
    m = list_ok(c, 41, NULL, 240);
    ck_assert_uint_eq(m->table_list->n_tables, 1);
    ck_assert_uint_eq(m->table_list->tables[0]->desk_id, 11);
    frame_free_server(m);
    gatec_close(c);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_list_is_unavailable_when_redis_does_not_answer_within_the_budget)
{
    env_t e;
    env_start(&e);
    testenv_server_t gate = gate_start(&e);
    gatec_t *c = login(&e, &gate, 90);
    ad_put(&e, "srv-a", 5, "holdem", 20, 6, 2, wall_ms() + 600000);
    ck_assert_uint_eq(list_count(c, 50), 1);
    ts_redis_pause(e.rig.redis);
    long long t0 = ts_now_ms();
    Croupier__ServerMessage *m = gatec_list_tables(c, 51, HOLDEM, NULL, 0, 5000);
    long long took = ts_now_ms() - t0;
    ts_redis_resume(e.rig.redis);
    ck_assert_msg(m != NULL, "no answer while Redis hangs");
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_RESULT);
    ck_assert_int_eq(gatec_code(m), CROUPIER__ERROR_CODE__UNAVAILABLE);
    ck_assert(m->result->error->has_retriable && m->result->error->retriable);
    ck_assert_uint_eq(m->request_id, 51);
    frame_free_server(m);
    /* Answered when the 300 ms budget ran out, not before (nothing had failed yet). */
    ck_assert_msg(took >= 250, "answered after %lld ms", took);
    /* Once Redis answers again, so does the list (the gateway reconnects if it dropped). */
    long long end = ts_now_ms() + 5000;
    uint64_t rid = 52;
    for (;;) {
        m = gatec_list_tables(c, rid++, HOLDEM, NULL, 0, 3000);
        ck_assert_ptr_nonnull(m);
        bool ok = m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST;
        size_t n = ok ? m->table_list->n_tables : 0;
        frame_free_server(m);
        if (ok) {
            ck_assert_uint_eq(n, 1);
            break;
        }
        ck_assert_msg(ts_now_ms() < end, "the list never came back after Redis resumed");
        ts_sleep_ms(100);
    }
    /* The gateway still answers other requests on the connection. */
    m = gatec_ping(c, 99, 5, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(m);
    gatec_close(c);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

static Suite *gate_lobby_suite(void)
{
    Suite *s = suite_create("gate_lobby");
    TCase *tc = tcase_create("engine_ads");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_list_shows_a_joined_table_until_the_server_drains);
    suite_add_tcase(s, tc);
    tc = tcase_create("requests");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_list_needs_a_login_and_an_engine_with_a_lobby);
    tcase_add_test(tc, test_list_is_unavailable_when_redis_does_not_answer_within_the_budget);
    suite_add_tcase(s, tc);
    tc = tcase_create("ads");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_list_leaves_out_expired_broken_and_vanished_ads);
    tcase_add_test(tc, test_list_holds_at_most_200_tables_the_lowest_stakes_first);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    SRunner *sr = srunner_create(gate_lobby_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
