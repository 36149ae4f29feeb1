/*
 * holdem_record (games/holdem/holdem_record.h; docs/replays.md "PHH export"): random hold'em
 * hands played through the real table and written as hand history records the way the engine
 * writes them (games/holdem/holdem_engine.c: posts, hole cards, actions with their chips, the
 * board, the deck in dealing order, the results and the rake; docs/hand-history.md), then
 *   - played again from the record (holdem_record_play): the board comes out where it did;
 *   - exported as PHH (holdem_record_phh), which replays its own file through the PHH replay
 *     (croupier-rules phh-replay's code): every hand exports but those the house rules and
 *     PokerKit's conventions settle differently, refused with that reason;
 *   - records that lie (a changed result, a card missing from the deck, an action out of turn,
 *     another game) are refused.
 * With HOLDEM_RECORD_PHH_DIR set, the exported files are written there (for
 * tests/phh/check_pokerkit.py).
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "holdem_eval.h"
#include "holdem_record.h"
#include "holdem_table.h"

#ifndef HOLDEM_RECORD_HANDS
#define HOLDEM_RECORD_HANDS 3000
#endif

/* xorshift64*: a repeatable stream for the hands. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static int64_t between(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* The record as the engine builds it from the table's events (he_on_event). */
typedef struct {
    json_t *cards, *actions;
    bool offer_open;
    int board_at[3]; /* actions recorded before each street's board */
} rec_build_t;

static const char *action_name(int kind)
{
    static const char *const names[] = {"fold",  "check",  "call",   "bet",
                                        "raise", "all_in", "timeout"};
    return names[kind];
}

static const char *post_name(int kind)
{
    static const char *const names[] = {"ante", "bb_ante", "small_blind", "big_blind", "straddle"};
    return names[kind];
}

static void add_card(rec_build_t *b, int seat, uint8_t card)
{
    char t[3];
    json_array_append_new(
        b->cards, json_pack("{s:i,s:s}", "seat", seat, "card", holdem_card_format(card, t)));
}

static void add_action(rec_build_t *b, int seat, const char *name, int64_t amount)
{
    json_array_append_new(b->actions, json_pack("{s:i,s:s,s:I}", "seat", seat, "action", name,
                                                "amount", (json_int_t)amount));
}

static void on_event(void *ud, const holdem_event_t *ev)
{
    rec_build_t *b = ud;
    switch (ev->kind) {
    case HOLDEM_EV_POST:
        if (ev->detail == HOLDEM_POST_STRADDLE)
            b->offer_open = false;
        add_action(b, ev->seat, post_name(ev->detail), ev->amount);
        return;
    case HOLDEM_EV_HOLE:
        add_card(b, ev->seat, ev->cards[0]);
        add_card(b, ev->seat, ev->cards[1]);
        return;
    case HOLDEM_EV_ACTION:
        add_action(b, ev->seat, b->offer_open ? "no_straddle" : action_name(ev->detail),
                   ev->amount);
        b->offer_open = false;
        return;
    case HOLDEM_EV_BOARD:
        b->board_at[ev->detail - 1] = (int)json_array_size(b->actions);
        for (int i = 0; i < ev->ncards; i++)
            add_card(b, -1, ev->cards[i]);
        return;
    case HOLDEM_EV_TO_ACT:
        b->offer_open = ev->detail == 1;
        return;
    default:
        return;
    }
}

/* The seats the table showed at the end. */
static void on_show(void *ud, const holdem_event_t *ev)
{
    bool *shown = ud;
    if (ev->kind == HOLDEM_EV_SHOW)
        shown[ev->seat] = true;
}

/* One random hand and its record (the caller frees it); board_at gets where the board came. */
static json_t *random_hand(int n, int board_at[3])
{
    rec_build_t b = {.cards = json_array(), .actions = json_array(), .board_at = {-1, -1, -1}};
    int64_t bb = (int64_t)2 << between(0, 6);
    /* A tournament hand now and then: its blinds and antes, its positions, no rake, no
     * straddles (docs/rules/holdem.md "Tournament hands"). */
    bool tour = between(0, 3) == 0;
    int straddles = !tour && n >= 4 && between(0, 3) == 0 ? (int)between(1, n - 3) : 0;
    bool rake = !tour && between(0, 2) == 0;
    int64_t ante = tour && between(0, 1) == 0 ? between(1, bb / 2 > 0 ? bb / 2 : 1) : 0;
    bool bba = ante > 0 && between(0, 1) == 0;
    if (bba)
        ante = bb;
    holdem_config_t cfg = {.seats = 9,
                           .small_blind = bb / 2,
                           .big_blind = bb,
                           .rake_basis_points = rake ? 500 : 0,
                           .rake_cap = rake ? 3 * bb : 0};
    if (straddles > 0) {
        cfg.straddle = 2 * bb;
        cfg.max_straddles = straddles;
        cfg.straddle_offers = true;
    }
    holdem_table_t *t = holdem_table_create(&cfg, on_event, &b, NULL);
    ck_assert_ptr_nonnull(t);
    /* n of the 9 seats, stacks from a part of the big blind to 200 big blinds. */
    int seat[9], k = 0;
    json_t *seats = json_array();
    for (int s = 0; s < 9 && k < n; s++) {
        if ((int)between(0, 8 - s) >= n - k)
            continue;
        seat[k++] = s;
        int64_t stack = between(0, 4) == 0 ? between(1, 3 * bb) : between(bb, 200 * bb);
        ck_assert_int_eq(holdem_table_sit(t, s, stack), HOLDEM_OK);
        char player[16];
        snprintf(player, sizeof player, "%d", 1000 + s);
        json_array_append_new(seats, json_pack("{s:i,s:s,s:b,s:I}", "seat", s, "player", player,
                                               "bot", 0, "stack", (json_int_t)stack));
    }
    ck_assert_int_eq(k, n);
    uint8_t deck[HOLDEM_CARDS];
    for (int i = 0; i < HOLDEM_CARDS; i++)
        deck[i] = (uint8_t)i;
    for (int i = HOLDEM_CARDS - 1; i > 0; i--) {
        int j = (int)between(0, i);
        uint8_t x = deck[i];
        deck[i] = deck[j];
        deck[j] = x;
    }
    int bi = (int)between(0, n - 1);
    int button = seat[bi];
    json_t *tj = NULL;
    if (tour) {
        holdem_positions_t pos = {.button = button,
                                  .small_blind = n == 2 ? button : seat[(bi + 1) % n],
                                  .big_blind = seat[(bi + (n == 2 ? 1 : 2)) % n]};
        ck_assert_int_eq(holdem_table_set_blinds(t, bb / 2, bb, bba ? 0 : ante, bba ? ante : 0),
                         HOLDEM_OK);
        ck_assert_int_eq(holdem_table_start_hand_at(t, &pos, deck, HOLDEM_CARDS), HOLDEM_OK);
        tj = json_pack("{s:i,s:i,s:I,s:i,s:I,s:I,s:I,s:b,s:i,s:i,s:i}", "id", 1, "table", 1, "hand",
                       (json_int_t)1, "level", 0, "small_blind", (json_int_t)(bb / 2), "big_blind",
                       (json_int_t)bb, "ante", (json_int_t)ante, "big_blind_ante", bba, "button",
                       pos.button, "sb", pos.small_blind, "bb", pos.big_blind);
    } else {
        ck_assert_int_eq(holdem_table_start_hand(t, button, deck, HOLDEM_CARDS), HOLDEM_OK);
    }
    for (int guard = 0; holdem_table_in_hand(t) && guard < 1000; guard++) {
        holdem_legal_t l;
        holdem_table_legal(t, &l);
        ck_assert_int_ge(l.seat, 0);
        holdem_action_kind_t kind;
        int64_t to = 0;
        int r = (int)between(0, 99);
        if (l.straddle_offer) {
            kind = r < 60 ? HOLDEM_BET : HOLDEM_CHECK;
            to = l.min_to;
        } else if (r < 15 && !l.can_check) {
            kind = HOLDEM_FOLD;
        } else if (r < 60) {
            kind = l.can_check ? HOLDEM_CHECK : HOLDEM_CALL;
        } else if (r < 75) {
            kind = l.can_bet || l.can_raise ? HOLDEM_ALL_IN : HOLDEM_CALL;
        } else if (l.can_bet || l.can_raise) {
            kind = l.can_bet ? HOLDEM_BET : HOLDEM_RAISE;
            to = l.min_to >= l.max_to ? l.max_to
                                      : between(l.min_to, l.min_to + (l.max_to - l.min_to) / 3);
            if (to >= l.max_to)
                kind = HOLDEM_ALL_IN;
        } else {
            kind = l.can_check ? HOLDEM_CHECK : HOLDEM_CALL;
        }
        if (r >= 97)
            kind = HOLDEM_TIMEOUT;
        int rc = holdem_table_act(t, l.seat, kind, to, 0);
        ck_assert_msg(rc == HOLDEM_OK,
                      "act %d to %" PRId64 " by %d: %s (offer %d bet %d raise %d "
                      "check %d min %" PRId64 " max %" PRId64 ")",
                      kind, to, l.seat, holdem_err_name(rc), l.straddle_offer, l.can_bet,
                      l.can_raise, l.can_check, l.min_to, l.max_to);
    }
    ck_assert(!holdem_table_in_hand(t));
    holdem_settlement_t st;
    ck_assert_int_eq(holdem_table_settlement(t, &st), HOLDEM_OK);
    json_t *results = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(results, json_pack("{s:i,s:I}", "seat", seat[i], "delta",
                                                 (json_int_t)st.delta[seat[i]]));
    char hex[2 * HOLDEM_CARDS + 1];
    for (int i = 0; i < HOLDEM_CARDS; i++)
        snprintf(hex + 2 * i, 3, "%02x", deck[i]);
    holdem_table_destroy(t);
    memcpy(board_at, b.board_at, sizeof b.board_at);
    json_t *rec =
        json_pack("{s:s,s:s,s:s,s:I,s:i,s:o,s:o,s:o,s:o,s:s,s:I,s:s}", "round", "holdem:1:1:1:1",
                  "game", "holdem", "engine", "holdem", "stake", (json_int_t)bb, "button", button,
                  "seats", seats, "cards", b.cards, "actions", b.actions, "results", results,
                  "outcome", "completed", "rake", (json_int_t)st.rake, "deck", hex);
    if (tj != NULL)
        json_object_set_new(rec, "tournament", tj);
    return rec;
}

START_TEST(test_holdem_record_random_hands_replay_and_export)
{
    const char *dir = getenv("HOLDEM_RECORD_PHH_DIR");
    int exported = 0, refused = 0;
    for (int h = 0; h < HOLDEM_RECORD_HANDS; h++) {
        int at[3], order[3];
        json_t *rec = random_hand((int)between(2, 9), at);
        char err[300] = "";
        int rc = holdem_record_play(rec, false, NULL, NULL, order, err, sizeof err);
        ck_assert_msg(rc == 0, "hand %d: %s", h, err);
        for (int s = 0; s < 3; s++)
            ck_assert_msg(order[s] == at[s], "hand %d street %d: board after %d actions, not %d", h,
                          s, order[s], at[s]);
        char *phh = NULL, *masked = NULL;
        bool shown[HOLDEM_MAX_SEATS] = {false}, hidden[HOLDEM_MAX_SEATS];
        ck_assert_int_eq(holdem_record_play(rec, false, on_show, shown, NULL, err, sizeof err), 0);
        for (int s = 0; s < HOLDEM_MAX_SEATS; s++)
            hidden[s] = !shown[s];
        rc = holdem_record_phh(rec, NULL, &phh, err, sizeof err);
        if (rc == 0) {
            exported++;
            ck_assert_ptr_nonnull(strstr(phh, "variant = 'NT'"));
            /* The stranger's file: the same but the cards nobody was shown. */
            ck_assert_int_eq(holdem_record_phh(rec, hidden, &masked, err, sizeof err), 0);
            ck_assert_uint_eq(strlen(masked), strlen(phh));
            ck_assert_int_eq(strstr(masked, "????") != NULL, strcmp(masked, phh) != 0);
            if (dir != NULL) {
                char path[512];
                snprintf(path, sizeof path, "%s/%05d.phh", dir, h);
                FILE *f = fopen(path, "w");
                if (f != NULL) {
                    fputs(phh, f);
                    fclose(f);
                }
                snprintf(path, sizeof path, "%s/m%05d.phh", dir, h);
                if ((f = fopen(path, "w")) != NULL) {
                    fputs(masked, f);
                    fclose(f);
                }
            }
        } else {
            /* Only a hand the two rule sets settle differently may be refused. */
            ck_assert_msg(rc == -EINVAL && strstr(err, "PokerKit") != NULL, "hand %d: %d %s", h, rc,
                          err);
            refused++;
            if (getenv("HOLDEM_RECORD_VERBOSE") != NULL)
                fprintf(stderr, "hand %d refused: %s\n", h, err);
        }
        free(phh);
        free(masked);
        json_decref(rec);
    }
    ck_assert_msg(exported >= HOLDEM_RECORD_HANDS * 9 / 10, "%d exported, %d refused", exported,
                  refused);
}
END_TEST

START_TEST(test_holdem_record_refuses_records_that_lie)
{
    int at[3];
    json_t *rec = random_hand(3, at);
    char err[300];
    /* A result the table does not give. */
    json_t *r = json_deep_copy(rec);
    json_t *res = json_array_get(json_object_get(r, "results"), 0);
    json_object_set_new(res, "delta",
                        json_integer(json_integer_value(json_object_get(res, "delta")) + 1));
    ck_assert_int_eq(holdem_record_play(r, false, NULL, NULL, NULL, err, sizeof err), -EINVAL);
    json_decref(r);
    /* A deck with a card twice. */
    r = json_deep_copy(rec);
    char deck[2 * HOLDEM_CARDS + 1];
    snprintf(deck, sizeof deck, "%s", json_string_value(json_object_get(r, "deck")));
    memcpy(deck + 2, deck, 2);
    json_object_set_new(r, "deck", json_string(deck));
    ck_assert_int_eq(holdem_record_play(r, false, NULL, NULL, NULL, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "deck"));
    json_decref(r);
    /* An action by the wrong seat. */
    r = json_deep_copy(rec);
    json_t *acts = json_object_get(r, "actions");
    json_t *last = json_array_get(acts, json_array_size(acts) - 1);
    int stranger = 0; /* a seat not dealt in */
    size_t i;
    json_t *st;
    json_array_foreach(json_object_get(r, "seats"), i, st)
    {
        if (json_integer_value(json_object_get(st, "seat")) == stranger) {
            stranger++;
            i = (size_t)-1; /* from the start again */
        }
    }
    json_object_set_new(last, "seat", json_integer(stranger));
    ck_assert_int_eq(holdem_record_play(r, false, NULL, NULL, NULL, err, sizeof err), -EINVAL);
    json_decref(r);
    /* No deck (a crash void), another game, a voided hand for PHH. */
    r = json_deep_copy(rec);
    json_object_del(r, "deck");
    ck_assert_int_eq(holdem_record_play(r, false, NULL, NULL, NULL, err, sizeof err), -EINVAL);
    json_decref(r);
    r = json_deep_copy(rec);
    json_object_set_new(r, "engine", json_string("zhajinhua"));
    char *phh = NULL;
    ck_assert_int_eq(holdem_record_phh(r, NULL, &phh, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "hold'em"));
    json_decref(r);
    r = json_deep_copy(rec);
    json_object_set_new(r, "outcome", json_string("voided"));
    ck_assert_int_eq(holdem_record_phh(r, NULL, &phh, err, sizeof err), -EINVAL);
    ck_assert_ptr_null(phh);
    json_decref(r);
    json_decref(rec);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("holdem_record");
    TCase *tc = tcase_create("record");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_holdem_record_random_hands_replay_and_export);
    tcase_add_test(tc, test_holdem_record_refuses_records_that_lie);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
