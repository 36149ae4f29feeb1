/* Unit tests for tournament/match_json.h: a stage of every format saved mid-play and loaded back
 * gives the same text and plays on exactly like the original; operator settings with their
 * defaults; malformed or inconsistent JSON refused with a sentence, never a crash (also under
 * random byte mutations). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "match_fixed.h"
#include "match_json.h"
#include "match_rising.h"
#include "match_swiss.h"

#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #c);                             \
    } while (0)

static match_stage_t *make(const match_stage_config_t *c, uint32_t n, uint64_t seed)
{
    uint64_t *ids = malloc(n * sizeof *ids);
    int64_t *sc = malloc(n * sizeof *sc);
    for (uint32_t i = 0; i < n; i++) {
        ids[i] = 100 + 3 * i;
        sc[i] = 1000 - (int64_t)i;
    }
    match_stage_t *st = NULL;
    ck_assert_int_eq(match_stage_create(c, ids, sc, n, tour_rng_splitmix64, &seed, &st), 0);
    free(ids);
    free(sc);
    return st;
}

static match_stage_t *reload(const match_stage_t *st)
{
    char *s = match_stage_to_json(st);
    char err[256] = "";
    match_stage_t *back = NULL;
    ck_assert_msg(match_stage_from_json(s, strlen(s), &back, err, sizeof err) == 0, "%s", err);
    char *again = match_stage_to_json(back);
    ck_assert_str_eq(s, again);
    free(s);
    free(again);
    return back;
}

/* One step of a rising stage: the first table in play ends its deal, then the pairing. */
static void rising_step(match_stage_t *st, uint64_t *seed, int64_t now)
{
    for (uint32_t t = 0; t < st->ntables; t++)
        if (st->tables[t].active) {
            int64_t res[3] = {-(int64_t)(t % 7), 0, (int64_t)(t % 7)};
            ck_assert_int_eq(
                match_rising_deal_end(st, t + 1, st->tables[t].deal, res, now, NULL, NULL), 0);
            break;
        }
    if (!st->over)
        ck_assert_int_eq(match_rising_pair(st, now, tour_rng_splitmix64, seed,
                                           (match_new_table_t[40]){{0}}, 40, &(size_t){0}, NULL, 0,
                                           NULL),
                         0);
}

/* A rising stage saved after some deals plays on identically after a reload. */
START_TEST(test_match_json_rising_round_trip_plays_on_identically)
{
    match_stage_config_t c = match_stage_config_default(MATCH_RISING, 3);
    c.advance = 6;
    c.growth_ms = 500;
    match_stage_t *a = make(&c, 50, 1);
    uint64_t seed = 99;
    ck_assert_int_eq(match_rising_pair(a, 0, tour_rng_splitmix64, &seed,
                                       (match_new_table_t[20]){{0}}, 20, &(size_t){0}, NULL, 0,
                                       NULL),
                     0);
    ck_assert_int_eq(match_stage_set_absent(a, 103, true), 0);
    for (int k = 0; k < 15; k++)
        rising_step(a, &seed, k * 100);
    match_stage_t *b = reload(a);
    uint64_t seed_b = seed;
    for (int k = 15; k < 400 && !a->over; k++) {
        rising_step(a, &seed, k * 100);
        rising_step(b, &seed_b, k * 100);
    }
    ck_assert(a->over);
    char *sa = match_stage_to_json(a), *sb = match_stage_to_json(b);
    ck_assert_str_eq(sa, sb);
    free(sa);
    free(sb);
    match_stage_t *c2 = reload(a); /* a stage over loads too */
    match_stage_destroy(c2);
    match_stage_destroy(a);
    match_stage_destroy(b);
}
END_TEST

/* Fixed mid-round (some tables done) and Swiss mid-stage (history, match points) round trips. */
START_TEST(test_match_json_fixed_and_swiss_round_trip)
{
    uint64_t seed = 5;
    match_stage_config_t f = match_stage_config_default(MATCH_FIXED, 3);
    match_stage_t *st = make(&f, 18, 2);
    match_new_table_t t[8];
    size_t nt;
    bool over;
    ck_assert_int_eq(match_fixed_seat_round(st, tour_rng_splitmix64, &seed, t, 8, &nt), 0);
    int64_t res[4] = {1, 0, -1, 0};
    for (uint32_t d = 1; d <= 3; d++)
        ck_assert_int_eq(match_fixed_deal_end(st, 1, d, res, &over, NULL, NULL), 0);
    ck_assert_int_eq(match_fixed_deal_end(st, 2, 1, res, &over, NULL, NULL), 0);
    match_stage_t *b = reload(st);
    for (uint32_t s3 = 0; s3 < 3; s3++) {
        int64_t i = match_stage_find(b, t[0].player[s3]);
        ck_assert_uint_ne(b->players[i].round_place, 0);
        ck_assert_uint_eq(b->players[i].round_place, st->players[i].round_place);
    }
    for (size_t j = 1; j < nt; j++)
        for (uint32_t d = b->tables[j].deals_done + 1; d <= 3; d++) {
            ck_assert_int_eq(match_fixed_deal_end(st, t[j].table, d, res, &over, NULL, NULL), 0);
            ck_assert_int_eq(match_fixed_deal_end(b, t[j].table, d, res, &over, NULL, NULL), 0);
        }
    ck_assert(over);
    ck_assert_uint_eq(b->remaining, 9);
    char *x = match_stage_to_json(st), *y = match_stage_to_json(b);
    ck_assert_str_eq(x, y);
    free(x);
    free(y);
    match_stage_destroy(st);
    match_stage_destroy(b);

    match_stage_config_t s = match_stage_config_default(MATCH_SWISS, 4);
    s.deals_per_round = 1;
    s.duplicate = true;
    st = make(&s, 10, 3);
    uint64_t byes[3];
    size_t nb;
    for (int r = 0; r < 2; r++) {
        ck_assert_int_eq(
            match_swiss_seat_round(st, tour_rng_splitmix64, &seed, t, 8, &nt, byes, 3, &nb), 0);
        int64_t g[4] = {2, -2, 2, -2};
        for (size_t j = 0; j < nt; j++)
            ck_assert_int_eq(match_swiss_deal_end(st, t[j].table, 1, g, &over), 0);
    }
    ck_assert_int_eq(
        match_swiss_seat_round(st, tour_rng_splitmix64, &seed, t, 8, &nt, byes, 3, &nb), 0);
    b = reload(st);
    ck_assert_uint_eq(b->round_seed, st->round_seed);
    for (uint32_t i = 0; i < st->n; i++)
        ck_assert_int_eq(match_swiss_buchholz(b, i), match_swiss_buchholz(st, i));
    match_stage_destroy(st);
    match_stage_destroy(b);
}
END_TEST

START_TEST(test_match_json_config_defaults_and_refusals)
{
    match_stage_config_t c;
    char err[200];
    const char *ok = "{\"format\":\"rising\",\"seats\":3,\"advance\":18}";
    ck_assert_int_eq(match_config_parse(ok, strlen(ok), &c, err, sizeof err), 0);
    ck_assert_int_eq(c.base_score, 10);
    ck_assert_uint_eq(c.growth_pct, 20);
    ck_assert_uint_eq(c.out_pct, 2000);
    ck_assert_uint_eq(c.advance, 18);
    const char *gd = "{\"format\":\"swiss\",\"seats\":4,\"mp_draw\":1}";
    ck_assert_int_eq(match_config_parse(gd, strlen(gd), &c, err, sizeof err), 0);
    ck_assert(c.teams);
    ck_assert_int_eq(c.mp_win, 3);
    ck_assert_int_eq(c.mp_draw, 1);
    static const struct {
        const char *json, *says;
    } bad[] = {
        {"{\"format\":\"rising\",\"seats\":3}", "advance: missing"},
        {"{\"format\":\"rising\",\"seats\":3,\"advance\":2}", "advance"},
        {"{\"format\":\"knockout\",\"seats\":3}", "format"},
        {"{\"format\":\"fixed\",\"seats\":9}", "seats"},
        {"{\"format\":\"fixed\",\"seats\":3,\"teams\":true}", "teams"},
        {"{\"format\":\"fixed\",\"seats\":3,\"deals\":3}", "deals: unknown field"},
        {"{\"format\":\"fixed\",\"seats\":3,\"base_score\":\"10\"}", "base_score"},
        {"{\"format\":\"fixed\",\"seats\":3,\"seconds_pct\":101}", "seconds_pct"},
        {"{\"format\":\"swiss\",\"seats\":4,\"rounds\":0}", "rounds"},
        {"{\"format\":\"swiss\",\"seats\":4,\"seats\":3}", "not JSON"},
        {"[1,2]", "config"},
        {"{\"format\":", "not JSON"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err[0] = '\0';
        ck_assert_int_eq(match_config_parse(bad[k].json, strlen(bad[k].json), &c, err, sizeof err),
                         -EINVAL);
        ck_assert_msg(strstr(err, bad[k].says) != NULL, "%s -> %s", bad[k].json, err);
    }
}
END_TEST

/* Replaces the first occurrence of `from` in s by `to` (a new string). */
static char *edit(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    ck_assert_msg(p != NULL, "no %s", from);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *o = malloc(n);
    snprintf(o, n, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
    return o;
}

START_TEST(test_match_json_malformed_refused)
{
    match_stage_config_t c = match_stage_config_default(MATCH_RISING, 3);
    c.advance = 3;
    match_stage_t *st = make(&c, 7, 8);
    uint64_t seed = 4;
    match_new_table_t t[4];
    size_t nt;
    ck_assert_int_eq(match_rising_pair(st, 0, tour_rng_splitmix64, &seed, t, 4, &nt, NULL, 0, NULL),
                     0);
    char *good = match_stage_to_json(st);
    char idn[32], id2[32];
    snprintf(idn, sizeof idn, "\"id\":%llu", (unsigned long long)st->players[1].id);
    snprintf(id2, sizeof id2, "\"id\":%llu", (unsigned long long)st->players[0].id);
    static const struct {
        const char *from, *to, *says;
    } cases[] = {
        {"\"version\":1", "\"version\":2", "version"},
        {"\"version\":1", "\"versio\":1", "versio: unknown field"},
        {"\"state\":\"playing\"", "\"state\":\"sleeping\"", "state"},
        {"\"state\":\"playing\"", "\"state\":\"waiting\"", "table"},
        {"\"state\":\"waiting\"", "\"state\":\"playing\"", "table"},
        {"\"draw\":\"", "\"draw\":\"x", "draw"},
        {"\"draw\":\"", "\"draw\":\"99999999999999999999", "draw"},
        {"\"score\":", "\"score\":1099511627777,\"x\":", "x: unknown field"},
        {"\"seat\":", "\"seat\":7", "seat"},
        {"\"players\":[", "\"players\":[1,", "players[0]"},
        {"\"queue\":[", "\"queue\":[999999,", "queue[0]"},
        {"\"tables\":[", "\"tables\":[{\"table\":1},", "deal"},
        {"\"history\":[]", "\"history\":[[]]", "history"},
        {"\"finishing\":false", "\"finishing\":0", "finishing"},
        {"\"round_seed\":\"", "\"round_seed\":\"-", "round_seed"},
        {"\"events\":0", "\"events\":-1", "events"},
        {"\"config\":{", "\"config\":{\"format\":\"fixed\",", "not JSON"},
    };
    char err[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *bad = edit(good, cases[k].from, cases[k].to);
        match_stage_t *out = NULL;
        err[0] = '\0';
        ck_assert_int_eq(match_stage_from_json(bad, strlen(bad), &out, err, sizeof err), -EINVAL);
        ck_assert_ptr_null(out);
        ck_assert_msg(strstr(err, cases[k].says) != NULL, "case %zu: %s", k, err);
        free(bad);
    }
    /* The queue naming a playing player instead of the waiting one. */
    char q1[48], q2[48];
    snprintf(q1, sizeof q1, "\"queue\":[%llu]", (unsigned long long)st->players[st->queue[0]].id);
    snprintf(q2, sizeof q2, "\"queue\":[%llu]", (unsigned long long)t[0].player[0]);
    char *wrongq = edit(good, q1, q2);
    match_stage_t *none = NULL;
    ck_assert_int_eq(match_stage_from_json(wrongq, strlen(wrongq), &none, err, sizeof err),
                     -EINVAL);
    ck_assert_ptr_null(none);
    ck_assert_msg(strstr(err, "not waiting") != NULL, "%s", err);
    free(wrongq);
    /* Two players with one id. */
    char *dup = edit(good, idn, id2);
    match_stage_t *out = NULL;
    ck_assert_int_eq(match_stage_from_json(dup, strlen(dup), &out, err, sizeof err), -EINVAL);
    ck_assert_ptr_null(out);
    free(dup);
    ck_assert_int_eq(match_stage_from_json("", 0, &out, err, sizeof err), -EINVAL);
    ck_assert_int_eq(match_stage_from_json("null", 4, &out, err, sizeof err), -EINVAL);
    ck_assert_int_eq(match_stage_from_json("{}", 2, &out, err, sizeof err), -EINVAL);
    free(good);
    match_stage_destroy(st);
}
END_TEST

/* Random byte mutations of a valid stage: refused or loaded, never a crash; a loaded one saves
 * to a text that loads again to the same text. */
START_TEST(test_match_json_mutations_never_crash)
{
    match_stage_config_t c = match_stage_config_default(MATCH_SWISS, 4);
    c.deals_per_round = 1;
    match_stage_t *st = make(&c, 9, 3);
    uint64_t seed = 17, byes[3];
    match_new_table_t t[4];
    size_t nt, nb;
    bool over;
    ck_assert_int_eq(
        match_swiss_seat_round(st, tour_rng_splitmix64, &seed, t, 4, &nt, byes, 3, &nb), 0);
    int64_t g[4] = {1, -1, 1, -1};
    ck_assert_int_eq(match_swiss_deal_end(st, 1, 1, g, &over), 0);
    char *good = match_stage_to_json(st);
    size_t len = strlen(good);
    char *buf = malloc(len + 1);
    const char alphabet[] = "0123456789-\"{}[],:aetrufnl ";
    int loaded = 0;
    for (int k = 0; k < 3000; k++) {
        memcpy(buf, good, len + 1);
        int edits = 1 + (int)tour_rng_below(tour_rng_splitmix64, &seed, 3);
        for (int e = 0; e < edits; e++)
            buf[tour_rng_below(tour_rng_splitmix64, &seed, len)] =
                alphabet[tour_rng_below(tour_rng_splitmix64, &seed, sizeof alphabet - 1)];
        match_stage_t *out = NULL;
        char err[256];
        int rc = match_stage_from_json(buf, len, &out, err, sizeof err);
        REQUIRE(rc == 0 || rc == -EINVAL);
        REQUIRE((rc == 0) == (out != NULL));
        if (out != NULL) {
            loaded++;
            char *s1 = match_stage_to_json(out);
            match_stage_t *again = NULL;
            REQUIRE(match_stage_from_json(s1, strlen(s1), &again, err, sizeof err) == 0);
            char *s2 = match_stage_to_json(again);
            REQUIRE(strcmp(s1, s2) == 0);
            free(s1);
            free(s2);
            match_stage_destroy(again);
            match_stage_destroy(out);
        }
    }
    ck_assert_int_lt(loaded, 3000);
    free(buf);
    free(good);
    match_stage_destroy(st);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("match_json");
    TCase *tc = tcase_create("round_trip");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_match_json_rising_round_trip_plays_on_identically);
    tcase_add_test(tc, test_match_json_fixed_and_swiss_round_trip);
    suite_add_tcase(s, tc);
    tc = tcase_create("refusals");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_match_json_config_defaults_and_refusals);
    tcase_add_test(tc, test_match_json_malformed_refused);
    tcase_add_test(tc, test_match_json_mutations_never_crash);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
