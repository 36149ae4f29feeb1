/*
 * gate_tour_events.c -- the director's events (TOUR_EVENTS_CHANNEL) as TournamentEvent pushes
 * (docs/protocol.md "Tournaments", "Pushes"); the requests are gate_tour.c's.
 */
#include "gate_tour_int.h"

static void gate_tour_push_one(gate_conn_t *c, const Croupier__TournamentEvent *te)
{
    Croupier__ServerMessage sm = CROUPIER__SERVER_MESSAGE__INIT;
    sm.body_case = CROUPIER__SERVER_MESSAGE__BODY_TOURNAMENT_EVENT;
    sm.tournament_event = (Croupier__TournamentEvent *)te;
    gate_conn_send(c, &sm);
}

/* Pushes te to every logged-in connection that follows the tournament, and to the connection of
 * `also` (a player the event names) when it does not follow it. */
static void gate_tour_push(gate_t *g, const Croupier__TournamentEvent *te, uint64_t also)
{
    gate_conn_t *c;
    TAILQ_FOREACH(c, &g->conns, all)
    {
        if (c->player == 0 || c->closing)
            continue;
        if (gate_tour_follows(c, te->tournament) || (also != 0 && c->player == also))
            gate_tour_push_one(c, te);
    }
}

/* Whether any connection here follows tournament id (or is player's). */
static bool gate_tour_anyone(gate_t *g, uint64_t id)
{
    gate_conn_t *c;
    TAILQ_FOREACH(c, &g->conns, all)
    if (c->player != 0 && !c->closing && gate_tour_follows(c, id))
        return true;
    return false;
}

static void gate_tour_event_fill(Croupier__TournamentEvent *te, const tour_client_event_t *ev,
                                 Croupier__TournamentEventKind kind)
{
    Croupier__TournamentEvent init = CROUPIER__TOURNAMENT_EVENT__INIT;
    *te = init;
    te->tournament = ev->tournament;
    te->kind = kind;
    te->log_id = (char *)ev->log_id;
}

/* The structure arrived for a LEVEL_UP: its blinds go with the push (without them if it could
 * not be read). */
static void gate_tour_level_cb(rconn_t *rc, redisReply *reply, void *arg)
{
    (void)rc;
    gate_tour_op_t *op = arg;
    op->pending--;
    gate_t *g = op->g;
    if (!g->destroying) {
        Croupier__TournamentEvent te;
        gate_tour_event_fill(&te, &op->ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_LEVEL_UP);
        te.has_level = true;
        te.level = (uint32_t)op->ev.level;
        tour_structure_t *s = NULL;
        char err[160];
        if (reply != NULL && reply->type == REDIS_REPLY_STRING &&
            tour_structure_parse(reply->str, reply->len, &s, err, sizeof err) == 0 &&
            op->ev.level >= 0 && (size_t)op->ev.level < s->nlevels) {
            const tour_level_t *l = &s->levels[op->ev.level];
            te.has_level_number = te.has_on_break = true;
            te.level_number = l->number;
            te.on_break = l->is_break;
            if (!l->is_break) {
                te.has_small_blind = te.has_big_blind = te.has_ante = te.has_big_blind_ante = true;
                te.small_blind = l->small_blind;
                te.big_blind = l->big_blind;
                te.ante = l->ante;
                te.big_blind_ante = l->big_blind_ante;
            }
        }
        gate_tour_push(g, &te, 0);
        tour_structure_destroy(s);
    }
    op->done = true;
    gate_tour_op_free(op);
}

/*
 * A message of TOUR_EVENTS_CHANNEL (tour_client_event_parse): STARTED, LEVEL_UP (with the
 * level's blinds, read from the structure), HAND_FOR_HAND, FINISHED and CANCELLED go to the
 * connections that follow the tournament (FINISHED to the winner's too); MOVED_TABLE (a move, a
 * late entry's seat) and ELIMINATED only to the connection of the player they name. Pub/sub has
 * no history: what is published while the subscription is down is not pushed (GetTournament
 * reads the state).
 */
void gate_tour_event_cb(rconn_t *rc, const char *channel, const char *data, size_t len, void *arg)
{
    (void)rc;
    (void)channel;
    gate_t *g = arg;
    tour_client_event_t ev;
    if (g->destroying || tour_client_event_parse(data, len, &ev) != 0)
        return;
    Croupier__TournamentEvent te;
    uint64_t conn_id;
    gate_conn_t *c;
    switch (ev.kind) {
    case TOUR_EV_STARTED:
        gate_tour_event_fill(&te, &ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_STARTED);
        te.has_players_left = true;
        te.players_left = (uint32_t)ev.players;
        gate_tour_push(g, &te, 0);
        break;
    case TOUR_EV_HAND_FOR_HAND:
    case TOUR_EV_HAND_FOR_HAND_OVER:
        gate_tour_event_fill(&te, &ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_HAND_FOR_HAND);
        te.has_hand_for_hand = te.has_players_left = true;
        te.hand_for_hand = ev.kind == TOUR_EV_HAND_FOR_HAND;
        te.players_left = (uint32_t)ev.players;
        gate_tour_push(g, &te, 0);
        break;
    case TOUR_EV_FINISHED:
        gate_tour_event_fill(&te, &ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_FINISHED);
        te.has_player = te.has_place = te.has_prize = te.has_players_left = true;
        te.player = ev.player;
        te.place = 1;
        te.prize = ev.prize;
        te.item = ev.item[0] != '\0' ? ev.item : NULL;
        te.players_left = 1;
        gate_tour_push(g, &te, ev.player);
        break;
    case TOUR_EV_CANCELLED:
        gate_tour_event_fill(&te, &ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_CANCELLED);
        te.detail = ev.reason;
        gate_tour_push(g, &te, 0);
        break;
    case TOUR_EV_STAGE:
        gate_tour_event_fill(&te, &ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_STAGE);
        te.has_stage = te.has_players_left = true;
        te.stage = (uint32_t)ev.stage;
        te.players_left = (uint32_t)ev.players;
        gate_tour_push(g, &te, 0);
        break;
    case TOUR_EV_MATCH_FINISHED:
        gate_tour_event_fill(&te, &ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_FINISHED);
        gate_tour_push(g, &te, 0);
        break;
    case TOUR_EV_MATCH_OUT:
    case TOUR_EV_MATCH_PLACE:
        /* A match's player out (his place comes at the end), and every player's place at the
         * end: to him alone. */
        if (!u64map_get(g->conn_by_player, ev.player, &conn_id) ||
            (c = gate_conn_get(g, conn_id)) == NULL || c->closing)
            break;
        gate_tour_event_fill(&te, &ev,
                             ev.kind == TOUR_EV_MATCH_PLACE && ev.place == 1
                                 ? CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_FINISHED
                                 : CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_ELIMINATED);
        te.has_player = true;
        te.player = ev.player;
        if (ev.kind == TOUR_EV_MATCH_PLACE) {
            te.has_place = te.has_prize = true;
            te.place = (uint32_t)ev.place;
            te.prize = ev.prize;
            te.item = ev.item[0] != '\0' ? ev.item : NULL;
        } else {
            te.has_stage = true;
            te.stage = (uint32_t)ev.stage;
            te.detail = "you are out of the match: your place comes with its end";
        }
        gate_tour_push_one(c, &te);
        break;
    case TOUR_EV_MOVE:
    case TOUR_EV_SEATED:
    case TOUR_EV_OUT:
        if (!u64map_get(g->conn_by_player, ev.player, &conn_id) ||
            (c = gate_conn_get(g, conn_id)) == NULL || c->closing)
            break;
        if (ev.kind == TOUR_EV_OUT) {
            gate_tour_event_fill(&te, &ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_ELIMINATED);
            te.has_place = te.has_prize = true;
            te.place = (uint32_t)ev.place;
            te.prize = ev.prize;
            te.item = ev.item[0] != '\0' ? ev.item : NULL;
        } else {
            gate_tour_event_fill(&te, &ev, CROUPIER__TOURNAMENT_EVENT_KIND__TOUR_EVENT_MOVED_TABLE);
            te.has_table = te.has_seat = true;
            te.table = (uint32_t)ev.table;
            te.seat = (uint32_t)ev.seat;
        }
        te.has_player = true;
        te.player = ev.player;
        gate_tour_push_one(c, &te);
        break;
    case TOUR_EV_LEVEL: {
        if (!gate_tour_anyone(g, ev.tournament) || g->rc == NULL)
            break;
        gate_tour_op_t *op = gate_tour_op_new(g, TOP_LEVEL);
        op->ev = ev;
        char id[TOUR_CLIENT_ID_TEXT], key[TOUR_CLIENT_KEY_MAX];
        snprintf(id, sizeof id, "%" PRIu64, ev.tournament);
        tour_client_key(key, sizeof key, id, "meta");
        const char *argv[] = {"HGET", key, "structure"};
        if (rconn_command_argv(g->rc, gate_tour_level_cb, op, 3, argv, NULL) != 0) {
            op->pending = 1;
            gate_tour_level_cb(g->rc, NULL, op); /* the push without blinds */
            break;
        }
        op->pending = 1;
        break;
    }
    default:
        break; /* registrations, deals, draws...: not told to clients */
    }
}
