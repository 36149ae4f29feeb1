/*
 * xmalloc -- allocation that never returns NULL.
 *
 * Out-of-memory is the one failure the project does not try to survive: these wrappers print
 * one line and abort(). Everything else (sockets, Redis, peers) returns errors to its caller.
 */
#ifndef CROUPIER_XMALLOC_H
#define CROUPIER_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
/* Like reallocarray(3): fails (aborts) on count * size overflow. */
void *xreallocarray(void *p, size_t count, size_t size);
char *xstrdup(const char *s);

#endif
