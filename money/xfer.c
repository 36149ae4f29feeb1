/*
 * xfer.c -- the cross-slot transfer protocol (money/xfer.h; docs/queues.md "Redis Cluster: keys
 * by entity and transfers between slots"). The scripts are in xfer_script.c, the sweeper in
 * xfer_sweep.c, the audit in xfer_audit.c.
 *
 * Every call to Redis here is sent with RCLUSTER_RESEND: each script is idempotent by its id,
 * so a reply lost to a timeout or a failover is answered by sending the same step again, which
 * finds its own record. What cannot be resent is never sent.
 */
#include "xfer_int.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

#define XFER_DEFAULT_TTL_S (7 * 24 * 3600)
#define XFER_DEFAULT_WAIT_MS 500
#define XFER_DEFAULT_MARGIN_MS (3600 * 1000)

const char *xfer_state_name(xfer_state_t s)
{
    switch (s) {
    case XFER_DEBITED:
        return "DEBITED";
    case XFER_COMPLETED:
        return "COMPLETED";
    case XFER_REFUNDED:
        return "REFUNDED";
    default:
        return "NONE";
    }
}

static xfer_state_t xfer_state_parse(const char *s)
{
    if (s == NULL)
        return XFER_NONE;
    if (strcmp(s, "DEBITED") == 0)
        return XFER_DEBITED;
    if (strcmp(s, "COMPLETED") == 0)
        return XFER_COMPLETED;
    if (strcmp(s, "REFUNDED") == 0)
        return XFER_REFUNDED;
    return XFER_NONE;
}

/* ---- pure checks ------------------------------------------------------------------------------
 */

static bool xfer_printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~')
            return false;
    return true;
}

int xfer_account_check(const char *key, char *err, size_t errlen)
{
    if (key == NULL || *key == '\0') {
        snprintf(err, errlen, "account: empty key");
        return -EINVAL;
    }
    size_t len = strlen(key);
    if (len > XFER_MAX_KEY) {
        snprintf(err, errlen, "account %.40s...: longer than %d bytes", key, XFER_MAX_KEY);
        return -EINVAL;
    }
    if (!xfer_printable(key, len)) {
        snprintf(err, errlen, "account %s: only printable ASCII without spaces", key);
        return -EINVAL;
    }
    const char *close = strchr(key, '}');
    if (key[0] != '{' || close == NULL || close == key + 1 ||
        memchr(key + 1, '{', (size_t)(close - key - 1)) != NULL) {
        snprintf(err, errlen,
                 "account %s: not {TAG}:bal or {TAG}:bal:SUB (a non-empty hash tag first)", key);
        return -EINVAL;
    }
    const char *rest = close + 1;
    if (strncmp(rest, ":bal", 4) != 0 || (rest[4] != '\0' && (rest[4] != ':' || rest[5] == '\0'))) {
        snprintf(err, errlen, "account %s: after the tag comes :bal or :bal:SUB", key);
        return -EINVAL;
    }
    if (strchr(rest, '{') != NULL || strchr(rest, '}') != NULL) {
        snprintf(err, errlen, "account %s: no braces after the tag", key);
        return -EINVAL;
    }
    return 0;
}

int xfer_id_check(const char *id, char *err, size_t errlen)
{
    size_t len = id != NULL ? strlen(id) : 0;
    if (len == 0 || len > XFER_MAX_ID) {
        snprintf(err, errlen, "transfer id: 1 to %d characters", XFER_MAX_ID);
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)id[i];
        if (!isalnum(ch) && ch != '_' && ch != '.' && ch != ':' && ch != '-') {
            snprintf(err, errlen, "transfer id %.*s: only letters, digits and _ . : -",
                     (int)(len > 60 ? 60 : len), id);
            return -EINVAL;
        }
    }
    return 0;
}

int xfer_args_check(const char *id, const char *src, const char *dst, long long amount, char *err,
                    size_t errlen)
{
    int rc;
    if ((rc = xfer_id_check(id, err, errlen)) != 0 ||
        (rc = xfer_account_check(src, err, errlen)) != 0 ||
        (rc = xfer_account_check(dst, err, errlen)) != 0)
        return rc;
    if (amount <= 0 || amount > XFER_MAX_AMOUNT) {
        snprintf(err, errlen, "amount %lld: must be 1..%lld", amount, XFER_MAX_AMOUNT);
        return -EINVAL;
    }
    unsigned a = rcluster_key_slot(src, strlen(src)), b = rcluster_key_slot(dst, strlen(dst));
    if (a == b) {
        snprintf(err, errlen,
                 "%s and %s are in the same slot (%u): one script moves that, not a transfer", src,
                 dst, a);
        return -EINVAL;
    }
    return 0;
}

const char *xfer_after_tag(const char *key)
{
    if (key == NULL || key[0] != '{')
        return NULL;
    const char *close = strchr(key, '}');
    return close != NULL && close > key + 1 ? close + 1 : NULL;
}

int xfer_tag_key(const char *account, const char *suffix, char *out, size_t len)
{
    const char *rest = xfer_after_tag(account);
    if (rest == NULL)
        return -EINVAL;
    int n = snprintf(out, len, "%.*s%s", (int)(rest - account), account, suffix);
    return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

int xfer_applied_key(const char *src, const char *dst, const char *id, char *out, size_t len)
{
    const char *srest = xfer_after_tag(src), *drest = xfer_after_tag(dst);
    if (srest == NULL || drest == NULL)
        return -EINVAL;
    int n =
        snprintf(out, len, "%.*s:xa:%.*s:%s", (int)(drest - dst), dst, (int)(srest - src), src, id);
    return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

/* The registry tags of the slots (xfer_int.h), built once: about 170,000 CRC16s of short
 * strings (the coupon collector's 16384 * ln 16384), a millisecond or two. */
static char xfer_qtags[RCLUSTER_SLOTS][8];
static pthread_once_t xfer_qtags_once = PTHREAD_ONCE_INIT;

static void xfer_qtags_build(void)
{
    unsigned left = RCLUSTER_SLOTS;
    for (unsigned n = 0; left > 0 && n < 10000000; n++) {
        char tag[8];
        int len = snprintf(tag, sizeof tag, "q%u", n);
        unsigned s = rcluster_key_slot(tag, (size_t)len);
        if (xfer_qtags[s][0] == '\0') {
            memcpy(xfer_qtags[s], tag, (size_t)len + 1);
            left--;
        }
    }
}

const char *xfer_slot_tag(unsigned slot)
{
    pthread_once(&xfer_qtags_once, xfer_qtags_build);
    return slot < RCLUSTER_SLOTS ? xfer_qtags[slot] : "";
}

void xfer_registry_key(unsigned slot, char *out, size_t len)
{
    snprintf(out, len, "{%s}:xq", xfer_slot_tag(slot));
}

/* ---- the engine -------------------------------------------------------------------------------
 */

void xfer_set_err(xfer_t *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, sizeof x->err, fmt, ap);
    va_end(ap);
}

xfer_t *xfer_create(rcluster_t *rc, const xfer_opts_t *opts)
{
    xfer_t *x = xcalloc(1, sizeof *x);
    x->rc = rc;
    if (opts != NULL)
        x->o = *opts;
    if (x->o.wait_replicas < 0)
        x->o.wait_replicas = 0;
    if (x->o.wait_timeout_ms <= 0)
        x->o.wait_timeout_ms = XFER_DEFAULT_WAIT_MS;
    if (x->o.record_ttl_s <= 0)
        x->o.record_ttl_s = XFER_DEFAULT_TTL_S;
    if (x->o.stale_margin_ms <= 0)
        x->o.stale_margin_ms = XFER_DEFAULT_MARGIN_MS;
    long long half = (long long)x->o.record_ttl_s * 500;
    if (x->o.stale_margin_ms > half)
        x->o.stale_margin_ms = (int)half;
    for (int i = 0; i < XFER_NSCRIPTS; i++)
        x->script[i] = rcluster_script_create(xfer_scripts[i]);
    return x;
}

void xfer_destroy(xfer_t *x)
{
    if (x == NULL)
        return;
    for (int i = 0; i < XFER_NSCRIPTS; i++)
        rcluster_script_destroy(x->script[i]);
    free(x);
}

const char *xfer_last_error(const xfer_t *x)
{
    return x->err;
}

void xfer_set_fault_hook(xfer_t *x, bool (*cb)(xfer_fault_t at, const char *id, void *arg),
                         void *arg)
{
    x->fault_cb = cb;
    x->fault_arg = arg;
}

/* Whether the test's hook stops the transfer at this point (reason in res). */
static bool xfer_fault(xfer_t *x, xfer_fault_t at, const char *id, xfer_result_t *res)
{
    if (x->fault_cb == NULL || !x->fault_cb(at, id, x->fault_arg))
        return false;
    snprintf(res->reason, sizeof res->reason, "stopped by the fault hook after the %s",
             at == XFER_AT_DEBITED ? "debit" : "credit");
    return true;
}

/* How old a DEBITED transfer may be and still be sent again (xfer.h, stale_margin_ms). */
long long xfer_max_age_ms(const xfer_t *x)
{
    return (long long)x->o.record_ttl_s * 1000 - x->o.stale_margin_ms;
}

/* Runs script i (every step is idempotent: resent after a lost reply). NULL: reason in x->err. */
redisReply *xfer_eval(xfer_t *x, int i, int nkeys, int argc, const char **argv)
{
    redisReply *r = rcluster_eval(x->rc, x->script[i], RCLUSTER_RESEND, nkeys, argc, argv, NULL);
    if (r == NULL)
        xfer_set_err(x, "%s", rcluster_last_error(x->rc));
    return r;
}

/* Whether an error reply starts with token. */
static bool xfer_is(const redisReply *r, const char *token)
{
    size_t n = strlen(token);
    return r->type == REDIS_REPLY_ERROR && r->len >= n && strncmp(r->str, token, n) == 0 &&
           (r->len == n || r->str[n] == ' ');
}

/* The string of element i of an array reply, or "" */
const char *xfer_elem(const redisReply *r, size_t i)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
        return "";
    const redisReply *e = r->element[i];
    return e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_STATUS ? e->str : "";
}

long long xfer_elem_int(const redisReply *r, size_t i)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
        return -1;
    const redisReply *e = r->element[i];
    if (e->type == REDIS_REPLY_INTEGER)
        return e->integer;
    return e->type == REDIS_REPLY_STRING ? strtoll(e->str, NULL, 10) : -1;
}

/* WAIT for the configured replicas on slot's master; 0, or -EAGAIN with the reason in res. */
static int xfer_wait(xfer_t *x, const char *what, unsigned slot, xfer_result_t *res)
{
    if (x->o.wait_replicas <= 0)
        return 0;
    int n = rcluster_wait(x->rc, slot, x->o.wait_replicas, x->o.wait_timeout_ms);
    if (n >= x->o.wait_replicas)
        return 0;
    if (n < 0)
        snprintf(res->reason, sizeof res->reason, "%s: WAIT failed: %s", what,
                 rcluster_last_error(x->rc));
    else
        snprintf(res->reason, sizeof res->reason,
                 "%s: on %d of %d replicas within %d ms (in flight; finished by a resend or the "
                 "sweeper)",
                 what, n, x->o.wait_replicas, x->o.wait_timeout_ms);
    xfer_set_err(x, "%s", res->reason);
    return -EAGAIN;
}

/* The result of a call ended with rc and res->reason: also kept as the last error. */
static int xfer_done(xfer_t *x, int rc, xfer_result_t *res)
{
    if (rc != 0)
        xfer_set_err(x, "%s", res->reason);
    else
        x->err[0] = '\0';
    return rc;
}

/*
 * Step 3: ACK when the destination credited, REFUND when it refused. 0 with the final state, or
 * -EAGAIN (the source's master did not answer; the transfer stays DEBITED, the credit stays).
 */
static int xfer_settle(xfer_t *x, const char *id, const char *src, const char *rec,
                       const char *index, const char *registry, bool credited, const char *why,
                       xfer_result_t *res)
{
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%d", x->o.record_ttl_s);
    redisReply *r;
    if (credited) {
        const char *argv[] = {rec, index, registry, id, ttl};
        r = xfer_eval(x, XFER_SCRIPT_ACK, 3, 5, argv);
    } else {
        const char *argv[] = {src, rec, index, registry, id, why, ttl};
        r = xfer_eval(x, XFER_SCRIPT_REFUND, 4, 7, argv);
    }
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        snprintf(res->reason, sizeof res->reason, "%s at the source: %s (in flight)",
                 credited ? "ack" : "refund",
                 r == NULL ? x->err : (r->str != NULL ? r->str : "bad reply"));
        freeReplyObject(r);
        return -EAGAIN;
    }
    res->state = xfer_state_parse(xfer_elem(r, 1));
    if (!credited)
        snprintf(res->reason, sizeof res->reason, "refunded: %s", why);
    freeReplyObject(r);
    return 0;
}

int xfer_transfer(xfer_t *x, const char *id, const char *src, const char *dst, long long amount,
                  xfer_result_t *res)
{
    xfer_result_t scratch;
    if (res == NULL)
        res = &scratch;
    memset(res, 0, sizeof *res);
    int rc = xfer_args_check(id, src, dst, amount, res->reason, sizeof res->reason);
    if (rc != 0)
        return xfer_done(x, rc, res);
    char rec[XFER_MAX_KEY + XFER_MAX_ID + 16], index[XFER_MAX_KEY + 8], closed[XFER_MAX_KEY + 8];
    char applied[2 * XFER_MAX_KEY + XFER_MAX_ID + 16], dclosed[XFER_MAX_KEY + 8];
    char amt[24], ttl[24], registry[24];
    char suffix[XFER_MAX_ID + 8];
    xfer_registry_key(rcluster_key_slot(src, strlen(src)), registry, sizeof registry);
    snprintf(suffix, sizeof suffix, ":xo:%s", id);
    xfer_tag_key(src, suffix, rec, sizeof rec);
    xfer_tag_key(src, ":xo", index, sizeof index);
    xfer_tag_key(src, ":xc", closed, sizeof closed);
    xfer_applied_key(src, dst, id, applied, sizeof applied);
    xfer_tag_key(dst, ":xc", dclosed, sizeof dclosed);
    snprintf(amt, sizeof amt, "%lld", amount);
    snprintf(ttl, sizeof ttl, "%d", x->o.record_ttl_s);

    /* 1. DEBIT, with the outbox record, on the source's slot */
    const char *dargv[] = {src, rec, index, closed, registry, id, src, dst, amt};
    redisReply *r = xfer_eval(x, XFER_SCRIPT_DEBIT, 5, 9, dargv);
    if (r == NULL) {
        snprintf(res->reason, sizeof res->reason,
                 "debit: %s (unknown whether it applied: send the transfer again)", x->err);
        return xfer_done(x, -EIO, res);
    }
    if (r->type == REDIS_REPLY_ERROR) {
        rc = xfer_is(r, "XFER_ID_REUSED")                                  ? -EEXIST
             : xfer_is(r, "XFER_INSUFFICIENT")                             ? -ENOSPC
             : xfer_is(r, "XFER_CLOSED") || xfer_is(r, "XFER_NOT_BALANCE") ? -EPERM
             : xfer_is(r, "XFER_BAD_ARGS")                                 ? -EINVAL
                                                                           : -EIO;
        snprintf(res->reason, sizeof res->reason, "debit refused: %s", r->str);
        freeReplyObject(r);
        return xfer_done(x, rc, res);
    }
    res->replayed = xfer_elem_int(r, 0) == 0;
    res->state = xfer_state_parse(xfer_elem(r, 1));
    long long age = res->replayed ? xfer_elem_int(r, 3) - xfer_elem_int(r, 2) : 0;
    freeReplyObject(r);
    if (res->state == XFER_DEBITED && age > xfer_max_age_ms(x)) {
        /* its applied record may have expired: a credit sent again could apply twice */
        snprintf(res->reason, sizeof res->reason,
                 "transfer %s has been in flight for %lld s, longer than its records may live: "
                 "settle it by hand (docs/queues.md)",
                 id, age / 1000);
        return xfer_done(x, -ESTALE, res);
    }
    if (res->state == XFER_COMPLETED || res->state == XFER_REFUNDED) {
        snprintf(res->reason, sizeof res->reason, "transfer %s was %s before", id,
                 xfer_state_name(res->state));
        x->err[0] = '\0';
        return 0;
    }
    if (res->state != XFER_DEBITED) {
        snprintf(res->reason, sizeof res->reason, "debit: unexpected reply");
        return xfer_done(x, -EIO, res);
    }
    if ((rc = xfer_wait(x, "debit", rcluster_key_slot(src, strlen(src)), res)) != 0)
        return xfer_done(x, rc, res);
    if (xfer_fault(x, XFER_AT_DEBITED, id, res))
        return xfer_done(x, -EAGAIN, res);

    /* 2. CREDIT on the destination's slot, deduplicated by the id */
    const char *cargv[] = {dst, applied, dclosed, id, src, amt, ttl};
    r = xfer_eval(x, XFER_SCRIPT_CREDIT, 3, 7, cargv);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        rc = r != NULL && xfer_is(r, "XFER_ID_REUSED") ? -EEXIST : -EAGAIN;
        snprintf(res->reason, sizeof res->reason, "credit: %s (in flight)",
                 r == NULL ? x->err : (r->str != NULL ? r->str : "bad reply"));
        freeReplyObject(r);
        return xfer_done(x, rc, res);
    }
    bool credited = strcmp(xfer_elem(r, 1), "credited") == 0;
    if (!credited && strcmp(xfer_elem(r, 1), "refused") != 0) {
        /* only a refusal the destination recorded may lead to a refund */
        snprintf(res->reason, sizeof res->reason, "credit: unexpected decision \"%.40s\"",
                 xfer_elem(r, 1));
        freeReplyObject(r);
        return xfer_done(x, -EAGAIN, res);
    }
    char why[200];
    snprintf(why, sizeof why, "%s", xfer_elem(r, 2));
    freeReplyObject(r);
    if ((rc = xfer_wait(x, "credit", rcluster_key_slot(dst, strlen(dst)), res)) != 0)
        return xfer_done(x, rc, res);
    if (xfer_fault(x, XFER_AT_CREDITED, id, res))
        return xfer_done(x, -EAGAIN, res);

    /* 3. ACK, or the compensation */
    rc = xfer_settle(x, id, src, rec, index, registry, credited, why, res);
    return xfer_done(x, rc, res);
}

/* Fills rec from an HGETALL reply; false when it is empty or not a record. */
static bool xfer_record_parse(const redisReply *r, xfer_record_t *rec)
{
    memset(rec, 0, sizeof *rec);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements == 0)
        return false;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const char *f = xfer_elem(r, i), *v = xfer_elem(r, i + 1);
        if (strcmp(f, "state") == 0)
            rec->state = xfer_state_parse(v);
        else if (strcmp(f, "src") == 0)
            snprintf(rec->src, sizeof rec->src, "%s", v);
        else if (strcmp(f, "dst") == 0)
            snprintf(rec->dst, sizeof rec->dst, "%s", v);
        else if (strcmp(f, "amount") == 0)
            rec->amount = strtoll(v, NULL, 10);
        else if (strcmp(f, "created") == 0)
            rec->created_ms = strtoll(v, NULL, 10);
        else if (strcmp(f, "updated") == 0)
            rec->updated_ms = strtoll(v, NULL, 10);
        else if (strcmp(f, "drives") == 0)
            rec->drives = strtoll(v, NULL, 10);
        else if (strcmp(f, "reason") == 0)
            snprintf(rec->reason, sizeof rec->reason, "%s", v);
    }
    return rec->state != XFER_NONE;
}

/* Reads the outbox record at key; 0, -ENOENT, -EIO. */
int xfer_record_read(xfer_t *x, const char *key, xfer_record_t *rec)
{
    redisReply *r = rcluster_command(x->rc, RCLUSTER_RESEND, key, "HGETALL %s", key);
    if (r == NULL || r->type == REDIS_REPLY_ERROR) {
        xfer_set_err(x, "HGETALL %s: %s", key, r == NULL ? rcluster_last_error(x->rc) : r->str);
        freeReplyObject(r);
        return -EIO;
    }
    bool ok = xfer_record_parse(r, rec);
    freeReplyObject(r);
    return ok ? 0 : -ENOENT;
}

int xfer_status(xfer_t *x, const char *src, const char *id, xfer_record_t *rec)
{
    char key[XFER_MAX_KEY + XFER_MAX_ID + 16], suffix[XFER_MAX_ID + 8];
    int rc;
    if ((rc = xfer_account_check(src, x->err, sizeof x->err)) != 0 ||
        (rc = xfer_id_check(id, x->err, sizeof x->err)) != 0)
        return rc;
    snprintf(suffix, sizeof suffix, ":xo:%s", id);
    xfer_tag_key(src, suffix, key, sizeof key);
    xfer_record_t scratch;
    rc = xfer_record_read(x, key, rec != NULL ? rec : &scratch);
    if (rc == -ENOENT)
        xfer_set_err(x, "unknown transfer id %s: no record in the outbox of %s", id, src);
    return rc;
}

int xfer_resume(xfer_t *x, const char *src, const char *id, xfer_result_t *res)
{
    xfer_result_t scratch;
    if (res == NULL)
        res = &scratch;
    memset(res, 0, sizeof *res);
    xfer_record_t rec;
    int rc = xfer_status(x, src, id, &rec);
    if (rc != 0) {
        snprintf(res->reason, sizeof res->reason, "%s", x->err);
        return rc;
    }
    if (strcmp(rec.src, src) != 0) {
        snprintf(res->reason, sizeof res->reason,
                 "transfer %s in the outbox of %s comes from %s: resume it from there", id, src,
                 rec.src);
        return xfer_done(x, -EINVAL, res);
    }
    return xfer_transfer(x, id, rec.src, rec.dst, rec.amount, res);
}

int xfer_account_close(xfer_t *x, const char *account, bool closed)
{
    char key[XFER_MAX_KEY + 8];
    int rc = xfer_account_check(account, x->err, sizeof x->err);
    if (rc != 0)
        return rc;
    xfer_tag_key(account, ":xc", key, sizeof key);
    redisReply *r = rcluster_command(x->rc, RCLUSTER_RESEND, key,
                                     closed ? "SADD %s %s" : "SREM %s %s", key, account);
    rc = r != NULL && r->type == REDIS_REPLY_INTEGER ? 0 : -EIO;
    if (rc != 0)
        xfer_set_err(x, "%s %s: %s", closed ? "SADD" : "SREM", key,
                     r == NULL ? rcluster_last_error(x->rc) : (r->str ? r->str : "bad reply"));
    freeReplyObject(r);
    return rc;
}

int xfer_seed(xfer_t *x, const char *account, long long amount, const char *op)
{
    int rc;
    if ((rc = xfer_account_check(account, x->err, sizeof x->err)) != 0 ||
        (rc = xfer_id_check(op, x->err, sizeof x->err)) != 0)
        return rc;
    if (amount <= 0 || amount > XFER_MAX_AMOUNT) {
        xfer_set_err(x, "seed amount %lld: must be 1..%lld", amount, XFER_MAX_AMOUNT);
        return -EINVAL;
    }
    char rec[XFER_MAX_KEY + XFER_MAX_ID + 16], minted[XFER_MAX_KEY + 8];
    char suffix[XFER_MAX_ID + 8], amt[24], ttl[24];
    snprintf(suffix, sizeof suffix, ":xs:%s", op);
    xfer_tag_key(account, suffix, rec, sizeof rec);
    xfer_tag_key(account, ":xm", minted, sizeof minted);
    snprintf(amt, sizeof amt, "%lld", amount);
    snprintf(ttl, sizeof ttl, "%d", x->o.record_ttl_s);
    const char *argv[] = {account, rec, minted, amt, op, ttl};
    redisReply *r = xfer_eval(x, XFER_SCRIPT_SEED, 3, 6, argv);
    if (r == NULL)
        return -EIO;
    rc = 0;
    if (r->type != REDIS_REPLY_ARRAY) {
        rc = xfer_is(r, "XFER_NOT_BALANCE") ? -EPERM : xfer_is(r, "XFER_BAD_ARGS") ? -EINVAL : -EIO;
        xfer_set_err(x, "seed: %s", r->str != NULL ? r->str : "bad reply");
    }
    freeReplyObject(r);
    return rc;
}

int xfer_balance(xfer_t *x, const char *account, long long *out)
{
    int rc = xfer_account_check(account, x->err, sizeof x->err);
    if (rc != 0)
        return rc;
    redisReply *r = rcluster_command(x->rc, RCLUSTER_RESEND, account, "GET %s", account);
    if (r == NULL) {
        xfer_set_err(x, "GET %s: %s", account, rcluster_last_error(x->rc));
        return -EIO;
    }
    rc = 0;
    *out = 0;
    if (r->type == REDIS_REPLY_STRING) {
        char *end;
        errno = 0;
        *out = strtoll(r->str, &end, 10);
        if (errno != 0 || *end != '\0' || end == r->str)
            rc = -EPERM;
    } else if (r->type != REDIS_REPLY_NIL) {
        rc = r->type == REDIS_REPLY_ERROR && strncmp(r->str, "WRONGTYPE", 9) == 0 ? -EPERM : -EIO;
    }
    if (rc != 0)
        xfer_set_err(x, "%s does not hold a balance (%s)", account,
                     r->str != NULL ? r->str : "not a string");
    freeReplyObject(r);
    return rc;
}
