/*
 * tk_round.c -- a table's rounds: the hand history and the deck of a round (docs/hand-history.md,
 * docs/fairness.md), when the next round can start (enough seats ready, the gap timer, the idle
 * timer of an empty table), the turn timer with its time bank and trustee play, and the end of a
 * round in the order of docs/architecture.md §12 "The order of a round's end" (tk_finish, then
 * tk_finish_rest once the settlement is applied), the void, and the start of a round. Internal to
 * the kit: tk_int.h has the contract. Everything runs on the table's desk thread.
 */
#include "tk_int.h"

/* ---- history ----------------------------------------------------------------------------- */

/* The text form of wire cards ("AsKd", jokers "Xb" / "Xr"), into out (2 * n + 1 bytes). */
static void tk_cards_text(const uint8_t *cards, size_t n, char *out)
{
    static const char ranks[] = "??23456789TJQKAX";
    static const char suits[] = "cdhs";
    for (size_t i = 0; i < n; i++) {
        unsigned r = FRAME_CARD_RANK(cards[i]);
        out[2 * i] = r < sizeof ranks - 1 ? ranks[r] : '?';
        out[2 * i + 1] = r == FRAME_RANK_JOKER ? "br??"[FRAME_CARD_SUIT(cards[i])]
                                               : suits[FRAME_CARD_SUIT(cards[i])];
    }
    out[2 * n] = '\0';
}

/* A deal shuffled (rc from deck_deal or deck_deal_keyed): recorded for the history. */
static int tk_deal_done(tk_table_t *t, size_t n, int rc);

int tk_deal_shuffle(tk_table_t *t, uint8_t *cards, size_t n)
{
    if (n > DECK_MAX_CARDS)
        return -EINVAL;
    return tk_deal_done(t, n, deck_deal(&t->deal, cards, n));
}

int tk_deal_shuffle_per_card(tk_table_t *t, uint8_t *cards, size_t n, uint8_t (*code)(uint8_t))
{
    if (n > DECK_MAX_CARDS || code == NULL)
        return -EINVAL;
    int rc = deck_deal(&t->deal, cards, n);
    if (rc == 0)
        deck_deal_per_card(&t->deal, code); /* before the first Deal: nobody saw the other */
    return tk_deal_done(t, n, rc);
}

int tk_deal_shuffle_dup(tk_table_t *t, uint8_t *cards, size_t n, uint32_t seats, uint32_t *first,
                        uint8_t (*code)(uint8_t))
{
    tk_tour_match_t m;
    if (tk_tour_match(t, &m) != 0 || m.seed[0] == '\0')
        return -ENOENT;
    if (n > DECK_MAX_CARDS || code == NULL)
        return -EINVAL;
    /* The key: the round's seed and the deal's number in it (docs/fairness.md "Duplicate
     * deals"). */
    char key[64];
    int len = snprintf(key, sizeof key, "croupier-dup:%s:%" PRIu64, m.seed, m.deal);
    int rc = deck_deal_keyed(&t->deal, cards, n, key, (size_t)len, seats, first);
    /* Per card, so that a player's replay can open his own hand while another table may still
     * be playing the same cards; the nonce is this table's own (docs/fairness.md "Duplicate
     * deals"). Before the first Deal. */
    if (rc == 0)
        deck_deal_per_card(&t->deal, code);
    return tk_deal_done(t, n, rc);
}

static int tk_deal_done(tk_table_t *t, size_t n, int rc)
{
    if (rc != 0) {
        log_emit(LOG_ERROR, "tk_deal_refused", "{s:s,s:s}", "round", t->round_id, "msg",
                 "the deck generator failed: the round is voided (docs/fairness.md)");
        return rc;
    }
    t->dealt = true;
    /* The record is written only after the round (docs/hand-history.md), so the deck and its
     * nonce go in now: nobody sees them before the round ended. */
    if (t->history != NULL) {
        char hex[2 * DECK_MAX_CARDS + 1];
        deck_hex(t->deal.commitment, DECK_COMMIT_LEN, hex);
        json_object_set_new(t->history, "deck_commitment", json_string(hex));
        deck_hex(t->deal.cards, n, hex);
        json_object_set_new(t->history, "deck", json_string(hex));
        deck_hex(t->deal.nonce, DECK_NONCE_LEN, hex);
        json_object_set_new(t->history, "deck_nonce", json_string(hex));
        /* The per-card scheme: the deck as protocol codes, what the leaves hash
         * (docs/hand-history.md "deck_codes"); the leaves follow from them and the nonce. */
        if (t->deal.scheme == DECK_SCHEME_CARDS) {
            json_object_set_new(t->history, "deck_scheme", json_integer(DECK_SCHEME_CARDS));
            deck_hex(t->deal.codes, n, hex);
            json_object_set_new(t->history, "deck_codes", json_string(hex));
        }
    }
    return 0;
}

const uint8_t *tk_deal_commitment(const tk_table_t *t)
{
    return t->dealt ? t->deal.commitment : NULL;
}

int tk_deal_scheme(const tk_table_t *t)
{
    return t->dealt ? t->deal.scheme : 0;
}

void tk_history_card(tk_table_t *t, int seat, uint8_t card)
{
    char text[3];
    tk_cards_text(&card, 1, text);
    if (t->history != NULL)
        money_history_add_card(t->history, seat, text);
}

void tk_history_action(tk_table_t *t, int seat, const char *action, int64_t amount)
{
    if (t->history != NULL)
        money_history_add_action(t->history, seat, action, amount);
}

json_t *tk_history(tk_table_t *t)
{
    return t->history;
}

int tk_table_record(tk_table_t *t, const char *kind, json_t *fields)
{
    int rc = -EINVAL;
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    if (kind == NULL || kind[0] == '\0' || !json_is_object(fields))
        goto out;
    rc = -EALREADY;
    if (t->record_sent)
        goto out;
    rc = -ENOENT;
    if (w == NULL)
        goto out;
    /* Round number 0 of the table's desk: no round has it (tk_start_round counts from 1), so
     * the history script's seen key makes the record once-only, as a round's. */
    money_round_id_t rid = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), 0);
    json_t *h = money_history_new(&rid, t->game);
    rc = -EINVAL;
    if (h == NULL)
        goto out;
    json_object_set_new(h, "record", json_string(kind));
    json_object_set_new(h, "engine", json_string(t->eng->game->engine));
    json_object_set_new(h, "stake", json_integer(t->stake));
    json_object_update_missing(h, fields); /* the kit's fields win */
    t->record_sent = true;
    rc = money_writer_submit_history(w, t->game, h, tk_money_log_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "tk_table_record_refused", "{s:s,s:i}", "record", kind, "errno", -rc);
out:
    json_decref(fields);
    return rc;
}

void tk_game_close(tk_table_t *t)
{
    if (t->game_closed)
        return;
    t->game_closed = true;
    if (t->eng->game->table_close != NULL)
        t->eng->game->table_close(t, t->g);
}

bool tk_last_round(const tk_table_t *t)
{
    return t->closed || rt_intake_stopped(rt_desk_rt(t->desk));
}

void tk_round_show(tk_table_t *t, int seat, const uint8_t *cards, size_t n)
{
    if (seat < 0 || seat >= t->nseats || n > sizeof t->seat[seat].shown)
        return;
    memcpy(t->seat[seat].shown, cards, n);
    t->seat[seat].nshown = n;
}

/* Hands the round's history to the writer (once its settlement answered, tk_settled): one record
 * for every round, completed or voided (docs/hand-history.md). */
/* Completes a round's record h with the round's end: the kit's fields, results, shown cards. */
static void tk_history_complete(tk_table_t *t, json_t *h, const int64_t *delta, int64_t rake,
                                bool voided, Croupier__VoidReason why)
{
    money_round_id_t rid = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), t->seq);
    money_history_set_round(h, &rid);
    json_object_set_new(h, "engine", json_string(t->eng->game->engine));
    json_object_set_new(h, "stake", json_integer(t->stake));
    json_object_set_new(h, "button", json_integer(t->button));
    json_object_set_new(h, "outcome", json_string(voided ? "voided" : "completed"));
    json_t *shown = json_array();
    for (int i = 0; i < t->nseats; i++) {
        if (!t->seat[i].playing)
            continue;
        money_history_add_result(h, i, voided ? 0 : delta[i]);
        if (voided || t->seat[i].nshown == 0)
            continue;
        char text[2 * sizeof t->seat[i].shown + 1];
        tk_cards_text(t->seat[i].shown, t->seat[i].nshown, text);
        json_array_append_new(shown, json_pack("{s:i,s:s}", "seat", i, "cards", text));
    }
    json_object_set_new(h, "shown", shown);
    json_object_set_new(h, "rake", json_integer(voided ? 0 : rake));
    if (!voided && t->nxfer > 0) {
        /* Pairwise settlement: every transfer in order, the house as seat -1. */
        json_t *xs = json_array();
        for (int i = 0; i < t->nxfer; i++) {
            const tk_xfer_t *x = &t->xfer[i];
            json_array_append_new(xs,
                                  json_pack("{s:i,s:i,s:I,s:s}", "from", x->from, "to", x->to,
                                            "amount", (json_int_t)x->amount, "reason", x->reason));
        }
        json_object_set_new(h, "transfers", xs);
    }
    if (voided) {
        const ProtobufCEnumValue *v =
            protobuf_c_enum_descriptor_get_value(&croupier__void_reason__descriptor, (int)why);
        json_object_set_new(h, "void_reason", json_string(v != NULL ? v->name : "VOID_NONE"));
    }
}

json_t *tk_history_record(tk_table_t *t, const int64_t *delta, int64_t rake)
{
    json_t *h = t->history != NULL ? json_deep_copy(t->history) : NULL;
    if (h != NULL) {
        json_object_set_new(h, "game", json_string(t->game));
        tk_history_complete(t, h, delta, rake, false, CROUPIER__VOID_REASON__VOID_NONE);
    }
    return h;
}

static void tk_history_submit(tk_table_t *t, const int64_t *delta, int64_t rake, bool voided,
                              Croupier__VoidReason why)
{
    json_t *h = t->history;
    t->history = NULL;
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    if (h == NULL)
        return;
    if (w == NULL) {
        json_decref(h);
        return;
    }
    tk_history_complete(t, h, delta, rake, voided, why);
    int rc = money_writer_submit_history(w, t->game, h, tk_money_log_cb, NULL);
    if (rc != 0)
        log_emit(LOG_ERROR, "tk_history_refused", "{s:i}", "errno", -rc);
}

/* ---- rounds ------------------------------------------------------------------------------ */

int64_t tk_min_stack(tk_table_t *t)
{
    const tk_game_t *gm = t->eng->game;
    if (gm->money == TK_MONEY_WALLET)
        return 0;
    int64_t least = gm->min_stack != NULL ? gm->min_stack(t, t->g) : 1;
    return least < 1 ? 1 : least;
}

/* Players a round needs: tk_game_t.min_players, 0 meaning every seat. */
static int tk_min_players(const tk_table_t *t)
{
    if (t->room != NULL)
        return t->nseats; /* a room deals once every seat is taken */
    int n = t->eng->game->min_players;
    return n <= 0 || n > t->nseats ? t->nseats : n;
}

static int tk_ready(tk_table_t *t)
{
    int n = 0;
    int64_t least = tk_min_stack(t);
    for (int i = 0; i < t->nseats; i++)
        n += t->seat[i].state == TK_SEATED && !t->seat[i].topping && !t->seat[i].out &&
             t->seat[i].stack >= least;
    return n;
}

void tk_maybe_schedule(tk_table_t *t)
{
    if (t->gap_armed || t->closed || tk_room_ended(t) || rt_desk_in_round(t->desk) ||
        (t->tour == NULL && tk_ready(t) < tk_min_players(t)))
        return; /* a tournament table's players come with the director's deal (tk_tour_ask) */
    if (rt_desk_timer_arm(t->desk, t->eng->set.gap_ms, TK_TIMER_GAP, NULL) == 0)
        t->gap_armed = true;
}

/* Arms the idle timer of an empty table (a new serial: an older timer finds it stale). */
void tk_maybe_idle(tk_table_t *t)
{
    if (t->closed || t->retiring || rt_desk_in_round(t->desk) || tk_free_seats(t) != t->nseats ||
        t->tour != NULL) /* a tournament table goes when the director closes it */
        return;
    t->idle_serial++;
    if (rt_desk_timer_arm(t->desk, t->eng->set.idle_ms, TK_TIMER_IDLE | (t->idle_serial << 8),
                          NULL) == 0)
        t->idle_armed = true;
}

/*
 * The automatic move's delay: --<engine>-trustee-ms (TK_TRUSTEE_MS), so that the players at the
 * table see it -- or TK_TRUSTEE_NOBODY_MS when nobody dealt into the round will act again: every
 * such seat is leaving or a server bot (a client fleet stopping, the last players walking out).
 * A Guandan deal played out by trustee at one move a second would hold those players (and a
 * drain) for minutes; nobody watches it.
 */
int64_t tk_trustee_ms(const tk_table_t *t)
{
    bool someone = false;
    for (int i = 0; i < t->nseats && !someone; i++) {
        const tk_seat_t *s = &t->seat[i];
        someone = s->playing && !s->bot && s->state != TK_LEAVING;
    }
    if (!someone && rt_desk_in_round(t->desk))
        return TK_TRUSTEE_NOBODY_MS;
    return t->eng->set.trustee_ms > 0 ? t->eng->set.trustee_ms : TK_TRUSTEE_MS;
}

void tk_turn_clear(tk_table_t *t)
{
    tk_window_close(t);
    if (t->turn_armed)
        rt_desk_timer_cancel(t->desk, t->turn_timer);
    t->turn_armed = false;
    t->turn_seat = -1;
}

/* (Re)arms the turn timer of the seat to act for allowed_ms from now, under a new serial (an
 * older timer finds itself stale). The caller cancelled the previous one. */
static void tk_turn_arm(tk_table_t *t, int64_t allowed_ms)
{
    t->turn_serial++;
    t->turn_start_ms = clock_mono_ms();
    t->turn_allowed_ms = allowed_ms;
    t->turn_armed = rt_desk_timer_arm(t->desk, allowed_ms, TK_TIMER_TURN | (t->turn_serial << 8),
                                      &t->turn_timer) == 0;
}

/* Pushes turn for the seat to act with time_left_ms. */
static void tk_push_turn(tk_table_t *t, Croupier__Turn *turn, int64_t time_left_ms)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    turn->seat = (uint32_t)t->turn_seat;
    turn->time_left_ms = (uint32_t)(time_left_ms < 0 ? 0 : time_left_ms);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TURN;
    sm.turn = turn;
    tk_push_all(t, &sm);
}

void tk_turn(tk_table_t *t, int seat, Croupier__Turn *turn)
{
    tk_turn_clear(t);
    if (seat < 0 || seat >= t->nseats)
        return;
    tk_seat_t *s = &t->seat[seat];
    t->turn_seat = seat;
    /* An absent tournament player is blinded away (TDA 71A): check, else fold, at once. */
    bool automatic = s->trustee || (s->away && (t->eng->game->trustee_when_away || t->tour));
    tk_turn_arm(t, s->bot      ? t->eng->set.bot_ms
                   : automatic ? tk_trustee_ms(t)
                               : t->eng->set.action_ms + s->bank_ms);
    tk_push_turn(t, turn, t->turn_allowed_ms);
}

void tk_turn_update(tk_table_t *t, int seat, Croupier__Turn *turn)
{
    if (seat != t->turn_seat || !t->turn_armed) {
        tk_turn(t, seat, turn);
        return;
    }
    tk_push_turn(t, turn, t->turn_allowed_ms - (clock_mono_ms() - t->turn_start_ms));
}

/* The seat to act is on trustee now (it is leaving): its automatic move comes after
 * TK_TRUSTEE_MS instead of the rest of its time. */
void tk_turn_hurry(tk_table_t *t)
{
    rt_desk_timer_cancel(t->desk, t->turn_timer);
    tk_turn_arm(t, tk_trustee_ms(t));
}

/* The seat to act is back (a resume, tk_game_t.trustee_when_away) while its turn ran on the
 * automatic move's short timer: the turn gets its full time again from now, and everyone a Turn
 * saying so. */
void tk_turn_restore(tk_table_t *t)
{
    rt_desk_timer_cancel(t->desk, t->turn_timer);
    tk_turn_arm(t, t->eng->set.action_ms + t->seat[t->turn_seat].bank_ms);
    Croupier__Turn turn = CROUPIER__TURN__INIT;
    tk_push_turn(t, &turn, t->turn_allowed_ms);
}

/* The seat to act moved (an action or its timeout): what it used beyond action_ms comes off
 * its time bank. */
void tk_spend_bank(tk_table_t *t, int seat, int64_t used_ms)
{
    int64_t over = used_ms - t->eng->set.action_ms;
    if (over > 0)
        t->seat[seat].bank_ms = over >= t->seat[seat].bank_ms ? 0 : t->seat[seat].bank_ms - over;
}

/*
 * Ends the round (completed with delta/rake, or voided: nothing moves), in the order every
 * engine needs: settlement and history queued, RoundEnd pushed, leavers and busted players
 * cashed out, the table closed when intake stopped, and only then the runtime's round ended.
 */
static void tk_finish_rest(tk_table_t *t, const int64_t *delta, int64_t rake, bool voided,
                           Croupier__VoidReason why);

static void tk_finish(tk_table_t *t, const int64_t *delta, bool house, int64_t house_delta,
                      int64_t rake, bool voided, Croupier__VoidReason why)
{
    gs_t *gs = gs_of_desk(t->desk);
    tk_turn_clear(t);
    money_round_id_t rid = gs_round_id(gs, rt_desk_id(t->desk), t->seq);
    money_round_id_format(&rid, t->round_id, sizeof t->round_id);
    bool settling = false;
    if (!voided) {
        for (int i = 0; i < t->nseats; i++)
            if (t->seat[i].playing && t->eng->game->money == TK_MONEY_STACK)
                t->seat[i].stack += delta[i]; /* play money lives in the wallets only */
        settling = t->tour != NULL ? tk_tour_report(t, delta) /* the director records it */
                                   : tk_settle(t, delta, house, house_delta, rake);
    }
    if (settling) {
        /* The rest waits for the settlement (TK_MSG_SETTLED): the round stays in progress for
         * the runtime (no next round, the drain waits), and no one sees the result before it
         * is applied -- a crash meanwhile leaves the round for the recovery to void. Its hand
         * history, too, says what the settlement's answer decides. */
        t->settling = true;
        memcpy(t->settle_delta, delta, sizeof t->settle_delta);
        t->settle_rake = rake;
        return;
    }
    tk_history_submit(t, delta, rake, voided, why);
    tk_finish_rest(t, delta, rake, voided, why);
}

/* The settlement of the round that ended came back: RoundEnd now, or -- refused -- the round
 * is voided for its players (nothing moved: the stacks go back to the round's start). */
void tk_settled(tk_table_t *t, uint64_t seq, const money_result_t *res)
{
    if (!t->settling || seq != t->seq) {
        log_emit(LOG_ERROR, "tk_settled_stray", "{s:I,s:s,s:i}", "seq", (json_int_t)seq, "id",
                 res->id, "status", res->status);
        return;
    }
    t->settling = false;
    if (res->status == MONEY_OK) {
        tk_history_submit(t, t->settle_delta, t->settle_rake, false,
                          CROUPIER__VOID_REASON__VOID_NONE);
        tk_finish_rest(t, t->settle_delta, t->settle_rake, false, CROUPIER__VOID_REASON__VOID_NONE);
        return;
    }
    log_emit(LOG_ERROR, "tk_settlement_failed", "{s:s,s:i,s:s}", "round", t->round_id, "status",
             res->status, "error", res->error);
    if (t->settle_house)
        tk_house_unsettled(t);
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].playing && t->eng->game->money == TK_MONEY_STACK)
            t->seat[i].stack -= t->settle_delta[i];
    Croupier__VoidReason why = res->status == MONEY_ERR_STALE_EPOCH
                                   ? CROUPIER__VOID_REASON__VOID_LEASE_LOST
                                   : CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR;
    tk_history_submit(t, NULL, 0, true, why);
    tk_finish_rest(t, NULL, 0, true, why);
}

/* The second half of tk_finish: RoundEnd, leavers, busted players, the table's close, the
 * runtime's round end. */
static void tk_finish_rest(tk_table_t *t, const int64_t *delta, int64_t rake, bool voided,
                           Croupier__VoidReason why)
{
    gs_t *gs = gs_of_desk(t->desk);
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__RoundEnd re = CROUPIER__ROUND_END__INIT;
    Croupier__SeatDelta deltas[TK_MAX_SEATS];
    Croupier__SeatDelta *dptr[TK_MAX_SEATS];
    re.round_id = t->round_id;
    re.outcome = voided ? CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED
                        : CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED;
    if (voided) {
        re.has_void_reason = true;
        re.void_reason = why;
        re.detail = why == CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR
                        ? "the round could not go on; every chip committed was returned"
                    : why == CROUPIER__VOID_REASON__VOID_LEASE_LOST
                        ? "the server lost its lease before the round's result could be "
                          "recorded; no chip moved"
                    : why == CROUPIER__VOID_REASON__VOID_STORE_UNREACHABLE
                        ? "the server lost its connection to Redis and stopped the round; no "
                          "chip moved"
                        : "the server had to stop before the round could finish; every chip "
                          "committed was returned";
    }
    size_t nd = 0;
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (!s->playing)
            continue;
        Croupier__SeatDelta d = CROUPIER__SEAT_DELTA__INIT;
        d.seat = (uint32_t)i;
        d.player_id = s->player;
        d.delta = voided ? 0 : delta[i];
        if (!voided && s->nshown > 0) {
            d.has_shown_cards = true;
            d.shown_cards.data = s->shown;
            d.shown_cards.len = s->nshown;
        }
        deltas[nd] = d;
        dptr[nd] = &deltas[nd];
        nd++;
    }
    re.n_deltas = nd;
    re.deltas = dptr;
    Croupier__Transfer xs[TK_MAX_TRANSFERS], *xptr[TK_MAX_TRANSFERS];
    for (int i = 0; !voided && i < t->nxfer; i++) {
        const tk_xfer_t *x = &t->xfer[i];
        Croupier__Transfer m = CROUPIER__TRANSFER__INIT;
        m.has_from_seat = x->from != TK_HOUSE;
        m.from_seat = x->from != TK_HOUSE ? (uint32_t)x->from : 0;
        m.has_to_seat = x->to != TK_HOUSE;
        m.to_seat = x->to != TK_HOUSE ? (uint32_t)x->to : 0;
        m.amount = x->amount;
        m.reason = (char *)x->reason;
        xs[i] = m;
        xptr[i] = &xs[i];
        re.n_transfers = (size_t)i + 1;
    }
    re.transfers = xptr;
    re.has_rake = true;
    re.rake = voided ? 0 : rake;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_ROUND_END;
    sm.round_end = &re;
    /* A round whose settlement was on its way when the server fenced itself: its players were
     * told the table closed (the round is decided by Redis) and have moved on. */
    if (!(t->fenced && t->close_told))
        tk_push_all(t, &sm);
    for (int i = 0; i < t->nseats; i++) {
        t->seat[i].playing = false;
        t->seat[i].nshown = 0;
    }
    t->nxfer = 0;

    bool drain_void = voided && why != CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR;
    if (t->room != NULL && !t->room->ended) {
        if (!voided)
            tk_room_dealt(t, delta); /* the scoreboard; after the last deal the room ends */
        else if (drain_void)
            tk_room_end(t, "the server had to stop during a deal (voided: no chip moved): the "
                           "room ends with the deals played");
    }
    if (t->tour != NULL) {
        tk_tour_after_round(t, voided); /* the director's leavers; a drain lets the table go */
        if (drain_void)
            tk_tour_stop_now(t, "the server stopped during the hand (voided: it is dealt again)");
    } else if (tk_room_ended(t)) {
        /* everyone was cashed out and told */
    } else if (drain_void) {
        tk_close(t); /* voided by the drain bound or the shutdown */
    } else if (rt_intake_stopped(rt_desk_rt(t->desk))) {
        tk_move_or_close(t); /* drained: the table moves as a whole, or closes */
    } else {
        int64_t least = tk_min_stack(t);
        for (int i = 0; i < t->nseats; i++) {
            tk_seat_t *s = &t->seat[i];
            if (s->state == TK_LEAVING) {
                tk_cash_out(t, i);
                tk_unseat(t, i);
            } else if (s->state == TK_SEATED && s->stack < least) {
                if (t->eng->game->topup)
                    tk_topup(t, i);
                else
                    tk_bust(t, i);
            }
        }
    }
    rt_outcome_t outcome = voided ? RT_ROUND_VOIDED : RT_ROUND_COMPLETED;
    rt_desk_end_round(t->desk, outcome);
    gs_count_round(gs, t->game, outcome);
    tk_bots_stand(t);
    tk_maybe_schedule(t);
    tk_maybe_fill(t);
    tk_maybe_idle(t);
}

/* Numbers that break a rule (a bug of the game): logged, the round voided. */
static int tk_round_refused(tk_table_t *t, int64_t sum, int64_t rake)
{
    log_emit(LOG_ERROR, "tk_round_end_refused", "{s:s,s:I,s:I,s:i}", "round", t->round_id, "sum",
             (json_int_t)sum, "rake", (json_int_t)rake, "transfers", t->nxfer);
    t->nxfer = 0;
    /* The game may be inside its own rules code (an event callback): it forgets the round
     * before the next one starts, not now. */
    t->forget_round = true;
    tk_finish(t, NULL, false, 0, 0, true, CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR);
    return -EINVAL;
}

static int tk_round_close(tk_table_t *t, const int64_t *delta, bool house, int64_t house_delta,
                          int64_t rake)
{
    if (!rt_desk_in_round(t->desk))
        return -EINVAL;
    bool wallets = t->eng->game->money == TK_MONEY_WALLET;
    int64_t sum = house ? house_delta : 0;
    bool ok = rake >= 0 && (!house || !wallets);
    for (int i = 0; i < t->nseats; i++) {
        if (!t->seat[i].playing || (wallets && t->seat[i].bot)) {
            ok = ok && delta[i] == 0; /* out of the round, or a play-money bot: nothing moves */
            continue;
        }
        sum += delta[i];
        ok = ok && (wallets || t->seat[i].stack + delta[i] >= 0);
    }
    if (!ok || sum != -rake)
        return tk_round_refused(t, sum, rake);
    tk_finish(t, delta, house, house_delta, rake, false, CROUPIER__VOID_REASON__VOID_NONE);
    return 0;
}

int tk_round_end(tk_table_t *t, const int64_t delta[TK_MAX_SEATS], int64_t rake)
{
    return tk_round_close(t, delta, false, 0, rake);
}

/* Whether reason is 1..TK_REASON_MAX characters of [a-z0-9_]. */
static bool tk_reason_ok(const char *r)
{
    size_t n = r != NULL ? strlen(r) : 0;
    if (n == 0 || n > TK_REASON_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= '0' && r[i] <= '9') || r[i] == '_'))
            return false;
    return true;
}

/* Records one transfer of the round and applies it to delta and rake; false when it breaks a
 * rule (tk.h "tk_round_end_transfers"). */
static bool tk_xfer_add(tk_table_t *t, int from, int to, int64_t amount, const char *reason,
                        int64_t *delta, int64_t *rake)
{
    bool seat_to = to >= 0 && to < t->nseats && t->seat[to].playing;
    if (t->nxfer >= TK_MAX_TRANSFERS || from < 0 || from >= t->nseats || !t->seat[from].playing ||
        (to != TK_HOUSE && !seat_to) || from == to || amount <= 0 || amount > MONEY_MAX_AMOUNT ||
        !tk_reason_ok(reason))
        return false;
    tk_xfer_t *x = &t->xfer[t->nxfer++];
    x->from = from;
    x->to = to;
    x->amount = amount;
    snprintf(x->reason, sizeof x->reason, "%s", reason);
    delta[from] -= amount;
    if (to == TK_HOUSE)
        *rake += amount;
    else
        delta[to] += amount;
    return true;
}

int tk_round_end_transfers(tk_table_t *t, const tk_transfer_t *tr, int n)
{
    int64_t delta[TK_MAX_SEATS] = {0}, rake = 0;
    if (!rt_desk_in_round(t->desk))
        return -EINVAL;
    t->nxfer = 0;
    bool ok = n >= 0 && n <= TK_MAX_TRANSFERS && (n == 0 || tr != NULL);
    for (int i = 0; ok && i < n; i++)
        ok = tk_xfer_add(t, tr[i].from, tr[i].to, tr[i].amount, tr[i].reason, delta, &rake);
    /* The winners' rake (tk_game_t.rake_winners): each winner's own, after the game's. */
    for (int s = 0; ok && t->eng->game->rake_winners && s < t->nseats; s++) {
        int64_t r = tk_rake_win(t, delta[s]);
        ok = r == 0 || tk_xfer_add(t, s, TK_HOUSE, r, "rake", delta, &rake);
    }
    if (!ok)
        return tk_round_refused(t, 0, rake);
    return tk_round_close(t, delta, false, 0, rake);
}

int tk_round_end_house(tk_table_t *t, const int64_t delta[TK_MAX_SEATS], int64_t house_delta,
                       int64_t rake)
{
    return tk_round_close(t, delta, true, house_delta, rake);
}

/* Voids the round in progress (drain bound, shutdown): the game forgets it, nothing moves. A
 * round that ended and waits for its settlement is not voided: it ends once that is applied. */
void tk_void(tk_table_t *t, Croupier__VoidReason why)
{
    if (!rt_desk_in_round(t->desk) || t->settling)
        return;
    t->eng->game->round_void(t, t->g);
    tk_finish(t, NULL, false, 0, 0, true, why);
}

static int tk_next_playing(const tk_table_t *t, int from)
{
    for (int k = 1; k <= t->nseats; k++) {
        int i = (from + k) % t->nseats;
        if (t->seat[i].playing)
            return i;
    }
    return -1;
}

/*
 * Records the round that starts as held (money.h "Held chips"): the desk's r: record names the
 * round and its seats, so that if this server dies before the round settles, the recovery
 * voids it in the hand history (VOID_SERVER_CRASHED). It travels in the writer's FIFO before
 * anything of the round.
 */
static void tk_mark_round(tk_table_t *t)
{
    money_writer_t *w = gs_money(gs_of_desk(t->desk));
    if (w == NULL || t->history == NULL || t->tour != NULL) /* no chips held: the director's */
        return;
    json_t *h = json_deep_copy(t->history);
    json_object_set_new(h, "engine", json_string(t->eng->game->engine));
    json_object_set_new(h, "stake", json_integer(t->stake));
    char *json = json_dumps(h, JSON_COMPACT);
    json_decref(h);
    char field[32];
    snprintf(field, sizeof field, "r:%" PRIx64, rt_desk_id(t->desk));
    int rc = json != NULL ? money_writer_submit_mark(w, t->slot, t->epoch, field, json,
                                                     tk_money_log_cb, NULL)
                          : -ENOMEM;
    free(json);
    if (rc != 0)
        log_emit(LOG_ERROR, "tk_round_mark_refused", "{s:s,s:i}", "round", t->round_id, "errno",
                 -rc);
}

void tk_start_round(tk_table_t *t)
{
    if (t->closed || tk_room_ended(t) || tk_ready(t) < tk_min_players(t))
        return;
    if (!gs_can_start_round(gs_of_desk(t->desk))) {
        if (!rt_intake_stopped(rt_desk_rt(t->desk)))
            tk_maybe_schedule(t); /* settlement queue above its watermark: later */
        return;
    }
    if (rt_desk_begin_round(t->desk) != 0)
        return; /* intake stopped: the table closes */
    if (t->forget_round) {
        t->forget_round = false;
        t->eng->game->round_void(t, t->g);
    }
    t->seq++;
    int64_t least = tk_min_stack(t);
    money_round_id_t rid = gs_round_id(gs_of_desk(t->desk), rt_desk_id(t->desk), t->seq);
    money_round_id_format(&rid, t->round_id, sizeof t->round_id);
    json_decref(t->history);
    t->history = money_history_new(&rid, t->game);
    if (t->tour != NULL)
        tk_tour_history(t); /* the tournament, table, hand and blinds (docs/hand-history.md) */
    t->dealt = false;       /* the round's deal and commitment come with tk_deal_shuffle() */
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        s->playing = s->state == TK_SEATED && !s->topping && !s->out && s->stack >= least;
        s->nshown = 0;
        if (s->playing) {
            char player[24];
            tk_player_name(s->player, player, sizeof player);
            money_history_add_seat(t->history, i, player, s->bot, s->stack);
        }
    }
    t->nxfer = 0;
    t->button = tk_next_playing(t, t->button < 0 ? t->nseats - 1 : t->button);
    t->banker = -1; /* the game chooses this round's (tk_banker_set) */
    if (t->room != NULL && t->room->rec.state == CROUPIER__ROOM_STATE__ROOM_WAITING)
        tk_room_started(t);
    tk_mark_round(t);
    int rc = t->eng->game->round_start(t, t->g);
    if (rc != 0) {
        log_emit(LOG_ERROR, "tk_round_start_failed", "{s:s,s:i}", "round", t->round_id, "errno",
                 -rc);
        if (t->tour != NULL)
            tk_tour_start_failed(t); /* its next deal waits, longer each time */
        tk_void(t, CROUPIER__VOID_REASON__VOID_INTERNAL_ERROR);
    }
}
