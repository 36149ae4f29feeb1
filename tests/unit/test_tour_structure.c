/* Unit tests for tournament/tour_structure.h: parsing, errors naming the field, the level
 * clock and TDA 23 (docs/tournaments.md, "Configuration", "The level clock"). */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tour_structure.h"

/* A small MTT: three levels, a break after level 2, a payout tier for 2..6 entrants. */
static const char *mtt_json =
    "{\"format\": \"mtt\", \"seats_per_table\": 9, \"starting_stack\": 20000,"
    " \"buy_in\": 100, \"fee\": 10, \"reentry\": true, \"max_reentries\": 2,"
    " \"late_registration_levels\": 2, \"min_entrants\": 2, \"max_entrants\": 10000,"
    " \"guarantee\": 50000,"
    " \"levels\": ["
    "  {\"small_blind\": 100, \"big_blind\": 200, \"duration_ms\": 600000},"
    "  {\"small_blind\": 200, \"big_blind\": 400, \"ante\": 400, \"big_blind_ante\": true,"
    "   \"duration_ms\": 600000},"
    "  {\"break\": true, \"duration_ms\": 300000},"
    "  {\"small_blind\": 300, \"big_blind\": 600, \"ante\": 600, \"big_blind_ante\": true,"
    "   \"duration_ms\": 600000}],"
    " \"payouts\": {\"percent_paid\": 12, \"tiers\": ["
    "  {\"min_entrants\": 2, \"max_entrants\": 6, \"shares_bp\": [10000]}]}}";

static tour_structure_t *parse_ok(const char *json)
{
    char err[256] = "";
    tour_structure_t *s = NULL;
    int rc = tour_structure_parse(json, strlen(json), &s, err, sizeof err);
    ck_assert_msg(rc == 0, "parse failed: %s", err);
    return s;
}

START_TEST(test_tour_structure_parses_every_field)
{
    tour_structure_t *s = parse_ok(mtt_json);
    ck_assert_int_eq(s->format, TOUR_FORMAT_MTT);
    ck_assert_uint_eq(s->seats_per_table, 9);
    ck_assert_int_eq(s->starting_stack, 20000);
    ck_assert_int_eq(s->buy_in, 100);
    ck_assert_int_eq(s->fee, 10);
    ck_assert(s->reentry);
    ck_assert_uint_eq(s->max_reentries, 2);
    ck_assert_uint_eq(s->late_reg_levels, 2);
    ck_assert_uint_eq(s->min_entrants, 2);
    ck_assert_uint_eq(s->max_entrants, 10000);
    ck_assert_int_eq(s->guarantee, 50000);
    ck_assert_uint_eq(s->nlevels, 4);
    ck_assert(s->levels[2].is_break);
    ck_assert_uint_eq(s->levels[2].number, 2);
    ck_assert_uint_eq(s->levels[3].number, 3);
    ck_assert(s->levels[1].big_blind_ante);
    ck_assert_int_eq(s->levels[1].ante, 400);
    ck_assert_uint_eq(s->payouts.percent_paid, 12);
    ck_assert_uint_eq(s->payouts.ntiers, 1);
    ck_assert_uint_eq(s->payouts.tiers[0].shares_bp[0], 10000);
    tour_structure_destroy(s);
    tour_structure_destroy(NULL);
}
END_TEST

/* Replaces the first occurrence of `from` in mtt_json by `to`, parses, expects -EINVAL and an
 * error containing `want`. */
static void expect_error(const char *from, const char *to, const char *want)
{
    const char *at = strstr(mtt_json, from);
    ck_assert_msg(at != NULL, "test bug: %s not in the sample", from);
    char buf[4096];
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - mtt_json), mtt_json, to, at + strlen(from));
    char err[256] = "";
    tour_structure_t *s = NULL;
    int rc = tour_structure_parse(buf, strlen(buf), &s, err, sizeof err);
    ck_assert_msg(rc == -EINVAL, "accepted: %s", buf);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err, want) != NULL, "error \"%s\" lacks \"%s\"", err, want);
}

START_TEST(test_tour_structure_bad_input_names_the_field)
{
    expect_error("\"mtt\"", "\"freezeout\"", "format");
    expect_error("\"seats_per_table\": 9", "\"seats_per_table\": 11", "seats_per_table");
    expect_error("\"seats_per_table\": 9", "\"seats_per_table\": 1", "seats_per_table");
    expect_error("\"starting_stack\": 20000", "\"starting_stack\": 0", "starting_stack");
    expect_error("\"buy_in\": 100", "\"buy_in\": -1", "buy_in");
    expect_error("\"buy_in\": 100", "\"buy_in\": 1.5", "buy_in: must be a whole number");
    expect_error("\"fee\": 10", "\"fe\": 10", "fe: unknown field");
    expect_error("\"max_reentries\": 2", "\"max_reentries\": 0", "max_reentries");
    expect_error("\"reentry\": true", "\"reentry\": 1", "reentry: must be true or false");
    expect_error("\"late_registration_levels\": 2", "\"late_registration_levels\": 4",
                 "late_registration_levels");
    expect_error("\"min_entrants\": 2", "\"min_entrants\": 20000", "min_entrants");
    expect_error("\"big_blind\": 200", "\"big_blind\": 50", "levels[0].big_blind");
    expect_error("\"small_blind\": 200, \"big_blind\": 400",
                 "\"small_blind\": 50, \"big_blind\": 150", "levels[1].big_blind: lower");
    expect_error("\"duration_ms\": 300000", "\"duration_ms\": 0", "levels[2].duration_ms");
    expect_error("{\"break\": true, \"duration_ms\": 300000}",
                 "{\"break\": true, \"duration_ms\": 300000, \"small_blind\": 1}", "levels[2]");
    expect_error("\"ante\": 400, \"big_blind_ante\": true", "\"big_blind_ante\": true",
                 "levels[1].ante");
    expect_error("[10000]", "[6000, 3000]", "payouts.tiers[0].shares_bp: sums to 9000");
    expect_error("[10000]", "[3000, 7000]", "shares_bp[1]: larger");
    expect_error("\"percent_paid\": 12", "\"percent_paid\": 0", "payouts.percent_paid");
    expect_error("\"levels\": [", "\"levels\": 3, \"x\": [", "x: unknown field");
    expect_error("\"guarantee\": 50000", "\"guarantee\": 1, \"guarantee\": 2", "not valid JSON");
    expect_error("\"payouts\"", "\"payout\"", "payout: unknown field");
}
END_TEST

START_TEST(test_tour_structure_sng_rules)
{
    const char *sng = "{\"format\": \"sng\", \"seats_per_table\": 9, \"starting_stack\": 1500,"
                      " \"buy_in\": 10, \"max_entrants\": 9, \"levels\": ["
                      " {\"small_blind\": 10, \"big_blind\": 20, \"duration_ms\": 300000}]}";
    tour_structure_t *s = parse_ok(sng);
    ck_assert_uint_eq(s->min_entrants, 9); /* a sit & go starts full */
    ck_assert_int_eq(s->fee, 0);
    ck_assert(!tour_structure_late_reg_open(s, 0));
    tour_structure_destroy(s);
    char err[256];
    tour_structure_t *bad = NULL;
    const char *re = "{\"format\": \"sng\", \"seats_per_table\": 9, \"starting_stack\": 1500,"
                     " \"buy_in\": 10, \"max_entrants\": 9, \"reentry\": true,"
                     " \"max_reentries\": 1, \"late_registration_levels\": 1, \"levels\": ["
                     " {\"small_blind\": 10, \"big_blind\": 20, \"duration_ms\": 300000}]}";
    ck_assert_int_eq(tour_structure_parse(re, strlen(re), &bad, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "reentry"));
}
END_TEST

/* Every prefix of a valid structure is refused with a message, never a crash (run under ASan
 * in the sanitizer build). */
START_TEST(test_tour_structure_truncated_input_is_refused)
{
    size_t len = strlen(mtt_json);
    for (size_t n = 0; n < len; n++) {
        char err[256] = "";
        tour_structure_t *s = NULL;
        ck_assert_int_eq(tour_structure_parse(mtt_json, n, &s, err, sizeof err), -EINVAL);
        ck_assert(err[0] != '\0');
    }
}
END_TEST

START_TEST(test_tour_structure_level_clock_boundaries)
{
    tour_structure_t *s = parse_ok(mtt_json);
    tour_clock_t c;
    ck_assert_int_eq(tour_structure_level_at(s, -1, &c), -EINVAL);
    ck_assert_int_eq(tour_structure_level_at(s, 0, &c), 0);
    ck_assert_uint_eq(c.index, 0);
    ck_assert_int_eq(c.ms_to_next, 600000);
    ck_assert_int_eq(tour_structure_level_at(s, 599999, &c), 0);
    ck_assert_uint_eq(c.index, 0);
    ck_assert_int_eq(c.ms_to_next, 1);
    ck_assert_int_eq(tour_structure_level_at(s, 600000, &c), 0);
    ck_assert_uint_eq(c.index, 1);
    ck_assert_int_eq(tour_structure_level_at(s, 1200000, &c), 0);
    ck_assert(c.level->is_break);
    ck_assert_int_eq(c.ms_to_next, 300000);
    ck_assert_int_eq(tour_structure_level_at(s, 1500000, &c), 0);
    ck_assert_uint_eq(c.level->number, 3);
    ck_assert_int_eq(c.ms_to_next, -1);
    ck_assert_int_eq(tour_structure_level_at(s, INT64_MAX / 2, &c), 0);
    ck_assert_uint_eq(c.index, 3); /* the last level lasts */
    /* Late registration: through level 2, closed in the break after it. */
    ck_assert(tour_structure_late_reg_open(s, 0));
    ck_assert(tour_structure_late_reg_open(s, 1199999));
    ck_assert(!tour_structure_late_reg_open(s, 1200000));
    tour_structure_destroy(s);
}
END_TEST

/* TDA 23: a hand keeps the blinds of the level in force when it started. */
START_TEST(test_tour_structure_level_change_applies_from_next_hand)
{
    tour_structure_t *s = parse_ok(mtt_json);
    tour_blinds_t b;
    /* A hand started 1 ms before level 2 plays level 1 to its end. */
    ck_assert_int_eq(tour_structure_hand_blinds(s, 599999, &b), 0);
    ck_assert_uint_eq(b.level, 1);
    ck_assert_int_eq(b.big_blind, 200);
    ck_assert_int_eq(b.ante, 0);
    /* The next hand, started once level 2 is in force, gets level 2. */
    ck_assert_int_eq(tour_structure_hand_blinds(s, 600000, &b), 0);
    ck_assert_uint_eq(b.level, 2);
    ck_assert_int_eq(b.small_blind, 200);
    ck_assert_int_eq(b.big_blind, 400);
    ck_assert_int_eq(b.ante, 400);
    ck_assert(b.big_blind_ante);
    /* No hand starts during a break. */
    ck_assert_int_eq(tour_structure_hand_blinds(s, 1300000, &b), -EAGAIN);
    ck_assert_int_eq(tour_structure_hand_blinds(s, 1500000, &b), 0);
    ck_assert_uint_eq(b.level, 3);
    tour_structure_destroy(s);
}
END_TEST

static uint64_t seed = 0x51c0u;

static uint64_t rnd(uint64_t n)
{
    uint64_t z = (seed += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (z ^ (z >> 31)) % n;
}

/* Property: over random schedules (levels and breaks of random lengths), the step in force at
 * any time is the one whose span holds it, ms_to_next reaches the next step exactly, and a hand
 * gets the blinds of the level in force at its start (never a break's). */
START_TEST(test_tour_structure_level_clock_matches_the_schedule)
{
    static char buf[65536];
    static int64_t start[64];
    for (int k = 0; k < 500; k++) {
        size_t nl = 1 + rnd(40), len = 0;
        int64_t bb = 2, t = 0;
        bool prev_break = true; /* no break first, for simplicity of the generator */
        len += (size_t)snprintf(buf + len, sizeof buf - len,
                                "{\"format\": \"mtt\", \"seats_per_table\": 9, "
                                "\"starting_stack\": 1000, \"buy_in\": 10, "
                                "\"max_entrants\": 100, \"levels\": [");
        int breaks[64] = {0};
        for (size_t i = 0; i < nl; i++) {
            int64_t d = 1 + (int64_t)rnd(k % 2 ? 5 : 1000000);
            start[i] = t;
            t += d;
            bool brk = !prev_break && i + 1 < nl && rnd(4) == 0;
            breaks[i] = brk;
            if (brk)
                len += (size_t)snprintf(buf + len, sizeof buf - len,
                                        "%s{\"break\": true, \"duration_ms\": %lld}", i ? "," : "",
                                        (long long)d);
            else
                len +=
                    (size_t)snprintf(buf + len, sizeof buf - len,
                                     "%s{\"small_blind\": %lld, \"big_blind\": %lld, "
                                     "\"duration_ms\": %lld}",
                                     i ? "," : "", (long long)bb / 2, (long long)bb, (long long)d);
            if (!brk)
                bb += (int64_t)rnd(3);
            prev_break = brk;
        }
        start[nl] = t;
        len += (size_t)snprintf(buf + len, sizeof buf - len, "]}");
        tour_structure_t *s = parse_ok(buf);
        ck_assert_uint_eq(s->nlevels, nl);
        for (int q = 0; q < 50; q++) {
            int64_t at = (int64_t)rnd((uint64_t)t + 10);
            tour_clock_t c;
            tour_blinds_t b;
            if (tour_structure_level_at(s, at, &c) != 0)
                ck_abort_msg("level_at refused %lld", (long long)at);
            size_t i = c.index;
            if (!(start[i] <= at && (i + 1 == nl || at < start[i + 1])))
                ck_abort_msg("step %zu does not hold %lld", i, (long long)at);
            if (i + 1 < nl && c.ms_to_next != start[i + 1] - at)
                ck_abort_msg("ms_to_next %lld at %lld", (long long)c.ms_to_next, (long long)at);
            if (i + 1 == nl && c.ms_to_next != -1)
                ck_abort_msg("last step must not end");
            int rc = tour_structure_hand_blinds(s, at, &b);
            if (breaks[i] ? rc != -EAGAIN
                          : (rc != 0 || b.big_blind != s->levels[i].big_blind ||
                             b.level != s->levels[i].number))
                ck_abort_msg("hand blinds at %lld", (long long)at);
        }
        tour_structure_destroy(s);
    }
}
END_TEST

/* Item prizes (docs/tournaments.md "Items"): a place's item, alone or beside chips; bad item
 * strings refused with the field named. */
START_TEST(test_tour_structure_items_by_place)
{
    static const char *ok = "{\"format\": \"match\", \"game\": \"doudizhu\", \"buy_in\": 100,"
                            " \"min_entrants\": 9, \"max_entrants\": 9,"
                            " \"payouts\": {\"percent_paid\": 34, \"items\": ["
                            "  {\"place\": 1, \"item\": \"trophy:gold\"},"
                            "  {\"place\": 2, \"item\": \"trophy:silver\"},"
                            "  {\"place\": 5, \"item\": \"ticket:final-2027\"}]},"
                            " \"stages\": [{\"format\": \"fixed\", \"seats\": 3}]}";
    tour_structure_t *s = parse_ok(ok);
    ck_assert_uint_eq(s->payouts.nitems, 3);
    ck_assert_str_eq(tour_payout_item(&s->payouts, 1), "trophy:gold");
    ck_assert_str_eq(tour_payout_item(&s->payouts, 2), "trophy:silver");
    ck_assert_ptr_null(tour_payout_item(&s->payouts, 3));
    ck_assert_ptr_null(tour_payout_item(&s->payouts, 4));
    /* Place 5 gets an item alone: 34 % of 9 pays 4 places in chips. */
    ck_assert_uint_eq(tour_payout_places(&s->payouts, 9), 4);
    ck_assert_str_eq(tour_payout_item(&s->payouts, 5), "ticket:final-2027");
    ck_assert_ptr_null(tour_payout_item(&s->payouts, 0));
    tour_structure_destroy(s);
    /* A hold'em structure takes items too. */
    s = parse_ok("{\"format\": \"sng\", \"seats_per_table\": 2, \"starting_stack\": 100,"
                 " \"buy_in\": 10, \"max_entrants\": 2,"
                 " \"levels\": [{\"small_blind\": 1, \"big_blind\": 2, \"duration_ms\": 1000}],"
                 " \"payouts\": {\"items\": [{\"place\": 1, \"item\": \"A-z_0.9:x\"}]}}");
    ck_assert_str_eq(tour_payout_item(&s->payouts, 1), "A-z_0.9:x");
    tour_structure_destroy(s);

    char long_item[80];
    memset(long_item, 'x', 65);
    long_item[65] = '\0';
    char with_long[160];
    snprintf(with_long, sizeof with_long, "{\"place\": 1, \"item\": \"%s\"}", long_item);
    static const char *from =
        "{\"min_entrants\": 2, \"max_entrants\": 6, \"shares_bp\": [10000]}]}";
    /* The sample's tiers close with "]}": items go after them. */
    const struct {
        const char *items, *want;
    } bad[] = {
        {"{\"place\": 1, \"item\": \"\"}", "payouts.items[0].item: 0 characters, must be 1..64"},
        {with_long, "payouts.items[0].item: 65 characters, must be 1..64"},
        {"{\"place\": 1, \"item\": \"gold trophy\"}", "payouts.items[0].item: only letters"},
        {"{\"place\": 1, \"item\": \"a\\\"b\"}", "payouts.items[0].item: only letters"},
        {"{\"place\": 1, \"item\": \"\u91d1\u676f\"}", "payouts.items[0].item: only letters"},
        {"{\"place\": 1, \"item\": 7}", "payouts.items[0].item: must be a string"},
        {"{\"place\": 0, \"item\": \"a\"}", "payouts.items[0].place"},
        {"{\"item\": \"a\"}", "payouts.items[0].place"},
        {"{\"place\": 2, \"item\": \"a\"}, {\"place\": 2, \"item\": \"b\"}",
         "payouts.items[1].place: must be above"},
        {"{\"place\": 1, \"item\": \"a\", \"count\": 2}", "payouts.items[0].count: unknown field"},
        {"7", "payouts.items[0]: must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char repl[512];
        snprintf(repl, sizeof repl,
                 "{\"min_entrants\": 2, \"max_entrants\": 6, \"shares_bp\": "
                 "[10000]}], \"items\": [%s]}",
                 bad[i].items);
        expect_error(from, repl, bad[i].want);
    }
    expect_error(from,
                 "{\"min_entrants\": 2, \"max_entrants\": 6, \"shares_bp\": [10000]}], "
                 "\"items\": {}}",
                 "payouts.items: must be an array");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tour_structure");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_tour_structure_parses_every_field);
    tcase_add_test(tc, test_tour_structure_bad_input_names_the_field);
    tcase_add_test(tc, test_tour_structure_sng_rules);
    tcase_add_test(tc, test_tour_structure_truncated_input_is_refused);
    tcase_add_test(tc, test_tour_structure_items_by_place);
    suite_add_tcase(s, tc);
    tc = tcase_create("clock");
    tcase_add_test(tc, test_tour_structure_level_clock_boundaries);
    tcase_add_test(tc, test_tour_structure_level_change_applies_from_next_hand);
    tcase_add_test(tc, test_tour_structure_level_clock_matches_the_schedule);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
