/*
 * gate_tls -- TLS for croupier-gate's client listeners (docs/gateway.md "TLS"): one OpenSSL
 * server context built from a certificate chain and a private key in PEM files, TLS 1.2 or
 * later, used by both the TCP and the WebSocket listener (through libevent's
 * bufferevent_openssl).
 *
 * gate_tls_reload() (croupier-gate runs it on SIGHUP) reads both files again into a new context
 * and swaps it in only when the certificate and key load and match: new connections use the new
 * certificate, connections already open keep theirs (each SSL object holds a reference to the
 * context it was made from), so nothing is dropped. A failed reload keeps the old context.
 *
 * Used on the gate's event loop only.
 */
#ifndef CROUPIER_GATE_TLS_H
#define CROUPIER_GATE_TLS_H

#include <stddef.h>

#include "metrics.h"

typedef struct gate_tls gate_tls_t;
struct ssl_st;

/*
 * Loads cert_file (PEM chain, leaf first) and key_file (PEM private key). Returns 0 and *out,
 * or -EINVAL with a reason in err (a file that does not load, a key that does not match).
 * metrics may be NULL (else gate_tls_reloads_total{result} is counted).
 */
int gate_tls_create(const char *cert_file, const char *key_file, metrics_registry_t *metrics,
                    gate_tls_t **out, char *err, size_t errlen);
void gate_tls_destroy(gate_tls_t *t);

/* Reads the files again (see above). Returns 0, or -EINVAL with err filled and nothing changed. */
int gate_tls_reload(gate_tls_t *t, char *err, size_t errlen);

/* A new server-side SSL for one connection, from the current context; NULL if OpenSSL fails. */
struct ssl_st *gate_tls_new_ssl(gate_tls_t *t);

/* How many reloads succeeded (the first load not counted). */
unsigned gate_tls_generation(const gate_tls_t *t);

#endif
