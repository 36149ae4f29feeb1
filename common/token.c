/*
 * token.c -- HMAC-SHA256 login tokens; see token.h for the format.
 */
#include "token.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

int token_secret_set(token_secret_t *s, const void *key, size_t len)
{
    if (len < TOKEN_SECRET_MIN)
        return -EINVAL;
    if (len > TOKEN_SECRET_MAX)
        return -EFBIG;
    memcpy(s->key, key, len);
    s->len = len;
    return 0;
}

int token_secret_load(const char *path, token_secret_t *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    uint8_t buf[TOKEN_SECRET_MAX + 3];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof buf - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = -errno;
            close(fd);
            return e;
        }
        if (n == 0 || len + (size_t)n == sizeof buf) {
            len += (size_t)n;
            break;
        }
        len += (size_t)n;
    }
    close(fd);
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    int rc = token_secret_set(out, buf, len);
    memset(buf, 0, sizeof buf);
    return rc;
}

/* HMAC-SHA256 of msg under the secret into mac[32]. */
static bool token_hmac(const token_secret_t *s, const char *msg, size_t len, uint8_t mac[32])
{
    unsigned int maclen = 32;
    return HMAC(EVP_sha256(), s->key, (int)s->len, (const unsigned char *)msg, len, mac, &maclen) !=
               NULL &&
           maclen == 32;
}

int token_mint(const token_secret_t *s, uint64_t player, int64_t expiry_unix, char *out, size_t cap)
{
    if (player == 0 || expiry_unix < 0)
        return -EINVAL;
    char body[64];
    int blen = snprintf(body, sizeof body, "v1.%" PRIu64 ".%" PRId64, player, expiry_unix);
    uint8_t mac[32];
    if (!token_hmac(s, body, (size_t)blen, mac))
        return -EINVAL;
    size_t need = (size_t)blen + 1 + 64 + 1;
    if (cap < need)
        return -ENOSPC;
    memcpy(out, body, (size_t)blen);
    out[blen] = '.';
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[blen + 1 + 2 * i] = hex[mac[i] >> 4];
        out[blen + 2 + 2 * i] = hex[mac[i] & 15];
    }
    out[need - 1] = '\0';
    return (int)(need - 1);
}

/* Parses a canonical decimal (no sign, no leading zero unless "0") of p[0..len). */
static bool token_parse_dec(const char *p, size_t len, uint64_t *out)
{
    if (len == 0 || len > 20 || (len > 1 && p[0] == '0'))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static int token_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/*
 * Strict parse: exactly four dot-separated parts, "v1", two canonical decimals, 64 lowercase hex
 * digits. The HMAC is compared with CRYPTO_memcmp over all 32 bytes whatever they hold.
 */
token_result_t token_verify(const token_secret_t *s, const char *text, size_t len, int64_t now_unix,
                            uint64_t *player, int64_t *expiry)
{
    if (text == NULL || len < 3 + 1 + 1 + 1 + 64 + 1 || len > TOKEN_MAX_LEN ||
        memcmp(text, "v1.", 3) != 0)
        return TOKEN_INVALID;
    const char *pid = text + 3;
    const char *dot1 = memchr(pid, '.', len - 3);
    if (dot1 == NULL)
        return TOKEN_INVALID;
    const char *exp = dot1 + 1;
    const char *dot2 = memchr(exp, '.', (size_t)(text + len - exp));
    if (dot2 == NULL || (size_t)(text + len - (dot2 + 1)) != 64)
        return TOKEN_INVALID;
    uint64_t p, e;
    if (!token_parse_dec(pid, (size_t)(dot1 - pid), &p) || p == 0 ||
        !token_parse_dec(exp, (size_t)(dot2 - exp), &e) || e > (uint64_t)INT64_MAX)
        return TOKEN_INVALID;
    uint8_t given[32];
    const char *hx = dot2 + 1;
    for (int i = 0; i < 32; i++) {
        int hi = token_hexval(hx[2 * i]), lo = token_hexval(hx[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return TOKEN_INVALID;
        given[i] = (uint8_t)(hi << 4 | lo);
    }
    uint8_t mac[32];
    if (!token_hmac(s, text, (size_t)(dot2 - text), mac))
        return TOKEN_INVALID;
    if (CRYPTO_memcmp(mac, given, sizeof mac) != 0)
        return TOKEN_INVALID;
    if (player != NULL)
        *player = p;
    if (expiry != NULL)
        *expiry = (int64_t)e;
    return now_unix > (int64_t)e ? TOKEN_EXPIRED : TOKEN_OK;
}
