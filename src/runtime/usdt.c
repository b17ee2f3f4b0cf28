/* usdt.c — the probe sites of usdt.h and their semaphores. */
#include "usdt.h"

#ifdef USDT_ENABLED
#include "sampler.h"

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

__extension__ unsigned short otel_memory_alloc_semaphore __attribute__((section(".probes")));
__extension__ unsigned short otel_memory_free_semaphore __attribute__((section(".probes")));

/* Out of line: the probe's argument set-up stays off the recording path. */
__attribute__((noinline)) void usdt_fire_alloc(const void *p, size_t size, int64_t rate)
{
    int64_t objects, weighted;
    sampler_scale(1, (int64_t)size, rate, &objects, &weighted);
    STAP_PROBE3(otel_memory, alloc, (uintptr_t)p, (uint64_t)size, (uint64_t)weighted);
}

__attribute__((noinline)) void usdt_fire_free(const void *p)
{
    STAP_PROBE1(otel_memory, free, (uintptr_t)p);
}
#endif
