/* mmaphooks.c — mmap, munmap, mremap, brk, sbrk and the table of the program's
 * sampled anonymous mappings (see mmaphooks.h). */
#include "mmaphooks.h"

#include "arena.h"
#include "rt.h"
#include "sampler.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct {
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    void *(*mremap)(void *, size_t, size_t, int, ...);
    void *(*sbrk)(intptr_t);
    int (*brk)(void *);
} nx;
static int64_t brk_bytes; /* the program's own moves of the break, net */

static rt_lock_t lock = RT_LOCK_INIT;
static mmap_rec_t *tab; /* MMAPHOOKS_MAX entries, mapped at the first sample */
static size_t ntab;     /* written under the lock, read without it as a hint */

/* ntab's new value, stored atomically for the readers without the lock. */
static void set_ntab_locked(size_t n)
{
    __atomic_store_n(&ntab, n, __ATOMIC_RELAXED);
}
static uint64_t dropped;

static void prepare(void)
{
    rt_lock(&lock);
}

static void release(void)
{
    rt_unlock(&lock);
}

void mmaphooks_init(void)
{
    __typeof__(nx) n;
    *(void **)&n.mmap = dlsym(RTLD_NEXT, "mmap");
    *(void **)&n.munmap = dlsym(RTLD_NEXT, "munmap");
    *(void **)&n.mremap = dlsym(RTLD_NEXT, "mremap");
    *(void **)&n.sbrk = dlsym(RTLD_NEXT, "sbrk");
    *(void **)&n.brk = dlsym(RTLD_NEXT, "brk");
    if (n.mmap && n.munmap && n.mremap && n.sbrk && n.brk) {
        nx = n;
        pthread_atfork(prepare, release, release);
    }
}

/* --- the table (lock held) ---------------------------------------------- */

/* Takes [lo, hi) out of every kept range: unmapped, or mapped anew. */
static void cut_locked(uintptr_t lo, uintptr_t hi)
{
    for (size_t i = 0; i < ntab;) {
        mmap_rec_t *r = &tab[i];
        if (r->hi <= lo || r->lo >= hi) {
            i++;
            continue;
        }
        if (r->lo < lo && r->hi > hi) { /* a hole in the middle: split */
            if (ntab < MMAPHOOKS_MAX) {
                tab[ntab] = *r;
                tab[ntab].lo = hi;
                set_ntab_locked(ntab + 1);
                r->hi = lo;
            } else if (lo - r->lo >= r->hi - hi) {
                r->hi = lo; /* no room: the larger side stays */
            } else {
                r->lo = hi;
            }
            i++;
        } else if (r->lo < lo) {
            r->hi = lo;
            i++;
        } else if (r->hi > hi) {
            r->lo = hi;
            i++;
        } else {
            *r = tab[ntab - 1];
            set_ntab_locked(ntab - 1);
        }
    }
}

static void cut(uintptr_t lo, uintptr_t hi)
{
    if (!__atomic_load_n(&ntab, __ATOMIC_RELAXED))
        return;
    uint32_t g = rt_guard_enter();
    rt_lock(&lock);
    cut_locked(lo, hi);
    rt_unlock(&lock);
    rt_guard_leave(g);
}

static __attribute__((noinline)) void record(void *p, size_t len, int64_t rate)
{
    uint32_t g = rt_guard_enter();
    uintptr_t pcs[UNWIND_MAX_DEPTH];
    int depth = unwind_capture(pcs);
    if (depth > MMAPHOOKS_DEPTH)
        depth = MMAPHOOKS_DEPTH;
    if (!__atomic_load_n(&tab, __ATOMIC_ACQUIRE)) { /* mapped outside the lock */
        mmap_rec_t *m = arena_map(MMAPHOOKS_MAX * sizeof(*m)), *none = NULL;
        if (m && !__atomic_compare_exchange_n(&tab, &none, m, false, __ATOMIC_ACQ_REL,
                                              __ATOMIC_ACQUIRE))
            arena_unmap(m, MMAPHOOKS_MAX * sizeof(*m));
    }
    rt_lock(&lock);
    cut_locked((uintptr_t)p, (uintptr_t)p + len);
    if (tab && ntab < MMAPHOOKS_MAX) {
        mmap_rec_t *r = &tab[ntab];
        set_ntab_locked(ntab + 1);
        r->lo = (uintptr_t)p;
        r->hi = (uintptr_t)p + len;
        r->rate = rate;
        r->depth = (uint32_t)(depth > 0 ? depth : 0);
        memcpy(r->pcs, pcs, r->depth * sizeof(*pcs));
    } else {
        dropped++;
    }
    rt_unlock(&lock);
    rt_guard_leave(g);
}

int64_t mmaphooks_brk_bytes(void)
{
    return __atomic_load_n(&brk_bytes, __ATOMIC_RELAXED);
}

size_t mmaphooks_count(void)
{
    return __atomic_load_n(&ntab, __ATOMIC_RELAXED);
}

size_t mmaphooks_copy(mmap_rec_t *out, size_t max, uint64_t *drop)
{
    rt_lock(&lock);
    size_t n = ntab < max ? ntab : max;
    if (n)
        memcpy(out, tab, n * sizeof(*out));
    *drop = dropped;
    rt_unlock(&lock);
    return n;
}

/* --- the hooks ------------------------------------------------------------ */

static void *next_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (nx.mmap)
        return nx.mmap(addr, len, prot, flags, fd, off);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* After a successful mmap by the program: a fixed mapping replaces what
 * it covers; an anonymous one is sampled by its bytes. */
static void on_map(void *p, size_t len, int flags)
{
    rt_thread_t *t = &rt_self;
    if (t->guard)
        return;
    if (!(flags & MAP_ANONYMOUS) || !sampler_take(t, len)) {
        cut((uintptr_t)p, (uintptr_t)p + len);
        return;
    }
    record(p, len, t->taken_rate);
}

RT_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *p = next_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED)
        on_map(p, len, flags);
    return p;
}

#ifdef __GLIBC__ /* musl's mmap64 is a macro naming mmap */
RT_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));
#endif

RT_EXPORT int munmap(void *addr, size_t len)
{
    if (!rt_self.guard)
        cut((uintptr_t)addr, (uintptr_t)addr + ((len + 4095) & ~(size_t)4095));
    if (nx.munmap)
        return nx.munmap(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

RT_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = nx.mremap ? nx.mremap(old, old_len, new_len, flags, want)
                        : (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
    if (p == MAP_FAILED || rt_self.guard)
        return p;
    /* the kept mapping that starts at old moves with its stack */
    mmap_rec_t moved = {0};
    if (__atomic_load_n(&ntab, __ATOMIC_RELAXED)) {
        uint32_t g = rt_guard_enter();
        rt_lock(&lock);
        for (size_t i = 0; i < ntab; i++)
            if (tab[i].lo == (uintptr_t)old) {
                moved = tab[i];
                break;
            }
        cut_locked((uintptr_t)old, (uintptr_t)old + old_len);
        cut_locked((uintptr_t)p, (uintptr_t)p + new_len);
        if (moved.hi && ntab < MMAPHOOKS_MAX) {
            moved.lo = (uintptr_t)p;
            moved.hi = (uintptr_t)p + new_len;
            tab[ntab] = moved;
            set_ntab_locked(ntab + 1);
        }
        rt_unlock(&lock);
        rt_guard_leave(g);
    }
    /* One not kept: the bytes it grew by are new bytes to the sampler, so
     * a mapping grown to n bytes is kept as often as one mapped at n. It
     * may be a file's: the memory profile gives a file's mapping its
     * class whatever is kept over it (memprof.c). */
    rt_thread_t *t = &rt_self;
    if (!moved.hi && new_len > old_len && sampler_take(t, new_len - old_len))
        record(p, new_len, t->taken_rate);
    return p;
}

/* The break, moved by the program itself (glibc's malloc moves it through
 * libc's internal __sbrk, unseen): what it grew is sampled as a mapping,
 * what it gave back cut. The raw system call would leave libc's cached
 * break behind, so before mmaphooks_init both are looked up here. */
static void on_brk(uintptr_t old, uintptr_t now)
{
    if (rt_self.guard || now == old)
        return;
    __atomic_add_fetch(&brk_bytes, (int64_t)(now - old), __ATOMIC_RELAXED);
    if (now > old)
        on_map((void *)old, now - old, MAP_ANONYMOUS);
    else
        cut(now, old);
}

static void find_brk(void)
{
    if (nx.sbrk && nx.brk)
        return;
    uint32_t g = rt_guard_enter();
    *(void **)&nx.sbrk = dlsym(RTLD_NEXT, "sbrk");
    *(void **)&nx.brk = dlsym(RTLD_NEXT, "brk");
    rt_guard_leave(g);
}

RT_EXPORT void *sbrk(intptr_t inc)
{
    find_brk();
    if (!nx.sbrk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    void *p = nx.sbrk(inc);
    if (p != (void *)-1 && inc)
        on_brk((uintptr_t)p, (uintptr_t)p + (uintptr_t)inc);
    return p;
}

RT_EXPORT int brk(void *addr)
{
    find_brk();
    if (!nx.sbrk || !nx.brk) {
        errno = ENOMEM;
        return -1;
    }
    void *old = nx.sbrk(0);
    int rc = nx.brk(addr);
    if (rc == 0 && old != (void *)-1)
        on_brk((uintptr_t)old, (uintptr_t)addr);
    return rc;
}
