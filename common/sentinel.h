/*
 * sentinel -- finding the Redis master through Redis Sentinel (docs/deploy.md, "Redis
 * Sentinel"). hiredis has no Sentinel support; this is croupier's one implementation.
 *
 * A sentinel set is a list of sentinel addresses plus the name of the master they monitor. The
 * master is resolved the way Redis's sentinel client guide describes:
 *
 *   1. Ask each sentinel in turn, with a short connect/request timeout, for
 *      `SENTINEL get-master-addr-by-name NAME`; an unreachable sentinel, one that times out and
 *      one that does not know NAME are skipped.
 *   2. Connect to the address it gave and send `ROLE`; the node must answer `master`, else the
 *      next sentinel is asked (a sentinel may be stale for a moment after a failover).
 *   3. The sentinel that gave a confirmed answer is moved to the front of the list, so the next
 *      resolution asks it first.
 *
 * sentinel_resolve_sync() does all three steps with blocking hiredis connections (for the
 * blocking connections of the money writer and the sweeper). sentinel_query_start() does steps
 * 1 and 3 asynchronously on an event base for rconn (common/rconn.h), which performs step 2 on
 * the very connection it then uses, so that no other node can slip in between check and use.
 *
 * Sentinel addresses and the master's address must be IP literals (config_parse_addr rules):
 * nothing here resolves host names, which would block the event loop.
 */
#ifndef CROUPIER_SENTINEL_H
#define CROUPIER_SENTINEL_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

struct event_base;

typedef struct sentinel_set sentinel_set_t;

/*
 * Parses "HOST:PORT,HOST:PORT,..." (IPv6 as [V6]:PORT) and the master name. Returns NULL with a
 * one-line reason in err on an empty list, a bad address, a duplicate or an empty/oversized
 * master name.
 */
sentinel_set_t *sentinel_set_create(const char *list, const char *master, char *err, size_t errlen);
sentinel_set_t *sentinel_set_copy(const sentinel_set_t *s);
void sentinel_set_free(sentinel_set_t *s); /* NULL is a no-op */
size_t sentinel_set_count(const sentinel_set_t *s);
const char *sentinel_set_host(const sentinel_set_t *s, size_t i);
int sentinel_set_port(const sentinel_set_t *s, size_t i);
const char *sentinel_set_master(const sentinel_set_t *s);
/* Moves sentinel i to the front of the list, keeping the order of the others. */
void sentinel_set_promote(sentinel_set_t *s, size_t i);

/*
 * Blocking resolution (steps 1-3), each connect and request bounded by timeout_ms. Returns 0
 * with the master's IP literal in host and its port in *port, or -ENOENT when no sentinel gave
 * a confirmed master, with a one-line reason (the last failure of each kind) in err.
 */
int sentinel_resolve_sync(sentinel_set_t *s, int timeout_ms, char *host, size_t hostlen, int *port,
                          char *err, size_t errlen);

/* Result of an asynchronous query: host/port on success, else NULL/0 and a reason in err. */
typedef void (*sentinel_query_cb)(const char *host, int port, const char *err, void *arg);
typedef struct sentinel_query sentinel_query_t;

/*
 * Asks the sentinels of s in turn (steps 1 and 3; each sentinel gets timeout_ms to connect and
 * timeout_ms to answer). cb runs exactly once from the event loop unless the query is
 * cancelled first; the query frees itself after cb. s must outlive the query.
 */
sentinel_query_t *sentinel_query_start(struct event_base *base, sentinel_set_t *s, int timeout_ms,
                                       sentinel_query_cb cb, void *arg);
/* Stops a query whose callback has not run yet; cb will not run. NULL is a no-op. */
void sentinel_query_cancel(sentinel_query_t *q);

/*
 * Whether the sentinels could fail the master over: asks them in turn `SENTINEL CKQUORUM NAME`
 * (same timeouts as sentinel_query_start) until one answers OK. cb(true, NULL) when one did;
 * cb(false, reason) when none did (each answered NOQUORUM, or no sentinel answered). Cancel it
 * with sentinel_query_cancel().
 */
typedef void (*sentinel_quorum_cb)(bool ok, const char *why, void *arg);
sentinel_query_t *sentinel_quorum_start(struct event_base *base, sentinel_set_t *s, int timeout_ms,
                                        sentinel_quorum_cb cb, void *arg);

/*
 * Parses a `+switch-master` message ("NAME OLDIP OLDPORT NEWIP NEWPORT"). Returns true and the
 * new address when it is well formed and about master; false otherwise.
 */
bool sentinel_parse_switch(const char *data, size_t len, const char *master, char *host,
                           size_t hostlen, int *port);

/*
 * Program flags (common/config.h): the two entries of a config_flag_t table that offer
 * --redis-sentinels IP:PORT,... and --redis-master NAME as the alternative to --redis. Both are
 * CONFIG_STR and default to NULL (use --redis). After config_parse(), sentinel_flags_check().
 */
/* clang-format off */
#define SENTINEL_CONFIG_FLAGS(sentinels_out, master_out)                                         \
    {"redis-sentinels", CONFIG_STR, NULL,                                                        \
     "Redis Sentinel addresses IP:PORT,... (instead of --redis; with --redis-master)",           \
     (sentinels_out), 0, 0},                                                                    \
    {"redis-master", CONFIG_STR, NULL,                                                           \
     "name of the master the sentinels monitor (with --redis-sentinels)", (master_out), 0, 0}
/* clang-format on */

/* Whether the two flags go together and parse; 0, or -EINVAL with one line in err. */
int sentinel_flags_check(const char *sentinels, const char *master, char *err, size_t errlen);

/*
 * Blocking: the address a blocking connection should use now -- the fixed host when sentinels
 * is NULL, else the master resolved through the sentinels (sentinel_resolve_sync). Returns 0 or
 * -ENOENT with the reason in err.
 */
int sentinel_connect_addr(const char *fixed_host, int fixed_port, const char *sentinels,
                          const char *master, int timeout_ms, char *host, size_t hostlen, int *port,
                          char *err, size_t errlen);

#endif
