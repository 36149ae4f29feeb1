/*
 * croupier-rules hold'em subcommands:
 *   eval CARDS          the best hand of 5 to 7 cards ("AsKsQsJsTs9h2c")
 *   phh-replay PATH...  replay PHH files (or folders of them) through the real table
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "holdem_eval.h"
#include "holdem_phh.h"
#include "rules_cmds.h"
#include "xmalloc.h"

int rules_holdem_eval(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: croupier-rules eval CARDS   (5 to 7 cards, e.g. AsKsQsJsTs9h2c)\n");
        return 2;
    }
    uint8_t cards[8];
    int n = holdem_cards_parse(argv[1], cards, 7);
    if (n < 5) {
        fprintf(stderr, "croupier-rules eval: '%s' is not 5 to 7 distinct cards like As Td 2c\n",
                argv[1]);
        return 2;
    }
    int v = holdem_eval_cards(cards, n);
    holdem_category_t cat = holdem_value_category((uint16_t)v);
    printf("%s, rank %d in category, value %d of %d\n", holdem_category_name(cat),
           holdem_value_rank_in_category((uint16_t)v), v, HOLDEM_VALUE_MAX);
    return 0;
}

typedef struct {
    holdem_phh_t *scratch;
    long passed, failed;
} replay_ctx_t;

static int replay_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays one file, or every *.phh below a folder in name order. */
static void replay_path(replay_ctx_t *c, const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("%s: %s\n", path, strerror(errno));
        c->failed++;
        return;
    }
    if (S_ISDIR(st.st_mode) && depth < 16) {
        DIR *d = opendir(path);
        if (d == NULL) {
            printf("%s: %s\n", path, strerror(errno));
            c->failed++;
            return;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            if (n == cap)
                names = xreallocarray(names, cap = cap ? cap * 2 : 64, sizeof *names);
            size_t len = strlen(path) + strlen(e->d_name) + 2;
            names[n] = xmalloc(len);
            snprintf(names[n++], len, "%s/%s", path, e->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, replay_cmp);
        for (size_t i = 0; i < n; i++) {
            struct stat sub;
            size_t len = strlen(names[i]);
            if (stat(names[i], &sub) == 0 &&
                (S_ISDIR(sub.st_mode) || (len > 4 && !strcmp(names[i] + len - 4, ".phh"))))
                replay_path(c, names[i], depth + 1);
            free(names[i]);
        }
        free(names);
        return;
    }
    char msg[512];
    if (holdem_phh_check_file(path, c->scratch, msg, sizeof msg) == 0) {
        c->passed++;
    } else {
        printf("%s\n", msg);
        c->failed++;
    }
}

int rules_holdem_phh_replay(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: croupier-rules phh-replay FILE|DIR...\n");
        return 2;
    }
    replay_ctx_t c = {xmalloc(sizeof(holdem_phh_t)), 0, 0};
    for (int i = 1; i < argc; i++)
        replay_path(&c, argv[i], 0);
    printf("%ld passed, %ld failed\n", c.passed, c.failed);
    free(c.scratch);
    return c.failed ? 1 : 0;
}

/* croupier-rules commands of this file (named in the game's meson.build: rules_commands). */
const rules_cmd_t rules_cmd_eval = {"eval", "eval CARDS   best hold'em hand of 5-7 cards, e.g. AsKsQsJsTs9h2c", rules_holdem_eval};
const rules_cmd_t rules_cmd_phh_replay = {"phh-replay", "phh-replay FILE|DIR...   replay PHH hands through the hold'em table", rules_holdem_phh_replay};
