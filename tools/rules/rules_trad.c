/*
 * croupier-rules moves -- every legal move of a shedding-game hand, one per line.
 *
 *     croupier-rules moves <game> [--<option>...] <hand> [<move-to-beat>]
 *
 * doudizhu, runfast: cards by rank, 3456789TJQKA2 (plus B / R for the black / red joker in Dou
 *   Dizhu), in any order; moves printed as sorted rank strings (e.g. 33344455566B).
 * bigtwo, guandan: cards as rank + suit (d c h s), e.g. 3d4sTh; jokers B / R; in Guandan a card
 *   written twice is both copies (two decks). Moves printed the same way. Guandan is read at
 *   level 2 (the hearts 2s are wild).
 * With a move to beat, the moves that beat it are printed and then "pass". Bad input: a message
 * on stderr and exit code 2. Dou Dizhu with all 54 cards and nothing to beat prints 27,471 lines.
 *
 * Options switch on the rule variants of shed_game.h (SHED_OPT_*), by name: runfast
 * --report-single (the position then has the next player holding one card, so singles are
 * limited to the highest), --four-with-two, --four-with-three, --bomb-pays (no effect on the
 * moves); guandan --a-three-fails (none on the moves either). An option the game does not have
 * is refused (exit code 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddz.h"
#include "rules_cmds.h"
#include "shed_game.h"
#include "xmalloc.h"

static int trad_usage(void)
{
    fprintf(stderr, "usage: croupier-rules moves <game> [--<option>...] <hand> [<move-to-beat>]\n"
                    "  games: doudizhu, runfast (cards by rank: 3456789TJQKA2, B, R),\n"
                    "         bigtwo, guandan (rank + suit: 3d 4c 5h 6s ..., jokers B R)\n"
                    "  options: runfast --report-single --four-with-two --four-with-three\n"
                    "           --bomb-pays; guandan --a-three-fails\n");
    return 2;
}

/* Dou Dizhu: parse, check, generate, print. */
static int trad_moves_ddz(int argc, char **argv)
{
    char err[128];
    shed_counts_t hand, beat_counts = 0;
    ddz_move_t beat = {0};
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

/*
 * Reads cards for the other games into *out: rank strings (runfast: suits chosen from the
 * game's deck, lowest first) or rank+suit pairs (bigtwo; guandan, where a second copy of a
 * card is the other deck's). `taken` holds cards already used (the hand, when reading the
 * move to beat). Returns 0 or -1 with a message in err.
 */
static int trad_parse(const char *game, const char *text, shed_set_t deck, shed_set_t taken,
                      shed_set_t *out, char *err, size_t errlen)
{
    shed_set_t s = {{0, 0}};
    bool suited = strcmp(game, "runfast") != 0;
    for (const char *p = text; *p;) {
        if (*p == ' ' || *p == ',') {
            p++;
            continue;
        }
        int r = shed_rank_from_char(*p);
        if (r < 0) {
            snprintf(err, errlen, "'%c' is not a rank (3456789TJQKA2, B, R)", *p);
            return -1;
        }
        int suit = -1;
        p++;
        if (suited && r < SHED_RANK_BJ) {
            const char *q = *p ? strchr(shed_suit_chars, *p) : NULL;
            if (q == NULL) {
                snprintf(err, errlen, "card '%c' needs a suit d, c, h or s", shed_rank_chars[r]);
                return -1;
            }
            suit = (int)(q - shed_suit_chars);
            p++;
        }
        bool placed = false;
        for (int d = 0; d < 2 && !placed; d++)
            for (int su = 0; su < 4 && !placed; su++) {
                if (suit >= 0 && su != suit)
                    continue;
                shed_card_t c = shed_card_make(d, r, r >= SHED_RANK_BJ ? 0 : su);
                if (shed_set_has(deck, c) && !shed_set_has(s, c) && !shed_set_has(taken, c)) {
                    shed_set_add(&s, c);
                    placed = true;
                }
            }
        if (!placed) {
            snprintf(err, errlen, "no more '%c%s' in the %s deck", shed_rank_chars[r],
                     suit >= 0 ? (char[2]){shed_suit_chars[suit], 0} : "", game);
            return -1;
        }
    }
    *out = s;
    return 0;
}

/* Writes a play: a rank string for runfast, rank+suit pairs otherwise. */
static void trad_format(const char *game, shed_set_t s, char *buf)
{
    if (!strcmp(game, "runfast")) {
        shed_counts_format(shed_set_counts(s), buf);
        return;
    }
    shed_card_t list[SHED_MAX_CARDS];
    int n = shed_set_list(s, list);
    /* rank order, both decks together */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && list[j] % 64 < list[j - 1] % 64; j--) {
            shed_card_t t = list[j];
            list[j] = list[j - 1];
            list[j - 1] = t;
        }
    char *p = buf;
    for (int i = 0; i < n; i++) {
        int r = shed_card_rank(list[i]);
        *p++ = shed_rank_chars[r];
        if (r < SHED_RANK_BJ)
            *p++ = shed_suit_chars[shed_card_suit(list[i])];
    }
    *p = '\0';
}

/* Run Fast, Big Two, Guandan: through the state machine's position set-up and move lister,
 * under the SHED_OPT_* flags `opts` (already checked against the game). */
static int trad_moves_shed(const shed_rules_t *rules, unsigned opts, int argc, char **argv)
{
    const char *game = argv[1];
    char err[160];
    shed_config_t cfg = {.base_stake = 1, .rake_permille = 0, .options = opts};
    shed_game_t *g = shed_game_create(rules, &cfg);
    int rc = 2;
    /* the game's deck, as dealt */
    shed_game_deal_seeded(g, 1);
    shed_set_t deck = shed_game_extra(g), hand, beat = {{0, 0}};
    for (int s = 0; s < shed_rules_seats(rules); s++)
        deck = shed_set_union(deck, shed_game_hand(g, s));
    if (trad_parse(game, argv[2], deck, beat, &hand, err, sizeof err) != 0) {
        fprintf(stderr, "croupier-rules moves: bad hand '%s': %s\n", argv[2], err);
        goto fail_input;
    }
    if (shed_set_empty(hand)) {
        fprintf(stderr, "croupier-rules moves: the hand is empty\n");
        goto fail_input;
    }
    if (argc == 4 && trad_parse(game, argv[3], deck, hand, &beat, err, sizeof err) != 0) {
        fprintf(stderr, "croupier-rules moves: bad move to beat '%s': %s\n", argv[3], err);
        goto fail_input;
    }
    if (argc == 4 && shed_set_empty(beat)) {
        fprintf(stderr, "croupier-rules moves: the move to beat is empty\n");
        goto fail_input;
    }
    if (shed_game_setup_position(g, 0, hand, beat) != 0) {
        fprintf(stderr, "croupier-rules moves: '%s' is not a valid %s move\n", argv[3], game);
        goto fail_input;
    }
    if (opts & SHED_OPT_RF_REPORT_SINGLE) {
        /* the next player holds one card: the first of the deck nobody else has */
        shed_set_t rest = shed_set_minus(shed_set_minus(deck, hand), beat), one = {{0, 0}};
        shed_card_t list[SHED_MAX_CARDS];
        if (shed_set_list(rest, list) == 0) {
            fprintf(stderr, "croupier-rules moves: no card left for the next player\n");
            goto fail_input;
        }
        shed_set_add(&one, list[0]);
        if (shed_game_setup_hand(g, 1, one) != 0) {
            fprintf(stderr, "croupier-rules moves: cannot give the next player one card\n");
            goto fail_input;
        }
    }
    int cap = 1 << 16;
    shed_set_t *plays = xreallocarray(NULL, (size_t)cap, sizeof *plays);
    int n = shed_game_legal_plays(g, plays, cap);
    char buf[3 * SHED_MAX_CARDS + 1];
    for (int i = 0; i < n; i++) {
        trad_format(game, plays[i], buf);
        puts(buf);
    }
    if (argc == 4)
        puts("pass");
    free(plays);
    rc = 0;
    if (n < 0 || fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "croupier-rules moves: %s\n", n < 0 ? "too many moves" : "write error");
        rc = 1;
    }
fail_input:
    shed_game_destroy(g);
    return rc;
}

int rules_trad_moves(int argc, char **argv)
{
    if (argc < 3)
        return trad_usage();
    const char *game = argv[1];
    bool ddz = !strcmp(game, "doudizhu") || !strcmp(game, "ddz");
    const shed_rules_t *rules = shed_rules_find(ddz ? "doudizhu" : game);
    if (rules == NULL) {
        fprintf(stderr,
                "croupier-rules moves: unknown game '%s' (doudizhu, runfast, bigtwo, guandan)\n",
                game);
        return 2;
    }
    /* "--name" arguments are rule options; the others stay in order (subcommand, game, ...) */
    char *pos[4] = {argv[0], argv[1], NULL, NULL};
    int npos = 2;
    unsigned opts = 0;
    for (int i = 2; i < argc; i++) {
        if (!strncmp(argv[i], "--", 2)) {
            unsigned f = shed_option_from_name(argv[i] + 2);
            if (f == 0 || (f & ~shed_rules_options(rules)) != 0) {
                fprintf(stderr,
                        "croupier-rules moves: '%s' is no %s option (runfast: --report-single, "
                        "--four-with-two, --four-with-three, --bomb-pays; guandan: "
                        "--a-three-fails)\n",
                        argv[i], shed_rules_name(rules));
                return 2;
            }
            opts |= f;
        } else if (npos < 4) {
            pos[npos++] = argv[i];
        } else {
            return trad_usage();
        }
    }
    if (npos < 3)
        return trad_usage();
    if (ddz)
        return trad_moves_ddz(npos, pos);
    return trad_moves_shed(rules, opts, npos, pos);
}

/* croupier-rules commands of this file (named in the game's meson.build: rules_commands). */
const rules_cmd_t rules_cmd_moves = {"moves", "moves <game> [--option...] <hand> [<move-to-beat>]   list every legal move", rules_trad_moves};
