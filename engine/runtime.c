/*
 * runtime -- the desk-actor runtime. See runtime.h for the contract; this comment explains the
 * machinery.
 *
 * Queues. Every worker has one inbox: a growable array protected by a mutex. A poster appends
 * under the mutex; the worker swaps the whole array with an empty one of its own and processes
 * the batch without the lock, so the lock is held for an append or a swap, never for delivery.
 * The worker is woken through an eventfd, but only when it may be asleep: `wake_pending` (under
 * the inbox mutex) is set by the first poster after the worker last found its inbox empty, and
 * only that poster writes the eventfd. While a worker is busy, posting costs a lock and a copy.
 *
 * Posts made on a worker thread avoid the shared inbox: to a desk on the same worker they go to
 * a private ring (no lock), to another worker they collect in a private per-target outbox that
 * is handed over in one locked append (often a pointer swap) after each batch. Order from one
 * sender to one desk is FIFO on every path.
 *
 * Desks live in per-worker slot tables made of fixed chunks that never move, so a slot's address
 * is stable and another thread may create a desk in a free slot while the worker reads other
 * slots. A slot's 32-bit generation is odd while a desk lives in it and even while it is free;
 * the generation is part of the id, so an old id never matches a slot's new occupant. Creation
 * (any thread) fills the slot and then publishes the odd generation with a release store;
 * the worker resolves ids with an acquire load. Free slots form a LIFO list under a per-worker
 * mutex shared by creators and the worker.
 *
 * Timers live in a per-worker binary heap ordered by (deadline, arming sequence); one libevent
 * timer is armed at the earliest deadline. A due timer is delivered straight to its desk as an
 * RT_MSG_TIMER message, so a cancel that happens before delivery always wins.
 */
#include "runtime.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "evthreads.h"
#include "log.h"
#include "xmalloc.h"

#define RT_SLOT_BITS 24
#define RT_MAX_SLOTS (1u << RT_SLOT_BITS)
#define RT_CHUNK_BITS 12
#define RT_CHUNK_SLOTS (1u << RT_CHUNK_BITS)
#define RT_NCHUNKS (RT_MAX_SLOTS / RT_CHUNK_SLOTS)
#define RT_NONE UINT32_MAX
#define RT_DRAIN_BUDGET 65536   /* entries per wake before timers and I/O get a turn */
#define RT_MSG_DESTROY_ 3       /* internal: destroy the desk (rt_post_destroy) */
#define RT_SHRINK_ENTRIES 65536 /* queue arrays above this are freed when mostly unused */

typedef struct rt_worker rt_worker_t;

struct rt_desk {
    _Atomic uint32_t gen; /* odd: live */
    uint32_t slot;
    uint32_t next_free;  /* free list link: slot + 1, 0 = end (under slot_lock) */
    uint32_t timer_head; /* first timer node of this desk, RT_NONE if none */
    uint32_t humans;
    bool in_round;
    bool dying;
    rt_worker_t *w;
    const rt_desk_ops_t *ops;
    void *state;
};

/* A queued item: a message to a desk, or a job when `job` is set (then msg.ptr is its arg). */
typedef struct {
    rt_desk_id_t dest;
    rt_job_fn job;
    rt_msg_t msg;
} rt_entry_t;

typedef struct {
    rt_entry_t *v;
    size_t len, cap;
} rt_vec_t;

typedef struct {
    rt_entry_t *v;
    size_t head, tail, mask; /* count = tail - head; capacity = mask + 1 */
} rt_ring_t;

typedef struct {
    int64_t deadline; /* clock_mono_ns */
    uint64_t seq;
    uint64_t cookie;
    rt_desk_t *desk;
    uint32_t gen;        /* bumped when the node is freed, so old timer ids go stale */
    uint32_t heap_idx;   /* RT_NONE when not armed */
    uint32_t prev, next; /* desk's timer list; `next` also links the free list */
} rt_timer_t;

struct rt_worker {
    rt_t *rt;
    unsigned idx;
    pthread_t thread;
    struct event_base *base;
    struct event *wake_ev;
    struct event *timer_ev;
    int efd;

    /* Worker-thread-only state. */
    rt_vec_t batch;
    rt_ring_t local;
    rt_vec_t *outbox; /* [rt->nworkers] */
    bool in_drain, kicked, finalizing;
    uint64_t ndelivered;
    rt_timer_t *timers;
    uint32_t ntimers, timers_cap, timer_free;
    uint32_t *heap;
    uint32_t heap_len, heap_cap;
    uint64_t timer_seq;
    int64_t armed_deadline;
    bool timer_armed;

    char _pad0[64];
    /* Shared with posters. */
    pthread_mutex_t inbox_lock;
    rt_vec_t inbox;
    bool wake_pending;
    bool closed;
    _Atomic bool stop_requested;

    char _pad1[64];
    /* Shared with creators. */
    pthread_mutex_t slot_lock;
    uint32_t free_head;
    bool slots_closed;
    _Atomic uint32_t nslots;
    _Atomic(rt_desk_t *) *chunks; /* [RT_NCHUNKS] */

    char _pad2[64];
    /* Counters read by other threads. */
    _Atomic int64_t desks, in_round, human_desks, humans;
    _Atomic uint64_t rounds[RT_ROUND_OUTCOMES];
    _Atomic uint64_t delivered, dropped;
    char _pad3[64];
};

struct rt {
    unsigned nworkers;
    rt_worker_t *w;
    _Atomic bool stopping;
    _Atomic bool intake_stopped;
    /* Workers whose desks have not all been told RT_MSG_INTAKE_STOPPED yet: they count as human
     * desks (rt_human_desks), so a drain never finds the server idle before every desk had its
     * say (a table between rounds starts its whole-table move, a human desk, right there). */
    _Atomic uint32_t intake_pending;
    _Atomic unsigned rr;
    pthread_mutex_t stop_lock;
    bool joined;
};

static _Thread_local rt_worker_t *tls_worker;

/* ---- small containers --------------------------------------------------------------------- */

static void rt_vec_push(rt_vec_t *v, const rt_entry_t *e)
{
    if (v->len == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 256;
        v->v = xreallocarray(v->v, v->cap, sizeof(*v->v));
    }
    v->v[v->len++] = *e;
}

static void rt_vec_append(rt_vec_t *v, const rt_entry_t *e, size_t n)
{
    if (v->len + n > v->cap) {
        size_t cap = v->cap ? v->cap : 256;
        while (cap < v->len + n)
            cap *= 2;
        v->v = xreallocarray(v->v, cap, sizeof(*v->v));
        v->cap = cap;
    }
    memcpy(v->v + v->len, e, n * sizeof(*e));
    v->len += n;
}

static void rt_vec_swap(rt_vec_t *a, rt_vec_t *b)
{
    rt_vec_t t = *a;
    *a = *b;
    *b = t;
}

static size_t rt_ring_count(const rt_ring_t *r)
{
    return r->tail - r->head;
}

static void rt_ring_push(rt_ring_t *r, const rt_entry_t *e)
{
    if (!r->v || rt_ring_count(r) == r->mask + 1) {
        size_t cap = r->v ? (r->mask + 1) * 2 : 1024, n = rt_ring_count(r);
        rt_entry_t *nv = xreallocarray(NULL, cap, sizeof(*nv));
        for (size_t i = 0; i < n; i++)
            nv[i] = r->v[(r->head + i) & r->mask];
        free(r->v);
        r->v = nv;
        r->head = 0;
        r->tail = n;
        r->mask = cap - 1;
    }
    r->v[r->tail++ & r->mask] = *e;
}

static void rt_ring_pop(rt_ring_t *r, rt_entry_t *out)
{
    *out = r->v[r->head++ & r->mask];
}

/* ---- ids and slots ------------------------------------------------------------------------ */

static rt_desk_id_t rt_id_make(unsigned widx, uint32_t slot, uint32_t gen)
{
    return ((uint64_t)widx << 56) | ((uint64_t)slot << 32) | gen;
}

static unsigned rt_id_worker(rt_desk_id_t id)
{
    return (unsigned)(id >> 56);
}

/* Returns the live desk `id` names on worker w, or NULL. Any thread may call it, but only the
 * desk's worker may use the result beyond comparing it. */
static rt_desk_t *rt_resolve(rt_worker_t *w, rt_desk_id_t id)
{
    uint32_t slot = (uint32_t)(id >> 32) & (RT_MAX_SLOTS - 1), gen = (uint32_t)id;
    if (!(gen & 1))
        return NULL;
    rt_desk_t *chunk =
        atomic_load_explicit(&w->chunks[slot >> RT_CHUNK_BITS], memory_order_acquire);
    if (!chunk)
        return NULL;
    rt_desk_t *d = &chunk[slot & (RT_CHUNK_SLOTS - 1)];
    if (atomic_load_explicit(&d->gen, memory_order_acquire) != gen)
        return NULL;
    return d;
}

static rt_desk_t *rt_slot(rt_worker_t *w, uint32_t slot)
{
    rt_desk_t *chunk =
        atomic_load_explicit(&w->chunks[slot >> RT_CHUNK_BITS], memory_order_acquire);
    return &chunk[slot & (RT_CHUNK_SLOTS - 1)];
}

/* ---- dropping and waking ------------------------------------------------------------------- */

/* Frees a message's payload and counts it as dropped on worker w. */
static void rt_drop(rt_worker_t *w, rt_msg_t *m)
{
    if (m->free_fn && m->ptr)
        m->free_fn(m->ptr);
    atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
}

static void rt_wake(rt_worker_t *w)
{
    uint64_t one = 1;
    if (write(w->efd, &one, sizeof(one)) < 0) {
        /* EAGAIN means the counter is already non-zero: the worker will wake anyway. */
    }
}

/* Makes the calling worker run its drain soon (its own thread; no syscall). */
static void rt_kick_self(rt_worker_t *self)
{
    if (!self->in_drain && !self->kicked) {
        self->kicked = true;
        event_active(self->wake_ev, EV_READ, 1);
    }
}

/* Appends entries to worker w's inbox from another thread. Returns 0 or -ESHUTDOWN (the inbox
 * is closed; nothing was taken). */
static int rt_inbox_append(rt_worker_t *w, const rt_entry_t *e, size_t n, rt_vec_t *swap_from)
{
    pthread_mutex_lock(&w->inbox_lock);
    if (w->closed) {
        pthread_mutex_unlock(&w->inbox_lock);
        return -ESHUTDOWN;
    }
    if (swap_from && w->inbox.len == 0)
        rt_vec_swap(&w->inbox, swap_from);
    else
        rt_vec_append(&w->inbox, e, n);
    bool wake = !w->wake_pending;
    w->wake_pending = true;
    pthread_mutex_unlock(&w->inbox_lock);
    if (wake)
        rt_wake(w);
    return 0;
}

/* Hands self's outbox for worker t to t's inbox; messages to a closed worker are dropped. */
static void rt_flush_outbox(rt_worker_t *self, unsigned t)
{
    rt_vec_t *ob = &self->outbox[t];
    if (ob->len == 0)
        return;
    rt_worker_t *w = &self->rt->w[t];
    if (rt_inbox_append(w, ob->v, ob->len, ob) < 0) {
        for (size_t i = 0; i < ob->len; i++)
            rt_drop(w, &ob->v[i].msg); /* jobs never wait in an outbox */
    }
    ob->len = 0;
}

static void rt_flush_outboxes(rt_worker_t *self)
{
    for (unsigned t = 0; t < self->rt->nworkers; t++)
        rt_flush_outbox(self, t);
}

/*
 * Queues entry e for worker index widx, by the cheapest path for the calling thread (see the
 * file comment). Returns 0 or -ESHUTDOWN; on error the entry was not taken (the caller drops or
 * reports it).
 */
static int rt_enqueue(rt_t *rt, unsigned widx, const rt_entry_t *e)
{
    rt_worker_t *w = &rt->w[widx], *self = tls_worker;
    if (self && self->rt == rt && !self->finalizing) {
        if (self == w) {
            rt_ring_push(&self->local, e);
            rt_kick_self(self);
            return 0;
        }
        if (!e->job) {
            rt_vec_push(&self->outbox[widx], e);
            rt_kick_self(self);
            return 0;
        }
        /* A job goes straight to the target so that its success is known now; flushing the
         * outbox first keeps it in order after the caller's earlier messages. */
        rt_flush_outbox(self, widx);
    } else if (self == w) {
        return -ESHUTDOWN; /* a finalizing worker takes nothing more for itself */
    }
    return rt_inbox_append(w, e, 1, NULL);
}

/* ---- timers ------------------------------------------------------------------------------- */

static bool rt_timer_before(const rt_worker_t *w, uint32_t a, uint32_t b)
{
    const rt_timer_t *ta = &w->timers[a], *tb = &w->timers[b];
    return ta->deadline < tb->deadline || (ta->deadline == tb->deadline && ta->seq < tb->seq);
}

static void rt_heap_set(rt_worker_t *w, uint32_t pos, uint32_t node)
{
    w->heap[pos] = node;
    w->timers[node].heap_idx = pos;
}

static void rt_heap_up(rt_worker_t *w, uint32_t pos)
{
    uint32_t node = w->heap[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (!rt_timer_before(w, node, w->heap[parent]))
            break;
        rt_heap_set(w, pos, w->heap[parent]);
        pos = parent;
    }
    rt_heap_set(w, pos, node);
}

static void rt_heap_down(rt_worker_t *w, uint32_t pos)
{
    uint32_t node = w->heap[pos];
    for (;;) {
        uint32_t c = 2 * pos + 1;
        if (c >= w->heap_len)
            break;
        if (c + 1 < w->heap_len && rt_timer_before(w, w->heap[c + 1], w->heap[c]))
            c++;
        if (!rt_timer_before(w, w->heap[c], node))
            break;
        rt_heap_set(w, pos, w->heap[c]);
        pos = c;
    }
    rt_heap_set(w, pos, node);
}

static void rt_heap_remove(rt_worker_t *w, uint32_t node)
{
    uint32_t pos = w->timers[node].heap_idx;
    w->timers[node].heap_idx = RT_NONE;
    uint32_t last = w->heap[--w->heap_len];
    if (pos == w->heap_len)
        return;
    rt_heap_set(w, pos, last);
    rt_heap_up(w, pos);
    rt_heap_down(w, w->timers[last].heap_idx);
}

/* Unlinks a timer node from its desk's list and returns it to the free list. */
static void rt_timer_release(rt_worker_t *w, uint32_t node)
{
    rt_timer_t *t = &w->timers[node];
    if (t->prev != RT_NONE)
        w->timers[t->prev].next = t->next;
    else
        t->desk->timer_head = t->next;
    if (t->next != RT_NONE)
        w->timers[t->next].prev = t->prev;
    t->desk = NULL;
    t->gen += 2; /* stays odd: a released node's old ids never match again */
    t->next = w->timer_free;
    w->timer_free = node;
}

/* Arms the libevent timer for the earliest deadline if it is not already armed that early. */
static void rt_timer_rearm(rt_worker_t *w)
{
    if (w->heap_len == 0)
        return;
    int64_t deadline = w->timers[w->heap[0]].deadline;
    if (w->timer_armed && w->armed_deadline <= deadline)
        return;
    int64_t delta = deadline - clock_mono_ns();
    if (delta < 0)
        delta = 0;
    struct timeval tv = {.tv_sec = delta / 1000000000,
                         .tv_usec = (delta % 1000000000 + 999) / 1000};
    if (tv.tv_usec >= 1000000) {
        tv.tv_sec++;
        tv.tv_usec -= 1000000;
    }
    evtimer_add(w->timer_ev, &tv);
    w->timer_armed = true;
    w->armed_deadline = deadline;
}

static rt_timer_id_t rt_timer_id(rt_worker_t *w, uint32_t node)
{
    return ((uint64_t)w->timers[node].gen << 32) | (node + 1);
}

/* ---- delivery ----------------------------------------------------------------------------- */

static void rt_desk_kill(rt_worker_t *w, rt_desk_t *d);

/* Delivers one entry on worker w: runs a job, or hands a message to its live desk (then frees
 * the payload unless the desk took it), or drops it. */
static void rt_dispatch(rt_worker_t *w, rt_entry_t *e)
{
    if (e->job) {
        e->job(w->rt, e->msg.ptr);
        return;
    }
    rt_desk_t *d = rt_resolve(w, e->dest);
    if (!d) {
        rt_drop(w, &e->msg);
        return;
    }
    if (e->msg.type == RT_MSG_DESTROY_) {
        if (!d->dying)
            rt_desk_kill(w, d);
        return;
    }
    d->ops->on_message(d, d->state, &e->msg);
    if (e->msg.free_fn && e->msg.ptr)
        e->msg.free_fn(e->msg.ptr);
    w->ndelivered++;
}

static void rt_publish_delivered(rt_worker_t *w)
{
    atomic_store_explicit(&w->delivered, w->ndelivered, memory_order_relaxed);
}

/*
 * Processes the private ring and the inbox until both are empty or the budget is spent. When
 * both are empty it clears wake_pending under the inbox lock, so the next poster writes the
 * eventfd; when the budget is spent it re-activates itself so timers and I/O run in between.
 */
static void rt_worker_drain(rt_worker_t *w)
{
    size_t done = 0;
    bool idle = false;
    w->in_drain = true;
    w->kicked = false;
    while (done < RT_DRAIN_BUDGET) {
        if (atomic_load_explicit(&w->stop_requested, memory_order_acquire)) {
            event_base_loopbreak(w->base);
            idle = true;
            break;
        }
        size_t n = rt_ring_count(&w->local);
        for (size_t i = 0; i < n; i++) {
            rt_entry_t e;
            rt_ring_pop(&w->local, &e);
            rt_dispatch(w, &e);
        }
        done += n;
        pthread_mutex_lock(&w->inbox_lock);
        if (w->inbox.len == 0) {
            if (rt_ring_count(&w->local) == 0) {
                w->wake_pending = false;
                idle = true;
            }
            pthread_mutex_unlock(&w->inbox_lock);
            rt_flush_outboxes(w);
            if (idle)
                break;
            continue;
        }
        rt_vec_swap(&w->inbox, &w->batch);
        pthread_mutex_unlock(&w->inbox_lock);
        for (size_t i = 0; i < w->batch.len; i++)
            rt_dispatch(w, &w->batch.v[i]);
        done += w->batch.len;
        if (w->batch.cap > RT_SHRINK_ENTRIES && w->batch.len < w->batch.cap / 8) {
            /* A burst is over: give its memory back rather than keep it for ever. */
            free(w->batch.v);
            w->batch = (rt_vec_t){0};
        }
        w->batch.len = 0;
        rt_flush_outboxes(w);
    }
    rt_flush_outboxes(w);
    rt_publish_delivered(w);
    w->in_drain = false;
    if (!idle) {
        w->kicked = true;
        event_active(w->wake_ev, EV_READ, 1);
    }
}

static void rt_wake_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    rt_worker_t *w = arg;
    uint64_t v;
    if (read(fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: woken by event_active, not by the eventfd. */
    }
    rt_worker_drain(w);
}

/* Delivers every timer due now, in (deadline, arming) order, then drains what they posted. */
static void rt_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    rt_worker_t *w = arg;
    int64_t now = clock_mono_ns();
    uint64_t seq_limit = w->timer_seq;
    w->timer_armed = false;
    w->in_drain = true;
    while (w->heap_len > 0 && !atomic_load_explicit(&w->stop_requested, memory_order_relaxed)) {
        uint32_t node = w->heap[0];
        rt_timer_t *t = &w->timers[node];
        if (t->deadline > now || t->seq >= seq_limit)
            break;
        rt_desk_t *d = t->desk;
        rt_msg_t msg = {.type = RT_MSG_TIMER, .arg = t->cookie, .arg2 = rt_timer_id(w, node)};
        rt_heap_remove(w, node);
        rt_timer_release(w, node);
        d->ops->on_message(d, d->state, &msg);
        if (msg.free_fn && msg.ptr)
            msg.free_fn(msg.ptr);
        w->ndelivered++;
    }
    rt_timer_rearm(w);
    w->in_drain = false;
    rt_worker_drain(w);
}

/* ---- desks -------------------------------------------------------------------------------- */

static void rt_round_close(rt_worker_t *w, rt_desk_t *d, rt_outcome_t outcome)
{
    d->in_round = false;
    atomic_fetch_sub_explicit(&w->in_round, 1, memory_order_relaxed);
    if (d->humans > 0)
        atomic_fetch_sub_explicit(&w->human_desks, 1, memory_order_release);
    atomic_fetch_add_explicit(&w->rounds[outcome], 1, memory_order_relaxed);
}

static void rt_humans_update(rt_worker_t *w, rt_desk_t *d, unsigned humans)
{
    unsigned old = d->humans;
    if (old == humans)
        return;
    atomic_fetch_add_explicit(&w->humans, (int64_t)humans - (int64_t)old, memory_order_relaxed);
    if (d->in_round && (old > 0) != (humans > 0))
        atomic_fetch_add_explicit(&w->human_desks, humans > 0 ? 1 : -1, memory_order_release);
    d->humans = humans;
}

/*
 * Destroys desk d on its own worker: on_destroy runs while the desk is still live, then the
 * runtime closes an open round as abandoned, clears its humans, cancels its timers, makes its
 * id dead (the generation turns even) and returns the slot to the free list.
 */
static void rt_desk_kill(rt_worker_t *w, rt_desk_t *d)
{
    d->dying = true;
    if (d->ops->on_destroy)
        d->ops->on_destroy(d, d->state);
    if (d->in_round)
        rt_round_close(w, d, RT_ROUND_ABANDONED);
    rt_humans_update(w, d, 0);
    while (d->timer_head != RT_NONE) {
        uint32_t node = d->timer_head;
        rt_heap_remove(w, node);
        rt_timer_release(w, node);
    }
    uint32_t gen = atomic_load_explicit(&d->gen, memory_order_relaxed);
    atomic_store_explicit(&d->gen, gen + 1, memory_order_release);
    d->ops = NULL;
    d->state = NULL;
    pthread_mutex_lock(&w->slot_lock);
    d->next_free = w->free_head;
    w->free_head = d->slot + 1;
    pthread_mutex_unlock(&w->slot_lock);
    atomic_fetch_sub_explicit(&w->desks, 1, memory_order_relaxed);
}

int rt_desk_create(rt_t *rt, const rt_desk_ops_t *ops, void *state, int worker,
                   rt_desk_id_t *out_id)
{
    if (!rt || !ops || !ops->on_message || !out_id)
        return -EINVAL;
    if (atomic_load_explicit(&rt->stopping, memory_order_acquire))
        return -ESHUTDOWN;
    unsigned widx =
        worker < 0 ? atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) : (unsigned)worker;
    rt_worker_t *w = &rt->w[widx % rt->nworkers];
    int rc = 0;
    pthread_mutex_lock(&w->slot_lock);
    if (w->slots_closed) {
        rc = -ESHUTDOWN;
        goto out;
    }
    rt_desk_t *d;
    if (w->free_head) {
        d = rt_slot(w, w->free_head - 1);
        w->free_head = d->next_free;
    } else {
        uint32_t slot = atomic_load_explicit(&w->nslots, memory_order_relaxed);
        if (slot >= RT_MAX_SLOTS) {
            rc = -ENOSPC;
            goto out;
        }
        rt_desk_t *chunk =
            atomic_load_explicit(&w->chunks[slot >> RT_CHUNK_BITS], memory_order_relaxed);
        if (!chunk) {
            chunk = xcalloc(RT_CHUNK_SLOTS, sizeof(*chunk));
            atomic_store_explicit(&w->chunks[slot >> RT_CHUNK_BITS], chunk, memory_order_release);
        }
        d = &chunk[slot & (RT_CHUNK_SLOTS - 1)];
        d->slot = slot;
        atomic_store_explicit(&w->nslots, slot + 1, memory_order_release);
    }
    d->next_free = 0;
    d->timer_head = RT_NONE;
    d->humans = 0;
    d->in_round = false;
    d->dying = false;
    d->w = w;
    d->ops = ops;
    d->state = state;
    uint32_t gen = atomic_load_explicit(&d->gen, memory_order_relaxed) + 1;
    atomic_fetch_add_explicit(&w->desks, 1, memory_order_relaxed);
    atomic_store_explicit(&d->gen, gen, memory_order_release);
    *out_id = rt_id_make(w->idx, d->slot, gen);
out:
    pthread_mutex_unlock(&w->slot_lock);
    return rc;
}

static bool rt_on_thread(const rt_desk_t *d)
{
    return d && tls_worker == d->w;
}

int rt_desk_destroy(rt_desk_t *desk)
{
    if (!rt_on_thread(desk))
        return -EPERM;
    if (desk->dying)
        return -EALREADY;
    rt_desk_kill(desk->w, desk);
    return 0;
}

rt_desk_id_t rt_desk_id(const rt_desk_t *desk)
{
    return rt_id_make(desk->w->idx, desk->slot,
                      atomic_load_explicit(&desk->gen, memory_order_relaxed));
}

void *rt_desk_state(const rt_desk_t *desk)
{
    return desk->state;
}

rt_t *rt_desk_rt(const rt_desk_t *desk)
{
    return desk->w->rt;
}

bool rt_desk_in_round(const rt_desk_t *desk)
{
    return desk->in_round;
}

unsigned rt_desk_humans(const rt_desk_t *desk)
{
    return desk->humans;
}

int rt_desk_begin_round(rt_desk_t *desk)
{
    if (!rt_on_thread(desk))
        return -EPERM;
    if (desk->dying || atomic_load_explicit(&desk->w->rt->intake_stopped, memory_order_acquire))
        return -ESHUTDOWN;
    if (desk->in_round)
        return -EALREADY;
    rt_worker_t *w = desk->w;
    desk->in_round = true;
    atomic_fetch_add_explicit(&w->in_round, 1, memory_order_relaxed);
    if (desk->humans > 0)
        atomic_fetch_add_explicit(&w->human_desks, 1, memory_order_release);
    return 0;
}

int rt_desk_end_round(rt_desk_t *desk, rt_outcome_t outcome)
{
    if (!rt_on_thread(desk))
        return -EPERM;
    if (!desk->in_round || (outcome != RT_ROUND_COMPLETED && outcome != RT_ROUND_VOIDED))
        return -EINVAL;
    rt_round_close(desk->w, desk, outcome);
    return 0;
}

int rt_desk_set_humans(rt_desk_t *desk, unsigned humans)
{
    if (!rt_on_thread(desk))
        return -EPERM;
    rt_humans_update(desk->w, desk, humans);
    return 0;
}

int rt_desk_timer_arm(rt_desk_t *desk, int64_t delay_ms, uint64_t cookie, rt_timer_id_t *out_id)
{
    if (delay_ms < 0 || delay_ms > INT64_MAX / 2000000)
        return -EINVAL;
    return rt_desk_timer_arm_at(desk, clock_mono_ns() + delay_ms * 1000000, cookie, out_id);
}

int rt_desk_timer_arm_at(rt_desk_t *desk, int64_t deadline_ns, uint64_t cookie,
                         rt_timer_id_t *out_id)
{
    if (!rt_on_thread(desk))
        return -EPERM;
    if (deadline_ns < 0)
        return -EINVAL;
    if (desk->dying)
        return -ESHUTDOWN;
    rt_worker_t *w = desk->w;
    uint32_t node = w->timer_free;
    if (node == RT_NONE) {
        if (w->ntimers == w->timers_cap) {
            w->timers_cap = w->timers_cap ? w->timers_cap * 2 : 64;
            w->timers = xreallocarray(w->timers, w->timers_cap, sizeof(*w->timers));
            w->heap = xreallocarray(w->heap, w->timers_cap, sizeof(*w->heap));
        }
        node = w->ntimers++;
        w->timers[node].gen = 1;
    } else {
        w->timer_free = w->timers[node].next;
    }
    rt_timer_t *t = &w->timers[node];
    t->deadline = deadline_ns;
    t->seq = w->timer_seq++;
    t->cookie = cookie;
    t->desk = desk;
    t->prev = RT_NONE;
    t->next = desk->timer_head;
    if (t->next != RT_NONE)
        w->timers[t->next].prev = node;
    desk->timer_head = node;
    w->heap[w->heap_len] = node;
    t->heap_idx = w->heap_len++;
    rt_heap_up(w, t->heap_idx);
    rt_timer_rearm(w);
    if (out_id)
        *out_id = rt_timer_id(w, node);
    return 0;
}

int rt_desk_timer_cancel(rt_desk_t *desk, rt_timer_id_t id)
{
    if (!rt_on_thread(desk))
        return -EPERM;
    rt_worker_t *w = desk->w;
    uint32_t low = (uint32_t)id;
    if (low == 0 || low > w->ntimers)
        return -ENOENT;
    uint32_t node = low - 1;
    rt_timer_t *t = &w->timers[node];
    if (t->gen != (uint32_t)(id >> 32) || t->heap_idx == RT_NONE || t->desk != desk)
        return -ENOENT;
    rt_heap_remove(w, node);
    rt_timer_release(w, node);
    return 0;
}

/* ---- posting ------------------------------------------------------------------------------ */

static int rt_post_entry(rt_t *rt, rt_desk_id_t to, const rt_msg_t *msg)
{
    rt_entry_t e = {.dest = to, .job = NULL, .msg = *msg};
    unsigned widx = rt_id_worker(to);
    if (to == 0 || widx >= rt->nworkers) {
        rt_drop(&rt->w[0], &e.msg);
        return -EINVAL;
    }
    rt_worker_t *w = &rt->w[widx];
    if (atomic_load_explicit(&rt->stopping, memory_order_relaxed)) {
        rt_drop(w, &e.msg);
        return -ESHUTDOWN;
    }
    int rc = rt_enqueue(rt, widx, &e);
    if (rc < 0)
        rt_drop(w, &e.msg);
    return rc;
}

int rt_post(rt_t *rt, rt_desk_id_t to, const rt_msg_t *msg)
{
    if (!rt || !msg)
        return -EINVAL;
    if (msg->type < RT_MSG_USER) {
        rt_msg_t m = *msg;
        rt_drop(&rt->w[0], &m);
        return -EINVAL;
    }
    return rt_post_entry(rt, to, msg);
}

/*
 * Posts msgs[i] to to[i] for i < n with rt_post's rules, but from a thread that is not a worker
 * takes each target worker's inbox lock once per 256 messages instead of once per message. Each
 * message is consumed whatever happens. Returns 0 if every message was queued, else the first
 * error rt_post would have returned.
 */
int rt_post_batch(rt_t *rt, const rt_desk_id_t *to, const rt_msg_t *msgs, size_t n)
{
    enum { CHUNK = 256 };
    if (!rt || (n > 0 && (!to || !msgs)))
        return -EINVAL;
    int rc = 0;
    if (tls_worker && tls_worker->rt == rt) {
        /* A worker's own posts are already batched (ring and outboxes). */
        for (size_t i = 0; i < n; i++) {
            int r = rt_post(rt, to[i], &msgs[i]);
            if (r < 0 && rc == 0)
                rc = r;
        }
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned widx = rt_id_worker(to[i]);
        if (msgs[i].type < RT_MSG_USER || to[i] == 0 || widx >= rt->nworkers) {
            rt_msg_t m = msgs[i];
            rt_drop(&rt->w[0], &m);
            rc = rc ? rc : -EINVAL;
        }
    }
    rt_entry_t buf[CHUNK];
    for (unsigned widx = 0; widx < rt->nworkers; widx++) {
        rt_worker_t *w = &rt->w[widx];
        size_t len = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i < n && (msgs[i].type < RT_MSG_USER || to[i] == 0 || rt_id_worker(to[i]) != widx))
                continue;
            if (i < n)
                buf[len++] = (rt_entry_t){.dest = to[i], .job = NULL, .msg = msgs[i]};
            if (len == 0 || (len < CHUNK && i < n))
                continue;
            int r = atomic_load_explicit(&rt->stopping, memory_order_relaxed)
                        ? -ESHUTDOWN
                        : rt_inbox_append(w, buf, len, NULL);
            if (r < 0) {
                for (size_t k = 0; k < len; k++)
                    rt_drop(w, &buf[k].msg);
                rc = rc ? rc : r;
            }
            len = 0;
        }
    }
    return rc;
}

int rt_post_destroy(rt_t *rt, rt_desk_id_t id)
{
    rt_msg_t m = {.type = RT_MSG_DESTROY_};
    return rt_post_entry(rt, id, &m);
}

int rt_post_job(rt_t *rt, unsigned worker, rt_job_fn fn, void *arg)
{
    if (!rt || !fn || worker >= rt->nworkers)
        return -EINVAL;
    if (atomic_load_explicit(&rt->stopping, memory_order_relaxed))
        return -ESHUTDOWN;
    rt_entry_t e = {.dest = 0, .job = fn, .msg = {.ptr = arg}};
    return rt_enqueue(rt, worker, &e);
}

/* ---- intake ------------------------------------------------------------------------------- */

/* Job: tells every live desk of this worker that intake stopped. */
static void rt_intake_job(rt_t *rt, void *arg)
{
    rt_worker_t *w = arg;
    uint32_t n = atomic_load_explicit(&w->nslots, memory_order_acquire);
    for (uint32_t s = 0; s < n; s++) {
        rt_desk_t *d = rt_slot(w, s);
        if (!(atomic_load_explicit(&d->gen, memory_order_acquire) & 1) || d->dying)
            continue;
        rt_msg_t msg = {.type = RT_MSG_INTAKE_STOPPED};
        d->ops->on_message(d, d->state, &msg);
        if (msg.free_fn && msg.ptr)
            msg.free_fn(msg.ptr);
        w->ndelivered++;
    }
    atomic_fetch_sub_explicit(&rt->intake_pending, 1, memory_order_acq_rel);
}

void rt_stop_intake(rt_t *rt)
{
    if (atomic_exchange_explicit(&rt->intake_stopped, true, memory_order_acq_rel))
        return;
    atomic_store_explicit(&rt->intake_pending, rt->nworkers, memory_order_release);
    for (unsigned i = 0; i < rt->nworkers; i++)
        if (rt_post_job(rt, i, rt_intake_job, &rt->w[i]) != 0) /* fails only when stopping */
            atomic_fetch_sub_explicit(&rt->intake_pending, 1, memory_order_acq_rel);
}

bool rt_intake_stopped(const rt_t *rt)
{
    return atomic_load_explicit(&rt->intake_stopped, memory_order_acquire);
}

/* ---- workers ------------------------------------------------------------------------------ */

/*
 * Ends a worker after its loop broke out on stop: closes creation, destroys the remaining desks
 * on this thread, hands on what they posted, closes the inbox, runs the jobs still queued and
 * drops the messages (their desks are gone).
 */
static void rt_worker_finalize(rt_worker_t *w)
{
    pthread_mutex_lock(&w->slot_lock);
    w->slots_closed = true;
    pthread_mutex_unlock(&w->slot_lock);
    uint32_t n = atomic_load_explicit(&w->nslots, memory_order_acquire);
    for (uint32_t s = 0; s < n; s++) {
        rt_desk_t *d = rt_slot(w, s);
        if ((atomic_load_explicit(&d->gen, memory_order_acquire) & 1) && !d->dying)
            rt_desk_kill(w, d);
    }
    rt_flush_outboxes(w);
    w->finalizing = true;
    pthread_mutex_lock(&w->inbox_lock);
    w->closed = true;
    rt_vec_swap(&w->inbox, &w->batch);
    pthread_mutex_unlock(&w->inbox_lock);
    w->in_drain = true;
    while (rt_ring_count(&w->local) > 0) {
        rt_entry_t e;
        rt_ring_pop(&w->local, &e);
        rt_dispatch(w, &e);
    }
    for (size_t i = 0; i < w->batch.len; i++)
        rt_dispatch(w, &w->batch.v[i]);
    w->batch.len = 0;
    rt_publish_delivered(w);
}

static void *rt_worker_main(void *arg)
{
    rt_worker_t *w = arg;
    tls_worker = w;
    while (!atomic_load_explicit(&w->stop_requested, memory_order_acquire))
        event_base_dispatch(w->base);
    rt_worker_finalize(w);
    tls_worker = NULL;
    return NULL;
}

static void rt_worker_free(rt_worker_t *w)
{
    if (w->wake_ev)
        event_free(w->wake_ev);
    if (w->timer_ev)
        event_free(w->timer_ev);
    if (w->base)
        event_base_free(w->base);
    if (w->efd >= 0)
        close(w->efd);
    free(w->batch.v);
    free(w->inbox.v);
    free(w->local.v);
    if (w->outbox) {
        for (unsigned t = 0; t < w->rt->nworkers; t++)
            free(w->outbox[t].v);
        free(w->outbox);
    }
    free(w->timers);
    free(w->heap);
    if (w->chunks) {
        for (unsigned c = 0; c < RT_NCHUNKS; c++)
            free(atomic_load_explicit(&w->chunks[c], memory_order_relaxed));
        free(w->chunks);
    }
    pthread_mutex_destroy(&w->inbox_lock);
    pthread_mutex_destroy(&w->slot_lock);
}

/* Sets up worker w's loop, eventfd and events (not its thread). Returns 0 or -errno. */
static int rt_worker_init(rt_t *rt, rt_worker_t *w, unsigned idx)
{
    w->rt = rt;
    w->idx = idx;
    w->efd = -1;
    w->timer_free = RT_NONE;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&w->inbox_lock, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_mutex_init(&w->slot_lock, NULL);
    w->outbox = xcalloc(rt->nworkers, sizeof(*w->outbox));
    w->chunks = xcalloc(RT_NCHUNKS, sizeof(*w->chunks));
    struct event_config *cfg = event_config_new();
    if (!cfg)
        return -ENOMEM;
    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
    w->base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (!w->base)
        return -ENOMEM;
    w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->efd < 0)
        return -errno;
    w->wake_ev = event_new(w->base, w->efd, EV_READ | EV_PERSIST, rt_wake_cb, w);
    w->timer_ev = evtimer_new(w->base, rt_timer_cb, w);
    if (!w->wake_ev || !w->timer_ev || event_add(w->wake_ev, NULL) < 0)
        return -ENOMEM;
    return 0;
}

int rt_create(unsigned workers, rt_t **out)
{
    if (!out || workers == 0 || workers > RT_MAX_WORKERS)
        return -EINVAL;
    if (evthreads_enable() < 0)
        return -ENOSYS;
    rt_t *rt = xcalloc(1, sizeof(*rt));
    rt->nworkers = workers;
    rt->w = xcalloc(workers, sizeof(*rt->w));
    pthread_mutex_init(&rt->stop_lock, NULL);
    unsigned inited = 0, started = 0;
    int rc;
    for (; inited < workers; inited++) {
        rc = rt_worker_init(rt, &rt->w[inited], inited);
        if (rc < 0) {
            inited++; /* partly set up: free it too */
            goto fail_init;
        }
    }
    for (; started < workers; started++) {
        rc = -pthread_create(&rt->w[started].thread, NULL, rt_worker_main, &rt->w[started]);
        if (rc < 0)
            goto fail_start;
    }
    *out = rt;
    return 0;

fail_start:
    atomic_store(&rt->stopping, true);
    for (unsigned i = 0; i < started; i++) {
        atomic_store(&rt->w[i].stop_requested, true);
        rt_wake(&rt->w[i]);
        pthread_join(rt->w[i].thread, NULL);
    }
fail_init:
    for (unsigned i = 0; i < inited; i++)
        rt_worker_free(&rt->w[i]);
    pthread_mutex_destroy(&rt->stop_lock);
    free(rt->w);
    free(rt);
    return rc;
}

int rt_stop(rt_t *rt)
{
    if (!rt)
        return 0;
    if (tls_worker && tls_worker->rt == rt)
        return -EDEADLK;
    pthread_mutex_lock(&rt->stop_lock);
    if (!rt->joined) {
        atomic_store_explicit(&rt->stopping, true, memory_order_release);
        for (unsigned i = 0; i < rt->nworkers; i++) {
            atomic_store_explicit(&rt->w[i].stop_requested, true, memory_order_release);
            rt_wake(&rt->w[i]);
        }
        for (unsigned i = 0; i < rt->nworkers; i++)
            pthread_join(rt->w[i].thread, NULL);
        rt->joined = true;
    }
    pthread_mutex_unlock(&rt->stop_lock);
    return 0;
}

void rt_destroy(rt_t *rt)
{
    if (!rt)
        return;
    if (rt_stop(rt) < 0) {
        log_emit(LOG_ERROR, "rt_destroy_on_worker", NULL);
        abort(); /* freeing the runtime from its own worker is a programming error */
    }
    for (unsigned i = 0; i < rt->nworkers; i++)
        rt_worker_free(&rt->w[i]);
    pthread_mutex_destroy(&rt->stop_lock);
    free(rt->w);
    free(rt);
}

unsigned rt_workers(const rt_t *rt)
{
    return rt->nworkers;
}

int rt_current_worker(const rt_t *rt)
{
    return tls_worker && tls_worker->rt == rt ? (int)tls_worker->idx : -1;
}

struct event_base *rt_worker_base(rt_t *rt, unsigned worker)
{
    return rt && worker < rt->nworkers ? rt->w[worker].base : NULL;
}

/* ---- counters ----------------------------------------------------------------------------- */

static uint64_t rt_sum(const rt_t *rt, size_t offset)
{
    int64_t sum = 0;
    for (unsigned i = 0; i < rt->nworkers; i++) {
        const _Atomic int64_t *c = (const _Atomic int64_t *)((const char *)&rt->w[i] + offset);
        sum += atomic_load_explicit(c, memory_order_acquire);
    }
    return sum < 0 ? 0 : (uint64_t)sum;
}

uint64_t rt_desks(const rt_t *rt)
{
    return rt_sum(rt, offsetof(rt_worker_t, desks));
}

uint64_t rt_desks_in_round(const rt_t *rt)
{
    return rt_sum(rt, offsetof(rt_worker_t, in_round));
}

uint64_t rt_human_desks(const rt_t *rt)
{
    return rt_sum(rt, offsetof(rt_worker_t, human_desks)) +
           atomic_load_explicit(&rt->intake_pending, memory_order_acquire);
}

uint64_t rt_humans_seated(const rt_t *rt)
{
    return rt_sum(rt, offsetof(rt_worker_t, humans));
}

static uint64_t rt_sum_u(const rt_t *rt, size_t offset)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < rt->nworkers; i++) {
        const _Atomic uint64_t *c = (const _Atomic uint64_t *)((const char *)&rt->w[i] + offset);
        sum += atomic_load_explicit(c, memory_order_relaxed);
    }
    return sum;
}

uint64_t rt_rounds(const rt_t *rt, rt_outcome_t outcome)
{
    if ((unsigned)outcome >= RT_ROUND_OUTCOMES)
        return 0;
    return rt_sum_u(rt, offsetof(rt_worker_t, rounds) + outcome * sizeof(_Atomic uint64_t));
}

uint64_t rt_messages_delivered(const rt_t *rt)
{
    return rt_sum_u(rt, offsetof(rt_worker_t, delivered));
}

uint64_t rt_dropped_messages(const rt_t *rt)
{
    return rt_sum_u(rt, offsetof(rt_worker_t, dropped));
}

size_t rt_desk_overhead_bytes(void)
{
    return sizeof(rt_desk_t);
}
