/*
 * The table kit (engine/tk.h), concern by concern, through the one game that stands on nothing
 * else: Zha Jin Hua (games/zhajinhua/zjh_engine.c, docs/rules/zhajinhua.md) run by the real
 * croupier-game binary against a real redis-server, players driven over a real rpc link (rpcc)
 * as a gateway would. Settings come from the kit's own flags (--zhajinhua-*), which also proves
 * they are parsed at start.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <signal.h>

#include <jansson.h>

#include "deck.h"
#include "replay.h"
#include "room.h"
#include "rpcc.h"
#include "support.h"
#include "testenv.h"
#include "zhajinhua.pb-c.h"

#define STAKE 10
#define NP 6

typedef testenv_t env_t;

/* What the players were told: the turn, rounds ended, closings, own cards. */
typedef struct {
    uint64_t last_seq;
    int turn_seat;
    int64_t to_call;
    int completed, voided, timed_out, plays;
    int table_closing, desk_closing;
    int offers;         /* DeskClosing naming a whole-table move's offer (one per player) */
    char offer_id[160]; /* the last one's */
    long long wallets_at_closing; /* sum of the test's wallets when DeskClosing arrived */
    uint64_t seat_player[NP];
    char round_id[160];
    int void_reason; /* of the last voided RoundEnd */
    bool own_cards_seen;
    env_t *env;
    const uint64_t *players;
    int nplayers;
    /* private rooms */
    int64_t won[8]; /* each of players' RoundEnd deltas, summed */
    int room_infos; /* RoomInfo pushes (one per player) */
    int room_state; /* the last one's state and deals played */
    int room_played;
    int room_closing;  /* TableClosing{CLOSING_ROOM_ENDED} */
    int room_desk_end; /* DeskClosing{CLOSING_ROOM_ENDED} */
    char rounds[8][160];
    int nrounds;
    long long rake;    /* summed from the RoundEnds */
    uint64_t hands_off; /* a player whose turns the kit plays (play_room_out leaves them) */
    /* Deck commitments seen on Deals (docs/fairness.md), by round: the last 8 rounds. */
    char commit_round[8][160];
    uint8_t commit[8][DECK_COMMIT_LEN];
    int ncommits;
    /* The cards each player saw when he looked (ZjhCards), by round. */
    struct {
        char round[160];
        uint64_t player;
        uint8_t cards[3];
    } looked[32];
    int nlooked;
} model_t;

static long long redis_int(env_t *e, const char *fmt, const char *arg)
{
    char *r = ts_redis_cmd(e->redis, fmt, arg);
    ck_assert_ptr_nonnull(r);
    long long v = strcmp(r, "(nil)") == 0 ? 0 : strtoll(r, NULL, 10);
    free(r);
    return v;
}

static void wallet_set(env_t *e, uint64_t player, long long amount)
{
    free(ts_redis_cmd(e->redis, "SET {croupier:money}:wallet:%d %d", (int)player, (int)amount));
}

static long long wallet(env_t *e, uint64_t player)
{
    char key[64];
    snprintf(key, sizeof key, "{croupier:money}:wallet:%" PRIu64, player);
    return redis_int(e, "GET %s", key);
}

/* Sum of every kit seat account (wallets named ts.*), and how many hold chips. */
static long long seat_accounts(env_t *e, int *nonzero)
{
    char *keys = ts_redis_cmd(e->redis, "KEYS {croupier:money}:wallet:ts.*");
    long long sum = 0;
    *nonzero = 0;
    for (char *p = keys; p != NULL && *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        long long v = redis_int(e, "GET %s", p);
        sum += v;
        *nonzero += v != 0;
        p = nl != NULL ? nl + 1 : NULL;
    }
    free(keys);
    return sum;
}

static long long wallets(model_t *m)
{
    long long sum = 0;
    for (int i = 0; i < m->nplayers; i++)
        sum += wallet(m->env, m->players[i]);
    return sum;
}

static void env_start_ttl(env_t *e, int drain_max_s, const char *action_ms, const char *gap_ms,
                          const char *ttl_ms);

static void env_start(env_t *e, int drain_max_s, const char *action_ms)
{
    env_start_ttl(e, drain_max_s, action_ms, "50", NULL);
}

static void env_start_gap(env_t *e, int drain_max_s, const char *action_ms, const char *gap_ms)
{
    env_start_ttl(e, drain_max_s, action_ms, gap_ms, NULL);
}

/* ttl_ms (or NULL: testenv's 900) is the lease TTL: a test that keeps Redis from answering
 * for most of it needs a longer one, or the server fences itself (docs/queues.md "A server cut
 * off from Redis"). */
static void env_start_ttl(env_t *e, int drain_max_s, const char *action_ms, const char *gap_ms,
                          const char *ttl_ms)
{
    /* A small retry cache, full after the memory test's warm-up, and no replay journal
     * (money_writer.h: completed operations kept for a failover; test_durable.c tests it): its
     * size follows the rate of operations over its window, which a loaded machine changes
     * between the warm-up and the measure, so that what the memory test measures is the
     * tables' memory. */
    char *args[] = {"--request-cache-max",
                    "1000",
                    "--redis-replay-window-ms",
                    "0",
                    "--zhajinhua-seats",
                    "3",
                    "--zhajinhua-gap-ms",
                    (char *)gap_ms,
                    "--zhajinhua-action-ms",
                    (char *)action_ms,
                    "--zhajinhua-time-bank-ms",
                    "0",
                    "--zhajinhua-idle-ms",
                    "300",
                    "--zhajinhua-rake-bp",
                    "500",
                    "--zhajinhua-rake-cap",
                    "1",
                    "--zhajinhua-move-wait-ms",
                    "300",
                    "--zhajinhua-room-wait-ms",
                    "4000",
                    ttl_ms != NULL ? "--lease-ttl-ms" : NULL,
                    (char *)ttl_ms,
                    NULL};
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    ck_assert_int_eq(testenv_start_game(e, &e->game, "zhajinhua", drain_max_s, args, NULL), 0);
}

/* Another game server of the same engine and settings on e's Redis. */
static void env_start_other(env_t *e, testenv_server_t *s)
{
    char *args[] = {"--zhajinhua-seats",
                    "3",
                    "--zhajinhua-gap-ms",
                    "50",
                    "--zhajinhua-action-ms",
                    "10000",
                    "--zhajinhua-time-bank-ms",
                    "0",
                    "--zhajinhua-rake-bp",
                    "500",
                    "--zhajinhua-rake-cap",
                    "1",
                    "--zhajinhua-move-wait-ms",
                    "300",
                    NULL};
    ck_assert_int_eq(testenv_start_game(e, s, "zhajinhua", 30, args, NULL), 0);
}

static void fill(Croupier__RpcFrame *f, uint64_t rid, uint64_t player)
{
    f->request_id = rid;
    f->has_player_id = true;
    f->player_id = player;
    f->has_session_id = true;
    f->session_id = player;
    f->has_deadline_unix_ms = true;
    f->deadline_unix_ms = (uint64_t)rpcc_wall_ms() + 5000;
}

static void send_join_at(rpcc_t *c, uint64_t rid, uint64_t player, const char *game, int64_t stake)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_GAME;
    j.game = (char *)game;
    j.stake = stake;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
    f.join = &j;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

static void send_join(rpcc_t *c, uint64_t rid, uint64_t player, const char *game)
{
    send_join_at(c, rid, player, game, STAKE);
}

/* Sends raw bytes as the body of Action.game. */
static void send_body(rpcc_t *c, uint64_t rid, uint64_t player, const uint8_t *body, size_t len)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    ga.body.data = (uint8_t *)body;
    ga.body.len = len;
    a.kind_case = CROUPIER__ACTION__KIND_GAME;
    a.game = &ga;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

static void send_move(rpcc_t *c, uint64_t rid, uint64_t player, Croupier__Zjh__ZjhMove move,
                      int64_t unit, int target)
{
    Croupier__Zjh__ZjhAction a = CROUPIER__ZJH__ZJH_ACTION__INIT;
    a.move = move;
    a.has_unit = unit > 0;
    a.unit = unit;
    a.has_target = target >= 0;
    a.target = target >= 0 ? (uint32_t)target : 0;
    uint8_t buf[64];
    size_t n = croupier__zjh__zjh_action__pack(&a, buf);
    send_body(c, rid, player, buf, n);
}

static int reply_code(rpcc_t *c, uint64_t rid, Croupier__RpcFrame **out)
{
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_msg(r != NULL, "no reply to request %" PRIu64, rid);
    int code = r->reply->code;
    if (out != NULL)
        *out = r;
    else
        frame_free_rpc(r);
    return code;
}

static int join_ok(rpcc_t *c, model_t *m, uint64_t rid, uint64_t player, uint64_t *desk)
{
    send_join(c, rid, player, "zhajinhua");
    Croupier__RpcFrame *r;
    ck_assert_int_eq(reply_code(c, rid, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    const Croupier__Joined *j = r->reply->payload->joined;
    ck_assert_int_eq(j->engine, CROUPIER__ENGINE__ENGINE_GAME);
    ck_assert_str_eq(j->game, "zhajinhua");
    ck_assert_int_eq(j->stake, STAKE);
    int seat = (int)j->seat;
    ck_assert_int_lt(seat, NP);
    if (m != NULL)
        m->seat_player[seat] = player;
    if (desk != NULL)
        *desk = j->desk_id;
    frame_free_rpc(r);
    return seat;
}

static void model_apply(model_t *m, const Croupier__RpcFrame *f)
{
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING &&
        f->desk_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED) {
        m->room_desk_end++;
        return;
    }
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
        f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROOM) {
        m->room_infos++;
        m->room_state = f->push->room->state;
        m->room_played = (int)f->push->room->deals_played;
        return;
    }
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
        f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING &&
        f->push->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED)
        m->room_closing++;
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING) {
        if (f->desk_closing->offer_id != NULL && f->desk_closing->offer_id[0] != '\0') {
            m->offers++;
            snprintf(m->offer_id, sizeof m->offer_id, "%s", f->desk_closing->offer_id);
            return;
        }
        if (m->desk_closing++ == 0 && m->env != NULL)
            m->wallets_at_closing = wallets(m);
        return;
    }
    if (f->body_case != CROUPIER__RPC_FRAME__BODY_PUSH)
        return;
    const Croupier__ServerMessage *sm = f->push;
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT) {
        Croupier__Zjh__ZjhEvent *ev = croupier__zjh__zjh_event__unpack(
            NULL, sm->game_event->body.len, sm->game_event->body.data);
        ck_assert_ptr_nonnull(ev);
        if (ev->kind_case == CROUPIER__ZJH__ZJH_EVENT__KIND_CARDS) {
            /* Own cards reach their owner only. */
            ck_assert_uint_eq(m->seat_player[ev->cards->seat], f->player_id);
            m->own_cards_seen = true;
            if (m->nlooked < 32 && m->ncommits > 0 && ev->cards->cards.len == 3) {
                memcpy(m->looked[m->nlooked].round, m->commit_round[(m->ncommits - 1) % 8],
                       sizeof m->looked[0].round);
                m->looked[m->nlooked].player = f->player_id;
                memcpy(m->looked[m->nlooked].cards, ev->cards->cards.data, 3);
                m->nlooked++;
            }
        }
        croupier__zjh__zjh_event__free_unpacked(ev, NULL);
    }
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL) {
        const Croupier__Deal *d = sm->deal;
        ck_assert(!d->has_cards); /* dealt face down, even to the owner */
        /* Every Deal carries the round's deck commitment (docs/fairness.md). */
        ck_assert(d->has_deck_commitment);
        ck_assert_uint_eq(d->deck_commitment.len, DECK_COMMIT_LEN);
        ck_assert(d->has_deck_scheme && d->deck_scheme == DECK_SCHEME_CARDS); /* per card */
        ck_assert_ptr_nonnull(d->round_id);
        int k = m->ncommits > 0 ? (m->ncommits - 1) % 8 : 0;
        if (m->ncommits == 0 || strcmp(m->commit_round[k], d->round_id) != 0) {
            k = m->ncommits++ % 8;
            snprintf(m->commit_round[k], sizeof m->commit_round[k], "%s", d->round_id);
            memcpy(m->commit[k], d->deck_commitment.data, DECK_COMMIT_LEN);
        } else {
            ck_assert(memcmp(m->commit[k], d->deck_commitment.data, DECK_COMMIT_LEN) == 0);
        }
    }
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING) {
        m->table_closing++;
        return;
    }
    ck_assert(sm->has_event_seq);
    if (sm->event_seq <= m->last_seq)
        return; /* another player's copy of an event already counted */
    m->last_seq = sm->event_seq;
    switch (sm->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
        m->turn_seat = (int)sm->turn->seat;
        m->to_call = sm->turn->to_call;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY:
        m->plays++;
        m->timed_out += sm->play->has_timed_out && sm->play->timed_out;
        ck_assert_int_eq(sm->play->action->kind_case, CROUPIER__ACTION__KIND_GAME);
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END: {
        const Croupier__RoundEnd *re = sm->round_end;
        if (re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED) {
            m->completed++;
        } else {
            m->voided++;
            m->void_reason = re->has_void_reason ? (int)re->void_reason : -1;
        }
        snprintf(m->round_id, sizeof m->round_id, "%s", re->round_id);
        if (re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED && m->nrounds < 8)
            snprintf(m->rounds[m->nrounds++], sizeof m->rounds[0], "%s", re->round_id);
        m->rake += re->has_rake ? re->rake : 0;
        int64_t sum = 0;
        for (size_t i = 0; i < re->n_deltas; i++) {
            sum += re->deltas[i]->delta;
            for (int k = 0; k < m->nplayers && k < 8; k++)
                if (m->players[k] == re->deltas[i]->player_id)
                    m->won[k] += re->deltas[i]->delta;
        }
        ck_assert_int_eq(sum, -(re->has_rake ? re->rake : 0));
        m->turn_seat = -1;
        break;
    }
    default:
        break;
    }
}

static bool pump_until(rpcc_t *c, model_t *m, bool (*pred)(const model_t *), int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (!pred(m)) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0)
            return false;
        Croupier__RpcFrame *f = rpcc_next_event(c, left);
        if (f == NULL)
            return pred(m);
        model_apply(m, f);
        frame_free_rpc(f);
    }
    return true;
}

static bool has_turn(const model_t *m)
{
    return m->turn_seat >= 0;
}

static bool never(const model_t *m)
{
    (void)m;
    return false;
}

static bool round_over(const model_t *m)
{
    return m->completed + m->voided > 0 && m->turn_seat < 0;
}

static bool desk_closed(const model_t *m)
{
    return m->desk_closing > 0;
}

static void model_init(model_t *m, env_t *e, const uint64_t *players, int n)
{
    memset(m, 0, sizeof *m);
    m->turn_seat = -1;
    m->env = e;
    m->players = players;
    m->nplayers = n;
}

/* Gives each player a wallet of 1000, connects a link and seats them all (rids 1..n). */
static rpcc_t *seat_players(env_t *e, model_t *m, const uint64_t *players, int n)
{
    for (int i = 0; i < n; i++)
        wallet_set(e, players[i], 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e->game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_init(m, e, players, n);
    for (int i = 0; i < n; i++)
        join_ok(c, m, (uint64_t)i + 1, players[i], NULL);
    return c;
}

/* The seat to act folds; returns the reply code. */
static int fold_turn(rpcc_t *c, model_t *m, uint64_t rid)
{
    ck_assert(pump_until(c, m, has_turn, 5000));
    uint64_t p = m->seat_player[m->turn_seat];
    m->turn_seat = -1;
    send_move(c, rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
    return reply_code(c, rid, NULL);
}

static Croupier__RpcFrame *snapshot(rpcc_t *c, uint64_t rid, uint64_t player)
{
    ck_assert_int_eq(rpcc_resume(c, rid, player), 0);
    Croupier__RpcFrame *r;
    ck_assert_int_eq(reply_code(c, rid, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    return r;
}

/* The snapshot's game state and event_seq as bytes (no clock), for equality checks. */
static size_t state_bytes(rpcc_t *c, uint64_t rid, uint64_t player, uint8_t *buf, size_t cap)
{
    Croupier__RpcFrame *r = snapshot(c, rid, player);
    Croupier__Snapshot *s = r->reply->payload->snapshot;
    s->has_time_left_ms = false;
    s->time_left_ms = 0;
    size_t n = croupier__snapshot__get_packed_size(s);
    ck_assert_uint_le(n, cap);
    n = croupier__snapshot__pack(s, buf);
    frame_free_rpc(r);
    return n;
}

static Croupier__Zjh__ZjhState *game_state(Croupier__RpcFrame *r)
{
    const Croupier__Snapshot *s = r->reply->payload->snapshot;
    ck_assert_int_eq(s->state_case, CROUPIER__SNAPSHOT__STATE_GAME_STATE);
    Croupier__Zjh__ZjhState *st =
        croupier__zjh__zjh_state__unpack(NULL, s->game_state->body.len, s->game_state->body.data);
    ck_assert_ptr_nonnull(st);
    return st;
}

static long metric(env_t *e, const char *series)
{
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e->game.health, "/metrics", 5000, &body), 200);
    const char *p = strstr(body, series);
    long v = p != NULL ? strtol(p + strlen(series), NULL, 10) : -1;
    free(body);
    return v;
}

/* ---- tests ------------------------------------------------------------------------------- */

START_TEST(test_tk_join_buys_in_min_of_wallet_and_cap_and_refuses_below_minimum)
{
    env_t e;
    env_start(&e, 30, "5000");
    wallet_set(&e, 1, 5000); /* above the 200-stake cap (2000): buys in 2000 */
    wallet_set(&e, 2, 700);  /* between the minimum (200) and the cap: the whole wallet */
    wallet_set(&e, 3, 150);  /* below the minimum */
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    uint64_t d1, d2;
    join_ok(c, NULL, 1, 1, &d1);
    join_ok(c, NULL, 2, 2, &d2);
    ck_assert_uint_eq(d1, d2); /* the same (game, stake): the same table */
    ck_assert_int_eq(wallet(&e, 1), 3000);
    ck_assert_int_eq(wallet(&e, 2), 0);
    send_join(c, 3, 3, "zhajinhua");
    ck_assert_int_eq(reply_code(c, 3, NULL), CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
    ck_assert_int_eq(wallet(&e, 3), 150);
    send_join(c, 4, 3, "holdem");
    ck_assert_int_eq(reply_code(c, 4, NULL), CROUPIER__ERROR_CODE__NO_SUCH_GAME);
    /* A second join of a seated player is answered with its seat (a Snapshot). */
    send_join(c, 5, 1, "zhajinhua");
    Croupier__RpcFrame *r;
    ck_assert_int_eq(reply_code(c, 5, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    frame_free_rpc(r);
    int nz;
    ts_sleep_ms(100);
    ck_assert_int_eq(seat_accounts(&e, &nz), 2700);
    ck_assert_int_eq(nz, 2);
    ck_assert_int_eq(metric(&e, "tk_seated{engine=\"zhajinhua\"} "), 2);
    ck_assert_int_ge(
        metric(&e, "tk_refusals_total{engine=\"zhajinhua\",code=\"INSUFFICIENT_FUNDS\"} "), 1);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* The text of "field":"..." in a record, into out (NUL-terminated); false if absent. */
static bool record_field(const char *rec, const char *field, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", field);
    const char *p = strstr(rec, pat);
    if (p == NULL)
        return false;
    p += strlen(pat);
    const char *q = strchr(p, '"');
    if (q == NULL || (size_t)(q - p) >= cap)
        return false;
    memcpy(out, p, (size_t)(q - p));
    out[q - p] = '\0';
    return true;
}

/*
 * The record reveals the deck and the nonce (docs/hand-history.md), and they open the
 * commitment the players got on the round's Deals (docs/fairness.md): Zha Jin Hua deals under
 * the per-card commitment, its codes (deck_codes) the table's card bytes.
 */
static void check_deck_reveal(const model_t *m, const char *rec)
{
    char round[160], chex[2 * DECK_COMMIT_LEN + 1], dhex[2 * DECK_MAX_CARDS + 1],
        nhex[2 * DECK_NONCE_LEN + 1], codes_hex[2 * DECK_MAX_CARDS + 1];
    ck_assert(record_field(rec, "round", round, sizeof round));
    ck_assert(record_field(rec, "deck_commitment", chex, sizeof chex));
    ck_assert(record_field(rec, "deck", dhex, sizeof dhex));
    ck_assert(record_field(rec, "deck_codes", codes_hex, sizeof codes_hex));
    ck_assert(record_field(rec, "deck_nonce", nhex, sizeof nhex));
    ck_assert_ptr_nonnull(strstr(rec, "\"deck_scheme\":2"));
    ck_assert_str_eq(codes_hex, dhex);
    uint8_t commit[DECK_COMMIT_LEN], deck[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN], got[32];
    ck_assert_int_eq(deck_unhex(chex, commit, sizeof commit), DECK_COMMIT_LEN);
    ck_assert_int_eq(deck_unhex(dhex, deck, sizeof deck), 52); /* Zha Jin Hua: one deck */
    ck_assert_int_eq(deck_unhex(nhex, nonce, sizeof nonce), DECK_NONCE_LEN);
    deck_commitment_cards(deck, 52, nonce, got);
    ck_assert(memcmp(got, commit, sizeof got) == 0);
    bool seen = false;
    for (int k = 0; k < 8 && k < m->ncommits; k++)
        if (strcmp(m->commit_round[k], round) == 0) {
            ck_assert(memcmp(m->commit[k], commit, DECK_COMMIT_LEN) == 0);
            seen = true;
        }
    ck_assert_msg(seen, "no Deal of round %s carried a commitment (%d seen, the last of %s)", round,
                  m->ncommits, m->ncommits > 0 ? m->commit_round[(m->ncommits - 1) % 8] : "-");
}

/*
 * Each player's own check from his replays (replay_build() for him: what GetReplay sends him;
 * docs/fairness.md "The per-card commitment"): every round's replay checks with
 * replay_check_cards() against the commitment his Deals carried and opens exactly the three
 * cards he saw when he looked; no card of another seat is anywhere in it (openings, events,
 * seats). A share code's view (viewer 0) opens nothing.
 */
static void check_replays_open_own_cards(env_t *e, const model_t *m, const uint64_t *players, int n)
{
    char *hist = ts_redis_cmd(e->redis, "XRANGE %s - +", "{croupier:history:zhajinhua}:stream");
    ck_assert_ptr_nonnull(hist);
    int checked = 0, total_looked = 0, total_compared = 0;
    for (char *line = strtok(hist, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        json_t *rec = line[0] == '{' ? json_loads(line, 0, NULL) : NULL;
        const char *round = json_string_value(json_object_get(rec, "round"));
        int k;
        for (k = 0;
             round != NULL && k < 8 && k < m->ncommits && strcmp(m->commit_round[k], round) != 0;
             k++)
            ;
        if (round == NULL || k >= 8 || k >= m->ncommits) {
            json_decref(rec);
            continue;
        }
        for (int i = -1; i < n; i++) {
            uint64_t p = i < 0 ? 0 : players[i];
            char err[300] = "";
            Croupier__Replay *r = replay_build(rec, p, err, sizeof err);
            ck_assert_msg(r != NULL, "%s: %s", round, err);
            ck_assert_msg(replay_check_cards(r, m->commit[k], err, sizeof err) == 0,
                          "%s, viewer %" PRIu64 ": %s", round, p, err);
            ck_assert_uint_eq(r->deck_leaves.len, 52 * DECK_LEAF_LEN);
            ck_assert_ptr_null(r->deck);
            ck_assert_ptr_null(r->deck_nonce);
            int mine = r->has_your_seat ? (int)r->your_seat : -1;
            if (p == 0)
                ck_assert_uint_eq(r->n_openings, 0);
            /* The seats whose hand a compare showed him (the record names each compare's
             * target, docs/hand-history.md): shown and opened to him too. */
            bool compared[9] = {false};
            int ncompared = 0;
            size_t ia;
            const json_t *a;
            json_array_foreach(json_object_get(rec, "actions"), ia, a)
            {
                const char *name = json_string_value(json_object_get(a, "action"));
                if (strncmp(name, "compare", 7) != 0)
                    continue;
                ck_assert_msg(json_is_integer(json_object_get(a, "target")),
                              "%s: a compare "
                              "without its target",
                              round);
                int as = (int)json_integer_value(json_object_get(a, "seat"));
                int at = (int)json_integer_value(json_object_get(a, "target"));
                int other = as == mine ? at : at == mine ? as : -1;
                if (mine >= 0 && other >= 0 && other < 9 && !compared[other]) {
                    compared[other] = true;
                    ncompared++;
                }
            }
            total_compared += ncompared;
            ck_assert_uint_eq(r->n_openings, p == 0 ? 0 : 3 * (size_t)(1 + ncompared));
            /* The cards he looked at in this round: each opened. */
            int looked = 0;
            for (int l = 0; p != 0 && l < m->nlooked; l++) {
                if (m->looked[l].player != p || strcmp(m->looked[l].round, round) != 0)
                    continue;
                looked++;
                for (int c = 0; c < 3; c++) {
                    size_t o;
                    for (o = 0; o < r->n_openings && r->openings[o]->card != m->looked[l].cards[c];
                         o++)
                        ;
                    ck_assert_msg(o < r->n_openings, "%s: player %" PRIu64 "'s card %u unopened",
                                  round, p, m->looked[l].cards[c]);
                }
            }
            ck_assert_int_eq(looked, r->has_your_seat); /* every player dealt in looked */
            total_looked += looked;
            /* No card of another seat anywhere in his replay, but those a compare showed him,
             * which are opened. */
            size_t ic;
            const json_t *cj;
            json_array_foreach(json_object_get(rec, "cards"), ic, cj)
            {
                json_int_t seat = json_integer_value(json_object_get(cj, "seat"));
                int code = replay_card_code(json_string_value(json_object_get(cj, "card")));
                ck_assert_int_ge(code, 0);
                if (seat >= 0 && seat < 9 && compared[seat]) {
                    size_t o;
                    for (o = 0; o < r->n_openings && (int)r->openings[o]->card != code; o++)
                        ;
                    ck_assert_msg(o < r->n_openings, "%s: a compared card unopened", round);
                }
                if (seat == mine || (seat >= 0 && seat < 9 && compared[seat]))
                    continue;
                for (size_t o = 0; o < r->n_openings; o++)
                    ck_assert_int_ne((int)r->openings[o]->card, code);
                for (size_t v = 0; v < r->n_events; v++)
                    ck_assert(r->events[v]->cards.len == 0 ||
                              memchr(r->events[v]->cards.data, code, r->events[v]->cards.len) ==
                                  NULL);
                for (size_t v = 0; v < r->n_seats; v++)
                    ck_assert(r->seats[v]->cards.len == 0 ||
                              memchr(r->seats[v]->cards.data, code, r->seats[v]->cards.len) ==
                                  NULL);
            }
            croupier__replay__free_unpacked(r, NULL);
        }
        checked++;
        json_decref(rec);
    }
    free(hist);
    ck_assert_int_ge(checked, 4);
    ck_assert_int_ge(total_looked, 6);
    ck_assert_int_ge(total_compared, 2); /* the fourth hand's compare, seen by its two players */
}

START_TEST(test_tk_rounds_settle_against_seat_accounts_with_history_and_rake)
{
    env_t e;
    env_start(&e, 30, "5000");
    const uint64_t players[] = {11, 12, 13};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 3);
    uint64_t rid = 10;
    /* Hands end when all but one fold: every player looks at his cards (out of turn too),
     * then two fold; three hands. */
    for (int hand = 0; hand < 3; hand++) {
        int done = m.completed;
        ck_assert(pump_until(c, &m, has_turn, 5000));
        for (int i = 0; i < 3; i++) {
            send_move(c, rid, players[i], CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
            ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
        }
        pump_until(c, &m, never, 200); /* the looks' events, a Turn update among them */
        for (int f = 0; f < 2; f++)
            ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
        /* Up to the RoundEnd and no further: the next hand's first Turn is still to come. */
        while (m.completed == done) {
            Croupier__RpcFrame *f = rpcc_next_event(c, 5000);
            ck_assert_msg(f != NULL, "hand %d did not end", hand);
            model_apply(&m, f);
            frame_free_rpc(f);
        }
        ck_assert_int_eq(m.completed, done + 1);
    }
    /* A fourth hand with a compare (docs/rules/zhajinhua.md: from the second betting round):
     * every player looks and calls once round, then the seat to act compares with another, and
     * the one left with the winner folds. */
    {
        int done = m.completed;
        ck_assert(pump_until(c, &m, has_turn, 5000));
        for (int i = 0; i < 3; i++) {
            send_move(c, rid, players[i], CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
            ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
        }
        pump_until(c, &m, never, 200);
        for (int k = 0; k < 3; k++) {
            ck_assert(pump_until(c, &m, has_turn, 5000));
            uint64_t p = m.seat_player[m.turn_seat];
            m.turn_seat = -1;
            send_move(c, rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL, 0, -1);
            ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
        }
        ck_assert(pump_until(c, &m, has_turn, 5000));
        int asker = m.turn_seat, target = -1;
        for (int s = 0; s < NP && target < 0; s++)
            if (s != asker && m.seat_player[s] != 0)
                target = s;
        m.turn_seat = -1;
        send_move(c, rid, m.seat_player[asker], CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE, 0, target);
        ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
        ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
        while (m.completed == done) {
            Croupier__RpcFrame *f = rpcc_next_event(c, 5000);
            ck_assert_msg(f != NULL, "the compare hand did not end");
            model_apply(&m, f);
            frame_free_rpc(f);
        }
    }
    ck_assert_int_ge(m.completed, 3);
    ts_sleep_ms(300);
    int nz;
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    ck_assert_int_gt(rake, 0); /* 5 % of the pot, capped at 10 chips */
    ck_assert_int_eq(wallets(&m) + seat_accounts(&e, &nz) + rake, 3000);
    /* One settle record per completed hand, one history per hand, with the kit's schema. */
    char key[256];
    snprintf(key, sizeof key, "{croupier:money}:round:%s", m.round_id);
    ck_assert_int_eq(redis_int(&e, "EXISTS %s", key), 1);
    ck_assert_int_ge(redis_int(&e, "XLEN %s", "{croupier:history:zhajinhua}:stream"), 3);
    char *h = ts_redis_cmd(e.redis, "XREVRANGE {croupier:history:zhajinhua}:stream + - COUNT 1");
    ck_assert_ptr_nonnull(strstr(h, "\"outcome\":\"completed\""));
    ck_assert_ptr_nonnull(strstr(h, "\"stake\":10"));
    ck_assert_ptr_nonnull(strstr(h, "\"engine\":\"zhajinhua\""));
    check_deck_reveal(&m, h);
    free(h);
    check_replays_open_own_cards(&e, &m, players, 3);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * RoundEnd is pushed only once the round's settlement is applied: with Redis pausing writes the
 * hand's end shows nothing, and the RoundEnd comes after the pause with its settle record in
 * place. A settlement the fence refuses (the server's epoch was recovered meanwhile) voids the
 * round for its players (VOID_LEASE_LOST) with no chip moved, instead of showing a result.
 */
START_TEST(test_tk_round_end_waits_for_its_settlement_and_a_refused_one_voids_the_round)
{
    env_t e;
    env_start_ttl(&e, 30, "5000", "50", "3000"); /* writes paused 800 ms: well within the TTL */
    const uint64_t players[] = {41, 42, 43};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 3);
    uint64_t rid = 10;
    ck_assert(pump_until(c, &m, has_turn, 5000));
    ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
    free(ts_redis_cmd(e.redis, "CLIENT PAUSE 800 WRITE"));
    long long paused = ts_now_ms();
    ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK); /* the hand is won */
    pump_until(c, &m, round_over, 400);
    ck_assert_int_eq(m.completed, 0); /* nothing shown while the settlement waits */
    ck_assert(pump_until(c, &m, round_over, 5000));
    ck_assert_int_eq(m.completed, 1);
    ck_assert_int_ge(ts_now_ms() - paused, 700);
    char key[256];
    snprintf(key, sizeof key, "{croupier:money}:round:%s", m.round_id);
    ck_assert_int_eq(redis_int(&e, "EXISTS %s", key), 1);

    /* The next hand: the fence moves (as a recovery by another server would move it). */
    ck_assert(pump_until(c, &m, has_turn, 5000));
    char svc[64];
    unsigned slot;
    unsigned long long epoch;
    ck_assert_int_eq(sscanf(m.round_id, "%63[^:]:%u:%llu:", svc, &slot, &epoch), 3);
    int nz;
    long long held = seat_accounts(&e, &nz);
    free(ts_redis_cmd(e.redis, "SET {croupier:lease:%s}:slot:%u:epoch %llu", svc, slot,
                      epoch + 100));
    ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
    m.completed = m.voided = 0;
    ck_assert(pump_until(c, &m, round_over, 5000));
    ck_assert_int_eq(m.completed, 0);
    ck_assert_int_eq(m.voided, 1);
    ck_assert_int_eq(m.void_reason, CROUPIER__VOID_REASON__VOID_LEASE_LOST);
    snprintf(key, sizeof key, "{croupier:money}:round:%s", m.round_id);
    ck_assert_int_eq(redis_int(&e, "EXISTS %s", key), 0);
    ck_assert_int_eq(seat_accounts(&e, &nz), held); /* no chip moved */
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_refusals_have_codes_and_change_nothing)
{
    env_t e;
    env_start(&e, 30, "10000");
    const uint64_t players[] = {21, 22};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    int to = m.turn_seat;
    uint64_t actor = m.seat_player[to], other = m.seat_player[1 - to];
    uint8_t before[4096], after[4096];
    size_t nb = state_bytes(c, 10, actor, before, sizeof before);
    uint64_t rid = 20;
    struct {
        uint64_t player;
        Croupier__Zjh__ZjhMove move;
        int64_t unit;
        int target;
        int code;
    } bad[] = {
        {other, CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL, 0, -1, CROUPIER__ERROR_CODE__NOT_YOUR_TURN},
        {actor, CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, 1000, -1, CROUPIER__ERROR_CODE__BET_ABOVE_MAX},
        {actor, CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, STAKE, -1, CROUPIER__ERROR_CODE__BET_BELOW_MIN},
        {actor, CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE, 0, 1 - to,
         CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED},
        {actor, CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, 0, -1, CROUPIER__ERROR_CODE__BAD_REQUEST},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        send_move(c, rid, bad[i].player, bad[i].move, bad[i].unit, bad[i].target);
        ck_assert_msg(reply_code(c, rid, NULL) == bad[i].code, "refusal %zu", i);
        rid++;
        ck_assert_uint_eq(state_bytes(c, rid++, actor, after, sizeof after), nb);
        ck_assert_msg(memcmp(before, after, nb) == 0, "refusal %zu changed the table", i);
    }
    /* Not a ZjhAction at all, and another engine's action. */
    const uint8_t junk[] = {0xff, 0xff, 0xff};
    send_body(c, rid, actor, junk, sizeof junk);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__MALFORMED_FRAME);
    ck_assert_int_eq(rpcc_action(c, rid, actor, 0), 0); /* a SheddingAction: not this game's */
    int code = reply_code(c, rid++, NULL);
    ck_assert(code == CROUPIER__ERROR_CODE__WRONG_ENGINE ||
              code == CROUPIER__ERROR_CODE__BAD_REQUEST);
    ck_assert_uint_eq(state_bytes(c, rid++, actor, after, sizeof after), nb);
    ck_assert(memcmp(before, after, nb) == 0);
    /* Looking is allowed out of turn, once; the second look is refused and changes nothing. */
    send_move(c, rid, other, CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
    nb = state_bytes(c, rid++, other, before, sizeof before);
    send_move(c, rid, other, CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    ck_assert_uint_eq(state_bytes(c, rid++, other, after, sizeof after), nb);
    ck_assert(memcmp(before, after, nb) == 0);
    /* A player not at the table. */
    send_move(c, rid, 999, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__NOT_SEATED);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_resume_shows_own_cards_only_after_looking)
{
    env_t e;
    env_start(&e, 30, "10000");
    const uint64_t players[] = {31, 32};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    Croupier__RpcFrame *r = snapshot(c, 10, 31);
    const Croupier__Snapshot *s = r->reply->payload->snapshot;
    ck_assert_ptr_nonnull(s->round_id);
    ck_assert(s->has_turn_seat);
    ck_assert_uint_eq(s->event_seq, m.last_seq);
    /* The round's commitment, as its Deals carried it, per card (docs/fairness.md). */
    ck_assert(s->has_deck_commitment);
    ck_assert_uint_eq(s->deck_commitment.len, DECK_COMMIT_LEN);
    ck_assert(s->has_deck_scheme && s->deck_scheme == DECK_SCHEME_CARDS);
    ck_assert_int_gt(m.ncommits, 0);
    ck_assert_str_eq(m.commit_round[(m.ncommits - 1) % 8], s->round_id);
    ck_assert(memcmp(m.commit[(m.ncommits - 1) % 8], s->deck_commitment.data, DECK_COMMIT_LEN) ==
              0);
    Croupier__Zjh__ZjhState *st = game_state(r);
    ck_assert(st->in_hand);
    ck_assert(!st->has_own_cards);
    ck_assert_uint_eq(st->n_seats, 2);
    croupier__zjh__zjh_state__free_unpacked(st, NULL);
    frame_free_rpc(r);
    send_move(c, 11, 31, CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
    ck_assert_int_eq(reply_code(c, 11, NULL), CROUPIER__ERROR_CODE__OK);
    r = snapshot(c, 12, 31);
    st = game_state(r);
    ck_assert(st->has_own_cards);
    ck_assert_uint_eq(st->own_cards.len, 3);
    croupier__zjh__zjh_state__free_unpacked(st, NULL);
    frame_free_rpc(r);
    r = snapshot(c, 13, 32); /* the other player never sees them */
    st = game_state(r);
    ck_assert(!st->has_own_cards);
    croupier__zjh__zjh_state__free_unpacked(st, NULL);
    frame_free_rpc(r);
    pump_until(c, &m, round_over, 300);
    ck_assert(m.own_cards_seen);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_timeout_folds_and_puts_the_seat_on_trustee)
{
    env_t e;
    env_start(&e, 30, "300");
    const uint64_t players[] = {41, 42};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    /* Nobody acts: the seat to act is folded for, and the hand ends. */
    ck_assert(pump_until(c, &m, round_over, 5000));
    ck_assert_int_ge(m.timed_out, 1);
    ck_assert_int_eq(m.completed, 1);
    ck_assert_int_ge(metric(&e, "tk_timeouts_total{engine=\"zhajinhua\"} "), 1);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_leaver_is_cashed_out_after_the_round)
{
    env_t e;
    env_start(&e, 30, "10000");
    const uint64_t players[] = {51, 52, 53};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 3);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    uint64_t leaver = m.seat_player[(m.turn_seat + 1) % 3];
    ck_assert_int_eq(rpcc_leave(c, 10, leaver), 0);
    ck_assert_int_eq(reply_code(c, 10, NULL), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(wallet(&e, leaver), 0); /* still playing this hand */
    uint64_t rid = 20;
    while (m.completed == 0) {
        if (!pump_until(c, &m, has_turn, 3000))
            break;
        uint64_t p = m.seat_player[m.turn_seat];
        m.turn_seat = -1;
        if (p == leaver)
            continue; /* its turns are the automatic move (trustee) */
        send_move(c, rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
        reply_code(c, rid++, NULL);
        pump_until(c, &m, round_over, 300);
    }
    ck_assert_int_ge(m.completed, 1);
    ts_sleep_ms(300);
    ck_assert_int_gt(wallet(&e, leaver), 0);
    int nz;
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    ck_assert_int_eq(wallets(&m) + seat_accounts(&e, &nz) + rake, 3000);
    ck_assert_int_eq(rpcc_resume(c, rid, leaver), 0);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__NOT_SEATED);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_drain_cashes_out_before_the_move_is_announced)
{
    env_t e;
    env_start(&e, 30, "10000");
    /* Another ready server that could adopt the table (so the table offers itself), which this
     * test, playing the gateway, never asks to. */
    testenv_server_t b;
    env_start_other(&e, &b);
    const uint64_t players[] = {61, 62};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    char *body = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 5000, &body), 200);
    free(body);
    /* The hand in progress finishes; no other starts; the table offers itself for a whole-table
     * move, nobody adopts it, so after --zhajinhua-move-wait-ms it withdraws the offer and
     * closes as before: cash-outs first, then the players are re-seated alone. */
    ck_assert_int_eq(fold_turn(c, &m, 10), CROUPIER__ERROR_CODE__OK);
    ck_assert(pump_until(c, &m, desk_closed, 5000));
    ck_assert_int_eq(m.completed, 1);
    ck_assert_int_eq(m.offers, 2); /* one notice per player */
    char *st = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", m.offer_id);
    ck_assert_str_eq(st, "withdrawn");
    free(st);
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    /* When the gateways were told to move the players, every chip was back in the wallets. */
    ck_assert_int_eq(m.wallets_at_closing + rake, 2000);
    int nz;
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    ck_assert_int_ge(m.table_closing, 2);
    testenv_stop_server(&b);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

static void send_adopt(rpcc_t *c, uint64_t rid, uint64_t player, const char *offer)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Adopt a = CROUPIER__ADOPT__INIT;
    a.offer_id = (char *)offer;
    a.engine = CROUPIER__ENGINE__ENGINE_GAME;
    a.game = "zhajinhua";
    a.stake = STAKE;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_ADOPT;
    f.adopt = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

/* A Snapshot answering an Adopt: the player's old seat, both players, chips that add up. */
static int64_t check_adopted(Croupier__RpcFrame *r, int seat, const uint64_t *players)
{
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert_int_eq((int)sn->your_seat, seat);
    ck_assert_str_eq(sn->game, "zhajinhua");
    ck_assert_uint_eq(sn->n_seats, 2);
    int64_t chips = 0;
    for (size_t i = 0; i < sn->n_seats; i++) {
        ck_assert(sn->seats[i]->player_id == players[0] || sn->seats[i]->player_id == players[1]);
        chips += sn->seats[i]->chips;
    }
    ck_assert(sn->event_seq > 0); /* the table's numbering goes on */
    return chips;
}

/* Whole-table moves (tk.h "moves"): a draining server's table moves to the server that adopts
 * its offer -- same seats, players and stacks, exactly once even when two servers race for it
 * (the loser names the winner), and the new table deals the next round. Every chip is counted
 * before and after. */
/* Seats two players on e->game, drains it after one hand and waits for its whole-table offer. */
static rpcc_t *drain_to_offer(env_t *e, model_t *m, const uint64_t *players)
{
    rpcc_t *c = seat_players(e, m, players, 2);
    ck_assert(pump_until(c, m, has_turn, 5000));
    ck_assert_int_eq(ts_http_get("127.0.0.1", e->game.health, "/drain", 5000, NULL), 200);
    ck_assert_int_eq(fold_turn(c, m, 10), CROUPIER__ERROR_CODE__OK);
    long long end = ts_now_ms() + 5000;
    while (m->offers == 0 && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 500);
        if (f != NULL) {
            model_apply(m, f);
            frame_free_rpc(f);
        }
    }
    ck_assert_msg(m->offers > 0, "no whole-table offer");
    return c;
}

START_TEST(test_tk_drain_moves_the_table_whole_to_one_adopter)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b, cs;
    env_start_other(&e, &b);
    env_start_other(&e, &cs);
    const uint64_t players[] = {81, 82};
    model_t m;
    rpcc_t *c = drain_to_offer(&e, &m, players);
    ck_assert(round_over(&m));
    int seat_of[2] = {-1, -1};
    for (int i = 0; i < NP; i++)
        for (int k = 0; k < 2; k++)
            if (m.seat_player[i] == players[k])
                seat_of[k] = i;
    ck_assert_int_eq(m.table_closing, 0); /* a whole-table move tells no one to leave */
    /* Two servers race for the table, one player each. */
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000),
           *cc = rpcc_connect("127.0.0.1", cs.port, 5000);
    ck_assert(cb != NULL && cc != NULL);
    send_adopt(cb, 100, players[0], m.offer_id);
    send_adopt(cc, 100, players[1], m.offer_id);
    Croupier__RpcFrame *rb = rpcc_wait_reply(cb, 100, 5000), *rc = rpcc_wait_reply(cc, 100, 5000);
    ck_assert(rb != NULL && rc != NULL);
    bool b_won = rb->reply->code == CROUPIER__ERROR_CODE__OK;
    Croupier__RpcFrame *won = b_won ? rb : rc, *lost = b_won ? rc : rb;
    rpcc_t *winner = b_won ? cb : cc;
    int k_won = b_won ? 0 : 1, k_lost = 1 - k_won;
    int64_t chips = check_adopted(won, seat_of[k_won], players);
    ck_assert_int_eq(lost->reply->code, CROUPIER__ERROR_CODE__UNAVAILABLE);
    ck_assert_ptr_nonnull(lost->reply->adopted_by);
    ck_assert(lost->reply->adopted_by[0] != '\0');
    frame_free_rpc(rb);
    frame_free_rpc(rc);
    /* The loser's player goes to the winner (as its gateway does): the same table. */
    send_adopt(winner, 101, players[k_lost], m.offer_id);
    Croupier__RpcFrame *r2 = rpcc_wait_reply(winner, 101, 5000);
    ck_assert_ptr_nonnull(r2);
    ck_assert_int_eq(check_adopted(r2, seat_of[k_lost], players), chips);
    frame_free_rpc(r2);
    char *st = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", m.offer_id);
    ck_assert_str_eq(st, "adopted");
    free(st);
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    int nz;
    ck_assert_int_eq(wallets(&m) + seat_accounts(&e, &nz) + rake, 2000);
    ck_assert_int_eq(wallets(&m) + chips, 2000 - rake);
    /* The old server lets go of the table and exits drained, holding nothing. */
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    int status;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &status), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"tk_table_moved\""));
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=drained"));
    /* The moved table deals on: a turn arrives on the winner's link. */
    model_t m2;
    model_init(&m2, &e, players, 2);
    for (int i = 0; i < NP; i++)
        m2.seat_player[i] = m.seat_player[i];
    ck_assert(pump_until(winner, &m2, has_turn, 5000));
    rpcc_close(c);
    rpcc_close(cb);
    rpcc_close(cc);
    testenv_stop_server(&b);
    testenv_stop_server(&cs);
    testenv_stop(&e);
}
END_TEST

/* Every chip is home: wallets + rake = what the players brought, no seat account holds any. */
static bool all_home(env_t *e, model_t *m)
{
    int nz;
    long long acc = seat_accounts(e, &nz);
    long long rake = redis_int(e, "GET %s", "{croupier:money}:rake:zhajinhua");
    return acc == 0 && wallets(m) + rake == 2000;
}

static bool wait_all_home(env_t *e, model_t *m, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (!all_home(e, m)) {
        if (ts_now_ms() >= end)
            return false;
        ts_sleep_ms(50);
    }
    return true;
}

/* After the servers of a test stopped: every chip home, if need be by the recovery of a fresh
 * server's sweeper (an epoch whose server was killed, or stopped before its table was out). */
static bool home_at_last(env_t *e, model_t *m)
{
    if (all_home(e, m))
        return true;
    testenv_server_t s;
    env_start_other(e, &s);
    bool ok = wait_all_home(e, m, 15000);
    testenv_stop_server(&s);
    return ok;
}

/* Handoff fault: the old server is SIGKILLed right after writing its offer. The table ends
 * adopted by one server (its chips there, returned when that one exits) or, if the dead
 * server's recovery came first, voided with every chip returned -- never both, never lost. */
START_TEST(test_tk_handoff_old_server_killed_after_the_offer)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b;
    env_start_other(&e, &b);
    const uint64_t players[] = {91, 92};
    model_t m;
    rpcc_t *c = drain_to_offer(&e, &m, players);
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGKILL), 0);
    int st;
    ts_proc_wait(e.game.proc, 5000, &st);
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    send_adopt(cb, 200, players[0], m.offer_id);
    Croupier__RpcFrame *r = rpcc_wait_reply(cb, 200, 8000);
    ck_assert_ptr_nonnull(r);
    char *status = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", m.offer_id);
    if (r->reply->code == CROUPIER__ERROR_CODE__OK) {
        ck_assert_str_eq(status, "adopted");
    } else {
        ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__TABLE_CLOSED);
        ck_assert_str_eq(status, "void");
    }
    free(status);
    frame_free_rpc(r);
    /* Wherever the chips are, B's graceful exit (or its sweeper, for the dead epoch) brings them
     * home. */
    rpcc_close(cb);
    testenv_stop_server(&b);
    ck_assert_msg(home_at_last(&e, &m), "chips lost after the old server's SIGKILL");
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* Handoff fault: the adopter is SIGKILLed right after adopting (before the old desk read the
 * adoption or a round was dealt there): the old desk lets go, and the adopter's recovery (a
 * third server's sweeper) returns every chip. */
START_TEST(test_tk_handoff_adopter_killed_after_adopting)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b, d;
    env_start_other(&e, &b);
    const uint64_t players[] = {93, 94};
    model_t m;
    rpcc_t *c = drain_to_offer(&e, &m, players);
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    send_adopt(cb, 300, players[0], m.offer_id);
    Croupier__RpcFrame *r = rpcc_wait_reply(cb, 300, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    ck_assert_int_eq(ts_proc_signal(b.proc, SIGKILL), 0);
    int st;
    ts_proc_wait(b.proc, 5000, &st);
    /* The old server saw the adoption and exits drained, holding nothing. */
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "\"event\":\"tk_table_moved\""));
    /* A third server's sweeper recovers the dead adopter's epoch (lease TTL 900 ms + grace). */
    env_start_other(&e, &d);
    ck_assert_msg(wait_all_home(&e, &m, 15000), "the dead adopter's chips never came home");
    rpcc_close(cb);
    rpcc_close(c);
    testenv_stop_server(&b);
    testenv_stop_server(&d);
    testenv_stop(&e);
}
END_TEST

/* Handoff fault: Redis hangs (SIGSTOP, 2 s) right after the offer. Nothing can be adopted
 * meanwhile (a retriable UNAVAILABLE, nothing moved). Once Redis is back the table is either
 * adopted, exactly once, and the old desk lets go -- or, the old server's move wait (300 ms)
 * having passed, withdrawn and closed there as before (its players told to re-seat, an adoption
 * refused TABLE_CLOSED): one or the other, never both, and every chip comes home. */
START_TEST(test_tk_handoff_survives_redis_paused_mid_handoff)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b;
    env_start_other(&e, &b);
    const uint64_t players[] = {95, 96};
    model_t m;
    rpcc_t *c = drain_to_offer(&e, &m, players);
    ts_redis_pause(e.redis);
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    send_adopt(cb, 400, players[0], m.offer_id);
    Croupier__RpcFrame *r = rpcc_wait_reply(cb, 400, 8000);
    ts_redis_resume(e.redis);
    ck_assert_ptr_nonnull(r);
    int first = r->reply->code;
    frame_free_rpc(r);
    /* Paused longer than the TTL, both servers fence themselves meanwhile (docs/queues.md "A
     * server cut off from Redis"): the adopter answers DRAINING until Redis is back. */
    ck_assert(first == CROUPIER__ERROR_CODE__UNAVAILABLE || first == CROUPIER__ERROR_CODE__OK ||
              first == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED ||
              first == CROUPIER__ERROR_CODE__DRAINING);
    int code = first;
    for (uint64_t rid = 401; code != CROUPIER__ERROR_CODE__OK &&
                             code != CROUPIER__ERROR_CODE__TABLE_CLOSED && rid < 420;
         rid++) {
        ts_sleep_ms(200);
        send_adopt(cb, rid, players[0], m.offer_id);
        r = rpcc_wait_reply(cb, rid, 8000);
        ck_assert_ptr_nonnull(r);
        code = r->reply->code;
        frame_free_rpc(r);
    }
    char *status = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", m.offer_id);
    if (code == CROUPIER__ERROR_CODE__OK)
        ck_assert_str_eq(status, "adopted");
    else
        ck_assert_msg(code == CROUPIER__ERROR_CODE__TABLE_CLOSED &&
                          strcmp(status, "withdrawn") == 0,
                      "adopt answered %d, offer %s", code, status);
    free(status);
    int st;
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 15000, &st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, code == CROUPIER__ERROR_CODE__OK
                                               ? "\"event\":\"tk_table_moved\""
                                               : "\"event\":\"tk_table_move_fallback\""));
    rpcc_close(cb);
    testenv_stop_server(&b); /* its exit cashes an adopted table out */
    ck_assert_msg(home_at_last(&e, &m), "chips lost around the Redis pause");
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_drain_bound_voids_the_round_and_refunds)
{
    env_t e;
    env_start(&e, 1, "60000");
    const uint64_t players[] = {71, 72};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    /* The antes are in the pot; nobody acts; the drain bound (1 s) passes. */
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    ck_assert(pump_until(c, &m, round_over, 8000));
    ck_assert_int_eq(m.voided, 1);
    ck_assert_int_eq(m.completed, 0);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=forced"));
    /* Nothing moved in the voided hand and both stacks were cashed out. */
    ck_assert_int_eq(wallet(&e, 71), 1000);
    ck_assert_int_eq(wallet(&e, 72), 1000);
    int nz;
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    char *h = ts_redis_cmd(e.redis, "XREVRANGE {croupier:history:zhajinhua}:stream + - COUNT 1");
    ck_assert_ptr_nonnull(strstr(h, "\"outcome\":\"voided\""));
    free(h);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* The RSS of a process in KiB (/proc/PID/status VmRSS), -1 when unknown. */
static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long v = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            v = strtol(line + 6, NULL, 10);
    if (f != NULL)
        fclose(f);
    return v;
}

/* Opens n tables and empties them again: BATCH players at a time each join at a stake never
 * used before (so a table each), then leave; the emptied tables are destroyed after their idle
 * time. */
static void open_and_empty(rpcc_t *c, int n, uint64_t *rid, int *batch)
{
    enum { BATCH = 50 };
    for (int done = 0; done < n; done += BATCH, (*batch)++) {
        int64_t base = 1 + (int64_t)*batch * BATCH;
        for (int k = 0; k < BATCH; k++)
            send_join_at(c, (*rid) + (uint64_t)k, 100000 + (uint64_t)k, "zhajinhua", base + k);
        for (int k = 0; k < BATCH; k++)
            ck_assert_int_eq(reply_code(c, (*rid) + (uint64_t)k, NULL), CROUPIER__ERROR_CODE__OK);
        *rid += BATCH;
        for (int k = 0; k < BATCH; k++)
            ck_assert_int_eq(rpcc_leave(c, (*rid) + (uint64_t)k, 100000 + (uint64_t)k), 0);
        for (int k = 0; k < BATCH; k++)
            ck_assert_int_eq(reply_code(c, (*rid) + (uint64_t)k, NULL), CROUPIER__ERROR_CODE__OK);
        *rid += BATCH;
    }
}

static bool tables_gone(env_t *e)
{
    long long end = ts_now_ms() + 10000;
    while (ts_now_ms() < end) {
        if (metric(e, "tk_tables{engine=\"zhajinhua\"} ") == 0)
            return true;
        ts_sleep_ms(50);
    }
    return false;
}

START_TEST(test_tk_empty_tables_are_destroyed_and_memory_stays_bounded)
{
    env_t e;
    env_start(&e, 30, "10000");
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    /* A table emptied and destroyed, then a join opens a new one. */
    wallet_set(&e, 81, 1000);
    uint64_t d1, d2;
    join_ok(c, NULL, 1, 81, &d1);
    ck_assert_int_eq(metric(&e, "tk_tables{engine=\"zhajinhua\"} "), 1);
    ck_assert_int_eq(rpcc_leave(c, 2, 81), 0);
    ck_assert_int_eq(reply_code(c, 2, NULL), CROUPIER__ERROR_CODE__OK);
    ck_assert(tables_gone(&e));
    join_ok(c, NULL, 3, 81, &d2);
    ck_assert_uint_ne(d1, d2);
    ck_assert_int_eq(rpcc_leave(c, 4, 81), 0);
    ck_assert_int_eq(reply_code(c, 4, NULL), CROUPIER__ERROR_CODE__OK);
    ts_sleep_ms(100);
    ck_assert_int_eq(wallet(&e, 81), 1000);

    /* 10,000 tables opened and emptied leave memory where it started (after a warm-up that
     * grows the allocator's, the runtime's and the retry cache's pools to their working size).
     * Players come BATCH at a time, sit (a lone player starts no round) and leave; each table
     * is destroyed after its idle time, so every batch opens new ones. */
    for (int k = 0; k < 50; k++)
        wallet_set(&e, 100000 + (uint64_t)k, 2000000000); /* the stakes climb to 12,000 */
    uint64_t rid = 10;
    int batch = 0, warm = 3000, many = getenv("CROUPIER_VALGRIND") != NULL ? 1000 : 10000;
    if (getenv("CROUPIER_TK_TABLES") != NULL)
        many = atoi(getenv("CROUPIER_TK_TABLES"));
    open_and_empty(c, warm, &rid, &batch);
    ck_assert(tables_gone(&e));
    long opened = metric(&e, "tk_tables_opened_total{engine=\"zhajinhua\"} ");
    /* In two halves: a leak grows the second as much as the first; the allocator's slack is
     * taken early and does not come back. */
    long before = rss_kib(ts_proc_pid(e.game.proc));
    open_and_empty(c, many / 2, &rid, &batch);
    ck_assert(tables_gone(&e));
    long mid = rss_kib(ts_proc_pid(e.game.proc));
    open_and_empty(c, many - many / 2, &rid, &batch);
    ck_assert(tables_gone(&e));
    long after = rss_kib(ts_proc_pid(e.game.proc));
    ck_assert_int_eq(metric(&e, "tk_tables_opened_total{engine=\"zhajinhua\"} ") - opened, many);
    ck_assert_int_gt(before, 0);
    fprintf(stderr, "# rss before %ld KiB, after %d more tables %ld KiB, after %d more %ld KiB\n",
            before, many / 2, mid, many - many / 2, after);
    /* A table costs several KiB (its seats, the game's state, its desk): keeping even a tenth
     * of each would grow each half by far more than this. What is left is the allocator's own
     * slack (its arenas per thread), which does not grow with the number of tables but comes in
     * steps: measured 0 to +4.7 MiB for a half of 5,000 or 10,000 tables, and +9.4 MiB once
     * for 10,000 on a loaded machine, never in both halves. A leak grows both: the smaller
     * half is compared. Under a sanitizer the process keeps freed memory on purpose
     * (ASan's quarantine, TSan's shadow), so there only the tables' destruction is checked. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TK_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TK_TEST_SANITIZED 1
#endif
#endif
#ifdef TK_TEST_SANITIZED
    fprintf(stderr, "# sanitizer build: RSS not compared (the sanitizer keeps freed memory)\n");
#else
    long least = mid - before < after - mid ? mid - before : after - mid;
    ck_assert_msg(least < 4096, "RSS grew %ld KiB, then %ld KiB, over two halves of %d tables",
                  mid - before, after - mid, many);
#endif
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* ---- private rooms (tk.h "rooms") ---------------------------------------------------------- */

/* A Join for a room: by code, or (code NULL) a CreateRoom with these rules. */
static void send_room(rpcc_t *c, uint64_t rid, uint64_t player, const char *code,
                      const Croupier__RoomRules *rules)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    Croupier__RoomJoin rj = CROUPIER__ROOM_JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_GAME;
    j.game = "zhajinhua";
    j.stake = STAKE;
    rj.code = (char *)code;
    rj.create = code == NULL ? (Croupier__RoomRules *)rules : NULL;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
    f.join = &j;
    f.room = &rj;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

static void send_leave(rpcc_t *c, uint64_t rid, uint64_t player, bool disband)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Leave l = CROUPIER__LEAVE__INIT;
    l.has_disband_room = disband;
    l.disband_room = disband;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_LEAVE;
    f.leave = &l;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

/* A room join answered Joined with its room: the seat; the code and desk go to code/desk. */
static int room_joined(rpcc_t *c, uint64_t rid, model_t *m, uint64_t player, char *code,
                       uint64_t *desk)
{
    Croupier__RpcFrame *r;
    ck_assert_int_eq(reply_code(c, rid, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    const Croupier__Joined *j = r->reply->payload->joined;
    ck_assert_ptr_nonnull(j->room);
    ck_assert(room_code_valid(j->room->code));
    ck_assert_int_eq(j->room->state, CROUPIER__ROOM_STATE__ROOM_WAITING);
    if (code != NULL)
        snprintf(code, ROOM_CODE_LEN + 1, "%s", j->room->code);
    if (desk != NULL)
        *desk = j->desk_id;
    m->seat_player[j->seat] = player;
    int seat = (int)j->seat;
    frame_free_rpc(r);
    return seat;
}

static bool room_over(const model_t *m)
{
    return m->room_desk_end >= m->nplayers && m->room_closing >= m->nplayers &&
           m->room_state == CROUPIER__ROOM_STATE__ROOM_FINISHED;
}

/* The room's record as Redis holds it. */
static void room_read(env_t *e, const char *code, room_record_t *out)
{
    char *json = ts_redis_cmd(e->redis, "GET " ROOM_KEY_PREFIX "%s", code);
    ck_assert_ptr_nonnull(json);
    ck_assert_int_eq(room_record_parse(json, strlen(json), out), 0);
    free(json);
}

/* The record once it is in state want (written on the handoff thread, it may trail the
 * players' notices), within 5 s; else the last read. */
static void room_read_state(env_t *e, const char *code, int want, room_record_t *out)
{
    long long end = ts_now_ms() + 5000;
    room_read(e, code, out);
    while ((int)out->state != want && ts_now_ms() < end) {
        ts_sleep_ms(20);
        room_read(e, code, out);
    }
}

/* The final record: every deal once, in order, its scoreboard the sum of the RoundEnds. */
static void check_room_final(env_t *e, const char *code, const model_t *m, int deals)
{
    room_record_t *rec = calloc(1, sizeof *rec);
    room_read_state(e, code, CROUPIER__ROOM_STATE__ROOM_FINISHED, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_FINISHED);
    ck_assert_int_eq(rec->played, deals);
    ck_assert_int_eq(m->nrounds, deals);
    int64_t total = 0;
    for (int i = 0; i < deals; i++) {
        ck_assert_str_eq(rec->rounds[i], m->rounds[i]);
        /* each deal settled once: its settle record exists */
        ck_assert_int_eq(redis_int((env_t *)e, "EXISTS {croupier:money}:round:%s", m->rounds[i]),
                         1);
    }
    for (int k = 0; k < rec->nscores; k++) {
        total += rec->scores[k].total;
        int found = 0;
        for (int p = 0; p < m->nplayers; p++)
            if (m->players[p] == rec->scores[k].player) {
                ck_assert_int_eq(rec->scores[k].total, m->won[p]);
                found = 1;
            }
        ck_assert(found);
    }
    ck_assert_int_eq(total, -m->rake);
    free(rec);
}

/* Plays the deals of a room on link c (everyone folds in turn) until its end. */
static void play_room_out(rpcc_t *c, model_t *m, uint64_t *rid)
{
    long long end = ts_now_ms() + 30000;
    while (!room_over(m) && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f != NULL) {
            model_apply(m, f);
            frame_free_rpc(f);
        }
        if (m->turn_seat >= 0 && m->seat_player[m->turn_seat] != m->hands_off) {
            uint64_t p = m->seat_player[m->turn_seat];
            m->turn_seat = -1;
            send_move(c, ++*rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
            ck_assert_int_eq(reply_code(c, *rid, NULL), CROUPIER__ERROR_CODE__OK);
        }
    }
    ck_assert_msg(room_over(m), "the room did not end (%d deals seen)", m->nrounds);
}

/* A room (tk.h "rooms") is made by CreateRoom with its rules (checked), never advertised,
 * joined by its code only, refuses what its state forbids with the room's own codes, deals
 * once full, pushes its scoreboard after every deal and ends after its last: everyone told,
 * cashed out, the record final. A host disbands a room that has not started; one not full
 * within its wait is disbanded. */
START_TEST(test_tk_room_is_joined_by_code_plays_its_deals_and_ends_with_its_scoreboard)
{
    env_t e;
    env_start_gap(&e, 30, "10000", "1500");
    const uint64_t players[] = {301, 302, 303, 304, 305, 306};
    for (int i = 0; i < 6; i++)
        wallet_set(&e, players[i], 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m, &e, players, 3);
    uint64_t rid = 1;
    /* Rules the engine cannot play are refused and open nothing. */
    Croupier__RoomRules bad = CROUPIER__ROOM_RULES__INIT;
    bad.deals = 2;
    bad.has_seats = true;
    bad.seats = 7;
    send_room(c, ++rid, players[0], NULL, &bad);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__BAD_REQUEST);
    bad.has_seats = false;
    bad.has_bot_fill = bad.bot_fill = true;
    send_room(c, ++rid, players[0], NULL, &bad);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__BAD_REQUEST);
    bad.has_bot_fill = bad.bot_fill = false;
    char *opt = "no-such-option";
    bad.n_rule_options = 1;
    bad.rule_options = &opt;
    send_room(c, ++rid, players[0], NULL, &bad);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__BAD_REQUEST);
    ck_assert_int_eq(wallet(&e, players[0]), 1000);

    Croupier__RoomRules rules = CROUPIER__ROOM_RULES__INIT;
    rules.deals = 2;
    char code[ROOM_CODE_LEN + 1];
    uint64_t desk, desk_b, desk_d;
    send_room(c, ++rid, players[0], NULL, &rules);
    room_joined(c, rid, &m, players[0], code, &desk);
    room_record_t *rec = calloc(1, sizeof *rec);
    room_read(&e, code, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_WAITING);
    ck_assert_uint_eq(rec->host, players[0]);
    ck_assert_int_eq(rec->seats, 3);
    ck_assert_uint_eq(rec->desk, desk);
    /* A plain join never lands in the room; the room is never advertised, the table is. */
    ck_assert_int_ne(join_ok(c, NULL, ++rid, players[3], &desk_d), -1);
    ck_assert_uint_ne(desk_d, desk);
    ck_assert_int_eq(redis_int(&e, "ZCARD %s", "{croupier:lobby}:ads"), 1);
    /* Unknown code, then the code. */
    char other[16];
    snprintf(other, sizeof other, "%06ld", (strtol(code, NULL, 10) + 1) % 1000000);
    send_room(c, ++rid, players[1], other, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_NOT_FOUND);
    send_room(c, ++rid, players[1], code, NULL);
    room_joined(c, rid, &m, players[1], NULL, &desk_b);
    ck_assert_uint_eq(desk_b, desk);
    send_leave(c, ++rid, players[1], true);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__NOT_HOST);
    send_room(c, ++rid, players[2], code, NULL);
    room_joined(c, rid, &m, players[2], NULL, NULL);
    /* Full (the first deal waits for the gap), then started. */
    send_room(c, ++rid, players[4], code, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_FULL);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    send_room(c, ++rid, players[4], code, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_STARTED);
    send_leave(c, ++rid, players[0], false);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_STARTED);
    send_leave(c, ++rid, players[0], true);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_STARTED);
    room_read_state(&e, code, CROUPIER__ROOM_STATE__ROOM_PLAYING, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_PLAYING);
    /* The refused leaver's turns are played for them (quickly: not their 10 s turn time). */
    m.hands_off = players[0];
    long long until = ts_now_ms() + 8000;
    while (m.timed_out == 0 && ts_now_ms() < until) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f != NULL) {
            model_apply(&m, f);
            frame_free_rpc(f);
        }
        if (m.turn_seat >= 0 && m.seat_player[m.turn_seat] != players[0]) {
            uint64_t p = m.seat_player[m.turn_seat];
            m.turn_seat = -1;
            send_move(c, ++rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
            ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__OK);
        }
    }
    ck_assert_msg(m.timed_out > 0, "the leaver's turn was not played for them");
    /* Two deals: a scoreboard after the first, the final one after the second. */
    play_room_out(c, &m, &rid);
    ck_assert_int_eq(m.room_played, 2);
    ck_assert_int_eq(m.room_infos, 3 * 2); /* each of 3 players: deal 1, the end */
    ck_assert_int_eq(m.room_closing, 3);
    ck_assert_int_eq(m.room_desk_end, 3);
    check_room_final(&e, code, &m, 2);
    long long keep = redis_int(&e, "PTTL " ROOM_KEY_PREFIX "%s", code);
    ck_assert(keep > 0 && keep <= 86400000);
    send_room(c, ++rid, players[4], code, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_ENDED);
    /* The players left the room with their chips. */
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    ck_assert_int_eq(rake, m.rake);
    ck_assert_int_eq(wallets(&m) + rake, 3000);
    ck_assert_int_eq(rpcc_resume(c, ++rid, players[0]), 0);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__NOT_SEATED);

    /* A second room: a guest leaves it, its host disbands it before the first deal. */
    model_t m2;
    model_init(&m2, &e, players + 4, 2);
    char code2[ROOM_CODE_LEN + 1];
    send_room(c, ++rid, players[4], NULL, &rules);
    room_joined(c, rid, &m2, players[4], code2, NULL);
    ck_assert_str_ne(code2, code);
    send_room(c, ++rid, players[5], code2, NULL);
    room_joined(c, rid, &m2, players[5], NULL, NULL);
    send_leave(c, ++rid, players[5], false);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__OK);
    send_leave(c, ++rid, players[4], true);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__OK);
    room_read_state(&e, code2, CROUPIER__ROOM_STATE__ROOM_DISBANDED, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_DISBANDED);
    ck_assert_str_eq(rec->detail, "the host disbanded the room");
    send_room(c, ++rid, players[5], code2, NULL);
    ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__ROOM_ENDED);
    long long end = ts_now_ms() + 5000;
    while ((wallet(&e, players[4]) != 1000 || wallet(&e, players[5]) != 1000) && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(wallet(&e, players[4]), 1000);
    ck_assert_int_eq(wallet(&e, players[5]), 1000);

    /* A third room nobody else joins: its wait (--zhajinhua-room-wait-ms) ends it. */
    Croupier__RpcFrame *old;
    while ((old = rpcc_next_event(c, 300)) != NULL)
        frame_free_rpc(old); /* the second room's last events */
    model_t m3;
    model_init(&m3, &e, players + 4, 1);
    char code3[ROOM_CODE_LEN + 1];
    long long made = ts_now_ms();
    send_room(c, ++rid, players[4], NULL, &rules);
    room_joined(c, rid, &m3, players[4], code3, NULL);
    ck_assert_int_lt(wallet(&e, players[4]), 1000);
    end = ts_now_ms() + 8000;
    while (m3.room_closing == 0 && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f != NULL) {
            model_apply(&m3, f);
            frame_free_rpc(f);
        }
    }
    ck_assert_int_eq(m3.room_closing, 1);
    ck_assert_int_eq(m3.room_state, CROUPIER__ROOM_STATE__ROOM_DISBANDED);
    ck_assert_int_ge(ts_now_ms() - made, 3500); /* not before its wait */
    room_read_state(&e, code3, CROUPIER__ROOM_STATE__ROOM_DISBANDED, rec);
    ck_assert_int_eq(rec->state, CROUPIER__ROOM_STATE__ROOM_DISBANDED);
    ck_assert_str_eq(rec->detail, "the room was not full in time");
    end = ts_now_ms() + 5000;
    while (wallet(&e, players[4]) != 1000 && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(wallet(&e, players[4]), 1000);
    free(rec);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* A room moves with a whole-table move (tk.h "moves"): the drained server finishes its deal,
 * the adopter seats the room's players with its scoreboard and plays the deals left; the
 * record follows the room, and the final scoreboard is the sum of every deal's RoundEnd. */
START_TEST(test_tk_room_moves_whole_and_plays_its_remaining_deals_on_the_adopter)
{
    env_t e;
    env_start(&e, 30, "10000");
    testenv_server_t b;
    env_start_other(&e, &b);
    const uint64_t players[] = {311, 312, 313};
    for (int i = 0; i < 3; i++)
        wallet_set(&e, players[i], 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m, &e, players, 3);
    uint64_t rid = 1;
    Croupier__RoomRules rules = CROUPIER__ROOM_RULES__INIT;
    rules.deals = 3;
    char code[ROOM_CODE_LEN + 1];
    send_room(c, ++rid, players[0], NULL, &rules);
    int seat0 = room_joined(c, rid, &m, players[0], code, NULL);
    room_record_t *rec = calloc(1, sizeof *rec);
    room_read(&e, code, rec);
    char first[ROOM_ID_MAX + 1];
    snprintf(first, sizeof first, "%s", rec->server);
    for (int i = 1; i < 3; i++) {
        send_room(c, ++rid, players[i], code, NULL);
        room_joined(c, rid, &m, players[i], NULL, NULL);
    }
    /* Deal 1 runs when the server starts to drain: it finishes there, then the table moves. */
    ck_assert(pump_until(c, &m, has_turn, 5000));
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 5000, NULL), 200);
    long long end = ts_now_ms() + 10000;
    while (m.offers < 3 && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f != NULL) {
            model_apply(&m, f);
            frame_free_rpc(f);
        }
        if (m.turn_seat >= 0) {
            uint64_t p = m.seat_player[m.turn_seat];
            m.turn_seat = -1;
            send_move(c, ++rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
            ck_assert_int_eq(reply_code(c, rid, NULL), CROUPIER__ERROR_CODE__OK);
        }
    }
    ck_assert_int_eq(m.offers, 3);
    ck_assert_int_eq(m.nrounds, 1);
    ck_assert_int_eq(m.room_closing, 0); /* moved, not ended */
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    for (int i = 0; i < 3; i++) {
        send_adopt(cb, 100 + i, players[i], m.offer_id);
        Croupier__RpcFrame *r = rpcc_wait_reply(cb, 100 + i, 5000);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
        const Croupier__Snapshot *sn = r->reply->payload->snapshot;
        ck_assert_ptr_nonnull(sn->room);
        ck_assert_str_eq(sn->room->code, code);
        ck_assert_uint_eq(sn->room->deals_played, 1);
        ck_assert_int_eq(sn->room->state, CROUPIER__ROOM_STATE__ROOM_PLAYING);
        if (i == 0)
            ck_assert_int_eq((int)sn->your_seat, seat0);
        frame_free_rpc(r);
    }
    end = ts_now_ms() + 5000;
    do {
        room_read(&e, code, rec);
    } while (strcmp(rec->server, first) == 0 && ts_now_ms() < end && (ts_sleep_ms(20), 1));
    ck_assert_str_ne(rec->server, first);
    ck_assert_int_eq(rec->played, 1);
    free(rec);
    rid = 200;
    play_room_out(cb, &m, &rid);
    check_room_final(&e, code, &m, 3);
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    int nz;
    ck_assert_int_eq(wallets(&m) + seat_accounts(&e, &nz) + rake, 3000);
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    rpcc_close(c);
    rpcc_close(cb);
    testenv_stop_server(&b);
    testenv_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tk");
    TCase *tc = tcase_create("seats");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tk_join_buys_in_min_of_wallet_and_cap_and_refuses_below_minimum);
    tcase_add_test(tc, test_tk_leaver_is_cashed_out_after_the_round);
    suite_add_tcase(s, tc);
    tc = tcase_create("rounds");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tk_rounds_settle_against_seat_accounts_with_history_and_rake);
    tcase_add_test(tc, test_tk_refusals_have_codes_and_change_nothing);
    tcase_add_test(tc,
                   test_tk_round_end_waits_for_its_settlement_and_a_refused_one_voids_the_round);
    tcase_add_test(tc, test_tk_resume_shows_own_cards_only_after_looking);
    tcase_add_test(tc, test_tk_timeout_folds_and_puts_the_seat_on_trustee);
    suite_add_tcase(s, tc);
    tc = tcase_create("drain");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tk_drain_cashes_out_before_the_move_is_announced);
    tcase_add_test(tc, test_tk_drain_moves_the_table_whole_to_one_adopter);
    tcase_add_test(tc, test_tk_handoff_old_server_killed_after_the_offer);
    tcase_add_test(tc, test_tk_handoff_adopter_killed_after_adopting);
    tcase_add_test(tc, test_tk_handoff_survives_redis_paused_mid_handoff);
    tcase_add_test(tc, test_tk_drain_bound_voids_the_round_and_refunds);
    suite_add_tcase(s, tc);
    tc = tcase_create("rooms");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tk_room_is_joined_by_code_plays_its_deals_and_ends_with_its_scoreboard);
    tcase_add_test(tc, test_tk_room_moves_whole_and_plays_its_remaining_deals_on_the_adopter);
    suite_add_tcase(s, tc);
    tc = tcase_create("lifecycle");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_tk_empty_tables_are_destroyed_and_memory_stays_bounded);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
