/*
 * tk_tour.c -- tournament tables on the kit (docs/tournaments.md "Tables at the servers"): a
 * server of an engine that hosts tournaments (tk_game_t.tournaments) claims the tables of
 * running tournaments that nobody hosts, plays each at a table desk of its own, and lets it go on
 * a drain, a lost claim, or the tournament's end.
 *
 * Contract with the rest of the kit (tk_int.h): a tournament table is a tk_table_t whose tour
 * is set (tk_tour_t below); it is never known to the lobby's references (never advertised nor
 * matched). Its seats come from the director's deal answers, not from joins; it moves no money
 * (tournament chips are the director's alone): the round's settlement is the `hand` request
 * (tk_round.c calls tk_tour_report instead of tk_settle, and tk_tour_after_round from the
 * round's end), and a new hand starts when a `deal` is answered (the gap timer calls
 * tk_tour_ask instead of tk_start_round). Its players cannot leave (their seat is the
 * director's) and, not connected, are played by the automatic move at once (TDA 71A).
 *
 * The Redis side (tournament/tour_table.h) runs on the engine's own tournament jobs thread
 * (tk_tour_host_t.jobs, a money_jobs_t: calls that block on the director's answers never hold up
 * a whole-table move's handoff calls on the engine's other jobs thread). Its results come back as
 * TK_MSG_TOUR_DONE (to a table) and TK_MSG_TOUR_CLAIMED (to the lobby).
 */
#include "tk_int.h"

#include <bsd/stdlib.h>

#include "tour_table.h"

/* How long one job waits for the director's answer before the table asks again (same id). */
#define TK_TOUR_ANSWER_MS 2000
/* A table told WAIT (a break, too few players, hand-for-hand) asks again after this. */
#define TK_TOUR_WAIT_MS 500
/* After a failure to reach Redis or the director. */
#define TK_TOUR_RETRY_MS 300
/* A match table's seats hold this many chips for the kit's checks: a match moves no chips, a
 * deal's result is reported as it is (in units), and the seat shows the player's score. */
#define TK_TOUR_SCORE_BANK 1000000000000LL
/* Claims made per scan at most: one, and the next scan soon after a claim, so that the servers
 * scanning at the same time share a tournament's new tables instead of the first taking all. */
#define TK_TOUR_CLAIMS 1
/* The next scan: after a claim, after nothing to claim (ms, each jittered by half again). */
#define TK_TOUR_SCAN_SOON_MS 20
#define TK_TOUR_SCAN_MS 750

typedef enum {
    TK_TOUR_JOB_SCAN = 1,
    TK_TOUR_JOB_DEAL,
    TK_TOUR_JOB_HAND,
    TK_TOUR_JOB_RENEW,
    TK_TOUR_JOB_RELEASE,
} tk_tour_job_kind_t;

struct tk_tour_host {
    money_jobs_t *jobs;
    int ttl_ms, max_tables;
    atomic_int tables; /* hosted now (the lobby adds, a table's destroy subtracts) */
    bool scanning;     /* lobby desk: a scan job is in flight */
    bool skipped_logged;
    char prefix[64]; /* tokens: "<service>.<slot>.<epoch>.<random>" */
};

struct tk_tour {
    uint64_t id;
    uint32_t table, seats;
    char host[TOUR_HOST_MAX + 1];
    bool asking;       /* a deal or hand job is in flight */
    bool stopping;     /* letting the table go: no hand any more */
    bool lost;         /* the claim was lost: another host may have the table */
    bool finished;     /* the last hand's answer finished the tournament */
    bool over;         /* a renew found the tournament over (cancelled): the deal is void */
    uint32_t deal_try; /* a deal answered anything but OK is asked again under the next */
    bool located;      /* its `where` is written (tour_table_locate) */
    uint64_t renew_serial;
    tour_deal_t deal; /* the hand in play */
    char result[512]; /* its result, "PLAYER:STACK,...", while reported */
    char *record;     /* its history record, while reported (the director writes it) */
    tour_leaver_t leavers[TOUR_MAX_SEATS];
    size_t nleavers;
    /* A match table (the deal scored): each seat's score (the deal's, then moved by the
     * result x base), and after the hand who is out and who stays for the next deal. */
    int64_t score[TK_MAX_SEATS];
    bool match_out[TK_MAX_SEATS], match_stays[TK_MAX_SEATS];
    bool match_told;          /* the hand's answer said who stays */
    bool acted[TK_MAX_SEATS]; /* the player sent a move himself in the deal in play */
    bool joining;             /* a match's deal waits for its players to come (tk_tour_join_wait) */
    uint64_t join_serial;
    /* Deals the game refused to start in a row (a bug: logged by the kit), and when the next
     * may be asked: never a tight loop of re-deals and voided records. */
    uint32_t start_fails;
    int64_t retry_at_ms;
};

typedef struct {
    money_job_t job;
    tk_tour_job_kind_t kind;
    tk_engine_t *eng;
    rt_t *rt;
    rt_desk_id_t desk;
    uint64_t id;
    uint32_t table, seats;
    char host[TOUR_HOST_MAX + 1];
    int ttl_ms, max;
    char prefix[64];
    char where[320]; /* DEAL: where the table is played (tour_table_locate), "" once written */
    char result[512];
    char *record; /* HAND: the hand's history record (owned) */
    /* results */
    int status;       /* 0, or a negative errno */
    json_t *answer;   /* DEAL, HAND: the director's answer */
    uint64_t hand;    /* DEAL: the hand asked for */
    uint32_t attempt; /* DEAL: the table's deal_try */
    bool closed;      /* DEAL: the director closed the table */
    int held;         /* RENEW: 1 held, 0 lost */
    bool over;        /* RENEW: the tournament is over (cancelled while the table plays) */
    size_t nclaims, skipped;
    tour_claim_t claims[TK_TOUR_CLAIMS];
} tk_tour_job_t;

/* ---- the jobs thread --------------------------------------------------------------------- */

static void tk_tour_job_free(void *p)
{
    tk_tour_job_t *j = p;
    if (j != NULL) {
        json_decref(j->answer);
        free(j->record);
    }
    free(j);
}

static void tk_tour_job_run(redisContext *c, money_job_t *job)
{
    tk_tour_job_t *j = (tk_tour_job_t *)job;
    if (c == NULL) {
        j->status = -EIO;
        return;
    }
    switch (j->kind) {
    case TK_TOUR_JOB_SCAN: {
        int rc = tour_table_scan(c, j->prefix, j->eng->game->engine, j->ttl_ms, TK_MAX_SEATS,
                                 j->claims, (size_t)j->max, &j->nclaims, &j->skipped);
        j->status = rc < 0 ? rc : 0;
        return;
    }
    case TK_TOUR_JOB_DEAL: {
        /* The claim first: a host that lost it asks nothing (docs/tournaments.md "Tables at
         * the servers": a re-deal would take the hand from the new host). */
        j->held = tour_table_renew(c, j->id, j->table, j->host, j->ttl_ms);
        if (j->held <= 0) {
            j->status = j->held < 0 ? -EIO : 0;
            return;
        }
        if (j->where[0] != '\0')
            j->status = tour_table_locate(c, j->id, j->table, j->where);
        if (j->status == 0)
            j->status = tour_table_next_hand(c, j->id, j->table, &j->hand, &j->closed);
        if (j->status == 0 && !j->closed)
            j->status = tour_table_ask(c, j->id, "deal", j->table, j->hand, j->attempt, j->host,
                                       NULL, NULL, TK_TOUR_ANSWER_MS, &j->answer);
        return;
    }
    case TK_TOUR_JOB_HAND:
        j->held = 1;
        j->status = tour_table_ask(c, j->id, "hand", j->table, j->hand, 0, j->host, j->result,
                                   j->record, TK_TOUR_ANSWER_MS, &j->answer);
        return;
    case TK_TOUR_JOB_RENEW:
        j->held = tour_table_renew(c, j->id, j->table, j->host, j->ttl_ms);
        j->status = j->held < 0 ? -EIO : 0;
        /* A cancelled tournament: its deal in play is void now, not at its end (nobody would
         * record it; docs/tournaments.md "Match halls: cancelling a running match"). */
        j->over = j->status == 0 && tour_table_over(c, j->id) == 1;
        return;
    case TK_TOUR_JOB_RELEASE:
        j->status = tour_table_release(c, j->id, j->table, j->host);
        return;
    }
}

static void tk_tour_job_done(money_job_t *job)
{
    tk_tour_job_t *j = (tk_tour_job_t *)job;
    tk_engine_t *eng = j->eng;
    pthread_mutex_lock(&eng->jobs_mu);
    if (eng->rt_stopped) {
        tk_tour_job_free(j);
    } else {
        rt_msg_t m = {.type = j->kind == TK_TOUR_JOB_SCAN ? TK_MSG_TOUR_CLAIMED : TK_MSG_TOUR_DONE,
                      .ptr = j,
                      .free_fn = tk_tour_job_free};
        rt_post(j->rt, j->desk, &m);
    }
    pthread_mutex_unlock(&eng->jobs_mu);
}

static tk_tour_job_t *tk_tour_job_new(tk_engine_t *eng, rt_t *rt, rt_desk_id_t desk,
                                      tk_tour_job_kind_t kind)
{
    tk_tour_job_t *j = xcalloc(1, sizeof *j);
    j->job.run = tk_tour_job_run;
    j->job.done = tk_tour_job_done;
    j->kind = kind;
    j->eng = eng;
    j->rt = rt;
    j->desk = desk;
    j->ttl_ms = eng->tour->ttl_ms;
    return j;
}

static int tk_tour_job_submit(tk_engine_t *eng, tk_tour_job_t *j)
{
    int rc = money_jobs_submit(eng->tour->jobs, &j->job);
    if (rc != 0)
        tk_tour_job_free(j);
    return rc;
}

/* A job of table t about its tournament table. */
static tk_tour_job_t *tk_tour_table_job(tk_table_t *t, tk_tour_job_kind_t kind)
{
    tk_tour_job_t *j = tk_tour_job_new(t->eng, rt_desk_rt(t->desk), rt_desk_id(t->desk), kind);
    j->id = t->tour->id;
    j->table = t->tour->table;
    j->seats = t->tour->seats;
    snprintf(j->host, sizeof j->host, "%s", t->tour->host);
    return j;
}

/* ---- the engine and the lobby ------------------------------------------------------------- */

int tk_tour_engine_create(tk_engine_t *eng)
{
    gs_t *gs = eng->gs;
    if (!eng->game->tournaments || eng->set.tour_tables <= 0 || gs_redis_host(gs) == NULL)
        return 0;
    tk_tour_host_t *h = xcalloc(1, sizeof *h);
    h->ttl_ms = (int)eng->set.tour_host_ttl_ms;
    h->max_tables = (int)eng->set.tour_tables;
    atomic_init(&h->tables, 0);
    snprintf(h->prefix, sizeof h->prefix, "%.20s.%" PRIu32 ".%" PRIu64, eng->svc,
             gs_server_slot(gs), gs_epoch(gs));
    h->jobs = money_jobs_create_sentinel(gs_redis_host(gs), gs_redis_port(gs),
                                         gs_redis_sentinels(gs), gs_redis_master(gs));
    money_jobs_set_cluster(h->jobs, gs_redis_cluster(gs));
    if (h->jobs == NULL) {
        free(h);
        return -ENOMEM;
    }
    eng->tour = h;
    return 0;
}

void tk_tour_engine_destroy(tk_engine_t *eng)
{
    if (eng->tour == NULL)
        return;
    money_jobs_destroy(eng->tour->jobs);
    free(eng->tour);
    eng->tour = NULL;
}

static void tk_tour_scan_arm(rt_desk_t *desk, int64_t ms)
{
    rt_desk_timer_arm(desk, ms + (int64_t)arc4random_uniform((uint32_t)ms / 2 + 1),
                      TK_TIMER_TOUR_SCAN, NULL);
}

/* Lobby desk: scan for unhosted tables (every TK_TOUR_SCAN_MS, jittered; soon again after a
 * claim), while the server takes tables (not draining, rounds allowed) and has room for more.
 * The next scan is armed when this one is answered (tk_tour_lobby_claimed). */
void tk_tour_lobby_scan(rt_desk_t *desk, tk_engine_t *eng)
{
    tk_tour_host_t *h = eng->tour;
    if (h == NULL || rt_intake_stopped(rt_desk_rt(desk)) || h->scanning)
        return; /* a draining server claims nothing; no next scan */
    int room = h->max_tables - atomic_load(&h->tables);
    if (room > 0 && gs_can_start_round(eng->gs)) {
        tk_tour_job_t *j =
            tk_tour_job_new(eng, rt_desk_rt(desk), rt_desk_id(desk), TK_TOUR_JOB_SCAN);
        j->max = room < TK_TOUR_CLAIMS ? room : TK_TOUR_CLAIMS;
        snprintf(j->prefix, sizeof j->prefix, "%s", h->prefix);
        if (tk_tour_job_submit(eng, j) == 0) {
            h->scanning = true;
            return;
        }
    }
    tk_tour_scan_arm(desk, TK_TOUR_SCAN_MS);
}

/* Lobby desk: a scan's claims: a table desk for each (its tour set before the game's
 * table_create, so the game knows it plays a tournament table). */
void tk_tour_lobby_claimed(rt_desk_t *desk, tk_engine_t *eng, void *ptr)
{
    tk_tour_job_t *j = ptr;
    tk_tour_host_t *h = eng->tour;
    h->scanning = false;
    tk_tour_scan_arm(desk, j->nclaims > 0 ? TK_TOUR_SCAN_SOON_MS : TK_TOUR_SCAN_MS);
    if (j->skipped > 0 && !h->skipped_logged) {
        h->skipped_logged = true;
        log_emit(LOG_WARN, "tk_tour_tables_too_big", "{s:I,s:i}", "tables", (json_int_t)j->skipped,
                 "max_seats", TK_MAX_SEATS);
    }
    if (j->status != 0)
        log_emit(LOG_WARN, "tk_tour_scan_failed", "{s:i}", "errno", -j->status);
    for (size_t i = 0; i < j->nclaims; i++) {
        tk_tour_t *tt = xcalloc(1, sizeof *tt);
        tt->id = j->claims[i].tournament;
        tt->table = j->claims[i].table;
        tt->seats = j->claims[i].seats;
        snprintf(tt->host, sizeof tt->host, "%s", j->claims[i].host);
        rt_desk_id_t id;
        /* The stake: the game's least (the blinds are the director's, hand by hand; a match's
         * results are in units of 1, its base score the director's). */
        int64_t stake = eng->game->min_stake > 0 ? eng->game->min_stake : 1;
        const char *game = j->claims[i].game[0] != '\0' ? j->claims[i].game : eng->game->engine;
        int rc = tk_table_open_tour(eng, game, stake, tt, &id);
        if (rc != 0) {
            /* The claim expires and another server (or a later scan) takes the table. */
            log_emit(LOG_ERROR, "tk_tour_table_unopened", "{s:I,s:i,s:i}", "tournament",
                     (json_int_t)tt->id, "table", (int)tt->table, "errno", -rc);
            free(tt);
            continue;
        }
        atomic_fetch_add(&h->tables, 1);
        log_emit(LOG_INFO, "tk_tour_table_claimed", "{s:I,s:i,s:s,s:I}", "tournament",
                 (json_int_t)tt->id, "table", (int)tt->table, "host", tt->host, "desk",
                 (json_int_t)id);
        rt_msg_t m = {.type = TK_MSG_TOUR_START};
        rt_post(rt_desk_rt(desk), id, &m);
    }
}

/* ---- a table ----------------------------------------------------------------------------- */

static void tk_tour_arm(tk_table_t *t, int64_t ms, int kind)
{
    rt_desk_timer_arm(t->desk, ms, (uint64_t)kind, NULL);
}

/* Tells a player leaving the table why (moved, busted, the table's end) and unseats him. */
static void tk_tour_unseat(tk_table_t *t, int i, const char *detail)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableClosing tc = CROUPIER__TABLE_CLOSING__INIT;
    tc.reason = CROUPIER__CLOSING_REASON__CLOSING_TOURNAMENT;
    tc.detail = (char *)detail;
    tc.has_desk_id = true;
    tc.desk_id = rt_desk_id(t->desk);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
    sm.table_closing = &tc;
    tk_push_seat(t, i, &sm);
    tk_unseat(t, i);
}

/* Lets the table go: every player told, the claim released (unless lost), then the desk goes. */
void tk_tour_stop_now(tk_table_t *t, const char *why)
{
    tk_tour_t *tt = t->tour;
    if (tt->stopping)
        return;
    tt->stopping = true;
    t->closed = true;
    log_emit(LOG_INFO, "tk_tour_table_released", "{s:I,s:i,s:s,s:b}", "tournament",
             (json_int_t)tt->id, "table", (int)tt->table, "why", why, "lost", tt->lost);
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state != TK_EMPTY)
            tk_tour_unseat(t, i, why);
    if (tt->lost || tk_tour_job_submit(t->eng, tk_tour_table_job(t, TK_TOUR_JOB_RELEASE)) != 0)
        rt_post_destroy(rt_desk_rt(t->desk), rt_desk_id(t->desk));
}

void tk_tour_start(tk_table_t *t)
{
    tk_tour_arm(t, t->eng->tour->ttl_ms / 3, TK_TIMER_TOUR_RENEW);
    tk_tour_ask(t);
}

void tk_tour_ask(tk_table_t *t)
{
    tk_tour_t *tt = t->tour;
    if (tt->asking || tt->stopping || tt->joining || rt_desk_in_round(t->desk))
        return;
    int64_t wait = tt->retry_at_ms - clock_mono_ms();
    if (tt->start_fails > 0 && wait > 0) {
        tk_tour_arm(t, wait, TK_TIMER_TOUR_ASK);
        return;
    }
    if (rt_intake_stopped(rt_desk_rt(t->desk))) {
        tk_tour_stop_now(t, "the server is draining: your table moves to another server");
        return;
    }
    if (!gs_can_start_round(gs_of_desk(t->desk))) {
        tk_tour_arm(t, TK_TOUR_WAIT_MS, TK_TIMER_TOUR_ASK);
        return;
    }
    tk_tour_job_t *j = tk_tour_table_job(t, TK_TOUR_JOB_DEAL);
    j->attempt = tt->deal_try;
    if (!tt->located) {
        /* Where the table is played: written with the first deal this desk asks (it never
         * changes for the desk; a new host's desk writes its own). */
        char server[MONEY_ID_MAX + 1];
        tk_server_id(t, server, sizeof server);
        json_t *w = json_pack(
            "{s:s,s:s,s:I,s:I,s:i,s:s,s:I}", "host", tt->host, "server", server, "epoch",
            (json_int_t)t->epoch, "desk", (json_int_t)rt_desk_id(t->desk), "engine",
            (int)t->eng->game->proto_engine, "game", t->game, "stake", (json_int_t)t->stake);
        char *txt = w != NULL ? json_dumps(w, JSON_COMPACT) : NULL;
        json_decref(w);
        snprintf(j->where, sizeof j->where, "%s", txt != NULL ? txt : "{}");
        free(txt);
    }
    if (tk_tour_job_submit(t->eng, j) == 0)
        tt->asking = true;
    else
        tk_tour_arm(t, TK_TOUR_RETRY_MS, TK_TIMER_TOUR_ASK);
}

/* Seats the deal's players at their seats with their stacks (a match: the score bank, their
 * scores kept apart); the others leave. */
static void tk_tour_seat(tk_table_t *t, const tour_deal_t *d)
{
    gs_t *gs = gs_of_desk(t->desk);
    tk_tour_t *tt = t->tour;
    /* First every seat whose player the deal does not put there leaves it, then the deal's
     * players sit: a player the deal moves to another seat of this table (a match's re-pairing
     * may form the same table again) is unseated before he sits again, so the server's map of
     * players to desks ends with him here (in the other order the unseat would erase it, and
     * every request of his would be NOT_SEATED until his next table). */
    for (int i = 0; i < t->nseats; i++) {
        const tour_deal_seat_t *ds = NULL;
        bool here = false;
        for (size_t k = 0; k < d->nseats; k++) {
            if (d->seats[k].seat == i)
                ds = &d->seats[k];
            here = here || d->seats[k].player == t->seat[i].player;
        }
        if (t->seat[i].state != TK_EMPTY && (ds == NULL || ds->player != t->seat[i].player))
            tk_tour_unseat(t, i,
                           here ? "your seat at this table changed: take it again"
                                : "you play at another table of the tournament now");
    }
    for (int i = 0; i < t->nseats; i++) {
        const tour_deal_seat_t *ds = NULL;
        for (size_t k = 0; k < d->nseats; k++)
            if (d->seats[k].seat == i)
                ds = &d->seats[k];
        tk_seat_t *s = &t->seat[i];
        tt->acted[i] = false;
        if (ds == NULL)
            continue;
        int64_t stack = d->scored ? TK_TOUR_SCORE_BANK : ds->stack;
        tt->score[i] = ds->score;
        if (s->state == TK_EMPTY) {
            s->player = ds->player;
            s->away = true; /* until the player resumes here */
            s->bank_ms = t->eng->set.time_bank_ms;
            s->stack = stack;
            gs_seat(gs, ds->player, rt_desk_id(t->desk));
            tk_seated(t, i);
        } else if (s->stack != stack) {
            /* The director's stack is the truth (a hand it recorded that this table did not
             * see to its end cannot happen, but a re-deal after a void restores the deal's). */
            if (t->eng->game->seat_changed != NULL)
                t->eng->game->seat_changed(t, t->g, i, false);
            s->stack = stack;
            if (t->eng->game->seat_changed != NULL)
                t->eng->game->seat_changed(t, t->g, i, true);
        }
        s->out = !ds->dealt;
    }
}

/* Whether a player dealt in is not at the table (away). */
static bool tk_tour_absent(const tk_table_t *t)
{
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state != TK_EMPTY && !t->seat[i].out && t->seat[i].away)
            return true;
    return false;
}

static void tk_tour_begin(tk_table_t *t);

static void tk_tour_deal_done(tk_table_t *t, tk_tour_job_t *j)
{
    tk_tour_t *tt = t->tour;
    if (j->held == 0) {
        tt->lost = true;
        tk_tour_stop_now(t, "your table moved to another server");
        return;
    }
    if (j->status == 0 || j->status == -ETIMEDOUT)
        tt->located = true; /* the locate ran before the ask */
    if (j->closed || j->status == -ESHUTDOWN) {
        tk_tour_stop_now(t, j->closed ? "your table was broken: you play at another table"
                                      : "the tournament is over");
        return;
    }
    if (j->status != 0) {
        if (j->status != -ETIMEDOUT)
            log_emit(LOG_WARN, "tk_tour_deal_unanswered", "{s:I,s:i,s:i}", "tournament",
                     (json_int_t)tt->id, "table", (int)tt->table, "errno", -j->status);
        tk_tour_arm(t, TK_TOUR_RETRY_MS, TK_TIMER_TOUR_ASK);
        return;
    }
    const char *code = json_string_value(json_object_get(j->answer, "code"));
    code = code != NULL ? code : "";
    if (strcmp(code, "OK") != 0)
        tt->deal_try++; /* answered: the next ask is a new request (a WAIT is no final word) */
    if (strcmp(code, "TABLE_CLOSED") == 0 || strcmp(code, "TOURNAMENT_OVER") == 0) {
        tk_tour_stop_now(t, strcmp(code, "TABLE_CLOSED") == 0
                                ? "your table was broken: you play at another table"
                                : "the tournament is over");
        return;
    }
    if (strcmp(code, "OK") != 0) {
        if (strcmp(code, "WAIT") != 0)
            log_emit(LOG_WARN, "tk_tour_deal_refused", "{s:I,s:i,s:s,s:O}", "tournament",
                     (json_int_t)tt->id, "table", (int)tt->table, "code", code, "answer",
                     j->answer);
        tk_tour_arm(t, TK_TOUR_WAIT_MS, TK_TIMER_TOUR_ASK);
        return;
    }
    if (tour_deal_parse(j->answer, (uint32_t)t->nseats, &tt->deal) != 0 ||
        (tt->deal.scored && strcmp(tt->deal.game, t->game) != 0)) {
        log_emit(LOG_ERROR, "tk_tour_deal_malformed", "{s:I,s:i,s:O}", "tournament",
                 (json_int_t)tt->id, "table", (int)tt->table, "answer", j->answer);
        tk_tour_arm(t, TK_TOUR_WAIT_MS, TK_TIMER_TOUR_ASK);
        return;
    }
    tk_tour_seat(t, &tt->deal);
    if (tk_tour_duplicate(t)) /* other tables play the same cards: no one watches it live */
        tk_spect_drop(t, CROUPIER__ERROR_CODE__NOT_WATCHABLE,
                      "a duplicate deal is not watched while other tables play it");
    if (tt->deal.scored && t->eng->set.tour_join_ms > 0 && tk_tour_absent(t)) {
        /* A match's players change tables between deals: the deal waits (at most
         * tour_join_ms) for those not here yet, or the trustee would play their first turns
         * before they could come (docs/tournaments.md "Match halls: the tables at the
         * servers"). */
        tt->joining = true;
        tt->join_serial++;
        rt_desk_timer_arm(t->desk, t->eng->set.tour_join_ms,
                          TK_TIMER_TOUR_JOIN | (tt->join_serial << 8), NULL);
        return;
    }
    tk_tour_begin(t);
}

/* The table plays a match hall's duplicate deal (a Swiss round's seed: every table of the round
 * deals the same cards, docs/rules/match-halls.md): it is not watched live (docs/spectators.md). */
bool tk_tour_duplicate(const tk_table_t *t)
{
    return t->tour != NULL && t->tour->deal.scored && t->tour->deal.seed[0] != '\0';
}

/* The deal the director dealt begins (its players seated). */
static void tk_tour_begin(tk_table_t *t)
{
    tk_start_round(t);
    if (!rt_desk_in_round(t->desk)) {
        /* Not started (intake stopped, rounds paused): the director holds the hand, which the
         * next ask re-deals (here or at the table's next host). */
        if (rt_intake_stopped(rt_desk_rt(t->desk)))
            tk_tour_stop_now(t, "the server is draining: your table moves to another server");
        else
            tk_tour_arm(t, TK_TOUR_WAIT_MS, TK_TIMER_TOUR_ASK);
    }
}

bool tk_tour_report(tk_table_t *t, const int64_t *delta)
{
    tk_tour_t *tt = t->tour;
    size_t off = 0;
    tt->result[0] = '\0';
    /* Hold'em: every player's stack after the hand; a match: every player's deal result, with
     * ":a" for a player absent from it (he sent no move and is not connected at its end: the
     * trustee played him; docs/rules/match-halls.md "Disconnects"). */
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].playing)
            off +=
                (size_t)snprintf(tt->result + off, sizeof tt->result - off,
                                 "%s%" PRIu64 ":%" PRId64 "%s", off > 0 ? "," : "",
                                 t->seat[i].player, tt->deal.scored ? delta[i] : t->seat[i].stack,
                                 tt->deal.scored && !tt->acted[i] && t->seat[i].away ? ":a" : "");
    /* The stacks already hold the hand's deltas (tk_finish); the record goes with them, so
     * the hand and its history are written together, once (docs/tournaments.md). */
    free(tt->record);
    json_t *rec = tk_history_record(t, delta, 0);
    json_t *tj = json_object_get(rec, tt->deal.scored ? "match" : "tournament");
    if (tj != NULL)
        json_object_set_new(tj, "ended_ms", json_integer(clock_wall_ms()));
    if (tj != NULL && tt->deal.scored) {
        json_t *away = json_array(); /* the seats reported absent (":a" above) */
        for (int i = 0; i < t->nseats; i++)
            if (t->seat[i].playing && !tt->acted[i] && t->seat[i].away)
                json_array_append_new(away, json_integer(i));
        json_object_set_new(tj, "absent", away);
    }
    tt->record = rec != NULL ? json_dumps(rec, JSON_COMPACT) : NULL;
    json_decref(rec);
    tk_tour_job_t *j = tk_tour_table_job(t, TK_TOUR_JOB_HAND);
    j->hand = tt->deal.hand;
    snprintf(j->result, sizeof j->result, "%s", tt->result);
    j->record = tt->record != NULL ? strdup(tt->record) : NULL;
    if (tk_tour_job_submit(t->eng, j) != 0)
        return false;
    tt->asking = true;
    return true;
}

static void tk_tour_hand_done(tk_table_t *t, tk_tour_job_t *j)
{
    tk_tour_t *tt = t->tour;
    const char *code =
        j->answer != NULL ? json_string_value(json_object_get(j->answer, "code")) : NULL;
    if (j->status == -ETIMEDOUT || (j->status == -EIO && !tt->lost)) {
        /* Asked again with the same id: applied once, its first answer given again. */
        tk_tour_job_t *again = tk_tour_table_job(t, TK_TOUR_JOB_HAND);
        again->hand = tt->deal.hand;
        snprintf(again->result, sizeof again->result, "%s", tt->result);
        again->record = tt->record != NULL ? strdup(tt->record) : NULL;
        if (tk_tour_job_submit(t->eng, again) == 0) {
            tt->asking = true;
            return;
        }
    }
    money_result_t res = {.status = MONEY_OK};
    tt->nleavers = 0;
    free(tt->record);
    tt->record = NULL;
    if (code != NULL && strcmp(code, "OK") == 0) {
        /* The director wrote the hand's history record with the stacks: not again here. */
        json_decref(t->history);
        t->history = NULL;
        if (tt->deal.scored) {
            uint64_t seated[TK_MAX_SEATS] = {0};
            for (int i = 0; i < t->nseats; i++)
                seated[i] = t->seat[i].state != TK_EMPTY ? t->seat[i].player : 0;
            tt->match_told = tour_match_hand_parse(j->answer, seated, (size_t)t->nseats,
                                                   tt->match_out, tt->match_stays) == 0;
            for (int i = 0; i < t->nseats; i++)
                if (t->seat[i].playing)
                    tt->score[i] += t->settle_delta[i] * tt->deal.base;
        } else {
            tt->nleavers = tour_hand_leavers(j->answer, tt->table, tt->leavers, TOUR_MAX_SEATS);
        }
        tt->finished = json_is_true(json_object_get(j->answer, "finished"));
        tt->start_fails = 0;
    } else {
        /* Refused (NOT_HOST: re-dealt to another host; the tournament ended...): the hand is
         * void here, nothing of it was recorded. */
        log_emit(LOG_WARN, "tk_tour_hand_refused", "{s:I,s:i,s:s,s:i}", "tournament",
                 (json_int_t)tt->id, "table", (int)tt->table, "code", code != NULL ? code : "",
                 "errno", -j->status);
        res.status = MONEY_ERR_STALE_EPOCH;
        snprintf(res.error, sizeof res.error, "%s", code != NULL ? code : "no answer");
        if (code != NULL && strcmp(code, "NOT_HOST") == 0)
            tt->lost = true;
    }
    tk_settled(t, t->seq, &res);
}

/* After a match's deal: a player out of the match leaves, and so does one who does not play the
 * table's next deal (he waits to be re-paired: his next table comes with its deal). */
static void tk_tour_match_leavers(tk_table_t *t)
{
    tk_tour_t *tt = t->tour;
    if (!tt->match_told)
        return;
    tt->match_told = false;
    for (int i = 0; i < t->nseats; i++) {
        if (t->seat[i].state == TK_EMPTY)
            continue;
        if (tt->match_out[i])
            tk_tour_unseat(t, i, "you are out of the match: your place comes with its end");
        else if (!tt->match_stays[i] && !tt->finished)
            tk_tour_unseat(t, i, "you are re-paired: your next table starts when it is full");
    }
}

void tk_tour_after_round(tk_table_t *t, bool voided)
{
    tk_tour_t *tt = t->tour;
    if (!voided && tt->deal.scored)
        tk_tour_match_leavers(t);
    if (!voided)
        for (size_t k = 0; k < tt->nleavers; k++) {
            int i = tk_find(t, tt->leavers[k].player);
            if (i < 0)
                continue;
            char why[160];
            if (tt->leavers[k].busted && tt->leavers[k].place == 1)
                snprintf(why, sizeof why, "you won the tournament: prize %" PRId64,
                         tt->leavers[k].prize);
            else if (tt->leavers[k].busted)
                snprintf(why, sizeof why,
                         "you are out of the tournament: place %" PRIu32 ", prize %" PRId64,
                         tt->leavers[k].place, tt->leavers[k].prize);
            else
                snprintf(why, sizeof why, "you move to table %" PRIu32 " of the tournament",
                         tt->leavers[k].to_table);
            tk_tour_unseat(t, i, why);
        }
    tt->nleavers = 0;
    if ((tt->finished && !voided) || tt->over)
        tk_tour_stop_now(t, "the tournament is over");
    else if (tt->lost)
        tk_tour_stop_now(t, "your table moved to another server");
    else if (rt_intake_stopped(rt_desk_rt(t->desk)))
        tk_tour_stop_now(t, "the server is draining: your table moves to another server");
}

void tk_tour_done(tk_table_t *t, void *ptr)
{
    tk_tour_job_t *j = ptr;
    tk_tour_t *tt = t->tour;
    switch (j->kind) {
    case TK_TOUR_JOB_DEAL:
        tt->asking = false;
        if (!tt->stopping)
            tk_tour_deal_done(t, j);
        return;
    case TK_TOUR_JOB_HAND:
        tt->asking = false;
        tk_tour_hand_done(t, j);
        return;
    case TK_TOUR_JOB_RENEW:
        if (j->over && !tt->stopping && !tt->over) {
            log_emit(LOG_INFO, "tk_tour_over", "{s:I,s:i}", "tournament", (json_int_t)tt->id,
                     "table", (int)tt->table);
            tt->over = true;
            /* A job in flight (a deal, a hand's report) is answered "over" and ends the table
             * itself (the report refused: the deal void). */
            if (tt->asking)
                return;
            if (rt_desk_in_round(t->desk))
                tk_void(t, CROUPIER__VOID_REASON__VOID_SHUTDOWN); /* ends in tk_tour_stop */
            else
                tk_tour_stop_now(t, "the tournament is over");
            return;
        }
        if (j->status == 0 && j->held == 0 && !tt->stopping) {
            log_emit(LOG_WARN, "tk_tour_claim_lost", "{s:I,s:i}", "tournament", (json_int_t)tt->id,
                     "table", (int)tt->table);
            tt->lost = true;
            if (rt_desk_in_round(t->desk))
                tk_void(t, CROUPIER__VOID_REASON__VOID_LEASE_LOST); /* ends in tk_tour_stop */
            else
                tk_tour_stop_now(t, "your table moved to another server");
        }
        return;
    case TK_TOUR_JOB_RELEASE:
        rt_post_destroy(rt_desk_rt(t->desk), rt_desk_id(t->desk));
        return;
    case TK_TOUR_JOB_SCAN:
        return;
    }
}

void tk_tour_timer(tk_table_t *t, int kind)
{
    tk_tour_t *tt = t->tour;
    if (tt->stopping)
        return;
    if (kind == TK_TIMER_TOUR_RENEW) {
        tk_tour_job_submit(t->eng, tk_tour_table_job(t, TK_TOUR_JOB_RENEW));
        tk_tour_arm(t, t->eng->tour->ttl_ms / 3, TK_TIMER_TOUR_RENEW);
    } else if (kind == TK_TIMER_TOUR_ASK) {
        tk_tour_ask(t);
    }
}

void tk_tour_start_failed(tk_table_t *t)
{
    tk_tour_t *tt = t->tour;
    if (tt->start_fails < 16)
        tt->start_fails++;
    int64_t ms = 100LL << (tt->start_fails - 1);
    tt->retry_at_ms = clock_mono_ms() + (ms > 5000 ? 5000 : ms);
}

void tk_tour_acted(tk_table_t *t, int seat)
{
    if (seat >= 0 && seat < TK_MAX_SEATS)
        t->tour->acted[seat] = true;
}

void tk_tour_join_timer(tk_table_t *t, uint64_t serial)
{
    tk_tour_t *tt = t->tour;
    if (tt == NULL || !tt->joining || serial != (tt->join_serial & (UINT64_MAX >> 8)) ||
        tt->stopping)
        return; /* an earlier deal's wait, or the deal began */
    tt->joining = false;
    tk_tour_begin(t); /* the players not come are played by the trustee */
}

void tk_tour_present(tk_table_t *t)
{
    tk_tour_t *tt = t->tour;
    if (!tt->joining || tt->stopping || tk_tour_absent(t))
        return;
    tt->joining = false;
    tk_tour_begin(t);
}

bool tk_tour_request_refused(tk_table_t *t, gs_request_t *req)
{
    if (t->tour == NULL || req->kind != GS_REQ_LEAVE)
        return false;
    tk_refuse(t, req, CROUPIER__ERROR_CODE__BAD_REQUEST,
              "a tournament seat is kept until your chips are gone; your turns are played for "
              "you while you are away");
    return true;
}

void tk_tour_history(tk_table_t *t)
{
    const tour_deal_t *d = &t->tour->deal;
    if (d->scored) {
        json_t *mj = json_pack("{s:I,s:i,s:I,s:i,s:s,s:I,s:i,s:I}", "id", (json_int_t)t->tour->id,
                               "table", (int)t->tour->table, "hand", (json_int_t)d->hand, "stage",
                               (int)d->stage, "format", d->format, "deal", (json_int_t)d->deal,
                               "round", (int)d->round, "base", (json_int_t)d->base);
        if (mj != NULL && d->seed[0] != '\0')
            json_object_set_new(mj, "seed", json_string(d->seed));
        if (mj != NULL && t->history != NULL)
            json_object_set_new(t->history, "match", mj);
        else
            json_decref(mj);
        return;
    }
    json_t *tj =
        json_pack("{s:I,s:i,s:I,s:i,s:I,s:I,s:I,s:b,s:i,s:i,s:i}", "id", (json_int_t)t->tour->id,
                  "table", (int)t->tour->table, "hand", (json_int_t)d->hand, "level", (int)d->level,
                  "small_blind", (json_int_t)d->small_blind, "big_blind", (json_int_t)d->big_blind,
                  "ante", (json_int_t)d->ante, "big_blind_ante", d->big_blind_ante, "button",
                  d->button, "sb", d->sb, "bb", d->bb);
    if (tj != NULL && t->history != NULL)
        json_object_set_new(t->history, "tournament", tj);
    else
        json_decref(tj);
}

int tk_tour_seats(const tk_tour_t *tour)
{
    return (int)tour->seats;
}

void tk_tour_destroy(tk_table_t *t)
{
    if (t->tour == NULL)
        return;
    atomic_fetch_sub(&t->eng->tour->tables, 1);
    free(t->tour->record);
    free(t->tour);
    t->tour = NULL;
}

/* ---- what a game asks (tk.h) --------------------------------------------------------------- */

bool tk_tour_table(const tk_table_t *t)
{
    return t->tour != NULL;
}

int tk_tour_hand(const tk_table_t *t, tk_tour_hand_t *out)
{
    if (t->tour == NULL || !rt_desk_in_round(t->desk) || t->tour->deal.scored)
        return -ENOENT;
    const tour_deal_t *d = &t->tour->deal;
    *out = (tk_tour_hand_t){.small_blind = d->small_blind,
                            .big_blind = d->big_blind,
                            .ante = d->ante,
                            .big_blind_ante = d->big_blind_ante,
                            .button = d->button,
                            .small_blind_seat = d->sb,
                            .big_blind_seat = d->bb,
                            .level = d->level,
                            .hand = d->hand};
    return 0;
}

int tk_tour_match(const tk_table_t *t, tk_tour_match_t *out)
{
    if (t->tour == NULL || !rt_desk_in_round(t->desk) || !t->tour->deal.scored)
        return -ENOENT;
    const tour_deal_t *d = &t->tour->deal;
    *out =
        (tk_tour_match_t){.stage = d->stage, .round = d->round, .deal = d->deal, .base = d->base};
    snprintf(out->format, sizeof out->format, "%s", d->format);
    snprintf(out->seed, sizeof out->seed, "%s", d->seed);
    return 0;
}

bool tk_tour_seat_score(const tk_table_t *t, int seat, int64_t *score)
{
    if (t->tour == NULL || !t->tour->deal.scored || seat < 0 || seat >= t->nseats)
        return false;
    *score = t->tour->score[seat];
    return true;
}
