/*
 * engines -- the table of engines croupier-game can run (--engine NAME).
 */
#ifndef CROUPIER_ENGINES_H
#define CROUPIER_ENGINES_H

#include "gs.h"

/* The engine called name, or NULL. */
const engine_ops_t *engines_find(const char *name);
/* "test|persistent|holdem|traditional|..." for messages (the engines built in). */
const char *engines_names(void);
/* The engines built in, in the build's order. */
size_t engines_count(void);
const engine_ops_t *engines_at(size_t i);

#endif
