/*
 * tour_client.c -- see tour_client.h: the asker's side of the director's contract, shared by
 * croupier-ctl and croupier-gate.
 */
#include "tour_client.h"

#include "keytag.h"
#include "match_hall.h"
#include "match_json.h"
#include "match_rising.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tour_payout.h"

bool tour_client_valid_id(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 20 || s[0] == '0')
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n < 20 || strcmp(s, "18446744073709551615") <= 0;
}

bool tour_client_valid_req(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > TOUR_CLIENT_REQ_MAX)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == ':' || *p == '-'))
            return false;
    return true;
}

int tour_client_key(char *buf, size_t len, const char *id, const char *what)
{
    char base[64];
    int n = snprintf(buf, len, "%s:%s", keytag_tour(base, sizeof base, id), what);
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

const char *tour_client_op_name(tour_client_op_t op)
{
    switch (op) {
    case TOUR_CLIENT_REGISTER:
        return "register";
    case TOUR_CLIENT_UNREGISTER:
        return "unregister";
    default:
        return "cancel";
    }
}

int tour_client_request(tour_client_request_t *rq, const char *id, tour_client_op_t op,
                        const char *req, const char *player, const char *by, const char *reason)
{
    memset(rq, 0, sizeof *rq);
    if (!tour_client_valid_id(id) || req == NULL || !tour_client_valid_req(req))
        return -EINVAL;
    if (op == TOUR_CLIENT_CANCEL ? reason == NULL || reason[0] == '\0'
                                 : player == NULL || !tour_client_valid_id(player))
        return -EINVAL;
    char what[8 + TOUR_CLIENT_REQ_MAX];
    snprintf(what, sizeof what, "reply:%s", req);
    if (tour_client_key(rq->key, sizeof rq->key, id, "in") != 0 ||
        tour_client_key(rq->reply_key, sizeof rq->reply_key, id, what) != 0)
        return -EINVAL;
    const char **a = rq->argv;
    int n = 0;
    a[n++] = "XADD";
    a[n++] = rq->key;
    a[n++] = "*";
    a[n++] = "op";
    a[n++] = tour_client_op_name(op);
    a[n++] = "req";
    a[n++] = req;
    if (op == TOUR_CLIENT_CANCEL) {
        a[n++] = "by";
        a[n++] = by != NULL ? by : "ctl";
        a[n++] = "reason";
        a[n++] = reason;
    } else {
        snprintf(rq->player, sizeof rq->player, "%s", player);
        a[n++] = "player";
        a[n++] = rq->player;
    }
    rq->argc = n;
    return 0;
}

int tour_client_gate_req(char *buf, size_t len, uint64_t player, uint64_t session,
                         tour_client_op_t op, uint64_t client_rid)
{
    static const char letter[] = {'r', 'u', 'c'};
    int n = snprintf(buf, len, "g%" PRIu64 ".%" PRIx64 ".%c.%" PRIu64, player, session,
                     letter[op <= TOUR_CLIENT_CANCEL ? op : TOUR_CLIENT_CANCEL], client_rid);
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

static const char *const tour_code_names[] = {
    [TOUR_CODE_OK] = "OK",
    [TOUR_CODE_ALREADY_REGISTERED] = "ALREADY_REGISTERED",
    [TOUR_CODE_NOT_REGISTERED] = "NOT_REGISTERED",
    [TOUR_CODE_TOURNAMENT_FULL] = "TOURNAMENT_FULL",
    [TOUR_CODE_REGISTRATION_CLOSED] = "REGISTRATION_CLOSED",
    [TOUR_CODE_INSUFFICIENT_FUNDS] = "INSUFFICIENT_FUNDS",
    [TOUR_CODE_NO_REENTRY] = "NO_REENTRY",
    [TOUR_CODE_TOURNAMENT_OVER] = "TOURNAMENT_OVER",
    [TOUR_CODE_BAD_REQUEST] = "BAD_REQUEST",
    [TOUR_CODE_UNKNOWN] = "UNKNOWN",
};

const char *tour_client_code_name(tour_code_t c)
{
    return c <= TOUR_CODE_UNKNOWN ? tour_code_names[c] : "UNKNOWN";
}

static int64_t tour_json_int(json_t *o, const char *k, bool *has)
{
    json_t *v = json_object_get(o, k);
    if (has != NULL)
        *has = json_is_integer(v);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

int tour_client_answer_parse(const char *text, size_t len, tour_client_answer_t *a)
{
    memset(a, 0, sizeof *a);
    a->code = TOUR_CODE_UNKNOWN;
    json_t *j = json_loadb(text, len, 0, NULL);
    json_t *ok = json_object_get(j, "ok");
    if (!json_is_object(j) || !json_is_boolean(ok)) {
        json_decref(j);
        return -EINVAL;
    }
    a->ok = json_is_true(ok);
    const char *code = json_string_value(json_object_get(j, "code"));
    if (code != NULL) {
        snprintf(a->code_text, sizeof a->code_text, "%s", code);
        for (int c = TOUR_CODE_OK; c < TOUR_CODE_UNKNOWN; c++)
            if (strcmp(code, tour_code_names[c]) == 0)
                a->code = (tour_code_t)c;
    }
    a->entry = tour_json_int(j, "entry", &a->has_entry);
    a->stack = tour_json_int(j, "stack", &a->has_stack);
    a->refund = tour_json_int(j, "refund", &a->has_refund);
    a->reentry = json_is_true(json_object_get(j, "reentry"));
    json_decref(j);
    return 0;
}

tour_status_t tour_client_status_parse(const char *s, size_t len)
{
    static const char *const names[] = {NULL, "registering", "running", "finished", "cancelled"};
    for (int i = 1; i <= TOUR_STATUS_CANCELLED; i++)
        if (s != NULL && strlen(names[i]) == len && memcmp(s, names[i], len) == 0)
            return (tour_status_t)i;
    return TOUR_STATUS_UNKNOWN;
}

bool tour_client_status_over(tour_status_t st)
{
    return st == TOUR_STATUS_FINISHED || st == TOUR_STATUS_CANCELLED;
}

/* A decimal field of the meta; 0 when it does not parse. */
static int64_t tour_meta_num(const redisReply *v)
{
    if (v->type != REDIS_REPLY_STRING || v->len == 0 || v->len > 20)
        return 0;
    char buf[24], *end;
    memcpy(buf, v->str, v->len);
    buf[v->len] = '\0';
    errno = 0;
    long long n = strtoll(buf, &end, 10);
    return *end == '\0' && errno == 0 ? (int64_t)n : 0;
}

int tour_client_meta_parse(const redisReply *r, tour_client_meta_t *m)
{
    memset(m, 0, sizeof *m);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY)
        return -EINVAL;
    if (r->elements == 0)
        return -ENOENT;
    static const struct {
        const char *name;
        size_t off;
    } nums[] = {
        {"created_ms", offsetof(tour_client_meta_t, created_ms)},
        {"start_at_ms", offsetof(tour_client_meta_t, start_at_ms)},
        {"started_ms", offsetof(tour_client_meta_t, started_ms)},
        {"ended_ms", offsetof(tour_client_meta_t, ended_ms)},
        {"clock_ms", offsetof(tour_client_meta_t, clock_ms)},
        {"level", offsetof(tour_client_meta_t, level)},
        {"entries", offsetof(tour_client_meta_t, entries)},
        {"players", offsetof(tour_client_meta_t, players)},
        {"pool", offsetof(tour_client_meta_t, pool)},
        {"match_stage", offsetof(tour_client_meta_t, match_stage)},
        {"stage_clock0", offsetof(tour_client_meta_t, stage_clock0)},
    };
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *k = r->element[i], *v = r->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            continue;
        const char *f = k->str;
        if (strcmp(f, "id") == 0) {
            m->id = (uint64_t)strtoull(v->str, NULL, 10);
        } else if (strcmp(f, "name") == 0) {
            snprintf(m->name, sizeof m->name, "%.*s", (int)v->len, v->str);
        } else if (strcmp(f, "format") == 0) {
            m->has_format = strcmp(v->str, "sng") == 0 || strcmp(v->str, "mtt") == 0 ||
                            strcmp(v->str, "match") == 0;
            m->format = strcmp(v->str, "mtt") == 0     ? TOUR_FORMAT_MTT
                        : strcmp(v->str, "match") == 0 ? TOUR_FORMAT_MATCH
                                                       : TOUR_FORMAT_SNG;
        } else if (strcmp(f, "status") == 0) {
            m->status = tour_client_status_parse(v->str, v->len);
        } else if (strcmp(f, "cancel_reason") == 0) {
            snprintf(m->cancel_reason, sizeof m->cancel_reason, "%.*s", (int)v->len, v->str);
        } else if (strcmp(f, "structure") == 0) {
            free(m->structure);
            m->structure = strndup(v->str, v->len);
        } else {
            for (size_t n = 0; n < sizeof nums / sizeof nums[0]; n++)
                if (strcmp(f, nums[n].name) == 0)
                    *(int64_t *)((char *)m + nums[n].off) = tour_meta_num(v);
        }
    }
    return 0;
}

void tour_client_meta_clear(tour_client_meta_t *m)
{
    if (m == NULL)
        return;
    free(m->structure);
    m->structure = NULL;
}

int tour_client_entry_parse(const char *text, size_t len, tour_client_entry_t *e)
{
    memset(e, 0, sizeof *e);
    json_t *j = json_loadb(text, len, 0, NULL);
    const char *st = json_string_value(json_object_get(j, "state"));
    if (!json_is_object(j) || st == NULL) {
        json_decref(j);
        return -EINVAL;
    }
    snprintf(e->state, sizeof e->state, "%s", st);
    e->entry = (uint32_t)tour_json_int(j, "entry", NULL);
    e->entries = (uint32_t)tour_json_int(j, "entries", NULL);
    e->place = (uint32_t)tour_json_int(j, "place", NULL);
    e->table = (uint32_t)tour_json_int(j, "table", NULL);
    e->seat = (uint32_t)tour_json_int(j, "seat", NULL);
    e->stack = tour_json_int(j, "stack", NULL);
    e->prize = tour_json_int(j, "prize", NULL);
    e->paid = tour_json_int(j, "paid", NULL);
    e->fees = tour_json_int(j, "fees", NULL);
    const char *item = json_string_value(json_object_get(j, "item"));
    if (item != NULL && tour_payout_item_valid(item, strlen(item)))
        snprintf(e->item, sizeof e->item, "%s", item);
    json_decref(j);
    return 0;
}

int tour_client_level(const tour_structure_t *s, int64_t level, int64_t clock_ms,
                      tour_client_level_t *out)
{
    memset(out, 0, sizeof *out);
    if (level < 0)
        return -EINVAL;
    out->index = (size_t)level;
    out->ends_in_ms = -1;
    if ((size_t)level >= s->nlevels)
        return 0;
    out->level = &s->levels[level];
    if ((size_t)level + 1 == s->nlevels)
        return 0;
    int64_t end = 0;
    for (size_t i = 0; i <= (size_t)level; i++)
        end += s->levels[i].duration_ms;
    out->ends_in_ms = end > clock_ms ? end - clock_ms : 0;
    return 0;
}

int tour_client_payouts(const tour_structure_t *s, uint32_t entries, int64_t pool,
                        tour_client_payout_t *rows, size_t cap, size_t *nrows)
{
    *nrows = 0;
    if (entries == 0)
        return 0;
    uint32_t places = tour_payout_places(&s->payouts, entries);
    if (places == 0)
        return 0;
    int64_t *prizes = malloc(places * sizeof *prizes);
    if (prizes == NULL)
        return -ENOMEM;
    size_t np = 0;
    int rc = tour_payout_table(&s->payouts, entries, pool, prizes, places, &np);
    if (rc == 0) {
        size_t n = 0;
        for (size_t i = 0; i < np;) {
            size_t j = i;
            while (j + 1 < np && prizes[j + 1] == prizes[i])
                j++;
            if (n == cap)
                break;
            rows[n++] = (tour_client_payout_t){(uint32_t)i + 1, (uint32_t)j + 1, prizes[i]};
            i = j + 1;
        }
        *nrows = n;
    }
    free(prizes);
    return rc;
}

/* The value after key among the tokens (NULL when absent). */
static const char *tour_ev_field(char **tok, int ntok, const char *key)
{
    for (int i = 0; i + 1 < ntok; i++)
        if (strcmp(tok[i], key) == 0)
            return tok[i + 1];
    return NULL;
}

static int64_t tour_ev_num(char **tok, int ntok, const char *key)
{
    const char *v = tour_ev_field(tok, ntok, key);
    return v != NULL ? strtoll(v, NULL, 10) : 0;
}

int tour_client_event_parse(const char *data, size_t len, tour_client_event_t *ev)
{
    memset(ev, 0, sizeof *ev);
    if (len == 0 || len > 4096)
        return -EINVAL;
    char buf[4100], orig[4100];
    memcpy(buf, data, len);
    buf[len] = '\0';
    memcpy(orig, buf, len + 1);
    char *tok[32];
    int ntok = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t != NULL && ntok < 32;
         t = strtok_r(NULL, " ", &save))
        tok[ntok++] = t;
    if (ntok < 3 || !tour_client_valid_id(tok[0]) || strlen(tok[1]) >= sizeof ev->log_id)
        return -EINVAL;
    ev->tournament = strtoull(tok[0], NULL, 10);
    snprintf(ev->log_id, sizeof ev->log_id, "%s", tok[1]);
    snprintf(ev->name, sizeof ev->name, "%s", tok[2]);
    char **f = tok + 3;
    int nf = ntok - 3;
    static const struct {
        const char *name;
        tour_event_kind_t kind;
    } kinds[] = {
        {"registered", TOUR_EV_REGISTERED},
        {"reentered", TOUR_EV_REENTERED},
        {"unregistered", TOUR_EV_UNREGISTERED},
        {"started", TOUR_EV_STARTED},
        {"level", TOUR_EV_LEVEL},
        {"hand_for_hand", TOUR_EV_HAND_FOR_HAND},
        {"hand_for_hand_over", TOUR_EV_HAND_FOR_HAND_OVER},
        {"move", TOUR_EV_MOVE},
        {"seated", TOUR_EV_SEATED},
        {"out", TOUR_EV_OUT},
        {"finished", TOUR_EV_FINISHED},
        {"cancelled", TOUR_EV_CANCELLED},
        {"match_stage", TOUR_EV_STAGE},
        {"match_out", TOUR_EV_MATCH_OUT},
        {"match_place", TOUR_EV_MATCH_PLACE},
        {"match_finished", TOUR_EV_MATCH_FINISHED},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(tok[2], kinds[i].name) == 0)
            ev->kind = kinds[i].kind;
    const char *p = tour_ev_field(f, nf, ev->kind == TOUR_EV_FINISHED ? "winner" : "player");
    if (p != NULL)
        ev->player = strtoull(p, NULL, 10);
    ev->level = tour_ev_num(f, nf, "level");
    ev->table = tour_ev_num(f, nf, ev->kind == TOUR_EV_MOVE ? "to" : "table");
    ev->seat = tour_ev_num(f, nf, "seat");
    ev->place = ev->kind == TOUR_EV_FINISHED ? 1 : tour_ev_num(f, nf, "place");
    ev->prize = tour_ev_num(f, nf, "prize");
    const char *item = tour_ev_field(f, nf, "item");
    if (item != NULL && tour_payout_item_valid(item, strlen(item)))
        snprintf(ev->item, sizeof ev->item, "%s", item);
    ev->players = tour_ev_num(f, nf, ev->kind == TOUR_EV_STARTED ? "entries" : "players");
    ev->stage = tour_ev_num(f, nf, "stage");
    if (ev->kind == TOUR_EV_CANCELLED) {
        /* "reason <text>": the text may hold spaces; it is the rest of the message. */
        const char *r = strstr(orig + (tok[2] - buf), " reason ");
        if (r != NULL)
            snprintf(ev->reason, sizeof ev->reason, "%s", r + 8);
    }
    return 0;
}

int tour_client_match_view(const char *text, size_t len, const tour_structure_t *s, int64_t stage,
                           int64_t stage_ms, uint64_t player, tour_client_match_t *out)
{
    memset(out, 0, sizeof *out);
    if (s == NULL || s->match == NULL || stage < 0 || (size_t)stage >= s->match->nstages)
        return -EINVAL;
    match_stage_t *st = NULL;
    char err[160];
    if (match_stage_from_json(text, len, &st, err, sizeof err) != 0)
        return -EINVAL;
    const match_stage_config_t *c = &st->cfg;
    out->stage = (uint32_t)stage;
    out->stages = (uint32_t)s->match->nstages;
    out->players = st->n;
    out->advance = c->format == MATCH_FIXED ? 0 : c->advance;
    snprintf(out->format, sizeof out->format, "%s",
             c->format == MATCH_RISING  ? "rising"
             : c->format == MATCH_FIXED ? "fixed"
                                        : "swiss");
    if (c->format == MATCH_RISING) {
        int64_t t = stage_ms < 0 ? 0 : stage_ms;
        out->base_score = match_rising_base_at(c, t);
        out->has_line = true;
        out->line = match_rising_line_at(c, t);
    } else {
        out->base_score = c->base_score;
        out->round = st->round;
        out->deals_per_round = c->deals_per_round;
        out->rounds = c->format == MATCH_SWISS ? c->rounds : 0;
    }
    int64_t i = match_stage_find(st, player);
    if (i >= 0) {
        out->has_score = true;
        out->score = st->players[i].score;
        out->has_mp = c->format == MATCH_SWISS;
        out->mp = st->players[i].mp;
    }
    match_stage_destroy(st);
    return 0;
}
