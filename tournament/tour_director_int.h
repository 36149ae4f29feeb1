/*
 * tour_director_int.h -- what the director's two files share (tour_director.c, tour_steps.c):
 * the tournament (tour_t), its requests (tour_req_t), the director's state, the reply callbacks'
 * argument, and the functions one file calls in the other. Internal to tournament/: nothing
 * else includes it; tour_director.h is the contract.
 *
 *   tour_director.c  owning and letting go (claims, renewals, releases), the tournament's own
 *                    steps (registration, start, levels, cancellation: TOUR_APPLY_LUA), loading
 *                    the model, the level clock, the pump, claiming, reading the request
 *                    streams, the director's life
 *   tour_steps.c     the tables' requests (deal, hand) and the director's computed steps
 *                    (TOUR_COMMIT_LUA, tour_play.h), and durability: the WAIT before an answer
 *                    is given (tour_director.h "Durability")
 *
 * Everything runs on the director's event_base thread (tour_director.h "Threads"); a tour_t
 * is made and freed by tour_director.c, its fields written by the step running for it.
 */
#ifndef CROUPIER_TOUR_DIRECTOR_INT_H
#define CROUPIER_TOUR_DIRECTOR_INT_H

#include "tour_director.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>
#include <event2/event.h>
#include <jansson.h>

#include "clock.h"
#include "log.h"
#include "rconn.h"
#include "tour_lua.h"
#include "tour_match.h"
#include "tour_payout.h"
#include "tour_play.h"
#include "tour_structure.h"

/* Requests read ahead per tournament before its queue is full (the stream keeps the rest). */
#define TOUR_QUEUE_MAX 64
/* XREAD's block (ms) and how many entries per stream one read takes. */
#define TOUR_READ_BLOCK_MS 250
#define TOUR_READ_COUNT 64
/* Claims in flight at once, per scan. */
#define TOUR_CLAIMS_MAX 16
/* A hand's result: ten seats of "PLAYER:STACK," at most. */
#define TOUR_RESULT_MAX 512
/* Request ids: [A-Za-z0-9_.:-]{1,92} (the key names and the answer carry them). */
#define TOUR_REQ_MAX 92

typedef struct {
    char sid[48]; /* stream id */
    char op[16];
    char req[TOUR_REQ_MAX + 1];
    char player[24];
    char reason[128];
    char table[12], hand[24];
    char result[TOUR_RESULT_MAX]; /* hand: "PLAYER:STACK,..." */
    char host[TOUR_HOST_MAX + 1]; /* deal, hand: the table's host (tour_play.h) */
    char *record;                 /* hand: the hand's history record (JSON), owned; or NULL */
    bool bad;                     /* malformed: answered BAD_REQUEST */
} tour_req_t;

/* The longest hand history record a table may send with its result. */
#define TOUR_RECORD_MAX 65536

typedef struct tour {
    struct tour *next;
    tour_director_t *d;
    uint64_t id;
    int64_t epoch;
    char token[33];
    tour_structure_t *st; /* NULL: the stored structure did not parse (the tournament idles) */
    char status[16];
    char read_cursor[48]; /* last stream id read (the applied one, `cursor`, is in Redis) */
    int64_t entries, players, pool;
    int64_t start_at_ms;   /* wall, MTT */
    int64_t clock_base_ms; /* level clock at mono_base_ms */
    int64_t mono_base_ms;
    size_t level; /* index in st->levels, as last written */
    tour_req_t *queue;
    size_t qhead, qlen;
    bool busy;
    bool want_start, want_release, want_cancel_quorum;
    bool want_load;        /* running: the model (tour_play) is to be read from Redis */
    tour_play_t *play;     /* running and loaded (hold'em) */
    tour_match_t *match;   /* running and loaded (format match: tour_match.h) */
    int64_t stage_clock0;  /* meta, a match: the clock when its current stage began */
    int64_t rng, paid_out; /* meta numbers for the model */
    int64_t h4h_on, h4h_round;
    bool paused;            /* the level clock stands still (hand-for-hand) */
    tour_commit_t inflight; /* the commit in flight (sent again as is when no answer came) */
    bool inflight_request;  /* it answers the request at the head of the queue */
    bool released;
    /* Durability: the step whose script went through, waiting for the replicas (WAIT). */
    char *durable_txt;                /* the script's reply */
    char durable_reply[TOUR_KEY_MAX]; /* where its answer goes ("": none) */
    int durable_kind;                 /* TOUR_CB_APPLY or TOUR_CB_COMMIT */
    int durable_tries;
    int64_t last_renew_ok_ms; /* mono */
    struct event *renew_ev, *clock_ev;
} tour_t;

struct tour_director {
    tour_director_config_t cfg;
    char *director_id;
    rconn_t *rc, *rx;
    rconn_script_t *claim, *renew, *release, *apply, *read2, *commit, *read_model, *hall_tick;
    bool hall_busy; /* a TOUR_HALL_TICK_LUA in flight */
    tour_t *tours;
    _Atomic long owned;
    _Atomic bool connected;
    _Atomic bool releasing;
    struct event *scan_ev, *read_ev;
    bool scan_busy, reading;
    int reads_out;              /* by entity: the XREADs in flight, one per tournament */
    bool read_got, read_failed; /* by entity: of this round of reads */
    int claims_in_flight;
    void (*release_done)(void *);
    void *release_arg;
    metrics_t *m_owned, *m_claims, *m_lost, *m_released, *m_renew_fail;
    metrics_t *m_requests_ok, *m_requests_refused, *m_stale;
};

/* What a reply callback needs to find its tournament again. */
typedef struct {
    tour_director_t *d;
    uint64_t id;
    int64_t epoch;
    int kind;
} tour_cb_t;

enum {
    TOUR_CB_RENEW,
    TOUR_CB_RELEASE,
    TOUR_CB_APPLY,
    TOUR_CB_CANCEL_READ,
    TOUR_CB_CLAIM,
    TOUR_CB_COMMIT,
    TOUR_CB_LOAD,
    TOUR_CB_WAIT
};

/* WAITs for one step before its answer is given up (tour_director.h "Durability"). */
#define TOUR_WAIT_TRIES 10

/* ---- shared between tour_director.c and tour_steps.c ---- */

tour_cb_t *tour_cb(tour_director_t *d, const tour_t *t, int kind);
tour_t *tour_cb_take(void *arg);
int64_t tour_clock_ms(const tour_t *t);
void tour_dequeue(tour_t *t);
bool tour_fenced_out(tour_t *t, const redisReply *r);
void tour_apply_done(tour_t *t, const char *txt);
void tour_pump(tour_t *t);
void tour_arm_clock(tour_t *t);
void tour_sync_pause(tour_t *t);
int tour_commit_send(tour_t *t);
void tour_commit_begin(tour_t *t, const tour_req_t *q, const char *answer);
void tour_table_request(tour_t *t, const tour_req_t *q);
void tour_step_ok(tour_t *t, int kind, const char *txt);

#endif
