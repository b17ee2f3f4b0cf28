/* dlopen_storm.c — the loader-lock deadlock of heap profilers
 * (gperftools#225, #1210): 2 threads dlopen a small library, call into it
 * (touching its thread-local storage) and dlclose it, in a loop, while 4
 * other threads allocate and free (and unwind, when sampled) without
 * pause. Runs for argv[2] seconds (default 2) and until MIN_CYCLES and
 * MIN_ALLOCS are reached; argv[1] is the library. Prints "ok <dlopen
 * cycles> <allocations>": reaching it at all means no deadlock. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOPEN 2
#define NALLOC 4
/* The least work a run does, however loaded the machine: the test wants
 * more than 100 cycles and 1000 allocations, and alloc_round sampled at the
 * default rate: 17 allocations make a round of ~21.1 KB, so 17,000 are ~40
 * times the rate, and the odds of no sample e^-40. */
#define MIN_CYCLES 200
#define MIN_ALLOCS 17000

static const char *libpath;
static volatile int stop;
static long cycles[NOPEN], allocs[NALLOC];
static int failed;

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static void *opener(void *arg)
{
    long *n = arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        void *h = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        int (*work)(int) = (int (*)(int))dlsym(h, "dlopen_lib_work");
        if (!work || work(20) < 0) {
            fprintf(stderr, "dlsym: %s\n", dlerror());
            __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
        }
        dlclose(h);
        __atomic_store_n(n, *n + 1, __ATOMIC_RELAXED); /* main reads it */
    }
    return NULL;
}

__attribute__((noinline)) static void alloc_round(unsigned i)
{
    void *p[16];
    for (int k = 0; k < 16; k++)
        p[k] = E(malloc(16 + ((i + (unsigned)k) % 32) * 64));
    p[3] = E(realloc(p[3], 5000));
    for (int k = 0; k < 16; k++)
        free(p[k]);
}

static void *allocator(void *arg)
{
    long *n = arg;
    for (unsigned i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
        alloc_round(i);
        __atomic_store_n(n, *n + 17, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dlopen_storm LIB [SECONDS]\n");
        return 2;
    }
    libpath = argv[1];
    double secs = argc > 2 ? atof(argv[2]) : 2;
    pthread_t o[NOPEN], a[NALLOC];
    for (int i = 0; i < NOPEN; i++)
        pthread_create(&o[i], NULL, opener, &cycles[i]);
    for (int i = 0; i < NALLOC; i++)
        pthread_create(&a[i], NULL, allocator, &allocs[i]);
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    struct timespec tick = {0, 1000000};
    for (;;) {
        long c = 0, a = 0;
        for (int i = 0; i < NOPEN; i++)
            c += __atomic_load_n(&cycles[i], __ATOMIC_RELAXED);
        for (int i = 0; i < NALLOC; i++)
            a += __atomic_load_n(&allocs[i], __ATOMIC_RELAXED);
        if ((c >= MIN_CYCLES && a >= MIN_ALLOCS) || __atomic_load_n(&failed, __ATOMIC_RELAXED))
            break;
        nanosleep(&tick, NULL);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    long nc = 0, na = 0;
    for (int i = 0; i < NOPEN; i++) {
        pthread_join(o[i], NULL);
        nc += cycles[i];
    }
    for (int i = 0; i < NALLOC; i++) {
        pthread_join(a[i], NULL);
        na += allocs[i];
    }
    if (failed)
        return 1;
    printf("ok %ld %ld\n", nc, na);
    return 0;
}
