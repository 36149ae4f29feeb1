/* money_jobs: see jobs.h. */
#include "jobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sentinel.h"
#include "xmalloc.h"

struct money_jobs {
    char *host;
    int port;
    char *sentinels, *master; /* NULL: host/port */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping;
    money_job_t *head, *tail; /* under mu */
    redisContext *c;          /* thread only */
};

static redisContext *jobs_conn(money_jobs_t *j)
{
    if (j->c != NULL && j->c->err == 0)
        return j->c;
    if (j->c != NULL)
        redisFree(j->c);
    char host[64], err[600];
    int port = 0;
    if (sentinel_connect_addr(j->host, j->port, j->sentinels, j->master, 500, host, sizeof host,
                              &port, err, sizeof err) != 0) {
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
        job->run(jobs_conn(j), job);
        job->done(job);
        pthread_mutex_lock(&j->mu);
    }
    pthread_mutex_unlock(&j->mu);
    if (j->c != NULL)
        redisFree(j->c);
    j->c = NULL;
    return NULL;
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
        free(j);
        return NULL;
    }
    return j;
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
    free(j);
}
