/*
 * croupier-runtime-demo -- runs the desk-actor runtime on its own, with bot desks.
 *
 * This is what `./dev run` runs until the local cluster (Redis, gateways, game servers, bots)
 * exists. It starts the runtime (engine/runtime.h) with W workers and N desks. Each desk plays
 * simple timed rounds: every turn is a real runtime timer, and on each turn the desk sends "bet"
 * messages to other desks (on any worker), which answer with "ack" messages. A quarter of the
 * desks have one seat flagged as a human seat (there are no real players here: every seat is
 * played by the desk itself), so the human-desk counter moves as it will in the game server.
 *
 * Once a second it prints the runtime's own counters. After --seconds it stops intake, as the
 * drain does: running rounds finish, no round begins, desks are told their table closes; it
 * prints the counters until no desk is in a round and the human-desk count is 0, then stops the
 * runtime (destroying every desk on its own thread) and exits 0. Exit 1 if the rounds did not
 * finish within --drain-max-seconds.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "runtime.h"

enum { MSG_START = RT_MSG_USER, MSG_BET, MSG_ACK };
enum { TIMER_TURN = 1, TIMER_NEXT_ROUND = 2 };

typedef struct {
    uint32_t rng;
    unsigned human_seats; /* seats flagged human at this desk (0 or 1) */
    int turns_left;
    uint64_t acks;
} demo_desk_t;

static rt_desk_id_t *demo_ids; /* written before the first message, read-only afterwards */
static long demo_ndesks;
static _Atomic long demo_told_closed;
static volatile sig_atomic_t demo_interrupted;

static uint32_t demo_rand(demo_desk_t *d)
{
    uint32_t x = d->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    d->rng = x;
    return x;
}

/* Starts a round unless intake stopped; seats the desk's humans for the round. */
static void demo_start_round(rt_desk_t *desk, demo_desk_t *d)
{
    if (rt_desk_begin_round(desk) != 0) {
        rt_desk_set_humans(desk, 0); /* table closed: the players leave */
        return;
    }
    rt_desk_set_humans(desk, d->human_seats);
    d->turns_left = 4 + (int)(demo_rand(d) % 8);
    rt_desk_timer_arm(desk, 20 + demo_rand(d) % 60, TIMER_TURN, NULL);
}

static void demo_turn(rt_desk_t *desk, demo_desk_t *d)
{
    rt_t *rt = rt_desk_rt(desk);
    for (int i = 0; i < 3; i++) {
        rt_desk_id_t to = demo_ids[demo_rand(d) % (uint32_t)demo_ndesks];
        rt_post(rt, to,
                &(rt_msg_t){.type = MSG_BET, .arg = demo_rand(d) % 100, .arg2 = rt_desk_id(desk)});
    }
    if (--d->turns_left > 0) {
        rt_desk_timer_arm(desk, 20 + demo_rand(d) % 60, TIMER_TURN, NULL);
        return;
    }
    rt_desk_end_round(desk, RT_ROUND_COMPLETED);
    if (rt_intake_stopped(rt)) {
        rt_desk_set_humans(desk, 0);
        return;
    }
    rt_desk_timer_arm(desk, 50 + demo_rand(d) % 150, TIMER_NEXT_ROUND, NULL);
}

static void demo_on_message(rt_desk_t *desk, void *state, rt_msg_t *msg)
{
    demo_desk_t *d = state;
    switch (msg->type) {
    case MSG_START:
        demo_start_round(desk, d);
        break;
    case MSG_BET:
        rt_post(rt_desk_rt(desk), msg->arg2, &(rt_msg_t){.type = MSG_ACK, .arg = msg->arg});
        break;
    case MSG_ACK:
        d->acks++;
        break;
    case RT_MSG_TIMER:
        if (msg->arg == TIMER_TURN)
            demo_turn(desk, d);
        else
            demo_start_round(desk, d);
        break;
    case RT_MSG_INTAKE_STOPPED:
        /* Here a game would tell its seated players that the table closes after this round. */
        atomic_fetch_add(&demo_told_closed, 1);
        if (!rt_desk_in_round(desk))
            rt_desk_set_humans(desk, 0);
        break;
    }
}

static void demo_on_destroy(rt_desk_t *desk, void *state)
{
    (void)desk;
    free(state);
}

static const rt_desk_ops_t demo_ops = {demo_on_message, demo_on_destroy};

static void demo_on_signal(int sig)
{
    (void)sig;
    demo_interrupted = 1;
}

static void demo_print(rt_t *rt, const char *phase, double t, uint64_t *last_msgs, int64_t *last_ns)
{
    uint64_t msgs = rt_messages_delivered(rt);
    int64_t now = clock_mono_ns();
    double rate = (double)(msgs - *last_msgs) / ((double)(now - *last_ns) / 1e9);
    *last_msgs = msgs;
    *last_ns = now;
    printf("%-7s t=%5.1fs desks=%llu in_round=%llu human_desks=%llu humans=%llu msgs/s=%.0f "
           "rounds_completed=%llu dropped=%llu\n",
           phase, t, (unsigned long long)rt_desks(rt), (unsigned long long)rt_desks_in_round(rt),
           (unsigned long long)rt_human_desks(rt), (unsigned long long)rt_humans_seated(rt), rate,
           (unsigned long long)rt_rounds(rt, RT_ROUND_COMPLETED),
           (unsigned long long)rt_dropped_messages(rt));
}

int main(int argc, char **argv)
{
    long seconds, desks, workers, drain_max;
    static config_flag_t flags[] = {
        {"seconds", CONFIG_INT, "10", "seconds of play before intake stops", NULL, 1, 86400},
        {"desks", CONFIG_INT, "3000", "bot desks", NULL, 1, 1000000},
        {"workers", CONFIG_INT, "2", "runtime worker threads", NULL, 1, RT_MAX_WORKERS},
        {"drain-max-seconds", CONFIG_INT, "15", "bound on waiting for rounds to finish", NULL, 1,
         3600},
        {0},
    };
    flags[0].out = &seconds;
    flags[1].out = &desks;
    flags[2].out = &workers;
    flags[3].out = &drain_max;
    char err[256];
    int rc = config_parse(flags, "croupier-runtime-demo",
                          "the desk-actor runtime on its own, with bot desks", argc, argv, err,
                          sizeof(err));
    if (rc == CONFIG_HELP)
        return 0;
    if (rc != CONFIG_OK) {
        fprintf(stderr, "croupier-runtime-demo: %s\n", err);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("croupier-runtime-demo: this is the desk-actor RUNTIME DEMO, not the full cluster "
           "(no Redis, gateways, game servers or network yet).\n"
           "%ld bot desks on %ld workers play timed rounds with real runtime messages and "
           "timers;\none desk in four has a seat flagged human (played by the desk itself). "
           "Intake stops after %ld s.\n",
           desks, workers, seconds);

    struct sigaction sa = {.sa_handler = demo_on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    rt_t *rt;
    rc = rt_create((unsigned)workers, &rt);
    if (rc < 0) {
        fprintf(stderr, "croupier-runtime-demo: cannot start the runtime: %s\n", strerror(-rc));
        return 1;
    }
    demo_ids = calloc((size_t)desks, sizeof(*demo_ids));
    demo_ndesks = desks;
    int64_t t0 = clock_mono_ns();
    for (long i = 0; i < desks; i++) {
        demo_desk_t *d = calloc(1, sizeof(*d));
        d->rng = 2463534242u ^ (uint32_t)(i * 2654435761u);
        if (d->rng == 0)
            d->rng = 1;
        d->human_seats = i % 4 == 0;
        rc = rt_desk_create(rt, &demo_ops, d, -1, &demo_ids[i]);
        if (rc < 0) {
            fprintf(stderr, "croupier-runtime-demo: desk %ld: %s\n", i, strerror(-rc));
            free(d);
            rt_destroy(rt);
            free(demo_ids);
            return 1;
        }
    }
    printf("created %ld desks in %.1f ms\n", desks, (double)(clock_mono_ns() - t0) / 1e6);
    for (long i = 0; i < desks; i++)
        rt_post(rt, demo_ids[i], &(rt_msg_t){.type = MSG_START});

    uint64_t last_msgs = 0;
    int64_t last_ns = clock_mono_ns(), start = last_ns;
    for (long s = 1; s <= seconds && !demo_interrupted; s++) {
        while (clock_mono_ns() < start + s * 1000000000LL && !demo_interrupted)
            usleep(10000);
        demo_print(rt, "play", (double)(clock_mono_ns() - start) / 1e9, &last_msgs, &last_ns);
    }

    printf("stopping intake: running rounds finish, no round begins, every desk is told its "
           "table closes\n");
    rt_stop_intake(rt);
    int64_t drain_start = clock_mono_ns();
    bool drained = false;
    for (;;) {
        usleep(200000);
        demo_print(rt, "drain", (double)(clock_mono_ns() - start) / 1e9, &last_msgs, &last_ns);
        if (rt_desks_in_round(rt) == 0 && rt_human_desks(rt) == 0) {
            drained = true;
            break;
        }
        if (clock_mono_ns() - drain_start > drain_max * 1000000000LL)
            break;
    }
    printf("%s after %.1f s: desks told their table closes=%ld human_desks=%llu\n",
           drained ? "all rounds finished" : "DRAIN BOUND PASSED, rounds still running",
           (double)(clock_mono_ns() - drain_start) / 1e9, atomic_load(&demo_told_closed),
           (unsigned long long)rt_human_desks(rt));
    rt_stop(rt);
    printf("runtime stopped: desks=%llu rounds completed=%llu abandoned=%llu messages "
           "delivered=%llu dropped=%llu\n",
           (unsigned long long)rt_desks(rt), (unsigned long long)rt_rounds(rt, RT_ROUND_COMPLETED),
           (unsigned long long)rt_rounds(rt, RT_ROUND_ABANDONED),
           (unsigned long long)rt_messages_delivered(rt),
           (unsigned long long)rt_dropped_messages(rt));
    rt_destroy(rt);
    free(demo_ids);
    return drained ? 0 : 1;
}
