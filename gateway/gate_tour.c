/*
 * gate_tour.c -- tournaments through the gateway (docs/gateway.md "Tournaments", docs/protocol.md
 * "Tournaments"): ListTournaments and GetTournament read the director's state in Redis (the
 * tournament index, the meta hash, the asker's entry: tournament/tour_director.h's keys);
 * Register/UnregisterTournament append a request to the tournament's stream and wait for the
 * director's answer; the director's events (TOUR_EVENTS_CHANNEL) become TournamentEvent pushes
 * (gate_tour_events.c).
 * Parsing and request building are tournament/tour_client.h's, shared with croupier-ctl.
 *
 * Nothing here blocks the loop. The director answers a request on a list the asker would BLPOP;
 * a BLPOP holds its connection, so one per request in flight would be needed. The gateway polls
 * the list instead with LPOP on its one connection (pipelined with everything else), after 10
 * ms, then doubling to at most 100 ms, until budget_ms[GATE_REQ_TOUR] (3 s): the director reads
 * its streams with XREAD BLOCK and answers within milliseconds, so a request costs a handful of
 * LPOPs. No answer in time (no director owns the tournament, Redis slow) is UNAVAILABLE: the
 * request stays in the stream and may still be applied; the client sends it again with the same
 * request id on the same connection and gets the director's first answer (tour_client_gate_req).
 *
 * Every request is one gate_tour_op_t, on g->tour_ops until it is freed: once answered (or its
 * client gone) and its last Redis callback run (rconn runs every callback exactly once).
 */
#include "gate_tour_int.h"

#include "match_hall.h"
#include "tour_payout.h"

/* Newest tournaments a list reads, at most, when it filters (without a filter: its limit). */
#define GATE_TOUR_SCAN 500
#define GATE_TOUR_LIST_DEFAULT 50
/* Payout rows in a TournamentInfo, at most (the best places). */
#define GATE_TOUR_PAYOUT_ROWS 256
#define GATE_TOUR_POLL_FIRST_MS 10
#define GATE_TOUR_POLL_MAX_MS 100

static void gate_tour_unfollow(gate_conn_t *c, uint64_t id);
static void gate_tour_follow(gate_conn_t *c, uint64_t id);

void gate_tour_op_free(gate_tour_op_t *op)
{
    gate_t *g = op->g;
    if (op->prev != NULL)
        op->prev->next = op->next;
    else if (g->tour_ops == op)
        g->tour_ops = op->next;
    if (op->next != NULL)
        op->next->prev = op->prev;
    if (op->timer != NULL)
        event_free(op->timer);
    if (op->poll != NULL)
        event_free(op->poll);
    for (size_t i = 0; i < op->nrows; i++)
        tour_client_meta_clear(&op->rows[i].meta);
    free(op->rows);
    tour_client_meta_clear(&op->meta);
    free(op);
}

gate_tour_op_t *gate_tour_op_new(gate_t *g, gate_tour_kind_t kind)
{
    gate_tour_op_t *op = xcalloc(1, sizeof *op);
    op->g = g;
    op->kind = kind;
    op->next = g->tour_ops;
    if (op->next != NULL)
        op->next->prev = op;
    g->tour_ops = op;
    return op;
}

/* Frees every op left at gate_destroy (after rconn_destroy: their callbacks have run). */
void gate_tour_shutdown(gate_t *g)
{
    while (g->tour_ops != NULL)
        gate_tour_op_free(g->tour_ops);
}

/* The client connection an op answers, or NULL when it is gone (closed, another session). */
static gate_conn_t *gate_tour_conn(gate_tour_op_t *op)
{
    gate_conn_t *c = gate_conn_get(op->g, op->conn_id);
    if (c == NULL || c->closing || c->session != op->session || op->g->destroying)
        return NULL;
    return c;
}

/* The op is answered (or given up): its in-flight slot is released; freed when no callback is
 * left to run. */
static void gate_tour_end(gate_tour_op_t *op)
{
    if (!op->done) {
        op->done = true;
        if (op->timer != NULL)
            evtimer_del(op->timer);
        if (op->poll != NULL)
            evtimer_del(op->poll);
        gate_conn_t *c = gate_conn_get(op->g, op->conn_id);
        if (op->counted && c != NULL && c->inflight > 0)
            c->inflight--;
    }
    if (op->pending == 0)
        gate_tour_op_free(op);
}

static void gate_tour_fail(gate_tour_op_t *op, int code, const char *message)
{
    if (!op->done) {
        gate_conn_t *c = gate_tour_conn(op);
        /* A registration is followed from its start (gate_tour_ask): the events of its own step
         * (an SNG's start) may come before its answer. A refusal takes that back, but "already
         * registered" and "no answer in time" (it may still be applied). */
        if (c != NULL && op->kind == TOP_REGISTER && !op->followed &&
            code != CROUPIER__ERROR_CODE__ALREADY_REGISTERED &&
            code != CROUPIER__ERROR_CODE__UNAVAILABLE)
            gate_tour_unfollow(c, op->tournament);
        if (c != NULL)
            gate_conn_error(c, op->rid, code, message);
        if (code == CROUPIER__ERROR_CODE__UNAVAILABLE)
            metrics_add(op->g->m_degraded, 1);
    }
    gate_tour_end(op);
}

/* An operation's reads came back: true when its answer is to be made now; false while reads are
 * pending, when it was answered already (freed once the last read is in), or when a read failed
 * (answered UNAVAILABLE). */
static bool gate_tour_reads_done(gate_tour_op_t *op)
{
    if (op->pending > 0 || op->done) {
        if (op->done && op->pending == 0)
            gate_tour_op_free(op);
        return false;
    }
    if (op->failed) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE, "the tournament store failed");
        return false;
    }
    return true;
}

static void gate_tour_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_tour_op_t *op = arg;
    gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE,
                   op->kind == TOP_REGISTER || op->kind == TOP_UNREGISTER
                       ? "no answer from the tournament director in time; the request may still "
                         "be applied: send it again with the same request id"
                       : "the tournament store did not answer within the budget");
}

static void gate_tour_arm(gate_tour_op_t *op, int ms)
{
    op->timer = evtimer_new(op->g->base, gate_tour_deadline_cb, op);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(op->timer, &tv);
}

/* ---- following tournaments ----------------------------------------------------------------- */

bool gate_tour_follows(const gate_conn_t *c, uint64_t id)
{
    for (unsigned i = 0; i < c->ntours; i++)
        if (c->tours[i] == id)
            return true;
    return false;
}

/* The connection follows tournament id (newest first; the oldest is dropped past the cap). */
static void gate_tour_follow(gate_conn_t *c, uint64_t id)
{
    if (c->tours == NULL)
        c->tours = xcalloc(GATE_TOUR_FOLLOW_MAX, sizeof *c->tours);
    unsigned i;
    for (i = 0; i < c->ntours && c->tours[i] != id; i++)
        ;
    if (i == c->ntours && c->ntours < GATE_TOUR_FOLLOW_MAX)
        c->ntours++;
    if (i == GATE_TOUR_FOLLOW_MAX)
        i = GATE_TOUR_FOLLOW_MAX - 1;
    memmove(c->tours + 1, c->tours, i * sizeof *c->tours);
    c->tours[0] = id;
}

static void gate_tour_unfollow(gate_conn_t *c, uint64_t id)
{
    for (unsigned i = 0; i < c->ntours; i++)
        if (c->tours[i] == id) {
            memmove(c->tours + i, c->tours + i + 1, (c->ntours - i - 1) * sizeof *c->tours);
            c->ntours--;
            return;
        }
}

/* ---- conversions --------------------------------------------------------------------------- */

static Croupier__TournamentStatus gate_tour_status(tour_status_t st)
{
    switch (st) {
    case TOUR_STATUS_REGISTERING:
        return CROUPIER__TOURNAMENT_STATUS__TOUR_REGISTERING;
    case TOUR_STATUS_RUNNING:
        return CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING;
    case TOUR_STATUS_FINISHED:
        return CROUPIER__TOURNAMENT_STATUS__TOUR_FINISHED;
    case TOUR_STATUS_CANCELLED:
        return CROUPIER__TOURNAMENT_STATUS__TOUR_CANCELLED;
    default:
        return CROUPIER__TOURNAMENT_STATUS__TOURNAMENT_STATUS_UNSPECIFIED;
    }
}

/* The director's answer code as the protocol's (docs/protocol.md "Tournaments"). */
static int gate_tour_code(tour_code_t c)
{
    switch (c) {
    case TOUR_CODE_OK:
        return CROUPIER__ERROR_CODE__OK;
    case TOUR_CODE_ALREADY_REGISTERED:
        return CROUPIER__ERROR_CODE__ALREADY_REGISTERED;
    case TOUR_CODE_NOT_REGISTERED:
        return CROUPIER__ERROR_CODE__NOT_REGISTERED;
    case TOUR_CODE_TOURNAMENT_FULL:
        return CROUPIER__ERROR_CODE__TOURNAMENT_FULL;
    case TOUR_CODE_REGISTRATION_CLOSED:
        return CROUPIER__ERROR_CODE__REGISTRATION_CLOSED;
    case TOUR_CODE_INSUFFICIENT_FUNDS:
        return CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS;
    case TOUR_CODE_NO_REENTRY:
        return CROUPIER__ERROR_CODE__NO_REENTRY;
    case TOUR_CODE_TOURNAMENT_OVER:
        return CROUPIER__ERROR_CODE__TOURNAMENT_OVER;
    case TOUR_CODE_BAD_REQUEST:
        return CROUPIER__ERROR_CODE__BAD_REQUEST;
    default:
        return CROUPIER__ERROR_CODE__INTERNAL;
    }
}

static Croupier__TournamentEntryState gate_tour_entry_state(const char *s)
{
    static const struct {
        const char *name;
        Croupier__TournamentEntryState st;
    } states[] = {
        {"registered", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_REGISTERED},
        {"playing", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_PLAYING},
        {"waiting", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_WAITING},
        {"busted", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_BUSTED},
        {"out", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_OUT},
        {"cancelled", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_CANCELLED},
        {"refunded", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_REFUNDED},
        {"won", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_WON},
        /* a match: "busted" is out (placed at its end), "finished" played to its end */
        {"finished", CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_OUT},
    };
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
        if (strcmp(s, states[i].name) == 0)
            return states[i].st;
    return CROUPIER__TOURNAMENT_ENTRY_STATE__TOURNAMENT_ENTRY_STATE_UNSPECIFIED;
}

/* The structure of a meta, parsed; NULL when absent or refused (a tournament written by hand). */
static tour_structure_t *gate_tour_structure(const tour_client_meta_t *m)
{
    tour_structure_t *s = NULL;
    char err[160];
    if (m->structure == NULL ||
        tour_structure_parse(m->structure, strlen(m->structure), &s, err, sizeof err) != 0)
        return NULL;
    return s;
}

/* When play started, else an MTT's start; 0: an SNG not started. */
static uint64_t gate_tour_start_at(const tour_client_meta_t *m)
{
    if (m->started_ms > 0)
        return (uint64_t)m->started_ms;
    return m->start_at_ms > 0 ? (uint64_t)m->start_at_ms : 0;
}

static Croupier__TournamentFormat gate_tour_format(const tour_client_meta_t *m)
{
    return m->format == TOUR_FORMAT_MTT     ? CROUPIER__TOURNAMENT_FORMAT__TOUR_MTT
           : m->format == TOUR_FORMAT_MATCH ? CROUPIER__TOURNAMENT_FORMAT__TOUR_MATCH
                                            : CROUPIER__TOURNAMENT_FORMAT__TOUR_SNG;
}

/* The game a structure's tables play: hold'em, or a match's game. */
static const char *gate_tour_game(const tour_structure_t *s)
{
    return s->format == TOUR_FORMAT_MATCH && s->match != NULL ? s->match->game : "holdem";
}

/* ---- ListTournaments ----------------------------------------------------------------------- */

static int gate_tour_row_cmp(const void *a, const void *b)
{
    const gate_tour_row_t *x = a, *y = b;
    if (x->created != y->created)
        return x->created > y->created ? -1 : 1;
    return x->id > y->id ? -1 : x->id < y->id;
}

/* Sends the TournamentList: the rows read that pass the filter, newest first, at most limit. */
static void gate_tour_list_send(gate_tour_op_t *op)
{
    gate_conn_t *c = gate_tour_conn(op);
    if (c == NULL)
        return;
    for (size_t i = 0; i < op->nrows; i++)
        if (op->rows[i].ok && op->rows[i].meta.created_ms > 0)
            op->rows[i].created = op->rows[i].meta.created_ms;
    qsort(op->rows, op->nrows, sizeof *op->rows, gate_tour_row_cmp);
    size_t cap = op->limit;
    Croupier__TournamentSummary *sums = xcalloc(cap, sizeof *sums);
    Croupier__TournamentSummary **ptrs = xcalloc(cap, sizeof *ptrs);
    char(*names)[32] = xcalloc(cap, sizeof *names);
    char(*games)[16] = xcalloc(cap, sizeof *games);
    size_t n = 0;
    for (size_t i = 0; i < op->nrows && n < cap; i++) {
        const tour_client_meta_t *m = &op->rows[i].meta;
        Croupier__TournamentStatus st = gate_tour_status(m->status);
        if (!op->rows[i].ok || !m->has_format ||
            st == CROUPIER__TOURNAMENT_STATUS__TOURNAMENT_STATUS_UNSPECIFIED ||
            (op->status != 0 && (int)st != op->status))
            continue;
        Croupier__TournamentSummary init = CROUPIER__TOURNAMENT_SUMMARY__INIT, *t = &sums[n];
        *t = init;
        t->id = op->rows[i].id;
        if (m->name[0] != '\0') {
            t->name = (char *)m->name;
        } else {
            snprintf(names[n], sizeof names[n], "Tournament %" PRIu64, t->id);
            t->name = names[n];
        }
        t->format = gate_tour_format(m);
        t->status = st;
        t->has_entrants = t->has_players_left = t->has_prize_pool = true;
        t->entrants = (uint32_t)m->entries;
        t->players_left = (uint32_t)m->players;
        t->prize_pool = m->pool;
        tour_structure_t *s = gate_tour_structure(m);
        if (s != NULL) {
            t->has_buy_in = t->has_fee = t->has_max_entrants = true;
            t->buy_in = s->buy_in;
            t->fee = s->fee;
            t->max_entrants = s->max_entrants;
            snprintf(games[n], sizeof games[n], "%s", gate_tour_game(s));
            t->game = games[n];
            /* Before the start, the pool it will have (the guarantee's overlay included), as
             * GetTournament says it. */
            int64_t pool;
            if (m->status == TOUR_STATUS_REGISTERING && m->entries > 0 &&
                tour_payout_pool(s->buy_in, (uint32_t)m->entries, s->guarantee, &pool) == 0)
                t->prize_pool = pool;
            tour_structure_destroy(s);
        }
        t->start_at_unix_ms = gate_tour_start_at(m);
        t->has_start_at_unix_ms = t->start_at_unix_ms > 0;
        ptrs[n++] = t;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TournamentList tl = CROUPIER__TOURNAMENT_LIST__INIT;
    sm.has_request_id = true;
    sm.request_id = op->rid;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_LIST;
    sm.tournament_list = &tl;
    tl.tournaments = ptrs;
    tl.n_tournaments = n;
    tl.has_total = op->total >= 0;
    tl.total = op->total >= 0 ? (uint32_t)op->total : 0;
    size_t size = protobuf_c_message_get_packed_size(&sm.base);
    while (tl.n_tournaments > 0 && size > c->g->lim.max_frame) {
        tl.n_tournaments--;
        size = protobuf_c_message_get_packed_size(&sm.base);
    }
    gate_conn_send(c, &sm);
    free(names);
    free(games);
    free(ptrs);
    free(sums);
}

static void gate_tour_list_done(gate_tour_op_t *op)
{
    if (!gate_tour_reads_done(op))
        return;
    gate_tour_list_send(op);
    gate_tour_end(op);
}

/* One meta arrived (the pipelined HGETALLs answer in order). */
static void gate_tour_list_meta_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        op->failed = true;
    else if (op->next_row < op->nrows) {
        gate_tour_row_t *row = &op->rows[op->next_row];
        row->ok = tour_client_meta_parse(reply, &row->meta) == 0;
    }
    op->next_row++;
    gate_tour_list_done(op);
}

static void gate_tour_list_total_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    op->total = reply != NULL && reply->type == REDIS_REPLY_INTEGER ? reply->integer : -1;
    gate_tour_list_done(op);
}

/* The index: ids with their creation time (ZREVRANGE ... WITHSCORES) or the live set's ids. */
static void gate_tour_list_index_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    gate_tour_op_t *op = arg;
    op->pending--;
    if (op->done || reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
        op->failed = op->failed || !op->done;
        gate_tour_list_done(op);
        return;
    }
    bool scores = op->status != CROUPIER__TOURNAMENT_STATUS__TOUR_REGISTERING &&
                  op->status != CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING;
    size_t step = scores ? 2 : 1;
    op->rows = xcalloc(reply->elements / step + 1, sizeof *op->rows);
    for (size_t i = 0; i + step - 1 < reply->elements && op->nrows < GATE_TOUR_SCAN; i += step) {
        const redisReply *m = reply->element[i];
        char id[TOUR_CLIENT_ID_TEXT];
        if (m->type != REDIS_REPLY_STRING || m->len >= sizeof id)
            continue;
        memcpy(id, m->str, m->len);
        id[m->len] = '\0';
        if (!tour_client_valid_id(id))
            continue;
        char key[TOUR_CLIENT_KEY_MAX];
        tour_client_key(key, sizeof key, id, "meta");
        const char *argv[] = {"HGETALL", key};
        if (rconn_command_argv(rc, gate_tour_list_meta_cb, op, 2, argv, NULL) != 0) {
            op->failed = true;
            break;
        }
        op->pending++;
        gate_tour_row_t *row = &op->rows[op->nrows++];
        row->id = strtoull(id, NULL, 10);
        row->created = scores ? strtoll(reply->element[i + 1]->str, NULL, 10) : 0;
    }
    gate_tour_list_done(op);
}

static void gate_tour_list(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    gate_t *g = c->g;
    const Croupier__ListTournaments *lt = m->list_tournaments;
    gate_tour_op_t *op = gate_tour_op_new(g, TOP_LIST);
    op->conn_id = c->id;
    op->session = c->session;
    op->rid = m->request_id;
    op->status = lt->has_status ? (int)lt->status : 0;
    op->limit = lt->has_limit ? lt->limit : GATE_TOUR_LIST_DEFAULT; /* the codec bounds it */
    op->total = -1;
    char stop[24];
    snprintf(stop, sizeof stop, "%d", (op->status != 0 ? GATE_TOUR_SCAN : (int)op->limit) - 1);
    bool live = op->status == CROUPIER__TOURNAMENT_STATUS__TOUR_REGISTERING ||
                op->status == CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING;
    const char *idx[] = {"ZREVRANGE", TOUR_ALL_KEY, "0", stop, "WITHSCORES"};
    const char *liv[] = {"SMEMBERS", TOUR_LIVE_KEY};
    const char *tot[] = {"ZCARD", TOUR_ALL_KEY};
    int rc = live ? rconn_command_argv(g->rc, gate_tour_list_index_cb, op, 2, liv, NULL)
                  : rconn_command_argv(g->rc, gate_tour_list_index_cb, op, 5, idx, NULL);
    if (rc != 0) {
        gate_tour_op_free(op);
        metrics_add(g->m_degraded, 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE,
                        "the tournament store is not connected");
        return;
    }
    op->pending++;
    if (rconn_command_argv(g->rc, gate_tour_list_total_cb, op, 2, tot, NULL) == 0)
        op->pending++;
    op->counted = true;
    c->inflight++;
    gate_tour_arm(op, g->cfg.budget_ms[GATE_REQ_LIST]);
}

/* ---- GetTournament ------------------------------------------------------------------------- */

/* Sends the TournamentInfo of op->meta and the asker's entry. */
static void gate_tour_info_send(gate_tour_op_t *op, gate_conn_t *c)
{
    const tour_client_meta_t *m = &op->meta;
    tour_structure_t *s = gate_tour_structure(m);
    Croupier__TournamentInfo ti = CROUPIER__TOURNAMENT_INFO__INIT;
    char name[32];
    ti.id = op->tournament;
    if (m->name[0] != '\0') {
        ti.name = (char *)m->name;
    } else {
        snprintf(name, sizeof name, "Tournament %" PRIu64, op->tournament);
        ti.name = name;
    }
    ti.format = gate_tour_format(m);
    ti.status = gate_tour_status(m->status);
    ti.start_at_unix_ms = gate_tour_start_at(m);
    ti.has_start_at_unix_ms = ti.start_at_unix_ms > 0;
    ti.has_entries = ti.has_players_left = ti.has_prize_pool = true;
    ti.entries = (uint32_t)m->entries;
    ti.players_left = (uint32_t)m->players;
    ti.prize_pool = m->pool;
    if (m->cancel_reason[0] != '\0')
        ti.detail = (char *)m->cancel_reason;
    tour_client_payout_t *rows = NULL;
    Croupier__TournamentPayout *pays = NULL, **pptrs = NULL;
    Croupier__TournamentItemPrize *items = NULL, **iptrs = NULL;
    if (s != NULL && s->payouts.nitems > 0) {
        /* The places given an item (docs/tournaments.md "Items"), best first. */
        items = xcalloc(s->payouts.nitems, sizeof *items);
        iptrs = xcalloc(s->payouts.nitems, sizeof *iptrs);
        for (size_t i = 0; i < s->payouts.nitems; i++) {
            Croupier__TournamentItemPrize init = CROUPIER__TOURNAMENT_ITEM_PRIZE__INIT;
            items[i] = init;
            items[i].place = s->payouts.items[i].place;
            items[i].item = s->payouts.items[i].item;
            iptrs[i] = &items[i];
        }
        ti.item_prizes = iptrs;
        ti.n_item_prizes = s->payouts.nitems;
    }
    if (s != NULL) {
        ti.has_buy_in = ti.has_fee = ti.has_starting_stack = true;
        ti.has_min_entrants = ti.has_max_entrants = ti.has_late_registration_levels = true;
        ti.buy_in = s->buy_in;
        ti.fee = s->fee;
        ti.starting_stack = s->starting_stack;
        ti.min_entrants = s->min_entrants;
        ti.max_entrants = s->max_entrants;
        ti.late_registration_levels = s->late_reg_levels;
        ti.game = (char *)gate_tour_game(s);
        ti.has_registration_open = true;
        bool room = m->entries < (int64_t)s->max_entrants;
        if (m->status == TOUR_STATUS_REGISTERING)
            ti.registration_open = room;
        else if (m->status == TOUR_STATUS_RUNNING)
            ti.registration_open = room && tour_structure_late_reg_open(s, m->clock_ms);
        tour_client_level_t lv;
        if (m->status == TOUR_STATUS_RUNNING &&
            tour_client_level(s, m->level, m->clock_ms, &lv) == 0 && lv.level != NULL) {
            ti.has_level = ti.has_level_number = ti.has_on_break = true;
            ti.level = (uint32_t)lv.index;
            ti.level_number = lv.level->number;
            ti.on_break = lv.level->is_break;
            if (!lv.level->is_break) {
                ti.has_small_blind = ti.has_big_blind = ti.has_ante = true;
                ti.has_big_blind_ante = true;
                ti.small_blind = lv.level->small_blind;
                ti.big_blind = lv.level->big_blind;
                ti.ante = lv.level->ante;
                ti.big_blind_ante = lv.level->big_blind_ante;
            }
            ti.has_level_ends_in_ms = lv.ends_in_ms >= 0;
            ti.level_ends_in_ms = lv.ends_in_ms >= 0 ? lv.ends_in_ms : 0;
        }
        if (m->status == TOUR_STATUS_RUNNING && m->players > 0 && m->format != TOUR_FORMAT_MATCH) {
            /* Chips are conserved: every entry brought one starting stack. */
            ti.has_average_stack = true;
            ti.average_stack = s->starting_stack * m->entries / m->players;
        }
        int64_t pool = 0;
        size_t nrows = 0;
        if (m->status != TOUR_STATUS_CANCELLED && m->entries > 0 &&
            tour_payout_pool(s->buy_in, (uint32_t)m->entries, s->guarantee, &pool) == 0) {
            rows = xcalloc(GATE_TOUR_PAYOUT_ROWS, sizeof *rows);
            if (tour_client_payouts(s, (uint32_t)m->entries, pool, rows, GATE_TOUR_PAYOUT_ROWS,
                                    &nrows) != 0)
                nrows = 0;
            if (m->status == TOUR_STATUS_REGISTERING)
                ti.prize_pool = pool; /* with the guarantee it will have at the start */
        }
        if (nrows > 0) {
            pays = xcalloc(nrows, sizeof *pays);
            pptrs = xcalloc(nrows, sizeof *pptrs);
            for (size_t i = 0; i < nrows; i++) {
                Croupier__TournamentPayout init = CROUPIER__TOURNAMENT_PAYOUT__INIT;
                pays[i] = init;
                pays[i].place_from = rows[i].from;
                pays[i].place_to = rows[i].to;
                pays[i].amount = rows[i].amount;
                pptrs[i] = &pays[i];
            }
            ti.payouts = pptrs;
            ti.n_payouts = nrows;
        }
    }
    Croupier__TournamentEntry you = CROUPIER__TOURNAMENT_ENTRY__INIT;
    if (op->have_entry) {
        const tour_client_entry_t *e = &op->entry;
        you.state = gate_tour_entry_state(e->state);
        if (you.state != CROUPIER__TOURNAMENT_ENTRY_STATE__TOURNAMENT_ENTRY_STATE_UNSPECIFIED) {
            you.has_stack = you.has_entries = true;
            you.stack = e->stack;
            you.entries = e->entries;
            you.has_place = e->place > 0;
            you.place = e->place;
            you.has_prize = e->prize > 0;
            you.prize = e->prize;
            you.item = e->item[0] != '\0' ? (char *)e->item : NULL;
            bool seated =
                you.state == CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_PLAYING && e->table > 0;
            you.has_table = you.has_seat = seated;
            you.table = e->table;
            you.seat = e->seat;
            if (op->match_ok && op->match.has_score) {
                you.has_score = true;
                you.score = op->match.score;
                you.has_match_points = op->match.has_mp;
                you.match_points = op->match.mp;
            }
            ti.you = &you;
        }
    }
    Croupier__MatchStage ms = CROUPIER__MATCH_STAGE__INIT;
    if (op->match_ok) {
        const tour_client_match_t *mv = &op->match;
        ms.stage = mv->stage;
        ms.stages = mv->stages;
        ms.format = (char *)mv->format;
        ms.has_base_score = ms.has_advance = ms.has_players = true;
        ms.base_score = mv->base_score;
        ms.advance = mv->advance;
        ms.players = mv->players;
        ms.has_line = mv->has_line;
        ms.line = mv->line;
        ms.has_round = ms.has_deals_per_round = strcmp(mv->format, "rising") != 0;
        ms.round = mv->round;
        ms.deals_per_round = mv->deals_per_round;
        ms.has_rounds = mv->rounds > 0;
        ms.rounds = mv->rounds;
        ti.match = &ms;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.has_request_id = true;
    sm.request_id = op->rid;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT;
    sm.tournament = &ti;
    size_t size = protobuf_c_message_get_packed_size(&sm.base);
    while (ti.n_payouts > 0 && size > c->g->lim.max_frame) {
        ti.n_payouts = ti.n_payouts / 2;
        size = protobuf_c_message_get_packed_size(&sm.base);
    }
    gate_conn_send(c, &sm);
    free(iptrs);
    free(items);
    free(pptrs);
    free(pays);
    free(rows);
    tour_structure_destroy(s);
}

static void gate_tour_get_done(gate_tour_op_t *op)
{
    if (!gate_tour_reads_done(op))
        return;
    gate_conn_t *c = gate_tour_conn(op);
    if (!op->meta_ok) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT, "no tournament has that id");
        return;
    }
    if (c != NULL) {
        gate_tour_follow(c, op->tournament);
        gate_tour_info_send(op, c);
    }
    gate_tour_end(op);
}

/* A match's current stage: read only to show it (a failure shows the match without it). */
static void gate_tour_get_stage_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    tour_structure_t *s =
        reply != NULL && reply->type == REDIS_REPLY_STRING ? gate_tour_structure(&op->meta) : NULL;
    if (s != NULL)
        op->match_ok = tour_client_match_view(reply->str, reply->len, s, op->meta.match_stage,
                                              op->meta.clock_ms - op->meta.stage_clock0, op->player,
                                              &op->match) == 0;
    tour_structure_destroy(s);
    gate_tour_get_done(op);
}

static void gate_tour_get_meta_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    int prc = tour_client_meta_parse(reply, &op->meta);
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR || (prc != 0 && prc != -ENOENT))
        op->failed = true;
    op->meta_ok = prc == 0;
    if (op->meta_ok && op->meta.format == TOUR_FORMAT_MATCH &&
        (op->meta.status == TOUR_STATUS_RUNNING || op->meta.status == TOUR_STATUS_FINISHED)) {
        /* A match: its current stage, for MatchStage and the asker's score. */
        char key[TOUR_CLIENT_KEY_MAX], field[24];
        tour_client_key(key, sizeof key, op->id, "stages");
        snprintf(field, sizeof field, "%" PRId64, op->meta.match_stage);
        const char *argv[] = {"HGET", key, field};
        if (rconn_command_argv(op->g->rc, gate_tour_get_stage_cb, op, 3, argv, NULL) == 0)
            op->pending++;
    }
    gate_tour_get_done(op);
}

/* The asker's entry, read for GetTournament and TakeTournamentSeat: op->have_entry, or failed. */
static gate_tour_op_t *gate_tour_entry_read(redisReply *reply, void *arg)
{
    gate_tour_op_t *op = arg;
    op->pending--;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        op->failed = true;
    else if (reply->type == REDIS_REPLY_STRING)
        op->have_entry = tour_client_entry_parse(reply->str, reply->len, &op->entry) == 0;
    return op;
}

static void gate_tour_get_entry_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_get_done(gate_tour_entry_read(reply, arg));
}

static void gate_tour_get(gate_conn_t *c, const Croupier__ClientMessage *m, uint64_t id)
{
    gate_t *g = c->g;
    gate_tour_op_t *op = gate_tour_op_new(g, TOP_GET);
    op->conn_id = c->id;
    op->session = c->session;
    op->rid = m->request_id;
    op->tournament = id;
    op->player = c->player;
    snprintf(op->id, sizeof op->id, "%" PRIu64, id);
    char mkey[TOUR_CLIENT_KEY_MAX], ekey[TOUR_CLIENT_KEY_MAX], player[TOUR_CLIENT_ID_TEXT];
    tour_client_key(mkey, sizeof mkey, op->id, "meta");
    tour_client_key(ekey, sizeof ekey, op->id, "entries");
    snprintf(player, sizeof player, "%" PRIu64, c->player);
    const char *a1[] = {"HGETALL", mkey};
    const char *a2[] = {"HGET", ekey, player};
    if (rconn_command_argv(g->rc, gate_tour_get_meta_cb, op, 2, a1, NULL) != 0) {
        gate_tour_op_free(op);
        metrics_add(g->m_degraded, 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE,
                        "the tournament store is not connected");
        return;
    }
    op->pending++;
    if (rconn_command_argv(g->rc, gate_tour_get_entry_cb, op, 3, a2, NULL) == 0)
        op->pending++;
    else
        op->failed = true;
    op->counted = true;
    c->inflight++;
    gate_tour_arm(op, g->cfg.budget_ms[GATE_REQ_LIST]);
}

/* ---- Register / UnregisterTournament ------------------------------------------------------- */

static void gate_tour_poll_cb(evutil_socket_t fd, short what, void *arg);

/* The director's answer (JSON text): the client gets Result ok or the mapped error. */
static void gate_tour_answered(gate_tour_op_t *op, const char *text, size_t len)
{
    tour_client_answer_t a;
    if (tour_client_answer_parse(text, len, &a) != 0) {
        log_emit(LOG_WARN, "tour_answer_unreadable", "{s:s,s:s}", "tournament", op->id, "req",
                 op->req);
        gate_tour_fail(op, CROUPIER__ERROR_CODE__INTERNAL, "the director's answer does not parse");
        return;
    }
    gate_conn_t *c = gate_tour_conn(op);
    if (a.ok && c != NULL) {
        if (op->kind == TOP_UNREGISTER)
            gate_tour_unfollow(c, op->tournament);
        Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
        Croupier__Result res = CROUPIER__RESULT__INIT;
        sm.has_request_id = true;
        sm.request_id = op->rid;
        sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
        sm.result = &res;
        gate_conn_send(c, &sm);
    } else if (!a.ok) {
        char msg[96];
        snprintf(msg, sizeof msg, "the tournament director refused: %s",
                 a.code_text[0] ? a.code_text : "?");
        gate_tour_fail(op, gate_tour_code(a.code), msg);
        return;
    }
    gate_tour_end(op);
}

static void gate_tour_poll_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    if (op->done) {
        gate_tour_end(op);
        return;
    }
    if (reply != NULL && reply->type == REDIS_REPLY_STRING) {
        gate_tour_answered(op, reply->str, reply->len);
        return;
    }
    /* Not answered yet (nil), or Redis failed: ask again, until the deadline. */
    struct timeval tv = {0, op->poll_ms * 1000};
    evtimer_add(op->poll, &tv);
    op->poll_ms = op->poll_ms * 2 > GATE_TOUR_POLL_MAX_MS ? GATE_TOUR_POLL_MAX_MS : op->poll_ms * 2;
}

static void gate_tour_poll_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    gate_tour_op_t *op = arg;
    if (op->done)
        return;
    const char *argv[] = {"LPOP", op->rq.reply_key};
    if (op->g->rc != NULL &&
        rconn_command_argv(op->g->rc, gate_tour_poll_reply_cb, op, 2, argv, NULL) == 0) {
        op->pending++;
        return;
    }
    struct timeval tv = {0, GATE_TOUR_POLL_MAX_MS * 1000};
    evtimer_add(op->poll, &tv);
}

static void gate_tour_xadd_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    if (op->done) {
        gate_tour_end(op);
        return;
    }
    if (reply == NULL || reply->type != REDIS_REPLY_STRING) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE, "the tournament store failed");
        return;
    }
    op->poll_ms = GATE_TOUR_POLL_FIRST_MS;
    op->poll = evtimer_new(op->g->base, gate_tour_poll_cb, op);
    struct timeval tv = {0, op->poll_ms * 1000};
    evtimer_add(op->poll, &tv);
    op->poll_ms *= 2;
}

/* The tournament's status: absent -> NO_SUCH_TOURNAMENT, over -> TOURNAMENT_OVER (nobody reads
 * its stream: nothing is written), else the request goes to the director's stream. */
static void gate_tour_status_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    gate_tour_op_t *op = arg;
    op->pending--;
    if (op->done) {
        gate_tour_end(op);
        return;
    }
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE, "the tournament store failed");
        return;
    }
    if (reply->type != REDIS_REPLY_STRING) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT, "no tournament has that id");
        return;
    }
    if (tour_client_status_over(tour_client_status_parse(reply->str, reply->len))) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__TOURNAMENT_OVER, "the tournament is over");
        return;
    }
    if (rconn_command_argv(rc, gate_tour_xadd_cb, op, op->rq.argc, op->rq.argv, NULL) != 0) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE, "the tournament store failed");
        return;
    }
    op->pending++;
}

static void gate_tour_ask(gate_conn_t *c, const Croupier__ClientMessage *m, uint64_t id, bool reg)
{
    gate_t *g = c->g;
    gate_tour_op_t *op = gate_tour_op_new(g, reg ? TOP_REGISTER : TOP_UNREGISTER);
    op->conn_id = c->id;
    op->session = c->session;
    op->rid = m->request_id;
    op->player = c->player;
    op->tournament = id;
    snprintf(op->id, sizeof op->id, "%" PRIu64, id);
    tour_client_op_t top = reg ? TOUR_CLIENT_REGISTER : TOUR_CLIENT_UNREGISTER;
    char player[TOUR_CLIENT_ID_TEXT], mkey[TOUR_CLIENT_KEY_MAX];
    snprintf(player, sizeof player, "%" PRIu64, c->player);
    tour_client_key(mkey, sizeof mkey, op->id, "meta");
    if (tour_client_gate_req(op->req, sizeof op->req, c->player, c->session, top, m->request_id) !=
            0 ||
        tour_client_request(&op->rq, op->id, top, op->req, player, NULL, NULL) != 0) {
        gate_tour_op_free(op);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__INTERNAL,
                        "the request could not be built");
        return;
    }
    const char *argv[] = {"HGET", mkey, "status"};
    if (rconn_command_argv(g->rc, gate_tour_status_cb, op, 3, argv, NULL) != 0) {
        gate_tour_op_free(op);
        metrics_add(g->m_degraded, 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE,
                        "the tournament store is not connected");
        return;
    }
    op->pending++;
    op->counted = true;
    c->inflight++;
    if (reg) {
        op->followed = gate_tour_follows(c, id);
        gate_tour_follow(c, id);
    }
    gate_tour_arm(op, g->cfg.budget_ms[GATE_REQ_TOUR]);
}

/* ---- TakeTournamentSeat -------------------------------------------------------------------- */

/*
 * TakeTournamentSeat (docs/protocol.md "Tournaments", docs/gateway.md "Tournaments"): the
 * player's entry names his table, the table's `where` (written by its host before every deal it
 * asks: tournament/tour_table.h) the server and desk that play it. The gateway writes his seat
 * record, marked tour, and sends a Resume there: the ordinary Resume, answered by the table's
 * Snapshot; from then on his Actions and Resumes go to that seat as any seat's. Two steps: the
 * meta's status and the entry (pipelined, with the seat record when the connection does not
 * know it), then the where. A player the tables have not seated yet (before the start, a late
 * entry, a table with no host yet or whose host is gone, a table that seats him at its next
 * deal) is answered NOT_SEATED, retriable: he asks again.
 */

/* The player waits for his seat: NOT_SEATED, retriable, with why. */
static void gate_tour_wait(gate_tour_op_t *op, const char *message)
{
    if (!op->done) {
        gate_conn_t *c = gate_tour_conn(op);
        if (c != NULL)
            gate_conn_error_retriable(c, op->rid, CROUPIER__ERROR_CODE__NOT_SEATED, true, message);
    }
    gate_tour_end(op);
}

/* Where a table is played, from the host's JSON (tour_table.h); 0 or -EINVAL. */
typedef struct {
    char server[80];
    char game[48];
    int64_t epoch, stake;
    uint64_t desk;
    int engine;
} gate_tour_where_t;

static int gate_tour_where_parse(const char *text, size_t len, gate_tour_where_t *w)
{
    memset(w, 0, sizeof *w);
    json_t *j = json_loadb(text, len, 0, NULL);
    const char *server = json_string_value(json_object_get(j, "server"));
    const char *game = json_string_value(json_object_get(j, "game"));
    json_t *desk = json_object_get(j, "desk"), *epoch = json_object_get(j, "epoch");
    json_t *engine = json_object_get(j, "engine"), *stake = json_object_get(j, "stake");
    int rc = -EINVAL;
    if (server != NULL && game != NULL && json_is_integer(desk) && json_is_integer(epoch) &&
        json_is_integer(engine) && json_is_integer(stake) && json_integer_value(desk) > 0 &&
        json_integer_value(epoch) >= 0 && strlen(server) < sizeof w->server &&
        strlen(game) < sizeof w->game) {
        snprintf(w->server, sizeof w->server, "%s", server);
        snprintf(w->game, sizeof w->game, "%s", game);
        w->desk = (uint64_t)json_integer_value(desk);
        w->epoch = json_integer_value(epoch);
        w->engine = (int)json_integer_value(engine);
        w->stake = json_integer_value(stake);
        rc = 0;
    }
    json_decref(j);
    return rc;
}

/*
 * The where of the player's table arrived: the player's seat is checked (one he holds at
 * another table is ALREADY_SEATED: his record names one seat), his record written (marked
 * tour) and the Resume sent to the table's server, which answers it from the desk it seated him
 * at (its Snapshot), or NOT_SEATED when it has not seated him yet (gate_req_fail: retriable).
 */
static void gate_tour_take_where_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    gate_t *g = op->g;
    gate_conn_t *c = gate_tour_conn(op);
    if (op->done || c == NULL) {
        gate_tour_end(op);
        return;
    }
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE, "the tournament store failed");
        return;
    }
    if (reply->type != REDIS_REPLY_STRING) {
        gate_tour_wait(op, GATE_TOUR_WAIT_MSG); /* no host has dealt at his table yet */
        return;
    }
    gate_tour_where_t w;
    if (gate_tour_where_parse(reply->str, reply->len, &w) != 0 ||
        strpbrk(w.game, " \t\r\n") != NULL) {
        log_emit(LOG_WARN, "tour_where_unreadable", "{s:s,s:I}", "tournament", op->id, "table",
                 (json_int_t)op->entry.table);
        gate_tour_fail(op, CROUPIER__ERROR_CODE__INTERNAL, "the table's location does not parse");
        return;
    }
    /* The server must be the live process that wrote the where: a server gone (crashed,
     * drained away) leaves its table to another, which writes the where again before its deal. */
    const registry_entry_t *e = registry_view_find(g->view, w.server);
    if (e == NULL || e->epoch > w.epoch || gate_entry_gone(g, e)) {
        gate_tour_wait(op, GATE_TOUR_TAKEOVER_MSG);
        return;
    }
    if (u64map_get(g->crash_moves, c->player, NULL)) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE,
                       "your table's server stopped; you are being moved to another table");
        return;
    }
    if (op->seat_asked) {
        if (op->seat_ok)
            gate_conn_set_seat(c, &op->seat);
        else if (op->seat_nil)
            gate_conn_set_seat(c, NULL);
    }
    if (!c->seat_known) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE, "seat store unreachable");
        return;
    }
    if (c->seat != NULL) {
        gate_seat_verdict_t v = gate_seat_check(g, c->seat);
        if (v != GATE_SEAT_LIVE)
            gate_seat_forget(g, c->player, c->seat, v, "request");
    }
    if (c->seat != NULL && !c->seat->tour) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__ALREADY_SEATED,
                       "you hold a seat at another table: leave it before your tournament seat");
        return;
    }
    gate_seat_t s;
    memset(&s, 0, sizeof s);
    snprintf(s.server_id, sizeof s.server_id, "%s", w.server);
    snprintf(s.address, sizeof s.address, "%s", e->address);
    snprintf(s.game, sizeof s.game, "%s", w.game);
    s.desk = w.desk;
    s.engine = w.engine;
    s.stake = w.stake;
    s.epoch = w.epoch;
    s.tour = true;
    gate_conn_set_seat(c, &s);
    gate_seat_store(g, c->player, &s);
    log_emit(LOG_INFO, "tour_seat_routed", "{s:I,s:s,s:I,s:s,s:I}", "player", (json_int_t)c->player,
             "tournament", op->id, "table", (json_int_t)op->entry.table, "server", s.server_id,
             "desk", (json_int_t)s.desk);
    gate_tour_follow(c, op->tournament);
    uint64_t rid = op->rid;
    gate_tour_end(op); /* its in-flight slot goes to the Resume */
    gate_req_t *r = gate_req_new(g, GATE_REQ_RESUME, c->player, c->session);
    r->conn_id = c->id;
    r->client_rid = rid;
    r->tour = true;
    r->target = s;
    r->have_target = true;
    r->seat_target = true;
    c->inflight++;
    gate_req_dispatch(r);
}

/* The status and the entry read: the player's state says whether he has a table to go to. */
static void gate_tour_take_done(gate_tour_op_t *op)
{
    if (!gate_tour_reads_done(op))
        return;
    if (op->status_absent) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT, "no tournament has that id");
        return;
    }
    if (tour_client_status_over(op->tstatus)) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__TOURNAMENT_OVER, "the tournament is over");
        return;
    }
    if (!op->have_entry) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__NOT_REGISTERED,
                       "you have no entry in this tournament");
        return;
    }
    const tour_client_entry_t *e = &op->entry;
    char msg[128];
    if (strcmp(e->state, "registered") == 0 || strcmp(e->state, "waiting") == 0 ||
        (strcmp(e->state, "playing") == 0 && e->table == 0)) {
        gate_tour_wait(op, GATE_TOUR_WAIT_MSG);
        return;
    }
    if (strcmp(e->state, "playing") != 0) {
        if (strcmp(e->state, "out") == 0 || strcmp(e->state, "won") == 0 ||
            strcmp(e->state, "finished") == 0)
            snprintf(msg, sizeof msg, "you are out of the tournament: place %" PRIu32, e->place);
        else if (strcmp(e->state, "busted") == 0)
            snprintf(msg, sizeof msg,
                     "you are out of the tournament: your place comes at the "
                     "end of the hand-for-hand round (a match: at its end)");
        else if (strcmp(e->state, "cancelled") == 0 || strcmp(e->state, "refunded") == 0)
            snprintf(msg, sizeof msg, "the tournament was cancelled");
        else
            snprintf(msg, sizeof msg, "you have no entry in play in this tournament");
        bool over = strcmp(e->state, "out") == 0 || strcmp(e->state, "won") == 0 ||
                    strcmp(e->state, "finished") == 0 || strcmp(e->state, "busted") == 0 ||
                    strcmp(e->state, "cancelled") == 0 || strcmp(e->state, "refunded") == 0;
        gate_tour_fail(
            op, over ? CROUPIER__ERROR_CODE__TOURNAMENT_OVER : CROUPIER__ERROR_CODE__NOT_REGISTERED,
            msg);
        return;
    }
    char key[TOUR_CLIENT_KEY_MAX], table[16];
    tour_client_key(key, sizeof key, op->id, "where");
    snprintf(table, sizeof table, "%" PRIu32, e->table);
    const char *argv[] = {"HGET", key, table};
    if (op->g->rc == NULL ||
        rconn_command_argv(op->g->rc, gate_tour_take_where_cb, op, 3, argv, NULL) != 0) {
        gate_tour_fail(op, CROUPIER__ERROR_CODE__UNAVAILABLE,
                       "the tournament store is not connected");
        return;
    }
    op->pending++;
}

static void gate_tour_take_status_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR)
        op->failed = true;
    else if (reply->type == REDIS_REPLY_STRING)
        op->tstatus = tour_client_status_parse(reply->str, reply->len);
    else
        op->status_absent = true;
    gate_tour_take_done(op);
}

static void gate_tour_take_entry_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_take_done(gate_tour_entry_read(reply, arg));
}

/* The seat record, read when the connection did not know it (a login whose lookup failed). */
static void gate_tour_take_seat_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    if (reply != NULL && reply->type == REDIS_REPLY_STRING)
        op->seat_ok = gate_seat_parse(reply->str, reply->len, &op->seat) == 0;
    else if (reply != NULL && reply->type == REDIS_REPLY_NIL)
        op->seat_nil = true;
    gate_tour_take_done(op);
}

static void gate_tour_take(gate_conn_t *c, const Croupier__ClientMessage *m, uint64_t id)
{
    gate_t *g = c->g;
    gate_tour_op_t *op = gate_tour_op_new(g, TOP_TAKE);
    op->conn_id = c->id;
    op->session = c->session;
    op->rid = m->request_id;
    op->player = c->player;
    op->tournament = id;
    snprintf(op->id, sizeof op->id, "%" PRIu64, id);
    char mkey[TOUR_CLIENT_KEY_MAX], ekey[TOUR_CLIENT_KEY_MAX], player[TOUR_CLIENT_ID_TEXT];
    char skey[64];
    tour_client_key(mkey, sizeof mkey, op->id, "meta");
    tour_client_key(ekey, sizeof ekey, op->id, "entries");
    snprintf(player, sizeof player, "%" PRIu64, c->player);
    gate_seat_key(c->player, skey, sizeof skey);
    const char *a1[] = {"HGET", mkey, "status"};
    const char *a2[] = {"HGET", ekey, player};
    const char *a3[] = {"GET", skey};
    if (rconn_command_argv(g->rc, gate_tour_take_status_cb, op, 3, a1, NULL) != 0) {
        gate_tour_op_free(op);
        metrics_add(g->m_degraded, 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE,
                        "the tournament store is not connected");
        return;
    }
    op->pending++;
    if (rconn_command_argv(g->rc, gate_tour_take_entry_cb, op, 3, a2, NULL) == 0)
        op->pending++;
    else
        op->failed = true;
    if (!c->seat_known && rconn_command_argv(g->rc, gate_tour_take_seat_cb, op, 2, a3, NULL) == 0) {
        op->pending++;
        op->seat_asked = true;
    }
    op->counted = true;
    c->inflight++;
    gate_tour_arm(op, g->cfg.budget_ms[GATE_REQ_LIST]);
}

/* ---- the requests -------------------------------------------------------------------------- */

/*
 * A tournament request from a client (ListTournaments, GetTournament, Register/Unregister-
 * Tournament, TakeTournamentSeat): logged in only; a tournament id is non-zero; each counts as a
 * request in flight until answered (a TakeTournamentSeat's Resume included).
 */
void gate_client_tour(gate_conn_t *c, const Croupier__ClientMessage *m)
{
    gate_t *g = c->g;
    if (c->player == 0 || c->login_busy) {
        metrics_add(g->m_reject[REJ_UNAUTH], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAUTHENTICATED,
                        c->player == 0 ? "log in first" : "login not complete");
        return;
    }
    uint64_t id = 0;
    switch (m->body_case) {
    case CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT:
        id = m->get_tournament->tournament;
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT:
        id = m->register_tournament->tournament;
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_UNREGISTER_TOURNAMENT:
        id = m->unregister_tournament->tournament;
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT:
        id = m->take_tournament_seat->tournament;
        break;
    default:
        id = 1; /* a list names none */
        break;
    }
    if (id == 0) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__BAD_REQUEST,
                        "a tournament id is a positive number");
        return;
    }
    if (g->exit_step >= 3) {
        metrics_add(g->m_reject[REJ_DRAINING], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__DRAINING, "gateway closing");
        return;
    }
    if (c->inflight >= g->cfg.max_inflight) {
        metrics_add(g->m_reject[REJ_INFLIGHT], 1);
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__OVERLOADED,
                        "too many requests in flight");
        return;
    }
    if (g->rc == NULL) {
        gate_conn_error(c, m->request_id, CROUPIER__ERROR_CODE__UNAVAILABLE,
                        "the tournament store is not connected");
        return;
    }
    switch (m->body_case) {
    case CROUPIER__CLIENT_MESSAGE__BODY_LIST_TOURNAMENTS:
        gate_tour_list(c, m);
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT:
        gate_tour_get(c, m, id);
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT:
        gate_tour_ask(c, m, id, true);
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT:
        gate_tour_take(c, m, id);
        break;
    default:
        gate_tour_ask(c, m, id, false);
        break;
    }
}
