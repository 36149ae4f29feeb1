#include "sentinel.h"

#include <errno.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "rconn.h"
#include "xmalloc.h"

struct sentinel_set {
    size_t n;
    config_addr_t *addr;
    char master[128];
};

sentinel_set_t *sentinel_set_create(const char *list, const char *master, char *err, size_t errlen)
{
    if (list == NULL || list[0] == '\0') {
        snprintf(err, errlen, "no sentinel given (want HOST:PORT,...)");
        return NULL;
    }
    if (master == NULL || master[0] == '\0' || strlen(master) >= 128 ||
        strpbrk(master, " \t\r\n") != NULL) {
        snprintf(err, errlen, "bad master name \"%s\" (1-127 characters, no spaces)",
                 master ? master : "");
        return NULL;
    }
    sentinel_set_t *s = xcalloc(1, sizeof *s);
    snprintf(s->master, sizeof s->master, "%s", master);
    char *copy = xstrdup(list), *rest = copy, *item;
    size_t cap = 0;
    while ((item = strsep(&rest, ",")) != NULL) {
        config_addr_t a;
        if (item[0] == '\0' || config_parse_addr(item, &a) != 0 || a.port == 0) {
            snprintf(err, errlen, "bad sentinel address \"%s\" in \"%s\" (want IP:PORT)", item,
                     list);
            goto fail;
        }
        for (size_t i = 0; i < s->n; i++) {
            if (s->addr[i].port == a.port && strcmp(s->addr[i].host, a.host) == 0) {
                snprintf(err, errlen, "sentinel \"%s\" given twice", item);
                goto fail;
            }
        }
        if (s->n == cap) {
            cap = cap ? cap * 2 : 4;
            s->addr = xrealloc(s->addr, cap * sizeof *s->addr);
        }
        s->addr[s->n++] = a;
    }
    free(copy);
    return s;
fail:
    free(copy);
    sentinel_set_free(s);
    return NULL;
}

sentinel_set_t *sentinel_set_copy(const sentinel_set_t *s)
{
    sentinel_set_t *c = xcalloc(1, sizeof *c);
    *c = *s;
    c->addr = xcalloc(s->n, sizeof *c->addr);
    memcpy(c->addr, s->addr, s->n * sizeof *c->addr);
    return c;
}

void sentinel_set_free(sentinel_set_t *s)
{
    if (s == NULL)
        return;
    free(s->addr);
    free(s);
}

size_t sentinel_set_count(const sentinel_set_t *s)
{
    return s->n;
}

const char *sentinel_set_host(const sentinel_set_t *s, size_t i)
{
    return s->addr[i].host;
}

int sentinel_set_port(const sentinel_set_t *s, size_t i)
{
    return s->addr[i].port;
}

const char *sentinel_set_master(const sentinel_set_t *s)
{
    return s->master;
}

void sentinel_set_promote(sentinel_set_t *s, size_t i)
{
    if (i == 0 || i >= s->n)
        return;
    config_addr_t a = s->addr[i];
    memmove(&s->addr[1], &s->addr[0], i * sizeof *s->addr);
    s->addr[0] = a;
}

/*
 * Reads the answer to SENTINEL get-master-addr-by-name: a two-element array of IP and port.
 * Returns 0 and the address, or -1 with the reason in why.
 */
static int sentinel_read_addr(const redisReply *r, const sentinel_set_t *s, size_t i, char *host,
                              size_t hostlen, int *port, char *why, size_t whylen)
{
    const config_addr_t *a = &s->addr[i];
    if (r->type == REDIS_REPLY_NIL) {
        snprintf(why, whylen, "sentinel %s:%d does not know master \"%.64s\"", a->host, a->port,
                 s->master);
        return -1;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        snprintf(why, whylen, "sentinel %s:%d: %s", a->host, a->port, r->str);
        return -1;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING) {
        snprintf(why, whylen, "sentinel %s:%d: unexpected answer to get-master-addr-by-name",
                 a->host, a->port);
        return -1;
    }
    char text[160];
    config_addr_t m;
    const char *ip = r->element[0]->str;
    snprintf(text, sizeof text, strchr(ip, ':') ? "[%s]:%s" : "%s:%s", ip, r->element[1]->str);
    if (config_parse_addr(text, &m) != 0 || m.port == 0 || strlen(m.host) >= hostlen) {
        snprintf(why, whylen, "sentinel %s:%d gave a bad master address \"%.60s\"", a->host,
                 a->port, text);
        return -1;
    }
    snprintf(host, hostlen, "%s", m.host);
    *port = m.port;
    return 0;
}

static redisContext *sentinel_connect_sync(const char *host, int port, int timeout_ms)
{
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (c != NULL && c->err == 0 && redisSetTimeout(c, tv) == REDIS_OK)
        return c;
    if (c != NULL)
        redisFree(c);
    return NULL;
}

/* Whether a ROLE reply says master; otherwise the role (or the reason) is written to why. */
static bool sentinel_role_is_master(const redisReply *r, char *why, size_t whylen)
{
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
        r->element[0]->type == REDIS_REPLY_STRING) {
        if (strcasecmp(r->element[0]->str, "master") == 0)
            return true;
        snprintf(why, whylen, "role %.60s", r->element[0]->str);
        return false;
    }
    snprintf(why, whylen, "%s", r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "no answer");
    return false;
}

int sentinel_resolve_sync(sentinel_set_t *s, int timeout_ms, char *host, size_t hostlen, int *port,
                          char *err, size_t errlen)
{
    char why[512] = "";
    if (timeout_ms <= 0)
        timeout_ms = 500;
    for (size_t i = 0; i < s->n; i++) {
        const config_addr_t *a = &s->addr[i];
        redisContext *c = sentinel_connect_sync(a->host, a->port, timeout_ms);
        if (c == NULL) {
            snprintf(why, sizeof why, "sentinel %s:%d unreachable", a->host, a->port);
            continue;
        }
        redisReply *r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", s->master);
        char mhost[64];
        int mport = 0;
        int rc = -1;
        if (r == NULL)
            snprintf(why, sizeof why, "sentinel %s:%d: %s", a->host, a->port,
                     c->errstr[0] ? c->errstr : "no answer");
        else
            rc = sentinel_read_addr(r, s, i, mhost, sizeof mhost, &mport, why, sizeof why);
        freeReplyObject(r);
        redisFree(c);
        if (rc != 0)
            continue;
        redisContext *m = sentinel_connect_sync(mhost, mport, timeout_ms);
        if (m == NULL) {
            snprintf(why, sizeof why, "master %s:%d (from sentinel %s:%d) unreachable", mhost,
                     mport, a->host, a->port);
            continue;
        }
        r = redisCommand(m, "ROLE");
        char role[100];
        bool ok = sentinel_role_is_master(r, role, sizeof role);
        freeReplyObject(r);
        redisFree(m);
        if (!ok) {
            snprintf(why, sizeof why, "%s:%d (from sentinel %s:%d) is not a master: %.100s", mhost,
                     mport, a->host, a->port, role);
            continue;
        }
        sentinel_set_promote(s, i);
        snprintf(host, hostlen, "%s", mhost);
        *port = mport;
        return 0;
    }
    snprintf(err, errlen, "no master \"%.64s\" found through %zu sentinel(s): %s", s->master, s->n,
             why);
    return -ENOENT;
}

/* ---- asynchronous query ---------------------------------------------------------------- */

struct sentinel_query {
    struct event_base *base;
    sentinel_set_t *set;
    int timeout_ms;
    sentinel_query_cb cb;
    sentinel_quorum_cb qcb; /* set: a CKQUORUM query (sentinel_quorum_start) */
    void *arg;
    size_t idx;         /* sentinel being asked */
    rconn_t *conn;      /* connection to it */
    struct event *tmo;  /* bounds the attempt on this sentinel */
    struct event *done; /* zero timer: ends the query outside rconn callbacks */
    bool sent;
    bool ok;
    char host[64];
    int port;
    char why[512];
};

static void sentinel_query_try(sentinel_query_t *q);

static void sentinel_query_next(sentinel_query_t *q)
{
    rconn_t *c = q->conn;
    q->conn = NULL;   /* first: the destroy below runs pending callbacks with NULL */
    rconn_destroy(c); /* may be inside its callback: rconn defers the free */
    evtimer_del(q->tmo);
    q->idx++;
    q->sent = false;
    if (q->idx >= q->set->n) {
        event_active(q->done, EV_TIMEOUT, 0);
        return;
    }
    sentinel_query_try(q);
}

static void sentinel_query_reply_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    sentinel_query_t *q = arg;
    if (q->conn == NULL)
        return; /* destroyed by us: the NULL of the pending request */
    const config_addr_t *a = &q->set->addr[q->idx];
    if (reply == NULL) {
        snprintf(q->why, sizeof q->why, "sentinel %s:%d: no answer", a->host, a->port);
        sentinel_query_next(q);
        return;
    }
    if (q->qcb != NULL && (reply->type != REDIS_REPLY_STATUS || strncmp(reply->str, "OK", 2) != 0)) {
        /* NOQUORUM (or another refusal) from this one: another may see the quorum */
        snprintf(q->why, sizeof q->why, "sentinel %s:%d: %.400s", a->host, a->port,
                 reply->type == REDIS_REPLY_ERROR || reply->type == REDIS_REPLY_STATUS
                     ? reply->str
                     : "unexpected answer to CKQUORUM");
        sentinel_query_next(q);
        return;
    }
    if (q->qcb == NULL && sentinel_read_addr(reply, q->set, q->idx, q->host, sizeof q->host, &q->port, q->why,
                           sizeof q->why) != 0) {
        sentinel_query_next(q);
        return;
    }
    q->ok = true;
    rconn_t *c = q->conn;
    q->conn = NULL;
    rconn_destroy(c);
    evtimer_del(q->tmo);
    sentinel_set_promote(q->set, q->idx);
    event_active(q->done, EV_TIMEOUT, 0);
}

static void sentinel_query_state_cb(rconn_t *rc, bool connected, void *arg)
{
    sentinel_query_t *q = arg;
    if (rc != q->conn)
        return;
    const config_addr_t *a = &q->set->addr[q->idx];
    if (!connected) {
        snprintf(q->why, sizeof q->why, "sentinel %s:%d: connection lost", a->host, a->port);
        sentinel_query_next(q);
        return;
    }
    if (q->sent)
        return;
    const char *argv[] = {"SENTINEL", q->qcb != NULL ? "CKQUORUM" : "get-master-addr-by-name",
                          q->set->master};
    if (rconn_command_argv(rc, sentinel_query_reply_cb, q, 3, argv, NULL) != 0) {
        snprintf(q->why, sizeof q->why, "sentinel %s:%d: cannot send", a->host, a->port);
        sentinel_query_next(q);
        return;
    }
    q->sent = true;
}

static void sentinel_query_tmo_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    sentinel_query_t *q = arg;
    const config_addr_t *a = &q->set->addr[q->idx];
    const char *e = q->conn ? rconn_last_error(q->conn) : "";
    snprintf(q->why, sizeof q->why, "sentinel %s:%d: no answer within %d ms%s%s", a->host, a->port,
             2 * q->timeout_ms, e[0] ? ": " : "", e);
    sentinel_query_next(q);
}

static void sentinel_query_try(sentinel_query_t *q)
{
    const config_addr_t *a = &q->set->addr[q->idx];
    rconn_opts_t o = {
        .host = a->host,
        .port = a->port,
        .connect_timeout_ms = q->timeout_ms,
        .request_timeout_ms = q->timeout_ms,
        /* one attempt per sentinel: the retry would come after the attempt's deadline */
        .backoff_min_ms = 4 * q->timeout_ms,
        .backoff_max_ms = 4 * q->timeout_ms,
        .name = "sentinel",
        .quiet = true,
        .on_state = sentinel_query_state_cb,
        .arg = q,
    };
    q->conn = rconn_create(q->base, &o);
    if (q->conn == NULL) {
        snprintf(q->why, sizeof q->why, "sentinel %s:%d: cannot create a connection", a->host,
                 a->port);
        q->idx++;
        if (q->idx >= q->set->n)
            event_active(q->done, EV_TIMEOUT, 0);
        else
            sentinel_query_try(q);
        return;
    }
    int ms = 2 * q->timeout_ms;
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(q->tmo, &tv);
}

static void sentinel_query_free(sentinel_query_t *q)
{
    rconn_destroy(q->conn);
    event_free(q->tmo);
    event_free(q->done);
    free(q);
}

static void sentinel_query_done_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    sentinel_query_t *q = arg;
    if (q->qcb != NULL) {
        char err[768];
        snprintf(err, sizeof err, "no sentinel of %zu sees a quorum for master \"%.64s\": %s",
                 q->set->n, q->set->master, q->why);
        q->qcb(q->ok, q->ok ? NULL : err, q->arg);
    } else if (q->ok) {
        q->cb(q->host, q->port, NULL, q->arg);
    } else {
        char err[768];
        snprintf(err, sizeof err, "no sentinel of %zu knows master \"%.64s\": %s", q->set->n,
                 q->set->master, q->why);
        q->cb(NULL, 0, err, q->arg);
    }
    sentinel_query_free(q);
}

/* A query of either kind (cb: the master's address; qcb: CKQUORUM), started. */
static sentinel_query_t *sentinel_query_new(struct event_base *base, sentinel_set_t *s,
                                            int timeout_ms, sentinel_query_cb cb,
                                            sentinel_quorum_cb qcb, void *arg)
{
    sentinel_query_t *q = xcalloc(1, sizeof *q);
    q->base = base;
    q->set = s;
    q->timeout_ms = timeout_ms > 0 ? timeout_ms : 500;
    q->cb = cb;
    q->qcb = qcb;
    q->arg = arg;
    q->tmo = evtimer_new(base, sentinel_query_tmo_cb, q);
    q->done = evtimer_new(base, sentinel_query_done_cb, q);
    if (q->tmo == NULL || q->done == NULL)
        abort();
    sentinel_query_try(q);
    return q;
}

sentinel_query_t *sentinel_query_start(struct event_base *base, sentinel_set_t *s, int timeout_ms,
                                       sentinel_query_cb cb, void *arg)
{
    return sentinel_query_new(base, s, timeout_ms, cb, NULL, arg);
}

sentinel_query_t *sentinel_quorum_start(struct event_base *base, sentinel_set_t *s, int timeout_ms,
                                        sentinel_quorum_cb cb, void *arg)
{
    return sentinel_query_new(base, s, timeout_ms, NULL, cb, arg);
}

void sentinel_query_cancel(sentinel_query_t *q)
{
    if (q == NULL)
        return;
    rconn_t *c = q->conn;
    q->conn = NULL;
    rconn_destroy(c);
    event_free(q->tmo);
    event_free(q->done);
    free(q);
}

bool sentinel_parse_switch(const char *data, size_t len, const char *master, char *host,
                           size_t hostlen, int *port)
{
    char buf[512];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, data, len);
    buf[len] = '\0';
    char *f[5], *rest = buf, *tok;
    int n = 0;
    while (n < 5 && (tok = strsep(&rest, " ")) != NULL)
        if (tok[0] != '\0')
            f[n++] = tok;
    if (n != 5 || rest != NULL || strcmp(f[0], master) != 0)
        return false;
    char text[160];
    config_addr_t a;
    snprintf(text, sizeof text, strchr(f[3], ':') ? "[%s]:%s" : "%s:%s", f[3], f[4]);
    if (config_parse_addr(text, &a) != 0 || a.port == 0 || strlen(a.host) >= hostlen)
        return false;
    snprintf(host, hostlen, "%s", a.host);
    *port = a.port;
    return true;
}

int sentinel_flags_check(const char *sentinels, const char *master, char *err, size_t errlen)
{
    if (sentinels == NULL && master == NULL)
        return 0;
    if (sentinels == NULL || master == NULL) {
        snprintf(err, errlen, "--redis-sentinels and --redis-master go together");
        return -EINVAL;
    }
    char why[400];
    sentinel_set_t *s = sentinel_set_create(sentinels, master, why, sizeof why);
    if (s == NULL) {
        snprintf(err, errlen, "--redis-sentinels/--redis-master: %s", why);
        return -EINVAL;
    }
    sentinel_set_free(s);
    return 0;
}

int sentinel_connect_addr(const char *fixed_host, int fixed_port, const char *sentinels,
                          const char *master, int timeout_ms, char *host, size_t hostlen, int *port,
                          char *err, size_t errlen)
{
    if (sentinels == NULL) {
        snprintf(host, hostlen, "%s", fixed_host);
        *port = fixed_port;
        return 0;
    }
    sentinel_set_t *s = sentinel_set_create(sentinels, master, err, errlen);
    if (s == NULL)
        return -ENOENT;
    int rc = sentinel_resolve_sync(s, timeout_ms, host, hostlen, port, err, errlen);
    sentinel_set_free(s);
    return rc;
}
