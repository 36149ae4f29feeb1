/*
 * engines -- the table of engines croupier-game can run (--engine NAME).
 */
#ifndef CROUPIER_ENGINES_H
#define CROUPIER_ENGINES_H

#include "gs.h"

/* The engine called name, or NULL. */
const engine_ops_t *engines_find(const char *name);
/* "traditional|holdem|persistent|test" for messages (the engines built in). */
const char *engines_names(void);

#endif
