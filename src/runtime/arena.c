/* arena.c — mmap-backed memory for the runtime's tables (see arena.h). */
#include "arena.h"

#include "rt.h"

#include <pthread.h>
#include <sys/mman.h>

#define CHUNK (1u << 20)

static uint64_t mapped;               /* bytes mapped now, atomically updated */
static uint64_t limit = 1ull << 30;   /* CPROF_MEMORY_LIMIT, default 1 GiB */
static rt_lock_t bump_lock = RT_LOCK_INIT;
static char *bump_cur, *bump_end;

static size_t page_round(size_t n)
{
    return (n + 4095) & ~(size_t)4095;
}

static uint64_t own_mapped; /* the private heap's, outside the limit */

/* The live mappings (arena_ranges). Tables grow by doubling and the bump
 * chunks are 1 MiB, so a few thousand cover the largest limit. */
#define MAX_RANGES 8192
static arena_range_t ranges[MAX_RANGES];
static size_t nranges;
static bool ranges_lost; /* a mapping went unrecorded: never cleared */
static rt_lock_t ranges_lock = RT_LOCK_INIT;

static void note_range(void *p, size_t size)
{
    rt_lock(&ranges_lock);
    if (nranges < MAX_RANGES)
        ranges[nranges++] = (arena_range_t){(uintptr_t)p, (uintptr_t)p + size};
    else
        ranges_lost = true;
    rt_unlock(&ranges_lock);
}

static void forget_range(void *p)
{
    rt_lock(&ranges_lock);
    for (size_t i = 0; i < nranges; i++) {
        if (ranges[i].lo == (uintptr_t)p) {
            ranges[i] = ranges[--nranges];
            break;
        }
    }
    rt_unlock(&ranges_lock);
}

size_t arena_ranges(arena_range_t *out, size_t max, bool *complete)
{
    rt_lock(&ranges_lock);
    size_t n = nranges < max ? nranges : max;
    for (size_t i = 0; i < n; i++)
        out[i] = ranges[i];
    *complete = !ranges_lost && n == nranges;
    rt_unlock(&ranges_lock);
    return n;
}

void arena_account(int64_t bytes)
{
    __atomic_add_fetch(&own_mapped, (uint64_t)bytes, __ATOMIC_RELAXED);
}

void *arena_map(size_t size)
{
    size = page_round(size);
    if (__atomic_add_fetch(&mapped, size, __ATOMIC_RELAXED) > limit) {
        __atomic_sub_fetch(&mapped, size, __ATOMIC_RELAXED);
        return NULL;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        __atomic_sub_fetch(&mapped, size, __ATOMIC_RELAXED);
        return NULL;
    }
    note_range(p, size);
    return p;
}

void arena_unmap(void *p, size_t size)
{
    size = page_round(size);
    forget_range(p);
    munmap(p, size);
    __atomic_sub_fetch(&mapped, size, __ATOMIC_RELAXED);
}

void *arena_alloc_aligned(size_t size, size_t align)
{
    size = (size + 15) & ~(size_t)15;
    if (size > CHUNK)
        return arena_map(size); /* page-aligned */
    rt_lock(&bump_lock);
    /* Chunks are page-aligned: rounding the cursor gives any alignment up
     * to a page. */
    char *r = (char *)(((uintptr_t)bump_cur + align - 1) & ~(uintptr_t)(align - 1));
    if (!bump_cur || r > bump_end || (size_t)(bump_end - r) < size) {
        /* The tail of the old chunk is abandoned: objects are small. */
        char *c = arena_map(CHUNK);
        if (!c) {
            rt_unlock(&bump_lock);
            return NULL;
        }
        r = c;
        bump_end = c + CHUNK;
    }
    bump_cur = r + size;
    rt_unlock(&bump_lock);
    return r;
}

void *arena_alloc(size_t size)
{
    return arena_alloc_aligned(size, 16);
}

uint64_t arena_bytes(void)
{
    return __atomic_load_n(&mapped, __ATOMIC_RELAXED) +
           __atomic_load_n(&own_mapped, __ATOMIC_RELAXED);
}

uint64_t arena_limit(void)
{
    return limit;
}

/* fork: the bump and range locks are the innermost of cprof's (taken
 * under the tables' locks, never the other way), so they are taken last. */
static void fork_prepare(void)
{
    rt_lock(&bump_lock);
    rt_lock(&ranges_lock);
}

static void fork_release(void)
{
    rt_unlock(&ranges_lock);
    rt_unlock(&bump_lock);
}

void arena_set_limit(uint64_t bytes)
{
    static bool registered;
    limit = bytes;
    /* The first handler registered has its prepare run last. */
    if (!registered) {
        registered = true;
        pthread_atfork(fork_prepare, fork_release, fork_release);
    }
}
