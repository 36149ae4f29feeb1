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
 *   tour create --structure FILE [--name TEXT] [--start-in-seconds N]
 *                                a tournament (tournament/tour_director.h's keys), in one script
 *   tour list                    the tournaments, newest first
 *   tour show ID                 meta, structure, owner, entries, the last events
 *   tour register ID PLAYER      a request to the tournament's director (its stream :in), then
 *   tour unregister ID PLAYER    its answer (BLPOP :reply:<req>, --timeout-ms)
 *   tour cancel ID --reason TEXT  (a running one too: docs/tournaments.md "Cancelling")
 *   tour items PLAYER            the item prizes a player was given
 *                                (ctl_tour.c)
 *   audit --redis-cluster IP:PORT,...
 *                                accounts + transfers in flight = seeded, on every master of
 *                                a Redis Cluster (money/xfer.h; ctl_audit.c)
 *
 * With --redis-cluster and --money-by-entity (EXPERIMENTAL), wallet and credit read and change
 * the wallets by entity {p:<player>}:bal (money/mcredit.h), and room reads the record at
 * {r:<code>}:room (lease/room.h), as croupier-game --money-by-entity keeps them; refused without
 * --redis-cluster.
 *
 * Exit status: 0 done, 1 not found / refused / unreachable, 2 bad arguments.
 *
 * The tool's files (ctl.h is what they share): ctl.c, the options, the Redis connection and
 * its look-ups, the HTTP client of the admin endpoints, the output helpers and main (the
 * command table); ctl_cluster.c, the commands on servers, tables, players, drains and rooms;
 * ctl_money.c, the commands on wallets, rounds and credits; ctl_tour.c, the tournaments.
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
#include "ctl.h"
#include "keytag.h"
#include "money.h"
#include "rcluster.h"
#include "registry.h"
#include "room.h"
#include "sentinel.h"
#include "token.h"
#include "version.h"

/* ---- options ------------------------------------------------------------------------------ */

ctl_options_t O;

static const config_flag_t ctl_flags[] = {
    {"redis", CONFIG_ADDR, "127.0.0.1:6379", "Redis address (IP literal)", &O.redis, 0, 0},
    SENTINEL_CONFIG_FLAGS(&O.redis_sentinels, &O.redis_master),
    RCLUSTER_CONFIG_FLAG(&O.redis_cluster),
    {"money-by-entity", CONFIG_BOOL, "false",
     "EXPERIMENTAL, --redis-cluster only: wallet and credit on the money by entity, as "
     "croupier-game --money-by-entity keeps it -- the wallet {p:<player>}:bal, a credit created "
     "there (counted as seeded), a debit a transfer to the house (docs/ops.md); room reads "
     "{r:<code>}:room; tour refuses it "
     "(the tournaments by entity are not built yet)",
     &O.money_by_entity, 0, 0},
    {"redis-min-replicas", CONFIG_INT, "-1",
     "credit: replicas the credit must reach (WAIT) before it is reported done (-1: 1 with "
     "--redis-sentinels, else 0; docs/ops.md)",
     &O.min_replicas, -1, 100},
    {"redis-wait-ms", CONFIG_INT, "500", "credit: bound of the WAIT for --redis-min-replicas",
     &O.wait_ms, 1, 60000},
    {"json", CONFIG_BOOL, "false", "print JSON instead of a table", &O.json, 0, 0},
    {"phh", CONFIG_BOOL, "false",
     "round: print a hold'em hand as a Poker Hand History file (PokerKit; docs/replays.md)", &O.phh,
     0, 0},
    {"reason", CONFIG_STR, NULL,
     "credit, tour cancel: why (1..200 printable characters; in the audit entry / the request)",
     &O.reason, 0, 0},
    {"op-id", CONFIG_STR, NULL,
     "credit: operation id; the same id again changes nothing; tour register/unregister/cancel: "
     "the request id (default ctl-<16 random hex>) (1..92 of [A-Za-z0-9_.:-])",
     &O.op_id, 0, 0},
    {"structure", CONFIG_STR, NULL, "tour create: the structure file (JSON, docs/tournaments.md)",
     &O.structure, 0, 0},
    {"name", CONFIG_STR, NULL, "tour create: the name (default \"Tournament <id>\")", &O.name, 0,
     0},
    {"start-in-seconds", CONFIG_STR, NULL,
     "tour create: an MTT starts this many seconds from now (required for an MTT, refused for an "
     "SNG)",
     &O.start_in, 0, 0},
    {"every-seconds", CONFIG_STR, NULL,
     "tour hall: the hall opens a match every this many seconds (10..604800; docs/tournaments.md "
     "\"Match halls: the schedule\")",
     &O.every, 0, 0},
    {"admin-secret-file", CONFIG_STR, NULL,
     "drain: the game servers' --admin-secret-file (signs the operator token)", &O.admin_secret, 0,
     0},
    {"operator", CONFIG_INT, "1", "drain/credit: operator number (in the audit lines)",
     &O.operator_id, 1, 1000000000},
    {"limit", CONFIG_INT, "10", "wallet: recent operations shown; tour list: tournaments shown",
     &O.limit, 1, 1000},
    {"timeout-ms", CONFIG_INT, "3000",
     "Redis and HTTP timeout; tour register/unregister/cancel: how long to wait for the answer",
     &O.timeout_ms, 100, 600000},
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
    "  round ROUND_ID --phh       a hold'em hand as a PHH file (PokerKit replays it)\n"
    "  drain SERVER               start the server's drain (--admin-secret-file)\n"
    "  credit PLAYER AMOUNT --reason TEXT --op-id ID\n"
    "                             idempotent wallet adjustment (AMOUNT may be negative)\n"
    "  wallet, credit, room with --redis-cluster ... --money-by-entity\n"
    "                             the wallets by entity ({p:<player>}:bal) and the rooms\n"
    "                             ({r:<code>}:room), as croupier-game --money-by-entity\n"
    "                             keeps them (EXPERIMENTAL)\n"
    "                             (tour refuses --money-by-entity: not built yet)\n"
    "  room CODE                  a private room: rules, state, server, scoreboard, deals\n"
    "  tour create --structure FILE [--name TEXT] [--start-in-seconds N]\n"
    "                             a tournament (an MTT needs --start-in-seconds)\n"
    "  tour list                  the tournaments, newest first (--limit)\n"
    "  tour hall --structure FILE --every-seconds N [--name TEXT]\n"
    "                             a match hall: a match of FILE opened every N seconds\n"
    "  tour halls                 the match halls and their open matches\n"
    "  tour show ID               a tournament: structure, owner, entries, last events\n"
    "  tour register ID PLAYER    ask the director to register a player (--timeout-ms)\n"
    "  tour unregister ID PLAYER  ask the director to unregister a player\n"
    "  tour cancel ID --reason TEXT\n"
    "                             ask the director to cancel the tournament (running too)\n"
    "  tour items PLAYER          the item prizes a player was given (tournament, place, item)\n"
    "  audit --redis-cluster IP:PORT,...\n"
    "                             money conservation on a Redis Cluster (exit 1: not balanced)\n"
    "exit status: 0 done, 1 not found / refused / unreachable, 2 bad arguments";

int ctl_fail(int code, const char *fmt, ...)
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

redisContext *R;

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
    if (O.redis_cluster != NULL) {
        /* the money slot's master: the registry, rooms and histories are there on a cluster
         * (common/keytag.h); the seats are read through ctl_redis_for() */
        if (rcluster_master_addr(O.redis_cluster, MONEY_HELD_INDEX_KEY, sentinel_ms, host,
                                 sizeof host, &port, err, sizeof err) != 0) {
            ctl_fail(1, "%s", err);
            return -1;
        }
    } else if (sentinel_connect_addr(O.redis.host, O.redis.port, O.redis_sentinels, O.redis_master,
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

redisContext *ctl_redis_for(const char *key)
{
    if (O.redis_cluster == NULL)
        return R;
    char host[64], err[600];
    int port = 0;
    int ms = O.timeout_ms < 500 ? (int)O.timeout_ms : 500;
    if (rcluster_master_addr(O.redis_cluster, key, ms, host, sizeof host, &port, err, sizeof err) !=
        0) {
        ctl_fail(1, "%s", err);
        return NULL;
    }
    struct timeval tv = {O.timeout_ms / 1000, (O.timeout_ms % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (c == NULL || c->err) {
        ctl_fail(1, "cannot connect to Redis at %s:%d (the master of %s): %s", host, port, key,
                 c ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    return c;
}

void ctl_redis_done(redisContext *c)
{
    if (c != NULL && c != R)
        redisFree(c);
}

rcluster_t *ctl_cluster_client(void)
{
    char err[600];
    rcluster_opts_t o = {.command_timeout_ms = (int)O.timeout_ms};
    rcluster_t *c = rcluster_create(O.redis_cluster, &o, err, sizeof err);
    if (c == NULL)
        ctl_fail(1, "%s", err);
    return c;
}

/* One command; NULL (and a message) on a connection error or an error reply. */
redisReply *ctl_cmd(int argc, const char **argv)
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

/* GET key as a malloc'ed string; *found false when absent. -1 on a Redis error. */
int ctl_get(const char *key, char **out, bool *found)
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
json_t *ctl_scan(const char *pattern, const char *type)
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
int ctl_entry(const char *id, registry_entry_t *e)
{
    char key[160];
    snprintf(key, sizeof key, "%s%s", REGISTRY_KEY_PREFIX, id);
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
json_t *ctl_held(const char *service, int slot, int64_t epoch)
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
int ctl_http(const char *addr, enum evhttp_cmd_type method, const char *path, const char *bearer,
             char **body)
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
bool ctl_metric(const char *text, const char *name, double *v)
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

void ctl_print_json(json_t *doc)
{
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s != NULL)
        puts(s);
    free(s);
}

/* Text of a JSON value for a table cell ("-" for null/absent). */
const char *ctl_cell(json_t *v, char *buf, size_t len)
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
void ctl_table(json_t *arr, const char *const *cols, const char *const *heads)
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

json_t *ctl_games_array(const char *games)
{
    json_t *a = json_array();
    char *dup = strdup(games), *save = NULL;
    for (char *g = strtok_r(dup, ",", &save); g != NULL; g = strtok_r(NULL, ",", &save))
        json_array_append_new(a, json_string(g));
    free(dup);
    return a;
}

/* Fields of a stream entry reply [id, [f, v, ...]] as an object (with "stream_id"). */
json_t *ctl_stream_entry(const redisReply *e)
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
void ctl_time(int64_t ms, char *buf, size_t len)
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
    if (rc == CONFIG_OK && rcluster_redis_flag_check(O.redis_cluster, nf, flags, err, sizeof err))
        rc = CONFIG_ERROR;
    free(flags);
    if (rc == CONFIG_HELP)
        return 0;
    if (rc == CONFIG_OK &&
        (sentinel_flags_check(O.redis_sentinels, O.redis_master, err, sizeof err) != 0 ||
         rcluster_flags_check(O.redis_cluster, O.redis_sentinels, err, sizeof err) != 0))
        rc = CONFIG_ERROR;
    if (rc != CONFIG_OK)
        return ctl_fail(2, "%s", err);
    if (O.money_by_entity && O.redis_cluster == NULL) /* as croupier-game refuses it */
        return ctl_fail(2, "--money-by-entity needs --redis-cluster");
    if (O.min_replicas < 0)
        O.min_replicas = O.redis_sentinels != NULL ? 1 : 0;
    if (np == 0)
        return ctl_fail(2, "a command is needed: servers, tables, where, wallet, round, drain, "
                           "credit, room, tour, audit (see --help)");
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
                {"room", 1, "room CODE"},
                {"tour", -1, "tour create|list|show|register|unregister|cancel|items ..."},
                {"audit", 0, "audit --redis-cluster IP:PORT,..."}};
    size_t c = 0;
    while (c < sizeof cmds / sizeof cmds[0] && strcmp(cmds[c].name, pos[0]) != 0)
        c++;
    if (c == sizeof cmds / sizeof cmds[0])
        return ctl_fail(2, "unknown command '%s' (see --help)", pos[0]);
    bool tour = strcmp(pos[0], "tour") == 0;
    if (tour && O.money_by_entity) /* docs/tournaments.md "Tournaments by entity" */
        return ctl_fail(2, "tour: the tournaments by entity are not built yet (docs/tournaments.md "
                           "\"Tournaments by entity\")");
    if (tour ? np < 2 : np - 1 != cmds[c].nargs)
        return ctl_fail(2, "usage: croupier-ctl %s", cmds[c].usage);
    if ((O.reason != NULL || O.op_id != NULL) && strcmp(pos[0], "credit") != 0 && !tour)
        return ctl_fail(2, "--reason and --op-id belong to credit and tour");
    if ((O.structure != NULL || O.name != NULL || O.start_in != NULL || O.every != NULL) && !tour)
        return ctl_fail(2, "--structure, --name, --start-in-seconds and --every-seconds belong to "
                           "tour create and tour hall");
    bool audit = strcmp(pos[0], "audit") == 0;
    if (audit && O.redis_cluster == NULL)
        return ctl_fail(2, "usage: croupier-ctl audit --redis-cluster IP:PORT,...");
    if (audit)
        return ctl_audit();
    if (O.redis_cluster != NULL)
        keytag_set_cluster(true); /* the cluster's key layout (common/keytag.h) */
    if (O.money_by_entity) {
        money_set_entity(true); /* the wallets by entity (money.h), before anything reads one */
        keytag_set_tour_entity(true); /* a tournament's keys {t:<id>} (common/keytag.h) */
        room_set_entity(true);        /* room CODE: the record in its code's slot (lease/room.h) */
    }
    ctl_tour_t *t = NULL;
    if (tour && (rc = ctl_tour_prepare(np - 1, pos + 1, &t)) != 0)
        return rc;
    if (ctl_redis_connect() != 0) {
        if (R != NULL)
            redisFree(R);
        ctl_tour_free(t);
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
    case 7:
        rc = ctl_room(pos[1]);
        break;
    default:
        rc = ctl_tour_run(t);
        break;
    }
    redisFree(R);
    return rc;
}
