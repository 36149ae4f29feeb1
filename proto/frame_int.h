/*
 * frame_int.h -- what the codec's files share (frame.c, frame_check.c, frame_wire.c): the path
 * of a check, the walk's context and the kinds of bytes fields, and the functions one file
 * calls in another. Internal to croupier_proto: nothing outside proto/ includes it. frame.h is
 * the contract to the rest of the tree; docs/protocol.md "Framing", "What "valid" means" and
 * "Relaying without decoding" are the design.
 *
 * The files, one concern each:
 *
 *   frame.c        the core: limits and errors (fail, frame_fail_at, the path text), card and UTF-8
 *                  checks, result and code names, the budget allocator (its arena), the wire
 *                  pass over strings before unpacking (frame_wire_varint, wire_check), encoding and
 *                  packing, decoding (frame_unpack_checked, a table-kit game's own messages),
 * freeing, and reading frames from an evbuffer (frame_peek, frame_read_*) frame_check.c  the checks
 * of an unpacked message: the descriptor walk (frame_walk_message: enums, oneofs, cards, opaque
 * bytes, pointers), the per-message rules (rules_client, frame_rules_server, rules_rpc,
 * frame_check_room_rules), check_any and the public frame_check_client / _server / _rpc
 *   frame_wire.c   the wire format without decoding: frame_wire_field, frame_write_forward,
 *                  the reader (frame_wire_init, frame_wire_next), frame_wire_vouch,
 *                  frame_scan_rpc, frame_write_prefixed
 *
 * Who owns what: the codec has no mutable global state (frame.h: every function is
 * thread-safe); frame_limits_default is constant. A path_node_t, a walk_ctx_t and the budget_t
 * of an unpack live on the stack of the call that made them. A message frame_unpack_checked()
 * returns is its caller's: its memory is one arena (frame.c's, in a frame_scratch_t when the
 * caller gave one), freed whole by frame_arena_free_message() (frame_free_*; frame_wire.c's scan
 * for the body it decodes alone). The vouch and the scan of frame_wire.c must accept only what
 * frame_unpack_checked() and the checks of frame_check.c accept: they share the helpers below
 * rather than restate them (frame_wire_varint, frame_bytes_kind, frame_enum_zero_is_unspecified,
 * frame_rules_server).
 *
 * A new concern goes in a file of its own, frame_<concern>.c, listed above, with a section of
 * its own among the prototypes below; docs/architecture.md §2 lists the files too.
 */
#ifndef CROUPIER_FRAME_INT_H
#define CROUPIER_FRAME_INT_H

#include "frame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

/* ---- types ---------------------------------------------------------------------------------- */

/*
 * Where a check stands inside a message: one node per nesting level, on the stack of the
 * recursive walks (the root names the message type). The dotted text ("ClientMessage.action.
 * holdem") is built only when a check fails, so a valid message costs no formatting at all.
 */
typedef struct path_node {
    const struct path_node *up;
    const char *name;
} path_node_t;

/* What a bytes field holds: a card list, an envelope's body (FRAME_GAME_BODY_MAX opaque bytes)
 * or, in a game's own message, opaque bytes of at most max_string. */
typedef enum { BYTES_CARDS, BYTES_GAME_BODY, BYTES_OPAQUE } bytes_kind_t;

/* What a walk needs besides the message: the limits, where errors go, whether the strings
 * were already checked on the wire (a message just unpacked: every string it holds passed the
 * wire pass under the same limits, so only the pointers are looked at again), and whether the
 * message is a game's own (its bytes fields follow the card-field convention of frame.h). */
typedef struct walk_ctx {
    const frame_limits_t *lim;
    frame_error_t *err;
    bool strings_checked;
    bool game;
} walk_ctx_t;

/* ---- functions one file calls in another ------------------------------------------------- */

/* frame.c: limits and errors, the arena, the wire pass, decoding. */
const frame_limits_t *frame_limits_or_default(const frame_limits_t *lim);
/* Fills err (if any) with code and a printf-style detail. Returns -EINVAL for convenience. */
int frame_fail(frame_error_t *err, Croupier__ErrorCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void frame_error_reset(frame_error_t *err);
/*
 * Like frame_fail(), for a check inside a walk: the detail is the path of at, then the text of fmt
 * (which starts right after the path, e.g. ".%s: unspecified"). Returns -EINVAL.
 */
int frame_fail_at(frame_error_t *err, Croupier__ErrorCode code, const path_node_t *at,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void frame_arena_free_message(ProtobufCMessage *m);
bool frame_wire_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out);
ProtobufCMessage *frame_unpack_checked(const ProtobufCMessageDescriptor *desc,
                                       const uint8_t *payload, size_t len,
                                       const frame_limits_t *lim, frame_error_t *err, bool rules,
                                       frame_scratch_t *scratch);
/* frame_unpack_checked() without its generic checks, for bytes frame_wire_vouch() accepted
 * (frame.c); NULL when protobuf-c refuses them. */
ProtobufCMessage *frame_unpack_vouched(const ProtobufCMessageDescriptor *desc,
                                       const uint8_t *payload, size_t len,
                                       const frame_limits_t *lim, frame_scratch_t *scratch);

/* frame_check.c: the descriptor walk and the message rules. */
bool frame_enum_zero_is_unspecified(const ProtobufCEnumDescriptor *ed);
bytes_kind_t frame_bytes_kind(const ProtobufCMessageDescriptor *d,
                              const ProtobufCFieldDescriptor *f, bool game);
int frame_walk_message(const ProtobufCMessage *m, const path_node_t *at, unsigned depth,
                       const walk_ctx_t *w);
int frame_rules_server(const Croupier__ServerMessage *m, const char *path, frame_error_t *err);
int frame_check_any(const ProtobufCMessage *m, const frame_limits_t *lim, frame_error_t *err,
                    bool strings_checked);

#endif
