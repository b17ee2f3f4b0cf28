/* stackbounds.c — each thread's stack bounds (see stackbounds.h). */
#include "stackbounds.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __GLIBC__
extern void *__libc_stack_end; /* ld.so: the top of the main thread's stack */
#define MAIN_STACK_ADDR ((uintptr_t)__libc_stack_end)
#else
/* musl has no __libc_stack_end: an address in the main thread's stack,
 * noted by stackbounds_init (cprof's constructor, on the main thread). */
static uintptr_t main_stack_addr;
#define MAIN_STACK_ADDR main_stack_addr
#endif


/* The mapping of /proc/self/maps holding addr ([*lo, *hi)) and the end of
 * the one before it (*below, 0 if none), streamed through a small buffer:
 * only each line's two addresses are parsed. */
static bool find_mapping(uintptr_t addr, uintptr_t *lo, uintptr_t *hi, uintptr_t *below)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[512];
    uintptr_t v[2] = {0, 0}, prev_end = 0;
    int field = 0; /* 0: start, 1: end, 2: the rest of the line */
    bool found = false;
    for (;;) {
        long n = syscall(SYS_read, fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (long i = 0; i < n && !found; i++) {
            char c = buf[i];
            if (c == '\n') {
                if (field == 2 && addr >= v[0] && addr < v[1]) {
                    *lo = v[0], *hi = v[1], *below = prev_end;
                    found = true;
                }
                prev_end = v[1];
                v[0] = v[1] = 0;
                field = 0;
            } else if (field < 2) {
                int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
                if (d >= 0)
                    v[field] = v[field] << 4 | (uintptr_t)d;
                else
                    field++;
            }
        }
        if (found)
            break;
    }
    syscall(SYS_close, fd);
    return found;
}

/* The main thread's descriptor, taken at start-up on it (0: cprof started
 * on another thread, as under attach; then "tid == pid" tells). A child
 * forked from another thread is not its main thread, though its tid is
 * its pid: its only thread runs on the forking thread's stack. */
static uintptr_t main_self;

void stackbounds_init(void)
{
    if (syscall(SYS_gettid) == getpid()) {
        main_self = (uintptr_t)pthread_self();
#ifndef __GLIBC__
        main_stack_addr = (uintptr_t)__builtin_frame_address(0);
#endif
    }
}

static bool on_main_thread(void)
{
    return main_self ? (uintptr_t)pthread_self() == main_self : syscall(SYS_gettid) == getpid();
}

bool stackbounds_learn(rt_thread_t *t)
{
    int saved = errno;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0), lo = 0, hi = 0, below = 0;
    bool kept = false;
    if (on_main_thread() && find_mapping(MAIN_STACK_ADDR, &lo, &hi, &below)) {
        /* The main stack grows down on demand: from its top as far as
         * the limit, and never into the mapping below. Its bounds stay
         * the same wherever this walk runs (walks elsewhere go to
         * libunwind). */
        struct rlimit rl;
        lo = below;
        if (syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur < hi && hi - rl.rlim_cur > lo)
            lo = hi - rl.rlim_cur;
        kept = true;
    } else if (find_mapping(sp, &lo, &hi, &below)) {
        /* Another thread: the mapping it runs on is its own stack, to
         * keep, only if it also holds its descriptor, which glibc puts at
         * the top of every thread's stack (its own or the program's,
         * pthread_attr_setstack). Else it runs on a coroutine's stack or a
         * sigaltstack, which may be unmapped and its range reused by a
         * smaller one: those bounds hold for this walk only, and the next
         * walk reads the maps again (a cost only while a thread cprof did
         * not see start has not yet been sampled on its own stack). */
        uintptr_t self = (uintptr_t)pthread_self();
        kept = self >= lo && self < hi;
    }
    if (!hi)
        lo = hi = 1; /* unknown: an empty range, not asked again */
    t->stack_once = !kept && hi > lo;
    errno = saved;
    t->stack_lo = lo;
    t->stack_hi = hi;
    return hi > lo;
}

void stackbounds_learn_started(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        rt_self.stack_lo = (uintptr_t)addr;
        rt_self.stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}
