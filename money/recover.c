/*
 * Recovery of the chips a dead server held (money.h "Held chips", docs/queues.md).
 *
 * Four steps, each safe to repeat and to race with another recoverer:
 *   1. the recovery script without accounts: it judges the epoch (dead, claimable or live) and,
 *      for a claim, moves the fence, so nothing of the old epoch can be written afterwards;
 *   2. HGETALL of the held HASH (the fence no longer admits new entries);
 *   3. every round in progress whose round has no settle record gets a voided hand history
 *      (history script, "void" mode, at most once per round id);
 *   4. the accounts go back to their owners in chunks, and the round records are forgotten.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "keytag.h"
#include "money.h"
#include "xmalloc.h"

#define RECOVER_SCRIPT 5 /* SCRIPT_RECOVER in money_int.h */
#define RECOVER_CHUNK 64 /* accounts per script call */

typedef struct {
    int argc, cap;
    char **argv;
    size_t *lens;
} rv_argv_t;

static void rv_push(rv_argv_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rv_push(rv_argv_t *a, const char *fmt, ...)
{
    if (a->argc == a->cap) {
        a->cap = a->cap != 0 ? 2 * a->cap : 32;
        a->argv = xrealloc(a->argv, (size_t)a->cap * sizeof *a->argv);
        a->lens = xrealloc(a->lens, (size_t)a->cap * sizeof *a->lens);
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort(); /* out of memory: see xmalloc.h */
    a->argv[a->argc] = s;
    a->lens[a->argc] = (size_t)n;
    a->argc++;
}

static void rv_free(rv_argv_t *a)
{
    for (int i = 0; i < a->argc; i++)
        free(a->argv[i]);
    free(a->argv);
    free(a->lens);
    *a = (rv_argv_t){0};
}

typedef struct {
    char *account, *owner;
} rv_pair_t;

/* One call of the recovery script with pairs [0, n) and the round fields; fills *out. */
static int rv_call(redisContext *c, const char *service, uint32_t slot, uint64_t epoch,
                   const char *mode, const char *token, const rv_pair_t *pairs, size_t n,
                   char *const *offers, size_t noffers, char *const *fields, size_t nfields,
                   money_recover_result_t *out)
{
    rv_argv_t a = {0};
    rv_push(&a, "EVALSHA");
    rv_push(&a, "%s", money_script_sha(RECOVER_SCRIPT));
    rv_push(&a, "%zu", 6 + 2 * n + noffers);
    char lt[160];
    keytag_lease(lt, sizeof lt, service);
    rv_push(&a, "%s:slot:%" PRIu32 ":epoch", lt, slot);
    rv_push(&a, "%s:slot:%" PRIu32, lt, slot);
    rv_push(&a, "%s:epoch", lt);
    rv_push(&a, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    rv_push(&a, "%s", MONEY_HELD_INDEX_KEY);
    rv_push(&a, "{croupier:money}:recovered:%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    for (size_t i = 0; i < n; i++) {
        rv_push(&a, "{croupier:money}:wallet:%s", pairs[i].account);
        rv_push(&a, "{croupier:money}:wallet:%s", pairs[i].owner);
    }
    for (size_t i = 0; i < noffers; i++)
        rv_push(&a, "%s%s", MONEY_HANDOFF_KEY_PREFIX, offers[i]);
    rv_push(&a, "%" PRIu64, epoch);
    rv_push(&a, "%s", mode);
    rv_push(&a, "%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    rv_push(&a, "%s", token != NULL ? token : "");
    rv_push(&a, "%ld", MONEY_RECORD_TTL_S);
    rv_push(&a, "%zu", n);
    for (size_t i = 0; i < n; i++) {
        rv_push(&a, "%s", pairs[i].account);
        rv_push(&a, "%s", pairs[i].owner);
    }
    rv_push(&a, "%zu", noffers);
    for (size_t i = 0; i < noffers; i++)
        rv_push(&a, "%s", offers[i]);
    for (size_t i = 0; i < nfields; i++)
        rv_push(&a, "%s", fields[i]);
    int rc = MONEY_ERR_REDIS;
    for (int attempt = 0; attempt < 2; attempt++) {
        redisReply *r = redisCommandArgv(c, a.argc, (const char **)a.argv, a.lens);
        if (r == NULL) {
            snprintf(out->error, sizeof out->error, "redis: %s", c->errstr);
            rc = -EIO;
            break;
        }
        if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0 && attempt == 0) {
            freeReplyObject(r);
            free(a.argv[0]);
            free(a.argv[1]);
            a.argv[0] = xstrdup("EVAL");
            a.lens[0] = 4;
            a.argv[1] = xstrdup(money_script_text(RECOVER_SCRIPT));
            a.lens[1] = strlen(a.argv[1]);
            continue;
        }
        if (r->type == REDIS_REPLY_ERROR) {
            snprintf(out->error, sizeof out->error, "%s", r->str);
            rc = strstr(r->str, "MONEY_ALIVE") != NULL      ? MONEY_ERR_ALIVE
                 : strstr(r->str, "MONEY_BAD_ARGS") != NULL ? MONEY_ERR_BAD_ARGS
                                                            : MONEY_ERR_REDIS;
        } else if (r->type == REDIS_REPLY_ARRAY && r->elements == 5 &&
                   r->element[1]->type == REDIS_REPLY_INTEGER &&
                   r->element[2]->type == REDIS_REPLY_INTEGER &&
                   r->element[4]->type == REDIS_REPLY_INTEGER) {
            out->chips += r->element[1]->integer;
            out->accounts += (int)r->element[2]->integer;
            if (r->element[4]->integer > 0)
                out->new_fence = (uint64_t)r->element[4]->integer;
            rc = 0;
        } else {
            snprintf(out->error, sizeof out->error, "unexpected reply shape (type %d)", r->type);
        }
        freeReplyObject(r);
        break;
    }
    rv_free(&a);
    return rc;
}

char *money_void_history(const char *record, char *round, size_t rlen, char *game, size_t glen)
{
    json_error_t jerr;
    json_t *h = json_loads(record, 0, &jerr);
    const char *r = json_string_value(json_object_get(h, "round"));
    const char *g = json_string_value(json_object_get(h, "game"));
    json_t *seats = json_object_get(h, "seats");
    if (r == NULL || g == NULL || !json_is_array(seats) || strlen(r) >= rlen || strlen(g) >= glen) {
        json_decref(h);
        return NULL;
    }
    snprintf(round, rlen, "%s", r);
    snprintf(game, glen, "%s", g);
    json_t *results = json_array();
    size_t i;
    json_t *seat;
    json_array_foreach(seats, i, seat)
    {
        json_array_append_new(
            results, json_pack("{s:O,s:i}", "seat", json_object_get(seat, "seat"), "delta", 0));
    }
    json_object_set_new(h, "results", results);
    if (!json_is_array(json_object_get(h, "cards")))
        json_object_set_new(h, "cards", json_array());
    if (!json_is_array(json_object_get(h, "actions")))
        json_object_set_new(h, "actions", json_array());
    json_object_set_new(h, "shown", json_array());
    json_object_set_new(h, "rake", json_integer(0));
    json_object_set_new(h, "outcome", json_string("voided"));
    json_object_set_new(h, "void_reason", json_string("VOID_SERVER_CRASHED"));
    json_object_set_new(h, "detail",
                        json_string("the server stopped without a clean exit; no chip moved and "
                                    "the stacks went back to the wallets"));
    char *json = json_dumps(h, JSON_COMPACT);
    json_decref(h);
    return json;
}

/* Step 3 for one round record: its voided history, unless the round settled. Returns 1 when a
 * history was written now, 0 when none was needed (settled, or written before), -EIO. */
static int rv_void_round(redisContext *c, const char *value, long maxlen)
{
    char round[MONEY_ID_MAX + 1], game[MONEY_NAME_MAX + 1];
    char *json = money_void_history(value, round, sizeof round, game, sizeof game);
    if (json == NULL) {
        log_emit(LOG_ERROR, "money_recover_bad_round_record", "{s:s}", "value", value);
        return 0;
    }
    char key[MONEY_ID_MAX + 64];
    money_key_round(round, key, sizeof key);
    redisReply *r = redisCommand(c, "EXISTS %s", key);
    if (r == NULL) {
        free(json);
        return -EIO;
    }
    bool settled = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (settled) {
        free(json);
        return 0;
    }
    money_result_t res;
    int rc = money_sync_history_void(c, round, game, json, maxlen, &res);
    free(json);
    if (rc != MONEY_OK && rc != -EIO)
        log_emit(LOG_ERROR, "money_recover_void_failed", "{s:s,s:i,s:s}", "round", round, "status",
                 rc, "error", res.error);
    if (rc == -EIO)
        return -EIO;
    return rc == MONEY_OK && !res.replayed ? 1 : 0;
}

int money_recover(redisContext *c, const char *service, uint32_t slot, uint64_t epoch,
                  money_recover_mode_t mode, const char *token, long history_maxlen,
                  money_recover_result_t *out)
{
    memset(out, 0, sizeof *out);
    if (c == NULL || !money_valid_name(service) ||
        (mode == MONEY_RECOVER_SELF && (token == NULL || token[0] == '\0'))) {
        snprintf(out->error, sizeof out->error, "invalid service, mode or token");
        return MONEY_ERR_BAD_ARGS;
    }
    static const char *const modes[] = {"dead", "claim", "self"};
    const char *m = modes[mode];
    int rc = rv_call(c, service, slot, epoch, m, token, NULL, 0, NULL, 0, NULL, 0, out);
    if (rc != 0)
        return rc;
    /* After a claim the fence has moved: the rest is the recovery of a dead epoch. */
    if (mode == MONEY_RECOVER_CLAIM)
        m = "dead";

    char held[256];
    money_key_held(service, slot, epoch, held, sizeof held);
    redisReply *r = redisCommand(c, "HGETALL %s", held);
    if (r == NULL) {
        snprintf(out->error, sizeof out->error, "redis: %s", c->errstr);
        return -EIO;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0) {
        snprintf(out->error, sizeof out->error, "HGETALL of the held records: unexpected reply");
        freeReplyObject(r);
        return MONEY_ERR_REDIS;
    }
    size_t nfields = r->elements / 2, npairs = 0, nrounds = 0, noffers = 0;
    rv_pair_t *pairs = xcalloc(nfields + 1, sizeof *pairs);
    char **rounds = xcalloc(nfields + 1, sizeof *rounds);
    char **offers = xcalloc(nfields + 1, sizeof *offers);
    for (size_t i = 0; i < nfields && rc == 0; i++) {
        const redisReply *f = r->element[2 * i], *v = r->element[2 * i + 1];
        if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            continue;
        if (strncmp(f->str, "r:", 2) == 0) {
            if (mode != MONEY_RECOVER_SELF) {
                int vr = rv_void_round(c, v->str, history_maxlen > 0 ? history_maxlen : 100000);
                if (vr < 0)
                    rc = vr;
                else
                    out->voided += vr;
            }
            rounds[nrounds++] = xstrdup(f->str);
        } else if (strncmp(f->str, "h:", 2) == 0) {
            offers[noffers++] = xstrdup(f->str + 2); /* a table offered and not adopted */
        } else if (money_valid_player(f->str) && money_valid_player(v->str)) {
            pairs[npairs].account = xstrdup(f->str);
            pairs[npairs].owner = xstrdup(v->str);
            npairs++;
        } else {
            log_emit(LOG_ERROR, "money_recover_bad_field", "{s:s,s:s}", "key", held, "field",
                     f->str);
        }
    }
    freeReplyObject(r);
    if (rc == -EIO)
        snprintf(out->error, sizeof out->error, "redis: %s", c->errstr);
    /* The offers and round records go with the first chunk (which may hold no account): an
     * offer is voided before its accounts go back, in the same script. */
    for (size_t off = 0; rc == 0 && (off < npairs || off == 0); off += RECOVER_CHUNK) {
        size_t n = npairs - off < RECOVER_CHUNK ? npairs - off : RECOVER_CHUNK;
        rc = rv_call(c, service, slot, epoch, m, token, pairs + off, n, off == 0 ? offers : NULL,
                     off == 0 ? noffers : 0, off == 0 ? rounds : NULL, off == 0 ? nrounds : 0, out);
        if (npairs == 0)
            break;
    }
    for (size_t i = 0; i < npairs; i++) {
        free(pairs[i].account);
        free(pairs[i].owner);
    }
    for (size_t i = 0; i < nrounds; i++)
        free(rounds[i]);
    for (size_t i = 0; i < noffers; i++)
        free(offers[i]);
    free(pairs);
    free(rounds);
    free(offers);
    log_emit(rc == 0 ? LOG_INFO : LOG_ERROR, "money_recovered",
             "{s:s,s:i,s:I,s:s,s:I,s:i,s:i,s:I,s:i,s:s}", "service", service, "slot", (int)slot,
             "epoch", (json_int_t)epoch, "mode", modes[mode], "chips", (json_int_t)out->chips,
             "accounts", out->accounts, "voided", out->voided, "new_fence",
             (json_int_t)out->new_fence, "status", rc, "error", out->error);
    return rc;
}
