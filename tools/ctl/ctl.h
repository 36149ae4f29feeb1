/*
 * ctl.h -- what the parts of croupier-ctl share (internal to the tool): the parsed options, the
 * Redis connection, the look-ups, the HTTP client and the output helpers of ctl.c, and the
 * entry points of the commands that live in files of their own.
 *
 * The files, one concern each (docs/ops.md is the tool's manual):
 *
 *   ctl.c          the options (ctl_flags), the Redis connection and its look-ups (ctl_cmd,
 *                  ctl_get, ctl_scan, ctl_entry, ctl_held), the HTTP client of the servers'
 *                  admin endpoints (ctl_http, ctl_metric), the output helpers (ctl_print_json,
 *                  ctl_table, ctl_stream_entry, ctl_time...) and main, which dispatches the
 *                  commands
 *   ctl_cluster.c  servers, tables SERVER, where PLAYER, drain SERVER, room CODE
 *   ctl_money.c    wallet PLAYER, round ROUND_ID, credit PLAYER AMOUNT
 *   ctl_tour.c     tour ... (the tournaments)
 *   ctl_audit.c    audit --redis-cluster ... (the money's conservation on Redis Cluster)
 *
 * Who owns what: the tool is one thread and runs one command. O is filled by main from the
 * flags before the command runs and only read after; R is connected by main before the command
 * runs (ctl_redis_connect) and freed when it returns. Every command returns the exit status
 * (0 done, 1 not found / refused / unreachable, 2 bad arguments); a JSON document or reply it
 * gets is its own to free.
 *
 * A new command goes in the file of its concern, or in a file of its own (ctl_<concern>.c,
 * listed above and in tools/meson.build), with its entry point below and a line in main's
 * command table; docs/architecture.md §2 lists the files too.
 */
#ifndef CROUPIER_CTL_H
#define CROUPIER_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "config.h"
#include "registry.h"

/* The flags (ctl.c's table ctl_flags fills them). */
typedef struct {
    config_addr_t redis;
    const char *redis_sentinels, *redis_master;
    const char *redis_cluster;
    bool money_by_entity; /* wallet, credit: the wallets at {p:<player>}:bal (money/mcredit.h) */
    bool json;
    bool phh; /* round: the hand as a PHH file (hold'em; docs/replays.md "PHH export") */
    const char *reason, *op_id, *admin_secret;
    long operator_id, limit, timeout_ms, min_replicas, wait_ms;
    const char *structure, *name, *start_in; /* tour create */
    const char *every;                       /* tour hall */
} ctl_options_t;

extern ctl_options_t O;
extern redisContext *R; /* connected before a command runs */

/* The connection for keys outside the money slot (the seats): R, or on a Redis Cluster a new
 * one to the master of key's slot (NULL, said on stderr, when it cannot be had); give it back
 * with ctl_redis_done(). */
redisContext *ctl_redis_for(const char *key);
void ctl_redis_done(redisContext *c);
/* A cluster client over --redis-cluster (the caller destroys it), or NULL after a message. */
struct rcluster *ctl_cluster_client(void);

/* "croupier-ctl: <message>" on stderr; returns code (the exit status). */
int ctl_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One command; NULL (and a message) on a connection error or an error reply. */
redisReply *ctl_cmd(int argc, const char **argv);
#define CTL_CMD(...)                                                                               \
    ctl_cmd(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *),                          \
            (const char *[]){__VA_ARGS__})

/* GET key as a malloc'ed string; *found false when absent. -1 on a Redis error. */
int ctl_get(const char *key, char **out, bool *found);

void ctl_print_json(json_t *doc);
/* Prints the rows (objects) of arr as a table of the given columns (cols NULL-terminated). */
void ctl_table(json_t *arr, const char *const *cols, const char *const *heads);
/* Fields of a stream entry reply [id, [f, v, ...]] as an object (with "stream_id"). */
json_t *ctl_stream_entry(const redisReply *e);
/* Unix milliseconds as "YYYY-MM-DD HH:MM:SS.mmm" (UTC); "-" for 0. */
void ctl_time(int64_t ms, char *buf, size_t len);

/* ---- the look-ups and helpers of ctl.c the commands share ---------------------------------- */

json_t *ctl_scan(const char *pattern, const char *type);
int ctl_entry(const char *id, registry_entry_t *e);
json_t *ctl_held(const char *service, int slot, int64_t epoch);
int ctl_http(const char *addr, enum evhttp_cmd_type method, const char *path, const char *bearer,
             char **body);
bool ctl_metric(const char *text, const char *name, double *v);
const char *ctl_cell(json_t *v, char *buf, size_t len);
json_t *ctl_games_array(const char *games);

/* ---- servers, tables, where, drain, room (ctl_cluster.c) ----------------------------------- */

int ctl_servers(void);
int ctl_tables(const char *server);
int ctl_where(const char *player);
int ctl_drain(const char *server);
int ctl_room(const char *code);
/* The seat of player in a round-start record's "seats", or -1 (ctl_money.c uses it too). */
int ctl_seat_of(json_t *round, const char *player);

/* ---- wallet, round, credit (ctl_money.c) --------------------------------------------------- */

int ctl_wallet(const char *player);
int ctl_round(const char *round_id);
int ctl_credit(const char *player, const char *amount_text);

/* ---- audit (ctl_audit.c) ------------------------------------------------------------------ */

/* The conservation audit on the Redis Cluster of O.redis_cluster (does not use R). 0 balanced,
 * 1 not balanced or unreachable. */
int ctl_audit(void);

/* ---- tour (ctl_tour.c, docs/ops.md "tour") ------------------------------------------------ */

typedef struct ctl_tour ctl_tour_t;

/*
 * Checks the words after "tour" (argv[0] is the subcommand) and the flags, before anything
 * touches Redis; for create it also reads and checks the structure file. Returns 0 and *out
 * (run it with ctl_tour_run, which frees it), or 2 after one line on stderr (bad arguments).
 */
int ctl_tour_prepare(int argc, const char *const *argv, ctl_tour_t **out);
/* Runs the prepared command against R and frees t. Returns the exit status (0, 1). */
int ctl_tour_run(ctl_tour_t *t);
void ctl_tour_free(ctl_tour_t *t); /* NULL is a no-op */

#endif
