/*
 * Unit tests for bots/bot_book (croupier-bot's bookkeeping): torn-round detection, distinct
 * rounds, errors, latency percentiles and the JSON report.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bot_book.h"
#include "bot_strategy.h"

static bot_book_rounds_t rounds(const bot_book_t *b)
{
    bot_book_rounds_t r;
    bot_book_rounds(b, &r);
    return r;
}

/* ---- rounds ------------------------------------------------------------------------------ */

START_TEST(test_book_round_started_then_ended_is_finished_not_torn)
{
    bot_book_t *b = bot_book_create(2);
    bot_book_round_started(b, 0, 7, "1:1:7:1", 0);
    ck_assert(bot_book_round_open(b, 0));
    bot_book_round_ended(b, 0, 7, "1:1:7:1", BOT_ROUND_FINISHED, 10);
    ck_assert(!bot_book_round_open(b, 0));
    bot_book_finish(b, 20);
    bot_book_rounds_t r = rounds(b);
    ck_assert_uint_eq(r.started, 1);
    ck_assert_uint_eq(r.finished, 1);
    ck_assert_uint_eq(r.torn, 0);
    ck_assert(bot_book_ok(b));
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_round_open_at_finish_is_torn)
{
    bot_book_t *b = bot_book_create(3);
    bot_book_round_started(b, 2, 9, "1:1:9:4", 0);
    bot_book_finish(b, 5);
    ck_assert_uint_eq(rounds(b).torn, 1);
    ck_assert(!bot_book_ok(b));
    json_t *rep = bot_book_report(b, NULL);
    json_t *torn = json_object_get(rep, "torn_rounds");
    ck_assert_uint_eq(json_array_size(torn), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(torn, 0), "round_id")),
                     "1:1:9:4");
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(torn, 0), "bot")), 2);
    ck_assert(json_is_false(json_object_get(rep, "ok")));
    json_decref(rep);
    /* finish is idempotent: nothing is counted twice */
    bot_book_finish(b, 6);
    ck_assert_uint_eq(rounds(b).torn, 1);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_voided_round_is_not_torn)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 3, "2:5:3:1", 0);
    bot_book_round_ended(b, 0, 3, "2:5:3:1", BOT_ROUND_VOIDED, 1);
    bot_book_finish(b, 2);
    bot_book_rounds_t r = rounds(b);
    ck_assert_uint_eq(r.voided, 1);
    ck_assert_uint_eq(r.finished, 0);
    ck_assert_uint_eq(r.torn, 0);
    ck_assert_uint_eq(r.distinct_voided, 1);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_end_of_another_round_tears_the_open_one)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 3, "1:1:3:1", 0);
    bot_book_round_ended(b, 0, 3, "1:1:3:2", BOT_ROUND_FINISHED, 1);
    ck_assert_uint_eq(rounds(b).torn, 1);
    ck_assert_uint_eq(rounds(b).finished, 1);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_next_round_starting_tears_the_open_one)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 3, "1:1:3:1", 0);
    bot_book_round_started(b, 0, 3, "1:1:3:1", 1); /* the same round seen again: nothing */
    ck_assert_uint_eq(rounds(b).torn, 0);
    bot_book_round_started(b, 0, 3, "1:1:3:2", 2);
    ck_assert_uint_eq(rounds(b).torn, 1);
    ck_assert_uint_eq(rounds(b).started, 2);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_anonymous_round_closes_at_next_round_end_of_its_desk)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 4, NULL, 0); /* accepted action: a round runs */
    bot_book_round_started(b, 0, 4, "", 1);   /* another accepted action in it */
    ck_assert_uint_eq(rounds(b).started, 1);
    bot_book_round_ended(b, 0, 4, "1:1:4:8", BOT_ROUND_FINISHED, 2);
    ck_assert(!bot_book_round_open(b, 0));
    bot_book_finish(b, 3);
    ck_assert_uint_eq(rounds(b).torn, 0);
    ck_assert_uint_eq(rounds(b).finished, 1);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_anonymous_round_at_other_desk_is_torn_by_round_end)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 4, NULL, 0);
    bot_book_round_ended(b, 0, 5, "1:1:5:1", BOT_ROUND_FINISHED, 1);
    ck_assert_uint_eq(rounds(b).torn, 1);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_move_mid_round_is_torn)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 4, "1:1:4:1", 0);
    bot_book_seated(b, 0, 8, false, false, NULL, 1);
    ck_assert_uint_eq(rounds(b).torn, 1);
    ck_assert(!bot_book_round_open(b, 0));
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_move_between_rounds_is_clean)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 4, "1:1:4:1", 0);
    bot_book_round_ended(b, 0, 4, "1:1:4:1", BOT_ROUND_FINISHED, 1);
    bot_book_seated(b, 0, 8, false, false, NULL, 2);
    bot_book_round_started(b, 0, 8, "3:1:8:1", 3);
    bot_book_round_ended(b, 0, 8, "3:1:8:1", BOT_ROUND_FINISHED, 4);
    bot_book_finish(b, 5);
    ck_assert_uint_eq(rounds(b).torn, 0);
    ck_assert_uint_eq(rounds(b).finished, 2);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_round_over_after_reconnect_is_unseen_not_torn)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 4, "1:1:4:1", 0);
    /* reconnected: the snapshot names another round (or none) */
    bot_book_seated(b, 0, 4, true, true, "1:1:4:2", 1);
    bot_book_rounds_t r = rounds(b);
    ck_assert_uint_eq(r.torn, 0);
    ck_assert_uint_eq(r.ended_unseen, 1);
    ck_assert(!bot_book_round_open(b, 0));
    bot_book_destroy(b);
}
END_TEST

/*
 * A tournament player the director placed (out, won) while a round was open for it, connected:
 * its end came before the placing, the round is unseen, its id listed; a second call finds
 * nothing open; without it the round is torn at the run's end.
 */
START_TEST(test_book_round_unseen_closes_an_open_round_even_connected)
{
    bot_book_t *b = bot_book_create(2);
    bot_book_round_started(b, 0, 4, "1:1:4:7", 0);
    bot_book_round_started(b, 1, 4, "1:1:4:7", 0);
    ck_assert(bot_book_round_unseen(b, 0));
    ck_assert(!bot_book_round_open(b, 0));
    ck_assert(!bot_book_round_unseen(b, 0));
    ck_assert(!bot_book_round_unseen_if_away(b, 1)); /* connected: not away */
    bot_book_finish(b, 1);
    bot_book_rounds_t r = rounds(b);
    ck_assert_uint_eq(r.ended_unseen, 1);
    ck_assert_uint_eq(r.torn, 1); /* bot 1's */
    ck_assert(!bot_book_round_unseen(b, 1)); /* finished: nothing changes */
    bot_book_destroy(b);
}
END_TEST

/* The lines bot_book_write_round_ids writes, in one string (caller frees). */
static char *round_id_lines(const bot_book_t *b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    bot_book_write_round_ids(b, f);
    fclose(f);
    return buf;
}

/*
 * After a reconnect, pushes follow the player's newest request at once, so a RoundEnd or a Deal
 * of a later round can reach the bot before its Resume snapshot: its open round ended while it
 * was away (unseen, id listed for the harness), not torn. Connected, the same is torn.
 */
START_TEST(test_book_later_round_before_the_snapshot_after_reconnect_is_unseen)
{
    bot_book_t *b = bot_book_create(2);
    bot_book_round_started(b, 0, 4, "1:1:4:23", 0);
    bot_book_disconnected(b, 0);
    bot_book_round_ended(b, 0, 4, "1:1:4:24", BOT_ROUND_FINISHED, 1);
    ck_assert(!bot_book_round_open(b, 0));
    bot_book_round_started(b, 1, 4, "1:1:4:23", 0);
    bot_book_disconnected(b, 1);
    bot_book_round_started(b, 1, 4, "1:1:4:25", 1); /* dealt in by an action sent before */
    ck_assert(bot_book_round_open(b, 1));
    bot_book_rounds_t r = rounds(b);
    ck_assert_uint_eq(r.torn, 0);
    ck_assert_uint_eq(r.ended_unseen, 2);
    char *lines = round_id_lines(b);
    ck_assert_msg(strstr(lines, "1:1:4:23 unseen\n") != NULL, "%s", lines);
    ck_assert_msg(strstr(lines, "1:1:4:24 finished\n") != NULL, "%s", lines);
    free(lines);
    /* the snapshot ends the away time: the same sequence is torn again */
    bot_book_seated(b, 1, 4, true, true, "1:1:4:25", 2);
    bot_book_round_ended(b, 1, 4, "1:1:4:26", BOT_ROUND_FINISHED, 3);
    ck_assert_uint_eq(rounds(b).torn, 1);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_round_over_after_reconnect_lists_its_id_as_unseen)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 4, "1:1:4:1", 0);
    bot_book_disconnected(b, 0);
    bot_book_seated(b, 0, 4, true, true, "1:1:4:2", 1);
    char *lines = round_id_lines(b);
    ck_assert_str_eq(lines, "1:1:4:1 unseen\n");
    free(lines);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_round_still_running_after_reconnect_stays_open)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 4, "1:1:4:1", 0);
    bot_book_seated(b, 0, 4, true, true, "1:1:4:1", 1);
    ck_assert(bot_book_round_open(b, 0));
    /* an engine whose snapshot does not name rounds: the round stays open too */
    bot_book_seated(b, 0, 4, true, false, NULL, 2);
    ck_assert(bot_book_round_open(b, 0));
    bot_book_round_ended(b, 0, 4, "1:1:4:1", BOT_ROUND_FINISHED, 3);
    bot_book_finish(b, 4);
    ck_assert_uint_eq(rounds(b).torn, 0);
    ck_assert_uint_eq(rounds(b).ended_unseen, 0);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_snapshot_without_round_while_connected_is_torn)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 4, "1:1:4:1", 0);
    bot_book_seated(b, 0, 4, false, true, NULL, 1);
    ck_assert_uint_eq(rounds(b).torn, 1);
    bot_book_destroy(b);
}
END_TEST

/* A table whose server stopped without a clean exit (TableClosing{CRASHED}, TABLE_CLOSED): the
 * round in progress never ends by a RoundEnd. It is crash-voided, never torn, and listed. */
START_TEST(test_book_crash_voided_round_is_counted_apart_not_torn)
{
    bot_book_t *b = bot_book_create(2);
    bot_book_round_started(b, 0, 4, "1:1:4:7", 0);
    ck_assert(bot_book_crash_voided(b, 0, 1));
    ck_assert(!bot_book_round_open(b, 0));
    ck_assert(!bot_book_crash_voided(b, 0, 2)); /* nothing open any more */
    ck_assert(!bot_book_crash_voided(b, 1, 2)); /* a bot between rounds: nothing to void */
    /* The move: seated at another desk, between rounds; a round there ends as usual. */
    bot_book_seated(b, 0, 9, false, false, NULL, 3);
    bot_book_round_started(b, 0, 9, "1:2:9:1", 4);
    bot_book_round_ended(b, 0, 9, "1:2:9:1", BOT_ROUND_FINISHED, 5);
    /* An anonymous round (the test engine's) is counted too, without a line. */
    bot_book_round_started(b, 1, 4, NULL, 6);
    ck_assert(bot_book_crash_voided(b, 1, 7));
    bot_book_finish(b, 8);
    bot_book_rounds_t r = rounds(b);
    ck_assert_uint_eq(r.crash_voided, 2);
    ck_assert_uint_eq(r.torn, 0);
    ck_assert_uint_eq(r.voided, 0);
    ck_assert_uint_eq(r.finished, 1);
    ck_assert(bot_book_ok(b));
    char *lines = round_id_lines(b);
    ck_assert_msg(strstr(lines, "1:1:4:7 crash_voided\n") != NULL, "%s", lines);
    ck_assert_msg(strstr(lines, "1:2:9:1 finished\n") != NULL, "%s", lines);
    free(lines);
    json_t *rep = bot_book_report(b, NULL);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(rep, "games"), "crash_voided")), 2);
    json_decref(rep);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_distinct_rounds_count_once_over_bots)
{
    bot_book_t *b = bot_book_create(3);
    char id[32];
    for (int r = 0; r < 1000; r++) {
        snprintf(id, sizeof id, "1:1:%d:%d", r % 17, r);
        for (uint32_t bot = 0; bot < 3; bot++) {
            bot_book_round_started(b, bot, (uint64_t)(r % 17), id, r);
            bot_book_round_ended(b, bot, (uint64_t)(r % 17), id,
                                 r % 10 == 0 ? BOT_ROUND_VOIDED : BOT_ROUND_FINISHED, r);
        }
    }
    bot_book_finish(b, 2000);
    bot_book_rounds_t r = rounds(b);
    ck_assert_uint_eq(r.distinct_finished, 900);
    ck_assert_uint_eq(r.distinct_voided, 100);
    ck_assert_uint_eq(r.finished, 2700);
    ck_assert_uint_eq(r.voided, 300);
    ck_assert_uint_eq(r.torn, 0);
    char path[] = "/tmp/bot_book_ids_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w+");
    ck_assert_uint_eq(bot_book_write_round_ids(b, f), 1000);
    rewind(f);
    char line[64];
    int lines = 0, voided = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char id[32], outcome[16];
        ck_assert_int_eq(sscanf(line, "%31s %15s", id, outcome), 2);
        int n = atoi(strrchr(id, ':') + 1);
        ck_assert_str_eq(outcome, n % 10 == 0 ? "voided" : "finished");
        voided += n % 10 == 0;
        lines++;
    }
    ck_assert_int_eq(lines, 1000);
    ck_assert_int_eq(voided, 100);
    fclose(f);
    unlink(path);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_round_without_money_is_finished_and_listed_apart)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 0, 2, "1:1:2:1", 0);
    bot_book_round_ended(b, 0, 2, "1:1:2:1", BOT_ROUND_NO_MONEY, 1);
    bot_book_round_started(b, 0, 2, "1:1:2:2", 2);
    bot_book_round_ended(b, 0, 2, "1:1:2:2", BOT_ROUND_FINISHED, 3);
    bot_book_finish(b, 4);
    bot_book_rounds_t r = rounds(b);
    ck_assert_uint_eq(r.finished, 2);
    ck_assert_uint_eq(r.no_money, 1);
    ck_assert_uint_eq(r.torn, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_uint_eq(bot_book_write_round_ids(b, f), 2);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "1:1:2:1 nomoney\n"));
    ck_assert_ptr_nonnull(strstr(buf, "1:1:2:2 finished\n"));
    free(buf);
    json_t *rep = bot_book_report(b, NULL);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(rep, "games"), "finished_no_money")), 1);
    json_decref(rep);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_conflicting_outcomes_are_an_unexpected_error)
{
    bot_book_t *b = bot_book_create(2);
    bot_book_round_ended(b, 0, 1, "1:1:1:1", BOT_ROUND_FINISHED, 0);
    bot_book_round_ended(b, 1, 1, "1:1:1:1", BOT_ROUND_VOIDED, 0);
    ck_assert_uint_eq(bot_book_unexpected(b), 1);
    ck_assert_uint_eq(bot_book_errors(b, "round_outcome_conflict"), 1);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_bad_arguments_are_ignored)
{
    ck_assert_ptr_null(bot_book_create(0));
    bot_book_destroy(NULL);
    bot_book_t *b = bot_book_create(1);
    bot_book_round_started(b, 5, 1, "x", 0); /* no such bot */
    bot_book_round_ended(b, 0, 1, NULL, BOT_ROUND_FINISHED, 0);
    bot_book_round_ended(b, 0, 1, "", BOT_ROUND_FINISHED, 0);
    ck_assert_uint_eq(rounds(b).started, 0);
    ck_assert_uint_eq(rounds(b).finished, 0);
    /* an over-long id is cut, never overflows */
    char longid[400];
    memset(longid, '7', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    bot_book_round_started(b, 0, 1, longid, 0);
    bot_book_round_ended(b, 0, 1, longid, BOT_ROUND_FINISHED, 0);
    ck_assert(!bot_book_round_open(b, 0)); /* the kept prefix names the whole id */
    ck_assert_uint_eq(rounds(b).torn, 0);
    bot_book_destroy(b);
}
END_TEST

/* ---- errors, counters, latency ----------------------------------------------------------- */

START_TEST(test_book_expected_errors_do_not_fail_the_run)
{
    bot_book_t *b = bot_book_create(1);
    bot_book_error(b, "NO_ROUND", true);
    bot_book_error(b, "NO_ROUND", true);
    bot_book_goaway(b, "SHUTDOWN");
    ck_assert(bot_book_ok(b));
    ck_assert_uint_eq(bot_book_errors(b, "NO_ROUND"), 2);
    ck_assert_uint_eq(bot_book_counter(b, BOT_C_GOAWAYS), 1);
    bot_book_error(b, "connection_lost", false);
    ck_assert(!bot_book_ok(b));
    ck_assert_uint_eq(bot_book_unexpected(b), 1);
    json_t *rep = bot_book_report(b, NULL);
    json_t *e = json_object_get(json_object_get(rep, "errors"), "NO_ROUND");
    ck_assert_int_eq(json_integer_value(json_object_get(e, "total")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "unexpected")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(rep, "unexpected_errors")), 1);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(rep, "goaways"), "SHUTDOWN")), 1);
    json_decref(rep);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_latency_percentiles_nearest_rank)
{
    bot_book_t *b = bot_book_create(1);
    ck_assert_int_eq(bot_book_latency_pct(b, 50), -1);
    for (int i = 100; i >= 1; i--)
        bot_book_latency(b, i * 1000);
    ck_assert_int_eq(bot_book_latency_pct(b, 50), 50000);
    ck_assert_int_eq(bot_book_latency_pct(b, 99), 99000);
    ck_assert_int_eq(bot_book_latency_pct(b, 100), 100000);
    ck_assert_int_eq(bot_book_latency_pct(b, 0), 1000);
    bot_book_latency(b, -5); /* clamped */
    ck_assert_int_eq(bot_book_latency_pct(b, 0), 0);
    bot_book_destroy(b);
}
END_TEST

START_TEST(test_book_report_file_has_every_section)
{
    bot_book_t *b = bot_book_create(2);
    bot_book_count(b, BOT_C_ACTIONS_SENT);
    bot_book_count(b, BOT_C_ACTIONS_SENT);
    bot_book_count(b, BOT_C_RECONNECTS);
    bot_book_count(b, BOT_C_RECONNECTS);
    bot_book_count(b, BOT_C_RECONNECTS);
    bot_book_count(b, BOT_C_RECONNECTS_GOAWAY);
    bot_book_count(b, BOT_C_CONNECTIONS_LOST);
    bot_book_count(b, BOT_C_RECONNECTS_LOST);
    bot_book_latency(b, 1500);
    bot_book_round_started(b, 0, 1, "1:1:1:1", 0);
    bot_book_round_ended(b, 0, 1, "1:1:1:1", BOT_ROUND_FINISHED, 1);
    bot_book_finish(b, 2);
    char dir[] = "/tmp/bot_book_rep_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/report.json", dir);
    json_t *meta = json_pack("{s:i,s:s}", "bots", 2, "game", "test");
    ck_assert_int_eq(bot_book_write_report(b, meta, path), 0);
    json_decref(meta);
    json_error_t je;
    json_t *rep = json_load_file(path, 0, &je);
    ck_assert_ptr_nonnull(rep);
    ck_assert_int_eq(json_integer_value(json_object_get(rep, "bots")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(rep, "game")), "test");
    json_t *g = json_object_get(rep, "games");
    ck_assert_int_eq(json_integer_value(json_object_get(g, "started")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "finished")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "voided")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "torn")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(rep, "actions")), 2);
    json_t *rc = json_object_get(rep, "reconnects");
    ck_assert_int_eq(json_integer_value(json_object_get(rc, "total")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(rc, "after_goaway")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(rc, "after_loss")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(rc, "other")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "crash_voided")), 0);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(rep, "counters"), "connections_lost")),
        1);
    json_t *lat = json_object_get(rep, "action_latency_ms");
    ck_assert(json_real_value(json_object_get(lat, "p50")) == 1.5);
    ck_assert(json_real_value(json_object_get(lat, "p99")) == 1.5);
    ck_assert(json_is_true(json_object_get(rep, "ok")));
    ck_assert_ptr_nonnull(json_object_get(json_object_get(rep, "counters"), "moves"));
    json_decref(rep);
    /* an unwritable path is an error, and no temp file is left */
    ck_assert_int_lt(bot_book_write_report(b, NULL, "/nonexistent-dir/x/report.json"), 0);
    unlink(path);
    rmdir(dir);
    bot_book_destroy(b);
}
END_TEST

/* ---- strategy table ---------------------------------------------------------------------- */

START_TEST(test_strategy_test_game_sends_a_valid_action)
{
    const bot_strategy_ops_t *s = bot_strategy_find("test");
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_null(bot_strategy_find("no-such-game"));
    void *st = calloc(1, s->state_size);
    bot_seat_t seat = {.player_id = 1, .desk_id = 2, .stake = 10, .game = "test"};
    bot_rng_t rng = {.s = 42};
    s->on_seat(st, &seat, NULL);
    bot_move_t mv;
    bot_move_init(&mv);
    int delay = -1;
    ck_assert_int_eq(s->decide(st, &seat, &rng, &mv, &delay), 1);
    ck_assert_int_ge(delay, 150);
    ck_assert_int_lt(delay, 450);
    Croupier__ClientMessage m = CROUPIER__CLIENT_MESSAGE__INIT;
    m.request_id = 1;
    m.body_case = CROUPIER__CLIENT_MESSAGE__BODY_ACTION;
    m.action = &mv.action;
    frame_error_t err;
    ck_assert_int_eq(frame_check_client(&m, NULL, &err), 0);
    ck_assert(s->refusal_expected(CROUPIER__ERROR_CODE__NO_ROUND));
    ck_assert(!s->refusal_expected(CROUPIER__ERROR_CODE__NOT_SEATED));
    /* after TableClosing it stops acting until it is seated again */
    Croupier__ServerMessage tc = CROUPIER__SERVER_MESSAGE__INIT;
    Croupier__TableClosing c = CROUPIER__TABLE_CLOSING__INIT;
    c.reason = CROUPIER__CLOSING_REASON__CLOSING_DRAINING;
    tc.body_case = CROUPIER__SERVER_MESSAGE__BODY_TABLE_CLOSING;
    tc.table_closing = &c;
    s->on_event(st, &seat, &tc);
    ck_assert_int_eq(s->decide(st, &seat, &rng, &mv, &delay), 0);
    s->on_seat(st, &seat, NULL);
    ck_assert_int_eq(s->decide(st, &seat, &rng, &mv, &delay), 1);
    free(st);
}
END_TEST

START_TEST(test_rng_is_repeatable_and_bounded)
{
    bot_rng_t a = {.s = 7}, b = {.s = 7}, z = {.s = 0};
    for (int i = 0; i < 1000; i++) {
        ck_assert_uint_eq(bot_rng_next(&a), bot_rng_next(&b));
        ck_assert_uint_lt(bot_rng_below(&z, 13), 13);
    }
    ck_assert_uint_eq(bot_rng_below(&z, 0), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bot_book");
    TCase *tc = tcase_create("rounds");
    tcase_add_test(tc, test_book_round_started_then_ended_is_finished_not_torn);
    tcase_add_test(tc, test_book_round_open_at_finish_is_torn);
    tcase_add_test(tc, test_book_voided_round_is_not_torn);
    tcase_add_test(tc, test_book_end_of_another_round_tears_the_open_one);
    tcase_add_test(tc, test_book_next_round_starting_tears_the_open_one);
    tcase_add_test(tc, test_book_anonymous_round_closes_at_next_round_end_of_its_desk);
    tcase_add_test(tc, test_book_anonymous_round_at_other_desk_is_torn_by_round_end);
    tcase_add_test(tc, test_book_move_mid_round_is_torn);
    tcase_add_test(tc, test_book_move_between_rounds_is_clean);
    tcase_add_test(tc, test_book_round_over_after_reconnect_is_unseen_not_torn);
    tcase_add_test(tc, test_book_later_round_before_the_snapshot_after_reconnect_is_unseen);
    tcase_add_test(tc, test_book_round_over_after_reconnect_lists_its_id_as_unseen);
    tcase_add_test(tc, test_book_round_still_running_after_reconnect_stays_open);
    tcase_add_test(tc, test_book_snapshot_without_round_while_connected_is_torn);
    tcase_add_test(tc, test_book_crash_voided_round_is_counted_apart_not_torn);
    tcase_add_test(tc, test_book_distinct_rounds_count_once_over_bots);
    tcase_add_test(tc, test_book_round_without_money_is_finished_and_listed_apart);
    tcase_add_test(tc, test_book_conflicting_outcomes_are_an_unexpected_error);
    tcase_add_test(tc, test_book_bad_arguments_are_ignored);
    suite_add_tcase(s, tc);
    tc = tcase_create("report");
    tcase_add_test(tc, test_book_expected_errors_do_not_fail_the_run);
    tcase_add_test(tc, test_book_latency_percentiles_nearest_rank);
    tcase_add_test(tc, test_book_report_file_has_every_section);
    tcase_add_test(tc, test_book_round_unseen_closes_an_open_round_even_connected);
    suite_add_tcase(s, tc);
    tc = tcase_create("strategy");
    tcase_add_test(tc, test_strategy_test_game_sends_a_valid_action);
    tcase_add_test(tc, test_rng_is_repeatable_and_bounded);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
