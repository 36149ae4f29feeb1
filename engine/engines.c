#include "engines.h"

#include <string.h>

#include <bsd/string.h>

#include "gs.h"

/* Every engine's engine_ops_t, declared and listed from the build's game_engines list
 * (engine/process/meson.build generates engines_list.h): a game adds itself in its own
 * meson.build, never here. */
#define ENGINE(sym) extern const engine_ops_t sym;
#include "engines_list.h"
#undef ENGINE

static const engine_ops_t *const engines_table[] = {
#define ENGINE(sym) &sym,
#include "engines_list.h"
#undef ENGINE
};

#define ENGINES_N (sizeof engines_table / sizeof engines_table[0])

const engine_ops_t *engines_find(const char *name)
{
    for (size_t i = 0; i < ENGINES_N; i++)
        if (strcmp(engines_table[i]->name, name) == 0)
            return engines_table[i];
    return NULL;
}

size_t engines_count(void)
{
    return ENGINES_N;
}

const engine_ops_t *engines_at(size_t i)
{
    return i < ENGINES_N ? engines_table[i] : NULL;
}

const char *engines_names(void)
{
    static char names[512];
    if (names[0] == '\0') {
        for (size_t i = 0; i < ENGINES_N; i++) {
            if (i > 0)
                strlcat(names, "|", sizeof names);
            strlcat(names, engines_table[i]->name, sizeof names);
        }
    }
    return names;
}
