/*
 * mcluster_int.h -- what the files of money/mcluster.h share (internal): the scripts' table.
 *
 *   mcluster.c         the operations (open, seat, settle, mark, recover)
 *   mcluster_script.c  the Lua scripts of the epoch's slot, with their contracts
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

#endif
