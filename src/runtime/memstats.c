/* memstats.c — Go's runtime.MemStats block from cprof's counters, the
 * allocator's statistics and /proc (see memstats.h). */
#include "memstats.h"

#include "arena.h"
#include "buckets.h"
#include "heap.h"
#include "procmaps.h"
#include "rt.h"

#include <dirent.h>
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* --- the allocator's figures -------------------------------------------- */

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef int (*tc_prop_fn)(const char *, size_t *);
#ifdef __GLIBC__
typedef struct mallinfo2 (*mallinfo2_fn)(void);
#endif

static uint64_t je_stat(mallctl_fn ctl, const char *name)
{
    size_t v = 0, len = sizeof(v);
    return ctl(name, &v, &len, NULL, 0) == 0 ? v : 0;
}

static uint64_t tc_prop(tc_prop_fn get, const char *name)
{
    size_t v = 0;
    return get(name, &v) ? v : 0;
}

/* Looks the statistics functions up in the object that defines the malloc
 * cprof forwards to, so a second allocator merely loaded is never asked. */
static void heap_figures(memstats_t *m)
{
    Dl_info info;
    if (!rt_next.malloc || !dladdr((void *)rt_next.malloc, &info) || !info.dli_fname)
        return;
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return;
    mallctl_fn ctl = (mallctl_fn)dlsym(h, "mallctl");
    tc_prop_fn tc = (tc_prop_fn)dlsym(h, "MallocExtension_GetNumericProperty");
#ifdef __GLIBC__
    mallinfo2_fn mi = (mallinfo2_fn)dlsym(h, "mallinfo2");
#endif
    if (ctl) {
        /* jemalloc's statistics are a snapshot taken at each "epoch" write. */
        uint64_t epoch = 1;
        size_t len = sizeof(epoch);
        ctl("epoch", &epoch, &len, &epoch, len);
        uint64_t retained = je_stat(ctl, "stats.retained");
        m->heap_inuse = je_stat(ctl, "stats.active");
        m->heap_sys = je_stat(ctl, "stats.mapped") + retained;
        m->heap_released = retained;
        uint64_t held = je_stat(ctl, "stats.allocated") + je_stat(ctl, "stats.metadata");
        uint64_t res = je_stat(ctl, "stats.resident");
        m->free_held = res > held ? res - held : 0;
    } else if (tc) {
        uint64_t unmapped = tc_prop(tc, "tcmalloc.pageheap_unmapped_bytes");
        m->heap_sys = tc_prop(tc, "generic.heap_size");
        m->heap_inuse = m->heap_sys - unmapped - tc_prop(tc, "tcmalloc.pageheap_free_bytes");
        m->heap_released = unmapped;
        m->free_held = tc_prop(tc, "tcmalloc.pageheap_free_bytes") +
                       tc_prop(tc, "tcmalloc.central_cache_free_bytes") +
                       tc_prop(tc, "tcmalloc.transfer_cache_free_bytes") +
                       tc_prop(tc, "tcmalloc.thread_cache_free_bytes");
    }
#ifdef __GLIBC__ /* musl's malloc keeps no statistics: the heap figures stay 0 */
    else if (mi) {
        /* glibc: sbrk'd arena plus mmapped chunks; it keeps no count of the
         * pages it gave back with madvise, so HeapReleased stays 0. */
        struct mallinfo2 i = mi();
        m->heap_sys = i.arena + i.hblkhd;
        m->heap_inuse = i.uordblks + i.hblkhd;
        m->free_held = i.fordblks;
    }
#endif
    if (m->heap_inuse > m->heap_sys)
        m->heap_inuse = m->heap_sys;
    m->heap_idle = m->heap_sys - m->heap_inuse;
    dlclose(h);
}

/* --- thread stacks ------------------------------------------------------ */

/* The mapping of /proc/self/maps text that holds addr: [*lo, *hi). */
static int find_mapping(const char *maps, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
    for (const char *l = maps; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        char *end;
        uint64_t a = strtoull(l, &end, 16);
        if (*end != '-')
            continue;
        uint64_t b = strtoull(end + 1, NULL, 16);
        if (addr >= a && addr < b) {
            *lo = a;
            *hi = b;
            return 0;
        }
    }
    return -1;
}

/* Each thread's stack pointer: its own (a local's address) for the calling
 * thread, the one /proc/self/task/TID/syscall shows for a blocked thread;
 * a thread running on another CPU has none to read and is left out. */
static void stacks_figures(memstats_t *m)
{
    size_t len;
    char *maps = procmaps_slurp("/proc/self/maps", &len);
    DIR *d = maps ? opendir("/proc/self/task") : NULL;
    if (!d) {
        free(maps);
        return;
    }
    pid_t self = gettid();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        unsigned long sp = 0;
        uint64_t lo, hi;
        if (atoi(e->d_name) == self) {
            sp = (unsigned long)__builtin_frame_address(0);
        } else {
            char path[300];
            snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
            char *s = procmaps_slurp(path, &len);
            /* "NR ARG1 .. ARG6 SP PC"; "running" or "-1 SP PC" have none. */
            long nr;
            if (s && sscanf(s, "%ld %*s %*s %*s %*s %*s %*s %lx", &nr, &sp) != 2)
                sp = 0;
            free(s);
        }
        if (sp && find_mapping(maps, sp, &lo, &hi) == 0) {
            m->stack_inuse += hi - sp;
            m->stack_sys += hi - lo;
        }
    }
    closedir(d);
    free(maps);
}

/* --- the block ------------------------------------------------------------ */

void memstats_read_heap(memstats_t *m)
{
    memset(m, 0, sizeof(*m));
    heap_figures(m);
}

void memstats_read(memstats_t *m)
{
    memset(m, 0, sizeof(*m));
    cprof_stats_t st;
    heap_stats(&st);
    m->alloc = st.live_bytes;
    m->total_alloc = st.total_alloc_bytes;
    m->mallocs = st.mallocs;
    m->frees = st.frees;
    m->heap_objects = st.live_objects;
    heap_figures(m);
    stacks_figures(m);
    m->buck_hash_sys = buckets_bytes();
    uint64_t own = arena_bytes();
    m->other_sys = own > m->buck_hash_sys ? own - m->buck_hash_sys : 0;
    m->sys = m->heap_sys + m->stack_sys + m->buck_hash_sys + m->other_sys;
}

void memstats_write(FILE *f, const memstats_t *m)
{
    fprintf(f, "\n# runtime.MemStats\n");
    fprintf(f, "# Alloc = %llu\n", (unsigned long long)m->alloc);
    fprintf(f, "# TotalAlloc = %llu\n", (unsigned long long)m->total_alloc);
    fprintf(f, "# Sys = %llu\n", (unsigned long long)m->sys);
    fprintf(f, "# Lookups = 0\n");
    fprintf(f, "# Mallocs = %llu\n", (unsigned long long)m->mallocs);
    fprintf(f, "# Frees = %llu\n", (unsigned long long)m->frees);
    fprintf(f, "# HeapAlloc = %llu\n", (unsigned long long)m->alloc);
    fprintf(f, "# HeapSys = %llu\n", (unsigned long long)m->heap_sys);
    fprintf(f, "# HeapIdle = %llu\n", (unsigned long long)m->heap_idle);
    fprintf(f, "# HeapInuse = %llu\n", (unsigned long long)m->heap_inuse);
    fprintf(f, "# HeapReleased = %llu\n", (unsigned long long)m->heap_released);
    fprintf(f, "# HeapObjects = %llu\n", (unsigned long long)m->heap_objects);
    fprintf(f, "# Stack = %llu / %llu\n", (unsigned long long)m->stack_inuse,
            (unsigned long long)m->stack_sys);
    fprintf(f, "# MSpan = 0 / 0\n# MCache = 0 / 0\n");
    fprintf(f, "# BuckHashSys = %llu\n", (unsigned long long)m->buck_hash_sys);
    fprintf(f, "# GCSys = 0\n");
    fprintf(f, "# OtherSys = %llu\n", (unsigned long long)m->other_sys);
    fprintf(f, "# NextGC = 0\n# LastGC = 0\n");
    /* PauseNs and PauseEnd are [256]uint64 in Go, printed with %d. */
    for (int k = 0; k < 2; k++) {
        fprintf(f, "# %s = [", k ? "PauseEnd" : "PauseNs");
        for (int i = 0; i < 256; i++)
            fputs(i ? " 0" : "0", f);
        fputs("]\n", f);
    }
    fprintf(f, "# NumGC = 0\n# NumForcedGC = 0\n# GCCPUFraction = 0\n# DebugGC = false\n");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(f, "# MaxRSS = %llu\n", (unsigned long long)ru.ru_maxrss * 1024);
}
