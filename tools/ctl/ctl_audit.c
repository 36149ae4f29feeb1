/*
 * ctl_audit.c -- croupier-ctl audit --redis-cluster IP:PORT,...: the conservation audit of the
 * money on a Redis Cluster (money/xfer.h, xfer_audit; docs/queues.md "Redis Cluster: keys by
 * entity and transfers between slots", "The conservation audit"; docs/ops.md).
 *
 * It walks every master and says whether the accounts and the transfers in flight add up to
 * the money seeded, and where the accounts' chips are (wallets, seat accounts, the epochs' rake,
 * prize pools, the house: xfer_account_place). Exit status: 0 balanced, 1 not balanced or a master
 * unreachable (or the map kept changing: it tries three times), 2 bad arguments. --json prints the
 * figures as one object. Unlike the other commands it does not use R: the keys it reads are on
 * every master.
 */
#include <errno.h>
#include <stdio.h>

#include <jansson.h>

#include "ctl.h"
#include "rcluster.h"
#include "xfer.h"

int ctl_audit(void)
{
    char err[600];
    rcluster_opts_t o = {.command_timeout_ms = (int)O.timeout_ms};
    rcluster_t *c = rcluster_create(O.redis_cluster, &o, err, sizeof err);
    if (c == NULL)
        return ctl_fail(1, "audit: %s", err);
    xfer_t *x = xfer_create(c, NULL);
    xfer_audit_t a;
    int rc = -EAGAIN;
    for (int i = 0; i < 3 && rc == -EAGAIN; i++)
        rc = xfer_audit(x, &a);
    int status = 0;
    if (rc != 0) {
        status = ctl_fail(1, "audit: %s", xfer_last_error(x));
    } else {
        json_t *doc =
            json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s?}", "balanced", a.balanced,
                      "masters", (json_int_t)a.masters, "accounts", (json_int_t)a.accounts,
                      "balances", (json_int_t)a.balances, "in_flight", (json_int_t)a.in_flight,
                      "in_flight_amount", (json_int_t)a.in_flight_amount, "credited_unacked",
                      (json_int_t)a.credited_unacked, "seeded", (json_int_t)a.seeded, "bad",
                      (json_int_t)a.bad, "first_bad", a.bad > 0 ? a.first_bad : NULL);
        json_t *places = json_object();
        for (int i = 0; i < XFER_NPLACES; i++) {
            if (a.place_accounts[i] > 0)
                json_object_set_new(places, xfer_place_name((xfer_place_t)i),
                                    json_pack("{s:I,s:I}", "accounts",
                                              (json_int_t)a.place_accounts[i], "chips",
                                              (json_int_t)a.place_balances[i]));
        }
        json_object_set_new(doc, "places", places);
        if (O.json) {
            ctl_print_json(doc);
        } else {
            printf("masters             %zu\n", a.masters);
            printf("accounts            %zu holding %lld\n", a.accounts, a.balances);
            for (int i = 0; i < XFER_NPLACES; i++) {
                if (a.place_accounts[i] > 0)
                    printf("  %-17s %zu holding %lld\n", xfer_place_name((xfer_place_t)i),
                           a.place_accounts[i], a.place_balances[i]);
            }
            printf("in flight           %zu transfers, %lld\n", a.in_flight, a.in_flight_amount);
            printf("credited, not acked %zu (counted at their destination)\n", a.credited_unacked);
            printf("seeded              %lld\n", a.seeded);
            if (a.bad > 0)
                printf("not a balance       %zu (the first: %s)\n", a.bad, a.first_bad);
            printf("%s: %lld + %lld %s %lld\n", a.balanced ? "balanced" : "NOT BALANCED",
                   a.balances, a.in_flight_amount, a.balanced ? "=" : "!=", a.seeded);
        }
        json_decref(doc);
        if (!a.balanced)
            status = 1;
    }
    xfer_destroy(x);
    rcluster_destroy(c);
    return status;
}
