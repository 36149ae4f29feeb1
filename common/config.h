/*
 * config -- command-line flags with an environment variable for each.
 *
 * A program describes its flags in a table of config_flag_t ending with a zeroed entry.
 * config_parse() first applies every default, then every environment variable that is set,
 * then the command line, so a flag beats its variable and the variable beats the default.
 * The variable of "--drain-max-seconds" is CROUPIER_DRAIN_MAX_SECONDS (derived, never listed).
 *
 * Values are written through the flag's `out` pointer:
 *   CONFIG_STR   const char **  (points into argv/environ/default; not copied)
 *   CONFIG_INT   long *         (decimal, checked against [min, max])
 *   CONFIG_BOOL  bool *         ("--x" alone, or "--x=true|false|1|0|yes|no")
 *   CONFIG_ADDR  config_addr_t * (HOST:PORT or [V6]:PORT; HOST must be an IP literal)
 */
#ifndef CROUPIER_CONFIG_H
#define CROUPIER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum { CONFIG_STR, CONFIG_INT, CONFIG_BOOL, CONFIG_ADDR } config_type_t;

typedef struct {
    char host[64]; /* IP literal, without brackets */
    int port;      /* 0..65535; 0 asks the kernel for a free port where listening */
} config_addr_t;

typedef struct config_flag {
    const char *name; /* without the leading "--" */
    config_type_t type;
    const char *def; /* default as text; NULL means "no default" (string stays NULL) */
    const char *help;
    void *out;
    long min, max; /* CONFIG_INT bounds (both 0 = unbounded) */
} config_flag_t;

/* Results of config_parse(). */
enum {
    CONFIG_OK = 0,
    CONFIG_HELP = 1,    /* --help (usage) or --version was given; printed to stdout: exit 0 */
    CONFIG_ERROR = -22, /* a bad flag or value; one line explaining it is in errbuf */
};

/* The version a program prints for "--version" ("<prog> <version>"), which --help then lists;
 * NULL (the default): "--version" is an unknown flag. An installed binary sets it to
 * croupier_version (common/version.h) before config_parse(). */
extern const char *config_program_version;

int config_parse(const config_flag_t *flags, const char *prog, const char *summary, int argc,
                 char **argv, char *errbuf, size_t errlen);
void config_print_help(const config_flag_t *flags, const char *prog, const char *summary, FILE *to);
/* Parses HOST:PORT into out; returns 0 or -EINVAL. */
int config_parse_addr(const char *text, config_addr_t *out);
/* Whether item is one of the comma-separated names of list ("a,b,c"). */
bool config_list_has(const char *list, const char *item);
/* Writes the variable name for a flag ("drain-max-seconds" -> "CROUPIER_DRAIN_MAX_SECONDS"). */
void config_env_name(const char *flag, char *buf, size_t len);

#endif
