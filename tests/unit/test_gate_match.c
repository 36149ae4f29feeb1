/*
 * A match hall through the gateway (docs/protocol.md "Tournaments", docs/tournaments.md "Match
 * halls"): a real redis-server, croupier-director, croupier-game --engine traditional hosting the
 * match's table, and croupier-gate on loopback; three players driven through the client protocol
 * by gatec (tests/support/gatec.h).
 *
 * A Dou Dizhu match of 3 (one 定局积分 round of 2 deals, the final): the players register through
 * the gateway, are told where they sit (TournamentEvent MOVED_TABLE), take their seats
 * (TakeTournamentSeat: NOT_SEATED, retriable, until the table deals), and the first deal waits
 * for all three (each gets his own cards in a Deal of both deals); their turns are played by the
 * timeout and the trustee. GetTournament shows the stage (MatchStage) and the asker's score;
 * at the end each is told his place (FINISHED to the winner, ELIMINATED with place and prize to
 * the others), the prizes are paid once and the money adds up.
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

#define SECRET "gate-match-secret-0123456789abcdef"

#define MATCH3                                                                                     \
    "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"                       \
    "\"min_entrants\":3,\"max_entrants\":3,"                                                       \
    "\"payouts\":{\"items\":[{\"place\":1,\"item\":\"trophy:gold\"},"                              \
    "{\"place\":3,\"item\":\"ticket:final-2027\"}]},\"stages\":["                                  \
    "{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":2}]}"

static testenv_t rig;
static token_secret_t secret;
static ts_proc_t *director;
static testenv_server_t gate, game;

#define REDIS(...) nil_null(ts_redis_cmd(rig.redis, __VA_ARGS__))

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

static void setup(void)
{
    ck_assert_int_eq(testenv_start(&rig, SECRET), 0);
    ck_assert_int_eq(token_secret_set(&secret, SECRET, strlen(SECRET)), 0);
    char *dargs[] = {"--claim-ttl-ms", "1500", "--scan-ms", "100", NULL};
    testenv_server_t d;
    ck_assert_int_eq(testenv_start_director(&rig, &d, "dir-m", dargs), 0);
    director = d.proc;
    char *gargs[] = {"--drain-window-ms", "100", "--close-timeout-ms", "2000", NULL};
    ck_assert_int_eq(testenv_start_gate(&rig, &gate, "match-gate", gargs), 0);
    /* A player's turn lasts 300 ms, then the trustee plays him every 20 ms; the deal waits up
     * to 8 s for its players to come. */
    char *args[] = {"--trad-action-ms",
                    "300",
                    "--trad-trustee-ms",
                    "20",
                    "--trad-gap-ms",
                    "0",
                    "--trad-tour-host-ttl-ms",
                    "1200",
                    "--trad-tour-join-ms",
                    "8000",
                    "--drain-max-seconds",
                    "20",
                    NULL};
    ck_assert_int_eq(testenv_start_game(&rig, &game, "traditional", 20, args, NULL), 0);
}

static void teardown(void)
{
    testenv_stop_server(&game);
    testenv_stop_server(&gate);
    if (director != NULL) {
        ts_proc_signal(director, SIGKILL);
        ts_proc_wait(director, 5000, NULL);
        ts_proc_free(director);
        director = NULL;
    }
    testenv_stop(&rig);
}

static uint64_t match_create(void)
{
    uint64_t id = (uint64_t)rnum(REDIS("INCR {croupier:tours}:seq"));
    free(REDIS("HSET {croupier:tour:%" PRIu64 "}:meta id %" PRIu64 " name hall structure %s "
               "format match status registering created_ms 1 start_at_ms 0 started_ms 0 "
               "ended_ms 0 clock_ms 0 level 0 entries 0 players 0 pool 0 cursor 0-0",
               id, id, MATCH3));
    free(REDIS("ZADD {croupier:tours}:all 1 %" PRIu64, id));
    free(REDIS("SADD {croupier:tours}:live %" PRIu64, id));
    return id;
}

static gatec_t *login(uint64_t player)
{
    gatec_t *c = gatec_connect("127.0.0.1", gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&secret, player, time(NULL) + 600, tok, sizeof tok), 0);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->body_case, CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT);
    frame_free_server(m);
    return c;
}

#define REG CROUPIER__CLIENT_MESSAGE__BODY_REGISTER_TOURNAMENT
#define TAKE CROUPIER__CLIENT_MESSAGE__BODY_TAKE_TOURNAMENT_SEAT
#define GET CROUPIER__CLIENT_MESSAGE__BODY_GET_TOURNAMENT

/* Sends a tournament request (pushes that come first stay queued for the caller's reads). */
static void send_req(gatec_t *c, uint64_t rid, int body, uint64_t tournament)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__RegisterTournament rt = CROUPIER__REGISTER_TOURNAMENT__INIT;
    Croupier__TakeTournamentSeat ts = CROUPIER__TAKE_TOURNAMENT_SEAT__INIT;
    Croupier__GetTournament gt = CROUPIER__GET_TOURNAMENT__INIT;
    m.request_id = rid;
    m.body_case = (Croupier__ClientMessage__BodyCase)body;
    rt.tournament = ts.tournament = gt.tournament = tournament;
    if (body == REG)
        m.register_tournament = &rt;
    else if (body == TAKE)
        m.take_tournament_seat = &ts;
    else
        m.get_tournament = &gt;
    ck_assert_int_eq(gatec_send(c, &m), 0);
}

/* What a player saw. */
typedef struct {
    gatec_t *c;
    uint64_t player, rid;
    bool seated_told; /* MOVED_TABLE */
    bool seated;      /* his Snapshot came */
    uint32_t seat;
    int own_deals;   /* Deals with his own cards */
    int round_ends;  /* RoundEnds */
    int closings;    /* TableClosing{CLOSING_TOURNAMENT} */
    bool told_place; /* FINISHED or ELIMINATED with his place */
    uint32_t place;
    int64_t prize;
    char item[80];     /* the place push's item prize, "" for none */
    bool waiting_take; /* a TakeTournamentSeat in flight */
    long long next_take_ms;
} pl_t;

/* Handles what came for p (at most ms): pushes counted, TakeTournamentSeat asked again while
 * not seated. */
static void pump(pl_t *p, uint64_t id, int ms)
{
    Croupier__ServerMessage *m = gatec_recv(p->c, ms);
    if (m == NULL) {
        if (!p->seated && !p->waiting_take && ts_now_ms() >= p->next_take_ms) {
            send_req(p->c, p->rid++, TAKE, id);
            p->waiting_take = true;
        }
        return;
    }
    if (m->request_id != 0) {
        if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT) {
            p->seated = true;
            p->seat = m->snapshot->your_seat;
            ck_assert_str_eq(m->snapshot->game, "doudizhu");
            /* A match's seat shows the player's score: 0 at the stage's start. */
            for (size_t i = 0; i < m->snapshot->n_seats; i++)
                ck_assert_int_eq(m->snapshot->seats[i]->chips, 0);
        } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT && !p->seated) {
            ck_assert_msg(gatec_code(m) == CROUPIER__ERROR_CODE__NOT_SEATED &&
                              m->result->error->retriable,
                          "TakeTournamentSeat of %" PRIu64 ": code %d", p->player, gatec_code(m));
            p->next_take_ms = ts_now_ms() + 100;
        }
        p->waiting_take = false;
        frame_free_server(m);
        return;
    }
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_EVENT: {
        const Croupier__TournamentEvent *te = m->tournament_event;
        ck_assert_uint_eq(te->tournament, id);
        if (te->kind == CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_MOVED_TABLE) {
            ck_assert_uint_eq(te->player, p->player);
            p->seated_told = true;
        }
        if ((te->kind == CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_FINISHED ||
             te->kind == CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_ELIMINATED) &&
            te->has_player && te->player == p->player && te->has_place) {
            p->told_place = true;
            p->place = te->place;
            p->prize = te->prize;
            snprintf(p->item, sizeof p->item, "%s", te->item != NULL ? te->item : "");
        }
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
        /* His hand (17 cards; the landlord's kitty of 3 comes in a Deal of its own). */
        if (p->seated && m->deal->has_seat && m->deal->seat == p->seat && m->deal->has_cards &&
            m->deal->cards.len == 17)
            p->own_deals++;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END:
        p->round_ends++;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING:
        if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_TOURNAMENT)
            p->closings++;
        break;
    default:
        break;
    }
    frame_free_server(m);
}

START_TEST(test_gate_match_played_through_the_gateway)
{
    uint64_t id = match_create();
    pl_t pl[3];
    memset(pl, 0, sizeof pl);
    for (int i = 0; i < 3; i++) {
        pl[i].player = 901 + (uint64_t)i;
        free(REDIS("SET {croupier:money}:wallet:%" PRIu64 " 1000", pl[i].player));
        pl[i].c = login(pl[i].player);
        pl[i].rid = 10;
        send_req(pl[i].c, pl[i].rid, REG, id);
        Croupier__ServerMessage *a = gatec_wait_reply(pl[i].c, pl[i].rid++, 8000);
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(gatec_code(a), 0);
        frame_free_server(a);
    }
    /* Until everyone is told his place (the match's end). */
    bool asked_info = false;
    long long end = ts_now_ms() + 60000;
    for (;;) {
        bool all = true;
        for (int i = 0; i < 3; i++) {
            pump(&pl[i], id, 20);
            /* (his place may come before the last RoundEnd: two paths, director and table) */
            all = all && pl[i].told_place && pl[i].round_ends >= 2 && pl[i].closings >= 1;
        }
        if (all)
            break;
        ck_assert_msg(ts_now_ms() < end, "the match did not end within 60 s");
        if (!asked_info && pl[0].round_ends >= 1 && pl[0].round_ends < 2) {
            /* Between the deals: the stage and the asker's score. */
            asked_info = true;
            gatec_t *v = login(pl[0].player + 100); /* a viewer without an entry */
            send_req(v, 5, GET, id);
            Croupier__ServerMessage *a = gatec_wait_reply(v, 5, 5000);
            ck_assert(a != NULL && a->body_case == CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT);
            const Croupier__TournamentInfo *ti = a->tournament;
            ck_assert_int_eq(ti->format, CROUPIER__TOURNAMENT_FORMAT__TOUR_MATCH);
            ck_assert_str_eq(ti->game, "doudizhu");
            ck_assert_ptr_nonnull(ti->match);
            ck_assert_str_eq(ti->match->format, "fixed");
            ck_assert_uint_eq(ti->match->stages, 1);
            ck_assert_uint_eq(ti->match->round, 1);
            ck_assert_uint_eq(ti->match->deals_per_round, 2);
            ck_assert_ptr_null(ti->you);
            /* The places given an item (docs/tournaments.md "Items"). */
            ck_assert_uint_eq(ti->n_item_prizes, 2);
            ck_assert_uint_eq(ti->item_prizes[0]->place, 1);
            ck_assert_str_eq(ti->item_prizes[0]->item, "trophy:gold");
            ck_assert_uint_eq(ti->item_prizes[1]->place, 3);
            ck_assert_str_eq(ti->item_prizes[1]->item, "ticket:final-2027");
            frame_free_server(a);
            gatec_close(v);
        }
    }
    ck_assert(asked_info);
    long long prizes = 0, wallets = 0;
    int firsts = 0;
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(pl[i].seated_told, "player %d was not told his table", i);
        ck_assert(pl[i].seated);
        /* The first deal waited for everyone: each got his own cards in both deals. */
        ck_assert_int_eq(pl[i].own_deals, 2);
        ck_assert_int_eq(pl[i].round_ends, 2);
        ck_assert_int_eq(pl[i].closings, 1); /* the match's end at the table */
        ck_assert_uint_ge(pl[i].place, 1);
        ck_assert_uint_le(pl[i].place, 3);
        firsts += pl[i].place == 1;
        prizes += pl[i].prize;
        /* The entry says the same; GetTournament shows his place and last score. */
        send_req(pl[i].c, pl[i].rid, GET, id);
        Croupier__ServerMessage *a = gatec_wait_reply(pl[i].c, pl[i].rid++, 5000);
        ck_assert(a != NULL && a->body_case == CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT);
        const Croupier__TournamentEntry *you = a->tournament->you;
        ck_assert_ptr_nonnull(you);
        ck_assert_uint_eq(you->place, pl[i].place);
        ck_assert_int_eq(you->prize, pl[i].prize);
        /* The item of his place, in the place push and in his entry. */
        const char *want = pl[i].place == 1   ? "trophy:gold"
                           : pl[i].place == 3 ? "ticket:final-2027"
                                              : "";
        ck_assert_str_eq(pl[i].item, want);
        ck_assert_str_eq(you->item != NULL ? you->item : "", want);
        ck_assert(you->has_score);
        frame_free_server(a);
        wallets += rnum(REDIS("GET {croupier:money}:wallet:%" PRIu64, pl[i].player));
        gatec_close(pl[i].c);
    }
    ck_assert_int_ge(firsts, 1);
    ck_assert_int_eq(prizes, 300);
    ck_assert_int_eq(wallets + rnum(REDIS("GET {croupier:money}:rake:tournament")), 3000);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_match");
    TCase *tc = tcase_create("gate_match");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gate_match_played_through_the_gateway);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
