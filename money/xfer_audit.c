/*
 * xfer_audit.c -- the conservation audit across every master (money/xfer.h, xfer_audit();
 * docs/queues.md "Redis Cluster: keys by entity and transfers between slots").
 *
 * Every chip is in exactly one place: an account key ({TAG}:bal, {TAG}:bal:SUB) or a transfer
 * in flight (an outbox record DEBITED whose credit has not been applied). Money only enters
 * through a seed, which adds the same amount to its tag's minted total ({TAG}:xm). So
 *
 *     sum(accounts) + sum(in flight) == sum(minted)
 *
 * holds whenever no step is running. The walk: the slot map is refreshed and remembered; on
 * each master, on a connection of the audit's own (SCAN is per node; values are read pipelined,
 * a thousand keys per round trip), SCAN MATCH {*}:* finds the accounts, the minted totals and
 * the outbox indexes ({TAG}:xo), whose DEBITED records are read in the same slot. The applied
 * record of each of those at its destination (another master) says whether its credit is
 * already there. The map is refreshed again at the end: a slot that changed masters meanwhile
 * (a failover, a resharding) makes the walk -EAGAIN, since keys may have been seen twice or not
 * at all.
 */
#include "xfer_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

#define XFER_AUDIT_COUNT 1000

typedef struct {
    char **v;
    size_t n, cap;
} xfer_strs_t;

static void xfer_strs_add(xfer_strs_t *s, const char *str)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = xreallocarray(s->v, s->cap, sizeof *s->v);
    }
    s->v[s->n++] = xstrdup(str);
}

static void xfer_strs_clear(xfer_strs_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

static void xfer_strs_free(xfer_strs_t *s)
{
    xfer_strs_clear(s);
    free(s->v);
}

/* A transfer in flight found at its source: checked at its destination at the end. */
typedef struct {
    char id[XFER_MAX_ID + 1], src[XFER_MAX_KEY + 1], dst[XFER_MAX_KEY + 1];
    long long amount;
} xfer_flight_t;

typedef struct {
    xfer_t *x;
    xfer_audit_t *out;
    xfer_flight_t *fl;
    size_t nfl, capfl;
} xfer_walk_t;

xfer_place_t xfer_account_place(const char *key)
{
    const char *rest = key != NULL ? xfer_after_tag(key) : NULL;
    if (rest == NULL || key[0] != '{')
        return XFER_PLACE_OTHER;
    if (strncmp(key, "{p:", 3) == 0)
        return XFER_PLACE_WALLET;
    if (strncmp(key, "{s:", 3) == 0)
        return strncmp(rest, ":bal:rake:", 10) == 0 ? XFER_PLACE_EPOCH_RAKE : XFER_PLACE_SEAT;
    if (strncmp(key, "{t:", 3) == 0)
        return XFER_PLACE_POOL;
    if (strncmp(key, "{house}", 7) == 0)
        return XFER_PLACE_HOUSE;
    return XFER_PLACE_OTHER;
}

const char *xfer_place_name(xfer_place_t p)
{
    static const char *const names[XFER_NPLACES] = {"wallets",     "seat accounts", "epochs' rake",
                                                    "prize pools", "house",         "other"};
    return (int)p >= 0 && p < XFER_NPLACES ? names[p] : "other";
}

/* Whether a reply says the key is served elsewhere now (the walk must start again). */
static bool xfer_redirected(const redisReply *r)
{
    return r != NULL && r->type == REDIS_REPLY_ERROR &&
           (strncmp(r->str, "MOVED ", 6) == 0 || strncmp(r->str, "ASK ", 4) == 0 ||
            strncmp(r->str, "TRYAGAIN", 8) == 0 || strncmp(r->str, "CLUSTERDOWN", 11) == 0);
}

/* Parses an integer value; false when it is not one. */
static bool xfer_int_of(const redisReply *r, long long *v)
{
    if (r->type == REDIS_REPLY_NIL) {
        *v = 0;
        return true;
    }
    if (r->type != REDIS_REPLY_STRING)
        return false;
    char *end;
    errno = 0;
    *v = strtoll(r->str, &end, 10);
    return errno == 0 && end != r->str && *end == '\0';
}

/*
 * GET of every key in keys, pipelined on ctx; sums them into *sum (accounts also counted and
 * checked). 0, -EAGAIN (redirected), -EIO.
 */
static int xfer_walk_values(xfer_walk_t *w, redisContext *ctx, const xfer_strs_t *keys,
                            bool accounts, long long *sum)
{
    for (size_t i = 0; i < keys->n; i++)
        redisAppendCommand(ctx, "GET %s", keys->v[i]);
    int rc = 0;
    for (size_t i = 0; i < keys->n; i++) {
        redisReply *r = NULL;
        if (redisGetReply(ctx, (void **)&r) != REDIS_OK || r == NULL) {
            xfer_set_err(w->x, "GET %s: %s", keys->v[i], ctx->errstr);
            return -EIO;
        }
        long long v;
        if (xfer_redirected(r)) {
            xfer_set_err(w->x, "GET %s: %s", keys->v[i], r->str);
            rc = -EAGAIN;
        } else if (!xfer_int_of(r, &v) || (accounts && v < 0)) {
            if (w->out->bad++ == 0)
                snprintf(w->out->first_bad, sizeof w->out->first_bad, "%s", keys->v[i]);
        } else {
            *sum += v;
            if (accounts) {
                xfer_place_t p = xfer_account_place(keys->v[i]);
                w->out->accounts++;
                w->out->place_accounts[p]++;
                w->out->place_balances[p] += v;
            }
        }
        freeReplyObject(r);
    }
    return rc;
}

/* The DEBITED records of the outbox indexes in keys, read on ctx (their own master). */
static int xfer_walk_outboxes(xfer_walk_t *w, redisContext *ctx, const xfer_strs_t *keys)
{
    for (size_t i = 0; i < keys->n; i++) {
        redisReply *ids = redisCommand(ctx, "ZRANGE %s 0 -1", keys->v[i]);
        if (ids == NULL) {
            xfer_set_err(w->x, "ZRANGE %s: %s", keys->v[i], ctx->errstr);
            return -EIO;
        }
        if (xfer_redirected(ids) || ids->type != REDIS_REPLY_ARRAY) {
            xfer_set_err(w->x, "ZRANGE %s: %s", keys->v[i], ids->str ? ids->str : "bad reply");
            int rc = xfer_redirected(ids) ? -EAGAIN : -EIO;
            freeReplyObject(ids);
            return rc;
        }
        char tag[XFER_MAX_KEY + 1];
        const char *rest = xfer_after_tag(keys->v[i]);
        snprintf(tag, sizeof tag, "%.*s", (int)(rest - keys->v[i]), keys->v[i]);
        for (size_t k = 0; k < ids->elements; k++)
            redisAppendCommand(ctx, "HMGET %s:xo:%s state dst amount src", tag,
                               ids->element[k]->str);
        int rc = 0;
        for (size_t k = 0; k < ids->elements; k++) {
            redisReply *r = NULL;
            if (redisGetReply(ctx, (void **)&r) != REDIS_OK || r == NULL) {
                xfer_set_err(w->x, "HMGET: %s", ctx->errstr);
                freeReplyObject(ids);
                return -EIO;
            }
            if (xfer_redirected(r)) {
                rc = -EAGAIN;
            } else if (r->type == REDIS_REPLY_ARRAY && r->elements == 4 &&
                       r->element[0]->type == REDIS_REPLY_STRING &&
                       strcmp(r->element[0]->str, "DEBITED") == 0 &&
                       r->element[1]->type == REDIS_REPLY_STRING &&
                       r->element[2]->type == REDIS_REPLY_STRING &&
                       r->element[3]->type == REDIS_REPLY_STRING) {
                if (w->nfl == w->capfl) {
                    w->capfl = w->capfl ? 2 * w->capfl : 64;
                    w->fl = xreallocarray(w->fl, w->capfl, sizeof *w->fl);
                }
                xfer_flight_t *f = &w->fl[w->nfl++];
                snprintf(f->id, sizeof f->id, "%s", ids->element[k]->str);
                snprintf(f->dst, sizeof f->dst, "%s", r->element[1]->str);
                snprintf(f->src, sizeof f->src, "%s", r->element[3]->str);
                f->amount = strtoll(r->element[2]->str, NULL, 10);
            }
            freeReplyObject(r);
        }
        freeReplyObject(ids);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* One master: SCAN everything in the croupier layout, sum, collect the transfers in flight. */
static int xfer_walk_master(xfer_walk_t *w, const xfer_master_t *m)
{
    redisContext *ctx = xfer_connect(w->x, m);
    if (ctx == NULL)
        return -EIO;
    xfer_strs_t accounts = {0}, minted = {0}, outboxes = {0};
    char cursor[32] = "0";
    int rc = 0;
    do {
        redisReply *r = redisCommand(ctx, "SCAN %s MATCH {*}:* COUNT %d", cursor, XFER_AUDIT_COUNT);
        if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            xfer_set_err(w->x, "SCAN %s:%d: %s", m->host, m->port,
                         r == NULL ? ctx->errstr : (r->str ? r->str : "bad reply"));
            freeReplyObject(r);
            rc = -EIO;
            break;
        }
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        const redisReply *keys = r->element[1];
        char err[8];
        for (size_t k = 0; k < keys->elements; k++) {
            const char *key = keys->element[k]->str;
            const char *rest = xfer_after_tag(key);
            if (rest == NULL)
                continue;
            if (xfer_account_check(key, err, sizeof err) == 0)
                xfer_strs_add(&accounts, key);
            else if (strcmp(rest, ":xm") == 0)
                xfer_strs_add(&minted, key);
            else if (strcmp(rest, ":xo") == 0)
                xfer_strs_add(&outboxes, key);
        }
        freeReplyObject(r);
        if ((rc = xfer_walk_values(w, ctx, &accounts, true, &w->out->balances)) != 0 ||
            (rc = xfer_walk_values(w, ctx, &minted, false, &w->out->seeded)) != 0 ||
            (rc = xfer_walk_outboxes(w, ctx, &outboxes)) != 0)
            break;
        xfer_strs_clear(&accounts);
        xfer_strs_clear(&minted);
        xfer_strs_clear(&outboxes);
    } while (strcmp(cursor, "0") != 0);
    xfer_strs_free(&accounts);
    xfer_strs_free(&minted);
    xfer_strs_free(&outboxes);
    redisFree(ctx);
    return rc;
}

int xfer_audit(xfer_t *x, xfer_audit_t *out)
{
    memset(out, 0, sizeof *out);
    if (rcluster_refresh(x->rc) != 0) {
        xfer_set_err(x, "audit: no slot map: %s", rcluster_last_error(x->rc));
        return -EIO;
    }
    xfer_master_t m[RCLUSTER_MAX_NODES];
    size_t nm = xfer_masters(x->rc, m, RCLUSTER_MAX_NODES);
    short *before = xcalloc(RCLUSTER_SLOTS, sizeof *before);
    short *after = xcalloc(RCLUSTER_SLOTS, sizeof *after);
    xfer_slot_owners(x->rc, m, nm, before);
    xfer_walk_t w = {.x = x, .out = out};
    int rc = 0;
    for (size_t i = 0; i < nm && rc == 0; i++) {
        rc = xfer_walk_master(&w, &m[i]);
        out->masters++;
    }
    /* a transfer in flight whose credit is applied is counted at its destination already */
    for (size_t i = 0; i < w.nfl && rc == 0; i++) {
        char key[2 * XFER_MAX_KEY + XFER_MAX_ID + 16];
        if (xfer_applied_key(w.fl[i].src, w.fl[i].dst, w.fl[i].id, key, sizeof key) != 0) {
            out->bad++;
            continue;
        }
        redisReply *r = rcluster_command(x->rc, RCLUSTER_RESEND, key, "HGET %s decision", key);
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            xfer_set_err(x, "HGET %s: %s", key, r == NULL ? rcluster_last_error(x->rc) : r->str);
            rc = -EIO;
        } else if (r->type == REDIS_REPLY_STRING && strcmp(r->str, "credited") == 0) {
            out->credited_unacked++;
        } else {
            out->in_flight++;
            out->in_flight_amount += w.fl[i].amount;
        }
        freeReplyObject(r);
    }
    if (rc == 0) {
        if (rcluster_refresh(x->rc) != 0) {
            xfer_set_err(x, "audit: no slot map at the end: %s", rcluster_last_error(x->rc));
            rc = -EIO;
        } else {
            xfer_slot_owners(x->rc, m, nm, after);
            if (memcmp(before, after, RCLUSTER_SLOTS * sizeof *before) != 0) {
                xfer_set_err(x, "audit: the slot map changed during the walk: run it again");
                rc = -EAGAIN;
            }
        }
    }
    out->balanced =
        rc == 0 && out->bad == 0 && out->balances + out->in_flight_amount == out->seeded;
    free(w.fl);
    free(before);
    free(after);
    return rc;
}
