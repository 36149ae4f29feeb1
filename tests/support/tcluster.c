#include "tcluster.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hiredis/hiredis.h>

#include "support.h"

#define TS_CLUSTER_MAX 12
/* The first slot of master m of n (the slots split evenly, as redis-cli does). */
#define TS_SPLIT(m, n) ((m)*16384 / (n))

typedef struct {
    int port, bus;
    char id[41];
    char dir[600];
    ts_proc_t *proc;
    bool crashed;
} ts_cnode_t;

struct ts_cluster {
    int n, masters, replicas;
    char *dir;
    char seeds[TS_CLUSTER_MAX * 24];
    ts_cnode_t node[TS_CLUSTER_MAX];
};

static bool ts_has(const char *text, const char *needle)
{
    return text != NULL && strstr(text, needle) != NULL;
}

/* Whether node answers `want` (a substring) to `cmd`, polled every 50 ms until timeout_ms. */
static int ts_cluster_poll(const ts_cluster_t *c, int i, const char *cmd, const char *want,
                           int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        char *t = ts_redis_cmd_port(c->node[i].port, cmd);
        bool ok = ts_has(t, want);
        free(t);
        if (ok)
            return 0;
        if (ts_now_ms() >= end)
            return -ETIMEDOUT;
        ts_sleep_ms(50);
    }
}

/* Starts node i's redis-server in its own directory and waits for PING; 0 or -EIO. */
static int ts_cnode_launch(ts_cluster_t *c, int i)
{
    ts_cnode_t *n = &c->node[i];
    snprintf(n->dir, sizeof n->dir, "%s/node%d", c->dir, i);
    mkdir(n->dir, 0700);
    char conf[700];
    snprintf(conf, sizeof conf, "%s/nodes.conf", n->dir);
    for (int attempt = 0; attempt < 5; attempt++) {
        n->port = ts_free_port();
        do
            n->bus = ts_free_port();
        while (n->bus == n->port);
        remove(conf);
        char port[16], bus[16];
        snprintf(port, sizeof port, "%d", n->port);
        snprintf(bus, sizeof bus, "%d", n->bus);
        char *argv[] = {"/usr/bin/redis-server",
                        "--port",
                        port,
                        "--bind",
                        "127.0.0.1",
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--dir",
                        n->dir,
                        "--daemonize",
                        "no",
                        "--repl-diskless-sync-delay",
                        "0",
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        conf,
                        "--cluster-port",
                        bus,
                        "--cluster-node-timeout",
                        "1000",
                        NULL};
        n->proc = ts_proc_spawn(argv, NULL);
        if (n->proc == NULL)
            continue;
        char *t = NULL;
        for (int k = 0; k < 100 && t == NULL; k++) {
            ts_sleep_ms(20);
            t = ts_redis_cmd_port(n->port, "PING");
            if (!ts_proc_alive(n->proc))
                break;
        }
        bool up = ts_has(t, "PONG");
        free(t);
        if (up)
            return 0;
        ts_proc_free(n->proc);
        n->proc = NULL;
    }
    return -EIO;
}

bool ts_cluster_supported(char *why, size_t len)
{
    ts_cluster_t *c = calloc(1, sizeof *c);
    c->dir = ts_tmpdir();
    bool ok = false;
    if (c->dir == NULL) {
        snprintf(why, len, "no temporary directory");
    } else if (ts_cnode_launch(c, 0) != 0) {
        snprintf(why, len, "redis-server --cluster-enabled yes does not start (too old?)");
    } else {
        char *t = ts_redis_cmd_port(c->node[0].port, "INFO cluster");
        ok = ts_has(t, "cluster_enabled:1");
        if (!ok)
            snprintf(why, len, "redis-server has no cluster mode (INFO cluster: %.80s)",
                     t ? t : "no answer");
        free(t);
    }
    c->n = 1;
    ts_cluster_stop(c);
    return ok;
}

bool ts_cluster_skip(const char *name)
{
    char why[200];
    if (ts_cluster_supported(why, sizeof why))
        return false;
    printf("1..0 # SKIP %s\n", why);
    fprintf(stderr, "%s: skipped: %s\n", name, why);
    return true;
}

static int ts_cluster_form(ts_cluster_t *c)
{
    for (int i = 0; i < c->n; i++) {
        char *id = ts_redis_cmd_port(c->node[i].port, "CLUSTER MYID");
        if (id == NULL || strlen(id) != 40) {
            free(id);
            return -EIO;
        }
        memcpy(c->node[i].id, id, 41);
        free(id);
        /* distinct epochs up front, as redis-cli does: no collision round at start */
        free(ts_redis_cmd_port(c->node[i].port, "CLUSTER SET-CONFIG-EPOCH %d", i + 1));
    }
    for (int m = 0; m < c->masters; m++) {
        int from = TS_SPLIT(m, c->masters), to = TS_SPLIT(m + 1, c->masters) - 1;
        char *t = ts_redis_cmd_port(c->node[m].port, "CLUSTER ADDSLOTSRANGE %d %d", from, to);
        bool ok = ts_has(t, "OK");
        free(t);
        if (!ok)
            return -EIO;
    }
    for (int i = 1; i < c->n; i++)
        free(ts_redis_cmd_port(c->node[i].port, "CLUSTER MEET 127.0.0.1 %d %d", c->node[0].port,
                               c->node[0].bus));
    char want[64];
    snprintf(want, sizeof want, "cluster_known_nodes:%d", c->n);
    for (int i = 0; i < c->n; i++)
        if (ts_cluster_poll(c, i, "CLUSTER INFO", want, 15000) != 0)
            return -ETIMEDOUT;
    for (int i = c->masters; i < c->n; i++) {
        int m = (i - c->masters) / c->replicas;
        long long end = ts_now_ms() + 10000;
        for (;;) { /* the replica must first know the master's id (gossip) */
            char *t = ts_redis_cmd_port(c->node[i].port, "CLUSTER REPLICATE %s", c->node[m].id);
            bool ok = ts_has(t, "OK");
            free(t);
            if (ok)
                break;
            if (ts_now_ms() > end)
                return -ETIMEDOUT;
            ts_sleep_ms(100);
        }
    }
    if (ts_cluster_wait_ok(c, 20000) != 0)
        return -ETIMEDOUT;
    for (int i = c->masters; i < c->n; i++)
        if (ts_cluster_poll(c, i, "INFO replication", "master_link_status:up", 15000) != 0)
            return -ETIMEDOUT;
    /* every node must know every replica (CLUSTER SLOTS lists them; failover needs them) */
    int nrep = c->n - c->masters;
    for (int i = 0; i < c->n && nrep > 0; i++) {
        long long end = ts_now_ms() + 15000;
        for (;;) {
            char *t = ts_redis_cmd_port(c->node[i].port, "CLUSTER NODES");
            int seen = 0;
            for (const char *p = t; p != NULL && (p = strstr(p, " slave ")) != NULL; p++)
                seen++;
            for (const char *p = t; p != NULL && (p = strstr(p, ",slave ")) != NULL; p++)
                seen++;
            free(t);
            if (seen >= nrep)
                break;
            if (ts_now_ms() > end)
                return -ETIMEDOUT;
            ts_sleep_ms(50);
        }
    }
    return 0;
}

ts_cluster_t *ts_cluster_start(int masters, int replicas_per_master)
{
    int n = masters + masters * replicas_per_master;
    if (masters < 1 || replicas_per_master < 0 || n > TS_CLUSTER_MAX) {
        fprintf(stderr, "# ts_cluster_start: bad shape %d+%d\n", masters, replicas_per_master);
        return NULL;
    }
    ts_cluster_t *c = calloc(1, sizeof *c);
    c->masters = masters;
    c->replicas = replicas_per_master;
    c->dir = ts_tmpdir();
    if (c->dir == NULL)
        goto fail;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        if (ts_cnode_launch(c, i) != 0) {
            fprintf(stderr, "# could not start cluster node %d\n", i);
            goto fail;
        }
        c->n = i + 1;
        off += (size_t)snprintf(c->seeds + off, sizeof c->seeds - off, "%s127.0.0.1:%d",
                                i ? "," : "", c->node[i].port);
    }
    int rc = ts_cluster_form(c);
    if (rc != 0) {
        fprintf(stderr, "# the cluster of %d nodes did not form: %s\n", n, strerror(-rc));
        goto fail;
    }
    return c;
fail:
    ts_cluster_stop(c);
    return NULL;
}

void ts_cluster_stop(ts_cluster_t *c)
{
    if (c == NULL)
        return;
    for (int i = 0; i < c->n; i++) {
        ts_proc_t *p = c->node[i].proc;
        if (p == NULL)
            continue;
        ts_proc_signal(p, SIGTERM);
        if (ts_proc_wait(p, 5000, NULL) != 0)
            ts_proc_signal(p, SIGKILL);
        ts_proc_free(p);
    }
    ts_rmtree(c->dir);
    free(c->dir);
    free(c);
}

int ts_cluster_size(const ts_cluster_t *c)
{
    return c->n;
}

int ts_cluster_port(const ts_cluster_t *c, int i)
{
    return c->node[i].port;
}

const char *ts_cluster_id(const ts_cluster_t *c, int i)
{
    return c->node[i].id;
}

const char *ts_cluster_seeds(const ts_cluster_t *c)
{
    return c->seeds;
}

int ts_cluster_index(const ts_cluster_t *c, int port)
{
    for (int i = 0; i < c->n; i++)
        if (c->node[i].port == port)
            return i;
    return -1;
}

int ts_cluster_slot_owner(const ts_cluster_t *c, int asker, unsigned slot)
{
    struct timeval tv = {2, 0};
    redisContext *ctx = redisConnectWithTimeout("127.0.0.1", c->node[asker].port, tv);
    if (ctx == NULL || ctx->err) {
        if (ctx != NULL)
            redisFree(ctx);
        return -1;
    }
    redisSetTimeout(ctx, tv);
    redisReply *r = redisCommand(ctx, "CLUSTER SLOTS");
    int owner = -1;
    for (size_t i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        redisReply *e = r->element[i];
        if (e->type == REDIS_REPLY_ARRAY && e->elements >= 3 &&
            (long long)slot >= e->element[0]->integer && (long long)slot <= e->element[1]->integer)
            owner = ts_cluster_index(c, (int)e->element[2]->element[1]->integer);
    }
    freeReplyObject(r);
    redisFree(ctx);
    return owner;
}

char *ts_cluster_cmd(const ts_cluster_t *c, int i, const char *fmt, ...)
{
    struct timeval tv = {2, 0};
    redisContext *ctx = redisConnectWithTimeout("127.0.0.1", c->node[i].port, tv);
    if (ctx == NULL || ctx->err) {
        if (ctx != NULL)
            redisFree(ctx);
        return NULL;
    }
    redisSetTimeout(ctx, tv);
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(ctx, fmt, ap);
    va_end(ap);
    char *out = NULL;
    if (r != NULL) {
        if (r->type == REDIS_REPLY_INTEGER) {
            if (asprintf(&out, "%lld", r->integer) < 0)
                out = NULL;
        } else if (r->type == REDIS_REPLY_NIL) {
            out = strdup("(nil)");
        } else if (r->str != NULL) {
            out = strndup(r->str, r->len);
        } else {
            out = strdup("(array)");
        }
    }
    freeReplyObject(r);
    redisFree(ctx);
    return out;
}

void ts_cluster_crash(ts_cluster_t *c, int i)
{
    if (c->node[i].proc != NULL)
        ts_proc_signal(c->node[i].proc, SIGKILL);
    c->node[i].crashed = true;
}

void ts_cluster_pause(ts_cluster_t *c, int i)
{
    if (c->node[i].proc != NULL)
        ts_proc_signal(c->node[i].proc, SIGSTOP);
}

void ts_cluster_resume(ts_cluster_t *c, int i)
{
    if (c->node[i].proc != NULL)
        ts_proc_signal(c->node[i].proc, SIGCONT);
}

int ts_cluster_wait_ok(ts_cluster_t *c, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (int i = 0; i < c->n; i++) {
        if (c->node[i].crashed)
            continue;
        int left = (int)(end - ts_now_ms());
        if (ts_cluster_poll(c, i, "CLUSTER INFO", "cluster_state:ok", left > 0 ? left : 0) != 0)
            return -ETIMEDOUT;
    }
    return 0;
}

/* "OK" from a command to node i, else -EIO (the answer on stderr). */
static int ts_cluster_ok(int i, const char *what, char *t)
{
    bool ok = ts_has(t, "OK");
    if (!ok)
        fprintf(stderr, "# %s on node %d: %s\n", what, i, t ? t : "no answer");
    free(t);
    return ok ? 0 : -EIO;
}

static int ts_cluster_move_key(ts_cluster_t *c, int from, int to, const char *key)
{
    char *t = ts_cluster_cmd(c, from, "MIGRATE 127.0.0.1 %d %b 0 5000 KEYS %s", c->node[to].port,
                             "", (size_t)0, key);
    /* NOKEY: the key was not (or no longer) there, nothing to move */
    if (ts_has(t, "NOKEY")) {
        free(t);
        return 0;
    }
    return ts_cluster_ok(from, "MIGRATE", t);
}

int ts_cluster_migrate_begin(ts_cluster_t *c, unsigned slot, int from, int to,
                             const char *const *keys, int n)
{
    if (ts_cluster_ok(to, "SETSLOT IMPORTING",
                      ts_cluster_cmd(c, to, "CLUSTER SETSLOT %u IMPORTING %s", slot,
                                     c->node[from].id)) != 0 ||
        ts_cluster_ok(
            from, "SETSLOT MIGRATING",
            ts_cluster_cmd(c, from, "CLUSTER SETSLOT %u MIGRATING %s", slot, c->node[to].id)) != 0)
        return -EIO;
    for (int i = 0; i < n; i++)
        if (ts_cluster_move_key(c, from, to, keys[i]) != 0)
            return -EIO;
    return 0;
}

/* One key of slot on node i (a fresh string), or NULL when the slot holds none there. */
static char *ts_cluster_slot_key(ts_cluster_t *c, int i, unsigned slot)
{
    struct timeval tv = {2, 0};
    redisContext *ctx = redisConnectWithTimeout("127.0.0.1", c->node[i].port, tv);
    if (ctx == NULL || ctx->err) {
        if (ctx != NULL)
            redisFree(ctx);
        return NULL;
    }
    redisSetTimeout(ctx, tv);
    redisReply *r = redisCommand(ctx, "CLUSTER GETKEYSINSLOT %u 1", slot);
    char *key = NULL;
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 1)
        key = strndup(r->element[0]->str, r->element[0]->len);
    freeReplyObject(r);
    redisFree(ctx);
    return key;
}

int ts_cluster_migrate_finish(ts_cluster_t *c, unsigned slot, int from, int to)
{
    char *key;
    for (int round = 0; round < 100000 && (key = ts_cluster_slot_key(c, from, slot)) != NULL;
         round++) {
        int rc = ts_cluster_move_key(c, from, to, key);
        free(key);
        if (rc != 0)
            return -EIO;
    }
    /* the new owner first, then the old one, then every other master (redis-cli's order) */
    if (ts_cluster_ok(to, "SETSLOT NODE",
                      ts_cluster_cmd(c, to, "CLUSTER SETSLOT %u NODE %s", slot, c->node[to].id)) !=
            0 ||
        ts_cluster_ok(
            from, "SETSLOT NODE",
            ts_cluster_cmd(c, from, "CLUSTER SETSLOT %u NODE %s", slot, c->node[to].id)) != 0)
        return -EIO;
    for (int m = 0; m < c->masters; m++)
        if (m != from && m != to && !c->node[m].crashed)
            free(ts_cluster_cmd(c, m, "CLUSTER SETSLOT %u NODE %s", slot, c->node[to].id));
    return 0;
}

int ts_cluster_migrate_slot(ts_cluster_t *c, unsigned slot, int from, int to)
{
    if (ts_cluster_migrate_begin(c, slot, from, to, NULL, 0) != 0)
        return -EIO;
    return ts_cluster_migrate_finish(c, slot, from, to);
}
