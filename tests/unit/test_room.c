/*
 * test_room.c -- the room records' library by entity (lease/room.h room_set_entity,
 * room_cluster_create, room_cluster_write; docs/queues.md "Private rooms by entity"): the key
 * of a room in its code's own slot, and the record's create and fenced writes against a real
 * Redis Cluster of 3 masters (tests/support/tcluster.h). The default layout is tk_rooms's.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keytag.h"
#include "rcluster.h"
#include "room.h"
#include "tcluster.h"

static ts_cluster_t *cl; /* started once for the program (unchecked fixture) */

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    char why[200];
    if (ts_cluster_supported(why, sizeof why))
        cl = ts_cluster_start(3, 0);
}

static void teardown(void)
{
    ts_cluster_stop(cl);
    cl = NULL;
}

/* ---- keys ------------------------------------------------------------------------------- */

START_TEST(test_room_key_default_layouts_unchanged)
{
    char key[64];
    room_key("123456", key, sizeof key);
    ck_assert_str_eq(key, ROOM_KEY_PREFIX "123456");
    ck_assert(!room_entity());
    keytag_set_cluster(true);
    room_key("123456", key, sizeof key);
    ck_assert_str_eq(key, "{croupier:money}:rooms:room:123456");
    keytag_set_cluster(false);
}
END_TEST

START_TEST(test_room_key_by_entity_is_the_codes_own_slot)
{
    room_set_entity(true);
    keytag_set_cluster(true);
    char key[64];
    room_key("123456", key, sizeof key);
    ck_assert_str_eq(key, "{r:123456}:room");
    ck_assert_uint_eq(rcluster_key_slot(key, strlen(key)), rcluster_key_slot("r:123456", 8));
    /* Rooms spread: 1,000 codes land in many slots, never all in the money slot. */
    unsigned money = rcluster_key_slot("croupier:money", 14), in_money = 0;
    static unsigned char seen[16384];
    unsigned distinct = 0;
    for (int i = 0; i < 1000; i++) {
        char code[ROOM_CODE_LEN + 1];
        snprintf(code, sizeof code, "%06d", i * 997);
        room_key(code, key, sizeof key);
        unsigned s = rcluster_key_slot(key, strlen(key));
        in_money += s == money;
        if (!seen[s]++)
            distinct++;
    }
    ck_assert_uint_lt(in_money, 5);
    ck_assert_uint_gt(distinct, 900);
    room_set_entity(false);
    keytag_set_cluster(false);
}
END_TEST

/* ---- the record on a cluster -------------------------------------------------------------- */

static rcluster_t *client(void)
{
    ck_assert_msg(cl != NULL, "could not start a 3-master Redis Cluster");
    char err[300];
    rcluster_t *c = rcluster_create(ts_cluster_seeds(cl), NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    return c;
}

static void record(room_record_t *r, const char *owner)
{
    memset(r, 0, sizeof *r);
    r->state = CROUPIER__ROOM_STATE__ROOM_WAITING;
    r->engine = 1;
    snprintf(r->game, sizeof r->game, "doudizhu");
    r->stake = 10;
    r->seats = 3;
    r->deals = 4;
    r->host = 42;
    snprintf(r->server, sizeof r->server, "traditional:1");
    r->epoch = 1;
    r->desk = 7;
    snprintf(r->owner, sizeof r->owner, "%s", owner);
}

/* The record as its slot's master holds it (NULL: absent), read with GET routed by its key. */
static char *get(rcluster_t *c, const char *code)
{
    char key[64];
    room_key(code, key, sizeof key);
    redisReply *rep = rcluster_command(c, RCLUSTER_RESEND, key, "GET %s", key);
    ck_assert_ptr_nonnull(rep);
    char *text = rep->type == REDIS_REPLY_STRING ? strdup(rep->str) : NULL;
    freeReplyObject(rep);
    return text;
}

START_TEST(test_room_cluster_create_and_fenced_writes)
{
    room_set_entity(true);
    keytag_set_cluster(true);
    rcluster_t *c = client();
    rcluster_script_t *s = room_cluster_script();
    ck_assert_ptr_nonnull(s);
    room_record_t r;
    record(&r, "traditional:1/1/7");
    ck_assert_int_eq(room_cluster_create(c, &r, 60000), 0);
    ck_assert(room_code_valid(r.code));
    char *text = get(c, r.code);
    ck_assert_ptr_nonnull(text);
    room_record_t back;
    ck_assert_int_eq(room_record_parse(text, strlen(text), &back), 0);
    ck_assert_str_eq(back.owner, "traditional:1/1/7");
    free(text);

    /* its owner rewrites it; another writer is refused and changes nothing */
    r.played = 1;
    ck_assert_int_eq(room_cluster_write(c, s, &r, 60000, false), 1);
    room_record_t other = r;
    snprintf(other.owner, sizeof other.owner, "traditional:2/1/9");
    other.played = 3;
    ck_assert_int_eq(room_cluster_write(c, s, &other, 60000, false), -EPERM);
    text = get(c, r.code);
    ck_assert_int_eq(room_record_parse(text, strlen(text), &back), 0);
    ck_assert_int_eq(back.played, 1);
    free(text);

    /* the adoption takes it; the old owner is refused from then on */
    ck_assert_int_eq(room_cluster_write(c, s, &other, 60000, true), 1);
    ck_assert_int_eq(room_cluster_write(c, s, &r, 60000, false), -EPERM);
    text = get(c, r.code);
    ck_assert_int_eq(room_record_parse(text, strlen(text), &back), 0);
    ck_assert_str_eq(back.owner, "traditional:2/1/9");
    ck_assert_int_eq(back.played, 3);
    free(text);

    /* an expired record is not written again */
    ck_assert_int_eq(room_cluster_write(c, s, &other, 1, false), 1);
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    ck_assert_int_eq(room_cluster_write(c, s, &other, 60000, false), 0);
    ck_assert_ptr_null(get(c, r.code));
    rcluster_script_destroy(s);
    rcluster_destroy(c);
    room_set_entity(false);
    keytag_set_cluster(false);
}
END_TEST

START_TEST(test_room_cluster_codes_spread_over_the_masters)
{
    room_set_entity(true);
    keytag_set_cluster(true);
    rcluster_t *c = client();
    bool on[3] = {false, false, false};
    for (int i = 0; i < 40; i++) {
        room_record_t r;
        record(&r, "traditional:1/1/7");
        ck_assert_int_eq(room_cluster_create(c, &r, 60000), 0);
        char key[64];
        room_key(r.code, key, sizeof key);
        int owner = ts_cluster_slot_owner(cl, 0, rcluster_key_slot(key, strlen(key)));
        ck_assert_int_ge(owner, 0);
        ck_assert_int_lt(owner, 3);
        on[owner] = true;
        /* and the record is on that master itself, not behind a redirection */
        char *v = ts_cluster_cmd(cl, owner, "EXISTS %s", key);
        ck_assert_ptr_nonnull(v);
        ck_assert_str_eq(v, "1");
        free(v);
    }
    ck_assert(on[0] && on[1] && on[2]);
    rcluster_destroy(c);
    room_set_entity(false);
    keytag_set_cluster(false);
}
END_TEST

static Suite *room_suite(void)
{
    Suite *s = suite_create("room");
    TCase *tk = tcase_create("keys");
    tcase_add_test(tk, test_room_key_default_layouts_unchanged);
    tcase_add_test(tk, test_room_key_by_entity_is_the_codes_own_slot);
    suite_add_tcase(s, tk);
    TCase *tc = tcase_create("cluster");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_room_cluster_create_and_fenced_writes);
    tcase_add_test(tc, test_room_cluster_codes_spread_over_the_masters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(room_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
