/*
 * bench_frame -- cost of the framing codec on the gateway's and game server's hot paths:
 *
 *   A  read: frame_read_client() over an evbuffer holding many client frames (every kind
 *      from tests/unit/test_proto_samples.c, round-robin): header, wire pass, budgeted unpack,
 *      checks, free;
 *   B  write: frame_pack_server() of every gate -> client sample kind (checks + pack);
 *   C  read: frame_read_rpc() of every rpc sample kind.
 *
 * Usage: bench_frame [ROUNDS]   (default 20000 rounds of every sample)
 * Prints one line per figure: frames per second and nanoseconds per frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <event2/buffer.h>

#include "test_proto_samples.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_client(void *arg, const char *name, const Croupier__ClientMessage *m)
{
    (void)name;
    if (frame_pack_client(arg, m, NULL, NULL) != 0)
        abort();
}

static void add_rpc(void *arg, const char *name, const Croupier__RpcFrame *m)
{
    (void)name;
    if (frame_pack_rpc(arg, m, NULL, NULL) != 0)
        abort();
}

typedef struct {
    struct evbuffer *out;
    long frames;
} pack_ctx_t;

static void pack_server(void *arg, const char *name, const Croupier__ServerMessage *m)
{
    (void)name;
    pack_ctx_t *c = arg;
    if (frame_pack_server(c->out, m, NULL, NULL) != 0)
        abort();
    c->frames++;
}

static void report(const char *what, long frames, size_t bytes, double secs)
{
    printf("%-44s frames=%ld bytes=%zu  %.0f frames/s  %.0f ns/frame  %.1f MB/s\n", what, frames,
           bytes, frames / secs, secs * 1e9 / frames, bytes / secs / 1e6);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    if (rounds <= 0)
        rounds = 1;
    printf("command: bench_frame %ld\n", rounds);

    /* A: one evbuffer with rounds x every client sample, read in one loop. */
    struct evbuffer *in = evbuffer_new();
    for (long r = 0; r < rounds; r++)
        samples_client(add_client, in);
    size_t bytes = evbuffer_get_length(in);
    long frames = 0;
    Croupier__ClientMessage *cm;
    double t0 = now_s();
    while (frame_read_client(in, NULL, &cm, NULL) == FRAME_OK) {
        frames++;
        frame_free_client(cm);
    }
    report("A read client frames (25 kinds)", frames, bytes, now_s() - t0);

    /* B: pack every server sample kind into an evbuffer, draining it now and then. */
    pack_ctx_t pc = {evbuffer_new(), 0};
    bytes = 0;
    t0 = now_s();
    for (long r = 0; r < rounds; r++) {
        samples_server(pack_server, &pc);
        bytes += evbuffer_get_length(pc.out);
        evbuffer_drain(pc.out, evbuffer_get_length(pc.out));
    }
    report("B pack server frames (20 kinds)", pc.frames, bytes, now_s() - t0);

    /* C: rpc frames, as the game server reads its links. */
    for (long r = 0; r < rounds; r++)
        samples_rpc(add_rpc, in);
    bytes = evbuffer_get_length(in);
    frames = 0;
    Croupier__RpcFrame *rm;
    t0 = now_s();
    while (frame_read_rpc(in, NULL, &rm, NULL) == FRAME_OK) {
        frames++;
        frame_free_rpc(rm);
    }
    report("C read rpc frames (14 kinds)", frames, bytes, now_s() - t0);

    evbuffer_free(pc.out);
    evbuffer_free(in);
    return 0;
}
