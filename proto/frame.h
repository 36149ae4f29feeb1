/*
 * frame -- the framing codec of both croupier protocols (client <-> gate, gate <-> game).
 *
 * A frame is a 4-byte big-endian payload length followed by that many bytes of one serialized
 * protobuf message: Croupier__ClientMessage (client -> gate), Croupier__ServerMessage
 * (gate -> client) or Croupier__RpcFrame (rpc link, both ways). See docs/protocol.md.
 *
 * Every byte that arrives from a peer is untrusted, and protobuf-c alone is not enough for it:
 * its unpack has no size limit, copies strings without a UTF-8 check (and truncates them at an
 * embedded NUL), stores enum values unchecked and does not know our rules. So decoding is:
 *
 *   1. the length is checked against the cap before anything is read (FRAME_TOO_LARGE);
 *   2. a wire pass checks every string field (valid UTF-8, no NUL, at most max_string bytes);
 *   3. protobuf-c unpacks through a budget allocator that refuses to allocate more than
 *      budget_floor + budget_factor * payload bytes in total (a few KiB of empty sub-messages
 *      would otherwise expand to hundreds of KiB);
 *   4. a descriptor walk checks every enum value, oneof case, card code and required pointer,
 *      then per-message rules (a bet has a positive amount, a request has a body...).
 *
 * A message handed out by frame_unpack_*() or frame_read_*() has passed all of this; free it
 * with the matching frame_free_*(). The frame_pack_*() functions run the same checks on
 * outgoing messages, so a bug on one side is caught where it is made.
 *
 * All functions are thread-safe (no global mutable state) and never abort on bad input.
 */
#ifndef CROUPIER_FRAME_H
#define CROUPIER_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/buffer.h>
#include <protobuf-c/protobuf-c.h>

#include "client.pb-c.h"
#include "rpc.pb-c.h"

#define FRAME_HEADER_SIZE 4
#define FRAME_DEFAULT_MAX (64 * 1024)
#define FRAME_DEFAULT_BUDGET_FACTOR 8
#define FRAME_DEFAULT_BUDGET_FLOOR (16 * 1024)
#define FRAME_DEFAULT_MAX_STRING 4096
/* The longest card list any field may hold (two full decks with jokers). */
#define FRAME_MAX_CARDS 108
/* Nesting limit of the descriptor walks (the schema itself nests less than 8 deep). */
#define FRAME_MAX_DEPTH 16
/* The largest body of a table-kit envelope (GameAction, GameState, GameEvent): a game's own
 * message, serialized. The codec refuses a longer body (BAD_REQUEST, the field's path in the
 * detail) and never opens one; the game decodes it with frame_unpack_game(). */
#define FRAME_GAME_BODY_MAX 8192
/* Most tournaments in one TournamentList, and the largest ListTournaments.limit
 * (docs/protocol.md "Tournaments"). */
#define FRAME_TOUR_LIST_MAX 200

typedef struct frame_limits {
    size_t max_frame;     /* largest payload accepted or sent (bytes, excluding the header) */
    size_t budget_factor; /* unpack may allocate budget_floor + budget_factor * payload bytes */
    size_t budget_floor;
    size_t max_string; /* longest string field in bytes */
} frame_limits_t;

/* The defaults above: 64 KiB frames, 16 KiB + 8 x payload budget, 4096-byte strings. */
extern const frame_limits_t frame_limits_default;

/* Results of the incremental decoder. */
typedef enum {
    FRAME_OK = 0,         /* one frame was decoded (and removed from the buffer) */
    FRAME_NEED_MORE = 1,  /* no whole frame yet; nothing was removed */
    FRAME_TOO_LARGE = -1, /* the next frame announces a payload above max_frame; nothing was
                             removed: answer FRAME_TOO_LARGE and close, the stream can't resync */
    FRAME_MALFORMED = -2, /* a whole frame arrived but is not a valid message: it was removed,
                             the stream stays in sync, the error says why */
} frame_result_t;

/*
 * Why a message was refused. code is a Croupier__ErrorCode: CROUPIER__ERROR_CODE__MALFORMED_FRAME
 * (not protobuf, or over the allocation budget), __BAD_REQUEST (protobuf, but breaks a rule:
 * unknown enum value, bad UTF-8, missing body...), __FRAME_TOO_LARGE. detail names the field,
 * e.g. "action.holdem.amount: required for BET/RAISE and > 0". alloc_bytes is what the unpack
 * allocated in total (also set on success).
 */
typedef struct frame_error {
    Croupier__ErrorCode code;
    size_t alloc_bytes;
    char detail[160];
} frame_error_t;

/*
 * Cards on the wire: one byte, rank << 2 | suit, rank 2..14 (J=11, Q=12, K=13, A=14), suit
 * 0 = clubs, 1 = diamonds, 2 = hearts, 3 = spades; jokers are rank 15 with suit 0 (black,
 * little) or 1 (red, big). Games keep their own internal codes and map at the edge.
 */
#define FRAME_CARD(rank, suit) ((uint8_t)(((rank) << 2) | (suit)))
#define FRAME_CARD_RANK(code) ((code) >> 2)
#define FRAME_CARD_SUIT(code) ((code)&3)
#define FRAME_RANK_JOKER 15
#define FRAME_CARD_BLACK_JOKER FRAME_CARD(FRAME_RANK_JOKER, 0)
#define FRAME_CARD_RED_JOKER FRAME_CARD(FRAME_RANK_JOKER, 1)
bool frame_card_valid(uint8_t code);
/* Checks that len bytes are well-formed UTF-8 (no overlongs, surrogates or NUL). */
bool frame_utf8_valid(const uint8_t *s, size_t len);

/* ---- encoding ---------------------------------------------------------------------------- */

/* Writes the 4-byte big-endian header for a payload of len bytes. */
void frame_put_header(uint8_t out[FRAME_HEADER_SIZE], uint32_t len);

/*
 * Checks msg (as the matching frame_check_*() would, chosen by its descriptor; other message
 * types get only the generic checks) and encodes it as one frame into buf.
 * Returns the frame size (header included), -EINVAL (msg breaks a rule; err says which if not
 * NULL), -EMSGSIZE (payload above lim->max_frame) or -ENOBUFS (cap too small). Nothing is
 * written on failure. lim NULL means frame_limits_default.
 */
ssize_t frame_encode(const ProtobufCMessage *msg, const frame_limits_t *lim, uint8_t *buf,
                     size_t cap, frame_error_t *err);

/* Like frame_encode, appending the frame to out. Returns 0, -EINVAL, -EMSGSIZE or -ENOMEM. */
int frame_write(struct evbuffer *out, const ProtobufCMessage *msg, const frame_limits_t *lim,
                frame_error_t *err);

/* Typed frame_write. Returns 0 or a negative errno as frame_write. */
int frame_pack_client(struct evbuffer *out, const Croupier__ClientMessage *m,
                      const frame_limits_t *lim, frame_error_t *err);
int frame_pack_server(struct evbuffer *out, const Croupier__ServerMessage *m,
                      const frame_limits_t *lim, frame_error_t *err);
int frame_pack_rpc(struct evbuffer *out, const Croupier__RpcFrame *m, const frame_limits_t *lim,
                   frame_error_t *err);

/* ---- checking ---------------------------------------------------------------------------- */

/* Every rule of the protocol for a message built in memory. Return 0, or -EINVAL with err. */
/* A private room's rules (CreateRoom.rules): 1..64 deals, 2..9 seats when given, at most 8
 * rule options of 1..32 of a-z, 0-9, '-' and ':'. 0, or -1 with err set (BAD_REQUEST, the
 * field named after path). The client codec leaves them to the receiver, which answers a
 * refusal instead of closing the connection; the rpc codec checks them. */
int frame_check_room_rules(const Croupier__RoomRules *r, const char *path, frame_error_t *err);
int frame_check_client(const Croupier__ClientMessage *m, const frame_limits_t *lim,
                       frame_error_t *err);
int frame_check_server(const Croupier__ServerMessage *m, const frame_limits_t *lim,
                       frame_error_t *err);
int frame_check_rpc(const Croupier__RpcFrame *m, const frame_limits_t *lim, frame_error_t *err);

/* ---- decoding a payload ------------------------------------------------------------------ */

/*
 * Unpacks and checks one payload (without the header). Returns the message, which the caller
 * frees with the matching frame_free_*(), or NULL with err filled in. err may be NULL.
 */
Croupier__ClientMessage *frame_unpack_client(const uint8_t *payload, size_t len,
                                             const frame_limits_t *lim, frame_error_t *err);
Croupier__ServerMessage *frame_unpack_server(const uint8_t *payload, size_t len,
                                             const frame_limits_t *lim, frame_error_t *err);
Croupier__RpcFrame *frame_unpack_rpc(const uint8_t *payload, size_t len, const frame_limits_t *lim,
                                     frame_error_t *err);

/*
 * Caller-owned memory for the first block of one decoded message, so that a small message
 * costs no malloc/free: frame_unpack_client_scratch() decodes as frame_unpack_client() (same
 * checks, same verdicts), with the message in scratch when it fits (larger ones spill to the
 * heap). Free the message with frame_free_client() as usual (it frees only what is on the
 * heap), before scratch is used again or goes away: scratch holds one message at a time.
 */
typedef struct frame_scratch {
    _Alignas(16) uint8_t mem[1024];
} frame_scratch_t;

Croupier__ClientMessage *frame_unpack_client_scratch(const uint8_t *payload, size_t len,
                                                     const frame_limits_t *lim, frame_error_t *err,
                                                     frame_scratch_t *scratch);

/* Frees a decoded message with the allocator it was made with. NULL is a no-op. */
void frame_free_client(Croupier__ClientMessage *m);
void frame_free_server(Croupier__ServerMessage *m);
void frame_free_rpc(Croupier__RpcFrame *m);

/*
 * The generic form: unpacks a message of type desc under the budget and runs the generic
 * checks only (strings, enums, oneofs, cards, required pointers). Free with frame_free().
 */
ProtobufCMessage *frame_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *payload,
                               size_t len, const frame_limits_t *lim, frame_error_t *err);
void frame_free(ProtobufCMessage *m);

/* ---- a table-kit game's own messages ----------------------------------------------------- */

/*
 * A game on the table kit (ENGINE_GAME) sends its actions, snapshot state and events as its own
 * protobuf messages (from the game's own .proto), serialized into the body of a GameAction,
 * GameState or GameEvent. The gateway forwards those bodies unopened; the game decodes and
 * encodes them here, under the same caps and checks as the client protocol:
 *
 *   1. the length: at most FRAME_GAME_BODY_MAX and lim->max_frame (FRAME_TOO_LARGE);
 *   2. the wire pass: every string field, at any depth, valid UTF-8 without NUL and at most
 *      lim->max_string bytes; field numbers and nesting (FRAME_MAX_DEPTH) bounded;
 *   3. the budgeted unpack (budget_floor + budget_factor x len), freed with frame_free();
 *   4. the descriptor walk: every enum value defined, a required enum whose zero value is
 *      *_UNSPECIFIED not zero, each oneof case one of its fields, required fields present;
 *   5. the game's own rules: rules(m, err), when not NULL, on the decoded message.
 *
 * Cards. A bytes field of a game message is a card list (at most FRAME_MAX_CARDS valid card
 * codes, as everywhere in the protocol, docs/protocol.md "Cards") when its name is `cards` or
 * ends in `_cards` (`hole_cards`, `shown_cards`); the naming convention is the
 * declaration, read from the descriptor at any depth. Every other bytes field is opaque to the
 * codec and at most lim->max_string bytes long. So a game declares
 *
 *     message ZjhAction { required ZjhMove move = 1; optional bytes cards = 2; }
 *
 * and its cards are checked like those of the built-in engines.
 *
 * Errors (err->code): MALFORMED_FRAME (not protobuf, over the budget), BAD_REQUEST (a check or
 * the rules refused it; detail names the field, e.g. "ZjhAction.cards: byte 0 is not a card
 * code (0x00)"), FRAME_TOO_LARGE. A rules callback returns 0, or a negative value after filling
 * err (code and detail; it may leave the code OK, which is then taken as BAD_REQUEST).
 */
typedef int (*frame_game_rules_cb)(const ProtobufCMessage *m, frame_error_t *err);

/* Decodes len bytes as a message of type desc (a game's own). Returns the message, freed with
 * frame_free(), or NULL with err filled in (err may be NULL). lim NULL: frame_limits_default. */
ProtobufCMessage *frame_unpack_game(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                                    size_t len, const frame_limits_t *lim,
                                    frame_game_rules_cb rules, frame_error_t *err);

/* The checks of frame_unpack_game() (the walk, strings included, and rules) on a message built
 * in memory. Returns 0 or -EINVAL with err filled in. */
int frame_check_game(const ProtobufCMessage *m, const frame_limits_t *lim,
                     frame_game_rules_cb rules, frame_error_t *err);

/*
 * Checks m as frame_check_game() and serializes it into buf (cap bytes), e.g. the body of a
 * GameState or GameEvent. Returns its length, -EINVAL (a check refused it; err says why),
 * -EMSGSIZE (longer than FRAME_GAME_BODY_MAX or lim->max_frame) or -ENOBUFS (cap too small).
 * Nothing is written on failure. A buffer of FRAME_GAME_BODY_MAX bytes always suffices.
 */
ssize_t frame_pack_game(const ProtobufCMessage *m, const frame_limits_t *lim,
                        frame_game_rules_cb rules, uint8_t *buf, size_t cap, frame_error_t *err);

/* Like frame_pack_game(), into a new buffer: on success body->data (malloc'd; the caller frees
 * it with free()) and body->len. Returns 0, -EINVAL or -EMSGSIZE; body is untouched on
 * failure. */
int frame_pack_game_body(const ProtobufCMessage *m, const frame_limits_t *lim,
                         frame_game_rules_cb rules, ProtobufCBinaryData *body, frame_error_t *err);

/* ---- incremental decoding from an evbuffer ----------------------------------------------- */

/*
 * Looks at the front of in. FRAME_OK: a whole frame is there; *payload points at its *len
 * bytes (made contiguous inside in, valid until in changes) and the caller removes it with
 * frame_consume(in, *len) when done. FRAME_NEED_MORE: *want (if not NULL) is the number of
 * bytes in must hold before the frame can complete (use it as a read watermark).
 * FRAME_TOO_LARGE: the announced length is above the cap. Never returns FRAME_MALFORMED.
 */
frame_result_t frame_peek(struct evbuffer *in, const frame_limits_t *lim, const uint8_t **payload,
                          size_t *len, size_t *want);
/* Removes the frame of payload length len from the front of in. */
void frame_consume(struct evbuffer *in, size_t len);

/*
 * One call = one frame: peeks, unpacks, checks and consumes. Loop while it returns FRAME_OK
 * (one read may hold many frames):
 *
 *     Croupier__ClientMessage *m;
 *     frame_error_t err;
 *     frame_result_t r;
 *     while ((r = frame_read_client(in, lim, &m, &err)) != FRAME_NEED_MORE) {
 *         if (r == FRAME_TOO_LARGE) { reply err.code and close; break; }
 *         if (r == FRAME_MALFORMED) { reply err.code (or close); continue; }
 *         handle(m);
 *         frame_free_client(m);
 *     }
 *
 * *out is set only on FRAME_OK; err is filled on FRAME_TOO_LARGE and FRAME_MALFORMED.
 */
frame_result_t frame_read_client(struct evbuffer *in, const frame_limits_t *lim,
                                 Croupier__ClientMessage **out, frame_error_t *err);
frame_result_t frame_read_server(struct evbuffer *in, const frame_limits_t *lim,
                                 Croupier__ServerMessage **out, frame_error_t *err);
frame_result_t frame_read_rpc(struct evbuffer *in, const frame_limits_t *lim,
                              Croupier__RpcFrame **out, frame_error_t *err);

/* Short human-readable name of a frame_result_t, for logs. */
const char *frame_result_name(frame_result_t r);
/* The proto name of an error code ("NOT_YOUR_TURN"), or "UNKNOWN" for undefined values. */
const char *frame_error_code_name(int code);

/* ---- forwarding checked bytes ------------------------------------------------------------ */

/*
 * A relay (croupier-gate) that decoded and checked a frame can forward a sub-message of it as
 * bytes instead of re-encoding it, when the checks of the outgoing type are the ones the
 * incoming frame passed (e.g. RpcFrame.reply.payload is checked as a ServerMessage).
 *
 * frame_wire_field: finds the value of length-delimited field `field` in the serialized
 * message msg. Returns 0 with *value / *value_len set when the field occurs exactly once,
 * -ENOENT when it does not occur, -EEXIST when it occurs more than once (a decoder merges the
 * occurrences: decode it instead), -EINVAL when the bytes are not well-formed or the field is
 * not length-delimited. *value points into msg.
 */
int frame_wire_field(const uint8_t *msg, size_t len, uint32_t field, const uint8_t **value,
                     size_t *value_len);

/*
 * Appends one frame holding the serialized message msg (len bytes, from a frame that
 * frame_unpack_*() or frame_read_*() accepted) with the varint field `field` set to value:
 * every occurrence of the field in msg is left out and one is written at the end. field 0
 * forwards msg unchanged. Returns 0, -EMSGSIZE (the payload would exceed lim->max_frame; lim
 * NULL means frame_limits_default), -EINVAL (msg is not well-formed protobuf) or -ENOMEM.
 * Nothing is written on failure.
 */
int frame_write_forward(struct evbuffer *out, const uint8_t *msg, size_t len, uint32_t field,
                        uint64_t value, const frame_limits_t *lim);

/* ---- reading the wire format without decoding ------------------------------------------- */

/*
 * A bounds-checked reader of serialized protobuf: one field per frame_wire_next() call, no
 * allocation, no schema. The reader never reads outside msg[0, len).
 */
typedef struct frame_wire_reader {
    const uint8_t *p;
    size_t len;
    size_t pos; /* where the next field's tag starts */
} frame_wire_reader_t;

typedef struct frame_wire_value {
    uint32_t field;      /* field number, 1 .. 2^29-1 */
    uint8_t type;        /* wire type: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    uint64_t num;        /* types 0, 1, 5: the value (fixed values little-endian); type 2: len */
    const uint8_t *data; /* the value's bytes inside msg (type 2: without the length prefix) */
    size_t len;          /* their number (type 0: the varint's length in bytes) */
    size_t start;        /* offset of the field's tag: the field is msg[start, reader.pos) */
} frame_wire_value_t;

/* Starts reading the len bytes at msg (NULL with len 0 is an empty message). */
void frame_wire_init(frame_wire_reader_t *r, const uint8_t *msg, size_t len);

/*
 * Reads the next field into *v. Returns 1 (a field), 0 (the end of the message) or -EINVAL
 * (malformed: a truncated tag, varint or value, a varint of more than 10 bytes, field number 0
 * or above 2^29-1, wire types 3, 4, 6, 7); after -EINVAL the reader stays at the bad field.
 */
int frame_wire_next(frame_wire_reader_t *r, frame_wire_value_t *v);

/* Writes v as a varint at p (room for 10 bytes); returns the number of bytes written. */
size_t frame_wire_put_varint(uint8_t *p, uint64_t v);

/*
 * Vouches for serialized bytes without unpacking them: returns 0 when frame_unpack(desc, msg,
 * len, lim) would accept them (every generic check: structure, strings, enums, oneofs, cards,
 * required fields, allocation budget), -EAGAIN when it cannot say so cheaply. -EAGAIN is not a
 * refusal: decode the bytes to get the verdict and its reason. Only plainly encoded messages
 * are vouched for: every field known to desc, with the wire type of its declared type (packed
 * repeated fields are not), no singular field twice, at most one member per oneof, no varint
 * of 10 bytes above 2^64-1, an estimated unpack size under half the budget. Allocates nothing.
 */
int frame_wire_vouch(const ProtobufCMessageDescriptor *desc, const uint8_t *msg, size_t len,
                     const frame_limits_t *lim);

/*
 * What a relay needs of an rpc frame that carries a ServerMessage for a client, read without
 * decoding the frame (frame_scan_rpc).
 */
typedef struct frame_rpc_scan {
    uint64_t request_id;
    uint64_t player_id; /* has_player_id: RpcFrame.player_id is set */
    uint64_t session_id;
    bool has_player_id, has_session_id;
    uint32_t body;       /* a Croupier__RpcFrame__BodyCase: BODY_REPLY or BODY_PUSH */
    const uint8_t *msg;  /* the ServerMessage's bytes (reply.payload or push), inside payload */
    size_t msg_len;      /* their number */
    uint32_t msg_body;   /* the ServerMessage's Croupier__ServerMessage__BodyCase */
    bool msg_request_id; /* the ServerMessage sets its own request_id field */
    /* A push's RpcFrame.push_to (its further recipients): n_push_to ids, read with
     * frame_push_to_next() from the packed bytes push_to[0, push_to_len) inside payload. */
    const uint8_t *push_to;
    size_t push_to_len;
    unsigned n_push_to;
} frame_rpc_scan_t;

/* Most players one push names in RpcFrame.push_to (docs/protocol.md "One push, many players"). */
#define FRAME_PUSH_TO_MAX 64

/* 0 when ids[0, n) are a valid RpcFrame.push_to beside player_id: n at most FRAME_PUSH_TO_MAX,
 * none 0, none twice, none player_id; -EINVAL otherwise. */
int frame_push_to_check(const uint64_t *ids, size_t n, uint64_t player_id);

/* The next id of a scanned push_to list: *pos starts at 0; false at the end. The bytes were
 * checked by frame_scan_rpc(). */
bool frame_push_to_next(const frame_rpc_scan_t *s, size_t *pos, uint64_t *id);

/*
 * The whole frame (header included) of an RpcFrame push of the serialized ServerMessage msg to
 * players[0] and, in push_to, to players[1, n): the bytes protobuf-c would write for that
 * RpcFrame (request_id 0, player_id, push_to packed, push), built around msg without
 * decoding it. n is 1..FRAME_PUSH_TO_MAX + 1 and the ids a valid push_to; msg is not checked.
 * Returns a malloc'ed buffer and its length in *out_len, or NULL (-EINVAL input, or a frame
 * over UINT32_MAX).
 */
uint8_t *frame_pack_push(const uint64_t *players, size_t n, const uint8_t *msg, size_t len,
                         size_t *out_len);

/*
 * The fast path of frame_unpack_rpc() for the frames a relay forwards. Returns 0 when payload
 * is a reply with code OK, no error and a payload, or a push, and frame_unpack_rpc(payload,
 * len, lim) would accept the frame: *out says what the relay needs. The frame is checked at
 * the wire level (frame_wire_vouch()); a ServerMessage body with rules of its own (Play,
 * RoundEnd, Snapshot, Joined, a Result with an error...) is decoded alone, on the stack, for
 * them. Returns -EAGAIN for everything else (other bodies, error replies, unusual
 * encodings, invalid frames): decode those with frame_unpack_rpc(), which gives the verdict
 * and its reason. Allocates nothing for frames of the usual sizes; lim NULL means the defaults.
 */
int frame_scan_rpc(const uint8_t *payload, size_t len, const frame_limits_t *lim,
                   frame_rpc_scan_t *out);

/* Longest pushed ServerMessage whose verdict frame_scan_rpc_cached() remembers. */
#define FRAME_SCAN_CACHE_MAX 512

/*
 * The verdict on the last pushed ServerMessage frame_scan_rpc_cached() accepted: its bytes and
 * what checking them found. Zero it before the first use (len 0: empty); the caller owns it.
 */
typedef struct frame_scan_cache {
    frame_limits_t lim; /* the limits it was checked under */
    size_t len;         /* 0: empty */
    size_t cost;        /* its share of the unpack estimate (frame_wire_vouch) */
    uint32_t msg_body;
    bool msg_request_id;
    bool rpc_required_known; /* rpc_required is set (the first scan sets it) */
    uint64_t rpc_required;   /* RpcFrame's required fields, by index in its descriptor */
    uint8_t msg[FRAME_SCAN_CACHE_MAX];
} frame_scan_cache_t;

/*
 * frame_scan_rpc(), remembering in cache the pushed ServerMessage of the last push it accepted.
 * A table sends the same push (a Play, a Turn) to each of its players, one rpc frame each, and
 * checking that message (the wire vouch, the decode for its rules) is most of a scan's work: a
 * push carrying the same bytes under the same limits is not checked again, since every check
 * of it depends on those two alone. The rest of the frame (its ids, its envelope, the unpack
 * estimate of the whole frame) is checked every time. Same result and *out as frame_scan_rpc();
 * cache NULL is frame_scan_rpc().
 */
int frame_scan_rpc_cached(const uint8_t *payload, size_t len, const frame_limits_t *lim,
                          frame_scan_cache_t *cache, frame_rpc_scan_t *out);

/*
 * Appends one frame holding the serialized message msg with the varint field `field` = value
 * written in front of it (one reservation, two copies; field 0: msg alone). msg must not set
 * the field itself (a later occurrence wins over an earlier one: use frame_write_forward()
 * then). Returns 0,
 * -EMSGSIZE (above lim->max_frame; lim NULL means the defaults) or -ENOMEM; nothing is
 * written on failure. msg is not checked.
 */
int frame_write_prefixed(struct evbuffer *out, uint32_t field, uint64_t value, const uint8_t *msg,
                         size_t len, const frame_limits_t *lim);

#endif
