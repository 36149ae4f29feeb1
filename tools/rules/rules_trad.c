/*
 * croupier-rules moves -- every legal move of a shedding-game hand, one per line.
 *
 *     croupier-rules moves doudizhu <hand> [<move-to-beat>]
 *
 * Dou Dizhu cards are written by rank, 3456789TJQKA2 plus B / R for the black / red joker, in
 * any order; moves are printed as sorted rank strings (e.g. 33344455566B). With a move to beat,
 * the moves that beat it are printed and then "pass". Bad input: a message and exit code 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddz.h"
#include "rules_cmds.h"
#include "xmalloc.h"

static int trad_usage(void)
{
    fprintf(stderr, "usage: croupier-rules moves doudizhu <hand> [<move-to-beat>]\n"
                    "  cards by rank: 3456789TJQKA2, B = black joker, R = red joker\n");
    return 2;
}

/* Dou Dizhu: parse, check, generate, print. */
static int trad_moves_ddz(int argc, char **argv)
{
    char err[128];
    shed_counts_t hand, beat_counts = 0;
    ddz_move_t beat = {0};
    if (argc < 3 || argc > 4)
        return trad_usage();
    if (shed_counts_parse(argv[2], 1, &hand, err, sizeof err) != 0) {
        fprintf(stderr, "croupier-rules moves: bad hand '%s': %s\n", argv[2], err);
        return 2;
    }
    if (hand == 0) {
        fprintf(stderr, "croupier-rules moves: the hand is empty\n");
        return 2;
    }
    if (argc == 4) {
        if (shed_counts_parse(argv[3], 1, &beat_counts, err, sizeof err) != 0) {
            fprintf(stderr, "croupier-rules moves: bad move to beat '%s': %s\n", argv[3], err);
            return 2;
        }
        if (ddz_classify(beat_counts, &beat) != 0) {
            fprintf(stderr, "croupier-rules moves: '%s' is not a valid Dou Dizhu move\n", argv[3]);
            return 2;
        }
        for (int r = 0; r < SHED_NRANKS; r++) {
            int total = shed_counts_get(hand, r) + shed_counts_get(beat_counts, r);
            if (total > (r >= SHED_RANK_BJ ? 1 : 4)) {
                fprintf(stderr,
                        "croupier-rules moves: hand and move to beat hold %d cards of rank '%c' "
                        "together (one deck has %d)\n",
                        total, shed_rank_chars[r], r >= SHED_RANK_BJ ? 1 : 4);
                return 2;
            }
        }
    }
    ddz_move_t *moves = xreallocarray(NULL, DDZ_MOVES_MAX, sizeof *moves);
    int n = ddz_moves_generate(hand, argc == 4 ? &beat : NULL, moves, DDZ_MOVES_MAX);
    char buf[SHED_MAX_CARDS + 2];
    for (int i = 0; i < n; i++) {
        shed_counts_format(moves[i].counts, buf);
        puts(buf);
    }
    if (argc == 4)
        puts("pass");
    free(moves);
    if (n < 0 || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "croupier-rules moves: %s\n", n < 0 ? "too many moves" : "write error");
        return 1;
    }
    return 0;
}

int rules_trad_moves(int argc, char **argv)
{
    if (argc < 2)
        return trad_usage();
    if (!strcmp(argv[1], "doudizhu") || !strcmp(argv[1], "ddz"))
        return trad_moves_ddz(argc, argv);
    fprintf(stderr, "croupier-rules moves: unknown game '%s' (known: doudizhu)\n", argv[1]);
    return 2;
}
