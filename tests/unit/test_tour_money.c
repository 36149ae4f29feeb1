/*
 * tour_money: the director's money lane (tournament/tour_money.h; docs/tournaments.md
 * "Tournaments by entity") -- mtour's blocking calls on a thread of their own, their results
 * handed back on the event loop -- against a real Redis Cluster of 3 masters with a replica each
 * on loopback (tests/support/tcluster.h).
 *
 * A buy-in, a prize (fixed id prize.<player>, sent twice: paid once), the drive of the paying set
 * and the fees' sweep go through the lane while the loop keeps running, each handed back in the
 * order submitted, and the audit balances; a lane whose cluster cannot be reached answers -EIO
 * with the reason, and a lane destroyed with jobs queued hands every one back (-ECANCELED for
 * those never run).
 *
 * A redis-server without cluster mode makes the whole program a visible SKIP (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "log.h"
#include "mtour.h"
#include "support.h"
#include "tcluster.h"
#include "tour_money.h"

static ts_cluster_t *g_cl;

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_ERROR + 1);
    evthread_use_pthreads();
    g_cl = ts_cluster_start(3, 1);
}

static void setup_lane(void)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_ERROR + 1);
    evthread_use_pthreads();
}

static void teardown(void)
{
    ts_cluster_stop(g_cl);
    g_cl = NULL;
}

/* The jobs handed back, in order, and how many ticks of the loop ran meanwhile. */
static tour_money_job_t *g_back[16];
static int g_nback, g_ticks;

static void done_cb(tour_money_job_t *job, void *arg)
{
    (void)arg;
    ck_assert_int_lt(g_nback, 16);
    g_back[g_nback++] = job;
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    g_ticks++;
}

/* Runs base until n jobs were handed back (or 30 s). */
static void run_until(struct event_base *base, int n)
{
    struct event *tick = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
    struct timeval tv = {0, 5000};
    event_add(tick, &tv);
    for (int i = 0; i < 6000 && g_nback < n; i++)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(tick);
    ck_assert_int_eq(g_nback, n);
}

static void job(tour_money_job_t *j, tour_money_op_t op, const char *t, long long epoch,
                const char *req, const char *player, long long amount, long long fee)
{
    memset(j, 0, sizeof *j);
    j->op = op;
    snprintf(j->tour, sizeof j->tour, "%s", t);
    j->epoch = epoch;
    snprintf(j->req, sizeof j->req, "%s", req);
    snprintf(j->player, sizeof j->player, "%s", player);
    j->amount = amount;
    j->fee = fee;
    j->done = done_cb;
}

static long long bal(mtour_t *mt, const char *key)
{
    long long v = -1;
    ck_assert_msg(xfer_balance(mtour_xfer(mt), key, &v) == 0, "balance %s", key);
    return v;
}

START_TEST(test_buy_in_prize_and_sweep_run_off_the_loop_and_come_back_in_order)
{
    ck_assert_msg(g_cl != NULL, "could not start a 3+3 Redis Cluster");
    char err[600] = "", t[24], p[24], w[64], pool[64], fees[64];
    rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    mtour_opts_t mo = {.xfer = {.wait_replicas = 1, .wait_timeout_ms = 2000}};
    mtour_t *mt = mtour_create(c, &mo);
    snprintf(t, sizeof t, "%d1", (int)getpid());
    snprintf(p, sizeof p, "%d7", (int)getpid());
    snprintf(w, sizeof w, "{p:%s}:bal", p);
    ck_assert_int_eq(mtour_key(t, "bal", pool, sizeof pool), 0);
    ck_assert_int_eq(mtour_key(t, "bal:fees", fees, sizeof fees), 0);
    ck_assert_uint_ne(rcluster_key_slot(w, strlen(w)), rcluster_key_slot(pool, strlen(pool)));
    ck_assert_int_eq(xfer_seed(mtour_xfer(mt), w, 500, "seed-lane"), 0);
    long long epoch = 0;
    ck_assert_int_eq(mtour_claim(mt, t, &epoch), 0);

    struct event_base *base = event_base_new();
    tour_money_config_t cfg = {.cluster = ts_cluster_seeds(g_cl), .mtour = mo};
    tour_money_t *lane = NULL;
    ck_assert_int_eq(tour_money_create(base, &cfg, &lane), 0);
    tour_money_job_t j[5];
    g_nback = g_ticks = 0;
    job(&j[0], TOUR_MONEY_BUYIN, t, epoch, "r1", p, 100, 10);
    job(&j[1], TOUR_MONEY_PAYOUT, t, epoch, "prize.7", p, 100, 0);
    job(&j[2], TOUR_MONEY_PAYOUT, t, epoch, "prize.7", p, 100, 0);
    job(&j[3], TOUR_MONEY_DRIVE, t, epoch, "", "", 0, 0);
    job(&j[4], TOUR_MONEY_FEES_SWEEP, t, epoch, "", "", 0, 0);
    for (int i = 0; i < 5; i++)
        tour_money_submit(lane, &j[i]);
    ck_assert_int_eq(tour_money_pending(lane), 5);
    run_until(base, 5);
    ck_assert_int_eq(tour_money_pending(lane), 0);
    ck_assert_int_gt(g_ticks, 0); /* the loop ran while the lane worked */
    for (int i = 0; i < 5; i++) {
        ck_assert_ptr_eq(g_back[i], &j[i]);
        ck_assert_msg(j[i].rc == 0, "job %d: %d %s", i, j[i].rc, j[i].error);
    }
    ck_assert_int_eq(j[0].res.state, MTOUR_PAID);
    ck_assert_int_eq(j[1].res.state, MTOUR_PAID);
    ck_assert(!j[1].res.replayed);
    ck_assert_int_eq(j[2].res.state, MTOUR_PAID);
    ck_assert(j[2].res.replayed); /* the same fixed id: paid once */
    ck_assert_int_eq(j[3].drive.pending, 0);
    ck_assert_int_eq(j[4].swept, 10);
    ck_assert_int_eq(bal(mt, w), 490);
    ck_assert_int_eq(bal(mt, pool), 0);
    ck_assert_int_eq(bal(mt, fees), 0);
    xfer_audit_t a;
    int rc = -EAGAIN;
    for (int i = 0; i < 20 && rc == -EAGAIN; i++)
        if ((rc = xfer_audit(mtour_xfer(mt), &a)) == -EAGAIN)
            ts_sleep_ms(250);
    ck_assert_int_eq(rc, 0);
    ck_assert(a.balanced);
    tour_money_destroy(lane);
    event_base_free(base);
    mtour_destroy(mt);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_an_unreachable_cluster_answers_eio_and_destroy_hands_every_job_back)
{
    struct event_base *base = event_base_new();
    tour_money_config_t cfg = {.cluster = "127.0.0.1:1",
                               .client = {.connect_timeout_ms = 100, .command_timeout_ms = 200}};
    tour_money_t *lane = NULL;
    ck_assert_int_eq(tour_money_create(base, NULL, &lane), -EINVAL);
    ck_assert_int_eq(tour_money_create(base, &cfg, &lane), 0);
    tour_money_job_t j[6];
    g_nback = g_ticks = 0;
    job(&j[0], TOUR_MONEY_DRIVE, "5", 1, "", "", 0, 0);
    tour_money_submit(lane, &j[0]);
    run_until(base, 1);
    ck_assert_int_eq(j[0].rc, -EIO);
    ck_assert_msg(strstr(j[0].error, "the cluster") != NULL, "%s", j[0].error);
    for (int i = 1; i < 6; i++) {
        job(&j[i], TOUR_MONEY_CLOSE_INTAKE, "5", 1, "", "", 0, 0);
        tour_money_submit(lane, &j[i]);
    }
    tour_money_destroy(lane); /* with jobs queued: each is handed back, once */
    ck_assert_int_eq(g_nback, 6);
    for (int i = 1; i < 6; i++) {
        ck_assert_ptr_eq(g_back[i], &j[i]); /* the ones run first, then the ones never run */
        ck_assert(j[i].rc == -EIO || j[i].rc == -ECANCELED);
    }
    tour_money_destroy(NULL);
    event_base_free(base);
}
END_TEST

int main(void)
{
    if (ts_cluster_skip("tour_money"))
        return 0;
    Suite *s = suite_create("tour_money");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_buy_in_prize_and_sweep_run_off_the_loop_and_come_back_in_order);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("lane");
    tcase_set_timeout(tl, 30);
    tcase_add_unchecked_fixture(tl, setup_lane, NULL);
    tcase_add_test(tl, test_an_unreachable_cluster_answers_eio_and_destroy_hands_every_job_back);
    suite_add_tcase(s, tl);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
