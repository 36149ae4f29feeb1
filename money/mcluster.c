/*
 * mcluster.c -- a game server epoch's money in its own Redis Cluster slot (money/mcluster.h;
 * docs/queues.md "The game server's money by entity"): open, seat transfers, settlement, marks
 * and the recovery of a dead epoch, over the blocking cluster client (common/rcluster.h) and
 * the transfers between slots (money/xfer.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keytag.h"
#include "log.h"
#include "mcluster_int.h"
#include "money_int.h"
#include "xfer_int.h"
#include "xmalloc.h"

#define MCL_CHUNK 64 /* accounts per RETURN script */

mcluster_t *mcluster_create(rcluster_t *rc, const mcluster_opts_t *opts)
{
    mcluster_t *m = xcalloc(1, sizeof *m);
    m->rc = rc;
    if (opts != NULL)
        m->o = *opts;
    if (m->o.history_maxlen <= 0)
        m->o.history_maxlen = 100000;
    if (m->o.record_ttl_s <= 0)
        m->o.record_ttl_s = MONEY_RECORD_TTL_S;
    m->x = xfer_create(rc, &m->o.xfer);
    for (int i = 0; i < MCL_NSCRIPTS; i++)
        m->script[i] = rcluster_script_create(mcl_scripts[i]);
    for (int i = 0; i < MCL_HO_NSCRIPTS; i++)
        m->ho[i] = rcluster_script_create(mcl_ho_script_text(i));
    m->settle = rcluster_script_create(money_script_text(SCRIPT_SETTLE));
    m->history = rcluster_script_create(money_script_text(SCRIPT_HISTORY));
    m->recover = rcluster_script_create(money_script_text(SCRIPT_RECOVER));
    return m;
}

void mcluster_destroy(mcluster_t *m)
{
    if (m == NULL)
        return;
    for (int i = 0; i < MCL_NSCRIPTS; i++)
        rcluster_script_destroy(m->script[i]);
    for (int i = 0; i < MCL_HO_NSCRIPTS; i++)
        rcluster_script_destroy(m->ho[i]);
    rcluster_script_destroy(m->settle);
    rcluster_script_destroy(m->history);
    rcluster_script_destroy(m->recover);
    xfer_destroy(m->x);
    free(m);
}

xfer_t *mcluster_xfer(mcluster_t *m)
{
    return m->x;
}

/* ---- keys ------------------------------------------------------------------------------- */

int mcluster_key_wallet(const char *player, char *buf, size_t len)
{
    if (!money_valid_player(player))
        return -EINVAL;
    return money_fmt(buf, len, "{p:%s}:bal", player) == 0 ? 0 : -EINVAL;
}

int mcluster_key_epoch(const char *service, uint32_t slot, uint64_t epoch, const char *suffix,
                       char *buf, size_t len)
{
    if (!money_valid_name(service) || suffix == NULL)
        return -EINVAL;
    return money_fmt(buf, len, "{s:%s:%" PRIu32 ":%" PRIu64 "}%s", service, slot, epoch, suffix) ==
                   0
               ? 0
               : -EINVAL;
}

int mcluster_key_seat(const char *service, uint32_t slot, uint64_t epoch, const char *account,
                      char *buf, size_t len)
{
    if (!money_valid_player(account))
        return -EINVAL;
    char suffix[MONEY_NAME_MAX + 8];
    snprintf(suffix, sizeof suffix, ":bal:%s", account);
    return mcluster_key_epoch(service, slot, epoch, suffix, buf, len);
}

/* ---- helpers ---------------------------------------------------------------------------- */

void mcl_err(money_result_t *out, int status, const char *fmt, ...)
{
    out->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->error, sizeof out->error, fmt, ap);
    va_end(ap);
}

/*
 * Runs script s with argv (nkeys keys, then the arguments) and parses a {flag, value} reply
 * into out as money_reply_parse() does for kind. Returns out->status (-EIO: no reply).
 */
int mcl_run(mcluster_t *m, rcluster_script_t *s, money_kind_t kind, int nkeys, int argc,
            const char **argv, const size_t *lens, money_result_t *out)
{
    char id[sizeof out->id];
    memcpy(id, out->id, sizeof id);
    redisReply *r = rcluster_eval(m->rc, s, RCLUSTER_RESEND, nkeys, argc, argv, lens);
    if (r == NULL) {
        mcl_err(out, -EIO, "redis: %s", rcluster_last_error(m->rc));
        return -EIO;
    }
    money_reply_parse(kind, r, out);
    freeReplyObject(r);
    memcpy(out->id, id, sizeof id);
    return out->status;
}

/*
 * Durability of the writes just made to key's slot (opts.xfer.wait_replicas, as the transfers'
 * steps): WAIT on that slot's master. 0 (also without wait_replicas), or -EAGAIN with the
 * reason in why: the write applied but is not yet on enough replicas -- the caller sends the
 * operation again (it answers its first result, and the WAIT after it covers the first write:
 * each script rewrites its record or counts the replay).
 */
int mcl_wait(mcluster_t *m, const char *key, char *why, size_t whylen)
{
    int want = m->o.xfer.wait_replicas;
    if (want <= 0)
        return 0;
    int ms = m->o.xfer.wait_timeout_ms > 0 ? m->o.xfer.wait_timeout_ms : 500;
    int n = rcluster_wait(m->rc, rcluster_key_slot(key, strlen(key)), want, ms);
    if (n >= want)
        return 0;
    if (n < 0)
        snprintf(why, whylen, "applied; WAIT failed: %s (send it again)",
                 rcluster_last_error(m->rc));
    else
        snprintf(why, whylen, "applied; on %d of %d replicas within %d ms (send it again)", n, want,
                 ms);
    return -EAGAIN;
}

/* A transfer's outcome as a money status (mcluster.h, mcluster_seat). */
static int mcl_xfer_status(int rc, const xfer_result_t *res, bool in, money_result_t *out)
{
    out->replayed = res->replayed;
    if (rc == 0 && res->state == XFER_COMPLETED) {
        out->status = MONEY_OK;
        out->error[0] = '\0';
        return MONEY_OK;
    }
    if (rc == 0 && res->state == XFER_REFUNDED) {
        if (in)
            mcl_err(out, MONEY_ERR_STALE_EPOCH,
                    "MONEY_STALE_EPOCH the seat account refused the buy-in (its epoch was "
                    "recovered); refunded to the wallet: %s",
                    res->reason);
        else
            mcl_err(out, MONEY_ERR_BAD_ARGS,
                    "MONEY_BAD_ARGS the wallet refused the cash-out; back in the seat account: %s",
                    res->reason);
        return out->status;
    }
    switch (rc) {
    case -ENOSPC:
        mcl_err(out, MONEY_ERR_INSUFFICIENT, "MONEY_INSUFFICIENT %s", res->reason);
        break;
    case -EPERM:
        if (in)
            mcl_err(out, MONEY_ERR_BAD_ARGS, "MONEY_BAD_ARGS %s", res->reason);
        else
            mcl_err(out, MONEY_ERR_STALE_EPOCH,
                    "MONEY_STALE_EPOCH the seat account is closed (its epoch was recovered): %s",
                    res->reason);
        break;
    case -EEXIST:
    case -EINVAL:
        mcl_err(out, MONEY_ERR_BAD_ARGS, "MONEY_BAD_ARGS %s", res->reason);
        break;
    case -ESTALE:
        mcl_err(out, MONEY_ERR_REDIS, "%s", res->reason);
        break;
    default: /* -EAGAIN, -EIO: in flight, or unknown whether the debit applied */
        mcl_err(out, -EAGAIN, "in flight: %s", res->reason);
        break;
    }
    return out->status;
}

/* ---- the epoch's operations -------------------------------------------------------------- */

int mcluster_epoch_open(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                        char *err, size_t errlen)
{
    char live[256], member[160];
    if (mcluster_key_epoch(service, slot, epoch, ":live", live, sizeof live) != 0) {
        snprintf(err, errlen, "invalid service");
        return -EINVAL;
    }
    snprintf(member, sizeof member, "%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    /* The index first: an epoch that may hold anything is always in it. */
    redisReply *r = rcluster_command(m->rc, RCLUSTER_RESEND, MCLUSTER_INDEX_KEY, "SADD %s %s",
                                     MCLUSTER_INDEX_KEY, member);
    if (r == NULL || r->type != REDIS_REPLY_INTEGER) {
        snprintf(err, errlen, "SADD %s: %s", MCLUSTER_INDEX_KEY,
                 r == NULL ? rcluster_last_error(m->rc) : (r->str ? r->str : "bad reply"));
        freeReplyObject(r);
        return -EIO;
    }
    freeReplyObject(r);
    char e[24];
    snprintf(e, sizeof e, "%" PRIu64, epoch);
    const char *argv[] = {live, e};
    money_result_t res = {0};
    int rc = mcl_run(m, m->script[MCL_SCRIPT_OPEN], MONEY_KIND_MARK, 1, 2, argv, NULL, &res);
    if (rc == MONEY_OK)
        rc = mcl_wait(m, live, res.error, sizeof res.error);
    if (rc != MONEY_OK)
        snprintf(err, errlen, "%s", res.error);
    return rc;
}

int mcluster_seat(mcluster_t *m, const char *service, money_kind_t kind, const money_seat_t *s,
                  int64_t amount, const char *op_id, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    char wallet[128], seat[256], live[256], held[256], rec[320], e[24];
    if ((kind != MONEY_KIND_SEAT_IN && kind != MONEY_KIND_SEAT_OUT) || s == NULL ||
        !money_valid_op_id(op_id) || amount <= 0 || amount > MONEY_MAX_AMOUNT ||
        mcluster_key_wallet(s->owner, wallet, sizeof wallet) != 0 ||
        mcluster_key_seat(service, s->slot, s->epoch, s->account, seat, sizeof seat) != 0 ||
        strcmp(s->account, s->owner) == 0) {
        mcl_err(out, -EINVAL, "invalid service, account, owner, amount or op id");
        return -EINVAL;
    }
    snprintf(out->id, sizeof out->id, "%s", op_id);
    mcluster_key_epoch(service, s->slot, s->epoch, ":live", live, sizeof live);
    mcluster_key_epoch(service, s->slot, s->epoch, ":held", held, sizeof held);
    snprintf(e, sizeof e, "%" PRIu64, s->epoch);
    bool in = kind == MONEY_KIND_SEAT_IN;
    xfer_result_t res;
    int rc;
    if (in) {
        /* Held first (fenced), then the transfer: no chip reaches an account without its
         * record, and a recovery that closed the account refuses the credit (refund). */
        const char *argv[] = {live, held, seat, e, s->account, s->owner};
        rc = mcl_run(m, m->script[MCL_SCRIPT_HOLD], MONEY_KIND_MARK, 3, 6, argv, NULL, out);
        if (rc == MONEY_ERR_STALE_EPOCH) {
            /* A resend of a buy-in made while the epoch lived answers its first result. */
            if (xfer_status(m->x, wallet, op_id, NULL) == 0) {
                rc = xfer_resume(m->x, wallet, op_id, &res);
                return mcl_xfer_status(rc, &res, true, out);
            }
            return rc;
        }
        /* the record must survive a failover before any chip moves toward the account */
        if (rc == MONEY_OK && mcl_wait(m, live, out->error, sizeof out->error) != 0)
            rc = out->status = -EAGAIN;
        if (rc != MONEY_OK)
            return rc;
        rc = xfer_transfer(m->x, op_id, wallet, seat, amount, &res);
    } else {
        char suffix[MONEY_ID_MAX + 8];
        snprintf(suffix, sizeof suffix, ":xo:%s", op_id);
        xfer_tag_key(seat, suffix, rec, sizeof rec);
        char closed[256];
        mcluster_key_epoch(service, s->slot, s->epoch, ":xc", closed, sizeof closed);
        const char *argv[] = {held, rec, closed, s->account, s->owner, seat};
        rc = mcl_run(m, m->script[MCL_SCRIPT_OWNER], MONEY_KIND_MARK, 3, 6, argv, NULL, out);
        if (rc != MONEY_OK)
            return rc;
        rc = xfer_transfer(m->x, op_id, seat, wallet, amount, &res);
    }
    out->replayed = false;
    rc = mcl_xfer_status(rc, &res, in, out);
    if (rc == MONEY_OK) {
        long long b = 0;
        if (xfer_balance(m->x, seat, &b) == 0) {
            out->nbalances = 1;
            out->balances[0] = b;
        }
    }
    return rc;
}

/* Appends round s's keys (round record, fence, rake, seat accounts) at keys[*nk] and its
 * arguments (n, epoch, rake, deltas) at args[*na]; strings malloc'ed. 0 or -EINVAL (out). */
static int mcl_settle_parts(const char *service, const money_settlement_t *s, char **keys, int *nk,
                            char **args, int *na, money_result_t *out)
{
    int rc = money_settlement_check(s, out->error, sizeof out->error);
    if (rc == 0 && !money_valid_name(service)) {
        rc = -EINVAL;
        snprintf(out->error, sizeof out->error, "service name missing or invalid");
    }
    char rid[MONEY_ID_MAX + 1];
    if (rc == 0 && money_round_id_format(&s->round, rid, sizeof rid) != 0)
        rc = -EINVAL;
    if (rc != 0) {
        out->status = rc;
        return rc;
    }
    snprintf(out->id, sizeof out->id, "%s", rid);
    char buf[400], suffix[MONEY_ID_MAX + 16];
    uint32_t sl = s->round.server;
    uint64_t ep = s->round.epoch;
    int bad = 0, k = *nk, a = *na;
    snprintf(suffix, sizeof suffix, ":round:%s", rid);
    bad |= mcluster_key_epoch(service, sl, ep, suffix, buf, sizeof buf);
    keys[k++] = xstrdup(buf);
    bad |= mcluster_key_epoch(service, sl, ep, ":live", buf, sizeof buf);
    keys[k++] = xstrdup(buf);
    snprintf(suffix, sizeof suffix, ":bal:rake:%s", s->game);
    bad |= mcluster_key_epoch(service, sl, ep, suffix, buf, sizeof buf);
    keys[k++] = xstrdup(buf);
    for (size_t i = 0; i < s->nplayers; i++) {
        bad |= mcluster_key_seat(service, sl, ep, s->players[i], buf, sizeof buf);
        keys[k++] = xstrdup(buf);
    }
    snprintf(buf, sizeof buf, "%zu", s->nplayers);
    args[a++] = xstrdup(buf);
    snprintf(buf, sizeof buf, "%" PRIu64, ep);
    args[a++] = xstrdup(buf);
    snprintf(buf, sizeof buf, "%" PRId64, s->rake);
    args[a++] = xstrdup(buf);
    for (size_t i = 0; i < s->nplayers; i++) {
        snprintf(buf, sizeof buf, "%" PRId64, s->deltas[i]);
        args[a++] = xstrdup(buf);
    }
    *nk = k;
    *na = a;
    if (bad != 0) {
        mcl_err(out, -EINVAL, "a key does not fit");
        return -EINVAL;
    }
    return 0;
}

int mcluster_settle_batch(mcluster_t *m, const char *service, const money_settlement_t *s, size_t n,
                          money_result_t *out)
{
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].kind = MONEY_KIND_SETTLE;
    }
    if (n == 0)
        return MONEY_OK;
    /* keys: 3 + players per round; args: the ttl, then 3 + players per round */
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        cap += 3 + MONEY_MAX_PLAYERS;
    char **keys = xcalloc(cap, sizeof *keys), **args = xcalloc(cap + 1, sizeof *args);
    int nk = 0, na = 1, rc = MONEY_OK;
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%ld", m->o.record_ttl_s);
    args[0] = xstrdup(ttl);
    for (size_t i = 0; i < n && rc == MONEY_OK; i++) {
        if (s[i].round.server != s[0].round.server || s[i].round.epoch != s[0].round.epoch) {
            mcl_err(&out[i], -EINVAL, "every round of a batch must be of one epoch");
            rc = -EINVAL;
        } else {
            rc = mcl_settle_parts(service, &s[i], keys, &nk, args, &na, &out[i]);
        }
    }
    if (rc == MONEY_OK) {
        const char **argv = xcalloc((size_t)(nk + na), sizeof *argv);
        for (int i = 0; i < nk; i++)
            argv[i] = keys[i];
        for (int i = 0; i < na; i++)
            argv[nk + i] = args[i];
        redisReply *r = rcluster_eval(m->rc, m->settle, RCLUSTER_RESEND, nk, nk + na, argv, NULL);
        free(argv);
        if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != n) {
            money_result_t whole = {0};
            if (r == NULL)
                mcl_err(&whole, -EIO, "redis: %s", rcluster_last_error(m->rc));
            else
                money_reply_parse(MONEY_KIND_SETTLE, r, &whole);
            if (whole.status == MONEY_OK)
                mcl_err(&whole, MONEY_ERR_REDIS, "settle: unexpected reply shape");
            for (size_t i = 0; i < n; i++) {
                out[i].status = whole.status;
                memcpy(out[i].error, whole.error, sizeof whole.error);
            }
            rc = whole.status;
        } else {
            for (size_t i = 0; i < n; i++) {
                char id[sizeof out[i].id];
                memcpy(id, out[i].id, sizeof id);
                money_reply_parse_entry(MONEY_KIND_SETTLE, r->element[i], &out[i]);
                memcpy(out[i].id, id, sizeof id);
            }
            /* applied rounds count once they are on wait_replicas replicas; a replay wrote
             * nothing, so a write of the slot first lets the WAIT cover the first application
             * (the slot's replication stream is in order) */
            char why[200];
            bool replayed = false;
            for (size_t i = 0; i < n; i++)
                replayed |= out[i].status == MONEY_OK && out[i].replayed;
            if (replayed && m->o.xfer.wait_replicas > 0) {
                char touch[320];
                mcluster_key_epoch(service, s[0].round.server, s[0].round.epoch, ":seen", touch,
                                   sizeof touch);
                freeReplyObject(rcluster_command(m->rc, RCLUSTER_RESEND, touch, "INCR %s", touch));
            }
            if (mcl_wait(m, keys[0], why, sizeof why) != 0) {
                for (size_t i = 0; i < n; i++) {
                    if (out[i].status == MONEY_OK) {
                        out[i].status = -EAGAIN;
                        snprintf(out[i].error, sizeof out[i].error, "%s", why);
                    }
                }
            }
        }
        freeReplyObject(r);
    } else {
        for (size_t i = 0; i < n; i++) {
            if (out[i].status == MONEY_OK) {
                out[i].status = rc;
                snprintf(out[i].error, sizeof out[i].error, "another round of the batch is bad");
            }
        }
    }
    for (int i = 0; i < nk; i++)
        free(keys[i]);
    for (int i = 0; i < na; i++)
        free(args[i]);
    free(keys);
    free(args);
    return rc;
}

int mcluster_settle(mcluster_t *m, const char *service, const money_settlement_t *s,
                    money_result_t *out)
{
    mcluster_settle_batch(m, service, s, 1, out);
    return out->status;
}

int mcluster_mark(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                  const char *field, const char *value, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_MARK;
    char live[256], held[256], e[24];
    if (field == NULL || field[0] == '\0' || strlen(field) > 64 || value == NULL ||
        mcluster_key_epoch(service, slot, epoch, ":live", live, sizeof live) != 0) {
        mcl_err(out, -EINVAL, "invalid service, field or value");
        return -EINVAL;
    }
    mcluster_key_epoch(service, slot, epoch, ":held", held, sizeof held);
    snprintf(e, sizeof e, "%" PRIu64, epoch);
    const char *argv[] = {live, held, e, field, value};
    int rc = mcl_run(m, m->script[MCL_SCRIPT_MARK], MONEY_KIND_MARK, 2, 5, argv, NULL, out);
    if (rc == MONEY_OK && mcl_wait(m, live, out->error, sizeof out->error) != 0)
        rc = out->status = -EAGAIN;
    return rc;
}

int mcluster_balance(mcluster_t *m, const char *key, int64_t *out)
{
    long long v = 0;
    int rc = xfer_balance(m->x, key, &v);
    *out = v;
    return rc;
}

/* ---- recovery ----------------------------------------------------------------------------- */

/* An error reply of the recovery's scripts as a money status. */
static int mcl_reply_status(const redisReply *r, char *err, size_t errlen)
{
    if (r->type != REDIS_REPLY_ERROR)
        return 0;
    snprintf(err, errlen, "%s", r->str);
    return strncmp(r->str, "MONEY_ALIVE", 11) == 0      ? MONEY_ERR_ALIVE
           : strncmp(r->str, "MONEY_BAD_ARGS", 14) == 0 ? MONEY_ERR_BAD_ARGS
                                                        : MONEY_ERR_REDIS;
}

/* Step 1: money.h's recovery script, without accounts, judges the epoch on the lease fence
 * (in the money slot) and moves the fence for a claim. */
static int mcl_judge(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                     const char *mode, const char *token, money_recover_result_t *out)
{
    char lt[160], fence[200], holder[200], counter[200], held[200], rec[200], e[24], member[160];
    char ttl[24];
    keytag_lease(lt, sizeof lt, service);
    snprintf(fence, sizeof fence, "%s:slot:%" PRIu32 ":epoch", lt, slot);
    snprintf(holder, sizeof holder, "%s:slot:%" PRIu32, lt, slot);
    snprintf(counter, sizeof counter, "%s:epoch", lt);
    /* today's held HASH and recovered record: empty under this layout (the script needs them) */
    money_key_held(service, slot, epoch, held, sizeof held);
    snprintf(rec, sizeof rec, "{croupier:money}:recovered:%s:%" PRIu32 ":%" PRIu64, service, slot,
             epoch);
    snprintf(e, sizeof e, "%" PRIu64, epoch);
    snprintf(member, sizeof member, "%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    snprintf(ttl, sizeof ttl, "%ld", m->o.record_ttl_s);
    const char *argv[] = {fence, holder, counter, held,   MONEY_HELD_INDEX_KEY,
                          rec,   e,      mode,    member, token != NULL ? token : "",
                          ttl,   "0",    "0"};
    redisReply *r = rcluster_eval(m->rc, m->recover, RCLUSTER_RESEND, 6, 13, argv, NULL);
    if (r == NULL) {
        snprintf(out->error, sizeof out->error, "redis: %s", rcluster_last_error(m->rc));
        return -EIO;
    }
    int rc = mcl_reply_status(r, out->error, sizeof out->error);
    if (rc == 0 && (r->type != REDIS_REPLY_ARRAY || r->elements != 5)) {
        snprintf(out->error, sizeof out->error, "recovery: unexpected reply shape");
        rc = MONEY_ERR_REDIS;
    }
    if (rc == 0 && r->element[4]->type == REDIS_REPLY_INTEGER && r->element[4]->integer > 0)
        out->new_fence = (uint64_t)r->element[4]->integer;
    freeReplyObject(r);
    return rc;
}

/* A round record's voided history, unless its round settled in the epoch's slot. 1 written
 * now, 0 none needed, -EIO. */
static int mcl_void_round(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                          const char *value)
{
    char round[MONEY_ID_MAX + 1], game[MONEY_NAME_MAX + 1], key[320], suffix[MONEY_ID_MAX + 16];
    char *json = money_void_history(value, round, sizeof round, game, sizeof game);
    if (json == NULL) {
        log_emit(LOG_ERROR, "money_recover_bad_round_record", "{s:s}", "value", value);
        return 0;
    }
    snprintf(suffix, sizeof suffix, ":round:%s", round);
    mcluster_key_epoch(service, slot, epoch, suffix, key, sizeof key);
    redisReply *r = rcluster_command(m->rc, RCLUSTER_RESEND, key, "EXISTS %s", key);
    if (r == NULL || r->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        free(json);
        return -EIO;
    }
    bool settled = r->integer == 1;
    freeReplyObject(r);
    int rc = 0;
    money_argv_t *a = xcalloc(1, sizeof *a);
    if (!settled && money_argv_history(a, round, game, json, m->o.history_maxlen, m->o.record_ttl_s,
                                       "void", NULL, 0) == 0) {
        /* a->argv: EVALSHA sha numkeys keys... args... */
        int nkeys = atoi(a->argv[2]);
        money_result_t res = {0};
        rc = mcl_run(m, m->history, MONEY_KIND_HISTORY, nkeys, a->argc - 3, a->argv + 3,
                     a->lens + 3, &res);
        if (rc != MONEY_OK && rc != -EIO)
            log_emit(LOG_ERROR, "money_recover_void_failed", "{s:s,s:i,s:s}", "round", round,
                     "status", rc, "error", res.error);
        rc = rc == -EIO ? -EIO : (rc == MONEY_OK && !res.replayed ? 1 : 0);
    }
    free(a);
    free(json);
    return rc;
}

typedef struct {
    char *account, *owner;
} mcl_pair_t;

/* One RETURN script over pairs [0, n) and the fields to forget. Returns 0 or an error; *left:
 * the fields still held. */
static int mcl_return(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                      const mcl_pair_t *p, size_t n, char *const *fields, size_t nfields,
                      long long *left, money_recover_result_t *out)
{
    size_t cap = 5 + 2 * n + 2 + 4 * n + nfields;
    char **argv = xcalloc(cap, sizeof *argv);
    int k = 0;
    char live[256], held[256], index[256], registry[32], rec[256], tag[256];
    mcluster_key_epoch(service, slot, epoch, ":live", live, sizeof live);
    mcluster_key_epoch(service, slot, epoch, ":held", held, sizeof held);
    mcluster_key_epoch(service, slot, epoch, ":xo", index, sizeof index);
    mcluster_key_epoch(service, slot, epoch, ":recovered", rec, sizeof rec);
    mcluster_key_epoch(service, slot, epoch, "", tag, sizeof tag);
    xfer_registry_key(rcluster_key_slot(tag, strlen(tag)), registry, sizeof registry);
    argv[k++] = xstrdup(live);
    argv[k++] = xstrdup(held);
    argv[k++] = xstrdup(index);
    argv[k++] = xstrdup(registry);
    argv[k++] = xstrdup(rec);
    for (size_t i = 0; i < n; i++) {
        char key[256], id[XFER_MAX_ID + 1], r[400];
        mcluster_key_seat(service, slot, epoch, p[i].account, key, sizeof key);
        snprintf(id, sizeof id, "rcv.%s", p[i].account);
        snprintf(r, sizeof r, "%s:xo:%s", tag, id);
        argv[k++] = xstrdup(key);
        argv[k++] = xstrdup(r);
    }
    int nkeys = k;
    char num[24];
    snprintf(num, sizeof num, "%zu", n);
    argv[k++] = xstrdup(num);
    for (size_t i = 0; i < n; i++) {
        char w[128], id[XFER_MAX_ID + 1];
        mcluster_key_wallet(p[i].owner, w, sizeof w);
        snprintf(id, sizeof id, "rcv.%s", p[i].account);
        argv[k++] = xstrdup(p[i].account);
        argv[k++] = xstrdup(p[i].owner);
        argv[k++] = xstrdup(w);
        argv[k++] = xstrdup(id);
    }
    snprintf(num, sizeof num, "%zu", nfields);
    argv[k++] = xstrdup(num);
    for (size_t i = 0; i < nfields; i++)
        argv[k++] = xstrdup(fields[i]);
    redisReply *r = rcluster_eval(m->rc, m->script[MCL_SCRIPT_RETURN], RCLUSTER_RESEND, nkeys, k,
                                  (const char **)argv, NULL);
    int rc = 0;
    if (r == NULL) {
        snprintf(out->error, sizeof out->error, "redis: %s", rcluster_last_error(m->rc));
        rc = -EIO;
    } else if ((rc = mcl_reply_status(r, out->error, sizeof out->error)) == 0 &&
               (r->type != REDIS_REPLY_ARRAY || r->elements < 4)) {
        snprintf(out->error, sizeof out->error, "return: unexpected reply shape");
        rc = MONEY_ERR_REDIS;
    }
    if (rc == 0) {
        out->chips += xfer_elem_int(r, 1);
        out->accounts += (int)xfer_elem_int(r, 2);
        *left = xfer_elem_int(r, 3);
    }
    freeReplyObject(r);
    for (int i = 0; i < k; i++)
        free(argv[i]);
    free(argv);
    return rc;
}

/*
 * Drives every transfer still in flight out of the epoch's outbox (the returns just made, and
 * those of an earlier recovery or cash-out that stopped half-way): each is resumed (idempotent,
 * so a sweeper or another recovery doing the same is harmless). 0, or -EAGAIN when one is still
 * in flight (the sweeper's), -EIO.
 */
int mcl_drive(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
              money_recover_result_t *out)
{
    char index[256];
    mcluster_key_epoch(service, slot, epoch, ":xo", index, sizeof index);
    redisReply *r = rcluster_command(m->rc, RCLUSTER_RESEND, index, "ZRANGE %s 0 499", index);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        snprintf(out->error, sizeof out->error, "ZRANGE %.100s: %.80s", index,
                 r == NULL ? rcluster_last_error(m->rc) : "unexpected reply");
        freeReplyObject(r);
        return -EIO;
    }
    int rc = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const char *id = xfer_elem(r, i);
        xfer_record_t rec;
        char src[320];
        /* the record names its source (a seat account of this epoch) */
        char suffix[XFER_MAX_ID + 8];
        snprintf(suffix, sizeof suffix, ":xo:%s", id);
        char key[400];
        mcluster_key_epoch(service, slot, epoch, suffix, key, sizeof key);
        if (xfer_record_read(m->x, key, &rec) != 0)
            continue;
        snprintf(src, sizeof src, "%s", rec.src);
        xfer_result_t res;
        int x = xfer_resume(m->x, src, id, &res);
        if (x != 0 || (res.state != XFER_COMPLETED && res.state != XFER_REFUNDED)) {
            log_emit(LOG_WARN, "money_recover_return_pending", "{s:s,s:i,s:s}", "id", id, "errno",
                     -x, "reason", res.reason);
            rc = -EAGAIN;
        }
    }
    freeReplyObject(r);
    return rc;
}

/*
 * The rake a dead epoch's rounds collected ({s}:bal:rake:<game>) goes to the house's account of
 * that game ({house}:bal:rake:<game>) as a transfer, id "rake.<game>" (once: after the epoch
 * was marked dead no settlement adds to it, so its balance is final; a rake already moved reads
 * 0). The accounts are found among the slot's keys (CLUSTER GETKEYSINSLOT). 0, -EAGAIN (a move
 * in flight: the drive or the sweeper ends it), -EIO.
 */
static int mcl_rake_home(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                         money_recover_result_t *out)
{
    char tag[256], prefix[300];
    mcluster_key_epoch(service, slot, epoch, "", tag, sizeof tag);
    snprintf(prefix, sizeof prefix, "%s:bal:rake:", tag);
    size_t plen = strlen(prefix);
    unsigned ks = rcluster_key_slot(tag, strlen(tag));
    redisReply *r = rcluster_command_slot(m->rc, RCLUSTER_RESEND, ks, "CLUSTER GETKEYSINSLOT %u %d",
                                          ks, 100000);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        snprintf(out->error, sizeof out->error, "CLUSTER GETKEYSINSLOT %u: %.150s", ks,
                 r == NULL ? rcluster_last_error(m->rc) : (r->str ? r->str : "bad reply"));
        freeReplyObject(r);
        return -EIO;
    }
    int rc = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const char *key = xfer_elem(r, i);
        if (strncmp(key, prefix, plen) != 0 || key[plen] == '\0')
            continue;
        long long bal = 0;
        if (xfer_balance(m->x, key, &bal) != 0 || bal <= 0)
            continue;
        char dst[XFER_MAX_KEY + 1], id[XFER_MAX_ID + 1];
        snprintf(dst, sizeof dst, "{house}:bal:rake:%s", key + plen);
        snprintf(id, sizeof id, "rake.%.90s", key + plen);
        xfer_result_t res;
        int x = xfer_transfer(m->x, id, key, dst, bal, &res);
        log_emit(x == 0 ? LOG_INFO : LOG_WARN, "money_recover_rake", "{s:s,s:s,s:I,s:i,s:s}",
                 "from", key, "to", dst, "amount", (json_int_t)bal, "errno", -x, "reason",
                 res.reason);
        if (x == -EAGAIN || x == -EIO)
            rc = -EAGAIN;
    }
    freeReplyObject(r);
    return rc;
}

int mcluster_recover(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                     money_recover_mode_t mode, const char *token, money_recover_result_t *out)
{
    memset(out, 0, sizeof *out);
    if (!money_valid_name(service) || (int)mode < 0 || mode > MONEY_RECOVER_SELF ||
        (mode == MONEY_RECOVER_SELF && (token == NULL || token[0] == '\0'))) {
        snprintf(out->error, sizeof out->error, "invalid service, mode or token");
        return MONEY_ERR_BAD_ARGS;
    }
    if (!keytag_cluster()) {
        /* the lease fence and the hand histories must be in the money slot (common/keytag.h) */
        snprintf(out->error, sizeof out->error,
                 "the process did not call keytag_set_cluster(true): the lease keys are not in "
                 "the money slot");
        return MONEY_ERR_BAD_ARGS;
    }
    static const char *const modes[] = {"dead", "claim", "self"};
    /* 1. the lease fence, in the money slot */
    int rc = mcl_judge(m, service, slot, epoch, modes[mode], token, out);
    if (rc != 0)
        return rc;
    /* 2. the epoch's own fence and its accounts closed, in the epoch's slot */
    char live[256], held[256], closed[256], prefix[256];
    mcluster_key_epoch(service, slot, epoch, ":live", live, sizeof live);
    mcluster_key_epoch(service, slot, epoch, ":held", held, sizeof held);
    mcluster_key_epoch(service, slot, epoch, ":xc", closed, sizeof closed);
    mcluster_key_epoch(service, slot, epoch, ":bal:", prefix, sizeof prefix);
    const char *kargv[] = {live, held, closed, prefix};
    redisReply *r =
        rcluster_eval(m->rc, m->script[MCL_SCRIPT_KILL], RCLUSTER_RESEND, 3, 4, kargv, NULL);
    if (r == NULL) {
        snprintf(out->error, sizeof out->error, "redis: %s", rcluster_last_error(m->rc));
        return -EIO;
    }
    rc = mcl_reply_status(r, out->error, sizeof out->error);
    freeReplyObject(r);
    if (rc != 0)
        return rc;
    /* 3. what is held (no hold, mark or settle of the epoch is applied any more) */
    r = rcluster_command(m->rc, RCLUSTER_RESEND, held, "HGETALL %s", held);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0) {
        snprintf(out->error, sizeof out->error, "HGETALL %.100s: %.80s", held,
                 r == NULL ? rcluster_last_error(m->rc) : "unexpected reply");
        freeReplyObject(r);
        return r == NULL ? -EIO : MONEY_ERR_REDIS;
    }
    size_t nf = r->elements / 2, np = 0, nr = 0;
    mcl_pair_t *pairs = xcalloc(nf + 1, sizeof *pairs);
    char **rounds = xcalloc(nf + 1, sizeof *rounds);
    for (size_t i = 0; i < nf && rc == 0; i++) {
        const redisReply *f = r->element[2 * i], *v = r->element[2 * i + 1];
        if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            continue;
        if (strncmp(f->str, "r:", 2) == 0) {
            if (mode != MONEY_RECOVER_SELF) {
                int vr = mcl_void_round(m, service, slot, epoch, v->str);
                if (vr < 0) {
                    rc = vr;
                    snprintf(out->error, sizeof out->error, "voiding a round: %s",
                             rcluster_last_error(m->rc));
                } else {
                    out->voided += vr;
                }
            }
            rounds[nr++] = xstrdup(f->str);
        } else if (strncmp(f->str, "h:", 2) == 0) {
            /* a whole-table offer pending: nobody can claim it any more ({s}:live is dead);
             * it reads "void", its mark is forgotten with the rounds' */
            if (mcl_ho_void(m, service, slot, epoch, f->str + 2) != 0) {
                rc = -EIO;
                snprintf(out->error, sizeof out->error, "voiding offer %.80s: %.80s", f->str + 2,
                         rcluster_last_error(m->rc));
            }
            rounds[nr++] = xstrdup(f->str);
        } else if (strncmp(f->str, "m:", 2) == 0) {
            /* a whole-table move's mark: the returns forget it with its account */
        } else if (money_valid_player(f->str) && money_valid_player(v->str)) {
            pairs[np].account = xstrdup(f->str);
            pairs[np].owner = xstrdup(v->str);
            np++;
        } else {
            log_emit(LOG_ERROR, "money_recover_bad_field", "{s:s,s:s}", "key", held, "field",
                     f->str);
        }
    }
    freeReplyObject(r);
    /* 4. the accounts back to their owners (one script per chunk), the rounds and offers
     * forgotten. A whole-table move of the epoch still in flight is driven first: refused by
     * its adopter (recovered too), its chips come back to a seat account still held for its
     * owner, which the returns then take (docs/queues.md "Whole-table moves by entity"). */
    long long left = 0;
    bool pending = false;
    if (rc == 0 && mcl_drive(m, service, slot, epoch, out) == -EIO)
        rc = -EIO;
    for (size_t off = 0; rc == 0 && (off < np || off == 0); off += MCL_CHUNK) {
        size_t n = np - off < MCL_CHUNK ? np - off : MCL_CHUNK;
        rc = mcl_return(m, service, slot, epoch, pairs + off, n, off == 0 ? rounds : NULL,
                        off == 0 ? nr : 0, &left, out);
        if (np == 0)
            break;
    }
    if (rc == 0 && mcl_rake_home(m, service, slot, epoch, out) == -EAGAIN)
        pending = true;
    if (rc == 0) {
        int x = mcl_drive(m, service, slot, epoch, out);
        if (x == -EAGAIN)
            pending = true;
        else
            rc = x;
    }
    /* 5. nothing held any more: the epoch leaves the index (its returns in flight are in
     * xfer's registry, the sweeper's) */
    if (rc == 0 && left == 0) {
        char member[160];
        snprintf(member, sizeof member, "%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
        r = rcluster_command(m->rc, RCLUSTER_RESEND, MCLUSTER_INDEX_KEY, "SREM %s %s",
                             MCLUSTER_INDEX_KEY, member);
        if (r == NULL) {
            snprintf(out->error, sizeof out->error, "redis: %s", rcluster_last_error(m->rc));
            rc = -EIO;
        }
        freeReplyObject(r);
    }
    for (size_t i = 0; i < np; i++) {
        free(pairs[i].account);
        free(pairs[i].owner);
    }
    for (size_t i = 0; i < nr; i++)
        free(rounds[i]);
    free(pairs);
    free(rounds);
    if (rc == 0 && pending)
        rc = -EAGAIN;
    log_emit(rc == 0 ? LOG_INFO : LOG_ERROR, "money_recovered",
             "{s:s,s:s,s:i,s:I,s:s,s:I,s:i,s:i,s:I,s:i,s:s}", "layout", "cluster", "service",
             service, "slot", (int)slot, "epoch", (json_int_t)epoch, "mode", modes[mode], "chips",
             (json_int_t)out->chips, "accounts", out->accounts, "voided", out->voided, "new_fence",
             (json_int_t)out->new_fence, "status", rc, "error", out->error);
    return rc;
}

int mcluster_sweep(mcluster_t *m, const char *own, mcluster_sweep_stats_t *st)
{
    mcluster_sweep_stats_t scratch;
    if (st == NULL)
        st = &scratch;
    memset(st, 0, sizeof *st);
    redisReply *r = rcluster_command(m->rc, RCLUSTER_RESEND, MCLUSTER_INDEX_KEY, "SMEMBERS %s",
                                     MCLUSTER_INDEX_KEY);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        log_emit(LOG_ERROR, "money_sweep_failed", "{s:s,s:s}", "layout", "cluster", "error",
                 r == NULL ? rcluster_last_error(m->rc) : "unexpected reply");
        freeReplyObject(r);
        return -EIO;
    }
    int rc = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const char *member = xfer_elem(r, i);
        char svc[MONEY_NAME_MAX + 1];
        uint32_t slot;
        uint64_t epoch;
        st->epochs++;
        if ((own != NULL && strcmp(member, own) == 0) ||
            money_held_parse(member, svc, sizeof svc, &slot, &epoch) != 0)
            continue;
        money_recover_result_t rv;
        int x = mcluster_recover(m, svc, slot, epoch, MONEY_RECOVER_DEAD, NULL, &rv);
        if (x == 0 || x == -EAGAIN) {
            st->recovered++;
            st->chips += rv.chips;
            st->voided += rv.voided;
            st->pending += x == -EAGAIN;
        } else if (x == MONEY_ERR_ALIVE) {
            st->alive++;
        } else {
            st->errors++;
            rc = -EIO;
        }
    }
    freeReplyObject(r);
    return rc;
}
