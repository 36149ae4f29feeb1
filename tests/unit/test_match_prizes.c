/*
 * A match's prizes as items and a running match's cancellation, on the director
 * (docs/tournaments.md "Payouts" ("Items"), "Match halls: cancelling a running match"): real
 * croupier-director processes against a real redis-server, the test playing the tables' side
 * through tournament/tour_table.h.
 *
 *   - items: a 3-player Dou Dizhu match whose places 1 and 3 carry items (3: an item alone, no
 *     chips), its last deal reported while no director runs (the owner SIGKILLed after the
 *     deal: a crash before the award), then awarded by a director that applies the step but
 *     never answers it (no replica: durability) and is SIGKILLed right after (a crash after the
 *     award, before its answer), then a third director: every item recorded once (the entry,
 *     the player's record, the log), the chips once, the money conserved.
 *   - cancel: a 6-player match cancelled in its final round, its owner SIGKILLed before the
 *     request is read: the players still in get their buy-in back and an equal share of the
 *     rest, the others nothing more, paid once; the deal in play is refused afterwards.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "support.h"
#include "tour_table.h"

static ts_redis_t *redis;
static redisContext *R;

static void setup(void)
{
    redis = ts_redis_start();
    ck_assert_ptr_nonnull(redis);
    R = redisConnect("127.0.0.1", ts_redis_port(redis));
    ck_assert(R != NULL && R->err == 0);
}

static void teardown(void)
{
    redisFree(R);
    ts_redis_stop(redis);
}

#define rnum(...) ts_rnum(R, __VA_ARGS__) /* support.h */
#define rstr(...) ts_rstr(R, __VA_ARGS__)

static char *meta_str(uint64_t id, const char *field)
{
    return rstr("HGET {croupier:tour:%" PRIu64 "}:meta %s", id, field);
}

static long long wallet(uint64_t player)
{
    return rnum("GET {croupier:money}:wallet:%" PRIu64, player);
}

static bool wait_status(uint64_t id, const char *status, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (bool first = true; first || ts_now_ms() < end; first = false) {
        char *s = meta_str(id, "status");
        bool match = s != NULL && strcmp(s, status) == 0;
        free(s);
        if (match)
            return true;
        ts_sleep_ms(10);
    }
    return false;
}

typedef struct {
    ts_proc_t *p;
    int health;
    char name[32];
} dir_t;

static void dir_start(dir_t *d, const char *name, bool no_replica_answers)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    char *plain[] = {"--claim-ttl-ms", "600", "--scan-ms", "100", NULL};
    /* One replica wanted and none there: every step applied, none answered. */
    char *mute[] = {"--claim-ttl-ms",  "600", "--scan-ms", "100", "--redis-min-replicas", "1",
                    "--redis-wait-ms", "100", NULL};
    d->p = ts_director_spawn(redis, d->name, no_replica_answers ? mute : plain, &d->health);
    ck_assert_ptr_nonnull(d->p);
    ck_assert_msg(ts_http_wait_status("127.0.0.1", d->health, "/readyz", 200, 10000) == 0,
                  "director %s not ready; log %s", name, ts_proc_log_path(d->p));
}

static void dir_kill(dir_t *d)
{
    if (d->p == NULL)
        return;
    ts_proc_signal(d->p, SIGKILL);
    ts_proc_wait(d->p, 5000, NULL);
    ts_proc_free(d->p);
    d->p = NULL;
}

static char *ask(uint64_t id, const char *op, const char *req, const char *player, int timeout_s)
{
    redisReply *r =
        redisCommand(R, "XADD {croupier:tour:%" PRIu64 "}:in * op %s req %s player %s reason %s",
                     id, op, req, player, "operator-test");
    ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    r = redisCommand(R, "BLPOP {croupier:tour:%" PRIu64 "}:reply:%s %d", id, req, timeout_s);
    ck_assert_ptr_nonnull(r);
    char *v = r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? strdup(r->element[1]->str) : NULL;
    freeReplyObject(r);
    return v;
}

static void register_players(uint64_t id, uint64_t first, int n)
{
    for (int i = 0; i < n; i++) {
        char player[24], req[32];
        snprintf(player, sizeof player, "%" PRIu64, first + (uint64_t)i);
        snprintf(req, sizeof req, "r%d", i);
        rnum("SET {croupier:money}:wallet:%s 1000", player);
        char *a = ask(id, "register", req, player, 10);
        ck_assert_msg(a != NULL && strstr(a, "\"code\":\"OK\"") != NULL, "%s", a ? a : "none");
        free(a);
    }
}

/* A table the test hosts and the deal it was dealt. */
typedef struct {
    bool held, dealt;
    char host[TOUR_HOST_MAX + 1];
    uint32_t attempt;
    uint64_t hand;
    uint64_t player[3];
} host_t;

#define MAX_TABLES 4
static host_t hosts[MAX_TABLES + 1];

static void claim_tables(uint64_t id)
{
    tour_claim_t cl[MAX_TABLES];
    size_t n = 0, skipped = 0;
    ck_assert_int_ge(
        tour_table_scan(R, "srv-test", "traditional", 60000, 4, cl, MAX_TABLES, &n, &skipped), 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(cl[i].tournament, id);
        ck_assert_uint_le(cl[i].table, MAX_TABLES);
        host_t *h = &hosts[cl[i].table];
        memset(h, 0, sizeof *h);
        h->held = true;
        snprintf(h->host, sizeof h->host, "%s", cl[i].host);
    }
}

/* Asks table t for a deal; true when one is dealt (its players by seat in hosts[t]). */
static bool table_deal(uint64_t id, uint32_t t)
{
    host_t *h = &hosts[t];
    uint64_t hand = 0;
    bool closed = false;
    ck_assert_int_eq(tour_table_next_hand(R, id, t, &hand, &closed), 0);
    if (closed) {
        h->held = false;
        return false;
    }
    json_t *a = NULL;
    int rc = tour_table_ask(R, id, "deal", t, hand, h->attempt, h->host, NULL, NULL, 3000, &a);
    if (rc == -ETIMEDOUT)
        return false;
    ck_assert_int_eq(rc, 0);
    const char *code = json_string_value(json_object_get(a, "code"));
    bool ok = code != NULL && strcmp(code, "OK") == 0;
    if (ok) {
        json_t *seats = json_object_get(a, "seats");
        ck_assert_uint_eq(json_array_size(seats), 3);
        for (size_t x = 0; x < 3; x++)
            h->player[x] =
                (uint64_t)json_integer_value(json_object_get(json_array_get(seats, x), "player"));
        h->dealt = true;
        h->hand = hand;
    } else if (code != NULL && strcmp(code, "TABLE_CLOSED") == 0) {
        tour_table_release(R, id, t, h->host);
        h->held = false;
    } else {
        h->attempt++;
    }
    json_decref(a);
    return ok;
}

/* The result text of table t's deal: the landlord (seat 0) wins with u = 2 (+4, -2, -2). */
static void deal_result(uint32_t t, char *buf, size_t len)
{
    const host_t *h = &hosts[t];
    snprintf(buf, len, "%" PRIu64 ":4,%" PRIu64 ":-2,%" PRIu64 ":-2", h->player[0], h->player[1],
             h->player[2]);
}

static int table_hand(uint64_t id, uint32_t t, int wait_ms, json_t **answer)
{
    char result[128], record[160];
    deal_result(t, result, sizeof result);
    snprintf(record, sizeof record,
             "{\"game\":\"doudizhu\",\"round\":\"p%" PRIu64 "-t%u-h%" PRIu64 "\"}", id, t,
             hosts[t].hand);
    return tour_table_ask(R, id, "hand", t, hosts[t].hand, 0, hosts[t].host, result, record,
                          wait_ms, answer);
}

/* Deals every table that can deal, within timeout_ms; returns the tables dealt. */
static int deal_all(uint64_t id, int want, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    int dealt = 0;
    while (ts_now_ms() < end) {
        claim_tables(id);
        dealt = 0;
        for (uint32_t t = 1; t <= MAX_TABLES; t++) {
            if (hosts[t].held && !hosts[t].dealt)
                table_deal(id, t);
            dealt += hosts[t].dealt;
        }
        if (dealt >= want)
            return dealt;
        ts_sleep_ms(50);
    }
    return dealt;
}

static json_t *entry_of(uint64_t id, uint64_t player)
{
    char *txt = rstr("HGET {croupier:tour:%" PRIu64 "}:entries %" PRIu64, id, player);
    ck_assert_ptr_nonnull(txt);
    json_t *j = json_loads(txt, 0, NULL);
    free(txt);
    ck_assert_ptr_nonnull(j);
    return j;
}

/* The log entries named event whose data holds `with` (NULL: any). */
static size_t log_count(uint64_t id, const char *event, const char *with)
{
    redisReply *r = redisCommand(R, "XRANGE {croupier:tour:%" PRIu64 "}:log - +", id);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    size_t n = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *f = r->element[i]->element[1];
        if (f->elements < 2 || strcmp(f->element[1]->str, event) != 0)
            continue;
        bool has = with == NULL;
        for (size_t k = 2; !has && k + 1 < f->elements; k += 2)
            has = strstr(f->element[k + 1]->str, with) != NULL;
        n += has;
    }
    freeReplyObject(r);
    return n;
}

#define MATCH3_ITEMS                                                                               \
    "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"                       \
    "\"min_entrants\":3,\"max_entrants\":3,"                                                       \
    "\"payouts\":{\"percent_paid\":34,\"items\":[{\"place\":1,\"item\":\"trophy:gold\"},"          \
    "{\"place\":3,\"item\":\"ticket:final-2027\"}]},"                                              \
    "\"stages\":[{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":1}]}"

#define FIRST 7001

START_TEST(test_match_prizes_items_paid_once_through_crashes_around_the_award)
{
    dir_t a, b, c;
    dir_start(&a, "dir-a", false);
    uint64_t id = ts_tour_create(R, "items", "match", MATCH3_ITEMS, 1, 0);
    register_players(id, FIRST, 3);
    ck_assert(wait_status(id, "running", 5000));
    memset(hosts, 0, sizeof hosts);
    ck_assert_int_eq(deal_all(id, 1, 10000), 1);
    ck_assert(hosts[1].dealt);

    /* A crash before the award: the owner dies with the last deal in play; its report waits
     * in the stream while nobody owns the match. */
    dir_kill(&a);
    json_t *ans = NULL;
    ck_assert_int_eq(table_hand(id, 1, 300, &ans), -ETIMEDOUT);

    /* A director that applies the award but never answers it (no replica), killed right
     * after: a crash after the award, before its answer. */
    dir_start(&b, "dir-b", true);
    ck_assert_msg(wait_status(id, "finished", 10000), "not finished; log %s",
                  ts_proc_log_path(b.p));
    dir_kill(&b);
    char *rec = rstr("GET {croupier:tour:%" PRIu64 "}:req:%s.h%" PRIu64 ".0", id, hosts[1].host,
                     hosts[1].hand);
    ck_assert_msg(rec != NULL && strstr(rec, "\"finished\":true") != NULL, "record %s",
                  rec ? rec : "none");
    free(rec);
    /* The table asks again (the same request): the match is over, nothing is applied again. */
    ck_assert_int_eq(table_hand(id, 1, 300, &ans), -ESHUTDOWN);
    /* Another director comes: nothing to take over, nothing paid again. */
    dir_start(&c, "dir-c", false);
    ts_sleep_ms(1500);

    /* Places: the landlord (seat 0) first; the two peasants by the draw. */
    long long money = rnum("GET {croupier:money}:rake:tournament");
    int64_t prize_sum = 0;
    int seen_place[4] = {0};
    for (int i = 0; i < 3; i++) {
        uint64_t p = FIRST + (uint64_t)i;
        json_t *e = entry_of(id, p);
        int place = (int)json_integer_value(json_object_get(e, "place"));
        int64_t prize = json_integer_value(json_object_get(e, "prize"));
        const char *item = json_string_value(json_object_get(e, "item"));
        ck_assert(place >= 1 && place <= 3);
        seen_place[place]++;
        if (p == hosts[1].player[0])
            ck_assert_int_eq(place, 1);
        /* 34 % of 3 pays 2 places of a pool of 300: 180, 120; place 3 an item alone. */
        ck_assert_int_eq(prize, place == 1 ? 180 : place == 2 ? 120 : 0);
        ck_assert_int_eq(wallet(p), 1000 - 110 + prize);
        money += wallet(p);
        prize_sum += prize;
        const char *want = place == 1 ? "trophy:gold" : place == 3 ? "ticket:final-2027" : NULL;
        long long n = rnum("HLEN {croupier:items}:player:%" PRIu64, p);
        if (want == NULL) {
            ck_assert_ptr_null(item);
            ck_assert_int_eq(n, 0);
        } else {
            ck_assert_str_eq(item, want);
            /* The player's record: one field for this match and place. */
            ck_assert_int_eq(n, 1);
            char *txt =
                rstr("HGET {croupier:items}:player:%" PRIu64 " %" PRIu64 ":%d", p, id, place);
            ck_assert_ptr_nonnull(txt);
            json_t *j = json_loads(txt, 0, NULL);
            ck_assert_ptr_nonnull(j);
            ck_assert_str_eq(json_string_value(json_object_get(j, "item")), want);
            ck_assert_int_eq(json_integer_value(json_object_get(j, "place")), place);
            ck_assert_int_eq(json_integer_value(json_object_get(j, "tournament")), (json_int_t)id);
            json_decref(j);
            free(txt);
        }
        json_decref(e);
    }
    ck_assert(seen_place[1] == 1 && seen_place[2] == 1 && seen_place[3] == 1);
    ck_assert_int_eq(prize_sum, 300);
    ck_assert_int_eq(money, 3000);
    /* The tournament's history: one place each, the items named, once. */
    ck_assert_uint_eq(log_count(id, "match_place", NULL), 3);
    ck_assert_uint_eq(log_count(id, "match_place", " item trophy:gold"), 1);
    ck_assert_uint_eq(log_count(id, "match_place", " item ticket:final-2027"), 1);
    ck_assert_uint_eq(log_count(id, "match_finished", NULL), 1);
    ck_assert_int_eq(rnum("EXISTS {croupier:money}:tourpool:%" PRIu64, id), 0);
    dir_kill(&c);
}
END_TEST

#define MATCH6                                                                                     \
    "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"                       \
    "\"min_entrants\":6,\"max_entrants\":6,"                                                       \
    "\"stages\":[{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":1}]}"

START_TEST(test_match_prizes_cancel_a_running_match_through_a_takeover)
{
    dir_t a, b;
    dir_start(&a, "dir-a", false);
    uint64_t id = ts_tour_create(R, "cancel", "match", MATCH6, 1, 0);
    register_players(id, FIRST, 6);
    ck_assert(wait_status(id, "running", 5000));
    memset(hosts, 0, sizeof hosts);
    /* Round 1: two tables, one deal each; the firsts and the better second go on (3). */
    ck_assert_int_eq(deal_all(id, 2, 10000), 2);
    for (uint32_t t = 1; t <= MAX_TABLES; t++) {
        if (!hosts[t].dealt)
            continue;
        json_t *ans = NULL;
        ck_assert_int_eq(table_hand(id, t, 3000, &ans), 0);
        ck_assert_str_eq(json_string_value(json_object_get(ans, "code")), "OK");
        json_decref(ans);
        hosts[t].dealt = false;
        hosts[t].attempt = 0;
    }
    ck_assert_int_eq(rnum("HGET {croupier:tour:%" PRIu64 "}:meta players", id), 3);
    /* The final round's deal is in play when the operator cancels. */
    ck_assert_int_eq(deal_all(id, 1, 10000), 1);
    uint32_t final = 0;
    for (uint32_t t = 1; t <= MAX_TABLES; t++)
        if (hosts[t].dealt)
            final = t;
    ck_assert_uint_ne(final, 0);

    /* The owner dies; the cancellation waits in the stream for the next owner. */
    dir_kill(&a);
    dir_start(&b, "dir-b", false);
    char *r = ask(id, "cancel", "c1", "0", 10);
    ck_assert_msg(r != NULL && strstr(r, "\"code\":\"OK\"") != NULL, "cancel: %s", r ? r : "none");
    free(r);
    ck_assert(wait_status(id, "cancelled", 2000));

    /* Still in: the final table's three, each his buy-in back and an equal third of the three
     * out's 300 (docs/tournaments.md "Match halls: cancelling a running match"). */
    long long money = rnum("GET {croupier:money}:rake:tournament");
    ck_assert_int_eq(money, 60); /* the fees stay the house's */
    int64_t shared = 0;
    for (int i = 0; i < 6; i++) {
        uint64_t p = FIRST + (uint64_t)i;
        bool in = p == hosts[final].player[0] || p == hosts[final].player[1] ||
                  p == hosts[final].player[2];
        json_t *e = entry_of(id, p);
        const char *state = json_string_value(json_object_get(e, "state"));
        ck_assert_str_eq(state, in ? "cancelled" : "busted");
        ck_assert_int_eq(json_integer_value(json_object_get(e, "prize")), in ? 200 : 0);
        ck_assert_int_eq(wallet(p), 1000 - 110 + (in ? 200 : 0));
        shared += in ? 200 : 0;
        money += wallet(p);
        json_decref(e);
    }
    ck_assert_int_eq(shared, 600);
    ck_assert_int_eq(money, 6000);
    ck_assert_int_eq(rnum("EXISTS {croupier:money}:tourpool:%" PRIu64, id), 0);
    ck_assert_int_eq(rnum("SISMEMBER {croupier:tours}:live %" PRIu64, id), 0);
    ck_assert_uint_eq(log_count(id, "cancelled", "operator-test"), 1);
    /* The deal in play can no longer be recorded: refused, nothing changed. */
    json_t *ans = NULL;
    ck_assert_int_eq(table_hand(id, final, 300, &ans), -ESHUTDOWN);
    ck_assert_uint_eq(log_count(id, "match_place", NULL), 0);
    ts_sleep_ms(500);
    for (int i = 0; i < 6; i++)
        money -= wallet(FIRST + (uint64_t)i);
    ck_assert_int_eq(money, 60); /* paid once: nothing moved since */
    dir_kill(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("match_prizes");
    TCase *tc = tcase_create("match_prizes");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_match_prizes_items_paid_once_through_crashes_around_the_award);
    tcase_add_test(tc, test_match_prizes_cancel_a_running_match_through_a_takeover);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
