/*
 * money_int.h -- what the money module's core files share (money.c, money_script.c,
 * money_cmd.c): the scripts' indices and table, the argv a script call is built in, and the
 * functions one file calls in another. Internal to croupier_money: nothing outside money/
 * includes it. money.h is the contract to the rest of the tree (money_writer.h, the writer
 * queue's); docs/architecture.md §6 "Money" is the design.
 *
 * The files, one concern each:
 *
 *   money.c         the core: error names (money_strerror), round ids (format, parse, the
 *                   service), the checks of players, names, op ids, amounts and settlements,
 *                   the key names (money_key_*), the parsing of the scripts' replies
 *                   (money_reply_parse, money_reply_error), the synchronous client
 *                   (money_sync_*) and hand-history records (money_history_*)
 *   money_script.c  the Lua scripts (settle, wallet, history, seat, mark, recover, offer, adopt,
 *                   withdraw), their table money_scripts[] and SHA1s (money_script_text,
 *                   money_script_sha)
 *   money_cmd.c     the script calls: the argv (money_argv_*), the RESP text of a call
 *                   (money_cmd_*) and the writer's operations (money_op_*)
 *
 * The other files of money/ (money_writer.c, recover.c, sweeper.c, handoff.c, jobs.c,
 * credit.c) stand on money.h alone; recover.c and handoff.c name their scripts by the indices
 * below (RECOVER_SCRIPT, OFFER_SCRIPT...), which must stay in step with SCRIPT_*.
 *
 * Who owns what: the module has no mutable global state but the scripts' SHA1s, which
 * money_script.c computes once (pthread_once in money_script_sha) and never writes again; the
 * scripts' text is constant. A money_argv_t is its builder's caller's (on the stack or
 * calloc'ed by money_cmd.c's money_cmd_* and money.c's money_sync_*); its short arguments are
 * copies in its slots, its long ones borrowed from the caller's strings and the scripts' text,
 * so it lives no longer than they do. Every function here is thread-safe.
 *
 * A new concern goes in a file of its own, money_<concern>.c, listed above, with a section of
 * its own among the prototypes below; a new script goes at the end of SCRIPT_* and of
 * money_scripts[] (MONEY_NSCRIPTS, money.h, counts them). docs/architecture.md §2 lists the
 * files too.
 */
#ifndef CROUPIER_MONEY_INT_H
#define CROUPIER_MONEY_INT_H

#include "money.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* ---- types ---------------------------------------------------------------------------------- */

/* The scripts, by their index in money_scripts[] (money_script_text and money_script_sha). */
enum {
    SCRIPT_SETTLE = 0,
    SCRIPT_WALLET = 1,
    SCRIPT_HISTORY = 2,
    SCRIPT_SEAT = 3,
    SCRIPT_MARK = 4,
    SCRIPT_RECOVER = 5,
    SCRIPT_OFFER = 6,
    SCRIPT_ADOPT = 7,
    SCRIPT_WITHDRAW = 8
};

/* EVALSHA sha numkeys | 3 + n keys | ttl | n epoch rake, n deltas */
#define MONEY_ARGV_MAX (2 + 1 + 3 + MONEY_MAX_PLAYERS + 1 + 3 + MONEY_MAX_PLAYERS)

/* An argv under construction: short arguments are copied into slots, long ones borrowed. */
typedef struct {
    int argc;
    const char *argv[MONEY_ARGV_MAX];
    size_t lens[MONEY_ARGV_MAX];
    char slot[MONEY_ARGV_MAX][160];
    bool overflow;
} money_argv_t;

/* ---- what one file uses of another ------------------------------------------------------- */

/* money.c: ids and key names. */
int money_parse_u64(const char **p, char stop, uint64_t *out);
int money_fmt(char *buf, size_t len, const char *fmt, ...);

/* money_script.c: the scripts' text, indexed by SCRIPT_*. */
extern const char *const money_scripts[MONEY_NSCRIPTS];

/* money.c: whether s is a shoe commitment as records write it, 64 lower-case hex digits. */
bool money_shoe_hex_valid(const char *s);

/* money_cmd.c: the argv of a script call, for money.c's synchronous client. */
void money_argv_eval(money_argv_t *a, int script);
int money_argv_settle(money_argv_t *a, const char *service, const money_settlement_t *s,
                      long ttl_s);
int money_argv_wallet(money_argv_t *a, money_kind_t kind, const char *player, int64_t amount,
                      const char *op_id, long ttl_s);
int money_argv_history(money_argv_t *a, const char *round_id, const char *game, const char *json,
                       long maxlen, long ttl_s, const char *mode, const char *const *shoes,
                       size_t nshoes);
int money_argv_seat(money_argv_t *a, const char *service, money_kind_t kind, const money_seat_t *st,
                    int64_t amount, const char *op_id, long ttl_s);

#endif
