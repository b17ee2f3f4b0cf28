/* usdt_heap.c — allocations for the otel_memory probes' test
 * (tests/e2e/usdt_probes.sh): prints "ready" and waits for a line on stdin
 * (the tracer attaches meanwhile), then allocates blocks of many sizes —
 * some larger than the sampling rate — frees half of them, and prints what
 * it allocated. The heap profile is written at exit (CPROF_HEAP_PROFILE). */
#include <stdio.h>
#include <stdlib.h>

#define N 20000

static void *volatile keep[N]; /* volatile: every malloc stays */

static __attribute__((noinline)) unsigned long long work(void)
{
    unsigned long long bytes = 0;
    for (int i = 0; i < N; i++) {
        size_t size = i % 100 == 0 ? (size_t)(64 << 10) + (size_t)i : (size_t)(16 + (i * 37) % 4000);
        if (!(keep[i] = malloc(size)))
            exit(3);
        bytes += size;
    }
    for (int i = 0; i < N; i += 2)
        free(keep[i]);
    return bytes;
}

int main(void)
{
    char line[16];
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        return 2;
    printf("allocated %d blocks, %llu bytes\n", N, work());
    return 0;
}
