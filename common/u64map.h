/*
 * u64map -- a hash map from non-zero 64-bit keys to 64-bit values (open addressing, linear
 * probing, backward-shift deletion, so no tombstones pile up). Single-threaded: the owner
 * keeps it on one thread. Used for player -> desk, player -> link and similar indexes.
 */
#ifndef CROUPIER_U64MAP_H
#define CROUPIER_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct u64map u64map_t;

u64map_t *u64map_create(void);
void u64map_destroy(u64map_t *m); /* NULL is a no-op */
/* Sets key (non-zero) to val, replacing any previous value. */
void u64map_put(u64map_t *m, uint64_t key, uint64_t val);
/* Returns true and *val (may be NULL) when key is present. */
bool u64map_get(const u64map_t *m, uint64_t key, uint64_t *val);
/* Removes key; returns true if it was present. */
bool u64map_del(u64map_t *m, uint64_t key);
size_t u64map_size(const u64map_t *m);
/* Calls fn for every entry; fn must not change the map. */
void u64map_each(const u64map_t *m, void (*fn)(uint64_t key, uint64_t val, void *arg), void *arg);

#endif
