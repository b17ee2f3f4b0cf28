/* allochooks.c — the allocation entry points cprof interposes (LD_PRELOAD or
 * -lcprof). Each one forwards to the next allocator in the chain
 * (dlsym(RTLD_NEXT)), so glibc, jemalloc or tcmalloc behind cprof all work,
 * and tells heap.h what happened.
 *
 * The guard is set around every forward: whatever the next allocator calls
 * (its own malloc, dlsym, ...) is not counted twice. While a thread does
 * cprof's own work (rt_self.own), its allocations come from cprof's
 * private heap instead (ownheap.h), and any thread's free of such a block
 * goes back there. While dlsym itself
 * runs to resolve the next allocator, allocations come from a small static
 * bootstrap buffer, which free() recognizes and ignores. */
#include "dump.h"
#include "heap.h"
#include "ownheap.h"
#include "rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* --- bootstrap buffer: dlsym's own calloc before rt_next is known ----- */

#define BOOT_SIZE (64u << 10)
static _Alignas(64) char boot_buf[BOOT_SIZE];
static size_t boot_used;

static bool is_boot(const void *p)
{
    return (uintptr_t)p - (uintptr_t)boot_buf < BOOT_SIZE;
}

/* Each block is preceded by its size and the RT_CPROF_BLOCK word (16
 * bytes, which keeps the alignment). */
static void *boot_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    size_t need = ((size + 15) & ~(size_t)15) + align;
    size_t off = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
    if (off + need > BOOT_SIZE || align > 4096)
        return NULL;
    uintptr_t p = ((uintptr_t)boot_buf + off + 16 + align - 1) & ~(uintptr_t)(align - 1);
    ((size_t *)p)[-2] = size;
    ((size_t *)p)[-1] = RT_CPROF_BLOCK;
    return (void *)p; /* static storage: already zero */
}

static size_t boot_size(const void *p)
{
    return ((const size_t *)p)[-2];
}

/* Whether rt_usable_size may read glibc's chunk headers: the next malloc
 * and malloc_usable_size are libc's, and for plain, zeroed and aligned
 * blocks the header gives what malloc_usable_size says. Anything else
 * (jemalloc, tcmalloc, ASan, a glibc that tags memory) keeps the call.
 * No mmapped block is tried: freeing one raises glibc's mmap threshold
 * for the rest of the program. Runs guarded, from resolve. */
static bool glibc_chunks(const rt_next_t *n)
{
#ifndef __GLIBC__
    (void)n;
    return false; /* the musl runtime: musl's libc.so is no glibc */
#endif
    Dl_info a, b;
    if (!n->malloc_usable_size || !n->memalign || !dladdr((void *)n->malloc, &a) ||
        !dladdr((void *)n->malloc_usable_size, &b) || !a.dli_fname || a.dli_fbase != b.dli_fbase)
        return false;
    const char *base = strrchr(a.dli_fname, '/');
    if (strncmp(base ? base + 1 : a.dli_fname, "libc.so", 7) != 0)
        return false;
    static const size_t sizes[] = {1, 24, 25, 200, 4000, 70000};
    bool same = true;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && same; i++) {
        void *blocks[3] = {n->malloc(sizes[i]), n->calloc(1, sizes[i]), n->memalign(256, sizes[i])};
        for (int k = 0; k < 3; k++) {
            if (!blocks[k])
                continue;
            if (rt_glibc_usable(blocks[k]) != n->malloc_usable_size(blocks[k]))
                same = false;
            n->free(blocks[k]);
        }
    }
    return same;
}

/* Set while this thread runs resolve(): only then must an allocation come
 * from the bootstrap buffer. (The guard cannot tell: cprof's own code runs
 * guarded too, and when nothing has called malloc yet — a program that
 * never allocates, writing its profile at exit — it needs the real
 * allocator, not 64 KiB of bootstrap.) */
static __thread bool resolving __attribute__((tls_model("initial-exec")));

static void resolve(void)
{
    uint32_t g = rt_guard_enter();
    resolving = true;
    rt_next_t n;
    n.malloc = dlsym(RTLD_NEXT, "malloc");
    n.free = dlsym(RTLD_NEXT, "free");
    n.calloc = dlsym(RTLD_NEXT, "calloc");
    n.realloc = dlsym(RTLD_NEXT, "realloc");
    n.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    n.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    n.memalign = dlsym(RTLD_NEXT, "memalign");
    n.valloc = dlsym(RTLD_NEXT, "valloc");
    n.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
    n.malloc_usable_size = dlsym(RTLD_NEXT, "malloc_usable_size");
    if (!n.malloc || !n.free || !n.calloc || !n.realloc) {
        static const char msg[] = "cprof: cannot find the next allocator (malloc); aborting\n";
        ssize_t w = write(2, msg, sizeof(msg) - 1);
        (void)w;
        _exit(127);
    }
    /* Field by field, malloc last: it is the "resolved" flag the hooks test,
     * and two threads racing here store the same values, so no field a
     * hook may already use ever reads NULL. */
    rt_next.free = n.free;
    rt_next.calloc = n.calloc;
    rt_next.realloc = n.realloc;
    rt_next.posix_memalign = n.posix_memalign;
    rt_next.aligned_alloc = n.aligned_alloc;
    rt_next.memalign = n.memalign;
    rt_next.valloc = n.valloc;
    rt_next.pvalloc = n.pvalloc;
    rt_next.malloc_usable_size = n.malloc_usable_size;
    bool chunks = glibc_chunks(&n);
    __atomic_store_n(&rt_next.malloc, n.malloc, __ATOMIC_RELEASE);
    /* Last: it opens the fast paths, which take rt_next as resolved. */
    __atomic_store_n(&rt_glibc_chunks, chunks, __ATOMIC_RELEASE);
    resolving = false;
    rt_guard_leave(g);
}

/* True when the caller must use the bootstrap buffer. */
static inline bool need_boot(void)
{
    if (RT_LIKELY(__atomic_load_n(&rt_next.malloc, __ATOMIC_ACQUIRE) != NULL))
        return false;
    if (resolving) /* dlsym is allocating */
        return true;
    resolve();
    return false;
}

/* Whether an allocation comes from the private heap: in cprof's own work,
 * unless this is a signal handler that interrupted cprof holding a lock,
 * maybe the heap's own (heap.h). */
static inline bool own_heap(const rt_thread_t *t)
{
    return t->own && !t->locks;
}

/* Calls the next allocator with the guard set. */
#define FORWARD(call)                                                                    \
    ({                                                                                   \
        rt_thread_t *t_ = &rt_self;                                                      \
        t_->guard++;                                                                     \
        __typeof__(call) r_ = (call);                                                    \
        t_->guard--;                                                                     \
        r_;                                                                              \
    })

/* --- the fast paths: malloc and free of a thread outside cprof, on glibc --
 *
 * What an unsampled pair costs is all here: the test of the gate, the
 * sampler countdown, two counter stores per call, the chunk header read,
 * and on free the test of cprof's mark (rt.h) and the live-map filter.
 * glibc's malloc and free call nothing cprof hooks, so they run without
 * the guard (a plain call, and on free a jump). Anything else (the first
 * call of a thread, cprof's own work, the bootstrap and private heaps,
 * another allocator, a sample) goes to the general paths by a tail call,
 * which leaves no frame of its own on the stack. */

static __attribute__((noinline)) void *malloc_slow(size_t size)
{
    if (RT_UNLIKELY(need_boot()))
        return boot_alloc(size, 16);
    rt_thread_t *t = &rt_self;
    if (t->guard)
        return own_heap(t) ? ownheap_malloc(size) : rt_next.malloc(size);
    void *p = FORWARD(rt_next.malloc(size));
    if (RT_LIKELY(p != NULL))
        heap_on_alloc(t, p, size);
    else
        dump_on_null();
    return p;
}

static __attribute__((noinline)) void free_slow(void *p)
{
    if (!p || RT_UNLIKELY(is_boot(p)))
        return;
    if (RT_UNLIKELY(ownheap_contains(p))) {
        if (!rt_self.locks) /* else leaked: the heap's lock may be held (heap.h) */
            ownheap_free(p);
        return;
    }
    if (RT_UNLIKELY(need_boot()))
        return; /* cannot happen: only boot blocks exist before resolve */
    rt_thread_t *t = &rt_self;
    if (!t->guard) {
        heap_on_free(t, p, NULL);
        if (RT_LIKELY(rt_glibc_chunks)) {
            rt_next.free(p);
            return;
        }
        t->guard++;
        rt_next.free(p);
        t->guard--;
        return;
    }
    rt_next.free(p);
}

/* A free of a block the live-map filter may hold: recorded, then freed. */
static __attribute__((noinline)) void free_sampled(void *p)
{
    heap_record_free(p, NULL);
    rt_next.free(p);
}

/* The fast malloc needs no frame pointer: it never unwinds (a sample is
 * recorded in malloc_slow, after a tail call that removes this frame),
 * and a frame costs the common case four instructions. clang has no
 * per-function switch: it keeps the frame. */
#if defined(__clang__)
#define NO_FRAME_POINTER
#else
#define NO_FRAME_POINTER __attribute__((optimize("omit-frame-pointer")))
#endif

/* A hook takes the fast path when t->gate is zero: the thread is not in
 * cprof (guard) and holds its counters with glibc behind (fast, set when
 * slow is 0). */
RT_EXPORT NO_FRAME_POINTER void *malloc(size_t size)
{
    rt_thread_t *t = &rt_self;
    if (RT_UNLIKELY(t->gate != 0 || !sampler_skip(t, size)))
        return malloc_slow(size);
    void *p = rt_next.malloc(size);
    if (RT_UNLIKELY(p == NULL))
        return dump_null(); /* a tail call: no frame on the path a block takes */
    counters_add_alloc(t->fast, rt_glibc_usable(p));
    return p;
}

RT_EXPORT void free(void *p)
{
    rt_thread_t *t = &rt_self;
    if (RT_UNLIKELY(!p || t->gate != 0))
        return free_slow(p);
    size_t h = ((const size_t *)p)[-1]; /* glibc's chunk size, or cprof's mark */
    if (RT_UNLIKELY(h & RT_CPROF_BLOCK))
        return free_slow(p); /* a bootstrap or private-heap block */
    counters_add_free(t->fast, 1, rt_glibc_usable_of(h));
    if (RT_UNLIKELY(livemap_maybe(p)))
        return free_sampled(p);
    rt_next.free(p);
}

/* C23's sized frees. glibc before 2.40 does not export them, so a program
 * finds them only here; glibc's own versions would bypass free's hook and
 * leave sampled blocks live in the profile. The size is only a hint to the
 * allocator: forwarding to free is always correct. */
RT_EXPORT void free_sized(void *p, size_t size)
{
    (void)size;
    free(p);
}

RT_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
    (void)align;
    (void)size;
    free(p);
}

RT_EXPORT void *calloc(size_t n, size_t size)
{
    if (RT_UNLIKELY(need_boot())) {
        size_t total;
        return __builtin_mul_overflow(n, size, &total) ? NULL : boot_alloc(total, 16);
    }
    rt_thread_t *t = &rt_self;
    if (t->guard)
        return own_heap(t) ? ownheap_calloc(n, size) : rt_next.calloc(n, size);
    void *p = FORWARD(rt_next.calloc(n, size));
    if (p)
        heap_on_alloc(t, p, n * size);
    else
        dump_on_null();
    return p;
}

RT_EXPORT void *realloc(void *old, size_t size)
{
    if (!old)
        return malloc(size);
    if (RT_UNLIKELY(is_boot(old))) {
        void *p = malloc(size);
        if (p)
            memcpy(p, old, boot_size(old) < size ? boot_size(old) : size);
        return p;
    }
    if (RT_UNLIKELY(ownheap_contains(old))) {
        if (RT_LIKELY(!rt_self.locks))
            return ownheap_realloc(old, size);
        /* In a signal handler, maybe under the heap's lock (heap.h): a
         * block of the next allocator, the old one leaked. */
        void *p = FORWARD(rt_next.malloc(size));
        if (p)
            memcpy(p, old, ownheap_usable(old) < size ? ownheap_usable(old) : size);
        return p;
    }
    if (RT_UNLIKELY(need_boot()))
        return NULL;
    rt_thread_t *t = &rt_self;
    if (t->guard)
        return rt_next.realloc(old, size);
    /* A free of the old block and an allocation of the new one. The free is
     * recorded first: once the real realloc returns, another thread may
     * already have been given the old address. */
    heap_freed_t f;
    heap_on_free(t, old, &f);
    void *p = FORWARD(rt_next.realloc(old, size));
    if (p)
        heap_on_alloc(t, p, size);
    else if (size != 0) {
        heap_undo_free(old, &f); /* failed: the old block lives on */
        dump_on_null();
    }
    return p;
}

RT_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(old, total);
}

RT_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (RT_UNLIKELY(need_boot())) {
        *out = boot_alloc(size, align);
        return *out ? 0 : ENOMEM;
    }
    rt_thread_t *t = &rt_self;
    if (own_heap(t)) {
        void *p = ownheap_memalign(align, size);
        if (p)
            *out = p;
        return p ? 0 : errno;
    }
    if (t->guard)
        return rt_next.posix_memalign(out, align, size);
    int rc = FORWARD(rt_next.posix_memalign(out, align, size));
    if (rc == 0 && *out)
        heap_on_alloc(t, *out, size);
    else if (rc == ENOMEM)
        dump_on_null();
    return rc;
}

/* The aligned variants the next allocator may lack fall back to
 * posix_memalign, which every allocator here has. */
static void *aligned_common(void *(*fn)(size_t, size_t), size_t align, size_t size)
{
    if (RT_UNLIKELY(need_boot()))
        return boot_alloc(size, align);
    rt_thread_t *t = &rt_self;
    if (own_heap(t))
        return ownheap_memalign(align, size);
    void *p = NULL;
    t->guard++;
    if (fn) {
        p = fn(align, size);
    } else {
        int rc = rt_next.posix_memalign(&p, align, size);
        if (rc)
            errno = rc;
    }
    t->guard--;
    if (p && !t->guard)
        heap_on_alloc(t, p, size);
    else if (!p)
        dump_on_null();
    return p;
}

RT_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    return aligned_common(rt_next.aligned_alloc, align, size);
}

RT_EXPORT void *memalign(size_t align, size_t size)
{
    return aligned_common(rt_next.memalign, align, size);
}

RT_EXPORT void *valloc(size_t size)
{
    if (RT_UNLIKELY(need_boot()) || !rt_next.valloc || own_heap(&rt_self))
        return aligned_common(NULL, (size_t)sysconf(_SC_PAGESIZE), size);
    rt_thread_t *t = &rt_self;
    void *p = FORWARD(rt_next.valloc(size));
    if (p && !t->guard)
        heap_on_alloc(t, p, size);
    return p;
}

RT_EXPORT void *pvalloc(size_t size)
{
    if (RT_UNLIKELY(need_boot()) || !rt_next.pvalloc || own_heap(&rt_self)) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        return aligned_common(NULL, page, (size + page - 1) & ~(page - 1));
    }
    rt_thread_t *t = &rt_self;
    void *p = FORWARD(rt_next.pvalloc(size));
    if (p && !t->guard)
        heap_on_alloc(t, p, size);
    return p;
}

RT_EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (is_boot(p))
        return boot_size(p);
    if (ownheap_contains(p))
        return ownheap_usable(p);
    if (RT_UNLIKELY(need_boot()))
        return 0;
    return rt_usable_size(p);
}
