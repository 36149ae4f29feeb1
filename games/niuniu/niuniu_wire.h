/*
 * niuniu_wire -- Niu Niu's action message at the edge of the table kit: the game's own rules on
 * a decoded NiuAction (the rules callback of frame_unpack_game(), proto/frame.h), shared by the
 * adapter (niuniu_engine.c, tk_game_t.action_rules) and any fuzz target of the action decoder.
 * docs/writing-a-game.md, "The game's own messages".
 */
#ifndef CROUPIER_NIUNIU_WIRE_H
#define CROUPIER_NIUNIU_WIRE_H

#include "frame.h"
#include "niuniu.pb-c.h"

#define NIUNIU_WIRE_MAX_AMOUNT 1000

/*
 * The rules of a decoded NiuAction (m is one; the codec's generic checks have passed, so move is
 * one of the three): a bid and a bet name their amount, at most NIUNIU_WIRE_MAX_AMOUNT (the
 * rules' largest bet option, niuniu_config_check()); a show names none. Returns 0, or -1 with
 * err->code BAD_REQUEST and the field in err->detail.
 */
int niuniu_wire_action_rules(const ProtobufCMessage *m, frame_error_t *err);

#endif
