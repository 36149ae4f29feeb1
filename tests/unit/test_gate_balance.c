/*
 * The gateways' connection balance (docs/gateway.md "Connection balance"): the decision
 * (gateway/gate_balance.h) over many cases, then two real croupier-gate against a real
 * redis-server on loopback: every player on the first, a second one started empty (a gateway
 * replaced after a crash, a scale-out); the first sends GoAway{REBALANCE} to a few players at a
 * time until it is within its share, the players come back on the second (what a Service does
 * with a new connection), and neither sends any more. With the balance off nothing is sent.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate_balance.h"
#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"

#define SECRET "gate-balance-test-secret-0123456789"

/* ---- the decision ------------------------------------------------------------------------- */

static const gate_balance_opts_t DEF = {.slack_percent = 20, .min_excess = 10, .step_percent = 5};

START_TEST(test_balance_alone_or_even_sheds_nothing)
{
    long none[1] = {0};
    ck_assert_int_eq(gate_balance_shed(1000, none, 0, &DEF), 0); /* alone */
    long even[2] = {1000, 1000};
    ck_assert_int_eq(gate_balance_shed(1000, even, 2, &DEF), 0);
    long near[1] = {900}; /* fair 950, threshold max(1140, 960) */
    ck_assert_int_eq(gate_balance_shed(1000, near, 1, &DEF), 0);
    long small[1] = {0}; /* 15 against 0: fair 8, above fair + 10 = 18? no */
    ck_assert_int_eq(gate_balance_shed(15, small, 1, &DEF), 0);
    ck_assert_int_eq(gate_balance_shed(0, small, 1, &DEF), 0);
    long bad[1] = {-1};
    ck_assert_int_eq(gate_balance_shed(1000, bad, 1, &DEF), 0);
    ck_assert_int_eq(gate_balance_shed(1000, small, 1, NULL), 0);
}
END_TEST

START_TEST(test_balance_overloaded_sheds_a_step_never_below_fair)
{
    long empty[1] = {0};
    /* 300 against an empty one: fair 150, a step of 5 % = 15 */
    ck_assert_int_eq(gate_balance_shed(300, empty, 1, &DEF), 15);
    /* a big step is capped by the excess over the fair share */
    gate_balance_opts_t big = DEF;
    big.step_percent = 100;
    ck_assert_int_eq(gate_balance_shed(300, empty, 1, &big), 150);
    /* a tiny gateway still sheds one at a time */
    long zero2[2] = {0, 0};
    ck_assert_int_eq(gate_balance_shed(19, zero2, 2, &DEF), 1); /* fair 7, 19 > 17 */
}
END_TEST

/* Thousands of random clusters, each balanced by repeated decisions where the shed players
 * reconnect to the least loaded gateway: the total is kept, no gateway ever goes below the fair
 * share by shedding, and the loop ends with every gateway within the threshold. */
START_TEST(test_balance_random_clusters_converge)
{
    unsigned seed = 12345;
    for (int run = 0; run < 2000; run++) {
        size_t n = 2 + rand_r(&seed) % 6;
        long load[8], total = 0;
        for (size_t i = 0; i < n; i++) {
            load[i] = rand_r(&seed) % 3 == 0 ? 0 : rand_r(&seed) % 2000;
            total += load[i];
        }
        gate_balance_opts_t o = {.slack_percent = 1 + rand_r(&seed) % 50, .min_excess = 10,
                                 .step_percent = 1 + rand_r(&seed) % 30};
        int rounds = 0;
        for (bool moved = true; moved; rounds++) {
            ck_assert_int_lt(rounds, 10000);
            moved = false;
            for (size_t i = 0; i < n; i++) {
                long peers[8];
                size_t k = 0;
                for (size_t j = 0; j < n; j++)
                    if (j != i)
                        peers[k++] = load[j];
                long shed = gate_balance_shed(load[i], peers, k, &o);
                ck_assert_int_ge(shed, 0);
                if (shed == 0)
                    continue;
                long fair = (total + (long)n - 1) / (long)n;
                ck_assert_int_ge(load[i] - shed, fair);
                load[i] -= shed;
                for (long s = 0; s < shed; s++) {
                    size_t least = 0;
                    for (size_t j = 1; j < n; j++)
                        if (load[j] < load[least])
                            least = j;
                    load[least]++;
                }
                moved = true;
            }
        }
        long sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += load[i];
        ck_assert_int_eq(sum, total);
    }
}
END_TEST

/* ---- two real gateways -------------------------------------------------------------------- */

#define PLAYERS 60

typedef struct {
    testenv_t rig;
    token_secret_t secret;
} env_t;

static testenv_server_t gate_start(env_t *e, const char *id, bool balance)
{
    char *args[] = {"--gate-ttl-ms",   "600", "--goaway-spread-ms",      "100",
                    "--rebalance-ms",  "500", "--rebalance-step-percent", "25",
                    "--drain-window-ms", "100", NULL};
    if (!balance)
        args[4] = NULL;
    testenv_server_t g;
    ck_assert_int_eq(testenv_start_gate(&e->rig, &g, id, args), 0);
    return g;
}

static gatec_t *login(env_t *e, const testenv_server_t *gate, uint64_t player)
{
    gatec_t *c = gatec_connect("127.0.0.1", gate->port, 2000);
    ck_assert_ptr_nonnull(c);
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&e->secret, player, time(NULL) + 600, tok, sizeof tok), 0);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 5000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(m);
    return c;
}

/* A series of the gateway's /metrics; it must answer. */
static long metric(const testenv_server_t *gate, const char *series)
{
    long v = testenv_metric(gate, series);
    ck_assert_msg(v >= 0, "no %s in /metrics", series);
    return v;
}

#define REBALANCED "gate_goaways_total{reason=\"rebalance\"}"

/*
 * Every player on a; b starts empty. Players told GoAway{REBALANCE} come back on b. Returns how
 * many moved once nothing was sent for `quiet_ms` (bounded: 30 s in all).
 */
static int follow_goaways(env_t *e, gatec_t **on_a, gatec_t **on_b, const testenv_server_t *b,
                          int quiet_ms)
{
    int moved = 0;
    long long start = ts_now_ms(), last = ts_now_ms();
    while (ts_now_ms() - last < quiet_ms) {
        ck_assert_msg(ts_now_ms() - start < 30000, "the balance did not settle in 30 s");
        bool any = false;
        for (int i = 0; i < PLAYERS; i++) {
            if (on_a[i] == NULL)
                continue;
            Croupier__ServerMessage *m =
                gatec_next_event(on_a[i], CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY, 1);
            if (m == NULL)
                continue;
            ck_assert_int_eq(m->go_away->reason, CROUPIER__GO_AWAY_REASON__GOAWAY_REBALANCE);
            ck_assert_ptr_nonnull(m->go_away->detail);
            ck_assert_ptr_nonnull(strstr(m->go_away->detail, "rebalancing"));
            ck_assert_uint_le(m->go_away->reconnect_delay_ms, 100);
            frame_free_server(m);
            ck_assert_int_eq(gatec_wait_eof(on_a[i], 5000), 0); /* a graceful close */
            gatec_close(on_a[i]);
            on_a[i] = NULL;
            on_b[i] = login(e, b, 9000 + (uint64_t)i);
            moved++;
            any = true;
        }
        if (any)
            last = ts_now_ms();
        ts_sleep_ms(20);
    }
    return moved;
}

START_TEST(test_balance_an_empty_gateway_gets_its_share)
{
    signal(SIGPIPE, SIG_IGN);
    env_t e;
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(testenv_start(&e.rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&e.secret, SECRET, strlen(SECRET)), 0);
    testenv_server_t a = gate_start(&e, "ga", true);
    gatec_t *on_a[PLAYERS] = {0}, *on_b[PLAYERS] = {0};
    for (int i = 0; i < PLAYERS; i++)
        on_a[i] = login(&e, &a, 9000 + (uint64_t)i);
    /* alone, a keeps everyone */
    ts_sleep_ms(1500);
    ck_assert_int_eq(metric(&a, REBALANCED), 0);

    testenv_server_t b = gate_start(&e, "gb", true);
    int moved = follow_goaways(&e, on_a, on_b, &b, 2500);
    /* fair share 30: a stops once within max(30 * 1.2, 30 + 10) = 40, and a step (25 % of
     * what it holds) never takes it below 30 */
    ck_assert_int_ge(moved, PLAYERS - 40);
    ck_assert_int_le(moved, PLAYERS - 30);
    ck_assert_int_eq(metric(&a, REBALANCED), moved);
    ck_assert_int_eq(metric(&b, REBALANCED), 0);
    ck_assert_int_eq(metric(&a, "gate_connections"), PLAYERS - moved);
    ck_assert_int_eq(metric(&b, "gate_connections"), moved);
    /* every player still answers where it is */
    for (int i = 0; i < PLAYERS; i++) {
        gatec_t *c = on_a[i] != NULL ? on_a[i] : on_b[i];
        Croupier__ServerMessage *m = gatec_ping(c, 7, 42, 3000);
        ck_assert_ptr_nonnull(m);
        frame_free_server(m);
    }
    /* the figures are published beside the entries; a gateway that leaves takes its own away */
    char *v = ts_redis_cmd(e.rig.redis, "HGET {croupier:gates}.load gb");
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(strtol(v, NULL, 10), moved);
    free(v);
    testenv_stop_server(&b);
    v = ts_redis_cmd(e.rig.redis, "HEXISTS {croupier:gates}.load gb");
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(v, "0");
    free(v);
    for (int i = 0; i < PLAYERS; i++) {
        gatec_close(on_a[i]);
        gatec_close(on_b[i]);
    }
    testenv_stop_server(&a);
    testenv_stop(&e.rig);
}
END_TEST

START_TEST(test_balance_off_sends_nothing)
{
    signal(SIGPIPE, SIG_IGN);
    env_t e;
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(testenv_start(&e.rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&e.secret, SECRET, strlen(SECRET)), 0);
    testenv_server_t a = gate_start(&e, "ga", false);
    gatec_t *on_a[PLAYERS] = {0}, *on_b[PLAYERS] = {0};
    for (int i = 0; i < PLAYERS; i++)
        on_a[i] = login(&e, &a, 9000 + (uint64_t)i);
    testenv_server_t b = gate_start(&e, "gb", false);
    ck_assert_int_eq(follow_goaways(&e, on_a, on_b, &b, 2500), 0);
    ck_assert_int_eq(metric(&a, REBALANCED), 0);
    ck_assert_int_eq(metric(&a, "gate_connections"), PLAYERS);
    /* the figures are published all the same (an operator reads them) */
    char *v = ts_redis_cmd(e.rig.redis, "HGET {croupier:gates}.load ga");
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(strtol(v, NULL, 10), PLAYERS);
    free(v);
    for (int i = 0; i < PLAYERS; i++)
        gatec_close(on_a[i]);
    testenv_stop_server(&b);
    testenv_stop_server(&a);
    testenv_stop(&e.rig);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_balance");
    TCase *tc = tcase_create("decision");
    tcase_add_test(tc, test_balance_alone_or_even_sheds_nothing);
    tcase_add_test(tc, test_balance_overloaded_sheds_a_step_never_below_fair);
    tcase_add_test(tc, test_balance_random_clusters_converge);
    suite_add_tcase(s, tc);
    tc = tcase_create("gateways");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_balance_an_empty_gateway_gets_its_share);
    tcase_add_test(tc, test_balance_off_sends_nothing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
