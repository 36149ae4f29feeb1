/*
 * xfer_int.h -- what the files of the transfer module share (internal): the engine's state, the
 * scripts' table (xfer_script.c) and the helpers the sweeper and the audit use (xfer.c).
 *
 *   xfer.c         the checks, the protocol (xfer_transfer, xfer_resume ...)
 *   xfer_script.c  the Lua scripts, one per step, with their contracts
 *   xfer_sweep.c   the sweeper
 *   xfer_audit.c   the conservation audit
 */
#ifndef CROUPIER_XFER_INT_H
#define CROUPIER_XFER_INT_H

#include "xfer.h"

enum {
    XFER_SCRIPT_DEBIT,
    XFER_SCRIPT_CREDIT,
    XFER_SCRIPT_ACK,
    XFER_SCRIPT_REFUND,
    XFER_SCRIPT_DUE,
    XFER_SCRIPT_SEED,
    XFER_NSCRIPTS
};

/* The Lua source of script i (XFER_SCRIPT_*). */
extern const char *const xfer_scripts[XFER_NSCRIPTS];

struct xfer {
    rcluster_t *rc;
    xfer_opts_t o;
    rcluster_script_t *script[XFER_NSCRIPTS];
    bool (*fault_cb)(xfer_fault_t at, const char *id, void *arg);
    void *fault_arg;
    char err[512];
};

/* Sets x->err (printf). */
void xfer_set_err(xfer_t *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- xfer.c's helpers for the sweeper ----------------------------------------------------------
 */

/* How old a DEBITED transfer may be and still be sent again (record_ttl_s - stale_margin_ms). */
long long xfer_max_age_ms(const xfer_t *x);
/* Runs script i (XFER_SCRIPT_*) with RCLUSTER_RESEND; NULL with the reason in x->err. */
redisReply *xfer_eval(xfer_t *x, int i, int nkeys, int argc, const char **argv);
/* The string of element i of an array reply ("" if none), or its integer (-1 if none). */
const char *xfer_elem(const redisReply *r, size_t i);
long long xfer_elem_int(const redisReply *r, size_t i);
/* Reads the outbox record at key: 0, -ENOENT, -EIO (x->err). */
int xfer_record_read(xfer_t *x, const char *key, xfer_record_t *rec);

/* One master of the current map: a slot it serves (the first) and its address. */
typedef struct {
    unsigned slot;
    char host[64];
    int port;
} xfer_master_t;

/*
 * The masters of rc's current map, each with the first slot it serves, at most max of them.
 * Returns how many (0 when the map is empty).
 */
size_t xfer_masters(rcluster_t *rc, xfer_master_t *out, size_t max);

/*
 * The applied record of transfer id from src to dst: {DTAG}:xa:{STAG}:<id>, in the destination's
 * slot (its hash tag is the first one). Ids need only be unique per source tag, as the outbox's
 * are. 0, or -EINVAL when it does not fit in len.
 */
int xfer_applied_key(const char *src, const char *dst, const char *id, char *out, size_t len);

/*
 * The tag of slot s's registry: the first of "q0", "q1", "q2" ... whose CRC16 falls in slot s
 * (a table built once per process; every process builds the same). The registry {<tag>}:xq is a
 * set, in slot s, of the outbox indexes ({TAG}:xo) of that slot that hold a transfer in flight:
 * the sweeper reads one per slot instead of scanning every key (docs/queues.md).
 */
const char *xfer_slot_tag(unsigned slot);
/* "{<xfer_slot_tag(slot)>}:xq" into out (at least 16 bytes). */
void xfer_registry_key(unsigned slot, char *out, size_t len);

/* The master of every slot of rc's map, as an index into m[] (nm of them); -1 uncovered. */
void xfer_slot_owners(rcluster_t *rc, const xfer_master_t *m, size_t nm, short *owner);
/* A blocking connection of its own to master m (connect 500 ms, commands 5 s), or NULL with the
 * reason in x->err. The caller frees it (redisFree). */
redisContext *xfer_connect(xfer_t *x, const xfer_master_t *m);

/* The suffix of key after its tag (after the first `}`), or NULL when it has no tag. */
const char *xfer_after_tag(const char *key);

#endif
