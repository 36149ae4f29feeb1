/*
 * money.c -- the money module's core (money.h is the contract, money_int.h what its files
 * share): error names, round ids, the checks of names, ids, amounts and settlements, the key
 * names, the parsing of the scripts' replies (money_reply_parse), the synchronous client
 * (money_sync_*: one command at a time on a redisContext, EVALSHA then EVAL) and hand-history
 * records (money_history_*). The scripts are money_script.c; the commands that call them,
 * money_cmd.c.
 *
 * docs/architecture.md §6 "Money" is the design (wallets, idempotent operations, round ids);
 * docs/queues.md "When Redis refuses writes" the error replies money_reply_error() maps;
 * docs/hand-history.md "The record" what a history holds.
 */
#include "money_int.h"
#include "keytag.h"

/* ---- Errors, ids, names ------------------------------------------------------------- */

const char *money_strerror(int code)
{
    switch (code) {
    case MONEY_OK:
        return "ok";
    case MONEY_ERR_INSUFFICIENT:
        return "the buy-in is larger than the balance";
    case MONEY_ERR_STALE_EPOCH:
        return "stale fencing epoch: this server no longer holds its lease";
    case MONEY_ERR_BAD_SUM:
        return "the deltas do not sum to minus the rake";
    case MONEY_ERR_NEGATIVE:
        return "a wallet would go negative";
    case MONEY_ERR_BAD_ARGS:
        return "malformed money operation";
    case MONEY_ERR_REDIS:
        return "unexpected Redis reply";
    case MONEY_ERR_ALIVE:
        return "the slot's epoch is still live: nothing to recover yet";
    case MONEY_ERR_ADOPTED:
        return "the table was adopted by another server";
    case MONEY_ERR_OFFER_VOID:
        return "the table's offer was voided: its chips went back to the wallets";
    case MONEY_ERR_NO_OFFER:
        return "no such table offer";
    default:
        return code < 0 ? strerror(-code) : "unknown";
    }
}

int money_round_id_format(const money_round_id_t *id, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s%s%" PRIu32 ":%" PRIu64 ":%" PRIu64 ":%" PRIu64, id->service,
                     id->service[0] != '\0' ? ":" : "", id->server, id->epoch, id->desk, id->seq);
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* A service in a round id starts with a letter, so "1:2:3:4:5" is not read as service "1". */
static bool money_valid_service(const char *service)
{
    return money_valid_name(service) &&
           ((service[0] >= 'a' && service[0] <= 'z') || (service[0] >= 'A' && service[0] <= 'Z'));
}

int money_round_id_set_service(money_round_id_t *id, const char *service)
{
    if (!money_valid_service(service))
        return -EINVAL;
    snprintf(id->service, sizeof id->service, "%s", service);
    return 0;
}

int money_parse_u64(const char **p, char stop, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return -EINVAL;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (*s != stop)
        return -EINVAL;
    *out = v;
    *p = stop ? s + 1 : s;
    return 0;
}

static int money_round_id_parse_numbers(const char *p, money_round_id_t *out)
{
    uint64_t server, epoch, desk, seq;
    if (money_parse_u64(&p, ':', &server) != 0 || server > UINT32_MAX ||
        money_parse_u64(&p, ':', &epoch) != 0 || money_parse_u64(&p, ':', &desk) != 0 ||
        money_parse_u64(&p, '\0', &seq) != 0)
        return -EINVAL;
    out->server = (uint32_t)server;
    out->epoch = epoch;
    out->desk = desk;
    out->seq = seq;
    return 0;
}

int money_round_id_parse(const char *text, money_round_id_t *out)
{
    money_round_id_t id = {0};
    if (text == NULL)
        return -EINVAL;
    if (money_round_id_parse_numbers(text, &id) != 0) {
        const char *colon = strchr(text, ':');
        size_t n = colon != NULL ? (size_t)(colon - text) : 0;
        if (n == 0 || n > MONEY_NAME_MAX)
            return -EINVAL;
        memcpy(id.service, text, n);
        id.service[n] = '\0';
        if (!money_valid_service(id.service) || money_round_id_parse_numbers(colon + 1, &id) != 0)
            return -EINVAL;
    }
    *out = id;
    return 0;
}

static bool money_valid_chars(const char *s, size_t max, const char *extra)
{
    if (s == NULL || *s == '\0')
        return false;
    size_t n = 0;
    for (; *s; s++, n++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr(extra, c) != NULL;
        if (!ok || n >= max)
            return false;
    }
    return true;
}

bool money_valid_player(const char *player)
{
    return money_valid_chars(player, MONEY_NAME_MAX, "_.-");
}

bool money_valid_name(const char *name)
{
    return money_valid_chars(name, MONEY_NAME_MAX, "_.-");
}

bool money_valid_op_id(const char *op_id)
{
    return money_valid_chars(op_id, MONEY_ID_MAX, "_.:-");
}

static bool money_amount_ok(int64_t v)
{
    return v >= -MONEY_MAX_AMOUNT && v <= MONEY_MAX_AMOUNT;
}

int money_settlement_check(const money_settlement_t *s, char *err, size_t errlen)
{
    if (s == NULL) {
        snprintf(err, errlen, "no settlement");
        return -EINVAL;
    }
    if (!money_valid_name(s->game)) {
        snprintf(err, errlen, "game name missing or not [A-Za-z0-9_.-]{1,64}");
        return -EINVAL;
    }
    if (s->round.service[0] != '\0' &&
        (memchr(s->round.service, '\0', sizeof s->round.service) == NULL ||
         !money_valid_service(s->round.service))) {
        snprintf(err, errlen, "round id service not [A-Za-z][A-Za-z0-9_.-]{0,63}");
        return -EINVAL;
    }
    if (s->nplayers < 1 || s->nplayers > MONEY_MAX_PLAYERS) {
        snprintf(err, errlen, "a settlement needs 1..%d players, got %zu", MONEY_MAX_PLAYERS,
                 s->nplayers);
        return -EINVAL;
    }
    if (s->rake < 0 || !money_amount_ok(s->rake)) {
        snprintf(err, errlen, "rake %" PRId64 " must be in [0, %lld]", s->rake, MONEY_MAX_AMOUNT);
        return -EINVAL;
    }
    for (size_t i = 0; i < s->nplayers; i++) {
        if (!money_valid_player(s->players[i])) {
            snprintf(err, errlen, "player %zu: id missing or not [A-Za-z0-9_.-]{1,64}", i);
            return -EINVAL;
        }
        if (!money_amount_ok(s->deltas[i])) {
            snprintf(err, errlen, "player %s: delta %" PRId64 " out of range", s->players[i],
                     s->deltas[i]);
            return -EINVAL;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(s->players[i], s->players[j]) == 0) {
                snprintf(err, errlen, "player %s appears twice", s->players[i]);
                return -EINVAL;
            }
        }
    }
    return 0;
}

int money_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* The layout (money.h, money_set_entity): set once at start, before any thread. */
static bool money_entity_on;

void money_set_entity(bool on)
{
    money_entity_on = on;
}

bool money_entity(void)
{
    return money_entity_on;
}

int money_key_wallet(const char *player, char *buf, size_t len)
{
    if (money_entity_on)
        return money_fmt(buf, len, "{p:%s}:bal", player);
    return money_fmt(buf, len, "{croupier:money}:wallet:%s", player);
}

int money_key_round(const char *round_id, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:money}:round:%s", round_id);
}

int money_key_rake(const char *game, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:money}:rake:%s", game);
}

int money_key_epoch(const char *service, uint32_t slot, char *buf, size_t len)
{
    char lt[160];
    return money_fmt(buf, len, "%s:slot:%" PRIu32 ":epoch", keytag_lease(lt, sizeof lt, service),
                     slot);
}

int money_key_stream(const char *game, char *buf, size_t len)
{
    char ht[160];
    return money_fmt(buf, len, "%s:stream", keytag_history(ht, sizeof ht, game));
}

/* ---- Replies ------------------------------------------------------------------------ */

static bool money_starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

/* Maps an error text to a money_err_t (permanent) or asks for a retry (transient). */
static money_reply_action_t money_reply_error(const char *str, size_t len, money_result_t *out)
{
    /* "Redis refuses writes for a while", one rule for all (docs/queues.md "When Redis refuses
     * writes"): a full Redis (OOM), too few replicas (NOREPLICAS, min-replicas-to-write), a failed
     * RDB save (MISCONF), a demoted master (READONLY), a failover or a load in progress. Every
     * script is all-or-nothing and idempotent, so the item is sent again after a pause. */
    static const char *const transient[] = {"NOSCRIPT",   "LOADING",  "BUSY",        "MASTERDOWN",
                                            "READONLY",   "TRYAGAIN", "CLUSTERDOWN", "OOM",
                                            "NOREPLICAS", "MISCONF"};
    static const struct {
        const char *token;
        int code;
    } codes[] = {
        {"MONEY_INSUFFICIENT", MONEY_ERR_INSUFFICIENT},
        {"MONEY_STALE_EPOCH", MONEY_ERR_STALE_EPOCH},
        {"MONEY_BAD_SUM", MONEY_ERR_BAD_SUM},
        {"MONEY_NEGATIVE", MONEY_ERR_NEGATIVE},
        {"MONEY_BAD_ARGS", MONEY_ERR_BAD_ARGS},
        {"MONEY_ALIVE", MONEY_ERR_ALIVE},
        {"MONEY_ADOPTED", MONEY_ERR_ADOPTED},
        {"MONEY_OFFER_VOID", MONEY_ERR_OFFER_VOID},
        {"MONEY_NO_OFFER", MONEY_ERR_NO_OFFER},
    };
    snprintf(out->error, sizeof out->error, "%.*s", (int)len, str);
    for (size_t i = 0; i < sizeof transient / sizeof transient[0]; i++) {
        if (money_starts(str, len, transient[i])) {
            out->status = -EAGAIN;
            return MONEY_REPLY_RETRY;
        }
    }
    out->status = MONEY_ERR_REDIS;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        /* Redis may prefix script errors (e.g. "ERR "); look for the token anywhere. */
        if (memmem(str, len, codes[i].token, strlen(codes[i].token)) != NULL) {
            out->status = codes[i].code;
            break;
        }
    }
    return MONEY_REPLY_DONE;
}

static int money_parse_i64(const char *s, size_t len, int64_t *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno != 0 || *end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

static void money_result_reset(money_kind_t kind, money_result_t *out)
{
    out->kind = kind;
    out->replayed = false;
    out->nbalances = 0;
    out->error[0] = '\0';
    out->stream_id[0] = '\0';
}

money_reply_action_t money_reply_parse_entry(money_kind_t kind, const redisReply *e,
                                             money_result_t *out)
{
    money_result_reset(kind, out);
    if (e == NULL || e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_STRING)
        goto bad_shape;
    const char *v = e->element[1]->str;
    size_t vlen = e->element[1]->len;
    if (e->element[0]->integer < 0) {
        /* A rejection inside a batch: permanent, whatever the text says. */
        money_reply_error(v, vlen, out);
        if (out->status == -EAGAIN)
            out->status = MONEY_ERR_REDIS;
        return MONEY_REPLY_DONE;
    }
    out->replayed = e->element[0]->integer == 0;
    if (kind == MONEY_KIND_HISTORY) {
        if (vlen == 0 || vlen >= sizeof out->stream_id)
            goto bad_shape;
        memcpy(out->stream_id, v, vlen);
        out->stream_id[vlen] = '\0';
    } else {
        /* Balances separated by single spaces. */
        size_t i = 0;
        while (i < vlen) {
            size_t j = i;
            while (j < vlen && v[j] != ' ')
                j++;
            if (out->nbalances >= MONEY_MAX_PLAYERS ||
                money_parse_i64(v + i, j - i, &out->balances[out->nbalances]) != 0)
                goto bad_shape;
            out->nbalances++;
            i = j + 1;
        }
        if (out->nbalances == 0)
            goto bad_shape;
    }
    out->status = MONEY_OK;
    return MONEY_REPLY_DONE;
bad_shape:
    out->status = MONEY_ERR_REDIS;
    out->nbalances = 0;
    snprintf(out->error, sizeof out->error, "unexpected reply shape (type %d)", e ? e->type : -1);
    return MONEY_REPLY_DONE;
}

money_reply_action_t money_reply_parse(money_kind_t kind, const redisReply *r, money_result_t *out)
{
    money_result_reset(kind, out);
    if (r == NULL) {
        out->status = -EIO;
        snprintf(out->error, sizeof out->error, "no reply (connection lost)");
        return MONEY_REPLY_RETRY;
    }
    if (r->type == REDIS_REPLY_ERROR)
        return money_reply_error(r->str, r->len, out);
    if (kind == MONEY_KIND_SETTLE) {
        /* A batch of one: the first (only) entry. */
        if (r->type != REDIS_REPLY_ARRAY || r->elements < 1)
            return money_reply_parse_entry(kind, NULL, out);
        return money_reply_parse_entry(kind, r->element[0], out);
    }
    return money_reply_parse_entry(kind, r, out);
}

/* ---- Synchronous client ------------------------------------------------------------- */

/*
 * Runs a script command once with EVALSHA and, if Redis does not know the script, once more
 * with EVAL (which also caches it). Returns out->status.
 */
static int money_sync_run(redisContext *c, money_argv_t *a, int script, money_kind_t kind,
                          money_result_t *out)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        redisReply *r = redisCommandArgv(c, a->argc, (const char **)a->argv, a->lens);
        if (r == NULL) {
            out->kind = kind;
            out->status = -EIO;
            snprintf(out->error, sizeof out->error, "redis: %s", c->errstr);
            return -EIO;
        }
        bool noscript = r->type == REDIS_REPLY_ERROR && money_starts(r->str, r->len, "NOSCRIPT");
        money_reply_parse(kind, r, out);
        freeReplyObject(r);
        if (!noscript)
            return out->status;
        money_argv_eval(a, script);
    }
    return out->status;
}

static int money_sync_wallet(redisContext *c, money_kind_t kind, const char *player, int64_t amount,
                             const char *op_id, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_wallet(a, kind, player, amount, op_id, 0);
    if (rc != 0) {
        out->status = rc;
        snprintf(out->error, sizeof out->error, "invalid player, op id or amount");
    } else {
        snprintf(out->id, sizeof out->id, "%s", op_id);
        rc = money_sync_run(c, a, SCRIPT_WALLET, kind, out);
    }
    free(a);
    return rc;
}

int money_sync_buyin(redisContext *c, const char *player, int64_t amount, const char *op_id,
                     money_result_t *out)
{
    return money_sync_wallet(c, MONEY_KIND_BUYIN, player, amount, op_id, out);
}

int money_sync_cashout(redisContext *c, const char *player, int64_t amount, const char *op_id,
                       money_result_t *out)
{
    return money_sync_wallet(c, MONEY_KIND_CASHOUT, player, amount, op_id, out);
}

int money_sync_seat(redisContext *c, const char *service, money_kind_t kind, const money_seat_t *s,
                    int64_t amount, const char *op_id, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_seat(a, service, kind, s, amount, op_id, 0);
    if (rc != 0) {
        out->status = rc;
        snprintf(out->error, sizeof out->error, "invalid service, seat, op id or amount");
    } else {
        snprintf(out->id, sizeof out->id, "%s", op_id);
        rc = money_sync_run(c, a, SCRIPT_SEAT, kind, out);
    }
    free(a);
    return rc;
}

int money_sync_settle(redisContext *c, const char *service, const money_settlement_t *s,
                      money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_SETTLE;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_settlement_check(s, out->error, sizeof out->error);
    if (rc == 0 && !money_valid_name(service)) {
        rc = -EINVAL;
        snprintf(out->error, sizeof out->error, "service name missing or invalid");
    }
    if (rc == 0)
        rc = money_argv_settle(a, service, s, 0);
    if (rc != 0) {
        out->status = rc;
    } else {
        money_round_id_format(&s->round, out->id, sizeof out->id);
        rc = money_sync_run(c, a, SCRIPT_SETTLE, MONEY_KIND_SETTLE, out);
    }
    free(a);
    return rc;
}

int money_sync_history(redisContext *c, const money_round_id_t *round, const char *game,
                       const char *json, long maxlen, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_HISTORY;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_round_id_format(round, out->id, sizeof out->id);
    if (rc == 0)
        rc = money_argv_history(a, out->id, game, json, maxlen, 0, "live", NULL, 0);
    if (rc != 0) {
        out->status = -EINVAL;
        snprintf(out->error, sizeof out->error, "invalid round, game, json or maxlen");
        rc = -EINVAL;
    } else {
        rc = money_sync_run(c, a, SCRIPT_HISTORY, MONEY_KIND_HISTORY, out);
    }
    free(a);
    return rc;
}

int money_sync_history_void(redisContext *c, const char *round_id, const char *game,
                            const char *json, long maxlen, money_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = MONEY_KIND_HISTORY;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    snprintf(out->id, sizeof out->id, "%s", round_id != NULL ? round_id : "");
    int rc = money_argv_history(a, round_id, game, json, maxlen, 0, "void", NULL, 0);
    if (rc != 0) {
        out->status = -EINVAL;
        snprintf(out->error, sizeof out->error, "invalid round, game, json or maxlen");
    } else {
        rc = money_sync_run(c, a, SCRIPT_HISTORY, MONEY_KIND_HISTORY, out);
    }
    free(a);
    return rc;
}

int money_sync_balance(redisContext *c, const char *player, int64_t *out)
{
    char key[160];
    if (!money_valid_player(player) || money_key_wallet(player, key, sizeof key) != 0)
        return -EINVAL;
    redisReply *r = redisCommand(c, "GET %s", key);
    if (r == NULL)
        return -EIO;
    int rc = 0;
    if (r->type == REDIS_REPLY_NIL)
        *out = 0;
    else if (r->type != REDIS_REPLY_STRING || money_parse_i64(r->str, r->len, out) != 0)
        rc = MONEY_ERR_REDIS;
    freeReplyObject(r);
    return rc;
}

/* ---- Hand histories ----------------------------------------------------------------- */

json_t *money_history_new(const money_round_id_t *round, const char *game)
{
    char rid[MONEY_ID_MAX + 1];
    if (round == NULL || !money_valid_name(game) ||
        money_round_id_format(round, rid, sizeof rid) != 0)
        return NULL;
    return json_pack("{s:s,s:s,s:I,s:[],s:[],s:[],s:[]}", "round", rid, "game", game, "ts",
                     (json_int_t)clock_wall_ms(), "seats", "cards", "actions", "results");
}

int money_history_set_round(json_t *h, const money_round_id_t *round)
{
    char rid[MONEY_ID_MAX + 1];
    if (!json_is_object(h) || round == NULL || money_round_id_format(round, rid, sizeof rid) != 0)
        return -EINVAL;
    return json_object_set_new(h, "round", json_string(rid)) == 0 ? 0 : -EINVAL;
}

static int money_history_append(json_t *h, const char *array, json_t *item)
{
    json_t *arr = h ? json_object_get(h, array) : NULL;
    if (item == NULL || !json_is_array(arr)) {
        json_decref(item);
        return -EINVAL;
    }
    return json_array_append_new(arr, item) == 0 ? 0 : -EINVAL;
}

int money_history_add_seat(json_t *h, int seat, const char *player, bool bot, int64_t stack)
{
    if (player == NULL || seat < 0)
        return -EINVAL;
    return money_history_append(h, "seats",
                                json_pack("{s:i,s:s,s:b,s:I}", "seat", seat, "player", player,
                                          "bot", bot, "stack", (json_int_t)stack));
}

int money_history_add_card(json_t *h, int seat, const char *card)
{
    if (card == NULL || seat < -1)
        return -EINVAL;
    return money_history_append(h, "cards", json_pack("{s:i,s:s}", "seat", seat, "card", card));
}

int money_history_add_action(json_t *h, int seat, const char *action, int64_t amount)
{
    if (action == NULL || seat < -1)
        return -EINVAL;
    return money_history_append(
        h, "actions",
        json_pack("{s:i,s:s,s:I}", "seat", seat, "action", action, "amount", (json_int_t)amount));
}

int money_history_add_result(json_t *h, int seat, int64_t delta)
{
    if (seat < 0)
        return -EINVAL;
    return money_history_append(h, "results",
                                json_pack("{s:i,s:I}", "seat", seat, "delta", (json_int_t)delta));
}

bool money_shoe_hex_valid(const char *s)
{
    size_t n = 0;
    for (; s != NULL && s[n] != '\0'; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return false;
    return n == 64;
}

size_t money_history_shoes(const json_t *h, const char **out, size_t max)
{
    size_t n = 0, i;
    const json_t *v;
    json_array_foreach(json_object_get(h, "shoe_reveal"), i, v)
    {
        const char *c = json_string_value(json_object_get(v, "commitment"));
        if (!money_shoe_hex_valid(c))
            continue;
        bool dup = false;
        for (size_t k = 0; k < n && !dup; k++)
            dup = strcmp(out[k], c) == 0;
        if (!dup && n < max)
            out[n++] = c;
    }
    return n;
}

bool money_history_valid(const json_t *h)
{
    static const char *const arrays[] = {"seats", "cards", "actions", "results"};
    if (!json_is_object(h) || !json_is_string(json_object_get(h, "round")))
        return false;
    for (size_t i = 0; i < 4; i++)
        if (!json_is_array(json_object_get(h, arrays[i])))
            return false;
    return true;
}
