/*
 * money_script.c -- the money module's Lua scripts (docs/architecture.md §6 "Money": every
 * change of money is one script, idempotent by an id the caller chooses): settle a batch of
 * rounds, a wallet operation, a hand history, a seat transfer, a mark, the recovery of a dead
 * server's seats, and the offer, adoption and withdrawal of a whole-table move; their table
 * money_scripts[] (indexed by SCRIPT_*, money_int.h) and their SHA1s (money_script_text,
 * money_script_sha, money.h). Internal to the module: money_int.h has the contract.
 *
 * Only constant text and the SHA1s, computed once (pthread_once) and never written after, so
 * any thread may read them. money_cmd.c builds the calls; recover.c and handoff.c build their
 * own calls of the recover, offer, adopt and withdraw scripts by index.
 */
#include "money_int.h"

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
 * Optional (a record that reveals blackjack shoes): ARGV[7] n, the number of index keys, which
 * are the last n KEYS (after the fence; ARGV[5] and ARGV[6] are then present, empty for a round
 * id without a service): each is set to the record's stream id with the record's ttl
 * (docs/hand-history.md "The shoe index"). Written with the record, never without it.
 */
static const char money_lua_history[] = MONEY_LUA_INT
    "local prev = redis.call('GET', KEYS[2])\n"
    "if prev then return {0, prev} end\n"
    "local cap, ttl = int(ARGV[1]), int(ARGV[2])\n"
    "if not cap or cap <= 0 or not ttl or ttl <= 0 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS maxlen and ttl must be positive integers') end\n"
    "local nidx = int(ARGV[7] or '0')\n"
    "if not nidx or nidx < 0 or #KEYS - nidx < 2 then\n"
    "  return redis.error_reply('MONEY_BAD_ARGS index keys must be 0 .. #KEYS - 2') end\n"
    "if #KEYS - nidx >= 3 then\n"
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
    "for i = #KEYS - nidx + 1, #KEYS do redis.call('SET', KEYS[i], id, 'EX', ttl) end\n"
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

const char *const money_scripts[MONEY_NSCRIPTS] = {
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
