/*
 * The director's hold'em play model (tournament/tour_play.h), in process: the positions of the
 * hand it deals (docs/tournaments.md "Positions", big blind forward). A table that played a
 * heads-up hand (its button the small blind, seated after the big blind) and was joined by
 * moved players deals its next hand with the button before the small blind (dead when that seat
 * is empty), never on the big blind: such a deal made every hand of the table malformed at its
 * server, for ever (found by tour_tables).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tour_play.h"
#include "tour_structure.h"

#define MTT6                                                                                       \
    "{\"format\":\"mtt\",\"seats_per_table\":6,\"starting_stack\":1000,\"buy_in\":10,\"fee\":1,"   \
    "\"min_entrants\":2,\"max_entrants\":100,\"levels\":[{\"small_blind\":10,\"big_blind\":20,"    \
    "\"duration_ms\":600000}]}"

/* The deal answer's JSON object (the body after "code"), for hand `hand` of table 1. */
static json_t *deal(tour_play_t *p, uint64_t hand)
{
    tour_commit_t c = {0};
    const char *code = NULL;
    char *body = tour_play_deal(p, 1, hand, "host.x", 1000, &c, &code);
    ck_assert_ptr_nonnull(body);
    ck_assert_msg(code != NULL && strcmp(code, "OK") == 0, "%s: %s", code ? code : "?", body);
    char *text = NULL;
    ck_assert_int_gt(asprintf(&text, "{%s}", body + 1), 0);
    json_t *a = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(a);
    free(text);
    free(body);
    tour_commit_free(&c);
    return a;
}

START_TEST(test_tour_play_heads_up_then_more_players_moves_the_button_before_the_small_blind)
{
    tour_structure_t *st = NULL;
    char err[200];
    ck_assert_int_eq(tour_structure_parse(MTT6, strlen(MTT6), &st, err, sizeof err), 0);
    tour_play_t *p = tour_play_create(st, 1);
    ck_assert_ptr_nonnull(p);
    /* Seats 0, 1, 3, 4, 5 taken; seat 2 empty. The last hand was heads-up between seats 3 (big
     * blind) and 4 (button and small blind); players 11, 12, 16 were moved in since. */
    static const int seat_of[] = {0, 1, 3, 4, 5};
    for (int k = 0; k < 5; k++) {
        char player[16], e[160];
        snprintf(player, sizeof player, "%d", 11 + seat_of[k]);
        snprintf(e, sizeof e,
                 "{\"state\":\"playing\",\"entry\":1,\"entries\":1,\"table\":1,\"seat\":%d,"
                 "\"stack\":1000}",
                 seat_of[k]);
        ck_assert_int_eq(tour_play_load_entry(p, player, e), 0);
    }
    ck_assert_int_eq(
        tour_play_load_table(p, "{\"id\":1,\"players\":[11,12,0,14,15,16],\"sb\":4,\"bb\":3,"
                                "\"button\":4,\"hand\":7,\"in_hand\":false}"),
        0);
    tour_play_set_meta(p, 42, 60, 0, 5);
    json_t *a = deal(p, 8);
    /* Big blind forward: the big blind the next seat after 3 (4), the small blind the last big
     * blind (3), the button the seat before it: 2, empty (a dead button). */
    ck_assert_int_eq(json_integer_value(json_object_get(a, "bb")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "sb")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(a, "button")), 2);
    json_decref(a);
    tour_play_free(p);
    tour_structure_destroy(st);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tour_play");
    TCase *tc = tcase_create("positions");
    tcase_add_test(
        tc, test_tour_play_heads_up_then_more_players_moves_the_button_before_the_small_blind);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
