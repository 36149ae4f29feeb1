/*
 * niuniu_wire -- the rules of Niu Niu's action message (see niuniu_wire.h).
 */
#include "niuniu_wire.h"

#include <stdio.h>

int niuniu_wire_action_rules(const ProtobufCMessage *m, frame_error_t *err)
{
    const Croupier__Niuniu__NiuAction *a = (const Croupier__Niuniu__NiuAction *)m;
    const char *bad = NULL;
    if (a->move == CROUPIER__NIUNIU__NIU_MOVE__NIU_SHOW && a->has_amount)
        bad = "NiuAction.amount: none for NIU_SHOW";
    else if (a->move != CROUPIER__NIUNIU__NIU_MOVE__NIU_SHOW && !a->has_amount)
        bad = "NiuAction.amount: required for NIU_BID and NIU_BET";
    else if (a->amount > NIUNIU_WIRE_MAX_AMOUNT)
        bad = "NiuAction.amount: at most 1000 (no bid or bet option is larger)";
    if (bad == NULL)
        return 0;
    err->code = CROUPIER__ERROR_CODE__BAD_REQUEST;
    snprintf(err->detail, sizeof err->detail, "%s", bad);
    return -1;
}
