/*
 * zjh_wire -- Zha Jin Hua's action message at the edge of the table kit: the game's own rules
 * on a decoded ZjhAction (the rules callback of frame_unpack_game(), proto/frame.h) and its
 * translation into one input of the rules module (zjh.h). Pure functions without state, shared
 * by the adapter (zjh_engine.c, tk_game_t.action_rules) and the fuzz target of the action
 * decoder (fuzz_zjh_action.c). docs/writing-a-game.md, "The game's own messages".
 */
#ifndef CROUPIER_ZJH_WIRE_H
#define CROUPIER_ZJH_WIRE_H

#include <stdint.h>

#include "frame.h"
#include "zhajinhua.pb-c.h"
#include "zjh.h"

/*
 * The rules of a decoded ZjhAction (m is one; the codec's generic checks have passed, so move
 * is one of the five moves): a raise names its unit, > 0; a compare names its target. Returns 0,
 * or -1 with err->code BAD_REQUEST and the field in err->detail.
 */
int zjh_wire_action_rules(const ProtobufCMessage *m, frame_error_t *err);

/*
 * The rules' input for an accepted action: *action the zjh_action_t of its move, *arg the new
 * unit of a raise, the target seat of a compare, else 0. Returns 0, or -EINVAL for a move that
 * is none of the five (nothing written).
 */
int zjh_wire_action_input(const Croupier__Zjh__ZjhAction *a, zjh_action_t *action, int64_t *arg);

#endif
