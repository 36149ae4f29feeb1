/*
 * The money writer's seat lane (money/money_writer_int.h): with the money by entity
 * (money_set_entity, docs/queues.md "The game server's money by entity"), a seat transfer is a
 * transfer between slots (money/mcluster.h, blocking calls), run on a thread of its own, one at a
 * time, as a barrier in the writer's FIFO.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "mcluster.h"
#include "money_writer_int.h"
#include "rcluster.h"
#include "xfer.h"

/* The lane's result, on the writer thread: the item completes, the FIFO moves on. */
void writer_lane_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    money_writer_t *w = arg;
    pthread_mutex_lock(&w->lane_mu);
    money_item_t *it = w->lane_done ? w->lane_item : NULL;
    money_result_t r = w->lane_res;
    if (it != NULL) {
        w->lane_item = NULL;
        w->lane_done = false;
    }
    pthread_mutex_unlock(&w->lane_mu);
    if (it == NULL)
        return;
    metrics_observe(w->m_latency, (double)(clock_mono_ns() - it->sent_ns) / 1e9);
    w->lane_busy = false;
    writer_complete(w, it, &r);
    writer_pump(w);
}

/*
 * The seat lane's thread: a blocking cluster client of its own; each item is sent until it has
 * a final answer (-EAGAIN, "in flight", and -EIO are sent again under the same op id after a
 * backoff, as the writer resends what Redis refuses for a while), or until the writer stops
 * (-ECANCELED: a transfer left in flight is then the xfer sweeper's).
 */
void *writer_lane_main(void *arg)
{
    money_writer_t *w = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    rcluster_t *rc = NULL;
    mcluster_t *m = NULL;
    pthread_mutex_lock(&w->lane_mu);
    for (;;) {
        while (!w->lane_stop && (w->lane_item == NULL || w->lane_done))
            pthread_cond_wait(&w->lane_cv, &w->lane_mu);
        if (w->lane_stop)
            break;
        money_item_t *it = w->lane_item;
        pthread_mutex_unlock(&w->lane_mu);
        money_result_t r;
        memset(&r, 0, sizeof r);
        int backoff = w->cfg.backoff_min_ms;
        for (;;) {
            if (m == NULL) {
                char err[600];
                rcluster_opts_t o = {.connect_timeout_ms = w->cfg.connect_timeout_ms,
                                     .command_timeout_ms = w->cfg.request_timeout_ms};
                rc = rcluster_create(w->cluster, &o, err, sizeof err);
                mcluster_opts_t mo = {.xfer = {.wait_replicas = w->cfg.min_replicas,
                                               .wait_timeout_ms = w->cfg.wait_timeout_ms}};
                if (rc != NULL)
                    m = mcluster_create(rc, &mo);
                else
                    snprintf(r.error, sizeof r.error, "%.190s", err);
                r.status = -EAGAIN;
            }
            if (m != NULL && it->kind == MONEY_KIND_CASHOUT) {
                /* the house's funding: money created in the wallet, once per op id */
                char key[MONEY_NAME_MAX + 16];
                mcluster_key_wallet(it->seat_owner, key, sizeof key);
                memset(&r, 0, sizeof r);
                int x = xfer_seed(mcluster_xfer(m), key, it->amount, it->id);
                r.status = x == 0 ? MONEY_OK : x == -EIO ? -EIO : MONEY_ERR_BAD_ARGS;
                if (x != 0)
                    snprintf(r.error, sizeof r.error, "%.190s", xfer_last_error(mcluster_xfer(m)));
            } else if (m != NULL) {
                mcluster_seat(m, w->service, it->kind, &it->seat, it->amount, it->id, &r);
            }
            if (r.status != -EAGAIN && r.status != -EIO)
                break;
            log_emit(LOG_WARN, "money_seat_in_flight", "{s:s,s:i,s:s}", "id", it->id, "status",
                     r.status, "error", r.error);
            pthread_mutex_lock(&w->lane_mu);
            bool stop = w->lane_stop;
            if (!stop) {
                struct timespec until;
                clock_gettime(CLOCK_MONOTONIC, &until);
                until.tv_sec += backoff / 1000;
                until.tv_nsec += (long)(backoff % 1000) * 1000000;
                if (until.tv_nsec >= 1000000000) {
                    until.tv_sec++;
                    until.tv_nsec -= 1000000000;
                }
                pthread_cond_timedwait(&w->lane_cv, &w->lane_mu, &until);
                stop = w->lane_stop;
            }
            pthread_mutex_unlock(&w->lane_mu);
            if (stop) {
                r.status = -ECANCELED;
                snprintf(r.error, sizeof r.error,
                         "money writer destroyed with the seat transfer in flight (the xfer "
                         "sweeper ends it)");
                break;
            }
            backoff = backoff * 2 > w->cfg.backoff_max_ms ? w->cfg.backoff_max_ms : backoff * 2;
        }
        pthread_mutex_lock(&w->lane_mu);
        w->lane_res = r;
        w->lane_done = true;
        if (w->lane_ev != NULL)
            event_active(w->lane_ev, EV_READ, 0);
    }
    pthread_mutex_unlock(&w->lane_mu);
    mcluster_destroy(m);
    rcluster_destroy(rc);
    return NULL;
}

void writer_lane_stop(money_writer_t *w)
{
    pthread_mutex_lock(&w->lane_mu);
    w->lane_stop = true;
    pthread_cond_signal(&w->lane_cv);
    pthread_mutex_unlock(&w->lane_mu);
    pthread_join(w->lane_thread, NULL);
}
