/* rt.c — the runtime's lock slow paths and its one-line warnings. */
#include "rt.h"

#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread rt_thread_t rt_self __attribute__((tls_model("initial-exec"))) = {.slow = 1};
/* Filled by hooks.c when the next definitions are resolved (rt.h). */
rt_next_t rt_next;
bool rt_glibc_chunks;

void rt_lock_slow(rt_lock_t *l)
{
    /* Spin briefly: critical sections are a few table operations. */
    for (int i = 0; i < 100; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&l->state, &expected, 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    /* Drepper's "futexes are tricky" mutex #3. */
    while (__atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void rt_unlock_wake(rt_lock_t *l)
{
    syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void rt_warn(const char *fmt, ...)
{
    char buf[512];
    int n = snprintf(buf, sizeof(buf), "cprof: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + ((size_t)m < sizeof(buf) - (size_t)n - 1 ? (size_t)m : sizeof(buf) - (size_t)n - 2);
    buf[len++] = '\n';
    ssize_t w = write(2, buf, len);
    (void)w;
}
