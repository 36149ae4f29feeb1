/*
 * ctl_wallet_entity: the wallets outside the game server with the money by entity
 * (docs/queues.md "The wallets outside the game server"; money/mcredit.h; docs/ops.md
 * "credit") against a real Redis Cluster of 3 masters on loopback (tests/support/tcluster.h):
 * croupier-ctl --money-by-entity credit creates the chips in {p:<player>}:bal once per op id,
 * a debit moves them to the house and is refused beyond the balance, wallet reads them, the
 * conservation audit balances after; croupier-gate --money-by-entity reports that balance at
 * login; both refuse the flag without --redis-cluster.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gatec.h"
#include "rcluster.h"
#include "support.h"
#include "tcluster.h"
#include "token.h"
#include "xfer.h"

#define SECRET "wallet-entity-secret-0123456789"

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

/* croupier-ctl --redis-cluster <seeds> --money-by-entity <rest>. */
static int ectl(const char *rest, char *out, size_t len)
{
    char args[900];
    snprintf(args, sizeof args, "--redis-cluster %s --money-by-entity %s", ts_cluster_seeds(g_cl),
             rest);
    return ctl(args, out, len);
}

/* The value of {p:<player>}:bal on its master ("(nil)" when absent); caller frees. */
static char *wallet_raw(const char *player)
{
    char key[128];
    snprintf(key, sizeof key, "{p:%s}:bal", player);
    int owner = ts_cluster_slot_owner(g_cl, 0, rcluster_key_slot(key, strlen(key)));
    ck_assert_int_ge(owner, 0);
    return ts_cluster_cmd(g_cl, owner, "GET %s", key);
}

static void assert_wallet(const char *player, const char *want)
{
    char *v = wallet_raw(player);
    ck_assert_msg(v != NULL && strcmp(v, want) == 0, "{p:%s}:bal = %s, want %s", player,
                  v ? v : "(null)", want);
    free(v);
}

static void assert_audit(const char *line)
{
    char args[512], out[4096];
    snprintf(args, sizeof args, "--redis-cluster %s audit", ts_cluster_seeds(g_cl));
    int rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, line) != NULL, "%d (want %s): %s", rc, line, out);
}

START_TEST(test_ctl_credit_and_debit_by_entity_once_each_and_the_audit_balances)
{
    char out[4096];
    /* a credit: created in the wallet, once per op id */
    int rc = ectl("credit alice 500 --reason goodwill --op-id c1", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "credited alice: +500 chips, balance 500") != NULL,
                  "%d: %s", rc, out);
    assert_wallet("alice", "500");
    rc = ectl("credit alice 500 --reason goodwill --op-id c1", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "replayed, nothing changed") != NULL &&
                      strstr(out, "balance 500") != NULL,
                  "%d: %s", rc, out);
    assert_wallet("alice", "500");
    /* the same op id for another amount or player */
    rc = ectl("credit alice 600 --reason goodwill --op-id c1", out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "op id was used for 500 chips to alice") != NULL, "%d: %s",
                  rc, out);
    rc = ectl("credit bob 500 --reason goodwill --op-id c1", out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "op id was used") != NULL, "%d: %s", rc, out);
    char *v = wallet_raw("bob");
    ck_assert_str_eq(v, "(nil)");
    free(v);
    assert_audit("balanced: 500 + 0 = 500");

    /* a debit beyond the balance: refused, nothing changed, the op id free again */
    rc = ectl("credit alice -800 --reason chargeback --op-id d1", out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "balance 500 is less than the debit 800") != NULL &&
                      strstr(out, "nothing changed") != NULL,
                  "%d: %s", rc, out);
    assert_wallet("alice", "500");
    rc = ectl("credit alice -200 --reason chargeback --op-id d1", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "credited alice: -200 chips, balance 300") != NULL,
                  "%d: %s", rc, out);
    rc = ectl("credit alice -200 --reason chargeback --op-id d1", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "replayed, nothing changed") != NULL, "%d: %s", rc, out);
    assert_wallet("alice", "300");
    /* the debit went to the house's account of operator debits: wallets + house = seeded */
    assert_audit("balanced: 500 + 0 = 500");
    assert_audit("house             1 holding 200");
    assert_audit("wallets           1 holding 300");

    /* wallet: the balance at {p:alice}:bal and the credits from the audit stream */
    rc = ectl("wallet alice", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "player alice: balance 300 at {p:alice}:bal") != NULL &&
                      strstr(out, "ctl:c1") != NULL && strstr(out, "ctl:d1") != NULL,
                  "%d: %s", rc, out);
    rc = ectl("wallet alice --json", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "\"balance\": 300") != NULL &&
                      strstr(out, "\"wallet\": \"{p:alice}:bal\"") != NULL,
                  "%d: %s", rc, out);
    rc = ectl("wallet nobody", out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "has no wallet") != NULL, "%d: %s", rc, out);
    /* the credit's settle record and audit entry, in the money slot as ever */
    rc = ectl("round ctl:credit:c1", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "balance after 500") != NULL &&
                      strstr(out, "goodwill") != NULL,
                  "%d: %s", rc, out);
    /* without --money-by-entity the one-slot wallet is another key: none there */
    char args[512];
    snprintf(args, sizeof args, "--redis-cluster %s wallet alice --json", ts_cluster_seeds(g_cl));
    rc = ctl(args, out, sizeof out);
    ck_assert_msg(strstr(out, "{p:alice}:bal") == NULL, "%d: %s", rc, out);

    /* a wallet that holds no integer: refused, nothing booked */
    char key[] = "{p:carol}:bal";
    int owner = ts_cluster_slot_owner(g_cl, 0, rcluster_key_slot(key, strlen(key)));
    free(ts_cluster_cmd(g_cl, owner, "SET %s x", key));
    rc = ectl("credit carol 5 --reason x --op-id c2", out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "nothing changed") != NULL, "%d: %s", rc, out);
    free(ts_cluster_cmd(g_cl, owner, "DEL %s", key));
    rc = ectl("credit carol 5 --reason x --op-id c2", out, sizeof out);
    ck_assert_msg(rc == 0, "%d: %s", rc, out);
    assert_audit("balanced: 505 + 0 = 505");

    /* a run stopped after its claim and its money, before its booking (the process killed):
     * the same command again books it and creates nothing twice */
    char *seen = NULL;
    int money = ts_cluster_slot_owner(g_cl, 0, rcluster_key_slot("{croupier:money}", 16));
    free(ts_cluster_cmd(g_cl, money, "SET {croupier:money}:audit:seen:ctl:c3 %s",
                        "pending dave 40"));
    seen = ts_cluster_cmd(g_cl, money, "GET {croupier:money}:audit:seen:ctl:c3");
    ck_assert_msg(seen != NULL && strcmp(seen, "pending dave 40") == 0, "%s", seen ? seen : "");
    free(seen);
    char err[600];
    rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    xfer_t *x = xfer_create(c, NULL);
    ck_assert_int_eq(xfer_seed(x, "{p:dave}:bal", 40, "ctl:c3"), 0);
    xfer_destroy(x);
    rcluster_destroy(c);
    rc = ectl("credit dave 41 --reason late --op-id c3", out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "op id was used for 40 chips to dave") != NULL, "%d: %s",
                  rc, out);
    rc = ectl("credit dave 40 --reason late --op-id c3", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "credited dave: +40 chips, balance 40") != NULL, "%d: %s",
                  rc, out);
    rc = ectl("credit dave 40 --reason late --op-id c3", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "replayed") != NULL, "%d: %s", rc, out);
    assert_wallet("dave", "40");
    assert_audit("balanced: 545 + 0 = 545");

    /* durability: no replica here, so a WAIT for one falls short after the seed: applied, not
     * booked, "not finished"; the same command once it can be durable (here: asked for none)
     * books it, and the chips were created once */
    rc = ectl("credit erin 60 --reason d --op-id c4 --redis-min-replicas 1 --redis-wait-ms 100",
              out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "is not finished") != NULL &&
                      strstr(out, "WAIT reached 0 of 1") != NULL &&
                      strstr(out, "run the same command again") != NULL,
                  "%d: %s", rc, out);
    assert_wallet("erin", "60");
    rc = ectl("credit erin 60 --reason d --op-id c4", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "credited erin: +60 chips, balance 60") != NULL, "%d: %s",
                  rc, out);
    assert_wallet("erin", "60");
    /* a debit whose transfer cannot be durable stays in flight; the same command finishes it */
    rc = ectl("credit erin -10 --reason d --op-id d2 --redis-min-replicas 1 --redis-wait-ms 100",
              out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "the debit is in flight") != NULL, "%d: %s", rc, out);
    assert_audit("in flight           1 transfers, 10");
    rc = ectl("credit erin -10 --reason d --op-id d2", out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "credited erin: -10 chips, balance 50") != NULL, "%d: %s",
                  rc, out);
    assert_wallet("erin", "50");
    assert_audit("balanced: 605 + 0 = 605");
    assert_audit("house             1 holding 210");
}
END_TEST

START_TEST(test_gate_reports_the_wallet_by_entity_at_login)
{
    char out[4096];
    int rc = ectl("credit 4242 777 --reason welcome --op-id w-4242", out, sizeof out);
    ck_assert_msg(rc == 0, "%d: %s", rc, out);
    char *dir = ts_tmpdir(), secret_path[256], listen[64], health[64];
    snprintf(secret_path, sizeof secret_path, "%s/secret", dir);
    FILE *f = fopen(secret_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(SECRET "\n", f);
    fclose(f);
    int port = ts_free_port(), hport = ts_free_port();
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    snprintf(health, sizeof health, "127.0.0.1:%d", hport);
    char *argv[] = {(char *)ts_build_path("gateway/croupier-gate"),
                    "--listen",
                    listen,
                    "--health-listen",
                    health,
                    "--redis-cluster",
                    (char *)ts_cluster_seeds(g_cl),
                    "--money-by-entity",
                    "--token-secret-file",
                    secret_path,
                    "--gate-id",
                    "gate-entity",
                    NULL};
    ts_proc_t *gate = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(gate);
    ck_assert_msg(ts_http_wait_status("127.0.0.1", hport, "/readyz", 200, 10000) == 0,
                  "the gateway never became ready (log %s)", ts_proc_log_path(gate));
    token_secret_t sec;
    ck_assert_int_eq(token_secret_set(&sec, SECRET, strlen(SECRET)), 0);
    uint64_t players[] = {4242, 4243}; /* a wallet credited, and none yet (0 chips) */
    int64_t want[] = {777, 0};
    for (int i = 0; i < 2; i++) {
        char tok[TOKEN_MAX_LEN + 1];
        ck_assert_int_gt(token_mint(&sec, players[i], time(NULL) + 600, tok, sizeof tok), 0);
        gatec_t *c = gatec_connect("127.0.0.1", port, 2000);
        ck_assert_ptr_nonnull(c);
        Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
        ck_assert(m->login_result->has_chips);
        ck_assert_int_eq(m->login_result->chips, want[i]);
        frame_free_server(m);
        gatec_close(c);
    }
    ts_proc_signal(gate, SIGTERM);
    int st;
    ts_proc_wait(gate, 10000, &st);
    ts_proc_free(gate);
    unlink(secret_path);
    rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_money_by_entity_without_a_cluster_is_refused)
{
    char out[4096], args[512];
    int port = ts_free_port();
    snprintf(args, sizeof args, "--redis 127.0.0.1:%d --money-by-entity wallet alice", port);
    int rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 2 &&
                      strcmp(out, "croupier-ctl: --money-by-entity needs --redis-cluster\n") == 0,
                  "%d: %s", rc, out);
    snprintf(args, sizeof args, "--money-by-entity credit alice 5 --reason x --op-id y");
    rc = ctl(args, out, sizeof out);
    ck_assert_msg(rc == 2 && strstr(out, "needs --redis-cluster") != NULL, "%d: %s", rc, out);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s --listen 127.0.0.1:0 --health-listen 127.0.0.1:0 --redis 127.0.0.1:%d "
             "--token-secret-file /nonexistent --money-by-entity 2>&1",
             ts_build_path("gateway/croupier-gate"), port);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2 &&
                      strcmp(out, "croupier-gate: --money-by-entity needs --redis-cluster\n") == 0,
                  "%d: %s", st, out);
}
END_TEST

static void cluster_up(void)
{
    signal(SIGPIPE, SIG_IGN);
    g_cl = ts_cluster_start(3, 0);
    ck_assert_msg(g_cl != NULL, "could not start a 3-master Redis Cluster");
}

static void cluster_down(void)
{
    ts_cluster_stop(g_cl);
    g_cl = NULL;
}

int main(void)
{
    char why[200];
    if (!ts_cluster_supported(why, sizeof why)) {
        printf("1..0 # SKIP %s\n", why);
        return 0;
    }
    Suite *s = suite_create("ctl_wallet_entity");
    TCase *tc = tcase_create("wallets");
    tcase_set_timeout(tc, 90);
    tcase_add_unchecked_fixture(tc, cluster_up, cluster_down);
    tcase_add_test(tc, test_ctl_credit_and_debit_by_entity_once_each_and_the_audit_balances);
    tcase_add_test(tc, test_gate_reports_the_wallet_by_entity_at_login);
    suite_add_tcase(s, tc);
    TCase *flags = tcase_create("flags");
    tcase_add_test(flags, test_money_by_entity_without_a_cluster_is_refused);
    suite_add_tcase(s, flags);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
