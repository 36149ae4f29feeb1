/*
 * game_admin.c -- admin tokens for POST /admin/drain; see game_admin.h.
 */
#include "game_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "token.h"

static token_secret_t admin_secret;

int game_admin_load(const char *secret_file)
{
    return token_secret_load(secret_file, &admin_secret);
}

int game_admin_auth(void *ctx, const char *token, char *who, size_t wholen, const char **reason)
{
    (void)ctx;
    uint64_t op = 0;
    token_result_t r =
        token_verify(&admin_secret, token, strlen(token), (int64_t)time(NULL), &op, NULL);
    if (r != TOKEN_OK) {
        *reason = r == TOKEN_EXPIRED ? "expired" : "invalid";
        return -1;
    }
    snprintf(who, wholen, "operator %" PRIu64, op);
    return 0;
}
