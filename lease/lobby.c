/*
 * lobby -- the lobby's Redis keys, the publisher of a game server's ads and the reading of them.
 * See lobby.h.
 */
#include "lobby.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "xmalloc.h"

/* Writes one ad whole: KEYS ad, index; ARGV member, (unused), ttl ms, field/value pairs. The
 * index's score is the ad's expiry on Redis's clock (TIME), never the writer's wall clock: a
 * server whose clock stepped neither hides its ads nor keeps them past their time. */
static const char lobby_put_lua[] =
    "redis.call('DEL', KEYS[1])\n"
    "redis.call('HSET', KEYS[1], unpack(ARGV, 4))\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[3])\n" LOBBY_NOW_LUA
    "redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])\n"
    "return 1\n";
/* Prunes the index's expired members (servers that died), on Redis's clock: KEYS index. */
static const char lobby_prune_lua[] =
    LOBBY_NOW_LUA "return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)\n";
/* Deletes one ad: KEYS ad, index; ARGV member. */
static const char lobby_del_lua[] = "redis.call('DEL', KEYS[1])\n"
                                    "redis.call('ZREM', KEYS[2], ARGV[1])\n"
                                    "return 1\n";

/* One desk of the publisher's table. Everything is guarded by lobby_pub.mu. */
typedef struct lobby_entry {
    uint64_t desk;
    char game[LOBBY_GAME_MAX + 1];
    int64_t stake;
    int seats, seats_free;
    bool removed;   /* forgotten: the ad goes, then the entry */
    bool dirty;     /* changed since the main loop last wrote it */
    bool published; /* an ad is (as far as we know) in Redis */
} lobby_entry_t;

struct lobby_pub {
    struct event_base *base;
    rconn_t *rc;
    char server_id[LOBBY_SERVER_MAX + 1];
    int engine;
    int64_t refresh_ms;
    struct event *wake, *tick;
    rconn_script_t *put, *del, *prune;
    atomic_bool withdraw;
    pthread_mutex_t mu;
    lobby_entry_t *entries;
    size_t n, cap;
};

/* A game name Join would take: 1..32 of a-z, 0-9, '_' and '-'. */
static bool lobby_game_ok(const char *g)
{
    size_t n = g != NULL ? strlen(g) : 0;
    if (n == 0 || n > LOBBY_GAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((g[i] >= 'a' && g[i] <= 'z') || (g[i] >= '0' && g[i] <= '9') || g[i] == '_' ||
              g[i] == '-'))
            return false;
    return true;
}

/* A server id: 1..max printable characters, no space. */
static bool lobby_server_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~')
            return false;
    return true;
}

static void lobby_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    (void)arg;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        log_emit(LOG_WARN, "lobby_ad_write_failed", "{s:s}", "error",
                 reply != NULL ? reply->str : "no reply");
}

/* Sends the deletion of e's ad. Main thread, p->mu held. Returns rconn's result. */
static int lobby_send_del(lobby_pub_t *p, const lobby_entry_t *e)
{
    char member[LOBBY_SERVER_MAX + 24], key[sizeof member + sizeof LOBBY_AD_KEY_PREFIX];
    snprintf(member, sizeof member, "%s:%" PRIu64, p->server_id, e->desk);
    snprintf(key, sizeof key, LOBBY_AD_KEY_PREFIX "%s", member);
    const char *argv[] = {key, LOBBY_INDEX_KEY, member};
    return rconn_eval(p->rc, p->del, lobby_reply_cb, NULL, 2, 3, argv, NULL);
}

/* Sends e's ad, whole, with an expiry of 3 refresh periods from now. Main thread, p->mu held. */
static int lobby_send_put(lobby_pub_t *p, const lobby_entry_t *e)
{
    int64_t ttl = p->refresh_ms * 3;
    char member[LOBBY_SERVER_MAX + 24], key[sizeof member + sizeof LOBBY_AD_KEY_PREFIX];
    char v_score[24], v_ttl[24], v_table[24], v_engine[16], v_stakes[24], v_seats[16], v_free[16];
    snprintf(member, sizeof member, "%s:%" PRIu64, p->server_id, e->desk);
    snprintf(key, sizeof key, LOBBY_AD_KEY_PREFIX "%s", member);
    snprintf(v_score, sizeof v_score, "%s", "0"); /* the script scores it on Redis's clock */
    snprintf(v_ttl, sizeof v_ttl, "%" PRId64, ttl);
    snprintf(v_table, sizeof v_table, "%" PRIu64, e->desk);
    snprintf(v_engine, sizeof v_engine, "%d", p->engine);
    snprintf(v_stakes, sizeof v_stakes, "%" PRId64, e->stake);
    snprintf(v_seats, sizeof v_seats, "%d", e->seats);
    snprintf(v_free, sizeof v_free, "%d", e->seats_free);
    const char *argv[] = {key,          LOBBY_INDEX_KEY, member,   v_score,      v_ttl,   "table",
                          v_table,      "engine",        v_engine, "game",       e->game, "stakes",
                          v_stakes,     "seats",         v_seats,  "seats_free", v_free,  "server",
                          p->server_id, "ttl_ms",        v_ttl};
    return rconn_eval(p->rc, p->put, lobby_reply_cb, NULL, 2, (int)(sizeof argv / sizeof argv[0]),
                      argv, NULL);
}

/*
 * Brings Redis in line with the table (main thread): desks with free seats are (re)advertised
 * when refresh is true or their entry changed; full, removed and (after a withdraw) all desks
 * have their ad deleted; removed desks whose ad is gone leave the table. Nothing is sent while
 * the connection is down: the entries keep their state and the next sync catches up.
 */
static void lobby_sync(lobby_pub_t *p, bool refresh)
{
    if (p->rc == NULL || !rconn_connected(p->rc))
        return;
    bool withdraw = atomic_load(&p->withdraw);
    pthread_mutex_lock(&p->mu);
    size_t i = 0;
    while (i < p->n) {
        lobby_entry_t *e = &p->entries[i];
        bool want = !withdraw && !e->removed && e->seats_free > 0;
        if (!want) {
            if (e->published && lobby_send_del(p, e) == 0)
                e->published = false;
            if (e->removed && !e->published) {
                p->entries[i] = p->entries[--p->n];
                continue;
            }
            i++;
            continue;
        }
        if ((refresh || e->dirty || !e->published) && lobby_send_put(p, e) == 0) {
            e->dirty = false;
            e->published = true;
        }
        i++;
    }
    pthread_mutex_unlock(&p->mu);
}

static void lobby_wake_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    lobby_sync(arg, false);
}

static void lobby_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    lobby_pub_t *p = arg;
    /* Expired members of the index (servers that died) are pruned by whoever writes it. */
    if (p->rc != NULL && rconn_connected(p->rc)) {
        const char *argv[] = {LOBBY_INDEX_KEY};
        rconn_eval(p->rc, p->prune, lobby_reply_cb, NULL, 1, 1, argv, NULL);
    }
    lobby_sync(p, true);
}

lobby_pub_t *lobby_pub_create(struct event_base *base, rconn_t *rc, const lobby_pub_opts_t *o)
{
    if (base == NULL || o == NULL || o->server_id == NULL ||
        !lobby_server_ok(o->server_id, LOBBY_SERVER_MAX) || o->engine < 0 || o->engine > 1000 ||
        o->refresh_ms < 0) {
        errno = EINVAL;
        return NULL;
    }
    lobby_pub_t *p = xcalloc(1, sizeof *p);
    p->base = base;
    p->rc = rc;
    snprintf(p->server_id, sizeof p->server_id, "%s", o->server_id);
    p->engine = o->engine;
    p->refresh_ms = o->refresh_ms > 0 ? o->refresh_ms : 2000;
    atomic_init(&p->withdraw, false);
    pthread_mutex_init(&p->mu, NULL);
    p->wake = event_new(base, -1, 0, lobby_wake_cb, p);
    if (p->wake == NULL)
        goto fail_wake;
    p->tick = event_new(base, -1, EV_PERSIST, lobby_tick_cb, p);
    if (p->tick == NULL)
        goto fail_tick;
    struct timeval tv = {.tv_sec = p->refresh_ms / 1000, .tv_usec = (p->refresh_ms % 1000) * 1000};
    if (event_add(p->tick, &tv) != 0)
        goto fail_add;
    p->put = rconn_script_create(lobby_put_lua);
    p->del = rconn_script_create(lobby_del_lua);
    p->prune = rconn_script_create(lobby_prune_lua);
    return p;

fail_add:
    event_free(p->tick);
fail_tick:
    event_free(p->wake);
fail_wake:
    pthread_mutex_destroy(&p->mu);
    free(p);
    errno = ENOMEM;
    return NULL;
}

/* The entry of desk, or NULL. p->mu held. */
static lobby_entry_t *lobby_find(lobby_pub_t *p, uint64_t desk)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->entries[i].desk == desk)
            return &p->entries[i];
    return NULL;
}

int lobby_pub_set(lobby_pub_t *p, uint64_t desk, const char *game, int64_t stake, int seats,
                  int seats_free)
{
    if (p == NULL || desk == 0 || !lobby_game_ok(game) || stake <= 0 || seats < 1 ||
        seats > LOBBY_SEATS_MAX || seats_free < 0 || seats_free > seats)
        return -EINVAL;
    pthread_mutex_lock(&p->mu);
    lobby_entry_t *e = lobby_find(p, desk);
    if (e == NULL) {
        if (p->n == LOBBY_PUB_MAX) {
            pthread_mutex_unlock(&p->mu);
            return -ENOSPC;
        }
        if (p->n == p->cap) {
            p->cap = p->cap > 0 ? p->cap * 2 : 64;
            p->entries = xreallocarray(p->entries, p->cap, sizeof *p->entries);
        }
        e = &p->entries[p->n++];
        memset(e, 0, sizeof *e);
        e->desk = desk;
    }
    snprintf(e->game, sizeof e->game, "%s", game);
    e->stake = stake;
    e->seats = seats;
    e->seats_free = seats_free;
    e->removed = false;
    e->dirty = true;
    pthread_mutex_unlock(&p->mu);
    event_active(p->wake, EV_READ, 0);
    return 0;
}

int lobby_pub_remove(lobby_pub_t *p, uint64_t desk)
{
    if (p == NULL)
        return -ENOENT;
    pthread_mutex_lock(&p->mu);
    lobby_entry_t *e = lobby_find(p, desk);
    if (e != NULL) {
        e->removed = true;
        e->dirty = true;
    }
    pthread_mutex_unlock(&p->mu);
    if (e == NULL)
        return -ENOENT;
    event_active(p->wake, EV_READ, 0);
    return 0;
}

void lobby_pub_withdraw_all(lobby_pub_t *p)
{
    if (p == NULL)
        return;
    atomic_store(&p->withdraw, true);
    event_active(p->wake, EV_READ, 0);
}

void lobby_pub_refresh(lobby_pub_t *p)
{
    if (p != NULL)
        lobby_sync(p, true);
}

void lobby_pub_destroy(lobby_pub_t *p)
{
    if (p == NULL)
        return;
    event_free(p->wake);
    event_free(p->tick);
    rconn_script_destroy(p->put);
    rconn_script_destroy(p->del);
    rconn_script_destroy(p->prune);
    pthread_mutex_destroy(&p->mu);
    free(p->entries);
    free(p);
}

/* ---- reader --------------------------------------------------------------------------------- */

int lobby_ad_key(const char *member, size_t member_len, char *buf, size_t len)
{
    if (member == NULL || member_len == 0)
        return -EINVAL;
    int n = snprintf(buf, len, LOBBY_AD_KEY_PREFIX "%.*s", (int)member_len, member);
    return n >= 0 && (size_t)n < len ? 0 : -ENOSPC;
}

/* Parses a decimal integer that fills the whole string, within min..max. */
static bool lobby_parse_ll(const char *s, long long min, long long max, long long *out)
{
    if (s == NULL || *s == '\0' || (*s != '-' && (*s < '0' || *s > '9')))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int lobby_ad_parse(const redisReply *reply, lobby_ad_t *out)
{
    const char *table = NULL, *engine = NULL, *game = NULL, *stakes = NULL, *seats = NULL,
               *free_ = NULL, *server = NULL;
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY || reply->elements % 2 != 0)
        return -EINVAL;
    for (size_t i = 0; i + 1 < reply->elements; i += 2) {
        const redisReply *k = reply->element[i], *v = reply->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING ||
            strlen(v->str) != v->len)
            continue;
        if (strcmp(k->str, "table") == 0)
            table = v->str;
        else if (strcmp(k->str, "engine") == 0)
            engine = v->str;
        else if (strcmp(k->str, "game") == 0)
            game = v->str;
        else if (strcmp(k->str, "stakes") == 0)
            stakes = v->str;
        else if (strcmp(k->str, "seats") == 0)
            seats = v->str;
        else if (strcmp(k->str, "seats_free") == 0)
            free_ = v->str;
        else if (strcmp(k->str, "server") == 0)
            server = v->str;
    }
    long long eng, stake, nseats, nfree;
    if (table == NULL || game == NULL || server == NULL || !lobby_parse_ll(engine, 0, 1000, &eng) ||
        !lobby_parse_ll(stakes, 1, INT64_MAX, &stake) ||
        !lobby_parse_ll(seats, 1, LOBBY_SEATS_MAX, &nseats) ||
        !lobby_parse_ll(free_, 1, nseats, &nfree))
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long desk = strtoull(table, &end, 10);
    if (table[0] < '0' || table[0] > '9' || *end != '\0' || errno != 0 || desk == 0)
        return -EINVAL;
    if (!lobby_server_ok(server, LOBBY_SERVER_MAX) || !lobby_game_ok(game))
        return -EINVAL;
    memset(out, 0, sizeof *out);
    out->desk = desk;
    snprintf(out->server_id, sizeof out->server_id, "%s", server);
    out->engine = (int)eng;
    snprintf(out->game, sizeof out->game, "%s", game);
    out->stake = stake;
    out->seats = (uint32_t)nseats;
    out->seats_free = (uint32_t)nfree;
    return 0;
}

bool lobby_ad_matches(const lobby_ad_t *ad, const lobby_filter_t *f)
{
    if (f->engine != 0 && ad->engine != f->engine)
        return false;
    if (f->game != NULL && f->game[0] != '\0' && strcmp(ad->game, f->game) != 0)
        return false;
    return !f->has_stake || ad->stake == f->stake;
}
