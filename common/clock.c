#include "clock.h"

#include <time.h>

static int64_t clock_read_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t clock_mono_ns(void)
{
    return clock_read_ns(CLOCK_MONOTONIC);
}

int64_t clock_mono_ms(void)
{
    return clock_mono_ns() / 1000000;
}

int64_t clock_boot_ns(void)
{
    return clock_read_ns(CLOCK_BOOTTIME);
}

int64_t clock_boot_ms(void)
{
    return clock_boot_ns() / 1000000;
}

int64_t clock_wall_ms(void)
{
    return clock_read_ns(CLOCK_REALTIME) / 1000000;
}
