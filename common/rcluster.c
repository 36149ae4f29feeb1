#include "rcluster.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "rcluster_map.h"
#include "xmalloc.h"

#define RCL_NONE RCLUSTER_NONE

/* ---- slots ------------------------------------------------------------------------------ */

/*
 * CRC16-CCITT in its XMODEM form, bit by bit: polynomial 0x1021, initial value 0, no reflection,
 * no final XOR ("123456789" gives 0x31C3). Keys are short; a table would buy nothing measurable.
 */
uint16_t rcluster_crc16(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

/*
 * The hash tag rule: when the key holds a `{` and, after the first one, a `}`, and at least one
 * byte lies between them, only those bytes are hashed. "{}x" and "x{" hash whole; "{{a}}" hashes
 * "{a"; "a{b}{c}" hashes "b".
 */
unsigned rcluster_key_slot(const void *key, size_t len)
{
    const char *k = key;
    const char *open = memchr(k, '{', len);
    if (open != NULL) {
        size_t from = (size_t)(open - k) + 1;
        const char *close = memchr(k + from, '}', len - from);
        if (close != NULL && close > k + from)
            return rcluster_crc16(k + from, (size_t)(close - (k + from))) & (RCLUSTER_SLOTS - 1);
    }
    return rcluster_crc16(k, len) & (RCLUSTER_SLOTS - 1);
}

/* ---- seed lists ------------------------------------------------------------------------- */

/* One "IP:PORT" item: 0, or -EINVAL with the reason in err. */
static int rcluster_seed_parse(const char *item, config_addr_t *out, char *err, size_t errlen)
{
    const char *colon;
    if (item[0] == '[') {
        const char *close = strchr(item, ']');
        colon = close != NULL && close[1] == ':' ? close + 1 : NULL;
    } else {
        colon = strrchr(item, ':');
    }
    if (colon == NULL) {
        snprintf(err, errlen, "\"%s\": no port (want IP:PORT, IPv6 as [IP]:PORT)", item);
        return -EINVAL;
    }
    const char *p = colon + 1;
    char *end;
    errno = 0;
    long port = strtol(p, &end, 10);
    if (p[0] < '0' || p[0] > '9' || errno != 0 || *end != '\0' || port < 1 || port > 65535) {
        snprintf(err, errlen, "\"%s\": bad port \"%s\" (want 1-65535)", item, p);
        return -EINVAL;
    }
    if (config_parse_addr(item, out) != 0) {
        snprintf(err, errlen, "\"%s\": \"%.*s\" is not an IP literal (no host names)", item,
                 (int)(colon - item), item);
        return -EINVAL;
    }
    return 0;
}

int rcluster_seeds_parse(const char *list, config_addr_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (list == NULL || list[0] == '\0') {
        snprintf(err, errlen, "no cluster node given (want IP:PORT,...)");
        return -EINVAL;
    }
    char *copy = xstrdup(list), *rest = copy, *item;
    config_addr_t *a = NULL;
    size_t n = 0, cap = 0;
    char why[256];
    while ((item = strsep(&rest, ",")) != NULL) {
        config_addr_t one;
        if (item[0] == '\0') {
            snprintf(err, errlen, "empty item in cluster node list \"%s\"", list);
            goto fail;
        }
        if (rcluster_seed_parse(item, &one, why, sizeof why) != 0) {
            snprintf(err, errlen, "cluster node list: %s", why);
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            if (a[i].port == one.port && strcmp(a[i].host, one.host) == 0) {
                snprintf(err, errlen, "cluster node \"%s\" given twice", item);
                goto fail;
            }
        }
        if (n == RCLUSTER_MAX_NODES) {
            snprintf(err, errlen, "more than %d cluster nodes given", RCLUSTER_MAX_NODES);
            goto fail;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            a = xreallocarray(a, cap, sizeof *a);
        }
        a[n++] = one;
    }
    free(copy);
    *out = a;
    return (int)n;
fail:
    free(copy);
    free(a);
    return -EINVAL;
}

int rcluster_redis_flag_check(const char *cluster, int argc, char **argv, char *err, size_t errlen)
{
    if (cluster == NULL)
        return 0;
    char env[128];
    config_env_name("redis", env, sizeof env);
    bool given = getenv(env) != NULL;
    for (int i = 1; i < argc && !given; i++)
        given = strcmp(argv[i], "--redis") == 0 || strncmp(argv[i], "--redis=", 8) == 0;
    if (!given)
        return 0;
    snprintf(err, errlen,
             "--redis-cluster and --redis exclude each other (give the cluster's "
             "nodes to --redis-cluster only)");
    return -EINVAL;
}

int rcluster_flags_check(const char *cluster, const char *sentinels, char *err, size_t errlen)
{
    if (cluster == NULL)
        return 0;
    if (sentinels != NULL) {
        snprintf(err, errlen, "--redis-cluster and --redis-sentinels exclude each other");
        return -EINVAL;
    }
    config_addr_t *a;
    char why[300];
    int n = rcluster_seeds_parse(cluster, &a, why, sizeof why);
    if (n < 0) {
        snprintf(err, errlen, "--redis-cluster: %s", why);
        return -EINVAL;
    }
    free(a);
    return 0;
}

/* ---- the client ------------------------------------------------------------------------- */

typedef struct {
    char host[64];
    int port;
    bool master;
    bool used;         /* a command went over ctx since it was opened */
    redisContext *ctx; /* masters only; NULL until needed and after a failure */
} rcl_node_t;

struct rcluster {
    rcluster_opts_t o;
    config_addr_t *seeds;
    size_t nseeds;
    rcl_node_t *nodes;
    size_t nnodes;
    uint16_t slot[RCLUSTER_SLOTS];
    bool need_refresh;
    long long last_refresh_ms;
    rcluster_stats_t stats;
    char err[512];
};

static void rcl_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

static struct timeval rcl_tv(int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    return tv;
}

static void rcl_error(rcluster_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rcl_error(rcluster_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

/* A blocking connection with both timeouts set, or NULL with the reason in why. */
static redisContext *rcl_connect(const rcluster_opts_t *o, const char *host, int port, char *why,
                                 size_t whylen)
{
    redisContext *ctx = redisConnectWithTimeout(host, port, rcl_tv(o->connect_timeout_ms));
    if (ctx != NULL && ctx->err == 0 &&
        redisSetTimeout(ctx, rcl_tv(o->command_timeout_ms)) == REDIS_OK)
        return ctx;
    snprintf(why, whylen, "%s:%d unreachable: %s", host, port,
             ctx != NULL && ctx->errstr[0] ? ctx->errstr : "cannot connect");
    if (ctx != NULL)
        redisFree(ctx);
    return NULL;
}

static void rcl_node_close(rcl_node_t *n)
{
    if (n->ctx != NULL)
        redisFree(n->ctx);
    n->ctx = NULL;
    n->used = false;
}

/*
 * Asks one node for the slot map over ctx. Returns 0, -ENOTSUP (not a cluster node), or -EIO
 * (no or bad answer; ctx is then unusable if the answer was lost), reason in why.
 */
static int rcl_map_fetch(redisContext *ctx, const char *host, int port, rcluster_map_t *m,
                         char *why, size_t whylen)
{
    redisReply *r = redisCommand(ctx, "CLUSTER SLOTS");
    if (r == NULL) {
        snprintf(why, whylen, "%s:%d: no answer to CLUSTER SLOTS: %s", host, port,
                 ctx->errstr[0] ? ctx->errstr : "connection lost");
        return -EIO;
    }
    int rc = 0;
    if (r->type == REDIS_REPLY_ERROR) {
        bool off = strstr(r->str, "cluster support disabled") != NULL;
        snprintf(why, whylen, "%s:%d %s: %.200s", host, port,
                 off ? "is not a cluster node (cluster_enabled:0)" : "refused CLUSTER SLOTS",
                 r->str);
        rc = off ? -ENOTSUP : -EIO;
    } else {
        char w[200];
        if (rcluster_map_parse(r, host, m, w, sizeof w) != 0) {
            snprintf(why, whylen, "%s:%d: %s", host, port, w);
            rc = -EIO;
        }
    }
    freeReplyObject(r);
    return rc;
}

/* The node of the table at host:port, added (as a master when master) if unknown; -1 when the
 * table is full. */
static int rcl_node_find(rcluster_t *c, const char *host, int port, bool master)
{
    for (size_t i = 0; i < c->nnodes; i++) {
        if (c->nodes[i].port == port && strcmp(c->nodes[i].host, host) == 0) {
            c->nodes[i].master = c->nodes[i].master || master;
            return (int)i;
        }
    }
    if (c->nnodes == RCLUSTER_MAX_NODES)
        return -1;
    rcl_node_t *n = &c->nodes[c->nnodes];
    memset(n, 0, sizeof *n);
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    n->master = master;
    return (int)c->nnodes++;
}

/*
 * Installs a fresh map: the node table becomes the map's nodes (connections to nodes that stay
 * masters are kept, every other one is closed) and the slot table points into it.
 */
static void rcl_map_install(rcluster_t *c, const rcluster_map_t *m)
{
    rcl_node_t *old = c->nodes;
    size_t nold = c->nnodes;
    c->nodes = xcalloc(RCLUSTER_MAX_NODES, sizeof *c->nodes);
    c->nnodes = 0;
    for (size_t i = 0; i < m->n; i++) {
        rcl_node_t *n = &c->nodes[c->nnodes++];
        snprintf(n->host, sizeof n->host, "%s", m->nodes[i].host);
        n->port = m->nodes[i].port;
        n->master = m->master[i];
        for (size_t k = 0; k < nold && n->master; k++) {
            if (old[k].ctx != NULL && old[k].port == n->port && strcmp(old[k].host, n->host) == 0) {
                n->ctx = old[k].ctx;
                n->used = old[k].used;
                old[k].ctx = NULL;
            }
        }
    }
    for (size_t k = 0; k < nold; k++)
        rcl_node_close(&old[k]);
    free(old);
    memcpy(c->slot, m->slot, sizeof c->slot);
}

/*
 * Reads the map from the first node that gives one: masters of the current map (over their open
 * connections where there is one), then the other known nodes, then the seeds. Returns 0, or
 * -ENOTSUP / -EIO with the reason in c->err.
 */
static int rcl_refresh(rcluster_t *c, bool need_full)
{
    rcluster_map_t *m = xmalloc(sizeof *m);
    char why[400] = "no node known";
    int rc = -EIO;
    size_t ncand = c->nnodes + c->nseeds;
    for (size_t pass = 0; pass < 2 && rc != 0; pass++) {
        for (size_t i = 0; i < ncand && rc != 0; i++) {
            const char *host;
            int port;
            rcl_node_t *node = NULL;
            if (i < c->nnodes) {
                node = &c->nodes[i];
                if (node->master != (pass == 0))
                    continue; /* masters in the first pass, the others in the second */
                host = node->host;
                port = node->port;
            } else {
                if (pass == 0)
                    continue;
                host = c->seeds[i - c->nnodes].host;
                port = c->seeds[i - c->nnodes].port;
                bool known = false;
                for (size_t k = 0; k < c->nnodes && !known; k++)
                    known = c->nodes[k].port == port && strcmp(c->nodes[k].host, host) == 0;
                if (known)
                    continue;
            }
            redisContext *ctx = node != NULL ? node->ctx : NULL;
            bool temp = ctx == NULL;
            if (temp && (ctx = rcl_connect(&c->o, host, port, why, sizeof why)) == NULL)
                continue;
            int r = rcl_map_fetch(ctx, host, port, m, why, sizeof why);
            if (temp)
                redisFree(ctx);
            else if (r == -EIO && ctx->err != 0)
                rcl_node_close(node);
            if (r == -ENOTSUP) {
                rc = r;
                break;
            }
            if (r != 0)
                continue;
            char gaps[300];
            if (need_full && rcluster_map_gaps(m->slot, gaps, sizeof gaps) > 0) {
                snprintf(why, sizeof why, "%s:%d: %s", host, port, gaps);
                rc = -ERANGE;
                break;
            }
            rc = 0;
        }
        if (rc == -ENOTSUP || rc == -ERANGE)
            break;
    }
    c->stats.refreshes++;
    c->last_refresh_ms = clock_mono_ms();
    if (rc == 0) {
        rcl_map_install(c, m);
        c->need_refresh = false;
    } else {
        rcl_error(c, "no slot map: %s", why);
    }
    free(m);
    return rc;
}

int rcluster_refresh(rcluster_t *c)
{
    return rcl_refresh(c, false) == 0 ? 0 : -EIO;
}

rcluster_t *rcluster_create(const char *seeds, const rcluster_opts_t *opts, char *err,
                            size_t errlen)
{
    config_addr_t *a;
    int n = rcluster_seeds_parse(seeds, &a, err, errlen);
    if (n < 0)
        return NULL;
    rcluster_t *c = xcalloc(1, sizeof *c);
    if (opts != NULL)
        c->o = *opts;
    rcluster_opts_t *o = &c->o;
    o->connect_timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 500;
    o->command_timeout_ms = o->command_timeout_ms > 0 ? o->command_timeout_ms : 2000;
    o->max_redirects = o->max_redirects > 0 ? o->max_redirects : 8;
    o->retry_budget_ms = o->retry_budget_ms > 0 ? o->retry_budget_ms : 4000;
    o->retry_min_ms = o->retry_min_ms > 0 ? o->retry_min_ms : 20;
    o->retry_max_ms = o->retry_max_ms >= o->retry_min_ms ? o->retry_max_ms : 500;
    o->refresh_min_ms = o->refresh_min_ms > 0 ? o->refresh_min_ms : 100;
    c->seeds = a;
    c->nseeds = (size_t)n;
    c->nodes = xcalloc(RCLUSTER_MAX_NODES, sizeof *c->nodes);
    memset(c->slot, 0xFF, sizeof c->slot);
    if (rcl_refresh(c, true) != 0) {
        snprintf(err, errlen, "%s", c->err);
        rcluster_destroy(c);
        return NULL;
    }
    return c;
}

void rcluster_destroy(rcluster_t *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->nnodes; i++)
        rcl_node_close(&c->nodes[i]);
    free(c->nodes);
    free(c->seeds);
    free(c);
}

/* Opens the node's connection if needed: 0, or -EIO with the reason in c->err. */
static int rcl_node_open(rcluster_t *c, rcl_node_t *n)
{
    if (n->ctx != NULL)
        return 0;
    char why[300];
    n->ctx = rcl_connect(&c->o, n->host, n->port, why, sizeof why);
    if (n->ctx == NULL) {
        rcl_error(c, "%s", why);
        return -EIO;
    }
    n->used = false;
    c->stats.reconnects++;
    return 0;
}

/* Parses "MOVED 3999 127.0.0.1:6381" / "ASK ..." into a node index (added as a master when
 * new) and its address; -1 on a malformed redirection or a full table. */
static int rcl_redirect_node(rcluster_t *c, const char *msg, unsigned *slot, config_addr_t *to)
{
    if (rcluster_redirect_parse(msg, slot, to) != 0)
        return -1;
    return rcl_node_find(c, to->host, to->port, true);
}

/* One command, formatted: cmd, and for a script its EVAL form (alt) for -NOSCRIPT. */
typedef struct {
    const char *cmd;
    size_t len;
    const char *alt;
    size_t altlen;
} rcl_cmd_t;

/*
 * The router: sends cmd to the master of slot and follows MOVED / ASK / TRYAGAIN / CLUSTERDOWN /
 * NOSCRIPT and unreachable nodes within the limits of c->o. Returns the reply or NULL (c->err).
 */
static redisReply *rcl_run(rcluster_t *c, unsigned flags, unsigned slot, const rcl_cmd_t *cmd)
{
    long long start = clock_mono_ms();
    int redirects = 0, backoff = c->o.retry_min_ms;
    int ask = -1;
    /* the ASK target by address, not index: a refresh rebuilds the node table */
    config_addr_t ask_to = {.port = 0};
    bool use_alt = false;
    char why[400];
    for (;;) {
        if (c->need_refresh)
            (void)rcl_refresh(c, false);
        if (ask >= 0 && (ask = rcl_node_find(c, ask_to.host, ask_to.port, true)) < 0) {
            rcl_error(c, "slot %u: no room for the node of an ASK redirection", slot);
            return NULL;
        }
        unsigned idx = ask >= 0 ? (unsigned)ask : c->slot[slot];
        rcl_node_t *n = idx != RCL_NONE ? &c->nodes[idx] : NULL;
        if (n == NULL) {
            snprintf(why, sizeof why, "slot %u is not served by any master", slot);
            c->need_refresh = true;
            goto retry;
        }
        if (rcl_node_open(c, n) != 0) {
            snprintf(why, sizeof why, "%.390s", c->err); /* not sent: safe to try again */
            c->need_refresh = true;
            goto retry;
        }
        if (ask >= 0)
            (void)redisAppendCommand(n->ctx, "ASKING");
        if (use_alt)
            (void)redisAppendFormattedCommand(n->ctx, cmd->alt, cmd->altlen);
        else
            (void)redisAppendFormattedCommand(n->ctx, cmd->cmd, cmd->len);
        n->used = true;
        redisReply *r = NULL;
        void *rv = NULL;
        bool lost = false;
        if (ask >= 0) {
            lost = redisGetReply(n->ctx, &rv) != REDIS_OK;
            freeReplyObject(rv);
        }
        if (!lost)
            lost = redisGetReply(n->ctx, (void **)&r) != REDIS_OK || r == NULL;
        ask = -1;
        if (lost) {
            snprintf(why, sizeof why, "reply lost from %s:%d: %s", n->host, n->port,
                     n->ctx->errstr[0] ? n->ctx->errstr : "connection lost");
            rcl_node_close(n);
            c->need_refresh = true;
            if (!(flags & RCLUSTER_RESEND)) {
                rcl_error(c, "%s (the command may have run)", why);
                return NULL;
            }
            c->stats.resent++;
            goto retry;
        }
        if (r->type != REDIS_REPLY_ERROR)
            return r;
        unsigned rslot;
        if (rcluster_reply_is(r, "MOVED") || rcluster_reply_is(r, "ASK")) {
            bool moved = r->str[0] == 'M';
            int to = rcl_redirect_node(c, r->str, &rslot, &ask_to);
            if (to < 0 || rslot != slot) {
                rcl_error(c, "bad redirection \"%.200s\" for slot %u", r->str, slot);
                freeReplyObject(r);
                return NULL;
            }
            if (++redirects > c->o.max_redirects) {
                rcl_error(c, "slot %u: more than %d redirections, the last \"%.200s\"", slot,
                          c->o.max_redirects, r->str);
                freeReplyObject(r);
                return NULL;
            }
            freeReplyObject(r);
            if (moved) {
                c->stats.moved++;
                c->slot[slot] = (uint16_t)to;
                if (clock_mono_ms() - c->last_refresh_ms >= c->o.refresh_min_ms)
                    c->need_refresh = true;
            } else {
                c->stats.ask++;
                ask = to;
            }
            continue;
        }
        if (cmd->alt != NULL && !use_alt && rcluster_reply_is(r, "NOSCRIPT")) {
            c->stats.noscript++;
            use_alt = true;
            freeReplyObject(r);
            continue;
        }
        if (rcluster_reply_is(r, "TRYAGAIN") || rcluster_reply_is(r, "CLUSTERDOWN") ||
            rcluster_reply_is(r, "LOADING")) {
            snprintf(why, sizeof why, "%s:%d: %.300s", n->host, n->port, r->str);
            if (r->str[0] == 'T') {
                c->stats.tryagain++;
            } else if (r->str[0] == 'L') {
                c->stats.loading++;
            } else {
                c->stats.clusterdown++;
                c->need_refresh = true;
            }
            freeReplyObject(r);
            goto retry;
        }
        return r;
    retry:
        if (clock_mono_ms() - start + backoff > c->o.retry_budget_ms) {
            rcl_error(c, "gave up after %lld ms (budget %d): %s", clock_mono_ms() - start,
                      c->o.retry_budget_ms, why);
            return NULL;
        }
        rcl_sleep_ms(backoff);
        backoff = backoff * 2 < c->o.retry_max_ms ? backoff * 2 : c->o.retry_max_ms;
    }
}

redisReply *rcluster_command_argv(rcluster_t *c, unsigned flags, const void *key, size_t keylen,
                                  int argc, const char **argv, const size_t *argvlen)
{
    char *cmd = NULL;
    int len = redisFormatCommandArgv(&cmd, argc, argv, argvlen);
    if (len < 0) {
        rcl_error(c, "cannot format the command");
        return NULL;
    }
    rcl_cmd_t k = {.cmd = cmd, .len = (size_t)len};
    redisReply *r = rcl_run(c, flags, rcluster_key_slot(key, keylen), &k);
    redisFreeCommand(cmd);
    return r;
}

static redisReply *rcl_vcommand(rcluster_t *c, unsigned flags, unsigned slot, const char *fmt,
                                va_list ap)
{
    char *cmd = NULL;
    int len = redisvFormatCommand(&cmd, fmt, ap);
    if (len < 0) {
        rcl_error(c, "cannot format the command \"%.100s\"", fmt);
        return NULL;
    }
    rcl_cmd_t k = {.cmd = cmd, .len = (size_t)len};
    redisReply *r = rcl_run(c, flags, slot, &k);
    redisFreeCommand(cmd);
    return r;
}

redisReply *rcluster_command(rcluster_t *c, unsigned flags, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = rcl_vcommand(c, flags, rcluster_key_slot(key, strlen(key)), fmt, ap);
    va_end(ap);
    return r;
}

redisReply *rcluster_command_slot(rcluster_t *c, unsigned flags, unsigned slot, const char *fmt,
                                  ...)
{
    if (slot >= RCLUSTER_SLOTS) {
        rcl_error(c, "slot %u out of range", slot);
        return NULL;
    }
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = rcl_vcommand(c, flags, slot, fmt, ap);
    va_end(ap);
    return r;
}

/* ---- scripts and WAIT --------------------------------------------------------------------- */

rcluster_script_t *rcluster_script_create(const char *lua_source)
{
    rcluster_script_t *s = xcalloc(1, sizeof *s);
    s->src = xstrdup(lua_source);
    return s;
}

void rcluster_script_destroy(rcluster_script_t *s)
{
    if (s == NULL)
        return;
    free(s->src);
    free(s);
}

const char *rcluster_script_sha(const rcluster_script_t *s)
{
    return s->have_sha ? s->sha : NULL;
}

redisReply *rcluster_eval(rcluster_t *c, rcluster_script_t *s, unsigned flags, int nkeys, int argc,
                          const char **argv, const size_t *argvlen)
{
    if (nkeys < 1 || nkeys > argc) {
        rcl_error(c, "a script needs 1..argc keys to be routed (nkeys %d, argc %d)", nkeys, argc);
        return NULL;
    }
    size_t l0 = argvlen ? argvlen[0] : strlen(argv[0]);
    unsigned slot = rcluster_key_slot(argv[0], l0);
    for (int i = 1; i < nkeys; i++) {
        size_t li = argvlen ? argvlen[i] : strlen(argv[i]);
        if (rcluster_key_slot(argv[i], li) != slot) {
            rcl_error(c, "script keys in different slots: \"%.*s\" (%u) and \"%.*s\" (%u)",
                      (int)(l0 > 80 ? 80 : l0), argv[0], slot, (int)(li > 80 ? 80 : li), argv[i],
                      rcluster_key_slot(argv[i], li));
            return NULL;
        }
    }
    if (!s->have_sha) {
        redisReply *r = rcluster_command_slot(c, RCLUSTER_RESEND, slot, "SCRIPT LOAD %s", s->src);
        if (r == NULL)
            return NULL;
        if (r->type != REDIS_REPLY_STRING || r->len != 40) {
            rcl_error(c, "SCRIPT LOAD refused: %.300s",
                      r->type == REDIS_REPLY_ERROR ? r->str : "unexpected answer");
            freeReplyObject(r);
            return NULL;
        }
        memcpy(s->sha, r->str, 40);
        s->sha[40] = '\0';
        s->have_sha = true;
        freeReplyObject(r);
    }
    /* "EVALSHA sha nkeys keys... args..." and its fallback "EVAL source nkeys ..." */
    const char **w = xcalloc((size_t)argc + 3, sizeof *w);
    size_t *wl = xcalloc((size_t)argc + 3, sizeof *wl);
    char nk[16];
    snprintf(nk, sizeof nk, "%d", nkeys);
    w[2] = nk;
    wl[2] = strlen(nk);
    for (int i = 0; i < argc; i++) {
        w[i + 3] = argv[i];
        wl[i + 3] = argvlen ? argvlen[i] : strlen(argv[i]);
    }
    char *sha_cmd = NULL, *eval_cmd = NULL;
    w[0] = "EVALSHA";
    wl[0] = 7;
    w[1] = s->sha;
    wl[1] = 40;
    int len = redisFormatCommandArgv(&sha_cmd, argc + 3, w, wl);
    w[0] = "EVAL";
    wl[0] = 4;
    w[1] = s->src;
    wl[1] = strlen(s->src);
    int alen = redisFormatCommandArgv(&eval_cmd, argc + 3, w, wl);
    redisReply *r = NULL;
    if (len < 0 || alen < 0) {
        rcl_error(c, "cannot format the script call");
    } else {
        rcl_cmd_t k = {.cmd = sha_cmd, .len = (size_t)len, .alt = eval_cmd, .altlen = (size_t)alen};
        r = rcl_run(c, flags, slot, &k);
    }
    redisFreeCommand(sha_cmd);
    redisFreeCommand(eval_cmd);
    free(w);
    free(wl);
    return r;
}

int rcluster_wait(rcluster_t *c, unsigned slot, int numreplicas, int timeout_ms)
{
    if (slot >= RCLUSTER_SLOTS || numreplicas < 0 || timeout_ms < 0) {
        rcl_error(c, "WAIT: bad slot %u, replicas %d or timeout %d", slot, numreplicas, timeout_ms);
        return -EIO;
    }
    unsigned idx = c->slot[slot];
    rcl_node_t *n = idx != RCL_NONE ? &c->nodes[idx] : NULL;
    if (n == NULL || n->ctx == NULL || !n->used) {
        rcl_error(c, "WAIT: no connection to the master of slot %u that carried a write", slot);
        return -EIO;
    }
    redisSetTimeout(n->ctx, rcl_tv(c->o.command_timeout_ms + timeout_ms));
    redisReply *r = redisCommand(n->ctx, "WAIT %d %d", numreplicas, timeout_ms);
    int rc;
    if (r == NULL) {
        rcl_error(c, "WAIT on %s:%d: %s", n->host, n->port,
                  n->ctx->errstr[0] ? n->ctx->errstr : "connection lost");
        rcl_node_close(n);
        c->need_refresh = true;
        return -EIO;
    }
    redisSetTimeout(n->ctx, rcl_tv(c->o.command_timeout_ms));
    if (r->type == REDIS_REPLY_INTEGER && r->integer >= 0) {
        rc = r->integer > 1000000 ? 1000000 : (int)r->integer;
    } else {
        rcl_error(c, "WAIT on %s:%d: %.300s", n->host, n->port,
                  r->type == REDIS_REPLY_ERROR ? r->str : "unexpected answer");
        rc = -EIO;
    }
    freeReplyObject(r);
    return rc;
}

/* ---- inspection and the start-up check ----------------------------------------------------- */

const char *rcluster_slot_host(const rcluster_t *c, unsigned slot, int *port)
{
    unsigned idx = slot < RCLUSTER_SLOTS ? c->slot[slot] : RCL_NONE;
    if (idx == RCL_NONE) {
        *port = 0;
        return "";
    }
    *port = c->nodes[idx].port;
    return c->nodes[idx].host;
}

size_t rcluster_master_count(const rcluster_t *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        bool serves = false;
        for (unsigned s = 0; s < RCLUSTER_SLOTS && !serves; s++)
            serves = c->slot[s] == i;
        n += serves;
    }
    return n;
}

const char *rcluster_last_error(const rcluster_t *c)
{
    return c->err;
}

void rcluster_get_stats(const rcluster_t *c, rcluster_stats_t *out)
{
    *out = c->stats;
}

int rcluster_check(const char *seeds, int timeout_ms, char *err, size_t errlen)
{
    config_addr_t *a;
    int n = rcluster_seeds_parse(seeds, &a, err, errlen);
    if (n < 0)
        return -EINVAL;
    rcluster_opts_t o = {
        .connect_timeout_ms = timeout_ms > 0 ? timeout_ms : 500,
        .command_timeout_ms = timeout_ms > 0 ? timeout_ms : 500,
    };
    int reachable = 0, rc = 0;
    char why[400] = "";
    for (int i = 0; i < n && rc == 0; i++) {
        redisContext *ctx = rcl_connect(&o, a[i].host, a[i].port, why, sizeof why);
        if (ctx == NULL)
            continue;
        redisReply *r = redisCommand(ctx, "INFO cluster");
        if (r != NULL && r->type == REDIS_REPLY_STRING) {
            reachable++;
            if (strstr(r->str, "cluster_enabled:1") == NULL) {
                snprintf(err, errlen,
                         "%s:%d is not a Redis Cluster node (cluster_enabled:0): give the nodes "
                         "of a cluster, or use --redis for a single Redis",
                         a[i].host, a[i].port);
                rc = -ENOTSUP;
            }
        } else {
            snprintf(why, sizeof why, "%s:%d: no answer to INFO cluster: %.200s", a[i].host,
                     a[i].port,
                     r != NULL && r->type == REDIS_REPLY_ERROR ? r->str
                     : ctx->errstr[0]                          ? ctx->errstr
                                                               : "unexpected answer");
        }
        freeReplyObject(r);
        redisFree(ctx);
    }
    free(a);
    if (rc != 0)
        return rc;
    if (reachable == 0) {
        snprintf(err, errlen, "no node of the cluster list answered: %s", why);
        return -ENOENT;
    }
    char cerr[600];
    rcluster_t *c = rcluster_create(seeds, &o, cerr, sizeof cerr);
    if (c == NULL) {
        snprintf(err, errlen, "%s", cerr);
        return strstr(cerr, "not served") != NULL ? -ERANGE : -ENOENT;
    }
    rcluster_destroy(c);
    return 0;
}

int rcluster_master_addr(const char *seeds, const char *key, int timeout_ms, char *host,
                         size_t hostlen, int *port, char *err, size_t errlen)
{
    rcluster_opts_t o = {.connect_timeout_ms = timeout_ms, .command_timeout_ms = timeout_ms};
    char why[400];
    rcluster_t *c = rcluster_create(seeds, &o, why, sizeof why);
    if (c == NULL) {
        snprintf(err, errlen, "--redis-cluster: %s", why);
        return -ENOENT;
    }
    const char *h = rcluster_slot_host(c, rcluster_key_slot(key, strlen(key)), port);
    snprintf(host, hostlen, "%s", h);
    rcluster_destroy(c);
    if (*port == 0) {
        snprintf(err, errlen, "--redis-cluster: no master serves the slot of %s", key);
        return -ENOENT;
    }
    return 0;
}
