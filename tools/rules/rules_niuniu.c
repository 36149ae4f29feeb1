/*
 * croupier-rules Niu Niu subcommands (docs/rules/niuniu.md, "Hand categories", "Ties"):
 *   niuniu eval CARDS                the category, the split and the value of five cards
 *   niuniu compare HAND_A HAND_B     which hand is stronger: A, B or tie
 * eval prints one line, "CATEGORY NIU/REST VALUE": the three cards of the niu, a slash, the
 * other two, then their points (0..9, 0 = niu niu); "-" for the split and the value of a hand
 * without a niu ("no_niu - -", or a five small without one). Bad input: one line on stderr,
 * exit code 2. Cards are read with the shared parser (common/cardtext.h).
 */
#include <stdio.h>
#include <string.h>

#include "cardtext.h"
#include "niuniu.h"
#include "rules_cmds.h"

static int rules_niuniu_usage(void)
{
    fprintf(stderr, "usage: croupier-rules niuniu eval CARDS | compare HAND_A HAND_B   "
                    "(five cards each, e.g. KsQhTc9d8s)\n");
    return 2;
}

/* Parses and evaluates five distinct cards; prints the error and returns -1 otherwise. */
static int rules_niuniu_hand(const char *cmd, const char *text, niuniu_hand_t *out)
{
    uint8_t c[NIUNIU_HAND_CARDS];
    char why[128];
    int rc = cardtext_parse_hand(text, c, NIUNIU_HAND_CARDS, why, sizeof why);
    if (rc == 0 && niuniu_eval(c, NIUNIU_HAND_CARDS, out) != 0) {
        snprintf(why, sizeof why, "the rules refuse the hand");
        rc = -1;
    }
    if (rc != 0) {
        fprintf(stderr,
                "croupier-rules niuniu %s: '%s' is not five distinct cards like KsQhTc9d8s: %s\n",
                cmd, text, why);
        return -1;
    }
    return 0;
}

static int rules_niuniu(int argc, char **argv)
{
    niuniu_hand_t a, b;
    if (argc == 3 && !strcmp(argv[1], "eval")) {
        if (rules_niuniu_hand("eval", argv[2], &a) != 0)
            return 2;
        char niu[8], rest[8];
        if (a.has_niu && cardtext_format(a.niu, 3, niu, sizeof niu) > 0 &&
            cardtext_format(a.rest, 2, rest, sizeof rest) > 0)
            printf("%s %s/%s %d\n", niuniu_category_name(a.category), niu, rest, a.points);
        else
            printf("%s - -\n", niuniu_category_name(a.category));
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "compare")) {
        if (rules_niuniu_hand("compare", argv[2], &a) != 0 ||
            rules_niuniu_hand("compare", argv[3], &b) != 0)
            return 2;
        int c = niuniu_compare(&a, &b);
        printf("%s\n", c > 0 ? "A" : c < 0 ? "B" : "tie");
        return 0;
    }
    return rules_niuniu_usage();
}

/* croupier-rules commands of this file (named in the game's meson.build: rules_commands). */
const rules_cmd_t rules_cmd_niuniu = {
    "niuniu", "niuniu eval CARDS | compare HAND_A HAND_B   Niu Niu hands, e.g. KsQhTc9d8s",
    rules_niuniu};
