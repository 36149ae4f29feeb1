/*
 * registry -- where game servers announce themselves and gateways find them (Redis).
 *
 * Publisher side (a game server): registry_create() on the server's rconn and lease. Once
 * started, the entry is written as a compact JSON string
 *
 *   {"id":"holdem:3","service":"holdem","slot":3,"address":"10.0.0.7:7001","engine":"holdem",
 *    "engine_id":2,"games":"holdem","version":"f4bae56","state":"ready","load":12,"epoch":42,
 *    "seq":5,"admin":"10.0.0.7:8080"}
 *
 * ("version": the build's `git describe --always --dirty`, what `croupier-game --version` prints,
 * common/version.h: during a rollout the entries tell the old version's servers from the new.)
 *
 * ("engine_id": the protocol's engine number, proto/client.proto Engine, so that a gateway
 * compares a Join's engine with it without knowing any engine's name; optional when parsed.
 * "admin": the health/admin HTTP address of drain/drain.h, for croupier-ctl; optional.)
 *
 * under `{croupier:registry}:server:<id>` (id = "<service>:<slot>", the server ID) with a TTL
 * equal to the lease TTL, refreshed every ttl/3 while the lease is VALID -- so an entry vanishes
 * at most one TTL after its server stops confirming its lease. The id is also kept in the set
 * `{croupier:registry}:members`. Every change (new entry, state, load, epoch) is written and
 * PUBLISHed on the channel `croupier:registry:events` in the same script; an unchanged entry is
 * only re-armed (PEXPIRE). Every write is fenced by the lease epoch (lease.h): a process that
 * lost its slot cannot overwrite or delete the entry of the slot's new holder. Deregistration
 * deletes the entry and publishes {"op":"del",...}.
 *
 * Gateway side: a registry_view keeps an in-memory copy from two independent signals -- a
 * subscriber connection on the channel (changes within milliseconds) and a periodic full read of
 * every member (catches lost messages, expired entries, Redis restarts). Updates are ordered by
 * (epoch, seq), so a late full read never undoes a newer message. registry_pick() chooses a
 * ready server of an engine (and game) with the lowest load.
 *
 * Metric (view): registry_servers{engine="...",state="ready|draining"}.
 * Threads: everything runs on the creating event_base's thread.
 */
#ifndef CROUPIER_REGISTRY_H
#define CROUPIER_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lease.h"
#include "metrics.h"
#include "rconn.h"

struct event_base;

#define REGISTRY_CHANNEL "croupier:registry:events"
/* "{croupier:registry}:members" and "{croupier:registry}:server:", or on a Redis Cluster the same
 * under "{croupier:money}:registry" (common/keytag.h): static strings. */
#define REGISTRY_MEMBERS_KEY registry_members_key()
#define REGISTRY_KEY_PREFIX registry_key_prefix()
const char *registry_members_key(void);
const char *registry_key_prefix(void);

typedef enum { REGISTRY_READY = 0, REGISTRY_DRAINING = 1 } registry_state_t;

typedef struct {
    char id[80]; /* "<service>:<slot>" */
    char service[65];
    int slot;
    char address[72]; /* HOST:PORT the gateways connect to */
    char engine[32];
    /* The protocol's engine number (a Croupier__Engine of proto/client.proto: what a Join names),
     * published as "engine_id"; 0 when the entry does not say (an older publisher). */
    int engine_id;
    char games[256]; /* comma-separated game names */
    char version[48];
    /* HOST:PORT of the server's health/admin HTTP endpoint (drain/drain.h), published as "admin"
     * when known, for croupier-ctl (docs/ops.md); "" when the entry does not say. */
    char admin[72];
    registry_state_t state;
    int64_t load;
    int64_t epoch;
    int64_t seq;
} registry_entry_t;

const char *registry_state_name(registry_state_t s);

/* ---- publisher ---------------------------------------------------------------------------- */

typedef struct registry registry_t;
/* result: 0, or a negative errno (-ESTALE: the slot belongs to someone else now). */
typedef void (*registry_done_cb)(registry_t *r, int result, void *arg);

typedef struct {
    const char *address; /* required */
    const char *engine;  /* required */
    int engine_id;       /* the protocol's engine number (engine_ops_t.engine); 0..1000 */
    const char *games;   /* comma-separated; may be NULL (= engine) */
    const char *version; /* may be NULL ("") */
    const char *admin;   /* health/admin HOST:PORT; may be NULL (not published) */
} registry_info_t;

/* Creates an idle publisher (strings copied). NULL with errno EINVAL on missing or oversized
 * fields. rc and lease are not owned and must outlive it. */
registry_t *registry_create(struct event_base *base, rconn_t *rc, lease_t *lease,
                            const registry_info_t *info);
/* Writes the entry now (state ready unless set before) and keeps refreshing it. The lease
 * must have a slot (-ENOENT otherwise). -EALREADY if started. */
int registry_start(registry_t *r);
/* Calls cb(r, 0, arg) once, when a write of the entry is first acknowledged by Redis (the entry
 * is then readable by every gateway): a server reports ready only from there. Set it before
 * registry_start(); NULL clears it. */
void registry_on_first_write(registry_t *r, registry_done_cb cb, void *arg);
/* Changes the state; written and published at once when started. */
void registry_set_state(registry_t *r, registry_state_t s);
/* Changes the load; written and published with the next refresh (at most ttl/3 later). */
void registry_set_load(registry_t *r, int64_t load);
/* Writes the entry now, as this process knows it, when started (and not deregistered) and the
 * lease is VALID: the owner calls it when its connection comes back, so that an entry a
 * failover lost (a new master without it, docs/deploy.md "Failover and durability") is back at
 * once and not only with the next refresh. An entry Redis still holds unchanged is only re-armed.
 */
void registry_refresh(registry_t *r);
/* Stops refreshing, deletes the entry and publishes the deletion; done runs once. */
void registry_deregister(registry_t *r, registry_done_cb done, void *arg);
/* Frees without deregistering (the entry expires with its TTL). NULL is a no-op. */
void registry_destroy(registry_t *r);
/* Successful writes so far (tests, metrics). */
uint64_t registry_writes(const registry_t *r);

/* ---- view (gateway) ----------------------------------------------------------------------- */

typedef struct registry_view registry_view_t;
/* e is the new value (removed false) or the last value before removal (removed true). */
typedef void (*registry_change_cb)(registry_view_t *v, const registry_entry_t *e, bool removed,
                                   void *arg);

typedef struct {
    const char *host; /* Redis, IP literal */
    int port;
    const char *sentinels;        /* instead of host/port: rconn's sentinel mode (common/rconn.h) */
    const char *master_name;      /* with sentinels */
    const char *cluster;          /* instead of host/port: rconn's cluster mode (common/rconn.h) */
    int refresh_ms;               /* full read period; 0 = 2000 */
    int request_timeout_ms;       /* 0 = 1000 */
    metrics_registry_t *metrics;  /* may be NULL */
    registry_change_cb on_change; /* may be NULL */
    void *arg;
} registry_view_opts_t;

/* Opens the two connections (commands, subscriber) and starts following. NULL + errno EINVAL. */
registry_view_t *registry_view_create(struct event_base *base, const registry_view_opts_t *opts);
/* NULL is a no-op. Must not be called from inside its own change callback. */
void registry_view_destroy(registry_view_t *v);

/* A ready server of engine that offers game (NULL = any), lowest load first (ties: lowest id);
 * NULL if none. The pointer is valid until the view next changes. */
const registry_entry_t *registry_pick(const registry_view_t *v, const char *engine,
                                      const char *game);
size_t registry_view_size(const registry_view_t *v);
const registry_entry_t *registry_view_at(const registry_view_t *v, size_t i);
const registry_entry_t *registry_view_find(const registry_view_t *v, const char *id);
/* Full reads completed so far. */
uint64_t registry_view_refreshes(const registry_view_t *v);

/* Parses an entry JSON (as stored or published); 0 or -EINVAL. Exposed for tests and tools. */
int registry_entry_parse(const char *json, size_t len, registry_entry_t *out);

#endif
