/*
 * tour_steps.c -- the director's steps that the model computes: a table's deal and hand and the
 * draw, written by one fenced TOUR_COMMIT_LUA each (tour_play.h; docs/tournaments.md "Tables and
 * hands"), and durability: with --redis-min-replicas, the WAIT before any step's answer is
 * pushed (tour_director.h "Durability"). The shared state and calls are tour_director_int.h.
 */
#include "tour_director_int.h"

/* ---- the tables' requests and the director's computed steps (tour_play.h) ----------------- */

static void tour_commit_cb(rconn_t *rc, redisReply *r, void *arg);

/* Hand-for-hand stops the level clock and its end starts it again (docs/tournaments.md
 * "Hand-for-hand"); the value stays what the renews write. */
void tour_sync_pause(tour_t *t)
{
    bool on = t->play != NULL && tour_play_h4h(t->play);
    if (on == t->paused)
        return;
    t->clock_base_ms = tour_clock_ms(t);
    t->mono_base_ms = clock_mono_ms();
    t->paused = on;
    log_emit(LOG_INFO, on ? "tour_clock_paused" : "tour_clock_resumed", "{s:I,s:I}", "tournament",
             (json_int_t)t->id, "clock_ms", (json_int_t)t->clock_base_ms);
    tour_arm_clock(t);
}
/* Sends t->inflight (keys, then its arguments after the fixed ones). */
int tour_commit_send(tour_t *t)
{
    tour_director_t *d = t->d;
    if (t->inflight.failed)
        return -ENOMEM;
    char k[9][TOUR_KEY_MAX];
    const tour_req_t *q = t->inflight_request ? &t->queue[t->qhead] : NULL;
    tour_key(k[0], TOUR_KEY_MAX, t->id, "meta");
    tour_key(k[1], TOUR_KEY_MAX, t->id, "entries");
    tour_key(k[2], TOUR_KEY_MAX, t->id, "tables");
    tour_key(k[3], TOUR_KEY_MAX, t->id, "epoch");
    tour_key(k[4], TOUR_KEY_MAX, t->id, "log");
    snprintf(k[5], TOUR_KEY_MAX, TOUR_POOL_KEY_PREFIX "%" PRIu64, t->id);
    char what[TOUR_REQ_MAX + 16];
    snprintf(what, sizeof what, "req:%s", q != NULL ? q->req : "");
    tour_key(k[6], TOUR_KEY_MAX, t->id, what);
    snprintf(what, sizeof what, "reply:%s", q != NULL ? q->req : "");
    tour_key(k[7], TOUR_KEY_MAX, t->id, what);
    snprintf(k[8], TOUR_KEY_MAX, "%s", TOUR_LIVE_KEY);
    int nkeys = d->cfg.min_replicas > 0 ? 10 : 9; /* 10: a deferred answer (durability) */
    size_t n = (size_t)nkeys + t->inflight.n;
    const char **argv = calloc(n, sizeof *argv);
    if (argv == NULL)
        return -ENOMEM;
    for (int i = 0; i < 9; i++)
        argv[i] = k[i];
    if (nkeys == 10)
        argv[9] = k[7];
    for (size_t i = 0; i < t->inflight.n; i++)
        argv[nkeys + i] = t->inflight.v[i];
    tour_cb_t *c = tour_cb(d, t, TOUR_CB_COMMIT);
    int rc = c != NULL ? rconn_eval(d->rc, d->commit, tour_commit_cb, c, nkeys, (int)n, argv, NULL)
                       : -ENOMEM;
    free(argv);
    if (rc != 0) {
        free(c);
        return rc;
    }
    t->busy = true;
    return 0;
}

/* Starts a commit: the fixed arguments (epoch, stream id, answer, tournament). */
void tour_commit_begin(tour_t *t, const tour_req_t *q, const char *answer)
{
    tour_commit_free(&t->inflight);
    tour_commit_addf(&t->inflight, "%" PRId64, t->epoch);
    tour_commit_add(&t->inflight, q != NULL ? q->sid : "");
    tour_commit_add(&t->inflight, answer != NULL ? answer : "");
    tour_commit_addf(&t->inflight, "%" PRIu64, t->id);
    t->inflight_request = q != NULL;
}

/* The answer's JSON for a request: {"req","op","ok","code","tournament"<body>}. */
static char *tour_answer(const tour_t *t, const tour_req_t *q, const char *code, const char *body)
{
    char *a = NULL;
    if (asprintf(&a,
                 "{\"req\":\"%s\",\"op\":\"%s\",\"ok\":%s,\"code\":\"%s\",\"tournament\":%" PRIu64
                 "%s}",
                 q->req, q->op, strcmp(code, "OK") == 0 ? "true" : "false", code, t->id,
                 body != NULL ? body : "") < 0)
        a = NULL;
    return a;
}

/* A table's deal or hand: computed on the model, written in one commit. */
void tour_table_request(tour_t *t, const tour_req_t *q)
{
    const char *code = "BAD_REQUEST";
    char *body = NULL;
    tour_commit_t writes = {0};
    if (t->match != NULL && strcmp(t->status, "running") == 0) {
        uint32_t table = (uint32_t)strtoul(q->table, NULL, 10);
        uint64_t hand = strtoull(q->hand, NULL, 10);
        body = strcmp(q->op, "deal") == 0
                   ? tour_match_deal(t->match, table, hand, q->host, &writes, &code)
                   : tour_match_hand(t->match, table, hand, q->host, q->result, q->record,
                                     tour_clock_ms(t), &writes, &code);
    } else if (t->play == NULL || strcmp(t->status, "running") != 0) {
        code = strcmp(t->status, "registering") == 0 ? "WAIT" : "TOURNAMENT_OVER";
        body = strdup(",\"why\":\"not running\"");
    } else {
        uint32_t table = (uint32_t)strtoul(q->table, NULL, 10);
        uint64_t hand = strtoull(q->hand, NULL, 10);
        body = strcmp(q->op, "deal") == 0
                   ? tour_play_deal(t->play, table, hand, q->host, tour_clock_ms(t), &writes, &code)
                   : tour_play_hand(t->play, table, hand, q->host, q->result, q->record,
                                    clock_wall_ms(), &writes, &code);
    }
    if (strcmp(code, "INTERNAL") == 0) {
        log_emit(LOG_ERROR, "tour_model_broken", "{s:I,s:s,s:s}", "tournament", (json_int_t)t->id,
                 "op", q->op, "why", body != NULL ? body : "");
        code = "BAD_REQUEST";
        t->want_release = true; /* the next owner reads the state from Redis */
    }
    bool applied = strcmp(code, "OK") == 0;
    char *answer = tour_answer(t, q, code, body);
    tour_commit_begin(t, q, answer);
    /* A refused request changes nothing: its writes (none, by tour_play's rules) are dropped. */
    for (size_t i = 0; applied && i < writes.n; i++)
        tour_commit_add(&t->inflight, writes.v[i]);
    if (writes.failed || answer == NULL)
        t->inflight.failed = true;
    tour_commit_free(&writes);
    free(answer);
    free(body);
    if (strcmp(q->op, "hand") == 0 && applied && t->play != NULL && tour_play_left(t->play) <= 1)
        snprintf(t->status, sizeof t->status, "finished");
    if (strcmp(q->op, "hand") == 0 && applied && t->match != NULL &&
        tour_match_finished(t->match))
        snprintf(t->status, sizeof t->status, "finished");
    if (tour_commit_send(t) != 0) {
        log_emit(LOG_ERROR, "tour_commit_unsent", "{s:I}", "tournament", (json_int_t)t->id);
        t->want_release = true; /* the next owner loads the state again */
    }
}

static void tour_commit_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_t *t = tour_cb_take(arg);
    if (t == NULL)
        return;
    if (r == NULL) {
        /* No answer: the same commit again (the cursor and the request id make it apply once). */
        if (tour_commit_send(t) != 0)
            t->want_release = true;
        tour_pump(t);
        return;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        if (tour_fenced_out(t, r))
            return;
        /* The model already moved: hand the tournament back; the next owner reads Redis. */
        log_emit(LOG_ERROR, "tour_commit_failed", "{s:I,s:s}", "tournament", (json_int_t)t->id,
                 "error", r->str);
        t->want_release = true;
        tour_pump(t);
        return;
    }
    tour_step_ok(t, TOUR_CB_COMMIT, r->type == REDIS_REPLY_STRING ? r->str : "");
}

/* A commit went through (and, with durability, reached the replicas). */
static void tour_commit_done(tour_t *t, const char *txt)
{
    if (t->inflight_request && t->qlen > 0) {
        tour_req_t *q = &t->queue[t->qhead];
        if (strcmp(txt, "skip") != 0 && strncmp(txt, "replay ", 7) != 0) {
            bool ok = strstr(txt, "\"ok\":true") != NULL;
            metrics_add(ok ? t->d->m_requests_ok : t->d->m_requests_refused, 1);
            log_emit(LOG_DEBUG, "tour_table_request", "{s:I,s:s,s:s,s:s,s:s}", "tournament",
                     (json_int_t)t->id, "op", q->op, "table", q->table, "hand", q->hand, "answer",
                     txt);
        }
        tour_dequeue(t);
    }
    tour_commit_free(&t->inflight);
    t->inflight_request = false;
    tour_sync_pause(t);
    if (strcmp(t->status, "finished") == 0) {
        log_emit(LOG_INFO, "tour_finished", "{s:I}", "tournament", (json_int_t)t->id);
        t->want_release = true;
    }
    tour_pump(t);
}

/* ---- durability (tour_director.h "Durability") ------------------------------------------- */

static void tour_wait_cb(rconn_t *rc, redisReply *r, void *arg);

static void tour_noop_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    (void)r;
    (void)arg;
}

static void tour_wait_send(tour_t *t)
{
    tour_director_t *d = t->d;
    char n[16], ms[16];
    snprintf(n, sizeof n, "%d", d->cfg.min_replicas);
    snprintf(ms, sizeof ms, "%d", d->cfg.wait_ms);
    const char *argv[] = {"WAIT", n, ms};
    tour_cb_t *c = tour_cb(d, t, TOUR_CB_WAIT);
    if (c == NULL || rconn_command_argv(d->rc, tour_wait_cb, c, 3, argv, NULL) != 0) {
        /* Not sent: nothing answered; the next owner reads what Redis kept. */
        free(c);
        free(t->durable_txt);
        t->durable_txt = NULL;
        t->want_release = true;
        tour_pump(t);
        return;
    }
    t->busy = true;
}

/* A step's script went through: at once without durability, else once min_replicas replicas
 * acknowledged it (the answer pushed only then). */
void tour_step_ok(tour_t *t, int kind, const char *txt)
{
    if (t->d->cfg.min_replicas <= 0) {
        if (kind == TOUR_CB_APPLY)
            tour_apply_done(t, txt);
        else
            tour_commit_done(t, txt);
        return;
    }
    t->durable_reply[0] = '\0';
    bool request = kind == TOUR_CB_COMMIT ? t->inflight_request : strcmp(txt, "done") != 0;
    if (request && strcmp(txt, "skip") != 0 && t->qlen > 0 && t->queue[t->qhead].req[0] != '\0') {
        char what[TOUR_REQ_MAX + 16];
        snprintf(what, sizeof what, "reply:%s", t->queue[t->qhead].req);
        tour_key(t->durable_reply, sizeof t->durable_reply, t->id, what);
    }
    free(t->durable_txt);
    t->durable_txt = strdup(txt);
    t->durable_kind = kind;
    t->durable_tries = 0;
    if (t->durable_txt == NULL) {
        t->want_release = true;
        tour_pump(t);
        return;
    }
    tour_wait_send(t);
}

static void tour_wait_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_t *t = tour_cb_take(arg);
    if (t == NULL)
        return;
    tour_director_t *d = t->d;
    long long acked = r != NULL && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (acked < d->cfg.min_replicas) {
        if (r != NULL && ++t->durable_tries < TOUR_WAIT_TRIES) {
            tour_wait_send(t);
            return;
        }
        log_emit(LOG_ERROR, "tour_not_durable", "{s:I,s:I,s:i,s:s}", "tournament",
                 (json_int_t)t->id, "replicas", (json_int_t)acked, "wanted", d->cfg.min_replicas,
                 "msg", "the step may be lost in a failover: not answered, the tournament let go");
        free(t->durable_txt);
        t->durable_txt = NULL;
        t->want_release = true;
        tour_pump(t);
        return;
    }
    char *txt = t->durable_txt;
    t->durable_txt = NULL;
    if (t->durable_reply[0] != '\0') {
        const char *answer = strncmp(txt, "replay ", 7) == 0 ? txt + 7 : txt;
        const char *push[] = {"RPUSH", t->durable_reply, answer};
        const char *exp[] = {"EXPIRE", t->durable_reply, "60"};
        rconn_command_argv(d->rc, tour_noop_cb, NULL, 3, push, NULL);
        rconn_command_argv(d->rc, tour_noop_cb, NULL, 3, exp, NULL);
    }
    if (t->durable_kind == TOUR_CB_APPLY)
        tour_apply_done(t, txt);
    else
        tour_commit_done(t, txt);
    free(txt);
}
