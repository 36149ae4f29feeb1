/*
 * mcluster: a game server epoch's money by entity on a real Redis Cluster (money/mcluster.h;
 * docs/queues.md "The game server's money by entity"): 3 masters with two replicas each on
 * loopback (tests/support/tcluster.h), every write WAITing for one replica.
 *
 * Wallets live in their players' slots ({p:<player>}:bal), seat accounts, settlements and round
 * records in the epoch's ({s:<service>:<slot>:<epoch>}); buy-ins, top-ups, cash-outs and the
 * recovery of a dead epoch are transfers between the two (money/xfer.h). Each case checks the
 * conservation audit (xfer_audit) after it: wallets + seat accounts + rake + in flight = seeded.
 *
 * A redis-server without cluster mode makes the whole program a visible SKIP (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "keytag.h"
#include "log.h"
#include "mcluster.h"
#include "money_writer.h"
#include "support.h"
#include "mcluster_fixture.h"
#include "tcluster.h"

static void cmd_ok(rcluster_t *c, const char *key, const char *fmt, const char *a, const char *b)
{
    redisReply *r = rcluster_command(c, RCLUSTER_RESEND, key, fmt, a, b);
    ck_assert_msg(r != NULL && r->type != REDIS_REPLY_ERROR, "%s %s: %s", fmt, key,
                  r == NULL ? rcluster_last_error(c) : r->str);
    freeReplyObject(r);
}

/* The lease key itself (a holder), so that the slot is held. */
static void set_holder(rcluster_t *c, uint32_t slot, const char *token)
{
    char lt[160], key[200];
    keytag_lease(lt, sizeof lt, mcf_service());
    snprintf(key, sizeof key, "%s:slot:%" PRIu32, lt, slot);
    if (token != NULL)
        cmd_ok(c, key, "SET %s %s", key, token);
    else
        cmd_ok(c, key, "DEL %s%s", key, "");
}

static void wallet_key(const char *player, char *buf, size_t len)
{
    ck_assert_int_eq(mcluster_key_wallet(player, buf, len), 0);
}

static int seat_op(mcluster_t *m, money_kind_t kind, uint32_t slot, uint64_t epoch,
                   const char *acct, const char *owner, int64_t amount, const char *op,
                   money_result_t *out)
{
    money_seat_t s = {.slot = slot, .epoch = epoch, .account = acct, .owner = owner};
    return mcluster_seat(m, mcf_service(), kind, &s, amount, op, out);
}

static money_settlement_t round_of(uint32_t slot, uint64_t epoch, uint64_t seq, const char *a,
                                   int64_t da, const char *b, int64_t db, int64_t rake)
{
    money_settlement_t s = {0};
    s.round = (money_round_id_t){.server = slot, .epoch = epoch, .desk = 1, .seq = seq};
    money_round_id_set_service(&s.round, mcf_service());
    s.game = "holdem";
    s.nplayers = 2;
    s.players[0] = a;
    s.deltas[0] = da;
    s.players[1] = b;
    s.deltas[1] = db;
    s.rake = rake;
    return s;
}

static unsigned slot_of(const char *key)
{
    return rcluster_key_slot(key, strlen(key));
}

START_TEST(test_a_table_buys_in_settles_and_cashes_out_across_slots)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    uint32_t slot = 3;
    uint64_t epoch = 7;
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    ck_assert_msg(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err) == MONEY_OK,
                  "open: %s", err);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);

    /* the wallet and the seat account are in different slots; the epoch's keys in one */
    char wk[128], sk[256], rk[256];
    wallet_key(alice, wk, sizeof wk);
    mcluster_key_seat(mcf_service(), slot, epoch, "ts.a", sk, sizeof sk);
    mcluster_key_epoch(mcf_service(), slot, epoch, ":round:x", rk, sizeof rk);
    ck_assert_uint_ne(slot_of(wk), slot_of(sk));
    ck_assert_uint_eq(slot_of(sk), slot_of(rk));

    money_result_t r;
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 300, "in-a", &r),
                     MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_int_eq(r.balances[0], 300);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.b", bob, 200, "in-b", &r),
                     MONEY_OK);
    /* a top-up, and a resend of the first buy-in: once */
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 100, "top-a", &r),
                     MONEY_OK);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 300, "in-a", &r),
                     MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(mcf_wallet(m, alice), 600);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 400);
    /* more than the wallet holds: nothing moves */
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.b", bob, 5000, "big", &r),
                     MONEY_ERR_INSUFFICIENT);
    ck_assert_int_eq(mcf_wallet(m, bob), 800);
    /* bad input: nothing sent */
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.b", bob, 5, "bad id!", &r),
                     -EINVAL);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.b", bob, 0, "zero", &r),
                     -EINVAL);
    /* another owner's account */
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.b", alice, 10, "steal", &r),
                     MONEY_ERR_BAD_ARGS);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_OUT, slot, epoch, "ts.b", alice, 10, "grab", &r),
                     MONEY_ERR_BAD_ARGS);

    /* a round settles in one script in the epoch's slot, once */
    money_settlement_t s = round_of(slot, epoch, 1, "ts.a", 50, "ts.b", -55, 5);
    ck_assert_msg(mcluster_settle(m, mcf_service(), &s, &r) == MONEY_OK, "settle: %s", r.error);
    ck_assert_int_eq(r.nbalances, 2);
    ck_assert_int_eq(r.balances[0], 450);
    ck_assert_int_eq(r.balances[1], 145);
    ck_assert_int_eq(mcluster_settle(m, mcf_service(), &s, &r), MONEY_OK);
    ck_assert(r.replayed);
    money_settlement_t neg = round_of(slot, epoch, 2, "ts.a", 200, "ts.b", -200, 0);
    ck_assert_int_eq(mcluster_settle(m, mcf_service(), &neg, &r), MONEY_ERR_NEGATIVE);
    money_settlement_t sum = round_of(slot, epoch, 3, "ts.a", 2, "ts.b", -1, 0);
    ck_assert_int_eq(mcluster_settle(m, mcf_service(), &sum, &r), MONEY_ERR_BAD_SUM);
    mcf_audit(m, 0);

    /* cash-outs back to the wallets */
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_OUT, slot, epoch, "ts.a", alice, 450, "out-a", &r),
                     MONEY_OK);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_OUT, slot, epoch, "ts.b", bob, 145, "out-b", &r),
                     MONEY_OK);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_OUT, slot, epoch, "ts.b", bob, 145, "out-b", &r),
                     MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_OUT, slot, epoch, "ts.b", bob, 1, "out-b2", &r),
                     MONEY_ERR_INSUFFICIENT);
    ck_assert_int_eq(mcf_wallet(m, alice), 1050);
    ck_assert_int_eq(mcf_wallet(m, bob), 945);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 0);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_recovered_epoch_is_fenced_in_its_own_slot)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    uint32_t slot = 4;
    uint64_t epoch = 9;
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    set_holder(c, slot, "tok");
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    money_result_t r;
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 500, "a1", &r),
                     MONEY_OK);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.b", bob, 500, "b1", &r),
                     MONEY_OK);
    /* round 1 settles; round 2 is in progress when the server dies */
    char rid[MONEY_ID_MAX + 1], json[400];
    money_settlement_t s1 = round_of(slot, epoch, 1, "ts.a", 100, "ts.b", -100, 0);
    money_round_id_format(&s1.round, rid, sizeof rid);
    snprintf(json, sizeof json,
             "{\"round\":\"%s\",\"game\":\"holdem\",\"seats\":[{\"seat\":0,\"player\":\"a\"}]}",
             rid);
    ck_assert_int_eq(mcluster_mark(m, mcf_service(), slot, epoch, "r:1", json, &r), MONEY_OK);
    ck_assert_int_eq(mcluster_settle(m, mcf_service(), &s1, &r), MONEY_OK);
    money_settlement_t s2 = round_of(slot, epoch, 2, "ts.a", -50, "ts.b", 50, 0);
    money_round_id_format(&s2.round, rid, sizeof rid);
    snprintf(json, sizeof json,
             "{\"round\":\"%s\",\"game\":\"holdem\",\"seats\":[{\"seat\":0,\"player\":\"a\"}]}",
             rid);
    ck_assert_int_eq(mcluster_mark(m, mcf_service(), slot, epoch, "r:2", json, &r), MONEY_OK);

    /* alive: held under its epoch; nobody may recover it */
    money_recover_result_t rv;
    ck_assert_int_eq(mcluster_recover(m, mcf_service(), slot, epoch, MONEY_RECOVER_DEAD, NULL, &rv),
                     MONEY_ERR_ALIVE);
    ck_assert_int_eq(
        mcluster_recover(m, mcf_service(), slot, epoch, MONEY_RECOVER_CLAIM, NULL, &rv),
        MONEY_ERR_ALIVE);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 600);

    /* the next holder took the slot: the epoch is dead, its recovery returns every chip */
    mcf_set_fence(c, slot, epoch + 1);
    ck_assert_msg(mcluster_recover(m, mcf_service(), slot, epoch, MONEY_RECOVER_DEAD, NULL, &rv) ==
                      0,
                  "recover: %s", rv.error);
    ck_assert_int_eq(rv.chips, 1000);
    ck_assert_int_eq(rv.accounts, 2);
    ck_assert_int_eq(rv.voided, 1); /* round 2 only: round 1 settled */
    ck_assert_int_eq(mcf_wallet(m, alice), 1100);
    ck_assert_int_eq(mcf_wallet(m, bob), 900);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 0);
    mcf_audit(m, 0);
    /* the voided round's hand history, in the game's stream (the money slot on a cluster) */
    char hk[160], stream[200];
    keytag_history(hk, sizeof hk, "holdem");
    snprintf(stream, sizeof stream, "%s:stream", hk);
    redisReply *x =
        rcluster_command(c, RCLUSTER_RESEND, stream, "XREVRANGE %s + - COUNT 1", stream);
    ck_assert(x != NULL && x->type == REDIS_REPLY_ARRAY && x->elements == 1);
    const redisReply *f = x->element[0]->element[1];
    ck_assert_str_eq(f->element[1]->str, rid);
    ck_assert_ptr_nonnull(strstr(f->element[3]->str, "\"outcome\":\"voided\""));
    freeReplyObject(x);

    /* nothing of the old epoch applies any more, in its own slot */
    ck_assert_int_eq(mcluster_settle(m, mcf_service(), &s2, &r), MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 10, "a2", &r),
                     MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_OUT, slot, epoch, "ts.a", alice, 10, "a3", &r),
                     MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(mcluster_mark(m, mcf_service(), slot, epoch, "r:3", json, &r),
                     MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err),
                     MONEY_ERR_STALE_EPOCH);
    /* ... but what it did is still answered: replays come before the fence */
    ck_assert_int_eq(mcluster_settle(m, mcf_service(), &s1, &r), MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 500, "a1", &r),
                     MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(mcf_wallet(m, alice), 1100);
    /* a second recovery finds nothing */
    ck_assert_int_eq(mcluster_recover(m, mcf_service(), slot, epoch, MONEY_RECOVER_DEAD, NULL, &rv),
                     0);
    ck_assert_int_eq(rv.chips, 0);
    ck_assert_int_eq(rv.voided, 0);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

/* ---- crashes -------------------------------------------------------------------------------- */

static bool kill_at_debited(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    (void)arg;
    if (at == XFER_AT_DEBITED)
        raise(SIGKILL);
    return false;
}

/* In a child: a buy-in SIGKILLed between its debit and its credit. */
static void buyin_killed(uint32_t slot, uint64_t epoch, const char *acct, const char *owner,
                         int64_t amount, const char *op)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char err[600];
        rcluster_t *c = rcluster_create(ts_cluster_seeds(mcf_cl), NULL, err, sizeof err);
        if (c == NULL)
            _exit(3);
        mcluster_t *m = mcf_money(c);
        xfer_set_fault_hook(mcluster_xfer(m), kill_at_debited, NULL);
        money_result_t r;
        seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, acct, owner, amount, op, &r);
        _exit(4); /* the hook did not fire */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "the child was not killed between debit and credit (status %#x)", status);
}

START_TEST(test_a_buy_in_killed_between_debit_and_credit_lands_once)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    uint32_t slot = 5;
    uint64_t epoch = 2;
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);

    /* killed after the debit: the chips are in flight, not at the table, not lost */
    buyin_killed(slot, epoch, "ts.a", alice, 300, "kill-a");
    ck_assert_int_eq(mcf_wallet(m, alice), 700);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 0);
    mcf_audit(m, 300);
    /* the table's resend (same op id) finishes it: credited once */
    money_result_t r;
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 300, "kill-a", &r),
                     MONEY_OK);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 300, "kill-a", &r),
                     MONEY_OK);
    ck_assert_int_eq(mcf_wallet(m, alice), 700);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 300);
    mcf_audit(m, 0);

    /* killed again, and this time the sweeper finishes it; the resend then changes nothing */
    buyin_killed(slot, epoch, "ts.b", bob, 250, "kill-b");
    mcf_audit(m, 250);
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(mcluster_xfer(m), 0, &st), 0);
    ck_assert_uint_ge(st.completed, 1);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.b"), 250);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.b", bob, 250, "kill-b", &r),
                     MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(mcf_wallet(m, bob), 750);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.b"), 250);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_buy_in_in_flight_when_its_epoch_is_recovered_goes_back_to_the_wallet)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice");
    uint32_t slot = 6;
    uint64_t epoch = 4;
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    mcf_seed(m, alice, 1000);
    buyin_killed(slot, epoch, "ts.a", alice, 400, "late");
    ck_assert_int_eq(mcf_wallet(m, alice), 600);
    /* the server is gone; a sweeper claims the unheld slot and recovers the epoch */
    money_recover_result_t rv;
    ck_assert_msg(mcluster_recover(m, mcf_service(), slot, epoch, MONEY_RECOVER_CLAIM, NULL, &rv) ==
                      0,
                  "recover: %s", rv.error);
    ck_assert_uint_gt(rv.new_fence, epoch);
    ck_assert_int_eq(rv.chips, 0); /* nothing reached the table */
    mcf_audit(m, 400);
    /* the credit is refused for good (the account is closed) and the debit refunded */
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(mcluster_xfer(m), 0, &st), 0);
    ck_assert_uint_ge(st.refunded, 1);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 0);
    money_result_t r;
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 400, "late", &r),
                     MONEY_ERR_STALE_EPOCH);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

static bool stop_at_debited(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    (void)arg;
    return at == XFER_AT_DEBITED;
}

START_TEST(test_a_cash_out_whose_credit_fails_stays_in_flight_for_the_sweeper)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice");
    uint32_t slot = 7;
    uint64_t epoch = 3;
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    mcf_seed(m, alice, 1000);
    money_result_t r;
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 600, "in", &r),
                     MONEY_OK);
    xfer_set_fault_hook(mcluster_xfer(m), stop_at_debited, NULL);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_OUT, slot, epoch, "ts.a", alice, 600, "out", &r),
                     -EAGAIN);
    xfer_set_fault_hook(mcluster_xfer(m), NULL, NULL);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 0);
    ck_assert_int_eq(mcf_wallet(m, alice), 400);
    mcf_audit(m, 600);
    xfer_sweep_stats_t st;
    ck_assert_int_eq(xfer_sweep(mcluster_xfer(m), 0, &st), 0);
    ck_assert_uint_ge(st.completed, 1);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_OUT, slot, epoch, "ts.a", alice, 600, "out", &r),
                     MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

#define RACERS 2
#define SEATS 12

START_TEST(test_two_recoveries_racing_return_each_chip_once)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    uint32_t slot = 8;
    uint64_t epoch = 5;
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    char owners[SEATS][48], accts[SEATS][32], op[32];
    for (int i = 0; i < SEATS; i++) {
        snprintf(owners[i], sizeof owners[i], "p%d.%d", (int)getpid(), i);
        snprintf(accts[i], sizeof accts[i], "ts.%d", i);
        mcf_seed(m, owners[i], 1000);
        snprintf(op, sizeof op, "in%d", i);
        money_result_t r;
        ck_assert_int_eq(
            seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, accts[i], owners[i], 100 + i, op, &r),
            MONEY_OK);
    }
    /* the server stops renewing; two sweepers claim the epoch at the same moment */
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    long long start = ts_now_ms() + 300;
    pid_t pids[RACERS];
    for (int k = 0; k < RACERS; k++) {
        pids[k] = fork();
        ck_assert_int_ge(pids[k], 0);
        if (pids[k] == 0) {
            close(fds[0]);
            char e2[600];
            rcluster_t *c2 = rcluster_create(ts_cluster_seeds(mcf_cl), NULL, e2, sizeof e2);
            if (c2 == NULL)
                _exit(3);
            mcluster_t *m2 = mcf_money(c2);
            while (ts_now_ms() < start)
                ;
            money_recover_result_t rv;
            int rc =
                mcluster_recover(m2, mcf_service(), slot, epoch, MONEY_RECOVER_CLAIM, NULL, &rv);
            long long v[2] = {rc, rv.chips};
            if (write(fds[1], v, sizeof v) != (ssize_t)sizeof v)
                _exit(5);
            _exit(0);
        }
    }
    close(fds[1]);
    long long total = 0;
    int ok = 0;
    for (int k = 0; k < RACERS; k++) {
        long long v[2];
        ck_assert_int_eq(read(fds[0], v, sizeof v), (ssize_t)sizeof v);
        /* the loser may find the epoch already claimed (then dead) or alive no more */
        ck_assert_msg(v[0] == 0 || v[0] == -EAGAIN || v[0] == MONEY_ERR_ALIVE,
                      "a recovery answered %lld", v[0]);
        ok += v[0] == 0 || v[0] == -EAGAIN;
        total += v[1];
    }
    close(fds[0]);
    for (int k = 0; k < RACERS; k++) {
        int status;
        ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ck_assert_int_ge(ok, 1);
    long long want = 0;
    for (int i = 0; i < SEATS; i++)
        want += 100 + i;
    ck_assert_int_eq(total, want);         /* each chip taken out of its seat once */
    xfer_sweep(mcluster_xfer(m), 0, NULL); /* whatever a racer left in flight */
    for (int i = 0; i < SEATS; i++) {
        ck_assert_int_eq(mcf_wallet(m, owners[i]), 1000);
        ck_assert_int_eq(mcf_seat(m, slot, epoch, accts[i]), 0);
    }
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_sweep_recovers_dead_epochs_only_and_a_batch_settles_in_one_call)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    uint32_t slot = 9;
    char err[300] = "";
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    /* epoch 1 of the slot: a table with a batch of rounds; then the slot's next holder, 2 */
    mcf_set_fence(c, slot, 1);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, 1, err, sizeof err), MONEY_OK);
    money_result_t r;
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, 1, "ts.a", alice, 300, "a1", &r),
                     MONEY_OK);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, 1, "ts.b", bob, 300, "b1", &r), MONEY_OK);
    money_settlement_t b[4];
    money_result_t out[4];
    for (int i = 0; i < 4; i++)
        b[i] = round_of(slot, 1, (uint64_t)i + 1, "ts.a", 10, "ts.b", -11, 1);
    b[2].deltas[1] = -1000; /* this one alone is refused */
    b[2].deltas[0] = 999;
    ck_assert_int_eq(mcluster_settle_batch(m, mcf_service(), b, 4, out), MONEY_OK);
    ck_assert_int_eq(out[0].status, MONEY_OK);
    ck_assert_int_eq(out[1].status, MONEY_OK);
    ck_assert_int_eq(out[2].status, MONEY_ERR_NEGATIVE);
    ck_assert_int_eq(out[3].status, MONEY_OK);
    ck_assert_int_eq(out[3].balances[0], 330);
    ck_assert_int_eq(out[3].balances[1], 267);
    /* rounds of two epochs never share a call */
    b[1].round.epoch = 2;
    ck_assert_int_eq(mcluster_settle_batch(m, mcf_service(), b, 2, out), -EINVAL);
    mcf_set_fence(c, slot, 2);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, 2, err, sizeof err), MONEY_OK);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, 2, "ts.a", alice, 100, "a2", &r),
                     MONEY_OK);
    /* the sweep of the new holder: epoch 1 is dead (its chips go back, its rake to the
     * house), 2 its own */
    char rake1[200];
    mcluster_key_epoch(mcf_service(), slot, 1, ":bal:rake:holdem", rake1, sizeof rake1);
    int64_t house0 = 0, r1 = -1;
    ck_assert_int_eq(mcluster_balance(m, "{house}:bal:rake:holdem", &house0), 0);
    ck_assert_int_eq(mcluster_balance(m, rake1, &r1), 0);
    ck_assert_int_eq(r1, 3);
    char own[64];
    snprintf(own, sizeof own, "%s:%u:2", mcf_service(), slot);
    mcluster_sweep_stats_t st;
    ck_assert_int_eq(mcluster_sweep(m, own, &st), 0);
    ck_assert_uint_ge(st.recovered, 1);
    ck_assert_int_eq(mcf_seat(m, slot, 1, "ts.a"), 0);
    ck_assert_int_eq(mcf_seat(m, slot, 2, "ts.a"), 100);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000 - 100 + 30);
    ck_assert_int_eq(mcf_wallet(m, bob), 1000 - 33);
    int64_t house1 = -1;
    ck_assert_int_eq(mcluster_balance(m, "{house}:bal:rake:holdem", &house1), 0);
    ck_assert_int_eq(house1, house0 + 3);
    ck_assert_int_eq(mcluster_balance(m, rake1, &r1), 0);
    ck_assert_int_eq(r1, 0);
    /* a sweep by another process leaves the live epoch 2 alone */
    ck_assert_int_eq(mcluster_sweep(m, NULL, &st), 0);
    ck_assert_uint_ge(st.alive, 1);
    ck_assert_int_eq(mcf_seat(m, slot, 2, "ts.a"), 100);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_recovery_killed_mid_return_is_finished_once_by_the_next)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    uint32_t slot = 10;
    uint64_t epoch = 6;
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    money_result_t r;
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.a", alice, 300, "a", &r),
                     MONEY_OK);
    ck_assert_int_eq(seat_op(m, MONEY_KIND_SEAT_IN, slot, epoch, "ts.b", bob, 200, "b", &r),
                     MONEY_OK);
    mcf_set_fence(c, slot, epoch + 1); /* the next holder took the slot */
    /* a recovery SIGKILLed once its returns are debited, before the first credit */
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char e2[600];
        rcluster_t *c2 = rcluster_create(ts_cluster_seeds(mcf_cl), NULL, e2, sizeof e2);
        if (c2 == NULL)
            _exit(3);
        mcluster_t *m2 = mcf_money(c2);
        xfer_set_fault_hook(mcluster_xfer(m2), kill_at_debited, NULL);
        money_recover_result_t rv;
        mcluster_recover(m2, mcf_service(), slot, epoch, MONEY_RECOVER_DEAD, NULL, &rv);
        _exit(4);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 0);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.b"), 0);
    mcf_audit(m, 500); /* out of the seats, in flight, not lost */
    /* the next recovery finds nothing held and drives the returns in flight: once */
    money_recover_result_t rv;
    ck_assert_msg(mcluster_recover(m, mcf_service(), slot, epoch, MONEY_RECOVER_DEAD, NULL, &rv) ==
                      0,
                  "recover: %s", rv.error);
    ck_assert_int_eq(rv.chips, 0);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    ck_assert_int_eq(mcf_wallet(m, bob), 1000);
    ck_assert_int_eq(mcluster_recover(m, mcf_service(), slot, epoch, MONEY_RECOVER_DEAD, NULL, &rv),
                     0);
    xfer_sweep(mcluster_xfer(m), 0, NULL);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

/* The node that serves key, as the cluster itself says. */
static int owner_of(const char *key)
{
    unsigned slot = rcluster_key_slot(key, strlen(key));
    for (int asker = 0; asker < ts_cluster_size(mcf_cl); asker++) {
        int o = ts_cluster_slot_owner(mcf_cl, asker, slot);
        if (o >= 0)
            return o;
    }
    return -1;
}

/* Sends a settlement until it has a final answer (a failover answers -EIO or -EAGAIN for a
 * while); the round must apply. */
static void settle_until_done(mcluster_t *m, const money_settlement_t *s)
{
    money_result_t r;
    long long end = ts_now_ms() + 20000;
    int rc;
    while ((rc = mcluster_settle(m, mcf_service(), s, &r)) == -EIO || rc == -EAGAIN) {
        ck_assert_msg(ts_now_ms() < end, "settle still failing: %s", r.error);
        ts_sleep_ms(50);
    }
    ck_assert_msg(rc == MONEY_OK, "settle %s: %d %s", r.id, rc, r.error);
}

static void seat_until_done(mcluster_t *m, money_kind_t kind, uint32_t slot, uint64_t epoch,
                            const char *acct, const char *owner, int64_t amount, const char *op)
{
    money_result_t r;
    long long end = ts_now_ms() + 20000;
    int rc;
    while ((rc = seat_op(m, kind, slot, epoch, acct, owner, amount, op, &r)) == -EIO ||
           rc == -EAGAIN) {
        ck_assert_msg(ts_now_ms() < end, "%s still failing: %s", op, r.error);
        ts_sleep_ms(50);
    }
    ck_assert_msg(rc == MONEY_OK, "%s: %d %s", op, rc, r.error);
}

#define PLAYERS 6

typedef struct {
    unsigned slot;
    int from, to, rc;
} migrate_t;

static void *migrate_thread(void *arg)
{
    migrate_t *mg = arg;
    ts_sleep_ms(30);
    mg->rc = ts_cluster_migrate_slot(mcf_cl, mg->slot, mg->from, mg->to);
    return NULL;
}

START_TEST(test_slots_moved_during_play_lose_nothing)
{
    MCF_NEED_CLUSTER();
    char err[600] = "";
    rcluster_opts_t co = {.retry_budget_ms = 10000};
    rcluster_t *c = rcluster_create(ts_cluster_seeds(mcf_cl), &co, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    mcluster_t *m = mcf_money(c);
    uint32_t slot = 12;
    uint64_t epoch = 1;
    mcf_set_fence(c, slot, epoch);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    char owners[PLAYERS][48], accts[PLAYERS][16], op[32];
    int64_t want[PLAYERS], home[PLAYERS];
    for (int i = 0; i < PLAYERS; i++) {
        snprintf(owners[i], sizeof owners[i], "g%d.%d", (int)getpid(), i);
        snprintf(accts[i], sizeof accts[i], "ts.%d", i);
        mcf_seed(m, owners[i], 10000);
        snprintf(op, sizeof op, "in%d", i);
        seat_until_done(m, MONEY_KIND_SEAT_IN, slot, epoch, accts[i], owners[i], 1000, op);
        want[i] = 1000;
        home[i] = 9000;
    }
    /* the epoch's slot and a wallet's slot move to other masters while the table plays */
    char live[200], wk[128];
    mcluster_key_epoch(mcf_service(), slot, epoch, ":live", live, sizeof live);
    wallet_key(owners[0], wk, sizeof wk);
    migrate_t mg[2] = {{.slot = slot_of(live)}, {.slot = slot_of(wk)}};
    mg[0].from = owner_of(live);
    mg[1].from = owner_of(wk);
    pthread_t th[2];
    int nth = 0;
    for (int i = 0; i < 2; i++) {
        if (i == 1 && mg[1].slot == mg[0].slot)
            break;
        mg[i].to = (mg[i].from + 1) % MCF_MASTERS; /* the masters are nodes 0..MCF_MASTERS-1 */
        ck_assert_int_lt(mg[i].from, MCF_MASTERS);
        pthread_create(&th[nth++], NULL, migrate_thread, &mg[i]);
    }
    for (int k = 1; k <= 200; k++) {
        int w = k % PLAYERS, a = (k + 1) % PLAYERS, b = (k + 2) % PLAYERS;
        money_settlement_t s = {0};
        s.round = (money_round_id_t){.server = slot, .epoch = epoch, .desk = 2, .seq = (uint64_t)k};
        money_round_id_set_service(&s.round, mcf_service());
        s.game = "holdem";
        s.nplayers = 3;
        s.players[0] = accts[w];
        s.players[1] = accts[a];
        s.players[2] = accts[b];
        s.deltas[0] = 1;
        s.deltas[1] = -1;
        s.deltas[2] = -1;
        s.rake = 1;
        settle_until_done(m, &s);
        want[w] += 1;
        want[a] -= 1;
        want[b] -= 1;
        if (k % 10 == 0) {
            int p = k % 20 == 0 ? 0 : (k / 10) % PLAYERS;
            snprintf(op, sizeof op, "top%d", k);
            seat_until_done(m, MONEY_KIND_SEAT_IN, slot, epoch, accts[p], owners[p], 5, op);
            want[p] += 5;
            home[p] -= 5;
        }
    }
    for (int i = 0; i < nth; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(mg[i].rc, 0);
    }
    ck_assert_int_eq(owner_of(live), mg[0].to);
    rcluster_stats_t cs;
    rcluster_get_stats(c, &cs);
    ck_assert_msg(cs.moved + cs.ask + cs.tryagain >= 1, "no redirection met: the slots moved "
                                                        "before or after the play");
    for (int i = 0; i < PLAYERS; i++) {
        ck_assert_int_eq(mcf_seat(m, slot, epoch, accts[i]), want[i]);
        snprintf(op, sizeof op, "out%d", i);
        seat_until_done(m, MONEY_KIND_SEAT_OUT, slot, epoch, accts[i], owners[i], want[i], op);
        ck_assert_int_eq(mcf_wallet(m, owners[i]), home[i] + want[i]);
    }
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

/* ---- the writer queue with the money by entity (money_set_entity) -------------------------- */

typedef struct {
    pthread_mutex_t mu;
    int n;
    int status[16];
    char error[16][200];
} done_t;

static void done_cb(money_result_t *r, void *arg)
{
    done_t *d = arg;
    pthread_mutex_lock(&d->mu);
    if (d->n < 16) {
        d->status[d->n] = r->status;
        snprintf(d->error[d->n], sizeof d->error[0], "%.60s %.120s", r->id, r->error);
    }
    d->n++;
    pthread_mutex_unlock(&d->mu);
    free(r);
}

START_TEST(test_the_writer_orders_seat_transfers_around_settlements)
{
    MCF_NEED_CLUSTER();
    money_set_entity(true); /* this case's process only (check forks each case) */
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob"), *house = mcf_player("house");
    uint32_t slot = 13;
    uint64_t epoch = 1;
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    money_writer_config_t wc = {.redis_host = "127.0.0.1",
                                .redis_port = 6379,
                                .redis_cluster = ts_cluster_seeds(mcf_cl),
                                .service = mcf_service()};
    money_writer_t *w = money_writer_create(&wc);
    ck_assert_ptr_nonnull(w);
    done_t d = {.mu = PTHREAD_MUTEX_INITIALIZER};
    /* submitted back to back: each seat transfer waits for what is before it, and what is after
     * it waits for it -- the settlement sees the buy-ins, the cash-outs see the settlement */
    money_seat_t sa = {.slot = slot, .epoch = epoch, .account = "ts.a", .owner = alice};
    money_seat_t sb = {.slot = slot, .epoch = epoch, .account = "ts.b", .owner = bob};
    ck_assert_int_eq(
        money_writer_submit_seat(w, MONEY_KIND_SEAT_IN, &sa, 300, "w-in-a", done_cb, &d), 0);
    ck_assert_int_eq(
        money_writer_submit_seat(w, MONEY_KIND_SEAT_IN, &sb, 300, "w-in-b", done_cb, &d), 0);
    ck_assert_int_eq(money_writer_submit_mark(w, slot, epoch, "r:1", "{}", done_cb, &d), 0);
    money_settlement_t s = round_of(slot, epoch, 1, "ts.a", 10, "ts.b", -10, 0);
    ck_assert_int_eq(money_writer_submit_settle(w, &s, done_cb, &d), 0);
    ck_assert_int_eq(
        money_writer_submit_seat(w, MONEY_KIND_SEAT_OUT, &sa, 310, "w-out-a", done_cb, &d), 0);
    ck_assert_int_eq(
        money_writer_submit_seat(w, MONEY_KIND_SEAT_OUT, &sb, 290, "w-out-b", done_cb, &d), 0);
    /* the house's funding: money created in its wallet, once */
    ck_assert_int_eq(money_writer_submit_cashout(w, house, 500, "w-fund", done_cb, &d), 0);
    ck_assert_int_eq(money_writer_submit_cashout(w, house, 500, "w-fund", done_cb, &d), 0);
    /* a debit into nowhere has no place in this layout */
    ck_assert_int_eq(money_writer_submit_buyin(w, house, 5, "w-burn", done_cb, &d), -EINVAL);
    ck_assert_int_ge(money_writer_flush(w, 30000), 0);
    money_writer_destroy(w);
    ck_assert_int_eq(d.n, 8);
    for (int i = 0; i < 8; i++)
        ck_assert_msg(d.status[i] == MONEY_OK, "item %d: %d %s", i, d.status[i], d.error[i]);
    ck_assert_int_eq(mcf_wallet(m, alice), 1010);
    ck_assert_int_eq(mcf_wallet(m, bob), 990);
    ck_assert_int_eq(mcf_wallet(m, house), 500);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.a"), 0);
    ck_assert_int_eq(mcf_seat(m, slot, epoch, "ts.b"), 0);
    char held[200];
    mcluster_key_epoch(mcf_service(), slot, epoch, ":held", held, sizeof held);
    redisReply *r = rcluster_command(c, RCLUSTER_RESEND, held, "HGET %s r:1", held);
    ck_assert(r != NULL && r->type == REDIS_REPLY_STRING && strcmp(r->str, "{}") == 0);
    freeReplyObject(r);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_a_failover_during_play_settles_every_round_once)
{
    MCF_NEED_CLUSTER();
    char err[600] = "";
    rcluster_opts_t co = {.retry_budget_ms = 10000};
    rcluster_t *c = rcluster_create(ts_cluster_seeds(mcf_cl), &co, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    mcluster_t *m = mcf_money(c);
    uint32_t slot = 11;
    uint64_t epoch = 1;
    mcf_set_fence(c, slot, epoch);
    ck_assert_int_eq(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err), MONEY_OK);
    char owners[PLAYERS][48], accts[PLAYERS][16], op[32];
    int64_t want[PLAYERS], home[PLAYERS]; /* seat accounts; wallets */
    for (int i = 0; i < PLAYERS; i++) {
        snprintf(owners[i], sizeof owners[i], "f%d.%d", (int)getpid(), i);
        snprintf(accts[i], sizeof accts[i], "ts.%d", i);
        mcf_seed(m, owners[i], 10000);
        snprintf(op, sizeof op, "in%d", i);
        seat_until_done(m, MONEY_KIND_SEAT_IN, slot, epoch, accts[i], owners[i], 1000, op);
        want[i] = 1000;
        home[i] = 9000;
    }
    char tag[200];
    mcluster_key_epoch(mcf_service(), slot, epoch, ":live", tag, sizeof tag);
    int master = owner_of(tag);
    ck_assert_int_ge(master, 0);
    /* rounds and top-ups; the epoch's master SIGKILLed in the middle, its replica promoted */
    for (int k = 1; k <= 120; k++) {
        if (k == 30)
            ts_cluster_crash(mcf_cl, master);
        int w = k % PLAYERS, a = (k + 1) % PLAYERS, b = (k + 2) % PLAYERS;
        money_settlement_t s = {0};
        s.round = (money_round_id_t){.server = slot, .epoch = epoch, .desk = 1, .seq = (uint64_t)k};
        money_round_id_set_service(&s.round, mcf_service());
        s.game = "holdem";
        s.nplayers = 3;
        s.players[0] = accts[w];
        s.players[1] = accts[a];
        s.players[2] = accts[b];
        s.deltas[0] = 2;
        s.deltas[1] = -1;
        s.deltas[2] = -1;
        settle_until_done(m, &s);
        want[w] += 2;
        want[a] -= 1;
        want[b] -= 1;
        if (k % 20 == 0) {
            int p = (k / 20) % PLAYERS;
            snprintf(op, sizeof op, "top%d", k);
            seat_until_done(m, MONEY_KIND_SEAT_IN, slot, epoch, accts[p], owners[p], 10, op);
            want[p] += 10;
            home[p] -= 10;
        }
    }
    ck_assert_int_eq(ts_cluster_wait_ok(mcf_cl, 20000), 0);
    ck_assert_int_ne(owner_of(tag), master);
    for (int i = 0; i < PLAYERS; i++)
        ck_assert_int_eq(mcf_seat(m, slot, epoch, accts[i]), want[i]);
    /* every round once, so the stacks go home whole */
    for (int i = 0; i < PLAYERS; i++) {
        snprintf(op, sizeof op, "out%d", i);
        seat_until_done(m, MONEY_KIND_SEAT_OUT, slot, epoch, accts[i], owners[i], want[i], op);
        ck_assert_int_eq(mcf_wallet(m, owners[i]), home[i] + want[i]);
    }
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

int main(void)
{
    if (ts_cluster_skip("mcluster"))
        return 0;
    Suite *s = suite_create("mcluster");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 90);
    tcase_add_unchecked_fixture(tc, mcf_setup, mcf_teardown);
    tcase_add_test(tc, test_a_table_buys_in_settles_and_cashes_out_across_slots);
    tcase_add_test(tc, test_a_recovered_epoch_is_fenced_in_its_own_slot);
    tcase_add_test(tc, test_a_buy_in_killed_between_debit_and_credit_lands_once);
    tcase_add_test(tc, test_a_buy_in_in_flight_when_its_epoch_is_recovered_goes_back_to_the_wallet);
    tcase_add_test(tc, test_a_cash_out_whose_credit_fails_stays_in_flight_for_the_sweeper);
    tcase_add_test(tc, test_two_recoveries_racing_return_each_chip_once);
    tcase_add_test(tc, test_a_recovery_killed_mid_return_is_finished_once_by_the_next);
    tcase_add_test(tc, test_a_sweep_recovers_dead_epochs_only_and_a_batch_settles_in_one_call);
    tcase_add_test(tc, test_slots_moved_during_play_lose_nothing);
    tcase_add_test(tc, test_the_writer_orders_seat_transfers_around_settlements);
    /* last: it kills a master */
    tcase_add_test(tc, test_a_failover_during_play_settles_every_round_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
