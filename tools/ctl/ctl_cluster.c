/*
 * ctl_cluster.c -- croupier-ctl's commands on the cluster's servers and seats (docs/ops.md,
 * its table of commands and "drain: the admin endpoint and its token"): servers (the registry
 * and each server's /metrics), tables SERVER (its held records, settle records and the
 * gateways' seat records), where PLAYER, drain SERVER (POST /admin/drain with an operator
 * token) and room CODE (lease/room.h's record and its deals). Part of the tool: ctl.h is what
 * its files share.
 *
 * Each command reads Redis through ctl.c's connection R and helpers (ctl_cmd, ctl_get,
 * ctl_scan, ctl_entry, ctl_held), builds one JSON document, prints it (--json) or a table
 * (ctl_table), and returns the exit status: 0, 1 not found / refused / unreachable.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/http.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "ctl.h"
#include "gate_seat.h"
#include "money.h"
#include "registry.h"
#include "room.h"
#include "token.h"

#define CTL_SEAT_PREFIX "{croupier:seat}:"

/* ---- servers ------------------------------------------------------------------------------ */

/*
 * "no server X": the error, with the registered ids X could have meant -- those of the service X
 * names ("holdem" -> "holdem:2, holdem:5") or that contain it -- so a near miss needs no second
 * command. Returns 1.
 */
static int ctl_no_server(const char *server)
{
    char near[512] = "";
    size_t len = 0, n = 0, sl = strlen(server);
    redisReply *m = CTL_CMD("SMEMBERS", REGISTRY_MEMBERS_KEY);
    for (size_t i = 0; m != NULL && m->type == REDIS_REPLY_ARRAY && i < m->elements; i++) {
        const char *id = m->element[i]->str;
        bool of_service = strncmp(id, server, sl) == 0 && id[sl] == ':';
        if (!of_service && strstr(id, server) == NULL)
            continue;
        if (n++ < 8 && len + strlen(id) + 3 < sizeof near)
            len += (size_t)snprintf(near + len, sizeof near - len, "%s%s", len ? ", " : "", id);
    }
    if (m != NULL)
        freeReplyObject(m);
    if (n == 0)
        return ctl_fail(1, "no server %s in the registry (croupier-ctl servers lists them)",
                        server);
    return ctl_fail(1, "no server %s in the registry; did you mean %s%s?", server, near,
                    n > 8 ? ", ..." : "");
}

int ctl_servers(void)
{
    redisReply *m = CTL_CMD("SMEMBERS", REGISTRY_MEMBERS_KEY);
    if (m == NULL)
        return 1;
    json_t *ids = json_array();
    for (size_t i = 0; m->type == REDIS_REPLY_ARRAY && i < m->elements; i++)
        json_array_append_new(ids, json_stringn(m->element[i]->str, m->element[i]->len));
    freeReplyObject(m);
    /* sorted by id, for a stable table */
    size_t n = json_array_size(ids);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strcmp(json_string_value(json_array_get(ids, b - 1)),
                                           json_string_value(json_array_get(ids, b))) > 0;
             b--) {
            json_t *t = json_incref(json_array_get(ids, b));
            json_array_set(ids, b, json_array_get(ids, b - 1));
            json_array_set_new(ids, b - 1, t);
        }
    json_t *out = json_array();
    size_t i;
    json_t *idv;
    int rc = 0;
    json_array_foreach(ids, i, idv)
    {
        registry_entry_t e;
        int r = ctl_entry(json_string_value(idv), &e);
        if (r < 0) {
            rc = 1;
            break;
        }
        if (r > 0)
            continue; /* member whose entry expired */
        json_t *s = json_pack(
            "{s:s,s:s,s:i,s:s,s:o,s:s?,s:s,s:n,s:b,s:n,s:n,s:I,s:I,s:s,s:s?}", "id", e.id,
            "service", e.service, "slot", e.slot, "engine", e.engine, "games",
            ctl_games_array(e.games), "version", e.version[0] ? e.version : NULL, "state",
            registry_state_name(e.state), "ready", "draining", e.state == REGISTRY_DRAINING,
            "desks", "human_desks", "players", (json_int_t)e.load, "epoch", (json_int_t)e.epoch,
            "address", e.address, "admin", e.admin[0] ? e.admin : NULL);
        if (e.admin[0] != '\0') {
            char *body = NULL;
            int st = ctl_http(e.admin, EVHTTP_REQ_GET, "/metrics", NULL, &body);
            double v;
            if (st == 200 && body != NULL) {
                if (ctl_metric(body, "game_desks", &v))
                    json_object_set_new(s, "desks", json_integer((json_int_t)v));
                if (ctl_metric(body, "game_human_desks", &v))
                    json_object_set_new(s, "human_desks", json_integer((json_int_t)v));
                if (ctl_metric(body, "game_ready", &v))
                    json_object_set_new(s, "ready", json_boolean(v == 1));
                if (ctl_metric(body, "game_draining", &v))
                    json_object_set_new(s, "draining", json_boolean(v == 1));
            } else {
                char why[64];
                snprintf(why, sizeof why, st ? "GET /metrics answered %d" : "no answer", st);
                json_object_set_new(s, "admin_error", json_string(why));
            }
            free(body);
        }
        json_array_append_new(out, s);
    }
    json_decref(ids);
    if (rc == 0) {
        json_t *doc = json_pack("{s:o}", "servers", out);
        if (O.json) {
            ctl_print_json(doc);
        } else {
            static const char *const cols[] = {"id",      "engine", "games", "version",
                                               "state",   "ready",  "desks", "human_desks",
                                               "players", "epoch",  "admin", NULL};
            static const char *const heads[] = {"SERVER",  "ENGINE", "GAMES", "VERSION",
                                                "STATE",   "READY",  "DESKS", "HUMAN_DESKS",
                                                "PLAYERS", "EPOCH",  "ADMIN"};
            ctl_table(out, cols, heads);
            if (json_array_size(out) == 0)
                printf("(no server registered)\n");
        }
        json_decref(doc);
    } else {
        json_decref(out);
    }
    return rc;
}

/* ---- tables / where ---------------------------------------------------------------------- */

/* Every seat record on R's node, as player -> parsed record (a JSON object per player). */
static json_t *ctl_seats_here(void)
{
    json_t *keys = ctl_scan(CTL_SEAT_PREFIX "*", NULL);
    if (keys == NULL)
        return NULL;
    json_t *out = json_object();
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        char *rec;
        bool found;
        if (ctl_get(json_string_value(k), &rec, &found) != 0) {
            json_decref(out);
            out = NULL;
            break;
        }
        gate_seat_t s;
        if (found && gate_seat_parse(rec, strlen(rec), &s) == 0)
            json_object_set_new(out, json_string_value(k) + strlen(CTL_SEAT_PREFIX),
                                json_pack("{s:s,s:s,s:I,s:i,s:I,s:s,s:I}", "server", s.server_id,
                                          "address", s.address, "desk", (json_int_t)s.desk,
                                          "engine", s.engine, "stake", (json_int_t)s.stake, "game",
                                          s.game, "epoch", (json_int_t)s.epoch));
        free(rec);
    }
    json_decref(keys);
    return out;
}

/* Every seat record, from the seats' node (their own slot on a Redis Cluster). */
static json_t *ctl_seats(void)
{
    redisContext *home = R, *seats = ctl_redis_for(CTL_SEAT_PREFIX); /* one slot: one node */
    if (seats == NULL)
        return NULL;
    R = seats;
    json_t *out = ctl_seats_here();
    R = home;
    ctl_redis_done(seats);
    return out;
}

/* The seat of player in a round-start record's "seats", or -1. */
int ctl_seat_of(json_t *round, const char *player)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(round, "seats"), i, s)
    {
        const char *p = json_string_value(json_object_get(s, "player"));
        if (p != NULL && strcmp(p, player) == 0)
            return (int)json_integer_value(json_object_get(s, "seat"));
    }
    return -1;
}

/*
 * With the money by entity a round's settle record is in its server epoch's slot,
 * {s:<service>:<slot>:<epoch>}:round:<id> (money/mcluster.h), the epoch named by the round id's
 * first three fields: read on that slot's master.
 */
static bool ctl_round_settled_entity(const char *round_id)
{
    char svc[128], slot[24], epoch[24], key[320];
    if (sscanf(round_id, "%127[^:]:%23[^:]:%23[^:]:", svc, slot, epoch) != 3)
        return false;
    snprintf(key, sizeof key, "{s:%s:%s:%s}:round:%s", svc, slot, epoch, round_id);
    redisContext *c = ctl_redis_for(key);
    if (c == NULL)
        return false;
    redisReply *r = redisCommand(c, "EXISTS %s", key);
    ctl_redis_done(c);
    bool yes = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    return yes;
}

static bool ctl_round_settled(const char *round_id)
{
    if (money_entity())
        return ctl_round_settled_entity(round_id);
    char key[256];
    if (money_key_round(round_id, key, sizeof key) != 0)
        return false;
    redisReply *r = CTL_CMD("EXISTS", key);
    bool yes = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    if (r != NULL)
        freeReplyObject(r);
    return yes;
}

int ctl_tables(const char *server)
{
    registry_entry_t e;
    int r = ctl_entry(server, &e);
    if (r != 0)
        return r < 0 ? 1 : ctl_no_server(server);
    json_t *held = ctl_held(e.service, e.slot, e.epoch);
    json_t *seats = held ? ctl_seats() : NULL;
    if (held == NULL || seats == NULL) {
        json_decref(held);
        return 1;
    }
    json_t *tables = json_object(); /* desk (decimal text) -> table */
    const char *f;
    json_t *v;
    json_object_foreach(held, f, v)
    {
        if (strncmp(f, "r:", 2) != 0)
            continue;
        uint64_t desk = strtoull(f + 2, NULL, 16);
        json_t *round = json_loads(json_string_value(v), 0, NULL);
        if (round == NULL)
            continue;
        char dk[32];
        snprintf(dk, sizeof dk, "%" PRIu64, desk);
        const char *rid = json_string_value(json_object_get(round, "round"));
        json_t *players = json_array();
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(round, "seats"), i, s) json_array_append_new(
            players, json_pack("{s:O,s:O}", "seat", json_object_get(s, "seat"), "player",
                               json_object_get(s, "player")));
        json_object_set_new(
            tables, dk,
            json_pack("{s:I,s:O?,s:O?,s:s?,s:s,s:o,s:[]}", "desk", (json_int_t)desk, "game",
                      json_object_get(round, "game"), "stake", json_object_get(round, "stake"),
                      "round", rid, "round_state",
                      rid != NULL && ctl_round_settled(rid) ? "settled" : "in progress", "seats",
                      players, "gateway_players"));
        json_decref(round);
    }
    const char *player;
    json_object_foreach(seats, player, v)
    {
        if (strcmp(json_string_value(json_object_get(v, "server")), e.id) != 0)
            continue;
        char dk[32];
        snprintf(dk, sizeof dk, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(v, "desk")));
        json_t *t = json_object_get(tables, dk);
        if (t == NULL) { /* seated but no round recorded yet */
            t = json_pack("{s:I,s:O,s:O,s:n,s:s,s:[],s:[]}", "desk",
                          (json_int_t)json_integer_value(json_object_get(v, "desk")), "game",
                          json_object_get(v, "game"), "stake", json_object_get(v, "stake"), "round",
                          "round_state", "no round yet", "seats", "gateway_players");
            json_object_set_new(tables, dk, t);
        }
        json_array_append_new(json_object_get(t, "gateway_players"), json_string(player));
    }
    json_t *arr = json_array();
    json_object_foreach(tables, f, v) json_array_append(arr, v);
    json_t *doc =
        json_pack("{s:s,s:s,s:I,s:o}", "server", e.id, "state", registry_state_name(e.state),
                  "epoch", (json_int_t)e.epoch, "tables", arr);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        printf("server %s (%s, epoch %" PRId64 "): %zu tables\n", e.id,
               registry_state_name(e.state), e.epoch, json_array_size(arr));
        size_t i;
        json_t *t;
        json_array_foreach(arr, i, t)
        {
            /* One narrow column of seats ("0=p1 2=p7"), and how many of those players the
             * gateways' seat records put here (the list itself is in --json). */
            char seats[400] = "";
            size_t len = 0, j;
            json_t *s;
            json_array_foreach(json_object_get(t, "seats"), j, s)
            {
                int w = snprintf(seats + len, sizeof seats - len, "%s%" JSON_INTEGER_FORMAT "=%s",
                                 len ? " " : "", json_integer_value(json_object_get(s, "seat")),
                                 json_string_value(json_object_get(s, "player")));
                if (w < 0 || (size_t)w >= sizeof seats - len) {
                    snprintf(seats + sizeof seats - 5, 5, "...");
                    break;
                }
                len += (size_t)w;
            }
            char via[32];
            snprintf(via, sizeof via, "%zu/%zu",
                     json_array_size(json_object_get(t, "gateway_players")),
                     json_array_size(json_object_get(t, "seats")));
            json_object_set_new(t, "seat_list", json_string(seats));
            json_object_set_new(t, "via", json_string(via));
        }
        static const char *const cols[] = {"desk",        "game",      "stake", "round",
                                           "round_state", "seat_list", "via",   NULL};
        static const char *const heads[] = {"DESK",  "GAME",  "STAKE",       "ROUND",
                                            "STATE", "SEATS", "VIA_GATEWAYS"};
        ctl_table(arr, cols, heads);
    }
    json_decref(doc);
    json_decref(tables);
    json_decref(held);
    json_decref(seats);
    return 0;
}

int ctl_where(const char *player)
{
    if (!money_valid_player(player))
        return ctl_fail(2, "'%s' is not a player id (1..64 of [A-Za-z0-9_.-])", player);
    char key[128], *rec;
    bool found;
    snprintf(key, sizeof key, CTL_SEAT_PREFIX "%s", player);
    redisContext *home = R, *seats = ctl_redis_for(key); /* the seats' slot on a cluster */
    if (seats == NULL)
        return 1;
    R = seats;
    int grc = ctl_get(key, &rec, &found);
    R = home;
    ctl_redis_done(seats);
    if (grc != 0)
        return 1;
    if (!found)
        return ctl_fail(1, "player %s has no seat (not at a table)", player);
    gate_seat_t s;
    int prc = gate_seat_parse(rec, strlen(rec), &s);
    free(rec);
    if (prc != 0)
        return ctl_fail(1, "the seat record %s does not parse", key);
    registry_entry_t e;
    int r = ctl_entry(s.server_id, &e);
    if (r < 0)
        return 1;
    const char *state = r > 0                                ? "gone"
                        : e.epoch != s.epoch && s.epoch != 0 ? "replaced"
                                                             : registry_state_name(e.state);
    json_t *seat = json_null();
    json_t *round = json_null();
    char service[MONEY_NAME_MAX + 1];
    const char *colon = strrchr(s.server_id, ':');
    if (colon != NULL && (size_t)(colon - s.server_id) < sizeof service && s.epoch > 0) {
        snprintf(service, sizeof service, "%.*s", (int)(colon - s.server_id), s.server_id);
        json_t *held = ctl_held(service, atoi(colon + 1), s.epoch);
        char field[32];
        snprintf(field, sizeof field, "r:%" PRIx64, s.desk);
        json_t *rv = held ? json_object_get(held, field) : NULL;
        json_t *rs = rv ? json_loads(json_string_value(rv), 0, NULL) : NULL;
        if (rs != NULL && ctl_seat_of(rs, player) >= 0) {
            seat = json_integer(ctl_seat_of(rs, player));
            round = json_incref(json_object_get(rs, "round"));
        }
        json_decref(rs);
        json_decref(held);
    }
    json_t *doc = json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:I,s:o,s:o,s:I}", "player", player, "server",
                            s.server_id, "server_state", state, "address", s.address, "table",
                            (json_int_t)s.desk, "game", s.game, "stake", (json_int_t)s.stake,
                            "seat", seat, "round", round, "epoch", (json_int_t)s.epoch);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        json_t *arr = json_pack("[O]", doc);
        static const char *const cols[] = {"player", "server", "server_state", "table", "seat",
                                           "game",   "stake",  "round",        NULL};
        static const char *const heads[] = {"PLAYER", "SERVER", "SERVER_STATE", "TABLE",
                                            "SEAT",   "GAME",   "STAKE",        "LAST_ROUND"};
        ctl_table(arr, cols, heads);
        json_decref(arr);
    }
    json_decref(doc);
    return 0;
}

/* ---- drain -------------------------------------------------------------------------------- */

int ctl_drain(const char *server)
{
    if (O.admin_secret == NULL)
        return ctl_fail(2, "drain needs --admin-secret-file (the servers' admin secret)");
    token_secret_t secret;
    int rc = token_secret_load(O.admin_secret, &secret);
    if (rc != 0)
        return ctl_fail(2, "--admin-secret-file %s: %s", O.admin_secret,
                        rc == -EINVAL ? "shorter than 16 bytes" : strerror(-rc));
    registry_entry_t e;
    int r = ctl_entry(server, &e);
    if (r != 0)
        return r < 0 ? 1 : ctl_no_server(server);
    if (e.admin[0] == '\0')
        return ctl_fail(1, "the registry entry of %s has no admin endpoint", server);
    char token[TOKEN_MAX_LEN + 1];
    if (token_mint(&secret, (uint64_t)O.operator_id, (int64_t)time(NULL) + 60, token,
                   sizeof token) < 0)
        return ctl_fail(1, "cannot mint the operator token");
    char *body = NULL;
    int st = ctl_http(e.admin, EVHTTP_REQ_POST, "/admin/drain", token, &body);
    if (st != 200) {
        int code = ctl_fail(1, "%s (%s) refused the drain: %s%s", server, e.admin,
                            st == 0     ? "no answer"
                            : st == 401 ? "401, no token"
                            : st == 403 ? "403, token refused (is it the servers' admin secret?)"
                            : st == 404 ? "404, the server has no /admin/drain "
                                          "(started without --admin-secret-file)"
                                        : "unexpected status",
                            "");
        free(body);
        return code;
    }
    json_t *status = body ? json_loads(body, 0, NULL) : NULL;
    free(body);
    if (status == NULL)
        return ctl_fail(1, "%s answered the drain with something that is not JSON", server);
    json_t *doc = json_pack("{s:s,s:s,s:o}", "server", server, "admin", e.admin, "status", status);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char b1[32], b2[32], b3[32];
        printf("%s: draining=%s human_desks=%s elapsed=%ss (it exits once its tables are done; "
               "the drain cannot be undone)\n",
               server, ctl_cell(json_object_get(status, "draining"), b1, sizeof b1),
               ctl_cell(json_object_get(status, "human_desks"), b2, sizeof b2),
               ctl_cell(json_object_get(status, "elapsedSeconds"), b3, sizeof b3));
    }
    json_decref(doc);
    return 0;
}

/* ---- room --------------------------------------------------------------------------------- */

static const char *ctl_room_state(int state)
{
    switch (state) {
    case CROUPIER__ROOM_STATE__ROOM_WAITING:
        return "waiting";
    case CROUPIER__ROOM_STATE__ROOM_PLAYING:
        return "playing";
    case CROUPIER__ROOM_STATE__ROOM_FINISHED:
        return "finished";
    case CROUPIER__ROOM_STATE__ROOM_DISBANDED:
        return "disbanded";
    default:
        return "unknown";
    }
}

/*
 * room CODE: a private room's record (lease/room.h): its rules, state, where it is played (and
 * whether that server is still ready, draining, replaced or gone), the scoreboard, and each
 * deal's round id with whether it has its settle record.
 */
int ctl_room(const char *code)
{
    if (!room_code_valid(code))
        return ctl_fail(2, "'%s' is not a room code (6 digits)", code);
    char key[64], *text;
    bool found;
    room_key(code, key, sizeof key);
    if (room_entity()) { /* by entity: in the code's own slot (lease/room.h) */
        redisContext *c = ctl_redis_for(key);
        if (c == NULL)
            return 1;
        redisReply *rep = redisCommand(c, "GET %s", key);
        ctl_redis_done(c);
        if (rep == NULL || rep->type == REDIS_REPLY_ERROR) {
            freeReplyObject(rep);
            return ctl_fail(1, "cannot read the room record %s", key);
        }
        found = rep->type == REDIS_REPLY_STRING;
        text = found ? strndup(rep->str, rep->len) : NULL;
        freeReplyObject(rep);
    } else if (ctl_get(key, &text, &found) != 0) {
        return 1;
    }
    if (!found)
        return ctl_fail(1, "no room %s (never created, or its record expired)", code);
    room_record_t *r = calloc(1, sizeof *r);
    json_t *rec = json_loads(text, 0, NULL);
    if (r == NULL || rec == NULL || room_record_parse(text, strlen(text), r) != 0) {
        free(r);
        free(text);
        json_decref(rec);
        return ctl_fail(1, "the room record %s does not parse", key);
    }
    free(text);
    registry_entry_t e;
    int er = r->server[0] != '\0' ? ctl_entry(r->server, &e) : 1;
    if (er < 0) {
        free(r);
        json_decref(rec);
        return 1;
    }
    const char *sstate = er > 0                          ? "gone"
                         : (uint64_t)e.epoch != r->epoch ? "replaced"
                                                         : registry_state_name(e.state);
    json_t *deals = json_array();
    for (int i = 0; i < r->played && i < ROOM_MAX_DEALS && r->rounds[i][0] != '\0'; i++)
        json_array_append_new(deals,
                              json_pack("{s:i,s:s,s:b}", "deal", i + 1, "round", r->rounds[i],
                                        "settled", ctl_round_settled(r->rounds[i])));
    json_t *doc =
        json_pack("{s:s,s:s,s:s,s:s,s:o}", "code", r->code, "key", key, "state",
                  ctl_room_state(r->state), "server_state", sstate, "deals_played", deals);
    json_object_set_new(doc, "record", rec);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char opts[256];
        room_options_text(r, opts, sizeof opts);
        printf("room %s: %s, %s (engine %d), stake %" PRId64
               ", %d seats, deal %d of %d, host %" PRIu64 "%s\n",
               r->code, ctl_room_state(r->state), r->game, r->engine, r->stake, r->seats, r->played,
               r->deals, r->host, r->bot_fill ? ", bot fill" : "");
        if (opts[0] != '\0')
            printf("  rules: %s\n", opts);
        if (r->detail[0] != '\0')
            printf("  ended early: %s\n", r->detail);
        printf("  played on %s (%s), epoch %" PRIu64 ", table %" PRIu64 "\n",
               r->server[0] ? r->server : "-", sstate, r->epoch, r->desk);
        json_t *scores = json_array();
        for (int i = 0; i < r->nscores; i++)
            json_array_append_new(scores, json_pack("{s:i,s:I,s:I}", "seat", r->scores[i].seat,
                                                    "player", (json_int_t)r->scores[i].player,
                                                    "total", (json_int_t)r->scores[i].total));
        printf("\nscoreboard:\n");
        static const char *const scols[] = {"seat", "player", "total", NULL};
        static const char *const sheads[] = {"SEAT", "PLAYER", "TOTAL"};
        ctl_table(scores, scols, sheads);
        json_decref(scores);
        printf("\ndeals:\n");
        static const char *const dcols[] = {"deal", "round", "settled", NULL};
        static const char *const dheads[] = {"DEAL", "ROUND", "SETTLED"};
        ctl_table(deals, dcols, dheads);
    }
    json_decref(doc);
    free(r);
    return 0;
}
