/*
 * metrics -- a registry of counters, gauges and histograms rendered in Prometheus text format.
 *
 * A series is a metric name plus a fixed label set, written as Prometheus writes it:
 *
 *     metrics_t *m = metrics_counter(reg, "game_rounds_total", "game=\"ddz\",outcome=\"completed\"",
 *                                    "Rounds ended, by outcome");
 *     metrics_add(m, 1);
 *
 * Looking a series up takes the registry's mutex and returns the same handle every time for the
 * same name and labels, so callers look up once and keep the handle. Updating a handle is a
 * lock-free atomic operation safe from any thread. Handles live as long as the registry.
 * Asking for an existing name with another type returns NULL (a programming error).
 */
#ifndef CROUPIER_METRICS_H
#define CROUPIER_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef struct metrics_registry metrics_registry_t;
typedef struct metrics metrics_t;

metrics_registry_t *metrics_create(void);
/* Frees the registry and every handle it gave out. NULL is a no-op. */
void metrics_destroy(metrics_registry_t *reg);

/* labels may be NULL or "" for a series without labels. */
metrics_t *metrics_counter(metrics_registry_t *reg, const char *name, const char *labels,
                           const char *help);
metrics_t *metrics_gauge(metrics_registry_t *reg, const char *name, const char *labels,
                         const char *help);
/* bounds: ascending upper bounds of the buckets (the +Inf bucket is implicit); copied. */
metrics_t *metrics_histogram(metrics_registry_t *reg, const char *name, const char *labels,
                             const char *help, const double *bounds, size_t nbounds);

void metrics_add(metrics_t *m, double delta);  /* counter or gauge */
void metrics_set(metrics_t *m, double value);  /* gauge */
void metrics_observe(metrics_t *m, double v);  /* histogram */
double metrics_value(const metrics_t *m);      /* counter/gauge value, histogram count */

/* Renders every series; returns a NUL-terminated string the caller frees, length in *len. */
char *metrics_render(metrics_registry_t *reg, size_t *len);

/* Bucket bounds in seconds for latencies from 100 us to 10 s. */
extern const double metrics_latency_bounds[];
extern const size_t metrics_latency_nbounds;

#endif
