/*
 * The traditional engine (games/traditional/trad_engine.c) in the real croupier-game binary,
 * with a real redis-server, driven through a real rpc link (rpcc) as a gateway would: joins,
 * bids and plays of Dou Dizhu through the protocol, illegal moves refused with their codes and
 * the state unchanged, resume snapshots, bot fill and trustee play, escrowed settlement that
 * reconciles with the wallets, the drain (the deal finishes, no other starts) and the drain
 * bound (the deal is voided, the wallets are back where they were, exit reason=forced).
 * Rules: docs/rules/doudizhu.md, docs/rules/bigtwo.md, docs/rules/traditional-engine.md.
 *
 * The engine stands on the table kit (engine/tk.h); where the kit changed what a client sees,
 * the tests follow it (docs/rules/traditional-engine.md, "Since the table kit"): the turn time
 * is CROUPIER_TRAD_ACTION_MS (was _TURN_MS), trustee's delay CROUPIER_TRAD_TRUSTEE_MS (was
 * _BOT_MS's), a full table's first deal waits the gap too, and a seat keeps one stack topped up
 * after each deal.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "rpcc.h"
#include "support.h"
#include "testenv.h"
#include "trad_engine.h"

/* ---- pure helpers of the engine ----------------------------------------------------------- */

START_TEST(test_trad_wire_cards_round_trip_every_card)
{
    shed_card_t deck[SHED_MAX_CARDS];
    int n = shed_deck_build(deck, 1, true);
    ck_assert_int_eq(n, 54);
    uint8_t seen[256] = {0};
    for (int i = 0; i < n; i++) {
        uint8_t w = trad_card_to_wire(deck[i]);
        ck_assert(frame_card_valid(w));
        ck_assert_int_eq(seen[w], 0);
        seen[w] = 1;
        ck_assert_int_eq(trad_card_from_wire(w), deck[i]);
    }
    /* 3 of diamonds: core rank 0 suit 0; wire rank 3, suit 1 (diamonds). */
    ck_assert_int_eq(trad_card_to_wire(shed_card_make(0, 0, SHED_SUIT_D)), FRAME_CARD(3, 1));
    ck_assert_int_eq(trad_card_to_wire(shed_card_make(0, SHED_RANK_2, SHED_SUIT_S)),
                     FRAME_CARD(2, 3));
    ck_assert_int_eq(trad_card_to_wire(SHED_CARD_RJ), FRAME_CARD_RED_JOKER);
    ck_assert_int_eq(trad_card_from_wire(FRAME_CARD(15, 2)), SHED_CARD_NONE);
}
END_TEST

START_TEST(test_trad_wire_cards_map_to_held_copies)
{
    shed_card_t c = shed_card_make(0, 5, SHED_SUIT_H);
    uint8_t w = trad_card_to_wire(c);
    shed_set_t hand = {{0, 0}}, out;
    shed_set_add(&hand, c);
    shed_set_add(&hand, (shed_card_t)(c + 64));
    uint8_t two[2] = {w, w};
    /* one deck: a card listed twice is refused */
    ck_assert_int_eq(trad_cards_from_wire(two, 2, 1, hand, &out), -EINVAL);
    /* two decks: both copies */
    ck_assert_int_eq(trad_cards_from_wire(two, 2, 2, hand, &out), 0);
    ck_assert_int_eq(shed_set_size(out), 2);
    uint8_t three[3] = {w, w, w};
    ck_assert_int_eq(trad_cards_from_wire(three, 3, 2, hand, &out), -EINVAL);
    /* only the deck-1 copy held: it is taken */
    shed_set_t h1 = {{0, 0}};
    shed_set_add(&h1, (shed_card_t)(c + 64));
    ck_assert_int_eq(trad_cards_from_wire(&w, 1, 2, h1, &out), 0);
    ck_assert(shed_set_has(out, (shed_card_t)(c + 64)));
    /* not held */
    shed_set_t empty = {{0, 0}};
    ck_assert_int_eq(trad_cards_from_wire(&w, 1, 1, empty, &out), -ENOENT);
}
END_TEST

START_TEST(test_trad_settle_cap_keeps_the_sum_and_the_cap)
{
    /* landlord lost 2 x 3 x 2^6 = 384 at stake 1, cap 96 */
    int64_t d[3] = {-384, 192, 192};
    int64_t rake = trad_settle_cap(d, 3, 96, 0);
    ck_assert_int_eq(rake, 0);
    ck_assert_int_eq(d[0], -96);
    ck_assert_int_eq(d[1] + d[2], 96);
    /* uneven shares with rake: the sum stays -rake, no loss above the cap */
    int64_t e[4] = {-100, -37, 130, 7};
    rake = trad_settle_cap(e, 4, 39, 50);
    ck_assert_int_eq(e[0] + e[1] + e[2] + e[3], -rake);
    ck_assert_int_ge(e[0], -39);
    ck_assert_int_ge(e[1], -39);
    ck_assert_int_gt(rake, 0);
    /* under the cap nothing changes but the rake */
    int64_t f[3] = {-10, -5, 15};
    rake = trad_settle_cap(f, 3, 96, 100);
    ck_assert_int_eq(f[0], -10);
    ck_assert_int_eq(f[2], 14);
    ck_assert_int_eq(rake, 1);
}
END_TEST

/* ---- the real binary ------------------------------------------------------------------------ */

/* redis-server and croupier-game --engine traditional (tests/support/testenv.h). */
typedef struct {
    testenv_t rig;
} env_t;

static void env_start(env_t *e, int drain_max_s, const char *games, char *const env[])
{
    memset(e, 0, sizeof *e);
    ck_assert_int_eq(testenv_start(&e->rig, NULL), 0);
    /* One server without a gateway: a drained table closes and its players are re-seated one
     * by one (tk.h "moves"; whole-table moves are tested in test_tk, test_gate and the e2e
     * move_exact_buyin). */
    ck_assert_int_eq(
        testenv_start_game(&e->rig, &e->rig.game, "traditional", drain_max_s,
                           (char *[]){"--games", (char *)games, "--trad-move-wait-ms", "-1", NULL},
                           env),
        0);
}

static void env_stop(env_t *e)
{
    testenv_stop(&e->rig);
}

static void wallet_set(env_t *e, const char *who, long v)
{
    free(ts_redis_cmd(e->rig.redis, "SET {croupier:money}:wallet:%s %ld", who, v));
}

static long redis_long(env_t *e, const char *key)
{
    char *r = ts_redis_cmd(e->rig.redis, "GET %s", key);
    ck_assert_ptr_nonnull(r);
    long v = strcmp(r, "(nil)") == 0 ? 0 : strtol(r, NULL, 10);
    free(r);
    return v;
}

static long wallet(env_t *e, const char *who)
{
    char key[128];
    snprintf(key, sizeof key, "{croupier:money}:wallet:%s", who);
    return redis_long(e, key);
}

/* /drain/status's human_desks (testenv_human_desks), asserted to be there. */
static long human_desks(env_t *e)
{
    long v = testenv_human_desks(&e->rig.game);
    ck_assert_int_ge(v, 0);
    return v;
}

static uint64_t next_rid = 100;

/* Joins and returns the reply code; *seat gets the seat on success. */
/* Rule option names joined by '+' into buf (len bytes). */
static void format_options(char *const *names, size_t n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i > 0 ? "+" : "", names[i]);
}

/* Joins; on OK gives the seat and, when opts is not NULL, the Joined's rule options joined by
 * '+' and its bomb units (0 when absent). Returns the reply code. */
static int join_options(rpcc_t *c, uint64_t player, const char *game, int64_t stake, int *seat,
                        char *opts, size_t len, uint32_t *units)
{
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_join(c, rid, player, game, stake, 0), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    int code = r->reply->code;
    if (code == CROUPIER__ERROR_CODE__OK) {
        ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
        const Croupier__Joined *j = r->reply->payload->joined;
        ck_assert_str_eq(j->game, game);
        if (seat != NULL)
            *seat = (int)j->seat;
        if (opts != NULL) {
            format_options(j->rule_options, j->n_rule_options, opts, len);
            *units = j->has_bomb_units ? j->bomb_units : 0;
        }
    }
    frame_free_rpc(r);
    return code;
}

static int join(rpcc_t *c, uint64_t player, const char *game, int64_t stake, int *seat)
{
    return join_options(c, player, game, stake, seat, NULL, 0, NULL);
}

/* Sends a shedding action (or a hold'em one when holdem is true); returns the reply code. */
static int act(rpcc_t *c, uint64_t player, Croupier__SheddingMove move, const uint8_t *cards,
               size_t n, int bid, bool holdem)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction sa = CROUPIER__SHEDDING_ACTION__INIT;
    Croupier__HoldemAction ha = CROUPIER__HOLDEM_ACTION__INIT;
    uint64_t rid = next_rid++;
    f.request_id = rid;
    f.has_player_id = true;
    f.player_id = player;
    f.has_session_id = true;
    f.session_id = player;
    f.has_deadline_unix_ms = true;
    f.deadline_unix_ms = (uint64_t)(rpcc_wall_ms() + 5000);
    if (holdem) {
        ha.move = CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK;
        a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
        a.holdem = &ha;
    } else {
        sa.move = move;
        if (move == CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY) {
            sa.has_cards = true;
            sa.cards.data = (uint8_t *)cards;
            sa.cards.len = n;
        }
        if (move == CROUPIER__SHEDDING_MOVE__SHEDDING_BID) {
            sa.has_bid = true;
            sa.bid = (uint32_t)bid;
        }
        a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
        a.shedding = &sa;
    }
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    int code = r->reply->code;
    frame_free_rpc(r);
    return code;
}

/* A pass by player, which the server accepts. */
static void pass_ok(rpcc_t *c, uint64_t player)
{
    ck_assert_int_eq(act(c, player, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, NULL, 0, 0, false),
                     CROUPIER__ERROR_CODE__OK);
}

/* A player's view of the table, from a Resume. */
typedef struct {
    bool in_round;
    int turn, phase, declarer, last_seat;
    uint32_t time_left;
    uint8_t hand[32], last[32], kitty[8];
    size_t nhand, nlast, nkitty;
    uint32_t left[4];
    uint8_t packed[2048]; /* the snapshot packed with time_left cleared (for "unchanged") */
    size_t npacked;
} view_t;

static void resume(rpcc_t *c, uint64_t player, view_t *v)
{
    uint64_t rid = next_rid++;
    memset(v, 0, sizeof *v);
    ck_assert_int_eq(rpcc_resume(c, rid, player), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    Croupier__Snapshot *s = r->reply->payload->snapshot;
    ck_assert_int_eq(s->engine, CROUPIER__ENGINE__ENGINE_TRADITIONAL);
    v->in_round = s->round_id != NULL && s->round_id[0] != '\0';
    v->turn = s->has_turn_seat ? (int)s->turn_seat : -1;
    v->time_left = s->time_left_ms;
    v->declarer = -1;
    v->last_seat = -1;
    if (s->state_case == CROUPIER__SNAPSHOT__STATE_SHEDDING) {
        Croupier__SheddingState *st = s->shedding;
        v->phase = st->phase;
        v->nhand = st->hand.len;
        if (st->hand.len > 0) /* an empty bytes field may have no data pointer */
            memcpy(v->hand, st->hand.data, st->hand.len);
        v->nlast = st->last_play.len;
        if (st->last_play.len > 0)
            memcpy(v->last, st->last_play.data, st->last_play.len);
        v->last_seat = st->has_last_play_seat ? (int)st->last_play_seat : -1;
        v->nkitty = st->kitty.len;
        if (st->kitty.len > 0)
            memcpy(v->kitty, st->kitty.data, st->kitty.len);
        v->declarer = st->has_declarer_seat ? (int)st->declarer_seat : -1;
        for (size_t i = 0; i < st->n_cards_left && i < 4; i++)
            v->left[i] = st->cards_left[i];
    }
    s->has_time_left_ms = false;
    s->time_left_ms = 0;
    r->reply->payload->request_id = 0;
    r->reply->payload->has_request_id = false;
    size_t len = protobuf_c_message_get_packed_size(&r->reply->payload->base);
    ck_assert_uint_le(len, sizeof v->packed);
    v->npacked = protobuf_c_message_pack(&r->reply->payload->base, v->packed);
    frame_free_rpc(r);
}

static bool view_same(const view_t *a, const view_t *b)
{
    return a->npacked == b->npacked && memcmp(a->packed, b->packed, a->npacked) == 0;
}

/* Resumes player until its table is in a deal (5 s at most) and asserts it is. On the table kit
 * a full table deals after the gap (CROUPIER_TRAD_GAP_MS), its first deal too; the engine before
 * the kit dealt a full table's first deal at once. */
static void wait_in_round(rpcc_t *c, uint64_t player, view_t *v)
{
    long long end = ts_now_ms() + 5000;
    resume(c, player, v);
    while (!v->in_round && ts_now_ms() < end) {
        ts_sleep_ms(20);
        resume(c, player, v);
    }
    ck_assert(v->in_round);
}

/* Dou Dizhu strength of a wire card: 3..A, 2, black joker, red joker = 0..14. */
static int ddz_strength(uint8_t w)
{
    int r = w >> 2;
    if (r == 15)
        return 13 + (w & 3);
    return r == 2 ? 12 : r - 3;
}

static int lowest(const view_t *v)
{
    int b = 0;
    for (size_t i = 1; i < v->nhand; i++)
        if (ddz_strength(v->hand[i]) < ddz_strength(v->hand[b]))
            b = (int)i;
    return b;
}

static int highest(const view_t *v)
{
    int b = 0;
    for (size_t i = 1; i < v->nhand; i++)
        if (ddz_strength(v->hand[i]) > ddz_strength(v->hand[b]))
            b = (int)i;
    return b;
}

/* What the events told the gateway so far. */
typedef struct {
    int round_ends, completed, voided, desk_closings, table_closings, timed_out_plays, plays;
    int void_reason;
    long delta[8]; /* by player index (player id - base) */
    long rake;
    char round_id[128];
} seen_t;

static void collect(rpcc_t *c, seen_t *s, uint64_t base, int timeout_ms)
{
    for (;;) {
        Croupier__RpcFrame *f = rpcc_next_event(c, timeout_ms);
        if (f == NULL)
            return;
        timeout_ms = 0;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING)
            s->desk_closings += (int)f->desk_closing->n_player_ids;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH) {
            Croupier__ServerMessage *m = f->push;
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING)
                s->table_closings++;
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_PLAY) {
                s->plays++;
                s->timed_out_plays += m->play->timed_out;
            }
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END &&
                strcmp(m->round_end->round_id, s->round_id) != 0) {
                Croupier__RoundEnd *re = m->round_end;
                snprintf(s->round_id, sizeof s->round_id, "%s", re->round_id);
                s->round_ends++;
                s->completed += re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
                s->voided += re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED;
                s->void_reason = re->void_reason;
                s->rake += re->rake;
                long sum = 0;
                for (size_t i = 0; i < re->n_deltas; i++) {
                    sum += re->deltas[i]->delta;
                    uint64_t p = re->deltas[i]->player_id;
                    if (p >= base && p < base + 8)
                        s->delta[p - base] += re->deltas[i]->delta;
                }
                ck_assert_int_eq(sum, -re->rake);
            }
        }
        frame_free_rpc(f);
    }
}

#define P0 7001

/*
 * Three players at Dou Dizhu, stake 10: a poor player is refused; no deal before the table is
 * full; illegal bids and plays are refused with their codes and nothing changes; the deal is
 * played out through rpc (bid 3, then the leader sheds singles and the others pass); resume
 * gives full snapshots; the deal settles. Then /drain: no other deal starts, human_desks stays
 * 0 with the players seated, every seat is told; the exit is "drained" and the wallets hold
 * exactly 5000 + the announced deltas, the house's rake making up the rest.
 */
START_TEST(test_ddz_three_players_play_a_deal_that_settles_and_drain_starts_no_other)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=20000", "CROUPIER_TRAD_BOT_FILL_MS=-1",
                   "CROUPIER_TRAD_GAP_MS=200", "CROUPIER_TRAD_RAKE_PERMILLE=50", NULL};
    env_start(&e, 30, "doudizhu", env);
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", P0 + i);
        wallet_set(&e, name, 5000);
    }
    wallet_set(&e, "7009", 500);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);

    /* The escrow of Dou Dizhu at stake 10 is 960: a wallet of 500 cannot sit. */
    ck_assert_int_eq(join(c, 7009, "doudizhu", 10, NULL), CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
    ck_assert_int_eq(wallet(&e, "7009"), 500);
    ck_assert_int_eq(join(c, 7010, "bigtwo", 1, NULL), CROUPIER__ERROR_CODE__NO_SUCH_GAME);

    int seat_of[3];
    ck_assert_int_eq(join(c, P0, "doudizhu", 10, &seat_of[0]), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(join(c, P0 + 1, "doudizhu", 10, &seat_of[1]), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, P0, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, NULL, 0, 0, false),
                     CROUPIER__ERROR_CODE__NO_ROUND);
    ck_assert_int_eq(join(c, P0 + 2, "doudizhu", 10, &seat_of[2]), CROUPIER__ERROR_CODE__OK);
    uint64_t by_seat[3];
    for (int i = 0; i < 3; i++)
        by_seat[seat_of[i]] = P0 + (uint64_t)i;
    view_t v, w;
    wait_in_round(c, P0, &v);
    /* One desk with humans: theirs. Read until it settles: under ASan beside the other stages
     * the count once said 2 just as the round began (not explained; a lasting 2 still fails). */
    long long settle = ts_now_ms() + 3000;
    while (human_desks(&e) != 1 && ts_now_ms() < settle)
        ts_sleep_ms(20);
    ck_assert_int_eq(human_desks(&e), 1);

    /* Bidding. */
    ck_assert_int_eq(v.phase, CROUPIER__SHEDDING_PHASE__SHEDDING_BIDDING);
    ck_assert_int_eq(v.nhand, 17);
    ck_assert_int_ge(v.turn, 0);
    ck_assert_uint_gt(v.time_left, 0);
    ck_assert_uint_le(v.time_left, 20000);
    uint64_t bidder = by_seat[v.turn];
    uint64_t other = by_seat[(v.turn + 1) % 3];
    resume(c, bidder, &v);
    ck_assert_int_eq(act(c, other, CROUPIER__SHEDDING_MOVE__SHEDDING_BID, NULL, 0, 3, false),
                     CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
    ck_assert_int_eq(act(c, bidder, CROUPIER__SHEDDING_MOVE__SHEDDING_BID, NULL, 0, 4, false),
                     CROUPIER__ERROR_CODE__ILLEGAL_MOVE);
    ck_assert_int_eq(act(c, bidder, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, v.hand, 1, 0, false),
                     CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    ck_assert_int_eq(act(c, bidder, 0, NULL, 0, 0, true), CROUPIER__ERROR_CODE__WRONG_ENGINE);
    resume(c, bidder, &w);
    ck_assert(view_same(&v, &w));
    ck_assert_int_eq(act(c, bidder, CROUPIER__SHEDDING_MOVE__SHEDDING_BID, NULL, 0, 3, false),
                     CROUPIER__ERROR_CODE__OK);

    /* The landlord took the three bottom cards; everybody sees them. */
    uint64_t landlord = bidder;
    resume(c, landlord, &v);
    ck_assert_int_eq(v.phase, CROUPIER__SHEDDING_PHASE__SHEDDING_PLAYING);
    ck_assert_int_eq(v.nhand, 20);
    ck_assert_int_eq(v.nkitty, 3);
    ck_assert_int_eq(by_seat[v.declarer], landlord);
    ck_assert_int_eq(by_seat[v.turn], landlord);
    ck_assert_int_eq(v.left[v.declarer], 20);

    /* Leading: a pass is refused (the leader must play). */
    ck_assert_int_eq(act(c, landlord, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, NULL, 0, 0, false),
                     CROUPIER__ERROR_CODE__ILLEGAL_MOVE);
    /* Cards not held: a card from another hand. */
    view_t ov;
    uint64_t peasant = by_seat[(v.turn + 1) % 3];
    resume(c, peasant, &ov);
    ck_assert_int_eq(act(c, landlord, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, ov.hand, 1, 0, false),
                     CROUPIER__ERROR_CODE__CARDS_NOT_HELD);
    /* Malformed: the lowest card and a card of another rank (no combination). */
    uint8_t two[2] = {v.hand[lowest(&v)], v.hand[highest(&v)]};
    ck_assert_int_ne(ddz_strength(two[0]), ddz_strength(two[1]));
    if (!(ddz_strength(two[0]) >= 13 && ddz_strength(two[1]) >= 13))
        ck_assert_int_eq(act(c, landlord, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, two, 2, 0, false),
                         CROUPIER__ERROR_CODE__ILLEGAL_MOVE);
    /* The same card twice. */
    uint8_t dup[2] = {two[0], two[0]};
    ck_assert_int_eq(act(c, landlord, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, dup, 2, 0, false),
                     CROUPIER__ERROR_CODE__ILLEGAL_MOVE);
    /* Bidding is over. */
    ck_assert_int_eq(act(c, landlord, CROUPIER__SHEDDING_MOVE__SHEDDING_BID, NULL, 0, 3, false),
                     CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    resume(c, landlord, &w);
    ck_assert(view_same(&v, &w));

    /* The landlord leads its highest single; the next player's lowest is too weak. */
    uint8_t high = v.hand[highest(&v)];
    ck_assert_int_eq(act(c, landlord, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, &high, 1, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    resume(c, peasant, &ov);
    ck_assert_int_eq(by_seat[ov.turn], peasant);
    ck_assert_int_eq(ov.nlast, 1);
    ck_assert_int_eq(ov.last[0], high);
    ck_assert_int_eq(by_seat[ov.last_seat], landlord);
    uint8_t low = ov.hand[lowest(&ov)];
    ck_assert_int_le(ddz_strength(low), ddz_strength(high));
    ck_assert_int_eq(act(c, peasant, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, &low, 1, 0, false),
                     CROUPIER__ERROR_CODE__TOO_WEAK);
    ck_assert_int_eq(act(c, landlord, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, NULL, 0, 0, false),
                     CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
    resume(c, peasant, &w);
    ck_assert(view_same(&ov, &w));

    /* Play it out: the player to act leads its lowest single, or passes. */
    seen_t seen = {0};
    for (int steps = 0; steps < 200; steps++) {
        resume(c, P0, &v);
        if (!v.in_round)
            break;
        if (v.turn < 0) { /* the deal ended: its RoundEnd waits for the settlement (tk.h) */
            ts_sleep_ms(10);
            continue;
        }
        uint64_t p = by_seat[v.turn];
        resume(c, p, &v);
        if (v.nlast == 0) {
            uint8_t card = v.hand[lowest(&v)];
            ck_assert_int_eq(act(c, p, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, &card, 1, 0, false),
                             CROUPIER__ERROR_CODE__OK);
        } else {
            ck_assert_int_eq(act(c, p, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, NULL, 0, 0, false),
                             CROUPIER__ERROR_CODE__OK);
        }
        collect(c, &seen, P0, 0);
    }
    collect(c, &seen, P0, 300);
    ck_assert_int_eq(seen.completed, 1);
    ck_assert_int_eq(seen.delta[0] + seen.delta[1] + seen.delta[2], -seen.rake);
    ck_assert_int_ne(seen.delta[landlord - P0], 0);
    ck_assert_int_gt(seen.rake, 0);

    /* The next deal starts after the gap (the losers' stacks topped up to the escrow). */
    wait_in_round(c, P0, &v);
    ck_assert_int_eq(human_desks(&e), 1);
    /* Drain during this deal: it finishes (trustee would take 20 s a turn, so play it out). */
    char *b = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.rig.game.health, "/drain", 5000, &b), 200);
    free(b);
    ck_assert_int_eq(join(c, 7011, "doudizhu", 10, NULL), CROUPIER__ERROR_CODE__DRAINING);
    ck_assert_int_eq(human_desks(&e), 1);
    for (int steps = 0; steps < 200; steps++) {
        resume(c, P0, &v);
        if (!v.in_round)
            break;
        if (v.turn < 0) { /* the deal ended: its RoundEnd waits for the settlement (tk.h) */
            ts_sleep_ms(10);
            continue;
        }
        uint64_t p = by_seat[v.turn];
        resume(c, p, &v);
        if (v.phase == CROUPIER__SHEDDING_PHASE__SHEDDING_BIDDING)
            ck_assert_int_eq(act(c, p, CROUPIER__SHEDDING_MOVE__SHEDDING_BID, NULL, 0, 3, false),
                             CROUPIER__ERROR_CODE__OK);
        else if (v.nlast == 0) {
            uint8_t card = v.hand[lowest(&v)];
            ck_assert_int_eq(act(c, p, CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, &card, 1, 0, false),
                             CROUPIER__ERROR_CODE__OK);
        } else
            ck_assert_int_eq(act(c, p, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, NULL, 0, 0, false),
                             CROUPIER__ERROR_CODE__OK);
    }
    /* The kit tells TableClosing (and the gateway DeskClosing) once the closing cash-outs are
     * applied, a few Redis round trips after the RoundEnd. */
    long long until = ts_now_ms() + 3000;
    collect(c, &seen, P0, 300);
    while ((seen.table_closings < 3 || seen.desk_closings < 3) && ts_now_ms() < until)
        collect(c, &seen, P0, 100);
    ck_assert_int_eq(seen.completed, 2);
    ck_assert_int_eq(human_desks(&e), 0);
    ck_assert_msg(seen.desk_closings == 3 && seen.table_closings == 3,
                  "DeskClosing for %d players, %d TableClosing", seen.desk_closings,
                  seen.table_closings);
    /* Longer than the gap: no other deal starts, the players are still seated. */
    ts_sleep_ms(800);
    ck_assert_int_eq(human_desks(&e), 0);
    resume(c, P0, &v);
    ck_assert(!v.in_round);
    collect(c, &seen, P0, 100);
    ck_assert_int_eq(seen.round_ends, 2);

    int st;
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    /* Every chip is in Redis: escrows back, deltas applied, the rake with the house. */
    long total = 0;
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", P0 + i);
        ck_assert_int_eq(wallet(&e, name), 5000 + seen.delta[i]);
        total += wallet(&e, name);
    }
    ck_assert_int_eq(total + redis_long(&e, "{croupier:money}:rake:doudizhu"), 15000);
    ck_assert_int_eq(redis_long(&e, "{croupier:money}:rake:doudizhu"), seen.rake);
    /* One hand history per completed deal, with the bids and plays. */
    char *x = ts_redis_cmd(e.rig.redis, "XLEN {croupier:history:doudizhu}:stream");
    ck_assert_str_eq(x, "2");
    free(x);
    x = ts_redis_cmd(e.rig.redis, "XRANGE {croupier:history:doudizhu}:stream - + COUNT 1");
    ck_assert_ptr_nonnull(strstr(x, "landlord"));
    ck_assert_msg(strstr(x, "\"action\":\"bid\"") != NULL, "history: %.400s", x);
    free(x);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * One human at Big Two: bots from the house fill the three other seats after the wait, and
 * the human never moves, so trustee plays each of its turns on the short timer (timed_out
 * plays); deals complete and settle, the human's wallet and the house's add up.
 */
START_TEST(test_bigtwo_bots_fill_and_trustee_plays_for_the_idle_human)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=40",
                   "CROUPIER_TRAD_BOT_MS=2",
                   "CROUPIER_TRAD_TRUSTEE_MS=2",
                   "CROUPIER_TRAD_BOT_FILL_MS=300",
                   "CROUPIER_TRAD_GAP_MS=50",
                   "CROUPIER_TRAD_HOUSE=house-t",
                   NULL};
    env_start(&e, 30, "doudizhu,bigtwo", env);
    wallet_set(&e, "house-t", 100000);
    wallet_set(&e, "7101", 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    int seat;
    ck_assert_int_eq(join(c, 7101, "bigtwo", 2, &seat), CROUPIER__ERROR_CODE__OK);
    view_t v;
    resume(c, 7101, &v);
    ck_assert(!v.in_round);
    ts_sleep_ms(150);
    resume(c, 7101, &v);
    ck_assert(!v.in_round); /* the fill wait has not passed */
    seen_t seen = {0};
    long long end = ts_now_ms() + 20000;
    while (seen.completed < 2 && ts_now_ms() < end)
        collect(c, &seen, 7101, 200);
    ck_assert_int_ge(seen.completed, 2);
    ck_assert_int_gt(seen.timed_out_plays, 0);
    /* A deal in progress shows four seats, the human's own 13-or-fewer cards. */
    resume(c, 7101, &v);
    if (v.in_round)
        ck_assert_uint_le(v.nhand, 13);

    char *b = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.rig.game.health, "/drain", 5000, &b), 200);
    free(b);
    end = ts_now_ms() + 10000;
    while (human_desks(&e) != 0 && ts_now_ms() < end)
        ts_sleep_ms(50);
    ck_assert_int_eq(human_desks(&e), 0);
    collect(c, &seen, 7101, 300);
    while (seen.desk_closings < 1 && ts_now_ms() < end) /* after the closing cash-outs */
        collect(c, &seen, 7101, 100);
    int rounds = seen.round_ends;
    ts_sleep_ms(300);
    collect(c, &seen, 7101, 100);
    ck_assert_int_eq(seen.round_ends, rounds);
    ck_assert_int_eq(seen.desk_closings, 1);
    int st;
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    ck_assert_int_eq(wallet(&e, "7101"), 1000 + seen.delta[0]);
    ck_assert_int_eq(wallet(&e, "7101") + wallet(&e, "house-t"), 101000);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * A private room with its own rules (docs/protocol.md "Private rooms"): a Run Fast room with the
 * rule option report-single, which the server itself does not play by, and bot fill; the human
 * host alone gets server bots after the fill wait, the room's deals are dealt under its option
 * (the Joined says so, a plain table of the same server does not), and after its two deals it
 * ends: the host told TableClosing{CLOSING_ROOM_ENDED}, the chips back with the house.
 */
START_TEST(test_runfast_room_has_its_own_rule_options_and_bot_fill)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=40",  "CROUPIER_TRAD_BOT_MS=2",
                   "CROUPIER_TRAD_TRUSTEE_MS=2",  "CROUPIER_TRAD_BOT_FILL_MS=300",
                   "CROUPIER_TRAD_GAP_MS=50",     "CROUPIER_TRAD_HOUSE=house-t",
                   NULL};
    env_start(&e, 30, "runfast", env);
    wallet_set(&e, "house-t", 100000);
    wallet_set(&e, "7201", 1000);
    wallet_set(&e, "7202", 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    /* A plain table of this server: the default rules. */
    char opts[128];
    uint32_t units;
    int seat;
    ck_assert_int_eq(join_options(c, 7202, "runfast", 2, &seat, opts, sizeof opts, &units),
                     CROUPIER__ERROR_CODE__OK);
    ck_assert_str_eq(opts, "");
    uint64_t lrid = next_rid++;
    ck_assert_int_eq(rpcc_leave(c, lrid, 7202), 0); /* before its table deals (bot fill) */
    Croupier__RpcFrame *lr = rpcc_wait_reply(c, lrid, 5000);
    ck_assert(lr != NULL && lr->reply->code == CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(lr);
    /* The room. */
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    Croupier__RoomJoin rj = CROUPIER__ROOM_JOIN__INIT;
    Croupier__RoomRules rules = CROUPIER__ROOM_RULES__INIT;
    char *opt = "report-single";
    rules.deals = 2;
    rules.n_rule_options = 1;
    rules.rule_options = &opt;
    rules.has_bot_fill = rules.bot_fill = true;
    j.engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL;
    j.game = "runfast";
    j.stake = 2;
    rj.create = &rules;
    uint64_t rid = next_rid++;
    f.request_id = rid;
    f.has_player_id = f.has_session_id = f.has_deadline_unix_ms = true;
    f.player_id = f.session_id = 7201;
    f.deadline_unix_ms = (uint64_t)rpcc_wall_ms() + 5000;
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
    f.join = &j;
    f.room = &rj;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    const Croupier__Joined *jd = r->reply->payload->joined;
    ck_assert_ptr_nonnull(jd->room);
    ck_assert(jd->room->bot_fill);
    format_options(jd->rule_options, jd->n_rule_options, opts, sizeof opts);
    ck_assert_str_eq(opts, "report-single");
    frame_free_rpc(r);
    /* Bots take the empty seats; two deals; the room ends. */
    seen_t seen = {0};
    long long end = ts_now_ms() + 20000;
    while (seen.table_closings < 1 && ts_now_ms() < end)
        collect(c, &seen, 7201, 200);
    ck_assert_int_eq(seen.completed, 2);
    ck_assert_int_eq(seen.table_closings, 1);
    end = ts_now_ms() + 5000;
    while (wallet(&e, "7201") + wallet(&e, "house-t") != 101000 && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(wallet(&e, "7201") + wallet(&e, "house-t"), 101000);
    ck_assert_int_eq(wallet(&e, "7201"), 1000 + seen.delta[0]);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * The drain bound passes with a deal running (long turn timer): the deal is voided, the players
 * are told why, the escrows go back (wallets exactly as before), and the exit is forced.
 */
START_TEST(test_ddz_drain_bound_mid_deal_voids_it_and_exit_is_forced)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=60000", "CROUPIER_TRAD_BOT_FILL_MS=-1", NULL};
    env_start(&e, 1, "doudizhu", env);
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7201 + i);
        wallet_set(&e, name, 500);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(join(c, 7201 + (uint64_t)i, "doudizhu", 2, NULL),
                         CROUPIER__ERROR_CODE__OK);
    view_t v;
    wait_in_round(c, 7201, &v);
    ck_assert_int_eq(human_desks(&e), 1);
    /* Escrows are out of the wallets while the deal runs: 2 x 96. */
    ck_assert_int_eq(wallet(&e, "7201"), 500 - 192);
    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    seen_t seen = {0};
    long long end = ts_now_ms() + 6000;
    while (seen.round_ends == 0 && ts_now_ms() < end)
        collect(c, &seen, 7201, 200);
    ck_assert_int_eq(seen.voided, 1);
    ck_assert_int_eq(seen.void_reason, CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert_msg(ts_now_ms() - t0 < 8000, "forced exit took %lld ms", ts_now_ms() - t0);
    ck_assert(WIFEXITED(st));
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=forced"));
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7201 + i);
        ck_assert_int_eq(wallet(&e, name), 500);
    }
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

static void player_gone(rpcc_t *c, uint64_t player)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone g = CROUPIER__PLAYER_GONE__INIT;
    f.request_id = next_rid++;
    f.has_player_id = true;
    f.player_id = player;
    f.has_session_id = true;
    f.session_id = player;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &g;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

/*
 * Disconnected players (PlayerGone) are played by trustee at once, not after the 30 s turn
 * timer: trustee declines every bid, so the deal is thrown in (completed, nothing paid) and
 * the next one starts.
 */
START_TEST(test_ddz_gone_players_get_trustee_and_an_unbid_deal_is_thrown_in)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=30000", "CROUPIER_TRAD_BOT_MS=10",
                   "CROUPIER_TRAD_TRUSTEE_MS=10",   "CROUPIER_TRAD_BOT_FILL_MS=-1",
                   "CROUPIER_TRAD_GAP_MS=50",       NULL};
    env_start(&e, 30, "doudizhu", env);
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7301 + i);
        wallet_set(&e, name, 1000);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(join(c, 7301 + (uint64_t)i, "doudizhu", 1, NULL),
                         CROUPIER__ERROR_CODE__OK);
    view_t v;
    wait_in_round(c, 7301, &v);
    ck_assert_int_eq(v.phase, CROUPIER__SHEDDING_PHASE__SHEDDING_BIDDING);
    for (int i = 0; i < 3; i++)
        player_gone(c, 7301 + (uint64_t)i);
    seen_t seen = {0};
    long long t0 = ts_now_ms();
    while (seen.completed < 2 && ts_now_ms() - t0 < 5000)
        collect(c, &seen, 7301, 100);
    ck_assert_int_ge(seen.completed, 2);
    ck_assert_int_ge(seen.timed_out_plays, 3);
    ck_assert_int_eq(seen.delta[0], 0);
    ck_assert_int_eq(seen.delta[1], 0);
    ck_assert_int_eq(seen.delta[2], 0);
    ck_assert_int_eq(seen.rake, 0);
    /* Thrown-in deals move no money: every wallet is whole once the escrows are back. */
    char *b = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.rig.game.health, "/drain", 5000, &b), 200);
    free(b);
    int st;
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7301 + i);
        ck_assert_int_eq(wallet(&e, name), 1000);
    }
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * Every player of a Guandan deal leaves during it (a client fleet stopping): nobody will act
 * again, so trustee plays the rest at once (TK_TRUSTEE_NOBODY_MS) instead of one move per
 * trustee delay (5 s here: the deal would take many minutes); the deal completes, every seat is
 * cashed out and the wallets add up.
 */
START_TEST(test_guandan_everyone_leaving_mid_deal_is_played_out_at_once)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=30000", "CROUPIER_TRAD_TRUSTEE_MS=5000",
                   "CROUPIER_TRAD_BOT_FILL_MS=-1", "CROUPIER_TRAD_GAP_MS=50", NULL};
    env_start(&e, 30, "guandan", env);
    char name[16];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%d", 7601 + i);
        wallet_set(&e, name, 1000);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(join(c, 7601 + (uint64_t)i, "guandan", 1, NULL),
                         CROUPIER__ERROR_CODE__OK);
    view_t v;
    wait_in_round(c, 7601, &v);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(rpcc_leave(c, next_rid, 7601 + (uint64_t)i), 0);
        Croupier__RpcFrame *r = rpcc_wait_reply(c, next_rid++, 5000);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
        frame_free_rpc(r);
    }
    seen_t seen = {0};
    long long t0 = ts_now_ms();
    while (seen.completed < 1 && ts_now_ms() - t0 < 10000)
        collect(c, &seen, 7601, 100);
    ck_assert_msg(seen.completed == 1, "the deal of four leaving players did not end in 10 s");
    ck_assert_int_gt(seen.timed_out_plays, 8);
    long long end = ts_now_ms() + 5000;
    long long sum = 0;
    while (ts_now_ms() < end) {
        sum = 0;
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof name, "%d", 7601 + i);
            sum += wallet(&e, name);
        }
        if (sum == 4000 - seen.rake)
            break;
        ts_sleep_ms(20);
    }
    ck_assert_int_eq(sum, 4000 - seen.rake);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%d", 7601 + i);
        ck_assert_int_eq(wallet(&e, name), 1000 + seen.delta[i]);
    }
    ck_assert_int_eq(human_desks(&e), 0);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * Run Fast and Guandan through the engine: one idle human per game, bots for the other seats,
 * trustee for the human; two deals each complete (Guandan's second deal has its tribute phase,
 * which trustee and bots play too), and money reconciles with the house.
 */
START_TEST(test_runfast_and_guandan_deals_complete_with_bots_and_trustee)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=15",
                   "CROUPIER_TRAD_BOT_MS=1",
                   "CROUPIER_TRAD_TRUSTEE_MS=1",
                   "CROUPIER_TRAD_BOT_FILL_MS=0",
                   "CROUPIER_TRAD_GAP_MS=10",
                   "CROUPIER_TRAD_HOUSE=house-t",
                   NULL};
    env_start(&e, 30, "runfast,guandan", env);
    wallet_set(&e, "house-t", 100000);
    wallet_set(&e, "7401", 1000);
    wallet_set(&e, "7402", 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(join(c, 7401, "runfast", 1, NULL), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(join(c, 7402, "guandan", 5, NULL), CROUPIER__ERROR_CODE__OK);
    seen_t seen = {0};
    int done[2] = {0, 0};
    long long end = ts_now_ms() + 30000;
    while ((done[0] < 2 || done[1] < 2) && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f == NULL)
            continue;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
            Croupier__RoundEnd *re = f->push->round_end;
            long sum = 0;
            for (size_t i = 0; i < re->n_deltas; i++) {
                sum += re->deltas[i]->delta;
                uint64_t p = re->deltas[i]->player_id;
                if (p == 7401 || p == 7402)
                    seen.delta[p - 7401] += re->deltas[i]->delta;
            }
            ck_assert_int_eq(sum, -re->rake);
            ck_assert_int_eq(re->outcome, CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED);
            done[f->player_id - 7401]++;
        }
        frame_free_rpc(f);
    }
    ck_assert_int_ge(done[0], 2);
    ck_assert_int_ge(done[1], 2);
    char *b = NULL;
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.rig.game.health, "/drain", 5000, &b), 200);
    free(b);
    end = ts_now_ms() + 10000;
    while (human_desks(&e) != 0 && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(human_desks(&e), 0);
    /* Deals that ended while we stopped reading count too. */
    for (;;) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 300);
        if (f == NULL)
            break;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
            Croupier__RoundEnd *re = f->push->round_end;
            for (size_t i = 0; i < re->n_deltas; i++) {
                uint64_t p = re->deltas[i]->player_id;
                if (p == 7401 || p == 7402)
                    seen.delta[p - 7401] += re->deltas[i]->delta;
            }
        }
        frame_free_rpc(f);
    }
    int st;
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    ck_assert(!ts_proc_log_has(e.rig.game.proc, "trad_auto_move_refused"));
    ck_assert_int_eq(wallet(&e, "7401"), 1000 + seen.delta[0]);
    ck_assert_int_eq(wallet(&e, "7402"), 1000 + seen.delta[1]);
    ck_assert_int_eq(wallet(&e, "7401") + wallet(&e, "7402") + wallet(&e, "house-t"), 102000);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * Leaving: mid-deal the seat is kept and played by trustee until the deal ends, then freed
 * with its escrow returned; between deals a leave frees the seat at once. With a seat empty
 * (and no bot fill) no deal starts.
 */
START_TEST(test_ddz_leave_mid_deal_frees_the_seat_after_the_deal_and_returns_the_escrow)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=30000", "CROUPIER_TRAD_BOT_MS=5",
                   "CROUPIER_TRAD_TRUSTEE_MS=5",    "CROUPIER_TRAD_BOT_FILL_MS=-1",
                   "CROUPIER_TRAD_GAP_MS=50",       NULL};
    env_start(&e, 30, "doudizhu", env);
    char name[16];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%d", 7501 + i);
        wallet_set(&e, name, 1000);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(join(c, 7501 + (uint64_t)i, "doudizhu", 1, NULL),
                         CROUPIER__ERROR_CODE__OK);
    view_t v;
    wait_in_round(c, 7503, &v);
    ck_assert_int_eq(wallet(&e, "7503"), 1000 - 96);
    ck_assert_int_eq(rpcc_leave(c, next_rid, 7503), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, next_rid++, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    resume(c, 7503, &v); /* still seated while the deal runs */
    ck_assert(v.in_round);
    player_gone(c, 7501);
    player_gone(c, 7502);
    seen_t seen = {0};
    long long end = ts_now_ms() + 5000;
    while (seen.completed < 1 && ts_now_ms() < end)
        collect(c, &seen, 7501, 100);
    ck_assert_int_eq(seen.completed, 1);
    ts_sleep_ms(200);
    ck_assert_int_eq(rpcc_resume(c, next_rid, 7503), 0);
    r = rpcc_wait_reply(c, next_rid++, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__NOT_SEATED);
    frame_free_rpc(r);
    ck_assert_int_eq(wallet(&e, "7503"), 1000 + seen.delta[2]);
    /* Two seated, one empty, no fill: no deal. */
    ck_assert_int_eq(human_desks(&e), 0);
    resume(c, 7501, &v);
    ck_assert(!v.in_round);
    /* A leave between deals frees the seat and the escrow at once. */
    ck_assert_int_eq(rpcc_leave(c, next_rid, 7501), 0);
    r = rpcc_wait_reply(c, next_rid++, 5000);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(r);
    end = ts_now_ms() + 3000;
    while (wallet(&e, "7501") != 1000 + seen.delta[0] && ts_now_ms() < end)
        ts_sleep_ms(20);
    ck_assert_int_eq(wallet(&e, "7501"), 1000 + seen.delta[0]);
    /* A new player takes a free seat at the same table and a deal starts. */
    wallet_set(&e, "7504", 1000);
    ck_assert_int_eq(join(c, 7504, "doudizhu", 1, NULL), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(join(c, 7501, "doudizhu", 1, NULL), CROUPIER__ERROR_CODE__OK);
    wait_in_round(c, 7504, &v);
    /* SIGTERM with that deal running; the players are gone, so trustee finishes it quickly and
     * the server exits drained. */
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    player_gone(c, 7501);
    player_gone(c, 7502);
    player_gone(c, 7504);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * A buy-in still on its way when the server is told to leave: Redis pauses its writes with the
 * join's escrow in flight, SIGTERM arrives (no human desk, so the exit goes straight to the
 * flush), and only then does Redis apply it. The escrow lands after the table closed, so the
 * table sends it back -- a cash-out queued during the exit's flush, which must still reach
 * Redis. (On the table kit the join first reads the wallet, so Redis pauses writes only
 * (CLIENT PAUSE WRITE, the buy-in script blocks) instead of stopping: a stopped Redis would hold
 * the join before its buy-in, and the server would exit without one in flight.)
 */
START_TEST(test_ddz_escrow_answered_during_the_exit_flush_is_returned)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_BOT_FILL_MS=-1", NULL};
    env_start(&e, 30, "doudizhu", env);
    wallet_set(&e, "7601", 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    free(ts_redis_cmd(e.rig.redis, "CLIENT PAUSE 1000 WRITE"));
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_join(c, rid, 7601, "doudizhu", 1, 0), 0);
    ts_sleep_ms(300);
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 8000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__DRAINING);
    frame_free_rpc(r);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 15000, &st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    ck_assert_msg(!ts_proc_log_has(e.rig.game.proc, "flush_incomplete"), "log: %s",
                  ts_proc_log_path(e.rig.game.proc));
    ck_assert_int_eq(wallet(&e, "7601"), 1000);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/* The Snapshot of a seat (Resume), as its player sees it; NULL on no answer. */
static Croupier__RpcFrame *snapshot_of(rpcc_t *c, uint64_t player)
{
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_resume(c, rid, player), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->reply->code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    return r;
}

/*
 * Guandan's snapshot carries what a client needs to play legally: the deal's level rank (2 in
 * a match's first deal, then the level of the previous deal's winners, which went up), both
 * team levels, and in the tribute phase whether the seat to act pays or returns and to whom
 * (a return always names the payer). Other games carry none of it. The snapshot is taken at
 * every Turn while server bots (100 ms a move) and trustee (for the idle human) play deals.
 */
START_TEST(test_guandan_snapshot_has_level_team_levels_and_tribute_step)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=100",
                   "CROUPIER_TRAD_BOT_MS=100",
                   "CROUPIER_TRAD_TRUSTEE_MS=100",
                   "CROUPIER_TRAD_BOT_FILL_MS=0",
                   "CROUPIER_TRAD_GAP_MS=10",
                   "CROUPIER_TRAD_HOUSE=house-t",
                   NULL};
    env_start(&e, 30, "doudizhu,guandan", env);
    wallet_set(&e, "house-t", 1000000);
    wallet_set(&e, "7701", 100000);
    wallet_set(&e, "7702", 100000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(join(c, 7701, "guandan", 1, NULL), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(join(c, 7702, "doudizhu", 1, NULL), CROUPIER__ERROR_CODE__OK);
    int deals = 0, snaps = 0, tributes = 0, returns = 0, raised = 0, ddz = 0;
    long long end = ts_now_ms() + 100000;
    while ((tributes == 0 || returns == 0 || ddz == 0) && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f == NULL)
            continue;
        bool turn = f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
                    f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END && f->player_id == 7701)
            deals++;
        uint64_t who = f->player_id;
        frame_free_rpc(f);
        if (!turn)
            continue;
        Croupier__RpcFrame *r = snapshot_of(c, who);
        const Croupier__Snapshot *sn = r->reply->payload->snapshot;
        if (sn->state_case != CROUPIER__SNAPSHOT__STATE_SHEDDING) {
            frame_free_rpc(r);
            continue;
        }
        const Croupier__SheddingState *st = sn->shedding;
        if (who == 7702) {
            ck_assert(!st->has_level);
            ck_assert_int_eq(st->n_team_levels, 0);
            ck_assert(!st->has_tribute_return);
            ck_assert_int_ne(st->phase, CROUPIER__SHEDDING_PHASE__SHEDDING_TRIBUTE);
            ddz++;
            frame_free_rpc(r);
            continue;
        }
        snaps++;
        ck_assert(st->has_level);
        ck_assert_int_eq(st->n_team_levels, 2);
        for (int t = 0; t < 2; t++)
            ck_assert(st->team_levels[t] >= 2 && st->team_levels[t] <= 14);
        /* the deal's level is one team's level: 2 in the first deal */
        ck_assert(st->level == st->team_levels[0] || st->level == st->team_levels[1]);
        if (deals == 0)
            ck_assert_int_eq(st->level, 2);
        if (st->team_levels[0] != 2 || st->team_levels[1] != 2)
            raised++;
        if (st->phase == CROUPIER__SHEDDING_PHASE__SHEDDING_TRIBUTE) {
            ck_assert(st->has_tribute_return);
            ck_assert(sn->has_turn_seat);
            if (st->tribute_return) {
                ck_assert(st->has_tribute_to);
                ck_assert_int_ne(st->tribute_to, sn->turn_seat);
                returns++;
            } else {
                tributes++;
                if (st->has_tribute_to)
                    ck_assert_int_ne(st->tribute_to, sn->turn_seat);
            }
        } else {
            ck_assert(!st->has_tribute_return);
        }
        frame_free_rpc(r);
    }
    ck_assert_int_gt(snaps, 0);
    ck_assert_int_gt(ddz, 0);
    ck_assert_msg(tributes > 0 && returns > 0,
                  "tribute steps seen: %d paid, %d returned (%d deals)", tributes, returns, deals);
    ck_assert_int_gt(raised, 0);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/*
 * A player who resumed through another gateway is not "gone" when the gateway it left reports
 * its old connection gone afterwards (it frees it late): trustee would otherwise play its turns
 * at bot speed and its own move would find the turn gone (NOT_YOUR_TURN).
 */
START_TEST(test_late_player_gone_from_the_old_gateway_leaves_a_resumed_player_connected)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=20000", "CROUPIER_TRAD_BOT_MS=50",
                   "CROUPIER_TRAD_TRUSTEE_MS=50",   "CROUPIER_TRAD_BOT_FILL_MS=0",
                   "CROUPIER_TRAD_HOUSE=house-t",   NULL};
    env_start(&e, 30, "doudizhu", env);
    wallet_set(&e, "house-t", 100000);
    wallet_set(&e, "7801", 1000);
    rpcc_t *old_gw = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    rpcc_t *new_gw = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(old_gw);
    ck_assert_ptr_nonnull(new_gw);
    int seat = -1;
    ck_assert_int_eq(join(old_gw, 7801, "doudizhu", 1, &seat), CROUPIER__ERROR_CODE__OK);
    frame_free_rpc(snapshot_of(new_gw, 7801)); /* resumed through the new gateway */
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone pg = CROUPIER__PLAYER_GONE__INIT;
    f.has_player_id = true;
    f.player_id = 7801;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &pg;
    ck_assert_int_eq(rpcc_send(old_gw, &f), 0);
    /* Server bots fill the table and move in 50 ms; the human's turn, once it comes, waits
     * its 20 s (a seat taken for gone would be played by trustee after 50 ms). */
    ts_sleep_ms(3000);
    Croupier__RpcFrame *r = snapshot_of(new_gw, 7801);
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert_ptr_nonnull(sn->round_id);
    ck_assert(sn->has_turn_seat);
    ck_assert_int_eq(sn->turn_seat, seat);
    ck_assert_msg(sn->time_left_ms > 10000, "the turn has %u ms left", sn->time_left_ms);
    frame_free_rpc(r);
    rpcc_close(old_gw);
    rpcc_close(new_gw);
    env_stop(&e);
}
END_TEST

/*
 * A player reported gone during its turn (trustee's short timer starts) who resumes before
 * trustee moved gets its own turn time back, so its move is not refused as NOT_YOUR_TURN.
 */
START_TEST(test_resume_during_own_turn_after_player_gone_restores_the_turn_time)
{
    env_t e;
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=20000", "CROUPIER_TRAD_BOT_MS=1500",
                   "CROUPIER_TRAD_TRUSTEE_MS=1500", "CROUPIER_TRAD_BOT_FILL_MS=0",
                   "CROUPIER_TRAD_HOUSE=house-t",   NULL};
    env_start(&e, 30, "doudizhu", env);
    wallet_set(&e, "house-t", 100000);
    wallet_set(&e, "7802", 1000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    int seat = -1;
    ck_assert_int_eq(join(c, 7802, "doudizhu", 1, &seat), CROUPIER__ERROR_CODE__OK);
    /* Wait for our turn (the server bots bid after 1.5 s each). */
    long long end = ts_now_ms() + 15000;
    bool mine = false;
    while (!mine && ts_now_ms() < end) {
        Croupier__RpcFrame *r = snapshot_of(c, 7802);
        const Croupier__Snapshot *sn = r->reply->payload->snapshot;
        mine = sn->round_id != NULL && sn->has_turn_seat && sn->turn_seat == (uint32_t)seat;
        frame_free_rpc(r);
        if (!mine)
            ts_sleep_ms(100);
    }
    ck_assert(mine);
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__PlayerGone pg = CROUPIER__PLAYER_GONE__INIT;
    f.has_player_id = true;
    f.player_id = 7802;
    f.body_case = CROUPIER__RPC_FRAME__BODY_PLAYER_GONE;
    f.player_gone = &pg;
    ck_assert_int_eq(rpcc_send(c, &f), 0);        /* trustee's 1.5 s timer starts */
    Croupier__RpcFrame *r = snapshot_of(c, 7802); /* back at once */
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert(sn->has_turn_seat);
    ck_assert_int_eq(sn->turn_seat, seat);
    ck_assert_msg(sn->time_left_ms > 10000, "the turn has %u ms left", sn->time_left_ms);
    frame_free_rpc(r);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/* ---- rule options (--trad-options) ---------------------------------------------------------- */

/* Wire code of a card written rank+suit ("Qs", "Th", "2h"; suits d c h s). */
static uint8_t wc(const char *t)
{
    static const char ranks[] = "3456789TJQKA2";
    int r = (int)(strchr(ranks, t[0]) - ranks);
    int ws = t[1] == 'c' ? 0 : t[1] == 'd' ? 1 : t[1] == 'h' ? 2 : 3;
    return FRAME_CARD(r == 12 ? 2 : r + 3, ws);
}

/* Wire codes of cards written "Ks Kh Kc Kd" (space-separated); returns how many. */
static size_t wcs(const char *text, uint8_t *out)
{
    size_t n = 0;
    for (const char *p = text; *p != '\0'; p += p[2] == ' ' ? 3 : 2)
        out[n++] = wc(p);
    return n;
}

/* The options of a snapshot's SheddingState joined with '+' ("" when none). */
static void snapshot_options(rpcc_t *c, uint64_t player, char *buf, size_t len, uint32_t *units)
{
    Croupier__RpcFrame *r = snapshot_of(c, player);
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert_int_eq(sn->state_case, CROUPIER__SNAPSHOT__STATE_SHEDDING);
    format_options(sn->shedding->rule_options, sn->shedding->n_rule_options, buf, len);
    *units = sn->shedding->has_bomb_units ? sn->shedding->bomb_units : 0;
    frame_free_rpc(r);
}

/*
 * Run Fast with --trad-options runfast=report-single+four-with-two+bomb-pays:7 and a stacked
 * deal (CROUPIER_TRAD_TEST_DECK): seat 0 opens with an airplane of fifteen cards and keeps one
 * card; seat 1 cannot beat it; seat 2 must bomb it (seat 0 and 1 pass) and leads while seat 0,
 * the next player, holds one card. A lower single is then refused with ILLEGAL_MOVE and nothing
 * changes; its highest single, then a straight (not restricted), go through and seat 2 goes
 * out with a short trio. The Deal of each seat's own cards and every snapshot list the options
 * and the bomb units; the settlement has the bomb paid at once (7 units from each other seat).
 * Rules: docs/rules/runfast.md (Options).
 */
START_TEST(test_runfast_report_single_refuses_a_lower_single_at_a_table_with_options)
{
    env_t e;
    char deck[160] = "runfast:";
    const char *hands[3] = {
        "3s3h3c4s4h4c5s5h5c6s7s8s9sTsJsQs", /* seat 0: airplane 333444555 + 6..J, and Qs */
        "3d4d5d6h7h8h9hThJhQh6c7c8c9cTcJc", /* seat 1: pairs and runs, no trio, no bomb */
        "KsKhKcKdAhAcAd2h6d7d8d9dTdJdQdQc", /* seat 2: the bomb of kings */
    };
    for (int k = 0; k < 16; k++)
        for (int s = 0; s < 3; s++)
            strncat(deck, hands[s] + 2 * k, 2);
    char deck_env[200];
    snprintf(deck_env, sizeof deck_env, "CROUPIER_TRAD_TEST_DECK=%s", deck);
    /* The first deal waits the gap too on the table kit (it was dealt at once): a short gap. */
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=30000", "CROUPIER_TRAD_BOT_FILL_MS=-1",
                   "CROUPIER_TRAD_GAP_MS=100", deck_env, NULL};
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(testenv_start(&e.rig, NULL), 0);
    ck_assert_int_eq(
        testenv_start_game(&e.rig, &e.rig.game, "traditional", 30,
                           (char *[]){"--games", "runfast,doudizhu", "--trad-options",
                                      "runfast=report-single+four-with-two+bomb-pays:7", NULL},
                           env),
        0);
    const uint64_t base = 7901;
    for (int i = 0; i < 3; i++) {
        char who[24];
        snprintf(who, sizeof who, "%llu", (unsigned long long)(base + (uint64_t)i));
        wallet_set(&e, who, 5000);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    uint64_t of_seat[3] = {0};
    for (int i = 0; i < 3; i++) {
        int seat = -1;
        char jopts[128];
        uint32_t junits = 0;
        ck_assert_int_eq(
            join_options(c, base + (uint64_t)i, "runfast", 1, &seat, jopts, sizeof jopts, &junits),
            CROUPIER__ERROR_CODE__OK);
        /* Joined names them already, before the first deal */
        ck_assert_str_eq(jopts, "report-single+four-with-two+bomb-pays");
        ck_assert_uint_eq(junits, 7);
        ck_assert(seat >= 0 && seat < 3);
        of_seat[seat] = base + (uint64_t)i;
    }
    /* Each seat's own Deal names the options. */
    int own_deals = 0;
    long long end = ts_now_ms() + 5000;
    while (own_deals < 3 && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f == NULL)
            continue;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL) {
            const Croupier__Deal *d = f->push->deal;
            if (d->has_cards) {
                own_deals++;
                ck_assert_int_eq(d->n_rule_options, 3);
                ck_assert_str_eq(d->rule_options[0], "report-single");
                ck_assert_str_eq(d->rule_options[1], "four-with-two");
                ck_assert_str_eq(d->rule_options[2], "bomb-pays");
                ck_assert(d->has_bomb_units);
                ck_assert_uint_eq(d->bomb_units, 7);
            } else {
                ck_assert_int_eq(d->n_rule_options, 0);
            }
        }
        frame_free_rpc(f);
    }
    ck_assert_int_eq(own_deals, 3);
    char opts[128];
    uint32_t units = 0;
    snapshot_options(c, of_seat[1], opts, sizeof opts, &units);
    ck_assert_str_eq(opts, "report-single+four-with-two+bomb-pays");
    ck_assert_uint_eq(units, 7);

    uint8_t cards[16];
    size_t n = wcs("3s 3h 3c 4s 4h 4c 5s 5h 5c 6s 7s 8s 9s Ts Js", cards);
    ck_assert_int_eq(act(c, of_seat[0], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, cards, n, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    pass_ok(c, of_seat[1]);
    n = wcs("Ks Kh Kc Kd", cards);
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, cards, n, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    pass_ok(c, of_seat[0]);
    pass_ok(c, of_seat[1]);
    /* Seat 2 leads; seat 0 holds one card. */
    view_t before, after;
    resume(c, of_seat[2], &before);
    ck_assert_int_eq(before.turn, 2);
    ck_assert_uint_eq(before.left[0], 1);
    ck_assert_uint_eq(before.nlast, 0);
    uint8_t low = wc("6d"), top = wc("2h");
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, &low, 1, 0, false),
                     CROUPIER__ERROR_CODE__ILLEGAL_MOVE);
    resume(c, of_seat[2], &after);
    ck_assert(view_same(&before, &after));
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, &top, 1, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    pass_ok(c, of_seat[0]);
    pass_ok(c, of_seat[1]);
    n = wcs("6d 7d 8d 9d Td Jd Qd", cards);
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, cards, n, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    pass_ok(c, of_seat[0]);
    pass_ok(c, of_seat[1]);
    n = wcs("Ah Ac Ad Qc", cards);
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, cards, n, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    /* Settled: seat 0 owes 1 card + 7 bomb units, seat 1 owes 16 cards, closed in (x2) + 7. */
    seen_t seen = {0};
    end = ts_now_ms() + 5000;
    while (seen.completed < 1 && ts_now_ms() < end)
        collect(c, &seen, base, 200);
    ck_assert_int_eq(seen.completed, 1);
    ck_assert_int_eq(seen.delta[of_seat[0] - base], -(1 + 7));
    ck_assert_int_eq(seen.delta[of_seat[1] - base], -(32 + 7));
    ck_assert_int_eq(seen.delta[of_seat[2] - base], 1 + 7 + 32 + 7);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/* Runs croupier-game with extra flags and returns its exit status (it must exit within 5 s);
 * *log gets its output (caller frees). */
static int game_exit_status(char *const flags[], char **log)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)ts_build_path("engine/process/croupier-game");
    argv[n++] = "--engine";
    argv[n++] = "traditional";
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--health-listen";
    argv[n++] = "127.0.0.1:0";
    for (int i = 0; flags[i] != NULL && n < 15; i++)
        argv[n++] = flags[i];
    argv[n] = NULL;
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(p);
    int status = 0;
    ck_assert_int_eq(ts_proc_wait(p, 5000, &status), 0);
    *log = ts_proc_log(p);
    ts_proc_free(p);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/*
 * Bad --trad-options (or CROUPIER_TRAD_OPTIONS) stop croupier-game at once with exit 2 and one
 * line naming the problem: an unknown option, an option of another game, an unknown game, a
 * game that is not served, bad bomb units, and options for another engine.
 */
START_TEST(test_bad_trad_options_exit_2_with_the_reason)
{
    static const struct {
        const char *flag, *games, *says;
    } cases[] = {
        {"runfast=report-single+no-such", NULL, "'no-such' is not an option of runfast"},
        {"guandan=four-with-two", NULL, "'four-with-two' is not an option of guandan"},
        {"poker=report-single", NULL, "unknown game 'poker'"},
        {"runfast=report-single", "doudizhu", "runfast has options but is not served"},
        {"runfast=bomb-pays:0", NULL, "wants bomb units 1..1000"},
        {"runfast", NULL, "is not GAME=OPTION"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *log = NULL;
        char *flags[] = {"--trad-options", (char *)cases[i].flag,
                         cases[i].games != NULL ? "--games" : NULL, (char *)cases[i].games, NULL};
        ck_assert_int_eq(game_exit_status(flags, &log), 2);
        ck_assert_msg(strstr(log, "--trad-options") != NULL && strstr(log, cases[i].says) != NULL,
                      "%s: %s", cases[i].flag, log);
        free(log);
    }
    char *log = NULL;
    char *flags[] = {"--engine", "holdem", "--trad-options", "runfast=report-single", NULL};
    ck_assert_int_eq(game_exit_status(flags, &log), 2);
    /* An engine on the table kit refuses option text itself ("the holdem engine takes no rule
     * options"); one without an option check gets croupier-game's own line. */
    ck_assert_msg(strstr(log, "only for --engine traditional") != NULL ||
                      strstr(log, "takes no rule options") != NULL,
                  "%s", log);
    free(log);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trad_engine");
    TCase *tc = tcase_create("helpers");
    tcase_add_test(tc, test_trad_wire_cards_round_trip_every_card);
    tcase_add_test(tc, test_trad_wire_cards_map_to_held_copies);
    tcase_add_test(tc, test_trad_settle_cap_keeps_the_sum_and_the_cap);
    suite_add_tcase(s, tc);
    tc = tcase_create("deal");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ddz_three_players_play_a_deal_that_settles_and_drain_starts_no_other);
    tcase_add_test(tc, test_bigtwo_bots_fill_and_trustee_plays_for_the_idle_human);
    tcase_add_test(tc, test_runfast_room_has_its_own_rule_options_and_bot_fill);
    tcase_add_test(tc, test_ddz_gone_players_get_trustee_and_an_unbid_deal_is_thrown_in);
    tcase_add_test(tc, test_guandan_everyone_leaving_mid_deal_is_played_out_at_once);
    tcase_add_test(tc, test_runfast_and_guandan_deals_complete_with_bots_and_trustee);
    tcase_add_test(tc,
                   test_ddz_leave_mid_deal_frees_the_seat_after_the_deal_and_returns_the_escrow);
    suite_add_tcase(s, tc);
    tc = tcase_create("snapshot_reconnect");
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, test_guandan_snapshot_has_level_team_levels_and_tribute_step);
    tcase_add_test(tc,
                   test_late_player_gone_from_the_old_gateway_leaves_a_resumed_player_connected);
    tcase_add_test(tc, test_resume_during_own_turn_after_player_gone_restores_the_turn_time);
    suite_add_tcase(s, tc);
    tc = tcase_create("rule_options");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_runfast_report_single_refuses_a_lower_single_at_a_table_with_options);
    tcase_add_test(tc, test_bad_trad_options_exit_2_with_the_reason);
    suite_add_tcase(s, tc);
    tc = tcase_create("drain_bound");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ddz_drain_bound_mid_deal_voids_it_and_exit_is_forced);
    tcase_add_test(tc, test_ddz_escrow_answered_during_the_exit_flush_is_returned);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
