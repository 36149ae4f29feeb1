/* Subcommands of croupier-rules; each returns the process exit code. */
#ifndef CROUPIER_RULES_CMDS_H
#define CROUPIER_RULES_CMDS_H

/* Engines add their declarations here, one per subcommand. */
int rules_trad_moves(int argc, char **argv); /* games/traditional: moves */

#endif
