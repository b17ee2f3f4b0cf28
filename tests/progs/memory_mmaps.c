/* memory_mmaps.c — the mmap hooks under threads, for memory_mmaps.sh: 4
 * threads each map and unmap 64 KiB 20000 times (at CPROF_RATE=1 every
 * mapping is kept until its munmap: the table must let each go), while
 * keeper() holds 10 mappings of 1 MiB, touched, and breaker() grows the
 * break by 1 MiB with sbrk, gives 256 KiB back, and grows it by 512 KiB
 * more with brk; then the memory profile is written to DIR/mem.pb.gz and
 * "EXPECT keeper BYTES" and "EXPECT breaker BYTES" printed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define THREADS 4
#define PAIRS 20000
#define KEPT 10

static void *churn(void *arg)
{
    (void)arg;
    for (int i = 0; i < PAIRS; i++) {
        char *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            exit(3);
        p[i % 65536] = 1;
        if (munmap(p, 65536))
            exit(4);
    }
    return NULL;
}

static __attribute__((noinline)) void keeper(char **kept)
{
    for (int i = 0; i < KEPT; i++) {
        kept[i] = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (kept[i] == MAP_FAILED)
            exit(5);
        memset(kept[i], 7, 1u << 20);
    }
}

static __attribute__((noinline)) void breaker(void)
{
    char *p = sbrk(1 << 20);
    if (p == (void *)-1)
        exit(9);
    memset(p, 7, 1 << 20);
    if (sbrk(-(256 << 10)) == (void *)-1 || brk(p + (1280 << 10)))
        exit(10);
    memset(p + (768 << 10), 7, 512 << 10);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int (*write_mem)(const char *) =
        (int (*)(const char *))dlsym(RTLD_DEFAULT, "cprof_memory_profile_write");
    if (!write_mem)
        return 6;
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], NULL, churn, NULL))
            return 7;
    static char *kept[KEPT];
    keeper(kept);
    breaker();
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    char path[4096];
    snprintf(path, sizeof(path), "%s/mem.pb.gz", argv[1]);
    if (write_mem(path))
        return 8;
    printf("EXPECT keeper %u\nEXPECT breaker %u\n", KEPT << 20, 1280u << 10);
    for (int i = 0; i < KEPT; i++)
        munmap(kept[i], 1u << 20);
    return 0;
}
