/*
 * tour_client (tournament/tour_client.h): the asker's side of the director's contract shared by
 * croupier-ctl and croupier-gate -- ids, request arguments, answers, the meta hash, entries, the
 * level in force, the payout rows and the messages of the events channel (docs/tournaments.md
 * "The director").
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "match_hall.h"
#include "match_json.h"
#include "match_rising.h"
#include "tour_client.h"

static const char structure[] =
    "{\"format\":\"mtt\",\"seats_per_table\":9,\"starting_stack\":1000,\"buy_in\":100,"
    "\"fee\":10,\"min_entrants\":2,\"max_entrants\":100,\"late_registration_levels\":1,"
    "\"levels\":[{\"small_blind\":10,\"big_blind\":20,\"duration_ms\":60000},"
    "{\"break\":true,\"duration_ms\":30000},"
    "{\"small_blind\":20,\"big_blind\":40,\"ante\":40,\"big_blind_ante\":true,"
    "\"duration_ms\":60000}]}";

START_TEST(test_tour_client_ids_and_request_ids)
{
    ck_assert(tour_client_valid_id("1"));
    ck_assert(tour_client_valid_id("18446744073709551615"));
    ck_assert(!tour_client_valid_id("18446744073709551616"));
    ck_assert(!tour_client_valid_id("0"));
    ck_assert(!tour_client_valid_id("012"));
    ck_assert(!tour_client_valid_id("-1"));
    ck_assert(!tour_client_valid_id(""));
    ck_assert(tour_client_valid_req("ctl-00ff.a:b_c"));
    ck_assert(!tour_client_valid_req("a b"));
    char req[TOUR_CLIENT_REQ_MAX + 1];
    /* The longest a gateway can make still fits the director's 92. */
    ck_assert_int_eq(tour_client_gate_req(req, sizeof req, UINT64_MAX, UINT64_MAX,
                                          TOUR_CLIENT_UNREGISTER, UINT64_MAX),
                     0);
    ck_assert(tour_client_valid_req(req));
    ck_assert_int_eq(tour_client_gate_req(req, sizeof req, 42, 0xab, TOUR_CLIENT_REGISTER, 7), 0);
    ck_assert_str_eq(req, "g42.ab.r.7");
    char small[8];
    ck_assert_int_eq(tour_client_gate_req(small, sizeof small, 42, 0xab, TOUR_CLIENT_REGISTER, 7),
                     -ENOSPC);
}
END_TEST

START_TEST(test_tour_client_request_arguments)
{
    tour_client_request_t rq;
    ck_assert_int_eq(
        tour_client_request(&rq, "5", TOUR_CLIENT_REGISTER, "g1.2.r.3", "42", NULL, NULL), 0);
    ck_assert_int_eq(rq.argc, 9);
    const char *want[] = {
        "XADD", "{croupier:tour:5}:in", "*", "op", "register", "req", "g1.2.r.3", "player", "42"};
    for (int i = 0; i < rq.argc; i++)
        ck_assert_str_eq(rq.argv[i], want[i]);
    ck_assert_str_eq(rq.reply_key, "{croupier:tour:5}:reply:g1.2.r.3");
    ck_assert_int_eq(tour_client_request(&rq, "5", TOUR_CLIENT_CANCEL, "x", NULL, NULL, "why"), 0);
    ck_assert_int_eq(rq.argc, 11);
    ck_assert_str_eq(rq.argv[8], "ctl");
    ck_assert_str_eq(rq.argv[10], "why");
    /* What the director would refuse is refused here. */
    ck_assert_int_eq(tour_client_request(&rq, "05", TOUR_CLIENT_REGISTER, "x", "42", NULL, NULL),
                     -EINVAL);
    ck_assert_int_eq(tour_client_request(&rq, "5", TOUR_CLIENT_REGISTER, "x", "0", NULL, NULL),
                     -EINVAL);
    ck_assert_int_eq(tour_client_request(&rq, "5", TOUR_CLIENT_REGISTER, "a b", "1", NULL, NULL),
                     -EINVAL);
    ck_assert_int_eq(tour_client_request(&rq, "5", TOUR_CLIENT_CANCEL, "x", NULL, NULL, ""),
                     -EINVAL);
}
END_TEST

START_TEST(test_tour_client_answers)
{
    tour_client_answer_t a;
    const char *ok = "{\"req\":\"r\",\"op\":\"register\",\"ok\":true,\"code\":\"OK\","
                     "\"tournament\":5,\"player\":42,\"entry\":3,\"stack\":1000,\"reentry\":false}";
    ck_assert_int_eq(tour_client_answer_parse(ok, strlen(ok), &a), 0);
    ck_assert(a.ok);
    ck_assert_int_eq(a.code, TOUR_CODE_OK);
    ck_assert(a.has_entry && a.entry == 3 && a.has_stack && a.stack == 1000 && !a.reentry);
    ck_assert(!a.has_refund);
    const char *no = "{\"ok\":false,\"code\":\"INSUFFICIENT_FUNDS\"}";
    ck_assert_int_eq(tour_client_answer_parse(no, strlen(no), &a), 0);
    ck_assert(!a.ok);
    ck_assert_int_eq(a.code, TOUR_CODE_INSUFFICIENT_FUNDS);
    ck_assert_str_eq(tour_client_code_name(a.code), "INSUFFICIENT_FUNDS");
    const char *odd = "{\"ok\":false,\"code\":\"SOMETHING_NEW\"}";
    ck_assert_int_eq(tour_client_answer_parse(odd, strlen(odd), &a), 0);
    ck_assert_int_eq(a.code, TOUR_CODE_UNKNOWN);
    ck_assert_str_eq(a.code_text, "SOMETHING_NEW");
    ck_assert_int_eq(tour_client_answer_parse("[1]", 3, &a), -EINVAL);
    ck_assert_int_eq(tour_client_answer_parse("{\"ok\":1}", 8, &a), -EINVAL);
}
END_TEST

static redisReply *str_reply(const char *s)
{
    redisReply *r = calloc(1, sizeof *r);
    r->type = REDIS_REPLY_STRING;
    r->str = strdup(s);
    r->len = strlen(s);
    return r;
}

START_TEST(test_tour_client_meta_and_entries)
{
    const char *kv[] = {
        "id",      "5",      "name", "Sunday",        "format",      "mtt",           "status",
        "running", "level",  "2",    "clock_ms",      "100000",      "entries",       "12",
        "players", "9",      "pool", "1200",          "start_at_ms", "1767225600000", "structure",
        structure, "cursor", "1-0",  "cancel_reason", "no quorum"};
    size_t n = sizeof kv / sizeof kv[0];
    redisReply arr = {.type = REDIS_REPLY_ARRAY, .elements = n};
    arr.element = calloc(n, sizeof *arr.element);
    for (size_t i = 0; i < n; i++)
        arr.element[i] = str_reply(kv[i]);
    tour_client_meta_t m;
    ck_assert_int_eq(tour_client_meta_parse(&arr, &m), 0);
    ck_assert_uint_eq(m.id, 5);
    ck_assert_str_eq(m.name, "Sunday");
    ck_assert(m.has_format && m.format == TOUR_FORMAT_MTT);
    ck_assert_int_eq(m.status, TOUR_STATUS_RUNNING);
    ck_assert(m.level == 2 && m.clock_ms == 100000 && m.entries == 12 && m.players == 9);
    ck_assert(m.pool == 1200 && m.start_at_ms == 1767225600000LL);
    ck_assert_str_eq(m.cancel_reason, "no quorum");
    ck_assert_str_eq(m.structure, structure);

    /* The level in force: index 2 (level 2, after the break), its end at 150 s of the clock;
     * the last level never ends. */
    tour_structure_t *s = NULL;
    char err[200];
    ck_assert_int_eq(tour_structure_parse(m.structure, strlen(m.structure), &s, err, sizeof err),
                     0);
    tour_client_level_t lv;
    ck_assert_int_eq(tour_client_level(s, 1, 70000, &lv), 0);
    ck_assert(lv.level != NULL && lv.level->is_break && lv.ends_in_ms == 20000);
    ck_assert_int_eq(tour_client_level(s, 0, 70000, &lv), 0);
    ck_assert_int_eq(lv.ends_in_ms, 0); /* a clock written late: never negative */
    ck_assert_int_eq(tour_client_level(s, 2, m.clock_ms, &lv), 0);
    ck_assert(lv.level != NULL && lv.level->big_blind == 40 && lv.ends_in_ms == -1);
    ck_assert_int_eq(tour_client_level(s, 3, 0, &lv), 0);
    ck_assert_ptr_null(lv.level);

    /* 12 entries of 100: 2 places by the default curve (15 %), 60/40 of 1200. */
    tour_client_payout_t rows[4];
    size_t nr = 0;
    ck_assert_int_eq(tour_client_payouts(s, 12, 1200, rows, 4, &nr), 0);
    ck_assert_uint_eq(nr, 2);
    ck_assert(rows[0].from == 1 && rows[0].to == 1 && rows[1].from == 2 && rows[1].to == 2);
    ck_assert_int_eq(rows[0].amount + rows[1].amount, 1200);
    ck_assert_int_eq(tour_client_payouts(s, 0, 0, rows, 4, &nr), 0);
    ck_assert_uint_eq(nr, 0);
    tour_structure_destroy(s);
    tour_client_meta_clear(&m);
    for (size_t i = 0; i < n; i++)
        freeReplyObject(arr.element[i]);
    free(arr.element);

    redisReply empty = {.type = REDIS_REPLY_ARRAY, .elements = 0};
    ck_assert_int_eq(tour_client_meta_parse(&empty, &m), -ENOENT);
    redisReply nil = {.type = REDIS_REPLY_NIL};
    ck_assert_int_eq(tour_client_meta_parse(&nil, &m), -EINVAL);

    tour_client_entry_t e;
    const char *ej = "{\"entry\":3,\"entries\":2,\"stack\":4350,\"state\":\"playing\",\"paid\":200,"
                     "\"fees\":20,\"place\":0,\"prize\":0,\"table\":3,\"seat\":6,\"bust_start\":0}";
    ck_assert_int_eq(tour_client_entry_parse(ej, strlen(ej), &e), 0);
    ck_assert_str_eq(e.state, "playing");
    ck_assert(e.entries == 2 && e.stack == 4350 && e.table == 3 && e.seat == 6 && e.paid == 200);
    ck_assert_str_eq(e.item, "");
    /* An item prize (docs/tournaments.md "Items"); a malformed one is not shown. */
    const char *ij = "{\"state\":\"finished\",\"place\":1,\"prize\":180,\"item\":\"trophy:gold\"}";
    ck_assert_int_eq(tour_client_entry_parse(ij, strlen(ij), &e), 0);
    ck_assert_str_eq(e.item, "trophy:gold");
    ij = "{\"state\":\"finished\",\"place\":1,\"item\":\"<b>gold</b>\"}";
    ck_assert_int_eq(tour_client_entry_parse(ij, strlen(ij), &e), 0);
    ck_assert_str_eq(e.item, "");
    ck_assert_int_eq(tour_client_entry_parse("{}", 2, &e), -EINVAL);
}
END_TEST

static void ev(const char *text, tour_client_event_t *e)
{
    ck_assert_msg(tour_client_event_parse(text, strlen(text), e) == 0, "%s", text);
}

/* The messages tour_lua.h and tour_play.c publish. */
START_TEST(test_tour_client_events)
{
    tour_client_event_t e;
    ev("5 1-0 started entries 9 overlay 0", &e);
    ck_assert(e.tournament == 5 && e.kind == TOUR_EV_STARTED && e.players == 9);
    ck_assert_str_eq(e.log_id, "1-0");
    ev("5 1-1 level level 3 clock_ms 180000", &e);
    ck_assert(e.kind == TOUR_EV_LEVEL && e.level == 3);
    ev("5 1-2 out player 42 place 7 prize 0", &e);
    ck_assert(e.kind == TOUR_EV_OUT && e.player == 42 && e.place == 7 && e.prize == 0);
    ev("5 1-3 move player 43 from 2 to 1 seat 4 balance", &e);
    ck_assert(e.kind == TOUR_EV_MOVE && e.player == 43 && e.table == 1 && e.seat == 4);
    ev("5 1-4 seated player 44 table 2 seat 0", &e);
    ck_assert(e.kind == TOUR_EV_SEATED && e.player == 44 && e.table == 2 && e.seat == 0);
    ev("5 1-5 hand_for_hand players 4 paid 3", &e);
    ck_assert(e.kind == TOUR_EV_HAND_FOR_HAND && e.players == 4);
    ev("5 1-6 hand_for_hand_over players 3 paid 3", &e);
    ck_assert(e.kind == TOUR_EV_HAND_FOR_HAND_OVER && e.players == 3);
    ev("5 1-7 finished winner 42 prize 600", &e);
    ck_assert(e.kind == TOUR_EV_FINISHED && e.player == 42 && e.place == 1 && e.prize == 600);
    ck_assert_str_eq(e.item, "");
    ev("5 1-7 finished winner 42 prize 600 item trophy:gold", &e);
    ck_assert_str_eq(e.item, "trophy:gold");
    ev("5 1-2 out player 42 place 7 prize 0 item ticket:final-2027", &e);
    ck_assert(e.kind == TOUR_EV_OUT && e.place == 7);
    ck_assert_str_eq(e.item, "ticket:final-2027");
    ev("5 2-2 match_place player 42 place 3 prize 0 item ticket:x", &e);
    ck_assert(e.kind == TOUR_EV_MATCH_PLACE && e.place == 3);
    ck_assert_str_eq(e.item, "ticket:x");
    ev("5 1-8 cancelled reason no quorum", &e);
    ck_assert(e.kind == TOUR_EV_CANCELLED);
    ck_assert_str_eq(e.reason, "no quorum");
    ev("5 1-9 registered player 42 entry 1", &e);
    ck_assert(e.kind == TOUR_EV_REGISTERED && e.player == 42);
    ev("5 1-10 deal table 1 hand 3 level 0", &e);
    ck_assert_int_eq(e.kind, TOUR_EV_OTHER);
    ck_assert_int_eq(tour_client_event_parse("5 1-0", 5, &e), -EINVAL);
    ck_assert_int_eq(tour_client_event_parse("x 1-0 started", 13, &e), -EINVAL);
    ck_assert_int_eq(tour_client_event_parse("", 0, &e), -EINVAL);
}
END_TEST

/* A match's events, and its current stage as GetTournament shows it. */
START_TEST(test_tour_client_match)
{
    tour_client_event_t e;
    ev("5 2-0 match_stage stage 1 format fixed players 9", &e);
    ck_assert(e.kind == TOUR_EV_STAGE && e.stage == 1 && e.players == 9);
    ev("5 2-1 match_out player 42 stage 0", &e);
    ck_assert(e.kind == TOUR_EV_MATCH_OUT && e.player == 42 && e.stage == 0);
    ev("5 2-2 match_place player 42 place 3 prize 120", &e);
    ck_assert(e.kind == TOUR_EV_MATCH_PLACE && e.player == 42 && e.place == 3 && e.prize == 120);
    ev("5 2-3 match_finished paid 2400 pool 2400", &e);
    ck_assert_int_eq(e.kind, TOUR_EV_MATCH_FINISHED);

    static const char structure[] =
        "{\"format\":\"match\",\"game\":\"doudizhu\",\"buy_in\":100,\"fee\":10,"
        "\"min_entrants\":6,\"max_entrants\":6,\"stages\":["
        "{\"format\":\"rising\",\"seats\":3,\"start_score\":1000,\"base_score\":10,"
        "\"growth_pct\":50,\"growth_ms\":1000,\"out_pct\":2000,\"advance\":3},"
        "{\"format\":\"fixed\",\"seats\":3,\"deals_per_round\":2}]}";
    tour_structure_t *st = NULL;
    char err[200];
    ck_assert_int_eq(tour_structure_parse(structure, strlen(structure), &st, err, sizeof err), 0);
    uint64_t ids[6] = {11, 12, 13, 14, 15, 16}, rng = 7;
    match_stage_t *stage = NULL;
    ck_assert_int_eq(
        match_stage_create(&st->match->stages[0], ids, NULL, 6, tour_rng_splitmix64, &rng, &stage),
        0);
    char *txt = match_stage_to_json(stage);
    ck_assert_ptr_nonnull(txt);
    tour_client_match_t mv;
    /* 2.5 s into the stage: the base grew twice by 50 % (10 -> 15 -> 22), the line 20 x base. */
    ck_assert_int_eq(tour_client_match_view(txt, strlen(txt), st, 0, 2500, 12, &mv), 0);
    ck_assert_str_eq(mv.format, "rising");
    ck_assert(mv.stage == 0 && mv.stages == 2 && mv.players == 6 && mv.advance == 3);
    ck_assert_int_eq(mv.base_score, match_rising_base_at(&stage->cfg, 2500));
    ck_assert_int_gt(mv.base_score, 10);
    ck_assert(mv.has_line && mv.line == match_rising_line_at(&stage->cfg, 2500));
    ck_assert(mv.has_score && mv.score == 1000 && !mv.has_mp);
    /* Someone not in the stage: no score; a stage index the structure has not: refused. */
    ck_assert_int_eq(tour_client_match_view(txt, strlen(txt), st, 0, 0, 99, &mv), 0);
    ck_assert(!mv.has_score);
    ck_assert_int_eq(tour_client_match_view(txt, strlen(txt), st, 2, 0, 12, &mv), -EINVAL);
    ck_assert_int_eq(tour_client_match_view("{", 1, st, 0, 0, 12, &mv), -EINVAL);
    free(txt);
    match_stage_destroy(stage);
    tour_structure_destroy(st);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tour_client");
    TCase *tc = tcase_create("requests");
    tcase_add_test(tc, test_tour_client_ids_and_request_ids);
    tcase_add_test(tc, test_tour_client_request_arguments);
    tcase_add_test(tc, test_tour_client_answers);
    suite_add_tcase(s, tc);
    tc = tcase_create("state");
    tcase_add_test(tc, test_tour_client_meta_and_entries);
    tcase_add_test(tc, test_tour_client_events);
    tcase_add_test(tc, test_tour_client_match);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
