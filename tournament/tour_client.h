/*
 * tour_client -- the asker's side of the tournament director's contract (tour_director.h: the
 * keys, the request stream, the answers, the events channel), shared by croupier-ctl
 * (tools/ctl/ctl_tour.c, blocking hiredis) and croupier-gate (gateway/gate_tour.c, asynchronous
 * rconn): request ids and the XADD arguments of a request, the parsing of an answer, of the meta
 * hash, of an entry and of a message of TOUR_EVENTS_CHANNEL, the level in force and the payout
 * table of what the meta says. docs/tournaments.md "The director" is the contract in words.
 *
 * No I/O here: the callers send the commands and hand the replies in (a redisReply is the same
 * type for hiredis's blocking and asynchronous APIs). Functions return 0 or a negative errno;
 * nothing is allocated that the caller does not free through this module.
 */
#ifndef CROUPIER_TOUR_CLIENT_H
#define CROUPIER_TOUR_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "tour_structure.h"

/* A request id: 1..92 of [A-Za-z0-9_.:-] (the director's rule). */
#define TOUR_CLIENT_REQ_MAX 92
/* "{croupier:tour:<id>}:reply:<req>" and every other key of a tournament fit in this. */
#define TOUR_CLIENT_KEY_MAX 160
/* A uint64 in decimal, with its NUL. */
#define TOUR_CLIENT_ID_TEXT 21

/* Whether s is a positive 64-bit decimal in canonical form (no sign, no leading zero, at most
 * 2^64-1), as player ids (common/token.h) and tournament ids (INCR) are. */
bool tour_client_valid_id(const char *s);
/* Whether s is a usable request id (TOUR_CLIENT_REQ_MAX above). */
bool tour_client_valid_req(const char *s);

/* Writes "{croupier:tour:<id>}:<what>", on a Redis Cluster "{croupier:money}:tour:<id>:<what>"
 * (common/keytag.h) (id: the tournament id's decimal text). 0, or -ENOSPC
 * when it does not fit in len (buf then holds a truncated key, never to be used). */
int tour_client_key(char *buf, size_t len, const char *id, const char *what);

typedef enum {
    TOUR_CLIENT_REGISTER = 0,
    TOUR_CLIENT_UNREGISTER = 1,
    TOUR_CLIENT_CANCEL = 2,
} tour_client_op_t;

/* "register", "unregister", "cancel". */
const char *tour_client_op_name(tour_client_op_t op);

/*
 * A request ready to be sent: argv[0..argc-1] is `XADD {croupier:tour:<id>}:in * op <op> req
 * <req> player <player>` (register, unregister) or `... op cancel req <req> by <by> reason
 * <reason>`, and reply_key the list the director pushes the answer onto. The strings argv points
 * to live in the struct, except req, by and reason, which the caller keeps alive meanwhile.
 */
typedef struct {
    char key[TOUR_CLIENT_KEY_MAX];
    char reply_key[TOUR_CLIENT_KEY_MAX];
    char player[TOUR_CLIENT_ID_TEXT];
    const char *argv[11];
    int argc;
} tour_client_request_t;

/* Fills rq. id and player (ignored for cancel) are decimal texts; -EINVAL for an id, player or
 * req that the director would refuse, or a cancel without a reason. */
int tour_client_request(tour_client_request_t *rq, const char *id, tour_client_op_t op,
                        const char *req, const char *player, const char *by, const char *reason);

/*
 * The request id the gateway gives a player's request: "g<player>.<session, hex>.<op
 * letter>.<client request id>" -- the same for a client's retry (same request id on the same
 * session), so the director answers a retry with its first answer and applies nothing twice;
 * different for a new session, whose request ids start again (an SDK's count restarts at 1, and
 * the director keeps answers a day). 0 or -ENOSPC (len >= TOUR_CLIENT_REQ_MAX + 1 always fits).
 */
int tour_client_gate_req(char *buf, size_t len, uint64_t player, uint64_t session,
                         tour_client_op_t op, uint64_t client_rid);

/* The answer codes (tour_director.h TOUR_CODES); TOUR_CODE_UNKNOWN for anything else. */
typedef enum {
    TOUR_CODE_OK = 0,
    TOUR_CODE_ALREADY_REGISTERED,
    TOUR_CODE_NOT_REGISTERED,
    TOUR_CODE_TOURNAMENT_FULL,
    TOUR_CODE_REGISTRATION_CLOSED,
    TOUR_CODE_INSUFFICIENT_FUNDS,
    TOUR_CODE_NO_REENTRY,
    TOUR_CODE_TOURNAMENT_OVER,
    TOUR_CODE_BAD_REQUEST,
    TOUR_CODE_UNKNOWN,
} tour_code_t;

const char *tour_client_code_name(tour_code_t c);

/* A director's answer ({"req","op","ok","code","tournament","player",...}). */
typedef struct {
    bool ok;
    tour_code_t code;
    char code_text[32]; /* as written, cut to fit */
    bool has_entry, has_stack, has_refund;
    int64_t entry, stack, refund;
    bool reentry;
} tour_client_answer_t;

/* Parses an answer. 0, or -EINVAL when it is not a JSON object with a boolean "ok". */
int tour_client_answer_parse(const char *text, size_t len, tour_client_answer_t *a);

typedef enum {
    TOUR_STATUS_UNKNOWN = 0,
    TOUR_STATUS_REGISTERING,
    TOUR_STATUS_RUNNING,
    TOUR_STATUS_FINISHED,
    TOUR_STATUS_CANCELLED,
} tour_status_t;

tour_status_t tour_client_status_parse(const char *s, size_t len);
/* Finished or cancelled: nobody reads its stream any more (the asker answers TOURNAMENT_OVER). */
bool tour_client_status_over(tour_status_t st);

/* The meta hash (docs/tournaments.md "Meta fields"); numbers absent or unreadable are 0. */
typedef struct {
    uint64_t id;
    char name[256];
    bool has_format;
    tour_format_t format;
    tour_status_t status;
    int64_t created_ms, start_at_ms, started_ms, ended_ms, clock_ms;
    int64_t level, entries, players, pool;
    int64_t match_stage, stage_clock0; /* a match: the current stage, the clock when it began */
    char cancel_reason[256];
    char *structure; /* the JSON text (malloc), NULL when absent */
} tour_client_meta_t;

/* Parses the reply of HGETALL meta into m (zeroed first). 0, -ENOENT for an empty hash (no such
 * tournament), -EINVAL for a reply that is no array. Free with tour_client_meta_clear(). */
int tour_client_meta_parse(const redisReply *r, tour_client_meta_t *m);
void tour_client_meta_clear(tour_client_meta_t *m);

/* An entry of the entries hash (one player's JSON); numbers absent are 0. */
typedef struct {
    uint32_t entry, entries, place, table, seat;
    int64_t stack, prize, paid, fees;
    char state[16]; /* registered, playing, waiting, busted, out, cancelled, refunded */
    char item[TOUR_ITEM_MAX + 1]; /* his place's item prize (docs/tournaments.md "Items"), "" */
} tour_client_entry_t;

/* 0, or -EINVAL when text is not a JSON object with a string "state". */
int tour_client_entry_parse(const char *text, size_t len, tour_client_entry_t *e);

/* The level a meta's `level` index and `clock_ms` stand at. */
typedef struct {
    const tour_level_t *level; /* NULL: the index is beyond the schedule */
    size_t index;
    int64_t ends_in_ms; /* until the next step; -1 in the last step */
} tour_client_level_t;

/* Fills out for the schedule of s at index level and the level clock clock_ms (>= 0): the
 * step's end is the sum of the durations up to it; never negative (a clock written up to a
 * renew period late). 0 or -EINVAL (level < 0). */
int tour_client_level(const tour_structure_t *s, int64_t level, int64_t clock_ms,
                      tour_client_level_t *out);

/* Places from..to paid amount each. */
typedef struct {
    uint32_t from, to;
    int64_t amount;
} tour_client_payout_t;

/*
 * The payout table for `entries` entries and the pool (tour_payout_table), with the places of
 * equal prizes merged into one row, best first, at most cap rows (the last rows are left out
 * beyond it). *nrows receives the rows written. 0 (no entries: no rows), -EINVAL, -ENOMEM.
 */
int tour_client_payouts(const tour_structure_t *s, uint32_t entries, int64_t pool,
                        tour_client_payout_t *rows, size_t cap, size_t *nrows);

/* A match's current stage as a client sees it (GetTournament's MatchStage and the asker's
 * score), from the stage's JSON ({croupier:tour:<id>}:stages, match_json.h). */
typedef struct {
    uint32_t stage, stages, round, rounds, deals_per_round, advance, players;
    char format[8]; /* "rising", "fixed", "swiss" */
    int64_t base_score;
    bool has_line;
    int64_t line; /* rising: out below it */
    bool has_score;
    int64_t score;
    bool has_mp;
    int32_t mp;
} tour_client_match_t;

/*
 * Fills out from the text of stage number `stage` (of the match structure s) at stage time
 * stage_ms (the director's clock minus the stage's start: the rising base and line), with
 * player's score (and Swiss match points) when he plays in it. 0, or -EINVAL (the text does not
 * load, or s is no match).
 */
int tour_client_match_view(const char *text, size_t len, const tour_structure_t *s, int64_t stage,
                           int64_t stage_ms, uint64_t player, tour_client_match_t *out);

/* What a message of TOUR_EVENTS_CHANNEL says ("<id> <log id> <event> <fields...>", the
 * director's log events: tour_lua.h and tour_play.c write them). */
typedef enum {
    TOUR_EV_OTHER = 0, /* an event clients are not told of (deal, draw, busted, ...) */
    TOUR_EV_REGISTERED,
    TOUR_EV_REENTERED,
    TOUR_EV_UNREGISTERED,
    TOUR_EV_STARTED,
    TOUR_EV_LEVEL,
    TOUR_EV_HAND_FOR_HAND,
    TOUR_EV_HAND_FOR_HAND_OVER,
    TOUR_EV_MOVE,
    TOUR_EV_SEATED,
    TOUR_EV_OUT,
    TOUR_EV_FINISHED,
    TOUR_EV_CANCELLED,
    TOUR_EV_STAGE,          /* match_stage: a match's stage begins (stage, players) */
    TOUR_EV_MATCH_OUT,      /* match_out: a player out of a match (his place comes at the end) */
    TOUR_EV_MATCH_PLACE,    /* match_place: a player's place and prize at a match's end */
    TOUR_EV_MATCH_FINISHED, /* match_finished */
} tour_event_kind_t;

typedef struct {
    uint64_t tournament;
    char log_id[48];
    char name[32]; /* the event's name as published */
    tour_event_kind_t kind;
    uint64_t player; /* registered, reentered, unregistered, move, seated, out; finished: winner */
    int64_t level;   /* level: the index */
    int64_t table;   /* move: the table moved to; seated */
    int64_t seat;
    int64_t place, prize;         /* out; finished (place 1) */
    char item[TOUR_ITEM_MAX + 1]; /* out, finished, match_place: the place's item, "" for none */
    int64_t players;  /* started: the entries; hand_for_hand(_over), stage: players left */
    int64_t stage;    /* stage, match_out: the stage (0-based) */
    char reason[256]; /* cancelled */
} tour_client_event_t;

/* Parses one published message. 0, or -EINVAL when it is not "<id> <log id> <event> ...". */
int tour_client_event_parse(const char *data, size_t len, tour_client_event_t *ev);

#endif
