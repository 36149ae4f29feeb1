/*
 * Tournament tables at the hold'em servers (docs/tournaments.md "Tables at the servers"): real
 * croupier-director and croupier-game --engine holdem processes against a real redis-server on
 * loopback. Nobody connects: every player is absent and blinded away (TDA 71A), so the tables play
 * on the automatic move until the blinds of the last levels finish the field.
 *
 *   - an SNG hosted by one server plays to one winner: every entrant one place, the prize pool
 *     paid exactly (wallets + fees = what was seeded), the host's claim gone at the end;
 *   - an SNG whose server drains mid-tournament goes on at the other server;
 *   - an MTT on four tables across servers goes on through a drain (the tables handed over
 *     between hands) and a SIGKILL (the claims expire, another server re-deals the hand in
 *     play), to one winner with every chip and every prize accounted for.
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "support.h"
#include "testenv.h"

static testenv_t env;
static redisContext *R;
static ts_proc_t *director;

#define rnum(...) ts_rnum(R, __VA_ARGS__) /* support.h */

#define rstr(...) ts_rstr(R, __VA_ARGS__)

/* Redis's clock in ms: an MTT's start is wall time (the director's clock is this machine's). */
static long long redis_now_ms(void)
{
    redisReply *r = redisCommand(R, "TIME");
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    long long ms =
        strtoll(r->element[0]->str, NULL, 10) * 1000 + strtoll(r->element[1]->str, NULL, 10) / 1000;
    freeReplyObject(r);
    return ms;
}

static void director_start(void)
{
    char *args[] = {"--claim-ttl-ms", "1500", "--scan-ms", "100", NULL};
    testenv_server_t d;
    ck_assert_int_eq(testenv_start_director(&env, &d, "dir-a", args), 0);
    director = d.proc;
}

/* A server's and the director's logs on stderr when a check is about to fail. */
/* One Redis reply, flattened (arrays one element a line), for a failure's dump. */
static void dump_reply(const redisReply *r, int depth)
{
    if (r == NULL)
        return;
    if (r->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i < r->elements; i++)
            dump_reply(r->element[i], depth + 1);
    } else if (r->type == REDIS_REPLY_INTEGER) {
        fprintf(stderr, "%*s%lld\n", depth * 2, "", r->integer);
    } else if (r->str != NULL) {
        fprintf(stderr, "%*s%.300s\n", depth * 2, "", r->str);
    }
}

static void dump_logs(ts_proc_t *game)
{
    ts_proc_t *procs[] = {game, director};
    for (size_t i = 0; i < 2; i++) {
        char *log = procs[i] != NULL ? ts_proc_log(procs[i]) : NULL;
        size_t n = log != NULL ? strlen(log) : 0;
        fprintf(stderr, "---- %s (last 6000 bytes)\n%s\n", i == 0 ? "game" : "director",
                log != NULL ? log + (n > 6000 ? n - 6000 : 0) : "(none)");
        free(log);
    }
    /* The tournament's state as Redis holds it: whose it is, its clock and tables, the hosts'
     * claims and the last steps of its log. */
    static const char *const cmds[] = {
        "HGETALL {croupier:tour:1}:meta", "KEYS {croupier:tour:1}:*",
        "XREVRANGE {croupier:tour:1}:log + - COUNT 12"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        fprintf(stderr, "---- redis: %s\n", cmds[i]);
        redisReply *r = redisCommand(R, cmds[i]);
        dump_reply(r, 0);
        if (r != NULL)
            freeReplyObject(r);
    }
}

static void setup(void)
{
    ck_assert_int_eq(testenv_start(&env, NULL), 0);
    R = redisConnect("127.0.0.1", ts_redis_port(env.redis));
    ck_assert(R != NULL && R->err == 0);
    director_start();
}

static void teardown(void)
{
    if (director != NULL) {
        ts_proc_signal(director, SIGKILL);
        ts_proc_wait(director, 5000, NULL);
        ts_proc_free(director);
        director = NULL;
    }
    redisFree(R);
    testenv_stop(&env);
}

/* A hold'em server that hosts tournament tables; absent players' moves after 2 ms. */
static void game_start(testenv_server_t *s)
{
    char *args[] = {"--holdem-trustee-ms",
                    "2",
                    "--holdem-gap-ms",
                    "0",
                    "--holdem-tour-host-ttl-ms",
                    "1200",
                    "--drain-max-seconds",
                    "20",
                    NULL};
    ck_assert_int_eq(testenv_start_game(&env, s, "holdem", 20, args, NULL), 0);
}

static uint64_t tour_create(const char *format, const char *structure, long long start_at_ms)
{
    return ts_tour_create(R, "test", format, structure, redis_now_ms(), start_at_ms);
}

static void register_all(uint64_t id, uint64_t first, int n)
{
    for (int p = 0; p < n; p++) {
        uint64_t player = first + (uint64_t)p;
        rnum("SET {croupier:money}:wallet:%" PRIu64 " 1000", player);
        redisReply *r = redisCommand(R,
                                     "XADD {croupier:tour:%" PRIu64 "}:in * op register req "
                                     "r%" PRIu64 " player %" PRIu64,
                                     id, player, player);
        ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
        freeReplyObject(r);
        r = redisCommand(R, "BLPOP {croupier:tour:%" PRIu64 "}:reply:r%" PRIu64 " 10", id, player);
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "no answer to register %" PRIu64,
                      player);
        ck_assert_msg(strstr(r->element[1]->str, "\"ok\":true") != NULL, "%s", r->element[1]->str);
        freeReplyObject(r);
    }
}

static bool status_is(uint64_t id, const char *want)
{
    char *s = rstr("HGET {croupier:tour:%" PRIu64 "}:meta status", id);
    bool yes = s != NULL && strcmp(s, want) == 0;
    free(s);
    return yes;
}

/* Hands the director recorded (its log's `deal` events minus re-deals are not needed: the
 * stream of requests holds every `hand` answered). */
static long long hands_recorded(uint64_t id)
{
    redisReply *r = redisCommand(R, "XRANGE {croupier:tour:%" PRIu64 "}:log - +", id);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    long long n = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *f = r->element[i]->element[1];
        for (size_t k = 0; k + 1 < f->elements; k += 2)
            if (strcmp(f->element[k]->str, "event") == 0 &&
                strcmp(f->element[k + 1]->str, "deal") == 0)
                n++;
    }
    freeReplyObject(r);
    return n;
}

/* The end of a tournament: one winner, every entrant one place (1..n, each once: no two busts
 * shared a place here, or they share it and the next is skipped), prizes = the pool, and
 * wallets + fees = what was seeded. */
static void check_finished(uint64_t id, uint64_t first, int n)
{
    long long prizes = 0, wallets = 0, firsts = 0;
    int places[64] = {0};
    for (int p = 0; p < n; p++) {
        char *e = rstr("HGET {croupier:tour:%" PRIu64 "}:entries %" PRIu64, id, first + p);
        ck_assert_ptr_nonnull(e);
        json_t *j = json_loads(e, 0, NULL);
        ck_assert_ptr_nonnull(j);
        int place = (int)json_integer_value(json_object_get(j, "place"));
        ck_assert_msg(place >= 1 && place <= n, "entry %s", e);
        places[place]++;
        firsts += place == 1;
        prizes += json_integer_value(json_object_get(j, "prize"));
        json_decref(j);
        free(e);
        wallets += rnum("GET {croupier:money}:wallet:%" PRIu64, first + p);
    }
    ck_assert_int_eq(firsts, 1);
    long long pool = rnum("HGET {croupier:tour:%" PRIu64 "}:meta entries", id) * 100;
    ck_assert_int_eq(prizes, pool);
    long long fees = rnum("GET {croupier:money}:rake:tournament");
    ck_assert_int_eq(wallets + fees, 1000LL * n);
    ck_assert_int_eq(rnum("EXISTS {croupier:money}:tourpool:%" PRIu64, id), 0);
}

/*
 * The independent check of the chips: the tables' hand histories (docs/hand-history.md, the
 * records with this tournament's `tournament` object) in the stream's order (the order the
 * director recorded the hands: a player's hands in the order he played them), replayed player by
 * player. Every completed hand's results sum to 0 (no rake), every player's first hand
 * starts with the starting stack and every later one with what the one before left him, and the
 * winner ends with every chip. Returns the completed hands.
 */
static long long check_histories(uint64_t id, uint64_t first, int n, long long starting)
{
    redisReply *r = redisCommand(R, "XRANGE {croupier:history:holdem}:stream - +");
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    long long stack[64];
    bool seen[64] = {false};
    long long hands = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *f = r->element[i]->element[1];
        json_t *rec = NULL;
        for (size_t k = 0; k + 1 < f->elements; k += 2)
            if (strcmp(f->element[k]->str, "data") == 0)
                rec = json_loads(f->element[k + 1]->str, 0, NULL);
        json_t *tj = json_object_get(rec, "tournament");
        if (rec == NULL || (uint64_t)json_integer_value(json_object_get(tj, "id")) != id ||
            strcmp(json_string_value(json_object_get(rec, "outcome")), "completed") != 0) {
            json_decref(rec);
            continue;
        }
        long long sum = 0;
        json_t *seats = json_object_get(rec, "seats"), *results = json_object_get(rec, "results");
        size_t a, b;
        json_t *s, *x;
        json_array_foreach(seats, a, s)
        {
            int p =
                (int)(strtoull(json_string_value(json_object_get(s, "player")), NULL, 10) - first);
            ck_assert(p >= 0 && p < n);
            long long st = json_integer_value(json_object_get(s, "stack"));
            ck_assert_msg(st == (seen[p] ? stack[p] : starting),
                          "player %d starts a hand with %lld, had %lld", p, st,
                          seen[p] ? stack[p] : starting);
            long long delta = 0;
            json_array_foreach(results, b, x)
            {
                if (json_integer_value(json_object_get(x, "seat")) ==
                    json_integer_value(json_object_get(s, "seat")))
                    delta = json_integer_value(json_object_get(x, "delta"));
            }
            ck_assert_int_ge(st + delta, 0);
            stack[p] = st + delta;
            seen[p] = true;
            sum += delta;
        }
        ck_assert_int_eq(sum, 0);
        hands++;
        json_decref(rec);
    }
    freeReplyObject(r);
    long long total = 0, biggest = 0;
    for (int p = 0; p < n; p++) {
        long long v = seen[p] ? stack[p] : starting;
        total += v;
        biggest = v > biggest ? v : biggest;
    }
    ck_assert_int_eq(total, starting * n);
    ck_assert_int_eq(biggest, starting * n);
    return hands;
}

/* Blinds that grow until they finish a field of absent players (who only ever fold to a bet). */
#define LEVELS                                                                                     \
    "\"levels\":[{\"small_blind\":10,\"big_blind\":20,\"duration_ms\":700},"                       \
    "{\"small_blind\":50,\"big_blind\":100,\"duration_ms\":700},"                                  \
    "{\"small_blind\":200,\"big_blind\":400,\"ante\":50,\"duration_ms\":700},"                     \
    "{\"small_blind\":1000,\"big_blind\":2000,\"ante\":200,\"duration_ms\":700},"                  \
    "{\"small_blind\":10000,\"big_blind\":20000,\"ante\":2000,\"duration_ms\":700},"               \
    "{\"small_blind\":100000,\"big_blind\":200000,\"ante\":20000,\"duration_ms\":700}]"

#define SNG6                                                                                       \
    "{\"format\":\"sng\",\"seats_per_table\":6,\"starting_stack\":1000,\"buy_in\":100,"            \
    "\"fee\":10,\"min_entrants\":6,\"max_entrants\":6," LEVELS "}"

#define SNG6_SLOW                                                                                  \
    "{\"format\":\"sng\",\"seats_per_table\":6,\"starting_stack\":1000,\"buy_in\":100,"            \
    "\"fee\":10,\"min_entrants\":6,\"max_entrants\":6,\"levels\":[{\"small_blind\":10,"            \
    "\"big_blind\":20,\"duration_ms\":3000},{\"small_blind\":200,\"big_blind\":400,"               \
    "\"duration_ms\":2000},{\"small_blind\":100000,\"big_blind\":200000,\"duration_ms\":2000}]}"

START_TEST(test_sng_plays_to_one_winner_at_a_holdem_server)
{
    testenv_server_t g;
    game_start(&g);
    uint64_t id = tour_create("sng", SNG6, 0);
    register_all(id, 500, 6);
    long long end = ts_now_ms() + 60000;
    while (!status_is(id, "finished") && ts_now_ms() < end)
        ts_sleep_ms(100);
    if (!status_is(id, "finished"))
        dump_logs(g.proc);
    ck_assert_msg(status_is(id, "finished"), "not finished");
    ck_assert(ts_proc_log_has(g.proc, "\"tk_tour_table_claimed\""));
    ck_assert_int_gt(hands_recorded(id), 0);
    /* Where the table was played, for the gateway (TakeTournamentSeat). */
    char *where = rstr("HGET {croupier:tour:%" PRIu64 "}:where 1", id);
    ck_assert_ptr_nonnull(where);
    json_t *w = json_loads(where, 0, NULL);
    ck_assert_ptr_nonnull(w);
    ck_assert(strncmp(json_string_value(json_object_get(w, "server")), "holdem:", 7) == 0);
    ck_assert_str_eq(json_string_value(json_object_get(w, "game")), "holdem");
    ck_assert_int_gt(json_integer_value(json_object_get(w, "desk")), 0);
    ck_assert_int_ge(json_integer_value(json_object_get(w, "epoch")), 1);
    json_decref(w);
    free(where);
    check_finished(id, 500, 6);
    ck_assert_int_gt(check_histories(id, 500, 6, 1000), 0);
    /* The table let go of its claim when the tournament ended. */
    long long deadline = ts_now_ms() + 5000;
    while (rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:1", id) == 1 && ts_now_ms() < deadline)
        ts_sleep_ms(50);
    ck_assert_int_eq(rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:1", id), 0);
    testenv_stop_server(&g);
}
END_TEST

/* A Sit & Go through a drain: its table's server drains mid-tournament; the table is handed to
 * the other server between hands (or, if the drain's bound cuts a hand, re-dealt there), and
 * the tournament plays on to one winner, every chip accounted for. */
START_TEST(test_sng_goes_on_through_a_drain_of_its_server)
{
    testenv_server_t a, b;
    game_start(&a);
    uint64_t id = tour_create("sng", SNG6_SLOW, 0);
    register_all(id, 700, 6);
    long long end = ts_now_ms() + 15000;
    while (hands_recorded(id) < 5 && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_ge(hands_recorded(id), 5);
    ck_assert_msg(!status_is(id, "finished"), "finished before the drain");
    game_start(&b);
    long long before = hands_recorded(id);
    testenv_stop_server(&a); /* SIGTERM: the drain hands the table over */
    end = ts_now_ms() + 60000;
    while (!status_is(id, "finished") && ts_now_ms() < end)
        ts_sleep_ms(100);
    if (!status_is(id, "finished"))
        dump_logs(b.proc);
    ck_assert_msg(status_is(id, "finished"), "not finished after the drain");
    ck_assert(ts_proc_log_has(b.proc, "\"tk_tour_table_claimed\""));
    ck_assert_int_gt(hands_recorded(id), before);
    check_finished(id, 700, 6);
    ck_assert_int_gt(check_histories(id, 700, 6, 1000), 0);
    testenv_stop_server(&b);
}
END_TEST

#define MTT20                                                                                      \
    "{\"format\":\"mtt\",\"seats_per_table\":6,\"starting_stack\":1000,\"buy_in\":100,"            \
    "\"fee\":10,\"min_entrants\":2,\"max_entrants\":100,"                                          \
    "\"levels\":[{\"small_blind\":10,\"big_blind\":20,\"duration_ms\":3000},"                      \
    "{\"small_blind\":50,\"big_blind\":100,\"ante\":10,\"duration_ms\":2000},"                     \
    "{\"small_blind\":200,\"big_blind\":400,\"ante\":50,\"big_blind_ante\":true,"                  \
    "\"duration_ms\":1500},{\"small_blind\":10000,\"big_blind\":20000,\"ante\":2000,"              \
    "\"duration_ms\":1000},{\"small_blind\":100000,\"big_blind\":200000,\"duration_ms\":1000}]}"

/* The servers holding claims of tournament id now (their logs name the hosts' tokens). */
static int hosts_held(uint64_t id)
{
    int n = 0;
    for (int t = 1; t <= 8; t++)
        n += rnum("EXISTS {croupier:tour:%" PRIu64 "}:host:%d", id, t) == 1;
    return n;
}

START_TEST(test_mtt_survives_a_drain_and_a_crash_of_its_servers)
{
    testenv_server_t a, b, c = {0};
    game_start(&a);
    uint64_t id = tour_create("mtt", MTT20, redis_now_ms() + 600);
    register_all(id, 600, 20);
    long long end = ts_now_ms() + 10000;
    while (hosts_held(id) < 4 && ts_now_ms() < end)
        ts_sleep_ms(50);
    ck_assert_int_eq(hosts_held(id), 4); /* four tables of five, all on server a */
    while (hands_recorded(id) < 8 && ts_now_ms() < end)
        ts_sleep_ms(20);
    /* b comes up; a drains: its tables are handed over between hands, b claims them. */
    game_start(&b);
    long long before = hands_recorded(id);
    testenv_stop_server(&a);
    ck_assert(!status_is(id, "cancelled"));
    end = ts_now_ms() + 15000;
    while (hands_recorded(id) < before + 8 && !status_is(id, "finished") && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_msg(hands_recorded(id) >= before + 8 || status_is(id, "finished"),
                  "no hands after the drain; game b log %s", ts_proc_log_path(b.proc));
    ck_assert(ts_proc_log_has(b.proc, "\"tk_tour_table_claimed\""));
    /* c comes up; b dies: its claims expire and c re-deals the hands b was playing. */
    ck_assert_msg(!status_is(id, "finished"), "finished before the crash step");
    game_start(&c);
    ts_proc_signal(b.proc, SIGKILL);
    ts_proc_wait(b.proc, 5000, NULL);
    end = ts_now_ms() + 60000;
    while (!status_is(id, "finished") && ts_now_ms() < end)
        ts_sleep_ms(100);
    if (!status_is(id, "finished"))
        dump_logs(c.proc);
    ck_assert_msg(status_is(id, "finished"), "not finished after the crash");
    ck_assert(ts_proc_log_has(c.proc, "\"tk_tour_table_claimed\""));
    check_finished(id, 600, 20);
    ck_assert_int_gt(check_histories(id, 600, 20, 1000), 0);
    testenv_stop_server(&b);
    testenv_stop_server(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tour_tables");
    TCase *tc = tcase_create("tour_tables");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, test_sng_plays_to_one_winner_at_a_holdem_server);
    tcase_add_test(tc, test_mtt_survives_a_drain_and_a_crash_of_its_servers);
    tcase_add_test(tc, test_sng_goes_on_through_a_drain_of_its_server);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
