/*
 * testgame -- the "test" engine on the table kit (engine/tk.h): a deliberately small game that
 * proves the game-server lifecycle (drain, void, rpc routing, idempotency, moves) independently
 * of the real games. Everything but its rules is the kit's.
 *
 * Rules: a table of --test-seats seats (CROUPIER_TEST_SEATS, default 3) for game "test" at a
 * stake. When at least two players sit (server bots count) and intake is open, a round begins
 * after --test-gap-ms; it lasts --test-round-ms (CROUPIER_TEST_ROUND_MS, default 1000). At its
 * end one playing seat, drawn at random, wins every other human's stake. Rounds run back to
 * back, like a resident table. Any action during a round is accepted and shown to the table as
 * a Play (the reply's event_seq is that Play's, so a retry -- answered from the gs's memory --
 * shows the same number and a new action a larger one). --test-bot-tables
 * (CROUPIER_TEST_BOT_TABLES, default 0) tables of server bots only are opened at start at stake 10:
 * they play rounds but never count as human desks.
 *
 * Windows (the kit's action windows, engine/tk.h "Action windows"): with --test-windows N
 * (CROUPIER_TEST_WINDOWS, default 0: the timed rounds above) a round is N action windows in a
 * row instead of a timer: the first opens for every playing seat, the later ones for every
 * playing seat but the button's, each with the deadline --test-action-ms.
 * A seat's pass ends its decision; a bid (any amount) is a move that keeps it open; any other
 * action is refused ILLEGAL_MOVE. The automatic move is a pass (Play timed_out). Every move is
 * shown to the table as a Play. When the last seat of the last window has decided, the round
 * ends as a timed round does. A disconnected player (trustee_when_away) is passed for after
 * --test-trustee-ms.
 *
 * Banker (the kit's banker, engine/tk.h "tk_banker_set"): with --test-banker 1 in windows mode
 * the first window of a round is the bid for the bank, open to the seats that may bank (every
 * seat but --test-no-bank-seat's, CROUPIER_TEST_NO_BANK_SEAT, default -1: none): the highest
 * bid banks (a seat's last bid counts; ties go to the lower seat), and with no bid the bank
 * rotates (tk_banker_next). The later windows leave out the banker instead of the button.
 *
 * Money: play money on the players' wallets (TK_MONEY_WALLET: no buy-in, no seat accounts).
 * Bots have no wallet, so the round's deltas are the humans': the drawn winner, if human, takes
 * every other human's stake; if a bot won nothing moves. Deltas sum to zero, no rake.
 *
 * Pairwise (the kit's pairwise settlement, engine/tk.h "tk_round_end_transfers"): with
 * --test-pairwise 1 the round ends with transfers instead of deltas: each other human pays the
 * winner the stake ("win"), then the winner pays the house tk_rake_win() of its win ("rake",
 * --test-rake-bp / --test-rake-cap). The deltas the kit derives are the same as above, less the
 * rake. --test-pairwise 2 adds a transfer from the winner to itself, which the kit refuses (the
 * round is voided, VOID_INTERNAL_ERROR: a bug of the game).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>

#include "testgame.h"
#include "deck.h"
#include "tk.h"

static long tg_round_ms = 1000;
static long tg_bot_tables = 0;
static long tg_windows = 0;
static long tg_banker = 0;
static long tg_no_bank_seat = -1;
static long tg_pairwise = 0;

static const config_flag_t tg_flags[] = {
    {"test-round-ms", CONFIG_INT, "1000", "length of a round (ms)", &tg_round_ms, 1, 3600000},
    {"test-bot-tables", CONFIG_INT, "0", "tables of server bots only opened at start",
     &tg_bot_tables, 0, 1000},
    {"test-windows", CONFIG_INT, "0", "action windows per round (0: rounds of --test-round-ms)",
     &tg_windows, 0, 1000},
    {"test-banker", CONFIG_INT, "0",
     "windows mode: the first window is the bid for the bank (1), or none (0)", &tg_banker, 0, 1},
    {"test-no-bank-seat", CONFIG_INT, "-1", "a seat that may never bank (-1: none)",
     &tg_no_bank_seat, -1, TK_MAX_SEATS - 1},
    {"test-pairwise", CONFIG_INT, "0",
     "a round ends with transfers (each loser pays the winner, the winner the rake) (1), and one "
     "the kit refuses (2)",
     &tg_pairwise, 0, 2},
    {0},
};

typedef struct {
    bool running;               /* a round of ours is in progress (its timer armed) */
    uint64_t seq;               /* the kit's round number it belongs to */
    long window;                /* windows mode: the windows opened in this round so far */
    uint32_t bid[TK_MAX_SEATS]; /* banker mode: each seat's last bid for the bank (0: none) */
} tg_game_t;

static void *tg_table_new(tk_table_t *t, const char *game, int64_t stake)
{
    (void)t;
    (void)game;
    (void)stake;
    return calloc(1, sizeof(tg_game_t));
}

static void tg_table_free(void *g)
{
    free(g);
}

/* Windows mode: opens the round's next window: the first over every playing seat (banker
 * mode: every seat that may bank), the later ones without the button's (the banker's). */
static int tg_window_next(tk_table_t *t, tg_game_t *z)
{
    uint32_t seats = 0;
    int skip = tg_banker ? tk_banker(t) : tk_button(t);
    for (int s = 0; s < tk_seats(t); s++) {
        bool in = z->window == 0 ? (tg_banker ? tk_banker_eligible(t, s) : tk_seat_playing(t, s))
                                 : tk_seat_playing(t, s) && s != skip;
        if (in)
            seats |= 1u << s;
    }
    z->window++;
    return tk_window_open(t, seats, 0, NULL);
}

/* Banker mode, the bid window closed: the highest bid banks, else the rotation's next. */
static void tg_choose_banker(tk_table_t *t, tg_game_t *z)
{
    int best = -1;
    for (int s = 0; s < tk_seats(t); s++)
        if (z->bid[s] > 0 && (best < 0 || z->bid[s] > z->bid[best]))
            best = s;
    if (best < 0 || tk_banker_set(t, best) != 0)
        tk_banker_set(t, tk_banker_next(t));
}

static void tg_round_finish(tk_table_t *t, tg_game_t *z);

static int tg_round_start(tk_table_t *t, void *g)
{
    tg_game_t *z = g;
    z->running = true;
    z->seq = tk_round_seq(t);
    if (tg_windows > 0) {
        z->window = 0;
        memset(z->bid, 0, sizeof z->bid);
        return tg_window_next(t, z);
    }
    return tk_timer(t, tg_round_ms, z->seq, NULL);
}

/* Windows mode: seat decided (tk_window_done); the last decision opens the next window, or ends
 * the round after the last. */
static void tg_window_decided(tk_table_t *t, tg_game_t *z, int seat)
{
    if (tk_window_done(t, seat) != 0)
        return;
    if (tg_banker && z->window == 1)
        tg_choose_banker(t, z);
    if (z->window < tg_windows) {
        if (tg_window_next(t, z) != 0)
            tg_round_finish(t, z);
        return;
    }
    tg_round_finish(t, z);
}

/* Shows seat's move to the table as a Play (timed_out: the automatic move). */
static void tg_push_play(tk_table_t *t, int seat, const Croupier__Action *a, bool timed_out)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play play = CROUPIER__PLAY__INIT;
    play.seat = (uint32_t)seat;
    play.action = (Croupier__Action *)a;
    play.has_timed_out = timed_out;
    play.timed_out = timed_out;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &play;
    tk_push_all(t, &sm);
}

/* Windows mode: the automatic move, a pass. */
static void tg_window_timeout(tk_table_t *t, void *g, int seat)
{
    tg_game_t *z = g;
    Croupier__Action a = CROUPIER__ACTION__INIT;
    Croupier__SheddingAction sa = CROUPIER__SHEDDING_ACTION__INIT;
    sa.move = CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
    a.kind_case = CROUPIER__ACTION__KIND_SHEDDING;
    a.shedding = &sa;
    tg_push_play(t, seat, &a, true);
    tk_history_action(t, seat, "auto", 0);
    tg_window_decided(t, z, seat);
}

/* The round's time is up: a random playing seat wins the other humans' stakes. */
static void tg_on_timer(tk_table_t *t, void *g, uint64_t cookie)
{
    tg_game_t *z = g;
    if (!z->running || cookie != z->seq || tk_round_seq(t) != z->seq)
        return; /* a timer of a round that was voided meanwhile */
    tg_round_finish(t, z);
}

static void tg_round_finish(tk_table_t *t, tg_game_t *z)
{
    z->running = false;
    int playing[TK_MAX_SEATS], n = 0;
    for (int s = 0; s < tk_seats(t); s++)
        if (tk_seat_playing(t, s))
            playing[n++] = s;
    int64_t delta[TK_MAX_SEATS] = {0};
    tk_transfer_t tr[TK_MAX_SEATS];
    int ntr = 0;
    /* The winner comes from the kit's deck source (common/deck.h); a failed generator makes
     * no winner (every delta 0) and the server starts no other round. */
    uint32_t pick;
    int winner = n > 0 && deck_uniform((uint32_t)n, &pick) == 0 ? playing[pick] : -1;
    if (winner >= 0 && !tk_seat_bot(t, winner)) {
        for (int k = 0; k < n; k++) {
            if (playing[k] == winner || tk_seat_bot(t, playing[k]))
                continue;
            delta[playing[k]] = -tk_stake(t);
            delta[winner] += tk_stake(t);
            tr[ntr++] = (tk_transfer_t){playing[k], winner, tk_stake(t), "win"};
        }
    }
    for (int k = 0; k < n; k++)
        tk_history_action(t, playing[k], playing[k] == winner ? "won" : "lost", delta[playing[k]]);
    if (!tg_pairwise) {
        tk_round_end(t, delta, 0);
        return;
    }
    int64_t rake = winner >= 0 ? tk_rake_win(t, delta[winner]) : 0;
    if (rake > 0)
        tr[ntr++] = (tk_transfer_t){winner, TK_HOUSE, rake, "rake"};
    if (tg_pairwise == 2 && winner >= 0 && ntr < TK_MAX_SEATS)
        tr[ntr++] = (tk_transfer_t){winner, winner, 1, "self"};
    tk_round_end_transfers(t, tr, ntr);
}

/* Any action during the round: shown to the table as it came. */
static Croupier__ErrorCode tg_action(tk_table_t *t, void *g, int seat, const ProtobufCMessage *m,
                                     const char **why)
{
    tg_game_t *z = g;
    if (!z->running) {
        *why = "no round in progress";
        return CROUPIER__ERROR_CODE__NO_ROUND;
    }
    if (tg_windows > 0) {
        /* The kit let only a seat pending in the window through. */
        const Croupier__Action *a = (const Croupier__Action *)m;
        bool pass = a->kind_case == CROUPIER__ACTION__KIND_SHEDDING &&
                    a->shedding->move == CROUPIER__SHEDDING_MOVE__SHEDDING_PASS;
        bool bid = a->kind_case == CROUPIER__ACTION__KIND_SHEDDING &&
                   a->shedding->move == CROUPIER__SHEDDING_MOVE__SHEDDING_BID;
        if (!pass && !bid) {
            *why = "a pass ends your decision, a bid keeps it open";
            return CROUPIER__ERROR_CODE__ILLEGAL_MOVE;
        }
        tg_push_play(t, seat, a, false);
        tk_history_action(t, seat, pass ? "pass" : "bid", pass ? 0 : a->shedding->bid);
        if (bid)
            z->bid[seat] = a->shedding->bid;
        if (pass)
            tg_window_decided(t, z, seat);
        return CROUPIER__ERROR_CODE__OK;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play play = CROUPIER__PLAY__INIT;
    play.seat = (uint32_t)seat;
    play.action = (Croupier__Action *)m;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &play;
    tk_push_all(t, &sm);
    tk_history_action(t, seat, "action", 0);
    return CROUPIER__ERROR_CODE__OK;
}

static void tg_timeout(tk_table_t *t, void *g, int seat)
{
    (void)t;
    (void)g;
    (void)seat; /* the test game has no turns */
}

static bool tg_may_bank(tk_table_t *t, void *g, int seat)
{
    (void)t;
    (void)g;
    return seat != tg_no_bank_seat;
}

static void tg_round_void(tk_table_t *t, void *g)
{
    (void)t;
    ((tg_game_t *)g)->running = false;
}

static void tg_snapshot(tk_table_t *t, void *g, int seat)
{
    (void)t;
    (void)g;
    (void)seat; /* the kit's header says it all: seats, round id, event_seq */
}

static void tg_started(tk_engine_t *eng)
{
    for (long i = 0; i < tg_bot_tables; i++)
        tk_engine_open_table(eng, "test", 10, TK_MAX_SEATS);
}

static const tk_game_t tg_game = {
    .watchable = true, /* docs/spectators.md */
    .engine = "test",
    .games = "test",
    .proto_engine = CROUPIER__ENGINE__ENGINE_TRADITIONAL,
    .min_seats = 2,
    .max_seats = TK_MAX_SEATS,
    .min_players = 2,
    .money = TK_MONEY_WALLET,
    .bots = true,
    .trustee_when_away = true, /* windows mode; the timed rounds have no turns */
    .defaults = {.seats = 3,
                 .action_ms = 15000,
                 .gap_ms = 20,
                 .idle_ms = 60000,
                 .buyin = 1,
                 .min_buyin = 1,
                 .bot_ms = 400,
                 .bot_fill_ms = -1},
    .extra_flags = tg_flags,
    .table_create = tg_table_new,
    .table_destroy = tg_table_free,
    .round_start = tg_round_start,
    .action = tg_action,
    .timeout = tg_timeout,
    .window_timeout = tg_window_timeout,
    .may_bank = tg_may_bank,
    .round_void = tg_round_void,
    .snapshot = tg_snapshot,
    .engine_started = tg_started,
    .on_timer = tg_on_timer,
};

TK_ENGINE(test, &tg_game, CROUPIER__ENGINE__ENGINE_TRADITIONAL);
