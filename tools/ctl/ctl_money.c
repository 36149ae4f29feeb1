/*
 * ctl_money.c -- croupier-ctl's commands on money (docs/ops.md, its table of commands and
 * "credit: idempotent, audited, booked like a round"): wallet PLAYER (balance, chips at tables,
 * recent credits and rounds from the audit and hand-history streams), round ROUND_ID (settle
 * record and hand history, or a credit's audit entry) and credit PLAYER AMOUNT
 * (money_sync_credit, money.h "Operator credits"). Part of the tool: ctl.h is what its files
 * share.
 *
 * Each command reads Redis through ctl.c's connection R and helpers, builds one JSON document,
 * prints it (--json) or a table (ctl_table), and returns the exit status: 0, 1 not found /
 * refused / unreachable, 2 bad arguments (credit's amount).
 *
 * With --money-by-entity (docs/queues.md "The wallets outside the game server") wallet reads
 * {p:<player>}:bal and the seat accounts of the epochs ({s:...}) through a cluster client, and
 * credit is money/mcredit.h's mcredit_apply; the audit stream, settle records and hand
 * histories stay in the money slot, read on R as ever.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "holdem_record.h"
#include "ctl.h"
#include "keytag.h"
#include "mcluster.h"
#include "mcredit.h"
#include "money.h"
#include "rcluster.h"

#define CTL_AUDIT_KEY MONEY_AUDIT_KEY
#define CTL_REASON_MAX MONEY_CREDIT_REASON_MAX

/* ---- wallet / round ----------------------------------------------------------------------- */

/* The games with a hand-history stream: "<history base>:stream" keys (common/keytag.h). */
static json_t *ctl_history_games(void)
{
    char pat[64];
    const char *head = keytag_cluster() ? "{croupier:money}:history:" : "{croupier:history:";
    const char *tail = keytag_cluster() ? ":stream" : "}:stream";
    snprintf(pat, sizeof pat, "%s*%s", head, tail);
    json_t *keys = ctl_scan(pat, "stream");
    if (keys == NULL)
        return NULL;
    json_t *games = json_array();
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        const char *s = json_string_value(k) + strlen(head);
        const char *end = strstr(s, tail);
        if (end != NULL)
            json_array_append_new(games, json_stringn(s, (size_t)(end - s)));
    }
    json_decref(keys);
    return games;
}

static int64_t ctl_stream_ms(const char *stream_id)
{
    return strtoll(stream_id, NULL, 10);
}

/* Sorts the array of operations by "ts" descending and keeps the first O.limit. */
static void ctl_recent(json_t *ops)
{
    size_t n = json_array_size(ops);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a;
             b > 0 && json_integer_value(json_object_get(json_array_get(ops, b - 1), "ts")) <
                          json_integer_value(json_object_get(json_array_get(ops, b), "ts"));
             b--) {
            json_t *t = json_incref(json_array_get(ops, b));
            json_array_set(ops, b, json_array_get(ops, b - 1));
            json_array_set_new(ops, b - 1, t);
        }
    while (json_array_size(ops) > (size_t)O.limit)
        json_array_remove(ops, json_array_size(ops) - 1);
}

/*
 * The seat accounts held for player with the money by entity (docs/queues.md "The game server's
 * money by entity"): the epochs of {croupier:money}:epochs (in the money slot, on R), each
 * epoch's {s:...}:held and seat accounts {s:...}:bal:<account> in the epoch's slot, through the
 * cluster client c. Appends {account, chips, held_by} to accounts. 0, or 1 after a message.
 */
static int ctl_wallet_seats_entity(rcluster_t *c, const char *player, json_t *accounts)
{
    redisReply *idx = CTL_CMD("SMEMBERS", MCLUSTER_INDEX_KEY);
    if (idx == NULL)
        return 1;
    int status = 0;
    for (size_t i = 0; idx->type == REDIS_REPLY_ARRAY && i < idx->elements && status == 0; i++) {
        char service[MONEY_NAME_MAX + 1], held[256];
        uint32_t slot;
        uint64_t epoch;
        if (money_held_parse(idx->element[i]->str, service, sizeof service, &slot, &epoch) != 0 ||
            mcluster_key_epoch(service, slot, epoch, ":held", held, sizeof held) != 0)
            continue;
        redisReply *h = rcluster_command(c, RCLUSTER_RESEND, held, "HGETALL %s", held);
        if (h == NULL || h->type != REDIS_REPLY_ARRAY) {
            status = ctl_fail(1, "cannot read %s: %s", held,
                              h == NULL ? rcluster_last_error(c) : "not a hash");
        } else {
            for (size_t k = 0; k + 1 < h->elements; k += 2) {
                const char *f = h->element[k]->str;
                char seat[320];
                if (f[0] == '\0' || f[1] == ':' || strcmp(h->element[k + 1]->str, player) != 0 ||
                    mcluster_key_seat(service, slot, epoch, f, seat, sizeof seat) != 0)
                    continue; /* r:<desk> records, or another owner's account */
                redisReply *b = rcluster_command(c, RCLUSTER_RESEND, seat, "GET %s", seat);
                json_int_t chips =
                    b != NULL && b->type == REDIS_REPLY_STRING ? strtoll(b->str, NULL, 10) : 0;
                if (b != NULL)
                    freeReplyObject(b);
                json_array_append_new(accounts, json_pack("{s:s,s:I,s:s}", "account", seat, "chips",
                                                          chips, "held_by", idx->element[i]->str));
            }
        }
        if (h != NULL)
            freeReplyObject(h);
    }
    freeReplyObject(idx);
    return status;
}

/* The seat accounts held for player in today's one-slot layout ({croupier:money}:held and each
 * server epoch's held record). Appends {account, chips, held_by}. 0, or 1 after a message. */
static int ctl_wallet_seats(const char *player, json_t *accounts)
{
    redisReply *idx = CTL_CMD("SMEMBERS", MONEY_HELD_INDEX_KEY);
    if (idx == NULL)
        return 1;
    for (size_t i = 0; idx->type == REDIS_REPLY_ARRAY && i < idx->elements; i++) {
        char service[MONEY_NAME_MAX + 1];
        uint32_t slot;
        uint64_t epoch;
        if (money_held_parse(idx->element[i]->str, service, sizeof service, &slot, &epoch) != 0)
            continue;
        json_t *held = ctl_held(service, (int)slot, (int64_t)epoch);
        const char *f;
        json_t *v;
        json_object_foreach(held, f, v)
        {
            if (f[1] == ':' || strcmp(json_string_value(v), player) != 0)
                continue; /* r:<desk> / h:<offer> records, or another owner's account */
            int64_t chips = 0;
            money_sync_balance(R, f, &chips);
            json_array_append_new(accounts,
                                  json_pack("{s:s,s:I,s:s}", "account", f, "chips",
                                            (json_int_t)chips, "held_by", idx->element[i]->str));
        }
        json_decref(held);
    }
    freeReplyObject(idx);
    return 0;
}

int ctl_wallet(const char *player)
{
    if (!money_valid_player(player))
        return ctl_fail(2, "'%s' is not a player id (1..64 of [A-Za-z0-9_.-])", player);
    char key[128];
    money_key_wallet(player, key, sizeof key);
    bool has_wallet = false;
    int64_t balance = 0;
    json_t *accounts = json_array();
    if (O.money_by_entity) {
        /* {p:<player>}:bal in the player's slot, the seat accounts in their epochs' slots */
        rcluster_t *c = ctl_cluster_client();
        if (c == NULL) {
            json_decref(accounts);
            return 1;
        }
        int rc = mcredit_balance(c, player, &balance, &has_wallet);
        if (rc != 0)
            ctl_fail(1, "cannot read the wallet %s: %s", key,
                     rc == -EIO ? rcluster_last_error(c) : "it holds no integer");
        else
            rc = ctl_wallet_seats_entity(c, player, accounts);
        rcluster_destroy(c);
        if (rc != 0) {
            json_decref(accounts);
            return 1;
        }
    } else {
        redisReply *ex = CTL_CMD("EXISTS", key);
        if (ex == NULL) {
            json_decref(accounts);
            return 1;
        }
        has_wallet = ex->integer == 1;
        freeReplyObject(ex);
        if (money_sync_balance(R, player, &balance) != 0) {
            json_decref(accounts);
            return ctl_fail(1, "cannot read the wallet of %s", player);
        }
        /* Seat accounts held for the player (chips at a table). */
        if (ctl_wallet_seats(player, accounts) != 0) {
            json_decref(accounts);
            return 1;
        }
    }

    /* Recent operations: credits from the audit stream, rounds from the hand histories. */
    json_t *ops = json_array();
    redisReply *au = CTL_CMD("XREVRANGE", CTL_AUDIT_KEY, "+", "-", "COUNT", "1000");
    for (size_t i = 0; au != NULL && au->type == REDIS_REPLY_ARRAY && i < au->elements; i++) {
        json_t *en = ctl_stream_entry(au->element[i]);
        const char *p = en ? json_string_value(json_object_get(en, "player")) : NULL;
        if (p != NULL && strcmp(p, player) == 0)
            json_array_append_new(
                ops,
                json_pack(
                    "{s:I,s:s,s:O?,s:O?,s:I,s:O?,s:O?,s:O?}", "ts",
                    (json_int_t)ctl_stream_ms(json_string_value(json_object_get(en, "stream_id"))),
                    "kind", "credit", "op_id", json_object_get(en, "op_id"), "round",
                    json_object_get(en, "round"), "delta",
                    (json_int_t)strtoll(json_string_value(json_object_get(en, "amount")), NULL, 10),
                    "reason", json_object_get(en, "reason"), "operator",
                    json_object_get(en, "operator"), "balance_after",
                    json_object_get(en, "balance_after")));
        json_decref(en);
    }
    if (au != NULL)
        freeReplyObject(au);
    json_t *games = ctl_history_games();
    size_t gi;
    json_t *g;
    json_array_foreach(games, gi, g)
    {
        char skey[128];
        money_key_stream(json_string_value(g), skey, sizeof skey);
        redisReply *h = CTL_CMD("XREVRANGE", skey, "+", "-", "COUNT", "500");
        for (size_t i = 0; h != NULL && h->type == REDIS_REPLY_ARRAY && i < h->elements; i++) {
            json_t *en = ctl_stream_entry(h->element[i]);
            json_t *hist =
                en ? json_loads(json_string_value(json_object_get(en, "data")), 0, NULL) : NULL;
            int seat = hist ? ctl_seat_of(hist, player) : -1;
            if (seat >= 0) {
                json_int_t delta = 0;
                size_t k;
                json_t *res;
                json_array_foreach(json_object_get(hist, "results"), k, res)
                {
                    if (json_integer_value(json_object_get(res, "seat")) == seat)
                        delta += json_integer_value(json_object_get(res, "delta"));
                }
                json_t *outcome = json_object_get(hist, "outcome");
                json_array_append_new(
                    ops, json_pack("{s:I,s:s,s:O?,s:O,s:I,s:i,s:s}", "ts",
                                   (json_int_t)ctl_stream_ms(
                                       json_string_value(json_object_get(en, "stream_id"))),
                                   "kind", "round", "round", json_object_get(hist, "round"), "game",
                                   g, "delta", delta, "seat", seat, "outcome",
                                   outcome ? json_string_value(outcome) : "completed"));
            }
            json_decref(hist);
            json_decref(en);
        }
        if (h != NULL)
            freeReplyObject(h);
    }
    json_decref(games);
    if (!has_wallet && json_array_size(accounts) == 0 && json_array_size(ops) == 0) {
        json_decref(accounts);
        json_decref(ops);
        return ctl_fail(1, "player %s has no wallet, no seat account and no operation", player);
    }
    ctl_recent(ops);
    json_t *doc = json_pack("{s:s,s:s,s:I,s:o,s:o}", "player", player, "wallet", key, "balance",
                            (json_int_t)balance, "seat_accounts", accounts, "recent", ops);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        printf("player %s: balance %" PRId64 "%s%s\n", player, balance,
               O.money_by_entity ? " at " : "", O.money_by_entity ? key : "");
        if (json_array_size(accounts) > 0) {
            printf("\nchips at tables:\n");
            static const char *const cols[] = {"account", "chips", "held_by", NULL};
            static const char *const heads[] = {"SEAT_ACCOUNT", "CHIPS", "HELD_BY"};
            ctl_table(accounts, cols, heads);
        }
        printf("\nrecent operations (newest first, at most %ld):\n", O.limit);
        size_t k;
        json_t *op;
        json_array_foreach(ops, k, op)
        {
            char when[32];
            ctl_time(json_integer_value(json_object_get(op, "ts")), when, sizeof when);
            json_object_set_new(op, "time", json_string(when));
        }
        static const char *const cols[] = {"time",    "kind",  "delta",  "round", "game",
                                           "outcome", "op_id", "reason", NULL};
        static const char *const heads[] = {"TIME (UTC)", "KIND",    "DELTA", "ROUND",
                                            "GAME",       "OUTCOME", "OP_ID", "REASON"};
        ctl_table(ops, cols, heads);
    }
    json_decref(doc);
    return 0;
}

/*
 * round ctl:credit:ID: a credit's settle record (money.h, "Operator credits") and its audit
 * entry, found through the seen record of its op id ("<entry> <player> <amount>").
 */
static int ctl_round_credit(const char *round_id)
{
    const char *id = round_id + strlen(MONEY_CREDIT_ROUND_PREFIX);
    char op_id[MONEY_ID_MAX + 1], rid[MONEY_ID_MAX + 1];
    if (money_credit_ids(id, op_id, rid, sizeof op_id) != 0)
        return ctl_fail(2, "'%s' is not a credit's round id (ctl:credit:ID)", round_id);
    char key[256], seen[256], *rec, *sv;
    bool found_rec, found_seen;
    money_key_round(rid, key, sizeof key);
    snprintf(seen, sizeof seen, MONEY_AUDIT_SEEN_PREFIX "%s", op_id);
    if (ctl_get(key, &rec, &found_rec) != 0)
        return 1;
    if (ctl_get(seen, &sv, &found_seen) != 0) {
        free(rec);
        return 1;
    }
    if (!found_rec && !found_seen) {
        free(rec);
        free(sv);
        return ctl_fail(1, "no credit %s: no settle record and no audit entry", round_id);
    }
    json_t *settle = json_null();
    if (found_rec)
        settle = json_pack("{s:s,s:[I]}", "key", key, "balances_after",
                           (json_int_t)strtoll(rec, NULL, 10));
    json_t *audit = json_null();
    if (found_seen) {
        char *sp = strchr(sv, ' ');
        if (sp != NULL)
            *sp = '\0';
        redisReply *x = CTL_CMD("XRANGE", CTL_AUDIT_KEY, sv, sv);
        audit = x && x->type == REDIS_REPLY_ARRAY && x->elements == 1
                    ? ctl_stream_entry(x->element[0])
                    : json_pack("{s:s}", "stream_id", sv); /* trimmed: only its id is known */
        if (x != NULL)
            freeReplyObject(x);
    }
    free(rec);
    free(sv);
    json_t *doc = json_pack("{s:s,s:s,s:b,s:o,s:o}", "round", rid, "kind", "credit", "settled",
                            !json_is_null(settle), "settle", settle, "audit", audit);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char b1[256], b2[256], b3[256];
        printf("round %s (an operator credit)\n  settled: %s", rid,
               json_is_null(settle) ? "no (the record expired)" : "yes");
        if (!json_is_null(settle))
            printf(" (%s: balance after %s)", key,
                   ctl_cell(json_object_get(settle, "balances_after"), b1, sizeof b1));
        printf("\n");
        if (json_object_get(audit, "player") != NULL)
            printf("  player: %s   amount: %s   operator: %s   reason: %s\n",
                   ctl_cell(json_object_get(audit, "player"), b1, sizeof b1),
                   ctl_cell(json_object_get(audit, "amount"), b2, sizeof b2),
                   ctl_cell(json_object_get(audit, "operator"), b3, sizeof b3),
                   json_string_value(json_object_get(audit, "reason")));
    }
    json_decref(doc);
    return 0;
}

int ctl_round(const char *round_id)
{
    if (money_credit_round(round_id))
        return ctl_round_credit(round_id);
    money_round_id_t rid;
    if (money_round_id_parse(round_id, &rid) != 0)
        return ctl_fail(2, "'%s' is not a round id (service:server:epoch:desk:seq)", round_id);
    char key[256], *rec;
    bool found;
    money_key_round(round_id, key, sizeof key);
    if (ctl_get(key, &rec, &found) != 0)
        return 1;
    json_t *settle = json_null();
    if (found) {
        json_t *bal = json_array();
        char *save = NULL;
        for (char *t = strtok_r(rec, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save))
            json_array_append_new(bal, json_integer(strtoll(t, NULL, 10)));
        json_decref(settle);
        settle = json_pack("{s:s,s:o}", "key", key, "balances_after", bal);
    }
    free(rec);
    json_t *history = json_null();
    json_t *games = ctl_history_games();
    if (games == NULL) {
        json_decref(settle);
        return 1;
    }
    size_t i;
    json_t *g;
    json_array_foreach(games, i, g)
    {
        char seen[320], ht[160], *sid;
        snprintf(seen, sizeof seen, "%s:seen:%s",
                 keytag_history(ht, sizeof ht, json_string_value(g)), round_id);
        if (ctl_get(seen, &sid, &found) != 0 || !found) {
            free(sid);
            continue;
        }
        char skey[128];
        money_key_stream(json_string_value(g), skey, sizeof skey);
        redisReply *x = CTL_CMD("XRANGE", skey, sid, sid);
        json_t *en = x && x->type == REDIS_REPLY_ARRAY && x->elements == 1
                         ? ctl_stream_entry(x->element[0])
                         : NULL;
        json_t *h = en ? json_loads(json_string_value(json_object_get(en, "data")), 0, NULL) : NULL;
        if (h != NULL) {
            json_decref(history);
            history = json_pack("{s:O,s:s,s:o}", "game", g, "stream_id", sid, "record", h);
        } else {
            json_decref(history);
            history = json_pack("{s:O,s:s,s:s}", "game", g, "stream_id", sid, "record",
                                "(trimmed from the stream)");
        }
        json_decref(en);
        if (x != NULL)
            freeReplyObject(x);
        free(sid);
        break;
    }
    json_decref(games);
    if (json_is_null(settle) && json_is_null(history))
        return ctl_fail(1, "no round %s: no settle record and no hand history", round_id);
    if (O.phh) {
        /* docs/replays.md "PHH export": the file, or why the hand has none. */
        const json_t *h = json_object_get(history, "record");
        char *text = NULL, why[256] = "";
        int rc = json_is_object(h) ? holdem_record_phh(h, NULL, &text, why, sizeof why) : -ENOENT;
        json_decref(settle);
        json_decref(history);
        if (rc == -ENOENT)
            return ctl_fail(1, "round %s: no hand history to export", round_id);
        if (rc != 0)
            return ctl_fail(1, "round %s: no PHH export: %s", round_id,
                            rc == -ENOMEM ? "out of memory" : why);
        fputs(text, stdout);
        free(text);
        return 0;
    }
    json_t *rec_h = json_object_get(history, "record");
    /* A table record (docs/hand-history.md "Table records": "record" names its kind, e.g.
     * blackjack's shoe_retirement) is no round: its kind stands where a round's outcome does. */
    const char *kind =
        json_is_object(rec_h) ? json_string_value(json_object_get(rec_h, "record")) : NULL;
    const char *outcome = json_is_object(rec_h)
                              ? (json_object_get(rec_h, "outcome")
                                     ? json_string_value(json_object_get(rec_h, "outcome"))
                                 : kind != NULL ? kind
                                                : "completed")
                              : NULL;
    json_t *doc =
        json_pack("{s:s,s:b,s:s?,s:o,s:o}", "round", round_id, "settled", !json_is_null(settle),
                  "outcome", outcome, "settle", settle, "history", history);
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char buf[512];
        printf("round %s\n  settled: %s", round_id, json_is_null(settle) ? "no" : "yes");
        if (!json_is_null(settle))
            printf(" (%s: balances after %s)", key,
                   ctl_cell(json_object_get(settle, "balances_after"), buf, sizeof buf));
        printf("\n");
        if (json_is_object(rec_h)) {
            printf("  game: %s   outcome: %s   rake: %s   actions: %zu\n",
                   json_string_value(json_object_get(history, "game")), outcome,
                   ctl_cell(json_object_get(rec_h, "rake"), buf, sizeof buf),
                   json_array_size(json_object_get(rec_h, "actions")));
            json_t *rows = json_array();
            size_t k;
            json_t *s;
            json_array_foreach(json_object_get(rec_h, "seats"), k, s)
            {
                json_int_t seat = json_integer_value(json_object_get(s, "seat")), delta = 0;
                size_t m;
                json_t *res;
                json_array_foreach(json_object_get(rec_h, "results"), m,
                                   res) if (json_integer_value(json_object_get(res, "seat")) ==
                                            seat) delta +=
                    json_integer_value(json_object_get(res, "delta"));
                json_array_append_new(rows, json_pack("{s:I,s:O,s:O,s:I}", "seat", seat, "player",
                                                      json_object_get(s, "player"), "stack",
                                                      json_object_get(s, "stack"), "delta", delta));
            }
            static const char *const cols[] = {"seat", "player", "stack", "delta", NULL};
            static const char *const heads[] = {"SEAT", "PLAYER", "STACK", "DELTA"};
            ctl_table(rows, cols, heads);
            json_decref(rows);
            /* The actions in the order played (docs/hand-history.md: the names and what the
             * amount means are the game's). */
            json_t *acts = json_object_get(rec_h, "actions");
            if (json_array_size(acts) > 0) {
                printf("  actions, in order:\n");
                json_t *a;
                json_array_foreach(acts, k, a)
                {
                    json_t *amount = json_object_get(a, "amount");
                    printf("    %3zu  seat %s  %s", k + 1,
                           ctl_cell(json_object_get(a, "seat"), buf, sizeof buf),
                           json_is_string(json_object_get(a, "action"))
                               ? json_string_value(json_object_get(a, "action"))
                               : "?");
                    if (amount != NULL && !json_is_null(amount))
                        printf(" %s", ctl_cell(amount, buf, sizeof buf));
                    printf("\n");
                }
            }
        } else {
            printf("  hand history: %s\n", json_is_null(history) ? "none" : "trimmed");
        }
    }
    json_decref(doc);
    return 0;
}

/* ---- credit ------------------------------------------------------------------------------- */

static bool ctl_parse_amount(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || v == 0 || v > MONEY_MAX_AMOUNT ||
        v < -MONEY_MAX_AMOUNT || (s[0] == '+'))
        return false;
    *out = v;
    return true;
}

/*
 * One money_sync_credit (money.h, "Operator credits"): the wallet change, its settle record
 * {croupier:money}:round:ctl:credit:<ID> and its audit entry in one script, idempotent by ID.
 */
int ctl_credit(const char *player, const char *amount_text)
{
    int64_t amount;
    if (!money_valid_player(player))
        return ctl_fail(2, "'%s' is not a player id (1..64 of [A-Za-z0-9_.-])", player);
    if (!ctl_parse_amount(amount_text, &amount))
        return ctl_fail(2, "AMOUNT '%s' must be a non-zero integer of at most %lld chips",
                        amount_text, (long long)MONEY_MAX_AMOUNT);
    if (O.reason == NULL || O.reason[0] == '\0' || strlen(O.reason) > CTL_REASON_MAX)
        return ctl_fail(2, "credit needs --reason TEXT (1..%d characters)", CTL_REASON_MAX);
    for (const char *p = O.reason; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return ctl_fail(2, "--reason must be printable text (no control characters)");
    char op_id[MONEY_ID_MAX + 1], round_id[MONEY_ID_MAX + 1];
    if (O.op_id == NULL)
        return ctl_fail(2, "credit needs --op-id ID (1..%d of [A-Za-z0-9_.:-])",
                        MONEY_CREDIT_ID_MAX);
    if (money_credit_ids(O.op_id, op_id, round_id, sizeof op_id) != 0)
        return ctl_fail(2, "--op-id '%s' must be 1..%d of [A-Za-z0-9_.:-]", O.op_id,
                        MONEY_CREDIT_ID_MAX);

    money_credit_t cr = {.player = player,
                         .amount = amount,
                         .id = O.op_id,
                         .reason = O.reason,
                         .operator_id = O.operator_id,
                         .unix_s = (int64_t)time(NULL)};
    money_credit_result_t res;
    int rc;
    if (O.money_by_entity) {
        /* money/mcredit.h: claimed and booked in the money slot, created in (or debited from)
         * {p:<player>}:bal in the player's slot; it WAITs for --redis-min-replicas itself */
        rcluster_t *c = ctl_cluster_client();
        if (c == NULL)
            return 1;
        mcredit_opts_t mo = {.min_replicas = (int)O.min_replicas, .wait_ms = (int)O.wait_ms};
        rc = mcredit_apply(c, &cr, &mo, &res);
        rcluster_destroy(c);
        if (rc == -EAGAIN || rc == -EIO)
            return ctl_fail(1,
                            "credit %s %" PRId64 " is not finished: %s; run the same command "
                            "again (it applies nothing twice)",
                            player, amount, res.error);
    } else {
        rc = money_sync_credit(R, &cr, &res);
    }
    if (rc == MONEY_ERR_BAD_ARGS && strstr(res.error, "op id was used") != NULL)
        return ctl_fail(1, "--op-id %s: %s; nothing changed", O.op_id,
                        res.error + strlen("MONEY_BAD_ARGS "));
    if (rc != 0)
        return ctl_fail(1, "credit %s %" PRId64 " refused, nothing changed: %s", player, amount,
                        res.error[0] ? res.error : money_strerror(rc));
    /* Durable before it is reported (docs/deploy.md "Failover and durability"): a replay too,
     * since the first run may have ended before its write reached a replica. */
    if (O.min_replicas > 0 && !O.money_by_entity) {
        /* every connected replica, at least --redis-min-replicas (money_sync_wait_replicas) */
        money_wait_result_t w;
        if (money_sync_wait_replicas(R, (int)O.min_replicas, (int)O.wait_ms, &w) != 0)
            return ctl_fail(1,
                            "credit %s %" PRId64 " is on the master but not durable: %s; run the "
                            "same command again (it applies nothing twice)",
                            player, amount, w.error);
    }
    char key[256];
    money_key_round(res.round_id, key, sizeof key);
    json_t *doc =
        json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:b,s:s}", "op_id", res.op_id, "round", res.round_id,
                  "settle_record", key, "player", player, "amount", (json_int_t)amount, "reason",
                  O.reason, "replayed", res.replayed, "audit_id", res.audit_id);
    json_object_set_new(doc, "balance_after",
                        res.balance_known ? json_integer((json_int_t)res.balance_after)
                                          : json_null());
    if (O.json) {
        ctl_print_json(doc);
    } else {
        char bal[32] = "unknown (its record expired)";
        if (res.balance_known)
            snprintf(bal, sizeof bal, "%" PRId64, res.balance_after);
        printf("%s %s: %+" PRId64 " chips, balance %s (settle record %s, audit %s)\n",
               res.replayed ? "replayed, nothing changed:" : "credited", player, amount, bal, key,
               res.audit_id[0] ? res.audit_id : "unknown");
    }
    json_decref(doc);
    return 0;
}
