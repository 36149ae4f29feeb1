/*
 * ctl_tour -- croupier-ctl's tournament commands, the operator's side of the tournament
 * director's contract (tournament/tour_director.h: the keys and the request stream;
 * docs/ops.md "tour"):
 *
 *   tour create --structure FILE [--name TEXT] [--start-in-seconds N]
 *   tour list
 *   tour show ID
 *   tour register ID PLAYER | tour unregister ID PLAYER | tour cancel ID --reason TEXT
 *   tour items PLAYER   (the item prizes a player was given: docs/tournaments.md "Items")
 *
 * create writes the tournament (id, meta, the index sets, its first log event) in one script,
 * so a tournament is either whole or absent; a director claims it from {croupier:tours}:live.
 * register, unregister and cancel change nothing themselves: they append a request to the
 * tournament's stream and wait for the answer the director (its owner) pushes onto the
 * request's reply list. Without a director the request stays in the stream and is applied when
 * one claims the tournament.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "tour_client.h"
#include "tour_director.h"
#include "tour_structure.h"

#define CTL_TOUR_TEXT_MAX 200            /* --name and --reason */
#define CTL_TOUR_FILE_MAX (4 << 20)      /* a structure file */
#define CTL_TOUR_START_MAX (366 * 86400) /* --start-in-seconds */
#define CTL_TOUR_LOG_SHOWN 20

typedef enum {
    CTL_TOUR_CREATE,
    CTL_TOUR_LIST,
    CTL_TOUR_SHOW,
    CTL_TOUR_REGISTER,
    CTL_TOUR_UNREGISTER,
    CTL_TOUR_CANCEL,
    CTL_TOUR_HALL,
    CTL_TOUR_HALLS,
    CTL_TOUR_ITEMS,
} ctl_tour_op_t;

static const struct {
    const char *name;
    int nargs; /* after the subcommand */
    const char *usage;
} ctl_tour_cmds[] = {
    [CTL_TOUR_CREATE] = {"create", 0,
                         "tour create --structure FILE [--name TEXT] "
                         "[--start-in-seconds N]"},
    [CTL_TOUR_LIST] = {"list", 0, "tour list [--limit N]"},
    [CTL_TOUR_SHOW] = {"show", 1, "tour show ID"},
    [CTL_TOUR_REGISTER] = {"register", 2, "tour register ID PLAYER [--op-id REQ]"},
    [CTL_TOUR_UNREGISTER] = {"unregister", 2, "tour unregister ID PLAYER [--op-id REQ]"},
    [CTL_TOUR_CANCEL] = {"cancel", 1, "tour cancel ID --reason TEXT [--op-id REQ]"},
    [CTL_TOUR_HALL] = {"hall", 0, "tour hall --structure FILE --every-seconds N [--name TEXT]"},
    [CTL_TOUR_HALLS] = {"halls", 0, "tour halls"},
    [CTL_TOUR_ITEMS] = {"items", 1, "tour items PLAYER"},
};

struct ctl_tour {
    ctl_tour_op_t op;
    char id[24];     /* canonical decimal */
    char player[24]; /* canonical decimal */
    char req[TOUR_CLIENT_REQ_MAX + 1];
    char *structure; /* create: the file's JSON, compacted */
    tour_format_t format;
    int64_t start_in_s; /* create: -1 when not given */
    int64_t every_s;    /* hall */
};

void ctl_tour_free(ctl_tour_t *t)
{
    if (t == NULL)
        return;
    free(t->structure);
    free(t);
}

/* 1..max printable bytes (no control characters). */
static bool ctl_tour_valid_text(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return false;
    return true;
}

/* "ctl-<16 hex>" from the kernel's generator (the clock and pid if it fails: an id only needs
 * to differ from every other request's). */
static void ctl_tour_random_req(char *buf, size_t len)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 40);
    }
    snprintf(buf, len, "ctl-%016" PRIx64, r);
}

static int64_t ctl_tour_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Reads the structure file and checks it with tour_structure_parse: a refused structure is a
 * bad argument (its one sentence, exit 2). On success t->structure is the JSON compacted and
 * t->format the format.
 */
static int ctl_tour_load_structure(ctl_tour_t *t, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return ctl_fail(2, "--structure %s: %s", path, strerror(errno));
    char *text = malloc(CTL_TOUR_FILE_MAX + 1);
    size_t n = text ? fread(text, 1, CTL_TOUR_FILE_MAX + 1, f) : 0;
    bool rerr = ferror(f) != 0;
    fclose(f);
    if (text == NULL)
        return ctl_fail(2, "--structure %s: out of memory", path);
    if (rerr || n > CTL_TOUR_FILE_MAX) {
        free(text);
        return ctl_fail(2, "--structure %s: %s", path,
                        rerr ? "cannot be read" : "larger than 4 MiB");
    }
    text[n] = '\0';
    char err[256];
    tour_structure_t *s = NULL;
    if (tour_structure_parse(text, n, &s, err, sizeof err) != 0) {
        free(text);
        return ctl_fail(2, "structure %s refused: %s", path, err);
    }
    t->format = s->format;
    tour_structure_destroy(s);
    json_t *doc = json_loadb(text, n, 0, NULL);
    free(text);
    t->structure = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (t->structure == NULL)
        return ctl_fail(2, "structure %s: not a JSON object", path);
    return 0;
}

int ctl_tour_prepare(int argc, const char *const *argv, ctl_tour_t **out)
{
    *out = NULL;
    size_t c = 0, nc = sizeof ctl_tour_cmds / sizeof ctl_tour_cmds[0];
    while (c < nc && strcmp(ctl_tour_cmds[c].name, argv[0]) != 0)
        c++;
    if (c == nc)
        return ctl_fail(2,
                        "unknown tour command '%s' (create, list, show, register, unregister, "
                        "cancel, hall, halls, items)",
                        argv[0]);
    if (argc - 1 != ctl_tour_cmds[c].nargs)
        return ctl_fail(2, "usage: croupier-ctl %s", ctl_tour_cmds[c].usage);
    ctl_tour_op_t op = (ctl_tour_op_t)c;
    bool asks = op == CTL_TOUR_REGISTER || op == CTL_TOUR_UNREGISTER || op == CTL_TOUR_CANCEL;
    if ((O.structure != NULL || O.name != NULL) && op != CTL_TOUR_CREATE && op != CTL_TOUR_HALL)
        return ctl_fail(2, "--structure and --name belong to tour create and tour hall");
    if (O.start_in != NULL && op != CTL_TOUR_CREATE)
        return ctl_fail(2, "--start-in-seconds belongs to tour create");
    if (O.every != NULL && op != CTL_TOUR_HALL)
        return ctl_fail(2, "--every-seconds belongs to tour hall");
    if (O.reason != NULL && op != CTL_TOUR_CANCEL)
        return ctl_fail(2, "--reason belongs to tour cancel (and credit)");
    if (O.op_id != NULL && !asks)
        return ctl_fail(2, "--op-id belongs to tour register, unregister and cancel (and credit)");

    ctl_tour_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return ctl_fail(2, "out of memory");
    t->op = op;
    t->start_in_s = -1;
    int rc = 0;
    if (op == CTL_TOUR_ITEMS) {
        if (!tour_client_valid_id(argv[1])) {
            rc = ctl_fail(2, "'%s' is not a player id (a positive 64-bit decimal number)", argv[1]);
            goto fail;
        }
        snprintf(t->player, sizeof t->player, "%s", argv[1]);
    } else if (op != CTL_TOUR_CREATE && op != CTL_TOUR_LIST && op != CTL_TOUR_HALL &&
               op != CTL_TOUR_HALLS) {
        if (!tour_client_valid_id(argv[1])) {
            rc = ctl_fail(2, "'%s' is not a tournament id (a positive decimal number)", argv[1]);
            goto fail;
        }
        snprintf(t->id, sizeof t->id, "%s", argv[1]);
    }
    if (op == CTL_TOUR_REGISTER || op == CTL_TOUR_UNREGISTER) {
        if (!tour_client_valid_id(argv[2])) {
            rc = ctl_fail(2, "'%s' is not a player id (a positive 64-bit decimal number)", argv[2]);
            goto fail;
        }
        snprintf(t->player, sizeof t->player, "%s", argv[2]);
    }
    if (op == CTL_TOUR_CANCEL &&
        (O.reason == NULL || !ctl_tour_valid_text(O.reason, CTL_TOUR_TEXT_MAX))) {
        rc = ctl_fail(2, "tour cancel needs --reason TEXT (1..%d printable characters)",
                      CTL_TOUR_TEXT_MAX);
        goto fail;
    }
    if (asks) {
        if (O.op_id != NULL && !tour_client_valid_req(O.op_id)) {
            rc = ctl_fail(2, "--op-id '%s' must be 1..%d of [A-Za-z0-9_.:-]", O.op_id,
                          TOUR_CLIENT_REQ_MAX);
            goto fail;
        }
        if (O.op_id != NULL)
            snprintf(t->req, sizeof t->req, "%s", O.op_id);
        else
            ctl_tour_random_req(t->req, sizeof t->req);
    }
    if (op == CTL_TOUR_CREATE) {
        if (O.structure == NULL) {
            rc = ctl_fail(2, "usage: croupier-ctl %s", ctl_tour_cmds[c].usage);
            goto fail;
        }
        if (O.name != NULL && !ctl_tour_valid_text(O.name, CTL_TOUR_TEXT_MAX)) {
            rc = ctl_fail(2, "--name must be 1..%d printable characters", CTL_TOUR_TEXT_MAX);
            goto fail;
        }
        if (O.start_in != NULL) {
            char *end;
            errno = 0;
            long long v = strtoll(O.start_in, &end, 10);
            if (O.start_in[0] < '0' || O.start_in[0] > '9' || *end != '\0' || errno != 0 ||
                v > CTL_TOUR_START_MAX) {
                rc = ctl_fail(2, "--start-in-seconds '%s' must be an integer 0..%d", O.start_in,
                              CTL_TOUR_START_MAX);
                goto fail;
            }
            t->start_in_s = v;
        }
        if ((rc = ctl_tour_load_structure(t, O.structure)) != 0)
            goto fail;
        if (t->format == TOUR_FORMAT_MTT && t->start_in_s < 0) {
            rc = ctl_fail(2, "an MTT needs --start-in-seconds N (when registration ends and play "
                             "starts)");
            goto fail;
        }
        if (t->format == TOUR_FORMAT_SNG && t->start_in_s >= 0) {
            rc = ctl_fail(2, "--start-in-seconds is for an MTT: a sit & go starts when it is full");
            goto fail;
        }
    }
    if (op == CTL_TOUR_HALL) {
        char *end = NULL;
        errno = 0;
        long long v = O.every != NULL ? strtoll(O.every, &end, 10) : 0;
        if (O.structure == NULL || O.every == NULL) {
            rc = ctl_fail(2, "usage: croupier-ctl %s", ctl_tour_cmds[c].usage);
            goto fail;
        }
        if (O.every[0] < '0' || O.every[0] > '9' || *end != '\0' || errno != 0 || v < 10 ||
            v > 7 * 86400) {
            rc = ctl_fail(2, "--every-seconds '%s' must be an integer 10..%d", O.every, 7 * 86400);
            goto fail;
        }
        t->every_s = v;
        if (O.name != NULL && !ctl_tour_valid_text(O.name, CTL_TOUR_TEXT_MAX)) {
            rc = ctl_fail(2, "--name must be 1..%d printable characters", CTL_TOUR_TEXT_MAX);
            goto fail;
        }
        if ((rc = ctl_tour_load_structure(t, O.structure)) != 0)
            goto fail;
        if (t->format != TOUR_FORMAT_MATCH) {
            rc = ctl_fail(2, "a hall opens matches: the structure's format must be \"match\"");
            goto fail;
        }
    }
    *out = t;
    return 0;
fail:
    ctl_tour_free(t);
    return rc;
}

/* ---- match halls --------------------------------------------------------------------------- */

/* A hall (tour_director.h TOUR_HALLS_KEY): its id, then the hash; the directors open its
 * matches (TOUR_HALL_TICK_LUA). KEYS: hallseq, halls; ARGV: name, structure, every_ms, now. The
 * hash's key follows the layout of KEYS[1] (TOUR_LUA_KEYTAG: on a cluster, the money slot). */
static const char ctl_tour_hall_lua[] = TOUR_LUA_KEYTAG
    "local id = redis.call('INCR', KEYS[1])\n"
    "local name = ARGV[1]\n"
    "if name == '' then name = 'Hall ' .. id end\n"
    "redis.call('HSET', fam('tours') .. ':hall:' .. id, 'name', name, 'structure', ARGV[2],\n"
    "  'every_ms', ARGV[3], 't0', ARGV[4], 'count', '0', 'open', '', 'stopped', '0')\n"
    "redis.call('SADD', KEYS[2], id)\n"
    "return id\n";

static int ctl_tour_hall(ctl_tour_t *t)
{
    char every[24], now[24];
    snprintf(every, sizeof every, "%" PRId64, t->every_s * 1000);
    snprintf(now, sizeof now, "%" PRId64, ctl_tour_now_ms());
    redisReply *r = CTL_CMD("EVAL", ctl_tour_hall_lua, "2", TOUR_HALL_SEQ_KEY, TOUR_HALLS_KEY,
                            O.name ? O.name : "", t->structure, every, now);
    if (r == NULL)
        return 1;
    if (r->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        return ctl_fail(1, "tour hall: the script answered no id");
    }
    long long id = r->integer;
    freeReplyObject(r);
    if (O.json) {
        json_t *doc = json_pack("{s:I,s:I}", "hall", (json_int_t)id, "every_ms",
                                (json_int_t)(t->every_s * 1000));
        ctl_print_json(doc);
        json_decref(doc);
    } else {
        printf("%lld\n", id);
    }
    return 0;
}

static int ctl_tour_halls(void)
{
    redisReply *ids = CTL_CMD("SMEMBERS", TOUR_HALLS_KEY);
    if (ids == NULL)
        return 1;
    json_t *list = json_array();
    for (size_t i = 0; ids->type == REDIS_REPLY_ARRAY && i < ids->elements; i++) {
        char key[96];
        snprintf(key, sizeof key, "%s%s", TOUR_HALL_PREFIX, ids->element[i]->str);
        redisReply *h = CTL_CMD("HMGET", key, "name", "every_ms", "open", "count", "stopped");
        if (h == NULL) {
            json_decref(list);
            freeReplyObject(ids);
            return 1;
        }
        if (h->type == REDIS_REPLY_ARRAY && h->elements == 5) {
            const char *v[5];
            for (size_t k = 0; k < 5; k++)
                v[k] = h->element[k]->type == REDIS_REPLY_STRING ? h->element[k]->str : "";
            json_array_append_new(list, json_pack("{s:s,s:s,s:I,s:s,s:I,s:b}", "hall",
                                                  ids->element[i]->str, "name", v[0], "every_ms",
                                                  (json_int_t)strtoll(v[1], NULL, 10), "open", v[2],
                                                  "matches", (json_int_t)strtoll(v[3], NULL, 10),
                                                  "stopped", strcmp(v[4], "1") == 0));
        }
        freeReplyObject(h);
    }
    freeReplyObject(ids);
    if (O.json) {
        ctl_print_json(list);
    } else {
        size_t i;
        json_t *x;
        json_array_foreach(list, i, x)
        {
            printf("hall %s  %-24s every %llds  matches %lld  open %s\n",
                   json_string_value(json_object_get(x, "hall")),
                   json_string_value(json_object_get(x, "name")),
                   (long long)json_integer_value(json_object_get(x, "every_ms")) / 1000,
                   (long long)json_integer_value(json_object_get(x, "matches")),
                   json_string_value(json_object_get(x, "open"))[0] != '\0'
                       ? json_string_value(json_object_get(x, "open"))
                       : "-");
        }
    }
    json_decref(list);
    return 0;
}

/* ---- create ------------------------------------------------------------------------------- */

/*
 * The whole tournament in one script: its id, the meta hash (fields in docs/ops.md "tour"), the
 * index of every tournament and of the live ones, the first event of its log. The meta and log
 * keys are built from the id INCR gives, so they cannot be passed in KEYS: on one Redis (or its
 * Sentinel-managed replicas) that is all one server; on a Redis Cluster they follow the layout of
 * KEYS[1] (TOUR_LUA_KEYTAG: every key of it in the money slot, common/keytag.h).
 *   KEYS: seq, all, live
 *   ARGV: name ("" = "Tournament <id>"), structure, format, created_ms, start_at_ms
 */
static const char ctl_tour_create_lua[] = TOUR_LUA_KEYTAG
    "local id = redis.call('INCR', KEYS[1])\n"
    "local tk = fam('tour:' .. id) .. ':'\n"
    "local name = ARGV[1]\n"
    "if name == '' then name = 'Tournament ' .. id end\n"
    "redis.call('HSET', tk .. 'meta', 'id', id, 'name', name, 'structure', ARGV[2],\n"
    "  'format', ARGV[3], 'status', 'registering', 'created_ms', ARGV[4],\n"
    "  'start_at_ms', ARGV[5], 'started_ms', '0', 'ended_ms', '0', 'clock_ms', '0',\n"
    "  'level', '0', 'entries', '0', 'players', '0', 'pool', '0', 'cursor', '0-0')\n"
    "redis.call('ZADD', KEYS[2], ARGV[4], id)\n"
    "redis.call('SADD', KEYS[3], id)\n"
    "redis.call('XADD', tk .. 'log', 'MAXLEN', '~', '10000', '*', 'event', 'created')\n"
    "return id\n";

/* By entity: the id, the meta and log in {t:<id>}, then the index, one slot each
 * (TOUR_CREATE_META_LUA, tour_director.h). 0 with *id, or 1 (said). */
static int ctl_tour_create_entity(ctl_tour_t *t, const char *format, const char *created,
                                  const char *start_at, long long *id)
{
    redisReply *r = CTL_CMD("INCR", TOUR_SEQ_KEY);
    if (r == NULL)
        return 1;
    bool ok = r->type == REDIS_REPLY_INTEGER;
    *id = ok ? r->integer : 0;
    freeReplyObject(r);
    if (!ok)
        return ctl_fail(1, "tour create: no id");
    char idt[24], meta[TOUR_KEY_MAX], log[TOUR_KEY_MAX];
    snprintf(idt, sizeof idt, "%lld", *id);
    tour_client_key(meta, sizeof meta, idt, "meta");
    tour_client_key(log, sizeof log, idt, "log");
    redisContext *c = ctl_redis_for(meta); /* the tournament's slot's master */
    if (c == NULL)
        return 1;
    const char *argv[] = {"EVAL",  TOUR_CREATE_META_LUA, "2",          meta,   log,
                          idt,     O.name ? O.name : "", t->structure, format, created,
                          start_at};
    r = redisCommandArgv(c, 11, argv, NULL);
    ok = r != NULL && r->type == REDIS_REPLY_INTEGER;
    freeReplyObject(r);
    ctl_redis_done(c);
    if (!ok)
        return ctl_fail(1, "tour create: the meta of %s was not written", idt);
    r = CTL_CMD("EVAL", TOUR_CREATE_INDEX_LUA, "2", TOUR_ALL_KEY, TOUR_LIVE_KEY, created, idt);
    if (r == NULL)
        return 1;
    ok = r->type == REDIS_REPLY_INTEGER;
    freeReplyObject(r);
    return ok ? 0 : ctl_fail(1, "tour create: %s was not indexed", idt);
}

static int ctl_tour_create(ctl_tour_t *t)
{
    int64_t now = ctl_tour_now_ms();
    char created[24], start_at[24];
    snprintf(created, sizeof created, "%" PRId64, now);
    snprintf(start_at, sizeof start_at, "%" PRId64,
             t->format == TOUR_FORMAT_MTT || (t->format == TOUR_FORMAT_MATCH && t->start_in_s >= 0)
                 ? now + t->start_in_s * 1000
                 : 0);
    /* A match starts when full, or at --start-in-seconds with min_entrants (docs/tournaments.md
     * "Match halls: the director"). */
    const char *format = t->format == TOUR_FORMAT_MTT     ? "mtt"
                         : t->format == TOUR_FORMAT_MATCH ? "match"
                                                          : "sng";
    long long id;
    if (keytag_tour_entity()) {
        int rc = ctl_tour_create_entity(t, format, created, start_at, &id);
        if (rc != 0)
            return rc;
    } else {
        redisReply *r =
            CTL_CMD("EVAL", ctl_tour_create_lua, "3", TOUR_SEQ_KEY, TOUR_ALL_KEY, TOUR_LIVE_KEY,
                    O.name ? O.name : "", t->structure, format, created, start_at);
        if (r == NULL)
            return 1;
        if (r->type != REDIS_REPLY_INTEGER) {
            freeReplyObject(r);
            return ctl_fail(1, "tour create: the script answered no id");
        }
        id = r->integer;
        freeReplyObject(r);
    }
    if (O.json) {
        char key[TOUR_KEY_MAX], idt[24];
        snprintf(idt, sizeof idt, "%lld", id);
        tour_client_key(key, sizeof key, idt, "meta");
        char name[CTL_TOUR_TEXT_MAX + 32];
        snprintf(name, sizeof name, "%s%s%s", O.name ? "" : "Tournament ", O.name ? O.name : "",
                 O.name ? "" : idt);
        json_t *doc =
            json_pack("{s:I,s:s,s:s,s:s,s:I,s:I,s:s}", "id", (json_int_t)id, "name", name, "format",
                      format, "status", "registering", "created_ms", (json_int_t)now, "start_at_ms",
                      (json_int_t)strtoll(start_at, NULL, 10), "meta_key", key);
        ctl_print_json(doc);
        json_decref(doc);
    } else {
        printf("%lld\n", id);
    }
    return 0;
}

/* ---- list / show -------------------------------------------------------------------------- */

/* The meta fields that hold numbers (the rest are text; structure is JSON). */
static bool ctl_tour_numeric(const char *field)
{
    static const char *const nums[] = {"id",       "created_ms", "start_at_ms", "started_ms",
                                       "ended_ms", "clock_ms",   "level",       "entries",
                                       "players",  "pool",       NULL};
    for (const char *const *n = nums; *n != NULL; n++)
        if (strcmp(*n, field) == 0)
            return true;
    return false;
}

/* A stored value as JSON: an integer when field is numeric and it parses, else the text. */
static json_t *ctl_tour_value(const char *field, const char *v, size_t len)
{
    if (ctl_tour_numeric(field) && len > 0 && len < 21) {
        char buf[24], *end;
        memcpy(buf, v, len);
        buf[len] = '\0';
        errno = 0;
        long long n = strtoll(buf, &end, 10);
        if (*end == '\0' && errno == 0)
            return json_integer((json_int_t)n);
    }
    return json_stringn(v, len);
}

/* The meta hash as an object (numbers as integers, structure parsed); an empty object when the
 * tournament does not exist; NULL on a Redis error. */
static json_t *ctl_tour_meta(const char *id)
{
    char key[TOUR_KEY_MAX];
    tour_client_key(key, sizeof key, id, "meta");
    redisReply *r = CTL_CMD("HGETALL", key);
    if (r == NULL)
        return NULL;
    json_t *o = json_object();
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        char *f = strndup(r->element[i]->str, r->element[i]->len);
        const redisReply *v = r->element[i + 1];
        json_t *jv = NULL;
        if (strcmp(f, "structure") == 0)
            jv = json_loadb(v->str, v->len, 0, NULL);
        if (jv == NULL)
            jv = ctl_tour_value(f, v->str, v->len);
        json_object_set_new(o, f, jv);
        free(f);
    }
    freeReplyObject(r);
    return o;
}

/* The owning director's id (the meta's owner_id) while the owner key exists, else JSON null.
 * NULL on a Redis error. */
static json_t *ctl_tour_owner(const char *id, json_t *meta)
{
    char key[TOUR_KEY_MAX];
    tour_client_key(key, sizeof key, id, "owner");
    redisReply *r = CTL_CMD("EXISTS", key);
    if (r == NULL)
        return NULL;
    bool owned = r->type == REDIS_REPLY_INTEGER && r->integer > 0;
    freeReplyObject(r);
    json_t *o = json_object_get(meta, "owner_id");
    if (!owned)
        return json_null();
    return json_is_string(o) ? json_incref(o) : json_string("?");
}

static json_int_t ctl_tour_int(json_t *o, const char *field)
{
    return json_integer_value(json_object_get(o, field));
}

static const char *ctl_tour_str(json_t *o, const char *field)
{
    const char *s = json_string_value(json_object_get(o, field));
    return s ? s : "-";
}

/* When play starts or started, for people: started_ms, else start_at_ms, else (a sit & go not
 * yet full) "when full". */
static void ctl_tour_start_text(json_t *meta, char *buf, size_t len)
{
    int64_t started = ctl_tour_int(meta, "started_ms"), at = ctl_tour_int(meta, "start_at_ms");
    if (started > 0 || at > 0)
        ctl_time(started > 0 ? started : at, buf, len);
    else
        snprintf(buf, len, "%s",
                 strcmp(ctl_tour_str(meta, "format"), "mtt") != 0 ? "when full" : "-");
}

static int ctl_tour_list(void)
{
    char lim[24];
    snprintf(lim, sizeof lim, "%ld", O.limit - 1);
    redisReply *z = CTL_CMD("ZREVRANGE", TOUR_ALL_KEY, "0", lim, "WITHSCORES");
    if (z == NULL)
        return 1;
    redisReply *n = CTL_CMD("ZCARD", TOUR_ALL_KEY);
    long long total = n && n->type == REDIS_REPLY_INTEGER ? n->integer : 0;
    if (n != NULL)
        freeReplyObject(n);
    json_t *rows = json_array();
    int rc = 0;
    for (size_t i = 0; z->type == REDIS_REPLY_ARRAY && i + 1 < z->elements; i += 2) {
        char id[24];
        snprintf(id, sizeof id, "%.*s", (int)z->element[i]->len, z->element[i]->str);
        json_t *meta = ctl_tour_meta(id);
        json_t *owner = meta ? ctl_tour_owner(id, meta) : NULL;
        if (owner == NULL) {
            json_decref(meta);
            rc = 1;
            break;
        }
        char start[48];
        ctl_tour_start_text(meta, start, sizeof start);
        json_t *row =
            json_pack("{s:I,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:s}", "id",
                      (json_int_t)strtoull(id, NULL, 10), "name", ctl_tour_str(meta, "name"),
                      "format", ctl_tour_str(meta, "format"), "status",
                      json_object_size(meta) ? ctl_tour_str(meta, "status") : "(meta missing)",
                      "entries", ctl_tour_int(meta, "entries"), "players",
                      ctl_tour_int(meta, "players"), "pool", ctl_tour_int(meta, "pool"),
                      "created_ms", (json_int_t)strtoll(z->element[i + 1]->str, NULL, 10),
                      "start_at_ms", ctl_tour_int(meta, "start_at_ms"), "started_ms",
                      ctl_tour_int(meta, "started_ms"), "owner", owner, "start", start);
        json_decref(meta);
        json_array_append_new(rows, row);
    }
    freeReplyObject(z);
    if (rc != 0) {
        json_decref(rows);
        return rc;
    }
    /* newest first; equal creation times: the higher id (ZREVRANGE would compare the ids as
     * text, "9" after "10") */
    size_t nr = json_array_size(rows);
    for (size_t a = 1; a < nr; a++)
        for (size_t b = a; b > 0; b--) {
            json_t *x = json_array_get(rows, b - 1), *y = json_array_get(rows, b);
            json_int_t cx = ctl_tour_int(x, "created_ms"), cy = ctl_tour_int(y, "created_ms");
            if (cx > cy || (cx == cy && ctl_tour_int(x, "id") > ctl_tour_int(y, "id")))
                break;
            json_t *tmp = json_incref(y);
            json_array_set(rows, b, x);
            json_array_set_new(rows, b - 1, tmp);
        }
    json_t *doc = json_pack("{s:I,s:o}", "total", (json_int_t)total, "tournaments", rows);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        static const char *const cols[] = {"id",      "name", "format", "status", "entries",
                                           "players", "pool", "start",  "owner",  NULL};
        static const char *const heads[] = {"ID",   "NAME", "FORMAT",      "STATUS", "ENTRIES",
                                            "LEFT", "POOL", "START (UTC)", "OWNER"};
        ctl_table(rows, cols, heads);
        if ((long long)nr < total)
            printf("(%zu of %lld shown; --limit N for more)\n", nr, total);
    }
    json_decref(doc);
    return 0;
}

/* The structure's summary for show: seats, stack, buy-in, fee, levels, the blinds of the step
 * at the meta's `level` (an index into levels[]). NULL when the structure does not parse. */
static json_t *ctl_tour_summary(const char *structure, json_int_t level)
{
    char err[256];
    tour_structure_t *s = NULL;
    if (structure == NULL ||
        tour_structure_parse(structure, strlen(structure), &s, err, sizeof err) != 0)
        return NULL;
    json_t *o =
        json_pack("{s:i,s:I,s:I,s:I,s:i,s:I}", "seats", (int)s->seats_per_table, "stack",
                  (json_int_t)s->starting_stack, "buy_in", (json_int_t)s->buy_in, "fee",
                  (json_int_t)s->fee, "levels", (int)s->nlevels, "level", (json_int_t)level);
    tour_client_level_t lv;
    if (tour_client_level(s, level, 0, &lv) == 0 && lv.level != NULL) {
        const tour_level_t *l = lv.level;
        json_object_set_new(o, "current",
                            l->is_break
                                ? json_pack("{s:b,s:i,s:I}", "break", 1, "number", (int)l->number,
                                            "duration_ms", (json_int_t)l->duration_ms)
                                : json_pack("{s:i,s:I,s:I,s:I,s:b,s:I}", "number", (int)l->number,
                                            "small_blind", (json_int_t)l->small_blind, "big_blind",
                                            (json_int_t)l->big_blind, "ante", (json_int_t)l->ante,
                                            "big_blind_ante", l->big_blind_ante, "duration_ms",
                                            (json_int_t)l->duration_ms));
    }
    tour_structure_destroy(s);
    return o;
}

/*
 * An HGETALL reply of JSON values as rows: each row {name: the field, then fields[] of the value,
 * null when absent}; a value that does not parse gets bad_field "(does not parse)". Frees r.
 */
static json_t *ctl_tour_hash_rows(redisReply *r, const char *name, const char *const *fields,
                                  const char *bad_field)
{
    json_t *rows = json_array();
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        json_t *e = json_loadb(r->element[i + 1]->str, r->element[i + 1]->len, 0, NULL);
        json_t *row = json_object();
        json_object_set_new(row, name, json_stringn(r->element[i]->str, r->element[i]->len));
        for (const char *const *f = fields; *f != NULL; f++) {
            json_t *v = json_object_get(e, *f);
            json_object_set(row, *f, v ? v : json_null());
        }
        if (!json_is_object(e))
            json_object_set_new(row, bad_field, json_string("(does not parse)"));
        json_decref(e);
        json_array_append_new(rows, row);
    }
    freeReplyObject(r);
    return rows;
}

/* Sorts rows by the integer fields first, then second, ascending (an insertion sort: stable). */
static void ctl_tour_sort_rows(json_t *rows, const char *first, const char *second)
{
    size_t n = json_array_size(rows);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
            json_t *x = json_array_get(rows, b - 1), *y = json_array_get(rows, b);
            json_int_t fx = ctl_tour_int(x, first), fy = ctl_tour_int(y, first);
            if (fx < fy || (fx == fy && ctl_tour_int(x, second) <= ctl_tour_int(y, second)))
                break;
            json_t *tmp = json_incref(y);
            json_array_set(rows, b, x);
            json_array_set_new(rows, b - 1, tmp);
        }
}

/* The entries hash as rows {player, entry, entries, stack, state, place, prize, item}, sorted by
 * place (0: still in, first) then entry. NULL on a Redis error. */
static json_t *ctl_tour_entries(const char *id)
{
    char key[TOUR_KEY_MAX];
    tour_client_key(key, sizeof key, id, "entries");
    redisReply *r = CTL_CMD("HGETALL", key);
    if (r == NULL)
        return NULL;
    static const char *const fields[] = {"entry", "entries", "stack", "state",
                                         "place", "prize",   "item",  NULL};
    json_t *rows = ctl_tour_hash_rows(r, "player", fields, "state");
    ctl_tour_sort_rows(rows, "place", "entry");
    return rows;
}

/* The last CTL_TOUR_LOG_SHOWN events of the log, oldest first, each with "time" (ms) and
 * "detail" (its other fields, "k=v ..."). NULL on a Redis error. */
static json_t *ctl_tour_log(const char *id)
{
    char key[TOUR_KEY_MAX], count[16];
    tour_client_key(key, sizeof key, id, "log");
    snprintf(count, sizeof count, "%d", CTL_TOUR_LOG_SHOWN);
    redisReply *r = CTL_CMD("XREVRANGE", key, "+", "-", "COUNT", count);
    if (r == NULL)
        return NULL;
    json_t *events = json_array();
    for (size_t i = r->type == REDIS_REPLY_ARRAY ? r->elements : 0; i > 0; i--) {
        json_t *e = ctl_stream_entry(r->element[i - 1]);
        if (e == NULL)
            continue;
        char detail[512] = "";
        size_t off = 0;
        const char *k;
        json_t *v;
        json_object_foreach(e, k, v)
        {
            if (strcmp(k, "stream_id") == 0 || strcmp(k, "event") == 0)
                continue;
            if (off < sizeof detail)
                off += (size_t)snprintf(detail + off, sizeof detail - off, "%s%s=%s",
                                        off ? " " : "", k, json_string_value(v));
        }
        json_object_set_new(e, "ms", json_integer(strtoll(ctl_tour_str(e, "stream_id"), NULL, 10)));
        json_object_set_new(e, "detail", json_string(detail));
        json_array_append_new(events, e);
    }
    freeReplyObject(r);
    return events;
}

static int ctl_tour_show(ctl_tour_t *t)
{
    json_t *meta = ctl_tour_meta(t->id);
    if (meta == NULL)
        return 1;
    if (json_object_size(meta) == 0) {
        json_decref(meta);
        return ctl_fail(1, "no tournament %s", t->id);
    }
    json_t *owner = ctl_tour_owner(t->id, meta);
    json_t *entries = owner ? ctl_tour_entries(t->id) : NULL;
    json_t *events = entries ? ctl_tour_log(t->id) : NULL;
    char ekey[TOUR_KEY_MAX], *epoch = NULL;
    bool found = false;
    tour_client_key(ekey, sizeof ekey, t->id, "epoch");
    if (events == NULL || ctl_get(ekey, &epoch, &found) != 0) {
        json_decref(meta);
        json_decref(owner);
        json_decref(entries);
        json_decref(events);
        return 1;
    }
    json_t *st = json_object_get(meta, "structure");
    char *stext = json_is_object(st) ? json_dumps(st, JSON_COMPACT) : NULL;
    json_t *summary = ctl_tour_summary(stext, ctl_tour_int(meta, "level"));
    free(stext);
    json_t *doc = json_pack("{s:I,s:o,s:o,s:o,s:o,s:o}", "id",
                            (json_int_t)strtoull(t->id, NULL, 10), "meta", meta, "owner", owner,
                            "epoch", found ? json_integer(strtoll(epoch, NULL, 10)) : json_null(),
                            "entries", entries, "events", events);
    json_object_set_new(doc, "structure_summary", summary ? summary : json_null());
    free(epoch);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char created[48], start[48], ended[48];
        ctl_time(ctl_tour_int(meta, "created_ms"), created, sizeof created);
        ctl_tour_start_text(meta, start, sizeof start);
        ctl_time(ctl_tour_int(meta, "ended_ms"), ended, sizeof ended);
        printf("tournament %s \"%s\": %s, %s\n", t->id, ctl_tour_str(meta, "name"),
               ctl_tour_str(meta, "format"), ctl_tour_str(meta, "status"));
        if (summary != NULL) {
            printf("  structure: %" JSON_INTEGER_FORMAT
                   " seats a table, stack %" JSON_INTEGER_FORMAT ", buy-in %" JSON_INTEGER_FORMAT
                   "+%" JSON_INTEGER_FORMAT ", %" JSON_INTEGER_FORMAT " level%s\n",
                   ctl_tour_int(summary, "seats"), ctl_tour_int(summary, "stack"),
                   ctl_tour_int(summary, "buy_in"), ctl_tour_int(summary, "fee"),
                   ctl_tour_int(summary, "levels"),
                   ctl_tour_int(summary, "levels") == 1 ? "" : "s");
            json_t *cur = json_object_get(summary, "current");
            if (cur == NULL)
                printf("  level index %" JSON_INTEGER_FORMAT ": beyond the schedule\n",
                       ctl_tour_int(summary, "level"));
            else if (json_is_true(json_object_get(cur, "break")))
                printf("  level index %" JSON_INTEGER_FORMAT ": a break\n",
                       ctl_tour_int(summary, "level"));
            else
                printf("  level %" JSON_INTEGER_FORMAT " (index %" JSON_INTEGER_FORMAT
                       "): blinds %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT
                       ", ante %" JSON_INTEGER_FORMAT "%s\n",
                       ctl_tour_int(cur, "number"), ctl_tour_int(summary, "level"),
                       ctl_tour_int(cur, "small_blind"), ctl_tour_int(cur, "big_blind"),
                       ctl_tour_int(cur, "ante"),
                       json_is_true(json_object_get(cur, "big_blind_ante")) ? " (big blind ante)"
                                                                            : "");
        } else {
            printf("  structure: does not parse\n");
        }
        printf("  created %s, starts %s, ended %s; level clock %" JSON_INTEGER_FORMAT " ms\n",
               created, start, ended, ctl_tour_int(meta, "clock_ms"));
        printf("  entries %" JSON_INTEGER_FORMAT ", players left %" JSON_INTEGER_FORMAT
               ", pool %" JSON_INTEGER_FORMAT "\n",
               ctl_tour_int(meta, "entries"), ctl_tour_int(meta, "players"),
               ctl_tour_int(meta, "pool"));
        json_t *ep = json_object_get(doc, "epoch");
        char etext[24] = "-";
        if (json_is_integer(ep))
            snprintf(etext, sizeof etext, "%" JSON_INTEGER_FORMAT, json_integer_value(ep));
        printf("  owner: %s (epoch %s), request cursor %s\n",
               json_is_string(owner) ? json_string_value(owner) : "-", etext,
               ctl_tour_str(meta, "cursor"));
        printf("\nentries:\n");
        static const char *const ecols[] = {"player", "entry", "entries", "stack", "state",
                                            "place",  "prize", "item",    NULL};
        static const char *const eheads[] = {"PLAYER", "ENTRY", "ENTRIES", "STACK",
                                             "STATE",  "PLACE", "PRIZE",   "ITEM"};
        ctl_table(entries, ecols, eheads);
        printf("\nevents (the last %d):\n", CTL_TOUR_LOG_SHOWN);
        size_t i;
        json_t *e;
        json_array_foreach(events, i, e)
        {
            char tm[48];
            ctl_time(ctl_tour_int(e, "ms"), tm, sizeof tm);
            json_object_set_new(e, "time", json_string(tm));
        }
        static const char *const lcols[] = {"stream_id", "time", "event", "detail", NULL};
        static const char *const lheads[] = {"ID", "TIME (UTC)", "EVENT", "DETAIL"};
        ctl_table(events, lcols, lheads);
    }
    json_decref(doc);
    return 0;
}

/* A player's item prizes ({croupier:items}:player:<p>, on a cluster {croupier:money}:items:...;
 * field <tournament>:<place>, written by the director with the place: docs/tournaments.md
 * "Items"), by tournament then place. */
static int ctl_tour_items(ctl_tour_t *t)
{
    char key[TOUR_KEY_MAX];
    snprintf(key, sizeof key, "%s:player:%s", keytag_items(), t->player);
    redisReply *r = CTL_CMD("HGETALL", key);
    if (r == NULL)
        return 1;
    static const char *const fields[] = {"tournament", "place", "item", NULL};
    json_t *rows = ctl_tour_hash_rows(r, "field", fields, "item");
    ctl_tour_sort_rows(rows, "tournament", "place");
    size_t n = json_array_size(rows);
    json_t *doc =
        json_pack("{s:I,s:o}", "player", (json_int_t)strtoull(t->player, NULL, 10), "items", rows);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        printf("player %s: %zu item prize%s\n", t->player, n, n == 1 ? "" : "s");
        static const char *const cols[] = {"tournament", "place", "item", NULL};
        static const char *const heads[] = {"TOURNAMENT", "PLACE", "ITEM"};
        if (n > 0)
            ctl_table(rows, cols, heads);
    }
    json_decref(doc);
    return 0;
}

/* ---- register / unregister / cancel ------------------------------------------------------- */

/* Prints the director's answer (JSON text, tour_client_answer_parse) and returns 0 when it says
 * ok, else 1. */
static int ctl_tour_answer(ctl_tour_t *t, const char *text, size_t len)
{
    tour_client_answer_t ans;
    if (tour_client_answer_parse(text, len, &ans) != 0)
        return ctl_fail(1, "request %s: the director's answer does not parse: %.*s", t->req,
                        (int)(len > 200 ? 200 : len), text);
    json_t *a = json_loadb(text, len, 0, NULL);
    if (O.json)
        ctl_print_json(a);
    int rc = 0;
    if (!ans.ok) {
        const char *why = json_string_value(json_object_get(a, "error"));
        if (why == NULL)
            why = json_string_value(json_object_get(a, "detail"));
        rc = ctl_fail(1, "refused: %s%s%s%s", ans.code_text[0] ? ans.code_text : "-",
                      why ? " (" : "", why ? why : "", why ? ")" : "");
    } else if (!O.json) {
        switch (t->op) {
        case CTL_TOUR_REGISTER:
            if (ans.has_entry)
                printf("registered player %s in tournament %s (entry %" PRId64 ")\n", t->player,
                       t->id, ans.entry);
            else
                printf("registered player %s in tournament %s\n", t->player, t->id);
            break;
        case CTL_TOUR_UNREGISTER:
            printf("unregistered player %s from tournament %s\n", t->player, t->id);
            break;
        default:
            printf("cancelled tournament %s\n", t->id);
            break;
        }
    }
    json_decref(a);
    return rc;
}

/*
 * The request (XADD to the tournament's stream :in, tour_client_request), then its answer: BLPOP
 * of :reply:<req> for up to --timeout-ms. The tournament must exist (its meta) and not be over
 * (then TOURNAMENT_OVER is answered here: no director reads its stream); the director decides
 * everything else.
 */
static int ctl_tour_ask(ctl_tour_t *t)
{
    char key[TOUR_KEY_MAX];
    tour_client_key(key, sizeof key, t->id, "meta");
    redisReply *r = CTL_CMD("HGET", key, "status");
    if (r == NULL)
        return 1;
    bool exists = r->type == REDIS_REPLY_STRING;
    bool over = exists && tour_client_status_over(tour_client_status_parse(r->str, r->len));
    freeReplyObject(r);
    if (!exists)
        return ctl_fail(1, "no tournament %s", t->id);
    /* Nobody reads the stream of a tournament that is over (tour_director.h): answered here. */
    if (over)
        return ctl_fail(1, "refused: TOURNAMENT_OVER (tournament %s is over)", t->id);

    static const tour_client_op_t ops[] = {[CTL_TOUR_REGISTER] = TOUR_CLIENT_REGISTER,
                                           [CTL_TOUR_UNREGISTER] = TOUR_CLIENT_UNREGISTER,
                                           [CTL_TOUR_CANCEL] = TOUR_CLIENT_CANCEL};
    tour_client_request_t rq;
    if (tour_client_request(&rq, t->id, ops[t->op], t->req, t->player, "ctl", O.reason) != 0)
        return ctl_fail(2, "tour %s: bad arguments", ctl_tour_cmds[t->op].name);
    r = ctl_cmd(rq.argc, rq.argv);
    if (r == NULL)
        return 1;
    freeReplyObject(r);

    /* The socket's timeout must outlast the BLPOP's. */
    struct timeval tv = {(O.timeout_ms + 2000) / 1000, ((O.timeout_ms + 2000) % 1000) * 1000};
    redisSetTimeout(R, tv);
    char secs[32];
    snprintf(secs, sizeof secs, "%ld.%03ld", O.timeout_ms / 1000, O.timeout_ms % 1000);
    r = CTL_CMD("BLPOP", rq.reply_key, secs);
    if (r == NULL)
        return 1;
    int rc;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING)
        rc = ctl_tour_answer(t, r->element[1]->str, r->element[1]->len);
    else
        rc = ctl_fail(1,
                      "no director answered within %ld ms (is croupier-director running?); the "
                      "request stays queued as %s",
                      O.timeout_ms, t->req);
    freeReplyObject(r);
    return rc;
}

int ctl_tour_run(ctl_tour_t *t)
{
    int rc;
    switch (t->op) {
    case CTL_TOUR_CREATE:
        rc = ctl_tour_create(t);
        break;
    case CTL_TOUR_LIST:
        rc = ctl_tour_list();
        break;
    case CTL_TOUR_SHOW:
        rc = ctl_tour_show(t);
        break;
    case CTL_TOUR_HALL:
        rc = ctl_tour_hall(t);
        break;
    case CTL_TOUR_HALLS:
        rc = ctl_tour_halls();
        break;
    case CTL_TOUR_ITEMS:
        rc = ctl_tour_items(t);
        break;
    default:
        rc = ctl_tour_ask(t);
        break;
    }
    ctl_tour_free(t);
    return rc;
}
