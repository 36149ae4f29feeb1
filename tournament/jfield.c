/* jfield: see jfield.h. */
#include "jfield.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int jfield_fail(jfield_err_t *e, const char *fmt, ...)
{
    if (e->err != NULL && e->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->err, e->errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

int jfield_only_known(jfield_err_t *e, json_t *o, const char *where, const char *const *known)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        bool found = false;
        for (size_t i = 0; known[i] != NULL && !found; i++)
            found = strcmp(known[i], key) == 0;
        if (!found)
            return jfield_fail(e, "%s%s: unknown field", where, key);
    }
    return 0;
}

int jfield_int(jfield_err_t *e, json_t *o, const char *where, const char *key, bool required,
               int64_t def, int64_t lo, int64_t hi, int64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL) {
        if (required)
            return jfield_fail(e, "%s%s: missing", where, key);
        *out = def;
        return 0;
    }
    if (!json_is_integer(v))
        return jfield_fail(e, "%s%s: must be a whole number", where, key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return jfield_fail(e, "%s%s: %lld is outside %lld..%lld", where, key, (long long)x,
                           (long long)lo, (long long)hi);
    *out = x;
    return 0;
}

int jfield_bool(jfield_err_t *e, json_t *o, const char *where, const char *key, bool def,
                bool *out)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v))
        return jfield_fail(e, "%s%s: must be true or false", where, key);
    *out = json_is_true(v);
    return 0;
}
