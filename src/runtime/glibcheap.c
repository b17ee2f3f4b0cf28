/* glibcheap.c — glibc's chunks and heaps, for the leak scan and the
 * memory profile (see glibcheap.h). The constants and layouts are glibc's malloc/malloc.c and
 * malloc/arena.c (2.26 and later, 64-bit). */
#include "glibcheap.h"

#include "arena.h"
#include "counters.h"
#include "procmaps.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* arena.c's HEAP_MAX_SIZE: 2 * DEFAULT_MMAP_THRESHOLD_MAX */
#define HEAP_MAX ((uintptr_t)2 * 4 * 1024 * 1024 * sizeof(long))
#define MIN_CHUNK 32
#define PREV_INUSE 1
#define SIZE_BITS 7
#define EARLY_MAX (1u << 16) /* chunks in use at start, listed one by one */

/* The chunks of the main heap in use when cprof started, in arena memory
 * (no root). Should the heap not chain then, [whole_lo, whole_hi) stands
 * for them. Written once, before any scan. */
typedef struct {
    uintptr_t chunk, size;
} early_t;
static early_t *early;
static size_t nearly;
static uintptr_t whole_lo, whole_hi;

/* start_brk (field 47 of /proc/self/stat, Linux 3.3; 0 if unknown) and
 * the number of threads (field 20). */
static uintptr_t start_brk(long *threads)
{
    char buf[2048];
    *threads = 0;
    if (procmaps_read_small("/proc/self/stat", buf, sizeof(buf)) < 0)
        return 0;
    const char *p = strrchr(buf, ')'); /* the name may hold anything */
    for (int f = 2; p && f < 47; f++) {
        p = strchr(p + 1, ' ');
        if (p && f == 19)
            *threads = strtol(p + 1, NULL, 10);
    }
    return p ? (uintptr_t)strtoull(p + 1, NULL, 10) : 0;
}

/* Walks the chunks of [lo, hi), which end with the top chunk at the
 * break: counts those in use into *n, and stores them while out has room
 * (*n on entry). False if they do not chain so, or once more than
 * EARLY_MAX are in use (the walk stops there: the table would not take
 * them). *walked: the chunks read. */
static bool walk_start(uintptr_t lo, uintptr_t hi, early_t *out, size_t *n, size_t *walked)
{
    size_t k = 0;
    for (uintptr_t c = lo; c + 16 <= hi; ++*walked) {
        uintptr_t size = ((const uintptr_t *)c)[1] & ~(uintptr_t)SIZE_BITS;
        if (size < MIN_CHUNK || size % 16 || size > hi - c)
            return false;
        if (c + size == hi) {
            *n = k;
            return true;
        }
        if (((const uintptr_t *)(c + size))[1] & PREV_INUSE) {
            if (k == EARLY_MAX)
                return false;
            if (out && k < *n)
                out[k] = (early_t){c, size};
            k++;
        }
        c += size;
    }
    return false;
}

size_t glibcheap_note_start(void)
{
#ifndef __GLIBC__
    return 0; /* the musl runtime: musl's heap has no glibc chunks to walk */
#endif
    long threads;
    size_t walked = 0;
    uintptr_t sb = start_brk(&threads), lo = (sb + 15) & ~(uintptr_t)15, hi = (uintptr_t)sbrk(0);
    if (!sb || hi == (uintptr_t)-1 || hi <= lo)
        return 0;
    /* Free chunks at start are left out: memory cprof's early work or a
     * library freed is reused by sampled blocks, then freed again. Only
     * while no other thread may shrink the heap under the walk (not so
     * under cprof attach), and for a table of bounded size. */
    size_t n = EARLY_MAX;
    bool chained = threads == 1 && walk_start(lo, hi, NULL, &n, &walked);
    if (chained && !n)
        return walked;
    if (chained && (early = arena_map(n * sizeof(*early)))) {
        walk_start(lo, hi, early, &n, &walked);
        nearly = n;
        return walked;
    }
    whole_lo = lo;
    whole_hi = hi;
    return walked;
}

/* sizeof(heap_info): 4 words before glibc 2.35, 5 and a pad since
 * (pagesize); the arena (malloc_state) follows it in an arena's first heap. */
static bool arena_offset(uintptr_t off)
{
    return off == 32 || off == 48;
}

/* Whether the words at a are a heap_info: ar_ptr, prev, size, mprotect_size.
 * An arena's first heap (prev 0) holds its arena right after; a later
 * heap's prev is a heap_info of the same arena. */
static bool heap_info_at(uintptr_t a, const uintptr_t w[4], glibcheap_read_t rd, void *arg)
{
    if (!w[0] || !arena_offset(w[0] & (HEAP_MAX - 1)) || w[1] % HEAP_MAX || !w[2] ||
        w[2] % 4096 || w[3] % 4096 || w[2] > w[3] || w[3] > HEAP_MAX)
        return false;
    if (!w[1])
        return w[0] - a == 32 || w[0] - a == 48;
    uintptr_t p[4];
    return w[1] != a && rd(arg, w[1], p, sizeof(p)) == sizeof(p) && p[0] == w[0] &&
           p[2] && p[2] % 4096 == 0 && p[2] <= p[3] && p[3] <= HEAP_MAX;
}

uintptr_t glibcheap_next_arena(uintptr_t lo, uintptr_t hi, glibcheap_read_t rd, void *arg,
                               uintptr_t *end)
{
    for (uintptr_t a = (lo + HEAP_MAX - 1) & ~(HEAP_MAX - 1); a >= lo && a + 64 <= hi;
         a += HEAP_MAX) {
        uintptr_t w[4];
        if (rd(arg, a, w, sizeof(w)) != sizeof(w) || !heap_info_at(a, w, rd, arg))
            continue;
        *end = hi - a > w[3] ? a + w[3] : hi;
        return a;
    }
    return 0;
}

void glibcheap_early_chunks(uintptr_t heap_lo, uintptr_t heap_hi, glibcheap_read_t rd, void *arg,
                            void (*fn)(void *fnarg, uintptr_t lo, uintptr_t hi), void *fnarg)
{
    if (whole_hi) {
        uintptr_t lo = whole_lo > heap_lo ? whole_lo : heap_lo;
        uintptr_t hi = whole_hi < heap_hi ? whole_hi : heap_hi;
        if (lo < hi)
            fn(fnarg, lo, hi);
        return;
    }
    for (size_t i = 0; i < nearly; i++) {
        uintptr_t c = early[i].chunk, size = early[i].size, h, next_h;
        if (c < heap_lo || c + size + 16 > heap_hi)
            continue;
        /* Still that chunk, and still in use (or in a tcache or fastbin,
         * which look in use: more roots, never fewer) */
        if (rd(arg, c + 8, &h, 8) != 8 || (h & ~(uintptr_t)SIZE_BITS) != size ||
            rd(arg, c + size + 8, &next_h, 8) != 8 || !(next_h & PREV_INUSE))
            continue;
        fn(fnarg, c + 16, c + size + 8);
    }
}

uintptr_t glibcheap_heap_size(uintptr_t a, glibcheap_read_t rd, void *arg)
{
    uintptr_t w[4];
    return rd(arg, a, w, sizeof(w)) == sizeof(w) && heap_info_at(a, w, rd, arg) ? w[2] : 0;
}

/* At the note: the chunks in use (mallinfo2's uordblks), where the main
 * arena began, and the counters' sums. Written once, before any read. */
static bool noted;
static uint64_t note_inuse;
static uintptr_t note_base;
static counters_sum_t note_sums;

/* The chunk bytes the counters hold live: a usable size and one word. */
static uint64_t chunk_bytes(const counters_sum_t *s)
{
    return s->alloc_bytes - s->free_bytes + 8 * (s->mallocs - s->frees);
}

void glibcheap_note_counts(void)
{
#ifdef __GLIBC__
    long threads;
    uintptr_t brk = (uintptr_t)sbrk(0);
    /* Before resolve, often: whether glibc's chunks are the heap's is known
     * only then; a read asks it (memprof.h). */
    if (!start_brk(&threads) || threads != 1 || brk == (uintptr_t)-1)
        return;
    /* One arena, the main one: its system bytes end at the break. */
    struct mallinfo2 mi = mallinfo2();
    if (mi.arena > brk)
        return;
    note_inuse = mi.uordblks;
    note_base = brk - mi.arena;
    counters_sum(&note_sums);
    noted = true;
#endif
}

bool glibcheap_free_bytes(uint64_t heaps_size, uint64_t mmapped, int64_t program_brk,
                          uint64_t *free_bytes)
{
    uintptr_t brk = (uintptr_t)sbrk(0);
    if (!noted || counters_ever_paused() || brk == (uintptr_t)-1 || brk < note_base)
        return false;
    counters_sum_t now;
    counters_sum(&now);
    /* an mmapped chunk's usable size is its bytes less two words: the
     * counters hold it as bytes less one, a word a chunk left to err */
    uint64_t inuse = note_inuse + chunk_bytes(&now) - chunk_bytes(&note_sums);
    uint64_t main = brk - note_base - (uint64_t)program_brk;
    if (main > brk - note_base) /* more given back than the program took */
        main = brk - note_base;
    uint64_t sys = main + heaps_size, held = inuse > mmapped ? inuse - mmapped : 0;
    *free_bytes = sys > held ? sys - held : 0;
    return true;
}
