/* arm64_plt.c — thread CPU time spent calling a C library function through
 * its PLT stub, for tests/e2e/arm64_plt.sh: plt_spin runs a straight block
 * of arithmetic that ends in a call of labs() (built with -fno-builtin:
 * a real call, through labs@plt), so many CPU samples interrupt the stub,
 * where no .eh_frame row exists and the return address is still in x30.
 * (qemu-aarch64 delivers a signal at the start of the next translated
 * block: here, mostly the stub's.) Prints
 *   PLT <ms of thread CPU time spent> <calls made>
 *   arm64_plt [MS]   (default 300) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* volatile: each step is a load, a multiply-add and a store, kept. */
#define STEP v = v * 6364136223846793005l + 1442695040888963407l;
#define STEP8 STEP STEP STEP STEP STEP STEP STEP STEP

/* Spins for ms of this thread's CPU time; returns what it spent. */
__attribute__((noinline)) double plt_spin(double ms, long *sink, long *calls)
{
    double t0 = thread_ms(), t;
    do {
        for (int i = 0; i < 1000; i++) {
            volatile long v = *sink;
            STEP8 STEP8 STEP8 STEP8
            *sink = labs(v);
            ++*calls;
        }
    } while ((t = thread_ms()) - t0 < ms);
    return t - t0;
}

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 300;
    long sink = 1, calls = 0;
    double spent = plt_spin(ms, &sink, &calls);
    printf("PLT %.0f %ld\n", spent, calls);
    return sink == 42; /* sink is read: the loop stays */
}
