/*
 * bot_fleet.c -- the bot fleet's life and wire (bot_fleet.h is the contract, bot_fleet_int.h
 * what its files share): the gateway list, the small helpers (clock, jitter, timers), the
 * requests (one in flight per bot, resent byte for byte; Login, Resume, room, Join, Leave,
 * Action, Ping), the connection (read, drop, reconnect, connect), the timers (request
 * deadlines, the bot's own timer, keepalive and the gateway's liveness) and the fleet (create,
 * start, stop, destroy).
 *
 * docs/bots.md "What a bot does" and bot_fleet.h say what a bot does on each lifecycle signal;
 * docs/protocol.md "Keepalive" the Pings. What a bot does with a seat is bot_fleet_seat.c,
 * what it does with the gateway's answers and pushes, bot_fleet_msg.c.
 */
#include "bot_fleet_int.h"

#define FLEET_MAX_GATEWAYS 64

static void bot_connect(bot_t *b);

/* ---- gateways ---------------------------------------------------------------------------- */

/*
 * Reads the current gateway list into out (at most FLEET_MAX_GATEWAYS). "@FILE" is read now,
 * so a harness can change it between reconnects. Returns how many (0 = none usable).
 */
static unsigned fleet_gateways(const bot_fleet_t *f, config_addr_t *out)
{
    char buf[8192];
    const char *spec = f->gw_spec;
    if (spec[0] == '@') {
        FILE *fp = fopen(spec + 1, "r");
        if (fp == NULL)
            return 0;
        size_t n = fread(buf, 1, sizeof buf - 1, fp);
        fclose(fp);
        buf[n] = '\0';
    } else {
        snprintf(buf, sizeof buf, "%s", spec);
    }
    unsigned n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", \t\r\n", &save); tok != NULL && n < FLEET_MAX_GATEWAYS;
         tok = strtok_r(NULL, ", \t\r\n", &save)) {
        if (config_parse_addr(tok, &out[n]) == 0 && out[n].port > 0)
            n++;
    }
    return n;
}

/* ---- small helpers ----------------------------------------------------------------------- */

int64_t bot_now_ms(void)
{
    return clock_mono_ms();
}

int bot_jitter(bot_t *b, int ms)
{
    return ms <= 0 ? 0 : (int)bot_rng_below(&b->rng, (uint32_t)ms + 1);
}

void bot_timer_arm(struct event *ev, int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(ev, &tv);
}

void bot_timer_set(bot_t *b, int ms, bool is_action)
{
    b->timer_is_action = is_action;
    bot_timer_arm(b->timer, ms < 0 ? 0 : ms);
}

void bot_req_clear(bot_t *b)
{
    evtimer_del(b->rq_timer);
    free(b->rq_bytes);
    b->rq_bytes = NULL;
    b->rq_len = 0;
    b->rq = RQ_NONE;
    b->rq_id = 0;
    b->rq_moved = false;
}

const char *bot_code_name(int code)
{
    return frame_error_code_name(code);
}

/* Writes the pending request's bytes. */
static void bot_req_write(bot_t *b)
{
    if (b->bev == NULL)
        return;
    bufferevent_write(b->bev, b->rq_bytes, b->rq_len);
    b->last_tx_ms = bot_now_ms();
    b->rq_attempts++;
    bot_timer_arm(b->rq_timer, b->f->cfg.request_timeout_ms);
}

/*
 * Sends m (its request_id is set here to a fresh id) as the bot's one request in flight.
 * The encoded bytes are kept for resends after a deadline. Returns 0 or -EINVAL (the codec
 * refused the message: a bug, counted as an unexpected error).
 */
int bot_req_send(bot_t *b, bot_req_kind_t kind, Croupier__ClientMessage *m)
{
    bot_req_clear(b);
    m->request_id = ++b->next_rid;
    struct evbuffer *tmp = evbuffer_new();
    frame_error_t err;
    int rc = frame_pack_client(tmp, m, NULL, &err);
    if (rc != 0) {
        log_emit(LOG_ERROR, "bot_pack_failed", "{s:i,s:s}", "bot", (int)b->idx, "detail",
                 err.detail);
        bot_book_error(b->f->cfg.book, "pack_failed", false);
        evbuffer_free(tmp);
        return rc;
    }
    b->rq_len = evbuffer_get_length(tmp);
    b->rq_bytes = xmalloc(b->rq_len);
    evbuffer_remove(tmp, b->rq_bytes, b->rq_len);
    evbuffer_free(tmp);
    b->rq = kind;
    b->rq_id = m->request_id;
    b->rq_attempts = 0;
    b->rq_sent_us = clock_mono_ns() / 1000;
    bot_req_write(b);
    return 0;
}

/* ---- requests ---------------------------------------------------------------------------- */

static void bot_send_login(bot_t *b)
{
    char token[TOKEN_MAX_LEN + 1];
    int64_t expiry = clock_wall_ms() / 1000 + 24 * 3600;
    if (token_mint(b->f->cfg.secret, b->player, expiry, token, sizeof token) < 0) {
        bot_book_error(b->f->cfg.book, "token_mint_failed", false);
        bot_drop(b, "token", false);
        return;
    }
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Login l = CROUPIER__LOGIN__INIT;
    l.token = token;
    l.client_version = "croupier-bot/1";
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LOGIN;
    m.login = &l;
    b->st = BS_LOGIN;
    bot_req_send(b, RQ_LOGIN, &m);
}

void bot_send_resume(bot_t *b)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Resume r = CROUPIER__RESUME__INIT;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_RESUME;
    m.resume = &r;
    b->st = BS_RESUME;
    bot_book_count(b->f->cfg.book, BOT_C_RESUMES);
    bot_req_send(b, RQ_RESUME, &m);
}

/* Rooms: the leader of the group creates the next room; the others join the group's room by
 * its code once it is there (until then they look again shortly). */
static void bot_send_room(bot_t *b)
{
    bot_fleet_t *f = b->f;
    bot_group_t *g = &f->groups[b->idx / (uint32_t)f->cfg.room_seats];
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    b->st = BS_JOIN;
    b->room_seen = 0;
    b->room_sum = 0;
    b->room_known = false;
    if (b->idx % (uint32_t)f->cfg.room_seats == 0) {
        Croupier__CreateRoom cr = CROUPIER__CREATE_ROOM__INIT;
        Croupier__RoomRules rules = CROUPIER__ROOM_RULES__INIT;
        cr.engine = f->cfg.engine;
        cr.game = (char *)f->cfg.strategy->game;
        cr.stake = f->cfg.stake;
        rules.deals = (uint32_t)(f->cfg.room_deals > 0 ? f->cfg.room_deals : 4);
        rules.has_seats = true;
        rules.seats = (uint32_t)f->cfg.room_seats;
        cr.rules = &rules;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_CREATE_ROOM;
        m.create_room = &cr;
        bot_book_count(f->cfg.book, BOT_C_JOINS);
        bot_req_send(b, RQ_JOIN, &m);
        return;
    }
    if (g->code[0] == '\0' || g->gen == b->room_gen) {
        bot_timer_set(b, 100 + bot_jitter(b, 100), false); /* the leader's room is not there yet */
        return;
    }
    b->room_gen = g->gen;
    Croupier__JoinRoom jr = CROUPIER__JOIN_ROOM__INIT;
    jr.code = g->code;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN_ROOM;
    m.join_room = &jr;
    bot_book_count(f->cfg.book, BOT_C_JOINS);
    bot_req_send(b, RQ_JOIN, &m);
}

/* A RoomInfo, Joined.room or Snapshot.room: what the bot knows of its room's scoreboard. After
 * a whole-table move it must be what it was before; at the end its own total must add up. */
void bot_room_seen(bot_t *b, const Croupier__RoomInfo *ri, bool after_move)
{
    bot_book_t *book = b->f->cfg.book;
    int64_t mine = 0;
    for (size_t i = 0; i < ri->n_scores; i++)
        if (ri->scores[i]->player_id == b->player)
            mine = ri->scores[i]->total;
    if (strcmp(b->room_code, ri->code) != 0) {
        snprintf(b->room_code, sizeof b->room_code, "%s", ri->code);
        b->room_known = false;
    }
    if (after_move && b->room_known &&
        (b->room_played != (int)ri->deals_played || b->room_total != mine)) {
        bot_book_count(book, BOT_C_MATCH_LOST);
        log_emit(LOG_WARN, "bot_room_state_lost", "{s:I,s:s,s:i,s:i,s:I,s:I}", "player",
                 (json_int_t)b->player, "room", ri->code, "played_before", b->room_played,
                 "played_after", (int)ri->deals_played, "total_before", (json_int_t)b->room_total,
                 "total_after", (json_int_t)mine);
    }
    b->room_played = (int)ri->deals_played;
    b->room_total = mine;
    b->room_known = true;
    if (ri->state == CROUPIER__ROOM_STATE__ROOM_FINISHED) {
        bot_book_count(book, BOT_C_ROOMS_FINISHED);
        if (b->room_seen == (int)ri->deals_played && b->room_sum != mine) {
            bot_book_count(book, BOT_C_MATCH_LOST);
            log_emit(LOG_WARN, "bot_room_scoreboard_wrong", "{s:I,s:s,s:I,s:I}", "player",
                     (json_int_t)b->player, "room", ri->code, "deltas", (json_int_t)b->room_sum,
                     "scoreboard", (json_int_t)mine);
        }
    }
}

void bot_send_join(bot_t *b)
{
    if (b->f->stopping) {
        b->st = BS_DONE;
        bot_drop(b, "stopped", true);
        return;
    }
    if (b->f->cfg.tournament != 0) {
        bot_fleet_tour_next(b); /* register, or ask for the tournament seat */
        return;
    }
    if (b->f->cfg.room_seats > 0) {
        bot_send_room(b);
        return;
    }
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Join j = CROUPIER__JOIN__INIT;
    j.engine = b->f->cfg.engine;
    j.game = (char *)b->f->cfg.strategy->game;
    j.stake = b->f->cfg.stake;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_JOIN;
    m.join = &j;
    b->st = BS_JOIN;
    bot_book_count(b->f->cfg.book, BOT_C_JOINS);
    bot_req_send(b, RQ_JOIN, &m);
}

void bot_send_leave(bot_t *b)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Leave l = CROUPIER__LEAVE__INIT;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_LEAVE;
    m.leave = &l;
    b->st = BS_LEAVING;
    b->left_sent = true;
    bot_book_count(b->f->cfg.book, BOT_C_LEAVES);
    bot_req_send(b, RQ_LEAVE, &m);
}

/* Sends the strategy's move. Returns 0, or -EINVAL when the codec refused it (counted). */
int bot_send_action(bot_t *b, bot_move_t *mv)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = &mv->action;
    b->rq_view = b->view_changes;
    int rc = bot_req_send(b, RQ_ACTION, &m);
    if (rc == 0)
        bot_book_count(b->f->cfg.book, BOT_C_ACTIONS_SENT);
    return rc;
}

/*
 * Keepalive: a Ping (outside the one-request-in-flight discipline; its Pong is ignored). The
 * gateway closes a connection that sent nothing for its idle timeout with GoAway{IDLE}, and a
 * live bot can be silent that long: at a table where no round runs, or when stopping and
 * waiting for the end of a round it no longer acts in.
 */
static void bot_send_ping(bot_t *b)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    Croupier__Ping p = CROUPIER__PING__INIT;
    p.nonce = (uint64_t)bot_now_ms();
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    m.request_id = ++b->next_rid;
    frame_error_t err;
    if (frame_pack_client(bufferevent_get_output(b->bev), &m, NULL, &err) != 0) {
        bot_book_error(b->f->cfg.book, "pack_failed", false);
        return;
    }
    b->last_tx_ms = bot_now_ms();
    bot_book_count(b->f->cfg.book, BOT_C_PINGS);
}

/* ---- connection -------------------------------------------------------------------------- */

static void bot_read_cb(struct bufferevent *bev, void *arg)
{
    bot_t *b = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    b->last_rx_ms = bot_now_ms(); /* any bytes, a partial frame too: the gateway is alive */
    Croupier__ServerMessage *m;
    frame_error_t err;
    frame_result_t r;
    while (b->bev == bev && (r = frame_read_server(in, NULL, &m, &err)) != FRAME_NEED_MORE) {
        if (r == FRAME_TOO_LARGE) {
            bot_book_error(b->f->cfg.book, "frame_too_large", false);
            bot_drop(b, "frame too large", false);
            return;
        }
        if (r == FRAME_MALFORMED) {
            log_emit(LOG_WARN, "bot_bad_frame", "{s:i,s:s}", "bot", (int)b->idx, "detail",
                     err.detail);
            bot_book_error(b->f->cfg.book, "malformed_frame", false);
            continue;
        }
        if (m->has_request_id && m->request_id != 0)
            bot_on_reply(b, m);
        else
            bot_on_event(b, m);
        frame_free_server(m);
    }
}

/* Arms the next connect: after a GoAway its delay, else jittered exponential backoff. */
static void bot_reconnect_later(bot_t *b, bool after_goaway)
{
    int delay;
    if (after_goaway) {
        delay = (int)b->goaway_delay_ms + bot_jitter(b, 100);
    } else {
        b->backoff_ms = b->backoff_ms == 0 ? 100 : b->backoff_ms * 2;
        if (b->backoff_ms > 3000)
            b->backoff_ms = 3000;
        delay = b->backoff_ms / 2 + bot_jitter(b, b->backoff_ms / 2);
    }
    b->st = BS_IDLE;
    bot_timer_set(b, delay, false);
}

/*
 * Closes the bot's connection. expected: the close is part of normal operation (GoAway, stop).
 * Anything in flight is abandoned; unless the fleet is stopping, a reconnect is armed.
 */
void bot_drop(bot_t *b, const char *why, bool expected)
{
    bool had_login = b->st >= BS_RESUME && b->st != BS_DONE;
    if (b->bev != NULL) {
        bufferevent_free(b->bev);
        b->bev = NULL;
    }
    if (had_login && b->f->connected > 0)
        b->f->connected--;
    if (b->rq != RQ_NONE)
        bot_book_count(b->f->cfg.book, BOT_C_ABANDONED);
    if (b->rq == RQ_ACTION)
        b->action_abandoned = true;
    bot_req_clear(b);
    b->rq_newtries = 0;
    if (b->has_seat) {
        b->lost_connection = true;
        bot_book_disconnected(b->f->cfg.book, b->idx);
    }
    bool goaway = b->goaway;
    b->goaway = false;
    bot_fleet_tour_dropped(b);
    if (b->st == BS_DONE || (b->st == BS_LEFT && !bot_book_round_open(b->f->cfg.book, b->idx)) ||
        (b->f->stopping && !b->has_seat) || b->tour_done) {
        b->st = BS_DONE;
        evtimer_del(b->timer);
        fleet_check_stopped(b->f);
        bot_fleet_tour_check_all(b->f);
        return;
    }
    if (!expected)
        log_emit(LOG_WARN, "bot_connection_dropped", "{s:i,s:s}", "bot", (int)b->idx, "why", why);
    bot_book_count(b->f->cfg.book, BOT_C_RECONNECTS);
    if (goaway)
        bot_book_count(b->f->cfg.book, BOT_C_RECONNECTS_GOAWAY);
    b->gw++;
    bot_reconnect_later(b, goaway);
}

static void bot_event_cb(struct bufferevent *bev, short what, void *arg)
{
    bot_t *b = arg;
    (void)bev;
    if (what & BEV_EVENT_CONNECTED) {
        int one = 1;
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        bufferevent_set_timeouts(bev, NULL, NULL);
        b->ever_connected = true;
        b->last_rx_ms = bot_now_ms(); /* the keepalive counts the silence from the connect */
        b->probe_ms = 0;
        b->fail_since_ms = 0;
        b->fail_reported = false;
        bot_book_count(b->f->cfg.book, BOT_C_CONNECTS);
        bot_send_login(b);
        return;
    }
    if (b->st == BS_CONNECTING) {
        /* The gateway is not there (gone in a rollout, or not up yet): try the next one. */
        bot_book_count(b->f->cfg.book, BOT_C_CONNECT_FAILURES);
        if (b->fail_since_ms == 0)
            b->fail_since_ms = bot_now_ms();
        if (!b->fail_reported && bot_now_ms() - b->fail_since_ms > 20000) {
            bot_book_error(b->f->cfg.book, "no_gateway_reachable", false);
            b->fail_reported = true;
        }
        bufferevent_free(b->bev);
        b->bev = NULL;
        b->gw++;
        if (b->f->stopping && !b->has_seat) {
            b->st = BS_DONE;
            fleet_check_stopped(b->f);
            return;
        }
        bot_reconnect_later(b, false);
        return;
    }
    if (b->goaway) {
        bot_drop(b, "goaway", true);
        return;
    }
    if (b->st == BS_DONE || (b->st == BS_LEFT && !bot_book_round_open(b->f->cfg.book, b->idx))) {
        bot_drop(b, "closed after leaving", true);
        return;
    }
    /* Lost without a GoAway (the gateway died, a reset): a reconnect if the bot gets back to its
     * seat through a gateway (bot_after_seat), an error if it never does (fleet_finish). */
    bot_book_count(b->f->cfg.book, BOT_C_CONNECTIONS_LOST);
    b->loss_pending = true;
    bot_drop(b, (what & BEV_EVENT_EOF) ? "eof" : "socket error", false);
}

static void bot_connect(bot_t *b)
{
    config_addr_t gws[FLEET_MAX_GATEWAYS];
    unsigned n = fleet_gateways(b->f, gws);
    if (n == 0) {
        bot_book_count(b->f->cfg.book, BOT_C_CONNECT_FAILURES);
        bot_reconnect_later(b, false);
        return;
    }
    /* The first connect spreads bots over the list by index; a reconnect picks at random among
     * the gateways other than the one just left, so a leaving gateway's clients spread over the
     * rest (the way a Service balances new connections). */
    unsigned pick = b->gw % n;
    if (b->ever_connected && n > 1) {
        unsigned others[FLEET_MAX_GATEWAYS], k = 0;
        for (unsigned i = 0; i < n; i++)
            if (strcmp(gws[i].host, b->last.host) != 0 || gws[i].port != b->last.port)
                others[k++] = i;
        pick = k > 0 ? others[bot_rng_below(&b->rng, k)] : bot_rng_below(&b->rng, n);
    }
    const config_addr_t *a = &gws[pick];
    b->last = *a;
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, a->host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)a->port);
        sl = sizeof *s4;
    } else if (inet_pton(AF_INET6, a->host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)a->port);
        sl = sizeof *s6;
    } else {
        bot_book_count(b->f->cfg.book, BOT_C_CONNECT_FAILURES);
        b->gw++;
        bot_reconnect_later(b, false);
        return;
    }
    b->bev = bufferevent_socket_new(b->f->cfg.base, -1, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(b->bev, bot_read_cb, NULL, bot_event_cb, b);
    bufferevent_setwatermark(b->bev, EV_READ, 0, FRAME_HEADER_SIZE + FRAME_DEFAULT_MAX + 4096);
    struct timeval tv = {.tv_sec = b->f->cfg.connect_timeout_ms / 1000,
                         .tv_usec = (b->f->cfg.connect_timeout_ms % 1000) * 1000};
    bufferevent_set_timeouts(b->bev, NULL, &tv);
    bufferevent_enable(b->bev, EV_READ | EV_WRITE);
    b->st = BS_CONNECTING;
    b->goaway = false;
    /* On an immediate failure libevent has already run bot_event_cb (BEV_EVENT_ERROR), which
     * freed the bufferevent and armed the next attempt. */
    (void)bufferevent_socket_connect(b->bev, (struct sockaddr *)&ss, (int)sl);
}

/* ---- timers ------------------------------------------------------------------------------ */

static void bot_rq_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    bot_t *b = arg;
    if (b->rq == RQ_NONE || b->bev == NULL)
        return;
    if (b->rq_attempts <= b->f->cfg.max_retries) {
        bot_book_count(b->f->cfg.book, BOT_C_RETRIES);
        bot_req_write(b); /* the same bytes, the same request id */
        return;
    }
    bot_book_error(b->f->cfg.book, "request_timeout", false);
    bot_drop(b, "request timeout", false);
}

static void bot_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    bot_t *b = arg;
    if (b->timer_is_action) {
        bot_act(b); /* it checks whether the bot may play in its state */
        return;
    }
    switch (b->st) {
    case BS_IDLE:
        bot_connect(b);
        return;
    case BS_SEATED:
        if (b->closing_seen) {
            /* TableClosing without a Moved: leave and join again. */
            const char *what = b->crash_wait ? "crash_without_move" : "closing_without_move";
            bot_book_error(b->f->cfg.book, what, false);
            log_emit(LOG_WARN, "bot_no_move", "{s:s,s:I,s:I,s:i,s:I,s:i,s:b}", "error", what,
                     "player", (json_int_t)b->player, "desk", (json_int_t)b->seat.desk_id, "reason",
                     b->closing_reason, "waited_ms", (json_int_t)(bot_now_ms() - b->closing_ms),
                     "request_in_flight", (int)b->rq, "connected", b->st != BS_IDLE);
            b->crash_wait = false;
            if (b->rq == RQ_NONE) {
                b->has_seat = false;
                bot_send_join(b);
            }
        }
        return;
    case BS_JOIN:
        if (b->rq == RQ_NONE)
            bot_send_join(b);
        return;
    case BS_RESUME:
        if (b->rq == RQ_NONE)
            bot_send_resume(b);
        return;
    case BS_LOGIN:
        if (b->rq == RQ_NONE)
            bot_send_login(b);
        return;
    case BS_LEFT:
        if (b->tour_done)
            bot_fleet_tour_settle(b); /* the bound of the wait for its last hand's end */
        return;
    default:
        return;
    }
}

/*
 * The gateway sent nothing, not even the Pong of a probe, for keepalive_idle_ms +
 * keepalive_timeout_ms: it is frozen or cut off. Its kernel may still accept (and acknowledge)
 * what the bot writes, so neither a write nor TCP tells: the bot closes the connection itself and
 * goes the way of any lost connection (bot_drop: another gateway of the list, Login, Resume);
 * once back at its seat the loss counts as a reconnect, not an error.
 */
static void bot_gateway_silent(bot_t *b, int64_t silent_ms)
{
    log_emit(LOG_WARN, "bot_gateway_silent", "{s:i,s:s,s:i,s:I}", "bot", (int)b->idx, "host",
             b->last.host, "port", b->last.port, "silent_ms", (json_int_t)silent_ms);
    bot_book_count(b->f->cfg.book, BOT_C_GATEWAY_SILENT);
    bot_book_count(b->f->cfg.book, BOT_C_CONNECTIONS_LOST);
    b->loss_pending = true;
    bot_drop(b, "gateway silent", false);
}

/*
 * The liveness probe of one connected bot (docs/protocol.md "Keepalive"): received nothing for
 * keepalive_idle_ms, a Ping; still nothing keepalive_timeout_ms after it, the gateway is silent.
 * From the Login on: a gateway frozen before it answered the Login is left as well.
 */
static void bot_keepalive(bot_t *b, int64_t now)
{
    const bot_fleet_config_t *c = &b->f->cfg;
    if (c->keepalive_idle_ms < 0 || b->bev == NULL || b->st < BS_LOGIN || b->st > BS_LEFT)
        return;
    int64_t quiet = now - b->last_rx_ms;
    if (quiet < c->keepalive_idle_ms)
        return;
    if (b->probe_ms <= b->last_rx_ms) {
        bot_send_ping(b);
        b->probe_ms = now;
    } else if (now - b->probe_ms >= c->keepalive_timeout_ms) {
        bot_gateway_silent(b, quiet);
    }
}

/* The period of the keepalive sweep: a fraction of each bound it enforces, at most a second. */
static int fleet_sweep_ms(const bot_fleet_t *f)
{
    int ms = f->cfg.ping_ms < 2000 ? f->cfg.ping_ms / 2 : 1000;
    if (f->cfg.keepalive_idle_ms >= 0) {
        if (f->cfg.keepalive_idle_ms / 4 < ms)
            ms = f->cfg.keepalive_idle_ms / 4;
        if (f->cfg.keepalive_timeout_ms / 4 < ms)
            ms = f->cfg.keepalive_timeout_ms / 4;
    }
    return ms < 25 ? 25 : ms;
}

/* Periodically: a Ping from each logged-in bot that sent nothing for ping_ms (the gateway's
 * idle timeout), and the liveness probe of each connection (bot_keepalive). */
static void fleet_ping_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    bot_fleet_t *f = arg;
    int64_t now = bot_now_ms();
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        if (b->bev != NULL && b->st >= BS_RESUME && b->st <= BS_LEFT &&
            now - b->last_tx_ms >= f->cfg.ping_ms)
            bot_send_ping(b);
        bot_keepalive(b, now);
    }
    bot_timer_arm(f->ping_timer, fleet_sweep_ms(f));
}

/* ---- fleet ------------------------------------------------------------------------------- */

int bot_fleet_create(const bot_fleet_config_t *cfg, bot_fleet_t **out)
{
    if (cfg->base == NULL || cfg->bots == 0 || cfg->strategy == NULL || cfg->secret == NULL ||
        cfg->book == NULL || cfg->gateways == NULL || cfg->stake <= 0) {
        log_emit(LOG_ERROR, "bot_fleet_bad_config", NULL);
        return -EINVAL;
    }
    bot_fleet_t *f = xcalloc(1, sizeof *f);
    f->cfg = *cfg;
    if (f->cfg.engine == 0)
        f->cfg.engine = cfg->strategy->engine;
    if (f->cfg.request_timeout_ms <= 0)
        f->cfg.request_timeout_ms = 3000;
    if (f->cfg.max_retries <= 0)
        f->cfg.max_retries = 3;
    if (f->cfg.connect_timeout_ms <= 0)
        f->cfg.connect_timeout_ms = 2000;
    if (f->cfg.ramp_ms <= 0)
        f->cfg.ramp_ms = cfg->bots * 10 < 2000 ? (int)cfg->bots * 10 : 2000;
    if (f->cfg.finish_timeout_ms <= 0)
        f->cfg.finish_timeout_ms = 15000;
    if (f->cfg.ping_ms <= 0)
        f->cfg.ping_ms = 20000;
    if (f->cfg.keepalive_idle_ms == 0)
        f->cfg.keepalive_idle_ms = 3000;
    if (f->cfg.keepalive_timeout_ms <= 0)
        f->cfg.keepalive_timeout_ms = 5000;
    f->gw_spec = xstrdup(cfg->gateways);
    config_addr_t gws[FLEET_MAX_GATEWAYS];
    if (f->gw_spec[0] != '@' && fleet_gateways(f, gws) == 0) {
        log_emit(LOG_ERROR, "bot_fleet_bad_gateways", "{s:s}", "gateways", cfg->gateways);
        free(f->gw_spec);
        free(f);
        return -EINVAL;
    }
    if (cfg->room_seats > 0 && (cfg->room_seats < 2 || cfg->bots % (uint32_t)cfg->room_seats)) {
        log_emit(LOG_ERROR, "bot_fleet_bad_rooms", "{s:i,s:i}", "room_seats", cfg->room_seats,
                 "bots", (int)cfg->bots);
        free(f->gw_spec);
        free(f);
        return -EINVAL;
    }
    if (cfg->tournament != 0 && (cfg->tour_book == NULL || cfg->room_seats > 0)) {
        log_emit(LOG_ERROR, "bot_fleet_bad_tournament", "{s:I,s:b,s:i}", "tournament",
                 (json_int_t)cfg->tournament, "tour_book", cfg->tour_book != NULL, "room_seats",
                 cfg->room_seats);
        free(f->gw_spec);
        free(f);
        return -EINVAL;
    }
    if (cfg->room_seats > 0)
        f->groups = xcalloc(cfg->bots / (uint32_t)cfg->room_seats, sizeof *f->groups);
    f->bots = xcalloc(cfg->bots, sizeof *f->bots);
    for (uint32_t i = 0; i < cfg->bots; i++) {
        bot_t *b = &f->bots[i];
        b->f = f;
        b->idx = i;
        b->player = cfg->player_base + i;
        /* Request ids must never repeat for a player, also across bot processes: game servers
         * remember answers by (player, client request id), so a restarted process counting from
         * 1 again would be answered from another run's memory. Start from the clock. */
        b->next_rid = (uint64_t)clock_wall_ms() << 20;
        b->gw = i;
        b->rng.s = (cfg->seed + 1) * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)i * 0xBF58476D1CE4E5B9ULL);
        b->sst = xcalloc(1, cfg->strategy->state_size > 0 ? cfg->strategy->state_size : 1);
        b->timer = evtimer_new(cfg->base, bot_timer_cb, b);
        b->rq_timer = evtimer_new(cfg->base, bot_rq_timer_cb, b);
    }
    *out = f;
    return 0;
}

void bot_fleet_start(bot_fleet_t *f)
{
    f->ping_timer = evtimer_new(f->cfg.base, fleet_ping_timer_cb, f);
    bot_timer_arm(f->ping_timer, fleet_sweep_ms(f));
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        b->st = BS_IDLE;
        bot_timer_set(b, bot_jitter(b, f->cfg.ramp_ms), false);
    }
}

uint32_t bot_fleet_connected(const bot_fleet_t *f)
{
    return f->connected;
}

static void fleet_finish(bot_fleet_t *f)
{
    if (f->done == NULL)
        return;
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        if (b->loss_pending) {
            /* The connection was lost and the bot never got back to its seat: an error. Without
             * a seat (lost while joining, then stopped) nothing was left to get back to. */
            if (b->has_seat)
                log_emit(LOG_WARN, "bot_connection_not_recovered", "{s:i}", "bot", (int)b->idx);
            bot_book_error(f->cfg.book, "connection_lost", !b->has_seat);
            b->loss_pending = false;
        }
    }
    evtimer_del(f->stop_timer);
    if (f->ping_timer != NULL)
        evtimer_del(f->ping_timer);
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        evtimer_del(b->timer);
        evtimer_del(b->rq_timer);
        if (b->bev != NULL) {
            bufferevent_free(b->bev);
            b->bev = NULL;
        }
        b->st = BS_DONE;
    }
    f->connected = 0;
    void (*done)(void *) = f->done;
    f->done = NULL;
    done(f->done_arg);
}

/* Closes bots that left and whose round is over; finishes when every bot is done. */
void fleet_check_stopped(bot_fleet_t *f)
{
    if (!f->stopping)
        return;
    bool all = true;
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        if (b->st == BS_LEFT && !bot_book_round_open(f->cfg.book, i)) {
            if (b->bev != NULL) {
                bufferevent_free(b->bev);
                b->bev = NULL;
                if (f->connected > 0)
                    f->connected--;
            }
            b->st = BS_DONE;
        }
        if (b->st != BS_DONE)
            all = false;
    }
    if (all)
        fleet_finish(f);
}

static void fleet_stop_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    bot_fleet_t *f = arg;
    if (bot_now_ms() >= f->stop_deadline_ms) {
        fleet_finish(f);
        return;
    }
    fleet_check_stopped(f);
    if (f->done != NULL)
        bot_timer_arm(f->stop_timer, 100);
}

void bot_fleet_stop(bot_fleet_t *f, void (*done)(void *arg), void *arg)
{
    if (f->stopping)
        return;
    f->stopping = true;
    f->done = done;
    f->done_arg = arg;
    f->stop_deadline_ms = bot_now_ms() + f->cfg.finish_timeout_ms;
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        if (b->st == BS_SEATED) {
            if (b->timer_is_action && !bot_must_finish(b))
                evtimer_del(b->timer);
            bot_maybe_leave(b);
            /* else: the round's end or the reply of the request in flight sends the Leave */
        } else if (b->st == BS_IDLE && !b->has_seat) {
            evtimer_del(b->timer);
            b->st = BS_DONE;
        }
    }
    f->stop_timer = evtimer_new(f->cfg.base, fleet_stop_timer_cb, f);
    bot_timer_arm(f->stop_timer, 100);
    fleet_check_stopped(f);
}

void bot_fleet_destroy(bot_fleet_t *f)
{
    if (f == NULL)
        return;
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        if (b->bev != NULL)
            bufferevent_free(b->bev);
        event_free(b->timer);
        event_free(b->rq_timer);
        free(b->rq_bytes);
        if (f->cfg.strategy->free_state != NULL)
            f->cfg.strategy->free_state(b->sst);
        free(b->sst);
    }
    if (f->stop_timer != NULL)
        event_free(f->stop_timer);
    if (f->ping_timer != NULL)
        event_free(f->ping_timer);
    free(f->bots);
    free(f->groups);
    free(f->gw_spec);
    free(f);
}
