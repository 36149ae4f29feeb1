/*
 * holdem_phh -- PHH reader and replay through the real table (see holdem_phh.h).
 */
#include "holdem_phh.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "holdem_eval.h"
#include "xmalloc.h"

static int phh_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* A cursor over the text. */
typedef struct {
    const char *p;
    int line;
} phh_cur_t;

/* Skips spaces, tabs, newlines (inside values) and comments. */
static void phh_skip_ws(phh_cur_t *c, int newlines)
{
    for (;;) {
        if (*c->p == ' ' || *c->p == '\t' || *c->p == '\r') {
            c->p++;
        } else if (newlines && *c->p == '\n') {
            c->p++;
            c->line++;
        } else if (newlines && *c->p == '#') {
            while (*c->p && *c->p != '\n')
                c->p++;
        } else {
            return;
        }
    }
}

typedef enum { V_NUM, V_STR, V_OTHER } phh_kind_t;

/*
 * One scalar: a number, a string (copied into buf; *truncated set when longer) or something
 * else (a boolean, a date).
 */
static int phh_scalar(phh_cur_t *c, phh_kind_t *kind, double *num, char *buf, size_t buflen,
                      int *truncated)
{
    if (*c->p == '\'' || *c->p == '"') {
        char q = *c->p++;
        size_t n = 0;
        while (*c->p && *c->p != q && *c->p != '\n') {
            if (q == '"' && *c->p == '\\' && c->p[1])
                c->p++;
            if (n + 1 >= buflen) {
                *truncated = 1;
                c->p++;
                continue;
            }
            buf[n++] = *c->p++;
        }
        if (*c->p != q)
            return -1;
        c->p++;
        buf[n] = '\0';
        *kind = V_STR;
        return 0;
    }
    const char *start = c->p;
    while (*c->p && !strchr(",]\n#", *c->p))
        c->p++;
    const char *end = c->p;
    while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    if (end == start)
        return -1;
    char tmp[64];
    size_t len = (size_t)(end - start);
    if (len >= sizeof tmp) {
        *kind = V_OTHER;
        return 0;
    }
    memcpy(tmp, start, len);
    tmp[len] = '\0';
    char *stop;
    for (char *u = tmp; *u; u++) /* TOML allows 10_000 */
        if (*u == '_')
            memmove(u, u + 1, strlen(u));
    *num = strtod(tmp, &stop);
    *kind = (*stop == '\0' && stop != tmp) ? V_NUM : V_OTHER;
    return 0;
}

/* A value: a scalar or an array (of scalars or arrays). Numbers and strings are collected. */
typedef struct {
    int is_array;
    int n;
    phh_kind_t first_kind;
    double num;
    double nums[HOLDEM_PHH_MAX_ACTIONS];
    char str[HOLDEM_PHH_ACTION_LEN];
    char (*strs)[HOLDEM_PHH_ACTION_LEN]; /* caller's array for string arrays, or NULL */
    int overflow;
    int truncated; /* a string was longer than HOLDEM_PHH_ACTION_LEN - 1 */
} phh_val_t;

static int phh_value(phh_cur_t *c, phh_val_t *v, int depth)
{
    if (depth > 8)
        return -1;
    if (*c->p != '[') {
        char buf[HOLDEM_PHH_ACTION_LEN];
        phh_kind_t k;
        double num = 0;
        if (phh_scalar(c, &k, &num, buf, sizeof buf, &v->truncated) != 0)
            return -1;
        if (depth == 0) {
            v->first_kind = k;
            v->num = num;
            if (k == V_STR)
                memcpy(v->str, buf, sizeof buf);
        } else if (depth == 1) {
            if (v->n >= HOLDEM_PHH_MAX_ACTIONS) {
                v->overflow = 1;
            } else {
                if (v->n == 0)
                    v->first_kind = k;
                if (k != v->first_kind)
                    return -1;
                v->nums[v->n] = num;
                if (k == V_STR && v->strs != NULL)
                    memcpy(v->strs[v->n], buf, sizeof buf);
                v->n++;
            }
        }
        return 0;
    }
    c->p++;
    if (depth == 0)
        v->is_array = 1;
    for (;;) {
        phh_skip_ws(c, 1);
        if (*c->p == ']') {
            c->p++;
            return 0;
        }
        if (phh_value(c, v, depth + 1) != 0)
            return -1;
        phh_skip_ws(c, 1);
        if (*c->p == ',') {
            c->p++;
        } else if (*c->p != ']') {
            return -1;
        }
    }
}

static int phh_ints(const phh_val_t *v, int64_t *out, int *n, const char *key, char *err,
                    size_t errlen)
{
    if (!v->is_array || v->overflow || v->n > HOLDEM_MAX_SEATS ||
        (v->n > 0 && v->first_kind != V_NUM))
        return phh_fail(err, errlen, "%s: expected a list of at most %d numbers", key,
                        HOLDEM_MAX_SEATS);
    for (int i = 0; i < v->n; i++) {
        if (v->nums[i] != floor(v->nums[i]) || v->nums[i] < 0 || v->nums[i] > 1e15)
            return phh_fail(err, errlen, "%s: %g is not a whole number of chips", key, v->nums[i]);
        out[i] = (int64_t)v->nums[i];
    }
    *n = v->n;
    return 0;
}

int holdem_phh_parse(const char *text, holdem_phh_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    phh_cur_t c = {text, 1};
    phh_val_t *v = xmalloc(sizeof *v);
    int nstart = -1, have_actions = 0, have_blinds = 0, rc = 0;
    out->min_bet = -1;
    while (*c.p) {
        phh_skip_ws(&c, 1);
        if (*c.p == '\0')
            break;
        if (*c.p == '[') { /* a table header: skip the line */
            while (*c.p && *c.p != '\n')
                c.p++;
            continue;
        }
        const char *k0 = c.p;
        while (*c.p && *c.p != '=' && *c.p != '\n')
            c.p++;
        if (*c.p != '=') {
            rc = phh_fail(err, errlen, "line %d: expected key = value", c.line);
            goto done;
        }
        const char *k1 = c.p;
        while (k1 > k0 && (k1[-1] == ' ' || k1[-1] == '\t'))
            k1--;
        char key[40];
        size_t kl = (size_t)(k1 - k0) < sizeof key - 1 ? (size_t)(k1 - k0) : sizeof key - 1;
        memcpy(key, k0, kl);
        key[kl] = '\0';
        c.p++;
        phh_skip_ws(&c, 0);
        memset(v, 0, sizeof *v);
        if (!strcmp(key, "actions"))
            v->strs = out->actions;
        int line = c.line;
        if (phh_value(&c, v, 0) != 0) {
            rc = phh_fail(err, errlen, "line %d: cannot read the value of '%s'", line, key);
            goto done;
        }
        phh_skip_ws(&c, 0);
        if (*c.p == '#')
            while (*c.p && *c.p != '\n')
                c.p++;
        if (*c.p != '\n' && *c.p != '\0') {
            rc = phh_fail(err, errlen, "line %d: junk after the value of '%s'", c.line, key);
            goto done;
        }
        if (!strcmp(key, "variant")) {
            out->has_variant_nt = v->first_kind == V_STR && !strcmp(v->str, "NT");
            if (!out->has_variant_nt) {
                rc = phh_fail(err, errlen, "variant '%s' is not supported (only 'NT')", v->str);
                goto done;
            }
        } else if (!strcmp(key, "antes")) {
            if ((rc = phh_ints(v, out->antes, &out->nantes, key, err, errlen)) != 0)
                goto done;
        } else if (!strcmp(key, "blinds_or_straddles")) {
            if ((rc = phh_ints(v, out->blinds, &out->nblinds, key, err, errlen)) != 0)
                goto done;
            have_blinds = 1;
        } else if (!strcmp(key, "starting_stacks")) {
            if ((rc = phh_ints(v, out->starting, &nstart, key, err, errlen)) != 0)
                goto done;
        } else if (!strcmp(key, "min_bet")) {
            if (v->is_array || v->first_kind != V_NUM || v->num < 0) {
                rc = phh_fail(err, errlen, "min_bet: expected a number");
                goto done;
            }
            out->min_bet = (int64_t)v->num;
        } else if (!strcmp(key, "finishing_stacks")) {
            if (!v->is_array || v->n > HOLDEM_MAX_SEATS || (v->n && v->first_kind != V_NUM)) {
                rc = phh_fail(err, errlen, "finishing_stacks: expected a list of numbers");
                goto done;
            }
            for (int i = 0; i < v->n; i++)
                out->finishing[i] = v->nums[i];
            out->nfinish = v->n;
        } else if (!strcmp(key, "actions")) {
            if (!v->is_array || v->overflow || v->truncated || (v->n && v->first_kind != V_STR)) {
                rc = phh_fail(err, errlen, "actions: expected a list of at most %d strings",
                              HOLDEM_PHH_MAX_ACTIONS);
                goto done;
            }
            out->nactions = v->n;
            have_actions = 1;
        }
    }
    if (!out->has_variant_nt || nstart < 0 || !have_actions || !have_blinds) {
        rc = phh_fail(err, errlen,
                      "missing field (variant, starting_stacks, "
                      "blinds_or_straddles and actions are required)");
        goto done;
    }
    out->players = nstart;
    if (nstart < 2)
        rc = phh_fail(err, errlen, "%d players: need 2 to %d", nstart, HOLDEM_MAX_SEATS);
done:
    free(v);
    return rc;
}

/* Parses "pN" into a seat number 0..players-1, or -1. */
static int phh_player(const char *s, int players)
{
    if (s[0] != 'p' || s[1] < '1' || s[1] > '9' || (s[2] != '\0' && s[2] != ' '))
        return -1;
    int n = s[1] - '1';
    return n < players ? n : -1;
}

/* Parses a run of cards where "??" stands for an unknown card (written as 255). */
static int phh_cards(const char *s, uint8_t *out, int max)
{
    int n = 0;
    while (*s && *s != ' ') {
        if (n == max || !s[1])
            return -1;
        if (s[0] == '?' && s[1] == '?') {
            out[n++] = 255;
        } else {
            int c = holdem_card_parse(s);
            if (c < 0)
                return -1;
            out[n++] = (uint8_t)c;
        }
        s += 2;
    }
    return n;
}

/* Checks the PHH blind and ante lists and turns them into a table config. */
static int phh_config(const holdem_phh_t *h, holdem_config_t *cfg, char *err, size_t errlen)
{
    int n = h->players;
    memset(cfg, 0, sizeof *cfg);
    cfg->seats = n;
    if (h->nblinds != n || (h->nantes != n && h->nantes != 0) ||
        (h->nfinish != n && h->nfinish != 0))
        return phh_fail(err, errlen, "list lengths differ from the %d players", n);
    cfg->small_blind = h->blinds[0];
    cfg->big_blind = h->blinds[1];
    cfg->pokerkit_rules = true; /* PHH means what PokerKit does (docs/rules/holdem.md) */
    /* Straddles: a chain of neighbours, each twice the one before, from under the gun (p3) or
     * a later seat (a Mississippi or button straddle). */
    int first = 2, chain = 0;
    while (first < n && h->blinds[first] == 0)
        first++;
    while (first + chain < n && h->blinds[first + chain] != 0)
        chain++;
    for (int i = first + chain; i < n; i++)
        if (h->blinds[i] != 0)
            return phh_fail(err, errlen, "blinds_or_straddles: straddles must follow each other");
    for (int i = 1; i < chain; i++)
        if (h->blinds[first + i] != 2 * h->blinds[first + i - 1])
            return phh_fail(err, errlen,
                            "blinds_or_straddles: each straddle must be twice the one before");
    if (chain > 0) {
        cfg->straddle = h->blinds[first];
        cfg->max_straddles = chain;
        cfg->straddle_position = first - 2;
    }
    int nz = 0;
    for (int i = 0; i < h->nantes; i++)
        nz += h->antes[i] != 0;
    if (nz == 1 && h->antes[1] != 0) {
        cfg->big_blind_ante = h->antes[1];
    } else if (nz == n) {
        for (int i = 1; i < n; i++)
            if (h->antes[i] != h->antes[0])
                return phh_fail(err, errlen, "antes: unequal antes are not supported");
        cfg->ante = h->antes[0];
    } else if (nz != 0) {
        return phh_fail(err, errlen, "antes: only equal antes or a big-blind ante");
    }
    cfg->min_bet = h->min_bet > 0 ? h->min_bet : cfg->big_blind;
    if (cfg->small_blind <= 0 || cfg->big_blind < cfg->small_blind)
        return phh_fail(err, errlen, "blinds: need 0 < small blind <= big blind");
    return 0;
}

/*
 * Orders a deck so that the table deals the recorded cards: hole cards one at a time from
 * seat 0 (left of the button), twice round, then burn + flop, burn + turn, burn + river.
 * Unknown cards and burns are filled with cards not used anywhere in the hand.
 */
static int phh_deck(const holdem_phh_t *h, uint8_t *deck, char *err, size_t errlen)
{
    int n = h->players;
    uint8_t hole[HOLDEM_MAX_SEATS][2];
    uint8_t board[5];
    int nboard = 0;
    memset(hole, 255, sizeof hole);
    memset(board, 255, sizeof board);
    uint64_t used = 0;
    for (int i = 0; i < h->nactions; i++) {
        const char *a = h->actions[i];
        uint8_t cards[5];
        int k;
        if (!strncmp(a, "d dh ", 5)) {
            int p = phh_player(a + 5, n);
            if (p < 0 || (k = phh_cards(a + 8, cards, 2)) != 2)
                return phh_fail(err, errlen, "action %d '%s': malformed deal", i + 1, a);
            hole[p][0] = cards[0];
            hole[p][1] = cards[1];
        } else if (!strncmp(a, "d db ", 5)) {
            k = phh_cards(a + 5, cards, 5);
            if (k <= 0 || nboard + k > 5 || (nboard == 0 && k != 3) || (nboard > 0 && k != 1))
                return phh_fail(err, errlen, "action %d '%s': malformed board", i + 1, a);
            memcpy(board + nboard, cards, (size_t)k);
            nboard += k;
        } else {
            continue;
        }
        for (int j = 0; j < k; j++) {
            if (cards[j] == 255)
                continue;
            if (used & (1ull << cards[j]))
                return phh_fail(err, errlen, "action %d '%s': card dealt twice", i + 1, a);
            used |= 1ull << cards[j];
        }
    }
    int pos = 0;
    for (int r = 0; r < 2; r++)
        for (int s = 0; s < n; s++)
            deck[pos++] = hole[s][r];
    int bi = 0;
    for (int street = 0; street < 3; street++) {
        deck[pos++] = 255; /* burn */
        for (int j = 0; j < (street == 0 ? 3 : 1); j++)
            deck[pos++] = board[bi++];
    }
    int next = 0;
    for (int i = 0; i < pos; i++) {
        if (deck[i] != 255)
            continue;
        while (used & (1ull << next))
            next++;
        deck[i] = (uint8_t)next;
        used |= 1ull << next;
    }
    return pos;
}

/* What the replay notes of the table's events: the seats whose turn had no decision. */
typedef struct {
    int no_decision[HOLDEM_MAX_SEATS];
} phh_watch_t;

static void phh_on_event(void *ud, const holdem_event_t *ev)
{
    phh_watch_t *w = ud;
    if (ev->kind == HOLDEM_EV_NO_DECISION && ev->seat >= 0 && ev->seat < HOLDEM_MAX_SEATS)
        w->no_decision[ev->seat]++;
}

int holdem_phh_replay(const holdem_phh_t *h, int64_t *stacks, char *err, size_t errlen)
{
    holdem_config_t cfg;
    int rc = phh_config(h, &cfg, err, errlen);
    if (rc != 0)
        return rc;
    uint8_t deck[HOLDEM_CARDS];
    int ndeck = phh_deck(h, deck, err, errlen);
    if (ndeck < 0)
        return ndeck;
    int n = h->players;
    phh_watch_t watch = {{0}};
    holdem_table_t *t = holdem_table_create(&cfg, phh_on_event, &watch, &rc);
    if (t == NULL)
        return phh_fail(err, errlen, "table config refused: %s", holdem_err_name(rc));
    for (int s = 0; s < n; s++) {
        if (h->starting[s] <= 0) {
            rc = phh_fail(err, errlen, "p%d: starting stack must be positive", s + 1);
            goto done;
        }
        holdem_table_sit(t, s, h->starting[s]);
        if (cfg.straddle > 0 && s >= 2 + cfg.straddle_position &&
            s < 2 + cfg.straddle_position + cfg.max_straddles)
            holdem_table_set_straddle(t, s, true);
    }
    rc = holdem_table_start_hand(t, n - 1, deck, ndeck);
    if (rc != HOLDEM_OK) {
        rc = phh_fail(err, errlen, "cannot start the hand: %s", holdem_err_name(rc));
        goto done;
    }
    int nboard_seen = 0;
    for (int i = 0; i < h->nactions; i++) {
        const char *a = h->actions[i];
        if (!strncmp(a, "d dh ", 5))
            continue;
        if (!strncmp(a, "d db ", 5)) {
            /* The table deals by itself when a street ends; check it dealt these cards. */
            uint8_t want[5], board[5];
            int k = phh_cards(a + 5, want, 5);
            int nb = holdem_table_board(t, board);
            if (nb < nboard_seen + k) {
                rc = phh_fail(err, errlen,
                              "action %d '%s': the table has dealt only %d board "
                              "cards",
                              i + 1, a, nb);
                goto done;
            }
            for (int j = 0; j < k; j++)
                if (want[j] != 255 && board[nboard_seen + j] != want[j]) {
                    rc = phh_fail(err, errlen, "action %d '%s': board differs", i + 1, a);
                    goto done;
                }
            nboard_seen += k;
            continue;
        }
        int seat = phh_player(a, n);
        if (seat < 0 || a[2] != ' ') {
            rc = phh_fail(err, errlen, "action %d '%s': malformed", i + 1, a);
            goto done;
        }
        const char *verb = a + 3;
        if (!strncmp(verb, "sm", 2) && (verb[2] == '\0' || verb[2] == ' ')) {
            /* Show or muck: the table reveals hands itself; shown cards must be the dealt ones. */
            if (verb[2] == ' ') {
                uint8_t shown[2];
                if (phh_cards(verb + 3, shown, 2) != 2) {
                    rc = phh_fail(err, errlen, "action %d '%s': malformed show", i + 1, a);
                    goto done;
                }
                for (int j = 0; j < 2; j++)
                    if (shown[j] != 255 && shown[j] != deck[j * n + seat]) {
                        rc = phh_fail(err, errlen, "action %d '%s': shows cards not dealt", i + 1,
                                      a);
                        goto done;
                    }
            }
            continue;
        }
        /* PokerKit gives a player whose decision vanished during the round (the others folded
         * or went all-in, nothing to call) a turn anyway, where it can only check; the table
         * gives none. Such a check must be one the table skipped. */
        if (!strcmp(verb, "cc") && holdem_table_to_act(t) != seat && watch.no_decision[seat] > 0) {
            watch.no_decision[seat]--;
            continue;
        }
        holdem_action_kind_t kind;
        int64_t amount = 0;
        holdem_legal_t legal;
        holdem_table_legal(t, &legal);
        if (!strcmp(verb, "f")) {
            kind = HOLDEM_FOLD;
        } else if (!strcmp(verb, "cc")) {
            kind = legal.can_check ? HOLDEM_CHECK : HOLDEM_CALL;
        } else if (!strncmp(verb, "cbr ", 4)) {
            char *end;
            double x = strtod(verb + 4, &end);
            if (*end != '\0' || x != floor(x) || x <= 0 || x > 1e15) {
                rc = phh_fail(err, errlen, "action %d '%s': bad amount", i + 1, a);
                goto done;
            }
            amount = (int64_t)x;
            kind = legal.can_bet ? HOLDEM_BET : HOLDEM_RAISE;
        } else {
            rc = phh_fail(err, errlen, "action %d '%s': unknown action", i + 1, a);
            goto done;
        }
        int arc = holdem_table_act(t, seat, kind, amount, 0);
        if (arc != HOLDEM_OK) {
            rc =
                phh_fail(err, errlen, "action %d '%s' refused: %s", i + 1, a, holdem_err_name(arc));
            goto done;
        }
    }
    if (holdem_table_in_hand(t)) {
        rc = phh_fail(err, errlen, "the actions end before the hand does (seat p%d to act)",
                      holdem_table_to_act(t) + 1);
        goto done;
    }
    for (int s = 0; s < n; s++)
        stacks[s] = holdem_table_stack(t, s);
    rc = 0;
done:
    holdem_table_destroy(t);
    return rc;
}

int holdem_phh_check_file(const char *path, holdem_phh_t *h, char *msg, size_t msglen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        int e = errno;
        snprintf(msg, msglen, "%s: %s", path, strerror(e));
        return -e;
    }
    size_t cap = 1 << 16, len = 0;
    char *text = xmalloc(cap + 1);
    size_t got;
    while ((got = fread(text + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap)
            text = xrealloc(text, (cap *= 2) + 1);
    }
    int rerr = ferror(f);
    fclose(f);
    text[len] = '\0';
    char err[200];
    int rc;
    if (rerr || memchr(text, '\0', len) != NULL) {
        snprintf(msg, msglen, "%s: cannot read the file as text", path);
        rc = -EIO;
        goto out;
    }
    if ((rc = holdem_phh_parse(text, h, err, sizeof err)) != 0) {
        snprintf(msg, msglen, "%s: %s", path, err);
        goto out;
    }
    int64_t stacks[HOLDEM_MAX_SEATS];
    if (holdem_phh_replay(h, stacks, err, sizeof err) != 0) {
        snprintf(msg, msglen, "%s: %s", path, err);
        rc = 1;
        goto out;
    }
    if (h->nfinish != h->players) {
        snprintf(msg, msglen, "%s: no finishing_stacks to compare with", path);
        rc = 1;
        goto out;
    }
    rc = 0;
    for (int s = 0; s < h->players && rc == 0; s++)
        if (fabs((double)stacks[s] - h->finishing[s]) > 0.5) {
            snprintf(msg, msglen, "%s: p%d finished with %lld, expected %.1f", path, s + 1,
                     (long long)stacks[s], h->finishing[s]);
            rc = 1;
        }
out:
    free(text);
    return rc;
}
