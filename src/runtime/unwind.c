/* unwind.c — capturing the stack of a sampled event (see unwind.h). */
#include "unwind.h"

#include "rt.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

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

void unwind_init(int which, int depth)
{
    unwinder = which;
    max_depth = depth;
    static bool learned;
    if (learned)
        return;
    learned = true;
    dl_iterate_phdr(find_self, (void *)(uintptr_t)unwind_init);
    skip_symbols();
    /* Per-thread caches: the global cache takes a lock across
     * dl_iterate_phdr, a known deadlock with allocating threads. */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
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

__attribute__((noinline)) int unwind_capture(uintptr_t *out)
{
    uintptr_t buf[UNWIND_MAX_DEPTH + SKIP_SLACK];
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

