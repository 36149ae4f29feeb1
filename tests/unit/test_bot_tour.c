/*
 * Unit tests for croupier-bot's tournaments (bots/bot_tour.h, bots/bot_fleet_tour.c,
 * docs/bots.md "Tournaments"): which answers are final, retriable or refusals; the report's
 * "tournament" object; and a fleet of three tournament bots against a fake gateway on loopback
 * in the test's own event loop, which plays the protocol of docs/protocol.md "Tournaments": it
 * answers Login, RegisterTournament (one bot refused TOURNAMENT_FULL), GetTournament, and
 * TakeTournamentSeat (NOT_SEATED retriable twice, then the table's Snapshot), then moves one bot
 * with TableClosing{CLOSING_TOURNAMENT} (and says it again late, for the table left, once the bot
 * sits at the next one), cuts the other's connection, and ends the tournament with ELIMINATED /
 * FINISHED pushes.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "bot_book.h"
#include "bot_fleet.h"
#include "bot_strategy.h"
#include "bot_tour.h"
#include "frame.h"
#include "log.h"
#include "token.h"

/* ---- verdicts ------------------------------------------------------------------------------ */

START_TEST(test_bot_tour_register_ok_and_already_registered_are_registered)
{
    ck_assert_int_eq(bot_tour_register_verdict(0, false), BOT_TOUR_OK);
    ck_assert_int_eq(bot_tour_register_verdict(CROUPIER__ERROR_CODE__ALREADY_REGISTERED, false),
                     BOT_TOUR_OK);
}
END_TEST

START_TEST(test_bot_tour_register_refusals_stop_the_bot)
{
    int refused[] = {
        CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS, CROUPIER__ERROR_CODE__TOURNAMENT_FULL,
        CROUPIER__ERROR_CODE__REGISTRATION_CLOSED, CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        ck_assert_int_eq(bot_tour_register_verdict(refused[i], false), BOT_TOUR_REFUSED);
    int over[] = {CROUPIER__ERROR_CODE__TOURNAMENT_OVER, CROUPIER__ERROR_CODE__NO_REENTRY,
                  CROUPIER__ERROR_CODE__NOT_REGISTERED};
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++)
        ck_assert_int_eq(bot_tour_register_verdict(over[i], false), BOT_TOUR_OVER);
    ck_assert_int_eq(bot_tour_register_verdict(CROUPIER__ERROR_CODE__UNAVAILABLE, false),
                     BOT_TOUR_RETRY);
    ck_assert_int_eq(bot_tour_register_verdict(CROUPIER__ERROR_CODE__INTERNAL, true),
                     BOT_TOUR_RETRY);
    ck_assert_int_eq(bot_tour_register_verdict(CROUPIER__ERROR_CODE__BAD_REQUEST, false),
                     BOT_TOUR_ERROR);
}
END_TEST

START_TEST(test_bot_tour_seat_not_seated_waits_only_when_retriable)
{
    ck_assert_int_eq(bot_tour_seat_verdict(0, false), BOT_TOUR_OK);
    ck_assert_int_eq(bot_tour_seat_verdict(CROUPIER__ERROR_CODE__NOT_SEATED, true), BOT_TOUR_WAIT);
    /* The gateway that does not route TakeTournamentSeat says NOT_SEATED, not retriable. */
    ck_assert_int_eq(bot_tour_seat_verdict(CROUPIER__ERROR_CODE__NOT_SEATED, false),
                     BOT_TOUR_ERROR);
}
END_TEST

START_TEST(test_bot_tour_seat_not_registered_and_over_are_final)
{
    ck_assert_int_eq(bot_tour_seat_verdict(CROUPIER__ERROR_CODE__NOT_REGISTERED, false),
                     BOT_TOUR_OVER);
    ck_assert_int_eq(bot_tour_seat_verdict(CROUPIER__ERROR_CODE__TOURNAMENT_OVER, false),
                     BOT_TOUR_OVER);
    ck_assert_int_eq(bot_tour_seat_verdict(CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT, false),
                     BOT_TOUR_REFUSED);
    ck_assert_int_eq(bot_tour_seat_verdict(CROUPIER__ERROR_CODE__DRAINING, false), BOT_TOUR_RETRY);
    ck_assert_int_eq(bot_tour_seat_verdict(CROUPIER__ERROR_CODE__BAD_REQUEST, false),
                     BOT_TOUR_ERROR);
    ck_assert_str_eq(bot_tour_verdict_name(BOT_TOUR_WAIT), "wait");
}
END_TEST

/* ---- the tally and its report -------------------------------------------------------------- */

START_TEST(test_bot_tour_place_is_recorded_once_per_bot)
{
    bot_tour_book_t *t = bot_tour_book_create(9, 3);
    ck_assert_ptr_nonnull(t);
    ck_assert(bot_tour_place(t, 0, 100, 3, 0));
    ck_assert(!bot_tour_place(t, 0, 100, 2, 50)); /* kept: the first record */
    ck_assert_uint_eq(bot_tour_place_of(t, 0), 3);
    ck_assert(!bot_tour_place(t, 1, 101, 0, 0)); /* no place */
    ck_assert(!bot_tour_place(t, 7, 107, 1, 0)); /* no such bot */
    ck_assert(bot_tour_place(t, 2, 102, 1, 600));
    ck_assert_uint_eq(bot_tour_eliminated(t), 1);
    ck_assert_uint_eq(bot_tour_finished(t), 1);
    ck_assert(!bot_tour_has_place(t, 1));
    bot_tour_book_destroy(t);
    bot_tour_book_destroy(NULL);
    ck_assert_ptr_null(bot_tour_book_create(1, 0));
}
END_TEST

START_TEST(test_bot_tour_report_has_every_field)
{
    bot_tour_book_t *t = bot_tour_book_create(42, 2);
    bot_tour_count(t, BOT_TOUR_C_REGISTERED);
    bot_tour_count(t, BOT_TOUR_C_SEAT_REQUESTS);
    bot_tour_count(t, BOT_TOUR_C_SEAT_REQUESTS);
    bot_tour_count(t, BOT_TOUR_C_NOT_SEATED);
    bot_tour_count(t, BOT_TOUR_C_SEATED);
    bot_tour_count(t, BOT_TOUR_C_TABLE_CHANGES);
    bot_tour_event(t, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_LEVEL_UP);
    bot_tour_event(t, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_LEVEL_UP);
    bot_tour_event(t, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_ELIMINATED);
    bot_tour_event(t, 99);
    bot_tour_refused(t, "TOURNAMENT_FULL");
    bot_tour_place(t, 0, 5000, 2, 0);
    bot_tour_place(t, 1, 5001, 1, 1200);
    json_t *o = bot_tour_report(t);
    char *s = json_dumps(o, JSON_COMPACT);
    ck_assert_str_eq(s,
                     "{\"id\":42,\"registered\":1,\"already_registered\":0,\"seat_requests\":2,"
                     "\"not_seated\":1,\"seated\":1,\"table_changes\":1,\"cancelled\":0,\"done\":0,"
                     "\"eliminated\":1,\"finished\":1,\"refused\":{\"TOURNAMENT_FULL\":1},"
                     "\"places\":{\"5000\":2,\"5001\":1},\"prizes\":{\"5000\":0,\"5001\":1200},"
                     "\"events\":{\"LEVEL_UP\":2,\"ELIMINATED\":1,\"OTHER\":1}}");
    free(s);
    json_decref(o);
    ck_assert_uint_eq(bot_tour_refusals_total(t), 1);
    ck_assert_uint_eq(bot_tour_events(t, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_LEVEL_UP), 2);
    bot_tour_book_destroy(t);
}
END_TEST

/* ---- a fleet against a fake gateway -------------------------------------------------------- */

#define TOUR_ID 7
#define P_MOVED 7000   /* moved by TableClosing{CLOSING_TOURNAMENT}, then eliminated 2nd */
#define P_LOST 7001    /* its connection cut at its first table, then wins */
#define P_REFUSED 7002 /* TOURNAMENT_FULL */

static token_secret_t secret;

typedef struct {
    int seat_asks[3], infos[3], resumes, joins, registers, logins, connections;
} fake_tally_t;

static fake_tally_t tally;

typedef struct {
    struct bufferevent *bev;
    uint64_t player;
    bool close_when_written;
} fake_conn_t;

static fake_conn_t conns[16];
static int nconns;

static void fake_send(fake_conn_t *c, Croupier__ServerMessage *m)
{
    frame_error_t err;
    int rc = frame_pack_server(bufferevent_get_output(c->bev), m, NULL, &err);
    ck_assert_msg(rc == 0, "fake gateway cannot pack body %d: %s", (int)m->body_case, err.detail);
}

static void fake_error(fake_conn_t *c, uint64_t rid, Croupier__ErrorCode code, bool retriable)
{
    Croupier__ServerMessage out = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Result res = CROUPIER__RESULT__INIT;
    Croupier__Error e = CROUPIER__ERROR__INIT;
    out.has_request_id = true;
    out.request_id = rid;
    out.body_case = CROUPIER__SERVER_MESSAGE__BODY_RESULT;
    out.result = &res;
    if (code != 0) {
        e.code = code;
        e.has_retriable = retriable;
        e.retriable = retriable;
        res.error = &e;
    }
    fake_send(c, &out);
}

static void fake_event(fake_conn_t *c, Croupier__TournamentEventKind kind, uint64_t player,
                       uint32_t place, int64_t prize)
{
    Croupier__ServerMessage out = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TournamentEvent te = CROUPIER__TOURNAMENT_EVENT__INIT;
    te.tournament = TOUR_ID;
    te.kind = kind;
    te.has_player = player != 0;
    te.player = player;
    te.has_place = place != 0;
    te.place = place;
    te.has_prize = place != 0;
    te.prize = prize;
    out.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_EVENT;
    out.tournament_event = &te;
    fake_send(c, &out);
}

/* TableClosing{CLOSING_TOURNAMENT} for desk. */
static void fake_closing(fake_conn_t *c, uint64_t desk)
{
    Croupier__ServerMessage tc = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableClosing cl = CROUPIER__TABLE_CLOSING__INIT;
    cl.reason = CROUPIER__CLOSING_REASON__CLOSING_TOURNAMENT;
    cl.detail = "moved";
    cl.has_desk_id = true;
    cl.desk_id = desk;
    tc.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
    tc.table_closing = &cl;
    fake_send(c, &tc);
}

/* TakeTournamentSeat: NOT_SEATED (retriable) twice, then the table; at the first table one bot
 * is moved (TableClosing{CLOSING_TOURNAMENT}) and the other loses its connection; at the second
 * the tournament ends for them. */
static void fake_take_seat(fake_conn_t *c, uint64_t rid)
{
    int k = (int)(c->player - P_MOVED);
    int ask = ++tally.seat_asks[k];
    bool second = ask > 3;
    if (ask == 1 || ask == 2 || ask == 4) {
        fake_error(c, rid, CROUPIER__ERROR_CODE__NOT_SEATED, true);
        return;
    }
    Croupier__ServerMessage out = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot sn = CROUPIER__SNAPSHOT__INIT;
    sn.desk_id = second ? 200 : 100;
    sn.your_seat = (uint32_t)k;
    sn.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    sn.game = "holdem";
    sn.stake = 20; /* the big blind of the level, say: the codec wants a stake > 0 */
    out.has_request_id = true;
    out.request_id = rid;
    out.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    out.snapshot = &sn;
    fake_send(c, &out);
    if (c->player == P_MOVED) {
        /* Its first table is left; at the second, that table's closing comes late (the bot sits
         * at the new one already: nothing changes), then its elimination. */
        fake_closing(c, 100);
        if (second)
            fake_event(c, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_ELIMINATED, P_MOVED, 2, 0);
    } else if (!second) {
        c->close_when_written = true; /* the gateway "dies" under this bot */
    } else {
        fake_event(c, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_FINISHED, P_LOST, 1, 600);
    }
}

static void fake_info(fake_conn_t *c, uint64_t rid)
{
    tally.infos[c->player - P_MOVED]++;
    Croupier__ServerMessage out = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TournamentInfo ti = CROUPIER__TOURNAMENT_INFO__INIT;
    Croupier__TournamentEntry you = CROUPIER__TOURNAMENT_ENTRY__INIT;
    ti.id = TOUR_ID;
    ti.name = "unit";
    ti.format = CROUPIER__TOURNAMENT_FORMAT__TOUR_SNG;
    ti.status = CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING;
    you.state = CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_PLAYING;
    ti.you = &you;
    out.has_request_id = true;
    out.request_id = rid;
    out.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT;
    out.tournament = &ti;
    fake_send(c, &out);
}

static void fake_read_cb(struct bufferevent *bev, void *arg)
{
    fake_conn_t *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    Croupier__ClientMessage *m;
    frame_error_t err;
    frame_result_t r;
    while (c->bev != NULL && (r = frame_read_client(in, NULL, &m, &err)) != FRAME_NEED_MORE) {
        if (r != FRAME_OK)
            continue;
        uint64_t rid = m->request_id;
        switch (m->body_case) {
        case CROUPIER__CLIENT_MESSAGE__BODY_LOGIN: {
            tally.logins++;
            ck_assert_int_eq(token_verify(&secret, m->login->token, strlen(m->login->token),
                                          time(NULL), &c->player, NULL),
                             TOKEN_OK);
            Croupier__ServerMessage out = CROUPIER__SERVER_MESSAGE__INIT;
            Croupier__LoginResult lr = CROUPIER__LOGIN_RESULT__INIT;
            lr.player_id = c->player;
            lr.session_id = (uint64_t)tally.logins;
            lr.has_seated = true;
            lr.seated = c->player == P_LOST && tally.logins > 3; /* a gateway would say so */
            out.has_request_id = true;
            out.request_id = rid;
            out.body_case = CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT;
            out.login_result = &lr;
            fake_send(c, &out);
            break;
        }
        case CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT:
            tally.registers++;
            ck_assert_uint_eq(m->register_tournament->tournament, TOUR_ID);
            if (c->player == P_REFUSED) {
                fake_error(c, rid, CROUPIER__ERROR_CODE__TOURNAMENT_FULL, false);
                break;
            }
            fake_error(c, rid, 0, false);
            fake_event(c, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_STARTED, 0, 0, 0);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT:
            fake_info(c, rid);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT:
            ck_assert_uint_eq(m->take_tournament_seat->tournament, TOUR_ID);
            fake_take_seat(c, rid);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_RESUME:
            tally.resumes++;
            fake_error(c, rid, CROUPIER__ERROR_CODE__NOT_SEATED, false);
            break;
        case CROUPIER__CLIENT_MESSAGE__BODY_JOIN:
        case CROUPIER__CLIENT_MESSAGE__BODY_LEAVE:
            tally.joins++;
            fake_error(c, rid, CROUPIER__ERROR_CODE__BAD_REQUEST, false);
            break;
        default:
            break; /* Pings: no Pong needed within the test */
        }
        frame_free_client(m);
    }
}

static void fake_write_cb(struct bufferevent *bev, void *arg)
{
    fake_conn_t *c = arg;
    if (c->close_when_written && evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
        bufferevent_free(bev);
        c->bev = NULL;
    }
}

static void fake_event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    (void)what;
    (void)arg; /* the bot closed: freed with the teardown */
}

static void fake_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                           int len, void *arg)
{
    (void)sa;
    (void)len;
    (void)arg;
    ck_assert_int_lt(nconns, 16);
    fake_conn_t *c = &conns[nconns++];
    memset(c, 0, sizeof *c);
    tally.connections++;
    c->bev = bufferevent_socket_new(evconnlistener_get_base(lis), fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(c->bev, fake_read_cb, fake_write_cb, fake_event_cb, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static bool all_done_ran, fleet_stopped_ran;
static bot_fleet_t *fleet;

static void fleet_stopped(void *arg)
{
    fleet_stopped_ran = true;
    event_base_loopbreak(arg);
}

/* As croupier-bot does: every bot is done with the tournament, so the fleet stops. */
static void all_done(void *arg)
{
    all_done_ran = true;
    bot_fleet_stop(fleet, fleet_stopped, arg);
}

START_TEST(test_bot_tour_fleet_plays_to_the_end_through_a_move_and_a_lost_connection)
{
    memset(&tally, 0, sizeof tally);
    nconns = 0;
    ck_assert_int_eq(token_secret_set(&secret, "unit-test-secret-0123456789", 27), 0);
    struct event_base *base = event_base_new();
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct evconnlistener *lis = evconnlistener_new_bind(
        base, fake_accept_cb, NULL, LEV_OPT_CLOSE_ON_FREE, 16, (struct sockaddr *)&sin, sizeof sin);
    ck_assert_ptr_nonnull(lis);
    socklen_t sl = sizeof sin;
    ck_assert_int_eq(getsockname(evconnlistener_get_fd(lis), (struct sockaddr *)&sin, &sl), 0);
    char gws[64];
    snprintf(gws, sizeof gws, "127.0.0.1:%d", ntohs(sin.sin_port));
    bot_book_t *book = bot_book_create(3);
    bot_tour_book_t *tour = bot_tour_book_create(TOUR_ID, 3);
    bot_fleet_config_t cfg = {
        .base = base,
        .gateways = gws,
        .bots = 3,
        .strategy = bot_strategy_find("holdem"),
        .stake = 10,
        .secret = &secret,
        .player_base = P_MOVED,
        .seed = 1,
        .ramp_ms = 1,
        .finish_timeout_ms = 1000,
        .book = book,
        .tournament = TOUR_ID,
        .tour_book = tour,
        .all_done = all_done,
        .all_done_arg = base,
    };
    all_done_ran = fleet_stopped_ran = false;
    ck_assert_int_eq(bot_fleet_create(&cfg, &fleet), 0);
    bot_fleet_start(fleet);
    /* The bound of the run: the tournament ends within ~2 s (waits of 200-500 ms). */
    struct timeval bound = {.tv_sec = 8};
    event_base_loopexit(base, &bound);
    event_base_dispatch(base);
    ck_assert_msg(all_done_ran, "the bots were not all done within the bound");
    ck_assert(fleet_stopped_ran);
    bot_book_finish(book, 0);

    /* The refused bot stopped; the others registered, waited, sat, moved / reconnected. */
    ck_assert_uint_eq(bot_tour_counter(tour, BOT_TOUR_C_REGISTERED), 2);
    ck_assert_uint_eq(bot_tour_refusals(tour, "TOURNAMENT_FULL"), 1);
    ck_assert_int_eq(tally.registers, 3);
    ck_assert_int_eq(tally.seat_asks[0], 5);
    ck_assert_int_eq(tally.seat_asks[1], 5);
    ck_assert_int_eq(tally.seat_asks[2], 0);
    ck_assert_uint_eq(bot_tour_counter(tour, BOT_TOUR_C_SEAT_REQUESTS), 10);
    ck_assert_uint_eq(bot_tour_counter(tour, BOT_TOUR_C_NOT_SEATED), 6);
    ck_assert_uint_eq(bot_tour_counter(tour, BOT_TOUR_C_SEATED), 4);
    /* Two closings seen; the late one of the table left before changed nothing. */
    ck_assert_uint_eq(bot_tour_counter(tour, BOT_TOUR_C_TABLE_CHANGES), 2);
    ck_assert_uint_eq(bot_tour_counter(tour, BOT_TOUR_C_DONE), 3);
    /* After the lost connection: GetTournament (follow again), then TakeTournamentSeat; never
     * a Resume by the remembered seat, nor a Join or a Leave. */
    ck_assert_int_eq(tally.infos[1], 1);
    ck_assert_int_eq(tally.infos[0], 0);
    ck_assert_int_eq(tally.resumes, 0);
    ck_assert_int_eq(tally.joins, 0);
    ck_assert_uint_eq(bot_book_counter(book, BOT_C_CONNECTIONS_LOST), 1);
    ck_assert_uint_eq(bot_book_counter(book, BOT_C_RECONNECTS_LOST), 1);
    /* Places and prizes from the pushes. */
    ck_assert_uint_eq(bot_tour_place_of(tour, 0), 2);
    ck_assert_uint_eq(bot_tour_place_of(tour, 1), 1);
    ck_assert(!bot_tour_has_place(tour, 2));
    ck_assert_uint_eq(bot_tour_eliminated(tour), 1);
    ck_assert_uint_eq(bot_tour_finished(tour), 1);
    ck_assert_uint_eq(bot_tour_events(tour, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_STARTED),
                      2);
    json_t *rep = bot_tour_report(tour);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(rep, "prizes"), "7001")),
                     600);
    json_decref(rep);
    /* The refusal is expected; nothing else went wrong. */
    ck_assert_uint_eq(bot_book_unexpected(book), 0);
    ck_assert(bot_book_ok(book));

    bot_fleet_destroy(fleet);
    for (int i = 0; i < nconns; i++)
        if (conns[i].bev != NULL)
            bufferevent_free(conns[i].bev);
    evconnlistener_free(lis);
    event_base_free(base);
    bot_tour_book_destroy(tour);
    bot_book_destroy(book);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bot_tour");
    TCase *tc = tcase_create("verdicts");
    tcase_add_test(tc, test_bot_tour_register_ok_and_already_registered_are_registered);
    tcase_add_test(tc, test_bot_tour_register_refusals_stop_the_bot);
    tcase_add_test(tc, test_bot_tour_seat_not_seated_waits_only_when_retriable);
    tcase_add_test(tc, test_bot_tour_seat_not_registered_and_over_are_final);
    suite_add_tcase(s, tc);
    tc = tcase_create("report");
    tcase_add_test(tc, test_bot_tour_place_is_recorded_once_per_bot);
    tcase_add_test(tc, test_bot_tour_report_has_every_field);
    suite_add_tcase(s, tc);
    tc = tcase_create("fleet");
    tcase_set_timeout(tc, 15);
    tcase_add_test(tc, test_bot_tour_fleet_plays_to_the_end_through_a_move_and_a_lost_connection);
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
