/*
 * The table kit's rounds (engine/tk.h), on Zha Jin Hua through the real binary (tk_fixture.h):
 * rounds settle against the seat accounts with rake, one settle record and one hand history
 * each, whose deck opens the commitment the players' Deals carried (docs/fairness.md) and whose
 * replays open each player's own cards only; a RoundEnd waits for its settlement, and one the
 * fence refuses voids the round; refusals have their codes and change nothing; resume shows a
 * player his own cards only after he looked; a timeout folds and puts the seat on trustee.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "deck.h"
#include "replay.h"
#include "support.h"
#include "tk_fixture.h"

static Croupier__RpcFrame *snapshot(rpcc_t *c, uint64_t rid, uint64_t player)
{
    ck_assert_int_eq(rpcc_resume(c, rid, player), 0);
    Croupier__RpcFrame *r;
    ck_assert_int_eq(reply_code(c, rid, &r), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(r->reply->payload->body_case, CROUPIER__SERVER_MESSAGE__BODY_SNAPSHOT);
    return r;
}

/* The snapshot's game state and event_seq as bytes (no clock), for equality checks. */
static size_t state_bytes(rpcc_t *c, uint64_t rid, uint64_t player, uint8_t *buf, size_t cap)
{
    Croupier__RpcFrame *r = snapshot(c, rid, player);
    Croupier__Snapshot *s = r->reply->payload->snapshot;
    s->has_time_left_ms = false;
    s->time_left_ms = 0;
    size_t n = croupier__snapshot__get_packed_size(s);
    ck_assert_uint_le(n, cap);
    n = croupier__snapshot__pack(s, buf);
    frame_free_rpc(r);
    return n;
}

static Croupier__Zjh__ZjhState *game_state(Croupier__RpcFrame *r)
{
    const Croupier__Snapshot *s = r->reply->payload->snapshot;
    ck_assert_int_eq(s->state_case, CROUPIER__SNAPSHOT__STATE_GAME_STATE);
    Croupier__Zjh__ZjhState *st =
        croupier__zjh__zjh_state__unpack(NULL, s->game_state->body.len, s->game_state->body.data);
    ck_assert_ptr_nonnull(st);
    return st;
}

/* The text of "field":"..." in a record, into out (NUL-terminated); false if absent. */
static bool record_field(const char *rec, const char *field, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", field);
    const char *p = strstr(rec, pat);
    if (p == NULL)
        return false;
    p += strlen(pat);
    const char *q = strchr(p, '"');
    if (q == NULL || (size_t)(q - p) >= cap)
        return false;
    memcpy(out, p, (size_t)(q - p));
    out[q - p] = '\0';
    return true;
}

/*
 * The record reveals the deck and the nonce (docs/hand-history.md), and they open the
 * commitment the players got on the round's Deals (docs/fairness.md): Zha Jin Hua deals under
 * the per-card commitment, its codes (deck_codes) the table's card bytes.
 */
static void check_deck_reveal(const model_t *m, const char *rec)
{
    char round[160], chex[2 * DECK_COMMIT_LEN + 1], dhex[2 * DECK_MAX_CARDS + 1],
        nhex[2 * DECK_NONCE_LEN + 1], codes_hex[2 * DECK_MAX_CARDS + 1];
    ck_assert(record_field(rec, "round", round, sizeof round));
    ck_assert(record_field(rec, "deck_commitment", chex, sizeof chex));
    ck_assert(record_field(rec, "deck", dhex, sizeof dhex));
    ck_assert(record_field(rec, "deck_codes", codes_hex, sizeof codes_hex));
    ck_assert(record_field(rec, "deck_nonce", nhex, sizeof nhex));
    ck_assert_ptr_nonnull(strstr(rec, "\"deck_scheme\":2"));
    ck_assert_str_eq(codes_hex, dhex);
    uint8_t commit[DECK_COMMIT_LEN], deck[DECK_MAX_CARDS], nonce[DECK_NONCE_LEN], got[32];
    ck_assert_int_eq(deck_unhex(chex, commit, sizeof commit), DECK_COMMIT_LEN);
    ck_assert_int_eq(deck_unhex(dhex, deck, sizeof deck), 52); /* Zha Jin Hua: one deck */
    ck_assert_int_eq(deck_unhex(nhex, nonce, sizeof nonce), DECK_NONCE_LEN);
    deck_commitment_cards(deck, 52, nonce, got);
    ck_assert(memcmp(got, commit, sizeof got) == 0);
    bool seen = false;
    for (int k = 0; k < 8 && k < m->ncommits; k++)
        if (strcmp(m->commit_round[k], round) == 0) {
            ck_assert(memcmp(m->commit[k], commit, DECK_COMMIT_LEN) == 0);
            seen = true;
        }
    ck_assert_msg(seen, "no Deal of round %s carried a commitment (%d seen, the last of %s)", round,
                  m->ncommits, m->ncommits > 0 ? m->commit_round[(m->ncommits - 1) % 8] : "-");
}

/*
 * Each player's own check from his replays (replay_build() for him: what GetReplay sends him;
 * docs/fairness.md "The per-card commitment"): every round's replay checks with
 * replay_check_cards() against the commitment his Deals carried and opens exactly the three
 * cards he saw when he looked; no card of another seat is anywhere in it (openings, events,
 * seats). A share code's view (viewer 0) opens nothing.
 */
static void check_replays_open_own_cards(env_t *e, const model_t *m, const uint64_t *players, int n)
{
    char *hist = ts_redis_cmd(e->redis, "XRANGE %s - +", "{croupier:history:zhajinhua}:stream");
    ck_assert_ptr_nonnull(hist);
    int checked = 0, total_looked = 0, total_compared = 0;
    for (char *line = strtok(hist, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        json_t *rec = line[0] == '{' ? json_loads(line, 0, NULL) : NULL;
        const char *round = json_string_value(json_object_get(rec, "round"));
        int k;
        for (k = 0;
             round != NULL && k < 8 && k < m->ncommits && strcmp(m->commit_round[k], round) != 0;
             k++)
            ;
        if (round == NULL || k >= 8 || k >= m->ncommits) {
            json_decref(rec);
            continue;
        }
        for (int i = -1; i < n; i++) {
            uint64_t p = i < 0 ? 0 : players[i];
            char err[300] = "";
            Croupier__Replay *r = replay_build(rec, p, err, sizeof err);
            ck_assert_msg(r != NULL, "%s: %s", round, err);
            ck_assert_msg(replay_check_cards(r, m->commit[k], err, sizeof err) == 0,
                          "%s, viewer %" PRIu64 ": %s", round, p, err);
            ck_assert_uint_eq(r->deck_leaves.len, 52 * DECK_LEAF_LEN);
            ck_assert_ptr_null(r->deck);
            ck_assert_ptr_null(r->deck_nonce);
            int mine = r->has_your_seat ? (int)r->your_seat : -1;
            if (p == 0)
                ck_assert_uint_eq(r->n_openings, 0);
            /* The seats whose hand a compare showed him (the record names each compare's
             * target, docs/hand-history.md): shown and opened to him too. */
            bool compared[9] = {false};
            int ncompared = 0;
            size_t ia;
            const json_t *a;
            json_array_foreach(json_object_get(rec, "actions"), ia, a)
            {
                const char *name = json_string_value(json_object_get(a, "action"));
                if (strncmp(name, "compare", 7) != 0)
                    continue;
                ck_assert_msg(json_is_integer(json_object_get(a, "target")),
                              "%s: a compare "
                              "without its target",
                              round);
                int as = (int)json_integer_value(json_object_get(a, "seat"));
                int at = (int)json_integer_value(json_object_get(a, "target"));
                int other = as == mine ? at : at == mine ? as : -1;
                if (mine >= 0 && other >= 0 && other < 9 && !compared[other]) {
                    compared[other] = true;
                    ncompared++;
                }
            }
            total_compared += ncompared;
            ck_assert_uint_eq(r->n_openings, p == 0 ? 0 : 3 * (size_t)(1 + ncompared));
            /* The cards he looked at in this round: each opened. */
            int looked = 0;
            for (int l = 0; p != 0 && l < m->nlooked; l++) {
                if (m->looked[l].player != p || strcmp(m->looked[l].round, round) != 0)
                    continue;
                looked++;
                for (int c = 0; c < 3; c++) {
                    size_t o;
                    for (o = 0; o < r->n_openings && r->openings[o]->card != m->looked[l].cards[c];
                         o++)
                        ;
                    ck_assert_msg(o < r->n_openings, "%s: player %" PRIu64 "'s card %u unopened",
                                  round, p, m->looked[l].cards[c]);
                }
            }
            ck_assert_int_eq(looked, r->has_your_seat); /* every player dealt in looked */
            total_looked += looked;
            /* No card of another seat anywhere in his replay, but those a compare showed him,
             * which are opened. */
            size_t ic;
            const json_t *cj;
            json_array_foreach(json_object_get(rec, "cards"), ic, cj)
            {
                json_int_t seat = json_integer_value(json_object_get(cj, "seat"));
                int code = replay_card_code(json_string_value(json_object_get(cj, "card")));
                ck_assert_int_ge(code, 0);
                if (seat >= 0 && seat < 9 && compared[seat]) {
                    size_t o;
                    for (o = 0; o < r->n_openings && (int)r->openings[o]->card != code; o++)
                        ;
                    ck_assert_msg(o < r->n_openings, "%s: a compared card unopened", round);
                }
                if (seat == mine || (seat >= 0 && seat < 9 && compared[seat]))
                    continue;
                for (size_t o = 0; o < r->n_openings; o++)
                    ck_assert_int_ne((int)r->openings[o]->card, code);
                for (size_t v = 0; v < r->n_events; v++)
                    ck_assert(r->events[v]->cards.len == 0 ||
                              memchr(r->events[v]->cards.data, code, r->events[v]->cards.len) ==
                                  NULL);
                for (size_t v = 0; v < r->n_seats; v++)
                    ck_assert(r->seats[v]->cards.len == 0 ||
                              memchr(r->seats[v]->cards.data, code, r->seats[v]->cards.len) ==
                                  NULL);
            }
            croupier__replay__free_unpacked(r, NULL);
        }
        checked++;
        json_decref(rec);
    }
    free(hist);
    ck_assert_int_ge(checked, 4);
    ck_assert_int_ge(total_looked, 6);
    ck_assert_int_ge(total_compared, 2); /* the fourth hand's compare, seen by its two players */
}

START_TEST(test_tk_rounds_settle_against_seat_accounts_with_history_and_rake)
{
    env_t e;
    env_start(&e, 30, "5000");
    const uint64_t players[] = {11, 12, 13};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 3);
    uint64_t rid = 10;
    /* Hands end when all but one fold: every player looks at his cards (out of turn too),
     * then two fold; three hands. */
    for (int hand = 0; hand < 3; hand++) {
        int done = m.completed;
        ck_assert(pump_until(c, &m, has_turn, 5000));
        for (int i = 0; i < 3; i++) {
            send_move(c, rid, players[i], CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
            ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
        }
        pump_until(c, &m, never, 200); /* the looks' events, a Turn update among them */
        for (int f = 0; f < 2; f++)
            ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
        /* Up to the RoundEnd and no further: the next hand's first Turn is still to come. */
        while (m.completed == done) {
            Croupier__RpcFrame *f = rpcc_next_event(c, 5000);
            ck_assert_msg(f != NULL, "hand %d did not end", hand);
            model_apply(&m, f);
            frame_free_rpc(f);
        }
        ck_assert_int_eq(m.completed, done + 1);
    }
    /* A fourth hand with a compare (docs/rules/zhajinhua.md: from the second betting round):
     * every player looks and calls once round, then the seat to act compares with another, and
     * the one left with the winner folds. */
    {
        int done = m.completed;
        ck_assert(pump_until(c, &m, has_turn, 5000));
        for (int i = 0; i < 3; i++) {
            send_move(c, rid, players[i], CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
            ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
        }
        pump_until(c, &m, never, 200);
        for (int k = 0; k < 3; k++) {
            ck_assert(pump_until(c, &m, has_turn, 5000));
            uint64_t p = m.seat_player[m.turn_seat];
            m.turn_seat = -1;
            send_move(c, rid, p, CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL, 0, -1);
            ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
        }
        ck_assert(pump_until(c, &m, has_turn, 5000));
        int asker = m.turn_seat, target = -1;
        for (int s = 0; s < NP && target < 0; s++)
            if (s != asker && m.seat_player[s] != 0)
                target = s;
        m.turn_seat = -1;
        send_move(c, rid, m.seat_player[asker], CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE, 0, target);
        ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
        ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
        while (m.completed == done) {
            Croupier__RpcFrame *f = rpcc_next_event(c, 5000);
            ck_assert_msg(f != NULL, "the compare hand did not end");
            model_apply(&m, f);
            frame_free_rpc(f);
        }
    }
    ck_assert_int_ge(m.completed, 3);
    ts_sleep_ms(300);
    int nz;
    long long rake = redis_int(&e, "GET %s", "{croupier:money}:rake:zhajinhua");
    ck_assert_int_gt(rake, 0); /* 5 % of the pot, capped at 10 chips */
    ck_assert_int_eq(wallets(&m) + seat_accounts(&e, &nz) + rake, 3000);
    /* One settle record per completed hand, one history per hand, with the kit's schema. */
    char key[256];
    snprintf(key, sizeof key, "{croupier:money}:round:%s", m.round_id);
    ck_assert_int_eq(redis_int(&e, "EXISTS %s", key), 1);
    ck_assert_int_ge(redis_int(&e, "XLEN %s", "{croupier:history:zhajinhua}:stream"), 3);
    char *h = ts_redis_cmd(e.redis, "XREVRANGE {croupier:history:zhajinhua}:stream + - COUNT 1");
    ck_assert_ptr_nonnull(strstr(h, "\"outcome\":\"completed\""));
    ck_assert_ptr_nonnull(strstr(h, "\"stake\":10"));
    ck_assert_ptr_nonnull(strstr(h, "\"engine\":\"zhajinhua\""));
    check_deck_reveal(&m, h);
    free(h);
    check_replays_open_own_cards(&e, &m, players, 3);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

/*
 * RoundEnd is pushed only once the round's settlement is applied: with Redis pausing writes the
 * hand's end shows nothing, and the RoundEnd comes after the pause with its settle record in
 * place. A settlement the fence refuses (the server's epoch was recovered meanwhile) voids the
 * round for its players (VOID_LEASE_LOST) with no chip moved, instead of showing a result.
 */
START_TEST(test_tk_round_end_waits_for_its_settlement_and_a_refused_one_voids_the_round)
{
    env_t e;
    env_start_ttl(&e, 30, "5000", "50", "3000"); /* writes paused 800 ms: well within the TTL */
    const uint64_t players[] = {41, 42, 43};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 3);
    uint64_t rid = 10;
    ck_assert(pump_until(c, &m, has_turn, 5000));
    ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
    free(ts_redis_cmd(e.redis, "CLIENT PAUSE 800 WRITE"));
    long long paused = ts_now_ms();
    ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK); /* the hand is won */
    pump_until(c, &m, round_over, 400);
    ck_assert_int_eq(m.completed, 0); /* nothing shown while the settlement waits */
    ck_assert(pump_until(c, &m, round_over, 5000));
    ck_assert_int_eq(m.completed, 1);
    ck_assert_int_ge(ts_now_ms() - paused, 700);
    char key[256];
    snprintf(key, sizeof key, "{croupier:money}:round:%s", m.round_id);
    ck_assert_int_eq(redis_int(&e, "EXISTS %s", key), 1);

    /* The next hand: the fence moves (as a recovery by another server would move it). */
    ck_assert(pump_until(c, &m, has_turn, 5000));
    char svc[64];
    unsigned slot;
    unsigned long long epoch;
    ck_assert_int_eq(sscanf(m.round_id, "%63[^:]:%u:%llu:", svc, &slot, &epoch), 3);
    int nz;
    long long held = seat_accounts(&e, &nz);
    free(ts_redis_cmd(e.redis, "SET {croupier:lease:%s}:slot:%u:epoch %llu", svc, slot,
                      epoch + 100));
    ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
    ck_assert_int_eq(fold_turn(c, &m, rid++), CROUPIER__ERROR_CODE__OK);
    m.completed = m.voided = 0;
    ck_assert(pump_until(c, &m, round_over, 5000));
    ck_assert_int_eq(m.completed, 0);
    ck_assert_int_eq(m.voided, 1);
    ck_assert_int_eq(m.void_reason, CROUPIER__VOID_REASON__VOID_LEASE_LOST);
    snprintf(key, sizeof key, "{croupier:money}:round:%s", m.round_id);
    ck_assert_int_eq(redis_int(&e, "EXISTS %s", key), 0);
    ck_assert_int_eq(seat_accounts(&e, &nz), held); /* no chip moved */
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_refusals_have_codes_and_change_nothing)
{
    env_t e;
    env_start(&e, 30, "10000");
    const uint64_t players[] = {21, 22};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    int to = m.turn_seat;
    uint64_t actor = m.seat_player[to], other = m.seat_player[1 - to];
    uint8_t before[4096], after[4096];
    size_t nb = state_bytes(c, 10, actor, before, sizeof before);
    uint64_t rid = 20;
    struct {
        uint64_t player;
        Croupier__Zjh__ZjhMove move;
        int64_t unit;
        int target;
        int code;
    } bad[] = {
        {other, CROUPIER__ZJH__ZJH_MOVE__ZJH_CALL, 0, -1, CROUPIER__ERROR_CODE__NOT_YOUR_TURN},
        {actor, CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, 1000, -1, CROUPIER__ERROR_CODE__BET_ABOVE_MAX},
        {actor, CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, STAKE, -1, CROUPIER__ERROR_CODE__BET_BELOW_MIN},
        {actor, CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE, 0, 1 - to,
         CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED},
        {actor, CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE, 0, -1, CROUPIER__ERROR_CODE__BAD_REQUEST},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        send_move(c, rid, bad[i].player, bad[i].move, bad[i].unit, bad[i].target);
        ck_assert_msg(reply_code(c, rid, NULL) == bad[i].code, "refusal %zu", i);
        rid++;
        ck_assert_uint_eq(state_bytes(c, rid++, actor, after, sizeof after), nb);
        ck_assert_msg(memcmp(before, after, nb) == 0, "refusal %zu changed the table", i);
    }
    /* Not a ZjhAction at all, and another engine's action. */
    const uint8_t junk[] = {0xff, 0xff, 0xff};
    send_body(c, rid, actor, junk, sizeof junk);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__MALFORMED_FRAME);
    ck_assert_int_eq(rpcc_action(c, rid, actor, 0), 0); /* a SheddingAction: not this game's */
    int code = reply_code(c, rid++, NULL);
    ck_assert(code == CROUPIER__ERROR_CODE__WRONG_ENGINE ||
              code == CROUPIER__ERROR_CODE__BAD_REQUEST);
    ck_assert_uint_eq(state_bytes(c, rid++, actor, after, sizeof after), nb);
    ck_assert(memcmp(before, after, nb) == 0);
    /* Looking is allowed out of turn, once; the second look is refused and changes nothing. */
    send_move(c, rid, other, CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__OK);
    nb = state_bytes(c, rid++, other, before, sizeof before);
    send_move(c, rid, other, CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__ACTION_NOT_ALLOWED);
    ck_assert_uint_eq(state_bytes(c, rid++, other, after, sizeof after), nb);
    ck_assert(memcmp(before, after, nb) == 0);
    /* A player not at the table. */
    send_move(c, rid, 999, CROUPIER__ZJH__ZJH_MOVE__ZJH_FOLD, 0, -1);
    ck_assert_int_eq(reply_code(c, rid++, NULL), CROUPIER__ERROR_CODE__NOT_SEATED);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_resume_shows_own_cards_only_after_looking)
{
    env_t e;
    env_start(&e, 30, "10000");
    const uint64_t players[] = {31, 32};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    ck_assert(pump_until(c, &m, has_turn, 5000));
    Croupier__RpcFrame *r = snapshot(c, 10, 31);
    const Croupier__Snapshot *s = r->reply->payload->snapshot;
    ck_assert_ptr_nonnull(s->round_id);
    ck_assert(s->has_turn_seat);
    ck_assert_uint_eq(s->event_seq, m.last_seq);
    /* The round's commitment, as its Deals carried it, per card (docs/fairness.md). */
    ck_assert(s->has_deck_commitment);
    ck_assert_uint_eq(s->deck_commitment.len, DECK_COMMIT_LEN);
    ck_assert(s->has_deck_scheme && s->deck_scheme == DECK_SCHEME_CARDS);
    ck_assert_int_gt(m.ncommits, 0);
    ck_assert_str_eq(m.commit_round[(m.ncommits - 1) % 8], s->round_id);
    ck_assert(memcmp(m.commit[(m.ncommits - 1) % 8], s->deck_commitment.data, DECK_COMMIT_LEN) ==
              0);
    Croupier__Zjh__ZjhState *st = game_state(r);
    ck_assert(st->in_hand);
    ck_assert(!st->has_own_cards);
    ck_assert_uint_eq(st->n_seats, 2);
    croupier__zjh__zjh_state__free_unpacked(st, NULL);
    frame_free_rpc(r);
    send_move(c, 11, 31, CROUPIER__ZJH__ZJH_MOVE__ZJH_LOOK, 0, -1);
    ck_assert_int_eq(reply_code(c, 11, NULL), CROUPIER__ERROR_CODE__OK);
    r = snapshot(c, 12, 31);
    st = game_state(r);
    ck_assert(st->has_own_cards);
    ck_assert_uint_eq(st->own_cards.len, 3);
    croupier__zjh__zjh_state__free_unpacked(st, NULL);
    frame_free_rpc(r);
    r = snapshot(c, 13, 32); /* the other player never sees them */
    st = game_state(r);
    ck_assert(!st->has_own_cards);
    croupier__zjh__zjh_state__free_unpacked(st, NULL);
    frame_free_rpc(r);
    pump_until(c, &m, round_over, 300);
    ck_assert(m.own_cards_seen);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

START_TEST(test_tk_timeout_folds_and_puts_the_seat_on_trustee)
{
    env_t e;
    env_start(&e, 30, "300");
    const uint64_t players[] = {41, 42};
    model_t m;
    rpcc_t *c = seat_players(&e, &m, players, 2);
    /* Nobody acts: the seat to act is folded for, and the hand ends. */
    ck_assert(pump_until(c, &m, round_over, 5000));
    ck_assert_int_ge(m.timed_out, 1);
    ck_assert_int_eq(m.completed, 1);
    ck_assert_int_ge(metric(&e, "tk_timeouts_total{engine=\"zhajinhua\"} "), 1);
    rpcc_close(c);
    testenv_stop(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tk_rounds");
    TCase *tc = tcase_create("rounds");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tk_rounds_settle_against_seat_accounts_with_history_and_rake);
    tcase_add_test(tc, test_tk_refusals_have_codes_and_change_nothing);
    tcase_add_test(tc,
                   test_tk_round_end_waits_for_its_settlement_and_a_refused_one_voids_the_round);
    tcase_add_test(tc, test_tk_resume_shows_own_cards_only_after_looking);
    tcase_add_test(tc, test_tk_timeout_folds_and_puts_the_seat_on_trustee);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
