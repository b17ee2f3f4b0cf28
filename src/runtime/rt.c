/* rt.c — the runtime's futex, its lock slow paths and its one-line warnings. */
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread rt_thread_t rt_self __attribute__((tls_model("initial-exec"))) = {.slow = 1};
/* Filled by allochooks.c when the next definitions are resolved (rt.h). */
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
        rt_cpu_relax();
    }
    /* Drepper's "futexes are tricky" mutex #3. */
    while (__atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE) != 0)
        rt_futex_wait(&l->state, 2, -1);
}

void rt_unlock_wake(rt_lock_t *l)
{
    rt_futex_wake(&l->state, 1);
}

void rt_futex_wait(void *w, uint32_t v, int64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
    syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, timeout_ns < 0 ? NULL : &ts, NULL, 0);
}

void rt_futex_wake(void *w, int n)
{
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* The kernel's signal set (64 bits on x86-64 and arm64): SIGPROF, and
 * each signal added by rt_loader_block. */
static uint64_t loader_sigs = 1ull << (SIGPROF - 1);

void rt_loader_block(int sig)
{
    __atomic_fetch_or(&loader_sigs, 1ull << (sig - 1), __ATOMIC_RELAXED);
}

int rt_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    /* The system call itself: glibc's sigprocmask is interposed by cprof
     * (sigmask.c), and this may run in a handler (aarch64's cfi walk). */
    uint64_t block = __atomic_load_n(&loader_sigs, __ATOMIC_RELAXED), old;
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, &old, sizeof(block));
    int rc = dl_iterate_phdr(cb, arg);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
    return rc;
}

int rt_spawn(void *th, void *(*fn)(void *), const char *name)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (!th)
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&t, &attr, fn, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return -rc;
    pthread_setname_np(t, name);
    if (th)
        *(pthread_t *)th = t;
    return 0;
}

/* The copy of the program's stderr taken at start: a high number, out of
 * the way of the program's own descriptors, close-on-exec. A program that
 * closes every descriptor may since have reused its number for a file of
 * its own: the copy is only written while it is still the same file. */
static int err_fd = -1;
static dev_t err_dev;
static ino_t err_ino;

void rt_warn_init(void)
{
    struct stat st;
    struct rlimit rl;
    if (err_fd >= 0 || fstat(2, &st) < 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    rlim_t high = rl.rlim_cur / 4 * 3;
    err_fd = fcntl(2, F_DUPFD_CLOEXEC, (int)(high > 1000 ? 1000 : high > 10 ? high : 10));
    err_dev = st.st_dev;
    err_ino = st.st_ino;
}

/* The program's errno is left as it was: a message is no error of its. */
static void warn_write(const char *buf, size_t len)
{
    int saved = errno;
    struct stat st;
    if (write(2, buf, len) < 0 && errno == EBADF && err_fd >= 0 && fstat(err_fd, &st) == 0 &&
        st.st_dev == err_dev && st.st_ino == err_ino) {
        ssize_t w = write(err_fd, buf, len);
        (void)w;
    }
    errno = saved;
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
    warn_write(buf, len);
}
