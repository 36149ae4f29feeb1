/*
 * tour_director -- the tournament director: one owner for each tournament's state, that state in
 * Redis, fenced like a table, taken over by another director when its owner drains or dies
 * (docs/tournaments.md, "The director"; the keys below are a contract with croupier-ctl, the
 * gateway and the tables).
 *
 * Ownership. Every live tournament is listed in TOUR_LIVE_KEY. A director claims one nobody owns
 * with TOUR_CLAIM_LUA: SET owner <token> NX PX ttl and INCR the tournament's fence (its epoch),
 * in one script. It renews every ttl/3 with a script that checks token and epoch; on a drain it
 * writes the level clock and deletes the owner key (compare-and-delete), so another director
 * claims the tournament at its next scan. Every write of a director is a script that first
 * checks that the fence still holds its epoch: an old owner (paused past its TTL, or cut off)
 * can write nothing once another claimed the tournament (it answers TOUR_STALE_EPOCH and the
 * old owner lets the tournament go).
 *
 * Requests. Players (through the gateway), operators (croupier-ctl) and tables append requests
 * to the tournament's stream TOUR_KEY(id, "in"): XADD ... op <op> req <request id> [player <id>]
 * [reason <text>] [table <n> hand <k> [result <PLAYER:STACK,...>]]: register, unregister,
 * cancel, and the tables' deal and hand (tour_play.h). The owner reads the stream in order and
 * applies each request with one fenced script that also records the stream id applied (the meta
 * field `cursor`): a new owner goes on from the first request the last one did not apply, and a
 * request is never applied twice (one request id answered twice gets the first answer again). The
 * answer, a JSON object {"req","op","ok","code",...}, is pushed onto the list TOUR_KEY(id,
 * "reply:<req>") (kept 60 s: the asker BLPOPs it). Nobody reads the stream of a tournament that is
 * over (it left TOUR_LIVE_KEY): the asker answers TOURNAMENT_OVER itself from the meta `status`.
 *
 * Keys (id is a decimal number; every tournament key carries the hash tag {croupier:tour:<id>};
 * on a Redis Cluster every key below is in the money slot instead -- {croupier:tour:<id>}:X is
 * {croupier:money}:tour:<id>:X, {croupier:tours}:X is {croupier:money}:tours:X, {croupier:items}:X
 * is {croupier:money}:items:X -- so each script stays in one slot: common/keytag.h):
 *   {croupier:tours}:seq              INCR: the next tournament id
 *   {croupier:tours}:all              sorted set id -> creation time (ms), every tournament
 *   {croupier:tours}:live             set of the ids neither finished nor cancelled
 *   {croupier:tour:<id>}:meta         hash: the tournament (fields in docs/tournaments.md)
 *   {croupier:tour:<id>}:entries      hash player -> JSON entry {"entry","entries","stack",
 *                                     "state","paid","fees","place","prize"} (and "item": his
 *                                     place's item prize, when it has one)
 *   {croupier:tour:<id>}:tables       hash table number -> JSON table (tour_play.c: players,
 *                                     last button/sb/bb, hand, in_hand, closed, moves, wait)
 *   {croupier:tour:<id>}:owner        the owning director's token (PX = claim TTL)
 *   {croupier:tour:<id>}:epoch        the fence: INCRed by every claim, never expires
 *   {croupier:tour:<id>}:in           the request stream
 *   {croupier:tour:<id>}:log          the tournament's events (XADD, MAXLEN ~ 10000)
 *   {croupier:tour:<id>}:req:<req>    the answer of an applied request (1 day: duplicates)
 *   {croupier:tour:<id>}:reply:<req>  list holding that answer for the asker (60 s)
 *   {croupier:money}:tourpool:<id>    the prize pool: chips out of wallets, held for the
 *                                     tournament (docs/queues.md "Where every chip is")
 *   {croupier:money}:rake:tournament  the fees (the house's account)
 *   {croupier:items}:player:<player>  hash "<id>:<place>" -> {"tournament","place","item"}: the
 *                                     item prizes a player was given (docs/tournaments.md
 *                                     "Items"), written with the place (TOUR_COMMIT_LUA op I)
 *
 * The level clock (docs/tournaments.md "The director: the level clock"): it runs only while a
 * director owns the tournament and play has started. The owner writes it at every renew and at
 * its release; a new owner goes on from the value written last. So a crash loses at most one
 * renew period (ttl/3) of the clock, and a handover by drain loses nothing; the time nobody owned
 * the tournament is never counted.
 *
 * Durability (min_replicas > 0; docs/tournaments.md "The director": durability). A step's
 * script records its answer but does not push it (tour_lua.h, "a deferred answer"); the director
 * then sends WAIT min_replicas wait_ms on the same connection and, once that many replicas
 * acknowledged, pushes the answer and takes the step as done. Short of them it waits again, up
 * to 10 times; then it lets the tournament go without answering (tour_not_durable): a failover
 * may have lost the step, so the next owner reads whatever Redis kept, and the asker, answered
 * nothing, asks again with the same request id (answered from req:<req> if the step survived,
 * applied if it did not). So an answer given is never undone by a failover.
 *
 * Threads: a director lives on one event_base and is used only from its thread, except
 * tour_director_owned() and tour_director_ready() (atomics, any thread).
 */
#ifndef CROUPIER_TOUR_DIRECTOR_H
#define CROUPIER_TOUR_DIRECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "keytag.h"
#include "metrics.h"

struct event_base;

/* The index keys (static strings): "{croupier:tours}:<what>", on a Redis Cluster
 * "{croupier:money}:tours:<what>" (common/keytag.h; the process set its mode at start). */
#define TOUR_TOURS_KEY(what)                                                                       \
    (keytag_cluster() ? "{croupier:money}:tours:" what : "{croupier:tours}:" what)
#define TOUR_SEQ_KEY TOUR_TOURS_KEY("seq")
#define TOUR_ALL_KEY TOUR_TOURS_KEY("all")
#define TOUR_LIVE_KEY TOUR_TOURS_KEY("live")
/*
 * Match halls (docs/tournaments.md "Match halls: the schedule"): a hall opens a match of its
 * structure for registration every `every_ms`, one at a time. TOUR_HALLS_KEY lists the halls'
 * ids; each hall is the hash TOUR_HALL_PREFIX<id> {name, structure, every_ms, t0, open, count,
 * stopped}. TOUR_HALL_TICK_LUA (run by every director at every scan: it is idempotent, so no
 * hall needs an owner) opens the next match of every hall whose open match left registration
 * (started, cancelled) or that has none: its start at the next t0 + k x every_ms at least a
 * second away -- it starts then with min_entrants, or sooner when full, or is cancelled with
 * refunds -- named "<hall name> #<count>". KEYS: halls, seq, all, live; ARGV: now (ms).
 * Returns the ids opened. The hall and tournament keys it builds follow the layout of KEYS[1]
 * (TOUR_LUA_KEYTAG: "{croupier:tours}:halls", or on a cluster "{croupier:money}:tours:halls").
 */
#define TOUR_HALLS_KEY TOUR_TOURS_KEY("halls")
#define TOUR_HALL_SEQ_KEY TOUR_TOURS_KEY("hallseq")
#define TOUR_HALL_PREFIX TOUR_TOURS_KEY("hall:")
/*
 * Lua: fam(f), the base of a key family in the layout of the deployment (common/keytag.h):
 * "{croupier:<f>}", or "{croupier:money}:<f>" on a Redis Cluster -- told by KEYS[1], which the
 * caller built in that layout (every tournament and index key starts "{croupier:money}:" on a
 * cluster and never does elsewhere). tbase(id), a tournament's keys' base: fam('tour:' .. id),
 * or "{t:<id>}" by entity (the third layout, keytag_tour_entity(): told by a KEYS[1] that is a
 * tournament's key starting "{t:"). By entity the other families (history, items, the index)
 * are in other slots: TOUR_COMMIT_LUA's H and I, and the hall tick, are not split yet, so the
 * director refuses --money-by-entity (docs/tournaments.md "Tournaments by entity").
 */
#define TOUR_LUA_KEYTAG                                                                            \
    "local clustered = string.sub(KEYS[1], 1, 17) == '{croupier:money}:'\n"                        \
    "local entity = string.sub(KEYS[1], 1, 3) == '{t:'\n"                                          \
    "local function fam(f) if clustered then return '{croupier:money}:' .. f end\n"                \
    "  return '{croupier:' .. f .. '}' end\n"                                                      \
    "local function tbase(id) if entity then return '{t:' .. id .. '}' end\n"                      \
    "  return fam('tour:' .. id) end\n"
#define TOUR_HALL_TICK_LUA                                                                         \
    TOUR_LUA_KEYTAG                                                                                \
    "local now = tonumber(ARGV[1]) local made = {}\n"                                              \
    "for _, h in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n"                                     \
    "  local hk = fam('tours') .. ':hall:' .. h\n"                                                 \
    "  local f = redis.call('HMGET', hk, 'structure', 'every_ms', 'name', 'open', 't0',\n"         \
    "    'count', 'stopped')\n"                                                                    \
    "  if f[1] and tonumber(f[2]) and tonumber(f[2]) >= 1000 and tonumber(f[5])\n"                 \
    "    and f[7] ~= '1' then\n"                                                                   \
    "    local st = false\n"                                                                       \
    "    if f[4] and f[4] ~= '' then\n"                                                            \
    "      st = redis.call('HGET', fam('tour:' .. f[4]) .. ':meta', 'status') end\n"               \
    "    if st ~= 'registering' then\n"                                                            \
    "      local every, t0 = tonumber(f[2]), tonumber(f[5])\n"                                     \
    "      local n = (tonumber(f[6]) or 0) + 1\n"                                                  \
    "      local start = t0 + (math.floor((now - t0) / every) + 1) * every\n"                      \
    "      if start - now < 1000 then start = start + every end\n"                                 \
    "      local id = redis.call('INCR', KEYS[2])\n"                                               \
    "      local tk = fam('tour:' .. id) .. ':'\n"                                                 \
    "      redis.call('HSET', tk .. 'meta', 'id', id, 'name', f[3] .. ' #' .. n,\n"                \
    "        'structure', f[1], 'format', 'match', 'status', 'registering', 'created_ms',\n"       \
    "        ARGV[1], 'start_at_ms', string.format('%.0f', start), 'started_ms', '0',\n"           \
    "        'ended_ms', '0', 'clock_ms', '0', 'level', '0', 'entries', '0', 'players', '0',\n"    \
    "        'pool', '0', 'cursor', '0-0', 'hall', h)\n"                                           \
    "      redis.call('ZADD', KEYS[3], ARGV[1], id)\n"                                             \
    "      redis.call('SADD', KEYS[4], id)\n"                                                      \
    "      redis.call('XADD', tk .. 'log', 'MAXLEN', '~', '10000', '*', 'event', 'created',\n"     \
    "        'hall', h)\n"                                                                         \
    "      redis.call('HSET', hk, 'open', id, 'count', n)\n"                                       \
    "      table.insert(made, id)\n"                                                               \
    "    end\n"                                                                                    \
    "  end\n"                                                                                      \
    "end\n"                                                                                        \
    "return made\n"
#define TOUR_EVENTS_CHANNEL "croupier:tour:events"
/*
 * Creating a tournament by entity (keytag_tour_entity(): its keys in {t:<id>}, the index in the
 * money slot), in three steps, one slot each: the id (INCR of TOUR_SEQ_KEY), then its meta and
 * the first event of its log (TOUR_CREATE_META_LUA, idempotent: a meta already there is kept),
 * then the index (TOUR_CREATE_INDEX_LUA, idempotent). Stopped between the steps, it leaves an id
 * unused or a meta no index names: nothing runs it, nothing lists it.
 *   META:  KEYS meta, log; ARGV id, name ("" = "Tournament <id>"), structure, format,
 *          created_ms, start_at_ms. 1 created, 0 there before.
 *   INDEX: KEYS all, live; ARGV created_ms, id. 1.
 * (On one Redis and on a cluster without the flag, croupier-ctl's one script does all of it.)
 */
#define TOUR_CREATE_META_LUA                                                                       \
    "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end\n"                                    \
    "local name = ARGV[2]\n"                                                                       \
    "if name == '' then name = 'Tournament ' .. ARGV[1] end\n"                                     \
    "redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', name, 'structure', ARGV[3],\n"             \
    "  'format', ARGV[4], 'status', 'registering', 'created_ms', ARGV[5],\n"                       \
    "  'start_at_ms', ARGV[6], 'started_ms', '0', 'ended_ms', '0', 'clock_ms', '0',\n"             \
    "  'level', '0', 'entries', '0', 'players', '0', 'pool', '0', 'cursor', '0-0')\n"              \
    "redis.call('XADD', KEYS[2], 'MAXLEN', '~', '10000', '*', 'event', 'created')\n"               \
    "return 1\n"
#define TOUR_CREATE_INDEX_LUA                                                                      \
    "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])\n"                                              \
    "redis.call('SADD', KEYS[2], ARGV[2])\n"                                                       \
    "return 1\n"
#define TOUR_POOL_KEY_PREFIX "{croupier:money}:tourpool:"
#define TOUR_FEE_KEY "{croupier:money}:rake:tournament"
/* Writes "{croupier:tour:<id>}:<what>" (on a cluster "{croupier:money}:tour:<id>:<what>",
 * common/keytag.h) into buf (at least TOUR_KEY_MAX bytes). */
#define TOUR_KEY_MAX 256
int tour_key(char *buf, size_t len, uint64_t id, const char *what);

/* Answer codes of a request (the "code" of the answer; docs/tournaments.md lists them). */
#define TOUR_CODES(X)                                                                              \
    X(OK)                                                                                          \
    X(ALREADY_REGISTERED)                                                                          \
    X(NOT_REGISTERED)                                                                              \
    X(TOURNAMENT_FULL)                                                                             \
    X(REGISTRATION_CLOSED)                                                                         \
    X(INSUFFICIENT_FUNDS)                                                                          \
    X(NO_REENTRY)                                                                                  \
    X(TOURNAMENT_OVER)                                                                             \
    X(BAD_REQUEST)

typedef struct tour_director tour_director_t;

typedef struct {
    struct event_base *base;
    const char *redis_host; /* IP literal */
    int redis_port;
    const char *redis_sentinels; /* optional: sentinel mode (common/sentinel.h) */
    const char *redis_master;
    const char *redis_cluster;   /* optional: rconn's cluster mode (common/rconn.h) */
    const char *director_id;     /* in logs and in the meta field `owner_id` */
    int claim_ttl_ms;            /* ownership TTL; renewed every third; 0 = 3000 */
    int scan_ms;                 /* how often unowned tournaments are looked for; 0 = 500 */
    int max_owned;               /* tournaments owned at most; 0 = no limit */
    int min_replicas;            /* durability: replicas every step must reach (WAIT) before its
                                    answer is given; 0 = none (see "Durability" above) */
    int wait_ms;                 /* the bound of each WAIT; 0 = 500 */
    metrics_registry_t *metrics; /* may be NULL */
} tour_director_config_t;

/* Creates the director and starts connecting and scanning. Returns 0 or a negative errno
 * (-EINVAL: a bad config, with one log line saying which). */
int tour_director_create(const tour_director_config_t *cfg, tour_director_t **out);

/*
 * The drain: claim nothing more and hand every owned tournament back (the clock written, the
 * owner key deleted) as soon as no write of it is in flight. done(arg) runs once, on the base's
 * thread, when nothing is owned any more (at once if nothing was). Idempotent; done of a later
 * call replaces an earlier one's.
 */
void tour_director_release_all(tour_director_t *d, void (*done)(void *arg), void *arg);

/* Tournaments owned now (any thread). */
long tour_director_owned(const tour_director_t *d);
/* Connected to Redis and not releasing (any thread). */
bool tour_director_ready(const tour_director_t *d);

/* Stops everything without releasing (a crash leaves the same: the claims expire). */
void tour_director_destroy(tour_director_t *d);

#endif
