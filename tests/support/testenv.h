/*
 * testenv -- the common rig of the integration tests: a real redis-server on a free loopback
 * port, optionally a token secret file for gateways, and real croupier-game / croupier-gate
 * processes started against them and stopped again.
 *
 * Every server listens on two free loopback ports (its main listener and its health listener) and
 * counts as started only once GET /readyz on the health port answers 200 (within 10 s). A server
 * that does not get there (or exits first) is killed and its log is copied to stderr, so nothing is
 * left running and the reason is in the test's error log. Functions return 0 or a negative errno;
 * the test asserts on that (ck_assert_int_eq(testenv_start(...), 0)).
 *
 * Built on support.h (ts_redis_*, ts_proc_*, ts_http_*); everything talks only to 127.0.0.1.
 */
#ifndef CROUPIER_TEST_TESTENV_H
#define CROUPIER_TEST_TESTENV_H

#include "support.h"

/* One started croupier-game or croupier-gate. Owned by the caller (usually on the stack); its
 * process is owned by the rig until testenv_stop_server(). */
typedef struct testenv_server {
    ts_proc_t *proc; /* NULL when not running */
    int port;        /* croupier-game: the rpc listener (also advertised); gate: client listener */
    int health;      /* the health listener (/readyz, /drain, /metrics, ...) */
} testenv_server_t;

/* What a test runs against. Zeroed and filled by testenv_start(). */
typedef struct testenv {
    ts_redis_t *redis;
    char *secret_path;     /* the token secret file (testenv_start(e, secret)), or NULL */
    testenv_server_t game; /* the game server of tests that need just one; testenv_stop stops it */
} testenv_t;

/*
 * Starts an empty redis-server on a free loopback port (ts_redis_start) and, if secret is not
 * NULL, writes secret and a newline to a file in a fresh private temporary directory
 * (e->secret_path), the form croupier-gate --token-secret-file reads. Zeroes *e first.
 * Returns 0, -EIO if redis-server does not start within its 5 s, or a negative errno from the
 * file; on failure nothing is left behind and *e stays zeroed. Undo with testenv_stop().
 */
int testenv_start(testenv_t *e, const char *secret);

/*
 * Starts $CROUPIER_BUILD/engine/process/croupier-game into *s:
 *   --engine ENGINE --listen 127.0.0.1:PORT --advertise 127.0.0.1:PORT
 *   --health-listen 127.0.0.1:HEALTH --redis <e's redis> --lease-ttl-ms 900
 *   --drain-max-seconds DRAIN_MAX_S  [args...]
 * with the NULL-terminated "K=V" strings of env (or NULL) added to its environment, and waits up
 * to 10 s for /readyz 200. args: NULL-terminated extra flags appended as they are, or NULL; the
 * strings are only read during the call. Zeroes *s first.
 * Returns 0; -ETIMEDOUT if it was not ready within 10 s, -ESRCH if it exited before (a refused
 * flag, say), in both cases with its log copied to stderr; -EIO if it could not be spawned; -E2BIG
 * for too many args; or a negative errno for want of a free port. On failure *s stays zeroed and
 * nothing is left running. Stop with testenv_stop_server().
 */
int testenv_start_game(testenv_t *e, testenv_server_t *s, const char *engine, int drain_max_s,
                       char *const args[], char *const env[]);

/*
 * Starts $CROUPIER_BUILD/gateway/croupier-gate into *s:
 *   --listen 127.0.0.1:PORT --health-listen 127.0.0.1:HEALTH --redis <e's redis>
 *   --token-secret-file <e->secret_path> --gate-id GATE_ID  [args...]
 * and waits up to 10 s for /readyz 200. e must have been started with a secret. args as for
 * testenv_start_game(). Zeroes *s first.
 * Returns 0, -EINVAL without a secret file, otherwise as testenv_start_game().
 */
int testenv_start_gate(testenv_t *e, testenv_server_t *s, const char *gate_id, char *const args[]);

/*
 * Starts $CROUPIER_BUILD/tournament/croupier-director into *s:
 *   --health-listen 127.0.0.1:HEALTH --redis <e's redis> --director-id DIRECTOR_ID  [args...]
 * and waits up to 10 s for /readyz 200 (s->port is picked but unused). Returns as
 * testenv_start_game().
 */
int testenv_start_director(testenv_t *e, testenv_server_t *s, const char *director_id,
                           char *const args[]);

/*
 * Stops a server the way the tests always have: SIGTERM twice (the second one asks a draining
 * server to hurry), up to 10 s for it to exit, then ts_proc_free (SIGKILL if still alive, reap,
 * remove the log). No-op when s->proc is NULL (never started, or already freed by the test);
 * leaves s->proc NULL.
 */
void testenv_stop_server(testenv_server_t *s);

/*
 * Stops e->game (testenv_stop_server), stops redis-server and removes the secret file and its
 * directory. Servers the test started into its own testenv_server_t must be stopped by the test.
 * Safe on a zeroed or already stopped *e; leaves it zeroed.
 */
void testenv_stop(testenv_t *e);

/*
 * The "human_desks" count of a croupier-game's GET /drain/status (the desks that hold a drain
 * back: a human seated in a round). Returns it, or -1 when the server does not answer 200 within
 * 5 s or the field is missing.
 */
long testenv_human_desks(const testenv_server_t *s);

/*
 * The value of one series of a server's GET /metrics, named with its labels as the exposition
 * writes them (e.g. `gate_goaways_total{reason="rebalance"}`), or -1 when the server does not
 * answer 200 within 2 s or the series is missing.
 */
long testenv_metric(const testenv_server_t *s, const char *series);

#endif
