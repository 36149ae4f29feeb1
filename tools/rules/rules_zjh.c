/*
 * croupier-rules Zha Jin Hua subcommands (docs/rules/zhajinhua.md, "Hand ranking"):
 *   zhajinhua rank CARDS              the category and the comparable value of three cards
 *   zhajinhua compare HAND_A HAND_B   which hand wins: A, B or tie (the 2-3-5 rule applied)
 * Bad input: one line on stderr saying which card is wrong and why, exit code 2. Cards are read
 * with the shared parser (common/cardtext.h).
 */
#include <stdio.h>
#include <string.h>

#include "cardtext.h"
#include "rules_cmds.h"
#include "zjh.h"

static int rules_zjh_usage(void)
{
    fprintf(stderr, "usage: croupier-rules zhajinhua rank CARDS | compare HAND_A HAND_B   "
                    "(three cards each, e.g. AsKd2c)\n");
    return 2;
}

/* Parses three distinct cards into out; prints the error and returns -1 otherwise. */
static int rules_zjh_hand(const char *cmd, const char *text, uint8_t out[ZJH_HAND_CARDS])
{
    char why[128];
    if (cardtext_parse_hand(text, out, ZJH_HAND_CARDS, why, sizeof why) != 0) {
        fprintf(stderr,
                "croupier-rules zhajinhua %s: '%s' is not three distinct cards like AsKd2c: %s\n",
                cmd, text, why);
        return -1;
    }
    return 0;
}

int rules_zjh(int argc, char **argv)
{
    uint8_t a[ZJH_HAND_CARDS], b[ZJH_HAND_CARDS];
    if (argc == 3 && !strcmp(argv[1], "rank")) {
        if (rules_zjh_hand("rank", argv[2], a) != 0)
            return 2;
        zjh_rank_t r = zjh_rank(a);
        printf("%s %d\n", zjh_category_name(r.category), (int)r.value);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "compare")) {
        if (rules_zjh_hand("compare", argv[2], a) != 0 ||
            rules_zjh_hand("compare", argv[3], b) != 0)
            return 2;
        int c = zjh_compare(a, b);
        printf("%s\n", c > 0 ? "A" : c < 0 ? "B" : "tie");
        return 0;
    }
    return rules_zjh_usage();
}

/* croupier-rules commands of this file (named in the game's meson.build: rules_commands). */
const rules_cmd_t rules_cmd_zhajinhua = {
    "zhajinhua", "zhajinhua rank CARDS | compare HAND_A HAND_B   Zha Jin Hua hands, e.g. AsKd2c",
    rules_zjh};
