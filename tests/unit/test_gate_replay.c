/*
 * Replays through the gateway (docs/replays.md, docs/protocol.md "Replays", docs/gateway.md
 * "Replays"): a real redis-server, croupier-game --engine holdem, croupier-game --engine
 * traditional (Dou Dizhu with server bots) and two croupier-gate (one with a share code TTL of
 * 1 s) on loopback, the players driven through the client protocol by gatec.
 *
 * Once, before the tests (an unchecked fixture): three players play a hold'em hand (one folds,
 * two go to the showdown) and one player a Dou Dizhu deal with two server bots (his turns played
 * by trustee). Then:
 *   - a player of the hand sees his own cards, the board between the actions, and exactly the
 *     hands the table showed (RoundEnd's shown cards), never the folded one;
 *   - a stranger is refused NOT_IN_ROUND by round id (and cannot share it), and with a share code
 *     sees only what the policy shows: no hole card but the shown ones;
 *   - Dou Dizhu: every hand and the bottom cards, and the deck, to anyone with the code;
 *   - a code expires (the short gateway's 1 s): REPLAY_CODE_UNKNOWN;
 *   - bad input: both or neither of round and code, malformed ids, codes and games, an unknown
 *     code or round, before login; the connection stays usable.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "deck.h"
#include "gatec.h"
#include "support.h"
#include "testenv.h"
#include "replay.h"
#include "token.h"

#define SECRET "gate-replay-secret-0123456789abc"
#define HOLDEM_P0 7100001 /* three players of the hand: P0, P0+1, P0+2 (folds) */
#define DDZ_P 7100010
#define STRANGER 7100099

typedef struct {
    testenv_t rig;
    token_secret_t secret;
    testenv_server_t holdem, trad, gate, gate_short;
    /* what the hand and the deal left */
    bool he_ok, ddz_ok;
    char why[256], ddz_why[256];
    char he_round[160], ddz_round[160];
    int he_seat[3];   /* seats of P0.. */
    bool he_shown[9]; /* seats whose cards RoundEnd showed */
    int ddz_seat;
    uint8_t ddz_commit[DECK_COMMIT_LEN]; /* what the Dou Dizhu round's Deals carried */
    bool ddz_has_commit;
    /* The hold'em hand's commitment (its Deals, per card: deck_scheme 2) and the cards each
     * player was dealt face up: his two hole cards first, then the board. */
    uint8_t he_commit[DECK_COMMIT_LEN];
    int he_commit_deals, he_scheme_deals;
    uint8_t he_seen[3][7];
    size_t he_nseen[3];
} env_t;

static env_t E;

static gatec_t *login_at(int port, uint64_t player)
{
    gatec_t *c = gatec_connect("127.0.0.1", port, 2000);
    if (c == NULL)
        return NULL;
    char tok[TOKEN_MAX_LEN + 1];
    if (token_mint(&E.secret, player, time(NULL) + 600, tok, sizeof tok) <= 0)
        return NULL;
    Croupier__ServerMessage *m = gatec_login(c, 1, tok, 3000);
    bool ok = m != NULL && m->body_case == CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT;
    frame_free_server(m);
    if (!ok) {
        gatec_close(c);
        return NULL;
    }
    return c;
}

static gatec_t *login(uint64_t player)
{
    gatec_t *c = login_at(E.gate.port, player);
    ck_assert_ptr_nonnull(c);
    return c;
}

static void holdem_act(gatec_t *c, uint64_t rid, Croupier__HoldemMove move)
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
    gatec_send(c, &m);
}

static void wallet(uint64_t player, long chips)
{
    free(ts_redis_cmd(E.rig.redis, "SET {croupier:money}:wallet:%" PRIu64 " %ld", player, chips));
}

/* The hold'em hand: P0 and P0+1 check or call to the end, P0+2 folds at his first turn. */
static bool play_holdem(void)
{
    gatec_t *c[3] = {NULL};
    bool done[3] = {false}, ok = false;
    uint64_t rid[3] = {10, 10, 10};
    for (int i = 0; i < 3; i++) {
        wallet(HOLDEM_P0 + (uint64_t)i, 100000);
        c[i] = login_at(E.gate.port, HOLDEM_P0 + (uint64_t)i);
        if (c[i] == NULL) {
            snprintf(E.why, sizeof E.why, "hold'em player %d: no login", i);
            goto out;
        }
        Croupier__ServerMessage *j =
            gatec_join(c[i], 2, CROUPIER__ENGINE__ENGINE_HOLDEM, "holdem", 10, 5000);
        if (j == NULL || j->body_case != CROUPIER__SERVER_MESSAGE__BODY_JOINED) {
            snprintf(E.why, sizeof E.why, "hold'em player %d: join answered %d (%d)", i,
                     j ? (int)j->body_case : -1, j ? gatec_code(j) : -1);
            frame_free_server(j);
            goto out;
        }
        E.he_seat[i] = (int)j->joined->seat;
        frame_free_server(j);
    }
    long long end = ts_now_ms() + 20000;
    while (ts_now_ms() < end && !(done[0] && done[1] && done[2])) {
        for (int i = 0; i < 3; i++) {
            Croupier__ServerMessage *m = gatec_recv(c[i], 20);
            if (m == NULL || m->request_id != 0 || done[i]) {
                frame_free_server(m);
                continue;
            }
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL &&
                m->deal->has_deck_commitment && m->deal->deck_commitment.len == DECK_COMMIT_LEN) {
                if (E.he_commit_deals++ == 0)
                    memcpy(E.he_commit, m->deal->deck_commitment.data, DECK_COMMIT_LEN);
                else if (memcmp(E.he_commit, m->deal->deck_commitment.data, DECK_COMMIT_LEN) != 0)
                    E.he_commit_deals = -1000; /* another commitment within the hand */
                E.he_scheme_deals += m->deal->has_deck_scheme && m->deal->deck_scheme == 2;
                for (size_t k = 0; m->deal->has_cards && k < m->deal->cards.len; k++)
                    if (E.he_nseen[i] < 7)
                        E.he_seen[i][E.he_nseen[i]++] = m->deal->cards.data[k];
            }
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN &&
                (int)m->turn->seat == E.he_seat[i] && m->turn->n_window_seats == 0) {
                bool owe = m->turn->has_to_call && m->turn->to_call > 0;
                holdem_act(c[i], rid[i]++,
                           i == 2 ? CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD
                           : owe  ? CROUPIER__HOLDEM_MOVE__HOLDEM_CALL
                                  : CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK);
            } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
                done[i] = true;
                if (i == 0) {
                    snprintf(E.he_round, sizeof E.he_round, "%s", m->round_end->round_id);
                    for (size_t k = 0; k < m->round_end->n_deltas; k++) {
                        const Croupier__SeatDelta *d = m->round_end->deltas[k];
                        if (d->seat < 9)
                            E.he_shown[d->seat] = d->has_shown_cards && d->shown_cards.len > 0;
                    }
                }
                /* Out after this hand. */
                Croupier__ServerMessage *l = gatec_leave(c[i], 900 + (uint64_t)i, 3000);
                frame_free_server(l);
            }
            frame_free_server(m);
        }
    }
    ok = done[0] && done[1] && done[2] && E.he_round[0] != '\0';
    if (!ok)
        snprintf(E.why, sizeof E.why, "the hold'em hand did not end within 20 s");
out:
    for (int i = 0; i < 3; i++)
        gatec_close(c[i]);
    return ok;
}

/* The Dou Dizhu deal: one player, two server bots, his turns played by trustee. */
static bool play_ddz(void)
{
    wallet(DDZ_P, 100000);
    free(ts_redis_cmd(E.rig.redis, "SET {croupier:money}:wallet:house-traditional 100000000"));
    gatec_t *c = login_at(E.gate.port, DDZ_P);
    if (c == NULL) {
        snprintf(E.ddz_why, sizeof E.ddz_why, "Dou Dizhu player: no login");
        return false;
    }
    bool ok = false;
    Croupier__ServerMessage *j =
        gatec_join(c, 2, CROUPIER__ENGINE__ENGINE_TRADITIONAL, "doudizhu", 10, 5000);
    if (j == NULL || j->body_case != CROUPIER__SERVER_MESSAGE__BODY_JOINED) {
        snprintf(E.ddz_why, sizeof E.ddz_why, "Dou Dizhu: join answered %d (%d)",
                 j ? (int)j->body_case : -1, j ? gatec_code(j) : -1);
        frame_free_server(j);
        goto out;
    }
    E.ddz_seat = (int)j->joined->seat;
    frame_free_server(j);
    /* The round's Deals carry its deck commitment (docs/fairness.md): the player keeps it. A
     * deal nobody bid for is thrown in (a completed round too); either is replayed. */
    char deal_round[160] = "";
    Croupier__ServerMessage *m = gatec_next_event(c, 0, 30000);
    while (m != NULL && m->body_case != CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
        if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && m->deal->has_deck_commitment &&
            m->deal->deck_commitment.len == DECK_COMMIT_LEN && m->deal->round_id != NULL) {
            memcpy(E.ddz_commit, m->deal->deck_commitment.data, DECK_COMMIT_LEN);
            snprintf(deal_round, sizeof deal_round, "%s", m->deal->round_id);
        }
        frame_free_server(m);
        m = gatec_next_event(c, 0, 30000);
    }
    if (m == NULL) {
        snprintf(E.ddz_why, sizeof E.ddz_why, "the Dou Dizhu deal did not end within 30 s");
        goto out;
    }
    snprintf(E.ddz_round, sizeof E.ddz_round, "%s", m->round_end->round_id);
    E.ddz_has_commit = strcmp(deal_round, E.ddz_round) == 0;
    frame_free_server(m);
    frame_free_server(gatec_leave(c, 900, 3000));
    ok = true;
out:
    gatec_close(c);
    return ok;
}

/* The rig and the rounds, once (the processes outlive the forked tests). */
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
                     "200",
                     NULL};
    char *gargs[] = {"--drain-window-ms", "100", "--close-timeout-ms", "2000", NULL};
    char *sargs[] = {
        "--drain-window-ms", "100", "--close-timeout-ms", "2000", "--replay-code-ttl-s", "1", NULL};
    if (testenv_start_game(&E.rig, &E.holdem, "holdem", 5, hargs, NULL) != 0 ||
        testenv_start_game(&E.rig, &E.trad, "traditional", 5, targs, NULL) != 0 ||
        testenv_start_gate(&E.rig, &E.gate, "replay-gate", gargs) != 0 ||
        testenv_start_gate(&E.rig, &E.gate_short, "replay-gate-short", sargs) != 0) {
        snprintf(E.why, sizeof E.why, "a server did not start");
        return;
    }
    ts_sleep_ms(300); /* the gateways' registry views list both servers */
    E.he_ok = play_holdem();
    E.ddz_ok = play_ddz();
}

static void teardown_once(void)
{
    testenv_stop_server(&E.gate_short);
    testenv_stop_server(&E.gate);
    testenv_stop_server(&E.trad);
    testenv_stop_server(&E.holdem);
    testenv_stop(&E.rig);
}

static void need_rounds(void)
{
    ck_assert_msg(E.he_ok, "the hold'em hand was not played: %s", E.why);
}

/* GetReplay (round_id + game, or code) or ShareReplay; the answer (free it). */
static Croupier__ServerMessage *ask(gatec_t *c, uint64_t rid, bool share, const char *round,
                                    const char *game, const char *code)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__GetReplay g = CROUPIER__GET_REPLAY__INIT;
    Croupier__ShareReplay s = CROUPIER__SHARE_REPLAY__INIT;
    m.request_id = rid;
    if (share) {
        s.round_id = (char *)round;
        s.game = (char *)game;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_SHARE_REPLAY;
        m.share_replay = &s;
    } else {
        g.round_id = (char *)round;
        g.game = (char *)game;
        g.code = (char *)code;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_GET_REPLAY;
        m.get_replay = &g;
    }
    ck_assert_int_eq(gatec_send(c, &m), 0);
    Croupier__ServerMessage *a = gatec_wait_reply(c, rid, 5000);
    ck_assert_msg(a != NULL, "no answer to request %" PRIu64, rid);
    return a;
}

static void expect_code(gatec_t *c, uint64_t rid, bool share, const char *round, const char *game,
                        const char *code, int want)
{
    Croupier__ServerMessage *a = ask(c, rid, share, round, game, code);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT && gatec_code(a) == want,
                  "request %" PRIu64 ": body %d code %d (%s), wanted %d", rid, a->body_case,
                  gatec_code(a), a->result && a->result->error ? a->result->error->message : "",
                  want);
    frame_free_server(a);
}

static Croupier__ServerMessage *replay_of(gatec_t *c, uint64_t rid, const char *round,
                                          const char *game, const char *code)
{
    Croupier__ServerMessage *a = ask(c, rid, false, round, game, code);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_REPLAY,
                  "request %" PRIu64 ": body %d code %d (%s)", rid, a->body_case, gatec_code(a),
                  a->result && a->result->error ? a->result->error->message : "");
    return a;
}

static char *share(gatec_t *c, uint64_t rid, const char *round, const char *game)
{
    Croupier__ServerMessage *a = ask(c, rid, true, round, game, NULL);
    ck_assert_msg(a->body_case == CROUPIER__SERVER_MESSAGE__BODY_REPLAY_SHARED,
                  "share: body %d code %d", a->body_case, gatec_code(a));
    ck_assert_str_eq(a->replay_shared->round_id, round);
    ck_assert_int_eq((int)strlen(a->replay_shared->code), 8);
    ck_assert(a->replay_shared->has_expires_unix_ms);
    char *code = strdup(a->replay_shared->code);
    frame_free_server(a);
    return code;
}

static const Croupier__ReplaySeat *seat_of(const Croupier__Replay *r, int seat)
{
    for (size_t i = 0; i < r->n_seats; i++)
        if ((int)r->seats[i]->seat == seat)
            return r->seats[i];
    ck_abort_msg("seat %d not in the replay", seat);
    return NULL;
}

/* The policy's hold'em view for a viewer at seat me (-1: none). */
static void check_holdem_view(const Croupier__Replay *r, int me)
{
    ck_assert_str_eq(r->round_id, E.he_round);
    ck_assert_str_eq(r->policy, "showdown");
    ck_assert_ptr_null(r->deck); /* hold'em's deck is never shown: folded and unseen cards */
    ck_assert(r->has_deck_commitment);
    ck_assert_uint_eq(r->deck_commitment.len, 32);
    ck_assert_uint_eq(r->n_seats, 3);
    for (int i = 0; i < 3; i++) {
        const Croupier__ReplaySeat *s = seat_of(r, E.he_seat[i]);
        ck_assert_uint_eq(s->player_id, HOLDEM_P0 + (uint64_t)i);
        bool visible = E.he_seat[i] == me || E.he_shown[E.he_seat[i]];
        ck_assert_msg(s->has_cards == visible, "seat %d: cards %s, wanted %s", E.he_seat[i],
                      s->has_cards ? "shown" : "hidden", visible ? "shown" : "hidden");
        if (visible)
            ck_assert_uint_eq(s->cards.len, 2);
        else
            ck_assert_uint_eq(s->hidden, 2);
    }
    /* The folder never showed. */
    ck_assert(!E.he_shown[E.he_seat[2]]);
    /* The PHH file: the hand, the cards the viewer may not see as ????, one pair per hidden
     * seat. */
    ck_assert_ptr_nonnull(r->phh);
    ck_assert_ptr_nonnull(strstr(r->phh, "variant = 'NT'"));
    ck_assert_ptr_nonnull(strstr(r->phh, E.he_round));
    int hidden = 0, masks = 0;
    for (int i = 0; i < 3; i++)
        hidden += !(E.he_seat[i] == me || E.he_shown[E.he_seat[i]]);
    for (const char *q = r->phh; (q = strstr(q, "????")) != NULL; q += 4)
        masks++;
    ck_assert_int_eq(masks, hidden);
    /* Events: no hidden card face up; the flop, turn and river each come after some action and
     * in that order; the shown hands at the end. */
    int boards = 0, actions_before_flop = 0, shows = 0;
    for (size_t i = 0; i < r->n_events; i++) {
        const Croupier__ReplayEvent *e = r->events[i];
        if (e->kind == CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL && !e->has_seat) {
            ck_assert_uint_eq(e->cards.len, boards == 0 ? 3 : 1);
            boards++;
        } else if (e->kind == CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL) {
            bool mine = (int)e->seat == me;
            ck_assert_msg(e->has_cards == mine, "a deal to seat %u face %s", e->seat,
                          e->has_cards ? "up" : "down");
        } else if (e->kind == CROUPIER__REPLAY_EVENT_KIND__REPLAY_ACTION && boards == 0) {
            actions_before_flop++;
        } else if (e->kind == CROUPIER__REPLAY_EVENT_KIND__REPLAY_SHOW) {
            ck_assert(E.he_shown[e->seat]);
            shows++;
        }
    }
    ck_assert_int_eq(boards, 3);
    ck_assert_int_ge(actions_before_flop, 4); /* blinds, then the preflop moves */
    int want = 0;
    for (int i = 0; i < 3; i++)
        want += E.he_shown[E.he_seat[i]] && E.he_seat[i] != me;
    ck_assert_int_eq(shows, want);

    /* The per-card commitment (docs/fairness.md "The per-card commitment"): every Deal carried
     * one commitment under scheme 2; the replay's leaves give it, each opening matches its
     * leaf at the position hold'em's dealing rule gives the card shown, and nothing else is
     * opened (replay_check_cards(), what the SDK's verifyDealCards() does). */
    ck_assert_int_gt(E.he_commit_deals, 0);
    ck_assert_int_eq(E.he_scheme_deals, E.he_commit_deals);
    ck_assert(r->has_deck_scheme && r->deck_scheme == 2);
    ck_assert_uint_eq(r->deck_leaves.len, 52 * DECK_LEAF_LEN);
    char err[300] = "";
    ck_assert_msg(replay_check_cards(r, E.he_commit, err, sizeof err) == 0, "%s", err);
    /* A player's replay opens every card he was dealt face up (his hole cards, the board). */
    for (int i = 0; i < 3; i++) {
        if (E.he_seat[i] != me)
            continue;
        ck_assert_uint_ge(E.he_nseen[i], 2);
        for (size_t k = 0; k < E.he_nseen[i]; k++) {
            size_t o;
            for (o = 0; o < r->n_openings && r->openings[o]->card != E.he_seen[i][k]; o++)
                ;
            ck_assert_msg(o < r->n_openings, "card %zu the player saw is not opened", k);
        }
    }
    /* The folder's hole cards are opened to nobody but himself, nor anywhere else. */
    if (me != E.he_seat[2])
        for (size_t k = 0; k < 2; k++) {
            uint8_t folded = E.he_seen[2][k];
            for (size_t o = 0; o < r->n_openings; o++)
                ck_assert_uint_ne(r->openings[o]->card, folded);
            for (size_t i = 0; i < r->n_events; i++)
                ck_assert(r->events[i]->cards.len == 0 || memchr(r->events[i]->cards.data, folded,
                                                                 r->events[i]->cards.len) == NULL);
            for (size_t i = 0; i < r->n_seats; i++)
                ck_assert(r->seats[i]->cards.len == 0 ||
                          memchr(r->seats[i]->cards.data, folded, r->seats[i]->cards.len) == NULL);
        }
}

START_TEST(test_replay_player_sees_own_cards_board_in_order_and_the_showdown)
{
    need_rounds();
    for (int i = 0; i < 3; i++) {
        gatec_t *c = login(HOLDEM_P0 + (uint64_t)i);
        Croupier__ServerMessage *a = replay_of(c, 5, E.he_round, i == 1 ? NULL : "holdem", NULL);
        ck_assert(a->replay->has_your_seat);
        ck_assert_int_eq((int)a->replay->your_seat, E.he_seat[i]);
        check_holdem_view(a->replay, E.he_seat[i]);
        frame_free_server(a);
        gatec_close(c);
    }
}
END_TEST

START_TEST(test_replay_stranger_is_refused_without_a_code_and_sees_the_policy_with_one)
{
    need_rounds();
    gatec_t *s = login(STRANGER);
    expect_code(s, 5, false, E.he_round, "holdem", NULL, CROUPIER__ERROR_CODE__NOT_IN_ROUND);
    expect_code(s, 6, true, E.he_round, "holdem", NULL, CROUPIER__ERROR_CODE__NOT_IN_ROUND);
    gatec_t *folder = login(HOLDEM_P0 + 2);
    char *code = share(folder, 5, E.he_round, "holdem");
    /* Asked again: the same code (one per player and round while it lives). */
    char *again = share(folder, 6, E.he_round, "holdem");
    ck_assert_str_eq(again, code);
    free(again);
    gatec_close(folder);
    Croupier__ServerMessage *a = replay_of(s, 7, NULL, NULL, code);
    ck_assert(!a->replay->has_your_seat);
    check_holdem_view(a->replay, -1);
    frame_free_server(a);
    /* The folder's own code read by himself: his own cards too. */
    folder = login(HOLDEM_P0 + 2);
    a = replay_of(folder, 8, NULL, NULL, code);
    check_holdem_view(a->replay, E.he_seat[2]);
    frame_free_server(a);
    gatec_close(folder);
    gatec_close(s);
    free(code);
}
END_TEST

START_TEST(test_replay_doudizhu_shows_every_hand_and_the_deck)
{
    ck_assert_msg(E.ddz_ok, "the Dou Dizhu deal was not played: %s", E.ddz_why);
    gatec_t *p = login(DDZ_P);
    Croupier__ServerMessage *a = replay_of(p, 5, E.ddz_round, "doudizhu", NULL);
    ck_assert_int_eq((int)a->replay->your_seat, E.ddz_seat);
    frame_free_server(a);
    /* Without its game: the gateway tries the games of the round's service (the traditional
     * engine serves several) until one holds it. */
    a = replay_of(p, 7, E.ddz_round, NULL, NULL);
    ck_assert_str_eq(a->replay->game, "doudizhu");
    ck_assert_int_eq((int)a->replay->your_seat, E.ddz_seat);
    frame_free_server(a);
    char *code = share(p, 6, E.ddz_round, "doudizhu");
    gatec_close(p);
    gatec_t *s = login(STRANGER);
    expect_code(s, 5, false, E.ddz_round, "doudizhu", NULL, CROUPIER__ERROR_CODE__NOT_IN_ROUND);
    a = replay_of(s, 6, NULL, NULL, code);
    const Croupier__Replay *r = a->replay;
    ck_assert_str_eq(r->policy, "all");
    ck_assert_str_eq(r->game, "doudizhu");
    ck_assert_uint_eq(r->n_seats, 3);
    size_t dealt = 0;
    for (size_t i = 0; i < r->n_seats; i++) {
        ck_assert(r->seats[i]->has_cards);
        ck_assert_uint_eq(r->seats[i]->cards.len, 17);
        dealt += r->seats[i]->cards.len;
    }
    bool bottom = false;
    for (size_t i = 0; i < r->n_events; i++)
        if (r->events[i]->kind == CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL &&
            !r->events[i]->has_seat) {
            ck_assert_uint_eq(r->events[i]->cards.len, 3);
            bottom = true;
        }
    ck_assert(bottom);
    ck_assert_uint_eq(dealt + 3, 54);
    ck_assert_ptr_nonnull(r->deck);
    ck_assert_uint_eq(strlen(r->deck), 2 * 54);
    ck_assert_ptr_nonnull(r->deck_nonce);
    /* The player's check from what he received (docs/fairness.md "Who can open it"): the
     * replay's deck and nonce open the commitment the round's Deals carried. */
    ck_assert_msg(E.ddz_has_commit, "no Deal of round %s carried a deck commitment", E.ddz_round);
    ck_assert(r->has_deck_commitment && r->deck_commitment.len == DECK_COMMIT_LEN);
    ck_assert(memcmp(r->deck_commitment.data, E.ddz_commit, DECK_COMMIT_LEN) == 0);
    uint8_t deck[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN], got[DECK_COMMIT_LEN];
    int n = deck_unhex(r->deck, deck, sizeof deck);
    ck_assert_int_eq(n, 54);
    ck_assert_int_eq(deck_unhex(r->deck_nonce, nonce, sizeof nonce), DECK_NONCE_LEN);
    deck_commitment(deck, (size_t)n, nonce, got);
    ck_assert(memcmp(got, E.ddz_commit, DECK_COMMIT_LEN) == 0);
    frame_free_server(a);
    gatec_close(s);
    free(code);
}
END_TEST

/*
 * A duplicate deal (docs/replays.md "Share codes"): the Dou Dizhu record again under another round
 * id, as a match hall's duplicate deal of match 77 (its match object with a seed). While the
 * match runs (another table may still play the deal) ShareReplay is refused UNAVAILABLE and no
 * code is made; once the match is over it is shared.
 */
START_TEST(test_replay_duplicate_deal_is_shared_only_once_its_match_is_over)
{
    ck_assert_msg(E.ddz_ok, "the Dou Dizhu deal was not played: %s", E.ddz_why);
    redisContext *R = redisConnect("127.0.0.1", ts_redis_port(E.rig.redis));
    ck_assert(R != NULL && R->err == 0);
    redisReply *id = redisCommand(R, "GET {croupier:history:doudizhu}:seen:%s", E.ddz_round);
    ck_assert(id != NULL && id->type == REDIS_REPLY_STRING);
    redisReply *e =
        redisCommand(R, "XRANGE {croupier:history:doudizhu}:stream %s %s", id->str, id->str);
    ck_assert(e != NULL && e->type == REDIS_REPLY_ARRAY && e->elements == 1);
    const redisReply *f = e->element[0]->element[1];
    json_t *rec = NULL;
    for (size_t k = 0; k + 1 < f->elements; k += 2)
        if (strcmp(f->element[k]->str, "data") == 0)
            rec = json_loads(f->element[k + 1]->str, 0, NULL);
    ck_assert_ptr_nonnull(rec);
    freeReplyObject(e);
    freeReplyObject(id);
    char round[200];
    snprintf(round, sizeof round, "%s", E.ddz_round);
    char *last = strrchr(round, ':');
    ck_assert_ptr_nonnull(last);
    snprintf(last + 1, sizeof round - (size_t)(last + 1 - round), "%s", "999999");
    json_object_set_new(rec, "round", json_string(round));
    json_object_set_new(
        rec, "match",
        json_pack("{s:i,s:i,s:i,s:s}", "id", 77, "round", 1, "deal", 1, "seed", "12345"));
    char *data = json_dumps(rec, JSON_COMPACT);
    json_decref(rec);
    redisReply *x = redisCommand(R, "XADD {croupier:history:doudizhu}:stream * data %s", data);
    ck_assert(x != NULL && x->type == REDIS_REPLY_STRING);
    freeReplyObject(redisCommand(R, "SET {croupier:history:doudizhu}:seen:%s %s", round, x->str));
    freeReplyObject(x);
    free(data);
    freeReplyObject(redisCommand(R, "HSET {croupier:tour:77}:meta status running"));

    gatec_t *p = login(DDZ_P);
    expect_code(p, 11, true, round, "doudizhu", NULL, CROUPIER__ERROR_CODE__UNAVAILABLE);
    freeReplyObject(redisCommand(R, "HSET {croupier:tour:77}:meta status finished"));
    char *code = share(p, 12, round, "doudizhu");
    ck_assert_uint_eq(strlen(code), 8);
    /* A plain deal's share is not held back. */
    char *plain = share(p, 13, E.ddz_round, "doudizhu");
    ck_assert_uint_eq(strlen(plain), 8);
    free(plain);
    free(code);
    gatec_close(p);
    redisFree(R);
}
END_TEST

START_TEST(test_replay_code_expires)
{
    need_rounds();
    gatec_t *p = login_at(E.gate_short.port, HOLDEM_P0);
    ck_assert_ptr_nonnull(p);
    char *code = share(p, 5, E.he_round, "holdem");
    gatec_t *s = login_at(E.gate_short.port, STRANGER);
    ck_assert_ptr_nonnull(s);
    frame_free_server(replay_of(s, 5, NULL, NULL, code));
    ts_sleep_ms(2100); /* the 1 s TTL of the short gateway's codes */
    expect_code(s, 6, false, NULL, NULL, code, CROUPIER__ERROR_CODE__REPLAY_CODE_UNKNOWN);
    /* Another gateway reads the same store: gone there too. */
    gatec_t *o = login(STRANGER);
    expect_code(o, 5, false, NULL, NULL, code, CROUPIER__ERROR_CODE__REPLAY_CODE_UNKNOWN);
    gatec_close(o);
    gatec_close(s);
    gatec_close(p);
    free(code);
}
END_TEST

START_TEST(test_replay_bad_input_is_refused_and_the_connection_kept)
{
    need_rounds();
    gatec_t *c = gatec_connect("127.0.0.1", E.gate.port, 2000);
    ck_assert_ptr_nonnull(c);
    expect_code(c, 2, false, E.he_round, "holdem", NULL, CROUPIER__ERROR_CODE__UNAUTHENTICATED);
    gatec_close(c);
    c = login(HOLDEM_P0);
    const int BAD = CROUPIER__ERROR_CODE__BAD_REQUEST;
    expect_code(c, 10, false, NULL, NULL, NULL, BAD);                     /* neither */
    expect_code(c, 11, false, E.he_round, "holdem", "123456", BAD);       /* both */
    expect_code(c, 12, false, "not-a-round", "holdem", NULL, BAD);        /* malformed id */
    expect_code(c, 13, false, "holdem:1:1:1:1:1:1", "holdem", NULL, BAD); /* too many fields */
    expect_code(c, 14, false, "nosuch:1:1:1:1", NULL, NULL, BAD); /* no game, no such service */
    expect_code(c, 15, false, E.he_round, "Hold Em", NULL, BAD);          /* bad game */
    expect_code(c, 16, false, NULL, NULL, "12ab5678", BAD);               /* code not digits */
    expect_code(c, 17, false, NULL, NULL, "123456789", BAD);              /* code too long */
    expect_code(c, 19, false, NULL, NULL, "123456", BAD);                 /* a room's code */
    expect_code(c, 18, true, "x", "holdem", NULL, BAD);                   /* share: bad id */
    /* Well-formed but unknown. */
    free(ts_redis_cmd(E.rig.redis, "DEL {croupier:replays}:code:00000000"));
    expect_code(c, 20, false, NULL, NULL, "00000000", CROUPIER__ERROR_CODE__REPLAY_CODE_UNKNOWN);
    expect_code(c, 21, false, "holdem:1:1:1:999999", "holdem", NULL,
                CROUPIER__ERROR_CODE__NO_SUCH_ROUND);
    expect_code(c, 22, false, E.he_round, "doudizhu", NULL, CROUPIER__ERROR_CODE__NO_SUCH_ROUND);
    expect_code(c, 24, false, "traditional:1:1:1:999999", NULL, NULL, /* no game: none has it */
                CROUPIER__ERROR_CODE__NO_SUCH_ROUND);
    expect_code(c, 23, true, "holdem:1:1:1:999999", "holdem", NULL,
                CROUPIER__ERROR_CODE__NO_SUCH_ROUND);
    /* Still served. */
    Croupier__ServerMessage *p = gatec_ping(c, 30, 77, 2000);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->body_case, CROUPIER__SERVER_MESSAGE__BODY_PONG);
    frame_free_server(p);
    frame_free_server(replay_of(c, 31, E.he_round, "holdem", NULL));
    gatec_close(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_replay");
    TCase *tc = tcase_create("replay");
    tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_replay_player_sees_own_cards_board_in_order_and_the_showdown);
    tcase_add_test(tc, test_replay_stranger_is_refused_without_a_code_and_sees_the_policy_with_one);
    tcase_add_test(tc, test_replay_doudizhu_shows_every_hand_and_the_deck);
    tcase_add_test(tc, test_replay_duplicate_deal_is_shared_only_once_its_match_is_over);
    tcase_add_test(tc, test_replay_code_expires);
    tcase_add_test(tc, test_replay_bad_input_is_refused_and_the_connection_kept);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
