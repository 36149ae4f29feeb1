/*
 * The persistent engine (resident blackjack tables on the table kit, games/persistent/
 * bj_engine.h) against the real croupier-game binary, a real redis-server and the real
 * k8s/prestop.sh under busybox. Players are driven through a real rpc link (rpcc), as a gateway
 * would. Cards are put on top of the shoe with CROUPIER_BJ_TEST_STACK where a test needs a given
 * hand.
 *
 * Since the engine stands on the kit (docs/architecture.md §12) a player's chips at a table are
 * in the kit's seat account of their seat (ts.<service>.<slot>.<epoch>.<desk>.<seat>) instead of
 * one wallet bjs.<service>.<player>, the turn timer's variable is CROUPIER_BJ_ACTION_MS (the
 * kit's --bj-action-ms; it was CROUPIER_BJ_TURN_MS) and the buy-in's floor is
 * CROUPIER_BJ_MIN_BUYIN (the kit's --bj-min-buyin; the old fixed buy-in is BUYIN = MIN_BUYIN).
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "deck.h"
#include "replay.h"
#include "rpcc.h"
#include "support.h"
#include "testenv.h"

#define FUND 1000000000000LL

/* redis-server and croupier-game --engine persistent (tests/support/testenv.h), and one rpc
 * link to the game server. */
typedef struct {
    testenv_t rig;
    rpcc_t *c;
} env_t;

/* These tests drive one server without a gateway: a drained table closes and its players are
 * re-seated one by one (tk.h "moves"; whole-table moves are tested in test_tk_drain and
 * test_gate). */
static char *const per_player_moves[] = {"--bj-move-wait-ms", "-1", NULL};

/* Starts redis-server and croupier-game --engine persistent, then connects the rpc link;
 * extra_env holds CROUPIER_BJ_* settings. */
static void env_start(env_t *e, int drain_max_s, char *const extra_env[])
{
    memset(e, 0, sizeof *e);
    ck_assert_int_eq(testenv_start(&e->rig, NULL), 0);
    ck_assert_int_eq(testenv_start_game(&e->rig, &e->rig.game, "persistent", drain_max_s,
                                        per_player_moves, extra_env),
                     0);
    e->c = rpcc_connect("127.0.0.1", e->rig.game.port, 5000);
    ck_assert_ptr_nonnull(e->c);
}

static void env_stop(env_t *e)
{
    rpcc_close(e->c);
    testenv_stop(&e->rig);
}

static long long wallet(env_t *e, const char *who)
{
    char *v = ts_redis_cmd(e->rig.redis, "GET {croupier:money}:wallet:%s", who);
    ck_assert_ptr_nonnull(v);
    long long x = strcmp(v, "(nil)") == 0 ? 0 : atoll(v);
    free(v);
    return x;
}

static void set_wallet(env_t *e, const char *who, long long v)
{
    free(ts_redis_cmd(e->rig.redis, "SET {croupier:money}:wallet:%s %lld", who, v));
}

/* The kit's seat accounts of the service "persistent" (ts.persistent.*): how many exist, how
 * many hold chips, and the chips they hold. */
static long long seat_accounts(env_t *e, int *count, int *nonzero)
{
    char *keys = ts_redis_cmd(e->rig.redis, "KEYS {croupier:money}:wallet:ts.persistent.*");
    ck_assert_ptr_nonnull(keys);
    long long sum = 0;
    *count = *nonzero = 0;
    for (char *p = keys; *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        const char *name = strstr(p, "wallet:");
        if (name != NULL) {
            long long v = wallet(e, name + strlen("wallet:"));
            sum += v;
            *count += 1;
            *nonzero += v != 0;
        }
        if (nl == NULL)
            break;
        p = nl + 1;
    }
    free(keys);
    return sum;
}

/* Waits until the service's seat accounts hold want chips in want_nonzero accounts, at least
 * one account existing (the writer applies buy-ins and cash-outs asynchronously). */
static void wait_accounts(env_t *e, long long want, int want_nonzero)
{
    long long end = ts_now_ms() + 5000, sum = 0;
    int n = 0, left = 0;
    while (ts_now_ms() < end) {
        sum = seat_accounts(e, &n, &left);
        if (n > 0 && sum == want && left == want_nonzero)
            return;
        ts_sleep_ms(20);
    }
    ck_abort_msg("%d seat accounts, %d hold %lld chips; want %d holding %lld", n, left, sum,
                 want_nonzero, want);
}

/* Every seat account of the service is back at 0. */
static void wait_accounts_empty(env_t *e)
{
    wait_accounts(e, 0, 0);
}

/* Waits until a wallet holds want (the writer applies asynchronously). */
static void wait_wallet(env_t *e, const char *who, long long want)
{
    long long end = ts_now_ms() + 5000, v = 0;
    while (ts_now_ms() < end) {
        v = wallet(e, who);
        if (v == want)
            return;
        ts_sleep_ms(20);
    }
    ck_abort_msg("wallet %s holds %lld, want %lld", who, v, want);
}

/* Waits until the blackjack hand-history stream holds want records (written asynchronously). */
static void wait_histories(env_t *e, long long want)
{
    long long end = ts_now_ms() + 5000, n = 0;
    while (ts_now_ms() < end) {
        char *v = ts_redis_cmd(e->rig.redis, "XLEN {croupier:history:blackjack}:stream");
        ck_assert_ptr_nonnull(v);
        n = atoll(v);
        free(v);
        if (n >= want)
            break;
        ts_sleep_ms(20);
    }
    ck_assert_int_eq(n, want);
}

/* /drain/status's human_desks (testenv_human_desks), asserted to be there. */
static long human_desks(env_t *e)
{
    long v = testenv_human_desks(&e->rig.game);
    ck_assert_int_ge(v, 0);
    return v;
}

static uint64_t next_rid = 100;

static Croupier__RpcFrame *reply(env_t *e, uint64_t rid, int want)
{
    Croupier__RpcFrame *r = rpcc_wait_reply(e->c, rid, 5000);
    ck_assert_msg(r != NULL, "no reply to %llu", (unsigned long long)rid);
    ck_assert_msg((int)r->reply->code == want, "request %llu: code %d (%s), want %d",
                  (unsigned long long)rid, r->reply->code,
                  r->reply->error && r->reply->error->message ? r->reply->error->message : "",
                  want);
    return r;
}

/* Joins a blackjack table of stake as the persistent engine (the kit refuses a Join naming
 * another engine with WRONG_ENGINE, and rpcc_join names the traditional one). Returns the code. */
static int join(env_t *e, uint64_t player, int64_t stake)
{
    uint64_t rid = next_rid++;
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_PERSISTENT;
    j.game = "blackjack";
    j.stake = stake;
    f.request_id = rid;
    f.has_player_id = true;
    f.player_id = player;
    f.has_session_id = true;
    f.session_id = player;
    f.has_deadline_unix_ms = true;
    f.deadline_unix_ms = (uint64_t)(rpcc_wall_ms() + 5000);
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
    f.join = &j;
    ck_assert_int_eq(rpcc_send(e->c, &f), 0);
    Croupier__RpcFrame *r = rpcc_wait_reply(e->c, rid, 5000);
    ck_assert_ptr_nonnull(r);
    int code = r->reply->code;
    if (code == 0) {
        ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
        ck_assert_int_eq(r->reply->payload->joined->engine, CROUPIER__ENGINE__ENGINE_PERSISTENT);
    }
    frame_free_rpc(r);
    return code;
}

/* Sends one BlackjackAction and checks the answer's code. */
static void act(env_t *e, uint64_t player, Croupier__BlackjackMove move, int64_t amount, int insure,
                int want)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__BlackjackAction ba = CROUPIER__BLACKJACK_ACTION__INIT;
    ba.move = move;
    if (move == CROUPIER__BLACKJACK_MOVE__BJ_BET) {
        ba.has_amount = true;
        ba.amount = amount;
    }
    if (move == CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE) {
        ba.has_insure = true;
        ba.insure = insure;
    }
    a.kind_case = CROUPIER__ACTION__KIND_BLACKJACK;
    a.blackjack = &ba;
    uint64_t rid = next_rid++;
    f.request_id = rid;
    f.has_player_id = true;
    f.player_id = player;
    f.has_session_id = true;
    f.session_id = player;
    f.has_deadline_unix_ms = true;
    f.deadline_unix_ms = (uint64_t)(rpcc_wall_ms() + 5000);
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    ck_assert_int_eq(rpcc_send(e->c, &f), 0);
    frame_free_rpc(reply(e, rid, want));
}

static Croupier__Snapshot *snap_of(Croupier__RpcFrame *r)
{
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    Croupier__Snapshot *s = r->reply->payload->snapshot;
    ck_assert_int_eq(s->state_case, CROUPIER__SNAPSHOT__STATE_BLACKJACK);
    return s;
}

static Croupier__RpcFrame *resume(env_t *e, uint64_t player)
{
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_resume(e->c, rid, player), 0);
    return reply(e, rid, 0);
}

/* Cards of (seat, hand) in a snapshot, or -1 when the hand is absent. */
static int hand_cards(const Croupier__Snapshot *s, uint32_t seat, uint32_t hand)
{
    for (size_t i = 0; i < s->blackjack->n_hands; i++)
        if (s->blackjack->hands[i]->seat == seat && s->blackjack->hands[i]->hand == hand)
            return (int)s->blackjack->hands[i]->cards.len;
    return -1;
}

/* Skips events until a push of the given body arrives (a Turn must be a decision turn, with a
 * hand, an insurance offer with to_call, or a betting window's with min_amount, as asked).
 * Returns it (free it) or NULL. */
enum { WANT_DECISION = 1, WANT_INSURANCE = 2, WANT_BET = 3 };
static Croupier__RpcFrame *wait_push(env_t *e, int body, int turn_kind, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0)
            return NULL;
        Croupier__RpcFrame *f = rpcc_next_event(e->c, left);
        if (f == NULL)
            return NULL;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH && (int)f->push->body_case == body) {
            if (body != CROUPIER__SERVER_MESSAGE__BODY_TURN ||
                (turn_kind == WANT_DECISION && f->push->turn->has_hand) ||
                (turn_kind == WANT_INSURANCE && f->push->turn->has_to_call) ||
                (turn_kind == WANT_BET && f->push->turn->has_min_amount))
                return f;
        }
        frame_free_rpc(f);
    }
}

/* Waits for the next RoundEnd and returns the sum of its deltas for player. */
static char last_round[128];

static int64_t round_delta(env_t *e, uint64_t player, int *outcome)
{
    Croupier__RpcFrame *f;
    /* Every seated player gets a copy through the one link: skip copies of the last one. */
    for (;;) {
        f = wait_push(e, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 0, 8000);
        ck_assert_msg(f != NULL, "no RoundEnd");
        if (strcmp(f->push->round_end->round_id, last_round) != 0)
            break;
        frame_free_rpc(f);
    }
    snprintf(last_round, sizeof last_round, "%s", f->push->round_end->round_id);
    int64_t d = 0, sum = 0;
    Croupier__RoundEnd *re = f->push->round_end;
    for (size_t i = 0; i < re->n_deltas; i++) {
        sum += re->deltas[i]->delta;
        if (re->deltas[i]->player_id == player)
            d += re->deltas[i]->delta;
    }
    /* The house is the counterparty: players' deltas sum to minus the house's, not zero. */
    ck_assert_int_eq(re->rake, 0);
    (void)sum;
    if (outcome != NULL)
        *outcome = re->outcome;
    frame_free_rpc(f);
    return d;
}

#define BET CROUPIER__BLACKJACK_MOVE__BJ_BET
#define HIT CROUPIER__BLACKJACK_MOVE__BJ_HIT
#define STAND CROUPIER__BLACKJACK_MOVE__BJ_STAND
#define DOUBLE CROUPIER__BLACKJACK_MOVE__BJ_DOUBLE
#define SPLIT CROUPIER__BLACKJACK_MOVE__BJ_SPLIT
#define SURRENDER CROUPIER__BLACKJACK_MOVE__BJ_SURRENDER
#define INSURANCE CROUPIER__BLACKJACK_MOVE__BJ_INSURANCE
#define E_OK CROUPIER__ERROR_CODE__OK

/*
 * One player, five stacked rounds: double, hit then stand, split, surrender, insurance. Each
 * legal action is applied; each illegal one is refused with its code and changes nothing (the
 * snapshot after it is the one before it). The wallet ends at its start plus the round deltas,
 * and the house pays exactly what the player won.
 */
START_TEST(test_bj_engine_legal_and_illegal_actions_settle_with_the_house)
{
    env_t e;
    /* A 200 ms gap: each next bet (and the final leave) lands between rounds, so no betting
     * window passes without a bet (the kit writes a hand history for every round). */
    char *env[] = {"CROUPIER_BJ_BET_MS=3000",
                   "CROUPIER_BJ_ACTION_MS=4000",
                   "CROUPIER_BJ_GAP_MS=200",
                   "CROUPIER_BJ_BUYIN=50",
                   "CROUPIER_BJ_MIN_BUYIN=50",
                   "CROUPIER_BJ_TEST_STACK=6c,9h,5d,7s,Tc,Kd;Tc,9h,2d,8s,5c;8c,6h,8d,Ts,3c,Kc,9d;"
                   "Tc,Th,6d,9s;Tc,Ah,9d,7s",
                   NULL};
    env_start(&e, 30, env);
    const uint64_t p = 1001;
    /* A wallet below the buy-in (50 x 10, the floor too) cannot sit. */
    set_wallet(&e, "1001", 499);
    ck_assert_int_eq(join(&e, p, 10), CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
    ck_assert_int_eq(wallet(&e, "1001"), 499);
    set_wallet(&e, "1001", 100000);
    ck_assert_int_eq(join(&e, p, 10), E_OK);
    wait_wallet(&e, "1001", 99500);
    wait_accounts(&e, 500, 1); /* the seat's account */
    const char *house = "house.persistent";
    wait_wallet(&e, house, FUND);

    /* Bets outside the limits or the stack; acting with no round. */
    act(&e, p, BET, 5, 0, CROUPIER__ERROR_CODE__BET_BELOW_MIN);
    act(&e, p, BET, 1001, 0, CROUPIER__ERROR_CODE__BET_ABOVE_MAX);
    act(&e, p, BET, 800, 0, CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
    int64_t total = 0;

    /* Round 0: 6+5 against a 9. Split of unequal cards and insurance are refused; double. */
    act(&e, p, BET, 10, 0, E_OK);
    Croupier__RpcFrame *f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    act(&e, p, BET, 10, 0, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    act(&e, p, SPLIT, 0, 0, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    act(&e, p, INSURANCE, 0, 1, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    Croupier__RpcFrame *r = resume(&e, p);
    Croupier__Snapshot *s = snap_of(r);
    ck_assert_int_eq(s->blackjack->phase, CROUPIER__BLACKJACK_PHASE__BJ_PLAYING);
    ck_assert(s->has_turn_seat);
    ck_assert_int_eq(s->turn_seat, s->your_seat);
    ck_assert(s->has_time_left_ms && s->time_left_ms > 0);
    ck_assert_ptr_nonnull(s->round_id);
    ck_assert_int_eq(hand_cards(s, s->your_seat, 0), 2);
    ck_assert_int_eq(s->blackjack->dealer_cards.len, 1); /* the hole card stays hidden */
    ck_assert_int_eq(s->blackjack->dealer_cards.data[0], 9 << 2 | 2);
    uint32_t seat = s->your_seat;
    frame_free_rpc(r);
    act(&e, p, DOUBLE, 0, 0, E_OK);
    int64_t d = round_delta(&e, p, NULL);
    ck_assert_int_eq(d, 20);
    total += d;

    /* Round 1: 10+2, hit to 17; double after hitting and split are refused; stand: push. */
    act(&e, p, BET, 10, 0, E_OK);
    f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    act(&e, p, HIT, 0, 0, E_OK);
    act(&e, p, DOUBLE, 0, 0, CROUPIER__ERROR_CODE__ILLEGAL_MOVE);
    act(&e, p, SPLIT, 0, 0, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    r = resume(&e, p);
    s = snap_of(r);
    ck_assert_int_eq(hand_cards(s, seat, 0), 3);
    ck_assert_int_eq(s->blackjack->hands[0]->bet, 10);
    frame_free_rpc(r);
    act(&e, p, STAND, 0, 0, E_OK);
    act(&e, p, STAND, 0, 0, CROUPIER__ERROR_CODE__NO_ROUND);
    d = round_delta(&e, p, NULL);
    ck_assert_int_eq(d, 0);

    /* Round 2: a pair of eights against a 6: split, stand on both; the dealer busts. */
    act(&e, p, BET, 10, 0, E_OK);
    f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    act(&e, p, SPLIT, 0, 0, E_OK);
    r = resume(&e, p);
    s = snap_of(r);
    ck_assert_int_eq(hand_cards(s, seat, 0), 2);
    ck_assert_int_eq(hand_cards(s, seat, 1), 1);
    frame_free_rpc(r);
    act(&e, p, STAND, 0, 0, E_OK);
    act(&e, p, STAND, 0, 0, E_OK);
    d = round_delta(&e, p, NULL);
    ck_assert_int_eq(d, 20);
    total += d;

    /* Round 3: 16 against a ten (no dealer blackjack): surrender half the bet. */
    act(&e, p, BET, 10, 0, E_OK);
    f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    act(&e, p, SURRENDER, 0, 0, E_OK);
    d = round_delta(&e, p, NULL);
    ck_assert_int_eq(d, -5);
    total += d;

    /* Round 4: 19 against an ace: insurance taken (lost: no blackjack), then stand and win. */
    act(&e, p, BET, 10, 0, E_OK);
    f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_INSURANCE, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    act(&e, p, HIT, 0, 0, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    r = resume(&e, p);
    s = snap_of(r);
    ck_assert_int_eq(s->blackjack->phase, CROUPIER__BLACKJACK_PHASE__BJ_INSURANCE_OFFER);
    frame_free_rpc(r);
    act(&e, p, INSURANCE, 0, 1, E_OK);
    act(&e, p, INSURANCE, 0, 0, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    act(&e, p, STAND, 0, 0, E_OK);
    d = round_delta(&e, p, NULL);
    ck_assert_int_eq(d, 5);
    total += d;

    /* Leave: the stack goes back to the wallet; the house paid what the player won. */
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_leave(e.c, rid, p), 0);
    frame_free_rpc(reply(&e, rid, 0));
    wait_wallet(&e, "1001", 100000 + total);
    wait_wallet(&e, house, FUND - total);
    wait_accounts_empty(&e);
    /* A hand history per completed round. */
    wait_histories(&e, 5);
    env_stop(&e);
}
END_TEST

/* A hand-history card ("As") as the core's card (suit x 13 + rank, ace 0), or -1. */
static int core_card(const char *text)
{
    static const char ranks[] = "A23456789TJQK", suits[] = "cdhs";
    if (text == NULL || strlen(text) != 2)
        return -1;
    const char *r = strchr(ranks, text[0]), *u = strchr(suits, text[1]);
    return r == NULL || u == NULL ? -1 : (int)((u - suits) * 13 + (r - ranks));
}

/*
 * docs/fairness.md "Blackjack's shoes": every Deal carries the commitment of the shoe its card
 * came from, the shoe's number and the card's position; the commitment stays the same over the
 * rounds of a shoe and changes with the reshuffle; the Snapshot carries it too. Every round's
 * record names its shoe, commitment and first position; the record of the round that retired
 * the shoe reveals its order and nonce, which open the commitment the players got, and every
 * round's recorded cards are the shoe's cards at its positions.
 */
START_TEST(test_bj_engine_deals_carry_the_shoe_commitment_and_records_open_it)
{
    env_t e;
    char *env[] = {"CROUPIER_BJ_BET_MS=3000",
                   "CROUPIER_BJ_ACTION_MS=100",
                   "CROUPIER_BJ_TRUSTEE_MS=20",
                   "CROUPIER_BJ_GAP_MS=20",
                   "CROUPIER_BJ_SITOUT_AFTER=1000",
                   "CROUPIER_BJ_DECKS=1",
                   NULL};
    env_start(&e, 30, env);
    const uint64_t p = 4001;
    set_wallet(&e, "4001", 100000);
    ck_assert_int_eq(join(&e, p, 10), E_OK);
    /* Between rounds the Snapshot names the shoe in use and its commitment. */
    Croupier__RpcFrame *r = resume(&e, p);
    Croupier__Snapshot *s = snap_of(r);
    ck_assert(s->has_deck_commitment && s->deck_commitment.len == DECK_COMMIT_LEN);
    ck_assert(s->blackjack->has_shoe && s->blackjack->has_shoe_dealt);
    ck_assert_uint_eq(s->blackjack->shoe, 1);
    ck_assert_uint_eq(s->blackjack->shoe_dealt, 0);
    uint8_t commit[4][DECK_COMMIT_LEN]; /* by shoe number 1..3 */
    memcpy(commit[1], s->deck_commitment.data, DECK_COMMIT_LEN);
    frame_free_rpc(r);
    int next[4] = {0}, hole = -1, rounds = 0, rounds_shoe1 = 0;
    /* What the player saw face up on the Deals of shoe 1, by position (wire codes; -1: none). */
    int seen1[DECK_MAX_CARDS];
    for (int k = 0; k < DECK_MAX_CARDS; k++)
        seen1[k] = -1;
    uint64_t shoe = 1;
    while (rounds < 30 && (shoe < 2 || next[2] < 10)) {
        act(&e, p, BET, 10, 0, E_OK);
        bool round_of_shoe1 = false;
        for (;;) {
            Croupier__RpcFrame *f = rpcc_next_event(e.c, 5000);
            ck_assert_msg(f != NULL, "no RoundEnd");
            if (f->body_case != CROUPIER__RPC_FRAME__BODY_PUSH) {
                frame_free_rpc(f);
                continue;
            }
            Croupier__ServerMessage *m = f->push;
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
                frame_free_rpc(f);
                break;
            }
            if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL) {
                Croupier__Deal *d = m->deal;
                ck_assert(d->has_deck_commitment && d->deck_commitment.len == DECK_COMMIT_LEN);
                ck_assert(d->has_shoe && d->has_shoe_position);
                ck_assert_uint_ge(d->shoe, shoe);
                ck_assert_uint_le(d->shoe, 3);
                if (d->shoe != shoe) { /* a new shoe: a new commitment, dealt from position 0 */
                    ck_assert_uint_eq(d->shoe, shoe + 1);
                    shoe = d->shoe;
                    memcpy(commit[shoe], d->deck_commitment.data, DECK_COMMIT_LEN);
                    ck_assert(memcmp(commit[shoe], commit[shoe - 1], DECK_COMMIT_LEN) != 0);
                }
                ck_assert(memcmp(d->deck_commitment.data, commit[shoe], DECK_COMMIT_LEN) == 0);
                if ((int)d->shoe_position == next[shoe]) {
                    if (d->has_count && !d->has_seat)
                        hole = next[shoe]; /* the hole card, face down */
                    next[shoe]++;
                } else { /* the hole card shown: at the position it was dealt */
                    ck_assert(!d->has_seat && d->has_cards);
                    ck_assert_int_eq((int)d->shoe_position, hole);
                }
                round_of_shoe1 |= shoe == 1;
                if (d->shoe == 1 && d->has_cards && d->cards.len == 1 &&
                    d->shoe_position < DECK_MAX_CARDS)
                    seen1[d->shoe_position] = d->cards.data[0];
            }
            frame_free_rpc(f);
        }
        rounds++;
        rounds_shoe1 += round_of_shoe1;
    }
    ck_assert_uint_ge(shoe, 2);
    ck_assert_int_ge(rounds_shoe1, 3); /* one commitment over several rounds */
    r = resume(&e, p);
    s = snap_of(r);
    if (s->blackjack->has_shoe) { /* not retired: the shoe in use and the next position */
        ck_assert_uint_eq(s->blackjack->shoe, shoe);
        ck_assert_uint_eq(s->blackjack->shoe_dealt, (uint32_t)next[shoe]);
        ck_assert(memcmp(s->deck_commitment.data, commit[shoe], DECK_COMMIT_LEN) == 0);
    }
    frame_free_rpc(r);
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_leave(e.c, rid, p), 0);
    frame_free_rpc(reply(&e, rid, 0));
    wait_histories(&e, rounds);

    /* The records: positions and commitments as dealt; shoe 1's reveal opens it and holds every
     * recorded card at its position. */
    char *h = ts_redis_cmd(e.rig.redis, "XRANGE {croupier:history:blackjack}:stream - +");
    ck_assert_ptr_nonnull(h);
    uint8_t deck[DECK_MAX_CARDS];
    int ndeck = 0, checked = 0, expect_first = 0;
    const char *retiring = NULL; /* the round that revealed shoe 1 */
    json_t *recs = json_array();
    for (char *line = strtok(h, "\n"); line != NULL; line = strtok(NULL, "\n"))
        if (line[0] == '{')
            json_array_append_new(recs, json_loads(line, 0, NULL));
    size_t i, j;
    json_t *rec, *x;
    json_array_foreach(recs, i, rec)
    {
        json_array_foreach(json_object_get(rec, "shoe_reveal"), j, x)
        {
            if (json_integer_value(json_object_get(x, "shoe")) != 1)
                continue;
            uint8_t c[DECK_COMMIT_LEN], n[DECK_NONCE_LEN], got[DECK_COMMIT_LEN];
            ck_assert_int_eq(
                deck_unhex(json_string_value(json_object_get(x, "commitment")), c, sizeof c),
                DECK_COMMIT_LEN);
            ck_assert(memcmp(c, commit[1], DECK_COMMIT_LEN) == 0);
            ndeck = deck_unhex(json_string_value(json_object_get(x, "deck")), deck, sizeof deck);
            ck_assert_int_eq(ndeck, 52);
            ck_assert_int_eq(
                deck_unhex(json_string_value(json_object_get(x, "nonce")), n, sizeof n),
                DECK_NONCE_LEN);
            deck_commitment_tagged(DECK_SHOE_TAG, deck, 52, n, got);
            ck_assert(memcmp(got, commit[1], DECK_COMMIT_LEN) == 0);
            retiring = json_string_value(json_object_get(rec, "round"));
        }
    }
    ck_assert_int_eq(ndeck, 52); /* shoe 1 was revealed */
    /* ... and indexed by its commitment (docs/hand-history.md "The shoe index"): the key names
     * the retiring round's stream entry, so the replay of every round of shoe 1 finds it. */
    {
        char hex[2 * DECK_COMMIT_LEN + 1];
        deck_hex(commit[1], DECK_COMMIT_LEN, hex);
        char *by_shoe =
            ts_redis_cmd(e.rig.redis, "GET {croupier:history:blackjack}:seen:shoe:%s", hex);
        char *by_round =
            ts_redis_cmd(e.rig.redis, "GET {croupier:history:blackjack}:seen:%s", retiring);
        ck_assert(by_shoe != NULL && by_round != NULL);
        ck_assert_str_ne(by_shoe, "(nil)");
        ck_assert_str_eq(by_shoe, by_round);
        free(by_shoe);
        free(by_round);
    }
    json_array_foreach(recs, i, rec)
    {
        json_t *shoes = json_object_get(rec, "shoes"), *cards = json_object_get(rec, "cards");
        ck_assert_int_ge(json_array_size(shoes), 1);
        x = json_array_get(shoes, 0);
        if (json_integer_value(json_object_get(x, "shoe")) != 1)
            continue;
        char hex[2 * DECK_COMMIT_LEN + 1];
        deck_hex(commit[1], DECK_COMMIT_LEN, hex);
        ck_assert_str_eq(json_string_value(json_object_get(x, "commitment")), hex);
        int first = (int)json_integer_value(json_object_get(x, "first"));
        int count = (int)json_integer_value(json_object_get(x, "count"));
        ck_assert_int_eq(first, expect_first); /* the rounds cover the shoe in order */
        expect_first = first + count;
        for (int k = 0; k < count; k++)
            ck_assert_int_eq(core_card(json_string_value(
                                 json_object_get(json_array_get(cards, (size_t)k), "card"))),
                             deck[first + k]);
        checked++;
    }
    ck_assert_int_eq(checked, rounds_shoe1);
    ck_assert_int_eq(expect_first, next[1]);

    /* The player's own check, from what the protocol gives him (docs/fairness.md "Who can open
     * it"): the replays of his rounds carry each round's shoe, commitment, first position and
     * cards, and the retiring round's replay opens shoe 1; with the commitment and the cards he
     * got on the Deals, everything matches. */
    char hex1[2 * DECK_COMMIT_LEN + 1];
    deck_hex(commit[1], DECK_COMMIT_LEN, hex1);
    int replay_rounds = 0, replay_opened = 0, replay_cards = 0;
    json_array_foreach(recs, i, rec)
    {
        char err[200] = "";
        Croupier__Replay *rp = replay_build(rec, p, err, sizeof err);
        ck_assert_msg(rp != NULL, "replay_build: %s", err);
        for (size_t k = 0; k < rp->n_shoes; k++) {
            const Croupier__ReplayShoe *rs = rp->shoes[k];
            if (rs->shoe != 1)
                continue;
            ck_assert_str_eq(rs->commitment, hex1);
            ck_assert(rs->has_cards);
            for (size_t c = 0; c < rs->cards.len; c++) {
                int seen = seen1[rs->first + c];
                if (seen >= 0) { /* every card the player saw face up at that position */
                    ck_assert_int_eq(rs->cards.data[c], seen);
                    replay_cards++;
                }
            }
            replay_rounds++;
        }
        for (size_t k = 0; k < rp->n_shoe_reveal; k++) {
            const Croupier__ReplayShoeReveal *rv = rp->shoe_reveal[k];
            if (rv->shoe != 1)
                continue;
            uint8_t od[DECK_MAX_CARDS], on[DECK_NONCE_LEN], oc[DECK_COMMIT_LEN];
            ck_assert_str_eq(rv->commitment, hex1);
            int nd = deck_unhex(rv->deck, od, sizeof od);
            ck_assert_int_eq(nd, 52);
            ck_assert_int_eq(deck_unhex(rv->nonce, on, sizeof on), DECK_NONCE_LEN);
            deck_commitment_tagged(DECK_SHOE_TAG, od, (size_t)nd, on, oc);
            ck_assert(memcmp(oc, commit[1], DECK_COMMIT_LEN) == 0);
            ck_assert(rv->has_dealt);
            for (int q = 0; q < (int)rv->dealt; q++) /* the wire code in blackjack's byte */
                if (seen1[q] >= 0)
                    ck_assert_int_eq((seen1[q] & 3) * 13 + ((seen1[q] >> 2) == 14 ? 0
                                                                               : (seen1[q] >> 2) - 1),
                                     od[q]);
            replay_opened++;
        }
        croupier__replay__free_unpacked(rp, NULL);
    }
    ck_assert_int_eq(replay_rounds, rounds_shoe1);
    ck_assert_int_eq(replay_opened, 1);
    ck_assert_int_ge(replay_cards, 2 * rounds_shoe1); /* at least the player's own two a round */
    json_decref(recs);
    free(h);
    env_stop(&e);
}
END_TEST

/* Every record of the blackjack hand-history stream, oldest first (a new JSON array). */
static json_t *history_records(env_t *e)
{
    char *h = ts_redis_cmd(e->rig.redis, "XRANGE {croupier:history:blackjack}:stream - +");
    ck_assert_ptr_nonnull(h);
    json_t *recs = json_array();
    for (char *line = strtok(h, "\n"); line != NULL; line = strtok(NULL, "\n"))
        if (line[0] == '{')
            json_array_append_new(recs, json_loads(line, 0, NULL));
    free(h);
    return recs;
}

/* Waits (up to timeout_ms) for the table record "record":"shoe_retirement" and returns all the
 * records (a new JSON array) with *at its index, or fails. */
static json_t *wait_retirement(env_t *e, int timeout_ms, size_t *at)
{
    long long end = ts_now_ms() + timeout_ms;
    for (;;) {
        json_t *recs = history_records(e);
        size_t i;
        json_t *rec;
        json_array_foreach(recs, i, rec)
        {
            const char *kind = json_string_value(json_object_get(rec, "record"));
            if (kind != NULL && strcmp(kind, "shoe_retirement") == 0) {
                *at = i;
                return recs;
            }
        }
        json_decref(recs);
        ck_assert_msg(ts_now_ms() < end, "no shoe_retirement record within %d ms", timeout_ms);
        ts_sleep_ms(50);
    }
}

/* Plays one round with a bet of 10 (the turn timer stands for the player): the shoe's
 * commitment on the round's Deals (the same on every one: shoe 1 of a one-deck shoe at the
 * table's start) into commit, and returns the position after the last card dealt. */
static int play_one_round(env_t *e, uint64_t p, uint8_t commit[DECK_COMMIT_LEN])
{
    act(e, p, BET, 10, 0, E_OK);
    int next = 0;
    for (;;) {
        Croupier__RpcFrame *f = rpcc_next_event(e->c, 5000);
        ck_assert_msg(f != NULL, "no RoundEnd");
        Croupier__ServerMessage *m =
            f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH ? f->push : NULL;
        if (m != NULL && m->body_case == CROUPIER__SERVER_MESSAGE__BODY_ROUND_END) {
            frame_free_rpc(f);
            return next;
        }
        if (m != NULL && m->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL) {
            ck_assert(m->deal->has_deck_commitment && m->deal->has_shoe_position);
            ck_assert_uint_eq(m->deal->shoe, 1);
            ck_assert(memcmp(m->deal->deck_commitment.data, commit, DECK_COMMIT_LEN) == 0);
            if ((int)m->deal->shoe_position >= next)
                next = (int)m->deal->shoe_position + 1;
        }
        frame_free_rpc(f);
    }
}

/*
 * Checks the shoe_retirement record at recs[at] (docs/hand-history.md "Table records"): the
 * table's record id (its rounds' ids with round number 0, once in the stream), its shoe 1
 * opens the commitment the players got, dealt says how many of its cards were dealt, and every
 * round's recorded cards are the shoe's at their positions; then croupier-rules verify-shoe
 * accepts the records (exit 0).
 */
static void check_retirement(env_t *e, json_t *recs, size_t at, const uint8_t *commit, int dealt)
{
    json_t *ret = json_array_get(recs, at);
    const char *rid = json_string_value(json_object_get(ret, "round"));
    ck_assert_ptr_nonnull(rid);
    size_t rl = strlen(rid);
    ck_assert(rl > 2 && strcmp(rid + rl - 2, ":0") == 0);
    ck_assert_str_eq(json_string_value(json_object_get(ret, "game")), "blackjack");
    ck_assert_str_eq(json_string_value(json_object_get(ret, "engine")), "persistent");
    ck_assert_int_eq(json_integer_value(json_object_get(ret, "stake")), 10);
    ck_assert(json_integer_value(json_object_get(ret, "ts")) > 0);
    ck_assert_int_eq(json_array_size(json_object_get(ret, "seats")), 0);
    ck_assert_ptr_null(json_object_get(ret, "outcome")); /* not a round */
    json_t *rev = json_object_get(ret, "shoe_reveal");
    ck_assert_int_eq(json_array_size(rev), 1);
    json_t *x = json_array_get(rev, 0);
    ck_assert_int_eq(json_integer_value(json_object_get(x, "shoe")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(x, "dealt")), dealt);
    uint8_t deck[DECK_MAX_CARDS], c[DECK_COMMIT_LEN], n[DECK_NONCE_LEN], got[DECK_COMMIT_LEN];
    ck_assert_int_eq(deck_unhex(json_string_value(json_object_get(x, "commitment")), c, sizeof c),
                     DECK_COMMIT_LEN);
    ck_assert(memcmp(c, commit, DECK_COMMIT_LEN) == 0);
    int ndeck = deck_unhex(json_string_value(json_object_get(x, "deck")), deck, sizeof deck);
    ck_assert_int_eq(ndeck, 52);
    ck_assert_int_eq(deck_unhex(json_string_value(json_object_get(x, "nonce")), n, sizeof n),
                     DECK_NONCE_LEN);
    deck_commitment_tagged(DECK_SHOE_TAG, deck, 52, n, got);
    ck_assert(memcmp(got, commit, DECK_COMMIT_LEN) == 0);
    /* The table's rounds: same id prefix, their cards at their positions, up to dealt. */
    size_t i, ids = 0;
    json_t *rec;
    int covered = 0;
    json_array_foreach(recs, i, rec)
    {
        const char *r = json_string_value(json_object_get(rec, "round"));
        ids += strcmp(r, rid) == 0;
        if (i == at)
            continue;
        ck_assert(strncmp(r, rid, rl - 1) == 0); /* service:slot:epoch:desk: of the table */
        ck_assert_ptr_null(json_object_get(rec, "shoe_reveal")); /* none retired in a round */
        json_t *sh = json_array_get(json_object_get(rec, "shoes"), 0);
        if (sh == NULL)
            continue; /* a window without a bet */
        int first = (int)json_integer_value(json_object_get(sh, "first"));
        int count = (int)json_integer_value(json_object_get(sh, "count"));
        ck_assert_int_eq(first, covered);
        for (int k = 0; k < count; k++)
            ck_assert_int_eq(
                core_card(json_string_value(json_object_get(
                    json_array_get(json_object_get(rec, "cards"), (size_t)k), "card"))),
                deck[first + k]);
        covered = first + count;
    }
    ck_assert_int_eq(ids, 1); /* written once */
    ck_assert_int_eq(covered, dealt);

    /* The player's own check (docs/fairness.md "Who can open it"): his replay of each round
     * finds the table's record as the gateway does -- the shoe index of the commitment it dealt
     * from (replay_shoes_unrevealed(), docs/hand-history.md "The shoe index"), which names the
     * same stream entry as the record's seen key, that entry -- and carries the retired shoe
     * from it (replay_add_shoe_reveals()), which opens the commitment of his Deals and holds
     * every card of the round at its position. */
    char *tsid = ts_redis_cmd(e->rig.redis, "GET {croupier:history:blackjack}:seen:%s", rid);
    ck_assert_ptr_nonnull(tsid);
    tsid[strcspn(tsid, "\n")] = '\0';
    int replayed = 0;
    json_array_foreach(recs, i, rec)
    {
        const char *r = json_string_value(json_object_get(rec, "round"));
        if (i == at || json_array_size(json_object_get(rec, "shoes")) == 0)
            continue;
        char tid[160], err[200] = "";
        ck_assert_int_eq(replay_table_record_id(r, tid, sizeof tid), 0);
        ck_assert_str_eq(tid, rid);
        uint64_t player = strtoull(json_string_value(json_object_get(
                                       json_array_get(json_object_get(rec, "seats"), 0), "player")),
                                   NULL, 10);
        Croupier__Replay *rp = replay_build(rec, player, err, sizeof err);
        ck_assert_msg(rp != NULL, "replay_build: %s", err);
        ck_assert_uint_eq(rp->n_shoe_reveal, 0); /* no round retired it */
        ck_assert(replay_wants_shoe_reveal(rp));
        const char *want[4];
        ck_assert_uint_eq(replay_shoes_unrevealed(rp, want, 4), 1);
        char *sid =
            ts_redis_cmd(e->rig.redis, "GET {croupier:history:blackjack}:seen:shoe:%s", want[0]);
        ck_assert_ptr_nonnull(sid);
        sid[strcspn(sid, "\n")] = '\0';
        ck_assert_str_eq(sid, tsid); /* the index names the table's record */
        char *entry = ts_redis_cmd(e->rig.redis, "XRANGE {croupier:history:blackjack}:stream %s %s",
                                   sid, sid);
        ck_assert_ptr_nonnull(entry);
        char *data = strchr(entry, '{');
        ck_assert_ptr_nonnull(data);
        data[strcspn(data, "\n")] = '\0';
        json_t *table = json_loads(data, 0, NULL);
        ck_assert_ptr_nonnull(table);
        free(entry);
        free(sid);
        ck_assert_int_eq(replay_add_shoe_reveals(rp, table), 1);
        const Croupier__ReplayShoeReveal *rv = rp->shoe_reveal[0];
        ck_assert_uint_eq(rv->shoe, 1);
        ck_assert(rv->has_dealt && rv->dealt == (uint32_t)dealt);
        uint8_t rdeck[DECK_MAX_CARDS], rn[DECK_NONCE_LEN], rc[DECK_COMMIT_LEN];
        ck_assert_int_eq(deck_unhex(rv->deck, rdeck, sizeof rdeck), 52);
        ck_assert_int_eq(deck_unhex(rv->nonce, rn, sizeof rn), DECK_NONCE_LEN);
        deck_commitment_tagged(DECK_SHOE_TAG, rdeck, 52, rn, rc);
        ck_assert(memcmp(rc, commit, DECK_COMMIT_LEN) == 0);
        ck_assert_uint_eq(rp->n_shoes, 1);
        const Croupier__ReplayShoe *rs = rp->shoes[0];
        for (size_t k = 0; k < rs->cards.len; k++) {
            unsigned w = rs->cards.data[k], rank = w >> 2;
            int bj = (int)(w & 3) * 13 + (rank == 14 ? 0 : (int)rank - 1);
            ck_assert_int_eq(bj, rdeck[rs->first + k]);
        }
        croupier__replay__free_unpacked(rp, NULL);
        json_decref(table);
        replayed++;
    }
    ck_assert_int_ge(replayed, 1);
    free(tsid);
    char *seen = ts_redis_cmd(e->rig.redis, "EXISTS {croupier:history:blackjack}:seen:%s", rid);
    ck_assert_str_eq(seen, "1");
    free(seen);
    /* croupier-rules verify-shoe takes the records as they are in the stream. */
    char *path = ts_tmpdir(), file[512], cmd[1200];
    snprintf(file, sizeof file, "%s/records.json", path);
    ck_assert_int_eq(json_dump_file(recs, file, JSON_COMPACT), 0);
    snprintf(cmd, sizeof cmd, "%s verify-shoe %s >%s/out.txt 2>&1",
             ts_build_path("tools/croupier-rules"), file, path);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "verify-shoe exit %d", st);
    snprintf(cmd, sizeof cmd, "rm -rf %s", path);
    ck_assert_int_eq(system(cmd), 0);
    free(path);
}

/*
 * docs/fairness.md "Blackjack's shoes", "Revealed": a table left empty for --bj-idle-ms goes,
 * and the shoe it was dealing (never retired in a round: a one-deck shoe, two rounds) is
 * revealed in a table record of its own, "record":"shoe_retirement" (docs/hand-history.md
 * "Table records"), which opens the commitment the players got on the Deals; verify-shoe
 * accepts the table's records.
 */
START_TEST(test_bj_engine_idle_table_reveals_its_shoe_in_a_retirement_record)
{
    env_t e;
    char *env[] = {"CROUPIER_BJ_BET_MS=3000",       "CROUPIER_BJ_ACTION_MS=100",
                   "CROUPIER_BJ_TRUSTEE_MS=20",     "CROUPIER_BJ_GAP_MS=1000",
                   "CROUPIER_BJ_SITOUT_AFTER=1000", "CROUPIER_BJ_DECKS=1",
                   "CROUPIER_BJ_IDLE_MS=300",       NULL};
    env_start(&e, 30, env);
    const uint64_t p = 4101;
    set_wallet(&e, "4101", 100000);
    ck_assert_int_eq(join(&e, p, 10), E_OK);
    Croupier__RpcFrame *r = resume(&e, p);
    uint8_t commit[DECK_COMMIT_LEN];
    memcpy(commit, snap_of(r)->deck_commitment.data, DECK_COMMIT_LEN);
    frame_free_rpc(r);
    int dealt = play_one_round(&e, p, commit);
    dealt = play_one_round(&e, p, commit); /* positions go on in the same shoe */
    ck_assert_int_ge(dealt, 8);
    uint64_t rid = next_rid++; /* leaves in the gap between rounds: nothing more is dealt */
    ck_assert_int_eq(rpcc_leave(e.c, rid, p), 0);
    frame_free_rpc(reply(&e, rid, 0));
    size_t at;
    json_t *recs = wait_retirement(&e, 5000, &at);
    check_retirement(&e, recs, at, commit, dealt);
    json_decref(recs);
    ck_assert(!ts_proc_log_has(e.rig.game.proc, "bj_shoe_unrevealed"));
    env_stop(&e);
}
END_TEST

/*
 * The same when the server drains while the table is between rounds (its player sits out)
 * and no server adopts it (moves off here): the table closes and reveals its shoe before the
 * server exits.
 */
START_TEST(test_bj_engine_table_closed_between_rounds_at_drain_reveals_its_shoe)
{
    env_t e;
    char *env[] = {"CROUPIER_BJ_BET_MS=300",
                   "CROUPIER_BJ_ACTION_MS=100",
                   "CROUPIER_BJ_TRUSTEE_MS=20",
                   "CROUPIER_BJ_GAP_MS=50",
                   "CROUPIER_BJ_SITOUT_AFTER=1",
                   "CROUPIER_BJ_DECKS=1",
                   NULL};
    env_start(&e, 30, env);
    const uint64_t p = 4102;
    set_wallet(&e, "4102", 100000);
    ck_assert_int_eq(join(&e, p, 10), E_OK);
    Croupier__RpcFrame *r = resume(&e, p);
    uint8_t commit[DECK_COMMIT_LEN];
    memcpy(commit, snap_of(r)->deck_commitment.data, DECK_COMMIT_LEN);
    frame_free_rpc(r);
    int dealt = play_one_round(&e, p, commit);
    ck_assert_int_ge(dealt, 4);
    /* The next window passes without a bet: the seat sits out and no round is dealt. */
    Croupier__RpcFrame *f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 0, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    ts_sleep_ms(300);
    ck_assert_int_eq(human_desks(&e), 0);
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 15000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    size_t at;
    json_t *recs = wait_retirement(&e, 1000, &at);
    check_retirement(&e, recs, at, commit, dealt);
    json_decref(recs);
    ck_assert(!ts_proc_log_has(e.rig.game.proc, "bj_shoe_unrevealed"));
    env_stop(&e);
}
END_TEST

/*
 * The chips at a table are in the seat's own account (the kit's ts.<service>.<slot>.<epoch>.
 * <desk>.<seat>), not in a wallet of the player's shared by the service's tables (the engine
 * before the kit used bjs.<service>.<player>, which another table's pending cash-out could share
 * during a rollout): a wallet of that old name is neither read nor touched; the buy-in lands in
 * the seat account, and leaving returns exactly it.
 */
START_TEST(test_bj_engine_buyin_goes_to_the_seat_account_and_back)
{
    env_t e;
    char *env[] = {"CROUPIER_BJ_GAP_MS=60000", "CROUPIER_BJ_BUYIN=50", "CROUPIER_BJ_MIN_BUYIN=50",
                   NULL};
    env_start(&e, 30, env);
    const uint64_t p = 1002;
    set_wallet(&e, "1002", 100000);
    set_wallet(&e, "bjs.persistent.1002", 700);
    ck_assert_int_eq(join(&e, p, 10), E_OK);
    wait_wallet(&e, "1002", 99500);
    wait_accounts(&e, 500, 1);
    uint64_t rid = next_rid++;
    ck_assert_int_eq(rpcc_leave(e.c, rid, p), 0);
    frame_free_rpc(reply(&e, rid, 0));
    wait_wallet(&e, "1002", 100000);
    wait_accounts_empty(&e);
    ck_assert_int_eq(wallet(&e, "bjs.persistent.1002"), 700);
    env_stop(&e);
}
END_TEST

/*
 * Sit-out (bj_engine.h): a seat that lets CROUPIER_BJ_SITOUT_AFTER betting windows pass without
 * a bet sits out, and no round is dealt while nobody else plays; a BJ_BET between rounds is the
 * bet for the next window and brings the seat back. Each window without a bet is a round of the
 * kit: RoundEnd lists the seat with delta 0 and the kit writes its hand history (the engine
 * before the kit wrote none for it).
 */
START_TEST(test_bj_engine_sits_out_after_windows_without_a_bet_and_a_bet_brings_it_back)
{
    env_t e;
    char *env[] = {"CROUPIER_BJ_BET_MS=200",
                   "CROUPIER_BJ_GAP_MS=50",
                   "CROUPIER_BJ_SITOUT_AFTER=2",
                   "CROUPIER_BJ_ACTION_MS=5000",
                   "CROUPIER_BJ_TEST_STACK=;;Tc,9h,6d,7s",
                   NULL};
    env_start(&e, 30, env);
    const uint64_t p = 4001;
    set_wallet(&e, "4001", 100000);
    ck_assert_int_eq(join(&e, p, 10), E_OK);
    for (int k = 0; k < 2; k++) {
        Croupier__RpcFrame *f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 0, 5000);
        ck_assert_ptr_nonnull(f);
        Croupier__RoundEnd *re = f->push->round_end;
        ck_assert_int_eq(re->outcome, CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED);
        ck_assert_int_eq(re->n_deltas, 1);
        ck_assert_int_eq(re->deltas[0]->player_id, p);
        ck_assert_int_eq(re->deltas[0]->delta, 0);
        frame_free_rpc(f);
    }
    /* Sitting out: five windows' time without a round. */
    Croupier__RpcFrame *f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 0, 1250);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(human_desks(&e), 0);
    /* A bet brings it back: the next window opens with it placed (16 against a 9). */
    act(&e, p, BET, 10, 0, E_OK);
    act(&e, p, BET, 20, 0, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED); /* one bet per window */
    f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    act(&e, p, STAND, 0, 0, E_OK);
    f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 0, 5000);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->push->round_end->n_deltas, 1);
    ck_assert_int_ne(f->push->round_end->deltas[0]->delta, 0); /* 16 v 16: the dealer draws */
    frame_free_rpc(f);
    wait_histories(&e, 3);
    env_stop(&e);
}
END_TEST

/*
 * A seat whose decision timed out is on the kit's trustee (its next turns are the automatic
 * move after CROUPIER_BJ_TRUSTEE_MS) until the player acts: the bet that closes the next window
 * deals, and the seat's first hand then gets the full CROUPIER_BJ_ACTION_MS (docs/architecture.md
 * §12, engine/tk.h "turns"), not the trustee's short delay.
 */
START_TEST(test_bj_engine_a_bet_after_a_timeout_gets_full_decision_time)
{
    env_t e;
    char *env[] = {"CROUPIER_BJ_BET_MS=5000",
                   "CROUPIER_BJ_GAP_MS=50",
                   "CROUPIER_BJ_ACTION_MS=800",
                   "CROUPIER_BJ_TRUSTEE_MS=100",
                   "CROUPIER_BJ_TEST_STACK=Tc,9h,6d,7s;Tc,9h,6d,7s",
                   NULL};
    env_start(&e, 30, env);
    const uint64_t p = 5001;
    set_wallet(&e, "5001", 100000);
    ck_assert_int_eq(join(&e, p, 10), E_OK);
    for (int round = 0; round < 2; round++) {
        Croupier__RpcFrame *f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_BET, 5000);
        ck_assert_ptr_nonnull(f);
        frame_free_rpc(f);
        act(&e, p, BET, 10, 0, E_OK); /* the only seat: the window closes, 16 against a 9 */
        f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 5000);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->push->turn->time_left_ms, 800);
        frame_free_rpc(f);
        /* Round 0: nobody decides, the hand stands on the timeout; round 1: the same. */
        f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 0, 5000);
        ck_assert_ptr_nonnull(f);
        frame_free_rpc(f);
    }
    env_stop(&e);
}
END_TEST

/*
 * The classic resident-table failure: two players seated, rounds back to back (they bet every
 * round and let the turn timer act for them). After /drain the current round finishes, no next
 * round starts, human_desks reaches 0 within one round and stays 0 while they remain seated,
 * the real preStop script returns, players get TableClosing, the gateway DeskClosing, and the
 * stacks are back in the wallets: the sum of all wallets with the house is unchanged. Acting
 * out of turn is refused along the way.
 */
START_TEST(test_bj_engine_drain_finishes_round_and_starts_no_next)
{
    env_t e;
    char *env[] = {"CROUPIER_BJ_BET_MS=400",
                   "CROUPIER_BJ_ACTION_MS=250",
                   "CROUPIER_BJ_GAP_MS=20",
                   "CROUPIER_BJ_SITOUT_AFTER=1000",
                   "CROUPIER_BJ_TEST_STACK=Tc,Td,9h,6d,6s,7s",
                   NULL};
    env_start(&e, 60, env);
    set_wallet(&e, "2001", 50000);
    set_wallet(&e, "2002", 50000);
    ck_assert_int_eq(join(&e, 2001, 10), E_OK);
    ck_assert_int_eq(join(&e, 2002, 10), E_OK);
    wait_wallet(&e, "house.persistent", FUND);
    const long long sum0 = 100000 + FUND;
    Croupier__RpcFrame *r = resume(&e, 2001);
    uint32_t seat1 = snap_of(r)->your_seat;
    frame_free_rpc(r);

    /* Out of turn: while one seat decides, the other player's hit is refused. */
    act(&e, 2001, BET, 10, 0, E_OK);
    act(&e, 2002, BET, 10, 0, E_OK);
    bool refused = false;
    for (int k = 0; k < 5 && !refused; k++) {
        Croupier__RpcFrame *f =
            wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 3000);
        if (f == NULL)
            break;
        uint64_t other = f->push->turn->seat == seat1 ? 2002 : 2001;
        frame_free_rpc(f);
        act(&e, other, HIT, 0, 0, CROUPIER__ERROR_CODE__NOT_YOUR_TURN);
        refused = true;
    }
    ck_assert(refused);
    round_delta(&e, 2001, NULL);
    act(&e, 2001, BET, 10, 0, E_OK);
    act(&e, 2002, BET, 10, 0, E_OK);
    round_delta(&e, 2001, NULL);
    act(&e, 2001, BET, 10, 0, E_OK);
    act(&e, 2002, BET, 10, 0, E_OK);
    ts_sleep_ms(100); /* the next round has begun */
    ck_assert_int_eq(human_desks(&e), 1);

    char port[32];
    snprintf(port, sizeof port, "HEALTH_PORT=%d", e.rig.game.health);
    char *pargv[] = {getenv("PRESTOP_WRAP") ? getenv("PRESTOP_WRAP") : "/bin/busybox", "sh",
                     (char *)ts_source_path("k8s/prestop.sh"), NULL};
    char *penv[] = {port, "DRAIN_MAX_SECONDS=60", NULL};
    ts_proc_t *pre = ts_proc_spawn(pargv, penv);
    ck_assert_ptr_nonnull(pre);
    int outcome = 0;
    round_delta(&e, 2001, &outcome);
    ck_assert_int_eq(outcome, CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED);
    long long t_end = ts_now_ms();
    /* The table's last shoe is revealed, once (docs/fairness.md "Blackjack's shoes"): shoe 2, the
     * stacked rest of shoe 1 (revealed when it was stacked). In the last round's record when the
     * drain reached the server during that round; in a shoe_retirement table record when it
     * came between rounds (a slow preStop under load: the table then closes before a deal). A
     * preStop slower still reaches the server in the betting window of the next round, which
     * nobody bets in: that round, dealt no card, is then the table's last and carries the reveal.
     * Either way the reveal is in the table's last record. */
    int reveals = 0;
    for (long long end = ts_now_ms() + 5000; reveals == 0 && ts_now_ms() < end; ts_sleep_ms(20)) {
        json_t *recs = history_records(&e);
        size_t i;
        json_t *rec;
        json_array_foreach(recs, i, rec)
        {
            const char *kind = json_string_value(json_object_get(rec, "record"));
            const char *rid = json_string_value(json_object_get(rec, "round"));
            bool in_last = i + 1 == json_array_size(recs);
            bool retirement = kind != NULL && strcmp(kind, "shoe_retirement") == 0;
            size_t k;
            json_t *x;
            json_array_foreach(json_object_get(rec, "shoe_reveal"), k, x)
            {
                if (json_integer_value(json_object_get(x, "shoe")) != 2)
                    continue;
                ck_assert_msg(in_last || retirement,
                              "shoe 2 revealed by round %s, not in the table's last record "
                              "(last round played: %s)",
                              rid != NULL ? rid : "-", last_round);
                reveals++;
            }
        }
        json_decref(recs);
    }
    ck_assert_msg(reveals == 1, "the table's last shoe revealed %d times", reveals);
    int st;
    ck_assert_int_eq(ts_proc_wait(pre, 5000, &st), 0);
    ck_assert_msg(ts_now_ms() - t_end < 1500, "preStop returned %lld ms after the round",
                  ts_now_ms() - t_end);
    ts_proc_free(pre);
    ck_assert_int_eq(human_desks(&e), 0);

    int closings = 0, table_closing = 0;
    for (;;) {
        Croupier__RpcFrame *f = rpcc_next_event(e.c, 500);
        if (f == NULL)
            break;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING)
            closings++;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING)
            table_closing++;
        ck_assert(!(f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
                    f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL));
        frame_free_rpc(f);
    }
    ck_assert_int_ge(closings, 1);
    ck_assert_int_eq(table_closing, 2);

    /* Several round lengths later: still no round, players still seated, chips all home. */
    ts_sleep_ms(2000);
    ck_assert_int_eq(human_desks(&e), 0);
    r = resume(&e, 2002);
    snap_of(r);
    frame_free_rpc(r);
    act(&e, 2001, BET, 10, 0, CROUPIER__ERROR_CODE__NO_ROUND);
    wait_accounts_empty(&e);
    ck_assert_int_eq(wallet(&e, "2001") + wallet(&e, "2002") + wallet(&e, "house.persistent"),
                     sum0);
    ck_assert_int_eq(join(&e, 2003, 10), CROUPIER__ERROR_CODE__DRAINING);

    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 5000, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=drained"));
    env_stop(&e);
}
END_TEST

/*
 * The drain bound passes with a hand being played: the round is voided (bets returned, nothing
 * settled), the players are told why, the stacks go home (the wallets are where they started)
 * and the exit says forced.
 */
START_TEST(test_bj_engine_bound_passes_round_voided_refunded)
{
    env_t e;
    char *env[] = {"CROUPIER_BJ_BET_MS=60000", "CROUPIER_BJ_ACTION_MS=60000",
                   "CROUPIER_BJ_GAP_MS=10", "CROUPIER_BJ_TEST_STACK=Tc,9h,6d,7s", NULL};
    env_start(&e, 1, env);
    set_wallet(&e, "3001", 5000);
    ck_assert_int_eq(join(&e, 3001, 10), E_OK);
    wait_wallet(&e, "house.persistent", FUND);
    act(&e, 3001, BET, 100, 0, E_OK);
    Croupier__RpcFrame *f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_TURN, WANT_DECISION, 5000);
    ck_assert_ptr_nonnull(f);
    frame_free_rpc(f);
    ck_assert_int_eq(human_desks(&e), 1); /* 16 against a 9, nobody acts */
    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_proc_signal(e.rig.game.proc, SIGTERM), 0);
    f = wait_push(&e, CROUPIER__SERVER_MESSAGE__BODY_ROUND_END, 0, 5000);
    ck_assert_ptr_nonnull(f);
    Croupier__RoundEnd *re = f->push->round_end;
    ck_assert_int_eq(re->outcome, CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED);
    ck_assert(re->has_void_reason);
    ck_assert_int_eq(re->void_reason, CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT);
    ck_assert_ptr_nonnull(re->detail);
    for (size_t i = 0; i < re->n_deltas; i++)
        ck_assert_int_eq(re->deltas[i]->delta, 0);
    frame_free_rpc(f);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.rig.game.proc, 10000, &st), 0);
    ck_assert_msg(ts_now_ms() - t0 < 6000, "forced exit took %lld ms", ts_now_ms() - t0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(e.rig.game.proc, "exit reason=forced"));
    /* Refunded: the stack went home before the lease was released; nothing was settled. */
    ck_assert_int_eq(wallet(&e, "3001"), 5000);
    int n, left;
    seat_accounts(&e, &n, &left);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(left, 0);
    ck_assert_int_eq(wallet(&e, "house.persistent"), FUND);
    env_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bj_engine");
    TCase *tc = tcase_create("actions");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bj_engine_legal_and_illegal_actions_settle_with_the_house);
    tcase_add_test(tc, test_bj_engine_buyin_goes_to_the_seat_account_and_back);
    tcase_add_test(tc,
                   test_bj_engine_sits_out_after_windows_without_a_bet_and_a_bet_brings_it_back);
    tcase_add_test(tc, test_bj_engine_a_bet_after_a_timeout_gets_full_decision_time);
    tcase_add_test(tc, test_bj_engine_deals_carry_the_shoe_commitment_and_records_open_it);
    tcase_add_test(tc, test_bj_engine_idle_table_reveals_its_shoe_in_a_retirement_record);
    suite_add_tcase(s, tc);
    tc = tcase_create("drain");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bj_engine_drain_finishes_round_and_starts_no_next);
    tcase_add_test(tc, test_bj_engine_bound_passes_round_voided_refunded);
    tcase_add_test(tc, test_bj_engine_table_closed_between_rounds_at_drain_reveals_its_shoe);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
