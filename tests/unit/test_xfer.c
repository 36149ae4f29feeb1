/*
 * xfer: transfers between slots (money/xfer.h; docs/queues.md "Redis Cluster: keys by entity
 * and transfers between slots") against a real Redis Cluster on loopback
 * (tests/support/tcluster.h): 3 masters, two replicas each, every transfer WAITing for 1 replica.
 *
 * The cases run in order on one cluster and keep its books balanced as they go, so the audit
 * after each must balance: transfers between masters and their resends; bad input; a refused
 * destination and its compensation; a process SIGKILLed between debit and credit and between
 * credit and ack (a child, killed by its own fault hook), finished by the sweeper; a sweeper
 * SIGKILLed mid-sweep; two sweepers at once over many stuck transfers; replies lost at each step;
 * a transfer older than its records; a tampered wallet that the audit catches; a slot moved to
 * another master during a stream of transfers; and last a master SIGKILLed during a stream, its
 * replica promoted, every transfer ending exactly once and the audit balancing.
 *
 * A redis-server without cluster mode makes the whole program a visible SKIP (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "log.h"
#include "support.h"
#include "tcluster.h"
#include "xfer.h"
#include "xfer_int.h"

#define MASTERS 3
/* Two replicas per master: after a failover the new master still has one to WAIT for. */
#define REPLICAS 2

static ts_cluster_t *g_cl;

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_ERROR + 1); /* the sweeper's lines would only clutter stderr */
    g_cl = ts_cluster_start(MASTERS, REPLICAS);
}

static void teardown(void)
{
    ts_cluster_stop(g_cl);
    g_cl = NULL;
}

#define NEED_CLUSTER() ck_assert_msg(g_cl != NULL, "could not start a 3+6 Redis Cluster")

static rcluster_t *client(int budget_ms)
{
    char err[600] = "";
    rcluster_opts_t o = {.retry_budget_ms = budget_ms};
    rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), &o, err, sizeof err);
    ck_assert_msg(c != NULL, "rcluster_create: %s", err);
    return c;
}

static xfer_t *engine(rcluster_t *c)
{
    xfer_opts_t o = {.wait_replicas = 1, .wait_timeout_ms = 2000};
    return xfer_create(c, &o);
}

/* The node that serves key, as the cluster itself says. */
static int owner_of(const char *key)
{
    unsigned slot = rcluster_key_slot(key, strlen(key));
    for (int asker = 0; asker < ts_cluster_size(g_cl); asker++) {
        int o = ts_cluster_slot_owner(g_cl, asker, slot);
        if (o >= 0)
            return o;
    }
    return -1;
}

/* An account {<prefix>N}:bal that node `node` serves, N counting from *next. */
static void account_on(int node, const char *prefix, int *next, char *key, size_t len)
{
    for (int i = 0; i < 100000; i++) {
        /* the pid: each case runs in a process of its own (check's fork mode) */
        snprintf(key, len, "{%s%d.%d}:bal", prefix, (int)getpid(), (*next)++);
        if (owner_of(key) == node)
            return;
    }
    ck_abort_msg("no account found on node %d", node);
}

static long long balance(xfer_t *x, const char *acct)
{
    long long v = -1;
    ck_assert_msg(xfer_balance(x, acct, &v) == 0, "%s: %s", acct, xfer_last_error(x));
    return v;
}

static void seed(xfer_t *x, const char *acct, long long amount)
{
    char op[64];
    snprintf(op, sizeof op, "seed-%lld-%d", ts_now_ms(), rand());
    ck_assert_msg(xfer_seed(x, acct, amount, op) == 0, "seed %s: %s", acct, xfer_last_error(x));
}

/* The audit balances (run again while the map moves, as its contract says). */
static void audit_balances(xfer_t *x, xfer_audit_t *a)
{
    int rc = -EAGAIN;
    for (int i = 0; i < 20 && rc == -EAGAIN; i++) {
        rc = xfer_audit(x, a);
        if (rc == -EAGAIN)
            ts_sleep_ms(250);
    }
    ck_assert_msg(rc == 0, "audit: %s", xfer_last_error(x));
    ck_assert_msg(a->balanced,
                  "audit: balances %lld + in flight %lld (%zu) != seeded %lld; %zu bad (%s); "
                  "%zu accounts on %zu masters",
                  a->balances, a->in_flight_amount, a->in_flight, a->seeded, a->bad, a->first_bad,
                  a->accounts, a->masters);
}

static int g_next = 0; /* account numbers already used (per test process) */

/* Stops every transfer of the engine at `at` (as if its process died there). */
static bool stop_hook(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    return at == *(xfer_fault_t *)arg;
}

START_TEST(test_transfers_between_masters_complete_once)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    xfer_t *x = engine(c);
    char w[MASTERS][64];
    for (int m = 0; m < MASTERS; m++) {
        account_on(m, "p:", &g_next, w[m], sizeof w[m]);
        seed(x, w[m], 1000);
    }
    xfer_result_t res;
    /* around the three masters */
    for (int m = 0; m < MASTERS; m++) {
        char id[32];
        snprintf(id, sizeof id, "ring-%d", m);
        int rc = xfer_transfer(x, id, w[m], w[(m + 1) % MASTERS], 100 + m, &res);
        ck_assert_msg(rc == 0 && res.state == XFER_COMPLETED && !res.replayed, "%s: %d %s", id, rc,
                      res.reason);
    }
    ck_assert_int_eq(balance(x, w[0]), 1000 - 100 + 102);
    ck_assert_int_eq(balance(x, w[1]), 1000 - 101 + 100);
    ck_assert_int_eq(balance(x, w[2]), 1000 - 102 + 101);
    xfer_record_t rec;
    ck_assert_int_eq(xfer_status(x, w[0], "ring-0", &rec), 0);
    ck_assert_int_eq(rec.state, XFER_COMPLETED);
    ck_assert_str_eq(rec.dst, w[1]);
    ck_assert_int_eq(rec.amount, 100);
    ck_assert_int_gt(rec.created_ms, 0);
    /* a settled record expires; the index holds it no more */
    char key[128];
    snprintf(key, sizeof key, "%.*s:xo:ring-0", (int)(strchr(w[0], '}') - w[0] + 1), w[0]);
    char *t = ts_cluster_cmd(g_cl, owner_of(w[0]), "TTL %s", key);
    ck_assert_msg(t != NULL && atoll(t) > 0, "TTL %s: %s", key, t ? t : "none");
    free(t);
    /* the same transfer again: the first result, nothing moves */
    ck_assert_int_eq(xfer_transfer(x, "ring-0", w[0], w[1], 100, &res), 0);
    ck_assert(res.replayed);
    ck_assert_int_eq(res.state, XFER_COMPLETED);
    ck_assert_int_eq(balance(x, w[0]), 1002);
    ck_assert_int_eq(balance(x, w[1]), 999);
    /* the id of another transfer */
    ck_assert_int_eq(xfer_transfer(x, "ring-0", w[0], w[1], 99, &res), -EEXIST);
    ck_assert_msg(strstr(res.reason, "XFER_ID_REUSED") != NULL, "%s", res.reason);
    ck_assert_int_eq(xfer_resume(x, w[0], "ring-0", &res), 0);
    ck_assert_int_eq(res.state, XFER_COMPLETED);
    /* ids are per source: another source may use "ring-0" towards the same account */
    ck_assert_int_eq(xfer_transfer(x, "ring-0", w[2], w[1], 7, &res), 0);
    ck_assert(!res.replayed);
    ck_assert_int_eq(res.state, XFER_COMPLETED);
    ck_assert_int_eq(balance(x, w[1]), 1006);
    ck_assert_int_eq(balance(x, w[2]), 992);
    /* seeds are idempotent too */
    ck_assert_int_eq(xfer_seed(x, w[0], 5, "seed-once"), 0);
    ck_assert_int_eq(xfer_seed(x, w[0], 5, "seed-once"), 0);
    ck_assert_int_eq(balance(x, w[0]), 1007);
    xfer_audit_t a;
    audit_balances(x, &a);
    ck_assert_uint_eq(a.masters, MASTERS);
    ck_assert_uint_eq(a.in_flight, 0);
    ck_assert_int_eq(a.seeded, 3005);
    ck_assert_int_eq(a.balances, 3005);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_bad_input_is_refused_clearly)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    xfer_t *x = engine(c);
    char a[64], b[64];
    account_on(0, "p:", &g_next, a, sizeof a);
    account_on(1, "p:", &g_next, b, sizeof b);
    seed(x, a, 50);
    xfer_result_t res;
    ck_assert_int_eq(xfer_transfer(x, "neg", a, b, -5, &res), -EINVAL);
    ck_assert_msg(strstr(res.reason, "amount -5") != NULL, "%s", res.reason);
    ck_assert_int_eq(xfer_transfer(x, "zero", a, b, 0, &res), -EINVAL);
    char same[80];
    snprintf(same, sizeof same, "%.*s:bal:seat", (int)(strchr(a, '}') - a + 1), a);
    ck_assert_int_eq(xfer_transfer(x, "same", a, same, 5, &res), -EINVAL);
    ck_assert_msg(strstr(res.reason, "same slot") != NULL, "%s", res.reason);
    ck_assert_int_eq(xfer_transfer(x, "bad key", a, b, 5, &res), -EINVAL);
    ck_assert_int_eq(xfer_transfer(x, "badkey", a, "wallet:7", 5, &res), -EINVAL);
    ck_assert_msg(strstr(res.reason, "wallet:7") != NULL, "%s", res.reason);
    /* more than the balance: nothing debited, no record */
    ck_assert_int_eq(xfer_transfer(x, "toomuch", a, b, 51, &res), -ENOSPC);
    ck_assert_msg(strstr(res.reason, "balance 50 is less than 51") != NULL, "%s", res.reason);
    ck_assert_int_eq(xfer_status(x, a, "toomuch", NULL), -ENOENT);
    /* an unknown transfer id */
    ck_assert_int_eq(xfer_resume(x, a, "never-made", &res), -ENOENT);
    ck_assert_msg(strstr(res.reason, "unknown transfer id never-made") != NULL, "%s", res.reason);
    ck_assert_int_eq(xfer_status(x, a, "never-made", NULL), -ENOENT);
    ck_assert_int_eq(xfer_status(x, a, "bad id!", NULL), -EINVAL);
    /* a closed source */
    ck_assert_int_eq(xfer_account_close(x, a, true), 0);
    ck_assert_int_eq(xfer_transfer(x, "closed-src", a, b, 5, &res), -EPERM);
    ck_assert_msg(strstr(res.reason, "closed") != NULL, "%s", res.reason);
    ck_assert_int_eq(xfer_account_close(x, a, false), 0);
    ck_assert_int_eq(xfer_seed(x, a, -1, "neg-seed"), -EINVAL);
    ck_assert_int_eq(balance(x, a), 50);
    ck_assert_int_eq(balance(x, b), 0);
    xfer_audit_t au;
    audit_balances(x, &au);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_refused_destination_is_refunded)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    xfer_t *x = engine(c);
    char src[64], closed[64], pool[64];
    account_on(2, "p:", &g_next, src, sizeof src);
    account_on(0, "p:", &g_next, closed, sizeof closed);
    account_on(1, "t:", &g_next, pool, sizeof pool);
    seed(x, src, 300);
    ck_assert_int_eq(xfer_account_close(x, closed, true), 0);
    xfer_result_t res;
    ck_assert_int_eq(xfer_transfer(x, "to-closed", src, closed, 120, &res), 0);
    ck_assert_int_eq(res.state, XFER_REFUNDED);
    ck_assert_msg(strstr(res.reason, "closed") != NULL, "%s", res.reason);
    ck_assert_int_eq(balance(x, src), 300);
    ck_assert_int_eq(balance(x, closed), 0);
    xfer_record_t rec;
    ck_assert_int_eq(xfer_status(x, src, "to-closed", &rec), 0);
    ck_assert_int_eq(rec.state, XFER_REFUNDED);
    ck_assert_msg(strstr(rec.reason, "closed") != NULL, "%s", rec.reason);
    /* opened again: the transfer stays refunded, the decision was final */
    ck_assert_int_eq(xfer_account_close(x, closed, false), 0);
    ck_assert_int_eq(xfer_transfer(x, "to-closed", src, closed, 120, &res), 0);
    ck_assert(res.replayed);
    ck_assert_int_eq(res.state, XFER_REFUNDED);
    ck_assert_int_eq(balance(x, src), 300);
    ck_assert_int_eq(balance(x, closed), 0);
    /* a destination that holds no balance (a hash where the account should be) */
    free(ts_cluster_cmd(g_cl, owner_of(pool), "HSET %s x 1", pool));
    ck_assert_int_eq(xfer_transfer(x, "to-hash", src, pool, 10, &res), 0);
    ck_assert_int_eq(res.state, XFER_REFUNDED);
    ck_assert_msg(strstr(res.reason, "does not hold a balance") != NULL, "%s", res.reason);
    free(ts_cluster_cmd(g_cl, owner_of(pool), "DEL %s", pool));
    ck_assert_int_eq(balance(x, src), 300);
    /* stopped between the refusal and the refund: the sweeper refunds, once */
    char gone[64];
    account_on(1, "p:", &g_next, gone, sizeof gone);
    ck_assert_int_eq(xfer_account_close(x, gone, true), 0);
    xfer_fault_t at = XFER_AT_CREDITED;
    xfer_set_fault_hook(x, stop_hook, &at);
    ck_assert_int_eq(xfer_transfer(x, "to-gone", src, gone, 40, &res), -EAGAIN);
    xfer_set_fault_hook(x, NULL, NULL);
    ck_assert_int_eq(balance(x, src), 260);
    ck_assert_int_eq(xfer_account_close(x, gone, false), 0); /* the refusal is final */
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(x, 0, &st), 0);
    ck_assert_uint_eq(st.refunded, 1);
    ck_assert_int_eq(balance(x, src), 300);
    ck_assert_int_eq(balance(x, gone), 0);
    xfer_audit_t a;
    audit_balances(x, &a);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

/* ---- crashes -----------------------------------------------------------------------------------
 */

typedef struct {
    xfer_fault_t at;
    int countdown; /* the hook kills at the countdown-th time it is reached at `at` */
} kill_at_t;

static bool kill_hook(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    kill_at_t *k = arg;
    if (at == k->at && --k->countdown == 0)
        raise(SIGKILL);
    return false;
}

/* In a child: a transfer (or, with sweep, a sweep) that SIGKILLs itself at `at`. Waits for it
 * and checks that it died of SIGKILL. */
static void crash_child(xfer_fault_t at, int countdown, bool sweep, const char *id, const char *src,
                        const char *dst, long long amount)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char err[600];
        rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), NULL, err, sizeof err);
        if (c == NULL)
            _exit(3);
        xfer_opts_t o = {.wait_replicas = 1, .wait_timeout_ms = 2000};
        xfer_t *x = xfer_create(c, &o);
        kill_at_t k = {.at = at, .countdown = countdown};
        xfer_set_fault_hook(x, kill_hook, &k);
        if (sweep)
            xfer_sweep(x, 0, NULL);
        else
            xfer_transfer(x, id, src, dst, amount, NULL);
        _exit(4); /* the hook did not fire */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "the child was not killed at its fault point (status %#x)", status);
}

START_TEST(test_a_crash_between_debit_and_credit_is_finished_by_the_sweeper)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    xfer_t *x = engine(c);
    char src[64], dst[64];
    account_on(0, "p:", &g_next, src, sizeof src);
    account_on(2, "s:holdem:3:", &g_next, dst, sizeof dst);
    seed(x, src, 500);
    crash_child(XFER_AT_DEBITED, 1, false, "crash-1", src, dst, 200);
    /* debited, not credited, in flight */
    xfer_record_t rec;
    ck_assert_int_eq(xfer_status(x, src, "crash-1", &rec), 0);
    ck_assert_int_eq(rec.state, XFER_DEBITED);
    ck_assert_int_eq(balance(x, src), 300);
    ck_assert_int_eq(balance(x, dst), 0);
    xfer_audit_t a;
    audit_balances(x, &a);
    ck_assert_uint_eq(a.in_flight, 1);
    ck_assert_int_eq(a.in_flight_amount, 200);
    /* the sweeper's way to it: the slot's registry names the source's outbox index */
    char registry[24], index[80];
    xfer_registry_key(rcluster_key_slot(src, strlen(src)), registry, sizeof registry);
    ck_assert_int_eq(xfer_tag_key(src, ":xo", index, sizeof index), 0);
    char *t = ts_cluster_cmd(g_cl, owner_of(src), "SISMEMBER %s %s", registry, index);
    ck_assert_msg(t != NULL && strcmp(t, "1") == 0, "SISMEMBER %s %s: %s", registry, index,
                  t ? t : "no answer");
    free(t);
    /* too young for a sweep with a threshold: left alone */
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(x, 3600 * 1000, &st), 0);
    ck_assert_uint_eq(st.masters, MASTERS);
    ck_assert_uint_ge(st.outboxes, 1);
    ck_assert_uint_eq(st.due, 0);
    ck_assert_int_eq(balance(x, dst), 0);
    /* old enough */
    ts_sleep_ms(50);
    ck_assert_int_eq(xfer_sweep(x, 20, &st), 0);
    ck_assert_uint_eq(st.due, 1);
    ck_assert_uint_eq(st.completed, 1);
    ck_assert_int_eq(balance(x, src), 300);
    ck_assert_int_eq(balance(x, dst), 200);
    ck_assert_int_eq(xfer_status(x, src, "crash-1", &rec), 0);
    ck_assert_int_eq(rec.state, XFER_COMPLETED);
    ck_assert_int_ge(rec.drives, 2);
    /* settled: the index is gone, and with it its name in the registry */
    t = ts_cluster_cmd(g_cl, owner_of(src), "SISMEMBER %s %s", registry, index);
    ck_assert_msg(t != NULL && strcmp(t, "0") == 0, "%s", t ? t : "no answer");
    free(t);
    /* nothing left to do; a late resend of the dead process changes nothing */
    ck_assert_int_eq(xfer_sweep(x, 0, &st), 0);
    ck_assert_uint_eq(st.due, 0);
    xfer_result_t res;
    ck_assert_int_eq(xfer_transfer(x, "crash-1", src, dst, 200, &res), 0);
    ck_assert(res.replayed);
    ck_assert_int_eq(balance(x, dst), 200);
    audit_balances(x, &a);
    ck_assert_uint_eq(a.in_flight, 0);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_crash_between_credit_and_ack_credits_once)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    xfer_t *x = engine(c);
    char src[64], dst[64];
    account_on(1, "t:", &g_next, src, sizeof src);
    account_on(0, "p:", &g_next, dst, sizeof dst);
    seed(x, src, 800);
    crash_child(XFER_AT_CREDITED, 1, false, "crash-2", src, dst, 250);
    xfer_record_t rec;
    ck_assert_int_eq(xfer_status(x, src, "crash-2", &rec), 0);
    ck_assert_int_eq(rec.state, XFER_DEBITED);
    ck_assert_int_eq(balance(x, src), 550);
    ck_assert_int_eq(balance(x, dst), 250); /* credited, not acknowledged */
    /* the audit counts it once: at the destination */
    xfer_audit_t a;
    audit_balances(x, &a);
    ck_assert_uint_eq(a.in_flight, 0);
    ck_assert_uint_eq(a.credited_unacked, 1);
    /* the sweeper SIGKILLed too, at the same point of its own drive */
    crash_child(XFER_AT_CREDITED, 1, true, NULL, NULL, NULL, 0);
    ck_assert_int_eq(balance(x, dst), 250);
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(x, 0, &st), 0);
    ck_assert_uint_eq(st.completed, 1);
    ck_assert_int_eq(balance(x, src), 550);
    ck_assert_int_eq(balance(x, dst), 250);
    ck_assert_int_eq(xfer_status(x, src, "crash-2", &rec), 0);
    ck_assert_int_eq(rec.state, XFER_COMPLETED);
    audit_balances(x, &a);
    ck_assert_uint_eq(a.credited_unacked, 0);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_two_sweepers_at_once_finish_each_transfer_once)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    xfer_t *x = engine(c);
    enum { N = 40 };
    char src[MASTERS][64], dst[MASTERS][64], closed[64];
    for (int m = 0; m < MASTERS; m++) {
        account_on(m, "p:", &g_next, src[m], sizeof src[m]);
        account_on((m + 1) % MASTERS, "s:game:1:", &g_next, dst[m], sizeof dst[m]);
        seed(x, src[m], 10000);
    }
    account_on(2, "p:", &g_next, closed, sizeof closed);
    ck_assert_int_eq(xfer_account_close(x, closed, true), 0);
    /* N transfers left DEBITED: half before the credit, half after; every 5th to a closed
     * account (a refund) */
    long long want_src[MASTERS] = {10000, 10000, 10000}, want_dst[MASTERS] = {0};
    for (int i = 0; i < N; i++) {
        xfer_fault_t at = i % 2 ? XFER_AT_CREDITED : XFER_AT_DEBITED;
        xfer_set_fault_hook(x, stop_hook, &at);
        char id[32];
        snprintf(id, sizeof id, "stuck-%d", i);
        int m = i % MASTERS;
        bool refused = i % 5 == 0;
        xfer_result_t res;
        ck_assert_int_eq(xfer_transfer(x, id, src[m], refused ? closed : dst[m], 10 + i, &res),
                         -EAGAIN);
        ck_assert_ptr_nonnull(strstr(res.reason, "fault hook"));
        if (!refused) {
            want_src[m] -= 10 + i;
            want_dst[m] += 10 + i;
        }
    }
    xfer_set_fault_hook(x, NULL, NULL);
    xfer_audit_t a;
    audit_balances(x, &a);
    ck_assert_uint_eq(a.in_flight + a.credited_unacked, N);
    /* two sweeper processes, started together */
    int go[2], out[2];
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(out), 0);
    pid_t pids[2];
    for (int k = 0; k < 2; k++) {
        pids[k] = fork();
        ck_assert_int_ge(pids[k], 0);
        if (pids[k] == 0) {
            char b, err[600];
            rcluster_t *cc = rcluster_create(ts_cluster_seeds(g_cl), NULL, err, sizeof err);
            xfer_opts_t o = {.wait_replicas = 1, .wait_timeout_ms = 2000};
            xfer_t *xx = cc ? xfer_create(cc, &o) : NULL;
            if (read(go[0], &b, 1) != 1 || xx == NULL)
                _exit(3);
            xfer_sweep_stats_t st;
            int rc = xfer_sweep(xx, 0, &st);
            char line[128];
            int n = snprintf(line, sizeof line, "%d %zu %zu %zu %zu\n", rc, st.completed,
                             st.refunded, st.pending, st.errors);
            if (write(out[1], line, (size_t)n) != n)
                _exit(5);
            _exit(0);
        }
    }
    ck_assert_int_eq(write(go[1], "gg", 2), 2);
    for (int k = 0; k < 2; k++) {
        int status;
        ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sweeper %d: %#x", k, status);
    }
    char buf[256] = "";
    ck_assert_int_gt(read(out[0], buf, sizeof buf - 1), 0);
    for (char *p = strchr(buf, '\n'); p != NULL && p[1] != '\0'; p = strchr(p + 1, '\n'))
        p[0] = ';';
    fprintf(stderr, "# two sweepers (rc completed refunded pending errors): %s", buf);
    close(go[0]);
    close(go[1]);
    close(out[0]);
    close(out[1]);
    /* each credited once, each refund once */
    for (int m = 0; m < MASTERS; m++) {
        ck_assert_int_eq(balance(x, src[m]), want_src[m]);
        ck_assert_int_eq(balance(x, dst[m]), want_dst[m]);
    }
    ck_assert_int_eq(balance(x, closed), 0);
    for (int i = 0; i < N; i++) {
        char id[32];
        snprintf(id, sizeof id, "stuck-%d", i);
        xfer_record_t rec;
        ck_assert_int_eq(xfer_status(x, src[i % MASTERS], id, &rec), 0);
        ck_assert_int_eq(rec.state, i % 5 == 0 ? XFER_REFUNDED : XFER_COMPLETED);
    }
    audit_balances(x, &a);
    ck_assert_uint_eq(a.in_flight + a.credited_unacked, 0);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_wait_that_falls_short_leaves_the_transfer_in_flight)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    /* three replicas wanted, two there */
    xfer_opts_t o = {.wait_replicas = REPLICAS + 1, .wait_timeout_ms = 100};
    xfer_t *x = xfer_create(c, &o);
    char src[64], dst[64];
    account_on(1, "p:", &g_next, src, sizeof src);
    account_on(2, "p:", &g_next, dst, sizeof dst);
    seed(x, src, 100);
    xfer_result_t res;
    ck_assert_int_eq(xfer_transfer(x, "short", src, dst, 60, &res), -EAGAIN);
    ck_assert_msg(strstr(res.reason, "debit: on 2 of 3 replicas") != NULL, "%s", res.reason);
    ck_assert_int_eq(res.state, XFER_DEBITED);
    ck_assert_int_eq(balance(x, dst), 0); /* never credited before the debit is durable */
    ck_assert_int_eq(xfer_transfer(x, "short", src, dst, 60, &res), -EAGAIN);
    ck_assert(res.replayed);
    ck_assert_int_eq(balance(x, src), 40);
    ck_assert_int_eq(balance(x, dst), 0);
    /* a sweeper that asks what the cluster has finishes it */
    xfer_destroy(x);
    x = engine(c);
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(x, 0, &st), 0);
    ck_assert_uint_eq(st.completed, 1);
    ck_assert_int_eq(balance(x, src), 40);
    ck_assert_int_eq(balance(x, dst), 60);
    xfer_audit_t a;
    audit_balances(x, &a);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

/* ---- lost replies ------------------------------------------------------------------------------
 */

typedef struct {
    int node;
    pthread_t th;
} pause_t;

static void *resume_later(void *arg)
{
    pause_t *p = arg;
    ts_sleep_ms(600); /* under the cluster's node timeout (1000 ms): no failover */
    ts_cluster_resume(g_cl, p->node);
    return NULL;
}

/* Hangs node p->node for 600 ms from now (SIGSTOP, then SIGCONT from a thread). */
static void pause_node(pause_t *p)
{
    ts_cluster_pause(g_cl, p->node);
    ck_assert_int_eq(pthread_create(&p->th, NULL, resume_later, p), 0);
}

typedef struct {
    pause_t src, dst;
} hang_t;

/* Hangs the destination's master right before the credit, the source's before the ack: both
 * calls time out after being written (replies lost) and are sent again. */
static bool hang_hook(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    hang_t *h = arg;
    pause_node(at == XFER_AT_DEBITED ? &h->dst : &h->src);
    return false;
}

START_TEST(test_lost_replies_are_sent_again_and_apply_once)
{
    NEED_CLUSTER();
    char err[600];
    rcluster_opts_t ro = {.command_timeout_ms = 150, .retry_budget_ms = 5000};
    rcluster_t *c = rcluster_create(ts_cluster_seeds(g_cl), &ro, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    xfer_t *x = engine(c);
    char src[64], dst[64];
    account_on(0, "p:", &g_next, src, sizeof src);
    account_on(2, "t:", &g_next, dst, sizeof dst);
    seed(x, src, 1000);
    seed(x, dst, 1);
    /* the debit's reply lost: the source's master hangs as it is sent */
    pause_t p = {.node = 0};
    pause_node(&p);
    xfer_result_t res;
    ck_assert_int_eq(xfer_transfer(x, "lost-1", src, dst, 100, &res), 0);
    pthread_join(p.th, NULL);
    ck_assert_int_eq(res.state, XFER_COMPLETED);
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    ck_assert_uint_ge(st.resent, 1);
    /* the credit's and the ack's replies lost */
    hang_t h = {.src = {.node = 0}, .dst = {.node = 2}};
    xfer_set_fault_hook(x, hang_hook, &h);
    unsigned long resent = st.resent;
    ck_assert_int_eq(xfer_transfer(x, "lost-2", src, dst, 10, &res), 0);
    xfer_set_fault_hook(x, NULL, NULL);
    pthread_join(h.src.th, NULL);
    pthread_join(h.dst.th, NULL);
    ck_assert_int_eq(res.state, XFER_COMPLETED);
    rcluster_get_stats(c, &st);
    ck_assert_uint_ge(st.resent, resent + 2);
    ck_assert_int_eq(balance(x, src), 890);
    ck_assert_int_eq(balance(x, dst), 111);
    xfer_record_t rec;
    ck_assert_int_eq(xfer_status(x, src, "lost-2", &rec), 0);
    ck_assert_int_eq(rec.state, XFER_COMPLETED);
    xfer_audit_t a;
    audit_balances(x, &a);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_transfer_older_than_its_records_is_left_to_an_operator)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    /* records that live 2 s, resent only within 1 s */
    xfer_opts_t o = {
        .wait_replicas = 1, .wait_timeout_ms = 2000, .record_ttl_s = 2, .stale_margin_ms = 1000};
    xfer_t *x = xfer_create(c, &o);
    char src[64], dst[64];
    account_on(2, "p:", &g_next, src, sizeof src);
    account_on(0, "p:", &g_next, dst, sizeof dst);
    seed(x, src, 90);
    xfer_fault_t at = XFER_AT_DEBITED;
    xfer_set_fault_hook(x, stop_hook, &at);
    xfer_result_t res;
    ck_assert_int_eq(xfer_transfer(x, "old", src, dst, 30, &res), -EAGAIN);
    xfer_set_fault_hook(x, NULL, NULL);
    ts_sleep_ms(1300);
    /* a younger one from the same outbox: the stale one does not hold it back */
    xfer_set_fault_hook(x, stop_hook, &at);
    ck_assert_int_eq(xfer_transfer(x, "young", src, dst, 7, &res), -EAGAIN);
    xfer_set_fault_hook(x, NULL, NULL);
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(x, 0, &st), 0);
    ck_assert_uint_eq(st.stale, 1);
    ck_assert_uint_eq(st.due, 1);
    ck_assert_uint_eq(st.completed, 1);
    ck_assert_int_eq(balance(x, dst), 7);
    ck_assert_int_eq(xfer_transfer(x, "old", src, dst, 30, &res), -ESTALE);
    ck_assert_msg(strstr(res.reason, "by hand") != NULL, "%s", res.reason);
    ck_assert_int_eq(balance(x, dst), 7);
    xfer_audit_t a;
    audit_balances(x, &a);
    ck_assert_uint_ge(a.in_flight, 1);
    /* the operator's way here: it never reached the credit, so it may be sent again (an
     * engine with the usual window) */
    xfer_destroy(x);
    x = engine(c);
    ck_assert_int_eq(xfer_transfer(x, "old", src, dst, 30, &res), 0);
    ck_assert_int_eq(res.state, XFER_COMPLETED);
    ck_assert_int_eq(balance(x, dst), 37);
    audit_balances(x, &a);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_the_audit_catches_money_made_or_lost)
{
    NEED_CLUSTER();
    rcluster_t *c = client(0);
    xfer_t *x = engine(c);
    char w[64];
    account_on(1, "p:", &g_next, w, sizeof w);
    seed(x, w, 70);
    xfer_audit_t a;
    audit_balances(x, &a);
    /* a wallet changed behind the protocol's back */
    free(ts_cluster_cmd(g_cl, owner_of(w), "INCRBY %s 5", w));
    ck_assert_int_eq(xfer_audit(x, &a), 0);
    ck_assert(!a.balanced);
    ck_assert_int_eq(a.balances - a.seeded, 5);
    free(ts_cluster_cmd(g_cl, owner_of(w), "DECRBY %s 5", w));
    /* an account that holds no integer */
    free(ts_cluster_cmd(g_cl, owner_of(w), "SET %s lots", w));
    ck_assert_int_eq(xfer_audit(x, &a), 0);
    ck_assert(!a.balanced);
    ck_assert_uint_eq(a.bad, 1);
    ck_assert_str_eq(a.first_bad, w);
    free(ts_cluster_cmd(g_cl, owner_of(w), "SET %s 70", w));
    audit_balances(x, &a);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

/* ---- a slot moved to another master during a stream of transfers ------------------------------
 */

typedef struct {
    unsigned slot;
    int rc;
} move_t;

static void *move_later(void *arg)
{
    move_t *mv = arg;
    ts_sleep_ms(150);
    mv->rc = ts_cluster_migrate_slot(g_cl, mv->slot, 0, 2);
    return NULL;
}

START_TEST(test_a_slot_moved_during_a_stream_loses_nothing)
{
    NEED_CLUSTER();
    rcluster_t *c = client(20000);
    xfer_t *x = engine(c);
    enum { K = 4, N = 400 };
    char acct[K][64];
    long long want[K];
    for (int k = 0; k < K; k++) {
        account_on(k % MASTERS, "p:", &g_next, acct[k], sizeof acct[k]);
        seed(x, acct[k], 100000);
        want[k] = 100000;
    }
    /* a transfer left in flight in the slot that moves: its outbox and registry move with it */
    xfer_fault_t at = XFER_AT_DEBITED;
    xfer_set_fault_hook(x, stop_hook, &at);
    xfer_result_t res;
    ck_assert_int_eq(xfer_transfer(x, "moved-stuck", acct[0], acct[1], 500, &res), -EAGAIN);
    xfer_set_fault_hook(x, NULL, NULL);
    want[0] -= 500;
    want[1] += 500;
    move_t mv = {.slot = rcluster_key_slot(acct[0], strlen(acct[0])), .rc = -1};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, move_later, &mv), 0);
    long long t0 = ts_now_ms();
    for (int i = 0; i < N; i++) {
        /* every transfer from or to the moving slot */
        int other = 1 + i % (K - 1);
        int s = i % 2 ? 0 : other, d = i % 2 ? other : 0;
        char id[32];
        snprintf(id, sizeof id, "move-%d", i);
        long long amount = 1 + i % 30;
        int rc;
        do
            rc = xfer_transfer(x, id, acct[s], acct[d], amount, &res);
        while ((rc == -EAGAIN || rc == -EIO) && ts_now_ms() - t0 < 60000);
        ck_assert_msg(rc == 0 && res.state == XFER_COMPLETED, "%s: %d %s", id, rc, res.reason);
        want[s] -= amount;
        want[d] += amount;
    }
    pthread_join(th, NULL);
    ck_assert_int_eq(mv.rc, 0);
    ck_assert_int_eq(owner_of(acct[0]), 2);
    rcluster_stats_t st;
    rcluster_get_stats(c, &st);
    fprintf(stderr,
            "# slot %u moved during %d transfers in %lld ms: %lu MOVED, %lu ASK, %lu "
            "TRYAGAIN\n",
            mv.slot, N, ts_now_ms() - t0, st.moved, st.ask, st.tryagain);
    /* the stuck one, found on its new master through the moved registry */
    xfer_sweep_stats_t sw;
    ck_assert_int_eq(xfer_sweep(x, 0, &sw), 0);
    ck_assert_uint_eq(sw.completed, 1);
    for (int k = 0; k < K; k++)
        ck_assert_msg(balance(x, acct[k]) == want[k], "%s: %lld, want %lld", acct[k],
                      balance(x, acct[k]), want[k]);
    xfer_audit_t a;
    audit_balances(x, &a);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

/* ---- a master SIGKILLed during a stream of transfers -------------------------------------------
 */

static _Atomic bool g_crashed;

static void *crash_later(void *arg)
{
    ts_sleep_ms(*(int *)arg);
    ts_cluster_crash(g_cl, 1);
    g_crashed = true;
    return NULL;
}

START_TEST(test_a_failover_during_a_stream_loses_nothing)
{
    NEED_CLUSTER();
    rcluster_t *c = client(20000);
    xfer_t *x = engine(c);
    enum { K = 6, AFTER = 150 };
    char acct[K][64];
    long long want[K];
    for (int k = 0; k < K; k++) {
        account_on(k % MASTERS, k < 3 ? "p:" : "t:", &g_next, acct[k], sizeof acct[k]);
        seed(x, acct[k], 100000);
        want[k] = 100000;
    }
    /* one of them on the master that dies, to follow it to its replica */
    unsigned dying = rcluster_key_slot(acct[1], strlen(acct[1]));
    ck_assert_int_eq(owner_of(acct[1]), 1);
    /* transfers left in flight on the master that dies: from it after the debit, to it after
     * the credit (both WAITed for, so on its replicas) */
    for (int i = 0; i < 10; i++) {
        xfer_fault_t at = i < 5 ? XFER_AT_DEBITED : XFER_AT_CREDITED;
        xfer_set_fault_hook(x, stop_hook, &at);
        char id[32];
        snprintf(id, sizeof id, "before-%d", i);
        int s = i < 5 ? 1 : 0, d = i < 5 ? 2 : 1;
        xfer_result_t res;
        ck_assert_int_eq(xfer_transfer(x, id, acct[s], acct[d], 1000 + i, &res), -EAGAIN);
        want[s] -= 1000 + i;
        want[d] += 1000 + i;
    }
    xfer_set_fault_hook(x, NULL, NULL);
    int delay = 300;
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, crash_later, &delay), 0);
    int again = 0, unknown = 0, done = 0, after = 0;
    long long t0 = ts_now_ms(), worst = 0;
    /* transfers until AFTER of them were made once the master was dead */
    for (int i = 0; after < AFTER; i++) {
        ck_assert_msg(ts_now_ms() - t0 < 60000, "the stream did not get past the failover");
        bool post = g_crashed;
        int s = i % K, d = (i * 7 + 1) % K;
        if (s == d)
            d = (d + 1) % K;
        char id[32];
        snprintf(id, sizeof id, "stream-%d", i);
        long long amount = 1 + i % 50;
        xfer_result_t res;
        long long t1 = ts_now_ms();
        int rc;
        /* a caller sends the same transfer again until it is final */
        for (;;) {
            rc = xfer_transfer(x, id, acct[s], acct[d], amount, &res);
            if (rc == 0 || (rc != -EAGAIN && rc != -EIO) || ts_now_ms() - t1 > 30000)
                break;
            if (rc == -EAGAIN)
                again++;
            else
                unknown++;
            ts_sleep_ms(50);
        }
        ck_assert_msg(rc == 0 && res.state == XFER_COMPLETED, "%s: %d %s", id, rc, res.reason);
        if (ts_now_ms() - t1 > worst)
            worst = ts_now_ms() - t1;
        want[s] -= amount;
        want[d] += amount;
        done++;
        after += post;
    }
    pthread_join(th, NULL);
    fprintf(stderr,
            "# failover stream: %d transfers (%d after the SIGKILL) in %lld ms, %d answers "
            "'in flight' and %d 'unknown' sent again, slowest %lld ms\n",
            done, after, ts_now_ms() - t0, again, unknown, worst);
    int port;
    rcluster_slot_host(c, dying, &port);
    int now_master = ts_cluster_index(g_cl, port); /* one of node 1's replicas, promoted */
    ck_assert_msg(now_master == MASTERS + REPLICAS || now_master == MASTERS + REPLICAS + 1,
                  "slot %u is on node %d", dying, now_master);
    ck_assert_int_eq(ts_cluster_wait_ok(g_cl, 15000), 0);
    /* the ten left in flight, found through the promoted replica's registry, finish once */
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(x, 0, &st), 0);
    ck_assert_uint_eq(st.due, 10);
    ck_assert_uint_eq(st.completed, 10);
    ck_assert_int_eq(xfer_sweep(x, 0, &st), 0);
    ck_assert_uint_eq(st.due, 0);
    for (int k = 0; k < K; k++)
        ck_assert_msg(balance(x, acct[k]) == want[k], "%s: %lld, want %lld", acct[k],
                      balance(x, acct[k]), want[k]);
    xfer_audit_t a;
    audit_balances(x, &a);
    ck_assert_uint_eq(a.masters, MASTERS);
    ck_assert_uint_eq(a.in_flight + a.credited_unacked, 0);
    xfer_destroy(x);
    rcluster_destroy(c);
}
END_TEST

int main(void)
{
    if (ts_cluster_skip("xfer"))
        return 0;
    Suite *s = suite_create("xfer");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 90);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_transfers_between_masters_complete_once);
    tcase_add_test(tc, test_bad_input_is_refused_clearly);
    tcase_add_test(tc, test_a_refused_destination_is_refunded);
    tcase_add_test(tc, test_a_crash_between_debit_and_credit_is_finished_by_the_sweeper);
    tcase_add_test(tc, test_a_crash_between_credit_and_ack_credits_once);
    tcase_add_test(tc, test_two_sweepers_at_once_finish_each_transfer_once);
    tcase_add_test(tc, test_a_wait_that_falls_short_leaves_the_transfer_in_flight);
    tcase_add_test(tc, test_lost_replies_are_sent_again_and_apply_once);
    tcase_add_test(tc, test_a_transfer_older_than_its_records_is_left_to_an_operator);
    tcase_add_test(tc, test_the_audit_catches_money_made_or_lost);
    tcase_add_test(tc, test_a_slot_moved_during_a_stream_loses_nothing);
    tcase_add_test(tc, test_a_failover_during_a_stream_loses_nothing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
