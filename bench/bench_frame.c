/*
 * bench_frame -- cost of the framing codec on the gateway's and game server's hot paths:
 *
 *   A  read: frame_read_client() over an evbuffer holding many client frames (every kind
 *      from tests/unit/test_proto_samples.c, round-robin): header, wire pass, budgeted unpack,
 *      checks, free;
 *   B  write: frame_pack_server() of every gate -> client sample kind (checks + pack);
 *   C  read: frame_read_rpc() of every rpc sample kind;
 *   D  the codec work of croupier-gate per relayed action: read a client action, pack its rpc
 *      frame, read the game server's reply, pack the answer to the client.
 *
 * Usage: bench_frame [ROUNDS]   (default 20000 rounds of every sample)
 * Prints one line per figure: frames per second and nanoseconds per frame (wall and CPU).
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

/* CPU time of this process: the figure that does not depend on the other load of the machine. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
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

static double cpu0;

static void report(const char *what, long frames, size_t bytes, double secs)
{
    double cpu = cpu_s() - cpu0;
    printf("%-44s frames=%ld bytes=%zu  %.0f frames/s  %.0f ns/frame  %.1f MB/s  cpu %.0f "
           "ns/frame\n",
           what, frames, bytes, frames / secs, secs * 1e9 / frames, bytes / secs / 1e6,
           cpu * 1e9 / frames);
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
    cpu0 = cpu_s();
    while (frame_read_client(in, NULL, &cm, NULL) == FRAME_OK) {
        frames++;
        frame_free_client(cm);
    }
    report("A read client frames (25 kinds)", frames, bytes, now_s() - t0);

    /* B: pack every server sample kind into an evbuffer, draining it now and then. */
    pack_ctx_t pc = {evbuffer_new(), 0};
    bytes = 0;
    t0 = now_s();
    cpu0 = cpu_s();
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
    cpu0 = cpu_s();
    while (frame_read_rpc(in, NULL, &rm, NULL) == FRAME_OK) {
        frames++;
        frame_free_rpc(rm);
    }
    report("C read rpc frames (14 kinds)", frames, bytes, now_s() - t0);

    /* D: what croupier-gate does to relay one action (bench_gate relay): read the client's
     * ClientMessage{action}, pack the RpcFrame{action} to the game server, read its
     * RpcFrame{reply{payload}} and pack the ServerMessage back to the client. */
    struct evbuffer *cin = evbuffer_new(), *rin = evbuffer_new(), *out = evbuffer_new();
    Croupier__SheddingAction sa = CROUPIER__SHEDDING_ACTION__INIT;
    sa.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    act.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    act.shedding = &sa;
    Croupier__ClientMessage cmsg = CROUPIER__CLIENT_MESSAGE__INIT;
    cmsg.request_id = 77;
    cmsg.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    cmsg.action = &act;
    Croupier__Result res = CROUPIER__RESULT__INIT;
    Croupier__ServerMessage pay = CROUPIER__SERVER_MESSAGE__INIT;
    pay.has_event_seq = true;
    pay.event_seq = 12345;
    pay.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    pay.result = &res;
    Croupier__Reply rep = CROUPIER__REPLY__INIT;
    rep.payload = &pay;
    Croupier__RpcFrame rf = CROUPIER__RPC_FRAME__INIT;
    rf.request_id = 1234567;
    rf.has_player_id = rf.has_session_id = true;
    rf.player_id = 42;
    rf.session_id = 0x123456789abcdefULL;
    rf.body_case = CROUPIER__RPC_FRAME__BODY_REPLY;
    rf.reply = &rep;
    long n = rounds * 25;
    for (long i = 0; i < n; i++) {
        frame_pack_client(cin, &cmsg, NULL, NULL);
        frame_pack_rpc(rin, &rf, NULL, NULL);
    }
    frames = 0;
    t0 = now_s();
    cpu0 = cpu_s();
    for (long i = 0; i < n; i++) {
        Croupier__ClientMessage *c;
        if (frame_read_client(cin, NULL, &c, NULL) != FRAME_OK)
            abort();
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        f.request_id = 1000 + (uint64_t)i;
        f.has_deadline_unix_ms = f.has_player_id = f.has_session_id = true;
        f.deadline_unix_ms = 1700000000000ULL;
        f.player_id = 42;
        f.session_id = 0x123456789abcdefULL;
        f.has_client_request_id = true;
        f.client_request_id = c->request_id;
        f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
        f.action = c->action;
        if (frame_pack_rpc(out, &f, NULL, NULL) != 0)
            abort();
        frame_free_client(c);
        Croupier__RpcFrame *r;
        if (frame_read_rpc(rin, NULL, &r, NULL) != FRAME_OK)
            abort();
        r->reply->payload->has_request_id = true;
        r->reply->payload->request_id = 77;
        if (frame_pack_server(out, r->reply->payload, NULL, NULL) != 0)
            abort();
        frame_free_rpc(r);
        if (evbuffer_get_length(out) > 65536)
            evbuffer_drain(out, evbuffer_get_length(out));
        frames++;
    }
    report("D gateway relay of one action (4 frames)", frames, 0, now_s() - t0);
    evbuffer_free(cin);
    evbuffer_free(rin);
    evbuffer_free(out);

    evbuffer_free(pc.out);
    evbuffer_free(in);
    return 0;
}
