/*
 * match_json -- a match stage saved to and loaded from JSON (the director keeps it in Redis),
 * and a stage's settings read from an operator's JSON (docs/rules/match-halls.md lists them).
 *
 * Loading is strict: unknown fields, wrong types, numbers out of range and states that do not
 * hold together (a player at a table he is not seated at, a waiting player missing from the
 * queue, duplicate ids or draw numbers...) are refused with one sentence naming the field;
 * malformed input never crashes and never yields a stage. 64-bit random numbers (draw,
 * round_seed) are decimal strings, every other number a JSON integer.
 */
#ifndef CROUPIER_MATCH_JSON_H
#define CROUPIER_MATCH_JSON_H

#include <stddef.h>

#include "match.h"

/*
 * A stage's settings from a JSON object: "format" ("rising", "fixed", "swiss") and "seats" are
 * required, "advance" too for a rising stage; every other field defaults as
 * match_stage_config_default says. Returns 0 or -EINVAL with a sentence in err.
 */
int match_config_parse(const char *json, size_t len, match_stage_config_t *out, char *err,
                       size_t errlen);

/* The stage as JSON text (a compact object); the caller frees it with free(). */
char *match_stage_to_json(const match_stage_t *st);

/* A stage from match_stage_to_json's text. Returns 0 and *out (match_stage_destroy), or
 * -EINVAL with a sentence in err (nothing allocated is left). */
int match_stage_from_json(const char *json, size_t len, match_stage_t **out, char *err,
                          size_t errlen);

#endif
