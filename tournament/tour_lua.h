/*
 * The director's Redis scripts (tour_director.h has the keys; docs/tournaments.md "The
 * director" the rules). Private to tour_director.c. Every script that writes a tournament's
 * state first checks its fence: the epoch key must still hold the caller's epoch, else the
 * answer is an error reply "TOUR_STALE_EPOCH" and nothing is written.
 *
 * Amounts are whole chips and stay far below 2^53, so Lua's numbers hold them exactly; player
 * ids (64-bit) are only ever handled as strings here.
 */
#ifndef CROUPIER_TOUR_LUA_H
#define CROUPIER_TOUR_LUA_H

/* KEYS owner, epoch, meta, live; ARGV token, ttl_ms, director_id, tournament id.
 * Returns {epoch, meta as HGETALL} when claimed, {0} when the tournament is over or gone (and
 * it leaves the live set), {-1} when another director owns it. */
#define TOUR_CLAIM_LUA                                                                             \
    "if redis.call('EXISTS', KEYS[3]) == 0 then redis.call('SREM', KEYS[4], ARGV[4]) "             \
    "return {0} end "                                                                              \
    "local st = redis.call('HGET', KEYS[3], 'status') "                                            \
    "if st == 'finished' or st == 'cancelled' then redis.call('SREM', KEYS[4], ARGV[4]) "          \
    "return {0} end "                                                                              \
    "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {-1} end "        \
    "local e = redis.call('INCR', KEYS[2]) "                                                       \
    "redis.call('HSET', KEYS[3], 'owner_id', ARGV[3], 'epoch', e) "                                \
    "return {e, redis.call('HGETALL', KEYS[3])}"

/* KEYS owner, epoch, meta; ARGV token, epoch, ttl_ms, clock_ms ('' = not running).
 * 1 renewed, 2 regained (the owner key had expired and nobody claimed since), 0 lost. */
#define TOUR_RENEW_LUA                                                                             \
    "if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end "                                  \
    "local o = redis.call('GET', KEYS[1]) "                                                        \
    "local r = 1 "                                                                                 \
    "if not o then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) r = 2 "                      \
    "elseif o ~= ARGV[1] then return 0 "                                                           \
    "else redis.call('PEXPIRE', KEYS[1], ARGV[3]) end "                                            \
    "if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], 'clock_ms', ARGV[4]) end "                  \
    "return r"

/* KEYS owner, epoch, meta; ARGV token, epoch, clock_ms ('' = not running). 1 released, 0 the
 * fence had moved (nothing written). */
#define TOUR_RELEASE_LUA                                                                           \
    "if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end "                                  \
    "if ARGV[3] ~= '' then redis.call('HSET', KEYS[3], 'clock_ms', ARGV[3]) end "                  \
    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end "                \
    "return 1"

/*
 * One step of a tournament: a request from its stream, or the director's own (start, level,
 * cancel). KEYS:
 *   1 meta  2 entries  3 epoch  4 log  5 pool  6 fee  7 wallet (of ARGV player, or any key)
 *   8 req:<req>  9 reply:<req>  10 live  [11 reply:<req> again: a deferred answer, below]
 * ARGV:
 *   1 epoch  2 stream id ('' = the director's own step: no cursor, no answer)  3 op
 *   4 req  5 player  6 now (wall ms)  7 late registration open (0/1)  8 buy-in  9 fee
 *   10 starting stack  11 max entries  12 re-entry allowed (0/1)  13 max re-entries
 *   14 tournament id  15 clock_ms  16 level index (op level) / overlay (op start) / reason
 *   (op cancel)  17.. cancel: player, amount pairs (a cancellation after the start)
 * Returns the answer (JSON text) of a request, "replay <answer>" for a request id answered
 * before (nothing applied again), "skip" for a stream id already applied, or "done" for the
 * director's own step; error replies: TOUR_STALE_EPOCH, TOUR_BAD_SPLIT.
 *
 * A deferred answer (the director's --redis-min-replicas, tour_director.h "Durability"): with
 * the reply key given once more as the last KEY, the answer is recorded (req:<req>) but not
 * pushed: the director pushes it once the replicas acknowledged the step. Both scripts.
 */
#define TOUR_APPLY_LUA                                                                             \
    "if redis.call('GET', KEYS[3]) ~= ARGV[1] then return redis.error_reply('TOUR_STALE_EPOCH') "  \
    "end "                                                                                         \
    "local sid, op, req, player, now = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6] "               \
    "local push = KEYS[11] == nil "                                                                \
    "local function idnum(s) local a, b = string.match(s, '^(%d+)-(%d+)$') "                       \
    "  return tonumber(a or 0), tonumber(b or 0) end "                                             \
    "if sid ~= '' then "                                                                           \
    "  local ca, cb = idnum(redis.call('HGET', KEYS[1], 'cursor') or '0-0') "                      \
    "  local sa, sb = idnum(sid) "                                                                 \
    "  if sa < ca or (sa == ca and sb <= cb) then return 'skip' end "                              \
    "  local prev = redis.call('GET', KEYS[8]) "                                                   \
    "  if prev then "                                                                              \
    "    if push then redis.call('RPUSH', KEYS[9], prev) redis.call('EXPIRE', KEYS[9], 60) end "   \
    "    redis.call('HSET', KEYS[1], 'cursor', sid) return 'replay ' .. prev end "                 \
    "end "                                                                                         \
    "local function log(...) "                                                                     \
    "  local id = redis.call('XADD', KEYS[4], 'MAXLEN', '~', 10000, '*', 'event', ...) "           \
    "  redis.call('PUBLISH', 'croupier:tour:events', ARGV[14] .. ' ' .. id .. ' ' .. "             \
    "    table.concat({...}, ' ')) end "                                                           \
    "local function answer(ok, code, extra) "                                                      \
    "  if sid == '' then return 'done' end "                                                       \
    "  local txt = '{\"req\":\"' .. req .. '\",\"op\":\"' .. op .. '\",\"ok\":' .. "               \
    "    (ok and 'true' or 'false') .. ',\"code\":\"' .. code .. '\",\"tournament\":' .. "         \
    "    ARGV[14] .. (player ~= '' and (',\"player\":' .. player) or '') .. (extra or '') .. '}' " \
    "  if req ~= '' then "                                                                         \
    "    redis.call('SET', KEYS[8], txt, 'EX', 86400) "                                            \
    "    if push then redis.call('RPUSH', KEYS[9], txt) redis.call('EXPIRE', KEYS[9], 60) end "    \
    "end "                                                                                         \
    "  redis.call('HSET', KEYS[1], 'cursor', sid) "                                                \
    "  return txt end "                                                                            \
    "local status = redis.call('HGET', KEYS[1], 'status') "                                        \
    "local over = status == 'finished' or status == 'cancelled' "                                  \
    "local function entry(p) local e = redis.call('HGET', KEYS[2], p) "                            \
    "  if e then return cjson.decode(e) end return nil end "                                       \
    "local function put(p, e) redis.call('HSET', KEYS[2], p, string.format("                       \
    "  '{\"entry\":%d,\"entries\":%d,\"stack\":%d,\"state\":\"%s\",\"paid\":%d,\"fees\":%d,'"      \
    "  .. '\"place\":%d,\"prize\":%d}', e.entry, e.entries, e.stack, e.state, e.paid, e.fees, "    \
    "  e.place, e.prize)) end "                                                                    \
    "local function credit(p, amount) if amount > 0 then redis.call('INCRBY', "                    \
    "  '{croupier:money}:wallet:' .. p, amount) end end "                                          \
    "local function close(st, reason) "                                                            \
    "  redis.call('HSET', KEYS[1], 'status', st, 'ended_ms', now, 'pool', 0) "                     \
    "  redis.call('DEL', KEYS[5]) redis.call('SREM', KEYS[10], ARGV[14]) "                         \
    "  log(st, 'reason', reason) end "                                                             \
    "if op == 'register' then "                                                                    \
    "  if over then return answer(false, 'TOURNAMENT_OVER') end "                                  \
    "  local e = entry(player) "                                                                   \
    "  if status == 'running' then "                                                               \
    "    if ARGV[7] ~= '1' then return answer(false, 'REGISTRATION_CLOSED') end "                  \
    "    if e and e.state ~= 'out' then return answer(false, 'ALREADY_REGISTERED') end "           \
    "    if e and (ARGV[12] ~= '1' or e.entries > tonumber(ARGV[13])) then "                       \
    "      return answer(false, 'NO_REENTRY') end "                                                \
    "  elseif status == 'registering' then "                                                       \
    "    if e then return answer(false, 'ALREADY_REGISTERED') end "                                \
    "  else return answer(false, 'REGISTRATION_CLOSED') end "                                      \
    "  local n = tonumber(redis.call('HGET', KEYS[1], 'entries') or '0') "                         \
    "  if n >= tonumber(ARGV[11]) then return answer(false, 'TOURNAMENT_FULL') end "               \
    "  local buy, fee = tonumber(ARGV[8]), tonumber(ARGV[9]) "                                     \
    "  if tonumber(redis.call('GET', KEYS[7]) or '0') < buy + fee then "                           \
    "    return answer(false, 'INSUFFICIENT_FUNDS') end "                                          \
    "  if buy + fee > 0 then redis.call('DECRBY', KEYS[7], buy + fee) end "                        \
    "  if buy > 0 then redis.call('INCRBY', KEYS[5], buy) end "                                    \
    "  if fee > 0 then redis.call('INCRBY', KEYS[6], fee) end "                                    \
    "  local seq = redis.call('HINCRBY', KEYS[1], 'entry_seq', 1) "                                \
    "  redis.call('HINCRBY', KEYS[1], 'entries', 1) redis.call('HINCRBY', KEYS[1], 'players', 1) " \
    "  redis.call('HINCRBY', KEYS[1], 'pool', buy) "                                               \
    "  local again = e ~= nil "                                                                    \
    "  e = e or {entries = 0, paid = 0, fees = 0} "                                                \
    "  e.entry = seq e.entries = e.entries + 1 e.stack = tonumber(ARGV[10]) "                      \
    "  e.state = status == 'running' and 'waiting' or 'registered' "                               \
    "  e.paid = e.paid + buy e.fees = e.fees + fee e.place = 0 e.prize = 0 "                       \
    "  put(player, e) "                                                                            \
    "  log(again and 'reentered' or 'registered', 'player', player, 'entry', seq) "                \
    "  return answer(true, 'OK', ',\"entry\":' .. seq .. ',\"stack\":' .. e.stack .. "             \
    "    ',\"reentry\":' .. (again and 'true' or 'false')) "                                       \
    "elseif op == 'unregister' then "                                                              \
    "  if over then return answer(false, 'TOURNAMENT_OVER') end "                                  \
    "  if status ~= 'registering' then return answer(false, 'REGISTRATION_CLOSED') end "           \
    "  local e = entry(player) "                                                                   \
    "  if not e then return answer(false, 'NOT_REGISTERED') end "                                  \
    "  credit(player, e.paid + e.fees) "                                                           \
    "  if e.paid > 0 then redis.call('DECRBY', KEYS[5], e.paid) end "                              \
    "  if e.fees > 0 then redis.call('DECRBY', KEYS[6], e.fees) end "                              \
    "  redis.call('HDEL', KEYS[2], player) "                                                       \
    "  redis.call('HINCRBY', KEYS[1], 'entries', -1) redis.call('HINCRBY', KEYS[1], 'players', "   \
    "-1) "                                                                                         \
    "  redis.call('HINCRBY', KEYS[1], 'pool', -e.paid) "                                           \
    "  log('unregistered', 'player', player, 'refund', e.paid + e.fees) "                          \
    "  return answer(true, 'OK', ',\"refund\":' .. (e.paid + e.fees)) "                            \
    "elseif op == 'start' then "                                                                   \
    "  if status ~= 'registering' then return 'done' end "                                         \
    "  local overlay = tonumber(ARGV[16]) "                                                        \
    "  if overlay > 0 then redis.call('INCRBY', KEYS[5], overlay) "                                \
    "    redis.call('DECRBY', KEYS[6], overlay) redis.call('HINCRBY', KEYS[1], 'pool', overlay) "  \
    "    redis.call('HSET', KEYS[1], 'overlay', overlay) end "                                     \
    "  local all = redis.call('HGETALL', KEYS[2]) "                                                \
    "  for i = 1, #all, 2 do local e = cjson.decode(all[i + 1]) e.state = 'playing' "              \
    "    put(all[i], e) end "                                                                      \
    "  redis.call('HSET', KEYS[1], 'status', 'running', 'started_ms', now, 'clock_ms', 0, "        \
    "    'level', 0) "                                                                             \
    "  log('started', 'entries', redis.call('HGET', KEYS[1], 'entries'), 'overlay', overlay) "     \
    "  return 'done' "                                                                             \
    "elseif op == 'level' then "                                                                   \
    "  if status ~= 'running' then return 'done' end "                                             \
    "  redis.call('HSET', KEYS[1], 'level', ARGV[16], 'clock_ms', ARGV[15]) "                      \
    "  log('level', 'level', ARGV[16], 'clock_ms', ARGV[15]) "                                     \
    "  return 'done' "                                                                             \
    "elseif op == 'cancel' then "                                                                  \
    "  if over then return answer(false, 'TOURNAMENT_OVER') end "                                  \
    "  local all = redis.call('HGETALL', KEYS[2]) "                                                \
    "  if status == 'registering' then "                                                           \
    "    for i = 1, #all, 2 do local e = cjson.decode(all[i + 1]) "                                \
    "      credit(all[i], e.paid + e.fees) "                                                       \
    "      if e.fees > 0 then redis.call('DECRBY', KEYS[6], e.fees) end "                          \
    "      e.state = 'refunded' e.prize = e.paid + e.fees put(all[i], e) end "                     \
    "  else "                                                                                      \
    "    local pool = tonumber(redis.call('GET', KEYS[5]) or '0') "                                \
    "    local sum = 0 "                                                                           \
    "    for i = 17, #ARGV, 2 do sum = sum + tonumber(ARGV[i + 1]) end "                           \
    "    if sum ~= pool then return redis.error_reply('TOUR_BAD_SPLIT ' .. sum .. ' ~= ' .. "      \
    "pool) "                                                                                       \
    "    end "                                                                                     \
    "    for i = 17, #ARGV, 2 do local e = entry(ARGV[i]) "                                        \
    "      if not e then return redis.error_reply('TOUR_BAD_SPLIT no entry ' .. ARGV[i]) end "     \
    "    end "                                                                                     \
    "    for i = 17, #ARGV, 2 do local e = entry(ARGV[i]) local a = tonumber(ARGV[i + 1]) "        \
    "      credit(ARGV[i], a) e.prize = a e.state = 'cancelled' put(ARGV[i], e) end "              \
    "  end "                                                                                       \
    "  redis.call('HSET', KEYS[1], 'cancel_reason', ARGV[16], 'clock_ms', ARGV[15]) "              \
    "  close('cancelled', ARGV[16]) "                                                              \
    "  return answer(true, 'OK') "                                                                 \
    "end "                                                                                         \
    "return answer(false, 'BAD_REQUEST')"

/*
 * One step computed by the director (tour_play.h: a table's deal or hand, the draw), written as
 * a list of commands after a fence and cursor check. KEYS:
 *   1 meta  2 entries  3 tables  4 epoch  5 log  6 pool  7 req:<req>  8 reply:<req>  9 live
 *   [10 reply:<req> again: a deferred answer, below]
 * ARGV: 1 epoch  2 stream id ('' = the director's own step)  3 answer ('' = none)
 *   4 tournament id, then commands:
 *   M field value      HSET meta
 *   E player json      HSET entries
 *   T table json       HSET tables
 *   P player amount    a prize: from the pool to the player's wallet
 *   L event text       an entry of the log (event, data) and a message on the events channel
 *   H game round json  a hand's history record (docs/hand-history.md), at most once per round:
 *                      {croupier:history:<game>}:stream and its :seen:<round> key (the keys
 *                      this script builds itself -- history, stages, items -- follow the layout
 *                      of KEYS[1]: TOUR_LUA_KEYTAG, tour_director.h)
 *   F status           the tournament is over: status, out of the live set, the pool key gone
 *                      (the prizes emptied it)
 *   S stage json       a match's stage (tour_match.h): HSET {croupier:tour:<id>}:stages
 *   I player item place  an item prize (docs/tournaments.md "Items"): HSET
 *                      {croupier:items}:player:<player> field <tournament id>:<place> =
 *                      {"tournament","place","item"} (written again, it is the same record,
 *                      never a second item; a re-entry's other place is another field)
 * The prizes are checked against the pool before anything is written (TOUR_BAD_COMMIT).
 * Returns like TOUR_APPLY_LUA: the answer, "replay <answer>", "skip" or "done".
 */
#define TOUR_COMMIT_LUA                                                                            \
    TOUR_LUA_KEYTAG                                                                                \
    "if redis.call('GET', KEYS[4]) ~= ARGV[1] then return redis.error_reply('TOUR_STALE_EPOCH') "  \
    "end "                                                                                         \
    "local sid = ARGV[2] "                                                                         \
    "local push = KEYS[10] == nil "                                                                \
    "local function idnum(s) local a, b = string.match(s, '^(%d+)-(%d+)$') "                       \
    "  return tonumber(a or 0), tonumber(b or 0) end "                                             \
    "if sid ~= '' then "                                                                           \
    "  local ca, cb = idnum(redis.call('HGET', KEYS[1], 'cursor') or '0-0') "                      \
    "  local sa, sb = idnum(sid) "                                                                 \
    "  if sa < ca or (sa == ca and sb <= cb) then return 'skip' end "                              \
    "  local prev = redis.call('GET', KEYS[7]) "                                                   \
    "  if prev then "                                                                              \
    "    if push then redis.call('RPUSH', KEYS[8], prev) redis.call('EXPIRE', KEYS[8], 60) end "   \
    "    redis.call('HSET', KEYS[1], 'cursor', sid) return 'replay ' .. prev end "                 \
    "end "                                                                                         \
    "local pay = 0 "                                                                               \
    "local i = 5 "                                                                                 \
    "while i <= #ARGV do local op = ARGV[i] "                                                      \
    "  if op == 'P' then pay = pay + tonumber(ARGV[i + 2]) i = i + 3 "                             \
    "  elseif op == 'F' then i = i + 2 "                                                           \
    "  elseif op == 'H' or op == 'I' then i = i + 4 "                                              \
    "  elseif op == 'M' or op == 'E' or op == 'T' or op == 'L' or op == 'S' then i = i + 3 "       \
    "  else return redis.error_reply('TOUR_BAD_COMMIT op ' .. tostring(op)) end end "              \
    "if pay > tonumber(redis.call('GET', KEYS[6]) or '0') then "                                   \
    "  return redis.error_reply('TOUR_BAD_COMMIT prizes ' .. pay .. ' above the pool') end "       \
    "i = 5 "                                                                                       \
    "while i <= #ARGV do local op = ARGV[i] "                                                      \
    "  if op == 'M' then redis.call('HSET', KEYS[1], ARGV[i + 1], ARGV[i + 2]) i = i + 3 "         \
    "  elseif op == 'E' then redis.call('HSET', KEYS[2], ARGV[i + 1], ARGV[i + 2]) i = i + 3 "     \
    "  elseif op == 'T' then redis.call('HSET', KEYS[3], ARGV[i + 1], ARGV[i + 2]) i = i + 3 "     \
    "  elseif op == 'S' then redis.call('HSET', tbase(ARGV[4]) .. ':stages', "                     \
    "    ARGV[i + 1], ARGV[i + 2]) i = i + 3 "                                                     \
    "  elseif op == 'P' then local a = tonumber(ARGV[i + 2]) "                                     \
    "    redis.call('DECRBY', KEYS[6], a) "                                                        \
    "    redis.call('INCRBY', '{croupier:money}:wallet:' .. ARGV[i + 1], a) i = i + 3 "            \
    "  elseif op == 'I' then "                                                                     \
    "    redis.call('HSET', fam('items') .. ':player:' .. ARGV[i + 1], "                           \
    "      ARGV[4] .. ':' .. ARGV[i + 3], "                                                        \
    "      cjson.encode({tournament = tonumber(ARGV[4]), place = tonumber(ARGV[i + 3]), "          \
    "        item = ARGV[i + 2]})) i = i + 4 "                                                     \
    "  elseif op == 'L' then "                                                                     \
    "    local id = redis.call('XADD', KEYS[5], 'MAXLEN', '~', 10000, '*', 'event', ARGV[i + 1], " \
    "      'data', ARGV[i + 2]) "                                                                  \
    "    redis.call('PUBLISH', 'croupier:tour:events', ARGV[4] .. ' ' .. id .. ' ' .. "            \
    "      ARGV[i + 1] .. ' ' .. ARGV[i + 2]) i = i + 3 "                                          \
    "  elseif op == 'H' then "                                                                     \
    "    local hb = fam('history:' .. ARGV[i + 1]) "                                               \
    "    local seen = hb .. ':seen:' .. ARGV[i + 2] "                                              \
    "    if not redis.call('GET', seen) then "                                                     \
    "      local id = redis.call('XADD', hb .. ':stream', "                                        \
    "        'MAXLEN', '~', 100000, '*', 'round', ARGV[i + 2], 'data', ARGV[i + 3]) "              \
    "      redis.call('SET', seen, id, 'EX', 604800) end "                                         \
    "    i = i + 4 "                                                                               \
    "  elseif op == 'F' then redis.call('HSET', KEYS[1], 'status', ARGV[i + 1]) "                  \
    "    redis.call('SREM', KEYS[9], ARGV[4]) "                                                    \
    "    if tonumber(redis.call('GET', KEYS[6]) or '0') == 0 then redis.call('DEL', KEYS[6]) end " \
    "    i = i + 2 "                                                                               \
    "  else return redis.error_reply('TOUR_BAD_COMMIT op ' .. tostring(op)) end end "              \
    "if sid ~= '' then "                                                                           \
    "  if ARGV[3] ~= '' then "                                                                     \
    "    redis.call('SET', KEYS[7], ARGV[3], 'EX', 86400) "                                        \
    "    if push then redis.call('RPUSH', KEYS[8], ARGV[3]) redis.call('EXPIRE', KEYS[8], 60) "    \
    "end "                                                                                         \
    "  end "                                                                                       \
    "  redis.call('HSET', KEYS[1], 'cursor', sid) "                                                \
    "  return ARGV[3] end "                                                                        \
    "return 'done'"

#endif
