/*
 * tk -- the table kit: everything a card table needs besides its rules, written once
 * (docs/architecture.md §12, docs/writing-a-game.md).
 *
 * A game on the kit supplies its rules through a tk_game_t and gets, without writing them:
 *
 *   lobby      one lobby desk per engine seats players by (game, stake): the first table of that
 *              game and stake with a free seat, else a new one. Tables with free seats are
 *              advertised in the shared lobby (lease/lobby.h), so ListTables lists them.
 *   seats      the seat state machine: EMPTY -> BUYING (join; buy-in submitted) -> SEATED
 *              (buy-in applied; Joined answered) -> LEAVING (asked to leave during a round) ->
 *              EMPTY (cashed out, unseated). A SEATED player whose connection is gone stays
 *              seated (they may resume through any gateway) and is marked away (SeatInfo
 *              connected false); with tk_game_t.trustee_when_away their turns are played by the
 *              game's automatic move after trustee_ms until they are back, otherwise they keep
 *              their full turn time. A second join of a player whose buy-in is still in
 *              flight is answered UNAVAILABLE ("join in progress; retry"), so a retry gets the
 *              seat once it is taken; a join of a seated player is answered with its Snapshot.
 *   money      stack mode: a join buys in from the player's wallet into a seat account of the
 *              table (TK_ACCOUNT_PREFIX...) in one fenced seat transfer that also records the
 *              account as held by this server's slot and epoch (money.h "Held chips": if the
 *              server dies, the recovery returns it; every round start is recorded there too,
 *              so the recovery can void the round in progress), chosen as min(wallet, max
 *              buy-in) and refused
 *              INSUFFICIENT_FUNDS below the minimum; every round settles the game's deltas
 *              (or those its transfers make: pairwise settlement, tk_round_end_transfers)
 *              against the seat accounts in one idempotent settlement (sum = -rake); a leaver,
 *              a busted player (stack below what a round needs) and, when the table closes,
 *              everyone is cashed out (one seat transfer back to the wallet). Every buy-in
 *              result a desk still has to act on is a money follow-up (gs.h).
 *   moves      when the table closes (the server drains) every stack is cashed out and only
 *              once the credits are applied (or TK_CLOSE_NOTICE_MS passed) are the players told
 *              TableClosing and the gateways DeskClosing, so the server a player is moved to
 *              can never find their chips still at the old table.
 *   rounds     the kit starts a round (rt_desk_begin_round, so intake and the money watermark
 *              are honoured) after gap_ms once min_players are seated, and ends it when the game
 *              calls tk_round_end() (completed) -- or voids it on the drain bound (no money
 *              moves: the seat accounts still hold the stacks of the round's start). It settles,
 *              writes the hand history (docs/hand-history.md: one record for every round,
 *              completed or voided), and only once the settlement is applied (a money
 *              follow-up; meanwhile the round is still in progress, with nobody to act) pushes
 *              RoundEnd -- no player is ever shown a result that is not recorded; a settlement
 *              refused (the epoch was lost) voids the round for its players instead
 *              (VOID_LEASE_LOST) -- then cashes out leavers and busted players (or
 *              tops them up), closes the table when intake stopped or the drain voided the
 *              round, and only then ends the runtime's round, so every money item of the round
 *              is queued before human_desks can drop; then it counts the round
 *              (game_rounds_total{game,outcome}). A round the kit voids for an internal error
 *              (a refused round_start or numbers that break a rule) does not close the table.
 *   turns      tk_turn() arms the turn timer (action_ms plus the seat's time bank, which pays
 *              for the time an accepted move that ends the turn took beyond action_ms) and
 *              pushes Turn with the time left; on expiry the game's timeout() makes the
 *              automatic move and the seat goes on trustee: its next turns are played after
 *              trustee_ms until the player acts or resumes (a turn the accepted move itself
 *              starts for the seat is a full one). A timer of an older turn never fires a newer
 *              one (serials). A server bot's turn is its bot_move() after bot_ms.
 *   banker     a banker game's round has one banker the game chooses (tk_banker_set: an
 *              eligible seat, may_bank() and the stack bank_stack() asks; rotation with
 *              tk_banker_next), shown in the Snapshot and the hand history.
 *   windows    tk_window_open() lets several seats decide at once before one deadline (an
 *              action window, "Action windows" below): moves of seats not pending in it are
 *              refused NOT_YOUR_TURN, each pending seat gets the automatic move at the deadline
 *              (or sooner: on trustee, away with trustee_when_away, leaving, a bot), and the
 *              Snapshot has the pending seats and the window's time left.
 *   events     every ServerMessage a table pushes carries event_seq, one counter per table:
 *              every event takes the next number, a player sees the numbers of the events sent
 *              to them (gaps are events sent only to others), and a Snapshot carries the last.
 *   resume     Resume (and a repeated Join) is answered with a Snapshot: the header (desk, seat,
 *              engine, game, stake, seats, round id, turn seat and time left -- or a window's
 *              pending seats and time left --, event_seq) from
 *              the kit, the state from the game's snapshot().
 *   moves (whole tables)  when the server drains, a table with players that is between rounds
 *              (or once its round ended and settled) moves as a whole instead (docs/protocol.md
 *              "Whole-table moves"): the kit writes a handoff offer (money.h "Table handoff":
 *              its seats, players, stacks, button, round count, event_seq and the game's
 *              export_state(), with its seat accounts) under the server's epoch, and the
 *              gateways ask a ready server of the engine to adopt it (Adopt); the adopter takes
 *              the seat accounts' chips in one fenced script (exactly one adopter ever), seats
 *              the same players in the same seats, calls the game's import_state() and answers
 *              every player with the table's Snapshot. The old desk lets go only once the offer
 *              reads adopted; nobody adopting within TK_MOVE_WAIT_MS, it withdraws the offer
 *              and closes as before (each player re-seated by the gateway). A crash at any step
 *              leaves the table adopted or its chips returned by the recovery.
 *   rooms      a private room (docs/protocol.md "Private rooms") is a table of its own, opened by
 *              CreateRoom with the host's rules (deals, seats, rule options, bot fill): it is
 *              never advertised nor matched, only joined by its 6-digit code (drawn unique in
 *              Redis, lease/room.h); it deals once every seat is taken (server bots only with
 *              bot fill), pushes RoomInfo (the scoreboard) after every deal, and after its last
 *              deal -- or when its host disbands it before the first, or it stays unfilled for
 *              room_wait_ms -- every player is cashed out and told RoomInfo and
 *              TableClosing{CLOSING_ROOM_ENDED}; its record keeps the final scoreboard and the
 *              deals' round ids for room_keep_ms. A room moves with whole-table moves (its
 *              record follows it); one that cannot move, or whose deal the drain bound voided,
 *              ends with the deals played.
 *   lifecycle  a table left empty and idle for idle_ms is destroyed (the game's table_close()
 *              first, as when a table closes without moving) and the lobby forgets it;
 *              the next join opens a new one. There is no fixed table cap: memory is bounded by
 *              the live tables.
 *   settings   each kit engine has flags (--<prefix>-seats, -action-ms, -time-bank-ms,
 *              -gap-ms, -idle-ms, -buyin, -min-buyin, -rake-bp, -rake-cap, -trustee-ms,
 *              -move-wait-ms, -room-wait-ms, -room-keep-ms; with bots -bot-ms, -bot-fill-ms;
 *              with bots or a house -house, -house-fund; and the game's extra_flags), each with
 *              its environment variable, shown by croupier-game --help and checked at start (a
 *              bad value exits 2).
 *   metrics    tk_tables, tk_tables_opened_total, tk_seated, tk_timeouts_total (turns and window
 *              decisions that ran out), tk_auto_actions_total (each labelled engine),
 *              tk_refusals_total (engine, code), and the gs's game_rounds_total (game, outcome).
 *   protocol   a kit game's actions arrive as Action.game (GameAction: the body is the game's
 *              own message, decoded with frame_unpack_game() against tk_game_t.action_desc and
 *              action_rules, the same caps and checks as the client protocol); its snapshot
 *              state goes out as Snapshot.game_state and its own events as
 *              ServerMessage.game_event. The gateway forwards them without knowing the game.
 *              An engine that keeps its own members of Action/Snapshot (the built-in ones) sets
 *              action_desc NULL and uses tk_snapshot_msg().
 *
 * The engines on the kit: test (engine/testgame.c; its --test-windows mode opens action
 * windows), holdem, persistent (blackjack),
 * traditional (the shedding games), zhajinhua and niuniu (a banker game: windows, banker, pairwise
 * settlement, winners' rake) (games/<game>/).
 *
 * Threads. Every tk_* function below that takes a tk_table_t runs on that table's desk thread,
 * inside one of the game's callbacks (the kit calls the game only there). Nothing of a table is
 * touched from another thread.
 *
 * Ownership. The game's per-table state is created by table_create() and freed by
 * table_destroy(); messages handed to tk_push_*() are borrowed for the call (encoded at once).
 */
#ifndef CROUPIER_TK_H
#define CROUPIER_TK_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "frame.h"
#include "gs.h"

#define TK_MAX_SEATS 9
#define TK_TRUSTEE_MS 1000
/* ... and when every seat dealt into the round is leaving (or a server bot): nobody watches. */
#define TK_TRUSTEE_NOBODY_MS 1
#define TK_CLOSE_NOTICE_MS 2000
#define TK_MOVE_WAIT_MS 3000     /* a handoff offer nobody adopted by then is withdrawn */
#define TK_ROOM_WAIT_MS 1800000  /* a private room fills within 30 minutes */
#define TK_ROOM_KEEP_MS 86400000 /* its final scoreboard stays readable a day */
#define TK_SHOWN_MAX 32          /* cards a seat may show at a round's end (tk_round_show) */
/* Seat accounts: wallets named TK_ACCOUNT_PREFIX<service>.<slot>.<epoch>.<desk hex>.<seat>
 * (a service of more than 20 characters is named by a hash, see tk_engine.c). */
#define TK_ACCOUNT_PREFIX "ts."
/* The house's seat account with the money by entity (tk_settings_t.house_float): a funding adds
 * this many full tables at the largest buy-in beyond the round's need. */
#define TK_HOUSE_FLOAT 10

typedef struct tk_table tk_table_t;

/* The settings of one kit engine (its flags; tk_game_t.defaults gives their defaults). */
typedef struct tk_settings {
    long seats;            /* seats per table */
    long action_ms;        /* time for one turn */
    long time_bank_ms;     /* extra time per seat, spent beyond action_ms, refilled never */
    long gap_ms;           /* pause between rounds */
    long idle_ms;          /* an empty table lives this long */
    long buyin;            /* largest buy-in, in stakes (the game's unit: ante, big blind...) */
    long min_buyin;        /* smallest buy-in, in stakes */
    long rake_bp;          /* rake in basis points of what the game calls the pot (of each
                              winner's win with tk_game_t.rake_winners) */
    long rake_cap;         /* rake cap in chips per round (per winner with rake_winners; 0 =
                              none) */
    long bot_ms;           /* a server bot's move delay */
    long bot_fill_ms;      /* a table with a human and empty seats gets bots after this; -1 never */
    long house_fund;       /* chips the house wallet is funded with once per service (0: never) */
    long trustee_ms;       /* the automatic move's delay for a seat on trustee (0: TK_TRUSTEE_MS) */
    long move_wait_ms;     /* a drain's handoff offer waits this long for an adopter (0:
                              TK_MOVE_WAIT_MS; -1: tables never move as a whole) */
    long room_wait_ms;     /* a private room not full this long after its creation is disbanded
                              (0: TK_ROOM_WAIT_MS) */
    long room_keep_ms;     /* a room's record stays readable this long after its end, and this
                              long after its last change while it plays (0: TK_ROOM_KEEP_MS) */
    long tour_tables;      /* tournament tables hosted at most (tk_game_t.tournaments; 0: none) */
    long tour_host_ttl_ms; /* a tournament table's claim lives this long unrenewed */
    long tour_join_ms;     /* a match's deal waits this long for players new to the table */
    long spectators;       /* spectators per table at most (docs/spectators.md; 0:
                              TK_SPECTATORS; -1: the tables may not be watched) */
    long house_float;      /* with a house in the round and the money by entity: what a funding
                              of the house's seat account adds beyond the round's need, in the
                              table's stakes (0: TK_HOUSE_FLOAT full tables at the buy-in) */
    const char *house;     /* the wallet server bots play for (and the counterparty of
                              tk_round_end_house); NULL: tk_game_t.house_name's, or
                              "house-<engine>" */
} tk_settings_t;

/* Where a table's chips live (tk_game_t.money). */
typedef enum {
    TK_MONEY_STACK = 0, /* buy-in into seat accounts; rounds settle the seat accounts */
    TK_MONEY_WALLET,    /* no table chips: no buy-in, rounds settle the players' wallets
                           directly (play-money and test games); stacks read 0 */
} tk_money_t;

typedef struct tk_engine tk_engine_t;

/* A game's rules, as the kit calls them. Every callback runs on the table's desk thread. */
typedef struct tk_game {
    const char *engine; /* --engine name and the registry's engine, e.g. "zhajinhua" */
    /* The games it serves, comma-separated, e.g. "zhajinhua"; croupier-game --games may name a
     * subset of them (each once): the engine then serves, advertises and lists only those. */
    const char *games;
    Croupier__Engine proto_engine; /* what Joined/Snapshot say: ENGINE_GAME for new games */
    int min_seats, max_seats;      /* bounds of --<engine>-seats (2..TK_MAX_SEATS) */
    int min_players;               /* seated players a round needs (>= 2; 0: every seat) */
    int64_t min_stake;             /* least Join.stake (0: 1); below it a join is BAD_REQUEST */
    tk_money_t money;
    /* The game has server bots (bot fill after bot_fill_ms, tk_seat_add_bot, tables of bots;
     * flags --<engine>-bot-ms / -bot-fill-ms) and/or the house as a wallet (bots play for it;
     * tk_round_end_house; flags --<engine>-house / -house-fund). */
    bool bots, house;
    /* The fixed operation id of the house's one funding is "<house_fund_op>.<service>"; NULL:
     * "tk-house-fund". An engine that funded its house before it stood on the kit keeps its
     * old id, so an upgraded service is not funded a second time. */
    const char *house_fund_op;
    /* The house wallet's name when --<engine>-house is not given, made from the service
     * (croupier-game --service; the engine's name without one), e.g. blackjack's
     * "house.<service>". NULL: "house-<engine>". */
    void (*house_name)(const char *service, char *buf, size_t len);
    /* After a round, a seat whose stack fell below min_stack() is topped up from its wallet
     * (a bot's from the house) back to the largest buy-in instead of being busted; a wallet
     * that cannot cover it busts the seat. The next round waits for the top-ups; a seat that
     * leaves (or a bot that stands up) while its top-up is in flight goes once it is applied,
     * its chips cashed out with the stack. */
    bool topup;
    /* The rake is taken from the winners, not from a pot: a round ended with
     * tk_round_end_transfers() pays, for every seat that won (its delta > 0), tk_rake_win() of
     * its win to the house, as a transfer {seat -> house, "rake"} (banker games; docs/
     * writing-a-game.md "Pairwise settlement"). Without it the game gives its rake itself. */
    bool rake_winners;
    /* Seats of a table of game (NULL: the --<engine>-seats setting, which is passed). */
    int (*seats_for)(const char *game, int configured);
    /* The buy-in of a table of game in stakes, both largest and smallest (a fixed escrow, e.g.
     * a game's maximum loss); NULL or <= 0: the --<engine>-buyin / -min-buyin settings. */
    long (*buyin_for)(const char *game);
    /* The prefix of the engine's flags and variables (--<prefix>-seats, CROUPIER_<PREFIX>_SEATS);
     * NULL: the engine's name. */
    const char *flag_prefix;
    /* Every action of a seated player reaches action(), in a round or not, dealt in or not (the
     * game refuses NO_ROUND itself): e.g. blackjack's bet for the next betting window. */
    bool any_time_actions;
    /* The tables may be watched (docs/spectators.md): snapshot() takes seat -1 for a
     * spectator's public view (no seat's private cards), and every private card goes out with
     * tk_push_seat() or tk_push_deal() only, so that what tk_push_all() pushes is public;
     * a push sent seat by seat in variants has its public variant sent with tk_push_watch(). */
    bool watchable;
    /* A disconnected player's turns are played by the automatic move (after trustee_ms) until
     * they resume, as for a player on trustee (shedding games); otherwise a disconnected
     * player keeps their full turn time (they may be back in a second through another
     * gateway). A player who resumes during their own turn while it runs on the automatic
     * move's short timer (away, or on trustee, and not leaving) gets the full turn time
     * again (action_ms plus their time bank), from the resume on: the Snapshot answering it
     * says so, and everyone gets a Turn with the new time left (no terms). */
    bool trustee_when_away;
    /* The engine plays tournament tables (docs/tournaments.md "Tables at the servers"): its
     * servers claim the tables of running tournaments and play them (engine/tk_tour.c); the
     * game reads each hand's blinds and positions with tk_tour_hand(), or -- a match hall's
     * table (engine "traditional") -- the deal's stage and base with tk_tour_match(). */
    bool tournaments;
    /* The engine's option text (croupier-game's engine options), checked before anything
     * starts: engine_ops_t.check_options. May be NULL. */
    int (*check_options)(const char *options, const char *games, char *err, size_t errlen);
    tk_settings_t defaults;
    /* The game's own flags besides the kit's (names starting "<engine>-", zero-terminated;
     * out pointers into the game's own settings), parsed and listed with them. May be NULL. */
    const config_flag_t *extra_flags;
    /* The game's action message (Action.game body) and its own rules on it (NULL: generic
     * checks only). Decoded by the kit before action() runs; a refusal there is BAD_REQUEST.
     * action_desc NULL: an engine with its own member of Action.kind (the built-in engines);
     * action() then gets the Croupier__Action itself and judges its kind. */
    const ProtobufCMessageDescriptor *action_desc;
    frame_game_rules_cb action_rules;
    /* Per-table state for a table of game at stake; NULL refuses the table (out of memory or
     * bad stake). Required. */
    void *(*table_create)(tk_table_t *t, const char *game, int64_t stake);
    void (*table_destroy)(void *g);
    /* Deals a round among the seats with tk_seat_playing() true (stacks: tk_seat_stack()). The
     * game pushes its events and calls tk_turn() for the first turn, or tk_round_end() at once.
     * Returns 0, or a negative errno (the kit voids the round). Required. */
    int (*round_start)(tk_table_t *t, void *g);
    /* A move of seat in the round. Returns CROUPIER__ERROR_CODE__OK, or a refusal code with a
     * sentence in *why (the game's state unchanged). Required. */
    Croupier__ErrorCode (*action)(tk_table_t *t, void *g, int seat, const ProtobufCMessage *a,
                                  const char **why);
    /* The turn of seat timed out (or the seat is on trustee): make the automatic move (it must
     * end the turn). Required. */
    void (*timeout)(tk_table_t *t, void *g, int seat);
    /* seat's decision in an action window (tk_window_open) is due: the window's deadline
     * passed, or the seat is on trustee, away with trustee_when_away, or leaving. Make the
     * automatic move and end the seat's decision with tk_window_done(). A seat the move
     * leaves pending is on trustee: its next automatic move comes after trustee_ms. NULL:
     * timeout() is called for window seats too (it must then end the decision the same way). */
    void (*window_timeout)(tk_table_t *t, void *g, int seat);
    /* The round is voided (drain bound, shutdown): forget it; no money moves. Required. */
    void (*round_void)(tk_table_t *t, void *g);
    /* seat's view of the game state for a Snapshot: call tk_snapshot_state() with the game's
     * state message (cards of others hidden), or -- an engine with its own member of
     * Snapshot.state -- set it on tk_snapshot_msg() pointing at memory the game owns (its
     * per-table state: the Snapshot is sent after this returns). Called between rounds too.
     * Required. */
    void (*snapshot)(tk_table_t *t, void *g, int seat);
    /* The Joined answering seat's join, filled by the kit, for the game to add its own fields
     * (e.g. the traditional engine's rule options), pointing at memory the game owns (its
     * per-table state: the Joined is sent after this returns). May be NULL. */
    void (*joined)(tk_table_t *t, void *g, int seat, Croupier__Joined *j);
    /* A seat was taken (seated true: the buy-in applied, tk_seat_stack() holds it) or emptied
     * (false: cashed out, the player gone). May be NULL. */
    void (*seat_changed)(tk_table_t *t, void *g, int seat, bool seated);
    /* The least stack a seat needs to be dealt in (an ante); a seat below it after a round is
     * busted: told TableClosing{CLOSING_BUSTED}, cashed out and unseated (or topped up, see
     * topup). NULL: 1 chip. Ignored with TK_MONEY_WALLET. */
    int64_t (*min_stack)(tk_table_t *t, void *g);
    /* Banker games (tk_banker_set below): whether seat may bank this round besides the stack
     * bank_stack() asks (a seat that sat out, a rule of the game's). NULL: every seat dealt in. */
    bool (*may_bank)(tk_table_t *t, void *g, int seat);
    /* The least stack a banker needs this round, e.g. what it may owe every other seat dealt in
     * (Niu Niu: the largest multiplier x the stake x the punters). NULL: min_stack(). Not
     * checked with TK_MONEY_WALLET (stacks read 0). */
    int64_t (*bank_stack)(tk_table_t *t, void *g);
    /* A server bot's move (its turn, after bot_ms). NULL: timeout(), the automatic move. */
    void (*bot_move)(tk_table_t *t, void *g, int seat);
    /* The engine runs (main thread, once, after the lobby exists): e.g. open tables of bots
     * with tk_engine_open_table(). May be NULL. */
    void (*engine_started)(tk_engine_t *eng);
    /* A timer the game armed with tk_timer() expired (a betting window, say). May be NULL. */
    void (*on_timer)(tk_table_t *t, void *g, uint64_t cookie);
    /* Whole-table moves (see "moves" above). export_state: the match state that outlives a
     * round (a Guandan match's levels, a room's deal count...), between rounds, as a new JSON
     * reference (NULL: none). import_state: at the adopting server, on the new table (after
     * table_create, the seats already taken), the state export_state gave; 0, or -EINVAL when
     * it is not one (logged: the table plays on with the game's fresh state). Both may be NULL:
     * only the kit's state moves. */
    json_t *(*export_state)(tk_table_t *t, void *g);
    int (*import_state)(tk_table_t *t, void *g, const json_t *state);
    /* The table closes for good on this server with the game's state still here: it closed
     * between rounds or after its last round (a drain with no adopter, a fence), or it was
     * empty for idle_ms and goes. Never after a whole-table move took the state elsewhere, and
     * at most once per table. Outside a round (tk_history() is NULL unless a round's settlement
     * is still on its way): what the game must still reveal goes into a table record,
     * tk_table_record() (blackjack's shoe, docs/hand-history.md "Table records"). May be NULL. */
    void (*table_close)(tk_table_t *t, void *g);
} tk_game_t;

/*
 * The engine of a kit game, for croupier-game's table of engines (engine/engines.c, generated
 * by the build): TK_ENGINE(zhajinhua, &zjh_game, CROUPIER__ENGINE__ENGINE_GAME) defines
 * `const engine_ops_t zhajinhua_engine_ops` with the engine's flags (--zhajinhua-seats ...)
 * bound to its own settings; the engine's name is the symbol's.
 */
typedef struct tk_engine_def {
    const tk_game_t *game;
    tk_settings_t *settings; /* written by config_parse through flags */
    config_flag_t *flags;    /* filled by tk_engine_flags() the first time */
    char names[24][48];      /* the kit's flags, the house's (at most TK_NFLAGS + 1 = 22) */
} tk_engine_def_t;

int tk_engine_create(tk_engine_def_t *def, gs_t *gs, const char *games, void **out);
void tk_engine_join(void *eng, gs_request_t *req);
void tk_engine_adopt(void *eng, gs_request_t *req);
const char *tk_engine_games(void *eng);
void tk_engine_stop_intake(void *eng);
void tk_engine_destroy(void *eng);
/* tk_game_t.check_options, or a refusal of any option text when the game takes none. */
int tk_engine_check_options(tk_engine_def_t *def, const char *options, const char *games, char *err,
                            size_t errlen);
/* The engine's flag table (prefixed with its name), built once. */
const config_flag_t *tk_engine_flags(tk_engine_def_t *def);
/* engine_ops_t.entity_refusal: NULL when the game's tables run with --money-by-entity (seat
 * accounts, TK_MONEY_STACK, the house in the round through a seat account of its own), else
 * why not, one line. */
const char *tk_engine_entity_refusal(const tk_engine_def_t *def);

#define TK_ENGINE(sym, gamep, proto)                                                               \
    static tk_settings_t sym##_tk_settings;                                                        \
    static tk_engine_def_t sym##_tk_def = {.game = (gamep), .settings = &sym##_tk_settings};       \
    static int sym##_tk_create(gs_t *gs, const char *games, void **out)                            \
    {                                                                                              \
        return tk_engine_create(&sym##_tk_def, gs, games, out);                                    \
    }                                                                                              \
    static int sym##_tk_check(const char *o, const char *g, char *err, size_t errlen)              \
    {                                                                                              \
        return tk_engine_check_options(&sym##_tk_def, o, g, err, errlen);                          \
    }                                                                                              \
    static const config_flag_t *sym##_tk_flags(void)                                               \
    {                                                                                              \
        return tk_engine_flags(&sym##_tk_def);                                                     \
    }                                                                                              \
    static const char *sym##_tk_entity(void)                                                       \
    {                                                                                              \
        return tk_engine_entity_refusal(&sym##_tk_def);                                            \
    }                                                                                              \
    const engine_ops_t sym##_engine_ops = {.name = #sym,                                           \
                                           .engine = (proto),                                      \
                                           .create = sym##_tk_create,                              \
                                           .join = tk_engine_join,                                 \
                                           .adopt = tk_engine_adopt,                               \
                                           .games = tk_engine_games,                               \
                                           .stop_intake = tk_engine_stop_intake,                   \
                                           .destroy = tk_engine_destroy,                           \
                                           .check_options = sym##_tk_check,                        \
                                           .flags = sym##_tk_flags,                                \
                                           .entity_refusal = sym##_tk_entity}

/* Opens a table of game at stake with bots server bots seated (a table of bots only plays by
 * itself and never counts as a human desk). Any thread; the lobby desk opens it. 0 or -errno. */
int tk_engine_open_table(tk_engine_t *eng, const char *game, int64_t stake, int bots);

/* ---- what a game may ask of its table (desk thread, inside a callback) ------------------- */

int tk_seats(const tk_table_t *t);
const char *tk_game_name(const tk_table_t *t);
int64_t tk_stake(const tk_table_t *t);
const tk_settings_t *tk_settings(const tk_table_t *t);
/* The player at seat (0 = empty), whether they are dealt into the current round, their stack
 * (chips at the table before the round), whether they are a house bot. */
uint64_t tk_seat_player(const tk_table_t *t, int seat);
bool tk_seat_playing(const tk_table_t *t, int seat);
int64_t tk_seat_stack(const tk_table_t *t, int seat);
bool tk_seat_bot(const tk_table_t *t, int seat);
/* Seats a server bot in the first empty seat (stack mode: bought in from the house wallet).
 * Returns the seat, or -ENOSPC (full), -ESHUTDOWN (closing). */
int tk_seat_add_bot(tk_table_t *t);
/* The dealer button: the kit moves it to the next playing seat at every round start. */
int tk_button(const tk_table_t *t);

/*
 * The banker (docs/writing-a-game.md "Banker games"): one seat of the round the others play
 * against, chosen by the game (by rotation, a bid-for-banker window, ...) and known to the kit,
 * which shows it in the Snapshot (banker_seat) and the hand history ("banker").
 *
 * tk_banker_eligible: seat is dealt into the round, the game's may_bank() allows it and (stack
 * mode) its stack holds bank_stack() (min_stack() without one): the minimum stack to bank, per
 * seat, beside the one every seat needs to be dealt in.
 * tk_banker_set: seat banks this round (the game calls it inside the round, once it decided;
 * again to change it). 0, or -EINVAL (no round, or the seat is not eligible: nothing changed).
 * tk_banker: this round's banker, -1 before tk_banker_set (every round starts without one).
 * tk_banker_next: the rotation: the first eligible seat after the last round's banker (the
 * previous banker is the last it offers), or from the button on when no round had one at this
 * table (the first round; an adopted table starts over from the button too); -1 when no seat
 * is eligible (the game then voids or ends the round, its rules say which).
 */
bool tk_banker_eligible(tk_table_t *t, int seat);
int tk_banker_set(tk_table_t *t, int seat);
int tk_banker(const tk_table_t *t);
int tk_banker_next(tk_table_t *t);
/* The round number (1, 2...) and its id text ("service:slot:epoch:desk:seq"). */
uint64_t tk_round_seq(const tk_table_t *t);
const char *tk_round_id(tk_table_t *t);

/* Pushes to every seated player (and the table's spectators: it is public) / to one seat.
 * event_seq is set by the kit. */
void tk_push_all(tk_table_t *t, Croupier__ServerMessage *m);
void tk_push_seat(tk_table_t *t, int seat, Croupier__ServerMessage *m);
/* Pushes a ServerMessage.game_event whose body is the game's message ev (checked and encoded
 * with frame_pack_game), to every seated player (seat -1) or one seat. 0 or -EINVAL. */
int tk_push_event(tk_table_t *t, int seat, const ProtobufCMessage *ev);
/* Pushes Play{seat, Action.game = a} to everyone (timed_out: the kit's automatic move). */
int tk_push_play(tk_table_t *t, int seat, const ProtobufCMessage *a, bool timed_out);
/* Pushes Deal{seat, cards} to seat and Deal{seat, count} to the others and the spectators
 * (round id set); cards NULL deals n cards face down: Deal{seat, count} to everyone, seat
 * included. */
void tk_push_deal(tk_table_t *t, int seat, const uint8_t *cards, size_t n);
/* Pushes m to the table's spectators only (docs/spectators.md): the public variant of a push
 * the game sends seat by seat (tk_push_seat) in variants; event_seq is the table's current one
 * (the variants' number). m must hold no seat's private cards. */
void tk_push_watch(tk_table_t *t, Croupier__ServerMessage *m);
/* The same for a game's own event (ServerMessage.game_event, as tk_push_event): 0 or -EINVAL. */
int tk_push_event_watch(tk_table_t *t, const ProtobufCMessage *ev);

/* It is seat's turn: arms the turn timer and pushes turn (seat and time_left_ms set by the
 * kit). A seat that is away or on trustee gets its automatic move after TK_TRUSTEE_MS. An
 * open action window is closed first (tk_window_open). */
void tk_turn(tk_table_t *t, int seat, Croupier__Turn *turn);
/* The same turn goes on with new terms (e.g. the seat's costs changed): pushes turn with the
 * time left, the clock keeps running. A seat that is not the one to act gets tk_turn(). */
void tk_turn_update(tk_table_t *t, int seat, Croupier__Turn *turn);
/* Arms a timer of the game's own (cookie < 2^48 is handed back to on_timer); the kit drops it
 * when the table is destroyed. 0 or a negative errno from rt_desk_timer_arm. */
int tk_timer(tk_table_t *t, int64_t delay_ms, uint64_t cookie, rt_timer_id_t *out);
int tk_timer_cancel(tk_table_t *t, rt_timer_id_t id);
/* A seat sits out (no round deals it in) or comes back. */
void tk_seat_sit_out(tk_table_t *t, int seat, bool out);
bool tk_seat_sitting_out(const tk_table_t *t, int seat);
/* The engine's option text (croupier-game's engine options; NULL when none). */
const char *tk_engine_options(const tk_table_t *t);
/* The game's per-table state (what table_create returned). */
void *tk_game_state(tk_table_t *t);
/* The desk of the table (for log lines and ids). */
uint64_t tk_desk_id(tk_table_t *t);

/* Nobody is to act (e.g. the round ends): cancels the turn timer, and closes an action window
 * (no automatic move for its pending seats). */
void tk_turn_clear(tk_table_t *t);

/*
 * Action windows: simultaneous decisions (docs/writing-a-game.md "Simultaneous decisions:
 * action windows"). Several seats decide at once, each at its own pace, before ONE deadline.
 *
 * tk_window_open() opens a window for the seats of the mask `seats` (bit s = seat s) that are
 * dealt into the round, with the deadline ms from now (ms <= 0: action_ms), and pushes turn
 * (NULL: a bare one; the game's terms otherwise) with time_left_ms and window_seats set by the
 * kit: to each seat of the window with seat = its own, to the others with seat = the window's
 * first. It cancels the turn or window armed before (a window and a turn are never armed at
 * once: whichever the game asks for last wins, and the other is gone without an automatic
 * move; tk_turn() likewise closes an open window). Returns 0, -EINVAL (no round, or no seat of
 * the mask dealt in), or -EIO when the runtime's timer could not be armed (nothing opened,
 * nothing pushed; the turn or window before is gone all the same).
 *
 * While a window is open the kit refuses, before action() is called, every move of a seat
 * that is not pending in it: NOT_YOUR_TURN ("not in this action window" / "your decision in
 * this action window is made"). A pending seat's accepted moves are the game's; the game says
 * when the seat's decision is made with tk_window_done() (after its one move, or after several:
 * "until the game says the seat is done"). When the last pending seat is done the window
 * closes (its timer cancelled) and tk_window_done() returns 0: the game goes on there (ends the
 * round, opens the next window, gives a turn...).
 *
 * Per seat, the automatic move (window_timeout, or timeout) comes:
 *   - at the deadline, for every seat still pending (counted in tk_timeouts_total, once per
 *     seat; the seat goes on trustee, as after a turn's timeout);
 *   - after trustee_ms for a seat on trustee (tk_auto_actions_total), a disconnected seat of a
 *     trustee_when_away game (or a tournament table), and a seat that leaves during the round
 *     (LEAVING: its decision is not waited for until the deadline, as a leaver's turn is not);
 *     the other seats keep the whole window. A seat that resumes (or acts) gets the rest of the
 *     window again;
 *   - after bot_ms for a server bot (bot_move, or the automatic move).
 * The deadline is the window's alone: the time bank is neither spent nor added. A stale timer
 * (of a closed or earlier window) never fires a later one (serials). A drain waits for the
 * window like for any round (the deadline ends it); the drain bound voids the round and with
 * it the window. A Snapshot during a window has the pending seats (window_seats) and the
 * window's time left (time_left_ms), and no turn_seat.
 */
int tk_window_open(tk_table_t *t, uint32_t seats, int64_t ms, Croupier__Turn *turn);
/* seat's decision is made: it leaves the window. Returns the seats still pending (0: the window
 * closed), or -ENOENT when no window is open or the seat is not pending in it. */
int tk_window_done(tk_table_t *t, int seat);
/* Whether seat is pending in the open window; the mask of the pending seats (0: no window). */
bool tk_window_pending(const tk_table_t *t, int seat);
uint32_t tk_window_seats(const tk_table_t *t);
/* Closes the open window now, without any automatic move (a no-op when none is open). */
void tk_window_close(tk_table_t *t);

/*
 * The round's deck: shuffles cards[0..n) in place with the kit's one deck source (common/deck.h,
 * docs/fairness.md). Every game deals from it. Returns 0, -EINVAL (n over DECK_MAX_CARDS), or
 * -EIO when the generator failed: nothing may be dealt; return the error from round_start (the
 * round is voided, and the server starts no other round: gs_can_start_round()).
 */
int tk_deal_shuffle(tk_table_t *t, uint8_t *cards, size_t n);
/*
 * tk_deal_shuffle() under the per-card commitment (docs/fairness.md "The per-card commitment"):
 * for a game whose replay hides cards (hold'em, Zha Jin Hua), so that a player can check each
 * card he saw without the others being revealed. code(card) is the protocol's code of the
 * game's card byte (docs/protocol.md "Cards"): the byte the player's Deal carries. The Deals and
 * Snapshots of the round then carry deck_scheme 2; the record has deck_scheme and deck_codes.
 * Returns as tk_deal_shuffle() (-EINVAL also for code NULL).
 */
int tk_deal_shuffle_per_card(tk_table_t *t, uint8_t *cards, size_t n, uint8_t (*code)(uint8_t));
/*
 * The commitment to the round's deck (DECK_COMMIT_LEN bytes; docs/fairness.md), or NULL before
 * tk_deal_shuffle() in this round. tk_push_deal() puts it on every Deal (Deal.deck_commitment);
 * a game that builds its own Deal messages sets the field from here. The record of the round
 * gets deck_commitment, deck and deck_nonce (docs/hand-history.md).
 */
const uint8_t *tk_deal_commitment(const tk_table_t *t);
/* The scheme of that commitment (DECK_SCHEME_WHOLE or DECK_SCHEME_CARDS), 0 before the deal: a
 * game that builds its own Deal messages sets Deal.deck_scheme when it is DECK_SCHEME_CARDS. */
int tk_deal_scheme(const tk_table_t *t);

/* The hand history of the round (docs/hand-history.md): cards (seat -1 = table) and actions. */
void tk_history_card(tk_table_t *t, int seat, uint8_t card);
void tk_history_action(tk_table_t *t, int seat, const char *action, int64_t amount);
/* The round's hand-history record (a borrowed JSON object; NULL between rounds), for a game
 * that adds fields of its own (docs/hand-history.md; blackjack's shoes). */
json_t *tk_history(tk_table_t *t);
/*
 * A record of the table's own, outside any round (docs/hand-history.md "Table records"), into
 * the game's hand-history stream through the same writer and script as the rounds' records. The
 * kit adds "round": the table's record id, service:slot:epoch:desk:0 (round number 0, which no
 * round has: rounds count from 1), so the record is written at most once whatever is resent;
 * "record": kind; "game", "engine", "stake", "ts" (wall ms, now); and the empty "seats",
 * "cards", "actions" and "results" of a round's record. fields holds the game's own (its
 * reference is stolen, also on error). One table record per table: a second is refused.
 * Returns 0 (queued), -EALREADY (this table wrote one), -ENOENT (no money writer: nothing is
 * recorded anywhere), -EINVAL (kind or fields not valid), or the writer's error.
 */
int tk_table_record(tk_table_t *t, const char *kind, json_t *fields);
/* Whether this table deals no round after the current one here: the server stopped intake
 * (drain, shutdown) or the table closed. */
bool tk_last_round(const tk_table_t *t);
/* Cards seat showed at the end (RoundEnd's shown_cards and the history; at most
 * TK_SHOWN_MAX, more are ignored). */
void tk_round_show(tk_table_t *t, int seat, const uint8_t *cards, size_t n);
/*
 * Ends the round: delta[seat] for every playing seat (chips won or lost), rake >= 0, sum of
 * deltas == -rake, no stack below zero. Returns 0, or -EINVAL when the numbers break a rule (the
 * round is then voided and logged: a bug in the game). After this call the game's round is over.
 */
int tk_round_end(tk_table_t *t, const int64_t delta[TK_MAX_SEATS], int64_t rake);
/* tk_round_end() with the house as counterparty (banking games: blackjack): the house wallet
 * (tk_settings_t.house) takes house_delta; sum of deltas + house_delta == -rake. RoundEnd lists
 * the seats only. */
int tk_round_end_house(tk_table_t *t, const int64_t delta[TK_MAX_SEATS], int64_t house_delta,
                       int64_t rake);
/* The rake of a pot under the table's settings (rake_bp of pot, at most rake_cap chips; 0 at a
 * tournament table). */
int64_t tk_rake(const tk_table_t *t, int64_t pot);

/*
 * Pairwise settlement (docs/writing-a-game.md "Pairwise settlement"): a round whose chips move
 * between given seats -- each punter with the banker, say -- and the house, rather than into one
 * pot. One transfer: amount chips (> 0) from seat `from` to seat `to`, or to TK_HOUSE (the
 * house's rake account, {croupier:money}:rake:<game>: a transfer to the house is rake), for the
 * game's reason: 1..TK_REASON_MAX characters of [a-z0-9_] ("win", "niu_niu", "rake").
 */
#define TK_HOUSE (-1)
#define TK_MAX_TRANSFERS 64
#define TK_REASON_MAX 15
typedef struct {
    int from, to;
    int64_t amount;
    const char *reason;
} tk_transfer_t;
/*
 * Ends the round with the transfers tr[0..n), in order (the game's order: the banker collects,
 * then pays). With tk_game_t.rake_winners the kit appends, seat by seat, {seat -> TK_HOUSE,
 * tk_rake_win(its win), "rake"} for every seat whose transfers leave it winning. It derives
 * each seat's delta (what it received minus what it paid) and the rake (the sum to the house),
 * so that sum of deltas == -rake by construction, and ends the round as tk_round_end() with
 * them: the settlement, RoundEnd (its transfers, docs/protocol.md "Transfers") and the hand
 * history ("transfers", docs/hand-history.md) show every transfer. Returns 0, or -EINVAL (the
 * round voided as tk_round_end() voids it: a bug in the game) when a transfer names a seat not
 * dealt in, the house as payer, the same seat twice, an amount not in 1..MONEY_MAX_AMOUNT or a
 * bad reason, when there are more than TK_MAX_TRANSFERS (with the kit's rake), or when a stack
 * would end below zero. n == 0 ends the round with nothing moved.
 */
int tk_round_end_transfers(tk_table_t *t, const tk_transfer_t *tr, int n);
/* The rake of one winner's win under the table's settings: rake_bp of win, at most rake_cap
 * chips (0: no cap); 0 at a tournament table or for win <= 0. */
int64_t tk_rake_win(const tk_table_t *t, int64_t win);

/* A tournament table (tk_game_t.tournaments): its chips are the director's, every hand's blinds
 * and positions come from it. Known from table_create() on. */
bool tk_tour_table(const tk_table_t *t);
/* The hand in play at a tournament table: its blinds (TDA 23: the level in force at the deal)
 * and positions (seats; button and small_blind_seat may be empty seats: a dead button, a dead
 * small blind; docs/tournaments.md "Positions"). The seats dealt in are tk_seat_playing().
 * Inside round_start and after. 0, or -ENOENT (no tournament table, or no hand in play). */
typedef struct {
    int64_t small_blind, big_blind, ante;
    bool big_blind_ante; /* the big blind alone posts `ante` for the table */
    int button, small_blind_seat, big_blind_seat;
    uint32_t level;
    uint64_t hand;
} tk_tour_hand_t;
int tk_tour_hand(const tk_table_t *t, tk_tour_hand_t *out);
/* The deal in play at a match hall's table (docs/tournaments.md "Match halls: the director"):
 * every seat is dealt in; the game plays the deal from its starting state (no state of an
 * earlier deal: Guandan's levels start at 2) and ends it with tk_round_end(), its deltas the
 * deal's results in units (docs/rules/match-halls.md "Deal results": no cap, no rake; the
 * director moves each score by result x base). The seats hold chips only for the kit's checks;
 * Joined and Snapshot show each player's score. 0, or -ENOENT (no match deal in play). */
typedef struct {
    uint32_t stage, round;
    uint64_t deal;
    int64_t base;
    char format[8]; /* "rising", "fixed", "swiss" */
    char seed[24];  /* a duplicate Swiss round's seed (decimal), else "" */
} tk_tour_match_t;
int tk_tour_match(const tk_table_t *t, tk_tour_match_t *out);
/* tk_deal_shuffle() for a duplicate Swiss round's deal (tk_tour_match's seed non-empty): the
 * order derived from the round's seed and the deal's number (deck_deal_keyed: every table of the
 * round deals the same cards) and *first a seat in [0, seats) from the same stream, then
 * committed per card (deck_deal_per_card(), code as in tk_deal_shuffle_per_card(); the nonce is
 * fresh at every table, so each table's leaves differ): its replay opens a player's own cards
 * while the deal may still be in play elsewhere (docs/fairness.md "Duplicate deals"). The Deals
 * and Snapshots carry deck_scheme 2; the record has deck_scheme and deck_codes. 0, -ENOENT (no
 * duplicate deal in play), -EINVAL (also code NULL) or -EIO. */
int tk_deal_shuffle_dup(tk_table_t *t, uint8_t *cards, size_t n, uint32_t seats, uint32_t *first,
                        uint8_t (*code)(uint8_t));

/* Inside snapshot(): the game's state message for the Snapshot being built. 0 or -EINVAL. */
int tk_snapshot_state(tk_table_t *t, const ProtobufCMessage *state);
/* Inside snapshot(): the Snapshot being built (its header already filled), for an engine that
 * sets its own member of Snapshot.state. NULL outside snapshot(). */
Croupier__Snapshot *tk_snapshot_msg(tk_table_t *t);

#endif
