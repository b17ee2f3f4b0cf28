/* lockbench.c — an uncontended, lock-heavy workload for
 * bench/mutex_overhead.sh: THREADS threads, each with its own mutex and
 * rwlock (so no lock is ever contended), do ITERS rounds of
 *   bare: pthread_mutex_lock + unlock, nothing else;
 *   work: lock; a few dozen nanoseconds of work on a small table; unlock;
 *         and every 8th round the same under the rwlock's write lock, every
 *         4th a read under its read lock.
 * Prints a checksum, so that the work cannot be optimized away.
 * Usage: lockbench bare|work [ITERS [THREADS]]  (default 20000000, 2) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    pthread_mutex_t mu;
    pthread_rwlock_t rw;
    uint64_t table[64];
    uint64_t sum;
    uint64_t seed;
    char pad[64];
} lane_t;

static long iters = 20000000;
static int work;

static void *run(void *arg)
{
    lane_t *l = arg;
    uint64_t x = l->seed;
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(&l->mu);
        if (work) {
            for (int k = 0; k < 4; k++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                l->table[x & 63] += x;
            }
        } else {
            l->sum++;
        }
        pthread_mutex_unlock(&l->mu);
        if (work && (i & 7) == 0) {
            pthread_rwlock_wrlock(&l->rw);
            l->sum += l->table[i & 63];
            pthread_rwlock_unlock(&l->rw);
        }
        if (work && (i & 3) == 0) {
            pthread_rwlock_rdlock(&l->rw);
            x += l->sum;
            pthread_rwlock_unlock(&l->rw);
        }
    }
    l->sum += x;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "bare") && strcmp(argv[1], "work"))) {
        fprintf(stderr, "usage: lockbench bare|work [ITERS [THREADS]]\n");
        return 2;
    }
    work = strcmp(argv[1], "work") == 0;
    if (argc > 2)
        iters = atol(argv[2]);
    int n = argc > 3 ? atoi(argv[3]) : 2;
    lane_t *lanes = aligned_alloc(64, (size_t)n * sizeof(*lanes));
    pthread_t *t = calloc((size_t)n, sizeof(*t));
    memset(lanes, 0, (size_t)n * sizeof(*lanes));
    for (int i = 0; i < n; i++) {
        pthread_mutex_init(&lanes[i].mu, NULL);
        pthread_rwlock_init(&lanes[i].rw, NULL);
        lanes[i].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        pthread_create(&t[i], NULL, run, &lanes[i]);
    }
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        sum += lanes[i].sum;
    }
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}
