/*
 * bot_fleet_int.h -- what the bot fleet's files share (bot_fleet.c, bot_fleet_seat.c,
 * bot_fleet_msg.c, bot_fleet_tour.c): the bot, group and fleet structures, a bot's states and
 * request kinds, and the functions one file calls in another. Internal to croupier_bot: nothing
 * outside bots/ includes it. bot_fleet.h is the contract to the process and the tests; docs/bots.md
 * "What a bot does" is the design.
 *
 * The files, one concern each:
 *
 *   bot_fleet.c       life and wire: the gateway list, the helpers (now_ms, jitter, timers),
 *                     the requests (bot_req_send and the bot_send_* of each request), the
 *                     connection (read callback, drop, reconnect, connect), the timers
 *                     (request deadline, the bot's timer, keepalive and the gateway's
 *                     liveness) and the fleet (create, start, stop, destroy)
 *   bot_fleet_seat.c  the seat and the strategy: the table as seen, the seat, whether a round
 *                     must be finished, the game's body, the think time and the move (bot_act)
 *   bot_fleet_msg.c   the gateway's messages: the replies to a bot's request (bot_on_reply)
 *                     and the pushed events (bot_on_event)
 *   bot_fleet_tour.c  tournaments (cfg.tournament, docs/bots.md "Tournaments"): what a bot
 *                     asks instead of a Join (RegisterTournament, GetTournament,
 *                     TakeTournamentSeat) and after a Login instead of a Resume, their
 *                     answers, the TournamentEvent pushes, TableClosing{CLOSING_TOURNAMENT},
 *                     the stop without a Leave, and a bot done with its tournament (its place,
 *                     closing once its last hand ended; all_done when every bot is). Its
 *                     verdicts on the answers and its tally are bot_tour.h (no I/O)
 *
 * Who owns what: everything runs on the fleet's one libevent loop (bot_fleet.h), so nothing
 * here is locked. The bot_fleet_t is made and freed by bot_fleet.c (bot_fleet_create,
 * bot_fleet_destroy), with its bots[] and groups[] arrays; a bot_t lives in f->bots from create
 * to destroy and is addressed by its index (b->idx, also its slot in the bot_book_t). By
 * concern (the file whose logic decides a field; others may set it on their way, e.g. a drop
 * clears the seat's flags):
 *     st (the bot's state machine)                                          every file
 *     bev, gw, last, ever_connected, backoff_ms, fail_*, lost_connection, loss_pending,
 *     next_rid, last_tx_ms, last_rx_ms, probe_ms, rq* (the request in flight and its bytes),
 *     timer, timer_is_action, left_sent, action_abandoned, room_gen, room_code,
 *     room_played, room_total, room_known (bot_room_seen)                   bot_fleet.c
 *     has_seat, seat, game, sst, rng, seen_players                          bot_fleet_seat.c
 *     goaway, goaway_delay_ms, closing_seen, crash_wait, check_move, move_seat,
 *     last_round_end_us, room_seen, room_sum, seat_doubt                    bot_fleet_msg.c
 *     tour_step, tour_done, tour_close_ms; the fleet's tour_all_done         bot_fleet_tour.c
 * A group's code and generation (bot_group_t) are written when its leader's Join reply shows
 * the room it created (bot_fleet_msg.c) and read by its members' room request (bot_fleet.c,
 * bot_send_room).
 *
 * The hooks of tournaments in the other files (each a call into bot_fleet_tour.c when
 * cfg.tournament is set): bot_send_join (the seat is asked for, not joined), bot_on_login (no
 * Resume by a remembered seat), bot_on_reply (the RQ_TOUR_* answers), bot_on_event
 * (TournamentEvent, TableClosing{CLOSING_TOURNAMENT}, a done bot's last RoundEnd),
 * bot_maybe_leave (no Leave), bot_drop and bot_timer_cb (a done bot is never reconnected).
 *
 * A new concern goes in a file of its own, bot_fleet_<concern>.c, listed above, with a section
 * of its own among the prototypes below; docs/architecture.md §2 lists the files too.
 */
#ifndef CROUPIER_BOT_FLEET_INT_H
#define CROUPIER_BOT_FLEET_INT_H

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

/* ---- types ---------------------------------------------------------------------------------- */

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

typedef enum {
    RQ_NONE = 0,
    RQ_LOGIN,
    RQ_RESUME,
    RQ_JOIN,
    RQ_ACTION,
    RQ_LEAVE,
    RQ_TOUR_REGISTER, /* RegisterTournament */
    RQ_TOUR_INFO,     /* GetTournament: follow the tournament again, or learn the bot's place */
    RQ_TOUR_SEAT,     /* TakeTournamentSeat */
} bot_req_kind_t;

/* A tournament bot's next step (bot_fleet_tour.c): what bot_send_join asks for. */
typedef enum {
    BOT_TS_REGISTER = 0, /* RegisterTournament (the first login of the process) */
    BOT_TS_FOLLOW,       /* GetTournament after a new login: follow it again, see the entry */
    BOT_TS_SEAT,         /* TakeTournamentSeat */
    BOT_TS_FINAL,        /* done: GetTournament for the place the bot did not see pushed */
} bot_tour_step_t;

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
    int closing_reason;        /* the last TableClosing's (a CROUPIER__CLOSING_REASON__*) */
    /* The table moved on (a Deal to our seat, a Turn, a RoundEnd, a Snapshot) this many times; an
     * action remembers the count it was decided at (rq_view): refused after the table moved on
     * while it was in flight (a tournament hand re-dealt, a round ended), it was overtaken. */
    uint32_t view_changes, rq_view;
    /* A tournament seat taken (TakeTournamentSeat's Snapshot) at view_changes == seat_view: an
     * action decided on that Snapshot alone (rq_view == seat_view) and refused is counted apart
     * (tour_snapshot_action_refused, docs/bots.md "Tournaments"). */
    bool seat_view_set;
    uint32_t seat_view;
    /* That seat's first hand is still on (no RoundEnd since the seat was taken): a refusal of
     * its moves is counted apart too (tour_snapshot_action_refused: tour_mtt saw one at a table
     * the bot had just been moved to, not decided on the Snapshot alone). */
    bool seat_first_hand;
    int64_t closing_ms;        /* when it came (bot_now_ms), for the watchdog's log line */
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
    /* Tournaments. */
    bot_tour_step_t tour_step;
    bool tour_done;        /* out / over / refused: closes once its last hand ended */
    bool tour_out_waiting; /* out of a match: waits (unseated) for its place at the end */
    int64_t tour_close_ms; /* the bound of that wait */
    bool tour_end_known;   /* done as out or won (the director's word): its hands ended */
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
    bool tour_all_done; /* all_done ran */
};

/* ---- functions one file calls in another ------------------------------------------------- */

/* bot_fleet.c: helpers, requests, the connection, the fleet. */
int64_t bot_now_ms(void);
int bot_jitter(bot_t *b, int ms);
void bot_timer_arm(struct event *ev, int ms);
void bot_timer_set(bot_t *b, int ms, bool is_action);
void bot_req_clear(bot_t *b);
const char *bot_code_name(int code);
int bot_req_send(bot_t *b, bot_req_kind_t kind, Croupier__ClientMessage *m);
void bot_send_resume(bot_t *b);
void bot_room_seen(bot_t *b, const Croupier__RoomInfo *ri, bool after_move);
void bot_send_join(bot_t *b);
void bot_send_leave(bot_t *b);
int bot_send_action(bot_t *b, bot_move_t *mv);
void bot_drop(bot_t *b, const char *why, bool expected);
void fleet_check_stopped(bot_fleet_t *f);

/* bot_fleet_seat.c: the seat and the strategy. */
void bot_seen_table(bot_t *b, Croupier__SeatInfo **seats, size_t n);
void bot_check_moved_table(bot_t *b, const Croupier__Snapshot *sn);
void bot_set_seat(bot_t *b, uint64_t desk, uint32_t seat, Croupier__Engine engine, const char *game,
                  int64_t stake);
bool bot_must_finish(const bot_t *b);
void bot_maybe_leave(bot_t *b);
void bot_game_body(bot_t *b, const Croupier__ServerMessage *m);
void bot_after_seat(bot_t *b);
void bot_schedule_decide(bot_t *b);
void bot_act(bot_t *b);

/* bot_fleet_msg.c: the gateway's messages. */
void bot_on_reply(bot_t *b, const Croupier__ServerMessage *m);
void bot_on_event(bot_t *b, const Croupier__ServerMessage *m);
void bot_on_resume(bot_t *b, const Croupier__ServerMessage *m);
bool bot_code_retriable(const Croupier__Error *e);
void bot_retry_later(bot_t *b, bot_req_kind_t kind, const Croupier__Error *e);

/* bot_fleet_tour.c: tournaments (only when cfg.tournament is set). */
void bot_fleet_tour_login(bot_t *b);
void bot_fleet_tour_next(bot_t *b);
void bot_fleet_tour_reply(bot_t *b, const Croupier__ServerMessage *m);
void bot_fleet_tour_event(bot_t *b, const Croupier__TournamentEvent *te);
void bot_fleet_tour_closing(bot_t *b, const Croupier__TableClosing *tc);
void bot_fleet_tour_stop_seat(bot_t *b);
void bot_fleet_tour_settle(bot_t *b);
/* The connection of a done bot closed (GoAway, an error): its open round, unseen or torn. */
void bot_fleet_tour_dropped(bot_t *b);
void bot_fleet_tour_check_all(bot_fleet_t *f);

#endif
