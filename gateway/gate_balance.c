/* The gateways' connection balance: the decision (gate_balance.h, docs/gateway.md
 * "Connection balance"). */
#include "gate_balance.h"

long gate_balance_shed(long mine, const long *peers, size_t n, const gate_balance_opts_t *o)
{
    if (n == 0 || mine <= 0 || o == NULL)
        return 0;
    long total = mine;
    for (size_t i = 0; i < n; i++) {
        if (peers[i] < 0)
            return 0;
        total += peers[i];
    }
    long gates = (long)n + 1;
    long fair = (total + gates - 1) / gates;
    long slack = o->slack_percent > 0 ? o->slack_percent : 0;
    long above = fair * (100 + slack) / 100;
    long floor_ = fair + (o->min_excess > 0 ? o->min_excess : 0);
    if (mine <= (above > floor_ ? above : floor_))
        return 0;
    long step = o->step_percent > 0 ? mine * o->step_percent / 100 : 0;
    if (step < 1)
        step = 1;
    long excess = mine - fair;
    return excess < step ? excess : step;
}
