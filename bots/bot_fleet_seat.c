/*
 * bot_fleet_seat.c -- a bot's seat and its strategy: the table as last seen (and its check
 * after a whole-table Moved), the seat set from Joined / Snapshot / Moved, whether the bot must
 * finish its round before leaving, the game's body of a message handed to the strategy, and
 * the decision (a think time, then bot_act asks the strategy for a move and sends it).
 * Internal to the fleet: bot_fleet_int.h has the contract.
 *
 * docs/bots.md "Pace (--think-percent)" and "Games and strategies" are the design;
 * bot_strategy.h is the strategies' contract. Runs on the fleet's loop, like every file of it.
 */
#include "bot_fleet_int.h"

/* ---- seat and strategy ------------------------------------------------------------------- */

/* Remembers the table's seats as a message shows them. */
void bot_seen_table(bot_t *b, Croupier__SeatInfo **seats, size_t n)
{
    memset(b->seen_players, 0, sizeof b->seen_players);
    for (size_t i = 0; i < n; i++)
        if (seats[i]->seat < 9 && seats[i]->has_player_id)
            b->seen_players[seats[i]->seat] = seats[i]->player_id;
}

/* The Snapshot after a whole-table Moved: the same seat and the same player in every seat it
 * knew (the match state itself is checked server-side: the adopter's own offer of the table
 * equals the one it adopted, tests/e2e/table_move.sh). */
void bot_check_moved_table(bot_t *b, const Croupier__Snapshot *sn)
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

void bot_set_seat(bot_t *b, uint64_t desk, uint32_t seat, Croupier__Engine engine, const char *game,
                  int64_t stake)
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
bool bot_must_finish(const bot_t *b)
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
void bot_maybe_leave(bot_t *b)
{
    if (b->f->stopping && b->st == BS_SEATED && !b->left_sent && b->rq == RQ_NONE &&
        !bot_must_finish(b)) {
        if (b->f->cfg.tournament != 0)
            bot_fleet_tour_stop_seat(b); /* a tournament seat cannot be left: just close */
        else
            bot_send_leave(b);
    }
}

/*
 * A table-kit game's envelope body in m (Snapshot.game_state, ServerMessage.game_event,
 * Play.action.game; docs/protocol.md "Games on the table kit"): decoded with the strategy's
 * descriptor for that kind (frame_unpack_game(), the client protocol's checks) and handed to
 * its on_game. Nothing happens for a strategy without on_game or without that descriptor. A
 * body that does not decode is an unexpected error ("malformed_game_body"): the server sent
 * what its own game cannot have meant.
 */
void bot_game_body(bot_t *b, const Croupier__ServerMessage *m)
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
void bot_after_seat(bot_t *b)
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
void bot_schedule_decide(bot_t *b)
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

void bot_act(bot_t *b)
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
