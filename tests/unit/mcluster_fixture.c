/* The shared fixture of the money-by-entity tests on a real Redis Cluster (mcluster_fixture.h). */
#include "mcluster_fixture.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "keytag.h"
#include "log.h"
#include "support.h"
#include "xfer.h"

ts_cluster_t *mcf_cl;

void mcf_setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_ERROR + 1);
    keytag_set_cluster(true); /* lease fences and hand histories in the money slot */
    mcf_cl = ts_cluster_start(MCF_MASTERS, MCF_REPLICAS);
}

void mcf_teardown(void)
{
    ts_cluster_stop(mcf_cl);
    mcf_cl = NULL;
}

rcluster_t *mcf_client(void)
{
    char err[600] = "";
    rcluster_t *c = rcluster_create(ts_cluster_seeds(mcf_cl), NULL, err, sizeof err);
    ck_assert_msg(c != NULL, "rcluster_create: %s", err);
    return c;
}

mcluster_t *mcf_money(rcluster_t *c)
{
    mcluster_opts_t o = {.xfer = {.wait_replicas = 1, .wait_timeout_ms = 2000}};
    return mcluster_create(c, &o);
}

const char *mcf_service(void)
{
    static char s[32];
    if (s[0] == '\0')
        snprintf(s, sizeof s, "t%d", (int)getpid());
    return s;
}

const char *mcf_player(const char *name)
{
    static char buf[8][48];
    static int i;
    char *b = buf[i++ % 8];
    snprintf(b, 48, "%s%d", name, (int)getpid());
    return b;
}

void mcf_set_fence(rcluster_t *c, uint32_t slot, uint64_t epoch)
{
    char lt[160], key[200];
    keytag_lease(lt, sizeof lt, mcf_service());
    snprintf(key, sizeof key, "%s:slot:%" PRIu32 ":epoch", lt, slot);
    redisReply *r = rcluster_command(c, RCLUSTER_RESEND, key, "SET %s %" PRIu64, key, epoch);
    ck_assert_msg(r != NULL && r->type != REDIS_REPLY_ERROR, "SET %s: %s", key,
                  r == NULL ? rcluster_last_error(c) : r->str);
    freeReplyObject(r);
}

int64_t mcf_wallet(mcluster_t *m, const char *player)
{
    char k[128];
    ck_assert_int_eq(mcluster_key_wallet(player, k, sizeof k), 0);
    int64_t v = -1;
    ck_assert_msg(mcluster_balance(m, k, &v) == 0, "balance %s", k);
    return v;
}

int64_t mcf_seat(mcluster_t *m, uint32_t slot, uint64_t epoch, const char *acct)
{
    char k[256];
    ck_assert_int_eq(mcluster_key_seat(mcf_service(), slot, epoch, acct, k, sizeof k), 0);
    int64_t v = -1;
    ck_assert_msg(mcluster_balance(m, k, &v) == 0, "balance %s", k);
    return v;
}

void mcf_seed(mcluster_t *m, const char *player, long long amount)
{
    char k[128], op[64];
    ck_assert_int_eq(mcluster_key_wallet(player, k, sizeof k), 0);
    snprintf(op, sizeof op, "seed-%d-%s", (int)getpid(), player);
    ck_assert_msg(xfer_seed(mcluster_xfer(m), k, amount, op) == 0, "seed %s: %s", k,
                  xfer_last_error(mcluster_xfer(m)));
}

void mcf_audit(mcluster_t *m, long long in_flight)
{
    xfer_audit_t a;
    int rc = -EAGAIN;
    for (int i = 0; i < 20 && rc == -EAGAIN; i++) {
        rc = xfer_audit(mcluster_xfer(m), &a);
        if (rc == -EAGAIN)
            ts_sleep_ms(250);
    }
    ck_assert_msg(rc == 0, "audit: %s", xfer_last_error(mcluster_xfer(m)));
    ck_assert_msg(a.balanced, "audit: balances %lld + in flight %lld != seeded %lld; %zu bad (%s)",
                  a.balances, a.in_flight_amount, a.seeded, a.bad, a.first_bad);
    ck_assert_int_eq(a.in_flight_amount, in_flight);
}
