/*
 * xfer_script.c -- the Lua scripts of the transfer protocol (money/xfer.h; docs/queues.md
 * "Redis Cluster: keys by entity and transfers between slots"), one per step, every one of them
 * in one slot and idempotent by the transfer id (or the seed's op id). Constant text only;
 * xfer.c makes rcluster scripts of them (SHA learned once per process, EVAL on NOSCRIPT).
 *
 * Error replies start with a token xfer.c maps to an errno: XFER_BAD_ARGS, XFER_ID_REUSED,
 * XFER_INSUFFICIENT, XFER_CLOSED, XFER_NOT_BALANCE, XFER_UNKNOWN, XFER_CONFLICT.
 *
 * Times are the master's own clock (TIME: Redis 7 replicates a script's effects, not the script,
 * so reading the clock is allowed), in Unix milliseconds.
 */
#include "xfer_int.h"

/* int(s): an integer with |n| <= MAX, else nil (money_script.c's rule: Lua numbers are doubles,
 * the bound keeps sums exact). now(): the master's clock in ms. */
#define XFER_LUA_PRELUDE                                                                           \
    "local call, format = redis.call, string.format\n"                                             \
    "local MAX = 100000000000000\n"                                                                \
    "local function int(s)\n"                                                                      \
    "  local n = tonumber(s)\n"                                                                    \
    "  if n and n % 1 == 0 and n <= MAX and n >= -MAX then return n end\n"                         \
    "  return nil\n"                                                                               \
    "end\n"                                                                                        \
    "local function now()\n"                                                                       \
    "  local t = call('TIME')\n"                                                                   \
    "  return format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))\n"           \
    "end\n"                                                                                        \
    "local function err(s) return redis.error_reply(s) end\n"

/*
 * DEBIT. KEYS: source account, outbox record {tag}:xo:<id>, outbox index {tag}:xo, closed set
 * {tag}:xc, the slot's registry {Q}:xq. ARGV: id, source, destination, amount.
 * A record already there: the same transfer answers {0, state, created, now} (and, while
 * DEBITED, counts the
 * drive with a write, so that the WAIT the caller sends next covers the original debit too: a
 * connection's WAIT counts only its own writes); another transfer under that id is refused.
 * Otherwise the source must be open, hold an integer and at least amount: it is debited, the
 * record written (state DEBITED, created = updated = now) and indexed (score created), and the
 * index named in the slot's registry: {1, 'DEBITED'}. The record has no expiry while DEBITED: it is
 * money in flight.
 */
static const char xfer_lua_debit[] = XFER_LUA_PRELUDE
    "local rec = call('HMGET', KEYS[2], 'state', 'src', 'dst', 'amount', 'created')\n"
    "if rec[1] then\n"
    "  if rec[2] ~= ARGV[2] or rec[3] ~= ARGV[3] or rec[4] ~= ARGV[4] then\n"
    "    return err('XFER_ID_REUSED transfer ' .. ARGV[1] .. ' is ' .. tostring(rec[2]) ..\n"
    "      ' -> ' .. tostring(rec[3]) .. ' of ' .. tostring(rec[4])) end\n"
    "  if rec[1] == 'DEBITED' then call('HINCRBY', KEYS[2], 'drives', 1) end\n"
    "  return {0, rec[1], rec[5] or '0', now()}\n"
    "end\n"
    "local amount = int(ARGV[4])\n"
    "if not amount or amount <= 0 then\n"
    "  return err('XFER_BAD_ARGS amount must be a positive integer') end\n"
    "if call('SISMEMBER', KEYS[4], KEYS[1]) == 1 then\n"
    "  return err('XFER_CLOSED account ' .. KEYS[1] .. ' is closed') end\n"
    "local ty = call('TYPE', KEYS[1]).ok\n"
    "local bal = 0\n"
    "if ty ~= 'none' then\n"
    "  bal = ty == 'string' and int(call('GET', KEYS[1]))\n"
    "  if not bal then\n"
    "    return err('XFER_NOT_BALANCE ' .. KEYS[1] .. ' does not hold a balance') end\n"
    "end\n"
    "if bal < amount then\n"
    "  return err(format('XFER_INSUFFICIENT balance %d is less than %d', bal, amount)) end\n"
    "call('DECRBY', KEYS[1], amount)\n"
    "local t = now()\n"
    "call('HSET', KEYS[2], 'id', ARGV[1], 'src', ARGV[2], 'dst', ARGV[3], 'amount', ARGV[4],\n"
    "  'state', 'DEBITED', 'created', t, 'updated', t, 'drives', '1')\n"
    "call('ZADD', KEYS[3], t, ARGV[1])\n"
    "call('SADD', KEYS[5], KEYS[3])\n"
    "return {1, 'DEBITED'}\n";

/*
 * CREDIT. KEYS: destination account, applied record {dtag}:xa:{stag}:<id>, closed set {dtag}:xc.
 * ARGV: id, source, amount, record ttl (s).
 * An applied record there: the same transfer answers {0, decision, reason} ('credited' or
 * 'refused') and counts the sight with a write (for the caller's WAIT, as above); another
 * transfer under the id is refused. Otherwise the decision is taken once and recorded with the
 * ttl: refused when the account is closed, holds no integer, or would pass MAX ({1, 'refused',
 * reason}, nothing credited), else the account is credited ({1, 'credited', ''}).
 */
static const char xfer_lua_credit[] = XFER_LUA_PRELUDE
    "local rec = call('HMGET', KEYS[2], 'decision', 'src', 'amount', 'reason')\n"
    "if rec[1] then\n"
    "  if rec[2] ~= ARGV[2] or rec[3] ~= ARGV[3] then\n"
    "    return err('XFER_ID_REUSED transfer ' .. ARGV[1] .. ' was credited from ' ..\n"
    "      tostring(rec[2]) .. ' with ' .. tostring(rec[3])) end\n"
    "  call('HINCRBY', KEYS[2], 'seen', 1)\n"
    "  return {0, rec[1], rec[4] or ''}\n"
    "end\n"
    "local amount, ttl = int(ARGV[3]), int(ARGV[4])\n"
    "if not amount or amount <= 0 or not ttl or ttl <= 0 then\n"
    "  return err('XFER_BAD_ARGS amount and ttl must be positive integers') end\n"
    "local reason\n"
    "if call('SISMEMBER', KEYS[3], KEYS[1]) == 1 then\n"
    "  reason = 'account ' .. KEYS[1] .. ' is closed'\n"
    "else\n"
    "  local ty = call('TYPE', KEYS[1]).ok\n"
    "  local bal = 0\n"
    "  if ty ~= 'none' then bal = ty == 'string' and int(call('GET', KEYS[1])) end\n"
    "  if not bal then\n"
    "    reason = KEYS[1] .. ' does not hold a balance'\n"
    "  elseif bal + amount > MAX then\n"
    "    reason = KEYS[1] .. ' would pass the maximum balance'\n"
    "  end\n"
    "end\n"
    "local t = now()\n"
    "if reason then\n"
    "  call('HSET', KEYS[2], 'decision', 'refused', 'src', ARGV[2], 'amount', ARGV[3],\n"
    "    'reason', reason, 'at', t, 'seen', '1')\n"
    "  call('EXPIRE', KEYS[2], ttl)\n"
    "  return {1, 'refused', reason}\n"
    "end\n"
    "call('INCRBY', KEYS[1], amount)\n"
    "call('HSET', KEYS[2], 'decision', 'credited', 'src', ARGV[2], 'amount', ARGV[3], 'at', t,\n"
    "  'seen', '1')\n"
    "call('EXPIRE', KEYS[2], ttl)\n"
    "return {1, 'credited', ''}\n";

/*
 * ACK. KEYS: outbox record, outbox index, the slot's registry. ARGV: id, record ttl (s).
 * DEBITED -> COMPLETED (out of the index, and the index out of the registry when it is left
 * empty; the record expires after the ttl): {1, 'COMPLETED'};
 * COMPLETED already: {0, 'COMPLETED'}; REFUNDED: XFER_CONFLICT; no record: XFER_UNKNOWN.
 */
static const char xfer_lua_ack[] = XFER_LUA_PRELUDE
    "local st = call('HGET', KEYS[1], 'state')\n"
    "if not st then return err('XFER_UNKNOWN no transfer ' .. ARGV[1] .. ' in ' .. KEYS[1]) end\n"
    "if st == 'COMPLETED' then return {0, st} end\n"
    "if st ~= 'DEBITED' then\n"
    "  return err('XFER_CONFLICT transfer ' .. ARGV[1] .. ' is ' .. st .. ', not DEBITED') end\n"
    "local ttl = int(ARGV[2])\n"
    "if not ttl or ttl <= 0 then return err('XFER_BAD_ARGS ttl must be a positive integer') end\n"
    "call('HSET', KEYS[1], 'state', 'COMPLETED', 'updated', now())\n"
    "call('ZREM', KEYS[2], ARGV[1])\n"
    "if call('EXISTS', KEYS[2]) == 0 then call('SREM', KEYS[3], KEYS[2]) end\n"
    "call('EXPIRE', KEYS[1], ttl)\n"
    "return {1, 'COMPLETED'}\n";

/*
 * REFUND (compensation, once the destination refused for good). KEYS: source account, outbox
 * record, outbox index, the slot's registry. ARGV: id, reason, record ttl (s).
 * DEBITED -> REFUNDED: the record's amount goes back to its source (which must be KEYS[1]),
 * out of the index, expiring: {1, 'REFUNDED'}; REFUNDED already: {0, 'REFUNDED'}; COMPLETED:
 * XFER_CONFLICT; no record: XFER_UNKNOWN.
 */
static const char xfer_lua_refund[] = XFER_LUA_PRELUDE
    "local rec = call('HMGET', KEYS[2], 'state', 'src', 'amount')\n"
    "if not rec[1] then return err('XFER_UNKNOWN no transfer ' .. ARGV[1] .. ' in ' .. KEYS[2]) "
    "end\n"
    "if rec[1] == 'REFUNDED' then return {0, rec[1]} end\n"
    "if rec[1] ~= 'DEBITED' then\n"
    "  return err('XFER_CONFLICT transfer ' .. ARGV[1] .. ' is ' .. rec[1] .. ', not DEBITED') "
    "end\n"
    "if rec[2] ~= KEYS[1] then\n"
    "  return err('XFER_BAD_ARGS transfer ' .. ARGV[1] .. ' comes from ' .. rec[2]) end\n"
    "local ttl = int(ARGV[3])\n"
    "if not ttl or ttl <= 0 then return err('XFER_BAD_ARGS ttl must be a positive integer') end\n"
    "call('INCRBY', KEYS[1], rec[3])\n"
    "call('HSET', KEYS[2], 'state', 'REFUNDED', 'reason', ARGV[2], 'updated', now())\n"
    "call('ZREM', KEYS[3], ARGV[1])\n"
    "if call('EXISTS', KEYS[3]) == 0 then call('SREM', KEYS[4], KEYS[3]) end\n"
    "call('EXPIRE', KEYS[2], ttl)\n"
    "return {1, 'REFUNDED'}\n";

/*
 * DUE (the sweeper's read). KEYS: outbox index, the slot's registry. ARGV: older than (ms),
 * limit, stale age (ms). Returns {now, stale, id1, created1, id2, created2 ...}: how many
 * transfers of the index are older than the stale age (left to an operator: xfer.h), then the
 * others created at least ARGV[1] ms before the master's now, oldest first, at most ARGV[2] (so
 * that stale ones never crowd out the rest). An index that no longer exists leaves the registry
 * (a write, the only one).
 */
static const char xfer_lua_due[] = XFER_LUA_PRELUDE
    "local older, limit, stale = int(ARGV[1]), int(ARGV[2]), int(ARGV[3])\n"
    "if not older or older < 0 or not limit or limit <= 0 or not stale then\n"
    "  return err('XFER_BAD_ARGS older, limit and stale must be integers') end\n"
    "local t = now()\n"
    "if call('EXISTS', KEYS[1]) == 0 then call('SREM', KEYS[2], KEYS[1]) return {t, 0} end\n"
    "local edge = format('(%d', tonumber(t) - stale)\n"
    "local nstale = call('ZCOUNT', KEYS[1], '-inf', edge)\n"
    "local ids = call('ZRANGEBYSCORE', KEYS[1], format('%d', tonumber(t) - stale),\n"
    "  format('%d', tonumber(t) - older), 'WITHSCORES', 'LIMIT', 0, limit)\n"
    "table.insert(ids, 1, nstale)\n"
    "table.insert(ids, 1, t)\n"
    "return ids\n";

/*
 * SEED (money created: a deposit, the tests' and the demo's starting wallets). KEYS: account,
 * seed record {tag}:xs:<op>, minted total {tag}:xm. ARGV: amount, op, record ttl (s).
 * A record there: {0, amount}. Otherwise the account and the minted total grow by amount: {1,
 * amount}. Refused when the key holds no integer or would pass MAX.
 */
static const char xfer_lua_seed[] = XFER_LUA_PRELUDE
    "local prev = call('GET', KEYS[2])\n"
    "if prev then return {0, prev} end\n"
    "local amount, ttl = int(ARGV[1]), int(ARGV[3])\n"
    "if not amount or amount <= 0 or not ttl or ttl <= 0 then\n"
    "  return err('XFER_BAD_ARGS amount and ttl must be positive integers') end\n"
    "local ty = call('TYPE', KEYS[1]).ok\n"
    "local bal = 0\n"
    "if ty ~= 'none' then bal = ty == 'string' and int(call('GET', KEYS[1])) end\n"
    "if not bal then return err('XFER_NOT_BALANCE ' .. KEYS[1] .. ' does not hold a balance') "
    "end\n"
    "if bal + amount > MAX then\n"
    "  return err('XFER_BAD_ARGS ' .. KEYS[1] .. ' would pass the maximum balance') end\n"
    "call('INCRBY', KEYS[1], amount)\n"
    "call('INCRBY', KEYS[3], amount)\n"
    "call('SET', KEYS[2], ARGV[1], 'EX', ttl)\n"
    "return {1, ARGV[1]}\n";

const char *const xfer_scripts[XFER_NSCRIPTS] = {
    [XFER_SCRIPT_DEBIT] = xfer_lua_debit, [XFER_SCRIPT_CREDIT] = xfer_lua_credit,
    [XFER_SCRIPT_ACK] = xfer_lua_ack,     [XFER_SCRIPT_REFUND] = xfer_lua_refund,
    [XFER_SCRIPT_DUE] = xfer_lua_due,     [XFER_SCRIPT_SEED] = xfer_lua_seed,
};
