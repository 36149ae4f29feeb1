/* Subcommands of croupier-rules; each returns the process exit code. */
#ifndef CROUPIER_RULES_CMDS_H
#define CROUPIER_RULES_CMDS_H

/* Engines add their declarations here, one per subcommand. */
int rules_trad_moves(int argc, char **argv); /* games/traditional: moves */
int rules_bj_sim(int argc, char **argv);      /* games/persistent: bj-sim */
int rules_bj_strategy(int argc, char **argv); /* games/persistent: bj-strategy */
int rules_holdem_eval(int argc, char **argv);       /* games/holdem: eval */
int rules_holdem_phh_replay(int argc, char **argv); /* games/holdem: phh-replay */
int rules_zjh(int argc, char **argv); /* games/zhajinhua: zhajinhua rank / compare */

#endif
