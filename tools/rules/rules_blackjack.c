/*
 * croupier-rules bj-sim / bj-strategy: the blackjack simulator and basic-strategy chart.
 *
 * Both take the same rule flags; bj-sim drives the real table code (games/persistent) with
 * the basic-strategy player and prints the mean return per initial bet, its standard error
 * and the variance. Bad flags print one line naming the problem and exit 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bj_sim.h"
#include "bj_strategy.h"
#include "rules_cmds.h"

typedef struct {
    bj_rules_t rules;
    uint64_t rounds;
    uint64_t seed;
    int64_t bet;
    bool help;
} rules_bj_opts_t;

static void rules_bj_usage(FILE *to, const char *cmd)
{
    fprintf(to,
            "usage: croupier-rules %s [flags]\n"
            "rule flags (defaults: the common six-deck shoe game):\n"
            "  --decks N            decks in the shoe, 1..8 (6)\n"
            "  --s17 | --h17        dealer stands / hits on soft 17 (--s17)\n"
            "  --das | --no-das     double after split (--das)\n"
            "  --double any|9-11|10-11  which first two cards may be doubled (any)\n"
            "  --surrender | --no-surrender  late surrender (--surrender)\n"
            "  --rsa | --no-rsa     resplit aces (--rsa)\n"
            "  --max-hands N        most hands per seat after splits, 1..8 (4)\n"
            "  --payout N:D         blackjack pays N:D, e.g. 3:2 or 6:5 (3:2)\n"
            "  --insurance | --no-insurance  insurance and even money offered (--insurance)\n"
            "  --peek | --no-peek   dealer peeks for blackjack / no hole card (--peek)\n"
            "  --penetration F      cut card at fraction F of the shoe, 0.10..0.95 (0.75)\n"
            "  --min-bet N --max-bet N  table limits (10, 10000)\n",
            cmd);
    if (!strcmp(cmd, "bj-sim"))
        fprintf(to, "simulation flags:\n"
                    "  --rounds N           rounds to play (1000000)\n"
                    "  --seed N             seed of the shuffle generator (1)\n"
                    "  --bet N              flat bet per round; must pay blackjack exactly (10)\n");
}

/* Parses a whole decimal number in [min, max]; false if it is not one. */
static bool rules_bj_number(const char *s, long long min, long long max, long long *out)
{
    if (s == NULL || *s == '\0')
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/*
 * Fills o from argv (argv[0] is the subcommand). Returns 0, or 2 after printing one line
 * naming the bad flag to stderr. Flags take their value as "--flag V" or "--flag=V".
 */
static int rules_bj_parse(int argc, char **argv, bool sim, rules_bj_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    bj_rules_default(&o->rules);
    o->rounds = 1000000;
    o->seed = 1;
    o->bet = 10;
    bj_rules_t *r = &o->rules;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *arg = argv[i];
        const char *val = NULL;
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], arg);
            return 2;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (len >= sizeof(name)) {
            fprintf(stderr, "%s: unknown flag '%s'\n", argv[0], arg);
            return 2;
        }
        memcpy(name, arg, len);
        name[len] = '\0';
        /* Switches. */
        struct {
            const char *name;
            bool *field;
            bool value;
        } sw[] = {
            {"--s17", &r->h17, false},
            {"--h17", &r->h17, true},
            {"--das", &r->das, true},
            {"--no-das", &r->das, false},
            {"--surrender", &r->late_surrender, true},
            {"--no-surrender", &r->late_surrender, false},
            {"--rsa", &r->rsa, true},
            {"--no-rsa", &r->rsa, false},
            {"--insurance", &r->insurance, true},
            {"--no-insurance", &r->insurance, false},
            {"--peek", &r->peek, true},
            {"--no-peek", &r->peek, false},
            {"--help", &o->help, true},
            {"-h", &o->help, true},
        };
        bool matched = false;
        for (size_t k = 0; k < sizeof(sw) / sizeof(sw[0]); k++) {
            if (!strcmp(name, sw[k].name)) {
                if (eq != NULL) {
                    fprintf(stderr, "%s: %s takes no value\n", argv[0], name);
                    return 2;
                }
                *sw[k].field = sw[k].value;
                matched = true;
            }
        }
        if (matched)
            continue;
        if (eq != NULL)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        long long n;
        if (!strcmp(name, "--decks")) {
            if (!rules_bj_number(val, 1, BJ_MAX_DECKS, &n))
                goto bad_value;
            r->decks = (int)n;
        } else if (!strcmp(name, "--max-hands")) {
            if (!rules_bj_number(val, 1, BJ_MAX_HANDS, &n))
                goto bad_value;
            r->max_hands = (int)n;
        } else if (!strcmp(name, "--double")) {
            if (val != NULL && !strcmp(val, "any"))
                r->double_on = BJ_DOUBLE_ANY;
            else if (val != NULL && !strcmp(val, "9-11"))
                r->double_on = BJ_DOUBLE_9_11;
            else if (val != NULL && !strcmp(val, "10-11"))
                r->double_on = BJ_DOUBLE_10_11;
            else
                goto bad_value;
        } else if (!strcmp(name, "--payout")) {
            int num, den, used = 0;
            if (val == NULL || sscanf(val, "%d:%d%n", &num, &den, &used) != 2 ||
                val[used] != '\0' || num < 1 || den < 1 || num > 100 || den > 100)
                goto bad_value;
            r->bj_pay_num = num;
            r->bj_pay_den = den;
        } else if (!strcmp(name, "--penetration")) {
            char *end;
            double f = val != NULL ? strtod(val, &end) : 0;
            if (val == NULL || *val == '\0' || *end != '\0' || !(f >= 0.10 && f <= 0.95))
                goto bad_value;
            r->penetration = (int)(f * 1000 + 0.5);
        } else if (!strcmp(name, "--min-bet")) {
            if (!rules_bj_number(val, 1, BJ_MAX_BET, &n))
                goto bad_value;
            r->min_bet = n;
        } else if (!strcmp(name, "--max-bet")) {
            if (!rules_bj_number(val, 1, BJ_MAX_BET, &n))
                goto bad_value;
            r->max_bet = n;
        } else if (sim && !strcmp(name, "--rounds")) {
            if (!rules_bj_number(val, 1, 100000000000LL, &n))
                goto bad_value;
            o->rounds = (uint64_t)n;
        } else if (sim && !strcmp(name, "--seed")) {
            if (!rules_bj_number(val, 0, INT64_MAX, &n))
                goto bad_value;
            o->seed = (uint64_t)n;
        } else if (sim && !strcmp(name, "--bet")) {
            if (!rules_bj_number(val, 1, BJ_MAX_BET, &n))
                goto bad_value;
            o->bet = n;
        } else {
            fprintf(stderr, "%s: unknown flag '%s' (see --help)\n", argv[0], name);
            return 2;
        }
        continue;
    bad_value:
        fprintf(stderr, "%s: bad value '%s' for %s (see --help)\n", argv[0], val != NULL ? val : "",
                name);
        return 2;
    }
    char err[160];
    if (bj_rules_validate(r, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 2;
    }
    return 0;
}

int rules_bj_sim(int argc, char **argv)
{
    rules_bj_opts_t o;
    int rc = rules_bj_parse(argc, argv, true, &o);
    if (rc != 0)
        return rc;
    if (o.help) {
        rules_bj_usage(stdout, argv[0]);
        return 0;
    }
    char desc[256], err[200];
    bj_rules_describe(&o.rules, desc, sizeof(desc));
    bj_sim_result_t res;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = bj_sim_run(&o.rules, o.rounds, o.seed, o.bet, &res, err, sizeof(err));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc == BJ_ERR_BET_LIMIT || rc == BJ_ERR_INVALID) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 2;
    }
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err);
        return 1;
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("rules: %s\n", desc);
    printf("rounds: %" PRIu64 " (seed %" PRIu64 ", bet %lld, %" PRIu64 " hands, %" PRIu64
           " shoes)\n",
           res.rounds, o.seed, (long long)res.bet, res.hands, res.shoes);
    printf("mean return per initial bet: %+.4f %% (standard error %.4f %%)\n", res.mean * 100,
           res.stderr_mean * 100);
    printf("variance per round: %.4f (standard deviation %.4f)\n", res.variance,
           res.variance > 0 ? __builtin_sqrt(res.variance) : 0.0);
    printf("net chips: %lld over %.2f s (%.0f rounds/s)\n", (long long)res.net, secs,
           secs > 0 ? (double)res.rounds / secs : 0.0);
    return 0;
}

int rules_bj_strategy(int argc, char **argv)
{
    rules_bj_opts_t o;
    int rc = rules_bj_parse(argc, argv, false, &o);
    if (rc != 0)
        return rc;
    if (o.help) {
        rules_bj_usage(stdout, argv[0]);
        return 0;
    }
    bj_strategy_t *s;
    if (bj_strategy_create(&o.rules, &s) != 0) {
        fprintf(stderr, "%s: invalid rules\n", argv[0]);
        return 2;
    }
    bj_strategy_print(s, stdout);
    bj_strategy_destroy(s);
    return 0;
}

/* croupier-rules commands of this file (named in the game's meson.build: rules_commands). */
const rules_cmd_t rules_cmd_bj_sim = {"bj-sim", "bj-sim [rule flags] [--rounds N --seed N --bet N]  blackjack simulator", rules_bj_sim};
const rules_cmd_t rules_cmd_bj_strategy = {"bj-strategy", "bj-strategy [rule flags]  blackjack basic-strategy chart", rules_bj_strategy};
