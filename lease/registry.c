#include "registry.h"

#include <bsd/string.h>
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

/*
 * put: KEYS = fence key, entry key, members key; ARGV = epoch, entry JSON, ttl, id, channel.
 * Unchanged entry -> PEXPIRE only (0); new or changed -> SET PX + SADD + PUBLISH (1).
 */
static const char registry_put_lua[] = LEASE_FENCE_CHECK_LUA
    "local cur = redis.call('GET', KEYS[2])\n"
    "if cur == ARGV[2] then redis.call('PEXPIRE', KEYS[2], ARGV[3]) return 0 end\n"
    "redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])\n"
    "redis.call('SADD', KEYS[3], ARGV[4])\n"
    "redis.call('PUBLISH', ARGV[5], ARGV[2])\n"
    "return 1\n";

/* del: KEYS = fence key, entry key, members key; ARGV = epoch, id, channel, message. */
static const char registry_del_lua[] =
    LEASE_FENCE_CHECK_LUA "redis.call('DEL', KEYS[2])\n"
                          "redis.call('SREM', KEYS[3], ARGV[2])\n"
                          "redis.call('PUBLISH', ARGV[3], ARGV[4])\n"
                          "return 1\n";

/* read all: KEYS[1] = members key, ARGV[1] = entry key prefix. Drops members whose entry
 * expired. Returns the entries' JSON strings. */
static const char registry_read_lua[] =
    "local out = {}\n"
    "for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do\n"
    "  local v = redis.call('GET', ARGV[1] .. id)\n"
    "  if v then out[#out + 1] = v else redis.call('SREM', KEYS[1], id) end\n"
    "end\n"
    "return out\n";

const char *registry_state_name(registry_state_t s)
{
    return s == REGISTRY_DRAINING ? "draining" : "ready";
}

static int registry_copy(char *dst, size_t cap, const char *src)
{
    if (src == NULL)
        src = "";
    return strlcpy(dst, src, cap) < cap ? 0 : -EINVAL;
}

/* ---- entry JSON ---------------------------------------------------------------------------- */

static char *registry_entry_json(const registry_entry_t *e)
{
    json_t *o = json_pack(
        "{s:s,s:s,s:i,s:s,s:s,s:i,s:s,s:s,s:s,s:I,s:I,s:I}", "id", e->id, "service", e->service,
        "slot", e->slot, "address", e->address, "engine", e->engine, "engine_id", e->engine_id,
        "games", e->games, "version", e->version, "state", registry_state_name(e->state), "load",
        (json_int_t)e->load, "epoch", (json_int_t)e->epoch, "seq", (json_int_t)e->seq);
    if (o != NULL && e->admin[0] != '\0')
        json_object_set_new(o, "admin", json_string(e->admin));
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

static int registry_json_str(json_t *o, const char *k, char *dst, size_t cap, bool required)
{
    json_t *v = json_object_get(o, k);
    if (v == NULL)
        return required ? -EINVAL : registry_copy(dst, cap, "");
    if (!json_is_string(v))
        return -EINVAL;
    return registry_copy(dst, cap, json_string_value(v));
}

static int registry_json_int(json_t *o, const char *k, int64_t *out)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v))
        return -EINVAL;
    *out = json_integer_value(v);
    return 0;
}

/* Fills out from a parsed entry object; 0 or -EINVAL (out untouched). o is not consumed. */
static int registry_entry_from_json(json_t *o, registry_entry_t *out)
{
    registry_entry_t e;
    memset(&e, 0, sizeof e);
    int64_t slot = 0, engine_id = 0;
    char state[16];
    int err = 0;
    if (!json_is_object(o) || registry_json_str(o, "id", e.id, sizeof e.id, true) ||
        e.id[0] == '\0' || registry_json_str(o, "service", e.service, sizeof e.service, false) ||
        registry_json_str(o, "address", e.address, sizeof e.address, true) ||
        registry_json_str(o, "engine", e.engine, sizeof e.engine, true) ||
        registry_json_str(o, "games", e.games, sizeof e.games, false) ||
        registry_json_str(o, "version", e.version, sizeof e.version, false) ||
        registry_json_str(o, "admin", e.admin, sizeof e.admin, false) ||
        registry_json_str(o, "state", state, sizeof state, true) ||
        registry_json_int(o, "slot", &slot) || registry_json_int(o, "load", &e.load) ||
        registry_json_int(o, "epoch", &e.epoch) || registry_json_int(o, "seq", &e.seq) ||
        (json_object_get(o, "engine_id") != NULL && registry_json_int(o, "engine_id", &engine_id)))
        err = -EINVAL;
    if (err == 0 && strcmp(state, "ready") == 0)
        e.state = REGISTRY_READY;
    else if (err == 0 && strcmp(state, "draining") == 0)
        e.state = REGISTRY_DRAINING;
    else
        err = -EINVAL;
    if (err == 0 && (slot < 0 || slot > 1000000))
        err = -EINVAL;
    if (err == 0 && (engine_id < 0 || engine_id > 1000))
        err = -EINVAL;
    e.slot = (int)slot;
    e.engine_id = (int)engine_id;
    if (err == 0)
        *out = e;
    return err;
}

int registry_entry_parse(const char *json, size_t len, registry_entry_t *out)
{
    json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
    if (o == NULL)
        return -EINVAL;
    int err = registry_entry_from_json(o, out);
    json_decref(o);
    return err;
}

/* ---- publisher ----------------------------------------------------------------------------- */

typedef struct registry_req {
    LIST_ENTRY(registry_req) _link;
    registry_t *r;
    bool is_del;
} registry_req_t;

struct registry {
    struct event_base *base;
    rconn_t *rc;
    lease_t *lease;
    registry_entry_t e;
    bool started, deregistered;
    uint64_t writes;
    struct event *tick_ev;
    rconn_script_t *put_script, *del_script;
    LIST_HEAD(, registry_req) reqs;
    registry_done_cb done;
    void *done_arg;
    registry_done_cb first_write; /* registry_on_first_write: once, then NULL */
    void *first_write_arg;
};

static void registry_tick_cb(evutil_socket_t fd, short what, void *arg);

/* Copies and checks the announced fields; nothing is written before registry_start(). */
registry_t *registry_create(struct event_base *base, rconn_t *rc, lease_t *lease,
                            const registry_info_t *info)
{
    if (base == NULL || rc == NULL || lease == NULL || info == NULL || info->address == NULL ||
        info->engine == NULL || info->engine[0] == '\0' || info->address[0] == '\0' ||
        info->engine_id < 0 || info->engine_id > 1000) {
        errno = EINVAL;
        return NULL;
    }
    registry_t *r = xcalloc(1, sizeof *r);
    r->base = base;
    r->rc = rc;
    r->lease = lease;
    if (registry_copy(r->e.address, sizeof r->e.address, info->address) ||
        registry_copy(r->e.engine, sizeof r->e.engine, info->engine) ||
        registry_copy(r->e.games, sizeof r->e.games, info->games ? info->games : info->engine) ||
        registry_copy(r->e.version, sizeof r->e.version, info->version) ||
        registry_copy(r->e.admin, sizeof r->e.admin, info->admin) ||
        registry_copy(r->e.service, sizeof r->e.service, lease_service(lease)))
        goto fail_info;
    r->e.engine_id = info->engine_id;
    r->e.state = REGISTRY_READY;
    LIST_INIT(&r->reqs);
    r->tick_ev = evtimer_new(base, registry_tick_cb, r);
    if (r->tick_ev == NULL)
        goto fail_info;
    r->put_script = rconn_script_create(registry_put_lua);
    r->del_script = rconn_script_create(registry_del_lua);
    return r;

fail_info:
    free(r);
    errno = EINVAL;
    return NULL;
}

static registry_t *registry_req_finish(registry_req_t *req)
{
    registry_t *r = req->r;
    if (r != NULL)
        LIST_REMOVE(req, _link);
    free(req);
    return r;
}

static void registry_put_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    registry_t *r = registry_req_finish(arg);
    if (r == NULL || reply == NULL)
        return; /* retried by the next tick */
    if (reply->type == REDIS_REPLY_INTEGER) {
        r->writes++;
        registry_done_cb cb = r->first_write;
        if (cb != NULL) {
            r->first_write = NULL;
            cb(r, 0, r->first_write_arg);
        }
        return;
    }
    log_emit(LOG_ERROR, "registry_write_failed", "{s:s,s:s}", "id", r->e.id, "error",
             reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
}

/*
 * Writes the entry as it is now, fenced by the lease epoch. Skipped while the lease is not
 * VALID: the entry then expires with its TTL, which is what gateways should see.
 */
static void registry_write(registry_t *r)
{
    if (!r->started || r->deregistered || lease_state(r->lease) != LEASE_VALID)
        return;
    if (lease_epoch(r->lease) != r->e.epoch) {
        r->e.epoch = lease_epoch(r->lease);
        r->e.seq++;
    }
    char *json = registry_entry_json(&r->e);
    char key[160], fence[160], epoch[24], ttl[16];
    snprintf(key, sizeof key, "%s%s", REGISTRY_KEY_PREFIX, r->e.id);
    lease_format_fence_key(r->e.service, r->e.slot, fence, sizeof fence);
    snprintf(epoch, sizeof epoch, "%" PRId64, r->e.epoch);
    snprintf(ttl, sizeof ttl, "%d", lease_ttl_ms(r->lease));
    const char *argv[] = {fence, key,     REGISTRY_MEMBERS_KEY, epoch, json,
                          ttl,   r->e.id, REGISTRY_CHANNEL};
    registry_req_t *req = xcalloc(1, sizeof *req);
    req->r = r;
    LIST_INSERT_HEAD(&r->reqs, req, _link);
    if (rconn_eval(r->rc, r->put_script, registry_put_reply_cb, req, 3, 8, argv, NULL) != 0) {
        LIST_REMOVE(req, _link);
        free(req);
    }
    free(json);
}

static void registry_tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    registry_t *r = arg;
    registry_write(r);
    int ms = lease_ttl_ms(r->lease) / 3;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(r->tick_ev, &tv);
}

int registry_start(registry_t *r)
{
    if (r->started)
        return -EALREADY;
    if (lease_slot(r->lease) < 0)
        return -ENOENT;
    r->started = true;
    r->e.slot = lease_slot(r->lease);
    snprintf(r->e.id, sizeof r->e.id, "%s:%d", r->e.service, r->e.slot);
    r->e.epoch = lease_epoch(r->lease);
    r->e.seq = 1;
    registry_tick_cb(-1, 0, r);
    return 0;
}

void registry_on_first_write(registry_t *r, registry_done_cb cb, void *arg)
{
    r->first_write = cb;
    r->first_write_arg = arg;
}

void registry_set_state(registry_t *r, registry_state_t s)
{
    if (r->e.state == s)
        return;
    r->e.state = s;
    r->e.seq++;
    registry_write(r);
}

void registry_set_load(registry_t *r, int64_t load)
{
    if (r->e.load == load)
        return;
    r->e.load = load;
    r->e.seq++;
}

void registry_refresh(registry_t *r)
{
    registry_write(r);
}

uint64_t registry_writes(const registry_t *r)
{
    return r->writes;
}

static void registry_del_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    registry_t *r = registry_req_finish(arg);
    if (r == NULL)
        return;
    int result = 0;
    if (reply == NULL)
        result = -ETIMEDOUT;
    else if (rconn_reply_is_error(reply, "STALE_EPOCH"))
        result = -ESTALE;
    else if (reply->type != REDIS_REPLY_INTEGER)
        result = -EIO;
    log_emit(result == 0 ? LOG_INFO : LOG_WARN, "registry_deregistered", "{s:s,s:i}", "id", r->e.id,
             "result", result);
    registry_done_cb done = r->done;
    r->done = NULL;
    if (done != NULL)
        done(r, result, r->done_arg);
}

/* Stops the refresh and sends the fenced delete + publish; done runs exactly once. */
void registry_deregister(registry_t *r, registry_done_cb done, void *arg)
{
    evtimer_del(r->tick_ev);
    bool was = r->started && !r->deregistered;
    r->deregistered = true;
    if (!was) {
        if (done != NULL)
            done(r, 0, arg);
        return;
    }
    r->e.seq++;
    json_t *m = json_pack("{s:s,s:s,s:I,s:I}", "op", "del", "id", r->e.id, "epoch",
                          (json_int_t)r->e.epoch, "seq", (json_int_t)r->e.seq);
    char *msg = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(m);
    char key[160], fence[160], epoch[24];
    snprintf(key, sizeof key, "%s%s", REGISTRY_KEY_PREFIX, r->e.id);
    lease_format_fence_key(r->e.service, r->e.slot, fence, sizeof fence);
    snprintf(epoch, sizeof epoch, "%" PRId64, r->e.epoch);
    const char *argv[] = {fence, key, REGISTRY_MEMBERS_KEY, epoch, r->e.id, REGISTRY_CHANNEL, msg};
    registry_req_t *req = xcalloc(1, sizeof *req);
    req->r = r;
    req->is_del = true;
    LIST_INSERT_HEAD(&r->reqs, req, _link);
    r->done = done;
    r->done_arg = arg;
    int err = rconn_eval(r->rc, r->del_script, registry_del_reply_cb, req, 3, 7, argv, NULL);
    free(msg);
    if (err != 0) {
        LIST_REMOVE(req, _link);
        free(req);
        r->done = NULL;
        if (done != NULL)
            done(r, err, arg);
    }
}

void registry_destroy(registry_t *r)
{
    if (r == NULL)
        return;
    registry_req_t *req;
    while ((req = LIST_FIRST(&r->reqs)) != NULL) {
        LIST_REMOVE(req, _link);
        req->r = NULL;
    }
    event_free(r->tick_ev);
    rconn_script_destroy(r->put_script);
    rconn_script_destroy(r->del_script);
    free(r);
}

/* ---- view ---------------------------------------------------------------------------------- */

typedef struct {
    registry_entry_t e;
    int64_t updated_ms; /* monotonic time of the last put applied or confirmed */
    uint64_t seen;      /* refresh generation that last contained it */
} registry_item_t;

typedef struct {
    char id[80];
    int64_t epoch, seq;
    int64_t until_ms;
} registry_tomb_t;

typedef struct {
    char engine[32];
    registry_state_t state;
    metrics_t *gauge;
} registry_gauge_t;

struct registry_view {
    struct event_base *base;
    registry_view_opts_t opts;
    rconn_t *cmd, *sub;
    rconn_script_t *read_script;
    struct event *refresh_ev;
    registry_item_t *items;
    size_t n, cap;
    registry_tomb_t *tombs;
    size_t ntombs, tombcap;
    registry_gauge_t *gauges;
    size_t ngauges;
    metrics_registry_t *own_metrics;
    uint64_t refreshes;
    uint64_t generation;
    bool refresh_inflight;
    int64_t *refresh_token; /* heap cell the in-flight read points at (NULL after destroy) */
};

static int registry_cmp_order(int64_t e1, int64_t s1, int64_t e2, int64_t s2)
{
    if (e1 != e2)
        return e1 < e2 ? -1 : 1;
    if (s1 != s2)
        return s1 < s2 ? -1 : 1;
    return 0;
}

static void registry_view_metrics(registry_view_t *v)
{
    if (v->opts.metrics == NULL)
        return;
    for (size_t i = 0; i < v->ngauges; i++)
        metrics_set(v->gauges[i].gauge, 0);
    for (size_t i = 0; i < v->n; i++) {
        const registry_entry_t *e = &v->items[i].e;
        registry_gauge_t *g = NULL;
        for (size_t k = 0; k < v->ngauges && g == NULL; k++)
            if (v->gauges[k].state == e->state && strcmp(v->gauges[k].engine, e->engine) == 0)
                g = &v->gauges[k];
        if (g == NULL) {
            char labels[128];
            snprintf(labels, sizeof labels, "engine=\"%s\",state=\"%s\"", e->engine,
                     registry_state_name(e->state));
            v->gauges = xreallocarray(v->gauges, v->ngauges + 1, sizeof *v->gauges);
            g = &v->gauges[v->ngauges++];
            strlcpy(g->engine, e->engine, sizeof g->engine);
            g->state = e->state;
            g->gauge = metrics_gauge(v->opts.metrics, "registry_servers", labels,
                                     "Game servers in the gateway's registry view");
        }
        metrics_add(g->gauge, 1);
    }
}

static void registry_view_notify(registry_view_t *v, const registry_entry_t *e, bool removed)
{
    if (v->opts.on_change != NULL)
        v->opts.on_change(v, e, removed, v->opts.arg);
}

static registry_item_t *registry_view_item(registry_view_t *v, const char *id)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->items[i].e.id, id) == 0)
            return &v->items[i];
    return NULL;
}

static void registry_view_remove_at(registry_view_t *v, size_t i)
{
    registry_entry_t old = v->items[i].e;
    v->items[i] = v->items[v->n - 1];
    v->n--;
    registry_view_metrics(v);
    registry_view_notify(v, &old, true);
}

/* Applies an entry read or received; older (epoch, seq) than what is known is ignored. */
static void registry_view_put(registry_view_t *v, const registry_entry_t *e, int64_t now)
{
    for (size_t i = 0; i < v->ntombs; i++) {
        registry_tomb_t *t = &v->tombs[i];
        if (strcmp(t->id, e->id) != 0)
            continue;
        if (t->until_ms > now && registry_cmp_order(e->epoch, e->seq, t->epoch, t->seq) <= 0)
            return;
        v->tombs[i] = v->tombs[--v->ntombs];
        break;
    }
    registry_item_t *it = registry_view_item(v, e->id);
    if (it != NULL) {
        int c = registry_cmp_order(e->epoch, e->seq, it->e.epoch, it->e.seq);
        if (c < 0)
            return;
        it->updated_ms = now;
        it->seen = v->generation;
        if (c == 0)
            return;
        it->e = *e;
    } else {
        if (v->n == v->cap) {
            v->cap = v->cap ? v->cap * 2 : 16;
            v->items = xreallocarray(v->items, v->cap, sizeof *v->items);
        }
        it = &v->items[v->n++];
        it->e = *e;
        it->updated_ms = now;
        it->seen = v->generation;
    }
    registry_view_metrics(v);
    registry_view_notify(v, &it->e, false);
}

static void registry_view_del(registry_view_t *v, const char *id, int64_t epoch, int64_t seq,
                              int64_t now)
{
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->items[i].e.id, id) != 0)
            continue;
        if (registry_cmp_order(epoch, seq, v->items[i].e.epoch, v->items[i].e.seq) < 0)
            return; /* a newer holder of the slot already registered */
        registry_view_remove_at(v, i);
        break;
    }
    /* Remember the deletion long enough that a full read sent before it cannot resurrect it. */
    int64_t until = now + 2 * v->opts.refresh_ms + v->opts.request_timeout_ms;
    size_t k = 0;
    for (size_t i = 0; i < v->ntombs; i++)
        if (v->tombs[i].until_ms > now && strcmp(v->tombs[i].id, id) != 0)
            v->tombs[k++] = v->tombs[i];
    v->ntombs = k;
    if (v->ntombs == v->tombcap) {
        v->tombcap = v->tombcap ? v->tombcap * 2 : 8;
        v->tombs = xreallocarray(v->tombs, v->tombcap, sizeof *v->tombs);
    }
    registry_tomb_t *t = &v->tombs[v->ntombs++];
    strlcpy(t->id, id, sizeof t->id);
    t->epoch = epoch;
    t->seq = seq;
    t->until_ms = until;
}

static void registry_view_message_cb(rconn_t *rc, const char *channel, const char *data, size_t len,
                                     void *arg)
{
    (void)rc;
    (void)channel;
    registry_view_t *v = arg;
    int64_t now = clock_mono_ms();
    json_t *o = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
    json_t *op = json_object_get(o, "op");
    if (json_is_string(op) && strcmp(json_string_value(op), "del") == 0) {
        json_t *id = json_object_get(o, "id");
        int64_t epoch, seq;
        if (json_is_string(id) && registry_json_int(o, "epoch", &epoch) == 0 &&
            registry_json_int(o, "seq", &seq) == 0)
            registry_view_del(v, json_string_value(id), epoch, seq, now);
        json_decref(o);
        return;
    }
    registry_entry_t e;
    if (o != NULL && registry_entry_from_json(o, &e) == 0)
        registry_view_put(v, &e, now);
    else
        log_emit(LOG_WARN, "registry_bad_message", "{s:i}", "len", (int)len);
    json_decref(o);
}

static void registry_view_read_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    int64_t *token = arg;
    registry_view_t *v = (registry_view_t *)(intptr_t)token[1];
    int64_t sent = token[0];
    free(token);
    if (v == NULL)
        return;
    v->refresh_inflight = false;
    v->refresh_token = NULL;
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY) {
        if (reply != NULL)
            log_emit(LOG_WARN, "registry_read_failed", "{s:s}", "error",
                     reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
        return;
    }
    int64_t now = clock_mono_ms();
    v->generation++;
    for (size_t i = 0; i < reply->elements; i++) {
        redisReply *el = reply->element[i];
        registry_entry_t e;
        if (el->type == REDIS_REPLY_STRING && registry_entry_parse(el->str, el->len, &e) == 0)
            registry_view_put(v, &e, now);
    }
    /* Gone from Redis (expired or deleted) and not updated since the read was sent. */
    for (size_t i = v->n; i-- > 0;)
        if (v->items[i].seen != v->generation && v->items[i].updated_ms < sent)
            registry_view_remove_at(v, i);
    v->refreshes++;
}

static void registry_view_refresh(registry_view_t *v)
{
    if (v->refresh_inflight)
        return;
    int64_t *token = xcalloc(2, sizeof *token);
    token[0] = clock_mono_ms();
    token[1] = (int64_t)(intptr_t)v;
    const char *argv[] = {REGISTRY_MEMBERS_KEY, REGISTRY_KEY_PREFIX};
    if (rconn_eval(v->cmd, v->read_script, registry_view_read_reply_cb, token, 1, 2, argv, NULL) !=
        0) {
        free(token);
        return;
    }
    v->refresh_inflight = true;
    v->refresh_token = token;
}

static void registry_view_refresh_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    registry_view_refresh(arg);
}

static void registry_view_state_cb(rconn_t *rc, bool connected, void *arg)
{
    (void)rc;
    if (connected)
        registry_view_refresh(arg); /* a reconnect may have missed messages */
}

registry_view_t *registry_view_create(struct event_base *base, const registry_view_opts_t *opts)
{
    if (base == NULL || opts == NULL || opts->host == NULL) {
        errno = EINVAL;
        return NULL;
    }
    registry_view_t *v = xcalloc(1, sizeof *v);
    v->base = base;
    v->opts = *opts;
    v->opts.host = NULL;
    v->opts.sentinels = NULL;
    v->opts.master_name = NULL;
    v->opts.cluster = NULL;
    if (v->opts.refresh_ms <= 0)
        v->opts.refresh_ms = 2000;
    if (v->opts.request_timeout_ms <= 0)
        v->opts.request_timeout_ms = 1000;
    rconn_opts_t ro = {.host = opts->host,
                       .port = opts->port,
                       .connect_timeout_ms = v->opts.request_timeout_ms,
                       .request_timeout_ms = v->opts.request_timeout_ms,
                       .backoff_min_ms = 50,
                       .backoff_max_ms = 2000,
                       .name = "registry",
                       .on_state = registry_view_state_cb,
                       .arg = v,
                       .sentinels = opts->sentinels,
                       .master_name = opts->master_name,
                       .cluster = opts->cluster};
    v->cmd = rconn_create(base, &ro);
    if (v->cmd == NULL)
        goto fail_cmd;
    ro.name = "registry_sub";
    v->sub = rconn_create(base, &ro);
    if (v->sub == NULL)
        goto fail_sub;
    rconn_subscribe(v->sub, REGISTRY_CHANNEL, registry_view_message_cb, v);
    v->read_script = rconn_script_create(registry_read_lua);
    v->refresh_ev = event_new(base, -1, EV_PERSIST, registry_view_refresh_timer_cb, v);
    struct timeval tv = {.tv_sec = v->opts.refresh_ms / 1000,
                         .tv_usec = (v->opts.refresh_ms % 1000) * 1000};
    event_add(v->refresh_ev, &tv);
    return v;

fail_sub:
    rconn_destroy(v->cmd);
fail_cmd:
    free(v);
    errno = EINVAL;
    return NULL;
}

void registry_view_destroy(registry_view_t *v)
{
    if (v == NULL)
        return;
    if (v->refresh_token != NULL)
        v->refresh_token[1] = 0; /* the read callback (run by rconn_destroy) ignores it */
    event_free(v->refresh_ev);
    rconn_destroy(v->sub);
    rconn_destroy(v->cmd);
    rconn_script_destroy(v->read_script);
    free(v->items);
    free(v->tombs);
    free(v->gauges);
    free(v);
}

static bool registry_games_has(const char *games, const char *game)
{
    size_t n = strlen(game);
    for (const char *p = games; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, game, n) == 0)
            return true;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return false;
}

const registry_entry_t *registry_pick(const registry_view_t *v, const char *engine,
                                      const char *game)
{
    const registry_entry_t *best = NULL;
    for (size_t i = 0; i < v->n; i++) {
        const registry_entry_t *e = &v->items[i].e;
        if (e->state != REGISTRY_READY || (engine != NULL && strcmp(e->engine, engine) != 0))
            continue;
        if (game != NULL && !registry_games_has(e->games, game))
            continue;
        if (best == NULL || e->load < best->load ||
            (e->load == best->load && strcmp(e->id, best->id) < 0))
            best = e;
    }
    return best;
}

size_t registry_view_size(const registry_view_t *v)
{
    return v->n;
}

const registry_entry_t *registry_view_at(const registry_view_t *v, size_t i)
{
    return i < v->n ? &v->items[i].e : NULL;
}

const registry_entry_t *registry_view_find(const registry_view_t *v, const char *id)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->items[i].e.id, id) == 0)
            return &v->items[i].e;
    return NULL;
}

uint64_t registry_view_refreshes(const registry_view_t *v)
{
    return v->refreshes;
}

const char *registry_members_key(void)
{
    return keytag_cluster() ? "{croupier:money}:registry:members" : "{croupier:registry}:members";
}

const char *registry_key_prefix(void)
{
    return keytag_cluster() ? "{croupier:money}:registry:server:" : "{croupier:registry}:server:";
}
