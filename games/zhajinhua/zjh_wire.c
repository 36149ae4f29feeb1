/*
 * zjh_wire -- the rules of Zha Jin Hua's action message and its translation into the rules'
 * input (zjh_wire.h). The rule is the one zjh_engine.c gives the kit as action_rules.
 */
#include "zjh_wire.h"

#include <errno.h>
#include <stdio.h>

/* A raise names its unit, a compare its target (docs/rules/zhajinhua.md, "Actions"). */
int zjh_wire_action_rules(const ProtobufCMessage *m, frame_error_t *err)
{
    const Croupier__Zjh__ZjhAction *a = (const Croupier__Zjh__ZjhAction *)m;
    const char *bad = NULL;
    if (a->move == CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE && (!a->has_unit || a->unit <= 0))
        bad = "ZjhAction.unit: required for ZJH_RAISE and > 0";
    else if (a->move == CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE && !a->has_target)
        bad = "ZjhAction.target: required for ZJH_COMPARE";
    if (bad == NULL)
        return 0;
    err->code = CROUPIER__ERROR_CODE__BAD_REQUEST;
    snprintf(err->detail, sizeof err->detail, "%s", bad);
    return -1;
}

int zjh_wire_action_input(const Croupier__Zjh__ZjhAction *a, zjh_action_t *action, int64_t *arg)
{
    switch (a->move) {
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD:
        *action = ZJH_FOLD;
        *arg = 0;
        return 0;
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL:
        *action = ZJH_CALL;
        *arg = 0;
        return 0;
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE:
        *action = ZJH_RAISE;
        *arg = a->unit;
        return 0;
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK:
        *action = ZJH_LOOK;
        *arg = 0;
        return 0;
    case CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE:
        *action = ZJH_COMPARE;
        *arg = (int64_t)a->target;
        return 0;
    default:
        return -EINVAL;
    }
}
