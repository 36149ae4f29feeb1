#include "room.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>
#include <jansson.h>

#include "keytag.h"
#include "rcluster.h"

static bool room_by_entity; /* room_set_entity(): set once at start, read-only afterwards */

void room_set_entity(bool on)
{
    room_by_entity = on;
}

bool room_entity(void)
{
    return room_by_entity;
}

void room_key(const char *code, char *buf, size_t len)
{
    if (room_by_entity)
        snprintf(buf, len, "{r:%s}:room", code);
    else
        snprintf(buf, len, "%s:room:%s", keytag_rooms(), code);
}

bool room_code_digits_valid(const char *code, int n)
{
    if (code == NULL || n < 1 || strlen(code) != (size_t)n)
        return false;
    for (int i = 0; i < n; i++)
        if (code[i] < '0' || code[i] > '9')
            return false;
    return true;
}

bool room_code_valid(const char *code)
{
    return room_code_digits_valid(code, ROOM_CODE_LEN);
}

void room_code_draw_digits(char *code, int n)
{
    for (int i = 0; i < n; i++)
        code[i] = (char)('0' + arc4random_uniform(10));
    code[n > 0 ? n : 0] = '\0';
}

void room_code_draw(char code[ROOM_CODE_LEN + 1])
{
    room_code_draw_digits(code, ROOM_CODE_LEN);
}

void room_owner(const char *server, uint64_t epoch, uint64_t desk, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%" PRIu64 "/%" PRIx64, server, epoch, desk);
}

void room_options_text(const room_record_t *r, char *buf, size_t len)
{
    buf[0] = '\0';
    if (r->noptions == 0)
        return;
    size_t n = (size_t)snprintf(buf, len, "%s=", r->game);
    for (int i = 0; i < r->noptions && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i > 0 ? "+" : "", r->options[i]);
}

char *room_record_json(const room_record_t *r)
{
    char host[24], desk[24], epoch[24];
    snprintf(host, sizeof host, "%" PRIu64, r->host);
    snprintf(desk, sizeof desk, "%" PRIu64, r->desk);
    snprintf(epoch, sizeof epoch, "%" PRIu64, r->epoch);
    json_t *o = json_pack(
        "{s:i,s:s,s:i,s:i,s:s,s:I,s:i,s:i,s:i,s:s,s:b,s:s,s:s,s:s,s:s,s:I,s:I}", "v", 1, "code",
        r->code, "state", (int)r->state, "engine", r->engine, "game", r->game, "stake",
        (json_int_t)r->stake, "seats", r->seats, "deals", r->deals, "played", r->played, "host",
        host, "bot_fill", r->bot_fill, "server", r->server, "epoch", epoch, "desk", desk, "owner",
        r->owner, "created_ms", (json_int_t)r->created_ms, "expires_ms", (json_int_t)r->expires_ms);
    if (o == NULL)
        return NULL;
    if (r->no_spectators)
        json_object_set_new(o, "no_spectators", json_true());
    json_t *opts = json_array(), *scores = json_array(), *rounds = json_array();
    for (int i = 0; i < r->noptions; i++)
        json_array_append_new(opts, json_string(r->options[i]));
    for (int i = 0; i < r->nscores; i++) {
        char p[24];
        snprintf(p, sizeof p, "%" PRIu64, r->scores[i].player);
        json_array_append_new(scores,
                              json_pack("{s:i,s:s,s:I}", "seat", r->scores[i].seat, "player", p,
                                        "total", (json_int_t)r->scores[i].total));
    }
    for (int i = 0; i < r->played && i < ROOM_MAX_DEALS; i++)
        json_array_append_new(rounds, json_string(r->rounds[i]));
    json_object_set_new(o, "options", opts);
    json_object_set_new(o, "scores", scores);
    json_object_set_new(o, "rounds", rounds);
    if (r->detail[0] != '\0')
        json_object_set_new(o, "detail", json_string(r->detail));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

/* A decimal uint64 held as a JSON string (JSON numbers stop at 2^53 for most readers). */
static bool room_u64(json_t *o, const char *key, uint64_t *out)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (s == NULL || s[0] < '0' || s[0] > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

static bool room_str(json_t *o, const char *key, char *out, size_t cap, bool need)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (s == NULL) {
        out[0] = '\0';
        return !need;
    }
    if (strlen(s) >= cap)
        return false;
    snprintf(out, cap, "%s", s);
    return true;
}

int room_record_parse(const char *json, size_t len, room_record_t *out)
{
    memset(out, 0, sizeof *out);
    json_t *o = json_loadb(json, len, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        return -EINVAL;
    }
    bool ok = json_integer_value(json_object_get(o, "v")) == 1 &&
              room_str(o, "code", out->code, sizeof out->code, true) &&
              room_code_valid(out->code) &&
              room_str(o, "game", out->game, sizeof out->game, true) &&
              room_str(o, "server", out->server, sizeof out->server, true) &&
              room_str(o, "owner", out->owner, sizeof out->owner, true) &&
              room_str(o, "detail", out->detail, sizeof out->detail, false) &&
              room_u64(o, "host", &out->host) && room_u64(o, "epoch", &out->epoch) &&
              room_u64(o, "desk", &out->desk);
    json_int_t state = json_integer_value(json_object_get(o, "state"));
    out->state = (Croupier__RoomState)state;
    out->engine = (int)json_integer_value(json_object_get(o, "engine"));
    out->stake = json_integer_value(json_object_get(o, "stake"));
    out->seats = (int)json_integer_value(json_object_get(o, "seats"));
    out->deals = (int)json_integer_value(json_object_get(o, "deals"));
    out->played = (int)json_integer_value(json_object_get(o, "played"));
    out->bot_fill = json_is_true(json_object_get(o, "bot_fill"));
    out->no_spectators = json_is_true(json_object_get(o, "no_spectators"));
    out->created_ms = json_integer_value(json_object_get(o, "created_ms"));
    out->expires_ms = json_integer_value(json_object_get(o, "expires_ms"));
    ok = ok && state >= CROUPIER__ROOM_STATE__ROOM_WAITING &&
         state <= CROUPIER__ROOM_STATE__ROOM_DISBANDED && out->stake > 0 && out->seats >= 2 &&
         out->seats <= ROOM_MAX_SEATS && out->deals >= 1 && out->deals <= ROOM_MAX_DEALS &&
         out->played >= 0 && out->played <= out->deals;
    json_t *opts = json_object_get(o, "options"), *scores = json_object_get(o, "scores"),
           *rounds = json_object_get(o, "rounds");
    ok = ok && json_is_array(opts) && json_array_size(opts) <= ROOM_MAX_OPTIONS &&
         json_is_array(scores) && json_array_size(scores) <= ROOM_MAX_SEATS &&
         json_is_array(rounds) && json_array_size(rounds) == (size_t)out->played;
    size_t i;
    json_t *v;
    if (ok) {
        json_array_foreach(opts, i, v)
        {
            const char *s = json_string_value(v);
            ok = ok && s != NULL && strlen(s) <= ROOM_OPTION_MAX;
            if (ok)
                snprintf(out->options[out->noptions++], ROOM_OPTION_MAX + 1, "%s", s);
        }
        json_array_foreach(scores, i, v)
        {
            room_score_t *sc = &out->scores[out->nscores];
            json_int_t seat = json_integer_value(json_object_get(v, "seat"));
            ok = ok && seat >= 0 && seat < out->seats && room_u64(v, "player", &sc->player) &&
                 json_is_integer(json_object_get(v, "total"));
            if (ok) {
                sc->seat = (int)seat;
                sc->total = json_integer_value(json_object_get(v, "total"));
                out->nscores++;
            }
        }
        json_array_foreach(rounds, i, v)
        {
            const char *s = json_string_value(v);
            ok = ok && s != NULL && strlen(s) <= ROOM_ID_MAX;
            if (ok)
                snprintf(out->rounds[i], ROOM_ID_MAX + 1, "%s", s);
        }
    }
    json_decref(o);
    return ok ? 0 : -EINVAL;
}

void room_info_fill(const room_record_t *r, room_info_buf_t *b)
{
    Croupier__RoomInfo *ri = &b->info;
    croupier__room_info__init(ri);
    ri->code = (char *)r->code;
    ri->state = r->state;
    ri->has_engine = true;
    ri->engine = (Croupier__Engine)r->engine;
    ri->game = (char *)r->game;
    ri->has_stake = true;
    ri->stake = r->stake;
    ri->has_seats = true;
    ri->seats = (uint32_t)r->seats;
    ri->has_deals = true;
    ri->deals = (uint32_t)r->deals;
    ri->has_deals_played = true;
    ri->deals_played = (uint32_t)r->played;
    ri->has_host_player_id = true;
    ri->host_player_id = r->host;
    for (int i = 0; i < r->nscores; i++) {
        croupier__room_score__init(&b->score[i]);
        b->score[i].seat = (uint32_t)r->scores[i].seat;
        b->score[i].player_id = r->scores[i].player;
        b->score[i].total = r->scores[i].total;
        b->score_ptr[i] = &b->score[i];
    }
    ri->n_scores = (size_t)r->nscores;
    ri->scores = b->score_ptr;
    for (int i = 0; i < r->played && i < ROOM_MAX_DEALS; i++)
        b->round_ptr[i] = (char *)r->rounds[i];
    ri->n_round_ids = (size_t)(r->played < ROOM_MAX_DEALS ? r->played : ROOM_MAX_DEALS);
    ri->round_ids = b->round_ptr;
    for (int i = 0; i < r->noptions; i++)
        b->option_ptr[i] = (char *)r->options[i];
    ri->n_rule_options = (size_t)r->noptions;
    ri->rule_options = b->option_ptr;
    ri->has_bot_fill = true;
    ri->bot_fill = r->bot_fill;
    if (r->expires_ms > 0) {
        ri->has_expires_unix_ms = true;
        ri->expires_unix_ms = (uint64_t)r->expires_ms;
    }
    if (r->detail[0] != '\0')
        ri->detail = (char *)r->detail;
}

int room_sync_create(redisContext *c, room_record_t *r, int64_t ttl_ms)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        room_code_draw(r->code);
        char *json = room_record_json(r);
        if (json == NULL)
            return -ENOMEM;
        char key[64];
        room_key(r->code, key, sizeof key);
        redisReply *rep = redisCommand(c, "SET %s %s NX PX %lld", key, json,
                                       (long long)(ttl_ms > 0 ? ttl_ms : 1));
        free(json);
        if (rep == NULL || rep->type == REDIS_REPLY_ERROR) {
            freeReplyObject(rep);
            return -EIO;
        }
        bool taken = rep->type == REDIS_REPLY_NIL;
        freeReplyObject(rep);
        if (!taken)
            return 0;
    }
    r->code[0] = '\0';
    return -EEXIST;
}

/* KEYS[1] the record; ARGV: owner, json, ttl ms, take ("1": the writer becomes the owner). */
static const char room_write_lua[] = "local cur = redis.call('GET', KEYS[1]) "
                                     "if not cur then return 0 end "
                                     "if ARGV[4] ~= '1' then "
                                     "  local ok, rec = pcall(cjson.decode, cur) "
                                     "  if not ok or rec['owner'] ~= ARGV[1] then return -1 end "
                                     "end "
                                     "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) "
                                     "return 1";

/* The reply of room_write_lua as room_sync_write() answers it (NULL: -EIO). */
static int room_write_status(const redisReply *rep)
{
    if (rep != NULL && rep->type == REDIS_REPLY_INTEGER)
        return rep->integer == 1 ? 1 : rep->integer == 0 ? 0 : -EPERM;
    return -EIO;
}

int room_sync_write(redisContext *c, const room_record_t *r, int64_t ttl_ms, bool take)
{
    char *json = room_record_json(r);
    if (json == NULL)
        return -ENOMEM;
    char key[64], ttl[24];
    room_key(r->code, key, sizeof key);
    snprintf(ttl, sizeof ttl, "%lld", (long long)(ttl_ms > 0 ? ttl_ms : 1));
    const char *argv[] = {"EVAL", room_write_lua, "1", key, r->owner, json, ttl, take ? "1" : "0"};
    size_t lens[8];
    for (int i = 0; i < 8; i++)
        lens[i] = strlen(argv[i]);
    redisReply *rep = redisCommandArgv(c, 8, argv, lens);
    free(json);
    int rc = room_write_status(rep);
    freeReplyObject(rep);
    return rc;
}

/* ---- by entity: the record in its code's own slot (room_set_entity) ----------------------- */

int room_cluster_create(rcluster_t *c, room_record_t *r, int64_t ttl_ms)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        room_code_draw(r->code);
        char *json = room_record_json(r);
        if (json == NULL)
            return -ENOMEM;
        char key[64], ttl[24];
        room_key(r->code, key, sizeof key);
        snprintf(ttl, sizeof ttl, "%lld", (long long)(ttl_ms > 0 ? ttl_ms : 1));
        const char *argv[] = {"SET", key, json, "NX", "PX", ttl};
        /* Not resent after a lost reply: a SET NX that did run would then look taken, and the
         * code drawn again would leave the first record to expire unused. */
        redisReply *rep = rcluster_command_argv(c, 0, key, strlen(key), 6, argv, NULL);
        free(json);
        if (rep == NULL || rep->type == REDIS_REPLY_ERROR) {
            freeReplyObject(rep);
            return -EIO;
        }
        bool taken = rep->type == REDIS_REPLY_NIL;
        freeReplyObject(rep);
        if (!taken)
            return 0;
    }
    r->code[0] = '\0';
    return -EEXIST;
}

rcluster_script_t *room_cluster_script(void)
{
    return rcluster_script_create(room_write_lua);
}

int room_cluster_write(rcluster_t *c, rcluster_script_t *script, const room_record_t *r,
                       int64_t ttl_ms, bool take)
{
    char *json = room_record_json(r);
    if (json == NULL)
        return -ENOMEM;
    char key[64], ttl[24];
    room_key(r->code, key, sizeof key);
    snprintf(ttl, sizeof ttl, "%lld", (long long)(ttl_ms > 0 ? ttl_ms : 1));
    const char *argv[] = {key, r->owner, json, ttl, take ? "1" : "0"};
    /* Resent after a lost reply: the write is the whole record, so running it twice leaves the
     * same record (an owner's write, or the adoption's take by the same owner). */
    redisReply *rep = rcluster_eval(c, script, RCLUSTER_RESEND, 1, 5, argv, NULL);
    free(json);
    int rc = room_write_status(rep);
    freeReplyObject(rep);
    return rc;
}
