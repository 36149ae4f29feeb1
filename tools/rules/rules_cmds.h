/*
 * Subcommands of croupier-rules. Each game's rules source defines its commands as rules_cmd_t
 * objects and names them in its meson.build (rules_commands += ['rules_cmd_zhajinhua']); the
 * build generates the table main.c dispatches from (tools/meson.build), so adding a game's
 * command edits no shared file.
 */
#ifndef CROUPIER_RULES_CMDS_H
#define CROUPIER_RULES_CMDS_H

typedef struct {
    const char *name;
    const char *usage;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name; returns the exit code */
} rules_cmd_t;

#endif
