#include "gatec.h"

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

#define GATEC_MAX_QUEUED 4096

struct gatec {
    int fd;
    bool eof;
    int rerr;
    struct evbuffer *in;
    Croupier__ServerMessage *queued[GATEC_MAX_QUEUED];
    int nqueued;
};

static int64_t gatec_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

gatec_t *gatec_connect(const char *host, int port, int timeout_ms)
{
    (void)timeout_ms;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "# gatec connect %s:%d: %s\n", host, port, strerror(errno));
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    gatec_t *c = calloc(1, sizeof *c);
    c->fd = fd;
    c->in = evbuffer_new();
    return c;
}

void gatec_close(gatec_t *c)
{
    if (c == NULL)
        return;
    close(c->fd);
    for (int i = 0; i < c->nqueued; i++)
        frame_free_server(c->queued[i]);
    evbuffer_free(c->in);
    free(c);
}

int gatec_fd(const gatec_t *c)
{
    return c->fd;
}

int gatec_send_raw(gatec_t *c, const void *buf, size_t len)
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

int gatec_send(gatec_t *c, const Croupier__ClientMessage *m)
{
    uint8_t buf[70000];
    frame_error_t err;
    ssize_t n = frame_encode(&m->base, NULL, buf, sizeof buf, &err);
    if (n < 0) {
        fprintf(stderr, "# gatec encode: %s\n", err.detail);
        return (int)n;
    }
    return gatec_send_raw(c, buf, (size_t)n);
}

/* Reads what is available within ms into the buffer; false on timeout, EOF or error. */
static bool gatec_fill(gatec_t *c, int ms)
{
    if (c->eof)
        return false;
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    int pr = poll(&pfd, 1, ms < 0 ? 0 : ms);
    if (pr <= 0)
        return false;
    char buf[65536];
    ssize_t n = recv(c->fd, buf, sizeof buf, 0);
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return true;
        c->rerr = errno;
        c->eof = true;
        return false;
    }
    if (n == 0) {
        c->eof = true;
        return false;
    }
    evbuffer_add(c->in, buf, (size_t)n);
    return true;
}

/* The next frame from the socket only (not the queue). */
static Croupier__ServerMessage *gatec_read_one(gatec_t *c, int64_t end)
{
    for (;;) {
        Croupier__ServerMessage *m;
        frame_error_t err;
        frame_result_t r = frame_read_server(c->in, NULL, &m, &err);
        if (r == FRAME_OK)
            return m;
        if (r != FRAME_NEED_MORE) {
            fprintf(stderr, "# gatec bad frame: %s\n", err.detail);
            return NULL;
        }
        int left = (int)(end - gatec_mono_ms());
        if (left <= 0 || c->eof)
            return NULL;
        if (!gatec_fill(c, left) && c->eof) {
            /* try once more to decode what is buffered */
            if (frame_read_server(c->in, NULL, &m, &err) == FRAME_OK)
                return m;
            return NULL;
        }
    }
}

static void gatec_queue(gatec_t *c, Croupier__ServerMessage *m)
{
    if (c->nqueued == GATEC_MAX_QUEUED) {
        frame_free_server(m);
        return;
    }
    c->queued[c->nqueued++] = m;
}

static Croupier__ServerMessage *gatec_take(gatec_t *c, int i)
{
    Croupier__ServerMessage *m = c->queued[i];
    memmove(&c->queued[i], &c->queued[i + 1], (size_t)(c->nqueued - i - 1) * sizeof m);
    c->nqueued--;
    return m;
}

Croupier__ServerMessage *gatec_recv(gatec_t *c, int timeout_ms)
{
    if (c->nqueued > 0)
        return gatec_take(c, 0);
    return gatec_read_one(c, gatec_mono_ms() + timeout_ms);
}

Croupier__ServerMessage *gatec_wait_reply(gatec_t *c, uint64_t request_id, int timeout_ms)
{
    for (int i = 0; i < c->nqueued; i++)
        if (c->queued[i]->has_request_id && c->queued[i]->request_id == request_id)
            return gatec_take(c, i);
    int64_t end = gatec_mono_ms() + timeout_ms;
    for (;;) {
        Croupier__ServerMessage *m = gatec_read_one(c, end);
        if (m == NULL)
            return NULL;
        if (m->has_request_id && m->request_id == request_id)
            return m;
        gatec_queue(c, m);
    }
}

Croupier__ServerMessage *gatec_next_event(gatec_t *c, int body_case, int timeout_ms)
{
    for (int i = 0; i < c->nqueued; i++) {
        Croupier__ServerMessage *m = c->queued[i];
        if ((!m->has_request_id || m->request_id == 0) &&
            (body_case == 0 || (int)m->body_case == body_case))
            return gatec_take(c, i);
    }
    int64_t end = gatec_mono_ms() + timeout_ms;
    for (;;) {
        Croupier__ServerMessage *m = gatec_read_one(c, end);
        if (m == NULL)
            return NULL;
        if ((!m->has_request_id || m->request_id == 0) &&
            (body_case == 0 || (int)m->body_case == body_case))
            return m;
        gatec_queue(c, m);
    }
}

int gatec_wait_eof(gatec_t *c, int timeout_ms)
{
    int64_t end = gatec_mono_ms() + timeout_ms;
    while (!c->eof) {
        int left = (int)(end - gatec_mono_ms());
        if (left <= 0)
            return -ETIMEDOUT;
        gatec_fill(c, left);
    }
    Croupier__ServerMessage *m;
    frame_error_t err;
    while (frame_read_server(c->in, NULL, &m, &err) == FRAME_OK)
        gatec_queue(c, m);
    return c->rerr != 0 ? -c->rerr : 0;
}

bool gatec_eof(const gatec_t *c)
{
    return c->eof;
}

int gatec_read_error(const gatec_t *c)
{
    return c->rerr;
}

static Croupier__ServerMessage *gatec_call(gatec_t *c, Croupier__ClientMessage *m, int timeout_ms)
{
    if (gatec_send(c, m) != 0)
        return NULL;
    return gatec_wait_reply(c, m->request_id, timeout_ms);
}

Croupier__ServerMessage *gatec_login(gatec_t *c, uint64_t rid, const char *token, int timeout_ms)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Login l = CROUPIER__LOGIN__INIT;
    m.request_id = rid;
    l.token = (char *)token;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
    m.login = &l;
    return gatec_call(c, &m, timeout_ms);
}

Croupier__ServerMessage *gatec_join(gatec_t *c, uint64_t rid, int engine, const char *game,
                                    int64_t stake, int timeout_ms)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    m.request_id = rid;
    j.engine = (Croupier__Engine)engine;
    j.game = (char *)game;
    j.stake = stake;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN;
    m.join = &j;
    return gatec_call(c, &m, timeout_ms);
}

Croupier__ServerMessage *gatec_action(gatec_t *c, uint64_t rid, int timeout_ms)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction s = CROUPIER__SHEDDING_ACTION__INIT;
    m.request_id = rid;
    s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &s;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = &a;
    return gatec_call(c, &m, timeout_ms);
}

Croupier__ServerMessage *gatec_resume(gatec_t *c, uint64_t rid, int timeout_ms)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Resume r = CROUPIER__RESUME__INIT;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_RESUME;
    m.resume = &r;
    return gatec_call(c, &m, timeout_ms);
}

Croupier__ServerMessage *gatec_leave(gatec_t *c, uint64_t rid, int timeout_ms)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Leave l = CROUPIER__LEAVE__INIT;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LEAVE;
    m.leave = &l;
    return gatec_call(c, &m, timeout_ms);
}

Croupier__ServerMessage *gatec_ping(gatec_t *c, uint64_t rid, uint64_t nonce, int timeout_ms)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    m.request_id = rid;
    p.nonce = nonce;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    return gatec_call(c, &m, timeout_ms);
}

int gatec_code(const Croupier__ServerMessage *m)
{
    if (m == NULL)
        return -1;
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT && m->result->error != NULL)
        return m->result->error->code;
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ERROR)
        return m->error->code;
    return 0;
}

Croupier__ServerMessage *gatec_list_tables(gatec_t *c, uint64_t rid, int engine, const char *game,
                                           int64_t stake, int timeout_ms)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__ListTables l = CROUPIER__LIST_TABLES__INIT;
    m.request_id = rid;
    l.has_engine = engine != CROUPIER__ENGINE__ENGINE_UNSPECIFIED;
    l.engine = (Croupier__Engine)engine;
    l.game = (char *)game;
    l.has_stake = stake != 0;
    l.stake = stake;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LIST_TABLES;
    m.list_tables = &l;
    return gatec_call(c, &m, timeout_ms);
}
