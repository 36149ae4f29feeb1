/*
 * Login tokens (common/token.h): format, signature, expiry, strict parsing.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "token.h"

static token_secret_t S;

static void setup(void)
{
    ck_assert_int_eq(token_secret_set(&S, "0123456789abcdef-secret", 23), 0);
}

START_TEST(test_token_mint_then_verify_gives_player_and_expiry)
{
    char t[TOKEN_MAX_LEN + 1];
    int n = token_mint(&S, 42, 2000000000, t, sizeof t);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq((int)strlen(t), n);
    ck_assert(strncmp(t, "v1.42.2000000000.", 17) == 0);
    uint64_t p = 0;
    int64_t e = 0;
    ck_assert_int_eq(token_verify(&S, t, strlen(t), 1000, &p, &e), TOKEN_OK);
    ck_assert_uint_eq(p, 42);
    ck_assert_int_eq(e, 2000000000);
}
END_TEST

START_TEST(test_token_expired_is_expired_but_genuine)
{
    char t[TOKEN_MAX_LEN + 1];
    token_mint(&S, 7, 1000, t, sizeof t);
    uint64_t p = 0;
    ck_assert_int_eq(token_verify(&S, t, strlen(t), 1001, &p, NULL), TOKEN_EXPIRED);
    ck_assert_uint_eq(p, 7);
    ck_assert_int_eq(token_verify(&S, t, strlen(t), 1000, NULL, NULL), TOKEN_OK);
}
END_TEST

START_TEST(test_token_forged_or_other_secret_is_invalid)
{
    char t[TOKEN_MAX_LEN + 1];
    token_mint(&S, 7, 2000000000, t, sizeof t);
    token_secret_t other;
    token_secret_set(&other, "another-secret-of-enough-length", 31);
    ck_assert_int_eq(token_verify(&other, t, strlen(t), 0, NULL, NULL), TOKEN_INVALID);
    /* Another player with the same signature. */
    char f[TOKEN_MAX_LEN + 1];
    snprintf(f, sizeof f, "v1.8%s", t + 4);
    ck_assert_int_eq(token_verify(&S, f, strlen(f), 0, NULL, NULL), TOKEN_INVALID);
    /* A later expiry with the same signature. */
    snprintf(f, sizeof f, "%s", t);
    f[5] = '3';
    ck_assert_int_eq(token_verify(&S, f, strlen(f), 0, NULL, NULL), TOKEN_INVALID);
    /* One flipped hex digit. */
    snprintf(f, sizeof f, "%s", t);
    f[strlen(f) - 1] = f[strlen(f) - 1] == '0' ? '1' : '0';
    ck_assert_int_eq(token_verify(&S, f, strlen(f), 0, NULL, NULL), TOKEN_INVALID);
    /* Expired and forged: invalid, not expired. */
    token_mint(&S, 9, 10, t, sizeof t);
    t[strlen(t) - 2] = t[strlen(t) - 2] == 'a' ? 'b' : 'a';
    ck_assert_int_eq(token_verify(&S, t, strlen(t), 100, NULL, NULL), TOKEN_INVALID);
}
END_TEST

START_TEST(test_token_malformed_texts_are_invalid)
{
    char t[TOKEN_MAX_LEN + 1];
    token_mint(&S, 5, 2000000000, t, sizeof t);
    const char *mac = strrchr(t, '.') + 1;
    char buf[256];
    const char *bad[] = {"",
                         "v1",
                         "v1...",
                         "v2.5.2000000000.",
                         "v1.05.2000000000.",
                         "v1.0.2000000000.",
                         "v1.-5.2000000000.",
                         "v1.5.+2000000000.",
                         "v1.5.2000000000.x",
                         "v1.5..",
                         "v1.18446744073709551616.2000000000."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(buf, sizeof buf, "%s%s", bad[i],
                 strlen(bad[i]) > 0 && bad[i][strlen(bad[i]) - 1] == '.' ? mac : "");
        ck_assert_msg(token_verify(&S, buf, strlen(buf), 0, NULL, NULL) == TOKEN_INVALID, "%s",
                      buf);
    }
    /* Upper-case hex is not the canonical form. */
    snprintf(buf, sizeof buf, "%s", t);
    for (char *p = strrchr(buf, '.') + 1; *p; p++)
        if (*p >= 'a' && *p <= 'f')
            *p = (char)(*p - 32);
    if (strcmp(buf, t) != 0)
        ck_assert_int_eq(token_verify(&S, buf, strlen(buf), 0, NULL, NULL), TOKEN_INVALID);
    /* Truncated and extended. */
    ck_assert_int_eq(token_verify(&S, t, strlen(t) - 1, 0, NULL, NULL), TOKEN_INVALID);
    snprintf(buf, sizeof buf, "%s0", t);
    ck_assert_int_eq(token_verify(&S, buf, strlen(buf), 0, NULL, NULL), TOKEN_INVALID);
    ck_assert_int_eq(token_verify(&S, NULL, 0, 0, NULL, NULL), TOKEN_INVALID);
}
END_TEST

START_TEST(test_token_secret_file_bounds_and_newline)
{
    char path[] = "/tmp/gate_token_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "short\n", 6), 6);
    close(fd);
    token_secret_t s;
    ck_assert_int_eq(token_secret_load(path, &s), -EINVAL);
    FILE *f = fopen(path, "w");
    fputs("0123456789abcdef-secret\n", f);
    fclose(f);
    ck_assert_int_eq(token_secret_load(path, &s), 0);
    ck_assert_uint_eq(s.len, 23);
    ck_assert(memcmp(s.key, S.key, S.len) == 0);
    unlink(path);
    ck_assert_int_eq(token_secret_load(path, &s), -ENOENT);
    char t[16];
    ck_assert_int_eq(token_mint(&S, 1, 1, t, sizeof t), -ENOSPC);
    ck_assert_int_eq(token_mint(&S, 0, 1, t, sizeof t), -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_token");
    TCase *tc = tcase_create("mint_verify");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_token_mint_then_verify_gives_player_and_expiry);
    tcase_add_test(tc, test_token_expired_is_expired_but_genuine);
    tcase_add_test(tc, test_token_forged_or_other_secret_is_invalid);
    tcase_add_test(tc, test_token_malformed_texts_are_invalid);
    suite_add_tcase(s, tc);
    TCase *tf = tcase_create("secret_file");
    tcase_add_checked_fixture(tf, setup, NULL);
    tcase_add_test(tf, test_token_secret_file_bounds_and_newline);
    suite_add_tcase(s, tf);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
