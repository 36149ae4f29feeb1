/*
 * xfer_sweep.c -- the sweeper of the transfer protocol (money/xfer.h, xfer_sweep; docs/queues.md
 * "Redis Cluster: keys by entity and transfers between slots"): through the registry of every
 * slot to the outbox indexes that hold a transfer in flight, and each transfer there finished
 * as a resend would. Also the helpers it shares with the audit: the masters of the map, the
 * owner of each slot, a connection of one's own to a master.
 */
#include "xfer_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "xmalloc.h"

/* Transfers finished per outbox index and sweep (the rest at the next sweep). */
#define XFER_SWEEP_BATCH 500
/* Registries read per round trip. */
#define XFER_REGISTRY_BATCH 1024

size_t xfer_masters(rcluster_t *rc, xfer_master_t *out, size_t max)
{
    size_t n = 0;
    for (unsigned s = 0; s < RCLUSTER_SLOTS; s++) {
        int port;
        const char *host = rcluster_slot_host(rc, s, &port);
        if (port == 0)
            continue;
        size_t i = 0;
        while (i < n && !(out[i].port == port && strcmp(out[i].host, host) == 0))
            i++;
        if (i < n || n == max)
            continue;
        out[n].slot = s;
        out[n].port = port;
        snprintf(out[n].host, sizeof out[n].host, "%s", host);
        n++;
    }
    return n;
}

/* Finishes the due transfers of one outbox index. */
static void xfer_sweep_index(xfer_t *x, const char *index, const char *registry,
                             long long older_than_ms, xfer_sweep_stats_t *st)
{
    char older[24], limit[24], stale[24];
    snprintf(older, sizeof older, "%lld", older_than_ms);
    snprintf(limit, sizeof limit, "%d", XFER_SWEEP_BATCH);
    snprintf(stale, sizeof stale, "%lld", xfer_max_age_ms(x));
    const char *argv[] = {index, registry, older, limit, stale};
    redisReply *r = xfer_eval(x, XFER_SCRIPT_DUE, 2, 5, argv);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 2) {
        st->errors++;
        log_emit(LOG_WARN, "xfer_sweep_error", "{s:s,s:s}", "index", index, "error",
                 r == NULL ? x->err : (r->str != NULL ? r->str : "bad reply"));
        freeReplyObject(r);
        return;
    }
    long long nstale = xfer_elem_int(r, 1);
    if (nstale > 0) {
        /* their applied records may have expired: a credit sent again could apply twice */
        st->stale += (size_t)nstale;
        log_emit(LOG_ERROR, "xfer_stale", "{s:s,s:I,s:s}", "index", index, "transfers",
                 (json_int_t)nstale, "hint",
                 "in flight longer than the record ttl allows to resend: settle by hand "
                 "(docs/queues.md)");
    }
    for (size_t i = 2; i + 1 < r->elements; i += 2) {
        const char *id = xfer_elem(r, i);
        st->due++;
        char rkey[XFER_MAX_KEY + XFER_MAX_ID + 16], suffix[XFER_MAX_ID + 8];
        snprintf(suffix, sizeof suffix, ":xo:%s", id);
        if (xfer_tag_key(index, suffix, rkey, sizeof rkey) != 0) {
            st->errors++;
            continue;
        }
        xfer_record_t rec;
        int rc = xfer_record_read(x, rkey, &rec);
        if (rc == -ENOENT || (rc == 0 && rec.state != XFER_DEBITED))
            continue; /* settled meanwhile (by another sweeper or its own process) */
        if (rc != 0) {
            st->errors++;
            continue;
        }
        xfer_result_t res;
        rc = xfer_transfer(x, id, rec.src, rec.dst, rec.amount, &res);
        if (rc == 0 && res.state == XFER_COMPLETED) {
            st->completed++;
        } else if (rc == 0 && res.state == XFER_REFUNDED) {
            st->refunded++;
        } else if (rc == -EAGAIN) {
            st->pending++;
        } else {
            st->errors++;
            log_emit(LOG_WARN, "xfer_sweep_error", "{s:s,s:s}", "record", rkey, "error",
                     res.reason);
        }
    }
    freeReplyObject(r);
}

void xfer_slot_owners(rcluster_t *rc, const xfer_master_t *m, size_t nm, short *owner)
{
    for (unsigned s = 0; s < RCLUSTER_SLOTS; s++) {
        int port;
        const char *host = rcluster_slot_host(rc, s, &port);
        owner[s] = -1;
        for (size_t i = 0; i < nm; i++)
            if (m[i].port == port && strcmp(m[i].host, host) == 0)
                owner[s] = (short)i;
    }
}

redisContext *xfer_connect(xfer_t *x, const xfer_master_t *m)
{
    struct timeval tv = {0, 500 * 1000};
    redisContext *ctx = redisConnectWithTimeout(m->host, m->port, tv);
    if (ctx == NULL || ctx->err) {
        xfer_set_err(x, "cannot reach %s:%d: %s", m->host, m->port,
                     ctx != NULL ? ctx->errstr : "out of memory");
        redisFree(ctx);
        return NULL;
    }
    struct timeval cmd = {5, 0};
    redisSetTimeout(ctx, cmd);
    return ctx;
}

/*
 * The registries of the slots master m serves (owner[s] == mi), read pipelined on a connection
 * of the sweep's own, XFER_REGISTRY_BATCH at a time; every outbox index named there is swept.
 * A slot answered with a redirection (it moved since the map was read) is left to the next
 * sweep. 0, or -EIO (m could not be read).
 */
static int xfer_sweep_master(xfer_t *x, const xfer_master_t *m, const short *owner, short mi,
                             long long older_than_ms, xfer_sweep_stats_t *st)
{
    redisContext *ctx = xfer_connect(x, m);
    if (ctx == NULL)
        return -EIO;
    unsigned batch[XFER_REGISTRY_BATCH];
    unsigned s = 0;
    int rc = 0;
    while (s < RCLUSTER_SLOTS && rc == 0) {
        size_t n = 0;
        for (; s < RCLUSTER_SLOTS && n < XFER_REGISTRY_BATCH; s++) {
            if (owner[s] != mi)
                continue;
            char key[24];
            xfer_registry_key(s, key, sizeof key);
            redisAppendCommand(ctx, "SMEMBERS %s", key);
            batch[n++] = s;
        }
        for (size_t k = 0; k < n; k++) {
            redisReply *r = NULL;
            if (redisGetReply(ctx, (void **)&r) != REDIS_OK || r == NULL) {
                xfer_set_err(x, "SMEMBERS on %s:%d: %s", m->host, m->port, ctx->errstr);
                rc = -EIO;
                break;
            }
            char registry[24];
            xfer_registry_key(batch[k], registry, sizeof registry);
            for (size_t e = 0; r->type == REDIS_REPLY_ARRAY && e < r->elements; e++) {
                const char *index = r->element[e]->str;
                const char *rest = xfer_after_tag(index);
                if (rest == NULL || strcmp(rest, ":xo") != 0)
                    continue;
                st->outboxes++;
                xfer_sweep_index(x, index, registry, older_than_ms, st);
            }
            freeReplyObject(r);
        }
    }
    redisFree(ctx);
    return rc;
}

int xfer_sweep(xfer_t *x, long long older_than_ms, xfer_sweep_stats_t *st)
{
    xfer_sweep_stats_t scratch;
    if (st == NULL)
        st = &scratch;
    memset(st, 0, sizeof *st);
    if (older_than_ms < 0)
        older_than_ms = 0;
    /* a map from now: the sweep talks to the masters directly (a failure keeps the old one) */
    rcluster_refresh(x->rc);
    xfer_master_t m[RCLUSTER_MAX_NODES];
    size_t nm = xfer_masters(x->rc, m, RCLUSTER_MAX_NODES);
    if (nm == 0) {
        xfer_set_err(x, "sweep: no slot map: %s", rcluster_last_error(x->rc));
        return -EIO;
    }
    short *owner = xcalloc(RCLUSTER_SLOTS, sizeof *owner);
    xfer_slot_owners(x->rc, m, nm, owner);
    int rc = 0;
    for (size_t i = 0; i < nm; i++) {
        st->masters++;
        if (xfer_sweep_master(x, &m[i], owner, (short)i, older_than_ms, st) != 0) {
            st->errors++;
            rc = -EIO;
        }
    }
    free(owner);
    if (st->stale > 0 || st->completed + st->refunded > 0)
        log_emit(LOG_INFO, "xfer_sweep", "{s:I,s:I,s:I,s:I,s:I,s:I}", "due", (json_int_t)st->due,
                 "completed", (json_int_t)st->completed, "refunded", (json_int_t)st->refunded,
                 "pending", (json_int_t)st->pending, "stale", (json_int_t)st->stale, "errors",
                 (json_int_t)st->errors);
    return rc;
}
