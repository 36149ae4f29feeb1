/*
 * croupier-ctl -- the operator's tool (docs/ops.md).
 *
 * It finds everything through Redis like the other binaries (--redis, or --redis-sentinels and
 * --redis-master, common/sentinel.h): the registry entries
 * (lease/registry.h) name every game server and its admin endpoint (drain/drain.h), the seat
 * records (gateway/gate_seat.h) where each player sits, the held records (money/money.h, "Held
 * chips") which tables a server runs and who sits where, the settle records and hand-history
 * streams what became of a round. Every command builds one JSON document; --json prints it,
 * otherwise a table for humans is printed from it.
 *
 *   servers                      every registered server (+ its /metrics)
 *   tables SERVER                the tables of a server: round, game, stake, seats
 *   where PLAYER                 server, table and seat of a player
 *   wallet PLAYER                balance, seat accounts, recent credits and rounds
 *   round ROUND_ID               settle record and hand history
 *   room CODE                    a private room's record (lease/room.h) and its deals
 *   drain SERVER                 POST /admin/drain with an operator token (game_admin.h)
 *   credit PLAYER AMOUNT --reason TEXT --op-id ID
 *                                idempotent wallet adjustment (money_sync_credit): a settle
 *                                record ctl:credit:ID and an audit entry, in one script
 *
 * Exit status: 0 done, 1 not found / refused / unreachable, 2 bad arguments.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "config.h"
#include "gate_seat.h"
#include "money.h"
#include "registry.h"
#include "room.h"
#include "sentinel.h"
#include "token.h"
#include "version.h"

#define CTL_AUDIT_KEY MONEY_AUDIT_KEY
#define CTL_SEAT_PREFIX "{croupier:seat}:"
#define CTL_REASON_MAX MONEY_CREDIT_REASON_MAX

/* ---- options ------------------------------------------------------------------------------ */

static struct {
    config_addr_t redis;
    const char *redis_sentinels, *redis_master;
    bool json;
    const char *reason, *op_id, *admin_secret;
    long operator_id, limit, timeout_ms, min_replicas, wait_ms;
} O;

static const config_flag_t ctl_flags[] = {
    {"redis", CONFIG_ADDR, "127.0.0.1:6379", "Redis address (IP literal)", &O.redis, 0, 0},
    SENTINEL_CONFIG_FLAGS(&O.redis_sentinels, &O.redis_master),
    {"redis-min-replicas", CONFIG_INT, "-1",
     "credit: replicas the credit must reach (WAIT) before it is reported done (-1: 1 with "
     "--redis-sentinels, else 0; docs/ops.md)",
     &O.min_replicas, -1, 100},
    {"redis-wait-ms", CONFIG_INT, "500", "credit: bound of the WAIT for --redis-min-replicas",
     &O.wait_ms, 1, 60000},
    {"json", CONFIG_BOOL, "false", "print JSON instead of a table", &O.json, 0, 0},
    {"reason", CONFIG_STR, NULL, "credit: why (1..200 printable characters; in the audit entry)",
     &O.reason, 0, 0},
    {"op-id", CONFIG_STR, NULL,
     "credit: operation id; the same id again changes nothing (1..92 of [A-Za-z0-9_.:-])", &O.op_id,
     0, 0},
    {"admin-secret-file", CONFIG_STR, NULL,
     "drain: the game servers' --admin-secret-file (signs the operator token)", &O.admin_secret, 0,
     0},
    {"operator", CONFIG_INT, "1", "drain/credit: operator number (in the audit lines)",
     &O.operator_id, 1, 1000000000},
    {"limit", CONFIG_INT, "10", "wallet: recent operations shown", &O.limit, 1, 1000},
    {"timeout-ms", CONFIG_INT, "3000", "Redis and HTTP timeout", &O.timeout_ms, 100, 600000},
    {0},
};

static const char ctl_summary[] =
    "the operator's tool: reads the cluster's state from Redis and the servers' admin endpoints "
    "(docs/ops.md)\n\n"
    "commands:\n"
    "  servers                    every registered game server\n"
    "  tables SERVER              the tables of a server (SERVER: an id like holdem:3)\n"
    "  where PLAYER               server, table and seat of a player\n"
    "  wallet PLAYER              balance, seat accounts and recent operations\n"
    "  round ROUND_ID             settle record and hand history of a round\n"
    "  drain SERVER               start the server's drain (--admin-secret-file)\n"
    "  credit PLAYER AMOUNT --reason TEXT --op-id ID\n"
    "                             idempotent wallet adjustment (AMOUNT may be negative)\n"
    "  room CODE                  a private room: rules, state, server, scoreboard, deals\n"
    "exit status: 0 done, 1 not found / refused / unreachable, 2 bad arguments";

static int ctl_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ctl_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("croupier-ctl: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

/* ---- Redis -------------------------------------------------------------------------------- */

static redisContext *R;

/*
 * Connects to --redis, or to the master the sentinels name (sentinel_connect_addr: each
 * sentinel in turn, the master confirmed with ROLE; docs/deploy.md, "Redis Sentinel").
 */
static int ctl_redis_connect(void)
{
    struct timeval tv = {O.timeout_ms / 1000, (O.timeout_ms % 1000) * 1000};
    char host[64], err[600];
    int port = 0;
    int sentinel_ms = O.timeout_ms < 500 ? (int)O.timeout_ms : 500;
    if (sentinel_connect_addr(O.redis.host, O.redis.port, O.redis_sentinels, O.redis_master,
                              sentinel_ms, host, sizeof host, &port, err, sizeof err) != 0) {
        ctl_fail(1, "Redis through the sentinels: %s", err);
        return -1;
    }
    R = redisConnectWithTimeout(host, port, tv);
    if (R == NULL || R->err) {
        ctl_fail(1, "cannot connect to Redis at %s:%d%s%s: %s", host, port,
                 O.redis_sentinels ? ", the master sentinels name " : "",
                 O.redis_sentinels ? O.redis_master : "", R ? R->errstr : "out of memory");
        return -1;
    }
    redisSetTimeout(R, tv);
    return 0;
}

/* One command; NULL (and a message) on a connection error or an error reply. */
static redisReply *ctl_cmd(int argc, const char **argv)
{
    redisReply *r = redisCommandArgv(R, argc, argv, NULL);
    if (r == NULL) {
        ctl_fail(1, "Redis: %s", R->errstr);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        ctl_fail(1, "Redis %s: %s", argv[0], r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

#define CTL_CMD(...)                                                                               \
    ctl_cmd(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *),                          \
            (const char *[]){__VA_ARGS__})

/* GET key as a malloc'ed string; *found false when absent. -1 on a Redis error. */
static int ctl_get(const char *key, char **out, bool *found)
{
    *out = NULL;
    *found = false;
    redisReply *r = CTL_CMD("GET", key);
    if (r == NULL)
        return -1;
    if (r->type == REDIS_REPLY_STRING) {
        *out = strndup(r->str, r->len);
        *found = true;
    }
    freeReplyObject(r);
    return 0;
}

/* Every key matching pattern (SCAN), as a JSON array of strings; NULL on error. */
static json_t *ctl_scan(const char *pattern, const char *type)
{
    json_t *keys = json_array();
    char cursor[32] = "0";
    do {
        redisReply *r =
            type ? CTL_CMD("SCAN", cursor, "MATCH", pattern, "COUNT", "1000", "TYPE", type)
                 : CTL_CMD("SCAN", cursor, "MATCH", pattern, "COUNT", "1000");
        if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            if (r != NULL)
                freeReplyObject(r);
            json_decref(keys);
            return NULL;
        }
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        for (size_t i = 0; i < r->element[1]->elements; i++)
            json_array_append_new(
                keys, json_stringn(r->element[1]->element[i]->str, r->element[1]->element[i]->len));
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return keys;
}

/* The registry entry of id; 0, 1 when there is none, -1 on error. */
static int ctl_entry(const char *id, registry_entry_t *e)
{
    char key[160];
    snprintf(key, sizeof key, REGISTRY_KEY_PREFIX "%s", id);
    char *json;
    bool found;
    if (ctl_get(key, &json, &found) != 0)
        return -1;
    if (!found)
        return 1;
    int rc = registry_entry_parse(json, strlen(json), e);
    free(json);
    if (rc != 0) {
        ctl_fail(1, "the registry entry %s does not parse", key);
        return -1;
    }
    return 0;
}

/* The held HASH of a server's (service, slot, epoch) as a JSON object field -> value. */
static json_t *ctl_held(const char *service, int slot, int64_t epoch)
{
    char key[256];
    if (money_key_held(service, (uint32_t)slot, (uint64_t)epoch, key, sizeof key) != 0)
        return NULL;
    redisReply *r = CTL_CMD("HGETALL", key);
    if (r == NULL)
        return NULL;
    json_t *o = json_object();
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        char *f = strndup(r->element[i]->str, r->element[i]->len);
        json_object_set_new(o, f, json_stringn(r->element[i + 1]->str, r->element[i + 1]->len));
        free(f);
    }
    freeReplyObject(r);
    return o;
}

/* ---- HTTP (the servers' admin endpoints) -------------------------------------------------- */

typedef struct {
    struct event_base *base;
    int status;
    char *body;
} ctl_http_t;

static void ctl_http_done(struct evhttp_request *req, void *arg)
{
    ctl_http_t *h = arg;
    if (req != NULL && evhttp_request_get_response_code(req) > 0) {
        h->status = evhttp_request_get_response_code(req);
        struct evbuffer *b = evhttp_request_get_input_buffer(req);
        size_t n = evbuffer_get_length(b);
        h->body = malloc(n + 1);
        if (h->body != NULL) {
            evbuffer_remove(b, h->body, n);
            h->body[n] = '\0';
        }
    }
    event_base_loopexit(h->base, NULL);
}

/* method GET or POST on http://addr path. Returns the HTTP status (body in *body, malloc'ed)
 * or 0 when the server did not answer. */
static int ctl_http(const char *addr, enum evhttp_cmd_type method, const char *path,
                    const char *bearer, char **body)
{
    *body = NULL;
    config_addr_t a;
    if (config_parse_addr(addr, &a) != 0 || a.port == 0)
        return 0;
    ctl_http_t h = {.base = event_base_new()};
    if (h.base == NULL)
        return 0;
    struct evhttp_connection *c =
        evhttp_connection_base_new(h.base, NULL, a.host, (uint16_t)a.port);
    struct evhttp_request *req = c ? evhttp_request_new(ctl_http_done, &h) : NULL;
    if (req != NULL) {
        struct timeval tv = {O.timeout_ms / 1000, (O.timeout_ms % 1000) * 1000};
        evhttp_connection_set_timeout_tv(c, &tv);
        evhttp_connection_set_retries(c, 0);
        struct evkeyvalq *hd = evhttp_request_get_output_headers(req);
        evhttp_add_header(hd, "Host", addr);
        evhttp_add_header(hd, "Connection", "close");
        if (bearer != NULL) {
            char auth[TOKEN_MAX_LEN + 16];
            snprintf(auth, sizeof auth, "Bearer %s", bearer);
            evhttp_add_header(hd, "Authorization", auth);
        }
        if (method == EVHTTP_REQ_POST)
            evhttp_add_header(hd, "Content-Length", "0");
        if (evhttp_make_request(c, req, method, path) == 0)
            event_base_dispatch(h.base);
    }
    if (c != NULL)
        evhttp_connection_free(c);
    event_base_free(h.base);
    *body = h.body;
    return h.status;
}

/* The value of an unlabelled sample "name value" in Prometheus text; false when absent. */
static bool ctl_metric(const char *text, const char *name, double *v)
{
    size_t n = strlen(name);
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, n) == 0 && p[n] == ' ') {
            char *end;
            *v = strtod(p + n + 1, &end);
            return end != p + n + 1;
        }
    }
    return false;
}

/* ---- output helpers ----------------------------------------------------------------------- */

static void ctl_print_json(json_t *doc)
{
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s != NULL)
        puts(s);
    free(s);
}

/* Text of a JSON value for a table cell ("-" for null/absent). */
static const char *ctl_cell(json_t *v, char *buf, size_t len)
{
    if (v == NULL || json_is_null(v))
        return "-";
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    }
    if (json_is_boolean(v))
        return json_is_true(v) ? "yes" : "no";
    if (json_is_array(v)) {
        size_t i, off = 0;
        json_t *x;
        buf[0] = '\0';
        json_array_foreach(v, i, x)
        {
            char b[64];
            off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s", i ? "," : "",
                                    ctl_cell(x, b, sizeof b));
        }
        return buf;
    }
    return "?";
}

/* Prints the rows (objects) of arr as a table of the given columns. */
static void ctl_table(json_t *arr, const char *const *cols, const char *const *heads)
{
    size_t nc = 0;
    while (cols[nc] != NULL)
        nc++;
    size_t w[16] = {0};
    for (size_t c = 0; c < nc; c++)
        w[c] = strlen(heads[c]);
    size_t i;
    json_t *row;
    char buf[512];
    json_array_foreach(arr, i, row) for (size_t c = 0; c < nc; c++)
    {
        size_t l = strlen(ctl_cell(json_object_get(row, cols[c]), buf, sizeof buf));
        if (l > w[c])
            w[c] = l;
    }
    for (size_t c = 0; c < nc; c++)
        printf("%-*s%s", c + 1 < nc ? (int)w[c] : 0, heads[c], c + 1 < nc ? "  " : "\n");
    json_array_foreach(arr, i, row)
    {
        for (size_t c = 0; c < nc; c++)
            printf("%-*s%s", c + 1 < nc ? (int)w[c] : 0,
                   ctl_cell(json_object_get(row, cols[c]), buf, sizeof buf),
                   c + 1 < nc ? "  " : "\n");
    }
}

static json_t *ctl_games_array(const char *games)
{
    json_t *a = json_array();
    char *dup = strdup(games), *save = NULL;
    for (char *g = strtok_r(dup, ",", &save); g != NULL; g = strtok_r(NULL, ",", &save))
        json_array_append_new(a, json_string(g));
    free(dup);
    return a;
}

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

static int ctl_servers(void)
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

/* Every seat record, as player -> parsed record (a JSON object per player). */
static json_t *ctl_seats(void)
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

/* The seat of player in a round-start record's "seats", or -1. */
static int ctl_seat_of(json_t *round, const char *player)
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

static bool ctl_round_settled(const char *round_id)
{
    char key[256];
    if (money_key_round(round_id, key, sizeof key) != 0)
        return false;
    redisReply *r = CTL_CMD("EXISTS", key);
    bool yes = r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    if (r != NULL)
        freeReplyObject(r);
    return yes;
}

static int ctl_tables(const char *server)
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

static int ctl_where(const char *player)
{
    if (!money_valid_player(player))
        return ctl_fail(2, "'%s' is not a player id (1..64 of [A-Za-z0-9_.-])", player);
    char key[128], *rec;
    bool found;
    snprintf(key, sizeof key, CTL_SEAT_PREFIX "%s", player);
    if (ctl_get(key, &rec, &found) != 0)
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

/* ---- wallet / round ----------------------------------------------------------------------- */

/* The games with a hand-history stream: "{croupier:history:<game>}:stream" keys. */
static json_t *ctl_history_games(void)
{
    json_t *keys = ctl_scan("{croupier:history:*}:stream", "stream");
    if (keys == NULL)
        return NULL;
    json_t *games = json_array();
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        const char *s = json_string_value(k) + strlen("{croupier:history:");
        const char *end = strstr(s, "}:stream");
        if (end != NULL)
            json_array_append_new(games, json_stringn(s, (size_t)(end - s)));
    }
    json_decref(keys);
    return games;
}

/* Fields of a stream entry reply [id, [f, v, ...]] as an object (with "stream_id"). */
static json_t *ctl_stream_entry(const redisReply *e)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[1]->type != REDIS_REPLY_ARRAY)
        return NULL;
    json_t *o = json_pack("{s:s%}", "stream_id", e->element[0]->str, e->element[0]->len);
    for (size_t j = 0; j + 1 < e->element[1]->elements; j += 2) {
        char *f = strndup(e->element[1]->element[j]->str, e->element[1]->element[j]->len);
        json_object_set_new(
            o, f,
            json_stringn(e->element[1]->element[j + 1]->str, e->element[1]->element[j + 1]->len));
        free(f);
    }
    return o;
}

/* Unix milliseconds as "YYYY-MM-DD HH:MM:SS.mmm" (UTC), for people; JSON keeps the number. */
static void ctl_time(int64_t ms, char *buf, size_t len)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    if (ms <= 0 || gmtime_r(&s, &tm) == NULL) {
        snprintf(buf, len, "-");
        return;
    }
    size_t n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03d", (int)(ms % 1000));
}

static int64_t ctl_stream_ms(const char *stream_id)
{
    return strtoll(stream_id, NULL, 10);
}

/* Sorts the array of operations by "ts" descending and keeps the first O.limit. */
static void ctl_recent(json_t *ops)
{
    size_t n = json_array_size(ops);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a;
             b > 0 && json_integer_value(json_object_get(json_array_get(ops, b - 1), "ts")) <
                          json_integer_value(json_object_get(json_array_get(ops, b), "ts"));
             b--) {
            json_t *t = json_incref(json_array_get(ops, b));
            json_array_set(ops, b, json_array_get(ops, b - 1));
            json_array_set_new(ops, b - 1, t);
        }
    while (json_array_size(ops) > (size_t)O.limit)
        json_array_remove(ops, json_array_size(ops) - 1);
}

static int ctl_wallet(const char *player)
{
    if (!money_valid_player(player))
        return ctl_fail(2, "'%s' is not a player id (1..64 of [A-Za-z0-9_.-])", player);
    char key[128];
    money_key_wallet(player, key, sizeof key);
    redisReply *ex = CTL_CMD("EXISTS", key);
    if (ex == NULL)
        return 1;
    bool has_wallet = ex->integer == 1;
    freeReplyObject(ex);
    int64_t balance = 0;
    if (money_sync_balance(R, player, &balance) != 0)
        return ctl_fail(1, "cannot read the wallet of %s", player);

    /* Seat accounts held for the player (chips at a table). */
    json_t *accounts = json_array();
    redisReply *idx = CTL_CMD("SMEMBERS", MONEY_HELD_INDEX_KEY);
    if (idx == NULL)
        return 1;
    for (size_t i = 0; idx->type == REDIS_REPLY_ARRAY && i < idx->elements; i++) {
        char service[MONEY_NAME_MAX + 1];
        uint32_t slot;
        uint64_t epoch;
        if (money_held_parse(idx->element[i]->str, service, sizeof service, &slot, &epoch) != 0)
            continue;
        json_t *held = ctl_held(service, (int)slot, (int64_t)epoch);
        const char *f;
        json_t *v;
        json_object_foreach(held, f, v)
        {
            if (f[1] == ':' || strcmp(json_string_value(v), player) != 0)
                continue; /* r:<desk> / h:<offer> records, or another owner's account */
            int64_t chips = 0;
            money_sync_balance(R, f, &chips);
            json_array_append_new(accounts,
                                  json_pack("{s:s,s:I,s:s}", "account", f, "chips",
                                            (json_int_t)chips, "held_by", idx->element[i]->str));
        }
        json_decref(held);
    }
    freeReplyObject(idx);

    /* Recent operations: credits from the audit stream, rounds from the hand histories. */
    json_t *ops = json_array();
    redisReply *au = CTL_CMD("XREVRANGE", CTL_AUDIT_KEY, "+", "-", "COUNT", "1000");
    for (size_t i = 0; au != NULL && au->type == REDIS_REPLY_ARRAY && i < au->elements; i++) {
        json_t *en = ctl_stream_entry(au->element[i]);
        const char *p = en ? json_string_value(json_object_get(en, "player")) : NULL;
        if (p != NULL && strcmp(p, player) == 0)
            json_array_append_new(
                ops,
                json_pack(
                    "{s:I,s:s,s:O?,s:O?,s:I,s:O?,s:O?,s:O?}", "ts",
                    (json_int_t)ctl_stream_ms(json_string_value(json_object_get(en, "stream_id"))),
                    "kind", "credit", "op_id", json_object_get(en, "op_id"), "round",
                    json_object_get(en, "round"), "delta",
                    (json_int_t)strtoll(json_string_value(json_object_get(en, "amount")), NULL, 10),
                    "reason", json_object_get(en, "reason"), "operator",
                    json_object_get(en, "operator"), "balance_after",
                    json_object_get(en, "balance_after")));
        json_decref(en);
    }
    if (au != NULL)
        freeReplyObject(au);
    json_t *games = ctl_history_games();
    size_t gi;
    json_t *g;
    json_array_foreach(games, gi, g)
    {
        char skey[128];
        money_key_stream(json_string_value(g), skey, sizeof skey);
        redisReply *h = CTL_CMD("XREVRANGE", skey, "+", "-", "COUNT", "500");
        for (size_t i = 0; h != NULL && h->type == REDIS_REPLY_ARRAY && i < h->elements; i++) {
            json_t *en = ctl_stream_entry(h->element[i]);
            json_t *hist =
                en ? json_loads(json_string_value(json_object_get(en, "data")), 0, NULL) : NULL;
            int seat = hist ? ctl_seat_of(hist, player) : -1;
            if (seat >= 0) {
                json_int_t delta = 0;
                size_t k;
                json_t *res;
                json_array_foreach(json_object_get(hist, "results"), k, res)
                {
                    if (json_integer_value(json_object_get(res, "seat")) == seat)
                        delta += json_integer_value(json_object_get(res, "delta"));
                }
                json_t *outcome = json_object_get(hist, "outcome");
                json_array_append_new(
                    ops, json_pack("{s:I,s:s,s:O?,s:O,s:I,s:i,s:s}", "ts",
                                   (json_int_t)ctl_stream_ms(
                                       json_string_value(json_object_get(en, "stream_id"))),
                                   "kind", "round", "round", json_object_get(hist, "round"), "game",
                                   g, "delta", delta, "seat", seat, "outcome",
                                   outcome ? json_string_value(outcome) : "completed"));
            }
            json_decref(hist);
            json_decref(en);
        }
        if (h != NULL)
            freeReplyObject(h);
    }
    json_decref(games);
    if (!has_wallet && json_array_size(accounts) == 0 && json_array_size(ops) == 0) {
        json_decref(accounts);
        json_decref(ops);
        return ctl_fail(1, "player %s has no wallet, no seat account and no operation", player);
    }
    ctl_recent(ops);
    json_t *doc = json_pack("{s:s,s:I,s:o,s:o}", "player", player, "balance", (json_int_t)balance,
                            "seat_accounts", accounts, "recent", ops);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        printf("player %s: balance %" PRId64 "\n", player, balance);
        if (json_array_size(accounts) > 0) {
            printf("\nchips at tables:\n");
            static const char *const cols[] = {"account", "chips", "held_by", NULL};
            static const char *const heads[] = {"SEAT_ACCOUNT", "CHIPS", "HELD_BY"};
            ctl_table(accounts, cols, heads);
        }
        printf("\nrecent operations (newest first, at most %ld):\n", O.limit);
        size_t k;
        json_t *op;
        json_array_foreach(ops, k, op)
        {
            char when[32];
            ctl_time(json_integer_value(json_object_get(op, "ts")), when, sizeof when);
            json_object_set_new(op, "time", json_string(when));
        }
        static const char *const cols[] = {"time",    "kind",  "delta",  "round", "game",
                                           "outcome", "op_id", "reason", NULL};
        static const char *const heads[] = {"TIME (UTC)", "KIND",    "DELTA", "ROUND",
                                            "GAME",       "OUTCOME", "OP_ID", "REASON"};
        ctl_table(ops, cols, heads);
    }
    json_decref(doc);
    return 0;
}

/*
 * round ctl:credit:ID: a credit's settle record (money.h, "Operator credits") and its audit
 * entry, found through the seen record of its op id ("<entry> <player> <amount>").
 */
static int ctl_round_credit(const char *round_id)
{
    const char *id = round_id + strlen(MONEY_CREDIT_ROUND_PREFIX);
    char op_id[MONEY_ID_MAX + 1], rid[MONEY_ID_MAX + 1];
    if (money_credit_ids(id, op_id, rid, sizeof op_id) != 0)
        return ctl_fail(2, "'%s' is not a credit's round id (ctl:credit:ID)", round_id);
    char key[256], seen[256], *rec, *sv;
    bool found_rec, found_seen;
    money_key_round(rid, key, sizeof key);
    snprintf(seen, sizeof seen, MONEY_AUDIT_SEEN_PREFIX "%s", op_id);
    if (ctl_get(key, &rec, &found_rec) != 0)
        return 1;
    if (ctl_get(seen, &sv, &found_seen) != 0) {
        free(rec);
        return 1;
    }
    if (!found_rec && !found_seen) {
        free(rec);
        free(sv);
        return ctl_fail(1, "no credit %s: no settle record and no audit entry", round_id);
    }
    json_t *settle = json_null();
    if (found_rec)
        settle = json_pack("{s:s,s:[I]}", "key", key, "balances_after",
                           (json_int_t)strtoll(rec, NULL, 10));
    json_t *audit = json_null();
    if (found_seen) {
        char *sp = strchr(sv, ' ');
        if (sp != NULL)
            *sp = '\0';
        redisReply *x = CTL_CMD("XRANGE", CTL_AUDIT_KEY, sv, sv);
        audit = x && x->type == REDIS_REPLY_ARRAY && x->elements == 1
                    ? ctl_stream_entry(x->element[0])
                    : json_pack("{s:s}", "stream_id", sv); /* trimmed: only its id is known */
        if (x != NULL)
            freeReplyObject(x);
    }
    free(rec);
    free(sv);
    json_t *doc = json_pack("{s:s,s:s,s:b,s:o,s:o}", "round", rid, "kind", "credit", "settled",
                            !json_is_null(settle), "settle", settle, "audit", audit);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char b1[256], b2[256], b3[256];
        printf("round %s (an operator credit)\n  settled: %s", rid,
               json_is_null(settle) ? "no (the record expired)" : "yes");
        if (!json_is_null(settle))
            printf(" (%s: balance after %s)", key,
                   ctl_cell(json_object_get(settle, "balances_after"), b1, sizeof b1));
        printf("\n");
        if (json_object_get(audit, "player") != NULL)
            printf("  player: %s   amount: %s   operator: %s   reason: %s\n",
                   ctl_cell(json_object_get(audit, "player"), b1, sizeof b1),
                   ctl_cell(json_object_get(audit, "amount"), b2, sizeof b2),
                   ctl_cell(json_object_get(audit, "operator"), b3, sizeof b3),
                   json_string_value(json_object_get(audit, "reason")));
    }
    json_decref(doc);
    return 0;
}

static int ctl_round(const char *round_id)
{
    if (money_credit_round(round_id))
        return ctl_round_credit(round_id);
    money_round_id_t rid;
    if (money_round_id_parse(round_id, &rid) != 0)
        return ctl_fail(2, "'%s' is not a round id (service:server:epoch:desk:seq)", round_id);
    char key[256], *rec;
    bool found;
    money_key_round(round_id, key, sizeof key);
    if (ctl_get(key, &rec, &found) != 0)
        return 1;
    json_t *settle = json_null();
    if (found) {
        json_t *bal = json_array();
        char *save = NULL;
        for (char *t = strtok_r(rec, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save))
            json_array_append_new(bal, json_integer(strtoll(t, NULL, 10)));
        json_decref(settle);
        settle = json_pack("{s:s,s:o}", "key", key, "balances_after", bal);
    }
    free(rec);
    json_t *history = json_null();
    json_t *games = ctl_history_games();
    if (games == NULL) {
        json_decref(settle);
        return 1;
    }
    size_t i;
    json_t *g;
    json_array_foreach(games, i, g)
    {
        char seen[320], *sid;
        snprintf(seen, sizeof seen, "{croupier:history:%s}:seen:%s", json_string_value(g),
                 round_id);
        if (ctl_get(seen, &sid, &found) != 0 || !found) {
            free(sid);
            continue;
        }
        char skey[128];
        money_key_stream(json_string_value(g), skey, sizeof skey);
        redisReply *x = CTL_CMD("XRANGE", skey, sid, sid);
        json_t *en = x && x->type == REDIS_REPLY_ARRAY && x->elements == 1
                         ? ctl_stream_entry(x->element[0])
                         : NULL;
        json_t *h = en ? json_loads(json_string_value(json_object_get(en, "data")), 0, NULL) : NULL;
        if (h != NULL) {
            json_decref(history);
            history = json_pack("{s:O,s:s,s:o}", "game", g, "stream_id", sid, "record", h);
        } else {
            json_decref(history);
            history = json_pack("{s:O,s:s,s:s}", "game", g, "stream_id", sid, "record",
                                "(trimmed from the stream)");
        }
        json_decref(en);
        if (x != NULL)
            freeReplyObject(x);
        free(sid);
        break;
    }
    json_decref(games);
    if (json_is_null(settle) && json_is_null(history))
        return ctl_fail(1, "no round %s: no settle record and no hand history", round_id);
    json_t *rec_h = json_object_get(history, "record");
    const char *outcome = json_is_object(rec_h)
                              ? (json_object_get(rec_h, "outcome")
                                     ? json_string_value(json_object_get(rec_h, "outcome"))
                                     : "completed")
                              : NULL;
    json_t *doc =
        json_pack("{s:s,s:b,s:s?,s:o,s:o}", "round", round_id, "settled", !json_is_null(settle),
                  "outcome", outcome, "settle", settle, "history", history);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char buf[512];
        printf("round %s\n  settled: %s", round_id, json_is_null(settle) ? "no" : "yes");
        if (!json_is_null(settle))
            printf(" (%s: balances after %s)", key,
                   ctl_cell(json_object_get(settle, "balances_after"), buf, sizeof buf));
        printf("\n");
        if (json_is_object(rec_h)) {
            printf("  game: %s   outcome: %s   rake: %s   actions: %zu\n",
                   json_string_value(json_object_get(history, "game")), outcome,
                   ctl_cell(json_object_get(rec_h, "rake"), buf, sizeof buf),
                   json_array_size(json_object_get(rec_h, "actions")));
            json_t *rows = json_array();
            size_t k;
            json_t *s;
            json_array_foreach(json_object_get(rec_h, "seats"), k, s)
            {
                json_int_t seat = json_integer_value(json_object_get(s, "seat")), delta = 0;
                size_t m;
                json_t *res;
                json_array_foreach(json_object_get(rec_h, "results"), m,
                                   res) if (json_integer_value(json_object_get(res, "seat")) ==
                                            seat) delta +=
                    json_integer_value(json_object_get(res, "delta"));
                json_array_append_new(rows, json_pack("{s:I,s:O,s:O,s:I}", "seat", seat, "player",
                                                      json_object_get(s, "player"), "stack",
                                                      json_object_get(s, "stack"), "delta", delta));
            }
            static const char *const cols[] = {"seat", "player", "stack", "delta", NULL};
            static const char *const heads[] = {"SEAT", "PLAYER", "STACK", "DELTA"};
            ctl_table(rows, cols, heads);
            json_decref(rows);
            /* The actions in the order played (docs/hand-history.md: the names and what the
             * amount means are the game's). */
            json_t *acts = json_object_get(rec_h, "actions");
            if (json_array_size(acts) > 0) {
                printf("  actions, in order:\n");
                json_t *a;
                json_array_foreach(acts, k, a)
                {
                    json_t *amount = json_object_get(a, "amount");
                    printf("    %3zu  seat %s  %s", k + 1,
                           ctl_cell(json_object_get(a, "seat"), buf, sizeof buf),
                           json_is_string(json_object_get(a, "action"))
                               ? json_string_value(json_object_get(a, "action"))
                               : "?");
                    if (amount != NULL && !json_is_null(amount))
                        printf(" %s", ctl_cell(amount, buf, sizeof buf));
                    printf("\n");
                }
            }
        } else {
            printf("  hand history: %s\n", json_is_null(history) ? "none" : "trimmed");
        }
    }
    json_decref(doc);
    return 0;
}

/* ---- drain -------------------------------------------------------------------------------- */

static int ctl_drain(const char *server)
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
static int ctl_room(const char *code)
{
    if (!room_code_valid(code))
        return ctl_fail(2, "'%s' is not a room code (6 digits)", code);
    char key[64], *text;
    bool found;
    room_key(code, key, sizeof key);
    if (ctl_get(key, &text, &found) != 0)
        return 1;
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

/* ---- credit ------------------------------------------------------------------------------- */

static bool ctl_parse_amount(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || v == 0 || v > MONEY_MAX_AMOUNT ||
        v < -MONEY_MAX_AMOUNT || (s[0] == '+'))
        return false;
    *out = v;
    return true;
}

/*
 * One money_sync_credit (money.h, "Operator credits"): the wallet change, its settle record
 * {croupier:money}:round:ctl:credit:<ID> and its audit entry in one script, idempotent by ID.
 */
static int ctl_credit(const char *player, const char *amount_text)
{
    int64_t amount;
    if (!money_valid_player(player))
        return ctl_fail(2, "'%s' is not a player id (1..64 of [A-Za-z0-9_.-])", player);
    if (!ctl_parse_amount(amount_text, &amount))
        return ctl_fail(2, "AMOUNT '%s' must be a non-zero integer of at most %lld chips",
                        amount_text, (long long)MONEY_MAX_AMOUNT);
    if (O.reason == NULL || O.reason[0] == '\0' || strlen(O.reason) > CTL_REASON_MAX)
        return ctl_fail(2, "credit needs --reason TEXT (1..%d characters)", CTL_REASON_MAX);
    for (const char *p = O.reason; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return ctl_fail(2, "--reason must be printable text (no control characters)");
    char op_id[MONEY_ID_MAX + 1], round_id[MONEY_ID_MAX + 1];
    if (O.op_id == NULL)
        return ctl_fail(2, "credit needs --op-id ID (1..%d of [A-Za-z0-9_.:-])",
                        MONEY_CREDIT_ID_MAX);
    if (money_credit_ids(O.op_id, op_id, round_id, sizeof op_id) != 0)
        return ctl_fail(2, "--op-id '%s' must be 1..%d of [A-Za-z0-9_.:-]", O.op_id,
                        MONEY_CREDIT_ID_MAX);

    money_credit_t cr = {.player = player,
                         .amount = amount,
                         .id = O.op_id,
                         .reason = O.reason,
                         .operator_id = O.operator_id,
                         .unix_s = (int64_t)time(NULL)};
    money_credit_result_t res;
    int rc = money_sync_credit(R, &cr, &res);
    if (rc == MONEY_ERR_BAD_ARGS && strstr(res.error, "op id was used") != NULL)
        return ctl_fail(1, "--op-id %s: %s; nothing changed", O.op_id,
                        res.error + strlen("MONEY_BAD_ARGS "));
    if (rc != 0)
        return ctl_fail(1, "credit %s %" PRId64 " refused, nothing changed: %s", player, amount,
                        res.error[0] ? res.error : money_strerror(rc));
    /* Durable before it is reported (docs/deploy.md "Failover and durability"): a replay too,
     * since the first run may have ended before its write reached a replica. */
    if (O.min_replicas > 0) {
        /* every connected replica, at least --redis-min-replicas (money_sync_wait_replicas) */
        money_wait_result_t w;
        if (money_sync_wait_replicas(R, (int)O.min_replicas, (int)O.wait_ms, &w) != 0)
            return ctl_fail(1,
                            "credit %s %" PRId64 " is on the master but not durable: %s; run the "
                            "same command again (it applies nothing twice)",
                            player, amount, w.error);
    }
    char key[256];
    money_key_round(res.round_id, key, sizeof key);
    json_t *doc =
        json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:b,s:s}", "op_id", res.op_id, "round", res.round_id,
                  "settle_record", key, "player", player, "amount", (json_int_t)amount, "reason",
                  O.reason, "replayed", res.replayed, "audit_id", res.audit_id);
    json_object_set_new(doc, "balance_after",
                        res.balance_known ? json_integer((json_int_t)res.balance_after)
                                          : json_null());
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char bal[32] = "unknown (its record expired)";
        if (res.balance_known)
            snprintf(bal, sizeof bal, "%" PRId64, res.balance_after);
        printf("%s %s: %+" PRId64 " chips, balance %s (settle record %s, audit %s)\n",
               res.replayed ? "replayed, nothing changed:" : "credited", player, amount, bal, key,
               res.audit_id[0] ? res.audit_id : "unknown");
    }
    json_decref(doc);
    return 0;
}

/* ---- main --------------------------------------------------------------------------------- */

/* Whether flag name (without "--", up to '=' if any) is a boolean of the table. */
static const config_flag_t *ctl_flag(const char *name, size_t len)
{
    for (const config_flag_t *f = ctl_flags; f->name != NULL; f++)
        if (strlen(f->name) == len && strncmp(f->name, name, len) == 0)
            return f;
    return NULL;
}

int main(int argc, char **argv)
{
    /* Split the words: flags (with their values) for config_parse, the rest positional. */
    char **flags = calloc((size_t)argc + 1, sizeof *flags);
    const char *pos[8];
    int nf = 1, np = 0;
    flags[0] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) == 0 || strcmp(a, "-h") == 0) {
            flags[nf++] = argv[i];
            const char *eq = strchr(a, '=');
            const config_flag_t *f =
                a[1] == '-' ? ctl_flag(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2)) : NULL;
            if (eq == NULL && f != NULL && f->type != CONFIG_BOOL && i + 1 < argc)
                flags[nf++] = argv[++i];
        } else if (np < (int)(sizeof pos / sizeof pos[0])) {
            pos[np++] = a;
        } else {
            free(flags);
            return ctl_fail(2, "too many arguments (see --help)");
        }
    }
    char err[256];
    config_program_version = croupier_version;
    int rc = config_parse(ctl_flags, "croupier-ctl", ctl_summary, nf, flags, err, sizeof err);
    free(flags);
    if (rc == CONFIG_HELP)
        return 0;
    if (rc == CONFIG_OK &&
        sentinel_flags_check(O.redis_sentinels, O.redis_master, err, sizeof err) != 0)
        rc = CONFIG_ERROR;
    if (rc != CONFIG_OK)
        return ctl_fail(2, "%s", err);
    if (O.min_replicas < 0)
        O.min_replicas = O.redis_sentinels != NULL ? 1 : 0;
    if (np == 0)
        return ctl_fail(2, "a command is needed: servers, tables, where, wallet, round, drain, "
                           "credit, room (see --help)");
    static const struct {
        const char *name;
        int nargs;
        const char *usage;
    } cmds[] = {{"servers", 0, "servers"},
                {"tables", 1, "tables SERVER"},
                {"where", 1, "where PLAYER"},
                {"wallet", 1, "wallet PLAYER"},
                {"round", 1, "round ROUND_ID"},
                {"drain", 1, "drain SERVER"},
                {"credit", 2, "credit PLAYER AMOUNT --reason TEXT --op-id ID"},
                {"room", 1, "room CODE"}};
    size_t c = 0;
    while (c < sizeof cmds / sizeof cmds[0] && strcmp(cmds[c].name, pos[0]) != 0)
        c++;
    if (c == sizeof cmds / sizeof cmds[0])
        return ctl_fail(2, "unknown command '%s' (see --help)", pos[0]);
    if (np - 1 != cmds[c].nargs)
        return ctl_fail(2, "usage: croupier-ctl %s", cmds[c].usage);
    if ((O.reason != NULL || O.op_id != NULL) && strcmp(pos[0], "credit") != 0)
        return ctl_fail(2, "--reason and --op-id belong to credit");
    if (ctl_redis_connect() != 0) {
        if (R != NULL)
            redisFree(R);
        return 1;
    }
    switch (c) {
    case 0:
        rc = ctl_servers();
        break;
    case 1:
        rc = ctl_tables(pos[1]);
        break;
    case 2:
        rc = ctl_where(pos[1]);
        break;
    case 3:
        rc = ctl_wallet(pos[1]);
        break;
    case 4:
        rc = ctl_round(pos[1]);
        break;
    case 5:
        rc = ctl_drain(pos[1]);
        break;
    case 6:
        rc = ctl_credit(pos[1], pos[2]);
        break;
    default:
        rc = ctl_room(pos[1]);
        break;
    }
    redisFree(R);
    return rc;
}
