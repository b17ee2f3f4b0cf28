/* alloc_limit.c — cprof.h's CPROF_ALLOC_LIMIT block (tests/e2e/alloc_limit.sh).
 * Each case runs a block with limits at or just under what its code
 * allocates and prints how many times the failure handler ran and whether
 * the body ran. "abort" as argv[1]: one failing block with no handler set
 * (the program must abort). Built plain, without -lcprof, it must still link
 * and run: the blocks then check nothing. */
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cprof.h"

static int failures;
static char last[512];
static void *volatile keep[16]; /* volatile: the compiler keeps every malloc */

static void on_failure(const char *message)
{
    failures++;
    snprintf(last, sizeof(last), "%s", message);
}

/* n blocks of size bytes, freed after. */
static __attribute__((noinline)) void allocate(int n, size_t size)
{
    for (int i = 0; i < n; i++) {
        keep[i] = malloc(size);
        if (!keep[i])
            exit(3);
    }
    for (int i = 0; i < n; i++)
        free(keep[i]);
}

static sem_t go, done;

static void *other(void *arg)
{
    (void)arg;
    sem_wait(&go);
    for (int i = 0; i < 100; i++)
        free(malloc(64));
    sem_post(&done);
    return NULL;
}

#define CASE(name, max_objects, max_bytes, code)                                                \
    do {                                                                                     \
        int before = failures, ran = 0;                                                      \
        CPROF_ALLOC_LIMIT(max_objects, max_bytes) {                                          \
            code;                                                                            \
            ran = 1;                                                                         \
        }                                                                                    \
        printf("%s: ran=%d failures=%d%s%s\n", name, ran, failures - before,                  \
               failures > before ? " " : "", failures > before ? strstr(last, "allocation") : ""); \
    } while (0)

int main(int argc, char **argv)
{
    /* The usable size of a 100-byte block, found outside any block. */
    void *probe = malloc(100);
    unsigned long long u = malloc_usable_size(probe);
    free(probe);
    printf("cprof: %s, usable(100)=%llu\n", cprof_thread_allocs ? "present" : "absent", u);
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        CPROF_ALLOC_LIMIT(0, 0) allocate(1, 100);
        printf("no abort\n");
        return 0;
    }
    if (cprof_set_alloc_limit_handler)
        cprof_set_alloc_limit_handler(on_failure);
    pthread_t t;
    sem_init(&go, 0, 0);
    sem_init(&done, 0, 0);
    if (pthread_create(&t, NULL, other, NULL) != 0)
        return 4;

    CASE("three at their limit", 3, 3 * u, allocate(3, 100));
    CASE("three, limit two objects", 2, 1 << 20, allocate(3, 100));
    CASE("three, one byte short", 3, 3 * u - 1, allocate(3, 100));
    CASE("none allocated, limit 0", 0, 0, (void)0);
    CASE("other thread's 100, limit 0", 0, 0, (sem_post(&go), sem_wait(&done)));
    CASE("calloc and realloc, limit 1", 1, 1 << 20,
         (keep[0] = calloc(1, 10), keep[0] = realloc(keep[0], 5000), free(keep[0])));
    pthread_join(t, NULL);
    return 0;
}
