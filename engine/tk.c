/*
 * tk.c -- the table kit's core: a table as its game and the other kit files see it. The contract
 * to games is tk.h; what the kit's files share, and which file owns which state, is tk_int.h.
 *
 * Here: the helpers every file uses (refusal counters, player and wallet names), the pushes that
 * carry the table's event_seq (tk_push_*), the accessors of tk.h, the seats (the desk's human
 * count, the free seats the lobby is told, seating and unseating, the server bots standing up,
 * Joined and Snapshot) and the table's close (docs/architecture.md §12 "Drain and void": every
 * seat cashed out, the lobby told, TableClosing + DeskClosing sent once). Everything runs on the
 * table's desk thread.
 */
#include "tk_int.h"

Croupier__Snapshot *tk_snapshot_msg(tk_table_t *t)
{
    return t->snap_msg;
}

static const char *tk_code_name(Croupier__ErrorCode code)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&croupier__error_code__descriptor, (int)code);
    return v != NULL ? v->name : "UNKNOWN";
}

void tk_count_refusal(tk_engine_t *eng, Croupier__ErrorCode code)
{
    char labels[160];
    snprintf(labels, sizeof labels, "%s,code=\"%s\"", eng->labels, tk_code_name(code));
    metrics_add(metrics_counter(gs_metrics(eng->gs), "tk_refusals_total", labels,
                                "Requests a kit table refused, by code"),
                1);
}

void tk_player_name(uint64_t player, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu64, player);
}

/* The wallet a seat's chips come from and go back to: the player's, or the house's for a bot. */
void tk_owner_wallet(const tk_engine_t *eng, const tk_seat_t *s, char *buf, size_t len)
{
    if (s->bot)
        snprintf(buf, len, "%s", eng->house);
    else
        tk_player_name(s->player, buf, len);
}

/* ---- pushes ------------------------------------------------------------------------------ */

bool tk_seat_told(const tk_seat_t *s)
{
    return s->state == TK_SEATED || s->state == TK_LEAVING || s->state == TK_CLOSED;
}

void tk_push_seat(tk_table_t *t, int seat, Croupier__ServerMessage *m)
{
    m->has_event_seq = true;
    m->event_seq = ++t->event_seq;
    if (seat >= 0 && seat < t->nseats && tk_seat_told(&t->seat[seat]) && !t->seat[seat].bot)
        gs_push(gs_of_desk(t->desk), t->seat[seat].player, m);
}

void tk_push_all(tk_table_t *t, Croupier__ServerMessage *m)
{
    m->has_event_seq = true;
    m->event_seq = ++t->event_seq;
    uint64_t to[TK_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->nseats; i++)
        if (tk_seat_told(&t->seat[i]) && !t->seat[i].bot)
            to[n++] = t->seat[i].player;
    gs_push_many(gs_of_desk(t->desk), to, n, m); /* encoded once, one frame per gateway */
    tk_spect_push(t, m); /* every seat sees it: public (docs/spectators.md) */
}

/* Encodes a game message into a fresh buffer (caller frees); NULL when it breaks a rule (a bug
 * of the game, logged). */
static uint8_t *tk_pack(const ProtobufCMessage *msg, size_t *len)
{
    frame_error_t err;
    ProtobufCBinaryData body = {0};
    if (frame_pack_game_body(msg, NULL, NULL, &body, &err) != 0) {
        log_emit(LOG_ERROR, "tk_game_message_refused", "{s:s,s:s}", "message",
                 msg->descriptor->name, "detail", err.detail);
        return NULL;
    }
    *len = body.len;
    return body.data;
}

int tk_push_event(tk_table_t *t, int seat, const ProtobufCMessage *ev)
{
    size_t len;
    uint8_t *body = tk_pack(ev, &len);
    if (body == NULL)
        return -EINVAL;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__GameEvent ge = CROUPIER__GAME_EVENT__INIT;
    ge.body.data = body;
    ge.body.len = len;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT;
    sm.game_event = &ge;
    if (seat < 0)
        tk_push_all(t, &sm);
    else
        tk_push_seat(t, seat, &sm);
    free(body);
    return 0;
}

int tk_push_play(tk_table_t *t, int seat, const ProtobufCMessage *a, bool timed_out)
{
    size_t len;
    uint8_t *body = tk_pack(a, &len);
    if (body == NULL)
        return -EINVAL;
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Play play = CROUPIER__PLAY__INIT;
    Croupier__Action act = CROUPIER__ACTION__INIT;
    Croupier__GameAction ga = CROUPIER__GAME_ACTION__INIT;
    ga.body.data = body;
    ga.body.len = len;
    act.kind_case = CROUPIER__ACTION__KIND_GAME;
    act.game = &ga;
    play.seat = (uint32_t)seat;
    play.action = &act;
    if (timed_out) {
        play.has_timed_out = true;
        play.timed_out = true;
    }
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_PLAY;
    sm.play = &play;
    tk_push_all(t, &sm);
    free(body);
    return 0;
}

void tk_push_deal(tk_table_t *t, int seat, const uint8_t *cards, size_t n)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Deal d = CROUPIER__DEAL__INIT;
    d.has_seat = seat >= 0;
    d.seat = seat >= 0 ? (uint32_t)seat : 0;
    d.round_id = t->round_id;
    /* Every Deal of a round dealt from the kit's deck carries its commitment (docs/fairness.md):
     * the first one reaches a player before any card of theirs is played. */
    d.has_deck_commitment = t->dealt;
    d.deck_commitment.data = t->dealt ? t->deal.commitment : NULL;
    d.deck_commitment.len = t->dealt ? DECK_COMMIT_LEN : 0;
    d.has_deck_scheme = t->dealt && t->deal.scheme == DECK_SCHEME_CARDS;
    d.deck_scheme = d.has_deck_scheme ? DECK_SCHEME_CARDS : 0;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_DEAL;
    sm.deal = &d;
    sm.has_event_seq = true;
    sm.event_seq = ++t->event_seq;
    /* The seats that see the cards get one message, the others another (their count): each
     * encoded once and pushed to its seats together (gs_push_many). */
    gs_t *gs = gs_of_desk(t->desk);
    uint64_t to[2][TK_MAX_SEATS];
    size_t nto[2] = {0, 0};
    for (int i = 0; i < t->nseats; i++) {
        if (!tk_seat_told(&t->seat[i]) || t->seat[i].bot)
            continue;
        bool own = cards != NULL && (i == seat || seat < 0);
        to[own][nto[own]++] = t->seat[i].player;
    }
    for (int own = 1; own >= 0; own--) {
        d.has_cards = own && n > 0;
        d.cards.data = own ? (uint8_t *)cards : NULL;
        d.cards.len = own ? n : 0;
        d.has_count = !own;
        d.count = (uint32_t)n;
        gs_push_many(gs, to[own], nto[own], &sm);
    }
    /* The spectators' copy: what a seat that is not the one dealt to sees -- the cards of a deal
     * to the table (seat < 0: a board, every seat sees them), else their count
     * (docs/spectators.md). */
    bool open = cards != NULL && seat < 0;
    d.has_cards = open && n > 0;
    d.cards.data = open ? (uint8_t *)cards : NULL;
    d.cards.len = open ? n : 0;
    d.has_count = !open;
    d.count = (uint32_t)n;
    tk_spect_push(t, &sm);
}

/* ---- accessors --------------------------------------------------------------------------- */

int tk_seats(const tk_table_t *t)
{
    return t->nseats;
}

const char *tk_game_name(const tk_table_t *t)
{
    return t->game;
}

int64_t tk_stake(const tk_table_t *t)
{
    return t->stake;
}

const tk_settings_t *tk_settings(const tk_table_t *t)
{
    return &t->eng->set;
}

uint64_t tk_seat_player(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats && tk_seat_told(&t->seat[seat]) ? t->seat[seat].player : 0;
}

bool tk_seat_playing(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats && t->seat[seat].playing;
}

int64_t tk_seat_stack(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats ? t->seat[seat].stack : 0;
}

int tk_timer(tk_table_t *t, int64_t delay_ms, uint64_t cookie, rt_timer_id_t *out)
{
    return rt_desk_timer_arm(t->desk, delay_ms, TK_TIMER_GAME | (cookie << 8), out);
}

int tk_timer_cancel(tk_table_t *t, rt_timer_id_t id)
{
    return rt_desk_timer_cancel(t->desk, id);
}

void tk_seat_sit_out(tk_table_t *t, int seat, bool out)
{
    if (seat < 0 || seat >= t->nseats || t->seat[seat].out == out)
        return;
    t->seat[seat].out = out;
    if (!out)
        tk_maybe_schedule(t);
}

bool tk_seat_sitting_out(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats && t->seat[seat].out;
}

const char *tk_engine_options(const tk_table_t *t)
{
    if (t->options[0] != '\0')
        return t->options;
    return gs_engine_options(t->eng->gs);
}

void *tk_game_state(tk_table_t *t)
{
    return t->g;
}

uint64_t tk_desk_id(tk_table_t *t)
{
    return rt_desk_id(t->desk);
}

bool tk_seat_bot(const tk_table_t *t, int seat)
{
    return seat >= 0 && seat < t->nseats && t->seat[seat].bot;
}

int tk_button(const tk_table_t *t)
{
    return t->button;
}

uint64_t tk_round_seq(const tk_table_t *t)
{
    return t->seq;
}

const char *tk_round_id(tk_table_t *t)
{
    return t->round_id;
}

int64_t tk_rake(const tk_table_t *t, int64_t pot)
{
    if (t->tour != NULL)
        return 0; /* tournament chips: the house took its fee at the registration */
    const tk_settings_t *s = &t->eng->set;
    int64_t rake = pot / 10000 * s->rake_bp + pot % 10000 * s->rake_bp / 10000;
    if (s->rake_cap > 0 && rake > s->rake_cap)
        rake = s->rake_cap;
    return rake < 0 ? 0 : rake;
}

int64_t tk_rake_win(const tk_table_t *t, int64_t win)
{
    /* The same rate and cap as a pot's, on one winner's win (tk_game_t.rake_winners). */
    return win > 0 ? tk_rake(t, win) : 0;
}

/* ---- seats ------------------------------------------------------------------------------- */

unsigned tk_humans(const tk_table_t *t)
{
    unsigned humans = 0;
    for (int i = 0; i < t->nseats; i++)
        humans += t->seat[i].state != TK_EMPTY && !t->seat[i].bot;
    return humans;
}

void tk_sync(tk_table_t *t)
{
    unsigned humans = tk_humans(t);
    unsigned before = rt_desk_humans(t->desk);
    rt_desk_set_humans(t->desk, humans);
    metrics_add(t->eng->m_seated, (double)humans - (double)before);
}

int tk_free_seats(const tk_table_t *t)
{
    int n = 0;
    for (int i = 0; i < t->nseats; i++)
        n += t->seat[i].state == TK_EMPTY;
    return n;
}

/* The free seats and the joins received, as TK_MSG_SEATS / TK_MSG_IDLE carry them. */
uint64_t tk_seats_word(const tk_table_t *t)
{
    return (uint64_t)t->joins_seen << 32 | (uint32_t)tk_free_seats(t);
}

/* Tells the lobby how many seats are free now (it re-advertises the table). */
void tk_tell_lobby(tk_table_t *t)
{
    if (t->closed)
        return;
    rt_msg_t m = {.type = TK_MSG_SEATS, .arg = rt_desk_id(t->desk), .arg2 = tk_seats_word(t)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
}

/* Empties seat i (its chips must be cashed out already). */
void tk_unseat(tk_table_t *t, int i)
{
    tk_seat_t *s = &t->seat[i];
    bool human = !s->bot;
    if (human)
        gs_unseat(gs_of_desk(t->desk), s->player, rt_desk_id(t->desk));
    if (t->eng->game->seat_changed != NULL)
        t->eng->game->seat_changed(t, t->g, i, false);
    memset(s, 0, offsetof(tk_seat_t, ops)); /* op ids stay unique for the next occupant */
    tk_sync(t);
    if (human)
        tk_bots_stand(t);
    tk_tell_lobby(t);
    tk_maybe_idle(t);
}

/* The last human left (and no round runs): the bots stand up too, cashed out to the house. A
 * table opened with bots keeps them. */
void tk_bots_stand(tk_table_t *t)
{
    if (t->bot_table || rt_desk_in_round(t->desk) || tk_humans(t) > 0)
        return;
    for (int i = 0; i < t->nseats; i++) {
        /* A bot still topping up stands when its top-up is applied (tk_topup_done). */
        if (t->seat[i].bot && t->seat[i].state == TK_SEATED && !t->seat[i].topping) {
            tk_cash_out(t, i);
            tk_unseat(t, i);
        }
    }
}

static void tk_fill_seats(tk_table_t *t, Croupier__SeatInfo *infos, Croupier__SeatInfo **ptrs,
                          size_t *n)
{
    *n = 0;
    for (int i = 0; i < t->nseats; i++) {
        const tk_seat_t *s = &t->seat[i];
        if (!tk_seat_told(s))
            continue;
        Croupier__SeatInfo si = CROUPIER__SEAT_INFO__INIT;
        si.seat = (uint32_t)i;
        si.has_player_id = true;
        si.player_id = s->player;
        si.has_chips = true;
        if (!tk_tour_seat_score(t, i, &si.chips))
            si.chips = s->stack; /* a match table's seat shows the player's score */
        si.has_bot = true;
        si.bot = s->bot;
        si.has_connected = true;
        si.connected = !s->away;
        infos[*n] = si;
        ptrs[*n] = &infos[*n];
        (*n)++;
    }
}

void tk_reply_joined(tk_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Joined j = CROUPIER__JOINED__INIT;
    Croupier__SeatInfo infos[TK_MAX_SEATS];
    Croupier__SeatInfo *ptrs[TK_MAX_SEATS];
    j.desk_id = rt_desk_id(t->desk);
    j.seat = (uint32_t)seat;
    j.engine = t->eng->game->proto_engine;
    j.game = t->game;
    j.stake = t->stake;
    tk_fill_seats(t, infos, ptrs, &j.n_seats);
    j.seats = ptrs;
    room_info_buf_t rib;
    if (t->room != NULL) {
        room_info_fill(&t->room->rec, &rib);
        j.room = &rib.info;
    }
    if (t->eng->game->joined != NULL)
        t->eng->game->joined(t, t->g, seat, &j);
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_JOINED;
    sm.joined = &j;
    gs_reply(gs_of_desk(t->desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

int tk_snapshot_state(tk_table_t *t, const ProtobufCMessage *state)
{
    size_t len;
    uint8_t *body = tk_pack(state, &len);
    if (body == NULL)
        return -EINVAL;
    free(t->snap);
    t->snap = body;
    t->snap_len = len;
    t->snap_set = true;
    return 0;
}

/* The full state for a (re)connecting player: the kit's header and the game's state. */
void tk_reply_snapshot(tk_table_t *t, gs_request_t *req, int seat)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__Snapshot s = CROUPIER__SNAPSHOT__INIT;
    Croupier__GameState gst = CROUPIER__GAME_STATE__INIT;
    Croupier__SeatInfo infos[TK_MAX_SEATS];
    Croupier__SeatInfo *ptrs[TK_MAX_SEATS];
    uint32_t window_seats[TK_MAX_SEATS];
    s.desk_id = rt_desk_id(t->desk);
    /* A spectator (seat -1, tk_spect.c) has no seat: your_seat is the seat count. */
    s.your_seat = seat >= 0 ? (uint32_t)seat : (uint32_t)t->nseats;
    s.has_spectator = seat < 0;
    s.spectator = seat < 0;
    s.engine = t->eng->game->proto_engine;
    s.game = t->game;
    s.stake = t->stake;
    tk_fill_seats(t, infos, ptrs, &s.n_seats);
    s.seats = ptrs;
    room_info_buf_t rib;
    if (t->room != NULL) {
        room_info_fill(&t->room->rec, &rib);
        s.room = &rib.info;
    }
    s.has_event_seq = true;
    s.event_seq = t->event_seq;
    if (rt_desk_in_round(t->desk)) {
        s.round_id = t->round_id;
        s.has_deck_commitment = t->dealt; /* as on the round's Deals (docs/fairness.md) */
        s.deck_commitment.data = t->dealt ? t->deal.commitment : NULL;
        s.deck_commitment.len = t->dealt ? DECK_COMMIT_LEN : 0;
        s.has_deck_scheme = t->dealt && t->deal.scheme == DECK_SCHEME_CARDS;
        s.deck_scheme = s.has_deck_scheme ? DECK_SCHEME_CARDS : 0;
        if (t->turn_armed) {
            s.has_turn_seat = true;
            s.turn_seat = (uint32_t)t->turn_seat;
            int64_t left = t->turn_allowed_ms - (clock_mono_ms() - t->turn_start_ms);
            s.has_time_left_ms = true;
            s.time_left_ms = (uint32_t)(left < 0 ? 0 : left);
        }
        tk_window_snapshot(t, &s, window_seats);
        s.has_banker_seat = t->banker >= 0;
        s.banker_seat = t->banker >= 0 ? (uint32_t)t->banker : 0;
    }
    t->snap_set = false;
    t->snap_msg = &s;
    t->eng->game->snapshot(t, t->g, seat);
    t->snap_msg = NULL;
    if (t->snap_set) {
        gst.body.data = t->snap;
        gst.body.len = t->snap_len;
        s.state_case = CROUPIER__SNAPSHOT__STATE_GAME_STATE;
        s.game_state = &gst;
    }
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT;
    sm.snapshot = &s;
    gs_reply(gs_of_desk(t->desk), req, CROUPIER__ERROR_CODE__OK, NULL, &sm);
}

/* Seat i is taken for good (buy-in applied, or a play-money seat). */
void tk_seated(tk_table_t *t, int i)
{
    tk_seat_t *s = &t->seat[i];
    s->state = TK_SEATED;
    if (t->eng->game->seat_changed != NULL)
        t->eng->game->seat_changed(t, t->g, i, true);
    tk_sync(t);
    tk_maybe_schedule(t);
    if (!s->bot)
        tk_maybe_fill(t);
}

/* ---- closing ----------------------------------------------------------------------------- */

/* Tells the players still seated that the table closes and the gateways to move them. Once,
 * after the closing cash-outs are applied (or TK_CLOSE_NOTICE_MS passed). */
void tk_tell_closing(tk_table_t *t)
{
    if (t->close_told)
        return;
    t->close_told = true;
    tk_spect_end(t, CROUPIER__ERROR_CODE__NO_SUCH_TABLE, "the table closed");
    uint64_t players[TK_MAX_SEATS];
    size_t n = 0;
    for (int i = 0; i < t->nseats; i++)
        if (t->seat[i].state == TK_CLOSED)
            players[n++] = t->seat[i].player;
    if (t->fenced)
        gs_close_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n,
                            CROUPIER__CLOSING_REASON__CLOSING_STORE_UNREACHABLE,
                            "the server lost its connection to Redis and stopped its tables; "
                            "your chips go back to your wallet");
    else
        gs_close_desk_seats(gs_of_desk(t->desk), rt_desk_id(t->desk), players, n,
                            CROUPIER__CLOSING_REASON__CLOSING_DRAINING, "server draining");
}

/*
 * The table closes (intake stopped, after the last round or the void): every seated player is
 * cashed out and the lobby forgets the table. Players stay seated (stack 0) until they leave, so
 * a resume or a leave still reaches this desk. Idempotent.
 */
void tk_close(tk_table_t *t)
{
    if (t->tour != NULL) {
        tk_tour_stop_now(t, "the server stopped your table: it goes on at another server");
        return;
    }
    if (t->closed)
        return;
    tk_game_close(t); /* the game's state stays here: e.g. blackjack reveals its shoe */
    /* A room that cannot go on here ends with the deals played (no one is re-seated). */
    tk_room_end(t, t->room != NULL && t->room->rec.state == CROUPIER__ROOM_STATE__ROOM_WAITING
                       ? "the server stopped before the room filled"
                       : "the server stopped and no other server could take the room: it ends "
                         "with the deals played");
    t->closed = true;
    t->gap_armed = false; /* its expiry finds the table closed */
    for (int i = 0; i < t->nseats; i++) {
        tk_seat_t *s = &t->seat[i];
        if (s->state != TK_SEATED && s->state != TK_LEAVING)
            continue;
        s->state = TK_CLOSED;
        tk_cash_out(t, i);
    }
    rt_msg_t m = {.type = TK_MSG_CLOSED, .arg = rt_desk_id(t->desk)};
    rt_post(rt_desk_rt(t->desk), t->eng->lobby, &m);
    /* Fenced, the cash-outs wait for Redis: the players are told at once. */
    if (t->pending_cashouts == 0 || t->fenced ||
        rt_desk_timer_arm(t->desk, TK_CLOSE_NOTICE_MS, TK_TIMER_NOTICE, NULL) != 0)
        tk_tell_closing(t);
}

/* A player who can no longer cover a round leaves: TableClosing{BUSTED}, cash-out, unseat. */
void tk_bust(tk_table_t *t, int i)
{
    if (t->room != NULL && t->room->rec.state == CROUPIER__ROOM_STATE__ROOM_PLAYING) {
        tk_room_end(t, "a player could not cover another deal: the room ends with the deals "
                       "played");
        return;
    }
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableClosing tc = CROUPIER__TABLE_CLOSING__INIT;
    tc.reason = CROUPIER__CLOSING_REASON__CLOSING_BUSTED;
    tc.detail = "not enough chips left at this table: you have left it; join again to buy in";
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
    sm.table_closing = &tc;
    tk_push_seat(t, i, &sm);
    tk_cash_out(t, i);
    tk_unseat(t, i);
}
