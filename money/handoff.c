/*
 * Table handoff: offer, read, adopt (money.h "Table handoff"). The scripts live with the others
 * in money_script.c (money_lua_offer, money_lua_adopt); this file builds their calls and reads
 * their answers on a blocking connection.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "money.h"
#include "keytag.h"
#include "xmalloc.h"

#define OFFER_SCRIPT 6    /* SCRIPT_OFFER in money_int.h */
#define ADOPT_SCRIPT 7    /* SCRIPT_ADOPT */
#define WITHDRAW_SCRIPT 8 /* SCRIPT_WITHDRAW */
#define STATE_MAX (64 * 1024)

typedef struct {
    int argc, cap;
    char **argv;
    size_t *lens;
} ho_argv_t;

static void ho_push_len(ho_argv_t *a, const char *s, size_t len)
{
    if (a->argc == a->cap) {
        a->cap = a->cap != 0 ? 2 * a->cap : 32;
        a->argv = xrealloc(a->argv, (size_t)a->cap * sizeof *a->argv);
        a->lens = xrealloc(a->lens, (size_t)a->cap * sizeof *a->lens);
    }
    char *copy = xmalloc(len + 1);
    memcpy(copy, s, len);
    copy[len] = '\0';
    a->argv[a->argc] = copy;
    a->lens[a->argc] = len;
    a->argc++;
}

static void ho_push(ho_argv_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ho_push(ho_argv_t *a, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ho_push_len(a, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void ho_free(ho_argv_t *a)
{
    for (int i = 0; i < a->argc; i++)
        free(a->argv[i]);
    free(a->argv);
    free(a->lens);
    *a = (ho_argv_t){0};
}

/* Runs the script (EVALSHA, then EVAL on NOSCRIPT); returns the reply (caller frees) or NULL. */
static redisReply *ho_run(redisContext *c, ho_argv_t *a, int script)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        redisReply *r = redisCommandArgv(c, a->argc, (const char **)a->argv, a->lens);
        if (r == NULL || r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOSCRIPT", 8) != 0 ||
            attempt == 1)
            return r;
        freeReplyObject(r);
        free(a->argv[0]);
        free(a->argv[1]);
        a->argv[0] = xstrdup("EVAL");
        a->lens[0] = 4;
        a->argv[1] = xstrdup(money_script_text(script));
        a->lens[1] = strlen(a->argv[1]);
    }
    return NULL;
}

/* Fills out from a reply: an error (mapped like every money script's), or {flag, text} (the
 * text into text[tlen]). */
static int ho_reply(redisContext *c, redisReply *r, money_kind_t kind, money_result_t *out,
                    char *text, size_t tlen)
{
    if (r == NULL) {
        out->status = -EIO;
        snprintf(out->error, sizeof out->error, "redis: %s", c->errstr);
        return -EIO;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        money_reply_parse(kind, r, out); /* maps the MONEY_* token */
    } else if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
               r->element[0]->type == REDIS_REPLY_INTEGER &&
               r->element[1]->type == REDIS_REPLY_STRING) {
        out->status = MONEY_OK;
        out->replayed = r->element[0]->integer == 0;
        snprintf(text, tlen, "%s", r->element[1]->str);
    } else {
        out->status = MONEY_ERR_REDIS;
        snprintf(out->error, sizeof out->error, "unexpected reply shape (type %d)", r->type);
    }
    freeReplyObject(r);
    return out->status;
}

/* The start of an offer's or a withdrawal's call: KEYS the offer, the old server's fence and its
 * held HASH; ARGV its epoch and the offer id. */
static void ho_push_offer_call(ho_argv_t *a, int script, const char *service,
                               const money_offer_t *o, const char *id)
{
    ho_push(a, "EVALSHA");
    ho_push(a, "%s", money_script_sha(script));
    ho_push(a, "3");
    ho_push(a, "%s%s", MONEY_HANDOFF_KEY_PREFIX, id);
    char lt[160];
    ho_push(a, "%s:slot:%" PRIu32 ":epoch", keytag_lease(lt, sizeof lt, service), o->slot);
    ho_push(a, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, o->slot, o->epoch);
    ho_push(a, "%" PRIu64, o->epoch);
    ho_push(a, "%s", id);
}

int money_offer_id(const char *service, const money_offer_t *o, char *buf, size_t len)
{
    if (!money_valid_name(service) || o == NULL)
        return -EINVAL;
    int n = snprintf(buf, len, "%s:%" PRIu32 ":%" PRIu64 ":%" PRIx64 ":%" PRIu64, service, o->slot,
                     o->epoch, o->desk, o->n);
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int money_sync_offer(redisContext *c, const char *service, const money_offer_t *o,
                     money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_SEAT_OUT;
    char id[MONEY_ID_MAX + 1];
    bool ok = o != NULL && money_offer_id(service, o, id, sizeof id) == 0 && o->state != NULL &&
              strlen(o->state) <= STATE_MAX && o->nseats <= MONEY_MAX_PLAYERS;
    for (size_t i = 0; ok && i < o->nseats; i++)
        ok = money_valid_player(o->seats[i].account) && money_valid_player(o->seats[i].owner) &&
             o->seats[i].seat >= 0;
    if (!ok) {
        out->status = MONEY_ERR_BAD_ARGS;
        snprintf(out->error, sizeof out->error, "invalid service, offer, state or seats");
        return out->status;
    }
    snprintf(out->id, sizeof out->id, "%s", id);
    ho_argv_t a = {0};
    ho_push_offer_call(&a, OFFER_SCRIPT, service, o, id);
    ho_push_len(&a, o->state, strlen(o->state));
    ho_push(&a, "%ld", MONEY_RECORD_TTL_S);
    ho_push(&a, "%zu", o->nseats);
    for (size_t i = 0; i < o->nseats; i++) {
        ho_push(&a, "%s", o->seats[i].account);
        ho_push(&a, "%s", o->seats[i].owner);
        ho_push(&a, "%d", o->seats[i].seat);
    }
    redisReply *r = ho_run(c, &a, OFFER_SCRIPT);
    ho_free(&a);
    char text[32];
    return ho_reply(c, r, MONEY_KIND_SEAT_OUT, out, text, sizeof text);
}

int money_sync_offer_read(redisContext *c, const char *offer_id, money_offer_info_t *out)
{
    memset(out, 0, sizeof *out);
    redisReply *r = redisCommand(c, "HGETALL %s%s", MONEY_HANDOFF_KEY_PREFIX, offer_id);
    if (r == NULL)
        return -EIO;
    int rc = 0;
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0) {
        rc = MONEY_ERR_REDIS;
    } else if (r->elements == 0) {
        rc = MONEY_ERR_NO_OFFER;
    } else {
        long n = -1;
        for (size_t i = 0; i + 1 < r->elements; i += 2) {
            const char *f = r->element[i]->str, *v = r->element[i + 1]->str;
            if (f == NULL || v == NULL)
                continue;
            if (strcmp(f, "status") == 0)
                snprintf(out->status, sizeof out->status, "%s", v);
            else if (strcmp(f, "adopter") == 0)
                snprintf(out->adopter, sizeof out->adopter, "%s", v);
            else if (strcmp(f, "state") == 0)
                out->state = xstrdup(v);
            else if (strcmp(f, "n") == 0)
                n = strtol(v, NULL, 10);
        }
        if (n < 0 || n > MONEY_MAX_PLAYERS || out->state == NULL || out->status[0] == '\0') {
            rc = MONEY_ERR_REDIS;
        } else {
            out->nseats = (size_t)n;
            for (size_t i = 0; i + 1 < r->elements; i += 2) {
                const char *f = r->element[i]->str, *v = r->element[i + 1]->str;
                char *end;
                long k = f != NULL && (f[0] == 'a' || f[0] == 'o' || f[0] == 's')
                             ? strtol(f + 1, &end, 10)
                             : 0;
                if (k < 1 || k > n || *end != '\0' || v == NULL)
                    continue;
                if (f[0] == 'a')
                    snprintf(out->accounts[k - 1], sizeof out->accounts[0], "%s", v);
                else if (f[0] == 'o')
                    snprintf(out->owners[k - 1], sizeof out->owners[0], "%s", v);
                else
                    out->seats[k - 1] = (int)strtol(v, NULL, 10);
            }
            for (size_t i = 0; i < out->nseats; i++)
                if (out->accounts[i][0] == '\0' || out->owners[i][0] == '\0')
                    rc = MONEY_ERR_REDIS;
        }
    }
    freeReplyObject(r);
    if (rc != 0) {
        free(out->state);
        out->state = NULL;
    }
    return rc;
}

int money_sync_adopt(redisContext *c, const char *offer_id, const char *service, uint32_t slot,
                     uint64_t epoch, uint64_t desk, const char *const *new_accounts, size_t n,
                     int64_t *stacks, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_SEAT_IN;
    snprintf(out->id, sizeof out->id, "%s", offer_id != NULL ? offer_id : "");
    money_offer_info_t info;
    int rc = offer_id != NULL && money_valid_name(service) && n <= MONEY_MAX_PLAYERS
                 ? money_sync_offer_read(c, offer_id, &info)
                 : MONEY_ERR_BAD_ARGS;
    if (rc != 0) {
        out->status = rc;
        snprintf(out->error, sizeof out->error, "%s", money_strerror(rc));
        return rc;
    }
    free(info.state);
    if (info.nseats != n) {
        out->status = MONEY_ERR_BAD_ARGS;
        snprintf(out->error, sizeof out->error, "the offer has %zu seat accounts, %zu given",
                 info.nseats, n);
        return out->status;
    }
    for (size_t i = 0; i < n; i++) {
        if (!money_valid_player(new_accounts[i]) ||
            strcmp(new_accounts[i], info.accounts[i]) == 0) {
            out->status = MONEY_ERR_BAD_ARGS;
            snprintf(out->error, sizeof out->error, "new seat account %zu invalid", i);
            return out->status;
        }
    }
    /* The old held HASH: the offer id is "<service>:<slot>:<epoch>:<desk>:<n>". */
    char osvc[MONEY_NAME_MAX + 1];
    unsigned long oslot;
    unsigned long long oepoch;
    const char *p = strchr(offer_id, ':');
    if (p == NULL || (size_t)(p - offer_id) > MONEY_NAME_MAX ||
        sscanf(p + 1, "%lu:%llu:", &oslot, &oepoch) != 2) {
        out->status = MONEY_ERR_BAD_ARGS;
        snprintf(out->error, sizeof out->error, "malformed offer id");
        return out->status;
    }
    memcpy(osvc, offer_id, (size_t)(p - offer_id));
    osvc[p - offer_id] = '\0';
    ho_argv_t a = {0};
    ho_push(&a, "EVALSHA");
    ho_push(&a, "%s", money_script_sha(ADOPT_SCRIPT));
    ho_push(&a, "%zu", 5 + 2 * n);
    ho_push(&a, "%s%s", MONEY_HANDOFF_KEY_PREFIX, offer_id);
    ho_push(&a, "{croupier:money}:held:%s:%lu:%llu", osvc, oslot, oepoch);
    char lt[160];
    ho_push(&a, "%s:slot:%" PRIu32 ":epoch", keytag_lease(lt, sizeof lt, service), slot);
    ho_push(&a, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    ho_push(&a, "%s", MONEY_HELD_INDEX_KEY);
    for (size_t i = 0; i < n; i++) {
        ho_push(&a, "{croupier:money}:wallet:%s", info.accounts[i]);
        ho_push(&a, "{croupier:money}:wallet:%s", new_accounts[i]);
    }
    ho_push(&a, "%" PRIu64, epoch);
    ho_push(&a, "%s:%" PRIu32 ":%" PRIu64 ":%" PRIx64, service, slot, epoch, desk);
    ho_push(&a, "%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    ho_push(&a, "%s", offer_id);
    ho_push(&a, "%zu", n);
    for (size_t i = 0; i < n; i++) {
        ho_push(&a, "%s", info.accounts[i]);
        ho_push(&a, "%s", new_accounts[i]);
        ho_push(&a, "%s", info.owners[i]);
    }
    redisReply *r = ho_run(c, &a, ADOPT_SCRIPT);
    ho_free(&a);
    char text[MONEY_MAX_PLAYERS * 24 + 1];
    rc = ho_reply(c, r, MONEY_KIND_SEAT_IN, out, text, sizeof text);
    if (rc == MONEY_OK && stacks != NULL) {
        const char *q = text; /* "stack stack ..." */
        for (size_t i = 0; i < n; i++) {
            char *end;
            stacks[i] = strtoll(q, &end, 10);
            q = end;
        }
        out->nbalances = n;
        for (size_t i = 0; i < n; i++)
            out->balances[i] = stacks[i];
    }
    return rc;
}

int money_sync_offer_withdraw(redisContext *c, const char *service, const money_offer_t *o,
                              char status[16], money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_SEAT_OUT;
    status[0] = '\0';
    char id[MONEY_ID_MAX + 1];
    if (o == NULL || money_offer_id(service, o, id, sizeof id) != 0) {
        out->status = MONEY_ERR_BAD_ARGS;
        snprintf(out->error, sizeof out->error, "invalid service or offer");
        return out->status;
    }
    snprintf(out->id, sizeof out->id, "%s", id);
    ho_argv_t a = {0};
    ho_push_offer_call(&a, WITHDRAW_SCRIPT, service, o, id);
    redisReply *r = ho_run(c, &a, WITHDRAW_SCRIPT);
    ho_free(&a);
    return ho_reply(c, r, MONEY_KIND_SEAT_OUT, out, status, 16);
}
