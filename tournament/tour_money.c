/*
 * The director's money lane (tour_money.h): a FIFO of jobs under a mutex, one thread that runs
 * them with mtour over its own cluster client, a done list handed to the event_base through an
 * event made active from the thread.
 */
#include "tour_money.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "rcluster.h"

struct tour_money {
    tour_money_config_t cfg;
    char *cluster;
    struct event *done_ev;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tour_money_job_t *todo, **todo_tail; /* FIFO, under mu */
    tour_money_job_t *done, **done_tail; /* FIFO, under mu */
    bool stop;                           /* under mu */
    int pending;                         /* event_base thread only */
};

static void lane_push(tour_money_job_t ***tail, tour_money_job_t *j)
{
    j->_next = NULL;
    **tail = j;
    *tail = &j->_next;
}

static tour_money_job_t *lane_take_all(tour_money_job_t **head, tour_money_job_t ***tail)
{
    tour_money_job_t *all = *head;
    *head = NULL;
    *tail = head;
    return all;
}

/* One job, once, with mt (NULL: the client could not be made; the job says why). */
static void lane_run(mtour_t *mt, tour_money_job_t *j)
{
    memset(&j->res, 0, sizeof j->res);
    memset(&j->drive, 0, sizeof j->drive);
    j->swept = 0;
    switch (j->op) {
    case TOUR_MONEY_BUYIN:
        j->rc = mtour_buyin(mt, j->tour, j->epoch, j->req, j->player, j->amount, j->fee, &j->res);
        break;
    case TOUR_MONEY_PAYOUT:
        j->rc = mtour_payout(mt, j->tour, j->epoch, j->req, j->player, j->amount, &j->res);
        break;
    case TOUR_MONEY_REFUND_FEE:
        j->rc = mtour_refund_fee(mt, j->tour, j->epoch, j->req, j->player, j->amount, &j->res);
        break;
    case TOUR_MONEY_DRIVE:
        j->rc = mtour_drive(mt, j->tour, j->epoch, &j->drive);
        break;
    case TOUR_MONEY_CLOSE_INTAKE:
        j->rc = mtour_close_intake(mt, j->tour);
        break;
    case TOUR_MONEY_OVERLAY:
        j->rc = mtour_overlay(mt, j->tour, j->amount, &j->res);
        break;
    case TOUR_MONEY_FEES_SWEEP:
        j->rc = mtour_fees_sweep(mt, j->tour, &j->swept);
        break;
    default:
        j->rc = -EINVAL;
        snprintf(j->error, sizeof j->error, "unknown job %d", (int)j->op);
        return;
    }
    snprintf(j->error, sizeof j->error, "%s", j->rc == 0 ? "" : mtour_last_error(mt));
}

/*
 * The lane's thread: signals blocked (the process's are the event loop's), the cluster client
 * made lazily and dropped after a job that could not reach Redis (-EIO), so the next job maps
 * the cluster afresh.
 */
static void *lane_main(void *arg)
{
    tour_money_t *l = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    rcluster_t *rc = NULL;
    mtour_t *mt = NULL;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->stop && l->todo == NULL)
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->stop)
            break;
        tour_money_job_t *j = l->todo;
        l->todo = j->_next;
        if (l->todo == NULL)
            l->todo_tail = &l->todo;
        pthread_mutex_unlock(&l->mu);
        j->error[0] = '\0';
        if (mt == NULL) {
            char err[600] = "";
            rc = rcluster_create(l->cluster, &l->cfg.client, err, sizeof err);
            if (rc != NULL)
                mt = mtour_create(rc, &l->cfg.mtour);
            else
                snprintf(j->error, sizeof j->error, "the cluster: %.200s", err);
        }
        if (mt != NULL) {
            lane_run(mt, j);
            if (j->rc == -EIO) {
                mtour_destroy(mt);
                rcluster_destroy(rc);
                mt = NULL;
                rc = NULL;
            }
        } else {
            j->rc = -EIO;
        }
        pthread_mutex_lock(&l->mu);
        lane_push(&l->done_tail, j);
        event_active(l->done_ev, EV_READ, 0);
    }
    pthread_mutex_unlock(&l->mu);
    mtour_destroy(mt);
    rcluster_destroy(rc);
    return NULL;
}

/* Hands back the jobs of list, in order (on the event_base's thread). */
static void lane_hand_back(tour_money_t *l, tour_money_job_t *list)
{
    while (list != NULL) {
        tour_money_job_t *j = list;
        list = j->_next;
        j->_next = NULL;
        l->pending--;
        j->done(j, j->arg); /* may free j */
    }
}

static void lane_done_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tour_money_t *l = arg;
    pthread_mutex_lock(&l->mu);
    tour_money_job_t *list = lane_take_all(&l->done, &l->done_tail);
    pthread_mutex_unlock(&l->mu);
    lane_hand_back(l, list);
}

int tour_money_create(struct event_base *base, const tour_money_config_t *cfg, tour_money_t **out)
{
    *out = NULL;
    if (base == NULL || cfg == NULL || cfg->cluster == NULL || cfg->cluster[0] == '\0')
        return -EINVAL;
    tour_money_t *l = calloc(1, sizeof *l);
    if (l == NULL)
        return -ENOMEM;
    int err = -ENOMEM;
    l->cfg = *cfg;
    l->cluster = strdup(cfg->cluster);
    if (l->cluster == NULL)
        goto fail_cluster;
    l->cfg.cluster = l->cluster;
    l->todo_tail = &l->todo;
    l->done_tail = &l->done;
    l->done_ev = event_new(base, -1, 0, lane_done_cb, l);
    if (l->done_ev == NULL)
        goto fail_event;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    int e = pthread_create(&l->thread, NULL, lane_main, l);
    if (e != 0) {
        err = -e;
        goto fail_thread;
    }
    *out = l;
    return 0;
fail_thread:
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    event_free(l->done_ev);
fail_event:
    free(l->cluster);
fail_cluster:
    free(l);
    return err;
}

void tour_money_submit(tour_money_t *l, tour_money_job_t *job)
{
    job->rc = -ECANCELED;
    job->error[0] = '\0';
    l->pending++;
    pthread_mutex_lock(&l->mu);
    lane_push(&l->todo_tail, job);
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

int tour_money_pending(const tour_money_t *l)
{
    return l->pending;
}

void tour_money_destroy(tour_money_t *l)
{
    if (l == NULL)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thread, NULL);
    event_free(l->done_ev); /* no thread left to make it active */
    tour_money_job_t *done = lane_take_all(&l->done, &l->done_tail);
    tour_money_job_t *todo = lane_take_all(&l->todo, &l->todo_tail);
    for (tour_money_job_t *j = todo; j != NULL; j = j->_next) {
        j->rc = -ECANCELED;
        snprintf(j->error, sizeof j->error, "the money lane stopped");
    }
    lane_hand_back(l, done);
    lane_hand_back(l, todo);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l->cluster);
    free(l);
}
