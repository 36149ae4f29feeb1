/*
 * Unit tests for croupier-bot's keepalive (bots/bot_fleet.h, docs/protocol.md "Keepalive"):
 * a bot that hears nothing from its gateway probes it with a Ping and, when nothing answers,
 * leaves it for another gateway of its list (counted gateway_silent); a quiet gateway that
 * answers the probes is kept. The gateways are two fake ones on loopback in the test's own
 * event loop: they answer Login, and Ping only while they are "alive"; a frozen one reads and
 * answers nothing after the Login, like a SIGSTOPped process whose kernel still takes the bytes.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "bot_book.h"
#include "bot_fleet.h"
#include "bot_strategy.h"
#include "frame.h"
#include "log.h"
#include "token.h"

typedef struct {
    struct evconnlistener *lis;
    int port;
    bool frozen_after_login; /* after answering the Login, read and answer nothing */
    int connections, logins, pings_seen, pongs_sent;
    struct bufferevent *conns[8];
    int nconns;
} fake_gate_t;

typedef struct {
    fake_gate_t *gate;
    struct bufferevent *bev;
    bool frozen;
} fake_conn_t;

static fake_conn_t conn_store[16];
static int nconn_store;

static void fake_read_cb(struct bufferevent *bev, void *arg)
{
    fake_conn_t *c = arg;
    if (c->frozen)
        return; /* a frozen process reads nothing: the bytes stay in the socket */
    struct evbuffer *in = bufferevent_get_input(bev);
    Croupier__ClientMessage *m;
    frame_error_t err;
    frame_result_t r;
    while (!c->frozen && (r = frame_read_client(in, NULL, &m, &err)) != FRAME_NEED_MORE) {
        if (r != FRAME_OK)
            continue;
        Croupier__ServerMessage out = CROUPIER__SERVER_MESSAGE__INIT;
        out.has_request_id = true;
        out.request_id = m->request_id;
        Croupier__LoginResult lr = CROUPIER__LOGIN_RESULT__INIT;
        Croupier__Pong pong = CROUPIER__PONG__INIT;
        bool answer = false;
        if (m->body_case == CROUPIER__CLIENT_MESSAGE__BODY_LOGIN) {
            c->gate->logins++;
            lr.player_id = 5000;
            lr.session_id = (uint64_t)c->gate->logins;
            out.body_case = CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT;
            out.login_result = &lr;
            answer = true;
            if (c->gate->frozen_after_login)
                c->frozen = true;
        } else if (m->body_case == CROUPIER__CLIENT_MESSAGE__BODY_PING) {
            c->gate->pings_seen++;
            pong.nonce = m->ping->nonce;
            out.body_case = CROUPIER__SERVER_MESSAGE__BODY_PONG;
            out.pong = &pong;
            answer = true;
            c->gate->pongs_sent++;
        }
        /* A Join is never answered: the bot's request stays in flight (its attempt timeout is
         * longer than the test), so only the keepalive can end the connection. */
        if (answer)
            ck_assert_int_eq(frame_pack_server(bufferevent_get_output(bev), &out, NULL, &err), 0);
        frame_free_client(m);
    }
}

static void fake_event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    (void)what;
    (void)arg; /* the bot closed: the buffer is freed with the base's teardown below */
}

static void fake_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                           int len, void *arg)
{
    (void)sa;
    (void)len;
    fake_gate_t *g = arg;
    ck_assert_int_lt(nconn_store, 16);
    fake_conn_t *c = &conn_store[nconn_store++];
    c->gate = g;
    c->bev = bufferevent_socket_new(evconnlistener_get_base(lis), fd, BEV_OPT_CLOSE_ON_FREE);
    c->frozen = false;
    g->connections++;
    if (g->nconns < 8)
        g->conns[g->nconns++] = c->bev;
    bufferevent_setcb(c->bev, fake_read_cb, NULL, fake_event_cb, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void fake_gate_start(struct event_base *base, fake_gate_t *g)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    g->lis = evconnlistener_new_bind(base, fake_accept_cb, g, LEV_OPT_CLOSE_ON_FREE, 16,
                                     (struct sockaddr *)&sin, sizeof sin);
    ck_assert_ptr_nonnull(g->lis);
    socklen_t sl = sizeof sin;
    ck_assert_int_eq(getsockname(evconnlistener_get_fd(g->lis), (struct sockaddr *)&sin, &sl), 0);
    g->port = ntohs(sin.sin_port);
}

static void fake_gate_stop(fake_gate_t *g)
{
    evconnlistener_free(g->lis);
}

static bool fleet_done;

/* The bound of the stop: the listeners would keep the loop running forever. */
static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(arg);
}

static void fleet_stopped(void *arg)
{
    fleet_done = true;
    event_base_loopbreak(arg);
}

/*
 * Runs one bot against gateways a (first in its list) and b for run_ms, with the keepalive's
 * idle and timeout, then stops the fleet. Returns the book (the caller destroys it).
 */
static bot_book_t *run_bot(fake_gate_t *a, fake_gate_t *b, int idle_ms, int timeout_ms, int run_ms)
{
    nconn_store = 0;
    struct event_base *base = event_base_new();
    fake_gate_start(base, a);
    fake_gate_start(base, b);
    char gws[64];
    snprintf(gws, sizeof gws, "127.0.0.1:%d,127.0.0.1:%d", a->port, b->port);
    token_secret_t secret;
    ck_assert_int_eq(token_secret_set(&secret, "unit-test-secret-0123456789", 27), 0);
    bot_book_t *book = bot_book_create(1);
    bot_fleet_config_t cfg = {
        .base = base,
        .gateways = gws,
        .bots = 1,
        .strategy = bot_strategy_find("test"),
        .stake = 10,
        .secret = &secret,
        .player_base = 5000,
        .seed = 1,
        .request_timeout_ms = 60000, /* no request attempt ends within the test */
        .ramp_ms = 1,
        .finish_timeout_ms = 200,
        .keepalive_idle_ms = idle_ms,
        .keepalive_timeout_ms = timeout_ms,
        .book = book,
    };
    ck_assert_ptr_nonnull(cfg.strategy);
    bot_fleet_t *f;
    ck_assert_int_eq(bot_fleet_create(&cfg, &f), 0);
    bot_fleet_start(f);
    struct timeval tv = {.tv_sec = run_ms / 1000, .tv_usec = (run_ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
    /* The graceful stop, bounded by finish_timeout_ms (a safety timer bounds the loop too). */
    struct event *safety = evtimer_new(base, stop_cb, base);
    struct timeval two = {.tv_sec = 2};
    evtimer_add(safety, &two);
    fleet_done = false;
    bot_fleet_stop(f, fleet_stopped, base);
    if (!fleet_done)
        event_base_dispatch(base);
    event_free(safety);
    bot_fleet_destroy(f);
    for (int i = 0; i < nconn_store; i++)
        bufferevent_free(conn_store[i].bev);
    fake_gate_stop(a);
    fake_gate_stop(b);
    event_base_free(base);
    return book;
}

START_TEST(test_bot_keepalive_leaves_a_frozen_gateway_for_another)
{
    fake_gate_t a = {.frozen_after_login = true}, b = {0};
    bot_book_t *book = run_bot(&a, &b, 100, 200, 1500);
    /* On a: the Login answered, then silence; the bot probed and left. */
    ck_assert_int_eq(a.connections, 1);
    ck_assert_int_eq(a.logins, 1);
    ck_assert_uint_eq(bot_book_counter(book, BOT_C_GATEWAY_SILENT), 1);
    ck_assert_uint_ge(bot_book_counter(book, BOT_C_CONNECTIONS_LOST), 1);
    /* Then b, chosen as the other gateway, which answers every probe: kept for the rest of the
     * run (about 1.2 s of probes every ~100 ms). */
    ck_assert_int_eq(b.connections, 1);
    ck_assert_int_eq(b.logins, 1);
    ck_assert_int_ge(b.pongs_sent, 3);
    ck_assert_uint_ge(bot_book_counter(book, BOT_C_PINGS), (uint64_t)b.pings_seen);
    bot_book_destroy(book);
}
END_TEST

START_TEST(test_bot_keepalive_keeps_a_quiet_gateway_that_answers_probes)
{
    fake_gate_t a = {0}, b = {0};
    bot_book_t *book = run_bot(&a, &b, 100, 200, 1200);
    ck_assert_int_eq(a.connections, 1);
    ck_assert_int_ge(a.pongs_sent, 3);
    ck_assert_int_eq(b.connections, 0);
    ck_assert_uint_eq(bot_book_counter(book, BOT_C_GATEWAY_SILENT), 0);
    ck_assert_uint_eq(bot_book_counter(book, BOT_C_CONNECTIONS_LOST), 0);
    bot_book_destroy(book);
}
END_TEST

START_TEST(test_bot_keepalive_off_stays_on_a_frozen_gateway)
{
    fake_gate_t a = {.frozen_after_login = true}, b = {0};
    bot_book_t *book = run_bot(&a, &b, -1, 200, 1200);
    ck_assert_int_eq(a.connections, 1);
    ck_assert_int_eq(a.pings_seen, 0);
    ck_assert_int_eq(b.connections, 0);
    ck_assert_uint_eq(bot_book_counter(book, BOT_C_GATEWAY_SILENT), 0);
    bot_book_destroy(book);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bot_keepalive");
    TCase *tc = tcase_create("keepalive");
    tcase_set_timeout(tc, 15);
    tcase_add_test(tc, test_bot_keepalive_leaves_a_frozen_gateway_for_another);
    tcase_add_test(tc, test_bot_keepalive_keeps_a_quiet_gateway_that_answers_probes);
    tcase_add_test(tc, test_bot_keepalive_off_stays_on_a_frozen_gateway);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    log_set_level(LOG_ERROR);
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
