/*
 * xfer_int.h -- what the files of the transfer module share (internal): the engine's state, the
 * scripts' table (xfer_script.c) and the helpers the sweeper and the audit use (xfer.c).
 *
 *   xfer.c         the checks, the protocol (xfer_transfer, xfer_resume ...) and the sweeper
 *   xfer_script.c  the Lua scripts, one per step, with their contracts
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

/* The suffix of key after its tag (after the first `}`), or NULL when it has no tag. */
const char *xfer_after_tag(const char *key);

#endif
