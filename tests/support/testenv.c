#include "testenv.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long a server may take to answer /readyz 200, and to exit after testenv_stop_server's
 * SIGTERMs. */
#define TESTENV_READY_MS 10000
#define TESTENV_STOP_MS 10000

/* Room for the fixed flags of either binary plus the caller's args. */
#define TESTENV_MAX_ARGS 64

int testenv_start(testenv_t *e, const char *secret)
{
    int rc;
    memset(e, 0, sizeof *e);
    e->redis = ts_redis_start();
    if (e->redis == NULL)
        return -EIO;
    if (secret == NULL)
        return 0;
    char *dir = ts_tmpdir();
    if (dir == NULL) {
        rc = -errno;
        goto fail_dir;
    }
    if (asprintf(&e->secret_path, "%s/secret", dir) < 0) {
        e->secret_path = NULL;
        rc = -ENOMEM;
        goto fail_path;
    }
    FILE *f = fopen(e->secret_path, "w");
    if (f == NULL) {
        rc = -errno;
        goto fail_file;
    }
    bool written = fprintf(f, "%s\n", secret) >= 0;
    if (fclose(f) != 0 || !written) {
        rc = -EIO;
        goto fail_write;
    }
    free(dir);
    return 0;
fail_write:
    unlink(e->secret_path);
fail_file:
    free(e->secret_path);
fail_path:
    rmdir(dir);
    free(dir);
fail_dir:
    ts_redis_stop(e->redis);
    memset(e, 0, sizeof *e);
    return rc;
}

/* Zeroes *s and gives it two free loopback ports, formatted as "127.0.0.1:PORT" into listen and
 * health (64 bytes each). Returns 0 or the negative errno of ts_free_port. */
static int testenv_pick_ports(testenv_server_t *s, char *listen, char *health)
{
    memset(s, 0, sizeof *s);
    int port = ts_free_port();
    if (port < 0)
        return port;
    int hport = ts_free_port();
    for (int i = 0; i < 8 && hport == port; i++)
        hport = ts_free_port();
    if (hport < 0)
        return hport;
    s->port = port;
    s->health = hport;
    snprintf(listen, 64, "127.0.0.1:%d", port);
    snprintf(health, 64, "127.0.0.1:%d", hport);
    return 0;
}

/* Port picks a server that lost its port to a parallel test gets (testenv_launch). */
#define TESTENV_PORT_TRIES 3

/*
 * Appends the NULL-terminated args (or none) to argv, whose first n entries the caller filled
 * around the ports in listen and health (testenv_pick_ports' buffers, which argv points into),
 * spawns it with env added to its environment and waits up to TESTENV_READY_MS for /readyz 200
 * on s->health. A server that exits at once because another test bound one of its ports in the
 * moment between the pick and its bind (listen_failed, "Address already in use") is started
 * again on new ports, up to TESTENV_PORT_TRIES times. what names the binary in messages. argv
 * must have room for TESTENV_MAX_ARGS entries. Returns 0 with s->proc set; -E2BIG if args do not
 * fit; -EIO if the spawn fails; -ESRCH if it exited before it became ready, -ETIMEDOUT if it was
 * not ready in time (both after copying its log to stderr and killing it). On failure *s is
 * zeroed.
 */
static int testenv_launch(testenv_server_t *s, const char *what, char **argv, int n,
                          char *const args[], char *const env[], char *listen, char *health)
{
    for (int i = 0; args != NULL && args[i] != NULL; i++) {
        if (n >= TESTENV_MAX_ARGS - 1) {
            fprintf(stderr, "# too many flags for %s\n", what);
            memset(s, 0, sizeof *s);
            return -E2BIG;
        }
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    for (int attempt = 1;; attempt++) {
        s->proc = ts_proc_spawn(argv, env);
        if (s->proc == NULL) {
            fprintf(stderr, "# could not spawn %s\n", argv[0]);
            memset(s, 0, sizeof *s);
            return -EIO;
        }
        /* Polls in short slices so that a server which exits at once (a refused flag) is
         * reported then, not after the whole wait. */
        long long end = ts_now_ms() + TESTENV_READY_MS;
        int rc = -ETIMEDOUT;
        while (ts_now_ms() < end) {
            if (!ts_proc_alive(s->proc)) {
                rc = -ESRCH;
                break;
            }
            if (ts_http_wait_status("127.0.0.1", s->health, "/readyz", 200, 100) == 0)
                return 0;
        }
        char *log = ts_proc_log(s->proc);
        bool port_taken =
            rc == -ESRCH && log != NULL && strstr(log, "Address already in use") != NULL;
        if (port_taken && attempt < TESTENV_PORT_TRIES) {
            fprintf(stderr, "# %s could not bind %s or %s (taken by another test): new ports\n",
                    what, listen, health);
            free(log);
            ts_proc_free(s->proc);
            int prc = testenv_pick_ports(s, listen, health);
            if (prc != 0)
                return prc;
            continue;
        }
        fprintf(stderr, "# %s %s; its log (%s):\n%s\n", what,
                rc == -ESRCH ? "exited before it became ready" : "was not ready within 10 s",
                ts_proc_log_path(s->proc), log != NULL ? log : "(unreadable)");
        free(log);
        ts_proc_free(s->proc);
        memset(s, 0, sizeof *s);
        return rc;
    }
}

int testenv_start_game(testenv_t *e, testenv_server_t *s, const char *engine, int drain_max_s,
                       char *const args[], char *const env[])
{
    char listen[64], health[64], drain[16];
    int rc = testenv_pick_ports(s, listen, health);
    if (rc != 0)
        return rc;
    snprintf(drain, sizeof drain, "%d", drain_max_s);
    char *argv[TESTENV_MAX_ARGS];
    int n = 0;
    argv[n++] = (char *)ts_build_path("engine/process/croupier-game");
    argv[n++] = "--engine";
    argv[n++] = (char *)engine;
    argv[n++] = "--listen";
    argv[n++] = listen;
    argv[n++] = "--advertise";
    argv[n++] = listen;
    argv[n++] = "--health-listen";
    argv[n++] = health;
    argv[n++] = "--redis";
    argv[n++] = (char *)ts_redis_addr(e->redis);
    argv[n++] = "--lease-ttl-ms";
    argv[n++] = "900";
    argv[n++] = "--drain-max-seconds";
    argv[n++] = drain;
    return testenv_launch(s, "croupier-game", argv, n, args, env, listen, health);
}

int testenv_start_gate(testenv_t *e, testenv_server_t *s, const char *gate_id, char *const args[])
{
    char listen[64], health[64];
    if (e->secret_path == NULL) {
        memset(s, 0, sizeof *s);
        return -EINVAL;
    }
    int rc = testenv_pick_ports(s, listen, health);
    if (rc != 0)
        return rc;
    char *argv[TESTENV_MAX_ARGS];
    int n = 0;
    argv[n++] = (char *)ts_build_path("gateway/croupier-gate");
    argv[n++] = "--listen";
    argv[n++] = listen;
    argv[n++] = "--health-listen";
    argv[n++] = health;
    argv[n++] = "--redis";
    argv[n++] = (char *)ts_redis_addr(e->redis);
    argv[n++] = "--token-secret-file";
    argv[n++] = e->secret_path;
    argv[n++] = "--gate-id";
    argv[n++] = (char *)gate_id;
    return testenv_launch(s, "croupier-gate", argv, n, args, NULL, listen, health);
}

int testenv_start_director(testenv_t *e, testenv_server_t *s, const char *director_id,
                           char *const args[])
{
    char listen[64], health[64]; /* listen: unused, the director has only its health port */
    int rc = testenv_pick_ports(s, listen, health);
    if (rc != 0)
        return rc;
    char *argv[TESTENV_MAX_ARGS];
    int n = 0;
    argv[n++] = (char *)ts_build_path("tournament/croupier-director");
    argv[n++] = "--health-listen";
    argv[n++] = health;
    argv[n++] = "--redis";
    argv[n++] = (char *)ts_redis_addr(e->redis);
    argv[n++] = "--director-id";
    argv[n++] = (char *)director_id;
    return testenv_launch(s, "croupier-director", argv, n, args, NULL, listen, health);
}

void testenv_stop_server(testenv_server_t *s)
{
    if (s->proc == NULL)
        return;
    /* The second SIGTERM skips the drain's wait. Sent right behind the first it would merge with
     * it (a signal already pending is not queued twice) and the exit would wait for the rounds
     * and moves under way: so it goes once the process has logged the first. */
    ts_proc_signal(s->proc, SIGTERM);
    for (int i = 0;
         i < 200 && ts_proc_alive(s->proc) && !ts_proc_log_has(s->proc, "\"event\":\"signal\"");
         i++)
        ts_sleep_ms(10);
    ts_proc_signal(s->proc, SIGTERM);
    ts_proc_wait(s->proc, TESTENV_STOP_MS, NULL);
    ts_proc_free(s->proc);
    s->proc = NULL;
}

void testenv_stop(testenv_t *e)
{
    testenv_stop_server(&e->game);
    ts_redis_stop(e->redis);
    if (e->secret_path != NULL) {
        unlink(e->secret_path);
        char *slash = strrchr(e->secret_path, '/');
        if (slash != NULL) {
            *slash = '\0';
            rmdir(e->secret_path);
        }
        free(e->secret_path);
    }
    memset(e, 0, sizeof *e);
}

long testenv_human_desks(const testenv_server_t *s)
{
    char *body = NULL;
    int status = ts_http_get("127.0.0.1", s->health, "/drain/status", 5000, &body);
    const char *at = body != NULL ? strstr(body, "\"human_desks\":") : NULL;
    long v = status == 200 && at != NULL ? strtol(at + strlen("\"human_desks\":"), NULL, 10) : -1;
    free(body);
    return v < 0 ? -1 : v;
}

long testenv_metric(const testenv_server_t *s, const char *series)
{
    char *body = NULL;
    int status = ts_http_get("127.0.0.1", s->health, "/metrics", 2000, &body);
    char want[256];
    snprintf(want, sizeof want, "\n%s ", series);
    const char *at = status == 200 && body != NULL ? strstr(body, want) : NULL;
    long v = at != NULL ? strtol(at + strlen(want), NULL, 10) : -1;
    free(body);
    return v;
}
