#include "lease.h"

#include <bsd/stdlib.h>
#include <bsd/sys/queue.h>
#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "keytag.h"
#include "log.h"
#include "xmalloc.h"

#define LEASE_RULE "SIZE >= versions alive x replicas x 2"

/*
 * acquire: KEYS[1] = epoch key; ARGV = slot key prefix, token, ttl, size, first slot, floor.
 * Scans the pool from the given slot and takes the slot that already holds our token (an
 * earlier attempt whose WAIT fell short) or else the first free one, then INCRs the epoch into
 * the slot's fence -- lifted above floor, the highest epoch this process has seen, so that an
 * epoch a failover lost is never handed out again (docs/deploy.md "Failover and durability").
 * Returns {slot, epoch, in_use} or {-1, 0, in_use}.
 */
static const char lease_acquire_lua[] =
    "local prefix, token, ttl = ARGV[1], ARGV[2], ARGV[3]\n"
    "local size, start, floor = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])\n"
    "local mine, free, inuse = -1, -1, 0\n"
    "for i = 0, size - 1 do\n"
    "  local n = (start + i) % size\n"
    "  local v = redis.call('GET', prefix .. n)\n"
    "  if v == token then mine = n elseif not v and free < 0 then free = n end\n"
    "  if v then inuse = inuse + 1 end\n"
    "end\n"
    "local got = free\n"
    "if mine >= 0 then got = mine else inuse = inuse + 1 end\n"
    "if got < 0 then return {-1, 0, inuse - 1} end\n"
    "redis.call('SET', prefix .. got, token, 'PX', ttl)\n"
    "local e = redis.call('INCR', KEYS[1])\n"
    "if e <= floor then\n"
    "  e = floor + 1\n"
    "  redis.call('SET', KEYS[1], e)\n"
    "end\n"
    "redis.call('SET', prefix .. got .. ':epoch', e)\n"
    "return {got, e, inuse}\n";

/*
 * renew: KEYS = slot key, epoch key, fence key; ARGV = token, ttl, slot key prefix, size,
 * our current epoch, the highest epoch this process has seen (a new epoch is lifted above it). Ours
 * -> PEXPIRE, {1, fence epoch, in_use}. Someone else's -> {0, 0, 0}. Gone (it expired: Redis was
 * unreachable or restarted for longer than the TTL, or we were paused) -> taken back, {2, epoch,
 * in_use}:
 *   - under the SAME epoch when the fence still holds it: every acquisition and every recovery
 *     of the slot (money.h, money_recover) moves the fence, so an unchanged fence proves that
 *     nobody held the slot in between, and the rounds, seat accounts and settlements of our
 *     epoch stay valid (docs/queues.md "A round the players saw finish always settles");
 *   - under a NEW epoch when the fence is gone: Redis lost its data (a restart without
 *     persistence) and the counter restarts at 1; the holder lifts it above its own epoch, so
 *     epochs never go backwards for a slot that live processes still know;
 *   - not at all when the fence moved on (someone took the slot meanwhile, or recovered its
 *     held chips): {0, 0, 0}, the lease is lost.
 */
static const char lease_renew_lua[] =
    "local v = redis.call('GET', KEYS[1])\n"
    "local r\n"
    "if v == ARGV[1] then\n"
    "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "  r = {1, tonumber(redis.call('GET', KEYS[3]) or '0')}\n"
    "elseif not v and redis.call('GET', KEYS[3]) == ARGV[5] then\n"
    "  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
    "  r = {2, tonumber(ARGV[5])}\n"
    "elseif not v and not redis.call('GET', KEYS[3]) then\n"
    "  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
    "  local e = redis.call('INCR', KEYS[2])\n"
    "  local floor = math.max(tonumber(ARGV[5]), tonumber(ARGV[6]))\n"
    "  if e <= floor then\n"
    "    e = floor + 1\n"
    "    redis.call('SET', KEYS[2], e)\n"
    "  end\n"
    "  redis.call('SET', KEYS[3], e)\n"
    "  r = {2, e}\n"
    "else\n"
    "  return {0, 0, 0}\n"
    "end\n"
    "local inuse = 0\n"
    "for n = 0, tonumber(ARGV[4]) - 1 do\n"
    "  inuse = inuse + redis.call('EXISTS', ARGV[3] .. n)\n"
    "end\n"
    "r[3] = inuse\n"
    "return r\n";

/* release: compare-and-delete. KEYS[1] = slot key, ARGV[1] = token. */
static const char lease_release_lua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end\n"
    "return 0\n";

typedef enum {
    LEASE_REQ_ACQUIRE,
    LEASE_REQ_RENEW,
    LEASE_REQ_RELEASE,
    LEASE_REQ_WAIT_ACQUIRE, /* WAIT behind an acquisition: slot, epoch, inuse */
    LEASE_REQ_WAIT_REGAIN,  /* WAIT behind a renew that took the slot back under a new epoch */
} lease_req_kind_t;

/* One command in flight; outlives the lease if the lease is destroyed first (l = NULL). */
typedef struct lease_req {
    LIST_ENTRY(lease_req) _link;
    lease_t *l;
    lease_req_kind_t kind;
    int64_t sent_boot_ms;
    int slot; /* WAIT requests: what they make durable */
    int64_t epoch;
    long long inuse;
} lease_req_t;

struct lease {
    struct event_base *base;
    rconn_t *rc;
    char service[65];
    int size;
    int ttl_ms;
    int margin_ms; /* lease_opts_t.margin_ms, resolved */
    lease_opts_t opts;
    lease_state_t state;
    bool started;
    bool exhausted_logged;
    int slot;
    int64_t epoch;
    int64_t seen_epoch;    /* the highest epoch any reply gave us: new epochs are lifted above it */
    char wait_args[2][16]; /* WAIT's numreplicas and timeout as text */
    uint64_t gaps;
    unsigned attempts; /* failed acquisition attempts in a row */
    uint8_t token_raw[16];
    char token[33];
    char slot_prefix[128];
    char slot_key[160];
    char fence_key[160];
    char epoch_key[128];
    int64_t valid_until_boot_ms; /* local validity of the holding */
    bool renew_inflight;
    struct event *acquire_ev;  /* acquisition retry */
    struct event *renew_ev;    /* renew tick */
    struct event *validity_ev; /* end of local validity */
    rconn_script_t *acquire_script, *renew_script, *release_script, *fenced_script;
    LIST_HEAD(, lease_req) reqs;
    lease_done_cb release_done;
    void *release_arg;
    metrics_registry_t *own_metrics;
    metrics_t *m_renew_ok, *m_renew_regained, *m_renew_lost, *m_renew_error;
    metrics_t *m_in_use, *m_epoch, *m_gaps, *m_exhausted, *m_valid, *m_wait_short;
};

static const char *const lease_state_names[] = {"acquiring",   "exhausted", "valid",
                                                "unconfirmed", "lost",      "released"};
static const char *const lease_event_names[] = {"acquired",  "exhausted", "renewed", "unconfirmed",
                                                "confirmed", "regained",  "lost"};

const char *lease_state_name(lease_state_t s)
{
    return (unsigned)s <= LEASE_RELEASED ? lease_state_names[s] : "?";
}

const char *lease_event_name(lease_event_t e)
{
    return (unsigned)e <= LEASE_EV_LOST ? lease_event_names[e] : "?";
}

static bool lease_service_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

static int lease_fmt_result(int n, size_t len)
{
    return (n < 0 || (size_t)n >= len) ? -ENOSPC : n;
}

int lease_format_slot_key(const char *service, int slot, char *buf, size_t len)
{
    char lt[160];
    return lease_fmt_result(
        snprintf(buf, len, "%s:slot:%d", keytag_lease(lt, sizeof lt, service), slot), len);
}

int lease_format_fence_key(const char *service, int slot, char *buf, size_t len)
{
    char lt[160];
    return lease_fmt_result(
        snprintf(buf, len, "%s:slot:%d:epoch", keytag_lease(lt, sizeof lt, service), slot), len);
}

int lease_format_epoch_key(const char *service, char *buf, size_t len)
{
    char lt[160];
    return lease_fmt_result(snprintf(buf, len, "%s:epoch", keytag_lease(lt, sizeof lt, service)),
                            len);
}

static void lease_emit(lease_t *l, lease_event_t ev)
{
    if (l->opts.on_event != NULL)
        l->opts.on_event(l, ev, l->opts.arg);
}

static void lease_set_state(lease_t *l, lease_state_t s)
{
    l->state = s;
    metrics_set(l->m_valid, s == LEASE_VALID ? 1 : 0);
}

static void lease_arm_ms(struct event *ev, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(ev, &tv);
}

static lease_req_t *lease_req_new(lease_t *l, lease_req_kind_t kind)
{
    lease_req_t *req = xcalloc(1, sizeof *req);
    req->l = l;
    req->kind = kind;
    req->sent_boot_ms = clock_boot_ms();
    LIST_INSERT_HEAD(&l->reqs, req, _link);
    return req;
}

/* Unlinks a finished request; returns its lease, or NULL if the lease is gone. Frees req. */
static lease_t *lease_req_done(lease_req_t *req, int64_t *sent)
{
    lease_t *l = req->l;
    *sent = req->sent_boot_ms;
    if (l != NULL)
        LIST_REMOVE(req, _link);
    free(req);
    return l;
}

/* Delay before the next acquisition attempt: ttl/3 doubling up to 4 x ttl, with jitter. */
static int64_t lease_retry_delay(lease_t *l)
{
    int64_t d = l->ttl_ms / 3, cap = 4 * (int64_t)l->ttl_ms;
    for (unsigned i = 0; i < l->attempts && d < cap; i++)
        d *= 2;
    if (d > cap)
        d = cap;
    l->attempts++;
    return d / 2 + arc4random_uniform((uint32_t)(d - d / 2 + 1));
}

/* While the connection is down, poll it this often instead of backing off: the first answer
 * after a reconnect should not wait for a long backoff. */
static int64_t lease_poll_ms(const lease_t *l)
{
    int64_t ms = l->ttl_ms / 10;
    return ms < 10 ? 10 : ms > 100 ? 100 : ms;
}

static void lease_acquire_reply_cb(rconn_t *rc, redisReply *reply, void *arg);
static void lease_apply_acquired(lease_t *l, int slot, int64_t epoch, int64_t sent);
static void lease_apply_regained(lease_t *l, int64_t epoch, int64_t sent);
static void lease_wait_reply_cb(rconn_t *rc, redisReply *reply, void *arg);

static void lease_note_epoch(lease_t *l, int64_t epoch)
{
    if (epoch > l->seen_epoch)
        l->seen_epoch = epoch;
}

/*
 * Sends `WAIT min_replicas timeout` behind an acquisition or a new-epoch regain on the same
 * connection: the new epoch counts only once enough replicas have it (docs/deploy.md "Failover
 * and durability"). A refused send counts as a WAIT that fell short.
 */
static void lease_send_wait(lease_t *l, lease_req_kind_t kind, int slot, int64_t epoch,
                            long long inuse, int64_t sent)
{
    lease_req_t *req = lease_req_new(l, kind);
    req->sent_boot_ms = sent; /* the validity counts from the write, not from the WAIT */
    req->slot = slot;
    req->epoch = epoch;
    req->inuse = inuse;
    const char *argv[] = {"WAIT", l->wait_args[0], l->wait_args[1]};
    if (rconn_command_argv(l->rc, lease_wait_reply_cb, req, 3, argv, NULL) != 0)
        lease_wait_reply_cb(l->rc, NULL, req);
}

static void lease_send_acquire(lease_t *l)
{
    char ttl[16], size[16], start[16], floor[24];
    snprintf(ttl, sizeof ttl, "%d", l->ttl_ms);
    snprintf(size, sizeof size, "%d", l->size);
    snprintf(start, sizeof start, "%" PRIu32, arc4random_uniform((uint32_t)l->size));
    snprintf(floor, sizeof floor, "%" PRId64, l->seen_epoch);
    const char *argv[] = {l->epoch_key, l->slot_prefix, l->token, ttl, size, start, floor};
    lease_req_t *req = lease_req_new(l, LEASE_REQ_ACQUIRE);
    int err = rconn_eval(l->rc, l->acquire_script, lease_acquire_reply_cb, req, 1, 7, argv, NULL);
    if (err != 0) {
        LIST_REMOVE(req, _link);
        free(req);
        lease_arm_ms(l->acquire_ev, err == -ENOTCONN ? lease_poll_ms(l) : lease_retry_delay(l));
    }
}

static void lease_acquire_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    lease_t *l = arg;
    if (l->state == LEASE_ACQUIRING || l->state == LEASE_EXHAUSTED)
        lease_send_acquire(l);
}

/* Records a confirmation of the slot by a command sent at sent_ms and re-arms the validity. */
static void lease_confirm(lease_t *l, int64_t sent_ms)
{
    int64_t until = sent_ms + l->ttl_ms - l->margin_ms;
    if (until > l->valid_until_boot_ms)
        l->valid_until_boot_ms = until;
    lease_arm_ms(l->validity_ev, l->valid_until_boot_ms - clock_boot_ms());
}

static void lease_acquire_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    int64_t sent;
    lease_t *l = lease_req_done(arg, &sent);
    if (l == NULL)
        return;
    if (l->state == LEASE_RELEASED) {
        /* Released while this acquisition was in flight: give back what it may have taken. */
        if (reply != NULL && reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 &&
            reply->element[0]->type == REDIS_REPLY_INTEGER && reply->element[0]->integer >= 0) {
            char key[160];
            lease_format_slot_key(l->service, (int)reply->element[0]->integer, key, sizeof key);
            const char *argv[] = {key, l->token};
            rconn_eval(l->rc, l->release_script, NULL, NULL, 1, 2, argv, NULL);
        }
        return;
    }
    if (l->state != LEASE_ACQUIRING && l->state != LEASE_EXHAUSTED)
        return;
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
        reply->element[0]->type != REDIS_REPLY_INTEGER) {
        if (reply != NULL)
            log_emit(LOG_ERROR, "lease_acquire_failed", "{s:s,s:s}", "service", l->service, "error",
                     reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
        lease_arm_ms(l->acquire_ev, lease_retry_delay(l));
        return;
    }
    long long slot = reply->element[0]->integer;
    metrics_set(l->m_in_use, (double)reply->element[2]->integer);
    if (slot < 0) {
        int64_t delay = lease_retry_delay(l);
        metrics_add(l->m_exhausted, 1);
        lease_set_state(l, LEASE_EXHAUSTED);
        if (!l->exhausted_logged) {
            l->exhausted_logged = true;
            log_emit(LOG_ERROR, "lease_pool_exhausted", "{s:s,s:i,s:I,s:s,s:s,s:I}", "service",
                     l->service, "pool_size", l->size, "in_use",
                     (json_int_t)reply->element[2]->integer, "rule", LEASE_RULE, "msg",
                     "every server-ID slot of the pool is held; staying unready and retrying "
                     "(never a static ID). Size the pool so that " LEASE_RULE,
                     "retry_ms", (json_int_t)delay);
        }
        lease_arm_ms(l->acquire_ev, delay);
        lease_emit(l, LEASE_EV_EXHAUSTED); /* last: the owner may destroy the lease */
        return;
    }
    int64_t epoch = reply->element[1]->integer;
    lease_note_epoch(l, epoch);
    if (l->opts.min_replicas > 0) {
        lease_send_wait(l, LEASE_REQ_WAIT_ACQUIRE, (int)slot, epoch, reply->element[2]->integer,
                        sent);
        return;
    }
    lease_apply_acquired(l, (int)slot, epoch, sent);
}

/* The acquisition of slot (sent at sent) counts: the lease is VALID under epoch. */
static void lease_apply_acquired(lease_t *l, int slot, int64_t epoch, int64_t sent)
{
    l->slot = slot;
    l->epoch = epoch;
    l->attempts = 0;
    l->exhausted_logged = false;
    lease_format_slot_key(l->service, l->slot, l->slot_key, sizeof l->slot_key);
    lease_format_fence_key(l->service, l->slot, l->fence_key, sizeof l->fence_key);
    metrics_set(l->m_epoch, (double)l->epoch);
    lease_set_state(l, LEASE_VALID);
    l->valid_until_boot_ms = 0;
    lease_confirm(l, sent);
    lease_arm_ms(l->renew_ev, l->ttl_ms / 3);
    log_emit(LOG_INFO, "lease_acquired", "{s:s,s:i,s:I,s:i}", "service", l->service, "slot",
             l->slot, "epoch", (json_int_t)l->epoch, "ttl_ms", l->ttl_ms);
    lease_emit(l, LEASE_EV_ACQUIRED);
}

static void lease_renew_reply_cb(rconn_t *rc, redisReply *reply, void *arg);

static void lease_renew_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    lease_t *l = arg;
    if (l->state != LEASE_VALID && l->state != LEASE_UNCONFIRMED)
        return;
    lease_arm_ms(l->renew_ev, l->ttl_ms / 3);
    if (l->renew_inflight)
        return; /* the previous one is still waiting (its request timeout bounds the wait) */
    char ttl[16], size[16], epoch[24], floor[24];
    snprintf(ttl, sizeof ttl, "%d", l->ttl_ms);
    snprintf(size, sizeof size, "%d", l->size);
    snprintf(epoch, sizeof epoch, "%" PRId64, l->epoch);
    snprintf(floor, sizeof floor, "%" PRId64, l->seen_epoch);
    const char *argv[] = {l->slot_key,    l->epoch_key, l->fence_key, l->token, ttl,
                          l->slot_prefix, size,         epoch,        floor};
    lease_req_t *req = lease_req_new(l, LEASE_REQ_RENEW);
    int err = rconn_eval(l->rc, l->renew_script, lease_renew_reply_cb, req, 3, 9, argv, NULL);
    if (err != 0) {
        LIST_REMOVE(req, _link);
        free(req);
        metrics_add(l->m_renew_error, 1);
        lease_arm_ms(l->renew_ev, lease_poll_ms(l)); /* ask again as soon as Redis is back */
        return;
    }
    l->renew_inflight = true;
}

static void lease_lose(lease_t *l)
{
    lease_set_state(l, LEASE_LOST);
    evtimer_del(l->renew_ev);
    evtimer_del(l->validity_ev);
    metrics_add(l->m_renew_lost, 1);
    log_emit(LOG_ERROR, "lease_lost", "{s:s,s:i,s:I,s:s}", "service", l->service, "slot", l->slot,
             "epoch", (json_int_t)l->epoch, "msg",
             "another process holds this server ID: stop intake and exit (fail fast)");
    lease_emit(l, LEASE_EV_LOST);
}

/*
 * Applies the renew script's verdict. A NULL or error reply changes nothing (the validity
 * timer will say UNCONFIRMED if Redis stays silent). Ours extends the validity from the send
 * time; a vanished key was taken back with a new epoch (a gap); another owner means LOST.
 */
static void lease_renew_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    int64_t sent;
    lease_t *l = lease_req_done(arg, &sent);
    if (l == NULL)
        return;
    l->renew_inflight = false;
    if (l->state != LEASE_VALID && l->state != LEASE_UNCONFIRMED)
        return;
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
        reply->element[0]->type != REDIS_REPLY_INTEGER) {
        metrics_add(l->m_renew_error, 1);
        /* No answer (a request timeout, a dropped connection: a failover): send it again as
         * soon as Redis answers, not at the next tick -- a replica promoted meanwhile confirms
         * the lease before the fence (docs/queues.md "A server cut off from Redis"). */
        if (reply == NULL)
            lease_arm_ms(l->renew_ev, lease_poll_ms(l));
        if (reply != NULL)
            log_emit(LOG_ERROR, "lease_renew_failed", "{s:s,s:s}", "service", l->service, "error",
                     reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
        return;
    }
    long long verdict = reply->element[0]->integer;
    if (verdict == 0) {
        lease_lose(l);
        return;
    }
    metrics_set(l->m_in_use, (double)reply->element[2]->integer);
    int64_t fence = reply->element[1]->integer;
    lease_note_epoch(l, fence);
    if (l->opts.min_replicas > 0 && fence != l->epoch && (verdict == 2 || fence > 0)) {
        /* A new epoch (just taken, or taken by an earlier renew whose WAIT fell short: the key
         * is ours, so nobody else moved the fence) counts only once replicated. */
        l->renew_inflight = true;
        lease_send_wait(l, LEASE_REQ_WAIT_REGAIN, l->slot, fence, reply->element[2]->integer, sent);
        return;
    }
    if (verdict == 2 && fence != l->epoch) {
        lease_apply_regained(l, fence, sent);
        return;
    }
    bool was_unconfirmed = l->state == LEASE_UNCONFIRMED;
    lease_confirm(l, sent);
    bool now_valid = l->valid_until_boot_ms > clock_boot_ms();
    if (verdict == 2) {
        l->gaps++;
        metrics_add(l->m_gaps, 1);
        metrics_add(l->m_renew_regained, 1);
        metrics_set(l->m_epoch, (double)l->epoch);
        if (now_valid)
            lease_set_state(l, LEASE_VALID);
        log_emit(LOG_WARN, "lease_regained", "{s:s,s:i,s:I,s:I}", "service", l->service, "slot",
                 l->slot, "epoch", (json_int_t)l->epoch, "gaps", (json_int_t)l->gaps);
        lease_emit(l, LEASE_EV_REGAINED);
        return;
    }
    metrics_add(l->m_renew_ok, 1);
    if (was_unconfirmed && now_valid) {
        lease_set_state(l, LEASE_VALID);
        log_emit(LOG_INFO, "lease_confirmed", "{s:s,s:i,s:I}", "service", l->service, "slot",
                 l->slot, "epoch", (json_int_t)l->epoch);
        lease_emit(l, LEASE_EV_CONFIRMED);
    } else if (now_valid) {
        lease_emit(l, LEASE_EV_RENEWED);
    }
}

/* A renew took the vanished slot back under a new epoch (sent at sent): a gap; VALID. */
static void lease_apply_regained(lease_t *l, int64_t epoch, int64_t sent)
{
    lease_confirm(l, sent);
    l->gaps++;
    l->epoch = epoch;
    metrics_add(l->m_gaps, 1);
    metrics_add(l->m_renew_regained, 1);
    metrics_set(l->m_epoch, (double)l->epoch);
    if (l->valid_until_boot_ms > clock_boot_ms())
        lease_set_state(l, LEASE_VALID);
    log_emit(LOG_WARN, "lease_regained", "{s:s,s:i,s:I,s:I}", "service", l->service, "slot",
             l->slot, "epoch", (json_int_t)l->epoch, "gaps", (json_int_t)l->gaps);
    lease_emit(l, LEASE_EV_REGAINED);
}

/*
 * Answer to the WAIT behind a new epoch. Enough replicas: the acquisition or regain counts
 * now. Fewer (or an error, or no answer): the epoch is not used; an acquisition is tried again
 * after the retry delay (it takes the same slot back under a newer epoch, lifted above every
 * epoch seen), a regain is confirmed by the next renew.
 */
static void lease_wait_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    lease_req_t *req = arg;
    lease_req_kind_t kind = req->kind;
    int slot = req->slot;
    int64_t epoch = req->epoch;
    long long inuse = req->inuse;
    int64_t sent;
    lease_t *l = lease_req_done(req, &sent);
    if (l == NULL)
        return;
    if (kind == LEASE_REQ_WAIT_REGAIN)
        l->renew_inflight = false;
    if (l->state == LEASE_RELEASED) {
        if (kind == LEASE_REQ_WAIT_ACQUIRE) { /* give back what the acquisition took */
            char key[160];
            lease_format_slot_key(l->service, slot, key, sizeof key);
            const char *argv[] = {key, l->token};
            rconn_eval(l->rc, l->release_script, NULL, NULL, 1, 2, argv, NULL);
        }
        return;
    }
    if (reply != NULL && reply->type == REDIS_REPLY_INTEGER &&
        reply->integer >= l->opts.min_replicas) {
        if (kind == LEASE_REQ_WAIT_ACQUIRE &&
            (l->state == LEASE_ACQUIRING || l->state == LEASE_EXHAUSTED)) {
            metrics_set(l->m_in_use, (double)inuse);
            lease_apply_acquired(l, slot, epoch, sent);
        } else if (kind == LEASE_REQ_WAIT_REGAIN &&
                   (l->state == LEASE_VALID || l->state == LEASE_UNCONFIRMED)) {
            lease_apply_regained(l, epoch, sent);
        }
        return;
    }
    char reason[200];
    if (reply == NULL)
        snprintf(reason, sizeof reason, "no reply to WAIT (connection lost or request timeout)");
    else if (reply->type == REDIS_REPLY_INTEGER)
        snprintf(reason, sizeof reason, "WAIT reached %lld of %d replicas within %s ms",
                 reply->integer, l->opts.min_replicas, l->wait_args[1]);
    else
        snprintf(reason, sizeof reason, "WAIT refused: %.150s",
                 reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
    metrics_add(l->m_wait_short, 1);
    log_emit(LOG_ERROR, "lease_not_durable", "{s:s,s:i,s:I,s:s,s:s}", "service", l->service, "slot",
             slot, "epoch", (json_int_t)epoch, "reason", reason, "msg",
             kind == LEASE_REQ_WAIT_ACQUIRE
                 ? "the new epoch is not used: the acquisition is tried again"
                 : "the new epoch is not used yet: the next renew confirms it");
    if (kind == LEASE_REQ_WAIT_ACQUIRE &&
        (l->state == LEASE_ACQUIRING || l->state == LEASE_EXHAUSTED))
        lease_arm_ms(l->acquire_ev, lease_retry_delay(l));
}

static void lease_validity_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    lease_t *l = arg;
    if (l->state != LEASE_VALID)
        return;
    int64_t left = l->valid_until_boot_ms - clock_boot_ms();
    if (left > 0) {
        lease_arm_ms(l->validity_ev, left);
        return;
    }
    lease_set_state(l, LEASE_UNCONFIRMED);
    log_emit(LOG_WARN, "lease_unconfirmed", "{s:s,s:i,s:I,s:s}", "service", l->service, "slot",
             l->slot, "epoch", (json_int_t)l->epoch, "msg",
             "Redis has not confirmed the lease within its validity: unready, no new desks");
    lease_emit(l, LEASE_EV_UNCONFIRMED);
}

/*
 * Validates options, draws the token, formats the key names, prepares timers, scripts and
 * metric handles. Nothing is sent before lease_start().
 */
lease_t *lease_create(struct event_base *base, rconn_t *rc, const lease_opts_t *opts)
{
    if (base == NULL || rc == NULL || opts == NULL || !lease_service_ok(opts->service) ||
        opts->pool_size < 1 || opts->pool_size > 100000 || opts->ttl_ms < 30 ||
        opts->margin_ms < 0 || (opts->margin_ms > 0 && opts->margin_ms >= opts->ttl_ms / 3)) {
        errno = EINVAL;
        return NULL;
    }
    lease_t *l = xcalloc(1, sizeof *l);
    l->base = base;
    l->rc = rc;
    l->opts = *opts;
    snprintf(l->service, sizeof l->service, "%s", opts->service);
    l->opts.service = l->service;
    l->size = opts->pool_size;
    l->ttl_ms = opts->ttl_ms;
    l->margin_ms = opts->margin_ms > 0 ? opts->margin_ms : opts->ttl_ms / 10;
    l->slot = -1;
    LIST_INIT(&l->reqs);
    arc4random_buf(l->token_raw, sizeof l->token_raw);
    for (size_t i = 0; i < sizeof l->token_raw; i++)
        snprintf(l->token + 2 * i, 3, "%02x", l->token_raw[i]);
    char lt[160];
    snprintf(l->slot_prefix, sizeof l->slot_prefix,
             "%s:slot:", keytag_lease(lt, sizeof lt, l->service));
    /* The WAIT bound stays well inside the connection's request timeout (at most ttl/3). */
    int wait_ms = opts->wait_timeout_ms > 0 ? opts->wait_timeout_ms : 500;
    if (wait_ms > opts->ttl_ms / 6)
        wait_ms = opts->ttl_ms / 6 > 0 ? opts->ttl_ms / 6 : 1;
    snprintf(l->wait_args[0], sizeof l->wait_args[0], "%d",
             opts->min_replicas > 0 ? opts->min_replicas : 0);
    snprintf(l->wait_args[1], sizeof l->wait_args[1], "%d", wait_ms);
    lease_format_epoch_key(l->service, l->epoch_key, sizeof l->epoch_key);

    l->acquire_ev = evtimer_new(base, lease_acquire_timer_cb, l);
    l->renew_ev = evtimer_new(base, lease_renew_timer_cb, l);
    l->validity_ev = evtimer_new(base, lease_validity_timer_cb, l);
    if (l->acquire_ev == NULL || l->renew_ev == NULL || l->validity_ev == NULL)
        goto fail_events;
    l->acquire_script = rconn_script_create(lease_acquire_lua);
    l->renew_script = rconn_script_create(lease_renew_lua);
    l->release_script = rconn_script_create(lease_release_lua);
    l->fenced_script = rconn_script_create(LEASE_FENCED_SET_LUA);

    metrics_registry_t *m = opts->metrics;
    if (m == NULL)
        m = l->own_metrics = metrics_create();
    const char *h = "Lease renewals by result";
    l->m_renew_ok = metrics_counter(m, "lease_renew_total", "result=\"ok\"", h);
    l->m_renew_regained = metrics_counter(m, "lease_renew_total", "result=\"regained\"", h);
    l->m_renew_lost = metrics_counter(m, "lease_renew_total", "result=\"lost\"", h);
    l->m_renew_error = metrics_counter(m, "lease_renew_total", "result=\"error\"", h);
    l->m_in_use = metrics_gauge(m, "lease_pool_in_use", NULL, "Slots of the lease pool in use");
    l->m_epoch = metrics_gauge(m, "lease_epoch", NULL, "Fencing epoch of the held lease");
    l->m_gaps = metrics_counter(m, "lease_gaps_total", NULL,
                                "Times the lease key vanished and was taken back");
    l->m_exhausted = metrics_counter(m, "lease_exhausted_total", NULL,
                                     "Acquisition attempts that found the pool full");
    l->m_valid = metrics_gauge(m, "lease_valid", NULL, "1 while the lease is held and confirmed");
    l->m_wait_short = metrics_counter(m, "lease_wait_short_total", NULL,
                                      "New epochs not used because WAIT reached fewer replicas "
                                      "than required");
    return l;

fail_events:
    if (l->acquire_ev)
        event_free(l->acquire_ev);
    if (l->renew_ev)
        event_free(l->renew_ev);
    if (l->validity_ev)
        event_free(l->validity_ev);
    free(l);
    errno = ENOMEM;
    return NULL;
}

int lease_start(lease_t *l)
{
    if (l->started)
        return -EALREADY;
    l->started = true;
    lease_set_state(l, LEASE_ACQUIRING);
    lease_arm_ms(l->acquire_ev, 0);
    return 0;
}

static void lease_release_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    int64_t sent;
    lease_t *l = lease_req_done(arg, &sent);
    if (l == NULL)
        return;
    int result;
    if (reply == NULL)
        result = -ETIMEDOUT;
    else if (reply->type == REDIS_REPLY_INTEGER)
        result = reply->integer == 1 ? 0 : -ENOENT;
    else
        result = -EIO;
    log_emit(result == 0 ? LOG_INFO : LOG_WARN, "lease_released", "{s:s,s:i,s:I,s:i}", "service",
             l->service, "slot", l->slot, "epoch", (json_int_t)l->epoch, "result", result);
    lease_done_cb done = l->release_done;
    l->release_done = NULL;
    if (done != NULL)
        done(l, result, l->release_arg);
}

/*
 * Stops every timer, marks the lease RELEASED and sends the compare-and-delete when a slot is
 * held (also from UNCONFIRMED: if the key is still ours it goes, otherwise nothing happens).
 */
void lease_release(lease_t *l, lease_done_cb done, void *arg)
{
    lease_state_t was = l->state;
    evtimer_del(l->acquire_ev);
    evtimer_del(l->renew_ev);
    evtimer_del(l->validity_ev);
    lease_set_state(l, LEASE_RELEASED);
    if (!l->started || l->slot < 0 || was == LEASE_LOST || was == LEASE_RELEASED ||
        was == LEASE_ACQUIRING || was == LEASE_EXHAUSTED) {
        if (done != NULL)
            done(l, (l->slot < 0 || was == LEASE_ACQUIRING || was == LEASE_EXHAUSTED) ? 0 : -ENOENT,
                 arg);
        return;
    }
    l->release_done = done;
    l->release_arg = arg;
    const char *argv[] = {l->slot_key, l->token};
    lease_req_t *req = lease_req_new(l, LEASE_REQ_RELEASE);
    int err = rconn_eval(l->rc, l->release_script, lease_release_reply_cb, req, 1, 2, argv, NULL);
    if (err != 0) {
        LIST_REMOVE(req, _link);
        free(req);
        l->release_done = NULL;
        log_emit(LOG_WARN, "lease_released", "{s:s,s:i,s:i,s:s}", "service", l->service, "slot",
                 l->slot, "result", err, "msg", "Redis unavailable: the key expires by itself");
        if (done != NULL)
            done(l, err, arg);
    }
}

void lease_destroy(lease_t *l)
{
    if (l == NULL)
        return;
    lease_req_t *req;
    while ((req = LIST_FIRST(&l->reqs)) != NULL) {
        LIST_REMOVE(req, _link);
        req->l = NULL; /* freed by its reply callback */
    }
    event_free(l->acquire_ev);
    event_free(l->renew_ev);
    event_free(l->validity_ev);
    rconn_script_destroy(l->acquire_script);
    rconn_script_destroy(l->renew_script);
    rconn_script_destroy(l->release_script);
    rconn_script_destroy(l->fenced_script);
    metrics_destroy(l->own_metrics);
    free(l);
}

lease_state_t lease_state(const lease_t *l)
{
    return l->state;
}

int lease_slot(const lease_t *l)
{
    return l->slot;
}

int64_t lease_epoch(const lease_t *l)
{
    return l->epoch;
}

uint64_t lease_gaps(const lease_t *l)
{
    return l->gaps;
}

const char *lease_service(const lease_t *l)
{
    return l->service;
}

int lease_ttl_ms(const lease_t *l)
{
    return l->ttl_ms;
}

int lease_margin_ms(const lease_t *l)
{
    return l->margin_ms;
}

const char *lease_token(const lease_t *l)
{
    return l->token;
}

int lease_fenced_set(lease_t *l, const char *key, const char *value, size_t len, rconn_reply_cb cb,
                     void *arg)
{
    if (l->slot < 0 || l->epoch <= 0)
        return -ENOENT;
    if (key == NULL || value == NULL)
        return -EINVAL;
    char epoch[24];
    snprintf(epoch, sizeof epoch, "%" PRId64, l->epoch);
    const char *argv[] = {l->fence_key, key, epoch, value};
    size_t lens[] = {strlen(l->fence_key), strlen(key), strlen(epoch), len};
    return rconn_eval(l->rc, l->fenced_script, cb, arg, 2, 4, argv, lens);
}
