/*
 * gate_tls.c -- the gateway's TLS contexts (see gate_tls.h).
 */
#include "gate_tls.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "xmalloc.h"

struct gate_tls {
    char *cert_file, *key_file;
    SSL_CTX *ctx;
    unsigned generation;
    metrics_t *m_ok, *m_failed;
};

/* The last OpenSSL error as text (or what), into err; clears the error queue. */
static void gate_tls_err(char *err, size_t errlen, const char *what, const char *file)
{
    unsigned long e = ERR_peek_last_error();
    char buf[256] = "";
    if (e != 0)
        ERR_error_string_n(e, buf, sizeof buf);
    snprintf(err, errlen, "%s %s%s%s", what, file, buf[0] != '\0' ? ": " : "", buf);
    ERR_clear_error();
}

/* A server context from the two files, or NULL with err. */
static SSL_CTX *gate_tls_load(const char *cert, const char *key, char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        gate_tls_err(err, errlen, "SSL_CTX_new", "");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* No renegotiation, no compression; the server's cipher order. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS); /* idle connections hold no TLS buffers */
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        gate_tls_err(err, errlen, "certificate", cert);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        gate_tls_err(err, errlen, "private key", key);
        goto fail;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        gate_tls_err(err, errlen, "private key does not match the certificate:", key);
        goto fail;
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

int gate_tls_create(const char *cert_file, const char *key_file, metrics_registry_t *metrics,
                    gate_tls_t **out, char *err, size_t errlen)
{
    SSL_CTX *ctx = gate_tls_load(cert_file, key_file, err, errlen);
    if (ctx == NULL)
        return -EINVAL;
    gate_tls_t *t = xcalloc(1, sizeof *t);
    t->cert_file = xstrdup(cert_file);
    t->key_file = xstrdup(key_file);
    t->ctx = ctx;
    if (metrics != NULL) {
        t->m_ok = metrics_counter(metrics, "gate_tls_reloads_total", "result=\"ok\"",
                                  "Certificate reloads (SIGHUP)");
        t->m_failed = metrics_counter(metrics, "gate_tls_reloads_total", "result=\"failed\"",
                                      "Certificate reloads (SIGHUP)");
    }
    *out = t;
    return 0;
}

void gate_tls_destroy(gate_tls_t *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    free(t->cert_file);
    free(t->key_file);
    free(t);
}

int gate_tls_reload(gate_tls_t *t, char *err, size_t errlen)
{
    SSL_CTX *ctx = gate_tls_load(t->cert_file, t->key_file, err, errlen);
    if (ctx == NULL) {
        if (t->m_failed != NULL)
            metrics_add(t->m_failed, 1);
        return -EINVAL;
    }
    /* Connections made from the old context hold references to it: it lives on until the last
     * of them is freed. */
    SSL_CTX_free(t->ctx);
    t->ctx = ctx;
    t->generation++;
    if (t->m_ok != NULL)
        metrics_add(t->m_ok, 1);
    return 0;
}

struct ssl_st *gate_tls_new_ssl(gate_tls_t *t)
{
    return SSL_new(t->ctx);
}

unsigned gate_tls_generation(const gate_tls_t *t)
{
    return t->generation;
}
