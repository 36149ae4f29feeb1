/*
 * The traditional engine's deals (games/traditional/trad_engine.c; docs/rules/doudizhu.md,
 * docs/rules/bigtwo.md, docs/rules/runfast.md, docs/rules/traditional-engine.md): the engine's
 * pure helpers (wire cards, the settlement cap), then deals through the real binary
 * (trad_engine_fixture.h): Dou Dizhu bid and played through rpc, each illegal move refused with
 * its code and the snapshot unchanged, resume snapshots, the escrowed settlement reconciling with
 * the wallets, and the drain (the deal finishes, no other starts); Big Two, Run Fast and Guandan
 * with bot fill and trustee; a Run Fast room with its own rule options.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "trad_engine_fixture.h"

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
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=40",
                   "CROUPIER_TRAD_BOT_MS=2",
                   "CROUPIER_TRAD_TRUSTEE_MS=2",
                   "CROUPIER_TRAD_BOT_FILL_MS=300",
                   "CROUPIER_TRAD_GAP_MS=50",
                   "CROUPIER_TRAD_HOUSE=house-t",
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

int main(void)
{
    Suite *s = suite_create("trad_engine_deals");
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
    tcase_add_test(tc, test_runfast_and_guandan_deals_complete_with_bots_and_trustee);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
