/*
 * tk_int.h -- what the table kit's files share (tk.c and tk_*.c): the engine, table, seat, lobby,
 * join, room and handoff-job structures, the desks' message types and timer kinds, and the
 * functions one file calls in another. Internal to the kit (croupier_tk): no game includes it.
 * tk.h is the contract to games; docs/architecture.md §12 "The table kit" is the design.
 *
 * The files, one concern each:
 *
 *   tk.c         the core: the helpers every file uses, the pushes (event_seq), tk.h's
 *                accessors, the seats (humans, the free seats told to the lobby, seating and
 *                unseating, server bots standing up, Joined, Snapshot) and the table's close
 *   tk_money.c   the money of a seat (§12 "The money of a seat"): op ids, buy-in, top-up, the
 *                round's settlement, cash-out, and the money writer's callbacks
 *   tk_round.c   the rounds: hand history and deck, when the next round starts (gap timer) and
 *                when an empty table idles, the turn timer, the round's end (§12 "The order of a
 *                round's end"), the void, the start of a round
 *   tk_table.c   the table desk: its gs_desk_ops_t callbacks, Action / Leave / Resume, a join
 *                reaching its seat, server bots filling it, the fence, tk_table_open
 *   tk_move.c    whole-table moves (§12 "Whole-table moves") and the handoff jobs (tk_job_t) that
 *                run on the engine's jobs thread
 *   tk_room.c    private rooms (§12 "Private rooms")
 *   tk_bank.c    the banker of banker games (tk.h "tk_banker_set"): eligibility, rotation
 *   tk_window.c  action windows: several seats decide at once before one deadline (tk.h
 *                "Action windows", §12 "Action windows")
 *   tk_lobby.c   the lobby desk (§12 "Desks", "Idle tables")
 *   tk_engine.c  the engine on the main loop: the engine_ops_t entry points, a join's wallet
 *                look-up and buy-in, the flags, create and destroy
 *
 * Who owns what (§12 "Threads"):
 *
 *   tk_engine_t  made and freed by tk_engine.c (tk_engine_create, tk_engine_destroy). Read from
 *                every desk, never written after creation but for: destroying (main loop),
 *                rt_stopped (under jobs_mu: set by tk_lobby.c when the lobby desk goes, read by
 *                tk_move.c's tk_job_done). rc is the main loop's; ads, jobs and the metrics are
 *                safe from any thread.
 *   tk_lobby_t, tk_ref_t
 *                the lobby desk's (worker 0), read and written by tk_lobby.c only. tk_engine.c
 *                allocates the tk_lobby_t and gives it to gs_desk_create with tk_lobby_ops, whose
 *                on_destroy frees it.
 *   tk_join_t    made on the main loop (tk_engine.c), posted to the lobby desk, which posts it
 *                on to a table (tk_table.c's tk_table_join; tk_room.c keeps a copy while a
 *                room's code is drawn). A message dropped on the way answers its request
 *                UNAVAILABLE and frees it (tk_join_dropped, tk_lobby.c).
 *   tk_table_t   one table desk's. Made by tk_table_open (tk_table.c, on the lobby's thread,
 *                before the desk exists), freed by its on_destroy; in between every field is
 *                read and written only on that desk's thread: from a callback of tk_table.c,
 *                each of which enters through tk_enter() (it sets desk), or from a function of
 *                any kit file that such a callback calls. By concern (the file whose logic
 *                decides a field; others may set it on their way, e.g. tk_close clears
 *                gap_armed):
 *                  seat[] (state, player, bot, away, trustee, out)   tk.c, tk_table.c
 *                  seat[] money (stack, buyin, topping, topup_op, leave_after_topup, ops, acct)
 *                                                                    tk_money.c
 *                  seat[] round (playing, nshown, shown, bank_ms)    tk_round.c
 *                  event_seq, snap, snap_len, snap_set, snap_msg     tk.c
 *                  closed, close_told, pending_cashouts              tk.c (tk_close), tk_money.c
 *                  seq, button, round_id, history, dealt, deal, settling, settle_*,
 *                  xfer, nxfer,
 *                  forget_round, turn_*, gap_armed, idle_armed, idle_serial,
 *                  game_closed, record_sent                                   tk_round.c
 *                  joins_seen, retiring, fill_armed, bot_table, fenced        tk_table.c
 *                  move, move_*, offer_id, adopted, adopt_q, nadopt_q         tk_move.c
 *                  room, options (nseats and g when an adopted room's rules differ)  tk_room.c
                  win                                                tk_window.c
                  banker, last_banker                                tk_bank.c
 *   tk_room_t    made on the main loop by tk_room_prepare (tk_room.c), carried in the tk_join_t,
 *                the table's from tk_table_open on (freed by its on_destroy).
 *   tk_job_t     made on a table desk by tk_job_new (tk_move.c; tk_room.c for TK_JOB_ROOM_*),
 *                run on the engine's jobs thread (tk_job_run touches only the job), posted back
 *                as TK_MSG_MOVE_DONE (tk_move_done; the runtime frees the job afterwards).
 *
 * Extending the kit (a tournament mode, say): a new concern goes in a file of its own,
 * tk_<concern>.c, listed above, with a section of its own at the end of the prototypes below.
 * Its state hangs off tk_table_t or tk_engine_t by one pointer, NULL when unused (as room does);
 * its message types go at the end of the TK_MSG_* enum, its timer kinds at the end of TK_TIMER_*
 * (a timer's cookie is kind | serial << 8: a kind stays below 256); the table desk's callbacks
 * in tk_table.c dispatch to it. docs/architecture.md §2 and §12 list the files too.
 */
#ifndef CROUPIER_TK_INT_H
#define CROUPIER_TK_INT_H

#include "tk.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "deck.h"
#include "jobs.h"
#include "lobby.h"
#include "log.h"
#include "mcluster.h"
#include "money.h"
#include "money_writer.h"
#include "registry.h"
#include "rconn.h"
#include "room.h"
#include "xmalloc.h"

/* ---- types and constants ---------------------------------------------------------------- */

#define TK_MAX_STAKE (MONEY_MAX_AMOUNT / 1000000)
#define TK_SNAP_MAX 8192

/*
 * The desks and their messages (engine types from GS_MSG_ENGINE).
 *
 * Desks. One lobby desk per engine (worker 0) routes joins to table desks (spread over the
 * workers). The engine's main-loop side looks up the joining player's wallet (rconn) to choose
 * the buy-in, and keeps the lobby ads (lobby.h publisher, any thread).
 *
 * Messages between them:
 *   main  -> lobby  TK_MSG_JOIN          a join with its buy-in chosen (ptr = tk_join_t)
 *   lobby -> table  TK_MSG_JOIN          the same join, a seat reserved for it
 *   table -> lobby  TK_MSG_SEATS         arg = table desk, arg2 = joins seen << 32 | seats free
 *   table -> lobby  TK_MSG_IDLE          the table has been empty for idle_ms (arg2 as SEATS)
 *   lobby -> table  TK_MSG_RETIRE        arg2 = 1: no join is on its way, destroy yourself if
 *                                        still empty; 0: stay (a join is on its way)
 *
 * The lobby counts the joins it sent to each table and the table the joins it received, so a
 * table's report of its free seats never forgets a join still on its way there.
 *   table -> lobby  TK_MSG_CLOSED        the table closed (drain): forget its free seats
 *   writer -> table TK_MSG_BUYIN_DONE    a buy-in's result (a money follow-up, gs.h)
 *   writer -> table TK_MSG_CASHOUT_DONE  a closing cash-out was applied
 *   writer -> table TK_MSG_SETTLED       a round's settlement result (a money follow-up): only
 *                                        now is RoundEnd pushed
 * Whole-table moves (tk.h "moves"; the handoff calls run on the engine's money_jobs thread):
 *   main  -> lobby  TK_MSG_ADOPT         an Adopt request (ptr = gs_request_t): to the table of
 *                                        that offer, or to a new table opened for it
 *   lobby -> table  TK_MSG_ADOPT         the same request
 *   jobs  -> table  TK_MSG_MOVE_DONE     a handoff call's result (ptr = tk_job_t)
 *
 * The others are described beside their names below.
 */
enum {
    TK_MSG_JOIN = GS_MSG_ENGINE,
    TK_MSG_SEATS,
    TK_MSG_IDLE,
    TK_MSG_RETIRE,
    TK_MSG_CLOSED,
    TK_MSG_BUYIN_DONE,
    TK_MSG_CASHOUT_DONE,
    TK_MSG_TOPUP_DONE, /* writer -> table: a top-up's result (arg = seat, arg2 = op number) */
    TK_MSG_OPEN,       /* any -> lobby: open a table with bots (ptr = tk_open_t) */
    TK_MSG_ADD_BOTS,   /* lobby -> table: seat arg bots, the table plays by itself */
    TK_MSG_SETTLED,    /* writer -> table: the round's settlement result (arg2 = round seq) */
    TK_MSG_ADOPT,      /* main -> lobby -> table: an Adopt request (ptr = gs_request_t) */
    TK_MSG_MOVE_DONE,  /* jobs -> table: a handoff call's result (ptr = tk_job_t) */
    TK_MSG_GONE,       /* table -> lobby: forget the table (arg = desk) */
    TK_MSG_ROOM,       /* table -> lobby: the table is the room of code ptr (arg = desk) */
    /* Tournament tables (tk_tour.c): */
    TK_MSG_TOUR_SCAN,    /* main -> lobby: begin looking for tables to host */
    TK_MSG_TOUR_CLAIMED, /* tour jobs -> lobby: a scan's claims (ptr = the job) */
    TK_MSG_TOUR_START,   /* lobby -> table: a claimed table's desk begins */
    TK_MSG_TOUR_DONE,    /* tour jobs -> table: a deal, hand, renew or release result */
};

enum {
    TK_TIMER_GAP = 1,
    TK_TIMER_TURN,
    TK_TIMER_IDLE,
    TK_TIMER_NOTICE,
    TK_TIMER_FILL,
    TK_TIMER_GAME,
    TK_TIMER_MOVE,
    TK_TIMER_ROOM,
    TK_TIMER_TOUR_SCAN,  /* lobby: the next look for tables to host */
    TK_TIMER_TOUR_ASK,   /* a tournament table asks its next deal again */
    TK_TIMER_TOUR_RENEW, /* a tournament table renews its claim */
    TK_TIMER_TOUR_JOIN,  /* a match's deal starts without the players not come (serial) */
    TK_TIMER_WINDOW,     /* an action window's next automatic move or deadline (tk_window.c) */
};

/* An action window (tk.h "Action windows", tk_window.c): a few words, embedded in the table
 * (every table may open one; nothing to allocate or free). */
typedef struct {
    bool open;
    bool armed;       /* timer armed */
    bool expired;     /* its deadline passed: only automatic moves still due are waited for */
    uint32_t seats;   /* the seats it opened with (bit s = seat s) */
    uint32_t pending; /* those still to decide */
    uint64_t id;      /* windows opened so far: a callback that opened another one is seen */
    uint64_t serial;  /* of its timer: an older timer is stale */
    rt_timer_id_t timer;
    int64_t deadline_ms;          /* monotonic */
    int64_t due_ms[TK_MAX_SEATS]; /* when each pending seat's automatic move comes */
} tk_window_t;

/* One transfer of a round settled pairwise (tk.h "tk_round_end_transfers"), its reason copied. */
typedef struct {
    int from, to; /* seats; to TK_HOUSE: the rake */
    int64_t amount;
    char reason[TK_REASON_MAX + 1];
} tk_xfer_t;

/* Gateway links with spectators of one table, at most (tk_spect.c). */
#define TK_SPECT_LINKS 32
/* Spectators per table when --<prefix>-spectators is 0. */
#define TK_SPECTATORS 100

typedef struct tk_tour tk_tour_t;           /* a tournament table's (tk_tour.c) */
typedef struct tk_tour_host tk_tour_host_t; /* an engine's hosting of them (tk_tour.c) */

/* Server bots' player ids: a range no wallet player uses. */
#define TK_BOT_ID_BASE (1ULL << 62)

typedef enum { TK_EMPTY = 0, TK_BUYING, TK_SEATED, TK_LEAVING, TK_CLOSED } tk_seat_state_t;

/*
 * The house's seat account, with the money by entity (money.h money_set_entity) in a game with
 * the house in the round (tk_round_end_house): there a round's settlement is one script in the
 * server epoch's slot, so the house settles through an account of that epoch,
 * th.<svc>.<slot>.<epoch>, held for the house wallet like a bot's seat: funded from the wallet by
 * a seat transfer queued just before a settlement it could not pay, what it won beyond three
 * floats sent back after one, the rest returned to the wallet by the epoch's recovery
 * (docs/queues.md "The game server's money by entity"). One per engine, shared by its tables (their
 * desk threads), every field under mu; tk_money.c owns it.
 */
typedef struct {
    pthread_mutex_t mu;
    uint32_t slot;
    uint64_t epoch;
    char acct[MONEY_NAME_MAX + 1]; /* "" until the first settlement */
    /* What the account holds once every item queued is applied: a lower bound (a refused
     * settlement sets it to 0, so the next funding covers the round whatever the account
     * holds; more chips than needed there are the house's all the same). */
    int64_t bal;
    uint64_t ops; /* fundings queued (their op ids) */
} tk_house_acct_t;

typedef struct tk_engine {
    gs_t *gs;
    const tk_game_t *game;
    tk_settings_t set;
    rt_desk_id_t lobby;
    rconn_t *rc; /* main loop: wallet look-ups */
    lobby_pub_t *ads;
    bool destroying;
    char house[MONEY_NAME_MAX + 1]; /* the house wallet (bots, banking games) */
    char games[128];                /* the games served: tk_game_t.games or a subset (--games) */
    char svc[24];                   /* the service in seat accounts and op ids (tk_service_token) */
    metrics_t *m_tables, *m_opened, *m_seated, *m_timeouts, *m_auto;
    metrics_t *m_spectators; /* tk_spectators: spectators of the engine's tables (tk_spect.c) */
    metrics_t *m_moved_out, *m_moved_in, *m_move_withdrawn, *m_move_failed;
    money_jobs_t *jobs; /* handoff calls (NULL without Redis: tables close instead of moving) */
    /* The money by entity (money_entity()): the handoff calls' cluster client and money, made
     * by the first job that needs them and used on the jobs thread only; freed after the jobs. */
    rcluster_t *ho_rc;
    mcluster_t *ho_m;
    rcluster_script_t *room_script; /* the rooms' record writes by entity (lease/room.h) */
    pthread_mutex_t jobs_mu;
    bool rt_stopped; /* under jobs_mu: the lobby desk is gone, results are no longer posted */
    char labels[96];
    tk_tour_host_t *tour;   /* tournament tables hosted (tk_tour.c), or NULL */
    tk_house_acct_t *hacct; /* the house's seat account (tk_money.c), or NULL */
} tk_engine_t;

/* A join on its way from the main loop to a table, with the buy-in chosen. */
typedef struct tk_room tk_room_t;

typedef struct {
    gs_t *gs;
    gs_request_t *req;
    int64_t amount;
    tk_room_t *room; /* CreateRoom: the room to open (owned until a table takes it) */
} tk_join_t;

typedef struct {
    rt_desk_id_t desk;
    char game[MONEY_NAME_MAX + 1];
    int64_t stake;
    int seats, free;
    uint32_t joins_sent; /* joins posted to the table (it reports the number it received) */
    bool closed;
    char offer[MONEY_ID_MAX + 1]; /* the handoff offer the table was opened to adopt, or "" */
    bool is_room;                 /* a private room: never advertised nor matched */
    char room[ROOM_CODE_LEN + 1]; /* its code, once drawn */
} tk_ref_t;

/* A table with bots to open (tk_engine_open_table). */
typedef struct {
    char game[MONEY_NAME_MAX + 1];
    int64_t stake;
    int bots;
} tk_open_t;

typedef struct {
    tk_engine_t *eng;
    tk_ref_t *refs;
    size_t nrefs, cap;
} tk_lobby_t;

typedef struct {
    uint64_t player;
    tk_seat_state_t state;
    bool away;    /* the connection is gone (PlayerGone); cleared by a resume or an action */
    bool trustee; /* timed out: the automatic move plays after TK_TRUSTEE_MS */
    bool playing; /* dealt into the current round */
    bool bot;     /* a server bot: plays for the house, never counts as a human */
    bool topping; /* a top-up is in flight (tk_game_t.topup) */
    bool leave_after_topup; /* left while topping: unseated once the top-up is applied */
    uint64_t topup_op;      /* the op number of the top-up in flight (a cash-out may follow it) */
    bool out;               /* sitting out: no round deals it in (tk_seat_sit_out) */
    int64_t stack;
    int64_t bank_ms;
    gs_request_t *join_req;
    int64_t buyin; /* the buy-in (or top-up) in flight */
    uint8_t shown[TK_SHOWN_MAX];
    size_t nshown;
    /* kept across occupants (memset up to ops clears an occupant): */
    uint64_t ops; /* money operations of this seat so far (op ids) */
    char acct[MONEY_NAME_MAX + 1];
} tk_seat_t;

/* A whole-table move (tk.h "moves"): the old table's side, then the adopter's. */
typedef enum {
    TK_MOVE_NONE = 0,
    TK_MOVE_PREPARING,   /* waiting for the seats' money in flight before the offer */
    TK_MOVE_OFFERING,    /* the offer is being written */
    TK_MOVE_OFFERED,     /* waiting for an adopter (TK_TIMER_MOVE checks the offer) */
    TK_MOVE_CHECKING,    /* a check of the offer is in flight */
    TK_MOVE_WITHDRAWING, /* nobody adopted in time: taking the offer back */
    TK_MOVE_ADOPTING,    /* adopter: the adoption is in flight (Adopt requests wait) */
} tk_move_t;

#define TK_ADOPT_QUEUE (2 * TK_MAX_SEATS)

/* A private room (tk.h "rooms"): its record (lease/room.h) and what the table does with it. */
struct tk_room {
    room_record_t rec;
    tk_join_t *create; /* the host's CreateRoom, waiting for its code */
    bool ended;
};

struct tk_table {
    tk_engine_t *eng;
    rt_desk_t *desk; /* the desk of the callback running now */
    void *g;
    char game[MONEY_NAME_MAX + 1];
    int64_t stake;
    int nseats;
    tk_seat_t seat[TK_MAX_SEATS];
    uint32_t slot;  /* the server's slot and epoch when the table was made: they name its */
    uint64_t epoch; /* seat accounts and op ids for the table's whole life */
    uint64_t seq;   /* rounds begun */
    uint64_t event_seq;
    bool dealt;       /* this round's deck came from tk_deal_shuffle(): deal is its */
    deck_deal_t deal; /* deck order, nonce and commitment (docs/fairness.md) */
    int button;
    bool gap_armed, closed, close_told, idle_armed, retiring, fill_armed;
    bool bot_table;    /* opened with bots (tk_engine_open_table): they never stand up */
    bool forget_round; /* round_void() is still owed for a round the kit voided */
    /* The round ended and its settlement is on its way: RoundEnd (and everything after it) waits
     * for the settlement to be applied, so no player is ever shown a result that is not. */
    bool settling;
    int64_t settle_delta[TK_MAX_SEATS], settle_rake;
    bool settle_house; /* the settlement named the house's seat account (tk_house_acct_t) */
    /* The round's transfers (tk_round_end_transfers; nxfer 0: settled by deltas alone), kept
     * until its RoundEnd and history are out. */
    tk_xfer_t xfer[TK_MAX_TRANSFERS];
    int nxfer;
    int pending_cashouts;
    uint32_t joins_seen;               /* TK_MSG_JOIN received (tk_tell_lobby reports it) */
    uint64_t turn_serial, idle_serial; /* of the turn / idle timers: an older one is stale */
    int turn_seat;
    rt_timer_id_t turn_timer;
    bool turn_armed;
    int64_t turn_start_ms, turn_allowed_ms;
    json_t *history;
    char round_id[MONEY_ID_MAX + 1];
    uint8_t *snap; /* tk_snapshot_state() writes the state body here */
    size_t snap_len;
    bool snap_set;
    Croupier__Snapshot *snap_msg; /* the Snapshot being built, during snapshot() only */
    /* Whole-table moves. */
    tk_move_t move;
    bool move_refused; /* it closes instead (a withdrawn or failed offer) */
    bool fenced;       /* the server fenced itself (tk_table_on_fence): closed, players told */
    bool adopted;      /* the table came here by a move (offer_id is the offer it adopted) */
    bool game_closed;  /* tk_game_t.table_close() was called (tk_game_close) */
    bool record_sent;  /* the table's own record was queued (tk_table_record) */
    bool move_held;    /* the move counts as a human desk: the drain waits (tk_move_hold) */
    int64_t move_until_ms;
    int64_t move_start_ms;
    int move_checks; /* reads of the offer so far (tk_move_check_ms) */
    char offer_id[MONEY_ID_MAX + 1];
    gs_request_t *adopt_q[TK_ADOPT_QUEUE]; /* Adopt requests waiting for the adoption */
    int nadopt_q;
    tk_room_t *room;   /* a private room, or NULL */
    char options[256]; /* the room's rule options as the engine's option text ("": the
                          server's, tk_engine_options) */
    tk_tour_t *tour;   /* a tournament table (tk_tour.c), or NULL */
    tk_window_t win;   /* the action window (tk_window.c); win.open false when none */
    int banker;        /* this round's banker (tk_bank.c), or -1 */
    int last_banker;   /* the last round's that had one, for the rotation; -1: none yet */
    /* Spectators (tk_spect.c, docs/spectators.md): each gateway link's count, as it said. */
    uint64_t spect_link[TK_SPECT_LINKS];
    uint32_t spect_n[TK_SPECT_LINKS];
    int nspect_links;
    uint32_t spectators; /* their sum */
    bool spect_ended;    /* WatchEnded was pushed: the table takes no spectator any more */
};

/* The handoff calls of whole-table moves and private rooms (tk_move.c, tk_room.c). */
typedef enum {
    TK_JOB_OFFER = 1,
    TK_JOB_CHECK,
    TK_JOB_WITHDRAW,
    TK_JOB_ADOPT,
    TK_JOB_ROOM_CREATE, /* a room's code and first record (room_sync_create) */
    TK_JOB_ROOM_WRITE,  /* a room's record rewritten (room_sync_write) */
} tk_job_kind_t;

/* One handoff call, run on the engine's jobs thread and posted back to its table. */
typedef struct {
    money_job_t job;
    tk_job_kind_t kind;
    tk_engine_t *eng;
    rt_t *rt;
    rt_desk_id_t desk;
    char service[MONEY_NAME_MAX + 1];
    char offer_id[MONEY_ID_MAX + 1];
    char self[MONEY_ID_MAX + 1]; /* OFFER: this server's id (registry entry id) */
    /* OFFER, WITHDRAW: the offer (its strings point into accts/owners and state) */
    money_offer_t offer;
    char accts[MONEY_MAX_PLAYERS][MONEY_NAME_MAX + 1];
    char owners[MONEY_MAX_PLAYERS][MONEY_NAME_MAX + 1];
    char *state; /* OFFER: the state written; ADOPT: the state read back (owned) */
    /* ADOPT: the adopter's table */
    uint32_t slot;
    uint64_t epoch;
    char game[MONEY_NAME_MAX + 1];
    int64_t stake;
    int nseats;
    char table_accts[TK_MAX_SEATS][MONEY_NAME_MAX + 1]; /* every seat's: a room keeps its own */
    /* results */
    int status;
    char status_text[16]; /* CHECK, WITHDRAW: offered | adopted | void | withdrawn */
    char error[200];
    size_t n; /* ADOPT: the seat accounts adopted, their seats and stacks */
    int seats[MONEY_MAX_PLAYERS];
    int64_t stacks[MONEY_MAX_PLAYERS];
    char adopter[MONEY_ID_MAX + 1]; /* ADOPT refused MONEY_ERR_ADOPTED: who has it */
    /* ROOM_*: the record to write (owned), its expiry, whether the writer takes it over */
    room_record_t *room;
    int64_t ttl_ms;
    bool take;
} tk_job_t;

/* ---- functions one file calls in another ------------------------------------------------- */

/* tk.c: helpers, seats, Joined / Snapshot, the close. */
void tk_count_refusal(tk_engine_t *eng, Croupier__ErrorCode code);
void tk_player_name(uint64_t player, char *buf, size_t len);
void tk_owner_wallet(const tk_engine_t *eng, const tk_seat_t *s, char *buf, size_t len);
bool tk_seat_told(const tk_seat_t *s);
unsigned tk_humans(const tk_table_t *t);
void tk_sync(tk_table_t *t);
int tk_free_seats(const tk_table_t *t);
uint64_t tk_seats_word(const tk_table_t *t);
void tk_tell_lobby(tk_table_t *t);
void tk_unseat(tk_table_t *t, int i);
void tk_bots_stand(tk_table_t *t);
void tk_reply_joined(tk_table_t *t, gs_request_t *req, int seat);
void tk_reply_snapshot(tk_table_t *t, gs_request_t *req, int seat);
void tk_seated(tk_table_t *t, int i);
void tk_tell_closing(tk_table_t *t);
void tk_close(tk_table_t *t);
/* The table closes for good here with the game's state: tk_game_t.table_close(), once. */
void tk_game_close(tk_table_t *t);
void tk_bust(tk_table_t *t, int i);

/* tk_money.c: a seat's money. tk_money_log_cb runs on the money writer's thread. */
void tk_money_log_cb(money_result_t *res, void *arg);
void tk_cash_out(tk_table_t *t, int seat);
bool tk_settle(tk_table_t *t, const int64_t *delta, bool house, int64_t house_delta, int64_t rake);
/* The house's seat account (tk_house_acct_t), made at the engine's create and freed at its
 * destroy; a settlement that named it was refused: its balance is unknown again. */
tk_house_acct_t *tk_house_acct_create(void);
void tk_house_acct_destroy(tk_house_acct_t *ha);
void tk_house_unsettled(tk_table_t *t);
int tk_submit_buyin(tk_table_t *t, int i, const char *wallet, int64_t amount, bool topup);
void tk_buyin_done(tk_table_t *t, int i, uint64_t n, const money_result_t *res);
void tk_topup(tk_table_t *t, int i);
void tk_topup_done(tk_table_t *t, int i, uint64_t n, const money_result_t *res);
void tk_buyin_range(const tk_engine_t *eng, const char *game, int64_t stake, int64_t *max,
                    int64_t *min);

/* tk_round.c: rounds, turns, the round's end and the void. */
int64_t tk_min_stack(tk_table_t *t);
void tk_maybe_schedule(tk_table_t *t);
void tk_maybe_idle(tk_table_t *t);
void tk_turn_hurry(tk_table_t *t);
void tk_turn_restore(tk_table_t *t);
void tk_spend_bank(tk_table_t *t, int seat, int64_t used_ms);
void tk_settled(tk_table_t *t, uint64_t seq, const money_result_t *res);
/* The automatic move's delay now (trustee_ms, or TK_TRUSTEE_NOBODY_MS when nobody watches). */
int64_t tk_trustee_ms(const tk_table_t *t);
void tk_void(tk_table_t *t, Croupier__VoidReason why);
void tk_start_round(tk_table_t *t);
/* The round's history record as it would be written completed with delta and rake (a new
 * reference; t->history unchanged), or NULL between rounds. */
json_t *tk_history_record(tk_table_t *t, const int64_t *delta, int64_t rake);

/* tk_table.c: the table desk. tk_game_seats and tk_table_open run on the lobby's thread (and
 * tk_game_seats on the main loop too: it reads only the engine's settings). */
int tk_find(const tk_table_t *t, uint64_t player);
void tk_refuse(tk_table_t *t, gs_request_t *req, Croupier__ErrorCode code, const char *why);
void tk_table_join(tk_table_t *t, tk_join_t *j);
void tk_maybe_fill(tk_table_t *t);
void tk_fence(tk_table_t *t);
int tk_game_seats(const tk_engine_t *eng, const char *game);
int tk_table_open(tk_engine_t *eng, const char *game, int64_t stake, tk_room_t *room,
                  rt_desk_id_t *out);
/* A tournament table's desk (tour: owned by the table from here on, also on failure). */
int tk_table_open_tour(tk_engine_t *eng, const char *game, int64_t stake, tk_tour_t *tour,
                       rt_desk_id_t *out);

/* tk_move.c: whole-table moves and the handoff jobs. */
void tk_server_id(tk_table_t *t, char *buf, size_t len);
tk_job_t *tk_job_new(tk_table_t *t, tk_job_kind_t kind);
int tk_job_submit(tk_table_t *t, tk_job_t *j);
void tk_move_hold(tk_table_t *t, bool hold);
void tk_move_or_close(tk_table_t *t);
void tk_move_timer(tk_table_t *t);
void tk_adopt_answer_all(tk_table_t *t, Croupier__ErrorCode code, const char *why,
                         const char *adopted_by);
void tk_table_adopt(tk_table_t *t, gs_request_t *req);
void tk_move_done(tk_table_t *t, tk_job_t *j);

/* tk_room.c: private rooms. tk_room_prepare runs on the main loop. */
bool tk_room_ended(const tk_table_t *t);
void tk_room_started(tk_table_t *t);
void tk_room_dealt(tk_table_t *t, const int64_t *delta);
void tk_room_end(tk_table_t *t, const char *detail);
void tk_room_create(tk_table_t *t, const tk_join_t *join);
void tk_room_job_done(tk_table_t *t, tk_job_t *j);
void tk_room_timer(tk_table_t *t);
void tk_room_import(tk_table_t *t, const json_t *room);
bool tk_room_join_refused(tk_table_t *t, gs_request_t *req);
Croupier__ErrorCode tk_room_prepare(tk_engine_t *eng, const Croupier__Join *jn,
                                    const Croupier__RoomRules *rules, tk_room_t **out,
                                    const char **why);

/* tk_tour.c: tournament tables (docs/tournaments.md "Tables at the servers"). The engine's
 * hosting is made and freed on the main loop; tk_tour_lobby_* run on the lobby desk; the rest on
 * the table's desk, for a table whose tour is set. */
int tk_tour_engine_create(tk_engine_t *eng);
void tk_tour_engine_destroy(tk_engine_t *eng);
void tk_tour_lobby_scan(rt_desk_t *desk, tk_engine_t *eng);
void tk_tour_lobby_claimed(rt_desk_t *desk, tk_engine_t *eng, void *job);
void tk_tour_start(tk_table_t *t);
void tk_tour_ask(tk_table_t *t);                          /* instead of tk_start_round */
bool tk_tour_report(tk_table_t *t, const int64_t *delta); /* instead of tk_settle */
void tk_tour_after_round(tk_table_t *t, bool voided);     /* the round's end, seats */
void tk_tour_done(tk_table_t *t, void *job);              /* TK_MSG_TOUR_DONE */
void tk_tour_timer(tk_table_t *t, int kind);
void tk_tour_join_timer(tk_table_t *t, uint64_t serial); /* TK_TIMER_TOUR_JOIN */
void tk_tour_present(tk_table_t *t);                     /* a seat resumed (no longer away) */
void tk_tour_start_failed(tk_table_t *t);    /* the game refused to start the deal (backs off) */
void tk_tour_acted(tk_table_t *t, int seat); /* the seat's player sent a move himself */
void tk_tour_stop_now(tk_table_t *t, const char *why); /* drain, void, fence, close */
bool tk_tour_request_refused(tk_table_t *t, gs_request_t *req);
void tk_tour_destroy(tk_table_t *t);
int tk_tour_seats(const tk_tour_t *tour); /* its structure's seats_per_table */
void tk_tour_history(tk_table_t *t);      /* the hand's fields in its history record */
bool tk_tour_seat_score(const tk_table_t *t, int seat, int64_t *score); /* a match table's */

/* tk_window.c: action windows (tk.h "Action windows"), on the table's desk. */
/* Whether the kit refuses seat's move because a window is open and seat is not pending in it
 * (the request is answered NOT_YOUR_TURN and counted). */
bool tk_window_refused(tk_table_t *t, gs_request_t *req, int seat);
/* seat's automatic move comes after trustee_ms now (away, leaving), unless sooner. */
void tk_window_hurry(tk_table_t *t, int seat);
/* seat is back (resumed, or acted and still pending): its automatic move waits for the
 * deadline again. */
void tk_window_restore(tk_table_t *t, int seat);
/* TK_TIMER_WINDOW of that serial fired. */
void tk_window_timer(tk_table_t *t, uint64_t serial);
/* The Snapshot's window_seats (into buf, TK_MAX_SEATS long) and time_left_ms when a window is
 * open. */
void tk_window_snapshot(tk_table_t *t, Croupier__Snapshot *s, uint32_t *buf);

/* tk_lobby.c: the lobby desk's callbacks (tk_engine_create makes the desk), and a join's end. */
extern const gs_desk_ops_t tk_lobby_ops;
void tk_join_free(tk_join_t *j);
void tk_join_dropped(void *p);

/* tk_spect.c: spectators (docs/spectators.md). A GS_REQ_WATCH at a table; the public copy of a
 * push for the spectators (tk_push_all, tk_push_deal); the spectators told the table is gone
 * (closing, moved, destroyed): WatchEnded, and the links forgotten. */
void tk_spect_request(tk_table_t *t, gs_request_t *req);
void tk_spect_push(tk_table_t *t, const Croupier__ServerMessage *m);
void tk_spect_end(tk_table_t *t, Croupier__ErrorCode code, const char *detail);
/* The same for the spectators now, the table taking new ones afterwards (a duplicate deal). */
void tk_spect_drop(tk_table_t *t, Croupier__ErrorCode code, const char *detail);
bool tk_tour_duplicate(const tk_table_t *t); /* tk_tour.c */

#endif
