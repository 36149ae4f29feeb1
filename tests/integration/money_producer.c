/*
 * money_producer -- a child process for the money writer's SIGTERM test.
 *
 *   money_producer REDIS_PORT SERVICE NDESKS
 *
 * NDESKS threads ("desks") submit deterministic settlements (tests/integration/money_gen.h,
 * epoch 3, server slot 1) through one money_writer until SIGTERM. The signal handler only sets a
 * flag; the main thread then stops the desks, flushes the writer and prints, for the checker,
 * "desk=D submitted=N" per desk and "flush drained flushed=F", then exits 0 (1 if the flush
 * timed out or a settlement failed).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "money_gen.h"
#include "money_writer.h"

static volatile sig_atomic_t stop_requested;
static _Atomic bool desks_stop;
static _Atomic long failures;

static void on_sigterm(int sig)
{
    (void)sig;
    stop_requested = 1;
}

typedef struct {
    money_writer_t *w;
    uint64_t desk;
    uint64_t submitted;
} producer_desk_t;

static void done_cb(money_result_t *r, void *arg)
{
    (void)arg;
    if (r->status != MONEY_OK) {
        fprintf(stderr, "settlement %s failed: %s\n", r->id, r->error);
        atomic_fetch_add(&failures, 1);
    }
    free(r);
}

static void *desk_main(void *arg)
{
    producer_desk_t *d = arg;
    while (!atomic_load(&desks_stop)) {
        if (!money_writer_can_start_round(d->w)) {
            usleep(500);
            continue;
        }
        money_settlement_t s;
        money_gen_settlement(3, d->desk, d->submitted + 1, &s);
        if (money_writer_submit_settle(d->w, &s, done_cb, NULL) != 0) {
            atomic_fetch_add(&failures, 1);
            break;
        }
        d->submitted++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s REDIS_PORT SERVICE NDESKS\n", argv[0]);
        return 2;
    }
    int ndesks = atoi(argv[3]);
    if (ndesks < 1 || ndesks > 64) {
        fprintf(stderr, "NDESKS must be 1..64\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigterm;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    money_writer_config_t cfg = {.redis_host = "127.0.0.1",
                                 .redis_port = atoi(argv[1]),
                                 .service = argv[2],
                                 .high_watermark = 2000};
    money_writer_t *w = money_writer_create(&cfg);
    if (w == NULL)
        return 1;
    producer_desk_t desks[64];
    pthread_t th[64];
    for (int i = 0; i < ndesks; i++) {
        desks[i] = (producer_desk_t){.w = w, .desk = (uint64_t)i};
        pthread_create(&th[i], NULL, desk_main, &desks[i]);
    }
    printf("producing\n");
    fflush(stdout);
    while (!stop_requested)
        pause();
    /* The drain order: stop producing, flush the queue, only then exit (release the lease). */
    atomic_store(&desks_stop, true);
    for (int i = 0; i < ndesks; i++)
        pthread_join(th[i], NULL);
    size_t depth = money_writer_depth(w);
    long flushed = money_writer_flush(w, 60000);
    for (int i = 0; i < ndesks; i++)
        printf("desk=%d submitted=%llu\n", i, (unsigned long long)desks[i].submitted);
    if (flushed >= 0)
        printf("flush drained flushed=%ld depth_at_stop=%zu\n", flushed, depth);
    else
        printf("flush timed out: %s\n", strerror(-(int)flushed));
    money_writer_destroy(w);
    fflush(stdout);
    return flushed >= 0 && atomic_load(&failures) == 0 ? 0 : 1;
}
