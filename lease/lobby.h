/*
 * lobby -- the one lobby of every engine: the tables with free seats that game servers
 * advertise in Redis, and the reading of those ads (docs/gateway.md, "The lobby").
 *
 * Keys (one hash tag, so a script may touch both):
 *
 *   ZSET  {croupier:lobby}:ads            member "<server_id>:<desk>", score = expiry (wall ms)
 *   HASH  {croupier:lobby}:ad:<member>    table (desk id), engine (the protocol's Engine number,
 *                                         proto/client.proto), game, stakes, seats, seats_free,
 *                                         server, ttl_ms; PEXPIRE ttl_ms
 *
 * An ad is written whole by one script (DEL, HSET, PEXPIRE, ZADD), so a reader never sees half
 * of one. A reader takes the index from now to +inf (the ads of a server that died are left
 * out once they expire), then each hash; the writers prune expired index members.
 *
 * Publisher side (a game server, any engine): lobby_pub_create() on the main loop with the
 * process's rconn and server id. Desks run on worker threads, so lobby_pub_set() and
 * lobby_pub_remove() may be called from any thread: they change a mutex-guarded table and wake
 * the main loop (event_active()), which brings Redis in line with it. Every ad is also rewritten
 * with a fresh expiry every refresh_ms, and expires 3 x refresh_ms after its last write, so the
 * ads of a dead server vanish by themselves. A table with no free seat has no ad.
 * lobby_pub_withdraw_all() (drain) deletes every ad at once; none is published again.
 *
 * Reader side (the gateway): lobby_ad_key() names an index member's hash, lobby_ad_parse()
 * reads its HGETALL reply (incomplete or invalid ads are refused), lobby_ad_matches() applies a
 * ListTables' filters.
 */
#ifndef CROUPIER_LOBBY_H
#define CROUPIER_LOBBY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "rconn.h"

struct event_base;

#define LOBBY_TAG "{croupier:lobby}"
#define LOBBY_INDEX_KEY LOBBY_TAG ":ads"
#define LOBBY_AD_KEY_PREFIX LOBBY_TAG ":ad:"
/* Lua: `now`, Redis's own clock in unix ms (its TIME), for the lobby's scripts. */
#define LOBBY_NOW_LUA                                                                              \
    "local t = redis.call('TIME')\n"                                                               \
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
/* The index's members whose ads have not expired, on REDIS's clock (its TIME), so that a step of
 * a reader's or a writer's wall clock changes nothing: KEYS[1] = LOBBY_INDEX_KEY, ARGV[1] = the
 * most to return. Publishers score their ads with Redis's time too. */
#define LOBBY_LIST_LUA                                                                             \
    LOBBY_NOW_LUA                                                                                  \
    "return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf', 'LIMIT', 0, ARGV[1])\n"
/* Longest game name (as Join.game: 1..32 of a-z, 0-9, '_', '-'), server id, seat count. */
#define LOBBY_GAME_MAX 32
#define LOBBY_SERVER_MAX 79
#define LOBBY_SEATS_MAX 1000
/* Most tables one publisher advertises. */
#define LOBBY_PUB_MAX 65536

/* One advertised table, as read back. */
typedef struct lobby_ad {
    uint64_t desk;
    char server_id[LOBBY_SERVER_MAX + 1];
    int engine; /* the protocol's Engine number */
    char game[LOBBY_GAME_MAX + 1];
    int64_t stake;
    uint32_t seats;
    uint32_t seats_free; /* 1..seats */
} lobby_ad_t;

/* ---- publisher ---------------------------------------------------------------------------- */

typedef struct lobby_pub lobby_pub_t;

typedef struct {
    const char *server_id; /* the registry id the ads name; copied; required */
    int engine;            /* the protocol's Engine number of every ad (engine_ops_t.engine) */
    int refresh_ms;        /* every ad rewritten this often; TTL 3 x; 0 = 2000 */
} lobby_pub_opts_t;

/*
 * Creates a publisher on base (main thread). rc is the process's connection, not owned; it
 * must outlive the publisher, and its owner calls lobby_pub_refresh() when it reconnects (else
 * the next periodic refresh rewrites the ads). Returns NULL with errno EINVAL on bad options.
 */
lobby_pub_t *lobby_pub_create(struct event_base *base, rconn_t *rc, const lobby_pub_opts_t *o);

/*
 * Advertises desk (or changes its ad): game (a Join game name), stake > 0, 1..LOBBY_SEATS_MAX
 * seats, 0..seats free (0: no ad while the table is full). Any thread; the ad is written on
 * the main loop soon after. Returns 0, -EINVAL (bad values) or -ENOSPC (LOBBY_PUB_MAX desks).
 */
int lobby_pub_set(lobby_pub_t *p, uint64_t desk, const char *game, int64_t stake, int seats,
                  int seats_free);

/* Forgets desk (a closed table): its ad is deleted on the main loop. Any thread. Returns 0 or
 * -ENOENT. */
int lobby_pub_remove(lobby_pub_t *p, uint64_t desk);

/* Drain: every ad is deleted at once and none is published again (set/remove still keep the
 * table). Any thread; idempotent. */
void lobby_pub_withdraw_all(lobby_pub_t *p);

/* Rewrites every ad now, with a fresh expiry (after a reconnect). Main thread. */
void lobby_pub_refresh(lobby_pub_t *p);

/* Frees the publisher (main thread), once no other thread calls it any more. Ads still in
 * Redis expire by themselves (withdraw them first to drop them at once). NULL is a no-op. */
void lobby_pub_destroy(lobby_pub_t *p);

/* ---- reader ------------------------------------------------------------------------------- */

/* Writes the ad hash key of an index member into buf. Returns 0, -EINVAL (empty member) or
 * -ENOSPC. */
int lobby_ad_key(const char *member, size_t member_len, char *buf, size_t len);

/*
 * Reads the HGETALL reply of one ad into out. Returns 0, or -EINVAL when the ad is gone (an
 * empty reply: it expired between the two reads), incomplete or invalid (no desk, engine out of
 * 0..1000, stake <= 0, seats_free outside 1..seats, a game name that Join would refuse, a server
 * id with spaces or control characters); such an ad is left out of a list.
 */
int lobby_ad_parse(const redisReply *reply, lobby_ad_t *out);

/* A ListTables' filters: engine 0 (ENGINE_UNSPECIFIED) any, game NULL or "" any, stake when
 * has_stake. */
typedef struct {
    int engine;
    const char *game;
    bool has_stake;
    int64_t stake;
} lobby_filter_t;

bool lobby_ad_matches(const lobby_ad_t *ad, const lobby_filter_t *f);

#endif
