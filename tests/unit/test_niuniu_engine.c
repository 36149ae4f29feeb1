/*
 * The Niu Niu engine (games/niuniu/niuniu_engine.c, docs/rules/niuniu.md "Round") run by the real
 * croupier-game binary against a real redis-server, players driven over a real rpc link (rpcc)
 * as a gateway would: the bid, bet and show windows, the banker settling pairwise with each
 * punter and the winners raked (docs/writing-a-game.md "Pairwise settlement"), the transfers in
 * RoundEnd and the hand history, every chip counted, and a drain that hands the table over to
 * another server as a whole.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "deck.h"
#include "niuniu.h"
#include "niuniu.pb-c.h"
#include "rpcc.h"
#include "support.h"
#include "testenv.h"

#define NP 3
#define MAXS 9
#define STAKE 10
#define WALLET 10000 /* a buy-in of min(wallet, 400 stakes) = 4000 chips */
#define RAKE_BP 1000

typedef testenv_t env_t;

static const uint64_t players[NP] = {9101, 9102, 9103};
static uint64_t next_rid = 1;

/* What the players were told (players[0]'s pushes: every player gets the table's). */
typedef struct {
    int seat_of[NP];
    int turns;             /* Turns players[0] got: one per window */
    uint32_t window[MAXS]; /* the last one's window seats */
    size_t nwindow;
    int banker, mult, bankers; /* the last NiuBanker; how many came */
    int banker_seq[16];        /* the first 16 NiuBankers' seats */
    int mults_above_1;         /* NiuBankers with a multiplier above 1 */
    uint8_t shown[MAXS][NIUNIU_HAND_CARDS];
    bool has_shown[MAXS];
    int completed, voided;
    int with_transfers, transfers_wrong; /* RoundEnds with transfers; those not adding up */
    long long rake;                      /* summed over the RoundEnds */
    /* The last completed RoundEnd's transfers and deltas. */
    int nx, xfrom[16], xto[16];
    long long xamount[16], delta[MAXS];
    char xreason[16][16];
    int offers;
    char offer_id[160];
} view_t;

static void view_apply(view_t *v, const Croupier__RpcFrame *f)
{
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING && f->desk_closing->offer_id &&
        f->desk_closing->offer_id[0] != '\0') {
        v->offers++;
        snprintf(v->offer_id, sizeof v->offer_id, "%s", f->desk_closing->offer_id);
    }
    if (f->body_case != CROUPIER__RPC_FRAME__BODY_PUSH || f->player_id != players[0])
        return;
    const Croupier__ServerMessage *m = f->push;
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN) {
        v->turns++;
        v->nwindow = m->turn->n_window_seats < MAXS ? m->turn->n_window_seats : MAXS;
        memcpy(v->window, m->turn->window_seats, v->nwindow * sizeof v->window[0]);
    } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT) {
        Croupier__Niuniu__NiuEvent *ev = croupier__niuniu__niu_event__unpack(
            NULL, m->game_event->body.len, m->game_event->body.data);
        ck_assert_ptr_nonnull(ev);
        if (ev->kind_case == CROUPIER__NIUNIU__NIU_EVENT__KIND_BANKER) {
            v->banker = (int)ev->banker->seat;
            v->mult = (int)ev->banker->mult;
            v->mults_above_1 += v->mult > 1;
            if (v->bankers < 16)
                v->banker_seq[v->bankers] = v->banker;
            v->bankers++;
            memset(v->has_shown, 0, sizeof v->has_shown);
        } else if (ev->kind_case == CROUPIER__NIUNIU__NIU_EVENT__KIND_SHOWN) {
            ck_assert_uint_lt(ev->shown->seat, MAXS);
            ck_assert_uint_eq(ev->shown->cards.len, NIUNIU_HAND_CARDS);
            memcpy(v->shown[ev->shown->seat], ev->shown->cards.data, NIUNIU_HAND_CARDS);
            v->has_shown[ev->shown->seat] = true;
        }
        croupier__niuniu__niu_event__free_unpacked(ev, NULL);
    } else if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
        const Croupier__RoundEnd *re = m->round_end;
        if (re->outcome != CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED) {
            v->voided++;
            return;
        }
        v->completed++;
        v->rake += re->rake;
        v->with_transfers += re->n_transfers > 0;
        long long sum[MAXS] = {0}, house = 0;
        v->nx = 0;
        for (size_t k = 0; k < re->n_transfers && k < 16; k++) {
            const Croupier__Transfer *x = re->transfers[k];
            v->xfrom[k] = x->has_from_seat ? (int)x->from_seat : -1;
            v->xto[k] = x->has_to_seat ? (int)x->to_seat : -1;
            v->xamount[k] = x->amount;
            snprintf(v->xreason[k], sizeof v->xreason[k], "%s", x->reason);
            v->nx++;
            if (v->xfrom[k] >= 0 && v->xfrom[k] < MAXS)
                sum[v->xfrom[k]] -= x->amount;
            if (v->xto[k] >= 0 && v->xto[k] < MAXS)
                sum[v->xto[k]] += x->amount;
            else
                house += x->amount;
        }
        bool wrong = house != re->rake;
        memset(v->delta, 0, sizeof v->delta);
        for (size_t k = 0; k < re->n_deltas; k++) {
            unsigned s = re->deltas[k]->seat;
            wrong = wrong || s >= MAXS || sum[s] != re->deltas[k]->delta;
            if (s < MAXS)
                v->delta[s] = re->deltas[k]->delta;
        }
        v->transfers_wrong += wrong;
    }
}

static void pump(rpcc_t *c, view_t *v, int ms)
{
    long long end = ts_now_ms() + ms;
    for (int left; (left = (int)(end - ts_now_ms())) > 0;) {
        Croupier__RpcFrame *f = rpcc_next_event(c, left);
        if (f == NULL)
            return;
        view_apply(v, f);
        frame_free_rpc(f);
    }
}

static bool wait_turns(rpcc_t *c, view_t *v, int n, int ms)
{
    for (long long end = ts_now_ms() + ms; v->turns < n && ts_now_ms() < end;)
        pump(c, v, 20);
    return v->turns >= n;
}

static bool wait_completed(rpcc_t *c, view_t *v, int n, int ms)
{
    for (long long end = ts_now_ms() + ms; v->completed + v->voided < n && ts_now_ms() < end;)
        pump(c, v, 20);
    return v->completed + v->voided >= n;
}

static void fill(Croupier__RpcFrame *f, uint64_t rid, uint64_t player)
{
    f->request_id = rid;
    f->has_player_id = f->has_session_id = f->has_deadline_unix_ms = true;
    f->player_id = f->session_id = player;
    f->deadline_unix_ms = (uint64_t)rpcc_wall_ms() + 5000;
}

static int reply_code(rpcc_t *c, view_t *v, uint64_t rid, Croupier__RpcFrame **out)
{
    Croupier__RpcFrame *r = rpcc_wait_reply(c, rid, 5000);
    ck_assert_msg(r != NULL, "no reply to request %" PRIu64, rid);
    int code = r->reply->code;
    if (out != NULL)
        *out = r;
    else
        frame_free_rpc(r);
    if (v != NULL)
        pump(c, v, 0);
    return code;
}

/* Player i's NiuAction (amount < 0: none); the reply's code. */
static int act(rpcc_t *c, view_t *v, int i, Croupier__Niuniu__NiuMove move, int amount)
{
    Croupier__Niuniu__NiuAction na = CROUPIER__NIUNIU__NIU_ACTION__INIT;
    na.move = move;
    na.has_amount = amount >= 0;
    na.amount = (uint32_t)amount;
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_game_action_msg(c, rid, players[i], &na.base, 0), 0);
    return reply_code(c, v, rid, NULL);
}

/* players[0]'s wallet is wallet0, the others' WALLET; bank_min and rotate as the flags. */
static void env_start_with(env_t *e, const char *action_ms, int wallet0, const char *bank_min,
                           const char *rotate)
{
    char *args[] = {"--niuniu-seats",
                    "3",
                    "--niuniu-action-ms",
                    (char *)action_ms,
                    "--niuniu-gap-ms",
                    "200",
                    "--niuniu-rake-bp",
                    "1000",
                    "--niuniu-bank-min",
                    (char *)bank_min,
                    "--niuniu-rotate",
                    (char *)rotate,
                    "--niuniu-move-wait-ms",
                    "3000",
                    NULL};
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    for (int i = 0; i < NP; i++)
        free(ts_redis_cmd(e->redis, "SET {croupier:money}:wallet:%llu %d",
                          (unsigned long long)players[i], i == 0 ? wallet0 : WALLET));
    ck_assert_int_eq(testenv_start_game(e, &e->game, "niuniu", 30, args, NULL), 0);
}

static void env_start(env_t *e, const char *action_ms, int wallet0)
{
    env_start_with(e, action_ms, wallet0, "10", "0");
}

static long long redis_ll(env_t *e, const char *fmt, const char *arg)
{
    char *r = ts_redis_cmd(e->redis, fmt, arg);
    ck_assert_ptr_nonnull(r);
    long long n = strcmp(r, "(nil)") == 0 ? 0 : strtoll(r, NULL, 10);
    free(r);
    return n;
}

/* Every chip: the players' wallets, the seat accounts (ts.*) and the rake account. */
static long long all_chips(env_t *e, long long *rake)
{
    long long sum = 0;
    char key[64];
    for (int i = 0; i < NP; i++) {
        snprintf(key, sizeof key, "{croupier:money}:wallet:%" PRIu64, players[i]);
        sum += redis_ll(e, "GET %s", key);
    }
    char *keys = ts_redis_cmd(e->redis, "KEYS {croupier:money}:wallet:ts.*");
    for (char *p = keys, *nl; p != NULL && *p != '\0'; p = nl != NULL ? nl + 1 : NULL) {
        if ((nl = strchr(p, '\n')) != NULL)
            *nl = '\0';
        sum += redis_ll(e, "GET %s", p);
    }
    free(keys);
    *rake = redis_ll(e, "GET %s", "{croupier:money}:rake:niuniu");
    return sum + *rake;
}

static rpcc_t *join_all(env_t *e, view_t *v)
{
    rpcc_t *c = rpcc_connect("127.0.0.1", e->game.port, 5000);
    ck_assert_ptr_nonnull(c);
    memset(v, 0, sizeof *v);
    v->banker = -1;
    for (int i = 0; i < NP; i++) {
        uint64_t rid = next_rid++;
        Croupier__RpcFrame *r;
        ck_assert_int_eq(
            rpcc_join_engine(c, rid, players[i], CROUPIER__ENGINE__ENGINE_GAME, "niuniu", STAKE, 0),
            0);
        ck_assert_int_eq(reply_code(c, NULL, rid, &r), CROUPIER__ERROR_CODE__OK);
        ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
        v->seat_of[i] = (int)r->reply->payload->joined->seat;
        frame_free_rpc(r);
    }
    return c;
}

/* Player i's NiuState from a Resume's Snapshot (free with
 * croupier__niuniu__niu_state__free_unpacked). */
static Croupier__Niuniu__NiuState *state_of(rpcc_t *c, view_t *v, int i)
{
    uint64_t rid = next_rid++;
    Croupier__RpcFrame *r;
    ck_assert_int_eq(rpcc_resume(c, rid, players[i]), 0);
    ck_assert_int_eq(reply_code(c, v, rid, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert_int_eq(sn->state_case, CROUPIER__SNAPSHOT__STATE_GAME_STATE);
    Croupier__Niuniu__NiuState *st = croupier__niuniu__niu_state__unpack(
        NULL, sn->game_state->body.len, sn->game_state->body.data);
    ck_assert_ptr_nonnull(st);
    frame_free_rpc(r);
    return st;
}

/* The history records of the stream: each one's transfers make its results and rake; returns
 * how many have transfers, *wrong those that do not add up, *banker_missing those without a
 * banker. */
static int history_check(env_t *e, int *wrong, int *banker_missing)
{
    char *h = ts_redis_cmd(e->redis, "XRANGE {croupier:history:niuniu}:stream - +");
    ck_assert_ptr_nonnull(h);
    int with = 0;
    *wrong = *banker_missing = 0;
    for (const char *p = strstr(h, "{\"round\""); p != NULL; p = strstr(p + 1, "{\"round\"")) {
        json_t *rec = json_loads(p, JSON_DISABLE_EOF_CHECK, NULL), *x;
        ck_assert_ptr_nonnull(rec);
        json_t *xs = json_object_get(rec, "transfers");
        size_t k;
        long long sum[MAXS] = {0}, house = 0;
        with += xs != NULL;
        *banker_missing += xs != NULL && !json_is_integer(json_object_get(rec, "banker"));
        json_array_foreach(xs, k, x)
        {
            json_int_t from = json_integer_value(json_object_get(x, "from"));
            json_int_t to = json_integer_value(json_object_get(x, "to"));
            json_int_t amount = json_integer_value(json_object_get(x, "amount"));
            ck_assert(from >= 0 && from < MAXS && to >= -1 && to < MAXS && amount > 0);
            sum[from] -= amount;
            if (to >= 0)
                sum[to] += amount;
            else
                house += amount;
        }
        bool bad = xs != NULL && house != json_integer_value(json_object_get(rec, "rake"));
        json_array_foreach(json_object_get(rec, "results"), k, x)
        {
            json_int_t s = json_integer_value(json_object_get(x, "seat"));
            bad =
                bad || (xs != NULL && (s < 0 || s >= MAXS ||
                                       sum[s] != json_integer_value(json_object_get(x, "delta"))));
        }
        *wrong += bad;
        json_decref(rec);
    }
    free(h);
    return with;
}

/*
 * The round's record reveals its deck (docs/fairness.md): it opens the commitment and holds the
 * hands shown, five cards a seat dealt in, seat by seat from the deck's top.
 */
static void check_deck(env_t *e, const view_t *v)
{
    char *h = ts_redis_cmd(e->redis, "XREVRANGE {croupier:history:niuniu}:stream + - COUNT 1");
    const char *p = h != NULL ? strstr(h, "{\"round\"") : NULL;
    ck_assert_ptr_nonnull(p);
    json_t *rec = json_loads(p, JSON_DISABLE_EOF_CHECK, NULL);
    ck_assert_ptr_nonnull(rec);
    uint8_t commit[DECK_COMMIT_LEN], deck[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN], got[32];
    const char *ch = json_string_value(json_object_get(rec, "deck_commitment"));
    const char *dh = json_string_value(json_object_get(rec, "deck"));
    const char *nh = json_string_value(json_object_get(rec, "deck_nonce"));
    ck_assert(ch != NULL && dh != NULL && nh != NULL);
    ck_assert_int_eq(deck_unhex(ch, commit, sizeof commit), DECK_COMMIT_LEN);
    ck_assert_int_eq(deck_unhex(dh, deck, sizeof deck), NIUNIU_DECK_CARDS);
    ck_assert_int_eq(deck_unhex(nh, nonce, sizeof nonce), DECK_NONCE_LEN);
    deck_commitment(deck, NIUNIU_DECK_CARDS, nonce, got);
    ck_assert(memcmp(got, commit, sizeof got) == 0);
    for (int s = 0, k = 0; s < NP; s++)
        if (v->has_shown[s])
            ck_assert(memcmp(deck + NIUNIU_HAND_CARDS * k++, v->shown[s], NIUNIU_HAND_CARDS) == 0);
    json_decref(rec);
    free(h);
}

/*
 * One round played by hand (docs/rules/niuniu.md "Round"): every refusal of the bid and bet
 * windows changes nothing; the highest bid banks at its multiplier; the banker is out of the
 * bets; each seat sees four cards, then its fifth at the show; and the round settles exactly as
 * the rules settle it (niuniu_settle: the losers pay the banker, the banker pays the winners,
 * strongest hand first, all it has when short -- a banker of 1,000 chips at x3 facing bets of 5
 * and 4 stakes may be -- each reason the winning hand's category), then every winner pays the
 * house 10 % of its win,
 * in RoundEnd and in the hand history, with every chip counted.
 */
START_TEST(test_niuniu_round_settles_pairwise_with_the_winners_raked)
{
    env_t e;
    env_start(&e, "20000", 1000); /* a banker of 1,000 chips may be short */
    view_t v;
    rpcc_t *c = join_all(&e, &v);
    ck_assert(wait_turns(c, &v, 1, 8000));
    ck_assert_uint_eq(v.nwindow, 3); /* every seat may bank: the bid window is everyone's */
    Croupier__Niuniu__NiuState *st = state_of(c, &v, 1);
    ck_assert(st->has_phase && st->phase == CROUPIER__NIUNIU__NIU_PHASE__NIU_BIDDING);
    ck_assert(st->has_own_cards && st->own_cards.len == 4);
    ck_assert_uint_eq(st->max_bid, 4);
    croupier__niuniu__niu_state__free_unpacked(st, NULL);
    /* Refusals: a bet in the bid window, a bid above 4, no amount, an amount over the cap. */
    ck_assert_int_eq(act(c, &v, 0, CROUPIER__NIUNIU__NIU_MOVE__NIU_BET, 1),
                     CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    ck_assert_int_eq(act(c, &v, 0, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID, 5),
                     CROUPIER__ERROR_CODE__BET_ABOVE_MAX);
    ck_assert_int_eq(act(c, &v, 0, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID, -1),
                     CROUPIER__ERROR_CODE__BAD_REQUEST);
    ck_assert_int_eq(act(c, &v, 0, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID, 5000),
                     CROUPIER__ERROR_CODE__BAD_REQUEST);
    /* Through the kit-game client (tests/support/rpcc.h): a body that is no NiuAction, an empty
     * one, a Join naming another engine, and an engine the protocol does not define. */
    static const uint8_t junk[] = {0xff, 0xff, 0xff};
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_game_action(c, rid, players[0], junk, sizeof junk, 0), 0);
    ck_assert_int_eq(reply_code(c, &v, rid, NULL), CROUPIER__ERROR_CODE__MALFORMED_FRAME);
    rid = next_rid++;
    ck_assert_int_eq(rpcc_game_action(c, rid, players[0], NULL, 0, 0), 0); /* no move */
    ck_assert_int_eq(reply_code(c, &v, rid, NULL), CROUPIER__ERROR_CODE__MALFORMED_FRAME);
    ck_assert_int_eq(rpcc_game_action(c, next_rid++, players[0], NULL, 3, 0), -EINVAL);
    rid = next_rid++;
    ck_assert_int_eq(
        rpcc_join_engine(c, rid, 9199, CROUPIER__ENGINE__ENGINE_TRADITIONAL, "niuniu", STAKE, 0),
        0);
    int code = reply_code(c, &v, rid, NULL);
    ck_assert_msg(code == CROUPIER__ERROR_CODE__WRONG_ENGINE, "a traditional Join: code %d", code);
    ck_assert_int_eq(
        rpcc_join_engine(c, next_rid++, players[1], (Croupier__Engine)99, "niuniu", STAKE, 0),
        -EINVAL);
    ck_assert_int_eq(v.bankers, 0);
    ck_assert_int_eq(act(c, &v, 0, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID, 3),
                     CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, 0, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID, 1),
                     CROUPIER__ERROR_CODE__NOT_YOUR_TURN); /* decided */
    ck_assert_int_eq(act(c, &v, 1, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID, 2),
                     CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, 2, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID, 0),
                     CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_turns(c, &v, 2, 5000));
    ck_assert_int_eq(v.bankers, 1);
    ck_assert_int_eq(v.banker, v.seat_of[0]);
    ck_assert_int_eq(v.mult, 3);
    ck_assert_uint_eq(v.nwindow, 2); /* the punters */
    ck_assert_int_eq(act(c, &v, 0, CROUPIER__NIUNIU__NIU_MOVE__NIU_BET, 1),
                     CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
    ck_assert_int_eq(act(c, &v, 1, CROUPIER__NIUNIU__NIU_MOVE__NIU_BET, 7),
                     CROUPIER__ERROR_CODE__ILLEGAL_MOVE); /* not an option */
    ck_assert_int_eq(act(c, &v, 1, CROUPIER__NIUNIU__NIU_MOVE__NIU_BID, 1),
                     CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    ck_assert_int_eq(act(c, &v, 1, CROUPIER__NIUNIU__NIU_MOVE__NIU_BET, 5),
                     CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(act(c, &v, 2, CROUPIER__NIUNIU__NIU_MOVE__NIU_BET, 4),
                     CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_turns(c, &v, 3, 5000));
    ck_assert_uint_eq(v.nwindow, 3); /* everyone shows */
    st = state_of(c, &v, 2);
    ck_assert(st->phase == CROUPIER__NIUNIU__NIU_PHASE__NIU_SHOWING && st->has_mult &&
              st->mult == 3 && st->own_cards.len == 5);
    croupier__niuniu__niu_state__free_unpacked(st, NULL);
    for (int i = 0; i < NP; i++)
        ck_assert_int_eq(act(c, &v, i, CROUPIER__NIUNIU__NIU_MOVE__NIU_SHOW, -1),
                         CROUPIER__ERROR_CODE__OK);
    ck_assert(wait_completed(c, &v, 1, 5000));
    ck_assert_int_eq(v.completed, 1);
    ck_assert_int_eq(v.transfers_wrong, 0);

    /* The rules' own settlement of the hands shown, then the winners' rake. */
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    cfg.seats = 3, cfg.stake = STAKE, cfg.bank_min_stakes = 10;
    niuniu_round_t r = {.banker = v.banker, .mult = 3};
    for (int s = 0; s < 3; s++) {
        ck_assert(v.has_shown[s]);
        memcpy(r.cards[s], v.shown[s], NIUNIU_HAND_CARDS);
        r.stack[s] = s == v.banker ? 1000 : 4000;
    }
    r.bet[v.seat_of[1]] = 5 * STAKE;
    r.bet[v.seat_of[2]] = 4 * STAKE;
    niuniu_settlement_t want;
    ck_assert_int_eq(niuniu_settle(&cfg, &r, &want), 0);
    ck_assert_int_eq(v.nx, want.n + (int)(want.delta[0] > 0) + (int)(want.delta[1] > 0) +
                               (int)(want.delta[2] > 0));
    long long rake = 0;
    for (int k = 0; k < want.n; k++) {
        const niuniu_transfer_t *x = &want.t[k];
        ck_assert_int_eq(v.xfrom[k], x->player_won ? v.banker : x->seat);
        ck_assert_int_eq(v.xto[k], x->player_won ? x->seat : v.banker);
        ck_assert_int_eq(v.xamount[k], x->amount);
        ck_assert_str_eq(v.xreason[k], niuniu_category_name(x->category));
    }
    for (int s = 0, k = want.n; s < 3; s++) {
        if (want.delta[s] <= 0)
            continue;
        ck_assert_int_eq(v.xfrom[k], s);
        ck_assert_int_eq(v.xto[k], -1);
        ck_assert_int_eq(v.xamount[k], want.delta[s] * RAKE_BP / 10000);
        ck_assert_str_eq(v.xreason[k], "rake");
        rake += v.xamount[k++];
    }
    for (int s = 0; s < 3; s++)
        ck_assert_int_eq(v.delta[s], want.delta[s] - (want.delta[s] > 0 ? want.delta[s] / 10 : 0));
    ck_assert_int_eq(v.rake, rake);

    long long in_rake;
    ck_assert_int_eq(all_chips(&e, &in_rake), 1000 + (NP - 1) * WALLET);
    ck_assert_int_eq(in_rake, rake);
    int wrong, no_banker;
    ck_assert_int_eq(history_check(&e, &wrong, &no_banker), 1);
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_eq(no_banker, 0);
    check_deck(&e, &v);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * Nobody acts: every window ends on its deadline with the automatic moves (no bid: a banker drawn
 * at multiplier 1; the smallest bet; the hands shown), counted as timeouts, and rounds go on back
 * to back, each settled pairwise; RoundEnd and the hand history agree, and wallets + seat
 * accounts + the rake account hold every chip the players brought.
 */
START_TEST(test_niuniu_rounds_play_on_automatic_moves_and_conserve_money)
{
    env_t e;
    env_start(&e, "150", WALLET);
    view_t v;
    rpcc_t *c = join_all(&e, &v);
    ck_assert(wait_completed(c, &v, 4, 15000));
    ck_assert_int_eq(v.voided, 0);
    ck_assert_int_ge(v.bankers, 4);
    ck_assert_int_eq(v.mult, 1);
    ck_assert_int_eq(v.with_transfers, v.completed); /* with three punters, someone always pays */
    ck_assert_int_eq(v.transfers_wrong, 0);
    ck_assert_int_gt(testenv_metric(&e.game, "tk_timeouts_total{engine=\"niuniu\"}"), 0);
    testenv_stop_server(&e.game); /* no round after those counted below */
    long long rake;
    ck_assert_int_eq(all_chips(&e, &rake), NP * WALLET);
    ck_assert_int_ge(rake, v.rake);
    int wrong, no_banker;
    ck_assert_int_ge(history_check(&e, &wrong, &no_banker), v.completed);
    ck_assert_int_eq(wrong, 0);
    ck_assert_int_eq(no_banker, 0);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * A drain hands the table over (docs/protocol.md "Whole-table moves"): the round in progress
 * finishes, no other starts, the table offers itself, the server that adopts it answers each
 * player with the table's Snapshot (same seats, the chips that add up), and deals on there; every
 * chip is counted before and after, and the drained server exits holding nothing.
 */
START_TEST(test_niuniu_drain_hands_the_table_over_to_another_server)
{
    env_t e;
    env_start(&e, "150", WALLET);
    testenv_server_t b;
    char *args[] = {"--niuniu-seats",
                    "3",
                    "--niuniu-action-ms",
                    "150",
                    "--niuniu-gap-ms",
                    "200",
                    "--niuniu-rake-bp",
                    "1000",
                    "--niuniu-bank-min",
                    "10",
                    NULL};
    ck_assert_int_eq(testenv_start_game(&e, &b, "niuniu", 30, args, NULL), 0);
    view_t v;
    rpcc_t *c = join_all(&e, &v);
    ck_assert(wait_turns(c, &v, 1, 8000)); /* a round runs */
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 5000, NULL), 200);
    for (long long end = ts_now_ms() + 8000; v.offers < NP && ts_now_ms() < end;)
        pump(c, &v, 50);
    ck_assert_int_eq(v.offers, NP);   /* one notice per player */
    ck_assert_int_ge(v.completed, 1); /* the round the drain found ended */
    int turns = v.turns;
    rpcc_t *cb = rpcc_connect("127.0.0.1", b.port, 5000);
    ck_assert_ptr_nonnull(cb);
    long long chips = 0;
    for (int i = 0; i < NP; i++) {
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT, *r;
        Croupier__Adopt a = CROUPIER__ADOPT__INIT;
        a.offer_id = v.offer_id;
        a.engine = CROUPIER__ENGINE__ENGINE_GAME;
        a.game = "niuniu";
        a.stake = STAKE;
        uint64_t rid = next_rid++;
        fill(&f, rid, players[i]);
        f.body_case = CROUPIER__RPC_FRAME__BODY_ADOPT;
        f.adopt = &a;
        ck_assert_int_eq(rpcc_send(cb, &f), 0);
        ck_assert_int_eq(reply_code(cb, NULL, rid, &r), CROUPIER__ERROR_CODE__OK);
        const Croupier__Snapshot *sn = r->reply->payload->snapshot;
        ck_assert_ptr_nonnull(sn);
        ck_assert_int_eq((int)sn->your_seat, v.seat_of[i]);
        ck_assert_uint_eq(sn->n_seats, NP);
        for (size_t k = 0; i == 0 && k < sn->n_seats; k++)
            chips += sn->seats[k]->chips;
        frame_free_rpc(r);
    }
    char *st = ts_redis_cmd(e.redis, "HGET {croupier:money}:handoff:%s status", v.offer_id);
    ck_assert_str_eq(st, "adopted");
    free(st);
    long long rake, wallets = 0;
    ck_assert_int_eq(all_chips(&e, &rake), NP * WALLET);
    for (int i = 0; i < NP; i++) {
        char key[64];
        snprintf(key, sizeof key, "{croupier:money}:wallet:%" PRIu64, players[i]);
        wallets += redis_ll(&e, "GET %s", key);
    }
    ck_assert_int_eq(wallets + chips + rake, NP * WALLET);
    /* The old server exits drained, holding nothing; the moved table deals on. */
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    int status;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &status), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=drained"));
    v.turns = turns;
    ck_assert(wait_turns(cb, &v, turns + 1, 8000));
    rpcc_close(c);
    rpcc_close(cb);
    testenv_stop_server(&b);
    testenv_stop(&e);
}
END_TEST

/*
 * The rotation (--niuniu-rotate 1, docs/rules/niuniu.md "The banker"): no bid window; the bank
 * passes clockwise every round to the next seat that may bank, always at multiplier 1.
 */
START_TEST(test_niuniu_rotation_passes_the_bank_clockwise)
{
    env_t e;
    env_start_with(&e, "150", WALLET, "10", "1");
    view_t v;
    rpcc_t *c = join_all(&e, &v);
    ck_assert(wait_completed(c, &v, 4, 15000));
    ck_assert_int_ge(v.bankers, 4);
    ck_assert_int_eq(v.mults_above_1, 0);
    for (int k = 1; k < 4; k++)
        ck_assert_int_eq(v.banker_seq[k], (v.banker_seq[k - 1] + 1) % NP);
    ck_assert_int_eq(v.transfers_wrong, 0);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * Nobody may bank (--niuniu-bank-min 1000 stakes, stacks of 400): every round ends at once with
 * nothing moved -- no banker, no transfer, every delta 0 -- and the chips stay where they are.
 */
START_TEST(test_niuniu_round_without_a_banker_moves_nothing)
{
    env_t e;
    env_start_with(&e, "150", WALLET, "1000", "0");
    view_t v;
    rpcc_t *c = join_all(&e, &v);
    ck_assert(wait_completed(c, &v, 2, 10000));
    ck_assert_int_eq(v.voided, 0);
    ck_assert_int_eq(v.bankers, 0);
    ck_assert_int_eq(v.with_transfers, 0);
    for (int s = 0; s < NP; s++)
        ck_assert_int_eq(v.delta[s], 0);
    long long rake;
    ck_assert_int_eq(all_chips(&e, &rake), NP * WALLET);
    ck_assert_int_eq(rake, 0);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

static Suite *niuniu_engine_suite(void)
{
    Suite *s = suite_create("niuniu_engine");
    TCase *tc = tcase_create("engine");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_niuniu_round_settles_pairwise_with_the_winners_raked);
    tcase_add_test(tc, test_niuniu_rounds_play_on_automatic_moves_and_conserve_money);
    tcase_add_test(tc, test_niuniu_drain_hands_the_table_over_to_another_server);
    tcase_add_test(tc, test_niuniu_rotation_passes_the_bank_clockwise);
    tcase_add_test(tc, test_niuniu_round_without_a_banker_moves_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(niuniu_engine_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
