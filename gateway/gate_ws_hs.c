/*
 * gate_ws_hs.c -- the WebSocket opening handshake (see gate_ws_hs.h for what is accepted).
 * The request is read line by line from a bounded buffer; nothing is copied but the key.
 */
#include "gate_ws_hs.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

/* RFC 6455 section 1.3: appended to the key before hashing. */
static const char gate_ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

static gate_ws_hs_status_t gate_ws_hs_refuse(gate_ws_hs_t *out, gate_ws_hs_status_t st,
                                             const char *why)
{
    out->status = st;
    out->why = why;
    return st;
}

/* RFC 9110 tchar. */
static bool gate_ws_tchar(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
        return true;
    return ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* Whether the comma-separated list v[0..n) holds token tok (case-insensitive, OWS trimmed). */
static bool gate_ws_list_has(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok), i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && v[j] != ',')
            j++;
        size_t a = i, b = j;
        while (a < b && (v[a] == ' ' || v[a] == '\t'))
            a++;
        while (b > a && (v[b - 1] == ' ' || v[b - 1] == '\t'))
            b--;
        if (b - a == tl && strncasecmp(v + a, tok, tl) == 0)
            return true;
        i = j + 1;
    }
    return false;
}

/* Whether v[0..n) is exactly one of the comma-separated origins (OWS around each ignored). */
static bool gate_ws_origin_allowed(const char *origins, const char *v, size_t n)
{
    const char *p = origins;
    while (*p != '\0') {
        const char *e = strchr(p, ',');
        size_t l = e != NULL ? (size_t)(e - p) : strlen(p);
        const char *a = p, *b = p + l;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        /* Origins are compared exactly (RFC 6454: scheme and host are already lowercase as
         * browsers serialize them). */
        if ((size_t)(b - a) == n && n > 0 && memcmp(a, v, n) == 0)
            return true;
        if (e == NULL)
            break;
        p = e + 1;
    }
    return false;
}

/* Whether key[0..n) is base64 of exactly 16 bytes: 22 base64 characters and "==", with the
 * unused low bits of the last character zero (a canonical encoding). */
static bool gate_ws_key_valid(const char *key, size_t n)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n != 24 || key[22] != '=' || key[23] != '=')
        return false;
    for (size_t i = 0; i < 22; i++)
        if (key[i] == '\0' || strchr(b64, key[i]) == NULL)
            return false;
    /* 16 bytes = 128 bits: the 22nd character carries 2 bits, its low 4 are padding. */
    return ((strchr(b64, key[21]) - b64) & 0x0f) == 0;
}

gate_ws_hs_status_t gate_ws_hs_parse(const char *buf, size_t len, const gate_ws_hs_policy_t *pol,
                                     gate_ws_hs_t *out)
{
    memset(out, 0, sizeof *out);
    /* The end of the headers first: nothing is decided on a partial request, except that one
     * which cannot end within the cap, or holds a byte no request may hold. */
    size_t end = 0;
    for (size_t i = 0; i + 3 < len && i + 4 <= GATE_WS_HS_MAX; i++) {
        if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
            end = i + 4;
            break;
        }
    }
    if (end == 0) {
        if (len >= GATE_WS_HS_MAX)
            return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "request headers too long");
        if (memchr(buf, '\0', len) != NULL)
            return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "NUL in the request");
        out->status = GATE_WS_HS_NEED_MORE;
        return GATE_WS_HS_NEED_MORE;
    }
    out->consumed = end;

    /* Request line: GET SP target SP HTTP/1.1 CRLF. */
    const char *p = buf, *lim = buf + end - 2; /* lim: the final CRLF */
    const char *eol = memchr(p, '\r', (size_t)(lim - p));
    if (eol == NULL || eol[1] != '\n')
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "bad request line");
    size_t rl = (size_t)(eol - p);
    if (rl < 4 || memcmp(p, "GET ", 4) != 0)
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "method is not GET");
    const char *target = p + 4;
    const char *sp = memchr(target, ' ', (size_t)(eol - target));
    if (sp == NULL || sp == target || (size_t)(eol - sp) != 9 || memcmp(sp, " HTTP/1.1", 9) != 0)
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "bad request line (HTTP/1.1 expected)");
    for (const char *t = target; t < sp; t++)
        if ((unsigned char)*t <= 0x20 || (unsigned char)*t >= 0x7f)
            return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "bad request target");
    if (*target != '/')
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "request target is not a path");
    const char *q = memchr(target, '?', (size_t)(sp - target));
    size_t path_len = (size_t)((q != NULL ? q : sp) - target);

    /* Header lines. */
    bool host = false, upgrade = false, connection = false, version = false, version_ok = false;
    const char *key = NULL, *origin = NULL;
    size_t key_len = 0, origin_len = 0;
    int nheaders = 0;
    p = eol + 2;
    while (p < lim) {
        eol = memchr(p, '\r', (size_t)(lim + 2 - p));
        if (eol == NULL || eol[1] != '\n')
            return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "bare CR in a header");
        if (++nheaders > GATE_WS_HS_MAX_HEADERS)
            return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "too many headers");
        const char *colon = p;
        while (colon < eol && gate_ws_tchar((unsigned char)*colon))
            colon++;
        if (colon == p || colon == eol || *colon != ':')
            return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "bad header line");
        size_t nl = (size_t)(colon - p);
        const char *v = colon + 1, *ve = eol;
        for (const char *t = v; t < ve; t++) {
            unsigned char ch = (unsigned char)*t;
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "control byte in a header value");
        }
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        size_t vl = (size_t)(ve - v);
#define GATE_WS_IS(name) (nl == sizeof(name) - 1 && strncasecmp(p, name, nl) == 0)
        if (GATE_WS_IS("Host")) {
            if (host)
                return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "Host repeated");
            host = true;
        } else if (GATE_WS_IS("Upgrade")) {
            upgrade = upgrade || gate_ws_list_has(v, vl, "websocket");
        } else if (GATE_WS_IS("Connection")) {
            connection = connection || gate_ws_list_has(v, vl, "upgrade");
        } else if (GATE_WS_IS("Sec-WebSocket-Version")) {
            if (version)
                return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "Sec-WebSocket-Version repeated");
            version = true;
            version_ok = vl == 2 && memcmp(v, "13", 2) == 0;
        } else if (GATE_WS_IS("Sec-WebSocket-Key")) {
            if (key != NULL)
                return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "Sec-WebSocket-Key repeated");
            key = v;
            key_len = vl;
        } else if (GATE_WS_IS("Origin")) {
            if (origin != NULL)
                return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "Origin repeated");
            origin = v;
            origin_len = vl;
        } else if (GATE_WS_IS("Content-Length")) {
            if (vl != 1 || *v != '0')
                return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "a body is not allowed");
        } else if (GATE_WS_IS("Transfer-Encoding")) {
            return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "a body is not allowed");
        }
#undef GATE_WS_IS
        p = eol + 2;
    }
    if (!host)
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "no Host header");
    if (!upgrade)
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "Upgrade: websocket missing");
    if (!connection)
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "Connection: Upgrade missing");
    if (!version_ok) {
        out->version_refused = true;
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "Sec-WebSocket-Version 13 required");
    }
    if (key == NULL || !gate_ws_key_valid(key, key_len))
        return gate_ws_hs_refuse(out, GATE_WS_HS_BAD, "Sec-WebSocket-Key is not 16 bytes base64");
    const char *want = pol != NULL && pol->path != NULL ? pol->path : "/";
    if (path_len != strlen(want) || memcmp(target, want, path_len) != 0)
        return gate_ws_hs_refuse(out, GATE_WS_HS_NOT_FOUND, "no WebSocket at this path");
    if (pol != NULL && pol->origins != NULL && pol->origins[0] != '\0' && origin != NULL &&
        !gate_ws_origin_allowed(pol->origins, origin, origin_len))
        return gate_ws_hs_refuse(out, GATE_WS_HS_FORBIDDEN, "Origin not allowed");
    memcpy(out->key, key, 24);
    out->key[24] = '\0';
    out->status = GATE_WS_HS_OK;
    return GATE_WS_HS_OK;
}

int gate_ws_hs_accept(const char *key, char out[GATE_WS_ACCEPT_LEN + 1])
{
    char in[64];
    unsigned char md[SHA_DIGEST_LENGTH];
    int n = snprintf(in, sizeof in, "%s%s", key, gate_ws_guid);
    if (n < 0 || (size_t)n >= sizeof in)
        return -EIO;
    if (EVP_Digest(in, (size_t)n, md, NULL, EVP_sha1(), NULL) != 1)
        return -EIO;
    if (EVP_EncodeBlock((unsigned char *)out, md, SHA_DIGEST_LENGTH) != GATE_WS_ACCEPT_LEN)
        return -EIO;
    out[GATE_WS_ACCEPT_LEN] = '\0';
    return 0;
}

int gate_ws_hs_response(const gate_ws_hs_t *hs, char *buf, size_t cap)
{
    int n;
    if (hs->status == GATE_WS_HS_OK) {
        char acc[GATE_WS_ACCEPT_LEN + 1];
        if (gate_ws_hs_accept(hs->key, acc) != 0)
            return -EIO;
        n = snprintf(buf, cap,
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                     acc);
    } else {
        const char *text = hs->status == GATE_WS_HS_FORBIDDEN   ? "Forbidden"
                           : hs->status == GATE_WS_HS_NOT_FOUND ? "Not Found"
                                                                : "Bad Request";
        const char *why = hs->why != NULL ? hs->why : text;
        n = snprintf(buf, cap,
                     "HTTP/1.1 %d %s\r\n%sContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s\n",
                     (int)hs->status, text,
                     hs->version_refused ? "Sec-WebSocket-Version: 13\r\n" : "", strlen(why) + 1,
                     why);
    }
    if (n < 0 || (size_t)n >= cap)
        return -ENOSPC;
    return n;
}
