/* stacks.c — stack capture and the bucket table (see stacks.h). */
#include "stacks.h"

#include "arena.h"
#include "rt.h"

#include "base/hash.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define NHEADS (1u << 16)
#define MAX_BUCKETS (1u << 20)
/* index -> bucket in pages of 64 Ki entries, mapped as the table grows, so
 * a small program pays 512 KiB, not the 8 MiB of the largest table. */
#define PAGE_BITS 16
#define NPAGES (MAX_BUCKETS >> PAGE_BITS)
/* Frames cprof itself may have above the program's: hooks, sampling,
 * capture, and operator new. */
#define SKIP_SLACK 16

typedef struct {
    uintptr_t lo, hi;
} range_t;

static int unwinder;
static int max_depth = 64;
static range_t skip[24]; /* cprof's text, operator new & co */
static int nskip;

static bucket_t **heads;
static bucket_t **table[NPAGES]; /* pages published with release */
static uint32_t count;
static rt_lock_t insert_lock = RT_LOCK_INIT;
static bucket_t *overflow;

/* The one frame of the overflow bucket: its name tells the reader. */
__attribute__((noinline, used, visibility("default"))) void cprof_stack_table_full(void)
{
    __asm__ volatile("");
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz) {
            for (int j = 0; j < info->dlpi_phnum && nskip < 8; j++) {
                const ElfW(Phdr) *x = &info->dlpi_phdr[j];
                if (x->p_type == PT_LOAD && (x->p_flags & PF_X))
                    skip[nskip++] = (range_t){info->dlpi_addr + x->p_vaddr,
                                              info->dlpi_addr + x->p_vaddr + x->p_memsz};
            }
            return 1;
        }
    }
    return 0;
}

/* operator new and friends are allocator entry points, like malloc: Go
 * hides its runtime's frames the same way. */
static void skip_symbols(void)
{
    static const char *const names[] = {
        "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
        "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
        "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *addr = dlsym(RTLD_DEFAULT, names[i]);
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        if (!addr || nskip >= (int)(sizeof(skip) / sizeof(skip[0])) ||
            !dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size)
            continue;
        skip[nskip++] = (range_t){(uintptr_t)addr, (uintptr_t)addr + sym->st_size};
    }
}

int stacks_init(int which, int depth)
{
    unwinder = which;
    max_depth = depth;
    if (!heads) {
        heads = arena_map(NHEADS * sizeof(*heads));
        table[0] = arena_map(sizeof(bucket_t *) << PAGE_BITS);
        overflow = arena_alloc(sizeof(*overflow) + sizeof(uintptr_t));
        if (!heads || !table[0] || !overflow)
            return -ENOMEM;
        /* +1: the writer names pc-1, which must stay inside the function. */
        overflow->pcs[0] = (uintptr_t)cprof_stack_table_full + 1;
        overflow->depth = 1;
        overflow->index = 0;
        table[0][0] = overflow;
        count = 1;
        dl_iterate_phdr(find_self, (void *)(uintptr_t)stacks_init);
        skip_symbols();
        /* Per-thread caches: the global cache takes a lock across
         * dl_iterate_phdr, a known deadlock with allocating threads. */
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    }
    return 0;
}

static bool skipped(uintptr_t pc)
{
    for (int i = 0; i < nskip; i++)
        if (pc >= skip[i].lo && pc < skip[i].hi)
            return true;
    return false;
}

/* Walks the frame-pointer chain within this thread's stack. Bounds come
 * from pthread_getattr_np once per thread (it allocates: guard is set). */
static int fp_walk(uintptr_t *pcs, int max)
{
    rt_thread_t *t = &rt_self;
    if (!t->stack_hi) {
        pthread_attr_t attr;
        void *addr;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &attr) != 0)
            return 0;
        pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
        t->stack_lo = (uintptr_t)addr;
        t->stack_hi = (uintptr_t)addr + size;
    }
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    int n = 0;
    while (n < max && fp >= t->stack_lo && fp + 16 <= t->stack_hi && !(fp & 7)) {
        const uintptr_t *frame = (const uintptr_t *)fp;
        if (!frame[1])
            break;
        pcs[n++] = frame[1];
        if (frame[0] <= fp)
            break;
        fp = frame[0];
    }
    return n;
}

__attribute__((noinline)) int stacks_capture(uintptr_t *out)
{
    uintptr_t buf[STACKS_MAX_DEPTH + SKIP_SLACK];
    int want = max_depth + SKIP_SLACK, n;
    if (unwinder == UNWIND_FP) {
        n = fp_walk(buf, want);
    } else {
        /* Flagged: a CPU-profile signal arriving now must not re-enter
         * libunwind on this thread (cpuring.h). */
        rt_self.unwinding = 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        n = unw_backtrace((void **)buf, want);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        rt_self.unwinding = 0;
    }
    int i = 0;
    while (i < n && skipped(buf[i]))
        i++;
    int depth = n - i < max_depth ? n - i : max_depth;
    memcpy(out, buf + i, (size_t)depth * sizeof(*out));
    return depth;
}

static bucket_t *find(bucket_t *b, uint64_t h, const uintptr_t *pcs, int depth)
{
    for (; b; b = __atomic_load_n(&b->chain, __ATOMIC_ACQUIRE))
        if (b->hash == h && b->depth == (uint32_t)depth &&
            memcmp(b->pcs, pcs, (size_t)depth * sizeof(*pcs)) == 0)
            return b;
    return NULL;
}

bucket_t *stacks_intern(const uintptr_t *pcs, int depth)
{
    uint64_t h = hash_pcs(pcs, (size_t)depth);
    bucket_t **head = &heads[h & (NHEADS - 1)];
    bucket_t *b = find(__atomic_load_n(head, __ATOMIC_ACQUIRE), h, pcs, depth);
    if (b)
        return b;
    rt_lock(&insert_lock);
    bucket_t *first = __atomic_load_n(head, __ATOMIC_ACQUIRE);
    b = find(first, h, pcs, depth);
    bucket_t ***page = &table[count >> PAGE_BITS];
    if (!b && count < MAX_BUCKETS && !*page)
        __atomic_store_n(page, arena_map(sizeof(bucket_t *) << PAGE_BITS), __ATOMIC_RELEASE);
    if (!b && count < MAX_BUCKETS && *page &&
        (b = arena_alloc(sizeof(*b) + (size_t)depth * sizeof(uintptr_t)))) {
        b->hash = h;
        b->depth = (uint32_t)depth;
        memcpy(b->pcs, pcs, (size_t)depth * sizeof(*pcs));
        b->index = count;
        b->chain = first;
        (*page)[count & ((1u << PAGE_BITS) - 1)] = b;
        __atomic_store_n(&count, count + 1, __ATOMIC_RELEASE);
        __atomic_store_n(head, b, __ATOMIC_RELEASE);
    }
    rt_unlock(&insert_lock);
    return b ? b : overflow;
}

uint32_t stacks_count(void)
{
    return heads ? __atomic_load_n(&count, __ATOMIC_ACQUIRE) : 0;
}

bucket_t *stacks_get(uint32_t index)
{
    bucket_t **page = __atomic_load_n(&table[index >> PAGE_BITS], __ATOMIC_ACQUIRE);
    return page[index & ((1u << PAGE_BITS) - 1)];
}

void stacks_fork_prepare(void)
{
    rt_lock(&insert_lock);
}

void stacks_fork_release(void)
{
    rt_unlock(&insert_lock);
}
