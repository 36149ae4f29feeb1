/* money_jobs: see jobs.h. */
#include "jobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "money.h"
#include "rcluster.h"
#include "sentinel.h"
#include "xmalloc.h"

struct money_jobs {
    char *host;
    int port;
    char *sentinels, *master; /* NULL: host/port */
    char *cluster;            /* seeds of a Redis Cluster (money_jobs_set_cluster) */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping;
    int min_replicas, wait_ms;
    bool behind; /* thread only: the last durable job reached fewer than every replica */
    money_job_t *head, *tail; /* under mu */
    redisContext *c;          /* thread only */
};

static redisContext *jobs_conn(money_jobs_t *j)
{
    if (j->c != NULL && j->c->err == 0)
        return j->c;
    if (j->c != NULL)
        redisFree(j->c);
    j->c = NULL; /* a failed connect below must not leave the freed context to the next call */
    char host[64], err[600];
    int port = 0;
    if (j->cluster != NULL
            ? rcluster_master_addr(j->cluster, MONEY_HELD_INDEX_KEY, 500, host, sizeof host, &port,
                                   err, sizeof err) != 0
            : sentinel_connect_addr(j->host, j->port, j->sentinels, j->master, 500, host,
                                    sizeof host, &port, err, sizeof err) != 0) {
        log_emit(LOG_WARN, "money_jobs_connect_failed", "{s:s}", "error", err);
        return NULL;
    }
    struct timeval tv = {1, 0};
    j->c = redisConnectWithTimeout(host, port, tv);
    if (j->c == NULL || j->c->err != 0) {
        log_emit(LOG_WARN, "money_jobs_connect_failed", "{s:s}", "error",
                 j->c != NULL ? j->c->errstr : "out of memory");
        if (j->c != NULL)
            redisFree(j->c);
        j->c = NULL;
        return NULL;
    }
    struct timeval rt = {2, 0};
    redisSetTimeout(j->c, rt);
    return j->c;
}

/* Whether the writes of the job just run on c reached every connected replica, or at least
 * min_replicas of them within wait_ms (money_sync_wait_replicas). */
static bool jobs_durable(money_jobs_t *j, redisContext *c, char *why, size_t len)
{
    money_wait_result_t w;
    if (money_sync_wait_replicas(c, j->min_replicas, j->wait_ms, &w) == 0) {
        bool behind = w.got < w.want;
        if (behind != j->behind)
            log_emit(behind ? LOG_WARN : LOG_INFO,
                     behind ? "money_jobs_replicas_behind" : "money_jobs_replicas_caught_up",
                     "{s:i,s:i,s:i}", "acknowledged", w.got, "waited_for", w.want, "min_replicas",
                     j->min_replicas);
        j->behind = behind;
        return true;
    }
    snprintf(why, len, "%s", w.error);
    return false;
}

/*
 * Runs job until its writes are durable (Durability in jobs.h): run, WAIT; short of replicas,
 * run it again after a pause (it is idempotent) until 10 x wait_ms have passed, then make it
 * report -EIO with run(NULL, job).
 */
static void jobs_run(money_jobs_t *j, money_job_t *job)
{
    redisContext *c = jobs_conn(j);
    job->run(c, job);
    if (j->min_replicas <= 0 || c == NULL)
        return;
    int64_t deadline = clock_mono_ms() + 10 * (int64_t)j->wait_ms;
    char why[200] = "";
    int pause_ms = 50;
    while (c == NULL || c->err != 0 || !jobs_durable(j, c, why, sizeof why)) {
        if (clock_mono_ms() >= deadline) {
            log_emit(LOG_ERROR, "money_jobs_not_durable", "{s:s,s:i,s:s}", "reason", why,
                     "min_replicas", j->min_replicas, "msg",
                     "a table handoff could not be made durable: reported as Redis unreachable");
            job->run(NULL, job);
            return;
        }
        /* connect again (through the sentinels): the node may have been demoted meanwhile */
        if (j->c != NULL)
            redisFree(j->c);
        j->c = NULL;
        struct timespec ts = {0, pause_ms * 1000000L};
        nanosleep(&ts, NULL);
        pause_ms = pause_ms * 2 > 400 ? 400 : pause_ms * 2;
        c = jobs_conn(j);
        if (c != NULL)
            job->run(c, job); /* again, under the same ids: applied once */
    }
}

static void *jobs_main(void *arg)
{
    money_jobs_t *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (j->head == NULL && !j->stopping)
            pthread_cond_wait(&j->cv, &j->mu);
        money_job_t *job = j->head;
        if (job == NULL)
            break; /* stopping, and nothing left */
        j->head = job->_next;
        if (j->head == NULL)
            j->tail = NULL;
        pthread_mutex_unlock(&j->mu);
        jobs_run(j, job);
        job->done(job);
        pthread_mutex_lock(&j->mu);
    }
    pthread_mutex_unlock(&j->mu);
    if (j->c != NULL)
        redisFree(j->c);
    j->c = NULL;
    return NULL;
}

void money_jobs_set_cluster(money_jobs_t *j, const char *seeds)
{
    if (j == NULL)
        return;
    free(j->cluster);
    j->cluster = seeds != NULL ? xstrdup(seeds) : NULL;
}

money_jobs_t *money_jobs_create(const char *redis_host, int redis_port)
{
    return money_jobs_create_sentinel(redis_host, redis_port, NULL, NULL);
}

money_jobs_t *money_jobs_create_sentinel(const char *redis_host, int redis_port,
                                         const char *sentinels, const char *master)
{
    if (redis_host == NULL || redis_port <= 0 || redis_port > 65535) {
        log_emit(LOG_ERROR, "money_jobs_bad_config", "{s:s}", "error",
                 "needs a Redis host and port");
        return NULL;
    }
    money_jobs_t *j = xcalloc(1, sizeof *j);
    j->host = xstrdup(redis_host);
    j->port = redis_port;
    j->sentinels = sentinels != NULL ? xstrdup(sentinels) : NULL;
    j->master = sentinels != NULL && master != NULL ? xstrdup(master) : NULL;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    if (pthread_create(&j->thread, NULL, jobs_main, j) != 0) {
        log_emit(LOG_ERROR, "money_jobs_thread_failed", "{s:s}", "error", strerror(errno));
        pthread_cond_destroy(&j->cv);
        pthread_mutex_destroy(&j->mu);
        free(j->host);
        free(j->sentinels);
        free(j->master);
        free(j->cluster);
        free(j);
        return NULL;
    }
    return j;
}

void money_jobs_set_min_replicas(money_jobs_t *j, int min_replicas, int wait_ms)
{
    if (j == NULL)
        return;
    j->min_replicas = min_replicas > 0 ? min_replicas : 0;
    j->wait_ms = wait_ms > 0 ? wait_ms : 500;
}

int money_jobs_submit(money_jobs_t *j, money_job_t *job)
{
    pthread_mutex_lock(&j->mu);
    if (j->stopping) {
        pthread_mutex_unlock(&j->mu);
        return -ESHUTDOWN;
    }
    job->_next = NULL;
    if (j->tail != NULL)
        j->tail->_next = job;
    else
        j->head = job;
    j->tail = job;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return 0;
}

void money_jobs_destroy(money_jobs_t *j)
{
    if (j == NULL)
        return;
    pthread_mutex_lock(&j->mu);
    j->stopping = true;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->thread, NULL);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
    free(j->host);
    free(j->sentinels);
    free(j->master);
    free(j->cluster);
    free(j);
}
