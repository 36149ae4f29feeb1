/*
 * runtime -- the desk-actor runtime (docs/architecture.md §3).
 *
 * W worker threads, each running its own libevent event_base. A desk (a card table, or any
 * actor) is pinned to one worker for life and is touched only on that worker's thread. Desks
 * are addressed by a 64-bit rt_desk_id_t that encodes the worker, a slot and a generation, so
 * an id of a destroyed desk never resolves to the desk that later reuses its slot. Nothing
 * outside the runtime holds a desk pointer across threads.
 *
 * Messages. Any thread may post a message to a desk id (rt_post). Messages from one sender
 * thread to one desk arrive in the order they were posted. A message whose desk is dead when
 * it would be delivered is dropped and counted (rt_dropped_messages). A message is a small
 * value (type + two 64-bit words) plus an optional heap payload `ptr` with its `free_fn`:
 * rt_post always consumes the payload -- it is handed to on_message, or, if the message is
 * dropped for any reason (dead desk, shutdown, bad id), freed with free_fn(ptr). After
 * on_message returns the runtime calls free_fn(ptr) unless the handler took the payload by
 * setting msg->free_fn (or msg->ptr) to NULL.
 *
 * Timers. A desk arms a timer (rt_desk_timer_arm); when it expires the desk receives an
 * RT_MSG_TIMER message on its own thread -- never a callback into desk memory. Timers with
 * the same deadline arrive in arming order; a cancelled timer never arrives; a destroyed desk's
 * timers are cancelled with it.
 *
 * Jobs. rt_post_job runs a function on a given worker thread (for non-desk work such as
 * accepting links). rt_worker_base exposes the worker's event_base for events added from jobs.
 *
 * Rounds (docs/architecture.md §3, "round discipline"). The runtime owns each desk's in_round
 * flag. rt_desk_begin_round fails once intake is stopped (rt_stop_intake) or when a round is
 * already running; rt_desk_end_round is the only way a round ends. A "human desk" is a desk in a
 * round with at least one human seated (rt_desk_set_humans); the runtime keeps the count exact
 * at every transition, so rt_human_desks() can be read by the drain shell from any thread;
 * from rt_stop_intake until every worker has told its desks (below), each such worker counts
 * as one more, so the drain never sees 0 before every desk has reacted.
 * When intake stops, every live desk receives RT_MSG_INTAKE_STOPPED on its own thread so the
 * engine can tell seated players that the table closes.
 *
 * Threads. Functions taking an rt_desk_t * must be called on that desk's worker thread (from
 * its callbacks, or from a job on that worker); they return -EPERM elsewhere. Functions taking
 * an rt_t * are safe from any thread unless stated otherwise.
 */
#ifndef CROUPIER_RUNTIME_H
#define CROUPIER_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

typedef struct rt rt_t;
typedef struct rt_desk rt_desk_t;
/* 0 is never a valid id. Layout: worker (8 bits) | slot (24 bits) | generation (32 bits). */
typedef uint64_t rt_desk_id_t;
typedef uint64_t rt_timer_id_t;

#define RT_MAX_WORKERS 64

/* Message types below RT_MSG_USER belong to the runtime; rt_post refuses them. */
enum {
    RT_MSG_TIMER = 1,          /* arg = cookie given at arming, arg2 = the rt_timer_id_t */
    RT_MSG_INTAKE_STOPPED = 2, /* intake stopped: no round may begin any more */
    RT_MSG_USER = 256,         /* first type free for engines */
};

typedef struct rt_msg {
    uint32_t type;
    uint64_t arg;
    uint64_t arg2;
    void *ptr;               /* optional payload, owned by the message */
    void (*free_fn)(void *); /* frees ptr; NULL if ptr needs no freeing */
} rt_msg_t;

/* How a round ended. RT_ROUND_ABANDONED is recorded only by the runtime, when a desk is
 * destroyed with a round still open after its on_destroy ran (a torn round: a bug to fix). */
typedef enum {
    RT_ROUND_COMPLETED = 0,
    RT_ROUND_VOIDED = 1,
    RT_ROUND_ABANDONED = 2,
} rt_outcome_t;
#define RT_ROUND_OUTCOMES 3

typedef struct {
    /* A message arrived. msg is the runtime's copy; see the payload rule above. */
    void (*on_message)(rt_desk_t *desk, void *state, rt_msg_t *msg);
    /* The desk is being destroyed (by rt_desk_destroy, rt_post_destroy or rt_stop). The desk
     * is still live during the call: it may end its round, post messages, reset humans. The
     * runtime never frees `state`; this callback usually does. May be NULL. */
    void (*on_destroy)(rt_desk_t *desk, void *state);
} rt_desk_ops_t;

typedef void (*rt_job_fn)(rt_t *rt, void *arg);

/* Starts a runtime with `workers` (1..RT_MAX_WORKERS) threads. Returns 0 and *out, or -EINVAL,
 * or a negative errno from thread/event setup (nothing is left allocated). */
int rt_create(unsigned workers, rt_t **out);
/* Stops the workers: each destroys its remaining desks on its own thread (on_destroy runs),
 * drops queued messages (counted as dropped, payloads freed) and runs jobs queued before the
 * stop; then threads are joined. Idempotent. Returns 0, or -EDEADLK if called on a worker. */
int rt_stop(rt_t *rt);
/* rt_stop (if not done) and frees everything. NULL is a no-op. Not from a worker thread. */
void rt_destroy(rt_t *rt);

unsigned rt_workers(const rt_t *rt);
/* The worker index of the calling thread, or -1 if it is not one of rt's workers. */
int rt_current_worker(const rt_t *rt);
/* The worker's event_base, for events added on that worker's thread (e.g. from a job). */
struct event_base *rt_worker_base(rt_t *rt, unsigned worker);

/* Creates a desk on worker `worker` (-1: spread round-robin; else taken modulo the number of
 * workers). Callable from any thread; the desk is live and addressable when this returns.
 * The runtime keeps `ops` and `state` pointers (ops must outlive the desk). Returns 0 and
 * *out_id; -EINVAL (NULL ops/on_message), -ESHUTDOWN (runtime stopping), -ENOSPC (worker's
 * 2^24 slots in use). */
int rt_desk_create(rt_t *rt, const rt_desk_ops_t *ops, void *state, int worker,
                   rt_desk_id_t *out_id);
/* Destroys the desk now: on_destroy runs, an open round is recorded as abandoned, its humans
 * and timers are removed, its id goes dead. The desk pointer is invalid afterwards. Desk thread
 * only. Returns 0, -EPERM (wrong thread), -EALREADY (already being destroyed). */
int rt_desk_destroy(rt_desk_t *desk);
/* Asks the desk's own worker to destroy it (as rt_desk_destroy). Same returns as rt_post. */
int rt_post_destroy(rt_t *rt, rt_desk_id_t id);

/* Posts *msg (copied) to desk `to`. Always consumes msg->ptr (see the payload rule). Returns
 * 0 (queued; a dead desk is detected at delivery and the drop counted), -EINVAL (type below
 * RT_MSG_USER or malformed id; counted as dropped), -ESHUTDOWN (runtime stopping; counted). */
int rt_post(rt_t *rt, rt_desk_id_t to, const rt_msg_t *msg);
/* Posts msgs[i] to to[i] for every i < n, each as rt_post would (every payload consumed, order
 * kept per desk). From a thread that is not a worker this takes each target worker's lock once
 * per 256 messages rather than once per message. Returns 0 if all were queued, else the first
 * error (-EINVAL, -ESHUTDOWN) met; the other messages are still posted. */
int rt_post_batch(rt_t *rt, const rt_desk_id_t *to, const rt_msg_t *msgs, size_t n);
/* Runs fn(rt, arg) on worker `worker`'s thread, in FIFO order with the caller's other posts
 * to that worker. Returns 0, -EINVAL (bad worker or fn), -ESHUTDOWN (then fn never runs and
 * the caller keeps arg). Jobs queued before rt_stop still run during the stop. */
int rt_post_job(rt_t *rt, unsigned worker, rt_job_fn fn, void *arg);

/* Desk context accessors (desk thread only; no checks, cheap). */
rt_desk_id_t rt_desk_id(const rt_desk_t *desk);
void *rt_desk_state(const rt_desk_t *desk);
rt_t *rt_desk_rt(const rt_desk_t *desk);
bool rt_desk_in_round(const rt_desk_t *desk);
unsigned rt_desk_humans(const rt_desk_t *desk);

/* Arms a timer: after delay_ms the desk receives RT_MSG_TIMER with arg = cookie and arg2 = the
 * timer id. Returns 0 and *out_id (may be NULL), -EPERM (wrong thread), -EINVAL (negative
 * delay), -ESHUTDOWN (desk being destroyed). */
int rt_desk_timer_arm(rt_desk_t *desk, int64_t delay_ms, uint64_t cookie, rt_timer_id_t *out_id);
/* As rt_desk_timer_arm with an absolute deadline on clock_mono_ns() (common/clock.h); a past
 * deadline fires at once. Timers with equal deadlines arrive in arming order. -EINVAL for a
 * negative deadline. */
int rt_desk_timer_arm_at(rt_desk_t *desk, int64_t deadline_ns, uint64_t cookie,
                         rt_timer_id_t *out_id);
/* Cancels a pending timer of this desk; it will not arrive. Returns 0, -EPERM, or -ENOENT
 * (unknown, already delivered, cancelled, or another desk's timer). */
int rt_desk_timer_cancel(rt_desk_t *desk, rt_timer_id_t id);

/* Starts a round. Returns 0, -ESHUTDOWN (intake stopped, or desk being destroyed), -EALREADY
 * (a round is running), -EPERM (wrong thread). */
int rt_desk_begin_round(rt_desk_t *desk);
/* Ends the running round with outcome COMPLETED or VOIDED and clears in_round. Returns 0,
 * -EINVAL (no round running, or outcome not COMPLETED/VOIDED), -EPERM (wrong thread). */
int rt_desk_end_round(rt_desk_t *desk, rt_outcome_t outcome);
/* Reports how many humans are seated at the desk now (bots are not counted). Returns 0 or
 * -EPERM. */
int rt_desk_set_humans(rt_desk_t *desk, unsigned humans);

/* Stops intake: from the moment this returns rt_desk_begin_round fails everywhere. Then each
 * worker, on its own thread, sends RT_MSG_INTAKE_STOPPED once to every desk live on it at that
 * time (a desk created later sees rt_intake_stopped() instead). Idempotent, any thread. */
void rt_stop_intake(rt_t *rt);
bool rt_intake_stopped(const rt_t *rt);

/* Counters, summed over the per-worker atomics; safe from any thread. */
uint64_t rt_desks(const rt_t *rt);
uint64_t rt_desks_in_round(const rt_t *rt);
uint64_t rt_human_desks(const rt_t *rt);
uint64_t rt_humans_seated(const rt_t *rt);
uint64_t rt_rounds(const rt_t *rt, rt_outcome_t outcome);
uint64_t rt_messages_delivered(const rt_t *rt); /* includes timer and intake messages */
uint64_t rt_dropped_messages(const rt_t *rt);

/* Size in bytes of the runtime's per-desk bookkeeping (for the memory benchmark). */
size_t rt_desk_overhead_bytes(void);

#endif
