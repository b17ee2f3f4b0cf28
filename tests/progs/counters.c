/* counters.c — cprof's exact whole-process counters (cprof_stats, found
 * with dlsym: the program runs preloaded) against the program's own sums:
 * blocks of every kind (small, mmapped, zeroed, grown and shrunk by
 * realloc, aligned by each of the four calls) are made and freed, and the
 * counters must move by exactly the number of calls and by the sum of
 * the blocks' usable sizes, whichever allocator is behind cprof.
 *
 *   counters [LIBRARY]   LIBRARY: the allocator behind cprof (default
 *                        libc.so.6), whose own malloc_usable_size gives
 *                        the true sizes (cprof's hook of it would only
 *                        echo cprof's own view)
 * Prints "ok" or what differs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    uint64_t mallocs, frees, total_alloc_bytes, live_bytes, live_objects;
    int64_t rate;
    uint64_t rest[6];
} stats_t;

#define N 64

int main(int argc, char **argv)
{
    int (*stats)(stats_t *) = (int (*)(stats_t *))dlsym(RTLD_DEFAULT, "cprof_stats");
    void *lib = dlopen(argc > 1 ? argv[1] : "libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    size_t (*usable)(void *) = lib ? (size_t(*)(void *))dlsym(lib, "malloc_usable_size") : NULL;
    if (!stats || !usable) {
        puts(stats ? "the allocator's malloc_usable_size not found" : "cprof_stats not found");
        return 1;
    }
    static const size_t sizes[] = {1, 24, 100, 4000, 70000, 300000, 3u << 20};
    void *blocks[N];
    int n = 0;
    uint64_t calls = 0, bytes = 0, freed_calls = 0;
    stats_t a, b, c;
    stats(&a);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t s = sizes[i];
        void *p;
        blocks[n++] = malloc(s);
        blocks[n++] = calloc(3, s);
        if (posix_memalign(&p, 64, s) == 0)
            blocks[n++] = p;
        blocks[n++] = aligned_alloc(4096, (s + 4095) & ~(size_t)4095);
        blocks[n++] = memalign(256, s);
        blocks[n++] = valloc(s);
        calls += 6;
        /* realloc: grown past the block, then shrunk; each a free and an allocation */
        p = malloc(s);
        calls++;
        p = realloc(p, 2 * s + 100);
        calls++, freed_calls++;
        p = realloc(p, s / 2 + 1);
        calls++, freed_calls++;
        blocks[n++] = p;
    }
    for (int i = 0; i < n; i++)
        bytes += usable(blocks[i]);
    stats(&b);
    for (int i = 0; i < n; i++)
        free(blocks[i]);
    stats(&c);
    int bad = 0;
    if (b.mallocs - a.mallocs != calls || b.frees - a.frees != freed_calls) {
        printf("mallocs +%llu frees +%llu, want +%llu +%llu\n", (unsigned long long)(b.mallocs - a.mallocs),
               (unsigned long long)(b.frees - a.frees), (unsigned long long)calls, (unsigned long long)freed_calls);
        bad = 1;
    }
    if (b.live_bytes - a.live_bytes != bytes || b.live_objects - a.live_objects != (uint64_t)n) {
        printf("live +%llu bytes +%llu objects, want +%llu +%d\n", (unsigned long long)(b.live_bytes - a.live_bytes),
               (unsigned long long)(b.live_objects - a.live_objects), (unsigned long long)bytes, n);
        bad = 1;
    }
    if (c.live_bytes != a.live_bytes || c.frees - b.frees != (uint64_t)n) {
        printf("after the frees: live %llu bytes (was %llu), frees +%llu, want +%d\n", (unsigned long long)c.live_bytes,
               (unsigned long long)a.live_bytes, (unsigned long long)(c.frees - b.frees), n);
        bad = 1;
    }
    if (!bad)
        puts("ok");
    return bad;
}
