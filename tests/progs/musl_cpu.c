/* musl_cpu.c — CPU in known functions, for the musl runtime's CPU profile
 * (tests/e2e/musl_profiles.sh): hot() does 4 times the work of warm(),
 * the same loop, so 4/5 of the CPU time they take (about 0.8 and 0.2 s
 * here). The work is counted, not timed: a loop that reads a CPU clock
 * makes a system call, and on a loaded machine the profiler's samples
 * gather at its return (one musl's C library unwinds no further from)
 * instead of falling where the CPU time goes. Prints "done 2" when both
 * did work, with or without the profiler. */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))
#define ROUNDS 9000 /* warm()'s work, in rounds of 20000 steps */

static volatile unsigned long sink; /* the work is kept */

/* A call, so that spin() is not a leaf: the compiler gives a leaf no frame
 * pointer, and a frame-pointer walk from it loses its caller. */
static NOINLINE void keep(unsigned long x)
{
    sink = x;
}

static NOINLINE unsigned long spin(long rounds, unsigned long x)
{
    for (long r = 0; r < rounds; r++) {
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
        keep(x);
    }
    return rounds > 0;
}

NOINLINE unsigned long hot(void)
{
    return spin(4 * ROUNDS, 1);
}

NOINLINE unsigned long warm(void)
{
    return spin(ROUNDS, 2);
}

int main(void)
{
    unsigned long a = hot(), b = warm();
    printf("done %lu\n", a + b);
    return 0;
}
