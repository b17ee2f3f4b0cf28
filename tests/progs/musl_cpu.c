/* musl_cpu.c — CPU in known functions, for the musl runtime's CPU profile
 * (tests/e2e/musl_profiles.sh): hot() runs until the process has used
 * 600 ms of CPU, then warm() for 150 ms more (CPU time, on the process's
 * CPU clock: a loaded machine makes the run longer, not the shares
 * different). Prints "done 2" when both did work, with or without the
 * profiler. */
#include <stdio.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile unsigned long sink; /* the work is kept */

/* Works until the process's CPU clock reads until_ms; 1 if it did any
 * (how much varies with the machine, the output must not). */
static NOINLINE unsigned long spin(double until_ms, unsigned long x)
{
    unsigned long rounds = 0;
    while (cpu_ms() < until_ms) {
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
        sink = x;
        rounds++;
    }
    return rounds > 0;
}

NOINLINE unsigned long hot(void)
{
    return spin(600, 1);
}

NOINLINE unsigned long warm(void)
{
    return spin(750, 2);
}

int main(void)
{
    unsigned long a = hot(), b = warm();
    printf("done %lu\n", a + b);
    return 0;
}
