/*
 * jfield -- reading the fields of an operator's JSON (a tournament's structure, a match stage)
 * with jansson, strictly: every refusal is -EINVAL with one line naming the field, written to
 * err (when errlen > 0). Shared by tour_structure.c and match_json.c.
 */
#ifndef CROUPIER_JFIELD_H
#define CROUPIER_JFIELD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *err;     /* where the refusal's line goes (NULL or errlen 0: nowhere) */
    size_t errlen;
} jfield_err_t;

/* Writes the formatted line to e->err and returns -EINVAL. */
int jfield_fail(jfield_err_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Refuses any key of o not in the NULL-terminated list `known` ("<where><key>: unknown field"). */
int jfield_only_known(jfield_err_t *e, json_t *o, const char *where, const char *const *known);
/* An integer field in [lo, hi]; absent: *out = def unless required (then refused). */
int jfield_int(jfield_err_t *e, json_t *o, const char *where, const char *key, bool required,
               int64_t def, int64_t lo, int64_t hi, int64_t *out);
/* A boolean field; absent: *out = def. */
int jfield_bool(jfield_err_t *e, json_t *o, const char *where, const char *key, bool def,
                bool *out);

#endif
