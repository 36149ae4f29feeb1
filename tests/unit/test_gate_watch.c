/*
 * Spectators through the gateway (docs/spectators.md, docs/gateway.md "Spectators"): a real
 * redis-server, croupier-game --engine holdem, --engine traditional (Dou Dizhu with server bots)
 * and --engine test, and three croupier-gate on loopback -- GA for the players, GB for most
 * spectators (--watch-output-cap 16384), GC with --watch-max 1 --
 * the players and spectators driven through the client protocol by gatec.
 *
 *   - hold'em: two spectators (one by table on another gateway than the players, one following a
 *     player) get the public Snapshot and every public event of a hand, and never a hole card
 *     but those shown at the showdown; the folded hand's cards never at all;
 *   - Dou Dizhu: a spectator sees each seat's card count, never a hand;
 *   - refusals: a watch session's Join, Action, Leave, Resume, CreateRoom are WATCHING and change
 *     nothing (the table plays on, the spectator still sees it); after Unwatch they are a
 *     player's again;
 *   - caps: a table's (--test-spectators 2) and a gateway's (--watch-max 1): WATCH_FULL, and room
 *     again once a spectator leaves; a private room created with no_spectators: NOT_WATCHABLE;
 *   - a slow spectator (never reads) is dropped while the table plays on and another spectator
 *     gets every event;
 *   - bad input: the connection is kept;
 *   - following a player: he changes tables, then his server drains and his table moves to
 *     another server; the spectator is given each new table's Snapshot; that server killed, a
 *     spectator of its table by id is told WatchEnded{NO_SUCH_TABLE}.
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "token.h"

#define SECRET "gate-watch-secret-0123456789abcd"
#define HE_P0 7200001 /* hold'em players P0, P0+1, P0+2 (folds) */
#define DDZ_P 7200010
#define TG_P 7200020  /* test engine players: TG_P + 2k and + 2k+1 in test k */
#define SPECT 7200100 /* spectators SPECT, SPECT+1, ... */

typedef struct {
    testenv_t rig;
    token_secret_t secret;
    testenv_server_t holdem, trad, test, ga, gb, gc;
    bool ok;
    char why[256];
} env_t;

static env_t E;

static void setup_once(void)
{
    memset(&E, 0, sizeof E);
    if (testenv_start(&E.rig, SECRET) != 0 ||
        token_secret_set(&E.secret, SECRET, strlen(SECRET)) != 0) {
        snprintf(E.why, sizeof E.why, "redis-server or the secret");
        return;
    }
    char *hargs[] = {"--holdem-gap-ms", "1500", "--holdem-rake-bp", "0", NULL};
    char *targs[] = {"--trad-bot-fill-ms",
                     "0",
                     "--trad-action-ms",
                     "300",
                     "--trad-trustee-ms",
                     "20",
                     "--trad-bot-ms",
                     "20",
                     "--trad-gap-ms",
                     "300",
                     NULL};
    char *xargs[] = {
        "--test-round-ms", "600000", "--test-gap-ms", "20", "--test-spectators", "2", NULL};
    char *aargs[] = {"--drain-window-ms",
                     "100",
                     "--close-timeout-ms",
                     "2000",
                     "--rate-limit",
                     "100000",
                     "--rate-burst",
                     "100000",
                     "--player-rate-limit",
                     "100000",
                     "--player-rate-burst",
                     "100000",
                     "--watch-follow-ms",
                     "100",
                     NULL};
    char *bargs[] = {"--drain-window-ms",
                     "100",
                     "--close-timeout-ms",
                     "2000",
                     "--watch-output-cap",
                     "16384",
                     "--watch-follow-ms",
                     "100",
                     NULL};
    char *cargs[] = {"--drain-window-ms",
                     "100",
                     "--close-timeout-ms",
                     "2000",
                     "--watch-max",
                     "1",
                     "--watch-replay-delay-s",
                     "3600",
                     NULL};
    if (testenv_start_game(&E.rig, &E.holdem, "holdem", 5, hargs, NULL) != 0 ||
        testenv_start_game(&E.rig, &E.trad, "traditional", 5, targs, NULL) != 0 ||
        testenv_start_game(&E.rig, &E.test, "test", 5, xargs, NULL) != 0 ||
        testenv_start_gate(&E.rig, &E.ga, "watch-ga", aargs) != 0 ||
        testenv_start_gate(&E.rig, &E.gb, "watch-gb", bargs) != 0 ||
        testenv_start_gate(&E.rig, &E.gc, "watch-gc", cargs) != 0) {
        snprintf(E.why, sizeof E.why, "a server did not start");
        return;
    }
    ts_sleep_ms(300); /* the gateways' registry views list every server */
    E.ok = true;
}

static void teardown_once(void)
{
    testenv_stop_server(&E.gc);
    testenv_stop_server(&E.gb);
    testenv_stop_server(&E.ga);
    testenv_stop_server(&E.test);
    testenv_stop_server(&E.trad);
    testenv_stop_server(&E.holdem);
    testenv_stop(&E.rig);
}

static void need_rig(void)
{
    ck_assert_msg(E.ok, "the rig did not start: %s", E.why);
}

static gatec_t *login_at(const testenv_server_t *gate, uint64_t player)
{
    gatec_t *c = gatec_connect("127.0.0.1", gate->port, 2000);
    ck_assert_ptr_nonnull(c);
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&E.secret, player, time(NULL) + 600, tok, sizeof tok), 0);
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    ck_assert_msg(m != NULL && m->body_case == CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT,
                  "player %" PRIu64 ": no login", player);
    frame_free_server(m);
    return c;
}

static void wallet(uint64_t player, long chips)
{
    free(ts_redis_cmd(E.rig.redis, "SET {croupier:money}:wallet:%" PRIu64 " %ld", player, chips));
}

/* Watch a table (server, desk) or a player (server NULL); the answer (free it). */
static Croupier__ServerMessage *watch(gatec_t *c, uint64_t rid, const char *server, uint64_t desk,
                                      uint64_t player)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Watch w = CROUPIER__WATCH__INIT;
    w.server_id = (char *)server;
    w.has_desk_id = desk != 0;
    w.desk_id = desk;
    w.has_player_id = player != 0;
    w.player_id = player;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_WATCH;
    m.watch = &w;
    ck_assert_int_eq(gatec_send(c, &m), 0);
    Croupier__ServerMessage *a = gatec_wait_reply(c, rid, 5000);
    ck_assert_msg(a != NULL, "no answer to Watch %" PRIu64, rid);
    return a;
}

/* A Watch that must be answered by a spectator's Snapshot; returns its desk. */
static uint64_t watch_ok(gatec_t *c, uint64_t rid, const char *server, uint64_t desk,
                         uint64_t player)
{
    Croupier__ServerMessage *a = watch(c, rid, server, desk, player);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT,
                  "Watch %" PRIu64 ": body %d code %d (%s)", rid, a->body_case, gatec_code(a),
                  a->result && a->result->error ? a->result->error->message : "");
    ck_assert(a->snapshot->has_spectator && a->snapshot->spectator);
    for (size_t i = 0; i < a->snapshot->n_seats; i++) /* your_seat: the seat count, no seat */
        ck_assert_uint_lt(a->snapshot->seats[i]->seat, a->snapshot->your_seat);
    uint64_t d = a->snapshot->desk_id;
    frame_free_server(a);
    return d;
}

static void expect_watch_code(gatec_t *c, uint64_t rid, const char *server, uint64_t desk,
                              uint64_t player, int want)
{
    Croupier__ServerMessage *a = watch(c, rid, server, desk, player);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT && gatec_code(a) == want,
                  "Watch %" PRIu64 ": body %d code %d (%s), wanted %d", rid, a->body_case,
                  gatec_code(a), a->result && a->result->error ? a->result->error->message : "",
                  want);
    frame_free_server(a);
}

static Croupier__ServerMessage *call(gatec_t *c, Croupier__ClientMessage *m)
{
    ck_assert_int_eq(gatec_send(c, m), 0);
    Croupier__ServerMessage *a = gatec_wait_reply(c, m->request_id, 5000);
    ck_assert_msg(a != NULL, "no answer to request %" PRIu64, m->request_id);
    return a;
}

static int unwatch(gatec_t *c, uint64_t rid)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Unwatch u = CROUPIER__UNWATCH__INIT;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_UNWATCH;
    m.unwatch = &u;
    Croupier__ServerMessage *a = call(c, &m);
    int code = a->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? gatec_code(a) : -1;
    frame_free_server(a);
    return code;
}

static void act(gatec_t *c, uint64_t rid, Croupier__HoldemMove move)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__HoldemAction h = CROUPIER__HOLDEM_ACTION__INIT;
    h.move = move;
    a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
    a.holdem = &h;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = &a;
    ck_assert_int_eq(gatec_send(c, &m), 0);
}

/* A shedding play of n cards: the test engine shows any action to the table as a Play. */
static void send_play(gatec_t *c, uint64_t rid, int n)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction s = CROUPIER__SHEDDING_ACTION__INIT;
    uint8_t cards[108];
    for (int i = 0; i < n; i++)
        cards[i] = (uint8_t)((2 + i % 13) << 2 | (i / 13) % 4);
    s.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY;
    s.has_cards = true;
    s.cards.data = cards;
    s.cards.len = (size_t)n;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &s;
    m.request_id = rid;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = &a;
    ck_assert_int_eq(gatec_send(c, &m), 0);
}

static bool has_card(const ProtobufCBinaryData *b, uint8_t card)
{
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] == card)
            return true;
    return false;
}

/*
 * What a hold'em spectator saw: every card field of every message is checked against the hole
 * cards the players were dealt. hole[i][2] of seat i (0: not dealt); shown: the seats whose
 * hands RoundEnd showed; folded: the seat whose cards no one may ever see.
 */
typedef struct {
    int snapshots, deals_seat, deals_board, board_cards, turns, plays, round_ends;
    char round[160];
    char bad[256];
} he_seen_t;

static void he_check(he_seen_t *s, const Croupier__ServerMessage *m, uint8_t hole[9][2], int folded)
{
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT:
        s->snapshots++;
        if (m->snapshot->holdem != NULL && m->snapshot->holdem->has_hole_cards)
            snprintf(s->bad, sizeof s->bad, "a spectator's Snapshot holds hole cards");
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
        if (m->deal->has_seat) {
            s->deals_seat++;
            if (m->deal->has_cards && m->deal->cards.len > 0)
                snprintf(s->bad, sizeof s->bad, "a Deal to seat %u carried its cards",
                         m->deal->seat);
            else if (!m->deal->has_count || m->deal->count != 2)
                snprintf(s->bad, sizeof s->bad, "a Deal to seat %u without its count",
                         m->deal->seat);
        } else {
            s->deals_board++;
            s->board_cards += (int)m->deal->cards.len;
            for (int i = 0; i < 9; i++)
                for (int k = 0; k < 2; k++)
                    if (hole[i][k] != 0 && has_card(&m->deal->cards, hole[i][k]))
                        snprintf(s->bad, sizeof s->bad, "the board holds seat %d's hole card", i);
        }
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
        s->turns++;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY:
        s->plays++;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END:
        s->round_ends++;
        snprintf(s->round, sizeof s->round, "%s", m->round_end->round_id);
        for (size_t k = 0; k < m->round_end->n_deltas; k++) {
            const Croupier__SeatDelta *d = m->round_end->deltas[k];
            if ((int)d->seat == folded && d->has_shown_cards && d->shown_cards.len > 0)
                snprintf(s->bad, sizeof s->bad, "RoundEnd showed the folded hand");
        }
        break;
    default:
        break;
    }
}

START_TEST(test_watch_holdem_spectators_see_the_public_view_and_no_hole_card)
{
    need_rig();
    gatec_t *p[3];
    int seat[3];
    uint64_t rid[3] = {10, 10, 10};
    uint8_t hole[9][2] = {{0}};
    for (int i = 0; i < 3; i++)
        wallet(HE_P0 + (uint64_t)i, 100000);
    p[0] = login_at(&E.ga, HE_P0);
    Croupier__ServerMessage *j =
        gatec_join(p[0], 2, CROUPIER__ENGINE__ENGINE_HOLDEM, "holdem", 10, 5000);
    ck_assert_msg(j != NULL && j->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED,
                  "P0's join: %d", j ? gatec_code(j) : -1);
    seat[0] = (int)j->joined->seat;
    uint64_t desk = j->joined->desk_id;
    frame_free_server(j);
    /* S1 on another gateway finds the table in the lobby; S2 follows P0. */
    gatec_t *s1 = login_at(&E.gb, SPECT), *s2 = login_at(&E.ga, SPECT + 1);
    char server[80] = "";
    for (long long end = ts_now_ms() + 5000; server[0] == '\0' && ts_now_ms() < end;) {
        Croupier__ServerMessage *l =
            gatec_list_tables(s1, 3, CROUPIER__ENGINE__ENGINE_HOLDEM, "holdem", 10, 3000);
        for (size_t k = 0; l != NULL && l->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_LIST &&
                           k < l->table_list->n_tables;
             k++)
            if (l->table_list->tables[k]->desk_id == desk)
                snprintf(server, sizeof server, "%s", l->table_list->tables[k]->server_id);
        frame_free_server(l);
        if (server[0] == '\0')
            ts_sleep_ms(100);
    }
    ck_assert_msg(server[0] != '\0', "the table was not advertised");
    ck_assert_uint_eq(watch_ok(s1, 4, server, desk, 0), desk);
    ck_assert_uint_eq(watch_ok(s2, 4, NULL, 0, HE_P0), desk);
    gatec_t *s3 = login_at(&E.gc, SPECT + 15); /* its gateway delays a spectator's replay 1 h */
    ck_assert_uint_eq(watch_ok(s3, 4, server, desk, 0), desk);
    for (int i = 1; i < 3; i++) {
        p[i] = login_at(&E.ga, HE_P0 + (uint64_t)i);
        j = gatec_join(p[i], 2, CROUPIER__ENGINE__ENGINE_HOLDEM, "holdem", 10, 5000);
        ck_assert_msg(j != NULL && j->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED &&
                          j->joined->desk_id == desk,
                      "player %d did not sit at the watched table", i);
        seat[i] = (int)j->joined->seat;
        frame_free_server(j);
    }
    /* The hand: P0 and P1 check or call to the end, P2 folds; the spectators read all along. */
    he_seen_t seen[2] = {{0}};
    Croupier__ServerMessage *kept[2][512];
    int nkept[2] = {0, 0};
    bool done[3] = {false, false, false};
    char round[160] = "";
    for (long long end = ts_now_ms() + 25000;
         ts_now_ms() < end && !(done[0] && done[1] && done[2]);) {
        for (int i = 0; i < 3; i++) {
            Croupier__ServerMessage *m = gatec_recv(p[i], 10);
            if (m == NULL || m->request_id != 0 || done[i]) {
                frame_free_server(m);
                continue;
            }
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && m->deal->has_seat &&
                (int)m->deal->seat == seat[i] && m->deal->cards.len == 2) {
                hole[seat[i]][0] = m->deal->cards.data[0];
                hole[seat[i]][1] = m->deal->cards.data[1];
            } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN &&
                       (int)m->turn->seat == seat[i] && m->turn->n_window_seats == 0) {
                bool owe = m->turn->has_to_call && m->turn->to_call > 0;
                act(p[i], rid[i]++,
                    i == 2 ? CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD
                    : owe  ? CROUPIER__HOLDEM_MOVE__HOLDEM_CALL
                           : CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK);
            } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
                done[i] = true;
                snprintf(round, sizeof round, "%s", m->round_end->round_id);
            }
            frame_free_server(m);
        }
        gatec_t *s[2] = {s1, s2};
        for (int k = 0; k < 2; k++) {
            Croupier__ServerMessage *m;
            while ((m = gatec_recv(s[k], 1)) != NULL) {
                if (nkept[k] < 512)
                    kept[k][nkept[k]++] = m; /* checked once every hole card is known */
                else
                    frame_free_server(m);
            }
        }
    }
    ck_assert_msg(done[0] && done[1] && done[2], "the hand did not end within 25 s");
    for (int i = 0; i < 3; i++) {
        Croupier__ServerMessage *l = gatec_leave(p[i], 900, 3000);
        frame_free_server(l);
    }
    gatec_t *s[2] = {s1, s2};
    for (int k = 0; k < 2; k++) {
        /* Whatever is still on its way up to the RoundEnd. */
        for (long long end = ts_now_ms() + 3000; seen[k].round_ends == 0 && ts_now_ms() < end;) {
            Croupier__ServerMessage *m = gatec_recv(s[k], 50);
            if (m != NULL && nkept[k] < 512)
                kept[k][nkept[k]++] = m;
            else
                frame_free_server(m);
            for (int x = 0; x < nkept[k]; x++)
                if (kept[k][x]->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END)
                    seen[k].round_ends = 1;
        }
        seen[k].round_ends = 0;
        for (int x = 0; x < nkept[k]; x++) {
            ck_assert_uint_eq(kept[k][x]->request_id, 0);
            he_check(&seen[k], kept[k][x], hole, seat[2]);
            /* The folded hand's cards in no card field of any message. */
            const Croupier__ServerMessage *m = kept[k][x];
            for (int c = 0; c < 2; c++) {
                uint8_t card = hole[seat[2]][c];
                if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL)
                    ck_assert(!has_card(&m->deal->cards, card));
                if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END)
                    for (size_t d = 0; d < m->round_end->n_deltas; d++)
                        ck_assert(!has_card(&m->round_end->deltas[d]->shown_cards, card));
            }
            frame_free_server(kept[k][x]);
        }
        ck_assert_msg(seen[k].bad[0] == '\0', "spectator %d: %s", k, seen[k].bad);
        ck_assert_msg(seen[k].deals_seat == 3, "spectator %d: %d seat deals", k,
                      seen[k].deals_seat);
        ck_assert_msg(seen[k].board_cards == 5, "spectator %d: %d board cards", k,
                      seen[k].board_cards);
        ck_assert_msg(seen[k].turns > 0 && seen[k].plays >= 3, "spectator %d: %d turns %d plays", k,
                      seen[k].turns, seen[k].plays);
        ck_assert_msg(seen[k].round_ends == 1 && strcmp(seen[k].round, round) == 0,
                      "spectator %d: round %s, the players' %s", k, seen[k].round, round);
    }
    ck_assert(hole[seat[2]][0] != 0 && hole[seat[0]][0] != 0);
    ck_assert_int_ge(testenv_metric(&E.gb, "gate_spectators"), 1);
    /* After the round: its replay, as the policy shows anyone (the folded hand hidden). */
    Croupier__ClientMessage gm = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__GetReplay gr = CROUPIER__GET_REPLAY__INIT;
    gr.round_id = round;
    gr.game = "holdem";
    gm.request_id = 40;
    gm.body_case = CROUPIER__CLIENT_MESSAGE__BODY_GET_REPLAY;
    gm.get_replay = &gr;
    Croupier__ServerMessage *rp = NULL;
    for (long long end = ts_now_ms() + 5000; ts_now_ms() < end; gm.request_id++) {
        rp = call(s1, &gm); /* the history is written as the round ends: it may lag a little */
        if (rp->body_case == CROUPIER__SERVER_MESSAGE__BODY_REPLAY ||
            gatec_code(rp) != CROUPIER__ERROR_CODE__NO_SUCH_ROUND)
            break;
        frame_free_server(rp);
        rp = NULL;
        ts_sleep_ms(100);
    }
    ck_assert_msg(rp != NULL && rp->body_case == CROUPIER__SERVER_MESSAGE__BODY_REPLAY,
                  "a spectator's replay: code %d", rp ? gatec_code(rp) : -1);
    ck_assert(!rp->replay->has_your_seat);
    for (size_t k = 0; k < rp->replay->n_seats; k++)
        if ((int)rp->replay->seats[k]->seat == seat[2])
            ck_assert(rp->replay->seats[k]->cards.len == 0);
    frame_free_server(rp);
    /* The delayed full view: not within --watch-replay-delay-s of the round's start. */
    gm.request_id = 70;
    rp = call(s3, &gm);
    ck_assert_msg(rp->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT &&
                      gatec_code(rp) == CROUPIER__ERROR_CODE__UNAVAILABLE &&
                      strstr(rp->result->error->message, "opens 3600 s") != NULL,
                  "the delayed spectator's replay: body %d code %d", rp->body_case, gatec_code(rp));
    frame_free_server(rp);
    gatec_close(s3);
    ck_assert_int_eq(unwatch(s1, 50), 0);
    gm.request_id = 60; /* no longer a spectator: by round id, refused */
    rp = call(s1, &gm);
    ck_assert_int_eq(gatec_code(rp), CROUPIER__ERROR_CODE__NOT_IN_ROUND);
    frame_free_server(rp);
    ck_assert_int_eq(testenv_metric(&E.gb, "gate_spectators"), 0);
    gatec_close(s1);
    gatec_close(s2);
    for (int i = 0; i < 3; i++)
        gatec_close(p[i]);
}
END_TEST

START_TEST(test_watch_doudizhu_spectator_sees_counts_never_a_hand)
{
    need_rig();
    wallet(DDZ_P, 100000);
    free(ts_redis_cmd(E.rig.redis, "SET {croupier:money}:wallet:house-traditional 100000000"));
    gatec_t *d = login_at(&E.ga, DDZ_P);
    Croupier__ServerMessage *j =
        gatec_join(d, 2, CROUPIER__ENGINE__ENGINE_TRADITIONAL, "doudizhu", 10, 5000);
    ck_assert_msg(j != NULL && j->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED, "join: %d",
                  j ? gatec_code(j) : -1);
    frame_free_server(j);
    gatec_t *s = login_at(&E.gb, SPECT + 2);
    Croupier__ServerMessage *a = watch(s, 2, NULL, 0, DDZ_P);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT, "Watch: code %d",
                  gatec_code(a));
    ck_assert(a->snapshot->spectator);
    if (a->snapshot->shedding != NULL)
        ck_assert(!a->snapshot->shedding->has_hand || a->snapshot->shedding->hand.len == 0);
    frame_free_server(a);
    /* Until a whole deal was seen from its Deals to its RoundEnd. The player reads too (trustee
     * plays for him): his hand, as dealt to him, is never in a spectator's Deal. The one Deal
     * with cards a spectator may see is the bottom's, to the landlord, which every seat sees. */
    int deals = 0, plays = 0, bottoms = 0;
    bool ended = false;
    uint8_t hand[64];
    size_t nhand = 0;
    Croupier__ServerMessage *kept[256];
    int nkept = 0;
    for (long long end = ts_now_ms() + 30000; !ended && ts_now_ms() < end;) {
        Croupier__ServerMessage *o = gatec_recv(d, 1);
        if (o != NULL && o->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL &&
            o->deal->cards.len > 3 && o->deal->cards.len <= sizeof hand) {
            memcpy(hand, o->deal->cards.data, o->deal->cards.len);
            nhand = o->deal->cards.len;
        }
        frame_free_server(o);
        Croupier__ServerMessage *m = gatec_recv(s, 20);
        if (m == NULL)
            continue;
        ck_assert_uint_eq(m->request_id, 0);
        if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && m->deal->has_seat) {
            if (m->deal->has_cards && m->deal->cards.len > 0) {
                ck_assert_msg(m->deal->cards.len == 3, "a spectator saw seat %u's hand",
                              m->deal->seat);
                bottoms++;
                if (nkept < 256) {
                    kept[nkept++] = m;
                    m = NULL;
                }
            } else {
                ck_assert(m->deal->has_count && m->deal->count > 0);
                deals++;
            }
        } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT) {
            ck_assert(m->snapshot->spectator);
            ck_assert(m->snapshot->shedding == NULL || !m->snapshot->shedding->has_hand);
        } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_PLAY) {
            plays++;
        } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
            ended = deals >= 3;
        }
        frame_free_server(m);
    }
    ck_assert_msg(ended, "no whole deal seen within 30 s: %d deals, %d plays", deals, plays);
    ck_assert_msg(nhand >= 17, "the player's hand was not seen");
    for (int k = 0; k < nkept; k++) {
        for (size_t c = 0; c < nhand; c++)
            ck_assert_msg(!has_card(&kept[k]->deal->cards, hand[c]),
                          "the bottom holds a card of the player's hand");
        frame_free_server(kept[k]);
    }
    frame_free_server(gatec_leave(d, 900, 3000));
    gatec_close(s);
    gatec_close(d);
}
END_TEST

/* Two test-engine players at one table (player, player + 1) on GA: a round runs at once (and
 * lasts the test). Returns the table's desk. */
static uint64_t test_table(gatec_t **p, gatec_t **q, uint64_t player, int64_t stake)
{
    wallet(player, 1000000);
    wallet(player + 1, 1000000);
    *p = login_at(&E.ga, player);
    *q = login_at(&E.ga, player + 1);
    Croupier__ServerMessage *j =
        gatec_join(*p, 2, CROUPIER__ENGINE__ENGINE_TRADITIONAL, "test", stake, 5000);
    ck_assert_msg(j != NULL && j->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED,
                  "P's join: %d", j ? gatec_code(j) : -1);
    uint64_t desk = j->joined->desk_id;
    frame_free_server(j);
    j = gatec_join(*q, 2, CROUPIER__ENGINE__ENGINE_TRADITIONAL, "test", stake, 5000);
    ck_assert_msg(j != NULL && j->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED &&
                      j->joined->desk_id == desk,
                  "Q did not sit at P's table");
    frame_free_server(j);
    /* The round begins after --test-gap-ms: P's first play accepted says it runs. */
    int code = -1;
    for (uint64_t rid = 3; code != 0 && rid < 200; rid++) {
        send_play(*p, rid, 1);
        Croupier__ServerMessage *a = gatec_wait_reply(*p, rid, 3000);
        code = a != NULL ? gatec_code(a) : -1;
        frame_free_server(a);
        if (code != 0)
            ts_sleep_ms(20);
    }
    ck_assert_msg(code == 0, "no round began at the test table");
    return desk;
}

static void leave_close(gatec_t *c)
{
    frame_free_server(gatec_leave(c, 990, 3000));
    gatec_close(c);
}

/* P's plays answered OK, within 5 s; n of them, ids from rid. */
static void plays_ok(gatec_t *p, uint64_t rid, int n, int cards)
{
    for (int i = 0; i < n; i++) {
        send_play(p, rid + (uint64_t)i, cards);
        if (i % 8 == 7 || i == n - 1)
            for (int k = i - i % 8; k <= i; k++) {
                Croupier__ServerMessage *a = gatec_wait_reply(p, rid + (uint64_t)k, 5000);
                ck_assert_msg(a != NULL && gatec_code(a) == 0, "play %d: %d", k,
                              a ? gatec_code(a) : -1);
                frame_free_server(a);
            }
    }
}

/* Plays read by spectator s within ms (others skipped). */
static int plays_seen(gatec_t *s, int want, int ms)
{
    int n = 0;
    for (long long end = ts_now_ms() + ms; n < want && ts_now_ms() < end;) {
        Croupier__ServerMessage *m = gatec_recv(s, 20);
        if (m != NULL && m->body_case == CROUPIER__SERVER_MESSAGE__BODY_PLAY)
            n++;
        frame_free_server(m);
    }
    return n;
}

START_TEST(test_watch_session_cannot_sit_act_or_leave)
{
    need_rig();
    gatec_t *p, *q;
    const uint64_t TP = TG_P;
    test_table(&p, &q, TP, 10);
    gatec_t *s = login_at(&E.gb, SPECT + 3);
    watch_ok(s, 2, NULL, 0, TP);
    const int W = CROUPIER__ERROR_CODE__WATCHING;
    Croupier__ServerMessage *a =
        gatec_join(s, 3, CROUPIER__ENGINE__ENGINE_TRADITIONAL, "test", 10, 3000);
    ck_assert_int_eq(gatec_code(a), W);
    frame_free_server(a);
    a = gatec_action(s, 4, 3000);
    ck_assert_int_eq(gatec_code(a), W);
    frame_free_server(a);
    a = gatec_leave(s, 5, 3000);
    ck_assert_int_eq(gatec_code(a), W);
    frame_free_server(a);
    a = gatec_resume(s, 6, 3000);
    ck_assert_int_eq(gatec_code(a), W);
    frame_free_server(a);
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__CreateRoom cr = CROUPIER__CREATE_ROOM__INIT;
    Croupier__RoomRules rr = CROUPIER__ROOM_RULES__INIT;
    rr.deals = 4;
    cr.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    cr.game = "test";
    cr.stake = 10;
    cr.rules = &rr;
    m.request_id = 7;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM;
    m.create_room = &cr;
    a = call(s, &m);
    ck_assert_int_eq(gatec_code(a), W);
    frame_free_server(a);
    /* Nothing changed: no seat record, and the table plays on before the spectator's eyes. */
    char *rec = ts_redis_cmd(E.rig.redis, "GET {croupier:seat}:%d", SPECT + 3);
    ck_assert_msg(rec == NULL || rec[0] == '\0' || strcmp(rec, "(nil)") == 0,
                  "the spectator has a seat record: %s", rec);
    free(rec);
    plays_ok(p, 100, 5, 3);
    ck_assert_int_eq(plays_seen(s, 5, 3000), 5);
    /* After Unwatch the connection is a player's again: an Action is NOT_SEATED. */
    ck_assert_int_eq(unwatch(s, 8), 0);
    a = gatec_action(s, 9, 3000);
    ck_assert_int_eq(gatec_code(a), CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_server(a);
    gatec_close(s);
    leave_close(p);
    leave_close(q);
}
END_TEST

START_TEST(test_watch_caps_per_table_and_per_gateway)
{
    need_rig();
    gatec_t *p, *q;
    const uint64_t TP = TG_P + 2;
    test_table(&p, &q, TP, 20);
    /* The table allows two (--test-spectators 2), on any gateways. */
    gatec_t *s1 = login_at(&E.ga, SPECT + 4), *s2 = login_at(&E.gb, SPECT + 5),
            *s3 = login_at(&E.gb, SPECT + 6);
    watch_ok(s1, 2, NULL, 0, TP);
    watch_ok(s2, 2, NULL, 0, TP + 1);
    expect_watch_code(s3, 2, NULL, 0, TP, CROUPIER__ERROR_CODE__WATCH_FULL);
    gatec_close(s1); /* a place again, once its gateway told the table */
    bool in = false;
    for (long long end = ts_now_ms() + 5000; !in && ts_now_ms() < end;) {
        ts_sleep_ms(100);
        Croupier__ServerMessage *a = watch(s3, 3, NULL, 0, TP);
        in = a->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
        frame_free_server(a);
    }
    ck_assert_msg(in, "no room for a spectator after one left");
    /* The gateway with --watch-max 1: its second spectator is refused, whatever the table. */
    gatec_t *c1 = login_at(&E.gc, SPECT + 7), *c2 = login_at(&E.gc, SPECT + 8);
    ck_assert_int_eq(unwatch(s2, 9), 0); /* the table has room: only the gateway's cap counts */
    watch_ok(c1, 2, NULL, 0, TP);
    expect_watch_code(c2, 2, NULL, 0, TP, CROUPIER__ERROR_CODE__WATCH_FULL);
    ck_assert_int_eq(unwatch(c1, 3), 0);
    watch_ok(c2, 3, NULL, 0, TP);
    gatec_close(c1);
    gatec_close(c2);
    gatec_close(s2);
    gatec_close(s3);
    leave_close(p);
    leave_close(q);
}
END_TEST

START_TEST(test_watch_slow_spectator_is_dropped_and_the_table_plays_on)
{
    need_rig();
    gatec_t *p, *q;
    const uint64_t TP = TG_P + 4;
    test_table(&p, &q, TP, 30);
    gatec_t *r = login_at(&E.gb, SPECT + 9);
    /* The slow one reads nothing and takes little: its socket's receive buffer is tiny from
     * before its connect (so is the window it offers), and it takes the place of the socket
     * gatec opened. */
    gatec_t *w = gatec_connect("127.0.0.1", E.gb.port, 2000);
    ck_assert_ptr_nonnull(w);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), small = 1;
    ck_assert_int_ge(fd, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)E.gb.port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_ge(dup2(fd, gatec_fd(w)), 0);
    close(fd);
    char tok[TOKEN_MAX_LEN + 1];
    ck_assert_int_gt(token_mint(&E.secret, SPECT + 10, time(NULL) + 600, tok, sizeof tok), 0);
    frame_free_server(gatec_login(w, 1, tok, 3000));
    watch_ok(r, 2, NULL, 0, TP);
    watch_ok(w, 2, NULL, 0, TP);
    long dropped0 = testenv_metric(&E.gb, "gate_spectators_dropped_total");
    /* 1200 plays of 100 cards: some 140 KB for each spectator, in bursts of 40 (5 KB). */
    int n = 1200;
    for (int i = 0; i < n; i += 40) {
        plays_ok(p, 1000 + (uint64_t)i, 40, 100);
        ck_assert_int_eq(plays_seen(r, 40, 5000), 40);
    }
    ck_assert_int_gt(testenv_metric(&E.gb, "gate_spectators_dropped_total"), dropped0);
    /* The slow one was told (GoAway) and closed. */
    ck_assert_int_eq(gatec_wait_eof(w, 5000), 0);
    bool told = false;
    Croupier__ServerMessage *m;
    while ((m = gatec_recv(w, 0)) != NULL) {
        told = told || (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY &&
                        m->go_away->reason == CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED);
        frame_free_server(m);
    }
    ck_assert(told);
    gatec_close(w);
    gatec_close(r);
    leave_close(p);
    leave_close(q);
}
END_TEST

START_TEST(test_watch_bad_input_is_refused_and_the_connection_kept)
{
    need_rig();
    gatec_t *c = gatec_connect("127.0.0.1", E.gb.port, 2000);
    ck_assert_ptr_nonnull(c);
    expect_watch_code(c, 2, NULL, 0, TG_P, CROUPIER__ERROR_CODE__UNAUTHENTICATED);
    gatec_close(c);
    c = login_at(&E.gb, SPECT + 11);
    const int BAD = CROUPIER__ERROR_CODE__BAD_REQUEST;
    expect_watch_code(c, 10, NULL, 0, 0, BAD);          /* neither */
    expect_watch_code(c, 11, "test:0", 5, TG_P, BAD);   /* both */
    expect_watch_code(c, 12, "test:0", 0, 0, BAD);      /* no desk */
    expect_watch_code(c, 13, "", 5, 0, BAD);            /* empty server */
    expect_watch_code(c, 14, NULL, 0, SPECT + 11, BAD); /* himself */
    expect_watch_code(c, 15, "nobody:7", 5, 0, CROUPIER__ERROR_CODE__NO_SUCH_TABLE);
    expect_watch_code(c, 16, NULL, 0, 424242, CROUPIER__ERROR_CODE__NOT_SEATED);
    /* A listed server without that desk. */
    char *list = ts_redis_cmd(E.rig.redis, "SMEMBERS {croupier:registry}:members");
    ck_assert_ptr_nonnull(list);
    char server[80] = "";
    const char *h = strstr(list, "holdem:");
    ck_assert_ptr_nonnull(h);
    size_t k = strcspn(h, " \n,\"");
    snprintf(server, sizeof server, "%.*s", (int)k, h);
    free(list);
    expect_watch_code(c, 17, server, 0x7fffffffffffULL, 0, CROUPIER__ERROR_CODE__NO_SUCH_TABLE);
    Croupier__ServerMessage *p = gatec_ping(c, 30, 77, 2000);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(p);
    ck_assert_int_eq(unwatch(c, 31), 0); /* nothing watched: OK */
    /* A seated player may not watch. */
    gatec_t *pp, *qq;
    test_table(&pp, &qq, TG_P + 6, 40);
    expect_watch_code(pp, 40, NULL, 0, TG_P + 7, CROUPIER__ERROR_CODE__ALREADY_SEATED);
    leave_close(pp);
    leave_close(qq);
    gatec_close(c);
}
END_TEST

/* A private room of the test engine created by host on GA, with no_spectators as given. */
static gatec_t *room_host(uint64_t host, bool no_spectators)
{
    wallet(host, 1000000);
    gatec_t *h = login_at(&E.ga, host);
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__CreateRoom cr = CROUPIER__CREATE_ROOM__INIT;
    Croupier__RoomRules rr = CROUPIER__ROOM_RULES__INIT;
    rr.deals = 2;
    rr.has_no_spectators = no_spectators;
    rr.no_spectators = no_spectators;
    cr.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    cr.game = "test";
    cr.stake = 10;
    cr.rules = &rr;
    m.request_id = 2;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM;
    m.create_room = &cr;
    Croupier__ServerMessage *a = call(h, &m);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED && a->joined->room != NULL,
                  "CreateRoom: body %d code %d", a->body_case, gatec_code(a));
    frame_free_server(a);
    return h;
}

START_TEST(test_watch_a_room_may_forbid_spectators)
{
    need_rig();
    const uint64_t H = TG_P + 10;
    gatec_t *closed = room_host(H, true), *open = room_host(H + 1, false);
    gatec_t *s = login_at(&E.gb, SPECT + 14);
    expect_watch_code(s, 2, NULL, 0, H, CROUPIER__ERROR_CODE__NOT_WATCHABLE);
    /* A room without the rule may be watched: by table here (its seat record names it). */
    char *rec = ts_redis_cmd(E.rig.redis, "GET {croupier:seat}:%" PRIu64, H + 1);
    char server[80] = "", address[80] = "";
    unsigned long long desk = 0;
    ck_assert_msg(rec != NULL && sscanf(rec, "%79s %79s %llu", server, address, &desk) == 3,
                  "the host's seat record: %s", rec);
    free(rec);
    watch_ok(s, 3, server, desk, 0);
    for (int i = 0; i < 2; i++) {
        gatec_t *h = i == 0 ? closed : open;
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        Croupier__Leave l = CROUPIER__LEAVE__INIT;
        l.has_disband_room = true;
        l.disband_room = true;
        m.request_id = 9;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LEAVE;
        m.leave = &l;
        frame_free_server(call(h, &m));
        gatec_close(h);
    }
    /* The open room disbanded: its spectator is told the table is gone. */
    bool ended = false;
    for (long long end = ts_now_ms() + 10000; !ended && ts_now_ms() < end;) {
        Croupier__ServerMessage *m = gatec_recv(s, 100);
        ended = m != NULL && m->body_case == CROUPIER__SERVER_MESSAGE__BODY_WATCH_ENDED;
        frame_free_server(m);
    }
    ck_assert_msg(ended, "no WatchEnded after the room was disbanded");
    gatec_close(s);
}
END_TEST

/* The next spectator Snapshot pushed to s (a follow's new table), within ms; its desk or 0. */
static uint64_t next_table(gatec_t *s, int ms)
{
    for (long long end = ts_now_ms() + ms; ts_now_ms() < end;) {
        Croupier__ServerMessage *m = gatec_recv(s, 50);
        if (m != NULL && m->request_id == 0 &&
            m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT && m->snapshot->spectator) {
            uint64_t d = m->snapshot->desk_id;
            frame_free_server(m);
            return d;
        }
        frame_free_server(m);
    }
    return 0;
}

START_TEST(test_watch_follows_a_player_through_a_table_move_and_a_drain)
{
    need_rig();
    /* P sits alone (no round: a test table deals to two), so he may leave at once. */
    const uint64_t TP = TG_P + 8;
    wallet(TP, 1000000);
    gatec_t *p = login_at(&E.ga, TP);
    Croupier__ServerMessage *j0 =
        gatec_join(p, 2, CROUPIER__ENGINE__ENGINE_TRADITIONAL, "test", 50, 5000);
    ck_assert_msg(j0 != NULL && j0->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED, "join");
    uint64_t d1 = j0->joined->desk_id;
    frame_free_server(j0);
    gatec_t *s = login_at(&E.gb, SPECT + 12);
    ck_assert_uint_eq(watch_ok(s, 2, NULL, 0, TP), d1);
    /* P changes tables: leaves, joins another stake. */
    frame_free_server(gatec_leave(p, 20, 3000));
    Croupier__ServerMessage *j =
        gatec_join(p, 21, CROUPIER__ENGINE__ENGINE_TRADITIONAL, "test", 60, 5000);
    ck_assert_msg(j != NULL && j->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED, "rejoin");
    uint64_t d2 = j->joined->desk_id;
    frame_free_server(j);
    ck_assert_uint_ne(d2, d1);
    ck_assert_uint_eq(next_table(s, 5000), d2);
    /* His server drains with another ready: his table moves, the spectator with it. */
    testenv_server_t other = {0};
    char *xargs[] = {"--test-round-ms", "600000", "--test-gap-ms", "20", NULL};
    ck_assert_int_eq(testenv_start_game(&E.rig, &other, "test", 5, xargs, NULL), 0);
    ts_sleep_ms(1500); /* the gateways list it */
    char *before = ts_redis_cmd(E.rig.redis, "GET {croupier:seat}:%" PRIu64, TP);
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", E.test.health, "/drain", 3000, &body), 200);
    free(body);
    uint64_t d3 = next_table(s, 15000);
    char *after = ts_redis_cmd(E.rig.redis, "GET {croupier:seat}:%" PRIu64, TP);
    ck_assert_msg(d3 != 0, "no new table after the drain (seat %s -> %s)", before, after);
    ck_assert_msg(after != NULL && before != NULL && strcmp(before, after) != 0,
                  "the seat did not move: %s", after);
    /* A spectator of that table by id; its server is killed: his watch ends. */
    char server[80] = "";
    sscanf(after, "%79s", server);
    gatec_t *t = login_at(&E.gb, SPECT + 13);
    ck_assert_uint_eq(watch_ok(t, 2, server, d3, 0), d3);
    ck_assert_int_eq(ts_proc_signal(other.proc, SIGKILL), 0);
    bool ended = false;
    for (long long end = ts_now_ms() + 10000; !ended && ts_now_ms() < end;) {
        Croupier__ServerMessage *m = gatec_recv(t, 100);
        ended = m != NULL && m->body_case == CROUPIER__SERVER_MESSAGE__BODY_WATCH_ENDED &&
                m->watch_ended->code == CROUPIER__ERROR_CODE__NO_SUCH_TABLE;
        frame_free_server(m);
    }
    ck_assert_msg(ended, "no WatchEnded after the table's server was killed");
    gatec_close(t);
    free(before);
    free(after);
    leave_close(p);
    gatec_close(s);
    testenv_stop_server(&other);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_watch");
    TCase *tc = tcase_create("watch");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_watch_holdem_spectators_see_the_public_view_and_no_hole_card);
    tcase_add_test(tc, test_watch_doudizhu_spectator_sees_counts_never_a_hand);
    tcase_add_test(tc, test_watch_session_cannot_sit_act_or_leave);
    tcase_add_test(tc, test_watch_caps_per_table_and_per_gateway);
    tcase_add_test(tc, test_watch_slow_spectator_is_dropped_and_the_table_plays_on);
    tcase_add_test(tc, test_watch_bad_input_is_refused_and_the_connection_kept);
    tcase_add_test(tc, test_watch_a_room_may_forbid_spectators);
    /* Last: it drains the test engine's server. */
    tcase_add_test(tc, test_watch_follows_a_player_through_a_table_move_and_a_drain);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
