/*
 * fuzz_replay_check -- libFuzzer driver for a player's check of a per-card replay
 * (replay_check_cards(), replay/replay.h; what `croupier-rules verify-deal --replay` runs on a
 * file a player hands it): any bytes are unpacked as a Replay and checked without a crash; a
 * replay the check accepts must still be accepted against its own commitment and refused
 * against another (docs/fairness.md "The per-card commitment").
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deck.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Croupier__Replay *r = croupier__replay__unpack(NULL, size, data);
    if (r == NULL)
        return 0;
    char err[300];
    int rc = replay_check_cards(r, NULL, err, sizeof err);
    if (rc != 0 && rc != -EBADMSG && rc != -EINVAL)
        abort();
    if (rc == 0) {
        uint8_t other[DECK_COMMIT_LEN];
        memcpy(other, r->deck_commitment.data, DECK_COMMIT_LEN);
        if (replay_check_cards(r, other, err, sizeof err) != 0)
            abort();
        other[0] ^= 1;
        if (replay_check_cards(r, other, err, sizeof err) != -EBADMSG)
            abort();
    }
    croupier__replay__free_unpacked(r, NULL);
    return 0;
}
