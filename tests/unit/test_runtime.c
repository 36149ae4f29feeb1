/* Unit tests for engine/runtime: messages, timers, ids, rounds, counters, jobs, stop. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "runtime.h"

/* Polls cond() every millisecond for up to 10 s; true if it became true. */
#define WAIT_UNTIL(cond)                                                                           \
    ({                                                                                             \
        int64_t _end = clock_mono_ms() + 10000;                                                    \
        while (!(cond) && clock_mono_ms() < _end)                                                  \
            usleep(1000);                                                                          \
        (cond);                                                                                    \
    })

/* ---- a probe desk driven by messages ----------------------------------------------------- */

enum {
    OP_BEGIN = RT_MSG_USER,
    OP_END,         /* arg: outcome */
    OP_HUMANS,      /* arg: humans */
    OP_ARM,         /* arg: delay ms, arg2: cookie */
    OP_CANCEL,      /* arg: timer id */
    OP_DESTROY,     /* rt_desk_destroy from inside on_message */
    OP_SEQ,         /* arg: sender << 32 | seq */
    OP_PING,        /* arg: remaining hops; arg2: peer id */
    OP_INFO,        /* fills in_round / humans / desk pointer */
    OP_ARM_PATTERN, /* arms the timer pattern of the ordering test in one go */
    OP_ARM_PAIR,    /* two timers, one deadline (cookies 3, 4); 3's arrival cancels 4 */
    OP_ARM_DESTROY, /* arms five 1 ms timers, then destroys the desk */
};

#define MAX_FIRED 256
#define SENDERS 4

typedef struct {
    sem_t done;
    int rc;
    rt_timer_id_t timer_id;
    rt_desk_t *self;
    bool in_round;
    unsigned humans;
    uint64_t fired[MAX_FIRED];
    _Atomic int nfired;
    rt_timer_id_t cancel_when_fired[MAX_FIRED]; /* by cookie: a timer to cancel then */
    uint64_t last_seq[SENDERS];
    int order_errors;
    _Atomic long received;
    _Atomic int intake_msgs;
    _Atomic int destroyed;
    _Atomic long *ping_total;
    bool end_round_on_destroy;
} probe_t;

static void probe_reply(probe_t *p, int rc)
{
    p->rc = rc;
    sem_post(&p->done);
}

static void probe_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    probe_t *p = state;
    atomic_fetch_add(&p->received, 1);
    switch (msg->type) {
    case OP_BEGIN:
        probe_reply(p, rt_desk_begin_round(desk));
        break;
    case OP_END:
        probe_reply(p, rt_desk_end_round(desk, (rt_outcome_t)msg->arg));
        break;
    case OP_HUMANS:
        probe_reply(p, rt_desk_set_humans(desk, (unsigned)msg->arg));
        break;
    case OP_ARM:
        probe_reply(p, rt_desk_timer_arm(desk, (int64_t)msg->arg, msg->arg2, &p->timer_id));
        break;
    case OP_ARM_PATTERN: {
        /* Deadlines 60, 20, 40, 20, 0, 20 ms from one instant (cookies 0..5), then ten timers
         * (cookies 10..19) sharing the deadline 30 ms from it. All deadlines are taken from
         * the same instant, so the order does not depend on how fast this handler runs. */
        int64_t start = clock_mono_ns(), delays[] = {60, 20, 40, 20, 0, 20};
        int rc = 0;
        for (int i = 0; i < 6; i++)
            rc |= rt_desk_timer_arm_at(desk, start + delays[i] * 1000000LL, (uint64_t)i, NULL);
        for (int i = 10; i < 20; i++)
            rc |= rt_desk_timer_arm_at(desk, start + 30 * 1000000LL, (uint64_t)i, NULL);
        probe_reply(p, rc);
        break;
    }
    case OP_ARM_PAIR: {
        int64_t deadline = clock_mono_ns() + 30 * 1000000LL;
        rt_timer_id_t four;
        int rc = rt_desk_timer_arm_at(desk, deadline, 3, NULL);
        rc |= rt_desk_timer_arm_at(desk, deadline, 4, &four);
        p->cancel_when_fired[3] = four;
        p->timer_id = four;
        probe_reply(p, rc);
        break;
    }
    case OP_ARM_DESTROY: {
        int rc = 0;
        for (int i = 0; i < 5; i++)
            rc |= rt_desk_timer_arm(desk, 1, (uint64_t)i, NULL);
        rc |= rt_desk_destroy(desk);
        probe_reply(p, rc);
        break;
    }
    case OP_CANCEL:
        probe_reply(p, rt_desk_timer_cancel(desk, msg->arg));
        break;
    case OP_DESTROY:
        probe_reply(p, rt_desk_destroy(desk));
        break;
    case OP_INFO:
        p->self = desk;
        p->in_round = rt_desk_in_round(desk);
        p->humans = rt_desk_humans(desk);
        probe_reply(p, rt_current_worker(rt_desk_rt(desk)));
        break;
    case OP_SEQ: {
        unsigned sender = (unsigned)(msg->arg >> 32);
        uint64_t seq = msg->arg & 0xffffffffu;
        if (sender >= SENDERS || seq != p->last_seq[sender] + 1)
            p->order_errors++;
        else
            p->last_seq[sender] = seq;
        break;
    }
    case OP_PING:
        atomic_fetch_add(p->ping_total, 1);
        if (msg->arg > 0)
            rt_post(rt_desk_rt(desk), msg->arg2,
                    &(rt_msg_t){.type = OP_PING, .arg = msg->arg - 1, .arg2 = rt_desk_id(desk)});
        break;
    case RT_MSG_TIMER: {
        int n = atomic_load(&p->nfired);
        if (n < MAX_FIRED)
            p->fired[n] = msg->arg;
        if (msg->arg < MAX_FIRED && p->cancel_when_fired[msg->arg])
            rt_desk_timer_cancel(desk, p->cancel_when_fired[msg->arg]);
        atomic_store(&p->nfired, n + 1);
        break;
    }
    case RT_MSG_INTAKE_STOPPED:
        atomic_fetch_add(&p->intake_msgs, 1);
        break;
    }
}

static void probe_on_destroy(rt_desk_t *desk, void *state)
{
    probe_t *p = state;
    if (p->end_round_on_destroy && rt_desk_in_round(desk))
        rt_desk_end_round(desk, RT_ROUND_VOIDED);
    atomic_fetch_add(&p->destroyed, 1);
}

static const rt_desk_ops_t probe_ops = {probe_on_message, probe_on_destroy};

static probe_t *probe_new(void)
{
    probe_t *p = calloc(1, sizeof(*p));
    sem_init(&p->done, 0, 0);
    return p;
}

static void probe_free(probe_t *p)
{
    sem_destroy(&p->done);
    free(p);
}

/* Posts an op to the probe's desk and waits (up to 10 s) for its answer. */
static int probe_call(rt_t *rt, rt_desk_id_t id, probe_t *p, uint32_t op, uint64_t arg,
                      uint64_t arg2)
{
    ck_assert_int_eq(rt_post(rt, id, &(rt_msg_t){.type = op, .arg = arg, .arg2 = arg2}), 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    ck_assert_int_eq(sem_timedwait(&p->done, &ts), 0);
    return p->rc;
}

static _Atomic int payload_frees;

static void payload_free(void *ptr)
{
    atomic_fetch_add(&payload_frees, 1);
    free(ptr);
}

/* ---- messages ------------------------------------------------------------------------------ */

typedef struct {
    rt_t *rt;
    rt_desk_id_t *ids;
    int ndesks;
    unsigned sender;
    int count;
} poster_arg_t;

static void *poster_main(void *arg)
{
    poster_arg_t *a = arg;
    for (int i = 1; i <= a->count; i++)
        for (int d = 0; d < a->ndesks; d++) {
            uint64_t v = ((uint64_t)a->sender << 32) | (uint64_t)i;
            if (rt_post(a->rt, a->ids[d], &(rt_msg_t){.type = OP_SEQ, .arg = v}) != 0)
                abort();
        }
    return NULL;
}

START_TEST(test_runtime_post_from_many_threads_keeps_sender_order)
{
    enum { NDESKS = 4, COUNT = 10000 };
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    probe_t *p[NDESKS];
    rt_desk_id_t ids[NDESKS];
    for (int d = 0; d < NDESKS; d++) {
        p[d] = probe_new();
        ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p[d], d, &ids[d]), 0);
    }
    pthread_t th[SENDERS];
    poster_arg_t args[SENDERS];
    for (unsigned s = 0; s < SENDERS; s++) {
        args[s] = (poster_arg_t){rt, ids, NDESKS, s, COUNT};
        pthread_create(&th[s], NULL, poster_main, &args[s]);
    }
    for (unsigned s = 0; s < SENDERS; s++)
        pthread_join(th[s], NULL);
    for (int d = 0; d < NDESKS; d++)
        ck_assert(WAIT_UNTIL(atomic_load(&p[d]->received) == SENDERS * COUNT));
    ck_assert_int_eq(rt_stop(rt), 0); /* joins: the desks' state is ours to read now */
    for (int d = 0; d < NDESKS; d++) {
        ck_assert_int_eq(p[d]->order_errors, 0);
        for (unsigned s = 0; s < SENDERS; s++)
            ck_assert_uint_eq(p[d]->last_seq[s], COUNT);
        ck_assert_int_eq(atomic_load(&p[d]->received), SENDERS * COUNT);
    }
    ck_assert_uint_eq(rt_messages_delivered(rt), (uint64_t)NDESKS * SENDERS * COUNT);
    ck_assert_uint_eq(rt_dropped_messages(rt), 0);
    rt_destroy(rt);
    for (int d = 0; d < NDESKS; d++)
        probe_free(p[d]);
}
END_TEST

/* Ping-pong between desks on the same worker (private ring) and across workers (outboxes). */
typedef struct {
    rt_t *rt;
    rt_desk_id_t *ids;
    unsigned sender;
    int count;
} batch_poster_t;

static void *batch_poster_main(void *arg)
{
    enum { B = 300 }; /* not a multiple of the runtime's 256-message chunks */
    batch_poster_t *a = arg;
    rt_desk_id_t to[B];
    rt_msg_t msgs[B];
    int seq = 1;
    while (seq <= a->count) {
        size_t n = 0;
        /* Interleave the four desks (two per worker) the way a real producer would. */
        for (; n < B && seq <= a->count; seq++)
            for (int d = 0; d < 4; d++, n++) {
                to[n] = a->ids[d];
                msgs[n] =
                    (rt_msg_t){.type = OP_SEQ, .arg = ((uint64_t)a->sender << 32) | (uint64_t)seq};
            }
        if (rt_post_batch(a->rt, to, msgs, n) != 0)
            abort();
    }
    return NULL;
}

START_TEST(test_runtime_post_batch_keeps_order_and_counts)
{
    enum { COUNT = 5000 };
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    probe_t *p[4];
    rt_desk_id_t ids[4];
    for (int d = 0; d < 4; d++) {
        p[d] = probe_new();
        ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p[d], d, &ids[d]), 0);
    }
    pthread_t th[2];
    batch_poster_t args[2];
    for (unsigned s = 0; s < 2; s++) {
        args[s] = (batch_poster_t){rt, ids, s, COUNT};
        pthread_create(&th[s], NULL, batch_poster_main, &args[s]);
    }
    for (unsigned s = 0; s < 2; s++)
        pthread_join(th[s], NULL);
    for (int d = 0; d < 4; d++)
        ck_assert(WAIT_UNTIL(atomic_load(&p[d]->received) == 2 * COUNT));
    /* Bad entries are dropped one by one; the good ones in the same batch still go. */
    atomic_store(&payload_frees, 0);
    rt_desk_id_t to[3] = {ids[0], 0, ids[1]};
    rt_msg_t msgs[3] = {{.type = OP_SEQ, .arg = 1ull << 40},
                        {.type = OP_SEQ, .ptr = malloc(8), .free_fn = payload_free},
                        {.type = RT_MSG_TIMER, .ptr = malloc(8), .free_fn = payload_free}};
    ck_assert_int_eq(rt_post_batch(rt, to, msgs, 3), -EINVAL);
    ck_assert_int_eq(atomic_load(&payload_frees), 2);
    ck_assert_int_eq(rt_post_batch(rt, NULL, NULL, 0), 0);
    ck_assert(WAIT_UNTIL(atomic_load(&p[0]->received) == 2 * COUNT + 1));
    ck_assert_int_eq(rt_stop(rt), 0);
    for (int d = 0; d < 4; d++) {
        ck_assert_int_eq(p[d]->order_errors, d == 0 ? 1 : 0); /* the 1 << 40 "sender" */
        ck_assert_uint_eq(p[d]->last_seq[0], COUNT);
        ck_assert_uint_eq(p[d]->last_seq[1], COUNT);
    }
    ck_assert_uint_eq(rt_dropped_messages(rt), 2);
    msgs[0].ptr = malloc(8);
    msgs[0].free_fn = payload_free;
    ck_assert_int_eq(rt_post_batch(rt, to, msgs, 1), -ESHUTDOWN);
    ck_assert_int_eq(atomic_load(&payload_frees), 3);
    rt_destroy(rt);
    for (int d = 0; d < 4; d++)
        probe_free(p[d]);
}
END_TEST

START_TEST(test_runtime_ping_pong_same_and_cross_worker_counts_exact)
{
    enum { HOPS = 20000 };
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    _Atomic long total = 0;
    probe_t *p[4];
    rt_desk_id_t ids[4];
    int placement[4] = {0, 0, 0, 1}; /* pair 0-1 on worker 0; pair 2-3 across workers */
    for (int d = 0; d < 4; d++) {
        p[d] = probe_new();
        p[d]->ping_total = &total;
        ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p[d], placement[d], &ids[d]), 0);
    }
    ck_assert_int_eq(rt_post(rt, ids[1], &(rt_msg_t){.type = OP_PING, .arg = HOPS, .arg2 = ids[0]}),
                     0);
    ck_assert_int_eq(rt_post(rt, ids[3], &(rt_msg_t){.type = OP_PING, .arg = HOPS, .arg2 = ids[2]}),
                     0);
    ck_assert(WAIT_UNTIL(atomic_load(&total) == 2 * (HOPS + 1)));
    usleep(20000);
    ck_assert_int_eq(atomic_load(&total), 2 * (HOPS + 1));
    ck_assert_uint_eq(rt_dropped_messages(rt), 0);
    rt_destroy(rt);
    for (int d = 0; d < 4; d++)
        probe_free(p[d]);
}
END_TEST

START_TEST(test_runtime_payload_freed_after_delivery_and_on_error)
{
    rt_t *rt;
    ck_assert_int_eq(rt_create(1, &rt), 0);
    probe_t *p = probe_new();
    rt_desk_id_t id;
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p, 0, &id), 0);
    atomic_store(&payload_frees, 0);
    ck_assert_int_eq(
        rt_post(rt, id,
                &(rt_msg_t){.type = OP_SEQ, .arg = 1, .ptr = malloc(16), .free_fn = payload_free}),
        0);
    ck_assert(WAIT_UNTIL(atomic_load(&payload_frees) == 1));
    /* A runtime type, a zero id and an id naming a worker that does not exist are refused,
     * the payload is still freed, and each refusal counts as a drop. */
    ck_assert_int_eq(
        rt_post(rt, id,
                &(rt_msg_t){.type = RT_MSG_TIMER, .ptr = malloc(8), .free_fn = payload_free}),
        -EINVAL);
    ck_assert_int_eq(
        rt_post(rt, 0, &(rt_msg_t){.type = OP_SEQ, .ptr = malloc(8), .free_fn = payload_free}),
        -EINVAL);
    ck_assert_int_eq(rt_post(rt, (5ull << 56) | 1, &(rt_msg_t){.type = OP_SEQ}), -EINVAL);
    ck_assert_int_eq(atomic_load(&payload_frees), 3);
    ck_assert_uint_eq(rt_dropped_messages(rt), 3);
    ck_assert_int_eq(rt_stop(rt), 0);
    ck_assert_int_eq(
        rt_post(rt, id, &(rt_msg_t){.type = OP_SEQ, .ptr = malloc(8), .free_fn = payload_free}),
        -ESHUTDOWN);
    ck_assert_int_eq(atomic_load(&payload_frees), 4);
    ck_assert_uint_eq(rt_dropped_messages(rt), 4);
    rt_destroy(rt);
    probe_free(p);
}
END_TEST

/* ---- ids ----------------------------------------------------------------------------------- */

START_TEST(test_runtime_message_to_dead_desk_dropped_and_counted)
{
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    probe_t *p = probe_new();
    rt_desk_id_t id;
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p, 1, &id), 0);
    ck_assert_uint_eq(rt_desks(rt), 1);
    ck_assert_int_eq(probe_call(rt, id, p, OP_DESTROY, 0, 0), 0);
    ck_assert_int_eq(atomic_load(&p->destroyed), 1);
    ck_assert_uint_eq(rt_desks(rt), 0);
    atomic_store(&payload_frees, 0);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(
            rt_post(rt, id,
                    &(rt_msg_t){.type = OP_SEQ, .ptr = malloc(32), .free_fn = payload_free}),
            0);
    ck_assert_int_eq(rt_post_destroy(rt, id), 0);
    ck_assert(WAIT_UNTIL(rt_dropped_messages(rt) == 6));
    ck_assert_int_eq(atomic_load(&payload_frees), 5);
    ck_assert_int_eq(atomic_load(&p->received), 1); /* only OP_DESTROY */
    rt_destroy(rt);
    ck_assert_int_eq(atomic_load(&p->destroyed), 1);
    probe_free(p);
}
END_TEST

START_TEST(test_runtime_stale_id_after_slot_reuse_is_dropped)
{
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    probe_t *a = probe_new(), *b = probe_new();
    rt_desk_id_t ida, idb;
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, a, 0, &ida), 0);
    ck_assert_int_eq(rt_post_destroy(rt, ida), 0);
    ck_assert(WAIT_UNTIL(atomic_load(&a->destroyed) == 1));
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, b, 0, &idb), 0);
    /* Same worker and slot, another generation. */
    ck_assert_uint_eq(ida >> 32, idb >> 32);
    ck_assert_uint_ne(ida, idb);
    ck_assert_int_eq(rt_post(rt, ida, &(rt_msg_t){.type = OP_SEQ, .arg = 1}), 0);
    ck_assert_int_eq(probe_call(rt, idb, b, OP_INFO, 0, 0), 0);
    ck_assert(WAIT_UNTIL(rt_dropped_messages(rt) == 1));
    ck_assert_int_eq(atomic_load(&b->received), 1);
    ck_assert_int_eq(atomic_load(&a->received), 0);
    rt_destroy(rt);
    probe_free(a);
    probe_free(b);
}
END_TEST

static _Atomic int churn_destroyed;

static void churn_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    (void)desk;
    (void)state;
    (void)msg;
}

static void churn_on_destroy(rt_desk_t *desk, void *state)
{
    (void)desk;
    free(state);
    atomic_fetch_add(&churn_destroyed, 1);
}

static const rt_desk_ops_t churn_ops = {churn_on_message, churn_on_destroy};

typedef struct {
    rt_t *rt;
    rt_desk_id_t *ids;
    int n;
} creator_arg_t;

static void *creator_main(void *arg)
{
    creator_arg_t *c = arg;
    for (int i = 0; i < c->n; i++)
        if (rt_desk_create(c->rt, &churn_ops, malloc(24), -1, &c->ids[i]) != 0)
            abort();
    return NULL;
}

START_TEST(test_runtime_create_destroy_100k_desks_leaves_nothing)
{
    enum { N = 100000, THREADS = 2 };
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    atomic_store(&churn_destroyed, 0);
    rt_desk_id_t *ids = calloc(N, sizeof(*ids));
    pthread_t th[THREADS];
    creator_arg_t args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t] = (creator_arg_t){rt, ids + t * (N / THREADS), N / THREADS};
        pthread_create(&th[t], NULL, creator_main, &args[t]);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    ck_assert_uint_eq(rt_desks(rt), N);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(rt_post_destroy(rt, ids[i]), 0);
    ck_assert(WAIT_UNTIL(rt_desks(rt) == 0));
    ck_assert_int_eq(atomic_load(&churn_destroyed), N);
    /* Every slot is free again: a second round reuses them and ids never repeat. */
    for (int i = 0; i < 1000; i++) {
        rt_desk_id_t id;
        ck_assert_int_eq(rt_desk_create(rt, &churn_ops, malloc(24), -1, &id), 0);
        ck_assert_uint_ne(id, ids[i]);
    }
    ck_assert_uint_eq(rt_desks(rt), 1000);
    ck_assert_uint_eq(rt_dropped_messages(rt), 0);
    rt_destroy(rt); /* the 1000 live desks are destroyed by the stop */
    ck_assert_int_eq(atomic_load(&churn_destroyed), N + 1000);
    free(ids);
}
END_TEST

/* ---- timers -------------------------------------------------------------------------------- */

START_TEST(test_runtime_timers_arrive_in_deadline_then_arming_order)
{
    rt_t *rt;
    ck_assert_int_eq(rt_create(1, &rt), 0);
    probe_t *p = probe_new();
    rt_desk_id_t id;
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p, 0, &id), 0);
    ck_assert_int_eq(probe_call(rt, id, p, OP_ARM_PATTERN, 0, 0), 0);
    ck_assert(WAIT_UNTIL(atomic_load(&p->nfired) == 16));
    uint64_t want[] = {4, 1, 3, 5, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 2, 0};
    ck_assert_int_eq(probe_call(rt, id, p, OP_INFO, 0, 0), 0); /* orders reads after writes */
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(p->fired[i], want[i]);
    ck_assert_int_eq(probe_call(rt, id, p, OP_ARM, (uint64_t)-1, 0), -EINVAL);
    rt_destroy(rt);
    probe_free(p);
}
END_TEST

START_TEST(test_runtime_cancelled_timer_never_arrives)
{
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    probe_t *p = probe_new(), *other = probe_new();
    rt_desk_id_t id, oid;
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p, 1, &id), 0);
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, other, 1, &oid), 0);
    ck_assert_int_eq(probe_call(rt, id, p, OP_ARM, 2000, 1), 0);
    rt_timer_id_t t1 = p->timer_id;
    ck_assert_int_eq(probe_call(rt, id, p, OP_ARM, 20, 2), 0);
    ck_assert_int_eq(probe_call(rt, id, p, OP_CANCEL, t1, 0), 0);
    ck_assert_int_eq(probe_call(rt, id, p, OP_CANCEL, t1, 0), -ENOENT); /* twice */
    ck_assert_int_eq(probe_call(rt, id, p, OP_CANCEL, 0, 0), -ENOENT);
    ck_assert_int_eq(probe_call(rt, id, p, OP_CANCEL, 12345678ull << 32 | 1, 0), -ENOENT);
    /* Two timers due at the same instant: the first one's handler cancels the second, which
     * therefore never arrives even though it was already due. */
    ck_assert_int_eq(probe_call(rt, id, p, OP_ARM_PAIR, 0, 0), 0);
    /* Another desk on the same worker cannot cancel this desk's timer. */
    ck_assert_int_eq(probe_call(rt, oid, other, OP_CANCEL, p->timer_id, 0), -ENOENT);
    ck_assert_int_eq(probe_call(rt, id, p, OP_ARM, 60, 5), 0);
    ck_assert(WAIT_UNTIL(atomic_load(&p->nfired) >= 3));
    usleep(50000);
    ck_assert_int_eq(probe_call(rt, id, p, OP_INFO, 0, 0), 1);
    ck_assert_int_eq(atomic_load(&p->nfired), 3);
    ck_assert_uint_eq(p->fired[0], 2);
    ck_assert_uint_eq(p->fired[1], 3);
    ck_assert_uint_eq(p->fired[2], 5);
    /* A delivered timer cannot be cancelled any more. */
    ck_assert_int_eq(probe_call(rt, id, p, OP_CANCEL, p->timer_id, 0), -ENOENT);
    rt_destroy(rt);
    probe_free(p);
    probe_free(other);
}
END_TEST

START_TEST(test_runtime_destroyed_desk_timers_are_cancelled)
{
    rt_t *rt;
    ck_assert_int_eq(rt_create(1, &rt), 0);
    probe_t *p = probe_new();
    rt_desk_id_t id;
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p, 0, &id), 0);
    ck_assert_int_eq(probe_call(rt, id, p, OP_ARM_DESTROY, 0, 0), 0);
    ck_assert_int_eq(atomic_load(&p->destroyed), 1);
    usleep(50000);
    ck_assert_int_eq(atomic_load(&p->nfired), 0);
    ck_assert_uint_eq(rt_dropped_messages(rt), 0); /* nothing was sent to the dead id */
    rt_destroy(rt);
    probe_free(p);
}
END_TEST

/* ---- rounds -------------------------------------------------------------------------------- */

START_TEST(test_runtime_round_discipline)
{
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    probe_t *p = probe_new();
    rt_desk_id_t id;
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p, 1, &id), 0);
    ck_assert_int_eq(probe_call(rt, id, p, OP_END, RT_ROUND_COMPLETED, 0), -EINVAL);
    ck_assert_int_eq(probe_call(rt, id, p, OP_HUMANS, 2, 0), 0);
    ck_assert_uint_eq(rt_humans_seated(rt), 2);
    ck_assert_uint_eq(rt_human_desks(rt), 0); /* humans seated but no round */
    ck_assert_int_eq(probe_call(rt, id, p, OP_BEGIN, 0, 0), 0);
    ck_assert_uint_eq(rt_human_desks(rt), 1);
    ck_assert_uint_eq(rt_desks_in_round(rt), 1);
    ck_assert_int_eq(probe_call(rt, id, p, OP_BEGIN, 0, 0), -EALREADY);
    ck_assert_int_eq(probe_call(rt, id, p, OP_END, RT_ROUND_ABANDONED, 0), -EINVAL);
    ck_assert_int_eq(probe_call(rt, id, p, OP_INFO, 0, 0), 1);
    ck_assert(p->in_round);
    ck_assert_uint_eq(p->humans, 2);
    /* From a thread that is not the desk's worker, every desk call is refused. */
    ck_assert_int_eq(rt_desk_begin_round(p->self), -EPERM);
    ck_assert_int_eq(rt_desk_end_round(p->self, RT_ROUND_COMPLETED), -EPERM);
    ck_assert_int_eq(rt_desk_set_humans(p->self, 0), -EPERM);
    ck_assert_int_eq(rt_desk_timer_arm(p->self, 1, 0, NULL), -EPERM);
    ck_assert_int_eq(rt_desk_destroy(p->self), -EPERM);
    ck_assert_int_eq(probe_call(rt, id, p, OP_END, RT_ROUND_COMPLETED, 0), 0);
    ck_assert_int_eq(probe_call(rt, id, p, OP_INFO, 0, 0), 1);
    ck_assert(!p->in_round);
    ck_assert_uint_eq(rt_human_desks(rt), 0);
    ck_assert_uint_eq(rt_rounds(rt, RT_ROUND_COMPLETED), 1);
    /* A round running when intake stops may finish; no new one may begin. */
    ck_assert_int_eq(probe_call(rt, id, p, OP_BEGIN, 0, 0), 0);
    ck_assert(!rt_intake_stopped(rt));
    rt_stop_intake(rt);
    rt_stop_intake(rt);
    ck_assert(rt_intake_stopped(rt));
    /* Until each worker has told its desks the intake stopped, it counts as a human desk too
     * (a drain never sees 0 before every desk reacted); then only the round is left. */
    ck_assert_uint_ge(rt_human_desks(rt), 1);
    for (int i = 0; i < 1000 && rt_human_desks(rt) != 1; i++)
        usleep(1000);
    ck_assert_uint_eq(rt_human_desks(rt), 1);
    ck_assert_int_eq(probe_call(rt, id, p, OP_END, RT_ROUND_VOIDED, 0), 0);
    ck_assert_uint_eq(rt_human_desks(rt), 0);
    ck_assert_int_eq(probe_call(rt, id, p, OP_BEGIN, 0, 0), -ESHUTDOWN);
    ck_assert_uint_eq(rt_desks_in_round(rt), 0);
    ck_assert_uint_eq(rt_rounds(rt, RT_ROUND_VOIDED), 1);
    ck_assert_int_eq(atomic_load(&p->intake_msgs), 1);
    rt_destroy(rt);
    probe_free(p);
}
END_TEST

START_TEST(test_runtime_intake_stop_tells_every_live_desk_once)
{
    enum { N = 500 };
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    probe_t *p[N];
    rt_desk_id_t ids[N];
    for (int i = 0; i < N; i++) {
        p[i] = probe_new();
        ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p[i], -1, &ids[i]), 0);
    }
    ck_assert_int_eq(probe_call(rt, ids[7], p[7], OP_DESTROY, 0, 0), 0);
    rt_stop_intake(rt);
    rt_stop_intake(rt);
    for (int i = 0; i < N; i++)
        ck_assert(WAIT_UNTIL(atomic_load(&p[i]->intake_msgs) == (i == 7 ? 0 : 1)));
    usleep(20000);
    int total = 0;
    for (int i = 0; i < N; i++)
        total += atomic_load(&p[i]->intake_msgs);
    ck_assert_int_eq(total, N - 1);
    rt_destroy(rt);
    for (int i = 0; i < N; i++)
        probe_free(p[i]);
}
END_TEST

/* Flipper desks: each message carries an op chosen by the poster; the final "settle" message
 * puts every desk into a known state. */
enum { FLIP_OP = RT_MSG_USER + 100, FLIP_SETTLE };

typedef struct {
    _Atomic int settled;
} flip_t;

static void flip_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    flip_t *f = state;
    if (msg->type == FLIP_OP) {
        switch (msg->arg % 3) {
        case 0:
            rt_desk_begin_round(desk); /* may be refused: already in a round */
            break;
        case 1:
            rt_desk_end_round(desk, RT_ROUND_COMPLETED); /* may be refused: no round */
            break;
        case 2:
            rt_desk_set_humans(desk, (unsigned)(msg->arg2 % 4));
            break;
        }
    } else if (msg->type == FLIP_SETTLE) {
        /* arg: wanted in_round, arg2: wanted humans. */
        rt_desk_set_humans(desk, (unsigned)msg->arg2);
        if (msg->arg && !rt_desk_in_round(desk))
            rt_desk_begin_round(desk);
        if (!msg->arg && rt_desk_in_round(desk))
            rt_desk_end_round(desk, RT_ROUND_COMPLETED);
        atomic_fetch_add(&f->settled, 1);
    }
}

static const rt_desk_ops_t flip_ops = {flip_on_message, NULL};

typedef struct {
    rt_t *rt;
    rt_desk_id_t *ids;
    int n, count;
    unsigned seed;
} flipper_arg_t;

static void *flipper_main(void *arg)
{
    flipper_arg_t *a = arg;
    for (int i = 0; i < a->count; i++) {
        int d = rand_r(&a->seed) % a->n;
        rt_msg_t m = {
            .type = FLIP_OP, .arg = (uint64_t)rand_r(&a->seed), .arg2 = (uint64_t)rand_r(&a->seed)};
        if (rt_post(a->rt, a->ids[d], &m) != 0)
            abort();
    }
    return NULL;
}

typedef struct {
    rt_t *rt;
    _Atomic bool stop;
    int bad;
    uint64_t max_n;
} watcher_arg_t;

static void *watcher_main(void *arg)
{
    watcher_arg_t *w = arg;
    while (!atomic_load(&w->stop)) {
        uint64_t hd = rt_human_desks(w->rt), ir = rt_desks_in_round(w->rt);
        if (hd > w->max_n || ir > w->max_n || rt_humans_seated(w->rt) > 3 * w->max_n)
            w->bad++;
        usleep(100);
    }
    return NULL;
}

START_TEST(test_runtime_counters_exact_under_concurrency)
{
    enum { N = 200, FLIPS = 20000, THREADS = 3 };
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    flip_t *f = calloc(N, sizeof(*f));
    rt_desk_id_t ids[N];
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(rt_desk_create(rt, &flip_ops, &f[i], -1, &ids[i]), 0);
    watcher_arg_t wa = {.rt = rt, .max_n = N};
    pthread_t wt, th[THREADS];
    pthread_create(&wt, NULL, watcher_main, &wa);
    flipper_arg_t fa[THREADS];
    for (int t = 0; t < THREADS; t++) {
        fa[t] = (flipper_arg_t){rt, ids, N, FLIPS, 1234u + (unsigned)t};
        pthread_create(&th[t], NULL, flipper_main, &fa[t]);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    uint64_t want_hd = 0, want_ir = 0, want_h = 0;
    for (int i = 0; i < N; i++) {
        uint64_t in_round = i % 3 != 0, humans = (uint64_t)(i % 4);
        want_ir += in_round;
        want_h += humans;
        want_hd += in_round && humans > 0;
        ck_assert_int_eq(
            rt_post(rt, ids[i], &(rt_msg_t){.type = FLIP_SETTLE, .arg = in_round, .arg2 = humans}),
            0);
    }
    for (int i = 0; i < N; i++)
        ck_assert(WAIT_UNTIL(atomic_load(&f[i].settled) == 1));
    atomic_store(&wa.stop, true);
    pthread_join(wt, NULL);
    ck_assert_int_eq(wa.bad, 0);
    ck_assert_uint_eq(rt_desks(rt), N);
    ck_assert_uint_eq(rt_desks_in_round(rt), want_ir);
    ck_assert_uint_eq(rt_human_desks(rt), want_hd);
    ck_assert_uint_eq(rt_humans_seated(rt), want_h);
    ck_assert(WAIT_UNTIL(rt_messages_delivered(rt) == (uint64_t)THREADS * FLIPS + N));
    /* Stopping the runtime abandons the open rounds and brings every counter to zero. */
    ck_assert_int_eq(rt_stop(rt), 0);
    ck_assert_uint_eq(rt_rounds(rt, RT_ROUND_ABANDONED), want_ir);
    ck_assert_uint_eq(rt_desks(rt), 0);
    ck_assert_uint_eq(rt_desks_in_round(rt), 0);
    ck_assert_uint_eq(rt_human_desks(rt), 0);
    ck_assert_uint_eq(rt_humans_seated(rt), 0);
    rt_destroy(rt);
    free(f);
}
END_TEST

/* ---- jobs ---------------------------------------------------------------------------------- */

typedef struct {
    _Atomic int ran;
    int worker_seen[64];
    int order_errors;
    int next;
    int stop_rc;
    rt_t *rt;
} job_state_t;

typedef struct {
    job_state_t *s;
    int index;
    unsigned want_worker;
} job_arg_t;

static void job_record(rt_t *rt, void *arg)
{
    job_arg_t *a = arg;
    if (rt_current_worker(rt) != (int)a->want_worker)
        a->s->order_errors++;
    if (a->index != a->s->next++)
        a->s->order_errors++;
    atomic_fetch_add(&a->s->ran, 1);
}

static void job_try_stop(rt_t *rt, void *arg)
{
    job_state_t *s = arg;
    s->stop_rc = rt_stop(rt);
    atomic_fetch_add(&s->ran, 1);
}

static void job_hop(rt_t *rt, void *arg)
{
    /* Runs on worker 0 and posts the next job to worker 1 from a worker thread. */
    job_arg_t *a = arg;
    if (rt_current_worker(rt) != 0 || rt_post_job(rt, 1, job_record, a) != 0)
        a->s->order_errors++;
}

START_TEST(test_runtime_jobs_run_on_their_worker_in_order)
{
    enum { N = 1000 };
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    ck_assert_int_eq(rt_current_worker(rt), -1);
    job_state_t s = {.rt = rt};
    job_arg_t *args = calloc(N + 1, sizeof(*args));
    for (int i = 0; i < N; i++) {
        args[i] = (job_arg_t){&s, i, 1};
        ck_assert_int_eq(rt_post_job(rt, 1, job_record, &args[i]), 0);
    }
    ck_assert(WAIT_UNTIL(atomic_load(&s.ran) == N));
    args[N] = (job_arg_t){&s, N, 1};
    ck_assert_int_eq(rt_post_job(rt, 0, job_hop, &args[N]), 0);
    ck_assert(WAIT_UNTIL(atomic_load(&s.ran) == N + 1));
    ck_assert_int_eq(rt_post_job(rt, 0, job_try_stop, &s), 0);
    ck_assert(WAIT_UNTIL(atomic_load(&s.ran) == N + 2));
    ck_assert_int_eq(s.stop_rc, -EDEADLK);
    ck_assert_int_eq(rt_post_job(rt, 2, job_record, &args[0]), -EINVAL);
    ck_assert_int_eq(rt_post_job(rt, 0, NULL, NULL), -EINVAL);
    ck_assert_ptr_nonnull(rt_worker_base(rt, 1));
    ck_assert_ptr_null(rt_worker_base(rt, 2));
    rt_destroy(rt);
    ck_assert_int_eq(s.order_errors, 0);
    free(args);
}
END_TEST

/* ---- stop ---------------------------------------------------------------------------------- */

typedef struct {
    rt_desk_id_t peer;
    _Atomic int *destroyed;
} stopper_t;

static void stopper_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    (void)state;
    if (msg->type == OP_BEGIN) {
        rt_desk_set_humans(desk, 1);
        rt_desk_begin_round(desk);
        rt_desk_timer_arm(desk, 3600 * 1000, 0, NULL);
    }
}

static void stopper_on_destroy(rt_desk_t *desk, void *state)
{
    stopper_t *s = state;
    /* Posting while the runtime stops must not leak: the payload is delivered or freed. */
    rt_post(rt_desk_rt(desk), s->peer,
            &(rt_msg_t){.type = OP_SEQ, .ptr = malloc(64), .free_fn = payload_free});
    atomic_fetch_add(s->destroyed, 1);
    free(s);
}

static const rt_desk_ops_t stopper_ops = {stopper_on_message, stopper_on_destroy};

START_TEST(test_runtime_stop_destroys_live_desks_on_their_threads)
{
    enum { N = 1000 };
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    _Atomic int destroyed = 0;
    atomic_store(&payload_frees, 0);
    rt_desk_id_t prev = 0;
    for (int i = 0; i < N; i++) {
        stopper_t *s = calloc(1, sizeof(*s));
        s->peer = prev;
        s->destroyed = &destroyed;
        ck_assert_int_eq(rt_desk_create(rt, &stopper_ops, s, -1, &prev), 0);
        if (i % 2 == 0)
            ck_assert_int_eq(rt_post(rt, prev, &(rt_msg_t){.type = OP_BEGIN}), 0);
    }
    ck_assert(WAIT_UNTIL(rt_human_desks(rt) == N / 2));
    /* Queue more work that the stop will find pending. */
    for (int i = 0; i < 2000; i++)
        rt_post(rt, prev, &(rt_msg_t){.type = OP_SEQ, .ptr = malloc(16), .free_fn = payload_free});
    ck_assert_int_eq(rt_stop(rt), 0);
    ck_assert_int_eq(rt_stop(rt), 0);
    ck_assert_int_eq(atomic_load(&destroyed), N);
    ck_assert_uint_eq(rt_desks(rt), 0);
    ck_assert_uint_eq(rt_human_desks(rt), 0);
    ck_assert_uint_eq(rt_humans_seated(rt), 0);
    ck_assert_uint_eq(rt_rounds(rt, RT_ROUND_ABANDONED), N / 2);
    ck_assert_int_eq(atomic_load(&payload_frees), 2000 + N);
    rt_desk_id_t id;
    ck_assert_int_eq(rt_desk_create(rt, &stopper_ops, NULL, 0, &id), -ESHUTDOWN);
    ck_assert_int_eq(rt_post_job(rt, 0, job_record, NULL), -ESHUTDOWN);
    rt_destroy(rt);
    rt_destroy(NULL);
}
END_TEST

typedef struct {
    rt_t *rt;
    rt_desk_id_t to;
    _Atomic bool stop;
    long attempts;
    long created;
    _Atomic int destroyed;
} racer_t;

static void *racer_post_main(void *arg)
{
    racer_t *r = arg;
    while (!atomic_load(&r->stop)) {
        rt_post(r->rt, r->to,
                &(rt_msg_t){.type = OP_SEQ, .ptr = malloc(8), .free_fn = payload_free});
        r->attempts++;
    }
    return NULL;
}

static void *racer_create_main(void *arg)
{
    racer_t *r = arg;
    while (!atomic_load(&r->stop)) {
        stopper_t *s = calloc(1, sizeof(*s));
        s->destroyed = &r->destroyed;
        rt_desk_id_t id;
        if (rt_desk_create(r->rt, &stopper_ops, s, -1, &id) == 0)
            r->created++;
        else
            free(s);
    }
    return NULL;
}

START_TEST(test_runtime_stop_racing_posts_and_creates_loses_nothing)
{
    rt_t *rt;
    ck_assert_int_eq(rt_create(2, &rt), 0);
    probe_t *p = probe_new();
    rt_desk_id_t id;
    ck_assert_int_eq(rt_desk_create(rt, &probe_ops, p, 1, &id), 0);
    atomic_store(&payload_frees, 0);
    racer_t posters[2] = {{.rt = rt, .to = id}, {.rt = rt, .to = id}};
    racer_t creator = {.rt = rt};
    pthread_t th[3];
    pthread_create(&th[0], NULL, racer_post_main, &posters[0]);
    pthread_create(&th[1], NULL, racer_post_main, &posters[1]);
    pthread_create(&th[2], NULL, racer_create_main, &creator);
    usleep(50000);
    ck_assert_int_eq(rt_stop(rt), 0);
    usleep(5000);
    for (int i = 0; i < 2; i++)
        atomic_store(&posters[i].stop, true);
    atomic_store(&creator.stop, true);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    /* Every stopper desk posts one payload to id 0 from on_destroy (refused, freed). */
    ck_assert_int_eq(atomic_load(&creator.destroyed), creator.created);
    ck_assert_int_eq(atomic_load(&payload_frees),
                     posters[0].attempts + posters[1].attempts + creator.created);
    ck_assert_uint_eq(rt_desks(rt), 0);
    rt_destroy(rt);
    probe_free(p);
}
END_TEST

START_TEST(test_runtime_bad_arguments_are_refused)
{
    rt_t *rt = NULL;
    ck_assert_int_eq(rt_create(0, &rt), -EINVAL);
    ck_assert_int_eq(rt_create(RT_MAX_WORKERS + 1, &rt), -EINVAL);
    ck_assert_ptr_null(rt);
    ck_assert_int_eq(rt_create(1, &rt), 0);
    ck_assert_uint_eq(rt_workers(rt), 1);
    rt_desk_id_t id;
    ck_assert_int_eq(rt_desk_create(rt, NULL, NULL, 0, &id), -EINVAL);
    rt_desk_ops_t no_handler = {NULL, NULL};
    ck_assert_int_eq(rt_desk_create(rt, &no_handler, NULL, 0, &id), -EINVAL);
    ck_assert_int_eq(rt_post(rt, 1, NULL), -EINVAL);
    ck_assert_int_eq(rt_post_destroy(rt, 0), -EINVAL);
    ck_assert(rt_desk_overhead_bytes() <= 64);
    rt_destroy(rt);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("messages");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_runtime_post_from_many_threads_keeps_sender_order);
    tcase_add_test(tc, test_runtime_post_batch_keeps_order_and_counts);
    tcase_add_test(tc, test_runtime_ping_pong_same_and_cross_worker_counts_exact);
    tcase_add_test(tc, test_runtime_payload_freed_after_delivery_and_on_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("ids");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_runtime_message_to_dead_desk_dropped_and_counted);
    tcase_add_test(tc, test_runtime_stale_id_after_slot_reuse_is_dropped);
    tcase_add_test(tc, test_runtime_create_destroy_100k_desks_leaves_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("timers");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_runtime_timers_arrive_in_deadline_then_arming_order);
    tcase_add_test(tc, test_runtime_cancelled_timer_never_arrives);
    tcase_add_test(tc, test_runtime_destroyed_desk_timers_are_cancelled);
    suite_add_tcase(s, tc);
    tc = tcase_create("rounds");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_runtime_round_discipline);
    tcase_add_test(tc, test_runtime_intake_stop_tells_every_live_desk_once);
    tcase_add_test(tc, test_runtime_counters_exact_under_concurrency);
    suite_add_tcase(s, tc);
    tc = tcase_create("jobs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_runtime_jobs_run_on_their_worker_in_order);
    suite_add_tcase(s, tc);
    tc = tcase_create("stop");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_runtime_stop_destroys_live_desks_on_their_threads);
    tcase_add_test(tc, test_runtime_stop_racing_posts_and_creates_loses_nothing);
    tcase_add_test(tc, test_runtime_bad_arguments_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
