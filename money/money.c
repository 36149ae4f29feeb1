#include "money.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* ---- Scripts ------------------------------------------------------------------------ */

/*
 * int(s): the number an argument holds when it is an integer with |n| <= MONEY_MAX_AMOUNT, else
 * nil. Lua 5.1 numbers are doubles; the bound keeps every sum exact. tonumber() alone (no pattern
 * match: this runs for every value of every round) also accepts other spellings of the same
 * integer ("0x10", "1e3"), which is harmless: the value is what counts. Results are formatted
 * with '%d': tostring() would print 1e+14, and a number passed to redis.call() is written with
 * %.17g, which is exact but slow.
 */
#define MONEY_LUA_INT                                                                              \
    "local tonumber, format, unpack, call = tonumber, string.format, unpack, redis.call\n"         \
    "local KEYS, ARGV = KEYS, ARGV\n"                                                              \
    "local MAX = 100000000000000\n"                                                                \
    "local function int(s)\n"                                                                      \
    "  local n = tonumber(s)\n"                                                                    \
    "  if n and n % 1 == 0 and n <= MAX and n >= -MAX then return n end\n"                         \
    "  return nil\n"                                                                               \
    "end\n"

/*
 * Settle a batch of rounds, each on its own all-or-nothing. Per round r (in order):
 *   KEYS: round record, fencing epoch, rake account, n wallets
 *   ARGV: n, epoch, rake, n deltas          (ARGV[1] is the record ttl in seconds, for all)
 * Returns one {flag, value} per round: {1, balances} applied now, {0, balances} applied before
 * (the first result), {-1, "MONEY_... reason"} rejected. Every check of a round happens before
 * it changes anything, so a rejected round leaves everything untouched; the layout of the whole
 * batch is checked before any round runs.
 *
 * The work is done per batch, not per round, because each redis.call costs several times the
 * Lua around it (about 11k instructions for a SET, callgrind): one MGET reads every round
 * record of the batch (replays), one MGET every wallet and rake account the other rounds touch;
 * the rounds are then judged in order against those balances in a Lua table (a later round
 * sees the earlier rounds' results, exactly as if they had been written), and the writes follow
 * in one go: one MSET of the wallets whose balance changed, one INCRBY per rake account, one
 * SET EX per applied round's record. Each fence is read once per batch. A round id repeated
 * inside one batch is a replay of its first occurrence. All checks happen before the first
 * write, so the only writes are those of accepted rounds. A rake account that does not hold an
 * integer rejects its rounds (INCRBY would fail half-way through the writes).
 * Per round the Lua does as little as it can: n is looked up (not parsed), the epoch is
 * compared as text with the fence (parsed only when they differ, for the error), one
 * string.format writes the balances. Batching amortises the per-EVALSHA cost; the writer sends
 * up to batch_max consecutive settlements in one call, the sync client one.
 */
static const char money_lua_settle[] = MONEY_LUA_INT
    "local ttl = int(ARGV[1])\n"
    "if not ttl or ttl <= 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS ttl must be a positive integer') end\n"
    "local counts = {['1'] = 1, ['2'] = 2, ['3'] = 3, ['4'] = 4, ['5'] = 5, ['6'] = 6, ['7'] = 7,\n"
    "  ['8'] = 8, ['9'] = 9, ['10'] = 10, ['11'] = 11, ['12'] = 12, ['13'] = 13, ['14'] = 14,\n"
    "  ['15'] = 15, ['16'] = 16}\n"
    "local nkeys, nargv = #KEYS, #ARGV\n"
    "local rk, ra, rn, nr, k, a = {}, {}, {}, 0, 1, 2\n"
    "while a <= nargv do\n"
    "  local n = counts[ARGV[a]]\n"
    "  if not n or k + 2 + n > nkeys or a + 2 + n > nargv then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS malformed batch: each round needs a round, ' ..\n"
    "      'epoch and rake key, n wallets, and n, epoch, rake and n deltas (n = 1..16)') end\n"
    "  nr = nr + 1\n"
    "  rk[nr], ra[nr], rn[nr] = k, a, n\n"
    "  k = k + 3 + n\n"
    "  a = a + 3 + n\n"
    "end\n"
    "if k ~= nkeys + 1 or nr == 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS keys do not match the rounds') end\n"
    "local function mget(keys)\n"
    "  local n = #keys\n"
    "  if n <= 1000 then return call('MGET', unpack(keys)) end\n"
    "  local vals = {}\n"
    "  for i = 1, n, 1000 do\n"
    "    local part = call('MGET', unpack(keys, i, math.min(i + 999, n)))\n"
    "    for j = 1, #part do vals[i + j - 1] = part[j] end\n"
    "  end\n"
    "  return vals\n"
    "end\n"
    "local recs = {}\n"
    "for r = 1, nr do recs[r] = KEYS[rk[r]] end\n"
    "local prev = mget(recs)\n"
    "local names, orig, nn, israke, bal = {}, {}, 0, {}, {}\n"
    "for r = 1, nr do\n"
    "  if not prev[r] then\n"
    "    local k = rk[r]\n"
    "    israke[KEYS[k + 2]] = true\n"
    "    for j = k + 2, k + 2 + rn[r] do\n"
    "      local key = KEYS[j]\n"
    "      if bal[key] == nil then\n"
    "        nn = nn + 1\n"
    "        names[nn] = key\n"
    "        bal[key] = 0\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "if nn > 0 then\n"
    "  local vals = mget(names)\n"
    "  for i = 1, nn do\n"
    "    local key, v = names[i], vals[i]\n"
    "    if v then\n"
    "      if israke[key] and (#v > 18 or not string.find(v, '^%-?%d+$')) then v = false\n"
    "      else v = tonumber(v) or false end\n"
    "      bal[key] = v\n"
    "    else v = 0 end\n"
    "    orig[i] = v\n"
    "  end\n"
    "end\n"
    "local epochs, done, deltas, out = {}, {}, {}, {}\n"
    "local fmts = {'%d', '%d %d', '%d %d %d', '%d %d %d %d', '%d %d %d %d %d'}\n"
    "local function fmt(n)\n"
    "  local f = fmts[n]\n"
    "  if not f then\n"
    "    f = fmt(n - 1) .. ' %d'\n"
    "    fmts[n] = f\n"
    "  end\n"
    "  return f\n"
    "end\n"
    "local rakes, rakekeys, reck, recv, nrec = {}, {}, {}, {}, 0\n"
    "local BADNUM = 'MONEY_BAD_ARGS epoch and rake must be integers, rake >= 0'\n"
    "local function settle(k, a, n)\n"
    "  local rake = tonumber(ARGV[a + 2])\n"
    "  if not rake or rake % 1 ~= 0 or rake < 0 or rake > MAX then return {-1, BADNUM} end\n"
    "  local ek, ea = KEYS[k + 1], ARGV[a + 1]\n"
    "  local cur = epochs[ek]\n"
    "  if cur == nil then\n"
    "    cur = call('GET', ek)\n"
    "    if cur and not int(cur) then cur = cur .. ' (not an integer)' end\n"
    "    epochs[ek] = cur\n"
    "  end\n"
    "  if cur ~= ea then\n"
    "    local epoch = int(ea)\n"
    "    if not epoch then return {-1, BADNUM} end\n"
    "    if not cur or tonumber(cur) ~= epoch then\n"
    "      return {-1, 'MONEY_STALE_EPOCH round epoch ' .. ea .. ', current ' .. (cur or 'none')}\n"
    "    end\n"
    "  end\n"
    "  local sum, w0 = 0, k + 2\n"
    "  for i = 1, n do\n"
    "    local d = tonumber(ARGV[a + 2 + i])\n"
    "    if not d or d % 1 ~= 0 or d > MAX or d < -MAX then\n"
    "      return {-1, 'MONEY_BAD_ARGS delta ' .. i .. ' is not an integer in range'} end\n"
    "    local w = KEYS[w0 + i]\n"
    "    for j = 1, i - 1 do\n"
    "      if KEYS[w0 + j] == w then\n"
    "        return {-1, 'MONEY_BAD_ARGS wallet ' .. w .. ' appears twice'} end\n"
    "    end\n"
    "    deltas[i] = d\n"
    "    sum = sum + d\n"
    "  end\n"
    "  if sum ~= -rake then\n"
    "    return {-1, format(\n"
    "      'MONEY_BAD_SUM deltas sum to %d but must sum to %d (minus the rake)', sum, -rake)} end\n"
    "  local rkey = KEYS[w0]\n"
    "  if bal[rkey] == false then\n"
    "    return {-1, 'MONEY_BAD_ARGS rake account ' .. rkey .. ' does not hold an integer'} end\n"
    "  for i = 1, n do\n"
    "    local w = KEYS[w0 + i]\n"
    "    local b = bal[w]\n"
    "    if not b then\n"
    "      return {-1, 'MONEY_BAD_ARGS wallet ' .. w .. ' does not hold an integer'} end\n"
    "    local after = b + deltas[i]\n"
    "    if after < 0 then\n"
    "      return {-1, format('MONEY_NEGATIVE wallet %s holds %d, delta %d', w, b, deltas[i])}\n"
    "    end\n"
    "    out[i] = after\n"
    "  end\n"
    "  for i = 1, n do bal[KEYS[w0 + i]] = out[i] end\n"
    "  if rake > 0 then\n"
    "    local acc = rakes[rkey]\n"
    "    if not acc then\n"
    "      acc = 0\n"
    "      rakekeys[#rakekeys + 1] = rkey\n"
    "    elseif acc + rake > 1000000000000000 then\n"
    "      call('INCRBY', rkey, format('%d', acc))\n"
    "      acc = 0\n"
    "    end\n"
    "    rakes[rkey] = acc + rake\n"
    "  end\n"
    "  local res = format(fmt(n), unpack(out, 1, n))\n"
    "  local key = KEYS[k]\n"
    "  done[key] = res\n"
    "  nrec = nrec + 1\n"
    "  reck[nrec] = key\n"
    "  recv[nrec] = res\n"
    "  return {1, res}\n"
    "end\n"
    "local results = {}\n"
    "for r = 1, nr do\n"
    "  local p = prev[r] or done[KEYS[rk[r]]]\n"
    "  if p then results[r] = {0, p}\n"
    "  else results[r] = settle(rk[r], ra[r], rn[r]) end\n"
    "end\n"
    "local mset, m = {}, 0\n"
    "for i = 1, nn do\n"
    "  local w = names[i]\n"
    "  local b = bal[w]\n"
    "  if b ~= orig[i] then\n"
    "    mset[m + 1] = w\n"
    "    mset[m + 2] = format('%d', b)\n"
    "    m = m + 2\n"
    "    if m >= 1000 then\n"
    "      call('MSET', unpack(mset, 1, m))\n"
    "      m = 0\n"
    "    end\n"
    "  end\n"
    "end\n"
    "if m > 0 then call('MSET', unpack(mset, 1, m)) end\n"
    "for i = 1, #rakekeys do\n"
    "  local rkey = rakekeys[i]\n"
    "  call('INCRBY', rkey, format('%d', rakes[rkey]))\n"
    "end\n"
    "local ex = ARGV[1]\n"
    "for i = 1, nrec do call('SET', reck[i], recv[i], 'EX', ex) end\n"
    "return results\n";

/*
 * Buy-in (debit) or cash-out (credit). KEYS[1] wallet, KEYS[2] operation record.
 * ARGV[1] 'debit' | 'credit', ARGV[2] amount (> 0), ARGV[3] record ttl (s).
 */
static const char money_lua_wallet[] = MONEY_LUA_INT
    "local prev = redis.call('GET', KEYS[2])\n"
    "if prev then return {0, prev} end\n"
    "local amount, ttl = int(ARGV[2]), int(ARGV[3])\n"
    "if not amount or amount <= 0 or not ttl or ttl <= 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS amount and ttl must be positive integers') end\n"
    "local bal = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
    "if not bal then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS wallet ' .. KEYS[1] .. ' does not hold an "
    "integer')\n"
    "end\n"
    "local after\n"
    "if ARGV[1] == 'debit' then\n"
    "  if amount > bal then\n"
    "    return redis.error_reply(string.format(\n"
    "      'MONEY_INSUFFICIENT balance %d is less than the buy-in %d', bal, amount)) end\n"
    "  after = redis.call('DECRBY', KEYS[1], amount)\n"
    "elseif ARGV[1] == 'credit' then\n"
    "  if bal + amount > 100000000000000 then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS balance would exceed the maximum') end\n"
    "  after = redis.call('INCRBY', KEYS[1], amount)\n"
    "else\n"
    "  return redis.error_reply('MONEY_BAD_ARGS direction must be debit or credit') end\n"
    "local res = string.format('%d', after)\n"
    "redis.call('SET', KEYS[2], res, 'EX', ttl)\n"
    "return {1, res}\n";

/*
 * Hand history, at most once per round. KEYS[1] stream, KEYS[2] dedupe record, KEYS[3] (round
 * ids with a service) the slot's fence. ARGV[1] MAXLEN (approximate), ARGV[2] record ttl (s),
 * ARGV[3] round id, ARGV[4] JSON, ARGV[5] epoch and ARGV[6] 'live' | 'void' (with KEYS[3]).
 * 'live' (the server that played the round) is written only while the fence equals the epoch,
 * so a server that lost its slot cannot record as completed a round whose settlement the fence
 * refuses; 'void' (a recovery) only once the fence has moved past it.
 */
static const char money_lua_history[] = MONEY_LUA_INT
    "local prev = redis.call('GET', KEYS[2])\n"
    "if prev then return {0, prev} end\n"
    "local cap, ttl = int(ARGV[1]), int(ARGV[2])\n"
    "if not cap or cap <= 0 or not ttl or ttl <= 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS maxlen and ttl must be positive integers') end\n"
    "if KEYS[3] then\n"
    "  local cur = redis.call('GET', KEYS[3])\n"
    "  if ARGV[6] == 'live' and cur ~= ARGV[5] then\n"
    "    return redis.error_reply('MONEY_STALE_EPOCH round epoch ' .. ARGV[5] .. ', current ' ..\n"
    "      (cur or 'none')) end\n"
    "  if ARGV[6] == 'void' and cur == ARGV[5] then\n"
    "    return redis.error_reply('MONEY_ALIVE epoch ' .. ARGV[5] .. ' is still the fence') end\n"
    "  if ARGV[6] ~= 'live' and ARGV[6] ~= 'void' then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS mode must be live or void') end\n"
    "end\n"
    "local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'round', ARGV[3],\n"
    "  'data', ARGV[4])\n"
    "redis.call('SET', KEYS[2], id, 'EX', ttl)\n"
    "return {1, id}\n";

/*
 * Seat transfer. KEYS: owner wallet, seat account, operation record, held HASH, held index,
 * fence. ARGV: 'in' | 'out', amount (> 0), record ttl (s), epoch, account name, owner name,
 * index member. Replays answer the first result (the owner's balance after). The fence must
 * equal the epoch. 'in' moves amount from the owner to the account and records the account
 * (refused when the account holds chips of another owner); 'out' moves it back and forgets an
 * account left empty (refused when the account holds less, or belongs to another owner); the
 * account's key stays (at 0), as a wallet's does.
 */
static const char money_lua_seat[] = MONEY_LUA_INT
    "local prev = call('GET', KEYS[3])\n"
    "if prev then return {0, prev} end\n"
    "local amount, ttl = int(ARGV[2]), int(ARGV[3])\n"
    "if not amount or amount <= 0 or not ttl or ttl <= 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS amount and ttl must be positive integers') end\n"
    "local cur = call('GET', KEYS[6])\n"
    "if cur ~= ARGV[4] then\n"
    "  return redis.error_reply('MONEY_STALE_EPOCH seat account epoch ' .. ARGV[4] ..\n"
    "    ', current ' .. (cur or 'none')) end\n"
    "local own, acc = int(call('GET', KEYS[1]) or '0'), int(call('GET', KEYS[2]) or '0')\n"
    "if not own or not acc or acc < 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS a wallet does not hold an integer') end\n"
    "local held = call('HGET', KEYS[4], ARGV[5])\n"
    "local after\n"
    "if ARGV[1] == 'in' then\n"
    "  if held and held ~= ARGV[6] and acc > 0 then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS seat account ' .. ARGV[5] ..\n"
    "      ' holds chips of ' .. held) end\n"
    "  if amount > own then\n"
    "    return redis.error_reply(format(\n"
    "      'MONEY_INSUFFICIENT balance %d is less than the buy-in %d', own, amount)) end\n"
    "  if acc + amount > MAX then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS balance would exceed the maximum') end\n"
    "  after = call('DECRBY', KEYS[1], amount)\n"
    "  call('INCRBY', KEYS[2], amount)\n"
    "  call('HSET', KEYS[4], ARGV[5], ARGV[6])\n"
    "  call('SADD', KEYS[5], ARGV[7])\n"
    "elseif ARGV[1] == 'out' then\n"
    "  if held and held ~= ARGV[6] then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS seat account ' .. ARGV[5] ..\n"
    "      ' belongs to ' .. held) end\n"
    "  if amount > acc then\n"
    "    return redis.error_reply(format(\n"
    "      'MONEY_INSUFFICIENT seat account holds %d, less than the cash-out %d', acc, amount))\n"
    "  end\n"
    "  if own + amount > MAX then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS balance would exceed the maximum') end\n"
    "  after = call('INCRBY', KEYS[1], amount)\n"
    "  call('DECRBY', KEYS[2], amount)\n"
    "  if acc == amount then call('HDEL', KEYS[4], ARGV[5]) end\n"
    "else\n"
    "  return redis.error_reply('MONEY_BAD_ARGS direction must be in or out') end\n"
    "local res = format('%d', after)\n"
    "call('SET', KEYS[3], res, 'EX', ttl)\n"
    "return {1, res}\n";

/*
 * A round in progress. KEYS: held HASH, held index, fence. ARGV: epoch, field, value, index
 * member. Written only while the fence equals the epoch.
 */
static const char money_lua_mark[] =
    "local cur = redis.call('GET', KEYS[3])\n"
    "if cur ~= ARGV[1] then\n"
    "  return redis.error_reply('MONEY_STALE_EPOCH mark epoch ' .. ARGV[1] .. ', current ' ..\n"
    "    (cur or 'none')) end\n"
    "redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])\n"
    "redis.call('SADD', KEYS[2], ARGV[4])\n"
    "return {1, '0'}\n";

/*
 * Recovery of a held epoch (money_recover). KEYS: fence, lease slot key, the lease's epoch
 * counter, held HASH, held index, recovered record, then n pairs (seat account, owner wallet),
 * then m table offers (their HASHes). ARGV: epoch, mode ('dead' | 'claim' | 'self'), index
 * member, token (self), record ttl, n, n pairs (account name, owner name), m, the m offer ids,
 * then r: fields to forget. An offer still "offered" becomes "void" (no one can adopt it now:
 * its accounts go back to their owners with the rest).
 * The epoch is recoverable when the fence has moved past it (or is gone: data loss); 'claim'
 * also when the fence equals it and nobody holds the slot -- the fence then moves to a new
 * epoch first; 'self' when the caller holds the slot under that epoch. An account is returned
 * only while its record still names that owner; an emptied HASH leaves the index.
 * Returns {1, chips, accounts, fields left, new fence or 0}.
 */
static const char money_lua_recover[] = MONEY_LUA_INT
    "local E, mode = ARGV[1], ARGV[2]\n"
    "local e, ttl, n = int(E), int(ARGV[5]), int(ARGV[6])\n"
    "if not e or not ttl or ttl <= 0 or not n or n < 0 or #KEYS < 6 + 2 * n or\n"
    "   #ARGV < 7 + 2 * n or #KEYS - 6 - 2 * n ~= (tonumber(ARGV[7 + 2 * n]) or -1) then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS malformed recovery') end\n"
    "local cur, moved = call('GET', KEYS[1]), 0\n"
    "if cur == E then\n"
    "  local holder = call('GET', KEYS[2])\n"
    "  if mode == 'self' and holder and holder == ARGV[4] then\n"
    "  elseif mode == 'claim' and not holder then\n"
    "    local c = call('INCR', KEYS[3])\n"
    "    if c <= e then\n"
    "      c = e + 1\n"
    "      call('SET', KEYS[3], c)\n"
    "    end\n"
    "    call('SET', KEYS[1], c)\n"
    "    moved = c\n"
    "  else\n"
    "    return redis.error_reply('MONEY_ALIVE slot epoch ' .. E .. ' is the fence and ' ..\n"
    "      (holder and 'held' or 'not claimed')) end\n"
    "elseif cur and (not int(cur) or int(cur) < e) then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS fence ' .. cur .. ' is behind epoch ' .. E) end\n"
    "local chips, accounts = 0, 0\n"
    "for i = 1, n do\n"
    "  local acct, owner = ARGV[5 + 2 * i], ARGV[6 + 2 * i]\n"
    "  if call('HGET', KEYS[4], acct) == owner then\n"
    "    local b = int(call('GET', KEYS[5 + 2 * i]) or '0')\n"
    "    if b and b >= 0 then\n"
    "      if b > 0 then\n"
    "        call('INCRBY', KEYS[6 + 2 * i], b)\n"
    "        chips = chips + b\n"
    "        accounts = accounts + 1\n"
    "      end\n"
    "      call('DEL', KEYS[5 + 2 * i])\n"
    "      call('HDEL', KEYS[4], acct)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "local m = int(ARGV[7 + 2 * n]) or 0\n"
    "for j = 1, m do\n"
    "  local key = KEYS[6 + 2 * n + j]\n"
    "  if call('HGET', key, 'status') == 'offered' then call('HSET', key, 'status', 'void') end\n"
    "  call('HDEL', KEYS[4], 'h:' .. ARGV[7 + 2 * n + j])\n"
    "end\n"
    "for j = 8 + 2 * n + m, #ARGV do call('HDEL', KEYS[4], ARGV[j]) end\n"
    "local left = call('HLEN', KEYS[4])\n"
    "if left == 0 then call('SREM', KEYS[5], ARGV[3]) end\n"
    "if chips > 0 then\n"
    "  call('HINCRBY', KEYS[6], 'chips', format('%d', chips))\n"
    "  call('HINCRBY', KEYS[6], 'accounts', accounts)\n"
    "  call('EXPIRE', KEYS[6], ttl)\n"
    "end\n"
    "return {1, chips, accounts, left, moved}\n";

/*
 * Offer of a whole table to another server (money.h "Table handoff"). KEYS: offer HASH, the old
 * slot's fence, the old held HASH. ARGV: epoch, offer id, state, record ttl, n, then n triples
 * (seat account, owner, seat). Fenced; every account must be held for its owner. A repeated
 * offer answers the offer's status.
 */
static const char money_lua_offer[] = MONEY_LUA_INT
    "local st = call('HGET', KEYS[1], 'status')\n"
    "if st then return {0, st} end\n"
    "local cur = call('GET', KEYS[2])\n"
    "if cur ~= ARGV[1] then\n"
    "  return redis.error_reply('MONEY_STALE_EPOCH offer epoch ' .. ARGV[1] .. ', current ' ..\n"
    "    (cur or 'none')) end\n"
    "local n, ttl = int(ARGV[5]), int(ARGV[4])\n"
    "if not n or n < 0 or n > 16 or #ARGV ~= 5 + 3 * n or not ttl or ttl <= 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS malformed offer') end\n"
    "for i = 1, n do\n"
    "  local acct, owner = ARGV[3 + 3 * i], ARGV[4 + 3 * i]\n"
    "  if call('HGET', KEYS[3], acct) ~= owner then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS seat account ' .. acct .. ' is not held for ' "
    "..\n"
    "      owner) end\n"
    "end\n"
    "call('HSET', KEYS[1], 'status', 'offered', 'state', ARGV[3], 'n', n)\n"
    "for i = 1, n do\n"
    "  call('HSET', KEYS[1], 'a' .. i, ARGV[3 + 3 * i], 'o' .. i, ARGV[4 + 3 * i], 's' .. i,\n"
    "    ARGV[5 + 3 * i])\n"
    "end\n"
    "call('EXPIRE', KEYS[1], ttl)\n"
    "call('HSET', KEYS[3], 'h:' .. ARGV[2], '1')\n"
    "return {1, 'offered'}\n";

/*
 * Adoption of an offered table (money.h "Table handoff"). KEYS: offer HASH, old held HASH, new
 * fence, new held HASH, held index, then n pairs (old seat account, new seat account). ARGV:
 * new epoch, adopter id, new index member, offer id, n, then n triples (old account, new
 * account, owner). Exactly once: an adopted offer answers its first result to the same adopter
 * and MONEY_ADOPTED to any other; a voided one (its server's chips were recovered) is
 * MONEY_OFFER_VOID. Every account's chips move to the new account, recorded as held by the new
 * epoch, in this one script. Returns {1 | 0, "stack stack ..."} ("" for no accounts).
 */
static const char money_lua_adopt[] = MONEY_LUA_INT
    "local st = call('HGET', KEYS[1], 'status')\n"
    "if not st then return redis.error_reply('MONEY_NO_OFFER ' .. ARGV[4]) end\n"
    "if st == 'adopted' then\n"
    "  local by = call('HGET', KEYS[1], 'adopter')\n"
    "  if by == ARGV[2] then return {0, call('HGET', KEYS[1], 'stacks')} end\n"
    "  return redis.error_reply('MONEY_ADOPTED by ' .. (by or '?')) end\n"
    "if st ~= 'offered' then\n"
    "  return redis.error_reply('MONEY_OFFER_VOID ' .. ARGV[4] .. ' is ' .. st) end\n"
    "local cur = call('GET', KEYS[3])\n"
    "if cur ~= ARGV[1] then\n"
    "  return redis.error_reply('MONEY_STALE_EPOCH adopter epoch ' .. ARGV[1] .. ', current ' ..\n"
    "    (cur or 'none')) end\n"
    "local n = int(ARGV[5])\n"
    "if not n or n < 0 or tostring(n) ~= call('HGET', KEYS[1], 'n') or #ARGV ~= 5 + 3 * n or\n"
    "   #KEYS ~= 5 + 2 * n then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS the adoption does not match the offer') end\n"
    "local bal = {}\n"
    "for i = 1, n do\n"
    "  local old, owner = ARGV[3 + 3 * i], ARGV[5 + 3 * i]\n"
    "  if call('HGET', KEYS[1], 'a' .. i) ~= old or call('HGET', KEYS[1], 'o' .. i) ~= owner or\n"
    "     call('HGET', KEYS[2], old) ~= owner then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS seat account ' .. old ..\n"
    "      ' is not in the offer or not held') end\n"
    "  local b = int(call('GET', KEYS[4 + 2 * i]) or '0')\n"
    "  if not b or b < 0 then\n"
    "    return redis.error_reply('MONEY_BAD_ARGS seat account ' .. old .. ' holds no integer') "
    "end\n"
    "  bal[i] = b\n"
    "end\n"
    "for i = 1, n do\n"
    "  local old, new, owner = ARGV[3 + 3 * i], ARGV[4 + 3 * i], ARGV[5 + 3 * i]\n"
    "  if bal[i] > 0 then call('INCRBY', KEYS[5 + 2 * i], bal[i]) end\n"
    "  call('SET', KEYS[4 + 2 * i], '0')\n"
    "  call('HDEL', KEYS[2], old)\n"
    "  call('HSET', KEYS[4], new, owner)\n"
    "  bal[i] = format('%d', bal[i])\n"
    "end\n"
    "if n > 0 then call('SADD', KEYS[5], ARGV[3]) end\n"
    "call('HDEL', KEYS[2], 'h:' .. ARGV[4])\n"
    "local stacks = table.concat(bal, ' ')\n"
    "call('HSET', KEYS[1], 'status', 'adopted', 'adopter', ARGV[2], 'stacks', stacks)\n"
    "return {1, stacks}\n";

/*
 * Withdrawal of an offer nobody adopted (money.h "Table handoff"). KEYS: offer HASH, the old
 * server's fence, its held HASH. ARGV: epoch, offer id. An offered table goes back to its old
 * server ("withdrawn": its accounts stay held by the old epoch, the h: mark goes); an adopted,
 * void or withdrawn one answers its status unchanged. Returns {1 | 0, status}.
 */
static const char money_lua_withdraw[] = MONEY_LUA_INT
    "local st = call('HGET', KEYS[1], 'status')\n"
    "if not st then return redis.error_reply('MONEY_NO_OFFER ' .. ARGV[2]) end\n"
    "if st ~= 'offered' then return {0, st} end\n"
    "local cur = call('GET', KEYS[2])\n"
    "if cur ~= ARGV[1] then\n"
    "  return redis.error_reply('MONEY_STALE_EPOCH withdraw epoch ' .. ARGV[1] .. ', current ' "
    "..\n"
    "    (cur or 'none')) end\n"
    "call('HSET', KEYS[1], 'status', 'withdrawn')\n"
    "call('HDEL', KEYS[3], 'h:' .. ARGV[2])\n"
    "return {1, 'withdrawn'}\n";

enum {
    SCRIPT_SETTLE = 0,
    SCRIPT_WALLET = 1,
    SCRIPT_HISTORY = 2,
    SCRIPT_SEAT = 3,
    SCRIPT_MARK = 4,
    SCRIPT_RECOVER = 5,
    SCRIPT_OFFER = 6,
    SCRIPT_ADOPT = 7,
    SCRIPT_WITHDRAW = 8
};

static const char *const money_scripts[MONEY_NSCRIPTS] = {
    money_lua_settle,  money_lua_wallet, money_lua_history, money_lua_seat,    money_lua_mark,
    money_lua_recover, money_lua_offer,  money_lua_adopt,   money_lua_withdraw};
static char money_shas[MONEY_NSCRIPTS][41];
static pthread_once_t money_sha_once = PTHREAD_ONCE_INIT;

static void money_sha_init(void)
{
    for (int i = 0; i < MONEY_NSCRIPTS; i++) {
        unsigned char md[SHA_DIGEST_LENGTH];
        SHA1((const unsigned char *)money_scripts[i], strlen(money_scripts[i]), md);
        for (int j = 0; j < SHA_DIGEST_LENGTH; j++)
            snprintf(money_shas[i] + 2 * j, 3, "%02x", md[j]);
    }
}

const char *money_script_text(int index)
{
    return index >= 0 && index < MONEY_NSCRIPTS ? money_scripts[index] : NULL;
}

const char *money_script_sha(int index)
{
    if (index < 0 || index >= MONEY_NSCRIPTS)
        return NULL;
    pthread_once(&money_sha_once, money_sha_init);
    return money_shas[index];
}

/* ---- Errors, ids, names ------------------------------------------------------------- */

const char *money_strerror(int code)
{
    switch (code) {
    case MONEY_OK:
        return "ok";
    case MONEY_ERR_INSUFFICIENT:
        return "the buy-in is larger than the balance";
    case MONEY_ERR_STALE_EPOCH:
        return "stale fencing epoch: this server no longer holds its lease";
    case MONEY_ERR_BAD_SUM:
        return "the deltas do not sum to minus the rake";
    case MONEY_ERR_NEGATIVE:
        return "a wallet would go negative";
    case MONEY_ERR_BAD_ARGS:
        return "malformed money operation";
    case MONEY_ERR_REDIS:
        return "unexpected Redis reply";
    case MONEY_ERR_ALIVE:
        return "the slot's epoch is still live: nothing to recover yet";
    case MONEY_ERR_ADOPTED:
        return "the table was adopted by another server";
    case MONEY_ERR_OFFER_VOID:
        return "the table's offer was voided: its chips went back to the wallets";
    case MONEY_ERR_NO_OFFER:
        return "no such table offer";
    default:
        return code < 0 ? strerror(-code) : "unknown";
    }
}

int money_round_id_format(const money_round_id_t *id, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s%s%" PRIu32 ":%" PRIu64 ":%" PRIu64 ":%" PRIu64, id->service,
                     id->service[0] != '\0' ? ":" : "", id->server, id->epoch, id->desk, id->seq);
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* A service in a round id starts with a letter, so "1:2:3:4:5" is not read as service "1". */
static bool money_valid_service(const char *service)
{
    return money_valid_name(service) &&
           ((service[0] >= 'a' && service[0] <= 'z') || (service[0] >= 'A' && service[0] <= 'Z'));
}

int money_round_id_set_service(money_round_id_t *id, const char *service)
{
    if (!money_valid_service(service))
        return -EINVAL;
    snprintf(id->service, sizeof id->service, "%s", service);
    return 0;
}

static int money_parse_u64(const char **p, char stop, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return -EINVAL;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (*s != stop)
        return -EINVAL;
    *out = v;
    *p = stop ? s + 1 : s;
    return 0;
}

static int money_round_id_parse_numbers(const char *p, money_round_id_t *out)
{
    uint64_t server, epoch, desk, seq;
    if (money_parse_u64(&p, ':', &server) != 0 || server > UINT32_MAX ||
        money_parse_u64(&p, ':', &epoch) != 0 || money_parse_u64(&p, ':', &desk) != 0 ||
        money_parse_u64(&p, '\0', &seq) != 0)
        return -EINVAL;
    out->server = (uint32_t)server;
    out->epoch = epoch;
    out->desk = desk;
    out->seq = seq;
    return 0;
}

int money_round_id_parse(const char *text, money_round_id_t *out)
{
    money_round_id_t id = {0};
    if (text == NULL)
        return -EINVAL;
    if (money_round_id_parse_numbers(text, &id) != 0) {
        const char *colon = strchr(text, ':');
        size_t n = colon != NULL ? (size_t)(colon - text) : 0;
        if (n == 0 || n > MONEY_NAME_MAX)
            return -EINVAL;
        memcpy(id.service, text, n);
        id.service[n] = '\0';
        if (!money_valid_service(id.service) || money_round_id_parse_numbers(colon + 1, &id) != 0)
            return -EINVAL;
    }
    *out = id;
    return 0;
}

static bool money_valid_chars(const char *s, size_t max, const char *extra)
{
    if (s == NULL || *s == '\0')
        return false;
    size_t n = 0;
    for (; *s; s++, n++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr(extra, c) != NULL;
        if (!ok || n >= max)
            return false;
    }
    return true;
}

bool money_valid_player(const char *player)
{
    return money_valid_chars(player, MONEY_NAME_MAX, "_.-");
}

bool money_valid_name(const char *name)
{
    return money_valid_chars(name, MONEY_NAME_MAX, "_.-");
}

bool money_valid_op_id(const char *op_id)
{
    return money_valid_chars(op_id, MONEY_ID_MAX, "_.:-");
}

static bool money_amount_ok(int64_t v)
{
    return v >= -MONEY_MAX_AMOUNT && v <= MONEY_MAX_AMOUNT;
}

int money_settlement_check(const money_settlement_t *s, char *err, size_t errlen)
{
    if (s == NULL) {
        snprintf(err, errlen, "no settlement");
        return -EINVAL;
    }
    if (!money_valid_name(s->game)) {
        snprintf(err, errlen, "game name missing or not [A-Za-z0-9_.-]{1,64}");
        return -EINVAL;
    }
    if (s->round.service[0] != '\0' &&
        (memchr(s->round.service, '\0', sizeof s->round.service) == NULL ||
         !money_valid_service(s->round.service))) {
        snprintf(err, errlen, "round id service not [A-Za-z][A-Za-z0-9_.-]{0,63}");
        return -EINVAL;
    }
    if (s->nplayers < 1 || s->nplayers > MONEY_MAX_PLAYERS) {
        snprintf(err, errlen, "a settlement needs 1..%d players, got %zu", MONEY_MAX_PLAYERS,
                 s->nplayers);
        return -EINVAL;
    }
    if (s->rake < 0 || !money_amount_ok(s->rake)) {
        snprintf(err, errlen, "rake %" PRId64 " must be in [0, %lld]", s->rake, MONEY_MAX_AMOUNT);
        return -EINVAL;
    }
    for (size_t i = 0; i < s->nplayers; i++) {
        if (!money_valid_player(s->players[i])) {
            snprintf(err, errlen, "player %zu: id missing or not [A-Za-z0-9_.-]{1,64}", i);
            return -EINVAL;
        }
        if (!money_amount_ok(s->deltas[i])) {
            snprintf(err, errlen, "player %s: delta %" PRId64 " out of range", s->players[i],
                     s->deltas[i]);
            return -EINVAL;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(s->players[i], s->players[j]) == 0) {
                snprintf(err, errlen, "player %s appears twice", s->players[i]);
                return -EINVAL;
            }
        }
    }
    return 0;
}

static int money_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int money_key_wallet(const char *player, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:money}:wallet:%s", player);
}

int money_key_round(const char *round_id, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:money}:round:%s", round_id);
}

int money_key_rake(const char *game, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:money}:rake:%s", game);
}

int money_key_epoch(const char *service, uint32_t slot, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:lease:%s}:slot:%" PRIu32 ":epoch", service, slot);
}

int money_key_stream(const char *game, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:history:%s}:stream", game);
}

/* ---- Command building --------------------------------------------------------------- */

/* EVALSHA sha numkeys | 3 + n keys | ttl | n epoch rake, n deltas */
#define MONEY_ARGV_MAX (2 + 1 + 3 + MONEY_MAX_PLAYERS + 1 + 3 + MONEY_MAX_PLAYERS)

/* An argv under construction: short arguments are copied into slots, long ones borrowed. */
typedef struct {
    int argc;
    const char *argv[MONEY_ARGV_MAX];
    size_t lens[MONEY_ARGV_MAX];
    char slot[MONEY_ARGV_MAX][160];
    bool overflow;
} money_argv_t;

static void money_argv_fmt(money_argv_t *a, const char *fmt, ...)
{
    if (a->argc >= MONEY_ARGV_MAX) {
        a->overflow = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(a->slot[a->argc], sizeof a->slot[0], fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof a->slot[0]) {
        a->overflow = true;
        return;
    }
    a->argv[a->argc] = a->slot[a->argc];
    a->lens[a->argc] = (size_t)n;
    a->argc++;
}

static void money_argv_borrow(money_argv_t *a, const char *s, size_t len)
{
    if (a->argc >= MONEY_ARGV_MAX) {
        a->overflow = true;
        return;
    }
    a->argv[a->argc] = s;
    a->lens[a->argc] = len;
    a->argc++;
}

/* argv[0..1] are EVALSHA <sha>; money_argv_eval() switches them to EVAL <text>. */
static void money_argv_script(money_argv_t *a, int script)
{
    a->argc = 0;
    a->overflow = false;
    money_argv_borrow(a, "EVALSHA", 7);
    const char *sha = money_script_sha(script);
    money_argv_borrow(a, sha, strlen(sha));
}

static void money_argv_eval(money_argv_t *a, int script)
{
    a->argv[0] = "EVAL";
    a->lens[0] = 4;
    a->argv[1] = money_scripts[script];
    a->lens[1] = strlen(money_scripts[script]);
}

static int money_argv_settle(money_argv_t *a, const char *service, const money_settlement_t *s,
                             long ttl_s)
{
    char err[160];
    if (money_settlement_check(s, err, sizeof err) != 0 || !money_valid_name(service))
        return -EINVAL;
    char rid[MONEY_ID_MAX + 1];
    if (money_round_id_format(&s->round, rid, sizeof rid) != 0)
        return -EINVAL;
    money_argv_script(a, SCRIPT_SETTLE);
    money_argv_fmt(a, "%zu", s->nplayers + 3);
    money_argv_fmt(a, "{croupier:money}:round:%s", rid);
    money_argv_fmt(a, "{croupier:lease:%s}:slot:%" PRIu32 ":epoch", service, s->round.server);
    money_argv_fmt(a, "{croupier:money}:rake:%s", s->game);
    for (size_t i = 0; i < s->nplayers; i++)
        money_argv_fmt(a, "{croupier:money}:wallet:%s", s->players[i]);
    money_argv_fmt(a, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    money_argv_fmt(a, "%zu", s->nplayers);
    money_argv_fmt(a, "%" PRIu64, s->round.epoch);
    money_argv_fmt(a, "%" PRId64, s->rake);
    for (size_t i = 0; i < s->nplayers; i++)
        money_argv_fmt(a, "%" PRId64, s->deltas[i]);
    return a->overflow ? -EINVAL : 0;
}

static int money_argv_wallet(money_argv_t *a, money_kind_t kind, const char *player, int64_t amount,
                             const char *op_id, long ttl_s)
{
    if ((kind != MONEY_KIND_BUYIN && kind != MONEY_KIND_CASHOUT) || !money_valid_player(player) ||
        !money_valid_op_id(op_id) || amount <= 0 || amount > MONEY_MAX_AMOUNT)
        return -EINVAL;
    money_argv_script(a, SCRIPT_WALLET);
    money_argv_fmt(a, "2");
    money_argv_fmt(a, "{croupier:money}:wallet:%s", player);
    money_argv_fmt(a, "{croupier:money}:op:%s", op_id);
    money_argv_fmt(a, "%s", kind == MONEY_KIND_BUYIN ? "debit" : "credit");
    money_argv_fmt(a, "%" PRId64, amount);
    money_argv_fmt(a, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    return a->overflow ? -EINVAL : 0;
}

/* A round id with a service is fenced by its slot (mode "live", or "void" for a recovery). */
static int money_argv_history(money_argv_t *a, const char *round_id, const char *game,
                              const char *json, long maxlen, long ttl_s, const char *mode)
{
    money_round_id_t rid;
    if (!money_valid_name(game) || round_id == NULL || money_round_id_parse(round_id, &rid) != 0 ||
        json == NULL || maxlen <= 0)
        return -EINVAL;
    bool fenced = rid.service[0] != '\0';
    money_argv_script(a, SCRIPT_HISTORY);
    money_argv_fmt(a, fenced ? "3" : "2");
    money_argv_fmt(a, "{croupier:history:%s}:stream", game);
    money_argv_fmt(a, "{croupier:history:%s}:seen:%s", game, round_id);
    if (fenced)
        money_argv_fmt(a, "{croupier:lease:%s}:slot:%" PRIu32 ":epoch", rid.service, rid.server);
    money_argv_fmt(a, "%ld", maxlen);
    money_argv_fmt(a, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    money_argv_fmt(a, "%s", round_id);
    money_argv_borrow(a, json, strlen(json));
    if (fenced) {
        money_argv_fmt(a, "%" PRIu64, rid.epoch);
        money_argv_fmt(a, "%s", mode);
    }
    return a->overflow ? -EINVAL : 0;
}

int money_key_held(const char *service, uint32_t slot, uint64_t epoch, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, slot,
                     epoch);
}

int money_held_parse(const char *member, char *service, size_t len, uint32_t *slot, uint64_t *epoch)
{
    const char *c2 = member != NULL ? strrchr(member, ':') : NULL;
    if (c2 == NULL || c2 == member)
        return -EINVAL;
    const char *c1 = c2 - 1;
    while (c1 > member && *c1 != ':')
        c1--;
    size_t n = (size_t)(c1 - member);
    if (*c1 != ':' || n == 0 || n >= len || n > MONEY_NAME_MAX)
        return -EINVAL;
    char svc[MONEY_NAME_MAX + 1];
    memcpy(svc, member, n);
    svc[n] = '\0';
    const char *p = c1 + 1;
    uint64_t sl, ep;
    if (!money_valid_name(svc) || money_parse_u64(&p, ':', &sl) != 0 || sl > UINT32_MAX ||
        money_parse_u64(&p, '\0', &ep) != 0)
        return -EINVAL;
    memcpy(service, svc, n + 1);
    *slot = (uint32_t)sl;
    *epoch = ep;
    return 0;
}

static int money_argv_seat(money_argv_t *a, const char *service, money_kind_t kind,
                           const money_seat_t *st, int64_t amount, const char *op_id, long ttl_s)
{
    if ((kind != MONEY_KIND_SEAT_IN && kind != MONEY_KIND_SEAT_OUT) || st == NULL ||
        !money_valid_name(service) || !money_valid_player(st->account) ||
        !money_valid_player(st->owner) || strcmp(st->account, st->owner) == 0 ||
        !money_valid_op_id(op_id) || amount <= 0 || amount > MONEY_MAX_AMOUNT)
        return -EINVAL;
    money_argv_script(a, SCRIPT_SEAT);
    money_argv_fmt(a, "6");
    money_argv_fmt(a, "{croupier:money}:wallet:%s", st->owner);
    money_argv_fmt(a, "{croupier:money}:wallet:%s", st->account);
    money_argv_fmt(a, "{croupier:money}:op:%s", op_id);
    money_argv_fmt(a, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, st->slot,
                   st->epoch);
    money_argv_fmt(a, "%s", MONEY_HELD_INDEX_KEY);
    money_argv_fmt(a, "{croupier:lease:%s}:slot:%" PRIu32 ":epoch", service, st->slot);
    money_argv_fmt(a, "%s", kind == MONEY_KIND_SEAT_IN ? "in" : "out");
    money_argv_fmt(a, "%" PRId64, amount);
    money_argv_fmt(a, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    money_argv_fmt(a, "%" PRIu64, st->epoch);
    money_argv_fmt(a, "%s", st->account);
    money_argv_fmt(a, "%s", st->owner);
    money_argv_fmt(a, "%s:%" PRIu32 ":%" PRIu64, service, st->slot, st->epoch);
    return a->overflow ? -EINVAL : 0;
}

static int money_argv_format(const money_argv_t *a, char **cmd, size_t *len)
{
    char *out = NULL;
    int n = redisFormatCommandArgv(&out, a->argc, (const char **)a->argv, a->lens);
    if (n < 0 || out == NULL)
        return -ENOMEM;
    *cmd = out;
    *len = (size_t)n;
    return 0;
}

int money_cmd_settle(const char *service, const money_settlement_t *s, long ttl_s, char **cmd,
                     size_t *len)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_settle(a, service, s, ttl_s);
    if (rc == 0)
        rc = money_argv_format(a, cmd, len);
    free(a);
    return rc;
}

/* Appends argv[from, to) as RESP bulk strings to buf (which has room, see callers). */
static size_t money_resp_bulks(char *buf, const money_argv_t *a, int from, int to)
{
    size_t off = 0;
    for (int i = from; i < to; i++) {
        off += (size_t)sprintf(buf + off, "$%zu\r\n", a->lens[i]);
        memcpy(buf + off, a->argv[i], a->lens[i]);
        off += a->lens[i];
        buf[off++] = '\r';
        buf[off++] = '\n';
    }
    return off;
}

/*
 * Copies argv entries [from, to) except `skip` (-1 = none) into one allocation holding the
 * pointer array, the length array and the bytes (each NUL-terminated for logs).
 */
static void money_op_fill(money_op_t *op, const money_argv_t *a, int from, int to, int skip)
{
    int n = 0;
    size_t bytes = 0;
    for (int i = from; i < to; i++) {
        if (i != skip) {
            n++;
            bytes += a->lens[i] + 1;
        }
    }
    char *mem = malloc((size_t)n * (sizeof(char *) + sizeof(size_t)) + bytes);
    if (mem == NULL)
        abort(); /* out of memory: see xmalloc.h */
    op->argv = (const char **)(void *)mem;
    op->lens = (size_t *)(void *)(mem + (size_t)n * sizeof(char *));
    char *data = mem + (size_t)n * (sizeof(char *) + sizeof(size_t));
    op->argc = 0;
    for (int i = from; i < to; i++) {
        if (i == skip)
            continue;
        memcpy(data, a->argv[i], a->lens[i]);
        data[a->lens[i]] = '\0';
        op->argv[op->argc] = data;
        op->lens[op->argc] = a->lens[i];
        op->argc++;
        data += a->lens[i] + 1;
    }
}

/* Writes u in decimal to buf (room for 20 digits); returns the length. */
static size_t money_u64_text(char *buf, uint64_t u)
{
    char tmp[24];
    size_t n = 0, len = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    while (n > 0)
        buf[len++] = tmp[--n];
    return len;
}

/* Writes v in decimal to buf (room for 20 digits and a sign); returns the length. */
static size_t money_i64_text(char *buf, int64_t v)
{
    if (v >= 0)
        return money_u64_text(buf, (uint64_t)v);
    buf[0] = '-';
    return 1 + money_u64_text(buf + 1, (uint64_t)0 - (uint64_t)v);
}

/* One argument being appended to an op: its bytes are written at *data by the caller. */
typedef struct {
    money_op_t *op;
    char *data;
} money_op_cursor_t;

static void money_op_start(money_op_cursor_t *c)
{
    c->op->argv[c->op->argc] = c->data;
}

static void money_op_put(money_op_cursor_t *c, const char *s, size_t len)
{
    memcpy(c->data, s, len);
    c->data += len;
}

static void money_op_end(money_op_cursor_t *c)
{
    money_op_t *op = c->op;
    op->lens[op->argc] = (size_t)(c->data - op->argv[op->argc]);
    *c->data++ = '\0';
    op->argc++;
}

static void money_op_number(money_op_cursor_t *c, int64_t v)
{
    money_op_start(c);
    c->data += money_i64_text(c->data, v);
    money_op_end(c);
}

#define MONEY_PUT_LIT(c, lit) money_op_put((c), (lit), sizeof(lit) - 1)

/*
 * The settle op is built directly (no printf, one allocation): this runs once per settlement on
 * the desks' threads, so it is part of the writer's throughput. Same keys and arguments as
 * money_argv_settle() without the ttl (the batch's, added by the writer).
 */
int money_op_settle(const char *service, const money_settlement_t *s, money_op_t *out)
{
    char err[160];
    if (money_settlement_check(s, err, sizeof err) != 0 || !money_valid_name(service))
        return -EINVAL;
    size_t n = s->nplayers, slen = strlen(service), glen = strlen(s->game);
    size_t plen[MONEY_MAX_PLAYERS];
    /* Per argument a NUL; numbers take at most 20 characters and a sign. */
    size_t bytes = sizeof "{croupier:money}:round:" + MONEY_ID_MAX + 1 +
                   sizeof "{croupier:lease:}:slot::epoch" + slen + 21 +
                   sizeof "{croupier:money}:rake:" + glen + (3 + n) * 22;
    for (size_t i = 0; i < n; i++) {
        plen[i] = strlen(s->players[i]);
        bytes += sizeof "{croupier:money}:wallet:" + plen[i];
    }
    int argc = 2 * (int)n + 6;
    char *mem = malloc((size_t)argc * (sizeof(char *) + sizeof(size_t)) + bytes);
    if (mem == NULL)
        abort(); /* out of memory: see xmalloc.h */
    out->script = SCRIPT_SETTLE;
    out->nkeys = (int)n + 3;
    out->argc = 0;
    out->argv = (const char **)(void *)mem;
    out->lens = (size_t *)(void *)(mem + (size_t)argc * sizeof(char *));
    money_op_cursor_t c = {out, mem + (size_t)argc * (sizeof(char *) + sizeof(size_t))};

    money_op_start(&c); /* round record: {croupier:money}:round:<round id> */
    MONEY_PUT_LIT(&c, "{croupier:money}:round:");
    money_round_id_format(&s->round, c.data, MONEY_ID_MAX + 1); /* fits: service checked */
    c.data += strlen(c.data);
    money_op_end(&c);
    money_op_start(&c); /* fence: {croupier:lease:<service>}:slot:<server>:epoch */
    MONEY_PUT_LIT(&c, "{croupier:lease:");
    money_op_put(&c, service, slen);
    MONEY_PUT_LIT(&c, "}:slot:");
    c.data += money_u64_text(c.data, s->round.server);
    MONEY_PUT_LIT(&c, ":epoch");
    money_op_end(&c);
    money_op_start(&c);
    MONEY_PUT_LIT(&c, "{croupier:money}:rake:");
    money_op_put(&c, s->game, glen);
    money_op_end(&c);
    for (size_t i = 0; i < n; i++) {
        money_op_start(&c);
        MONEY_PUT_LIT(&c, "{croupier:money}:wallet:");
        money_op_put(&c, s->players[i], plen[i]);
        money_op_end(&c);
    }
    money_op_number(&c, (int64_t)n);
    money_op_start(&c); /* the epoch is a u64 */
    c.data += money_u64_text(c.data, s->round.epoch);
    money_op_end(&c);
    money_op_number(&c, s->rake);
    for (size_t i = 0; i < n; i++)
        money_op_number(&c, s->deltas[i]);
    return 0;
}

int money_op_wallet(money_kind_t kind, const char *player, int64_t amount, const char *op_id,
                    long ttl_s, money_op_t *out)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_wallet(a, kind, player, amount, op_id, ttl_s);
    if (rc == 0) {
        out->script = SCRIPT_WALLET;
        out->nkeys = 2;
        money_op_fill(out, a, 3, a->argc, -1);
    }
    free(a);
    return rc;
}

int money_op_history(const char *round_id, const char *game, const char *json, long maxlen,
                     long ttl_s, money_op_t *out)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_history(a, round_id, game, json, maxlen, ttl_s, "live");
    if (rc == 0) {
        out->script = SCRIPT_HISTORY;
        out->nkeys = a->argv[2][0] - '0';
        money_op_fill(out, a, 3, a->argc, -1);
    }
    free(a);
    return rc;
}

int money_op_seat(const char *service, money_kind_t kind, const money_seat_t *s, int64_t amount,
                  const char *op_id, long ttl_s, money_op_t *out)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_seat(a, service, kind, s, amount, op_id, ttl_s);
    if (rc == 0) {
        out->script = SCRIPT_SEAT;
        out->nkeys = 6;
        money_op_fill(out, a, 3, a->argc, -1);
    }
    free(a);
    return rc;
}

int money_op_mark(const char *service, uint32_t slot, uint64_t epoch, const char *field,
                  const char *value, money_op_t *out)
{
    if (!money_valid_name(service) || field == NULL || field[0] == '\0' || strlen(field) > 64 ||
        value == NULL)
        return -EINVAL;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    money_argv_script(a, SCRIPT_MARK);
    money_argv_fmt(a, "3");
    money_argv_fmt(a, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    money_argv_fmt(a, "%s", MONEY_HELD_INDEX_KEY);
    money_argv_fmt(a, "{croupier:lease:%s}:slot:%" PRIu32 ":epoch", service, slot);
    money_argv_fmt(a, "%" PRIu64, epoch);
    money_argv_fmt(a, "%s", field);
    money_argv_borrow(a, value, strlen(value));
    money_argv_fmt(a, "%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    int rc = a->overflow ? -EINVAL : 0;
    if (rc == 0) {
        out->script = SCRIPT_MARK;
        out->nkeys = 3;
        money_op_fill(out, a, 3, a->argc, -1);
    }
    free(a);
    return rc;
}

void money_op_free(money_op_t *op)
{
    if (op == NULL)
        return;
    free((void *)op->argv);
    op->argv = NULL;
    op->lens = NULL;
    op->argc = op->nkeys = 0;
}

int money_settle_parts(const char *service, const money_settlement_t *s, money_settle_parts_t *out)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_settle(a, service, s, 1);
    if (rc == 0) {
        /* argv: EVALSHA sha numkeys | 3+n keys | ttl | n epoch rake deltas */
        int nkeys = (int)s->nplayers + 3;
        size_t cap = 0;
        for (int i = 3; i < a->argc; i++)
            cap += a->lens[i] + 32;
        out->buf = malloc(cap);
        if (out->buf == NULL) {
            free(a);
            return -ENOMEM;
        }
        out->keys_len = money_resp_bulks(out->buf, a, 3, 3 + nkeys);
        out->args_len = money_resp_bulks(out->buf + out->keys_len, a, 4 + nkeys, a->argc);
        out->nkeys = nkeys;
        out->nargs = a->argc - 4 - nkeys;
    }
    free(a);
    return rc;
}

char *money_cmd_settle_batch(const money_settle_parts_t *const *parts, size_t n, long ttl_s,
                             size_t *len)
{
    int nkeys = 0, nargs = 0;
    size_t body = 0;
    for (size_t i = 0; i < n; i++) {
        nkeys += parts[i]->nkeys;
        nargs += parts[i]->nargs;
        body += parts[i]->keys_len + parts[i]->args_len;
    }
    char head[160], ttl[48];
    int hl = snprintf(head, sizeof head, "*%d\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$%d\r\n%d\r\n",
                      4 + nkeys + nargs, money_script_sha(SCRIPT_SETTLE),
                      snprintf(NULL, 0, "%d", nkeys), nkeys);
    char ttlnum[24];
    int tn = snprintf(ttlnum, sizeof ttlnum, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    int tl = snprintf(ttl, sizeof ttl, "$%d\r\n%s\r\n", tn, ttlnum);
    char *cmd = malloc((size_t)hl + (size_t)tl + body);
    if (cmd == NULL)
        return NULL;
    size_t off = 0;
    memcpy(cmd, head, (size_t)hl);
    off += (size_t)hl;
    for (size_t i = 0; i < n; i++) {
        memcpy(cmd + off, parts[i]->buf, parts[i]->keys_len);
        off += parts[i]->keys_len;
    }
    memcpy(cmd + off, ttl, (size_t)tl);
    off += (size_t)tl;
    for (size_t i = 0; i < n; i++) {
        memcpy(cmd + off, parts[i]->buf + parts[i]->keys_len, parts[i]->args_len);
        off += parts[i]->args_len;
    }
    *len = off;
    return cmd;
}

int money_cmd_wallet(money_kind_t kind, const char *player, int64_t amount, const char *op_id,
                     long ttl_s, char **cmd, size_t *len)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_wallet(a, kind, player, amount, op_id, ttl_s);
    if (rc == 0)
        rc = money_argv_format(a, cmd, len);
    free(a);
    return rc;
}

int money_cmd_history(const char *round_id, const char *game, const char *json, long maxlen,
                      long ttl_s, char **cmd, size_t *len)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_history(a, round_id, game, json, maxlen, ttl_s, "live");
    if (rc == 0)
        rc = money_argv_format(a, cmd, len);
    free(a);
    return rc;
}

/* ---- Replies ------------------------------------------------------------------------ */

static bool money_starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

/* Maps an error text to a money_err_t (permanent) or asks for a retry (transient). */
static money_reply_action_t money_reply_error(const char *str, size_t len, money_result_t *out)
{
    /* "Redis refuses writes for a while", one rule for all (docs/queues.md "When Redis refuses
     * writes"): a full Redis (OOM), too few replicas (NOREPLICAS, min-replicas-to-write), a failed
     * RDB save (MISCONF), a demoted master (READONLY), a failover or a load in progress. Every
     * script is all-or-nothing and idempotent, so the item is sent again after a pause. */
    static const char *const transient[] = {"NOSCRIPT",   "LOADING",  "BUSY",        "MASTERDOWN",
                                            "READONLY",   "TRYAGAIN", "CLUSTERDOWN", "OOM",
                                            "NOREPLICAS", "MISCONF"};
    static const struct {
        const char *token;
        int code;
    } codes[] = {
        {"MONEY_INSUFFICIENT", MONEY_ERR_INSUFFICIENT},
        {"MONEY_STALE_EPOCH", MONEY_ERR_STALE_EPOCH},
        {"MONEY_BAD_SUM", MONEY_ERR_BAD_SUM},
        {"MONEY_NEGATIVE", MONEY_ERR_NEGATIVE},
        {"MONEY_BAD_ARGS", MONEY_ERR_BAD_ARGS},
        {"MONEY_ALIVE", MONEY_ERR_ALIVE},
        {"MONEY_ADOPTED", MONEY_ERR_ADOPTED},
        {"MONEY_OFFER_VOID", MONEY_ERR_OFFER_VOID},
        {"MONEY_NO_OFFER", MONEY_ERR_NO_OFFER},
    };
    snprintf(out->error, sizeof out->error, "%.*s", (int)len, str);
    for (size_t i = 0; i < sizeof transient / sizeof transient[0]; i++) {
        if (money_starts(str, len, transient[i])) {
            out->status = -EAGAIN;
            return MONEY_REPLY_RETRY;
        }
    }
    out->status = MONEY_ERR_REDIS;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        /* Redis may prefix script errors (e.g. "ERR "); look for the token anywhere. */
        if (memmem(str, len, codes[i].token, strlen(codes[i].token)) != NULL) {
            out->status = codes[i].code;
            break;
        }
    }
    return MONEY_REPLY_DONE;
}

static int money_parse_i64(const char *s, size_t len, int64_t *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno != 0 || *end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

static void money_result_reset(money_kind_t kind, money_result_t *out)
{
    out->kind = kind;
    out->replayed = false;
    out->nbalances = 0;
    out->error[0] = '\0';
    out->stream_id[0] = '\0';
}

money_reply_action_t money_reply_parse_entry(money_kind_t kind, const redisReply *e,
                                             money_result_t *out)
{
    money_result_reset(kind, out);
    if (e == NULL || e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_STRING)
        goto bad_shape;
    const char *v = e->element[1]->str;
    size_t vlen = e->element[1]->len;
    if (e->element[0]->integer < 0) {
        /* A rejection inside a batch: permanent, whatever the text says. */
        money_reply_error(v, vlen, out);
        if (out->status == -EAGAIN)
            out->status = MONEY_ERR_REDIS;
        return MONEY_REPLY_DONE;
    }
    out->replayed = e->element[0]->integer == 0;
    if (kind == MONEY_KIND_HISTORY) {
        if (vlen == 0 || vlen >= sizeof out->stream_id)
            goto bad_shape;
        memcpy(out->stream_id, v, vlen);
        out->stream_id[vlen] = '\0';
    } else {
        /* Balances separated by single spaces. */
        size_t i = 0;
        while (i < vlen) {
            size_t j = i;
            while (j < vlen && v[j] != ' ')
                j++;
            if (out->nbalances >= MONEY_MAX_PLAYERS ||
                money_parse_i64(v + i, j - i, &out->balances[out->nbalances]) != 0)
                goto bad_shape;
            out->nbalances++;
            i = j + 1;
        }
        if (out->nbalances == 0)
            goto bad_shape;
    }
    out->status = MONEY_OK;
    return MONEY_REPLY_DONE;
bad_shape:
    out->status = MONEY_ERR_REDIS;
    out->nbalances = 0;
    snprintf(out->error, sizeof out->error, "unexpected reply shape (type %d)", e ? e->type : -1);
    return MONEY_REPLY_DONE;
}

money_reply_action_t money_reply_parse(money_kind_t kind, const redisReply *r, money_result_t *out)
{
    money_result_reset(kind, out);
    if (r == NULL) {
        out->status = -EIO;
        snprintf(out->error, sizeof out->error, "no reply (connection lost)");
        return MONEY_REPLY_RETRY;
    }
    if (r->type == REDIS_REPLY_ERROR)
        return money_reply_error(r->str, r->len, out);
    if (kind == MONEY_KIND_SETTLE) {
        /* A batch of one: the first (only) entry. */
        if (r->type != REDIS_REPLY_ARRAY || r->elements < 1)
            return money_reply_parse_entry(kind, NULL, out);
        return money_reply_parse_entry(kind, r->element[0], out);
    }
    return money_reply_parse_entry(kind, r, out);
}

/* ---- Synchronous client ------------------------------------------------------------- */

/*
 * Runs a script command once with EVALSHA and, if Redis does not know the script, once more
 * with EVAL (which also caches it). Returns out->status.
 */
static int money_sync_run(redisContext *c, money_argv_t *a, int script, money_kind_t kind,
                          money_result_t *out)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        redisReply *r = redisCommandArgv(c, a->argc, (const char **)a->argv, a->lens);
        if (r == NULL) {
            out->kind = kind;
            out->status = -EIO;
            snprintf(out->error, sizeof out->error, "redis: %s", c->errstr);
            return -EIO;
        }
        bool noscript = r->type == REDIS_REPLY_ERROR && money_starts(r->str, r->len, "NOSCRIPT");
        money_reply_parse(kind, r, out);
        freeReplyObject(r);
        if (!noscript)
            return out->status;
        money_argv_eval(a, script);
    }
    return out->status;
}

static int money_sync_wallet(redisContext *c, money_kind_t kind, const char *player, int64_t amount,
                             const char *op_id, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_wallet(a, kind, player, amount, op_id, 0);
    if (rc != 0) {
        out->status = rc;
        snprintf(out->error, sizeof out->error, "invalid player, op id or amount");
    } else {
        snprintf(out->id, sizeof out->id, "%s", op_id);
        rc = money_sync_run(c, a, SCRIPT_WALLET, kind, out);
    }
    free(a);
    return rc;
}

int money_sync_buyin(redisContext *c, const char *player, int64_t amount, const char *op_id,
                     money_result_t *out)
{
    return money_sync_wallet(c, MONEY_KIND_BUYIN, player, amount, op_id, out);
}

int money_sync_cashout(redisContext *c, const char *player, int64_t amount, const char *op_id,
                       money_result_t *out)
{
    return money_sync_wallet(c, MONEY_KIND_CASHOUT, player, amount, op_id, out);
}

int money_sync_seat(redisContext *c, const char *service, money_kind_t kind, const money_seat_t *s,
                    int64_t amount, const char *op_id, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_seat(a, service, kind, s, amount, op_id, 0);
    if (rc != 0) {
        out->status = rc;
        snprintf(out->error, sizeof out->error, "invalid service, seat, op id or amount");
    } else {
        snprintf(out->id, sizeof out->id, "%s", op_id);
        rc = money_sync_run(c, a, SCRIPT_SEAT, kind, out);
    }
    free(a);
    return rc;
}

int money_sync_settle(redisContext *c, const char *service, const money_settlement_t *s,
                      money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_SETTLE;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_settlement_check(s, out->error, sizeof out->error);
    if (rc == 0 && !money_valid_name(service)) {
        rc = -EINVAL;
        snprintf(out->error, sizeof out->error, "service name missing or invalid");
    }
    if (rc == 0)
        rc = money_argv_settle(a, service, s, 0);
    if (rc != 0) {
        out->status = rc;
    } else {
        money_round_id_format(&s->round, out->id, sizeof out->id);
        rc = money_sync_run(c, a, SCRIPT_SETTLE, MONEY_KIND_SETTLE, out);
    }
    free(a);
    return rc;
}

int money_sync_history(redisContext *c, const money_round_id_t *round, const char *game,
                       const char *json, long maxlen, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_HISTORY;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_round_id_format(round, out->id, sizeof out->id);
    if (rc == 0)
        rc = money_argv_history(a, out->id, game, json, maxlen, 0, "live");
    if (rc != 0) {
        out->status = -EINVAL;
        snprintf(out->error, sizeof out->error, "invalid round, game, json or maxlen");
        rc = -EINVAL;
    } else {
        rc = money_sync_run(c, a, SCRIPT_HISTORY, MONEY_KIND_HISTORY, out);
    }
    free(a);
    return rc;
}

int money_sync_history_void(redisContext *c, const char *round_id, const char *game,
                            const char *json, long maxlen, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_HISTORY;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    snprintf(out->id, sizeof out->id, "%s", round_id != NULL ? round_id : "");
    int rc = money_argv_history(a, round_id, game, json, maxlen, 0, "void");
    if (rc != 0) {
        out->status = -EINVAL;
        snprintf(out->error, sizeof out->error, "invalid round, game, json or maxlen");
    } else {
        rc = money_sync_run(c, a, SCRIPT_HISTORY, MONEY_KIND_HISTORY, out);
    }
    free(a);
    return rc;
}

int money_sync_balance(redisContext *c, const char *player, int64_t *out)
{
    char key[160];
    if (!money_valid_player(player) || money_key_wallet(player, key, sizeof key) != 0)
        return -EINVAL;
    redisReply *r = redisCommand(c, "GET %s", key);
    if (r == NULL)
        return -EIO;
    int rc = 0;
    if (r->type == REDIS_REPLY_NIL)
        *out = 0;
    else if (r->type != REDIS_REPLY_STRING || money_parse_i64(r->str, r->len, out) != 0)
        rc = MONEY_ERR_REDIS;
    freeReplyObject(r);
    return rc;
}

/* ---- Hand histories ----------------------------------------------------------------- */

json_t *money_history_new(const money_round_id_t *round, const char *game)
{
    char rid[MONEY_ID_MAX + 1];
    if (round == NULL || !money_valid_name(game) ||
        money_round_id_format(round, rid, sizeof rid) != 0)
        return NULL;
    return json_pack("{s:s,s:s,s:I,s:[],s:[],s:[],s:[]}", "round", rid, "game", game, "ts",
                     (json_int_t)clock_wall_ms(), "seats", "cards", "actions", "results");
}

int money_history_set_round(json_t *h, const money_round_id_t *round)
{
    char rid[MONEY_ID_MAX + 1];
    if (!json_is_object(h) || round == NULL || money_round_id_format(round, rid, sizeof rid) != 0)
        return -EINVAL;
    return json_object_set_new(h, "round", json_string(rid)) == 0 ? 0 : -EINVAL;
}

static int money_history_append(json_t *h, const char *array, json_t *item)
{
    json_t *arr = h ? json_object_get(h, array) : NULL;
    if (item == NULL || !json_is_array(arr)) {
        json_decref(item);
        return -EINVAL;
    }
    return json_array_append_new(arr, item) == 0 ? 0 : -EINVAL;
}

int money_history_add_seat(json_t *h, int seat, const char *player, bool bot, int64_t stack)
{
    if (player == NULL || seat < 0)
        return -EINVAL;
    return money_history_append(h, "seats",
                                json_pack("{s:i,s:s,s:b,s:I}", "seat", seat, "player", player,
                                          "bot", bot, "stack", (json_int_t)stack));
}

int money_history_add_card(json_t *h, int seat, const char *card)
{
    if (card == NULL || seat < -1)
        return -EINVAL;
    return money_history_append(h, "cards", json_pack("{s:i,s:s}", "seat", seat, "card", card));
}

int money_history_add_action(json_t *h, int seat, const char *action, int64_t amount)
{
    if (action == NULL || seat < -1)
        return -EINVAL;
    return money_history_append(
        h, "actions",
        json_pack("{s:i,s:s,s:I}", "seat", seat, "action", action, "amount", (json_int_t)amount));
}

int money_history_add_result(json_t *h, int seat, int64_t delta)
{
    if (seat < 0)
        return -EINVAL;
    return money_history_append(h, "results",
                                json_pack("{s:i,s:I}", "seat", seat, "delta", (json_int_t)delta));
}

bool money_history_valid(const json_t *h)
{
    static const char *const arrays[] = {"seats", "cards", "actions", "results"};
    if (!json_is_object(h) || !json_is_string(json_object_get(h, "round")))
        return false;
    for (size_t i = 0; i < 4; i++)
        if (!json_is_array(json_object_get(h, arrays[i])))
            return false;
    return true;
}
