// leakscan.c — a process with a large live heap, for bench/leak_scan.sh:
// MIB mebibytes live in blocks of SIZE bytes, each pointing to the one
// before (a chain from a global, so the scan follows pointers through the
// whole heap), 1000 more blocks dropped (leaks), THREADS threads blocked
// (the scan stops them). Then it takes the leak profile REPS times
// through the API (dlsym: cprof is preloaded) into OUT.N files, and prints
// the wall time of each call in milliseconds.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void **head; /* not static: the chain's root */
static int never[2];

static void *idle(void *arg)
{
    (void)arg;
    char c;
    while (read(never[0], &c, 1) != 0)
        ;
    return NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: leakscan MIB SIZE THREADS REPS OUT\n");
        return 2;
    }
    size_t total = (size_t)atol(argv[1]) << 20, size = (size_t)atol(argv[2]);
    int threads = atoi(argv[3]), reps = atoi(argv[4]);
    int (*leaks)(int, int) = (int (*)(int, int))dlsym(RTLD_DEFAULT, "cprof_leak_profile_write_fd");
    if (!leaks || size < sizeof(void *) || pipe(never) < 0) {
        fprintf(stderr, "leakscan: preload libcprof.so\n");
        return 1;
    }
    for (size_t done = 0; done < total; done += size) {
        void **b = malloc(size);
        memset(b, 0, size);
        b[0] = head;
        head = b;
    }
    for (int i = 0; i < 1000; i++) {
        void *volatile p = malloc(size);
        memset(p, 1, size);
    }
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        pthread_create(&t, NULL, idle, NULL);
    }
    for (int r = 0; r < reps; r++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s.%d", argv[5], r);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        double t0 = now_ms();
        int rc = leaks(fd, 0);
        double t1 = now_ms();
        close(fd);
        if (rc < 0) {
            fprintf(stderr, "leakscan: leak profile failed: %d\n", rc);
            return 1;
        }
        printf("%.1f\n", t1 - t0);
    }
    return 0;
}
