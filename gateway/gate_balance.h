/*
 * gate_balance -- the gateways' connection balance (docs/gateway.md "Connection balance").
 *
 * Client connections live for hours, and a Kubernetes Service spreads only new ones: after a
 * gateway died or the Deployment scaled out, the survivors keep every player while a new pod
 * holds none, and the next failure hits all of them. Each gateway therefore publishes its count
 * of logged-in connections with its registration, reads the others' in the same round trip, and
 * one whose count is well above the fair share sends a few of its players GoAway{REBALANCE}:
 * they reconnect through the Service and resume (docs/protocol.md "GoAway"), a few percent at a
 * time, never more often than once a period.
 *
 * This file holds the decision alone: no I/O, no clock.
 */
#ifndef CROUPIER_GATE_BALANCE_H
#define CROUPIER_GATE_BALANCE_H

#include <stddef.h>

typedef struct gate_balance_opts {
    int slack_percent; /* shed only above fair * (100 + slack) / 100 ... */
    long min_excess;   /* ... and more than fair + min_excess */
    int step_percent;  /* at most this share of our own connections per decision (at least 1) */
} gate_balance_opts_t;

/*
 * How many of our `mine` logged-in connections to send away now, given the counts of the other
 * live gateways (`peers`, n of them). The fair share is ceil(total / (n + 1)); nothing is shed
 * unless mine > max(fair * (100 + slack) / 100, fair + min_excess); then min(mine - fair,
 * max(1, mine * step / 100)). 0 when alone (n == 0), or when any figure is negative.
 */
long gate_balance_shed(long mine, const long *peers, size_t n, const gate_balance_opts_t *o);

#endif
