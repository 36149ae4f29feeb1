#include "sweeper.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "keytag.h"
#include "log.h"
#include "money.h"
#include "rcluster.h"
#include "mcluster.h"
#include "sentinel.h"
#include "xmalloc.h"

/* A held epoch seen with its fence in place and nobody holding its slot, since first_ms. */
typedef struct {
    char member[MONEY_NAME_MAX + 48];
    int64_t first_ms;
    bool seen; /* in this sweep's index */
} sw_watch_t;

struct money_sweeper {
    money_sweeper_config_t cfg;
    char *host;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping, kicked;
    char own[MONEY_NAME_MAX + 48]; /* "<service>:<slot>:<epoch>", under mu */

    /* Thread only. */
    redisContext *c;
    rcluster_t *rc; /* the money by entity (money_set_entity): its recoveries and transfers */
    mcluster_t *m;
    sw_watch_t *watch;
    size_t nwatch, capwatch;
    metrics_registry_t *own_metrics;
    metrics_t *m_dead, *m_claim, *m_chips, *m_voided, *m_epochs, *m_errors;
};

static void sw_disconnect(money_sweeper_t *s)
{
    if (s->c != NULL)
        redisFree(s->c);
    s->c = NULL;
    s->nwatch = 0; /* the time Redis was away must not count towards the grace */
}

static bool sw_connect(money_sweeper_t *s)
{
    if (s->c != NULL)
        return true;
    char host[64], err[600];
    int port = 0;
    if (s->cfg.redis_cluster != NULL
            ? rcluster_master_addr(s->cfg.redis_cluster, MONEY_HELD_INDEX_KEY, 500, host,
                                   sizeof host, &port, err, sizeof err) != 0
            : sentinel_connect_addr(s->host, s->cfg.redis_port, s->cfg.redis_sentinels,
                                    s->cfg.redis_master, 500, host, sizeof host, &port, err,
                                    sizeof err) != 0)
        return false; /* like a refused connect: tried again next sweep (rconns log it) */
    struct timeval tv = {1, 0};
    s->c = redisConnectWithTimeout(host, port, tv);
    if (s->c == NULL || s->c->err != 0) {
        sw_disconnect(s);
        return false;
    }
    struct timeval rt = {2, 0};
    redisSetTimeout(s->c, rt);
    return true;
}

static sw_watch_t *sw_watch_find(money_sweeper_t *s, const char *member)
{
    for (size_t i = 0; i < s->nwatch; i++)
        if (strcmp(s->watch[i].member, member) == 0)
            return &s->watch[i];
    return NULL;
}

static void sw_watch_drop(money_sweeper_t *s, const char *member)
{
    sw_watch_t *w = sw_watch_find(s, member);
    if (w != NULL)
        *w = s->watch[--s->nwatch];
}

/* One held epoch: judge it and recover it when it is dead. Returns -EIO on a connection
 * failure, else 0. */
static int sw_judge(money_sweeper_t *s, const char *member, int64_t now)
{
    char service[MONEY_NAME_MAX + 1];
    uint32_t slot;
    uint64_t epoch;
    if (money_held_parse(member, service, sizeof service, &slot, &epoch) != 0) {
        log_emit(LOG_ERROR, "money_sweep_bad_member", "{s:s}", "member", member);
        return 0;
    }
    char lt[160];
    keytag_lease(lt, sizeof lt, service);
    redisAppendCommand(s->c, "GET %s:slot:%" PRIu32 ":epoch", lt, slot);
    redisAppendCommand(s->c, "EXISTS %s:slot:%" PRIu32, lt, slot);
    redisReply *fr = NULL, *hr = NULL;
    if (redisGetReply(s->c, (void **)&fr) != REDIS_OK ||
        redisGetReply(s->c, (void **)&hr) != REDIS_OK) {
        freeReplyObject(fr);
        return -EIO;
    }
    bool fenced = false, held = hr->type == REDIS_REPLY_INTEGER && hr->integer == 1;
    uint64_t fence = 0;
    if (fr->type == REDIS_REPLY_STRING) {
        fence = strtoull(fr->str, NULL, 10);
        fenced = fence == epoch;
    }
    bool gone = fr->type == REDIS_REPLY_NIL;
    freeReplyObject(fr);
    freeReplyObject(hr);
    money_recover_mode_t mode;
    if (gone || fence > epoch) {
        mode = MONEY_RECOVER_DEAD;
    } else if (fenced && !held) {
        sw_watch_t *w = sw_watch_find(s, member);
        if (w == NULL) {
            if (s->nwatch == s->capwatch) {
                s->capwatch = s->capwatch ? 2 * s->capwatch : 16;
                s->watch = xreallocarray(s->watch, s->capwatch, sizeof *s->watch);
            }
            w = &s->watch[s->nwatch++];
            snprintf(w->member, sizeof w->member, "%s", member);
            w->first_ms = now;
            log_emit(LOG_WARN, "money_slot_unheld", "{s:s,s:i}", "member", member, "grace_ms",
                     s->cfg.grace_ms);
        }
        w->seen = true;
        if (now - w->first_ms < s->cfg.grace_ms)
            return 0;
        mode = MONEY_RECOVER_CLAIM;
    } else {
        sw_watch_drop(s, member); /* alive (or a fence behind it: judged by nobody) */
        return 0;
    }
    money_recover_result_t out;
    int rc;
    if (money_entity()) {
        if (s->m == NULL)
            return 0; /* no cluster client yet: the next sweep */
        rc = mcluster_recover(s->m, service, slot, epoch, mode, NULL, &out);
        if (rc == -EAGAIN)
            rc = 0; /* recovered; a return still in flight is the transfers' sweep's */
        else if (rc == -EIO)
            return 0; /* the cluster client's failure: the next sweep tries again */
    } else {
        rc = money_recover(s->c, service, slot, epoch, mode, NULL, s->cfg.history_maxlen, &out);
    }
    if (rc == -EIO)
        return -EIO;
    sw_watch_drop(s, member);
    if (rc == 0) {
        metrics_add(mode == MONEY_RECOVER_DEAD ? s->m_dead : s->m_claim, 1);
        metrics_add(s->m_chips, (double)out.chips);
        metrics_add(s->m_voided, out.voided);
    } else if (rc != MONEY_ERR_ALIVE) {
        metrics_add(s->m_errors, 1);
    }
    return 0;
}

static void sw_sweep(money_sweeper_t *s)
{
    if (!sw_connect(s)) {
        metrics_add(s->m_errors, 1);
        return;
    }
    if (money_entity() && s->m == NULL) {
        char err[600];
        s->rc = rcluster_create(s->cfg.redis_cluster, NULL, err, sizeof err);
        if (s->rc != NULL) {
            mcluster_opts_t mo = {.history_maxlen = s->cfg.history_maxlen,
                                  .xfer = {.wait_replicas = s->cfg.min_replicas}};
            s->m = mcluster_create(s->rc, &mo);
        }
    }
    /* the index of held epochs: today's, or the opened epochs of the money by entity */
    redisReply *r = redisCommand(s->c, "SMEMBERS %s",
                                 money_entity() ? MCLUSTER_INDEX_KEY : MONEY_HELD_INDEX_KEY);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        metrics_add(s->m_errors, 1);
        sw_disconnect(s);
        return;
    }
    char own[sizeof s->own];
    pthread_mutex_lock(&s->mu);
    memcpy(own, s->own, sizeof own);
    pthread_mutex_unlock(&s->mu);
    metrics_set(s->m_epochs, (double)r->elements);
    for (size_t i = 0; i < s->nwatch; i++)
        s->watch[i].seen = false;
    int64_t now = clock_mono_ms();
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *m = r->element[i];
        if (m->type != REDIS_REPLY_STRING || strcmp(m->str, own) == 0)
            continue;
        if (sw_judge(s, m->str, now) == -EIO) {
            metrics_add(s->m_errors, 1);
            freeReplyObject(r);
            sw_disconnect(s);
            return;
        }
    }
    freeReplyObject(r);
    /* The money by entity: transfers left in flight (a buy-in, cash-out or recovery return
     * whose process stopped between its steps) are finished here, once a few seconds old. */
    if (s->m != NULL) {
        xfer_sweep_stats_t st;
        if (xfer_sweep(mcluster_xfer(s->m), 2000, &st) != 0)
            metrics_add(s->m_errors, 1);
        if (st.completed + st.refunded > 0)
            log_emit(LOG_INFO, "money_xfer_swept", "{s:I,s:I,s:I}", "completed",
                     (json_int_t)st.completed, "refunded", (json_int_t)st.refunded, "pending",
                     (json_int_t)st.pending);
    }
    /* Epochs that left the index (recovered by someone else, or released) are forgotten. */
    for (size_t i = 0; i < s->nwatch;) {
        if (!s->watch[i].seen)
            s->watch[i] = s->watch[--s->nwatch];
        else
            i++;
    }
}

static void *sw_main(void *arg)
{
    money_sweeper_t *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        s->kicked = false;
        pthread_mutex_unlock(&s->mu);
        sw_sweep(s);
        pthread_mutex_lock(&s->mu);
        struct timespec end;
        clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += s->cfg.interval_ms / 1000;
        end.tv_nsec += (long)(s->cfg.interval_ms % 1000) * 1000000L;
        if (end.tv_nsec >= 1000000000L) {
            end.tv_sec++;
            end.tv_nsec -= 1000000000L;
        }
        while (!s->stopping && !s->kicked &&
               pthread_cond_timedwait(&s->cv, &s->mu, &end) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&s->mu);
    sw_disconnect(s);
    mcluster_destroy(s->m);
    rcluster_destroy(s->rc);
    s->m = NULL;
    s->rc = NULL;
    return NULL;
}

money_sweeper_t *money_sweeper_create(const money_sweeper_config_t *cfg)
{
    if (cfg == NULL || cfg->redis_host == NULL || cfg->redis_port <= 0 || cfg->redis_port > 65535 ||
        cfg->interval_ms < 0 || cfg->grace_ms < 0) {
        log_emit(LOG_ERROR, "money_sweeper_bad_config", "{s:s}", "error",
                 "needs a Redis host and port and non-negative interval and grace");
        return NULL;
    }
    money_sweeper_t *s = xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    if (s->cfg.interval_ms == 0)
        s->cfg.interval_ms = 1000;
    if (s->cfg.grace_ms == 0)
        s->cfg.grace_ms = 12000;
    if (s->cfg.history_maxlen <= 0)
        s->cfg.history_maxlen = 100000;
    s->host = xstrdup(cfg->redis_host);
    s->cfg.redis_host = s->host;
    s->cfg.redis_sentinels = cfg->redis_sentinels ? xstrdup(cfg->redis_sentinels) : NULL;
    s->cfg.redis_master = cfg->redis_master ? xstrdup(cfg->redis_master) : NULL;
    s->cfg.redis_cluster = cfg->redis_cluster ? xstrdup(cfg->redis_cluster) : NULL;
    metrics_registry_t *m = cfg->metrics;
    if (m == NULL)
        m = s->own_metrics = metrics_create();
    const char *h = "held epochs recovered by this server's sweeper";
    s->m_dead = metrics_counter(m, "money_recoveries_total", "mode=\"dead\"", h);
    s->m_claim = metrics_counter(m, "money_recoveries_total", "mode=\"claim\"", h);
    s->m_chips = metrics_counter(m, "money_recovered_chips_total", NULL,
                                 "chips the sweeper returned from dead servers' seat accounts");
    s->m_voided = metrics_counter(m, "money_recovered_rounds_voided_total", NULL,
                                  "rounds in progress on a dead server, voided by the sweeper");
    s->m_epochs = metrics_gauge(m, "money_held_epochs", NULL,
                                "server epochs with held chips or rounds (last sweep)");
    s->m_errors = metrics_counter(m, "money_sweep_errors_total", NULL,
                                  "sweeps or recoveries that failed (Redis unreachable...)");
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&s->thread, NULL, sw_main, s) != 0) {
        log_emit(LOG_ERROR, "money_sweeper_thread_failed", "{s:s}", "error", strerror(errno));
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        metrics_destroy(s->own_metrics);
        free(s->host);
        free((char *)s->cfg.redis_sentinels);
        free((char *)s->cfg.redis_master);
        free((char *)s->cfg.redis_cluster);
        free((char *)s->cfg.redis_cluster);
        free(s);
        return NULL;
    }
    return s;
}

void money_sweeper_set_own(money_sweeper_t *s, const char *service, uint32_t slot, uint64_t epoch)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    snprintf(s->own, sizeof s->own, "%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    s->kicked = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void money_sweeper_kick(money_sweeper_t *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->kicked = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void money_sweeper_destroy(money_sweeper_t *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->watch);
    metrics_destroy(s->own_metrics);
    free(s->host);
    free((char *)s->cfg.redis_sentinels);
    free((char *)s->cfg.redis_master);
    free((char *)s->cfg.redis_cluster);
    free(s);
}
