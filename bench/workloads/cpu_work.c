/* cpu_work.c — a CPU-bound workload for bench/cpu_overhead.sh: THREADS
 * threads (default 2) each run ROUNDS rounds of a small call tree — a
 * recursive quicksort of 50 000 pseudo-random integers, an FNV-1a hash of
 * the result, and a recursive Fibonacci number — so that a CPU profiler
 * sees stacks several frames deep and a little allocation. Prints a
 * checksum that does not depend on the thread count's timing.
 *
 *   cpu_work ROUNDS [THREADS] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 50000

static int rounds;

static void swap(uint32_t *a, uint32_t *b)
{
    uint32_t t = *a;
    *a = *b;
    *b = t;
}

__attribute__((noinline)) static void quicksort(uint32_t *v, long lo, long hi)
{
    while (lo < hi) {
        uint32_t pivot = v[lo + (hi - lo) / 2];
        long i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j)
                swap(&v[i++], &v[j--]);
        }
        if (j - lo < hi - i) {
            quicksort(v, lo, j);
            lo = i;
        } else {
            quicksort(v, i, hi);
            hi = j;
        }
    }
}

__attribute__((noinline)) static uint64_t fnv(const uint32_t *v, long n)
{
    uint64_t h = 1469598103934665603ull;
    for (long i = 0; i < n; i++) {
        h ^= v[i];
        h *= 1099511628211ull;
    }
    return h;
}

__attribute__((noinline)) static uint64_t fib(int n)
{
    return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static uint64_t one_round(uint64_t seed)
{
    uint32_t *v = malloc(N * sizeof(*v));
    if (!v)
        abort();
    uint64_t x = seed | 1;
    for (long i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = (uint32_t)x;
    }
    quicksort(v, 0, N - 1);
    uint64_t h = fnv(v, N) ^ fib(24);
    free(v);
    return h;
}

static void *worker(void *arg)
{
    uint64_t *sum = arg, s = 0;
    for (int r = 0; r < rounds; r++)
        s += one_round((uint64_t)r * 0x9e3779b97f4a7c15ull + 1);
    *sum = s;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (rounds = atoi(argv[1])) <= 0) {
        fprintf(stderr, "usage: %s ROUNDS [THREADS]\n", argv[0]);
        return 2;
    }
    int nt = argc > 2 ? atoi(argv[2]) : 2;
    if (nt < 1 || nt > 64)
        nt = 2;
    pthread_t t[64];
    uint64_t sums[64];
    for (int i = 0; i < nt; i++)
        pthread_create(&t[i], NULL, worker, &sums[i]);
    uint64_t total = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i], NULL);
        total += sums[i];
    }
    printf("%016llx\n", (unsigned long long)total);
    return 0;
}
