/*
 * libFuzzer driver: Niu Niu's action decoder. Each input is the body of an Action.game as a
 * client sends it, decoded the way the table kit decodes it (engine/tk_table.c:
 * frame_unpack_game() with NiuAction's descriptor, the default limits and the game's rules,
 * niuniu_wire.h). Corpus: fuzz/corpus/niuniu_action (its files are named after what they hold).
 * Invariants; breaking one aborts, which libFuzzer reports:
 *
 *   - a refusal has an error code and a reason;
 *   - an accepted action names one of the three moves; a bid and a bet carry an amount of at
 *     most NIUNIU_WIRE_MAX_AMOUNT, a show none (what the adapter, niuniu_engine.c, relies on
 *     when it casts the amount);
 *   - it re-encodes (frame_pack_game(), same checks), decodes again and re-encodes to the same
 *     bytes;
 *   - the rules judge its amount without harm: a bet is allowed or not at every multiplier
 *     (niuniu_bet_allowed()), never above a stack that does not cover its worst loss.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "niuniu.h"
#include "niuniu.pb-c.h"
#include "niuniu_wire.h"

static void fuzz_die(const char *what, const frame_error_t *err)
{
    fprintf(stderr, "fuzz invariant broken: %s (%s)\n", what, err != NULL ? err->detail : "");
    abort();
}

/* Room for the round trip's re-encoding in the allocation budget (as fuzz_zjh_action.c). */
static const frame_limits_t fuzz_limits_big = {
    .max_frame = FRAME_DEFAULT_MAX,
    .budget_factor = 16 * FRAME_DEFAULT_BUDGET_FACTOR,
    .budget_floor =
        16 * FRAME_DEFAULT_BUDGET_FLOOR + FRAME_GAME_BODY_MAX * FRAME_DEFAULT_BUDGET_FACTOR,
    .max_string = FRAME_DEFAULT_MAX_STRING,
};

static void fuzz_roundtrip(const ProtobufCMessage *m)
{
    static uint8_t a[FRAME_GAME_BODY_MAX], b[FRAME_GAME_BODY_MAX];
    frame_error_t err;
    ssize_t na = frame_pack_game(m, &fuzz_limits_big, niuniu_wire_action_rules, a, sizeof a, &err);
    if (na < 0)
        fuzz_die("accepted action does not encode", &err);
    ProtobufCMessage *again =
        frame_unpack_game(&croupier__niuniu__niu_action__descriptor, a, (size_t)na,
                          &fuzz_limits_big, niuniu_wire_action_rules, &err);
    if (again == NULL)
        fuzz_die("re-encoded action does not decode", &err);
    ssize_t nb =
        frame_pack_game(again, &fuzz_limits_big, niuniu_wire_action_rules, b, sizeof b, &err);
    if (nb != na || memcmp(a, b, (size_t)na) != 0)
        fuzz_die("second encoding differs", &err);
    frame_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    frame_error_t err;
    ProtobufCMessage *m = frame_unpack_game(&croupier__niuniu__niu_action__descriptor, data, size,
                                            &frame_limits_default, niuniu_wire_action_rules, &err);
    if (m == NULL) {
        if (err.code == CROUPIER__ERROR_CODE__OK || err.detail[0] == '\0')
            fuzz_die("refusal without a reason", &err);
        return 0;
    }
    const Croupier__Niuniu__NiuAction *a = (const Croupier__Niuniu__NiuAction *)m;
    bool show = a->move == CROUPIER__NIUNIU__NIU_MOVE__NIU_SHOW;
    if (a->move != CROUPIER__NIUNIU__NIU_MOVE__NIU_BID &&
        a->move != CROUPIER__NIUNIU__NIU_MOVE__NIU_BET && !show)
        fuzz_die("accepted action names no move", NULL);
    if (show == a->has_amount || a->amount > NIUNIU_WIRE_MAX_AMOUNT)
        fuzz_die("accepted action's amount is not what its move needs", NULL);
    fuzz_roundtrip(m);
    niuniu_config_t cfg;
    niuniu_config_default(&cfg);
    for (int mult = 1; mult <= cfg.max_bid; mult++) {
        int64_t worst = (int64_t)a->amount * cfg.stake * mult * niuniu_max_multiplier(&cfg);
        if (niuniu_bet_allowed(&cfg, worst - 1, mult, (int)a->amount))
            fuzz_die("a bet allowed above what the stack covers", NULL);
    }
    frame_free(m);
    return 0;
}
