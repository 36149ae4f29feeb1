/*
 * test_replay -- the replay builder and the games' view policies (replay/replay.h,
 * docs/replays.md) on hand history records (docs/hand-history.md), no process.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deck.h"
#include "replay.h"
#include "shed_game.h"
#include "shed_rules.h"

/* The Zha Jin Hua example of docs/hand-history.md. */
static const char zjh_rec[] =
    "{\"round\":\"zhajinhua:3:7:4294967297:12\",\"game\":\"zhajinhua\",\"ts\":1767225600000,"
    "\"seats\":[{\"seat\":0,\"player\":\"1001\",\"bot\":false,\"stack\":2000},"
    "{\"seat\":1,\"player\":\"1002\",\"bot\":false,\"stack\":2000},"
    "{\"seat\":2,\"player\":\"1003\",\"bot\":false,\"stack\":1500}],"
    "\"cards\":[{\"seat\":1,\"card\":\"Kd\"},{\"seat\":1,\"card\":\"9c\"},{\"seat\":1,\"card\":"
    "\"4s\"},{\"seat\":2,\"card\":\"7h\"},{\"seat\":2,\"card\":\"7s\"},{\"seat\":2,\"card\":"
    "\"2d\"},{\"seat\":0,\"card\":\"As\"},{\"seat\":0,\"card\":\"Qh\"},{\"seat\":0,\"card\":"
    "\"8d\"}],"
    "\"actions\":[{\"seat\":1,\"action\":\"ante\",\"amount\":10},{\"seat\":2,\"action\":\"ante\","
    "\"amount\":10},{\"seat\":0,\"action\":\"ante\",\"amount\":10},{\"seat\":1,\"action\":"
    "\"call\",\"amount\":10},{\"seat\":2,\"action\":\"look\",\"amount\":0},{\"seat\":2,"
    "\"action\":\"raise\",\"amount\":40},{\"seat\":0,\"action\":\"fold\",\"amount\":0},"
    "{\"seat\":1,\"action\":\"call\",\"amount\":20},{\"seat\":2,\"action\":\"compare\","
    "\"amount\":40}],"
    "\"results\":[{\"seat\":0,\"delta\":-10},{\"seat\":1,\"delta\":-40},{\"seat\":2,\"delta\":"
    "43}],\"engine\":\"zhajinhua\",\"stake\":10,\"button\":0,\"outcome\":\"completed\","
    "\"rake\":7,\"deck\":\"0001\",\"deck_nonce\":\"ab\"}";

static Croupier__Replay *build(const char *text, uint64_t viewer)
{
    json_t *rec = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(rec);
    char err[200] = "";
    Croupier__Replay *r = replay_build(rec, viewer, err, sizeof err);
    ck_assert_msg(r != NULL, "replay_build: %s", err);
    json_decref(rec);
    return r;
}

/* Every game of the tree has its row (docs/replays.md "The policy of each game"); Niu Niu
 * shows every hand at its show window. */
START_TEST(test_replay_every_game_has_its_row)
{
    const char *games[] = {"holdem", "zhajinhua", "doudizhu", "runfast", "bigtwo",
                           "guandan", "blackjack", "niuniu", "test"};
    for (size_t i = 0; i < sizeof games / sizeof games[0]; i++)
        ck_assert_msg(replay_rules(games[i])->game != NULL, "%s has no row", games[i]);
    const replay_rules_t *n = replay_rules("niuniu");
    ck_assert_int_eq(n->show, REPLAY_SHOW_ALL);
    ck_assert(n->deck_public);
    ck_assert_ptr_null(replay_rules("nosuchgame")->game);
}
END_TEST

START_TEST(test_replay_card_codes_follow_the_protocol)
{
    ck_assert_int_eq(replay_card_code("2c"), 2 << 2);
    ck_assert_int_eq(replay_card_code("As"), 14 << 2 | 3);
    ck_assert_int_eq(replay_card_code("Td"), 10 << 2 | 1);
    ck_assert_int_eq(replay_card_code("Xb"), 60);
    ck_assert_int_eq(replay_card_code("Xr"), 61);
    ck_assert_int_eq(replay_card_code("1c"), -1);
    ck_assert_int_eq(replay_card_code("Ax"), -1);
    ck_assert_int_eq(replay_card_code("A"), -1);
    ck_assert_int_eq(replay_card_code(NULL), -1);
}
END_TEST

START_TEST(test_replay_zjh_shows_only_the_viewers_own_hand)
{
    Croupier__Replay *r = build(zjh_rec, 1002);
    ck_assert(r->has_your_seat);
    ck_assert_uint_eq(r->your_seat, 1);
    ck_assert_str_eq(r->policy, "own");
    ck_assert_ptr_null(r->deck); /* not public in Zha Jin Hua */
    ck_assert_uint_eq(r->n_seats, 3);
    for (size_t i = 0; i < r->n_seats; i++) {
        if (r->seats[i]->seat == 1) {
            ck_assert(r->seats[i]->has_cards);
            ck_assert_uint_eq(r->seats[i]->cards.len, 3);
            ck_assert_uint_eq(r->seats[i]->cards.data[0], 13 << 2 | 1); /* Kd */
        } else {
            ck_assert(!r->seats[i]->has_cards);
            ck_assert_uint_eq(r->seats[i]->hidden, 3);
        }
    }
    /* Three deals (one face up: the viewer's), nine actions in order. */
    ck_assert_uint_eq(r->n_events, 12);
    int up = 0;
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(r->events[i]->kind, CROUPIER__REPLAY_EVENT_KIND__REPLAY_DEAL);
        up += r->events[i]->has_cards;
        if (!r->events[i]->has_cards)
            ck_assert_uint_eq(r->events[i]->count, 3);
    }
    ck_assert_int_eq(up, 1);
    ck_assert_str_eq(r->events[11]->action, "compare");
    ck_assert_int_eq(r->events[11]->amount, 40);
    croupier__replay__free_unpacked(r, NULL);
}
END_TEST

/*
 * The Zha Jin Hua example under the per-card commitment (docs/fairness.md "The per-card
 * commitment"): button 0, so the deal goes 1, 2, 0 three times round: seat 1's cards at
 * positions 0, 3, 6, seat 2's at 1, 4, 7, seat 0's at 2, 5, 8; the other 43 cards follow.
 * The commitment is computed here from the codes and a nonce.
 */
static json_t *zjh_rec_per_card(void)
{
    json_t *rec = json_loads(zjh_rec, 0, NULL);
    ck_assert_ptr_nonnull(rec);
    static const char *const dealt[9] = {"Kd", "7h", "As", "9c", "7s", "Qh", "4s", "2d", "8d"};
    uint8_t codes[52], nonce[DECK_NONCE_LEN], commit[DECK_COMMIT_LEN];
    bool used[64] = {false};
    size_t n = 0;
    for (int i = 0; i < 9; i++) {
        codes[n] = (uint8_t)replay_card_code(dealt[i]);
        used[codes[n++]] = true;
    }
    for (int c = 8; c < 60; c++)
        if (!used[c])
            codes[n++] = (uint8_t)c;
    ck_assert_uint_eq(n, 52);
    for (int i = 0; i < DECK_NONCE_LEN; i++)
        nonce[i] = (uint8_t)(0xa0 + i);
    deck_commitment_cards(codes, 52, nonce, commit);
    char hex[2 * 52 + 1];
    deck_hex(codes, 52, hex);
    json_object_set_new(rec, "deck", json_string(hex)); /* the table's bytes are the codes */
    json_object_set_new(rec, "deck_codes", json_string(hex));
    json_object_set_new(rec, "deck_scheme", json_integer(2));
    deck_hex(nonce, DECK_NONCE_LEN, hex);
    json_object_set_new(rec, "deck_nonce", json_string(hex));
    deck_hex(commit, DECK_COMMIT_LEN, hex);
    json_object_set_new(rec, "deck_commitment", json_string(hex));
    return rec;
}

static Croupier__Replay *build_rec(const json_t *rec, uint64_t viewer)
{
    char err[200] = "";
    Croupier__Replay *r = replay_build(rec, viewer, err, sizeof err);
    ck_assert_msg(r != NULL, "replay_build: %s", err);
    return r;
}

START_TEST(test_replay_per_card_opens_the_viewers_hand_and_nothing_else)
{
    json_t *rec = zjh_rec_per_card();
    char err[200];
    /* The player of seat 1: every leaf, his three cards opened at 0, 3, 6; the check passes. */
    Croupier__Replay *r = build_rec(rec, 1002);
    ck_assert(r->has_deck_scheme);
    ck_assert_uint_eq(r->deck_scheme, 2);
    ck_assert_uint_eq(r->deck_leaves.len, 52 * DECK_LEAF_LEN);
    ck_assert_ptr_null(r->deck);
    ck_assert_ptr_null(r->deck_nonce);
    ck_assert_uint_eq(r->n_openings, 3);
    static const char *const mine[3] = {"Kd", "9c", "4s"};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_uint_eq(r->openings[i]->position, 3 * i);
        ck_assert_int_eq((int)r->openings[i]->card, replay_card_code(mine[i]));
        ck_assert_uint_eq(r->openings[i]->nonce.len, DECK_NONCE_LEN);
    }
    ck_assert_msg(replay_check_cards(r, r->deck_commitment.data, err, sizeof err) == 0, "%s", err);

    /* A changed card, a changed leaf, a card claimed at another position, a commitment the
     * Deals did not carry, an opening of a card the replay does not show: refused. */
    r->openings[1]->card ^= 1;
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), -EBADMSG);
    r->openings[1]->card ^= 1;
    r->deck_leaves.data[40] ^= 1;
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), -EBADMSG);
    ck_assert_ptr_nonnull(strstr(err, "leaves"));
    r->deck_leaves.data[40] ^= 1;
    uint8_t other[DECK_COMMIT_LEN] = {0};
    ck_assert_int_eq(replay_check_cards(r, other, err, sizeof err), -EBADMSG);
    r->button_seat = 2; /* the order 0, 1, 2: seat 1's cards at 1, 4, 7 */
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), -EBADMSG);
    ck_assert_ptr_nonnull(strstr(err, "not opened at position 1"));
    r->button_seat = 0;
    r->seats[0]->has_cards = false; /* seat 0 (the first in the record): not shown, opened */
    for (size_t i = 0; i < r->n_seats; i++)
        if (r->seats[i]->seat == 1)
            r->seats[i]->has_cards = false;
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), -EBADMSG);
    ck_assert_ptr_nonnull(strstr(err, "does not show"));
    croupier__replay__free_unpacked(r, NULL);

    /* A stranger (or a share code): the leaves, no opening, and the check holds for nothing. */
    r = build_rec(rec, 4242);
    ck_assert_uint_eq(r->deck_leaves.len, 52 * DECK_LEAF_LEN);
    ck_assert_uint_eq(r->n_openings, 0);
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), 0);
    croupier__replay__free_unpacked(r, NULL);

    /* A record whose codes do not open its commitment makes no replay. */
    json_object_set_new(rec, "deck_nonce",
                        json_string("00000000000000000000000000000000000000"
                                    "00000000000000000000000000"));
    ck_assert_ptr_null(replay_build(rec, 1002, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "do not open"));
    json_decref(rec);
}
END_TEST

/* Zha Jin Hua: a compare shows the two hands to its two players (docs/replays.md), so each one's
 * replay shows and opens the other's hand, and only theirs. */
START_TEST(test_replay_zjh_compare_shows_and_opens_the_other_hand_to_its_two_players)
{
    json_t *rec = zjh_rec_per_card();
    json_t *acts = json_object_get(rec, "actions");
    json_object_set_new(json_array_get(acts, json_array_size(acts) - 1), "target",
                        json_integer(1)); /* seat 2 compared with seat 1 */
    char err[200];
    static const struct {
        uint64_t viewer;
        int sees_other; /* the other seat of the compare, or -1 */
        size_t openings;
    } cases[] = {{1002, 2, 6}, {1003, 1, 6}, {1001, -1, 3}, {4242, -1, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        Croupier__Replay *r = build_rec(rec, cases[c].viewer);
        ck_assert_uint_eq(r->n_openings, cases[c].openings);
        ck_assert_msg(replay_check_cards(r, NULL, err, sizeof err) == 0, "%s", err);
        int me = r->has_your_seat ? (int)r->your_seat : -1;
        for (size_t i = 0; i < r->n_seats; i++) {
            int s = (int)r->seats[i]->seat;
            ck_assert_int_eq(r->seats[i]->has_cards, s == me || s == cases[c].sees_other);
        }
        /* The other hand is shown right after the compare, the last action. */
        int shows = 0;
        for (size_t i = 0; i < r->n_events; i++)
            if (r->events[i]->kind == CROUPIER__REPLAY_EVENT_KIND__REPLAY_SHOW) {
                ck_assert_int_eq((int)r->events[i]->seat, cases[c].sees_other);
                ck_assert_uint_eq(i, r->n_events - 1);
                ck_assert_uint_eq(r->events[i]->cards.len, 3);
                shows++;
            }
        ck_assert_int_eq(shows, cases[c].sees_other >= 0);
        croupier__replay__free_unpacked(r, NULL);
    }
    json_decref(rec);
}
END_TEST

START_TEST(test_replay_deal_positions_follow_each_games_dealing_rule)
{
    /* docs/fairness.md "Where each card was dealt". Hold'em, seats 1 3 4 7, button 3: the
     * order 4 7 1 3; hole cards at j and 4 + j, the board at 9 10 11, 13, 15. */
    uint32_t seats[4] = {1, 3, 4, 7};
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, 4, 0), 0);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, 7, 0), 1);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, 1, 0), 2);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, 3, 1), 7);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, -1, 0), 9);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, -1, 2), 11);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, -1, 3), 13);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, -1, 4), 15);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, -1, 5), -1);
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, 2, 0), -1); /* not dealt in */
    ck_assert_int_eq(replay_deal_position("holdem", 3, seats, 4, 4, 2), -1);
    /* A dead button (an empty seat, 5): the order 7 1 3 4. */
    ck_assert_int_eq(replay_deal_position("holdem", 5, seats, 4, 7, 0), 0);
    ck_assert_int_eq(replay_deal_position("holdem", 5, seats, 4, 4, 1), 7);
    /* Zha Jin Hua: three times round; no board. */
    ck_assert_int_eq(replay_deal_position("zhajinhua", 3, seats, 4, 3, 2), 11);
    ck_assert_int_eq(replay_deal_position("zhajinhua", 3, seats, 4, -1, 0), -1);
    ck_assert_int_eq(replay_deal_position("doudizhu", 3, seats, 4, 3, 0), -1);
    /* The shedding games: from seat 0 one card at a time whatever the button, the table's
     * cards last; hands shown as sets. */
    uint32_t three[3] = {2, 0, 1}, four[4] = {0, 1, 2, 3};
    ck_assert(replay_deal_as_set("doudizhu") && replay_deal_as_set("guandan"));
    ck_assert(!replay_deal_as_set("holdem") && !replay_deal_as_set("blackjack"));
    ck_assert_int_eq(replay_deal_position("doudizhu", -1, three, 3, 1, 0), 1);
    ck_assert_int_eq(replay_deal_position("doudizhu", 2, three, 3, 1, 16), 49);
    ck_assert_int_eq(replay_deal_position("doudizhu", 2, three, 3, 1, 17), -1);
    ck_assert_int_eq(replay_deal_position("doudizhu", 2, three, 3, -1, 0), 51);
    ck_assert_int_eq(replay_deal_position("doudizhu", 2, three, 3, -1, 2), 53);
    ck_assert_int_eq(replay_deal_position("doudizhu", 2, three, 3, -1, 3), -1);
    ck_assert_int_eq(replay_deal_position("runfast", 0, three, 3, 2, 15), 47);
    ck_assert_int_eq(replay_deal_position("runfast", 0, three, 3, -1, 0), -1);
    ck_assert_int_eq(replay_deal_position("guandan", 0, four, 4, 3, 26), 107);
    ck_assert_int_eq(replay_deal_position("bigtwo", 0, four, 4, 2, 12), 50);
    ck_assert_int_eq(replay_deal_position("guandan", 0, three, 3, 0, 0), -1); /* 3 seats */
}
END_TEST

START_TEST(test_replay_stranger_sees_no_hidden_card)
{
    Croupier__Replay *r = build(zjh_rec, 4242);
    ck_assert(!r->has_your_seat);
    for (size_t i = 0; i < r->n_seats; i++)
        ck_assert(!r->seats[i]->has_cards);
    for (size_t i = 0; i < r->n_events; i++)
        ck_assert(!r->events[i]->has_cards);
    croupier__replay__free_unpacked(r, NULL);
}
END_TEST

START_TEST(test_replay_doudizhu_shows_every_hand_and_the_deck)
{
    const char *rec =
        "{\"round\":\"trad:1:1:1:1\",\"game\":\"doudizhu\",\"engine\":\"traditional\","
        "\"seats\":[{\"seat\":0,\"player\":\"7\",\"stack\":100},{\"seat\":1,\"player\":\"8\","
        "\"stack\":100}],\"cards\":[{\"seat\":-1,\"card\":\"Xr\"},{\"seat\":0,\"card\":\"3c\"},"
        "{\"seat\":1,\"card\":\"Xb\"}],\"actions\":[{\"seat\":0,\"action\":\"play 3c\","
        "\"amount\":0}],\"results\":[{\"seat\":0,\"delta\":5},{\"seat\":1,\"delta\":-5}],"
        "\"outcome\":\"completed\",\"deck\":\"3c3d\",\"deck_nonce\":\"00\"}";
    Croupier__Replay *r = build(rec, 0);
    ck_assert_str_eq(r->policy, "all");
    ck_assert_str_eq(r->deck, "3c3d");
    for (size_t i = 0; i < r->n_seats; i++)
        ck_assert(r->seats[i]->has_cards);
    ck_assert_uint_eq(r->n_events, 4);
    ck_assert(!r->events[0]->has_seat); /* the bottom cards: the table's */
    ck_assert_uint_eq(r->events[0]->cards.data[0], 61);
    ck_assert_uint_eq(r->events[2]->cards.data[0], 60);
    ck_assert_str_eq(r->events[3]->action, "play 3c");
    croupier__replay__free_unpacked(r, NULL);
}
END_TEST

START_TEST(test_replay_duplicate_deal_shows_only_ones_own)
{
    json_t *rec =
        json_loads("{\"round\":\"trad:1:1:1:1\",\"game\":\"doudizhu\",\"seats\":[{\"seat\":0,"
                   "\"player\":\"7\",\"stack\":100},{\"seat\":1,\"player\":\"8\",\"stack\":100}],"
                   "\"cards\":[{\"seat\":0,\"card\":\"3c\"},{\"seat\":1,\"card\":\"4c\"}],"
                   "\"actions\":[],\"results\":[],\"outcome\":\"completed\",\"deck\":\"0102\","
                   "\"match\":{\"id\":1,\"seed\":\"ab\"}}",
                   0, NULL);
    char err[200];
    Croupier__Replay *r = replay_build(rec, 7, err, sizeof err);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->policy, "own");
    ck_assert_ptr_null(r->deck);
    ck_assert(r->seats[0]->has_cards);
    ck_assert(!r->seats[1]->has_cards);
    croupier__replay__free_unpacked(r, NULL);
    /* The same deal without a seed (not duplicate): everything. */
    json_object_del(json_object_get(rec, "match"), "seed");
    r = replay_build(rec, 7, err, sizeof err);
    ck_assert_str_eq(r->policy, "all");
    ck_assert(r->seats[1]->has_cards);
    croupier__replay__free_unpacked(r, NULL);
    json_decref(rec);
}
END_TEST

/*
 * The shedding games' position map (replay.c) is the deal of their rules (shed_game_deal_order()
 * deals position i to seat i % seats, the rest to the table): the same seats, hand size and deck
 * size, so a verifier's map cannot drift from what the servers deal.
 */
START_TEST(test_replay_shedding_deal_map_matches_the_games_rules)
{
    const char *games[] = {"doudizhu", "runfast", "bigtwo", "guandan"};
    for (size_t g = 0; g < 4; g++) {
        const shed_rules_t *r = shed_rules_find(games[g]);
        ck_assert_ptr_nonnull(r);
        int seats = shed_rules_seats(r);
        uint32_t all[8];
        for (int s = 0; s < seats; s++)
            all[s] = (uint32_t)s;
        bool hit[SHED_MAX_CARDS] = {false};
        int n = 0;
        for (int s = -1; s < seats; s++)
            for (size_t k = 0;; k++) {
                int pos = replay_deal_position(games[g], 0, all, (size_t)seats, s, k);
                if (pos < 0)
                    break;
                ck_assert_int_lt(pos, r->deck_size);
                ck_assert(!hit[pos]);
                hit[pos] = true;
                n++;
                if (s >= 0) {
                    ck_assert_int_eq(pos % seats, s);
                    ck_assert_int_lt(pos, r->hand_size * seats);
                } else {
                    ck_assert_int_ge(pos, r->hand_size * seats);
                }
            }
        ck_assert_int_eq(n, r->deck_size); /* every card of the deck, once */
    }
}
END_TEST

/* A wire code as the record's text ("3c", "Xb"). */
static void card_text(uint8_t code, char out[3])
{
    static const char ranks[] = "??23456789TJQKAX";
    out[0] = ranks[code >> 2];
    out[1] = code >> 2 == 15 ? "br"[code & 1] : "cdhs"[code & 3];
    out[2] = '\0';
}

/*
 * A duplicate deal of a match hall under the per-card commitment (docs/fairness.md "Duplicate
 * deals"): `game` with `nseats` seats of `hand` cards from the codes deck[0..n), dealt as the
 * shedding games deal (position k * nseats + s to seat s, the rest to the table). Each hand is
 * recorded as a set in code order, the table's cards first, as the engine records them.
 */
static json_t *dup_rec(const char *game, int nseats, int hand, const uint8_t *deck, size_t n)
{
    json_t *rec = json_pack("{s:s,s:s,s:s,s:[],s:[],s:[],s:[],s:s,s:i,s:{s:i,s:s,s:i}}", "round",
                            "traditional:1:1:9:3", "game", game, "engine", "traditional", "seats",
                            "cards", "actions", "results", "outcome", "completed", "button", 1,
                            "match", "id", 5, "seed", "1234567", "deal", 2);
    ck_assert_ptr_nonnull(rec);
    for (int s = -1; s < nseats; s++) {
        if (s >= 0)
            json_array_append_new(json_object_get(rec, "seats"),
                                  json_pack("{s:i,s:s,s:i}", "seat", s, "player",
                                            s == 0   ? "700"
                                            : s == 1 ? "701"
                                            : s == 2 ? "702"
                                                     : "703",
                                            "stack", 100));
        for (int code = 0; code < 256; code++)
            for (size_t i = 0; i < n; i++) {
                bool at = s < 0 ? i >= (size_t)(hand * nseats)
                                : i < (size_t)(hand * nseats) && (int)(i % nseats) == s;
                if (at && deck[i] == code) {
                    char t[3];
                    card_text((uint8_t)code, t);
                    json_array_append_new(json_object_get(rec, "cards"),
                                          json_pack("{s:i,s:s}", "seat", s, "card", t));
                }
            }
    }
    uint8_t nonce[DECK_NONCE_LEN], commit[DECK_COMMIT_LEN];
    for (int i = 0; i < DECK_NONCE_LEN; i++)
        nonce[i] = (uint8_t)(0x40 + i);
    deck_commitment_cards(deck, n, nonce, commit);
    char hex[2 * DECK_MAX_CARDS + 1];
    deck_hex(deck, n, hex);
    json_object_set_new(rec, "deck_codes", json_string(hex));
    json_object_set_new(rec, "deck", json_string(hex));
    json_object_set_new(rec, "deck_scheme", json_integer(2));
    deck_hex(nonce, DECK_NONCE_LEN, hex);
    json_object_set_new(rec, "deck_nonce", json_string(hex));
    deck_hex(commit, DECK_COMMIT_LEN, hex);
    json_object_set_new(rec, "deck_commitment", json_string(hex));
    return rec;
}

/* Dou Dizhu's 54 wire codes (3..A and 2 of each suit, the two jokers), shuffled by a fixed
 * step so that no hand is dealt in code order. */
static size_t ddz_deck(uint8_t *deck)
{
    uint8_t codes[54];
    size_t n = 0;
    for (int r = 2; r <= 14; r++)
        for (int s = 0; s < 4; s++)
            codes[n++] = (uint8_t)(r << 2 | s);
    codes[n++] = 60;
    codes[n++] = 61;
    for (size_t i = 0; i < 54; i++)
        deck[i] = codes[(i * 23 + 5) % 54];
    return 54;
}

/*
 * A duplicate Dou Dizhu deal (docs/fairness.md "Duplicate deals", docs/replays.md): the
 * player's replay has every leaf and opens his 17 cards, each at one of his seat's dealing
 * positions, and the bottom the replay shows, and nothing of the other seats; a share code's
 * opens the bottom only; a changed card, leaf, commitment, a hand claimed at another seat's
 * positions, and an extra opening are refused.
 */
START_TEST(test_replay_duplicate_deal_opens_the_players_hand_per_card)
{
    uint8_t deck[54];
    size_t n = ddz_deck(deck);
    json_t *rec = dup_rec("doudizhu", 3, 17, deck, n);
    char err[200];
    Croupier__Replay *r = build_rec(rec, 701);
    ck_assert_str_eq(r->policy, "own");
    ck_assert_ptr_null(r->deck);
    ck_assert(r->has_deck_scheme && r->deck_scheme == 2);
    ck_assert_uint_eq(r->deck_leaves.len, 54 * DECK_LEAF_LEN);
    ck_assert_uint_eq(r->n_openings, 17 + 3);
    for (size_t i = 0; i < r->n_openings; i++) {
        uint32_t p = r->openings[i]->position;
        ck_assert_msg(p >= 51 || p % 3 == 1, "position %u is another seat's", p);
        ck_assert_uint_eq(r->openings[i]->card, deck[p]);
    }
    for (size_t i = 0; i < r->n_seats; i++)
        ck_assert_int_eq(r->seats[i]->has_cards, r->seats[i]->seat == 1);
    ck_assert_msg(replay_check_cards(r, r->deck_commitment.data, err, sizeof err) == 0, "%s", err);

    /* A changed card; a changed leaf; another commitment. */
    Croupier__ReplaySeat *mine = r->seats[1];
    mine->cards.data[4] ^= 1;
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), -EBADMSG);
    mine->cards.data[4] ^= 1;
    r->deck_leaves.data[33 * DECK_LEAF_LEN] ^= 1;
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), -EBADMSG);
    r->deck_leaves.data[33 * DECK_LEAF_LEN] ^= 1;
    uint8_t other[DECK_COMMIT_LEN] = {0};
    ck_assert_int_eq(replay_check_cards(r, other, err, sizeof err), -EBADMSG);
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), 0);

    /* The hand claimed at seat 0's positions: every opening matches its leaf (the nonces are
     * the record's), but the deal gave those cards to seat 0. */
    uint8_t nonce[DECK_NONCE_LEN];
    ck_assert_int_eq(
        deck_unhex(json_string_value(json_object_get(rec, "deck_nonce")), nonce, sizeof nonce),
        DECK_NONCE_LEN);
    size_t k = 0;
    for (size_t i = 0; i < r->n_openings; i++) {
        Croupier__ReplayCardOpening *o = r->openings[i];
        if (o->position >= 51)
            continue;
        o->position -= 1; /* seat 0's */
        o->card = deck[o->position];
        deck_card_nonce(nonce, o->position, o->nonce.data);
        mine->cards.data[k++] = (uint8_t)o->card;
    }
    ck_assert_uint_eq(k, 17);
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), -EBADMSG);
    ck_assert_ptr_nonnull(strstr(err, "seat 1's card"));
    croupier__replay__free_unpacked(r, NULL);

    /* An extra opening: seat 0's first card, with its true nonce. */
    r = build_rec(rec, 701);
    r->openings = realloc(r->openings, (r->n_openings + 1) * sizeof *r->openings);
    Croupier__ReplayCardOpening *x = calloc(1, sizeof *x);
    croupier__replay_card_opening__init(x);
    x->position = 0;
    x->card = deck[0];
    x->nonce.len = DECK_NONCE_LEN;
    x->nonce.data = malloc(DECK_NONCE_LEN);
    deck_card_nonce(nonce, 0, x->nonce.data);
    r->openings[r->n_openings++] = x;
    ck_assert_int_eq(replay_check_cards(r, NULL, err, sizeof err), -EBADMSG);
    ck_assert_ptr_nonnull(strstr(err, "does not show"));
    croupier__replay__free_unpacked(r, NULL);

    /* A share code: nobody's hand, the bottom the replay shows, opened. */
    r = build_rec(rec, 0);
    ck_assert_uint_eq(r->n_openings, 3);
    for (size_t i = 0; i < r->n_seats; i++)
        ck_assert(!r->seats[i]->has_cards);
    ck_assert_msg(replay_check_cards(r, NULL, err, sizeof err) == 0, "%s", err);
    croupier__replay__free_unpacked(r, NULL);
    json_decref(rec);
}
END_TEST

/*
 * Guandan's two decks hold every card twice: each copy opens at its own seat's position. Here
 * the deck is in pairs (positions 2i and 2i + 1 hold the same card, dealt to two seats), so the
 * first position holding a card is often another seat's.
 */
START_TEST(test_replay_duplicate_guandan_opens_each_copy_at_its_own_seat)
{
    uint8_t deck[108];
    size_t n = 0;
    for (int r = 2; r <= 14; r++)
        for (int s = 0; s < 4; s++) {
            deck[n++] = (uint8_t)(r << 2 | s);
            deck[n++] = (uint8_t)(r << 2 | s);
        }
    for (int j = 60; j <= 61; j++) {
        deck[n++] = (uint8_t)j;
        deck[n++] = (uint8_t)j;
    }
    ck_assert_uint_eq(n, 108);
    json_t *rec = dup_rec("guandan", 4, 27, deck, n);
    char err[200];
    for (uint64_t viewer = 700; viewer <= 703; viewer++) {
        Croupier__Replay *r = build_rec(rec, viewer);
        ck_assert_uint_eq(r->n_openings, 27);
        for (size_t i = 0; i < r->n_openings; i++)
            ck_assert_uint_eq(r->openings[i]->position % 4, viewer - 700);
        ck_assert_msg(replay_check_cards(r, NULL, err, sizeof err) == 0, "%s", err);
        croupier__replay__free_unpacked(r, NULL);
    }
    json_decref(rec);
}
END_TEST

START_TEST(test_replay_voided_round_and_unknown_game)
{
    /* A voided round replays with its reason; a game without a row shows only one's own. */
    const char *rec =
        "{\"round\":\"x:1:1:1:2\",\"game\":\"newgame\",\"seats\":[{\"seat\":0,"
        "\"player\":\"5\",\"stack\":10},{\"seat\":1,\"player\":\"6\",\"stack\":10}],"
        "\"cards\":[{\"seat\":0,\"card\":\"2c\"},{\"seat\":1,\"card\":\"3c\"}],"
        "\"actions\":[],\"results\":[{\"seat\":0,\"delta\":0},{\"seat\":1,\"delta\":0}],"
        "\"outcome\":\"voided\",\"void_reason\":\"VOID_DRAIN_TIMEOUT\",\"deck\":\"0102\"}";
    Croupier__Replay *r = build(rec, 6);
    ck_assert_int_eq(r->outcome, CROUPIER__ROUND_OUTCOME__OUTCOME_VOIDED);
    ck_assert(r->has_void_reason);
    ck_assert_int_eq(r->void_reason, CROUPIER__VOID_REASON__VOID_DRAIN_TIMEOUT);
    ck_assert_str_eq(r->policy, "own");
    ck_assert_ptr_null(r->deck);
    ck_assert_uint_eq(r->your_seat, 1);
    ck_assert(!r->seats[0]->has_cards);
    ck_assert(r->seats[1]->has_cards);
    ck_assert_ptr_null(r->phh);
    croupier__replay__free_unpacked(r, NULL);
}
END_TEST

/* A blackjack round (docs/hand-history.md "Blackjack's cards, actions and shoes") that dealt the
 * last 3 cards of shoe 4 and the first 3 of shoe 5 (the shoe ran dry) and retired shoe 4. */
#define BJ_C4 "4444444444444444444444444444444444444444444444444444444444444444"
#define BJ_C5 "5555555555555555555555555555555555555555555555555555555555555555"
#define BJ_NONCE "abababababababababababababababababababababababababababababababab"
static const char bj_rec[] =
    "{\"round\":\"persistent:1:1:4294967297:9\",\"game\":\"blackjack\",\"engine\":"
    "\"persistent\",\"seats\":[{\"seat\":2,\"player\":\"7\",\"stack\":500}],"
    "\"cards\":[{\"seat\":2,\"card\":\"As\"},{\"seat\":-1,\"card\":\"Td\"},{\"seat\":2,"
    "\"card\":\"2c\"},{\"seat\":-1,\"card\":\"Kh\"},{\"seat\":2,\"card\":\"9s\"},"
    "{\"seat\":-1,\"card\":\"3d\"}],"
    "\"actions\":[{\"seat\":2,\"action\":\"bet\",\"amount\":10},{\"seat\":2,\"action\":"
    "\"hit\",\"amount\":0}],\"results\":[{\"seat\":2,\"delta\":-10}],"
    "\"outcome\":\"completed\",\"rake\":0,"
    "\"shoes\":[{\"shoe\":4,\"commitment\":\"" BJ_C4 "\",\"first\":49,\"count\":3},"
    "{\"shoe\":5,\"commitment\":\"" BJ_C5 "\",\"first\":0,\"count\":3}],"
    "\"shoe_reveal\":[{\"shoe\":4,\"commitment\":\"" BJ_C4 "\",\"deck\":\"00010203\","
    "\"nonce\":\"" BJ_NONCE "\",\"dealt\":52}]}";

/* Blackjack: the round's shoes with its cards from each, and the retired shoe opened
 * (docs/fairness.md "Who can open it"), for a player of the round and a stranger alike; the
 * other games carry none; a record whose shoes say more cards than it has is refused. */
START_TEST(test_replay_blackjack_carries_its_shoes_and_the_retired_one)
{
    for (int v = 0; v < 2; v++) {
        Croupier__Replay *r = build(bj_rec, v == 0 ? 7 : 99);
        ck_assert_str_eq(r->policy, "all");
        ck_assert_uint_eq(r->n_shoes, 2);
        static const char *want[2] = {"As Td 2c", "Kh 9s 3d"};
        for (int k = 0; k < 2; k++) {
            const Croupier__ReplayShoe *rs = r->shoes[k];
            ck_assert_uint_eq(rs->shoe, (uint32_t)(4 + k));
            ck_assert_str_eq(rs->commitment, k == 0 ? BJ_C4 : BJ_C5);
            ck_assert_uint_eq(rs->first, k == 0 ? 49 : 0);
            ck_assert(rs->has_cards);
            ck_assert_uint_eq(rs->cards.len, 3);
            for (int c = 0; c < 3; c++) {
                char t[3] = {want[k][3 * c], want[k][3 * c + 1], 0};
                ck_assert_int_eq(rs->cards.data[c], replay_card_code(t));
            }
        }
        ck_assert_uint_eq(r->n_shoe_reveal, 1);
        const Croupier__ReplayShoeReveal *rv = r->shoe_reveal[0];
        ck_assert_uint_eq(rv->shoe, 4);
        ck_assert_str_eq(rv->commitment, BJ_C4);
        ck_assert_str_eq(rv->deck, "00010203");
        ck_assert_str_eq(rv->nonce, BJ_NONCE);
        ck_assert(rv->has_dealt);
        ck_assert_uint_eq(rv->dealt, 52);
        croupier__replay__free_unpacked(r, NULL);
    }
    /* The same fields on another game's record are not shown. */
    json_t *rec = json_loads(bj_rec, 0, NULL);
    json_object_set_new(rec, "game", json_string("doudizhu"));
    char err[200] = "";
    Croupier__Replay *r = replay_build(rec, 7, err, sizeof err);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->n_shoes, 0);
    ck_assert_uint_eq(r->n_shoe_reveal, 0);
    croupier__replay__free_unpacked(r, NULL);
    json_decref(rec);
    /* Bad shoes: more cards than recorded, a short commitment, a reveal without its nonce. */
    const char *bad[][2] = {{"/shoes/1/count", "4"},
                            {"/shoes/0/commitment", "\"44\""},
                            {"/shoe_reveal/0/nonce", "null"}};
    for (size_t i = 0; i < 3; i++) {
        rec = json_loads(bj_rec, 0, NULL);
        int idx = bad[i][0][7] == '1' ? 1 : 0;
        json_t *obj = json_array_get(json_object_get(rec, i < 2 ? "shoes" : "shoe_reveal"),
                                     (size_t)idx);
        const char *key = strrchr(bad[i][0], '/') + 1;
        json_object_set_new(obj, key, json_loads(bad[i][1], JSON_DECODE_ANY, NULL));
        err[0] = '\0';
        ck_assert_ptr_null(replay_build(rec, 7, err, sizeof err));
        ck_assert_msg(strstr(err, "shoe") != NULL, "%s", err);
        json_decref(rec);
    }
}
END_TEST

/*
 * A shoe retired by a table that closed between rounds (docs/fairness.md "Blackjack's shoes"):
 * its reveal is in the table's shoe retirement record, whose id is the round's with round
 * number 0; the replay of a round dealt from that shoe takes the reveal from it -- only of a
 * shoe the round dealt from (the same number and commitment) and not revealed yet, once.
 */
START_TEST(test_replay_blackjack_takes_the_shoe_its_table_retired_between_rounds)
{
    char id[64];
    ck_assert_int_eq(replay_table_record_id("persistent:1:1:4294967297:9", id, sizeof id), 0);
    ck_assert_str_eq(id, "persistent:1:1:4294967297:0");
    ck_assert_int_eq(replay_table_record_id("persistent:1:1:4294967297:9", id, 28), 0);
    ck_assert_int_eq(replay_table_record_id("persistent:1:1:4294967297:9", id, 27), -EINVAL);
    const char *bad[] = {"persistent:1:1:4294967297:0",
                         "persistent:1:1:9",
                         "a:b:c:d:9x",
                         "a:b:c:d:e:9",
                         "a:b:c:d:",
                         NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_int_eq(replay_table_record_id(bad[i], id, sizeof id), -EINVAL);

    /* The round dealt from shoe 4 (it retired it) and shoe 5 (still in use then): the shoe index
     * is asked for shoe 5 only (docs/hand-history.md "The shoe index"). */
    Croupier__Replay *r = build(bj_rec, 7);
    ck_assert(replay_wants_shoe_reveal(r));
    const char *want[4];
    ck_assert_uint_eq(replay_shoes_unrevealed(r, want, 4), 1);
    ck_assert_str_eq(want[0], BJ_C5);
    ck_assert_uint_eq(replay_shoes_unrevealed(r, want, 0), 0);
    json_t *table = json_loads(
        "{\"round\":\"persistent:1:1:4294967297:0\",\"game\":\"blackjack\",\"record\":"
        "\"shoe_retirement\",\"seats\":[],\"cards\":[],\"actions\":[],\"results\":[],"
        "\"shoe_reveal\":["
        "{\"shoe\":4,\"commitment\":\"" BJ_C4 "\",\"deck\":\"0203\",\"nonce\":\"" BJ_NONCE "\"},"
        "{\"shoe\":6,\"commitment\":\"" BJ_C5 "\",\"deck\":\"0203\",\"nonce\":\"" BJ_NONCE "\"},"
        "{\"shoe\":5,\"commitment\":\"" BJ_C4 "\",\"deck\":\"0203\",\"nonce\":\"" BJ_NONCE "\"},"
        "{\"shoe\":5,\"commitment\":\"" BJ_C5 "\",\"deck\":\"02\",\"nonce\":\"ab\"},"
        "{\"shoe\":5,\"commitment\":\"" BJ_C5 "\",\"deck\":\"0a0b0c\",\"nonce\":\"" BJ_NONCE "\","
        "\"dealt\":40}]}",
        0, NULL);
    ck_assert_ptr_nonnull(table);
    ck_assert_int_eq(replay_add_shoe_reveals(r, table), 1);
    ck_assert_uint_eq(r->n_shoe_reveal, 2);
    const Croupier__ReplayShoeReveal *rv = r->shoe_reveal[1];
    ck_assert_uint_eq(rv->shoe, 5);
    ck_assert_str_eq(rv->commitment, BJ_C5);
    ck_assert_str_eq(rv->deck, "0a0b0c");
    ck_assert(rv->has_dealt);
    ck_assert_uint_eq(rv->dealt, 40);
    ck_assert_str_eq(r->shoe_reveal[0]->deck, "00010203"); /* the round's own, kept */
    ck_assert(!replay_wants_shoe_reveal(r));
    ck_assert_uint_eq(replay_shoes_unrevealed(r, want, 4), 0);
    ck_assert_int_eq(replay_add_shoe_reveals(r, table), 0); /* once */
    ck_assert_uint_eq(r->n_shoe_reveal, 2);
    /* Through the wire: the reveal survives packing (what the gateway sends). */
    size_t len = croupier__replay__get_packed_size(r);
    uint8_t *buf = malloc(len);
    croupier__replay__pack(r, buf);
    Croupier__Replay *back = croupier__replay__unpack(NULL, len, buf);
    ck_assert_ptr_nonnull(back);
    ck_assert_uint_eq(back->n_shoe_reveal, 2);
    croupier__replay__free_unpacked(back, NULL);
    free(buf);
    croupier__replay__free_unpacked(r, NULL);
    /* Another game's replay takes nothing: it has no shoes. */
    json_t *rec = json_loads(bj_rec, 0, NULL);
    json_object_set_new(rec, "game", json_string("doudizhu"));
    r = build_rec(rec, 7);
    ck_assert(!replay_wants_shoe_reveal(r));
    ck_assert_int_eq(replay_add_shoe_reveals(r, table), 0);
    croupier__replay__free_unpacked(r, NULL);
    json_decref(rec);
    json_decref(table);
}
END_TEST

START_TEST(test_replay_refuses_what_is_no_round)
{
    const char *bad[] = {
        "{\"round\":\"x:0:1:2:0\",\"game\":\"blackjack\",\"seats\":[],\"cards\":[],\"actions\":[],"
        "\"results\":[],\"record\":\"shoe_retirement\"}",
        "{\"round\":\"x:1:1:1:1\",\"game\":\"doudizhu\",\"seats\":[],\"cards\":[{\"seat\":0,"
        "\"card\":\"ZZ\"}],\"actions\":[]}",
        "[1,2]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *rec = json_loads(bad[i], 0, NULL);
        char err[200] = "";
        ck_assert_ptr_null(replay_build(rec, 1, err, sizeof err));
        ck_assert(err[0] != '\0');
        json_decref(rec);
    }
}
END_TEST

/*
 * Every field of a record replaced by a value of every other type, and removed: the builder
 * answers a Replay or NULL with a reason, never crashes (the records come from our own servers,
 * but a share code's copy outlives versions).
 */
START_TEST(test_replay_survives_every_field_of_the_wrong_type)
{
    const char *recs[] = {
        zjh_rec,
        bj_rec,
        "{\"round\":\"holdem:1:1:1:1\",\"game\":\"holdem\",\"engine\":\"holdem\","
        "\"stake\":10,\"button\":0,\"seats\":[{\"seat\":0,\"player\":\"1\",\"stack\":100},"
        "{\"seat\":1,\"player\":\"2\",\"stack\":100}],\"cards\":[{\"seat\":0,\"card\":"
        "\"As\"},{\"seat\":1,\"card\":\"Kd\"},{\"seat\":0,\"card\":\"Ac\"},{\"seat\":1,"
        "\"card\":\"Kc\"},{\"seat\":-1,\"card\":\"2c\"},{\"seat\":-1,\"card\":\"3c\"},"
        "{\"seat\":-1,\"card\":\"4c\"}],\"actions\":[{\"seat\":0,\"action\":"
        "\"small_blind\",\"amount\":5},{\"seat\":1,\"action\":\"big_blind\",\"amount\":10},"
        "{\"seat\":0,\"action\":\"call\",\"amount\":5},{\"seat\":1,\"action\":\"check\","
        "\"amount\":0}],\"results\":[{\"seat\":0,\"delta\":10},{\"seat\":1,\"delta\":-10}],"
        "\"outcome\":\"completed\",\"rake\":0,\"deck_commitment\":\"zz\"}",
    };
    json_t *odd[] = {
        json_null(),  json_true(),   json_integer(-7),           json_string("x"),
        json_array(), json_object(), json_pack("[i,s]", 1, "a"), json_pack("[{s:s}]", "seat", "0")};
    size_t nodd = sizeof odd / sizeof odd[0];
    for (size_t r = 0; r < sizeof recs / sizeof recs[0]; r++) {
        json_t *rec = json_loads(recs[r], 0, NULL);
        ck_assert_ptr_nonnull(rec);
        const char *key;
        json_t *v;
        json_object_foreach(rec, key, v)
        {
            for (size_t k = 0; k <= nodd; k++) {
                json_t *m = json_deep_copy(rec);
                if (k == nodd)
                    json_object_del(m, key);
                else
                    json_object_set(m, key, odd[k]);
                char err[200] = "";
                Croupier__Replay *out = replay_build(m, 1, err, sizeof err);
                ck_assert_msg(out != NULL || err[0] != '\0', "%s: NULL without a reason", key);
                croupier__replay__free_unpacked(out, NULL);
                json_decref(m);
            }
        }
        json_decref(rec);
    }
    for (size_t k = 0; k < nodd; k++)
        json_decref(odd[k]);
}
END_TEST

static Suite *replay_suite(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("build");
    tcase_add_test(tc, test_replay_every_game_has_its_row);
    tcase_add_test(tc, test_replay_card_codes_follow_the_protocol);
    tcase_add_test(tc, test_replay_zjh_shows_only_the_viewers_own_hand);
    tcase_add_test(tc, test_replay_stranger_sees_no_hidden_card);
    tcase_add_test(tc, test_replay_per_card_opens_the_viewers_hand_and_nothing_else);
    tcase_add_test(tc, test_replay_zjh_compare_shows_and_opens_the_other_hand_to_its_two_players);
    tcase_add_test(tc, test_replay_deal_positions_follow_each_games_dealing_rule);
    tcase_add_test(tc, test_replay_doudizhu_shows_every_hand_and_the_deck);
    tcase_add_test(tc, test_replay_duplicate_deal_shows_only_ones_own);
    tcase_add_test(tc, test_replay_shedding_deal_map_matches_the_games_rules);
    tcase_add_test(tc, test_replay_duplicate_deal_opens_the_players_hand_per_card);
    tcase_add_test(tc, test_replay_duplicate_guandan_opens_each_copy_at_its_own_seat);
    tcase_add_test(tc, test_replay_voided_round_and_unknown_game);
    tcase_add_test(tc, test_replay_blackjack_carries_its_shoes_and_the_retired_one);
    tcase_add_test(tc, test_replay_blackjack_takes_the_shoe_its_table_retired_between_rounds);
    tcase_add_test(tc, test_replay_refuses_what_is_no_round);
    tcase_add_test(tc, test_replay_survives_every_field_of_the_wrong_type);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(replay_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
