/*
 * game_admin -- the operator token of croupier-game's POST /admin/drain (docs/ops.md).
 *
 * An admin token has the format of a player token (common/token.h: "v1.<n>.<expiry>.<hmac>",
 * HMAC-SHA256), signed with the admin secret -- its own file (--admin-secret-file), never the
 * players' token secret, so no player token is ever an admin token. <n> is the operator's
 * number (croupier-ctl --operator), written to the audit line; croupier-ctl mints tokens that
 * expire after a minute.
 */
#ifndef CROUPIER_GAME_ADMIN_H
#define CROUPIER_GAME_ADMIN_H

#include <stddef.h>

/* Loads the secret (token_secret_load rules: >= 16 bytes). Returns 0 or a negative errno. */
int game_admin_load(const char *secret_file);
/* drain_config_t.admin_auth: 0 and "operator <n>" in who for a valid unexpired token, else -1
 * with reason "invalid" or "expired". Thread-safe after game_admin_load. */
int game_admin_auth(void *ctx, const char *token, char *who, size_t wholen, const char **reason);

#endif
