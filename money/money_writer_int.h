/*
 * The money writer's internals shared by its files (money/money_writer.h is the contract):
 * money_writer.c (the queue, the writer thread, batches, WAIT, the journal and its probe) and
 * money_writer_lane.c (the seat lane of the money by entity, docs/queues.md "The game server's
 * money by entity"). The writer thread owns everything under "Writer thread only"; the lane's
 * thread touches only the lane_* fields, under lane_mu.
 */
#ifndef CROUPIER_MONEY_WRITER_INT_H
#define CROUPIER_MONEY_WRITER_INT_H

#include <event2/event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "metrics.h"
#include "money.h"
#include "money_writer.h"
#include "rconn.h"

/* One queued operation (its script arguments) and its completion. */
typedef struct money_item {
    struct money_item *next;
    money_kind_t kind;
    money_op_t op;
    char id[MONEY_ID_MAX + 1];
    money_writer_done_cb done;
    void *arg;
    int64_t submitted_ns;
    int64_t sent_ns;
    int64_t first_sent_ns; /* its record on Redis is at most this old (journal window) */
    int sends;
    bool replay;          /* a journal entry sent again after a reconnect (nobody to tell) */
    size_t bytes;         /* memory it holds, for the journal's byte cap */
    money_result_t *held; /* answered, waiting for WAIT (min_replicas > 0); owned */
    /* A seat transfer with the money by entity (money_set_entity): the seat lane's input. */
    money_seat_t seat;
    char seat_acct[MONEY_NAME_MAX + 1], seat_owner[MONEY_NAME_MAX + 1];
    int64_t amount;
} money_item_t;

/* A FIFO of items linked through next. */
typedef struct {
    money_item_t *head;
    money_item_t **tail;
    size_t n;
} money_list_t;

/* Most arguments one settle batch can have: per round 3 + n keys and 3 + n arguments. */
#define WRITER_BATCH_ARGS (MONEY_WRITER_BATCH_CAP * 2 * (3 + MONEY_MAX_PLAYERS) + 1)

struct money_writer {
    money_writer_config_t cfg; /* strings below are owned copies */
    char *host;
    char *cluster; /* cfg.redis_cluster's copy (NULL: not a cluster) */
    char *service;
    char ttl_text[24];

    /* Shared with producers (under mu unless atomic). */
    pthread_mutex_t mu;
    pthread_cond_t drained; /* broadcast when depth reaches 0 */
    money_list_t queue;
    bool stopping;
    _Atomic size_t depth;
    _Atomic uint64_t completed;
    _Atomic bool wake_pending;
    _Atomic int64_t oldest_ns; /* submit time of the oldest item, 0 when none */
    _Atomic bool connected;
    _Atomic bool durable; /* false from a WAIT that fell short until one succeeds */

    /* Writer thread only. */
    pthread_t thread;
    struct event_base *base;
    struct event *wake_ev;
    struct event *tick_ev;
    struct event *retry_ev;
    rconn_t *rc;
    rconn_script_t *scripts[MONEY_NSCRIPTS];
    uint64_t gen;
    bool holding; /* after a failure: send nothing until retry_ev fires */
    int backoff_ms;
    money_list_t pending; /* taken from the queue, not yet sent (front = oldest) */
    money_list_t flight;  /* sent, awaiting replies, in send order */
    money_list_t acked;   /* answered, awaiting the WAIT that makes them durable (in order) */
    money_list_t journal; /* completed with MONEY_OK, in completion (= send) order */
    size_t journal_bytes;
    int64_t window_ns;    /* journal window; 0 = no journal */
    unsigned probed_conn; /* rconn_connect_count() the journal was last checked against */
    bool probing;         /* a probe is in flight: nothing else is sent */
    unsigned probe_conn;  /* the connection being probed */
    size_t probe_checked; /* entries asked about so far */
    money_item_t **snap;  /* the journal as an array while probing (oldest first) */
    size_t snap_n;
    rconn_script_t *probe_script;
    bool wait_inflight;    /* a WAIT of the current generation is in flight */
    char wait_args[2][24]; /* WAIT's numreplicas and timeout as text */
    size_t calls;          /* commands of the current generation in flight */
    const char *av[WRITER_BATCH_ARGS];
    size_t avlen[WRITER_BATCH_ARGS];

    /*
     * The seat lane (the money by entity, money_set_entity): a seat transfer is a transfer
     * between slots (money/mcluster.h, blocking), run on a thread of its own, one at a time,
     * as a barrier in the FIFO -- handed over only once every earlier item is answered, and
     * nothing later is sent until it is final -- so the order a desk relies on holds.
     */
    bool lane_on;
    /* With min_replicas: the writes go to two slots (the epoch's: settlements and marks; the
     * money slot: hand histories), and a WAIT covers one master's; so each WAIT is two, each
     * behind a keyed read that routes it (rconn's cluster mode sends a keyless command to the
     * slot of the last keyed one). wait_key: a key of the epoch's slot, "" until one was sent. */
    char wait_key[MONEY_NAME_MAX + 64];
    int waits_pending; /* of the current pair */
    bool waits_ok, waits_lost;
    char waits_reason[200];
    bool lane_busy;          /* writer thread: an item is at the lane */
    money_item_t *lane_item; /* under lane_mu: handed over, and its result once lane_done */
    money_result_t lane_res;
    bool lane_done, lane_stop;
    pthread_mutex_t lane_mu;
    pthread_cond_t lane_cv;
    pthread_t lane_thread;
    struct event *lane_ev; /* activated by the lane with a result */

    metrics_registry_t *own_metrics;
    metrics_t *m_depth, *m_oldest, *m_latency, *m_retries, *m_reconnects;
    metrics_t *m_durable, *m_wait_short, *m_wait_latency;
    metrics_t *m_journal, *m_journal_bytes, *m_replayed, *m_probes;
    metrics_t *m_items[MONEY_NKINDS][2]; /* [kind][0 ok, 1 error] */
};

/* money_writer.c: an item's end (its result to its submitter, the journal, the metrics), and
 * sending what may be sent now. Writer thread only. */
void writer_complete(money_writer_t *w, money_item_t *it, money_result_t *r);
void writer_pump(money_writer_t *w);

/* money_writer_lane.c: the lane's result on the writer thread (lane_ev), and the lane's thread. */
void writer_lane_cb(evutil_socket_t fd, short what, void *arg);
void *writer_lane_main(void *arg);
/* Tells the lane's thread to stop (a transfer in flight ends -ECANCELED) and joins it. */
void writer_lane_stop(money_writer_t *w);

#endif
