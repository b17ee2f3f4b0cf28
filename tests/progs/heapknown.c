/* heapknown.c — allocates known byte totals from distinct functions, through
 * every hooked entry point and from several threads, keeps some and frees
 * some, then prints the truth: one line per function,
 *   TRUTH <function> <alloc_objects> <alloc_bytes> <inuse_objects> <inuse_bytes>
 * Bytes are the sizes asked for. Built with and without frame pointers,
 * preloaded or linked with -lcprof (then it also writes the profile itself
 * through the API when given a path). */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef LINKED
#include <cprof.h>
#endif

#define NOINLINE __attribute__((noinline))
#define KEEP(p) do { if (nkept < (int)(sizeof(kept) / sizeof(kept[0]))) kept[nkept++] = E(p); } while (0)

/* The compiler may delete a malloc whose result is never read (and a
 * malloc/free pair): every pointer escapes through here. */
static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static void *kept[100000];
static int nkept;
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;

static void truth(const char *fn, long ao, long ab, long io, long ib)
{
    printf("TRUTH %s %ld %ld %ld %ld\n", fn, ao, ab, io, ib);
}

NOINLINE void use_malloc_keep(void)
{
    for (int i = 0; i < 100; i++)
        KEEP(malloc(1000));
    truth(__func__, 100, 100000, 100, 100000);
}

NOINLINE void use_malloc_free(void)
{
    for (int i = 0; i < 1000; i++) {
        char *p = E(malloc(333));
        p[0] = 1;
        free(p);
    }
    truth(__func__, 1000, 333000, 0, 0);
}

NOINLINE void use_calloc(void)
{
    for (int i = 0; i < 50; i++) {
        void *p = E(calloc(10, 77));
        if (i % 2)
            free(p);
        else
            KEEP(p);
    }
    truth(__func__, 50, 50 * 770, 25, 25 * 770);
}

NOINLINE void use_realloc(void)
{
    /* Each realloc frees the old block and allocates the new size. */
    for (int i = 0; i < 10; i++) {
        char *p = E(malloc(64));
        p = E(realloc(p, 128));
        p = E(realloc(p, 4096));
        KEEP(p);
    }
    truth(__func__, 30, 10 * (64 + 128 + 4096), 10, 10 * 4096);
}

NOINLINE void use_reallocarray(void)
{
    for (int i = 0; i < 10; i++) {
        int *p = E(reallocarray(NULL, 100, sizeof(int)));
        p = E(reallocarray(p, 200, sizeof(int)));
        free(p);
    }
    truth(__func__, 20, 10 * (400 + 800), 0, 0);
}

NOINLINE void use_aligned(void)
{
    for (int i = 0; i < 10; i++) {
        void *p;
        if (posix_memalign(&p, 64, 5000) == 0)
            KEEP(p);
        KEEP(aligned_alloc(128, 1024));
        free(E(memalign(256, 300)));
        KEEP(valloc(100));
    }
    truth(__func__, 40, 10 * (5000 + 1024 + 300 + 100), 30, 10 * (5000 + 1024 + 100));
}

NOINLINE void use_large(void)
{
    for (int i = 0; i < 3; i++)
        KEEP(malloc(32 << 20));
    truth(__func__, 3, 3L * (32 << 20), 3, 3L * (32 << 20));
}

/* Threads: each allocates 1000 x 2048 and frees every other one. */
NOINLINE void thread_work(void)
{
    void *local[1000];
    for (int i = 0; i < 1000; i++)
        local[i] = E(malloc(2048));
    for (int i = 0; i < 1000; i += 2)
        free(local[i]);
    pthread_mutex_lock(&keep_lock);
    for (int i = 1; i < 1000; i += 2)
        KEEP(local[i]);
    pthread_mutex_unlock(&keep_lock);
}

static void *thread_main(void *arg)
{
    (void)arg;
    thread_work();
    return NULL;
}

/* Allocated on a thread, freed by main: the free must be credited. */
static void *cross[500];

NOINLINE void cross_alloc(void)
{
    for (int i = 0; i < 500; i++)
        cross[i] = E(malloc(512));
}

static void *cross_main(void *arg)
{
    (void)arg;
    cross_alloc();
    return NULL;
}

int main(int argc, char **argv)
{
    use_malloc_keep();
    use_malloc_free();
    use_calloc();
    use_realloc();
    use_reallocarray();
    use_aligned();
    use_large();
    enum { NT = 4 };
    pthread_t th[NT], ct;
    for (int i = 0; i < NT; i++)
        pthread_create(&th[i], NULL, thread_main, NULL);
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    truth("thread_work", NT * 1000, NT * 1000 * 2048L, NT * 500, NT * 500 * 2048L);
    pthread_create(&ct, NULL, cross_main, NULL);
    pthread_join(ct, NULL);
    for (int i = 0; i < 500; i++)
        free(cross[i]);
    truth("cross_alloc", 500, 500 * 512, 0, 0);
    fflush(stdout);
#ifdef LINKED
    if (argc > 1) {
        int rc = cprof_heap_profile_write(argv[1]);
        if (rc != 0) {
            fprintf(stderr, "cprof_heap_profile_write: %d\n", rc);
            return 1;
        }
    }
#else
    (void)argc;
    (void)argv;
#endif
    return 0;
}
