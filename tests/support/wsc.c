/*
 * wsc.c -- the blocking WebSocket test client (see wsc.h). Input is read from the socket into
 * a buffer and handed to a wslay client event context, whose messages are queued here.
 */
#include "wsc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <wslay/wslay.h>

typedef struct wsc_q {
    struct wsc_q *next;
    int opcode;
    int close_code;
    size_t len;
    uint8_t data[];
} wsc_q_t;

struct wsc {
    int fd;
    SSL *ssl; /* TLS (wsc_open_tls): every byte goes through it */
    uint8_t buf[1 << 17];
    size_t have, off; /* unread input: buf[off..have) */
    bool eof;
    int read_err;
    wslay_event_context_ptr ev;
    wslay_frame_context_ptr fr;
    wsc_q_t *head, *tail, *last; /* last: the message handed out last (freed on the next) */
};

static long long wsc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

wsc_t *wsc_open(const char *host, int port, int timeout_ms)
{
    (void)timeout_ms;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return NULL;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "wsc: connect %s:%d: %s\n", host, port, strerror(errno));
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    wsc_t *w = calloc(1, sizeof *w);
    w->fd = fd;
    return w;
}

wsc_t *wsc_open_tls(const char *host, int port, SSL_CTX *tls, int timeout_ms)
{
    wsc_t *w = wsc_open(host, port, timeout_ms);
    if (w == NULL || tls == NULL)
        return w;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(w->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    w->ssl = SSL_new(tls);
    SSL_set_fd(w->ssl, w->fd);
    if (SSL_connect(w->ssl) != 1) {
        wsc_close(w);
        return NULL;
    }
    struct timeval none = {0, 0};
    setsockopt(w->fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    return w;
}

SSL *wsc_ssl(const wsc_t *w)
{
    return w->ssl;
}

static void wsc_drop_last(wsc_t *w)
{
    free(w->last);
    w->last = NULL;
}

void wsc_close(wsc_t *w)
{
    if (w == NULL)
        return;
    wsc_drop_last(w);
    while (w->head != NULL) {
        wsc_q_t *q = w->head;
        w->head = q->next;
        free(q);
    }
    if (w->ev != NULL)
        wslay_event_context_free(w->ev);
    if (w->fr != NULL)
        wslay_frame_context_free(w->fr);
    SSL_free(w->ssl);
    close(w->fd);
    free(w);
}

int wsc_fd(const wsc_t *w)
{
    return w->fd;
}

int wsc_send_raw(wsc_t *w, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    if (w->ssl != NULL && len > 0)
        return SSL_write(w->ssl, buf, (int)len) == (int)len ? 0 : -EPIPE;
    while (len > 0) {
        ssize_t n = send(w->fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads what arrives within the time left into buf. 0, or -ETIMEDOUT / -EPIPE / -errno. */
static int wsc_fill(wsc_t *w, long long end)
{
    if (w->eof)
        return -EPIPE;
    if (w->off == w->have)
        w->off = w->have = 0;
    if (w->have == sizeof w->buf) {
        memmove(w->buf, w->buf + w->off, w->have - w->off);
        w->have -= w->off;
        w->off = 0;
    }
    long long left = end - wsc_now_ms();
    if (left < 0)
        left = 0;
    struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
    int pr = w->ssl != NULL && SSL_pending(w->ssl) > 0 ? 1 : poll(&pfd, 1, (int)left);
    if (pr == 0)
        return -ETIMEDOUT;
    if (pr < 0)
        return -errno;
    if (w->ssl != NULL) {
        errno = 0;
        int r = SSL_read(w->ssl, w->buf + w->have, (int)(sizeof w->buf - w->have));
        if (r > 0) {
            w->have += (size_t)r;
            return 0;
        }
        int e = SSL_get_error(w->ssl, r);
        if (e == SSL_ERROR_WANT_READ)
            return 0;
        if (e == SSL_ERROR_ZERO_RETURN) { /* close_notify */
            w->eof = true;
            return -EPIPE;
        }
        if (e == SSL_ERROR_SYSCALL && errno == 0) { /* EOF without close_notify */
            w->eof = true;
            return -EPIPE;
        }
        w->read_err = errno != 0 ? errno : EPROTO;
        return -w->read_err;
    }
    ssize_t n = recv(w->fd, w->buf + w->have, sizeof w->buf - w->have, 0);
    if (n == 0) {
        w->eof = true;
        return -EPIPE;
    }
    if (n < 0) {
        w->read_err = errno;
        return -errno;
    }
    w->have += (size_t)n;
    return 0;
}

int wsc_read_http(wsc_t *w, int timeout_ms, char *head, size_t cap)
{
    long long end = wsc_now_ms() + timeout_ms;
    for (;;) {
        uint8_t *s = w->buf + w->off;
        size_t n = w->have - w->off;
        for (size_t i = 0; i + 3 < n; i++) {
            if (memcmp(s + i, "\r\n\r\n", 4) == 0) {
                size_t l = i + 4 < cap ? i + 4 : cap - 1;
                memcpy(head, s, l);
                head[l] = '\0';
                w->off += i + 4;
                int code = 0;
                if (sscanf(head, "HTTP/1.1 %d", &code) != 1)
                    return -EPROTO;
                return code;
            }
        }
        int rc = wsc_fill(w, end);
        if (rc != 0)
            return rc;
    }
}

static ssize_t wsc_ev_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                              void *arg)
{
    (void)flags;
    wsc_t *w = arg;
    size_t n = w->have - w->off;
    if (n == 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    if (n > len)
        n = len;
    memcpy(buf, w->buf + w->off, n);
    w->off += n;
    return (ssize_t)n;
}

/* The event context never sends (replies go out through wsc_send_frame). */
static ssize_t wsc_ev_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
                              int flags, void *arg)
{
    (void)ctx;
    (void)data;
    (void)flags;
    (void)arg;
    return (ssize_t)len;
}

static int wsc_ev_genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *arg)
{
    (void)ctx;
    (void)arg;
    return RAND_bytes(buf, (int)len) == 1 ? 0 : -1;
}

static void wsc_ev_msg_cb(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *a,
                          void *arg)
{
    (void)ctx;
    wsc_t *w = arg;
    wsc_q_t *q = malloc(sizeof *q + a->msg_length + 1);
    q->next = NULL;
    q->opcode = a->opcode;
    q->close_code = a->opcode == WSLAY_CONNECTION_CLOSE ? a->status_code : 0;
    const uint8_t *m = a->msg;
    size_t l = a->msg_length;
    if (a->opcode == WSLAY_CONNECTION_CLOSE && l >= 2) {
        m += 2;
        l -= 2;
    }
    q->len = l;
    if (l > 0)
        memcpy(q->data, m, l);
    q->data[l] = '\0';
    if (w->tail != NULL)
        w->tail->next = q;
    else
        w->head = q;
    w->tail = q;
}

static ssize_t wsc_fr_send_cb(const uint8_t *data, size_t len, int flags, void *arg)
{
    (void)flags;
    return wsc_send_raw(arg, data, len) == 0 ? (ssize_t)len : -1;
}

static ssize_t wsc_fr_recv_cb(uint8_t *buf, size_t len, int flags, void *arg)
{
    (void)buf;
    (void)len;
    (void)flags;
    (void)arg;
    return -1;
}

static int wsc_fr_genmask_cb(uint8_t *buf, size_t len, void *arg)
{
    (void)arg;
    return RAND_bytes(buf, (int)len) == 1 ? 0 : -1;
}

static int wsc_start(wsc_t *w)
{
    static const struct wslay_event_callbacks cbs = {.recv_callback = wsc_ev_recv_cb,
                                                     .send_callback = wsc_ev_send_cb,
                                                     .genmask_callback = wsc_ev_genmask_cb,
                                                     .on_msg_recv_callback = wsc_ev_msg_cb};
    static const struct wslay_frame_callbacks fcbs = {.send_callback = wsc_fr_send_cb,
                                                      .recv_callback = wsc_fr_recv_cb,
                                                      .genmask_callback = wsc_fr_genmask_cb};
    if (wslay_event_context_client_init(&w->ev, &cbs, w) != 0 ||
        wslay_frame_context_init(&w->fr, &fcbs, w) != 0)
        return -ENOMEM;
    return 0;
}

wsc_t *wsc_connect(const char *host, int port, const char *path, const char *origin, int timeout_ms)
{
    return wsc_connect_tls(host, port, path, origin, NULL, timeout_ms);
}

wsc_t *wsc_connect_tls(const char *host, int port, const char *path, const char *origin,
                       SSL_CTX *tls, int timeout_ms)
{
    wsc_t *w = wsc_open_tls(host, port, tls, timeout_ms);
    if (w == NULL)
        return NULL;
    unsigned char raw[16], key[32], md[SHA_DIGEST_LENGTH], acc[40];
    RAND_bytes(raw, sizeof raw);
    EVP_EncodeBlock(key, raw, sizeof raw);
    char req[512], head[2048], want[128];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                     "Sec-WebSocket-Version: 13\r\n%s%s%s\r\n",
                     path, host, port, key, origin != NULL ? "Origin: " : "",
                     origin != NULL ? origin : "", origin != NULL ? "\r\n" : "");
    snprintf(want, sizeof want, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    EVP_Digest(want, strlen(want), md, NULL, EVP_sha1(), NULL);
    EVP_EncodeBlock(acc, md, sizeof md);
    snprintf(want, sizeof want, "\r\nSec-WebSocket-Accept: %s\r\n", acc);
    int code = wsc_send_raw(w, req, (size_t)n) == 0
                   ? wsc_read_http(w, timeout_ms, head, sizeof head)
                   : -EPIPE;
    if (code != 101 || strstr(head, want) == NULL || wsc_start(w) != 0) {
        fprintf(stderr, "wsc: handshake with %s:%d%s failed (%d): %s\n", host, port, path, code,
                code > 0 ? head : strerror(-code));
        wsc_close(w);
        return NULL;
    }
    return w;
}

int wsc_send_frame(wsc_t *w, int opcode, bool fin, int rsv, bool mask, const void *p, size_t len)
{
    if (w->fr == NULL && wsc_start(w) != 0)
        return -ENOMEM;
    struct wslay_frame_iocb io = {.fin = fin,
                                  .rsv = (uint8_t)rsv,
                                  .opcode = (uint8_t)opcode,
                                  .payload_length = len,
                                  .mask = mask,
                                  .data = p,
                                  .data_length = len};
    ssize_t r = wslay_frame_send(w->fr, &io);
    return r == (ssize_t)len ? 0 : -EIO;
}

int wsc_send_msg(wsc_t *w, const Croupier__ClientMessage *m)
{
    uint8_t buf[FRAME_DEFAULT_MAX];
    size_t n = croupier__client_message__get_packed_size(m);
    if (n > sizeof buf)
        return -EMSGSIZE;
    croupier__client_message__pack(m, buf);
    return wsc_send_frame(w, WSLAY_BINARY_FRAME, true, 0, true, buf, n);
}

int wsc_recv(wsc_t *w, wsc_msg_t *out, int timeout_ms)
{
    long long end = wsc_now_ms() + timeout_ms;
    wsc_drop_last(w);
    for (;;) {
        if (w->head != NULL) {
            wsc_q_t *q = w->head;
            w->head = q->next;
            if (w->head == NULL)
                w->tail = NULL;
            w->last = q;
            out->opcode = q->opcode;
            out->data = q->data;
            out->len = q->len;
            out->close_code = q->close_code;
            return 0;
        }
        if (w->ev == NULL)
            return -EPROTO;
        if (w->off < w->have) {
            if (wslay_event_recv(w->ev) != 0)
                return -EPROTO;
            if (w->head != NULL)
                continue;
        }
        int rc = wsc_fill(w, end);
        if (rc == -EPIPE && w->read_err == 0)
            return -EPIPE;
        if (rc != 0)
            return rc == -ECONNRESET || w->read_err == ECONNRESET ? -ECONNRESET : rc;
    }
}

Croupier__ServerMessage *wsc_recv_server(wsc_t *w, int timeout_ms, int *close_code)
{
    long long end = wsc_now_ms() + timeout_ms;
    for (;;) {
        long long left = end - wsc_now_ms();
        wsc_msg_t m;
        if (left <= 0 || wsc_recv(w, &m, (int)left) != 0)
            return NULL;
        if (m.opcode == WSLAY_CONNECTION_CLOSE) {
            if (close_code != NULL)
                *close_code = m.close_code;
            return NULL;
        }
        if (m.opcode != WSLAY_BINARY_FRAME)
            continue;
        frame_error_t err;
        Croupier__ServerMessage *sm = frame_unpack_server(m.data, m.len, NULL, &err);
        if (sm == NULL)
            fprintf(stderr, "wsc: a binary message of %zu bytes is no ServerMessage: %s\n", m.len,
                    err.detail);
        return sm;
    }
}

Croupier__ServerMessage *wsc_wait_reply(wsc_t *w, uint64_t request_id, int timeout_ms)
{
    long long end = wsc_now_ms() + timeout_ms;
    for (;;) {
        long long left = end - wsc_now_ms();
        if (left <= 0)
            return NULL;
        Croupier__ServerMessage *m = wsc_recv_server(w, (int)left, NULL);
        if (m == NULL || m->request_id == request_id)
            return m;
        frame_free_server(m);
    }
}

int wsc_wait_close(wsc_t *w, int timeout_ms, char *reason, size_t cap)
{
    long long end = wsc_now_ms() + timeout_ms;
    for (;;) {
        long long left = end - wsc_now_ms();
        wsc_msg_t m;
        int rc = left > 0 ? wsc_recv(w, &m, (int)left) : -ETIMEDOUT;
        if (rc != 0)
            return rc;
        if (m.opcode == WSLAY_CONNECTION_CLOSE) {
            if (reason != NULL && cap > 0)
                snprintf(reason, cap, "%.*s", (int)m.len, (const char *)m.data);
            return m.close_code;
        }
    }
}

int wsc_wait_eof(wsc_t *w, int timeout_ms)
{
    long long end = wsc_now_ms() + timeout_ms;
    for (;;) {
        w->off = w->have = 0; /* whatever is left is dropped */
        int rc = wsc_fill(w, end);
        if (rc == -EPIPE)
            return 0;
        if (rc == -ECONNRESET || w->read_err == ECONNRESET)
            return -ECONNRESET;
        if (rc != 0)
            return rc;
    }
}

Croupier__ServerMessage *wsc_recv_framed(wsc_t *w, int timeout_ms)
{
    long long end = wsc_now_ms() + timeout_ms;
    for (;;) {
        size_t n = w->have - w->off;
        if (n >= FRAME_HEADER_SIZE) {
            const uint8_t *p = w->buf + w->off;
            size_t len = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
            if (len > FRAME_DEFAULT_MAX)
                return NULL;
            if (n >= FRAME_HEADER_SIZE + len) {
                w->off += FRAME_HEADER_SIZE + len;
                return frame_unpack_server(p + FRAME_HEADER_SIZE, len, NULL, NULL);
            }
        }
        if (wsc_fill(w, end) != 0)
            return NULL;
    }
}

int wsc_send_framed(wsc_t *w, const Croupier__ClientMessage *m)
{
    uint8_t buf[FRAME_HEADER_SIZE + 4096];
    ssize_t n = frame_encode(&m->base, NULL, buf, sizeof buf, NULL);
    if (n < 0)
        return (int)n;
    return wsc_send_raw(w, buf, (size_t)n);
}
