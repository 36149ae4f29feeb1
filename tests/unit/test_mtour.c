/*
 * mtour: a tournament's money by entity (money/mtour.h; docs/tournaments.md "Tournaments by
 * entity") against a real Redis Cluster of 3 masters with a replica each on loopback
 * (tests/support/tcluster.h), every step WAITing for that replica.
 *
 * The cases share the cluster and keep its books balanced (wallets are seeded with xfer_seed,
 * the house's overlay account too), so the conservation audit must balance after each: a buy-in
 * booked once per request id (the fee kept per tournament, the buy-in in the pool); a wallet
 * short (refused, nothing moved); the fence; a director SIGKILLed between a buy-in's debit and
 * its credit, the next owner finishing it once from the tournament's paying set (and once after
 * xfer's sweeper delivered the chips to the intake first); payouts once
 * each, one stopped in flight and driven to its end; a cancellation with a buy-in in flight (the
 * intake closed: the credit refused and the chips back in the wallet), the refunds and the fees'
 * sweep leaving the tournament empty.
 *
 * A redis-server without cluster mode makes the whole program a visible SKIP (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "log.h"
#include "mtour.h"
#include "support.h"
#include "tcluster.h"

#define MASTERS 3
#define REPLICAS 1

static ts_cluster_t *g_cl;

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_ERROR + 1);
    g_cl = ts_cluster_start(MASTERS, REPLICAS);
}

static void teardown(void)
{
    ts_cluster_stop(g_cl);
    g_cl = NULL;
}

#define NEED_CLUSTER() ck_assert_msg(g_cl != NULL, "could not start a 3+3 Redis Cluster")

static rcluster_t *client(void)
{
    char err[600] = "";
    rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "rcluster_create: %s", err);
    return c;
}

static mtour_t *money(rcluster_t *c)
{
    mtour_opts_t o = {.xfer = {.wait_replicas = 1, .wait_timeout_ms = 2000}};
    return mtour_create(c, &o);
}

/* A tournament id and player names of this test process (each case runs in its own). */
static const char *tour(int k)
{
    static char buf[4][24];
    snprintf(buf[k % 4], sizeof buf[0], "%d%d", (int)getpid(), k);
    return buf[k % 4];
}

/* A player of this process whose wallet is not in the slot of any tournament of the cases (so
 * that its moves are transfers, which the fault hooks stop; the one-slot case is its own). */
static const char *pl(const char *name)
{
    static char buf[8][48];
    static int i;
    char *b = buf[i++ % 8];
    for (int n = 0;; n++) {
        char w[96], pool[64];
        snprintf(b, 48, "%s%d%s%.0d", name, (int)getpid(), n ? "-" : "", n);
        snprintf(w, sizeof w, "{p:%s}:bal", b);
        bool clash = false;
        for (int k = 1; k <= 6 && !clash; k++) {
            char id[24];
            snprintf(id, sizeof id, "%d%d", (int)getpid(), k);
            ck_assert_int_eq(mtour_key(id, "bal", pool, sizeof pool), 0);
            clash = rcluster_key_slot(w, strlen(w)) == rcluster_key_slot(pool, strlen(pool));
        }
        if (!clash)
            return b;
    }
}

static long long bal(mtour_t *mt, const char *key)
{
    long long v = -1;
    ck_assert_msg(xfer_balance(mtour_xfer(mt), key, &v) == 0, "balance %s: %s", key,
                  xfer_last_error(mtour_xfer(mt)));
    return v;
}

static long long wallet(mtour_t *mt, const char *player)
{
    char k[128];
    snprintf(k, sizeof k, "{p:%s}:bal", player);
    return bal(mt, k);
}

static long long tacct(mtour_t *mt, const char *t, const char *what)
{
    char k[64];
    ck_assert_int_eq(mtour_key(t, what, k, sizeof k), 0);
    return bal(mt, k);
}

static void seed(mtour_t *mt, const char *account, long long amount)
{
    char op[96];
    snprintf(op, sizeof op, "seed-%d-%lld-%zu", (int)getpid(), amount, strlen(account));
    ck_assert_msg(xfer_seed(mtour_xfer(mt), account, amount, op) == 0, "seed %s: %s", account,
                  xfer_last_error(mtour_xfer(mt)));
}

static void seed_wallet(mtour_t *mt, const char *player, long long amount)
{
    char k[128];
    snprintf(k, sizeof k, "{p:%s}:bal", player);
    seed(mt, k, amount);
}

/* The audit balances with exactly in_flight chips in flight. */
static void audit(mtour_t *mt, long long in_flight)
{
    xfer_audit_t a;
    int rc = -EAGAIN;
    for (int i = 0; i < 20 && rc == -EAGAIN; i++) {
        rc = xfer_audit(mtour_xfer(mt), &a);
        if (rc == -EAGAIN)
            ts_sleep_ms(250);
    }
    ck_assert_msg(rc == 0, "audit: %s", xfer_last_error(mtour_xfer(mt)));
    ck_assert_msg(a.balanced, "audit: balances %lld + in flight %lld != seeded %lld; %zu bad (%s)",
                  a.balances, a.in_flight_amount, a.seeded, a.bad, a.first_bad);
    ck_assert_int_eq(a.in_flight_amount, in_flight);
}

static void buyin_ok(mtour_t *mt, const char *t, long long e, const char *req, const char *p,
                     long long buyin, long long fee, mtour_state_t want, bool replayed)
{
    mtour_result_t r;
    int rc = mtour_buyin(mt, t, e, req, p, buyin, fee, &r);
    ck_assert_msg(rc == 0, "buy-in %s: %d %s", req, rc, mtour_last_error(mt));
    ck_assert_int_eq(r.state, want);
    ck_assert_int_eq(r.replayed, replayed);
}

START_TEST(test_a_buy_in_is_booked_once_per_request_id_fee_kept_per_tournament)
{
    NEED_CLUSTER();
    rcluster_t *c = client();
    mtour_t *mt = money(c);
    const char *t = tour(1), *alice = pl("alice"), *bob = pl("bob");
    long long e;
    ck_assert_int_eq(mtour_claim(mt, t, &e), 0);
    seed_wallet(mt, alice, 1000);
    seed_wallet(mt, bob, 50);

    buyin_ok(mt, t, e, "r1", alice, 100, 10, MTOUR_PAID, false);
    ck_assert_int_eq(wallet(mt, alice), 890);
    ck_assert_int_eq(tacct(mt, t, "bal"), 100);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 10);
    ck_assert_int_eq(tacct(mt, t, "bal:in"), 0);
    /* the same request again: its first answer, nothing moved */
    buyin_ok(mt, t, e, "r1", alice, 100, 10, MTOUR_PAID, true);
    ck_assert_int_eq(wallet(mt, alice), 890);
    ck_assert_int_eq(tacct(mt, t, "bal"), 100);
    /* the request id for another amount or player */
    mtour_result_t r;
    ck_assert_int_eq(mtour_buyin(mt, t, e, "r1", alice, 200, 10, &r), -EEXIST);
    ck_assert_int_eq(mtour_buyin(mt, t, e, "r1", bob, 100, 10, &r), -EEXIST);
    /* a re-entry is another request: another buy-in */
    buyin_ok(mt, t, e, "r2", alice, 100, 10, MTOUR_PAID, false);
    ck_assert_int_eq(wallet(mt, alice), 780);
    ck_assert_int_eq(tacct(mt, t, "bal"), 200);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 20);

    /* a wallet short: refused, nothing moved, the same answer again */
    ck_assert_int_eq(mtour_buyin(mt, t, e, "r3", bob, 100, 10, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_REFUSED);
    ck_assert_int_eq(r.why, MTOUR_WHY_INSUFFICIENT);
    ck_assert_int_eq(wallet(mt, bob), 50);
    ck_assert_int_eq(mtour_buyin(mt, t, e, "r3", bob, 100, 10, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_REFUSED);
    ck_assert(r.replayed);
    ck_assert_int_eq(r.why, MTOUR_WHY_INSUFFICIENT);

    /* bad input: nothing sent */
    ck_assert_int_eq(mtour_buyin(mt, t, e, "bad id", alice, 100, 10, &r), -EINVAL);
    ck_assert_int_eq(mtour_buyin(mt, "x1", e, "r9", alice, 100, 10, &r), -EINVAL);
    ck_assert_int_eq(mtour_buyin(mt, t, e, "r9", "a{b", 100, 10, &r), -EINVAL);
    ck_assert_int_eq(mtour_buyin(mt, t, e, "r9", alice, 0, 10, &r), -EINVAL);

    /* a long request id: the transfer id is derived (SHA-1), still once */
    char longreq[93];
    memset(longreq, 'q', 92);
    longreq[92] = '\0';
    buyin_ok(mt, t, e, longreq, alice, 100, 0, MTOUR_PAID, false);
    buyin_ok(mt, t, e, longreq, alice, 100, 0, MTOUR_PAID, true);
    ck_assert_int_eq(wallet(mt, alice), 680);
    ck_assert_int_eq(tacct(mt, t, "bal"), 300);
    audit(mt, 0);
    mtour_destroy(mt);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_the_fence_refuses_an_old_owner_and_replays_come_before_it)
{
    NEED_CLUSTER();
    rcluster_t *c = client();
    mtour_t *mt = money(c);
    const char *t = tour(2), *carol = pl("carol");
    long long e1, e2;
    ck_assert_int_eq(mtour_claim(mt, t, &e1), 0);
    seed_wallet(mt, carol, 500);
    buyin_ok(mt, t, e1, "a1", carol, 100, 5, MTOUR_PAID, false);
    ck_assert_int_eq(mtour_claim(mt, t, &e2), 0);
    ck_assert_int_gt(e2, e1);
    /* the old owner: a new request is refused with nothing reserved or moved */
    mtour_result_t r;
    ck_assert_int_eq(mtour_buyin(mt, t, e1, "a2", carol, 100, 5, &r), -ESTALE);
    ck_assert_int_eq(wallet(mt, carol), 395);
    ck_assert_int_eq(mtour_payout(mt, t, e1, "prize.x", carol, 50, &r), -ESTALE);
    ck_assert_int_eq(tacct(mt, t, "bal"), 100);
    /* a request it answered is answered again (as the director's replays) */
    buyin_ok(mt, t, e1, "a1", carol, 100, 5, MTOUR_PAID, true);
    /* the new owner goes on */
    buyin_ok(mt, t, e2, "a2", carol, 100, 5, MTOUR_PAID, false);
    ck_assert_int_eq(wallet(mt, carol), 290);
    audit(mt, 0);
    mtour_destroy(mt);
    rcluster_destroy(c);
}
END_TEST

static bool kill_at_debited(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    (void)arg;
    if (at == XFER_AT_DEBITED)
        raise(SIGKILL);
    return false;
}

static bool stop_at_debited(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    (void)arg;
    return at == XFER_AT_DEBITED;
}

START_TEST(test_a_director_killed_between_debit_and_credit_is_finished_once_by_the_next_owner)
{
    NEED_CLUSTER();
    rcluster_t *c = client();
    mtour_t *mt = money(c);
    const char *t = tour(3), *dave = pl("dave");
    long long e1, e2;
    ck_assert_int_eq(mtour_claim(mt, t, &e1), 0);
    seed_wallet(mt, dave, 300);

    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) { /* the director, SIGKILLed by its own hook between the debit and credit */
        char err[600];
        rcluster_t *c2 = rcluster_create(ts_cluster_seeds(g_cl), NULL, err, sizeof err);
        if (c2 == NULL)
            _exit(3);
        mtour_t *m2 = money(c2);
        xfer_set_fault_hook(mtour_xfer(m2), kill_at_debited, NULL);
        mtour_result_t r;
        mtour_buyin(m2, t, e1, "k1", dave, 100, 20, &r);
        _exit(4); /* the hook did not fire */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "the director was not killed between debit and credit (status %#x)", status);
    /* debited, not credited: in flight, and the books still balance */
    ck_assert_int_eq(wallet(mt, dave), 180);
    ck_assert_int_eq(tacct(mt, t, "bal:in"), 0);
    ck_assert_int_eq(tacct(mt, t, "bal"), 0);
    audit(mt, 120);

    /* the next owner claims and drives the paying set first: booked once */
    ck_assert_int_eq(mtour_claim(mt, t, &e2), 0);
    mtour_drive_stats_t st;
    ck_assert_msg(mtour_drive(mt, t, e2, &st) == 0, "drive: %s", mtour_last_error(mt));
    ck_assert_int_eq(st.found, 1);
    ck_assert_int_eq(st.settled, 1);
    ck_assert_int_eq(tacct(mt, t, "bal"), 100);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 20);
    ck_assert_int_eq(tacct(mt, t, "bal:in"), 0);
    ck_assert_int_eq(wallet(mt, dave), 180);
    /* nothing left; the asker's resend gets the one answer */
    ck_assert_int_eq(mtour_drive(mt, t, e2, &st), 0);
    ck_assert_int_eq(st.found, 0);
    buyin_ok(mt, t, e2, "k1", dave, 100, 20, MTOUR_PAID, true);
    ck_assert_int_eq(tacct(mt, t, "bal"), 100);
    audit(mt, 0);

    /* the same, stopped in this process: the resend itself finishes it */
    xfer_set_fault_hook(mtour_xfer(mt), stop_at_debited, NULL);
    mtour_result_t r;
    ck_assert_int_eq(mtour_buyin(mt, t, e2, "k2", dave, 100, 20, &r), -EAGAIN);
    ck_assert_int_eq(r.state, MTOUR_PENDING);
    audit(mt, 120);
    xfer_set_fault_hook(mtour_xfer(mt), NULL, NULL);
    buyin_ok(mt, t, e2, "k2", dave, 100, 20, MTOUR_PAID, false);
    buyin_ok(mt, t, e2, "k2", dave, 100, 20, MTOUR_PAID, true);
    ck_assert_int_eq(wallet(mt, dave), 60);
    ck_assert_int_eq(tacct(mt, t, "bal"), 200);
    audit(mt, 0);

    /* stopped again, and xfer's sweeper comes first: the chips reach the intake (counted by the
     * audit as the tournament's), and the next drive books them once */
    xfer_set_fault_hook(mtour_xfer(mt), stop_at_debited, NULL);
    ck_assert_int_eq(mtour_buyin(mt, t, e2, "k3", dave, 50, 10, &r), -EAGAIN);
    xfer_set_fault_hook(mtour_xfer(mt), NULL, NULL);
    xfer_sweep_stats_t sw;
    ck_assert_int_eq(xfer_sweep(mtour_xfer(mt), 0, &sw), 0);
    ck_assert_int_ge(sw.completed, 1);
    ck_assert_int_eq(tacct(mt, t, "bal:in"), 60);
    audit(mt, 0);
    ck_assert_int_eq(mtour_drive(mt, t, e2, &st), 0);
    ck_assert_int_eq(st.settled, 1);
    ck_assert_int_eq(tacct(mt, t, "bal:in"), 0);
    ck_assert_int_eq(tacct(mt, t, "bal"), 250);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 50);
    ck_assert_int_eq(wallet(mt, dave), 0);
    audit(mt, 0);
    mtour_destroy(mt);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_payouts_are_paid_once_each)
{
    NEED_CLUSTER();
    rcluster_t *c = client();
    mtour_t *mt = money(c);
    const char *t = tour(4), *erin = pl("erin"), *finn = pl("finn");
    long long e;
    ck_assert_int_eq(mtour_claim(mt, t, &e), 0);
    seed_wallet(mt, erin, 200);
    seed_wallet(mt, finn, 200);
    buyin_ok(mt, t, e, "p1", erin, 100, 10, MTOUR_PAID, false);
    buyin_ok(mt, t, e, "p2", finn, 100, 10, MTOUR_PAID, false);

    /* the overlay from the house's account (funded by the operator), once */
    mtour_result_t r;
    seed(mt, MTOUR_HOUSE_OVERLAY, 1000);
    ck_assert_int_eq(mtour_overlay(mt, t, 50, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_PAID);
    ck_assert_int_eq(mtour_overlay(mt, t, 50, &r), 0);
    ck_assert(r.replayed);
    ck_assert_int_eq(tacct(mt, t, "bal"), 250);

    /* a prize: decided once, paid once, the same answer again */
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.1", erin, 150, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_PAID);
    ck_assert(!r.replayed);
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.1", erin, 150, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_PAID);
    ck_assert(r.replayed);
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.1", erin, 200, &r), -EEXIST);
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.1", finn, 150, &r), -EEXIST);
    ck_assert_int_eq(wallet(mt, erin), 240);
    ck_assert_int_eq(tacct(mt, t, "bal"), 100);
    /* more than the pool holds: decided, not paid (an operator's) */
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.big", finn, 1000, &r), -ENOSPC);
    ck_assert_int_eq(tacct(mt, t, "bal"), 100);

    /* a prize stopped between its debit and credit: in flight, the drive pays it once */
    xfer_set_fault_hook(mtour_xfer(mt), stop_at_debited, NULL);
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.2", finn, 100, &r), -EAGAIN);
    xfer_set_fault_hook(mtour_xfer(mt), NULL, NULL);
    ck_assert_int_eq(tacct(mt, t, "bal"), 0);
    ck_assert_int_eq(wallet(mt, finn), 90);
    audit(mt, 100);
    mtour_drive_stats_t st;
    /* prize.big is still decided and unpayable: the drive says so and pays the other */
    ck_assert_int_eq(mtour_drive(mt, t, e, &st), -EAGAIN);
    ck_assert_int_eq(st.found, 2);
    ck_assert_int_eq(st.settled, 1);
    ck_assert_int_eq(st.errors, 1);
    ck_assert_int_eq(wallet(mt, finn), 190);
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.2", finn, 100, &r), 0);
    ck_assert(r.replayed);
    ck_assert_int_eq(wallet(mt, finn), 190);

    /* the fees to the house at the end, once */
    long long swept = 0;
    ck_assert_int_eq(mtour_fees_sweep(mt, t, &swept), 0);
    ck_assert_int_eq(swept, 20);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 0);
    ck_assert_int_eq(mtour_fees_sweep(mt, t, &swept), 0);
    ck_assert_int_eq(swept, 20);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 0);
    audit(mt, 0);
    mtour_destroy(mt);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_cancellation_with_a_buy_in_in_flight_returns_every_chip_once)
{
    NEED_CLUSTER();
    rcluster_t *c = client();
    mtour_t *mt = money(c);
    const char *t = tour(5), *gus = pl("gus"), *hal = pl("hal");
    long long e;
    ck_assert_int_eq(mtour_claim(mt, t, &e), 0);
    seed_wallet(mt, gus, 400);
    seed_wallet(mt, hal, 400);
    buyin_ok(mt, t, e, "c1", gus, 100, 10, MTOUR_PAID, false);
    /* hal's buy-in debited, its director gone before the credit */
    mtour_result_t r;
    xfer_set_fault_hook(mtour_xfer(mt), stop_at_debited, NULL);
    ck_assert_int_eq(mtour_buyin(mt, t, e, "c2", hal, 100, 10, &r), -EAGAIN);
    xfer_set_fault_hook(mtour_xfer(mt), NULL, NULL);
    ck_assert_int_eq(wallet(mt, hal), 290);

    /* the cancellation: the intake closed, the payments pending driven to their end */
    ck_assert_int_eq(mtour_close_intake(mt, t), 0);
    mtour_drive_stats_t st;
    ck_assert_msg(mtour_drive(mt, t, e, &st) == 0, "drive: %s", mtour_last_error(mt));
    ck_assert_int_eq(st.settled, 1);
    ck_assert_int_eq(wallet(mt, hal), 400); /* refused by the closed intake, back whole */
    ck_assert_int_eq(mtour_buyin(mt, t, e, "c2", hal, 100, 10, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_REFUSED);
    ck_assert_int_eq(r.why, MTOUR_WHY_CLOSED);
    ck_assert(r.replayed);
    /* a new registration after it: refused as well, nothing kept */
    ck_assert_int_eq(mtour_buyin(mt, t, e, "c3", hal, 100, 10, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_REFUSED);
    ck_assert_int_eq(r.why, MTOUR_WHY_CLOSED);
    ck_assert_int_eq(wallet(mt, hal), 400);
    /* before the start: every entry refunded, fees included (the fee out of the fees) */
    ck_assert_int_eq(mtour_payout(mt, t, e, "cancel.gus", gus, 100, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_PAID);
    /* the fee's refund stopped between debit and credit: the drive pays it from the fees */
    xfer_set_fault_hook(mtour_xfer(mt), stop_at_debited, NULL);
    ck_assert_int_eq(mtour_refund_fee(mt, t, e, "cancelfee.gus", gus, 10, &r), -EAGAIN);
    xfer_set_fault_hook(mtour_xfer(mt), NULL, NULL);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 0);
    ck_assert_int_eq(mtour_drive(mt, t, e, &st), 0);
    ck_assert_int_eq(st.settled, 1);
    ck_assert_int_eq(mtour_refund_fee(mt, t, e, "cancelfee.gus", gus, 10, &r), 0);
    ck_assert(r.replayed);
    /* the op id of a fee's refund is not a pool payout's */
    ck_assert_int_eq(mtour_payout(mt, t, e, "cancelfee.gus", gus, 10, &r), -EEXIST);
    ck_assert_int_eq(wallet(mt, gus), 400);
    long long swept;
    ck_assert_int_eq(mtour_fees_sweep(mt, t, &swept), 0);
    ck_assert_int_eq(swept, 0);
    ck_assert_int_eq(tacct(mt, t, "bal"), 0);
    ck_assert_int_eq(tacct(mt, t, "bal:in"), 0);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 0);
    audit(mt, 0);
    mtour_destroy(mt);
    rcluster_destroy(c);
}
END_TEST

/* A player of this process whose wallet hashes to the slot of tournament t's keys. */
static const char *same_slot_player(const char *t)
{
    static char name[48];
    char pool[64], w[96];
    ck_assert_int_eq(mtour_key(t, "bal", pool, sizeof pool), 0);
    unsigned want = rcluster_key_slot(pool, strlen(pool));
    for (long i = 0; i < 10000000; i++) {
        snprintf(name, sizeof name, "ss%d-%ld", (int)getpid(), i);
        snprintf(w, sizeof w, "{p:%s}:bal", name);
        if (rcluster_key_slot(w, strlen(w)) == want)
            return name;
    }
    ck_abort_msg("no player name in the slot of %s", pool);
    return NULL;
}

START_TEST(test_a_wallet_in_the_tournaments_own_slot_moves_in_one_script)
{
    NEED_CLUSTER();
    rcluster_t *c = client();
    mtour_t *mt = money(c);
    const char *t = tour(6), *ivy = same_slot_player(t);
    long long e;
    ck_assert_int_eq(mtour_claim(mt, t, &e), 0);
    seed_wallet(mt, ivy, 300);
    buyin_ok(mt, t, e, "s1", ivy, 100, 10, MTOUR_PAID, false);
    buyin_ok(mt, t, e, "s1", ivy, 100, 10, MTOUR_PAID, true);
    ck_assert_int_eq(wallet(mt, ivy), 190);
    ck_assert_int_eq(tacct(mt, t, "bal"), 100);
    ck_assert_int_eq(tacct(mt, t, "bal:fees"), 10);
    mtour_result_t r;
    ck_assert_int_eq(mtour_buyin(mt, t, e, "s2", ivy, 200, 10, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_REFUSED);
    ck_assert_int_eq(r.why, MTOUR_WHY_INSUFFICIENT);
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.ivy", ivy, 100, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_PAID);
    ck_assert_int_eq(mtour_payout(mt, t, e, "prize.ivy", ivy, 100, &r), 0);
    ck_assert(r.replayed);
    ck_assert_int_eq(wallet(mt, ivy), 290);
    /* closed intake: refused in one script as a transfer would be */
    ck_assert_int_eq(mtour_close_intake(mt, t), 0);
    ck_assert_int_eq(mtour_buyin(mt, t, e, "s3", ivy, 100, 10, &r), 0);
    ck_assert_int_eq(r.state, MTOUR_REFUSED);
    ck_assert_int_eq(r.why, MTOUR_WHY_CLOSED);
    ck_assert_int_eq(wallet(mt, ivy), 290);
    long long swept;
    ck_assert_int_eq(mtour_fees_sweep(mt, t, &swept), 0);
    ck_assert_int_eq(swept, 10);
    audit(mt, 0);
    mtour_destroy(mt);
    rcluster_destroy(c);
}
END_TEST

int main(void)
{
    if (ts_cluster_skip("mtour"))
        return 0;
    Suite *s = suite_create("mtour");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_a_buy_in_is_booked_once_per_request_id_fee_kept_per_tournament);
    tcase_add_test(tc, test_the_fence_refuses_an_old_owner_and_replays_come_before_it);
    tcase_add_test(
        tc, test_a_director_killed_between_debit_and_credit_is_finished_once_by_the_next_owner);
    tcase_add_test(tc, test_payouts_are_paid_once_each);
    tcase_add_test(tc, test_a_cancellation_with_a_buy_in_in_flight_returns_every_chip_once);
    tcase_add_test(tc, test_a_wallet_in_the_tournaments_own_slot_moves_in_one_script);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
