/*
 * Unit tests for the hold'em table (games/holdem/holdem_table.h) and the PHH replay
 * (holdem_phh.h), following docs/rules/holdem.md:
 *   - every hand under ../shared/oracles/phh/ replays through the table with the recorded
 *     finishing stacks (rules section "Replays");
 *   - side pots with three and four all-ins, split pots and odd chips ("Pots and showdown");
 *   - betting rules: minimum bet and raise, short all-ins, the big blind's option, heads-up
 *     order, straddle, big-blind ante ("Betting");
 *   - timeouts and time bank, sit-out and sit-in, rake ("Timers", "Seats", "Rake");
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
