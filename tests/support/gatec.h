/*
 * gatec -- a blocking client.proto client for tests and benchmarks: it plays a player towards
 * croupier-gate over a real TCP connection on loopback.
 */
#ifndef CROUPIER_TEST_GATEC_H
#define CROUPIER_TEST_GATEC_H

#include <stdbool.h>
#include <stdint.h>

#include "frame.h"

typedef struct gatec gatec_t;

/* Connects (no login). NULL on failure (message on stderr). */
gatec_t *gatec_connect(const char *host, int port, int timeout_ms);
/* Closes the socket (a normal close) and frees. NULL is a no-op. */
void gatec_close(gatec_t *c);
int gatec_fd(const gatec_t *c);

/* Sends a message; 0 or a negative errno. */
int gatec_send(gatec_t *c, const Croupier__ClientMessage *m);
int gatec_send_raw(gatec_t *c, const void *buf, size_t len);

/* The next message received within timeout_ms (queued ones first); NULL on timeout, EOF or
 * error. Free with frame_free_server(). */
Croupier__ServerMessage *gatec_recv(gatec_t *c, int timeout_ms);
/* Receives until the answer to request_id arrives (others are queued for gatec_next_event). */
Croupier__ServerMessage *gatec_wait_reply(gatec_t *c, uint64_t request_id, int timeout_ms);
/* The next message that is not a reply (request_id 0) or matches body (0 = any push). */
Croupier__ServerMessage *gatec_next_event(gatec_t *c, int body_case, int timeout_ms);

/* Reads until EOF within timeout_ms. Returns 0 on a clean EOF, -ECONNRESET if the peer reset
 * the connection, -ETIMEDOUT. Frames read meanwhile are queued. */
int gatec_wait_eof(gatec_t *c, int timeout_ms);
bool gatec_eof(const gatec_t *c);
/* errno of the last failed read (ECONNRESET...), 0 if none. */
int gatec_read_error(const gatec_t *c);

/* One-call helpers: send and wait for the answer (NULL on timeout). rid is the request id. */
Croupier__ServerMessage *gatec_login(gatec_t *c, uint64_t rid, const char *token, int timeout_ms);
Croupier__ServerMessage *gatec_join(gatec_t *c, uint64_t rid, int engine, const char *game,
                                    int64_t stake, int timeout_ms);
Croupier__ServerMessage *gatec_action(gatec_t *c, uint64_t rid, int timeout_ms);
Croupier__ServerMessage *gatec_resume(gatec_t *c, uint64_t rid, int timeout_ms);
Croupier__ServerMessage *gatec_leave(gatec_t *c, uint64_t rid, int timeout_ms);
Croupier__ServerMessage *gatec_ping(gatec_t *c, uint64_t rid, uint64_t nonce, int timeout_ms);

/* ListTables for engine; engine 0 (ENGINE_UNSPECIFIED: not sent), game NULL and stake 0 mean
 * no filter. */
Croupier__ServerMessage *gatec_list_tables(gatec_t *c, uint64_t rid, int engine, const char *game,
                                           int64_t stake, int timeout_ms);

/* The error code of an answer: Result.error.code, Error.code, or 0 (OK / other bodies). */
int gatec_code(const Croupier__ServerMessage *m);

#endif
