/*
 * xfer_unit: the pure parts of the transfer module (money/xfer.h; docs/queues.md "Redis
 * Cluster: keys by entity and transfers between slots"): which keys are accounts, which ids are
 * transfer ids, the refusal of a transfer inside one slot, and the keys derived from a tag.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xfer.h"
#include "xfer_int.h"

static char err[300];

#define OK_ACCOUNT(k) ck_assert_msg(xfer_account_check(k, err, sizeof err) == 0, "%s: %s", k, err)
#define BAD_ACCOUNT(k, why)                                                                        \
    do {                                                                                           \
        ck_assert_int_eq(xfer_account_check(k, err, sizeof err), -EINVAL);                         \
        ck_assert_msg(strstr(err, why) != NULL, "%s: %s", #k, err);                                \
    } while (0)

START_TEST(test_account_keys_follow_the_layout)
{
    OK_ACCOUNT("{p:42}:bal");
    OK_ACCOUNT("{s:holdem:3:17}:bal:5.2");
    OK_ACCOUNT("{t:9}:bal");
    OK_ACCOUNT("{house}:bal:rake:holdem");
    BAD_ACCOUNT(NULL, "empty");
    BAD_ACCOUNT("", "empty");
    BAD_ACCOUNT("p:42:bal", "hash tag");
    BAD_ACCOUNT("{}:bal", "hash tag");
    BAD_ACCOUNT("{p:42:bal", "hash tag");
    BAD_ACCOUNT("{p{x}:bal", "hash tag");
    BAD_ACCOUNT("{p:42}:wallet", ":bal");
    BAD_ACCOUNT("{p:42}:balance", ":bal");
    BAD_ACCOUNT("{p:42}:bal:", ":bal");
    BAD_ACCOUNT("{p:42}:bal:x}", "braces");
    BAD_ACCOUNT("{p:42}:bal:a b", "printable");
    BAD_ACCOUNT("{p:4\x01}:bal", "printable");
    char longkey[XFER_MAX_KEY + 8];
    memset(longkey, 'a', sizeof longkey);
    memcpy(longkey, "{p}:bal:", 8);
    longkey[XFER_MAX_KEY + 1] = '\0';
    BAD_ACCOUNT(longkey, "longer than");
    longkey[XFER_MAX_KEY] = '\0';
    OK_ACCOUNT(longkey);
}
END_TEST

START_TEST(test_transfer_ids_are_short_and_plain)
{
    ck_assert_int_eq(xfer_id_check("buyin:42:7-a_b.c", err, sizeof err), 0);
    ck_assert_int_eq(xfer_id_check("", err, sizeof err), -EINVAL);
    ck_assert_int_eq(xfer_id_check(NULL, err, sizeof err), -EINVAL);
    ck_assert_int_eq(xfer_id_check("a b", err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "only letters"));
    ck_assert_int_eq(xfer_id_check("a{b}", err, sizeof err), -EINVAL);
    char id[XFER_MAX_ID + 2];
    memset(id, 'x', sizeof id);
    id[XFER_MAX_ID] = '\0';
    ck_assert_int_eq(xfer_id_check(id, err, sizeof err), 0);
    id[XFER_MAX_ID] = 'x';
    id[XFER_MAX_ID + 1] = '\0';
    ck_assert_int_eq(xfer_id_check(id, err, sizeof err), -EINVAL);
}
END_TEST

START_TEST(test_transfer_args_refuse_amounts_and_one_slot)
{
    ck_assert_int_eq(xfer_args_check("t1", "{p:1}:bal", "{p:2}:bal", 5, err, sizeof err), 0);
    ck_assert_int_eq(xfer_args_check("t1", "{p:1}:bal", "{p:2}:bal", 0, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "amount 0"));
    ck_assert_int_eq(xfer_args_check("t1", "{p:1}:bal", "{p:2}:bal", -5, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "amount -5"));
    ck_assert_int_eq(
        xfer_args_check("t1", "{p:1}:bal", "{p:2}:bal", XFER_MAX_AMOUNT, err, sizeof err), 0);
    ck_assert_int_eq(
        xfer_args_check("t1", "{p:1}:bal", "{p:2}:bal", XFER_MAX_AMOUNT + 1, err, sizeof err),
        -EINVAL);
    /* the same tag, or two tags of one slot: one script, not a transfer */
    ck_assert_int_eq(xfer_args_check("t1", "{p:1}:bal", "{p:1}:bal:x", 5, err, sizeof err),
                     -EINVAL);
    ck_assert_msg(strstr(err, "same slot") != NULL, "%s", err);
    /* two different tags that hash to one slot */
    char a[32], b[32];
    snprintf(a, sizeof a, "{p:0}:bal");
    unsigned want = rcluster_key_slot("p:0", 3);
    int found = 0;
    for (int i = 1; i < 200000 && !found; i++) {
        char tag[16];
        int n = snprintf(tag, sizeof tag, "p:%d", i);
        if (rcluster_key_slot(tag, (size_t)n) == want) {
            snprintf(b, sizeof b, "{%s}:bal", tag);
            found = 1;
        }
    }
    ck_assert(found);
    ck_assert_int_eq(xfer_args_check("t1", a, b, 5, err, sizeof err), -EINVAL);
    ck_assert_msg(strstr(err, "same slot") != NULL, "%s", err);
    ck_assert_int_eq(xfer_args_check("t 1", "{p:1}:bal", "{p:2}:bal", 5, err, sizeof err), -EINVAL);
    ck_assert_int_eq(xfer_args_check("t1", "{p:1}:bal", "p:2", 5, err, sizeof err), -EINVAL);
}
END_TEST

START_TEST(test_tag_keys_share_the_accounts_slot)
{
    char out[64];
    ck_assert_int_eq(xfer_tag_key("{p:42}:bal", ":xo:t1", out, sizeof out), 0);
    ck_assert_str_eq(out, "{p:42}:xo:t1");
    ck_assert_uint_eq(rcluster_key_slot(out, strlen(out)),
                      rcluster_key_slot("{p:42}:bal", strlen("{p:42}:bal")));
    ck_assert_int_eq(xfer_tag_key("{s:h:1:2}:bal:3.4", ":xo", out, sizeof out), 0);
    ck_assert_str_eq(out, "{s:h:1:2}:xo");
    ck_assert_int_eq(xfer_tag_key("nobrace", ":xo", out, sizeof out), -EINVAL);
    ck_assert_int_eq(xfer_tag_key("{p:42}:bal", ":xo:t1", out, 8), -EINVAL);
    /* the applied record: in the destination's slot, named by the source's tag too */
    char key[128];
    ck_assert_int_eq(xfer_applied_key("{p:1}:bal", "{t:9}:bal:x", "t1", key, sizeof key), 0);
    ck_assert_str_eq(key, "{t:9}:xa:{p:1}:t1");
    ck_assert_uint_eq(rcluster_key_slot(key, strlen(key)), rcluster_key_slot("t:9", 3));
    ck_assert_int_eq(xfer_applied_key("{p:1}:bal", "{t:9}:bal", "t1", key, 12), -EINVAL);
    ck_assert_int_eq(xfer_applied_key("p:1", "{t:9}:bal", "t1", key, sizeof key), -EINVAL);
    ck_assert_str_eq(xfer_state_name(XFER_DEBITED), "DEBITED");
    ck_assert_str_eq(xfer_state_name(XFER_COMPLETED), "COMPLETED");
    ck_assert_str_eq(xfer_state_name(XFER_REFUNDED), "REFUNDED");
    ck_assert_str_eq(xfer_state_name(XFER_NONE), "NONE");
}
END_TEST

START_TEST(test_every_slot_has_its_own_registry_key)
{
    for (unsigned s = 0; s < RCLUSTER_SLOTS; s++) {
        const char *tag = xfer_slot_tag(s);
        ck_assert_msg(tag[0] == 'q' && strlen(tag) >= 2 && strlen(tag) <= 7, "slot %u: '%s'", s,
                      tag);
        ck_assert_uint_eq(rcluster_key_slot(tag, strlen(tag)), s);
        char key[24];
        xfer_registry_key(s, key, sizeof key);
        ck_assert_uint_eq(rcluster_key_slot(key, strlen(key)), s);
        ck_assert(strstr(key, ":xq") != NULL);
    }
    /* the first ones, as every process computes them (CRC16 of "q0" ...) */
    ck_assert_str_eq(xfer_slot_tag(rcluster_key_slot("q0", 2)), "q0");
    ck_assert_str_eq(xfer_slot_tag(16384), "");
    /* the registry of an account's slot is in that slot */
    const char *acct = "{p:42}:bal";
    char key[24];
    xfer_registry_key(rcluster_key_slot(acct, strlen(acct)), key, sizeof key);
    ck_assert_uint_eq(rcluster_key_slot(key, strlen(key)), rcluster_key_slot(acct, strlen(acct)));
}
END_TEST

START_TEST(test_accounts_are_placed_by_their_tag)
{
    ck_assert_int_eq(xfer_account_place("{p:alice}:bal"), XFER_PLACE_WALLET);
    ck_assert_int_eq(xfer_account_place("{s:holdem:3:7}:bal:ts.holdem.3.7.1.0"), XFER_PLACE_SEAT);
    ck_assert_int_eq(xfer_account_place("{s:holdem:3:7}:bal:rake:holdem"), XFER_PLACE_EPOCH_RAKE);
    ck_assert_int_eq(xfer_account_place("{t:12}:bal"), XFER_PLACE_POOL);
    ck_assert_int_eq(xfer_account_place("{house}:bal:rake:holdem"), XFER_PLACE_HOUSE);
    ck_assert_int_eq(xfer_account_place("{q7}:bal"), XFER_PLACE_OTHER);
    ck_assert_int_eq(xfer_account_place("plain"), XFER_PLACE_OTHER);
    ck_assert_int_eq(xfer_account_place(NULL), XFER_PLACE_OTHER);
    ck_assert_str_eq(xfer_place_name(XFER_PLACE_SEAT), "seat accounts");
    ck_assert_str_eq(xfer_place_name(XFER_NPLACES), "other");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("xfer_unit");
    TCase *tc = tcase_create("checks");
    tcase_add_test(tc, test_account_keys_follow_the_layout);
    tcase_add_test(tc, test_transfer_ids_are_short_and_plain);
    tcase_add_test(tc, test_transfer_args_refuse_amounts_and_one_slot);
    tcase_add_test(tc, test_tag_keys_share_the_accounts_slot);
    tcase_add_test(tc, test_every_slot_has_its_own_registry_key);
    tcase_add_test(tc, test_accounts_are_placed_by_their_tag);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
