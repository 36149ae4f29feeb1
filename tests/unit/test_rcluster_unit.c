/*
 * rcluster_unit: the parts of the Redis Cluster client (common/rcluster.h) that need no server:
 * CRC16 and key slots against the values of the Redis Cluster spec and of a real redis-server's
 * CLUSTER KEYSLOT (taken once from redis-server 7.0.15; test_rcluster.c compares with a live
 * cluster), the --redis-cluster seed list, and the parsers of CLUSTER SLOTS answers and of
 * MOVED / ASK redirections (fed RESP text through hiredis's own reader).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "keytag.h"
#include "rcluster.h"
#include "rcluster_map.h"

START_TEST(test_crc16_matches_the_spec_check_value)
{
    /* the spec's reference: CRC16 of "123456789" is 0x31C3 (XMODEM) */
    ck_assert_uint_eq(rcluster_crc16("123456789", 9), 0x31C3);
    ck_assert_uint_eq(rcluster_crc16("", 0), 0);
    ck_assert_uint_eq(rcluster_key_slot("123456789", 9), 0x31C3 & 16383);
}
END_TEST

static unsigned slot_of(const char *k)
{
    return rcluster_key_slot(k, strlen(k));
}

START_TEST(test_key_slots_match_redis_keyslot)
{
    /* CLUSTER KEYSLOT answers of redis-server 7.0.15 */
    ck_assert_uint_eq(slot_of("somekey"), 11058);
    ck_assert_uint_eq(slot_of("foo"), 12182);
    ck_assert_uint_eq(slot_of("bar"), 5061);
    ck_assert_uint_eq(slot_of("foo{hash_tag}"), 2515);
    ck_assert_uint_eq(slot_of("{user1000}.following"), 3443);
    ck_assert_uint_eq(slot_of(""), 0);
}
END_TEST

START_TEST(test_hash_tag_rules)
{
    /* only what lies between the first { and the next } is hashed */
    ck_assert_uint_eq(slot_of("{user1000}.following"), slot_of("{user1000}.followers"));
    ck_assert_uint_eq(slot_of("{user1000}.following"), slot_of("user1000"));
    ck_assert_uint_eq(slot_of("foo{bar}{zap}"), slot_of("bar"));
    ck_assert_uint_eq(slot_of("foo{bar}{zap}"), 5061);
    /* "{{bar}}": from the first {, so the tag is "{bar" */
    ck_assert_uint_eq(slot_of("foo{{bar}}zap"), slot_of("{bar"));
    ck_assert_uint_eq(slot_of("foo{{bar}}zap"), 4015);
    /* an empty tag, a { without }, a } before the {: the whole key is hashed */
    ck_assert_uint_eq(slot_of("foo{}{bar}"), 8363);
    ck_assert_uint_eq(slot_of("foo{}{bar}"), rcluster_crc16("foo{}{bar}", 10) & 16383);
    ck_assert_uint_eq(slot_of("{}"), 15257);
    ck_assert_uint_eq(slot_of("{"), 4092);
    ck_assert_uint_eq(slot_of("a{b"), 13340);
    ck_assert_uint_eq(slot_of("}{a}"), 15495);
    ck_assert_uint_eq(slot_of("}{a}"), slot_of("a"));
    /* binary keys: the length counts, not a NUL */
    ck_assert_uint_eq(rcluster_key_slot("x\0{a}", 5), slot_of("a"));
    ck_assert_uint_ne(rcluster_key_slot("x\0y", 3), slot_of("x"));
}
END_TEST

START_TEST(test_seed_lists_parse)
{
    char err[256];
    config_addr_t *a = NULL;
    int n = rcluster_seeds_parse("127.0.0.1:7000,[::1]:7001,10.0.0.3:65535", &a, err, sizeof err);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(a[0].host, "127.0.0.1");
    ck_assert_int_eq(a[0].port, 7000);
    ck_assert_str_eq(a[1].host, "::1");
    ck_assert_int_eq(a[1].port, 7001);
    ck_assert_int_eq(a[2].port, 65535);
    free(a);
    n = rcluster_seeds_parse("127.0.0.1:7000", &a, err, sizeof err);
    ck_assert_int_eq(n, 1);
    free(a);
}
END_TEST

/* Whether the list is refused with an error that holds want. */
static void refused(const char *list, const char *want)
{
    char err[256] = "";
    config_addr_t *a = (config_addr_t *)1;
    int n = rcluster_seeds_parse(list, &a, err, sizeof err);
    ck_assert_msg(n == -EINVAL, "\"%s\" accepted", list ? list : "(null)");
    ck_assert_ptr_null(a);
    ck_assert_msg(strstr(err, want) != NULL, "\"%s\": error \"%s\" lacks \"%s\"",
                  list ? list : "(null)", err, want);
}

START_TEST(test_bad_seed_lists_are_refused_clearly)
{
    refused(NULL, "no cluster node given");
    refused("", "no cluster node given");
    refused("127.0.0.1:7000,", "empty item");
    refused(",127.0.0.1:7000", "empty item");
    refused("127.0.0.1", "no port");
    refused("127.0.0.1:", "bad port");
    refused("127.0.0.1:0", "bad port");
    refused("127.0.0.1:65536", "bad port");
    refused("127.0.0.1:70x", "bad port");
    refused("127.0.0.1:-1", "bad port");
    refused("127.0.0.1: 7000", "bad port");
    refused("redis-0.redis:6379", "not an IP literal");
    refused("[::1]7000", "no port");
    refused("127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7000", "given twice");
}
END_TEST

START_TEST(test_flags_check)
{
    char err[256] = "";
    ck_assert_int_eq(rcluster_flags_check(NULL, NULL, err, sizeof err), 0);
    ck_assert_int_eq(rcluster_flags_check("127.0.0.1:7000", NULL, err, sizeof err), 0);
    ck_assert_int_eq(rcluster_flags_check("127.0.0.1:7000", "127.0.0.1:26379", err, sizeof err),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "exclude each other"));
    ck_assert_int_eq(rcluster_flags_check("127.0.0.1:x", NULL, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--redis-cluster: "));
    ck_assert_ptr_nonnull(strstr(err, "bad port"));
}
END_TEST

/* --redis beside --redis-cluster, on the command line or in the environment */
START_TEST(test_redis_flag_excludes_the_cluster)
{
    char err[256] = "";
    unsetenv("CROUPIER_REDIS");
    char *plain[] = {"prog", "--redis-cluster", "127.0.0.1:7000", "--redis-sentinels", "x", NULL};
    ck_assert_int_eq(rcluster_redis_flag_check("127.0.0.1:7000", 5, plain, err, sizeof err), 0);
    ck_assert_int_eq(rcluster_redis_flag_check(NULL, 5, plain, err, sizeof err), 0);
    char *both[] = {"prog", "--redis-cluster", "127.0.0.1:7000", "--redis", "127.0.0.1:1", NULL};
    ck_assert_int_eq(rcluster_redis_flag_check("127.0.0.1:7000", 5, both, err, sizeof err),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--redis-cluster and --redis exclude each other"));
    char *eq[] = {"prog", "--redis=127.0.0.1:1", NULL};
    ck_assert_int_eq(rcluster_redis_flag_check("127.0.0.1:7000", 2, eq, err, sizeof err), -EINVAL);
    setenv("CROUPIER_REDIS", "127.0.0.1:1", 1);
    ck_assert_int_eq(rcluster_redis_flag_check("127.0.0.1:7000", 1, eq, err, sizeof err), -EINVAL);
    unsetenv("CROUPIER_REDIS");
}
END_TEST

/* The key layout (common/keytag.h): unchanged off a cluster; in the money slot on one. */
START_TEST(test_keytag_layouts)
{
    char b[160];
    keytag_set_cluster(false);
    ck_assert_str_eq(keytag_lease(b, sizeof b, "holdem"), "{croupier:lease:holdem}");
    ck_assert_str_eq(keytag_history(b, sizeof b, "doudizhu"), "{croupier:history:doudizhu}");
    ck_assert_str_eq(keytag_registry(), "{croupier:registry}");
    ck_assert_str_eq(keytag_rooms(), "{croupier:rooms}");
    ck_assert_str_eq(keytag_tour(b, sizeof b, "17"), "{croupier:tour:17}");
    ck_assert_str_eq(keytag_tours(), "{croupier:tours}");
    ck_assert_str_eq(keytag_items(), "{croupier:items}");
    keytag_set_cluster(true);
    ck_assert(keytag_cluster());
    unsigned money = rcluster_key_slot("{croupier:money}:wallet:1", 25);
    const char *lease = keytag_lease(b, sizeof b, "holdem");
    ck_assert_str_eq(lease, "{croupier:money}:lease:holdem");
    ck_assert_uint_eq(rcluster_key_slot(lease, strlen(lease)), money);
    const char *h = keytag_history(b, sizeof b, "doudizhu");
    ck_assert_uint_eq(rcluster_key_slot(h, strlen(h)), money);
    ck_assert_uint_eq(rcluster_key_slot(keytag_registry(), strlen(keytag_registry())), money);
    ck_assert_uint_eq(rcluster_key_slot(keytag_rooms(), strlen(keytag_rooms())), money);
    const char *t = keytag_tour(b, sizeof b, "17");
    ck_assert_str_eq(t, "{croupier:money}:tour:17");
    ck_assert_uint_eq(rcluster_key_slot(t, strlen(t)), money);
    ck_assert_uint_eq(rcluster_key_slot(keytag_tours(), strlen(keytag_tours())), money);
    ck_assert_uint_eq(rcluster_key_slot(keytag_items(), strlen(keytag_items())), money);
    ck_assert_str_eq(keytag_lease(b, 8, "holdem"), ""); /* too long: empty, never cut */
    keytag_set_cluster(false);
}
END_TEST

/* Tournaments by entity (docs/tournaments.md "Tournaments by entity"): a tournament's keys in
 * {t:<id>}, its pool's slot (money/mtour.h); the index and the items stay in the money slot;
 * off a cluster the flag changes nothing. */
START_TEST(test_keytag_tour_entity_layout)
{
    char b[160];
    keytag_set_tour_entity(true);
    keytag_set_cluster(false);
    ck_assert(!keytag_tour_entity());
    ck_assert_str_eq(keytag_tour(b, sizeof b, "17"), "{croupier:tour:17}");
    keytag_set_cluster(true);
    ck_assert(keytag_tour_entity());
    const char *t = keytag_tour(b, sizeof b, "17");
    ck_assert_str_eq(t, "{t:17}");
    ck_assert_uint_eq(rcluster_key_slot(t, strlen(t)), rcluster_key_slot("{t:17}:bal", 10));
    unsigned money = rcluster_key_slot("{croupier:money}:wallet:1", 25);
    ck_assert_str_eq(keytag_tours(), "{croupier:money}:tours");
    ck_assert_uint_eq(rcluster_key_slot(keytag_items(), strlen(keytag_items())), money);
    ck_assert_str_eq(keytag_lease(b, sizeof b, "holdem"), "{croupier:money}:lease:holdem");
    ck_assert_str_eq(keytag_tour(b, 5, "17"), ""); /* too long: empty, never cut */
    keytag_set_tour_entity(false);
    ck_assert_str_eq(keytag_tour(b, sizeof b, "17"), "{croupier:money}:tour:17");
    keytag_set_cluster(false);
}
END_TEST

START_TEST(test_create_refuses_a_bad_list_without_connecting)
{
    char err[256] = "";
    ck_assert_ptr_null(rcluster_create("127.0.0.1:1,127.0.0.1:1", NULL, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "given twice"));
    ck_assert_int_eq(rcluster_check("", 100, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "no cluster node given"));
    rcluster_destroy(NULL);
    rcluster_script_destroy(NULL);
}
END_TEST

/* A reply object from RESP text, through hiredis's reader (what a server would have sent). */
static redisReply *resp(const char *text)
{
    redisReader *rd = redisReaderCreate();
    ck_assert_int_eq(redisReaderFeed(rd, text, strlen(text)), REDIS_OK);
    void *r = NULL;
    ck_assert_int_eq(redisReaderGetReply(rd, &r), REDIS_OK);
    ck_assert_ptr_nonnull(r);
    redisReaderFree(rd);
    return r;
}

START_TEST(test_cluster_slots_answers_parse)
{
    static rcluster_map_t m;
    char why[200];
    /* two masters, the first with a replica; the second master reports an empty ip */
    redisReply *r = resp("*2\r\n"
                         "*4\r\n:0\r\n:8191\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n"
                         "*3\r\n$9\r\n127.0.0.1\r\n:7003\r\n$2\r\nid\r\n"
                         "*3\r\n:8192\r\n:16383\r\n*3\r\n$0\r\n\r\n:7001\r\n$2\r\nid\r\n");
    ck_assert_int_eq(rcluster_map_parse(r, "10.0.0.9", &m, why, sizeof why), 0);
    freeReplyObject(r);
    ck_assert_uint_eq(m.n, 3);
    ck_assert_str_eq(m.nodes[m.slot[0]].host, "127.0.0.1");
    ck_assert_int_eq(m.nodes[m.slot[8191]].port, 7000);
    ck_assert_str_eq(m.nodes[m.slot[8192]].host, "10.0.0.9"); /* the node asked */
    ck_assert_int_eq(m.nodes[m.slot[16383]].port, 7001);
    ck_assert(m.master[m.slot[0]] && m.master[m.slot[16383]]);
    int replicas = 0;
    for (size_t i = 0; i < m.n; i++)
        replicas += !m.master[i];
    ck_assert_int_eq(replicas, 1);
    char gaps[200];
    ck_assert_uint_eq(rcluster_map_gaps(m.slot, gaps, sizeof gaps), 0);

    /* a hole: 100 slots and the last one */
    r = resp("*2\r\n*3\r\n:100\r\n:16382\r\n*3\r\n$3\r\n::1\r\n:7000\r\n$2\r\nid\r\n"
             "*3\r\n:0\r\n:-1\r\n*3\r\n$3\r\n::1\r\n:7000\r\n$2\r\nid\r\n");
    ck_assert_int_eq(rcluster_map_parse(r, "::1", &m, why, sizeof why), -1); /* end < start */
    freeReplyObject(r);
    r = resp("*1\r\n*3\r\n:100\r\n:16382\r\n*3\r\n$3\r\n::1\r\n:7000\r\n$2\r\nid\r\n");
    ck_assert_int_eq(rcluster_map_parse(r, "::1", &m, why, sizeof why), 0);
    freeReplyObject(r);
    ck_assert_uint_eq(rcluster_map_gaps(m.slot, gaps, sizeof gaps), 101);
    ck_assert_msg(strstr(gaps, " 0-99 16383 (101 in all)") != NULL, "%s", gaps);

    /* malformed answers are refused, never half-read */
    const char *bad[] = {
        "+OK\r\n",
        "*1\r\n:5\r\n",
        "*1\r\n*3\r\n:0\r\n:16384\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n",
        "*1\r\n*3\r\n:0\r\n:10\r\n*3\r\n$9\r\n127.0.0.1\r\n:0\r\n$2\r\nid\r\n",
        "*1\r\n*3\r\n:0\r\n:10\r\n*3\r\n$9\r\nredis-0.x\r\n:7000\r\n$2\r\nid\r\n",
        "*1\r\n*3\r\n:0\r\n:10\r\n*1\r\n$9\r\n127.0.0.1\r\n",
        "*1\r\n*2\r\n:0\r\n:10\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r = resp(bad[i]);
        ck_assert_msg(rcluster_map_parse(r, "127.0.0.1", &m, why, sizeof why) == -1,
                      "bad answer %zu accepted", i);
        freeReplyObject(r);
    }
}
END_TEST

START_TEST(test_redirections_parse)
{
    unsigned slot = 0;
    config_addr_t a;
    ck_assert_int_eq(rcluster_redirect_parse("MOVED 3999 127.0.0.1:6381", &slot, &a), 0);
    ck_assert_uint_eq(slot, 3999);
    ck_assert_str_eq(a.host, "127.0.0.1");
    ck_assert_int_eq(a.port, 6381);
    ck_assert_int_eq(rcluster_redirect_parse("ASK 0 ::1:7000", &slot, &a), 0);
    ck_assert_str_eq(a.host, "::1");
    ck_assert_int_eq(a.port, 7000);
    ck_assert_int_eq(rcluster_redirect_parse("ASK 16383 [fe80::1]:7000", &slot, &a), 0);
    ck_assert_uint_eq(slot, 16383);
    ck_assert_str_eq(a.host, "fe80::1");
    const char *bad[] = {"MOVED",
                         "MOVED 3999",
                         "MOVED x 127.0.0.1:1",
                         "MOVED 16384 127.0.0.1:1",
                         "MOVED 1 127.0.0.1",
                         "MOVED 1 127.0.0.1:0",
                         "MOVED 1 host:6379",
                         "MOVED 1  127.0.0.1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(rcluster_redirect_parse(bad[i], &slot, &a) == -1, "\"%s\" accepted", bad[i]);
    redisReply *r = resp("-MOVED 1 127.0.0.1:1\r\n");
    ck_assert(rcluster_reply_is(r, "MOVED"));
    ck_assert(!rcluster_reply_is(r, "MOVE"));
    ck_assert(!rcluster_reply_is(r, "ASK"));
    freeReplyObject(r);
    r = resp("+MOVED 1 127.0.0.1:1\r\n"); /* a status, not an error */
    ck_assert(!rcluster_reply_is(r, "MOVED"));
    freeReplyObject(r);
}
END_TEST

static Suite *rcluster_unit_suite(void)
{
    Suite *s = suite_create("rcluster_unit");
    TCase *tc = tcase_create("slots");
    tcase_add_test(tc, test_crc16_matches_the_spec_check_value);
    tcase_add_test(tc, test_key_slots_match_redis_keyslot);
    tcase_add_test(tc, test_hash_tag_rules);
    suite_add_tcase(s, tc);
    tc = tcase_create("seeds");
    tcase_add_test(tc, test_seed_lists_parse);
    tcase_add_test(tc, test_bad_seed_lists_are_refused_clearly);
    tcase_add_test(tc, test_flags_check);
    tcase_add_test(tc, test_redis_flag_excludes_the_cluster);
    tcase_add_test(tc, test_keytag_layouts);
    tcase_add_test(tc, test_keytag_tour_entity_layout);
    tcase_add_test(tc, test_create_refuses_a_bad_list_without_connecting);
    suite_add_tcase(s, tc);
    tc = tcase_create("answers");
    tcase_add_test(tc, test_cluster_slots_answers_parse);
    tcase_add_test(tc, test_redirections_parse);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rcluster_unit_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
