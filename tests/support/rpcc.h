/*
 * rpcc -- a blocking rpc-link client for tests: it plays a gateway towards croupier-game
 * (hello, player requests, replies and pushes) over a real TCP connection on loopback.
 */
#ifndef CROUPIER_TEST_RPCC_H
#define CROUPIER_TEST_RPCC_H

#include <stdbool.h>
#include <stdint.h>

#include "frame.h"

typedef struct rpcc rpcc_t;

/* Connects and completes the hello as a gateway of its own (a gate id no other connection of
 * this process uses); NULL on failure (message on stderr). */
rpcc_t *rpcc_connect(const char *host, int port, int timeout_ms);
/* The same with the hello's gate id given: connections with one gate id are one gateway's links
 * (a newer one replaces an older one, as a gateway's reconnect does). */
rpcc_t *rpcc_connect_as(const char *host, int port, const char *gate_id, int timeout_ms);
/* rpcc_connect_as() of a gateway whose hello says it takes pushes with RpcFrame.push_to (one
 * frame for several of its players, docs/protocol.md "One push, many players"). */
rpcc_t *rpcc_connect_push_to(const char *host, int port, const char *gate_id, int timeout_ms);
void rpcc_close(rpcc_t *c);

/* Sends a frame (request id, player and deadline set by the caller). 0 or negative errno. */
int rpcc_send(rpcc_t *c, const Croupier__RpcFrame *f);
/* Sends raw bytes (for malformed-input tests). */
int rpcc_send_raw(rpcc_t *c, const void *buf, size_t len);

/* Receives the next frame within timeout_ms; NULL on timeout, EOF or error. Free with
 * frame_free_rpc(). */
Croupier__RpcFrame *rpcc_recv(rpcc_t *c, int timeout_ms);
/* Receives frames until a reply with this request id arrives (other frames are kept in order
 * for rpcc_next_push); NULL on timeout. */
Croupier__RpcFrame *rpcc_wait_reply(rpcc_t *c, uint64_t request_id, int timeout_ms);
/* The next pushed/notice frame (push, desk_closing, moved) received so far or within
 * timeout_ms; NULL on timeout. */
Croupier__RpcFrame *rpcc_next_event(rpcc_t *c, int timeout_ms);
/* Whether the peer closed the connection (EOF seen). */
bool rpcc_closed(const rpcc_t *c);

/* Helpers that build and send one player request; return 0 or negative errno.
 * deadline_ms: absolute wall-clock ms, 0 = now + 5 s. */
/* A Join naming the traditional engine (the built-in engines' tests). */
int rpcc_join(rpcc_t *c, uint64_t rid, uint64_t player, const char *game, int64_t stake,
              int64_t deadline_ms);
/* A Join naming any engine: CROUPIER__ENGINE__ENGINE_GAME for a game on the table kit
 * (docs/writing-a-game.md §4, "Identity and settings"). -EINVAL for an engine the protocol does
 * not define (nothing is sent). */
int rpcc_join_engine(rpcc_t *c, uint64_t rid, uint64_t player, Croupier__Engine engine,
                     const char *game, int64_t stake, int64_t deadline_ms);
/* An Action of the shedding games: SHEDDING_PASS (the test and traditional engines). */
int rpcc_action(rpcc_t *c, uint64_t rid, uint64_t player, int64_t deadline_ms);
/* An Action of a kit game: Action.game = GameAction{body}, body being the game's own action
 * message already serialized (len bytes; the bytes are borrowed for the call). Bodies the codec
 * must refuse may be sent on purpose; only a NULL body with len > 0 is -EINVAL. */
int rpcc_game_action(rpcc_t *c, uint64_t rid, uint64_t player, const void *body, size_t len,
                     int64_t deadline_ms);
/* The same with the game's action message packed here (at most FRAME_GAME_BODY_MAX bytes, else
 * -EMSGSIZE and nothing is sent). */
int rpcc_game_action_msg(rpcc_t *c, uint64_t rid, uint64_t player, const ProtobufCMessage *m,
                         int64_t deadline_ms);
int rpcc_leave(rpcc_t *c, uint64_t rid, uint64_t player);
int rpcc_resume(rpcc_t *c, uint64_t rid, uint64_t player);

/* Wall clock in unix ms. */
int64_t rpcc_wall_ms(void);

#endif
