/*
 * Tournaments through the gateway (docs/gateway.md "Tournaments", docs/protocol.md
 * "Tournaments"): a real redis-server, a real croupier-director and a real croupier-gate on
 * loopback, driven through the client protocol by gatec (tests/support/gatec.h). Lists and
 * state, registration and its refusals with the money they move (or do not), a client's retry
 * answered once, unregistration, a sit & go filled through the gateway pushing STARTED to every
 * registered connection, a cancellation pushing CANCELLED.
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"

#define SECRET "gate-tour-test-secret-0123456789"

#define SNG3                                                                                       \
    "{\"format\":\"sng\",\"seats_per_table\":3,\"starting_stack\":1500,\"buy_in\":100,"            \
    "\"fee\":10,\"min_entrants\":3,\"max_entrants\":3,\"levels\":[{\"small_blind\":10,"            \
    "\"big_blind\":20,\"duration_ms\":600000},{\"small_blind\":20,\"big_blind\":40,"               \
    "\"duration_ms\":600000}]}"
/* A match hall (docs/tournaments.md "Match halls"): listed with its game, shown with its stage
 * once running. */
#define MATCH                                                                                      \
    "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"                       \
    "\"min_entrants\":24,\"max_entrants\":24,\"stages\":["                                         \
    "{\"format\":\"rising\",\"seats\":3,\"start_score\":1000,\"base_score\":10,"                   \
    "\"growth_pct\":20,\"growth_ms\":1000,\"out_pct\":2000,\"advance\":9},"                        \
    "{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":2}]}"
#define MTT                                                                                        \
    "{\"format\":\"mtt\",\"seats_per_table\":9,\"starting_stack\":3000,\"buy_in\":50,"             \
    "\"fee\":5,\"min_entrants\":2,\"max_entrants\":100,\"guarantee\":1000,"                        \
    "\"late_registration_levels\":1,\"levels\":[{\"small_blind\":25,\"big_blind\":50,"             \
    "\"duration_ms\":600000},{\"small_blind\":50,\"big_blind\":100,\"duration_ms\":600000}]}"

typedef struct {
    testenv_t rig;
    token_secret_t secret;
    ts_proc_t *director;
    testenv_server_t gate;
} env_t;

static env_t E;

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A Redis command's reply as text (free it). */
#define REDIS(...) ts_redis_cmd(E.rig.redis, __VA_ARGS__)

static long long rnum(char *text)
{
    long long v = text != NULL ? strtoll(text, NULL, 10) : -1;
    free(text);
    return v;
}

/* redis-server, croupier-director (fast scans) and croupier-gate. */
static void setup(void)
{
    memset(&E, 0, sizeof E);
    ck_assert_int_eq(testenv_start(&E.rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&E.secret, SECRET, strlen(SECRET)), 0);
    char *dargs[] = {"--scan-ms", "100", "--drain-max-seconds", "5", NULL};
    testenv_server_t d;
    ck_assert_int_eq(testenv_start_director(&E.rig, &d, "dir-t", dargs), 0);
    E.director = d.proc;
    char *args[] = {"--drain-window-ms", "100", "--close-timeout-ms", "2000", NULL};
    ck_assert_int_eq(testenv_start_gate(&E.rig, &E.gate, "tour-gate", args), 0);
}

static void teardown(void)
{
    testenv_stop_server(&E.gate);
    if (E.director != NULL) {
        ts_proc_signal(E.director, SIGKILL);
        ts_proc_wait(E.director, 5000, NULL);
        ts_proc_free(E.director);
    }
    testenv_stop(&E.rig);
}

/* What croupier-ctl's `tour create` writes (tour_director.h has the keys). */
static uint64_t tour_create(const char *name, const char *format, const char *structure,
                            long long start_at_ms)
{
    uint64_t id = (uint64_t)rnum(REDIS("INCR {croupier:tours}:seq"));
    long long now = wall_ms();
    free(REDIS("HSET {croupier:tour:%" PRIu64 "}:meta id %" PRIu64 " name %s structure %s "
               "format %s status registering created_ms %lld start_at_ms %lld started_ms 0 "
               "ended_ms 0 clock_ms 0 level 0 entries 0 players 0 pool 0 cursor 0-0",
               id, id, name, structure, format, now, start_at_ms));
    free(REDIS("ZADD {croupier:tours}:all %lld %" PRIu64, now, id));
    free(REDIS("SADD {croupier:tours}:live %" PRIu64, id));
    return id;
}

static bool wait_owned(uint64_t id)
{
    long long end = ts_now_ms() + 5000;
    while (ts_now_ms() < end) {
        if (rnum(REDIS("EXISTS {croupier:tour:%" PRIu64 "}:owner", id)) == 1)
            return true;
        ts_sleep_ms(20);
    }
    return false;
}

static void wallet_set(uint64_t player, long long chips)
{
    free(REDIS("SET {croupier:money}:wallet:%" PRIu64 " %lld", player, chips));
}

static long long wallet(uint64_t player)
{
    return rnum(REDIS("GET {croupier:money}:wallet:%" PRIu64, player));
}

static gatec_t *connect_only(void)
{
    gatec_t *c = gatec_connect("127.0.0.1", E.gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    return c;
}

static gatec_t *login(uint64_t player)
{
    gatec_t *c = connect_only();
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&E.secret, player, time(NULL) + 600, tok, sizeof tok), 0);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(m);
    return c;
}

/* Sends a tournament request (body one of the tournament bodies, tournament its id) and returns
 * the answer (free it with frame_free_server). */
static Croupier__ServerMessage *ask(gatec_t *c, uint64_t rid, int body, uint64_t tournament)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__ListTournaments lt = CROUPIER__LIST_TOURNAMENTS__INIT;
    Croupier__GetTournament gt = CROUPIER__GET_TOURNAMENT__INIT;
    Croupier__RegisterTournament rt = CROUPIER__REGISTER_TOURNAMENT__INIT;
    Croupier__UnregisterTournament ut = CROUPIER__UNREGISTER_TOURNAMENT__INIT;
    Croupier__TakeTournamentSeat ts = CROUPIER__TAKE_TOURNAMENT_SEAT__INIT;
    m.request_id = rid;
    m.body_case = (Croupier__ClientMessage__BodyCase)body;
    gt.tournament = rt.tournament = ut.tournament = ts.tournament = tournament;
    m.list_tournaments = &lt;
    switch (body) {
    case CROUPIER__CLIENT_MESSAGE__BODY_LIST_TOURNAMENTS:
        if (tournament != 0)
            lt.has_status = 1, lt.status = (Croupier__TournamentStatus)tournament;
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT:
        m.get_tournament = &gt;
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT:
        m.register_tournament = &rt;
        break;
    case CROUPIER__CLIENT_MESSAGE__BODY_UNREGISTER_TOURNAMENT:
        m.unregister_tournament = &ut;
        break;
    default:
        m.take_tournament_seat = &ts;
        break;
    }
    ck_assert_int_eq(gatec_send(c, &m), 0);
    Croupier__ServerMessage *a = gatec_wait_reply(c, rid, 8000);
    ck_assert_msg(a != NULL, "no answer to request %" PRIu64, rid);
    return a;
}

#define LIST CROUPIER__CLIENT_MESSAGE__BODY_LIST_TOURNAMENTS
#define GET CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT
#define REG CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT
#define UNREG CROUPIER__CLIENT_MESSAGE__BODY_UNREGISTER_TOURNAMENT
#define TAKE CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT

/* Asks and expects the error code (0: Result ok); returns whether it was retriable. */
static bool ask_code(gatec_t *c, uint64_t rid, int body, uint64_t tournament, int code)
{
    Croupier__ServerMessage *a = ask(c, rid, body, tournament);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT,
                  "request %" PRIu64 ": body %d", rid, a->body_case);
    ck_assert_msg(gatec_code(a) == code, "request %" PRIu64 ": code %d (%s), wanted %d", rid,
                  gatec_code(a), a->result->error ? a->result->error->message : "", code);
    bool retriable = a->result->error != NULL && a->result->error->retriable;
    frame_free_server(a);
    return retriable;
}

static Croupier__ServerMessage *get_info(gatec_t *c, uint64_t rid, uint64_t id)
{
    Croupier__ServerMessage *a = ask(c, rid, GET, id);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT,
                  "GetTournament: body %d code %d", a->body_case, gatec_code(a));
    return a;
}

START_TEST(test_gate_tour_list_and_get)
{
    uint64_t sng = tour_create("Evening-SNG", "sng", SNG3, 0);
    long long start = wall_ms() + 3600000;
    uint64_t mtt = tour_create("Sunday", "mtt", MTT, start);
    uint64_t match = tour_create("Hall", "match", MATCH, 0);
    ck_assert(wait_owned(sng) && wait_owned(mtt) && wait_owned(match));

    /* Only logged-in clients. */
    gatec_t *anon = connect_only();
    ask_code(anon, 5, LIST, 0, CROUPIER__ERROR_CODE__UNAUTHENTICATED);
    gatec_close(anon);

    gatec_t *c = login(10);
    Croupier__ServerMessage *a = ask(c, 2, LIST, 0);
    ck_assert_int_eq(a->body_case, CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_LIST);
    const Croupier__TournamentList *tl = a->tournament_list;
    ck_assert_uint_eq(tl->n_tournaments, 3);
    ck_assert_uint_eq(tl->total, 3);
    /* Newest first: the match hall, with its game. */
    const Croupier__TournamentSummary *t = tl->tournaments[0];
    ck_assert_uint_eq(t->id, match);
    ck_assert_int_eq(t->format, CROUPIER__TOURNAMENT_FORMAT__TOUR_MATCH);
    ck_assert_str_eq(t->game, "doudizhu");
    ck_assert(t->buy_in == 100 && t->fee == 10 && t->max_entrants == 24);
    t = tl->tournaments[1];
    ck_assert_uint_eq(t->id, mtt);
    ck_assert_str_eq(t->name, "Sunday");
    ck_assert_int_eq(t->format, CROUPIER__TOURNAMENT_FORMAT__TOUR_MTT);
    ck_assert_int_eq(t->status, CROUPIER__TOURNAMENT_STATUS__TOUR_REGISTERING);
    ck_assert(t->buy_in == 50 && t->fee == 5 && t->max_entrants == 100 && t->entrants == 0);
    ck_assert_uint_eq(t->start_at_unix_ms, (uint64_t)start);
    ck_assert_str_eq(t->game, "holdem");
    t = tl->tournaments[2];
    ck_assert_uint_eq(t->id, sng);
    ck_assert_int_eq(t->format, CROUPIER__TOURNAMENT_FORMAT__TOUR_SNG);
    ck_assert(!t->has_start_at_unix_ms); /* an SNG starts when full */
    frame_free_server(a);

    /* The filter: nothing is running. */
    a = ask(c, 3, LIST, CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING);
    ck_assert_uint_eq(a->tournament_list->n_tournaments, 0);
    frame_free_server(a);
    a = ask(c, 4, LIST, CROUPIER__TOURNAMENT_STATUS__TOUR_REGISTERING);
    ck_assert_uint_eq(a->tournament_list->n_tournaments, 3);
    frame_free_server(a);

    /* The state of one: the guarantee's pool and its payouts, no entry of the asker. */
    a = get_info(c, 6, mtt);
    const Croupier__TournamentInfo *ti = a->tournament;
    ck_assert_uint_eq(ti->id, mtt);
    ck_assert_int_eq(ti->status, CROUPIER__TOURNAMENT_STATUS__TOUR_REGISTERING);
    ck_assert(ti->buy_in == 50 && ti->fee == 5 && ti->starting_stack == 3000);
    ck_assert(ti->min_entrants == 2 && ti->max_entrants == 100);
    ck_assert(ti->late_registration_levels == 1 && ti->registration_open);
    ck_assert_uint_eq(ti->entries, 0);
    ck_assert_uint_eq(ti->n_payouts, 0);
    ck_assert_ptr_null(ti->you);
    ck_assert(!ti->has_level);
    frame_free_server(a);

    /* Bad input: an unknown id, id 0; a seat in a tournament he has no entry in. */
    ck_assert(!ask_code(c, 7, GET, 999, CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT));
    ck_assert(!ask_code(c, 8, GET, 0, CROUPIER__ERROR_CODE__BAD_REQUEST));
    ck_assert(!ask_code(c, 9, TAKE, mtt, CROUPIER__ERROR_CODE__NOT_REGISTERED));
    ck_assert(!ask_code(c, 10, TAKE, 999, CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT));
    /* A match hall before its start: its game, no stage yet, no stacks. */
    a = get_info(c, 11, match);
    ti = a->tournament;
    ck_assert_int_eq(ti->format, CROUPIER__TOURNAMENT_FORMAT__TOUR_MATCH);
    ck_assert_str_eq(ti->game, "doudizhu");
    ck_assert_ptr_null(ti->match);
    ck_assert(!ti->has_average_stack);
    frame_free_server(a);
    gatec_close(c);
}
END_TEST

START_TEST(test_gate_tour_register_refusals_and_unregister)
{
    uint64_t id = tour_create("Sunday", "mtt", MTT, wall_ms() + 3600000);
    ck_assert(wait_owned(id));
    wallet_set(21, 1000);
    wallet_set(22, 54); /* buy-in + fee is 55 */
    gatec_t *a = login(21), *b = login(22);

    ask_code(a, 2, REG, id, 0);
    ck_assert_int_eq(wallet(21), 945);
    /* Registered before the start: a seat is waited for (retriable). */
    ck_assert(ask_code(a, 20, TAKE, id, CROUPIER__ERROR_CODE__NOT_SEATED));
    /* The same request again (a client's retry): the director's first answer, nothing twice. */
    ask_code(a, 2, REG, id, 0);
    ck_assert_int_eq(wallet(21), 945);
    ck_assert(!ask_code(a, 3, REG, id, CROUPIER__ERROR_CODE__ALREADY_REGISTERED));
    ck_assert_int_eq(wallet(21), 945);

    ck_assert(!ask_code(b, 2, REG, id, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS));
    ck_assert_int_eq(wallet(22), 54);
    ck_assert(!ask_code(b, 3, UNREG, id, CROUPIER__ERROR_CODE__NOT_REGISTERED));

    /* An unknown tournament: refused without writing anything. */
    ck_assert(!ask_code(a, 4, REG, 999, CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT));
    ck_assert_int_eq(rnum(REDIS("EXISTS {croupier:tour:999}:in")), 0);
    ck_assert(!ask_code(a, 5, REG, 0, CROUPIER__ERROR_CODE__BAD_REQUEST));

    /* The asker's entry, the pool (the guarantee until the entries pass it), the payouts. */
    Croupier__ServerMessage *m = get_info(a, 6, id);
    const Croupier__TournamentInfo *ti = m->tournament;
    ck_assert_uint_eq(ti->entries, 1);
    ck_assert_int_eq(ti->prize_pool, 1000);
    ck_assert_uint_eq(ti->n_payouts, 1);
    ck_assert(ti->payouts[0]->place_from == 1 && ti->payouts[0]->amount == 1000);
    ck_assert_ptr_nonnull(ti->you);
    ck_assert_int_eq(ti->you->state, CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_REGISTERED);
    ck_assert_int_eq(ti->you->stack, 3000);
    frame_free_server(m);

    ask_code(a, 7, UNREG, id, 0);
    ck_assert_int_eq(wallet(21), 1000);
    ck_assert(!ask_code(a, 8, UNREG, id, CROUPIER__ERROR_CODE__NOT_REGISTERED));
    m = get_info(a, 9, id);
    ck_assert_ptr_null(m->tournament->you);
    ck_assert_uint_eq(m->tournament->entries, 0);
    frame_free_server(m);
    gatec_close(a);
    gatec_close(b);
}
END_TEST

/* The next TournamentEvent pushed to c within timeout_ms; NULL if none. */
static Croupier__ServerMessage *next_tour_event(gatec_t *c, int timeout_ms)
{
    return gatec_next_event(c, CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_EVENT, timeout_ms);
}

START_TEST(test_gate_tour_sng_fills_and_starts_with_a_push_to_every_entrant)
{
    uint64_t id = tour_create("SNG", "sng", SNG3, 0);
    ck_assert(wait_owned(id));
    gatec_t *c[3];
    for (int i = 0; i < 3; i++) {
        wallet_set(31 + (uint64_t)i, 500);
        c[i] = login(31 + (uint64_t)i);
    }
    gatec_t *watcher = login(40); /* asked about it, not registered */
    frame_free_server(get_info(watcher, 2, id));
    for (int i = 0; i < 3; i++)
        ask_code(c[i], 2, REG, id, 0);
    for (int i = 0; i < 3; i++) {
        Croupier__ServerMessage *e = next_tour_event(c[i], 5000);
        ck_assert_msg(e != NULL, "player %d got no STARTED", 31 + i);
        ck_assert_uint_eq(e->tournament_event->tournament, id);
        ck_assert_int_eq(e->tournament_event->kind,
                         CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_STARTED);
        ck_assert_uint_eq(e->tournament_event->players_left, 3);
        frame_free_server(e);
    }
    Croupier__ServerMessage *e = next_tour_event(watcher, 5000);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->tournament_event->kind,
                     CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_STARTED);
    frame_free_server(e);

    /* Running: the level in force and the asker's entry; registration is closed. */
    Croupier__ServerMessage *m = get_info(c[0], 3, id);
    const Croupier__TournamentInfo *ti = m->tournament;
    ck_assert_int_eq(ti->status, CROUPIER__TOURNAMENT_STATUS__TOUR_RUNNING);
    ck_assert(ti->has_level && ti->level == 0 && ti->level_number == 1);
    ck_assert(ti->small_blind == 10 && ti->big_blind == 20);
    ck_assert(ti->has_level_ends_in_ms && ti->level_ends_in_ms <= 600000);
    ck_assert(ti->players_left == 3 && ti->average_stack == 1500);
    ck_assert(!ti->registration_open);
    ck_assert_int_eq(ti->prize_pool, 300);
    ck_assert_ptr_nonnull(ti->you);
    ck_assert_int_eq(ti->you->state, CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_PLAYING);
    frame_free_server(m);
    ck_assert(!ask_code(watcher, 4, REG, id, CROUPIER__ERROR_CODE__REGISTRATION_CLOSED));
    ck_assert(!ask_code(c[1], 4, UNREG, id, CROUPIER__ERROR_CODE__REGISTRATION_CLOSED));
    for (int i = 0; i < 3; i++)
        gatec_close(c[i]);
    gatec_close(watcher);
}
END_TEST

START_TEST(test_gate_tour_cancel_pushes_to_the_registered)
{
    uint64_t id = tour_create("Sunday", "mtt", MTT, wall_ms() + 3600000);
    ck_assert(wait_owned(id));
    wallet_set(51, 100);
    wallet_set(52, 100);
    gatec_t *a = login(51), *b = login(52);
    ask_code(a, 2, REG, id, 0);
    ask_code(b, 2, REG, id, 0);
    ck_assert_int_eq(wallet(51), 45);
    /* The operator cancels (croupier-ctl tour cancel writes this). */
    free(REDIS("XADD {croupier:tour:%" PRIu64 "}:in * op cancel req c1 by ctl reason maintenance",
               id));
    gatec_t *both[] = {a, b};
    for (int i = 0; i < 2; i++) {
        Croupier__ServerMessage *e = next_tour_event(both[i], 5000);
        ck_assert_msg(e != NULL, "no CANCELLED push");
        ck_assert_int_eq(e->tournament_event->kind,
                         CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_CANCELLED);
        ck_assert_str_eq(e->tournament_event->detail, "maintenance");
        frame_free_server(e);
    }
    ck_assert_int_eq(wallet(51), 100);
    /* Over: answered by the gateway from the status, nothing written. */
    long long len = rnum(REDIS("XLEN {croupier:tour:%" PRIu64 "}:in", id));
    ck_assert(!ask_code(a, 3, REG, id, CROUPIER__ERROR_CODE__TOURNAMENT_OVER));
    ck_assert_int_eq(rnum(REDIS("XLEN {croupier:tour:%" PRIu64 "}:in", id)), len);
    Croupier__ServerMessage *m = get_info(a, 4, id);
    ck_assert_int_eq(m->tournament->status, CROUPIER__TOURNAMENT_STATUS__TOUR_CANCELLED);
    ck_assert_str_eq(m->tournament->detail, "maintenance");
    ck_assert_int_eq(m->tournament->you->state,
                     CROUPIER__TOURNAMENT_ENTRY_STATE__TOUR_ENTRY_REFUNDED);
    frame_free_server(m);
    gatec_close(a);
    gatec_close(b);
}
END_TEST

/* Without a director nobody answers: UNAVAILABLE, retriable, within the budget. */
START_TEST(test_gate_tour_no_director_is_unavailable)
{
    uint64_t id = tour_create("Sunday", "mtt", MTT, wall_ms() + 3600000);
    ck_assert(wait_owned(id));
    ts_proc_signal(E.director, SIGKILL);
    ts_proc_wait(E.director, 5000, NULL);
    ts_proc_free(E.director);
    E.director = NULL;
    free(REDIS("DEL {croupier:tour:%" PRIu64 "}:owner", id));
    wallet_set(61, 100);
    gatec_t *a = login(61);
    long long t0 = ts_now_ms();
    ck_assert(ask_code(a, 2, REG, id, CROUPIER__ERROR_CODE__UNAVAILABLE));
    long long took = ts_now_ms() - t0;
    ck_assert_msg(took >= 2500 && took < 7000, "answered after %lld ms", took);
    ck_assert_int_eq(wallet(61), 100);
    gatec_close(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_tour");
    TCase *tc = tcase_create("lobby");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gate_tour_list_and_get);
    suite_add_tcase(s, tc);
    tc = tcase_create("registration");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gate_tour_register_refusals_and_unregister);
    tcase_add_test(tc, test_gate_tour_no_director_is_unavailable);
    suite_add_tcase(s, tc);
    tc = tcase_create("pushes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gate_tour_sng_fills_and_starts_with_a_push_to_every_entrant);
    tcase_add_test(tc, test_gate_tour_cancel_pushes_to_the_registered);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
