/*
 * money_jobs -- a thread with a blocking Redis connection for the money calls that are not
 * the writer's steady stream: a table handoff's offer, read, adoption and withdrawal
 * (money.h "Table handoff", docs/queues.md "Whole-table moves").
 *
 * A desk submits a job (any thread); the thread runs job->run(c, job) with its connection (or
 * c NULL when Redis cannot be reached: the job reports -EIO itself), then job->done(job), which
 * must not block: it posts the outcome to the desk and frees the job. Jobs run one at a time in
 * submission order. The connection has a 1 s connect and a 2 s request timeout; a broken one
 * is dropped and made again for the next job.
 *
 * Ordering with the writer: the two use different connections, so a job must only be
 * submitted once every writer item it depends on has been answered (the table kit offers a
 * table only after its last settlement and cash-outs were applied).
 *
 * Durability (money_jobs_set_min_replicas, docs/deploy.md "Failover and durability"): after
 * run() the thread waits on the same connection for every replica the master has connected
 * (ROLE, then `WAIT all wait_ms`: no replay journal covers these writes, so whichever replica is
 * promoted must hold them), and done() is called once they all acknowledged, or at least
 * min_replicas did within wait_ms (a replica lagging further: money_jobs_replicas_behind, once
 * per change). When it falls short (or the connection broke)
 * the job is run again after a pause -- every handoff operation is idempotent (money.h answers
 * "replayed") -- for at most 10 x wait_ms; after that run(NULL, job) makes the job report -EIO,
 * as when Redis cannot be reached (logged as money_jobs_not_durable).
 *
 * Shutdown: money_jobs_destroy() runs the jobs still queued (so every done() is called) and
 * joins the thread.
 */
#ifndef CROUPIER_MONEY_JOBS_H
#define CROUPIER_MONEY_JOBS_H

#include <hiredis/hiredis.h>

typedef struct money_jobs money_jobs_t;

typedef struct money_job money_job_t;
struct money_job {
    void (*run)(redisContext *c, money_job_t *job); /* c NULL: no connection */
    void (*done)(money_job_t *job);                 /* then: post the outcome, free the job */
    money_job_t *_next;                             /* private */
};

/* Starts the thread (host: an IP literal). NULL on bad arguments (logged). */
money_jobs_t *money_jobs_create(const char *redis_host, int redis_port);
/* The same, but with sentinels ("IP:PORT,...", with master; NULL = use host) every connect
 * resolves the master through Redis Sentinel first (common/sentinel.h). */
money_jobs_t *money_jobs_create_sentinel(const char *redis_host, int redis_port,
                                         const char *sentinels, const char *master);
/* Every connect goes to the master of the money slot of the Redis Cluster whose seeds these
 * are ("IP:PORT,..."; rcluster_master_addr), instead of host or sentinels; before the first
 * submit. NULL is a no-op. */
void money_jobs_set_cluster(money_jobs_t *j, const char *seeds);
/* Sets the durability above before the first submit (0 replicas: no WAIT, the default; wait_ms
 * <= 0: 500). NULL is a no-op. */
void money_jobs_set_min_replicas(money_jobs_t *j, int min_replicas, int wait_ms);
/* Queues job; 0, or -ESHUTDOWN once destroy began (the job is not run). Any thread. */
int money_jobs_submit(money_jobs_t *j, money_job_t *job);
/* Runs what is queued, stops the thread, frees. NULL is a no-op. */
void money_jobs_destroy(money_jobs_t *j);

#endif
