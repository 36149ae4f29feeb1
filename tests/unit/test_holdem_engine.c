/*
 * The hold'em engine (games/holdem/holdem_engine.h, issue 7) against the real croupier-game
 * binary (--engine holdem) and a real redis-server; players are driven through a real rpc link
 * (rpcc), as a gateway would. Timers are kept short with the engine's CROUPIER_HOLDEM_* variables
 * (the table kit's flags, engine/tk.h). Rules: docs/rules/holdem.md.
 */
#include <check.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <jansson.h>

#include "deck.h"
#include "replay.h"
#include "rpcc.h"
#include "support.h"
#include "testenv.h"

#define STAKE 10
#define MAXP 16

/* redis-server and croupier-game --engine holdem (tests/support/testenv.h). */
typedef testenv_t env_t;

/* What the players have been told so far (pushes reach every seated player; each event is
 * counted once, by its event_seq). */
typedef struct {
    uint64_t last_seq;
    int turn_seat; /* -1: nobody to act (after a round end) */
    int64_t to_call, min_to, max_to;
    bool min_known;
    int hand_hole_deals;   /* Deals of hole cards (any copy) since the last RoundEnd */
    bool turn_before_deal; /* the last Turn came before the hand's hole cards: a straddle offer */
    int rounds_completed, rounds_voided;
    char round_id[128];
    int plays, timed_out, deals_board;
    int table_closing, desk_closing;
    uint64_t busted; /* the player last told TableClosing{CLOSING_BUSTED} */
    int busted_count;
    uint64_t seat_player[9];
    struct {
        uint64_t player;
        uint8_t hole[2];
        bool has;
    } own[MAXP];
    int nown;
    int64_t round_delta_sum;
    uint64_t leaver;  /* a player who left during a hand: play_rounds never acts for them */
    int leaver_turns; /* Turns of the leaver's seat play_rounds left to the kit */
    struct {          /* the deck commitment each round's Deals carried (docs/fairness.md) */
        char round[128];
        uint8_t c[DECK_COMMIT_LEN];
    } commits[32];
    int ncommits;
    int deals_per_card; /* Deals whose commitment said deck_scheme 2 (per card) */
    uint64_t folder;    /* a player play_rounds folds for whenever he has a bet to call */
    struct {            /* the cards each player was dealt face up (his hole cards, the board) */
        char round[128];
        uint64_t player;
        uint8_t cards[7];
        size_t n;
    } seen[64];
    int nseen;
} model_t;

/* These tests drive one server without a gateway: a drained table closes and its players are
 * re-seated one by one (tk.h "moves"; whole-table moves are tested in test_tk_drain and
 * test_gate). */
static char *const per_player_moves[] = {"--holdem-move-wait-ms", "-1", NULL};

/* Starts redis-server and croupier-game --engine holdem; extra_env holds CROUPIER_HOLDEM_*
 * settings. */
static void env_start(env_t *e, int drain_max_s, char *const extra_env[])
{
    ck_assert_int_eq(testenv_start(e, NULL), 0);
    ck_assert_int_eq(
        testenv_start_game(e, &e->game, "holdem", drain_max_s, per_player_moves, extra_env), 0);
}

static long long redis_int(env_t *e, const char *cmd, const char *arg)
{
    char *r = ts_redis_cmd(e->redis, cmd, arg);
    ck_assert_ptr_nonnull(r);
    long long v = strcmp(r, "(nil)") == 0 ? 0 : strtoll(r, NULL, 10);
    free(r);
    return v;
}

static void wallet_set(env_t *e, uint64_t player, long long amount)
{
    char *r = ts_redis_cmd(e->redis, "SET {croupier:money}:wallet:%d %d", (int)player, (int)amount);
    free(r);
}

static long long wallet(env_t *e, uint64_t player)
{
    char key[64];
    snprintf(key, sizeof key, "{croupier:money}:wallet:%" PRIu64, player);
    return redis_int(e, "GET %s", key);
}

/* Sum of every seat account (the kit's wallets named ts.*), and how many hold chips. */
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

/* /drain/status's human_desks (testenv_human_desks), asserted to be there. */
static long human_desks(env_t *e)
{
    long v = testenv_human_desks(&e->game);
    ck_assert_int_ge(v, 0);
    return v;
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

static void send_join(rpcc_t *c, uint64_t rid, uint64_t player, int64_t stake)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = CROUPIER__ENGINE__ENGINE_HOLDEM;
    j.game = "holdem";
    j.stake = stake;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_JOIN;
    f.join = &j;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

static void send_act(rpcc_t *c, uint64_t rid, uint64_t player, Croupier__HoldemMove move,
                     int64_t amount)
{
    Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__HoldemAction ha = CROUPIER__HOLDEM_ACTION__INIT;
    ha.move = move;
    if (move == CROUPIER__HOLDEM_MOVE__HOLDEM_BET || move == CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE) {
        ha.has_amount = true;
        ha.amount = amount;
    }
    a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
    a.holdem = &ha;
    fill(&f, rid, player);
    f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
    f.action = &a;
    ck_assert_int_eq(rpcc_send(c, &f), 0);
}

/* Waits for the reply to rid and returns its code (the reply is freed unless out is given). */
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

/* Joins and returns the seat. */
static int join_ok(rpcc_t *c, model_t *m, uint64_t rid, uint64_t player)
{
    send_join(c, rid, player, STAKE);
    Croupier__RpcFrame *r;
    int code = reply_code(c, rid, &r);
    ck_assert_int_eq(code, CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_JOINED);
    const Croupier__Joined *j = r->reply->payload->joined;
    ck_assert_int_eq(j->engine, CROUPIER__ENGINE__ENGINE_HOLDEM);
    ck_assert_str_eq(j->game, "holdem");
    ck_assert_int_eq(j->stake, STAKE);
    int seat = (int)j->seat;
    ck_assert_int_lt(seat, 9);
    m->seat_player[seat] = player;
    frame_free_rpc(r);
    return seat;
}

static void model_init(model_t *m)
{
    memset(m, 0, sizeof *m);
    m->turn_seat = -1;
}

/* Applies one event frame to the model. */
static void model_apply(model_t *m, const Croupier__RpcFrame *f)
{
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING) {
        m->desk_closing += (int)f->desk_closing->n_player_ids;
        return;
    }
    if (f->body_case != CROUPIER__RPC_FRAME__BODY_PUSH)
        return;
    const Croupier__ServerMessage *sm = f->push;
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING) {
        if (sm->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_BUSTED) {
            m->busted = f->player_id;
            m->busted_count++;
        } else
            m->table_closing++;
        return;
    }
    /* The deck commitment of a round the kit shuffled (a stacked test deck has none): the same
     * on every Deal of the round, to any player. */
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && sm->deal->has_deck_commitment) {
        const Croupier__Deal *d = sm->deal;
        ck_assert(d->deck_commitment.len == DECK_COMMIT_LEN && d->round_id != NULL);
        /* Hold'em deals under the per-card commitment (docs/fairness.md). */
        ck_assert(d->has_deck_scheme && d->deck_scheme == DECK_SCHEME_CARDS);
        m->deals_per_card++;
        /* Every card this player saw face up, by round (his hole cards, the board). */
        int k;
        for (k = 0; k < m->nseen && (m->seen[k].player != f->player_id ||
                                     strcmp(m->seen[k].round, d->round_id) != 0);
             k++)
            ;
        if (k == m->nseen && k < 64) {
            snprintf(m->seen[k].round, sizeof m->seen[k].round, "%s", d->round_id);
            m->seen[k].player = f->player_id;
            m->seen[k].n = 0;
            m->nseen++;
        }
        for (size_t i = 0; k < 64 && d->has_cards && i < d->cards.len && m->seen[k].n < 7; i++)
            m->seen[k].cards[m->seen[k].n++] = d->cards.data[i];
    }
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && sm->deal->has_deck_commitment) {
        const Croupier__Deal *d = sm->deal;
        int k;
        for (k = 0; k < m->ncommits && strcmp(m->commits[k].round, d->round_id) != 0; k++)
            ;
        if (k < m->ncommits)
            ck_assert(memcmp(m->commits[k].c, d->deck_commitment.data, DECK_COMMIT_LEN) == 0);
        else if (k < 32) {
            snprintf(m->commits[k].round, sizeof m->commits[k].round, "%s", d->round_id);
            memcpy(m->commits[k].c, d->deck_commitment.data, DECK_COMMIT_LEN);
            m->ncommits++;
        }
    }
    /* Own hole cards: a Deal for a seat that carries cards reaches its owner only. */
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && sm->deal->has_seat)
        m->hand_hole_deals++;
    if (sm->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL && sm->deal->has_seat &&
        sm->deal->has_cards && sm->deal->cards.len == 2) {
        ck_assert_uint_eq(m->seat_player[sm->deal->seat], f->player_id);
        int k;
        for (k = 0; k < m->nown && m->own[k].player != f->player_id; k++)
            ;
        if (k == m->nown && m->nown < MAXP)
            m->nown++;
        m->own[k].player = f->player_id;
        memcpy(m->own[k].hole, sm->deal->cards.data, 2);
        m->own[k].has = true;
    }
    if (!sm->has_event_seq || sm->event_seq <= m->last_seq)
        return; /* another player's copy of an event already counted */
    m->last_seq = sm->event_seq;
    switch (sm->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_TURN:
        m->turn_seat = (int)sm->turn->seat;
        m->to_call = sm->turn->to_call;
        m->min_known = sm->turn->has_min_amount;
        m->min_to = sm->turn->min_amount;
        m->max_to = sm->turn->max_amount;
        m->turn_before_deal = m->hand_hole_deals == 0;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY:
        m->plays++;
        m->timed_out += sm->play->has_timed_out && sm->play->timed_out;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
        m->deals_board += !sm->deal->has_seat;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END: {
        const Croupier__RoundEnd *re = sm->round_end;
        if (re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED)
            m->rounds_completed++;
        else
            m->rounds_voided++;
        snprintf(m->round_id, sizeof m->round_id, "%s", re->round_id);
        int64_t sum = 0;
        for (size_t i = 0; i < re->n_deltas; i++)
            sum += re->deltas[i]->delta;
        ck_assert_int_eq(sum, -(re->has_rake ? re->rake : 0));
        m->turn_seat = -1;
        m->hand_hole_deals = 0;
        break;
    }
    default:
        break;
    }
}

/* Pumps events until pred(m) holds or timeout_ms passes; returns whether it holds. */
static bool pump_until(rpcc_t *c, model_t *m, bool (*pred)(const model_t *, const void *),
                       const void *arg, int timeout_ms)
{
    long long end = ts_now_ms() + timeout_ms;
    while (!pred(m, arg)) {
        int left = (int)(end - ts_now_ms());
        if (left <= 0)
            return false;
        Croupier__RpcFrame *f = rpcc_next_event(c, left);
        if (f == NULL)
            return pred(m, arg);
        model_apply(m, f);
        frame_free_rpc(f);
    }
    return true;
}

static bool has_turn(const model_t *m, const void *arg)
{
    (void)arg;
    return m->turn_seat >= 0;
}

static bool rounds_at_least(const model_t *m, const void *arg)
{
    return m->rounds_completed + m->rounds_voided >= *(const int *)arg;
}

/* Plays legal passive moves (check, else call) until n rounds have ended. */
static void play_rounds(rpcc_t *c, model_t *m, uint64_t *rid, int n)
{
    int target = m->rounds_completed + m->rounds_voided + n;
    long long end = ts_now_ms() + 20000;
    while (!rounds_at_least(m, &target)) {
        ck_assert_msg(ts_now_ms() < end, "hands did not finish");
        if (!pump_until(c, m, has_turn, NULL, 3000))
            continue;
        int seat = m->turn_seat;
        uint64_t player = m->seat_player[seat];
        if (player == m->leaver) {
            m->leaver_turns++;
            m->turn_seat = -1; /* the kit's automatic move comes after TK_TRUSTEE_MS */
            continue;
        }
        uint64_t r = (*rid)++;
        send_act(c, r, player,
                 m->to_call == 0                         ? CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK
                 : player == m->folder && m->folder != 0 ? CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD
                                                         : CROUPIER__HOLDEM_MOVE__HOLDEM_CALL,
                 0);
        m->turn_seat = -1; /* until the next Turn */
        ck_assert_int_eq(reply_code(c, r, NULL), CROUPIER__ERROR_CODE__OK);
    }
}

/* The player's snapshot, or NULL with *code set. */
static Croupier__RpcFrame *snapshot(rpcc_t *c, uint64_t rid, uint64_t player)
{
    ck_assert_int_eq(rpcc_resume(c, rid, player), 0);
    Croupier__RpcFrame *r;
    ck_assert_int_eq(reply_code(c, rid, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    return r;
}

/* The snapshot's table state as bytes, without the clock (time left), for equality checks. */
static size_t state_bytes(Croupier__RpcFrame *r, uint8_t *buf, size_t cap)
{
    Croupier__Snapshot *s = r->reply->payload->snapshot;
    s->has_time_left_ms = false;
    s->time_left_ms = 0;
    size_t n = croupier__snapshot__get_packed_size(s);
    ck_assert_uint_le(n, cap);
    return croupier__snapshot__pack(s, buf);
}

/* ---- tests ------------------------------------------------------------------------------ */

/* Rake 5 % capped at 3 chips a hand, so settlements carry a rake (deltas sum to -rake). */
static char *fast_env[] = {"CROUPIER_HOLDEM_ACTION_MS=3000", "CROUPIER_HOLDEM_TIME_BANK_MS=0",
                           "CROUPIER_HOLDEM_GAP_MS=50",      "CROUPIER_HOLDEM_RAKE_BP=500",
                           "CROUPIER_HOLDEM_RAKE_CAP=3",     NULL};

static long long rake(env_t *e)
{
    return redis_int(e, "GET %s", "{croupier:money}:rake:holdem");
}

START_TEST(test_join_buys_in_through_the_wallet_and_hands_settle)
{
    env_t e;
    env_start(&e, 30, fast_env);
    wallet_set(&e, 101, 5000);
    wallet_set(&e, 102, 5000);
    wallet_set(&e, 103, 100); /* below the table minimum (20 big blinds = 200) */
    wallet_set(&e, 104, 500); /* less than 100 big blinds: buys in with the whole wallet */
    long long start = 5000 + 5000 + 100 + 500;
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m);
    join_ok(c, &m, 1, 101);
    ck_assert_int_eq(wallet(&e, 101), 4000); /* 100 big blinds */
    send_join(c, 2, 103, STAKE);
    ck_assert_int_eq(reply_code(c, 2, NULL), CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
    ck_assert_int_eq(wallet(&e, 103), 100);
    /* An unknown player has no wallet at all. */
    send_join(c, 3, 199, STAKE);
    ck_assert_int_eq(reply_code(c, 3, NULL), CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
    /* Stakes below 2 and another game are refused. */
    send_join(c, 4, 102, 1);
    ck_assert_int_eq(reply_code(c, 4, NULL), CROUPIER__ERROR_CODE__BAD_REQUEST);
    join_ok(c, &m, 5, 102);
    join_ok(c, &m, 6, 104);
    ck_assert_int_eq(wallet(&e, 104), 0);
    int nz;
    ts_sleep_ms(100);
    ck_assert_int_eq(seat_accounts(&e, &nz), 1000 + 1000 + 500);
    ck_assert_int_eq(nz, 3);

    uint64_t rid = 100;
    play_rounds(c, &m, &rid, 3);
    ck_assert_int_ge(m.rounds_completed, 3);
    ck_assert_int_gt(m.plays, 0);
    /* Money is conserved: wallets + seat accounts + rake = what there was. */
    ts_sleep_ms(200);
    long long total = wallet(&e, 101) + wallet(&e, 102) + wallet(&e, 103) + wallet(&e, 104) +
                      seat_accounts(&e, &nz);
    ck_assert_int_gt(rake(&e), 0);
    ck_assert_int_eq(total + rake(&e), start);
    /* Each hand left a history in the game's stream. */
    ck_assert_int_ge(redis_int(&e, "XLEN %s", "{croupier:history:holdem}:stream"), 3);
    /* The kit shuffled these hands: every Deal carried the round's commitment, and each history
     * reveals the deck (as protocol codes, deck_codes) and nonce that open it under the per-card
     * scheme (docs/fairness.md "The per-card commitment"). */
    ck_assert_int_ge(m.ncommits, 3);
    char *hist = ts_redis_cmd(e.redis, "XRANGE %s - +", "{croupier:history:holdem}:stream");
    ck_assert_ptr_nonnull(hist);
    int opened = 0;
    for (char *line = strtok(hist, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        json_t *rec = line[0] == '{' ? json_loads(line, 0, NULL) : NULL;
        const char *round = json_string_value(json_object_get(rec, "round"));
        int k;
        for (k = 0; round != NULL && k < m.ncommits && strcmp(m.commits[k].round, round) != 0; k++)
            ;
        if (round != NULL && k < m.ncommits) {
            uint8_t deck[DECK_MAX_CARDS], codes[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN],
                got[DECK_COMMIT_LEN];
            int n = deck_unhex(json_string_value(json_object_get(rec, "deck")), deck, sizeof deck);
            ck_assert_int_eq(n, 52);
            ck_assert_int_eq(json_integer_value(json_object_get(rec, "deck_scheme")), 2);
            ck_assert_int_eq(deck_unhex(json_string_value(json_object_get(rec, "deck_codes")),
                                        codes, sizeof codes),
                             52);
            for (int i = 0; i < 52; i++)
                ck_assert_uint_eq(codes[i], deck[i] + 8); /* the table's card + 8: the code */
            ck_assert_int_eq(
                deck_unhex(json_string_value(json_object_get(rec, "deck_nonce")), nonce, sizeof nonce),
                DECK_NONCE_LEN);
            deck_commitment_cards(codes, (size_t)n, nonce, got);
            ck_assert_msg(memcmp(got, m.commits[k].c, DECK_COMMIT_LEN) == 0,
                          "round %s: the revealed deck does not open the Deals' commitment", round);
            opened++;
        }
        json_decref(rec);
    }
    ck_assert_int_ge(opened, 3);
    free(hist);
    char *keys = ts_redis_cmd(e.redis, "KEYS {croupier:money}:round:*");
    ck_assert(strlen(keys) > 0);
    free(keys);

    /* A player who leaves mid-hand is on trustee (engine/tk.h): the kit plays their turns, a
     * check or a fold, after TK_TRUSTEE_MS -- the old engine did at once (docs/rules/holdem.md,
     * "The engine") -- and they are cashed out when the hand ends. */
    ck_assert(pump_until(c, &m, has_turn, NULL, 5000));
    uint64_t leaver = 0;
    for (int i = 0; i < 9 && leaver == 0; i++)
        if (m.seat_player[i] != 0 && i != m.turn_seat)
            leaver = m.seat_player[i];
    long long before = wallet(&e, leaver);
    int timed_out = m.timed_out;
    ck_assert_int_eq(rpcc_leave(c, rid, leaver), 0);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
    m.leaver = leaver;
    play_rounds(c, &m, &rid, 1);
    if (m.leaver_turns > 0)
        ck_assert_int_gt(m.timed_out, timed_out);
    ts_sleep_ms(200);
    ck_assert_int_gt(wallet(&e, leaver), before);
    ck_assert_int_eq(wallet(&e, 104) + wallet(&e, 101) + wallet(&e, 102) + wallet(&e, 103) +
                         seat_accounts(&e, &nz) + rake(&e),
                     start);
    ck_assert_int_eq(nz, 2);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* The name of the holdem pool's slot key this server holds ("{croupier:lease:holdem}:slot:N"),
 * into key; false when there is none. */
/* The text of a card code as the PHH file writes it ("As"). */
static void card_text(uint8_t code, char out[3])
{
    out[0] = "??23456789TJQKA?"[code >> 2 & 15];
    out[1] = "cdhs"[code & 3];
    out[2] = '\0';
}

/*
 * Each player's own check of the per-card commitment, from what he gets (docs/fairness.md "The
 * per-card commitment"): three players, one of whom folds whenever he has a bet to call; after
 * the hands, each player's replay (replay_build() for him: what GetReplay sends him) checks with
 * replay_check_cards() against the commitment his Deals carried, opens every card he was dealt
 * face up (his hole cards, the board), and holds no card of a hand he was not shown -- a folded
 * or mucked hand -- in any opening, event, seat, or the PHH file. A share code's view opens
 * the board and the shown hands only.
 */
START_TEST(test_replays_open_every_card_a_player_saw_and_no_hidden_one)
{
    env_t e;
    env_start(&e, 30, fast_env);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m);
    for (uint64_t p = 301; p <= 303; p++) {
        wallet_set(&e, p, 5000);
        join_ok(c, &m, p, p);
    }
    m.folder = 302;
    uint64_t rid = 100;
    play_rounds(c, &m, &rid, 4);
    ck_assert_int_ge(m.rounds_completed, 4);
    ck_assert_int_gt(m.deals_per_card, 0);
    ts_sleep_ms(300); /* the last record is written after its RoundEnd */

    char *hist = ts_redis_cmd(e.redis, "XRANGE %s - +", "{croupier:history:holdem}:stream");
    ck_assert_ptr_nonnull(hist);
    int checked = 0, folded_hands = 0, hidden_total = 0, own_opened = 0;
    for (char *line = strtok(hist, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        json_t *rec = line[0] == '{' ? json_loads(line, 0, NULL) : NULL;
        const char *round = json_string_value(json_object_get(rec, "round"));
        int k;
        for (k = 0; round != NULL && k < m.ncommits && strcmp(m.commits[k].round, round) != 0; k++)
            ;
        if (round == NULL || k == m.ncommits) {
            json_decref(rec);
            continue;
        }
        size_t ia;
        const json_t *a;
        json_array_foreach(json_object_get(rec, "actions"), ia, a)
        {
            folded_hands += strcmp(json_string_value(json_object_get(a, "action")), "fold") == 0;
        }
        for (uint64_t p = 0; p <= 303; p = p == 0 ? 301 : p + 1) {
            char err[300] = "";
            Croupier__Replay *r = replay_build(rec, p, err, sizeof err);
            ck_assert_msg(r != NULL, "%s: %s", round, err);
            ck_assert_msg(replay_check_cards(r, m.commits[k].c, err, sizeof err) == 0,
                          "%s, viewer %" PRIu64 ": %s", round, p, err);
            ck_assert_ptr_null(r->deck);
            ck_assert_ptr_null(r->deck_nonce);
            /* Every card the player was dealt face up is opened. */
            for (int s = 0; p != 0 && s < m.nseen; s++) {
                if (m.seen[s].player != p || strcmp(m.seen[s].round, round) != 0)
                    continue;
                for (size_t i = 0; i < m.seen[s].n; i++) {
                    size_t o;
                    for (o = 0; o < r->n_openings && r->openings[o]->card != m.seen[s].cards[i];
                         o++)
                        ;
                    ck_assert_msg(o < r->n_openings, "%s: player %" PRIu64 "'s card %u unopened",
                                  round, p, m.seen[s].cards[i]);
                    own_opened++;
                }
            }
            /* The hands this viewer is not shown: none of their cards anywhere in his replay. */
            uint8_t hidden[16];
            size_t nh = 0;
            size_t ic;
            const json_t *cj;
            for (size_t i = 0; i < r->n_seats; i++) {
                if (r->seats[i]->has_cards)
                    continue;
                json_array_foreach(json_object_get(rec, "cards"), ic, cj)
                {
                    if (json_integer_value(json_object_get(cj, "seat")) == r->seats[i]->seat &&
                        nh < 16)
                        hidden[nh++] = (uint8_t)replay_card_code(
                            json_string_value(json_object_get(cj, "card")));
                }
            }
            hidden_total += (int)nh;
            for (size_t h = 0; h < nh; h++) {
                char text[3];
                card_text(hidden[h], text);
                for (size_t o = 0; o < r->n_openings; o++)
                    ck_assert_uint_ne(r->openings[o]->card, hidden[h]);
                for (size_t v = 0; v < r->n_events; v++)
                    ck_assert(r->events[v]->cards.len == 0 ||
                              memchr(r->events[v]->cards.data, hidden[h],
                                     r->events[v]->cards.len) == NULL);
                for (size_t v = 0; v < r->n_seats; v++)
                    ck_assert(!r->seats[v]->has_cards || memchr(r->seats[v]->cards.data, hidden[h],
                                                                r->seats[v]->cards.len) == NULL);
                ck_assert_msg(r->phh == NULL || strstr(r->phh, text) == NULL,
                              "%s: the hidden %s is in viewer %" PRIu64 "'s PHH", round, text, p);
            }
            croupier__replay__free_unpacked(r, NULL);
        }
        checked++;
        json_decref(rec);
    }
    free(hist);
    ck_assert_int_ge(checked, 4);
    ck_assert_int_gt(folded_hands, 0); /* the folder folded: his cards were hidden from others */
    ck_assert_int_gt(hidden_total, 0);
    ck_assert_int_gt(own_opened, 0);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

static bool lease_slot_key(env_t *e, char *key, size_t len)
{
    char *keys = ts_redis_cmd(e->redis, "KEYS %s", "{croupier:lease:holdem}:slot:*");
    bool found = false;
    for (char *p = keys; p != NULL && *p != '\0' && !found;) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        if (strstr(p, ":epoch") == NULL) {
            snprintf(key, len, "%s", p);
            found = true;
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    free(keys);
    return found;
}

/*
 * The server's lease key vanishes (a Redis failover that lost it) and the server takes its slot
 * back under a new epoch (lease.h REGAINED). The table made before goes on settling its hands,
 * under the epoch the fence holds now, instead of having every later settlement refused as
 * stale; chips stay conserved.
 */
START_TEST(test_hands_settle_after_the_lease_is_regained)
{
    env_t e;
    env_start(&e, 30, fast_env);
    wallet_set(&e, 201, 5000);
    wallet_set(&e, 202, 5000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m);
    join_ok(c, &m, 1, 201);
    join_ok(c, &m, 2, 202);
    uint64_t rid = 100;
    play_rounds(c, &m, &rid, 1);
    char key[128];
    ck_assert(lease_slot_key(&e, key, sizeof key));
    char *del = ts_redis_cmd(e.redis, "DEL %s", key);
    ck_assert_str_eq(del, "1");
    free(del);
    ck_assert_int_eq(ts_proc_wait_log(e.game.proc, "\"event\":\"lease_regained\"", 5000), 0);
    long long histories = redis_int(&e, "XLEN %s", "{croupier:history:holdem}:stream");
    play_rounds(c, &m, &rid, 3);
    ts_sleep_ms(300);
    ck_assert_msg(!ts_proc_log_has(e.game.proc, "tk_money_failed"), "log: %s",
                  ts_proc_log_path(e.game.proc));
    ck_assert_int_ge(redis_int(&e, "XLEN %s", "{croupier:history:holdem}:stream"), histories + 3);
    int nz;
    ck_assert_int_eq(wallet(&e, 201) + wallet(&e, 202) + seat_accounts(&e, &nz) + rake(&e), 10000);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

static bool busted_seen(const model_t *m, const void *arg)
{
    (void)arg;
    return m->busted != 0 || m->turn_seat >= 0;
}

/*
 * Heads-up, both all-in every hand until one loses everything: the loser is told
 * TableClosing{CLOSING_BUSTED} and leaves the table (their seat is free, Resume says NOT_SEATED),
 * chips are conserved, and they can buy in again once their wallet has chips.
 */
START_TEST(test_busted_player_leaves_the_table_and_may_buy_in_again)
{
    env_t e;
    env_start(&e, 30, fast_env);
    wallet_set(&e, 301, 200); /* 20 big blinds: the table minimum, all of it bought in */
    wallet_set(&e, 302, 200);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m);
    join_ok(c, &m, 1, 301);
    join_ok(c, &m, 2, 302);
    uint64_t rid = 100;
    long long end = ts_now_ms() + 30000;
    while (m.busted == 0) {
        ck_assert_msg(ts_now_ms() < end, "nobody busted in 30 s");
        if (!pump_until(c, &m, busted_seen, NULL, 3000) || m.busted != 0)
            continue;
        uint64_t player = m.seat_player[m.turn_seat];
        uint64_t r = rid++;
        if (m.min_known && m.max_to > 0)
            send_act(c, r, player,
                     m.to_call == 0 ? CROUPIER__HOLDEM_MOVE__HOLDEM_BET
                                    : CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE,
                     m.max_to);
        else
            send_act(c, r, player,
                     m.to_call == 0 ? CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK
                                    : CROUPIER__HOLDEM_MOVE__HOLDEM_CALL,
                     0);
        m.turn_seat = -1;
        ck_assert_int_eq(reply_code(c, r, NULL), CROUPIER__ERROR_CODE__OK);
    }
    uint64_t loser = m.busted, winner = loser == 301 ? 302 : 301;
    ck_assert_int_eq(rpcc_resume(c, rid, loser), 0);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__NOT_SEATED);
    Croupier__RpcFrame *r = snapshot(c, rid++, winner); /* the winner still sits */
    frame_free_rpc(r);
    ts_sleep_ms(200);
    int nz;
    ck_assert_int_eq(wallet(&e, 301) + wallet(&e, 302) + seat_accounts(&e, &nz) + rake(&e), 400);
    ck_assert_int_eq(nz, 1); /* only the winner's seat holds chips */
    ck_assert_int_eq(wallet(&e, loser), 0);
    send_join(c, rid, loser, STAKE);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS);
    wallet_set(&e, loser, 300);
    join_ok(c, &m, rid++, loser);
    ck_assert_int_eq(wallet(&e, loser), 0);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_illegal_actions_refused_with_codes_state_unchanged)
{
    env_t e;
    char *env[] = {"CROUPIER_HOLDEM_ACTION_MS=20000", "CROUPIER_HOLDEM_GAP_MS=50",
                   "CROUPIER_HOLDEM_SEATS=2", NULL};
    env_start(&e, 30, env);
    wallet_set(&e, 201, 5000);
    wallet_set(&e, 202, 5000);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    model_t m;
    model_init(&m);
    join_ok(c, &m, 1, 201);
    join_ok(c, &m, 2, 202);
    ck_assert(pump_until(c, &m, has_turn, NULL, 5000));
    /* Heads-up preflop: the button (small blind) acts first, facing 5 more to call. */
    int seat = m.turn_seat;
    uint64_t me = m.seat_player[seat], other = m.seat_player[1 - seat];
    ck_assert_int_eq(m.to_call, STAKE / 2);
    uint8_t before[4096], after[4096];
    Croupier__RpcFrame *s0 = snapshot(c, 10, me);
    ck_assert_int_eq(s0->reply->payload->snapshot->turn_seat, seat);
    size_t n0 = state_bytes(s0, before, sizeof before);
    frame_free_rpc(s0);

    struct {
        uint64_t player;
        Croupier__HoldemMove move;
        int64_t amount;
        int code;
    } bad[] = {
        {other, CROUPIER__HOLDEM_MOVE__HOLDEM_CALL, 0, CROUPIER__ERROR_CODE__NOT_YOUR_TURN},
        {me, CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK, 0, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED},
        {me, CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE, 15, CROUPIER__ERROR_CODE__BET_BELOW_MIN},
        {me, CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE, 999999, CROUPIER__ERROR_CODE__BET_ABOVE_MAX},
        {me, CROUPIER__HOLDEM_MOVE__HOLDEM_BET, 40, CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED},
    };
    uint64_t rid = 20;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        send_act(c, rid, bad[i].player, bad[i].move, bad[i].amount);
        ck_assert_msg(reply_code(c, rid, NULL) == bad[i].code, "case %zu: want code %d", i,
                      bad[i].code);
        rid++;
    }
    /* Not a hold'em action at all. */
    ck_assert_int_eq(rpcc_action(c, rid, me, 0), 0);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__WRONG_ENGINE);
    /* Malformed: a raise without an amount (sent as raw bytes). The codec refuses it before any
     * engine sees it: a gateway answers its client BAD_REQUEST; on the rpc link the frame is
     * counted and skipped. Either way nothing reaches the table. */
    {
        Croupier__RpcFrame f = CROUPIER__RPC_FRAME__INIT;
        Croupier__Action a = CROUPIER__ACTION__INIT;
        Croupier__HoldemAction ha = CROUPIER__HOLDEM_ACTION__INIT;
        ha.move = CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE;
        a.kind_case = CROUPIER__ACTION__KIND_HOLDEM;
        a.holdem = &ha;
        fill(&f, rid, me);
        f.body_case = CROUPIER__RPC_FRAME__BODY_ACTION;
        f.action = &a;
        uint8_t buf[512];
        size_t len = croupier__rpc_frame__pack(&f, buf + 4);
        frame_put_header(buf, (uint32_t)len);
        ck_assert_int_eq(rpcc_send_raw(c, buf, len + 4), 0);
        ck_assert_ptr_null(rpcc_wait_reply(c, rid++, 300));
        char *metrics = NULL;
        ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/metrics", 5000, &metrics), 200);
        ck_assert_ptr_nonnull(strstr(metrics, "game_rpc_bad_frames_total 1"));
        free(metrics);
    }
    Croupier__RpcFrame *s1 = snapshot(c, rid++, me);
    size_t n1 = state_bytes(s1, after, sizeof after);
    frame_free_rpc(s1);
    ck_assert_uint_eq(n0, n1);
    ck_assert(memcmp(before, after, n0) == 0);
    ck_assert_int_eq(wallet(&e, 201) + wallet(&e, 202), 8000);

    /* A legal raise to the minimum (2 big blinds) is applied. */
    send_act(c, rid, me, CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE, 2 * STAKE);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
    m.turn_seat = -1;
    ck_assert(pump_until(c, &m, has_turn, NULL, 5000));
    ck_assert_int_eq(m.turn_seat, 1 - seat);
    ck_assert_int_eq(m.to_call, STAKE);
    ck_assert_int_eq(m.min_to, 3 * STAKE);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_resume_snapshot_shows_own_hole_cards_only)
{
    env_t e;
    char *env[] = {"CROUPIER_HOLDEM_ACTION_MS=20000", "CROUPIER_HOLDEM_TIME_BANK_MS=5000",
                   "CROUPIER_HOLDEM_GAP_MS=50", NULL};
    env_start(&e, 30, env);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    model_t m;
    model_init(&m);
    for (uint64_t p = 301; p <= 303; p++) {
        wallet_set(&e, p, 3000);
        join_ok(c, &m, p, p);
    }
    ck_assert(pump_until(c, &m, has_turn, NULL, 5000));
    ts_sleep_ms(100);
    while (true) { /* collect the remaining hole-card deals */
        Croupier__RpcFrame *f = rpcc_next_event(c, 100);
        if (f == NULL)
            break;
        model_apply(&m, f);
        frame_free_rpc(f);
    }
    ck_assert_int_eq(m.nown, 3);
    for (int k = 0; k < m.nown; k++) {
        uint64_t p = m.own[k].player;
        Croupier__RpcFrame *r = snapshot(c, 400 + p, p);
        const Croupier__Snapshot *s = r->reply->payload->snapshot;
        ck_assert_int_eq(s->engine, CROUPIER__ENGINE__ENGINE_HOLDEM);
        ck_assert_int_eq(s->state_case, CROUPIER__SNAPSHOT__STATE_HOLDEM);
        ck_assert_ptr_nonnull(s->round_id);
        ck_assert(s->has_turn_seat);
        ck_assert_int_eq(s->turn_seat, m.turn_seat);
        ck_assert(s->has_time_left_ms);
        ck_assert_uint_le(s->time_left_ms, 25000); /* action time + time bank */
        ck_assert_uint_gt(s->time_left_ms, 15000);
        const Croupier__HoldemState *h = s->holdem;
        ck_assert_int_eq(h->street, CROUPIER__HOLDEM_STREET__HOLDEM_PREFLOP);
        ck_assert_uint_eq(h->hole_cards.len, 2);
        ck_assert(memcmp(h->hole_cards.data, m.own[k].hole, 2) == 0);
        ck_assert_uint_eq(h->board.len, 0);
        ck_assert_int_eq(h->pot, STAKE + STAKE / 2);
        ck_assert_uint_eq(h->n_players, 3);
        /* The only cards in the snapshot are this player's own (the board is still empty). */
        for (int o = 0; o < m.nown; o++)
            if (o != k)
                ck_assert(memcmp(h->hole_cards.data, m.own[o].hole, 2) != 0);
        ck_assert_uint_eq(s->n_seats, 3);
        frame_free_rpc(r);
    }
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_action_timeout_checks_or_folds)
{
    env_t e;
    char *env[] = {"CROUPIER_HOLDEM_ACTION_MS=200", "CROUPIER_HOLDEM_TIME_BANK_MS=100",
                   "CROUPIER_HOLDEM_GAP_MS=50", "CROUPIER_HOLDEM_SEATS=2", NULL};
    env_start(&e, 30, env);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    model_t m;
    model_init(&m);
    wallet_set(&e, 501, 1000);
    wallet_set(&e, 502, 1000);
    join_ok(c, &m, 1, 501);
    join_ok(c, &m, 2, 502);
    int one = 1;
    /* Nobody acts: the small blind folds on timeout (it faces a bet), ending the hand. */
    long long t0 = ts_now_ms();
    ck_assert(pump_until(c, &m, rounds_at_least, &one, 5000));
    ck_assert_int_ge(ts_now_ms() - t0, 250);
    ck_assert_int_ge(m.timed_out, 1);
    ck_assert_int_eq(m.rounds_completed, 1);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * --holdem-straddles 2 (docs/rules/holdem.md "Blinds, antes, straddles", "The engine"): before
 * the deal of a four-handed hand the seat under the gun is offered a straddle of two big blinds
 * (a Turn with nothing to call whose only amount is the straddle), wrong answers are refused
 * with their codes, the straddle is posted, the next seat is offered the re-straddle and
 * declines with a check; then the cards come and that seat, left of the straddler, acts first
 * facing the straddle with the minimum raise at twice it. Chips stay conserved.
 */
START_TEST(test_straddles_offered_to_the_seats_in_order)
{
    env_t e;
    char *env[] = {"CROUPIER_HOLDEM_ACTION_MS=3000", "CROUPIER_HOLDEM_TIME_BANK_MS=0",
                   "CROUPIER_HOLDEM_GAP_MS=50", "CROUPIER_HOLDEM_STRADDLES=2", NULL};
    env_start(&e, 30, env);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    model_t m;
    model_init(&m);
    for (uint64_t p = 701; p <= 704; p++) {
        wallet_set(&e, p, 5000);
        join_ok(c, &m, p, p);
    }
    uint64_t rid = 800;
    /* A hand may have started before the fourth player sat down: it is played passively (its
     * offers declined) until a hand that began with everyone seated offers its straddle. */
    int ended = m.rounds_completed + m.rounds_voided;
    long long end = ts_now_ms() + 20000;
    for (;;) {
        ck_assert_msg(ts_now_ms() < end, "no four-handed hand began");
        ck_assert(pump_until(c, &m, has_turn, NULL, 5000));
        if (m.turn_before_deal && m.rounds_completed + m.rounds_voided > ended)
            break;
        uint64_t r = rid++;
        send_act(c, r, m.seat_player[m.turn_seat],
                 m.to_call == 0 ? CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK
                                : CROUPIER__HOLDEM_MOVE__HOLDEM_CALL,
                 0);
        m.turn_seat = -1;
        ck_assert_int_eq(reply_code(c, r, NULL), CROUPIER__ERROR_CODE__OK);
    }
    ck_assert_int_eq(m.to_call, 0);
    ck_assert(m.min_known);
    ck_assert_int_eq(m.min_to, 2 * STAKE);
    ck_assert_int_eq(m.max_to, 2 * STAKE);
    int utg = m.turn_seat;
    uint64_t player = m.seat_player[utg];
    send_act(c, rid, player, CROUPIER__HOLDEM_MOVE__HOLDEM_BET, 2 * STAKE + 1);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    send_act(c, rid, player, CROUPIER__HOLDEM_MOVE__HOLDEM_BET, 2 * STAKE - 1);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__BET_BELOW_MIN);
    send_act(c, rid, player, CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD, 0);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    m.turn_seat = -1;
    send_act(c, rid, player, CROUPIER__HOLDEM_MOVE__HOLDEM_BET, 2 * STAKE);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
    /* The re-straddle, to the next seat. */
    ck_assert(pump_until(c, &m, has_turn, NULL, 5000));
    ck_assert(m.turn_before_deal);
    ck_assert_int_ne(m.turn_seat, utg);
    ck_assert_int_eq(m.min_to, 4 * STAKE);
    ck_assert_int_eq(m.max_to, 4 * STAKE);
    int next = m.turn_seat;
    m.turn_seat = -1;
    send_act(c, rid, m.seat_player[next], CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK, 0);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
    /* Declined: the cards are dealt and the seat left of the straddler acts first. */
    ck_assert(pump_until(c, &m, has_turn, NULL, 5000));
    ck_assert(!m.turn_before_deal);
    ck_assert_int_eq(m.turn_seat, next);
    ck_assert_int_eq(m.to_call, 2 * STAKE);
    ck_assert_int_eq(m.min_to, 4 * STAKE);
    play_rounds(c, &m, &rid, 2); /* this hand and one more: its offers declined by checks */
    ts_sleep_ms(200);
    /* The hand history names the straddle and the declined re-straddle. */
    char *hist = ts_redis_cmd(e.redis, "XRANGE %s - +", "{croupier:history:holdem}:stream");
    ck_assert_ptr_nonnull(hist);
    ck_assert_ptr_nonnull(strstr(hist, "\"action\":\"straddle\",\"amount\":20"));
    ck_assert_ptr_nonnull(strstr(hist, "\"action\":\"no_straddle\""));
    free(hist);
    int nz;
    long long total = seat_accounts(&e, &nz);
    for (uint64_t p = 701; p <= 704; p++)
        total += wallet(&e, p);
    ck_assert_int_eq(total, 4 * 5000);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

static bool closings_done(const model_t *m, const void *arg)
{
    int n = *(const int *)arg;
    return m->table_closing >= n && m->desk_closing >= n;
}

START_TEST(test_drain_finishes_hand_cashes_out_and_withdraws_ads)
{
    env_t e;
    char *env[] = {"CROUPIER_HOLDEM_ACTION_MS=20000", "CROUPIER_HOLDEM_GAP_MS=50",
                   "CROUPIER_HOLDEM_SEATS=6", NULL};
    env_start(&e, 60, env);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    model_t m;
    model_init(&m);
    long long start = 0;
    for (uint64_t p = 601; p <= 603; p++) {
        wallet_set(&e, p, 2500);
        start += 2500;
        join_ok(c, &m, p, p);
    }
    /* The table is advertised with its free seats. */
    ts_sleep_ms(300);
    char *keys = ts_redis_cmd(e.redis, "KEYS {croupier:lobby}:ad:*");
    ck_assert_msg(strstr(keys, "{croupier:lobby}:ad:holdem:") != NULL, "ads: '%s'", keys);
    char *fr = ts_redis_cmd(e.redis, "HGET %s seats_free", keys);
    ck_assert_str_eq(fr, "3");
    free(fr);
    fr = ts_redis_cmd(e.redis, "HGET %s stakes", keys);
    ck_assert_str_eq(fr, "10");
    free(fr);
    /* The lobby of every engine: the ad names its engine by the protocol's number. */
    fr = ts_redis_cmd(e.redis, "HGET %s engine", keys);
    ck_assert_str_eq(fr, "2");
    free(fr);
    fr = ts_redis_cmd(e.redis, "HGET %s game", keys);
    ck_assert_str_eq(fr, "holdem");
    free(fr);
    ck_assert_int_gt(redis_int(&e, "PTTL %s", keys), 0);
    free(keys);
    ck_assert_int_eq(redis_int(&e, "ZCARD %s", "{croupier:lobby}:ads"), 1);

    uint64_t rid = 100;
    play_rounds(c, &m, &rid, 1);
    ck_assert(pump_until(c, &m, has_turn, NULL, 5000)); /* the next hand is running */
    ck_assert_int_eq(human_desks(&e), 1);
    int done_before = m.rounds_completed;

    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 5000, NULL), 200);
    ts_sleep_ms(200);
    /* The ads are gone at once; joins are refused. */
    keys = ts_redis_cmd(e.redis, "KEYS {croupier:lobby}:ad:*");
    ck_assert_str_eq(keys, "");
    free(keys);
    ck_assert_int_eq(redis_int(&e, "ZCARD %s", "{croupier:lobby}:ads"), 0);
    wallet_set(&e, 699, 5000);
    send_join(c, rid, 699, STAKE);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__DRAINING);
    /* The current hand is still being played to its end. */
    ck_assert_int_eq(human_desks(&e), 1);
    play_rounds(c, &m, &rid, 1);
    ck_assert_int_eq(m.rounds_completed, done_before + 1);
    long long hand_end = ts_now_ms();
    int three = 3;
    ck_assert(pump_until(c, &m, closings_done, &three, 3000));
    long long told = ts_now_ms();
    ck_assert_int_eq(human_desks(&e), 0);
    fprintf(stderr, "# drain: players told %lld ms after the last hand ended (cash-outs applied)\n",
            told - hand_end);
    /* No next hand: nothing is dealt over many gaps, human_desks stays 0. */
    uint64_t seq = m.last_seq;
    ck_assert(!pump_until(c, &m, has_turn, NULL, 1000));
    ck_assert_int_eq(m.last_seq, seq);
    ck_assert_int_eq(human_desks(&e), 0);
    /* Every stack was cashed out before the players were told: the wallets hold all the chips
     * again already. */
    int nz;
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    ck_assert_int_eq(nz, 0);
    ck_assert_int_eq(wallet(&e, 601) + wallet(&e, 602) + wallet(&e, 603), start);
    /* Players stay seated until they leave: a resume still answers. */
    Croupier__RpcFrame *r = snapshot(c, rid++, 601);
    ck_assert_int_eq(r->reply->payload->snapshot->state_case, CROUPIER__SNAPSHOT__STATE__NOT_SET);
    frame_free_rpc(r);
    ck_assert_int_eq(rpcc_leave(c, rid, 601), 0);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);

    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=drained"));
    ck_assert_int_eq(wallet(&e, 601) + wallet(&e, 602) + wallet(&e, 603), start);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_bound_passes_mid_hand_voided_with_refunds)
{
    env_t e;
    char *env[] = {"CROUPIER_HOLDEM_ACTION_MS=60000", "CROUPIER_HOLDEM_GAP_MS=50",
                   "CROUPIER_HOLDEM_SEATS=3", NULL};
    env_start(&e, 1, env);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    model_t m;
    model_init(&m);
    for (uint64_t p = 701; p <= 703; p++) {
        wallet_set(&e, p, 1000 + (long long)p);
        join_ok(c, &m, p, p);
    }
    /* Chips go in: the first player to act raises. */
    ck_assert(pump_until(c, &m, has_turn, NULL, 5000));
    send_act(c, 50, m.seat_player[m.turn_seat], CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE, 4 * STAKE);
    ck_assert_int_eq(reply_code(c, 50, NULL), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(human_desks(&e), 1);
    long long t0 = ts_now_ms();
    ck_assert_int_eq(ts_proc_signal(e.game.proc, SIGTERM), 0);
    int one = 1;
    ck_assert(pump_until(c, &m, rounds_at_least, &one, 5000));
    ck_assert_int_eq(m.rounds_voided, 1);
    int st;
    ck_assert_int_eq(ts_proc_wait(e.game.proc, 10000, &st), 0);
    ck_assert_msg(ts_now_ms() - t0 < 6000, "forced exit took %lld ms", ts_now_ms() - t0);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    ck_assert(ts_proc_log_has(e.game.proc, "exit reason=forced"));
    /* Every chip committed was returned and the stacks were cashed out: each wallet is back. */
    for (uint64_t p = 701; p <= 703; p++)
        ck_assert_int_eq(wallet(&e, p), 1000 + (long long)p);
    int nz;
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/* ---- random play on two tables ---------------------------------------------------------- */

#define RP_PLAYERS 12

/* The moves' generator: xorshift64*, seeded from the clock (or CROUPIER_TEST_SEED) and printed,
 * so a failing run can be replayed. */
static uint64_t rp_state;

static uint32_t rp_rand(uint32_t n)
{
    rp_state ^= rp_state >> 12;
    rp_state ^= rp_state << 25;
    rp_state ^= rp_state >> 27;
    return (uint32_t)(((rp_state * 2685821657736338717ULL) >> 32) % n);
}

typedef struct {
    model_t m[2];
    uint64_t desk[2];
    int ndesks;
    uint64_t player_desk[RP_PLAYERS];
} multi_t;

static int multi_index(multi_t *mt, uint64_t player)
{
    if (player < 801 || player >= 801 + RP_PLAYERS)
        return -1;
    for (int d = 0; d < mt->ndesks; d++)
        if (mt->desk[d] == mt->player_desk[player - 801])
            return d;
    return -1;
}

/* Events of either table: each goes to the model of the desk its recipient sits at. */
static bool multi_pump(rpcc_t *c, multi_t *mt, int timeout_ms)
{
    Croupier__RpcFrame *f = rpcc_next_event(c, timeout_ms);
    if (f == NULL)
        return false;
    if (f->body_case == CROUPIER__RPC_FRAME__BODY_DESK_CLOSING) {
        for (int d = 0; d < mt->ndesks; d++)
            if (mt->desk[d] == f->desk_closing->desk_id)
                model_apply(&mt->m[d], f);
    } else {
        int d = multi_index(mt, f->has_player_id ? f->player_id : 0);
        if (d >= 0)
            model_apply(&mt->m[d], f);
    }
    frame_free_rpc(f);
    return true;
}

/* One random move for the seat to act: folds, checks, calls, bets and raises of random legal
 * or illegal sizes, all-ins; a refused move must come back with its code and change nothing. */
static void random_move(rpcc_t *c, model_t *m, uint64_t *rid, int *refused)
{
    uint64_t player = m->seat_player[m->turn_seat];
    uint32_t r = rp_rand(100);
    Croupier__HoldemMove move;
    int64_t amount = 0;
    if (r < 12 && m->to_call > 0) {
        move = CROUPIER__HOLDEM_MOVE__HOLDEM_FOLD;
    } else if (r < 60 || !m->min_known) {
        move = m->to_call == 0 ? CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK
                               : CROUPIER__HOLDEM_MOVE__HOLDEM_CALL;
    } else {
        move = rp_rand(2) ? CROUPIER__HOLDEM_MOVE__HOLDEM_BET : CROUPIER__HOLDEM_MOVE__HOLDEM_RAISE;
        int64_t span = m->max_to - m->min_to;
        if (r < 70)
            amount = m->max_to; /* all-in */
        else if (r < 75)
            amount = m->max_to + 1 + (int64_t)rp_rand(100); /* over the stack */
        else if (r < 80 && m->min_to > 1)
            amount = m->min_to - 1; /* below the minimum (legal only as an all-in) */
        else
            amount = m->min_to + (span > 0 ? (int64_t)rp_rand((uint32_t)(span / 3 + 1)) : 0);
    }
    uint64_t id = (*rid)++;
    send_act(c, id, player, move, amount);
    int code = reply_code(c, id, NULL);
    if (code == CROUPIER__ERROR_CODE__OK) {
        m->turn_seat = -1;
        return;
    }
    (*refused)++;
    ck_assert_msg(code == CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED ||
                      code == CROUPIER__ERROR_CODE__BET_BELOW_MIN ||
                      code == CROUPIER__ERROR_CODE__BET_ABOVE_MAX,
                  "move %d amount %" PRId64 " refused with %d", move, amount, code);
}

START_TEST(test_random_play_on_two_tables_conserves_chips_through_drain)
{
    env_t e;
    char *env[] = {"CROUPIER_HOLDEM_ACTION_MS=5000", "CROUPIER_HOLDEM_GAP_MS=0",
                   "CROUPIER_HOLDEM_SEATS=6",        "CROUPIER_HOLDEM_RAKE_BP=300",
                   "CROUPIER_HOLDEM_RAKE_CAP=4",     NULL};
    const char *seed = getenv("CROUPIER_TEST_SEED");
    rp_state = seed != NULL ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL) * 2654435761ULL;
    rp_state |= 1;
    fprintf(stderr, "# random play seed %" PRIu64 "\n", rp_state);
    env_start(&e, 60, env);
    rpcc_t *c = rpcc_connect("127.0.0.1", e.game.port, 5000);
    multi_t mt;
    memset(&mt, 0, sizeof mt);
    model_init(&mt.m[0]);
    model_init(&mt.m[1]);
    long long start = 0;
    for (int i = 0; i < RP_PLAYERS; i++) {
        uint64_t p = 801 + (uint64_t)i;
        long long w = 300 + 137 * i; /* buy-ins from 30 to 100 big blinds */
        wallet_set(&e, p, w);
        start += w;
        send_join(c, p, p, STAKE);
        Croupier__RpcFrame *r;
        ck_assert_int_eq(reply_code(c, p, &r), CROUPIER__ERROR_CODE__OK);
        uint64_t desk = r->reply->payload->joined->desk_id;
        int d;
        for (d = 0; d < mt.ndesks && mt.desk[d] != desk; d++)
            ;
        ck_assert_int_lt(d, 2);
        if (d == mt.ndesks)
            mt.desk[mt.ndesks++] = desk;
        mt.player_desk[i] = desk;
        mt.m[d].seat_player[r->reply->payload->joined->seat] = p;
        frame_free_rpc(r);
    }
    ck_assert_int_eq(mt.ndesks, 2); /* six seats a table: the lobby opened a second one */
    uint64_t rid = 10000;
    int refused = 0, moves = 0;
    long long end = ts_now_ms() + 6000;
    while (ts_now_ms() < end && mt.m[0].rounds_completed + mt.m[1].rounds_completed < 80) {
        bool acted = false;
        for (int d = 0; d < 2; d++) {
            if (mt.m[d].turn_seat >= 0) {
                random_move(c, &mt.m[d], &rid, &refused);
                moves++;
                acted = true;
            }
        }
        if (!acted && !multi_pump(c, &mt, 500))
            break; /* no table is playing (too many players busted) */
        while (multi_pump(c, &mt, 0))
            ;
    }
    int hands = mt.m[0].rounds_completed + mt.m[1].rounds_completed;
    ck_assert_int_ge(hands, 5);
    ck_assert_int_eq(mt.m[0].rounds_voided + mt.m[1].rounds_voided, 0);

    /* Drain: the hands running finish (played on passively), nothing else is dealt. */
    ck_assert_int_eq(ts_http_get("127.0.0.1", e.game.health, "/drain", 5000, NULL), 200);
    long long until = ts_now_ms() + 10000;
    while (human_desks(&e) > 0) {
        ck_assert(ts_now_ms() < until);
        for (int d = 0; d < 2; d++) {
            model_t *m = &mt.m[d];
            if (m->turn_seat < 0)
                continue;
            uint64_t id = rid++;
            send_act(c, id, m->seat_player[m->turn_seat],
                     m->to_call == 0 ? CROUPIER__HOLDEM_MOVE__HOLDEM_CHECK
                                     : CROUPIER__HOLDEM_MOVE__HOLDEM_CALL,
                     0);
            ck_assert_int_eq(reply_code(c, id, NULL), CROUPIER__ERROR_CODE__OK);
            m->turn_seat = -1;
        }
        multi_pump(c, &mt, 50);
    }
    /* Players who lost their stack left their table when they busted; the others are told
     * the table closes. */
    int busted = mt.m[0].busted_count + mt.m[1].busted_count;
    until = ts_now_ms() + 3000;
    while (mt.m[0].desk_closing + mt.m[1].desk_closing + busted < RP_PLAYERS &&
           ts_now_ms() < until) {
        multi_pump(c, &mt, 100);
        busted = mt.m[0].busted_count + mt.m[1].busted_count;
    }
    ck_assert_int_eq(mt.m[0].desk_closing + mt.m[1].desk_closing + busted, RP_PLAYERS);
    ck_assert_int_eq(mt.m[0].table_closing + mt.m[1].table_closing + busted, RP_PLAYERS);
    /* Every chip is back in a wallet or the house's rake. */
    int nz;
    ck_assert_int_eq(seat_accounts(&e, &nz), 0);
    long long sum = rake(&e);
    for (int i = 0; i < RP_PLAYERS; i++) {
        long long w = wallet(&e, 801 + (uint64_t)i);
        ck_assert_int_ge(w, 0);
        sum += w;
    }
    ck_assert_int_eq(sum, start);
    fprintf(stderr, "# random play: %d hands, %d moves, %d refused, %d busted, rake %lld\n", hands,
            moves, refused, busted, rake(&e));
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("holdem_engine");
    TCase *tc = tcase_create("play");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_join_buys_in_through_the_wallet_and_hands_settle);
    tcase_add_test(tc, test_replays_open_every_card_a_player_saw_and_no_hidden_one);
    tcase_add_test(tc, test_hands_settle_after_the_lease_is_regained);
    tcase_add_test(tc, test_busted_player_leaves_the_table_and_may_buy_in_again);
    tcase_add_test(tc, test_illegal_actions_refused_with_codes_state_unchanged);
    tcase_add_test(tc, test_resume_snapshot_shows_own_hole_cards_only);
    tcase_add_test(tc, test_action_timeout_checks_or_folds);
    tcase_add_test(tc, test_straddles_offered_to_the_seats_in_order);
    suite_add_tcase(s, tc);
    tc = tcase_create("drain");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_drain_finishes_hand_cashes_out_and_withdraws_ads);
    tcase_add_test(tc, test_bound_passes_mid_hand_voided_with_refunds);
    tcase_add_test(tc, test_random_play_on_two_tables_conserves_chips_through_drain);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
