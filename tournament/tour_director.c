/*
 * The tournament director (tour_director.h; docs/tournaments.md "The director").
 *
 * Shape: one rconn for the scripts and reads of state (`rc`), one for the blocking reads of the
 * request streams (`rx`, XREAD BLOCK over every owned tournament). Each owned tournament
 * (tour_t) runs one step at a time (`busy`): a request from its stream, or one of its own
 * (start, level, cancel, release), each one fenced script. Replies find their tournament again
 * by id and claim epoch (tour_find), never by a pointer that may have been freed meanwhile.
 */
#include "tour_director_int.h"

int tour_key(char *buf, size_t len, uint64_t id, const char *what)
{
    char ids[24], base[64];
    snprintf(ids, sizeof ids, "%" PRIu64, id);
    int n = snprintf(buf, len, "%s:%s", keytag_tour(base, sizeof base, ids), what);
    return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

tour_cb_t *tour_cb(tour_director_t *d, const tour_t *t, int kind)
{
    tour_cb_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->d = d;
    c->id = t != NULL ? t->id : 0;
    c->epoch = t != NULL ? t->epoch : 0;
    c->kind = kind;
    return c;
}

static tour_t *tour_find(tour_director_t *d, uint64_t id, int64_t epoch)
{
    for (tour_t *t = d->tours; t != NULL; t = t->next)
        if (t->id == id && (epoch == 0 || t->epoch == epoch))
            return t;
    return NULL;
}

/* In a reply callback of one of t's steps: the tournament it was for (NULL: let go meanwhile),
 * no longer busy. Frees the callback's argument. */
tour_t *tour_cb_take(void *arg)
{
    tour_cb_t *c = arg;
    tour_t *t = tour_find(c->d, c->id, c->epoch);
    free(c);
    if (t != NULL)
        t->busy = false;
    return t;
}

/* The level clock now (0 before play starts). */
int64_t tour_clock_ms(const tour_t *t)
{
    if (strcmp(t->status, "running") != 0 || t->paused)
        return t->clock_base_ms;
    return t->clock_base_ms + (clock_mono_ms() - t->mono_base_ms);
}

/* The request at the head of the queue is done with. */
void tour_dequeue(tour_t *t)
{
    free(t->queue[t->qhead].record);
    t->queue[t->qhead].record = NULL;
    t->qhead = (t->qhead + 1) % TOUR_QUEUE_MAX;
    t->qlen--;
}

/* ---- owning and letting go ---------------------------------------------------------------- */

static void tour_free(tour_t *t)
{
    if (t->renew_ev)
        event_free(t->renew_ev);
    if (t->clock_ev)
        event_free(t->clock_ev);
    tour_play_free(t->play);
    tour_match_free(t->match);
    tour_commit_free(&t->inflight);
    tour_structure_destroy(t->st);
    while (t->queue != NULL && t->qlen > 0)
        tour_dequeue(t);
    free(t->queue);
    free(t->durable_txt);
    free(t);
}

/* Forgets a tournament (released, lost, or stale). */
static void tour_drop(tour_t *t, const char *why)
{
    tour_director_t *d = t->d;
    for (tour_t **p = &d->tours; *p != NULL; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    atomic_fetch_sub(&d->owned, 1);
    metrics_set(d->m_owned, (double)atomic_load(&d->owned));
    log_emit(strcmp(why, "released") == 0 ? LOG_INFO : LOG_WARN, "tour_dropped",
             "{s:I,s:I,s:s,s:I}", "tournament", (json_int_t)t->id, "epoch", (json_int_t)t->epoch,
             "why", why, "clock_ms", (json_int_t)tour_clock_ms(t));
    if (strcmp(why, "released") == 0)
        metrics_add(d->m_released, 1);
    else
        metrics_add(d->m_lost, 1);
    tour_free(t);
    if (atomic_load(&d->releasing) && d->tours == NULL && d->release_done != NULL) {
        void (*done)(void *) = d->release_done;
        d->release_done = NULL;
        done(d->release_arg);
    }
}

static void tour_keys3(const tour_t *t, char owner[TOUR_KEY_MAX], char epoch[TOUR_KEY_MAX],
                       char meta[TOUR_KEY_MAX])
{
    tour_key(owner, TOUR_KEY_MAX, t->id, "owner");
    tour_key(epoch, TOUR_KEY_MAX, t->id, "epoch");
    tour_key(meta, TOUR_KEY_MAX, t->id, "meta");
}

static void tour_clock_arg(const tour_t *t, char *buf, size_t len)
{
    if (strcmp(t->status, "running") == 0)
        snprintf(buf, len, "%" PRId64, tour_clock_ms(t));
    else
        buf[0] = '\0';
}

static void tour_release_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_t *t = tour_cb_take(arg);
    if (t == NULL)
        return;
    if (r == NULL || r->type == REDIS_REPLY_ERROR) {
        /* Not known to be released: the claim expires by itself within its TTL. */
        log_emit(LOG_WARN, "tour_release_failed", "{s:I,s:s}", "tournament", (json_int_t)t->id,
                 "error", r != NULL ? r->str : "no reply");
        tour_drop(t, "release_unconfirmed");
        return;
    }
    tour_drop(t, r->type == REDIS_REPLY_INTEGER && r->integer == 1 ? "released" : "stale");
}

static void tour_release(tour_t *t)
{
    char owner[TOUR_KEY_MAX], epoch[TOUR_KEY_MAX], meta[TOUR_KEY_MAX], ep[24], clk[24];
    tour_keys3(t, owner, epoch, meta);
    snprintf(ep, sizeof ep, "%" PRId64, t->epoch);
    tour_clock_arg(t, clk, sizeof clk);
    const char *argv[] = {owner, epoch, meta, t->token, ep, clk};
    tour_cb_t *c = tour_cb(t->d, t, TOUR_CB_RELEASE);
    t->busy = true;
    if (c == NULL ||
        rconn_eval(t->d->rc, t->d->release, tour_release_cb, c, 3, 6, argv, NULL) != 0) {
        free(c);
        t->busy = false;
        tour_drop(t, "release_unconfirmed");
    }
}

static void tour_renew_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_cb_t *c = arg;
    tour_t *t = tour_find(c->d, c->id, c->epoch);
    tour_director_t *d = c->d;
    free(c);
    if (t == NULL)
        return;
    if (r == NULL || r->type != REDIS_REPLY_INTEGER) {
        metrics_add(d->m_renew_fail, 1);
        return; /* the next renew tries again; the fence keeps every write safe meanwhile */
    }
    if (r->integer == 0) {
        tour_drop(t, "lost");
        return;
    }
    if (r->integer == 2)
        log_emit(LOG_WARN, "tour_regained", "{s:I,s:I}", "tournament", (json_int_t)t->id, "epoch",
                 (json_int_t)t->epoch);
    t->last_renew_ok_ms = clock_mono_ms();
}

static void tour_renew_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tour_t *t = arg;
    tour_director_t *d = t->d;
    char owner[TOUR_KEY_MAX], epoch[TOUR_KEY_MAX], meta[TOUR_KEY_MAX], ep[24], ttl[24], clk[24];
    tour_keys3(t, owner, epoch, meta);
    snprintf(ep, sizeof ep, "%" PRId64, t->epoch);
    snprintf(ttl, sizeof ttl, "%d", d->cfg.claim_ttl_ms);
    tour_clock_arg(t, clk, sizeof clk);
    const char *argv[] = {owner, epoch, meta, t->token, ep, ttl, clk};
    tour_cb_t *c = tour_cb(d, t, TOUR_CB_RENEW);
    if (c == NULL || rconn_eval(d->rc, d->renew, tour_renew_cb, c, 3, 7, argv, NULL) != 0) {
        free(c);
        metrics_add(d->m_renew_fail, 1);
    }
    struct timeval tv = {d->cfg.claim_ttl_ms / 3 / 1000, (d->cfg.claim_ttl_ms / 3 % 1000) * 1000};
    evtimer_add(t->renew_ev, &tv);
}

/* ---- the tournament's own steps ----------------------------------------------------------- */

/* A fenced write refused because another director claimed the tournament since: it is let go
 * (true). */
bool tour_fenced_out(tour_t *t, const redisReply *r)
{
    if (!rconn_reply_is_error(r, "TOUR_STALE_EPOCH"))
        return false;
    metrics_add(t->d->m_stale, 1);
    tour_drop(t, "stale");
    return true;
}

static const char *meta_field(const redisReply *kv, const char *name)
{
    for (size_t i = 0; i + 1 < kv->elements; i += 2)
        if (kv->element[i]->type == REDIS_REPLY_STRING && strcmp(kv->element[i]->str, name) == 0 &&
            kv->element[i + 1]->type == REDIS_REPLY_STRING)
            return kv->element[i + 1]->str;
    return NULL;
}

static int64_t meta_int(const redisReply *kv, const char *name)
{
    const char *v = meta_field(kv, name);
    return v != NULL ? strtoll(v, NULL, 10) : 0;
}

/*
 * Builds the argument vector of TOUR_APPLY_LUA for op (req may be NULL for the director's own
 * steps) and sends it. extra/nextra: the cancel split's pairs. Returns 0 or -1 (not sent).
 */
static void tour_apply_cb(rconn_t *rc, redisReply *r, void *arg);

static int tour_apply_send(tour_t *t, const char *op, const tour_req_t *req, const char *arg16,
                           const char **extra, int nextra)
{
    tour_director_t *d = t->d;
    char k[10][TOUR_KEY_MAX];
    tour_key(k[0], TOUR_KEY_MAX, t->id, "meta");
    tour_key(k[1], TOUR_KEY_MAX, t->id, "entries");
    tour_key(k[2], TOUR_KEY_MAX, t->id, "epoch");
    tour_key(k[3], TOUR_KEY_MAX, t->id, "log");
    snprintf(k[4], TOUR_KEY_MAX, TOUR_POOL_KEY_PREFIX "%" PRIu64, t->id);
    snprintf(k[5], TOUR_KEY_MAX, "%s", TOUR_FEE_KEY);
    const char *player = req != NULL && !req->bad ? req->player : "";
    snprintf(k[6], TOUR_KEY_MAX, "{croupier:money}:wallet:%s", player[0] != '\0' ? player : "0");
    char what[TOUR_REQ_MAX + 16];
    /* A malformed request is still answered when its request id is usable (tour_enqueue
     * cleared it otherwise). */
    const char *rq = req != NULL ? req->req : "";
    snprintf(what, sizeof what, "req:%s", rq);
    tour_key(k[7], TOUR_KEY_MAX, t->id, what);
    snprintf(what, sizeof what, "reply:%s", rq);
    tour_key(k[8], TOUR_KEY_MAX, t->id, what);
    snprintf(k[9], TOUR_KEY_MAX, "%s", TOUR_LIVE_KEY);
    char ep[24], now[24], late[2], buy[24], fee[24], stack[24], maxe[24], re[2], maxre[24], tid[24],
        clk[24];
    const tour_structure_t *s = t->st;
    int64_t clock = tour_clock_ms(t);
    snprintf(ep, sizeof ep, "%" PRId64, t->epoch);
    snprintf(now, sizeof now, "%" PRId64, clock_wall_ms());
    snprintf(late, sizeof late, "%d",
             strcmp(t->status, "running") == 0 && tour_structure_late_reg_open(s, clock));
    snprintf(buy, sizeof buy, "%" PRId64, s->buy_in);
    snprintf(fee, sizeof fee, "%" PRId64, s->fee);
    snprintf(stack, sizeof stack, "%" PRId64, s->starting_stack);
    snprintf(maxe, sizeof maxe, "%" PRIu32, s->max_entrants);
    snprintf(re, sizeof re, "%d", s->reentry ? 1 : 0);
    snprintf(maxre, sizeof maxre, "%" PRIu32, s->max_reentries);
    snprintf(tid, sizeof tid, "%" PRIu64, t->id);
    snprintf(clk, sizeof clk, "%" PRId64, clock);
    const char *argv[27 + 2 * TOUR_QUEUE_MAX];
    int n = 0;
    for (int i = 0; i < 10; i++)
        argv[n++] = k[i];
    int nkeys = 10;
    if (d->cfg.min_replicas > 0) {
        argv[n++] = k[8]; /* a deferred answer: pushed once the replicas have the step */
        nkeys++;
    }
    argv[n++] = ep;
    argv[n++] = req != NULL ? req->sid : "";
    argv[n++] = req != NULL && req->bad ? "bad" : op;
    argv[n++] = rq;
    argv[n++] = player;
    argv[n++] = now;
    argv[n++] = late;
    argv[n++] = buy;
    argv[n++] = fee;
    argv[n++] = stack;
    argv[n++] = maxe;
    argv[n++] = re;
    argv[n++] = maxre;
    argv[n++] = tid;
    argv[n++] = clk;
    argv[n++] = arg16 != NULL ? arg16 : "";
    const char **all = argv;
    const char **heap = NULL;
    if (nextra > 0) {
        heap = calloc((size_t)(n + nextra), sizeof *heap);
        if (heap == NULL)
            return -1;
        memcpy(heap, argv, (size_t)n * sizeof *heap);
        memcpy(heap + n, extra, (size_t)nextra * sizeof *heap);
        all = heap;
    }
    tour_cb_t *c = tour_cb(d, t, TOUR_CB_APPLY);
    int rc = c != NULL ? rconn_eval(d->rc, d->apply, tour_apply_cb, c, nkeys, n + nextra, all, NULL)
                       : -ENOMEM;
    free(heap);
    if (rc != 0) {
        free(c);
        return -1;
    }
    t->busy = true;
    return 0;
}

/* The answer of a request: its code for the metrics and the log, and what it changed. */
static void tour_note_answer(tour_t *t, const tour_req_t *q, const char *txt)
{
    tour_director_t *d = t->d;
    json_error_t err;
    json_t *a = json_loads(txt, 0, &err);
    const char *code = a != NULL ? json_string_value(json_object_get(a, "code")) : NULL;
    bool ok = a != NULL && json_is_true(json_object_get(a, "ok"));
    metrics_add(ok ? d->m_requests_ok : d->m_requests_refused, 1);
    log_emit(LOG_INFO, "tour_request", "{s:I,s:s,s:s,s:s,s:s,s:s}", "tournament", (json_int_t)t->id,
             "op", q->op, "req", q->req, "player", q->player, "code", code != NULL ? code : "?",
             "sid", q->sid);
    if (ok && strcmp(q->op, "register") == 0) {
        t->entries++;
        t->players++;
        t->pool += t->st->buy_in;
        if (t->play != NULL)
            tour_play_register(t->play, strtoull(q->player, NULL, 10),
                               (uint32_t)json_integer_value(json_object_get(a, "entry")),
                               json_integer_value(json_object_get(a, "stack")), t->st->buy_in,
                               t->st->fee);
    } else if (ok && strcmp(q->op, "unregister") == 0) {
        t->entries--;
        t->players--;
        t->pool -= t->st->buy_in;
    } else if (ok && strcmp(q->op, "cancel") == 0) {
        snprintf(t->status, sizeof t->status, "cancelled");
    }
    json_decref(a);
}

static void tour_after_step(tour_t *t)
{
    /* Over: nothing more to own (it left the live set in the same script). */
    if (strcmp(t->status, "cancelled") == 0 || strcmp(t->status, "finished") == 0) {
        t->want_release = true;
        return;
    }
    /* An SNG starts the moment it is full. */
    if (strcmp(t->status, "registering") == 0 && t->st != NULL &&
        t->st->format != TOUR_FORMAT_MTT && t->entries >= (int64_t)t->st->max_entrants)
        t->want_start = true; /* a match too (docs/tournaments.md "Match halls: the director") */
}

static void tour_apply_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_t *t = tour_cb_take(arg);
    if (t == NULL)
        return;
    if (r == NULL) {
        /* No answer (timeout, connection lost): the same step again; the cursor and the
         * request id make a repeat harmless. */
        tour_pump(t);
        return;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        if (tour_fenced_out(t, r))
            return;
        log_emit(LOG_ERROR, "tour_step_failed", "{s:I,s:s}", "tournament", (json_int_t)t->id,
                 "error", r->str);
        /* A refused cancellation split stays refused: drop the step, keep the tournament. */
        t->want_cancel_quorum = false;
        if (t->qlen > 0 && strcmp(t->queue[t->qhead].op, "cancel") == 0)
            tour_dequeue(t);
        tour_pump(t);
        return;
    }
    tour_step_ok(t, TOUR_CB_APPLY,
                 r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS ? r->str : "");
}

/* A step of TOUR_APPLY_LUA went through (and, with durability, reached the replicas). */
void tour_apply_done(tour_t *t, const char *txt)
{
    if (strcmp(txt, "done") == 0) {
        /* The director's own step went through. */
        if (t->want_start) {
            t->want_start = false;
            snprintf(t->status, sizeof t->status, "running");
            t->clock_base_ms = 0;
            t->mono_base_ms = clock_mono_ms();
            t->level = 0;
            t->want_load = true; /* the model, then the draw */
            log_emit(LOG_INFO, "tour_started", "{s:I,s:I}", "tournament", (json_int_t)t->id,
                     "entries", (json_int_t)t->entries);
            tour_arm_clock(t);
        } else if (t->want_cancel_quorum) {
            t->want_cancel_quorum = false;
            snprintf(t->status, sizeof t->status, "cancelled");
        }
    } else if (t->qlen > 0) {
        tour_req_t *q = &t->queue[t->qhead];
        if (strncmp(txt, "replay ", 7) == 0)
            log_emit(LOG_INFO, "tour_request_replayed", "{s:I,s:s,s:s}", "tournament",
                     (json_int_t)t->id, "req", q->req, "sid", q->sid);
        else if (strcmp(txt, "skip") != 0)
            tour_note_answer(t, q, txt);
        tour_dequeue(t);
    }
    tour_after_step(t);
    tour_pump(t);
}

/* A cancellation after the start: the split of docs/tournaments.md "Cancelling a tournament"
 * over the entries still in, computed here, applied (and checked to sum to the pool) by the
 * script. */
static void tour_cancel_read_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_t *t = tour_cb_take(arg);
    if (t == NULL)
        return;
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->element[0]->type != REDIS_REPLY_ARRAY) {
        tour_pump(t); /* read again */
        return;
    }
    const redisReply *kv = r->element[0];
    int64_t pool =
        r->element[1]->type == REDIS_REPLY_STRING ? strtoll(r->element[1]->str, NULL, 10) : 0;
    size_t cap = kv->elements / 2 + 1;
    tour_survivor_t *sv = calloc(cap, sizeof *sv);
    int64_t *amounts = calloc(cap, sizeof *amounts);
    const char **pairs = calloc(2 * cap, sizeof *pairs);
    char(*num)[24] = calloc(cap, sizeof *num);
    uint32_t *seq = calloc(cap, sizeof *seq);
    bool match = t->st->format == TOUR_FORMAT_MATCH;
    size_t n = 0;
    for (size_t i = 0; sv && amounts && pairs && num && seq && i + 1 < kv->elements; i += 2) {
        json_t *e = json_loads(kv->element[i + 1]->str, 0, NULL);
        const char *state = json_string_value(json_object_get(e, "state"));
        int64_t stack = json_integer_value(json_object_get(e, "stack"));
        /* Still in: a hold'em entry with chips; a match's entry still playing (its scores are
         * points, never chips: "Match halls: cancelling a running match"). */
        bool in =
            state != NULL &&
            (match ? strcmp(state, "playing") == 0
                   : (strcmp(state, "playing") == 0 || strcmp(state, "waiting") == 0) && stack > 0);
        if (in) {
            /* A match lists them by entry number (the odd chips' order): insertion sort. */
            size_t at = n;
            uint32_t en = (uint32_t)json_integer_value(json_object_get(e, "entry"));
            while (match && at > 0 && seq[at - 1] > en) {
                sv[at] = sv[at - 1];
                seq[at] = seq[at - 1];
                pairs[2 * at] = pairs[2 * (at - 1)];
                at--;
            }
            sv[at].player = strtoull(kv->element[i]->str, NULL, 10);
            sv[at].chips = stack > 0 ? stack : 1;
            sv[at].buyins_paid = json_integer_value(json_object_get(e, "paid"));
            seq[at] = en;
            pairs[2 * at] = kv->element[i]->str;
            n++;
        }
        json_decref(e);
    }
    size_t nplaces = 0,
           pcap = t->entries > 0 ? tour_payout_places(&t->st->payouts, (uint32_t)t->entries) : 0;
    int64_t *prizes = calloc(pcap + 1, sizeof *prizes);
    int rc2 = -EINVAL;
    if (match && n > 0)
        rc2 = tour_payout_cancel_match(pool, sv, n, amounts);
    else if (prizes != NULL && n > 0 && pcap > 0 &&
             tour_payout_table(&t->st->payouts, (uint32_t)t->entries, pool, prizes, pcap,
                               &nplaces) == 0)
        rc2 = tour_payout_cancel(prizes, nplaces, pool, sv, n, amounts);
    free(prizes);
    free(seq);
    tour_req_t *q = &t->queue[t->qhead];
    if (rc2 == 0) {
        for (size_t i = 0; i < n; i++) {
            snprintf(num[i], sizeof num[i], "%" PRId64, amounts[i]);
            pairs[2 * i + 1] = num[i];
        }
        if (tour_apply_send(t, "cancel", q, q->reason, pairs, (int)(2 * n)) != 0)
            rc2 = -EIO;
    } else {
        /* A bug, not a player's doing: answered BAD_REQUEST so the stream goes on. */
        log_emit(LOG_ERROR, "tour_cancel_split_failed", "{s:I,s:i,s:I}", "tournament",
                 (json_int_t)t->id, "error", rc2, "survivors", (json_int_t)n);
        q->bad = true;
        if (tour_apply_send(t, "cancel", q, NULL, NULL, 0) != 0)
            rc2 = -EIO;
    }
    free(sv);
    free(amounts);
    free(pairs);
    free(num);
    if (rc2 == -EIO)
        tour_pump(t);
}

/* Sends the writes of a step the director computes itself (no request answered). */
static void tour_own_commit(tour_t *t, tour_commit_t *writes)
{
    tour_commit_begin(t, NULL, NULL);
    for (size_t i = 0; i < writes->n; i++)
        tour_commit_add(&t->inflight, writes->v[i]);
    if (writes->failed)
        t->inflight.failed = true;
    tour_commit_free(writes);
    if (tour_commit_send(t) != 0)
        t->want_release = true;
}

/* A running match's model from Redis (tour_match.h): its entries, tables, stages and meta; a
 * match started but not begun (the start and the first pairing are two steps) begins now. */
static void tour_match_load(tour_t *t, const redisReply *r)
{
    const redisReply *meta = r->element[2];
    t->pool = meta_int(meta, "pool");
    t->entries = meta_int(meta, "entries");
    t->rng = meta_int(meta, "rng");
    t->stage_clock0 = meta_int(meta, "stage_clock0");
    tour_match_t *m = tour_match_create(t->st, t->id);
    int bad = m == NULL;
    const redisReply *en = r->element[0], *tb = r->element[1], *sg = r->element[3];
    for (size_t i = 0; !bad && i + 1 < en->elements; i += 2)
        bad = tour_match_load_entry(m, en->element[i]->str, en->element[i + 1]->str) != 0;
    for (size_t i = 0; !bad && i + 1 < tb->elements; i += 2)
        bad = tour_match_load_table(m, tb->element[i + 1]->str) != 0;
    for (size_t i = 0; !bad && i + 1 < sg->elements; i += 2)
        bad = tour_match_load_stage(m, sg->element[i]->str, sg->element[i + 1]->str) != 0;
    if (!bad) {
        /* A fresh match's generator: its seed drawn once, written with the first commit. */
        uint64_t rng =
            t->rng != 0 ? (uint64_t)t->rng : ((uint64_t)arc4random() << 32 | arc4random());
        tour_match_set_meta(m, rng, t->pool, (uint32_t)t->entries, t->stage_clock0);
        bad = tour_match_loaded(m) != 0;
    }
    if (bad) {
        log_emit(LOG_ERROR, "tour_load_failed", "{s:I}", "tournament", (json_int_t)t->id);
        tour_match_free(m);
        return; /* it idles; an operator looks (its claim is renewed, nothing is written) */
    }
    tour_match_free(t->match);
    t->match = m;
    t->want_load = false;
    log_emit(LOG_INFO, "tour_model_loaded", "{s:I,s:i,s:b,s:I}", "tournament", (json_int_t)t->id,
             "players_left", (int)tour_match_left(m), "drawn", tour_match_begun(m), "clock_ms",
             (json_int_t)tour_clock_ms(t));
    if (!tour_match_begun(m)) {
        tour_commit_t writes = {0};
        if (tour_match_begin(m, tour_clock_ms(t), &writes) == 0) {
            tour_own_commit(t, &writes);
            return;
        }
        tour_commit_free(&writes);
        log_emit(LOG_ERROR, "tour_draw_failed", "{s:I}", "tournament", (json_int_t)t->id);
        t->want_release = true;
    }
    tour_pump(t);
}

/* Reads the entries and tables of a running tournament into a new model. */
static void tour_load_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_t *t = tour_cb_take(arg);
    if (t == NULL)
        return;
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 4) {
        tour_pump(t); /* read again */
        return;
    }
    if (t->st->format == TOUR_FORMAT_MATCH) {
        tour_match_load(t, r);
        return;
    }
    /* The numbers as Redis has them (not as this director counted them). */
    const redisReply *meta = r->element[2];
    t->pool = meta_int(meta, "pool");
    t->entries = meta_int(meta, "entries");
    t->rng = meta_int(meta, "rng");
    t->paid_out = meta_int(meta, "paid_out");
    t->h4h_on = meta_int(meta, "h4h_on");
    t->h4h_round = meta_int(meta, "h4h_round");
    tour_play_t *p = tour_play_create(t->st, t->id);
    int bad = p == NULL;
    const redisReply *en = r->element[0], *tb = r->element[1];
    for (size_t i = 0; !bad && i + 1 < en->elements; i += 2)
        bad = tour_play_load_entry(p, en->element[i]->str, en->element[i + 1]->str) != 0;
    for (size_t i = 0; !bad && i + 1 < tb->elements; i += 2)
        bad = tour_play_load_table(p, tb->element[i + 1]->str) != 0;
    if (bad) {
        log_emit(LOG_ERROR, "tour_load_failed", "{s:I}", "tournament", (json_int_t)t->id);
        tour_play_free(p);
        return; /* it idles; an operator looks (its claim is renewed, nothing is written) */
    }
    tour_play_set_meta(p, (uint64_t)t->rng, t->pool, t->paid_out, (uint32_t)t->entries);
    tour_play_set_h4h(p, t->h4h_on != 0, (uint32_t)t->h4h_round);
    tour_play_free(t->play);
    t->play = p;
    t->want_load = false;
    tour_sync_pause(t);
    log_emit(LOG_INFO, "tour_model_loaded", "{s:I,s:i,s:b}", "tournament", (json_int_t)t->id,
             "players_left", (int)tour_play_left(p), "drawn", tour_play_drawn(p));
    if (!tour_play_drawn(p)) {
        /* Started, not drawn yet (the start and the draw are two steps): draw now. */
        tour_commit_t writes = {0};
        tour_commit_begin(t, NULL, NULL);
        if (tour_play_draw(p, &writes) == 0) {
            for (size_t i = 0; i < writes.n; i++)
                tour_commit_add(&t->inflight, writes.v[i]);
            if (writes.failed)
                t->inflight.failed = true;
            tour_commit_free(&writes);
            if (tour_commit_send(t) != 0)
                t->want_release = true;
            return;
        }
        tour_commit_free(&writes);
        tour_commit_free(&t->inflight);
        log_emit(LOG_ERROR, "tour_draw_failed", "{s:I}", "tournament", (json_int_t)t->id);
    }
    tour_pump(t);
}

static void tour_load(tour_t *t)
{
    char entries[TOUR_KEY_MAX], tables[TOUR_KEY_MAX], meta[TOUR_KEY_MAX], stages[TOUR_KEY_MAX];
    tour_key(entries, sizeof entries, t->id, "entries");
    tour_key(tables, sizeof tables, t->id, "tables");
    tour_key(meta, sizeof meta, t->id, "meta");
    tour_key(stages, sizeof stages, t->id, "stages");
    const char *argv[] = {entries, tables, meta, stages};
    tour_cb_t *c = tour_cb(t->d, t, TOUR_CB_LOAD);
    if (c != NULL && rconn_eval(t->d->rc, t->d->read_model, tour_load_cb, c, 4, 4, argv, NULL) == 0)
        t->busy = true;
    else
        free(c);
}

/* Runs the next step of t if none is in flight: release, start, a quorum cancel, or the next
 * request of its queue. */
void tour_pump(tour_t *t)
{
    tour_director_t *d = t->d;
    if (t->busy || !atomic_load(&d->connected))
        return;
    if (t->want_release) {
        tour_release(t);
        return;
    }
    if (t->st == NULL)
        return;
    if (t->want_start) {
        char overlay[24];
        int64_t ov = t->st->guarantee > t->pool ? t->st->guarantee - t->pool : 0;
        snprintf(overlay, sizeof overlay, "%" PRId64, ov);
        if (tour_apply_send(t, "start", NULL, overlay, NULL, 0) == 0)
            t->pool += ov;
        return;
    }
    if (t->want_cancel_quorum) {
        tour_apply_send(t, "cancel", NULL, "no quorum", NULL, 0);
        return;
    }
    if (t->want_load) {
        tour_load(t);
        return;
    }
    if (t->qlen == 0)
        return;
    const tour_req_t *q = &t->queue[t->qhead];
    if (!q->bad && (strcmp(q->op, "deal") == 0 || strcmp(q->op, "hand") == 0)) {
        tour_table_request(t, q);
        return;
    }
    if (!q->bad && strcmp(q->op, "cancel") == 0 && strcmp(t->status, "running") == 0) {
        char entries[TOUR_KEY_MAX];
        char pool[TOUR_KEY_MAX];
        tour_key(entries, sizeof entries, t->id, "entries");
        snprintf(pool, sizeof pool, TOUR_POOL_KEY_PREFIX "%" PRIu64, t->id);
        /* The entries and the pool in one read (a script: one consistent view). */
        const char *argv[] = {entries, pool};
        tour_cb_t *c = tour_cb(d, t, TOUR_CB_CANCEL_READ);
        if (c != NULL && rconn_eval(d->rc, d->read2, tour_cancel_read_cb, c, 2, 2, argv, NULL) == 0)
            t->busy = true;
        else
            free(c);
        return;
    }
    tour_apply_send(t, q->op, q, q->reason, NULL, 0);
}

/* The clock's next event: an MTT's start time, or the next level. */
static void tour_clock_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tour_t *t = arg;
    if (t->st == NULL || atomic_load(&t->d->releasing))
        return;
    if (strcmp(t->status, "registering") == 0) {
        if (t->st->format != TOUR_FORMAT_SNG && t->start_at_ms > 0 &&
            clock_wall_ms() >= t->start_at_ms) {
            if (t->entries >= (int64_t)t->st->min_entrants)
                t->want_start = true;
            else
                t->want_cancel_quorum = true;
            tour_pump(t);
        }
        tour_arm_clock(t);
        return;
    }
    if (strcmp(t->status, "running") != 0)
        return;
    tour_clock_t now;
    if (tour_structure_level_at(t->st, tour_clock_ms(t), &now) == 0 && now.index != t->level) {
        /* Written through the step queue: a level step never races a request's. */
        char lv[24];
        snprintf(lv, sizeof lv, "%zu", now.index);
        if (!t->busy && tour_apply_send(t, "level", NULL, lv, NULL, 0) == 0) {
            t->level = now.index;
            log_emit(LOG_INFO, "tour_level", "{s:I,s:i,s:I}", "tournament", (json_int_t)t->id,
                     "level", (int)now.index, "clock_ms", (json_int_t)tour_clock_ms(t));
        }
    }
    tour_arm_clock(t);
}

void tour_arm_clock(tour_t *t)
{
    if (t->st == NULL)
        return;
    int64_t wait_ms = -1;
    if (strcmp(t->status, "registering") == 0 && t->st->format != TOUR_FORMAT_SNG &&
        t->start_at_ms > 0) {
        wait_ms = t->start_at_ms - clock_wall_ms();
        if (wait_ms < 0)
            wait_ms = t->want_start || t->want_cancel_quorum ? 200 : 0;
    } else if (strcmp(t->status, "running") == 0 && !t->paused) {
        tour_clock_t now;
        if (tour_structure_level_at(t->st, tour_clock_ms(t), &now) == 0)
            wait_ms = now.index != t->level ? 50 : now.ms_to_next;
    }
    if (wait_ms < 0) {
        evtimer_del(t->clock_ev);
        return;
    }
    struct timeval tv = {wait_ms / 1000, (wait_ms % 1000) * 1000};
    evtimer_add(t->clock_ev, &tv);
}

/* ---- claiming ----------------------------------------------------------------------------- */

static void tour_adopt(tour_director_t *d, uint64_t id, const char *token, int64_t epoch,
                       const redisReply *meta)
{
    tour_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return;
    t->d = d;
    t->id = id;
    t->epoch = epoch;
    snprintf(t->token, sizeof t->token, "%s", token);
    t->queue = calloc(TOUR_QUEUE_MAX, sizeof *t->queue);
    const char *status = meta_field(meta, "status");
    snprintf(t->status, sizeof t->status, "%s", status != NULL ? status : "registering");
    const char *cursor = meta_field(meta, "cursor");
    snprintf(t->read_cursor, sizeof t->read_cursor, "%s", cursor != NULL ? cursor : "0-0");
    t->entries = meta_int(meta, "entries");
    t->players = meta_int(meta, "players");
    t->pool = meta_int(meta, "pool");
    t->start_at_ms = meta_int(meta, "start_at_ms");
    t->clock_base_ms = meta_int(meta, "clock_ms");
    t->mono_base_ms = clock_mono_ms();
    t->level = (size_t)meta_int(meta, "level");
    t->rng = meta_int(meta, "rng");
    t->paid_out = meta_int(meta, "paid_out");
    t->h4h_on = meta_int(meta, "h4h_on");
    t->h4h_round = meta_int(meta, "h4h_round");
    t->want_load = strcmp(t->status, "running") == 0;
    t->last_renew_ok_ms = clock_mono_ms();
    const char *sj = meta_field(meta, "structure");
    char err[256] = "";
    if (sj == NULL || tour_structure_parse(sj, strlen(sj), &t->st, err, sizeof err) != 0) {
        t->st = NULL;
        log_emit(LOG_ERROR, "tour_bad_structure", "{s:I,s:s}", "tournament", (json_int_t)id,
                 "error", sj == NULL ? "no structure" : err);
    }
    t->renew_ev = evtimer_new(d->cfg.base, tour_renew_timer, t);
    t->clock_ev = evtimer_new(d->cfg.base, tour_clock_timer, t);
    if (t->queue == NULL || t->renew_ev == NULL || t->clock_ev == NULL) {
        tour_free(t);
        return; /* the claim expires by itself */
    }
    t->next = d->tours;
    d->tours = t;
    atomic_fetch_add(&d->owned, 1);
    metrics_set(d->m_owned, (double)atomic_load(&d->owned));
    metrics_add(d->m_claims, 1);
    log_emit(LOG_INFO, "tour_claimed", "{s:I,s:I,s:s,s:I,s:I,s:s}", "tournament", (json_int_t)id,
             "epoch", (json_int_t)epoch, "status", t->status, "clock_ms",
             (json_int_t)t->clock_base_ms, "entries", (json_int_t)t->entries, "cursor",
             t->read_cursor);
    struct timeval tv = {d->cfg.claim_ttl_ms / 3 / 1000, (d->cfg.claim_ttl_ms / 3 % 1000) * 1000};
    evtimer_add(t->renew_ev, &tv);
    tour_after_step(t);
    tour_arm_clock(t);
    tour_pump(t);
}

typedef struct {
    tour_director_t *d;
    uint64_t id;
    char token[33];
} tour_claim_t;

static void tour_srem_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    (void)r;
    (void)arg;
}

static void tour_claim_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_claim_t *c = arg;
    tour_director_t *d = c->d;
    d->claims_in_flight--;
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_INTEGER && r->element[0]->integer > 0 &&
        r->element[1]->type == REDIS_REPLY_ARRAY) {
        if (atomic_load(&d->releasing)) {
            /* Claimed while the drain began: hand it straight back. */
            tour_adopt(d, c->id, c->token, r->element[0]->integer, r->element[1]);
            tour_t *t = tour_find(d, c->id, r->element[0]->integer);
            if (t != NULL) {
                t->want_release = true;
                tour_pump(t);
            }
        } else {
            tour_adopt(d, c->id, c->token, r->element[0]->integer, r->element[1]);
        }
    } else if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
               r->element[0]->type == REDIS_REPLY_INTEGER && r->element[0]->integer == 0 &&
               keytag_tour_entity()) {
        /* Over or gone, by entity: the live set is in the money slot, not the tournament's, so
         * it is left here, a second step (idempotent: a SREM), not in the claim script. */
        rconn_command(d->rc, tour_srem_cb, NULL, "SREM %s %" PRIu64, TOUR_LIVE_KEY, c->id);
    } else if (r != NULL && r->type == REDIS_REPLY_ERROR) {
        log_emit(LOG_WARN, "tour_claim_failed", "{s:I,s:s}", "tournament", (json_int_t)c->id,
                 "error", r->str);
    }
    free(c);
}

static void tour_claim(tour_director_t *d, uint64_t id)
{
    tour_claim_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        return;
    c->d = d;
    c->id = id;
    uint8_t raw[16];
    arc4random_buf(raw, sizeof raw);
    for (int i = 0; i < 16; i++)
        snprintf(c->token + 2 * i, 3, "%02x", raw[i]);
    char owner[TOUR_KEY_MAX], epoch[TOUR_KEY_MAX], meta[TOUR_KEY_MAX], ttl[24], tid[24];
    tour_key(owner, sizeof owner, id, "owner");
    tour_key(epoch, sizeof epoch, id, "epoch");
    tour_key(meta, sizeof meta, id, "meta");
    snprintf(ttl, sizeof ttl, "%d", d->cfg.claim_ttl_ms);
    snprintf(tid, sizeof tid, "%" PRIu64, id);
    /* By entity the live set is in another slot: the script is given a key of the tournament's
     * that holds nothing instead (its SREM a no-op), and tour_claim_cb leaves the live set. */
    char nolive[TOUR_KEY_MAX];
    tour_key(nolive, sizeof nolive, id, "nolive");
    const char *live = keytag_tour_entity() ? nolive : TOUR_LIVE_KEY;
    const char *argv[] = {owner, epoch, meta, live, c->token, ttl, d->director_id, tid};
    if (rconn_eval(d->rc, d->claim, tour_claim_cb, c, 4, 8, argv, NULL) != 0)
        free(c);
    else
        d->claims_in_flight++;
}

static void tour_scan_arm(tour_director_t *d)
{
    /* Jittered (75..125 %) so that directors started together do not race for every claim. */
    int ms = d->cfg.scan_ms * 3 / 4 + (int)arc4random_uniform((uint32_t)d->cfg.scan_ms / 2 + 1);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(d->scan_ev, &tv);
}

static void tour_scan_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_director_t *d = arg;
    d->scan_busy = false;
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || atomic_load(&d->releasing))
        return;
    for (size_t i = 0; i < r->elements && d->claims_in_flight < TOUR_CLAIMS_MAX; i++) {
        if (r->element[i]->type != REDIS_REPLY_STRING)
            continue;
        char *end;
        uint64_t id = strtoull(r->element[i]->str, &end, 10);
        if (*end != '\0' || id == 0 || tour_find(d, id, 0) != NULL)
            continue;
        if (d->cfg.max_owned > 0 &&
            atomic_load(&d->owned) + d->claims_in_flight >= d->cfg.max_owned)
            break;
        tour_claim(d, id);
    }
}

/* The match halls' tick answered: the matches it opened (any director may have, once). */
static void tour_hall_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_director_t *d = arg;
    d->hall_busy = false;
    if (r != NULL && r->type == REDIS_REPLY_ERROR)
        log_emit(LOG_WARN, "tour_hall_tick_failed", "{s:s}", "error", r->str);
    for (size_t i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_INTEGER)
            log_emit(LOG_INFO, "tour_hall_match_opened", "{s:I}", "tournament",
                     (json_int_t)r->element[i]->integer);
}

static void tour_scan_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tour_director_t *d = arg;
    if (atomic_load(&d->releasing))
        return;
    if (!d->scan_busy && atomic_load(&d->connected) &&
        rconn_command(d->rc, tour_scan_cb, d, "SMEMBERS %s", TOUR_LIVE_KEY) == 0)
        d->scan_busy = true;
    if (!d->hall_busy && atomic_load(&d->connected)) {
        /* The match halls' schedule (TOUR_HALL_TICK_LUA), on the director's clock as every start.
         */
        char now[24];
        snprintf(now, sizeof now, "%" PRId64, clock_wall_ms());
        const char *argv[] = {TOUR_HALLS_KEY, TOUR_SEQ_KEY, TOUR_ALL_KEY, TOUR_LIVE_KEY, now};
        if (rconn_eval(d->rc, d->hall_tick, tour_hall_cb, d, 4, 5, argv, NULL) == 0)
            d->hall_busy = true;
    }
    tour_scan_arm(d);
}

/* ---- reading the request streams ---------------------------------------------------------- */

static bool tour_req_id_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > TOUR_REQ_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && strchr("_.:-", s[i]) == NULL)
            return false;
    return true;
}

static bool tour_player_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 20 || s[0] == '0')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    return errno == 0 && v > 0;
}

/* One stream entry into t's queue; a malformed one is still queued (answered BAD_REQUEST, so
 * the cursor moves past it). */
static void tour_enqueue(tour_t *t, const redisReply *entry)
{
    tour_req_t q = {0};
    snprintf(q.sid, sizeof q.sid, "%s", entry->element[0]->str);
    const redisReply *f = entry->element[1];
    for (size_t i = 0; f->type == REDIS_REPLY_ARRAY && i + 1 < f->elements; i += 2) {
        const char *k = f->element[i]->str, *v = f->element[i + 1]->str;
        if (k == NULL || v == NULL)
            continue;
        if (strcmp(k, "record") == 0) {
            free(q.record);
            q.record = f->element[i + 1]->len <= TOUR_RECORD_MAX ? strdup(v) : NULL;
            q.bad = q.bad || q.record == NULL;
            continue;
        }
        char *dst = strcmp(k, "op") == 0       ? q.op
                    : strcmp(k, "req") == 0    ? q.req
                    : strcmp(k, "player") == 0 ? q.player
                    : strcmp(k, "reason") == 0 ? q.reason
                    : strcmp(k, "table") == 0  ? q.table
                    : strcmp(k, "hand") == 0   ? q.hand
                    : strcmp(k, "result") == 0 ? q.result
                    : strcmp(k, "host") == 0   ? q.host
                                               : NULL;
        size_t cap = dst == q.op       ? sizeof q.op
                     : dst == q.req    ? sizeof q.req
                     : dst == q.player ? sizeof q.player
                     : dst == q.table  ? sizeof q.table
                     : dst == q.hand   ? sizeof q.hand
                     : dst == q.result ? sizeof q.result
                     : dst == q.host   ? sizeof q.host
                                       : sizeof q.reason;
        if (dst != NULL) {
            if (strlen(v) >= cap)
                q.bad = true;
            snprintf(dst, cap, "%s", v);
        }
    }
    bool needs_player = strcmp(q.op, "register") == 0 || strcmp(q.op, "unregister") == 0;
    bool table_op = strcmp(q.op, "deal") == 0 || strcmp(q.op, "hand") == 0;
    if (!tour_req_id_ok(q.req) || (needs_player && !tour_player_ok(q.player)) ||
        (table_op &&
         (!tour_player_ok(q.table) || !tour_player_ok(q.hand) || !tour_req_id_ok(q.host))) ||
        !(needs_player || table_op || strcmp(q.op, "cancel") == 0))
        q.bad = true;
    if (q.bad) {
        log_emit(LOG_WARN, "tour_bad_request", "{s:I,s:s,s:s}", "tournament", (json_int_t)t->id,
                 "sid", q.sid, "op", q.op);
        /* Answered to the asker only when its request id is usable as a key. */
        if (!tour_req_id_ok(q.req))
            q.req[0] = '\0';
    }
    t->queue[(t->qhead + t->qlen) % TOUR_QUEUE_MAX] = q;
    t->qlen++;
    snprintf(t->read_cursor, sizeof t->read_cursor, "%s", q.sid);
}

static void tour_read_again(tour_director_t *d, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(d->read_ev, &tv);
}

/* Queues the entries of an XREAD reply to their tournaments; how many streams had some. */
static size_t tour_read_streams(tour_director_t *d, const redisReply *r)
{
    size_t got = 0;
    if (r != NULL && r->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i < r->elements; i++) {
            const redisReply *s = r->element[i];
            if (s->type != REDIS_REPLY_ARRAY || s->elements != 2 ||
                s->element[0]->type != REDIS_REPLY_STRING)
                continue;
            uint64_t id = 0; /* the stream's key: tour_key(id, "in") */
            sscanf(s->element[0]->str,
                   keytag_tour_entity() ? "{t:%" SCNu64 "}"
                   : keytag_cluster()   ? "{croupier:money}:tour:%" SCNu64 ":"
                                        : "{croupier:tour:%" SCNu64 "}",
                   &id);
            tour_t *t = tour_find(d, id, 0);
            if (t == NULL || t->want_release)
                continue;
            const redisReply *es = s->element[1];
            for (size_t j = 0; j < es->elements && t->qlen < TOUR_QUEUE_MAX; j++) {
                const redisReply *e = es->element[j];
                if (e->type == REDIS_REPLY_ARRAY && e->elements == 2 &&
                    e->element[0]->type == REDIS_REPLY_STRING)
                    tour_enqueue(t, e);
            }
            got++;
            tour_pump(t);
        }
    }
    return got;
}

static void tour_read_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_director_t *d = arg;
    d->reading = false;
    tour_read_streams(d, r);
    tour_read_again(d, r == NULL ? 100 : 0);
}

/*
 * By entity every tournament's stream is in a slot of its own, so one XREAD cannot name them all
 * (CROSSSLOT): one XREAD per tournament, without BLOCK (a blocking read would hold its node's
 * connection), all in flight together; the next round at once when any brought entries, else
 * after TOUR_READ_IDLE_MS.
 */
#define TOUR_READ_IDLE_MS 50

static void tour_read_round_done(tour_director_t *d)
{
    if (--d->reads_out > 0)
        return;
    d->reading = false;
    tour_read_again(d, d->read_failed ? 100 : d->read_got ? 0 : TOUR_READ_IDLE_MS);
}

static void tour_read_one_cb(rconn_t *rc, redisReply *r, void *arg)
{
    (void)rc;
    tour_director_t *d = arg;
    if (tour_read_streams(d, r) > 0)
        d->read_got = true;
    if (r == NULL)
        d->read_failed = true;
    tour_read_round_done(d);
}

static void tour_read_each(tour_director_t *d)
{
    char count[16];
    snprintf(count, sizeof count, "%d", TOUR_READ_COUNT);
    d->reading = true;
    d->reads_out = 1; /* held until every read is sent */
    d->read_got = d->read_failed = false;
    for (tour_t *t = d->tours; t != NULL; t = t->next) {
        if (t->want_release || t->qlen >= TOUR_QUEUE_MAX)
            continue;
        char key[TOUR_KEY_MAX];
        tour_key(key, sizeof key, t->id, "in");
        const char *argv[] = {"XREAD", "COUNT", count, "STREAMS", key, t->read_cursor};
        d->reads_out++;
        if (rconn_command_argv(d->rx, tour_read_one_cb, d, 6, argv, NULL) != 0) {
            d->reads_out--;
            d->read_failed = true;
        }
    }
    tour_read_round_done(d); /* the hold */
}

static void tour_read_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    tour_director_t *d = arg;
    if (d->reading)
        return;
    size_t n = 0;
    for (tour_t *t = d->tours; t != NULL; t = t->next)
        if (!t->want_release && t->qlen < TOUR_QUEUE_MAX)
            n++;
    if (n == 0 || !rconn_connected(d->rx)) {
        tour_read_again(d, 100);
        return;
    }
    if (keytag_tour_entity()) {
        tour_read_each(d);
        return;
    }
    const char **argv = calloc(6 + 2 * n, sizeof *argv);
    char(*keys)[TOUR_KEY_MAX] = calloc(n, sizeof *keys);
    if (argv == NULL || keys == NULL) {
        free(argv);
        free(keys);
        tour_read_again(d, 100);
        return;
    }
    char count[16], block[16];
    snprintf(count, sizeof count, "%d", TOUR_READ_COUNT);
    snprintf(block, sizeof block, "%d", TOUR_READ_BLOCK_MS);
    int a = 0;
    argv[a++] = "XREAD";
    argv[a++] = "COUNT";
    argv[a++] = count;
    argv[a++] = "BLOCK";
    argv[a++] = block;
    argv[a++] = "STREAMS";
    size_t i = 0;
    for (tour_t *t = d->tours; t != NULL; t = t->next)
        if (!t->want_release && t->qlen < TOUR_QUEUE_MAX) {
            tour_key(keys[i], TOUR_KEY_MAX, t->id, "in");
            argv[a++] = keys[i++];
        }
    for (tour_t *t = d->tours; t != NULL; t = t->next)
        if (!t->want_release && t->qlen < TOUR_QUEUE_MAX)
            argv[a++] = t->read_cursor;
    if (rconn_command_argv(d->rx, tour_read_cb, d, a, argv, NULL) == 0)
        d->reading = true;
    else
        tour_read_again(d, 100);
    free(argv);
    free(keys);
}

/* ---- the director ------------------------------------------------------------------------- */

static void tour_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    tour_director_t *d = arg;
    atomic_store(&d->connected, connected);
    log_emit(connected ? LOG_INFO : LOG_WARN, "tour_redis", "{s:b}", "connected", connected);
    if (connected)
        for (tour_t *t = d->tours; t != NULL; t = t->next)
            tour_pump(t);
}

int tour_director_create(const tour_director_config_t *cfg, tour_director_t **out)
{
    *out = NULL;
    if (cfg->base == NULL ||
        (cfg->redis_host == NULL && cfg->redis_sentinels == NULL && cfg->redis_cluster == NULL) ||
        cfg->claim_ttl_ms < 0 || cfg->scan_ms < 0 || cfg->max_owned < 0 || cfg->min_replicas < 0) {
        log_emit(LOG_ERROR, "tour_director_config", "{s:s}", "error",
                 "base, redis and non-negative claim TTL, scan and max owned are required");
        return -EINVAL;
    }
    tour_director_t *d = calloc(1, sizeof *d);
    if (d == NULL)
        return -ENOMEM;
    d->cfg = *cfg;
    if (d->cfg.claim_ttl_ms == 0)
        d->cfg.claim_ttl_ms = 3000;
    if (d->cfg.claim_ttl_ms < 30)
        d->cfg.claim_ttl_ms = 30;
    if (d->cfg.scan_ms == 0)
        d->cfg.scan_ms = 500;
    if (d->cfg.wait_ms <= 0)
        d->cfg.wait_ms = 500;
    d->director_id = strdup(cfg->director_id != NULL ? cfg->director_id : "director");
    metrics_registry_t *m = cfg->metrics;
    if (m == NULL) {
        static metrics_registry_t *own;
        if (own == NULL)
            own = metrics_create();
        m = own;
    }
    d->m_owned = metrics_gauge(m, "tour_owned", NULL, "tournaments this director owns");
    d->m_claims = metrics_counter(m, "tour_claims_total", NULL, "tournaments claimed");
    d->m_released = metrics_counter(m, "tour_handovers_total", "why=\"released\"",
                                    "tournaments let go: released on a drain, or lost");
    d->m_lost = metrics_counter(m, "tour_handovers_total", "why=\"lost\"",
                                "tournaments let go: released on a drain, or lost");
    d->m_renew_fail =
        metrics_counter(m, "tour_renew_failures_total", NULL, "claim renewals without an answer");
    d->m_requests_ok =
        metrics_counter(m, "tour_requests_total", "result=\"ok\"", "requests applied, by result");
    d->m_requests_refused = metrics_counter(m, "tour_requests_total", "result=\"refused\"",
                                            "requests applied, by result");
    d->m_stale = metrics_counter(m, "tour_stale_writes_total", NULL,
                                 "writes refused by the fence (another director owns it now)");
    rconn_opts_t o = {.host = cfg->redis_host,
                      .port = cfg->redis_port,
                      .name = "tour",
                      .on_state = tour_state_cb,
                      .arg = d,
                      .sentinels = cfg->redis_sentinels,
                      .master_name = cfg->redis_master,
                      .cluster = cfg->redis_cluster};
    d->rc = rconn_create(cfg->base, &o);
    rconn_opts_t ox = o;
    ox.name = "tour-read";
    ox.on_state = NULL;
    ox.request_timeout_ms = TOUR_READ_BLOCK_MS + 2000;
    d->rx = rconn_create(cfg->base, &ox);
    d->claim = rconn_script_create(TOUR_CLAIM_LUA);
    d->renew = rconn_script_create(TOUR_RENEW_LUA);
    d->release = rconn_script_create(TOUR_RELEASE_LUA);
    d->apply = rconn_script_create(TOUR_APPLY_LUA);
    d->read2 = rconn_script_create(
        "return {redis.call('HGETALL', KEYS[1]), redis.call('GET', KEYS[2]) or '0'}");
    d->commit = rconn_script_create(TOUR_COMMIT_LUA);
    d->hall_tick = rconn_script_create(TOUR_HALL_TICK_LUA);
    d->read_model = rconn_script_create("return {redis.call('HGETALL', KEYS[1]), "
                                        "redis.call('HGETALL', KEYS[2]), "
                                        "redis.call('HGETALL', KEYS[3]), "
                                        "redis.call('HGETALL', KEYS[4])}");
    d->scan_ev = evtimer_new(cfg->base, tour_scan_timer, d);
    d->read_ev = evtimer_new(cfg->base, tour_read_timer, d);
    if (d->rc == NULL || d->rx == NULL || d->claim == NULL || d->renew == NULL ||
        d->release == NULL || d->apply == NULL || d->read2 == NULL || d->commit == NULL ||
        d->read_model == NULL || d->hall_tick == NULL || d->scan_ev == NULL || d->read_ev == NULL ||
        d->director_id == NULL) {
        tour_director_destroy(d);
        return -ENOMEM;
    }
    tour_scan_arm(d);
    tour_read_again(d, 0);
    *out = d;
    return 0;
}

void tour_director_release_all(tour_director_t *d, void (*done)(void *arg), void *arg)
{
    atomic_store(&d->releasing, true);
    d->release_done = done;
    d->release_arg = arg;
    if (d->tours == NULL) {
        d->release_done = NULL;
        if (done != NULL)
            done(arg);
        return;
    }
    for (tour_t *t = d->tours, *next; t != NULL; t = next) {
        next = t->next;
        t->want_release = true;
        tour_pump(t);
    }
}

long tour_director_owned(const tour_director_t *d)
{
    return d != NULL ? atomic_load(&d->owned) : 0;
}

bool tour_director_ready(const tour_director_t *d)
{
    return d != NULL && atomic_load(&d->connected) && !atomic_load(&d->releasing);
}

void tour_director_destroy(tour_director_t *d)
{
    if (d == NULL)
        return;
    /* Pending callbacks run with NULL now and must find no tournament. */
    tour_t *all = d->tours;
    d->tours = NULL;
    d->release_done = NULL;
    rconn_destroy(d->rc);
    rconn_destroy(d->rx);
    while (all != NULL) {
        tour_t *next = all->next;
        tour_free(all);
        all = next;
    }
    rconn_script_destroy(d->claim);
    rconn_script_destroy(d->renew);
    rconn_script_destroy(d->release);
    rconn_script_destroy(d->apply);
    rconn_script_destroy(d->read2);
    rconn_script_destroy(d->commit);
    rconn_script_destroy(d->read_model);
    rconn_script_destroy(d->hall_tick);
    if (d->scan_ev)
        event_free(d->scan_ev);
    if (d->read_ev)
        event_free(d->read_ev);
    free(d->director_id);
    free(d);
}
