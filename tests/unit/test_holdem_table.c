/*
 * Unit tests for the hold'em table (games/holdem/holdem_table.h) and the PHH replay
 * (holdem_phh.h), following docs/rules/holdem.md:
 *   - every hand under ../shared/oracles/phh/ replays through the table with the recorded
 *     finishing stacks (rules section "Replays");
 *   - side pots with three and four all-ins, split pots and odd chips ("Pots and showdown");
 *   - betting rules: minimum bet and raise, short all-ins, the big blind's option, heads-up
 *     order, straddle, big-blind ante ("Betting");
 *   - timeouts and time bank, sit-out and sit-in, rake ("Timers", "Seats", "Rake");
 *   - tournament hands ("Tournament hands"): blinds set between hands, dead button, dead
 *     small blind, heads-up positions, players waiting for the button, refused positions, and
 *     random tournaments with positions by the big-blind-forward rule;
 *   - random play: chips conserved, no negative stack, every action checked against the
 *     rules by an independent observer, every injected illegal action refused with the table
 *     unchanged. 20,000 hands here; test_holdem_random_heavy.c runs 1,000,000.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "holdem_eval.h"
#include "holdem_phh.h"
#include "holdem_table.h"

#ifndef HOLDEM_RANDOM_HANDS
#define HOLDEM_RANDOM_HANDS 20000
#endif

/* ---- helpers ---------------------------------------------------------------------------- */

#define MAX_EVENTS 256

typedef struct {
    int n;
    holdem_event_t ev[MAX_EVENTS];
} log_t;

static void log_cb(void *ud, const holdem_event_t *ev)
{
    log_t *l = ud;
    if (l->n < MAX_EVENTS)
        l->ev[l->n++] = *ev;
}

static int log_count(const log_t *l, holdem_event_kind_t kind, int seat)
{
    int c = 0;
    for (int i = 0; i < l->n; i++)
        c += l->ev[i].kind == kind && (seat < 0 || l->ev[i].seat == seat);
    return c;
}

static holdem_config_t config(int seats, int64_t sb, int64_t bb)
{
    holdem_config_t c;
    memset(&c, 0, sizeof c);
    c.seats = seats;
    c.small_blind = sb;
    c.big_blind = bb;
    c.action_ms = 10000;
    c.time_bank_ms = 30000;
    return c;
}

static int card(const char *s)
{
    int c = holdem_card_parse(s);
    ck_assert_int_ge(c, 0);
    return c;
}

/*
 * A deck for a hand where every seat 0..n-1 is dealt in and the button is seat n-1: holes[s]
 * is "AsKd" for seat s, board "2c7d9hJs3c"; the rest is filled with unused cards.
 */
static int make_deck(uint8_t *deck, int n, const char *const *holes, const char *board)
{
    int pos = 0;
    uint64_t used = 0;
    uint8_t want[HOLDEM_CARDS];
    memset(want, 255, sizeof want);
    for (int s = 0; s < n; s++)
        for (int r = 0; r < 2; r++)
            want[r * n + s] = (uint8_t)card(holes[s] + 2 * r);
    int b = 2 * n;
    for (int i = 0; i < 5; i++) {
        if (i == 0 || i == 3 || i == 4)
            b++; /* burn */
        want[b++] = (uint8_t)card(board + 2 * i);
    }
    for (int i = 0; i < b; i++)
        if (want[i] != 255)
            used |= 1ull << want[i];
    int next = 0;
    for (pos = 0; pos < HOLDEM_CARDS; pos++) {
        if (pos < b && want[pos] != 255) {
            deck[pos] = want[pos];
            continue;
        }
        while (used & (1ull << next))
            next++;
        deck[pos] = (uint8_t)next;
        used |= 1ull << next;
    }
    return HOLDEM_CARDS;
}

static void act_ok(holdem_table_t *t, int seat, holdem_action_kind_t kind, int64_t amount)
{
    int rc = holdem_table_act(t, seat, kind, amount, 0);
    ck_assert_msg(rc == HOLDEM_OK, "seat %d action %d %lld: %s", seat, kind, (long long)amount,
                  holdem_err_name(rc));
}

/* Expects the action to be refused with err and the table to be left exactly as it was. */
static void act_refused(holdem_table_t *t, int seat, holdem_action_kind_t kind, int64_t amount,
                        int err)
{
    holdem_table_t *before = holdem_table_clone(t);
    int rc = holdem_table_act(t, seat, kind, amount, 0);
    ck_assert_msg(rc == err, "seat %d action %d %lld: got %s, expected %s", seat, kind,
                  (long long)amount, holdem_err_name(rc), holdem_err_name(err));
    ck_assert(holdem_table_same_state(t, before));
    holdem_table_destroy(before);
}

static int64_t stack_of(holdem_table_t *t, int seat)
{
    return holdem_table_stack(t, seat);
}

/* ---- PHH replay ------------------------------------------------------------------------- */

typedef struct {
    holdem_phh_t phh;
    long passed, failed;
    char first_failure[512];
} replay_t;

static void replay_dir(replay_t *r, const char *path)
{
    DIR *d = opendir(path);
    ck_assert_msg(d != NULL, "%s: %s", path, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        struct stat st;
        ck_assert_int_eq(stat(sub, &st), 0);
        size_t len = strlen(sub);
        if (S_ISDIR(st.st_mode)) {
            replay_dir(r, sub);
        } else if (len > 4 && !strcmp(sub + len - 4, ".phh")) {
            char msg[512];
            if (holdem_phh_check_file(sub, &r->phh, msg, sizeof msg) == 0) {
                r->passed++;
            } else {
                if (r->failed++ == 0)
                    snprintf(r->first_failure, sizeof r->first_failure, "%s", msg);
            }
        }
    }
    closedir(d);
}

START_TEST(test_phh_replays_every_oracle_hand_exactly)
{
    const char *shared = getenv("CROUPIER_SHARED");
    char path[1024];
    snprintf(path, sizeof path, "%s/oracles/phh", shared ? shared : "../shared");
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "# SKIP: PHH oracle folder %s is missing\n", path);
        return;
    }
    replay_t *r = calloc(1, sizeof *r);
    replay_dir(r, path);
    ck_assert_msg(r->failed == 0, "%ld failed, first: %s", r->failed, r->first_failure);
    /* oracles/README.md: 1,919 Pluribus hands and 11 WSOP hands. */
    ck_assert_int_eq(r->passed, 1930);
    free(r);
}
END_TEST

START_TEST(test_phh_heads_up_reversed_blinds_and_bb_ante)
{
    /* Heads-up: p1 is the big blind (2) with a big-blind ante (3), p2 the button posts 1. */
    const char *text = "variant = 'NT'\n"
                       "antes = [0, 3]\n"
                       "blinds_or_straddles = [1, 2]\n"
                       "min_bet = 2\n"
                       "starting_stacks = [200, 200]\n"
                       "actions = ['d dh p1 AsAh', 'd dh p2 7c2d', 'p2 cbr 6', 'p1 cc',\n"
                       "  'd db KdQs3c', 'p1 cbr 10', 'p2 f']\n"
                       "finishing_stacks = [206, 194]\n";
    holdem_phh_t *h = malloc(sizeof *h);
    char err[200];
    ck_assert_int_eq(holdem_phh_parse(text, h, err, sizeof err), 0);
    int64_t stacks[2];
    ck_assert_msg(holdem_phh_replay(h, stacks, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(stacks[0], 206); /* 200 - 6 - 3 ante + pot 15 */
    ck_assert_int_eq(stacks[1], 194);
    free(h);
}
END_TEST

START_TEST(test_phh_bad_input_is_explained)
{
    holdem_phh_t *h = malloc(sizeof *h);
    char err[200];
    ck_assert_int_eq(holdem_phh_parse("variant = 'FT'\n", h, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not supported"));
    ck_assert_int_eq(holdem_phh_parse("antes = [1, 2\n", h, err, sizeof err), -EINVAL);
    ck_assert_int_eq(holdem_phh_parse("variant = 'NT'\n", h, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "missing"));
    const char *bad_action = "variant = 'NT'\nantes = [0, 0]\nblinds_or_straddles = [1, 2]\n"
                             "min_bet = 2\nstarting_stacks = [100, 100]\n"
                             "actions = ['d dh p1 AsAh', 'd dh p2 7c2d', 'p1 cc']\n";
    ck_assert_int_eq(holdem_phh_parse(bad_action, h, err, sizeof err), 0);
    int64_t stacks[2];
    ck_assert_int_eq(holdem_phh_replay(h, stacks, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "out of turn"));
    /* Straddles must be a chain of neighbours, each twice the one before. */
    const char *bad_chain[] = {"[1, 2, 4, 6, 0]", "[1, 2, 4, 0, 8]"};
    const char *why[] = {"twice the one before", "follow each other"};
    for (int i = 0; i < 2; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "variant = 'NT'\nantes = [0, 0, 0, 0, 0]\nblinds_or_straddles = %s\n"
                 "min_bet = 2\nstarting_stacks = [100, 100, 100, 100, 100]\nactions = []\n",
                 bad_chain[i]);
        ck_assert_int_eq(holdem_phh_parse(text, h, err, sizeof err), 0);
        ck_assert_int_eq(holdem_phh_replay(h, stacks, err, sizeof err), -EINVAL);
        ck_assert_msg(strstr(err, why[i]) != NULL, "%s", err);
    }
    free(h);
}
END_TEST

/* PokerKit gives the big blind a turn with nothing to decide once the last player who could
 * act folds (here the small blind is all-in on its blind); it can only check. The table gives
 * none; the replay takes that check as the turn the table skipped, and no other. */
START_TEST(test_phh_pokerkit_check_without_a_decision)
{
    holdem_phh_t *h = malloc(sizeof *h);
    char err[200];
    int64_t stacks[3];
    const char *hand = "variant = 'NT'\nantes = [0, 0, 0]\nblinds_or_straddles = [1, 2, 0]\n"
                       "min_bet = 2\nstarting_stacks = [1, 100, 100]\n"
                       "actions = ['d dh p1 AsAh', 'd dh p2 7c2d', 'd dh p3 KsKd', 'p3 f', "
                       "'p2 cc', 'p1 sm AsAh', 'p2 sm 7c2d', 'd db 2c3d4h', 'd db 9s', "
                       "'d db Jd']\nfinishing_stacks = [2, 99, 100]\n";
    ck_assert_int_eq(holdem_phh_parse(hand, h, err, sizeof err), 0);
    ck_assert_msg(holdem_phh_replay(h, stacks, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(stacks[0], 2);
    ck_assert_int_eq(stacks[1], 99);
    ck_assert_int_eq(stacks[2], 100);
    /* A check by the seat that folded is no skipped turn. */
    char *bad = strdup(hand);
    char *at = strstr(bad, "'p2 cc'");
    at[2] = '3';
    ck_assert_int_eq(holdem_phh_parse(bad, h, err, sizeof err), 0);
    ck_assert_int_eq(holdem_phh_replay(h, stacks, err, sizeof err), -EINVAL);
    ck_assert_msg(strstr(err, "'p3 cc'") != NULL, "%s", err);
    free(bad);
    free(h);
}
END_TEST

/* Runs a shell command; returns its exit status and the last line of its output in last. */
static int run_last_line(const char *cmd, char *last, size_t lastlen)
{
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    last[0] = '\0';
    while (fgets(line, sizeof line, f) != NULL)
        snprintf(last, lastlen, "%s", line);
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_phh_replay_command_counts_and_fails_on_mismatch)
{
    const char *build = getenv("CROUPIER_BUILD");
    const char *shared = getenv("CROUPIER_SHARED");
    char exe[1024], cmd[4096], last[1024], dir[] = "/tmp/holdem_phh_XXXXXX";
    if (build == NULL || shared == NULL) {
        fprintf(stderr, "# SKIP: CROUPIER_BUILD / CROUPIER_SHARED not set (run through meson)\n");
        return;
    }
    snprintf(exe, sizeof exe, "%s/tools/croupier-rules", build);
    char oracle[1024];
    snprintf(oracle, sizeof oracle, "%s/oracles/phh", shared);
    struct stat st;
    if (stat(exe, &st) != 0 || stat(oracle, &st) != 0) {
        fprintf(stderr, "# SKIP: %s or %s is missing\n", exe, oracle);
        return;
    }
    snprintf(cmd, sizeof cmd, "'%s' phh-replay '%s' 2>&1", exe, oracle);
    ck_assert_int_eq(run_last_line(cmd, last, sizeof last), 0);
    ck_assert_str_eq(last, "1930 passed, 0 failed\n");

    /* One good hand and one whose finishing stacks were altered. */
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char good[1200], bad[1200];
    snprintf(good, sizeof good, "%s/good.phh", dir);
    snprintf(bad, sizeof bad, "%s/bad.phh", dir);
    const char *hand = "variant = 'NT'\nantes = [0, 0, 0]\nblinds_or_straddles = [1, 2, 0]\n"
                       "min_bet = 2\nstarting_stacks = [100, 100, 100]\n"
                       "actions = ['d dh p1 AsAh', 'd dh p2 7c2d', 'd dh p3 9h9d', 'p3 f', "
                       "'p1 cbr 6', 'p2 f']\n";
    FILE *f = fopen(good, "w");
    fprintf(f, "%sfinishing_stacks = [102, 98, 100]\n", hand);
    fclose(f);
    f = fopen(bad, "w");
    fprintf(f, "%sfinishing_stacks = [103, 97, 100]\n", hand);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' phh-replay '%s' '%s' 2>&1", exe, good, bad);
    ck_assert_int_eq(run_last_line(cmd, last, sizeof last), 1);
    ck_assert_str_eq(last, "1 passed, 1 failed\n");
    snprintf(cmd, sizeof cmd, "'%s' eval AsKsQsJsTs9h2c", exe);
    ck_assert_int_eq(run_last_line(cmd, last, sizeof last), 0);
    ck_assert_ptr_nonnull(strstr(last, "straight flush"));
    unlink(good);
    unlink(bad);
    rmdir(dir);
}
END_TEST

/* ---- side pots -------------------------------------------------------------------------- */

START_TEST(test_pots_three_all_ins_of_different_sizes)
{
    holdem_config_t c = config(4, 5, 10);
    log_t *l = calloc(1, sizeof *l);
    holdem_table_t *t = holdem_table_create(&c, log_cb, l, NULL);
    int64_t st[4] = {100, 300, 600, 1000};
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(holdem_table_sit(t, s, st[s]), HOLDEM_OK);
    const char *holes[] = {"AsAh", "KsKh", "8c8d", "QsQh"};
    uint8_t deck[52];
    make_deck(deck, 4, holes, "2c7d9hJs3c");
    ck_assert_int_eq(holdem_table_start_hand(t, 3, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_ALL_IN, 0); /* UTG 600 */
    act_ok(t, 3, HOLDEM_CALL, 0);   /* button calls 600 */
    act_ok(t, 0, HOLDEM_ALL_IN, 0); /* SB 100 */
    act_ok(t, 1, HOLDEM_ALL_IN, 0); /* BB 300 */
    ck_assert(!holdem_table_in_hand(t));
    /* main 400 -> AA; side 600 (300-100 x3) -> KK; side 600 (600-300 x2) -> QQ over 88. */
    ck_assert_int_eq(stack_of(t, 0), 400);
    ck_assert_int_eq(stack_of(t, 1), 600);
    ck_assert_int_eq(stack_of(t, 2), 0);
    ck_assert_int_eq(stack_of(t, 3), 400 + 600);
    holdem_settlement_t s;
    ck_assert_int_eq(holdem_table_settlement(t, &s), HOLDEM_OK);
    ck_assert_int_eq(s.delta[0] + s.delta[1] + s.delta[2] + s.delta[3], 0);
    ck_assert_int_eq(s.delta[3], 0);
    /* All-in showdown: every hand is tabled. */
    ck_assert_int_eq(log_count(l, HOLDEM_EV_SHOW, -1), 4);
    holdem_table_destroy(t);
    free(l);
}
END_TEST

START_TEST(test_pots_four_all_ins_of_different_sizes)
{
    holdem_config_t c = config(5, 5, 10);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    int64_t st[5] = {50, 150, 250, 400, 1000};
    for (int s = 0; s < 5; s++)
        holdem_table_sit(t, s, st[s]);
    const char *holes[] = {"4c5d", "6c8d", "AsAh", "KsKh", "QsQh"};
    uint8_t deck[52];
    make_deck(deck, 5, holes, "2c7d9hJs3c");
    ck_assert_int_eq(holdem_table_start_hand(t, 4, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_ALL_IN, 0); /* 250 */
    act_ok(t, 3, HOLDEM_ALL_IN, 0); /* 400 */
    act_ok(t, 4, HOLDEM_CALL, 0);   /* 400 */
    act_ok(t, 0, HOLDEM_ALL_IN, 0); /* 50 */
    act_ok(t, 1, HOLDEM_ALL_IN, 0); /* 150 */
    ck_assert(!holdem_table_in_hand(t));
    /* Pots 250 / 400 / 300 go to AA (seat 2); the last 300 (s3, s4) to KK. */
    ck_assert_int_eq(stack_of(t, 0), 0);
    ck_assert_int_eq(stack_of(t, 1), 0);
    ck_assert_int_eq(stack_of(t, 2), 950);
    ck_assert_int_eq(stack_of(t, 3), 300);
    ck_assert_int_eq(stack_of(t, 4), 600);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_pots_split_odd_chip_goes_left_of_button)
{
    holdem_config_t c = config(3, 5, 10);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    for (int s = 0; s < 3; s++)
        holdem_table_sit(t, s, 1000);
    const char *holes[] = {"6h7h", "2c3d", "4c5d"};
    uint8_t deck[52];
    make_deck(deck, 3, holes, "AsKsQdJcTh"); /* the board plays: a straight for everyone */
    ck_assert_int_eq(holdem_table_start_hand(t, 2, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_CALL, 0);
    act_ok(t, 0, HOLDEM_FOLD, 0);
    act_ok(t, 1, HOLDEM_CHECK, 0);
    for (int street = 0; street < 3; street++) {
        act_ok(t, 1, HOLDEM_CHECK, 0);
        act_ok(t, 2, HOLDEM_CHECK, 0);
    }
    ck_assert(!holdem_table_in_hand(t));
    /* Pot 25 split: 13 to seat 1 (first winner left of the button), 12 to the button. */
    ck_assert_int_eq(stack_of(t, 0), 995);
    ck_assert_int_eq(stack_of(t, 1), 1003);
    ck_assert_int_eq(stack_of(t, 2), 1002);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_pots_three_way_split_and_side_pot_to_other_winner)
{
    /* Seats 0 and 1 tie for the main pot; seat 2 (more chips) wins the side pot alone. */
    holdem_config_t c = config(4, 1, 2);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    int64_t st[4] = {51, 51, 500, 500};
    for (int s = 0; s < 4; s++)
        holdem_table_sit(t, s, st[s]);
    /* Board AsKsQdJc2h: any ten makes broadway; seat 3 has nothing. */
    const char *holes[] = {"Td3c", "Th4c", "TcTs", "5h6h"};
    uint8_t deck[52];
    make_deck(deck, 4, holes, "AsKsQdJc2h");
    ck_assert_int_eq(holdem_table_start_hand(t, 3, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_RAISE, 101);
    act_ok(t, 3, HOLDEM_CALL, 0);
    act_ok(t, 0, HOLDEM_ALL_IN, 0); /* 51 */
    act_ok(t, 1, HOLDEM_ALL_IN, 0); /* 51 */
    /* Flop: seats 2 and 3 still bet; seat 3 folds to a bet. */
    act_ok(t, 2, HOLDEM_BET, 10);
    act_ok(t, 3, HOLDEM_FOLD, 0);
    ck_assert(!holdem_table_in_hand(t));
    /* Main pot 4 x 51 = 204, three-way tie: 68 each. Side pot (101-51) x 2 = 100 -> seat 2;
     * seat 2's uncalled 10 comes back. */
    ck_assert_int_eq(stack_of(t, 0), 68);
    ck_assert_int_eq(stack_of(t, 1), 68);
    ck_assert_int_eq(stack_of(t, 2), 500 - 101 + 68 + 100);
    ck_assert_int_eq(stack_of(t, 3), 500 - 101);
    holdem_table_destroy(t);
}
END_TEST

/* ---- betting ---------------------------------------------------------------------------- */

START_TEST(test_betting_min_bet_and_min_raise_enforced)
{
    holdem_config_t c = config(3, 50, 100);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    for (int s = 0; s < 3; s++)
        holdem_table_sit(t, s, 10000);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 2, deck, 52), HOLDEM_OK);
    act_refused(t, 0, HOLDEM_CALL, 0, HOLDEM_E_OUT_OF_TURN);
    act_refused(t, 2, HOLDEM_CHECK, 0, HOLDEM_E_NOT_ALLOWED);
    act_refused(t, 2, HOLDEM_BET, 300, HOLDEM_E_NOT_ALLOWED); /* a bet stands: raise */
    act_refused(t, 2, HOLDEM_RAISE, 199, HOLDEM_E_BELOW_MIN);
    act_refused(t, 2, HOLDEM_RAISE, 10001, HOLDEM_E_OVER_STACK);
    act_refused(t, 2, (holdem_action_kind_t)42, 0, HOLDEM_E_MALFORMED);
    act_refused(t, 9, HOLDEM_FOLD, 0, HOLDEM_E_MALFORMED);
    act_ok(t, 2, HOLDEM_RAISE, 300); /* raise of 200 */
    act_refused(t, 0, HOLDEM_RAISE, 499, HOLDEM_E_BELOW_MIN);
    act_ok(t, 0, HOLDEM_RAISE, 500);
    act_ok(t, 1, HOLDEM_FOLD, 0);
    act_ok(t, 2, HOLDEM_CALL, 0);
    /* Flop: minimum bet is the big blind. */
    ck_assert_int_eq(holdem_table_to_act(t), 0);
    act_refused(t, 0, HOLDEM_RAISE, 200, HOLDEM_E_NOT_ALLOWED);
    act_refused(t, 0, HOLDEM_BET, 99, HOLDEM_E_BELOW_MIN);
    act_ok(t, 0, HOLDEM_BET, 100);
    holdem_legal_t l;
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.seat, 2);
    ck_assert(l.can_raise && !l.can_check);
    ck_assert_int_eq(l.to_call, 100);
    ck_assert_int_eq(l.min_to, 200);
    ck_assert_int_eq(l.max_to, 9500);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_betting_short_all_in_does_not_reopen_for_players_who_acted)
{
    holdem_config_t c = config(4, 50, 100);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    int64_t st[4] = {10000, 10000, 10000, 250};
    for (int s = 0; s < 4; s++)
        holdem_table_sit(t, s, st[s]);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 3, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_RAISE, 200); /* full raise of 100 */
    act_ok(t, 3, HOLDEM_ALL_IN, 0);  /* 250: 50 more, not a full raise */
    holdem_legal_t l;
    holdem_table_legal(t, &l);
    ck_assert(l.can_raise); /* seat 0 has not acted yet */
    act_ok(t, 0, HOLDEM_FOLD, 0);
    act_ok(t, 1, HOLDEM_CALL, 0);
    /* Seat 2 acted before the short all-in: call or fold only. */
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.seat, 2);
    ck_assert(!l.can_raise);
    act_refused(t, 2, HOLDEM_RAISE, 1000, HOLDEM_E_NOT_ALLOWED);
    act_refused(t, 2, HOLDEM_ALL_IN, 0, HOLDEM_E_NOT_ALLOWED);
    act_ok(t, 2, HOLDEM_CALL, 0);
    ck_assert_int_eq(holdem_table_pot_total(t), 50 + 250 * 3);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_betting_two_short_all_ins_adding_to_full_raise_reopen)
{
    holdem_config_t c = config(4, 50, 100);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    int64_t st[4] = {350, 10000, 10000, 260};
    for (int s = 0; s < 4; s++)
        holdem_table_sit(t, s, st[s]);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 3, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_RAISE, 200);
    act_ok(t, 3, HOLDEM_ALL_IN, 0); /* 260 */
    act_ok(t, 0, HOLDEM_ALL_IN, 0); /* 350: 150 over seat 2's 200, a full raise for seat 2 */
    act_ok(t, 1, HOLDEM_CALL, 0);
    holdem_legal_t l;
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.seat, 2);
    ck_assert(l.can_raise);
    ck_assert_int_eq(l.min_to, 350 + 100);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_betting_big_blind_has_option_and_heads_up_order)
{
    holdem_config_t c = config(2, 1, 2);
    log_t *l = calloc(1, sizeof *l);
    holdem_table_t *t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 100);
    holdem_table_sit(t, 1, 100);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 1, deck, 52), HOLDEM_OK);
    /* Heads-up: the button (seat 1) posts the small blind and acts first before the flop. */
    ck_assert_int_eq(stack_of(t, 1), 99);
    ck_assert_int_eq(stack_of(t, 0), 98);
    ck_assert_int_eq(holdem_table_to_act(t), 1);
    act_ok(t, 1, HOLDEM_CALL, 0);
    holdem_legal_t lg;
    holdem_table_legal(t, &lg);
    ck_assert_int_eq(lg.seat, 0); /* the big blind's option */
    ck_assert(lg.can_check && lg.can_raise);
    act_ok(t, 0, HOLDEM_CHECK, 0);
    /* After the flop the big blind acts first. */
    ck_assert_int_eq(holdem_table_to_act(t), 0);
    uint8_t b[5];
    ck_assert_int_eq(holdem_table_board(t, b), 3);
    /* Dealing order: seat 0 (left of the button) gets cards 0 and 2, seat 1 cards 1 and 3;
     * a burn (4), then the flop 5 6 7. */
    ck_assert_int_eq(b[0], 5);
    for (int i = 0; i < l->n; i++)
        if (l->ev[i].kind == HOLDEM_EV_HOLE && l->ev[i].seat == 0) {
            ck_assert_int_eq(l->ev[i].cards[0], 0);
            ck_assert_int_eq(l->ev[i].cards[1], 2);
        }
    holdem_table_destroy(t);
    free(l);
}
END_TEST

START_TEST(test_betting_straddle_acts_last_and_sets_min_raise)
{
    holdem_config_t c = config(4, 50, 100);
    c.straddle = 200;
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    for (int s = 0; s < 4; s++)
        holdem_table_sit(t, s, 10000);
    ck_assert_int_eq(holdem_table_set_straddle(t, 2, true), HOLDEM_OK);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 3, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(stack_of(t, 2), 9800);
    holdem_legal_t l;
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.seat, 3);
    ck_assert_int_eq(l.to_call, 200);
    ck_assert_int_eq(l.min_to, 400);
    act_ok(t, 3, HOLDEM_CALL, 0);
    act_ok(t, 0, HOLDEM_CALL, 0);
    act_ok(t, 1, HOLDEM_CALL, 0);
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.seat, 2); /* the straddler's option */
    ck_assert(l.can_check && l.can_raise);
    holdem_table_destroy(t);
}
END_TEST

/* The first event of a kind (for seat, or any seat when seat < 0) at or after index from. */
static int log_find(const log_t *l, int from, holdem_event_kind_t kind, int seat)
{
    for (int i = from; i < l->n; i++)
        if (l->ev[i].kind == kind && (seat < 0 || l->ev[i].seat == seat))
            return i;
    return -1;
}

/* docs/rules/holdem.md "Blinds, antes, straddles": a chain of straddles by the seats' standing
 * choices, each twice the one before; the action starts left of the last straddler, who acts
 * last (its option), and the minimum raise is twice the last straddle. */
START_TEST(test_betting_restraddle_chain_acts_left_of_last_straddler)
{
    holdem_config_t c = config(7, 1, 2);
    c.straddle = 4;
    c.max_straddles = 3;
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    for (int s = 0; s < 7; s++)
        holdem_table_sit(t, s, 1000);
    /* Button 6: blinds 0 and 1, straddles 2 (4), 3 (8), 4 (16); seat 5 opted in too, but the
     * chain is three long at most. */
    for (int s = 2; s <= 5; s++)
        ck_assert_int_eq(holdem_table_set_straddle(t, s, true), HOLDEM_OK);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 6, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(stack_of(t, 2), 996);
    ck_assert_int_eq(stack_of(t, 3), 992);
    ck_assert_int_eq(stack_of(t, 4), 984);
    ck_assert_int_eq(stack_of(t, 5), 1000);
    holdem_legal_t l;
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.seat, 5);
    ck_assert_int_eq(l.to_call, 16);
    ck_assert_int_eq(l.min_to, 32);
    act_refused(t, 5, HOLDEM_RAISE, 31, HOLDEM_E_BELOW_MIN);
    for (int s = 5; s <= 7 + 3; s++)
        act_ok(t, s % 7, HOLDEM_CALL, 0);
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.seat, 4); /* the last straddler's option */
    ck_assert(l.can_check && l.can_raise);
    ck_assert_int_eq(l.min_to, 32);
    holdem_table_destroy(t);

    /* The chain stops at the first seat that does not straddle, and never reaches the
     * blinds: at 4 seats with no limit it ends at the button. */
    c = config(4, 1, 2);
    c.straddle = 4;
    c.max_straddles = 8;
    t = holdem_table_create(&c, NULL, NULL, NULL);
    for (int s = 0; s < 4; s++) {
        holdem_table_sit(t, s, 1000);
        holdem_table_set_straddle(t, s, true);
    }
    ck_assert_int_eq(holdem_table_start_hand(t, 3, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(stack_of(t, 0), 999);
    ck_assert_int_eq(stack_of(t, 1), 998);
    ck_assert_int_eq(stack_of(t, 2), 996);
    ck_assert_int_eq(stack_of(t, 3), 992);
    ck_assert_int_eq(holdem_table_to_act(t), 0);
    holdem_table_destroy(t);

    /* A Mississippi straddle two seats after under the gun, re-straddled by the button: the
     * action starts with the small blind, under the gun acts after the blinds, and the button
     * acts last. */
    c = config(6, 1, 2);
    c.straddle = 4;
    c.max_straddles = 2;
    c.straddle_position = 2;
    t = holdem_table_create(&c, NULL, NULL, NULL);
    for (int s = 0; s < 6; s++) {
        holdem_table_sit(t, s, 1000);
        holdem_table_set_straddle(t, s, true);
    }
    ck_assert_int_eq(holdem_table_start_hand(t, 5, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(stack_of(t, 2), 1000);
    ck_assert_int_eq(stack_of(t, 3), 1000);
    ck_assert_int_eq(stack_of(t, 4), 996);
    ck_assert_int_eq(stack_of(t, 5), 992);
    holdem_legal_t ml;
    holdem_table_legal(t, &ml);
    ck_assert_int_eq(ml.seat, 0);
    ck_assert_int_eq(ml.to_call, 7);
    ck_assert_int_eq(ml.min_to, 16);
    for (int s = 0; s <= 4; s++)
        act_ok(t, s, HOLDEM_CALL, 0);
    holdem_table_legal(t, &ml);
    ck_assert_int_eq(ml.seat, 5);
    ck_assert(ml.can_check && ml.can_raise);
    holdem_table_destroy(t);
}
END_TEST

/* Straddle offers (cfg.straddle_offers): before the deal each seat of the chain is asked in
 * order; the exact amount straddles, a check or a timeout declines and ends the chain; wrong
 * answers are refused with the table unchanged; the hole cards come after the answers. */
START_TEST(test_straddle_offers_go_to_the_seats_in_order)
{
    holdem_config_t c = config(6, 5, 10);
    c.straddle = 20;
    c.max_straddles = 3;
    c.straddle_offers = true;
    log_t *l = calloc(1, sizeof *l);
    holdem_table_t *t = holdem_table_create(&c, log_cb, l, NULL);
    for (int s = 0; s < 6; s++)
        holdem_table_sit(t, s, s == 4 ? 30 : 1000); /* seat 4 cannot cover a re-re-straddle */
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 5, deck, 52), HOLDEM_OK);
    holdem_legal_t lg;
    holdem_table_legal(t, &lg);
    ck_assert_int_eq(lg.seat, 2);
    ck_assert(lg.straddle_offer && lg.can_check && lg.can_bet);
    ck_assert_int_eq(lg.min_to, 20);
    ck_assert_int_eq(lg.max_to, 20);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_HOLE, -1), 0);
    int ta = log_find(l, 0, HOLDEM_EV_TO_ACT, 2);
    ck_assert_int_ge(ta, 0);
    ck_assert_int_eq(l->ev[ta].detail, 1);
    ck_assert_int_eq(l->ev[ta].to, 20);
    act_refused(t, 3, HOLDEM_BET, 20, HOLDEM_E_OUT_OF_TURN);
    act_refused(t, 2, HOLDEM_FOLD, 0, HOLDEM_E_NOT_ALLOWED);
    act_refused(t, 2, HOLDEM_CALL, 0, HOLDEM_E_NOT_ALLOWED);
    act_refused(t, 2, HOLDEM_BET, 19, HOLDEM_E_BELOW_MIN);
    act_refused(t, 2, HOLDEM_BET, 21, HOLDEM_E_NOT_ALLOWED);
    act_refused(t, 2, HOLDEM_BET, 5000, HOLDEM_E_OVER_STACK);
    act_ok(t, 2, HOLDEM_BET, 20);
    ck_assert_int_eq(stack_of(t, 2), 980);
    holdem_table_legal(t, &lg);
    ck_assert_int_eq(lg.seat, 3); /* the re-straddle, twice the straddle */
    ck_assert(lg.straddle_offer);
    ck_assert_int_eq(lg.min_to, 40);
    ck_assert_int_eq(holdem_table_time_allowed_ms(t), 10000 + 30000);
    act_ok(t, 3, HOLDEM_RAISE, 40);
    /* Seat 4 (30 chips) cannot post 80: the chain ends, the cards are dealt, and the action
     * starts left of the last straddler. */
    ck_assert_int_eq(log_count(l, HOLDEM_EV_HOLE, -1), 6);
    holdem_table_legal(t, &lg);
    ck_assert(!lg.straddle_offer);
    ck_assert_int_eq(lg.seat, 4);
    ck_assert_int_eq(lg.to_call, 30);
    act_ok(t, 4, HOLDEM_FOLD, 0);
    ck_assert_int_eq(holdem_table_to_act(t), 5);
    holdem_legal_t l5;
    holdem_table_legal(t, &l5);
    ck_assert_int_eq(l5.min_to, 80);
    holdem_table_destroy(t);

    /* A check or a timeout declines: no straddle, and the chain is over. */
    memset(l, 0, sizeof *l);
    t = holdem_table_create(&c, log_cb, l, NULL);
    for (int s = 0; s < 6; s++)
        holdem_table_sit(t, s, 1000);
    ck_assert_int_eq(holdem_table_start_hand(t, 5, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_TIMEOUT, 0);
    ck_assert_int_eq(stack_of(t, 2), 1000);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_POST, 2), 0);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_HOLE, -1), 6);
    holdem_table_legal(t, &lg);
    ck_assert(!lg.straddle_offer);
    ck_assert_int_eq(lg.seat, 2); /* under the gun acts first, as without straddles */
    ck_assert_int_eq(lg.to_call, 10);
    ck_assert_int_eq(lg.min_to, 20);
    holdem_table_destroy(t);

    /* Heads-up nobody is offered a straddle. */
    c.seats = 2;
    t = holdem_table_create(&c, NULL, NULL, NULL);
    holdem_table_sit(t, 0, 1000);
    holdem_table_sit(t, 1, 1000);
    ck_assert_int_eq(holdem_table_start_hand(t, 1, deck, 52), HOLDEM_OK);
    holdem_table_legal(t, &lg);
    ck_assert(!lg.straddle_offer);
    ck_assert_int_eq(lg.seat, 1);
    holdem_table_destroy(t);
    free(l);
}
END_TEST

/* docs/rules/holdem.md "Betting", no-decision turns: a player who owes nothing while every other
 * live player is all-in gets no turn (HOLDEM_EV_NO_DECISION); the board runs out. */
START_TEST(test_betting_no_turn_without_a_decision)
{
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    /* Heads-up: the small blind (the button) is all-in for less than the big blind. */
    holdem_config_t c = config(2, 5, 10);
    log_t *l = calloc(1, sizeof *l);
    holdem_table_t *t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 500);
    holdem_table_sit(t, 1, 3);
    ck_assert_int_eq(holdem_table_start_hand(t, 1, deck, 52), HOLDEM_OK);
    ck_assert(!holdem_table_in_hand(t));
    ck_assert_int_eq(log_count(l, HOLDEM_EV_TO_ACT, -1), 0);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_NO_DECISION, 0), 1);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_BOARD, -1), 3);
    ck_assert_int_eq(stack_of(t, 0) + stack_of(t, 1), 503);
    holdem_table_destroy(t);

    /* Multi-way: both opponents all-in for less than the big blind; it owes nothing. */
    memset(l, 0, sizeof *l);
    c = config(3, 5, 10);
    t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 4);   /* small blind, all-in on it */
    holdem_table_sit(t, 1, 500); /* big blind */
    holdem_table_sit(t, 2, 8);   /* button: calls all-in for less */
    ck_assert_int_eq(holdem_table_start_hand(t, 2, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_to_act(t), 2);
    act_ok(t, 2, HOLDEM_CALL, 0);
    ck_assert(!holdem_table_in_hand(t));
    ck_assert_int_eq(log_count(l, HOLDEM_EV_TO_ACT, 1), 0);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_NO_DECISION, 1), 1);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_BOARD, -1), 3);
    holdem_table_destroy(t);

    /* The last opponent who could act folds: the big blind, facing only an all-in small
     * blind it covers, has nothing to decide either. */
    memset(l, 0, sizeof *l);
    t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 4);
    holdem_table_sit(t, 1, 500);
    holdem_table_sit(t, 2, 500);
    ck_assert_int_eq(holdem_table_start_hand(t, 2, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_FOLD, 0);
    ck_assert(!holdem_table_in_hand(t));
    ck_assert_int_eq(log_count(l, HOLDEM_EV_TO_ACT, 1), 0);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_NO_DECISION, 1), 1);
    holdem_table_destroy(t);

    /* But a big blind with an opponent who can still answer a raise keeps its option, and one
     * who owes chips to an all-in player decides whether to call. */
    memset(l, 0, sizeof *l);
    t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 4);
    holdem_table_sit(t, 1, 500);
    holdem_table_sit(t, 2, 500);
    ck_assert_int_eq(holdem_table_start_hand(t, 2, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_CALL, 0);
    ck_assert_int_eq(holdem_table_to_act(t), 1);
    act_ok(t, 1, HOLDEM_CHECK, 0);
    ck_assert_int_eq(holdem_table_to_act(t), 1); /* the flop: the two with chips bet on */
    holdem_table_destroy(t);
    memset(l, 0, sizeof *l);
    t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 400);
    holdem_table_sit(t, 1, 500);
    holdem_table_sit(t, 2, 30);
    ck_assert_int_eq(holdem_table_start_hand(t, 2, deck, 52), HOLDEM_OK);
    act_ok(t, 2, HOLDEM_ALL_IN, 0);
    act_ok(t, 0, HOLDEM_FOLD, 0);
    holdem_legal_t lg;
    holdem_table_legal(t, &lg);
    ck_assert_int_eq(lg.seat, 1);
    ck_assert_int_eq(lg.to_call, 20);
    ck_assert(!lg.can_raise);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_NO_DECISION, -1), 0);
    holdem_table_destroy(t);
    free(l);
}
END_TEST

/* PokerKit's conventions for replays (cfg.pokerkit_rules, docs/rules/holdem.md "Replays"):
 * the minimum raise over a straddle is the big blind; a big-blind ante comes before a short big
 * blind, which is called for what it posted (the reopening rule, the odd chips and equal blinds
 * heads-up are covered by the PokerKit hands of tests/phh). */
START_TEST(test_pokerkit_rules_where_the_house_rules_differ)
{
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    holdem_config_t c = config(4, 1, 2);
    c.straddle = 4;
    c.pokerkit_rules = true;
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    for (int s = 0; s < 4; s++)
        holdem_table_sit(t, s, 100);
    holdem_table_set_straddle(t, 2, true);
    ck_assert_int_eq(holdem_table_start_hand(t, 3, deck, 52), HOLDEM_OK);
    holdem_legal_t lg;
    holdem_table_legal(t, &lg);
    ck_assert_int_eq(lg.seat, 3);
    ck_assert_int_eq(lg.min_to, 6); /* house rule: 8 */
    holdem_table_destroy(t);

    c = config(3, 5, 10);
    c.big_blind_ante = 10;
    c.pokerkit_rules = true;
    t = holdem_table_create(&c, NULL, NULL, NULL);
    holdem_table_sit(t, 0, 100);
    holdem_table_sit(t, 1, 16); /* ante 10 first, then 6 of the blind */
    holdem_table_sit(t, 2, 100);
    ck_assert_int_eq(holdem_table_start_hand(t, 2, deck, 52), HOLDEM_OK);
    holdem_table_legal(t, &lg);
    ck_assert_int_eq(lg.seat, 2);
    ck_assert_int_eq(lg.to_call, 6); /* house rule: the full big blind, 10 */
    ck_assert_int_eq(lg.min_to, 16);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_betting_big_blind_ante_is_dead_and_blind_comes_first)
{
    holdem_config_t c = config(3, 50, 100);
    c.big_blind_ante = 100;
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    holdem_table_sit(t, 0, 1000);
    holdem_table_sit(t, 1, 150); /* big blind: 100 blind first, then only 50 of the ante */
    holdem_table_sit(t, 2, 1000);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 2, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(stack_of(t, 1), 0);
    ck_assert_int_eq(holdem_table_pot_total(t), 50 + 100 + 50);
    act_ok(t, 2, HOLDEM_FOLD, 0);
    act_ok(t, 0, HOLDEM_FOLD, 0);
    /* The big blind wins the small blind, its own blind and its ante back. */
    ck_assert_int_eq(stack_of(t, 1), 200);
    ck_assert_int_eq(stack_of(t, 0), 950);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_showdown_river_aggressor_shows_first_and_loser_mucks)
{
    holdem_config_t c = config(2, 1, 2);
    log_t *l = calloc(1, sizeof *l);
    holdem_table_t *t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 100);
    holdem_table_sit(t, 1, 100);
    const char *holes[] = {"AsAh", "7c2d"};
    uint8_t deck[52];
    make_deck(deck, 2, holes, "KdQs3c8h9s");
    ck_assert_int_eq(holdem_table_start_hand(t, 1, deck, 52), HOLDEM_OK);
    act_ok(t, 1, HOLDEM_CALL, 0);
    act_ok(t, 0, HOLDEM_CHECK, 0);
    for (int street = 0; street < 2; street++) {
        act_ok(t, 0, HOLDEM_CHECK, 0);
        act_ok(t, 1, HOLDEM_CHECK, 0);
    }
    act_ok(t, 0, HOLDEM_CHECK, 0);
    act_ok(t, 1, HOLDEM_BET, 10); /* the river aggressor shows first */
    act_ok(t, 0, HOLDEM_CALL, 0);
    int show = -1, muck = -1;
    for (int i = 0; i < l->n; i++) {
        if (l->ev[i].kind == HOLDEM_EV_SHOW && show < 0)
            show = l->ev[i].seat;
        if (l->ev[i].kind == HOLDEM_EV_MUCK)
            muck = l->ev[i].seat;
    }
    ck_assert_int_eq(show, 1);
    ck_assert_int_eq(muck, -1); /* aces beat the shown seven-high: seat 0 shows too */
    ck_assert_int_eq(log_count(l, HOLDEM_EV_SHOW, 0), 1);
    ck_assert_int_eq(stack_of(t, 0), 112);
    holdem_table_destroy(t);

    /* Reversed: the aces bet and show first, the seven-high caller mucks. */
    l->n = 0;
    t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 100);
    holdem_table_sit(t, 1, 100);
    ck_assert_int_eq(holdem_table_start_hand(t, 1, deck, 52), HOLDEM_OK);
    act_ok(t, 1, HOLDEM_CALL, 0);
    act_ok(t, 0, HOLDEM_CHECK, 0);
    for (int street = 0; street < 2; street++) {
        act_ok(t, 0, HOLDEM_CHECK, 0);
        act_ok(t, 1, HOLDEM_CHECK, 0);
    }
    act_ok(t, 0, HOLDEM_BET, 10);
    act_ok(t, 1, HOLDEM_CALL, 0);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_SHOW, 0), 1);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_MUCK, 1), 1);
    ck_assert_int_eq(log_count(l, HOLDEM_EV_SHOW, 1), 0);
    holdem_table_destroy(t);
    free(l);
}
END_TEST

/* ---- timers, seats, rake ---------------------------------------------------------------- */

START_TEST(test_timeout_checks_if_possible_else_folds_and_uses_bank)
{
    holdem_config_t c = config(2, 1, 2);
    c.action_ms = 1000;
    c.time_bank_ms = 5000;
    log_t *l = calloc(1, sizeof *l);
    holdem_table_t *t = holdem_table_create(&c, log_cb, l, NULL);
    holdem_table_sit(t, 0, 100);
    holdem_table_sit(t, 1, 100);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_start_hand(t, 1, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_time_allowed_ms(t), 6000);
    ck_assert_int_eq(holdem_table_act(t, 1, HOLDEM_CALL, 0, 3000), HOLDEM_OK);
    /* Seat 0 (big blind) may check: a timeout checks. */
    ck_assert_int_eq(holdem_table_act(t, 0, HOLDEM_TIMEOUT, 0, 6000), HOLDEM_OK);
    ck_assert(holdem_table_in_hand(t));
    ck_assert_int_eq(l->ev[l->n - 1].kind,
                     HOLDEM_EV_BOARD == l->ev[l->n - 1].kind ? HOLDEM_EV_BOARD : HOLDEM_EV_TO_ACT);
    ck_assert_int_eq(holdem_table_to_act(t), 0);
    ck_assert_int_eq(holdem_table_time_allowed_ms(t), 1000); /* bank used up */
    act_ok(t, 0, HOLDEM_BET, 2);
    ck_assert_int_eq(holdem_table_time_allowed_ms(t), 1000 + 3000);
    /* Seat 1 faces a bet: a timeout folds. */
    ck_assert_int_eq(holdem_table_act(t, 1, HOLDEM_TIMEOUT, 0, 4000), HOLDEM_OK);
    ck_assert(!holdem_table_in_hand(t));
    ck_assert_int_eq(stack_of(t, 0), 102);
    ck_assert_int_eq(holdem_table_act(t, 0, HOLDEM_TIMEOUT, 0, 0), HOLDEM_E_NOT_ALLOWED);
    holdem_table_destroy(t);
    free(l);
}
END_TEST

START_TEST(test_seats_sit_out_sit_in_and_leave)
{
    holdem_config_t c = config(3, 1, 2);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    ck_assert_int_eq(holdem_table_sit(t, 0, 100), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 52), HOLDEM_E_NOT_ALLOWED);
    ck_assert_int_eq(holdem_table_sit(t, 0, 100), HOLDEM_E_NOT_ALLOWED);
    ck_assert_int_eq(holdem_table_sit(t, 3, 100), HOLDEM_E_MALFORMED);
    ck_assert_int_eq(holdem_table_sit(t, 1, 0), HOLDEM_E_MALFORMED);
    holdem_table_sit(t, 1, 100);
    holdem_table_sit(t, 2, 100);
    ck_assert_int_eq(holdem_table_sit_out(t, 2), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 52), HOLDEM_OK);
    /* Seat 2 sits out: heads-up between 0 and 1; the button is seat 0. */
    ck_assert_int_eq(holdem_table_button(t), 0);
    ck_assert_int_eq(stack_of(t, 2), 100);
    int64_t out = 0;
    ck_assert_int_eq(holdem_table_leave(t, 0, &out), HOLDEM_E_NOT_ALLOWED);
    ck_assert_int_eq(holdem_table_add_chips(t, 0, 10), HOLDEM_E_NOT_ALLOWED);
    ck_assert_int_eq(holdem_table_leave(t, 2, &out), HOLDEM_OK); /* not dealt in: may go */
    ck_assert_int_eq(out, 100);
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 52), HOLDEM_E_NOT_ALLOWED);
    act_ok(t, 0, HOLDEM_FOLD, 0);
    holdem_table_sit(t, 2, 50);
    ck_assert_int_eq(holdem_table_add_chips(t, 0, 10), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_button(t), 1);
    holdem_settlement_t s;
    ck_assert_int_eq(holdem_table_settlement(t, &s), HOLDEM_OK);
    ck_assert_int_eq(s.hand, 1);
    ck_assert_int_eq(s.delta[0], -1);
    ck_assert_int_eq(s.delta[1], 1);
    ck_assert(!s.dealt[2]);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_rake_percentage_with_cap_and_no_flop_no_drop)
{
    holdem_config_t c = config(2, 5, 10);
    c.rake_basis_points = 500; /* 5 % */
    c.rake_cap = 30;
    c.no_flop_no_drop = true;
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    holdem_table_sit(t, 0, 1000);
    holdem_table_sit(t, 1, 1000);
    const char *holes[] = {"AsAh", "7c2d"};
    uint8_t deck[52];
    make_deck(deck, 2, holes, "KdQs3c8h9s");
    /* Hand 1: folded before the flop, no rake. */
    ck_assert_int_eq(holdem_table_start_hand(t, 1, deck, 52), HOLDEM_OK);
    act_ok(t, 1, HOLDEM_RAISE, 30);
    act_ok(t, 0, HOLDEM_FOLD, 0);
    ck_assert_int_eq(holdem_table_rake_total(t), 0);
    ck_assert_int_eq(stack_of(t, 1), 1010);
    /* Hand 2: pot 2 x 200 = 400, 5 % = 20. */
    ck_assert_int_eq(holdem_table_start_hand(t, 0, deck, 52), HOLDEM_OK);
    act_ok(t, 0, HOLDEM_RAISE, 200);
    act_ok(t, 1, HOLDEM_CALL, 0);
    for (int street = 0; street < 3; street++) {
        act_ok(t, 1, HOLDEM_CHECK, 0);
        act_ok(t, 0, HOLDEM_CHECK, 0);
    }
    holdem_settlement_t s;
    holdem_table_settlement(t, &s);
    ck_assert_int_eq(s.rake, 20);
    ck_assert_int_eq(s.delta[0] + s.delta[1], -20);
    /* Hand 3: pot 2 x 500 = 1000, 5 % = 50, capped at 30. */
    ck_assert_int_eq(holdem_table_start_hand(t, 1, deck, 52), HOLDEM_OK);
    act_ok(t, 1, HOLDEM_RAISE, 500);
    act_ok(t, 0, HOLDEM_CALL, 0);
    for (int street = 0; street < 3; street++) {
        act_ok(t, 0, HOLDEM_CHECK, 0);
        act_ok(t, 1, HOLDEM_CHECK, 0);
    }
    holdem_table_settlement(t, &s);
    ck_assert_int_eq(s.rake, 30);
    ck_assert_int_eq(holdem_table_rake_total(t), 50);
    ck_assert_int_eq(stack_of(t, 0) + stack_of(t, 1), 2000 - 50);
    holdem_table_destroy(t);
}
END_TEST

START_TEST(test_config_and_deck_are_validated)
{
    holdem_config_t c = config(1, 1, 2);
    int err = 0;
    ck_assert_ptr_null(holdem_table_create(&c, NULL, NULL, &err));
    ck_assert_int_eq(err, HOLDEM_E_MALFORMED);
    c = config(10, 1, 2);
    ck_assert_ptr_null(holdem_table_create(&c, NULL, NULL, &err));
    c = config(2, 3, 2);
    ck_assert_ptr_null(holdem_table_create(&c, NULL, NULL, &err));
    holdem_table_destroy(NULL);
    c = config(2, 1, 2);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, &err);
    holdem_table_sit(t, 0, 100);
    holdem_table_sit(t, 1, 100);
    uint8_t deck[52];
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
    holdem_table_t *before = holdem_table_clone(t);
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 11), HOLDEM_E_MALFORMED);
    deck[5] = deck[4];
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 52), HOLDEM_E_MALFORMED);
    deck[5] = 5;
    deck[7] = 60;
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 52), HOLDEM_E_MALFORMED);
    ck_assert_int_eq(holdem_table_start_hand(t, 5, deck, 52), HOLDEM_E_MALFORMED);
    ck_assert(holdem_table_same_state(t, before));
    deck[7] = 7;
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 12), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 12), HOLDEM_E_NOT_ALLOWED);
    act_refused(t, 1 - holdem_table_to_act(t), HOLDEM_CALL, 0, HOLDEM_E_OUT_OF_TURN);
    ck_assert_int_eq(holdem_table_act(t, holdem_table_to_act(t), HOLDEM_CALL, 0, -1),
                     HOLDEM_E_MALFORMED);
    holdem_table_destroy(before);
    holdem_table_destroy(t);
}
END_TEST

/* ---- random play ------------------------------------------------------------------------ */

/* Like ck_assert, but silent on success: check writes to its pipe for every passing ck_assert,
 * which would dominate the run time of a million hands. */
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t rnd_between(int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/*
 * An observer that checks the betting rules from the event stream alone, without looking at
 * the table's state: whose turn it is, what a check, call, bet or raise may be.
 */
typedef struct {
    int seats;
    int64_t big_blind, min_bet, last_full, high;
    int64_t bet[HOLDEM_MAX_SEATS], stack[HOLDEM_MAX_SEATS];
    int to_act;
    int offer; /* the seat to act was offered a straddle */
    long violations;
    char first[200];
    char hand[4096];       /* the events of the hand so far, "kind:seat:detail:amount:to" */
    char first_hand[4096]; /* ... of the hand of the first violation */
    long events;
    long side_pot_awards, shows, mucks, returns, boards;
} observer_t;

static void obs_violation(observer_t *o, const char *what, const holdem_event_t *ev)
{
    if (o->violations == 0)
        memcpy(o->first_hand, o->hand, sizeof o->hand);
    if (o->violations++ == 0)
        snprintf(o->first, sizeof o->first,
                 "%s (seat %d, detail %d, amount %lld, to %lld; high %lld, last full %lld)", what,
                 ev->seat, ev->detail, (long long)ev->amount, (long long)ev->to, (long long)o->high,
                 (long long)o->last_full);
}

static void obs_cb(void *ud, const holdem_event_t *ev)
{
    observer_t *o = ud;
    o->events++;
    if (ev->kind == HOLDEM_EV_HAND_START)
        o->hand[0] = '\0';
    size_t hl = strlen(o->hand);
    if (hl + 48 < sizeof o->hand)
        snprintf(o->hand + hl, sizeof o->hand - hl, " %d:%d:%d:%lld:%lld%s", (int)ev->kind,
                 ev->seat, ev->detail, (long long)ev->amount, (long long)ev->to,
                 ev->all_in ? "A" : "");
    switch (ev->kind) {
    case HOLDEM_EV_HAND_START:
        memset(o->bet, 0, sizeof o->bet);
        o->high = 0;
        o->last_full = o->big_blind;
        o->to_act = -1;
        break;
    case HOLDEM_EV_POST:
        if (ev->detail == HOLDEM_POST_BIG_BLIND || ev->detail == HOLDEM_POST_SMALL_BLIND ||
            ev->detail == HOLDEM_POST_STRADDLE) {
            o->bet[ev->seat] = ev->to;
            /* A full straddle is the new big blind; a short all-in one is a raise. */
            if (ev->detail == HOLDEM_POST_STRADDLE && !ev->all_in)
                o->last_full = ev->to;
            else if (ev->detail == HOLDEM_POST_STRADDLE && ev->to - o->high >= o->last_full)
                o->last_full = ev->to - o->high;
            if (ev->to > o->high)
                o->high = ev->to;
            if (ev->detail == HOLDEM_POST_BIG_BLIND && o->high < o->big_blind)
                o->high = o->big_blind;
        }
        break;
    case HOLDEM_EV_BOARD:
        o->boards += ev->detail == 3;
        memset(o->bet, 0, sizeof o->bet);
        o->high = 0;
        o->last_full = o->min_bet;
        break;
    case HOLDEM_EV_TO_ACT:
        o->to_act = ev->seat;
        o->offer = ev->detail == 1;
        break;
    case HOLDEM_EV_AWARD:
        o->side_pot_awards += ev->detail > 0;
        break;
    case HOLDEM_EV_SHOW:
        o->shows++;
        break;
    case HOLDEM_EV_MUCK:
        o->mucks++;
        break;
    case HOLDEM_EV_RETURN:
        o->returns++;
        break;
    case HOLDEM_EV_ACTION: {
        if (ev->seat != o->to_act)
            obs_violation(o, "acted out of turn", ev);
        o->to_act = -1;
        if (o->offer) { /* only a declined straddle is an action (a taken one is a post) */
            o->offer = 0;
            if (ev->detail != HOLDEM_CHECK || ev->amount != 0)
                obs_violation(o, "a straddle offer answered with a bet", ev);
            break;
        }
        int64_t before = o->bet[ev->seat];
        if (ev->to - before != ev->amount)
            obs_violation(o, "amount does not match the new total", ev);
        switch (ev->detail) {
        case HOLDEM_CHECK:
            if (before != o->high)
                obs_violation(o, "checked facing a bet", ev);
            break;
        case HOLDEM_CALL:
            if (before >= o->high || ev->to > o->high || (ev->to < o->high && !ev->all_in))
                obs_violation(o, "bad call", ev);
            break;
        case HOLDEM_BET:
        case HOLDEM_RAISE: {
            int64_t min_to = o->high == 0 ? o->min_bet : o->high + o->last_full;
            if (ev->to <= o->high || (ev->to < min_to && !ev->all_in))
                obs_violation(o, "bet or raise below the minimum", ev);
            if ((ev->detail == HOLDEM_BET) != (o->high == 0))
                obs_violation(o, "bet facing a bet or raise with none", ev);
            if (ev->to - o->high >= o->last_full)
                o->last_full = ev->to - o->high;
            o->high = ev->to;
            break;
        }
        case HOLDEM_FOLD:
            break;
        default:
            obs_violation(o, "unresolved action kind", ev);
        }
        o->bet[ev->seat] = ev->to;
        break;
    }
    default:
        break;
    }
}

/* Total chips the test put on the table and took off it. */
typedef struct {
    int64_t in, out;
} ledger_t;

static int64_t table_chips(holdem_table_t *t, int seats)
{
    int64_t sum = holdem_table_pot_total(t) + holdem_table_rake_total(t);
    for (int s = 0; s < seats; s++) {
        int64_t st = holdem_table_stack(t, s);
        REQUIRE(st >= -1, "failed: st >= -1");
        if (st > 0)
            sum += st;
    }
    return sum;
}

/* Tries one illegal action (chosen at random among those that apply) and checks refusal. */
static void inject_illegal(holdem_table_t *t, observer_t *o, long *injected)
{
    holdem_legal_t l;
    holdem_table_legal(t, &l);
    int n = o->seats;
    int seat = l.seat, expect = 0;
    holdem_action_kind_t kind = HOLDEM_FOLD;
    int64_t amount = 0, elapsed = 0;
    switch (rnd() % 8) {
    case 0: {
        int other = (int)(rnd() % (uint64_t)n);
        if (other == l.seat)
            return;
        seat = other;
        kind = (holdem_action_kind_t)(rnd() % 7);
        expect = HOLDEM_E_OUT_OF_TURN;
        break;
    }
    case 1:
        if (l.can_check)
            return;
        kind = HOLDEM_CHECK;
        expect = HOLDEM_E_NOT_ALLOWED;
        break;
    case 2:
        if (!l.can_bet && !l.can_raise)
            return;
        kind = l.can_bet ? HOLDEM_BET : HOLDEM_RAISE;
        amount = l.max_to + 1 + (int64_t)(rnd() % 100);
        expect = HOLDEM_E_OVER_STACK;
        break;
    case 3:
        if (!l.can_bet && !l.can_raise)
            return;
        kind = l.can_bet ? HOLDEM_BET : HOLDEM_RAISE;
        amount = l.min_to - 1;
        if (amount < 0 || l.min_to >= l.max_to)
            return;
        expect = amount < 0 ? HOLDEM_E_MALFORMED : HOLDEM_E_BELOW_MIN;
        break;
    case 4:
        kind = l.can_bet ? HOLDEM_RAISE : HOLDEM_BET;
        amount = l.max_to;
        if (!l.can_bet && !l.can_raise && l.to_call == 0)
            return;
        expect = HOLDEM_E_NOT_ALLOWED;
        break;
    case 5:
        kind = (holdem_action_kind_t)(7 + rnd() % 5);
        expect = HOLDEM_E_MALFORMED;
        break;
    case 6:
        seat = (int)(rnd() % 3) == 0 ? -1 : n + (int)(rnd() % 5);
        expect = HOLDEM_E_MALFORMED;
        break;
    case 7:
        elapsed = -1 - (int64_t)(rnd() % 1000);
        kind = HOLDEM_FOLD;
        expect = HOLDEM_E_MALFORMED;
        break;
    }
    holdem_table_t *before = holdem_table_clone(t);
    long ev_before = o->events;
    int rc = holdem_table_act(t, seat, kind, amount, elapsed);
    REQUIRE(rc == expect, "illegal seat %d kind %d amount %lld: got %s, expected %s", seat, kind,
            (long long)amount, holdem_err_name(rc), holdem_err_name(expect));
    REQUIRE(holdem_table_same_state(t, before), "failed: holdem_table_same_state(t, before)");
    REQUIRE((o->events) == (ev_before), "o->events != ev_before");
    holdem_table_destroy(before);
    (*injected)++;
}

static void random_play(long hands, uint64_t seed)
{
    rng_state = seed;
    long played = 0, injected = 0, settled = 0;
    observer_t seen = {0};
    while (played < hands) {
        /* A new table every so often, with a random shape. */
        holdem_config_t c;
        memset(&c, 0, sizeof c);
        c.seats = (int)rnd_between(2, HOLDEM_MAX_SEATS);
        c.small_blind = rnd_between(1, 5);
        c.big_blind = c.small_blind * rnd_between(1, 3);
        if (rnd() % 4 == 0)
            c.ante = rnd_between(1, 3);
        else if (rnd() % 3 == 0)
            c.big_blind_ante = c.big_blind;
        if (rnd() % 3 == 0) {
            c.straddle = 2 * c.big_blind;
            c.max_straddles = (int)rnd_between(1, 4);
            c.straddle_offers = rnd() % 2;
            c.straddle_position = rnd() % 3 == 0 ? (int)rnd_between(1, 3) : 0;
        }
        if (rnd() % 3 == 0) {
            c.rake_basis_points = (int)rnd_between(100, 1000);
            c.rake_cap = rnd_between(0, 20);
            c.no_flop_no_drop = rnd() % 2;
        }
        c.action_ms = 1000;
        c.time_bank_ms = 5000;
        observer_t *o = calloc(1, sizeof *o);
        o->seats = c.seats;
        o->big_blind = c.big_blind;
        o->min_bet = c.big_blind;
        holdem_table_t *t = holdem_table_create(&c, obs_cb, o, NULL);
        REQUIRE((t) != NULL, "t is NULL");
        ledger_t led = {0, 0};
        for (int s = 0; s < c.seats; s++) {
            if (rnd() % 5 == 0)
                continue;
            int64_t st = rnd_between(1, rnd() % 2 ? 40 : 400);
            REQUIRE((holdem_table_sit(t, s, st)) == (HOLDEM_OK),
                    "holdem_table_sit(t, s, st) != HOLDEM_OK");
            led.in += st;
            if (c.straddle && rnd() % 2)
                holdem_table_set_straddle(t, s, true);
        }
        for (int h = 0; h < 50 && played < hands; h++) {
            /* Seat changes between hands. */
            for (int s = 0; s < c.seats; s++) {
                int64_t st = holdem_table_stack(t, s), got;
                unsigned r = (unsigned)(rnd() % 40);
                if (st < 0 && r < 8) {
                    int64_t buy = rnd_between(1, 300);
                    REQUIRE((holdem_table_sit(t, s, buy)) == (HOLDEM_OK),
                            "holdem_table_sit(t, s, buy) != HOLDEM_OK");
                    led.in += buy;
                } else if (st == 0 && r < 20) {
                    REQUIRE((holdem_table_leave(t, s, &got)) == (HOLDEM_OK),
                            "holdem_table_leave(t, s, &got) != HOLDEM_OK");
                } else if (st > 0 && r == 0) {
                    REQUIRE((holdem_table_leave(t, s, &got)) == (HOLDEM_OK),
                            "holdem_table_leave(t, s, &got) != HOLDEM_OK");
                    led.out += got;
                } else if (st >= 0 && r == 1) {
                    holdem_table_sit_out(t, s);
                } else if (st >= 0 && r < 6) {
                    holdem_table_sit_in(t, s);
                } else if (st >= 0 && r == 6) {
                    REQUIRE((holdem_table_add_chips(t, s, 50)) == (HOLDEM_OK),
                            "holdem_table_add_chips(t, s, 50) != HOLDEM_OK");
                    led.in += 50;
                }
            }
            uint8_t deck[52];
            for (int i = 0; i < 52; i++)
                deck[i] = (uint8_t)i;
            for (int i = 51; i > 0; i--) {
                int j = (int)(rnd() % (uint64_t)(i + 1));
                uint8_t x = deck[i];
                deck[i] = deck[j];
                deck[j] = x;
            }
            int rc = holdem_table_start_hand(t, -1, deck, 52);
            if (rc != HOLDEM_OK) {
                REQUIRE((rc) == (HOLDEM_E_NOT_ALLOWED),
                        "rc != HOLDEM_E_NOT_ALLOWED"); /* fewer than two players */
                continue;
            }
            REQUIRE((table_chips(t, c.seats)) == (led.in - led.out),
                    "table_chips(t, c.seats) != led.in - led.out");
            int steps = 0;
            while (holdem_table_in_hand(t)) {
                REQUIRE((++steps) < (500), "++steps >= 500");
                holdem_legal_t l;
                holdem_table_legal(t, &l);
                if (l.straddle_offer) {
                    /* Straddle, decline, or let the time run out. */
                    REQUIRE(l.min_to == l.max_to && l.min_to > 0, "bad straddle offer");
                    unsigned a = (unsigned)(rnd() % 3);
                    rc = holdem_table_act(t, l.seat,
                                          a == 0   ? HOLDEM_BET
                                          : a == 1 ? HOLDEM_CHECK
                                                   : HOLDEM_TIMEOUT,
                                          l.min_to, 0);
                    REQUIRE(rc == HOLDEM_OK, "straddle answer refused: %s", holdem_err_name(rc));
                    continue;
                }
                if (rnd() % 4 == 0)
                    inject_illegal(t, o, &injected);
                holdem_table_legal(t, &l);
                REQUIRE((l.seat) >= (0), "l.seat < 0");
                REQUIRE(l.min_to <= l.max_to, "failed: l.min_to <= l.max_to");
                unsigned r = (unsigned)(rnd() % 20);
                holdem_action_kind_t kind;
                int64_t amount = 0;
                if (r < 3)
                    kind = HOLDEM_FOLD;
                else if (r < 10)
                    kind = l.can_check ? HOLDEM_CHECK : HOLDEM_CALL;
                else if (r < 16 && (l.can_bet || l.can_raise)) {
                    kind = l.can_bet ? HOLDEM_BET : HOLDEM_RAISE;
                    amount = rnd() % 3 ? l.min_to : rnd_between(l.min_to, l.max_to);
                } else if (r < 18)
                    kind = HOLDEM_ALL_IN;
                else
                    kind = HOLDEM_TIMEOUT;
                if (kind == HOLDEM_ALL_IN && !l.can_bet && !l.can_raise &&
                    l.max_to > l.to_call + (l.max_to - l.to_call))
                    kind = HOLDEM_CALL;
                rc = holdem_table_act(t, l.seat, kind, amount, (int64_t)(rnd() % 3000));
                if (rc == HOLDEM_E_NOT_ALLOWED && kind == HOLDEM_ALL_IN) {
                    /* All-in would be a raise that is not open to this seat. */
                    REQUIRE(!l.can_bet && !l.can_raise, "failed: !l.can_bet && !l.can_raise");
                    rc =
                        holdem_table_act(t, l.seat, l.can_check ? HOLDEM_CHECK : HOLDEM_CALL, 0, 0);
                }
                REQUIRE(rc == HOLDEM_OK, "legal action %d %lld refused: %s", kind,
                        (long long)amount, holdem_err_name(rc));
                REQUIRE((table_chips(t, c.seats)) == (led.in - led.out),
                        "table_chips(t, c.seats) != led.in - led.out");
            }
            holdem_settlement_t st;
            REQUIRE((holdem_table_settlement(t, &st)) == (HOLDEM_OK),
                    "holdem_table_settlement(t, &st) != HOLDEM_OK");
            int64_t sum = 0;
            for (int s = 0; s < c.seats; s++) {
                sum += st.delta[s];
                REQUIRE(holdem_table_stack(t, s) >= -1, "failed: holdem_table_stack(t, s) >= -1");
            }
            REQUIRE((sum) == (-st.rake), "sum != -st.rake");
            REQUIRE(st.rake >= 0 && (c.rake_cap == 0 || st.rake <= c.rake_cap),
                    "failed: st.rake >= 0 && (c.rake_cap == 0 || st.rake <= c.rake_cap)");
            settled += holdem_table_pot_total(t) == 0;
            played++;
        }
        REQUIRE(o->violations == 0, "%ld rule violations, first: %s; its hand's events:%s",
                o->violations, o->first, o->first_hand);
        seen.side_pot_awards += o->side_pot_awards;
        seen.shows += o->shows;
        seen.mucks += o->mucks;
        seen.returns += o->returns;
        seen.boards += o->boards;
        holdem_table_destroy(t);
        free(o);
    }
    /* The random play must reach the interesting places: side pots, showdowns, mucks,
     * returned uncalled bets, rivers. */
    REQUIRE(seen.side_pot_awards > hands / 100 && seen.shows > hands / 10 &&
                seen.mucks > hands / 1000 && seen.returns > hands / 10 && seen.boards > hands / 20,
            "coverage: %ld side-pot awards, %ld shows, %ld mucks, %ld returns, %ld rivers",
            seen.side_pot_awards, seen.shows, seen.mucks, seen.returns, seen.boards);
    REQUIRE((played) == (hands), "played != hands");
    REQUIRE((injected) > (hands / 10), "injected <= hands / 10");
    REQUIRE((settled) == (hands), "settled != hands");
}

START_TEST(test_random_play_conserves_chips_and_keeps_rules)
{
    random_play(HOLDEM_RANDOM_HANDS, 0x2545f4914f6cdd1dull);
}
END_TEST

/* ---- tournament hands (docs/rules/holdem.md "Tournament hands") ------------------------ */

static void identity_deck(uint8_t *deck)
{
    for (int i = 0; i < 52; i++)
        deck[i] = (uint8_t)i;
}

static holdem_positions_t positions(int button, int sb, int bb, uint32_t dealt)
{
    holdem_positions_t p;
    memset(&p, 0, sizeof p);
    p.button = button;
    p.small_blind = sb;
    p.big_blind = bb;
    p.dealt_mask = dealt;
    return p;
}

/* The amount seat posted of a kind in the log (0 when it did not post it). */
static int64_t log_posted(const log_t *l, int seat, holdem_post_kind_t kind)
{
    int64_t sum = 0;
    for (int i = 0; i < l->n; i++)
        if (l->ev[i].kind == HOLDEM_EV_POST && l->ev[i].seat == seat &&
            l->ev[i].detail == (int)kind)
            sum += l->ev[i].amount;
    return sum;
}

/* The seat of the first TO_ACT event after the street's board (street 0: preflop). */
static int log_first_to_act(const log_t *l, int street)
{
    int from = 0;
    if (street > 0) {
        from = -1;
        for (int i = 0; i < l->n && from < 0; i++)
            if (l->ev[i].kind == HOLDEM_EV_BOARD && l->ev[i].detail == street)
                from = i;
        if (from < 0)
            return -1;
    }
    int i = log_find(l, from, HOLDEM_EV_TO_ACT, -1);
    return i < 0 ? -1 : l->ev[i].seat;
}

/* TDA 23: new blinds apply from the next hand; never in the middle of one. */
START_TEST(test_tournament_set_blinds_between_hands_only)
{
    log_t lg = {0};
    holdem_config_t c = config(3, 1, 2);
    holdem_table_t *t = holdem_table_create(&c, log_cb, &lg, NULL);
    for (int s = 0; s < 3; s++)
        holdem_table_sit(t, s, 10000);
    ck_assert_int_eq(holdem_table_set_blinds(t, 50, 100, 10, 0), HOLDEM_OK);
    /* Invalid values are refused between hands too, with nothing changed. */
    const int64_t bad[][4] = {
        {0, 100, 0, 0}, {60, 50, 0, 0}, {-1, 100, 0, 0}, {50, 100, -1, 0}, {50, 100, 0, -1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        holdem_table_t *before = holdem_table_clone(t);
        ck_assert_int_eq(holdem_table_set_blinds(t, bad[i][0], bad[i][1], bad[i][2], bad[i][3]),
                         HOLDEM_E_MALFORMED);
        ck_assert(holdem_table_same_state(t, before));
        holdem_table_destroy(before);
    }
    uint8_t deck[52];
    identity_deck(deck);
    ck_assert_int_eq(holdem_table_start_hand(t, 0, deck, 52), HOLDEM_OK);
    for (int s = 0; s < 3; s++)
        ck_assert_int_eq(log_posted(&lg, s, HOLDEM_POST_ANTE), 10);
    ck_assert_int_eq(log_posted(&lg, 1, HOLDEM_POST_SMALL_BLIND), 50);
    ck_assert_int_eq(log_posted(&lg, 2, HOLDEM_POST_BIG_BLIND), 100);
    ck_assert_int_eq(holdem_table_pot_total(t), 180);
    holdem_legal_t l;
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.seat, 0);
    ck_assert_int_eq(l.to_call, 100);
    ck_assert_int_eq(l.min_to, 200);
    /* Mid-hand: refused, the hand goes on at its blinds. */
    holdem_table_t *before = holdem_table_clone(t);
    ck_assert_int_eq(holdem_table_set_blinds(t, 100, 200, 0, 0), HOLDEM_E_NOT_ALLOWED);
    ck_assert(holdem_table_same_state(t, before));
    holdem_table_destroy(before);
    act_ok(t, 0, HOLDEM_CALL, 0);
    act_ok(t, 1, HOLDEM_CALL, 0);
    act_ok(t, 2, HOLDEM_CHECK, 0);
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.min_to, 100); /* the minimum bet follows the big blind (config 0) */
    while (holdem_table_in_hand(t)) {
        holdem_table_legal(t, &l);
        act_ok(t, l.seat, HOLDEM_CHECK, 0);
    }
    /* Next level with a big-blind ante and no ante. */
    ck_assert_int_eq(holdem_table_set_blinds(t, 100, 200, 0, 200), HOLDEM_OK);
    lg.n = 0;
    ck_assert_int_eq(holdem_table_start_hand(t, -1, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(log_count(&lg, HOLDEM_EV_POST, -1), 3);
    ck_assert_int_eq(log_posted(&lg, 2, HOLDEM_POST_SMALL_BLIND), 100);
    ck_assert_int_eq(log_posted(&lg, 0, HOLDEM_POST_BIG_BLIND), 200);
    ck_assert_int_eq(log_posted(&lg, 0, HOLDEM_POST_BB_ANTE), 200);
    ck_assert_int_eq(holdem_table_pot_total(t), 500);
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.min_to, 400);
    holdem_table_destroy(t);

    /* An explicit minimum bet stays what the config says. */
    c.min_bet = 7;
    t = holdem_table_create(&c, NULL, NULL, NULL);
    holdem_table_sit(t, 0, 1000);
    holdem_table_sit(t, 1, 1000);
    ck_assert_int_eq(holdem_table_set_blinds(t, 2, 4, 0, 0), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_start_hand(t, 0, deck, 52), HOLDEM_OK);
    act_ok(t, 0, HOLDEM_CALL, 0);
    act_ok(t, 1, HOLDEM_CHECK, 0);
    holdem_table_legal(t, &l);
    ck_assert_int_eq(l.min_to, 7);
    holdem_table_destroy(t);
}
END_TEST

/* Dead small blind: nobody posts it; the pot is the big blind and the antes; the action starts
 * after the big blind and, after the flop, left of the button. */
START_TEST(test_tournament_dead_small_blind)
{
    uint8_t deck[52];
    identity_deck(deck);
    for (int variant = 0; variant < 2; variant++) {
        log_t lg = {0};
        holdem_config_t c = config(5, 5, 10);
        c.ante = 2;
        holdem_table_t *t = holdem_table_create(&c, log_cb, &lg, NULL);
        /* Seat 1 (the last big blind) busted: empty. */
        holdem_table_sit(t, 0, 1000);
        holdem_table_sit(t, 2, 1000);
        holdem_table_sit(t, 3, 1000);
        holdem_table_sit(t, 4, 1000);
        holdem_positions_t p = positions(0, variant == 0 ? 1 : -1, 2, 0);
        ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_OK);
        ck_assert_int_eq(log_count(&lg, HOLDEM_EV_POST, -1), 5); /* 4 antes + the big blind */
        ck_assert_int_eq(log_posted(&lg, 2, HOLDEM_POST_BIG_BLIND), 10);
        for (int s = 0; s < 5; s++)
            ck_assert_int_eq(log_posted(&lg, s, HOLDEM_POST_SMALL_BLIND), 0);
        ck_assert_int_eq(holdem_table_pot_total(t), 10 + 4 * 2);
        ck_assert_int_eq(stack_of(t, 0), 998);
        ck_assert_int_eq(stack_of(t, 2), 988);
        holdem_positions_t last;
        ck_assert_int_eq(holdem_table_last_positions(t, &last), HOLDEM_OK);
        ck_assert_int_eq(last.button, 0);
        ck_assert_int_eq(last.small_blind, variant == 0 ? 1 : -1);
        ck_assert_int_eq(last.big_blind, 2);
        ck_assert_uint_eq(last.dealt_mask, 0x1du);
        /* Preflop: 3, 4, the button 0, then the big blind's option. */
        ck_assert_int_eq(holdem_table_to_act(t), 3);
        act_ok(t, 3, HOLDEM_CALL, 0);
        act_ok(t, 4, HOLDEM_CALL, 0);
        act_ok(t, 0, HOLDEM_CALL, 0);
        holdem_legal_t l;
        holdem_table_legal(t, &l);
        ck_assert_int_eq(l.seat, 2);
        ck_assert(l.can_check && l.can_raise);
        act_ok(t, 2, HOLDEM_CHECK, 0);
        /* Postflop: the first seat left of the button, the big blind. */
        ck_assert_int_eq(holdem_table_board(t, (uint8_t[5]){0}), 3);
        ck_assert_int_eq(holdem_table_to_act(t), 2);
        ck_assert_int_eq(holdem_table_pot_total(t), 48);
        holdem_table_destroy(t);
    }
}
END_TEST

/* Dead button: the button seat is empty; the deal and the postflop action start after it. */
START_TEST(test_tournament_dead_button)
{
    log_t lg = {0};
    holdem_config_t c = config(5, 1, 2);
    holdem_table_t *t = holdem_table_create(&c, log_cb, &lg, NULL);
    for (int s = 1; s < 5; s++)
        holdem_table_sit(t, s, 100);
    uint8_t deck[52];
    identity_deck(deck);
    holdem_positions_t p = positions(0, 1, 2, 0);
    ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(holdem_table_button(t), 0);
    ck_assert_int_eq(lg.ev[0].kind, HOLDEM_EV_HAND_START);
    ck_assert_int_eq(lg.ev[0].seat, 0);
    ck_assert_int_eq(log_posted(&lg, 1, HOLDEM_POST_SMALL_BLIND), 1);
    ck_assert_int_eq(log_posted(&lg, 2, HOLDEM_POST_BIG_BLIND), 2);
    /* The deal: seat 1 first, one card at a time, twice round the four players. */
    int h = log_find(&lg, 0, HOLDEM_EV_HOLE, -1);
    ck_assert_int_ge(h, 0);
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(lg.ev[h + k].kind, HOLDEM_EV_HOLE);
        ck_assert_int_eq(lg.ev[h + k].seat, 1 + k);
        ck_assert_int_eq(lg.ev[h + k].cards[0], k);
        ck_assert_int_eq(lg.ev[h + k].cards[1], 4 + k);
    }
    ck_assert_int_eq(log_count(&lg, HOLDEM_EV_HOLE, 0), 0);
    ck_assert_int_eq(holdem_table_to_act(t), 3);
    act_ok(t, 3, HOLDEM_CALL, 0);
    act_ok(t, 4, HOLDEM_CALL, 0);
    act_ok(t, 1, HOLDEM_CALL, 0);
    act_ok(t, 2, HOLDEM_CHECK, 0);
    ck_assert_int_eq(log_first_to_act(&lg, 1), 1);
    /* Fold to the end: the pots go to the last player, chips conserved. */
    act_ok(t, 1, HOLDEM_CHECK, 0);
    act_ok(t, 2, HOLDEM_BET, 2);
    act_ok(t, 3, HOLDEM_FOLD, 0);
    act_ok(t, 4, HOLDEM_FOLD, 0);
    act_ok(t, 1, HOLDEM_FOLD, 0);
    ck_assert(!holdem_table_in_hand(t));
    ck_assert_int_eq(stack_of(t, 2), 106);
    int64_t sum = 0;
    for (int s = 1; s < 5; s++)
        sum += stack_of(t, s);
    ck_assert_int_eq(sum, 400);
    holdem_table_destroy(t);
}
END_TEST

/* Heads-up (TDA): the player who is not the big blind has the button and the small blind, acts
 * first before the flop and last after it, whatever button and dead small blind the
 * big-blind-forward rule gave. */
START_TEST(test_tournament_heads_up_positions)
{
    uint8_t deck[52];
    identity_deck(deck);
    /* Seats 0 and 2 of 4; big blind 0. */
    const int given[][2] = {{2, 2}, {1, 2}, {0, 2}, {2, 1}, {2, -1}, {3, 3}, {1, -1}};
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
        log_t lg = {0};
        holdem_config_t c = config(4, 1, 2);
        holdem_table_t *t = holdem_table_create(&c, log_cb, &lg, NULL);
        holdem_table_sit(t, 0, 100);
        holdem_table_sit(t, 2, 100);
        holdem_positions_t p = positions(given[i][0], given[i][1], 0, 0);
        ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_OK);
        ck_assert_int_eq(holdem_table_button(t), 2);
        ck_assert_int_eq(log_posted(&lg, 2, HOLDEM_POST_SMALL_BLIND), 1);
        ck_assert_int_eq(log_posted(&lg, 0, HOLDEM_POST_BIG_BLIND), 2);
        ck_assert_int_eq(holdem_table_pot_total(t), 3);
        holdem_positions_t last;
        ck_assert_int_eq(holdem_table_last_positions(t, &last), HOLDEM_OK);
        ck_assert_int_eq(last.button, 2);
        ck_assert_int_eq(last.small_blind, given[i][1]); /* as given */
        ck_assert_int_eq(last.big_blind, 0);
        /* The deal starts with the big blind (left of the button). */
        int h = log_find(&lg, 0, HOLDEM_EV_HOLE, -1);
        ck_assert_int_eq(lg.ev[h].seat, 0);
        ck_assert_int_eq(holdem_table_to_act(t), 2);
        act_ok(t, 2, HOLDEM_CALL, 0);
        act_ok(t, 0, HOLDEM_CHECK, 0);
        ck_assert_int_eq(holdem_table_to_act(t), 0); /* first after the flop */
        act_ok(t, 0, HOLDEM_CHECK, 0);
        ck_assert_int_eq(holdem_table_to_act(t), 2);
        holdem_table_destroy(t);
    }
    /* Refused heads-up: the big blind on an empty seat or on the small blind, positions out of
     * range. */
    holdem_config_t c = config(4, 1, 2);
    holdem_table_t *t = holdem_table_create(&c, NULL, NULL, NULL);
    holdem_table_sit(t, 0, 100);
    holdem_table_sit(t, 2, 100);
    const int bad[][3] = {{2, 2, 1}, {2, 0, 0}, {4, 2, 0}, {-1, 2, 0}, {2, -2, 0}, {2, 4, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        holdem_table_t *before = holdem_table_clone(t);
        holdem_positions_t p = positions(bad[i][0], bad[i][1], bad[i][2], 0);
        ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_E_MALFORMED);
        ck_assert(holdem_table_same_state(t, before));
        holdem_table_destroy(before);
    }
    holdem_table_destroy(t);
}
END_TEST

/* A player seated between the button and the small blind waits for the button: seated, not
 * dealt in, posts nothing (not even the ante), and his stack does not move. */
START_TEST(test_tournament_wait_for_button_seat_not_dealt)
{
    log_t lg = {0};
    holdem_config_t c = config(5, 1, 2);
    c.ante = 1;
    holdem_table_t *t = holdem_table_create(&c, log_cb, &lg, NULL);
    for (int s = 0; s < 5; s++)
        holdem_table_sit(t, s, 100);
    uint8_t deck[52];
    identity_deck(deck);
    holdem_positions_t p = positions(0, 2, 3, 0x1du); /* seat 1 waits */
    ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(log_count(&lg, HOLDEM_EV_POST, 1), 0);
    ck_assert_int_eq(log_count(&lg, HOLDEM_EV_HOLE, 1), 0);
    ck_assert_int_eq(log_count(&lg, HOLDEM_EV_HOLE, -1), 4);
    ck_assert_int_eq(log_posted(&lg, 2, HOLDEM_POST_SMALL_BLIND), 1);
    ck_assert_int_eq(log_posted(&lg, 3, HOLDEM_POST_BIG_BLIND), 2);
    ck_assert_int_eq(holdem_table_pot_total(t), 3 + 4);
    ck_assert_int_eq(holdem_table_to_act(t), 4);
    act_ok(t, 4, HOLDEM_CALL, 0);
    act_ok(t, 0, HOLDEM_CALL, 0);
    act_ok(t, 2, HOLDEM_CALL, 0);
    act_ok(t, 3, HOLDEM_CHECK, 0);
    ck_assert_int_eq(holdem_table_to_act(t), 2); /* after the flop: left of the button */
    while (holdem_table_in_hand(t))
        act_ok(t, holdem_table_to_act(t), HOLDEM_CHECK, 0);
    ck_assert_int_eq(stack_of(t, 1), 100);
    holdem_settlement_t st;
    ck_assert_int_eq(holdem_table_settlement(t, &st), HOLDEM_OK);
    ck_assert(!st.dealt[1]);
    ck_assert_int_eq(st.delta[1], 0);
    holdem_positions_t last;
    ck_assert_int_eq(holdem_table_last_positions(t, &last), HOLDEM_OK);
    ck_assert_uint_eq(last.dealt_mask, 0x1du);
    /* The next hand by the big-blind-forward rule deals him in. */
    lg.n = 0;
    p = positions(2, 3, 4, 0);
    ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_OK);
    ck_assert_int_eq(log_count(&lg, HOLDEM_EV_HOLE, 1), 1);
    ck_assert_int_eq(holdem_table_to_act(t), 0);
    holdem_table_destroy(t);
}
END_TEST

/* Positions that break the rules are refused HOLDEM_E_MALFORMED with the table unchanged and
 * no event. */
START_TEST(test_tournament_invalid_positions_refused)
{
    log_t lg = {0};
    holdem_config_t c = config(6, 1, 2);
    holdem_table_t *t = holdem_table_create(&c, log_cb, &lg, NULL);
    for (int s = 0; s < 4; s++)
        holdem_table_sit(t, s, 100);
    holdem_table_sit(t, 5, 100);
    holdem_table_sit_out(t, 5);
    uint8_t deck[52];
    identity_deck(deck);
    struct {
        int button, sb, bb;
        uint32_t dealt;
    } bad[] = {
        {0, 1, 4, 0},      /* big blind on an empty seat */
        {0, 1, 5, 0},      /* ... on a sitting-out seat */
        {0, 1, 2, 0x0bu},  /* ... on a seat not dealt in */
        {2, 1, 2, 0},      /* button == big blind, three or more */
        {0, 2, 2, 0},      /* small blind == big blind */
        {0, 3, 2, 0},      /* small blind not between the button and the big blind */
        {0, 0, 2, 0},      /* small blind on the button, three or more */
        {0, 2, 3, 0},      /* seat 1, dealt in, between the button and the small blind */
        {0, -1, 2, 0},     /* dead small blind with seat 1 dealt in before the big blind */
        {3, 1, 2, 0},      /* seat 0, dealt in, between the button and the small blind */
        {6, 1, 2, 0},      /* out of range */
        {-1, 1, 2, 0},     /* out of range */
        {0, -2, 2, 0},     /* out of range */
        {0, 1, -1, 0},     /* out of range */
        {0, 1, 6, 0},      /* out of range */
        {0, 1, 2, 0x1fu},  /* dealt_mask with the empty seat 4 */
        {0, 1, 2, 0x2fu},  /* dealt_mask with the sitting-out seat 5 */
        {0, 1, 2, 0x40fu}, /* dealt_mask beyond the seats */
        {0, 1, 2, 0x04u},  /* one player */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        holdem_table_t *before = holdem_table_clone(t);
        holdem_positions_t p = positions(bad[i].button, bad[i].sb, bad[i].bb, bad[i].dealt);
        int rc = holdem_table_start_hand_at(t, &p, deck, 52);
        ck_assert_msg(rc == HOLDEM_E_MALFORMED, "case %zu: %s", i, holdem_err_name(rc));
        ck_assert(holdem_table_same_state(t, before));
        ck_assert_int_eq(lg.n, 0);
        holdem_table_destroy(before);
    }
    holdem_positions_t last;
    ck_assert_int_eq(holdem_table_last_positions(t, &last), HOLDEM_E_NOT_ALLOWED);
    ck_assert_int_eq(holdem_table_start_hand_at(t, NULL, deck, 52), HOLDEM_E_MALFORMED);
    holdem_positions_t p = positions(0, 1, 2, 0);
    deck[1] = deck[0];
    ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_E_MALFORMED);
    ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 3), HOLDEM_E_MALFORMED);
    identity_deck(deck);
    ck_assert_int_eq(lg.n, 0);
    /* The valid ones: seat 1 left out while between the button and the small blind. */
    p = positions(0, 2, 3, 0x0du);
    ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_OK);
    holdem_table_t *before = holdem_table_clone(t);
    ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_E_NOT_ALLOWED);
    ck_assert(holdem_table_same_state(t, before));
    holdem_table_destroy(before);
    holdem_table_destroy(t);

    /* Fewer than two players to deal in. */
    t = holdem_table_create(&c, NULL, NULL, NULL);
    holdem_table_sit(t, 0, 100);
    p = positions(1, -1, 0, 0);
    ck_assert_int_eq(holdem_table_start_hand_at(t, &p, deck, 52), HOLDEM_E_NOT_ALLOWED);
    holdem_table_destroy(t);
}
END_TEST

#ifndef HOLDEM_TOURNAMENTS
#define HOLDEM_TOURNAMENTS 3000
#endif

/* What one tournament hand's events showed, for the property test. */
typedef struct {
    observer_t *obs; /* the betting-rules observer sees every event too */
    int posts_sb[HOLDEM_MAX_SEATS], posts_bb[HOLDEM_MAX_SEATS], posts_ante[HOLDEM_MAX_SEATS],
        posts_bba[HOLDEM_MAX_SEATS], posts_other[HOLDEM_MAX_SEATS], holes[HOLDEM_MAX_SEATS];
    uint8_t all_in[HOLDEM_MAX_SEATS], folded[HOLDEM_MAX_SEATS];
    int first_hole;        /* the seat dealt first */
    int first_pre;         /* the first seat with a turn (or no decision) before the flop */
    int first_post;        /* the first seat to act after the flop */
    int expect_post;       /* the seat that should open after the flop, computed at the flop */
    int street, button, n; /* the hand's effective button and the table's seats */
} tour_seen_t;

static void tour_cb(void *ud, const holdem_event_t *ev)
{
    tour_seen_t *w = ud;
    obs_cb(w->obs, ev);
    int s = ev->seat;
    switch (ev->kind) {
    case HOLDEM_EV_POST:
        if (ev->detail == HOLDEM_POST_SMALL_BLIND)
            w->posts_sb[s]++;
        else if (ev->detail == HOLDEM_POST_BIG_BLIND)
            w->posts_bb[s]++;
        else if (ev->detail == HOLDEM_POST_ANTE)
            w->posts_ante[s]++;
        else if (ev->detail == HOLDEM_POST_BB_ANTE)
            w->posts_bba[s]++;
        else
            w->posts_other[s]++;
        w->all_in[s] |= ev->all_in;
        break;
    case HOLDEM_EV_HOLE:
        if (w->first_hole < 0)
            w->first_hole = s;
        w->holes[s]++;
        break;
    case HOLDEM_EV_TO_ACT:
    case HOLDEM_EV_NO_DECISION:
        if (w->street == 0 && w->first_pre < 0)
            w->first_pre = s;
        if (w->street == 1 && w->first_post < 0 && ev->kind == HOLDEM_EV_TO_ACT)
            w->first_post = s;
        break;
    case HOLDEM_EV_ACTION:
        w->all_in[s] |= ev->all_in;
        w->folded[s] |= ev->detail == HOLDEM_FOLD;
        break;
    case HOLDEM_EV_BOARD:
        w->street = ev->detail;
        if (ev->detail == 1) {
            /* After the flop the first live seat able to act left of the button opens. */
            w->expect_post = -1;
            for (int k = 1; k <= w->n && w->expect_post < 0; k++) {
                int q = (w->button + k) % w->n;
                if (w->holes[q] && !w->folded[q] && !w->all_in[q])
                    w->expect_post = q;
            }
        }
        break;
    default:
        break;
    }
}

/*
 * One table of a tournament after another: random busts (and leaves: a player moved away),
 * random arrivals (a player moved in; he waits for the button when his seat lies strictly
 * after the last small blind and before the last big blind, tour_seating.h), levels that rise
 * between hands, and each hand's positions by the big-blind-forward rule of docs/tournaments.md
 * "Positions": big blind = the first occupied seat after the last big blind, small blind = the
 * last big blind's seat (dead when that player has gone), button = the last small blind's seat.
 * Every hand: chips conserved, the blinds and antes posted by the right seats and nobody else,
 * the waiting players neither dealt in nor posting, the deal and the action starting where they
 * should, and nobody posting the big blind twice while a player dealt in all along has not
 * posted it since.
 */
static void tournament_property(long tournaments, uint64_t seed)
{
    rng_state = seed;
    long hands = 0, dead_sb = 0, dead_button = 0, heads_up = 0, waited = 0, resets = 0;
    uint8_t deck[52];
    for (long tn = 0; tn < tournaments; tn++) {
        int n = (int)rnd_between(2, HOLDEM_MAX_SEATS);
        int64_t sb_amt = rnd_between(1, 5), bb_amt = sb_amt * rnd_between(1, 3);
        int64_t ante = rnd() % 3 == 0 ? rnd_between(1, 3) : 0;
        int64_t bba = ante == 0 && rnd() % 3 == 0 ? bb_amt : 0;
        holdem_config_t c = config(n, sb_amt, bb_amt);
        c.ante = ante;
        c.big_blind_ante = bba;
        observer_t *o = calloc(1, sizeof *o);
        o->seats = n;
        o->big_blind = bb_amt;
        o->min_bet = bb_amt;
        tour_seen_t w;
        memset(&w, 0, sizeof w);
        w.obs = o;
        w.n = n;
        holdem_table_t *t = holdem_table_create(&c, tour_cb, &w, NULL);
        REQUIRE(t != NULL, "no table");
        ledger_t led = {0, 0};
        uint64_t player[HOLDEM_MAX_SEATS] = {0}, next_id = 1;
        long last_bb_hand[HOLDEM_MAX_SEATS], dealt_since[HOLDEM_MAX_SEATS];
        uint8_t waiting[HOLDEM_MAX_SEATS] = {0};
        int seated = 0;
        for (int s = 0; s < n; s++) {
            if (s >= 2 && rnd() % 5 == 0)
                continue;
            int64_t st = rnd_between(1, rnd() % 2 ? 100 : 600);
            REQUIRE(holdem_table_sit(t, s, st) == HOLDEM_OK, "sit");
            led.in += st;
            player[s] = next_id++;
            last_bb_hand[s] = -1;
            dealt_since[s] = -1;
            seated++;
        }
        int last_sb = -1, last_bb = -1;
        for (long h = 0; h < 150; h++) {
            /* Between hands: busts leave; now and then a player is moved away or in. */
            for (int s = 0; s < n; s++) {
                int64_t st = holdem_table_stack(t, s), got;
                if (st == 0 || (st > 0 && rnd() % 60 == 0)) {
                    REQUIRE(holdem_table_leave(t, s, &got) == HOLDEM_OK, "leave");
                    led.out += got;
                    player[s] = 0;
                    waiting[s] = 0;
                }
            }
            int occupied = 0;
            for (int s = 0; s < n; s++)
                occupied += player[s] != 0;
            if (occupied < 2 && rnd() % 2 == 0)
                break; /* the tournament is over at this table */
            if (occupied < 2 || rnd() % 12 == 0) {
                /* An arrival: any empty seat but the next small blind's (the last big blind's
                 * seat); he waits for the button between the last small and big blinds. */
                int s = (int)(rnd() % (uint64_t)n);
                if (player[s] == 0 && s != last_bb) {
                    int64_t st = rnd_between(20, 300);
                    REQUIRE(holdem_table_sit(t, s, st) == HOLDEM_OK, "arrival");
                    led.in += st;
                    player[s] = next_id++;
                    last_bb_hand[s] = -1;
                    dealt_since[s] = -1;
                    waiting[s] = last_bb >= 0 && last_sb != last_bb && (s - last_sb + n) % n > 0 &&
                                 (s - last_sb + n) % n < (last_bb - last_sb + n) % n;
                }
            }
            /* A new level now and then (refused mid-hand: checked below). */
            if (h > 0 && h % 15 == 0) {
                sb_amt += rnd_between(0, 3);
                bb_amt = bb_amt + sb_amt > 2 * sb_amt ? bb_amt + sb_amt : 2 * sb_amt;
                ante = ante > 0 ? ante + 1 : 0;
                bba = bba > 0 ? bb_amt : 0;
                REQUIRE(holdem_table_set_blinds(t, sb_amt, bb_amt, ante, bba) == HOLDEM_OK,
                        "set_blinds");
                o->big_blind = o->min_bet = bb_amt;
            }
            uint32_t dealt = 0;
            for (int s = 0; s < n; s++)
                if (player[s] != 0 && !waiting[s])
                    dealt |= 1u << s;
            int players = 0;
            for (int s = 0; s < n; s++)
                players += (dealt >> s) & 1u;
            occupied = 0;
            for (int s = 0; s < n; s++)
                occupied += player[s] != 0;
            if (occupied < 2)
                continue;
            for (int i = 0; i < 52; i++)
                deck[i] = (uint8_t)i;
            for (int i = 51; i > 0; i--) {
                int j = (int)(rnd() % (uint64_t)(i + 1));
                uint8_t x = deck[i];
                deck[i] = deck[j];
                deck[j] = x;
            }
            /* The positions by the big-blind-forward rule. */
            int bb = -1;
            if (last_bb >= 0)
                for (int k = 1; k <= n && bb < 0; k++)
                    if (player[(last_bb + k) % n] != 0)
                        bb = (last_bb + k) % n;
            int reset = last_bb < 0 || players < 2 || bb < 0 || !((dealt >> bb) & 1u) ||
                        (players > 2 && bb == last_sb);
            int button = last_sb, sb = last_bb;
            memset(w.posts_sb, 0, sizeof w.posts_sb);
            memset(w.posts_bb, 0, sizeof w.posts_bb);
            memset(w.posts_ante, 0, sizeof w.posts_ante);
            memset(w.posts_bba, 0, sizeof w.posts_bba);
            memset(w.posts_other, 0, sizeof w.posts_other);
            memset(w.holes, 0, sizeof w.holes);
            memset(w.all_in, 0, sizeof w.all_in);
            memset(w.folded, 0, sizeof w.folded);
            w.first_hole = w.first_pre = w.first_post = w.expect_post = -1;
            w.street = 0;
            int rc;
            if (reset) {
                /* A table's first hand, or one the waiting players would leave short: a fresh
                 * start with everyone dealt in and the button drawn (the cash-game positions). */
                memset(waiting, 0, sizeof waiting);
                dealt = 0;
                players = 0;
                for (int s = 0; s < n; s++)
                    if (player[s] != 0) {
                        dealt |= 1u << s;
                        players++;
                        last_bb_hand[s] = -1;
                    }
                int b;
                do
                    b = (int)(rnd() % (uint64_t)n);
                while (player[b] == 0);
                rc = holdem_table_start_hand(t, b, deck, 52);
                resets++;
            } else {
                w.button = button;
                if (players == 2)
                    for (int s = 0; s < n; s++)
                        if (((dealt >> s) & 1u) && s != bb)
                            w.button = s;
                holdem_positions_t p = positions(button, sb, bb, dealt);
                rc = holdem_table_start_hand_at(t, &p, deck, 52);
            }
            REQUIRE(rc == HOLDEM_OK,
                    "tournament %ld hand %ld: start refused %s (button %d sb %d bb %d dealt %x)",
                    tn, h, holdem_err_name(rc), button, sb, bb, dealt);
            holdem_positions_t lp;
            REQUIRE(holdem_table_last_positions(t, &lp) == HOLDEM_OK, "last_positions");
            REQUIRE(lp.dealt_mask == dealt, "dealt mask %x, expected %x", lp.dealt_mask, dealt);
            int live_sb;
            if (reset) {
                bb = lp.big_blind;
                live_sb = lp.small_blind;
                button = lp.button;
            } else if (players == 2) {
                /* Heads-up: the other player has the button and posts the small blind. */
                live_sb = -1;
                for (int s = 0; s < n; s++)
                    if (((dealt >> s) & 1u) && s != bb)
                        live_sb = s;
                button = live_sb;
                heads_up++;
                REQUIRE(lp.button == live_sb && lp.small_blind == sb && lp.big_blind == bb,
                        "heads-up positions");
            } else {
                live_sb = (dealt >> sb) & 1u ? sb : -1;
                dead_sb += live_sb < 0;
                dead_button += !((dealt >> button) & 1u);
                REQUIRE(lp.button == button && lp.small_blind == sb && lp.big_blind == bb,
                        "positions reported");
            }
            REQUIRE(holdem_table_button(t) == button, "button");
            w.button = button;
            hands++;
            /* Who posted what. */
            for (int s = 0; s < n; s++) {
                int in = (dealt >> s) & 1u;
                waited += waiting[s];
                REQUIRE(w.holes[s] == in, "seat %d dealt %d, in %d", s, w.holes[s], in);
                REQUIRE(w.posts_sb[s] == (s == live_sb), "seat %d small blind posts %d (sb %d)", s,
                        w.posts_sb[s], live_sb);
                REQUIRE(w.posts_bb[s] == (s == bb), "seat %d big blind posts %d", s, w.posts_bb[s]);
                REQUIRE(w.posts_ante[s] == (ante > 0 && in), "seat %d antes %d", s,
                        w.posts_ante[s]);
                REQUIRE(w.posts_bba[s] <= (bba > 0 && s == bb), "seat %d bb antes", s);
                REQUIRE(w.posts_other[s] == 0, "seat %d straddled", s);
            }
            /* The deal from the button's left; the first turn after the big blind. */
            int want_hole = -1, want_pre = -1;
            for (int k = 1; k <= n && want_hole < 0; k++)
                if ((dealt >> ((button + k) % n)) & 1u)
                    want_hole = (button + k) % n;
            for (int k = 1; k <= n && want_pre < 0; k++) {
                int q = (bb + k) % n;
                if (((dealt >> q) & 1u) && !w.all_in[q])
                    want_pre = q;
            }
            REQUIRE(w.first_hole == want_hole, "first dealt %d, expected %d", w.first_hole,
                    want_hole);
            REQUIRE(w.first_pre == want_pre, "first preflop turn %d, expected %d", w.first_pre,
                    want_pre);
            /* The big blind: never twice while someone dealt in all along has not had it. */
            for (int s = 0; s < n; s++)
                if (((dealt >> s) & 1u) && dealt_since[s] < 0)
                    dealt_since[s] = hands;
            if (last_bb_hand[bb] >= 0)
                for (int s = 0; s < n; s++)
                    REQUIRE(s == bb || player[s] == 0 || dealt_since[s] < 0 ||
                                dealt_since[s] > last_bb_hand[bb] ||
                                last_bb_hand[s] > last_bb_hand[bb],
                            "seat %d posts the big blind again before seat %d", bb, s);
            last_bb_hand[bb] = hands;
            last_sb = lp.small_blind;
            last_bb = lp.big_blind;
            /* Mid-hand levels are refused. */
            if (rnd() % 8 == 0 && holdem_table_in_hand(t)) {
                holdem_table_t *before = holdem_table_clone(t);
                REQUIRE(holdem_table_set_blinds(t, 1, 2, 0, 0) == HOLDEM_E_NOT_ALLOWED,
                        "set_blinds mid-hand");
                REQUIRE(holdem_table_same_state(t, before), "set_blinds changed the table");
                holdem_table_destroy(before);
            }
            REQUIRE(table_chips(t, n) == led.in - led.out, "chips at the start");
            int steps = 0;
            while (holdem_table_in_hand(t)) {
                REQUIRE(++steps < 500, "endless hand");
                holdem_legal_t l;
                holdem_table_legal(t, &l);
                unsigned r = (unsigned)(rnd() % 20);
                holdem_action_kind_t kind;
                int64_t amount = 0;
                if (r < 4)
                    kind = HOLDEM_FOLD;
                else if (r < 14)
                    kind = l.can_check ? HOLDEM_CHECK : HOLDEM_CALL;
                else if (r < 19 && (l.can_bet || l.can_raise)) {
                    kind = l.can_bet ? HOLDEM_BET : HOLDEM_RAISE;
                    amount = rnd() % 4 ? l.min_to : rnd_between(l.min_to, l.max_to);
                } else
                    kind = l.can_bet || l.can_raise ? HOLDEM_ALL_IN
                           : l.can_check            ? HOLDEM_CHECK
                                                    : HOLDEM_CALL;
                rc = holdem_table_act(t, l.seat, kind, amount, 0);
                REQUIRE(rc == HOLDEM_OK, "legal action refused: %s", holdem_err_name(rc));
                REQUIRE(table_chips(t, n) == led.in - led.out, "chips in the hand");
            }
            REQUIRE(w.first_post == w.expect_post || w.first_post < 0,
                    "first turn after the flop %d, expected %d", w.first_post, w.expect_post);
            holdem_settlement_t st;
            REQUIRE(holdem_table_settlement(t, &st) == HOLDEM_OK, "settlement");
            int64_t sum = 0;
            for (int s = 0; s < n; s++) {
                sum += st.delta[s];
                REQUIRE(st.dealt[s] == ((dealt >> s) & 1u), "settlement dealt");
            }
            REQUIRE(sum == 0, "deltas sum to %lld", (long long)sum);
            REQUIRE(table_chips(t, n) == led.in - led.out, "chips after the hand");
            /* The waiting players play from the next hand; those out of the hand lose their run
             * of hands dealt in. */
            for (int s = 0; s < n; s++) {
                if (!((dealt >> s) & 1u))
                    dealt_since[s] = -1;
                waiting[s] = 0;
            }
        }
        REQUIRE(o->violations == 0, "%ld rule violations, first: %s; its hand's events:%s",
                o->violations, o->first, o->first_hand);
        holdem_table_destroy(t);
        free(o);
    }
    /* The random tournaments must reach the interesting places. */
    REQUIRE(dead_sb > tournaments / 20 && dead_button > tournaments / 20 &&
                heads_up > tournaments && waited > tournaments / 50,
            "coverage: %ld hands, %ld dead small blinds, %ld dead buttons, %ld heads-up, %ld "
            "waiting, %ld resets",
            hands, dead_sb, dead_button, heads_up, waited, resets);
    printf("tournaments: %ld, hands %ld, dead small blinds %ld, dead buttons %ld, heads-up %ld, "
           "waiting %ld, resets %ld\n",
           tournaments, hands, dead_sb, dead_button, heads_up, waited, resets);
}

START_TEST(test_tournament_big_blind_forward_property)
{
    tournament_property(HOLDEM_TOURNAMENTS, 0x9e3779b97f4a7c15ull);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("holdem_table");
    TCase *tc;
    tc = tcase_create("phh");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_phh_replays_every_oracle_hand_exactly);
    tcase_add_test(tc, test_phh_heads_up_reversed_blinds_and_bb_ante);
    tcase_add_test(tc, test_phh_bad_input_is_explained);
    tcase_add_test(tc, test_phh_pokerkit_check_without_a_decision);
    tcase_add_test(tc, test_phh_replay_command_counts_and_fails_on_mismatch);
    suite_add_tcase(s, tc);
    tc = tcase_create("pots");
    tcase_add_test(tc, test_pots_three_all_ins_of_different_sizes);
    tcase_add_test(tc, test_pots_four_all_ins_of_different_sizes);
    tcase_add_test(tc, test_pots_split_odd_chip_goes_left_of_button);
    tcase_add_test(tc, test_pots_three_way_split_and_side_pot_to_other_winner);
    tcase_add_test(tc, test_showdown_river_aggressor_shows_first_and_loser_mucks);
    suite_add_tcase(s, tc);
    tc = tcase_create("betting");
    tcase_add_test(tc, test_betting_min_bet_and_min_raise_enforced);
    tcase_add_test(tc, test_betting_short_all_in_does_not_reopen_for_players_who_acted);
    tcase_add_test(tc, test_betting_two_short_all_ins_adding_to_full_raise_reopen);
    tcase_add_test(tc, test_betting_big_blind_has_option_and_heads_up_order);
    tcase_add_test(tc, test_betting_straddle_acts_last_and_sets_min_raise);
    tcase_add_test(tc, test_betting_restraddle_chain_acts_left_of_last_straddler);
    tcase_add_test(tc, test_straddle_offers_go_to_the_seats_in_order);
    tcase_add_test(tc, test_betting_no_turn_without_a_decision);
    tcase_add_test(tc, test_pokerkit_rules_where_the_house_rules_differ);
    tcase_add_test(tc, test_betting_big_blind_ante_is_dead_and_blind_comes_first);
    suite_add_tcase(s, tc);
    tc = tcase_create("table");
    tcase_add_test(tc, test_timeout_checks_if_possible_else_folds_and_uses_bank);
    tcase_add_test(tc, test_seats_sit_out_sit_in_and_leave);
    tcase_add_test(tc, test_rake_percentage_with_cap_and_no_flop_no_drop);
    tcase_add_test(tc, test_config_and_deck_are_validated);
    suite_add_tcase(s, tc);
    tc = tcase_create("tournament");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_tournament_set_blinds_between_hands_only);
    tcase_add_test(tc, test_tournament_dead_small_blind);
    tcase_add_test(tc, test_tournament_dead_button);
    tcase_add_test(tc, test_tournament_heads_up_positions);
    tcase_add_test(tc, test_tournament_wait_for_button_seat_not_dealt);
    tcase_add_test(tc, test_tournament_invalid_positions_refused);
    tcase_add_test(tc, test_tournament_big_blind_forward_property);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, test_random_play_conserves_chips_and_keeps_rules);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
