/*
 * money_cmd.c -- the commands that call the money scripts: an argv built in place
 * (money_argv_t, EVALSHA with EVAL as the fallback), the settle, wallet, history and seat
 * calls, their RESP text for the async connections (money_cmd_*) and the writer's operations
 * (money_op_*, money_writer.h; docs/queues.md "money writer queue"). Internal to the module:
 * money_int.h has the contract.
 *
 * Every builder checks its input before it writes a byte (money_settlement_check and the
 * money_valid_* checks of money.c) and returns 0 or a negative errno; what it returns is its
 * caller's (free with free() or money_op_free()). money.c's synchronous client runs the same
 * argv (money_argv_settle, _wallet, _history, _seat, money_argv_eval).
 */
#include "money_int.h"
#include "keytag.h"

static void money_argv_fmt(money_argv_t *a, const char *fmt, ...)
{
    if (a->argc >= MONEY_ARGV_MAX) {
        a->overflow = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(a->slot[a->argc], sizeof a->slot[0], fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof a->slot[0]) {
        a->overflow = true;
        return;
    }
    a->argv[a->argc] = a->slot[a->argc];
    a->lens[a->argc] = (size_t)n;
    a->argc++;
}

static void money_argv_borrow(money_argv_t *a, const char *s, size_t len)
{
    if (a->argc >= MONEY_ARGV_MAX) {
        a->overflow = true;
        return;
    }
    a->argv[a->argc] = s;
    a->lens[a->argc] = len;
    a->argc++;
}

/* argv[0..1] are EVALSHA <sha>; money_argv_eval() switches them to EVAL <text>. */
static void money_argv_script(money_argv_t *a, int script)
{
    a->argc = 0;
    a->overflow = false;
    money_argv_borrow(a, "EVALSHA", 7);
    const char *sha = money_script_sha(script);
    money_argv_borrow(a, sha, strlen(sha));
}

void money_argv_eval(money_argv_t *a, int script)
{
    a->argv[0] = "EVAL";
    a->lens[0] = 4;
    a->argv[1] = money_scripts[script];
    a->lens[1] = strlen(money_scripts[script]);
}

/* The fence of a server's slot: the lease key "<lease base>:slot:<n>:epoch" (common/keytag.h). */
static void money_argv_fence(money_argv_t *a, const char *service, uint32_t slot)
{
    char lt[160];
    money_argv_fmt(a, "%s:slot:%" PRIu32 ":epoch", keytag_lease(lt, sizeof lt, service), slot);
}

int money_argv_settle(money_argv_t *a, const char *service, const money_settlement_t *s, long ttl_s)
{
    char err[160];
    if (money_settlement_check(s, err, sizeof err) != 0 || !money_valid_name(service))
        return -EINVAL;
    char rid[MONEY_ID_MAX + 1];
    if (money_round_id_format(&s->round, rid, sizeof rid) != 0)
        return -EINVAL;
    money_argv_script(a, SCRIPT_SETTLE);
    money_argv_fmt(a, "%zu", s->nplayers + 3);
    if (money_entity()) {
        /* the epoch's own slot (money.h, money_set_entity) */
        char tag[MONEY_NAME_MAX + 48];
        snprintf(tag, sizeof tag, "{s:%s:%" PRIu32 ":%" PRIu64 "}", service, s->round.server,
                 s->round.epoch);
        money_argv_fmt(a, "%s:round:%s", tag, rid);
        money_argv_fmt(a, "%s:live", tag);
        money_argv_fmt(a, "%s:bal:rake:%s", tag, s->game);
        for (size_t i = 0; i < s->nplayers; i++)
            money_argv_fmt(a, "%s:bal:%s", tag, s->players[i]);
    } else {
        money_argv_fmt(a, "{croupier:money}:round:%s", rid);
        money_argv_fence(a, service, s->round.server);
        money_argv_fmt(a, "{croupier:money}:rake:%s", s->game);
        for (size_t i = 0; i < s->nplayers; i++)
            money_argv_fmt(a, "{croupier:money}:wallet:%s", s->players[i]);
    }
    money_argv_fmt(a, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    money_argv_fmt(a, "%zu", s->nplayers);
    money_argv_fmt(a, "%" PRIu64, s->round.epoch);
    money_argv_fmt(a, "%" PRId64, s->rake);
    for (size_t i = 0; i < s->nplayers; i++)
        money_argv_fmt(a, "%" PRId64, s->deltas[i]);
    return a->overflow ? -EINVAL : 0;
}

int money_argv_wallet(money_argv_t *a, money_kind_t kind, const char *player, int64_t amount,
                      const char *op_id, long ttl_s)
{
    if ((kind != MONEY_KIND_BUYIN && kind != MONEY_KIND_CASHOUT) || !money_valid_player(player) ||
        !money_valid_op_id(op_id) || amount <= 0 || amount > MONEY_MAX_AMOUNT)
        return -EINVAL;
    money_argv_script(a, SCRIPT_WALLET);
    money_argv_fmt(a, "2");
    money_argv_fmt(a, "{croupier:money}:wallet:%s", player);
    money_argv_fmt(a, "{croupier:money}:op:%s", op_id);
    money_argv_fmt(a, "%s", kind == MONEY_KIND_BUYIN ? "debit" : "credit");
    money_argv_fmt(a, "%" PRId64, amount);
    money_argv_fmt(a, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    return a->overflow ? -EINVAL : 0;
}

/* A round id with a service is fenced by its slot (mode "live", or "void" for a recovery). The
 * shoes (nshoes commitments, the record's shoe_reveal) are indexed after the fence: the script's
 * optional keys (money_script.c, the history script). */
int money_argv_history(money_argv_t *a, const char *round_id, const char *game, const char *json,
                       long maxlen, long ttl_s, const char *mode, const char *const *shoes,
                       size_t nshoes)
{
    money_round_id_t rid;
    if (!money_valid_name(game) || round_id == NULL || money_round_id_parse(round_id, &rid) != 0 ||
        json == NULL || maxlen <= 0 || nshoes > MONEY_HISTORY_SHOES_MAX)
        return -EINVAL;
    for (size_t i = 0; i < nshoes; i++)
        if (!money_shoe_hex_valid(shoes[i]))
            return -EINVAL;
    bool fenced = rid.service[0] != '\0';
    money_argv_script(a, SCRIPT_HISTORY);
    money_argv_fmt(a, "%zu", (fenced ? 3 : 2) + nshoes);
    char ht[160];
    keytag_history(ht, sizeof ht, game);
    money_argv_fmt(a, "%s:stream", ht);
    money_argv_fmt(a, "%s:seen:%s", ht, round_id);
    if (fenced)
        money_argv_fence(a, rid.service, rid.server);
    for (size_t i = 0; i < nshoes; i++)
        money_argv_fmt(a, "%s:seen:shoe:%s", ht, shoes[i]);
    money_argv_fmt(a, "%ld", maxlen);
    money_argv_fmt(a, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    money_argv_fmt(a, "%s", round_id);
    money_argv_borrow(a, json, strlen(json));
    if (fenced) {
        money_argv_fmt(a, "%" PRIu64, rid.epoch);
        money_argv_fmt(a, "%s", mode);
    } else if (nshoes > 0) {
        money_argv_fmt(a, "%s", "");
        money_argv_fmt(a, "%s", "");
    }
    if (nshoes > 0)
        money_argv_fmt(a, "%zu", nshoes);
    return a->overflow ? -EINVAL : 0;
}

int money_key_held(const char *service, uint32_t slot, uint64_t epoch, char *buf, size_t len)
{
    return money_fmt(buf, len, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, slot,
                     epoch);
}

int money_held_parse(const char *member, char *service, size_t len, uint32_t *slot, uint64_t *epoch)
{
    const char *c2 = member != NULL ? strrchr(member, ':') : NULL;
    if (c2 == NULL || c2 == member)
        return -EINVAL;
    const char *c1 = c2 - 1;
    while (c1 > member && *c1 != ':')
        c1--;
    size_t n = (size_t)(c1 - member);
    if (*c1 != ':' || n == 0 || n >= len || n > MONEY_NAME_MAX)
        return -EINVAL;
    char svc[MONEY_NAME_MAX + 1];
    memcpy(svc, member, n);
    svc[n] = '\0';
    const char *p = c1 + 1;
    uint64_t sl, ep;
    if (!money_valid_name(svc) || money_parse_u64(&p, ':', &sl) != 0 || sl > UINT32_MAX ||
        money_parse_u64(&p, '\0', &ep) != 0)
        return -EINVAL;
    memcpy(service, svc, n + 1);
    *slot = (uint32_t)sl;
    *epoch = ep;
    return 0;
}

int money_argv_seat(money_argv_t *a, const char *service, money_kind_t kind, const money_seat_t *st,
                    int64_t amount, const char *op_id, long ttl_s)
{
    if ((kind != MONEY_KIND_SEAT_IN && kind != MONEY_KIND_SEAT_OUT) || st == NULL ||
        !money_valid_name(service) || !money_valid_player(st->account) ||
        !money_valid_player(st->owner) || strcmp(st->account, st->owner) == 0 ||
        !money_valid_op_id(op_id) || amount <= 0 || amount > MONEY_MAX_AMOUNT)
        return -EINVAL;
    money_argv_script(a, SCRIPT_SEAT);
    money_argv_fmt(a, "6");
    money_argv_fmt(a, "{croupier:money}:wallet:%s", st->owner);
    money_argv_fmt(a, "{croupier:money}:wallet:%s", st->account);
    money_argv_fmt(a, "{croupier:money}:op:%s", op_id);
    money_argv_fmt(a, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, st->slot,
                   st->epoch);
    money_argv_fmt(a, "%s", MONEY_HELD_INDEX_KEY);
    money_argv_fence(a, service, st->slot);
    money_argv_fmt(a, "%s", kind == MONEY_KIND_SEAT_IN ? "in" : "out");
    money_argv_fmt(a, "%" PRId64, amount);
    money_argv_fmt(a, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    money_argv_fmt(a, "%" PRIu64, st->epoch);
    money_argv_fmt(a, "%s", st->account);
    money_argv_fmt(a, "%s", st->owner);
    money_argv_fmt(a, "%s:%" PRIu32 ":%" PRIu64, service, st->slot, st->epoch);
    return a->overflow ? -EINVAL : 0;
}

static int money_argv_format(const money_argv_t *a, char **cmd, size_t *len)
{
    char *out = NULL;
    int n = redisFormatCommandArgv(&out, a->argc, (const char **)a->argv, a->lens);
    if (n < 0 || out == NULL)
        return -ENOMEM;
    *cmd = out;
    *len = (size_t)n;
    return 0;
}

int money_cmd_settle(const char *service, const money_settlement_t *s, long ttl_s, char **cmd,
                     size_t *len)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_settle(a, service, s, ttl_s);
    if (rc == 0)
        rc = money_argv_format(a, cmd, len);
    free(a);
    return rc;
}

/* Appends argv[from, to) as RESP bulk strings to buf (which has room, see callers). */
static size_t money_resp_bulks(char *buf, const money_argv_t *a, int from, int to)
{
    size_t off = 0;
    for (int i = from; i < to; i++) {
        off += (size_t)sprintf(buf + off, "$%zu\r\n", a->lens[i]);
        memcpy(buf + off, a->argv[i], a->lens[i]);
        off += a->lens[i];
        buf[off++] = '\r';
        buf[off++] = '\n';
    }
    return off;
}

/*
 * Copies argv entries [from, to) except `skip` (-1 = none) into one allocation holding the
 * pointer array, the length array and the bytes (each NUL-terminated for logs).
 */
static void money_op_fill(money_op_t *op, const money_argv_t *a, int from, int to, int skip)
{
    int n = 0;
    size_t bytes = 0;
    for (int i = from; i < to; i++) {
        if (i != skip) {
            n++;
            bytes += a->lens[i] + 1;
        }
    }
    char *mem = malloc((size_t)n * (sizeof(char *) + sizeof(size_t)) + bytes);
    if (mem == NULL)
        abort(); /* out of memory: see xmalloc.h */
    op->argv = (const char **)(void *)mem;
    op->lens = (size_t *)(void *)(mem + (size_t)n * sizeof(char *));
    char *data = mem + (size_t)n * (sizeof(char *) + sizeof(size_t));
    op->argc = 0;
    for (int i = from; i < to; i++) {
        if (i == skip)
            continue;
        memcpy(data, a->argv[i], a->lens[i]);
        data[a->lens[i]] = '\0';
        op->argv[op->argc] = data;
        op->lens[op->argc] = a->lens[i];
        op->argc++;
        data += a->lens[i] + 1;
    }
}

/* Writes u in decimal to buf (room for 20 digits); returns the length. */
static size_t money_u64_text(char *buf, uint64_t u)
{
    char tmp[24];
    size_t n = 0, len = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    while (n > 0)
        buf[len++] = tmp[--n];
    return len;
}

/* Writes v in decimal to buf (room for 20 digits and a sign); returns the length. */
static size_t money_i64_text(char *buf, int64_t v)
{
    if (v >= 0)
        return money_u64_text(buf, (uint64_t)v);
    buf[0] = '-';
    return 1 + money_u64_text(buf + 1, (uint64_t)0 - (uint64_t)v);
}

/* One argument being appended to an op: its bytes are written at *data by the caller. */
typedef struct {
    money_op_t *op;
    char *data;
} money_op_cursor_t;

static void money_op_start(money_op_cursor_t *c)
{
    c->op->argv[c->op->argc] = c->data;
}

static void money_op_put(money_op_cursor_t *c, const char *s, size_t len)
{
    memcpy(c->data, s, len);
    c->data += len;
}

static void money_op_end(money_op_cursor_t *c)
{
    money_op_t *op = c->op;
    op->lens[op->argc] = (size_t)(c->data - op->argv[op->argc]);
    *c->data++ = '\0';
    op->argc++;
}

static void money_op_number(money_op_cursor_t *c, int64_t v)
{
    money_op_start(c);
    c->data += money_i64_text(c->data, v);
    money_op_end(c);
}

#define MONEY_PUT_LIT(c, lit) money_op_put((c), (lit), sizeof(lit) - 1)

/*
 * The settle op is built directly (no printf, one allocation): this runs once per settlement on
 * the desks' threads, so it is part of the writer's throughput. Same keys and arguments as
 * money_argv_settle() without the ttl (the batch's, added by the writer).
 */
int money_op_settle(const char *service, const money_settlement_t *s, money_op_t *out)
{
    char err[160];
    if (money_settlement_check(s, err, sizeof err) != 0 || !money_valid_name(service))
        return -EINVAL;
    if (money_entity()) {
        /* the epoch's keys (money_argv_settle); without the ttl, which the writer adds */
        money_argv_t *a = calloc(1, sizeof *a);
        if (a == NULL)
            abort(); /* out of memory: see xmalloc.h */
        int rc = money_argv_settle(a, service, s, 1);
        if (rc == 0) {
            out->script = SCRIPT_SETTLE;
            out->nkeys = (int)s->nplayers + 3;
            money_op_fill(out, a, 3, a->argc, 3 + out->nkeys);
        }
        free(a);
        return rc;
    }
    char lt[160];
    size_t n = s->nplayers, slen = strlen(keytag_lease(lt, sizeof lt, service)),
           glen = strlen(s->game);
    size_t plen[MONEY_MAX_PLAYERS];
    /* Per argument a NUL; numbers take at most 20 characters and a sign. */
    size_t bytes = sizeof "{croupier:money}:round:" + MONEY_ID_MAX + 1 + sizeof ":slot::epoch" +
                   slen + 21 + sizeof "{croupier:money}:rake:" + glen + (3 + n) * 22;
    for (size_t i = 0; i < n; i++) {
        plen[i] = strlen(s->players[i]);
        bytes += sizeof "{croupier:money}:wallet:" + plen[i];
    }
    int argc = 2 * (int)n + 6;
    char *mem = malloc((size_t)argc * (sizeof(char *) + sizeof(size_t)) + bytes);
    if (mem == NULL)
        abort(); /* out of memory: see xmalloc.h */
    out->script = SCRIPT_SETTLE;
    out->nkeys = (int)n + 3;
    out->argc = 0;
    out->argv = (const char **)(void *)mem;
    out->lens = (size_t *)(void *)(mem + (size_t)argc * sizeof(char *));
    money_op_cursor_t c = {out, mem + (size_t)argc * (sizeof(char *) + sizeof(size_t))};

    money_op_start(&c); /* round record: {croupier:money}:round:<round id> */
    MONEY_PUT_LIT(&c, "{croupier:money}:round:");
    money_round_id_format(&s->round, c.data, MONEY_ID_MAX + 1); /* fits: service checked */
    c.data += strlen(c.data);
    money_op_end(&c);
    money_op_start(&c); /* fence: <lease base>:slot:<server>:epoch (common/keytag.h) */
    money_op_put(&c, lt, slen);
    MONEY_PUT_LIT(&c, ":slot:");
    c.data += money_u64_text(c.data, s->round.server);
    MONEY_PUT_LIT(&c, ":epoch");
    money_op_end(&c);
    money_op_start(&c);
    MONEY_PUT_LIT(&c, "{croupier:money}:rake:");
    money_op_put(&c, s->game, glen);
    money_op_end(&c);
    for (size_t i = 0; i < n; i++) {
        money_op_start(&c);
        MONEY_PUT_LIT(&c, "{croupier:money}:wallet:");
        money_op_put(&c, s->players[i], plen[i]);
        money_op_end(&c);
    }
    money_op_number(&c, (int64_t)n);
    money_op_start(&c); /* the epoch is a u64 */
    c.data += money_u64_text(c.data, s->round.epoch);
    money_op_end(&c);
    money_op_number(&c, s->rake);
    for (size_t i = 0; i < n; i++)
        money_op_number(&c, s->deltas[i]);
    return 0;
}

int money_op_wallet(money_kind_t kind, const char *player, int64_t amount, const char *op_id,
                    long ttl_s, money_op_t *out)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_wallet(a, kind, player, amount, op_id, ttl_s);
    if (rc == 0) {
        out->script = SCRIPT_WALLET;
        out->nkeys = 2;
        money_op_fill(out, a, 3, a->argc, -1);
    }
    free(a);
    return rc;
}

int money_op_history(const char *round_id, const char *game, const char *json, long maxlen,
                     long ttl_s, const char *const *shoes, size_t nshoes, money_op_t *out)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_history(a, round_id, game, json, maxlen, ttl_s, "live", shoes, nshoes);
    if (rc == 0) {
        out->script = SCRIPT_HISTORY;
        out->nkeys = atoi(a->argv[2]);
        money_op_fill(out, a, 3, a->argc, -1);
    }
    free(a);
    return rc;
}

int money_op_seat(const char *service, money_kind_t kind, const money_seat_t *s, int64_t amount,
                  const char *op_id, long ttl_s, money_op_t *out)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_seat(a, service, kind, s, amount, op_id, ttl_s);
    if (rc == 0) {
        out->script = SCRIPT_SEAT;
        out->nkeys = 6;
        money_op_fill(out, a, 3, a->argc, -1);
    }
    free(a);
    return rc;
}

int money_op_mark(const char *service, uint32_t slot, uint64_t epoch, const char *field,
                  const char *value, money_op_t *out)
{
    if (!money_valid_name(service) || field == NULL || field[0] == '\0' || strlen(field) > 64 ||
        value == NULL)
        return -EINVAL;
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    money_argv_script(a, SCRIPT_MARK);
    money_argv_fmt(a, "3");
    if (money_entity()) {
        /* the epoch's held HASH, a set of its own for the script's index, its own fence */
        money_argv_fmt(a, "{s:%s:%" PRIu32 ":%" PRIu64 "}:held", service, slot, epoch);
        money_argv_fmt(a, "{s:%s:%" PRIu32 ":%" PRIu64 "}:marked", service, slot, epoch);
        money_argv_fmt(a, "{s:%s:%" PRIu32 ":%" PRIu64 "}:live", service, slot, epoch);
    } else {
        money_argv_fmt(a, "{croupier:money}:held:%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
        money_argv_fmt(a, "%s", MONEY_HELD_INDEX_KEY);
        money_argv_fence(a, service, slot);
    }
    money_argv_fmt(a, "%" PRIu64, epoch);
    money_argv_fmt(a, "%s", field);
    money_argv_borrow(a, value, strlen(value));
    money_argv_fmt(a, "%s:%" PRIu32 ":%" PRIu64, service, slot, epoch);
    int rc = a->overflow ? -EINVAL : 0;
    if (rc == 0) {
        out->script = SCRIPT_MARK;
        out->nkeys = 3;
        money_op_fill(out, a, 3, a->argc, -1);
    }
    free(a);
    return rc;
}

void money_op_free(money_op_t *op)
{
    if (op == NULL)
        return;
    free((void *)op->argv);
    op->argv = NULL;
    op->lens = NULL;
    op->argc = op->nkeys = 0;
}

int money_settle_parts(const char *service, const money_settlement_t *s, money_settle_parts_t *out)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_settle(a, service, s, 1);
    if (rc == 0) {
        /* argv: EVALSHA sha numkeys | 3+n keys | ttl | n epoch rake deltas */
        int nkeys = (int)s->nplayers + 3;
        size_t cap = 0;
        for (int i = 3; i < a->argc; i++)
            cap += a->lens[i] + 32;
        out->buf = malloc(cap);
        if (out->buf == NULL) {
            free(a);
            return -ENOMEM;
        }
        out->keys_len = money_resp_bulks(out->buf, a, 3, 3 + nkeys);
        out->args_len = money_resp_bulks(out->buf + out->keys_len, a, 4 + nkeys, a->argc);
        out->nkeys = nkeys;
        out->nargs = a->argc - 4 - nkeys;
    }
    free(a);
    return rc;
}

char *money_cmd_settle_batch(const money_settle_parts_t *const *parts, size_t n, long ttl_s,
                             size_t *len)
{
    int nkeys = 0, nargs = 0;
    size_t body = 0;
    for (size_t i = 0; i < n; i++) {
        nkeys += parts[i]->nkeys;
        nargs += parts[i]->nargs;
        body += parts[i]->keys_len + parts[i]->args_len;
    }
    char head[160], ttl[48];
    int hl = snprintf(head, sizeof head, "*%d\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$%d\r\n%d\r\n",
                      4 + nkeys + nargs, money_script_sha(SCRIPT_SETTLE),
                      snprintf(NULL, 0, "%d", nkeys), nkeys);
    char ttlnum[24];
    int tn = snprintf(ttlnum, sizeof ttlnum, "%ld", ttl_s > 0 ? ttl_s : MONEY_RECORD_TTL_S);
    int tl = snprintf(ttl, sizeof ttl, "$%d\r\n%s\r\n", tn, ttlnum);
    char *cmd = malloc((size_t)hl + (size_t)tl + body);
    if (cmd == NULL)
        return NULL;
    size_t off = 0;
    memcpy(cmd, head, (size_t)hl);
    off += (size_t)hl;
    for (size_t i = 0; i < n; i++) {
        memcpy(cmd + off, parts[i]->buf, parts[i]->keys_len);
        off += parts[i]->keys_len;
    }
    memcpy(cmd + off, ttl, (size_t)tl);
    off += (size_t)tl;
    for (size_t i = 0; i < n; i++) {
        memcpy(cmd + off, parts[i]->buf + parts[i]->keys_len, parts[i]->args_len);
        off += parts[i]->args_len;
    }
    *len = off;
    return cmd;
}

int money_cmd_wallet(money_kind_t kind, const char *player, int64_t amount, const char *op_id,
                     long ttl_s, char **cmd, size_t *len)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_wallet(a, kind, player, amount, op_id, ttl_s);
    if (rc == 0)
        rc = money_argv_format(a, cmd, len);
    free(a);
    return rc;
}

int money_cmd_history(const char *round_id, const char *game, const char *json, long maxlen,
                      long ttl_s, char **cmd, size_t *len)
{
    money_argv_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return -ENOMEM;
    int rc = money_argv_history(a, round_id, game, json, maxlen, ttl_s, "live", NULL, 0);
    if (rc == 0)
        rc = money_argv_format(a, cmd, len);
    free(a);
    return rc;
}
