/* cpu_handler.c — what one CPU-profile sample costs the interrupted thread,
 * measured without the noise of whole-program timings: the thread sends
 * itself SIGPROFs that look like cprof's timer signals (SI_TIMER with the
 * ring's cookie, through rt_tgsigqueueinfo) at a given stack depth, and
 * times on its own CPU clock
 *   - the sending alone (SIGPROF blocked: nothing delivered),
 *   - delivery and return with the handler doing nothing (recording off),
 *   - the handler unwinding into the ring (recording on, frame caches warm).
 * Linked with src/runtime/cpuring.c, arena.c, rt.c and libunwind; the best
 * of five rounds is printed.
 *
 *   cpu_handler SIGNALS DEPTH */
#include "runtime/cpuring.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int n;
static pid_t pid, tid;

static double thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double per_signal(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = SIGPROF;
    si.si_code = SI_TIMER;
    si.si_value.sival_ptr = cpuring_cookie();
    cpuring_sample_t s;
    double t0 = thread_cpu_ns();
    for (int i = 0; i < n; i++) {
        syscall(SYS_rt_tgsigqueueinfo, pid, tid, SIGPROF, &si);
        while (cpuring_peek(&s))
            cpuring_release();
    }
    return (thread_cpu_ns() - t0) / n;
}

__attribute__((noinline)) static double at_depth(int d)
{
    double r = d ? at_depth(d - 1) : per_signal();
    __asm__ volatile("" ::: "memory"); /* a real frame per level */
    return r;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (n = atoi(argv[1])) <= 0) {
        fprintf(stderr, "usage: %s SIGNALS DEPTH\n", argv[0]);
        return 2;
    }
    int depth = atoi(argv[2]);
    pid = getpid();
    tid = (pid_t)syscall(SYS_gettid);
    cpuring_prepare();
    if (cpuring_init(64) < 0)
        return 1;
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    double send = 1e18, off = 1e18, on = 1e18, x;
    for (int round = 0; round < 5; round++) {
        sigprocmask(SIG_BLOCK, &prof, NULL);
        if ((x = at_depth(depth)) < send)
            send = x;
        struct timespec zero = {0, 0};
        sigtimedwait(&prof, NULL, &zero); /* the one left pending */
        sigprocmask(SIG_UNBLOCK, &prof, NULL);
        cpuring_enable(false);
        if ((x = at_depth(depth)) < off)
            off = x;
        cpuring_enable(true);
        if ((x = at_depth(depth)) < on)
            on = x;
        cpuring_enable(false);
    }
    printf("  %3d frames: send %5.0f ns, delivery+return %5.0f ns, unwind+ring %5.0f ns\n",
           depth + 5, send, off - send, on - off);
    return 0;
}
