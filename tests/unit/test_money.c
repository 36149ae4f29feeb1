/* Unit tests for money/: round ids, validation, commands, reply parsing, hand histories. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "keytag.h"
#include "lease.h"
#include "money.h"

START_TEST(test_money_round_id_round_trips)
{
    money_round_id_t id = {.server = 7, .epoch = 42, .desk = 1234567890123ULL, .seq = 99}, back;
    char buf[MONEY_ID_MAX + 1];
    ck_assert_int_eq(money_round_id_format(&id, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "7:42:1234567890123:99");
    ck_assert_int_eq(money_round_id_parse(buf, &back), 0);
    ck_assert_uint_eq(back.server, 7);
    ck_assert_uint_eq(back.epoch, 42);
    ck_assert_uint_eq(back.desk, 1234567890123ULL);
    ck_assert_uint_eq(back.seq, 99);
    char tiny[5];
    ck_assert_int_eq(money_round_id_format(&id, tiny, sizeof tiny), -ENOSPC);
}
END_TEST

START_TEST(test_money_round_id_parse_rejects_garbage)
{
    money_round_id_t id;
    const char *bad[] = {"",
                         "1:2:3",
                         "1:2:3:4:5",
                         "a:2:3:4",
                         "1:2:3:4x",
                         "4294967296:1:1:1",
                         "1:18446744073709551616:1:1",
                         "1::3:4",
                         "-1:2:3:4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(money_round_id_parse(bad[i], &id) == -EINVAL, "accepted %s", bad[i]);
}
END_TEST

START_TEST(test_money_names_are_validated)
{
    ck_assert(money_valid_player("p-1_a.b"));
    ck_assert(!money_valid_player(""));
    ck_assert(!money_valid_player(NULL));
    ck_assert(!money_valid_player("has space"));
    ck_assert(!money_valid_player("brace}"));
    ck_assert(!money_valid_player("colon:"));
    char long_name[80];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    ck_assert(!money_valid_player(long_name));
    long_name[MONEY_NAME_MAX] = '\0';
    ck_assert(money_valid_player(long_name));
    ck_assert(money_valid_op_id("buyin:p1:17"));
    ck_assert(!money_valid_op_id("x y"));
}
END_TEST

static money_settlement_t sample(void)
{
    money_settlement_t s = {.round = {.server = 1, .epoch = 2, .desk = 3, .seq = 4},
                            .game = "ddz",
                            .nplayers = 3,
                            .rake = 10};
    s.players[0] = "a";
    s.players[1] = "b";
    s.players[2] = "c";
    s.deltas[0] = 100;
    s.deltas[1] = -60;
    s.deltas[2] = -50;
    return s;
}

START_TEST(test_money_settlement_check_explains_structural_errors)
{
    char err[160];
    money_settlement_t s = sample();
    ck_assert_int_eq(money_settlement_check(&s, err, sizeof err), 0);
    s.players[2] = "a";
    ck_assert_int_eq(money_settlement_check(&s, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "twice"));
    s = sample();
    s.nplayers = 0;
    ck_assert_int_eq(money_settlement_check(&s, err, sizeof err), -EINVAL);
    s = sample();
    s.rake = -1;
    ck_assert_int_eq(money_settlement_check(&s, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "rake"));
    s = sample();
    s.deltas[1] = MONEY_MAX_AMOUNT + 1;
    ck_assert_int_eq(money_settlement_check(&s, err, sizeof err), -EINVAL);
    s = sample();
    s.game = "bad game";
    ck_assert_int_eq(money_settlement_check(&s, err, sizeof err), -EINVAL);
    /* The sum is the script's to judge: a bad sum passes the structural check. */
    s = sample();
    s.deltas[0] = 0;
    ck_assert_int_eq(money_settlement_check(&s, err, sizeof err), 0);
}
END_TEST

START_TEST(test_money_settle_command_carries_every_key_and_argument)
{
    money_settlement_t s = sample();
    char *cmd;
    size_t len;
    ck_assert_int_eq(money_cmd_settle("game", &s, 0, &cmd, &len), 0);
    /* EVALSHA sha numkeys + 3 fixed keys + 3 wallets + ttl n epoch rake + 3 deltas = 16 args. */
    ck_assert(strncmp(cmd, "*16\r\n", 5) == 0);
    ck_assert_ptr_nonnull(memmem(cmd, len, money_script_sha(0), 40));
    ck_assert_ptr_nonnull(memmem(cmd, len, "{croupier:money}:round:1:2:3:4", 30));
    ck_assert_ptr_nonnull(memmem(cmd, len, "{croupier:lease:game}:slot:1:epoch", 34));
    ck_assert_ptr_nonnull(memmem(cmd, len, "{croupier:money}:wallet:c", 25));
    free(cmd);
    s.players[1] = "no spaces allowed";
    ck_assert_int_eq(money_cmd_settle("game", &s, 0, &cmd, &len), -EINVAL);
    ck_assert_int_eq(money_cmd_wallet(MONEY_KIND_BUYIN, "p", 0, "op1", 0, &cmd, &len), -EINVAL);
    ck_assert_int_eq(money_cmd_wallet(MONEY_KIND_SETTLE, "p", 5, "op1", 0, &cmd, &len), -EINVAL);
    ck_assert_int_eq(money_cmd_history("1:2:3", "ddz", "{}", 10, 0, &cmd, &len), -EINVAL);
}
END_TEST

START_TEST(test_money_op_splits_keys_from_arguments)
{
    money_settlement_t s = sample();
    money_op_t op;
    ck_assert_int_eq(money_op_settle("game", &s, &op), 0);
    /* Keys: round, fence, rake, 3 wallets; arguments: n, epoch, rake, 3 deltas (no ttl). */
    ck_assert_int_eq(op.nkeys, 6);
    ck_assert_int_eq(op.argc, 12);
    ck_assert_str_eq(op.argv[0], "{croupier:money}:round:1:2:3:4");
    ck_assert_str_eq(op.argv[1], "{croupier:lease:game}:slot:1:epoch");
    ck_assert_str_eq(op.argv[5], "{croupier:money}:wallet:c");
    ck_assert_str_eq(op.argv[6], "3");
    ck_assert_str_eq(op.argv[7], "2");
    ck_assert_str_eq(op.argv[8], "10");
    ck_assert_str_eq(op.argv[11], "-50");
    ck_assert_uint_eq(op.lens[11], 3);
    ck_assert_str_eq(money_script_text(op.script), money_script_text(0));
    money_op_free(&op);
    ck_assert_int_eq(money_op_wallet(MONEY_KIND_CASHOUT, "p1", 5, "op:1", 60, &op), 0);
    ck_assert_int_eq(op.nkeys, 2);
    ck_assert_int_eq(op.argc, 5);
    ck_assert_str_eq(op.argv[2], "credit");
    money_op_free(&op);
    ck_assert_int_eq(money_op_history("1:2:3", "ddz", "{}", 10, 60, NULL, 0, &op), -EINVAL);
    s.players[0] = "";
    ck_assert_int_eq(money_op_settle("game", &s, &op), -EINVAL);
}
END_TEST

/* Appends op->argv[from, to) as RESP bulk strings to buf; returns the length. */
static size_t op_resp(const money_op_t *op, int from, int to, char *buf)
{
    size_t off = 0;
    for (int i = from; i < to; i++) {
        off += (size_t)sprintf(buf + off, "$%zu\r\n", op->lens[i]);
        memcpy(buf + off, op->argv[i], op->lens[i]);
        off += op->lens[i];
        memcpy(buf + off, "\r\n", 2);
        off += 2;
        ck_assert_uint_eq(strlen(op->argv[i]), op->lens[i]); /* NUL-terminated for logs */
    }
    return off;
}

/* The settle op (built without printf) carries exactly the keys and arguments of the
 * printf-built batch parts, at the extremes too: 16 players with 64-character ids, the largest
 * ids and amounts, negative deltas. */
START_TEST(test_money_op_settle_matches_the_batch_parts)
{
    static char names[MONEY_MAX_PLAYERS][MONEY_NAME_MAX + 1];
    for (int i = 0; i < MONEY_MAX_PLAYERS; i++) {
        memset(names[i], 'a' + i, MONEY_NAME_MAX);
        names[i][MONEY_NAME_MAX] = '\0';
    }
    money_settlement_t cases[3];
    cases[0] = sample();
    cases[1] = (money_settlement_t){
        .round = {.server = UINT32_MAX, .epoch = UINT64_MAX, .desk = UINT64_MAX, .seq = UINT64_MAX},
        .game = names[0],
        .nplayers = MONEY_MAX_PLAYERS,
        .rake = MONEY_MAX_AMOUNT};
    for (int i = 0; i < MONEY_MAX_PLAYERS; i++) {
        cases[1].players[i] = names[i];
        cases[1].deltas[i] = i % 2 ? -MONEY_MAX_AMOUNT : MONEY_MAX_AMOUNT - i;
    }
    cases[2] = (money_settlement_t){.round = {.server = 0, .epoch = 0, .desk = 0, .seq = 0},
                                    .game = "g",
                                    .nplayers = 1,
                                    .players = {"p"},
                                    .deltas = {0}};
    for (int c = 0; c < 3; c++) {
        money_op_t op;
        money_settle_parts_t parts;
        ck_assert_int_eq(money_op_settle("svc-1", &cases[c], &op), 0);
        ck_assert_int_eq(money_settle_parts("svc-1", &cases[c], &parts), 0);
        ck_assert_int_eq(op.nkeys, parts.nkeys);
        ck_assert_int_eq(op.argc - op.nkeys, parts.nargs);
        char *buf = malloc(op.argc * 200);
        size_t kl = op_resp(&op, 0, op.nkeys, buf);
        ck_assert_uint_eq(kl, parts.keys_len);
        ck_assert(memcmp(buf, parts.buf, kl) == 0);
        size_t al = op_resp(&op, op.nkeys, op.argc, buf);
        ck_assert_uint_eq(al, parts.args_len);
        ck_assert(memcmp(buf, parts.buf + parts.keys_len, al) == 0);
        free(buf);
        free(parts.buf);
        money_op_free(&op);
    }
    ck_assert_int_eq(money_op_settle("no spaces", &cases[0], &(money_op_t){0}), -EINVAL);
}
END_TEST

START_TEST(test_money_fence_key_is_the_lease_fence)
{
    char mine[160], theirs[160];
    ck_assert_int_eq(money_key_epoch("game-a", 17, mine, sizeof mine), 0);
    ck_assert_int_gt(lease_format_fence_key("game-a", 17, theirs, sizeof theirs), 0);
    ck_assert_str_eq(mine, theirs);
}
END_TEST

START_TEST(test_money_script_shas_are_distinct_hex)
{
    for (int i = 0; i < MONEY_NSCRIPTS; i++) {
        const char *sha = money_script_sha(i);
        ck_assert_uint_eq(strlen(sha), 40);
        ck_assert_uint_eq(strspn(sha, "0123456789abcdef"), 40);
        for (int j = 0; j < i; j++)
            ck_assert_str_ne(sha, money_script_sha(j));
    }
    ck_assert_ptr_null(money_script_sha(MONEY_NSCRIPTS));
}
END_TEST

static redisReply *mk(int type, const char *str, long long integer)
{
    redisReply *r = calloc(1, sizeof *r);
    r->type = type;
    r->integer = integer;
    if (str) {
        r->str = strdup(str);
        r->len = strlen(str);
    }
    return r;
}

static redisReply *mk_pair(long long flag, const char *value)
{
    redisReply *r = mk(REDIS_REPLY_ARRAY, NULL, 0);
    r->elements = 2;
    r->element = calloc(2, sizeof *r->element);
    r->element[0] = mk(REDIS_REPLY_INTEGER, NULL, flag);
    r->element[1] = mk(REDIS_REPLY_STRING, value, 0);
    return r;
}

static void free_mk(redisReply *r)
{
    for (size_t i = 0; i < r->elements; i++)
        free_mk(r->element[i]);
    free(r->element);
    free(r->str);
    free(r);
}

START_TEST(test_money_reply_parse_maps_results_and_errors)
{
    money_result_t out;
    /* A settle reply is a batch: one {flag, value} per round. */
    redisReply *r = mk(REDIS_REPLY_ARRAY, NULL, 0);
    r->elements = 1;
    r->element = calloc(1, sizeof *r->element);
    r->element[0] = mk_pair(1, "190 40 -3");
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_SETTLE, r, &out), MONEY_REPLY_DONE);
    ck_assert_int_eq(out.status, MONEY_OK);
    ck_assert(!out.replayed);
    ck_assert_uint_eq(out.nbalances, 3);
    ck_assert_int_eq(out.balances[0], 190);
    ck_assert_int_eq(out.balances[2], -3);
    free_mk(r);

    r = mk_pair(0, "5");
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_BUYIN, r, &out), MONEY_REPLY_DONE);
    ck_assert(out.replayed);
    ck_assert_int_eq(out.balances[0], 5);
    free_mk(r);

    r = mk_pair(1, "1700000000000-0");
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_HISTORY, r, &out), MONEY_REPLY_DONE);
    ck_assert_str_eq(out.stream_id, "1700000000000-0");
    free_mk(r);

    r = mk(REDIS_REPLY_ERROR, "MONEY_BAD_SUM deltas sum to 5 but must sum to 0", 0);
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_SETTLE, r, &out), MONEY_REPLY_DONE);
    ck_assert_int_eq(out.status, MONEY_ERR_BAD_SUM);
    ck_assert_ptr_nonnull(strstr(out.error, "sum to 5"));
    free_mk(r);

    r = mk(REDIS_REPLY_ERROR, "NOSCRIPT No matching script", 0);
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_SETTLE, r, &out), MONEY_REPLY_RETRY);
    free_mk(r);
    r = mk(REDIS_REPLY_ERROR, "LOADING Redis is loading", 0);
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_SETTLE, r, &out), MONEY_REPLY_RETRY);
    free_mk(r);
    /* "Redis refuses writes for a while", as Redis 7 words it from inside a script: one rule,
     * sent again later (docs/queues.md "When Redis refuses writes"). */
    static const char *const refusals[] = {
        "OOM command not allowed when used memory > 'maxmemory'. script: 41d0, on @user_script:1.",
        "NOREPLICAS Not enough good replicas to write. script: 41d0, on @user_script:1.",
        ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
         "persist to disk."),
        "READONLY You can't write against a read only replica. script: 41d0, on @user_script:1.",
    };
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        r = mk(REDIS_REPLY_ERROR, refusals[i], 0);
        ck_assert_msg(money_reply_parse(MONEY_KIND_SETTLE, r, &out) == MONEY_REPLY_RETRY, "%s",
                      refusals[i]);
        ck_assert_int_eq(out.status, -EAGAIN);
        free_mk(r);
        r = mk(REDIS_REPLY_ERROR, refusals[i], 0);
        ck_assert_int_eq(money_reply_parse(MONEY_KIND_SEAT_IN, r, &out), MONEY_REPLY_RETRY);
        free_mk(r);
    }
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_SETTLE, NULL, &out), MONEY_REPLY_RETRY);

    r = mk_pair(-1, "MONEY_STALE_EPOCH round epoch 2, current 3");
    ck_assert_int_eq(money_reply_parse_entry(MONEY_KIND_SETTLE, r, &out), MONEY_REPLY_DONE);
    ck_assert_int_eq(out.status, MONEY_ERR_STALE_EPOCH);
    free_mk(r);

    r = mk_pair(1, "12 x");
    ck_assert_int_eq(money_reply_parse_entry(MONEY_KIND_SETTLE, r, &out), MONEY_REPLY_DONE);
    ck_assert_int_eq(out.status, MONEY_ERR_REDIS);
    free_mk(r);
    r = mk(REDIS_REPLY_INTEGER, NULL, 3);
    ck_assert_int_eq(money_reply_parse(MONEY_KIND_SETTLE, r, &out), MONEY_REPLY_DONE);
    ck_assert_int_eq(out.status, MONEY_ERR_REDIS);
    free_mk(r);
}
END_TEST

START_TEST(test_money_history_builder_makes_a_replayable_record)
{
    money_round_id_t id = {.server = 1, .epoch = 2, .desk = 3, .seq = 4};
    json_t *h = money_history_new(&id, "holdem");
    ck_assert_ptr_nonnull(h);
    ck_assert(money_history_valid(h));
    ck_assert_int_eq(money_history_add_seat(h, 0, "p1", false, 1000), 0);
    ck_assert_int_eq(money_history_add_seat(h, 1, "bot7", true, 800), 0);
    ck_assert_int_eq(money_history_add_card(h, 0, "As"), 0);
    ck_assert_int_eq(money_history_add_card(h, -1, "Kd"), 0);
    ck_assert_int_eq(money_history_add_action(h, 1, "raise", 40), 0);
    ck_assert_int_eq(money_history_add_result(h, 0, -40), 0);
    ck_assert_int_eq(money_history_add_card(h, -2, "Kd"), -EINVAL);
    ck_assert_int_eq(money_history_add_seat(NULL, 0, "p", false, 1), -EINVAL);
    ck_assert_str_eq(json_string_value(json_object_get(h, "round")), "1:2:3:4");
    /* the settlement's id replaces it (a newer epoch after a lease regain) */
    money_round_id_t later = {.server = 1, .epoch = 5, .desk = 3, .seq = 4};
    ck_assert_int_eq(money_round_id_set_service(&later, "holdem"), 0);
    ck_assert_int_eq(money_history_set_round(h, &later), 0);
    ck_assert_str_eq(json_string_value(json_object_get(h, "round")), "holdem:1:5:3:4");
    ck_assert_int_eq(money_history_set_round(NULL, &later), -EINVAL);
    ck_assert(money_history_valid(h));
    json_t *seats = json_object_get(h, "seats");
    ck_assert_uint_eq(json_array_size(seats), 2);
    ck_assert(json_is_true(json_object_get(json_array_get(seats, 1), "bot")));
    ck_assert_uint_eq(json_array_size(json_object_get(h, "cards")), 2);
    json_object_del(h, "actions");
    ck_assert(!money_history_valid(h));
    json_decref(h);
    ck_assert_ptr_null(money_history_new(&id, "bad game"));
}
END_TEST

/*
 * docs/hand-history.md "The shoe index": the commitments a record reveals (each once, only
 * well-formed ones), and the history script's call with them: the index keys after the fence,
 * their number last; a round id without a service gets empty epoch and mode placeholders; on a
 * Redis Cluster every key carries the money slot's hash tag, as the stream and the fence do.
 */
START_TEST(test_money_history_indexes_the_shoes_it_reveals)
{
    static const char c1[] = "1111111111111111111111111111111111111111111111111111111111111111",
                      c2[] = "2222222222222222222222222222222222222222222222222222222222222222";
    json_t *h =
        json_pack("{s:[{s:s},{s:s},{s:s},{s:i},{s:s}]}", "shoe_reveal", "commitment", c1,
                  "commitment", "ABCD", "commitment", c1, "commitment", 7, "commitment", c2);
    const char *shoes[MONEY_HISTORY_SHOES_MAX];
    ck_assert_uint_eq(money_history_shoes(h, shoes, MONEY_HISTORY_SHOES_MAX), 2);
    ck_assert_str_eq(shoes[0], c1);
    ck_assert_str_eq(shoes[1], c2);
    ck_assert_uint_eq(money_history_shoes(h, shoes, 1), 1);
    json_t *none = json_object();
    ck_assert_uint_eq(money_history_shoes(none, shoes, MONEY_HISTORY_SHOES_MAX), 0);
    json_decref(none);
    money_history_shoes(h, shoes, MONEY_HISTORY_SHOES_MAX);

    money_op_t op;
    ck_assert_int_eq(money_op_history("bj:1:3:5:9", "blackjack", "{}", 10, 60, shoes, 2, &op), 0);
    ck_assert_int_eq(op.nkeys, 5);
    ck_assert_str_eq(op.argv[0], "{croupier:history:blackjack}:stream");
    ck_assert_str_eq(op.argv[1], "{croupier:history:blackjack}:seen:bj:1:3:5:9");
    ck_assert_str_eq(op.argv[2], "{croupier:lease:bj}:slot:1:epoch");
    ck_assert_str_eq(op.argv[3],
                     "{croupier:history:blackjack}:seen:shoe:"
                     "1111111111111111111111111111111111111111111111111111111111111111");
    ck_assert_int_eq(op.argc, 5 + 7);
    ck_assert_str_eq(op.argv[op.nkeys + 4], "3");    /* the epoch */
    ck_assert_str_eq(op.argv[op.nkeys + 5], "live"); /* the mode */
    ck_assert_str_eq(op.argv[op.nkeys + 6], "2");    /* two index keys */
    money_op_free(&op);
    /* No service, no fence: placeholders for the epoch and the mode. */
    ck_assert_int_eq(money_op_history("1:3:5:9", "blackjack", "{}", 10, 60, shoes, 1, &op), 0);
    ck_assert_int_eq(op.nkeys, 3);
    ck_assert_int_eq(op.argc, 3 + 7);
    ck_assert_str_eq(op.argv[op.nkeys + 4], "");
    ck_assert_str_eq(op.argv[op.nkeys + 5], "");
    ck_assert_str_eq(op.argv[op.nkeys + 6], "1");
    money_op_free(&op);
    /* Without shoes: the call as it always was. */
    ck_assert_int_eq(money_op_history("bj:1:3:5:9", "blackjack", "{}", 10, 60, NULL, 0, &op), 0);
    ck_assert_int_eq(op.nkeys, 3);
    ck_assert_int_eq(op.argc, 3 + 6);
    money_op_free(&op);
    /* A malformed commitment, too many shoes: refused. */
    const char *bad[] = {"ABCD"};
    ck_assert_int_eq(money_op_history("bj:1:3:5:9", "blackjack", "{}", 10, 60, bad, 1, &op),
                     -EINVAL);
    const char *many[MONEY_HISTORY_SHOES_MAX + 1];
    for (size_t i = 0; i <= MONEY_HISTORY_SHOES_MAX; i++)
        many[i] = c1;
    ck_assert_int_eq(money_op_history("bj:1:3:5:9", "blackjack", "{}", 10, 60, many,
                                      MONEY_HISTORY_SHOES_MAX + 1, &op),
                     -EINVAL);
    /* On a cluster: one hash tag for every key. */
    keytag_set_cluster(true);
    ck_assert_int_eq(money_op_history("bj:1:3:5:9", "blackjack", "{}", 10, 60, shoes, 2, &op), 0);
    for (int i = 0; i < op.nkeys; i++)
        ck_assert_msg(strncmp(op.argv[i], "{croupier:money}:", 17) == 0, "key %s", op.argv[i]);
    money_op_free(&op);
    keytag_set_cluster(false);
    json_decref(h);
}
END_TEST

START_TEST(test_round_id_with_service_formats_and_parses_both_forms)
{
    money_round_id_t id = {.server = 3, .epoch = 7, .desk = 12, .seq = 40};
    char buf[MONEY_ID_MAX + 1];
    ck_assert_int_eq(money_round_id_format(&id, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "3:7:12:40");
    ck_assert_int_eq(money_round_id_set_service(&id, "bad:name"), -EINVAL);
    ck_assert_int_eq(money_round_id_set_service(&id, NULL), -EINVAL);
    ck_assert_str_eq(id.service, "");
    ck_assert_int_eq(money_round_id_set_service(&id, "game-traditional"), 0);
    ck_assert_int_eq(money_round_id_format(&id, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "game-traditional:3:7:12:40");
    money_round_id_t back;
    ck_assert_int_eq(money_round_id_parse(buf, &back), 0);
    ck_assert_str_eq(back.service, "game-traditional");
    ck_assert_uint_eq(back.server, 3);
    ck_assert_uint_eq(back.epoch, 7);
    ck_assert_uint_eq(back.desk, 12);
    ck_assert_uint_eq(back.seq, 40);
    ck_assert_int_eq(money_round_id_parse("3:7:12:40", &back), 0);
    ck_assert_str_eq(back.service, "");
    ck_assert_int_eq(money_round_id_parse("1:3:7:12:40", &back), -EINVAL); /* starts with a digit */
    ck_assert_int_eq(money_round_id_set_service(&back, "9lives"), -EINVAL);
    ck_assert_int_eq(money_round_id_parse(":3:7:12:40", &back), -EINVAL);
    ck_assert_int_eq(money_round_id_parse("svc:3:7:12", &back), -EINVAL);
    ck_assert_int_eq(money_round_id_parse("s c:3:7:12:40", &back), -EINVAL);
    /* the longest service and numbers fit MONEY_ID_MAX */
    money_round_id_t big = {
        .server = UINT32_MAX, .epoch = UINT64_MAX, .desk = UINT64_MAX, .seq = UINT64_MAX};
    memset(big.service, 'x', MONEY_NAME_MAX);
    big.service[MONEY_NAME_MAX] = '\0';
    ck_assert_int_eq(money_round_id_format(&big, buf, sizeof buf), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("money");
    TCase *tc = tcase_create("ids");
    tcase_add_test(tc, test_money_round_id_round_trips);
    tcase_add_test(tc, test_money_round_id_parse_rejects_garbage);
    tcase_add_test(tc, test_round_id_with_service_formats_and_parses_both_forms);
    tcase_add_test(tc, test_money_names_are_validated);
    suite_add_tcase(s, tc);
    tc = tcase_create("commands");
    tcase_add_test(tc, test_money_settlement_check_explains_structural_errors);
    tcase_add_test(tc, test_money_settle_command_carries_every_key_and_argument);
    tcase_add_test(tc, test_money_script_shas_are_distinct_hex);
    tcase_add_test(tc, test_money_fence_key_is_the_lease_fence);
    tcase_add_test(tc, test_money_op_splits_keys_from_arguments);
    tcase_add_test(tc, test_money_op_settle_matches_the_batch_parts);
    tcase_add_test(tc, test_money_reply_parse_maps_results_and_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("history");
    tcase_add_test(tc, test_money_history_builder_makes_a_replayable_record);
    tcase_add_test(tc, test_money_history_indexes_the_shoes_it_reveals);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
