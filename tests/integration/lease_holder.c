/*
 * lease_holder -- a small process that holds a server-ID lease and (optionally) a registry
 * entry on a libevent loop, the way croupier-game will. Integration tests start several of
 * them against a real redis-server and read their JSON log lines:
 *
 *   holder_event  {"lease_event":"acquired","state":"valid","slot":3,"epoch":7,"ready":true}
 *   holder_ready  {"ready":false,"state":"unconfirmed"}    (on every readiness change)
 *   fenced_write  {"ok":false,"epoch":7,"error":"STALE_EPOCH ..."}
 *   exit          {"reason":"lease_lost","msg":"exit reason=lease_lost"}  -> exit code 3
 *   exit          {"reason":"drained","msg":"exit reason=drained"}        -> exit code 0
 *
 * SIGUSR1 switches the registry entry to draining (the process stays). SIGTERM/SIGINT: entry
 * to draining, deregister, release the lease, exit drained. On LEASE_EV_LOST the holder makes
 * one last fenced write with its (now stale) epoch -- as a settlement writer flushing would --
 * logs its outcome and exits lease_lost.
 */
#include <errno.h>
#include <event2/event.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "lease.h"
#include "log.h"
#include "rconn.h"
#include "registry.h"

typedef struct {
    struct event_base *base;
    rconn_t *rc;
    lease_t *lease;
    registry_t *reg;
    bool register_entry;
    bool ready;
    bool stopping;
    int exit_code;
    const char *exit_reason;
    struct event *sigterm_ev, *sigint_ev, *sigusr1_ev, *deadline_ev;
} holder_t;

static void holder_exit(holder_t *h, const char *reason, int code)
{
    if (h->exit_reason != NULL)
        return;
    h->exit_reason = reason;
    h->exit_code = code;
    char msg[64];
    snprintf(msg, sizeof msg, "exit reason=%s", reason);
    log_emit(code == 0 ? LOG_INFO : LOG_ERROR, "exit", "{s:s,s:s}", "reason", reason, "msg", msg);
    event_base_loopbreak(h->base);
}

static void holder_update_ready(holder_t *h)
{
    bool ready = !h->stopping && lease_state(h->lease) == LEASE_VALID;
    if (ready == h->ready)
        return;
    h->ready = ready;
    log_emit(LOG_INFO, "holder_ready", "{s:b,s:s,s:i,s:I}", "ready", ready, "state",
             lease_state_name(lease_state(h->lease)), "slot", lease_slot(h->lease), "epoch",
             (json_int_t)lease_epoch(h->lease));
}

static void holder_last_write_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    holder_t *h = arg;
    bool ok = reply != NULL && reply->type == REDIS_REPLY_INTEGER;
    log_emit(LOG_INFO, "fenced_write", "{s:b,s:I,s:s}", "ok", ok, "epoch",
             (json_int_t)lease_epoch(h->lease), "error",
             reply == NULL                      ? "no reply"
             : reply->type == REDIS_REPLY_ERROR ? reply->str
                                                : "");
    holder_exit(h, "lease_lost", 3);
}

static void holder_lease_cb(lease_t *l, lease_event_t ev, void *arg)
{
    holder_t *h = arg;
    if (ev != LEASE_EV_RENEWED)
        log_emit(LOG_INFO, "holder_event", "{s:s,s:s,s:i,s:I,s:I}", "lease_event",
                 lease_event_name(ev), "state", lease_state_name(lease_state(l)), "slot",
                 lease_slot(l), "epoch", (json_int_t)lease_epoch(l), "gaps",
                 (json_int_t)lease_gaps(l));
    if (ev == LEASE_EV_ACQUIRED && h->register_entry && h->reg != NULL)
        registry_start(h->reg);
    holder_update_ready(h);
    if (ev == LEASE_EV_LOST) {
        /* Stop intake (readiness already false) and try the write a flushing settlement
         * writer would make: the fence must reject it. */
        char key[160];
        snprintf(key, sizeof key, "{croupier:lease:%s}:probe:%d", lease_service(l), lease_slot(l));
        char val[32];
        snprintf(val, sizeof val, "%d", (int)getpid());
        if (lease_fenced_set(l, key, val, strlen(val), holder_last_write_cb, h) != 0)
            holder_exit(h, "lease_lost", 3);
    }
}

static void holder_released_cb(lease_t *l, int result, void *arg)
{
    (void)l;
    (void)result;
    holder_exit(arg, "drained", 0);
}

static void holder_deregistered_cb(registry_t *r, int result, void *arg)
{
    (void)r;
    (void)result;
    holder_t *h = arg;
    lease_release(h->lease, holder_released_cb, h);
}

static void holder_sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    holder_t *h = arg;
    if (h->stopping)
        return;
    h->stopping = true;
    log_emit(LOG_INFO, "holder_stopping", "{s:i}", "signal", (int)sig);
    holder_update_ready(h);
    registry_set_state(h->reg, REGISTRY_DRAINING);
    registry_deregister(h->reg, holder_deregistered_cb, h);
    /* Bounded: if Redis never answers, still exit. */
    struct timeval tv = {.tv_sec = 5, .tv_usec = 0};
    evtimer_add(h->deadline_ev, &tv);
}

static void holder_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    holder_exit(arg, "drained", 0);
}

static void holder_sigusr1_cb(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    holder_t *h = arg;
    log_emit(LOG_INFO, "holder_draining", NULL);
    registry_set_state(h->reg, REGISTRY_DRAINING);
}

int main(int argc, char **argv)
{
    config_addr_t redis;
    const char *service = NULL, *address = NULL, *engine = NULL, *games = NULL, *version = NULL;
    long pool = 0, ttl = 0, load = 0, engine_id = 0;
    bool do_register = false;
    config_flag_t flags[] = {
        {"redis", CONFIG_ADDR, "127.0.0.1:6379", "Redis HOST:PORT", &redis, 0, 0},
        {"service", CONFIG_STR, "holder", "service name (lease pool)", &service, 0, 0},
        {"lease-pool-size", CONFIG_INT, "4", "SIZE of the pool", &pool, 1, 100000},
        {"ttl-ms", CONFIG_INT, "600", "lease TTL in milliseconds", &ttl, 30, 3600000},
        {"register", CONFIG_BOOL, "false", "publish a registry entry", &do_register, 0, 0},
        {"advertise", CONFIG_STR, "127.0.0.1:7000", "address in the registry", &address, 0, 0},
        {"engine", CONFIG_STR, "holdem", "engine in the registry", &engine, 0, 0},
        {"engine-id", CONFIG_INT, "2", "protocol engine number in the registry", &engine_id, 0,
         1000},
        {"games", CONFIG_STR, NULL, "games in the registry", &games, 0, 0},
        {"version", CONFIG_STR, "test", "version in the registry", &version, 0, 0},
        {"load", CONFIG_INT, "0", "load in the registry", &load, 0, 1000000},
        {0},
    };
    char err[256];
    int rcode = config_parse(flags, "lease_holder", "holds a server-ID lease (tests)", argc, argv,
                             err, sizeof err);
    if (rcode == CONFIG_HELP)
        return 0;
    if (rcode != CONFIG_OK) {
        fprintf(stderr, "lease_holder: %s\n", err);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    log_set_process("holder");

    holder_t h = {0};
    h.base = event_base_new();
    h.register_entry = do_register;
    int rto = (int)ttl / 3 < 50 ? 50 : (int)ttl / 3;
    rconn_opts_t ro = {.host = redis.host,
                       .port = redis.port,
                       .connect_timeout_ms = rto,
                       .request_timeout_ms = rto,
                       .backoff_min_ms = 20,
                       .backoff_max_ms = (int)ttl,
                       .name = "holder"};
    h.rc = rconn_create(h.base, &ro);
    if (h.rc == NULL) {
        log_emit(LOG_FATAL, "exit", "{s:s,s:s}", "reason", "fatal", "msg", "bad --redis");
        return 1;
    }
    lease_opts_t lo = {.service = service,
                       .pool_size = (int)pool,
                       .ttl_ms = (int)ttl,
                       .on_event = holder_lease_cb,
                       .arg = &h};
    h.lease = lease_create(h.base, h.rc, &lo);
    if (h.lease == NULL) {
        log_emit(LOG_FATAL, "exit", "{s:s,s:s}", "reason", "fatal", "msg", "bad lease options");
        return 1;
    }
    registry_info_t info = {
        .address = address,
        .engine = engine,
        .engine_id = (int)engine_id,
        .games = games,
        .version = version};
    h.reg = registry_create(h.base, h.rc, h.lease, &info);
    if (h.reg == NULL) {
        log_emit(LOG_FATAL, "exit", "{s:s,s:s}", "reason", "fatal", "msg", "bad registry info");
        return 1;
    }
    registry_set_load(h.reg, load);
    h.sigterm_ev = evsignal_new(h.base, SIGTERM, holder_sigterm_cb, &h);
    h.sigint_ev = evsignal_new(h.base, SIGINT, holder_sigterm_cb, &h);
    h.sigusr1_ev = evsignal_new(h.base, SIGUSR1, holder_sigusr1_cb, &h);
    h.deadline_ev = evtimer_new(h.base, holder_deadline_cb, &h);
    event_add(h.sigterm_ev, NULL);
    event_add(h.sigint_ev, NULL);
    event_add(h.sigusr1_ev, NULL);
    log_emit(LOG_INFO, "holder_started", "{s:s,s:i,s:i,s:i}", "service", service, "pool_size",
             (int)pool, "ttl_ms", (int)ttl, "pid", (int)getpid());
    holder_update_ready(&h);
    lease_start(h.lease);
    event_base_dispatch(h.base);

    registry_destroy(h.reg);
    lease_destroy(h.lease);
    rconn_destroy(h.rc);
    event_free(h.sigterm_ev);
    event_free(h.sigint_ev);
    event_free(h.sigusr1_ev);
    event_free(h.deadline_ev);
    event_base_free(h.base);
    return h.exit_code;
}
