/* attach_cpuchurn.c — a program for cprof attach -cpu whose threads are in
 * malloc and free nearly all the time:
 *   attach_cpuchurn DIR
 * A thread started before the attach churns until the end; after DIR/go,
 * for 8 s, rounds of four new threads churn 300000 blocks each (each new
 * thread's first CPU-profile signals: the case here). Then DIR/phase2;
 * at DIR/finish it prints "ok" and exits 0. (A CPU-profile signal landing
 * in glibc's malloc on a thread whose libunwind state was not yet
 * allocated used to deadlock it: glibc mallocs that state lazily when
 * libunwind was dlopened.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "phases.h"

#define NOINLINE __attribute__((noinline))

static volatile int done;

/* Frees and mallocs in a ring of 64 blocks of mixed sizes (the arena's
 * bins, unlinks and consolidation, with its lock held). */
NOINLINE void churn(int n)
{
    void *p[64] = {0};
    for (int i = 0; i < n; i++) {
        int k = i & 63;
        free(p[k]);
        p[k] = malloc(16 + (size_t)(i * 7 % 600));
        __asm__ volatile("" : : "g"(p[k]) : "memory");
    }
    for (int k = 0; k < 64; k++)
        free(p[k]);
}

static void *old_thread(void *arg)
{
    (void)arg;
    while (!done)
        churn(10000);
    return NULL;
}

static void *new_thread(void *arg)
{
    (void)arg;
    churn(300000);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: attach_cpuchurn DIR\n");
        return 2;
    }
    phase_dir = argv[1];
    pthread_t old;
    pthread_create(&old, NULL, old_thread, NULL);
    touch("ready");
    wait_for("go");
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, new_thread, NULL);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 8);
    touch("phase2");
    wait_for("finish");
    done = 1;
    pthread_join(old, NULL);
    printf("ok\n");
    return 0;
}
