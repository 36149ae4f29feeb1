/*
 * gs_int.h -- what gs.c, gs_push.c and gs_spect.c share: the core's structures (the outbox, the
 * links, the remembered answers, the gs itself) and the functions one file calls in the other.
 * Internal to the gs; gs.h is the contract.
 */
#ifndef CROUPIER_GS_INT_H
#define CROUPIER_GS_INT_H

#include "gs.h"

#include <pthread.h>
#include <stdatomic.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "money_writer.h"

#include "u64map.h"

enum {
    GS_MSG_REQUEST = RT_MSG_USER, /* ptr = gs_request_t */
    GS_MSG_VOID = RT_MSG_USER + 1,
    GS_MSG_FENCE = RT_MSG_USER + 2,
};

/* ---- outbox: desk threads -> main thread --------------------------------------------- */

typedef enum {
    GS_OUT_REPLY = 1,      /* bytes to link_id; remembered for retries under (player, request) */
    GS_OUT_PUSH = 2,       /* bytes to the player's current link */
    GS_OUT_SEAT = 3,       /* player -> desk (0 unseats) */
    GS_OUT_NOTICE = 4,     /* bytes to every link that serves one of the players (DeskClosing) */
    GS_OUT_UNSEAT = 5,     /* player no longer at desk_id (kept when at another desk by now) */
    GS_OUT_WATCH = 6,      /* a desk's public event: bytes to every link watching desk_id */
    GS_OUT_WATCH_LINK = 7, /* link_id watches desk_id (player_id 1) or not (0; link 0: none) */
    GS_OUT_PUSH_MANY = 8,  /* bytes (a push to players[0]) to each of players, one frame per link
                              that takes push_to, else one per player (gs_push_many) */
} gs_out_kind_t;

typedef struct gs_out {
    struct gs_out *next;
    gs_out_kind_t kind;
    uint64_t link_id;
    uint64_t player_id;
    uint64_t request_id;
    uint64_t dedupe_id; /* GS_OUT_REPLY: the key the answer is remembered under */
    uint64_t desk_id;
    uint8_t *bytes; /* a whole frame (header included) */
    size_t len;
    uint64_t *players; /* GS_OUT_PUSH_MANY: its recipients (players[0] is the frame's) */
    size_t nplayers;
} gs_out_t;

/* ---- links ------------------------------------------------------------------------------ */

typedef struct gs_link {
    gs_t *gs;
    uint64_t id;
    struct bufferevent *bev;
    bool hello_done;
    bool pinged;  /* its peer pings (gateways do): held to link_silent_ms from then on */
    bool dead;    /* closing: frees itself on the next loop iteration */
    bool push_to; /* its gateway takes pushes with RpcFrame.push_to (LinkHello.push_to) */
    char peer[64];
} gs_link_t;

/* A gateway that said hello on some link: its LinkHello.gate_id and its newest link. */
typedef struct {
    char id[80];
    uint64_t link;
} gs_gate_t;

/* Gateways remembered (gs_gate_relink); past it, the entry of one without a live link is reused. */
#define GS_GATES_MAX 256
/* The main loop standing still this long is a freeze (gs_watch_cb runs every 5 ms). */
#define GS_STALL_MS 1000
/* A wall-clock deadline this much below the budget is a clock step, not a delay. */
#define GS_CLOCK_TOLERANCE_MS 2000

/* ---- remembered answers ------------------------------------------------------------------ */

/*
 * A ring of the last N requests by (player, request id). An entry is "in flight" until its
 * reply passes through the main thread, then holds the reply frame. Lookup goes through a
 * u64map from a hash of the pair to the ring index; the pair itself is compared, so a hash
 * collision is a miss, never a wrong answer.
 */
typedef struct {
    uint64_t player_id, request_id, key;
    bool in_flight;
    uint64_t wait_link[4]; /* retries that arrived in flight want the answer on these links, */
    uint64_t wait_rid[4];  /* under these rpc request ids */
    int nwait;
    uint8_t *reply;
    size_t reply_len;
} gs_cached_t;

struct gs {
    struct event_base *base;
    rt_t *rt;
    const engine_ops_t *engine;
    void *engine_state;
    char *games;
    char *engine_options;
    char *redis_host, *service;
    char *redis_sentinels, *redis_master; /* NULL: redis_host */
    char *redis_cluster;                  /* NULL: not a cluster */
    int redis_min_replicas, redis_wait_ms;
    int redis_port;
    char server_id[96];
    _Atomic uint32_t slot;
    _Atomic uint64_t lease_epoch;
    money_writer_t *money;
    metrics_registry_t *metrics;
    size_t link_output_cap;
    int link_silent_ms; /* gs_config_t.link_silent_ms, resolved */

    struct evconnlistener *listener;
    u64map_t *links; /* link id -> gs_link_t * */
    uint64_t next_link_id;

    u64map_t *player_link; /* player -> link id of their last request (gs_gate_relink) */
    gs_gate_t *gates;      /* the gateways seen, GS_GATES_MAX at most */
    size_t ngates;
    u64map_t *player_desk; /* player -> desk id */

    gs_cached_t *cache;
    size_t cache_cap, cache_next;
    u64map_t *cache_index;

    pthread_mutex_t out_mu;
    gs_out_t *out_head, **out_tail;
    struct event *out_ev;

    pthread_mutex_t desks_mu;
    u64map_t *desks; /* live desk ids (value unused) */

    atomic_bool intake_stopped;
    atomic_bool quorum_lost;  /* gs_set_redis_quorum(false): no round starts */
    atomic_bool redis_unsafe; /* gs_set_redis_unsafe(true): no round starts */
    atomic_bool fenced;       /* gs_set_fenced(true): nothing accepted, desks stopped */
    atomic_uint_fast64_t money_followups;
    atomic_uint_fast64_t moving; /* desks moving their table as a whole (gs_table_move_begin) */

    struct event *watch_ev; /* polls human desks for the observer; notes the loop's stalls */
    int64_t loop_seen_ms;   /* gs_watch_cb's last run (clock_mono_ms) */
    int64_t stall_end_ms;   /* when the main loop last ran again after standing still */
    int64_t skew_logged_ms; /* last rpc_clock_skew line */
    uint64_t last_human_desks;
    void (*observer)(void *arg);
    void *observer_arg;

    u64map_t *spect; /* desk -> gs_spect_desk_t *: the links with spectators (gs_spect.c) */

    metrics_t *m_requests, *m_deadline, *m_skew, *m_dupes, *m_links, *m_slow, *m_bad_frames,
        *m_silent;
};

typedef struct {
    gs_t *gs;
    const gs_desk_ops_t *ops;
    void *state;
} gs_desk_t;

/* ---- shared between gs.c and gs_spect.c ---------------------------------------------------- */

uint8_t *gs_encode(const Croupier__RpcFrame *f, size_t *len);
void gs_out_enqueue(gs_t *gs, gs_out_t *o);
void gs_link_send(gs_link_t *l, const uint8_t *bytes, size_t len);
gs_link_t *gs_link_get(gs_t *gs, uint64_t id);
int64_t gs_request_deadline(gs_t *gs, const Croupier__RpcFrame *in);
void gs_link_reply_now(gs_link_t *l, const Croupier__RpcFrame *in, Croupier__ErrorCode code,
                       const char *message);

/* gs_spect.c (docs/spectators.md): a WatchTable frame from a link (takes in); an outbox item
 * GS_OUT_WATCH / GS_OUT_WATCH_LINK on the main thread; a link gone (its spectators count 0);
 * the teardown of the map. */
void gs_link_spect(gs_link_t *l, Croupier__RpcFrame *in);
void gs_spect_apply(gs_t *gs, gs_out_t *o);
void gs_spect_link_gone(gs_t *gs, uint64_t link_id);
void gs_spect_free(gs_t *gs);

/* gs_push.c: a GS_OUT_PUSH_MANY item on the main thread (one frame per link that takes push_to,
 * else one per player). */
void gs_push_many_apply(gs_t *gs, gs_out_t *o);

#endif
