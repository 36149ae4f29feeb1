/*
 * mcredit.c -- operator credits and wallet reads with the money by entity (money/mcredit.h;
 * docs/queues.md "The wallets outside the game server"): a claim and a booking in the money
 * slot around a seed or a transfer in the player's slot, each step idempotent by the op id.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcluster.h"
#include "mcredit.h"
#include "xfer.h"

/*
 * CLAIM. KEYS[1] the op id's seen record, KEYS[2] the settle record. ARGV[1] player, ARGV[2]
 * amount, ARGV[3] record ttl (s). The seen record holds "<audit id> <player> <amount>" once
 * booked, "pending <player> <amount>" while the credit is under way. Returns {1, '', ''} claimed
 * now, {2, '', ''} a claim of the same credit is pending (go on with it), {0, balance after,
 * audit id} booked before (either "" when no longer known), or "MONEY_BAD_ARGS ..." when the id
 * was used for another credit.
 */
static const char mcredit_lua_claim[] =
    "local call = redis.call\n"
    "local seen, rec = call('GET', KEYS[1]), call('GET', KEYS[2])\n"
    "if seen then\n"
    "  local sid, p, a = string.match(seen, '^(%S+) (%S+) (%S+)$')\n"
    "  if not sid then sid = seen end\n"
    "  if p and (p ~= ARGV[1] or a ~= ARGV[2]) then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS the op id was used for ' .. a ..\n"
    "      ' chips to ' .. p) end\n"
    "  if sid == 'pending' then return {2, '', ''} end\n"
    "  return {0, rec or '', sid}\n"
    "end\n"
    "if rec then return {0, rec, ''} end\n"
    "call('SET', KEYS[1], 'pending ' .. ARGV[1] .. ' ' .. ARGV[2], 'EX', ARGV[3])\n"
    "return {1, '', ''}\n";

/* UNCLAIM (nothing was moved): KEYS[1] the seen record, deleted if it still holds ARGV[1]. */
static const char mcredit_lua_unclaim[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end\n"
    "return 0\n";

/*
 * BOOK. KEYS[1] seen record, KEYS[2] settle record, KEYS[3] audit stream. ARGV[1] player,
 * ARGV[2] amount, ARGV[3] record ttl (s), ARGV[4] stream MAXLEN, ARGV[5] the balance after,
 * ARGV[6..] the audit entry's field/value pairs. Booked by another run already (the seen record
 * holds an audit id): {0, balance after, audit id}. Otherwise the settle record, the audit entry
 * and the seen record: {1, balance after, audit id}.
 */
static const char mcredit_lua_book[] =
    "local call = redis.call\n"
    "local seen = call('GET', KEYS[1])\n"
    "if seen and seen ~= 'pending ' .. ARGV[1] .. ' ' .. ARGV[2] then\n"
    "  return {0, call('GET', KEYS[2]) or '', string.match(seen, '^(%S+) ') or seen}\n"
    "end\n"
    "call('SET', KEYS[2], ARGV[5], 'EX', ARGV[3])\n"
    "local id = call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'balance_after', ARGV[5],\n"
    "  unpack(ARGV, 6))\n"
    "call('SET', KEYS[1], id .. ' ' .. ARGV[1] .. ' ' .. ARGV[2], 'EX', ARGV[3])\n"
    "return {1, ARGV[5], id}\n";

static int mcredit_fail(money_credit_result_t *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int mcredit_fail(money_credit_result_t *out, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->error, sizeof out->error, fmt, ap);
    va_end(ap);
    out->status = status;
    return status;
}

/* Runs one of the scripts above once (a script object per call: the tool runs one credit). */
static redisReply *mcredit_eval(rcluster_t *rc, const char *lua, int nkeys, int argc,
                                const char **argv)
{
    rcluster_script_t *s = rcluster_script_create(lua);
    redisReply *r = rcluster_eval(rc, s, RCLUSTER_RESEND, nkeys, argc, argv, NULL);
    rcluster_script_destroy(s);
    return r;
}

/* A reply {int, string, string}: fills the result's balance and audit id; the int, or -1. */
static long long mcredit_triple(const redisReply *r, money_credit_result_t *out)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
        r->element[0]->type != REDIS_REPLY_INTEGER || r->element[1]->type != REDIS_REPLY_STRING ||
        r->element[2]->type != REDIS_REPLY_STRING)
        return -1;
    char *end;
    out->balance_after = strtoll(r->element[1]->str, &end, 10);
    out->balance_known = r->element[1]->len > 0 && *end == '\0';
    snprintf(out->audit_id, sizeof out->audit_id, "%s", r->element[2]->str);
    return r->element[0]->integer;
}

/* WAIT for o's replicas on the master of key's slot, after this run's write there. 0 or -EAGAIN
 * (out->error says so). */
static int mcredit_wait(rcluster_t *rc, const mcredit_opts_t *o, const char *key, const char *what,
                        money_credit_result_t *out)
{
    if (o->min_replicas <= 0)
        return 0;
    int ms = o->wait_ms > 0 ? o->wait_ms : 500;
    int n = rcluster_wait(rc, rcluster_key_slot(key, strlen(key)), o->min_replicas, ms);
    if (n >= o->min_replicas)
        return 0;
    if (n < 0)
        return mcredit_fail(out, -EAGAIN, "%s is applied but not durable: WAIT: %s", what,
                            rcluster_last_error(rc));
    return mcredit_fail(out, -EAGAIN,
                        "%s is applied but not durable: WAIT reached %d of %d replicas within %d "
                        "ms",
                        what, n, o->min_replicas, ms);
}

/*
 * Step 2: the money moves. 0 when it is done (now or by an earlier run), else the status with
 * out->error; *moved_nothing says whether the claim may be taken back (nothing was moved and
 * nothing is in flight).
 */
static int mcredit_move(rcluster_t *rc, const money_credit_t *cr, const mcredit_opts_t *o,
                        const char *wallet, money_credit_result_t *out, bool *moved_nothing)
{
    *moved_nothing = false;
    xfer_opts_t xo = {.wait_replicas = o->min_replicas, .wait_timeout_ms = o->wait_ms};
    xfer_t *x = xfer_create(rc, &xo);
    int rc2, status = 0;
    if (cr->amount > 0) {
        rc2 = xfer_seed(x, wallet, (long long)cr->amount, out->op_id);
        if (rc2 == -EPERM || rc2 == -EINVAL) {
            *moved_nothing = true;
            status = mcredit_fail(out, MONEY_ERR_BAD_ARGS, "MONEY_BAD_ARGS %s", xfer_last_error(x));
        } else if (rc2 != 0) {
            status = mcredit_fail(out, -EIO, "the credit to %s: %s", wallet, xfer_last_error(x));
        } else {
            status = mcredit_wait(rc, o, wallet, "the credit", out);
        }
    } else {
        xfer_result_t res;
        long long debit = -(long long)cr->amount;
        rc2 = xfer_transfer(x, out->op_id, wallet, MCREDIT_HOUSE_ACCOUNT, debit, &res);
        if (rc2 == 0 && res.state == XFER_COMPLETED) {
            status = 0;
        } else if (rc2 == 0) { /* REFUNDED: the house's account refused it, the chips are back */
            status = mcredit_fail(out, MONEY_ERR_REDIS, "the debit was refunded: %s", res.reason);
        } else if (rc2 == -ENOSPC) {
            long long bal = 0;
            xfer_balance(x, wallet, &bal);
            *moved_nothing = true;
            status = mcredit_fail(out, MONEY_ERR_INSUFFICIENT,
                                  "MONEY_INSUFFICIENT balance %lld is less than the debit %lld",
                                  bal, debit);
        } else if (rc2 == -EPERM || rc2 == -EINVAL || rc2 == -EEXIST) {
            *moved_nothing = rc2 != -EEXIST;
            status = mcredit_fail(out, MONEY_ERR_BAD_ARGS, "MONEY_BAD_ARGS %s", res.reason);
        } else if (rc2 == -EAGAIN) {
            status = mcredit_fail(out, -EAGAIN, "the debit is in flight (%s)", res.reason);
        } else if (rc2 == -ESTALE) {
            status = mcredit_fail(out, MONEY_ERR_REDIS, "the debit is stale: %s", res.reason);
        } else {
            status = mcredit_fail(out, -EIO, "the debit from %s: %s", wallet, res.reason);
        }
    }
    xfer_destroy(x);
    return status;
}

int mcredit_apply(rcluster_t *rc, const money_credit_t *cr, const mcredit_opts_t *o,
                  money_credit_result_t *out)
{
    static const mcredit_opts_t none = {0};
    if (o == NULL)
        o = &none;
    int rc0 = money_credit_check(cr, out);
    if (rc0 != 0)
        return rc0;
    char wallet[160], round[256], seen[256], amount[32], ttl[32], maxlen[32], opn[32], ts[32];
    char pending[256];
    if (mcluster_key_wallet(cr->player, wallet, sizeof wallet) != 0)
        return mcredit_fail(out, -EINVAL, "invalid player id '%s'", cr->player);
    money_key_round(out->round_id, round, sizeof round);
    snprintf(seen, sizeof seen, MONEY_AUDIT_SEEN_PREFIX "%s", out->op_id);
    snprintf(amount, sizeof amount, "%" PRId64, cr->amount);
    snprintf(ttl, sizeof ttl, "%ld", MONEY_RECORD_TTL_S);
    snprintf(maxlen, sizeof maxlen, "%ld", MONEY_AUDIT_MAXLEN);
    snprintf(opn, sizeof opn, "%ld", cr->operator_id);
    snprintf(ts, sizeof ts, "%lld", (long long)cr->unix_s);
    snprintf(pending, sizeof pending, "pending %s %s", cr->player, amount);

    /* 1. the claim */
    const char *cargv[] = {seen, round, cr->player, amount, ttl};
    redisReply *r = mcredit_eval(rc, mcredit_lua_claim, 2, 5, cargv);
    if (r == NULL)
        return mcredit_fail(out, -EIO, "redis: %s", rcluster_last_error(rc));
    if (r->type == REDIS_REPLY_ERROR) {
        int st = strncmp(r->str, "MONEY_BAD_ARGS", 14) == 0 ? MONEY_ERR_BAD_ARGS : MONEY_ERR_REDIS;
        mcredit_fail(out, st, "%s", r->str);
        freeReplyObject(r);
        return st;
    }
    long long claim = mcredit_triple(r, out);
    freeReplyObject(r);
    if (claim < 0)
        return mcredit_fail(out, MONEY_ERR_REDIS, "unexpected reply to the credit's claim");
    if (claim == 0) {
        out->replayed = true;
        return 0;
    }

    /* 2. the money */
    bool moved_nothing;
    int st = mcredit_move(rc, cr, o, wallet, out, &moved_nothing);
    if (st != 0) {
        if (moved_nothing) { /* nothing changed: the id is free again, as today's refusals */
            const char *uargv[] = {seen, pending};
            r = mcredit_eval(rc, mcredit_lua_unclaim, 1, 2, uargv);
            if (r != NULL)
                freeReplyObject(r);
        }
        return st;
    }

    /* 3. the booking: the balance read now, the settle record, the audit entry, once */
    int64_t bal = 0;
    bool exists;
    if (mcredit_balance(rc, cr->player, &bal, &exists) != 0)
        return mcredit_fail(out, -EIO, "the %s is applied; reading the wallet: %s (run it again)",
                            cr->amount > 0 ? "credit" : "debit", rcluster_last_error(rc));
    char balance[32];
    snprintf(balance, sizeof balance, "%" PRId64, bal);
    const char *bargv[] = {
        seen,     round,         MONEY_AUDIT_KEY, cr->player, amount,   ttl,
        maxlen,   balance,       "kind",          "credit",   "op_id",  out->op_id,
        "round",  out->round_id, "player",        cr->player, "amount", amount,
        "reason", cr->reason,    "operator",      opn,        "unix",   ts};
    r = mcredit_eval(rc, mcredit_lua_book, 3, (int)(sizeof bargv / sizeof bargv[0]), bargv);
    if (r == NULL)
        return mcredit_fail(out, -EIO, "the %s is applied; its booking: %s (run it again)",
                            cr->amount > 0 ? "credit" : "debit", rcluster_last_error(rc));
    long long booked = mcredit_triple(r, out);
    if (booked < 0) {
        mcredit_fail(out, MONEY_ERR_REDIS, "the %s is applied; its booking: %s",
                     cr->amount > 0 ? "credit" : "debit",
                     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        freeReplyObject(r);
        return MONEY_ERR_REDIS;
    }
    freeReplyObject(r);
    out->replayed = booked == 0;
    if (booked == 1 && (st = mcredit_wait(rc, o, seen, "the booking", out)) != 0)
        return st;
    out->status = 0;
    return 0;
}

int mcredit_balance(rcluster_t *rc, const char *player, int64_t *balance, bool *exists)
{
    char wallet[160];
    *balance = 0;
    *exists = false;
    if (mcluster_key_wallet(player, wallet, sizeof wallet) != 0)
        return -EINVAL;
    redisReply *r = rcluster_command(rc, RCLUSTER_RESEND, wallet, "GET %s", wallet);
    if (r == NULL)
        return -EIO;
    int status = 0;
    if (r->type == REDIS_REPLY_STRING) {
        char *end;
        errno = 0;
        long long v = strtoll(r->str, &end, 10);
        if (errno != 0 || end == r->str || *end != '\0')
            status = MONEY_ERR_REDIS;
        *balance = v;
        *exists = true;
    } else if (r->type != REDIS_REPLY_NIL) {
        status = MONEY_ERR_REDIS;
    }
    freeReplyObject(r);
    return status;
}
