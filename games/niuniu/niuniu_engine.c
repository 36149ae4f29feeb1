/*
 * niuniu_engine -- Niu Niu (斗牛, banker version) on the table kit (engine/tk.h): the adapter
 * between the kit and the rules (niuniu.h, docs/rules/niuniu.md "Round"). A round is three
 * action windows (docs/writing-a-game.md "Simultaneous decisions"), each --niuniu-action-ms
 * long: the bid for the banker over the seats that may bank (or the rotation, --niuniu-rotate),
 * the punters' bets, then the show; the banker then settles with each punter, pairwise
 * (docs/writing-a-game.md "Pairwise settlement": the losers pay it, then it pays the winners,
 * strongest hand first, so a banker short of chips pays the strongest first), and the kit rakes
 * every winner (tk_game_t.rake_winners).
 *
 *   croupier-game --engine niuniu   game "niuniu"; the stake is the base bet (bets 1..5 stakes)
 */
#include <stdlib.h>
#include <string.h>

#include "deck.h"
#include "niuniu.h"
#include "niuniu.pb-c.h"
#include "niuniu_wire.h"
#include "tk.h"

typedef Croupier__Niuniu__NiuEvent nn_ev_t;

static long nn_max_bid = 4, nn_bank_min = 100, nn_rotate = 0; /* --niuniu-max-bid ... */

static const config_flag_t nn_flags[] = {
    {"niuniu-max-bid", CONFIG_INT, "4", "highest bid for the bank", &nn_max_bid, 1, 10},
    {"niuniu-bank-min", CONFIG_INT, "100", "banker's stack, in stakes", &nn_bank_min, 0, 100000},
    {"niuniu-rotate", CONFIG_INT, "0", "1: the bank rotates, no bid", &nn_rotate, 0, 1},
    {0},
};

enum { NN_NONE, NN_BID, NN_BET, NN_SHOW }; /* the phases, as NiuPhase */

/* One table's game: the rules' configuration and the round in play (r, zeroed at its start). */
typedef struct {
    tk_table_t *t;
    niuniu_config_t cfg;
    int last_banker;
    struct {
        int phase, mult;
        bool in[NIUNIU_MAX_SEATS];       /* dealt in */
        int64_t stack[NIUNIU_MAX_SEATS]; /* at the round's start */
        int bid[NIUNIU_MAX_SEATS];       /* 0: none (yet) */
        int bet[NIUNIU_MAX_SEATS];       /* in stakes; 0: none (yet) */
        bool shown[NIUNIU_MAX_SEATS];
        uint8_t cards[NIUNIU_MAX_SEATS][NIUNIU_HAND_CARDS];
    } r;
} nn_game_t;

/* Opens the phase's window over seats, the Turn's terms [lo, hi]; no seat: the round ends with
 * nothing moved (nobody may bank, or nobody's stack covers a bet). */
static void nn_open(nn_game_t *z, int phase, uint32_t seats, int lo, int hi)
{
    Croupier__Turn turn = CROUPIER__TURN__INIT;
    turn.has_min_amount = turn.has_max_amount = phase != NN_SHOW;
    turn.min_amount = lo;
    turn.max_amount = hi;
    z->r.phase = phase;
    if (seats == 0 || tk_window_open(z->t, seats, 0, &turn) != 0) {
        z->r.phase = NN_NONE;
        tk_round_end_transfers(z->t, NULL, 0);
    }
}

/* The banker is known: everyone is told, then the bets of the punters whose stack covers one. */
static void nn_banker(nn_game_t *z, int banker, int mult)
{
    Croupier__Niuniu__NiuBanker b = CROUPIER__NIUNIU__NIU_BANKER__INIT;
    nn_ev_t ev = CROUPIER__NIUNIU__NIU_EVENT__INIT;
    if (tk_banker_set(z->t, banker) != 0) {
        tk_round_end_transfers(z->t, NULL, -1); /* the rules and the kit disagree: voided */
        return;
    }
    z->r.mult = mult;
    z->last_banker = banker;
    b.seat = (uint32_t)banker;
    b.mult = (uint32_t)mult;
    ev.kind_case = CROUPIER__NIUNIU__NIU_EVENT__KIND_BANKER;
    ev.banker = &b;
    tk_push_event(z->t, -1, &ev.base);
    tk_history_action(z->t, banker, "banker", mult);
    uint32_t seats = 0;
    int lo = z->cfg.bet_options[0], hi = z->cfg.bet_options[z->cfg.nbet_options - 1];
    for (int s = 0; s < tk_seats(z->t); s++)
        if (z->r.in[s] && s != banker && niuniu_bet_allowed(&z->cfg, z->r.stack[s], mult, lo))
            seats |= 1u << s;
    nn_open(z, NN_BET, seats, lo, hi);
}

/* The bid window closed: the rules choose the banker among the bids (a draw among equals), or
 * the rotation does (--niuniu-rotate: the next seat that may bank, multiplier 1). */
static void nn_choose(nn_game_t *z)
{
    int bids[NIUNIU_MAX_SEATS], banker, mult = 1, rc;
    uint32_t rnd = 0;
    for (int s = 0; s < NIUNIU_MAX_SEATS; s++)
        bids[s] = z->r.in[s] ? z->r.bid[s] : -1;
    rc = deck_uniform(NIUNIU_DRAW_RANGE, &rnd); /* rnd % count is then exactly uniform */
    if (rc == 0 && nn_rotate)
        rc = niuniu_banker_rotate(&z->cfg, z->last_banker, z->r.in, z->r.stack, rnd, &banker);
    else if (rc == 0)
        rc = niuniu_banker_bid(&z->cfg, bids, z->r.stack, rnd, &banker, &mult);
    if (rc == 0)
        nn_banker(z, banker, mult);
    else /* nobody may bank (the rotation), or a bug (the bids were the eligible seats') */
        tk_round_end_transfers(z->t, NULL, nn_rotate ? 0 : -1);
}

/* The shows are in: every punter settles with the banker (niuniu_settle), as the round's
 * transfers; the kit adds the winners' rake. */
static void nn_settle(nn_game_t *z)
{
    niuniu_round_t r = {.banker = tk_banker(z->t), .mult = z->r.mult};
    niuniu_settlement_t st;
    tk_transfer_t tr[NIUNIU_MAX_SEATS];
    int n = 0;
    memcpy(r.stack, z->r.stack, sizeof r.stack);
    memcpy(r.cards, z->r.cards, sizeof r.cards);
    for (int s = 0; s < tk_seats(z->t); s++)
        r.bet[s] = s == r.banker ? 0 : z->r.bet[s] * tk_stake(z->t);
    z->r.phase = NN_NONE;
    if (niuniu_settle(&z->cfg, &r, &st) != 0) {
        tk_round_end_transfers(z->t, NULL, -1); /* voided: a bug */
        return;
    }
    for (int i = 0; i < st.n; i++) {
        const niuniu_transfer_t *x = &st.t[i];
        if (x->amount > 0) /* a short banker's last winners get nothing */
            tr[n++] = (tk_transfer_t){x->player_won ? r.banker : x->seat,
                                      x->player_won ? x->seat : r.banker, x->amount,
                                      niuniu_category_name(x->category)};
    }
    tk_round_end_transfers(z->t, tr, n);
}

/* The bets are in: the banker and every punter see their last card and show. */
static void nn_bets_done(nn_game_t *z)
{
    uint32_t seats = 0;
    int k = z->cfg.cards_before_bid;
    for (int s = 0; s < tk_seats(z->t); s++)
        if (s == tk_banker(z->t) || z->r.bet[s] > 0) {
            seats |= 1u << s;
            tk_push_deal(z->t, s, z->r.cards[s] + k, (size_t)(NIUNIU_HAND_CARDS - k));
        }
    nn_open(z, NN_SHOW, seats, 0, 0);
}

/* seat shows its hand: everyone sees it and its category; RoundEnd and the history too. */
static void nn_show(nn_game_t *z, int seat)
{
    Croupier__Niuniu__NiuShown sh = CROUPIER__NIUNIU__NIU_SHOWN__INIT;
    nn_ev_t ev = CROUPIER__NIUNIU__NIU_EVENT__INIT;
    niuniu_hand_t h;
    niuniu_eval(z->r.cards[seat], NIUNIU_HAND_CARDS, &h);
    z->r.shown[seat] = true;
    tk_round_show(z->t, seat, z->r.cards[seat], NIUNIU_HAND_CARDS);
    sh.seat = (uint32_t)seat;
    sh.cards = (ProtobufCBinaryData){NIUNIU_HAND_CARDS, z->r.cards[seat]};
    sh.category = (char *)niuniu_category_name(h.category);
    ev.kind_case = CROUPIER__NIUNIU__NIU_EVENT__KIND_SHOWN;
    ev.shown = &sh;
    tk_push_event(z->t, -1, &ev.base);
    tk_history_action(z->t, seat, "show", h.category);
}

/* seat's move in the open window (its phase's); a refusal changes nothing. The seat's decision
 * is then made, and the last one moves the round on. */
static Croupier__ErrorCode nn_move(nn_game_t *z, int seat, int move, int amount, bool auto_,
                                   const char **why)
{
    static const char *const names[] = {"", "bid", "bet"};
    Croupier__Niuniu__NiuAction a = CROUPIER__NIUNIU__NIU_ACTION__INIT;
    *why = "not this move's window";
    if (move != z->r.phase)
        return CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED;
    *why = "a bid above the highest bid, or a bet no option or your stack allows";
    if (move == NN_BID && amount > z->cfg.max_bid)
        return CROUPIER__ERROR_CODE__BET_ABOVE_MAX;
    if (move == NN_BET && !niuniu_bet_allowed(&z->cfg, z->r.stack[seat], z->r.mult, amount))
        return CROUPIER__ERROR_CODE__ILLEGAL_MOVE;
    *why = NULL;
    a.move = (Croupier__Niuniu__NiuMove)move; /* Play{seat, the move} to everyone */
    a.has_amount = move != NN_SHOW;
    a.amount = (uint32_t)amount;
    tk_push_play(z->t, seat, &a.base, auto_);
    if (move == NN_SHOW)
        nn_show(z, seat);
    else
        (move == NN_BID ? z->r.bid : z->r.bet)[seat] = amount;
    if (move != NN_SHOW)
        tk_history_action(z->t, seat, names[move], amount);
    if (tk_window_done(z->t, seat) == 0)
        (move == NN_BID ? nn_choose : move == NN_BET ? nn_bets_done : nn_settle)(z);
    return CROUPIER__ERROR_CODE__OK;
}

/* ---- the kit's calls --------------------------------------------------------------------- */

static void *nn_table_new(tk_table_t *t, const char *game, int64_t stake)
{
    (void)game;
    nn_game_t *z = calloc(1, sizeof *z);
    if (z == NULL)
        return NULL;
    niuniu_config_default(&z->cfg);
    z->cfg.seats = tk_seats(t);
    z->cfg.stake = stake;
    z->cfg.max_bid = (int)nn_max_bid;
    z->cfg.bank_min_stakes = nn_bank_min;
    z->cfg.banker_mode = nn_rotate ? NIUNIU_BANKER_ROTATE : NIUNIU_BANKER_BID;
    z->t = t;
    z->last_banker = -1;
    if (niuniu_config_check(&z->cfg) == 0)
        return z;
    free(z); /* a stake the rules refuse */
    return NULL;
}

static void nn_round_void(tk_table_t *t, void *g)
{
    (void)t;
    memset(&((nn_game_t *)g)->r, 0, sizeof((nn_game_t *)g)->r);
}

/* Deals five cards to every seat dealt in from the kit's deck (each sees its first
 * cards_before_bid), then the bid window over the seats that may bank, or the rotation. */
static int nn_round_start(tk_table_t *t, void *g)
{
    nn_game_t *z = g;
    uint8_t deck[NIUNIU_DECK_CARDS];
    uint32_t may_bank = 0;
    for (int i = 0; i < NIUNIU_DECK_CARDS; i++)
        deck[i] = FRAME_CARD(2 + i / 4, i % 4);
    int rc = tk_deal_shuffle(t, deck, NIUNIU_DECK_CARDS);
    if (rc != 0)
        return rc;
    nn_round_void(t, g);
    for (int s = 0, k = 0; s < tk_seats(t); s++) {
        if (!(z->r.in[s] = tk_seat_playing(t, s)))
            continue;
        z->r.stack[s] = tk_seat_stack(t, s);
        memcpy(z->r.cards[s], deck + NIUNIU_HAND_CARDS * k++, NIUNIU_HAND_CARDS);
        for (int c = 0; c < NIUNIU_HAND_CARDS; c++)
            tk_history_card(t, s, z->r.cards[s][c]);
        tk_push_deal(t, s, z->r.cards[s], (size_t)z->cfg.cards_before_bid);
        may_bank |= (uint32_t)tk_banker_eligible(t, s) << s;
    }
    if (nn_rotate)
        nn_choose(z);
    else
        nn_open(z, NN_BID, may_bank, 0, z->cfg.max_bid);
    return 0;
}

static Croupier__ErrorCode nn_action(tk_table_t *t, void *g, int seat, const ProtobufCMessage *m,
                                     const char **why)
{
    (void)t;
    const Croupier__Niuniu__NiuAction *a = (const Croupier__Niuniu__NiuAction *)m;
    return nn_move(g, seat, (int)a->move, (int)a->amount, false, why);
}

/* The automatic move of a window (docs/rules/niuniu.md "Timeouts and disconnects"): no bid, the
 * smallest bet, the hand shown as dealt. */
static void nn_auto(tk_table_t *t, void *g, int seat)
{
    nn_game_t *z = g;
    const char *why;
    (void)t;
    nn_move(z, seat, z->r.phase, z->r.phase == NN_BET ? niuniu_default_bet(&z->cfg) : 0, true,
            &why);
}

/* The round as seat may see it: every seat's bid, bet and shown hand, its own cards (the first
 * cards_before_bid, all five from its show window on). */
static void nn_snapshot(tk_table_t *t, void *g, int seat)
{
    nn_game_t *z = g;
    Croupier__Niuniu__NiuState st = CROUPIER__NIUNIU__NIU_STATE__INIT;
    Croupier__Niuniu__NiuSeat seats[NIUNIU_MAX_SEATS], *ptrs[NIUNIU_MAX_SEATS];
    st.has_phase = z->r.phase != NN_NONE;
    st.phase = (Croupier__Niuniu__NiuPhase)z->r.phase;
    st.has_mult = st.has_phase && tk_banker(t) >= 0;
    st.mult = (uint32_t)z->r.mult;
    st.max_bid = (uint32_t)z->cfg.max_bid;
    st.seats = ptrs;
    for (int s = 0; st.has_phase && s < tk_seats(t); s++) {
        if (!z->r.in[s])
            continue;
        Croupier__Niuniu__NiuSeat *v = &seats[st.n_seats];
        *v = (Croupier__Niuniu__NiuSeat)CROUPIER__NIUNIU__NIU_SEAT__INIT;
        v->seat = (uint32_t)s;
        v->has_bid = (v->bid = (uint32_t)z->r.bid[s]) > 0;
        v->has_bet = (v->bet = (uint32_t)z->r.bet[s]) > 0;
        v->has_shown_cards = z->r.shown[s];
        v->shown_cards = (ProtobufCBinaryData){NIUNIU_HAND_CARDS, z->r.cards[s]};
        ptrs[st.n_seats++] = v;
    }
    if (st.has_phase && seat >= 0 && z->r.in[seat]) { /* -1: a spectator */
        bool all = z->r.phase == NN_SHOW && (seat == tk_banker(t) || z->r.bet[seat] > 0);
        st.has_own_cards = true;
        st.own_cards = (ProtobufCBinaryData){
            all ? NIUNIU_HAND_CARDS : (size_t)z->cfg.cards_before_bid, z->r.cards[seat]};
    }
    tk_snapshot_state(t, &st.base);
}

/* A punter's least stack: the smallest bet's worst loss at multiplier 1 ("Bets"). */
static int64_t nn_min_stack(tk_table_t *t, void *g)
{
    const niuniu_config_t *cfg = &((nn_game_t *)g)->cfg;
    return (int64_t)niuniu_default_bet(cfg) * tk_stake(t) * niuniu_max_multiplier(cfg);
}

/* A banker's ("The banker": bank_min_stakes stakes, niuniu_may_bank()). */
static int64_t nn_bank_stack(tk_table_t *t, void *g)
{
    return ((nn_game_t *)g)->cfg.bank_min_stakes * tk_stake(t);
}

static const tk_game_t nn_game = {
    .watchable = true, /* docs/spectators.md */
    .engine = "niuniu",
    .games = "niuniu",
    .proto_engine = CROUPIER__ENGINE__ENGINE_GAME,
    .min_seats = 2,
    .max_seats = TK_MAX_SEATS,
    .min_players = 2,
    .rake_winners = true,
    .defaults = {.seats = 6,
                 .action_ms = 8000,
                 .gap_ms = 3000,
                 .idle_ms = 60000,
                 .buyin = 400,
                 .min_buyin = 100,
                 .rake_bp = 500},
    .extra_flags = nn_flags,
    .action_desc = &croupier__niuniu__niu_action__descriptor,
    .action_rules = niuniu_wire_action_rules,
    .table_create = nn_table_new,
    .table_destroy = free,
    .round_start = nn_round_start,
    .action = nn_action,
    .timeout = nn_auto,
    .window_timeout = nn_auto,
    .round_void = nn_round_void,
    .snapshot = nn_snapshot,
    .min_stack = nn_min_stack,
    .bank_stack = nn_bank_stack,
};

TK_ENGINE(niuniu, &nn_game, CROUPIER__ENGINE__ENGINE_GAME);
