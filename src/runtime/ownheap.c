/* ownheap.c — cprof's private heap (see ownheap.h). */
#include "ownheap.h"

#include "arena.h"
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define RESERVE (1ull << 36)     /* address space, never all committed, */
#define RESERVE_MIN (4u << 20)   /* or less (reserve_size) down to this */
#define COMMIT_STEP (1u << 20)   /* commit granularity */
#define MIN_CLASS 5              /* 32-byte blocks: 16 of header, 16 of data */
#define NCLASSES 37
#define RELEASE_CLASS 16         /* free blocks of 64 KiB and up give pages back, */
#define RETAIN_MAX (16u << 20)   /* but for this many bytes of them: writing a
                                    profile frees and remakes the same large
                                    arrays request after request, and faulting
                                    their pages in again was a third of the
                                    time of serving /debug/pprof/heap */
#define MAGIC 0x63707266u        /* "cprf" */

/* Before every payload: its block's class, and how far the block starts
 * before this header (non-zero only for over-aligned payloads; a multiple
 * of 16) with RT_CPROF_BLOCK set: it is the word before the payload, which
 * free's fast path tests (rt.h). */
typedef struct {
    uint32_t klass;
    uint32_t magic;
    uint64_t offset;
} header_t;

typedef struct free_block {
    struct free_block *next;
    bool resident; /* a large block whose pages were kept (retained) */
} free_block_t;

uintptr_t ownheap_base;
size_t ownheap_size;
static rt_lock_t lock = RT_LOCK_INIT;
static uintptr_t top;       /* next unused byte */
static uintptr_t committed; /* end of the committed part */
static free_block_t *free_list[NCLASSES];
static size_t retained; /* bytes of resident free large blocks */
static bool failed;     /* the reservation failed: no retry on every call */
static int told;        /* the failure was reported */

/* How much address space to ask for. Reserved pages count against an
 * address-space limit (ulimit -v) even unused, and what cprof holds the
 * program cannot have: under a limit, an eighth of it. */
static size_t reserve_size(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 8 >= RESERVE)
        return RESERVE;
    size_t want = RESERVE;
    while (want > RESERVE_MIN && want > rl.rlim_cur / 8)
        want >>= 1;
    return want;
}

/* Reserves the heap's range: reserve_size(), halved while the kernel
 * refuses, down to RESERVE_MIN. Lock held. */
static bool reserve_locked(void)
{
    if (failed)
        return false;
    for (size_t size = reserve_size(); size >= RESERVE_MIN; size >>= 1) {
        void *r = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r != MAP_FAILED) {
            top = committed = (uintptr_t)r;
            /* base before size: a reader that sees the size sees the
             * base (ownheap_contains) */
            __atomic_store_n(&ownheap_base, (uintptr_t)r, __ATOMIC_RELAXED);
            __atomic_store_n(&ownheap_size, size, __ATOMIC_RELEASE);
            return true;
        }
    }
    failed = true;
    return false;
}

static int class_of(size_t total)
{
    int c = MIN_CLASS;
    while (c < NCLASSES && ((size_t)1 << c) < total)
        c++;
    return c;
}

/* A block of the class, from its free list or the top. Lock held. */
static void *take_locked(int c)
{
    size_t size = (size_t)1 << c;
    if (free_list[c]) {
        free_block_t *b = free_list[c];
        free_list[c] = b->next;
        if (c >= RELEASE_CLASS && b->resident)
            retained -= size;
        return b;
    }
    if (!ownheap_base && !reserve_locked())
        return NULL;
    /* Blocks are aligned to their size (up to a page), so any alignment a
     * caller may ask up to that comes for free. */
    uintptr_t align = size < 4096 ? size : 4096;
    uintptr_t start = (top + align - 1) & ~(align - 1);
    if (start + size > ownheap_base + ownheap_size)
        return NULL;
    if (start + size > committed) {
        uintptr_t end = (start + size + COMMIT_STEP - 1) & ~(uintptr_t)(COMMIT_STEP - 1);
        if (mprotect((void *)committed, end - committed, PROT_READ | PROT_WRITE) != 0)
            return NULL;
        arena_account((int64_t)(end - committed));
        committed = end;
    }
    top = start + size;
    return (void *)start;
}

/* Once: why cprof's work (writing profiles, its threads) now fails. */
static void report_full(void)
{
    struct rlimit rl;
    bool limited = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
    if (!ownheap_base)
        rt_warn("cannot reserve even 4 MiB of address space for its private heap%s; profiles "
                "cannot be written", limited ? " (ulimit -v, RLIMIT_AS)" : "");
    else
        rt_warn("its private heap is full (%zu MiB of address space%s); what needs more fails "
                "(a profile is not written)", ownheap_size >> 20,
                limited ? ", a share of ulimit -v (RLIMIT_AS)" : "");
}

static void *alloc(size_t size, size_t align)
{
    if (size > ((size_t)1 << (NCLASSES - 1)) - 2 * align - sizeof(header_t))
        return NULL;
    size_t extra = align > 16 ? align : 0;
    int c = class_of(size + sizeof(header_t) + extra);
    rt_lock(&lock);
    char *block = take_locked(c);
    rt_unlock(&lock);
    if (!block) {
        if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
            report_full();
        return NULL;
    }
    uintptr_t p = (uintptr_t)block + sizeof(header_t);
    if (extra)
        p = (p + align - 1) & ~(uintptr_t)(align - 1);
    header_t *h = (header_t *)p - 1;
    h->klass = (uint32_t)c;
    h->magic = MAGIC;
    h->offset = (uint64_t)((char *)h - block) | RT_CPROF_BLOCK;
    return (void *)p;
}

void *ownheap_malloc(size_t size)
{
    void *p = alloc(size, 16);
    if (!p)
        errno = ENOMEM;
    return p;
}

void *ownheap_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = ownheap_malloc(total);
    if (p)
        memset(p, 0, total);
    return p;
}

void *ownheap_memalign(size_t align, size_t size)
{
    if (align == 0 || (align & (align - 1)) || align > 4096) {
        errno = EINVAL;
        return NULL;
    }
    void *p = alloc(size, align);
    if (!p)
        errno = ENOMEM;
    return p;
}

size_t ownheap_usable(const void *p)
{
    const header_t *h = (const header_t *)p - 1;
    return ((size_t)1 << h->klass) - (h->offset & ~RT_CPROF_BLOCK) - sizeof(header_t);
}

void ownheap_free(void *p)
{
    header_t *h = (header_t *)p - 1;
    if (h->magic != MAGIC)
        return; /* not a block start: a double free or a stray pointer */
    h->magic = 0;
    int c = (int)h->klass;
    free_block_t *b = (free_block_t *)((char *)h - (h->offset & ~RT_CPROF_BLOCK));
    bool keep = false;
    if (c >= RELEASE_CLASS) {
        rt_lock(&lock);
        keep = retained + ((size_t)1 << c) <= RETAIN_MAX;
        if (keep)
            retained += (size_t)1 << c;
        rt_unlock(&lock);
        if (!keep) /* keep the first page: it holds the list link */
            madvise((char *)b + 4096, ((size_t)1 << c) - 4096, MADV_DONTNEED);
    }
    rt_lock(&lock);
    b->resident = keep;
    b->next = free_list[c];
    free_list[c] = b;
    rt_unlock(&lock);
}

void *ownheap_realloc(void *p, size_t size)
{
    if (!p)
        return ownheap_malloc(size);
    size_t have = ownheap_usable(p);
    if (size <= have)
        return p;
    void *n = ownheap_malloc(size);
    if (n) {
        memcpy(n, p, have);
        ownheap_free(p);
    }
    return n;
}

static void fork_prepare(void)
{
    rt_lock(&lock);
}

static void fork_release(void)
{
    rt_unlock(&lock);
}

/* The heap's lock is never taken while another cprof lock is held, so its
 * fork handlers need no place in api.c's lock order. */
__attribute__((constructor(102))) static void ownheap_init(void)
{
    uint32_t g = rt_guard_enter();
    pthread_atfork(fork_prepare, fork_release, fork_release);
    rt_guard_leave(g);
}
