/*
 * mcluster_handoff: whole-table moves with the money by entity on a real Redis Cluster
 * (money/mcluster.h "whole-table moves"; docs/queues.md "Whole-table moves by entity"): 3
 * masters with two replicas each on loopback (tests/support/tcluster.h), every write WAITing for
 * one replica.
 *
 * A table of an old epoch ({s:<service>:<slot>:<old>}) is offered in that epoch's slot and
 * adopted by another epoch: a claim in the old slot debits every seat account into xfer
 * transfers, each credited once in the adopter's slot. Each case checks the conservation audit
 * (xfer_audit) after it: wallets + seat accounts + rake + in flight = seeded.
 *
 * A redis-server without cluster mode makes the whole program a visible SKIP (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "keytag.h"
#include "log.h"
#include "mcluster.h"
#include "support.h"
#include "mcluster_fixture.h"
#include "tcluster.h"

#define OLD_SLOT 1
#define NEW_SLOT 2

/* An epoch opened for money under its lease fence. */
static void open_epoch(rcluster_t *c, mcluster_t *m, uint32_t slot, uint64_t epoch)
{
    char err[300] = "";
    mcf_set_fence(c, slot, epoch);
    ck_assert_msg(mcluster_epoch_open(m, mcf_service(), slot, epoch, err, sizeof err) == MONEY_OK,
                  "open: %s", err);
}

static void buy_in(mcluster_t *m, uint32_t slot, uint64_t epoch, const char *acct,
                   const char *owner, int64_t amount)
{
    char op[64];
    snprintf(op, sizeof op, "in.%s", acct);
    money_seat_t s = {.slot = slot, .epoch = epoch, .account = acct, .owner = owner};
    money_result_t r;
    ck_assert_msg(mcluster_seat(m, mcf_service(), MONEY_KIND_SEAT_IN, &s, amount, op, &r) ==
                      MONEY_OK,
                  "buy-in %s: %s", acct, r.error);
}

static int cash_out(mcluster_t *m, uint32_t slot, uint64_t epoch, const char *acct,
                    const char *owner, int64_t amount)
{
    char op[64];
    snprintf(op, sizeof op, "out.%s", acct);
    money_seat_t s = {.slot = slot, .epoch = epoch, .account = acct, .owner = owner};
    money_result_t r;
    return mcluster_seat(m, mcf_service(), MONEY_KIND_SEAT_OUT, &s, amount, op, &r);
}

/* A dead epoch recovered (its lease fence moved past it). */
static void recover_dead(mcluster_t *m, rcluster_t *c, uint32_t slot, uint64_t epoch,
                         money_recover_result_t *rv)
{
    mcf_set_fence(c, slot, epoch + 1);
    int rc = mcluster_recover(m, mcf_service(), slot, epoch, MONEY_RECOVER_DEAD, NULL, rv);
    ck_assert_msg(rc == 0, "recover %" PRIu64 ": %d %s", epoch, rc, rv->error);
}

/* A table of two seats at the old epoch: alice's and bob's accounts "<desk>.1", "<desk>.2". */
typedef struct {
    money_offer_t o;
    char accts[2][32], news[2][32];
    const char *owners[2];
    const char *newp[2];
} table_t;

static void table_make(table_t *t, uint64_t epoch, uint64_t desk, const char *a, const char *b)
{
    memset(t, 0, sizeof *t);
    t->owners[0] = a;
    t->owners[1] = b;
    for (int i = 0; i < 2; i++) {
        snprintf(t->accts[i], sizeof t->accts[i], "ts.o%" PRIx64 ".%d", desk, i + 1);
        snprintf(t->news[i], sizeof t->news[i], "ts.n%" PRIx64 ".%d", desk, i + 1);
        t->newp[i] = t->news[i];
        t->o.seats[i] =
            (money_handoff_seat_t){.account = t->accts[i], .owner = t->owners[i], .seat = i};
    }
    t->o.slot = OLD_SLOT;
    t->o.epoch = epoch;
    t->o.desk = desk;
    t->o.n = 1;
    t->o.state = "{\"game\":\"holdem\",\"stake\":10,\"seats\":6}";
    t->o.nseats = 2;
}

static void offer_id(const table_t *t, char *buf, size_t len)
{
    ck_assert_int_eq(money_offer_id(mcf_service(), &t->o, buf, len), 0);
}

static int adopt(mcluster_t *m, const table_t *t, uint32_t slot, uint64_t epoch, uint64_t desk,
                 int64_t stacks[2], money_result_t *r)
{
    char id[MONEY_ID_MAX + 1];
    offer_id(t, id, sizeof id);
    return mcluster_adopt(m, id, mcf_service(), slot, epoch, desk, t->newp, 2, stacks, r);
}

static long long held_len(rcluster_t *c, uint32_t slot, uint64_t epoch)
{
    char key[256];
    ck_assert_int_eq(mcluster_key_epoch(mcf_service(), slot, epoch, ":held", key, sizeof key), 0);
    redisReply *r = rcluster_command(c, RCLUSTER_RESEND, key, "HLEN %s", key);
    ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    long long n = r->integer;
    freeReplyObject(r);
    return n;
}

START_TEST(test_a_table_moves_whole_to_another_epoch_once)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    open_epoch(c, m, OLD_SLOT, 3);
    open_epoch(c, m, NEW_SLOT, 7);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    table_t t;
    table_make(&t, 3, 0xd1, alice, bob);
    buy_in(m, OLD_SLOT, 3, t.accts[0], alice, 400);
    buy_in(m, OLD_SLOT, 3, t.accts[1], bob, 300);
    /* a round played: alice wins 50, bob loses 55, 5 of rake */
    money_settlement_t s = {.game = "holdem", .nplayers = 2, .rake = 5};
    s.round = (money_round_id_t){.server = OLD_SLOT, .epoch = 3, .desk = 0xd1, .seq = 1};
    money_round_id_set_service(&s.round, mcf_service());
    s.players[0] = t.accts[0];
    s.deltas[0] = 50;
    s.players[1] = t.accts[1];
    s.deltas[1] = -55;
    money_result_t r;
    ck_assert_int_eq(mcluster_settle(m, mcf_service(), &s, &r), MONEY_OK);

    /* the offer, in the old epoch's slot; sent again it answers itself */
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_OK);
    ck_assert(r.replayed);
    char id[MONEY_ID_MAX + 1];
    offer_id(&t, id, sizeof id);
    money_offer_info_t info;
    ck_assert_int_eq(mcluster_offer_read(m, id, &info), 0);
    ck_assert_str_eq(info.status, "offered");
    ck_assert_uint_eq(info.nseats, 2);
    ck_assert_str_eq(info.accounts[1], t.accts[1]);
    ck_assert_str_eq(info.owners[0], alice);
    ck_assert_int_eq(info.seats[1], 1);
    free(info.state);
    mcf_audit(m, 0);

    /* adopted by the epoch (NEW_SLOT, 7): the stacks move whole, once */
    int64_t stacks[2] = {0};
    ck_assert_int_eq(adopt(m, &t, NEW_SLOT, 7, 0xa1, stacks, &r), MONEY_OK);
    ck_assert(!r.replayed);
    ck_assert_int_eq(stacks[0], 450);
    ck_assert_int_eq(stacks[1], 245);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t.news[0]), 450);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t.news[1]), 245);
    ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 3, t.accts[0]), 0);
    ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 3, t.accts[1]), 0);
    /* the resend answers the first result and moves nothing */
    ck_assert_int_eq(adopt(m, &t, NEW_SLOT, 7, 0xa1, stacks, &r), MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(stacks[0], 450);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t.news[0]), 450);
    ck_assert_int_eq(mcluster_offer_read(m, id, &info), 0);
    ck_assert_str_eq(info.status, "adopted");
    char who[128];
    snprintf(who, sizeof who, "%s:%d:7:a1", mcf_service(), NEW_SLOT);
    ck_assert_str_eq(info.adopter, who);
    free(info.state);
    /* the old server's withdrawal finds it adopted; its accounts are closed to it */
    char st[16];
    ck_assert_int_eq(mcluster_offer_withdraw(m, mcf_service(), &t.o, st, &r), MONEY_OK);
    ck_assert_str_eq(st, "adopted");
    ck_assert_int_eq(cash_out(m, OLD_SLOT, 3, t.accts[0], alice, 1), MONEY_ERR_STALE_EPOCH);
    mcf_audit(m, 0);

    /* the players cash out at the adopter; the old epoch's recovery finds nothing of theirs */
    ck_assert_int_eq(cash_out(m, NEW_SLOT, 7, t.news[0], alice, 450), MONEY_OK);
    ck_assert_int_eq(cash_out(m, NEW_SLOT, 7, t.news[1], bob, 245), MONEY_OK);
    money_recover_result_t rv;
    recover_dead(m, c, OLD_SLOT, 3, &rv);
    ck_assert_int_eq(rv.chips, 0);
    ck_assert_int_eq(mcf_wallet(m, alice), 1050);
    ck_assert_int_eq(mcf_wallet(m, bob), 945);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_bad_adoptions_move_nothing)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    open_epoch(c, m, OLD_SLOT, 3);
    open_epoch(c, m, NEW_SLOT, 7);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    table_t t;
    table_make(&t, 3, 0xd1, alice, bob);
    buy_in(m, OLD_SLOT, 3, t.accts[0], alice, 400);
    money_result_t r;
    /* an account not held for its owner: no offer */
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_ERR_BAD_ARGS);
    buy_in(m, OLD_SLOT, 3, t.accts[1], bob, 300);
    /* an epoch that is not live offers nothing */
    t.o.epoch = 4;
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_ERR_STALE_EPOCH);
    t.o.epoch = 3;
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_OK);
    int64_t stacks[2];
    /* an adopter whose epoch is not live, one with the wrong number of seats, the offer's own
     * epoch, an offer that does not exist */
    ck_assert_int_eq(adopt(m, &t, NEW_SLOT, 8, 0xa1, stacks, &r), MONEY_ERR_STALE_EPOCH);
    char id[MONEY_ID_MAX + 1];
    offer_id(&t, id, sizeof id);
    ck_assert_int_eq(mcluster_adopt(m, id, mcf_service(), NEW_SLOT, 7, 0xa1, t.newp, 1, stacks, &r),
                     MONEY_ERR_BAD_ARGS);
    ck_assert_int_eq(mcluster_adopt(m, id, mcf_service(), OLD_SLOT, 3, 0xa1, t.newp, 2, stacks, &r),
                     -EINVAL);
    t.o.n = 9;
    ck_assert_int_eq(adopt(m, &t, NEW_SLOT, 7, 0xa1, stacks, &r), MONEY_ERR_NO_OFFER);
    t.o.n = 1;
    ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 3, t.accts[0]), 400);
    ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 3, t.accts[1]), 300);
    mcf_audit(m, 0);
    /* withdrawn: the adoption is refused and the old server cashes out as today */
    char st[16];
    ck_assert_int_eq(mcluster_offer_withdraw(m, mcf_service(), &t.o, st, &r), MONEY_OK);
    ck_assert_str_eq(st, "withdrawn");
    ck_assert_int_eq(adopt(m, &t, NEW_SLOT, 7, 0xa1, stacks, &r), MONEY_ERR_OFFER_VOID);
    ck_assert_int_eq(held_len(c, NEW_SLOT, 7), 0);
    ck_assert_int_eq(cash_out(m, OLD_SLOT, 3, t.accts[0], alice, 400), MONEY_OK);
    ck_assert_int_eq(cash_out(m, OLD_SLOT, 3, t.accts[1], bob, 300), MONEY_OK);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    ck_assert_int_eq(mcf_wallet(m, bob), 1000);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

/* ---- races and crashes ----------------------------------------------------------------------- */

#define RACERS 2

START_TEST(test_two_adopters_racing_take_the_table_once)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    open_epoch(c, m, OLD_SLOT, 3);
    /* two adopting epochs, in other slots than the old one */
    const uint32_t slots[RACERS] = {NEW_SLOT, 3};
    for (int k = 0; k < RACERS; k++)
        open_epoch(c, m, slots[k], 7);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    for (int round = 0; round < 3; round++) {
        table_t t;
        table_make(&t, 3, 0xd0 + (uint64_t)round, alice, bob);
        buy_in(m, OLD_SLOT, 3, t.accts[0], alice, 100);
        buy_in(m, OLD_SLOT, 3, t.accts[1], bob, 200);
        money_result_t r;
        ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_OK);
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
                money_result_t r2;
                int64_t st2[2];
                while (ts_now_ms() < start)
                    ;
                long long v[2] = {adopt(m2, &t, slots[k], 7, 0xa1, st2, &r2), k};
                if (write(fds[1], v, sizeof v) != (ssize_t)sizeof v)
                    _exit(5);
                _exit(0);
            }
        }
        close(fds[1]);
        int won = -1, lost = 0;
        for (int k = 0; k < RACERS; k++) {
            long long v[2];
            ck_assert_int_eq(read(fds[0], v, sizeof v), (ssize_t)sizeof v);
            ck_assert_msg(v[0] == MONEY_OK || v[0] == MONEY_ERR_ADOPTED, "an adopter answered %lld",
                          v[0]);
            if (v[0] == MONEY_OK) {
                ck_assert_int_eq(won, -1);
                won = (int)v[1];
            } else {
                lost++;
            }
        }
        close(fds[0]);
        for (int k = 0; k < RACERS; k++) {
            int status;
            ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
            ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        ck_assert_int_ge(won, 0);
        ck_assert_int_eq(lost, RACERS - 1);
        /* the winner holds the stacks, the loser nothing (its holds forgotten) */
        uint32_t ws = slots[won], ls = slots[1 - won];
        ck_assert_int_eq(mcf_seat(m, ws, 7, t.news[0]), 100);
        ck_assert_int_eq(mcf_seat(m, ws, 7, t.news[1]), 200);
        ck_assert_int_eq(mcf_seat(m, ls, 7, t.news[0]), 0);
        ck_assert_int_eq(mcf_seat(m, ls, 7, t.news[1]), 0);
        ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 3, t.accts[0]), 0);
        mcf_audit(m, 0);
    }
    ck_assert_int_eq(held_len(c, slots[0], 7) + held_len(c, slots[1], 7), 6);
    ck_assert_int_eq(mcf_wallet(m, alice), 700);
    ck_assert_int_eq(mcf_wallet(m, bob), 400);
    mcluster_destroy(m);
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

/* In a child: an adoption SIGKILLed after its claim, between the first move's debit and its
 * credit. */
static void adopt_killed(const table_t *t, uint32_t slot, uint64_t epoch, uint64_t desk)
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
        int64_t st[2];
        adopt(m, t, slot, epoch, desk, st, &r);
        _exit(4); /* the hook did not fire */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "the adopter was not killed between debit and credit (status %#x)", status);
}

START_TEST(test_an_adopter_killed_between_debit_and_credit_lands_once)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    open_epoch(c, m, OLD_SLOT, 3);
    open_epoch(c, m, NEW_SLOT, 7);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    table_t t[3];
    for (int i = 0; i < 3; i++) {
        table_make(&t[i], 3, 0xd1 + (uint64_t)i, alice, bob);
        buy_in(m, OLD_SLOT, 3, t[i].accts[0], alice, 100);
        buy_in(m, OLD_SLOT, 3, t[i].accts[1], bob, 50);
        money_result_t r;
        ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t[i].o, &r), MONEY_OK);
    }
    money_result_t r;
    int64_t st[2];

    /* 1. killed after the claim: both moves in flight; the adopter's resend lands them once */
    adopt_killed(&t[0], NEW_SLOT, 7, 0xa1);
    ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 3, t[0].accts[0]), 0);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t[0].news[0]), 0);
    mcf_audit(m, 150);
    ck_assert_int_eq(adopt(m, &t[0], NEW_SLOT, 7, 0xa1, st, &r), MONEY_OK);
    ck_assert(r.replayed);
    ck_assert_int_eq(st[0], 100);
    ck_assert_int_eq(adopt(m, &t[0], NEW_SLOT, 7, 0xa1, st, &r), MONEY_OK);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t[0].news[0]), 100);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t[0].news[1]), 50);
    mcf_audit(m, 0);

    /* 2. killed again; the xfer sweeper lands the moves; the resend then changes nothing */
    adopt_killed(&t[1], NEW_SLOT, 7, 0xa2);
    mcf_audit(m, 150);
    xfer_sweep_stats_t ss;
    ck_assert_int_eq(xfer_sweep(mcluster_xfer(m), 0, &ss), 0);
    ck_assert_uint_ge(ss.completed, 2);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t[1].news[0]), 100);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t[1].news[1]), 50);
    ck_assert_int_eq(adopt(m, &t[1], NEW_SLOT, 7, 0xa2, st, &r), MONEY_OK);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t[1].news[0]), 100);
    mcf_audit(m, 0);

    /* 3. killed again, and the old epoch dies too: its recovery lands the moves at the
     * adopter (they are the adopter's now) and returns nothing of them */
    adopt_killed(&t[2], NEW_SLOT, 7, 0xa3);
    mcf_audit(m, 150);
    money_recover_result_t rv;
    recover_dead(m, c, OLD_SLOT, 3, &rv);
    ck_assert_int_eq(rv.chips, 0);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t[2].news[0]), 100);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t[2].news[1]), 50);
    ck_assert_int_eq(mcf_wallet(m, alice), 700);
    ck_assert_int_eq(mcf_wallet(m, bob), 850);
    mcf_audit(m, 0);
    /* the adopter's epoch ends: every chip goes home */
    recover_dead(m, c, NEW_SLOT, 7, &rv);
    ck_assert_int_eq(rv.chips, 450);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    ck_assert_int_eq(mcf_wallet(m, bob), 1000);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_an_adopter_recovered_before_its_credits_sends_the_chips_home)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    open_epoch(c, m, OLD_SLOT, 3);
    open_epoch(c, m, NEW_SLOT, 7);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    table_t t;
    table_make(&t, 3, 0xd1, alice, bob);
    buy_in(m, OLD_SLOT, 3, t.accts[0], alice, 400);
    buy_in(m, OLD_SLOT, 3, t.accts[1], bob, 300);
    money_result_t r;
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_OK);
    /* the adopter dies after its claim and its epoch is recovered before any credit: its
     * accounts are closed, so the moves are refused and refunded to the old seat accounts */
    adopt_killed(&t, NEW_SLOT, 7, 0xa1);
    mcf_audit(m, 700);
    money_recover_result_t rv;
    recover_dead(m, c, NEW_SLOT, 7, &rv);
    ck_assert_int_eq(rv.chips, 0);
    xfer_sweep_stats_t ss;
    ck_assert_int_eq(xfer_sweep(mcluster_xfer(m), 0, &ss), 0);
    ck_assert_uint_ge(ss.refunded, 2);
    ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 3, t.accts[0]), 400);
    ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 3, t.accts[1]), 300);
    ck_assert_int_eq(mcf_seat(m, NEW_SLOT, 7, t.news[0]), 0);
    mcf_audit(m, 0);
    /* the resend of the dead adopter is told so */
    int64_t st[2];
    ck_assert_int_eq(adopt(m, &t, NEW_SLOT, 7, 0xa1, st, &r), MONEY_ERR_STALE_EPOCH);
    /* the old epoch's end (here its recovery) returns them: held for their owners still */
    recover_dead(m, c, OLD_SLOT, 3, &rv);
    ck_assert_int_eq(rv.chips, 700);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    ck_assert_int_eq(mcf_wallet(m, bob), 1000);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

static bool stop_at_debited(xfer_fault_t at, const char *id, void *arg)
{
    (void)id;
    (void)arg;
    return at == XFER_AT_DEBITED; /* as if the process died there: nothing more is sent */
}

START_TEST(test_a_move_in_flight_through_the_old_epochs_recovery_is_returned_by_the_next)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    open_epoch(c, m, OLD_SLOT, 3);
    open_epoch(c, m, NEW_SLOT, 7);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    table_t t;
    table_make(&t, 3, 0xd1, alice, bob);
    buy_in(m, OLD_SLOT, 3, t.accts[0], alice, 400);
    buy_in(m, OLD_SLOT, 3, t.accts[1], bob, 300);
    money_result_t r;
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_OK);
    adopt_killed(&t, NEW_SLOT, 7, 0xa1);
    mcf_audit(m, 700);
    /* the old epoch's recovery cannot finish the moves (its transfers stop after the debit, as
     * if the adopter's master were unreachable): the emptied accounts stay held, marked, and the
     * epoch stays in the index */
    rcluster_t *c2 = mcf_client();
    mcluster_t *m2 = mcf_money(c2);
    xfer_set_fault_hook(mcluster_xfer(m2), stop_at_debited, NULL);
    money_recover_result_t rv;
    mcf_set_fence(c, OLD_SLOT, 4);
    ck_assert_int_eq(
        mcluster_recover(m2, mcf_service(), OLD_SLOT, 3, MONEY_RECOVER_DEAD, NULL, &rv), -EAGAIN);
    ck_assert_int_eq(rv.chips, 0);
    ck_assert_int_eq(held_len(c, OLD_SLOT, 3), 4); /* two accounts and their moves' marks */
    mcluster_destroy(m2);
    rcluster_destroy(c2);
    /* the adopter's epoch is recovered before the credits: the moves are refused, refunded into
     * the old accounts, and the old epoch's next recovery returns them */
    recover_dead(m, c, NEW_SLOT, 7, &rv);
    xfer_sweep_stats_t ss;
    ck_assert_int_eq(xfer_sweep(mcluster_xfer(m), 0, &ss), 0);
    ck_assert_uint_ge(ss.refunded, 2);
    mcf_audit(m, 0);
    ck_assert_int_eq(mcluster_recover(m, mcf_service(), OLD_SLOT, 3, MONEY_RECOVER_DEAD, NULL, &rv),
                     0);
    ck_assert_int_eq(rv.chips, 700);
    ck_assert_int_eq(held_len(c, OLD_SLOT, 3), 0);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    ck_assert_int_eq(mcf_wallet(m, bob), 1000);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

START_TEST(test_an_offer_pending_when_its_epoch_is_recovered_is_void)
{
    MCF_NEED_CLUSTER();
    rcluster_t *c = mcf_client();
    mcluster_t *m = mcf_money(c);
    const char *alice = mcf_player("alice"), *bob = mcf_player("bob");
    open_epoch(c, m, OLD_SLOT, 3);
    open_epoch(c, m, NEW_SLOT, 7);
    mcf_seed(m, alice, 1000);
    mcf_seed(m, bob, 1000);
    table_t t;
    table_make(&t, 3, 0xd1, alice, bob);
    buy_in(m, OLD_SLOT, 3, t.accts[0], alice, 400);
    buy_in(m, OLD_SLOT, 3, t.accts[1], bob, 300);
    money_result_t r;
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_OK);
    /* the old server dies with its offer pending: the recovery returns the chips, the offer is
     * void, its mark forgotten, and an adoption afterwards moves nothing */
    money_recover_result_t rv;
    recover_dead(m, c, OLD_SLOT, 3, &rv);
    ck_assert_int_eq(rv.chips, 700);
    ck_assert_int_eq(held_len(c, OLD_SLOT, 3), 0);
    char id[MONEY_ID_MAX + 1];
    offer_id(&t, id, sizeof id);
    money_offer_info_t info;
    ck_assert_int_eq(mcluster_offer_read(m, id, &info), 0);
    ck_assert_str_eq(info.status, "void");
    free(info.state);
    int64_t st[2];
    ck_assert_int_eq(adopt(m, &t, NEW_SLOT, 7, 0xa1, st, &r), MONEY_ERR_OFFER_VOID);
    ck_assert_int_eq(held_len(c, NEW_SLOT, 7), 0);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    ck_assert_int_eq(mcf_wallet(m, bob), 1000);
    mcf_audit(m, 0);

    /* the claim itself checks the fence: an offer read "offered" but whose epoch began its
     * recovery (the KILL step ran, the void not yet) is refused too */
    open_epoch(c, m, OLD_SLOT, 5);
    table_make(&t, 5, 0xd2, alice, bob);
    buy_in(m, OLD_SLOT, 5, t.accts[0], alice, 100);
    buy_in(m, OLD_SLOT, 5, t.accts[1], bob, 100);
    ck_assert_int_eq(mcluster_offer(m, mcf_service(), &t.o, &r), MONEY_OK);
    char live[256];
    mcluster_key_epoch(mcf_service(), OLD_SLOT, 5, ":live", live, sizeof live);
    redisReply *rr = rcluster_command(c, RCLUSTER_RESEND, live, "SET %s dead", live);
    ck_assert(rr != NULL && rr->type != REDIS_REPLY_ERROR);
    freeReplyObject(rr);
    ck_assert_int_eq(adopt(m, &t, NEW_SLOT, 7, 0xa2, st, &r), MONEY_ERR_OFFER_VOID);
    ck_assert_int_eq(mcf_seat(m, OLD_SLOT, 5, t.accts[0]), 100);
    ck_assert_int_eq(held_len(c, NEW_SLOT, 7), 0);
    recover_dead(m, c, OLD_SLOT, 5, &rv);
    ck_assert_int_eq(rv.chips, 200);
    ck_assert_int_eq(mcf_wallet(m, alice), 1000);
    mcf_audit(m, 0);
    mcluster_destroy(m);
    rcluster_destroy(c);
}
END_TEST

int main(void)
{
    if (ts_cluster_skip("mcluster_handoff"))
        return 0;
    Suite *s = suite_create("mcluster_handoff");
    TCase *tc = tcase_create("handoff");
    tcase_set_timeout(tc, 90);
    tcase_add_unchecked_fixture(tc, mcf_setup, mcf_teardown);
    tcase_add_test(tc, test_a_table_moves_whole_to_another_epoch_once);
    tcase_add_test(tc, test_bad_adoptions_move_nothing);
    tcase_add_test(tc, test_two_adopters_racing_take_the_table_once);
    tcase_add_test(tc, test_an_adopter_killed_between_debit_and_credit_lands_once);
    tcase_add_test(tc, test_an_adopter_recovered_before_its_credits_sends_the_chips_home);
    tcase_add_test(tc,
                   test_a_move_in_flight_through_the_old_epochs_recovery_is_returned_by_the_next);
    tcase_add_test(tc, test_an_offer_pending_when_its_epoch_is_recovered_is_void);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
