/*
 * Unit tests for Dou Dizhu's move rules (games/traditional/ddz.h), against the action-space
 * oracle in shared/oracles/doudizhu.md and the rules in docs/rules/doudizhu.md.
 */
#include <check.h>
#include <errno.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddz.h"

static ddz_move_t *all_moves; /* every move of the full deck, leading */
static int all_n;

static shed_counts_t counts_of(const char *ranks)
{
    shed_counts_t c = 0;
    ck_assert_int_eq(shed_counts_parse(ranks, 1, &c, NULL, 0), 0);
    return c;
}

#define FULL_DECK "3333444455556666777788889999TTTTJJJJQQQQKKKKAAAA2222BR"

static void setup(void)
{
    all_moves = malloc(DDZ_MOVES_MAX * sizeof *all_moves);
    all_n = ddz_moves_generate(counts_of(FULL_DECK), NULL, all_moves, DDZ_MOVES_MAX);
}

static void teardown(void)
{
    free(all_moves);
}

static int cmp_move(const void *a, const void *b)
{
    const ddz_move_t *x = a, *y = b;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    if (x->counts != y->counts)
        return x->counts < y->counts ? -1 : 1;
    return 0;
}

/* Oracle: all 54 cards, leading: 27,471 non-pass move types. */
START_TEST(test_ddz_full_deck_has_27471_moves)
{
    ck_assert_int_eq(all_n, 27471);
}
END_TEST

/* Oracle: the per-type breakdown, including airplanes by number of trios. */
START_TEST(test_ddz_full_deck_breakdown_per_type)
{
    static const int want[DDZ_NTYPES] = {
        [DDZ_SOLO] = 15,
        [DDZ_PAIR] = 13,
        [DDZ_TRIO] = 13,
        [DDZ_TRIO_SOLO] = 182,
        [DDZ_TRIO_PAIR] = 156,
        [DDZ_SOLO_CHAIN] = 36,
        [DDZ_PAIR_CHAIN] = 52,
        [DDZ_TRIO_CHAIN] = 45,
        [DDZ_PLANE_SOLO] = 21822,
        [DDZ_PLANE_PAIR] = 2939,
        [DDZ_FOUR_TWO_SOLO] = 1326,
        [DDZ_FOUR_TWO_PAIR] = 858,
        [DDZ_BOMB] = 13,
        [DDZ_ROCKET] = 1,
    };
    int got[DDZ_NTYPES] = {0}, solo_wings[6] = {0}, pair_wings[6] = {0};
    for (int i = 0; i < all_n; i++) {
        got[all_moves[i].type]++;
        if (all_moves[i].type == DDZ_PLANE_SOLO)
            solo_wings[all_moves[i].len]++;
        if (all_moves[i].type == DDZ_PLANE_PAIR)
            pair_wings[all_moves[i].len]++;
    }
    for (int t = DDZ_SOLO; t < DDZ_NTYPES; t++)
        ck_assert_msg(got[t] == want[t], "%s: %d moves, oracle says %d", ddz_type_name(t), got[t],
                      want[t]);
    ck_assert_int_eq(got[DDZ_PASS], 0);
    ck_assert_int_eq(solo_wings[2], 968);
    ck_assert_int_eq(solo_wings[3], 3282);
    ck_assert_int_eq(solo_wings[4], 7184);
    ck_assert_int_eq(solo_wings[5], 10388);
    ck_assert_int_eq(pair_wings[2], 605);
    ck_assert_int_eq(pair_wings[3], 1200);
    ck_assert_int_eq(pair_wings[4], 1134);
}
END_TEST

/* The generator lists each card multiset at most once, and each classifies back to itself. */
START_TEST(test_ddz_moves_are_distinct_and_classify_back)
{
    ddz_move_t *sorted = malloc((size_t)all_n * sizeof *sorted);
    memcpy(sorted, all_moves, (size_t)all_n * sizeof *sorted);
    qsort(sorted, (size_t)all_n, sizeof *sorted, cmp_move);
    for (int i = 1; i < all_n; i++)
        ck_assert(sorted[i].counts != sorted[i - 1].counts);
    free(sorted);
    for (int i = 0; i < all_n; i++) {
        ddz_move_t c;
        ck_assert_int_eq(ddz_classify(all_moves[i].counts, &c), 0);
        ck_assert_int_eq(c.type, all_moves[i].type);
        ck_assert_int_eq(c.rank, all_moves[i].rank);
        ck_assert_int_eq(c.len, all_moves[i].len);
        ck_assert_int_eq(c.ncards, all_moves[i].ncards);
    }
}
END_TEST

static int type_of(const char *ranks)
{
    ddz_move_t m;
    if (ddz_classify(counts_of(ranks), &m) != 0)
        return -1;
    return m.type;
}

/* docs/rules/doudizhu.md "Combinations": one example of each type, and near misses. */
START_TEST(test_ddz_classify_examples)
{
    ck_assert_int_eq(type_of("R"), DDZ_SOLO);
    ck_assert_int_eq(type_of("22"), DDZ_PAIR);
    ck_assert_int_eq(type_of("BR"), DDZ_ROCKET);
    ck_assert_int_eq(type_of("7777"), DDZ_BOMB);
    ck_assert_int_eq(type_of("333B"), DDZ_TRIO_SOLO);
    ck_assert_int_eq(type_of("22233"), DDZ_TRIO_PAIR);
    ck_assert_int_eq(type_of("34567"), DDZ_SOLO_CHAIN);
    ck_assert_int_eq(type_of("3456789TJQKA"), DDZ_SOLO_CHAIN);
    ck_assert_int_eq(type_of("334455"), DDZ_PAIR_CHAIN);
    ck_assert_int_eq(type_of("333444"), DDZ_TRIO_CHAIN);
    ck_assert_int_eq(type_of("33344456"), DDZ_PLANE_SOLO);
    ck_assert_int_eq(type_of("33344455"), DDZ_PLANE_SOLO);     /* two 5s as two solos */
    ck_assert_int_eq(type_of("333444555777"), DDZ_PLANE_SOLO); /* a trio not next to it */
    ck_assert_int_eq(type_of("333444555222"), DDZ_PLANE_SOLO); /* 2s never chain */
    ck_assert_int_eq(type_of("333444555666"), DDZ_TRIO_CHAIN); /* never a plane + 666 */
    ck_assert_int_eq(type_of("3334445566"), DDZ_PLANE_PAIR);
    ck_assert_int_eq(type_of("333345"), DDZ_FOUR_TWO_SOLO);
    ck_assert_int_eq(type_of("333355"), DDZ_FOUR_TWO_SOLO);
    ck_assert_int_eq(type_of("33335566"), DDZ_FOUR_TWO_PAIR);
    /* not combinations */
    ck_assert_int_eq(type_of(""), -1);
    ck_assert_int_eq(type_of("34"), -1);
    ck_assert_int_eq(type_of("3456"), -1);  /* chain too short */
    ck_assert_int_eq(type_of("JQKA2"), -1); /* 2 in a chain */
    ck_assert_int_eq(type_of("3344"), -1);  /* two pairs only */
    ck_assert_int_eq(type_of("QQKKAA22"), -1);
    ck_assert_int_eq(type_of("AAA222"), -1); /* trio chain with 2s */
    ck_assert_int_eq(type_of("333BR"), -1);  /* rocket is never a kicker */
    ck_assert_int_eq(type_of("3333BR"), -1);
    ck_assert_int_eq(type_of("33334444"), -1); /* two pairs of one rank */
    ck_assert_int_eq(type_of("33335555"), -1);
    ck_assert_int_eq(type_of("3334445555"), -1);            /* pair wings of one rank */
    ck_assert_int_eq(type_of("3334446666"), -1);            /* four of a rank as solo wings */
    ck_assert_int_eq(type_of("333444555666777888999"), -1); /* more than 20 cards */
}
END_TEST

static bool beats(const char *a, const char *b)
{
    ddz_move_t ma, mb;
    ck_assert_int_eq(ddz_classify(counts_of(a), &ma), 0);
    ck_assert_int_eq(ddz_classify(counts_of(b), &mb), 0);
    return ddz_beats(&ma, &mb);
}

/* docs/rules/doudizhu.md "Beating": same type and length, higher main rank; bombs; rocket. */
START_TEST(test_ddz_beats_follows_type_length_rank_then_bombs)
{
    ck_assert(beats("4", "3"));
    ck_assert(!beats("3", "3"));
    ck_assert(beats("R", "B"));
    ck_assert(beats("B", "2"));
    ck_assert(!beats("44", "3"));
    ck_assert(beats("4445", "333A"));
    ck_assert(!beats("3335", "4446"));
    ck_assert(!beats("4445", "33366"));
    ck_assert(beats("45678", "34567"));
    ck_assert(!beats("456789", "34567")); /* different length */
    ck_assert(beats("3333", "TJQKA"));    /* bomb on anything */
    ck_assert(beats("4444", "3333"));
    ck_assert(!beats("3333", "4444"));
    ck_assert(beats("BR", "2222"));
    ck_assert(!beats("2222", "BR"));
    ck_assert(beats("44445566", "33337788"));
    ck_assert(!beats("444456", "33337788"));
    ck_assert(beats("44455567", "3334448Q"));
    ck_assert(!beats("44455567", "333444555678"));
}
END_TEST

/*
 * For random hands and every possible move to beat, the generator's answer equals the brute
 * force answer: the oracle moves that fit in the hand and beat the move (docs/rules, "Beating").
 */
START_TEST(test_ddz_generation_with_move_to_beat_matches_brute_force)
{
    ddz_move_t *got = malloc(DDZ_MOVES_MAX * sizeof *got);
    ddz_move_t *want = malloc(DDZ_MOVES_MAX * sizeof *want);
    ddz_move_t *fitting = malloc(DDZ_MOVES_MAX * sizeof *fitting);
    shed_rng_t rng;
    shed_rng_seed(&rng, 20261130);
    shed_card_t deck[54];
    for (int round = 0; round < 40; round++) {
        shed_deck_build(deck, 1, true);
        shed_shuffle_seeded(deck, 54, &rng);
        int size = 5 + (int)shed_rng_below(&rng, 16);
        shed_set_t hand = {{0, 0}};
        for (int i = 0; i < size; i++)
            shed_set_add(&hand, deck[i]);
        shed_counts_t hc = shed_set_counts(hand);
        int nfit = 0;
        for (int i = 0; i < all_n; i++) {
            bool fits = true;
            for (int r = 0; r < SHED_NRANKS && fits; r++)
                fits = shed_counts_get(all_moves[i].counts, r) <= shed_counts_get(hc, r);
            if (fits)
                fitting[nfit++] = all_moves[i];
        }
        for (int b = 0; b < all_n; b += 1 + (int)shed_rng_below(&rng, 40)) {
            const ddz_move_t *beat = &all_moves[b];
            int ng = ddz_moves_generate(hc, beat, got, DDZ_MOVES_MAX), nw = 0;
            ck_assert_int_ge(ng, 0);
            for (int i = 0; i < nfit; i++)
                if (ddz_beats(&fitting[i], beat))
                    want[nw++] = fitting[i];
            ck_assert_int_eq(ng, nw);
            qsort(got, (size_t)ng, sizeof *got, cmp_move);
            qsort(want, (size_t)nw, sizeof *want, cmp_move);
            for (int i = 0; i < ng; i++)
                ck_assert(got[i].counts == want[i].counts && got[i].type == want[i].type);
        }
        /* leading: exactly the oracle moves that fit */
        ck_assert_int_eq(ddz_moves_generate(hc, NULL, got, DDZ_MOVES_MAX), nfit);
    }
    free(got);
    free(want);
    free(fitting);
}
END_TEST

START_TEST(test_ddz_generation_reports_overflow)
{
    ddz_move_t few[10];
    ck_assert_int_eq(ddz_moves_generate(counts_of(FULL_DECK), NULL, few, 10), -ENOSPC);
    ck_assert_int_eq(ddz_moves_generate(counts_of("3"), NULL, few, 10), 1);
}
END_TEST

/* Runs croupier-rules and counts its output lines; returns the exit code. */
static int run_rules(const char *args, long *lines)
{
    const char *build = getenv("CROUPIER_BUILD");
    char cmd[512];
    ck_assert_ptr_nonnull(build);
    snprintf(cmd, sizeof cmd, "%s/tools/croupier-rules %s 2>/dev/null", build, args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    long n = 0;
    int ch;
    while ((ch = fgetc(p)) != EOF)
        n += ch == '\n';
    *lines = n;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_ddz_cli_prints_27471_lines_for_all_cards)
{
    long lines;
    ck_assert_int_eq(run_rules("moves doudizhu " FULL_DECK, &lines), 0);
    ck_assert_int_eq(lines, 27471);
    ck_assert_int_eq(run_rules("moves doudizhu 3456789 34567", &lines), 0);
    ck_assert_int_eq(lines, 3); /* 45678, 56789 and pass */
}
END_TEST

START_TEST(test_ddz_cli_bad_input_exits_2)
{
    long lines;
    ck_assert_int_eq(run_rules("moves doudizhu 33333", &lines), 2);
    ck_assert_int_eq(run_rules("moves doudizhu 34X", &lines), 2);
    ck_assert_int_eq(run_rules("moves doudizhu 345 34", &lines), 2);  /* not a combination */
    ck_assert_int_eq(run_rules("moves doudizhu 3333 33", &lines), 2); /* 6 threes */
    ck_assert_int_eq(run_rules("moves nosuchgame 3", &lines), 2);
    ck_assert_int_eq(run_rules("moves doudizhu", &lines), 2);
    ck_assert_int_eq(lines, 0);
}
END_TEST

static Suite *ddz_suite(void)
{
    Suite *s = suite_create("trad_ddz");
    TCase *tc = tcase_create("oracle");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_ddz_full_deck_has_27471_moves);
    tcase_add_test(tc, test_ddz_full_deck_breakdown_per_type);
    tcase_add_test(tc, test_ddz_moves_are_distinct_and_classify_back);
    suite_add_tcase(s, tc);
    tc = tcase_create("classify");
    tcase_add_test(tc, test_ddz_classify_examples);
    tcase_add_test(tc, test_ddz_beats_follows_type_length_rank_then_bombs);
    suite_add_tcase(s, tc);
    tc = tcase_create("generate");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ddz_generation_with_move_to_beat_matches_brute_force);
    tcase_add_test(tc, test_ddz_generation_reports_overflow);
    suite_add_tcase(s, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ddz_cli_prints_27471_lines_for_all_cards);
    tcase_add_test(tc, test_ddz_cli_bad_input_exits_2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ddz_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
