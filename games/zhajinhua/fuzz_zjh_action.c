/*
 * libFuzzer driver: Zha Jin Hua's action decoder. Each input is the body of an Action.game as a
 * client sends it, decoded the way the table kit decodes it (engine/tk_table.c: frame_unpack_game()
 * with ZjhAction's descriptor, the default limits and the game's rules, zjh_wire.h), then handed
 * to the rules as the adapter hands it. Corpus: fuzz/corpus/zjh_action (written by
 * zjh_corpus_gen). Invariants; breaking one aborts, which libFuzzer reports:
 *
 *   - a refusal has an error code and a reason;
 *   - an accepted action names one of the five moves, a raise a unit > 0, a compare a target
 *     (what the adapter relies on when it maps the move);
 *   - it re-encodes (frame_pack_game(), same checks), decodes again and re-encodes to the same
 *     bytes;
 *   - played by the seat to act and by another seat, on a table in its first betting round and
 *     on one in its second, the rules take it or refuse it with the table unchanged byte for
 *     byte (zjh_table_same_state()); a hand it ends settles to minus the rake.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "zhajinhua.pb-c.h"
#include "zjh.h"
#include "zjh_wire.h"

static void fuzz_die(const char *what, const frame_error_t *err)
{
    fprintf(stderr, "fuzz invariant broken: %s (%s)\n", what, err != NULL ? err->detail : "");
    abort();
}

/* Two tables of three seats mid-hand: [0] in betting round 1, [1] in round 2 (everyone called
 * once). Built once; each input plays on copies. */
static zjh_table_t *fuzz_tables[2];

static void fuzz_tables_init(void)
{
    if (fuzz_tables[0] != NULL)
        return;
    zjh_config_t cfg = {.seats = 3, .ante = 10, .max_unit = 100, .max_rounds = 4};
    int64_t stacks[ZJH_MAX_SEATS] = {1000, 1000, 1000};
    uint8_t deck[ZJH_DECK_CARDS];
    for (int i = 0; i < ZJH_DECK_CARDS; i++)
        deck[i] = ZJH_CARD(2 + (i * 7) % 13, i % 4);
    /* (i * 7) % 13 with i % 4 visits all 52 cards once: 7 is prime to 13, 13 is prime to 4. */
    zjh_table_t *t = zjh_table_create(&cfg, NULL, NULL, NULL);
    if (t == NULL || zjh_table_start_hand(t, 0, stacks, deck, ZJH_DECK_CARDS) != ZJH_OK)
        fuzz_die("the test table does not start", NULL);
    zjh_table_t *r2 = zjh_table_clone(t);
    for (int k = 0; k < 3; k++)
        if (r2 == NULL || zjh_table_act(r2, zjh_table_to_act(r2), ZJH_CALL, 0) != ZJH_OK)
            fuzz_die("the test table does not reach round 2", NULL);
    if (zjh_table_round(r2) != 2)
        fuzz_die("the test table is not in round 2", NULL);
    fuzz_tables[0] = t;
    fuzz_tables[1] = r2;
}

/* Plays the action by seat on a copy of base: taken, or refused with nothing changed. */
static void fuzz_play(const zjh_table_t *base, int seat, zjh_action_t action, int64_t arg)
{
    zjh_table_t *t = zjh_table_clone(base);
    if (t == NULL)
        abort();
    int rc = zjh_table_act(t, seat, action, arg);
    if (rc != ZJH_OK && !zjh_table_same_state(t, base))
        fuzz_die("a refused action changed the table", NULL);
    zjh_settlement_t st;
    if (rc == ZJH_OK && !zjh_table_in_hand(t) && zjh_table_settlement(t, &st) == ZJH_OK) {
        int64_t sum = 0;
        for (int s = 0; s < ZJH_MAX_SEATS; s++)
            sum += st.delta[s];
        if (sum != -st.rake)
            fuzz_die("a hand the action ended does not settle to minus the rake", NULL);
    }
    zjh_table_destroy(t);
}

/* Re-encoding may shrink a body while the decoded tree stays the same (over-long varints come
 * back short, unknown fields are kept), so the round trip gets room in the allocation budget,
 * which scales with the body's size: the budget itself is checked on the first decode, the round
 * trip checks only the canonical fixed point (as fuzz/fuzz_frame_common.h does). */
static const frame_limits_t fuzz_limits_big = {
    .max_frame = FRAME_DEFAULT_MAX,
    .budget_factor = 16 * FRAME_DEFAULT_BUDGET_FACTOR,
    .budget_floor =
        16 * FRAME_DEFAULT_BUDGET_FLOOR + FRAME_GAME_BODY_MAX * FRAME_DEFAULT_BUDGET_FACTOR,
    .max_string = FRAME_DEFAULT_MAX_STRING,
};

/* An accepted action must encode, decode and encode again to the same bytes. */
static void fuzz_roundtrip(const ProtobufCMessage *m)
{
    static uint8_t a[FRAME_GAME_BODY_MAX], b[FRAME_GAME_BODY_MAX];
    frame_error_t err;
    ssize_t na = frame_pack_game(m, &fuzz_limits_big, zjh_wire_action_rules, a, sizeof a, &err);
    if (na < 0)
        fuzz_die("accepted action does not encode", &err);
    ProtobufCMessage *again =
        frame_unpack_game(&croupier__zjh__zjh_action__descriptor, a, (size_t)na, &fuzz_limits_big,
                          zjh_wire_action_rules, &err);
    if (again == NULL)
        fuzz_die("re-encoded action does not decode", &err);
    ssize_t nb = frame_pack_game(again, &fuzz_limits_big, zjh_wire_action_rules, b, sizeof b, &err);
    if (nb != na || memcmp(a, b, (size_t)na) != 0)
        fuzz_die("second encoding differs", &err);
    frame_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    frame_error_t err;
    ProtobufCMessage *m = frame_unpack_game(&croupier__zjh__zjh_action__descriptor, data, size,
                                            &frame_limits_default, zjh_wire_action_rules, &err);
    if (m == NULL) {
        if (err.code == CROUPIER__ERROR_CODE__OK || err.detail[0] == '\0')
            fuzz_die("refusal without a reason", &err);
        return 0;
    }
    const Croupier__Zjh__ZjhAction *a = (const Croupier__Zjh__ZjhAction *)m;
    zjh_action_t action;
    int64_t arg;
    if (zjh_wire_action_input(a, &action, &arg) != 0)
        fuzz_die("accepted action names no move", NULL);
    if ((a->move == CROUPIER__ZJH__ZJH_MOVE__ZJH_RAISE && (!a->has_unit || a->unit <= 0)) ||
        (a->move == CROUPIER__ZJH__ZJH_MOVE__ZJH_COMPARE && !a->has_target))
        fuzz_die("accepted action lacks what its move needs", NULL);
    fuzz_roundtrip(m);
    fuzz_tables_init();
    for (int k = 0; k < 2; k++) {
        int to = zjh_table_to_act(fuzz_tables[k]);
        fuzz_play(fuzz_tables[k], to, action, arg);
        fuzz_play(fuzz_tables[k], (to + 1) % 3, action, arg);
    }
    frame_free(m);
    return 0;
}
