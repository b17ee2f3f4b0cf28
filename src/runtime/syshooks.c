/* syshooks.c — the blocking system calls and sleeps cprof interposes for
 * the execution trace (trace.h): read, write, readv, writev, the socket
 * calls (recv*, send*, accept, accept4, connect), poll, ppoll, select,
 * pselect, epoll_wait, epoll_pwait, nanosleep, clock_nanosleep, usleep.
 * Each forwards to the next definition in the chain (dlsym(RTLD_NEXT),
 * resolved together on first use or at the trace's init), as lockhooks.c
 * does for the pthread locks.
 *
 * What the trace gets, as Go's runtime writes it: a sleep is GoSleep; a
 * call that waited at least BLOCK_NS (Go's sysmon takes the P of a
 * syscall after 20 us) is a network wait (GoBlockNet) when it waited on a
 * socket (the socket calls, epoll; read/write/poll of a socket: one fstat,
 * only for calls that waited) and else a blocking syscall (GoSysCall,
 * GoSysBlock, GoSysExit); a shorter call is GoSysCall alone. select and
 * pselect are system calls (their sets hold the result after the call).
 * Each with the calling stack, captured after the call (the caller's
 * frame is the same), so nothing is added before the real call.
 *
 * Cost: with no trace running a hook is one relaxed load (trace_active)
 * and the forward; the real call's result and errno are untouched. With a
 * trace: two clock reads, an unwind and the events per call.
 *
 * Reentrancy and signals: the wrapped calls are async-signal-safe, and so
 * is the forward. Recording is skipped when cprof runs on the thread
 * (guard: cprof's own writes, libunwind's pipe), when a handler
 * interrupted libunwind (unwinding) or a holder of a cprof lock (locks);
 * it runs with the guard raised, so a handler interrupting it forwards. A
 * handler's call otherwise records like the program's, with only cprof's
 * own locks and the stack walk the CPU profiler's handler also does. */
#include "syshooks.h"

#include "rt.h"
#include "trace.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BLOCK_NS 20000 /* a call this long blocked (Go's sysmon retake) */
#define POLL_LOOK 64   /* poll fds looked at for a socket */

static struct {
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*write)(int, const void *, size_t);
    ssize_t (*readv)(int, const struct iovec *, int);
    ssize_t (*writev)(int, const struct iovec *, int);
    ssize_t (*recv)(int, void *, size_t, int);
    ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
    ssize_t (*recvmsg)(int, struct msghdr *, int);
    ssize_t (*send)(int, const void *, size_t, int);
    ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
    ssize_t (*sendmsg)(int, const struct msghdr *, int);
    int (*accept)(int, struct sockaddr *, socklen_t *);
    int (*accept4)(int, struct sockaddr *, socklen_t *, int);
    int (*connect)(int, const struct sockaddr *, socklen_t);
    int (*poll)(struct pollfd *, nfds_t, int);
    int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
    int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
    int (*epoll_wait)(int, struct epoll_event *, int, int);
    int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
    int (*nanosleep)(const struct timespec *, struct timespec *);
    int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
    int (*usleep)(useconds_t);
} nx;

static int resolved; /* 1 once nx is filled (release) */

#define NEXT(f) (*(void **)&n.f = dlsym(RTLD_NEXT, #f))

static __attribute__((noinline)) void resolve(void)
{
    uint32_t g = rt_guard_enter();
    __typeof__(nx) n;
    NEXT(read), NEXT(write), NEXT(readv), NEXT(writev), NEXT(recv), NEXT(recvfrom);
    NEXT(recvmsg), NEXT(send), NEXT(sendto), NEXT(sendmsg), NEXT(accept), NEXT(accept4);
    NEXT(connect), NEXT(poll), NEXT(ppoll), NEXT(select), NEXT(pselect), NEXT(epoll_wait);
    NEXT(epoll_pwait), NEXT(nanosleep), NEXT(clock_nanosleep), NEXT(usleep);
    void **f = (void **)&n;
    for (size_t i = 0; i < sizeof(n) / sizeof(void *); i++) {
        if (!f[i]) {
            rt_warn("cannot find the next system call functions; aborting");
            abort();
        }
    }
    /* Racing threads store the same values. */
    nx = n;
    __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
    rt_guard_leave(g);
}

void syshooks_init(void)
{
    if (!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
        resolve();
}

/* --- what a call waited on ------------------------------------------------ */

enum { K_SLEEP, K_NET, K_FD, K_POLL, K_SYS };

static bool is_socket(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static bool polls_socket(const struct pollfd *fds, nfds_t n)
{
    for (nfds_t i = 0; i < n && i < POLL_LOOK; i++)
        if (is_socket(fds[i].fd))
            return true;
    return false;
}

/* The trace's event for a call of class k on fd (or the poll set) that
 * took t1 - t0. */
static int event_kind(int k, int fd, const struct pollfd *fds, nfds_t n, int64_t t0, int64_t t1)
{
    if (k == K_SLEEP)
        return TRACE_SLEEP;
    if (t1 - t0 < BLOCK_NS)
        return TRACE_SYSCALL;
    bool net = k == K_NET || (k == K_FD && is_socket(fd)) || (k == K_POLL && polls_socket(fds, n));
    return net ? TRACE_BLOCK_NET : TRACE_SYSCALL_BLOCK;
}

/* After the call: its events, with the caller's stack. errno is kept. */
static __attribute__((noinline)) void record(int k, int fd, const struct pollfd *fds, nfds_t n,
                                             int64_t t0)
{
    int saved = errno;
    int64_t t1 = rt_now_ns();
    rt_self.guard++;
    uintptr_t pcs[UNWIND_MAX_DEPTH];
    int depth = unwind_capture(pcs);
    trace_waited(event_kind(k, fd, fds, n, t0, t1), t0, t1, pcs, depth);
    rt_self.guard--;
    errno = saved;
}

/* Whether this call is traced: a trace runs, and cprof is not on this
 * thread (its own calls, libunwind, a handler interrupting a cprof lock's
 * holder). */
static inline bool tracing(void)
{
    if (RT_UNLIKELY(!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)))
        resolve();
    return trace_on() && !rt_self.guard && !rt_self.unwinding && !rt_self.locks;
}

#define UNPAREN(...) __VA_ARGS__

/* One hook per call: with no trace, the load and the forward (a tail
 * call); else the call timed, then recorded. fd and fds name what it
 * waits on (-1 and NULL when the class says it). */
#define SYS_HOOK(type, name, k, fd, fds, n, args, ...)                                           \
    static __attribute__((noinline)) type name##_traced(__VA_ARGS__)                            \
    {                                                                                           \
        if (!tracing())                                                                         \
            return nx.name args;                                                                \
        int64_t t0 = rt_now_ns();                                                               \
        type rc = nx.name args;                                                                 \
        record(k, fd, fds, n, t0);                                                              \
        return rc;                                                                              \
    }                                                                                           \
    RT_EXPORT type name(__VA_ARGS__)                                                            \
    {                                                                                           \
        if (RT_LIKELY(!trace_on()) && RT_LIKELY(nx.name != NULL))                               \
            return nx.name args;                                                                \
        return name##_traced(UNPAREN args);                                                     \
    }

SYS_HOOK(ssize_t, read, K_FD, fd, NULL, 0, (fd, b, c), int fd, void *b, size_t c)
SYS_HOOK(ssize_t, write, K_FD, fd, NULL, 0, (fd, b, c), int fd, const void *b, size_t c)
SYS_HOOK(ssize_t, readv, K_FD, fd, NULL, 0, (fd, v, c), int fd, const struct iovec *v, int c)
SYS_HOOK(ssize_t, writev, K_FD, fd, NULL, 0, (fd, v, c), int fd, const struct iovec *v, int c)
SYS_HOOK(ssize_t, recv, K_NET, -1, NULL, 0, (fd, b, c, f), int fd, void *b, size_t c, int f)
SYS_HOOK(ssize_t, recvfrom, K_NET, -1, NULL, 0, (fd, b, c, f, a, l), int fd, void *b, size_t c,
         int f, struct sockaddr *a, socklen_t *l)
SYS_HOOK(ssize_t, recvmsg, K_NET, -1, NULL, 0, (fd, m, f), int fd, struct msghdr *m, int f)
SYS_HOOK(ssize_t, send, K_NET, -1, NULL, 0, (fd, b, c, f), int fd, const void *b, size_t c, int f)
SYS_HOOK(ssize_t, sendto, K_NET, -1, NULL, 0, (fd, b, c, f, a, l), int fd, const void *b,
         size_t c, int f, const struct sockaddr *a, socklen_t l)
SYS_HOOK(ssize_t, sendmsg, K_NET, -1, NULL, 0, (fd, m, f), int fd, const struct msghdr *m, int f)
SYS_HOOK(int, accept, K_NET, -1, NULL, 0, (fd, a, l), int fd, struct sockaddr *a, socklen_t *l)
SYS_HOOK(int, accept4, K_NET, -1, NULL, 0, (fd, a, l, f), int fd, struct sockaddr *a,
         socklen_t *l, int f)
SYS_HOOK(int, connect, K_NET, -1, NULL, 0, (fd, a, l), int fd, const struct sockaddr *a,
         socklen_t l)
SYS_HOOK(int, poll, K_POLL, -1, fds, n, (fds, n, ms), struct pollfd *fds, nfds_t n, int ms)
SYS_HOOK(int, ppoll, K_POLL, -1, fds, n, (fds, n, ts, m), struct pollfd *fds, nfds_t n,
         const struct timespec *ts, const sigset_t *m)
SYS_HOOK(int, select, K_SYS, -1, NULL, 0, (n, r, w, e, tv), int n, fd_set *r, fd_set *w,
         fd_set *e, struct timeval *tv)
SYS_HOOK(int, pselect, K_SYS, -1, NULL, 0, (n, r, w, e, ts, m), int n, fd_set *r, fd_set *w,
         fd_set *e, const struct timespec *ts, const sigset_t *m)
SYS_HOOK(int, epoll_wait, K_NET, -1, NULL, 0, (fd, ev, n, ms), int fd, struct epoll_event *ev,
         int n, int ms)
SYS_HOOK(int, epoll_pwait, K_NET, -1, NULL, 0, (fd, ev, n, ms, m), int fd,
         struct epoll_event *ev, int n, int ms, const sigset_t *m)
SYS_HOOK(int, nanosleep, K_SLEEP, -1, NULL, 0, (req, rem), const struct timespec *req,
         struct timespec *rem)
SYS_HOOK(int, clock_nanosleep, K_SLEEP, -1, NULL, 0, (c, f, req, rem), clockid_t c, int f,
         const struct timespec *req, struct timespec *rem)
SYS_HOOK(int, usleep, K_SLEEP, -1, NULL, 0, (us), useconds_t us)
