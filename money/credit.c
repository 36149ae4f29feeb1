/*
 * Operator credits: an idempotent wallet adjustment booked like a round (money.h, "Operator
 * credits"; docs/ops.md). One script does the whole credit, so it is applied with its settle
 * record and its audit entry or not at all. Also money_sync_wait_replicas, the replication wait
 * of the money calls outside the writer (credits, money/jobs.c).
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"

/*
 * KEYS[1] wallet, KEYS[2] settle record, KEYS[3] house account (a rake account),
 * KEYS[4] audit stream, KEYS[5] audit seen record.
 * ARGV[1] player, ARGV[2] amount (non-zero), ARGV[3] record ttl (s), ARGV[4] stream MAXLEN,
 * ARGV[5..] the audit entry's field/value pairs (balance_after is added here).
 * Returns {1, balance after, audit id} applied now, {0, balance after, audit id} applied before
 * (the first result; "" for what is no longer known), or an error "MONEY_... reason" with
 * nothing changed. The seen record holds "<audit id> <player> <amount>", so an op id reused for
 * another credit is refused even once its audit entry left the stream.
 * Numbers are formatted with '%d' (tostring() would print 1e+14).
 */
static const char money_lua_credit[] =
    "local call, format = redis.call, string.format\n"
    "local MAX = 100000000000000\n"
    "local seen, rec = call('GET', KEYS[5]), call('GET', KEYS[2])\n"
    "if seen or rec then\n"
    "  local sid, p, a = '', nil, nil\n"
    "  if seen then\n"
    "    sid, p, a = string.match(seen, '^(%S+) (%S+) (%S+)$')\n"
    "    if not sid then sid = seen end\n"
    "  end\n"
    "  if p and (p ~= ARGV[1] or a ~= ARGV[2]) then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS the op id was used for ' .. a ..\n"
    "      ' chips to ' .. p) end\n"
    "  return {0, rec or '', sid}\n"
    "end\n"
    "local amount, ttl, maxlen = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])\n"
    "if not amount or amount % 1 ~= 0 or amount == 0 or amount > MAX or amount < -MAX or\n"
    "   not ttl or ttl <= 0 or not maxlen or maxlen <= 0 or (#ARGV - 4) % 2 ~= 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS amount, ttl or audit fields malformed') end\n"
    "local bal = tonumber(call('GET', KEYS[1]) or '0')\n"
    "if not bal then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS wallet ' .. KEYS[1] .. ' does not hold an "
    "integer')\n"
    "end\n"
    "local hv = call('GET', KEYS[3]) or '0'\n"
    "if #hv > 18 or not string.find(hv, '^%-?%d+$') then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS account ' .. KEYS[3] .. ' does not hold an "
    "integer')\n"
    "end\n"
    "local house = tonumber(hv)\n"
    "if bal + amount < 0 then\n"
    "  return redis.error_reply(format('MONEY_INSUFFICIENT balance %d is less than the debit %d',\n"
    "    bal, -amount)) end\n"
    "if bal + amount > MAX or house - amount > MAX or house - amount < -MAX then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS a balance would exceed the maximum') end\n"
    "local res = format('%d', call('INCRBY', KEYS[1], ARGV[2]))\n"
    "call('SET', KEYS[3], format('%d', house - amount))\n"
    "call('SET', KEYS[2], res, 'EX', ttl)\n"
    "local id = call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'balance_after', res,\n"
    "  unpack(ARGV, 5))\n"
    "call('SET', KEYS[5], id .. ' ' .. ARGV[1] .. ' ' .. ARGV[2], 'EX', ttl)\n"
    "return {1, res, id}\n";

static int credit_fail(money_credit_result_t *out, int status, const char *fmt, const char *arg)
{
    out->status = status;
    snprintf(out->error, sizeof out->error, fmt, arg);
    return status;
}

/* The status of a "MONEY_..." error reply, as money.c maps them. */
static int credit_error_status(const char *s)
{
    if (strncmp(s, "MONEY_INSUFFICIENT", 18) == 0)
        return MONEY_ERR_INSUFFICIENT;
    if (strncmp(s, "MONEY_BAD_ARGS", 14) == 0)
        return MONEY_ERR_BAD_ARGS;
    return MONEY_ERR_REDIS;
}

int money_credit_ids(const char *id, char *op_id, char *round_id, size_t len)
{
    if (id == NULL || id[0] == '\0' || strlen(id) > MONEY_CREDIT_ID_MAX)
        return -EINVAL;
    if (snprintf(op_id, len, MONEY_CREDIT_OP_PREFIX "%s", id) >= (int)len ||
        snprintf(round_id, len, MONEY_CREDIT_ROUND_PREFIX "%s", id) >= (int)len)
        return -ENOSPC;
    return money_valid_op_id(op_id) ? 0 : -EINVAL;
}

bool money_credit_round(const char *round_id)
{
    return round_id != NULL &&
           strncmp(round_id, MONEY_CREDIT_ROUND_PREFIX, strlen(MONEY_CREDIT_ROUND_PREFIX)) == 0;
}

int money_credit_check(const money_credit_t *cr, money_credit_result_t *out)
{
    memset(out, 0, sizeof *out);
    if (!money_valid_player(cr->player))
        return credit_fail(out, -EINVAL, "invalid player id '%s'", cr->player ? cr->player : "");
    if (cr->amount == 0 || cr->amount > MONEY_MAX_AMOUNT || cr->amount < -MONEY_MAX_AMOUNT)
        return credit_fail(out, -EINVAL, "%s",
                           "the amount must be a non-zero integer of at most 1e14");
    if (cr->reason == NULL || cr->reason[0] == '\0' || strlen(cr->reason) > MONEY_CREDIT_REASON_MAX)
        return credit_fail(out, -EINVAL, "%s", "the reason must be 1..200 characters");
    for (const char *p = cr->reason; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return credit_fail(out, -EINVAL, "%s", "the reason must be printable text");
    if (money_credit_ids(cr->id, out->op_id, out->round_id, sizeof out->op_id) != 0)
        return credit_fail(out, -EINVAL, "invalid credit id '%s'", cr->id ? cr->id : "");
    return 0;
}

int money_sync_credit(redisContext *c, const money_credit_t *cr, money_credit_result_t *out)
{
    int vrc = money_credit_check(cr, out);
    if (vrc != 0)
        return vrc;
    char wallet[160], round[256], house[160], seen[256];
    char amount[32], ttl[32], maxlen[32], opn[32], ts[32];
    money_key_wallet(cr->player, wallet, sizeof wallet);
    money_key_round(out->round_id, round, sizeof round);
    money_key_rake(MONEY_CREDIT_ACCOUNT, house, sizeof house);
    snprintf(seen, sizeof seen, MONEY_AUDIT_SEEN_PREFIX "%s", out->op_id);
    snprintf(amount, sizeof amount, "%" PRId64, cr->amount);
    snprintf(ttl, sizeof ttl, "%ld", MONEY_RECORD_TTL_S);
    snprintf(maxlen, sizeof maxlen, "%ld", MONEY_AUDIT_MAXLEN);
    snprintf(opn, sizeof opn, "%ld", cr->operator_id);
    snprintf(ts, sizeof ts, "%lld", (long long)cr->unix_s);
    const char *argv[] = {
        "EVAL",  money_lua_credit, "5",        wallet,        round,    house,      MONEY_AUDIT_KEY,
        seen,    cr->player,       amount,     ttl,           maxlen,   "kind",     "credit",
        "op_id", out->op_id,       "round",    out->round_id, "player", cr->player, "amount",
        amount,  "reason",         cr->reason, "operator",    opn,      "unix",     ts};
    redisReply *r = redisCommandArgv(c, (int)(sizeof argv / sizeof argv[0]), argv, NULL);
    if (r == NULL)
        return credit_fail(out, -EIO, "redis: %s", c->errstr);
    int rc = 0;
    if (r->type == REDIS_REPLY_ERROR) {
        rc = credit_fail(out, credit_error_status(r->str), "%s", r->str);
    } else if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
               r->element[0]->type != REDIS_REPLY_INTEGER ||
               r->element[1]->type != REDIS_REPLY_STRING ||
               r->element[2]->type != REDIS_REPLY_STRING) {
        rc = credit_fail(out, MONEY_ERR_REDIS, "%s", "unexpected reply to the credit script");
    } else {
        out->replayed = r->element[0]->integer == 0;
        char *end;
        out->balance_after = strtoll(r->element[1]->str, &end, 10);
        out->balance_known = r->element[1]->len > 0 && *end == '\0';
        snprintf(out->audit_id, sizeof out->audit_id, "%s", r->element[2]->str);
    }
    freeReplyObject(r);
    out->status = rc;
    return rc;
}

/* Connected replicas the master c knows of (ROLE's third element), or -1 when c is not
 * answering as a master. */
static int money_role_replicas(redisContext *c)
{
    redisReply *r = redisCommand(c, "ROLE");
    int n = -1;
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements >= 3 &&
        r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "master") == 0 &&
        r->element[2]->type == REDIS_REPLY_ARRAY)
        n = (int)r->element[2]->elements;
    if (r != NULL)
        freeReplyObject(r);
    return n;
}

int money_sync_wait_replicas(redisContext *c, int min_replicas, int wait_ms,
                             money_wait_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->got = -1;
    if (min_replicas < 0)
        min_replicas = 0;
    if (wait_ms <= 0)
        wait_ms = 500;
    int connected = money_role_replicas(c);
    out->want = connected > min_replicas ? connected : min_replicas;
    if (out->want == 0) {
        out->got = 0;
        return 0;
    }
    redisReply *r = redisCommand(c, "WAIT %d %d", out->want, wait_ms);
    if (r != NULL && r->type == REDIS_REPLY_INTEGER)
        out->got = (int)r->integer;
    if (out->got >= min_replicas) {
        freeReplyObject(r);
        return 0;
    }
    if (r == NULL)
        snprintf(out->error, sizeof out->error, "no reply to WAIT (%s)",
                 c->errstr[0] ? c->errstr : "connection lost");
    else if (r->type == REDIS_REPLY_INTEGER)
        snprintf(out->error, sizeof out->error, "WAIT reached %d of %d replicas within %d ms",
                 out->got, min_replicas, wait_ms);
    else
        snprintf(out->error, sizeof out->error, "WAIT refused: %s",
                 r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    if (r != NULL)
        freeReplyObject(r);
    return -1;
}
