/* money/ scripts against a real redis-server: wallets, settlement, fencing, histories. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    money_settlement_t s = {.round = {1, epoch, 77, seq}, .game = "ddz", .nplayers = 3, .rake = 10};
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

START_TEST(test_history_is_appended_once_per_round_and_capped)
{
    money_round_id_t id = {1, 5, 77, 1};
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
    tc = tcase_create("settle");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_settle_applies_all_deltas_and_the_rake);
    tcase_add_test(tc, test_settle_replay_returns_first_result_without_applying_again);
    tcase_add_test(tc, test_settle_stale_epoch_is_rejected_and_changes_nothing);
    tcase_add_test(tc, test_settle_deltas_not_summing_to_minus_rake_are_rejected);
    tcase_add_test(tc, test_settle_that_would_make_a_wallet_negative_is_rejected);
    tcase_add_test(tc, test_settle_survives_a_script_flush);
    tcase_add_test(tc, test_settle_batch_applies_each_round_on_its_own);
    suite_add_tcase(s, tc);
    tc = tcase_create("history");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_history_is_appended_once_per_round_and_capped);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
