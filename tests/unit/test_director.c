/*
 * The tournament director (tournament/tour_director.h, docs/tournaments.md "The director") as
 * real croupier-director processes against a real redis-server on loopback: registration and
 * its refusals with the money they move (wallets + prize pool + fees stay the total), an SNG
 * that starts when full, an MTT that starts at its time or is cancelled without a quorum, the
 * cancellation split; a takeover after SIGKILL and after a drain (state intact, every request
 * answered exactly once, the level clock by the rule: it runs only while owned), and an old
 * owner frozen past its claim whose writes the fence refuses.
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "support.h"

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

static void wallet_set(uint64_t player, long long chips)
{
    rnum("SET {croupier:money}:wallet:%" PRIu64 " %lld", player, chips);
}

static long long wallet(uint64_t player)
{
    return rnum("GET {croupier:money}:wallet:%" PRIu64, player);
}

/* Redis's clock in ms (the director's wall clock is the same machine's). */
static long long redis_now_ms(void)
{
    redisReply *r = redisCommand(R, "TIME");
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    long long ms =
        strtoll(r->element[0]->str, NULL, 10) * 1000 + strtoll(r->element[1]->str, NULL, 10) / 1000;
    freeReplyObject(r);
    return ms;
}

/* What croupier-ctl's `tour create` writes (tour_director.h has the keys). */
static uint64_t tour_create(const char *format, const char *structure, long long start_at_ms)
{
    uint64_t id = (uint64_t)rnum("INCR {croupier:tours}:seq");
    long long now = redis_now_ms();
    redisReply *r = redisCommand(
        R,
        "HSET {croupier:tour:%" PRIu64 "}:meta id %" PRIu64 " name test structure %s format %s "
        "status registering created_ms %lld start_at_ms %lld started_ms 0 ended_ms 0 clock_ms 0 "
        "level 0 entries 0 players 0 pool 0 cursor 0-0",
        id, id, structure, format, now, start_at_ms);
    ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    rnum("ZADD {croupier:tours}:all %lld %" PRIu64, now, id);
    rnum("SADD {croupier:tours}:live %" PRIu64, id);
    return id;
}

/* XADDs a request; returns its answer (JSON text, free it) or NULL after timeout_s. */
static char *ask(uint64_t id, const char *op, const char *req, const char *player, int timeout_s)
{
    redisReply *r;
    if (player != NULL)
        r = redisCommand(R, "XADD {croupier:tour:%" PRIu64 "}:in * op %s req %s player %s", id, op,
                         req, player);
    else
        r = redisCommand(R, "XADD {croupier:tour:%" PRIu64 "}:in * op %s req %s reason test", id,
                         op, req);
    ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    if (timeout_s == 0)
        return NULL;
    r = redisCommand(R, "BLPOP {croupier:tour:%" PRIu64 "}:reply:%s %d", id, req, timeout_s);
    ck_assert_ptr_nonnull(r);
    char *v = r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? strdup(r->element[1]->str) : NULL;
    freeReplyObject(r);
    return v;
}

static void ask_expect(uint64_t id, const char *op, const char *req, const char *player,
                       const char *code)
{
    char *a = ask(id, op, req, player, 10);
    ck_assert_msg(a != NULL, "no answer to %s %s", op, req);
    char want[64];
    snprintf(want, sizeof want, "\"code\":\"%s\"", code);
    ck_assert_msg(strstr(a, want) != NULL, "%s %s: %s, wanted %s", op, req, a, code);
    free(a);
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
    char *extra[] = {"--claim-ttl-ms", ttl, "--scan-ms", "100", "--drain-max-seconds", "10", NULL};
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

/* Waits until the tournament's meta field `owner_id` names who (and the claim exists). */
static bool wait_owner(uint64_t id, const char *who, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (ts_now_ms() < end) {
        char *o = meta_str(id, "owner_id");
        bool claimed = rnum("EXISTS {croupier:tour:%" PRIu64 "}:owner", id) == 1;
        bool match = o != NULL && strcmp(o, who) == 0 && claimed;
        free(o);
        if (match)
            return true;
        ts_sleep_ms(20);
    }
    return false;
}

static bool wait_status(uint64_t id, const char *status, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (ts_now_ms() < end) {
        char *s = meta_str(id, "status");
        bool match = s != NULL && strcmp(s, status) == 0;
        free(s);
        if (match)
            return true;
        ts_sleep_ms(20);
    }
    return false;
}

#define SNG3                                                                                       \
    "{\"format\":\"sng\",\"seats_per_table\":3,\"starting_stack\":1500,\"buy_in\":100,"            \
    "\"fee\":10,\"min_entrants\":3,\"max_entrants\":3,\"levels\":[{\"small_blind\":10,"            \
    "\"big_blind\":20,\"duration_ms\":60000},{\"small_blind\":20,\"big_blind\":40,"                \
    "\"duration_ms\":60000}]}"

static long long money_total(const uint64_t *players, size_t n, uint64_t id)
{
    long long sum = rnum("GET {croupier:money}:rake:tournament") +
                    rnum("GET {croupier:money}:tourpool:%" PRIu64, id);
    for (size_t i = 0; i < n; i++)
        sum += wallet(players[i]);
    return sum;
}

START_TEST(test_director_registration_refusals_money_and_sng_start)
{
    dir_t a;
    dir_start(&a, "dir-a", 3000);
    uint64_t players[] = {1, 2, 3, 4, 5};
    wallet_set(1, 1000);
    wallet_set(2, 50);
    wallet_set(3, 1000);
    wallet_set(4, 1000);
    wallet_set(5, 1000);
    long long total = 4050;
    uint64_t id = tour_create("sng", SNG3, 0);
    ck_assert(wait_owner(id, "dir-a", 5000));

    ask_expect(id, "register", "r1", "1", "OK");
    ck_assert_int_eq(wallet(1), 890);
    ask_expect(id, "register", "r1b", "1", "ALREADY_REGISTERED");
    ask_expect(id, "register", "r2", "2", "INSUFFICIENT_FUNDS");
    ck_assert_int_eq(wallet(2), 50);
    ask_expect(id, "unregister", "u3", "3", "NOT_REGISTERED");
    ask_expect(id, "register", "r3", "3", "OK");
    ask_expect(id, "unregister", "u3b", "3", "OK");
    ck_assert_int_eq(wallet(3), 1000);
    ask_expect(id, "register", "bad1", "abc", "BAD_REQUEST");
    ask_expect(id, "frobnicate", "bad2", "1", "BAD_REQUEST");
    /* The same request id again: the first answer, nothing applied twice. */
    ask_expect(id, "register", "r3c", "3", "OK");
    ask_expect(id, "register", "r3c", "3", "OK");
    ck_assert_int_eq(wallet(3), 890);
    ck_assert_int_eq(meta_int(id, "entries"), 2);
    ck_assert_int_eq(money_total(players, 5, id), total);
    char *st = meta_str(id, "status");
    ck_assert_str_eq(st, "registering");
    free(st);

    /* The third fills the SNG: it starts. */
    ask_expect(id, "register", "r4", "4", "OK");
    ck_assert(wait_status(id, "running", 5000));
    ck_assert_int_gt(meta_int(id, "started_ms"), 0);
    ask_expect(id, "register", "r5", "5", "REGISTRATION_CLOSED");
    ask_expect(id, "unregister", "u4", "4", "REGISTRATION_CLOSED");
    ck_assert_int_eq(meta_int(id, "pool"), 300);
    ck_assert_int_eq(rnum("GET {croupier:money}:tourpool:%" PRIu64, id), 300);
    ck_assert_int_eq(rnum("GET {croupier:money}:rake:tournament"), 30);
    ck_assert_int_eq(money_total(players, 5, id), total);
    char *e = rstr("HGET {croupier:tour:%" PRIu64 "}:entries 4", id);
    ck_assert_ptr_nonnull(strstr(e, "\"state\":\"playing\""));
    ck_assert_ptr_nonnull(strstr(e, "\"stack\":1500"));
    free(e);

    /* Cancelled after the start, before the money (3 left, 1 place paid): each gets his buy-in
     * back and the rest (none) is split; the fees stay the house's. */
    ask_expect(id, "cancel", "c1", NULL, "OK");
    ck_assert(wait_status(id, "cancelled", 2000));
    ck_assert_int_eq(wallet(1), 990);
    ck_assert_int_eq(wallet(3), 990);
    ck_assert_int_eq(wallet(4), 990);
    ck_assert_int_eq(rnum("EXISTS {croupier:money}:tourpool:%" PRIu64, id), 0);
    ck_assert_int_eq(money_total(players, 5, id), total);
    ck_assert_int_eq(rnum("SISMEMBER {croupier:tours}:live %" PRIu64, id), 0);
    /* Over: nobody owns it any more (the asker answers TOURNAMENT_OVER from the status). */
    ts_sleep_ms(300);
    ck_assert_int_eq(rnum("EXISTS {croupier:tour:%" PRIu64 "}:owner", id), 0);
    dir_stop(&a);
}
END_TEST

#define MTT(start_min, late)                                                                       \
    "{\"format\":\"mtt\",\"seats_per_table\":9,\"starting_stack\":5000,\"buy_in\":50,"             \
    "\"fee\":5,\"min_entrants\":" start_min ",\"max_entrants\":1000,\"guarantee\":1000,"           \
    "\"late_registration_levels\":" late ",\"reentry\":true,\"max_reentries\":1,"                  \
    "\"levels\":[{\"small_blind\":25,\"big_blind\":50,\"duration_ms\":1500},"                      \
    "{\"small_blind\":50,\"big_blind\":100,\"duration_ms\":60000}]}"

START_TEST(test_director_mtt_starts_at_its_time_or_is_cancelled_without_quorum)
{
    dir_t a;
    dir_start(&a, "dir-a", 3000);
    uint64_t players[] = {11, 12, 13};
    for (int i = 0; i < 3; i++)
        wallet_set(players[i], 500);
    long long now = redis_now_ms();
    /* Two registered, three needed: cancelled at its time, everything refunded, fees too. */
    uint64_t lone = tour_create("mtt", MTT("3", "1"), now + 1500);
    /* Quorum 2: starts at its time with an overlay up to the guarantee of 1000. */
    uint64_t full = tour_create("mtt", MTT("2", "1"), now + 1500);
    ask_expect(lone, "register", "l11", "11", "OK");
    ask_expect(lone, "register", "l12", "12", "OK");
    ask_expect(full, "register", "f11", "11", "OK");
    ask_expect(full, "register", "f12", "12", "OK");
    ck_assert_int_eq(wallet(11), 390);
    ck_assert(wait_status(lone, "cancelled", 6000));
    char *why = meta_str(lone, "cancel_reason");
    ck_assert_str_eq(why, "no quorum");
    free(why);
    ck_assert(wait_status(full, "running", 6000));
    ck_assert_int_eq(wallet(11), 445);
    ck_assert_int_eq(wallet(12), 445);
    ck_assert_int_eq(meta_int(full, "pool"), 1000);
    ck_assert_int_eq(meta_int(full, "overlay"), 900);
    ck_assert_int_eq(rnum("GET {croupier:money}:tourpool:%" PRIu64, full), 1000);
    /* wallets + pools + the house (fees - overlay) = what was seeded */
    ck_assert_int_eq(wallet(11) + wallet(12) + wallet(13) +
                         rnum("GET {croupier:money}:tourpool:%" PRIu64, full) +
                         rnum("GET {croupier:money}:rake:tournament"),
                     1500);
    /* Late registration open through level 1 (1.5 s of play); re-entry only once out. */
    ask_expect(full, "register", "f13", "13", "OK");
    ask_expect(full, "register", "f13b", "13", "ALREADY_REGISTERED");
    char *e = rstr("HGET {croupier:tour:%" PRIu64 "}:entries 13", full);
    ck_assert_ptr_nonnull(strstr(e, "\"state\":\"waiting\""));
    free(e);
    /* The level changes at 1.5 s of the clock; registration closes with it. */
    long long end = ts_now_ms() + 5000;
    while (meta_int(full, "level") != 1 && ts_now_ms() < end)
        ts_sleep_ms(50);
    ck_assert_int_eq(meta_int(full, "level"), 1);
    wallet_set(13, 500);
    ask_expect(full, "unregister", "f13u", "13", "REGISTRATION_CLOSED");
    dir_stop(&a);
    (void)players;
}
END_TEST

#define SNG2                                                                                       \
    "{\"format\":\"sng\",\"seats_per_table\":2,\"starting_stack\":1000,\"buy_in\":10,"             \
    "\"min_entrants\":2,\"max_entrants\":2,\"levels\":[{\"small_blind\":10,\"big_blind\":20,"      \
    "\"duration_ms\":600000}]}"

/* A running SNG owned by one of two directors; returns the owner's index. */
static int running_sng(dir_t *dirs, uint64_t *out)
{
    wallet_set(21, 100);
    wallet_set(22, 100);
    uint64_t id = tour_create("sng", SNG2, 0);
    ask_expect(id, "register", "s21", "21", "OK");
    ask_expect(id, "register", "s22", "22", "OK");
    ck_assert(wait_status(id, "running", 5000));
    char *o = meta_str(id, "owner_id");
    int who = strcmp(o, dirs[0].name) == 0 ? 0 : 1;
    ck_assert_str_eq(o, dirs[who].name);
    free(o);
    *out = id;
    return who;
}

START_TEST(test_director_sigkill_takeover_keeps_state_and_the_clock_rule)
{
    dir_t d[2];
    dir_start(&d[0], "dir-a", 600);
    dir_start(&d[1], "dir-b", 600);
    uint64_t id;
    int who = running_sng(d, &id);
    long long epoch = rnum("GET {croupier:tour:%" PRIu64 "}:epoch", id);
    ts_sleep_ms(1500);
    long long before = meta_int(id, "clock_ms"); /* written at the last renew (every 200 ms) */
    ck_assert_int_ge(before, 1000);
    long long t_kill = ts_now_ms();
    dir_stop(&d[who]);
    /* Asked while nobody owns it: answered by the next owner. */
    ask(id, "register", "k1", "23", 0);
    ck_assert(wait_owner(id, d[1 - who].name, 5000));
    long long t_claim = ts_now_ms();
    ck_assert_int_eq(rnum("GET {croupier:tour:%" PRIu64 "}:epoch", id), epoch + 1);
    char *a = rstr("BLPOP {croupier:tour:%" PRIu64 "}:reply:k1 5", id);
    (void)a;
    redisReply *r = redisCommand(R, "GET {croupier:tour:%" PRIu64 "}:req:k1", id);
    ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
    ck_assert_ptr_nonnull(strstr(r->str, "REGISTRATION_CLOSED"));
    freeReplyObject(r);
    ts_sleep_ms(1000);
    long long after = meta_int(id, "clock_ms");
    long long t_read = ts_now_ms();
    /* The rule: the clock never goes back, and the time nobody owned it (at least the claim's
     * 600 ms TTL between the kill and the takeover) is not counted. */
    ck_assert_int_ge(after, before);
    ck_assert_msg(after - before <= (t_read - t_kill) - 400,
                  "clock %lld -> %lld over %lld ms, claimed after %lld ms", before, after,
                  t_read - t_kill, t_claim - t_kill);
    ck_assert_int_ge(after - before, (t_read - t_claim) - 450);
    ck_assert_int_eq(meta_int(id, "entries"), 2);
    ck_assert_int_eq(meta_int(id, "pool"), 20);
    dir_stop(&d[1 - who]);
}
END_TEST

START_TEST(test_director_drain_hands_over_every_request_answered_once)
{
    dir_t d[2];
    dir_start(&d[0], "dir-a", 3000);
    dir_start(&d[1], "dir-b", 3000);
    uint64_t id = tour_create("mtt", MTT("2", "1"), redis_now_ms() + 600000);
    char *o = NULL;
    for (int i = 0; i < 250 && o == NULL; i++) {
        o = meta_str(id, "owner_id");
        if (o == NULL)
            ts_sleep_ms(20);
    }
    ck_assert_ptr_nonnull(o);
    int who = strcmp(o, "dir-a") == 0 ? 0 : 1;
    free(o);
    for (int p = 100; p < 160; p++)
        wallet_set((uint64_t)p, 1000);
    /* 60 registrations while the owner drains (SIGTERM: a graceful exit) and the other takes
     * over: every one answered exactly once, every one applied once. */
    char req[32], pl[32];
    for (int p = 100; p < 130; p++) {
        snprintf(req, sizeof req, "d%d", p);
        snprintf(pl, sizeof pl, "%d", p);
        ask(id, "register", req, pl, 0);
    }
    ts_proc_signal(d[who].p, SIGTERM);
    for (int p = 130; p < 160; p++) {
        snprintf(req, sizeof req, "d%d", p);
        snprintf(pl, sizeof pl, "%d", p);
        ask(id, "register", req, pl, 0);
        ts_sleep_ms(5);
    }
    int status = -1;
    if (ts_proc_wait(d[who].p, 15000, &status) != 0) {
        char *log = ts_proc_log(d[who].p);
        size_t n = log != NULL ? strlen(log) : 0;
        ck_abort_msg("the draining director did not exit; its log ends:\n%s",
                     log != NULL ? log + (n > 4000 ? n - 4000 : 0) : "(none)");
    }
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(ts_proc_log_has(d[who].p, "exit reason=drained"));
    ck_assert(ts_proc_log_has(d[who].p, "\"why\":\"released\""));
    ts_proc_free(d[who].p);
    d[who].p = NULL;
    ck_assert(wait_owner(id, d[1 - who].name, 5000));
    for (int p = 100; p < 160; p++) {
        snprintf(req, sizeof req, "d%d", p);
        char *ans = rstr("BLPOP {croupier:tour:%" PRIu64 "}:reply:%s 10", id, req);
        (void)ans;
        ck_assert_int_eq(rnum("LLEN {croupier:tour:%" PRIu64 "}:reply:%s", id, req), 0);
        ck_assert_int_eq(wallet((uint64_t)p), 945);
    }
    /* Each answer was pushed once: the lists are empty after one pop each. */
    ck_assert_int_eq(meta_int(id, "entries"), 60);
    ck_assert_int_eq(rnum("HLEN {croupier:tour:%" PRIu64 "}:entries", id), 60);
    ck_assert_int_eq(rnum("GET {croupier:money}:tourpool:%" PRIu64, id), 3000);
    dir_stop(&d[1 - who]);
}
END_TEST

START_TEST(test_director_frozen_old_owner_is_fenced_out)
{
    dir_t d[2];
    dir_start(&d[0], "dir-a", 600);
    dir_start(&d[1], "dir-b", 600);
    uint64_t id;
    int who = running_sng(d, &id);
    ts_proc_signal(d[who].p, SIGSTOP);
    ck_assert(wait_owner(id, d[1 - who].name, 5000));
    long long epoch = rnum("GET {croupier:tour:%" PRIu64 "}:epoch", id);
    ask_expect(id, "register", "f1", "24", "REGISTRATION_CLOSED");
    ts_proc_signal(d[who].p, SIGCONT);
    /* The old owner's next renew finds the fence moved: it lets the tournament go. */
    ck_assert_int_eq(ts_proc_wait_log(d[who].p, "\"tour_dropped\"", 5000), 0);
    ck_assert(ts_proc_log_has(d[who].p, "\"why\":\"lost\"") ||
              ts_proc_log_has(d[who].p, "\"why\":\"stale\""));
    ts_sleep_ms(500);
    ck_assert_int_eq(rnum("GET {croupier:tour:%" PRIu64 "}:epoch", id), epoch);
    char *o = meta_str(id, "owner_id");
    ck_assert_str_eq(o, d[1 - who].name);
    free(o);
    dir_stop(&d[0]);
    dir_stop(&d[1]);
}
END_TEST

/* ---- tables and hands (docs/tournaments.md "Tables and hands") ---------------------------- */

/* Registers players base+1 .. base+n (request ids <prefix><k>), each answered OK. */
static void register_all(uint64_t id, const char *prefix, int base, int n)
{
    char req[32], pl[32];
    for (int p = 1; p <= n; p++) {
        snprintf(req, sizeof req, "%s%d", prefix, p);
        snprintf(pl, sizeof pl, "%d", base + p);
        ask_expect(id, "register", req, pl, "OK");
    }
}

/* Asks a table request and returns the answer parsed (decref it). */
/* The host the test's tables speak as (docs/tournaments.md "Tables at the servers"). */
static const char *g_host = "host-a";

static json_t *ask_table(uint64_t id, const char *op, uint32_t table, uint64_t hand,
                         const char *result)
{
    static unsigned long long seq;
    char req[48];
    snprintf(req, sizeof req, "t%u-h%llu-%s-%llu", table, (unsigned long long)hand, op, ++seq);
    redisReply *r;
    if (result != NULL)
        r = redisCommand(R,
                         "XADD {croupier:tour:%" PRIu64 "}:in * op %s req %s table %u hand %llu "
                         "host %s result %s",
                         id, op, req, table, (unsigned long long)hand, g_host, result);
    else
        r = redisCommand(R,
                         "XADD {croupier:tour:%" PRIu64 "}:in * op %s req %s table %u hand %llu "
                         "host %s",
                         id, op, req, table, (unsigned long long)hand, g_host);
    ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    r = redisCommand(R, "BLPOP {croupier:tour:%" PRIu64 "}:reply:%s 10", id, req);
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "no answer to %s", req);
    json_t *a = json_loads(r->element[1]->str, 0, NULL);
    ck_assert_msg(a != NULL, "bad answer %s", r->element[1]->str);
    freeReplyObject(r);
    return a;
}

static const char *code_of(json_t *a)
{
    return json_string_value(json_object_get(a, "code"));
}

/* Open tables and their player counts (from the tables hash). */
static int table_counts(uint64_t id, uint32_t *ids, int *counts, int cap)
{
    redisReply *r = redisCommand(R, "HGETALL {croupier:tour:%" PRIu64 "}:tables", id);
    ck_assert(r != NULL && r->type == REDIS_REPLY_ARRAY);
    int n = 0;
    for (size_t i = 0; i + 1 < r->elements && n < cap; i += 2) {
        json_t *t = json_loads(r->element[i + 1]->str, 0, NULL);
        if (!json_is_true(json_object_get(t, "closed"))) {
            ids[n] = (uint32_t)json_integer_value(json_object_get(t, "id"));
            int c = 0;
            json_t *pl = json_object_get(t, "players");
            for (size_t k = 0; k < json_array_size(pl); k++)
                c += json_integer_value(json_array_get(pl, k)) != 0;
            counts[n++] = c;
        }
        json_decref(t);
    }
    freeReplyObject(r);
    return n;
}

/*
 * Plays one hand at a table through the protocol, moving chips as a hand would: often two
 * players all in (the shorter stack busts when it loses), otherwise everyone puts in up to the
 * big blind and one takes it. Returns 0 played, 1 the table waits, 2 it is closed, 3 finished.
 */
static int play_hand(uint64_t id, uint32_t table, uint64_t *hands, unsigned *rs, int *prev_bb,
                     int *prev_dealt)
{
    json_t *d = ask_table(id, "deal", table, hands[table] + 1, NULL);
    const char *code = code_of(d);
    if (strcmp(code, "WAIT") == 0 || strcmp(code, "TABLE_CLOSED") == 0 ||
        strcmp(code, "TOURNAMENT_OVER") == 0) {
        int rc = strcmp(code, "WAIT") == 0 ? 1 : strcmp(code, "TABLE_CLOSED") == 0 ? 2 : 3;
        json_decref(d);
        return rc;
    }
    ck_assert_msg(strcmp(code, "OK") == 0, "deal refused: %s", json_dumps(d, 0));
    hands[table]++;
    json_t *seats = json_object_get(d, "seats");
    uint64_t pl[10];
    long long st[10];
    int n = 0;
    for (size_t i = 0; i < json_array_size(seats); i++) {
        json_t *x = json_array_get(seats, i);
        if (!json_is_true(json_object_get(x, "dealt")))
            continue;
        pl[n] = (uint64_t)json_integer_value(json_object_get(x, "player"));
        st[n++] = json_integer_value(json_object_get(x, "stack"));
    }
    ck_assert_int_ge(n, 2);
    int bb = (int)json_integer_value(json_object_get(d, "bb"));
    int sb = (int)json_integer_value(json_object_get(d, "sb"));
    /* Big blind forward: with three or more dealt in at both hands, the small blind's seat is
     * the last big blind's (dead when he left). */
    if (prev_bb[table] >= 0 && n >= 3 && prev_dealt[table] >= 3)
        ck_assert_int_eq(sb, prev_bb[table]);
    prev_bb[table] = bb;
    prev_dealt[table] = n;
    long long big = json_integer_value(json_object_get(d, "big_blind"));
    if (rand_r(rs) % 2 == 0) {
        int a = (int)(rand_r(rs) % (unsigned)n), b = (int)(rand_r(rs) % (unsigned)(n - 1));
        if (b >= a)
            b++;
        long long at = st[a] < st[b] ? st[a] : st[b];
        st[a] += at; /* a wins */
        st[b] -= at;
    } else {
        long long pot = 0;
        for (int i = 0; i < n; i++) {
            long long put = st[i] < big ? st[i] : big;
            st[i] -= put;
            pot += put;
        }
        st[rand_r(rs) % (unsigned)n] += pot;
    }
    char result[512];
    size_t off = 0;
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(result + off, sizeof result - off, "%s%" PRIu64 ":%lld",
                                i ? "," : "", pl[i], st[i]);
    json_decref(d);
    json_t *h = ask_table(id, "hand", table, hands[table], result);
    ck_assert_msg(strcmp(code_of(h), "OK") == 0, "hand refused: %s", json_dumps(h, 0));
    bool finished = json_is_true(json_object_get(h, "finished"));
    json_decref(h);
    return finished ? 3 : 0;
}

#define MTT20                                                                                      \
    "{\"format\":\"mtt\",\"seats_per_table\":6,\"starting_stack\":1000,\"buy_in\":100,"            \
    "\"fee\":10,\"min_entrants\":2,\"max_entrants\":100,\"levels\":[{\"small_blind\":10,"          \
    "\"big_blind\":20,\"duration_ms\":600000}]}"

START_TEST(test_director_mtt_plays_to_one_winner_through_a_takeover)
{
    dir_t d[2];
    dir_start(&d[0], "dir-a", 600);
    dir_start(&d[1], "dir-b", 600);
    enum { N = 20 };
    for (int p = 1; p <= N; p++)
        wallet_set((uint64_t)(300 + p), 1000);
    uint64_t id = tour_create("mtt", MTT20, redis_now_ms() + 800);
    register_all(id, "m", 300, N);
    ck_assert(wait_status(id, "running", 5000));
    /* The draw: 4 tables of 5. */
    uint32_t ids[16];
    int counts[16];
    int nt = 0;
    for (int i = 0; i < 100 && nt == 0; i++) {
        nt = table_counts(id, ids, counts, 16);
        if (nt == 0)
            ts_sleep_ms(50);
    }
    ck_assert_int_eq(nt, 4);
    for (int i = 0; i < nt; i++)
        ck_assert_int_eq(counts[i], 5);

    /* A hand whose chips do not add up is refused and changes nothing. */
    json_t *dd = ask_table(id, "deal", ids[0], 1, NULL);
    ck_assert_str_eq(code_of(dd), "OK");
    json_t *x = json_array_get(json_object_get(dd, "seats"), 0);
    char bad[64];
    snprintf(bad, sizeof bad, "%lld:%lld",
             (long long)json_integer_value(json_object_get(x, "player")),
             (long long)json_integer_value(json_object_get(x, "stack")) + 1);
    json_t *hb = ask_table(id, "hand", ids[0], 1, bad);
    ck_assert_str_eq(code_of(hb), "BAD_REQUEST");
    json_decref(hb);
    /* A deal of the hand in play is a re-deal (its host voided it, or another host took the
     * table): the same positions, seats and stacks, dealt to the new host; the old host's
     * result is then refused, nothing changed. */
    g_host = "host-b";
    json_t *again = ask_table(id, "deal", ids[0], 1, NULL);
    ck_assert_str_eq(code_of(again), "OK");
    for (const char *k = "button"; k != NULL; k = strcmp(k, "button") == 0 ? "sb"
                                                  : strcmp(k, "sb") == 0   ? "bb"
                                                                           : NULL)
        ck_assert_int_eq(json_integer_value(json_object_get(again, k)),
                         json_integer_value(json_object_get(dd, k)));
    ck_assert(json_equal(json_object_get(again, "seats"), json_object_get(dd, "seats")));
    json_decref(again);
    json_decref(dd);
    g_host = "host-a";
    json_t *old = ask_table(id, "hand", ids[0], 1, bad);
    ck_assert_str_eq(code_of(old), "NOT_HOST");
    json_decref(old);
    g_host = "host-b";

    uint64_t hands[64] = {0};
    int prev_bb[64], prev_dealt[64];
    for (int i = 0; i < 64; i++)
        prev_bb[i] = -1, prev_dealt[i] = 0;
    /* Table 1's hand 1 is dealt: finish it with the chips it had. */
    hands[ids[0]] = 1;
    {
        json_t *dl = NULL;
        (void)dl;
        redisReply *r = redisCommand(R, "HGET {croupier:tour:%" PRIu64 "}:tables %u", id, ids[0]);
        json_t *t = json_loads(r->str, 0, NULL);
        freeReplyObject(r);
        char res[512];
        size_t off = 0;
        json_t *players = json_object_get(t, "players"), *start = json_object_get(t, "start");
        for (size_t k = 0; k < json_array_size(players); k++)
            if (json_integer_value(json_array_get(players, k)) != 0)
                off += (size_t)snprintf(res + off, sizeof res - off, "%s%lld:%lld", off ? "," : "",
                                        (long long)json_integer_value(json_array_get(players, k)),
                                        (long long)json_integer_value(json_array_get(start, k)));
        json_decref(t);
        json_t *h = ask_table(id, "hand", ids[0], 1, res);
        ck_assert_str_eq(code_of(h), "OK");
        json_decref(h);
    }
    unsigned rs = 12345;
    int total_hands = 0, killed = 0;
    bool finished = false, final_table_seen = false;
    while (!finished && total_hands < 5000) {
        nt = table_counts(id, ids, counts, 16);
        ck_assert_int_gt(nt, 0);
        /* Balanced at every hand: every table is between hands here. */
        int lo = 100, hi = 0, left = 0;
        for (int i = 0; i < nt; i++) {
            lo = counts[i] < lo ? counts[i] : lo;
            hi = counts[i] > hi ? counts[i] : hi;
            left += counts[i];
        }
        if (nt > 1)
            ck_assert_msg(hi - lo <= 1, "tables %d..%d players apart", lo, hi);
        if (left <= 6)
            ck_assert_int_eq(nt, 1); /* the final table */
        final_table_seen = final_table_seen || (nt == 1 && left > 1);
        for (int i = 0; i < nt && !finished; i++) {
            int rc = play_hand(id, ids[i], hands, &rs, prev_bb, prev_dealt);
            total_hands += rc == 0 || rc == 3;
            finished = rc == 3;
        }
        if (!killed && total_hands >= 15) {
            /* The owner dies mid-tournament: the other one takes the model over from Redis. */
            char *o = meta_str(id, "owner_id");
            int who = strcmp(o, d[0].name) == 0 ? 0 : 1;
            free(o);
            dir_stop(&d[who]);
            killed = 1;
        }
    }
    ck_assert(finished);
    ck_assert(final_table_seen);
    ck_assert(wait_status(id, "finished", 3000));
    /* One winner; every entrant a place; the pool paid exactly. */
    redisReply *r = redisCommand(R, "HGETALL {croupier:tour:%" PRIu64 "}:entries", id);
    ck_assert_int_eq((int)r->elements, 2 * N);
    int winners = 0;
    long long prizes = 0;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        json_t *e = json_loads(r->element[i + 1]->str, 0, NULL);
        const char *state = json_string_value(json_object_get(e, "state"));
        int place = (int)json_integer_value(json_object_get(e, "place"));
        ck_assert_msg(place >= 1 && place <= N, "place %d", place);
        winners += strcmp(state, "won") == 0;
        if (strcmp(state, "won") == 0)
            ck_assert_int_eq(place, 1);
        else
            ck_assert_str_eq(state, "out");
        prizes += json_integer_value(json_object_get(e, "prize"));
        json_decref(e);
    }
    freeReplyObject(r);
    ck_assert_int_eq(winners, 1);
    ck_assert_int_eq(prizes, 100 * N);
    ck_assert_int_eq(rnum("EXISTS {croupier:money}:tourpool:%" PRIu64, id), 0);
    long long wallets = 0;
    for (int p = 1; p <= N; p++)
        wallets += wallet((uint64_t)(300 + p));
    ck_assert_int_eq(wallets + rnum("GET {croupier:money}:rake:tournament"), 1000LL * N);
    ck_assert_int_eq(rnum("SISMEMBER {croupier:tours}:live %" PRIu64, id), 0);
    /* The log tells the story: N - 1 players out, tables broken down to one, one winner. */
    int outs = 0, breaks = 0, balances = 0, finishes = 0;
    r = redisCommand(R, "XRANGE {croupier:tour:%" PRIu64 "}:log - +", id);
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *f = r->element[i]->element[1];
        const char *ev = f->element[1]->str;
        const char *data = f->elements >= 4 ? f->element[3]->str : "";
        outs += strcmp(ev, "out") == 0;
        finishes += strcmp(ev, "finished") == 0;
        breaks += strcmp(ev, "move") == 0 && strstr(data, "break") != NULL;
        balances += strcmp(ev, "move") == 0 && strstr(data, "balance") != NULL;
    }
    freeReplyObject(r);
    ck_assert_int_eq(outs, N - 1);
    ck_assert_int_eq(finishes, 1);
    ck_assert_int_ge(breaks, 1);
    fprintf(stderr, "# MTT of %d: %d hands, %d moved by a break, %d to balance\n", N, total_hands,
            breaks, balances);
    for (int i = 0; i < 2; i++)
        dir_stop(&d[i]);
}
END_TEST

#define MTT24H4H                                                                                   \
    "{\"format\":\"mtt\",\"seats_per_table\":6,\"starting_stack\":1000,\"buy_in\":100,"            \
    "\"min_entrants\":2,\"max_entrants\":100,\"hand_for_hand_margin\":16,"                         \
    "\"levels\":[{\"small_blind\":10,\"big_blind\":20,\"duration_ms\":600000}]}"

/* Hand-for-hand from 19 players left (3 paid + 16) on four tables: each round every table deals
 * one hand, a table that finished waits (WAIT) until the others did, the busts of a round are
 * placed together, and the level clock stands still until the bubble is near no more. */
START_TEST(test_director_hand_for_hand_across_tables)
{
    dir_t d;
    dir_start(&d, "dir-a", 3000);
    enum { N = 24 };
    for (int p = 1; p <= N; p++)
        wallet_set((uint64_t)(500 + p), 1000);
    uint64_t id = tour_create("mtt", MTT24H4H, redis_now_ms() + 800);
    register_all(id, "h", 500, N);
    ck_assert(wait_status(id, "running", 5000));
    /* The draw is a step of its own after the start: wait for the tables. */
    for (int i = 0; i < 100; i++) {
        uint32_t ids0[16];
        int counts0[16];
        if (table_counts(id, ids0, counts0, 16) > 0)
            break;
        ts_sleep_ms(50);
    }
    uint64_t hands[64] = {0};
    unsigned rs = 777;
    int waits = 0, rounds_seen = 0, guard = 0;
    long long clock_at_h4h = -1;
    bool finished = false;
    while (!finished && guard++ < 3000) {
        uint32_t ids[16];
        int counts[16];
        int nt = table_counts(id, ids, counts, 16);
        ck_assert_int_gt(nt, 0);
        /* Every open table asks to deal; then the hands end one by one. */
        json_t *deals[16] = {0};
        for (int i = 0; i < nt; i++) {
            json_t *a = ask_table(id, "deal", ids[i], hands[ids[i]] + 1, NULL);
            if (strcmp(code_of(a), "OK") == 0) {
                hands[ids[i]]++;
                deals[i] = a;
            } else {
                json_decref(a);
            }
        }
        bool h4h = meta_int(id, "h4h_on") == 1;
        if (h4h && clock_at_h4h < 0)
            clock_at_h4h = meta_int(id, "clock_ms");
        int dealt_tables = 0;
        for (int i = 0; i < nt; i++)
            dealt_tables += deals[i] != NULL;
        for (int i = 0; i < nt && !finished; i++) {
            if (deals[i] == NULL)
                continue;
            json_t *seats = json_object_get(deals[i], "seats");
            uint64_t pls[10];
            long long st[10];
            int n = 0;
            for (size_t k = 0; k < json_array_size(seats); k++) {
                json_t *x = json_array_get(seats, k);
                if (json_is_true(json_object_get(x, "dealt"))) {
                    pls[n] = (uint64_t)json_integer_value(json_object_get(x, "player"));
                    st[n++] = json_integer_value(json_object_get(x, "stack"));
                }
            }
            /* two all in, the shorter stack busts when it loses */
            int a = (int)(rand_r(&rs) % (unsigned)n), b = (int)(rand_r(&rs) % (unsigned)(n - 1));
            if (b >= a)
                b++;
            long long at = st[a] < st[b] ? st[a] : st[b];
            st[a] += at;
            st[b] -= at;
            char result[512];
            size_t off = 0;
            for (int k = 0; k < n; k++)
                off += (size_t)snprintf(result + off, sizeof result - off, "%s%" PRIu64 ":%lld",
                                        k ? "," : "", pls[k], st[k]);
            json_t *h = ask_table(id, "hand", ids[i], hands[ids[i]], result);
            ck_assert_msg(strcmp(code_of(h), "OK") == 0, "hand refused: %s", json_dumps(h, 0));
            finished = json_is_true(json_object_get(h, "finished"));
            json_decref(h);
            if (h4h && !finished && dealt_tables >= 2 && i == 0) {
                /* The first table done asks again while others still play the round: WAIT. */
                json_t *w = ask_table(id, "deal", ids[i], hands[ids[i]] + 1, NULL);
                ck_assert_str_eq(code_of(w), "WAIT");
                json_decref(w);
                waits++;
            }
        }
        for (int i = 0; i < nt; i++)
            json_decref(deals[i]);
        if (h4h) {
            rounds_seen++;
            /* The clock stands still during hand-for-hand. */
            ck_assert_int_eq(meta_int(id, "clock_ms"), clock_at_h4h);
        }
    }
    ck_assert(finished);
    ck_assert_int_ge(waits, 1);
    ck_assert_int_ge(rounds_seen, 2);
    /* Every place given once per player; the pool paid exactly. */
    redisReply *r = redisCommand(R, "HGETALL {croupier:tour:%" PRIu64 "}:entries", id);
    long long prizes = 0;
    int winners = 0;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        json_t *e = json_loads(r->element[i + 1]->str, 0, NULL);
        int place = (int)json_integer_value(json_object_get(e, "place"));
        ck_assert(place >= 1 && place <= N);
        winners += place == 1;
        prizes += json_integer_value(json_object_get(e, "prize"));
        json_decref(e);
    }
    freeReplyObject(r);
    ck_assert_int_eq(winners, 1);
    ck_assert_int_eq(prizes, 100 * N);
    fprintf(stderr, "# hand-for-hand: %d rounds, %d waits\n", rounds_seen, waits);
    dir_stop(&d);
}
END_TEST

START_TEST(test_director_bad_flags_exit_2)
{
    char *argv[] = {(char *)ts_build_path("tournament/croupier-director"), "--claim-ttl-ms", "5",
                    NULL};
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    int status = -1;
    ck_assert_int_eq(ts_proc_wait(p, 5000, &status), 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2);
    ts_proc_free(p);
}
END_TEST

/* --redis-min-replicas (tour_director.h "Durability"): an answer is given only once a replica
 * holds the step; with the replica stopped nothing is answered (the step may be lost in a
 * failover), and the same request asked again once it is back gets the one answer, applied
 * once. */
START_TEST(test_director_answers_only_what_a_replica_holds)
{
    ts_redis_t *replica = ts_redis_start_replica(ts_redis_port(redis));
    ck_assert_ptr_nonnull(replica);
    ck_assert_int_eq(ts_redis_wait_synced(replica, 10000), 0);
    dir_t d;
    memset(&d, 0, sizeof d);
    d.health = ts_free_port();
    char health[64];
    snprintf(health, sizeof health, "127.0.0.1:%d", d.health);
    char *argv[] = {(char *)ts_build_path("tournament/croupier-director"),
                    "--redis",
                    (char *)ts_redis_addr(redis),
                    "--health-listen",
                    health,
                    "--director-id",
                    "dir-durable",
                    "--scan-ms",
                    "100",
                    "--redis-min-replicas",
                    "1",
                    "--redis-wait-ms",
                    "100",
                    NULL};
    d.p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(d.p);
    ck_assert(ts_http_wait_status("127.0.0.1", d.health, "/readyz", 200, 10000) == 0);
    wallet_set(801, 1000);
    wallet_set(802, 1000);
    uint64_t id = tour_create("sng", SNG3, 0);
    ask_expect(id, "register", "dr1", "801", "OK"); /* the replica acknowledged it */
    /* The replica stops: the registration is applied on the master but not answered. */
    ts_redis_pause(replica);
    char *a = ask(id, "register", "dr2", "802", 3);
    ck_assert_msg(a == NULL, "answered without a replica: %s", a);
    ck_assert_int_eq(ts_proc_wait_log(d.p, "\"tour_not_durable\"", 10000), 0);
    ts_redis_resume(replica);
    ck_assert_int_eq(ts_redis_wait_synced(replica, 10000), 0);
    /* Asked again (same request id): the one answer, the registration applied once. */
    char *b = NULL;
    for (int i = 0; i < 20 && b == NULL; i++)
        b = ask(id, "register", "dr2", "802", 2);
    ck_assert_msg(b != NULL && strstr(b, "\"code\":\"OK\"") != NULL, "%s", b ? b : "no answer");
    free(b);
    ck_assert_int_eq(meta_int(id, "entries"), 2);
    ck_assert_int_eq(wallet(802), 1000 - 110);
    dir_stop(&d);
    ts_redis_stop(replica);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("director");
    TCase *tc = tcase_create("director");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_director_registration_refusals_money_and_sng_start);
    tcase_add_test(tc, test_director_mtt_starts_at_its_time_or_is_cancelled_without_quorum);
    tcase_add_test(tc, test_director_sigkill_takeover_keeps_state_and_the_clock_rule);
    tcase_add_test(tc, test_director_drain_hands_over_every_request_answered_once);
    tcase_add_test(tc, test_director_frozen_old_owner_is_fenced_out);
    tcase_add_test(tc, test_director_mtt_plays_to_one_winner_through_a_takeover);
    tcase_add_test(tc, test_director_hand_for_hand_across_tables);
    tcase_add_test(tc, test_director_bad_flags_exit_2);
    tcase_add_test(tc, test_director_answers_only_what_a_replica_holds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
