/*
 * Match halls on the director (docs/tournaments.md "Match halls: the director";
 * docs/rules/match-halls.md): two real croupier-director processes against a real redis-server,
 * the test playing the game servers' side through tournament/tour_table.h (claims, deal, hand)
 * with deal results it chooses. A Dou Dizhu 打立出局 -> 定局积分 match of 24 is played to its end
 * with its owner SIGKILLed in the middle: every stage score is recomputed from the results the
 * test sent (each applied once, at the base of its deal, carried over by the rules), the final
 * ranking and prizes are those the pure module computes from the stages the director kept, the
 * prizes are paid once (a replayed hand report changes nothing), the money adds up, and the
 * rising line's time follows the level clock's rule across the takeover.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "match.h"
#include "match_json.h"
#include "match_rising.h"
#include "support.h"
#include "tour_payout.h"
#include "tour_structure.h"
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

static long long meta_int(uint64_t id, const char *field)
{
    return rnum("HGET {croupier:tour:%" PRIu64 "}:meta %s", id, field);
}

static char *meta_str(uint64_t id, const char *field)
{
    return rstr("HGET {croupier:tour:%" PRIu64 "}:meta %s", id, field);
}

static long long wallet(uint64_t player)
{
    return rnum("GET {croupier:money}:wallet:%" PRIu64, player);
}

static uint64_t tour_create(const char *structure)
{
    return ts_tour_create(R, "test", "match", structure, 1, 0);
}

static char *ask(uint64_t id, const char *op, const char *req, const char *player, int timeout_s)
{
    redisReply *r = redisCommand(R, "XADD {croupier:tour:%" PRIu64 "}:in * op %s req %s player %s",
                                 id, op, req, player);
    ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    r = redisCommand(R, "BLPOP {croupier:tour:%" PRIu64 "}:reply:%s %d", id, req, timeout_s);
    ck_assert_ptr_nonnull(r);
    char *v = r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? strdup(r->element[1]->str) : NULL;
    freeReplyObject(r);
    return v;
}

typedef struct {
    ts_proc_t *p;
    int health;
    char name[32];
} dir_t;

static void dir_start(dir_t *d, const char *name, int ttl_ms)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    char ttl[16];
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    char *extra[] = {"--claim-ttl-ms", ttl, "--scan-ms", "100", NULL};
    d->p = ts_director_spawn(redis, d->name, extra, &d->health);
    ck_assert_ptr_nonnull(d->p);
    ck_assert_msg(ts_http_wait_status("127.0.0.1", d->health, "/readyz", 200, 10000) == 0,
                  "director %s not ready; log %s", name, ts_proc_log_path(d->p));
}

static void dir_stop(dir_t *d)
{
    if (d->p == NULL)
        return;
    ts_proc_signal(d->p, SIGKILL);
    ts_proc_wait(d->p, 5000, NULL);
    ts_proc_free(d->p);
    d->p = NULL;
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
        ts_sleep_ms(20);
    }
    return false;
}

/* A 24-player Dou Dizhu match: 打立出局 to 9 with a base growing every second (so the line
 * overtakes the scores within seconds of play), then 定局积分 (3 tables, the 3 firsts to the
 * final) of 2 deals a round. */
#define MATCH24                                                                                    \
    "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"                       \
    "\"min_entrants\":24,\"max_entrants\":24,\"stages\":["                                         \
    "{\"format\":\"rising\",\"seats\":3,\"start_score\":1000,\"base_score\":10,"                   \
    "\"growth_pct\":20,\"growth_ms\":1000,\"out_pct\":2000,\"advance\":9},"                        \
    "{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":2}]}"

#define NPLAYERS 24
#define FIRST_PLAYER 5001
#define MAX_DEALS 2000

/* A deal the test played: who, at which base, with which results. */
typedef struct {
    uint32_t stage;
    int64_t base;
    uint64_t player[3];
    int64_t res[3];
} deal_t;

static deal_t deals[MAX_DEALS];
static size_t ndeals;

/* A table the test hosts. */
typedef struct {
    bool held;
    char host[TOUR_HOST_MAX + 1];
    uint32_t attempt;
    bool dealt; /* a deal answered OK, its hand not reported yet */
    uint64_t hand;
    deal_t d;
} host_t;

#define MAX_TABLES 16
static host_t hosts[MAX_TABLES + 1];

static uint64_t rng_state = 42;

/* Claims the open tables nobody hosts (engine "traditional": a match's tables). */
static void claim_tables(uint64_t id)
{
    tour_claim_t cl[MAX_TABLES];
    size_t n = 0, skipped = 0;
    int rc = tour_table_scan(R, "srv-test", "traditional", 60000, 4, cl, MAX_TABLES, &n, &skipped);
    ck_assert_int_ge(rc, 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(cl[i].tournament, id);
        ck_assert_uint_le(cl[i].table, MAX_TABLES);
        ck_assert_uint_eq(cl[i].seats, 3);
        host_t *h = &hosts[cl[i].table];
        memset(h, 0, sizeof *h);
        h->held = true;
        snprintf(h->host, sizeof h->host, "%s", cl[i].host);
    }
    /* A hold'em server never claims a match's table. */
    rc = tour_table_scan(R, "srv-holdem", "holdem", 60000, 10, cl, MAX_TABLES, &n, &skipped);
    ck_assert_int_eq(rc, 0);
}

static const char *code_of(json_t *a)
{
    const char *c = json_string_value(json_object_get(a, "code"));
    return c != NULL ? c : "?";
}

/* Asks table t for a deal; true when one is dealt. */
static bool table_deal(uint64_t id, uint32_t t)
{
    host_t *h = &hosts[t];
    uint64_t hand = 0;
    bool closed = false;
    ck_assert_int_eq(tour_table_next_hand(R, id, t, &hand, &closed), 0);
    json_t *a = NULL;
    int rc = tour_table_ask(R, id, "deal", t, hand, h->attempt, h->host, NULL, NULL, 3000, &a);
    if (rc == -ETIMEDOUT || rc == -ESHUTDOWN)
        return false; /* nobody owns it now (the takeover), or it ended: ask again later */
    ck_assert_int_eq(rc, 0);
    const char *code = code_of(a);
    bool ok = strcmp(code, "OK") == 0;
    if (strcmp(code, "TABLE_CLOSED") == 0) {
        ck_assert_int_eq(tour_table_release(R, id, t, h->host), 0);
        h->held = false;
    } else if (strcmp(code, "WAIT") == 0) {
        h->attempt++;
    } else {
        ck_assert_msg(ok, "deal table %u hand %" PRIu64 ": %s", t, hand, json_dumps(a, 0));
        json_t *seats = json_object_get(a, "seats");
        ck_assert_uint_eq(json_array_size(seats), 3);
        ck_assert_str_eq(json_string_value(json_object_get(a, "game")), "doudizhu");
        h->dealt = true;
        h->hand = hand;
        h->d.stage = (uint32_t)json_integer_value(json_object_get(a, "stage"));
        h->d.base = json_integer_value(json_object_get(a, "base"));
        ck_assert_int_ge(h->d.base, 1);
        for (size_t x = 0; x < 3; x++) {
            json_t *s = json_array_get(seats, x);
            ck_assert_int_eq(json_integer_value(json_object_get(s, "seat")), (json_int_t)x);
            h->d.player[x] = (uint64_t)json_integer_value(json_object_get(s, "player"));
        }
        /* The deal's result, chosen here: a landlord, a winner, u = 1..6. */
        uint32_t landlord = (uint32_t)tour_rng_below(tour_rng_splitmix64, &rng_state, 3);
        bool won = tour_rng_below(tour_rng_splitmix64, &rng_state, 2) == 0;
        int64_t u = 1 + (int64_t)tour_rng_below(tour_rng_splitmix64, &rng_state, 6);
        ck_assert_int_eq(match_result_doudizhu(landlord, won, u, h->d.res), 0);
    }
    json_decref(a);
    return ok;
}

/* Reports table t's deal; returns the answer (a new reference) once applied. */
static json_t *table_hand(uint64_t id, uint32_t t)
{
    host_t *h = &hosts[t];
    char result[128], record[160];
    snprintf(result, sizeof result,
             "%" PRIu64 ":%" PRId64 ",%" PRIu64 ":%" PRId64 ",%" PRIu64 ":%" PRId64, h->d.player[0],
             h->d.res[0], h->d.player[1], h->d.res[1], h->d.player[2], h->d.res[2]);
    snprintf(record, sizeof record,
             "{\"game\":\"doudizhu\",\"round\":\"m%" PRIu64 "-t%u-h%" PRIu64 "\"}", id, t, h->hand);
    for (int tries = 0; tries < 20; tries++) {
        json_t *a = NULL;
        int rc = tour_table_ask(R, id, "hand", t, h->hand, 0, h->host, result, record, 3000, &a);
        if (rc == -ETIMEDOUT)
            continue; /* the same request id again: applied once */
        ck_assert_int_eq(rc, 0);
        ck_assert_msg(strcmp(code_of(a), "OK") == 0, "hand: %s", json_dumps(a, 0));
        ck_assert_uint_lt(ndeals, MAX_DEALS);
        deals[ndeals++] = h->d;
        h->dealt = false;
        h->attempt = 0;
        return a;
    }
    ck_abort_msg("hand of table %u never answered", t);
    return NULL;
}

/* The entries of the log named event. */
static size_t log_count(uint64_t id, const char *event)
{
    redisReply *r = redisCommand(R, "XRANGE {croupier:tour:%" PRIu64 "}:log - +", id);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    size_t n = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *f = r->element[i]->element[1];
        n += f->elements >= 2 && strcmp(f->element[1]->str, event) == 0;
    }
    freeReplyObject(r);
    return n;
}

static match_stage_t *load_stage(uint64_t id, int k)
{
    char *txt = rstr("HGET {croupier:tour:%" PRIu64 "}:stages %d", id, k);
    ck_assert_ptr_nonnull(txt);
    match_stage_t *s = NULL;
    char err[256];
    ck_assert_msg(match_stage_from_json(txt, strlen(txt), &s, err, sizeof err) == 0, "%s", err);
    free(txt);
    return s;
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

START_TEST(test_match_director_rising_then_fixed_to_the_end_through_a_sigkill)
{
    dir_t d[2];
    dir_start(&d[0], "dir-a", 600);
    dir_start(&d[1], "dir-b", 600);
    uint64_t id = tour_create(MATCH24);
    for (int i = 0; i < NPLAYERS; i++) {
        char player[24], req[32];
        snprintf(player, sizeof player, "%d", FIRST_PLAYER + i);
        snprintf(req, sizeof req, "r%d", i);
        rnum("SET {croupier:money}:wallet:%s 1000", player);
        char *a = ask(id, "register", req, player, 10);
        ck_assert_msg(a != NULL && strstr(a, "\"code\":\"OK\"") != NULL, "%s", a ? a : "none");
        free(a);
    }
    ck_assert(wait_status(id, "running", 5000));
    ck_assert_int_eq(meta_int(id, "pool"), 2400);

    memset(hosts, 0, sizeof hosts);
    ndeals = 0;
    bool killed = false, replayed = false;
    long long clock_before = 0, t_kill = 0, epoch = 0;
    int64_t last_rising_base = 0;
    long long end = ts_now_ms() + 90000;
    while (!wait_status(id, "finished", 0)) {
        ck_assert_msg(ts_now_ms() < end, "the match did not end; %zu deals", ndeals);
        claim_tables(id);
        for (uint32_t t = 1; t <= MAX_TABLES; t++)
            if (hosts[t].held && !hosts[t].dealt)
                table_deal(id, t);
        for (uint32_t t = 1; t <= MAX_TABLES; t++) {
            if (!hosts[t].dealt)
                continue;
            deal_t dl = hosts[t].d;
            uint64_t hand = hosts[t].hand;
            json_t *a = table_hand(id, t);
            /* The base of the rising line never goes back, takeover or not. */
            if (dl.stage == 0) {
                ck_assert_int_ge(dl.base, last_rising_base);
                last_rising_base = dl.base;
            }
            if (!replayed && ndeals == 5) {
                /* The same report again (its request id): the first answer, applied once. */
                size_t before = log_count(id, "match_deal");
                char result[128];
                snprintf(result, sizeof result,
                         "%" PRIu64 ":%" PRId64 ",%" PRIu64 ":%" PRId64 ",%" PRIu64 ":%" PRId64,
                         dl.player[0], dl.res[0], dl.player[1], dl.res[1], dl.player[2], dl.res[2]);
                char record[160];
                snprintf(record, sizeof record,
                         "{\"game\":\"doudizhu\",\"round\":\"m%" PRIu64 "-t%u-h%" PRIu64 "\"}", id,
                         t, hand);
                json_t *b = NULL;
                ck_assert_int_eq(tour_table_ask(R, id, "hand", t, hand, 0, hosts[t].host, result,
                                                record, 3000, &b),
                                 0);
                ck_assert_msg(json_equal(a, b), "replay %s vs %s", json_dumps(b, 0),
                              json_dumps(a, 0));
                json_decref(b);
                ck_assert_uint_eq(log_count(id, "match_deal"), before);
                replayed = true;
            }
            json_decref(a);
        }
        if (!killed && ndeals >= 8) {
            /* SIGKILL the owner in the middle of the rising stage. */
            ck_assert_int_eq(meta_int(id, "match_stage"), 0);
            char *o = meta_str(id, "owner_id");
            int who = strcmp(o, d[0].name) == 0 ? 0 : 1;
            free(o);
            epoch = rnum("GET {croupier:tour:%" PRIu64 "}:epoch", id);
            ts_sleep_ms(300);
            clock_before = meta_int(id, "clock_ms");
            t_kill = ts_now_ms();
            dir_stop(&d[who]);
            killed = true;
        } else if (killed && t_kill > 0 &&
                   rnum("GET {croupier:tour:%" PRIu64 "}:epoch", id) > epoch) {
            /* Taken over: the clock (the rising line's time) never went back, and the time
             * nobody owned the match (at least most of the 600 ms claim) is not counted. */
            ts_sleep_ms(400);
            long long clock_after = meta_int(id, "clock_ms");
            long long t_read = ts_now_ms();
            ck_assert_int_ge(clock_after, clock_before);
            ck_assert_msg(clock_after - clock_before <= (t_read - t_kill) - 400,
                          "clock %lld -> %lld over %lld ms", clock_before, clock_after,
                          t_read - t_kill);
            t_kill = 0;
        }
    }
    ck_assert(killed);
    ck_assert(replayed);
    ck_assert_int_eq(t_kill, 0); /* the takeover was seen and checked */
    ck_assert_int_eq(rnum("GET {croupier:tour:%" PRIu64 "}:epoch", id), epoch + 1);

    /* Every deal applied once: one history record and one log entry each. */
    ck_assert_uint_eq(log_count(id, "match_deal"), ndeals);
    ck_assert_int_eq(rnum("XLEN {croupier:history:doudizhu}:stream"), (long long)ndeals);

    /* The stages the director kept, against the results the test sent. */
    match_stage_t *s0 = load_stage(id, 0), *s1 = load_stage(id, 1);
    ck_assert(s0->over && s1->over);
    ck_assert_uint_eq(s0->n, NPLAYERS);
    ck_assert_uint_eq(s1->n, 9);
    for (uint32_t i = 0; i < s0->n; i++) {
        int64_t want = 1000;
        for (size_t k = 0; k < ndeals; k++)
            for (int x = 0; x < 3; x++)
                if (deals[k].stage == 0 && deals[k].player[x] == s0->players[i].id)
                    want += deals[k].res[x] * deals[k].base;
        ck_assert_msg(s0->players[i].score == want, "player %" PRIu64 ": %" PRId64 " != %" PRId64,
                      s0->players[i].id, s0->players[i].score, want);
    }
    for (uint32_t i = 0; i < s1->n; i++) {
        int64_t j = match_stage_find(s0, s1->players[i].id);
        ck_assert_int_ge(j, 0);
        ck_assert(s0->players[j].state != MATCH_OUT);
        int64_t want = match_carry(s0->players[j].score, s0->cfg.carry_sqrt_permille,
                                   s0->cfg.carry_neg_permille);
        for (size_t k = 0; k < ndeals; k++)
            for (int x = 0; x < 3; x++)
                if (deals[k].stage == 1 && deals[k].player[x] == s1->players[i].id)
                    want += deals[k].res[x] * deals[k].base;
        ck_assert_int_eq(s1->players[i].score, want);
    }

    /* The places and prizes: the pure module's over those stages, paid once. */
    const match_stage_t *stages[2] = {s0, s1};
    match_standing_t sd[NPLAYERS];
    size_t nsd = 0;
    ck_assert_int_eq(match_standings(stages, 2, sd, NPLAYERS, &nsd), 0);
    ck_assert_uint_eq(nsd, NPLAYERS);
    tour_payout_config_t pc = tour_payout_config_default();
    int64_t prizes[NPLAYERS];
    size_t nplaces = 0;
    ck_assert_int_eq(tour_payout_table(&pc, NPLAYERS, 2400, prizes, NPLAYERS, &nplaces), 0);
    match_award_t aw[NPLAYERS];
    ck_assert_int_eq(match_prizes(prizes, nplaces, sd, nsd, aw), 0);
    long long money = rnum("GET {croupier:money}:rake:tournament") +
                      rnum("GET {croupier:money}:tourpool:%" PRIu64, id);
    int64_t paid = 0;
    for (size_t i = 0; i < nsd; i++) {
        json_t *e = entry_of(id, aw[i].player);
        ck_assert_int_eq(json_integer_value(json_object_get(e, "place")), aw[i].place);
        ck_assert_int_eq(json_integer_value(json_object_get(e, "prize")), aw[i].amount);
        json_decref(e);
        ck_assert_int_eq(wallet(aw[i].player), 1000 - 110 + aw[i].amount);
        paid += aw[i].amount;
    }
    for (int i = 0; i < NPLAYERS; i++)
        money += wallet(FIRST_PLAYER + (uint64_t)i);
    ck_assert_int_eq(paid, 2400);
    ck_assert_int_eq(money, NPLAYERS * 1000);
    ck_assert_int_eq(rnum("EXISTS {croupier:money}:tourpool:%" PRIu64, id), 0);
    ck_assert_int_eq(rnum("SISMEMBER {croupier:tours}:live %" PRIu64, id), 0);
    match_stage_destroy(s0);
    match_stage_destroy(s1);
    dir_stop(&d[0]);
    dir_stop(&d[1]);
}
END_TEST

/* The structure parser refuses a match that cannot be played, with one sentence. */
START_TEST(test_match_director_structure_refusals)
{
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{\"format\":\"match\",\"game\":\"poker\",\"buy_in\":1,\"max_entrants\":9,"
         "\"stages\":[{\"format\":\"fixed\",\"seats\":3}]}",
         "game:"},
        {"{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":1,\"max_entrants\":9,"
         "\"stages\":[{\"format\":\"fixed\",\"seats\":4}]}",
         "stages[0].seats"},
        {"{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":1,\"max_entrants\":24,"
         "\"stages\":[{\"format\":\"rising\",\"seats\":3,\"advance\":10},"
         "{\"format\":\"fixed\",\"seats\":3}]}",
         "stages[1]: a fixed stage needs whole tables"},
        {"{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":1,\"max_entrants\":9,"
         "\"stages\":[{\"format\":\"rising\",\"seats\":3,\"advance\":3}]}",
         "never the last"},
        {"{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":1,\"max_entrants\":9,"
         "\"levels\":[],\"stages\":[{\"format\":\"fixed\",\"seats\":3}]}",
         "levels: unknown field"},
        {"{\"format\":\"match\",\"game\":\"guandan\",\"buy_in\":1,\"max_entrants\":8,"
         "\"stages\":[{\"format\":\"swiss\",\"seats\":4,\"advance\":4}]}",
         "stages[0].advance"},
        {"{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":1,\"max_entrants\":9,"
         "\"stages\":[{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":0}]}",
         "stages[0].deals_per_round"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tour_structure_t *s = NULL;
        char err[256] = "";
        ck_assert_int_eq(
            tour_structure_parse(bad[i].json, strlen(bad[i].json), &s, err, sizeof err), -EINVAL);
        ck_assert_msg(strstr(err, bad[i].want) != NULL, "case %zu: %s", i, err);
    }
    tour_structure_t *s = NULL;
    char err[256] = "";
    ck_assert_msg(tour_structure_parse(MATCH24, strlen(MATCH24), &s, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(s->format, TOUR_FORMAT_MATCH);
    ck_assert_uint_eq(s->seats_per_table, 3);
    ck_assert_uint_eq(s->nlevels, 0);
    tour_structure_destroy(s);
}
END_TEST

/* A 3-player Dou Dizhu match of one 定局积分 round: what a hall opens in the test below. */
#define MATCH3                                                                                     \
    "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"                       \
    "\"min_entrants\":3,\"max_entrants\":3,\"stages\":["                                           \
    "{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":1}]}"

/* The match a hall has open (0: none yet). */
static uint64_t hall_open(long long hall)
{
    char *v = rstr("HGET {croupier:tours}:hall:%lld open", hall);
    uint64_t id = v != NULL ? strtoull(v, NULL, 10) : 0;
    free(v);
    return id;
}

static uint64_t wait_hall_open_other(long long hall, uint64_t not, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    uint64_t id;
    while (((id = hall_open(hall)) == 0 || id == not ) && ts_now_ms() < end)
        ts_sleep_ms(20);
    return id != not ? id : 0;
}

/*
 * The schedule of a match hall (docs/tournaments.md "Match halls: the schedule"): the hall (as
 * croupier-ctl tour hall writes it, every 2 s) always has one match open for registration, named
 * after it and numbered, starting at the hall's next period; full, it starts at once and the
 * next opens; nobody registered at its start time, it is cancelled and the next opens. Two
 * directors tick the schedule: each match is opened once.
 */
START_TEST(test_match_director_hall_opens_a_match_every_period)
{
    dir_t d[2];
    long long hall = rnum("INCR {croupier:tours}:hallseq");
    redisReply *tr = redisCommand(R, "TIME");
    long long now = strtoll(tr->element[0]->str, NULL, 10) * 1000 +
                    strtoll(tr->element[1]->str, NULL, 10) / 1000;
    freeReplyObject(tr);
    redisReply *r = redisCommand(R,
                                 "HSET {croupier:tours}:hall:%lld name Evening structure %s "
                                 "every_ms 2000 t0 %lld count 0 open %s stopped 0",
                                 hall, MATCH3, now, "");
    ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    rnum("SADD {croupier:tours}:halls %lld", hall);
    dir_start(&d[0], "dir-a", 1500);
    dir_start(&d[1], "dir-b", 1500);

    uint64_t m1 = wait_hall_open_other(hall, 0, 5000);
    ck_assert_uint_gt(m1, 0);
    char *name = meta_str(m1, "name");
    ck_assert_str_eq(name, "Evening #1");
    free(name);
    char *fmt = meta_str(m1, "format");
    ck_assert_str_eq(fmt, "match");
    free(fmt);
    long long start = meta_int(m1, "start_at_ms");
    ck_assert_int_eq((start - now) % 2000, 0);
    ck_assert_int_ge(start - now, 1000);
    /* Full: it starts at once, and the next match opens. */
    for (int i = 0; i < 3; i++) {
        char player[24], req[32];
        snprintf(player, sizeof player, "%d", 7001 + i);
        snprintf(req, sizeof req, "h%d", i);
        rnum("SET {croupier:money}:wallet:%s 1000", player);
        char *a = ask(m1, "register", req, player, 10);
        ck_assert_msg(a != NULL && strstr(a, "\"code\":\"OK\"") != NULL, "%s", a ? a : "none");
        free(a);
    }
    ck_assert(wait_status(m1, "running", 5000));
    uint64_t m2 = wait_hall_open_other(hall, m1, 5000);
    ck_assert_uint_gt(m2, m1);
    name = meta_str(m2, "name");
    ck_assert_str_eq(name, "Evening #2");
    free(name);
    /* Nobody comes: at its start it is cancelled, and the next opens. */
    ck_assert(wait_status(m2, "cancelled", 8000));
    uint64_t m3 = wait_hall_open_other(hall, m2, 5000);
    ck_assert_uint_gt(m3, m2);
    ck_assert_int_gt(meta_int(m3, "start_at_ms"), meta_int(m2, "start_at_ms"));
    /* Each match opened once: three matches, the hall's count says so. */
    ck_assert_int_eq(rnum("HGET {croupier:tours}:hall:%lld count", hall), 3);
    ck_assert_int_eq(rnum("ZCARD {croupier:tours}:all"), 3);
    dir_stop(&d[0]);
    dir_stop(&d[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("match_director");
    TCase *tc = tcase_create("match_director");
    tcase_set_timeout(tc, 150);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_match_director_rising_then_fixed_to_the_end_through_a_sigkill);
    tcase_add_test(tc, test_match_director_structure_refusals);
    tcase_add_test(tc, test_match_director_hall_opens_a_match_every_period);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
