/*
 * tk_money.c -- the money of a seat (docs/architecture.md §12 "The money of a seat"; money.h
 * "Held chips"): the operation ids, the buy-in and its result, the top-up after a round
 * (tk_game_t.topup), the round's settlement as a money follow-up, and the cash-out of a seat's
 * stack back to its owner's wallet. Internal to the kit: tk_int.h has the contract.
 *
 * The desk submits, the money writer's thread answers: its callbacks here only post the result
 * back to the table (TK_MSG_BUYIN_DONE, TK_MSG_TOPUP_DONE, TK_MSG_SETTLED, TK_MSG_CASHOUT_DONE)
 * or log it, and touch nothing of the table (§12 "Threads"). Everything else runs on the table's
 * desk thread.
 */
#include "tk_int.h"

/* ---- money ------------------------------------------------------------------------------- */

typedef struct {
    gs_t *gs;
    rt_t *rt;
    rt_desk_id_t desk;
    int seat;
    uint64_t n;
    int msg; /* TK_MSG_BUYIN_DONE or TK_MSG_TOPUP_DONE */
} tk_op_t;

static void tk_op_id(tk_table_t *t, int seat, uint64_t n, const char *tag, char *buf, size_t len)
{
    snprintf(buf, len, "tk:%s:%" PRIu32 ":%" PRIu64 ":%" PRIx64 ":%d:%" PRIu64 ":%s", t->eng->svc,
             t->slot, t->epoch, rt_desk_id(t->desk), seat, n, tag);
}

/* Writer thread: logs a failed money item that needs no answer at the desk. */
void tk_money_log_cb(money_result_t *res, void *arg)
{
    (void)arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "tk_money_failed", "{s:i,s:s,s:i,s:s}", "kind", res->kind, "id",
                 res->id, "status", res->status, "error", res->error);
    free(res);
}

/* Writer thread: a buy-in's or a top-up's result goes back to its table desk as op->msg (a
 * money follow-up, gs.h). */
static void tk_seat_op_cb(money_result_t *res, void *arg)
{
    tk_op_t *op = arg;
    res->arg = op->gs;
    rt_msg_t m = {.type = op->msg,
                  .arg = (uint64_t)op->seat,
                  .arg2 = op->n,
                  .ptr = res,
                  .free_fn = gs_money_result_free};
    rt_post(op->rt, op->desk, &m);
    free(op);
}

/* One cash-out in flight (one seat transfer: the seat account's chips back to their owner's
 * wallet, atomically, money.h "Held chips"). */
typedef struct {
    rt_t *rt;
    rt_desk_id_t desk;
    bool notify; /* tell the desk when it is applied (the table is closing) */
    int64_t amount;
    char player[MONEY_NAME_MAX + 1];
} tk_cash_t;

/* Writer thread: the cash-out answered. A failure is logged; the chips stay in the seat account,
 * which is recorded as held, so the recovery at the server's exit (or after a crash) returns
 * them (docs/queues.md). */
static void tk_cash_cb(money_result_t *res, void *arg)
{
    tk_cash_t *c = arg;
    if (res->status != MONEY_OK)
        log_emit(LOG_ERROR, "tk_cash_out_failed", "{s:s,s:s,s:I,s:i,s:s}", "player", c->player,
                 "op", res->id, "amount", (json_int_t)c->amount, "status", res->status, "error",
                 res->error);
    free(res);
    if (c->notify) {
        rt_msg_t m = {.type = TK_MSG_CASHOUT_DONE};
        rt_post(c->rt, c->desk, &m);
    }
    free(c);
}

/* The seat transfer record of seat i (its account and owner under the table's lease). */
static money_seat_t tk_money_seat(const tk_table_t *t, int i, const char *owner)
{
    return (money_seat_t){
        .slot = t->slot, .epoch = t->epoch, .account = t->seat[i].acct, .owner = owner};
}

/* Moves seat's stack back to its player's wallet; the stack is 0 afterwards. When the table is
 * closing the desk counts the cash-out until it is applied (pending_cashouts). */
void tk_cash_out(tk_table_t *t, int seat)
{
    tk_seat_t *s = &t->seat[seat];
    int64_t amount = s->stack;
    s->stack = 0;
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    if (amount <= 0 || w == NULL || t->eng->game->money == TK_MONEY_WALLET)
        return;
    tk_cash_t *c = xcalloc(1, sizeof *c);
    *c = (tk_cash_t){.rt = rt_desk_rt(t->desk),
                     .desk = rt_desk_id(t->desk),
                     .notify = t->closed,
                     .amount = amount};
    tk_owner_wallet(t->eng, s, c->player, sizeof c->player);
    char op[MONEY_ID_MAX + 1];
    tk_op_id(t, seat, ++s->ops, "co", op, sizeof op);
    bool notify = c->notify;
    char player[MONEY_NAME_MAX + 1];
    memcpy(player, c->player, sizeof player);
    money_seat_t ms = tk_money_seat(t, seat, player);
    /* After a successful submit c belongs to the writer thread. */
    int rc = money_writer_submit_seat(w, MONEY_KIND_SEAT_OUT, &ms, amount, op, tk_cash_cb, c);
    if (rc != 0)
        free(c);
    else if (notify)
        t->pending_cashouts++;
    log_emit(rc == 0 ? LOG_INFO : LOG_ERROR, "tk_cash_out", "{s:s,s:s,s:I,s:i}", "player", player,
             "account", s->acct, "amount", (json_int_t)amount, "errno", -rc);
}

/* ---- settlement -------------------------------------------------------------------------- */

tk_house_acct_t *tk_house_acct_create(void)
{
    tk_house_acct_t *ha = xcalloc(1, sizeof *ha);
    pthread_mutex_init(&ha->mu, NULL);
    return ha;
}

void tk_house_acct_destroy(tk_house_acct_t *ha)
{
    if (ha == NULL)
        return;
    pthread_mutex_destroy(&ha->mu);
    free(ha);
}

void tk_house_unsettled(tk_table_t *t)
{
    tk_house_acct_t *ha = t->eng->hacct;
    if (ha == NULL)
        return;
    pthread_mutex_lock(&ha->mu);
    ha->bal = 0;
    pthread_mutex_unlock(&ha->mu);
}

/* The float of the house's seat account at table t's stake (tk_settings_t.house_float). */
static int64_t tk_house_float(const tk_table_t *t)
{
    long fl = t->eng->set.house_float;
    return fl > 0 ? t->stake * fl : t->stake * t->eng->set.buyin * t->nseats * TK_HOUSE_FLOAT;
}

/* Queues a seat transfer of the house's seat account (tag "hf": in from the house wallet, "hr":
 * back to it) under ha->mu; logged. Returns 0 or a negative errno. */
static int tk_house_transfer(tk_table_t *t, tk_house_acct_t *ha, money_kind_t kind, int64_t amount)
{
    bool in = kind == MONEY_KIND_SEAT_IN;
    char op[MONEY_ID_MAX + 1];
    snprintf(op, sizeof op, "tk:%s:%" PRIu32 ":%" PRIu64 ":house:%" PRIu64 ":%s", t->eng->svc,
             t->slot, t->epoch, ++ha->ops, in ? "hf" : "hr");
    money_seat_t ms = {
        .slot = t->slot, .epoch = t->epoch, .account = ha->acct, .owner = t->eng->house};
    int rc = money_writer_submit_seat(gs_money(gs_of_desk(t->desk)), kind, &ms, amount, op,
                                      tk_money_log_cb, NULL);
    log_emit(rc == 0 ? LOG_INFO : LOG_ERROR,
             in ? "tk_house_account_funded" : "tk_house_account_returned", "{s:s,s:s,s:s,s:I,s:i}",
             "house", t->eng->house, "account", ha->acct, "op", op, "amount", (json_int_t)amount,
             "errno", -rc);
    return rc;
}

/*
 * Under ha->mu, before a settlement in which the house takes house_delta (tk_house_acct_t): names
 * the account of the table's epoch, and when it may not hold enough for the house's loss queues
 * a funding from the house wallet first -- the loss and a float (tk_settings_t.house_float),
 * so that most rounds need none. The writer applies its items in the order they were queued, and
 * a seat transfer is a barrier (money_writer.h), so the funding lands before the settlement; a
 * funding the wallet cannot pay is refused (logged), and so is the settlement then. The
 * account's name, valid until ha->mu is released, is returned.
 */
static const char *tk_house_prepare(tk_table_t *t, tk_house_acct_t *ha, int64_t house_delta)
{
    bool fresh = ha->acct[0] == '\0' || ha->slot != t->slot || ha->epoch != t->epoch;
    if (fresh) {
        /* A new epoch has its own account (the old one is its epoch's recovery's to return),
         * funded before its first settlement whatever the house takes: the funding records it
         * as held for the house wallet, and a held account is what the recovery returns. */
        snprintf(ha->acct, sizeof ha->acct, "th.%s.%" PRIu32 ".%" PRIu64, t->eng->svc, t->slot,
                 t->epoch);
        ha->slot = t->slot;
        ha->epoch = t->epoch;
        ha->bal = 0;
    }
    if (!fresh && ha->bal + house_delta >= 0)
        return ha->acct;
    int64_t short_by = ha->bal + house_delta < 0 ? -(ha->bal + house_delta) : 0;
    int64_t amount = short_by + tk_house_float(t);
    if (amount > MONEY_MAX_AMOUNT || amount <= 0)
        amount = short_by > 0 ? short_by : 1;
    if (tk_house_transfer(t, ha, MONEY_KIND_SEAT_IN, amount) == 0)
        ha->bal += amount;
    return ha->acct;
}

/*
 * Under ha->mu, after a settlement queued: what the house won beyond three floats goes back to
 * the house wallet (all but one float), so that the wallet, not the epoch, keeps the house's
 * winnings while the epoch lives. ha->bal is a lower bound of what the account will hold, so
 * the transfer never asks for chips that are not there -- unless the settlement that counted them
 * is refused, and then the transfer is refused too (MONEY_INSUFFICIENT, logged; the chips stay
 * for the recovery).
 */
static void tk_house_return(tk_table_t *t, tk_house_acct_t *ha)
{
    int64_t fl = tk_house_float(t);
    if (fl <= 0 || fl > MONEY_MAX_AMOUNT / 3 || ha->bal <= 3 * fl)
        return;
    int64_t amount = ha->bal - fl;
    if (amount > MONEY_MAX_AMOUNT)
        amount = MONEY_MAX_AMOUNT;
    if (tk_house_transfer(t, ha, MONEY_KIND_SEAT_OUT, amount) == 0)
        ha->bal -= amount;
}

/* Submits the round's settlement as a money follow-up whose result comes back as
 * TK_MSG_SETTLED. Returns true when it was submitted (the round's end then waits for it). */
bool tk_settle(tk_table_t *t, const int64_t *delta, bool house, int64_t house_delta, int64_t rake)
{
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    money_settlement_t s = {0};
    bool wallets = t->eng->game->money == TK_MONEY_WALLET;
    char names[TK_MAX_SEATS][24];
    for (int i = 0; i < t->nseats && s.nplayers < MONEY_MAX_PLAYERS; i++) {
        if (!t->seat[i].playing || (wallets && t->seat[i].bot))
            continue; /* a bot has no wallet of its own at a play-money table */
        if (wallets) {
            tk_player_name(t->seat[i].player, names[i], sizeof names[i]);
            s.players[s.nplayers] = names[i];
        } else {
            s.players[s.nplayers] = t->seat[i].acct;
        }
        s.deltas[s.nplayers] = delta[i];
        s.nplayers++;
    }
    /* With the money by entity the house settles through its seat account (tk_house_acct_t):
     * its funding and this settlement are queued under its lock, in the order they count. */
    tk_house_acct_t *ha = house && w != NULL ? t->eng->hacct : NULL;
    if (ha != NULL)
        pthread_mutex_lock(&ha->mu);
    t->settle_house = ha != NULL;
    if (house && s.nplayers < MONEY_MAX_PLAYERS) {
        s.players[s.nplayers] = ha != NULL ? tk_house_prepare(t, ha, house_delta) : t->eng->house;
        s.deltas[s.nplayers] = house_delta;
        s.nplayers++;
    }
    int rc = -ENOENT;
    gs_t *gs = gs_of_desk(t->desk);
    tk_op_t *o = NULL;
    if (w != NULL && s.nplayers > 0) {
        s.round = gs_round_id(gs, rt_desk_id(t->desk), t->seq);
        s.game = t->game;
        s.rake = rake;
        o = xcalloc(1, sizeof *o);
        *o = (tk_op_t){.gs = gs,
                       .rt = rt_desk_rt(t->desk),
                       .desk = rt_desk_id(t->desk),
                       .seat = -1,
                       .n = t->seq,
                       .msg = TK_MSG_SETTLED};
        gs_money_followup_begin(gs);
        rc = money_writer_submit_settle(w, &s, tk_seat_op_cb, o);
        if (rc != 0) {
            gs_money_followup_end(gs);
            free(o);
            log_emit(LOG_ERROR, "tk_settle_refused", "{s:s,s:i}", "round", t->round_id, "errno",
                     -rc);
        }
    }
    if (ha != NULL) {
        if (rc == 0) {
            ha->bal += house_delta;
            tk_house_return(t, ha);
        }
        pthread_mutex_unlock(&ha->mu);
    }
    return rc == 0;
}

/* ---- buy-ins and top-ups ----------------------------------------------------------------- */

/* Submits the buy-in of seat i (BUYING) from wallet: a money follow-up whose result comes back
 * as TK_MSG_BUYIN_DONE (or, topup, TK_MSG_TOPUP_DONE). Returns 0 or a negative errno. */
int tk_submit_buyin(tk_table_t *t, int i, const char *wallet, int64_t amount, bool topup)
{
    gs_t *gs = gs_of_desk(t->desk);
    tk_seat_t *s = &t->seat[i];
    uint64_t n = ++s->ops;
    char op[MONEY_ID_MAX + 1];
    tk_op_id(t, i, n, topup ? "tu" : "bi", op, sizeof op);
    tk_op_t *o = xcalloc(1, sizeof *o);
    *o = (tk_op_t){.gs = gs,
                   .rt = rt_desk_rt(t->desk),
                   .desk = rt_desk_id(t->desk),
                   .seat = i,
                   .n = n,
                   .msg = topup ? TK_MSG_TOPUP_DONE : TK_MSG_BUYIN_DONE};
    money_writer_t *w = gs_money(gs);
    gs_money_followup_begin(gs);
    money_seat_t ms = tk_money_seat(t, i, wallet);
    int rc = w != NULL ? money_writer_submit_seat(w, MONEY_KIND_SEAT_IN, &ms, amount, op,
                                                  tk_seat_op_cb, o)
                       : -ENOTCONN;
    if (rc != 0) {
        gs_money_followup_end(gs);
        free(o);
    }
    return rc;
}

/* The buy-in's result: the seat account is credited and the player sits, or (the table closed
 * meanwhile) the chips go straight back; a failure frees the seat. A bot's buy-in is answered
 * to nobody. */
void tk_buyin_done(tk_table_t *t, int i, uint64_t n, const money_result_t *res)
{
    gs_t *gs = gs_of_desk(t->desk);
    if (i < 0 || i >= t->nseats || t->seat[i].state != TK_BUYING || t->seat[i].ops != n) {
        log_emit(LOG_ERROR, "tk_buyin_stray", "{s:i,s:s,s:i}", "seat", i, "op", res->id, "status",
                 res->status);
        return;
    }
    tk_seat_t *s = &t->seat[i];
    gs_request_t *req = s->join_req;
    s->join_req = NULL;
    char wallet[MONEY_NAME_MAX + 1], op[MONEY_ID_MAX + 1];
    tk_owner_wallet(t->eng, s, wallet, sizeof wallet);
    bool shut = t->closed || tk_room_ended(t);
    if (res->status != MONEY_OK || shut) {
        if (res->status == MONEY_OK) {
            /* The table closed meanwhile: the chips go straight back. */
            tk_op_id(t, i, n, "rf", op, sizeof op);
            money_seat_t ms = tk_money_seat(t, i, wallet);
            int rc = money_writer_submit_seat(gs_money(gs), MONEY_KIND_SEAT_OUT, &ms, s->buyin, op,
                                              tk_money_log_cb, NULL);
            if (rc != 0)
                log_emit(LOG_ERROR, "tk_refund_refused", "{s:s,s:s,s:I,s:i}", "wallet", wallet,
                         "op", op, "amount", (json_int_t)s->buyin, "errno", -rc);
        }
        bool poor = res->status == MONEY_ERR_INSUFFICIENT;
        if (req != NULL && tk_room_ended(t) && res->status == MONEY_OK)
            tk_refuse(t, req, CROUPIER__ERROR_CODE__ROOM_ENDED,
                      "the room was disbanded; buy-in refunded");
        else if (req != NULL)
            tk_refuse(t, req,
                      t->closed ? CROUPIER__ERROR_CODE__DRAINING
                      : poor    ? CROUPIER__ERROR_CODE__INSUFFICIENT_FUNDS
                                : CROUPIER__ERROR_CODE__UNAVAILABLE,
                      t->closed ? "table closing; buy-in refunded"
                      : poor    ? "wallet balance below the buy-in"
                                : "wallet unavailable");
        else
            log_emit(LOG_WARN, "tk_bot_buyin_failed", "{s:s,s:s,s:i}", "engine",
                     t->eng->game->engine, "house", wallet, "status", res->status);
        if (!s->bot)
            gs_seat(gs, s->player, 0);
        memset(s, 0, offsetof(tk_seat_t, ops));
        tk_sync(t);
        tk_tell_lobby(t);
        tk_maybe_idle(t);
        return;
    }
    s->stack = s->buyin; /* the transfer put it into the seat account */
    log_emit(LOG_INFO, "tk_sat", "{s:s,s:s,s:I,s:i,s:I,s:b}", "engine", t->eng->game->engine,
             "player", wallet, "desk", (json_int_t)rt_desk_id(t->desk), "seat", i, "buyin",
             (json_int_t)s->buyin, "bot", s->bot);
    tk_seated(t, i);
    if (req != NULL)
        tk_reply_joined(t, req, i);
}

/* After a round (tk_game_t.topup): seat i's stack is brought back to the largest buy-in from
 * its owner's wallet before it plays again. */
void tk_topup(tk_table_t *t, int i)
{
    tk_seat_t *s = &t->seat[i];
    int64_t want, least;
    tk_buyin_range(t->eng, t->game, t->stake, &want, &least);
    int64_t amount = want - s->stack;
    if (amount <= 0 || s->topping)
        return;
    char wallet[MONEY_NAME_MAX + 1];
    tk_owner_wallet(t->eng, s, wallet, sizeof wallet);
    s->buyin = amount;
    if (tk_submit_buyin(t, i, wallet, amount, true) != 0) {
        tk_bust(t, i);
        return;
    }
    s->topping = true;
    s->topup_op = s->ops; /* a closing cash-out may take the next op numbers meanwhile */
}

/* A top-up's result: the seat plays on with its stack restored, or (its wallet cannot cover
 * it) leaves the table like a busted seat. */
void tk_topup_done(tk_table_t *t, int i, uint64_t n, const money_result_t *res)
{
    if (i < 0 || i >= t->nseats || !t->seat[i].topping || t->seat[i].topup_op != n) {
        log_emit(LOG_ERROR, "tk_topup_stray", "{s:i,s:s,s:i}", "seat", i, "op", res->id, "status",
                 res->status);
        return;
    }
    tk_seat_t *s = &t->seat[i];
    s->topping = false;
    if (res->status == MONEY_OK)
        s->stack += s->buyin; /* the transfer put it into the seat account */
    log_emit(res->status == MONEY_OK ? LOG_INFO : LOG_WARN, "tk_topped_up",
             "{s:s,s:s,s:i,s:I,s:i,s:b}", "engine", t->eng->game->engine, "op", res->id, "seat", i,
             "amount", (json_int_t)s->buyin, "status", res->status, "bot", s->bot);
    if (s->leave_after_topup) {
        tk_cash_out(t, i);
        tk_unseat(t, i);
        return;
    }
    if (t->closed && t->move == TK_MOVE_NONE) {
        /* Closed meanwhile: the seat is cashed out with everyone else's (tk_close) unless the
         * credit came after it; then this seat goes now. (A table preparing a whole-table move
         * tops up as after any round: the offer waits for it.) */
        if (s->state == TK_CLOSED)
            tk_cash_out(t, i);
        return;
    }
    if (res->status != MONEY_OK) {
        tk_bust(t, i);
        tk_maybe_fill(t);
        return;
    }
    if (s->bot)
        tk_bots_stand(t); /* the last human left while this bot topped up */
    tk_maybe_schedule(t);
}

/* ---- buy-in range ------------------------------------------------------------------------ */

/* The largest and smallest buy-in at a table of game at stake (chips). */
void tk_buyin_range(const tk_engine_t *eng, const char *game, int64_t stake, int64_t *max,
                    int64_t *min)
{
    long units = eng->game->buyin_for != NULL ? eng->game->buyin_for(game) : 0;
    *max = stake * (units > 0 ? units : eng->set.buyin);
    *min = stake * (units > 0 ? units : eng->set.min_buyin);
}
