#include "rpcc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RPCC_MAX_QUEUED 4096

struct rpcc {
    int fd;
    bool eof;
    struct evbuffer *in;
    Croupier__RpcFrame *queued[RPCC_MAX_QUEUED]; /* received, not yet taken */
    int nqueued;
};

int64_t rpcc_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t rpcc_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rpcc_send_raw(rpcc_t *c, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int rpcc_send(rpcc_t *c, const Croupier__RpcFrame *f)
{
    uint8_t buf[70000];
    frame_error_t err;
    ssize_t n = frame_encode(&f->base, NULL, buf, sizeof buf, &err);
    if (n < 0) {
        fprintf(stderr, "# rpcc encode: %s\n", err.detail);
        return (int)n;
    }
    return rpcc_send_raw(c, buf, (size_t)n);
}

Croupier__RpcFrame *rpcc_recv(rpcc_t *c, int timeout_ms)
{
    int64_t end = rpcc_mono_ms() + timeout_ms;
    for (;;) {
        Croupier__RpcFrame *f;
        frame_error_t err;
        frame_result_t r = frame_read_rpc(c->in, NULL, &f, &err);
        if (r == FRAME_OK)
            return f;
        if (r != FRAME_NEED_MORE) {
            fprintf(stderr, "# rpcc bad frame: %s\n", err.detail);
            return NULL;
        }
        if (c->eof)
            return NULL;
        int left = (int)(end - rpcc_mono_ms());
        if (left <= 0)
            return NULL;
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, left) <= 0)
            continue;
        char buf[65536];
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            c->eof = true;
            continue;
        }
        evbuffer_add(c->in, buf, (size_t)n);
    }
}

static void rpcc_queue(rpcc_t *c, Croupier__RpcFrame *f)
{
    if (c->nqueued == RPCC_MAX_QUEUED) {
        frame_free_rpc(f);
        return;
    }
    c->queued[c->nqueued++] = f;
}

static Croupier__RpcFrame *rpcc_take(rpcc_t *c, int i)
{
    Croupier__RpcFrame *f = c->queued[i];
    memmove(&c->queued[i], &c->queued[i + 1], (size_t)(c->nqueued - i - 1) * sizeof f);
    c->nqueued--;
    return f;
}

Croupier__RpcFrame *rpcc_wait_reply(rpcc_t *c, uint64_t request_id, int timeout_ms)
{
    for (int i = 0; i < c->nqueued; i++)
        if (c->queued[i]->body_case == CROUPIER__RPC_FRAME__BODY_REPLY &&
            c->queued[i]->request_id == request_id)
            return rpcc_take(c, i);
    int64_t end = rpcc_mono_ms() + timeout_ms;
    for (;;) {
        int left = (int)(end - rpcc_mono_ms());
        if (left <= 0)
            return NULL;
        Croupier__RpcFrame *f = rpcc_recv(c, left);
        if (f == NULL)
            return NULL;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_REPLY && f->request_id == request_id)
            return f;
        rpcc_queue(c, f);
    }
}

static bool rpcc_is_event(const Croupier__RpcFrame *f)
{
    return f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH ||
           f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING ||
           f->body_case == CROUPIER__RPC_FRAME__BODY_MOVED;
}

Croupier__RpcFrame *rpcc_next_event(rpcc_t *c, int timeout_ms)
{
    for (int i = 0; i < c->nqueued; i++)
        if (rpcc_is_event(c->queued[i]))
            return rpcc_take(c, i);
    int64_t end = rpcc_mono_ms() + timeout_ms;
    for (;;) {
        int left = (int)(end - rpcc_mono_ms());
        if (left <= 0)
            return NULL;
        Croupier__RpcFrame *f = rpcc_recv(c, left);
        if (f == NULL)
            return NULL;
        if (rpcc_is_event(f))
            return f;
        rpcc_queue(c, f);
    }
}

bool rpcc_closed(const rpcc_t *c)
{
    return c->eof;
}

rpcc_t *rpcc_connect(const char *host, int port, int timeout_ms)
{
    static unsigned n;
    char id[64];
    snprintf(id, sizeof id, "test-gate-%ld-%u", (long)getpid(), ++n);
    return rpcc_connect_as(host, port, id, timeout_ms);
}

static rpcc_t *rpcc_open(const char *host, int port, const char *gate_id, bool push_to,
                         int timeout_ms);

rpcc_t *rpcc_connect_as(const char *host, int port, const char *gate_id, int timeout_ms)
{
    return rpcc_open(host, port, gate_id, false, timeout_ms);
}

rpcc_t *rpcc_connect_push_to(const char *host, int port, const char *gate_id, int timeout_ms)
{
    return rpcc_open(host, port, gate_id, true, timeout_ms);
}

static rpcc_t *rpcc_open(const char *host, int port, const char *gate_id, bool push_to,
                         int timeout_ms)
{
    rpcc_t *c = calloc(1, sizeof *c);
    c->in = evbuffer_new();
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &a.sin_addr);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0) {
        fprintf(stderr, "# rpcc connect %s:%d: %s\n", host, port, strerror(errno));
        rpcc_close(c);
        return NULL;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__LinkHello h = CROUPIER__LINK_HELLO__INIT;
    h.version = 1;
    h.gate_id = (char *)gate_id;
    h.has_push_to = push_to;
    h.push_to = push_to;
    f.request_id = 1;
    f.body_case = CROUPIER__RPC_FRAME__BODY_HELLO;
    f.hello = &h;
    Croupier__RpcFrame *ack = NULL;
    if (rpcc_send(c, &f) == 0)
        ack = rpcc_recv(c, timeout_ms);
    if (ack == NULL || ack->body_case != CROUPIER__RPC_FRAME__BODY_HELLO_ACK) {
        fprintf(stderr, "# rpcc: no hello ack\n");
        frame_free_rpc(ack);
        rpcc_close(c);
        return NULL;
    }
    frame_free_rpc(ack);
    return c;
}

void rpcc_close(rpcc_t *c)
{
    if (c == NULL)
        return;
    for (int i = 0; i < c->nqueued; i++)
        frame_free_rpc(c->queued[i]);
    if (c->fd >= 0)
        close(c->fd);
    evbuffer_free(c->in);
    free(c);
}

static void rpcc_fill(Croupier__RpcFrame *f, uint64_t rid, uint64_t player, int64_t deadline)
{
    f->request_id = rid;
    f->has_player_id = true;
    f->player_id = player;
    f->has_session_id = true;
    f->session_id = player;
    f->has_deadline_unix_ms = true;
    f->deadline_unix_ms = (uint64_t)(deadline ? deadline : rpcc_wall_ms() + 5000);
}

int rpcc_join(rpcc_t *c, uint64_t rid, uint64_t player, const char *game, int64_t stake,
              int64_t deadline_ms)
{
    return rpcc_join_engine(c, rid, player, CROUPIER__ENGINE__ENGINE_TRADITIONAL, game, stake,
                            deadline_ms);
}

int rpcc_join_engine(rpcc_t *c, uint64_t rid, uint64_t player, Croupier__Engine engine,
                     const char *game, int64_t stake, int64_t deadline_ms)
{
    if (protobuf_c_enum_descriptor_get_value(&croupier__engine__descriptor, (int)engine) == NULL)
        return -EINVAL;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = engine;
    j.game = (char *)game;
    j.stake = stake;
    rpcc_fill(&f, rid, player, deadline_ms);
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
    f.join = &j;
    return rpcc_send(c, &f);
}

int rpcc_action(rpcc_t *c, uint64_t rid, uint64_t player, int64_t deadline_ms)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction sa = CROUPIER__SHEDDING_ACTION__INIT;
    sa.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &sa;
    rpcc_fill(&f, rid, player, deadline_ms);
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    return rpcc_send(c, &f);
}

int rpcc_game_action(rpcc_t *c, uint64_t rid, uint64_t player, const void *body, size_t len,
                     int64_t deadline_ms)
{
    if (body == NULL && len > 0)
        return -EINVAL;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    ga.body = (ProtobufCBinaryData){len, (uint8_t *)body};
    a.kind_case = CROUPIER__ACTION__KIND_GAME;
    a.game = &ga;
    rpcc_fill(&f, rid, player, deadline_ms);
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    return rpcc_send(c, &f);
}

int rpcc_game_action_msg(rpcc_t *c, uint64_t rid, uint64_t player, const ProtobufCMessage *m,
                         int64_t deadline_ms)
{
    uint8_t buf[FRAME_GAME_BODY_MAX];
    if (m == NULL || protobuf_c_message_get_packed_size(m) > sizeof buf)
        return m == NULL ? -EINVAL : -EMSGSIZE;
    size_t n = protobuf_c_message_pack(m, buf);
    return rpcc_game_action(c, rid, player, buf, n, deadline_ms);
}

int rpcc_leave(rpcc_t *c, uint64_t rid, uint64_t player)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Leave l = CROUPIER__LEAVE__INIT;
    rpcc_fill(&f, rid, player, 0);
    f.body_case = CROUPIER__RPC_FRAME__BODY_LEAVE;
    f.leave = &l;
    return rpcc_send(c, &f);
}

int rpcc_resume(rpcc_t *c, uint64_t rid, uint64_t player)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Resume r = CROUPIER__RESUME__INIT;
    rpcc_fill(&f, rid, player, 0);
    f.body_case = CROUPIER__RPC_FRAME__BODY_RESUME;
    f.resume = &r;
    return rpcc_send(c, &f);
}
