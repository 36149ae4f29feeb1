/*
 * token -- the login token of the client protocol (contract for bots and clients).
 *
 * A token is printable ASCII:
 *
 *     v1.<player_id>.<expiry_unix>.<hmac>
 *
 * player_id: decimal, 1..2^64-1, no sign, no leading zero; expiry_unix: decimal unix seconds
 * after which the token is refused; hmac: 64 lowercase hex digits of
 * HMAC-SHA256(secret, "v1.<player_id>.<expiry_unix>") -- the token up to (not including) its
 * last '.'. The secret is the content of the --token-secret-file (a trailing newline is
 * ignored; at least 16 bytes).
 *
 * Verification parses strictly, recomputes the HMAC and compares it in constant time
 * (CRYPTO_memcmp), then checks the expiry: a token with a bad signature is TOKEN_INVALID even
 * when it is also expired, so an expired answer always means "a real token, too old".
 */
#ifndef CROUPIER_GATE_TOKEN_H
#define CROUPIER_GATE_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define TOKEN_SECRET_MIN 16
#define TOKEN_SECRET_MAX 4096
/* Longest token text: "v1." + 20 + "." + 20 + "." + 64. */
#define TOKEN_MAX_LEN 112

typedef enum {
    TOKEN_OK = 0,
    TOKEN_EXPIRED = 1, /* well-formed and correctly signed, but past its expiry */
    TOKEN_INVALID = 2, /* malformed, or the signature does not match */
} token_result_t;

typedef struct {
    uint8_t key[TOKEN_SECRET_MAX];
    size_t len;
} token_secret_t;

/* Reads the secret file (one trailing "\n" or "\r\n" dropped). Returns 0, -errno from open or
 * read, -EINVAL if shorter than TOKEN_SECRET_MIN or -EFBIG if longer than TOKEN_SECRET_MAX. */
int token_secret_load(const char *path, token_secret_t *out);
/* Sets the secret from memory (tests); same bounds, returns 0 or -EINVAL/-EFBIG. */
int token_secret_set(token_secret_t *s, const void *key, size_t len);

/* Writes the token for player (non-zero) expiring at expiry_unix into out (NUL-terminated).
 * Returns its length, or -EINVAL (player 0, expiry < 0) / -ENOSPC (cap too small; 113 bytes
 * always suffice). */
int token_mint(const token_secret_t *s, uint64_t player, int64_t expiry_unix, char *out,
               size_t cap);

/* Verifies len bytes of text at now_unix. On TOKEN_OK, *player and *expiry (may be NULL) are
 * set; on TOKEN_EXPIRED too (the token is genuine); never on TOKEN_INVALID. */
token_result_t token_verify(const token_secret_t *s, const char *text, size_t len, int64_t now_unix,
                            uint64_t *player, int64_t *expiry);

#endif
