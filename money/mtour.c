/*
 * mtour.c -- a tournament's money by entity (money/mtour.h; docs/tournaments.md "Tournaments by
 * entity"): a reserve and a booking in the tournament's slot around a transfer from the
 * player's slot, payouts decided under the fence and paid as transfers, each step idempotent.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "mtour.h"
#include "xfer.h"

struct mtour {
    rcluster_t *rc;
    xfer_t *x;
    mtour_opts_t o;
    rcluster_script_t *reserve, *book, *decide, *done, *move;
    char err[640];
};

/*
 * RESERVE. KEYS epoch, pay:<req>, paying. ARGV epoch, "<player> <buy-in> <fee>", ttl, member.
 * A record of this request: {state, why} (a replay, before the fence), or MTOUR_CONFLICT when
 * it names another player or amount. Else fenced (TOUR_STALE_EPOCH): the record "pending ...",
 * the member in :paying, {'new', ''}.
 */
static const char mtour_lua_reserve[] =
    "local rec = redis.call('GET', KEYS[2])\n"
    "if rec then\n"
    "  local st, p, b, f, why = string.match(rec, '^(%S+) (%S+) (%S+) (%S+) ?(.*)$')\n"
    "  if p .. ' ' .. b .. ' ' .. f ~= ARGV[2] then\n"
    "    return redis.error_reply('MTOUR_CONFLICT the request id was used for ' .. p .. ' ' ..\n"
    "      b .. ' + ' .. f) end\n"
    "  return {st, why}\n"
    "end\n"
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then\n"
    "  return redis.error_reply('TOUR_STALE_EPOCH') end\n"
    "redis.call('SET', KEYS[2], 'pending ' .. ARGV[2], 'EX', ARGV[3])\n"
    "redis.call('SADD', KEYS[3], ARGV[4])\n"
    "return {'new', ''}\n";

/*
 * BOOK. KEYS epoch, pay:<req>, paying, intake, pool, fees. ARGV epoch, "<player> <buy-in>
 * <fee>", ttl, member, outcome (paid / refused), why. Decided before: {state, why}. Else fenced:
 * paid -- buy-in + fee out of the intake (MTOUR_CORRUPT when it holds less), the buy-in into the
 * pool, the fee into the fees; the record final, the member out of :paying; {outcome, why}.
 */
static const char mtour_lua_book[] =
    "local rec = redis.call('GET', KEYS[2])\n"
    "if not rec then return redis.error_reply('MTOUR_CONFLICT no payment record') end\n"
    "local st, p, b, f, why = string.match(rec, '^(%S+) (%S+) (%S+) (%S+) ?(.*)$')\n"
    "if p .. ' ' .. b .. ' ' .. f ~= ARGV[2] then\n"
    "  return redis.error_reply('MTOUR_CONFLICT the request id was used for ' .. p) end\n"
    "if st ~= 'pending' then return {st, why} end\n"
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then\n"
    "  return redis.error_reply('TOUR_STALE_EPOCH') end\n"
    "if ARGV[5] == 'paid' then\n"
    "  local bi, fe = tonumber(b), tonumber(f)\n"
    "  local have = tonumber(redis.call('GET', KEYS[4]) or '0')\n"
    "  if not have or have < bi + fe then\n"
    "    return redis.error_reply('MTOUR_CORRUPT the intake holds less than the buy-in') end\n"
    "  redis.call('DECRBY', KEYS[4], bi + fe)\n"
    "  redis.call('INCRBY', KEYS[5], bi)\n"
    "  if fe > 0 then redis.call('INCRBY', KEYS[6], fe) end\n"
    "end\n"
    "local out = ARGV[5] .. ' ' .. ARGV[2]\n"
    "if ARGV[6] ~= '' then out = out .. ' ' .. ARGV[6] end\n"
    "redis.call('SET', KEYS[2], out, 'EX', ARGV[3])\n"
    "redis.call('SREM', KEYS[3], ARGV[4])\n"
    "return {ARGV[5], ARGV[6]}\n";

/*
 * DECIDE. KEYS epoch, out:<op>, paying. ARGV epoch, "<player> <amount>", ttl, member. Decided
 * before: 'replay' (before the fence), MTOUR_CONFLICT for another player or amount. Else fenced:
 * the decision, the member in :paying, 'new'.
 */
static const char mtour_lua_decide[] =
    "local rec = redis.call('GET', KEYS[2])\n"
    "if rec then\n"
    "  if rec ~= ARGV[2] then\n"
    "    return redis.error_reply('MTOUR_CONFLICT the op id was decided for ' .. rec) end\n"
    "  return 'replay'\n"
    "end\n"
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then\n"
    "  return redis.error_reply('TOUR_STALE_EPOCH') end\n"
    "redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])\n"
    "redis.call('SADD', KEYS[3], ARGV[4])\n"
    "return 'new'\n";

/*
 * MOVE, for two accounts that hash to one slot (a player's tag and a tournament's may: 1 in
 * 16384), where xfer refuses ("one script moves that"). KEYS src, dst, the record
 * {SRCTAG}:xl:<id>, the closed sets of src's and dst's tags. ARGV amount, ttl, dst. The same
 * outcomes as a transfer, at once: {'completed'|'refunded', 1 when decided before}, or
 * {'enospc'|'eperm', 0} with nothing moved; MTOUR_CONFLICT when the id was used for another move.
 */
static const char mtour_lua_move[] =
    "local rec = redis.call('GET', KEYS[3])\n"
    "if rec then\n"
    "  local st, a, d = string.match(rec, '^(%S+) (%S+) (%S+)$')\n"
    "  if a ~= ARGV[1] or d ~= ARGV[3] then\n"
    "    return redis.error_reply('MTOUR_CONFLICT the id was used for another move') end\n"
    "  return {st, 1}\n"
    "end\n"
    "local a = tonumber(ARGV[1])\n"
    "if redis.call('SISMEMBER', KEYS[4], KEYS[1]) == 1 then return {'eperm', 0} end\n"
    "local sv = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
    "if not sv or sv ~= math.floor(sv) then return {'eperm', 0} end\n"
    "if sv < a then return {'enospc', 0} end\n"
    "local dv = tonumber(redis.call('GET', KEYS[2]) or '0')\n"
    "local st = 'completed'\n"
    "if redis.call('SISMEMBER', KEYS[5], KEYS[2]) == 1 or not dv or dv ~= math.floor(dv)\n"
    "  or dv + a > 100000000000000 then st = 'refunded'\n"
    "else redis.call('DECRBY', KEYS[1], a) redis.call('INCRBY', KEYS[2], a) end\n"
    "redis.call('SET', KEYS[3], st .. ' ' .. ARGV[1] .. ' ' .. ARGV[3], 'EX', ARGV[2])\n"
    "return {st, 0}\n";

/* DONE. KEYS paying; ARGV member: a payout final (idempotent, unfenced: it only forgets). */
static const char mtour_lua_done[] = "return redis.call('SREM', KEYS[1], ARGV[1])\n";

static void mtour_set_err(mtour_t *mt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mtour_set_err(mtour_t *mt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(mt->err, sizeof mt->err, fmt, ap);
    va_end(ap);
}

mtour_t *mtour_create(rcluster_t *rc, const mtour_opts_t *o)
{
    mtour_t *mt = calloc(1, sizeof *mt);
    if (mt == NULL)
        abort();
    mt->rc = rc;
    if (o != NULL)
        mt->o = *o;
    mt->x = xfer_create(rc, &mt->o.xfer);
    mt->reserve = rcluster_script_create(mtour_lua_reserve);
    mt->book = rcluster_script_create(mtour_lua_book);
    mt->decide = rcluster_script_create(mtour_lua_decide);
    mt->done = rcluster_script_create(mtour_lua_done);
    mt->move = rcluster_script_create(mtour_lua_move);
    return mt;
}

void mtour_destroy(mtour_t *mt)
{
    if (mt == NULL)
        return;
    rcluster_script_destroy(mt->reserve);
    rcluster_script_destroy(mt->book);
    rcluster_script_destroy(mt->decide);
    rcluster_script_destroy(mt->done);
    rcluster_script_destroy(mt->move);
    xfer_destroy(mt->x);
    free(mt);
}

xfer_t *mtour_xfer(mtour_t *mt)
{
    return mt->x;
}

const char *mtour_last_error(const mtour_t *mt)
{
    return mt->err;
}

static bool mtour_decimal(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 20 || s[0] == '0')
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* 1..max of [A-Za-z0-9_.:-] (a request id, an op id). */
static bool mtour_idtext(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == ':' || c == '-'))
            return false;
    }
    return true;
}

int mtour_key(const char *tour, const char *what, char *out, size_t len)
{
    if (tour == NULL || !mtour_decimal(tour))
        return -EINVAL;
    int n = snprintf(out, len, "{t:%s}:%s", tour, what);
    return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

int mtour_claim(mtour_t *mt, const char *tour, long long *epoch)
{
    char k[64];
    if (mtour_key(tour, "epoch", k, sizeof k) != 0) {
        mtour_set_err(mt, "bad tournament id");
        return -EINVAL;
    }
    redisReply *r = rcluster_command(mt->rc, 0, k, "INCR %s", k);
    int rc = r != NULL && r->type == REDIS_REPLY_INTEGER ? 0 : -EIO;
    if (rc == 0)
        *epoch = r->integer;
    else
        mtour_set_err(mt, "INCR %s: %s", k,
                      r == NULL ? rcluster_last_error(mt->rc) : (r->str ? r->str : "bad reply"));
    freeReplyObject(r);
    return rc;
}

/* WAIT for the replicas of the options on the master of key's slot. 0 or -EAGAIN. */
static int mtour_wait(mtour_t *mt, const char *key, const char *what)
{
    int want = mt->o.xfer.wait_replicas;
    if (want <= 0)
        return 0;
    int ms = mt->o.xfer.wait_timeout_ms > 0 ? mt->o.xfer.wait_timeout_ms : 500;
    int n = rcluster_wait(mt->rc, rcluster_key_slot(key, strlen(key)), want, ms);
    if (n >= want)
        return 0;
    mtour_set_err(mt, "%s is applied but not durable: WAIT reached %d of %d replicas", what, n,
                  want);
    return -EAGAIN;
}

/* Runs one script; the reply, or NULL with mt->err and *rc (-EIO, -ESTALE, -EEXIST, -EPROTO). */
static redisReply *mtour_eval(mtour_t *mt, rcluster_script_t *s, int nkeys, int argc,
                              const char **argv, int *rc)
{
    redisReply *r = rcluster_eval(mt->rc, s, RCLUSTER_RESEND, nkeys, argc, argv, NULL);
    if (r == NULL) {
        mtour_set_err(mt, "%s", rcluster_last_error(mt->rc));
        *rc = -EIO;
        return NULL;
    }
    if (r->type != REDIS_REPLY_ERROR)
        return r;
    mtour_set_err(mt, "%s", r->str);
    if (strstr(r->str, "TOUR_STALE_EPOCH") != NULL)
        *rc = -ESTALE;
    else if (strstr(r->str, "MTOUR_CONFLICT") != NULL)
        *rc = -EEXIST;
    else
        *rc = -EPROTO;
    freeReplyObject(r);
    return NULL;
}

/* A reply {state, why}: fills res; 0, or -EPROTO. */
static int mtour_pair(const redisReply *r, mtour_result_t *res, bool *is_new)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING)
        return -EPROTO;
    const char *st = r->element[0]->str, *why = r->element[1]->str;
    *is_new = strcmp(st, "new") == 0;
    res->state = strcmp(st, "paid") == 0      ? MTOUR_PAID
                 : strcmp(st, "refused") == 0 ? MTOUR_REFUSED
                                              : MTOUR_PENDING;
    res->why = strcmp(why, "insufficient") == 0 ? MTOUR_WHY_INSUFFICIENT
               : strcmp(why, "wallet") == 0     ? MTOUR_WHY_WALLET
               : strcmp(why, "closed") == 0     ? MTOUR_WHY_CLOSED
                                                : MTOUR_WHY_NONE;
    if (res->state == MTOUR_REFUSED && res->reason[0] == '\0')
        snprintf(res->reason, sizeof res->reason, "refused: %s", why);
    return 0;
}

/*
 * Moves amount from src to dst under id: an xfer transfer when they are in two slots, else the
 * MOVE script above (final at once). Returns and fills xr as xfer_transfer().
 */
static int mtour_move(mtour_t *mt, const char *id, const char *src, const char *dst,
                      long long amount, xfer_result_t *xr)
{
    if (rcluster_key_slot(src, strlen(src)) != rcluster_key_slot(dst, strlen(dst)))
        return xfer_transfer(mt->x, id, src, dst, amount, xr);
    memset(xr, 0, sizeof *xr);
    char rec[XFER_MAX_KEY + XFER_MAX_ID + 8], sxc[XFER_MAX_KEY + 8], dxc[XFER_MAX_KEY + 8];
    char suffix[XFER_MAX_ID + 8], amt[24], ttl[24];
    snprintf(suffix, sizeof suffix, ":xl:%s", id);
    snprintf(amt, sizeof amt, "%lld", amount);
    snprintf(ttl, sizeof ttl, "%d", MTOUR_RECORD_TTL_S);
    if (xfer_tag_key(src, suffix, rec, sizeof rec) != 0 ||
        xfer_tag_key(src, ":xc", sxc, sizeof sxc) != 0 ||
        xfer_tag_key(dst, ":xc", dxc, sizeof dxc) != 0) {
        snprintf(xr->reason, sizeof xr->reason, "bad account or id");
        return -EINVAL;
    }
    const char *argv[] = {src, dst, rec, sxc, dxc, amt, ttl, dst};
    int rc = 0;
    redisReply *r = mtour_eval(mt, mt->move, 5, 8, argv, &rc);
    if (r == NULL) {
        snprintf(xr->reason, sizeof xr->reason, "%.600s", mt->err);
        return rc == -EEXIST ? -EEXIST : -EIO;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        snprintf(xr->reason, sizeof xr->reason, "move: bad reply");
        return -EIO;
    }
    const char *st = r->element[0]->str;
    xr->replayed = r->element[1]->integer == 1;
    if (strcmp(st, "completed") == 0) {
        xr->state = XFER_COMPLETED;
    } else if (strcmp(st, "refunded") == 0) {
        xr->state = XFER_REFUNDED;
        snprintf(xr->reason, sizeof xr->reason, "%s refused the credit (closed or full)", dst);
    } else {
        rc = strcmp(st, "enospc") == 0 ? -ENOSPC : -EPERM;
        snprintf(xr->reason, sizeof xr->reason, "%s %s", src,
                 rc == -ENOSPC ? "holds less than the amount" : "is closed or holds no integer");
    }
    freeReplyObject(r);
    if (rc == 0 && !xr->replayed && mt->o.xfer.wait_replicas > 0 &&
        mtour_wait(mt, rec, "the move") != 0) {
        xr->state = XFER_DEBITED; /* applied, not durable: the same call again answers it */
        snprintf(xr->reason, sizeof xr->reason, "%.600s", mt->err);
        return -EAGAIN;
    }
    return rc;
}

/*
 * The buy-in's transfer id, unique in the wallet's outbox across tournaments:
 * "t<tour>.in.<req>", or "t<tour>.in.h<SHA-1 of req>" when that passes XFER_MAX_ID.
 */
static void mtour_in_id(const char *tour, const char *req, char *out, size_t len)
{
    int n = snprintf(out, len, "t%s.in.%s", tour, req);
    if (n > 0 && (size_t)n <= XFER_MAX_ID && (size_t)n < len)
        return;
    unsigned char md[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)req, strlen(req), md);
    char hex[2 * SHA_DIGEST_LENGTH + 1];
    for (int i = 0; i < SHA_DIGEST_LENGTH; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    snprintf(out, len, "t%s.in.h%s", tour, hex);
}

int mtour_buyin(mtour_t *mt, const char *tour, long long epoch, const char *req, const char *player,
                long long buyin, long long fee, mtour_result_t *res)
{
    memset(res, 0, sizeof *res);
    mt->err[0] = '\0';
    char wallet[XFER_MAX_KEY + 1], intake[64], pool[64], fees[64], ek[64], paying[64];
    char pay[128], what[160], ep[24], ttl[24], member[100], xid[XFER_MAX_ID + 1];
    if (!mtour_decimal(tour) || !mtour_idtext(req, 92) || buyin < 1 || fee < 0 ||
        buyin + fee > XFER_MAX_AMOUNT || player == NULL || player[0] == '\0' ||
        strpbrk(player, "{} ") != NULL) {
        mtour_set_err(mt, "bad buy-in: tournament, request id, player or amount");
        return -EINVAL;
    }
    snprintf(wallet, sizeof wallet, "{p:%s}:bal", player);
    if (xfer_account_check(wallet, mt->err, sizeof mt->err) != 0)
        return -EINVAL;
    mtour_key(tour, "bal:in", intake, sizeof intake);
    mtour_key(tour, "bal", pool, sizeof pool);
    mtour_key(tour, "bal:fees", fees, sizeof fees);
    mtour_key(tour, "epoch", ek, sizeof ek);
    mtour_key(tour, "paying", paying, sizeof paying);
    snprintf(pay, sizeof pay, "{t:%s}:pay:%s", tour, req);
    snprintf(what, sizeof what, "%s %lld %lld", player, buyin, fee);
    snprintf(ep, sizeof ep, "%lld", epoch);
    snprintf(ttl, sizeof ttl, "%d", MTOUR_RECORD_TTL_S);
    snprintf(member, sizeof member, "in.%s", req);
    mtour_in_id(tour, req, xid, sizeof xid);

    /* 1. RESERVE */
    int rc = 0;
    bool is_new = false;
    const char *ra[] = {ek, pay, paying, ep, what, ttl, member};
    redisReply *r = mtour_eval(mt, mt->reserve, 3, 7, ra, &rc);
    if (r == NULL)
        return rc;
    rc = mtour_pair(r, res, &is_new);
    freeReplyObject(r);
    if (rc != 0) {
        mtour_set_err(mt, "reserve: bad reply");
        return rc;
    }
    if (res->state != MTOUR_PENDING) { /* decided before */
        res->replayed = true;
        return 0;
    }
    if (is_new && (rc = mtour_wait(mt, pay, "the reservation")) != 0)
        return rc; /* nothing debited yet: the same call again goes on */

    /* 2. the transfer wallet -> intake */
    xfer_result_t xr;
    rc = mtour_move(mt, xid, wallet, intake, buyin + fee, &xr);
    const char *outcome, *why = "";
    if (rc == 0 && xr.state == XFER_COMPLETED) {
        outcome = "paid";
    } else if (rc == 0 && xr.state == XFER_REFUNDED) {
        outcome = "refused", why = "closed";
        snprintf(res->reason, sizeof res->reason, "the tournament's intake refused it: %.560s",
                 xr.reason);
    } else if (rc == -ENOSPC || rc == -EPERM) {
        outcome = "refused", why = rc == -ENOSPC ? "insufficient" : "wallet";
        snprintf(res->reason, sizeof res->reason, "%s", xr.reason);
    } else {
        res->state = MTOUR_PENDING;
        mtour_set_err(mt, "buy-in %s in flight: %s", xid, xr.reason);
        return rc == -EEXIST ? -EEXIST : -EAGAIN;
    }

    /* 3. BOOK */
    const char *ba[] = {ek, pay, paying, intake, pool, fees, ep, what, ttl, member, outcome, why};
    r = mtour_eval(mt, mt->book, 6, 12, ba, &rc);
    if (r == NULL)
        return rc;
    bool replay_new;
    rc = mtour_pair(r, res, &replay_new);
    freeReplyObject(r);
    if (rc != 0) {
        mtour_set_err(mt, "book: bad reply");
        return rc;
    }
    if ((rc = mtour_wait(mt, pay, "the booking")) != 0) {
        res->state = MTOUR_PENDING;
        return rc;
    }
    return 0;
}

/* A payout from the pool, or from the fees (fees: a fee refunded), as the header says. */
static int mtour_pay(mtour_t *mt, const char *tour, long long epoch, const char *op,
                     const char *player, long long amount, bool fees, mtour_result_t *res)
{
    memset(res, 0, sizeof *res);
    mt->err[0] = '\0';
    char wallet[XFER_MAX_KEY + 1], pool[64], ek[64], paying[64], out[128], what[160];
    char ep[24], ttl[24], member[100], xid[XFER_MAX_ID + 1];
    if (!mtour_decimal(tour) || !mtour_idtext(op, 80) || amount < 1 || amount > XFER_MAX_AMOUNT ||
        player == NULL || player[0] == '\0' || strpbrk(player, "{} ") != NULL) {
        mtour_set_err(mt, "bad payout: tournament, op id, player or amount");
        return -EINVAL;
    }
    snprintf(wallet, sizeof wallet, "{p:%s}:bal", player);
    if (xfer_account_check(wallet, mt->err, sizeof mt->err) != 0)
        return -EINVAL;
    mtour_key(tour, fees ? "bal:fees" : "bal", pool, sizeof pool);
    mtour_key(tour, "epoch", ek, sizeof ek);
    mtour_key(tour, "paying", paying, sizeof paying);
    snprintf(out, sizeof out, "{t:%s}:out:%s", tour, op);
    snprintf(what, sizeof what, "%s %lld%s", player, amount, fees ? " fees" : "");
    snprintf(ep, sizeof ep, "%lld", epoch);
    snprintf(ttl, sizeof ttl, "%d", MTOUR_RECORD_TTL_S);
    snprintf(member, sizeof member, "out.%s", op);
    snprintf(xid, sizeof xid, "out.%s", op);

    int rc = 0;
    const char *da[] = {ek, out, paying, ep, what, ttl, member};
    redisReply *r = mtour_eval(mt, mt->decide, 3, 7, da, &rc);
    if (r == NULL)
        return rc;
    bool is_new = r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING
                      ? strcmp(r->str, "new") == 0
                      : false;
    res->replayed = !is_new;
    freeReplyObject(r);
    if (is_new && (rc = mtour_wait(mt, out, "the payout's decision")) != 0)
        return rc;

    xfer_result_t xr;
    rc = mtour_move(mt, xid, pool, wallet, amount, &xr);
    if (rc == -ENOSPC || rc == -EPERM || rc == -EEXIST) {
        mtour_set_err(mt, "payout %s: %s", xid, xr.reason);
        return rc;
    }
    if (rc != 0 || xr.state == XFER_DEBITED) {
        res->state = MTOUR_PENDING;
        mtour_set_err(mt, "payout %s in flight: %s", xid, xr.reason);
        return -EAGAIN;
    }
    res->replayed = res->replayed || xr.replayed;
    res->state = xr.state == XFER_COMPLETED ? MTOUR_PAID : MTOUR_REFUSED;
    if (res->state == MTOUR_REFUSED) {
        res->why = MTOUR_WHY_WALLET;
        snprintf(res->reason, sizeof res->reason, "the wallet refused it: %.560s", xr.reason);
    }
    const char *na[] = {paying, member};
    r = mtour_eval(mt, mt->done, 1, 2, na, &rc);
    if (r == NULL)
        return rc == -EIO ? -EAGAIN : rc; /* paid; the index is forgotten at the next drive */
    freeReplyObject(r);
    return 0;
}

int mtour_payout(mtour_t *mt, const char *tour, long long epoch, const char *op, const char *player,
                 long long amount, mtour_result_t *res)
{
    return mtour_pay(mt, tour, epoch, op, player, amount, false, res);
}

int mtour_refund_fee(mtour_t *mt, const char *tour, long long epoch, const char *op,
                     const char *player, long long amount, mtour_result_t *res)
{
    return mtour_pay(mt, tour, epoch, op, player, amount, true, res);
}

/* One member of :paying driven from its record. 0 final, else as the call it makes. */
static int mtour_drive_one(mtour_t *mt, const char *tour, long long epoch, const char *m)
{
    char key[160];
    bool in = strncmp(m, "in.", 3) == 0;
    if (!in && strncmp(m, "out.", 4) != 0) {
        mtour_set_err(mt, "unknown member %s of the paying set", m);
        return -EPROTO;
    }
    const char *id = m + (in ? 3 : 4);
    snprintf(key, sizeof key, "{t:%s}:%s:%s", tour, in ? "pay" : "out", id);
    redisReply *r = rcluster_command(mt->rc, RCLUSTER_RESEND, key, "GET %s", key);
    if (r == NULL) {
        mtour_set_err(mt, "GET %s: %s", key, rcluster_last_error(mt->rc));
        return -EIO;
    }
    char p[XFER_MAX_KEY + 1] = "", st[16] = "", src[8] = "";
    long long a = 0, b = 0;
    int n = 0;
    if (r->type == REDIS_REPLY_STRING)
        n = in ? sscanf(r->str, "%15s %200s %lld %lld", st, p, &a, &b)
               : sscanf(r->str, "%200s %lld %7s", p, &a, src);
    freeReplyObject(r);
    if (in ? n != 4 : n < 2 || (n == 3 && strcmp(src, "fees") != 0)) {
        mtour_set_err(mt, "%s: no usable record", key);
        return -EPROTO;
    }
    mtour_result_t res;
    return in ? mtour_buyin(mt, tour, epoch, id, p, a, b, &res)
              : mtour_pay(mt, tour, epoch, id, p, a, n == 3, &res);
}

int mtour_drive(mtour_t *mt, const char *tour, long long epoch, mtour_drive_stats_t *st)
{
    mtour_drive_stats_t s = {0};
    char paying[64];
    if (mtour_key(tour, "paying", paying, sizeof paying) != 0) {
        mtour_set_err(mt, "bad tournament id");
        return -EINVAL;
    }
    redisReply *r = rcluster_command(mt->rc, RCLUSTER_RESEND, paying, "SMEMBERS %s", paying);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        mtour_set_err(mt, "SMEMBERS %s: %s", paying,
                      r == NULL ? rcluster_last_error(mt->rc) : "bad reply");
        freeReplyObject(r);
        return -EIO;
    }
    int rc = 0;
    char last[640] = "";
    for (size_t i = 0; i < r->elements; i++) {
        if (r->element[i]->type != REDIS_REPLY_STRING)
            continue;
        s.found++;
        int one = mtour_drive_one(mt, tour, epoch, r->element[i]->str);
        if (one == 0) {
            s.settled++;
            continue;
        }
        snprintf(last, sizeof last, "%s", mt->err);
        if (one == -ESTALE) {
            rc = -ESTALE;
            break;
        }
        if (one == -EAGAIN || one == -EIO)
            s.pending++;
        else
            s.errors++;
    }
    freeReplyObject(r);
    if (st != NULL)
        *st = s;
    if (last[0] != '\0')
        snprintf(mt->err, sizeof mt->err, "%s", last);
    if (rc != 0)
        return rc;
    return s.pending > 0 || s.errors > 0 ? -EAGAIN : 0;
}

int mtour_close_intake(mtour_t *mt, const char *tour)
{
    char intake[64];
    if (mtour_key(tour, "bal:in", intake, sizeof intake) != 0) {
        mtour_set_err(mt, "bad tournament id");
        return -EINVAL;
    }
    int rc = xfer_account_close(mt->x, intake, true);
    if (rc != 0)
        mtour_set_err(mt, "%s", xfer_last_error(mt->x));
    return rc;
}

int mtour_overlay(mtour_t *mt, const char *tour, long long amount, mtour_result_t *res)
{
    memset(res, 0, sizeof *res);
    char pool[64], xid[64];
    if (mtour_key(tour, "bal", pool, sizeof pool) != 0 || amount < 1) {
        mtour_set_err(mt, "bad overlay: tournament or amount");
        return -EINVAL;
    }
    snprintf(xid, sizeof xid, "t%s.overlay", tour);
    xfer_result_t xr;
    int rc = mtour_move(mt, xid, MTOUR_HOUSE_OVERLAY, pool, amount, &xr);
    res->replayed = xr.replayed;
    res->state = rc == 0 && xr.state == XFER_COMPLETED  ? MTOUR_PAID
                 : rc == 0 && xr.state == XFER_REFUNDED ? MTOUR_REFUSED
                                                        : MTOUR_PENDING;
    snprintf(res->reason, sizeof res->reason, "%s", xr.reason);
    if (rc != 0)
        mtour_set_err(mt, "overlay %s: %s", xid, xr.reason);
    return rc;
}

int mtour_fees_sweep(mtour_t *mt, const char *tour, long long *swept)
{
    char fees[64];
    long long have = 0;
    if (swept != NULL)
        *swept = 0;
    if (mtour_key(tour, "bal:fees", fees, sizeof fees) != 0) {
        mtour_set_err(mt, "bad tournament id");
        return -EINVAL;
    }
    xfer_record_t rec;
    xfer_result_t xr;
    int rc = xfer_status(mt->x, fees, "fees", &rec);
    if (rc == 0) { /* swept before: finish it if it is in flight */
        rc = rec.state == XFER_DEBITED ? xfer_resume(mt->x, fees, "fees", &xr) : 0;
        if (rc == 0 && swept != NULL)
            *swept = rec.amount;
        if (rc != 0)
            mtour_set_err(mt, "fees: %s", xr.reason);
        return rc == 0 ? 0 : rc == -EIO ? -EIO : -EAGAIN;
    }
    if (rc != -ENOENT) {
        mtour_set_err(mt, "fees: %s", xfer_last_error(mt->x));
        return -EIO;
    }
    if ((rc = xfer_balance(mt->x, fees, &have)) != 0) {
        mtour_set_err(mt, "fees: %s", xfer_last_error(mt->x));
        return rc;
    }
    if (have == 0)
        return 0;
    rc = mtour_move(mt, "fees", fees, MTOUR_HOUSE_FEES, have, &xr);
    if (rc == 0 && swept != NULL)
        *swept = have;
    if (rc != 0) {
        mtour_set_err(mt, "fees: %s", xr.reason);
        return rc == -EIO ? -EIO : -EAGAIN;
    }
    return 0;
}
