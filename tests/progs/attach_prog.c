/* attach_prog.c — a program for cprof attach, started without the preload:
 *   attach_prog DIR [LIB]
 * 1. before_attach() allocates blocks it keeps, two sleeper threads start;
 *    it writes DIR/ready and waits for DIR/go (the test attaches meanwhile).
 * 2. After the attach: four threads allocate at known sites (site_keep,
 *    site_churn), two fight over a mutex (fight), main frees half of the
 *    blocks from before the attach and reallocs the rest (grow_old); with
 *    LIB, main dlopens it and calls its dlopen_lib_work until the end.
 *    Then DIR/phase2, and spin() burns CPU until DIR/finish appears.
 * 3. Frees everything and prints the truth of phase 2's sites,
 *      TRUTH <function> <alloc_objects> <alloc_bytes> <inuse_objects> <inuse_bytes>
 *    (bytes asked for; inuse as at DIR/phase2), and a checksum of its data:
 *    the same output with and without an attach. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "phases.h"

#define NOINLINE __attribute__((noinline))
#define OLD 2000    /* blocks kept from before the attach */
#define THREADS 4
#define KEEP 100    /* per thread */
#define CHURN 1000  /* per thread */

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static char *old[OLD];
static char *kept[THREADS][KEEP];
static unsigned long checksum;
static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fight_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int finished;

NOINLINE static void before_attach(void)
{
    for (int i = 0; i < OLD; i++) {
        old[i] = E(malloc(1000));
        memset(old[i], i & 0xff, 1000);
    }
}

NOINLINE void site_keep(int t)
{
    for (int i = 0; i < KEEP; i++) {
        kept[t][i] = E(malloc(2048));
        memset(kept[t][i], t, 2048);
    }
}

NOINLINE void site_churn(int t)
{
    unsigned long s = 0;
    for (int i = 0; i < CHURN; i++) {
        char *p = E(malloc(512));
        p[0] = (char)(i + t);
        s += (unsigned char)p[0];
        free(p);
    }
    pthread_mutex_lock(&sum_lock);
    /* Atomic: fight() adds under another lock at the same time. */
    __atomic_add_fetch(&checksum, s, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&sum_lock);
}

/* Two threads take one lock in turn, each holding it a little. */
NOINLINE void fight(void)
{
    for (int i = 0; i < 200; i++) {
        pthread_mutex_lock(&fight_lock);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        __atomic_add_fetch(&checksum, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&fight_lock);
    }
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    site_keep(t);
    site_churn(t);
    if (t < 2)
        fight();
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 20000000};
    while (!finished)
        nanosleep(&ts, NULL);
    return NULL;
}

/* Frees the first half of the old blocks; reallocs the second half to
 * 3000 bytes (a free of an unknown block and an allocation here). */
NOINLINE void grow_old(void)
{
    for (int i = 0; i < OLD / 2; i++) {
        checksum += (unsigned char)old[i][0];
        free(old[i]);
        old[i] = NULL;
    }
    for (int i = OLD / 2; i < OLD; i++)
        old[i] = E(realloc(old[i], 3000));
}

NOINLINE static void spin(int (*work)(int))
{
    volatile unsigned long x = 0;
    while (!exists("finish")) {
        for (int i = 0; i < 2000000; i++)
            x += (unsigned long)i * 7;
        if (work)
            work(100);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: attach_prog DIR [LIB]\n");
        return 2;
    }
    phase_dir = argv[1];
    before_attach();
    pthread_t sl[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&sl[i], NULL, sleeper, NULL);
        pthread_setname_np(sl[i], "sleeper");
    }
    touch("ready");
    wait_for("go");

    int (*work)(int) = NULL;
    void *lib = NULL;
    if (argc > 2) {
        lib = dlopen(argv[2], RTLD_NOW);
        if (!lib || !(*(void **)&work = dlsym(lib, "dlopen_lib_work"))) {
            fprintf(stderr, "dlopen %s: %s\n", argv[2], dlerror());
            return 1;
        }
    }
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    grow_old();
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    touch("phase2");
    spin(work);

    finished = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(sl[i], NULL);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < KEEP; i++) {
            checksum += (unsigned char)kept[t][i][i];
            free(kept[t][i]);
        }
    for (int i = OLD / 2; i < OLD; i++) {
        checksum += (unsigned char)old[i][999];
        free(old[i]);
    }
    if (lib)
        dlclose(lib);
    printf("TRUTH site_keep %d %d %d %d\n", THREADS * KEEP, THREADS * KEEP * 2048, THREADS * KEEP,
           THREADS * KEEP * 2048);
    printf("TRUTH site_churn %d %d 0 0\n", THREADS * CHURN, THREADS * CHURN * 512);
    printf("TRUTH grow_old %d %d %d %d\n", OLD / 2, OLD / 2 * 3000, OLD / 2, OLD / 2 * 3000);
    printf("TRUTH before_attach 0 0 0 0\n");
    printf("checksum %lu\n", checksum);
    return 0;
}
