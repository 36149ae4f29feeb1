/*
 * test_proto_samples -- one valid sample of every message kind of the croupier protocols,
 * shared by tests/unit/test_proto.c (round trips) and fuzz/fuzz_corpus_gen.c (seed corpora).
 *
 * Each function builds its samples on its own stack, one at a time, and calls cb with a name
 * ("login", "holdem_raise"...) and the message; the message lives only during the call.
 */
#ifndef CROUPIER_TEST_PROTO_SAMPLES_H
#define CROUPIER_TEST_PROTO_SAMPLES_H

#include "frame.h"

typedef void (*samples_client_cb)(void *arg, const char *name, const Croupier__ClientMessage *m);
typedef void (*samples_server_cb)(void *arg, const char *name, const Croupier__ServerMessage *m);
typedef void (*samples_rpc_cb)(void *arg, const char *name, const Croupier__RpcFrame *m);

/* Return the number of samples given to cb. */
int samples_client(samples_client_cb cb, void *arg);
int samples_server(samples_server_cb cb, void *arg);
int samples_rpc(samples_rpc_cb cb, void *arg);

#endif
