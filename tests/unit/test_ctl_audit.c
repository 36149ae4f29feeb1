/*
 * ctl_audit: croupier-ctl audit --redis-cluster (tools/ctl/ctl_audit.c; docs/ops.md "audit")
 * against a real Redis Cluster of 3 masters on loopback (tests/support/tcluster.h), its money
 * laid out and moved by money/xfer.h: balanced with a transfer in flight (and each place's
 * accounts: wallets, seat accounts, an epoch's rake, a pool, the house), NOT BALANCED after a
 * wallet was changed by hand, bad arguments and an unreachable cluster refused; and the other
 * commands on a cluster, `tour create` and `tour hall` writing every key in the money slot.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"
#include "tcluster.h"
#include "xfer.h"

static ts_cluster_t *g_cl;

/* Runs croupier-ctl with args (a shell word list); its output (stdout + stderr) in out. Returns
 * the exit status. */
static int ctl(const char *args, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", ts_build_path("tools/croupier-ctl"), args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool stop_at_credit(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    (void)arg;
    return at == XFER_AT_CREDITED;
}

START_TEST(test_ctl_audit_balances_and_catches_a_change)
{
    signal(SIGPIPE, SIG_IGN);
    g_cl = ts_cluster_start(3, 0);
    ck_assert_msg(g_cl != NULL, "could not start a 3-master Redis Cluster");
    char err[600];
    rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    xfer_t *x = xfer_create(c, NULL);
    const char *acct[] = {"{p:1}:bal",   "{p:2}:bal",          "{t:7}:bal",
                          "{house}:bal", "{s:g:1:2}:bal:ts.0", "{s:g:1:2}:bal:rake:holdem"};
    for (int i = 0; i < 6; i++) {
        char op[16];
        snprintf(op, sizeof op, "seed-%d", i);
        ck_assert_int_eq(xfer_seed(x, acct[i], 1000, op), 0);
    }
    xfer_result_t res;
    ck_assert_int_eq(xfer_transfer(x, "a", acct[0], acct[2], 300, &res), 0);
    ck_assert_int_eq(xfer_transfer(x, "b", acct[1], acct[3], 50, &res), 0);
    ck_assert_int_eq(xfer_transfer(x, "c", acct[2], acct[1], 20, &res), 0);
    xfer_set_fault_hook(x, stop_at_credit, NULL); /* credited, not acknowledged */
    ck_assert_int_eq(xfer_transfer(x, "d", acct[3], acct[0], 5, &res), -EAGAIN);
    xfer_set_fault_hook(x, NULL, NULL);
    char args[512], out[4096];
    snprintf(args, sizeof args, "--redis-cluster %s audit", ts_cluster_seeds(g_cl));
    int rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "balanced: 6000 + 0 = 6000") != NULL, "%d: %s", rc, out);
    ck_assert_msg(strstr(out, "credited, not acked 1") != NULL, "%s", out);
    /* where the chips are: the places of docs/queues.md "Keys by entity" */
    ck_assert_msg(strstr(out, "wallets           2 holding 1675") != NULL &&
                      strstr(out, "seat accounts     1 holding 1000") != NULL &&
                      strstr(out, "epochs' rake      1 holding 1000") != NULL &&
                      strstr(out, "prize pools       1 holding 1280") != NULL &&
                      strstr(out, "house             1 holding 1045") != NULL,
                  "%s", out);
    snprintf(args, sizeof args, "--redis-cluster %s audit --json", ts_cluster_seeds(g_cl));
    rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "\"balanced\": true") != NULL &&
                      strstr(out, "\"seeded\": 6000") != NULL && strstr(out, "\"masters\": 3") &&
                      strstr(out, "\"seat accounts\"") != NULL,
                  "%d: %s", rc, out);
    /* a wallet changed behind the protocol's back */
    unsigned slot = rcluster_key_slot(acct[1], strlen(acct[1]));
    free(ts_cluster_cmd(g_cl, ts_cluster_slot_owner(g_cl, 0, slot), "INCRBY %s 7", acct[1]));
    snprintf(args, sizeof args, "--redis-cluster %s audit", ts_cluster_seeds(g_cl));
    rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "NOT BALANCED: 6007 + 0 != 6000") != NULL, "%d: %s", rc,
                  out);
    /* bad arguments, nobody there */
    ck_assert_int_eq(ctl("audit", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--redis-cluster"));
    ck_assert_int_eq(ctl("--redis-cluster 127.0.0.1:x audit", out, sizeof out), 2);
    /* the other commands run (tests/e2e/cluster_play.sh plays them; cluster_tour.sh tour) */
    snprintf(args, sizeof args, "--redis-cluster %s servers", ts_cluster_seeds(g_cl));
    ck_assert_int_eq(ctl(args, out, sizeof out), 0);
    snprintf(args, sizeof args, "--redis-cluster %s where p1", ts_cluster_seeds(g_cl));
    ck_assert_int_eq(ctl(args, out, sizeof out), 1); /* the seats' master asked: no seat */
    ck_assert_msg(strstr(out, "has no seat") != NULL, "%s", out);
    snprintf(args, sizeof args, "--redis-cluster %s tour list", ts_cluster_seeds(g_cl));
    ck_assert_int_eq(ctl(args, out, sizeof out), 0); /* the money slot's master: none yet */
    ck_assert_msg(strstr(out, "not on Redis Cluster") == NULL, "%s", out);
    /* tour create and tour hall on a cluster: every key in the money slot, on its master
     * (common/keytag.h; docs/tournaments.md "On a Redis Cluster") */
    char sng[256], *dir = ts_tmpdir();
    snprintf(sng, sizeof sng, "%s/sng.json", dir);
    FILE *f = fopen(sng, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"format\":\"sng\",\"seats_per_table\":6,\"starting_stack\":1000,\"buy_in\":100,"
          "\"fee\":10,\"min_entrants\":6,\"max_entrants\":6,\"levels\":[{\"small_blind\":10,"
          "\"big_blind\":20,\"duration_ms\":60000}]}",
          f);
    fclose(f);
    snprintf(args, sizeof args, "--redis-cluster %s tour create --structure %s",
             ts_cluster_seeds(g_cl), sng);
    rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 0 && strcmp(out, "1\n") == 0, "%d: %s", rc, out);
    snprintf(args, sizeof args, "--redis-cluster %s tour show 1", ts_cluster_seeds(g_cl));
    rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "registering") != NULL, "%d: %s", rc, out);
    int money = ts_cluster_slot_owner(g_cl, 0, rcluster_key_slot("{croupier:money}", 16));
    ck_assert_int_ge(money, 0);
    static const char *const on_money[] = {
        "{croupier:money}:tour:1:meta", "{croupier:money}:tour:1:log", "{croupier:money}:tours:seq",
        "{croupier:money}:tours:live"};
    for (size_t i = 0; i < 4; i++) {
        char *v = ts_cluster_cmd(g_cl, money, "EXISTS %s", on_money[i]);
        ck_assert_msg(v != NULL && strcmp(v, "1") == 0, "%s: %s", on_money[i], v ? v : "(null)");
        free(v);
    }
    char *v = ts_cluster_cmd(g_cl, money, "ZSCORE {croupier:money}:tours:all 1");
    ck_assert_msg(v != NULL && strlen(v) > 0 && strcmp(v, "(nil)") != 0, "%s", v ? v : "(null)");
    free(v);
    /* the single-Redis layout: nowhere */
    for (int i = 0; i < ts_cluster_size(g_cl); i++) {
        char *k = ts_cluster_cmd(g_cl, i, "KEYS {croupier:tour*");
        ck_assert_msg(k != NULL && strstr(k, "{croupier:tour") == NULL, "node %d: %s", i, k);
        free(k);
    }
    char match[256];
    snprintf(match, sizeof match, "%s/match.json", dir);
    f = fopen(match, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"
          "\"min_entrants\":3,\"max_entrants\":3,"
          "\"stages\":[{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":2}]}",
          f);
    fclose(f);
    snprintf(args, sizeof args,
             "--redis-cluster %s tour hall --structure %s --every-seconds 60 --name Evening",
             ts_cluster_seeds(g_cl), match);
    rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 0 && strcmp(out, "1\n") == 0, "%d: %s", rc, out);
    v = ts_cluster_cmd(g_cl, money, "HGET {croupier:money}:tours:hall:1 name");
    ck_assert_msg(v != NULL && strcmp(v, "Evening") == 0, "%s", v ? v : "(null)");
    free(v);
    snprintf(args, sizeof args, "--redis-cluster %s tour halls", ts_cluster_seeds(g_cl));
    rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "Evening") != NULL, "%d: %s", rc, out);
    unlink(sng);
    unlink(match);
    rmdir(dir);
    free(dir);
    snprintf(args, sizeof args, "--redis-cluster %s --redis 127.0.0.1:1 wallet p1",
             ts_cluster_seeds(g_cl));
    ck_assert_int_eq(ctl(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "exclude each other") != NULL, "%s", out);
    snprintf(args, sizeof args, "--redis-cluster 127.0.0.1:%d audit", ts_free_port());
    ck_assert_int_eq(ctl(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "unreachable") != NULL, "%s", out);
    xfer_destroy(x);
    rcluster_destroy(c);
    ts_cluster_stop(g_cl);
}
END_TEST

int main(void)
{
    char why[200];
    if (!ts_cluster_supported(why, sizeof why)) {
        printf("1..0 # SKIP %s\n", why);
        return 0;
    }
    Suite *s = suite_create("ctl_audit");
    TCase *tc = tcase_create("audit");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ctl_audit_balances_and_catches_a_change);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
