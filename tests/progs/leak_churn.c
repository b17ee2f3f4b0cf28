// leak_churn.c — four threads that allocate and free without pause, each
// keeping its last 64 blocks in an array on its own stack (every live block
// is reachable), for leak scans taken while they run (http_peak_leaks.sh).
// Prints the allocations done so far to stderr every 100 ms.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long count;

static void *churn(void *arg)
{
    (void)arg;
    void *keep[64] = {0};
    for (unsigned i = 0;; i++) {
        free(keep[i % 64]);
        keep[i % 64] = malloc(16 + i % 2000);
        __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churn, NULL);
    struct timespec ts = {0, 100 * 1000 * 1000};
    for (;;) {
        nanosleep(&ts, NULL);
        fprintf(stderr, "%ld\n", count);
    }
}
