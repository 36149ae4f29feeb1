/*
 * mcluster_handoff.c -- whole-table moves with the money by entity (money/mcluster.h "whole-table
 * moves"; docs/queues.md "Whole-table moves by entity"): the offer, its read and withdrawal in
 * the offering epoch's slot, and the adoption as a claim in that slot followed by one xfer
 * transfer per seat account into the adopter's slot. The scripts are here too; the offer and
 * the withdrawal are money.h's own scripts with {s}:live as their fence.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcluster_int.h"
#include "money_int.h"
#include "xfer_int.h"
#include "xmalloc.h"

#define HO_STATE_MAX (64 * 1024)

#define HO_LUA_PRELUDE                                                                             \
    "local call, format = redis.call, string.format\n"                                             \
    "local MAX = 100000000000000\n"                                                                \
    "local function int(s)\n"                                                                      \
    "  local n = tonumber(s)\n"                                                                    \
    "  if n and n % 1 == 0 and n <= MAX and n >= -MAX then return n end\n"                         \
    "  return nil\n"                                                                               \
    "end\n"                                                                                        \
    "local function err(s) return redis.error_reply(s) end\n"

/*
 * HOLD (the adopter's slot, before the claim). KEYS: {s}:live, {s}:held, then n seat accounts.
 * ARGV: epoch, n, then n pairs (account name, owner). Fenced by {s}:live; every account is
 * checked first (one held for another owner with chips refuses the whole), then each is recorded
 * as held for its owner, so that no credit of the move reaches an account without its record.
 * {1, '0'}.
 */
static const char ho_lua_hold[] = HO_LUA_PRELUDE
    "local cur = call('GET', KEYS[1])\n"
    "if cur ~= ARGV[1] then\n"
    "  return err('MONEY_STALE_EPOCH adopter epoch ' .. ARGV[1] .. ', current ' ..\n"
    "    (cur or 'none')) end\n"
    "local n = int(ARGV[2])\n"
    "if not n or n < 0 or #KEYS ~= 2 + n or #ARGV ~= 2 + 2 * n then\n"
    "  return err('MONEY_BAD_ARGS malformed hold') end\n"
    "for i = 1, n do\n"
    "  local acct, owner = ARGV[1 + 2 * i], ARGV[2 + 2 * i]\n"
    "  local held = call('HGET', KEYS[2], acct)\n"
    "  if held and held ~= owner then\n"
    "    local b = int(call('GET', KEYS[2 + i]) or '0')\n"
    "    if not b or b > 0 then\n"
    "      return err('MONEY_BAD_ARGS seat account ' .. acct .. ' holds chips of ' .. held) end\n"
    "  end\n"
    "end\n"
    "for i = 1, n do call('HSET', KEYS[2], ARGV[1 + 2 * i], ARGV[2 + 2 * i]) end\n"
    "return {1, '0'}\n";

/*
 * CLAIM (the old epoch's slot). KEYS: the offer, {s}:live, {s}:held, the outbox index {s}:xo,
 * the slot's registry {Q}:xq, the closed set {s}:xc, then n pairs (seat account, outbox record
 * {s}:xo:<id>). ARGV: old epoch, adopter id, offer id, n, then n quadruples (account name,
 * owner, destination account key, transfer id).
 * An offer adopted by this adopter answers {0, stacks} (counting the sight with a write, for the
 * caller's WAIT); by another MONEY_ADOPTED; withdrawn or void MONEY_OFFER_VOID, and so is an
 * offer whose epoch is no longer live (a recovery began). Otherwise every account must be the
 * offer's, held for its owner, open and hold an integer; then each is emptied into an outbox
 * record DEBITED (money/xfer.h's format: the credit, ack, resend and sweeper are xfer's),
 * closed, and left held for its owner (a refund comes back to it, and the epoch's recovery
 * returns it) with the move's mark m:<account> = transfer id in {s}:held (the recovery keeps an
 * account whose move is still in flight); the offer's mark is forgotten and the offer reads
 * "adopted". {1, "stack ..."}.
 */
static const char ho_lua_claim[] = HO_LUA_PRELUDE
    "local st = call('HGET', KEYS[1], 'status')\n"
    "if not st then return err('MONEY_NO_OFFER ' .. ARGV[3]) end\n"
    "if st == 'adopted' then\n"
    "  local by = call('HGET', KEYS[1], 'adopter')\n"
    "  if by == ARGV[2] then\n"
    "    call('HINCRBY', KEYS[1], 'seen', 1)\n"
    "    return {0, call('HGET', KEYS[1], 'stacks') or ''}\n"
    "  end\n"
    "  return err('MONEY_ADOPTED by ' .. (by or '?')) end\n"
    "if st ~= 'offered' then return err('MONEY_OFFER_VOID ' .. ARGV[3] .. ' is ' .. st) end\n"
    "if call('GET', KEYS[2]) ~= ARGV[1] then\n"
    "  return err('MONEY_OFFER_VOID ' .. ARGV[3] .. ': its epoch is being recovered') end\n"
    "local n = int(ARGV[4])\n"
    "if not n or n < 0 or tostring(n) ~= call('HGET', KEYS[1], 'n') or #ARGV ~= 4 + 4 * n or\n"
    "   #KEYS ~= 6 + 2 * n then\n"
    "  return err('MONEY_BAD_ARGS the adoption does not match the offer') end\n"
    "local bal = {}\n"
    "for i = 1, n do\n"
    "  local a = 4 + 4 * (i - 1)\n"
    "  local acct, owner, akey = ARGV[a + 1], ARGV[a + 2], KEYS[5 + 2 * i]\n"
    "  if call('HGET', KEYS[1], 'a' .. i) ~= acct or call('HGET', KEYS[1], 'o' .. i) ~= owner or\n"
    "     call('HGET', KEYS[3], acct) ~= owner or call('SISMEMBER', KEYS[6], akey) == 1 or\n"
    "     call('EXISTS', KEYS[6 + 2 * i]) == 1 then\n"
    "    return err('MONEY_BAD_ARGS seat account ' .. acct .. ' is not in the offer, not held ' "
    "..\n"
    "      'or already moved') end\n"
    "  local b = int(call('GET', akey) or '0')\n"
    "  if not b or b < 0 then\n"
    "    return err('MONEY_BAD_ARGS seat account ' .. acct .. ' holds no integer') end\n"
    "  bal[i] = b\n"
    "end\n"
    "local t = call('TIME')\n"
    "t = format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))\n"
    "for i = 1, n do\n"
    "  local a = 4 + 4 * (i - 1)\n"
    "  local akey, rkey, dst, id = KEYS[5 + 2 * i], KEYS[6 + 2 * i], ARGV[a + 3], ARGV[a + 4]\n"
    "  local amt = format('%d', bal[i])\n"
    "  if bal[i] > 0 then\n"
    "    call('DECRBY', akey, amt)\n"
    "    call('HSET', rkey, 'id', id, 'src', akey, 'dst', dst, 'amount', amt,\n"
    "      'state', 'DEBITED', 'created', t, 'updated', t, 'drives', '1')\n"
    "    call('ZADD', KEYS[4], t, id)\n"
    "    call('SADD', KEYS[5], KEYS[4])\n"
    "    call('HSET', KEYS[3], 'm:' .. ARGV[a + 1], id)\n"
    "  end\n"
    "  call('SADD', KEYS[6], akey)\n"
    "  bal[i] = amt\n"
    "end\n"
    "call('HDEL', KEYS[3], 'h:' .. ARGV[3])\n"
    "local stacks = table.concat(bal, ' ')\n"
    "call('HSET', KEYS[1], 'status', 'adopted', 'adopter', ARGV[2], 'stacks', stacks, 'at', t)\n"
    "return {1, stacks}\n";

/*
 * RELEASE (the adopter's slot, after a claim refused). KEYS: {s}:held, then n seat accounts.
 * ARGV: n, then n pairs (account name, owner). Each account still held for that owner and
 * empty is forgotten (HOLD recorded it for a move that went elsewhere). {1, '0'}.
 */
static const char ho_lua_release[] = HO_LUA_PRELUDE
    "local n = int(ARGV[1])\n"
    "if not n or n < 0 or #KEYS ~= 1 + n or #ARGV ~= 1 + 2 * n then\n"
    "  return err('MONEY_BAD_ARGS malformed release') end\n"
    "for i = 1, n do\n"
    "  local acct, owner = ARGV[2 * i], ARGV[1 + 2 * i]\n"
    "  if call('HGET', KEYS[1], acct) == owner and (int(call('GET', KEYS[1 + i]) or '0') == 0)\n"
    "  then call('HDEL', KEYS[1], acct) end\n"
    "end\n"
    "return {1, '0'}\n";

/*
 * VOID (the old epoch's recovery, once {s}:live reads dead). KEYS: the offer. An offer still
 * "offered" becomes "void" (the claim refuses it already: its epoch is not live); any other is
 * left as it is. {1 | 0, status}.
 */
static const char ho_lua_void[] =
    HO_LUA_PRELUDE "local st = call('HGET', KEYS[1], 'status')\n"
                   "if st ~= 'offered' then return {0, st or 'none'} end\n"
                   "call('HSET', KEYS[1], 'status', 'void')\n"
                   "return {1, 'void'}\n";

const char *mcl_ho_script_text(int i)
{
    switch (i) {
    case MCL_HO_OFFER:
        return money_script_text(SCRIPT_OFFER);
    case MCL_HO_WITHDRAW:
        return money_script_text(SCRIPT_WITHDRAW);
    case MCL_HO_HOLD:
        return ho_lua_hold;
    case MCL_HO_CLAIM:
        return ho_lua_claim;
    case MCL_HO_RELEASE:
        return ho_lua_release;
    case MCL_HO_VOID:
        return ho_lua_void;
    default:
        return NULL;
    }
}

/* ---- helpers ------------------------------------------------------------------------------ */

/* The parts of an offer id "<service>:<slot>:<epoch>:<desk hex>:<n>". 0 or -EINVAL. */
static int ho_offer_parse(const char *id, char *svc, size_t svclen, uint32_t *slot, uint64_t *epoch,
                          uint64_t *desk, uint64_t *n)
{
    const char *p = id != NULL ? strchr(id, ':') : NULL;
    if (p == NULL || p == id || (size_t)(p - id) >= svclen || strlen(id) > MONEY_ID_MAX)
        return -EINVAL;
    memcpy(svc, id, (size_t)(p - id));
    svc[p - id] = '\0';
    unsigned long sl;
    unsigned long long e, d, k;
    int used = 0;
    if (!money_valid_name(svc) ||
        sscanf(p + 1, "%lu:%llu:%llx:%llu%n", &sl, &e, &d, &k, &used) != 4 || p[1 + used] != '\0' ||
        sl > UINT32_MAX)
        return -EINVAL;
    *slot = (uint32_t)sl;
    *epoch = e;
    *desk = d;
    *n = k;
    return 0;
}

/* The offer's key {s:<service>:<slot>:<epoch>}:handoff:<id>. 0 or -EINVAL. */
static int ho_offer_key(const char *service, uint32_t slot, uint64_t epoch, const char *id,
                        char *buf, size_t len)
{
    char suffix[MONEY_ID_MAX + 16];
    snprintf(suffix, sizeof suffix, ":handoff:%s", id);
    return mcluster_key_epoch(service, slot, epoch, suffix, buf, len);
}

/* A {flag, text} reply into out (an error mapped as money's scripts' are) and text. Frees r.
 * Returns out->status. */
static int ho_reply(mcluster_t *m, redisReply *r, money_result_t *out, char *text, size_t tlen)
{
    if (r == NULL) {
        mcl_err(out, -EIO, "redis: %s", rcluster_last_error(m->rc));
        return -EIO;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        money_kind_t kind = out->kind;
        char id[sizeof out->id];
        memcpy(id, out->id, sizeof id);
        money_reply_parse(kind, r, out);
        memcpy(out->id, id, sizeof id);
    } else if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
               r->element[0]->type == REDIS_REPLY_INTEGER &&
               r->element[1]->type == REDIS_REPLY_STRING) {
        out->status = MONEY_OK;
        out->replayed = r->element[0]->integer == 0;
        snprintf(text, tlen, "%s", r->element[1]->str);
    } else {
        mcl_err(out, MONEY_ERR_REDIS, "unexpected reply shape (type %d)", r->type);
    }
    freeReplyObject(r);
    return out->status;
}

/* Runs handoff script i over argv (nkeys keys first), its reply as ho_reply(). */
static int ho_eval(mcluster_t *m, int i, int nkeys, int argc, char **argv, money_result_t *out,
                   char *text, size_t tlen)
{
    redisReply *r =
        rcluster_eval(m->rc, m->ho[i], RCLUSTER_RESEND, nkeys, argc, (const char **)argv, NULL);
    return ho_reply(m, r, out, text, tlen);
}

static void ho_argv_free(char **argv, int n)
{
    for (int i = 0; i < n; i++)
        free(argv[i]);
    free(argv);
}

/* A replayed offer or withdrawal wrote nothing: a write of the slot before its WAIT covers the
 * first one (the slot's replication stream is in order). */
static void ho_touch(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch)
{
    char touch[320];
    if (m->o.xfer.wait_replicas <= 0 ||
        mcluster_key_epoch(service, slot, epoch, ":seen", touch, sizeof touch) != 0)
        return;
    freeReplyObject(rcluster_command(m->rc, RCLUSTER_RESEND, touch, "INCR %s", touch));
}

/* The offer's call (offer or withdrawal): KEYS offer, {s}:live, {s}:held; ARGV epoch, id. */
static char **ho_offer_argv(const char *service, const money_offer_t *o, const char *id,
                            size_t extra)
{
    char **argv = xcalloc(5 + extra, sizeof *argv);
    char buf[400];
    ho_offer_key(service, o->slot, o->epoch, id, buf, sizeof buf);
    argv[0] = xstrdup(buf);
    mcluster_key_epoch(service, o->slot, o->epoch, ":live", buf, sizeof buf);
    argv[1] = xstrdup(buf);
    mcluster_key_epoch(service, o->slot, o->epoch, ":held", buf, sizeof buf);
    argv[2] = xstrdup(buf);
    snprintf(buf, sizeof buf, "%" PRIu64, o->epoch);
    argv[3] = xstrdup(buf);
    argv[4] = xstrdup(id);
    return argv;
}

/* ---- the old server's side ---------------------------------------------------------------- */

int mcluster_offer(mcluster_t *m, const char *service, const money_offer_t *o, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_SEAT_OUT;
    char id[MONEY_ID_MAX + 1], key[400];
    bool ok = o != NULL && money_offer_id(service, o, id, sizeof id) == 0 &&
              ho_offer_key(service, o->slot, o->epoch, id, key, sizeof key) == 0 &&
              o->state != NULL && strlen(o->state) <= HO_STATE_MAX &&
              o->nseats <= MONEY_MAX_PLAYERS;
    for (size_t i = 0; ok && i < o->nseats; i++)
        ok = money_valid_player(o->seats[i].account) && money_valid_player(o->seats[i].owner) &&
             o->seats[i].seat >= 0;
    if (!ok) {
        mcl_err(out, -EINVAL, "invalid service, offer, state or seats");
        return -EINVAL;
    }
    snprintf(out->id, sizeof out->id, "%s", id);
    int argc = 0;
    char **argv = ho_offer_argv(service, o, id, 3 + 3 * o->nseats);
    argc = 5;
    char num[24];
    argv[argc++] = xstrdup(o->state);
    snprintf(num, sizeof num, "%ld", MONEY_RECORD_TTL_S);
    argv[argc++] = xstrdup(num);
    snprintf(num, sizeof num, "%zu", o->nseats);
    argv[argc++] = xstrdup(num);
    for (size_t i = 0; i < o->nseats; i++) {
        argv[argc++] = xstrdup(o->seats[i].account);
        argv[argc++] = xstrdup(o->seats[i].owner);
        snprintf(num, sizeof num, "%d", o->seats[i].seat);
        argv[argc++] = xstrdup(num);
    }
    char text[32];
    int rc = ho_eval(m, MCL_HO_OFFER, 3, argc, argv, out, text, sizeof text);
    if (rc == MONEY_OK && strcmp(text, "offered") != 0) {
        /* the same offer again after it was settled: its status says where it went */
        mcl_err(out, strcmp(text, "adopted") == 0 ? MONEY_ERR_ADOPTED : MONEY_ERR_OFFER_VOID,
                "offer %s is %s", id, text);
        rc = out->status;
    }
    if (rc == MONEY_OK) {
        if (out->replayed)
            ho_touch(m, service, o->slot, o->epoch);
        if (mcl_wait(m, argv[1], out->error, sizeof out->error) != 0)
            rc = out->status = -EAGAIN;
    }
    ho_argv_free(argv, argc);
    return rc;
}

int mcluster_offer_read(mcluster_t *m, const char *offer_id, money_offer_info_t *out)
{
    memset(out, 0, sizeof *out);
    char svc[MONEY_NAME_MAX + 1], key[400];
    uint32_t slot;
    uint64_t epoch, desk, k;
    if (ho_offer_parse(offer_id, svc, sizeof svc, &slot, &epoch, &desk, &k) != 0 ||
        ho_offer_key(svc, slot, epoch, offer_id, key, sizeof key) != 0)
        return -EINVAL;
    redisReply *r = rcluster_command(m->rc, RCLUSTER_RESEND, key, "HGETALL %s", key);
    if (r == NULL)
        return -EIO;
    int rc = 0;
    long n = -1;
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
        rc = MONEY_ERR_REDIS;
    else if (r->elements == 0)
        rc = MONEY_ERR_NO_OFFER;
    for (size_t i = 0; rc == 0 && i + 1 < r->elements; i += 2) {
        const char *f = r->element[i]->str, *v = r->element[i + 1]->str;
        if (f == NULL || v == NULL)
            continue;
        char *end;
        long j = f[0] == 'a' || f[0] == 'o' || f[0] == 's' ? strtol(f + 1, &end, 10) : 0;
        if (strcmp(f, "status") == 0) {
            snprintf(out->status, sizeof out->status, "%s", v);
        } else if (strcmp(f, "adopter") == 0) {
            snprintf(out->adopter, sizeof out->adopter, "%s", v);
        } else if (strcmp(f, "state") == 0) {
            free(out->state);
            out->state = xstrdup(v);
        } else if (strcmp(f, "n") == 0) {
            n = strtol(v, NULL, 10);
        } else if (j >= 1 && j <= MONEY_MAX_PLAYERS && *end == '\0') {
            if (f[0] == 'a')
                snprintf(out->accounts[j - 1], sizeof out->accounts[0], "%s", v);
            else if (f[0] == 'o')
                snprintf(out->owners[j - 1], sizeof out->owners[0], "%s", v);
            else
                out->seats[j - 1] = (int)strtol(v, NULL, 10);
        }
    }
    freeReplyObject(r);
    if (rc == 0 && (n < 0 || n > MONEY_MAX_PLAYERS || out->state == NULL || out->status[0] == 0))
        rc = MONEY_ERR_REDIS;
    if (rc == 0) {
        out->nseats = (size_t)n;
        for (size_t i = 0; i < out->nseats; i++)
            if (out->accounts[i][0] == '\0' || out->owners[i][0] == '\0')
                rc = MONEY_ERR_REDIS;
    }
    if (rc != 0) {
        free(out->state);
        out->state = NULL;
    }
    return rc;
}

int mcluster_offer_withdraw(mcluster_t *m, const char *service, const money_offer_t *o,
                            char status[16], money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_SEAT_OUT;
    status[0] = '\0';
    char id[MONEY_ID_MAX + 1], key[400];
    if (o == NULL || money_offer_id(service, o, id, sizeof id) != 0 ||
        ho_offer_key(service, o->slot, o->epoch, id, key, sizeof key) != 0) {
        mcl_err(out, -EINVAL, "invalid service or offer");
        return -EINVAL;
    }
    snprintf(out->id, sizeof out->id, "%s", id);
    char **argv = ho_offer_argv(service, o, id, 0);
    int rc = ho_eval(m, MCL_HO_WITHDRAW, 3, 5, argv, out, status, 16);
    if (rc == MONEY_OK) {
        if (out->replayed)
            ho_touch(m, service, o->slot, o->epoch);
        if (mcl_wait(m, argv[1], out->error, sizeof out->error) != 0)
            rc = out->status = -EAGAIN;
    }
    ho_argv_free(argv, 5);
    return rc;
}

int mcl_ho_void(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                const char *offer_id)
{
    char key[400];
    if (ho_offer_key(service, slot, epoch, offer_id, key, sizeof key) != 0)
        return 0; /* a malformed mark names no offer: forget it */
    char *argv[] = {key};
    money_result_t res = {0};
    char text[32];
    int rc = ho_eval(m, MCL_HO_VOID, 1, 1, argv, &res, text, sizeof text);
    return rc == -EIO || rc == -EAGAIN ? -EIO : 0;
}

/* ---- the adopter's side -------------------------------------------------------------------- */

/* HOLD (release false) or RELEASE (true) of the adopter's accounts in its slot. */
static int ho_hold(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                   const char *const *accts, char (*owners)[MONEY_NAME_MAX + 1], size_t n,
                   bool release, money_result_t *out)
{
    char **argv = xcalloc(4 + 3 * n, sizeof *argv);
    int k = 0;
    char buf[400];
    if (!release) {
        mcluster_key_epoch(service, slot, epoch, ":live", buf, sizeof buf);
        argv[k++] = xstrdup(buf);
    }
    mcluster_key_epoch(service, slot, epoch, ":held", buf, sizeof buf);
    argv[k++] = xstrdup(buf);
    for (size_t i = 0; i < n; i++) {
        mcluster_key_seat(service, slot, epoch, accts[i], buf, sizeof buf);
        argv[k++] = xstrdup(buf);
    }
    int nkeys = k;
    if (!release) {
        snprintf(buf, sizeof buf, "%" PRIu64, epoch);
        argv[k++] = xstrdup(buf);
    }
    snprintf(buf, sizeof buf, "%zu", n);
    argv[k++] = xstrdup(buf);
    for (size_t i = 0; i < n; i++) {
        argv[k++] = xstrdup(accts[i]);
        argv[k++] = xstrdup(owners[i]);
    }
    char text[32];
    int rc =
        ho_eval(m, release ? MCL_HO_RELEASE : MCL_HO_HOLD, nkeys, k, argv, out, text, sizeof text);
    if (rc == MONEY_OK && !release && mcl_wait(m, argv[0], out->error, sizeof out->error) != 0)
        rc = out->status = -EAGAIN;
    ho_argv_free(argv, k);
    return rc;
}

/* The transfer id of the offer's account i (0-based): "ho.<desk hex>.<n>.<i + 1>". */
static void ho_xfer_id(uint64_t desk, uint64_t k, size_t i, char *buf, size_t len)
{
    snprintf(buf, len, "ho.%" PRIx64 ".%" PRIu64 ".%zu", desk, k, i + 1);
}

int mcluster_adopt(mcluster_t *m, const char *offer_id, const char *service, uint32_t slot,
                   uint64_t epoch, uint64_t desk, const char *const *new_accounts, size_t n,
                   int64_t *stacks, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_SEAT_IN;
    snprintf(out->id, sizeof out->id, "%s", offer_id != NULL ? offer_id : "");
    char osvc[MONEY_NAME_MAX + 1], adopter[MONEY_ID_MAX + 1];
    uint32_t oslot;
    uint64_t oepoch, odesk, ok;
    bool valid = ho_offer_parse(offer_id, osvc, sizeof osvc, &oslot, &oepoch, &odesk, &ok) == 0 &&
                 money_valid_name(service) && n <= MONEY_MAX_PLAYERS &&
                 (n == 0 || new_accounts != NULL) &&
                 !(strcmp(osvc, service) == 0 && oslot == slot && oepoch == epoch);
    for (size_t i = 0; valid && i < n; i++)
        valid = money_valid_player(new_accounts[i]);
    if (!valid) {
        mcl_err(out, -EINVAL, "invalid offer id, service, accounts, or the offer's own epoch");
        return -EINVAL;
    }
    snprintf(adopter, sizeof adopter, "%s:%" PRIu32 ":%" PRIu64 ":%" PRIx64, service, slot, epoch,
             desk);
    money_offer_info_t info;
    int rc = mcluster_offer_read(m, offer_id, &info);
    if (rc != 0) {
        mcl_err(out, rc, "%s", rc == -EIO ? rcluster_last_error(m->rc) : money_strerror(rc));
        return rc;
    }
    free(info.state);
    if (strcmp(info.status, "adopted") == 0 && strcmp(info.adopter, adopter) != 0) {
        mcl_err(out, MONEY_ERR_ADOPTED, "MONEY_ADOPTED by %s", info.adopter);
        return out->status;
    }
    if (strcmp(info.status, "offered") != 0 && strcmp(info.status, "adopted") != 0) {
        mcl_err(out, MONEY_ERR_OFFER_VOID, "MONEY_OFFER_VOID %s is %s", offer_id, info.status);
        return out->status;
    }
    if (info.nseats != n) {
        mcl_err(out, MONEY_ERR_BAD_ARGS, "the offer has %zu seat accounts, %zu given", info.nseats,
                n);
        return out->status;
    }
    /* 1. the adopter's accounts held for the owners, in its slot (fenced by its {s}:live) */
    rc = ho_hold(m, service, slot, epoch, new_accounts, info.owners, n, false, out);
    if (rc != MONEY_OK)
        return rc;
    /* 2. the claim in the old slot: the offer is ours, its accounts debited into the moves */
    size_t cap = 6 + 2 * n + 4 + 4 * n;
    char **argv = xcalloc(cap, sizeof *argv);
    int k = 0;
    char buf[400], tag[300], registry[32], id[XFER_MAX_ID + 1];
    char(*src)[XFER_MAX_KEY + 1] = xcalloc(n + 1, sizeof *src);
    ho_offer_key(osvc, oslot, oepoch, offer_id, buf, sizeof buf);
    argv[k++] = xstrdup(buf);
    mcluster_key_epoch(osvc, oslot, oepoch, ":live", buf, sizeof buf);
    argv[k++] = xstrdup(buf);
    mcluster_key_epoch(osvc, oslot, oepoch, ":held", buf, sizeof buf);
    argv[k++] = xstrdup(buf);
    mcluster_key_epoch(osvc, oslot, oepoch, ":xo", buf, sizeof buf);
    argv[k++] = xstrdup(buf);
    mcluster_key_epoch(osvc, oslot, oepoch, "", tag, sizeof tag);
    xfer_registry_key(rcluster_key_slot(tag, strlen(tag)), registry, sizeof registry);
    argv[k++] = xstrdup(registry);
    mcluster_key_epoch(osvc, oslot, oepoch, ":xc", buf, sizeof buf);
    argv[k++] = xstrdup(buf);
    bool keys_ok = true;
    for (size_t i = 0; i < n; i++) {
        keys_ok &=
            mcluster_key_seat(osvc, oslot, oepoch, info.accounts[i], src[i], sizeof src[i]) == 0;
        argv[k++] = xstrdup(src[i]);
        ho_xfer_id(odesk, ok, i, id, sizeof id);
        int w = snprintf(buf, sizeof buf, "%s:xo:%s", tag, id);
        keys_ok &= w > 0 && (size_t)w < sizeof buf; /* a key cut short is refused below */
        argv[k++] = xstrdup(buf);
    }
    int nkeys = k;
    snprintf(buf, sizeof buf, "%" PRIu64, oepoch);
    argv[k++] = xstrdup(buf);
    argv[k++] = xstrdup(adopter);
    argv[k++] = xstrdup(offer_id);
    snprintf(buf, sizeof buf, "%zu", n);
    argv[k++] = xstrdup(buf);
    for (size_t i = 0; i < n; i++) {
        argv[k++] = xstrdup(info.accounts[i]);
        argv[k++] = xstrdup(info.owners[i]);
        keys_ok &= mcluster_key_seat(service, slot, epoch, new_accounts[i], buf, sizeof buf) == 0;
        argv[k++] = xstrdup(buf);
        ho_xfer_id(odesk, ok, i, id, sizeof id);
        argv[k++] = xstrdup(id);
    }
    char text[MONEY_MAX_PLAYERS * 24 + 1] = "";
    if (!keys_ok) {
        mcl_err(out, MONEY_ERR_BAD_ARGS, "a seat account's key does not fit");
        rc = out->status;
    } else {
        rc = ho_eval(m, MCL_HO_CLAIM, nkeys, k, argv, out, text, sizeof text);
    }
    bool replayed = out->replayed;
    if (rc == MONEY_OK && mcl_wait(m, argv[1], out->error, sizeof out->error) != 0)
        rc = out->status = -EAGAIN; /* the debits must be durable before any credit */
    ho_argv_free(argv, k);
    if (rc == MONEY_ERR_ADOPTED || rc == MONEY_ERR_OFFER_VOID || rc == MONEY_ERR_NO_OFFER) {
        /* another adopter, a withdrawal or a recovery: nothing of ours moved; forget the holds */
        money_result_t rel;
        if (ho_hold(m, service, slot, epoch, new_accounts, info.owners, n, true, &rel) != 0)
            log_emit(LOG_WARN, "money_adopt_release_failed", "{s:s,s:s}", "offer", offer_id,
                     "error", rel.error);
    }
    /* 3. each move's credit in the adopter's slot, once per id (xfer) */
    int64_t st[MONEY_MAX_PLAYERS] = {0};
    const char *q = text;
    for (size_t i = 0; rc == MONEY_OK && i < n; i++) {
        char *end;
        st[i] = strtoll(q, &end, 10);
        q = end;
    }
    for (size_t i = 0; rc == MONEY_OK && i < n; i++) {
        if (st[i] <= 0)
            continue;
        xfer_result_t res;
        ho_xfer_id(odesk, ok, i, id, sizeof id);
        int x = xfer_resume(m->x, src[i], id, &res);
        if (x == 0 && res.state == XFER_COMPLETED)
            continue;
        if (x == 0 && res.state == XFER_REFUNDED)
            mcl_err(out, MONEY_ERR_STALE_EPOCH,
                    "MONEY_STALE_EPOCH the adopter's account refused the move (its epoch was "
                    "recovered); back in the old seat account: %s",
                    res.reason);
        else
            mcl_err(out, -EAGAIN, "in flight: %s", res.reason);
        rc = out->status;
    }
    free(src);
    if (rc == MONEY_OK) {
        out->status = MONEY_OK;
        out->error[0] = '\0';
        out->replayed = replayed;
        out->nbalances = n;
        for (size_t i = 0; i < n; i++) {
            out->balances[i] = st[i];
            if (stacks != NULL)
                stacks[i] = st[i];
        }
    }
    log_emit(rc == MONEY_OK ? LOG_INFO : LOG_WARN, "money_adopt", "{s:s,s:s,s:i,s:b,s:s}", "offer",
             offer_id, "adopter", adopter, "status", rc, "replayed", replayed, "error", out->error);
    return rc;
}
