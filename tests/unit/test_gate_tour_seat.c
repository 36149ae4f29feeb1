/*
 * A tournament player at his table through the gateway (docs/protocol.md "Tournaments",
 * docs/gateway.md "Tournaments"): a real redis-server, croupier-director, croupier-game --engine
 * holdem hosting the tournament's tables, and croupier-gate on loopback, the player driven through
 * the client protocol by gatec (tests/support/gatec.h).
 *
 *   - an SNG: one player registers and plays through the gateway (TakeTournamentSeat until his
 *     table seats him, its Snapshot, its pushes, his moves), the others are absent and blinded
 *     away; it finishes with him placed, his seat forgotten at TableClosing{CLOSING_TOURNAMENT};
 *     and the refusals (unknown tournament, not registered, waiting for the start, over);
 *   - a SIGKILL of the server hosting his table: TableClosing{CLOSING_TOURNAMENT} "send
 *     TakeTournamentSeat", no Moved, no cash table; the other server takes the table over and
 *     TakeTournamentSeat finds it there.
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"

#define SECRET "gate-tour-seat-secret-0123456789"

/* Blinds that grow until they finish a field of absent players (they check, else fold). */
#define FAST_LEVELS                                                                                \
    "\"levels\":[{\"small_blind\":10,\"big_blind\":20,\"duration_ms\":1500},"                      \
    "{\"small_blind\":50,\"big_blind\":100,\"duration_ms\":1500},"                                 \
    "{\"small_blind\":200,\"big_blind\":400,\"ante\":50,\"duration_ms\":1500},"                    \
    "{\"small_blind\":1000,\"big_blind\":2000,\"ante\":200,\"duration_ms\":1500},"                 \
    "{\"small_blind\":10000,\"big_blind\":20000,\"ante\":2000,\"duration_ms\":1500},"              \
    "{\"small_blind\":100000,\"big_blind\":200000,\"ante\":20000,\"duration_ms\":1500}]"
#define SNG4                                                                                       \
    "{\"format\":\"sng\",\"seats_per_table\":4,\"starting_stack\":1000,\"buy_in\":100,"            \
    "\"fee\":10,\"min_entrants\":4,\"max_entrants\":4," FAST_LEVELS "}"
/* Blinds that stay small: the tournament outlasts the test. */
#define SLOW3                                                                                      \
    "{\"format\":\"sng\",\"seats_per_table\":3,\"starting_stack\":100000,\"buy_in\":100,"          \
    "\"fee\":10,\"min_entrants\":3,\"max_entrants\":3,\"levels\":[{\"small_blind\":5,"             \
    "\"big_blind\":10,\"duration_ms\":600000}]}"

typedef struct {
    testenv_t rig;
    token_secret_t secret;
    ts_proc_t *director;
    testenv_server_t gate;
} env_t;

static env_t E;

/* A Redis command's reply as text (free it); nil is NULL. */
#define REDIS(...) nil_null(ts_redis_cmd(E.rig.redis, __VA_ARGS__))

static char *nil_null(char *text)
{
    if (text != NULL && strcmp(text, "(nil)") == 0) {
        free(text);
        return NULL;
    }
    return text;
}

static long long rnum(char *text)
{
    long long v = text != NULL ? strtoll(text, NULL, 10) : -1;
    free(text);
    return v;
}

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* redis-server, croupier-director (fast scans) and croupier-gate; the game servers are the
 * test's. */
static void setup(void)
{
    memset(&E, 0, sizeof E);
    ck_assert_int_eq(testenv_start(&E.rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&E.secret, SECRET, strlen(SECRET)), 0);
    char *dargs[] = {"--claim-ttl-ms",      "1500", "--scan-ms", "100",
                     "--drain-max-seconds", "5",    NULL};
    testenv_server_t d;
    ck_assert_int_eq(testenv_start_director(&E.rig, &d, "dir-s", dargs), 0);
    E.director = d.proc;
    char *args[] = {"--drain-window-ms", "100", "--close-timeout-ms", "2000", NULL};
    ck_assert_int_eq(testenv_start_gate(&E.rig, &E.gate, "tour-seat-gate", args), 0);
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

/* A hold'em server hosting tournament tables: absent players' moves after 2 ms, no gap; a turn
 * of the connected player lasts 1 s at most (no time bank), so a Turn he missed (pushed before
 * his TakeTournamentSeat reached the table) holds the table 1 s, not 45. */
static void game_start(testenv_server_t *s)
{
    char *args[] = {"--holdem-trustee-ms",
                    "2",
                    "--holdem-gap-ms",
                    "0",
                    "--holdem-action-ms",
                    "1000",
                    "--holdem-time-bank-ms",
                    "0",
                    "--holdem-tour-host-ttl-ms",
                    "1200",
                    "--drain-max-seconds",
                    "20",
                    NULL};
    ck_assert_int_eq(testenv_start_game(&E.rig, s, "holdem", 20, args, NULL), 0);
}

/* What croupier-ctl's `tour create` writes (tour_director.h has the keys). */
static uint64_t tour_create(const char *structure)
{
    uint64_t id = (uint64_t)rnum(REDIS("INCR {croupier:tours}:seq"));
    long long now = wall_ms();
    free(REDIS("HSET {croupier:tour:%" PRIu64 "}:meta id %" PRIu64 " name seat structure %s "
               "format sng status registering created_ms %lld start_at_ms 0 started_ms 0 "
               "ended_ms 0 clock_ms 0 level 0 entries 0 players 0 pool 0 cursor 0-0",
               id, id, structure, now));
    free(REDIS("ZADD {croupier:tours}:all %lld %" PRIu64, now, id));
    free(REDIS("SADD {croupier:tours}:live %" PRIu64, id));
    return id;
}

/* Registers players first..first+n-1 through the director's stream (as the gateway would). */
static void register_direct(uint64_t id, uint64_t first, int n)
{
    for (int p = 0; p < n; p++) {
        uint64_t player = first + (uint64_t)p;
        free(REDIS("SET {croupier:money}:wallet:%" PRIu64 " 1000", player));
        free(REDIS("XADD {croupier:tour:%" PRIu64 "}:in * op register req r%" PRIu64
                   " player %" PRIu64,
                   id, player, player));
        long long end = ts_now_ms() + 10000;
        char *a = NULL;
        while (a == NULL && ts_now_ms() < end) {
            a = REDIS("LPOP {croupier:tour:%" PRIu64 "}:reply:r%" PRIu64, id, player);
            if (a == NULL)
                ts_sleep_ms(20);
        }
        ck_assert_msg(a != NULL && strstr(a, "\"ok\":true") != NULL, "register %" PRIu64 ": %s",
                      player, a != NULL ? a : "(no answer)");
        free(a);
    }
}

static bool status_is(uint64_t id, const char *want)
{
    char *s = REDIS("HGET {croupier:tour:%" PRIu64 "}:meta status", id);
    bool yes = s != NULL && strcmp(s, want) == 0;
    free(s);
    return yes;
}

/* A field of the player's entry (an integer; -1 without an entry). */
static long long entry_int(uint64_t id, uint64_t player, const char *field)
{
    char *e = REDIS("HGET {croupier:tour:%" PRIu64 "}:entries %" PRIu64, id, player);
    if (e == NULL)
        return -1;
    json_t *j = json_loads(e, 0, NULL);
    long long v = j != NULL ? json_integer_value(json_object_get(j, field)) : -1;
    json_decref(j);
    free(e);
    return v;
}

static gatec_t *login(uint64_t player)
{
    gatec_t *c = gatec_connect("127.0.0.1", E.gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&E.secret, player, time(NULL) + 600, tok, sizeof tok), 0);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(m);
    return c;
}

/* Sends a tournament request once and returns its answer (free it). */
static Croupier__ServerMessage *ask_once(gatec_t *c, uint64_t rid, int body, uint64_t tournament)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__RegisterTournament rt = CROUPIER__REGISTER_TOURNAMENT__INIT;
    Croupier__TakeTournamentSeat ts = CROUPIER__TAKE_TOURNAMENT_SEAT__INIT;
    m.request_id = rid;
    m.body_case = (Croupier__ClientMessage__BodyCase)body;
    rt.tournament = ts.tournament = tournament;
    if (body == CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT)
        m.register_tournament = &rt;
    else
        m.take_tournament_seat = &ts;
    ck_assert_int_eq(gatec_send(c, &m), 0);
    Croupier__ServerMessage *a = gatec_wait_reply(c, rid, 8000);
    ck_assert_msg(a != NULL, "no answer to request %" PRIu64, rid);
    return a;
}

/* Sends a tournament request and returns its answer (free it). RATE_LIMITED (the player's
 * moves at a fast test table may spend the connection's burst of --rate-limit just before; the
 * frame was dropped) is what a client slows down for: the same request again 200 ms later. */
static Croupier__ServerMessage *ask(gatec_t *c, uint64_t rid, int body, uint64_t tournament)
{
    for (int tries = 0;; tries++) {
        Croupier__ServerMessage *a = ask_once(c, rid, body, tournament);
        if (tries == 20 || a->body_case != CROUPIER__SERVER_MESSAGE__BODY_RESULT ||
            gatec_code(a) != CROUPIER__ERROR_CODE__RATE_LIMITED)
            return a;
        frame_free_server(a);
        ts_sleep_ms(200);
    }
}

#define REG CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT
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

/* What a player saw of his table. */
typedef struct {
    int deals, turns, round_ends, moved, actions_ok, actions_refused;
    bool closing; /* TableClosing{CLOSING_TOURNAMENT} received */
    char closing_detail[160];
} seen_t;

/*
 * TakeTournamentSeat until the table seats the player (NOT_SEATED, retriable, meanwhile: his
 * table seats him when it deals its next hand), within ms. Returns the Snapshot (free it), or
 * NULL; *waits counts the NOT_SEATED answers. Pushes that come meanwhile stay queued.
 */
static Croupier__ServerMessage *take_seat(gatec_t *c, uint64_t *rid, uint64_t id, int ms,
                                          int *waits)
{
    long long end = ts_now_ms() + ms;
    while (ts_now_ms() < end) {
        Croupier__ServerMessage *a = ask(c, (*rid)++, TAKE, id);
        if (a->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT)
            return a;
        ck_assert_msg(
            a->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT &&
                gatec_code(a) == CROUPIER__ERROR_CODE__NOT_SEATED && a->result->error->retriable,
            "TakeTournamentSeat: body %d code %d (%s)", a->body_case, gatec_code(a),
            a->result != NULL && a->result->error != NULL ? a->result->error->message : "");
        (*waits)++;
        frame_free_server(a);
        ts_sleep_ms(50);
    }
    return NULL;
}

/* Sends the player's move (check when nothing is to call, else call). */
static void act(gatec_t *c, uint64_t rid, int64_t to_call)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__HoldemAction h = CROUPIER__HOLDEM_ACTION__INIT;
    h.move = to_call > 0 ? CROUPIER__HOLDEM_MOVE__HOLDEM_CALL : CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK;
    a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
    a.holdem = &h;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = &a;
    ck_assert_int_eq(gatec_send(c, &m), 0);
}

/*
 * Plays the table's pushes for up to ms: a Turn of his seat is answered by a move (its answer
 * counted when it comes back); stops at TableClosing{CLOSING_TOURNAMENT}.
 */
static void play(gatec_t *c, uint64_t *rid, uint32_t seat, int ms, seen_t *seen)
{
    long long end = ts_now_ms() + ms;
    while (ts_now_ms() < end && !seen->closing) {
        Croupier__ServerMessage *m = gatec_recv(c, 200);
        if (m == NULL)
            continue;
        if (m->request_id != 0) {
            /* The answer to a move: a turn already played for him (a stale Turn) is refused. */
            if (gatec_code(m) == 0)
                seen->actions_ok++;
            else
                seen->actions_refused++;
        }
        switch (m->request_id != 0 ? 0 : m->body_case) {
        case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
            seen->deals++;
            break;
        case CROUPIER__SERVER_MESSAGE__BODY_TURN:
            seen->turns++;
            if (m->turn->seat == seat)
                act(c, (*rid)++, m->turn->has_to_call ? m->turn->to_call : 0);
            break;
        case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END:
            seen->round_ends++;
            break;
        case CROUPIER__SERVER_MESSAGE__BODY_MOVED:
            seen->moved++;
            break;
        case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
            if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_TOURNAMENT) {
                seen->closing = true;
                snprintf(seen->closing_detail, sizeof seen->closing_detail, "%s",
                         m->table_closing->detail != NULL ? m->table_closing->detail : "");
            }
            break;
        default:
            break;
        }
        frame_free_server(m);
    }
}

static bool finished(uint64_t id)
{
    return status_is(id, "finished");
}

/* The player's seat record, or NULL (free it). */
static char *seat_record(uint64_t player)
{
    return REDIS("GET {croupier:seat}:%" PRIu64, player);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

START_TEST(test_gate_tour_seat_sng_played_through_the_gateway_to_its_end)
{
    testenv_server_t g;
    game_start(&g);
    uint64_t id = tour_create(SNG4);
    const uint64_t me = 801;
    free(REDIS("SET {croupier:money}:wallet:%" PRIu64 " 1000", me));
    gatec_t *c = login(me);
    uint64_t rid = 10;

    /* Refusals before anything: an unknown tournament, id 0, not registered. */
    ck_assert(!ask_code(c, rid++, TAKE, 999, CROUPIER__ERROR_CODE__NO_SUCH_TOURNAMENT));
    ck_assert(!ask_code(c, rid++, TAKE, 0, CROUPIER__ERROR_CODE__BAD_REQUEST));
    ck_assert(!ask_code(c, rid++, TAKE, id, CROUPIER__ERROR_CODE__NOT_REGISTERED));

    /* Registered, before the start: waiting for a seat, retriable. */
    ask_code(c, rid++, REG, id, 0);
    Croupier__ServerMessage *a = ask(c, rid++, TAKE, id);
    ck_assert_int_eq(gatec_code(a), CROUPIER__ERROR_CODE__NOT_SEATED);
    ck_assert(a->result->error->retriable);
    ck_assert_str_eq(a->result->error->message, "waiting for a seat; retry");
    frame_free_server(a);

    /* Three absent players fill it: it starts, the server claims its table. */
    register_direct(id, 802, 3);
    int waits = 0;
    Croupier__ServerMessage *snap = take_seat(c, &rid, id, 15000, &waits);
    ck_assert_msg(snap != NULL, "never seated");
    const Croupier__Snapshot *s = snap->snapshot;
    ck_assert_int_eq(s->engine, CROUPIER__ENGINE__ENGINE_HOLDEM);
    ck_assert_str_eq(s->game, "holdem");
    ck_assert_uint_eq(s->your_seat, (uint32_t)entry_int(id, me, "seat"));
    char *where =
        REDIS("HGET {croupier:tour:%" PRIu64 "}:where %lld", id, entry_int(id, me, "table"));
    ck_assert_ptr_nonnull(where);
    json_t *w = json_loads(where, 0, NULL);
    ck_assert_uint_eq(s->desk_id, (uint64_t)json_integer_value(json_object_get(w, "desk")));
    json_decref(w);
    free(where);
    /* His seat record names the table, marked tour (docs/gateway.md "Seats"). */
    char *rec = seat_record(me);
    ck_assert_ptr_nonnull(rec);
    ck_assert_msg(ends_with(rec, " tour"), "seat record %s", rec);
    free(rec);
    uint32_t seat = s->your_seat;
    frame_free_server(snap);
    fprintf(stderr, "gate_tour_seat: seated after %d retriable NOT_SEATED\n", waits);

    /* A second TakeTournamentSeat, a Resume: the same table's Snapshot. */
    a = ask(c, rid++, TAKE, id);
    ck_assert_int_eq(a->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    ck_assert_uint_eq(a->snapshot->your_seat, seat);
    frame_free_server(a);
    a = gatec_resume(c, rid++, 3000);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    ck_assert_uint_eq(a->snapshot->your_seat, seat);
    frame_free_server(a);

    /* He plays his turns to the end: busted (placed) or the winner. */
    seen_t seen = {0};
    play(c, &rid, seat, 90000, &seen);
    fprintf(stderr,
            "gate_tour_seat: deals %d turns %d round ends %d moves ok %d refused %d; closing "
            "\"%s\"\n",
            seen.deals, seen.turns, seen.round_ends, seen.actions_ok, seen.actions_refused,
            seen.closing_detail);
    ck_assert_msg(seen.closing, "no TableClosing{CLOSING_TOURNAMENT}");
    ck_assert_int_gt(seen.deals, 0);
    ck_assert_int_gt(seen.turns, 0);
    ck_assert_int_gt(seen.round_ends, 0);
    ck_assert_int_gt(seen.actions_ok, 0);
    ck_assert_int_eq(seen.moved, 0);
    long long end = ts_now_ms() + 60000;
    while (!finished(id) && ts_now_ms() < end)
        ts_sleep_ms(100);
    ck_assert(finished(id));
    long long place = entry_int(id, me, "place");
    ck_assert_msg(place >= 1 && place <= 4, "place %lld", place);
    fprintf(stderr, "gate_tour_seat: finished in place %lld\n", place);

    /* His seat was forgotten at the TableClosing: a Resume has nothing to go to. */
    rec = seat_record(me);
    ck_assert_msg(rec == NULL, "seat record left: %s", rec);
    a = gatec_resume(c, rid++, 3000);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(gatec_code(a), CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_server(a);
    /* After the end: over. */
    ck_assert(!ask_code(c, rid++, TAKE, id, CROUPIER__ERROR_CODE__TOURNAMENT_OVER));
    gatec_close(c);
    testenv_stop_server(&g);
}
END_TEST

/* A where naming a server the registry does not list: the table is being taken over. */
START_TEST(test_gate_tour_seat_where_of_a_gone_server_is_retriable)
{
    /* A running tournament nobody plays (not in the live set: no director, no server). */
    uint64_t id = (uint64_t)rnum(REDIS("INCR {croupier:tours}:seq"));
    free(REDIS("HSET {croupier:tour:%" PRIu64 "}:meta id %" PRIu64 " status running", id, id));
    free(REDIS("HSET {croupier:tour:%" PRIu64 "}:entries 811 %s 812 %s 813 %s", id,
               "{\"state\":\"playing\",\"table\":1,\"seat\":0,\"stack\":1000}",
               "{\"state\":\"waiting\",\"stack\":1000}",
               "{\"state\":\"out\",\"place\":3,\"prize\":0}"));
    free(REDIS("HSET {croupier:tour:%" PRIu64 "}:where 1 %s", id,
               "{\"host\":\"x\",\"server\":\"holdem:97\",\"epoch\":3,\"desk\":5,\"engine\":2,"
               "\"game\":\"holdem\",\"stake\":2}"));
    gatec_t *c = login(811);
    Croupier__ServerMessage *a = ask(c, 2, TAKE, id);
    ck_assert_int_eq(gatec_code(a), CROUPIER__ERROR_CODE__NOT_SEATED);
    ck_assert(a->result->error->retriable);
    ck_assert_msg(strstr(a->result->error->message, "taken over") != NULL, "%s",
                  a->result->error->message);
    frame_free_server(a);
    char *rec = seat_record(811);
    ck_assert_msg(rec == NULL, "seat written: %s", rec); /* nothing written */
    gatec_close(c);
    /* A late entry not seated yet waits; an eliminated player is told he is out. */
    c = login(812);
    ck_assert(ask_code(c, 2, TAKE, id, CROUPIER__ERROR_CODE__NOT_SEATED));
    gatec_close(c);
    c = login(813);
    ck_assert(!ask_code(c, 2, TAKE, id, CROUPIER__ERROR_CODE__TOURNAMENT_OVER));
    gatec_close(c);
}
END_TEST


/* Watch{player_id} from a spectator's connection: its answer must be a spectator's Snapshot (of
 * the table where the player sits); returns its desk. docs/spectators.md "Following a player". */
static uint64_t follow(gatec_t *s, uint64_t rid, uint64_t player)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Watch w = CROUPIER__WATCH__INIT;
    w.has_player_id = true;
    w.player_id = player;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_WATCH;
    m.watch = &w;
    ck_assert_int_eq(gatec_send(s, &m), 0);
    Croupier__ServerMessage *a = gatec_wait_reply(s, rid, 5000);
    ck_assert_msg(a != NULL && a->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT,
                  "Watch{player %" PRIu64 "}: body %d code %d", player, a ? (int)a->body_case : -1,
                  a ? gatec_code(a) : -1);
    ck_assert(a->snapshot->has_spectator && a->snapshot->spectator);
    ck_assert(a->snapshot->holdem == NULL || !a->snapshot->holdem->has_hole_cards);
    uint64_t d = a->snapshot->desk_id;
    frame_free_server(a);
    return d;
}

/*
 * Reads a spectator's pushes for up to ms, until a spectator's Snapshot pushed (the followed
 * player's next table: desk ids are per server, so it may carry the same number); returns its
 * desk (0: none came). No push may show a seat's cards: a seat's Deal carries a count, a
 * Snapshot no hole cards.
 */
static uint64_t spectator_next_table(gatec_t *s, int ms, int *pushes)
{
    for (long long end = ts_now_ms() + ms; ts_now_ms() < end;) {
        Croupier__ServerMessage *m = gatec_recv(s, 50);
        if (m == NULL)
            continue;
        (*pushes)++;
        if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && m->deal->has_seat)
            ck_assert_msg(m->deal->cards.len == 0, "a spectator got seat %u's cards",
                          m->deal->seat);
        if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT) {
            ck_assert(m->snapshot->spectator);
            ck_assert(m->snapshot->holdem == NULL || !m->snapshot->holdem->has_hole_cards);
            uint64_t d = m->snapshot->desk_id;
            frame_free_server(m);
            return d;
        }
        frame_free_server(m);
    }
    return 0;
}

/*
 * The server hosting his table is SIGKILLed: the gateway tells him TableClosing{CLOSING_TOURNAMENT}
 * (send TakeTournamentSeat), never Moved, never a cash table; his seat is forgotten. The other
 * server claims the table once the dead host's claim expires, re-deals the hand in play, and his
 * TakeTournamentSeat finds it there. A friend following him (Watch{player}) is taken to that
 * table too, and never sees a seat's cards.
 */
START_TEST(test_gate_tour_seat_crash_of_its_server_sends_back_to_take_seat)
{
    testenv_server_t ga, gb;
    game_start(&ga);
    game_start(&gb);
    uint64_t id = tour_create(SLOW3);
    const uint64_t me = 821;
    free(REDIS("SET {croupier:money}:wallet:%" PRIu64 " 1000", me));
    gatec_t *c = login(me);
    uint64_t rid = 10;
    ask_code(c, rid++, REG, id, 0);
    register_direct(id, 822, 2);
    int waits = 0;
    Croupier__ServerMessage *snap = take_seat(c, &rid, id, 15000, &waits);
    ck_assert_msg(snap != NULL, "never seated");
    uint32_t seat = snap->snapshot->your_seat;
    uint64_t desk = snap->snapshot->desk_id;
    frame_free_server(snap);
    /* A friend follows him (docs/spectators.md "Following a player"): through the tournament's
     * re-seating at another server, below. */
    const uint64_t friend = 830;
    gatec_t *sp = login(friend);
    ck_assert_uint_eq(follow(sp, 2, me), desk);
    seen_t seen = {0};
    play(c, &rid, seat, 1500, &seen);
    ck_assert_int_gt(seen.deals, 0);

    /* Kill the host (the server its seat record names). */
    char *before = seat_record(me);
    ck_assert_ptr_nonnull(before);
    char dead[80];
    ck_assert_int_eq(sscanf(before, "%79s", dead), 1);
    free(before);
    bool a_hosts = ts_proc_log_has(ga.proc, "\"tk_tour_table_claimed\"");
    testenv_server_t *host = a_hosts ? &ga : &gb, *other = a_hosts ? &gb : &ga;
    ck_assert(!ts_proc_log_has(other->proc, "\"tk_tour_table_claimed\""));
    ts_proc_signal(host->proc, SIGKILL);
    ts_proc_wait(host->proc, 5000, NULL);
    ts_proc_free(host->proc);
    host->proc = NULL;
    memset(&seen, 0, sizeof seen);
    play(c, &rid, seat, 10000, &seen);
    ck_assert_msg(seen.closing, "no TableClosing{CLOSING_TOURNAMENT} after the crash");
    ck_assert_str_eq(seen.closing_detail, "your table's server stopped; send TakeTournamentSeat");
    /* Nothing else: no Moved, no cash seat. */
    seen_t after = {0};
    play(c, &rid, seat, 1000, &after);
    ck_assert_int_eq(seen.moved + after.moved, 0);
    ck_assert(!after.closing);
    char *rec = seat_record(me);
    ck_assert_msg(rec == NULL, "seat record left: %s", rec);

    /* The other server takes the table over: TakeTournamentSeat finds it there. */
    waits = 0;
    snap = take_seat(c, &rid, id, 15000, &waits);
    ck_assert_msg(snap != NULL, "never seated again");
    ck_assert_uint_eq(snap->snapshot->your_seat, seat);
    fprintf(stderr,
            "gate_tour_seat: re-seated after the crash (desk %" PRIu64 " -> %" PRIu64
            ", %d waits)\n",
            desk, snap->snapshot->desk_id, waits);
    ck_assert(ts_proc_log_has(other->proc, "\"tk_tour_table_claimed\""));
    /* The friend's watch followed him there: that table's spectator Snapshot, pushed. */
    int pushes = 0;
    uint64_t watched = spectator_next_table(sp, 5000, &pushes);
    ck_assert_msg(watched == snap->snapshot->desk_id,
                  "the spectator watches desk %" PRIu64 ", the player sits at %" PRIu64
                  " (%d pushes)",
                  watched, snap->snapshot->desk_id, pushes);
    frame_free_server(snap);
    rec = seat_record(me);
    ck_assert_ptr_nonnull(rec);
    ck_assert_msg(ends_with(rec, " tour"), "seat record %s", rec);
    char now_at[80];
    ck_assert_int_eq(sscanf(rec, "%79s", now_at), 1);
    ck_assert_msg(strcmp(now_at, dead) != 0, "still at %s", dead);
    free(rec);
    memset(&seen, 0, sizeof seen);
    play(c, &rid, seat, 2000, &seen);
    ck_assert_int_gt(seen.deals, 0);
    gatec_close(sp);
    gatec_close(c);
    testenv_stop_server(&ga);
    testenv_stop_server(&gb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_tour_seat");
    TCase *tc = tcase_create("play");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_gate_tour_seat_sng_played_through_the_gateway_to_its_end);
    tcase_add_test(tc, test_gate_tour_seat_where_of_a_gone_server_is_retriable);
    suite_add_tcase(s, tc);
    tc = tcase_create("crash");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gate_tour_seat_crash_of_its_server_sends_back_to_take_seat);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
