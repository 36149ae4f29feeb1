/*
 * support -- helpers for integration tests: a real redis-server on loopback, child processes
 * with their logs, a tiny blocking HTTP/1.0 client, free ports.
 *
 * Everything here talks only to 127.0.0.1. Every start has a matching stop; tests assert that
 * nothing they started is left alive. Functions return 0 or a negative errno unless stated.
 */
#ifndef CROUPIER_TEST_SUPPORT_H
#define CROUPIER_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A port that was free on 127.0.0.1 a moment ago, picked at random below the kernel's ephemeral
 * range so that no outgoing connection can take it before the server binds it (support.c). */
int ts_free_port(void);

/* Path of a file in the build tree: $CROUPIER_BUILD/<rel>. Returns a static buffer. */
const char *ts_build_path(const char *rel);
/* Path of a file in the source tree: $CROUPIER_SOURCE/<rel>. Returns a static buffer. */
const char *ts_source_path(const char *rel);
/* A fresh private temporary directory (mkdtemp); caller frees the string. */
char *ts_tmpdir(void);
/* Removes a directory tree (rm -rf), or keeps it and says so when CROUPIER_KEEP_LOGS=1. NULL is a
 * no-op. */
void ts_rmtree(const char *dir);

typedef struct redisContext redisContext;
/* An integer from a command on c: an integer reply, or a string holding one; nil is 0. No reply
 * at all (the connection lost) aborts the test with a message on stderr. */
long long ts_rnum(redisContext *c, const char *fmt, ...);
/* A string from a command on c, or NULL (nil or another type); free it. No reply aborts. */
char *ts_rstr(redisContext *c, const char *fmt, ...);
/* Writes a tournament as croupier-ctl's `tour create` does (tournament/tour_director.h's keys:
 * the id from {croupier:tours}:seq, the meta hash with `name`, `structure`, `format` ("sng",
 * "mtt", "match"), status registering, `created_ms` and `start_at_ms`, the index sets) and
 * returns its id. Aborts the test when Redis refuses. */
uint64_t ts_tour_create(redisContext *c, const char *name, const char *format,
                        const char *structure, long long created_ms, long long start_at_ms);

typedef struct ts_redis ts_redis_t;
/* Starts redis-server on a free loopback port with no persistence and waits for PING.
 * Returns NULL (with a message on stderr) if it cannot start within 5 s. */
ts_redis_t *ts_redis_start(void);
int ts_redis_port(const ts_redis_t *r);
/* "127.0.0.1:PORT" */
const char *ts_redis_addr(const ts_redis_t *r);
/* SIGSTOP / SIGCONT the server (to simulate a hung Redis). */
void ts_redis_pause(ts_redis_t *r);
void ts_redis_resume(ts_redis_t *r);
/* Stops the server (SIGTERM + wait) and starts a new, empty one on the same port. */
int ts_redis_restart(ts_redis_t *r);
/* Starts an empty redis-server like ts_redis_start() that replicates 127.0.0.1:master_port
 * (--replicaof); master_port 0 is ts_redis_start(). */
ts_redis_t *ts_redis_start_replica(int master_port);
/* Waits until a replica's link to its master is up (first sync done); 0 or -ETIMEDOUT. */
int ts_redis_wait_synced(ts_redis_t *r, int timeout_ms);
/* SIGKILLs the server (a crash: no shutdown, no goodbye to clients), keeping the port. */
void ts_redis_crash(ts_redis_t *r);
/* ts_redis_cmd() towards any Redis protocol server on 127.0.0.1:port (e.g. a sentinel). */
char *ts_redis_cmd_port(int port, const char *fmt, ...);
/* Stops only the process, keeping the port so ts_redis_restart() can bring it back. */
void ts_redis_kill(ts_redis_t *r);
/* Runs one command with redis-cli-like argv and returns the reply as text (integers and
 * status as their text, nil as "(nil)", errors as "ERR ..."); caller frees. NULL on I/O error. */
char *ts_redis_cmd(ts_redis_t *r, const char *fmt, ...);
void ts_redis_stop(ts_redis_t *r);

/* A Redis Sentinel (`redis-server CONF --sentinel`) on a free loopback port monitoring master
 * at 127.0.0.1:master_port with the given quorum, down-after-milliseconds and failover-timeout;
 * its config file lives in a private temp dir. NULL (message on stderr) if it cannot start. */
typedef struct ts_sentinel ts_sentinel_t;
ts_sentinel_t *ts_sentinel_start(const char *master, int master_port, int quorum, int down_after_ms,
                                 int failover_timeout_ms);
int ts_sentinel_port(const ts_sentinel_t *s);
const char *ts_sentinel_log_path(const ts_sentinel_t *s);
/* SIGKILLs the sentinel and reaps it (its port stays unused). */
void ts_sentinel_crash(ts_sentinel_t *s);
/* Stops it (SIGTERM + wait) if still running and removes its directory. NULL is a no-op. */
void ts_sentinel_stop(ts_sentinel_t *s);

typedef struct ts_proc ts_proc_t;
/* Starts argv[0] (a path) with stdout and stderr appended to a log file in a temp dir. The child
 * is killed (SIGKILL) if the process that started it dies, so a failed test leaves nothing
 * running; its log directory is kept then, and named in the failure message where it matters.
 * extra_env: NULL-terminated "K=V" strings added to the environment, or NULL. */
ts_proc_t *ts_proc_spawn(char *const argv[], char *const extra_env[]);
pid_t ts_proc_pid(const ts_proc_t *p);
/* A process's scheduling so far, summed over its threads (the three fields of
 * /proc/PID/task/TID/schedstat): the time it ran and the time it waited runnable for a CPU, in
 * seconds (the scheduler's nanoseconds, not 10 ms ticks), and the time slices it was given;
 * threads is how many were read (0: none, e.g. a kernel without schedstat). For the benches. */
typedef struct {
    double run_s, wait_s, slices;
    int threads;
} ts_sched_t;
ts_sched_t ts_proc_sched(pid_t pid);
/* Moves every thread of pid (0: the calling thread) to cpu: sched_setaffinity acts on one
 * thread, and threads started later inherit the mask of the thread that starts them. 0 or -1. */
int ts_proc_pin(pid_t pid, int cpu);
const char *ts_proc_log_path(const ts_proc_t *p);
int ts_proc_signal(ts_proc_t *p, int sig);
/* Waits up to timeout_ms for the process to exit; returns 0 and the wait status in *status,
 * or -ETIMEDOUT. Reaps it. */
int ts_proc_wait(ts_proc_t *p, int timeout_ms, int *status);
bool ts_proc_alive(ts_proc_t *p);
/* Whether the log holds text (at the moment of the call). */
bool ts_proc_log_has(const ts_proc_t *p, const char *text);
/* Waits up to timeout_ms for text to appear in the log. Returns 0 or -ETIMEDOUT. */
int ts_proc_wait_log(const ts_proc_t *p, const char *text, int timeout_ms);
/* The whole log as a string (caller frees). */
char *ts_proc_log(const ts_proc_t *p);
/* Kills (SIGKILL) if still alive, reaps, removes the log dir unless CROUPIER_KEEP_LOGS=1. */
void ts_proc_free(ts_proc_t *p);

/* Blocking GET http://host:port/path, HTTP/1.0. Returns the status code (>0) and the body in
 * *body (caller frees; may pass NULL), or a negative errno on connect/read failure/timeout. */
int ts_http_get(const char *host, int port, const char *path, int timeout_ms, char **body);
/* Polls GET path until it returns want_status or timeout_ms passes; returns 0 or -ETIMEDOUT. */
int ts_http_wait_status(const char *host, int port, const char *path, int want_status,
                        int timeout_ms);

/* Milliseconds on the monotonic clock. */
long long ts_now_ms(void);
void ts_sleep_ms(int ms);

/* Spawns croupier-director against r (--redis, --director-id id, --health-listen on a free
 * loopback port, written to *health) with the extra arguments (NULL-terminated, may be NULL);
 * NULL if it could not be spawned. The caller waits for its /readyz. */
ts_proc_t *ts_director_spawn(ts_redis_t *r, const char *id, char *const extra[], int *health);

#endif
