/*
 * tour_table.c -- the servers' side of the director's table protocol. The contract is
 * tour_table.h; the rules are docs/tournaments.md "Tables at the servers".
 */
#include "tour_table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>

#include "keytag.h"
#include "match_hall.h"
#include "tour_director.h"

/* Renews a claim only for its holder. KEYS[1] host key; ARGV token, ttl. */
static const char RENEW_LUA[] = "if redis.call('GET', KEYS[1]) == ARGV[1] then "
                                "redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end return 0";
/* Releases a claim only for its holder. */
static const char RELEASE_LUA[] = "if redis.call('GET', KEYS[1]) == ARGV[1] then "
                                  "return redis.call('DEL', KEYS[1]) end return 0";

/* "{croupier:tour:<id>}:<what>", on a cluster "{croupier:money}:tour:<id>:<what>"
 * (tour_director.h's keys; this library does not link the director). */
static void tkey(char *buf, size_t len, uint64_t id, const char *what)
{
    char ids[24], base[64];
    snprintf(ids, sizeof ids, "%" PRIu64, id);
    snprintf(buf, len, "%s:%s", keytag_tour(base, sizeof base, ids), what);
}

static void host_key(char *buf, size_t len, uint64_t tournament, uint32_t table)
{
    char what[32];
    snprintf(what, sizeof what, "host:%" PRIu32, table);
    tkey(buf, len, tournament, what);
}

static bool reply_ok(const redisReply *r)
{
    return r != NULL && r->type != REDIS_REPLY_ERROR;
}

/* The ready game servers of engine in the registry (lease/registry.h), at least 1. */
static unsigned ready_servers(redisContext *c, const char *engine)
{
    redisReply *m = redisCommand(c, "SMEMBERS %s:members", keytag_registry());
    unsigned n = 0;
    for (size_t i = 0; reply_ok(m) && m->type == REDIS_REPLY_ARRAY && i < m->elements; i++) {
        if (m->element[i]->type != REDIS_REPLY_STRING)
            continue;
        redisReply *e = redisCommand(c, "GET %s:server:%s", keytag_registry(), m->element[i]->str);
        json_t *j =
            reply_ok(e) && e->type == REDIS_REPLY_STRING ? json_loads(e->str, 0, NULL) : NULL;
        const char *eng = json_string_value(json_object_get(j, "engine"));
        const char *state = json_string_value(json_object_get(j, "state"));
        n +=
            eng != NULL && state != NULL && strcmp(eng, engine) == 0 && strcmp(state, "ready") == 0;
        json_decref(j);
        freeReplyObject(e);
    }
    freeReplyObject(m);
    return n > 0 ? n : 1;
}

/* Claims open, unhosted tables of one running tournament while this server hosts fewer of its
 * tables than its fair share: the open tables over the ready servers, rounded up. The registry
 * is read (*servers, 0 until then) only when some table has no host. */
static int scan_one(redisContext *c, uint64_t id, const char *prefix, const char *engine,
                    unsigned *servers, int ttl_ms, uint32_t max_seats, tour_claim_t *out,
                    size_t max, size_t *n, size_t *skipped)
{
    char key[TOUR_KEY_MAX];
    tkey(key, sizeof key, id, "meta");
    redisReply *m = redisCommand(c, "HMGET %s status structure", key);
    if (!reply_ok(m) || m->type != REDIS_REPLY_ARRAY || m->elements != 2) {
        freeReplyObject(m);
        return m == NULL ? -EIO : 0;
    }
    const redisReply *status = m->element[0], *structure = m->element[1];
    if (status->type != REDIS_REPLY_STRING || strcmp(status->str, "running") != 0 ||
        structure->type != REDIS_REPLY_STRING) {
        freeReplyObject(m);
        return 0;
    }
    tour_structure_t *st = NULL;
    char err[160];
    int rc = tour_structure_parse(structure->str, structure->len, &st, err, sizeof err);
    freeReplyObject(m);
    if (rc != 0)
        return 0; /* the director refuses it too: nothing to host */
    uint32_t seats = st->seats_per_table;
    char game[16];
    snprintf(game, sizeof game, "%s", st->format == TOUR_FORMAT_MATCH ? st->match->game : "holdem");
    /* A match's tables are played by the shedding games' servers (engine "traditional"), a
     * hold'em tournament's by the hold'em servers: each engine claims only its own. */
    bool mine_engine =
        strcmp(engine, st->format == TOUR_FORMAT_MATCH ? "traditional" : "holdem") == 0;
    tour_structure_destroy(st);
    if (!mine_engine)
        return 0;
    if (seats > max_seats) {
        (*skipped)++;
        return 0;
    }
    tkey(key, sizeof key, id, "tables");
    redisReply *tb = redisCommand(c, "HGETALL %s", key);
    if (!reply_ok(tb) || tb->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(tb);
        return tb == NULL ? -EIO : 0;
    }
    /* The open tables, then their hosts in one MGET. */
    size_t pairs = tb->elements / 2, nopen = 0;
    uint32_t *open = calloc(pairs + 1, sizeof *open);
    char(*keys)[TOUR_KEY_MAX] = calloc(pairs + 1, sizeof *keys);
    const char **argv = calloc(pairs + 2, sizeof *argv);
    if (open == NULL || keys == NULL || argv == NULL) {
        free(open);
        free(keys);
        free(argv);
        freeReplyObject(tb);
        return -ENOMEM;
    }
    for (size_t k = 0; k < pairs; k++) {
        const char *txt = tb->element[2 * k + 1]->str;
        json_t *j = json_loads(txt != NULL ? txt : "", 0, NULL);
        uint32_t table = (uint32_t)json_integer_value(json_object_get(j, "id"));
        if (j != NULL && table != 0 && !json_is_true(json_object_get(j, "closed")))
            open[nopen++] = table;
        json_decref(j);
    }
    freeReplyObject(tb);
    argv[0] = "MGET";
    for (size_t k = 0; k < nopen; k++) {
        host_key(keys[k], TOUR_KEY_MAX, id, open[k]);
        argv[k + 1] = keys[k];
    }
    redisReply *h = nopen > 0 ? redisCommandArgv(c, (int)nopen + 1, argv, NULL) : NULL;
    int ret = nopen > 0 && h == NULL ? -EIO : 0;
    /* This server's tables (its tokens start with "<prefix>."); the unhosted ones kept in open. */
    size_t mine = 0, unhosted = 0, plen = strlen(prefix);
    for (size_t k = 0; reply_ok(h) && h->type == REDIS_REPLY_ARRAY && k < h->elements; k++) {
        const redisReply *v = h->element[k];
        if (v->type != REDIS_REPLY_STRING)
            open[unhosted++] = open[k];
        else
            mine += strncmp(v->str, prefix, plen) == 0 && v->str[plen] == '.';
    }
    freeReplyObject(h);
    if (unhosted > 0 && *servers == 0)
        *servers = ready_servers(c, engine);
    size_t share = unhosted > 0 ? (nopen + *servers - 1) / *servers : 0;
    /* From a random table on: servers scanning at once try different tables first. */
    size_t first = unhosted > 0 ? arc4random_uniform((uint32_t)unhosted) : 0;
    for (size_t k = 0; k < unhosted && *n < max && mine < share; k++) {
        uint32_t table = open[(first + k) % unhosted];
        tour_claim_t *cl = &out[*n];
        memset(cl, 0, sizeof *cl);
        cl->tournament = id;
        cl->table = table;
        cl->seats = seats;
        snprintf(cl->game, sizeof cl->game, "%s", game);
        snprintf(cl->host, sizeof cl->host, "%.70s.%08" PRIx32, prefix, arc4random());
        host_key(key, sizeof key, id, table);
        redisReply *s = redisCommand(c, "SET %s %s NX PX %d", key, cl->host, ttl_ms);
        if (s == NULL) {
            ret = -EIO;
            break;
        }
        if (s->type == REDIS_REPLY_STATUS) {
            (*n)++;
            mine++;
        }
        freeReplyObject(s);
    }
    free(open);
    free(keys);
    free(argv);
    return ret;
}

int tour_table_scan(redisContext *c, const char *prefix, const char *engine, int ttl_ms,
                    uint32_t max_seats, tour_claim_t *out, size_t max, size_t *n, size_t *skipped)
{
    *n = 0;
    *skipped = 0;
    if (max == 0)
        return 0;
    redisReply *live = redisCommand(c, "SMEMBERS %s", TOUR_LIVE_KEY);
    if (!reply_ok(live) || live->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(live);
        return -EIO;
    }
    int rc = 0;
    unsigned servers = 0; /* read from the registry once a table wants a host */
    for (size_t i = 0; i < live->elements && *n < max && rc == 0; i++) {
        uint64_t id =
            strtoull(live->element[i]->str != NULL ? live->element[i]->str : "", NULL, 10);
        if (id != 0)
            rc = scan_one(c, id, prefix, engine, &servers, ttl_ms, max_seats, out, max, n, skipped);
    }
    freeReplyObject(live);
    return rc != 0 ? rc : (int)*n;
}

static int host_script(redisContext *c, const char *lua, uint64_t tournament, uint32_t table,
                       const char *host, int ttl_ms)
{
    char key[TOUR_KEY_MAX];
    host_key(key, sizeof key, tournament, table);
    redisReply *r = redisCommand(c, "EVAL %s 1 %s %s %d", lua, key, host, ttl_ms);
    if (!reply_ok(r) || r->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        return -EIO;
    }
    int v = r->integer != 0;
    freeReplyObject(r);
    return v;
}

int tour_table_renew(redisContext *c, uint64_t tournament, uint32_t table, const char *host,
                     int ttl_ms)
{
    return host_script(c, RENEW_LUA, tournament, table, host, ttl_ms);
}

int tour_table_release(redisContext *c, uint64_t tournament, uint32_t table, const char *host)
{
    return host_script(c, RELEASE_LUA, tournament, table, host, 0) < 0 ? -EIO : 0;
}

int tour_table_locate(redisContext *c, uint64_t tournament, uint32_t table, const char *where)
{
    char key[TOUR_KEY_MAX];
    tkey(key, sizeof key, tournament, "where");
    redisReply *r = redisCommand(c, "HSET %s %" PRIu32 " %s", key, table, where);
    int rc = reply_ok(r) ? 0 : -EIO;
    freeReplyObject(r);
    return rc;
}

int tour_table_next_hand(redisContext *c, uint64_t tournament, uint32_t table, uint64_t *hand,
                         bool *closed)
{
    char key[TOUR_KEY_MAX], field[16];
    tkey(key, sizeof key, tournament, "tables");
    snprintf(field, sizeof field, "%" PRIu32, table);
    redisReply *r = redisCommand(c, "HGET %s %s", key, field);
    if (!reply_ok(r)) {
        freeReplyObject(r);
        return -EIO;
    }
    json_t *j = r->type == REDIS_REPLY_STRING ? json_loads(r->str, 0, NULL) : NULL;
    freeReplyObject(r);
    *closed = j == NULL || json_is_true(json_object_get(j, "closed"));
    uint64_t last = (uint64_t)json_integer_value(json_object_get(j, "hand"));
    *hand = json_is_true(json_object_get(j, "in_hand")) && last > 0 ? last : last + 1;
    json_decref(j);
    return 0;
}

/* Whether the tournament is over (finished, cancelled, or gone): nobody answers it. */
static int tour_over(redisContext *c, uint64_t tournament)
{
    char key[TOUR_KEY_MAX];
    tkey(key, sizeof key, tournament, "meta");
    redisReply *r = redisCommand(c, "HGET %s status", key);
    if (!reply_ok(r)) {
        freeReplyObject(r);
        return -EIO;
    }
    int over = r->type != REDIS_REPLY_STRING || strcmp(r->str, "finished") == 0 ||
               strcmp(r->str, "cancelled") == 0;
    freeReplyObject(r);
    return over;
}

int tour_table_over(redisContext *c, uint64_t tournament)
{
    return tour_over(c, tournament);
}

int tour_table_ask(redisContext *c, uint64_t tournament, const char *op, uint32_t table,
                   uint64_t hand, uint32_t attempt, const char *host, const char *result,
                   const char *record, int wait_ms, json_t **answer)
{
    *answer = NULL;
    int over = tour_over(c, tournament);
    if (over != 0)
        return over < 0 ? -EIO : -ESHUTDOWN;
    char in[TOUR_KEY_MAX], reply[TOUR_KEY_MAX], req[TOUR_HOST_MAX + 32], what[TOUR_HOST_MAX + 40];
    snprintf(req, sizeof req, "%s.%c%" PRIu64 ".%" PRIu32, host, op[0], hand, attempt);
    snprintf(what, sizeof what, "reply:%s", req);
    tkey(in, sizeof in, tournament, "in");
    tkey(reply, sizeof reply, tournament, what);
    char tb[16], hd[24];
    snprintf(tb, sizeof tb, "%" PRIu32, table);
    snprintf(hd, sizeof hd, "%" PRIu64, hand);
    const char *argv[18] = {"XADD",  in, "*",    "op", op,     "req", req,
                            "table", tb, "hand", hd,   "host", host};
    int argc = 13;
    if (result != NULL) {
        argv[argc++] = "result";
        argv[argc++] = result;
    }
    if (record != NULL) {
        argv[argc++] = "record";
        argv[argc++] = record;
    }
    redisReply *x = redisCommandArgv(c, argc, argv, NULL);
    if (!reply_ok(x)) {
        freeReplyObject(x);
        return -EIO;
    }
    freeReplyObject(x);
    /* BLPOP's timeout is in seconds (a decimal is accepted since Redis 6). */
    char secs[24];
    snprintf(secs, sizeof secs, "%.3f", (wait_ms > 0 ? wait_ms : 1000) / 1000.0);
    redisReply *b = redisCommand(c, "BLPOP %s %s", reply, secs);
    if (b == NULL)
        return -EIO;
    if (b->type != REDIS_REPLY_ARRAY || b->elements != 2 ||
        b->element[1]->type != REDIS_REPLY_STRING) {
        int rc = b->type == REDIS_REPLY_ERROR ? -EIO : -ETIMEDOUT;
        freeReplyObject(b);
        return rc;
    }
    *answer = json_loads(b->element[1]->str, 0, NULL);
    freeReplyObject(b);
    return *answer != NULL ? 0 : -EIO;
}

static bool int_field(const json_t *o, const char *k, json_int_t lo, json_int_t hi, json_int_t *v)
{
    const json_t *x = json_object_get(o, k);
    if (!json_is_integer(x))
        return false;
    *v = json_integer_value(x);
    return *v >= lo && *v <= hi;
}

/* A match's deal answer (tour_deal_parse): every seat dealt in, with its score. */
static int match_deal_parse(const json_t *a, uint32_t seats, tour_deal_t *out)
{
    json_int_t v[6];
    const json_t *arr = json_object_get(a, "seats");
    const char *game = json_string_value(json_object_get(a, "game"));
    const char *format = json_string_value(json_object_get(a, "format"));
    const json_t *seed = json_object_get(a, "seed");
    if (!int_field(a, "table", 1, UINT32_MAX, &v[0]) ||
        !int_field(a, "hand", 1, INT64_MAX, &v[1]) ||
        !int_field(a, "stage", 0, UINT32_MAX, &v[2]) ||
        !int_field(a, "deal", 0, INT64_MAX, &v[3]) ||
        !int_field(a, "round", 0, UINT32_MAX, &v[4]) ||
        !int_field(a, "base", 1, INT64_MAX, &v[5]) || game == NULL ||
        strlen(game) >= sizeof out->game || format == NULL ||
        strlen(format) >= sizeof out->format ||
        (seed != NULL &&
         (!json_is_string(seed) || strlen(json_string_value(seed)) >= sizeof out->seed)) ||
        !json_is_array(arr) || json_array_size(arr) != seats)
        return -EINVAL;
    out->scored = true;
    out->table = (uint32_t)v[0];
    out->hand = (uint64_t)v[1];
    out->stage = (uint32_t)v[2];
    out->deal = (uint64_t)v[3];
    out->round = (uint32_t)v[4];
    out->base = v[5];
    snprintf(out->game, sizeof out->game, "%s", game);
    snprintf(out->format, sizeof out->format, "%s", format);
    snprintf(out->seed, sizeof out->seed, "%s", seed != NULL ? json_string_value(seed) : "");
    out->button = out->sb = out->bb = -1;
    size_t i;
    const json_t *s;
    json_array_foreach(arr, i, s)
    {
        json_int_t seat, player, score;
        if (!int_field(s, "seat", 0, (json_int_t)seats - 1, &seat) ||
            !int_field(s, "player", 1, INT64_MAX, &player) ||
            !int_field(s, "score", INT64_MIN, INT64_MAX, &score))
            return -EINVAL;
        for (size_t k = 0; k < out->nseats; k++)
            if (out->seats[k].seat == (int)seat || out->seats[k].player == (uint64_t)player)
                return -EINVAL;
        out->seats[out->nseats++] = (tour_deal_seat_t){
            .seat = (int)seat, .player = (uint64_t)player, .score = score, .dealt = true};
    }
    return 0;
}

int tour_deal_parse(const json_t *a, uint32_t seats, tour_deal_t *out)
{
    memset(out, 0, sizeof *out);
    if (json_object_get(a, "format") != NULL)
        return match_deal_parse(a, seats, out);
    json_int_t v[9];
    const json_t *arr = json_object_get(a, "seats");
    if (!int_field(a, "table", 1, UINT32_MAX, &v[0]) ||
        !int_field(a, "hand", 1, INT64_MAX, &v[1]) ||
        !int_field(a, "level", 0, UINT32_MAX, &v[2]) ||
        !int_field(a, "small_blind", 0, INT64_MAX, &v[3]) ||
        !int_field(a, "big_blind", 1, INT64_MAX, &v[4]) ||
        !int_field(a, "ante", 0, INT64_MAX, &v[5]) ||
        !int_field(a, "button", 0, (json_int_t)seats - 1, &v[6]) ||
        !int_field(a, "sb", 0, (json_int_t)seats - 1, &v[7]) ||
        !int_field(a, "bb", 0, (json_int_t)seats - 1, &v[8]) || !json_is_array(arr) ||
        json_array_size(arr) > seats)
        return -EINVAL;
    out->table = (uint32_t)v[0];
    out->hand = (uint64_t)v[1];
    out->level = (uint32_t)v[2];
    out->small_blind = v[3];
    out->big_blind = v[4];
    out->ante = v[5];
    out->big_blind_ante = json_is_true(json_object_get(a, "big_blind_ante"));
    out->button = (int)v[6];
    out->sb = (int)v[7];
    out->bb = (int)v[8];
    size_t i;
    const json_t *s;
    json_array_foreach(arr, i, s)
    {
        json_int_t seat, player, stack;
        if (!int_field(s, "seat", 0, (json_int_t)seats - 1, &seat) ||
            !int_field(s, "player", 1, INT64_MAX, &player) ||
            !int_field(s, "stack", 0, INT64_MAX, &stack))
            return -EINVAL;
        for (size_t k = 0; k < out->nseats; k++)
            if (out->seats[k].seat == (int)seat)
                return -EINVAL;
        out->seats[out->nseats++] =
            (tour_deal_seat_t){.seat = (int)seat,
                               .player = (uint64_t)player,
                               .stack = stack,
                               .dealt = json_is_true(json_object_get(s, "dealt"))};
    }
    return 0;
}

size_t tour_hand_leavers(const json_t *a, uint32_t table, tour_leaver_t *out, size_t max)
{
    size_t n = 0, i;
    const json_t *x;
    json_array_foreach(json_object_get(a, "out"), i, x)
    {
        if (n >= max)
            break;
        out[n++] = (tour_leaver_t){
            .player = (uint64_t)json_integer_value(json_object_get(x, "player")),
            .busted = true,
            .place = (uint32_t)json_integer_value(json_object_get(x, "place")),
            .prize = json_integer_value(json_object_get(x, "prize")),
        };
    }
    json_array_foreach(json_object_get(a, "moves"), i, x)
    {
        if (n >= max)
            break;
        if ((uint32_t)json_integer_value(json_object_get(x, "from_table")) != table)
            continue;
        out[n++] = (tour_leaver_t){
            .player = (uint64_t)json_integer_value(json_object_get(x, "player")),
            .to_table = (uint32_t)json_integer_value(json_object_get(x, "to_table")),
        };
    }
    return n;
}

/* Marks in flags[i] whether seated[i] is among the array's player ids (each an integer >= 1). */
static int player_flags(const json_t *arr, const uint64_t *seated, size_t n, bool *flags)
{
    if (!json_is_array(arr))
        return -EINVAL;
    for (size_t k = 0; k < n; k++)
        flags[k] = false;
    size_t i;
    const json_t *x;
    json_array_foreach(arr, i, x)
    {
        if (!json_is_integer(x) || json_integer_value(x) < 1)
            return -EINVAL;
        for (size_t k = 0; k < n; k++)
            flags[k] = flags[k] || seated[k] == (uint64_t)json_integer_value(x);
    }
    return 0;
}

int tour_match_hand_parse(const json_t *a, const uint64_t *seated, size_t n, bool *out, bool *stays)
{
    if (player_flags(json_object_get(a, "out"), seated, n, out) != 0 ||
        player_flags(json_object_get(a, "next"), seated, n, stays) != 0)
        return -EINVAL;
    return 0;
}
