/*
 * croupier-rules -- the games' rules as a command-line tool, for users and tests.
 * Each engine contributes subcommands; this file only dispatches.
 */
#include <stdio.h>
#include <string.h>

#include "rules_cmds.h"

typedef struct {
    const char *name;
    const char *usage;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} rules_cmd_t;

static const rules_cmd_t rules_cmds[] = {
    /* Engines add their subcommands here (one line each), declared in rules_cmds.h. */
    {"moves", "moves <game> [--option...] <hand> [<move-to-beat>]   list every legal move", rules_trad_moves},
    {"bj-sim", "bj-sim [rule flags] [--rounds N --seed N --bet N]  blackjack simulator", rules_bj_sim},
    {"bj-strategy", "bj-strategy [rule flags]  blackjack basic-strategy chart", rules_bj_strategy},
    {"eval", "eval CARDS   best hold'em hand of 5-7 cards, e.g. AsKsQsJsTs9h2c", rules_holdem_eval},
    {"phh-replay", "phh-replay FILE|DIR...   replay PHH hands through the hold'em table", rules_holdem_phh_replay},
    {"zhajinhua", "zhajinhua rank CARDS | compare HAND_A HAND_B   Zha Jin Hua hands, e.g. AsKd2c", rules_zjh},
    {NULL, NULL, NULL},
};

static void rules_usage(FILE *to)
{
    fprintf(to, "usage: croupier-rules <command> [args...]\n\ncommands:\n");
    for (const rules_cmd_t *c = rules_cmds; c->name != NULL; c++)
        fprintf(to, "  %s\n", c->usage);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        rules_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (const rules_cmd_t *c = rules_cmds; c->name != NULL; c++)
        if (!strcmp(argv[1], c->name))
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "croupier-rules: unknown command '%s'\n", argv[1]);
    rules_usage(stderr);
    return 2;
}
