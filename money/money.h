/*
 * money -- wallets, round settlement and hand histories in Redis (docs/architecture.md §6).
 *
 * Every change of money is one Redis Lua script, and every script is idempotent by an id the
 * caller chooses, so a command that is sent again (after a lost reply, a reconnect or a restart)
 * returns the first result and never applies twice: at-least-once delivery + idempotent scripts
 * = exactly-once effect.
 *
 *   buy-in    debits a wallet, idempotent by operation id; refused (MONEY_ERR_INSUFFICIENT)
 *             when the amount is larger than the balance. Nothing ever goes negative.
 *   cash-out  credits a wallet, idempotent by operation id.
 *   settle    applies every player's delta of one round or none: keyed by the round id
 *             "service:server:epoch:desk:seq", checks sum(deltas) == -rake, rejects a stale fencing
 *             epoch, rejects a settlement that would make any wallet negative, and on replay
 *             returns the first result (the balances right after the first application).
 *             One call of the script may carry a batch of rounds (the writer sends runs of
 *             consecutive settlements together); each round is still all-or-nothing on its own.
 *   history   appends the hand history (JSON) to one Redis Stream per game, XADD MAXLEN ~ cap,
 *             at most once per round id; fenced like a settlement (a round id with a service:
 *             only while its slot's fence equals its epoch; a recovery's void only after).
 *   seat      moves chips between a wallet and a seat account and records the account as held
 *             by the server's slot and epoch ("Held chips" below), fenced.
 *   mark      records a round in progress as held, fenced.
 *   recover   returns a dead epoch's held chips to their owners (money_recover).
 *
 * Keys (all passed in KEYS; see docs/queues.md and money_script.c for the scripts):
 *
 *   {croupier:money}:wallet:<player>      integer balance (absent = 0)
 *   {croupier:money}:op:<op_id>           buy-in/cash-out record: balance after (EX ttl)
 *   {croupier:money}:round:<round_id>     settle record: balances after, space separated (EX ttl);
 *                                         round_id = service:slot:epoch:desk:seq (see below)
 *   {croupier:money}:rake:<game>          rake collected by the house, per game
 *   {croupier:money}:rake:credits         the house's account of operator credits ("Operator
 *                                         credits"; their settle records: round:ctl:credit:<id>)
 *   {croupier:lease:<service>}:slot:<slot>:epoch  fence of server slot <slot> (lease/ owns it)
 *   {croupier:history:<game>}:stream      hand histories of one game (Stream)
 *   {croupier:history:<game>}:seen:<round_id>  history dedupe record: stream id (EX ttl)
 *   {croupier:history:<game>}:seen:shoe:<commitment>  the record that revealed that shoe: its
 *                                         stream id (EX ttl; docs/hand-history.md "The shoe
 *                                         index", written by the writer's history only)
 *
 * Fencing rule (the one lease/lease.h defines; same fence key as lease_format_fence_key()):
 * a settlement carries the epoch of the server-ID lease under which its round was played (also
 * part of the round id: server = the lease slot). The script reads the slot's fence and applies
 * the round only if the fence exists and equals that epoch; anything else (missing fence, older
 * epoch, an epoch from the future) is MONEY_ERR_STALE_EPOCH ("MONEY_STALE_EPOCH ...") and
 * nothing is written. Each acquisition of a slot stores a larger epoch in its fence, so a server
 * that lost its slot can never settle again.
 * Replays are answered before the fencing check: a round applied under a valid epoch keeps its
 * result even after the lease moved on.
 *
 * Redis Cluster: the money keys share the hash tag {croupier:money} so one settle touches one
 * slot, but the fencing key lives under the lease's tag; on a Cluster the settle script would
 * need the epoch mirrored under {croupier:money}. The project targets one Redis (with replicas),
 * where every key is passed in KEYS as scripts require.
 *
 * Amounts are integers with |x| <= MONEY_MAX_AMOUNT (exact in Lua's doubles). Player ids and
 * game names are 1..64 characters from [A-Za-z0-9_.-]; operation ids 1..96 of [A-Za-z0-9_.:-].
 */
#ifndef CROUPIER_MONEY_H
#define CROUPIER_MONEY_H

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MONEY_MAX_PLAYERS 16
#define MONEY_MAX_AMOUNT 100000000000000LL /* 1e14 chips */
#define MONEY_ID_MAX 160                   /* longest op id / round id text, without NUL */
#define MONEY_NAME_MAX 64                  /* longest player id / game name / service */

/* Results beyond 0 / -errno. Script errors start with the matching token (e.g.
 * "MONEY_STALE_EPOCH round epoch 3, current 4"), so logs and redis-cli show the same words. */
typedef enum {
    MONEY_OK = 0,
    MONEY_ERR_INSUFFICIENT = -1001, /* buy-in larger than the balance; nothing changed */
    MONEY_ERR_STALE_EPOCH = -1002,  /* settlement's fencing epoch is not the current one */
    MONEY_ERR_BAD_SUM = -1003,      /* deltas do not sum to minus the rake; nothing changed */
    MONEY_ERR_NEGATIVE = -1004,     /* a delta would make a wallet negative; nothing changed */
    MONEY_ERR_BAD_ARGS = -1005,     /* malformed arguments reached the script */
    MONEY_ERR_REDIS = -1006,        /* another error reply or an unexpected reply shape */
    MONEY_ERR_ALIVE = -1007,        /* recovery: the slot's epoch is still held (or may be) */
    MONEY_ERR_ADOPTED = -1008,      /* handoff: the offer was adopted by another server */
    MONEY_ERR_OFFER_VOID = -1009,   /* handoff: the offer was voided (its chips recovered) */
    MONEY_ERR_NO_OFFER = -1010,     /* handoff: no such offer (never made, or expired) */
} money_err_t;

/* A short English text for a money_err_t or a negative errno. */
const char *money_strerror(int code);

/*
 * Round id: "service:server:epoch:desk:seq" -- the lease service, the slot the game server holds
 * in that service's pool, the fencing epoch, the desk and the desk's round number. The service
 * keeps ids apart across services: each has its own slot pool, so two game servers of different
 * services can hold the same slot and epoch and number their desks alike (a settlement whose id
 * another service used first would be taken for a replay and never applied). An empty service
 * gives the short form "server:epoch:desk:seq" (tools and tests that run one service).
 */
typedef struct {
    char service[MONEY_NAME_MAX + 1];
    uint32_t server;
    uint64_t epoch;
    uint64_t desk;
    uint64_t seq;
} money_round_id_t;

/* Writes the text form into buf (at least MONEY_ID_MAX + 1 bytes); returns 0 or -ENOSPC. */
int money_round_id_format(const money_round_id_t *id, char *buf, size_t len);
/* Parses the text form (either form); returns 0 or -EINVAL. */
int money_round_id_parse(const char *text, money_round_id_t *out);
/* Sets id's service (a name, see money_valid_name, starting with a letter). Returns 0 or
 * -EINVAL (id unchanged). */
int money_round_id_set_service(money_round_id_t *id, const char *service);

/* One round's settlement. Pointers are borrowed for the duration of the call that takes it. */
typedef struct {
    money_round_id_t round;
    const char *game;
    size_t nplayers; /* 1..MONEY_MAX_PLAYERS, each player at most once */
    const char *players[MONEY_MAX_PLAYERS];
    int64_t deltas[MONEY_MAX_PLAYERS];
    int64_t rake; /* >= 0; the deltas must sum to -rake */
} money_settlement_t;

typedef enum {
    MONEY_KIND_SETTLE = 1,
    MONEY_KIND_HISTORY,
    MONEY_KIND_BUYIN,
    MONEY_KIND_CASHOUT,
    MONEY_KIND_SEAT_IN,  /* owner wallet -> seat account, recorded as held (see below) */
    MONEY_KIND_SEAT_OUT, /* seat account -> owner wallet */
    MONEY_KIND_MARK,     /* a round in progress, recorded as held */
} money_kind_t;
#define MONEY_NKINDS 8 /* kinds + 1: for tables indexed by kind */

/* The outcome of one operation. */
typedef struct money_result {
    money_kind_t kind;
    int status;    /* MONEY_OK, a money_err_t, or -errno (-ECANCELED: writer destroyed) */
    bool replayed; /* applied earlier; this is the first application's result */
    char id[MONEY_ID_MAX + 1]; /* round id or operation id */
    size_t nbalances;          /* settle: one per player, in order; buy-in/cash-out: 1 */
    int64_t balances[MONEY_MAX_PLAYERS];
    char stream_id[48]; /* history: the stream entry id */
    char error[200];    /* error text (from Redis when there was one) when status < 0 */
    void *arg;          /* the caller's argument given with the operation (writer) */
} money_result_t;

/* Validation of names and ids; each returns true when the text is acceptable. */
bool money_valid_player(const char *player);
bool money_valid_name(const char *name);
bool money_valid_op_id(const char *op_id);
/* Structural check of a settlement (ids, counts, duplicates, amount range, rake >= 0). The sum
 * rule is the script's to judge. Returns 0 or -EINVAL with a sentence in err. */
int money_settlement_check(const money_settlement_t *s, char *err, size_t errlen);

/*
 * The layout of a game server's money on a Redis Cluster (docs/queues.md "The game server's
 * money by entity"; croupier-game --money-by-entity): once at start, before any thread, never
 * changed afterwards. When on, a wallet is {p:<player>}:bal (money_key_wallet), a settlement's
 * keys are its epoch's ({s:<service>:<slot>:<epoch>}: round record, fence :live, rake
 * :bal:rake:<game>, seat accounts :bal:<account>; money_op_settle, money_argv_settle) and a
 * mark goes to {s:...}:held fenced by {s:...}:live (money_op_mark); the seat transfers are
 * money/mcluster.h's (money_writer.h). Off (the default): today's one-slot keys, unchanged.
 */
void money_set_entity(bool on);
bool money_entity(void);

/* The key names (for tests, tools and reconciliation). Return 0 or -ENOSPC. */
int money_key_wallet(const char *player, char *buf, size_t len);
int money_key_round(const char *round_id, char *buf, size_t len);
int money_key_rake(const char *game, char *buf, size_t len);
int money_key_epoch(const char *service, uint32_t slot, char *buf, size_t len);
int money_key_stream(const char *game, char *buf, size_t len);

/* ---- Synchronous client (blocking hiredis) for tools and tests ------------------------ */
/*
 * Each runs its script with EVALSHA (falling back to EVAL on NOSCRIPT) on the caller's
 * connection and fills *out. Returns out->status: MONEY_OK (also for a replay, see
 * out->replayed), a money_err_t, or -EIO when the connection failed. ttl_s is how long the
 * idempotency record is kept (0 = MONEY_RECORD_TTL_S).
 */
#define MONEY_RECORD_TTL_S (7L * 24 * 3600)
int money_sync_buyin(redisContext *c, const char *player, int64_t amount, const char *op_id,
                     money_result_t *out);
int money_sync_cashout(redisContext *c, const char *player, int64_t amount, const char *op_id,
                       money_result_t *out);
int money_sync_settle(redisContext *c, const char *service, const money_settlement_t *s,
                      money_result_t *out);
int money_sync_history(redisContext *c, const money_round_id_t *round, const char *game,
                       const char *json, long maxlen, money_result_t *out);
/* Reads a wallet (absent = 0). Returns 0, -EIO or MONEY_ERR_REDIS. */
int money_sync_balance(redisContext *c, const char *player, int64_t *out);

/* ---- Operator credits (money/credit.c; croupier-ctl credit, docs/ops.md) ------------- */
/*
 * A credit moves AMOUNT (negative: a debit) between a player's wallet and the house's account
 * of operator adjustments, the rake account {croupier:money}:rake:credits (minus what operators
 * credited, plus what they debited; it may go negative), and is booked like a round: one script
 * applies it, writes its settle record {croupier:money}:round:ctl:credit:<id> (the balance
 * after, the settle records' format) and appends its audit entry to {croupier:money}:audit
 * (kind credit, op_id ctl:<id>, round, player, amount, reason, operator, unix, balance_after),
 * all or nothing. So wallets + rake is what a credit conserves too, and every chip that entered
 * or left a wallet has a settle record. The round id's second field is not a number, so it never
 * parses as (or collides with) a server's round id. Idempotent by id: the same id again returns
 * the first result (replayed) for MONEY_RECORD_TTL_S; the same id for another player or amount
 * is MONEY_ERR_BAD_ARGS; a debit beyond the balance MONEY_ERR_INSUFFICIENT (nothing changed).
 */
#define MONEY_CREDIT_OP_PREFIX "ctl:"
#define MONEY_CREDIT_ROUND_PREFIX "ctl:credit:"
#define MONEY_CREDIT_ACCOUNT "credits" /* the rake account {croupier:money}:rake:credits */
#define MONEY_CREDIT_ID_MAX 92         /* 96 - strlen(MONEY_CREDIT_OP_PREFIX) */
#define MONEY_CREDIT_REASON_MAX 200
#define MONEY_AUDIT_KEY "{croupier:money}:audit"
/* + op id; it holds "<audit entry id> <player> <amount>" */
#define MONEY_AUDIT_SEEN_PREFIX "{croupier:money}:audit:seen:"
#define MONEY_AUDIT_MAXLEN 100000L

typedef struct {
    const char *player;
    int64_t amount;     /* non-zero, |amount| <= MONEY_MAX_AMOUNT */
    const char *id;     /* the operator's id: 1..MONEY_CREDIT_ID_MAX of [A-Za-z0-9_.:-] */
    const char *reason; /* 1..MONEY_CREDIT_REASON_MAX printable characters */
    long operator_id;
    int64_t unix_s; /* wall time of the request, in the audit entry */
} money_credit_t;

typedef struct {
    int status;         /* as returned */
    bool replayed;      /* applied earlier: the first application's result */
    bool balance_known; /* false only for a replay whose settle record expired */
    int64_t balance_after;
    char op_id[MONEY_ID_MAX + 1];    /* ctl:<id> */
    char round_id[MONEY_ID_MAX + 1]; /* ctl:credit:<id> */
    char audit_id[48];               /* the audit entry's stream id ("" if unknown) */
    char error[200];
} money_credit_result_t;

/* Returns 0, -EINVAL (bad input, nothing sent), -EIO, MONEY_ERR_INSUFFICIENT, MONEY_ERR_BAD_ARGS
 * (the id was used for another credit) or MONEY_ERR_REDIS; out->error says why. With the money
 * by entity a credit is money/mcredit.h's instead (its keys are in two slots). */
int money_sync_credit(redisContext *c, const money_credit_t *cr, money_credit_result_t *out);
/*
 * Replication of the writes made on c so far, for the money calls outside the writer (table
 * handoffs, operator credits: no replay journal covers them, docs/deploy.md "Failover and
 * durability"). Asks the master how many replicas are connected (ROLE), then `WAIT` for all of
 * them -- at least min_replicas -- for up to wait_ms (<= 0: 500): with every connected replica
 * holding the write, whichever replica Sentinel promotes has it. Returns 0 when at least
 * min_replicas acknowledged (out->got may still be below out->want: a replica lagging past
 * wait_ms), else -1 with out->error saying why (no reply, too few replicas, a refusal).
 */
typedef struct {
    int want; /* replicas waited for: max(min_replicas, connected replicas) */
    int got;  /* replicas that acknowledged (-1: no WAIT answer) */
    char error[160];
} money_wait_result_t;
int money_sync_wait_replicas(redisContext *c, int min_replicas, int wait_ms,
                             money_wait_result_t *out);
/* The input of a credit checked (player, amount, reason, id), out zeroed and its op_id and
 * round_id filled: 0, or -EINVAL with out->error saying why. Both ways of crediting start so. */
int money_credit_check(const money_credit_t *cr, money_credit_result_t *out);
/* Fills op_id ("ctl:<id>") and round_id ("ctl:credit:<id>"), each len bytes. Returns 0,
 * -EINVAL or -ENOSPC. */
int money_credit_ids(const char *id, char *op_id, char *round_id, size_t len);
/* Whether round_id names a credit's settle record (MONEY_CREDIT_ROUND_PREFIX). */
bool money_credit_round(const char *round_id);

/* ---- Held chips: seat accounts and rounds in progress (docs/queues.md) --------------- */
/*
 * Every chip outside a player's wallet sits in a seat account (a wallet named by the table kit,
 * engine/tk.h) and every seat account is recorded, in the same script that moves chips into it,
 * under the lease slot and epoch of the server that holds it:
 *
 *   {croupier:money}:held:<service>:<slot>:<epoch>  HASH: <seat account> -> <owner wallet>,
 *                                      and r:<desk hex> -> the JSON of that desk's latest round
 *                                      start (round id, game, seats), see money_writer_submit_mark
 *   {croupier:money}:held             SET of "<service>:<slot>:<epoch>" with a held HASH
 *   {croupier:money}:recovered:<service>:<slot>:<epoch>  HASH chips, accounts, voided: what a
 *                                      recovery returned (EX record ttl)
 *
 * A seat transfer (MONEY_KIND_SEAT_IN / _OUT) moves amount between the owner's wallet and the
 * seat account atomically, idempotent by operation id, and only while the slot's fence equals
 * the epoch (MONEY_ERR_STALE_EPOCH otherwise): a server that lost its slot can neither buy in
 * nor cash out. SEAT_IN records the account (and refuses INSUFFICIENT beyond the owner's
 * balance); SEAT_OUT forgets it once it is empty. Settlements move chips between seat accounts
 * (and the rake), so the held records stay true. Recovery (money_recover) returns the held
 * accounts of a dead epoch to their owners and voids its rounds in progress.
 */
typedef struct {
    uint32_t slot; /* the holder's lease slot and epoch */
    uint64_t epoch;
    const char *account; /* seat account (a wallet name) */
    const char *owner;   /* the wallet the chips belong to (a player, or the house) */
} money_seat_t;

int money_key_held(const char *service, uint32_t slot, uint64_t epoch, char *buf, size_t len);
#define MONEY_HELD_INDEX_KEY "{croupier:money}:held"

/* out->balances[0] is the owner's balance after. Returns out->status as money_sync_buyin. */
int money_sync_seat(redisContext *c, const char *service, money_kind_t kind, const money_seat_t *s,
                    int64_t amount, const char *op_id, money_result_t *out);

/*
 * Recovery of the held chips of (service, slot, epoch):
 *   MONEY_RECOVER_DEAD   only when the fence has moved past epoch (the slot was taken again or
 *                        recovered): the next holder of a slot does this at start.
 *   MONEY_RECOVER_CLAIM  also when the fence still equals epoch but nobody holds the slot (the
 *                        lease expired): the fence is first moved to a new epoch (the lease's
 *                        epoch counter), so that the old holder -- if it was only paused --
 *                        can never settle, buy in, cash out or mark again. The caller decides
 *                        when an unheld slot counts as dead (money/sweeper.h: a grace period).
 *   MONEY_RECOVER_SELF   the holder itself at the end of a graceful exit (token = its lease
 *                        token): returns what a failed cash-out left and clears its records.
 * Then every held seat account goes back to its owner's wallet (exactly once: the account and
 * its record are deleted in the same script), and every round in progress (an r: record whose
 * round has no settle record) gets a hand history with "outcome":"voided" and
 * "void_reason":"VOID_SERVER_CRASHED" (at most once per round id, like every history). Safe to
 * run twice and to race: each step re-checks in its script.
 * Returns 0 (out filled), MONEY_ERR_ALIVE (the epoch is live or not claimable; nothing changed),
 * -EIO (connection) or another money_err_t.
 */
typedef enum {
    MONEY_RECOVER_DEAD = 0,
    MONEY_RECOVER_CLAIM,
    MONEY_RECOVER_SELF,
} money_recover_mode_t;

typedef struct {
    int64_t chips;      /* returned to wallets by this call */
    int accounts;       /* seat accounts that held chips */
    int voided;         /* rounds in progress voided (histories written now) */
    uint64_t new_fence; /* CLAIM: the fence it set; 0 when it did not move it */
    char error[200];
} money_recover_result_t;

int money_recover(redisContext *c, const char *service, uint32_t slot, uint64_t epoch,
                  money_recover_mode_t mode, const char *token, long history_maxlen,
                  money_recover_result_t *out);

/* The voided hand history of a round in progress from its round record (the JSON of an r:
 * field: round, game, seats): zero results, "outcome":"voided", "void_reason":
 * "VOID_SERVER_CRASHED". Copies the round id and game into round and game. Returns the JSON
 * (malloc'ed; free it) or NULL when the record is malformed or the names do not fit. */
char *money_void_history(const char *record, char *round, size_t rlen, char *game, size_t glen);

/* A hand history of a round of a dead epoch (the history script's "void" mode: only once the
 * round's fence has moved past its epoch). For money_recover and tools. */
int money_sync_history_void(redisContext *c, const char *round_id, const char *game,
                            const char *json, long maxlen, money_result_t *out);

/* ---- Table handoff: a whole table moves to another server (money/handoff.c) ---------- */
/*
 * A table that moves as a whole (a drain, issue 16) takes its seat accounts with it, exactly
 * once and fenced:
 *   offer   the old server, under its epoch, records the table's state (opaque to money) and
 *           its seat accounts at {croupier:money}:handoff:<offer id> (status "offered", EX
 *           record ttl) and marks it in its held HASH (field h:<offer id>). Each account must be
 *           held for its owner. From then on the old table must not touch its accounts.
 *   adopt   one new server, under its own epoch, moves every offered account's chips into a
 *           seat account of its own (recorded as held by its epoch) and marks the offer
 *           "adopted" by it, in one script: exactly one adopter ever (another gets
 *           MONEY_ERR_ADOPTED, the same adopter again its first result).
 *   withdraw  nobody adopted it in time: the old server takes it back (money_sync_offer_withdraw)
 *           and re-seats or refunds its players itself; an adoption after that is refused.
 *   void    if the old server dies before an adoption, the recovery of its epoch
 *           (money_recover) marks the offer "void" in the same script that returns the accounts
 *           to their owners; an adoption after that is refused (MONEY_ERR_OFFER_VOID). If the
 *           adopter dies after adopting, the chips are held by its epoch: its recovery returns
 *           them.
 * Either way every chip is in exactly one held record, or back in its wallet.
 * Offer ids: "<service>:<slot>:<epoch>:<desk hex>:<n>" (n: the desk's handoff number).
 */
#define MONEY_HANDOFF_KEY_PREFIX "{croupier:money}:handoff:"

typedef struct {
    const char *account; /* the old table's seat account */
    const char *owner;
    int seat;
} money_handoff_seat_t;

typedef struct {
    uint32_t slot; /* the old server's lease slot and epoch */
    uint64_t epoch;
    uint64_t desk;
    uint64_t n;
    const char *state; /* the table's state, e.g. JSON (at most 64 KiB) */
    size_t nseats;     /* 0..MONEY_MAX_PLAYERS */
    money_handoff_seat_t seats[MONEY_MAX_PLAYERS];
} money_offer_t;

int money_offer_id(const char *service, const money_offer_t *o, char *buf, size_t len);
/* Records the offer. out->status: MONEY_OK (out->replayed: it existed), MONEY_ERR_STALE_EPOCH,
 * MONEY_ERR_BAD_ARGS (an account not held for its owner), -EIO. */
int money_sync_offer(redisContext *c, const char *service, const money_offer_t *o,
                     money_result_t *out);

/* An offer as read back (by an adopter, a tool, a test). */
typedef struct {
    char status[16]; /* offered | adopted | void */
    char adopter[MONEY_ID_MAX + 1];
    char *state; /* malloc'ed; free it */
    size_t nseats;
    char accounts[MONEY_MAX_PLAYERS][MONEY_NAME_MAX + 1];
    char owners[MONEY_MAX_PLAYERS][MONEY_NAME_MAX + 1];
    int seats[MONEY_MAX_PLAYERS];
} money_offer_info_t;
/* 0, MONEY_ERR_NO_OFFER, MONEY_ERR_REDIS (malformed record) or -EIO. */
int money_sync_offer_read(redisContext *c, const char *offer_id, money_offer_info_t *out);

/* Adopts offer_id for (service, slot, epoch, desk): new_accounts[i] (the adopter's seat
 * accounts, distinct from the old ones) receive the chips of the offer's account i; stacks[i] is
 * what each held. out->status: MONEY_OK (replayed: adopted before by the same adopter),
 * MONEY_ERR_ADOPTED, MONEY_ERR_OFFER_VOID, MONEY_ERR_NO_OFFER, MONEY_ERR_STALE_EPOCH (the
 * adopter's own epoch is not its slot's fence), MONEY_ERR_BAD_ARGS, -EIO. */
int money_sync_adopt(redisContext *c, const char *offer_id, const char *service, uint32_t slot,
                     uint64_t epoch, uint64_t desk, const char *const *new_accounts, size_t n,
                     int64_t *stacks, money_result_t *out);

/* The old server takes back an offer nobody adopted (its accounts stay held by its epoch; the
 * table goes on or closes there). status[]: "withdrawn" (out->replayed: it was already), or
 * "adopted" / "void" when that happened first (nothing changes). out->status: MONEY_OK,
 * MONEY_ERR_NO_OFFER, MONEY_ERR_STALE_EPOCH (the fence moved: the recovery voids it), -EIO. */
int money_sync_offer_withdraw(redisContext *c, const char *service, const money_offer_t *o,
                              char status[16], money_result_t *out);

/* Parses an index member "<service>:<slot>:<epoch>". 0 or -EINVAL. */
int money_held_parse(const char *member, char *service, size_t len, uint32_t *slot,
                     uint64_t *epoch);

/* ---- Hand histories (jansson) ------------------------------------------------------- */
/*
 * A hand history is a JSON object complete enough to replay the round:
 *   {"round":"holdem:1:4:17:9","game":"holdem","ts":<wall ms>,
 *    "seats":[{"seat":0,"player":"p1","bot":false,"stack":1000},...],
 *    "cards":[{"seat":0,"card":"As"},{"seat":-1,"card":"Kd"},...],   (-1 = board / table)
 *    "actions":[{"seat":0,"action":"raise","amount":40},...],       (in the order played)
 *    "results":[{"seat":0,"delta":-40},...], "rake":<chips>}
 * Games may add fields (e.g. "seed", "variant"). The builder returns a new reference (caller
 * owns); add_* return 0 or -EINVAL.
 */
json_t *money_history_new(const money_round_id_t *round, const char *game);
int money_history_add_seat(json_t *h, int seat, const char *player, bool bot, int64_t stack);
int money_history_add_card(json_t *h, int seat, const char *card);
int money_history_add_action(json_t *h, int seat, const char *action, int64_t amount);
int money_history_add_result(json_t *h, int seat, int64_t delta);
/* Sets the history's "round" to round (the round id its settlement carried: gs_round_id() may
 * have given the round a newer epoch since the history began). 0 or -EINVAL. */
int money_history_set_round(json_t *h, const money_round_id_t *round);
/* Whether h has the four arrays seats, cards, actions, results and a string "round". */
bool money_history_valid(const json_t *h);
/* The most shoes one record may reveal and index (a blackjack round retires one or two). */
#define MONEY_HISTORY_SHOES_MAX 8
/*
 * The shoe index (docs/hand-history.md "The shoe index"): the commitments of the shoes h reveals
 * (its "shoe_reveal" entries' "commitment", blackjack's round and table records) into out, at
 * most max of them, each a borrowed string of 64 lower-case hex digits; an entry without one is
 * skipped, and so is a commitment already listed. Returns how many (0: h reveals no shoe).
 */
size_t money_history_shoes(const json_t *h, const char **out, size_t max);

/* ---- Building blocks of the writer and of tools (not for desks) ---------------------- */
/*
 * Builds the EVALSHA command of an operation in Redis protocol form, for pipelining on a
 * blocking connection (redisAppendFormattedCommand; tools and tests). *cmd is malloc'ed (free()),
 * *len its length. Returns 0 or -EINVAL. The history variant takes the JSON text.
 */
int money_cmd_settle(const char *service, const money_settlement_t *s, long ttl_s, char **cmd,
                     size_t *len);
/*
 * One operation as script arguments, for rconn_eval(): argv[0, nkeys) are its keys,
 * argv[nkeys, argc) its arguments (a settlement's without the batch-wide ttl, which the settle
 * script takes as its first argument). One allocation; free with money_op_free(). The builders
 * return 0 or -EINVAL (malformed input).
 */
typedef struct {
    int script; /* index for money_script_text() */
    int nkeys, argc;
    const char **argv;
    size_t *lens;
} money_op_t;
int money_op_settle(const char *service, const money_settlement_t *s, money_op_t *out);
int money_op_wallet(money_kind_t kind, const char *player, int64_t amount, const char *op_id,
                    long ttl_s, money_op_t *out);
/* shoes: the commitments (64 lower-case hex digits each, at most MONEY_HISTORY_SHOES_MAX) of
 * the shoes the record reveals, each indexed under the history's seen:shoe:<commitment> with the
 * record (money_history_shoes(); NULL, 0: none). */
int money_op_history(const char *round_id, const char *game, const char *json, long maxlen,
                     long ttl_s, const char *const *shoes, size_t nshoes, money_op_t *out);
int money_op_seat(const char *service, money_kind_t kind, const money_seat_t *s, int64_t amount,
                  const char *op_id, long ttl_s, money_op_t *out);
int money_op_mark(const char *service, uint32_t slot, uint64_t epoch, const char *field,
                  const char *value, money_op_t *out);
void money_op_free(money_op_t *op);

/*
 * A settlement pre-formatted for batching: buf holds its keys then its arguments as Redis
 * protocol bulk strings (keys_len + args_len bytes; free(buf)). money_cmd_settle_batch() joins
 * n of them into one EVALSHA of the settle script (each round still all-or-nothing; the reply
 * is an array of n entries, see money_reply_parse_entry). Return 0 / -EINVAL, or NULL on OOM.
 */
typedef struct {
    char *buf;
    size_t keys_len, args_len;
    int nkeys, nargs;
} money_settle_parts_t;
int money_settle_parts(const char *service, const money_settlement_t *s, money_settle_parts_t *out);
char *money_cmd_settle_batch(const money_settle_parts_t *const *parts, size_t n, long ttl_s,
                             size_t *len);
int money_cmd_wallet(money_kind_t kind, const char *player, int64_t amount, const char *op_id,
                     long ttl_s, char **cmd, size_t *len);
int money_cmd_history(const char *round_id, const char *game, const char *json, long maxlen,
                      long ttl_s, char **cmd, size_t *len);
/* How a reply must be handled. */
typedef enum {
    MONEY_REPLY_DONE,  /* *out holds the final result (success or a permanent error) */
    MONEY_REPLY_RETRY, /* transient (NOSCRIPT, LOADING, BUSY, ...): send again later */
} money_reply_action_t;
money_reply_action_t money_reply_parse(money_kind_t kind, const redisReply *r, money_result_t *out);
/* One {flag, value} entry of a reply (a settle batch holds one per round; flag -1 = rejected). */
money_reply_action_t money_reply_parse_entry(money_kind_t kind, const redisReply *entry,
                                             money_result_t *out);
/* The scripts' text and SHA1 (hex), for SCRIPT LOAD. index 0..MONEY_NSCRIPTS-1. */
#define MONEY_NSCRIPTS 9
const char *money_script_text(int index);
const char *money_script_sha(int index);

#endif
