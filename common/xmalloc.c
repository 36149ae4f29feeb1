#include "xmalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void xmalloc_die(size_t n)
{
    fprintf(stderr, "{\"level\":\"fatal\",\"event\":\"out_of_memory\",\"bytes\":%zu}\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        xmalloc_die(n);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p == NULL)
        xmalloc_die(count * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        xmalloc_die(n);
    return q;
}

void *xreallocarray(void *p, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        xmalloc_die(SIZE_MAX);
    return xrealloc(p, count * size);
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}
