/* money_writer against a real redis-server: volume, flush, Redis down, SIGTERM, fencing. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../integration/money_gen.h"
#include "money_writer.h"
#include "support.h"

static ts_redis_t *redis;

static void setup(void)
{
    redis = ts_redis_start();
    ck_assert_ptr_nonnull(redis);
    char key[128];
    money_key_epoch("game", 1, key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s 3", key));
    for (int p = 0; p < MONEY_GEN_PLAYERS; p++) {
        money_key_wallet(money_gen_names[p], key, sizeof key);
        free(ts_redis_cmd(redis, "SET %s %lld", key, MONEY_GEN_START));
    }
}

static void teardown(void)
{
    ts_redis_resume(redis);
    ts_redis_stop(redis);
}

static money_writer_t *writer(metrics_registry_t *reg, size_t watermark, int request_timeout_ms)
{
    money_writer_config_t cfg = {.redis_host = "127.0.0.1",
                                 .redis_port = ts_redis_port(redis),
                                 .service = "game",
                                 .high_watermark = watermark,
                                 .request_timeout_ms = request_timeout_ms,
                                 .history_maxlen = 1000000,
                                 .metrics = reg};
    money_writer_t *w = money_writer_create(&cfg);
    ck_assert_ptr_nonnull(w);
    return w;
}

typedef struct {
    _Atomic long ok, replayed, failed, cancelled;
} tally_t;

static void tally_cb(money_result_t *r, void *arg)
{
    tally_t *t = arg;
    if (r->status == MONEY_OK)
        atomic_fetch_add(&t->ok, 1);
    else if (r->status == -ECANCELED)
        atomic_fetch_add(&t->cancelled, 1);
    else
        atomic_fetch_add(&t->failed, 1);
    if (r->replayed)
        atomic_fetch_add(&t->replayed, 1);
    free(r);
}

static void capture_cb(money_result_t *r, void *arg)
{
    _Atomic(money_result_t *) *slot = arg;
    atomic_store(slot, r);
}

static money_result_t *wait_capture(_Atomic(money_result_t *) *slot)
{
    for (int i = 0; i < 1000 && atomic_load(slot) == NULL; i++)
        ts_sleep_ms(10);
    money_result_t *r = atomic_exchange(slot, NULL);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Reads one integer key through a fresh connection. */
static long long get_int(redisContext *c, const char *key)
{
    redisReply *r = redisCommand(c, "GET %s", key);
    ck_assert_ptr_nonnull(r);
    long long v = r->type == REDIS_REPLY_STRING ? atoll(r->str) : 0;
    freeReplyObject(r);
    return v;
}

/*
 * Checks that rounds 1..counts[d] of desks 0..ndesks-1 are each present once and that every
 * wallet and the rake equal what exactly one application of each round gives.
 */
static void verify_rounds(int ndesks, const uint64_t *counts)
{
    int64_t expected[MONEY_GEN_PLAYERS] = {0}, rake = 0;
    uint64_t total = 0;
    for (int d = 0; d < ndesks; d++) {
        for (uint64_t seq = 1; seq <= counts[d]; seq++)
            money_gen_expect((uint64_t)d, seq, expected, &rake);
        total += counts[d];
    }
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", ts_redis_port(redis), tv);
    ck_assert(c != NULL && c->err == 0);
    redisReply *r = redisCommand(c, "KEYS {croupier:money}:round:*");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->elements, total);
    freeReplyObject(r);
    char key[128];
    int64_t sum = 0;
    for (int p = 0; p < MONEY_GEN_PLAYERS; p++) {
        money_key_wallet(money_gen_names[p], key, sizeof key);
        long long v = get_int(c, key);
        ck_assert_int_eq(v, MONEY_GEN_START + expected[p]);
        sum += v;
    }
    money_key_rake(MONEY_GEN_GAME, key, sizeof key);
    ck_assert_int_eq(get_int(c, key), rake);
    /* Chips are conserved: wallets + house = what the players started with. */
    ck_assert_int_eq(sum + rake, MONEY_GEN_START * MONEY_GEN_PLAYERS);
    redisFree(c);
}

/* Checks the history stream holds each round once, in per-desk order. */
static void verify_history_order(int ndesks, const uint64_t *counts)
{
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", ts_redis_port(redis), tv);
    ck_assert(c != NULL && c->err == 0);
    char key[128];
    money_key_stream(MONEY_GEN_GAME, key, sizeof key);
    redisReply *r = redisCommand(c, "XRANGE %s - +", key);
    ck_assert_ptr_nonnull(r);
    uint64_t last[64] = {0}, total = 0;
    for (int d = 0; d < ndesks; d++)
        total += counts[d];
    ck_assert_uint_eq(r->elements, total);
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *fields = r->element[i]->element[1];
        ck_assert_str_eq(fields->element[0]->str, "round");
        money_round_id_t id;
        ck_assert_int_eq(money_round_id_parse(fields->element[1]->str, &id), 0);
        ck_assert_uint_lt(id.desk, (uint64_t)ndesks);
        ck_assert_msg(id.seq == last[id.desk] + 1, "desk %llu: seq %llu after %llu",
                      (unsigned long long)id.desk, (unsigned long long)id.seq,
                      (unsigned long long)last[id.desk]);
        last[id.desk] = id.seq;
        json_error_t je;
        json_t *h = json_loads(fields->element[3]->str, 0, &je);
        ck_assert(money_history_valid(h));
        json_decref(h);
    }
    freeReplyObject(r);
    redisFree(c);
}

typedef struct {
    money_writer_t *w;
    tally_t *tally;
    uint64_t desk;
    uint64_t limit; /* rounds to submit (0 = until stop) */
    int pause_us;   /* between rounds */
    bool histories; /* also submit a hand history per round */
    _Atomic bool *stop;
    uint64_t submitted;
    long held; /* times the writer said "do not start a round" */
} desk_t;

static void *desk_main(void *arg)
{
    desk_t *d = arg;
    while ((d->limit == 0 || d->submitted < d->limit) && !atomic_load(d->stop)) {
        if (!money_writer_can_start_round(d->w)) {
            d->held++;
            usleep(1000);
            continue;
        }
        uint64_t seq = d->submitted + 1;
        money_settlement_t s;
        money_gen_settlement(3, d->desk, seq, &s);
        ck_assert_int_eq(money_writer_submit_settle(d->w, &s, tally_cb, d->tally), 0);
        if (d->histories) {
            json_t *h = money_history_new(&s.round, MONEY_GEN_GAME);
            for (size_t i = 0; i < s.nplayers; i++) {
                money_history_add_seat(h, (int)i, s.players[i], false, MONEY_GEN_START);
                money_history_add_card(h, (int)i, "As");
                money_history_add_action(h, (int)i, "play", 1);
                money_history_add_result(h, (int)i, s.deltas[i]);
            }
            ck_assert_int_eq(
                money_writer_submit_history(d->w, MONEY_GEN_GAME, h, tally_cb, d->tally), 0);
        }
        d->submitted = seq;
        if (d->pause_us)
            usleep((useconds_t)d->pause_us);
    }
    return NULL;
}

START_TEST(test_money_writer_10000_in_flight_then_stop_flushes_every_one_once)
{
    metrics_registry_t *reg = metrics_create();
    money_writer_t *w = writer(reg, 100000, 0);
    tally_t tally = {0};
    _Atomic bool stop = false;
    enum { NDESKS = 4 };
    desk_t desks[NDESKS];
    pthread_t th[NDESKS];
    for (int i = 0; i < NDESKS; i++) {
        desks[i] =
            (desk_t){.w = w, .tally = &tally, .desk = (uint64_t)i, .limit = 2500, .stop = &stop};
        pthread_create(&th[i], NULL, desk_main, &desks[i]);
    }
    for (int i = 0; i < NDESKS; i++)
        pthread_join(th[i], NULL);
    /* SIGTERM's path: producing stopped; flush whatever is still queued or in flight. */
    long flushed = money_writer_flush(w, 60000);
    ck_assert_int_ge(flushed, 0);
    ck_assert_uint_eq(money_writer_depth(w), 0);
    ck_assert_int_eq(money_writer_oldest_age_ms(w), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 10000);
    ck_assert_int_eq(atomic_load(&tally.failed), 0);
    ck_assert_int_eq(atomic_load(&tally.replayed), 0);
    uint64_t counts[NDESKS];
    for (int i = 0; i < NDESKS; i++)
        counts[i] = desks[i].submitted;
    verify_rounds(NDESKS, counts);
    size_t len;
    char *text = metrics_render(reg, &len);
    ck_assert_ptr_nonnull(
        strstr(text, "money_writer_items_total{kind=\"settle\",outcome=\"ok\"} 10000"));
    ck_assert_ptr_nonnull(strstr(text, "money_writer_write_seconds_count 10000"));
    ck_assert_ptr_nonnull(strstr(text, "money_writer_depth 0"));
    free(text);
    money_writer_destroy(w);
    metrics_destroy(reg);
}
END_TEST

/* EVALSHA calls Redis has answered since the last CONFIG RESETSTAT. */
static long long evalsha_calls(void)
{
    char *stats = ts_redis_cmd(redis, "INFO commandstats");
    ck_assert_ptr_nonnull(stats);
    char *line = strstr(stats, "cmdstat_evalsha:calls=");
    long long calls = line ? atoll(line + strlen("cmdstat_evalsha:calls=")) : 0;
    free(stats);
    return calls;
}

/* While Redis is busy (here: stopped for a moment) settlements wait in the writer and then
 * leave in big batches, instead of one call each: what keeps Redis's cost per settlement low
 * under load. */
START_TEST(test_money_writer_settlements_wait_for_a_busy_redis_and_leave_in_batches)
{
    money_writer_t *w = writer(NULL, 100000, 10000);
    tally_t tally = {0};
    money_settlement_t s;
    money_gen_settlement(3, 0, 1, &s);
    ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
    /* connected, scripts loaded (the item may complete before the flush begins: >= 0) */
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 1);
    free(ts_redis_cmd(redis, "CONFIG RESETSTAT"));
    enum { N = 1000 };
    ts_redis_pause(redis);
    for (uint64_t seq = 2; seq <= N + 1; seq++) {
        money_gen_settlement(3, 0, seq, &s);
        ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
        if (seq % 10 == 0)
            ts_sleep_ms(1); /* a trickle: the writer wakes up for a few items at a time */
    }
    ts_sleep_ms(100);
    ts_redis_resume(redis);
    ck_assert_int_ge(money_writer_flush(w, 30000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), N + 1);
    ck_assert_int_eq(atomic_load(&tally.replayed), 0);
    /* At most 4 calls went out while Redis was stopped; the rest left 64 at a time. */
    long long calls = evalsha_calls();
    ck_assert_msg(calls <= 4 + (N + 63) / 64 + 4, "%lld calls for %d settlements", calls, N);
    uint64_t counts[1] = {N + 1};
    verify_rounds(1, counts);
    money_writer_destroy(w);
}
END_TEST

/*
 * Redis refusing writes for a while -- too few replicas (min-replicas-to-write: NOREPLICAS), then
 * memory full (maxmemory with noeviction: OOM) -- is one case with one answer: the settlements
 * wait in the queue and are sent again, none fails (no round is voided for it), and once Redis
 * takes writes again every one is applied exactly once (docs/queues.md "When Redis refuses
 * writes").
 */
START_TEST(test_money_writer_refused_writes_wait_then_apply_once)
{
    money_writer_t *w = writer(NULL, 100000, 2000);
    tally_t tally = {0};
    money_settlement_t s;
    money_gen_settlement(3, 0, 1, &s);
    ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
    /* connected, scripts loaded (the item may complete before the flush begins: >= 0) */
    ck_assert_int_ge(money_writer_flush(w, 10000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), 1);
    static const char *const refusals[][2] = {{"min-replicas-to-write", "1"}, {"maxmemory", "1"}};
    static const char *const restore[] = {"0", "0"};
    uint64_t seq = 2;
    for (int k = 0; k < 2; k++) {
        free(ts_redis_cmd(redis, "CONFIG SET %s %s", refusals[k][0], refusals[k][1]));
        for (int i = 0; i < 50; i++, seq++) {
            money_gen_settlement(3, 0, seq, &s);
            ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
        }
        ck_assert_int_eq(money_writer_flush(w, 1500), -ETIMEDOUT); /* held, not failed */
        ck_assert_int_eq(atomic_load(&tally.failed), 0);
        free(ts_redis_cmd(redis, "CONFIG SET %s %s", refusals[k][0], restore[k]));
        ck_assert_int_ge(money_writer_flush(w, 15000), 0);
        ck_assert_int_eq(atomic_load(&tally.failed), 0);
        ck_assert_int_eq(atomic_load(&tally.ok), (long)seq - 1);
    }
    ck_assert_int_eq(atomic_load(&tally.replayed), 0);
    uint64_t counts[1] = {seq - 1};
    verify_rounds(1, counts);
    money_writer_destroy(w);
}
END_TEST

START_TEST(test_money_writer_redis_down_5s_loses_nothing_and_applies_nothing_twice)
{
    metrics_registry_t *reg = metrics_create();
    money_writer_t *w = writer(reg, 400, 300);
    tally_t tally = {0};
    _Atomic bool stop = false;
    enum { NDESKS = 4 };
    desk_t desks[NDESKS];
    pthread_t th[NDESKS];
    for (int i = 0; i < NDESKS; i++) {
        desks[i] = (desk_t){.w = w,
                            .tally = &tally,
                            .desk = (uint64_t)i,
                            .pause_us = 2000,
                            .histories = true,
                            .stop = &stop};
        pthread_create(&th[i], NULL, desk_main, &desks[i]);
    }
    ts_sleep_ms(1000);
    ts_redis_pause(redis);
    ts_sleep_ms(5000);
    ck_assert(!money_writer_can_start_round(w)); /* the watermark holds new rounds back */
    ck_assert_int_gt(money_writer_oldest_age_ms(w), 1000);
    ts_redis_resume(redis);
    ts_sleep_ms(1500);
    atomic_store(&stop, true);
    long held = 0;
    uint64_t counts[NDESKS];
    for (int i = 0; i < NDESKS; i++) {
        pthread_join(th[i], NULL);
        held += desks[i].held;
        counts[i] = desks[i].submitted;
    }
    ck_assert_int_ge(money_writer_flush(w, 60000), 0);
    ck_assert_int_gt(held, 0);
    uint64_t total = 0;
    for (int i = 0; i < NDESKS; i++)
        total += counts[i];
    ck_assert_int_eq(atomic_load(&tally.ok), (long)(2 * total));
    ck_assert_int_eq(atomic_load(&tally.failed), 0);
    ck_assert_double_gt(metrics_value(metrics_counter(reg, "money_writer_retries_total", NULL, "")),
                        0);
    ck_assert_double_gt(
        metrics_value(metrics_counter(reg, "money_writer_reconnects_total", NULL, "")), 0);
    verify_rounds(NDESKS, counts);
    verify_history_order(NDESKS, counts);
    money_writer_destroy(w);
    metrics_destroy(reg);
}
END_TEST

static void *shared_desk_main(void *arg)
{
    desk_t *d = arg;
    char other[16];
    snprintf(other, sizeof other, "t%llu", (unsigned long long)d->desk);
    for (uint64_t seq = 1; seq <= d->limit; seq++) {
        money_settlement_t s = {
            .round = {.server = 1, .epoch = 3, .desk = 100 + d->desk, .seq = seq},
            .game = "shared",
            .nplayers = 2};
        s.players[0] = "shared";
        s.players[1] = other;
        s.deltas[0] = 3;
        s.deltas[1] = -3;
        ck_assert_int_eq(money_writer_submit_settle(d->w, &s, tally_cb, d->tally), 0);
    }
    return NULL;
}

START_TEST(test_money_writer_many_desks_settling_one_player_give_exact_totals)
{
    money_writer_t *w = writer(NULL, 0, 0);
    tally_t tally = {0};
    _Atomic bool stop = false;
    enum { NDESKS = 8, ROUNDS = 500 };
    desk_t desks[NDESKS];
    pthread_t th[NDESKS];
    char key[128];
    for (int i = 0; i < NDESKS; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        money_key_wallet(name, key, sizeof key);
        free(ts_redis_cmd(redis, "SET %s 1500", key));
        desks[i] =
            (desk_t){.w = w, .tally = &tally, .desk = (uint64_t)i, .limit = ROUNDS, .stop = &stop};
        pthread_create(&th[i], NULL, shared_desk_main, &desks[i]);
    }
    for (int i = 0; i < NDESKS; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_ge(money_writer_flush(w, 60000), 0);
    ck_assert_int_eq(atomic_load(&tally.ok), NDESKS * ROUNDS);
    money_key_wallet("shared", key, sizeof key);
    char *v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_int_eq(atoll(v), 3LL * NDESKS * ROUNDS);
    free(v);
    money_key_wallet("t5", key, sizeof key);
    v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_str_eq(v, "0");
    free(v);
    money_writer_destroy(w);
}
END_TEST

START_TEST(test_money_writer_reports_replay_stale_epoch_and_refused_buyin)
{
    money_writer_t *w = writer(NULL, 0, 0);
    _Atomic(money_result_t *) slot = NULL;
    money_settlement_t s;
    money_gen_settlement(3, 9, 1, &s);
    ck_assert_int_eq(money_writer_submit_settle(w, &s, capture_cb, &slot), 0);
    money_result_t *first = wait_capture(&slot);
    ck_assert_int_eq(first->status, MONEY_OK);
    ck_assert(!first->replayed);
    ck_assert_ptr_eq(first->arg, &slot);
    ck_assert_str_eq(first->id, "1:3:9:1");
    ck_assert_int_eq(money_writer_submit_settle(w, &s, capture_cb, &slot), 0);
    money_result_t *again = wait_capture(&slot);
    ck_assert_int_eq(again->status, MONEY_OK);
    ck_assert(again->replayed);
    ck_assert_int_eq(again->balances[0], first->balances[0]);
    free(first);
    free(again);
    uint64_t counts[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    verify_rounds(10, counts);

    money_gen_settlement(2, 9, 2, &s); /* epoch 2 < current 3 */
    ck_assert_int_eq(money_writer_submit_settle(w, &s, capture_cb, &slot), 0);
    money_result_t *r = wait_capture(&slot);
    ck_assert_int_eq(r->status, MONEY_ERR_STALE_EPOCH);
    free(r);

    money_gen_settlement(3, 9, 3, &s);
    s.deltas[1] -= 1;
    ck_assert_int_eq(money_writer_submit_settle(w, &s, capture_cb, &slot), 0);
    r = wait_capture(&slot);
    ck_assert_int_eq(r->status, MONEY_ERR_BAD_SUM);
    free(r);
    verify_rounds(10, counts); /* neither changed anything */

    ck_assert_int_eq(
        money_writer_submit_buyin(w, "g0", MONEY_GEN_START + 1, "op:1", capture_cb, &slot), 0);
    r = wait_capture(&slot);
    ck_assert_int_eq(r->status, MONEY_ERR_INSUFFICIENT);
    ck_assert_ptr_nonnull(strstr(r->error, "less than the buy-in"));
    free(r);
    ck_assert_int_eq(money_writer_submit_cashout(w, "g0", 5, "op:2", capture_cb, &slot), 0);
    r = wait_capture(&slot);
    ck_assert_int_eq(r->status, MONEY_OK);
    char key[128];
    money_key_wallet("g0", key, sizeof key);
    char *v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_int_eq(r->balances[0], atoll(v));
    free(v);
    free(r);

    /* Malformed input is refused at once and never queued. */
    s.players[1] = "bad id";
    ck_assert_int_eq(money_writer_submit_settle(w, &s, capture_cb, &slot), -EINVAL);
    ck_assert_int_eq(money_writer_submit_history(w, MONEY_GEN_GAME, json_object(), NULL, NULL),
                     -EINVAL);
    ck_assert_int_eq(money_writer_submit_buyin(w, "g0", 0, "op:3", NULL, NULL), -EINVAL);
    ck_assert_uint_eq(money_writer_depth(w), 0);
    money_writer_destroy(w);
}
END_TEST

/* A blackjack-like record of round rid revealing the shoes of commits (NULL-terminated). */
static json_t *shoe_record(const char *rid, const char *const *commits)
{
    json_t *h = json_pack("{s:s,s:s,s:[],s:[],s:[],s:[],s:[]}", "round", rid, "game", "blackjack",
                          "seats", "cards", "actions", "results", "shoe_reveal");
    for (size_t i = 0; commits[i] != NULL; i++)
        json_array_append_new(json_object_get(h, "shoe_reveal"),
                              json_pack("{s:i,s:s,s:s,s:s,s:i}", "shoe", (int)i + 1, "commitment",
                                        commits[i], "deck", "00", "nonce", commits[i], "dealt", 1));
    return h;
}

/* The history of round rid revealing commits, through the writer: its result. */
static money_result_t *submit_shoes(money_writer_t *w, const char *rid, const char *const *commits)
{
    _Atomic(money_result_t *) slot = NULL;
    ck_assert_int_eq(
        money_writer_submit_history(w, "blackjack", shoe_record(rid, commits), capture_cb, &slot),
        0);
    return wait_capture(&slot);
}

/* The stream id the shoe index holds for commitment c ("(nil)" when none), and its TTL. */
static char *shoe_index(const char *c, long long *ttl)
{
    char *v = ts_redis_cmd(redis, "GET {croupier:history:blackjack}:seen:shoe:%s", c);
    ck_assert_ptr_nonnull(v);
    v[strcspn(v, "\n")] = '\0';
    char *t = ts_redis_cmd(redis, "TTL {croupier:history:blackjack}:seen:shoe:%s", c);
    *ttl = atoll(t);
    free(t);
    return v;
}

/*
 * docs/hand-history.md "The shoe index": a record that reveals shoes (blackjack's shoe_reveal)
 * indexes each by its commitment, in the same script as the XADD: the key names the record's
 * stream entry and lives as long as its seen key. Once per round (a resent record adds no
 * index), never for a record the fence refuses, never for a commitment that is not 64 lower-case
 * hex digits; a round id without a service (no fence) is indexed too.
 */
START_TEST(test_money_writer_history_revealing_a_shoe_indexes_it_by_commitment)
{
    money_writer_t *w = writer(NULL, 0, 0);
    static const char c1[] = "1111111111111111111111111111111111111111111111111111111111111111",
                      c2[] = "2222222222222222222222222222222222222222222222222222222222222222",
                      c3[] = "3333333333333333333333333333333333333333333333333333333333333333",
                      c4[] = "4444444444444444444444444444444444444444444444444444444444444444",
                      c5[] = "5555555555555555555555555555555555555555555555555555555555555555",
                      bad[] = "ABCD";
    const char *first[] = {c1, bad, c2, c1, NULL};
    money_result_t *r = submit_shoes(w, "game:1:3:5:1", first);
    ck_assert_int_eq(r->status, MONEY_OK);
    ck_assert(!r->replayed);
    long long ttl;
    char *v = shoe_index(c1, &ttl);
    ck_assert_str_eq(v, r->stream_id);
    ck_assert(ttl > 0 && ttl <= MONEY_RECORD_TTL_S);
    free(v);
    v = shoe_index(c2, &ttl);
    ck_assert_str_eq(v, r->stream_id);
    free(v);
    char *seen = ts_redis_cmd(redis, "GET {croupier:history:blackjack}:seen:game:1:3:5:1");
    seen[strcspn(seen, "\n")] = '\0';
    ck_assert_str_eq(seen, r->stream_id);
    free(seen);
    free(r);
    char *keys = ts_redis_cmd(redis, "KEYS {croupier:history:blackjack}:seen:shoe:*");
    ck_assert_ptr_null(strstr(keys, bad));
    free(keys);

    /* The same round again (a resend): answered as a replay, no new index. */
    const char *again[] = {c3, NULL};
    r = submit_shoes(w, "game:1:3:5:1", again);
    ck_assert_int_eq(r->status, MONEY_OK);
    ck_assert(r->replayed);
    free(r);
    v = shoe_index(c3, &ttl);
    ck_assert_str_eq(v, "(nil)");
    free(v);

    /* A stale epoch (the fence is 3): refused, nothing indexed. */
    const char *stale[] = {c4, NULL};
    r = submit_shoes(w, "game:1:2:5:2", stale);
    ck_assert_int_eq(r->status, MONEY_ERR_STALE_EPOCH);
    free(r);
    v = shoe_index(c4, &ttl);
    ck_assert_str_eq(v, "(nil)");
    free(v);

    /* A round id without a service: no fence, indexed all the same. */
    const char *plain[] = {c5, NULL};
    r = submit_shoes(w, "1:3:5:3", plain);
    ck_assert_int_eq(r->status, MONEY_OK);
    v = shoe_index(c5, &ttl);
    ck_assert_str_eq(v, r->stream_id);
    free(v);
    free(r);

    /* A record that reveals no shoe indexes nothing. */
    const char *none[] = {NULL};
    r = submit_shoes(w, "game:1:3:5:4", none);
    ck_assert_int_eq(r->status, MONEY_OK);
    free(r);
    keys = ts_redis_cmd(redis, "EVAL %s 0",
                        "return #redis.call('KEYS', "
                        "'{croupier:history:blackjack}:seen:shoe:*')");
    ck_assert_int_eq(atoi(keys), 3);
    free(keys);
    money_writer_destroy(w);
}
END_TEST

START_TEST(test_money_writer_destroy_cancels_what_flush_could_not_write)
{
    money_writer_t *w = writer(NULL, 0, 300);
    for (int i = 0; i < 100 && !money_writer_connected(w); i++)
        ts_sleep_ms(10);
    ts_redis_pause(redis);
    tally_t tally = {0};
    for (uint64_t seq = 1; seq <= 10; seq++) {
        money_settlement_t s;
        money_gen_settlement(3, 0, seq, &s);
        ck_assert_int_eq(money_writer_submit_settle(w, &s, tally_cb, &tally), 0);
    }
    ck_assert_int_eq(money_writer_flush(w, 300), -ETIMEDOUT);
    ck_assert_uint_eq(money_writer_depth(w), 10);
    ck_assert(money_writer_oldest_age_ms(w) >= 0);
    money_writer_destroy(w);
    ck_assert_int_eq(atomic_load(&tally.cancelled), 10);
    ts_redis_resume(redis);
}
END_TEST

START_TEST(test_money_writer_producer_process_flushes_on_sigterm)
{
    char port[16];
    snprintf(port, sizeof port, "%d", ts_redis_port(redis));
    char *argv[] = {(char *)ts_build_path("money/money_producer"), port, "game", "4", NULL};
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ts_proc_wait_log(p, "producing", 10000), 0);
    ts_sleep_ms(800);
    ck_assert_int_eq(ts_proc_signal(p, SIGTERM), 0);
    int st = 0;
    ck_assert_int_eq(ts_proc_wait(p, 60000, &st), 0);
    char *log = ts_proc_log(p);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "producer: %s", log);
    uint64_t counts[4] = {0};
    for (int d = 0; d < 4; d++) {
        char pat[32];
        snprintf(pat, sizeof pat, "desk=%d submitted=", d);
        char *at = strstr(log, pat);
        ck_assert_msg(at != NULL, "no count for desk %d in %s", d, log);
        counts[d] = strtoull(at + strlen(pat), NULL, 10);
        ck_assert_uint_gt(counts[d], 0);
    }
    ck_assert_ptr_nonnull(strstr(log, "flush drained"));
    free(log);
    verify_rounds(4, counts);
    ts_proc_free(p);
}
END_TEST

/* Reads "slot" and "epoch" of the holder's latest "acquired" event from its log. */
static bool holder_acquired(ts_proc_t *p, int *slot, long long *epoch)
{
    char *log = ts_proc_log(p);
    char *line = NULL;
    for (char *at = strstr(log, "\"lease_event\":\"acquired\""); at != NULL;
         at = strstr(at + 1, "\"lease_event\":\"acquired\""))
        line = at;
    bool ok =
        line != NULL && strstr(line, "\"slot\":") != NULL && strstr(line, "\"epoch\":") != NULL;
    if (ok) {
        *slot = atoi(strstr(line, "\"slot\":") + 7);
        *epoch = atoll(strstr(line, "\"epoch\":") + 8);
    }
    free(log);
    return ok;
}

static ts_proc_t *start_holder(void)
{
    char redis_addr[64];
    snprintf(redis_addr, sizeof redis_addr, "--redis=%s", ts_redis_addr(redis));
    char *argv[] = {(char *)ts_build_path("lease/lease_holder"),
                    redis_addr,
                    "--service=game",
                    "--lease-pool-size=1",
                    "--ttl-ms=300",
                    NULL};
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ts_proc_wait_log(p, "\"lease_event\":\"acquired\"", 10000), 0);
    return p;
}

static int settle_one(money_writer_t *w, uint32_t slot, uint64_t epoch, uint64_t desk)
{
    _Atomic(money_result_t *) slot_result = NULL;
    money_settlement_t s = {.round = {.server = slot, .epoch = epoch, .desk = desk, .seq = 1},
                            .game = "fenced",
                            .nplayers = 2};
    s.players[0] = "g0";
    s.players[1] = "g1";
    s.deltas[0] = 5;
    s.deltas[1] = -5;
    ck_assert_int_eq(money_writer_submit_settle(w, &s, capture_cb, &slot_result), 0);
    money_result_t *r = wait_capture(&slot_result);
    int status = r->status;
    free(r);
    return status;
}

START_TEST(test_money_writer_settlement_from_a_lost_lease_is_fenced_off)
{
    /* A real lease holder (lease/) takes the only slot of service "game". */
    ts_proc_t *a = start_holder();
    int slot_a;
    long long epoch_a;
    ck_assert(holder_acquired(a, &slot_a, &epoch_a));
    money_writer_t *w = writer(NULL, 0, 0);
    ck_assert_int_eq(settle_one(w, (uint32_t)slot_a, (uint64_t)epoch_a, 60), MONEY_OK);

    /* A is paused past its TTL; B takes the slot with a new epoch. A's settlements are refused
     * from then on, even though A has not noticed yet; B's go through. */
    ck_assert_int_eq(ts_proc_signal(a, SIGSTOP), 0);
    ts_sleep_ms(600);
    ts_proc_t *b = start_holder();
    int slot_b;
    long long epoch_b;
    ck_assert(holder_acquired(b, &slot_b, &epoch_b));
    ck_assert_int_eq(slot_b, slot_a);
    ck_assert_int_gt(epoch_b, epoch_a);
    ck_assert_int_eq(settle_one(w, (uint32_t)slot_a, (uint64_t)epoch_a, 61), MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(settle_one(w, (uint32_t)slot_b, (uint64_t)epoch_b, 62), MONEY_OK);
    char key[128];
    money_key_wallet("g0", key, sizeof key);
    char *v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_int_eq(atoll(v), MONEY_GEN_START + 10); /* two rounds applied, not three */
    free(v);

    ts_proc_signal(a, SIGCONT);
    int st;
    ck_assert_int_eq(ts_proc_wait(a, 10000, &st), 0); /* A finds its slot lost and exits */
    ts_proc_signal(b, SIGTERM);
    ck_assert_int_eq(ts_proc_wait(b, 10000, &st), 0);
    ts_proc_free(a);
    ts_proc_free(b);
    money_writer_destroy(w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("money_writer");
    TCase *tc = tcase_create("volume");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_money_writer_10000_in_flight_then_stop_flushes_every_one_once);
    tcase_add_test(tc, test_money_writer_many_desks_settling_one_player_give_exact_totals);
    tcase_add_test(tc, test_money_writer_settlements_wait_for_a_busy_redis_and_leave_in_batches);
    tcase_add_test(tc, test_money_writer_refused_writes_wait_then_apply_once);
    suite_add_tcase(s, tc);
    tc = tcase_create("outcomes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_money_writer_reports_replay_stale_epoch_and_refused_buyin);
    tcase_add_test(tc, test_money_writer_settlement_from_a_lost_lease_is_fenced_off);
    tcase_add_test(tc, test_money_writer_history_revealing_a_shoe_indexes_it_by_commitment);
    suite_add_tcase(s, tc);
    tc = tcase_create("failures");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_money_writer_redis_down_5s_loses_nothing_and_applies_nothing_twice);
    tcase_add_test(tc, test_money_writer_destroy_cancels_what_flush_could_not_write);
    tcase_add_test(tc, test_money_writer_producer_process_flushes_on_sigterm);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
