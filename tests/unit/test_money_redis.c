/* money/ scripts against a real redis-server: wallets, settlement, fencing, histories. */
#include <check.h>
#include <pthread.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobs.h"
#include "money.h"
#include "support.h"

static ts_redis_t *redis;
static redisContext *rc;

static void setup(void)
{
    redis = ts_redis_start();
    ck_assert_ptr_nonnull(redis);
    struct timeval tv = {2, 0};
    rc = redisConnectWithTimeout("127.0.0.1", ts_redis_port(redis), tv);
    ck_assert(rc != NULL && rc->err == 0);
    redisSetTimeout(rc, tv);
}

static void teardown(void)
{
    redisFree(rc);
    ts_redis_stop(redis);
}

static int64_t balance(const char *player)
{
    int64_t v = -1;
    ck_assert_int_eq(money_sync_balance(rc, player, &v), 0);
    return v;
}

static void set_balance(const char *player, long long v)
{
    char key[128];
    money_key_wallet(player, key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s %lld", key, v));
}

static void set_epoch(const char *service, unsigned slot, unsigned long long epoch)
{
    char key[128];
    money_key_epoch(service, slot, key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s %llu", key, epoch));
}

START_TEST(test_wallet_buyin_debits_once_per_op_id)
{
    money_result_t r;
    set_balance("alice", 1000);
    ck_assert_int_eq(money_sync_buyin(rc, "alice", 300, "buyin:alice:1", &r), MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_int_eq(r.balances[0], 700);
    ck_assert_int_eq(money_sync_buyin(rc, "alice", 300, "buyin:alice:1", &r), MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(r.balances[0], 700);
    ck_assert_int_eq(balance("alice"), 700);
}
END_TEST

START_TEST(test_wallet_buyin_over_balance_is_refused_and_changes_nothing)
{
    money_result_t r;
    set_balance("bob", 100);
    ck_assert_int_eq(money_sync_buyin(rc, "bob", 101, "buyin:bob:1", &r), MONEY_ERR_INSUFFICIENT);
    ck_assert_ptr_nonnull(
        strstr(r.error, "MONEY_INSUFFICIENT balance 100 is less than the buy-in 101"));
    ck_assert_int_eq(balance("bob"), 100);
    /* An unknown player has nothing. */
    ck_assert_int_eq(money_sync_buyin(rc, "nobody", 1, "buyin:nobody:1", &r),
                     MONEY_ERR_INSUFFICIENT);
    ck_assert_int_eq(balance("nobody"), 0);
    /* The whole balance may be bought in: it reaches 0, never below. */
    ck_assert_int_eq(money_sync_buyin(rc, "bob", 100, "buyin:bob:2", &r), MONEY_OK);
    ck_assert_int_eq(balance("bob"), 0);
    ck_assert_int_eq(money_sync_buyin(rc, "bob", 0, "buyin:bob:3", &r), -EINVAL);
    ck_assert_int_eq(money_sync_buyin(rc, "bob", -5, "buyin:bob:4", &r), -EINVAL);
}
END_TEST

START_TEST(test_wallet_cashout_credits_once_per_op_id)
{
    money_result_t r;
    ck_assert_int_eq(money_sync_cashout(rc, "carol", 250, "cashout:carol:1", &r), MONEY_OK);
    ck_assert_int_eq(r.balances[0], 250);
    ck_assert_int_eq(money_sync_cashout(rc, "carol", 250, "cashout:carol:1", &r), MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(balance("carol"), 250);
}
END_TEST

static money_settlement_t round3(uint64_t epoch, uint64_t seq)
{
    money_settlement_t s = {.round = {.server = 1, .epoch = epoch, .desk = 77, .seq = seq},
                            .game = "ddz",
                            .nplayers = 3,
                            .rake = 10};
    s.players[0] = "a";
    s.players[1] = "b";
    s.players[2] = "c";
    s.deltas[0] = 190;
    s.deltas[1] = -100;
    s.deltas[2] = -100;
    return s;
}

static void fund_abc(void)
{
    set_balance("a", 1000);
    set_balance("b", 1000);
    set_balance("c", 1000);
}

/* Two services can hold the same slot and epoch and number their desks alike: the service in
 * the round id keeps their settlements apart (neither is taken for a replay of the other). */
START_TEST(test_settle_same_numbers_in_two_services_both_apply)
{
    fund_abc();
    set_epoch("traditional", 1, 5);
    set_epoch("holdem", 1, 5);
    money_settlement_t s = round3(5, 1);
    ck_assert_int_eq(money_round_id_set_service(&s.round, "traditional"), 0);
    money_result_t r;
    ck_assert_int_eq(money_sync_settle(rc, "traditional", &s, &r), MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_str_eq(r.id, "traditional:1:5:77:1");
    ck_assert_int_eq(money_round_id_set_service(&s.round, "holdem"), 0);
    ck_assert_int_eq(money_sync_settle(rc, "holdem", &s, &r), MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_int_eq(balance("a"), 1000 + 2 * 190);
    ck_assert_int_eq(balance("b"), 800);
    /* Each is still idempotent on its own. */
    ck_assert_int_eq(money_sync_settle(rc, "holdem", &s, &r), MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(balance("a"), 1000 + 2 * 190);
    char key[MONEY_ID_MAX + 64];
    money_key_round("holdem:1:5:77:1", key, sizeof key);
    char *v = ts_redis_cmd(redis, "EXISTS %s", key);
    ck_assert_str_eq(v, "1");
    free(v);
}
END_TEST

START_TEST(test_settle_applies_all_deltas_and_the_rake)
{
    fund_abc();
    set_epoch("game", 1, 5);
    money_settlement_t s = round3(5, 1);
    money_result_t r;
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_uint_eq(r.nbalances, 3);
    ck_assert_int_eq(r.balances[0], 1190);
    ck_assert_int_eq(r.balances[1], 900);
    ck_assert_int_eq(balance("c"), 900);
    char key[128];
    money_key_rake("ddz", key, sizeof key);
    char *v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_str_eq(v, "10");
    free(v);
    money_key_round("1:5:77:1", key, sizeof key);
    v = ts_redis_cmd(redis, "TTL %s", key);
    ck_assert_int_gt(atol(v), 0);
    free(v);
}
END_TEST

START_TEST(test_settle_replay_returns_first_result_without_applying_again)
{
    fund_abc();
    set_epoch("game", 1, 5);
    money_settlement_t s = round3(5, 2);
    money_result_t first, again;
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &first), MONEY_OK);
    /* Someone else moves money in between; the replay still answers the first balances. */
    set_balance("b", 5);
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &again), MONEY_OK);
    ck_assert(again.replayed);
    ck_assert_uint_eq(again.nbalances, first.nbalances);
    for (size_t i = 0; i < first.nbalances; i++)
        ck_assert_int_eq(again.balances[i], first.balances[i]);
    ck_assert_int_eq(balance("a"), 1190);
    ck_assert_int_eq(balance("b"), 5);
    /* A replay is answered even after the lease moved on (the round was applied in time). */
    set_epoch("game", 1, 6);
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &again), MONEY_OK);
    ck_assert(again.replayed);
}
END_TEST

START_TEST(test_settle_stale_epoch_is_rejected_and_changes_nothing)
{
    fund_abc();
    set_epoch("game", 1, 6);
    money_settlement_t s = round3(5, 3);
    money_result_t r;
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_ERR_STALE_EPOCH);
    ck_assert_ptr_nonnull(strstr(r.error, "MONEY_STALE_EPOCH round epoch 5, current 6"));
    /* No epoch key at all (never leased) is stale too, and so is an epoch from the future. */
    s = round3(7, 3);
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_ERR_STALE_EPOCH);
    s = round3(5, 3);
    ck_assert_int_eq(money_sync_settle(rc, "other", &s, &r), MONEY_ERR_STALE_EPOCH);
    ck_assert_ptr_nonnull(strstr(r.error, "current none"));
    ck_assert_int_eq(balance("a"), 1000);
    ck_assert_int_eq(balance("b"), 1000);
    char key[128];
    money_key_round("1:5:77:3", key, sizeof key);
    char *v = ts_redis_cmd(redis, "EXISTS %s", key);
    ck_assert_str_eq(v, "0");
    free(v);
}
END_TEST

START_TEST(test_settle_deltas_not_summing_to_minus_rake_are_rejected)
{
    fund_abc();
    set_epoch("game", 1, 5);
    money_settlement_t s = round3(5, 4);
    s.deltas[0] = 200; /* sums to 0, but the rake is 10 */
    money_result_t r;
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_ERR_BAD_SUM);
    ck_assert_ptr_nonnull(strstr(r.error, "MONEY_BAD_SUM deltas sum to 0 but must sum to -10"));
    ck_assert_int_eq(balance("a"), 1000);
    ck_assert_int_eq(balance("b"), 1000);
    ck_assert_int_eq(balance("c"), 1000);
    /* Fixing the deltas under the same round id applies (rejections are not recorded). */
    s = round3(5, 4);
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_OK);
    ck_assert(!r.replayed);
}
END_TEST

START_TEST(test_settle_that_would_make_a_wallet_negative_is_rejected)
{
    fund_abc();
    set_balance("c", 99);
    set_epoch("game", 1, 5);
    money_settlement_t s = round3(5, 5);
    money_result_t r;
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_ERR_NEGATIVE);
    ck_assert_ptr_nonnull(strstr(r.error, "holds 99, delta -100"));
    ck_assert_int_eq(balance("a"), 1000);
    ck_assert_int_eq(balance("c"), 99);
}
END_TEST

START_TEST(test_settle_survives_a_script_flush)
{
    fund_abc();
    set_epoch("game", 1, 5);
    free(ts_redis_cmd(redis, "SCRIPT FLUSH"));
    money_settlement_t s = round3(5, 6);
    money_result_t r;
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_OK);
    ck_assert_int_eq(balance("a"), 1190);
}
END_TEST

START_TEST(test_settle_batch_applies_each_round_on_its_own)
{
    fund_abc();
    set_epoch("game", 1, 5);
    redisReply *load = redisCommand(rc, "SCRIPT LOAD %s", money_script_text(0));
    ck_assert_str_eq(load->str, money_script_sha(0));
    freeReplyObject(load);
    money_settlement_t ok = round3(5, 20), bad = round3(5, 21);
    bad.deltas[2] = -99; /* does not sum to -rake */
    money_settle_parts_t p[3];
    ck_assert_int_eq(money_settle_parts("game", &ok, &p[0]), 0);
    ck_assert_int_eq(money_settle_parts("game", &bad, &p[1]), 0);
    ck_assert_int_eq(money_settle_parts("game", &ok, &p[2]), 0); /* the same round again */
    const money_settle_parts_t *parts[3] = {&p[0], &p[1], &p[2]};
    size_t len;
    char *cmd = money_cmd_settle_batch(parts, 3, 0, &len);
    ck_assert_ptr_nonnull(cmd);
    ck_assert_int_eq(redisAppendFormattedCommand(rc, cmd, len), REDIS_OK);
    free(cmd);
    redisReply *r = NULL;
    ck_assert_int_eq(redisGetReply(rc, (void **)&r), REDIS_OK);
    ck_assert_msg(r->type == REDIS_REPLY_ARRAY, "reply: %s", r->str ? r->str : "?");
    ck_assert_uint_eq(r->elements, 3);
    money_result_t out;
    money_reply_parse_entry(MONEY_KIND_SETTLE, r->element[0], &out);
    ck_assert_int_eq(out.status, MONEY_OK);
    ck_assert(!out.replayed);
    money_reply_parse_entry(MONEY_KIND_SETTLE, r->element[1], &out);
    ck_assert_int_eq(out.status, MONEY_ERR_BAD_SUM);
    money_reply_parse_entry(MONEY_KIND_SETTLE, r->element[2], &out);
    ck_assert_int_eq(out.status, MONEY_OK);
    ck_assert(out.replayed);
    ck_assert_int_eq(out.balances[0], 1190);
    freeReplyObject(r);
    ck_assert_int_eq(balance("a"), 1190);
    ck_assert_int_eq(balance("c"), 900);

    /* A batch whose layout is broken (one wallet key for a round of two) is refused as a whole
     * before any round runs. */
    r = redisCommand(
        rc,
        "EVALSHA %s 4 {croupier:money}:round:1:5:77:30 {croupier:lease:game}:slot:1:epoch "
        "{croupier:money}:rake:ddz {croupier:money}:wallet:a 60 2 5 0 10 -10",
        money_script_sha(0));
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_SETTLE, r, &out), MONEY_REPLY_DONE);
    ck_assert_int_eq(out.status, MONEY_ERR_BAD_ARGS);
    freeReplyObject(r);
    ck_assert_int_eq(balance("a"), 1190);
    for (int i = 0; i < 3; i++)
        free(p[i].buf);
}
END_TEST

/* Sends settlements s[0..n) as one batch of the settle script and parses each round's entry
 * into out[i]. */
static void settle_batch(const char *service, const money_settlement_t *s, size_t n,
                         money_result_t *out)
{
    redisReply *load = redisCommand(rc, "SCRIPT LOAD %s", money_script_text(0));
    ck_assert_ptr_nonnull(load);
    freeReplyObject(load);
    money_settle_parts_t *p = calloc(n, sizeof *p);
    const money_settle_parts_t **parts = calloc(n, sizeof *parts);
    ck_assert(p != NULL && parts != NULL);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(money_settle_parts(service, &s[i], &p[i]), 0);
        parts[i] = &p[i];
    }
    size_t len;
    char *cmd = money_cmd_settle_batch(parts, n, 0, &len);
    ck_assert_ptr_nonnull(cmd);
    ck_assert_int_eq(redisAppendFormattedCommand(rc, cmd, len), REDIS_OK);
    free(cmd);
    redisReply *r = NULL;
    ck_assert_int_eq(redisGetReply(rc, (void **)&r), REDIS_OK);
    ck_assert_msg(r->type == REDIS_REPLY_ARRAY, "reply: %s", r->str ? r->str : "?");
    ck_assert_uint_eq(r->elements, n);
    for (size_t i = 0; i < n; i++) {
        money_reply_parse_entry(MONEY_KIND_SETTLE, r->element[i], &out[i]);
        free(p[i].buf);
    }
    freeReplyObject(r);
    free(parts);
    free(p);
}

START_TEST(test_settle_batch_rounds_see_the_earlier_rounds_balances)
{
    fund_abc();
    set_balance("c", 150);
    set_epoch("game", 1, 5);
    money_settlement_t s[4] = {round3(5, 40), round3(5, 41), round3(5, 42), round3(5, 43)};
    /* Round 41 would take c below 0 after round 40 took 100 of its 150; round 42 gives c
     * 100 back (a wins nothing) and round 43 may then take it again. */
    s[2].deltas[0] = -110;
    s[2].deltas[1] = 0;
    s[2].deltas[2] = 100;
    money_result_t out[4];
    settle_batch("game", s, 4, out);
    ck_assert_int_eq(out[0].status, MONEY_OK);
    ck_assert_int_eq(out[0].balances[2], 50);
    ck_assert_int_eq(out[1].status, MONEY_ERR_NEGATIVE);
    ck_assert_ptr_nonnull(strstr(out[1].error, "holds 50, delta -100"));
    ck_assert_int_eq(out[2].status, MONEY_OK);
    ck_assert_int_eq(out[2].balances[0], 1190 - 110);
    ck_assert_int_eq(out[2].balances[2], 150);
    ck_assert_int_eq(out[3].status, MONEY_OK);
    ck_assert_int_eq(out[3].balances[0], 1080 + 190);
    ck_assert_int_eq(out[3].balances[1], 800);
    ck_assert_int_eq(out[3].balances[2], 50);
    ck_assert_int_eq(balance("a"), 1270);
    ck_assert_int_eq(balance("b"), 800);
    ck_assert_int_eq(balance("c"), 50);
    char key[128];
    money_key_rake("ddz", key, sizeof key);
    char *v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_str_eq(v, "30"); /* rounds 40, 42 and 43 */
    free(v);
    money_key_round("1:5:77:41", key, sizeof key);
    v = ts_redis_cmd(redis, "EXISTS %s", key);
    ck_assert_str_eq(v, "0");
    free(v);
    /* The whole batch again: every applied round replays its first result, the rejected one is
     * judged again (c now holds 50: rejected again), nothing moves. */
    money_result_t again[4];
    settle_batch("game", s, 4, again);
    for (int i = 0; i < 4; i += 2) {
        ck_assert(again[i].replayed);
        ck_assert_int_eq(again[i].balances[2], out[i].balances[2]);
    }
    ck_assert(again[3].replayed);
    ck_assert_int_eq(again[1].status, MONEY_ERR_NEGATIVE);
    ck_assert_int_eq(balance("a"), 1270);
    ck_assert_int_eq(balance("c"), 50);
}
END_TEST

START_TEST(test_settle_batch_with_two_fences_judges_each_round_by_its_own)
{
    fund_abc();
    set_epoch("game", 1, 5);
    set_epoch("game", 2, 9);
    money_settlement_t s[3] = {round3(5, 50), round3(8, 51), round3(9, 52)};
    s[1].round.server = 2; /* stale: slot 2 is at epoch 9 */
    s[2].round.server = 2;
    money_result_t out[3];
    settle_batch("game", s, 3, out);
    ck_assert_int_eq(out[0].status, MONEY_OK);
    ck_assert_int_eq(out[1].status, MONEY_ERR_STALE_EPOCH);
    ck_assert_ptr_nonnull(strstr(out[1].error, "round epoch 8, current 9"));
    ck_assert_int_eq(out[2].status, MONEY_OK);
    ck_assert_int_eq(balance("a"), 1000 + 2 * 190);
    /* A fence that does not hold an integer fences everything off. */
    char key[128];
    money_key_epoch("game", 3, key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s x", key));
    money_settlement_t t = round3(5, 53);
    t.round.server = 3;
    money_result_t r;
    ck_assert_int_eq(money_sync_settle(rc, "game", &t, &r), MONEY_ERR_STALE_EPOCH);
    ck_assert_ptr_nonnull(strstr(r.error, "current x (not an integer)"));
    ck_assert_int_eq(balance("a"), 1380);
}
END_TEST

START_TEST(test_settle_rake_account_that_is_not_an_integer_rejects_the_round)
{
    fund_abc();
    set_epoch("game", 1, 5);
    char key[128];
    money_key_rake("ddz", key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s 12.5", key));
    money_settlement_t s = round3(5, 60);
    money_result_t r;
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_ERR_BAD_ARGS);
    ck_assert_ptr_nonnull(strstr(r.error, "rake account"));
    ck_assert_int_eq(balance("a"), 1000);
    ck_assert_int_eq(balance("c"), 1000);
    char *v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_str_eq(v, "12.5");
    free(v);
    /* A round without rake does not touch the account... but is judged with it all the same:
     * the account is part of every round. */
    free(ts_redis_cmd(redis, "SET %s 40", key));
    ck_assert_int_eq(money_sync_settle(rc, "game", &s, &r), MONEY_OK);
    v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_str_eq(v, "50");
    free(v);
}
END_TEST

/* 100 rounds of 16 players each, all different: 1600 wallets, more than one MGET / MSET chunk
 * of the script. Player 0 of each round wins 15 * x - rake, the others lose x each. */
START_TEST(test_settle_batch_of_many_distinct_wallets_applies_every_round)
{
    enum { ROUNDS = 100, PLAYERS = 16 };
    static char names[ROUNDS][PLAYERS][16];
    static money_settlement_t s[ROUNDS];
    set_epoch("game", 1, 5);
    for (int r = 0; r < ROUNDS; r++) {
        s[r] = (money_settlement_t){
            .round = {.server = 1, .epoch = 5, .desk = 90, .seq = (uint64_t)r + 1},
            .game = "big",
            .nplayers = PLAYERS};
        int64_t x = 1 + r % 5;
        s[r].rake = r % 4;
        for (int i = 0; i < PLAYERS; i++) {
            snprintf(names[r][i], sizeof names[r][i], "w%d_%d", r, i);
            s[r].players[i] = names[r][i];
            s[r].deltas[i] = i == 0 ? (PLAYERS - 1) * x - s[r].rake : -x;
            char key[128];
            money_key_wallet(names[r][i], key, sizeof key);
            redisAppendCommand(rc, "SET %s 100", key);
        }
    }
    for (int i = 0; i < ROUNDS * PLAYERS; i++) {
        redisReply *rep = NULL;
        ck_assert_int_eq(redisGetReply(rc, (void **)&rep), REDIS_OK);
        freeReplyObject(rep);
    }
    static money_result_t out[ROUNDS];
    settle_batch("game", s, ROUNDS, out);
    int64_t rake = 0;
    for (int r = 0; r < ROUNDS; r++) {
        ck_assert_msg(out[r].status == MONEY_OK, "round %d: %s", r, out[r].error);
        ck_assert_uint_eq(out[r].nbalances, PLAYERS);
        for (int i = 0; i < PLAYERS; i++) {
            int64_t want = 100 + s[r].deltas[i];
            ck_assert_int_eq(out[r].balances[i], want);
            ck_assert_int_eq(balance(names[r][i]), want);
        }
        rake += s[r].rake;
    }
    char key[128];
    money_key_rake("big", key, sizeof key);
    char *v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_int_eq(atol(v), rake);
    free(v);
}
END_TEST

START_TEST(test_history_is_appended_once_per_round_and_capped)
{
    money_round_id_t id = {.server = 1, .epoch = 5, .desk = 77, .seq = 1};
    money_result_t r, again;
    ck_assert_int_eq(money_sync_history(rc, &id, "ddz", "{\"x\":1}", 50, &r), MONEY_OK);
    ck_assert(r.stream_id[0] != '\0');
    ck_assert_int_eq(money_sync_history(rc, &id, "ddz", "{\"x\":1}", 50, &again), MONEY_OK);
    ck_assert(again.replayed);
    ck_assert_str_eq(again.stream_id, r.stream_id);
    char key[128];
    money_key_stream("ddz", key, sizeof key);
    char *v = ts_redis_cmd(redis, "XLEN %s", key);
    ck_assert_str_eq(v, "1");
    free(v);
    for (uint64_t seq = 2; seq <= 600; seq++) {
        id.seq = seq;
        ck_assert_int_eq(money_sync_history(rc, &id, "ddz", "{}", 50, &r), MONEY_OK);
    }
    v = ts_redis_cmd(redis, "XLEN %s", key);
    /* MAXLEN ~ trims whole radix-tree nodes (100 entries by default): near the cap, not 600. */
    ck_assert_int_lt(atol(v), 200);
    ck_assert_int_ge(atol(v), 50);
    free(v);
}
END_TEST

/* ---- held chips: seat transfers and recovery (money.h "Held chips") ---------------------- */

static money_seat_t seat_of(const char *account, const char *owner, unsigned epoch)
{
    return (money_seat_t){.slot = 3, .epoch = epoch, .account = account, .owner = owner};
}

static long long held_len(unsigned epoch)
{
    char key[128];
    money_key_held("svc", 3, epoch, key, sizeof key);
    char *v = ts_redis_cmd(redis, "HLEN %s", key);
    long long n = atoll(v);
    free(v);
    return n;
}

static bool indexed(unsigned epoch)
{
    char member[64];
    snprintf(member, sizeof member, "svc:3:%u", epoch);
    char *v = ts_redis_cmd(redis, "SISMEMBER %s %s", MONEY_HELD_INDEX_KEY, member);
    bool yes = strcmp(v, "1") == 0;
    free(v);
    return yes;
}

START_TEST(test_seat_in_and_out_move_chips_atomically_and_keep_the_held_record)
{
    money_result_t r;
    set_balance("carol", 1000);
    set_epoch("svc", 3, 7);
    money_seat_t st = seat_of("ts.svc.3.7.a.0", "carol", 7);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &st, 400, "bi:1", &r),
                     MONEY_OK);
    ck_assert_int_eq(r.balances[0], 600);
    ck_assert_int_eq(balance("ts.svc.3.7.a.0"), 400);
    ck_assert_int_eq(held_len(7), 1);
    ck_assert(indexed(7));
    /* A replay answers the first result and moves nothing. */
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &st, 400, "bi:1", &r),
                     MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(balance("carol"), 600);
    /* More than the owner has: refused, nothing moves. */
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &st, 601, "bi:2", &r),
                     MONEY_ERR_INSUFFICIENT);
    ck_assert_int_eq(balance("carol"), 600);
    /* Another owner cannot buy into an account that holds carol's chips. */
    set_balance("dave", 50);
    money_seat_t other = seat_of("ts.svc.3.7.a.0", "dave", 7);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &other, 10, "bi:3", &r),
                     MONEY_ERR_BAD_ARGS);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_OUT, &other, 10, "co:0", &r),
                     MONEY_ERR_BAD_ARGS);
    /* Part of it out, then the rest: the empty account is forgotten. */
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_OUT, &st, 100, "co:1", &r),
                     MONEY_OK);
    ck_assert_int_eq(r.balances[0], 700);
    ck_assert_int_eq(held_len(7), 1);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_OUT, &st, 301, "co:2", &r),
                     MONEY_ERR_INSUFFICIENT);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_OUT, &st, 300, "co:3", &r),
                     MONEY_OK);
    ck_assert_int_eq(balance("carol"), 1000);
    ck_assert_int_eq(balance("ts.svc.3.7.a.0"), 0);
    ck_assert_int_eq(held_len(7), 0);
    /* Malformed: the account is its own owner, amount 0. */
    money_seat_t self = seat_of("carol", "carol", 7);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &self, 1, "bi:4", &r), -EINVAL);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &st, 0, "bi:5", &r), -EINVAL);
}
END_TEST

START_TEST(test_seat_transfers_of_a_lost_epoch_are_refused)
{
    money_result_t r;
    set_balance("erin", 500);
    set_epoch("svc", 3, 7);
    money_seat_t st = seat_of("ts.svc.3.7.a.1", "erin", 7);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &st, 200, "bi:e1", &r),
                     MONEY_OK);
    set_epoch("svc", 3, 8); /* the slot moved on */
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_OUT, &st, 200, "co:e1", &r),
                     MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &st, 100, "bi:e2", &r),
                     MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(balance("erin"), 300);
    ck_assert_int_eq(balance("ts.svc.3.7.a.1"), 200);
}
END_TEST

/* A round record as the table kit writes it (engine/tk_round.c). */
static void mark_round(unsigned epoch, const char *desk, unsigned seq, const char *player)
{
    char key[128], rid[96], json[512];
    money_key_held("svc", 3, epoch, key, sizeof key);
    snprintf(rid, sizeof rid, "svc:3:%u:%ld:%u", epoch, strtol(desk, NULL, 16), seq);
    snprintf(json, sizeof json,
             "{\"round\":\"%s\",\"game\":\"holdem\",\"seats\":[{\"seat\":0,\"player\":\"%s\","
             "\"bot\":false,\"stack\":200}],\"cards\":[],\"actions\":[],\"results\":[]}",
             rid, player);
    free(ts_redis_cmd(redis, "HSET %s r:%s %s", key, desk, json));
}

static long long stream_len(const char *game)
{
    char key[128];
    money_key_stream(game, key, sizeof key);
    char *v = ts_redis_cmd(redis, "XLEN %s", key);
    long long n = atoll(v);
    free(v);
    return n;
}

START_TEST(test_recover_returns_held_chips_once_and_voids_the_round_in_progress)
{
    money_result_t r;
    set_balance("fay", 1000);
    set_balance("gus", 1000);
    set_epoch("svc", 3, 7);
    free(ts_redis_cmd(redis, "SET {croupier:lease:svc}:epoch 7"));
    free(ts_redis_cmd(redis, "SET {croupier:lease:svc}:slot:3 tok PX 60000"));
    money_seat_t a = seat_of("ts.svc.3.7.a.0", "fay", 7), b = seat_of("ts.svc.3.7.a.1", "gus", 7);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &a, 300, "bi:f", &r), MONEY_OK);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &b, 300, "bi:g", &r), MONEY_OK);
    /* Round 1 settles (fay wins 50 from gus); round 2 is in progress when the server dies. */
    money_settlement_t s = {.round = {.server = 3, .epoch = 7, .desk = 10, .seq = 1},
                            .game = "holdem",
                            .nplayers = 2,
                            .players = {"ts.svc.3.7.a.0", "ts.svc.3.7.a.1"},
                            .deltas = {50, -50}};
    ck_assert_int_eq(money_round_id_set_service(&s.round, "svc"), 0);
    ck_assert_int_eq(money_sync_settle(rc, "svc", &s, &r), MONEY_OK);
    mark_round(7, "a", 2, "fay");
    money_recover_result_t out;
    /* Held and fenced: nothing may be recovered, in any mode but the holder's own. */
    ck_assert_int_eq(money_recover(rc, "svc", 3, 7, MONEY_RECOVER_DEAD, NULL, 100, &out),
                     MONEY_ERR_ALIVE);
    ck_assert_int_eq(money_recover(rc, "svc", 3, 7, MONEY_RECOVER_CLAIM, NULL, 100, &out),
                     MONEY_ERR_ALIVE);
    ck_assert_int_eq(balance("fay"), 700);
    /* The lease expires: a claim moves the fence and returns everything. */
    free(ts_redis_cmd(redis, "DEL {croupier:lease:svc}:slot:3"));
    ck_assert_int_eq(money_recover(rc, "svc", 3, 7, MONEY_RECOVER_DEAD, NULL, 100, &out),
                     MONEY_ERR_ALIVE);
    ck_assert_int_eq(money_recover(rc, "svc", 3, 7, MONEY_RECOVER_CLAIM, NULL, 100, &out), 0);
    ck_assert_int_eq(out.chips, 600);
    ck_assert_int_eq(out.accounts, 2);
    ck_assert_int_eq(out.voided, 1);
    ck_assert_uint_eq(out.new_fence, 8);
    ck_assert_int_eq(balance("fay"), 1050);
    ck_assert_int_eq(balance("gus"), 950);
    ck_assert_int_eq(balance("ts.svc.3.7.a.0"), 0);
    ck_assert_int_eq(held_len(7), 0);
    ck_assert(!indexed(7));
    ck_assert_int_eq(stream_len("holdem"), 1);
    char key[128];
    money_key_stream("holdem", key, sizeof key);
    char *v = ts_redis_cmd(redis, "XRANGE %s - +", key);
    ck_assert_ptr_nonnull(strstr(v, "VOID_SERVER_CRASHED"));
    ck_assert_ptr_nonnull(strstr(v, "svc:3:7:10:2"));
    free(v);
    /* The dead server's late writes are refused: settlement, history, seat transfers. */
    s.round.seq = 2;
    ck_assert_int_eq(money_sync_settle(rc, "svc", &s, &r), MONEY_ERR_STALE_EPOCH);
    /* (Round 2's id already holds its void record; a history of it is answered as a replay.) */
    ck_assert_int_eq(money_sync_history(rc, &s.round, "holdem", "{}", 100, &r), MONEY_OK);
    ck_assert(r.replayed);
    s.round.seq = 3;
    ck_assert_int_eq(money_sync_history(rc, &s.round, "holdem", "{}", 100, &r),
                     MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_OUT, &a, 10, "co:late", &r),
                     MONEY_ERR_STALE_EPOCH);
    /* Again, and by a second recoverer: nothing more moves. */
    ck_assert_int_eq(money_recover(rc, "svc", 3, 7, MONEY_RECOVER_DEAD, NULL, 100, &out), 0);
    ck_assert_int_eq(out.chips, 0);
    ck_assert_int_eq(out.voided, 0);
    ck_assert_int_eq(money_recover(rc, "svc", 3, 7, MONEY_RECOVER_CLAIM, NULL, 100, &out), 0);
    ck_assert_int_eq(out.chips, 0);
    ck_assert_uint_eq(out.new_fence, 0);
    ck_assert_int_eq(balance("fay") + balance("gus"), 2000);
    ck_assert_int_eq(stream_len("holdem"), 1);
}
END_TEST

START_TEST(test_recover_self_needs_the_holders_token_and_skips_voids)
{
    money_result_t r;
    set_balance("hal", 100);
    set_epoch("svc", 3, 9);
    free(ts_redis_cmd(redis, "SET {croupier:lease:svc}:slot:3 mine PX 60000"));
    money_seat_t a = seat_of("ts.svc.3.9.b.0", "hal", 9);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &a, 60, "bi:h", &r), MONEY_OK);
    mark_round(9, "b", 1, "hal");
    money_recover_result_t out;
    ck_assert_int_eq(money_recover(rc, "svc", 3, 9, MONEY_RECOVER_SELF, "theirs", 100, &out),
                     MONEY_ERR_ALIVE);
    ck_assert_int_eq(money_recover(rc, "svc", 3, 9, MONEY_RECOVER_SELF, "mine", 100, &out), 0);
    ck_assert_int_eq(out.chips, 60);
    ck_assert_int_eq(out.voided, 0);
    ck_assert_int_eq(balance("hal"), 100);
    ck_assert_int_eq(held_len(9), 0);
    ck_assert_int_eq(stream_len("holdem"), 0);
    /* The fence did not move: the holder goes on. */
    char key[128];
    money_key_epoch("svc", 3, key, sizeof key);
    char *v = ts_redis_cmd(redis, "GET %s", key);
    ck_assert_str_eq(v, "9");
    free(v);
}
END_TEST

START_TEST(test_recover_of_a_slot_taken_again_needs_no_claim_and_races_safely)
{
    money_result_t r;
    set_balance("ivy", 500);
    set_epoch("svc", 3, 4);
    money_seat_t a = seat_of("ts.svc.3.4.c.0", "ivy", 4);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &a, 500, "bi:i", &r), MONEY_OK);
    /* A replacement took the slot (new epoch, lease held): epoch 4 is dead. */
    set_epoch("svc", 3, 5);
    free(ts_redis_cmd(redis, "SET {croupier:lease:svc}:slot:3 new PX 60000"));
    money_recover_result_t out;
    ck_assert_int_eq(money_recover(rc, "svc", 3, 4, MONEY_RECOVER_DEAD, NULL, 100, &out), 0);
    ck_assert_int_eq(out.chips, 500);
    ck_assert_uint_eq(out.new_fence, 0);
    ck_assert_int_eq(money_recover(rc, "svc", 3, 4, MONEY_RECOVER_CLAIM, NULL, 100, &out), 0);
    ck_assert_int_eq(out.chips, 0);
    ck_assert_int_eq(balance("ivy"), 500);
    /* An epoch from the future (a fence behind it) is refused. */
    ck_assert_int_eq(money_recover(rc, "svc", 3, 6, MONEY_RECOVER_DEAD, NULL, 100, &out),
                     MONEY_ERR_BAD_ARGS);
    char svc[65];
    uint32_t slot;
    uint64_t epoch;
    ck_assert_int_eq(money_held_parse("a.b-c:12:345", svc, sizeof svc, &slot, &epoch), 0);
    ck_assert_str_eq(svc, "a.b-c");
    ck_assert_uint_eq(slot, 12);
    ck_assert_uint_eq(epoch, 345);
    ck_assert_int_eq(money_held_parse("12:345", svc, sizeof svc, &slot, &epoch), -EINVAL);
    ck_assert_int_eq(money_held_parse("x:y:1", svc, sizeof svc, &slot, &epoch), -EINVAL);
}
END_TEST

/* Two recoverers (processes) race over the same 30 dead epochs: every chip comes back once. */
START_TEST(test_recover_races_return_every_chip_exactly_once)
{
    money_result_t r;
    enum { EPOCHS = 30, SEATS = 3 };
    for (int e = 1; e <= EPOCHS; e++) {
        char key[128];
        money_key_epoch("svc", (uint32_t)e, key, sizeof key);
        free(ts_redis_cmd(redis, "SET %s 1", key));
        for (int i = 0; i < SEATS; i++) {
            char owner[32], acct[64], op[64];
            snprintf(owner, sizeof owner, "p%d_%d", e, i);
            snprintf(acct, sizeof acct, "ts.svc.%d.1.1.%d", e, i);
            snprintf(op, sizeof op, "bi:%d:%d", e, i);
            set_balance(owner, 100);
            money_seat_t st = {.slot = (uint32_t)e, .epoch = 1, .account = acct, .owner = owner};
            ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &st, 100, op, &r),
                             MONEY_OK);
        }
    }
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        ck_assert_int_ge(kids[k], 0);
        if (kids[k] == 0) {
            struct timeval tv = {5, 0};
            redisContext *c = redisConnectWithTimeout("127.0.0.1", ts_redis_port(redis), tv);
            int bad = c == NULL || c->err != 0;
            for (int e = 1; e <= EPOCHS && !bad; e++) {
                /* One walks forwards, the other backwards: they meet on every epoch. */
                int ep = k == 0 ? e : EPOCHS + 1 - e;
                money_recover_result_t out;
                bad = money_recover(c, "svc", (uint32_t)ep, 1, MONEY_RECOVER_CLAIM, NULL, 100,
                                    &out) != 0;
            }
            redisFree(c);
            _exit(bad);
        }
    }
    for (int k = 0; k < 2; k++) {
        int st;
        ck_assert_int_eq(waitpid(kids[k], &st, 0), kids[k]);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    for (int e = 1; e <= EPOCHS; e++) {
        for (int i = 0; i < SEATS; i++) {
            char owner[32];
            snprintf(owner, sizeof owner, "p%d_%d", e, i);
            ck_assert_int_eq(balance(owner), 100);
        }
        char *v = ts_redis_cmd(redis, "HGET {croupier:money}:recovered:svc:%d:1 chips", e);
        ck_assert_str_eq(v, "300");
        free(v);
        char key[128];
        money_key_epoch("svc", (uint32_t)e, key, sizeof key);
        v = ts_redis_cmd(redis, "GET %s", key);
        ck_assert_int_gt(atoll(v), 1);
        free(v);
    }
    char *v = ts_redis_cmd(redis, "SCARD %s", MONEY_HELD_INDEX_KEY);
    ck_assert_str_eq(v, "0");
    free(v);
}
END_TEST

/* ---- table handoff (money.h "Table handoff") -------------------------------------------- */

/* Seats two players at a table of slot 3 epoch 7 (accounts holding 300 and 200) and offers it. */
static void offer_table(money_offer_t *o, char *id, size_t idlen)
{
    money_result_t r;
    set_balance("kim", 1000);
    set_balance("lee", 1000);
    set_epoch("svc", 3, 7);
    free(ts_redis_cmd(redis, "SET {croupier:lease:svc}:epoch 9"));
    money_seat_t a = seat_of("ts.svc.3.7.d.0", "kim", 7), b = seat_of("ts.svc.3.7.d.2", "lee", 7);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &a, 300, "bi:k", &r), MONEY_OK);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &b, 200, "bi:l", &r), MONEY_OK);
    *o = (money_offer_t){
        .slot = 3, .epoch = 7, .desk = 13, .n = 1, .state = "{\"level\":5}", .nseats = 2};
    o->seats[0] = (money_handoff_seat_t){"ts.svc.3.7.d.0", "kim", 0};
    o->seats[1] = (money_handoff_seat_t){"ts.svc.3.7.d.2", "lee", 2};
    ck_assert_int_eq(money_offer_id("svc", o, id, idlen), 0);
    ck_assert_str_eq(id, "svc:3:7:d:1");
    ck_assert_int_eq(money_sync_offer(rc, "svc", o, &r), MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_int_eq(money_sync_offer(rc, "svc", o, &r), MONEY_OK);
    ck_assert(r.replayed);
}

static const char *const new_accts[2] = {"ts.svc.4.8.e.0", "ts.svc.4.8.e.2"};

START_TEST(test_handoff_adopted_once_moves_every_chip_to_the_new_epoch)
{
    money_offer_t o;
    char id[96];
    offer_table(&o, id, sizeof id);
    money_offer_info_t info;
    ck_assert_int_eq(money_sync_offer_read(rc, id, &info), 0);
    ck_assert_str_eq(info.status, "offered");
    ck_assert_str_eq(info.state, "{\"level\":5}");
    ck_assert_uint_eq(info.nseats, 2);
    ck_assert_str_eq(info.owners[1], "lee");
    ck_assert_int_eq(info.seats[1], 2);
    free(info.state);
    /* The adopter's own fence must be its epoch. */
    money_result_t r;
    int64_t stacks[2] = {0};
    set_epoch("svc", 4, 7);
    ck_assert_msg(money_sync_adopt(rc, id, "svc", 4, 8, 14, new_accts, 2, stacks, &r) ==
                      MONEY_ERR_STALE_EPOCH,
                  "%s", r.error);
    ck_assert_int_eq(balance("ts.svc.3.7.d.0"), 300);
    set_epoch("svc", 4, 8);
    ck_assert_int_eq(money_sync_adopt(rc, id, "svc", 4, 8, 14, new_accts, 2, stacks, &r), MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_int_eq(stacks[0], 300);
    ck_assert_int_eq(stacks[1], 200);
    ck_assert_int_eq(balance("ts.svc.3.7.d.0"), 0);
    ck_assert_int_eq(balance("ts.svc.4.8.e.0"), 300);
    ck_assert_int_eq(balance("ts.svc.4.8.e.2"), 200);
    ck_assert_int_eq(held_len(7), 0); /* the accounts and the h: mark left the old epoch */
    char *v = ts_redis_cmd(redis, "HGET {croupier:money}:held:svc:4:8 ts.svc.4.8.e.2");
    ck_assert_str_eq(v, "lee");
    free(v);
    /* The same adopter again: its first result. Another: refused, nothing moves. */
    ck_assert_int_eq(money_sync_adopt(rc, id, "svc", 4, 8, 14, new_accts, 2, stacks, &r), MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(stacks[1], 200);
    set_epoch("svc", 5, 2);
    const char *other[2] = {"ts.svc.5.2.f.0", "ts.svc.5.2.f.2"};
    ck_assert_int_eq(money_sync_adopt(rc, id, "svc", 5, 2, 1, other, 2, stacks, &r),
                     MONEY_ERR_ADOPTED);
    ck_assert_int_eq(balance("ts.svc.5.2.f.0"), 0);
    /* The new holder's recovery (it died after adopting) returns the chips to the owners. */
    free(ts_redis_cmd(redis, "SET {croupier:lease:svc}:slot:4:epoch 9"));
    money_recover_result_t out;
    ck_assert_int_eq(money_recover(rc, "svc", 4, 8, MONEY_RECOVER_DEAD, NULL, 100, &out), 0);
    ck_assert_int_eq(out.chips, 500);
    ck_assert_int_eq(balance("kim") + balance("lee"), 2000);
    /* A malformed adoption changes nothing. */
    ck_assert_int_eq(money_sync_adopt(rc, id, "svc", 4, 8, 14, new_accts, 1, stacks, &r),
                     MONEY_ERR_BAD_ARGS);
    ck_assert_int_eq(
        money_sync_adopt(rc, "svc:3:7:d:99", "svc", 4, 8, 14, new_accts, 2, stacks, &r),
        MONEY_ERR_NO_OFFER);
}
END_TEST

START_TEST(test_handoff_offer_is_fenced_and_needs_held_accounts)
{
    money_result_t r;
    set_balance("max", 100);
    set_epoch("svc", 3, 7);
    money_seat_t a = seat_of("ts.svc.3.7.d.0", "max", 7);
    ck_assert_int_eq(money_sync_seat(rc, "svc", MONEY_KIND_SEAT_IN, &a, 100, "bi:m", &r), MONEY_OK);
    money_offer_t o = {.slot = 3, .epoch = 7, .desk = 13, .n = 1, .state = "{}", .nseats = 1};
    o.seats[0] = (money_handoff_seat_t){"ts.svc.3.7.d.0", "someone-else", 0};
    ck_assert_int_eq(money_sync_offer(rc, "svc", &o, &r), MONEY_ERR_BAD_ARGS);
    o.seats[0].owner = "max";
    set_epoch("svc", 3, 8);
    ck_assert_int_eq(money_sync_offer(rc, "svc", &o, &r), MONEY_ERR_STALE_EPOCH);
    money_offer_info_t info;
    ck_assert_int_eq(money_sync_offer_read(rc, "svc:3:7:d:1", &info), MONEY_ERR_NO_OFFER);
}
END_TEST

/* The old server dies after its offer: the recovery voids the offer in the same script that
 * returns its accounts, and a late adoption is refused. */
START_TEST(test_handoff_offer_of_a_dead_server_is_voided_by_its_recovery)
{
    money_offer_t o;
    char id[96];
    offer_table(&o, id, sizeof id);
    money_recover_result_t out;
    ck_assert_int_eq(money_recover(rc, "svc", 3, 7, MONEY_RECOVER_CLAIM, NULL, 100, &out), 0);
    ck_assert_int_eq(out.chips, 500);
    money_offer_info_t info;
    ck_assert_int_eq(money_sync_offer_read(rc, id, &info), 0);
    ck_assert_str_eq(info.status, "void");
    free(info.state);
    money_result_t r;
    int64_t stacks[2];
    set_epoch("svc", 4, 8);
    ck_assert_int_eq(money_sync_adopt(rc, id, "svc", 4, 8, 14, new_accts, 2, stacks, &r),
                     MONEY_ERR_OFFER_VOID);
    ck_assert_int_eq(balance("kim"), 1000);
    ck_assert_int_eq(balance("lee"), 1000);
    ck_assert_int_eq(balance("ts.svc.4.8.e.0"), 0);
}
END_TEST

/* Nobody adopted in time: the old server withdraws its offer (fenced); an adoption after that
 * is refused, a withdrawal after an adoption changes nothing, and the chips stay held. */
START_TEST(test_handoff_withdrawn_offer_cannot_be_adopted)
{
    money_offer_t o;
    char id[96];
    offer_table(&o, id, sizeof id);
    money_result_t r;
    char st[16];
    set_epoch("svc", 3, 8);
    ck_assert_int_eq(money_sync_offer_withdraw(rc, "svc", &o, st, &r), MONEY_ERR_STALE_EPOCH);
    set_epoch("svc", 3, 7);
    ck_assert_int_eq(money_sync_offer_withdraw(rc, "svc", &o, st, &r), MONEY_OK);
    ck_assert_str_eq(st, "withdrawn");
    ck_assert(!r.replayed);
    ck_assert_int_eq(money_sync_offer_withdraw(rc, "svc", &o, st, &r), MONEY_OK);
    ck_assert(r.replayed);
    char *v = ts_redis_cmd(redis, "HEXISTS {croupier:money}:held:svc:3:7 h:%s", id);
    ck_assert_str_eq(v, "0");
    free(v);
    ck_assert_int_eq(held_len(7), 2); /* the two seat accounts, still held by the old epoch */
    int64_t stacks[2];
    set_epoch("svc", 4, 8);
    ck_assert_int_eq(money_sync_adopt(rc, id, "svc", 4, 8, 14, new_accts, 2, stacks, &r),
                     MONEY_ERR_OFFER_VOID);
    ck_assert_int_eq(balance("ts.svc.3.7.d.0"), 300);
    ck_assert_int_eq(balance("ts.svc.4.8.e.0"), 0);
    /* An adopted offer: the withdrawal answers "adopted" and moves nothing. */
    o.n = 2;
    ck_assert_int_eq(money_sync_offer(rc, "svc", &o, &r), MONEY_OK);
    char id2[96];
    ck_assert_int_eq(money_offer_id("svc", &o, id2, sizeof id2), 0);
    ck_assert_int_eq(money_sync_adopt(rc, id2, "svc", 4, 8, 14, new_accts, 2, stacks, &r),
                     MONEY_OK);
    ck_assert_int_eq(money_sync_offer_withdraw(rc, "svc", &o, st, &r), MONEY_OK);
    ck_assert_str_eq(st, "adopted");
    ck_assert(r.replayed);
    ck_assert_int_eq(balance("ts.svc.4.8.e.0"), 300);
    o.n = 3;
    ck_assert_int_eq(money_sync_offer_withdraw(rc, "svc", &o, st, &r), MONEY_ERR_NO_OFFER);
}
END_TEST

/* money_jobs: jobs run in order on the thread's connection, each done() once; without Redis
 * a job gets no connection (and says so itself); destroy runs what is still queued. */
typedef struct {
    money_job_t job;
    int n;
    long long seen;
    bool had_conn;
    int *done_count;
    pthread_mutex_t *mu;
} jobs_case_t;

static void jobs_case_run(redisContext *c, money_job_t *job)
{
    jobs_case_t *jc = (jobs_case_t *)job;
    jc->had_conn = c != NULL;
    if (c == NULL)
        return;
    redisReply *r = redisCommand(c, "RPUSH jobs-order %d", jc->n);
    jc->seen = r != NULL && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
}

static void jobs_case_done(money_job_t *job)
{
    jobs_case_t *jc = (jobs_case_t *)job;
    pthread_mutex_lock(jc->mu);
    (*jc->done_count)++;
    pthread_mutex_unlock(jc->mu);
}

START_TEST(test_jobs_run_in_order_and_report_a_missing_redis)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    int done = 0;
    jobs_case_t cases[5];
    money_jobs_t *j = money_jobs_create("127.0.0.1", ts_redis_port(redis));
    ck_assert_ptr_nonnull(j);
    for (int i = 0; i < 5; i++) {
        cases[i] = (jobs_case_t){.job = {.run = jobs_case_run, .done = jobs_case_done},
                                 .n = i,
                                 .done_count = &done,
                                 .mu = &mu};
        ck_assert_int_eq(money_jobs_submit(j, &cases[i].job), 0);
    }
    money_jobs_destroy(j); /* runs the queued jobs first */
    ck_assert_int_eq(done, 5);
    for (int i = 0; i < 5; i++) {
        ck_assert(cases[i].had_conn);
        ck_assert_int_eq(cases[i].seen, i + 1);
    }
    char *v = ts_redis_cmd(redis, "LINDEX jobs-order 4");
    ck_assert_str_eq(v, "4");
    free(v);
    /* A port nobody listens on: the job runs without a connection. */
    int port = ts_free_port();
    j = money_jobs_create("127.0.0.1", port);
    ck_assert_ptr_nonnull(j);
    cases[0].had_conn = true;
    ck_assert_int_eq(money_jobs_submit(j, &cases[0].job), 0);
    money_jobs_destroy(j);
    ck_assert(!cases[0].had_conn);
    ck_assert_int_eq(done, 6);
    ck_assert_ptr_null(money_jobs_create(NULL, 6379));
    ck_assert_ptr_null(money_jobs_create("127.0.0.1", 0));
}
END_TEST

/* Two servers race to adopt one offer (processes): exactly one gets it, every chip moves once. */
START_TEST(test_handoff_two_adopters_racing_one_wins)
{
    money_offer_t o;
    char id[96];
    offer_table(&o, id, sizeof id);
    set_epoch("svc", 4, 8);
    set_epoch("svc", 5, 2);
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        ck_assert_int_ge(kids[k], 0);
        if (kids[k] == 0) {
            struct timeval tv = {5, 0};
            redisContext *c = redisConnectWithTimeout("127.0.0.1", ts_redis_port(redis), tv);
            const char *mine[2][2] = {{"ts.svc.4.8.e.0", "ts.svc.4.8.e.2"},
                                      {"ts.svc.5.2.f.0", "ts.svc.5.2.f.2"}};
            money_result_t r;
            int64_t stacks[2];
            int st = c != NULL && c->err == 0
                         ? money_sync_adopt(c, id, "svc", k == 0 ? 4 : 5, k == 0 ? 8 : 2, 1,
                                            mine[k], 2, stacks, &r)
                         : -EIO;
            redisFree(c);
            _exit(st == MONEY_OK ? 0 : st == MONEY_ERR_ADOPTED ? 1 : 2);
        }
    }
    int won = 0, lost = 0;
    for (int k = 0; k < 2; k++) {
        int st;
        ck_assert_int_eq(waitpid(kids[k], &st, 0), kids[k]);
        ck_assert(WIFEXITED(st));
        won += WEXITSTATUS(st) == 0;
        lost += WEXITSTATUS(st) == 1;
    }
    ck_assert_int_eq(won, 1);
    ck_assert_int_eq(lost, 1);
    ck_assert_int_eq(balance("ts.svc.4.8.e.0") + balance("ts.svc.5.2.f.0"), 300);
    ck_assert_int_eq(balance("ts.svc.4.8.e.2") + balance("ts.svc.5.2.f.2"), 200);
    ck_assert_int_eq(balance("ts.svc.3.7.d.0") + balance("ts.svc.3.7.d.2"), 0);
}
END_TEST

/* ---- operator credits (money.h "Operator credits", docs/ops.md) ---- */

static char *get_key(const char *key)
{
    return ts_redis_cmd(redis, "GET %s", key);
}

START_TEST(test_credit_is_booked_like_a_round_once_per_id)
{
    set_balance("carol", 50);
    money_credit_t cr = {.player = "carol",
                         .amount = 100,
                         .id = "t-1",
                         .reason = "goodwill",
                         .operator_id = 7,
                         .unix_s = 1700000000};
    money_credit_result_t r;
    ck_assert_int_eq(money_sync_credit(rc, &cr, &r), 0);
    ck_assert(!r.replayed && r.balance_known);
    ck_assert_int_eq(r.balance_after, 150);
    ck_assert_str_eq(r.op_id, "ctl:t-1");
    ck_assert_str_eq(r.round_id, "ctl:credit:t-1");
    ck_assert(money_credit_round(r.round_id));
    money_round_id_t rid;
    ck_assert_int_ne(money_round_id_parse(r.round_id, &rid), 0); /* never a server's round */
    char key[256];
    money_key_round(r.round_id, key, sizeof key);
    char *t = get_key(key);
    ck_assert_str_eq(t, "150"); /* the settle records' format: the balance after */
    free(t);
    t = ts_redis_cmd(redis, "TTL %s", key);
    ck_assert_int_gt(atol(t), 600000);
    free(t);
    money_key_rake(MONEY_CREDIT_ACCOUNT, key, sizeof key);
    t = get_key(key);
    ck_assert_str_eq(t, "-100"); /* wallets + rake unchanged */
    free(t);
    t = ts_redis_cmd(redis, "XLEN %s", MONEY_AUDIT_KEY);
    ck_assert_str_eq(t, "1");
    free(t);
    char first_audit[48];
    snprintf(first_audit, sizeof first_audit, "%s", r.audit_id);

    /* The same credit again: the first result, nothing written. */
    ck_assert_int_eq(money_sync_credit(rc, &cr, &r), 0);
    ck_assert(r.replayed);
    ck_assert_int_eq(r.balance_after, 150);
    ck_assert_str_eq(r.audit_id, first_audit);
    ck_assert_int_eq(balance("carol"), 150);
    t = ts_redis_cmd(redis, "XLEN %s", MONEY_AUDIT_KEY);
    ck_assert_str_eq(t, "1");
    free(t);

    /* A debit of the same player under another id. */
    money_credit_t db = cr;
    db.id = "t-2";
    db.amount = -150;
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), 0);
    ck_assert_int_eq(r.balance_after, 0);
    t = get_key(key);
    ck_assert_str_eq(t, "50");
    free(t);
}
END_TEST

START_TEST(test_credit_refusals_change_nothing)
{
    set_balance("dave", 10);
    money_credit_t cr = {
        .player = "dave", .amount = 5, .id = "r-1", .reason = "x", .operator_id = 1, .unix_s = 1};
    money_credit_result_t r;
    ck_assert_int_eq(money_sync_credit(rc, &cr, &r), 0);
    /* The id again for another amount or player: refused, even once the audit entry left the
     * stream (the seen record keeps player and amount). */
    free(ts_redis_cmd(redis, "XTRIM %s MAXLEN 0", MONEY_AUDIT_KEY));
    money_credit_t other = cr;
    other.amount = 6;
    ck_assert_int_eq(money_sync_credit(rc, &other, &r), MONEY_ERR_BAD_ARGS);
    ck_assert_ptr_nonnull(strstr(r.error, "op id was used for 5 chips to dave"));
    other = cr;
    other.player = "erin";
    ck_assert_int_eq(money_sync_credit(rc, &other, &r), MONEY_ERR_BAD_ARGS);
    ck_assert_int_eq(balance("dave"), 15);
    ck_assert_int_eq(balance("erin"), 0);
    /* A debit beyond the balance. */
    money_credit_t db = {
        .player = "dave", .amount = -16, .id = "r-2", .reason = "x", .operator_id = 1, .unix_s = 1};
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), MONEY_ERR_INSUFFICIENT);
    char key[256];
    money_key_round("ctl:credit:r-2", key, sizeof key);
    char *t = ts_redis_cmd(redis, "EXISTS %s %s", key, MONEY_AUDIT_SEEN_PREFIX "ctl:r-2");
    ck_assert_str_eq(t, "0");
    free(t);
    ck_assert_int_eq(balance("dave"), 15);
    /* A wallet or house account that does not hold an integer. */
    money_key_wallet("frank", key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s abc", key));
    db.player = "frank";
    db.amount = 1;
    db.id = "r-3";
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), MONEY_ERR_BAD_ARGS);
    money_key_rake(MONEY_CREDIT_ACCOUNT, key, sizeof key);
    free(ts_redis_cmd(redis, "SET %s 1.5", key));
    db.player = "dave";
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), MONEY_ERR_BAD_ARGS);
    ck_assert_int_eq(balance("dave"), 15);
    /* Bad input never reaches Redis. */
    static const char *const bad_ids[] = {"", "a b", "x/y", NULL};
    for (int i = 0; bad_ids[i] != NULL; i++) {
        db.id = bad_ids[i];
        ck_assert_int_eq(money_sync_credit(rc, &db, &r), -EINVAL);
    }
    char longid[MONEY_CREDIT_ID_MAX + 2];
    memset(longid, 'a', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    db.id = longid;
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), -EINVAL);
    db.id = "r-4";
    db.amount = 0;
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), -EINVAL);
    db.amount = MONEY_MAX_AMOUNT + 1;
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), -EINVAL);
    db.amount = 1;
    db.reason = "tab\there";
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), -EINVAL);
    db.reason = "";
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), -EINVAL);
    db.reason = "ok";
    db.player = "no such!";
    ck_assert_int_eq(money_sync_credit(rc, &db, &r), -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("money_redis");
    TCase *tc = tcase_create("wallet");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_wallet_buyin_debits_once_per_op_id);
    tcase_add_test(tc, test_wallet_buyin_over_balance_is_refused_and_changes_nothing);
    tcase_add_test(tc, test_wallet_cashout_credits_once_per_op_id);
    suite_add_tcase(s, tc);
    tc = tcase_create("credit");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_credit_is_booked_like_a_round_once_per_id);
    tcase_add_test(tc, test_credit_refusals_change_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("settle");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_settle_applies_all_deltas_and_the_rake);
    tcase_add_test(tc, test_settle_same_numbers_in_two_services_both_apply);
    tcase_add_test(tc, test_settle_replay_returns_first_result_without_applying_again);
    tcase_add_test(tc, test_settle_stale_epoch_is_rejected_and_changes_nothing);
    tcase_add_test(tc, test_settle_deltas_not_summing_to_minus_rake_are_rejected);
    tcase_add_test(tc, test_settle_that_would_make_a_wallet_negative_is_rejected);
    tcase_add_test(tc, test_settle_survives_a_script_flush);
    tcase_add_test(tc, test_settle_batch_applies_each_round_on_its_own);
    tcase_add_test(tc, test_settle_batch_rounds_see_the_earlier_rounds_balances);
    tcase_add_test(tc, test_settle_batch_with_two_fences_judges_each_round_by_its_own);
    tcase_add_test(tc, test_settle_rake_account_that_is_not_an_integer_rejects_the_round);
    tcase_add_test(tc, test_settle_batch_of_many_distinct_wallets_applies_every_round);
    suite_add_tcase(s, tc);
    tc = tcase_create("history");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_history_is_appended_once_per_round_and_capped);
    suite_add_tcase(s, tc);
    tc = tcase_create("held");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_seat_in_and_out_move_chips_atomically_and_keep_the_held_record);
    tcase_add_test(tc, test_seat_transfers_of_a_lost_epoch_are_refused);
    tcase_add_test(tc, test_recover_returns_held_chips_once_and_voids_the_round_in_progress);
    tcase_add_test(tc, test_recover_self_needs_the_holders_token_and_skips_voids);
    tcase_add_test(tc, test_recover_of_a_slot_taken_again_needs_no_claim_and_races_safely);
    tcase_add_test(tc, test_recover_races_return_every_chip_exactly_once);
    suite_add_tcase(s, tc);
    tc = tcase_create("handoff");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_handoff_adopted_once_moves_every_chip_to_the_new_epoch);
    tcase_add_test(tc, test_handoff_offer_is_fenced_and_needs_held_accounts);
    tcase_add_test(tc, test_handoff_offer_of_a_dead_server_is_voided_by_its_recovery);
    tcase_add_test(tc, test_handoff_two_adopters_racing_one_wins);
    tcase_add_test(tc, test_handoff_withdrawn_offer_cannot_be_adopted);
    tcase_add_test(tc, test_jobs_run_in_order_and_report_a_missing_redis);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
