/*
 * tour_money -- the director's money lane for the tournaments by entity (docs/tournaments.md
 * "Tournaments by entity", issue 34): money/mtour.h's blocking calls (a buy-in's reserve,
 * transfer and booking, payouts, the drive of a tournament's paying set, the intake's close, the
 * overlay, the fees' sweep) run on a thread of its own, over a cluster client of its own, off the
 * director's event loop, as the game server's writer lane does for seat transfers
 * (money/money_writer_lane.c).
 *
 * The caller (on the event_base's thread) fills a job and submits it; the lane runs the jobs one
 * at a time in the order submitted, each call once (no retry: -EAGAIN and -EIO come back to the
 * caller, which decides when to send the same job again: every mtour call is idempotent by its
 * ids), and hands each job back by calling its done callback on the event_base's thread.
 *
 * Ownership: a job is the caller's memory; the lane holds it from tour_money_submit() until its
 * done callback returns, and never touches it after (the callback may free it).
 *
 * Threads: tour_money_create/submit/destroy on the event_base's thread only; the base must be
 * thread-aware (evthread_use_pthreads() before event_base_new()).
 */
#ifndef CROUPIER_TOUR_MONEY_H
#define CROUPIER_TOUR_MONEY_H

#include <stdbool.h>

#include "mtour.h"

struct event_base;

typedef enum {
    TOUR_MONEY_BUYIN,        /* mtour_buyin(tour, epoch, req, player, amount, fee) */
    TOUR_MONEY_PAYOUT,       /* mtour_payout(tour, epoch, req = op id, player, amount) */
    TOUR_MONEY_REFUND_FEE,   /* mtour_refund_fee(tour, epoch, req = op id, player, amount) */
    TOUR_MONEY_DRIVE,        /* mtour_drive(tour, epoch): out drive */
    TOUR_MONEY_CLOSE_INTAKE, /* mtour_close_intake(tour) */
    TOUR_MONEY_OVERLAY,      /* mtour_overlay(tour, amount) */
    TOUR_MONEY_FEES_SWEEP,   /* mtour_fees_sweep(tour): out swept */
} tour_money_op_t;

typedef struct tour_money_job tour_money_job_t;
typedef void (*tour_money_done_cb)(tour_money_job_t *job, void *arg);

struct tour_money_job {
    /* in */
    tour_money_op_t op;
    char tour[24];   /* the tournament's decimal id */
    long long epoch; /* the fence the caller holds */
    char req[96];    /* a buy-in's request id; a payout's op id (unreg.<req>, prize.<player>) */
    char player[24];
    long long amount; /* buy-in, payout, overlay */
    long long fee;    /* a buy-in's fee */
    tour_money_done_cb done;
    void *arg;
    /* out, valid in done */
    int rc;             /* the mtour call's return; -ECANCELED: not run (the lane stopped) */
    mtour_result_t res; /* buy-in, payout, refund, overlay */
    mtour_drive_stats_t drive;
    long long swept;
    char error[256]; /* mtour_last_error() or why the client could not be made; "" */
    /* private */
    tour_money_job_t *_next;
};

typedef struct tour_money tour_money_t;

typedef struct {
    const char *cluster;    /* IP:PORT,... (copied) */
    mtour_opts_t mtour;     /* the transfers' options (wait_replicas, ...) */
    rcluster_opts_t client; /* the lane's cluster client */
} tour_money_config_t;

/*
 * Starts the lane's thread on base (its cluster client is made at the first job, and made again
 * after a job that could not reach the cluster). 0, -EINVAL (no cluster), -ENOMEM, or the
 * negated error of pthread_create.
 */
int tour_money_create(struct event_base *base, const tour_money_config_t *cfg, tour_money_t **out);

/* Queues job (its in fields set, done non-NULL); done is called later, never from here. */
void tour_money_submit(tour_money_t *lane, tour_money_job_t *job);

/* Jobs submitted and not yet handed back. */
int tour_money_pending(const tour_money_t *lane);

/*
 * Stops the thread once the call in progress returns, hands back the jobs done (their results)
 * and those never run (rc -ECANCELED) by calling their done callbacks from here, and frees the
 * lane. NULL is a no-op.
 */
void tour_money_destroy(tour_money_t *lane);

#endif
