#include "engines.h"

#include <string.h>

#include "bj_engine.h"
#include "holdem_engine.h"
#include "testgame.h"
#include "trad_engine.h"

/* Engines add themselves here as they are wired into the game server. */
static const engine_ops_t *const engines_table[] = {
    &testgame_engine_ops,
    &bj_engine_ops,
    &holdem_engine_ops,
    &trad_engine_ops,
};

const engine_ops_t *engines_find(const char *name)
{
    for (size_t i = 0; i < sizeof engines_table / sizeof engines_table[0]; i++)
        if (strcmp(engines_table[i]->name, name) == 0)
            return engines_table[i];
    return NULL;
}

const char *engines_names(void)
{
    static char names[128];
    if (names[0] == '\0') {
        for (size_t i = 0; i < sizeof engines_table / sizeof engines_table[0]; i++) {
            if (i > 0)
                strcat(names, "|");
            strcat(names, engines_table[i]->name);
        }
    }
    return names;
}
