/*
 * bot_fleet.c -- the bot client state machine; see bot_fleet.h.
 */
#include "bot_fleet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "xmalloc.h"

#define FLEET_MAX_GATEWAYS 64

typedef enum {
    BS_IDLE = 0,   /* waiting for a (re)connect timer */
    BS_CONNECTING, /* TCP connect in progress */
    BS_LOGIN,      /* Login sent */
    BS_RESUME,     /* Resume sent */
    BS_JOIN,       /* Join sent */
    BS_SEATED,     /* playing */
    BS_LEAVING,    /* Leave sent (stopping) */
    BS_LEFT,       /* stopping: waiting for the open round to end */
    BS_CLOSING,    /* GoAway seen: reading to EOF */
    BS_DONE,       /* stopped */
} bot_state_t;

typedef enum { RQ_NONE = 0, RQ_LOGIN, RQ_RESUME, RQ_JOIN, RQ_ACTION, RQ_LEAVE } bot_req_kind_t;

typedef struct bot {
    bot_fleet_t *f;
    uint32_t idx;
    uint64_t player;
    bot_state_t st;
    struct bufferevent *bev;
    unsigned gw;        /* first gateway: bot index into the list */
    config_addr_t last; /* the gateway of the last connection attempt */
    bool ever_connected;
    bool lost_connection; /* disconnected since the seat was last confirmed */
    bool loss_pending;    /* a connection lost without a GoAway, not recovered yet */
    bool goaway;
    uint32_t goaway_delay_ms;
    int backoff_ms;
    int64_t fail_since_ms; /* start of a streak of failed connects (0 = none) */
    bool fail_reported;
    uint64_t next_rid;
    int64_t last_tx_ms; /* the last frame sent (keepalive: a Ping after ping_ms of silence) */
    int64_t last_rx_ms; /* the last bytes received (liveness of the gateway) */
    int64_t probe_ms;   /* the last probe Ping sent for liveness (0: none) */
    /* The one request in flight. */
    bot_req_kind_t rq;
    uint64_t rq_id;
    int rq_attempts;    /* sends with this id */
    int rq_newtries;    /* new requests after retriable refusals */
    int64_t rq_sent_us; /* first send, for latency */
    bool rq_moved;      /* a Moved came while it was in flight: it was made for the old seat */
    uint8_t *rq_bytes;  /* the encoded frame, for identical resends */
    size_t rq_len;
    struct event *rq_timer;
    struct event *timer; /* reconnect / action / retry / closing watchdog */
    bool timer_is_action;
    /* Seat. */
    bool has_seat;
    bot_seat_t seat;
    bool closing_seen;
    bool crash_wait; /* TableClosing{CRASHED}: the seat is gone, a Moved is on its way */
    /* The table as last seen (Joined / Snapshot seats): the player of each seat. A whole-table
     * Moved keeps it to check the Snapshot of the new table against (BOT_C_MATCH_LOST). */
    uint64_t seen_players[9];
    bool check_move;
    uint32_t move_seat;
    int64_t last_round_end_us; /* when the last RoundEnd arrived (monotonic us; 0: none) */
    bool left_sent;            /* stopping: the Leave went out */
    bool action_abandoned;     /* an action was in flight when the connection went away */
    char game[40];
    void *sst;
    bot_rng_t rng;
    /* Private rooms: the group room generation last joined (or tried), and the room's
     * scoreboard as this bot knows it. */
    uint32_t room_gen;
    char room_code[8];
    int room_seen;      /* completed deals of the room whose RoundEnd this bot saw */
    int64_t room_sum;   /* its own deltas over those */
    int room_played;    /* deals played per the last RoomInfo / Snapshot / Joined */
    int64_t room_total; /* its own total there */
    bool room_known;    /* room_played/room_total are set */
    bool seat_doubt;    /* a Resume to see a seat the gateway said we hold (ALREADY_SEATED) */
} bot_t;

/* A group of bots that plays private rooms together: the code of its room now. */
typedef struct {
    char code[8];
    uint32_t gen; /* bumped at every room its leader creates */
} bot_group_t;

struct bot_fleet {
    bot_fleet_config_t cfg;
    char *gw_spec;
    bot_t *bots;
    bot_group_t *groups; /* room_seats > 0: bots / room_seats groups */
    bool stopping;
    void (*done)(void *);
    void *done_arg;
    struct event *stop_timer;
    struct event *ping_timer; /* keepalive sweep */
    int64_t stop_deadline_ms;
    uint32_t connected;
};

static void bot_connect(bot_t *b);
static void bot_drop(bot_t *b, const char *why, bool expected);
static void bot_after_seat(bot_t *b);
static void bot_send_join(bot_t *b);
static void bot_schedule_decide(bot_t *b);
static void fleet_check_stopped(bot_fleet_t *f);
static void bot_send_leave(bot_t *b);

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

static int64_t now_ms(void)
{
    return clock_mono_ms();
}

static int jitter(bot_t *b, int ms)
{
    return ms <= 0 ? 0 : (int)bot_rng_below(&b->rng, (uint32_t)ms + 1);
}

static void timer_arm(struct event *ev, int ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(ev, &tv);
}

static void bot_timer_set(bot_t *b, int ms, bool is_action)
{
    b->timer_is_action = is_action;
    timer_arm(b->timer, ms < 0 ? 0 : ms);
}

static void bot_req_clear(bot_t *b)
{
    evtimer_del(b->rq_timer);
    free(b->rq_bytes);
    b->rq_bytes = NULL;
    b->rq_len = 0;
    b->rq = RQ_NONE;
    b->rq_id = 0;
    b->rq_moved = false;
}

static const char *code_name(int code)
{
    return frame_error_code_name(code);
}

/* Writes the pending request's bytes. */
static void bot_req_write(bot_t *b)
{
    if (b->bev == NULL)
        return;
    bufferevent_write(b->bev, b->rq_bytes, b->rq_len);
    b->last_tx_ms = now_ms();
    b->rq_attempts++;
    timer_arm(b->rq_timer, b->f->cfg.request_timeout_ms);
}

/*
 * Sends m (its request_id is set here to a fresh id) as the bot's one request in flight.
 * The encoded bytes are kept for resends after a deadline. Returns 0 or -EINVAL (the codec
 * refused the message: a bug, counted as an unexpected error).
 */
static int bot_req_send(bot_t *b, bot_req_kind_t kind, Croupier__ClientMessage *m)
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

static void bot_send_resume(bot_t *b)
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
        bot_timer_set(b, 100 + jitter(b, 100), false); /* the leader's room is not there yet */
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
static void bot_room_seen(bot_t *b, const Croupier__RoomInfo *ri, bool after_move)
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

static void bot_send_join(bot_t *b)
{
    if (b->f->stopping) {
        b->st = BS_DONE;
        bot_drop(b, "stopped", true);
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

static void bot_send_leave(bot_t *b)
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
static int bot_send_action(bot_t *b, bot_move_t *mv)
{
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = &mv->action;
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
    p.nonce = (uint64_t)now_ms();
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_PING;
    m.ping = &p;
    m.request_id = ++b->next_rid;
    frame_error_t err;
    if (frame_pack_client(bufferevent_get_output(b->bev), &m, NULL, &err) != 0) {
        bot_book_error(b->f->cfg.book, "pack_failed", false);
        return;
    }
    b->last_tx_ms = now_ms();
    bot_book_count(b->f->cfg.book, BOT_C_PINGS);
}

/* ---- seat and strategy ------------------------------------------------------------------- */

/* Remembers the table's seats as a message shows them. */
static void bot_seen_table(bot_t *b, Croupier__SeatInfo **seats, size_t n)
{
    memset(b->seen_players, 0, sizeof b->seen_players);
    for (size_t i = 0; i < n; i++)
        if (seats[i]->seat < 9 && seats[i]->has_player_id)
            b->seen_players[seats[i]->seat] = seats[i]->player_id;
}

/* The Snapshot after a whole-table Moved: the same seat and the same player in every seat it
 * knew (the match state itself is checked server-side: the adopter's own offer of the table
 * equals the one it adopted, tests/e2e/table_move.sh). */
static void bot_check_moved_table(bot_t *b, const Croupier__Snapshot *sn)
{
    b->check_move = false;
    bool same = sn->your_seat == b->move_seat;
    for (size_t i = 0; same && i < sn->n_seats; i++) {
        uint32_t k = sn->seats[i]->seat;
        same = k >= 9 || b->seen_players[k] == 0 || b->seen_players[k] == sn->seats[i]->player_id;
    }
    if (!same) {
        bot_book_count(b->f->cfg.book, BOT_C_MATCH_LOST);
        log_emit(LOG_WARN, "bot_match_state_lost", "{s:I,s:I,s:i,s:i}", "player",
                 (json_int_t)b->player, "desk", (json_int_t)sn->desk_id, "seat_before",
                 (int)b->move_seat, "seat_after", (int)sn->your_seat);
    }
}

static void bot_set_seat(bot_t *b, uint64_t desk, uint32_t seat, Croupier__Engine engine,
                         const char *game, int64_t stake)
{
    b->has_seat = true;
    b->closing_seen = false;
    b->crash_wait = false;
    b->seat.player_id = b->player;
    b->seat.desk_id = desk;
    b->seat.seat = seat;
    b->seat.engine = engine;
    b->seat.stake = stake;
    snprintf(b->game, sizeof b->game, "%s", game);
    b->seat.game = b->game;
    b->seat.in_round = bot_book_round_open(b->f->cfg.book, b->idx);
    if (b->f->cfg.strategy->free_state != NULL)
        b->f->cfg.strategy->free_state(b->sst);
    memset(b->sst, 0, b->f->cfg.strategy->state_size);
}

/*
 * Whether the bot is in a round it must finish before leaving: games whose rounds need the
 * players' moves (not the test game, whose rounds run by themselves). A Leave makes the gateway
 * forget the seat, so a bot that left could no longer act in its round.
 */
static bool bot_must_finish(const bot_t *b)
{
    return !b->f->cfg.strategy->round_by_action && bot_book_round_open(b->f->cfg.book, b->idx);
}

/* Whether the bot plays now: seated (its table not gone), and not stopping unless it must finish
 * its round. */
static bool bot_may_play(const bot_t *b)
{
    return b->st == BS_SEATED && !b->crash_wait && (!b->f->stopping || bot_must_finish(b));
}

/* Stopping: leave once the round in progress (if any) is over and no request is in flight. */
static void bot_maybe_leave(bot_t *b)
{
    if (b->f->stopping && b->st == BS_SEATED && !b->left_sent && b->rq == RQ_NONE &&
        !bot_must_finish(b))
        bot_send_leave(b);
}

/*
 * A table-kit game's envelope body in m (Snapshot.game_state, ServerMessage.game_event,
 * Play.action.game; docs/protocol.md "Games on the table kit"): decoded with the strategy's
 * descriptor for that kind (frame_unpack_game(), the client protocol's checks) and handed to
 * its on_game. Nothing happens for a strategy without on_game or without that descriptor. A
 * body that does not decode is an unexpected error ("malformed_game_body"): the server sent
 * what its own game cannot have meant.
 */
static void bot_game_body(bot_t *b, const Croupier__ServerMessage *m)
{
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    const ProtobufCMessageDescriptor *desc = NULL;
    const ProtobufCBinaryData *body = NULL;
    if (s->on_game == NULL)
        return;
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT:
        if (m->snapshot->state_case == CROUPIER__SNAPSHOT__STATE_GAME_STATE) {
            desc = s->game_state_desc;
            body = &m->snapshot->game_state->body;
        }
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_GAME_EVENT:
        desc = s->game_event_desc;
        body = &m->game_event->body;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_PLAY:
        if (m->play->action != NULL && m->play->action->kind_case == CROUPIER__ACTION__KIND_GAME) {
            desc = s->game_action_desc;
            body = &m->play->action->game->body;
        }
        break;
    default:
        break;
    }
    if (desc == NULL || body == NULL)
        return;
    frame_error_t err;
    ProtobufCMessage *g = frame_unpack_game(desc, body->data, body->len, NULL, NULL, &err);
    if (g == NULL) {
        log_emit(LOG_WARN, "bot_bad_game_body", "{s:i,s:s,s:s}", "bot", (int)b->idx, "message",
                 desc->short_name, "detail", err.detail);
        bot_book_error(b->f->cfg.book, "malformed_game_body", false);
        return;
    }
    s->on_game(b->sst, &b->seat, m, g);
    frame_free(g);
}

/* The bot is at its seat: play (or, when stopping, finish the round, then leave). A lost
 * connection that led here was recovered: a reconnect, not an error. */
static void bot_after_seat(bot_t *b)
{
    b->lost_connection = false;
    b->backoff_ms = 0;
    if (b->loss_pending) {
        b->loss_pending = false;
        bot_book_count(b->f->cfg.book, BOT_C_RECONNECTS_LOST);
        bot_book_error(b->f->cfg.book, "connection_lost", true);
    }
    if (b->f->stopping && b->left_sent) {
        b->st = BS_LEFT;
        fleet_check_stopped(b->f);
        return;
    }
    b->st = BS_SEATED;
    bot_maybe_leave(b);
    bot_schedule_decide(b);
}

/* A strategy's move delay at the fleet's pace (cfg.think_percent). */
static int bot_think_ms(const bot_t *b, int delay)
{
    int pct = b->f->cfg.think_percent;
    if (pct <= 0 || pct == 100 || delay <= 0)
        return delay;
    return (int)((int64_t)delay * pct / 100);
}

/* Asks the strategy what to do next and arms the timer accordingly. */
static void bot_schedule_decide(bot_t *b)
{
    if (!bot_may_play(b))
        return;
    bot_move_t mv;
    bot_move_init(&mv);
    int delay = -1;
    int r = b->f->cfg.strategy->decide(b->sst, &b->seat, &b->rng, &mv, &delay);
    if (r < 0 || delay < 0) {
        if (b->timer_is_action)
            evtimer_del(b->timer);
        return;
    }
    bot_timer_set(b, bot_think_ms(b, delay), true);
}

static void bot_act(bot_t *b)
{
    if (!bot_may_play(b))
        return;
    if (b->rq != RQ_NONE) {
        bot_timer_set(b, 50, true); /* a request is in flight: ask again shortly */
        return;
    }
    bot_move_t mv;
    bot_move_init(&mv);
    int delay = -1;
    int r = b->f->cfg.strategy->decide(b->sst, &b->seat, &b->rng, &mv, &delay);
    if (log_enabled(LOG_DEBUG))
        log_emit(LOG_DEBUG, "bot_act", "{s:i,s:i,s:i,s:i}", "bot", (int)b->idx, "state", (int)b->st,
                 "decision", r, "delay", delay);
    if (r == 1) {
        if (bot_send_action(b, &mv) == 0 && b->f->cfg.strategy->on_sent != NULL)
            b->f->cfg.strategy->on_sent(b->sst, &b->seat, &mv);
    } else if (r == 2) {
        bot_book_count(b->f->cfg.book, BOT_C_REFRESHES);
        b->st = BS_RESUME;
        Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
        Croupier__Resume rs = CROUPIER__RESUME__INIT;
        m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_RESUME;
        m.resume = &rs;
        bot_req_send(b, RQ_RESUME, &m);
    } else if (delay >= 0) {
        bot_timer_set(b, bot_think_ms(b, delay), true);
    }
}

/* ---- replies ----------------------------------------------------------------------------- */

static bool code_retriable(const Croupier__Error *e)
{
    if (e->has_retriable && e->retriable)
        return true;
    switch (e->code) {
    case CROUPIER__ERROR_CODE__DRAINING:
    case CROUPIER__ERROR_CODE__UNAVAILABLE:
    case CROUPIER__ERROR_CODE__OVERLOADED:
    case CROUPIER__ERROR_CODE__RATE_LIMITED:
        return true;
    default:
        return false;
    }
}

/*
 * A retriable refusal: counted as expected and made again as a new request after a jittered
 * backoff, at most max_retries times; beyond that it is an unexpected error and the bot starts
 * over on a new connection.
 */
static void bot_retry_later(bot_t *b, bot_req_kind_t kind, const Croupier__Error *e)
{
    bot_book_t *book = b->f->cfg.book;
    if (++b->rq_newtries > b->f->cfg.max_retries) {
        bot_book_error(book, code_name(e->code), false);
        b->rq_newtries = 0;
        bot_req_clear(b);
        bot_drop(b, "retries exhausted", false);
        return;
    }
    bot_book_error(book, code_name(e->code), true);
    bot_book_count(book, BOT_C_RETRIES);
    bot_req_clear(b);
    b->rq = RQ_NONE;
    b->st = kind == RQ_JOIN ? BS_JOIN : kind == RQ_RESUME ? BS_RESUME : b->st;
    /* The timer's handler looks at the state to know what to send again. */
    b->timer_is_action = false;
    timer_arm(b->timer, 100 * b->rq_newtries + jitter(b, 200 * b->rq_newtries));
}

static void bot_on_login(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    if (m->body_case != CROUPIER__SERVER_MESSAGE__BODY_LOGIN_RESULT) {
        const Croupier__Error *e =
            m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
        if (e != NULL && code_retriable(e)) {
            bot_retry_later(b, RQ_LOGIN, e);
            return;
        }
        bot_book_error(book, e != NULL ? code_name(e->code) : "login_bad_reply", false);
        bot_req_clear(b);
        bot_drop(b, "login refused", false);
        return;
    }
    bot_req_clear(b);
    b->rq_newtries = 0;
    bot_book_count(book, BOT_C_LOGINS);
    b->f->connected++;
    if ((m->login_result->has_seated && m->login_result->seated) || b->has_seat) {
        /* Resume whenever we had a seat, even if the gateway does not say so: joining again
         * while seated could sit the player at two tables. */
        bot_send_resume(b);
        return;
    }
    bot_send_join(b);
}

/* The seat and the strategy's view from a Snapshot (a Resume's answer, or the table's state
 * after a whole-table Moved), checked against the table left when it follows such a move. */
static void bot_take_snapshot(bot_t *b, const Croupier__ServerMessage *m)
{
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    const Croupier__Snapshot *sn = m->snapshot;
    bool after_move = b->check_move;
    bot_set_seat(b, sn->desk_id, sn->your_seat, sn->engine, sn->game, sn->stake);
    if (b->check_move)
        bot_check_moved_table(b, sn);
    if (sn->room != NULL)
        bot_room_seen(b, sn->room, after_move);
    bot_seen_table(b, sn->seats, sn->n_seats);
    if (s->on_seat != NULL)
        s->on_seat(b->sst, &b->seat, sn);
    bot_game_body(b, m);
}

static void bot_on_resume(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT) {
        const Croupier__Snapshot *sn = m->snapshot;
        bot_req_clear(b);
        b->rq_newtries = 0;
        b->seat_doubt = false;
        bot_book_seated(book, b->idx, sn->desk_id, b->lost_connection, s->round_in_snapshot,
                        sn->round_id, now_ms());
        if (sn->round_id != NULL && sn->round_id[0] != '\0')
            bot_book_round_started(book, b->idx, sn->desk_id, sn->round_id, now_ms());
        bot_take_snapshot(b, m);
        bot_after_seat(b);
        return;
    }
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    if (e != NULL && code_retriable(e)) {
        bot_retry_later(b, RQ_RESUME, e);
        return;
    }
    bot_req_clear(b);
    if (e != NULL && (e->code == CROUPIER__ERROR_CODE__NOT_SEATED ||
                      e->code == CROUPIER__ERROR_CODE__NO_SUCH_DESK ||
                      e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED)) {
        /* The seat is gone (the table closed while we were away): join again. TABLE_CLOSED:
         * its server is gone (docs/gateway.md), the round we were in was crash-voided. */
        bool gone = e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED;
        if (gone)
            bot_book_crash_voided(book, b->idx, now_ms());
        bot_book_error(book, code_name(e->code), b->lost_connection || gone || b->seat_doubt);
        b->seat_doubt = false;
        bot_book_seated(book, b->idx, 0, b->lost_connection, true, NULL, now_ms());
        b->has_seat = false;
        bot_send_join(b);
        return;
    }
    bot_book_error(book, e != NULL ? code_name(e->code) : "resume_bad_reply", false);
    bot_drop(b, "resume refused", false);
}

static void bot_on_joined(bot_t *b, const Croupier__Joined *j, bool moved)
{
    bot_book_t *book = b->f->cfg.book;
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    if (j->room != NULL && !moved) {
        bot_fleet_t *f = b->f;
        if (f->cfg.room_seats > 0 && b->idx % (uint32_t)f->cfg.room_seats == 0) {
            bot_group_t *g = &f->groups[b->idx / (uint32_t)f->cfg.room_seats];
            snprintf(g->code, sizeof g->code, "%s", j->room->code);
            g->gen++;
            bot_book_count(book, BOT_C_ROOMS_CREATED);
        } else {
            bot_book_count(book, BOT_C_ROOMS_JOINED);
        }
        bot_room_seen(b, j->room, false);
    }
    bot_book_seated(book, b->idx, j->desk_id, false, false, NULL, now_ms());
    bot_set_seat(b, j->desk_id, j->seat, j->engine, j->game, j->stake);
    if (!moved)
        bot_seen_table(b, j->seats, j->n_seats);
    if (s->on_seat != NULL)
        s->on_seat(b->sst, &b->seat, NULL);
    if (moved && b->rq != RQ_NONE)
        return; /* a request is in flight; its reply continues the flow */
    bot_after_seat(b);
}

static void bot_on_join(bot_t *b, const Croupier__ServerMessage *m)
{
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT) {
        /* Seated already (a move the gateway made landed first): the seat's state. */
        bot_on_resume(b, m);
        return;
    }
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_JOINED) {
        bot_req_clear(b);
        b->rq_newtries = 0;
        bot_on_joined(b, m->joined, false);
        return;
    }
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    if (e != NULL && (code_retriable(e) || e->code == CROUPIER__ERROR_CODE__TABLE_FULL)) {
        bot_retry_later(b, RQ_JOIN, e);
        return;
    }
    if (e != NULL && b->f->cfg.room_seats > 0 &&
        (e->code == CROUPIER__ERROR_CODE__ROOM_NOT_FOUND ||
         e->code == CROUPIER__ERROR_CODE__ROOM_ENDED ||
         e->code == CROUPIER__ERROR_CODE__ROOM_STARTED ||
         e->code == CROUPIER__ERROR_CODE__ROOM_FULL)) {
        /* The group's room went on without us (or is gone): wait for its next one. */
        bot_req_clear(b);
        bot_book_error(b->f->cfg.book, code_name(e->code), true);
        b->st = BS_JOIN;
        bot_timer_set(b, 100 + jitter(b, 100), false);
        return;
    }
    if (e != NULL && e->code == CROUPIER__ERROR_CODE__ALREADY_SEATED) {
        /* A seat the gateway still holds for us (a room's end crossing our request): see it;
         * NOT_SEATED then is expected (the gateway forgets it and we join). */
        bot_req_clear(b);
        bot_book_error(b->f->cfg.book, code_name(e->code), true);
        b->seat_doubt = true;
        bot_send_resume(b);
        return;
    }
    bot_req_clear(b);
    bot_book_error(b->f->cfg.book, e != NULL ? code_name(e->code) : "join_bad_reply", false);
    bot_drop(b, "join refused", false);
}

static void bot_on_action_reply(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    int64_t lat = clock_mono_ns() / 1000 - b->rq_sent_us;
    bool old_seat = b->rq_moved;
    bot_req_clear(b);
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    bot_book_latency(book, lat);
    if (e != NULL && e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED && !b->crash_wait && !old_seat) {
        /* The gateway found the seat's server gone: the round is crash-voided, join again. */
        bot_book_count(book, BOT_C_ACTIONS_REFUSED);
        bot_book_error(book, code_name(e->code), true);
        bot_book_crash_voided(book, b->idx, now_ms());
        b->action_abandoned = false;
        b->has_seat = false;
        evtimer_del(b->timer);
        bot_send_join(b);
        return;
    }
    if (e == NULL) {
        b->action_abandoned = false;
        bot_book_count(book, BOT_C_ACTIONS_OK);
        if (s->round_by_action && b->has_seat)
            bot_book_round_started(book, b->idx, b->seat.desk_id, NULL, now_ms());
    } else {
        bot_book_count(book, BOT_C_ACTIONS_REFUSED);
        /* An action abandoned by a lost connection may still have been applied after the bot
         * resumed elsewhere: the next move can then find the turn gone. */
        bool stale = b->action_abandoned && (e->code == CROUPIER__ERROR_CODE__NOT_YOUR_TURN ||
                                             e->code == CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED ||
                                             e->code == CROUPIER__ERROR_CODE__NO_ROUND);
        b->action_abandoned = false;
        /* A Moved came while the action was in flight (maybe sent again after it, on
         * DEADLINE_EXCEEDED): it was made at the old table, and the gateway answers it for that
         * seat, never plays it at the new one (docs/gateway.md): TABLE_CLOSED when its server is
         * gone, NOT_SEATED / NO_SUCH_DESK from a live server that closed it. Those leave the new
         * seat alone; any other refusal stays unexpected. */
        bool for_old_seat = old_seat && (e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED ||
                                         e->code == CROUPIER__ERROR_CODE__NOT_SEATED ||
                                         e->code == CROUPIER__ERROR_CODE__NO_SUCH_DESK);
        if (for_old_seat)
            log_emit(LOG_INFO, "bot_reply_for_old_seat", "{s:i,s:s,s:s,s:I,s:i}", "bot",
                     (int)b->idx, "request", "action", "code", code_name(e->code), "desk",
                     (json_int_t)b->seat.desk_id, "attempts", (int)b->rq_attempts);
        /* After TableClosing{CRASHED} the seat is gone: TABLE_CLOSED, or UNAVAILABLE while the
         * gateway moves us, answer what was in flight. UNAVAILABLE can also come first: the
         * gateway begins a crash move by reading the player's seat record, and answers what
         * arrives meanwhile (a same-id retry, say) before its TableClosing{CRASHED} goes out
         * (docs/gateway.md "When a game server dies"). It is retriable: the notice and the
         * Moved follow, and the bot plays on at the new table. */
        bool expected = stale || for_old_seat || e->code == CROUPIER__ERROR_CODE__UNAVAILABLE ||
                        (s->refusal_expected != NULL && s->refusal_expected(e->code)) ||
                        (b->closing_seen && e->code == CROUPIER__ERROR_CODE__NO_ROUND) ||
                        b->crash_wait;
        bot_book_error(book, code_name(e->code), expected);
        if (!expected)
            log_emit(LOG_WARN, "bot_action_refused", "{s:i,s:s,s:s,s:I,s:i}", "bot", (int)b->idx,
                     "code", code_name(e->code), "message", e->message != NULL ? e->message : "",
                     "desk", (json_int_t)b->seat.desk_id, "attempts", (int)b->rq_attempts);
    }
    if (s->on_event != NULL)
        s->on_event(b->sst, &b->seat, m);
    bot_maybe_leave(b);
    bot_schedule_decide(b);
}

static void bot_on_leave(bot_t *b, const Croupier__ServerMessage *m)
{
    bool old_seat = b->rq_moved;
    bot_req_clear(b);
    const Croupier__Error *e =
        m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT ? m->result->error : NULL;
    if (e != NULL && old_seat && b->has_seat && !b->crash_wait) {
        /* Refused for the seat we were moved from (a Moved came while it was in flight): we sit
         * at the new table, so say the Leave there. */
        log_emit(LOG_INFO, "bot_reply_for_old_seat", "{s:i,s:s,s:s,s:I,s:i}", "bot", (int)b->idx,
                 "request", "leave", "code", code_name(e->code), "desk",
                 (json_int_t)b->seat.desk_id, "attempts", (int)b->rq_attempts);
        bot_book_error(b->f->cfg.book, code_name(e->code), true);
        b->left_sent = false;
        b->st = BS_SEATED;
        bot_maybe_leave(b);
        bot_schedule_decide(b); /* a round it is dealt into there is finished first */
        return;
    }
    if (e != NULL && b->crash_wait) {
        /* Our table's server is gone and the gateway is moving us: say the Leave at the new
         * table (the Moved brings it), or nowhere if no move follows. */
        bot_book_error(b->f->cfg.book, code_name(e->code), true);
        b->left_sent = false;
        b->st = BS_SEATED;
        return;
    }
    if (e != NULL && e->code == CROUPIER__ERROR_CODE__ROOM_STARTED) {
        /* A room in play is left when it ends: the bot stops here, its seat plays on (on
         * trustee) until the room's last deal. */
        bot_book_error(b->f->cfg.book, code_name(e->code), true);
    } else if (e != NULL && e->code == CROUPIER__ERROR_CODE__TABLE_CLOSED) {
        /* The seat went with its server: nothing is left to leave. */
        bot_book_error(b->f->cfg.book, code_name(e->code), true);
        bot_book_crash_voided(b->f->cfg.book, b->idx, now_ms());
    } else if (e != NULL && e->code != CROUPIER__ERROR_CODE__NOT_SEATED) {
        bot_book_error(b->f->cfg.book, code_name(e->code), !code_retriable(e) ? false : true);
    }
    b->st = BS_LEFT;
    fleet_check_stopped(b->f);
}

static void bot_on_reply(bot_t *b, const Croupier__ServerMessage *m)
{
    if (m->request_id != b->rq_id || b->rq == RQ_NONE)
        return; /* a late answer to an attempt already answered */
    if (m->body_case == CROUPIER__SERVER_MESSAGE__BODY_RESULT && m->result->error != NULL &&
        m->result->error->code == CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED &&
        b->rq_attempts <= b->f->cfg.max_retries) {
        /* docs/gateway.md: the budget ran out; the request is idempotent, so it is sent again
         * with the same id (by the request timer, after a short jittered pause). */
        bot_book_error(b->f->cfg.book, code_name(CROUPIER__ERROR_CODE__DEADLINE_EXCEEDED), true);
        timer_arm(b->rq_timer, 20 + jitter(b, 80 * b->rq_attempts));
        return;
    }
    switch (b->rq) {
    case RQ_LOGIN:
        bot_on_login(b, m);
        break;
    case RQ_RESUME:
        bot_on_resume(b, m);
        break;
    case RQ_JOIN:
        bot_on_join(b, m);
        break;
    case RQ_ACTION:
        bot_on_action_reply(b, m);
        break;
    case RQ_LEAVE:
        bot_on_leave(b, m);
        break;
    case RQ_NONE:
        break;
    }
}

/* ---- pushed events ----------------------------------------------------------------------- */

/*
 * TableClosing{CLOSING_CRASHED} (docs/gateway.md): the table's server stopped without a clean
 * exit. The round in progress is crash-voided (no RoundEnd comes for it), the gateway forgot the
 * seat. With after_ms the gateway moves us: a Moved (or a second TableClosing) comes within it,
 * watched by the bot timer; without after_ms nothing follows and the bot joins again.
 */
static void bot_on_crash_closing(bot_t *b, const Croupier__TableClosing *tc)
{
    bot_book_t *book = b->f->cfg.book;
    bot_book_count(book, BOT_C_CRASH_CLOSINGS);
    bot_book_crash_voided(book, b->idx, now_ms());
    b->seat.in_round = false;
    b->action_abandoned = false;
    if (b->st != BS_SEATED && b->st != BS_LEAVING && b->st != BS_LEFT)
        return; /* between Login and the seat: the Resume or Join in flight tells */
    if (b->st == BS_LEFT) {
        b->has_seat = false; /* left already: nothing to wait for */
        fleet_check_stopped(b->f);
        return;
    }
    if (b->timer_is_action)
        evtimer_del(b->timer);
    if (tc->has_after_ms) {
        b->crash_wait = true;
        b->closing_seen = true;
        bot_timer_set(b, (int)tc->after_ms + 5000, false);
        return;
    }
    /* No move follows: join again (at once, or when the request in flight is answered). */
    b->crash_wait = false;
    b->closing_seen = false;
    b->has_seat = false;
    evtimer_del(b->timer);
    if (b->rq == RQ_NONE) {
        bot_send_join(b);
    } else {
        b->st = BS_JOIN;
        bot_timer_set(b, 50, false);
    }
}

static void bot_on_event(bot_t *b, const Croupier__ServerMessage *m)
{
    bot_book_t *book = b->f->cfg.book;
    const bot_strategy_ops_t *s = b->f->cfg.strategy;
    uint64_t desk = b->has_seat ? b->seat.desk_id : 0;
    if (log_enabled(LOG_DEBUG))
        log_emit(LOG_DEBUG, "bot_push", "{s:i,s:i,s:i,s:i,s:i}", "bot", (int)b->idx, "state",
                 (int)b->st, "body", (int)m->body_case, "turn_seat",
                 m->body_case == CROUPIER__SERVER_MESSAGE__BODY_TURN ? (int)m->turn->seat : -1,
                 "rq", (int)b->rq);
    switch (m->body_case) {
    case CROUPIER__SERVER_MESSAGE__BODY_DEAL:
        if (m->deal->round_id != NULL && m->deal->round_id[0] != '\0') {
            /* Only a Deal to our seat says we play the round: blackjack deals every seat's and
             * the dealer's cards to the whole table, also to seats without a bet (or whose
             * Leave is on its way: a round counted as ours then would never end for us). */
            if (!b->has_seat || !m->deal->has_seat || m->deal->seat != b->seat.seat)
                break;
            bot_book_round_started(book, b->idx, desk, m->deal->round_id, now_ms());
            b->seat.in_round = true;
        } else if (b->has_seat && m->deal->has_seat && m->deal->seat == b->seat.seat &&
                   m->deal->cards.len > 0) {
            /* Our own cards without a round id (hold'em hole cards): a round started; it is
             * named by its RoundEnd. */
            bot_book_round_started(book, b->idx, desk, NULL, now_ms());
            b->seat.in_round = true;
        }
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_ROUND_END: {
        b->last_round_end_us = clock_mono_ns() / 1000;
        const Croupier__RoundEnd *re = m->round_end;
        bot_round_outcome_t o = BOT_ROUND_NO_MONEY;
        if (re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED)
            o = BOT_ROUND_VOIDED;
        else if (re->has_rake && re->rake != 0)
            o = BOT_ROUND_FINISHED;
        for (size_t i = 0; i < re->n_deltas && o == BOT_ROUND_NO_MONEY; i++)
            if (re->deltas[i]->delta != 0)
                o = BOT_ROUND_FINISHED;
        bot_book_round_ended(book, b->idx, desk, re->round_id, o, now_ms());
        if (b->f->cfg.room_seats > 0 && re->outcome == CROUPIER__ROUND_OUTCOME__OUTCOME_COMPLETED) {
            b->room_seen++;
            for (size_t i = 0; i < re->n_deltas; i++)
                if (re->deltas[i]->player_id == b->player)
                    b->room_sum += re->deltas[i]->delta;
        }
    }
        b->seat.in_round = false;
        break;
    case CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING: {
        bot_book_count(book, BOT_C_TABLE_CLOSINGS);
        if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_BUSTED ||
            m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_ROOM_ENDED) {
            /* Out of chips (hold'em), or our room ended: the seat is gone, no Moved follows;
             * buy in again (the group's next room). */
            log_emit(LOG_DEBUG, "bot_busted", "{s:i}", "bot", (int)b->idx);
            if (b->st == BS_SEATED) {
                b->has_seat = false;
                evtimer_del(b->timer);
                if (b->rq == RQ_NONE)
                    bot_send_join(b);
                else {
                    /* Its answer is about the seat that just ended: an action the server
                     * took after the seat went is answered NOT_SEATED (a room whose last
                     * deal ended while the bot's move was on its way), which is expected. */
                    b->rq_moved = true;
                    b->st = BS_JOIN; /* joins once the request in flight is answered */
                    bot_timer_set(b, 50, false);
                }
            }
            return;
        }
        if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_CRASHED) {
            bot_on_crash_closing(b, m->table_closing);
            return;
        }
        if (m->table_closing->reason == CROUPIER__CLOSING_REASON__CLOSING_STORE_UNREACHABLE &&
            bot_book_round_open(book, b->idx)) {
            /* The server cut off from Redis stopped its tables (docs/protocol.md): a round in
             * play got its RoundEnd{VOID_STORE_UNREACHABLE} first; one still open here was being
             * recorded and is decided by Redis (no RoundEnd comes): counted like a crash's. */
            bot_book_crash_voided(book, b->idx, now_ms());
            b->seat.in_round = false;
        }
        if (b->closing_seen && b->st == BS_SEATED && !m->table_closing->has_after_ms) {
            /* A second TableClosing before any Moved: the gateway found no server to take the
             * seat (all draining, or cut off from Redis at once: docs/gateway.md "Table moves")
             * and says we are seated nowhere: join again. */
            bot_book_count(book, BOT_C_MOVES_FAILED);
            b->closing_seen = false;
            b->has_seat = false;
            evtimer_del(b->timer);
            if (b->rq == RQ_NONE) {
                bot_send_join(b);
            } else {
                b->rq_moved = true; /* its answer is about the seat that is gone */
                b->st = BS_JOIN;
                bot_timer_set(b, 50, false);
            }
            return;
        }
        b->closing_seen = true;
        if (b->st == BS_SEATED) {
            /* A Moved must follow; the watchdog shares the bot timer with actions. */
            int after = m->table_closing->has_after_ms ? (int)m->table_closing->after_ms : 0;
            bot_timer_set(b, after + 15000, false);
        }
        break;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_MOVED:
        bot_book_count(book, BOT_C_MOVES);
        if (m->moved->has_whole_table && m->moved->whole_table) {
            bot_book_count(book, BOT_C_TABLE_MOVES);
            if (b->last_round_end_us > 0)
                bot_book_move_latency(book, clock_mono_ns() / 1000 - b->last_round_end_us);
            b->check_move = true; /* against the Snapshot that follows */
            b->move_seat = b->seat.seat;
        }
        if (b->rq != RQ_NONE)
            b->rq_moved = true; /* its answer is about the seat we leave now */
        if (b->st == BS_SEATED || b->st == BS_LEAVING || b->st == BS_LEFT) {
            evtimer_del(b->timer);
            b->left_sent = false; /* a Leave said at the old table: say it at the new one */
            bot_on_joined(b, m->moved->to, true);
        } else {
            /* Between Login and our own Join/Resume reply: the seat we will get is reported
             * by that reply. */
            bot_set_seat(b, m->moved->to->desk_id, m->moved->to->seat, m->moved->to->engine,
                         m->moved->to->game, m->moved->to->stake);
        }
        return;
    case CROUPIER__SERVER_MESSAGE__BODY_GO_AWAY: {
        const char *reason = "OTHER";
        bool expected = false;
        switch (m->go_away->reason) {
        case CROUPIER__GO_AWAY_REASON__GOAWAY_SHUTDOWN:
            reason = "SHUTDOWN";
            expected = true;
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_OVERLOADED:
            reason = "OVERLOADED";
            expected = true;
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_SESSION_REPLACED:
            reason = "SESSION_REPLACED";
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_PROTOCOL_ERROR:
            reason = "PROTOCOL_ERROR";
            break;
        case CROUPIER__GO_AWAY_REASON__GOAWAY_IDLE:
            reason = "IDLE";
            break;
        default:
            break;
        }
        bot_book_goaway(book, reason);
        if (!expected) {
            char name[48];
            snprintf(name, sizeof name, "goaway_%s", reason);
            bot_book_error(book, name, false);
        }
        b->goaway = true;
        b->goaway_delay_ms = m->go_away->reconnect_delay_ms;
        return;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_ROOM:
        bot_room_seen(b, m->room, false);
        return;
    case CROUPIER__SERVER_MESSAGE__BODY_ERROR: {
        char name[64];
        snprintf(name, sizeof name, "server_error_%s", code_name(m->error->code));
        bot_book_error(book, name, false);
        return;
    }
    case CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT:
        /* The whole table moved (after its Moved): the table's state on its new server. */
        if (b->has_seat && m->snapshot->desk_id == b->seat.desk_id) {
            bot_take_snapshot(b, m);
            if (!b->closing_seen && b->rq == RQ_NONE)
                bot_schedule_decide(b);
            return;
        }
        break;
    default:
        break;
    }
    if (s->on_event != NULL && b->has_seat)
        s->on_event(b->sst, &b->seat, m);
    if (b->has_seat)
        bot_game_body(b, m);
    bot_maybe_leave(b); /* stopping, and the round just ended */
    if (!b->closing_seen && b->rq == RQ_NONE)
        bot_schedule_decide(b); /* bot_may_play() decides whether the state allows it */
    if (b->st == BS_LEFT)
        fleet_check_stopped(b->f);
}

/* ---- connection -------------------------------------------------------------------------- */

static void bot_read_cb(struct bufferevent *bev, void *arg)
{
    bot_t *b = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    b->last_rx_ms = now_ms(); /* any bytes, a partial frame too: the gateway is alive */
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
        delay = (int)b->goaway_delay_ms + jitter(b, 100);
    } else {
        b->backoff_ms = b->backoff_ms == 0 ? 100 : b->backoff_ms * 2;
        if (b->backoff_ms > 3000)
            b->backoff_ms = 3000;
        delay = b->backoff_ms / 2 + jitter(b, b->backoff_ms / 2);
    }
    b->st = BS_IDLE;
    bot_timer_set(b, delay, false);
}

/*
 * Closes the bot's connection. expected: the close is part of normal operation (GoAway, stop).
 * Anything in flight is abandoned; unless the fleet is stopping, a reconnect is armed.
 */
static void bot_drop(bot_t *b, const char *why, bool expected)
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
    if (b->st == BS_DONE || (b->st == BS_LEFT && !bot_book_round_open(b->f->cfg.book, b->idx)) ||
        (b->f->stopping && !b->has_seat)) {
        b->st = BS_DONE;
        evtimer_del(b->timer);
        fleet_check_stopped(b->f);
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
        b->last_rx_ms = now_ms(); /* the keepalive counts the silence from the connect */
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
            b->fail_since_ms = now_ms();
        if (!b->fail_reported && now_ms() - b->fail_since_ms > 20000) {
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
            bot_book_error(b->f->cfg.book,
                           b->crash_wait ? "crash_without_move" : "closing_without_move", false);
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
    int64_t now = now_ms();
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        if (b->bev != NULL && b->st >= BS_RESUME && b->st <= BS_LEFT &&
            now - b->last_tx_ms >= f->cfg.ping_ms)
            bot_send_ping(b);
        bot_keepalive(b, now);
    }
    timer_arm(f->ping_timer, fleet_sweep_ms(f));
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
    timer_arm(f->ping_timer, fleet_sweep_ms(f));
    for (uint32_t i = 0; i < f->cfg.bots; i++) {
        bot_t *b = &f->bots[i];
        b->st = BS_IDLE;
        bot_timer_set(b, jitter(b, f->cfg.ramp_ms), false);
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
static void fleet_check_stopped(bot_fleet_t *f)
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
    if (now_ms() >= f->stop_deadline_ms) {
        fleet_finish(f);
        return;
    }
    fleet_check_stopped(f);
    if (f->done != NULL)
        timer_arm(f->stop_timer, 100);
}

void bot_fleet_stop(bot_fleet_t *f, void (*done)(void *arg), void *arg)
{
    if (f->stopping)
        return;
    f->stopping = true;
    f->done = done;
    f->done_arg = arg;
    f->stop_deadline_ms = now_ms() + f->cfg.finish_timeout_ms;
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
    timer_arm(f->stop_timer, 100);
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
