/*
 * gate_replay -- GetReplay and ShareReplay (docs/protocol.md "Replays", docs/replays.md),
 * answered by the gateway alone from Redis, like GetRoom: no seat and no game server needed.
 *
 *   GetReplay{round_id, game}  the round's hand history (docs/hand-history.md: the game's
 *                              seen key names its stream entry; one script reads both), refused
 *                              NOT_IN_ROUND unless the asker was dealt into it; without its
 *                              game, each game the round's service offers (the registry's
 *                              entries of that service) is tried in turn;
 *   ShareReplay{round_id, game} the same read and check, then a share code: 8 digits drawn as a
 *                              private room's are (room_code_draw_digits), the record copied
 *                              under {croupier:replays}:code:<code> (SET NX, EX
 *                              --replay-code-ttl-s), a new draw on a collision; one code per
 *                              player and round while it lives ({croupier:replays}:by:<player>:
 *                              <round> names it), so asking again gives the same code;
 *   GetReplay{code}            that copy, for anyone logged in; REPLAY_CODE_UNKNOWN once it
 *                              expired (Redis's TTL) or if it never was.
 *
 * The replay itself is replay/replay.h's, built for the asker's player id by the game's view
 * policy; a blackjack replay dealt from a shoe it does not retire also gets the reveal of the
 * record that retired it, found by the shoe's commitment (replay_send). A share keeps the record
 * itself, so a code outlives neither more nor less than its TTL: the history stream may trim the
 * round meanwhile.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gate_int.h"
#include "keytag.h"
#include "money.h"
#include "replay.h"
#include "room.h"

#define REPLAY_CODE_PREFIX "{croupier:replays}:code:"
#define REPLAY_BY_PREFIX "{croupier:replays}:by:"
#define REPLAY_CODE_DRAWS 16
/* 8 digits: 10^8 codes, so that a week of shares (each lives --replay-code-ttl-s) is far from
 * filling the space, and a guess hits a live code rarely (docs/replays.md "Share codes"). */
#define REPLAY_CODE_LEN 8

/* KEYS[1] the sharer's key of the round, KEYS[2] a code drawn; ARGV: the copy, the TTL in s, the
 * code. The code already made for this player and round (with its ms to live), 0 when the drawn
 * code is taken (draw again), else the new code. The player's key dies 100 ms before its code. */
static const char replay_share_lua[] =
    "local have = redis.call('GET', KEYS[1]) "
    "if have then return {have, redis.call('PTTL', KEYS[1]) + 100} end "
    "if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'EX', ARGV[2]) then return 0 end "
    "local ms = tonumber(ARGV[2]) * 1000 "
    "redis.call('SET', KEYS[1], ARGV[3], 'PX', math.max(ms - 100, 1)) "
    "return {ARGV[3], ms}";
static rconn_script_t *replay_script_share;

/* KEYS[1] the seen key, KEYS[2] the stream: the record's data, 0 (trimmed), or nil (none). */
static const char replay_read_lua[] = "local id = redis.call('GET', KEYS[1]) "
                                      "if not id then return false end "
                                      "local e = redis.call('XRANGE', KEYS[2], id, id) "
                                      "if #e == 0 then return 0 end "
                                      "local f = e[1][2] "
                                      "for i = 1, #f, 2 do "
                                      "  if f[i] == 'data' then return f[i + 1] end "
                                      "end "
                                      "return 0";
static rconn_script_t *replay_script_read;

/* KEYS[1] the stream, KEYS[2..] seen keys (a shoe index key, a table record's): the data of
 * each record they name that the stream still holds, each once (an array, maybe empty). */
static const char replay_reveals_lua[] = "local out, got = {}, {} "
                                         "for i = 2, #KEYS do "
                                         "  local id = redis.call('GET', KEYS[i]) "
                                         "  if id and not got[id] then "
                                         "    got[id] = true "
                                         "    local e = redis.call('XRANGE', KEYS[1], id, id) "
                                         "    if #e > 0 then "
                                         "      local f = e[1][2] "
                                         "      for j = 1, #f, 2 do "
                                         "        if f[j] == 'data' then "
                                         "          out[#out + 1] = f[j + 1] "
                                         "        end "
                                         "      end "
                                         "    end "
                                         "  end "
                                         "end "
                                         "return out";
static rconn_script_t *replay_script_reveals;

/* The most shoes of one replay looked up in the shoe index (a round deals from one or two). */
#define REPLAY_SHOES_MAX 8

typedef enum { REPLAY_GET_ROUND, REPLAY_GET_CODE, REPLAY_SHARE } replay_op_kind_t;

/* The most games one service's servers may offer for a game-less GetReplay. */
#define REPLAY_GAME_CANDS 16

/* One request in flight: who asked, and what a share still needs. */
typedef struct {
    gate_t *g;
    uint64_t conn_id, session, rid, player;
    replay_op_kind_t kind;
    char round[MONEY_ID_MAX + 1];
    char game[40];
    char code[REPLAY_CODE_LEN + 1];
    char *copy; /* a share: the JSON stored under the code */
    int draws;
    /* GetReplay{round_id} without its game: the games the registry lists for the round's service,
     * tried in turn (replay_read_cb) until one holds the round. */
    char cands[REPLAY_GAME_CANDS][40];
    int ncands, icand;
    /* A blackjack replay built and waiting for the records that reveal its shoes
     * (replay_send). */
    Croupier__Replay *built;
    /* A share of a duplicate deal: its match's id, whose status is read first
     * (replay_dup_check). */
    char match[24];
} replay_op_t;

/* The asker's connection if it is still the one that asked, else NULL (op freed). */
static gate_conn_t *replay_conn(replay_op_t *op)
{
    gate_conn_t *c = gate_conn_get(op->g, op->conn_id);
    if (c == NULL || c->closing || c->session != op->session || op->g->destroying) {
        croupier__replay__free_unpacked(op->built, NULL);
        free(op->copy);
        free(op);
        return NULL;
    }
    return c;
}

static void replay_done(replay_op_t *op)
{
    croupier__replay__free_unpacked(op->built, NULL);
    free(op->copy);
    free(op);
}

/* 1..32 of [a-z0-9_-], as Join.game (docs/protocol.md "What valid means"). */
static bool replay_game_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 1 || n > 32)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
              s[i] == '-'))
            return false;
    return true;
}

static void replay_answer(gate_conn_t *c, replay_op_t *op, Croupier__Replay *r);
static void replay_reveals_cb(rconn_t *rc, redisReply *reply, void *arg);

/*
 * Sends the replay of rec built for the asker. A blackjack round dealt from a shoe it did not
 * retire first looks the shoe up (docs/fairness.md "Blackjack's shoes", docs/hand-history.md
 * "The shoe index"): one script reads, for every such shoe, the record its commitment's index key
 * names -- the round that retired it, at this table or at the table's adopter after a whole-table
 * move, or a table's shoe retirement record -- and, for records written before the index, the
 * table's own record (replay_table_record_id(): the round id with round number 0); their
 * reveals of the shoes the round dealt from are added (replay_add_shoe_reveals()). Returns true
 * when that read is in flight: op then belongs to replay_reveals_cb.
 */
static bool replay_send(gate_conn_t *c, replay_op_t *op, const json_t *rec)
{
    char why[200] = "";
    Croupier__Replay *r = replay_build(rec, op->player, why, sizeof why);
    if (r == NULL) {
        log_emit(LOG_WARN, "replay_unreadable", "{s:s,s:s}", "round", op->round, "why", why);
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__NO_SUCH_ROUND,
                        "the round's hand history cannot be replayed");
        return false;
    }
    char table[MONEY_ID_MAX + 1], ht[160];
    if (replay_wants_shoe_reveal(r) && replay_game_valid(r->game) &&
        keytag_history(ht, sizeof ht, r->game)[0] != '\0' && c->g->rc != NULL) {
        if (replay_script_reveals == NULL)
            replay_script_reveals = rconn_script_create(replay_reveals_lua);
        /* The stream, the table's record, and an index key per shoe not revealed. */
        char keys[2 + REPLAY_SHOES_MAX][360];
        const char *argv[2 + REPLAY_SHOES_MAX];
        int n = 0;
        money_key_stream(r->game, keys[n], sizeof keys[n]);
        n++;
        if (replay_table_record_id(r->round_id, table, sizeof table) == 0) {
            snprintf(keys[n], sizeof keys[n], "%s:seen:%s", ht, table);
            n++;
        }
        const char *want[REPLAY_SHOES_MAX];
        size_t nwant = replay_shoes_unrevealed(r, want, REPLAY_SHOES_MAX);
        for (size_t i = 0; i < nwant; i++, n++)
            snprintf(keys[n], sizeof keys[n], "%s:seen:shoe:%s", ht, want[i]);
        for (int i = 0; i < n; i++)
            argv[i] = keys[i];
        op->built = r;
        if (rconn_eval(c->g->rc, replay_script_reveals, replay_reveals_cb, op, n, n, argv, NULL) ==
            0)
            return true;
        op->built = NULL; /* not read: the replay as it is */
    }
    replay_answer(c, op, r);
    return false;
}

/* The records that may reveal a blackjack replay's shoes, read (replay_send): their reveals of
 * the shoes the round dealt from are added; anything else (none, trimmed, Redis away) leaves the
 * replay as built. */
static void replay_reveals_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    replay_op_t *op = arg;
    gate_conn_t *c = replay_conn(op);
    if (c == NULL)
        return;
    Croupier__Replay *r = op->built;
    op->built = NULL;
    for (size_t i = 0; reply != NULL && reply->type == REDIS_REPLY_ARRAY && i < reply->elements;
         i++) {
        const redisReply *e = reply->element[i];
        json_t *later = e->type == REDIS_REPLY_STRING ? json_loadb(e->str, e->len, 0, NULL) : NULL;
        if (json_is_object(later))
            replay_add_shoe_reveals(r, later);
        json_decref(later);
    }
    replay_answer(c, op, r);
    replay_done(op);
}

/* Sends r to the asker and frees it. */
static void replay_answer(gate_conn_t *c, replay_op_t *op, Croupier__Replay *r)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.has_request_id = true;
    sm.request_id = op->rid;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_REPLAY;
    sm.replay = r;
    if (gate_conn_send(c, &sm) != 0)
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__INTERNAL,
                        "the replay does not fit in a frame");
    croupier__replay__free_unpacked(r, NULL);
}

static void replay_share_set(replay_op_t *op);

static void replay_share_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    replay_op_t *op = arg;
    gate_conn_t *c = replay_conn(op);
    if (c == NULL)
        return;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "replay store unreachable");
    } else if (reply->type == REDIS_REPLY_INTEGER) {
        /* The code is taken: another draw. */
        if (++op->draws < REPLAY_CODE_DRAWS) {
            replay_share_set(op);
            return;
        }
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "no free share code; retry");
    } else if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
               reply->element[0]->type != REDIS_REPLY_STRING ||
               reply->element[1]->type != REDIS_REPLY_INTEGER ||
               !room_code_digits_valid(reply->element[0]->str, REPLAY_CODE_LEN)) {
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "replay store answered nonsense");
    } else {
        snprintf(op->code, sizeof op->code, "%s", reply->element[0]->str);
        Croupier__ReplayShared rs = CROUPIER__REPLAY_SHARED__INIT;
        rs.code = op->code;
        rs.round_id = op->round;
        rs.has_expires_unix_ms = true;
        rs.expires_unix_ms = (uint64_t)(gate_now_wall(op->g) + reply->element[1]->integer);
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        sm.has_request_id = true;
        sm.request_id = op->rid;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_REPLAY_SHARED;
        sm.replay_shared = &rs;
        gate_conn_send(c, &sm);
        log_emit(LOG_INFO, "replay_shared", "{s:I,s:s,s:s}", "player", (json_int_t)op->player,
                 "round", op->round, "code", op->code);
    }
    replay_done(op);
}

/* Draws a code and stores the copy under it, if no other has it and the player has no code of
 * the round yet. */
static void replay_share_set(replay_op_t *op)
{
    if (replay_script_share == NULL)
        replay_script_share = rconn_script_create(replay_share_lua);
    room_code_draw_digits(op->code, REPLAY_CODE_LEN);
    char by[64 + MONEY_ID_MAX], key[64], ttl[24];
    snprintf(by, sizeof by, REPLAY_BY_PREFIX "%" PRIu64 ":%s", op->player, op->round);
    snprintf(key, sizeof key, REPLAY_CODE_PREFIX "%s", op->code);
    snprintf(ttl, sizeof ttl, "%d", op->g->cfg.replay_code_ttl_s);
    const char *argv[] = {by, key, op->copy, ttl, op->code};
    if (op->g->rc == NULL ||
        rconn_eval(op->g->rc, replay_script_share, replay_share_cb, op, 2, 5, argv, NULL) != 0) {
        gate_conn_t *c = replay_conn(op);
        if (c == NULL)
            return;
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "replay store unreachable");
        replay_done(op);
    }
}

static void replay_read(gate_conn_t *c, replay_op_t *op);
/*
 * A duplicate deal of a match hall (its record's match has a seed: every table of the Swiss
 * round deals the same cards, docs/rules/match-halls.md "Duplicate"): true, with the match's id
 * in id. Such a deal may still be in play at another table of its match, and a replay shows
 * every play of it, so it is shared only once the match is over (docs/replays.md "Share
 * codes").
 */
static bool replay_dup_match(const json_t *rec, char *id, size_t len)
{
    const json_t *m = json_object_get(rec, "match");
    const json_t *mid = json_object_get(m, "id");
    if (!json_is_object(m) || json_object_get(m, "seed") == NULL || !json_is_integer(mid) ||
        json_integer_value(mid) <= 0)
        return false;
    snprintf(id, len, "%" JSON_INTEGER_FORMAT, json_integer_value(mid));
    return true;
}

/* The match's status read for a share of one of its duplicate deals (replay_dup_check). */
static void replay_dup_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    replay_op_t *op = arg;
    gate_conn_t *c = replay_conn(op);
    if (c == NULL)
        return;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "tournament store unreachable");
    } else if (reply->type == REDIS_REPLY_STRING &&
               (strcmp(reply->str, "finished") == 0 || strcmp(reply->str, "cancelled") == 0)) {
        replay_share_set(op); /* the match is over: no table plays the deal any more */
        return;
    } else if (reply->type == REDIS_REPLY_NIL) {
        /* The match's state is gone (expired long after its end): nothing plays it. */
        replay_share_set(op);
        return;
    } else {
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, false,
                                  "a duplicate deal may still be in play at another table of its "
                                  "match: share it once the match is over");
    }
    replay_done(op);
}

/* Reads the status of the match whose duplicate deal op shares. */
static void replay_dup_check(gate_conn_t *c, replay_op_t *op)
{
    char base[96], key[128];
    snprintf(key, sizeof key, "%s:meta", keytag_tour(base, sizeof base, op->match));
    const char *argv[] = {"HGET", key, "status"};
    if (c->g->rc == NULL || base[0] == '\0' ||
        rconn_command_argv(c->g->rc, replay_dup_cb, op, 3, argv, NULL) != 0) {
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "tournament store unreachable");
        replay_done(op);
    }
}


/* A round's record read (GetReplay{round_id}, ShareReplay): checked, then answered or shared. */
static void replay_read_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    replay_op_t *op = arg;
    gate_conn_t *c = replay_conn(op);
    if (c == NULL)
        return;
    json_t *rec = NULL;
    if (reply != NULL && reply->type == REDIS_REPLY_NIL && op->icand + 1 < op->ncands) {
        /* Not a round of that game: the next game of the round's service. */
        op->icand++;
        snprintf(op->game, sizeof op->game, "%s", op->cands[op->icand]);
        replay_read(c, op);
        return;
    }
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "replay store unreachable");
    } else if (reply->type != REDIS_REPLY_STRING) {
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__NO_SUCH_ROUND,
                        reply->type == REDIS_REPLY_INTEGER ? "the round's hand history is no longer kept"
                        : op->ncands > 0 ? "no hand history for that round in any game its service "
                                           "offers now"
                                         : "no hand history for that round of that game");
    } else if ((rec = json_loadb(reply->str, reply->len, 0, NULL)) == NULL ||
               !replay_is_round(rec)) {
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__NO_SUCH_ROUND,
                        "that id names no round (a table record, or unreadable)");
    } else if (replay_seat_of(rec, op->player) < 0 &&
               !(op->kind == REPLAY_GET_ROUND && gate_watch_saw(c, op->round))) {
        /* A spectator of the round's table gets what the policy shows anyone after the round
         * (docs/spectators.md "After the round"); anyone else asks with a share code. */
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__NOT_IN_ROUND,
                        "you were not dealt into that round: ask with a share code");
    } else if (replay_seat_of(rec, op->player) < 0 && c->g->cfg.watch_replay_delay_s > 0 &&
               gate_now_wall(c->g) < json_integer_value(json_object_get(rec, "ts")) +
                                         (json_int_t)c->g->cfg.watch_replay_delay_s * 1000) {
        /* A spectator's delayed full view (--watch-replay-delay-s, docs/spectators.md). */
        char why[160];
        snprintf(why, sizeof why,
                 "a spectator's view of a round opens %d s after it began: ask again later",
                 c->g->cfg.watch_replay_delay_s);
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, false, why);
    } else if (op->kind == REPLAY_GET_ROUND) {
        if (replay_send(c, op, rec)) {
            json_decref(rec);
            return; /* the shoes' reveals are read first */
        }
    } else {
        char by[24];
        snprintf(by, sizeof by, "%" PRIu64, op->player);
        json_t *copy =
            json_pack("{s:i,s:s,s:s,s:s,s:I,s:O}", "v", 1, "game", op->game, "round", op->round,
                      "by", by, "created_ms", (json_int_t)gate_now_wall(op->g), "record", rec);
        op->copy = copy ? json_dumps(copy, JSON_COMPACT) : NULL;
        json_decref(copy);
        if (op->copy == NULL) {
            json_decref(rec);
            gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__INTERNAL, "out of memory");
            replay_done(op);
            return;
        }
        if (replay_dup_match(rec, op->match, sizeof op->match)) {
            json_decref(rec);
            replay_dup_check(c, op);
            return;
        }
        json_decref(rec);
        replay_share_set(op);
        return;
    }
    json_decref(rec);
    replay_done(op);
}

/* A share code's copy read (GetReplay{code}). */
static void replay_code_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    replay_op_t *op = arg;
    gate_conn_t *c = replay_conn(op);
    if (c == NULL)
        return;
    json_t *copy = NULL;
    const json_t *rec;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "replay store unreachable");
    } else if (reply->type != REDIS_REPLY_STRING) {
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__REPLAY_CODE_UNKNOWN,
                        "no replay has that code (never made, or expired)");
    } else if ((copy = json_loadb(reply->str, reply->len, 0, NULL)) == NULL ||
               !replay_is_round(rec = json_object_get(copy, "record"))) {
        gate_conn_error(c, op->rid, CROUPIER__ERROR_CODE__REPLAY_CODE_UNKNOWN,
                        "the code's replay is unreadable");
    } else {
        snprintf(op->round, sizeof op->round, "%s",
                 json_string_value(json_object_get(rec, "round")));
        if (replay_send(c, op, rec)) {
            json_decref(copy);
            return; /* the shoes' reveals are read first */
        }
    }
    json_decref(copy);
    replay_done(op);
}

/*
 * The games the servers of service offer, as the registry lists them now (an entry without games
 * offers its engine's name): a GetReplay{round_id} without its game tries each. At most max;
 * returns how many.
 */
static int replay_games_of(gate_t *g, const char *service, char (*cands)[40], int max)
{
    int n = 0;
    size_t size = g->view != NULL ? registry_view_size(g->view) : 0;
    for (size_t i = 0; i < size; i++) {
        const registry_entry_t *e = registry_view_at(g->view, i);
        if (e == NULL || strcmp(e->service, service) != 0)
            continue;
        for (const char *p = e->games[0] != '\0' ? e->games : e->engine; *p != '\0';) {
            size_t len = strcspn(p, ",");
            char name[40];
            if (len > 0 && len < sizeof name) {
                memcpy(name, p, len);
                name[len] = '\0';
                bool seen = false;
                for (int k = 0; k < n && !seen; k++)
                    seen = strcmp(cands[k], name) == 0;
                if (!seen && n < max && replay_game_valid(name))
                    memcpy(cands[n++], name, len + 1);
            }
            p += len;
            if (*p == ',')
                p++;
        }
    }
    return n;
}

/* Checks what every replay request needs (game NULL: a GetReplay that does not name it); 0, or
 * the connection was answered. */
static int replay_check(gate_conn_t *c, uint64_t rid, const char *round, const char *game)
{
    money_round_id_t parsed;
    if (round == NULL || strlen(round) > MONEY_ID_MAX ||
        money_round_id_parse(round, &parsed) != 0) {
        gate_conn_error(c, rid, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "round_id: a round id is service:slot:epoch:desk:seq");
        return -1;
    }
    if (game != NULL && !replay_game_valid(game)) {
        gate_conn_error(c, rid, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "game: the round's game (1..32 of a-z, 0-9, '_' and '-') is needed");
        return -1;
    }
    return 0;
}

/* Reads a round's record for op (the script over the game's seen key and stream). */
static void replay_read(gate_conn_t *c, replay_op_t *op)
{
    if (replay_script_read == NULL)
        replay_script_read = rconn_script_create(replay_read_lua);
    char seen[320], stream[128];
    char ht[160];
    snprintf(seen, sizeof seen, "%s:seen:%s", keytag_history(ht, sizeof ht, op->game), op->round);
    money_key_stream(op->game, stream, sizeof stream);
    const char *argv[] = {seen, stream};
    if (c->g->rc == NULL ||
        rconn_eval(c->g->rc, replay_script_read, replay_read_cb, op, 2, 2, argv, NULL) != 0) {
        gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                  "replay store unreachable");
        replay_done(op);
    }
}

static bool replay_logged_in(gate_conn_t *c, uint64_t rid)
{
    if (c->player != 0 && !c->login_busy)
        return true;
    metrics_add(c->g->m_reject[REJ_UNAUTH], 1);
    gate_conn_error(c, rid, CROUPIER__ERROR_CODE__UNAUTHENTICATED,
                    c->player == 0 ? "log in first" : "login not complete");
    return false;
}

static replay_op_t *replay_op(gate_conn_t *c, uint64_t rid, replay_op_kind_t kind)
{
    replay_op_t *op = xcalloc(1, sizeof *op);
    *op = (replay_op_t){.g = c->g,
                        .conn_id = c->id,
                        .session = c->session,
                        .rid = rid,
                        .player = c->player,
                        .kind = kind};
    return op;
}

void gate_client_get_replay(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    const Croupier__GetReplay *q = m->get_replay;
    if (!replay_logged_in(c, m->request_id))
        return;
    if ((q->code != NULL) == (q->round_id != NULL)) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "GetReplay: a round_id (with its game, or without) or a code, one of them");
        return;
    }
    if (q->code != NULL) {
        if (!room_code_digits_valid(q->code, REPLAY_CODE_LEN)) {
            gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__BAD_REQUEST,
                            "code: a share code is 8 digits");
            return;
        }
        replay_op_t *op = replay_op(c, m->request_id, REPLAY_GET_CODE);
        snprintf(op->code, sizeof op->code, "%s", q->code);
        char key[64];
        snprintf(key, sizeof key, REPLAY_CODE_PREFIX "%s", q->code);
        const char *argv[] = {"GET", key};
        if (c->g->rc == NULL ||
            rconn_command_argv(c->g->rc, replay_code_cb, op, 2, argv, NULL) != 0) {
            gate_conn_error_retriable(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE, true,
                                      "replay store unreachable");
            replay_done(op);
        }
        return;
    }
    bool no_game = q->game == NULL || q->game[0] == '\0';
    if (replay_check(c, m->request_id, q->round_id, no_game ? NULL : q->game) != 0)
        return;
    replay_op_t *op = replay_op(c, m->request_id, REPLAY_GET_ROUND);
    snprintf(op->round, sizeof op->round, "%s", q->round_id);
    if (no_game) {
        /* The round id names its service, not its game (one engine serves several): each game
         * the service's servers offer now is tried (docs/replays.md "Asking for a replay"). */
        money_round_id_t id;
        money_round_id_parse(q->round_id, &id); /* checked above */
        op->ncands = replay_games_of(c->g, id.service, op->cands, REPLAY_GAME_CANDS);
        if (op->ncands == 0) {
            char why[160];
            snprintf(why, sizeof why,
                     "game: no server of service %s is listed now to say its games: name the "
                     "round's game",
                     id.service);
            gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__BAD_REQUEST, why);
            replay_done(op);
            return;
        }
        snprintf(op->game, sizeof op->game, "%s", op->cands[0]);
    } else {
        snprintf(op->game, sizeof op->game, "%s", q->game);
    }
    replay_read(c, op);
}

void gate_client_share_replay(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    const Croupier__ShareReplay *q = m->share_replay;
    if (!replay_logged_in(c, m->request_id))
        return;
    if (replay_check(c, m->request_id, q->round_id, q->game) != 0)
        return;
    replay_op_t *op = replay_op(c, m->request_id, REPLAY_SHARE);
    snprintf(op->round, sizeof op->round, "%s", q->round_id);
    snprintf(op->game, sizeof op->game, "%s", q->game);
    replay_read(c, op);
}
