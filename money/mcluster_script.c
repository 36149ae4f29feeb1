/*
 * mcluster_script.c -- the Lua scripts of a game server epoch's money in its own slot
 * (money/mcluster.h; docs/queues.md "The game server's money by entity"). Each touches one
 * slot: the epoch's, {s:<service>:<slot>:<epoch>}. The settlement is money.h's settle script
 * (money_script.c) with the epoch's keys; the transfers are money/xfer.h's.
 *
 * The epoch's fence in its slot is {s}:live: the epoch's number while it may write, "dead" once
 * a recovery began. Error replies start with money.h's tokens (MONEY_STALE_EPOCH,
 * MONEY_BAD_ARGS), so money_reply_parse() maps them.
 */
#include "mcluster_int.h"

#define MCL_LUA_PRELUDE                                                                            \
    "local call, format = redis.call, string.format\n"                                             \
    "local MAX = 100000000000000\n"                                                                \
    "local function int(s)\n"                                                                      \
    "  local n = tonumber(s)\n"                                                                    \
    "  if n and n % 1 == 0 and n <= MAX and n >= -MAX then return n end\n"                         \
    "  return nil\n"                                                                               \
    "end\n"                                                                                        \
    "local function err(s) return redis.error_reply(s) end\n"

/*
 * OPEN. KEYS: {s}:live. ARGV: epoch. Sets the fence to the epoch unless it is there ({0, e},
 * written again so that a WAIT after it covers the first write) or a recovery marked the epoch
 * dead (MONEY_STALE_EPOCH): {1, e} when set now.
 */
static const char mcl_lua_open[] = MCL_LUA_PRELUDE
    "local cur = call('GET', KEYS[1])\n"
    "if cur == ARGV[1] then\n"
    "  call('SET', KEYS[1], cur)\n" /* a write, so that the caller's WAIT covers the first */
    "  return {0, cur}\n"
    "end\n"
    "if cur then return err('MONEY_STALE_EPOCH epoch ' .. ARGV[1] .. ' is ' .. cur) end\n"
    "call('SET', KEYS[1], ARGV[1])\n"
    "return {1, ARGV[1]}\n";

/*
 * HOLD (before a seat-in's transfer). KEYS: {s}:live, {s}:held, the seat account. ARGV: epoch,
 * account name, owner. Fenced: the fence must equal the epoch. The account is recorded as held
 * for the owner; refused when it holds chips of another owner. {1, '0'}.
 */
static const char mcl_lua_hold[] = MCL_LUA_PRELUDE
    "local cur = call('GET', KEYS[1])\n"
    "if cur ~= ARGV[1] then\n"
    "  return err('MONEY_STALE_EPOCH seat account epoch ' .. ARGV[1] .. ', current ' ..\n"
    "    (cur or 'none')) end\n"
    "local held = call('HGET', KEYS[2], ARGV[2])\n"
    "if held and held ~= ARGV[3] then\n"
    "  local b = int(call('GET', KEYS[3]) or '0')\n"
    "  if not b or b > 0 then\n"
    "    return err('MONEY_BAD_ARGS seat account ' .. ARGV[2] .. ' holds chips of ' .. held) end\n"
    "end\n"
    "call('HSET', KEYS[2], ARGV[2], ARGV[3])\n" /* always: the caller's WAIT covers it */
    "return {1, '0'}\n";

/*
 * OWNER (before a seat-out's transfer). KEYS: {s}:held, the transfer's outbox record, {s}:xc.
 * ARGV: account name, owner, the seat account's key. A transfer already under that id answers
 * {0, '0'} (a resend); a closed account (its epoch recovered) MONEY_STALE_EPOCH; else the
 * account must be held for that owner ({1, '0'}): the chips go to the wallet the table names.
 * The fence itself is the debit's (xfer's closed set, in the same slot).
 */
static const char mcl_lua_owner[] = MCL_LUA_PRELUDE
    "if call('EXISTS', KEYS[2]) == 1 then return {0, '0'} end\n"
    "if call('SISMEMBER', KEYS[3], ARGV[3]) == 1 then\n"
    "  return err('MONEY_STALE_EPOCH seat account ' .. ARGV[1] .. ' is closed (its epoch was ' ..\n"
    "    'recovered)') end\n"
    "local held = call('HGET', KEYS[1], ARGV[1])\n"
    "if held ~= ARGV[2] then\n"
    "  return err('MONEY_BAD_ARGS seat account ' .. ARGV[1] .. ' belongs to ' ..\n"
    "    (held or 'nobody')) end\n"
    "return {1, '0'}\n";

/*
 * MARK. KEYS: {s}:live, {s}:held. ARGV: epoch, field, value. Fenced as HOLD. {1, '0'}.
 */
static const char mcl_lua_mark[] = MCL_LUA_PRELUDE
    "local cur = call('GET', KEYS[1])\n"
    "if cur ~= ARGV[1] then\n"
    "  return err('MONEY_STALE_EPOCH mark epoch ' .. ARGV[1] .. ', current ' .. (cur or 'none'))\n"
    "end\n"
    "call('HSET', KEYS[2], ARGV[2], ARGV[3])\n"
    "return {1, '0'}\n";

/*
 * KILL (a recovery's first step in the epoch's slot, once the lease fence has been judged or
 * moved). KEYS: {s}:live, {s}:held, {s}:xc. ARGV: the seat accounts' key prefix
 * "{s:...}:bal:". The fence becomes "dead" (no open, hold, mark, settle of the epoch is applied
 * after this) and every held seat account joins xfer's closed set (no cash-out is debited and
 * no buy-in credited after this: a credit in flight is refused and refunded). {1, accounts}.
 */
static const char mcl_lua_kill[] =
    MCL_LUA_PRELUDE "call('SET', KEYS[1], 'dead')\n"
                    "local f, n = call('HKEYS', KEYS[2]), 0\n"
                    "for i = 1, #f do\n"
                    "  local p = string.sub(f[i], 1, 2)\n"
                    "  if p ~= 'r:' and p ~= 'h:' and p ~= 'm:' then\n"
                    "    call('SADD', KEYS[3], ARGV[1] .. f[i])\n"
                    "    n = n + 1\n"
                    "  end\n"
                    "end\n"
                    "return {1, n}\n";

/*
 * RETURN (a chunk of a dead epoch's accounts). KEYS: {s}:live, {s}:held, the outbox index
 * {s}:xo, the slot's registry {Q}:xq, {s}:recovered, then n pairs (seat account, outbox record
 * {s}:xo:<id>). ARGV: n, then n quadruples (account name, owner, owner's wallet key, transfer
 * id), then m and m held fields to forget (round records). Only once the fence is "dead".
 * Each account still held for that owner with chips is emptied into an outbox record DEBITED
 * (money/xfer.h's format: the transfer's credit, ack, resend and sweeper are xfer's) and
 * forgotten; an empty one is forgotten, unless a whole-table move out of it is still in flight
 * (its mark m:<account> names a transfer still in the outbox index: a refund may bring its chips
 * back, and the next recovery returns them); one whose record exists already (chips came back
 * after a first return: a refund) is left held, for an operator. The move's mark goes with its
 * account. Two recoveries racing: the second finds nothing held.
 * {1, chips, accounts, fields left, id1, id2 ...}.
 */
static const char mcl_lua_return[] = MCL_LUA_PRELUDE
    "if call('GET', KEYS[1]) ~= 'dead' then\n"
    "  return err('MONEY_BAD_ARGS the epoch is not marked dead') end\n"
    "local n = int(ARGV[1])\n"
    "if not n or n < 0 or #KEYS ~= 5 + 2 * n or #ARGV < 2 + 4 * n then\n"
    "  return err('MONEY_BAD_ARGS malformed return') end\n"
    "local t = call('TIME')\n"
    "t = format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))\n"
    "local chips, accounts, out = 0, 0, {}\n"
    "for i = 1, n do\n"
    "  local a = 1 + 4 * (i - 1)\n"
    "  local acct, owner, dst, id = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]\n"
    "  local akey, rkey = KEYS[4 + 2 * i], KEYS[5 + 2 * i]\n"
    "  if call('HGET', KEYS[2], acct) == owner then\n"
    "    local b = int(call('GET', akey) or '0')\n"
    "    local mv = call('HGET', KEYS[2], 'm:' .. acct)\n"
    "    if b and b == 0 then\n"
    "      if not (mv and call('ZSCORE', KEYS[3], mv)) then\n"
    "        call('HDEL', KEYS[2], acct, 'm:' .. acct)\n"
    "      end\n"
    "    elseif b and b > 0 and call('EXISTS', rkey) == 0 then\n"
    "      local amt = format('%d', b)\n"
    "      call('DECRBY', akey, amt)\n"
    "      call('HSET', rkey, 'id', id, 'src', akey, 'dst', dst, 'amount', amt,\n"
    "        'state', 'DEBITED', 'created', t, 'updated', t, 'drives', '1')\n"
    "      call('ZADD', KEYS[3], t, id)\n"
    "      call('SADD', KEYS[4], KEYS[3])\n"
    "      call('HDEL', KEYS[2], acct, 'm:' .. acct)\n"
    "      chips = chips + b\n"
    "      accounts = accounts + 1\n"
    "      out[#out + 1] = id\n"
    "    end\n"
    "  end\n"
    "end\n"
    "local m = int(ARGV[2 + 4 * n]) or 0\n"
    "for j = 1, m do call('HDEL', KEYS[2], ARGV[2 + 4 * n + j]) end\n"
    "if chips > 0 then\n"
    "  call('HINCRBY', KEYS[5], 'chips', format('%d', chips))\n"
    "  call('HINCRBY', KEYS[5], 'accounts', accounts)\n"
    "end\n"
    "local res = {1, chips, accounts, call('HLEN', KEYS[2])}\n"
    "for i = 1, #out do res[#res + 1] = out[i] end\n"
    "return res\n";

const char *const mcl_scripts[MCL_NSCRIPTS] = {
    [MCL_SCRIPT_OPEN] = mcl_lua_open,   [MCL_SCRIPT_HOLD] = mcl_lua_hold,
    [MCL_SCRIPT_OWNER] = mcl_lua_owner, [MCL_SCRIPT_MARK] = mcl_lua_mark,
    [MCL_SCRIPT_KILL] = mcl_lua_kill,   [MCL_SCRIPT_RETURN] = mcl_lua_return,
};
