#include "u64map.h"

#include <stdlib.h>

#include "xmalloc.h"

typedef struct {
    uint64_t key; /* 0 = empty */
    uint64_t val;
} u64map_slot_t;

struct u64map {
    u64map_slot_t *slots;
    size_t cap; /* power of two */
    size_t size;
};

/* A 64-bit finaliser (from MurmurHash3) so sequential ids spread over the table. */
static size_t u64map_hash(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

u64map_t *u64map_create(void)
{
    u64map_t *m = xcalloc(1, sizeof *m);
    m->cap = 16;
    m->slots = xcalloc(m->cap, sizeof *m->slots);
    return m;
}

void u64map_destroy(u64map_t *m)
{
    if (m == NULL)
        return;
    free(m->slots);
    free(m);
}

static void u64map_grow(u64map_t *m)
{
    u64map_slot_t *old = m->slots;
    size_t ocap = m->cap;
    m->cap *= 2;
    m->slots = xcalloc(m->cap, sizeof *m->slots);
    m->size = 0;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].key != 0)
            u64map_put(m, old[i].key, old[i].val);
    free(old);
}

void u64map_put(u64map_t *m, uint64_t key, uint64_t val)
{
    if ((m->size + 1) * 4 > m->cap * 3)
        u64map_grow(m);
    size_t i = u64map_hash(key, m->cap);
    while (m->slots[i].key != 0 && m->slots[i].key != key)
        i = (i + 1) & (m->cap - 1);
    if (m->slots[i].key == 0)
        m->size++;
    m->slots[i].key = key;
    m->slots[i].val = val;
}

bool u64map_get(const u64map_t *m, uint64_t key, uint64_t *val)
{
    if (key == 0)
        return false;
    size_t i = u64map_hash(key, m->cap);
    while (m->slots[i].key != 0) {
        if (m->slots[i].key == key) {
            if (val != NULL)
                *val = m->slots[i].val;
            return true;
        }
        i = (i + 1) & (m->cap - 1);
    }
    return false;
}

/*
 * Backward-shift deletion: after emptying slot i, later entries of the same probe run are
 * moved back when their home position allows it, so lookups never need tombstones.
 */
bool u64map_del(u64map_t *m, uint64_t key)
{
    if (key == 0)
        return false;
    size_t mask = m->cap - 1;
    size_t i = u64map_hash(key, m->cap);
    while (m->slots[i].key != key) {
        if (m->slots[i].key == 0)
            return false;
        i = (i + 1) & mask;
    }
    size_t j = i;
    for (;;) {
        m->slots[i].key = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (m->slots[j].key == 0) {
                m->size--;
                return true;
            }
            size_t home = u64map_hash(m->slots[j].key, m->cap);
            /* Move j back to i unless its home lies cyclically in (i, j]. */
            bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays)
                break;
        }
        m->slots[i] = m->slots[j];
        i = j;
    }
}

size_t u64map_size(const u64map_t *m)
{
    return m->size;
}

void u64map_each(const u64map_t *m, void (*fn)(uint64_t key, uint64_t val, void *arg), void *arg)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != 0)
            fn(m->slots[i].key, m->slots[i].val, arg);
}
