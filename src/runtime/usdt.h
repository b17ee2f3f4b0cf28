/* usdt.h — the OpenTelemetry eBPF profiler's memory probes (its RFC #1672;
 * jemalloc #3011 fires the same): otel_memory:alloc(ptr, size,
 * weighted_bytes) and otel_memory:free(ptr), USDT probes (sys/sdt.h) that a
 * node agent, bpftrace or perf attach to without a scrape.
 *
 * Fired on sampled allocations only — heap.c's recording path, which the
 * hooks' fast path never reaches — and only when a tracer is attached: each
 * probe sits behind its semaphore, which the tracer increments, so the
 * sampled path pays one load when none is. weighted_bytes is the sample's
 * share of the heap profile's alloc_space (size unbiased at the rate it was
 * taken, as sampler_scale scales a bucket): over a run the alloc probes'
 * weighted_bytes add up to the profile's alloc_space. A free fires for every
 * sampled block leaving the live map (free, or realloc moving it).
 * Callable in any context the recording path runs in (signal handlers
 * included): they only read the semaphore and compute. Without sys/sdt.h at
 * build time the probes are compiled out. */
#ifndef CPROF_USDT_H
#define CPROF_USDT_H

#include "rt.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#define USDT_ENABLED 1
#endif
#endif

#ifdef USDT_ENABLED
/* The tracers' counts (sys/sdt.h's semaphores, in section .probes). */
extern unsigned short otel_memory_alloc_semaphore __attribute__((visibility("hidden")));
extern unsigned short otel_memory_free_semaphore __attribute__((visibility("hidden")));

void usdt_fire_alloc(const void *p, size_t size, int64_t rate);
void usdt_fire_free(const void *p);

static inline void usdt_alloc(const void *p, size_t size, int64_t rate)
{
    if (RT_UNLIKELY(__atomic_load_n(&otel_memory_alloc_semaphore, __ATOMIC_RELAXED)))
        usdt_fire_alloc(p, size, rate);
}

static inline void usdt_free(const void *p)
{
    if (RT_UNLIKELY(__atomic_load_n(&otel_memory_free_semaphore, __ATOMIC_RELAXED)))
        usdt_fire_free(p);
}
#else
static inline void usdt_alloc(const void *p, size_t size, int64_t rate)
{
    (void)p, (void)size, (void)rate;
}

static inline void usdt_free(const void *p)
{
    (void)p;
}
#endif

#endif
