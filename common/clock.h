/*
 * clock -- the few clocks the project uses, in integer nanoseconds or milliseconds.
 *
 * Monotonic time measures intervals and deadlines inside one process. Boot time (which keeps
 * counting while the machine is suspended) measures lease validity (docs/architecture.md §5).
 * Wall time is only for logs and for deadlines that cross processes (rpc frames carry
 * wall-clock milliseconds, since two processes share no monotonic epoch).
 */
#ifndef CROUPIER_CLOCK_H
#define CROUPIER_CLOCK_H

#include <stdint.h>

int64_t clock_mono_ns(void);
int64_t clock_mono_ms(void);
int64_t clock_boot_ns(void);
int64_t clock_boot_ms(void);
int64_t clock_wall_ms(void);

#endif
