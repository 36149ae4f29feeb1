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

/*
 * A table whose own players busted while players moved in waited for the button (seated between
 * the button and the small blind during its hand): one player not waiting and two waiting. The
 * button cannot pass with one player, so the waiting ones are dealt in; the director answered
 * WAIT ("fewer than two players") for ever before, and the tournament stood still.
 */
START_TEST(test_tour_play_waiting_players_are_dealt_in_when_one_would_be_left)
{
    tour_structure_t *st = NULL;
    char err[200];
    ck_assert_int_eq(tour_structure_parse(MTT6, strlen(MTT6), &st, err, sizeof err), 0);
    tour_play_t *p = tour_play_create(st, 1);
    ck_assert_ptr_nonnull(p);
    for (int k = 0; k < 3; k++) {
        char player[16], e[160];
        snprintf(player, sizeof player, "%d", 11 + k);
        snprintf(e, sizeof e,
                 "{\"state\":\"playing\",\"entry\":1,\"entries\":1,\"table\":1,\"seat\":%d,"
                 "\"stack\":1000}",
                 k);
        ck_assert_int_eq(tour_play_load_entry(p, player, e), 0);
    }
    ck_assert_int_eq(tour_play_load_table(p, "{\"id\":1,\"players\":[11,12,13,0,0,0],\"sb\":0,"
                                             "\"bb\":3,\"button\":5,\"hand\":9,\"in_hand\":false,"
                                             "\"wait\":[false,true,true,false,false,false]}"),
                     0);
    tour_play_set_meta(p, 42, 30, 0, 3);
    json_t *a = deal(p, 10);
    json_t *seats = json_object_get(a, "seats"), *x;
    size_t i;
    ck_assert_uint_eq(json_array_size(seats), 3);
    json_array_foreach(seats, i, x)
    {
        ck_assert_msg(json_is_true(json_object_get(x, "dealt")), "seat %lld not dealt in",
                      (long long)json_integer_value(json_object_get(x, "seat")));
    }
    json_decref(a);
    tour_play_free(p);
    tour_structure_destroy(st);
}
END_TEST

/* The commit's I commands ("I player item place"), as "player:item:place;..." in order. */
static void commit_items(const tour_commit_t *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i + 3 < c->n && off < len; i++)
        if (strcmp(c->v[i], "I") == 0) {
            off += (size_t)snprintf(buf + off, len - off, "%s:%s:%s;", c->v[i + 1], c->v[i + 2],
                                    c->v[i + 3]);
            i += 3;
        }
}

/*
 * Item prizes at a hold'em table (docs/tournaments.md "Items"): a heads-up sit & go whose places
 * 1 and 2 carry items; the hand that busts one player gives his place's item with his chips,
 * and the winner's with the pool, in the same commit (I commands beside P), the entries and the
 * answer's out list naming them, the log events ending with "item ...".
 */
START_TEST(test_tour_play_bust_and_win_give_their_places_items)
{
    static const char *sng =
        "{\"format\":\"sng\",\"seats_per_table\":2,\"starting_stack\":1000,\"buy_in\":10,"
        "\"max_entrants\":2,\"levels\":[{\"small_blind\":10,\"big_blind\":20,"
        "\"duration_ms\":600000}],\"payouts\":{\"items\":[{\"place\":1,\"item\":\"trophy:gold\"},"
        "{\"place\":2,\"item\":\"badge:runner-up\"}]}}";
    tour_structure_t *st = NULL;
    char err[200];
    ck_assert_msg(tour_structure_parse(sng, strlen(sng), &st, err, sizeof err) == 0, "%s", err);
    tour_play_t *p = tour_play_create(st, 1);
    for (int k = 0; k < 2; k++) {
        char player[16], e[160];
        snprintf(player, sizeof player, "%d", 21 + k);
        snprintf(e, sizeof e,
                 "{\"state\":\"playing\",\"entry\":%d,\"entries\":1,\"table\":1,\"seat\":%d,"
                 "\"stack\":1000,\"paid\":10}",
                 k + 1, k);
        ck_assert_int_eq(tour_play_load_entry(p, player, e), 0);
    }
    ck_assert_int_eq(tour_play_load_table(p,
                                          "{\"id\":1,\"players\":[21,22],\"hand\":0,"
                                          "\"in_hand\":false,\"sb\":-1,\"bb\":-1,\"button\":-1}"),
                     0);
    tour_play_set_meta(p, 42, 20, 0, 2);
    json_t *a = deal(p, 1);
    json_decref(a);
    tour_commit_t c = {0};
    const char *code = NULL;
    char *body = tour_play_hand(p, 1, 1, "host.x", "21:2000,22:0", NULL, 5000, &c, &code);
    ck_assert_ptr_nonnull(body);
    ck_assert_msg(code != NULL && strcmp(code, "OK") == 0, "%s: %s", code ? code : "?", body);
    char items[256];
    commit_items(&c, items, sizeof items);
    ck_assert_str_eq(items, "22:badge:runner-up:2;21:trophy:gold:1;");
    /* The answer's out list and the log name the items; the entries carry them. */
    ck_assert_ptr_nonnull(strstr(body, "\"item\":\"badge:runner-up\""));
    ck_assert_ptr_nonnull(strstr(body, "\"item\":\"trophy:gold\""));
    bool out_logged = false, won_logged = false, entry_item = false;
    for (size_t i = 0; i + 2 < c.n; i++) {
        if (strcmp(c.v[i], "L") == 0 && strcmp(c.v[i + 1], "out") == 0)
            out_logged = strstr(c.v[i + 2], " place 2 prize 0 item badge:runner-up") != NULL;
        if (strcmp(c.v[i], "L") == 0 && strcmp(c.v[i + 1], "finished") == 0)
            won_logged = strstr(c.v[i + 2], "winner 21 prize 20 item trophy:gold") != NULL;
        if (strcmp(c.v[i], "E") == 0 && strcmp(c.v[i + 1], "21") == 0)
            entry_item = strstr(c.v[i + 2], "\"item\":\"trophy:gold\"") != NULL;
    }
    ck_assert(out_logged);
    ck_assert(won_logged);
    ck_assert(entry_item);
    free(body);
    tour_commit_free(&c);
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
    tcase_add_test(tc, test_tour_play_waiting_players_are_dealt_in_when_one_would_be_left);
    suite_add_tcase(s, tc);
    tc = tcase_create("items");
    tcase_add_test(tc, test_tour_play_bust_and_win_give_their_places_items);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
