/*
 * The traditional engine's rule options (--trad-options, docs/rules/runfast.md "Options",
 * docs/rules/traditional-engine.md), through the real binary (trad_engine_fixture.h): a Run Fast
 * table with report-single, four-with-two and bomb-pays on a stacked deal (the options named by
 * Joined, each seat's Deal and every snapshot; a lower single refused; the bomb paid at once),
 * and bad options stopping croupier-game with exit 2 and the reason.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support.h"
#include "trad_engine_fixture.h"

/* A pass by player, which the server accepts. */
static void pass_ok(rpcc_t *c, uint64_t player)
{
    ck_assert_int_eq(act(c, player, CROUPIER__SHEDDING_MOVE__SHEDDING_PASS, NULL, 0, 0, false),
                     CROUPIER__ERROR_CODE__OK);
}

/* Wire code of a card written rank+suit ("Qs", "Th", "2h"; suits d c h s). */
static uint8_t wc(const char *t)
{
    static const char ranks[] = "3456789TJQKA2";
    int r = (int)(strchr(ranks, t[0]) - ranks);
    int ws = t[1] == 'c' ? 0 : t[1] == 'd' ? 1 : t[1] == 'h' ? 2 : 3;
    return FRAME_CARD(r == 12 ? 2 : r + 3, ws);
}

/* Wire codes of cards written "Ks Kh Kc Kd" (space-separated); returns how many. */
static size_t wcs(const char *text, uint8_t *out)
{
    size_t n = 0;
    for (const char *p = text; *p != '\0'; p += p[2] == ' ' ? 3 : 2)
        out[n++] = wc(p);
    return n;
}

/* The options of a snapshot's SheddingState joined with '+' ("" when none). */
static void snapshot_options(rpcc_t *c, uint64_t player, char *buf, size_t len, uint32_t *units)
{
    Croupier__RpcFrame *r = snapshot_of(c, player);
    const Croupier__Snapshot *sn = r->reply->payload->snapshot;
    ck_assert_int_eq(sn->state_case, CROUPIER__SNAPSHOT__STATE_SHEDDING);
    format_options(sn->shedding->rule_options, sn->shedding->n_rule_options, buf, len);
    *units = sn->shedding->has_bomb_units ? sn->shedding->bomb_units : 0;
    frame_free_rpc(r);
}

/*
 * Run Fast with --trad-options runfast=report-single+four-with-two+bomb-pays:7 and a stacked
 * deal (CROUPIER_TRAD_TEST_DECK): seat 0 opens with an airplane of fifteen cards and keeps one
 * card; seat 1 cannot beat it; seat 2 must bomb it (seat 0 and 1 pass) and leads while seat 0,
 * the next player, holds one card. A lower single is then refused with ILLEGAL_MOVE and nothing
 * changes; its highest single, then a straight (not restricted), go through and seat 2 goes
 * out with a short trio. The Deal of each seat's own cards and every snapshot list the options
 * and the bomb units; the settlement has the bomb paid at once (7 units from each other seat).
 * Rules: docs/rules/runfast.md (Options).
 */
START_TEST(test_runfast_report_single_refuses_a_lower_single_at_a_table_with_options)
{
    env_t e;
    char deck[160] = "runfast:";
    const char *hands[3] = {
        "3s3h3c4s4h4c5s5h5c6s7s8s9sTsJsQs", /* seat 0: airplane 333444555 + 6..J, and Qs */
        "3d4d5d6h7h8h9hThJhQh6c7c8c9cTcJc", /* seat 1: pairs and runs, no trio, no bomb */
        "KsKhKcKdAhAcAd2h6d7d8d9dTdJdQdQc", /* seat 2: the bomb of kings */
    };
    for (int k = 0; k < 16; k++)
        for (int s = 0; s < 3; s++)
            strncat(deck, hands[s] + 2 * k, 2);
    char deck_env[200];
    snprintf(deck_env, sizeof deck_env, "CROUPIER_TRAD_TEST_DECK=%s", deck);
    /* The first deal waits the gap too on the table kit (it was dealt at once): a short gap. */
    char *env[] = {"CROUPIER_TRAD_ACTION_MS=30000", "CROUPIER_TRAD_BOT_FILL_MS=-1",
                   "CROUPIER_TRAD_GAP_MS=100", deck_env, NULL};
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(testenv_start(&e.rig, NULL), 0);
    ck_assert_int_eq(
        testenv_start_game(&e.rig, &e.rig.game, "traditional", 30,
                           (char *[]){"--games", "runfast,doudizhu", "--trad-options",
                                      "runfast=report-single+four-with-two+bomb-pays:7", NULL},
                           env),
        0);
    const uint64_t base = 7901;
    for (int i = 0; i < 3; i++) {
        char who[24];
        snprintf(who, sizeof who, "%llu", (unsigned long long)(base + (uint64_t)i));
        wallet_set(&e, who, 5000);
    }
    rpcc_t *c = rpcc_connect("127.0.0.1", e.rig.game.port, 5000);
    ck_assert_ptr_nonnull(c);
    uint64_t of_seat[3] = {0};
    for (int i = 0; i < 3; i++) {
        int seat = -1;
        char jopts[128];
        uint32_t junits = 0;
        ck_assert_int_eq(
            join_options(c, base + (uint64_t)i, "runfast", 1, &seat, jopts, sizeof jopts, &junits),
            CROUPIER__ERROR_CODE__OK);
        /* Joined names them already, before the first deal */
        ck_assert_str_eq(jopts, "report-single+four-with-two+bomb-pays");
        ck_assert_uint_eq(junits, 7);
        ck_assert(seat >= 0 && seat < 3);
        of_seat[seat] = base + (uint64_t)i;
    }
    /* Each seat's own Deal names the options. */
    int own_deals = 0;
    long long end = ts_now_ms() + 5000;
    while (own_deals < 3 && ts_now_ms() < end) {
        Croupier__RpcFrame *f = rpcc_next_event(c, 200);
        if (f == NULL)
            continue;
        if (f->body_case == CROUPIER__RPC_FRAME__BODY_PUSH &&
            f->push->body_case == CROUPIER__SERVER_MESSAGE__BODY_DEAL) {
            const Croupier__Deal *d = f->push->deal;
            if (d->has_cards) {
                own_deals++;
                ck_assert_int_eq(d->n_rule_options, 3);
                ck_assert_str_eq(d->rule_options[0], "report-single");
                ck_assert_str_eq(d->rule_options[1], "four-with-two");
                ck_assert_str_eq(d->rule_options[2], "bomb-pays");
                ck_assert(d->has_bomb_units);
                ck_assert_uint_eq(d->bomb_units, 7);
            } else {
                ck_assert_int_eq(d->n_rule_options, 0);
            }
        }
        frame_free_rpc(f);
    }
    ck_assert_int_eq(own_deals, 3);
    char opts[128];
    uint32_t units = 0;
    snapshot_options(c, of_seat[1], opts, sizeof opts, &units);
    ck_assert_str_eq(opts, "report-single+four-with-two+bomb-pays");
    ck_assert_uint_eq(units, 7);

    uint8_t cards[16];
    size_t n = wcs("3s 3h 3c 4s 4h 4c 5s 5h 5c 6s 7s 8s 9s Ts Js", cards);
    ck_assert_int_eq(act(c, of_seat[0], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, cards, n, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    pass_ok(c, of_seat[1]);
    n = wcs("Ks Kh Kc Kd", cards);
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, cards, n, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    pass_ok(c, of_seat[0]);
    pass_ok(c, of_seat[1]);
    /* Seat 2 leads; seat 0 holds one card. */
    view_t before, after;
    resume(c, of_seat[2], &before);
    ck_assert_int_eq(before.turn, 2);
    ck_assert_uint_eq(before.left[0], 1);
    ck_assert_uint_eq(before.nlast, 0);
    uint8_t low = wc("6d"), top = wc("2h");
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, &low, 1, 0, false),
                     CROUPIER__ERROR_CODE__ILLEGAL_MOVE);
    resume(c, of_seat[2], &after);
    ck_assert(view_same(&before, &after));
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, &top, 1, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    pass_ok(c, of_seat[0]);
    pass_ok(c, of_seat[1]);
    n = wcs("6d 7d 8d 9d Td Jd Qd", cards);
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, cards, n, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    pass_ok(c, of_seat[0]);
    pass_ok(c, of_seat[1]);
    n = wcs("Ah Ac Ad Qc", cards);
    ck_assert_int_eq(act(c, of_seat[2], CROUPIER__SHEDDING_MOVE__SHEDDING_PLAY, cards, n, 0, false),
                     CROUPIER__ERROR_CODE__OK);
    /* Settled: seat 0 owes 1 card + 7 bomb units, seat 1 owes 16 cards, closed in (x2) + 7. */
    seen_t seen = {0};
    end = ts_now_ms() + 5000;
    while (seen.completed < 1 && ts_now_ms() < end)
        collect(c, &seen, base, 200);
    ck_assert_int_eq(seen.completed, 1);
    ck_assert_int_eq(seen.delta[of_seat[0] - base], -(1 + 7));
    ck_assert_int_eq(seen.delta[of_seat[1] - base], -(32 + 7));
    ck_assert_int_eq(seen.delta[of_seat[2] - base], 1 + 7 + 32 + 7);
    rpcc_close(c);
    env_stop(&e);
}
END_TEST

/* Runs croupier-game with extra flags and returns its exit status (it must exit within 5 s);
 * *log gets its output (caller frees). */
static int game_exit_status(char *const flags[], char **log)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)ts_build_path("engine/process/croupier-game");
    argv[n++] = "--engine";
    argv[n++] = "traditional";
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--health-listen";
    argv[n++] = "127.0.0.1:0";
    for (int i = 0; flags[i] != NULL && n < 15; i++)
        argv[n++] = flags[i];
    argv[n] = NULL;
    ts_proc_t *p = ts_proc_spawn(argv, NULL);
    ck_assert_ptr_nonnull(p);
    int status = 0;
    ck_assert_int_eq(ts_proc_wait(p, 5000, &status), 0);
    *log = ts_proc_log(p);
    ts_proc_free(p);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/*
 * Bad --trad-options (or CROUPIER_TRAD_OPTIONS) stop croupier-game at once with exit 2 and one
 * line naming the problem: an unknown option, an option of another game, an unknown game, a
 * game that is not served, bad bomb units, and options for another engine.
 */
START_TEST(test_bad_trad_options_exit_2_with_the_reason)
{
    static const struct {
        const char *flag, *games, *says;
    } cases[] = {
        {"runfast=report-single+no-such", NULL, "'no-such' is not an option of runfast"},
        {"guandan=four-with-two", NULL, "'four-with-two' is not an option of guandan"},
        {"poker=report-single", NULL, "unknown game 'poker'"},
        {"runfast=report-single", "doudizhu", "runfast has options but is not served"},
        {"runfast=bomb-pays:0", NULL, "wants bomb units 1..1000"},
        {"runfast", NULL, "is not GAME=OPTION"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *log = NULL;
        char *flags[] = {"--trad-options", (char *)cases[i].flag,
                         cases[i].games != NULL ? "--games" : NULL, (char *)cases[i].games, NULL};
        ck_assert_int_eq(game_exit_status(flags, &log), 2);
        ck_assert_msg(strstr(log, "--trad-options") != NULL && strstr(log, cases[i].says) != NULL,
                      "%s: %s", cases[i].flag, log);
        free(log);
    }
    char *log = NULL;
    char *flags[] = {"--engine", "holdem", "--trad-options", "runfast=report-single", NULL};
    ck_assert_int_eq(game_exit_status(flags, &log), 2);
    /* An engine on the table kit refuses option text itself ("the holdem engine takes no rule
     * options"); one without an option check gets croupier-game's own line. */
    ck_assert_msg(strstr(log, "only for --engine traditional") != NULL ||
                      strstr(log, "takes no rule options") != NULL,
                  "%s", log);
    free(log);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trad_engine_options");
    TCase *tc = tcase_create("rule_options");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_runfast_report_single_refuses_a_lower_single_at_a_table_with_options);
    tcase_add_test(tc, test_bad_trad_options_exit_2_with_the_reason);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
