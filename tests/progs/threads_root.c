/* threads_root.c — two created threads allocate 1 MiB each in
 * worker_alloc, called from their start routine `worker`
 * (tests/e2e/threads_root.sh: nothing of cprof's shows below `worker`). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep[2];

__attribute__((noinline)) static void *worker_alloc(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    long i = (long)arg;
    keep[i] = worker_alloc(1 << 20);
    __asm__ volatile("" ::: "memory"); /* keep this frame: no tail call */
    return keep[i];
}

int main(void)
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 2;
    int got = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        got += r != NULL;
    }
    printf("threads %d\n", got);
    return got == 2 ? 0 : 1;
}
