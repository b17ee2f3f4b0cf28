/* arm64_cpu.c — known CPU time in two functions, for the CPU profile under
 * qemu-aarch64 (tests/e2e/arm64_cpu.sh): spin_a burns twice the thread CPU
 * time spin_b does, each through leaf(), a function that sets up no frame
 * (its caller is found from x30, the link register). Prints
 *   CPU <spin_a ms> <spin_b ms>
 * as CLOCK_THREAD_CPUTIME_ID measured them.
 *   arm64_cpu [B_MS]   (default 500) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A leaf: no call, so no frame record; volatile keeps the loop. */
__attribute__((noinline)) unsigned long leaf(unsigned long x)
{
    volatile unsigned long v = x;
    for (int i = 0; i < 20000; i++)
        v = v * 6364136223846793005ul + 1442695040888963407ul;
    return v;
}

/* Spins for ms of this thread's CPU time; returns what it spent. */
__attribute__((noinline)) double spin_a(double ms, unsigned long *sink)
{
    double t0 = thread_ms(), t;
    while ((t = thread_ms()) - t0 < ms)
        *sink += leaf(*sink);
    return t - t0;
}

__attribute__((noinline)) double spin_b(double ms, unsigned long *sink)
{
    double t0 = thread_ms(), t;
    while ((t = thread_ms()) - t0 < ms)
        *sink += leaf(*sink);
    return t - t0;
}

int main(int argc, char **argv)
{
    double b = argc > 1 ? atof(argv[1]) : 500;
    unsigned long sink = 1;
    double a_ms = spin_a(2 * b, &sink);
    double b_ms = spin_b(b, &sink);
    printf("CPU %.0f %.0f\n", a_ms, b_ms);
    return sink == 42; /* sink is read: the loops stay */
}
