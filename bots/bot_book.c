/*
 * bot_book.c -- bookkeeping of croupier-bot; see bot_book.h for the rules.
 */
#include "bot_book.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"

#define BOOK_RID_MAX 160
#define BOOK_TORN_LIST_MAX 100

typedef struct {
    bool open;
    uint64_t desk;
    int64_t since_ms;
    char rid[BOOK_RID_MAX + 1]; /* "" = anonymous */
    bool away; /* the connection was lost; no Snapshot or Joined since (bot_book_seated) */
} book_round_t;

typedef struct {
    char *name;
    uint64_t total, unexpected;
} book_err_t;

/* Open-addressing set of round ids with their outcome (1 finished, 2 voided). */
typedef struct {
    char **keys;
    uint8_t *outcome;
    size_t cap, len;
} book_ids_t;

/* Samples for percentiles (nearest rank). */
typedef struct {
    int64_t *v;
    size_t n, cap;
    bool sorted;
} book_samples_t;

struct bot_book {
    uint32_t nbots;
    book_round_t *open;
    uint64_t counters[BOT_C_COUNT];
    book_err_t *errs;
    size_t nerrs;
    book_err_t *goaways;
    size_t ngoaways;
    book_samples_t lat;  /* action latency, us */
    book_samples_t move; /* whole-table moves: the old table's last RoundEnd -> the Moved, us */
    bot_book_rounds_t rounds;
    book_ids_t ids;
    json_t *torn_list;
    char **unseen; /* ids of the rounds that ended unseen (bot_book_write_round_ids) */
    size_t nunseen, capunseen;
    char **crashed; /* ids of the crash-voided rounds */
    size_t ncrashed, capcrashed;
    bool finished;
};

static const char *const book_counter_names[BOT_C_COUNT] = {
    [BOT_C_CONNECTS] = "connects",
    [BOT_C_CONNECT_FAILURES] = "connect_failures",
    [BOT_C_LOGINS] = "logins",
    [BOT_C_JOINS] = "joins",
    [BOT_C_RESUMES] = "resumes",
    [BOT_C_ACTIONS_SENT] = "actions_sent",
    [BOT_C_ACTIONS_OK] = "actions_ok",
    [BOT_C_ACTIONS_REFUSED] = "actions_refused",
    [BOT_C_RETRIES] = "retries",
    [BOT_C_ABANDONED] = "abandoned_requests",
    [BOT_C_RECONNECTS] = "reconnects",
    [BOT_C_RECONNECTS_GOAWAY] = "reconnects_after_goaway",
    [BOT_C_GOAWAYS] = "goaways",
    [BOT_C_MOVES] = "moves",
    [BOT_C_TABLE_CLOSINGS] = "table_closings",
    [BOT_C_LEAVES] = "leaves",
    [BOT_C_REFRESHES] = "view_refreshes",
    [BOT_C_PINGS] = "pings",
    [BOT_C_CONNECTIONS_LOST] = "connections_lost",
    [BOT_C_RECONNECTS_LOST] = "reconnects_after_loss",
    [BOT_C_CRASH_CLOSINGS] = "crash_closings",
    [BOT_C_TABLE_MOVES] = "table_moves",
    [BOT_C_MATCH_LOST] = "match_state_lost",
    [BOT_C_ROOMS_CREATED] = "rooms_created",
    [BOT_C_ROOMS_JOINED] = "rooms_joined",
    [BOT_C_ROOMS_FINISHED] = "rooms_finished",
    [BOT_C_GATEWAY_SILENT] = "gateway_silent",
    [BOT_C_MOVES_FAILED] = "moves_failed",
};

bot_book_t *bot_book_create(uint32_t nbots)
{
    if (nbots == 0)
        return NULL;
    bot_book_t *b = xcalloc(1, sizeof *b);
    b->nbots = nbots;
    b->open = xcalloc(nbots, sizeof *b->open);
    b->torn_list = json_array();
    return b;
}

void bot_book_destroy(bot_book_t *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->nerrs; i++)
        free(b->errs[i].name);
    for (size_t i = 0; i < b->ngoaways; i++)
        free(b->goaways[i].name);
    for (size_t i = 0; i < b->ids.cap; i++)
        free(b->ids.keys[i]);
    free(b->ids.keys);
    free(b->ids.outcome);
    free(b->errs);
    free(b->goaways);
    free(b->lat.v);
    free(b->move.v);
    free(b->open);
    json_decref(b->torn_list);
    for (size_t i = 0; i < b->nunseen; i++)
        free(b->unseen[i]);
    free(b->unseen);
    for (size_t i = 0; i < b->ncrashed; i++)
        free(b->crashed[i]);
    free(b->crashed);
    free(b);
}

/* ---- distinct round ids ------------------------------------------------------------------ */

static uint64_t book_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

static void book_ids_grow(book_ids_t *ids)
{
    size_t ncap = ids->cap == 0 ? 256 : ids->cap * 2;
    char **keys = xcalloc(ncap, sizeof *keys);
    uint8_t *out = xcalloc(ncap, 1);
    for (size_t i = 0; i < ids->cap; i++) {
        if (ids->keys[i] == NULL)
            continue;
        size_t j = book_hash(ids->keys[i]) & (ncap - 1);
        while (keys[j] != NULL)
            j = (j + 1) & (ncap - 1);
        keys[j] = ids->keys[i];
        out[j] = ids->outcome[i];
    }
    free(ids->keys);
    free(ids->outcome);
    ids->keys = keys;
    ids->outcome = out;
    ids->cap = ncap;
}

/* Records id with outcome (bot_round_outcome_t) if new. Returns true when the id was not there
 * yet. A round seen with different outcomes by two bots keeps its first one (never happens with a
 * correct server; such a conflict is an unexpected error, counted by the caller). */
static bool book_ids_add(book_ids_t *ids, const char *id, uint8_t outcome, uint8_t *existing)
{
    if ((ids->len + 1) * 2 > ids->cap)
        book_ids_grow(ids);
    size_t j = book_hash(id) & (ids->cap - 1);
    while (ids->keys[j] != NULL) {
        if (strcmp(ids->keys[j], id) == 0) {
            *existing = ids->outcome[j];
            return false;
        }
        j = (j + 1) & (ids->cap - 1);
    }
    ids->keys[j] = xstrdup(id);
    ids->outcome[j] = outcome;
    ids->len++;
    return true;
}

/* ---- rounds ------------------------------------------------------------------------------ */

/* Whether a kept (possibly cut) id names the round id given. */
static bool book_same_id(const char *kept, const char *id)
{
    return strncmp(kept, id, BOOK_RID_MAX) == 0;
}

static void book_torn(bot_book_t *b, uint32_t bot, const char *why)
{
    book_round_t *r = &b->open[bot];
    b->rounds.torn++;
    if (json_array_size(b->torn_list) < BOOK_TORN_LIST_MAX)
        json_array_append_new(b->torn_list,
                              json_pack("{s:i,s:I,s:s,s:s}", "bot", (json_int_t)bot, "desk",
                                        (json_int_t)r->desk, "round_id", r->rid, "why", why));
    r->open = false;
}

/* Appends a copy of id to a growing list of ids. */
static void book_list_add(char ***list, size_t *n, size_t *cap, const char *id)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *list = xreallocarray(*list, *cap, sizeof **list);
    }
    (*list)[(*n)++] = xstrdup(id);
}

/* The bot's open round ended while it was away: counted apart, its id kept for the harness. */
static void book_unseen(bot_book_t *b, uint32_t bot)
{
    book_round_t *r = &b->open[bot];
    b->rounds.ended_unseen++;
    if (r->rid[0] != '\0')
        book_list_add(&b->unseen, &b->nunseen, &b->capunseen, r->rid);
    r->open = false;
}

static void book_open(bot_book_t *b, uint32_t bot, uint64_t desk, const char *rid, int64_t now)
{
    book_round_t *r = &b->open[bot];
    r->open = true;
    r->desk = desk;
    r->since_ms = now;
    snprintf(r->rid, sizeof r->rid, "%s", rid != NULL ? rid : "");
    b->rounds.started++;
}

void bot_book_round_started(bot_book_t *b, uint32_t bot, uint64_t desk, const char *round_id,
                            int64_t now_ms)
{
    if (bot >= b->nbots || b->finished)
        return;
    bool anon = round_id == NULL || round_id[0] == '\0';
    book_round_t *r = &b->open[bot];
    if (r->open) {
        if (r->desk == desk) {
            if (anon || book_same_id(r->rid, round_id))
                return; /* the same round, seen again */
            if (r->rid[0] == '\0') {
                snprintf(r->rid, sizeof r->rid, "%s", round_id); /* it gets its name */
                return;
            }
        }
        if (r->away)
            book_unseen(b, bot); /* it ended while the bot was disconnected */
        else
            book_torn(b, bot,
                      desk == r->desk ? "next round started before its end"
                                      : "round at another desk started before its end");
    }
    book_open(b, bot, desk, round_id, now_ms);
}

void bot_book_round_ended(bot_book_t *b, uint32_t bot, uint64_t desk, const char *round_id,
                          bot_round_outcome_t outcome, int64_t now_ms)
{
    bool voided = outcome == BOT_ROUND_VOIDED;
    (void)now_ms;
    if (bot >= b->nbots || round_id == NULL || round_id[0] == '\0')
        return;
    book_round_t *r = &b->open[bot];
    if (r->open) {
        if (r->desk == desk && (r->rid[0] == '\0' || book_same_id(r->rid, round_id)))
            r->open = false;
        else if (r->away)
            book_unseen(b, bot); /* events reach a reconnected bot before its Snapshot */
        else
            book_torn(b, bot, "another round ended first");
    }
    if (voided)
        b->rounds.voided++;
    else
        b->rounds.finished++;
    if (outcome == BOT_ROUND_NO_MONEY)
        b->rounds.no_money++;
    uint8_t existing = 0;
    if (book_ids_add(&b->ids, round_id, (uint8_t)outcome, &existing)) {
        if (voided)
            b->rounds.distinct_voided++;
        else
            b->rounds.distinct_finished++;
    } else if (existing != (uint8_t)outcome) {
        bot_book_error(b, "round_outcome_conflict", false);
    }
}

void bot_book_seated(bot_book_t *b, uint32_t bot, uint64_t desk, bool after_disconnect,
                     bool snapshot_says_round, const char *snapshot_round_id, int64_t now_ms)
{
    (void)now_ms;
    if (bot >= b->nbots)
        return;
    book_round_t *r = &b->open[bot];
    r->away = false;
    if (!r->open)
        return;
    bool still = false;
    if (r->desk == desk) {
        if (!snapshot_says_round)
            still = true; /* nothing says it is over: it stays open until its RoundEnd */
        else if (snapshot_round_id != NULL && snapshot_round_id[0] != '\0' &&
                 (r->rid[0] == '\0' || book_same_id(r->rid, snapshot_round_id)))
            still = true;
    }
    if (still) {
        if (r->rid[0] == '\0' && snapshot_round_id != NULL)
            snprintf(r->rid, sizeof r->rid, "%s", snapshot_round_id);
        return;
    }
    if (after_disconnect) {
        book_unseen(b, bot);
        return;
    }
    book_torn(b, bot, r->desk == desk ? "snapshot shows the round gone" : "moved mid-round");
}

bool bot_book_crash_voided(bot_book_t *b, uint32_t bot, int64_t now_ms)
{
    (void)now_ms;
    if (bot >= b->nbots || b->finished)
        return false;
    book_round_t *r = &b->open[bot];
    r->away = false;
    if (!r->open)
        return false;
    b->rounds.crash_voided++;
    if (r->rid[0] != '\0')
        book_list_add(&b->crashed, &b->ncrashed, &b->capcrashed, r->rid);
    r->open = false;
    return true;
}

void bot_book_disconnected(bot_book_t *b, uint32_t bot)
{
    if (bot < b->nbots)
        b->open[bot].away = true;
}

bool bot_book_round_open(const bot_book_t *b, uint32_t bot)
{
    return bot < b->nbots && b->open[bot].open;
}

bool bot_book_round_unseen_if_away(bot_book_t *b, uint32_t bot)
{
    if (bot >= b->nbots || b->finished || !b->open[bot].open || !b->open[bot].away)
        return false;
    book_unseen(b, bot);
    return true;
}

bool bot_book_round_unseen(bot_book_t *b, uint32_t bot)
{
    if (bot >= b->nbots || b->finished || !b->open[bot].open)
        return false;
    book_unseen(b, bot);
    return true;
}

void bot_book_finish(bot_book_t *b, int64_t now_ms)
{
    (void)now_ms;
    if (b->finished)
        return;
    for (uint32_t i = 0; i < b->nbots; i++)
        if (b->open[i].open)
            book_torn(b, i, "still open when the run ended");
    b->finished = true;
}

void bot_book_rounds(const bot_book_t *b, bot_book_rounds_t *out)
{
    *out = b->rounds;
}

/* ---- counters, errors, latency ----------------------------------------------------------- */

void bot_book_count(bot_book_t *b, bot_counter_t c)
{
    if ((unsigned)c < BOT_C_COUNT)
        b->counters[c]++;
}

uint64_t bot_book_counter(const bot_book_t *b, bot_counter_t c)
{
    return (unsigned)c < BOT_C_COUNT ? b->counters[c] : 0;
}

const char *bot_book_counter_name(bot_counter_t c)
{
    return (unsigned)c < BOT_C_COUNT ? book_counter_names[c] : "unknown";
}

static book_err_t *book_err_slot(book_err_t **arr, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*arr)[i].name, name) == 0)
            return &(*arr)[i];
    *arr = xrealloc(*arr, (*n + 1) * sizeof **arr);
    book_err_t *e = &(*arr)[(*n)++];
    e->name = xstrdup(name);
    e->total = e->unexpected = 0;
    return e;
}

void bot_book_error(bot_book_t *b, const char *name, bool expected)
{
    book_err_t *e = book_err_slot(&b->errs, &b->nerrs, name);
    e->total++;
    if (!expected)
        e->unexpected++;
}

uint64_t bot_book_errors(const bot_book_t *b, const char *name)
{
    for (size_t i = 0; i < b->nerrs; i++)
        if (strcmp(b->errs[i].name, name) == 0)
            return b->errs[i].total;
    return 0;
}

uint64_t bot_book_unexpected(const bot_book_t *b)
{
    uint64_t n = 0;
    for (size_t i = 0; i < b->nerrs; i++)
        n += b->errs[i].unexpected;
    return n;
}

void bot_book_goaway(bot_book_t *b, const char *reason)
{
    book_err_slot(&b->goaways, &b->ngoaways, reason)->total++;
    b->counters[BOT_C_GOAWAYS]++;
}

static void book_sample(book_samples_t *s, int64_t us)
{
    if (us < 0)
        us = 0;
    if (s->n == s->cap) {
        s->cap = s->cap == 0 ? 1024 : s->cap * 2;
        s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = us;
    s->sorted = false;
}

static int book_cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
    return (a > c) - (a < c);
}

static int64_t book_pct(book_samples_t *s, double p)
{
    if (s->n == 0)
        return -1;
    if (!s->sorted) {
        qsort(s->v, s->n, sizeof *s->v, book_cmp_i64);
        s->sorted = true;
    }
    if (p <= 0)
        return s->v[0];
    /* Nearest rank: the smallest sample with at least p% of samples at or below it. */
    size_t rank = (size_t)ceil(p / 100.0 * (double)s->n);
    if (rank < 1)
        rank = 1;
    if (rank > s->n)
        rank = s->n;
    return s->v[rank - 1];
}

void bot_book_latency(bot_book_t *b, int64_t us)
{
    book_sample(&b->lat, us);
}

int64_t bot_book_latency_pct(bot_book_t *b, double p)
{
    return book_pct(&b->lat, p);
}

void bot_book_move_latency(bot_book_t *b, int64_t us)
{
    book_sample(&b->move, us);
}

int64_t bot_book_move_latency_pct(bot_book_t *b, double p)
{
    return book_pct(&b->move, p);
}

bool bot_book_ok(const bot_book_t *b)
{
    return b->rounds.torn == 0 && bot_book_unexpected(b) == 0;
}

/* ---- report ------------------------------------------------------------------------------ */

static json_t *book_ms(int64_t us)
{
    return us < 0 ? json_null() : json_real((double)us / 1000.0);
}

json_t *bot_book_report(bot_book_t *b, json_t *meta)
{
    json_t *o = json_object();
    if (meta != NULL)
        json_object_update(o, meta);
    json_object_set_new(o, "games",
                        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I}}", "started",
                                  (json_int_t)b->rounds.started, "finished",
                                  (json_int_t)b->rounds.finished, "finished_no_money",
                                  (json_int_t)b->rounds.no_money, "voided",
                                  (json_int_t)b->rounds.voided, "torn", (json_int_t)b->rounds.torn,
                                  "ended_unseen", (json_int_t)b->rounds.ended_unseen,
                                  "crash_voided", (json_int_t)b->rounds.crash_voided, "distinct",
                                  "finished", (json_int_t)b->rounds.distinct_finished, "voided",
                                  (json_int_t)b->rounds.distinct_voided));
    json_object_set(o, "torn_rounds", b->torn_list);
    json_t *c = json_object();
    for (int i = 0; i < BOT_C_COUNT; i++)
        json_object_set_new(c, book_counter_names[i], json_integer((json_int_t)b->counters[i]));
    json_object_set_new(o, "counters", c);
    json_object_set_new(o, "actions", json_integer((json_int_t)b->counters[BOT_C_ACTIONS_SENT]));
    /* after_loss: connections lost without a GoAway and recovered (connected again, seated);
     * other: the rest (a request timed out, a refusal that made the bot start over...). */
    uint64_t total = b->counters[BOT_C_RECONNECTS], goaway = b->counters[BOT_C_RECONNECTS_GOAWAY],
             loss = b->counters[BOT_C_RECONNECTS_LOST];
    uint64_t other = total > goaway + loss ? total - goaway - loss : 0;
    json_object_set_new(o, "reconnects",
                        json_pack("{s:I,s:I,s:I,s:I}", "total", (json_int_t)total, "after_goaway",
                                  (json_int_t)goaway, "after_loss", (json_int_t)loss, "other",
                                  (json_int_t)other));
    json_t *g = json_object();
    for (size_t i = 0; i < b->ngoaways; i++)
        json_object_set_new(g, b->goaways[i].name, json_integer((json_int_t)b->goaways[i].total));
    json_object_set_new(o, "goaways", g);
    json_t *e = json_object();
    for (size_t i = 0; i < b->nerrs; i++)
        json_object_set_new(e, b->errs[i].name,
                            json_pack("{s:I,s:I}", "total", (json_int_t)b->errs[i].total,
                                      "unexpected", (json_int_t)b->errs[i].unexpected));
    json_object_set_new(o, "errors", e);
    json_object_set_new(o, "unexpected_errors", json_integer((json_int_t)bot_book_unexpected(b)));
    json_object_set_new(o, "action_latency_ms",
                        json_pack("{s:o,s:o,s:o,s:I}", "p50", book_ms(book_pct(&b->lat, 50)), "p99",
                                  book_ms(book_pct(&b->lat, 99)), "max",
                                  book_ms(book_pct(&b->lat, 100)), "samples",
                                  (json_int_t)b->lat.n));
    json_object_set_new(o, "table_move_ms",
                        json_pack("{s:o,s:o,s:o,s:I}", "p50", book_ms(book_pct(&b->move, 50)),
                                  "p99", book_ms(book_pct(&b->move, 99)), "max",
                                  book_ms(book_pct(&b->move, 100)), "samples",
                                  (json_int_t)b->move.n));
    json_object_set_new(o, "ok", json_boolean(bot_book_ok(b)));
    return o;
}

int bot_book_write_report(bot_book_t *b, json_t *meta, const char *path)
{
    json_t *o = bot_book_report(b, meta);
    char tmp[4096];
    int rc = 0;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
        rc = -ENAMETOOLONG;
        goto fail_name;
    }
    if (json_dump_file(o, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
        rc = errno != 0 ? -errno : -EIO;
        unlink(tmp);
        goto fail_name;
    }
    if (rename(tmp, path) != 0) {
        rc = -errno;
        unlink(tmp);
    }
fail_name:
    json_decref(o);
    return rc;
}

size_t bot_book_write_round_ids(const bot_book_t *b, FILE *f)
{
    size_t n = 0;
    for (size_t i = 0; i < b->ids.cap; i++) {
        if (b->ids.keys[i] != NULL) {
            uint8_t o = b->ids.outcome[i];
            fprintf(f, "%s %s\n", b->ids.keys[i],
                    o == BOT_ROUND_FINISHED ? "finished"
                    : o == BOT_ROUND_VOIDED ? "voided"
                                            : "nomoney");
            n++;
        }
    }
    for (size_t i = 0; i < b->nunseen; i++, n++)
        fprintf(f, "%s unseen\n", b->unseen[i]);
    for (size_t i = 0; i < b->ncrashed; i++, n++)
        fprintf(f, "%s crash_voided\n", b->crashed[i]);
    return n;
}
