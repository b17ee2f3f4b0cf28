/* unwfds.c — libunwind's memory-validation pipe (see unwfds.h). */
#include "unwfds.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef CPROF_NO_LIBUNWIND
/* Built without libunwind (the musl runtime, Makefile): no pipe, and no
 * libunwind that may run: every caller walks another way. */
void unwfds_init(void)
{
}

bool unwfds_ok_sigsafe(void)
{
    return false;
}
#else
#define UNW_LOCAL_ONLY
#include <libunwind.h>

static int fds[2] = {-1, -1}; /* libunwind's read and write ends; -1: unknown */
static dev_t pipe_dev;
static ino_t pipe_ino;        /* the pipe's inode: both ends share it */

/* Once a reopen has failed, the kernel hands the lowest free numbers out
 * below libunwind's (a daemon closed 0-2): every later try would take and
 * give back those numbers on each walk, under the program's open() that
 * expects them. So one try only; then the pipe is lost for good. */
enum { PIPE_KEPT, PIPE_REOPENING, PIPE_LOST };
static int pipe_state = PIPE_KEPT;

/* Whether fd is the pipe with that inode: one fstat, the check on every
 * libunwind walk. */
static bool same_pipe(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return syscall(SYS_fstat, fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_ino == ino &&
           st.st_dev == dev;
}

/* Whether fd is a non-blocking pipe end opened with mode (O_RDONLY or
 * O_WRONLY), as libunwind's are. */
static bool pipe_end(int fd, int mode)
{
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    return fl >= 0 && (fl & O_ACCMODE) == mode && (fl & O_NONBLOCK);
}

void unwfds_init(void)
{
    /* libunwind opens its pipe with pipe2 on its first use, at the two
     * lowest free numbers: the pair a probe gets now. */
    int probe[2];
    if (pipe2(probe, O_CLOEXEC) != 0)
        return;
    close(probe[0]);
    close(probe[1]);
    /* Starts libunwind, with no cache of unwind rules. The global cache
     * holds a mutex (every signal blocked) across dl_iterate_phdr, so a
     * handler that unwinds (CPU sample, thread dump) would hold it while
     * waiting for the loader's lock: a thread that holds that lock (in a
     * dl_iterate_phdr callback: cprof's cfi walk, a C++ throw) and takes
     * a signal then waits for the mutex, and neither moves again.
     * UNW_CACHE_PER_THREAD would take no mutex, but a libunwind built
     * without per-thread caches (Debian's 1.6) silently turns it into
     * UNW_CACHE_GLOBAL. unw_backtrace's per-thread frame cache, which
     * takes no lock, still spares most lookups. */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE);
    struct stat st;
    if (fstat(probe[0], &st) != 0 || !same_pipe(probe[1], st.st_dev, st.st_ino) ||
        !pipe_end(probe[0], O_RDONLY) || !pipe_end(probe[1], O_WRONLY))
        return; /* started before cprof: its pipe is elsewhere */
    pipe_dev = st.st_dev;
    pipe_ino = st.st_ino;
    fds[0] = probe[0];
    __atomic_store_n(&fds[1], probe[1], __ATOMIC_RELEASE);
}

/* Both ends closed and free: a new pipe at the same numbers. */
static bool reopen(void)
{
    int p[2];
    if (syscall(SYS_pipe2, p, O_CLOEXEC | O_NONBLOCK) != 0)
        return false;
    struct stat st;
    if (p[0] != fds[0] || p[1] != fds[1] || syscall(SYS_fstat, p[0], &st) != 0) {
        syscall(SYS_close, p[0]);
        syscall(SYS_close, p[1]);
        return false;
    }
    __atomic_store_n(&pipe_dev, st.st_dev, __ATOMIC_RELAXED);
    __atomic_store_n(&pipe_ino, st.st_ino, __ATOMIC_RELAXED);
    return true;
}

bool unwfds_ok_sigsafe(void)
{
    if (__atomic_load_n(&fds[1], __ATOMIC_ACQUIRE) < 0)
        return true;
    if (__atomic_load_n(&pipe_state, __ATOMIC_ACQUIRE) != PIPE_KEPT)
        return false; /* lost, or another walk is reopening it */
    int saved = errno;
    dev_t dev = __atomic_load_n(&pipe_dev, __ATOMIC_RELAXED);
    ino_t ino = __atomic_load_n(&pipe_ino, __ATOMIC_RELAXED);
    bool ok = same_pipe(fds[0], dev, ino) && same_pipe(fds[1], dev, ino);
    int kept = PIPE_KEPT;
    if (!ok && syscall(SYS_fcntl, fds[0], F_GETFD) < 0 && syscall(SYS_fcntl, fds[1], F_GETFD) < 0 &&
        __atomic_compare_exchange_n(&pipe_state, &kept, PIPE_REOPENING, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
        /* One walker at a time: a second pipe2 beside the first would get
         * other numbers and call the pipe lost. */
        ok = reopen();
        __atomic_store_n(&pipe_state, ok ? PIPE_KEPT : PIPE_LOST, __ATOMIC_RELEASE);
    }
    errno = saved;
    return ok;
}
#endif
