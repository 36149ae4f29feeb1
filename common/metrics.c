#include "metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

typedef enum { METRICS_COUNTER, METRICS_GAUGE, METRICS_HISTOGRAM } metrics_type_t;

/*
 * Doubles are kept as their bit pattern in an atomic 64-bit word; adds are compare-and-swap
 * loops. This keeps every update lock-free without assuming atomic<double> support.
 */
struct metrics {
    struct metrics *_next; /* next series of the same family */
    char *labels;
    _Atomic uint64_t value; /* counter/gauge value, histogram sum (double bits) */
    _Atomic uint64_t count; /* histogram observation count */
    _Atomic uint64_t *buckets; /* histogram: nbounds cumulative-at-render counts */
    const double *bounds;
    size_t nbounds;
};

typedef struct metrics_family {
    struct metrics_family *_next;
    char *name;
    char *help;
    metrics_type_t type;
    double *bounds;
    size_t nbounds;
    metrics_t *series, **series_tail;
} metrics_family_t;

struct metrics_registry {
    pthread_mutex_t mu;
    metrics_family_t *families, **families_tail;
};

const double metrics_latency_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                         0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                         1,      2.5,     5,      10};
const size_t metrics_latency_nbounds = sizeof metrics_latency_bounds / sizeof metrics_latency_bounds[0];

static double bits_to_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static uint64_t double_to_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

metrics_registry_t *metrics_create(void)
{
    metrics_registry_t *reg = xcalloc(1, sizeof *reg);
    pthread_mutex_init(&reg->mu, NULL);
    reg->families_tail = &reg->families;
    return reg;
}

void metrics_destroy(metrics_registry_t *reg)
{
    if (reg == NULL)
        return;
    metrics_family_t *f = reg->families;
    while (f != NULL) {
        metrics_family_t *fn = f->_next;
        metrics_t *s = f->series;
        while (s != NULL) {
            metrics_t *sn = s->_next;
            free(s->labels);
            free(s->buckets);
            free(s);
            s = sn;
        }
        free(f->name);
        free(f->help);
        free(f->bounds);
        free(f);
        f = fn;
    }
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

/* Finds or creates the series; the registry mutex is held by the caller. */
static metrics_t *metrics_lookup(metrics_registry_t *reg, metrics_type_t type, const char *name,
                                 const char *labels, const char *help, const double *bounds,
                                 size_t nbounds)
{
    if (labels == NULL)
        labels = "";
    metrics_family_t *f = reg->families;
    while (f != NULL && strcmp(f->name, name) != 0)
        f = f->_next;
    if (f == NULL) {
        f = xcalloc(1, sizeof *f);
        f->name = xstrdup(name);
        f->help = xstrdup(help != NULL ? help : name);
        f->type = type;
        if (type == METRICS_HISTOGRAM) {
            f->bounds = xreallocarray(NULL, nbounds ? nbounds : 1, sizeof(double));
            memcpy(f->bounds, bounds, nbounds * sizeof(double));
            f->nbounds = nbounds;
        }
        f->series_tail = &f->series;
        *reg->families_tail = f;
        reg->families_tail = &f->_next;
    } else if (f->type != type) {
        return NULL;
    }
    metrics_t *s = f->series;
    while (s != NULL && strcmp(s->labels, labels) != 0)
        s = s->_next;
    if (s == NULL) {
        s = xcalloc(1, sizeof *s);
        s->labels = xstrdup(labels);
        atomic_init(&s->value, double_to_bits(0.0));
        if (type == METRICS_HISTOGRAM) {
            s->bounds = f->bounds;
            s->nbounds = f->nbounds;
            s->buckets = xcalloc(f->nbounds ? f->nbounds : 1, sizeof(_Atomic uint64_t));
        }
        *f->series_tail = s;
        f->series_tail = &s->_next;
    }
    return s;
}

static metrics_t *metrics_get(metrics_registry_t *reg, metrics_type_t type, const char *name,
                              const char *labels, const char *help, const double *bounds,
                              size_t nbounds)
{
    pthread_mutex_lock(&reg->mu);
    metrics_t *m = metrics_lookup(reg, type, name, labels, help, bounds, nbounds);
    pthread_mutex_unlock(&reg->mu);
    return m;
}

metrics_t *metrics_counter(metrics_registry_t *reg, const char *name, const char *labels,
                           const char *help)
{
    return metrics_get(reg, METRICS_COUNTER, name, labels, help, NULL, 0);
}

metrics_t *metrics_gauge(metrics_registry_t *reg, const char *name, const char *labels,
                         const char *help)
{
    return metrics_get(reg, METRICS_GAUGE, name, labels, help, NULL, 0);
}

metrics_t *metrics_histogram(metrics_registry_t *reg, const char *name, const char *labels,
                             const char *help, const double *bounds, size_t nbounds)
{
    return metrics_get(reg, METRICS_HISTOGRAM, name, labels, help, bounds, nbounds);
}

static void atomic_add_double(_Atomic uint64_t *w, double delta)
{
    uint64_t old = atomic_load_explicit(w, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(w, &old, double_to_bits(bits_to_double(old) + delta),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

void metrics_add(metrics_t *m, double delta)
{
    if (m != NULL)
        atomic_add_double(&m->value, delta);
}

void metrics_set(metrics_t *m, double value)
{
    if (m != NULL)
        atomic_store_explicit(&m->value, double_to_bits(value), memory_order_relaxed);
}

void metrics_observe(metrics_t *m, double v)
{
    if (m == NULL)
        return;
    size_t i = 0;
    while (i < m->nbounds && v > m->bounds[i])
        i++;
    if (i < m->nbounds)
        atomic_fetch_add_explicit(&m->buckets[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->count, 1, memory_order_relaxed);
    atomic_add_double(&m->value, v);
}

double metrics_value(const metrics_t *m)
{
    if (m == NULL)
        return 0;
    if (m->buckets != NULL)
        return (double)atomic_load_explicit(&m->count, memory_order_relaxed);
    return bits_to_double(atomic_load_explicit(&m->value, memory_order_relaxed));
}

typedef struct {
    char *buf;
    size_t len, cap;
} metrics_out_t;

static void out_printf(metrics_out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_printf(metrics_out_t *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        o->cap = o->cap * 2 + (size_t)(n > 0 ? n : 64);
        o->buf = xrealloc(o->buf, o->cap);
    }
}

/* Prints a double the way Prometheus clients do: integers without a fraction. */
static void out_value(metrics_out_t *o, double v)
{
    if (v == (double)(int64_t)v && v < 9e15 && v > -9e15)
        out_printf(o, "%lld\n", (long long)v);
    else
        out_printf(o, "%.9g\n", v);
}

char *metrics_render(metrics_registry_t *reg, size_t *len)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    metrics_out_t o = {.buf = xmalloc(4096), .len = 0, .cap = 4096};
    o.buf[0] = '\0';
    pthread_mutex_lock(&reg->mu);
    for (metrics_family_t *f = reg->families; f != NULL; f = f->_next) {
        out_printf(&o, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, types[f->type]);
        for (metrics_t *s = f->series; s != NULL; s = s->_next) {
            const char *sep = s->labels[0] ? "," : "";
            if (f->type != METRICS_HISTOGRAM) {
                if (s->labels[0])
                    out_printf(&o, "%s{%s} ", f->name, s->labels);
                else
                    out_printf(&o, "%s ", f->name);
                out_value(&o, metrics_value(s));
                continue;
            }
            uint64_t cum = 0;
            for (size_t i = 0; i < s->nbounds; i++) {
                cum += atomic_load_explicit(&s->buckets[i], memory_order_relaxed);
                out_printf(&o, "%s_bucket{%s%sle=\"%g\"} %llu\n", f->name, s->labels, sep,
                           s->bounds[i], (unsigned long long)cum);
            }
            uint64_t count = atomic_load_explicit(&s->count, memory_order_relaxed);
            out_printf(&o, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", f->name, s->labels, sep,
                       (unsigned long long)count);
            if (s->labels[0])
                out_printf(&o, "%s_sum{%s} ", f->name, s->labels);
            else
                out_printf(&o, "%s_sum ", f->name);
            out_value(&o, bits_to_double(atomic_load_explicit(&s->value, memory_order_relaxed)));
            if (s->labels[0])
                out_printf(&o, "%s_count{%s} %llu\n", f->name, s->labels, (unsigned long long)count);
            else
                out_printf(&o, "%s_count %llu\n", f->name, (unsigned long long)count);
        }
    }
    pthread_mutex_unlock(&reg->mu);
    if (len != NULL)
        *len = o.len;
    return o.buf;
}
