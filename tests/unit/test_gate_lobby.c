/*
 * The lobby of every engine listed through the gateway (issue 7, docs/gateway.md "The lobby"):
 * ListTables against a real redis-server, a real croupier-game --engine holdem and a real
 * croupier-gate on loopback, driven through the client protocol by gatec (tests/support/gatec.h).
 * The hold'em ads are the table kit's (engine/tk.h "lobby", games/holdem/holdem_engine.h); a second
 * engine's ads come from a lobby publisher (lease/lobby.h) run in this process, fed from
 * another thread as desks do; some tests write ads by hand to reach the cases a live engine
 * does not produce (expired, broken, more than a list holds).
 */
#include <check.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "evthreads.h"
#include "gatec.h"
#include "lobby.h"
#include "rconn.h"
#include "support.h"
#include "testenv.h"
#include "token.h"

#define SECRET "gate-lobby-test-secret-0123456789"
#define HOLDEM CROUPIER__ENGINE__ENGINE_HOLDEM
#define GAME CROUPIER__ENGINE__ENGINE_GAME
#define LOBBY "{croupier:lobby}"
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

/* croupier-game --engine holdem, --drain-max-seconds 20: SEATS seats a table, ads written on every
 * change (and refreshed by the kit's lobby publisher), no hand starts during a test (a minute
 * between hands). */
static testenv_server_t holdem_start(env_t *e)
{
    char seats[64];
    snprintf(seats, sizeof seats, "CROUPIER_HOLDEM_SEATS=%d", SEATS);
    char *env[] = {seats, "CROUPIER_HOLDEM_GAP_MS=60000", NULL};
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

/* ListTables of engine; asserts the answer is a TableList and returns it (free with
 * frame_free_server). */
static Croupier__ServerMessage *list_engine_ok(gatec_t *c, uint64_t rid, int engine,
                                               const char *game, int64_t stake)
{
    Croupier__ServerMessage *m = gatec_list_tables(c, rid, engine, game, stake, 3000);
    ck_assert_msg(m != NULL, "no answer to ListTables %" PRIu64, rid);
    ck_assert_msg(m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST,
                  "ListTables answered body %d, code %d", m->body_case, gatec_code(m));
    ck_assert_uint_eq(m->request_id, rid);
    return m;
}

/* ListTables of hold'em tables. */
static Croupier__ServerMessage *list_ok(gatec_t *c, uint64_t rid, const char *game, int64_t stake)
{
    return list_engine_ok(c, rid, HOLDEM, game, stake);
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

START_TEST(test_list_needs_a_login_and_answers_for_every_engine)
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
    /* Logged in: one lobby for every engine (and for none named); empty, it is an empty list. */
    static const int engines[] = {CROUPIER__ENGINE__ENGINE_UNSPECIFIED,
                                  CROUPIER__ENGINE__ENGINE_TRADITIONAL, HOLDEM,
                                  CROUPIER__ENGINE__ENGINE_PERSISTENT, GAME};
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        m = list_engine_ok(c, 9 + i, engines[i], NULL, 0);
        ck_assert_uint_eq(m->table_list->n_tables, 0);
        frame_free_server(m);
    }
    ck_assert_uint_eq(list_count(c, 20), 0);
    gatec_close(c);
    testenv_stop_server(&gate);
    testenv_stop(&e.rig);
}
END_TEST

/* Writes one hold'em ad as a publisher does (HASH + index member with score = expiry). */
static void ad_put(env_t *e, const char *server, int desk, const char *game, int stake, int seats,
                   int free_seats, long long expiry_ms)
{
    char member[96], key[160];
    snprintf(member, sizeof member, "%s:%d", server, desk);
    snprintf(key, sizeof key, LOBBY ":ad:%s", member);
    char *r = ts_redis_cmd(e->rig.redis,
                           "HSET %s table %d engine %d game %s stakes %d seats %d seats_free %d "
                           "server %s",
                           key, desk, HOLDEM, game, stake, seats, free_seats, server);
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
    /* An ad that does not name its engine is incomplete. */
    free(ts_redis_cmd(e.rig.redis,
                      "HSET %s table 11 game holdem stakes 20 seats 6 seats_free 1 server srv-f",
                      LOBBY ":ad:srv-f:11"));
    free(ts_redis_cmd(e.rig.redis, "ZADD %s %lld %s", LOBBY ":ads", later, "srv-f:11"));

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
    ck_assert_str_eq(n, "9");
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
        "  redis.call('HSET', '" LOBBY ":ad:' .. m, 'table', i, 'engine', 2, 'game', 'holdem', "
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

/* ---- a second engine's ads, from the lobby publisher ------------------------------------ */

/* The publisher on this test's own main loop, driven from a "desk" thread. */
typedef struct {
    struct event_base *base;
    rconn_t *rc;
    lobby_pub_t *pub;
    int step; /* what the desk thread does: 1 advertise, 2 change, 3 withdraw */
} pub_rig_t;

static void *desk_thread(void *arg)
{
    pub_rig_t *r = arg;
    if (r->step == 1) {
        ck_assert_int_eq(lobby_pub_set(r->pub, 21, "zhajinhua", 5, 6, 5), 0);
        ck_assert_int_eq(lobby_pub_set(r->pub, 22, "zhajinhua", 50, 6, 6), 0);
        ck_assert_int_eq(lobby_pub_set(r->pub, 23, "testkit", 5, 4, 0), 0); /* full: no ad */
        ck_assert_int_eq(lobby_pub_set(r->pub, 24, "Bad Name", 5, 4, 1), -EINVAL);
        ck_assert_int_eq(lobby_pub_set(r->pub, 24, "testkit", 5, 4, 5), -EINVAL);
    } else if (r->step == 2) {
        ck_assert_int_eq(lobby_pub_set(r->pub, 22, "zhajinhua", 50, 6, 2), 0);
        ck_assert_int_eq(lobby_pub_set(r->pub, 23, "testkit", 5, 4, 1), 0);
        ck_assert_int_eq(lobby_pub_remove(r->pub, 21), 0);
        ck_assert_int_eq(lobby_pub_remove(r->pub, 99), -ENOENT);
    } else {
        lobby_pub_withdraw_all(r->pub);
    }
    return NULL;
}

/* Runs step on another thread, then this loop until the list of engine shows want tables, the
 * first of them at desk first (0: any), 3 s at most. Returns the last list. */
static Croupier__ServerMessage *pub_step(pub_rig_t *r, int step, gatec_t *c, uint64_t *rid,
                                         int engine, size_t want, uint64_t first)
{
    r->step = step;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, desk_thread, r), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    long long end = ts_now_ms() + 3000;
    for (;;) {
        struct timeval tv = {0, 20000};
        event_base_loopexit(r->base, &tv);
        event_base_dispatch(r->base);
        Croupier__ServerMessage *m = list_engine_ok(c, (*rid)++, engine, NULL, 0);
        const Croupier__TableList *tl = m->table_list;
        if ((tl->n_tables == want && (first == 0 || tl->tables[0]->desk_id == first)) ||
            ts_now_ms() >= end)
            return m;
        frame_free_server(m);
    }
}

START_TEST(test_list_shows_a_second_engines_tables_from_the_publisher)
{
    env_t e;
    env_start(&e);
    testenv_server_t gate = gate_start(&e);
    gatec_t *c = login(&e, &gate, 91);
    /* A hold'em table written by hand, beside the second engine's. */
    ad_put(&e, "srv-h", 7, "holdem", 10, 6, 3, wall_ms() + 600000);

    ck_assert_int_eq(evthreads_enable(), 0);
    pub_rig_t r = {0};
    r.base = event_base_new();
    ck_assert_ptr_nonnull(r.base);
    rconn_opts_t ro = {.host = "127.0.0.1", .port = ts_redis_port(e.rig.redis), .name = "lobby"};
    r.rc = rconn_create(r.base, &ro);
    ck_assert_ptr_nonnull(r.rc);
    long long end = ts_now_ms() + 3000;
    while (!rconn_connected(r.rc) && ts_now_ms() < end) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(r.base, &tv);
        event_base_dispatch(r.base);
    }
    ck_assert(rconn_connected(r.rc));
    lobby_pub_opts_t po = {.server_id = "kit:3", .engine = GAME, .refresh_ms = 200};
    r.pub = lobby_pub_create(r.base, r.rc, &po);
    ck_assert_ptr_nonnull(r.pub);
    lobby_pub_opts_t bad = {.server_id = "with space", .engine = GAME};
    ck_assert_ptr_null(lobby_pub_create(r.base, r.rc, &bad));

    /* Advertised from a desk thread: the two tables with free seats, of ENGINE_GAME only. */
    uint64_t rid = 60;
    Croupier__ServerMessage *m = pub_step(&r, 1, c, &rid, GAME, 2, 0);
    const Croupier__TableList *tl = m->table_list;
    ck_assert_uint_eq(tl->n_tables, 2);
    ck_assert_uint_eq(tl->tables[0]->desk_id, 21);
    ck_assert_str_eq(tl->tables[0]->server_id, "kit:3");
    ck_assert_str_eq(tl->tables[0]->game, "zhajinhua");
    ck_assert_int_eq(tl->tables[0]->stake, 5);
    ck_assert_uint_eq(tl->tables[0]->seats, 6);
    ck_assert_uint_eq(tl->tables[0]->seats_free, 5);
    ck_assert_uint_eq(tl->tables[1]->desk_id, 22);
    frame_free_server(m);
    /* The keys the publisher wrote: the index member and a hash with an expiry. */
    char *f = ts_redis_cmd(e.rig.redis, "HGET %s engine", LOBBY ":ad:kit:3:21");
    ck_assert_str_eq(f, "4");
    free(f);
    f = ts_redis_cmd(e.rig.redis, "PTTL %s", LOBBY ":ad:kit:3:21");
    ck_assert_int_gt(atoll(f), 0);
    ck_assert_int_le(atoll(f), 600);
    free(f);
    /* The filters: engine (hold'em sees only its own), game, stake; no engine: all. */
    m = list_ok(c, rid++, NULL, 0);
    ck_assert_uint_eq(m->table_list->n_tables, 1);
    ck_assert_str_eq(m->table_list->tables[0]->game, "holdem");
    frame_free_server(m);
    m = list_engine_ok(c, rid++, CROUPIER__ENGINE__ENGINE_UNSPECIFIED, NULL, 0);
    ck_assert_uint_eq(m->table_list->n_tables, 3);
    frame_free_server(m);
    m = list_engine_ok(c, rid++, GAME, "zhajinhua", 50);
    ck_assert_uint_eq(m->table_list->n_tables, 1);
    ck_assert_uint_eq(m->table_list->tables[0]->desk_id, 22);
    frame_free_server(m);
    m = list_engine_ok(c, rid++, CROUPIER__ENGINE__ENGINE_TRADITIONAL, NULL, 0);
    ck_assert_uint_eq(m->table_list->n_tables, 0);
    frame_free_server(m);

    /* Changes from the desk thread: free seats, a full table with a seat again, a removal. */
    m = pub_step(&r, 2, c, &rid, GAME, 2, 23);
    tl = m->table_list;
    ck_assert_uint_eq(tl->n_tables, 2);
    ck_assert_uint_eq(tl->tables[0]->desk_id, 23);
    ck_assert_str_eq(tl->tables[0]->game, "testkit");
    ck_assert_uint_eq(tl->tables[1]->desk_id, 22);
    ck_assert_uint_eq(tl->tables[1]->seats_free, 2);
    frame_free_server(m);
    f = ts_redis_cmd(e.rig.redis, "EXISTS %s", LOBBY ":ad:kit:3:21");
    ck_assert_str_eq(f, "0");
    free(f);

    /* Refreshed: after several TTLs (3 x 200 ms) the ads are still there. */
    end = ts_now_ms() + 1000;
    while (ts_now_ms() < end) {
        struct timeval tv = {0, 50000};
        event_base_loopexit(r.base, &tv);
        event_base_dispatch(r.base);
    }
    m = list_engine_ok(c, rid++, GAME, NULL, 0);
    ck_assert_uint_eq(m->table_list->n_tables, 2);
    frame_free_server(m);

    /* Withdrawn (drain): every ad of the publisher goes at once; the hold'em one stays. */
    m = pub_step(&r, 3, c, &rid, GAME, 0, 0);
    ck_assert_uint_eq(m->table_list->n_tables, 0);
    frame_free_server(m);
    m = list_engine_ok(c, rid++, CROUPIER__ENGINE__ENGINE_UNSPECIFIED, NULL, 0);
    ck_assert_uint_eq(m->table_list->n_tables, 1);
    frame_free_server(m);
    f = ts_redis_cmd(e.rig.redis, "ZCARD %s", LOBBY ":ads");
    ck_assert_str_eq(f, "1");
    free(f);

    /* A dead publisher's ads vanish by themselves: advertise again with a new publisher, then
     * destroy it without withdrawing; the list is empty once the TTL has passed. */
    lobby_pub_destroy(r.pub);
    r.pub = lobby_pub_create(r.base, r.rc, &po);
    m = pub_step(&r, 1, c, &rid, GAME, 2, 0);
    ck_assert_uint_eq(m->table_list->n_tables, 2);
    frame_free_server(m);
    lobby_pub_destroy(r.pub);
    ts_sleep_ms(700);
    m = list_engine_ok(c, rid++, GAME, NULL, 0);
    ck_assert_uint_eq(m->table_list->n_tables, 0);
    frame_free_server(m);

    rconn_destroy(r.rc);
    event_base_free(r.base);
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
    tcase_add_test(tc, test_list_needs_a_login_and_answers_for_every_engine);
    tcase_add_test(tc, test_list_is_unavailable_when_redis_does_not_answer_within_the_budget);
    suite_add_tcase(s, tc);
    tc = tcase_create("ads");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_list_leaves_out_expired_broken_and_vanished_ads);
    tcase_add_test(tc, test_list_holds_at_most_200_tables_the_lowest_stakes_first);
    suite_add_tcase(s, tc);
    tc = tcase_create("publisher");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_list_shows_a_second_engines_tables_from_the_publisher);
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
