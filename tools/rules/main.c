/*
 * croupier-rules -- the games' rules as a command-line tool, for users and tests.
 * Each engine contributes subcommands; this file only dispatches.
 */
#include <stdio.h>
#include <string.h>

#include "rules_cmds.h"
#include "version.h"

/* The commands the build lists (tools/meson.build generates rules_list.h). */
#define RULES_CMD(sym) extern const rules_cmd_t sym;
#include "rules_list.h"
#undef RULES_CMD

static const rules_cmd_t *const rules_cmds[] = {
#define RULES_CMD(sym) &sym,
#include "rules_list.h"
#undef RULES_CMD
    NULL,
};

static void rules_usage(FILE *to)
{
    fprintf(to, "usage: croupier-rules <command> [args...]\n"
                "       croupier-rules --version   (prints the build's version)\n\ncommands:\n");
    for (const rules_cmd_t *const *c = rules_cmds; *c != NULL; c++)
        fprintf(to, "  %s\n", (*c)->usage);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        rules_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("croupier-rules %s\n", croupier_version);
        return 0;
    }
    for (const rules_cmd_t *const *c = rules_cmds; *c != NULL; c++)
        if (!strcmp(argv[1], (*c)->name))
            return (*c)->run(argc - 1, argv + 1);
    fprintf(stderr, "croupier-rules: unknown command '%s'\n", argv[1]);
    rules_usage(stderr);
    return 2;
}
