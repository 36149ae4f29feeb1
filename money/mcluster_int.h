/*
 * mcluster_int.h -- what the files of money/mcluster.h share (internal): the engine's state, the
 * scripts' tables and the helpers of mcluster.c the handoff uses.
 *
 *   mcluster.c          the operations (open, seat, settle, mark, recover)
 *   mcluster_script.c   the Lua scripts of the epoch's slot, with their contracts
 *   mcluster_handoff.c  whole-table moves (offer, read, adopt, withdraw) and their scripts
 */
#ifndef CROUPIER_MCLUSTER_INT_H
#define CROUPIER_MCLUSTER_INT_H

#include "mcluster.h"

enum {
    MCL_SCRIPT_OPEN,
    MCL_SCRIPT_HOLD,
    MCL_SCRIPT_OWNER,
    MCL_SCRIPT_MARK,
    MCL_SCRIPT_KILL,
    MCL_SCRIPT_RETURN,
    MCL_NSCRIPTS
};

/* The Lua source of script i (MCL_SCRIPT_*). */
extern const char *const mcl_scripts[MCL_NSCRIPTS];

/* The whole-table moves' scripts (mcluster_handoff.c), by index. */
enum {
    MCL_HO_OFFER,    /* money.h's offer script, its fence {s}:live */
    MCL_HO_WITHDRAW, /* money.h's withdrawal script, its fence {s}:live */
    MCL_HO_HOLD,     /* the adopter's accounts held in its slot */
    MCL_HO_CLAIM,    /* the offer claimed and its accounts debited, in the old slot */
    MCL_HO_RELEASE,  /* a losing adopter's empty holds forgotten */
    MCL_HO_VOID,     /* an offer still "offered" made "void" by the old epoch's recovery */
    MCL_HO_NSCRIPTS
};
/* The Lua source of handoff script i (MCL_HO_*). */
const char *mcl_ho_script_text(int i);

struct mcluster {
    rcluster_t *rc;
    xfer_t *x;
    mcluster_opts_t o;
    rcluster_script_t *script[MCL_NSCRIPTS];
    rcluster_script_t *ho[MCL_HO_NSCRIPTS];
    rcluster_script_t *settle, *history, *recover; /* money.h's scripts */
};

/* mcluster.c's helpers (mcluster.c says what each does). */
void mcl_err(money_result_t *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int mcl_run(mcluster_t *m, rcluster_script_t *s, money_kind_t kind, int nkeys, int argc,
            const char **argv, const size_t *lens, money_result_t *out);
int mcl_wait(mcluster_t *m, const char *key, char *why, size_t whylen);
int mcl_drive(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
              money_recover_result_t *out);
/* Makes offer offer_id of (service, slot, epoch) "void" when it is still "offered" (the epoch's
 * recovery; mcluster_handoff.c). 0 or -EIO. */
int mcl_ho_void(mcluster_t *m, const char *service, uint32_t slot, uint64_t epoch,
                const char *offer_id);

#endif
