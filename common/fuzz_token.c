/*
 * fuzz_token -- libFuzzer driver for the login-token parser (common/token.h): a token is the
 * first untrusted text a client sends. Every input must be classified without a crash, and an
 * accepted token must be exactly what token_mint() writes for its player and expiry (so no
 * second spelling of a token verifies).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static token_secret_t s;
    if (s.len == 0)
        token_secret_set(&s, "fuzz-token-secret-0123456789", 28);
    uint64_t player = 0;
    int64_t expiry = 0;
    token_result_t r = token_verify(&s, (const char *)data, size, 1700000000, &player, &expiry);
    if (r == TOKEN_INVALID)
        return 0;
    char again[TOKEN_MAX_LEN + 1];
    int n = token_mint(&s, player, expiry, again, sizeof again);
    if (n < 0 || (size_t)n != size || memcmp(again, data, size) != 0)
        abort();
    return 0;
}
